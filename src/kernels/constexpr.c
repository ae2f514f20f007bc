/* src/kernels/constexpr.c — folding kernels for weight compression: constexpr_affine_dequantize,
   constexpr_lut_to_dense (iOS16 packed and iOS18 forms), constexpr_sparse_to_dense (iOS16 bit mask
   and iOS18 uint1 mask), constexpr_blockwise_shift_scale, the joint forms constexpr_lut_to_sparse and
   constexpr_sparse_blockwise_shift_scale, dequantize, quantize.

   Sub-byte data is packed little-endian: element i occupies bits [i*b, i*b+b)
   counted from the least significant bit of byte 0. (De)quantization computes
   in float like MIL's reference (numpy float32) and rounds once to the output
   dtype; blockwise_shift_scale computes at the scale's dtype step by step. */
#include "kernels.h"

/* A scale / zero-point parameter loaded in the F32 lane and broadcast to x:
   a scalar, a vector along `axis`, or a tensor of x's rank that broadcasts. */
static int mgopt__kc_param(mgopt__kctx *k, mgopt_tensor *t, int has_axis, int32_t axis,
                           const mgopt_tensor *x, float **out) {
  mgopt_tensor view;
  int64_t vshape[MGOPT_MAX_RANK];
  int32_t d;
  void *buf;
  int r;
  if (!mgopt__k_data(k, t)) return MGOPT__K_OOM; /* aligns t itself before the view copies it */
  view = *t;
  if (t->rank == 0) {
    view.rank = 0;
  } else if (t->rank == 1 && has_axis && x->rank >= 1) {
    if (t->shape[0] != x->shape[axis]) return MGOPT__K_NO;
    for (d = 0; d < x->rank; d++) vshape[d] = d == axis ? t->shape[0] : 1;
    view.rank = x->rank;
    view.shape = vshape;
  } else if (t->rank == x->rank) {
    for (d = 0; d < x->rank; d++)
      if (t->shape[d] != 1 && t->shape[d] != x->shape[d]) return MGOPT__K_NO;
  } else {
    return MGOPT__K_NO;
  }
  r = mgopt__k_load_bcast(k, &view, MGOPT__LANE_F32, x->rank, x->shape, x->numel, &buf);
  if (r == MGOPT__K_OK) *out = (float *)buf;
  return r;
}

/* scale * (data - zero_point) in float, stored at the scale's dtype. */
static int mgopt__kc_deq(mgopt__kctx *k, const char *data_slot, int axis_required) {
  const mgopt_op *op = k->op;
  mgopt_tensor *q = mgopt__k_operand(k, data_slot), *s = mgopt__k_operand(k, "scale"),
               *zp = mgopt__k_operand(k, "zero_point");
  int has_axis = mgopt__k_has_param(op, "axis");
  int32_t axis = 0;
  float *qv, *sv, *zv = NULL;
  int64_t i, n;
  mgopt_dtype dt;
  void *od;
  int r;
  if (!q || !s || (mgopt_op_operand(op, "zero_point") && !zp)) return MGOPT__K_NO;
  if (axis_required && !has_axis) return MGOPT__K_NO;
  dt = (mgopt_dtype)s->dtype;
  if (mgopt__k_lane(dt) != MGOPT__LANE_F32 || mgopt__k_lane((mgopt_dtype)q->dtype) != MGOPT__LANE_I64)
    return MGOPT__K_NO;
  if (has_axis && q->rank > 0 && !mgopt__k_axis(mgopt_op_get_int(op, "axis", 0), q->rank, &axis))
    return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, dt, q->rank, q->shape, &od);
  if (r != MGOPT__K_OK) return r;
  n = q->numel;
  if (n == 0) return MGOPT__K_OK;
  qv = (float *)mgopt__k_scratch(k, n, 4);
  if (!qv) return MGOPT__K_OOM;
  r = mgopt__k_load(k, q, MGOPT__LANE_F32, qv);
  if (r == MGOPT__K_OK) r = mgopt__kc_param(k, s, has_axis, axis, q, &sv);
  if (r == MGOPT__K_OK && zp) r = mgopt__kc_param(k, zp, has_axis, axis, q, &zv);
  if (r != MGOPT__K_OK) return r;
  if (zv)
    for (i = 0; i < n; i++) qv[i] = qv[i] - zv[i];
  for (i = 0; i < n; i++) qv[i] = qv[i] * sv[i];
  mgopt__k_store(MGOPT__LANE_F32, qv, n, dt, od);
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__kc_affine_dequantize(mgopt__kctx *k) {
  if (!mgopt__k_operand(k, "zero_point")) return MGOPT__K_NO;
  return mgopt__kc_deq(k, "quantized_data", 1);
}

MGOPT__PRIVATE int mgopt__kc_dequantize(mgopt__kctx *k) { return mgopt__kc_deq(k, "input", 0); }

/* clip(round_half_even(input / scale) + zero_point) into int8 / uint8 (int16 / uint16 too). */
MGOPT__PRIVATE int mgopt__kc_quantize(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  mgopt_tensor *x = mgopt__k_operand(k, "input"), *s = mgopt__k_operand(k, "scale"),
               *zp = mgopt__k_operand(k, "zero_point");
  int has_axis = mgopt__k_has_param(op, "axis");
  int32_t axis = 0;
  size_t len = 0;
  const char *ods = mgopt_op_get_string(op, "output_dtype", &len);
  mgopt_dtype dt, xdt;
  float *xv, *sv, *zv = NULL;
  int64_t i, n, lo, hi;
  void *od;
  int r;
  if (!x || !s || !ods || (mgopt_op_operand(op, "zero_point") && !zp)) return MGOPT__K_NO;
  dt = mgopt_dtype_from_name(ods, len);
  xdt = (mgopt_dtype)x->dtype;
  if ((dt != MGOPT_DT_INT8 && dt != MGOPT_DT_UINT8 && dt != MGOPT_DT_INT16 && dt != MGOPT_DT_UINT16) ||
      (zp && zp->dtype != (uint8_t)dt))
    return MGOPT__K_NO;
  if (mgopt__k_lane(xdt) != MGOPT__LANE_F32 || s->dtype != x->dtype) return MGOPT__K_NO;
  if (has_axis && x->rank > 0 && !mgopt__k_axis(mgopt_op_get_int(op, "axis", 0), x->rank, &axis))
    return MGOPT__K_NO;
  mgopt__k_int_range(dt, &lo, &hi);
  r = mgopt__k_out(k, 0, dt, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  n = x->numel;
  if (n == 0) return MGOPT__K_OK;
  xv = (float *)mgopt__k_scratch(k, n, 4);
  if (!xv) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, MGOPT__LANE_F32, xv);
  if (r == MGOPT__K_OK) r = mgopt__kc_param(k, s, has_axis, axis, x, &sv);
  if (r == MGOPT__K_OK && zp) r = mgopt__kc_param(k, zp, has_axis, axis, x, &zv);
  if (r != MGOPT__K_OK) return r;
  for (i = 0; i < n; i++) {
    float q = mgopt__k_rnd(xdt, xv[i] / sv[i]), f = floorf(q), diff = q - f;
    if (q != q) return MGOPT__K_NO;
    if (diff > 0.5f || (diff == 0.5f && fmodf(f, 2.0f) != 0.0f)) f += 1.0f;
    if (zv) f = mgopt__k_rnd(xdt, f + zv[i]);
    if (f < (float)lo) f = (float)lo;
    if (f > (float)hi) f = (float)hi;
    mgopt__k_store_i64_at(dt, od, i, (int64_t)f);
  }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- lut_to_dense */

/* Number of bits b with 2^b == n (1 <= b <= 8), else 0. */
static int mgopt__kc_log2(int64_t n) {
  int b;
  for (b = 1; b <= 8; b++)
    if (n == ((int64_t)1 << b)) return b;
  return 0;
}

static int mgopt__kc_index_bits(mgopt_dtype dt) {
  switch (dt) {
    case MGOPT_DT_UINT1: case MGOPT_DT_UINT2: case MGOPT_DT_UINT3: case MGOPT_DT_UINT4:
    case MGOPT_DT_UINT6: case MGOPT_DT_UINT8:
      return mgopt_dtype_bits(dt);
    default: return 0;
  }
}

/* iOS16: indices are uint8 bytes holding packed nbits fields, lut is a vector
   of 2^nbits entries, shape gives the output shape. */
static int mgopt__kc_lut16(mgopt__kctx *k, mgopt_tensor *ind, mgopt_tensor *lut, const int64_t *sv,
                           int64_t ns) {
  int64_t shape[MGOPT_MAX_RANK], n, bits, i;
  int nb = mgopt__kc_log2(lut->numel);
  size_t es = mgopt__k_esize((mgopt_dtype)lut->dtype);
  const uint8_t *idx, *lv;
  uint8_t *dst;
  void *od;
  int32_t d;
  int r;
  if (ind->dtype != MGOPT_DT_UINT8 || ind->rank != 1 || lut->rank != 1 || !nb || !es ||
      ns > MGOPT_MAX_RANK)
    return MGOPT__K_NO;
  for (d = 0; d < (int32_t)ns; d++) {
    if (sv[d] < 0) return MGOPT__K_NO;
    shape[d] = sv[d];
  }
  n = mgopt__k_numel((int32_t)ns, shape);
  if (n < 0 || !mgopt__mul_i64(n, nb, &bits) || (bits + 7) / 8 != ind->numel) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, (mgopt_dtype)lut->dtype, (int32_t)ns, shape, &od);
  if (r != MGOPT__K_OK) return r;
  idx = (const uint8_t *)mgopt__k_data(k, ind);
  lv = (const uint8_t *)mgopt__k_data(k, lut);
  if (!idx || !lv) return MGOPT__K_OOM;
  dst = (uint8_t *)od;
  for (i = 0; i < n; i++) memcpy(dst + (size_t)i * es, lv + (size_t)mgopt__k_bits(idx, i, nb) * es, es);
  return MGOPT__K_OK;
}

/* iOS18 palettes for indices of shape ishape (rank dims) and nb-bit
   entries: the output shape, the indices per palette along each dim (blk),
   the vector length and vector axis. 0 when the lut does not fit. */
static int mgopt__kc_lut18_form(const mgopt_op *op, int nb, int32_t rank, const int64_t *ishape,
                                const mgopt_tensor *lut, int64_t *shape, int64_t *blk, int64_t *vs, int32_t *va) {
  int32_t d;
  *va = 0;
  if (!nb || rank < 1 || rank + 2 > MGOPT_MAX_RANK || lut->rank != rank + 2) return 0;
  if (lut->shape[rank] != ((int64_t)1 << nb)) return 0;
  *vs = lut->shape[rank + 1];
  if (*vs < 1) return 0;
  if (*vs > 1 || mgopt__k_has_param(op, "vector_axis")) {
    if (!mgopt__k_has_param(op, "vector_axis") || !mgopt__k_axis(mgopt_op_get_int(op, "vector_axis", 0), rank, va))
      return 0;
  }
  for (d = 0; d < rank; d++) {
    if (lut->shape[d] < 1 || ishape[d] % lut->shape[d]) return 0;
    blk[d] = ishape[d] / lut->shape[d];
    shape[d] = ishape[d];
  }
  return mgopt__mul_i64(shape[*va], *vs, &shape[*va]);
}

/* dst (the output shape of mgopt__kc_lut18_form) = the palette entries of
   the ib-bit indices iv (ishape): each index selects a vector of vs
   values laid along axis va. */
static void mgopt__kc_lut18_fill(const uint8_t *iv, int ib, int32_t rank, const int64_t *ishape, const int64_t *blk,
                                 const mgopt_tensor *lut, const uint8_t *lv, int64_t vs, int32_t va,
                                 const int64_t *shape, uint8_t *dst) {
  size_t es = mgopt__k_esize((mgopt_dtype)lut->dtype);
  int64_t lst[MGOPT_MAX_RANK + 2], ost[MGOPT_MAX_RANK], idx[MGOPT_MAX_RANK], n, i, v;
  int32_t d;
  mgopt__k_strides(rank + 2, lut->shape, lst);
  mgopt__k_strides(rank, shape, ost);
  n = mgopt__k_numel(rank, ishape);
  for (d = 0; d < rank; d++) idx[d] = 0;
  for (i = 0; i < n; i++) {
    int64_t lo = (int64_t)mgopt__k_bits(iv, i, ib) * vs, oo = 0;
    for (d = 0; d < rank; d++) {
      lo += (idx[d] / blk[d]) * lst[d];
      oo += (d == va ? idx[d] * vs : idx[d]) * ost[d];
    }
    for (v = 0; v < vs; v++) memcpy(dst + (size_t)(oo + v * ost[va]) * es, lv + (size_t)(lo + v) * es, es);
    for (d = rank - 1; d >= 0; d--) {
      if (++idx[d] < ishape[d]) break;
      idx[d] = 0;
    }
  }
}

/* iOS18: indices is a uintN tensor; lut is [g0..g(r-1), 2^N, VS] with one
   palette per block of indices, and vectors of VS values laid along vector_axis. */
static int mgopt__kc_lut18(mgopt__kctx *k, mgopt_tensor *ind, mgopt_tensor *lut) {
  int32_t rank = ind->rank, va;
  int nb = mgopt__kc_index_bits((mgopt_dtype)ind->dtype);
  int64_t shape[MGOPT_MAX_RANK], blk[MGOPT_MAX_RANK], vs;
  const uint8_t *iv, *lv;
  void *od;
  int r;
  if (!mgopt__k_esize((mgopt_dtype)lut->dtype) || !mgopt__kc_lut18_form(k->op, nb, rank, ind->shape, lut, shape, blk, &vs, &va))
    return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, (mgopt_dtype)lut->dtype, rank, shape, &od);
  if (r != MGOPT__K_OK) return r;
  if (ind->numel == 0) return MGOPT__K_OK;
  iv = (const uint8_t *)mgopt__k_data(k, ind);
  lv = (const uint8_t *)mgopt__k_data(k, lut);
  if (!iv || !lv) return MGOPT__K_OOM;
  mgopt__kc_lut18_fill(iv, nb, rank, ind->shape, blk, lut, lv, vs, va, shape, (uint8_t *)od);
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__kc_lut_to_dense(mgopt__kctx *k) {
  mgopt_tensor *ind = mgopt__k_operand(k, "indices"), *lut = mgopt__k_operand(k, "lut");
  const int64_t *sv;
  int64_t ns;
  if (!ind || !lut) return MGOPT__K_NO;
  ns = mgopt__k_ints(k, "shape", &sv);
  if (ns == -2) return MGOPT__K_NO;
  if (ns >= 0) return mgopt__kc_lut16(k, ind, lut, sv, ns);
  return mgopt__kc_lut18(k, ind, lut);
}

/* ---------------------------------------------------------------- sparse_to_dense */

/* Scatters nonzero_data in order into the positions whose mask bit is set. */
MGOPT__PRIVATE int mgopt__kc_sparse_to_dense(mgopt__kctx *k) {
  mgopt_tensor *nz = mgopt__k_operand(k, "nonzero_data"), *mask = mgopt__k_operand(k, "mask");
  const int64_t *sv;
  int64_t ns, shape[MGOPT_MAX_RANK], n, i, j = 0, set = 0, *vals = NULL;
  int32_t rank, d;
  mgopt_dtype dt;
  size_t es;
  const uint8_t *mv, *src;
  uint8_t *dst;
  void *od;
  int r;
  if (!nz || !mask || nz->rank != 1) return MGOPT__K_NO;
  dt = (mgopt_dtype)nz->dtype;
  es = mgopt__k_esize(dt);
  if (!es && dt != MGOPT_DT_INT4 && dt != MGOPT_DT_UINT4) return MGOPT__K_NO;
  ns = mgopt__k_ints(k, "shape", &sv);
  if (ns == -2) return MGOPT__K_NO;
  if (ns >= 0) {
    /* iOS16: a uint8 vector of ceil(numel / 8) mask bytes */
    if (ns > MGOPT_MAX_RANK || mask->dtype != MGOPT_DT_UINT8 || mask->rank != 1) return MGOPT__K_NO;
    rank = (int32_t)ns;
    for (d = 0; d < rank; d++) shape[d] = sv[d];
    n = mgopt__k_numel(rank, shape);
    if (n < 0 || (n + 7) / 8 != mask->numel) return MGOPT__K_NO;
  } else {
    if (mask->dtype != MGOPT_DT_UINT1) return MGOPT__K_NO;
    rank = mask->rank;
    for (d = 0; d < rank; d++) shape[d] = mask->shape[d];
    n = mask->numel;
  }
  mv = (const uint8_t *)mgopt__k_data(k, mask);
  if (!mv) return MGOPT__K_OOM;
  for (i = 0; i < n; i++) set += (int64_t)mgopt__k_bits(mv, i, 1);
  if (set != nz->numel) return MGOPT__K_NO;
  if (ns >= 0)
    for (i = n; i < mask->numel * 8; i++)
      if (mgopt__k_bits(mv, i, 1)) return MGOPT__K_NO; /* padding bits must be clear */
  r = mgopt__k_out(k, 0, dt, rank, shape, &od);
  if (r != MGOPT__K_OK) return r;
  src = (const uint8_t *)mgopt__k_data(k, nz);
  if (!src) return MGOPT__K_OOM;
  if (!es) {
    vals = (int64_t *)mgopt__k_scratch(k, nz->numel, 8);
    if (!vals) return MGOPT__K_OOM;
    r = mgopt__k_load(k, nz, MGOPT__LANE_I64, vals);
    if (r != MGOPT__K_OK) return r;
  }
  dst = (uint8_t *)od;
  for (i = 0; i < n; i++) {
    if (!mgopt__k_bits(mv, i, 1)) continue;
    if (es) memcpy(dst + (size_t)i * es, src + (size_t)j * es, es);
    else mgopt__k_store_i64_at(dt, dst, i, vals[j]);
    j++;
  }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- blockwise_shift_scale */

/* p (shape s, in the F32 lane) repeated blockwise to shape (rank, shape):
   out[i] = p[i / block] per dim, via a strided view [s0, b0, s1, b1, ...]. */
static void mgopt__kc_expand_blocks(const float *p, const mgopt_tensor *pt, int32_t rank, const int64_t *shape,
                                    float *out) {
  int64_t s2[2 * MGOPT_MAX_RANK], st2[2 * MGOPT_MAX_RANK], pst[MGOPT_MAX_RANK];
  int32_t d;
  mgopt__k_strides(pt->rank, pt->shape, pst);
  for (d = 0; d < rank; d++) {
    s2[2 * d] = pt->shape[d];
    s2[2 * d + 1] = shape[d] / pt->shape[d];
    st2[2 * d] = pst[d];
    st2[2 * d + 1] = 0;
  }
  mgopt__k_strided(out, p, 4, 2 * rank, s2, st2, 0);
}

/* The operands scale and offset of a (sparse_)blockwise_shift_scale fit data
   of shape (rank, shape) and dtype xdt: 1, else 0. */
static int mgopt__kc_shift_form(const mgopt_op *op, mgopt_dtype xdt, int32_t rank, const int64_t *shape,
                                const mgopt_tensor *s, const mgopt_tensor *off) {
  int32_t d;
  if (mgopt__k_lane((mgopt_dtype)s->dtype) != MGOPT__LANE_F32 || rank < 1 || s->rank != rank) return 0;
  if (mgopt__k_lane(xdt) != MGOPT__LANE_F32 && mgopt__k_lane(xdt) != MGOPT__LANE_I64 && xdt != MGOPT_DT_INT4 &&
      xdt != MGOPT_DT_UINT4)
    return 0;
  if (mgopt_op_operand(op, "offset") && !off) return 0;
  if (off && off->rank != s->rank) return 0;
  for (d = 0; d < rank; d++) {
    if (s->shape[d] < 1 || shape[d] % s->shape[d]) return 0;
    if (off && off->shape[d] != s->shape[d]) return 0;
  }
  return 1;
}

/* xv (n values of dtype xdt, shape (rank, shape), in float) becomes
   scale * (xv - offset) computed at the scale's dtype step by step. */
static int mgopt__kc_shift_scale(mgopt__kctx *k, float *xv, int32_t rank, const int64_t *shape, int64_t n,
                                 mgopt_tensor *s, mgopt_tensor *off) {
  mgopt_dtype dt = (mgopt_dtype)s->dtype;
  float *sp, *sv, *op_ = NULL, *ov = NULL;
  int64_t i;
  int round_diff, r;
  /* numpy promotes data - offset to fp32 when the offset is fp32 and the scale fp16 */
  round_diff = !off || !mgopt_dtype_is_float((mgopt_dtype)off->dtype) || off->dtype == s->dtype;
  sp = (float *)mgopt__k_scratch(k, s->numel, 4);
  sv = (float *)mgopt__k_scratch(k, n, 4);
  if (off) {
    op_ = (float *)mgopt__k_scratch(k, off->numel, 4);
    ov = (float *)mgopt__k_scratch(k, n, 4);
  }
  if (!sp || !sv || (off && (!op_ || !ov))) return MGOPT__K_OOM;
  r = mgopt__k_load(k, s, MGOPT__LANE_F32, sp);
  if (r == MGOPT__K_OK && off) r = mgopt__k_load(k, off, MGOPT__LANE_F32, op_);
  if (r != MGOPT__K_OK) return r;
  mgopt__kc_expand_blocks(sp, s, rank, shape, sv);
  if (off) mgopt__kc_expand_blocks(op_, off, rank, shape, ov);
  mgopt__k_round_f32(dt, xv, n); /* data.astype(scale dtype) */
  if (off) {
    for (i = 0; i < n; i++) xv[i] = xv[i] - ov[i];
    if (round_diff) mgopt__k_round_f32(dt, xv, n);
  }
  for (i = 0; i < n; i++) xv[i] = sv[i] * xv[i];
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__kc_blockwise_shift_scale(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "data"), *s = mgopt__k_operand(k, "scale"),
               *off = mgopt__k_operand(k, "offset");
  float *xv;
  void *od;
  int r;
  if (!x || !s || !mgopt__kc_shift_form(k->op, (mgopt_dtype)x->dtype, x->rank, x->shape, s, off)) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, (mgopt_dtype)s->dtype, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  if (x->numel == 0) return MGOPT__K_OK;
  xv = (float *)mgopt__k_scratch(k, x->numel, 4);
  if (!xv) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, MGOPT__LANE_F32, xv);
  if (r == MGOPT__K_OK) r = mgopt__kc_shift_scale(k, xv, x->rank, x->shape, x->numel, s, off);
  if (r != MGOPT__K_OK) return r;
  mgopt__k_store(MGOPT__LANE_F32, xv, x->numel, (mgopt_dtype)s->dtype, od);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- joint (sparse) forms

   constexpr_lut_to_sparse and constexpr_sparse_blockwise_shift_scale
   decompress the non-zero entries of a sparse weight: the result is the
   dense decompression of the densified data (zeros where the mask is
   clear), read back at the positions of the output mask in row-major
   order, so a following constexpr_sparse_to_dense gives the dense weight. */

/* Mask bits set among the n bits of mv. */
static int64_t mgopt__kc_popcount(const uint8_t *mv, int64_t n) {
  int64_t i, c = 0;
  for (i = 0; i < n; i++) c += (int64_t)((mv[i >> 3] >> (i & 7)) & 1u);
  return c;
}

MGOPT__PRIVATE int mgopt__kc_lut_to_sparse(mgopt__kctx *k) {
  mgopt_tensor *mask = mgopt__k_operand(k, "indices_mask"), *nz = mgopt__k_operand(k, "indices_nonzero_data"),
               *lut = mgopt__k_operand(k, "lut");
  int64_t shape[MGOPT_MAX_RANK], blk[MGOPT_MAX_RANK], ost[MGOPT_MAX_RANK], idx[MGOPT_MAX_RANK], vs, n, m, i, j, v;
  int32_t rank, va, d;
  int nb;
  size_t es;
  const uint8_t *mv, *nv, *lv;
  uint8_t *ix, *dense, *om, *ov;
  void *o0, *o1;
  int r;
  if (!mask || !nz || !lut || mask->dtype != MGOPT_DT_UINT1 || nz->rank != 1) return MGOPT__K_NO;
  rank = mask->rank;
  nb = mgopt__kc_index_bits((mgopt_dtype)nz->dtype);
  es = mgopt__k_esize((mgopt_dtype)lut->dtype);
  if (!es || !mgopt__kc_lut18_form(k->op, nb, rank, mask->shape, lut, shape, blk, &vs, &va)) return MGOPT__K_NO;
  n = mask->numel;
  m = mgopt__k_numel(rank, shape);
  mv = (const uint8_t *)mgopt__k_data(k, mask);
  nv = (const uint8_t *)mgopt__k_data(k, nz);
  lv = (const uint8_t *)mgopt__k_data(k, lut);
  if (!mv || (nz->numel && !nv) || (lut->numel && !lv)) return MGOPT__K_OOM;
  if (m < 0 || mgopt__kc_popcount(mv, n) != nz->numel) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, MGOPT_DT_UINT1, rank, shape, &o0);
  if (r == MGOPT__K_OK) {
    int64_t d1 = nz->numel * vs;
    r = mgopt__k_out(k, 1, (mgopt_dtype)lut->dtype, 1, &d1, &o1);
  }
  if (r != MGOPT__K_OK || n == 0) return r;
  ix = (uint8_t *)mgopt__k_scratch(k, n, 1);
  dense = (uint8_t *)mgopt__k_scratch(k, m, es);
  if (!ix || !dense) return MGOPT__K_OOM;
  for (i = j = 0; i < n; i++) ix[i] = (mv[i >> 3] >> (i & 7)) & 1u ? (uint8_t)mgopt__k_bits(nv, j++, nb) : 0;
  mgopt__kc_lut18_fill(ix, 8, rank, mask->shape, blk, lut, lv, vs, va, shape, dense);
  /* the mask widened along va, then the values it selects in row-major order */
  om = (uint8_t *)o0;
  ov = (uint8_t *)o1;
  mgopt__k_strides(rank, shape, ost);
  for (d = 0; d < rank; d++) idx[d] = 0;
  for (i = 0; i < n; i++) {
    if ((mv[i >> 3] >> (i & 7)) & 1u) {
      int64_t oo = 0;
      for (d = 0; d < rank; d++) oo += (d == va ? idx[d] * vs : idx[d]) * ost[d];
      for (v = 0; v < vs; v++) {
        int64_t o = oo + v * ost[va];
        om[o >> 3] = (uint8_t)(om[o >> 3] | (1u << (o & 7)));
      }
    }
    for (d = rank - 1; d >= 0; d--) {
      if (++idx[d] < mask->shape[d]) break;
      idx[d] = 0;
    }
  }
  for (i = j = 0; i < m; i++)
    if ((om[i >> 3] >> (i & 7)) & 1u) memcpy(ov + (size_t)j++ * es, dense + (size_t)i * es, es);
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__kc_sparse_blockwise_shift_scale(mgopt__kctx *k) {
  mgopt_tensor *mask = mgopt__k_operand(k, "data_mask"), *nz = mgopt__k_operand(k, "nonzero_data"),
               *s = mgopt__k_operand(k, "scale"), *off = mgopt__k_operand(k, "offset");
  int64_t n, i, j, d1;
  float *xv, *dv;
  const uint8_t *mv;
  void *o0, *o1;
  int r;
  if (!mask || !nz || !s || mask->dtype != MGOPT_DT_UINT1 || nz->rank != 1 ||
      !mgopt__kc_shift_form(k->op, (mgopt_dtype)nz->dtype, mask->rank, mask->shape, s, off))
    return MGOPT__K_NO;
  n = mask->numel;
  mv = (const uint8_t *)mgopt__k_data(k, mask);
  if (!mv) return MGOPT__K_OOM;
  if (mgopt__kc_popcount(mv, n) != nz->numel) return MGOPT__K_NO;
  d1 = nz->numel;
  r = mgopt__k_out(k, 0, MGOPT_DT_UINT1, mask->rank, mask->shape, &o0);
  if (r == MGOPT__K_OK) r = mgopt__k_out(k, 1, (mgopt_dtype)s->dtype, 1, &d1, &o1);
  if (r != MGOPT__K_OK || n == 0) return r;
  memcpy(o0, mv, (size_t)((n + 7) / 8));
  xv = (float *)mgopt__k_scratch(k, n, 4);
  dv = (float *)mgopt__k_scratch(k, d1 ? d1 : 1, 4);
  if (!xv || !dv) return MGOPT__K_OOM;
  r = mgopt__k_load(k, nz, MGOPT__LANE_F32, dv);
  if (r != MGOPT__K_OK) return r;
  for (i = j = 0; i < n; i++) xv[i] = (mv[i >> 3] >> (i & 7)) & 1u ? dv[j++] : 0.0f;
  r = mgopt__kc_shift_scale(k, xv, mask->rank, mask->shape, n, s, off);
  if (r != MGOPT__K_OK) return r;
  for (i = j = 0; i < n; i++)
    if ((mv[i >> 3] >> (i & 7)) & 1u) dv[j++] = xv[i];
  mgopt__k_store(MGOPT__LANE_F32, dv, d1, (mgopt_dtype)s->dtype, o1);
  return MGOPT__K_OK;
}
