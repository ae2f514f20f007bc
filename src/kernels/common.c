/* src/kernels/common.c — folding kernel machinery: dtype lanes, scratch, outputs, broadcasting, strided copies. */
#include "kernels.h"

/* ---------------------------------------------------------------- dtypes */

MGOPT__PRIVATE int mgopt__k_lane(mgopt_dtype dt) {
  switch (dt) {
    case MGOPT_DT_FP16: case MGOPT_DT_BF16: case MGOPT_DT_FP32: return MGOPT__LANE_F32;
    case MGOPT_DT_FP64: return MGOPT__LANE_F64;
    case MGOPT_DT_INT8: case MGOPT_DT_UINT8: case MGOPT_DT_INT16: case MGOPT_DT_UINT16:
    case MGOPT_DT_INT32: case MGOPT_DT_UINT32: case MGOPT_DT_INT64: case MGOPT_DT_UINT64:
      return MGOPT__LANE_I64;
    case MGOPT_DT_BOOL: return MGOPT__LANE_BOOL;
    default: return MGOPT__LANE_NONE;
  }
}

MGOPT__PRIVATE size_t mgopt__k_esize(mgopt_dtype dt) {
  int b = mgopt_dtype_bits(dt);
  if (dt == MGOPT_DT_STRING || b <= 0 || (b & 7)) return 0;
  return (size_t)(b / 8);
}

MGOPT__PRIVATE size_t mgopt__k_lane_size(int lane) {
  return lane == MGOPT__LANE_F32 ? 4 : lane == MGOPT__LANE_BOOL ? 1 : 8;
}

MGOPT__PRIVATE float mgopt__k_rnd(mgopt_dtype dt, float v) {
  if (dt == MGOPT_DT_FP16) return mgopt_f16_to_f32(mgopt_f32_to_f16(v));
  if (dt == MGOPT_DT_BF16) return mgopt_bf16_to_f32(mgopt_f32_to_bf16(v));
  return v;
}

MGOPT__PRIVATE void mgopt__k_round_f32(mgopt_dtype dt, float *x, int64_t n) {
  int64_t i;
  if (dt != MGOPT_DT_FP16 && dt != MGOPT_DT_BF16) return;
  for (i = 0; i < n; i++) x[i] = mgopt__k_rnd(dt, x[i]);
}

MGOPT__PRIVATE int mgopt__k_int_range(mgopt_dtype dt, int64_t *lo, int64_t *hi) {
  switch (dt) {
    case MGOPT_DT_BOOL: *lo = 0; *hi = 1; return 1;
    case MGOPT_DT_INT8: *lo = -128; *hi = 127; return 1;
    case MGOPT_DT_UINT8: *lo = 0; *hi = 255; return 1;
    case MGOPT_DT_INT16: *lo = -32768; *hi = 32767; return 1;
    case MGOPT_DT_UINT16: *lo = 0; *hi = 65535; return 1;
    case MGOPT_DT_INT32: *lo = INT32_MIN; *hi = INT32_MAX; return 1;
    case MGOPT_DT_UINT32: *lo = 0; *hi = (int64_t)UINT32_MAX; return 1;
    case MGOPT_DT_INT64: *lo = INT64_MIN; *hi = INT64_MAX; return 1;
    /* uint64 values above INT64_MAX never reach the I64 lane */
    case MGOPT_DT_UINT64: *lo = 0; *hi = INT64_MAX; return 1;
    case MGOPT_DT_INT4: *lo = -8; *hi = 7; return 1;
    case MGOPT_DT_UINT1: case MGOPT_DT_UINT2: case MGOPT_DT_UINT3: case MGOPT_DT_UINT4:
    case MGOPT_DT_UINT6:
      *lo = 0;
      *hi = ((int64_t)1 << mgopt_dtype_bits(dt)) - 1;
      return 1;
    default: return 0;
  }
}

MGOPT__PRIVATE uint64_t mgopt__k_bits(const uint8_t *d, int64_t i, int b) {
  uint64_t v = 0;
  int64_t bit = i * b;
  int got = 0;
  if (b == 8) return d[i];
  while (got < b) {
    int off = (int)(bit & 7), take = 8 - off;
    if (take > b - got) take = b - got;
    v |= (uint64_t)((d[bit >> 3] >> off) & ((1u << take) - 1u)) << got;
    got += take;
    bit += take;
  }
  return v;
}

static void mgopt__k_put_bits(uint8_t *d, int64_t i, int b, uint64_t v) {
  int k;
  for (k = 0; k < b; k++) {
    int64_t bit = i * b + k;
    if ((v >> k) & 1u) d[bit >> 3] |= (uint8_t)(1u << (bit & 7));
    else d[bit >> 3] &= (uint8_t)~(1u << (bit & 7));
  }
}

/* ---------------------------------------------------------------- operands and parameters */

MGOPT__PRIVATE mgopt_tensor *mgopt__k_value(mgopt__kctx *k, const mgopt_value *v) {
  if (!v) return NULL;
  return k->lookup ? k->lookup(k->env, v) : mgopt_value_const(v);
}

MGOPT__PRIVATE mgopt_tensor *mgopt__k_operand(mgopt__kctx *k, const char *slot) {
  return mgopt__k_value(k, mgopt_op_operand(k->op, slot));
}

MGOPT__PRIVATE int mgopt__k_has_param(const mgopt_op *op, const char *name) {
  const mgopt_attr_def *d;
  if (mgopt_op_attr(op, name) || mgopt_op_operand(op, name)) return 1;
  d = mgopt__attr_def(op->kind, name);
  return d && d->deflt;
}

MGOPT__PRIVATE int64_t mgopt__k_ints(mgopt__kctx *k, const char *name, const int64_t **v) {
  int64_t n;
  const mgopt_value *pv = k->lookup && !mgopt_op_attr(k->op, name) ? mgopt_op_operand(k->op, name) : NULL;
  if (pv) { /* evaluating: the operand's tensor, into scratch (the arena is not for per-run data) */
    mgopt_tensor *t = k->lookup(k->env, pv);
    int64_t i, *w;
    if (!t || t->rank > 1 || !(mgopt_dtype_is_int((mgopt_dtype)t->dtype) || t->dtype == MGOPT_DT_BOOL) ||
        t->numel > 2 * MGOPT_MAX_RANK)
      return -2;
    w = (int64_t *)mgopt__k_scratch(k, t->numel, sizeof(int64_t));
    if (!w) return -2;
    for (i = 0; i < t->numel; i++) w[i] = mgopt_tensor_get_i64(t, i);
    *v = w;
    return t->numel;
  }
  n = mgopt_op_get_ints(k->p, k->op, name, v);
  if (n < 0) return (mgopt_op_attr(k->op, name) || mgopt_op_operand(k->op, name)) ? -2 : -1;
  return n > 2 * MGOPT_MAX_RANK ? -2 : n;
}

MGOPT__PRIVATE int mgopt__k_axis(int64_t a, int64_t rank, int32_t *out) {
  if (a < -rank || a >= rank) return 0;
  *out = (int32_t)(a < 0 ? a + rank : a);
  return 1;
}

MGOPT__PRIVATE const void *mgopt__k_data(mgopt__kctx *k, mgopt_tensor *t) {
  return mgopt_tensor_data(k->p, t);
}

/* ---------------------------------------------------------------- memory and outputs */

MGOPT__PRIVATE void *mgopt__k_scratch(mgopt__kctx *k, int64_t n, size_t esz) {
  int64_t bytes;
  void *m;
  if (k->nscratch >= MGOPT__K_MAX_SCRATCH) return NULL;
  if (!mgopt__mul_i64(n < 1 ? 1 : n, (int64_t)esz, &bytes) || (uint64_t)bytes > (uint64_t)SIZE_MAX / 2)
    return NULL;
  m = mgopt__heap_realloc(&k->p->alloc, NULL, 0, (size_t)bytes);
  if (!m) return NULL;
  k->scratch[k->nscratch] = m;
  k->scratch_size[k->nscratch] = (size_t)bytes;
  k->nscratch++;
  return m;
}

MGOPT__PRIVATE int mgopt__k_fused_act(const mgopt_op *op) {
  size_t n = 0;
  const char *a = mgopt_op_get_string(op, "fused_activation", &n);
  if (!a || (n == 4 && memcmp(a, "none", 4) == 0)) return 0;
  if (n == 4 && memcmp(a, "relu", 4) == 0) return 1;
  if (n == 5 && memcmp(a, "relu6", 5) == 0) return 2;
  return -1;
}

MGOPT__PRIVATE void mgopt__k_apply_fused_act(mgopt__kctx *k, int act) {
  mgopt_tensor *t = k->out[0];
  int64_t i;
  if (act <= 0 || !t) return;
  for (i = 0; i < t->numel; i++) {
    double v = mgopt_tensor_get_f64(t, i);
    if (v < 0) mgopt_tensor_set_f64(t, i, 0.0);
    else if (act == 2 && v > 6) mgopt_tensor_set_f64(t, i, 6.0);
  }
}

MGOPT__PRIVATE int mgopt__k_no(mgopt__kctx *k, const char *fmt, ...) {
  va_list ap;
  if (k->why[0]) return MGOPT__K_NO;
  va_start(ap, fmt);
  vsnprintf(k->why, sizeof k->why, fmt, ap);
  va_end(ap);
  return MGOPT__K_NO;
}

MGOPT__PRIVATE int mgopt__k_out_check(mgopt__kctx *k, int32_t i, mgopt_dtype dt, int32_t rank,
                                      const int64_t *shape) {
  const mgopt_type *st;
  int64_t n = mgopt__k_numel(rank, shape), nbytes;
  int32_t d;
  if (i < 0 || i >= k->op->nouts || n < 0 || rank < 0 || rank > MGOPT_MAX_RANK)
    return mgopt__k_no(k, "output %d has an invalid shape", (int)i);
  if (k->max_elements > 0 && n > k->max_elements)
    return mgopt__k_no(k, "output %d has %lld elements, above the limit of %lld", (int)i, (long long)n,
                       (long long)k->max_elements);
  nbytes = mgopt_dtype_nbytes(dt, n);
  if (nbytes < 0) return mgopt__k_no(k, "output %d is too large", (int)i);
  if (!k->heap && k->budget >= 0 && nbytes > k->budget)
    return mgopt__k_no(k, "output %d has %lld bytes: above the fold's budget of %lld (what it frees and the allowance)",
                       (int)i, (long long)nbytes, (long long)k->budget);
  st = &k->op->outs[i]->type;
  if (st->kind != MGOPT_TYPE_TENSOR) return mgopt__k_no(k, "output %d is not declared a tensor", (int)i);
  if (st->dtype != MGOPT_DT_UNKNOWN && st->dtype != (uint8_t)dt)
    return mgopt__k_no(k, "output %d is %s, declared %s", (int)i, mgopt_dtype_name(dt),
                       mgopt_dtype_name((mgopt_dtype)st->dtype));
  if (st->rank >= 0) {
    if (st->rank != rank)
      return mgopt__k_no(k, "output %d has rank %d, declared %d", (int)i, (int)rank, (int)st->rank);
    for (d = 0; d < rank; d++)
      if (st->dims && mgopt_dim_is_static(st->dims[d]) && st->dims[d].v != shape[d])
        return mgopt__k_no(k, "output %d dim %d is %lld, declared %lld", (int)i, (int)d, (long long)shape[d],
                           (long long)st->dims[d].v);
  }
  return MGOPT__K_OK;
}

static int mgopt__k_out_alloc(mgopt__kctx *k, int32_t i, mgopt_dtype dt, int32_t rank,
                              const int64_t *shape, void **data, int zero) {
  mgopt_tensor *t;
  int r = mgopt__k_out_check(k, i, dt, rank, shape);
  if (r != MGOPT__K_OK) return r;
  t = k->heap ? mgopt__ev_tensor_alloc(k->p, dt, rank, shape, zero) : mgopt__tensor_new_data(k->p, dt, rank, shape, zero);
  if (!t) return MGOPT__K_OOM;
  k->out[i] = t;
  if (data) *data = t->data;
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__k_out_view(mgopt__kctx *k, int32_t i, mgopt_tensor *x, size_t offset, int32_t rank,
                                     const int64_t *shape) {
  mgopt_tensor *t;
  const uint8_t *src;
  int r = mgopt__k_out_check(k, i, (mgopt_dtype)x->dtype, rank, shape);
  if (r != MGOPT__K_OK) return r;
  if (!k->heap) {
    t = mgopt__tensor_view(k->p, x, offset, rank, shape);
    if (!t) return MGOPT__K_OOM;
    k->out[i] = t;
    return MGOPT__K_OK;
  }
  src = (const uint8_t *)mgopt__k_data(k, x);
  t = mgopt__ev_tensor_alloc(k->p, (mgopt_dtype)x->dtype, rank, shape, 0);
  if (!src || !t || offset > x->nbytes || t->nbytes > x->nbytes - offset) {
    k->out[i] = t; /* freed by the caller with the other outputs */
    return t && src ? mgopt__k_no(k, "output %d does not fit in its operand", (int)i) : MGOPT__K_OOM;
  }
  k->out[i] = t;
  if (t->nbytes) memcpy(t->data, src + offset, t->nbytes);
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__k_out(mgopt__kctx *k, int32_t i, mgopt_dtype dt, int32_t rank,
                                const int64_t *shape, void **data) {
  return mgopt__k_out_alloc(k, i, dt, rank, shape, data, 1);
}

MGOPT__PRIVATE int mgopt__k_out_full(mgopt__kctx *k, int32_t i, mgopt_dtype dt, int32_t rank,
                                     const int64_t *shape, void **data) {
  return mgopt__k_out_alloc(k, i, dt, rank, shape, data, 0);
}

/* ---------------------------------------------------------------- loading */

/* Typed widening loops: one per source layout, vectorizable. */
#define MGOPT__K_WIDEN(SRC_T, DST_T)                                                  \
  do {                                                                                \
    const SRC_T *MGOPT_RESTRICT s_ = (const SRC_T *)src;                              \
    DST_T *MGOPT_RESTRICT d_ = (DST_T *)dst;                                          \
    for (i = 0; i < n; i++) d_[i] = (DST_T)s_[i];                                     \
  } while (0)

static int mgopt__k_load_f32(mgopt_dtype dt, const void *src, int64_t n, float *dst) {
  int64_t i;
  switch (dt) {
    case MGOPT_DT_FP32: memcpy(dst, src, (size_t)n * 4); return 1;
    case MGOPT_DT_FP16: {
      const uint16_t *s = (const uint16_t *)src;
      for (i = 0; i < n; i++) dst[i] = mgopt_f16_to_f32(s[i]);
      return 1;
    }
    case MGOPT_DT_BF16: {
      const uint16_t *s = (const uint16_t *)src;
      for (i = 0; i < n; i++) dst[i] = mgopt_bf16_to_f32(s[i]);
      return 1;
    }
    case MGOPT_DT_FP64: MGOPT__K_WIDEN(double, float); return 1;
    case MGOPT_DT_BOOL: case MGOPT_DT_UINT8: MGOPT__K_WIDEN(uint8_t, float); return 1;
    case MGOPT_DT_INT8: MGOPT__K_WIDEN(int8_t, float); return 1;
    case MGOPT_DT_INT16: MGOPT__K_WIDEN(int16_t, float); return 1;
    case MGOPT_DT_UINT16: MGOPT__K_WIDEN(uint16_t, float); return 1;
    case MGOPT_DT_INT32: MGOPT__K_WIDEN(int32_t, float); return 1;
    case MGOPT_DT_UINT32: MGOPT__K_WIDEN(uint32_t, float); return 1;
    case MGOPT_DT_INT64: MGOPT__K_WIDEN(int64_t, float); return 1;
    case MGOPT_DT_UINT64: MGOPT__K_WIDEN(uint64_t, float); return 1;
    case MGOPT_DT_INT4: {
      const uint8_t *s = (const uint8_t *)src;
      for (i = 0; i < n; i++) {
        int v = (int)mgopt__k_bits(s, i, 4);
        dst[i] = (float)(v >= 8 ? v - 16 : v);
      }
      return 1;
    }
    case MGOPT_DT_UINT1: case MGOPT_DT_UINT2: case MGOPT_DT_UINT3: case MGOPT_DT_UINT4:
    case MGOPT_DT_UINT6: {
      const uint8_t *s = (const uint8_t *)src;
      int b = mgopt_dtype_bits(dt);
      for (i = 0; i < n; i++) dst[i] = (float)mgopt__k_bits(s, i, b);
      return 1;
    }
    default: return 0;
  }
}

static int mgopt__k_load_f64(mgopt_dtype dt, const void *src, int64_t n, double *dst) {
  int64_t i;
  switch (dt) {
    case MGOPT_DT_FP64: memcpy(dst, src, (size_t)n * 8); return 1;
    case MGOPT_DT_FP32: MGOPT__K_WIDEN(float, double); return 1;
    case MGOPT_DT_FP16: {
      const uint16_t *s = (const uint16_t *)src;
      for (i = 0; i < n; i++) dst[i] = mgopt_f16_to_f32(s[i]);
      return 1;
    }
    case MGOPT_DT_BF16: {
      const uint16_t *s = (const uint16_t *)src;
      for (i = 0; i < n; i++) dst[i] = mgopt_bf16_to_f32(s[i]);
      return 1;
    }
    case MGOPT_DT_BOOL: case MGOPT_DT_UINT8: MGOPT__K_WIDEN(uint8_t, double); return 1;
    case MGOPT_DT_INT8: MGOPT__K_WIDEN(int8_t, double); return 1;
    case MGOPT_DT_INT16: MGOPT__K_WIDEN(int16_t, double); return 1;
    case MGOPT_DT_UINT16: MGOPT__K_WIDEN(uint16_t, double); return 1;
    case MGOPT_DT_INT32: MGOPT__K_WIDEN(int32_t, double); return 1;
    case MGOPT_DT_UINT32: MGOPT__K_WIDEN(uint32_t, double); return 1;
    case MGOPT_DT_INT64: MGOPT__K_WIDEN(int64_t, double); return 1;
    case MGOPT_DT_UINT64: MGOPT__K_WIDEN(uint64_t, double); return 1;
    default: return 0;
  }
}

/* Integers (sub-byte ones included) and bool only: floats never silently truncate. */
static int mgopt__k_load_i64(mgopt_dtype dt, const void *src, int64_t n, int64_t *dst) {
  int64_t i;
  switch (dt) {
    case MGOPT_DT_INT64: memcpy(dst, src, (size_t)n * 8); return 1;
    case MGOPT_DT_BOOL: case MGOPT_DT_UINT8: MGOPT__K_WIDEN(uint8_t, int64_t); return 1;
    case MGOPT_DT_INT8: MGOPT__K_WIDEN(int8_t, int64_t); return 1;
    case MGOPT_DT_INT16: MGOPT__K_WIDEN(int16_t, int64_t); return 1;
    case MGOPT_DT_UINT16: MGOPT__K_WIDEN(uint16_t, int64_t); return 1;
    case MGOPT_DT_INT32: MGOPT__K_WIDEN(int32_t, int64_t); return 1;
    case MGOPT_DT_UINT32: MGOPT__K_WIDEN(uint32_t, int64_t); return 1;
    case MGOPT_DT_UINT64: {
      const uint64_t *s = (const uint64_t *)src;
      for (i = 0; i < n; i++) {
        if (s[i] > (uint64_t)INT64_MAX) return 0;
        dst[i] = (int64_t)s[i];
      }
      return 1;
    }
    case MGOPT_DT_INT4: {
      const uint8_t *s = (const uint8_t *)src;
      for (i = 0; i < n; i++) {
        int64_t v = (int64_t)mgopt__k_bits(s, i, 4);
        dst[i] = v >= 8 ? v - 16 : v;
      }
      return 1;
    }
    case MGOPT_DT_UINT1: case MGOPT_DT_UINT2: case MGOPT_DT_UINT3: case MGOPT_DT_UINT4:
    case MGOPT_DT_UINT6: {
      const uint8_t *s = (const uint8_t *)src;
      int b = mgopt_dtype_bits(dt);
      for (i = 0; i < n; i++) dst[i] = (int64_t)mgopt__k_bits(s, i, b);
      return 1;
    }
    default: return 0;
  }
}

/* Truth values of any numeric dtype (NaN is true, as in numpy). */
static int mgopt__k_load_bool(mgopt_dtype dt, const void *src, int64_t n, uint8_t *dst) {
  int64_t i;
  size_t es = mgopt__k_esize(dt);
  const uint8_t *s = (const uint8_t *)src;
  if (dt == MGOPT_DT_BOOL) {
    for (i = 0; i < n; i++) dst[i] = s[i] != 0;
    return 1;
  }
  if (dt == MGOPT_DT_FP16 || dt == MGOPT_DT_BF16) {
    /* +0 and -0 are the only false values */
    const uint16_t *h = (const uint16_t *)src;
    for (i = 0; i < n; i++) dst[i] = (h[i] & 0x7fffu) != 0;
    return 1;
  }
  if (dt == MGOPT_DT_FP32) {
    const float *f = (const float *)src;
    for (i = 0; i < n; i++) dst[i] = f[i] != 0.0f;
    return 1;
  }
  if (dt == MGOPT_DT_FP64) {
    const double *f = (const double *)src;
    for (i = 0; i < n; i++) dst[i] = f[i] != 0.0;
    return 1;
  }
  if (mgopt__k_lane(dt) != MGOPT__LANE_I64 || !es) return 0;
  for (i = 0; i < n; i++) {
    size_t b;
    uint8_t any = 0;
    for (b = 0; b < es; b++) any |= s[(size_t)i * es + b];
    dst[i] = any != 0;
  }
  return 1;
}

MGOPT__PRIVATE int mgopt__k_load(mgopt__kctx *k, mgopt_tensor *t, int lane, void *dst) {
  const void *src = mgopt__k_data(k, t);
  mgopt_dtype dt = (mgopt_dtype)t->dtype;
  int ok;
  if (!src) return MGOPT__K_OOM;
  switch (lane) {
    case MGOPT__LANE_F32: ok = mgopt__k_load_f32(dt, src, t->numel, (float *)dst); break;
    case MGOPT__LANE_F64: ok = mgopt__k_load_f64(dt, src, t->numel, (double *)dst); break;
    case MGOPT__LANE_I64: ok = mgopt__k_load_i64(dt, src, t->numel, (int64_t *)dst); break;
    case MGOPT__LANE_BOOL: ok = mgopt__k_load_bool(dt, src, t->numel, (uint8_t *)dst); break;
    default: ok = 0;
  }
  if (!ok)
    return mgopt__k_no(k, "a %s operand cannot be computed in the %s lane", mgopt_dtype_name(dt),
                       lane == MGOPT__LANE_F32 ? "fp32" : lane == MGOPT__LANE_F64 ? "fp64"
                       : lane == MGOPT__LANE_I64 ? "integer" : lane == MGOPT__LANE_BOOL ? "bool" : "no");
  return MGOPT__K_OK;
}

static int mgopt__k_same_shape(int32_t ra, const int64_t *a, int32_t rb, const int64_t *b) {
  int32_t i;
  if (ra != rb) return 0;
  for (i = 0; i < ra; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

MGOPT__PRIVATE int mgopt__k_load_bcast(mgopt__kctx *k, mgopt_tensor *t, int lane, int32_t orank,
                                       const int64_t *oshape, int64_t n, void **out) {
  size_t es = mgopt__k_lane_size(lane);
  void *tmp = mgopt__k_scratch(k, t->numel, es), *full;
  int r;
  if (!tmp) return MGOPT__K_OOM;
  r = mgopt__k_load(k, t, lane, tmp);
  if (r != MGOPT__K_OK) return r;
  if (mgopt__k_same_shape(t->rank, t->shape, orank, oshape)) {
    *out = tmp;
    return MGOPT__K_OK;
  }
  full = mgopt__k_scratch(k, n, es);
  if (!full) return MGOPT__K_OOM;
  mgopt__k_bcast(full, tmp, es, t->rank, t->shape, orank, oshape);
  *out = full;
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- storing */

/* Rounds d to float keeping a sticky bit in the last place (round to odd), so
   that a second rounding to fp16 / bf16 is correctly rounded from d. */
static float mgopt__k_f32_odd(double d) {
  float f = (float)d;
  uint32_t u;
  if (f != f || (double)f == d || f - f != 0.0f) return f; /* NaN, exact or infinite */
  if (fabs((double)f) > fabs(d)) {
    memcpy(&u, &f, 4);
    u -= 1; /* one step toward zero (f != 0 here since d != 0 rounds to it inexactly) */
    memcpy(&f, &u, 4);
  }
  memcpy(&u, &f, 4);
  u |= 1u;
  memcpy(&f, &u, 4);
  return f;
}

MGOPT__PRIVATE void mgopt__k_store_f64_at(mgopt_dtype dt, void *dst, int64_t i, double v) {
  uint8_t *d = (uint8_t *)dst;
  switch (dt) {
    case MGOPT_DT_FP64: memcpy(d + 8 * i, &v, 8); return;
    case MGOPT_DT_FP32: { float f = (float)v; memcpy(d + 4 * i, &f, 4); return; }
    case MGOPT_DT_FP16: { uint16_t h = mgopt_f32_to_f16(mgopt__k_f32_odd(v)); memcpy(d + 2 * i, &h, 2); return; }
    case MGOPT_DT_BF16: { uint16_t h = mgopt_f32_to_bf16(mgopt__k_f32_odd(v)); memcpy(d + 2 * i, &h, 2); return; }
    default: return;
  }
}

MGOPT__PRIVATE void mgopt__k_store_i64_at(mgopt_dtype dt, void *dst, int64_t i, int64_t v) {
  uint8_t *d = (uint8_t *)dst;
  switch (dt) {
    case MGOPT_DT_BOOL: d[i] = v != 0; return;
    case MGOPT_DT_INT8: case MGOPT_DT_UINT8: d[i] = (uint8_t)(uint64_t)v; return;
    case MGOPT_DT_INT16: case MGOPT_DT_UINT16: { uint16_t x = (uint16_t)(uint64_t)v; memcpy(d + 2 * i, &x, 2); return; }
    case MGOPT_DT_INT32: case MGOPT_DT_UINT32: { uint32_t x = (uint32_t)(uint64_t)v; memcpy(d + 4 * i, &x, 4); return; }
    case MGOPT_DT_INT64: case MGOPT_DT_UINT64: memcpy(d + 8 * i, &v, 8); return;
    case MGOPT_DT_INT4: case MGOPT_DT_UINT1: case MGOPT_DT_UINT2: case MGOPT_DT_UINT3:
    case MGOPT_DT_UINT4: case MGOPT_DT_UINT6: {
      int b = mgopt_dtype_bits(dt);
      mgopt__k_put_bits(d, i, b, (uint64_t)v & ((1u << b) - 1u));
      return;
    }
    default: return;
  }
}

#define MGOPT__K_NARROW(SRC_T, DST_T)                                                 \
  do {                                                                                \
    const SRC_T *MGOPT_RESTRICT s_ = (const SRC_T *)src;                              \
    DST_T *MGOPT_RESTRICT d_ = (DST_T *)dst;                                          \
    for (i = 0; i < n; i++) d_[i] = (DST_T)s_[i];                                     \
  } while (0)

MGOPT__PRIVATE void mgopt__k_store(int lane, const void *src, int64_t n, mgopt_dtype dt, void *dst) {
  int64_t i;
  if (lane == MGOPT__LANE_F32) {
    const float *s = (const float *)src;
    switch (dt) {
      case MGOPT_DT_FP32: memcpy(dst, src, (size_t)n * 4); return;
      case MGOPT_DT_FP16: {
        uint16_t *d = (uint16_t *)dst;
        for (i = 0; i < n; i++) d[i] = mgopt_f32_to_f16(s[i]);
        return;
      }
      case MGOPT_DT_BF16: {
        uint16_t *d = (uint16_t *)dst;
        for (i = 0; i < n; i++) d[i] = mgopt_f32_to_bf16(s[i]);
        return;
      }
      case MGOPT_DT_FP64: MGOPT__K_NARROW(float, double); return;
      default: return;
    }
  }
  if (lane == MGOPT__LANE_F64) {
    const double *s = (const double *)src;
    if (dt == MGOPT_DT_FP64) {
      memcpy(dst, src, (size_t)n * 8);
      return;
    }
    for (i = 0; i < n; i++) mgopt__k_store_f64_at(dt, dst, i, s[i]);
    return;
  }
  if (lane == MGOPT__LANE_BOOL) {
    const uint8_t *s = (const uint8_t *)src;
    if (dt == MGOPT_DT_BOOL) {
      memcpy(dst, src, (size_t)n);
      return;
    }
    for (i = 0; i < n; i++) mgopt__k_store_i64_at(dt, dst, i, s[i]);
    return;
  }
  if (lane == MGOPT__LANE_I64) {
    const int64_t *s = (const int64_t *)src;
    switch (dt) {
      case MGOPT_DT_INT64: case MGOPT_DT_UINT64: memcpy(dst, src, (size_t)n * 8); return;
      case MGOPT_DT_INT32: case MGOPT_DT_UINT32: {
        uint32_t *d = (uint32_t *)dst;
        for (i = 0; i < n; i++) d[i] = (uint32_t)(uint64_t)s[i];
        return;
      }
      case MGOPT_DT_INT16: case MGOPT_DT_UINT16: {
        uint16_t *d = (uint16_t *)dst;
        for (i = 0; i < n; i++) d[i] = (uint16_t)(uint64_t)s[i];
        return;
      }
      case MGOPT_DT_INT8: case MGOPT_DT_UINT8: {
        uint8_t *d = (uint8_t *)dst;
        for (i = 0; i < n; i++) d[i] = (uint8_t)(uint64_t)s[i];
        return;
      }
      default:
        for (i = 0; i < n; i++) mgopt__k_store_i64_at(dt, dst, i, s[i]);
        return;
    }
  }
}

/* ---------------------------------------------------------------- shapes and iteration */

MGOPT__PRIVATE int64_t mgopt__k_numel(int32_t rank, const int64_t *shape) {
  int64_t n = 1;
  int32_t i;
  for (i = 0; i < rank; i++)
    if (shape[i] < 0 || !mgopt__mul_i64(n, shape[i], &n)) return -1;
  return n;
}

MGOPT__PRIVATE void mgopt__k_strides(int32_t rank, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  int32_t i;
  for (i = rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i];
  }
}

MGOPT__PRIVATE int mgopt__k_bcast_shape(int32_t ra, const int64_t *a, int32_t rb, const int64_t *b,
                                        int32_t *ro, int64_t *o) {
  int32_t r = ra > rb ? ra : rb, i;
  if (r > MGOPT_MAX_RANK) return 0;
  for (i = 0; i < r; i++) {
    int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
    int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
    if (da == db || db == 1) o[i] = da;
    else if (da == 1) o[i] = db;
    else return 0;
  }
  *ro = r;
  return 1;
}

/* The inner loop of a strided copy, by element size so that it compiles to
   plain loads and stores. */
#define MGOPT__K_COPY_ROW(T)                                                          \
  do {                                                                                \
    T *MGOPT_RESTRICT d_ = (T *)dst + done;                                           \
    const T *s_ = (const T *)src + off;                                               \
    if (st == 1) for (j = 0; j < len; j++) d_[j] = s_[j];                             \
    else if (st == 0) { T v_ = s_[0]; for (j = 0; j < len; j++) d_[j] = v_; }         \
    else for (j = 0; j < len; j++) d_[j] = s_[j * st];                                \
  } while (0)

MGOPT__PRIVATE void mgopt__k_strided(void *dst, const void *src, size_t esz, int32_t rank,
                                     const int64_t *shape, const int64_t *stride, int64_t base) {
  int64_t idx[2 * MGOPT_MAX_RANK];
  int64_t n = 1, done = 0, len, st, off = base, j;
  int32_t d;
  for (d = 0; d < rank; d++) n *= shape[d];
  if (n == 0) return;
  if (rank == 0) {
    memcpy(dst, (const uint8_t *)src + (size_t)base * esz, esz);
    return;
  }
  len = shape[rank - 1];
  st = stride[rank - 1];
  for (d = 0; d < rank; d++) idx[d] = 0;
  while (done < n) {
    switch (esz) {
      case 1: MGOPT__K_COPY_ROW(uint8_t); break;
      case 2: MGOPT__K_COPY_ROW(uint16_t); break;
      case 4: MGOPT__K_COPY_ROW(uint32_t); break;
      case 8: MGOPT__K_COPY_ROW(uint64_t); break;
      default:
        for (j = 0; j < len; j++)
          memcpy((uint8_t *)dst + (size_t)(done + j) * esz,
                 (const uint8_t *)src + (size_t)(off + j * st) * esz, esz);
    }
    done += len;
    /* odometer over the outer dimensions */
    for (d = rank - 2; d >= 0; d--) {
      off += stride[d];
      if (++idx[d] < shape[d]) break;
      off -= stride[d] * shape[d];
      idx[d] = 0;
    }
  }
}

MGOPT__PRIVATE void mgopt__k_bcast(void *dst, const void *src, size_t esz, int32_t srank,
                                   const int64_t *sshape, int32_t orank, const int64_t *oshape) {
  int64_t sst[MGOPT_MAX_RANK], st[MGOPT_MAX_RANK];
  int32_t i, lead = orank - srank;
  mgopt__k_strides(srank, sshape, sst);
  for (i = 0; i < orank; i++) {
    if (i < lead) st[i] = 0;
    else st[i] = (sshape[i - lead] == 1 && oshape[i] != 1) ? 0 : sst[i - lead];
  }
  mgopt__k_strided(dst, src, esz, orank, oshape, st, 0);
}
