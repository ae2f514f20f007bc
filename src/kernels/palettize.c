/* src/kernels/palettize.c — weight palettization: k-means, uniform, unique and custom LUTs per
   channel group, vector palettization, per-channel scale, and the bit packing of indices.

   Determinism: every result depends only on the weight's values, never on the
   host. 1-D k-means sorts the group once (radix sort on the float bits) and
   runs Lloyd's algorithm on the sorted distinct values with prefix sums of
   count and value in double; it only adds, subtracts and divides (no
   product is ever added, so no fused multiply-add can change a bit), in a
   fixed order. Initialisation: the K clusters start as K runs of equal
   element count (weighted quantiles of the sorted values); Lloyd's steps
   then move the boundaries to the midpoints of neighbouring centroids
   (a value exactly on a midpoint goes to the lower cluster) until no
   boundary moves or 300 steps. A group with at most K distinct values gets
   those values exactly (the rest of the LUT is 0). Vector k-means
   (cluster_dim > 1) seeds with k-means++ drawing from splitmix64 seeded
   with 0 (first centre: the draw over all vectors; ties: lowest index)
   and runs Lloyd's steps in double; its squared distances multiply and
   add, so the translation unit relies on MGOPT__K_NOCONTRACT (clang) and
   -std=c99 or -ffp-contract=off (gcc) like every other kernel.

   Indices are packed little-endian: element i takes bits [i*b, i*b+b) from
   the least significant bit of byte 0 (mgopt__k_bits reads them back). */
#include "kernels.h"

MGOPT__K_NOCONTRACT

MGOPT__PRIVATE void mgopt__kp_pack(const uint8_t *idx, int64_t n, int b, uint8_t *out) {
  int64_t i, nbytes = (n * b + 7) / 8, bit = 0;
  if (b == 8) {
    memcpy(out, idx, (size_t)n);
    return;
  }
  memset(out, 0, (size_t)nbytes);
  for (i = 0; i < n; i++) {
    uint32_t v = (uint32_t)idx[i] & ((1u << b) - 1u);
    int put = 0;
    while (put < b) {
      int off = (int)(bit & 7), take = 8 - off;
      if (take > b - put) take = b - put;
      out[bit >> 3] = (uint8_t)(out[bit >> 3] | (((v >> put) & ((1u << take) - 1u)) << off));
      put += take;
      bit += take;
    }
  }
}

MGOPT__PRIVATE int mgopt__kp_nbits_for(int64_t count) {
  static const int bits[6] = {1, 2, 3, 4, 6, 8};
  int i;
  for (i = 0; i < 6; i++)
    if (count <= ((int64_t)1 << bits[i])) return bits[i];
  return 0;
}

/* ---------------------------------------------------------------- sorting */

/* Order-preserving key of a float (-0 is folded into +0 by the caller). */
static uint32_t mgopt__kp_key(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static float mgopt__kp_unkey(uint32_t k) {
  uint32_t u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Sorts n keys ascending (LSD radix, 3 passes of 11 bits, the three counts
   taken in one read); tmp holds n keys. */
static void mgopt__kp_radix(uint32_t *a, uint32_t *tmp, int64_t n) {
  int64_t cnt[3][2048], i;
  uint32_t *src = a, *dst = tmp, *sw;
  int pass;
  memset(cnt, 0, sizeof cnt);
  for (i = 0; i < n; i++) {
    uint32_t v = a[i];
    cnt[0][v & 2047u]++;
    cnt[1][(v >> 11) & 2047u]++;
    cnt[2][v >> 22]++;
  }
  for (pass = 0; pass < 3; pass++) {
    int sh = pass * 11;
    int64_t sum = 0, *c = cnt[pass];
    for (i = 0; i < 2048; i++) {
      int64_t x = c[i];
      c[i] = sum;
      sum += x;
    }
    for (i = 0; i < n; i++) dst[c[(src[i] >> sh) & 2047u]++] = src[i];
    sw = src;
    src = dst;
    dst = sw;
  }
  /* after three passes the keys are in tmp: copy them back */
  memcpy(a, src, (size_t)n * 4);
}

/* The cluster of x: the number of m[0..k-1) below x, m ascending, k a power of 2
   (branch-free search in log2(k) steps). */
static int32_t mgopt__kp_rank(const double *m, int32_t k, double x) {
  int32_t pos = 0, h;
  for (h = k / 2; h >= 1; h /= 2) pos += m[pos + h - 1] < x ? h : 0;
  return pos;
}

/* ---------------------------------------------------------------- 1-D k-means */

/* Sum of the i smallest values of the sorted keys a: the block sum s[i/64]
   plus the values of the partial block, added in order. */
static double mgopt__kp_psum(const uint32_t *a, const double *s, int64_t i) {
  int64_t t = i & ~(int64_t)63;
  double v = s[t / 64];
  for (; t < i; t++) v += (double)mgopt__kp_unkey(a[t]);
  return v;
}

MGOPT__PRIVATE int mgopt__kp_kmeans1d(const float *x, int64_t n, int32_t k, double *lut, uint8_t *idx) {
  uint32_t *a = NULL, *t = NULL;
  int64_t *b = NULL, *top = NULL, u = 0, i, it;
  double *s = NULL, mid[256];
  int32_t j;
  int rc = -1;
  for (j = 0; j < k; j++) lut[j] = 0.0;
  for (j = 0; j + 1 < k; j++) mid[j] = 0.0;
  if (n == 0) return 1;
  a = (uint32_t *)MGOPT_MALLOC((size_t)n * 4);
  t = (uint32_t *)MGOPT_MALLOC((size_t)n * 4);
  b = (int64_t *)MGOPT_MALLOC((size_t)(k + 1) * 8);
  if (!a || !t || !b) goto done;
  for (i = 0; i < n; i++) a[i] = mgopt__kp_key(x[i] + 0.0f);
  mgopt__kp_radix(a, t, n);
  MGOPT_FREE(t);
  t = NULL;
  for (i = 0; i < n && u <= k; i++)
    if (i == 0 || a[i] != a[i - 1]) u++;
  if (u <= k) { /* the distinct values themselves */
    u = 0;
    for (i = 0; i < n; i++)
      if (i == 0 || a[i] != a[i - 1]) lut[u++] = mgopt__kp_unkey(a[i]);
    for (j = 0; j + 1 < (int32_t)u; j++) mid[j] = (lut[j] + lut[j + 1]) / 2.0;
    for (; j + 1 < k; j++) mid[j] = HUGE_VAL;
  } else {
    /* s[j]: sum of the 64*j smallest values (a key turns back into its value);
       mgopt__kp_psum adds the rest of a partial block in order */
    s = (double *)MGOPT_MALLOC((size_t)(n / 64 + 1) * 8);
    if (!s) goto done;
    s[0] = 0.0;
    for (i = 0; i + 64 <= n; i += 64) {
      double v = s[i / 64];
      int64_t q;
      for (q = i; q < i + 64; q++) v += (double)mgopt__kp_unkey(a[q]);
      s[i / 64 + 1] = v;
    }
    /* start: K runs of (about) n/K elements, cut between distinct values, each
       non-empty: cut j is at most top[k-j], the start of the (k-j)-th distinct
       value from the top */
    top = (int64_t *)MGOPT_MALLOC((size_t)(k + 1) * 8);
    if (!top) goto done;
    top[0] = n;
    for (j = 1; j <= k; j++) {
      int64_t p = top[j - 1] - 1;
      while (p > 0 && a[p] == a[p - 1]) p--;
      top[j] = p;
    }
    b[0] = 0;
    b[k] = n;
    for (j = 1; j < k; j++) {
      int64_t p = (int64_t)(((double)n * j) / k);
      while (p > 0 && a[p] == a[p - 1]) p--; /* the start of p's run of equal values */
      if (p <= b[j - 1]) {                   /* to the next distinct value */
        p = b[j - 1] + 1;
        while (p < n && a[p] == a[p - 1]) p++;
      }
      if (p > top[k - j]) p = top[k - j];
      b[j] = p;
    }
    for (j = 0; j < k; j++)
      lut[j] = (mgopt__kp_psum(a, s, b[j + 1]) - mgopt__kp_psum(a, s, b[j])) / (double)(b[j + 1] - b[j]);
    for (it = 0; it < 300; it++) {
      int moved = 0;
      for (j = 0; j + 1 < k; j++) mid[j] = (lut[j] + lut[j + 1]) / 2.0;
      for (j = 1; j < k; j++) { /* the first element above mid[j-1] */
        int64_t lo = 0, hi = n;
        while (lo < hi) {
          int64_t m = lo + (hi - lo) / 2;
          if ((double)mgopt__kp_unkey(a[m]) <= mid[j - 1]) lo = m + 1;
          else hi = m;
        }
        if (lo != b[j]) moved = 1;
        b[j] = lo;
      }
      if (!moved) break;
      for (j = 0; j < k; j++)
        if (b[j + 1] > b[j])
          lut[j] = (mgopt__kp_psum(a, s, b[j + 1]) - mgopt__kp_psum(a, s, b[j])) / (double)(b[j + 1] - b[j]);
    }
    for (j = 0; j + 1 < k; j++) mid[j] = (lut[j] + lut[j + 1]) / 2.0;
  }
  for (i = 0; i < n; i++) idx[i] = (uint8_t)mgopt__kp_rank(mid, k, (double)x[i]);
  rc = 1;
done:
  MGOPT_FREE(a);
  MGOPT_FREE(t);
  MGOPT_FREE(b);
  MGOPT_FREE(top);
  MGOPT_FREE(s);
  return rc;
}

/* ---------------------------------------------------------------- unique */

typedef struct mgopt__kp_vsort {
  const float *x;
  int32_t cd;
} mgopt__kp_vsort;

/* Lexicographic order of vectors; equal vectors by position (a total order, so
   qsort's result does not depend on the C library). Vectors hold no NaN and no -0. */
static int mgopt__kp_vcmp(const float *a, const float *b, int32_t cd) {
  int32_t d;
  for (d = 0; d < cd; d++) {
    if (a[d] < b[d]) return -1;
    if (a[d] > b[d]) return 1;
  }
  return 0;
}

/* Insertion-merge sort of vector positions (bottom-up merge sort, stable). */
static void mgopt__kp_vmsort(int64_t *p, int64_t *tmp, int64_t n, const float *x, int32_t cd) {
  int64_t w, i;
  for (w = 1; w < n; w *= 2) {
    for (i = 0; i < n; i += 2 * w) {
      int64_t a = i, am = i + w < n ? i + w : n, bm = i + 2 * w < n ? i + 2 * w : n, bb = am, o = i;
      while (a < am && bb < bm)
        tmp[o++] = mgopt__kp_vcmp(x + p[bb] * cd, x + p[a] * cd, cd) < 0 ? p[bb++] : p[a++];
      while (a < am) tmp[o++] = p[a++];
      while (bb < bm) tmp[o++] = p[bb++];
    }
    memcpy(p, tmp, (size_t)n * 8);
  }
}

MGOPT__PRIVATE int32_t mgopt__kp_unique(const float *x, int64_t n, int32_t cd, double *lut, uint8_t *idx) {
  int64_t *p, *t, i;
  int32_t u = 0, d;
  if (n == 0) return 0;
  p = (int64_t *)MGOPT_MALLOC((size_t)n * 8);
  t = (int64_t *)MGOPT_MALLOC((size_t)n * 8);
  if (!p || !t) {
    MGOPT_FREE(p);
    MGOPT_FREE(t);
    return -2;
  }
  for (i = 0; i < n; i++) p[i] = i;
  mgopt__kp_vmsort(p, t, n, x, cd);
  for (i = 0; i < n; i++) {
    if (i == 0 || mgopt__kp_vcmp(x + p[i] * cd, x + p[i - 1] * cd, cd) != 0) {
      if (u == 256) {
        u = -1;
        break;
      }
      for (d = 0; d < cd; d++) lut[(int64_t)u * cd + d] = x[p[i] * cd + d];
      u++;
    }
    idx[p[i]] = (uint8_t)(u - 1);
  }
  MGOPT_FREE(p);
  MGOPT_FREE(t);
  return u;
}

/* ---------------------------------------------------------------- uniform */

MGOPT__PRIVATE void mgopt__kp_uniform(const float *x, int64_t n, int32_t k, double *lut, uint8_t *idx) {
  double lo = 0.0, hi = 0.0, range, step;
  int64_t i;
  int32_t j;
  for (i = 0; i < n; i++) {
    if (i == 0 || x[i] < lo) lo = x[i];
    if (i == 0 || x[i] > hi) hi = x[i];
  }
  range = hi - lo;
  step = range / (double)(k - 1);
  for (j = 0; j < k; j++) {
    double t = (double)j * step;
    lut[j] = lo + t;
  }
  for (i = 0; i < n; i++) {
    double q = range > 0.0 ? ((double)x[i] - lo) / range * (double)(k - 1) : 0.0, f = floor(q), r = q - f;
    if (r > 0.5 || (r == 0.5 && fmod(f, 2.0) != 0.0)) f += 1.0;
    if (f > k - 1) f = k - 1;
    idx[i] = (uint8_t)f;
  }
}

/* ---------------------------------------------------------------- vector k-means */

static uint64_t mgopt__kp_splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double mgopt__kp_d2(const float *a, const double *c, int32_t cd) {
  double s = 0.0;
  int32_t d;
  for (d = 0; d < cd; d++) {
    double e = (double)a[d] - c[d], sq = e * e;
    s = s + sq;
  }
  return s;
}

MGOPT__PRIVATE int mgopt__kp_kmeans_vec(const float *x, int64_t n, int32_t cd, int32_t k, double *lut,
                                        uint8_t *idx) {
  double *dist = NULL, *sum = NULL;
  int64_t *cnt = NULL, i, it;
  uint64_t seed = 0;
  int32_t j, d, got;
  int rc = -1;
  got = mgopt__kp_unique(x, n, cd, lut, idx);
  if (got == -2) return -1;
  for (i = (got < 0 ? 0 : got) * (int64_t)cd; i < (int64_t)k * cd; i++) lut[i] = 0.0;
  if (got >= 0 && got <= k) return 1;
  dist = (double *)MGOPT_MALLOC((size_t)n * 8);
  sum = (double *)MGOPT_MALLOC((size_t)k * cd * 8);
  cnt = (int64_t *)MGOPT_MALLOC((size_t)k * 8);
  if (!dist || !sum || !cnt) goto done;
  /* k-means++: the first centre uniformly, then proportional to D^2 */
  i = (int64_t)(mgopt__kp_splitmix(&seed) % (uint64_t)n);
  for (d = 0; d < cd; d++) lut[d] = x[i * cd + d];
  for (i = 0; i < n; i++) dist[i] = mgopt__kp_d2(x + i * cd, lut, cd);
  for (j = 1; j < k; j++) {
    double total = 0.0, r, acc = 0.0;
    int64_t pick = n - 1;
    for (i = 0; i < n; i++) total += dist[i];
    r = (double)(mgopt__kp_splitmix(&seed) >> 11) / 9007199254740992.0 * total;
    for (i = 0; i < n; i++) {
      acc += dist[i];
      if (dist[i] > 0.0 && acc > r) {
        pick = i;
        break;
      }
    }
    for (d = 0; d < cd; d++) lut[(int64_t)j * cd + d] = x[pick * cd + d];
    for (i = 0; i < n; i++) {
      double e = mgopt__kp_d2(x + i * cd, lut + (int64_t)j * cd, cd);
      if (e < dist[i]) dist[i] = e;
    }
  }
  for (i = 0; i < n; i++) idx[i] = 255;
  for (it = 0; it < 300; it++) {
    int changed = 0;
    for (i = 0; i < n; i++) {
      double best = 0.0;
      int32_t bj = 0;
      for (j = 0; j < k; j++) {
        double e = mgopt__kp_d2(x + i * cd, lut + (int64_t)j * cd, cd);
        if (j == 0 || e < best) {
          best = e;
          bj = j;
        }
      }
      if (idx[i] != (uint8_t)bj) changed = 1;
      idx[i] = (uint8_t)bj;
    }
    if (!changed) break;
    for (i = 0; i < (int64_t)k * cd; i++) sum[i] = 0.0;
    for (j = 0; j < k; j++) cnt[j] = 0;
    for (i = 0; i < n; i++) {
      cnt[idx[i]]++;
      for (d = 0; d < cd; d++) sum[(int64_t)idx[i] * cd + d] += x[i * cd + d];
    }
    for (j = 0; j < k; j++)
      if (cnt[j])
        for (d = 0; d < cd; d++) lut[(int64_t)j * cd + d] = sum[(int64_t)j * cd + d] / (double)cnt[j];
  }
  rc = 1;
done:
  MGOPT_FREE(dist);
  MGOPT_FREE(sum);
  MGOPT_FREE(cnt);
  return rc;
}

/* ---------------------------------------------------------------- whole weight */

MGOPT__PRIVATE void mgopt__kp_free(mgopt__pal_out *o) {
  MGOPT_FREE(o->idx);
  MGOPT_FREE(o->lut);
  MGOPT_FREE(o->pcs);
  o->idx = NULL;
  o->lut = NULL;
  o->pcs = NULL;
}

MGOPT__PRIVATE int mgopt__kp_palettize(const mgopt__pal_cfg *cfg, const float *w0, int32_t rank,
                                       const int64_t *shape, mgopt__pal_out *o) {
  int64_t outer = 1, inner = 1, ch, gs, groups, numel, nvec, gvec, g, i, q, e, c;
  int32_t a = cfg->channel_axis, cd = cfg->cluster_dim < 1 ? 1 : cfg->cluster_dim, d, k = 0, kmax = 0;
  float *w = NULL, *gv = NULL, *lf = NULL;
  const float *wv = w0, *vals;
  uint8_t *gi = NULL, *gidx;
  double *glut = NULL;
  int rc = MGOPT__K_NO, direct;
  memset(o, 0, sizeof *o);
  if (rank < 1 || a < 0 || a >= rank) return MGOPT__K_NO;
  for (d = 0; d < a; d++) outer *= shape[d];
  for (d = a + 1; d < rank; d++) inner *= shape[d];
  ch = shape[a];
  numel = outer * ch * inner;
  gs = cfg->per_grouped_channel ? (cfg->group_size == 0 ? ch : cfg->group_size) : ch;
  if (numel == 0 || gs <= 0 || ch % gs || gs % cd) return MGOPT__K_NO;
  if (cfg->mode == MGOPT__PAL_UNIFORM && cd > 1) return MGOPT__K_NO;
  if (cfg->mode == MGOPT__PAL_KMEANS || cfg->mode == MGOPT__PAL_UNIFORM) {
    if (cfg->nbits < 1 || cfg->nbits > 8 || mgopt__kp_nbits_for((int64_t)1 << cfg->nbits) != cfg->nbits)
      return MGOPT__K_NO;
    k = 1 << cfg->nbits;
  }
  for (i = 0; i < numel; i++)
    if (!(w0[i] - w0[i] == 0.0f)) return MGOPT__K_NO; /* NaN or infinity */
  groups = ch / gs;
  nvec = numel / cd;
  gvec = nvec / groups;
  direct = groups == 1 && cd == 1; /* the group is the weight in row-major order: no copies */
  if (!direct) {
    gv = (float *)MGOPT_MALLOC((size_t)numel / (size_t)groups * 4);
    gi = (uint8_t *)MGOPT_MALLOC((size_t)gvec);
  }
  o->idx = (uint8_t *)MGOPT_MALLOC((size_t)nvec);
  glut = (double *)MGOPT_MALLOC((size_t)groups * 256 * (size_t)cd * 8);
  if (cfg->mode == MGOPT__PAL_CUSTOM) lf = (float *)MGOPT_MALLOC((size_t)256 * (size_t)cd * 4);
  if ((!direct && (!gv || !gi)) || !o->idx || !glut || (cfg->mode == MGOPT__PAL_CUSTOM && !lf)) goto oom;
  memset(glut, 0, (size_t)groups * 256 * (size_t)cd * 8);
  vals = direct ? w0 : gv;
  gidx = direct ? o->idx : gi;
  if (cfg->per_channel_scale) { /* max |w| along the channel axis, 0 -> 1 */
    w = (float *)MGOPT_MALLOC((size_t)numel * 4);
    if (!w) goto oom;
    memcpy(w, w0, (size_t)numel * 4);
    wv = w;
    if (direct) vals = w;
    o->pcs = (float *)MGOPT_MALLOC((size_t)(outer * inner) * 4);
    if (!o->pcs) goto oom;
    for (q = 0; q < outer; q++)
      for (e = 0; e < inner; e++) {
        float m = 0.0f;
        for (c = 0; c < ch; c++) {
          float v = fabsf(w[(q * ch + c) * inner + e]);
          if (v > m) m = v;
        }
        if (m == 0.0f) m = 1.0f;
        o->pcs[q * inner + e] = m;
        for (c = 0; c < ch; c++) w[(q * ch + c) * inner + e] /= m;
      }
  }
  for (g = 0; g < groups; g++) {
    int64_t n = direct ? numel : 0;
    int32_t got = 0;
    /* the group's vectors: outer, channel vector, inner order */
    if (!direct)
      for (q = 0; q < outer; q++)
        for (c = g * gs; c < (g + 1) * gs; c += cd)
          for (e = 0; e < inner; e++, n++)
            for (d = 0; d < cd; d++) gv[n * cd + d] = wv[(q * ch + c + d) * inner + e];
    switch (cfg->mode) {
      case MGOPT__PAL_KMEANS:
        if ((cd == 1 ? mgopt__kp_kmeans1d(vals, n, k, glut + g * 256 * cd, gidx)
                     : mgopt__kp_kmeans_vec(vals, n, cd, k, glut + g * 256 * cd, gidx)) < 0)
          goto oom;
        got = k;
        break;
      case MGOPT__PAL_UNIFORM:
        mgopt__kp_uniform(vals, n, k, glut + g * 256, gidx);
        got = k;
        break;
      case MGOPT__PAL_UNIQUE:
        got = mgopt__kp_unique(vals, n, cd, glut + g * 256 * cd, gidx);
        if (got == -2) goto oom;
        if (got < 0) goto fail;
        break;
      case MGOPT__PAL_CUSTOM: {
        int64_t t;
        if (!cfg->lut_fn) goto fail;
        memset(lf, 0, (size_t)256 * (size_t)cd * 4);
        got = cfg->lut_fn(cfg->lut_ud, cfg->weight_name, g, vals, n, cd, lf, gidx);
        if (got < 1 || got > 256) goto fail;
        for (t = 0; t < n; t++)
          if (gidx[t] >= got) goto fail;
        for (t = 0; t < (int64_t)got * cd; t++) glut[g * 256 * cd + t] = lf[t];
        break;
      }
      default: goto fail;
    }
    if (got > kmax) kmax = got;
    n = 0;
    if (!direct)
      for (q = 0; q < outer; q++)
        for (c = g * gs; c < (g + 1) * gs; c += cd)
          for (e = 0; e < inner; e++, n++) o->idx[(q * (ch / cd) + c / cd) * inner + e] = gi[n];
  }
  o->nbits = (cfg->mode == MGOPT__PAL_KMEANS || cfg->mode == MGOPT__PAL_UNIFORM) ? cfg->nbits
                                                                                    : mgopt__kp_nbits_for(kmax);
  o->groups = groups;
  o->cluster_dim = cd;
  k = 1 << o->nbits;
  o->lut = (double *)MGOPT_MALLOC((size_t)groups * (size_t)k * (size_t)cd * 8);
  if (!o->lut) goto oom;
  for (g = 0; g < groups; g++)
    for (i = 0; i < (int64_t)k * cd; i++)
      o->lut[(g * k) * cd + i] = glut[g * 256 * cd + i];
  rc = MGOPT__K_OK;
  goto done;
oom:
  rc = MGOPT__K_OOM;
fail:
  mgopt__kp_free(o);
done:
  MGOPT_FREE(w);
  MGOPT_FREE(gv);
  MGOPT_FREE(gi);
  MGOPT_FREE(glut);
  MGOPT_FREE(lf);
  return rc;
}
