/* src/kernels/onnx_quant.c — kernels of ONNX's integer and quantized ops without a MIL op: DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv.

   Numeric contract (the ONNX operator documents and ONNX's reference
   implementation; every result is an exact integer, no tolerance).
   - Operands are int8 or uint8 (any mix); zero points have the operand's
     range. `x - zero_point` is exact (int32).
   - MatMulInteger and ConvInteger: the sum of products is exact in int64
     and stored modulo 2^32, which is what an int32 accumulator gives when
     it overflows (the only overflow ONNX allows). The output is int32.
     ConvInteger pads with the input's zero point (a padded element adds 0).
   - QLinearMatMul and QLinearConv: the int32 accumulator (plus QLinearConv's
     int32 bias, modulo 2^32) is requantized as
       y = saturate(round_half_even(acc * m) + y_zero_point),
       m = fp32(fp32(a_scale * b_scale) / y_scale),
     the multiplier m rounded to fp32 at each step, the product acc * m in
     double (as ONNX's reference computes it), saturation to the range of
     y_zero_point's dtype (int8 [-128, 127], uint8 [0, 255]).
   - DynamicQuantizeLinear (fp32 in, uint8 out), every step rounded to fp32:
       hi = max(0, max(x)), lo = min(0, min(x)),
       y_scale = fp32((hi == lo ? 1 : hi - lo) / 255),
       y_zero_point = round_half_even(clamp(fp32(0 - lo / y_scale), 0, 255)),
       y = clamp(round_half_even(fp32(x / y_scale)) + y_zero_point, 0, 255).
     An empty or all-zero x gives y_scale = 1/255 and zero point 0 (ONNX's
     reference and conformance data; the formula alone would divide by 0,
     ONNX Runtime 1.30 gives y_scale 1.0; y and the zero point agree). NaN elements are
     skipped by min and max and quantize to the zero point.
   Scales and zero points: per tensor (one element), per row of `a` and per
   column of `b` for the matmuls (a vector of M / N elements, or the
   N-D forms [..., M, 1] and [..., 1, N] of the ONNX documents), per output
   channel for the weights of the convolutions. Other shapes, other dtypes
   (float8, 4-bit) and real-valued inputs the ops do not define are declined
   (the op is then "cannot evaluate"). */
#include "onnx_ops.h"

/* ---------------------------------------------------------------- arithmetic */

/* Round half to even of a double (exact: floor and the comparison are exact). */
static double mgopt__oxq_rne(double v) {
  double f = floor(v), d = v - f;
  if (d > 0.5) return f + 1.0;
  if (d < 0.5) return f;
  return fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

/* An fp32 operation computed in double and rounded once to fp32: for + - * /
   of two fp32 values this is the correctly rounded fp32 result on every
   host, whatever its FLT_EVAL_METHOD. */
static float mgopt__oxq_f32(double v) { return (float)v; }

/* 1 for int8 / uint8; *lo and *hi receive the range. */
static int mgopt__oxq_is_8bit(mgopt_dtype dt, int64_t *lo, int64_t *hi) {
  *lo = *hi = 0; /* set on every path (g++ -O2 cannot see that callers check the result) */
  if (dt == MGOPT_DT_INT8) {
    *lo = -128;
    *hi = 127;
    return 1;
  }
  if (dt == MGOPT_DT_UINT8) {
    *lo = 0;
    *hi = 255;
    return 1;
  }
  return 0;
}

/* A rounded value saturated to [lo, hi]; NaN (a NaN or infinite scale) gives nan_as. */
static int64_t mgopt__oxq_sat(double q, int64_t lo, int64_t hi, int64_t nan_as) {
  if (q != q) return nan_as;
  if (q <= (double)lo) return lo;
  if (q >= (double)hi) return hi;
  return (int64_t)q;
}

/* v modulo 2^32 as a signed int32 (two's complement wraparound). */
static int64_t mgopt__oxq_wrap32(int64_t v) {
  uint32_t u = (uint32_t)((uint64_t)v & 0xffffffffu);
  return u >= 0x80000000u ? (int64_t)u - (int64_t)4294967296LL : (int64_t)u;
}

static void *mgopt__oxq_alloc(mgopt__ox *c, int64_t n, size_t esz, size_t *bytes) {
  void *m;
  *bytes = esz * (size_t)(n > 0 ? n : 1);
  m = mgopt__heap_realloc(&c->p->alloc, NULL, 0, *bytes);
  if (!m) mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
  return m;
}

/* ---------------------------------------------------------------- per-row / per-column parameters */

/* How a scale or zero point of an operand X is indexed. X is seen as
   [batch..., R, K] (rows, the `a` side) or [batch..., K, R] (columns, the
   `b` side); the parameter gives one value per tensor, per r, or per
   (batch, r). */
typedef struct mgopt__oxq_vec {
  const mgopt_tensor *t; /* NULL: absent (0) */
  int per;               /* 0 per tensor, 1 per r, 2 per (batch, r) */
  int64_t r;             /* R */
} mgopt__oxq_vec;

/* Classifies parameter t of operand x (rank xr >= 1, shape xs; `cols`: the
   `b` side). MGOPT__OX_OK or MGOPT__OX_NO for a shape ONNX does not define. */
static int mgopt__oxq_vec_of(mgopt__ox *c, const char *what, const mgopt_tensor *t, int32_t xr, const int64_t *xs,
                             int cols, mgopt__oxq_vec *v) {
  int32_t rdim, kdim, d;
  int same = 1;
  memset(v, 0, sizeof *v);
  v->t = t;
  if (!t || t->numel == 1) return MGOPT__OX_OK;
  if (xr < 2) return mgopt__ox_no(c, "%s has %lld elements for an operand of rank 1", what, (long long)t->numel);
  rdim = cols ? xr - 1 : xr - 2;
  kdim = cols ? xr - 2 : xr - 1;
  v->r = xs[rdim];
  if (t->rank == 1 && t->numel == v->r) {
    v->per = 1;
    return MGOPT__OX_OK;
  }
  if (t->rank != xr || t->shape[rdim] != v->r || t->shape[kdim] != 1)
    return mgopt__ox_no(c, "%s has a shape that is neither per tensor nor per %s", what, cols ? "column" : "row");
  for (d = 0; d < xr - 2; d++) same &= t->shape[d] == xs[d];
  if (t->numel == v->r) v->per = 1;
  else if (same) v->per = 2;
  else return mgopt__ox_no(c, "%s has batch dims other than its operand's", what);
  return MGOPT__OX_OK;
}

static int64_t mgopt__oxq_vec_int(const mgopt__oxq_vec *v, int64_t batch, int64_t r) {
  if (!v->t) return 0;
  return mgopt__ox_geti(v->t, v->per == 0 ? 0 : v->per == 1 ? r : batch * v->r + r);
}

static double mgopt__oxq_vec_real(const mgopt__oxq_vec *v, int64_t batch, int64_t r) {
  return mgopt__ox_getf(v->t, v->per == 0 ? 0 : v->per == 1 ? r : batch * v->r + r);
}

/* ---------------------------------------------------------------- integer matmul */

/* The geometry of an ONNX (numpy) matmul of a and b. */
typedef struct mgopt__oxq_mm {
  int64_t m, k, n, nbatch;
  int32_t rank;
  int64_t shape[MGOPT_MAX_RANK];
  int64_t *abatch, *bbatch; /* per output batch, the batch index of a and of b */
  int32_t *acc;             /* nbatch * m * n accumulators (int32, wrapped) */
  size_t abytes, bbytes, accbytes;
} mgopt__oxq_mm;

static void mgopt__oxq_mm_free(mgopt__ox *c, mgopt__oxq_mm *g) {
  if (g->abatch) mgopt__heap_free(&c->p->alloc, g->abatch, g->abytes);
  if (g->bbatch) mgopt__heap_free(&c->p->alloc, g->bbatch, g->bbytes);
  if (g->acc) mgopt__heap_free(&c->p->alloc, g->acc, g->accbytes);
  memset(g, 0, sizeof *g);
}

/* The flat batch index, in a batch shape (r, s), of output batch index idx
   (rank orank) under broadcasting. */
static int64_t mgopt__oxq_bidx(int32_t r, const int64_t *s, int32_t orank, const int64_t *idx) {
  int64_t off = 0, stride = 1;
  int32_t d;
  for (d = r - 1; d >= 0; d--) {
    if (s[d] != 1) off += idx[d + orank - r] * stride;
    stride *= s[d];
  }
  return off;
}

/* acc = (a - azp) @ (b - bzp), numpy matmul broadcasting, int32 wrapped. */
static int mgopt__oxq_matmul(mgopt__ox *c, const mgopt_tensor *a, const mgopt_tensor *b, const mgopt__oxq_vec *azp,
                             const mgopt__oxq_vec *bzp, mgopt__oxq_mm *g) {
  int32_t abr, bbr, obr = 0, d;
  int64_t obatch[MGOPT_MAX_RANK], idx[MGOPT_MAX_RANK], ob, i, j, kk, e;
  int32_t *as = NULL, *bs = NULL;
  size_t asb = 0, bsb = 0;
  int st = MGOPT__OX_OK;
  memset(g, 0, sizeof *g);
  if (a->rank < 1 || b->rank < 1) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "%s of a scalar", c->name);
  abr = a->rank >= 2 ? a->rank - 2 : 0;
  bbr = b->rank >= 2 ? b->rank - 2 : 0;
  g->m = a->rank >= 2 ? a->shape[a->rank - 2] : 1;
  g->k = a->shape[a->rank - 1];
  g->n = b->rank >= 2 ? b->shape[b->rank - 1] : 1;
  if ((b->rank >= 2 ? b->shape[b->rank - 2] : b->shape[0]) != g->k)
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "%s: inner dims %lld and %lld differ", c->name, (long long)g->k,
                          (long long)(b->rank >= 2 ? b->shape[b->rank - 2] : b->shape[0]));
  if (!mgopt__k_bcast_shape(abr, a->shape, bbr, b->shape, &obr, obatch))
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "%s: the batch dims do not broadcast", c->name);
  g->rank = obr;
  memcpy(g->shape, obatch, sizeof(int64_t) * (size_t)obr);
  if (a->rank >= 2) g->shape[g->rank++] = g->m;
  if (b->rank >= 2) {
    if (g->rank >= MGOPT_MAX_RANK) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "%s: rank too large", c->name);
    g->shape[g->rank++] = g->n;
  }
  g->nbatch = mgopt__k_numel(obr, obatch);
  if (g->nbatch < 0 || mgopt__k_numel(g->rank, g->shape) < 0)
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "%s: invalid output shape", c->name);
  if (c->max_elements > 0 && mgopt__k_numel(g->rank, g->shape) > c->max_elements)
    return mgopt__ox_fail(c, MGOPT_ERR_LIMIT, "%s: the output is above the element limit", c->name);
  g->abatch = (int64_t *)mgopt__oxq_alloc(c, g->nbatch, sizeof(int64_t), &g->abytes);
  g->bbatch = g->abatch ? (int64_t *)mgopt__oxq_alloc(c, g->nbatch, sizeof(int64_t), &g->bbytes) : NULL;
  g->acc = g->bbatch ? (int32_t *)mgopt__oxq_alloc(c, g->nbatch * g->m * g->n, sizeof(int32_t), &g->accbytes) : NULL;
  as = g->acc ? (int32_t *)mgopt__oxq_alloc(c, a->numel, sizeof(int32_t), &asb) : NULL;
  bs = as ? (int32_t *)mgopt__oxq_alloc(c, b->numel, sizeof(int32_t), &bsb) : NULL;
  if (!bs) {
    st = MGOPT__OX_ERR;
    goto done;
  }
  /* the operands minus their zero points */
  for (e = 0; e < a->numel; e++) {
    int64_t row = (e / g->k) % g->m, batch = e / (g->k * g->m);
    as[e] = (int32_t)(mgopt__ox_geti(a, e) - mgopt__oxq_vec_int(azp, batch, row));
  }
  for (e = 0; e < b->numel; e++) {
    int64_t col = e % g->n, batch = e / (g->k * g->n);
    bs[e] = (int32_t)(mgopt__ox_geti(b, e) - mgopt__oxq_vec_int(bzp, batch, col));
  }
  memset(idx, 0, sizeof idx);
  for (ob = 0; ob < g->nbatch; ob++) {
    const int32_t *pa, *pb;
    g->abatch[ob] = mgopt__oxq_bidx(abr, a->shape, obr, idx);
    g->bbatch[ob] = mgopt__oxq_bidx(bbr, b->shape, obr, idx);
    pa = as + g->abatch[ob] * g->m * g->k;
    pb = bs + g->bbatch[ob] * g->k * g->n;
    for (i = 0; i < g->m; i++)
      for (j = 0; j < g->n; j++) {
        uint64_t s = 0; /* modulo 2^64: int32 operands' sums may pass int64 */
        for (kk = 0; kk < g->k; kk++) s += (uint64_t)((int64_t)pa[i * g->k + kk] * pb[kk * g->n + j]);
        g->acc[(ob * g->m + i) * g->n + j] = (int32_t)mgopt__oxq_wrap32((int64_t)(s & 0xffffffffu));
      }
    for (d = obr - 1; d >= 0; d--) {
      if (++idx[d] < obatch[d]) break;
      idx[d] = 0;
    }
  }
done:
  if (as) mgopt__heap_free(&c->p->alloc, as, asb);
  if (bs) mgopt__heap_free(&c->p->alloc, bs, bsb);
  if (st != MGOPT__OX_OK) mgopt__oxq_mm_free(c, g);
  return st;
}

/* The 8-bit operand in input i (present). */
static const mgopt_tensor *mgopt__oxq_operand(mgopt__ox *c, int32_t i, int *st) {
  const mgopt_tensor *t = mgopt__ox_need(c, i);
  int64_t lo, hi;
  *st = MGOPT__OX_OK;
  if (!t) *st = MGOPT__OX_ERR;
  else if (!mgopt__oxq_is_8bit((mgopt_dtype)t->dtype, &lo, &hi))
    *st = mgopt__ox_no(c, "%s of %s (int8 and uint8 only)", c->name, mgopt_dtype_name((mgopt_dtype)t->dtype));
  return *st == MGOPT__OX_OK ? t : NULL;
}

/* A zero point (optional, integer) or a scale (real) input. */
static int mgopt__oxq_param(mgopt__ox *c, int32_t i, int real, const mgopt_tensor **t) {
  *t = mgopt__ox_in(c, i);
  if (!*t) return real ? mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "%s: input %d is missing", c->name, (int)i)
                       : MGOPT__OX_OK;
  if (real ? !mgopt__ox_is_real((mgopt_dtype)(*t)->dtype) : !mgopt_dtype_is_int((mgopt_dtype)(*t)->dtype))
    return mgopt__ox_no(c, "%s: input %d is %s", c->name, (int)i, mgopt_dtype_name((mgopt_dtype)(*t)->dtype));
  return MGOPT__OX_OK;
}

/* MatMulInteger(A, B, a_zero_point, b_zero_point) -> int32. */
static int mgopt__oxq_matmul_integer(mgopt__ox *c) {
  const mgopt_tensor *a, *b, *az, *bz;
  mgopt__oxq_vec av, bv;
  mgopt__oxq_mm g;
  int st;
  int64_t e, n;
  if (!(a = mgopt__oxq_operand(c, 0, &st)) || !(b = mgopt__oxq_operand(c, 1, &st))) return st;
  if ((st = mgopt__oxq_param(c, 2, 0, &az)) != MGOPT__OX_OK || (st = mgopt__oxq_param(c, 3, 0, &bz)) != MGOPT__OX_OK)
    return st;
  if ((st = mgopt__oxq_vec_of(c, "a_zero_point", az, a->rank, a->shape, 0, &av)) != MGOPT__OX_OK ||
      (st = mgopt__oxq_vec_of(c, "b_zero_point", bz, b->rank, b->shape, 1, &bv)) != MGOPT__OX_OK)
    return st;
  if ((st = mgopt__oxq_matmul(c, a, b, &av, &bv, &g)) != MGOPT__OX_OK) return st;
  st = mgopt__ox_out(c, 0, MGOPT_DT_INT32, g.rank, g.shape);
  n = g.nbatch * g.m * g.n;
  for (e = 0; st == MGOPT__OX_OK && e < n; e++) ((int32_t *)c->out[0]->data)[e] = g.acc[e];
  mgopt__oxq_mm_free(c, &g);
  return st;
}

/* The dtype and range of the quantized output: y_zero_point's dtype, else fallback's. */
static int mgopt__oxq_out_type(mgopt__ox *c, const mgopt_tensor *yz, const mgopt_tensor *fallback, mgopt_dtype *dt,
                               int64_t *lo, int64_t *hi) {
  *dt = (mgopt_dtype)(yz ? yz->dtype : fallback->dtype);
  if (!mgopt__oxq_is_8bit(*dt, lo, hi)) return mgopt__ox_no(c, "%s to %s", c->name, mgopt_dtype_name(*dt));
  return MGOPT__OX_OK;
}

/* QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point). */
static int mgopt__oxq_qlinear_matmul(mgopt__ox *c) {
  const mgopt_tensor *a, *b, *as, *az, *bs, *bz, *ys, *yz;
  mgopt__oxq_vec asv, azv, bsv, bzv;
  mgopt__oxq_mm g;
  mgopt_dtype dt;
  int64_t lo, hi, ob, i, j;
  double yscale, yzp;
  int st;
  if (!(a = mgopt__oxq_operand(c, 0, &st)) || !(b = mgopt__oxq_operand(c, 3, &st))) return st;
  if ((st = mgopt__oxq_param(c, 1, 1, &as)) != MGOPT__OX_OK || (st = mgopt__oxq_param(c, 2, 0, &az)) != MGOPT__OX_OK ||
      (st = mgopt__oxq_param(c, 4, 1, &bs)) != MGOPT__OX_OK || (st = mgopt__oxq_param(c, 5, 0, &bz)) != MGOPT__OX_OK ||
      (st = mgopt__oxq_param(c, 6, 1, &ys)) != MGOPT__OX_OK || (st = mgopt__oxq_param(c, 7, 0, &yz)) != MGOPT__OX_OK)
    return st;
  if ((st = mgopt__oxq_vec_of(c, "a_scale", as, a->rank, a->shape, 0, &asv)) != MGOPT__OX_OK ||
      (st = mgopt__oxq_vec_of(c, "a_zero_point", az, a->rank, a->shape, 0, &azv)) != MGOPT__OX_OK ||
      (st = mgopt__oxq_vec_of(c, "b_scale", bs, b->rank, b->shape, 1, &bsv)) != MGOPT__OX_OK ||
      (st = mgopt__oxq_vec_of(c, "b_zero_point", bz, b->rank, b->shape, 1, &bzv)) != MGOPT__OX_OK)
    return st;
  if (ys->numel != 1 || (yz && yz->numel != 1)) return mgopt__ox_no(c, "%s: a y_scale or y_zero_point per row", c->name);
  if ((st = mgopt__oxq_out_type(c, yz, a, &dt, &lo, &hi)) != MGOPT__OX_OK) return st;
  yscale = (double)mgopt__oxq_f32(mgopt__ox_getf(ys, 0));
  yzp = yz ? (double)mgopt__ox_geti(yz, 0) : 0.0;
  if ((st = mgopt__oxq_matmul(c, a, b, &azv, &bzv, &g)) != MGOPT__OX_OK) return st;
  st = mgopt__ox_out(c, 0, dt, g.rank, g.shape);
  for (ob = 0; st == MGOPT__OX_OK && ob < g.nbatch; ob++)
    for (i = 0; i < g.m; i++)
      for (j = 0; j < g.n; j++) {
        int64_t e = (ob * g.m + i) * g.n + j;
        double sa = (double)mgopt__oxq_f32(mgopt__oxq_vec_real(&asv, g.abatch[ob], i));
        double sb = (double)mgopt__oxq_f32(mgopt__oxq_vec_real(&bsv, g.bbatch[ob], j));
        double m = (double)mgopt__oxq_f32((double)mgopt__oxq_f32(sa * sb) / yscale);
        double q = mgopt__oxq_rne((double)g.acc[e] * m) + yzp;
        mgopt__ox_seti(c->out[0], e, mgopt__oxq_sat(q, lo, hi, (int64_t)yzp));
      }
  mgopt__oxq_mm_free(c, &g);
  return st;
}

/* ---------------------------------------------------------------- integer convolution */

/* acc[n, m, o...] = sum over the group's channels and the kernel of
   (x - xzp) * (w - wzp[m]), int32 wrapped; pads add 0. On success *acc
   (int32, *accbytes) and the output shape (rank x->rank) are set. */
static int mgopt__oxq_conv(mgopt__ox *c, const mgopt_tensor *x, const mgopt_tensor *w, const mgopt_tensor *xz,
                           const mgopt_tensor *wz, const mgopt_tensor *bias, int32_t **acc, size_t *accbytes,
                           int64_t *oshape) {
  int32_t nsp = x->rank - 2, d;
  int64_t stride[MGOPT_MAX_RANK], dil[MGOPT_MAX_RANK], pb[MGOPT_MAX_RANK], ksz[MGOPT_MAX_RANK];
  int64_t group = mgopt__ox_int(c, "group", 1), N, C, M, cg, mg, osp = 1, kn = 1, xsp = 1, n, m, o, kq, ci;
  int32_t *xs = NULL, *ws = NULL;
  size_t xsb = 0, wsb = 0;
  const mgopt_attr *at;
  int st = MGOPT__OX_OK;
  *acc = NULL;
  if (x->rank < 3 || w->rank != x->rank)
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "%s: x of rank %d, w of rank %d", c->name, (int)x->rank,
                          (int)w->rank);
  N = x->shape[0];
  C = x->shape[1];
  M = w->shape[0];
  if (group < 1 || C % group != 0 || M % group != 0 || w->shape[1] * group != C)
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "%s: %lld input channels, %lld in w, group %lld", c->name,
                          (long long)C, (long long)w->shape[1], (long long)group);
  cg = C / group;
  mg = M / group;
  if (xz && xz->numel != 1) return mgopt__ox_no(c, "%s: x_zero_point is not per tensor", c->name);
  if (wz && wz->numel != 1 && !(wz->rank == 1 && wz->numel == M))
    return mgopt__ox_no(c, "%s: w_zero_point is neither per tensor nor per output channel", c->name);
  if (bias && (bias->rank != 1 || bias->numel != M || bias->dtype != MGOPT_DT_INT32))
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "%s: the bias is not %lld int32 values", c->name, (long long)M);
  for (d = 0; d < nsp; d++) {
    stride[d] = dil[d] = 1;
    pb[d] = 0;
    ksz[d] = w->shape[d + 2];
  }
  if ((at = mgopt_op_attr(c->op, "kernel_shape")) != NULL && at->kind == MGOPT_ATTR_INTS) {
    if (at->n != nsp) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "%s: kernel_shape has %lld dims", c->name, (long long)at->n);
    for (d = 0; d < nsp; d++)
      if (at->u.ints[d] != ksz[d]) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "%s: kernel_shape is not w's", c->name);
  }
  if ((at = mgopt_op_attr(c->op, "strides")) != NULL && at->kind == MGOPT_ATTR_INTS && at->n == nsp)
    for (d = 0; d < nsp; d++) stride[d] = at->u.ints[d];
  if ((at = mgopt_op_attr(c->op, "dilations")) != NULL && at->kind == MGOPT_ATTR_INTS && at->n == nsp)
    for (d = 0; d < nsp; d++) dil[d] = at->u.ints[d];
  for (d = 0; d < nsp; d++)
    if (stride[d] < 1 || dil[d] < 1) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "%s: a stride or dilation below 1", c->name);
  oshape[0] = N;
  oshape[1] = M;
  for (d = 0; d < nsp; d++) {
    int64_t in = x->shape[d + 2], ek = (ksz[d] - 1) * dil[d] + 1, out, total;
    if (mgopt__ox_str_is(c, "auto_pad", "SAME_UPPER", 0) || mgopt__ox_str_is(c, "auto_pad", "SAME_LOWER", 0)) {
      out = (in + stride[d] - 1) / stride[d];
      total = (out - 1) * stride[d] + ek - in;
      if (total < 0) total = 0;
      pb[d] = mgopt__ox_str_is(c, "auto_pad", "SAME_UPPER", 0) ? total / 2 : total - total / 2;
    } else if (mgopt__ox_str_is(c, "auto_pad", "VALID", 0)) {
      out = in >= ek ? (in - ek) / stride[d] + 1 : 0;
    } else if (mgopt__ox_str_is(c, "auto_pad", "NOTSET", 1)) {
      int64_t pe = 0;
      if ((at = mgopt_op_attr(c->op, "pads")) != NULL && at->kind == MGOPT_ATTR_INTS) {
        if (at->n != 2 * nsp) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "%s: pads has %lld values", c->name, (long long)at->n);
        pb[d] = at->u.ints[d];
        pe = at->u.ints[d + nsp];
      }
      out = in + pb[d] + pe >= ek ? (in + pb[d] + pe - ek) / stride[d] + 1 : 0;
    } else {
      return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "%s: unknown auto_pad", c->name);
    }
    oshape[d + 2] = out;
    osp *= out;
    kn *= ksz[d];
    xsp *= in;
  }
  if (mgopt__k_numel(x->rank, oshape) < 0) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "%s: invalid output shape", c->name);
  if (c->max_elements > 0 && mgopt__k_numel(x->rank, oshape) > c->max_elements)
    return mgopt__ox_fail(c, MGOPT_ERR_LIMIT, "%s: the output is above the element limit", c->name);
  *acc = (int32_t *)mgopt__oxq_alloc(c, N * M * osp, sizeof(int32_t), accbytes);
  xs = *acc ? (int32_t *)mgopt__oxq_alloc(c, x->numel, sizeof(int32_t), &xsb) : NULL;
  ws = xs ? (int32_t *)mgopt__oxq_alloc(c, w->numel, sizeof(int32_t), &wsb) : NULL;
  if (!ws) {
    st = MGOPT__OX_ERR;
    goto done;
  }
  {
    int64_t e, xzp = xz ? mgopt__ox_geti(xz, 0) : 0, per = w->numel / (M ? M : 1);
    for (e = 0; e < x->numel; e++) xs[e] = (int32_t)(mgopt__ox_geti(x, e) - xzp);
    for (e = 0; e < w->numel; e++)
      ws[e] = (int32_t)(mgopt__ox_geti(w, e) - (wz ? mgopt__ox_geti(wz, wz->numel == 1 ? 0 : e / per) : 0));
  }
  for (n = 0; n < N; n++)
    for (m = 0; m < M; m++) {
      int64_t g0 = (m / mg) * cg;
      for (o = 0; o < osp; o++) {
        int64_t oidx[MGOPT_MAX_RANK], rem = o, s = bias ? mgopt__ox_geti(bias, m) : 0;
        for (d = nsp - 1; d >= 0; d--) {
          oidx[d] = rem % oshape[d + 2];
          rem /= oshape[d + 2];
        }
        for (kq = 0; kq < kn; kq++) {
          int64_t krem = kq, xoff = 0, xstride = 1;
          int inside = 1;
          for (d = nsp - 1; d >= 0; d--) {
            int64_t kd = krem % ksz[d], pos = oidx[d] * stride[d] - pb[d] + kd * dil[d];
            krem /= ksz[d];
            if (pos < 0 || pos >= x->shape[d + 2]) inside = 0;
            xoff += pos * xstride;
            xstride *= x->shape[d + 2];
          }
          if (!inside) continue;
          for (ci = 0; ci < cg; ci++)
            s += (int64_t)xs[(n * C + g0 + ci) * xsp + xoff] * ws[(m * cg + ci) * kn + kq];
        }
        (*acc)[(n * M + m) * osp + o] = (int32_t)mgopt__oxq_wrap32(s);
      }
    }
done:
  if (xs) mgopt__heap_free(&c->p->alloc, xs, xsb);
  if (ws) mgopt__heap_free(&c->p->alloc, ws, wsb);
  if (st != MGOPT__OX_OK && *acc) {
    mgopt__heap_free(&c->p->alloc, *acc, *accbytes);
    *acc = NULL;
  }
  return st;
}

/* ConvInteger(x, w, x_zero_point, w_zero_point) -> int32. */
static int mgopt__oxq_conv_integer(mgopt__ox *c) {
  const mgopt_tensor *x, *w, *xz, *wz;
  int64_t oshape[MGOPT_MAX_RANK], e, n;
  int32_t *acc;
  size_t accb = 0;
  int st;
  if (!(x = mgopt__oxq_operand(c, 0, &st)) || !(w = mgopt__oxq_operand(c, 1, &st))) return st;
  if ((st = mgopt__oxq_param(c, 2, 0, &xz)) != MGOPT__OX_OK || (st = mgopt__oxq_param(c, 3, 0, &wz)) != MGOPT__OX_OK)
    return st;
  if ((st = mgopt__oxq_conv(c, x, w, xz, wz, NULL, &acc, &accb, oshape)) != MGOPT__OX_OK) return st;
  st = mgopt__ox_out(c, 0, MGOPT_DT_INT32, x->rank, oshape);
  n = mgopt__k_numel(x->rank, oshape);
  for (e = 0; st == MGOPT__OX_OK && e < n; e++) ((int32_t *)c->out[0]->data)[e] = acc[e];
  mgopt__heap_free(&c->p->alloc, acc, accb);
  return st;
}

/* QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B). */
static int mgopt__oxq_qlinear_conv(mgopt__ox *c) {
  const mgopt_tensor *x, *w, *xsc, *xz, *wsc, *wz, *ysc, *yz, *bias;
  int64_t oshape[MGOPT_MAX_RANK], e, n, osp, lo, hi, M;
  int32_t *acc, d;
  size_t accb = 0;
  mgopt_dtype dt;
  double xscale, yscale, yzp;
  int st;
  if (!(x = mgopt__oxq_operand(c, 0, &st)) || !(w = mgopt__oxq_operand(c, 3, &st))) return st;
  if ((st = mgopt__oxq_param(c, 1, 1, &xsc)) != MGOPT__OX_OK || (st = mgopt__oxq_param(c, 2, 0, &xz)) != MGOPT__OX_OK ||
      (st = mgopt__oxq_param(c, 4, 1, &wsc)) != MGOPT__OX_OK || (st = mgopt__oxq_param(c, 5, 0, &wz)) != MGOPT__OX_OK ||
      (st = mgopt__oxq_param(c, 6, 1, &ysc)) != MGOPT__OX_OK || (st = mgopt__oxq_param(c, 7, 0, &yz)) != MGOPT__OX_OK)
    return st;
  bias = mgopt__ox_in(c, 8);
  M = w->rank >= 1 ? w->shape[0] : 0;
  if (xsc->numel != 1 || ysc->numel != 1 || (yz && yz->numel != 1))
    return mgopt__ox_no(c, "%s: x or y quantized per channel", c->name);
  if (wsc->numel != 1 && !(wsc->rank == 1 && wsc->numel == M))
    return mgopt__ox_no(c, "%s: w_scale is neither per tensor nor per output channel", c->name);
  if ((st = mgopt__oxq_out_type(c, yz, x, &dt, &lo, &hi)) != MGOPT__OX_OK) return st;
  xscale = (double)mgopt__oxq_f32(mgopt__ox_getf(xsc, 0));
  yscale = (double)mgopt__oxq_f32(mgopt__ox_getf(ysc, 0));
  yzp = yz ? (double)mgopt__ox_geti(yz, 0) : 0.0;
  if ((st = mgopt__oxq_conv(c, x, w, xz, wz, bias, &acc, &accb, oshape)) != MGOPT__OX_OK) return st;
  st = mgopt__ox_out(c, 0, dt, x->rank, oshape);
  n = mgopt__k_numel(x->rank, oshape);
  for (osp = 1, d = 2; d < x->rank; d++) osp *= oshape[d];
  for (e = 0; st == MGOPT__OX_OK && e < n; e++) {
    int64_t m = (e / (osp ? osp : 1)) % (M ? M : 1);
    double sw = (double)mgopt__oxq_f32(mgopt__ox_getf(wsc, wsc->numel == 1 ? 0 : m));
    double mul = (double)mgopt__oxq_f32((double)mgopt__oxq_f32(xscale * sw) / yscale);
    double q = mgopt__oxq_rne((double)acc[e] * mul) + yzp;
    mgopt__ox_seti(c->out[0], e, mgopt__oxq_sat(q, lo, hi, (int64_t)yzp));
  }
  mgopt__heap_free(&c->p->alloc, acc, accb);
  return st;
}

/* ---------------------------------------------------------------- dynamic quantization */

/* DynamicQuantizeLinear(x) -> (y uint8, y_scale fp32 scalar, y_zero_point uint8 scalar). */
static int mgopt__oxq_dynamic_quantize(mgopt__ox *c) {
  const mgopt_tensor *x = mgopt__ox_need(c, 0);
  float hi = 0.0f, lo = 0.0f, scale, izp;
  double zp;
  int64_t e;
  int st;
  if (!x) return MGOPT__OX_ERR;
  if (x->dtype != MGOPT_DT_FP32) return mgopt__ox_no(c, "%s of %s (fp32 only)", c->name, mgopt_dtype_name((mgopt_dtype)x->dtype));
  for (e = 0; e < x->numel; e++) {
    float v = ((const float *)x->data)[e];
    if (v > hi) hi = v;
    if (v < lo) lo = v;
  }
  scale = mgopt__oxq_f32((double)(hi == lo ? 1.0f : mgopt__oxq_f32((double)hi - (double)lo)) / 255.0);
  izp = mgopt__oxq_f32(0.0 - (double)mgopt__oxq_f32((double)lo / (double)scale));
  zp = (double)mgopt__oxq_sat(mgopt__oxq_rne((double)izp), 0, 255, 0);
  if ((st = mgopt__ox_out(c, 0, MGOPT_DT_UINT8, x->rank, x->shape)) != MGOPT__OX_OK) return st;
  for (e = 0; e < x->numel; e++) {
    float v = ((const float *)x->data)[e];
    double q = mgopt__oxq_rne((double)mgopt__oxq_f32((double)v / (double)scale)) + zp;
    ((uint8_t *)c->out[0]->data)[e] = (uint8_t)mgopt__oxq_sat(q, 0, 255, (int64_t)zp);
  }
  if (mgopt__ox_wants(c, 1)) {
    if ((st = mgopt__ox_out(c, 1, MGOPT_DT_FP32, 0, NULL)) != MGOPT__OX_OK) return st;
    ((float *)c->out[1]->data)[0] = scale;
  }
  if (mgopt__ox_wants(c, 2)) {
    if ((st = mgopt__ox_out(c, 2, MGOPT_DT_UINT8, 0, NULL)) != MGOPT__OX_OK) return st;
    ((uint8_t *)c->out[2]->data)[0] = (uint8_t)zp;
  }
  return MGOPT__OX_OK;
}

/* One entry point for the table: the op by name. */
MGOPT__PRIVATE int mgopt__ox_quant(mgopt__ox *c) {
  if (strcmp(c->name, "DynamicQuantizeLinear") == 0) return mgopt__oxq_dynamic_quantize(c);
  if (strcmp(c->name, "MatMulInteger") == 0) return mgopt__oxq_matmul_integer(c);
  if (strcmp(c->name, "ConvInteger") == 0) return mgopt__oxq_conv_integer(c);
  if (strcmp(c->name, "QLinearMatMul") == 0) return mgopt__oxq_qlinear_matmul(c);
  if (strcmp(c->name, "QLinearConv") == 0) return mgopt__oxq_qlinear_conv(c);
  return mgopt__ox_no(c, "no integer kernel for %s", c->name);
}
