/* src/passes/fusion/fuse_conv_scale.c — common::fuse_conv_scale: a mul or real_div of a conv by a constant folds into its weight and bias.

   Spec: mil_graph_passes.txt, "Fold mul/div into conv/conv_transpose by
   updating the weight/bias of the convolution layers"; reference
   mil-passes.md §3.19 and §7.

   Before:
     main(%x: (1, 2, 3, fp32)) {
       %w: (2, 2, 1, fp32)* = const(val=[[[1], [2]], [[3], [4]]])
       %b: (2, fp32)* = const(val=[1, -1])
       %c: (1, 2, 3, fp32) = conv(x=%x, weight=%w, bias=%b)
       %s: (1, 2, 1, fp32)* = const(val=[[[2], [0.5]]])
       %y: (1, 2, 3, fp32) = mul(x=%c, y=%s)
     } -> (%y)
   After:
     main(%x: (1, 2, 3, fp32)) {
       %c_weight: (2, 2, 1, fp32)* = const(val=[[[2], [4]], [[1.5], [2]]])
       %c_bias: (2, fp32)* = const(val=[2, -0.5])
       %y: (1, 2, 3, fp32) = conv(x=%x, weight=%c_weight, bias=%c_bias)
     } -> (%y)

   Fires on: mul(conv, s) or mul(s, conv), and real_div(conv, s) (scale 1/s),
   where conv is a conv or conv_transpose (mgopt__pw_conv_get: const float
   weight, bias absent or const) whose output has no other use and is not a
   block output, and s is a const that is a scalar or varies only along the
   channel axis without changing the output's shape (mgopt__pw_channel_const:
   (), (1), (Cout, 1, 1), (1, Cout, 1, 1), ... for a 2-D conv). Per output
   channel o: W'[o] = s[o]·W[o], b'[o] = s[o]·b[o] (an absent bias stays
   absent). A grouped conv_transpose maps its channels as in
   fuse_conv_batchnorm (k·Cout/g + j scales W[k·Cin/g : (k+1)·Cin/g, j]),
   in 1-D, 2-D and 3-D alike. The conv keeps its name and reads the new
   consts; the mul or real_div and its unused consts are erased.
   Numeric contract: each element of W' and b' is computed in double (for
   real_div, the scale 1/s[o] in double first) from the exact constant values
   and rounded once, to nearest even, to the weight's dtype (fp16 stays fp16).
   Must not fire: real_div(s, conv) (s / conv is no scale; the reference
   fuses it); a scale of another shape (one that varies along a spatial axis
   or would broadcast the output to a higher rank); a run-time scale, weight
   or bias; a conv output with another use or that is a block output; a
   result that is not finite; declared types that do not allow the
   replacement (mgopt__pu_replace_fits).
   Cost: worklist patterns, O(muls and real_divs + weight elements). A
   weight an earlier fold made, read by this conv alone, is scaled in place
   (mgopt__pw_conv_scale): no new memory. */
#include "../../passes_internal.h"

static int mgopt__fcs_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *cv = NULL, *sv = NULL, *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y");
  mgopt__pw_conv c;
  mgopt_tensor *nw, *nb = NULL;
  double *s, *b;
  int64_t o;
  int k;
  MGOPT__UNUSED(ud);
  if (!x || !y || op->nouts != 1) return 0;
  for (k = 0; k < (op->kind == MGOPT_OP_mul ? 2 : 1) && !cv; k++) {
    mgopt_value *a = k ? y : x, *other = k ? x : y;
    if (a->def && mgopt__pw_conv_get(p, a->def, &c)) {
      cv = a;
      sv = other;
    }
  }
  if (!cv || !mgopt__pu_single_use(cv) || mgopt__pu_is_block_output(cv)) return 0;
  s = (double *)mgopt_program_alloc(p, sizeof(double) * (size_t)c.cout, 8);
  if (!s || !mgopt__pw_channel_const(p, sv, c.w->rank, 1, c.cout, s)) return 0;
  if (!mgopt__pu_replace_fits(p, op->outs[0], cv)) return 0;
  if (op->kind == MGOPT_OP_real_div)
    for (o = 0; o < c.cout; o++) {
      s[o] = 1.0 / s[o];
      if (!isfinite(s[o])) return 0;
    }
  if (c.b) {
    if (!(b = mgopt__pw_conv_bias(p, &c))) return 0;
    for (o = 0; o < c.cout; o++) b[o] *= s[o];
    if (!(nb = mgopt__pw_vector(p, (mgopt_dtype)c.w->dtype, c.cout, b))) return 0;
  }
  nw = mgopt__pw_conv_scale(p, &c, s); /* last: it may scale in place */
  if (!nw || !mgopt__pw_conv_set(rw, cv->def, nw, nb)) return 0;
  mgopt__pu_replace_value(rw, op->outs[0], cv);
  mgopt__pu_erase_with_consts(rw, op);
  return 1;
}

static const mgopt_pattern mgopt__fcs_patterns[] = {
    {"conv_mul", MGOPT_OP_mul, NULL, 1, mgopt__fcs_fuse, NULL},
    {"conv_real_div", MGOPT_OP_real_div, NULL, 1, mgopt__fcs_fuse, NULL},
};

/* the patterns match only where one of these is */
static const int32_t mgopt__fcs_needs[] = {MGOPT_OP_conv, MGOPT_OP_conv_transpose};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(fusion, common, fuse_conv_scale,
                                   "fold a mul or real_div of a conv by a constant into its weight and bias",
                                   mgopt__fcs_patterns, mgopt__fcs_needs);
