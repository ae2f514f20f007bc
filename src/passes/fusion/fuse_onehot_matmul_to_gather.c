/* src/passes/fusion/fuse_onehot_matmul_to_gather.c — common::fuse_onehot_matmul_to_gather: one_hot(i) times a constant matrix W becomes gather(W, i).

   Spec: mil_graph_passes.txt, "Detect if onehot (axis=-1, on_value=1,
   off_value=0) is followed by a matmul op (no bias)"; reference §3.33
   (fuse_onehot_matmul_to_gather).

   Before:
     main(%i: (2, int32)) {
       %h: (2, 3, fp32) = one_hot(indices=%i, one_hot_vector_size=3)
       %w: (3, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6]])
       %y: (2, 2, fp32) = matmul(x=%h, y=%w)
     } -> (%y)
   After:
     main(%i: (2, int32)) {
       %w: (3, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6]])
       %y: (2, 2, fp32) = gather(x=%w, indices=%i, axis=0)
     } -> (%y)

   Fires on: one_hot(indices, one_hot_vector_size=N, axis=-1, on_value=1,
   off_value=0) (exactly 1 and 0) whose only user is matmul(x=one_hot,
   y=W) without transposes, W a constant (N, K) matrix whose every element
   is finite; the gather takes the matmul's output name.
   Indices: one_hot marks index i in [-N, N) at i mod N (ONNX OneHot; the
   reference's guard wraps the same way), and gather's index i in [-N, N)
   reads row i mod N: the results agree for every such index, negative
   ones included, with no guard ops (the reference's select(i >= 0, i,
   i + N) is what guard_negative_gather_indices adds later in the pipeline
   for a runtime whose gather takes no negative index; N is static, so no
   run-time shape is needed). Constant indices must all lie in [-N, N)
   (outside, one_hot gives a zero row that gather cannot). Run-time indices
   outside [-N, N) are outside gather's domain: the one case the rewrite
   does not preserve, as in the reference. Results are bitwise equal but
   for the sign of a zero (1 * -0 + 0 * w is +0).
   Must not fire: the one_hot is a block output or has another user; another
   axis; on/off values not exactly 1 and 0, or not constant; transpose_x or
   transpose_y set (or not constant); W not constant, not rank 2, or holding
   an infinity or NaN (0 * inf would make the matmul's column NaN); the
   one_hot and the matmul in different blocks; the target cannot write the
   gather (mgopt_program_target_accepts).
   Cost: worklist patterns, O(matmuls + W elements). */
#include "../../passes_internal.h"

/* The value of parameter `name` of op when it is constant (attribute, default or constant operand). */
static int mgopt__fog_const_param(const mgopt_op *op, const char *name, double *v) {
  const mgopt_value *u = mgopt_op_operand(op, name);
  if (u && !mgopt_value_const(u)) return 0;
  *v = mgopt_op_get_float(op, name, 0.0);
  return 1;
}

/* 1 when every element of t is finite. */
static int mgopt__fog_finite(const mgopt_tensor *t) {
  int64_t i;
  for (i = 0; i < t->numel; i++) {
    double v = mgopt_tensor_get_f64(t, i);
    if (v != v || v - v != 0.0) return 0;
  }
  return 1;
}

static int mgopt__fog_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const slots[2] = {"x", "indices"};
  mgopt_value *h = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "y"), *idx, *out, *ins[2];
  mgopt_op *oh = mgopt__pu_def_of(h, MGOPT_OP_one_hot), *g;
  const mgopt_tensor *wt, *it;
  double on, off, tx, ty;
  int64_t depth, i;
  MGOPT__UNUSED(ud);
  if (!oh || op->nouts != 1 || oh->parent != op->parent || !mgopt__pu_single_use(h) || mgopt__pu_is_block_output(h))
    return 0;
  idx = mgopt_op_operand(oh, "indices");
  if (!idx || idx->type.kind != MGOPT_TYPE_TENSOR || idx->type.rank < 0 ||
      !mgopt_dtype_is_int((mgopt_dtype)idx->type.dtype))
    return 0;
  if (mgopt_op_operand(oh, "axis") && !mgopt_value_const(mgopt_op_operand(oh, "axis"))) return 0;
  if (mgopt__pu_norm_axis(mgopt_op_get_int(oh, "axis", -1), (int64_t)idx->type.rank + 1) != idx->type.rank) return 0;
  if (!mgopt__fog_const_param(oh, "on_value", &on) || !mgopt__fog_const_param(oh, "off_value", &off) ||
      on != 1.0 || off != 0.0)
    return 0;
  if (!mgopt__fog_const_param(op, "transpose_x", &tx) || !mgopt__fog_const_param(op, "transpose_y", &ty) ||
      mgopt_op_get_bool(op, "transpose_x", 0) || mgopt_op_get_bool(op, "transpose_y", 0))
    return 0;
  depth = mgopt_op_get_int(oh, "one_hot_vector_size", -1);
  wt = mgopt_value_const(w);
  if (!wt || wt->rank != 2 || wt->shape[0] != depth || depth < 1 || !mgopt__fog_finite(wt)) return 0;
  it = mgopt_value_const(idx);
  for (i = 0; it && i < it->numel; i++) {
    int64_t v = mgopt_tensor_get_i64(it, i);
    if (v < -depth || v >= depth) return 0;
  }
  out = op->outs[0];
  ins[0] = w;
  ins[1] = idx;
  g = mgopt_rw_create(rw, op, "gather", mgopt__pu_value_name(out), 2, slots, ins, 1);
  if (!g) return 0;
  if (mgopt_op_set_int(g, "axis", 0) != MGOPT_OK) {
    mgopt_rw_erase(rw, g);
    return 0;
  }
  return mgopt__pu_fuse_finish(rw, &g, 1, op, &oh, 1);
}

static const mgopt_pattern mgopt__fog_patterns[] = {
    {"one_hot_matmul", MGOPT_OP_matmul, NULL, 1, mgopt__fog_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_onehot_matmul_to_gather,
                           "one_hot(i) times a constant matrix W becomes gather(W, i)", mgopt__fog_patterns);
