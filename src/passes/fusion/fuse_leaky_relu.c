/* src/passes/fusion/fuse_leaky_relu.c — common::fuse_leaky_relu: maximum(x, alpha * x) with 0 <= alpha <= 1 becomes leaky_relu(x, alpha).

   Spec: mil_graph_passes.txt, "Detect the mul —> max pattern than can be
   mapped to leaky_relu"; reference §3.14.

   Before:
     main(%x: (2, 3, fp32)) {
       %a: (fp32)* = const(val=0.25)
       %m: (2, 3, fp32) = mul(x=%x, y=%a)
       %y: (2, 3, fp32) = maximum(x=%m, y=%x)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %y: (2, 3, fp32) = leaky_relu(x=%x, alpha=0.25)
     } -> (%y)

   Fires on: maximum(mul(x, alpha), x), the maximum and the mul each in
   either operand order, where alpha is a one-element constant (any rank not
   above x's, so it does not broadcast x) with 0 <= alpha <= 1 (inclusive, as
   the reference; for such alpha, max(x, alpha * x) is x for x >= 0 and
   alpha * x below), the mul's output has exactly one use (the maximum), and
   x is float and may have other users. The maximum's output is replaced by
   leaky_relu(x, alpha) named after it, alpha the constant's value exactly;
   the mul is erased with the constant if only it read it.
   Must not fire: alpha outside [0, 1] (1.3, -0.1) or NaN; alpha not a
   constant, not one element, or broadcasting x; the mul with another use or
   that is a block output; the maximum's other operand not the mul's x; a
   non-float x; a leaky_relu the program's target refuses
   (mgopt_program_target_accepts), or whose type does not fit the replaced
   value's declared type.
   Cost: worklist patterns rooted at maximum, O(maximums). */
#include "../../passes_internal.h"

static int mgopt__flr_fuse(mgopt_rewriter *rw, mgopt_op *mx, void *ud) {
  static const char *const xs[1] = {"x"};
  mgopt_op *mul = NULL, *lr;
  mgopt_value *x = NULL;
  double alpha = 0;
  int side;
  MGOPT__UNUSED(ud);
  if (mx->nouts != 1) return 0;
  for (side = 0; side < 2 && !x; side++) {
    mgopt_value *m = mgopt_op_operand(mx, side ? "y" : "x"), *r = mgopt_op_operand(mx, side ? "x" : "y"), *o, *c;
    mul = m && mgopt__pu_single_use(m) ? mgopt__pu_def_of(m, MGOPT_OP_mul) : NULL;
    if (!mul || mul->nouts != 1 || !(c = mgopt__pu_scalar_operand(mul, &o)) || o != r) continue;
    if (!mgopt_dtype_is_float((mgopt_dtype)r->type.dtype)) continue;
    alpha = mgopt_tensor_get_f64(mgopt_value_const(c), 0);
    if (alpha >= 0.0 && alpha <= 1.0) x = r;
  }
  if (!x) return 0;
  lr = mgopt_rw_create(rw, mx, "leaky_relu", mgopt__pu_value_name(mx->outs[0]), 1, xs, &x, 1);
  if (!lr) return 0;
  if (mgopt_op_set_float(lr, "alpha", alpha) != MGOPT_OK) {
    mgopt_rw_erase(rw, lr);
    return 0;
  }
  return mgopt__pu_fuse_finish(rw, &lr, 1, mx, &mul, 1);
}

static const mgopt_pattern mgopt__flr_patterns[] = {
    {"leaky_relu", MGOPT_OP_maximum, NULL, 1, mgopt__flr_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_leaky_relu,
                           "maximum(x, alpha * x) with 0 <= alpha <= 1 becomes leaky_relu", mgopt__flr_patterns);
