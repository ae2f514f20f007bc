/* src/passes/fusion/fuse_conv_batchnorm.c — common::fuse_conv_batchnorm: a batch_norm after a conv, or a linear or matmul over a constant weight, folds into its weight and bias.

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
   Also (as ONNX Runtime's basic level folds MatMul + BatchNormalization
   into a Gemm): a batch_norm over a rank-2 x made by a linear (const
   weight [N, K], bias absent or const) or a matmul with transpose_x false
   and a const 2-d y ([K, N], or [N, K] with transpose_y): the same per
   feature s and b' make one linear(x, W', b') with W'[o] = s·(row o of
   the [N, K] weight), named as the batch_norm's output.
   Numeric contract: every W' and b' element is computed in double from the
   exact constant values and rounded once, to nearest even, to the weight's
   dtype (fp16 weights stay fp16, the bias takes the weight's dtype).
   Must not fire: the conv (linear, matmul) output has another use or is a block output; a
   matmul or linear over an x of another rank (a batch_norm then
   normalizes another axis than the features) or with a fused activation; a
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

/* The batch_norm's mean, variance, gamma, beta for n channels, and 4n
   doubles of arena for them (then 1 spare n for the caller); NULL when a
   parameter does not fit or on OOM. */
static double *mgopt__fcb_params(mgopt_program *p, const mgopt_op *bn, int64_t n) {
  double *m = (double *)mgopt_program_alloc(p, sizeof(double) * 5 * (size_t)n, 8);
  if (!m || !mgopt_op_operand(bn, "mean") || !mgopt_op_operand(bn, "variance")) return NULL;
  if (!mgopt__fcb_param(p, bn, "mean", n, 0, m) || !mgopt__fcb_param(p, bn, "variance", n, 0, m + n) ||
      !mgopt__fcb_param(p, bn, "gamma", n, 1, m + 2 * n) || !mgopt__fcb_param(p, bn, "beta", n, 0, m + 3 * n))
    return NULL;
  return m;
}

/* A batch_norm after a linear, or a matmul whose y is a constant 2-d
   weight, over a rank-2 x (the batch_norm's channel axis 1 is then the
   output feature): one linear with the weight [N, K] scaled per row and
   the folded bias, named as the batch_norm's output. 1 when it did. */
static int mgopt__fcb_linear(mgopt_rewriter *rw, mgopt_op *bn, mgopt_op *op, double eps) {
  static const char *const slots[3] = {"x", "weight", "bias"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *wv, *bv = NULL, *vals[3];
  mgopt_tensor *w, *b = NULL, *nw, *nb;
  double *m, *bias;
  int64_t n, k, o, j, shape[2];
  int rows; /* the weight is [N, K]: a linear's, or a matmul's with transpose_y */
  const char *name;
  mgopt_op *lin;
  if (op->kind == MGOPT_OP_linear) {
    if (mgopt__pu_fused_act(op)) return 0;
    wv = mgopt_op_operand(op, "weight");
    bv = mgopt_op_operand(op, "bias");
    rows = 1;
  } else if (op->kind == MGOPT_OP_matmul && !mgopt_op_get_bool(op, "transpose_x", 0)) {
    wv = mgopt_op_operand(op, "y");
    rows = mgopt_op_get_bool(op, "transpose_y", 0);
  } else {
    return 0;
  }
  if (!x || !wv || op->nouts != 1 || x->type.rank != 2 || op->outs[0]->type.rank != 2) return 0;
  if (!mgopt__pu_def_of(wv, MGOPT_OP_const) || (bv && !mgopt__pu_def_of(bv, MGOPT_OP_const))) return 0;
  w = mgopt_value_const(wv);
  b = bv ? mgopt_value_const(bv) : NULL;
  if (!w || (bv && !b) || w->rank != 2 || w->numel < 1 || !mgopt__pw_is_float_weight((mgopt_dtype)w->dtype) ||
      x->type.dtype != w->dtype || !w->data)
    return 0;
  n = rows ? w->shape[0] : w->shape[1];
  k = rows ? w->shape[1] : w->shape[0];
  if ((b && (b->rank != 1 || b->numel != n)) || !(m = mgopt__fcb_params(p, bn, n))) return 0;
  bias = m + 4 * n;
  if (b && !mgopt__pw_read_channels(p, b, n, bias)) return 0;
  if (!b)
    for (o = 0; o < n; o++) bias[o] = 0.0;
  for (o = 0; o < n; o++) {
    double sc = m[2 * n + o] / sqrt(m[n + o] + eps);
    bias[o] = sc * (bias[o] - m[o]) + m[3 * n + o];
    m[2 * n + o] = sc; /* the scale, in place of gamma */
  }
  shape[0] = n;
  shape[1] = k;
  if (!(nw = mgopt_tensor_new(p, (mgopt_dtype)w->dtype, 2, shape))) return 0;
  for (o = 0; o < n; o++) /* element reads copy: a borrowed, unaligned weight is read in place */
    for (j = 0; j < k; j++)
      if (!mgopt__pw_store(nw, o * k + j, mgopt_tensor_get_f64(w, rows ? o * k + j : j * n + o) * m[2 * n + o]))
        return 0;
  if (!(nb = mgopt__pw_vector(p, (mgopt_dtype)w->dtype, n, bias))) return 0;
  vals[0] = x;
  vals[1] = mgopt_rw_const(rw, bn, mgopt__pu_name2(p, mgopt__pu_value_name(bn->outs[0]), "_weight"), nw);
  vals[2] = vals[1] ? mgopt_rw_const(rw, bn, mgopt__pu_name2(p, mgopt__pu_value_name(bn->outs[0]), "_bias"), nb) : NULL;
  if (!vals[2]) return 0;
  lin = mgopt_rw_create(rw, bn, "linear", mgopt__pu_value_name(bn->outs[0]), 3, slots, vals, 1);
  if (!lin) return 0;
  name = op->name;
  /* inferred, accepted by the target, typed as the batch_norm's output, or undone */
  if (!mgopt__pu_fuse_finish(rw, &lin, 1, bn, &op, 1)) return 0;
  lin->name = name; /* the matmul's (linear's) op name stays, as a conv's does */
  return 1;
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
  if (!conv || bn->nouts != 1 || !mgopt__pu_single_use(x) || mgopt__pu_is_block_output(x)) return 0;
  if (!mgopt__pw_conv_get(p, conv, &c)) return mgopt__fcb_linear(rw, bn, conv, eps);
  if (!mgopt__pu_replace_fits(p, bn->outs[0], x)) return 0;
  n = c.cout;
  if (!(mean = mgopt__fcb_params(p, bn, n))) return 0;
  var = mean + n;
  gamma = var + n;
  beta = gamma + n;
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
                           "fold a batch_norm after a conv, conv_transpose, or 2-d linear or matmul over a constant "
                           "weight into its weight and bias",
                           mgopt__fcb_patterns);
