/* src/passes/fusion/fuse_gelu_sigmoid_approximation.c — common::fuse_gelu_sigmoid_approximation: x * sigmoid(1.702 * x) becomes gelu(x, mode=SIGMOID_APPROXIMATION).

   Spec: reference §3.13 (coremltools' optimize_gelu_sigmoid).

   Before:
     main(%x: (2, 3, fp32)) {
       %k: (fp32)* = const(val=1.702)
       %s: (2, 3, fp32) = mul(x=%x, y=%k)
       %g: (2, 3, fp32) = sigmoid(x=%s)
       %y: (2, 3, fp32) = mul(x=%x, y=%g)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %y: (2, 3, fp32) = gelu(x=%x, mode="SIGMOID_APPROXIMATION")
     } -> (%y)

   Fires on: mul(x, sigmoid(mul(x, c))), each mul in either operand order,
   with c a one-element constant not broadcasting x and within 0.01 of 1.702
   (absolute, as the reference) or equal to 1.702 rounded to its dtype; the
   sigmoid's output and the inner mul's output each have exactly one use,
   by the next op of the pattern (the reference checks only that they are
   not block outputs, and then fails to remove them when something else
   reads them); x is float and may have other users. The outer mul's output
   is replaced by gelu(x, mode="SIGMOID_APPROXIMATION") named after it; the
   sigmoid and inner mul are erased with the constant only they read.
   Must not fire: the sigmoid or the inner mul with another use or that is
   a block output; the outer mul's other operand not the inner mul's x; a
   constant off by 0.01 or more, not a scalar, or broadcasting x; a
   non-float x; a gelu the program's target refuses
   (mgopt_program_target_accepts), or whose type does not fit the replaced
   value's declared type.
   Cost: worklist patterns rooted at mul, O(muls). */
#include "../../passes_internal.h"

static int mgopt__fgs_fuse(mgopt_rewriter *rw, mgopt_op *last, void *ud) {
  static const char *const xs[1] = {"x"};
  mgopt_op *ops[2], *gelu;
  mgopt_value *x = NULL;
  int side;
  MGOPT__UNUSED(ud);
  if (last->nouts != 1) return 0;
  for (side = 0; side < 2 && !x; side++) {
    mgopt_value *g = mgopt_op_operand(last, side ? "y" : "x"), *r = mgopt_op_operand(last, side ? "x" : "y");
    mgopt_op *sig = g && mgopt__pu_single_use(g) ? mgopt__pu_def_of(g, MGOPT_OP_sigmoid) : NULL;
    mgopt_value *s = sig ? mgopt_op_operand(sig, "x") : NULL;
    mgopt_op *m = s && mgopt__pu_single_use(s) ? mgopt__pu_def_of(s, MGOPT_OP_mul) : NULL;
    if (!m || !r || mgopt__pu_with_scalar(m, MGOPT_OP_mul, 1.702, 0.01) != r) continue;
    if (!mgopt_dtype_is_float((mgopt_dtype)r->type.dtype)) continue;
    ops[0] = sig;
    ops[1] = m;
    x = r;
  }
  if (!x) return 0;
  gelu = mgopt_rw_create(rw, last, "gelu", mgopt__pu_value_name(last->outs[0]), 1, xs, &x, 1);
  if (!gelu) return 0;
  if (mgopt_op_set_string(gelu, "mode", "SIGMOID_APPROXIMATION") != MGOPT_OK) {
    mgopt_rw_erase(rw, gelu);
    return 0;
  }
  return mgopt__pu_fuse_finish(rw, &gelu, 1, last, ops, 2);
}

static const mgopt_pattern mgopt__fgs_patterns[] = {
    {"gelu_sigmoid_approximation", MGOPT_OP_mul, NULL, 1, mgopt__fgs_fuse, NULL},
};

/* the patterns match only where one of these is */
static const int32_t mgopt__fgs_needs[] = {MGOPT_OP_sigmoid};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(fusion, common, fuse_gelu_sigmoid_approximation,
                                   "x * sigmoid(1.702 * x) becomes gelu (SIGMOID_APPROXIMATION)", mgopt__fgs_patterns, mgopt__fgs_needs);
