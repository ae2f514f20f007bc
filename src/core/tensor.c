/* src/core/tensor.c — dtypes, fp16/bf16 conversion, types and constant tensors. */
#include "../internal.h"
#if !defined(MGOPT_NO_SIMD) && defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
#define MGOPT__HAVE_F16C 1 /* the compiler targets F16C: use it */
#elif !defined(MGOPT_NO_SIMD) && defined(__x86_64__) && defined(__GNUC__) && __GNUC__ >= 5 && !defined(__clang__)
#include <immintrin.h>
#define MGOPT__F16C_DISPATCH 1 /* an F16C function, taken when the CPU has it */
#endif

/* ---------------------------------------------------------------- dtypes */

static const char *const mgopt__dtype_names[] = {
#define MGOPT__DT_NAME(name, str, bits) str,
    MGOPT_DTYPE_LIST(MGOPT__DT_NAME)
#undef MGOPT__DT_NAME
};
static const unsigned char mgopt__dtype_bits[] = {
#define MGOPT__DT_BITS(name, str, bits) bits,
    MGOPT_DTYPE_LIST(MGOPT__DT_BITS)
#undef MGOPT__DT_BITS
};

MGOPTDEF const char *mgopt_dtype_name(mgopt_dtype t) {
  if ((int)t <= 0 || (int)t >= (int)MGOPT_DT__COUNT) return "unknown";
  return mgopt__dtype_names[t];
}

MGOPTDEF mgopt_dtype mgopt_dtype_from_name(const char *s, size_t n) {
  static const struct {
    const char *alias;
    mgopt_dtype t;
  } aliases[] = {{"i8", MGOPT_DT_INT8},      {"i16", MGOPT_DT_INT16},   {"i32", MGOPT_DT_INT32},
                 {"i64", MGOPT_DT_INT64},    {"u8", MGOPT_DT_UINT8},    {"u16", MGOPT_DT_UINT16},
                 {"u32", MGOPT_DT_UINT32},   {"u64", MGOPT_DT_UINT64},  {"fp8", MGOPT_DT_FP8E4M3FN},
                 {"float16", MGOPT_DT_FP16}, {"float32", MGOPT_DT_FP32}, {"float64", MGOPT_DT_FP64},
                 {"bfloat16", MGOPT_DT_BF16}, {"f16", MGOPT_DT_FP16},   {"f32", MGOPT_DT_FP32},
                 {"f64", MGOPT_DT_FP64},     {"float", MGOPT_DT_FP32},  {"double", MGOPT_DT_FP64},
                 {"int", MGOPT_DT_INT32},    {"str", MGOPT_DT_STRING}};
  int i;
  for (i = 1; i < (int)MGOPT_DT__COUNT; i++)
    if (strlen(mgopt__dtype_names[i]) == n && memcmp(mgopt__dtype_names[i], s, n) == 0)
      return (mgopt_dtype)i;
  for (i = 0; i < MGOPT__ARRAY_COUNT(aliases); i++)
    if (strlen(aliases[i].alias) == n && memcmp(aliases[i].alias, s, n) == 0) return aliases[i].t;
  return MGOPT_DT_UNKNOWN;
}

MGOPTDEF int mgopt_dtype_bits(mgopt_dtype t) {
  if ((int)t <= 0 || (int)t >= (int)MGOPT_DT__COUNT) return 0;
  return mgopt__dtype_bits[t];
}

MGOPTDEF int mgopt_dtype_is_float(mgopt_dtype t) {
  switch (t) {
    case MGOPT_DT_FP16: case MGOPT_DT_BF16: case MGOPT_DT_FP32: case MGOPT_DT_FP64:
    case MGOPT_DT_FP8E4M3FN: case MGOPT_DT_FP8E4M3FNUZ: case MGOPT_DT_FP8E5M2:
    case MGOPT_DT_FP8E5M2FNUZ:
      return 1;
    default:
      return 0;
  }
}

MGOPTDEF int mgopt_dtype_is_signed(mgopt_dtype t) {
  switch (t) {
    case MGOPT_DT_INT4: case MGOPT_DT_INT8: case MGOPT_DT_INT16: case MGOPT_DT_INT32:
    case MGOPT_DT_INT64: case MGOPT_DT_INT4X:
      return 1;
    default:
      return 0;
  }
}

MGOPTDEF int mgopt_dtype_is_int(mgopt_dtype t) {
  switch (t) {
    case MGOPT_DT_UINT1: case MGOPT_DT_UINT2: case MGOPT_DT_UINT3: case MGOPT_DT_UINT4:
    case MGOPT_DT_UINT6: case MGOPT_DT_UINT8: case MGOPT_DT_UINT16: case MGOPT_DT_UINT32:
    case MGOPT_DT_UINT64: case MGOPT_DT_UINT4X:
      return 1;
    default:
      return mgopt_dtype_is_signed(t);
  }
}

MGOPTDEF int64_t mgopt_dtype_nbytes(mgopt_dtype t, int64_t n) {
  int64_t bits;
  if (n < 0) return -1;
  if (t == MGOPT_DT_STRING) {
    if (!mgopt__mul_i64(n, (int64_t)sizeof(mgopt_str), &bits)) return -1;
    return bits;
  }
  if (!mgopt__mul_i64(n, mgopt_dtype_bits(t), &bits)) return -1;
  return (bits + 7) / 8;
}

/* ---------------------------------------------------------------- byte order */

MGOPT__PRIVATE mgopt_dtype mgopt__dtype_lut_index(int nbits) {
  switch (nbits) {
    case 1: return MGOPT_DT_UINT1;
    case 2: return MGOPT_DT_UINT2;
    case 3: return MGOPT_DT_UINT3;
    case 4: return MGOPT_DT_UINT4;
    case 6: return MGOPT_DT_UINT6;
    default: return MGOPT_DT_UINT8;
  }
}

MGOPT__PRIVATE size_t mgopt__dtype_swap_unit(mgopt_dtype dt) {
  int bits = mgopt_dtype_bits(dt);
  if (dt == MGOPT_DT_COMPLEX64 || dt == MGOPT_DT_COMPLEX128) bits /= 2;
  return bits >= 16 ? (size_t)bits / 8 : 1u;
}

MGOPT__PRIVATE void mgopt__le_copy(void *dst, const void *src, size_t n, size_t unit) {
  unsigned char *d = (unsigned char *)dst;
  const unsigned char *s = (const unsigned char *)src;
  size_t i, k;
  if (!n) return;
  if (unit <= 1 || mgopt__host_le()) {
    memcpy(d, s, n);
    return;
  }
  for (i = 0; i + unit <= n; i += unit)
    for (k = 0; k < unit; k++) d[i + k] = s[i + unit - 1 - k];
}

/* ---------------------------------------------------------------- fp16 / bf16 */

static uint32_t mgopt__f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float mgopt__bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* fp32 -> fp16, round to nearest even, branch-free so that loops over it
   vectorize. From the magnitude bits a of x:
   - a > inf: NaN, quiet, keeping the sign and the top 10 payload bits;
   - a >= 65536 (and inf): +-inf;
   - a >= 2^-14 (normal fp16): rebias the exponent, then round the 13 dropped
     mantissa bits to nearest even in integers (a carry into the exponent is
     the correct result, 65520 and up give inf);
   - below: |x| + 0.5f rounds |x| to a multiple of 2^-24 (the fp16 subnormal
     quantum) in the float adder's round-to-nearest-even mode; the low bits of
     the sum are the subnormal (0x400 when it rounds up to the smallest
     normal). Every fp32 value below 2^-25 gives +-0. */
static uint16_t mgopt__f32_to_f16_bits(uint32_t x) {
  uint32_t a = x & 0x7fffffffu, sign = (x >> 16) & 0x8000u;
  uint32_t rb = a - 0x38000000u;
  uint32_t norm = (rb + 0xfffu + ((rb >> 13) & 1u)) >> 13;
  float af = mgopt__bits_f32(a) + 0.5f;
  uint32_t sub = mgopt__f32_bits(af) - 0x3f000000u;
  uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu);
  /* selections as masks: compilers keep them branch-free */
  uint32_t m_sub = 0u - (uint32_t)(a < 0x38800000u), m_inf = 0u - (uint32_t)(a >= 0x47800000u);
  uint32_t m_nan = 0u - (uint32_t)(a > 0x7f800000u);
  uint32_t r = (sub & m_sub) | (norm & ~m_sub);
  r = (0x7c00u & m_inf) | (r & ~m_inf);
  r = (nan & m_nan) | (r & ~m_nan);
  return (uint16_t)(sign | r);
}

MGOPTDEF uint16_t mgopt_f32_to_f16(float f) { return mgopt__f32_to_f16_bits(mgopt__f32_bits(f)); }

/* The bulk conversion: F16C (8 lanes, round to nearest even) when the
   compiler targets it, or (gcc on x86-64) when the CPU has it, else
   the portable loop above, which compilers vectorize. Both give mgopt_f32_to_f16's bits (F16C quiets NaNs the same
   way: sign, 0x7e00, top payload bits). */
#if defined(MGOPT__F16C_DISPATCH)
__attribute__((target("avx,f16c"))) static int64_t mgopt__f32_to_f16_f16c(const float *src, uint16_t *dst,
                                                                           int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(void *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), 0));
  return i;
}
#endif

MGOPTDEF void mgopt_f32_to_f16_n(const float *src, uint16_t *dst, int64_t n) {
  int64_t i = 0;
#if defined(MGOPT__HAVE_F16C)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(void *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), 0));
#elif defined(MGOPT__F16C_DISPATCH)
  if (n >= 64 && __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx"))
    i = mgopt__f32_to_f16_f16c(src, dst, n);
#endif
  for (; i < n; i++) {
    uint32_t x;
    memcpy(&x, src + i, 4);
    dst[i] = mgopt__f32_to_f16_bits(x);
  }
}

MGOPTDEF float mgopt_f16_to_f32(uint16_t h) {
  uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0) {
    if (man == 0) return mgopt__bits_f32(sign);
    /* subnormal: normalise */
    exp = 127 - 15 + 1;
    while (!(man & 0x400u)) {
      man <<= 1;
      exp--;
    }
    man &= 0x3ffu;
    return mgopt__bits_f32(sign | (exp << 23) | (man << 13));
  }
  if (exp == 31) return mgopt__bits_f32(sign | 0x7f800000u | (man << 13));
  return mgopt__bits_f32(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

MGOPTDEF uint16_t mgopt_f32_to_bf16(float f) {
  uint32_t x = mgopt__f32_bits(f);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu)) return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

MGOPTDEF float mgopt_bf16_to_f32(uint16_t h) { return mgopt__bits_f32((uint32_t)h << 16); }

/* ---------------------------------------------------------------- types */

MGOPTDEF mgopt_status mgopt_type_make(mgopt_program *p, mgopt_type *out, mgopt_dtype dt,
                                      int32_t rank, const mgopt_dim *dims) {
  mgopt_type t;
  int32_t i;
  memset(&t, 0, sizeof t);
  t.kind = MGOPT_TYPE_TENSOR;
  t.dtype = (uint8_t)dt;
  t.rank = rank;
  if (rank > 0) {
    t.dims = (mgopt_dim *)mgopt_program_alloc(p, sizeof(mgopt_dim) * (size_t)rank, 8);
    if (!t.dims) return MGOPT_ERR_NOMEM;
    for (i = 0; i < rank; i++) t.dims[i] = dims ? dims[i] : mgopt_dim_unknown();
  }
  *out = t;
  return MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_type_make_static(mgopt_program *p, mgopt_type *out, mgopt_dtype dt,
                                             int32_t rank, const int64_t *shape) {
  mgopt_status s = mgopt_type_make(p, out, dt, rank, NULL);
  int32_t i;
  if (s) return s;
  for (i = 0; i < rank; i++) out->dims[i] = mgopt_dim_static(shape[i]);
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__type_copy(mgopt_program *p, mgopt_type *dst, const mgopt_type *src) {
  mgopt_type t = *src;
  if (src->rank > 0 && src->dims) {
    t.dims = (mgopt_dim *)mgopt__dup(p, src->dims, sizeof(mgopt_dim) * (size_t)src->rank);
    if (!t.dims) return MGOPT_ERR_NOMEM;
  }
  *dst = t;
  return MGOPT_OK;
}

MGOPT__PRIVATE int32_t mgopt__type_clash(const mgopt_type *decl, const mgopt_type *have, int strict_dtype) {
  int32_t j;
  if (decl->kind != have->kind) return MGOPT__CLASH_KIND;
  if (decl->kind == MGOPT_TYPE_OTHER) return 0; /* a state compares as the tensor it holds */
  if (have->dtype != MGOPT_DT_UNKNOWN && (strict_dtype || decl->dtype != MGOPT_DT_UNKNOWN) &&
      decl->dtype != have->dtype)
    return MGOPT__CLASH_DTYPE;
  if (decl->rank < 0 || have->rank < 0) return 0;
  if (decl->rank != have->rank) return MGOPT__CLASH_RANK;
  if (decl->rank > 0 && (!decl->dims || !have->dims)) return MGOPT__CLASH_RANK; /* a rank without dims */
  for (j = 0; j < decl->rank; j++)
    if (mgopt_dim_is_static(decl->dims[j]) && mgopt_dim_is_static(have->dims[j]) && decl->dims[j].v != have->dims[j].v)
      return 1 + j;
  return 0;
}

MGOPTDEF int mgopt_type_equal(const mgopt_type *a, const mgopt_type *b) {
  int32_t i;
  if (a->kind != b->kind) return 0;
  if (a->kind == MGOPT_TYPE_OTHER)
    return a->other_len == b->other_len &&
           (a->other_len == 0 || memcmp(a->other, b->other, a->other_len) == 0);
  if (a->dtype != b->dtype || a->rank != b->rank) return 0;
  for (i = 0; i < a->rank; i++) {
    mgopt_dim x = a->dims[i], y = b->dims[i];
    if (x.sym != y.sym) return 0;
    if (!x.sym && (x.v < 0) != (y.v < 0)) return 0;
    if (!x.sym && x.v >= 0 && x.v != y.v) return 0;
  }
  return 1;
}

MGOPTDEF int mgopt_type_is_static(const mgopt_type *t) {
  int32_t i;
  if (t->kind != MGOPT_TYPE_TENSOR || t->rank < 0) return 0;
  for (i = 0; i < t->rank; i++)
    if (!mgopt_dim_is_static(t->dims[i])) return 0;
  return 1;
}

MGOPTDEF int64_t mgopt_type_numel(const mgopt_type *t) {
  int64_t n = 1;
  int32_t i;
  if (!mgopt_type_is_static(t)) return -1;
  for (i = 0; i < t->rank; i++)
    if (!mgopt__mul_i64(n, t->dims[i].v, &n)) return -1;
  return n;
}

/* ---------------------------------------------------------------- tensors */

/* Every mgopt_tensor is the head of one of these (all come from
   mgopt__tensor_head), so the caches stay out of the public struct. */
typedef struct mgopt__tensor_rec {
  mgopt_tensor t;
  uint64_t hash;      /* content hash, valid when hash_valid */
  uint64_t probe;     /* sampled-content key, valid when probe_valid */
  /* 2-d tensors: bytes that never change (borrowed) whose transpose t's
     bytes are, or NULL; forgotten at t's first write */
  const void *tsrc;
  /* the one op that holds t, for a caller that then may write t in place
     (mgopt__tensor_set_holder), or NULL */
  const void *holder;
  uint8_t hash_valid;
  uint8_t probe_valid;
} mgopt__tensor_rec;

#define MGOPT__TREC(t) ((mgopt__tensor_rec *)(void *)(t))
#define MGOPT__TREC_C(t) ((const mgopt__tensor_rec *)(const void *)(t))

MGOPT__PRIVATE size_t mgopt__tensor_rec_size(void) { return sizeof(mgopt__tensor_rec); }

/* A write may change the bytes: forget what was computed from them. */
static void mgopt__tensor_touch(mgopt_tensor *t) {
  MGOPT__TREC(t)->hash_valid = 0;
  MGOPT__TREC(t)->probe_valid = 0;
  MGOPT__TREC(t)->tsrc = NULL;
}

static mgopt_tensor *mgopt__tensor_head(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                        const int64_t *shape) {
  mgopt_tensor *t;
  int64_t n = 1;
  int64_t nb;
  int32_t i;
  if (rank < 0) return NULL;
  for (i = 0; i < rank; i++)
    if (!mgopt__mul_i64(n, shape[i], &n)) return NULL;
  nb = mgopt_dtype_nbytes(dt, n);
  if (nb < 0 || (uint64_t)nb > (uint64_t)SIZE_MAX / 2) return NULL;
  t = (mgopt_tensor *)mgopt_program_alloc(p, sizeof(mgopt__tensor_rec), 8);
  if (!t) return NULL;
  t->dtype = (uint8_t)dt;
  t->rank = rank;
  t->numel = n;
  t->nbytes = (size_t)nb;
  t->ext_offset = -1;
  if (rank > 0) {
    t->shape = (int64_t *)mgopt__dup(p, shape, sizeof(int64_t) * (size_t)rank);
    if (!t->shape) return NULL;
  }
  return t;
}

/* A tensor with its own 64-byte-aligned data, zeroed or (for a caller that
   writes every byte) not; strings are always zeroed (empty). */
MGOPT__PRIVATE mgopt_tensor *mgopt__tensor_new_data(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                                  const int64_t *shape, int zero) {
  mgopt_tensor *t = mgopt__tensor_head(p, dt, rank, shape);
  if (!t) return NULL;
  t->data = mgopt__arena_alloc(p, t->nbytes ? t->nbytes : 1, 64, zero || dt == MGOPT_DT_STRING);
  if (!t->data) return NULL;
  return t;
}

MGOPTDEF mgopt_tensor *mgopt_tensor_new(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                        const int64_t *shape) {
  return mgopt__tensor_new_data(p, dt, rank, shape, 1);
}

MGOPTDEF mgopt_tensor *mgopt_tensor_new_borrowed(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                                 const int64_t *shape, const void *data,
                                                 size_t nbytes) {
  mgopt_tensor *t = mgopt__tensor_head(p, dt, rank, shape);
  if (!t || t->nbytes != nbytes || dt == MGOPT_DT_STRING) return NULL;
  t->data = (void *)(uintptr_t)data;
  t->borrowed = 1;
  return t;
}

MGOPT__PRIVATE mgopt_tensor *mgopt__tensor_view(mgopt_program *p, mgopt_tensor *t, size_t offset, int32_t rank,
                                              const int64_t *shape) {
  mgopt_tensor *v = mgopt__tensor_head(p, (mgopt_dtype)t->dtype, rank, shape);
  if (!v || t->dtype == MGOPT_DT_STRING || offset > t->nbytes || v->nbytes > t->nbytes - offset) return NULL;
  v->data = offset ? (uint8_t *)t->data + offset : t->data; /* (no arithmetic on a NULL of 0 bytes) */
  v->borrowed = 1;
  t->borrowed = 1;
  return v;
}

MGOPT__PRIVATE void mgopt__tensor_set_holder(mgopt_tensor *t, const void *holder) { MGOPT__TREC(t)->holder = holder; }

MGOPT__PRIVATE int mgopt__tensor_held_only_by(const mgopt_tensor *t, const void *holder) {
  return holder && !t->borrowed && MGOPT__TREC_C(t)->holder == holder;
}

/* dst[j][i] = src[i][j] for src [r, c] of es-byte elements, in 32 x 32 tiles
   so both sides stay in cache; memcpy per element, so src may be unaligned. */
static void mgopt__transpose_bytes(uint8_t *MGOPT_RESTRICT dst, const uint8_t *src, int64_t r, int64_t c, size_t es) {
  int64_t i0, j0, i, j;
  for (i0 = 0; i0 < r; i0 += 32)
    for (j0 = 0; j0 < c; j0 += 32) {
      int64_t ie = i0 + 32 < r ? i0 + 32 : r, je = j0 + 32 < c ? j0 + 32 : c;
      if (es == 4) {
        for (j = j0; j < je; j++)
          for (i = i0; i < ie; i++) memcpy(dst + ((size_t)(j * r + i)) * 4, src + ((size_t)(i * c + j)) * 4, 4);
        continue;
      }
      for (j = j0; j < je; j++)
        for (i = i0; i < ie; i++) memcpy(dst + ((size_t)(j * r + i)) * es, src + ((size_t)(i * c + j)) * es, es);
    }
}

MGOPT__PRIVATE mgopt_tensor *mgopt__tensor_transpose2d(mgopt_program *p, mgopt_tensor *t) {
  int64_t shape[2];
  int bits = mgopt_dtype_bits((mgopt_dtype)t->dtype);
  const void *src = MGOPT__TREC(t)->tsrc;
  mgopt_tensor *nt;
  if (t->rank != 2 || t->dtype == MGOPT_DT_STRING || bits < 8 || bits % 8) return NULL;
  shape[0] = t->shape[1];
  shape[1] = t->shape[0];
  if (src) /* t was made as the transpose of these bytes: they are the answer */
    return mgopt_tensor_new_borrowed(p, (mgopt_dtype)t->dtype, 2, shape, src, t->nbytes);
  nt = mgopt__tensor_new_data(p, (mgopt_dtype)t->dtype, 2, shape, 0); /* all written below */
  if (!nt) return NULL;
  if (t->nbytes) mgopt__transpose_bytes((uint8_t *)nt->data, (const uint8_t *)t->data, t->shape[0], t->shape[1], (size_t)(bits / 8));
  /* t's bytes stay as they are (a later write to t copies first), so the
     transpose of nt is always t's bytes of now */
  t->borrowed = 1;
  MGOPT__TREC(nt)->tsrc = t->data;
  return nt;
}

MGOPTDEF mgopt_tensor *mgopt_tensor_new_scalar_f64(mgopt_program *p, mgopt_dtype dt, double v) {
  mgopt_tensor *t = mgopt_tensor_new(p, dt, 0, NULL);
  if (t) mgopt_tensor_set_f64(t, 0, v);
  return t;
}

MGOPTDEF mgopt_tensor *mgopt_tensor_new_scalar_i64(mgopt_program *p, mgopt_dtype dt, int64_t v) {
  mgopt_tensor *t = mgopt_tensor_new(p, dt, 0, NULL);
  if (t) mgopt_tensor_set_i64(t, 0, v);
  return t;
}

MGOPTDEF const void *mgopt_tensor_data(mgopt_program *p, mgopt_tensor *t) {
  /* the natural alignment of the element: 1, 2, 4 or 8 bytes */
  int bits = mgopt_dtype_bits((mgopt_dtype)t->dtype);
  uintptr_t align = bits >= 64 ? 8u : bits >= 32 ? 4u : bits >= 16 ? 2u : 1u;
  if (t->borrowed && ((uintptr_t)t->data & (align - 1u))) {
    void *d = mgopt__arena_alloc(p, t->nbytes ? t->nbytes : 1, 64, 0); /* every byte copied below */
    if (!d) return NULL;
    memcpy(d, t->data, t->nbytes);
    t->data = d;
    t->borrowed = 0;
  }
  return t->data;
}

MGOPTDEF void *mgopt_tensor_data_mut(mgopt_program *p, mgopt_tensor *t) {
  if (t->borrowed) {
    void *d = mgopt__arena_alloc(p, t->nbytes ? t->nbytes : 1, 64, 0); /* every byte copied below */
    if (!d) return NULL;
    memcpy(d, t->data, t->nbytes);
    t->data = d;
    t->borrowed = 0;
  }
  mgopt__tensor_touch(t);
  return t->data;
}

/* Sub-byte element access: element i occupies bits [i*b, i*b+b) little-endian. */
static uint64_t mgopt__get_bits(const uint8_t *d, int64_t i, int b) {
  uint64_t v = 0;
  int k;
  for (k = 0; k < b; k++) {
    int64_t bit = i * b + k;
    v |= (uint64_t)((d[bit >> 3] >> (bit & 7)) & 1u) << k;
  }
  return v;
}
static void mgopt__set_bits(uint8_t *d, int64_t i, int b, uint64_t v) {
  int k;
  for (k = 0; k < b; k++) {
    int64_t bit = i * b + k;
    if ((v >> k) & 1u) d[bit >> 3] |= (uint8_t)(1u << (bit & 7));
    else d[bit >> 3] &= (uint8_t)~(1u << (bit & 7));
  }
}

MGOPTDEF double mgopt_tensor_get_f64(const mgopt_tensor *t, int64_t i) {
  const uint8_t *d = (const uint8_t *)t->data;
  switch ((mgopt_dtype)t->dtype) {
    case MGOPT_DT_BOOL: return d[i] ? 1.0 : 0.0;
    case MGOPT_DT_INT8: return (double)(int8_t)d[i];
    case MGOPT_DT_UINT8: return (double)d[i];
    case MGOPT_DT_FP8E4M3FN: case MGOPT_DT_FP8E4M3FNUZ: case MGOPT_DT_FP8E5M2:
    case MGOPT_DT_FP8E5M2FNUZ: return (double)d[i];
    case MGOPT_DT_INT16: { int16_t v; memcpy(&v, d + 2 * i, 2); return v; }
    case MGOPT_DT_UINT16: { uint16_t v; memcpy(&v, d + 2 * i, 2); return v; }
    case MGOPT_DT_INT32: { int32_t v; memcpy(&v, d + 4 * i, 4); return v; }
    case MGOPT_DT_UINT32: { uint32_t v; memcpy(&v, d + 4 * i, 4); return v; }
    case MGOPT_DT_INT64: { int64_t v; memcpy(&v, d + 8 * i, 8); return (double)v; }
    case MGOPT_DT_UINT64: { uint64_t v; memcpy(&v, d + 8 * i, 8); return (double)v; }
    case MGOPT_DT_FP16: { uint16_t v; memcpy(&v, d + 2 * i, 2); return mgopt_f16_to_f32(v); }
    case MGOPT_DT_BF16: { uint16_t v; memcpy(&v, d + 2 * i, 2); return mgopt_bf16_to_f32(v); }
    case MGOPT_DT_FP32: { float v; memcpy(&v, d + 4 * i, 4); return v; }
    case MGOPT_DT_FP64: { double v; memcpy(&v, d + 8 * i, 8); return v; }
    case MGOPT_DT_COMPLEX64: { float v; memcpy(&v, d + 8 * i, 4); return v; }
    case MGOPT_DT_COMPLEX128: { double v; memcpy(&v, d + 16 * i, 8); return v; }
    case MGOPT_DT_INT4: case MGOPT_DT_INT4X: {
      int64_t v = (int64_t)mgopt__get_bits(d, i, 4);
      return (double)(v >= 8 ? v - 16 : v);
    }
    case MGOPT_DT_UINT1: case MGOPT_DT_UINT2: case MGOPT_DT_UINT3: case MGOPT_DT_UINT4:
    case MGOPT_DT_UINT6: case MGOPT_DT_UINT4X:
      return (double)mgopt__get_bits(d, i, mgopt_dtype_bits((mgopt_dtype)t->dtype));
    default: return 0.0;
  }
}

MGOPTDEF int64_t mgopt_tensor_get_i64(const mgopt_tensor *t, int64_t i) {
  const uint8_t *d = (const uint8_t *)t->data;
  switch ((mgopt_dtype)t->dtype) {
    case MGOPT_DT_INT64: { int64_t v; memcpy(&v, d + 8 * i, 8); return v; }
    case MGOPT_DT_UINT64: { uint64_t v; memcpy(&v, d + 8 * i, 8); return (int64_t)v; }
    case MGOPT_DT_INT32: { int32_t v; memcpy(&v, d + 4 * i, 4); return v; }
    case MGOPT_DT_UINT32: { uint32_t v; memcpy(&v, d + 4 * i, 4); return v; }
    default: {
      double v = mgopt_tensor_get_f64(t, i);
      if (v != v) return 0;
      if (v >= 9.2233720368547758e18) return INT64_MAX;
      if (v <= -9.2233720368547758e18) return INT64_MIN;
      return (int64_t)v;
    }
  }
}

MGOPTDEF void mgopt_tensor_set_f64(mgopt_tensor *t, int64_t i, double v) {
  uint8_t *d = (uint8_t *)t->data;
  MGOPT_ASSERT(!t->borrowed);
  mgopt__tensor_touch(t);
  switch ((mgopt_dtype)t->dtype) {
    case MGOPT_DT_FP16: { uint16_t h = mgopt_f32_to_f16((float)v); memcpy(d + 2 * i, &h, 2); return; }
    case MGOPT_DT_BF16: { uint16_t h = mgopt_f32_to_bf16((float)v); memcpy(d + 2 * i, &h, 2); return; }
    case MGOPT_DT_FP32: { float f = (float)v; memcpy(d + 4 * i, &f, 4); return; }
    case MGOPT_DT_FP64: memcpy(d + 8 * i, &v, 8); return;
    case MGOPT_DT_BOOL: d[i] = v != 0.0; return;
    default: {
      int64_t x;
      if (v != v) x = 0;
      else if (v >= 9.2233720368547758e18) x = INT64_MAX;
      else if (v <= -9.2233720368547758e18) x = INT64_MIN;
      else x = (int64_t)v;
      mgopt_tensor_set_i64(t, i, x);
    }
  }
}

MGOPTDEF void mgopt_tensor_set_i64(mgopt_tensor *t, int64_t i, int64_t v) {
  uint8_t *d = (uint8_t *)t->data;
  MGOPT_ASSERT(!t->borrowed);
  mgopt__tensor_touch(t);
  switch ((mgopt_dtype)t->dtype) {
    case MGOPT_DT_BOOL: d[i] = v != 0; return;
    case MGOPT_DT_INT8: case MGOPT_DT_UINT8: d[i] = (uint8_t)v; return;
    case MGOPT_DT_INT16: case MGOPT_DT_UINT16: { uint16_t x = (uint16_t)v; memcpy(d + 2 * i, &x, 2); return; }
    case MGOPT_DT_INT32: case MGOPT_DT_UINT32: { uint32_t x = (uint32_t)v; memcpy(d + 4 * i, &x, 4); return; }
    case MGOPT_DT_INT64: case MGOPT_DT_UINT64: memcpy(d + 8 * i, &v, 8); return;
    case MGOPT_DT_FP16: case MGOPT_DT_BF16: case MGOPT_DT_FP32: case MGOPT_DT_FP64:
      mgopt_tensor_set_f64(t, i, (double)v);
      return;
    case MGOPT_DT_INT4: case MGOPT_DT_INT4X: mgopt__set_bits(d, i, 4, (uint64_t)v & 15u); return;
    case MGOPT_DT_UINT1: case MGOPT_DT_UINT2: case MGOPT_DT_UINT3: case MGOPT_DT_UINT4:
    case MGOPT_DT_UINT6: case MGOPT_DT_UINT4X: {
      int b = mgopt_dtype_bits((mgopt_dtype)t->dtype);
      mgopt__set_bits(d, i, b, (uint64_t)v & ((1u << b) - 1u));
      return;
    }
    default: return;
  }
}

MGOPTDEF int mgopt_tensor_equal(const mgopt_tensor *a, const mgopt_tensor *b) {
  int32_t i;
  if (a == b) return 1;
  if (a->dtype != b->dtype || a->rank != b->rank || a->numel != b->numel) return 0;
  for (i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  if (a->dtype == MGOPT_DT_STRING) {
    const mgopt_str *x = (const mgopt_str *)a->data, *y = (const mgopt_str *)b->data;
    int64_t k;
    for (k = 0; k < a->numel; k++)
      if (x[k].len != y[k].len || (x[k].len && memcmp(x[k].ptr, y[k].ptr, x[k].len))) return 0;
    return 1;
  }
  if (MGOPT__TREC_C(a)->hash_valid && MGOPT__TREC_C(b)->hash_valid && MGOPT__TREC_C(a)->hash != MGOPT__TREC_C(b)->hash)
    return 0;
  /* shared bytes (deduplicated weights, views) need no comparing */
  return a->nbytes == b->nbytes && (a->nbytes == 0 || a->data == b->data || memcmp(a->data, b->data, a->nbytes) == 0);
}

MGOPTDEF uint64_t mgopt_tensor_hash(mgopt_tensor *t) {
  uint64_t h;
  if (MGOPT__TREC(t)->hash_valid) return MGOPT__TREC(t)->hash;
  h = mgopt__hash_bytes(&t->dtype, 1, MGOPT__HASH_SEED);
  h = mgopt__hash_bytes(&t->rank, sizeof t->rank, h);
  if (t->rank > 0) h = mgopt__hash_bytes(t->shape, sizeof(int64_t) * (size_t)t->rank, h);
  if (t->dtype == MGOPT_DT_STRING) {
    const mgopt_str *x = (const mgopt_str *)t->data;
    int64_t k;
    for (k = 0; k < t->numel; k++) {
      h = mgopt__hash_bytes(&x[k].len, sizeof x[k].len, h);
      h = mgopt__hash_bytes(x[k].ptr, x[k].len, h);
    }
  } else {
    /* Four independent lanes of 8 bytes: the multiplies overlap, so this runs
       near memory speed instead of one multiply latency per word. The lanes
       differ in their shifts, which keeps compilers from turning them into
       SSE2 code that has no 64-bit multiply. Then words, then the tail. */
    const uint8_t *d = (const uint8_t *)t->data;
    size_t n = t->nbytes, k = 0;
    if (n >= 64) {
      uint64_t a = h, b = h ^ 0x9e3779b97f4a7c15ull, c = h ^ 0xc2b2ae3d27d4eb4full, e = h ^ 0x165667b19e3779f9ull;
      for (; k + 32 <= n; k += 32) {
        uint64_t w0, w1, w2, w3;
        memcpy(&w0, d + k, 8);
        memcpy(&w1, d + k + 8, 8);
        memcpy(&w2, d + k + 16, 8);
        memcpy(&w3, d + k + 24, 8);
        a = (a ^ w0) * 0x9fb21c651e98df25ull;
        a ^= a >> 29;
        b = (b ^ w1) * 0xd6e8feb86659fd93ull;
        b ^= b >> 31;
        c = (c ^ w2) * 0xff51afd7ed558ccdull;
        c ^= c >> 27;
        e = (e ^ w3) * 0xc4ceb9fe1a85ec53ull;
        e ^= e >> 30;
      }
      h = (h ^ a) * 0xff51afd7ed558ccdull;
      h = (h ^ b ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
      h = (h ^ c ^ (h >> 33)) * 0xff51afd7ed558ccdull;
      h = (h ^ e ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
      h ^= h >> 33;
    }
    for (; k + 8 <= n; k += 8) {
      uint64_t w;
      memcpy(&w, d + k, 8);
      h ^= w;
      h *= 0x100000001b3ull;
      h ^= h >> 29;
    }
    h = mgopt__hash_bytes(d + k, n - k, h);
  }
  MGOPT__TREC(t)->hash = h;
  MGOPT__TREC(t)->hash_valid = 1;
  return h;
}

/* A cheap stand-in for mgopt_tensor_hash to sort tensors into likely-equal
   groups: dtype, shape, the first 512 bytes and the last 64 (all of it when
   small). Equal tensors always get equal keys; unequal weights of one shape
   almost always differ in their first bytes, and callers confirm equality
   exactly anyway. Two memory pages at most, however large the tensor (and
   the first is the one an exact comparison reads anyway), so a pass looking
   for equal weights does not read, or fault in from a mapped file, every
   weight of the model. */
MGOPT__PRIVATE uint64_t mgopt__tensor_probe(mgopt_tensor *t) {
  const uint8_t *d = (const uint8_t *)t->data;
  uint64_t h;
  if (t->dtype == MGOPT_DT_STRING || t->nbytes <= 1024) return mgopt_tensor_hash(t);
  if (MGOPT__TREC(t)->probe_valid) return MGOPT__TREC(t)->probe;
  h = mgopt__hash_bytes(&t->dtype, 1, MGOPT__HASH_SEED ^ 0x5bd1e995u);
  h = mgopt__hash_bytes(&t->rank, sizeof t->rank, h);
  if (t->rank > 0) h = mgopt__hash_bytes(t->shape, sizeof(int64_t) * (size_t)t->rank, h);
  h = mgopt__hash_bytes(d, 512, h);
  h = mgopt__hash_bytes(d + t->nbytes - 64, 64, h);
  MGOPT__TREC(t)->probe = h;
  MGOPT__TREC(t)->probe_valid = 1;
  return h;
}

MGOPTDEF mgopt_tensor *mgopt_tensor_clone(mgopt_program *p, const mgopt_tensor *t) {
  mgopt_tensor *c = mgopt_tensor_new(p, (mgopt_dtype)t->dtype, t->rank, t->shape);
  if (!c) return NULL;
  if (t->dtype == MGOPT_DT_STRING) {
    const mgopt_str *x = (const mgopt_str *)t->data;
    mgopt_str *y = (mgopt_str *)c->data;
    int64_t k;
    for (k = 0; k < t->numel; k++) {
      y[k].ptr = (const char *)mgopt__dup(p, x[k].ptr, x[k].len);
      if (!y[k].ptr) return NULL;
      y[k].len = x[k].len;
    }
  } else if (t->nbytes) {
    memcpy(c->data, t->data, t->nbytes);
  }
  return c;
}

MGOPTDEF int mgopt_tensor_all_equal_f64(const mgopt_tensor *t, double v) {
  int64_t i;
  if (t->dtype == MGOPT_DT_STRING) return 0;
  for (i = 0; i < t->numel; i++)
    if (mgopt_tensor_get_f64(t, i) != v) return 0;
  return 1;
}
