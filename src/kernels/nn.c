/* src/kernels/nn.c — folding kernels of the neural-network ops: conv, conv_transpose, avg_pool, max_pool,
   batch_norm, instance_norm, layer_norm, prelu, pixel_shuffle, space_to_batch, batch_to_space.

   Numeric contract. Every float op here takes fp16, bf16, fp32 or fp64 and
   writes the input's dtype; integer, bool and sub-byte dtypes are not folded
   (MIL defines these ops on floats only). Inputs are widened to double, each
   output element is computed in double and rounded once to the output dtype
   (round to nearest even). Sums run in a fixed order:
     conv            bias + sum over (input channel, kernel position) in increasing
                     row-major order; the sum starts at 0 and the bias is added last.
     conv_transpose  the same order over the (input channel, kernel position, input
                     position) terms that reach an output element.
     avg_pool        the window's valid elements in row-major order, divided by the
                     count (exclude_padding_from_average) or by the kernel size.
     batch_norm      (x - mean) / sqrt(variance + epsilon) * gamma + beta.
     instance_norm,  mean = sum / n, variance = sum((x - mean)^2) / n (population),
     layer_norm      then (x - mean) / sqrt(variance + epsilon) * gamma + beta.
     prelu           x > 0 ? x : alpha * x (ONNX PRelu's form; -0 stays -0 for alpha > 0).
     local_response_norm  x / (k + alpha / size * s)^beta, s the sum of x^2 over the
                     channels c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2) that exist
                     (ONNX LRN's window; centred for an odd size), in increasing channel
                     order; alpha, beta and k are first rounded to the dtype; pow in double.
   For fp32 inputs a product is exact in double, so a result differs from the
   exact value by at most the double-precision sum error plus the final rounding.
   NaN and Inf propagate as in IEEE arithmetic; in max_pool a NaN in the window
   wins (the first NaN met is the result). pixel_shuffle, space_to_batch and
   batch_to_space move elements and take any byte-addressable dtype.

   Geometry follows mgopt's type inference (core/infer/window.c) exactly:
   pad_type valid, custom (pad = [begin0, end0, begin1, end1, ...]), same (the
   odd padding unit at the end) and same_lower (at the beginning); ceil_mode
   windows must start inside the input or its leading padding. Not folded
   (doubtful or hostile): spatial ranks other than 1..3, any dim, stride,
   dilation, kernel size or pad above 2^30, more than 2^32 multiply-adds, an
   avg_pool window that counts padding and reaches past the end padding
   (ceil_mode), a pool window with no input element, conv_transpose with
   same / same_lower padding of a negative total, and an output_shape
   other than the natural size plus less than one stride at the end (the
   extra outputs, as ONNX's output_padding, hold the bias alone). */
#include "kernels.h"

#define MGOPT__KN_SP 3                      /* spatial dims the loops run over (unit dims in front) */
#define MGOPT__KN_BIG ((int64_t)1 << 30)    /* largest dim, stride, dilation, kernel size, pad */
#define MGOPT__KN_WORK ((int64_t)1 << 32)   /* most multiply-adds one fold may take */

enum { MGOPT__KN_VALID, MGOPT__KN_SAME, MGOPT__KN_SAME_LOWER, MGOPT__KN_CUSTOM };

/* The sliding-window geometry of one op over MGOPT__KN_SP spatial dims. */
typedef struct mgopt__kn_win {
  int64_t in[MGOPT__KN_SP], k[MGOPT__KN_SP], st[MGOPT__KN_SP], dl[MGOPT__KN_SP];
  int64_t pb[MGOPT__KN_SP], pe[MGOPT__KN_SP], out[MGOPT__KN_SP];
  int pt;
} mgopt__kn_win;

static int mgopt__kn_float(mgopt_dtype dt) {
  int lane = mgopt__k_lane(dt);
  return lane == MGOPT__LANE_F32 || lane == MGOPT__LANE_F64;
}

/* t widened to double in scratch. */
static int mgopt__kn_load(mgopt__kctx *k, mgopt_tensor *t, double **out) {
  double *b = (double *)mgopt__k_scratch(k, t->numel, sizeof(double));
  if (!b) return MGOPT__K_OOM;
  *out = b;
  return mgopt__k_load(k, t, MGOPT__LANE_F64, b);
}

/* An optional per-channel operand: absent (*out NULL), or a float vector of c entries. */
static int mgopt__kn_vec(mgopt__kctx *k, const char *slot, int64_t c, double **out) {
  mgopt_tensor *t = mgopt__k_operand(k, slot);
  *out = NULL;
  if (!mgopt_op_operand(k->op, slot)) return MGOPT__K_OK;
  if (!t || !mgopt__kn_float((mgopt_dtype)t->dtype) || t->rank != 1 || t->shape[0] != c) return MGOPT__K_NO;
  return mgopt__kn_load(k, t, out);
}

static int64_t mgopt__kn_floordiv(int64_t a, int64_t b) { /* b > 0 */
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* The n integers of parameter `name` into v[MGOPT__KN_SP - n + i], each in [lo, 2^30];
   absent: dflt. 0 when unreadable or out of range. */
static int mgopt__kn_param(mgopt__kctx *k, const char *name, int64_t n, int64_t lo, int64_t dflt, int64_t *v,
                           int64_t stride) {
  const int64_t *p;
  int64_t m = mgopt__k_ints(k, name, &p), i;
  if (m == -2 || (m >= 0 && m != n * stride)) return 0;
  for (i = 0; i < n * stride; i++) {
    int64_t x = m < 0 ? dflt : p[i];
    if (x < lo || x > MGOPT__KN_BIG) return 0;
    v[(MGOPT__KN_SP - n) * stride + i] = x;
  }
  return 1;
}

/* Reads pad_type, strides, dilations (conv ops only) and custom pads of an op over the
   spatial dims of x (rank 2 + sp) into w, with unit dims in front. 0: not foldable. */
static int mgopt__kn_window(mgopt__kctx *k, const mgopt_tensor *x, int dil, mgopt__kn_win *w) {
  int64_t sp = x->rank - 2, pad[2 * MGOPT__KN_SP], i;
  size_t n = 0;
  const char *s = mgopt_op_get_string(k->op, "pad_type", &n);
  if (sp < 1 || sp > MGOPT__KN_SP) return 0;
  if (!s || (n == 5 && memcmp(s, "valid", 5) == 0)) w->pt = MGOPT__KN_VALID;
  else if (n == 4 && memcmp(s, "same", 4) == 0) w->pt = MGOPT__KN_SAME;
  else if (n == 10 && memcmp(s, "same_lower", 10) == 0) w->pt = MGOPT__KN_SAME_LOWER;
  else if (n == 6 && memcmp(s, "custom", 6) == 0) w->pt = MGOPT__KN_CUSTOM;
  else return 0;
  for (i = 0; i < MGOPT__KN_SP; i++) {
    w->in[i] = w->k[i] = w->st[i] = w->dl[i] = w->out[i] = 1;
    w->pb[i] = w->pe[i] = 0;
    pad[2 * i] = pad[2 * i + 1] = 0;
  }
  for (i = 0; i < sp; i++) {
    w->in[MGOPT__KN_SP - sp + i] = x->shape[2 + i];
    if (x->shape[2 + i] < 1 || x->shape[2 + i] > MGOPT__KN_BIG) return 0;
  }
  if (!mgopt__kn_param(k, "strides", sp, 1, 1, w->st, 1)) return 0;
  if (dil ? !mgopt__kn_param(k, "dilations", sp, 1, 1, w->dl, 1) : mgopt__k_has_param(k->op, "dilations"))
    return 0;
  if (w->pt == MGOPT__KN_CUSTOM) {
    if (!mgopt__kn_param(k, "pad", sp, 0, 0, pad, 2)) return 0;
    for (i = 0; i < MGOPT__KN_SP; i++) {
      w->pb[i] = pad[2 * i];
      w->pe[i] = pad[2 * i + 1];
    }
  }
  return 1;
}

/* Output sizes and pads of a forward window (conv, pools) once w->k is set. */
static int mgopt__kn_forward(mgopt__kn_win *w, int ceil_mode) {
  int i;
  for (i = 0; i < MGOPT__KN_SP; i++) {
    int64_t in = w->in[i], st = w->st[i], eff, num, v;
    if (w->k[i] < 1 || w->k[i] > MGOPT__KN_BIG) return 0;
    eff = w->dl[i] * (w->k[i] - 1) + 1;
    if (w->pt == MGOPT__KN_SAME || w->pt == MGOPT__KN_SAME_LOWER) {
      int64_t total;
      v = in / st + (in % st != 0);
      total = (v - 1) * st + eff - in;
      if (total < 0) total = 0;
      w->pb[i] = w->pt == MGOPT__KN_SAME ? total / 2 : total - total / 2;
      w->pe[i] = total - w->pb[i];
    } else {
      num = in + w->pb[i] + w->pe[i];
      if (num < eff) return 0;
      num -= eff;
      v = num / st + 1;
      if (ceil_mode && num % st != 0) {
        v++;
        if (v - 1 >= (in + w->pb[i] - 1) / st + 1) v--;
      }
    }
    w->out[i] = v;
  }
  return 1;
}

/* [*lo, *hi): the positions o in [0, n) with 0 <= o * st + off < lim. */
static void mgopt__kn_range(int64_t n, int64_t st, int64_t off, int64_t lim, int64_t *lo, int64_t *hi) {
  /* smallest o with o * st + off >= 0 */
  int64_t a = -mgopt__kn_floordiv(off, st);
  if (a * st + off < 0) a++;
  if (a < 0) a = 0;
  *lo = a;
  *hi = mgopt__kn_floordiv(lim - 1 - off, st) + 1;
  if (*hi > n) *hi = n;
  if (*hi < *lo) *hi = *lo;
}

/* Product of the three sizes, -1 above 2^62. */
static int64_t mgopt__kn_prod(const int64_t *v) {
  int64_t p = 1;
  int i;
  for (i = 0; i < MGOPT__KN_SP; i++)
    if (v[i] < 0 || !mgopt__mul_i64(p, v[i], &p) || p > ((int64_t)1 << 62)) return -1;
  return p;
}

/* Output shape [a, b, spatial...] for an input of rank r. */
static void mgopt__kn_shape(int64_t a, int64_t b, const mgopt__kn_win *w, int32_t r, int64_t *shape) {
  int32_t i;
  shape[0] = a;
  shape[1] = b;
  for (i = 2; i < r; i++) shape[i] = w->out[MGOPT__KN_SP - (r - 2) + (i - 2)];
}

/* ---------------------------------------------------------------- conv, conv_transpose */

MGOPT__PRIVATE int mgopt__kn_conv(mgopt__kctx *k) {
  MGOPT__K_NOCONTRACT
  const mgopt_op *op = k->op;
  int tr = op->kind == MGOPT_OP_conv_transpose;
  mgopt_tensor *x = mgopt__k_operand(k, "x"), *wt = mgopt__k_operand(k, "weight");
  int64_t groups = mgopt_op_get_int(op, "groups", 1), N, C, Cout, Cin_g, Cout_g, i, oshape[2 + MGOPT__KN_SP],
          ISP, OSP, KSP, work, n, g, ocl, icl, kd, kh, kw;
  int64_t hi[MGOPT__KN_SP];
  mgopt__kn_win w;
  mgopt_dtype dt;
  double *xd, *wd, *bd, *res;
  void *od;
  int r, d;
  if (!x || !wt || x->rank != wt->rank || x->rank < 3 || x->rank > 2 + MGOPT__KN_SP) return MGOPT__K_NO;
  if (mgopt__k_fused_act(op) < 0) return mgopt__k_no(k, "unknown fused_activation");
  dt = (mgopt_dtype)x->dtype;
  if (!mgopt__kn_float(dt) || wt->dtype != x->dtype) return MGOPT__K_NO;
  if (!mgopt__kn_window(k, x, 1, &w)) return MGOPT__K_NO;
  for (d = 0; d < x->rank - 2; d++) w.k[MGOPT__KN_SP - (x->rank - 2) + d] = wt->shape[2 + d];
  N = x->shape[0];
  C = x->shape[1];
  if (groups < 1 || groups > MGOPT__KN_BIG || C % groups != 0 || C > MGOPT__KN_BIG) return MGOPT__K_NO;
  if (!tr) {
    Cout = wt->shape[0];
    Cin_g = C / groups;
    if (wt->shape[1] != Cin_g || Cout % groups != 0) return MGOPT__K_NO;
    Cout_g = Cout / groups;
    if (!mgopt__kn_forward(&w, 0)) return MGOPT__K_NO;
  } else {
    const int64_t *os;
    int64_t nos = mgopt__k_ints(k, "output_shape", &os), sp = x->rank - 2;
    Cin_g = C / groups;
    Cout_g = wt->shape[1];
    if (wt->shape[0] != C || Cout_g > MGOPT__KN_BIG) return MGOPT__K_NO;
    Cout = Cout_g * groups;
    for (i = 0; i < MGOPT__KN_SP; i++) {
      int64_t eff, nat;
      if (w.k[i] < 1 || w.k[i] > MGOPT__KN_BIG) return MGOPT__K_NO;
      eff = w.dl[i] * (w.k[i] - 1) + 1;
      if (w.pt == MGOPT__KN_SAME || w.pt == MGOPT__KN_SAME_LOWER) {
        int64_t total = eff - w.st[i]; /* the full output cropped to in * stride */
        if (total < 0) return MGOPT__K_NO;
        w.pb[i] = w.pt == MGOPT__KN_SAME ? total / 2 : total - total / 2; /* odd unit: end / beginning */
        w.pe[i] = total - w.pb[i];
      }
      nat = (w.in[i] - 1) * w.st[i] + eff - w.pb[i] - w.pe[i];
      if (nat < 1) return MGOPT__K_NO;
      w.out[i] = nat;
    }
    if (nos == -2 || (nos >= 0 && nos != sp && nos != x->rank)) return MGOPT__K_NO;
    if (nos == x->rank && (os[0] != N || os[1] != Cout)) return MGOPT__K_NO;
    for (i = 0; nos >= 0 && i < sp; i++) {
      int64_t v = os[nos - sp + i], *o = &w.out[MGOPT__KN_SP - sp + i], s = w.st[MGOPT__KN_SP - sp + i];
      if (v == *o) continue;
      if (w.pt == MGOPT__KN_SAME || w.pt == MGOPT__KN_SAME_LOWER || v < *o || v - *o >= s) return MGOPT__K_NO;
      *o = v;
    }
  }
  ISP = mgopt__kn_prod(w.in);
  OSP = mgopt__kn_prod(w.out);
  KSP = mgopt__kn_prod(w.k);
  if (ISP < 0 || OSP < 0 || KSP < 0) return MGOPT__K_NO;
  for (i = 0; i < MGOPT__KN_SP; i++)
    if (w.out[i] > MGOPT__KN_BIG) return MGOPT__K_NO;
  /* work = N * Cout * Cin_g * KSP * (OSP or ISP), each factor below 2^62 / the others */
  work = N;
  if (!mgopt__mul_i64(work, Cout, &work) || !mgopt__mul_i64(work, Cin_g, &work) ||
      !mgopt__mul_i64(work, KSP, &work) || !mgopt__mul_i64(work, tr ? ISP : OSP, &work) ||
      work > MGOPT__KN_WORK)
    return MGOPT__K_NO;
  mgopt__kn_shape(N, Cout, &w, x->rank, oshape);
  if (mgopt_op_operand(op, "bias") && !mgopt__k_operand(k, "bias")) return MGOPT__K_NO;
  {
    mgopt_tensor *b = mgopt__k_operand(k, "bias");
    if (b && b->dtype != x->dtype) return MGOPT__K_NO;
  }
  r = mgopt__k_out_full(k, 0, dt, x->rank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  if (k->out[0]->numel == 0) return MGOPT__K_OK;
  r = mgopt__kn_vec(k, "bias", Cout, &bd);
  if (r == MGOPT__K_OK) r = mgopt__kn_load(k, x, &xd);
  if (r == MGOPT__K_OK) r = mgopt__kn_load(k, wt, &wd);
  if (r != MGOPT__K_OK) return r;
  res = (double *)mgopt__k_scratch(k, k->out[0]->numel, sizeof(double));
  if (!res) return MGOPT__K_OOM;
  for (n = 0; n < N; n++)
    for (g = 0; g < groups; g++)
      for (ocl = 0; ocl < Cout_g; ocl++) {
        int64_t oc = g * Cout_g + ocl;
        double *acc = res + (n * Cout + oc) * OSP;
        for (i = 0; i < OSP; i++) acc[i] = 0.0;
        for (icl = 0; icl < Cin_g; icl++) {
          int64_t ic = g * Cin_g + icl;
          const double *xin = xd + (n * C + ic) * ISP;
          const double *wk = wd + (tr ? (ic * Cout_g + ocl) : (oc * Cin_g + icl)) * KSP;
          for (kd = 0; kd < w.k[0]; kd++)
            for (kh = 0; kh < w.k[1]; kh++)
              for (kw = 0; kw < w.k[2]; kw++) {
                const double wv = wk[(kd * w.k[1] + kh) * w.k[2] + kw];
                int64_t off[MGOPT__KN_SP], a, b, c, lo0, lo1, lo2;
                off[0] = kd * w.dl[0] - w.pb[0];
                off[1] = kh * w.dl[1] - w.pb[1];
                off[2] = kw * w.dl[2] - w.pb[2];
                if (!tr) {
                  /* out o reads in o * st + off */
                  mgopt__kn_range(w.out[0], w.st[0], off[0], w.in[0], &lo0, &hi[0]);
                  mgopt__kn_range(w.out[1], w.st[1], off[1], w.in[1], &lo1, &hi[1]);
                  mgopt__kn_range(w.out[2], w.st[2], off[2], w.in[2], &lo2, &hi[2]);
                  for (a = lo0; a < hi[0]; a++)
                    for (b = lo1; b < hi[1]; b++) {
                      double *MGOPT_RESTRICT arow = acc + (a * w.out[1] + b) * w.out[2];
                      const double *xrow =
                          xin + ((a * w.st[0] + off[0]) * w.in[1] + (b * w.st[1] + off[1])) * w.in[2];
                      if (w.st[2] == 1) {
                        const double *xr = xrow + off[2];
                        for (c = lo2; c < hi[2]; c++) arow[c] += wv * xr[c];
                      } else {
                        for (c = lo2; c < hi[2]; c++) arow[c] += wv * xrow[c * w.st[2] + off[2]];
                      }
                    }
                } else {
                  /* in i writes out i * st + off */
                  mgopt__kn_range(w.in[0], w.st[0], off[0], w.out[0], &lo0, &hi[0]);
                  mgopt__kn_range(w.in[1], w.st[1], off[1], w.out[1], &lo1, &hi[1]);
                  mgopt__kn_range(w.in[2], w.st[2], off[2], w.out[2], &lo2, &hi[2]);
                  for (a = lo0; a < hi[0]; a++)
                    for (b = lo1; b < hi[1]; b++) {
                      const double *MGOPT_RESTRICT xrow = xin + (a * w.in[1] + b) * w.in[2];
                      double *arow =
                          acc + ((a * w.st[0] + off[0]) * w.out[1] + (b * w.st[1] + off[1])) * w.out[2];
                      for (c = lo2; c < hi[2]; c++) arow[c * w.st[2] + off[2]] += wv * xrow[c];
                    }
                }
              }
        }
        if (bd)
          for (i = 0; i < OSP; i++) acc[i] += bd[oc];
      }
  mgopt__k_store(MGOPT__LANE_F64, res, k->out[0]->numel, dt, od);
  mgopt__k_apply_fused_act(k, mgopt__k_fused_act(op));
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- avg_pool, max_pool */

MGOPT__PRIVATE int mgopt__kn_pool(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  int is_max = op->kind == MGOPT_OP_max_pool;
  int excl = !is_max && mgopt_op_get_bool(op, "exclude_padding_from_average", 0);
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  int64_t oshape[2 + MGOPT__KN_SP], ISP, OSP, KSP, work, pl, sp, o0, o1, o2;
  mgopt__kn_win w;
  mgopt_dtype dt;
  double *xd, *res;
  void *od;
  int r;
  if (!x || x->rank < 3 || x->rank > 2 + MGOPT__KN_SP) return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  sp = x->rank - 2;
  if (!mgopt__kn_float(dt) || !mgopt__kn_window(k, x, 0, &w)) return MGOPT__K_NO;
  if (!mgopt__k_has_param(op, "kernel_sizes") || !mgopt__kn_param(k, "kernel_sizes", sp, 1, 1, w.k, 1))
    return MGOPT__K_NO;
  if (!mgopt__kn_forward(&w, mgopt_op_get_bool(op, "ceil_mode", 0))) return MGOPT__K_NO;
  ISP = mgopt__kn_prod(w.in);
  OSP = mgopt__kn_prod(w.out);
  KSP = mgopt__kn_prod(w.k);
  if (ISP < 0 || OSP < 0 || KSP < 0) return MGOPT__K_NO;
  work = x->shape[0];
  if (!mgopt__mul_i64(work, x->shape[1], &work) || !mgopt__mul_i64(work, OSP, &work) ||
      !mgopt__mul_i64(work, KSP, &work) || work > MGOPT__KN_WORK)
    return MGOPT__K_NO;
  mgopt__kn_shape(x->shape[0], x->shape[1], &w, x->rank, oshape);
  {
    int i;
    for (i = 0; i < MGOPT__KN_SP; i++) {
      /* the first and the last window hold an input element (windows move monotonically) */
      if (w.k[i] <= w.pb[i] || (w.out[i] - 1) * w.st[i] - w.pb[i] >= w.in[i]) return MGOPT__K_NO;
      /* a window counting padding lies inside the padded input */
      if (!is_max && !excl && (w.out[i] - 1) * w.st[i] + w.k[i] > w.in[i] + w.pb[i] + w.pe[i]) return MGOPT__K_NO;
    }
  }
  r = mgopt__k_out_full(k, 0, dt, x->rank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  if (k->out[0]->numel == 0) return MGOPT__K_OK;
  r = mgopt__kn_load(k, x, &xd);
  if (r != MGOPT__K_OK) return r;
  res = (double *)mgopt__k_scratch(k, k->out[0]->numel, sizeof(double));
  if (!res) return MGOPT__K_OOM;
  for (pl = 0; pl < x->shape[0] * x->shape[1]; pl++) {
    const double *xin = xd + pl * ISP;
    double *out = res + pl * OSP;
    for (o0 = 0; o0 < w.out[0]; o0++)
      for (o1 = 0; o1 < w.out[1]; o1++)
        for (o2 = 0; o2 < w.out[2]; o2++) {
          int64_t s[MGOPT__KN_SP], e[MGOPT__KN_SP], i, a, b, c, cnt;
          double acc = 0.0;
          s[0] = o0 * w.st[0] - w.pb[0];
          s[1] = o1 * w.st[1] - w.pb[1];
          s[2] = o2 * w.st[2] - w.pb[2];
          for (i = 0; i < MGOPT__KN_SP; i++) {
            e[i] = s[i] + w.k[i];
            if (e[i] > w.in[i]) e[i] = w.in[i];
            if (s[i] < 0) s[i] = 0;
            if (e[i] <= s[i]) return MGOPT__K_NO; /* a window of padding alone */
          }
          cnt = (e[0] - s[0]) * (e[1] - s[1]) * (e[2] - s[2]);
          if (is_max) acc = xin[(s[0] * w.in[1] + s[1]) * w.in[2] + s[2]];
          for (a = s[0]; a < e[0]; a++)
            for (b = s[1]; b < e[1]; b++) {
              const double *row = xin + (a * w.in[1] + b) * w.in[2];
              if (is_max) {
                for (c = s[2]; c < e[2]; c++)
                  if (row[c] > acc || (row[c] != row[c] && acc == acc)) acc = row[c];
              } else {
                for (c = s[2]; c < e[2]; c++) acc += row[c];
              }
            }
          if (!is_max) acc = acc / (double)(excl ? cnt : KSP);
          out[(o0 * w.out[1] + o1) * w.out[2] + o2] = acc;
        }
  }
  mgopt__k_store(MGOPT__LANE_F64, res, k->out[0]->numel, dt, od);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- normalizations */

/* Normalizes x over the dims marked in red: for every position of the other
   dims, y = (x - mean) / sqrt(var + eps), written to res (double, x's layout).
   Then y * gamma[gi] + beta[gi], with gi the element's channel (chan >= 0: dim
   chan's index) or its row-major index over the reduced dims (chan < 0). */
static int mgopt__kn_normalize(mgopt__kctx *k, mgopt_tensor *x, const uint8_t *red, int chan, double eps,
                               const double *gamma, const double *beta, double *res) {
  int64_t st[MGOPT_MAX_RANK], inner_n = 1, outer_n = 1, *inner, *outer, i, j, idx[MGOPT_MAX_RANK];
  int32_t d, r = x->rank;
  double *xd;
  int rc = mgopt__kn_load(k, x, &xd);
  if (rc != MGOPT__K_OK) return rc;
  mgopt__k_strides(r, x->shape, st);
  for (d = 0; d < r; d++) {
    if (red[d]) inner_n *= x->shape[d];
    else outer_n *= x->shape[d];
  }
  inner = (int64_t *)mgopt__k_scratch(k, inner_n, sizeof(int64_t));
  outer = (int64_t *)mgopt__k_scratch(k, outer_n, sizeof(int64_t));
  if (!inner || !outer) return MGOPT__K_OOM;
  /* element offsets of the reduced and of the kept positions, row-major */
  {
    int pass;
    for (pass = 0; pass < 2; pass++) {
      int64_t *list = pass ? outer : inner, cnt = pass ? outer_n : inner_n, off = 0;
      for (d = 0; d < r; d++) idx[d] = 0;
      for (i = 0; i < cnt; i++) {
        list[i] = off;
        for (d = r - 1; d >= 0; d--) {
          if ((red[d] != 0) == (pass != 0)) continue;
          off += st[d];
          if (++idx[d] < x->shape[d]) break;
          off -= st[d] * x->shape[d];
          idx[d] = 0;
        }
      }
    }
  }
  for (i = 0; i < outer_n; i++) {
    const double *xo = xd + outer[i];
    double *ro = res + outer[i], mean = 0.0, var = 0.0, den;
    for (j = 0; j < inner_n; j++) mean += xo[inner[j]];
    mean /= (double)inner_n;
    for (j = 0; j < inner_n; j++) {
      double t = xo[inner[j]] - mean;
      var += t * t;
    }
    var /= (double)inner_n;
    den = sqrt(var + eps);
    for (j = 0; j < inner_n; j++) {
      double y = (xo[inner[j]] - mean) / den;
      int64_t gi = chan >= 0 ? (outer[i] / st[chan]) % x->shape[chan] : j;
      if (gamma) y = y * gamma[gi];
      if (beta) y = y + beta[gi];
      ro[inner[j]] = y;
    }
  }
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__kn_norm(mgopt__kctx *k) {
  MGOPT__K_NOCONTRACT
  const mgopt_op *op = k->op;
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  double eps = mgopt_op_get_float(op, "epsilon", 1e-5), *gamma = NULL, *beta = NULL, *res;
  uint8_t red[MGOPT_MAX_RANK];
  int32_t d, a;
  int r;
  void *od;
  if (!x || x->rank < 1 || !mgopt__kn_float((mgopt_dtype)x->dtype) || !(eps >= 0.0)) return MGOPT__K_NO;
  memset(red, 0, sizeof red);
  if (op->kind == MGOPT_OP_instance_norm) {
    if (x->rank < 3) return MGOPT__K_NO;
    for (d = 2; d < x->rank; d++) red[d] = 1;
    r = mgopt__kn_vec(k, "gamma", x->shape[1], &gamma);
    if (r == MGOPT__K_OK) r = mgopt__kn_vec(k, "beta", x->shape[1], &beta);
    if (r != MGOPT__K_OK) return r;
  } else {
    const int64_t *ax;
    int64_t n = mgopt__k_ints(k, "axes", &ax), cnt = 0, inner = 1;
    static const char *const slots[2] = {"gamma", "beta"};
    int s;
    if (n == -2 || n == 0) return MGOPT__K_NO;
    if (n < 0) {
      for (d = 0; d < x->rank; d++) red[d] = 1;
    } else {
      for (d = 0; d < (int32_t)n; d++) {
        if (!mgopt__k_axis(ax[d], x->rank, &a) || red[a]) return MGOPT__K_NO;
        red[a] = 1;
      }
    }
    for (d = 0; d < x->rank; d++)
      if (red[d]) {
        cnt++;
        inner *= x->shape[d];
      }
    /* gamma, beta: x's shape over the normalized dims, in dim order */
    for (s = 0; s < 2; s++) {
      mgopt_tensor *t = mgopt__k_operand(k, slots[s]);
      int32_t q = 0;
      if (!mgopt_op_operand(op, slots[s])) continue;
      if (!t || !mgopt__kn_float((mgopt_dtype)t->dtype) || t->rank != cnt || t->numel != inner) return MGOPT__K_NO;
      for (d = 0; d < x->rank; d++)
        if (red[d] && t->shape[q++] != x->shape[d]) return MGOPT__K_NO;
      r = mgopt__kn_load(k, t, s ? &beta : &gamma);
      if (r != MGOPT__K_OK) return r;
    }
  }
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  if (x->numel == 0) return MGOPT__K_OK;
  res = (double *)mgopt__k_scratch(k, x->numel, sizeof(double));
  if (!res) return MGOPT__K_OOM;
  r = mgopt__kn_normalize(k, x, red, op->kind == MGOPT_OP_instance_norm ? 1 : -1, eps, gamma, beta, res);
  if (r != MGOPT__K_OK) return r;
  mgopt__k_store(MGOPT__LANE_F64, res, x->numel, (mgopt_dtype)x->dtype, od);
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__kn_batch_norm(mgopt__kctx *k) {
  MGOPT__K_NOCONTRACT
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  double eps = mgopt_op_get_float(k->op, "epsilon", 1e-5), *mean, *var, *gamma, *beta, *xd;
  int64_t C, inner = 1, i, n;
  int32_t d;
  int r;
  void *od;
  if (!x || x->rank < 2 || !mgopt__kn_float((mgopt_dtype)x->dtype) || !(eps >= 0.0)) return MGOPT__K_NO;
  C = x->shape[1];
  if (!mgopt_op_operand(k->op, "mean") || !mgopt_op_operand(k->op, "variance")) return MGOPT__K_NO;
  r = mgopt__kn_vec(k, "mean", C, &mean);
  if (r == MGOPT__K_OK) r = mgopt__kn_vec(k, "variance", C, &var);
  if (r == MGOPT__K_OK) r = mgopt__kn_vec(k, "gamma", C, &gamma);
  if (r == MGOPT__K_OK) r = mgopt__kn_vec(k, "beta", C, &beta);
  if (r != MGOPT__K_OK) return r;
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  if (x->numel == 0) return MGOPT__K_OK;
  r = mgopt__kn_load(k, x, &xd);
  if (r != MGOPT__K_OK) return r;
  for (d = 2; d < x->rank; d++) inner *= x->shape[d];
  n = x->numel;
  for (i = 0; i < n; i++) {
    int64_t c = (i / inner) % C;
    double y = (xd[i] - mean[c]) / sqrt(var[c] + eps);
    if (gamma) y = y * gamma[c];
    if (beta) y = y + beta[c];
    xd[i] = y;
  }
  mgopt__k_store(MGOPT__LANE_F64, xd, n, (mgopt_dtype)x->dtype, od);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- prelu, pixel_shuffle */

MGOPT__PRIVATE int mgopt__kn_prelu(mgopt__kctx *k) {
  MGOPT__K_NOCONTRACT
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  double *alpha, *xd;
  int64_t inner = 1, i;
  int32_t d;
  int r;
  void *od;
  if (!x || x->rank < 2 || !mgopt__kn_float((mgopt_dtype)x->dtype) || !mgopt_op_operand(k->op, "alpha"))
    return MGOPT__K_NO;
  r = mgopt__kn_vec(k, "alpha", x->shape[1], &alpha);
  if (r != MGOPT__K_OK) return r;
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  if (x->numel == 0) return MGOPT__K_OK;
  r = mgopt__kn_load(k, x, &xd);
  if (r != MGOPT__K_OK) return r;
  for (d = 2; d < x->rank; d++) inner *= x->shape[d];
  for (i = 0; i < x->numel; i++)
    if (!(xd[i] > 0.0)) xd[i] = alpha[(i / inner) % x->shape[1]] * xd[i];
  mgopt__k_store(MGOPT__LANE_F64, xd, x->numel, (mgopt_dtype)x->dtype, od);
  return MGOPT__K_OK;
}

/* out = x + bias[index along axis], computed in double and rounded once to
   x's dtype (the sum of two floats of one dtype: what add gives) */
MGOPT__PRIVATE int mgopt__kn_bias_add(mgopt__kctx *k) {
  MGOPT__K_NOCONTRACT
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  double *bias, *xd;
  int64_t axis = mgopt_op_get_int(k->op, "axis", 1), inner = 1, i;
  int32_t d;
  int r;
  void *od;
  if (!x || x->rank < 1 || !mgopt__kn_float((mgopt_dtype)x->dtype) || !mgopt_op_operand(k->op, "bias")) return MGOPT__K_NO;
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank) return MGOPT__K_NO;
  r = mgopt__kn_vec(k, "bias", x->shape[axis], &bias);
  if (r != MGOPT__K_OK) return r;
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  if (x->numel == 0) return MGOPT__K_OK;
  r = mgopt__kn_load(k, x, &xd);
  if (r != MGOPT__K_OK) return r;
  for (d = (int32_t)axis + 1; d < x->rank; d++) inner *= x->shape[d];
  for (i = 0; i < x->numel; i++) xd[i] += bias[(i / inner) % x->shape[axis]];
  mgopt__k_store(MGOPT__LANE_F64, xd, x->numel, (mgopt_dtype)x->dtype, od);
  return MGOPT__K_OK;
}

/* out[n, c, h * f + i, w * f + j] = x[n, c * f * f + i * f + j, h, w] */
MGOPT__PRIVATE int mgopt__kn_pixel_shuffle(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  int64_t f = mgopt_op_get_int(k->op, "upscale_factor", -1), ff, N, Co, H, W, oshape[4], shape[6], stride[6];
  size_t es;
  const void *src;
  void *od;
  int r;
  if (!x || x->rank != 4 || f < 1 || f > MGOPT__KN_BIG || !mgopt__k_has_param(k->op, "upscale_factor"))
    return MGOPT__K_NO;
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  if (es == 0 || x->dtype == MGOPT_DT_STRING) return MGOPT__K_NO;
  ff = f * f;
  N = x->shape[0];
  H = x->shape[2];
  W = x->shape[3];
  if (x->shape[1] % ff != 0 || H > MGOPT__KN_BIG || W > MGOPT__KN_BIG) return MGOPT__K_NO;
  Co = x->shape[1] / ff;
  oshape[0] = N;
  oshape[1] = Co;
  oshape[2] = H * f;
  oshape[3] = W * f;
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, 4, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  if (x->numel == 0) return MGOPT__K_OK;
  src = mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  /* the output read as [N, Co, H, f, W, f] from the input as [N, Co, f, f, H, W] */
  shape[0] = N; stride[0] = Co * ff * H * W;
  shape[1] = Co; stride[1] = ff * H * W;
  shape[2] = H; stride[2] = W;
  shape[3] = f; stride[3] = f * H * W;
  shape[4] = W; stride[4] = 1;
  shape[5] = f; stride[5] = H * W;
  mgopt__k_strided(od, src, es, 6, shape, stride, 0);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- space_to_batch, batch_to_space */

/* space_to_batch: x [n, C, s1(, s2)] zero-padded by paddings, then each block offset (i1, i2) of
   block_shape becomes a batch: out[(i1 * b2 + i2) * n + b, c, o1, o2] = padded x[b, c, o1 * b1 + i1,
   o2 * b2 + i2] (TensorFlow's order, channel-first). batch_to_space is its inverse with crops.
   Elements are moved, never rounded: any byte-addressable dtype. */
MGOPT__PRIVATE int mgopt__kn_space_batch(mgopt__kctx *k) {
  int to_batch = k->op->kind == MGOPT_OP_space_to_batch;
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *bs, *pd;
  int64_t nb, np, b[2] = {1, 1}, pb[2] = {0, 0}, in[2] = {1, 1}, sm[2], oshape[4], B, N, C, i, o;
  int32_t d;
  size_t es;
  const uint8_t *src;
  uint8_t *dst;
  void *od;
  int r;
  if (!x || x->rank < 3 || x->rank > 4) return MGOPT__K_NO;
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  if (es == 0 || x->dtype == MGOPT_DT_STRING) return MGOPT__K_NO;
  nb = mgopt__k_ints(k, "block_shape", &bs);
  np = mgopt__k_ints(k, to_batch ? "paddings" : "crops", &pd);
  if (nb != x->rank - 2 || np != 2 * nb) return MGOPT__K_NO;
  B = 1;
  for (d = 0; d < nb; d++) {
    int64_t e = pd[2 * d + 1];
    b[2 - nb + d] = bs[d];
    pb[2 - nb + d] = pd[2 * d];
    in[2 - nb + d] = x->shape[2 + d];
    if (bs[d] < 1 || bs[d] > MGOPT__KN_BIG || pd[2 * d] < 0 || pd[2 * d] > MGOPT__KN_BIG || e < 0 ||
        e > MGOPT__KN_BIG || x->shape[2 + d] > MGOPT__KN_BIG)
      return MGOPT__K_NO;
    B *= bs[d];
    if (to_batch) {
      int64_t t = x->shape[2 + d] + pd[2 * d] + e;
      if (t % bs[d] != 0) return MGOPT__K_NO;
      sm[2 - nb + d] = t / bs[d]; /* output spatial size */
    } else {
      int64_t t = x->shape[2 + d] * bs[d] - pd[2 * d] - e;
      if (t < 0) return MGOPT__K_NO;
      sm[2 - nb + d] = t;
    }
  }
  if (nb == 1) sm[0] = 1;
  C = x->shape[1];
  if (to_batch) {
    N = x->shape[0];
    if (!mgopt__mul_i64(N, B, &oshape[0])) return MGOPT__K_NO;
  } else {
    if (x->shape[0] % B != 0) return MGOPT__K_NO;
    N = x->shape[0] / B;
    oshape[0] = N;
  }
  oshape[1] = C;
  for (d = 0; d < nb; d++) oshape[2 + d] = sm[2 - nb + d];
  r = mgopt__k_out(k, 0, (mgopt_dtype)x->dtype, x->rank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  if (k->out[0]->numel == 0) return MGOPT__K_OK;
  src = (const uint8_t *)mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  dst = (uint8_t *)od;
  /* one loop over the batch-side tensor [N * B, C, q1, q2]: (q1, q2) are its spatial sizes */
  {
    int64_t q[2], total, e;
    q[0] = to_batch ? sm[0] : in[0];
    q[1] = to_batch ? sm[1] : in[1];
    total = to_batch ? k->out[0]->numel : x->numel;
    for (e = 0; e < total; e++) {
      int64_t j2 = e % q[1], j1 = (e / q[1]) % q[0], c = (e / (q[0] * q[1])) % C, bb = e / (q[0] * q[1] * C);
      int64_t blk = bb / N, n = bb % N, i1 = blk / b[1], i2 = blk % b[1];
      /* position in the padded (or uncropped) space */
      int64_t h = j1 * b[0] + i1 - pb[0], w = j2 * b[1] + i2 - pb[1];
      int64_t sh = to_batch ? in[0] : sm[0], sw = to_batch ? in[1] : sm[1];
      if (h < 0 || h >= sh || w < 0 || w >= sw) continue; /* padding (zero-filled) or cropped */
      i = ((n * C + c) * sh + h) * sw + w;
      o = e;
      if (to_batch) memcpy(dst + (size_t)o * es, src + (size_t)i * es, es);
      else memcpy(dst + (size_t)i * es, src + (size_t)o * es, es);
    }
  }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- local_response_norm */

/* A float parameter rounded to dtype dt (MIL types it as x). */
static double mgopt__kn_fparam(const mgopt_op *op, const char *name, double dflt, mgopt_dtype dt) {
  double v = mgopt_op_get_float(op, name, dflt);
  if (dt == MGOPT_DT_FP64) return v;
  return dt == MGOPT_DT_FP32 ? (double)(float)v : (double)mgopt__k_rnd(dt, (float)v);
}

MGOPT__PRIVATE int mgopt__kn_lrn(mgopt__kctx *k) {
  MGOPT__K_NOCONTRACT
  const mgopt_op *op = k->op;
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  mgopt_dtype dt;
  int64_t size = mgopt_op_get_int(op, "size", 0), C, inner = 1, lo, hi, i, c, j, s, o, outer;
  double alpha, beta, kk, *xd, *res;
  int32_t d;
  int r;
  void *od;
  if (!x || x->rank < 2 || !mgopt__kn_float((mgopt_dtype)x->dtype) || !mgopt__k_has_param(op, "size") || size < 1 ||
      size > MGOPT__KN_BIG)
    return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  if (x->numel > 0 && size > MGOPT__KN_WORK / x->numel) return mgopt__k_no(k, "too much work");
  alpha = mgopt__kn_fparam(op, "alpha", 1e-4, dt);
  beta = mgopt__kn_fparam(op, "beta", 0.75, dt);
  kk = mgopt__kn_fparam(op, "k", 1.0, dt);
  r = mgopt__k_out_full(k, 0, dt, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  if (x->numel == 0) return MGOPT__K_OK;
  r = mgopt__kn_load(k, x, &xd);
  if (r != MGOPT__K_OK) return r;
  res = (double *)mgopt__k_scratch(k, x->numel, sizeof(double));
  if (!res) return MGOPT__K_OOM;
  C = x->shape[1];
  for (d = 2; d < x->rank; d++) inner *= x->shape[d];
  outer = x->shape[0];
  lo = (size - 1) / 2;
  hi = size - 1 - lo;
  for (o = 0; o < outer; o++)
    for (c = 0; c < C; c++)
      for (s = 0; s < inner; s++) {
        double sum = 0.0;
        int64_t j0 = c - lo < 0 ? 0 : c - lo, j1 = c + hi > C - 1 ? C - 1 : c + hi;
        for (j = j0; j <= j1; j++) {
          double v = xd[(o * C + j) * inner + s];
          sum += v * v;
        }
        i = (o * C + c) * inner + s;
        res[i] = xd[i] / pow(kk + alpha / (double)size * sum, beta);
      }
  mgopt__k_store(MGOPT__LANE_F64, res, x->numel, dt, od);
  return MGOPT__K_OK;
}
