/* src/passes/relay/canonicalize_op.c — relay::canonicalize_op: bias_add becomes an add of the bias expanded to line up with its axis.

   Spec: tvm_relay_passes.md, "CanonicalizeOp()" (TVM's BiasAddSimplifier):
   bias_add(x, b, axis) is rewritten as add(x, ExpandBiasToMatchAxis(b)),
   the bias given trailing dims of 1 so that it broadcasts along x's axis;
   the add then fuses or folds like any other (fuse_conv_bias,
   fold_scale_axis, const_elimination).

   Before:
     main(%x: (1, 2, 3, fp32)) {
       %b: (2, fp32)* = const(val=[1, 2])
       %y: (1, 2, 3, fp32) = bias_add(x=%x, bias=%b)
     } -> (%y)
   After:
     main(%x: (1, 2, 3, fp32)) {
       %y_bias_0: (2, 1, fp32)* = const(val=[[1], [2]])
       %y: (1, 2, 3, fp32) = add(x=%x, y=%y_bias_0)
     } -> (%y)

   The bias of C values for x of rank r and axis a (negative counts from the
   end) is read with shape [C, 1, ..., 1] of rank r - a: a constant is
   re-shaped (its bytes shared), a run-time bias goes through expand_dims
   with axes [1, ..., r - a - 1]; for the last axis the bias is added as it
   is. The add takes bias_add's output and op name. Exact: the same sum.

   Fires on: every bias_add with x of known rank and a 1-d bias.
   Must not fire: x's rank unknown; a bias that is not 1-d (the verifier
   rejects it); a result the program's target refuses.
   Cost: worklist patterns, O(bias_add ops). */
#include "../../passes_internal.h"

static int mgopt__cop_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const xy[2] = {"x", "y"};
  static const char *const xonly[1] = {"x"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *b = mgopt_op_operand(op, "bias"), *vals[2];
  mgopt_tensor *t;
  mgopt_op *made[3];
  int64_t axis = mgopt_op_get_int(op, "axis", 1), shape[MGOPT_MAX_RANK], axes[MGOPT_MAX_RANK];
  int32_t r, n, i, nmade = 0;
  const char *stem;
  MGOPT__UNUSED(ud);
  if (!x || !b || op->nouts != 1 || x->type.kind != MGOPT_TYPE_TENSOR || x->type.rank < 1 || b->type.rank != 1)
    return 0;
  r = x->type.rank;
  if (axis < -(int64_t)r || axis >= (int64_t)r) return 0;
  if (axis < 0) axis += r;
  n = r - (int32_t)axis;
  stem = mgopt__pu_value_name(op->outs[0]);
  vals[0] = x;
  vals[1] = b;
  if (n > 1) {
    t = mgopt_value_const(b);
    if (t && t->rank == 1 && t->dtype != MGOPT_DT_STRING) {
      mgopt_tensor *nt;
      shape[0] = t->numel;
      for (i = 1; i < n; i++) shape[i] = 1;
      nt = mgopt_tensor_new_borrowed(p, (mgopt_dtype)t->dtype, n, shape, mgopt_tensor_data(p, t), t->nbytes);
      vals[1] = nt ? mgopt_rw_const(rw, op, mgopt_program_fresh_name(p, mgopt__pu_name2(p, stem, "_bias")), nt) : NULL;
      if (!vals[1]) return 0;
      made[nmade++] = vals[1]->def;
    } else {
      mgopt_op *e = mgopt_rw_create(rw, op, "expand_dims", mgopt_program_fresh_name(p, mgopt__pu_name2(p, stem, "_bias")),
                                    1, xonly, &b, 1);
      if (!e) return 0;
      made[nmade++] = e;
      for (i = 1; i < n; i++) axes[i - 1] = i;
      if (mgopt_op_set_ints(e, "axes", axes, n - 1) != MGOPT_OK) {
        mgopt_rw_erase(rw, e);
        return 0;
      }
      vals[1] = e->outs[0];
    }
  }
  made[nmade] = mgopt_rw_create(rw, op, "add", op->outs[0]->name, 2, xy, vals, 1);
  if (!made[nmade]) {
    while (nmade > 0) mgopt_rw_erase(rw, made[--nmade]);
    return 0;
  }
  nmade++;
  return mgopt__pu_fuse_finish_named(rw, made, nmade, op, NULL, 0);
}

static const mgopt_pattern mgopt__cop_patterns[] = {
    {"bias_add", MGOPT_OP_bias_add, NULL, 1, mgopt__cop_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(relay, relay, canonicalize_op, "bias_add becomes an add of the bias expanded to its axis",
                           mgopt__cop_patterns);
