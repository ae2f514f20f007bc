/* src/passes/weights.c — folding into weights: per-output-channel scaling of a weight, computed in double and rounded once to its dtype. */
#include "../passes_internal.h"

/* v rounded once (to nearest, ties to even) to a binary float format with
   `mant` fraction bits and normal exponents emin..emax; +-inf past the
   largest finite value. v is finite. Every step is exact in double but the
   one rounding: a * 2^k, x - 1 and the integer rounding of a value below 2^53. */
static double mgopt__pw_round_format(double v, int mant, int emin, int emax) {
  double a = fabs(v), q, fl, r, scale;
  int e;
  if (a == 0.0) return v;
  (void)frexp(a, &e);
  e -= 1; /* a = 1.f * 2^e */
  if (e < emin) e = emin; /* subnormal: the quantum is 2^(emin - mant) */
  if (e > emax) return v < 0 ? -HUGE_VAL : HUGE_VAL;
  scale = ldexp(1.0, mant - e);
  q = a * scale; /* the quantum of the target is 1 here */
  fl = floor(q);
  r = q - fl;
  if (r > 0.5 || (r == 0.5 && fmod(fl, 2.0) != 0.0)) fl += 1.0;
  a = ldexp(fl, e - mant);
  if (a >= ldexp(2.0, emax)) return v < 0 ? -HUGE_VAL : HUGE_VAL;
  return v < 0 ? -a : a;
}

MGOPT__PRIVATE double mgopt__pw_round(mgopt_dtype dt, double v) {
  if (!isfinite(v)) return v;
  switch (dt) {
    case MGOPT_DT_FP16: return mgopt__pw_round_format(v, 10, -14, 15);
    case MGOPT_DT_BF16: return mgopt__pw_round_format(v, 7, -126, 127);
    case MGOPT_DT_FP32: return (double)(float)v; /* one IEEE conversion, to nearest */
    default: return v;
  }
}

MGOPT__PRIVATE int mgopt__pw_store(mgopt_tensor *t, int64_t i, double v) {
  double r = mgopt__pw_round((mgopt_dtype)t->dtype, v);
  /* r is representable in t's dtype (and in fp32 for fp16/bf16): storing it does not round again */
  mgopt_tensor_set_f64(t, i, r);
  return isfinite(r);
}

MGOPT__PRIVATE int mgopt__pw_is_float_weight(mgopt_dtype dt) {
  return dt == MGOPT_DT_FP16 || dt == MGOPT_DT_BF16 || dt == MGOPT_DT_FP32 || dt == MGOPT_DT_FP64;
}

MGOPT__PRIVATE int64_t mgopt__pw_out_channels(const mgopt_tensor *w, int32_t axis, int64_t groups) {
  int64_t c;
  if (!w || w->rank < 2 || (axis != 0 && axis != 1) || groups < 1) return -1;
  if (axis == 0) return w->shape[0];
  if (w->shape[0] % groups != 0 || !mgopt__mul_i64(w->shape[1], groups, &c)) return -1;
  return c;
}

/* out = w scaled per output channel (the layout of mgopt__pw_scale_channels);
   out may be w's own bytes. check: only tell whether every result is finite,
   storing nothing. 0 when one is not. */
static int mgopt__pw_scale_run(mgopt_tensor *out, const mgopt_tensor *w, int32_t axis, int64_t groups,
                               const double *scale, int check) {
  int64_t inner = 1, d0 = w->shape[0], d1 = w->shape[1], rows_per_group, i, j, k, f = 0;
  int32_t a;
  for (a = 2; a < w->rank; a++) inner *= w->shape[a]; /* numel fits: the product of all dims does */
  rows_per_group = axis == 1 ? d0 / groups : 1;
  for (i = 0; i < d0; i++)
    for (j = 0; j < d1; j++, f += inner) {
      /* axis 0: channel i. axis 1 (grouped, [Cin, Cout/g, ...]): row i lies in
         group i / (Cin/g), whose output channels start at that group times Cout/g */
      double s = scale[axis == 0 ? i : (i / rows_per_group) * d1 + j];
      if (w->dtype == MGOPT_DT_FP32) {
        /* the common case without the per-element dtype switch: the double
           product rounded once by the conversion to float */
        const unsigned char *src = (const unsigned char *)w->data + (size_t)f * 4;
        unsigned char *dst = (unsigned char *)out->data + (size_t)f * 4;
        int bad = 0;
        for (k = 0; k < inner; k++) {
          float x, y;
          memcpy(&x, src + 4 * k, 4);
          y = (float)((double)x * s);
          bad |= !isfinite(y);
          if (!check) memcpy(dst + 4 * k, &y, 4);
        }
        if (bad) return 0;
        continue;
      }
      for (k = 0; k < inner; k++) {
        double v = mgopt_tensor_get_f64(w, f + k) * s;
        if (check ? !isfinite(mgopt__pw_round((mgopt_dtype)w->dtype, v)) : !mgopt__pw_store(out, f + k, v)) return 0;
      }
    }
  return 1;
}

MGOPT__PRIVATE mgopt_tensor *mgopt__pw_scale_channels(mgopt_program *p, mgopt_tensor *w, int32_t axis,
                                                       int64_t groups, const double *scale) {
  mgopt_tensor *r;
  if (mgopt__pw_out_channels(w, axis, groups) < 0 || !mgopt__pw_is_float_weight((mgopt_dtype)w->dtype)) return NULL;
  /* w's bytes are read in place (element reads copy, so a borrowed,
     unaligned view needs no aligned copy); r's are all written */
  if (!w->data && w->nbytes) return NULL;
  r = mgopt__tensor_new_data(p, (mgopt_dtype)w->dtype, w->rank, w->shape, 0);
  if (!r || !mgopt__pw_scale_run(r, w, axis, groups, scale, 0)) return NULL;
  return r;
}

MGOPT__PRIVATE mgopt_tensor *mgopt__pw_conv_scale(mgopt_program *p, const mgopt__pw_conv *c, const double *scale) {
  mgopt_tensor *w = c->w;
  /* a weight this conv alone reads, whose bytes no one else holds: scaled
     where it is once every result is known finite, so a failure leaves it
     whole (its first write copies nothing: it is not borrowed) */
  if (c->w_sole) {
    if (!mgopt__pw_scale_run(w, w, c->axis, c->groups, scale, 1) || !mgopt_tensor_data_mut(p, w)) return NULL;
    return mgopt__pw_scale_run(w, w, c->axis, c->groups, scale, 0) ? w : NULL;
  }
  return mgopt__pw_scale_channels(p, w, c->axis, c->groups, scale);
}

MGOPT__PRIVATE mgopt_tensor *mgopt__pw_vector(mgopt_program *p, mgopt_dtype dt, int64_t n, const double *v) {
  mgopt_tensor *t = mgopt_tensor_new(p, dt, 1, &n);
  int64_t i;
  if (!t) return NULL;
  for (i = 0; i < n; i++)
    if (!mgopt__pw_store(t, i, v[i])) return NULL;
  return t;
}

MGOPT__PRIVATE int mgopt__pw_read_channels(mgopt_program *p, mgopt_tensor *t, int64_t n, double *out) {
  int64_t i;
  if (!t || t->dtype == MGOPT_DT_STRING || mgopt_dtype_bits((mgopt_dtype)t->dtype) < 8 ||
      (t->numel != 1 && t->numel != n))
    return 0;
  if (!mgopt_tensor_data(p, t)) return 0;
  for (i = 0; i < n; i++) {
    out[i] = mgopt_tensor_get_f64(t, t->numel == 1 ? 0 : i);
    if (!isfinite(out[i])) return 0;
  }
  return 1;
}

/* ---------------------------------------------------------------- conv weights */

MGOPT__PRIVATE int mgopt__pw_conv_get(mgopt_program *p, const mgopt_op *op, mgopt__pw_conv *c) {
  mgopt_value *x, *w, *b;
  MGOPT__UNUSED(p);
  memset(c, 0, sizeof *c);
  if (!op || (op->kind != MGOPT_OP_conv && op->kind != MGOPT_OP_conv_transpose) || op->nouts != 1 ||
      mgopt__pu_fused_act(op))
    return 0;
  x = mgopt_op_operand(op, "x");
  w = mgopt_op_operand(op, "weight");
  b = mgopt_op_operand(op, "bias");
  if (!x || !w) return 0;
  if (!mgopt__pu_def_of(w, MGOPT_OP_const) || (b && !mgopt__pu_def_of(b, MGOPT_OP_const))) return 0;
  c->w = mgopt_value_const(w);
  c->w_sole = c->w && w->nuses == 1 && !mgopt__pu_is_block_output(w) && mgopt__tensor_held_only_by(c->w, w->def);
  c->b = b ? mgopt_value_const(b) : NULL;
  c->axis = op->kind == MGOPT_OP_conv_transpose ? 1 : 0;
  c->groups = mgopt_op_get_int(op, "groups", 1);
  if (!c->w || (b && !c->b) || c->w->rank < 3 || c->w->rank > MGOPT_MAX_RANK || c->w->numel < 1 ||
      !mgopt__pw_is_float_weight((mgopt_dtype)c->w->dtype))
    return 0;
  if (x->type.rank != c->w->rank || op->outs[0]->type.rank != c->w->rank) return 0;
  c->cout = mgopt__pw_out_channels(c->w, c->axis, c->groups);
  if (c->cout < 1 || (c->axis == 0 && c->w->shape[0] % c->groups != 0)) return 0;
  if (c->b && (c->b->rank != 1 || c->b->numel != c->cout)) return 0;
  return 1;
}

MGOPT__PRIVATE double *mgopt__pw_conv_bias(mgopt_program *p, const mgopt__pw_conv *c) {
  double *b = (double *)mgopt_program_alloc(p, sizeof(double) * (size_t)c->cout, 8);
  if (!b || (c->b && !mgopt__pw_read_channels(p, c->b, c->cout, b))) return NULL;
  return b; /* zeros when the conv has no bias */
}

MGOPT__PRIVATE int mgopt__pw_channel_const(mgopt_program *p, const mgopt_value *v, int32_t rank, int32_t axis,
                                           int64_t n, double *out) {
  mgopt_tensor *t = mgopt__pu_def_of(v, MGOPT_OP_const) ? mgopt_value_const(v) : NULL;
  int32_t i;
  if (!t || t->rank > rank || (t->numel != 1 && t->numel != n)) return 0;
  /* right-aligned against the output's rank: every dim 1 but the one over `axis` */
  for (i = 0; i < t->rank; i++) {
    int32_t at = rank - t->rank + i;
    if (t->shape[i] != 1 && (at != axis || t->shape[i] != n)) return 0;
  }
  return mgopt__pw_read_channels(p, t, n, out);
}

MGOPT__PRIVATE int mgopt__pw_conv_set(mgopt_rewriter *rw, mgopt_op *conv, mgopt_tensor *w, mgopt_tensor *b) {
  mgopt_program *p = mgopt_rw_program(rw);
  const char *base = mgopt__pu_value_name(conv->outs[0]);
  static const char *const slot[2] = {"weight", "bias"};
  mgopt_tensor *t[2];
  int32_t k;
  t[0] = w;
  t[1] = b;
  for (k = 0; k < 2; k++) {
    mgopt_value *old = mgopt_op_operand(conv, slot[k]), *nv;
    if (!t[k]) continue;
    nv = mgopt_rw_const(rw, conv, mgopt__pu_name2(p, base, k ? "_bias" : "_weight"), t[k]);
    if (!nv || mgopt_rw_set_operand(rw, conv, slot[k], nv) != MGOPT_OK) return 0;
    if (old) mgopt__pu_erase_if_dead(rw, old->def);
    /* the new const alone holds t[k] (a weight scaled in place moved to it
       from the old const, erased just now) */
    mgopt__tensor_set_holder(t[k], nv->def);
  }
  mgopt_rw_modified(rw, conv);
  return 1;
}
