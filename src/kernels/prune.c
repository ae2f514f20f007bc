/* src/kernels/prune.c — weight pruning: magnitudes, numpy's percentile, threshold / magnitude / block / n:m masks, and the constexpr_sparse_to_dense encoding.

   Numeric contract. Magnitudes are computed in double from the weight's
   exact values: |w| for element pruning, the L2 norm of the block (sum of
   squares in double, one sqrt) for block pruning. The percentile is numpy's
   default ("linear") method evaluated in double: virtual index
   (n - 1) * (q / 100), then numpy's lerp (a + (b - a) * t, or b - (b - a) *
   (1 - t) when t >= 0.5). A magnitude is pruned when it is <= the
   percentile (or <= the threshold); a NaN magnitude is never pruned, and a
   NaN among the magnitudes makes the percentile NaN (nothing pruned), as in
   numpy. n:m ranks the magnitudes of a group ascending with ties broken by
   position (numpy's argsort on the short rows it sorts by insertion), NaN
   last. Pruning only writes zeros; the kept values are never changed. */
#include "kernels.h"

/* ---------------------------------------------------------------- percentile */

static void mgopt__kp_swap(double *v, int64_t i, int64_t j) {
  double t = v[i];
  v[i] = v[j];
  v[j] = t;
}

/* Reorders v[0..n) (no NaN) so that v[k] is the value a sort would put there,
   everything before it <= and everything after it >=. Quickselect with a
   median-of-three pivot; ranges of 16 or fewer finish by insertion. */
static void mgopt__kp_select(double *v, int64_t n, int64_t k) {
  int64_t lo = 0, hi = n - 1;
  while (hi - lo > 16) {
    int64_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
    double piv;
    if (v[mid] < v[lo]) mgopt__kp_swap(v, mid, lo);
    if (v[hi] < v[lo]) mgopt__kp_swap(v, hi, lo);
    if (v[hi] < v[mid]) mgopt__kp_swap(v, hi, mid);
    piv = v[mid];
    while (i <= j) {
      while (v[i] < piv) i++;
      while (v[j] > piv) j--;
      if (i <= j) {
        mgopt__kp_swap(v, i, j);
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return; /* lo..hi between j and i all equal the pivot */
  }
  {
    int64_t i, j;
    for (i = lo + 1; i <= hi; i++) {
      double x = v[i];
      for (j = i; j > lo && v[j - 1] > x; j--) v[j] = v[j - 1];
      v[j] = x;
    }
  }
}

MGOPT__PRIVATE double mgopt__kp_percentile(double *v, int64_t n, double q) {
  double vi, t, a, b, d, r;
  int64_t lo, i;
  if (n <= 0) return NAN;
  for (i = 0; i < n; i++)
    if (isnan(v[i])) return NAN;
  vi = (double)(n - 1) * (q / 100.0);
  if (!(vi > 0.0)) vi = 0.0;
  if (vi >= (double)(n - 1)) {
    mgopt__kp_select(v, n, n - 1);
    return v[n - 1];
  }
  lo = (int64_t)floor(vi);
  t = vi - (double)lo;
  mgopt__kp_select(v, n, lo);
  a = v[lo];
  b = v[lo + 1];
  for (i = lo + 2; i < n; i++)
    if (v[i] < b) b = v[i];
  d = b - a;
  r = a + d * t;
  if (t >= 0.5) r = b - d * (1.0 - t);
  return r;
}

/* ---------------------------------------------------------------- magnitudes */

MGOPT__PRIVATE int mgopt__kp_weight_dtype(mgopt_dtype dt) {
  return dt == MGOPT_DT_FP16 || dt == MGOPT_DT_BF16 || dt == MGOPT_DT_FP32 || dt == MGOPT_DT_FP64 ||
         dt == MGOPT_DT_INT8 || dt == MGOPT_DT_UINT8;
}

MGOPT__PRIVATE void mgopt__kp_magnitude(const mgopt_tensor *w, double *mag) {
  int64_t i;
  for (i = 0; i < w->numel; i++) mag[i] = fabs(mgopt_tensor_get_f64(w, i));
}

/* The extent of w around axis `dim`: outer * shape[dim] * inner elements. */
static void mgopt__kp_split(const mgopt_tensor *w, int32_t dim, int64_t *outer, int64_t *inner) {
  int32_t d;
  *outer = 1;
  *inner = 1;
  for (d = 0; d < dim; d++) *outer *= w->shape[d];
  for (d = dim + 1; d < w->rank; d++) *inner *= w->shape[d];
}

MGOPT__PRIVATE int mgopt__kp_block_magnitude(const mgopt_tensor *w, int32_t dim, int64_t b, double *mag) {
  int64_t outer, inner, c, o, cb, in, k;
  if (w->rank < 2 || w->rank > 5 || dim < 0 || dim > 1 || b <= 1) return 0;
  c = w->shape[dim];
  if (b > c / 2) return 0;
  mgopt__kp_split(w, dim, &outer, &inner);
  for (o = 0; o < outer; o++)
    for (cb = 0; cb < c; cb += b) {
      int64_t end = cb + b < c ? cb + b : c;
      for (in = 0; in < inner; in++) {
        double s = 0.0, nrm;
        for (k = cb; k < end; k++) {
          double x = mgopt_tensor_get_f64(w, (o * c + k) * inner + in);
          s += x * x;
        }
        nrm = sqrt(s);
        for (k = cb; k < end; k++) mag[(o * c + k) * inner + in] = nrm;
      }
    }
  return 1;
}

/* ---------------------------------------------------------------- masks */

MGOPT__PRIVATE void mgopt__kp_threshold_mask(const double *mag, int64_t n, double threshold, uint8_t *keep) {
  int64_t i;
  for (i = 0; i < n; i++) keep[i] = (uint8_t)!(mag[i] <= threshold);
}

MGOPT__PRIVATE void mgopt__kp_magnitude_mask(const double *mag, int64_t n, double target_sparsity, double *scratch,
                                             uint8_t *keep) {
  double q = target_sparsity * 100.0, pct;
  int64_t i;
  if (q == 100.0) {
    memset(keep, 0, (size_t)n);
    return;
  }
  if (q == 0.0 || n == 0) {
    memset(keep, 1, (size_t)n);
    return;
  }
  memcpy(scratch, mag, (size_t)n * sizeof(double));
  pct = mgopt__kp_percentile(scratch, n, q);
  for (i = 0; i < n; i++) keep[i] = (uint8_t)!(mag[i] <= pct);
}

/* a (at position ia) sorts before b (at ib): ascending, NaN last, ties by position. */
static int mgopt__kp_before(double a, int64_t ia, double b, int64_t ib) {
  int an = isnan(a) != 0, bn = isnan(b) != 0;
  if (an != bn) return bn;
  if (!an && a != b) return a < b;
  return ia < ib;
}

MGOPT__PRIVATE int mgopt__kp_nm_mask(const mgopt_tensor *w, const double *mag, int64_t n, int64_t m, int32_t dim,
                                     uint8_t *keep) {
  int64_t outer, inner, c, o, gb, in, k, j;
  if (w->rank < 2 || w->rank > 5 || dim < 0 || dim >= w->rank || n < 0 || m <= 0 || n > m) return 0;
  c = w->shape[dim];
  if (m > c / 2) return 0;
  mgopt__kp_split(w, dim, &outer, &inner);
  memset(keep, 1, (size_t)w->numel);
  for (o = 0; o < outer; o++)
    for (gb = 0; gb < c; gb += m) {
      int64_t end = gb + m < c ? gb + m : c, pad = gb + m - end;
      for (in = 0; in < inner; in++)
        for (k = gb; k < end; k++) {
          /* rank of k in its group; the zero padding past the end ranks after
             the group's zeros and before everything larger */
          int64_t at = (o * c + k) * inner + in, rank = 0;
          double x = mag[at];
          for (j = gb; j < end; j++)
            if (j != k && mgopt__kp_before(mag[(o * c + j) * inner + in], j, x, k)) rank++;
          if (x > 0.0 || isnan(x)) rank += pad;
          if (rank < n) keep[at] = 0;
        }
    }
  return 1;
}

/* ---------------------------------------------------------------- sparse encoding */

MGOPT__PRIVATE int64_t mgopt__kp_nonzero_count(const mgopt_tensor *w, const uint8_t *keep) {
  int64_t i, d = 0;
  for (i = 0; i < w->numel; i++) d += keep[i] && mgopt_tensor_get_f64(w, i) != 0.0;
  return d;
}

MGOPT__PRIVATE void mgopt__kp_encode(const mgopt_tensor *w, const uint8_t *keep, void *nonzero, uint8_t *mask) {
  size_t es = mgopt__k_esize((mgopt_dtype)w->dtype);
  const uint8_t *src = (const uint8_t *)w->data;
  uint8_t *dst = (uint8_t *)nonzero;
  int64_t i, j = 0;
  memset(mask, 0, (size_t)((w->numel + 7) / 8));
  for (i = 0; i < w->numel; i++) {
    if (!keep[i] || mgopt_tensor_get_f64(w, i) == 0.0) continue;
    mask[i >> 3] = (uint8_t)(mask[i >> 3] | (1u << (i & 7)));
    memcpy(dst + (size_t)j * es, src + (size_t)i * es, es);
    j++;
  }
}
