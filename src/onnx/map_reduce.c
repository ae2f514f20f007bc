/* src/onnx/map_reduce.c — ONNX <-> canonical mappings of reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd. */
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

static mgopt_status mgopt__exp_reduce(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  const int64_t *v = NULL;
  int64_t k = mgopt_op_get_ints(E->p, op, "axes", &v);
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
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
};

#undef MGOPT__MAP_REDUCE

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_reduce(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_reduce);
  return mgopt__onnx_reduce;
}
