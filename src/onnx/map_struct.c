/* src/onnx/map_struct.c — ONNX <-> canonical mappings of structural and index ops: ScatterElements, Scatter, ScatterND,
   GatherND, ReverseSequence, DepthToSpace, SpaceToDepth, TopK, Range, ConstantOfShape, OneHot.

   A parameter that is an input in ONNX (TopK's K, Range's bounds,
   ConstantOfShape's shape) must be a constant for the node to become a
   canonical op; a run-time one leaves the node opaque. */
#include "convert_internal.h"

static int mgopt__ims_index_dtype(const mgopt_value *v, int int32_ok) {
  return v && v->type.kind == MGOPT_TYPE_TENSOR &&
         (v->type.dtype == MGOPT_DT_INT64 || (int32_ok && v->type.dtype == MGOPT_DT_INT32));
}

/* 1 when dims a and b are known to be equal (the same static size or the same symbol). */
static int mgopt__ims_same_dim(mgopt_dim a, mgopt_dim b) {
  return a.sym ? a.sym == b.sym : (a.v >= 0 && !b.sym && a.v == b.v);
}

/* A byte-addressable element type the kernels move (not string, not sub-byte). */
static int mgopt__ims_movable(const mgopt_value *v) {
  return mgopt__imp_known_dtype(v) && v->type.dtype != MGOPT_DT_STRING && mgopt_dtype_bits((mgopt_dtype)v->type.dtype) >= 8;
}

static const char *mgopt__ims_mode(const mgopt_op *op) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(op, "mode", &n);
  if (!s) return "add"; /* MIL's default */
  if (n == 6 && memcmp(s, "update", 6) == 0) return "update";
  if (n == 3 && memcmp(s, "add", 3) == 0) return "add";
  if (n == 3 && memcmp(s, "mul", 3) == 0) return "mul";
  if (n == 3 && memcmp(s, "max", 3) == 0) return "max";
  if (n == 3 && memcmp(s, "min", 3) == 0) return "min";
  return "";
}

/* ---------------------------------------------------------------- ScatterElements, Scatter, ScatterND

   ONNX's reduction (none before opset 16; add, mul from 16; max, min from 18)
   is MIL's mode: none is "update". Duplicate indices with reduction none are
   unspecified in ONNX; the kernels write them in order (the last wins). */

/* mode for the node's reduction at opset m->since, or NULL when that opset has no such reduction. */
static const char *mgopt__ims_reduction(mgopt__imp *I, const mgopt__onnx_map *m) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(I->node, "reduction");
  if (!a || m->since < 16 || mgopt__imp_astr(I->node, "reduction", "none")) return "update";
  if (mgopt__imp_astr(I->node, "reduction", "add")) return "add";
  if (mgopt__imp_astr(I->node, "reduction", "mul")) return "mul";
  if (m->since >= 18 && mgopt__imp_astr(I->node, "reduction", "max")) return "max";
  if (m->since >= 18 && mgopt__imp_astr(I->node, "reduction", "min")) return "min";
  return NULL;
}

static int mgopt__imp_scatter_elements(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *idx = mgopt__imp_in(I, 1), *up = mgopt__imp_in(I, 2);
  int r = mgopt__imp_rank(x), k;
  int64_t axis = mgopt__imp_aint(I->node, "axis", 0);
  const char *mode = mgopt__ims_reduction(I, m);
  mgopt_op *op;
  if (!mode || !mgopt__ims_movable(x) || !idx || !up || r < 1 || mgopt__imp_rank(idx) != r || mgopt__imp_rank(up) != r ||
      !mgopt__ims_index_dtype(idx, 1) || up->type.dtype != x->type.dtype)
    return 0;
  if (axis < -r || axis >= r) return 0;
  for (k = 0; k < r; k++) {
    if (!mgopt__ims_same_dim(idx->type.dims[k], up->type.dims[k])) return 0;
    /* ONNX allows index dims smaller than data's off the axis; MIL does not */
    if (k != axis && k != axis + r && !mgopt__ims_same_dim(x->type.dims[k], idx->type.dims[k])) return 0;
  }
  op = mgopt__imp_op(I, "scatter_along_axis", 1, 0);
  if (!op || mgopt_op_set_operand(op, "data", x) || mgopt_op_set_operand(op, "indices", idx) ||
      mgopt_op_set_operand(op, "updates", up) || mgopt_op_set_int(op, "axis", axis) ||
      mgopt_op_set_string(op, "mode", mode))
    return -1;
  return mgopt__imp_done(I, op);
}

/* Why mode cannot be written at opset m->since (NULL: it can). */
static const char *mgopt__ims_mode_why(const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *mode = mgopt__ims_mode(op);
  if (!mode[0]) return "mode sub or div has no ONNX reduction";
  if (strcmp(mode, "update") != 0 && m->since < 16) return "a reducing mode needs opset 16";
  if ((strcmp(mode, "max") == 0 || strcmp(mode, "min") == 0) && m->since < 18) return "mode max or min needs opset 18";
  return NULL;
}

static const char *mgopt__exw_scatter(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  if (!mgopt_op_operand(op, "data") || !mgopt_op_operand(op, "indices") || !mgopt_op_operand(op, "updates"))
    return "an operand is missing";
  return mgopt__ims_mode_why(op, m);
}

static mgopt_status mgopt__exp_scatter(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[3], *mode = mgopt__ims_mode(op);
  mgopt_value *idx = mgopt_op_operand(op, "indices");
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "data");
  /* ScatterElements takes int32 or int64 indices, ScatterND int64 only */
  ins[1] = op->kind == MGOPT_OP_scatter_along_axis && mgopt__ims_index_dtype(idx, 1) ? mgopt__exp_vname(idx)
                                                                                     : mgopt__exp_as_i64(E, idx);
  ins[2] = mgopt__exp_in(op, "updates");
  if (!ins[1]) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, ins, 3);
  if (!n) return mgopt__exp_nomem(E);
  if (op->kind == MGOPT_OP_scatter_along_axis && !mgopt__exp_aint(E, n, "axis", mgopt_op_get_int(op, "axis", 0)))
    return mgopt__exp_nomem(E);
  if (strcmp(mode, "update") != 0 && !mgopt__exp_astr(E, n, "reduction", mode)) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ScatterND: updates = indices.shape[:-1] + data.shape[K:] with K static. */
static int mgopt__imp_scatter_nd(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *idx = mgopt__imp_in(I, 1), *up = mgopt__imp_in(I, 2);
  int r = mgopt__imp_rank(x), q = mgopt__imp_rank(idx), k;
  int64_t K;
  const char *mode = mgopt__ims_reduction(I, m);
  mgopt_op *op;
  if (!mode || !mgopt__ims_movable(x) || !up || r < 1 || q < 1 || !mgopt__ims_index_dtype(idx, 0) ||
      up->type.dtype != x->type.dtype || !mgopt_dim_is_static(idx->type.dims[q - 1]))
    return 0;
  K = idx->type.dims[q - 1].v;
  if (K > r || mgopt__imp_rank(up) != q - 1 + r - K) return 0;
  for (k = 0; k < q - 1; k++)
    if (!mgopt__ims_same_dim(idx->type.dims[k], up->type.dims[k])) return 0;
  for (k = (int)K; k < r; k++)
    if (!mgopt__ims_same_dim(x->type.dims[k], up->type.dims[q - 1 + k - K])) return 0;
  op = mgopt__imp_op(I, "scatter_nd", 1, 0);
  if (!op || mgopt_op_set_operand(op, "data", x) || mgopt_op_set_operand(op, "indices", idx) ||
      mgopt_op_set_operand(op, "updates", up) || mgopt_op_set_string(op, "mode", mode))
    return -1;
  return mgopt__imp_done(I, op);
}

/* ---------------------------------------------------------------- GatherND (batch_dims from opset 12) */

static int mgopt__imp_gather_nd(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *idx = mgopt__imp_in(I, 1);
  int64_t bd = m->since >= 12 ? mgopt__imp_aint(I->node, "batch_dims", 0) : 0;
  int q = mgopt__imp_rank(idx);
  mgopt_op *op;
  if (!mgopt__ims_movable(x) || mgopt__imp_rank(x) < 1 || q < 1 || !mgopt__ims_index_dtype(idx, 0) || bd < 0 || bd >= q)
    return 0;
  op = mgopt__imp_op(I, "gather_nd", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "indices", idx) ||
      (bd && mgopt_op_set_int(op, "batch_dims", bd)))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_gather_nd(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  if (!mgopt_op_operand(op, "x") || !mgopt_op_operand(op, "indices")) return "an operand is missing";
  return mgopt_op_get_int(op, "batch_dims", 0) != 0 && m->since < 12 ? "batch_dims needs opset 12" : NULL;
}

static mgopt_status mgopt__exp_gather_nd(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  int64_t bd = mgopt_op_get_int(op, "batch_dims", 0);
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_as_i64(E, mgopt_op_operand(op, "indices"));
  if (!ins[1]) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, ins, 2);
  if (!n || (bd && !mgopt__exp_aint(E, n, "batch_dims", bd))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- ReverseSequence

   time_axis (default 0) and batch_axis (default 1) are 0 and 1 in some order. */
static int mgopt__imp_reverse_sequence(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *len = mgopt__imp_in(I, 1);
  int64_t ta = mgopt__imp_aint(I->node, "time_axis", 0), ba = mgopt__imp_aint(I->node, "batch_axis", 1);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__ims_movable(x) || mgopt__imp_rank(x) < 2 || mgopt__imp_rank(len) != 1 || !mgopt__ims_index_dtype(len, 0))
    return 0;
  if (!((ta == 0 && ba == 1) || (ta == 1 && ba == 0))) return 0;
  op = mgopt__imp_op(I, "reverse_sequence", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "lengths", len) ||
      mgopt_op_set_int(op, "seq_axis", ta) || mgopt_op_set_int(op, "batch_axis", ba))
    return -1;
  return mgopt__imp_done(I, op);
}

/* seq_axis and batch_axis normalised; 0 when they are not axes 0 and 1. */
static int mgopt__ims_revseq_axes(const mgopt_op *op, int64_t *ta, int64_t *ba) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  int64_t r = x && x->type.kind == MGOPT_TYPE_TENSOR ? x->type.rank : -1;
  *ta = mgopt_op_get_int(op, "seq_axis", 0);
  *ba = mgopt_op_get_int(op, "batch_axis", 0);
  if (*ta < 0) *ta += r;
  if (*ba < 0) *ba += r;
  return r >= 2 && ((*ta == 0 && *ba == 1) || (*ta == 1 && *ba == 0));
}

static const char *mgopt__exw_reverse_sequence(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  int64_t ta, ba;
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!mgopt_op_operand(op, "x") || !mgopt_op_operand(op, "lengths")) return "an operand is missing";
  return mgopt__ims_revseq_axes(op, &ta, &ba) ? NULL : "the axes are not 0 and 1";
}

static mgopt_status mgopt__exp_reverse_sequence(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  int64_t ta, ba;
  mgopt_onnx_node *n;
  mgopt__ims_revseq_axes(op, &ta, &ba);
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_as_i64(E, mgopt_op_operand(op, "lengths"));
  if (!ins[1]) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, ins, 2);
  if (!n || !mgopt__exp_aint(E, n, "batch_axis", ba) || !mgopt__exp_aint(E, n, "time_axis", ta))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- DepthToSpace, SpaceToDepth

   DepthToSpace's DCR mode (the only one before opset 11, the default after)
   is depth_to_space; CRD is pixel_shuffle (written back by map_shape.c). */
static int mgopt__imp_depth_space(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int64_t b = mgopt__imp_aint(I->node, "blocksize", -1);
  int crd = m->kind == MGOPT_OP_depth_to_space && m->since >= 11 && mgopt__imp_astr(I->node, "mode", "CRD");
  mgopt_op *op;
  if (!mgopt__ims_movable(x) || mgopt__imp_rank(x) != 4 || b < 1 || b > ((int64_t)1 << 30)) return 0;
  if (m->kind == MGOPT_OP_depth_to_space && m->since >= 11 && !crd && mgopt__imp_attr(I->node, "mode") &&
      !mgopt__imp_astr(I->node, "mode", "DCR"))
    return 0;
  op = mgopt__imp_op(I, crd ? "pixel_shuffle" : mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_int(op, crd ? "upscale_factor" : "block_size", b))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_depth_space(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x || x->type.rank != 4) return "needs a 4-d input";
  return mgopt_op_get_int(op, "block_size", 0) >= 1 ? NULL : "no block_size";
}

static mgopt_status mgopt__exp_depth_space(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_aint(E, n, "blocksize", mgopt_op_get_int(op, "block_size", 1))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- TopK

   K is an attribute before opset 10 and a constant [1] input after; largest
   and sorted arrive in opset 11 (before: largest, sorted). Indices are int64. */
static int mgopt__imp_topk(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", -1), kk, *kv = NULL;
  int lane_ok;
  mgopt_op *op;
  if (!x || r < 1 || !mgopt__imp_known_dtype(x) || mgopt__imp_nout(I->node) > 2) return 0;
  lane_ok = mgopt_dtype_is_float((mgopt_dtype)x->type.dtype) || mgopt_dtype_is_int((mgopt_dtype)x->type.dtype);
  if (!lane_ok || mgopt_dtype_bits((mgopt_dtype)x->type.dtype) < 16 || axis < -r || axis >= r) return 0;
  if (mgopt_dtype_is_float((mgopt_dtype)x->type.dtype) && x->type.dtype != MGOPT_DT_FP16 &&
      x->type.dtype != MGOPT_DT_BF16 && x->type.dtype != MGOPT_DT_FP32 && x->type.dtype != MGOPT_DT_FP64)
    return 0;
  if (m->since < 10) {
    kk = mgopt__imp_aint(I->node, "k", -1);
  } else {
    if (mgopt__imp_const_ints(I, mgopt__imp_in(I, 1), &kv) != 1) return 0; /* a run-time K stays opaque */
    kk = kv[0];
  }
  if (kk < 0) return 0;
  if (mgopt_dim_is_static(x->type.dims[axis < 0 ? axis + r : axis]) && kk > x->type.dims[axis < 0 ? axis + r : axis].v)
    return 0;
  op = mgopt__imp_op(I, "topk", 2, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_int(op, "k", kk) || mgopt_op_set_int(op, "axis", axis) ||
      (m->since >= 11 && mgopt__imp_aint(I->node, "largest", 1) == 0 && mgopt_op_set_bool(op, "ascending", 1)) ||
      (m->since >= 11 && mgopt__imp_aint(I->node, "sorted", 1) == 0 && mgopt_op_set_bool(op, "sort", 0)) ||
      mgopt_op_set_string(op, "output_indices_dtype", "int64"))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_topk(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  size_t n = 0;
  const char *dt = mgopt_op_get_string(op, "output_indices_dtype", &n);
  MGOPT__UNUSED(p);
  if (!dt || n != 5 || memcmp(dt, "int64", 5) != 0) return "output_indices_dtype is not int64";
  if (!mgopt_op_operand(op, "x") || op->nouts != 2) return "an operand is missing";
  if (m->since < 11 && mgopt_op_get_bool(op, "ascending", 0)) return "the smallest k need opset 11";
  return NULL;
}

static mgopt_status mgopt__exp_topk(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  int64_t kk = mgopt_op_get_int(op, "k", 1);
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  if (m->since >= 10) {
    ins[1] = mgopt__exp_i64_const(E, "k", &kk, 1);
    if (!ins[1]) return mgopt__exp_nomem(E);
  }
  n = mgopt__exp_simple(E, op, m->onnx, ins, m->since >= 10 ? 2 : 1);
  if (!n || !mgopt__exp_aint(E, n, "axis", mgopt_op_get_int(op, "axis", -1)) ||
      (m->since < 10 && !mgopt__exp_aint(E, n, "k", kk)) ||
      (m->since >= 11 && mgopt_op_get_bool(op, "ascending", 0) && !mgopt__exp_aint(E, n, "largest", 0)) ||
      (m->since >= 11 && !mgopt_op_get_bool(op, "sort", 1) && !mgopt__exp_aint(E, n, "sorted", 0)))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- Range

   range_1d(end=limit, start, step=delta) when all three are constant
   scalars. ONNX's Range is defined by its function body: ceil(float(limit -
   start) / float(delta)) elements, each the previous one plus delta in the
   dtype (ONNX Runtime accumulates too), where range_1d computes start + i *
   step in double, rounded once. Both agree on integers; on floats only for
   some operands (Range(0.3, 100, 0.1) differs in 985 of 997 elements), so
   a float Range maps (and a float range_1d is written as Range) only when
   both give the same elements; else it stays opaque (mgopt_onnx_eval_op
   folds it). */

/* x rounded to dtype dt (fp32, else fp64 as it is). */
static double mgopt__range_rnd(int32_t dt, double x) { return dt == MGOPT_DT_FP32 ? (double)(float)x : x; }

/* 1 when a float range of constant scalars s, e, st (one dtype) has the
   elements ONNX's Range gives as range_1d computes them: the same count, and
   start + i * step (rounded once) equal to the sum accumulated in the dtype.
   Ranges over 2^24 elements are not checked (0). */
static int mgopt__range_float_same(const mgopt_tensor *s, const mgopt_tensor *e, const mgopt_tensor *st) {
  double a, b, c, q, v;
  float qo;
  int64_t n, i;
  int32_t dt;
  if (!s || !e || !st || s->numel != 1 || e->numel != 1 || st->numel != 1) return 0;
  dt = s->dtype;
  a = mgopt_tensor_get_f64(s, 0);
  b = mgopt_tensor_get_f64(e, 0);
  c = mgopt_tensor_get_f64(st, 0);
  if (c == 0 || c != c) return 0;
  q = ceil((b - a) / c);
  qo = ceilf((float)mgopt__range_rnd(dt, b - a) / (float)c);
  if (!(q == (double)qo) || q > 16777216.0) return 0;
  n = q > 0 ? (int64_t)q : 0;
  for (i = 0, v = a; i < n; i++, v = mgopt__range_rnd(dt, v + c))
    if (v != mgopt__range_rnd(dt, a + (double)i * c)) return 0;
  return 1;
}

static int mgopt__imp_range(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *s = mgopt__imp_in(I, 0), *e = mgopt__imp_in(I, 1), *d = mgopt__imp_in(I, 2);
  mgopt_dtype dt;
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!s || !e || !d || !mgopt_value_const(s) || !mgopt_value_const(e) || !mgopt_value_const(d)) return 0;
  dt = (mgopt_dtype)s->type.dtype;
  if (e->type.dtype != dt || d->type.dtype != dt || mgopt_value_const(s)->numel != 1 ||
      mgopt_value_const(e)->numel != 1 || mgopt_value_const(d)->numel != 1 || s->type.rank > 1 || e->type.rank > 1 ||
      d->type.rank > 1)
    return 0;
  if (dt != MGOPT_DT_INT16 && dt != MGOPT_DT_INT32 && dt != MGOPT_DT_INT64 &&
      !((dt == MGOPT_DT_FP32 || dt == MGOPT_DT_FP64) &&
        mgopt__range_float_same(mgopt_value_const(s), mgopt_value_const(e), mgopt_value_const(d))))
    return 0;
  op = mgopt__imp_op(I, "range_1d", 1, 0);
  if (!op || mgopt_op_set_operand(op, "end", e) || mgopt_op_set_operand(op, "start", s) ||
      mgopt_op_set_operand(op, "step", d))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_range(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *s = mgopt_op_operand(op, "start");
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!s || !mgopt_op_operand(op, "end") || !mgopt_op_operand(op, "step")) return "an operand is missing";
  if (s->type.rank != 0 || mgopt_op_operand(op, "end")->type.rank != 0 || mgopt_op_operand(op, "step")->type.rank != 0)
    return "Range takes scalars";
  if (s->type.dtype != MGOPT_DT_FP32 && s->type.dtype != MGOPT_DT_FP64 && s->type.dtype != MGOPT_DT_INT16 &&
      s->type.dtype != MGOPT_DT_INT32 && s->type.dtype != MGOPT_DT_INT64)
    return "Range takes fp32, fp64, int16, int32 and int64";
  if ((s->type.dtype == MGOPT_DT_FP32 || s->type.dtype == MGOPT_DT_FP64) &&
      !mgopt__range_float_same(mgopt_value_const(s), mgopt_value_const(mgopt_op_operand(op, "end")),
                               mgopt_value_const(mgopt_op_operand(op, "step"))))
    return "a float range whose elements ONNX's Range (summed in the dtype) does not give";
  return NULL;
}

static mgopt_status mgopt__exp_range(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[3];
  ins[0] = mgopt__exp_in(op, "start");
  ins[1] = mgopt__exp_in(op, "end");
  ins[2] = mgopt__exp_in(op, "step");
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 3));
}

/* ---------------------------------------------------------------- ConstantOfShape

   fill(shape, value) with a constant shape; the value attribute (a one-element
   tensor, fp32 0 when absent) becomes a constant operand. */
static int mgopt__imp_constant_of_shape(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *sh = mgopt__imp_in(I, 0), *v = NULL;
  const mgopt_onnx_attribute *a = mgopt__imp_attr(I->node, "value");
  mgopt_tensor *t;
  int64_t *dims = NULL, n;
  mgopt_op *op;
  MGOPT__UNUSED(m);
  n = mgopt__imp_const_ints(I, sh, &dims);
  if (n < 0 || n > MGOPT_MAX_RANK || mgopt__imp_rank(sh) != 1) return 0; /* a run-time shape stays opaque */
  if (a) {
    if (a->type != MGOPT_ONNX_ATTR_TENSOR || !a->t) return 0;
    t = mgopt__imp_tensor(I, a->t);
    if (!t) return -1;
    if (t->numel != 1 || t->dtype == MGOPT_DT_STRING || mgopt_dtype_bits((mgopt_dtype)t->dtype) < 8) return 0;
    v = mgopt__imp_const(I, NULL, "value", t);
    if (!v) return -1;
  }
  op = mgopt__imp_op(I, "fill", 1, 0);
  if (!op || mgopt_op_set_operand(op, "shape", sh) || (v && mgopt_op_set_operand(op, "value", v))) return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_fill(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *v = mgopt_op_operand(op, "value");
  mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!mgopt_op_operand(op, "shape")) return "an operand is missing";
  if (v && (!t || t->numel != 1)) return "value is not a constant";
  return NULL;
}

static mgopt_status mgopt__exp_fill(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *v = mgopt_op_operand(op, "value");
  mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
  const char *sh = mgopt__exp_as_i64(E, mgopt_op_operand(op, "shape"));
  mgopt_onnx_node *n;
  mgopt_onnx_attribute *a;
  if (!sh) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, &sh, 1);
  if (!n) return mgopt__exp_nomem(E);
  if (!t) return MGOPT_OK; /* ONNX's default value is fp32 0, as fill's */
  a = mgopt__exp_attr(E, n, "value", MGOPT_ONNX_ATTR_TENSOR);
  if (!a || !(a->t = (mgopt_onnx_tensor *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_tensor), 8)))
    return mgopt__exp_nomem(E);
  if (t->rank != 1) { /* ONNX's value is a one-element vector */
    int64_t one = 1;
    mgopt_tensor *t1 = mgopt_tensor_new(E->p, (mgopt_dtype)t->dtype, 1, &one);
    const void *src = mgopt_tensor_data(E->p, t);
    if (!t1 || !src) return mgopt__exp_nomem(E);
    memcpy(t1->data, src, (size_t)t->nbytes);
    t = t1;
  }
  return mgopt__exp_tensor(E, t, "", a->t);
}

/* ---------------------------------------------------------------- OneHot

   one_hot(indices, one_hot_vector_size=depth, axis, on_value, off_value) for
   a constant depth and constant fp32 values [off, on] (one_hot's output is
   fp32). Indices must be constant too: ONNX casts float indices to integers
   (whole ones only here: runtimes differ on a fraction) and, from opset 11,
   counts negative ones from the end, while an index outside [0, depth)
   gives an all-off row; the import writes the indices those rules select
   as int32 and declines when one selects no row. */
static int mgopt__imp_one_hot(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *ix = mgopt__imp_in(I, 0), *nv = NULL;
  mgopt_tensor *it = ix ? mgopt_value_const(ix) : NULL, *dt = mgopt_value_const(mgopt__imp_in(I, 1)),
               *vt = mgopt_value_const(mgopt__imp_in(I, 2)), *t;
  int r = mgopt__imp_rank(ix);
  int64_t axis = mgopt__imp_aint(I->node, "axis", -1), depth, i;
  double dd;
  mgopt_op *op;
  if (!it || !dt || !vt || r < 0 || dt->numel != 1 || vt->numel != 2 || vt->dtype != MGOPT_DT_FP32 ||
      it->dtype == MGOPT_DT_STRING || it->dtype == MGOPT_DT_BOOL || dt->dtype == MGOPT_DT_STRING ||
      mgopt_dtype_bits((mgopt_dtype)it->dtype) < 8)
    return 0;
  dd = mgopt_tensor_get_f64(dt, 0);
  if (!(dd >= 1 && dd < 2147483648.0) || axis < -(int64_t)r - 1 || axis > r) return 0;
  depth = (int64_t)dd;
  t = mgopt_tensor_new(I->p, MGOPT_DT_INT32, it->rank, it->shape);
  if (!t || !mgopt_tensor_data(I->p, it)) return -1;
  for (i = 0; i < it->numel; i++) {
    double v = mgopt_tensor_get_f64(it, i);
    int64_t k;
    if (!(v > -2147483648.0 && v < 2147483648.0) || v != (double)(int64_t)v) return 0; /* runtimes round a fraction differently */
    k = mgopt_dtype_is_float((mgopt_dtype)it->dtype) ? (int64_t)v : mgopt_tensor_get_i64(it, i);
    if (k < 0 && m->since >= 11) k += depth;
    if (k < 0 || k >= depth) return 0;
    mgopt_tensor_set_i64(t, i, k);
  }
  nv = mgopt__imp_const(I, NULL, "indices", t);
  op = nv ? mgopt__imp_op(I, "one_hot", 1, 0) : NULL;
  if (!op || mgopt_op_set_operand(op, "indices", nv) || mgopt_op_set_int(op, "one_hot_vector_size", depth) ||
      mgopt_op_set_int(op, "axis", axis) || mgopt_op_set_float(op, "on_value", mgopt_tensor_get_f64(vt, 1)) ||
      mgopt_op_set_float(op, "off_value", mgopt_tensor_get_f64(vt, 0)))
    return -1;
  return mgopt__imp_done(I, op);
}

/* Before opset 11 OneHot gives negative indices an all-off row (one_hot counts
   them from the end): only constant indices in [0, depth) are written there. */
static const char *mgopt__exw_one_hot(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *ix = mgopt_op_operand(op, "indices");
  mgopt_tensor *t = ix ? mgopt_value_const(ix) : NULL;
  int64_t depth = mgopt_op_get_int(op, "one_hot_vector_size", -1), i;
  MGOPT__UNUSED(p);
  if (!ix || depth < 1) return "no indices or no one_hot_vector_size";
  if (!mgopt_dtype_is_int((mgopt_dtype)ix->type.dtype)) return "indices are not integers";
  if (mgopt_op_operand(op, "on_value") || mgopt_op_operand(op, "off_value")) return "on_value or off_value is an operand";
  if (m->since >= 11) return NULL;
  if (!t) return "run-time indices need opset 11";
  for (i = 0; i < t->numel; i++)
    if (mgopt_tensor_get_i64(t, i) < 0 || mgopt_tensor_get_i64(t, i) >= depth) return "an index outside [0, depth) needs opset 11";
  return NULL;
}

static mgopt_status mgopt__exp_one_hot(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[3];
  int64_t depth = mgopt_op_get_int(op, "one_hot_vector_size", 1), two = 2;
  mgopt_tensor *vt = mgopt_tensor_new(E->p, MGOPT_DT_FP32, 1, &two);
  mgopt_onnx_node *n;
  if (!vt) return mgopt__exp_nomem(E);
  mgopt_tensor_set_f64(vt, 0, mgopt_op_get_float(op, "off_value", 0.0));
  mgopt_tensor_set_f64(vt, 1, mgopt_op_get_float(op, "on_value", 1.0));
  ins[0] = mgopt__exp_as_i64(E, mgopt_op_operand(op, "indices")); /* the index type every runtime implements */
  ins[1] = mgopt__exp_i64_const(E, "depth", &depth, 1);
  ins[2] = mgopt__exp_const(E, "values", vt);
  if (!ins[0] || !ins[1] || !ins[2]) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, ins, 3);
  if (!n || !mgopt__exp_aint(E, n, "axis", mgopt_op_get_int(op, "axis", -1))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- the table */

static const mgopt__onnx_map mgopt__onnx_struct[] = {
    {"Scatter", 9, 10, MGOPT_OP_scatter_along_axis, mgopt__imp_scatter_elements, mgopt__exp_scatter, {NULL, NULL, NULL}, mgopt__exw_scatter},
    {"ScatterElements", 11, 15, MGOPT_OP_scatter_along_axis, mgopt__imp_scatter_elements, mgopt__exp_scatter, {NULL, NULL, NULL}, mgopt__exw_scatter},
    {"ScatterElements", 16, 17, MGOPT_OP_scatter_along_axis, mgopt__imp_scatter_elements, mgopt__exp_scatter, {NULL, NULL, NULL}, mgopt__exw_scatter},
    {"ScatterElements", 18, 0, MGOPT_OP_scatter_along_axis, mgopt__imp_scatter_elements, mgopt__exp_scatter, {NULL, NULL, NULL}, mgopt__exw_scatter},
    {"ScatterND", 11, 15, MGOPT_OP_scatter_nd, mgopt__imp_scatter_nd, mgopt__exp_scatter, {NULL, NULL, NULL}, mgopt__exw_scatter},
    {"ScatterND", 16, 17, MGOPT_OP_scatter_nd, mgopt__imp_scatter_nd, mgopt__exp_scatter, {NULL, NULL, NULL}, mgopt__exw_scatter},
    {"ScatterND", 18, 0, MGOPT_OP_scatter_nd, mgopt__imp_scatter_nd, mgopt__exp_scatter, {NULL, NULL, NULL}, mgopt__exw_scatter},
    {"GatherND", 11, 11, MGOPT_OP_gather_nd, mgopt__imp_gather_nd, mgopt__exp_gather_nd, {NULL, NULL, NULL}, mgopt__exw_gather_nd},
    {"GatherND", 12, 0, MGOPT_OP_gather_nd, mgopt__imp_gather_nd, mgopt__exp_gather_nd, {NULL, NULL, NULL}, mgopt__exw_gather_nd},
    {"ReverseSequence", 10, 0, MGOPT_OP_reverse_sequence, mgopt__imp_reverse_sequence, mgopt__exp_reverse_sequence, {NULL, NULL, NULL}, mgopt__exw_reverse_sequence},
    {"DepthToSpace", 1, 10, MGOPT_OP_depth_to_space, mgopt__imp_depth_space, mgopt__exp_depth_space, {NULL, NULL, NULL}, mgopt__exw_depth_space},
    {"DepthToSpace", 11, 0, MGOPT_OP_depth_to_space, mgopt__imp_depth_space, mgopt__exp_depth_space, {NULL, NULL, NULL}, mgopt__exw_depth_space},
    {"SpaceToDepth", 1, 0, MGOPT_OP_space_to_depth, mgopt__imp_depth_space, mgopt__exp_depth_space, {NULL, NULL, NULL}, mgopt__exw_depth_space},
    {"TopK", 1, 9, MGOPT_OP_topk, mgopt__imp_topk, mgopt__exp_topk, {NULL, NULL, NULL}, mgopt__exw_topk},
    {"TopK", 10, 10, MGOPT_OP_topk, mgopt__imp_topk, mgopt__exp_topk, {NULL, NULL, NULL}, mgopt__exw_topk},
    {"TopK", 11, 0, MGOPT_OP_topk, mgopt__imp_topk, mgopt__exp_topk, {NULL, NULL, NULL}, mgopt__exw_topk},
    {"Range", 11, 0, MGOPT_OP_range_1d, mgopt__imp_range, mgopt__exp_range, {NULL, NULL, NULL}, mgopt__exw_range},
    {"OneHot", 9, 10, MGOPT_OP_one_hot, mgopt__imp_one_hot, mgopt__exp_one_hot, {NULL, NULL, NULL}, mgopt__exw_one_hot},
    {"OneHot", 11, 0, MGOPT_OP_one_hot, mgopt__imp_one_hot, mgopt__exp_one_hot, {NULL, NULL, NULL}, mgopt__exw_one_hot},
    {"ConstantOfShape", 9, 0, MGOPT_OP_fill, mgopt__imp_constant_of_shape, mgopt__exp_fill, {NULL, NULL, NULL}, mgopt__exw_fill},
};

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_struct(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_struct);
  return mgopt__onnx_struct;
}
