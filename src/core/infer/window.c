/* src/core/infer/window.c — type inference of sliding-window ops: conv, conv_transpose, avg_pool, max_pool. */
#include "infer.h"

enum { MGOPT__TI_VALID, MGOPT__TI_SAME, MGOPT__TI_SAME_LOWER, MGOPT__TI_CUSTOM };

static int mgopt__ti_pad_type(const mgopt_op *op) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(op, "pad_type", &n);
  if (!s) return MGOPT__TI_VALID;
  if (n == 5 && memcmp(s, "valid", 5) == 0) return MGOPT__TI_VALID;
  if (n == 4 && memcmp(s, "same", 4) == 0) return MGOPT__TI_SAME;
  if (n == 10 && memcmp(s, "same_lower", 10) == 0) return MGOPT__TI_SAME_LOWER;
  if (n == 6 && memcmp(s, "custom", 6) == 0) return MGOPT__TI_CUSTOM;
  return -1;
}

/* Output size of a sliding window over `in` (kernel k, stride st, dilation dl,
   pads pb/pe used only by custom). k < 0: kernel unknown. 0 when it does not fit. */
static int mgopt__ti_window(mgopt_dim in, int64_t k, int64_t st, int64_t dl, int64_t pb, int64_t pe, int pt,
                            int ceil_mode, mgopt_dim *o) {
  int64_t eff, num, v;
  *o = mgopt_dim_unknown();
  if (pt == MGOPT__TI_SAME || pt == MGOPT__TI_SAME_LOWER) {
    if (st == 1) *o = in;
    else if (mgopt__ti_st(in)) *o = mgopt_dim_static(in.v / st + (in.v % st != 0));
    return 1;
  }
  if (pt != MGOPT__TI_CUSTOM) pb = pe = 0;
  if (k < 0 || !mgopt__ti_st(in)) return 1;
  if (!mgopt__mul_i64(dl, k - 1, &eff) || !mgopt__add_i64(in.v, pb, &num) || !mgopt__add_i64(num, pe, &num) ||
      num - 1 < eff)
    return 0;
  num -= eff + 1;
  v = num / st + 1;
  if (ceil_mode && num % st != 0) {
    v++;
    /* the last window must start inside the input or its leading padding */
    if ((v - 1) >= (in.v + pb - 1) / st + 1) v--;
  }
  *o = mgopt_dim_static(v);
  return 1;
}

/* One INTS window parameter of `want` entries, each >= lo; *v = dflt when absent. */
static mgopt_status mgopt__ti_wparam(mgopt_program *p, const mgopt_op *op, const char *name, int64_t want,
                                     int64_t lo, const int64_t *dflt, const int64_t **v, mgopt_diag *d) {
  int64_t n = mgopt__ti_ints(p, op, name, v), k;
  if (n == -2) return mgopt__ti_fail(d, op, "'%s' is not constant", name);
  if (n == -1) {
    *v = dflt;
    return MGOPT_OK;
  }
  if (n != want) return mgopt__ti_fail(d, op, "'%s' has %lld entries, expected %lld", name, (long long)n, (long long)want);
  for (k = 0; k < n; k++)
    if ((*v)[k] < lo) return mgopt__ti_fail(d, op, "bad '%s' entry %lld", name, (long long)(*v)[k]);
  return MGOPT_OK;
}

/* Reads pad_type, strides and dilations (sp entries, default 1) and pad (2*sp, default 0). */
static mgopt_status mgopt__ti_window_params(mgopt_program *p, const mgopt_op *op, int64_t sp, const int64_t **st,
                                            const int64_t **dl, const int64_t **pd, int *pt, mgopt_diag *d) {
  int64_t *ones = (int64_t *)mgopt_program_alloc(p, sizeof(int64_t) * (size_t)(sp + 1), 8), k;
  int64_t *zeros = (int64_t *)mgopt_program_alloc(p, sizeof(int64_t) * (size_t)(2 * sp + 1), 8);
  mgopt_status s;
  if (!ones || !zeros) return mgopt__ti_nomem(d);
  for (k = 0; k < sp; k++) ones[k] = 1;
  *pt = mgopt__ti_pad_type(op);
  if (*pt < 0) return mgopt__ti_fail(d, op, "unknown pad_type");
  if ((s = mgopt__ti_wparam(p, op, "strides", sp, 1, ones, st, d)) != MGOPT_OK) return s;
  *dl = ones;
  if (op->kind == MGOPT_OP_conv || op->kind == MGOPT_OP_conv_transpose)
    if ((s = mgopt__ti_wparam(p, op, "dilations", sp, 1, ones, dl, d)) != MGOPT_OK) return s;
  *pd = zeros;
  if (*pt == MGOPT__TI_CUSTOM)
    if ((s = mgopt__ti_wparam(p, op, "pad", 2 * sp, 0, zeros, pd, d)) != MGOPT_OK) return s;
  return MGOPT_OK;
}

/* conv's output channels (*cout) from the weight [cout, cin/groups, ...] or, transposed,
   [cin, cout/groups, ...]; fails when the input's channels do not match the weight. */
static mgopt_status mgopt__ti_conv_channels(const mgopt_op *op, const mgopt_type *x, const mgopt_type *w,
                                            int64_t groups, mgopt_dim *cout, mgopt_diag *d) {
  int tr = op->kind == MGOPT_OP_conv_transpose;
  mgopt_dim cin = w->dims[tr ? 0 : 1];
  *cout = w->dims[tr ? 1 : 0];
  if (tr && mgopt__ti_st(*cout)) {
    int64_t v;
    if (!mgopt__mul_i64(cout->v, groups, &v)) return mgopt__ti_fail(d, op, "channel count overflows");
    *cout = mgopt_dim_static(v);
  } else if (tr && groups != 1) {
    *cout = mgopt_dim_unknown();
  }
  if (x->rank >= 0 && mgopt__ti_st(x->dims[1]) && mgopt__ti_st(cin)) {
    int64_t want = cin.v;
    if (!tr && !mgopt__mul_i64(cin.v, groups, &want)) return mgopt__ti_fail(d, op, "channel count overflows");
    if (x->dims[1].v != want || (tr && x->dims[1].v % groups != 0))
      return mgopt__ti_fail(d, op, "input has %lld channels, weight expects %lld", (long long)x->dims[1].v,
                            (long long)want);
  }
  return MGOPT_OK;
}

/* Output size *o of conv_transpose in spatial dim k (input `in`, kernel kk, -1 when unknown; pd: the
   dim's two pads) when no output_shape gives it. */
static mgopt_status mgopt__ti_convt_dim(const mgopt_op *op, int64_t k, mgopt_dim in, int64_t kk, int64_t st,
                                        int64_t dl, const int64_t *pd, int pt, mgopt_dim *o, mgopt_diag *d) {
  int64_t v, e, pb = pt == MGOPT__TI_CUSTOM ? pd[0] : 0, pe = pt == MGOPT__TI_CUSTOM ? pd[1] : 0;
  *o = mgopt_dim_unknown();
  if (pt == MGOPT__TI_SAME || pt == MGOPT__TI_SAME_LOWER) {
    if (st == 1) *o = in;
    else if (mgopt__ti_st(in)) {
      if (!mgopt__mul_i64(in.v, st, &v)) return mgopt__ti_fail(d, op, "dim overflows");
      *o = mgopt_dim_static(v);
    }
    return MGOPT_OK;
  }
  if (!mgopt__ti_st(in) || kk <= 0) return MGOPT_OK;
  if (in.v < 1 || !mgopt__mul_i64(in.v - 1, st, &v) || !mgopt__mul_i64(dl, kk - 1, &e) || !mgopt__add_i64(v, e, &v) ||
      !mgopt__add_i64(v, 1, &v))
    return mgopt__ti_fail(d, op, "bad spatial dim %lld", (long long)k);
  v -= pb; /* pads are >= 0 and v >= 1: no overflow */
  if (v >= 0) v -= pe;
  if (v < 0) return mgopt__ti_fail(d, op, "padding larger than the output in spatial dim %lld", (long long)k);
  *o = mgopt_dim_static(v);
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_conv(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                              mgopt_diag *d) {
  mgopt_type x, w;
  mgopt_status s;
  const int64_t *st, *dl, *pd, *os = NULL;
  int64_t r, sp, k, groups = mgopt_op_get_int(op, "groups", 1), nos = -1;
  int pt, tr = op->kind == MGOPT_OP_conv_transpose;
  mgopt_dim cout = mgopt_dim_unknown();
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "weight", &w, d)) != MGOPT_OK) return s;
  r = x.rank >= 0 ? x.rank : w.rank;
  if (x.rank >= 0 && w.rank >= 0 && x.rank != w.rank)
    return mgopt__ti_fail(d, op, "input rank %d and weight rank %d differ", (int)x.rank, (int)w.rank);
  if (r >= 0 && r < 3) return mgopt__ti_fail(d, op, "rank %lld is too small", (long long)r);
  if (groups < 1) return mgopt__ti_fail(d, op, "groups must be positive");
  if (r < 0) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  sp = r - 2;
  if ((s = mgopt__ti_window_params(p, op, sp, &st, &dl, &pd, &pt, d)) != MGOPT_OK) return s;
  if (w.rank >= 0 && (s = mgopt__ti_conv_channels(op, &x, &w, groups, &cout, d)) != MGOPT_OK) return s;
  if (tr) {
    nos = mgopt__ti_ints(p, op, "output_shape", &os);
    if (nos >= 0 && nos != r && nos != sp)
      return mgopt__ti_fail(d, op, "'output_shape' has %lld entries", (long long)nos);
  }
  if ((s = mgopt__ti_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  out->dims[0] = x.rank >= 0 ? x.dims[0] : mgopt_dim_unknown();
  out->dims[1] = cout;
  for (k = 0; k < sp; k++) {
    mgopt_dim in = x.rank >= 0 ? x.dims[2 + k] : mgopt_dim_unknown();
    int64_t kk = (w.rank >= 0 && mgopt__ti_st(w.dims[2 + k])) ? w.dims[2 + k].v : -1;
    mgopt_dim o = mgopt_dim_unknown();
    if (w.rank >= 0 && kk == 0) return mgopt__ti_fail(d, op, "empty kernel");
    if (!tr) {
      if (!mgopt__ti_window(in, kk, st[k], dl[k], pd[2 * k], pd[2 * k + 1], pt, 0, &o))
        return mgopt__ti_fail(d, op, "kernel does not fit the input in spatial dim %lld", (long long)k);
    } else if (nos == -2) {
      o = mgopt_dim_unknown();
    } else if (nos >= 0) {
      int64_t v = os[nos == r ? 2 + k : k];
      if (v < 0) return mgopt__ti_fail(d, op, "negative 'output_shape' entry");
      o = mgopt_dim_static(v);
    } else if ((s = mgopt__ti_convt_dim(op, k, in, kk, st[k], dl[k], pd + 2 * k, pt, &o, d)) != MGOPT_OK) {
      return s;
    }
    out->dims[2 + k] = o;
  }
  if (tr && nos == r) {
    if (os[0] < 0 || os[1] < 0) return mgopt__ti_fail(d, op, "negative 'output_shape' entry");
    out->dims[0] = mgopt_dim_static(os[0]);
    out->dims[1] = mgopt_dim_static(os[1]);
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_pool(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                              mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *ks = NULL, *st, *dl, *pd;
  int64_t n, r, k;
  int pt, cm = mgopt_op_get_bool(op, "ceil_mode", 0);
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  n = mgopt__ti_ints(p, op, "kernel_sizes", &ks);
  if (n == -1) return mgopt__ti_fail(d, op, "missing 'kernel_sizes'");
  r = x.rank >= 0 ? x.rank : n >= 0 ? n + 2 : -1;
  if (r < 0) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  if (r < 3) return mgopt__ti_fail(d, op, "rank %lld is too small", (long long)r);
  if (n >= 0 && n != r - 2) return mgopt__ti_fail(d, op, "'kernel_sizes' has %lld entries for rank %lld", (long long)n, (long long)r);
  if ((s = mgopt__ti_window_params(p, op, r - 2, &st, &dl, &pd, &pt, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  if (x.rank >= 0) {
    out->dims[0] = x.dims[0];
    out->dims[1] = x.dims[1];
  }
  for (k = 0; k < r - 2; k++) {
    mgopt_dim in = x.rank >= 0 ? x.dims[2 + k] : mgopt_dim_unknown();
    int64_t kk = n >= 0 ? ks[k] : -1;
    if (n >= 0 && kk < 1) return mgopt__ti_fail(d, op, "bad kernel size %lld", (long long)kk);
    if (!mgopt__ti_window(in, kk, st[k], 1, pd[2 * k], pd[2 * k + 1], pt, cm, &out->dims[2 + k]))
      return mgopt__ti_fail(d, op, "kernel does not fit the input in spatial dim %lld", (long long)k);
  }
  return MGOPT_OK;
}

/* upsample_nearest_neighbor, upsample_bilinear (scale factors > 0: floor(dim * factor)),
   resize_nearest_neighbor, resize_bilinear (target sizes >= 1): x of rank >= 3, the last two dims
   resampled, the others kept. An output dim must be at least 1. */
MGOPT__PRIVATE mgopt_status mgopt__infer_resample(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                  mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  int up = op->kind == MGOPT_OP_upsample_nearest_neighbor || op->kind == MGOPT_OP_upsample_bilinear, k;
  int64_t j;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (x.rank >= 0 && x.rank < 3) return mgopt__ti_fail(d, op, "expects rank 3 or more, got %d", (int)x.rank);
  if (op->kind == MGOPT_OP_resize_bilinear) {
    const char *m = mgopt_op_get_string(op, "sampling_mode", NULL);
    if (m && strcmp(m, "DEFAULT") != 0 && strcmp(m, "STRICT_ALIGN_CORNERS") != 0 && strcmp(m, "ALIGN_CORNERS") != 0 &&
        strcmp(m, "OFFSET_CORNERS") != 0 && strcmp(m, "UNALIGN_CORNERS") != 0)
      return mgopt__ti_fail(d, op, "unknown sampling_mode \"%s\"", m);
  }
  if ((s = mgopt__ti_out(p, op, out, x.dtype, x.rank, d)) != MGOPT_OK) return s;
  if (x.rank < 0) return MGOPT_OK;
  for (j = 0; j < x.rank - 2; j++) out->dims[j] = x.dims[j];
  for (k = 0; k < 2; k++) {
    mgopt_dim in = x.dims[x.rank - 2 + k];
    mgopt_dim o = mgopt_dim_unknown();
    if (up) {
      double f = mgopt_op_get_float(op, k ? "scale_factor_width" : "scale_factor_height", 1.0), v;
      if (!(f > 0.0) || f > 1e9) return mgopt__ti_fail(d, op, "bad scale factor");
      if (f == 1.0) o = in;
      else if (mgopt__ti_st(in)) {
        v = floor((double)in.v * f);
        if (v < 1.0 || v > 9e15) return mgopt__ti_fail(d, op, "scale factor gives an output dim of %g", v);
        o = mgopt_dim_static((int64_t)v);
      }
    } else {
      int64_t v = mgopt_op_get_int(op, k ? "target_size_width" : "target_size_height", 1);
      if (v < 1) return mgopt__ti_fail(d, op, "target size %lld", (long long)v);
      o = mgopt_dim_static(v);
    }
    out->dims[x.rank - 2 + k] = o;
  }
  return MGOPT_OK;
}
