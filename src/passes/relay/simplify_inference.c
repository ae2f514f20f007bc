/* src/passes/relay/simplify_inference.c — relay::simplify_inference: batch_norm, layer_norm, instance_norm and inference-mode Dropout become elementwise ops.

   Spec: tvm_relay_passes.md, "SimplifyInference" (TVM's BatchNormToInferUnpack,
   LayerNormToInferUnpack, InstanceNormToInferUnpack, dropout dropped at
   inference). The opposite of the fusions, for a runtime without these ops;
   the elementwise ops it leaves fold into a neighbouring conv or linear
   (fold_scale_axis, fuse_conv_scale / fuse_conv_bias).

   Before:
     main(%x: (1, 2, 3, fp32)) {
       %m: (2, fp32)* = const(val=[0, 1])
       %v: (2, fp32)* = const(val=[1, 4])
       %y: (1, 2, 3, fp32) = batch_norm(x=%x, mean=%m, variance=%v, epsilon=0.0)
     } -> (%y)
   After:
     main(%x: (1, 2, 3, fp32)) {
       %y_scale_0: (2, 1, fp32)* = const(val=[[1], [0.5]])
       %y_mul_0: (1, 2, 3, fp32) = mul(x=%x, y=%y_scale_0)
       %y_shift_0: (2, 1, fp32)* = const(val=[[0], [-0.5]])
       %y: (1, 2, 3, fp32) = add(x=%y_mul_0, y=%y_shift_0)
     } -> (%y)

   Rewrites (x of rank r, the channel axis 1; a per-channel vector is read
   as shape [C, 1, ..., 1] of rank r - 1 so it broadcasts against x):
   - batch_norm with constant mean, variance, gamma, beta:
     y = x * scale + shift, scale = gamma / sqrt(variance + epsilon),
     shift = beta - mean * scale (missing gamma = 1, beta = 0);
   - batch_norm with a run-time parameter: y = (x - mean) / sqrt(variance +
     epsilon) [* gamma] [+ beta], each parameter reshaped to [C, 1, ...];
   - layer_norm over axes A (absent: every axis) and instance_norm (A = the
     axes after the channel): mean = reduce_mean(x, A, keep_dims),
     d = x - mean, var = reduce_mean(d * d, A, keep_dims),
     y = d / sqrt(var + epsilon) [* gamma] [+ beta]; instance_norm's gamma
     and beta are per channel; layer_norm's (shaped like x's dims at A, in
     order) are read with a 1 at every dim after the first of A that is not
     in A;
   - onnx::Dropout at inference (the rule of
     onnx::inline_dropout_training_mode_constants, shared).
   epsilon sits inside the square root, added to the variance, as in every
   norm op's definition. The last op takes the norm's output name and op name.

   Numeric contract: the constant scale and shift of batch_norm are computed
   in double from the parameters and rounded once to x's dtype (the shift
   from the unrounded scale); epsilon becomes a scalar of x's dtype. The
   ops then compute in x's dtype: the result differs from the fused op's
   (which computes in double and rounds once) by the roundings of those ops,
   a few ulp of the output's magnitude.

   Fires on: those ops with x of known rank and a float dtype (fp16, bf16,
   fp32, fp64); batch_norm and instance_norm of rank >= 2 and >= 3.
   Must not fire: x's rank unknown or its dtype not a float; a constant
   parameter whose size is not C (batch_norm: left to the verifier of the
   op); a result the program's target cannot express, or whose type
   contradicts the norm's declared type (the ops made are taken back).
   Cost: worklist patterns, O(norm ops x (rank + C)). */
#include "../../passes_internal.h"

#define MGOPT__SI_MAXMADE 16

typedef struct mgopt__si {
  mgopt_rewriter *rw;
  mgopt_program *p;
  mgopt_op *at;  /* the norm op: made ops go before it */
  const char *name; /* its output's name: the stem of the names made */
  mgopt_op *made[MGOPT__SI_MAXMADE];
  int32_t nmade;
} mgopt__si;

/* a new op `type`(slots = vals) named <stem>_<what>_<k>, inferred; NULL when it cannot be */
static mgopt_value *mgopt__si_op(mgopt__si *s, const char *type, const char *what, int32_t n,
                                 const char *const *slots, mgopt_value *const *vals) {
  mgopt_op *op;
  if (s->nmade >= MGOPT__SI_MAXMADE) return NULL;
  op = mgopt_rw_create(s->rw, s->at, type, mgopt_program_fresh_name(s->p, mgopt__pu_name2(s->p, s->name, what)), n,
                       slots, vals, 1);
  if (!op) return NULL;
  s->made[s->nmade++] = op;
  return mgopt_op_infer(s->p, op, NULL) == MGOPT_OK ? op->outs[0] : NULL;
}

static mgopt_value *mgopt__si_binary(mgopt__si *s, const char *type, const char *what, mgopt_value *x, mgopt_value *y) {
  static const char *const slots[2] = {"x", "y"};
  mgopt_value *vals[2];
  vals[0] = x;
  vals[1] = y;
  return mgopt__si_op(s, type, what, 2, slots, vals);
}

static mgopt_value *mgopt__si_const(mgopt__si *s, const char *what, mgopt_tensor *t) {
  mgopt_value *v;
  if (!t || s->nmade >= MGOPT__SI_MAXMADE) return NULL;
  v = mgopt_rw_const(s->rw, s->at, mgopt_program_fresh_name(s->p, mgopt__pu_name2(s->p, s->name, what)), t);
  if (v) s->made[s->nmade++] = v->def;
  return v;
}

/* v (a parameter holding x's dims at the normalized axes, or C values)
   read with shape `shape` of rank n: a constant is re-shaped (its bytes are
   shared), a run-time value goes through reshape. */
static mgopt_value *mgopt__si_shaped(mgopt__si *s, const char *what, mgopt_value *v, const int64_t *shape, int32_t n) {
  static const char *const slots[2] = {"x", "shape"};
  mgopt_tensor *t = mgopt_value_const(v), *nt;
  mgopt_value *vals[2];
  int64_t have[MGOPT_MAX_RANK];
  if (v->type.rank == n && mgopt__pu_static_shape(&v->type, have, MGOPT_MAX_RANK) && memcmp(have, shape, sizeof(int64_t) * (size_t)n) == 0)
    return v; /* already of that shape */
  if (t) {
    int64_t numel = 1;
    int32_t i;
    for (i = 0; i < n; i++) numel *= shape[i];
    if (t->numel != numel || t->dtype == MGOPT_DT_STRING) return NULL;
    nt = mgopt_tensor_new_borrowed(s->p, (mgopt_dtype)t->dtype, n, shape, mgopt_tensor_data(s->p, t), t->nbytes);
    return mgopt__si_const(s, what, nt);
  }
  vals[0] = v;
  vals[1] = mgopt__si_const(s, "_shape", mgopt__pu_const_i32_1d(s->p, shape, n));
  return vals[1] ? mgopt__si_op(s, "reshape", "_reshape", 2, slots, vals) : NULL;
}

/* [C, 1, ..., 1] of rank r - 1 */
static int32_t mgopt__si_channel_shape(int32_t r, int64_t c, int64_t *shape) {
  int32_t i;
  shape[0] = c;
  for (i = 1; i < r - 1; i++) shape[i] = 1;
  return r - 1;
}

/* x * scale + shift with constants computed in double; 0 when a parameter is not a constant of C values */
static mgopt_value *mgopt__si_bn_const(mgopt__si *s, mgopt_value *x, mgopt_op *bn, int64_t c, double eps) {
  static const char *const names[4] = {"mean", "variance", "gamma", "beta"};
  mgopt_dtype dt = (mgopt_dtype)x->type.dtype;
  mgopt_tensor *pt[4], *scale, *shift;
  int64_t shape[MGOPT_MAX_RANK], i;
  int32_t k, n = mgopt__si_channel_shape(x->type.rank, c, shape);
  mgopt_value *y;
  for (k = 0; k < 4; k++) {
    mgopt_value *v = mgopt_op_operand(bn, names[k]);
    pt[k] = v ? mgopt_value_const(v) : NULL;
    if (v && (!pt[k] || pt[k]->numel != c || pt[k]->dtype == MGOPT_DT_STRING)) return NULL;
  }
  scale = mgopt_tensor_new(s->p, dt, n, shape);
  shift = mgopt_tensor_new(s->p, dt, n, shape);
  if (!scale || !shift) return NULL;
  for (i = 0; i < c; i++) {
    double g = pt[2] ? mgopt_tensor_get_f64(pt[2], i) : 1.0, b = pt[3] ? mgopt_tensor_get_f64(pt[3], i) : 0.0;
    double sc = g / sqrt(mgopt_tensor_get_f64(pt[1], i) + eps);
    double sh = b - mgopt_tensor_get_f64(pt[0], i) * sc;
    if (!mgopt__pw_store(scale, i, sc) || !mgopt__pw_store(shift, i, sh)) return NULL;
  }
  y = mgopt__si_binary(s, "mul", "_mul", x, mgopt__si_const(s, "_scale", scale));
  return y ? mgopt__si_binary(s, "add", "_add", y, mgopt__si_const(s, "_shift", shift)) : NULL;
}

/* d / sqrt(var + eps) [* gamma] [+ beta], gamma and beta read with shape pshape */
static mgopt_value *mgopt__si_finish(mgopt__si *s, mgopt_value *d, mgopt_value *var, double eps, mgopt_op *norm,
                                     const int64_t *pshape, int32_t pn) {
  mgopt_value *g = mgopt_op_operand(norm, "gamma"), *b = mgopt_op_operand(norm, "beta"), *y;
  mgopt_value *e = mgopt__si_const(s, "_epsilon", mgopt_tensor_new_scalar_f64(s->p, (mgopt_dtype)d->type.dtype, eps));
  y = e ? mgopt__si_binary(s, "add", "_add", var, e) : NULL;
  if (y) {
    static const char *const slot[1] = {"x"};
    y = mgopt__si_op(s, "sqrt", "_sqrt", 1, slot, &y);
  }
  if (y) y = mgopt__si_binary(s, "real_div", "_div", d, y);
  if (y && g) {
    mgopt_value *gs = mgopt__si_shaped(s, "_gamma", g, pshape, pn);
    y = gs ? mgopt__si_binary(s, "mul", "_mul", y, gs) : NULL;
  }
  if (y && b) {
    mgopt_value *bs = mgopt__si_shaped(s, "_beta", b, pshape, pn);
    y = bs ? mgopt__si_binary(s, "add", "_add", y, bs) : NULL;
  }
  return y;
}

static mgopt_value *mgopt__si_batch_norm(mgopt__si *s, mgopt_value *x, mgopt_op *bn, double eps) {
  int64_t shape[MGOPT_MAX_RANK];
  int32_t n;
  mgopt_value *mean = mgopt_op_operand(bn, "mean"), *var = mgopt_op_operand(bn, "variance"), *y;
  if (x->type.rank < 2 || !mgopt_dim_is_static(x->type.dims[1]) || !mean || !var) return NULL;
  y = mgopt__si_bn_const(s, x, bn, x->type.dims[1].v, eps);
  if (y || s->nmade) return y;
  n = mgopt__si_channel_shape(x->type.rank, x->type.dims[1].v, shape);
  mean = mgopt__si_shaped(s, "_mean", mean, shape, n);
  var = mgopt__si_shaped(s, "_variance", var, shape, n);
  y = mean && var ? mgopt__si_binary(s, "sub", "_sub", x, mean) : NULL;
  return y ? mgopt__si_finish(s, y, var, eps, bn, shape, n) : NULL;
}

static mgopt_value *mgopt__si_norm(mgopt__si *s, mgopt_value *x, mgopt_op *norm, double eps) {
  static const char *const slot[1] = {"x"};
  int32_t r = x->type.rank, d, pn = 0, first = -1;
  int64_t axes[MGOPT_MAX_RANK], pshape[MGOPT_MAX_RANK], na = 0;
  uint8_t red[MGOPT_MAX_RANK];
  mgopt_value *m, *dv, *sq, *var;
  memset(red, 0, sizeof red);
  if (norm->kind == MGOPT_OP_instance_norm) {
    if (r < 3 || !mgopt_dim_is_static(x->type.dims[1])) return NULL;
    for (d = 2; d < r; d++) red[d] = 1;
    pn = mgopt__si_channel_shape(r, x->type.dims[1].v, pshape);
  } else {
    const int64_t *ax;
    int64_t n = mgopt_op_get_ints(s->p, norm, "axes", &ax), i;
    if (n == 0) return NULL;
    for (i = 0; i < n; i++) {
      int64_t a = mgopt__pu_norm_axis(ax[i], r);
      if (a < 0 || red[a]) return NULL;
      red[a] = 1;
    }
    if (n < 0)
      for (d = 0; d < r; d++) red[d] = 1;
    for (d = 0; d < r; d++) {
      if (red[d] && first < 0) first = d;
      if (first < 0) continue;
      if (red[d] && !mgopt_dim_is_static(x->type.dims[d])) return NULL;
      pshape[pn++] = red[d] ? x->type.dims[d].v : 1;
    }
  }
  for (d = 0; d < r; d++)
    if (red[d]) axes[na++] = d;
  m = mgopt__si_op(s, "reduce_mean", "_mean", 1, slot, &x);
  if (!m || mgopt_op_set_ints(m->def, "axes", axes, na) || mgopt_op_set_bool(m->def, "keep_dims", 1) ||
      mgopt_op_infer(s->p, m->def, NULL))
    return NULL;
  dv = mgopt__si_binary(s, "sub", "_sub", x, m);
  sq = dv ? mgopt__si_binary(s, "mul", "_square", dv, dv) : NULL;
  var = sq ? mgopt__si_op(s, "reduce_mean", "_var", 1, slot, &sq) : NULL;
  if (!var || mgopt_op_set_ints(var->def, "axes", axes, na) || mgopt_op_set_bool(var->def, "keep_dims", 1) ||
      mgopt_op_infer(s->p, var->def, NULL))
    return NULL;
  return mgopt__si_finish(s, dv, var, eps, norm, pshape, pn);
}

/* the elementwise ops standing for norm op `op` (batch_norm, layer_norm or
   instance_norm), made before it into s->made; NULL, nothing left made,
   when op does not qualify */
static mgopt_value *mgopt__si_build(mgopt__si *s, mgopt_rewriter *rw, mgopt_op *op) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *y;
  double eps = mgopt_op_get_float(op, "epsilon", 1e-5);
  memset(s, 0, sizeof *s);
  if (!x || op->nouts != 1 || x->type.kind != MGOPT_TYPE_TENSOR || x->type.rank < 1 ||
      !mgopt__pw_is_float_weight((mgopt_dtype)x->type.dtype) || !(eps >= 0.0))
    return NULL;
  if (op->kind != MGOPT_OP_batch_norm && op->kind != MGOPT_OP_layer_norm && op->kind != MGOPT_OP_instance_norm)
    return NULL;
  s->rw = rw;
  s->p = mgopt_rw_program(rw);
  s->at = op;
  s->name = mgopt__pu_value_name(op->outs[0]);
  y = op->kind == MGOPT_OP_batch_norm ? mgopt__si_batch_norm(s, x, op, eps) : mgopt__si_norm(s, x, op, eps);
  if (!y)
    while (s->nmade > 0) mgopt_rw_erase(rw, s->made[--s->nmade]);
  return y;
}

MGOPT__PRIVATE mgopt_value *mgopt__si_norm_elementwise(mgopt_rewriter *rw, mgopt_op *norm) {
  mgopt__si s;
  return mgopt__si_build(&s, rw, norm);
}

static int mgopt__si_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt__si s;
  mgopt_value *y = mgopt__si_build(&s, rw, op);
  MGOPT__UNUSED(ud);
  if (!y) return 0;
  mgopt__pu_rename(y, op->outs[0]->name); /* the last op stands for the norm's output */
  return mgopt__pu_fuse_finish_named(rw, s.made, s.nmade, op, NULL, 0);
}

static const mgopt_pattern mgopt__si_patterns[] = {
    {"batch_norm", MGOPT_OP_batch_norm, NULL, 1, mgopt__si_rewrite, NULL},
    {"layer_norm", MGOPT_OP_layer_norm, NULL, 1, mgopt__si_rewrite, NULL},
    {"instance_norm", MGOPT_OP_instance_norm, NULL, 1, mgopt__si_rewrite, NULL},
    {"dropout", MGOPT_OP_OPAQUE, "onnx::Dropout", 1, mgopt__pu_dropout_inference, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(relay, relay, simplify_inference,
                           "batch_norm, layer_norm, instance_norm and inference-mode Dropout become elementwise ops",
                           mgopt__si_patterns);
