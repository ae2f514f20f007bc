/* src/passes/fusion/fuse_conv_batchnorm.c — common::fuse_conv_batchnorm: a batch_norm after a conv folds into its weight and bias.

   Spec: mil_graph_passes.txt, "Fuse the following batch_norm layer into conv
   and conv_transpose"; reference mil-passes.md §3.17 and §7.

   Before:
     main(%x: (1, 2, 3, fp32)) {
       %w: (2, 2, 1, fp32)* = const(val=[[[1], [2]], [[3], [4]]])
       %c: (1, 2, 3, fp32) = conv(x=%x, weight=%w)
       %m: (2, fp32)* = const(val=[1, 2])
       %v: (2, fp32)* = const(val=[4, 16])
       %g: (2, fp32)* = const(val=[2, 8])
       %be: (2, fp32)* = const(val=[0.5, 1])
       %y: (1, 2, 3, fp32) = batch_norm(x=%c, mean=%m, variance=%v, gamma=%g, beta=%be, epsilon=0.0)
     } -> (%y)
   After:
     main(%x: (1, 2, 3, fp32)) {
       %c_weight: (2, 2, 1, fp32)* = const(val=[[[1], [2]], [[6], [8]]])
       %c_bias: (2, fp32)* = const(val=[-0.5, -3])
       %y: (1, 2, 3, fp32) = conv(x=%x, weight=%c_weight, bias=%c_bias)
     } -> (%y)

   Fires on: a batch_norm whose x is the output of a conv or conv_transpose
   (mgopt__pw_conv_get: const float weight of rank >= 3, bias absent or a
   const of Cout elements) that has no other use and is not a block output;
   mean, variance and the gamma and beta present are consts of Cout elements
   (rank 1; gamma absent is 1, beta absent is 0). Per output channel o:
   s = gamma[o] / sqrt(variance[o] + epsilon), W'[o] = s·W[o],
   b'[o] = s·(b[o] − mean[o]) + beta[o]. Output channel o of a grouped
   conv_transpose (weight [Cin, Cout/g, ...]) is k·Cout/g + j for the slice
   W[k·Cin/g : (k+1)·Cin/g, j]: the reference pairs them wrongly when
   Cin/g > 1 and Cout/g > 1, this pass does not. The conv keeps its name and
   reads the new consts; the batch_norm and consts left unused are erased.
   Numeric contract: every W' and b' element is computed in double from the
   exact constant values and rounded once, to nearest even, to the weight's
   dtype (fp16 weights stay fp16, the bias takes the weight's dtype).
   Must not fire: the conv output has another use or is a block output; a
   weight, bias or batch_norm parameter that is not a const, a weight that is
   not float; a parameter of another size; a result that is not finite; the
   batch_norm's declared type does not suit its readers with the conv's
   (mgopt__pu_replace_fits).
   Cost: worklist patterns, O(batch_norms + weight elements). A weight an
   earlier fold made, read by this conv alone, is scaled in place
   (mgopt__pw_conv_scale): no new memory. */
#include "../../passes_internal.h"

static int mgopt__fcb_param(mgopt_program *p, const mgopt_op *bn, const char *slot, int64_t n, double dflt,
                            double *out) {
  mgopt_value *v = mgopt_op_operand(bn, slot);
  mgopt_tensor *t;
  int64_t i;
  if (!v) {
    for (i = 0; i < n; i++) out[i] = dflt;
    return 1;
  }
  t = mgopt__pu_def_of(v, MGOPT_OP_const) ? mgopt_value_const(v) : NULL;
  if (!t || t->rank != 1 || t->numel != n) return 0;
  return mgopt__pw_read_channels(p, t, n, out);
}

static int mgopt__fcb_fuse(mgopt_rewriter *rw, mgopt_op *bn, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(bn, "x");
  mgopt_op *conv = x ? x->def : NULL;
  mgopt__pw_conv c;
  double *mean, *var, *gamma, *beta, *b, eps = mgopt_op_get_float(bn, "epsilon", 1e-5);
  mgopt_tensor *nw, *nb;
  int64_t o, n;
  MGOPT__UNUSED(ud);
  if (!conv || bn->nouts != 1 || !mgopt__pu_single_use(x) || !mgopt__pw_conv_get(p, conv, &c)) return 0;
  if (mgopt__pu_is_block_output(x) || !mgopt__pu_replace_fits(p, bn->outs[0], x)) return 0;
  n = c.cout;
  mean = (double *)mgopt_program_alloc(p, sizeof(double) * 4 * (size_t)n, 8);
  if (!mean) return 0;
  var = mean + n;
  gamma = var + n;
  beta = gamma + n;
  if (!mgopt__fcb_param(p, bn, "mean", n, 0, mean) || !mgopt__fcb_param(p, bn, "variance", n, 0, var) ||
      !mgopt__fcb_param(p, bn, "gamma", n, 1, gamma) || !mgopt__fcb_param(p, bn, "beta", n, 0, beta) ||
      !mgopt_op_operand(bn, "mean") || !mgopt_op_operand(bn, "variance"))
    return 0;
  if (!(b = mgopt__pw_conv_bias(p, &c))) return 0;
  for (o = 0; o < n; o++) {
    double s = gamma[o] / sqrt(var[o] + eps);
    b[o] = s * (b[o] - mean[o]) + beta[o];
    gamma[o] = s; /* the scale, in place */
  }
  nb = mgopt__pw_vector(p, (mgopt_dtype)c.w->dtype, n, b);
  nw = nb ? mgopt__pw_conv_scale(p, &c, gamma) : NULL; /* last: it may scale in place */
  if (!nw || !mgopt__pw_conv_set(rw, conv, nw, nb)) return 0;
  mgopt__pu_replace_value(rw, bn->outs[0], x);
  mgopt__pu_erase_with_consts(rw, bn);
  return 1;
}

static const mgopt_pattern mgopt__fcb_patterns[] = {
    {"conv_batchnorm", MGOPT_OP_batch_norm, NULL, 1, mgopt__fcb_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_conv_batchnorm,
                           "fold a batch_norm after a conv or conv_transpose into its weight and bias",
                           mgopt__fcb_patterns);
