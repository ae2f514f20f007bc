/* src/kernels/resample.c — folding kernels of the resampling ops: upsample_nearest_neighbor,
   resize_nearest_neighbor, upsample_bilinear, resize_bilinear (MIL's iOS15 forms).

   Each op resamples the last two dims of x (rank >= 3); the other dims are
   kept. Output sizes: upsample_* floor(H * scale_factor_height) and
   floor(W * scale_factor_width) (factors finite and > 0, results >= 1);
   resize_* target_size_height and target_size_width (>= 1).

   Source coordinates, per resampled dim of input size n and output size m:
     nearest (both nearest ops)   src(i) = floor(i * n / m), computed exactly in
                                  integers (ONNX Resize's asymmetric + floor).
     bilinear grid points g(i), clamped to [0, n - 1]:
       upsample_bilinear align_corners=true, resize_bilinear STRICT_ALIGN_CORNERS:
                                  i * (n - 1) / (m - 1); 0 when m = 1
       resize_bilinear ALIGN_CORNERS: the same, but (n - 1) / 2 when m = 1
       upsample_bilinear align_corners=false, resize_bilinear UNALIGN_CORNERS:
                                  (i + 0.5) * n / m - 0.5 (ONNX's half_pixel)
       resize_bilinear DEFAULT:   i * n / m (ONNX's asymmetric)
       resize_bilinear OFFSET_CORNERS: d = max(1, n - 1) / m, g(i) = 0.5 * d + i * d
     A grid point g gives the neighbours i0 = floor(g), i1 = min(i0 + 1, n - 1)
     and the weight f = g - i0; the value is
       (1 - fh) * ((1 - fw) * x[h0, w0] + fw * x[h0, w1]) + fh * ((1 - fw) * x[h1, w0] + fw * x[h1, w1]).
   Numeric contract: fp16, bf16, fp32 and fp64 (nearest: any byte-addressable
   dtype, elements are copied). Grid points and the interpolation are computed
   in double (each grid point rounded once per operation in the order written
   above) and the result rounded once to x's dtype (round to nearest even).
   NaN and Inf propagate as in IEEE arithmetic: a NaN or Inf neighbour reaches
   every output that reads it, even with weight 0 (0 * Inf = NaN). Not
   folded: ranks below 3, a scale or size that gives an output dim of 0 or
   above 2^30, an unknown sampling_mode, non-float dtypes for the bilinear ops. */
#include "kernels.h"

#define MGOPT__KRS_BIG ((int64_t)1 << 30)

/* The output size of resampled dim `which` (0: height, 1: width) of input size n; -1 when not foldable. */
static int64_t mgopt__krs_size(const mgopt_op *op, int which, int64_t n) {
  if (op->kind == MGOPT_OP_upsample_nearest_neighbor || op->kind == MGOPT_OP_upsample_bilinear) {
    double s = mgopt_op_get_float(op, which ? "scale_factor_width" : "scale_factor_height", 1.0), v;
    if (!(s > 0.0) || s > (double)MGOPT__KRS_BIG) return -1;
    v = floor((double)n * s);
    return v >= 1.0 && v <= (double)MGOPT__KRS_BIG ? (int64_t)v : -1;
  } else {
    int64_t v = mgopt_op_get_int(op, which ? "target_size_width" : "target_size_height", -1);
    if (!mgopt__k_has_param(op, which ? "target_size_width" : "target_size_height")) return -1;
    return v >= 1 && v <= MGOPT__KRS_BIG ? v : -1;
  }
}

enum { MGOPT__KRS_STRICT, MGOPT__KRS_ALIGN, MGOPT__KRS_HALF, MGOPT__KRS_ASYM, MGOPT__KRS_OFFSET };

/* The grid mode of a bilinear op, -1 when unknown. */
static int mgopt__krs_mode(const mgopt_op *op) {
  const char *s;
  if (op->kind == MGOPT_OP_upsample_bilinear)
    return mgopt_op_get_bool(op, "align_corners", 1) ? MGOPT__KRS_STRICT : MGOPT__KRS_HALF;
  s = mgopt_op_get_string(op, "sampling_mode", NULL);
  if (!s || strcmp(s, "DEFAULT") == 0) return MGOPT__KRS_ASYM;
  if (strcmp(s, "STRICT_ALIGN_CORNERS") == 0) return MGOPT__KRS_STRICT;
  if (strcmp(s, "ALIGN_CORNERS") == 0) return MGOPT__KRS_ALIGN;
  if (strcmp(s, "UNALIGN_CORNERS") == 0) return MGOPT__KRS_HALF;
  if (strcmp(s, "OFFSET_CORNERS") == 0) return MGOPT__KRS_OFFSET;
  return -1;
}

/* Neighbours and weight of output position i of m over an input of n. */
static void mgopt__krs_grid(int mode, int64_t i, int64_t n, int64_t m, int64_t *i0, int64_t *i1, double *f) {
  double g;
  switch (mode) {
  case MGOPT__KRS_STRICT:
  case MGOPT__KRS_ALIGN:
    if (m == 1) g = mode == MGOPT__KRS_ALIGN ? (double)(n - 1) / 2.0 : 0.0;
    else g = (double)i * (double)(n - 1) / (double)(m - 1);
    break;
  case MGOPT__KRS_HALF: g = ((double)i + 0.5) * (double)n / (double)m - 0.5; break;
  case MGOPT__KRS_ASYM: g = (double)i * (double)n / (double)m; break;
  default: {
    double d = (double)(n > 2 ? n - 1 : 1) / (double)m;
    g = 0.5 * d + (double)i * d;
  }
  }
  if (g < 0.0) g = 0.0;
  if (g > (double)(n - 1)) g = (double)(n - 1);
  *i0 = (int64_t)floor(g);
  *i1 = *i0 + 1 < n ? *i0 + 1 : n - 1;
  *f = g - (double)*i0;
}

MGOPT__PRIVATE int mgopt__kn_resample(mgopt__kctx *k) {
  MGOPT__K_NOCONTRACT
  const mgopt_op *op = k->op;
  int nearest = op->kind == MGOPT_OP_upsample_nearest_neighbor || op->kind == MGOPT_OP_resize_nearest_neighbor;
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  int64_t shape[MGOPT_MAX_RANK], H, W, Ho, Wo, planes = 1, pl, a, b, work;
  int32_t r, d;
  int rc, mode = nearest ? 0 : mgopt__krs_mode(op);
  void *od;
  if (!x || x->rank < 3 || x->rank > MGOPT_MAX_RANK || mode < 0) return MGOPT__K_NO;
  r = x->rank;
  H = x->shape[r - 2];
  W = x->shape[r - 1];
  if (H < 1 || W < 1 || H > MGOPT__KRS_BIG || W > MGOPT__KRS_BIG) return MGOPT__K_NO;
  Ho = mgopt__krs_size(op, 0, H);
  Wo = mgopt__krs_size(op, 1, W);
  if (Ho < 0 || Wo < 0) return MGOPT__K_NO;
  for (d = 0; d < r - 2; d++) {
    shape[d] = x->shape[d];
    planes *= x->shape[d];
  }
  shape[r - 2] = Ho;
  shape[r - 1] = Wo;
  if (!mgopt__mul_i64(planes, Ho, &work) || !mgopt__mul_i64(work, Wo, &work)) return MGOPT__K_NO;
  if (nearest) {
    size_t es = mgopt__k_esize((mgopt_dtype)x->dtype);
    const uint8_t *src;
    uint8_t *dst;
    if (es == 0 || x->dtype == MGOPT_DT_STRING) return MGOPT__K_NO;
    rc = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, r, shape, &od);
    if (rc != MGOPT__K_OK) return rc;
    if (k->out[0]->numel == 0) return MGOPT__K_OK;
    src = (const uint8_t *)mgopt__k_data(k, x);
    if (!src) return MGOPT__K_OOM;
    dst = (uint8_t *)od;
    for (pl = 0; pl < planes; pl++)
      for (a = 0; a < Ho; a++) {
        int64_t sa = a * H / Ho; /* a < Ho <= 2^30 and H <= 2^30: no overflow */
        for (b = 0; b < Wo; b++) {
          int64_t sb = b * W / Wo;
          memcpy(dst + (size_t)((pl * Ho + a) * Wo + b) * es, src + (size_t)((pl * H + sa) * W + sb) * es, es);
        }
      }
    return MGOPT__K_OK;
  }
  {
    int lane = mgopt__k_lane((mgopt_dtype)x->dtype);
    double *xd, *res;
    if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64) return MGOPT__K_NO;
    rc = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, r, shape, &od);
    if (rc != MGOPT__K_OK) return rc;
    if (k->out[0]->numel == 0) return MGOPT__K_OK;
    xd = (double *)mgopt__k_scratch(k, x->numel, sizeof(double));
    res = (double *)mgopt__k_scratch(k, k->out[0]->numel, sizeof(double));
    if (!xd || !res) return MGOPT__K_OOM;
    rc = mgopt__k_load(k, x, MGOPT__LANE_F64, xd);
    if (rc != MGOPT__K_OK) return rc;
    for (pl = 0; pl < planes; pl++) {
      const double *xp = xd + pl * H * W;
      double *op_ = res + pl * Ho * Wo;
      for (a = 0; a < Ho; a++) {
        int64_t h0, h1, w0, w1;
        double fh, fw;
        mgopt__krs_grid(mode, a, H, Ho, &h0, &h1, &fh);
        for (b = 0; b < Wo; b++) {
          double top, bot;
          mgopt__krs_grid(mode, b, W, Wo, &w0, &w1, &fw);
          top = (1.0 - fw) * xp[h0 * W + w0] + fw * xp[h0 * W + w1];
          bot = (1.0 - fw) * xp[h1 * W + w0] + fw * xp[h1 * W + w1];
          op_[a * Wo + b] = (1.0 - fh) * top + fh * bot;
        }
      }
    }
    mgopt__k_store(MGOPT__LANE_F64, res, k->out[0]->numel, (mgopt_dtype)x->dtype, od);
  }
  return MGOPT__K_OK;
}
