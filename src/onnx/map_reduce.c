/* src/onnx/map_reduce.c — ONNX <-> canonical mappings of reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare, ArgMax, ArgMin, CumSum. */
#include "convert_internal.h"

/* The axes of a reduction are an attribute before this opset and an input
   from it on: ReduceSum 13, the others 18. */
static int32_t mgopt__reduce_axes_input(int32_t kind) { return kind == MGOPT_OP_reduce_sum ? 13 : 18; }

static int mgopt__imp_reduce(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int64_t *axes = NULL, n = mgopt__imp_axes(I, 1, m->since < mgopt__reduce_axes_input(m->kind), &axes);
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || n == -1) return 0;
  if (n == 0 || (n == -2 && mgopt__imp_aint(I->node, "noop_with_empty_axes", 0))) return 0;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  /* axes, then keep_dims: the order GlobalAveragePool's reduce_mean has too */
  if (!op || mgopt_op_set_operand(op, "x", x) || (n > 0 && mgopt_op_set_ints(op, "axes", axes, n)) ||
      mgopt_op_set_bool(op, "keep_dims", mgopt__imp_aint(I->node, "keepdims", 1) != 0))
    return -1;
  return mgopt__imp_done(I, op);
}

/* The ONNX global pool a reduction is, or NULL: a reduce_mean / reduce_max
   read from a GlobalAveragePool / GlobalMaxPool (MGOPT_OP_ONNX_GLOBAL_POOL:
   a ReduceMean read in is written back as one, since ONNX Runtime sums the
   two in different orders) still with keep_dims over exactly the axes 2..r-1 (each once, negative ones
   normalized) of an fp16/fp32 input of known rank r >= 3 is
   GlobalAveragePool / GlobalMaxPool (opset 1 on), the op the importer maps
   them to: same values, same shape (N, C, 1, ..., 1). Not fp64, which the
   ONNX schema allows but ONNX Runtime's CPU kernels of the global pools do
   not take (its ReduceMean / ReduceMax do). */
static const char *mgopt__exp_global_pool(mgopt_program *p, const mgopt_op *op) {
  const mgopt_value *x = mgopt_op_operand(op, "x");
  const int64_t *v = NULL;
  int64_t k = mgopt_op_get_ints(p, op, "axes", &v), i;
  uint32_t seen = 0;
  int32_t r;
  if ((op->kind != MGOPT_OP_reduce_mean && op->kind != MGOPT_OP_reduce_max) || !(op->flags & MGOPT_OP_ONNX_GLOBAL_POOL))
    return NULL;
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR || x->type.rank < 3 || x->type.rank > 32 || k != x->type.rank - 2 ||
      !mgopt_op_get_bool(op, "keep_dims", 0))
    return NULL;
  if (x->type.dtype != MGOPT_DT_FP16 && x->type.dtype != MGOPT_DT_FP32) return NULL;
  r = x->type.rank;
  for (i = 0; i < k; i++) {
    int64_t a = v[i] < 0 ? v[i] + r : v[i];
    if (a < 2 || a >= r || (seen & (1u << a))) return NULL;
    seen |= 1u << a;
  }
  return op->kind == MGOPT_OP_reduce_mean ? "GlobalAveragePool" : "GlobalMaxPool";
}

static mgopt_status mgopt__exp_reduce(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  const int64_t *v = NULL;
  int64_t k = mgopt_op_get_ints(E->p, op, "axes", &v);
  const char *global = mgopt__exp_global_pool(E->p, op);
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  if (global) return mgopt__exp_simple(E, op, global, ins, 1) ? MGOPT_OK : mgopt__exp_nomem(E);
  if (k >= 0 && m->since >= mgopt__reduce_axes_input(m->kind)) {
    ins[1] = mgopt__exp_i64_const(E, "axes", v, k);
    if (!ins[1]) return mgopt__exp_nomem(E);
    n = mgopt__exp_simple(E, op, m->onnx, ins, 2);
  } else {
    n = mgopt__exp_simple(E, op, m->onnx, ins, 1);
    if (n && k >= 0 && !mgopt__exp_aints(E, n, "axes", v, k)) return mgopt__exp_nomem(E);
  }
  if (!n || !mgopt__exp_aint(E, n, "keepdims", mgopt_op_get_bool(op, "keep_dims", 0))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- ArgMax, ArgMin

   reduce_argmax / reduce_argmin with output_dtype int64 (ONNX's index type).
   Opsets 1-10 take a non-negative axis only; 12 added select_last_index, whose
   1 (ties to the highest index) has no MIL form: such a node stays opaque. */
static int mgopt__imp_arg(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", 0);
  mgopt_op *op;
  if (!x || r < 1 || !mgopt__imp_known_dtype(x) || x->type.dtype == MGOPT_DT_BOOL || x->type.dtype == MGOPT_DT_STRING)
    return 0;
  if (axis >= r || axis < (m->since < 11 ? 0 : -(int64_t)r)) return 0;
  if (m->since >= 12 && mgopt__imp_aint(I->node, "select_last_index", 0) != 0) return 0;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_int(op, "axis", axis) ||
      mgopt_op_set_bool(op, "keep_dims", mgopt__imp_aint(I->node, "keepdims", 1) != 0) ||
      mgopt_op_set_string(op, "output_dtype", "int64"))
    return -1;
  return mgopt__imp_done(I, op);
}

/* The axis written for opset m: a negative axis needs opset 11, or x's rank to normalise it. */
static int mgopt__exp_arg_axis(const mgopt_op *op, const mgopt__onnx_map *m, int64_t *axis) {
  const mgopt_value *x = mgopt_op_operand(op, "x");
  *axis = mgopt_op_get_int(op, "axis", -1);
  if (*axis >= 0 || m->since >= 11) return 1;
  if (!x || x->type.rank < 1 || *axis < -(int64_t)x->type.rank) return 0;
  *axis += x->type.rank;
  return 1;
}

static const char *mgopt__exw_arg(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  size_t n = 0;
  const char *dt = mgopt_op_get_string(op, "output_dtype", &n);
  int64_t axis;
  MGOPT__UNUSED(p);
  if (!dt || n != 5 || memcmp(dt, "int64", 5) != 0) return "output_dtype is not int64";
  if (!mgopt_op_operand(op, "x")) return "an operand is missing";
  return mgopt__exp_arg_axis(op, m, &axis) ? NULL : "negative axis of unknown rank before opset 11";
}

static mgopt_status mgopt__exp_arg(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  int64_t axis = 0;
  mgopt_onnx_node *n;
  mgopt__exp_arg_axis(op, m, &axis);
  n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_aint(E, n, "axis", axis) ||
      !mgopt__exp_aint(E, n, "keepdims", mgopt_op_get_bool(op, "keep_dims", 0)))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

#define MGOPT__MAP_ARG(onnx, kind, since, until) {onnx, since, until, kind, mgopt__imp_arg, mgopt__exp_arg, {NULL, NULL, NULL}, mgopt__exw_arg}

/* ---------------------------------------------------------------- CumSum

   cumsum with the axis from CumSum's constant scalar (or one-element) input;
   a run-time axis stays opaque. */
static int mgopt__imp_cumsum(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *av = mgopt__imp_in(I, 1);
  int r = mgopt__imp_rank(x);
  int64_t *axis = NULL;
  mgopt_op *op;
  if (!x || !av || r < 1 || !mgopt__imp_known_dtype(x) || x->type.dtype == MGOPT_DT_BOOL ||
      x->type.dtype == MGOPT_DT_STRING)
    return 0;
  if (mgopt__imp_const_ints(I, av, &axis) != 1 || axis[0] < -(int64_t)r || axis[0] >= r) return 0;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_int(op, "axis", axis[0]) ||
      mgopt_op_set_bool(op, "exclusive", mgopt__imp_aint(I->node, "exclusive", 0) != 0) ||
      mgopt_op_set_bool(op, "reverse", mgopt__imp_aint(I->node, "reverse", 0) != 0))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_cumsum(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt_op_operand(op, "x") ? NULL : "an operand is missing";
}

static mgopt_status mgopt__exp_cumsum(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  mgopt_tensor *t = mgopt_tensor_new(E->p, MGOPT_DT_INT64, 0, NULL);
  mgopt_onnx_node *n;
  int64_t axis = mgopt_op_get_int(op, "axis", 0);
  if (!t) return mgopt__exp_nomem(E);
  memcpy(t->data, &axis, sizeof axis);
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_const(E, "axis", t);
  if (!ins[1]) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, ins, 2);
  if (!n) return mgopt__exp_nomem(E);
  /* only the non-default flags, as a converter writes them */
  if ((mgopt_op_get_bool(op, "exclusive", 0) && !mgopt__exp_aint(E, n, "exclusive", 1)) ||
      (mgopt_op_get_bool(op, "reverse", 0) && !mgopt__exp_aint(E, n, "reverse", 1)))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

#define MGOPT__MAP_REDUCE(onnx, kind, since, until) {onnx, since, until, kind, mgopt__imp_reduce, mgopt__exp_reduce, {NULL, NULL, NULL}, NULL}

static const mgopt__onnx_map mgopt__onnx_reduce[] = {
    MGOPT__MAP_REDUCE("ReduceSum", MGOPT_OP_reduce_sum, 1, 12),
    MGOPT__MAP_REDUCE("ReduceSum", MGOPT_OP_reduce_sum, 13, 0),
    MGOPT__MAP_REDUCE("ReduceMean", MGOPT_OP_reduce_mean, 1, 17),
    MGOPT__MAP_REDUCE("ReduceMean", MGOPT_OP_reduce_mean, 18, 0),
    MGOPT__MAP_REDUCE("ReduceMax", MGOPT_OP_reduce_max, 1, 17),
    MGOPT__MAP_REDUCE("ReduceMax", MGOPT_OP_reduce_max, 18, 0),
    MGOPT__MAP_REDUCE("ReduceMin", MGOPT_OP_reduce_min, 1, 17),
    MGOPT__MAP_REDUCE("ReduceMin", MGOPT_OP_reduce_min, 18, 0),
    MGOPT__MAP_REDUCE("ReduceProd", MGOPT_OP_reduce_prod, 1, 17),
    MGOPT__MAP_REDUCE("ReduceProd", MGOPT_OP_reduce_prod, 18, 0),
    MGOPT__MAP_REDUCE("ReduceL1", MGOPT_OP_reduce_l1_norm, 1, 17),
    MGOPT__MAP_REDUCE("ReduceL1", MGOPT_OP_reduce_l1_norm, 18, 0),
    MGOPT__MAP_REDUCE("ReduceL2", MGOPT_OP_reduce_l2_norm, 1, 17),
    MGOPT__MAP_REDUCE("ReduceL2", MGOPT_OP_reduce_l2_norm, 18, 0),
    MGOPT__MAP_REDUCE("ReduceLogSum", MGOPT_OP_reduce_log_sum, 1, 17),
    MGOPT__MAP_REDUCE("ReduceLogSum", MGOPT_OP_reduce_log_sum, 18, 0),
    MGOPT__MAP_REDUCE("ReduceLogSumExp", MGOPT_OP_reduce_log_sum_exp, 1, 17),
    MGOPT__MAP_REDUCE("ReduceLogSumExp", MGOPT_OP_reduce_log_sum_exp, 18, 0),
    MGOPT__MAP_REDUCE("ReduceSumSquare", MGOPT_OP_reduce_sum_square, 1, 17),
    MGOPT__MAP_REDUCE("ReduceSumSquare", MGOPT_OP_reduce_sum_square, 18, 0),
    MGOPT__MAP_ARG("ArgMax", MGOPT_OP_reduce_argmax, 1, 10),
    MGOPT__MAP_ARG("ArgMax", MGOPT_OP_reduce_argmax, 11, 11),
    MGOPT__MAP_ARG("ArgMax", MGOPT_OP_reduce_argmax, 12, 0),
    MGOPT__MAP_ARG("ArgMin", MGOPT_OP_reduce_argmin, 1, 10),
    MGOPT__MAP_ARG("ArgMin", MGOPT_OP_reduce_argmin, 11, 11),
    MGOPT__MAP_ARG("ArgMin", MGOPT_OP_reduce_argmin, 12, 0),
    {"CumSum", 11, 0, MGOPT_OP_cumsum, mgopt__imp_cumsum, mgopt__exp_cumsum, {NULL, NULL, NULL}, mgopt__exw_cumsum},
};

#undef MGOPT__MAP_REDUCE

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_reduce(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_reduce);
  return mgopt__onnx_reduce;
}
