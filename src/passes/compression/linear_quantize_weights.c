/* src/passes/compression/linear_quantize_weights.c — common::linear_quantize_weights: float weights stored as 8- or 4-bit integers with a scale (and zero point) per tensor, channel or block.

   Spec: mil_graph_passes.txt, compression::linear_quantize_weights; reference mil-passes.md §2.5, §4.1, §4.2, §4.5.

   Before (12 elements: at most weight_threshold, 2048 by default, so the
   weight stays):
     main(%x: (1, 4, fp32)) {
       %w: (3, 4, fp32)* = const(val=[[-2, -10, 6, -3], [0, 0, 0, 0], [1, 2, 3, 4]])
       %y: (1, 3, fp32) = linear(x=%x, weight=%w)
     } -> (%y)
   After:
     main(%x: (1, 4, fp32)) {
       %w: (3, 4, fp32)* = const(val=[[-2, -10, 6, -3], [0, 0, 0, 0], [1, 2, 3, 4]])
       %y: (1, 3, fp32) = linear(x=%x, weight=%w)
     } -> (%y)
   With {mode=linear, dtype=int4, granularity=per_tensor, weight_threshold=0}
   the weight becomes the reference's example [-2, -10, 6, -3] -> [-1, -8, 7, -2]:
       %w_quantized_data: (3, 4, int4)* = const(val=[[-1, -8, 7, -2], [1, 1, 1, 1], [2, 3, 4, 5]])
       %w_quantized_scale: (1, 1, fp32)* = const(val=[[1.0666667]])
       %w_quantized_offset: (1, 1, int4)* = const(val=[[1]])
       %w_quantized: (3, 4, fp32) = constexpr_blockwise_shift_scale(data=%w_quantized_data,
                                      scale=%w_quantized_scale, offset=%w_quantized_offset)
       %y: (1, 3, fp32) = linear(x=%x, weight=%w_quantized)

   Options (defaults as the reference): mode linear_symmetric | linear;
   dtype int8 | uint8 | int4 | uint4; granularity per_tensor | per_channel |
   per_block; block_size 32 (per_block: blocks of that many elements along
   the input axis, one per output channel); weight_threshold 2048 (a weight
   is compressed when it has MORE elements). Per-weight options come from
   the compression configuration (mgopt_compress_config).
   joint_compression (default false; reference §4.6): when true, also take a const that is the
   only operand lut of a constexpr_lut_to_dense or constexpr_lut_to_sparse
   (palettized: the LUT is quantized; only granularity=per_tensor, any other
   fails the pass with MGOPT_ERR_INVALID_ARG as the reference raises) or
   nonzero_data of a constexpr_sparse_to_dense (pruned: the weight is
   densified with its mask and quantized per block of the dense weight, and
   the const becomes constexpr_sparse_blockwise_shift_scale(data_mask = the
   mask, the data at the mask, scale, offset) named <const>_quantized, whose
   non-zero output the sparse_to_dense reads). The weight threshold and
   channel axes are the final weight's.

   Fires on: every weight the compression driver offers (passes/compress.c:
   fp32 or fp16 const of rank >= 2, more than weight_threshold elements,
   read by an op) whose values are all finite. The op emitted is the
   reference's iOS18 form, constexpr_blockwise_shift_scale: it expresses
   every granularity and dtype here. The reference emits
   constexpr_affine_dequantize before iOS18 (8-bit, per tensor or channel
   only); mgopt has no deployment target, and an ONNX writer takes both
   (DequantizeLinear), so the one form is kept.
   Must not fire: on integer, bf16 (the op's output dtype is fp16 or fp32)
   or non-finite weights; per_channel / per_block when the readers do not
   agree on the channel axes or the axis is unknown (an op the driver does
   not know gives out 0, in 1); per_block when the input axis is not a
   multiple of block_size; on consts read by constexpr_* ops (joint: other
   than the three above, or read by anything else too); when the
   program's target refuses the op (an ONNX opset below 13 for per-axis
   scales, below 21 for blocks and 4-bit data).

   Numeric contract (the reference's numpy float arithmetic, in the weight's
   dtype): per block, lo/hi = min/max; linear_symmetric: R = max(|lo|, |hi|),
   vmin = -R, vmax = R; linear: vmin = min(0, lo), vmax = max(0, hi); integer
   range [qmin, qmax] of the dtype, with qmin = -(2^(n-1) - 1) for signed
   and qmax = 2^n - 2 for unsigned in linear_symmetric. scale = (vmax -
   vmin) / (qmax - qmin), each operation rounded to the weight's dtype (fp32:
   float; fp16: to nearest even fp16). q = round_half_even(w / scale) (the
   quotient rounded to the weight's dtype), then zero point added and
   clipped: q = clip(q + zp, qmin, qmax). zp: none for signed
   linear_symmetric; qmax / 2 (127, 7) for unsigned linear_symmetric;
   linear: clip(round_half_even((qmin*vmax - qmax*vmin) / (vmax - vmin)),
   qmin, qmax). A block of zeros (vmax == vmin == 0, where the reference
   divides by zero) gets scale 1 and q = zp (zp = qmin in linear mode), so it
   decompresses to zeros. A scale that underflows to 0 for a nonzero block
   leaves the weight alone. scale is stored in the weight's dtype with the
   weight's rank (1 on every axis not blocked); the zero point, when there
   is one, as `offset` of the data's dtype and the scale's shape.
   Decompression: scale * (q - zp), at the scale's dtype.

   Cost: two passes over each weight (min/max, then quantize), contiguous
   runs with vectorizable inner loops for fp32; O(numel). */
#include "../../passes_internal.h"
/* The fp32 loops in SSE2 (every x86-64) for builds that target no more:
   gcc -O2 vectorizes the scalar loops poorly there (1.26 against 2.05 G
   weights/s). With AVX2 enabled it vectorizes them 8 wide, which is faster
   still (3.1 G/s), so the scalar code stays. */
#if !defined(MGOPT_NO_SIMD) && defined(__SSE2__) && !defined(__AVX2__)
#include <emmintrin.h>
#define MGOPT__LQ_SSE2 1
#endif

static mgopt_opt_def const mgopt__lq_opts[6] = {
    {"mode", MGOPT_OPT_STRING, "linear_symmetric", "linear_symmetric or linear", "linear_symmetric|linear"},
    {"dtype", MGOPT_OPT_STRING, "int8", "int8, uint8, int4 or uint4", "int8|uint8|int4|uint4"},
    {"granularity", MGOPT_OPT_STRING, "per_channel", "per_tensor, per_channel or per_block", "per_tensor|per_channel|per_block"},
    {"block_size", MGOPT_OPT_INT, "32", "per_block: elements per block along the input axis", "1.."},
    {"weight_threshold", MGOPT_OPT_INT, "2048", "compress weights with more elements than this", "0.."},
    {"joint_compression", MGOPT_OPT_BOOL, "false",
     "also quantize LUTs of palettized weights and pruned non-zero data (constexpr_sparse_blockwise_shift_scale)", NULL}};

enum { MGOPT__LQ_MODE, MGOPT__LQ_DTYPE, MGOPT__LQ_GRAN, MGOPT__LQ_BLOCK, MGOPT__LQ_THRESHOLD, MGOPT__LQ_JOINT };

typedef struct mgopt__lq_cfg {
  int linear;        /* mode linear (else linear_symmetric) */
  mgopt_dtype qdt;   /* int8, uint8, int4, uint4 */
  int gran;          /* 0 per_tensor, 1 per_channel, 2 per_block */
  int64_t block;
  int64_t qmin, qmax;
  int has_zp;
} mgopt__lq_cfg;

/* Reads the options; 0 with diag set when one is not valid. */
static int mgopt__lq_config(mgopt_pass_ctx *ctx, const mgopt_opt_value *o, mgopt__lq_cfg *c) {
  const char *mode = o[MGOPT__LQ_MODE].s, *dt = o[MGOPT__LQ_DTYPE].s, *g = o[MGOPT__LQ_GRAN].s;
  int bits, sgn;
  memset(c, 0, sizeof *c);
  if (strcmp(mode, "linear_symmetric") == 0) c->linear = 0;
  else if (strcmp(mode, "linear") == 0) c->linear = 1;
  else return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "linear_quantize_weights: unknown mode '%s'", mode), 0;
  if (strcmp(dt, "int8") == 0) c->qdt = MGOPT_DT_INT8;
  else if (strcmp(dt, "uint8") == 0) c->qdt = MGOPT_DT_UINT8;
  else if (strcmp(dt, "int4") == 0) c->qdt = MGOPT_DT_INT4;
  else if (strcmp(dt, "uint4") == 0) c->qdt = MGOPT_DT_UINT4;
  else return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "linear_quantize_weights: unknown dtype '%s'", dt), 0;
  if (strcmp(g, "per_tensor") == 0) c->gran = 0;
  else if (strcmp(g, "per_channel") == 0) c->gran = 1;
  else if (strcmp(g, "per_block") == 0) c->gran = 2;
  else
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "linear_quantize_weights: unknown granularity '%s'", g), 0;
  c->block = o[MGOPT__LQ_BLOCK].i;
  if (c->gran == 2 && c->block <= 0)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "linear_quantize_weights: block_size must be > 0"), 0;
  if (o[MGOPT__LQ_THRESHOLD].i < 0)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "linear_quantize_weights: weight_threshold must be >= 0"), 0;
  bits = c->qdt == MGOPT_DT_INT4 || c->qdt == MGOPT_DT_UINT4 ? 4 : 8;
  sgn = c->qdt == MGOPT_DT_INT4 || c->qdt == MGOPT_DT_INT8;
  if (sgn) {
    c->qmin = -((int64_t)1 << (bits - 1));
    c->qmax = ((int64_t)1 << (bits - 1)) - 1;
    if (!c->linear) c->qmin = -c->qmax;
  } else {
    c->qmin = 0;
    c->qmax = ((int64_t)1 << bits) - 1;
    if (!c->linear) c->qmax -= 1;
  }
  c->has_zp = c->linear || !sgn;
  return 1;
}

/* x rounded to the weight's dtype (fp32 or fp16). */
static double mgopt__lq_rnd(mgopt_dtype dt, double x) {
  return dt == MGOPT_DT_FP32 ? (double)(float)x : mgopt__pw_round(dt, x);
}

static double mgopt__lq_rne(double x) {
  double f = floor(x), d = x - f;
  if (d > 0.5 || (d == 0.5 && fmod(f, 2.0) != 0.0)) f += 1.0;
  return f;
}

/* The hot loops work on 8 lanes at a time, written out so that compilers
   vectorize them at -O2 (straight-line lane code, no reduction across lanes
   inside the loop), with a scalar tail. */
#define MGOPT__LQ_LANES 8

/* fp32 quotients to integers, rounding half to even, clipped. */
static float mgopt__lq_q1(float x, float s, float zp, float lo, float hi) {
  float y = x / s;
  /* round half to even for |y| < 2^22: adding 1.5 * 2^23 leaves no fraction
     bits. Each step is stored in a float: a host that evaluates float
     expressions in double (FLT_EVAL_METHOD 1, e.g. s390x) would otherwise
     keep the fraction and the conversion below would truncate. */
  float t = y + 12582912.0f;
  float r = t - 12582912.0f;
  r += zp;
  r = r < lo ? lo : r;
  return r > hi ? hi : r;
}

static void mgopt__lq_run_f32(const float *x, int64_t n, float s, float zp, float lo, float hi, uint8_t *q) {
  int64_t i = 0;
  int k;
#ifdef MGOPT__LQ_SSE2
  /* mgopt__lq_q1's steps on 4 lanes, each an IEEE fp32 operation as there
     (no contraction), so the integers are the same bits; the clipped
     integers fit int16, and the last pack's saturation (signed for a signed
     range, unsigned for 0..255) changes none of them. */
  {
    const __m128 vs = _mm_set1_ps(s), vz = _mm_set1_ps(zp), vlo = _mm_set1_ps(lo), vhi = _mm_set1_ps(hi),
                 magic = _mm_set1_ps(12582912.0f);
    int sgn = lo < 0;
    for (; i + 16 <= n; i += 16) {
      __m128i w[4], a, b;
      for (k = 0; k < 4; k++) {
        __m128 y = _mm_div_ps(_mm_loadu_ps(x + i + 4 * k), vs);
        y = _mm_sub_ps(_mm_add_ps(y, magic), magic);
        y = _mm_min_ps(_mm_max_ps(_mm_add_ps(y, vz), vlo), vhi);
        w[k] = _mm_cvttps_epi32(y);
      }
      a = _mm_packs_epi32(w[0], w[1]);
      b = _mm_packs_epi32(w[2], w[3]);
      _mm_storeu_si128((__m128i *)(void *)(q + i), sgn ? _mm_packs_epi16(a, b) : _mm_packus_epi16(a, b));
    }
  }
#endif
  for (; i + 4 * MGOPT__LQ_LANES <= n; i += 4 * MGOPT__LQ_LANES) {
    int32_t v[4 * MGOPT__LQ_LANES];
    for (k = 0; k < 4 * MGOPT__LQ_LANES; k++) v[k] = (int32_t)mgopt__lq_q1(x[i + k], s, zp, lo, hi);
    for (k = 0; k < 4 * MGOPT__LQ_LANES; k++) q[i + k] = (uint8_t)v[k]; /* two's complement byte for signed dtypes */
  }
  for (; i < n; i++) q[i] = (uint8_t)(int32_t)mgopt__lq_q1(x[i], s, zp, lo, hi);
}

static void mgopt__lq_minmax_f32(const float *x, int64_t n, float *mn, float *mx, int *bad) {
  float a[MGOPT__LQ_LANES], b[MGOPT__LQ_LANES];
  int32_t nan[MGOPT__LQ_LANES];
  int64_t i = 0;
  int k;
  for (k = 0; k < MGOPT__LQ_LANES; k++) {
    a[k] = *mn;
    b[k] = *mx;
    nan[k] = 0;
  }
#ifdef MGOPT__LQ_SSE2
  /* _mm_min_ps(v, a) is v < a ? v : a, as below (a NaN v keeps a) */
  {
    __m128 a0 = _mm_set1_ps(*mn), a1 = a0, b0 = _mm_set1_ps(*mx), b1 = b0, un = _mm_setzero_ps();
    float fa[4], fb[4];
    for (; i + 8 <= n; i += 8) {
      __m128 v0 = _mm_loadu_ps(x + i), v1 = _mm_loadu_ps(x + i + 4);
      a0 = _mm_min_ps(v0, a0);
      a1 = _mm_min_ps(v1, a1);
      b0 = _mm_max_ps(v0, b0);
      b1 = _mm_max_ps(v1, b1);
      un = _mm_or_ps(un, _mm_cmpunord_ps(v0, v1));
    }
    _mm_storeu_ps(fa, _mm_min_ps(a0, a1));
    _mm_storeu_ps(fb, _mm_max_ps(b0, b1));
    for (k = 0; k < 4; k++) {
      a[k] = fa[k];
      b[k] = fb[k];
    }
    nan[0] = _mm_movemask_ps(un) != 0;
  }
#endif
  for (; i + MGOPT__LQ_LANES <= n; i += MGOPT__LQ_LANES)
    for (k = 0; k < MGOPT__LQ_LANES; k++) {
      float v = x[i + k];
      a[k] = v < a[k] ? v : a[k];
      b[k] = v > b[k] ? v : b[k];
      nan[k] |= v != v;
    }
  for (; i < n; i++) {
    float v = x[i];
    a[0] = v < a[0] ? v : a[0];
    b[0] = v > b[0] ? v : b[0];
    nan[0] |= v != v;
  }
  for (k = 0; k < MGOPT__LQ_LANES; k++) {
    *mn = a[k] < *mn ? a[k] : *mn;
    *mx = b[k] > *mx ? b[k] : *mx;
    *bad |= nan[k];
  }
}

/* The scale and zero point of a block whose weights range over [lo, hi]
   (the formulas of the header); 0 for an infinite weight or a scale that
   is not a positive finite number. */
static int mgopt__lq_params(const mgopt__lq_cfg *c, mgopt_dtype wdt, float lo, float hi, float *sc, float *zp) {
  double vmin, vmax, s;
  if (lo == -HUGE_VALF || hi == HUGE_VALF) return 0;
  if (c->linear) {
    vmin = lo < 0 ? lo : 0;
    vmax = hi > 0 ? hi : 0;
  } else {
    double R = fabs((double)lo) > fabs((double)hi) ? fabs((double)lo) : fabs((double)hi);
    vmin = -R;
    vmax = R;
  }
  if (vmax == vmin) { /* a block of zeros */
    *sc = 1.0f;
    *zp = (float)(c->linear ? c->qmin : c->has_zp ? c->qmax / 2 : 0);
    return 1;
  }
  s = mgopt__lq_rnd(wdt, mgopt__lq_rnd(wdt, vmax - vmin) / (double)(c->qmax - c->qmin));
  if (!(s > 0) || s == HUGE_VAL) return 0;
  *sc = (float)s;
  if (c->linear) {
    double num = mgopt__lq_rnd(wdt, mgopt__lq_rnd(wdt, (double)c->qmin * vmax) - mgopt__lq_rnd(wdt, (double)c->qmax * vmin));
    double z = mgopt__lq_rne(mgopt__lq_rnd(wdt, num / mgopt__lq_rnd(wdt, vmax - vmin)));
    *zp = (float)(z < (double)c->qmin ? (double)c->qmin : z > (double)c->qmax ? (double)c->qmax : z);
  } else {
    *zp = (float)(c->has_zp ? c->qmax / 2 : 0);
  }
  return 1;
}

/* Joint: nonzero_data (w->op) of constexpr_sparse_to_dense `sp` becomes
   constexpr_sparse_blockwise_shift_scale(data_mask = sp's mask, the dense
   quantized data qt at the mask, scale st, offset zt) named <const>_quantized,
   whose dequantized non-zero values sp reads. */
static int mgopt__lq_sparse(mgopt_program *p, const mgopt__cw_weight *w, mgopt_op *sp, mgopt_tensor *mask,
                            mgopt_tensor *qt, mgopt_tensor *st, mgopt_tensor *zt) {
  static const char *const slots[4] = {"data_mask", "nonzero_data", "scale", "offset"};
  const char *base = mgopt__pu_value_name(w->op->outs[0]);
  mgopt_tensor *nz = mgopt__cw_gather(p, qt, mask);
  mgopt_value *vals[4];
  mgopt_op *jo;
  if (!nz) return -1;
  vals[0] = mgopt_op_operand(sp, "mask");
  vals[1] = mgopt_build_const(p, sp->parent, sp, mgopt__pu_name2(p, base, "_quantized_data"), nz);
  vals[2] = mgopt_build_const(p, sp->parent, sp, mgopt__pu_name2(p, base, "_quantized_scale"), st);
  vals[3] = zt ? mgopt_build_const(p, sp->parent, sp, mgopt__pu_name2(p, base, "_quantized_offset"), zt) : NULL;
  if (!vals[1] || !vals[2] || (zt && !vals[3])) return -1;
  jo = mgopt__cw_build_sparse(p, sp, "constexpr_sparse_blockwise_shift_scale",
                              mgopt__pu_name2(p, base, "_quantized"), zt ? 4 : 3, slots, vals);
  if (!jo) return -1;
  if (mgopt_op_infer(p, jo, NULL) != MGOPT_OK || !mgopt_type_equal(&jo->outs[1]->type, &w->op->outs[0]->type) ||
      !mgopt_program_target_accepts(p, jo)) {
    mgopt__cw_unbuild(jo);
    return 0;
  }
  mgopt__cw_replace(w, jo->outs[1]);
  return 1;
}

static int mgopt__lq_fn(mgopt_pass_ctx *ctx, const mgopt__cw_weight *w, void *ud) {
  mgopt_program *p = ctx->program;
  mgopt_tensor *t = w->t, *qt, *st, *zt = NULL;
  mgopt_dtype wdt = (mgopt_dtype)t->dtype;
  mgopt__lq_cfg c;
  int64_t bs[MGOPT_MAX_RANK], sshape[MGOPT_MAX_RANK], sstride[MGOPT_MAX_RANK], m[MGOPT_MAX_RANK];
  int64_t nblk = 1, run, nruns, inner = 1, r, k, i, n = t->numel;
  int32_t rank = t->rank, d, last = -1;
  int64_t *bidx;
  float *mn, *mx, *sc, *zp, *buf = NULL;
  uint8_t *q;
  const float *xf;
  int bad = 0;
  const char *base = mgopt__pu_value_name(w->op->outs[0]);
  mgopt_value *vals[3];
  const char *slots[3] = {"data", "scale", "offset"};
  mgopt_op *ce;
  mgopt_op *sparse = NULL; /* joint: the constexpr_sparse_to_dense reading the const as nonzero_data */
  mgopt_tensor *mask = NULL;
  (void)ud;
  if (wdt != MGOPT_DT_FP32 && wdt != MGOPT_DT_FP16) return 0;
  if (!mgopt__lq_config(ctx, w->opts, &c)) return -2;
  if (mgopt_op_traits(w->reader) & MGOPT_TRAIT_CONSTEXPR) {
    if (mgopt__cw_sole_reader(w, MGOPT_OP_constexpr_lut_to_dense, "lut") ||
        mgopt__cw_sole_reader(w, MGOPT_OP_constexpr_lut_to_sparse, "lut")) {
      if (c.gran != 0)
        return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG,
                              "linear_quantize_weights: quantizing the LUT of '%s' needs granularity=per_tensor",
                              base),
               -2;
    } else if (mgopt__cw_sole_reader(w, MGOPT_OP_constexpr_sparse_to_dense, "nonzero_data")) {
      /* quantized densified (per block of the dense weight), data kept at the mask */
      mask = mgopt_value_const(mgopt_op_operand(w->reader, "mask"));
      if (!mask || mask->dtype != MGOPT_DT_UINT1 || mgopt_op_operand(w->reader, "shape") ||
          mgopt_op_attr(w->reader, "shape"))
        return 0;
      if (!mgopt_tensor_data(p, mask) || !mgopt_tensor_data(p, t)) return -1;
      t = mgopt__cw_densify(p, w->t, mask);
      if (!t) return 0;
      sparse = w->reader;
      rank = t->rank;
      n = t->numel;
    } else {
      return 0;
    }
  }
  for (d = 0; d < rank; d++) bs[d] = 0;
  if (c.gran >= 1) {
    if (w->out_axis < 0) return 0;
    bs[w->out_axis] = 1;
  }
  if (c.gran == 2) {
    if (w->in_axis < 0 || t->shape[w->in_axis] % c.block != 0) return 0;
    bs[w->in_axis] = c.block;
  }
  for (d = 0; d < rank; d++) {
    sshape[d] = bs[d] > 0 ? t->shape[d] / bs[d] : 1;
    nblk *= sshape[d];
    if (bs[d] > 0) last = d;
  }
  for (d = rank - 1, k = 1; d >= 0; d--) {
    sstride[d] = k;
    k *= sshape[d];
  }
  for (d = last + 1; d < rank; d++) inner *= t->shape[d];
  run = last >= 0 ? bs[last] * inner : n;
  nruns = run > 0 ? n / run : 0;
  if (n == 0 || nruns == 0) return 0;
  /* the block of each run: an odometer over axes [0, last] (axis last in steps of its block) */
  bidx = (int64_t *)mgopt_program_alloc(p, (size_t)nruns * sizeof(int64_t), 8);
  mn = (float *)mgopt_program_alloc(p, (size_t)nblk * 4 * sizeof(float), 8);
  qt = mgopt__tensor_new_data(p, c.qdt, rank, t->shape, 0);
  q = c.qdt == MGOPT_DT_INT8 || c.qdt == MGOPT_DT_UINT8 ? (uint8_t *)(qt ? qt->data : NULL)
                                                        : (uint8_t *)mgopt_program_alloc(p, (size_t)n, 64);
  if (!bidx || !mn || !qt || !q) return -1;
  mx = mn + nblk;
  sc = mx + nblk;
  zp = sc + nblk;
  for (d = 0; d <= last; d++) m[d] = 0;
  for (r = 0; r < nruns; r++) {
    int64_t b = 0;
    for (d = 0; d <= last; d++)
      if (bs[d] > 0) b += (d == last ? m[d] : m[d] / bs[d]) * sstride[d];
    bidx[r] = b;
    for (d = last; d >= 0; d--) {
      int64_t lim = d == last ? t->shape[d] / bs[d] : t->shape[d];
      if (++m[d] < lim) break;
      m[d] = 0;
    }
  }
  if (wdt == MGOPT_DT_FP32) {
    xf = (const float *)mgopt_tensor_data(p, t);
  } else {
    const uint16_t *h = (const uint16_t *)mgopt_tensor_data(p, t);
    buf = (float *)mgopt_program_alloc(p, (size_t)n * sizeof(float), 64);
    if (!buf || !h) return -1;
    for (i = 0; i < n; i++) buf[i] = mgopt_f16_to_f32(h[i]);
    xf = buf;
  }
  if (!xf) return -1;
  if (wdt == MGOPT_DT_FP32 && nruns == nblk) {
    /* one run per block (per channel of axis 0, blocks along the last
       axis): range, parameters and integers while the run is in cache */
    for (r = 0; r < nruns; r++) {
      int64_t b = bidx[r];
      const float *x = xf + r * run;
      mn[b] = HUGE_VALF;
      mx[b] = -HUGE_VALF;
      mgopt__lq_minmax_f32(x, run, &mn[b], &mx[b], &bad);
      if (bad || !mgopt__lq_params(&c, wdt, mn[b], mx[b], &sc[b], &zp[b])) return 0;
      mgopt__lq_run_f32(x, run, sc[b], zp[b], (float)c.qmin, (float)c.qmax, q + r * run);
    }
  } else {
    for (k = 0; k < nblk; k++) {
      mn[k] = HUGE_VALF;
      mx[k] = -HUGE_VALF;
    }
    for (r = 0; r < nruns; r++) mgopt__lq_minmax_f32(xf + r * run, run, &mn[bidx[r]], &mx[bidx[r]], &bad);
    if (bad) return 0;
    for (k = 0; k < nblk; k++)
      if (!mgopt__lq_params(&c, wdt, mn[k], mx[k], &sc[k], &zp[k])) return 0;
    for (r = 0; r < nruns; r++) {
      int64_t b = bidx[r];
      const float *x = xf + r * run;
      uint8_t *o = q + r * run;
      if (wdt == MGOPT_DT_FP32) {
        mgopt__lq_run_f32(x, run, sc[b], zp[b], (float)c.qmin, (float)c.qmax, o);
      } else {
        for (i = 0; i < run; i++) {
          double y = mgopt__lq_rne(mgopt__lq_rnd(wdt, (double)x[i] / (double)sc[b])) + zp[b];
          o[i] = (uint8_t)(y < (double)c.qmin ? c.qmin : y > (double)c.qmax ? c.qmax : (int64_t)y);
        }
      }
    }
  }
  /* the tensors */
  st = mgopt_tensor_new(p, wdt, rank, sshape);
  if (c.has_zp) zt = mgopt_tensor_new(p, c.qdt, rank, sshape);
  if (!st || (c.has_zp && !zt)) return -1;
  if (c.qdt != MGOPT_DT_INT8 && c.qdt != MGOPT_DT_UINT8) {
    uint8_t *o = (uint8_t *)qt->data;
    for (i = 0; i + 1 < n; i += 2) o[i / 2] = (uint8_t)((q[i] & 15u) | ((q[i + 1] & 15u) << 4));
    if (n & 1) o[n / 2] = (uint8_t)(q[n - 1] & 15u);
  }
  for (k = 0; k < nblk; k++) {
    mgopt_tensor_set_f64(st, k, (double)sc[k]);
    if (zt) mgopt_tensor_set_i64(zt, k, (int64_t)zp[k]);
  }
  if (sparse) return mgopt__lq_sparse(p, w, sparse, mask, qt, st, zt);
  vals[0] = mgopt_build_const(p, w->op->parent, w->op, mgopt__pu_name2(p, base, "_quantized_data"), qt);
  vals[1] = mgopt_build_const(p, w->op->parent, w->op, mgopt__pu_name2(p, base, "_quantized_scale"), st);
  vals[2] = zt ? mgopt_build_const(p, w->op->parent, w->op, mgopt__pu_name2(p, base, "_quantized_offset"), zt) : NULL;
  if (!vals[0] || !vals[1] || (zt && !vals[2])) return -1;
  ce = mgopt_build_op(p, w->op->parent, w->op, "constexpr_blockwise_shift_scale",
                      mgopt__pu_name2(p, base, "_quantized"), zt ? 3 : 2, slots, vals, 1);
  if (!ce) return -1;
  return mgopt__cw_finish(p, w, ce);
}

static mgopt_status mgopt__lq_run(mgopt_pass_ctx *ctx) {
  mgopt__lq_cfg c;
  mgopt__cw_pass cp;
  if (!mgopt__lq_config(ctx, ctx->opts, &c)) return MGOPT_ERR_INVALID_ARG;
  memset(&cp, 0, sizeof cp);
  cp.name = "linear_quantize_weights";
  cp.opts = mgopt__lq_opts;
  cp.nopts = MGOPT__ARRAY_COUNT(mgopt__lq_opts);
  cp.fn = mgopt__lq_fn;
  cp.constexpr_readers = ctx->opts[MGOPT__LQ_JOINT].i != 0;
  return mgopt__cw_run(ctx, &cp);
}

MGOPT__DEFINE_PASS_WITH_OPTIONS(compression, common, linear_quantize_weights,
                                "float weights stored as int8/uint8/int4/uint4 with scales (constexpr_blockwise_shift_scale)",
                                mgopt__lq_opts, mgopt__lq_run);
