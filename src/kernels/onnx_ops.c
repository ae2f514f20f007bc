/* src/kernels/onnx_ops.c — the table of kernels for ONNX ops without a MIL op, the helpers they share, and the elementwise and shape kernels.

   Numeric contract (each kernel of this file; onnx_nn.c states its own).
   Real dtypes (fp16, bf16, fp32, fp64) are read into double, computed in
   double and rounded once to the output dtype (nearest even); NaN and Inf
   propagate as in IEEE 754. Integer dtypes compute in int64 (uint64 as its
   bits) and wrap around to the output dtype on store. Shape-moving kernels
   copy elements and never round. */
#include "onnx_ops.h"
#include "../onnx/onnx_api.h" /* mgopt_onnx_dtype: Cast's `to`, EyeLike's `dtype` */

/* ---------------------------------------------------------------- helpers */

MGOPT__PRIVATE int mgopt__ox_fail(mgopt__ox *c, mgopt_status s, const char *fmt, ...) {
  va_list ap;
  c->status = s;
  if (!c->d) return MGOPT__OX_ERR;
  c->d->status = s;
  va_start(ap, fmt);
  vsnprintf(c->d->msg, sizeof c->d->msg, fmt, ap);
  va_end(ap);
  return MGOPT__OX_ERR;
}

MGOPT__PRIVATE int mgopt__ox_no(mgopt__ox *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->why, sizeof c->why, fmt, ap);
  va_end(ap);
  return MGOPT__OX_NO;
}

MGOPT__PRIVATE mgopt_tensor *mgopt__ox_in(mgopt__ox *c, int32_t i) { return i >= 0 && i < c->nin ? c->in[i] : NULL; }

MGOPT__PRIVATE mgopt_tensor *mgopt__ox_need(mgopt__ox *c, int32_t i) {
  mgopt_tensor *t = mgopt__ox_in(c, i);
  if (!t) mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "input %d is missing", (int)i);
  return t;
}

MGOPT__PRIVATE int mgopt__ox_wants(const mgopt__ox *c, int32_t i) {
  return i >= 0 && i < c->nout && !(c->op->outs[i]->flags & MGOPT_VALUE_ABSENT);
}

MGOPT__PRIVATE int mgopt__ox_out(mgopt__ox *c, int32_t i, mgopt_dtype dt, int32_t rank, const int64_t *shape) {
  int64_t n = mgopt__k_numel(rank, shape);
  if (i < 0 || i >= c->nout) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "output %d of %d", (int)i, (int)c->nout);
  if (n < 0) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "output %d has an invalid shape", (int)i);
  if (c->max_elements > 0 && n > c->max_elements)
    return mgopt__ox_fail(c, MGOPT_ERR_LIMIT, "output %d has %lld elements, above the limit %lld", (int)i,
                          (long long)n, (long long)c->max_elements);
  if (c->out[i]) mgopt_eval_tensor_free(c->p, c->out[i]);
  c->out[i] = mgopt_eval_tensor_new(c->p, dt, rank, shape);
  return c->out[i] ? MGOPT__OX_OK : mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
}

MGOPT__PRIVATE int mgopt__ox_axis(mgopt__ox *c, int64_t a, int32_t rank, int32_t *out) {
  if (a < -(int64_t)rank || a >= rank)
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "axis %lld is outside [%d, %d)", (long long)a, -(int)rank, (int)rank);
  *out = (int32_t)(a < 0 ? a + rank : a);
  return MGOPT__OX_OK;
}

MGOPT__PRIVATE int64_t mgopt__ox_int(const mgopt__ox *c, const char *name, int64_t dflt) {
  const mgopt_attr *a = mgopt_op_attr(c->op, name);
  return a && (a->kind == MGOPT_ATTR_INT || a->kind == MGOPT_ATTR_BOOL) ? a->u.i : dflt;
}

MGOPT__PRIVATE double mgopt__ox_float(const mgopt__ox *c, const char *name, double dflt) {
  const mgopt_attr *a = mgopt_op_attr(c->op, name);
  if (a && a->kind == MGOPT_ATTR_FLOAT) return a->u.f;
  if (a && a->kind == MGOPT_ATTR_INT) return (double)a->u.i;
  return dflt;
}

MGOPT__PRIVATE int mgopt__ox_str_is(const mgopt__ox *c, const char *name, const char *want, int dflt) {
  const mgopt_attr *a = mgopt_op_attr(c->op, name);
  if (!a) return dflt;
  return a->kind == MGOPT_ATTR_STRING && a->u.s.len == strlen(want) && memcmp(a->u.s.ptr, want, a->u.s.len) == 0;
}

MGOPT__PRIVATE int mgopt__ox_is_real(mgopt_dtype dt) {
  return dt == MGOPT_DT_FP16 || dt == MGOPT_DT_BF16 || dt == MGOPT_DT_FP32 || dt == MGOPT_DT_FP64;
}

MGOPT__PRIVATE double mgopt__ox_getf(const mgopt_tensor *t, int64_t i) { return mgopt_tensor_get_f64(t, i); }

MGOPT__PRIVATE int64_t mgopt__ox_geti(const mgopt_tensor *t, int64_t i) {
  if (t->dtype == MGOPT_DT_BOOL) return ((const uint8_t *)t->data)[i] != 0;
  return mgopt_tensor_get_i64(t, i);
}

MGOPT__PRIVATE void mgopt__ox_setf(mgopt_tensor *t, int64_t i, double v) {
  mgopt__k_store_f64_at((mgopt_dtype)t->dtype, t->data, i, v);
}

MGOPT__PRIVATE void mgopt__ox_seti(mgopt_tensor *t, int64_t i, int64_t v) {
  mgopt__k_store_i64_at((mgopt_dtype)t->dtype, t->data, i, v);
}

MGOPT__PRIVATE int mgopt__ox_scalar_int(mgopt__ox *c, int32_t i, int64_t *v) {
  mgopt_tensor *t = mgopt__ox_need(c, i);
  if (!t) return MGOPT__OX_ERR;
  if (t->numel != 1 || !(mgopt_dtype_is_int((mgopt_dtype)t->dtype)))
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "input %d is not one integer", (int)i);
  *v = mgopt__ox_geti(t, 0);
  return MGOPT__OX_OK;
}

/* ---------------------------------------------------------------- broadcasting */

/* The numpy broadcast of the shapes of the present inputs first..last. */
static int mgopt__oxo_bshape(mgopt__ox *c, int32_t first, int32_t last, int32_t *rank, int64_t *shape) {
  int32_t i, r2;
  int64_t tmp[MGOPT_MAX_RANK];
  *rank = 0;
  for (i = first; i <= last; i++) {
    const mgopt_tensor *t = mgopt__ox_in(c, i);
    if (!t) continue;
    if (!mgopt__k_bcast_shape(*rank, shape, t->rank, t->shape, &r2, tmp))
      return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "input %d does not broadcast with the inputs before it", (int)i);
    *rank = r2;
    memcpy(shape, tmp, sizeof(int64_t) * (size_t)r2);
  }
  return MGOPT__OX_OK;
}

/* The flat index in t of output index idx (rank orank) under broadcasting. */
static int64_t mgopt__oxo_src(const mgopt_tensor *t, int32_t orank, const int64_t *idx) {
  int64_t off = 0, stride = 1;
  int32_t d;
  for (d = t->rank - 1; d >= 0; d--) {
    if (t->shape[d] != 1) off += idx[d + orank - t->rank] * stride;
    stride *= t->shape[d];
  }
  return off;
}

/* Steps a row-major index over shape. */
static void mgopt__oxo_next(int32_t rank, const int64_t *shape, int64_t *idx) {
  int32_t d;
  for (d = rank - 1; d >= 0; d--) {
    if (++idx[d] < shape[d]) return;
    idx[d] = 0;
  }
}

/* The inputs first..last present all have the dtype of the first. */
static int mgopt__oxo_same_dtype(mgopt__ox *c, int32_t first, int32_t last, mgopt_dtype *dt) {
  int32_t i;
  int seen = 0;
  for (i = first; i <= last; i++) {
    const mgopt_tensor *t = mgopt__ox_in(c, i);
    if (!t) continue;
    if (!seen) *dt = (mgopt_dtype)t->dtype;
    else if (t->dtype != *dt)
      return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "input %d is %s, input %d %s", (int)i,
                            mgopt_dtype_name((mgopt_dtype)t->dtype), (int)first, mgopt_dtype_name(*dt));
    seen = 1;
  }
  return seen ? MGOPT__OX_OK : mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "no input");
}

/* 1 for the dtypes integer kernels compute: bool and the 8..64-bit integers. */
static int mgopt__oxo_is_intlike(mgopt_dtype dt) {
  return dt == MGOPT_DT_BOOL || (mgopt_dtype_is_int(dt) && mgopt_dtype_bits(dt) >= 8);
}

/* ---------------------------------------------------------------- n-ary and binary elementwise */

/* Sum, Mean, Max, Min of any number of inputs, broadcast. Reals: double,
   rounded once; Max/Min propagate NaN. Integers: int64 wrapping to the
   dtype (uint64 compared unsigned); Mean of integers is declined. */
static int mgopt__oxo_nary(mgopt__ox *c) {
  int mode = strcmp(c->name, "Sum") == 0 ? 0 : strcmp(c->name, "Mean") == 0 ? 1 : strcmp(c->name, "Max") == 0 ? 2 : 3;
  int32_t rank, i, n = 0;
  int64_t shape[MGOPT_MAX_RANK], idx[MGOPT_MAX_RANK], e;
  mgopt_dtype dt = MGOPT_DT_FP32;
  mgopt_tensor *y;
  int st, real;
  if ((st = mgopt__oxo_same_dtype(c, 0, c->nin - 1, &dt)) != MGOPT__OX_OK) return st;
  real = mgopt__ox_is_real(dt);
  if (!real && (!mgopt__oxo_is_intlike(dt) || mode == 1 || dt == MGOPT_DT_BOOL))
    return mgopt__ox_no(c, "%s of %s", c->name, mgopt_dtype_name(dt));
  if ((st = mgopt__oxo_bshape(c, 0, c->nin - 1, &rank, shape)) != MGOPT__OX_OK) return st;
  if ((st = mgopt__ox_out(c, 0, dt, rank, shape)) != MGOPT__OX_OK) return st;
  y = c->out[0];
  for (i = 0; i < c->nin; i++) n += c->in[i] != NULL;
  memset(idx, 0, sizeof idx);
  for (e = 0; e < y->numel; e++, mgopt__oxo_next(rank, shape, idx)) {
    double acc = 0.0;
    int64_t iacc = 0;
    int first = 1;
    for (i = 0; i < c->nin; i++) {
      const mgopt_tensor *t = c->in[i];
      int64_t at;
      if (!t) continue;
      at = mgopt__oxo_src(t, rank, idx);
      if (real) {
        double v = mgopt__ox_getf(t, at);
        if (first || mode < 2) acc = first ? v : acc + v;
        else if (v != v || acc != acc) acc = v != v ? v : acc;
        else if (mode == 2 ? v > acc : v < acc) acc = v;
      } else {
        int64_t v = mgopt__ox_geti(t, at);
        if (first) iacc = v;
        else if (mode == 0) iacc = (int64_t)((uint64_t)iacc + (uint64_t)v);
        else if (dt == MGOPT_DT_UINT64 ? (mode == 2 ? (uint64_t)v > (uint64_t)iacc : (uint64_t)v < (uint64_t)iacc)
                                       : (mode == 2 ? v > iacc : v < iacc))
          iacc = v;
      }
      first = 0;
    }
    if (real) mgopt__ox_setf(y, e, mode == 1 ? acc / n : acc);
    else mgopt__ox_seti(y, e, iacc);
  }
  return MGOPT__OX_OK;
}

/* Mod, BitShift and integer Div, broadcast. Mod: fmod=1 is C's fmod /
   truncated remainder (the sign of the dividend); fmod=0 (integers only)
   takes the sign of the divisor. Div of integers truncates toward zero.
   A zero integer divisor is an error. BitShift: unsigned, a shift of the
   type's width or more gives 0. */
static int mgopt__oxo_binary(mgopt__ox *c) {
  int mode = strcmp(c->name, "Mod") == 0 ? 0 : strcmp(c->name, "BitShift") == 0 ? 1 : 2;
  int32_t rank;
  int64_t shape[MGOPT_MAX_RANK], idx[MGOPT_MAX_RANK], e;
  mgopt_dtype dt = MGOPT_DT_FP32;
  mgopt_tensor *a = mgopt__ox_need(c, 0), *b = a ? mgopt__ox_need(c, 1) : NULL, *y;
  int st, real, fmodv = (int)mgopt__ox_int(c, "fmod", 0), left = 0, bits;
  if (!b) return MGOPT__OX_ERR;
  if ((st = mgopt__oxo_same_dtype(c, 0, 1, &dt)) != MGOPT__OX_OK) return st;
  real = mgopt__ox_is_real(dt);
  bits = mgopt_dtype_bits(dt);
  if (mode == 1) {
    if (dt != MGOPT_DT_UINT8 && dt != MGOPT_DT_UINT16 && dt != MGOPT_DT_UINT32 && dt != MGOPT_DT_UINT64)
      return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "BitShift of %s", mgopt_dtype_name(dt));
    if (mgopt__ox_str_is(c, "direction", "LEFT", 0)) left = 1;
    else if (!mgopt__ox_str_is(c, "direction", "RIGHT", 0))
      return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "direction is not LEFT or RIGHT");
  } else if (real ? (mode == 0 && !fmodv) : !mgopt__oxo_is_intlike(dt) || dt == MGOPT_DT_BOOL) {
    return mgopt__ox_no(c, "%s of %s%s", c->name, mgopt_dtype_name(dt), real ? " with fmod=0" : "");
  } else if (mode == 2 && real) {
    return mgopt__ox_no(c, "the mapping divides reals");
  }
  if ((st = mgopt__oxo_bshape(c, 0, 1, &rank, shape)) != MGOPT__OX_OK) return st;
  if ((st = mgopt__ox_out(c, 0, dt, rank, shape)) != MGOPT__OX_OK) return st;
  y = c->out[0];
  memset(idx, 0, sizeof idx);
  for (e = 0; e < y->numel; e++, mgopt__oxo_next(rank, shape, idx)) {
    int64_t ia = mgopt__oxo_src(a, rank, idx), ib = mgopt__oxo_src(b, rank, idx), x, z, r;
    if (real) {
      mgopt__ox_setf(y, e, fmod(mgopt__ox_getf(a, ia), mgopt__ox_getf(b, ib)));
      continue;
    }
    x = mgopt__ox_geti(a, ia);
    z = mgopt__ox_geti(b, ib);
    if (mode == 1) {
      uint64_t ux = (uint64_t)x, uz = (uint64_t)z;
      mgopt__ox_seti(y, e, uz >= (uint64_t)bits ? 0 : (int64_t)(left ? ux << uz : ux >> uz));
      continue;
    }
    if (z == 0) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "integer %s by zero", mode == 0 ? "modulo" : "division");
    if (dt == MGOPT_DT_UINT64) {
      uint64_t ux = (uint64_t)x, uz = (uint64_t)z;
      mgopt__ox_seti(y, e, (int64_t)(mode == 0 ? ux % uz : ux / uz));
      continue;
    }
    if (z == -1) r = mode == 0 ? 0 : (int64_t)(0 - (uint64_t)x); /* no INT64_MIN / -1 trap */
    else r = mode == 0 ? x % z : x / z;
    if (mode == 0 && !fmodv && r != 0 && (r < 0) != (z < 0)) r += z;
    mgopt__ox_seti(y, e, r);
  }
  return MGOPT__OX_OK;
}

/* ---------------------------------------------------------------- unary */

/* The unary kernels of reals: Selu, Celu, Shrink, HardSwish, Asinh, Acosh,
   Round (half to even); Neg and Sign of every numeric dtype (integers wrap);
   IsNaN and IsInf give bool. */
static double mgopt__oxo_round_even(double x) {
  double r = floor(x), d = x - r;
  if (d > 0.5 || (d == 0.5 && fmod(r, 2.0) != 0.0)) r += 1.0;
  return x != x || x - x != 0.0 ? x : r;
}

static int mgopt__oxo_unary(mgopt__ox *c) {
  const char *nm = c->name;
  mgopt_tensor *x = mgopt__ox_need(c, 0), *y;
  int64_t i;
  int st, test = strcmp(nm, "IsNaN") == 0 || strcmp(nm, "IsInf") == 0;
  int any = strcmp(nm, "Neg") == 0 || strcmp(nm, "Sign") == 0;
  double alpha, gamma, lambd, bias;
  if (!x) return MGOPT__OX_ERR;
  if (!mgopt__ox_is_real((mgopt_dtype)x->dtype) && !(any && mgopt__oxo_is_intlike((mgopt_dtype)x->dtype) &&
                                                     x->dtype != MGOPT_DT_BOOL))
    return mgopt__ox_no(c, "%s of %s", nm, mgopt_dtype_name((mgopt_dtype)x->dtype));
  if ((st = mgopt__ox_out(c, 0, test ? MGOPT_DT_BOOL : (mgopt_dtype)x->dtype, x->rank, x->shape)) != MGOPT__OX_OK)
    return st;
  y = c->out[0];
  if (!mgopt__ox_is_real((mgopt_dtype)x->dtype)) {
    for (i = 0; i < x->numel; i++) {
      int64_t v = mgopt__ox_geti(x, i);
      if (nm[0] == 'N') mgopt__ox_seti(y, i, (int64_t)(0 - (uint64_t)v));
      else mgopt__ox_seti(y, i, v > 0 ? 1 : v < 0 ? -1 : 0);
    }
    return MGOPT__OX_OK;
  }
  alpha = mgopt__ox_float(c, "alpha", strcmp(nm, "Selu") == 0 ? 1.67326319217681884765625 : 1.0);
  gamma = mgopt__ox_float(c, "gamma", 1.05070102214813232421875);
  lambd = mgopt__ox_float(c, "lambd", 0.5);
  bias = mgopt__ox_float(c, "bias", 0.0);
  for (i = 0; i < x->numel; i++) {
    double v = mgopt__ox_getf(x, i), r;
    if (strcmp(nm, "IsNaN") == 0) r = v != v;
    else if (strcmp(nm, "IsInf") == 0)
      r = (v == HUGE_VAL && mgopt__ox_int(c, "detect_positive", 1)) || (v == -HUGE_VAL && mgopt__ox_int(c, "detect_negative", 1));
    else if (strcmp(nm, "Selu") == 0) r = v > 0 ? gamma * v : gamma * (alpha * exp(v) - alpha);
    else if (strcmp(nm, "Celu") == 0) r = (v > 0 ? v : 0.0) + (v < 0 ? alpha * (exp(v / alpha) - 1.0) : 0.0);
    else if (strcmp(nm, "Shrink") == 0) r = v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;
    else if (strcmp(nm, "HardSwish") == 0) {
      double h = v / 6.0 + 0.5;
      r = v * (h < 0 ? 0.0 : h > 1 ? 1.0 : h);
    } else if (strcmp(nm, "Asinh") == 0) r = asinh(v);
    else if (strcmp(nm, "Acosh") == 0) r = acosh(v);
    else if (strcmp(nm, "Round") == 0) r = mgopt__oxo_round_even(v);
    else if (strcmp(nm, "Neg") == 0) r = -v;
    else r = v > 0 ? 1.0 : v < 0 ? -1.0 : v; /* Sign: 0 and NaN stay */
    if (test) mgopt__ox_seti(y, i, r != 0.0);
    else mgopt__ox_setf(y, i, r);
  }
  return MGOPT__OX_OK;
}

/* ---------------------------------------------------------------- casts */

static int mgopt__oxo_is_4bit(mgopt_dtype dt) { return dt == MGOPT_DT_INT4X || dt == MGOPT_DT_UINT4X; }

/* v (a real, not NaN) as a 4-bit integer of dtype `to`, ONNX's rule for
   4-bit targets: clipped to the range, then rounded half to even. */
static int64_t mgopt__oxo_to_4bit(double v, mgopt_dtype to) {
  double lo = to == MGOPT_DT_INT4X ? -8.0 : 0.0, hi = to == MGOPT_DT_INT4X ? 7.0 : 15.0;
  return (int64_t)mgopt__oxo_round_even(v < lo ? lo : v > hi ? hi : v);
}

/* CastLike (to input 1's dtype) and Cast (to attribute `to`) between
   numeric dtypes: reals round once to the target (nearest even; fp32 and
   fp64 to bf16 are declined, see below); a real
   to an integer truncates toward zero, saturating at int64's range, then
   wraps to the target; integers wrap; to bool is v != 0 (NaN is true).
   4-bit integers (int4 / uint4, opset 21): from them every value is exact;
   to them a value saturates to [-8, 7] / [0, 15], a real rounded half to
   even after the clip (ONNX's reference; ONNX Runtime clamps too); NaN to
   4 bits is declined (no rule). */
static int mgopt__oxo_cast(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *y, *like = NULL;
  mgopt_dtype to, xdt;
  int64_t i;
  int st, to4;
  if (!x) return MGOPT__OX_ERR;
  if (strcmp(c->name, "CastLike") == 0) {
    if (!(like = mgopt__ox_need(c, 1))) return MGOPT__OX_ERR;
    to = (mgopt_dtype)like->dtype;
  } else {
    to = mgopt_onnx_dtype((int32_t)mgopt__ox_int(c, "to", 0));
  }
  xdt = (mgopt_dtype)x->dtype;
  to4 = mgopt__oxo_is_4bit(to);
  if (!(mgopt__ox_is_real(to) || mgopt__oxo_is_intlike(to) || to4) ||
      !(mgopt__ox_is_real(xdt) || mgopt__oxo_is_intlike(xdt) || mgopt__oxo_is_4bit(xdt)))
    return mgopt__ox_no(c, "a cast from %s to %s", mgopt_dtype_name(xdt), mgopt_dtype_name(to));
  /* ONNX's reference data truncated float to bfloat16 before it rounded: no one answer */
  if (to == MGOPT_DT_BF16 && (xdt == MGOPT_DT_FP32 || xdt == MGOPT_DT_FP64))
    return mgopt__ox_no(c, "a cast from %s to bf16 (truncated or rounded, by ONNX version)", mgopt_dtype_name(xdt));
  for (i = 0; to4 && mgopt__ox_is_real(xdt) && i < x->numel; i++)
    if (mgopt__ox_getf(x, i) != mgopt__ox_getf(x, i)) return mgopt__ox_no(c, "NaN cast to %s", mgopt_dtype_name(to));
  if ((st = mgopt__ox_out(c, 0, to, x->rank, x->shape)) != MGOPT__OX_OK) return st;
  y = c->out[0];
  for (i = 0; i < x->numel; i++) {
    if (to4) {
      mgopt_tensor_set_i64(y, i, mgopt__oxo_to_4bit(mgopt__ox_is_real(xdt) ? mgopt__ox_getf(x, i) : (double)mgopt__ox_geti(x, i), to));
    } else if (mgopt__ox_is_real(xdt)) {
      double v = mgopt__ox_getf(x, i);
      if (mgopt__ox_is_real(to)) mgopt__ox_setf(y, i, v);
      else if (to == MGOPT_DT_BOOL) mgopt__ox_seti(y, i, v != 0.0);
      else mgopt__ox_seti(y, i, mgopt_tensor_get_i64(x, i));
    } else if (mgopt__ox_is_real(to)) {
      mgopt__ox_setf(y, i, mgopt__ox_getf(x, i));
    } else {
      mgopt__ox_seti(y, i, mgopt__ox_geti(x, i));
    }
  }
  return MGOPT__OX_OK;
}

/* ---------------------------------------------------------------- shapes and data movement */

/* Size: the element count, int64. Shape: the dims start..end (opset 15's
   attributes: negative counts from the end, clamped to [0, rank]). */
static int mgopt__oxo_shape(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0);
  int64_t start, end, n, i;
  int st;
  if (!x) return MGOPT__OX_ERR;
  if (strcmp(c->name, "Size") == 0) {
    if ((st = mgopt__ox_out(c, 0, MGOPT_DT_INT64, 0, NULL)) != MGOPT__OX_OK) return st;
    mgopt__ox_seti(c->out[0], 0, x->numel);
    return MGOPT__OX_OK;
  }
  start = mgopt__ox_int(c, "start", 0);
  end = mgopt__ox_int(c, "end", x->rank);
  if (start < 0) start += x->rank;
  if (end < 0) end += x->rank;
  start = start < 0 ? 0 : start > x->rank ? x->rank : start;
  end = end < 0 ? 0 : end > x->rank ? x->rank : end;
  n = end > start ? end - start : 0;
  if ((st = mgopt__ox_out(c, 0, MGOPT_DT_INT64, 1, &n)) != MGOPT__OX_OK) return st;
  for (i = 0; i < n; i++) mgopt__ox_seti(c->out[0], i, x->shape[start + i]);
  return MGOPT__OX_OK;
}

/* Bytes per element of a dtype these kernels move (not strings or sub-byte types). */
static int mgopt__oxo_movable(mgopt__ox *c, const mgopt_tensor *t, size_t *esz) {
  *esz = mgopt__k_esize((mgopt_dtype)t->dtype);
  if (!*esz || t->dtype == MGOPT_DT_STRING)
    return mgopt__ox_no(c, "%s of %s", c->name, mgopt_dtype_name((mgopt_dtype)t->dtype));
  return MGOPT__OX_OK;
}

/* Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the
   last two dims; the rest is zero. */
static int mgopt__oxo_trilu(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0);
  int64_t k = 0, rows, cols, m, i, j, nmat;
  int upper = (int)mgopt__ox_int(c, "upper", 1), st;
  size_t esz;
  if (!x) return MGOPT__OX_ERR;
  if (mgopt__ox_in(c, 1) && (st = mgopt__ox_scalar_int(c, 1, &k)) != MGOPT__OX_OK) return st;
  if (x->rank < 2) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "Trilu of rank %d", (int)x->rank);
  if ((st = mgopt__oxo_movable(c, x, &esz)) != MGOPT__OX_OK) return st;
  if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, x->rank, x->shape)) != MGOPT__OX_OK) return st;
  rows = x->shape[x->rank - 2];
  cols = x->shape[x->rank - 1];
  nmat = rows * cols != 0 ? x->numel / (rows * cols) : 0;
  for (m = 0; m < nmat; m++)
    for (i = 0; i < rows; i++)
      for (j = 0; j < cols; j++)
        if (upper ? j - i >= k : j - i <= k) {
          size_t at = (size_t)((m * rows + i) * cols + j) * esz;
          memcpy((uint8_t *)c->out[0]->data + at, (const uint8_t *)x->data + at, esz);
        }
  return MGOPT__OX_OK;
}

/* EyeLike: ones on the diagonal j - i == k of a 2-D shape, of attribute
   `dtype` (the input's when absent). */
static int mgopt__oxo_eye_like(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0);
  mgopt_dtype dt;
  int64_t k = mgopt__ox_int(c, "k", 0), i;
  int st;
  if (!x) return MGOPT__OX_ERR;
  dt = mgopt_op_attr(c->op, "dtype") ? mgopt_onnx_dtype((int32_t)mgopt__ox_int(c, "dtype", 0)) : (mgopt_dtype)x->dtype;
  if (x->rank != 2) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "EyeLike of rank %d", (int)x->rank);
  if (!mgopt__ox_is_real(dt) && !mgopt__oxo_is_intlike(dt)) return mgopt__ox_no(c, "EyeLike of %s", mgopt_dtype_name(dt));
  if ((st = mgopt__ox_out(c, 0, dt, 2, x->shape)) != MGOPT__OX_OK) return st;
  for (i = 0; i < x->shape[0]; i++)
    if (i + k >= 0 && i + k < x->shape[1]) {
      if (mgopt__ox_is_real(dt)) mgopt__ox_setf(c->out[0], i * x->shape[1] + i + k, 1.0);
      else mgopt__ox_seti(c->out[0], i * x->shape[1] + i + k, 1);
    }
  return MGOPT__OX_OK;
}

/* Compress: the slices along `axis` (the flattened input when absent) whose
   condition element is nonzero; the condition may be shorter than the axis. */
static int mgopt__oxo_compress(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *cond = x ? mgopt__ox_need(c, 1) : NULL;
  int64_t shape[MGOPT_MAX_RANK], outer = 1, inner = 1, len, kept = 0, o, i, w = 0;
  int32_t a = 0, d, rank;
  int st, has_axis = mgopt_op_attr(c->op, "axis") != NULL;
  size_t esz;
  if (!cond) return MGOPT__OX_ERR;
  if ((st = mgopt__oxo_movable(c, x, &esz)) != MGOPT__OX_OK) return st;
  if (cond->rank != 1) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the condition is not 1-D");
  if (has_axis && (st = mgopt__ox_axis(c, mgopt__ox_int(c, "axis", 0), x->rank, &a)) != MGOPT__OX_OK) return st;
  if (has_axis) {
    rank = x->rank;
    memcpy(shape, x->shape, sizeof(int64_t) * (size_t)rank);
    for (d = 0; d < a; d++) outer *= x->shape[d];
    for (d = a + 1; d < rank; d++) inner *= x->shape[d];
    len = x->shape[a];
  } else {
    rank = 1;
    len = x->numel;
  }
  if (cond->numel > len) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the condition is longer than the axis");
  for (i = 0; i < cond->numel; i++) kept += mgopt__ox_getf(cond, i) != 0.0;
  shape[has_axis ? a : 0] = kept;
  if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, rank, shape)) != MGOPT__OX_OK) return st;
  for (o = 0; o < outer; o++)
    for (i = 0; i < cond->numel; i++)
      if (mgopt__ox_getf(cond, i) != 0.0) {
        memcpy((uint8_t *)c->out[0]->data + (size_t)(w * inner) * esz,
               (const uint8_t *)x->data + (size_t)((o * len + i) * inner) * esz, (size_t)inner * esz);
        w++;
      }
  return MGOPT__OX_OK;
}

/* Expand: the input broadcast with the shape in input 1 (both ways). */
static int mgopt__oxo_expand(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *s = x ? mgopt__ox_need(c, 1) : NULL;
  int64_t want[MGOPT_MAX_RANK], shape[MGOPT_MAX_RANK], i;
  int32_t rank;
  size_t esz;
  int st;
  if (!s) return MGOPT__OX_ERR;
  if ((st = mgopt__oxo_movable(c, x, &esz)) != MGOPT__OX_OK) return st;
  if (s->rank != 1 || s->numel > MGOPT_MAX_RANK || !mgopt_dtype_is_int((mgopt_dtype)s->dtype))
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the shape is not a 1-D integer tensor of at most %d dims", MGOPT_MAX_RANK);
  for (i = 0; i < s->numel; i++) {
    want[i] = mgopt__ox_geti(s, i);
    if (want[i] < 0) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "negative dim %lld", (long long)want[i]);
  }
  if (!mgopt__k_bcast_shape(x->rank, x->shape, (int32_t)s->numel, want, &rank, shape))
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the input does not broadcast to the shape");
  if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, rank, shape)) != MGOPT__OX_OK) return st;
  if (c->out[0]->numel) mgopt__k_bcast(c->out[0]->data, x->data, esz, x->rank, x->shape, rank, shape);
  return MGOPT__OX_OK;
}

/* Dropout where it is deterministic: inference (training_mode absent or
   false) or a ratio of 0. The output is the input; the mask is all true.
   A random dropout is declined. */
static int mgopt__oxo_dropout(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *r = mgopt__ox_in(c, 1), *tm = mgopt__ox_in(c, 2);
  double ratio = r && r->numel == 1 ? mgopt__ox_getf(r, 0) : mgopt__ox_float(c, "ratio", 0.5);
  int training = c->opset < 7 ? !mgopt__ox_int(c, "is_test", 0) : tm && tm->numel == 1 && mgopt__ox_getf(tm, 0) != 0.0;
  size_t esz;
  int st;
  if (!x) return MGOPT__OX_ERR;
  if (training && ratio != 0.0) return mgopt__ox_no(c, "a random dropout (training with ratio %g)", ratio);
  if ((st = mgopt__oxo_movable(c, x, &esz)) != MGOPT__OX_OK) return st;
  if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, x->rank, x->shape)) != MGOPT__OX_OK) return st;
  if (x->nbytes) memcpy(c->out[0]->data, x->data, x->nbytes);
  if (mgopt__ox_wants(c, 1)) {
    mgopt_dtype mdt = (mgopt_dtype)c->op->outs[1]->type.dtype;
    int64_t i;
    if (mdt == MGOPT_DT_UNKNOWN) mdt = c->opset >= 10 ? MGOPT_DT_BOOL : (mgopt_dtype)x->dtype;
    if (!mgopt__ox_is_real(mdt) && !mgopt__oxo_is_intlike(mdt)) return mgopt__ox_no(c, "a mask of %s", mgopt_dtype_name(mdt));
    if ((st = mgopt__ox_out(c, 1, mdt, x->rank, x->shape)) != MGOPT__OX_OK) return st;
    for (i = 0; i < x->numel; i++) {
      if (mgopt__ox_is_real(mdt)) mgopt__ox_setf(c->out[1], i, 1.0);
      else mgopt__ox_seti(c->out[1], i, 1);
    }
  }
  return MGOPT__OX_OK;
}


/* ---------------------------------------------------------------- reductions */

/* ReduceSum over the axes of input 1 (attribute `axes` before opset 13);
   no axes means every axis, or the input unchanged with
   noop_with_empty_axes=1; keepdims (default 1). Reals sum in double in
   increasing index order, rounded once; integers in int64, wrapping. An
   empty reduction is 0. */
static int mgopt__oxo_reduce_sum(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *ax = mgopt__ox_in(c, 1), *y;
  int64_t shape[MGOPT_MAX_RANK], idx[MGOPT_MAX_RANK], e, naxes = 0;
  const mgopt_attr *aa = mgopt_op_attr(c->op, "axes");
  uint8_t red[MGOPT_MAX_RANK];
  int32_t d, rank = 0, a = 0;
  int st, real, keep = (int)mgopt__ox_int(c, "keepdims", 1);
  if (!x) return MGOPT__OX_ERR;
  real = mgopt__ox_is_real((mgopt_dtype)x->dtype);
  if (!real && (!mgopt__oxo_is_intlike((mgopt_dtype)x->dtype) || x->dtype == MGOPT_DT_BOOL))
    return mgopt__ox_no(c, "ReduceSum of %s", mgopt_dtype_name((mgopt_dtype)x->dtype));
  memset(red, 0, sizeof red);
  if (ax) {
    if (ax->rank > 1 || !mgopt_dtype_is_int((mgopt_dtype)ax->dtype))
      return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the axes are not a 1-D integer tensor");
    naxes = ax->numel;
  } else if (aa && aa->kind == MGOPT_ATTR_INTS) {
    naxes = aa->n;
  }
  for (e = 0; e < naxes; e++) {
    if ((st = mgopt__ox_axis(c, ax ? mgopt__ox_geti(ax, e) : aa->u.ints[e], x->rank, &a)) != MGOPT__OX_OK) return st;
    red[a] = 1;
  }
  if (naxes == 0 && mgopt__ox_int(c, "noop_with_empty_axes", 0)) {
    if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, x->rank, x->shape)) != MGOPT__OX_OK) return st;
    if (x->nbytes) memcpy(c->out[0]->data, x->data, x->nbytes);
    return MGOPT__OX_OK;
  }
  for (d = 0; d < x->rank; d++) {
    if (naxes == 0) red[d] = 1;
    if (!red[d]) shape[rank++] = x->shape[d];
    else if (keep) shape[rank++] = 1;
  }
  if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, rank, shape)) != MGOPT__OX_OK) return st;
  y = c->out[0];
  {
    /* sums in double / int64 scratch by output element, inputs in increasing order */
    size_t bytes = sizeof(double) * (size_t)(y->numel ? y->numel : 1);
    double *acc = (double *)mgopt__heap_realloc(&c->p->alloc, NULL, 0, bytes);
    int64_t *iacc = (int64_t *)(void *)acc;
    if (!acc) return mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
    memset(acc, 0, bytes);
    memset(idx, 0, sizeof idx);
    for (e = 0; e < x->numel; e++, mgopt__oxo_next(x->rank, x->shape, idx)) {
      int64_t o = 0;
      for (d = 0; d < x->rank; d++)
        if (!red[d]) o = o * x->shape[d] + idx[d];
      if (real) acc[o] += mgopt__ox_getf(x, e);
      else iacc[o] = (int64_t)((uint64_t)iacc[o] + (uint64_t)mgopt__ox_geti(x, e));
    }
    for (e = 0; e < y->numel; e++) {
      if (real) mgopt__ox_setf(y, e, acc[e]);
      else mgopt__ox_seti(y, e, iacc[e]);
    }
    mgopt__heap_free(&c->p->alloc, acc, bytes);
  }
  return MGOPT__OX_OK;
}

/* ---------------------------------------------------------------- Range

   Range(start, limit, delta) of fp32 / fp64 (integer Ranges map to range_1d),
   as ONNX's function body defines it: ceil(float(limit - start) /
   float(delta)) elements (the difference in the dtype, the quotient in
   fp32), the first start and each next one the previous plus delta, rounded
   to the dtype (what ONNX Runtime computes too; not start + i * delta). */
static int mgopt__oxo_range(mgopt__ox *c) {
  mgopt_tensor *s = mgopt__ox_need(c, 0), *l = s ? mgopt__ox_need(c, 1) : NULL, *d = l ? mgopt__ox_need(c, 2) : NULL;
  mgopt_dtype dt;
  double a, e, v;
  float q;
  int64_t n, i;
  int st, f32;
  if (!d) return MGOPT__OX_ERR;
  dt = (mgopt_dtype)s->dtype;
  if (s->numel != 1 || l->numel != 1 || d->numel != 1 || l->dtype != s->dtype || d->dtype != s->dtype)
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "start, limit and delta are not scalars of one dtype");
  if (dt != MGOPT_DT_FP32 && dt != MGOPT_DT_FP64) return mgopt__ox_no(c, "Range of %s", mgopt_dtype_name(dt));
  f32 = dt == MGOPT_DT_FP32;
  a = mgopt__ox_getf(s, 0);
  e = mgopt__ox_getf(d, 0);
  v = mgopt__ox_getf(l, 0) - a;
  q = ceilf((float)(f32 ? (double)(float)v : v) / (float)e);
  if (!(q < 9.2e18f)) return mgopt__ox_no(c, "the length is not a finite number");
  n = q > 0 ? (int64_t)q : 0;
  if ((st = mgopt__ox_out(c, 0, dt, 1, &n)) != MGOPT__OX_OK) return st;
  for (i = 0, v = a; i < n; i++) {
    mgopt__ox_setf(c->out[0], i, v);
    v += e;
    if (f32) v = (double)(float)v;
  }
  return MGOPT__OX_OK;
}

/* ---------------------------------------------------------------- the table */

static const mgopt__ox_row mgopt__ox_table[] = {
    {"Softmax", 1, 0, mgopt__ox_softmax},
    {"LogSoftmax", 1, 0, mgopt__ox_softmax},
    {"Hardmax", 1, 0, mgopt__ox_softmax},
    {"NegativeLogLikelihoodLoss", 12, 0, mgopt__ox_nll_loss},
    {"SoftmaxCrossEntropyLoss", 12, 0, mgopt__ox_sce_loss},
    {"LayerNormalization", 17, 0, mgopt__ox_layer_norm},
    {"ArgMax", 1, 0, mgopt__ox_arg_extreme},
    {"ArgMin", 1, 0, mgopt__ox_arg_extreme},
    {"GlobalMaxPool", 1, 0, mgopt__ox_global_max_pool},
    {"Cast", 1, 0, mgopt__oxo_cast},
    {"CastLike", 15, 0, mgopt__oxo_cast},
    {"Sum", 1, 0, mgopt__oxo_nary},
    {"Mean", 1, 0, mgopt__oxo_nary},
    {"Max", 1, 0, mgopt__oxo_nary},
    {"Min", 1, 0, mgopt__oxo_nary},
    {"Mod", 10, 0, mgopt__oxo_binary},
    {"BitShift", 11, 0, mgopt__oxo_binary},
    {"Div", 1, 0, mgopt__oxo_binary},
    {"Selu", 1, 0, mgopt__oxo_unary},
    {"Celu", 12, 0, mgopt__oxo_unary},
    {"Shrink", 9, 0, mgopt__oxo_unary},
    {"HardSwish", 14, 0, mgopt__oxo_unary},
    {"Asinh", 9, 0, mgopt__oxo_unary},
    {"Acosh", 9, 0, mgopt__oxo_unary},
    {"IsInf", 10, 0, mgopt__oxo_unary},
    {"IsNaN", 9, 0, mgopt__oxo_unary},
    {"Round", 11, 0, mgopt__oxo_unary},
    {"Neg", 1, 0, mgopt__oxo_unary},
    {"Sign", 9, 0, mgopt__oxo_unary},
    {"Size", 1, 0, mgopt__oxo_shape},
    {"Shape", 1, 0, mgopt__oxo_shape},
    {"Trilu", 14, 0, mgopt__oxo_trilu},
    {"EyeLike", 9, 0, mgopt__oxo_eye_like},
    {"Range", 11, 0, mgopt__oxo_range},
    {"Compress", 9, 0, mgopt__oxo_compress},
    {"Expand", 8, 0, mgopt__oxo_expand},
    {"Dropout", 1, 0, mgopt__oxo_dropout},
    {"ReduceSum", 1, 0, mgopt__oxo_reduce_sum},
    {"RNN", 1, 0, mgopt__ox_rnn},
    {"GRU", 1, 0, mgopt__ox_gru},
    {"LSTM", 1, 0, mgopt__ox_lstm},
    {"DynamicQuantizeLinear", 11, 0, mgopt__ox_quant},
    {"MatMulInteger", 10, 0, mgopt__ox_quant},
    {"ConvInteger", 10, 0, mgopt__ox_quant},
    {"QLinearMatMul", 10, 0, mgopt__ox_quant},
    {"QLinearConv", 10, 0, mgopt__ox_quant},
};

MGOPT__PRIVATE const mgopt__ox_row *mgopt__ox_rows(int32_t *n) {
  *n = (int32_t)MGOPT__ARRAY_COUNT(mgopt__ox_table);
  return mgopt__ox_table;
}
