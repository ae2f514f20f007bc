/* tests/unit/test_kernels_nn.c — folding kernels of conv, conv_transpose, pools, norms, prelu and pixel_shuffle
   against naive double-precision references written here, for every attribute variant. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <stdlib.h>
#include <math.h>
#include <stdarg.h>
#include <time.h>

/* ---------------------------------------------------------------- fixtures */

static mgopt_program *P;
static mgopt_function *F;
static mgopt_tensor *OUT[2];
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double urand(void) { /* in [-2, 2), multiples of 1/256 */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)((int64_t)(rng >> 40) % 1024) / 256.0;
}

static void setup(void) {
  P = mgopt_program_create(NULL);
  F = P ? mgopt_function_new(P, "main") : NULL;
}

/* A constant of random values (or v when given); its values as doubles in *vals. */
static mgopt_value *KR(mgopt_dtype dt, int rank, const int64_t *shape, double **vals) {
  mgopt_tensor *t = mgopt_tensor_new(P, dt, rank, shape);
  int64_t i;
  if (!t) return NULL;
  *vals = (double *)malloc(sizeof(double) * (size_t)(t->numel + 1));
  for (i = 0; i < t->numel; i++) {
    mgopt_tensor_set_f64(t, i, urand());
    (*vals)[i] = mgopt_tensor_get_f64(t, i);
  }
  return mgopt_build_const(P, F->body, NULL, NULL, t);
}

static mgopt_op *OP(const char *type, int n, ...) {
  const char *names[8];
  mgopt_value *vals[8];
  va_list ap;
  int i;
  va_start(ap, n);
  for (i = 0; i < n; i++) {
    names[i] = va_arg(ap, const char *);
    vals[i] = va_arg(ap, mgopt_value *);
  }
  va_end(ap);
  return mgopt_build_op(P, F->body, NULL, type, NULL, n, names, vals, 1);
}

/* Re-infers the output type after attributes were set (0 when the op is ill-typed). */
static int reinfer(mgopt_op *op) {
  mgopt_diag d;
  memset(&d, 0, sizeof d);
  return op && mgopt_op_infer(P, op, &d) == MGOPT_OK;
}

static int FOLD(mgopt_op *op) { return op ? mgopt_fold_op(P, op, OUT, NULL) : -2; }

/* OUT[0] against ref (n elements, shape) within fp32 rounding; NaN matches NaN. */
static int matches(const double *ref, int rank, const int64_t *shape, double tol) {
  int64_t i, n = 1;
  int d;
  mgopt_tensor *t = OUT[0];
  if (!t || t->rank != rank) return printf("  rank %d expected %d\n", t ? (int)t->rank : -1, rank), 0;
  for (d = 0; d < rank; d++) {
    if (t->shape[d] != shape[d])
      return printf("  dim %d: %lld expected %lld\n", d, (long long)t->shape[d], (long long)shape[d]), 0;
    n *= shape[d];
  }
  for (i = 0; i < n; i++) {
    double g = mgopt_tensor_get_f64(t, i), e = ref[i];
    if (g != g && e != e) continue;
    if (!(fabs(g - e) <= tol * (fabs(e) > 1 ? fabs(e) : 1))) {
      printf("  element %lld: got %.17g expected %.17g\n", (long long)i, g, e);
      return 0;
    }
  }
  return 1;
}

/* ---------------------------------------------------------------- window geometry (reference) */

enum { VALID, SAME, SAME_LOWER, CUSTOM };
static const char *const PT[4] = {"valid", "same", "same_lower", "custom"};

typedef struct geo {
  int sp, pt, ceil_mode;
  int64_t in[3], k[3], st[3], dl[3], pad[6], pb[3], out[3];
} geo;

/* Forward window (conv, pools): output sizes and leading pads, computed independently. */
static void geo_forward(geo *g) {
  int i;
  for (i = 0; i < g->sp; i++) {
    int64_t eff = g->dl[i] * (g->k[i] - 1) + 1;
    if (g->pt == SAME || g->pt == SAME_LOWER) {
      int64_t o = (g->in[i] + g->st[i] - 1) / g->st[i], tot = (o - 1) * g->st[i] + eff - g->in[i];
      if (tot < 0) tot = 0;
      g->out[i] = o;
      g->pb[i] = g->pt == SAME ? tot / 2 : (tot + 1) / 2;
    } else {
      int64_t b = g->pt == CUSTOM ? g->pad[2 * i] : 0, e = g->pt == CUSTOM ? g->pad[2 * i + 1] : 0;
      int64_t span = g->in[i] + b + e - eff;
      g->pb[i] = b;
      g->out[i] = g->ceil_mode ? (span + g->st[i] - 1) / g->st[i] + 1 : span / g->st[i] + 1;
      /* the last window starts inside the input or its leading padding */
      if (g->ceil_mode && (g->out[i] - 1) * g->st[i] >= g->in[i] + b) g->out[i]--;
    }
  }
}

static void set_window(mgopt_op *op, const geo *g, int dil) {
  mgopt_op_set_string(op, "pad_type", PT[g->pt]);
  mgopt_op_set_ints(op, "strides", g->st, g->sp);
  if (dil) mgopt_op_set_ints(op, "dilations", g->dl, g->sp);
  if (g->pt == CUSTOM) mgopt_op_set_ints(op, "pad", g->pad, 2 * g->sp);
}

/* Row-major decomposition of flat index i over sp dims of sizes n. */
static void unflat(int64_t i, int sp, const int64_t *n, int64_t *idx) {
  int d;
  for (d = sp - 1; d >= 0; d--) {
    idx[d] = i % n[d];
    i /= n[d];
  }
}

static int64_t prod(int sp, const int64_t *n) {
  int64_t p = 1;
  int d;
  for (d = 0; d < sp; d++) p *= n[d];
  return p;
}

/* ---------------------------------------------------------------- conv */

typedef struct convcase {
  int sp, pt, groups, bias, tr;
  int64_t N, C, Cout, in[3], k[3], st[3], dl[3], pad[6], extra[3];
  mgopt_dtype dt;
} convcase;

static int run_conv(const convcase *c) {
  geo g;
  int64_t xs[5], ws[5], os[5], bs[1], i, isp, osp, ksp, Cin_g, Cout_g;
  double *xv, *wv, *bv = NULL, *ref;
  mgopt_value *X, *W, *B = NULL;
  mgopt_op *op;
  int d, ok;
  memset(&g, 0, sizeof g);
  g.sp = c->sp;
  g.pt = c->pt;
  for (d = 0; d < c->sp; d++) {
    g.in[d] = c->in[d];
    g.k[d] = c->k[d];
    g.st[d] = c->st[d];
    g.dl[d] = c->dl[d];
    g.pad[2 * d] = c->pad[2 * d];
    g.pad[2 * d + 1] = c->pad[2 * d + 1];
  }
  Cin_g = c->C / c->groups;
  Cout_g = c->Cout / c->groups;
  xs[0] = c->N;
  xs[1] = c->C;
  ws[0] = c->tr ? c->C : c->Cout;
  ws[1] = c->tr ? Cout_g : Cin_g;
  for (d = 0; d < c->sp; d++) {
    xs[2 + d] = c->in[d];
    ws[2 + d] = c->k[d];
  }
  if (!c->tr) {
    geo_forward(&g);
  } else {
    for (d = 0; d < c->sp; d++) {
      int64_t eff = g.dl[d] * (g.k[d] - 1) + 1;
      if (g.pt == SAME || g.pt == SAME_LOWER) {
        g.pb[d] = (eff - g.st[d]) / 2;
        g.out[d] = g.in[d] * g.st[d];
      } else {
        int64_t b = g.pt == CUSTOM ? g.pad[2 * d] : 0, e = g.pt == CUSTOM ? g.pad[2 * d + 1] : 0;
        g.pb[d] = b;
        g.out[d] = (g.in[d] - 1) * g.st[d] + eff - b - e + c->extra[d];
      }
    }
  }
  os[0] = c->N;
  os[1] = c->Cout;
  for (d = 0; d < c->sp; d++) os[2 + d] = g.out[d];
  bs[0] = c->Cout;
  X = KR(c->dt, 2 + c->sp, xs, &xv);
  W = KR(c->dt, 2 + c->sp, ws, &wv);
  if (c->bias) B = KR(c->dt, 1, bs, &bv);
  op = B ? OP(c->tr ? "conv_transpose" : "conv", 3, "x", X, "weight", W, "bias", B)
         : OP(c->tr ? "conv_transpose" : "conv", 2, "x", X, "weight", W);
  if (!op) return printf("  build failed\n"), 0;
  set_window(op, &g, 1);
  mgopt_op_set_int(op, "groups", c->groups);
  if (c->tr && (c->extra[0] || c->extra[1] || c->extra[2])) mgopt_op_set_ints(op, "output_shape", os + 2, c->sp);
  if (!reinfer(op)) return printf("  infer failed\n"), 0;
  isp = prod(c->sp, g.in);
  osp = prod(c->sp, g.out);
  ksp = prod(c->sp, g.k);
  ref = (double *)calloc((size_t)(c->N * c->Cout * osp + 1), sizeof(double));
  for (i = 0; i < c->N * c->Cout * osp; i++) {
    int64_t n = i / (c->Cout * osp), oc = (i / osp) % c->Cout, o[3], grp = oc / Cout_g, ic, kp, kk[3], ii[3];
    double s = 0;
    unflat(i % osp, c->sp, g.out, o);
    for (ic = grp * Cin_g; ic < (grp + 1) * Cin_g; ic++)
      for (kp = 0; kp < ksp; kp++) {
        int inside = 1;
        unflat(kp, c->sp, g.k, kk);
        for (d = 0; d < c->sp; d++) {
          if (!c->tr) {
            ii[d] = o[d] * g.st[d] + kk[d] * g.dl[d] - g.pb[d];
          } else { /* input i reaches o when i * st + k * dl - pb == o */
            int64_t t = o[d] + g.pb[d] - kk[d] * g.dl[d];
            if (t < 0 || t % g.st[d] != 0) inside = 0;
            ii[d] = t / g.st[d];
          }
          if (ii[d] < 0 || ii[d] >= g.in[d]) inside = 0;
        }
        if (inside) {
          int64_t xi = 0, wi;
          for (d = 0; d < c->sp; d++) xi = xi * g.in[d] + ii[d];
          wi = c->tr ? (ic * Cout_g + (oc - grp * Cout_g)) * ksp + kp : (oc * Cin_g + (ic - grp * Cin_g)) * ksp + kp;
          s += xv[(n * c->C + ic) * isp + xi] * wv[wi];
        }
      }
    ref[i] = s + (bv ? bv[oc] : 0.0);
  }
  ok = FOLD(op) == 1 && matches(ref, 2 + c->sp, os, c->dt == MGOPT_DT_FP16 ? 1e-3 : 1e-6);
  free(xv);
  free(wv);
  free(bv);
  free(ref);
  return ok;
}

static void test_conv(void) {
  static const convcase cases[] = {
      /* sp pt groups bias tr  N C Cout  in        k        st       dl       pad                extra dt */
      {2, VALID, 1, 1, 0, 2, 3, 4, {7, 6, 1}, {3, 3, 1}, {1, 1, 1}, {1, 1, 1}, {0}, {0}, MGOPT_DT_FP32},
      {2, VALID, 1, 0, 0, 1, 3, 4, {7, 6, 1}, {3, 2, 1}, {2, 2, 1}, {1, 1, 1}, {0}, {0}, MGOPT_DT_FP32},
      {2, SAME, 1, 1, 0, 1, 2, 3, {7, 6, 1}, {3, 3, 1}, {2, 2, 1}, {1, 1, 1}, {0}, {0}, MGOPT_DT_FP32},
      {2, SAME, 1, 1, 0, 1, 2, 3, {8, 6, 1}, {4, 2, 1}, {1, 1, 1}, {1, 1, 1}, {0}, {0}, MGOPT_DT_FP32},
      {2, SAME_LOWER, 1, 1, 0, 1, 2, 3, {8, 7, 1}, {4, 2, 1}, {2, 3, 1}, {1, 1, 1}, {0}, {0}, MGOPT_DT_FP32},
      {2, CUSTOM, 1, 1, 0, 1, 2, 3, {6, 5, 1}, {3, 3, 1}, {1, 2, 1}, {2, 1, 1}, {1, 2, 0, 3}, {0}, MGOPT_DT_FP32},
      {2, CUSTOM, 2, 1, 0, 2, 4, 6, {5, 5, 1}, {3, 3, 1}, {2, 1, 1}, {1, 2, 1}, {1, 1, 2, 0}, {0}, MGOPT_DT_FP32},
      {2, SAME, 4, 1, 0, 1, 4, 4, {6, 6, 1}, {3, 3, 1}, {1, 1, 1}, {1, 1, 1}, {0}, {0}, MGOPT_DT_FP32}, /* depthwise */
      {2, SAME, 3, 0, 0, 1, 3, 6, {5, 4, 1}, {3, 1, 1}, {1, 1, 1}, {2, 1, 1}, {0}, {0}, MGOPT_DT_FP32}, /* multiplier 2 */
      {1, VALID, 1, 1, 0, 2, 3, 2, {9, 1, 1}, {3, 1, 1}, {2, 1, 1}, {2, 1, 1}, {0}, {0}, MGOPT_DT_FP32},
      {1, CUSTOM, 1, 1, 0, 1, 2, 2, {5, 1, 1}, {2, 1, 1}, {3, 1, 1}, {1, 1, 1}, {2, 1}, {0}, MGOPT_DT_FP32},
      {3, SAME, 1, 1, 0, 1, 2, 2, {4, 5, 3}, {3, 2, 2}, {2, 1, 2}, {1, 1, 1}, {0}, {0}, MGOPT_DT_FP32},
      {3, CUSTOM, 2, 1, 0, 1, 2, 4, {4, 4, 4}, {2, 2, 2}, {1, 2, 1}, {2, 1, 1}, {1, 0, 0, 1, 1, 1}, {0}, MGOPT_DT_FP32},
      {2, SAME, 1, 1, 0, 1, 2, 3, {5, 5, 1}, {3, 3, 1}, {1, 1, 1}, {1, 1, 1}, {0}, {0}, MGOPT_DT_FP16},
      {2, SAME, 1, 1, 0, 1, 2, 3, {5, 5, 1}, {3, 3, 1}, {1, 1, 1}, {1, 1, 1}, {0}, {0}, MGOPT_DT_FP64},
      /* conv_transpose */
      {2, VALID, 1, 1, 1, 2, 3, 2, {3, 4, 1}, {3, 3, 1}, {1, 1, 1}, {1, 1, 1}, {0}, {0}, MGOPT_DT_FP32},
      {2, VALID, 1, 1, 1, 1, 3, 2, {3, 4, 1}, {3, 2, 1}, {2, 3, 1}, {1, 1, 1}, {0}, {0}, MGOPT_DT_FP32},
      {2, CUSTOM, 1, 1, 1, 1, 2, 2, {3, 4, 1}, {3, 3, 1}, {2, 2, 1}, {1, 2, 1}, {1, 1, 0, 2}, {0}, MGOPT_DT_FP32},
      {2, CUSTOM, 2, 1, 1, 1, 4, 6, {3, 3, 1}, {3, 3, 1}, {2, 1, 1}, {1, 1, 1}, {1, 0, 1, 1}, {0}, MGOPT_DT_FP32},
      {2, CUSTOM, 1, 1, 1, 1, 2, 3, {3, 3, 1}, {3, 3, 1}, {2, 3, 1}, {1, 1, 1}, {1, 1, 1, 1}, {1, 2, 0}, MGOPT_DT_FP32},
      {2, SAME, 1, 0, 1, 1, 2, 3, {3, 4, 1}, {4, 3, 1}, {2, 1, 1}, {1, 1, 1}, {0}, {0}, MGOPT_DT_FP32},
      {2, SAME_LOWER, 1, 1, 1, 1, 2, 3, {3, 4, 1}, {3, 4, 1}, {1, 2, 1}, {1, 1, 1}, {0}, {0}, MGOPT_DT_FP32},
      {1, VALID, 1, 1, 1, 2, 2, 3, {4, 1, 1}, {3, 1, 1}, {3, 1, 1}, {2, 1, 1}, {0}, {0}, MGOPT_DT_FP32},
      {3, CUSTOM, 2, 1, 1, 1, 2, 2, {2, 3, 2}, {2, 3, 2}, {2, 1, 2}, {1, 1, 1}, {0, 1, 1, 0, 0, 0}, {1, 0, 1}, MGOPT_DT_FP32},
  };
  size_t i;
  setup();
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int ok = run_conv(&cases[i]);
    if (!ok) printf("  conv case %d\n", (int)i);
    CHECK(ok);
  }
  mgopt_program_destroy(P);
}

/* ---------------------------------------------------------------- pools */

typedef struct poolcase {
  int max, sp, pt, ceil_mode, excl;
  int64_t N, C, in[3], k[3], st[3], pad[6];
  int nan;
} poolcase;

static int run_pool(const poolcase *c) {
  geo g;
  int64_t xs[5], os[5], i, isp, osp, ksp;
  double *xv, *ref;
  mgopt_value *X;
  mgopt_op *op;
  int d, ok;
  mgopt_tensor *t;
  memset(&g, 0, sizeof g);
  g.sp = c->sp;
  g.pt = c->pt;
  g.ceil_mode = c->ceil_mode;
  xs[0] = os[0] = c->N;
  xs[1] = os[1] = c->C;
  for (d = 0; d < c->sp; d++) {
    g.in[d] = xs[2 + d] = c->in[d];
    g.k[d] = c->k[d];
    g.st[d] = c->st[d];
    g.dl[d] = 1;
    g.pad[2 * d] = c->pad[2 * d];
    g.pad[2 * d + 1] = c->pad[2 * d + 1];
  }
  geo_forward(&g);
  for (d = 0; d < c->sp; d++) os[2 + d] = g.out[d];
  X = KR(MGOPT_DT_FP32, 2 + c->sp, xs, &xv);
  if (c->nan) { /* NaN in element 1 */
    t = mgopt_value_const(X);
    mgopt_tensor_set_f64(t, 1, NAN);
    xv[1] = NAN;
  }
  op = OP(c->max ? "max_pool" : "avg_pool", 1, "x", X);
  if (!op) return 0;
  mgopt_op_set_ints(op, "kernel_sizes", g.k, g.sp);
  set_window(op, &g, 0);
  mgopt_op_set_bool(op, "ceil_mode", c->ceil_mode);
  if (!c->max) mgopt_op_set_bool(op, "exclude_padding_from_average", c->excl);
  if (!reinfer(op)) return printf("  infer failed\n"), 0;
  isp = prod(c->sp, g.in);
  osp = prod(c->sp, g.out);
  ksp = prod(c->sp, g.k);
  ref = (double *)calloc((size_t)(c->N * c->C * osp + 1), sizeof(double));
  for (i = 0; i < c->N * c->C * osp; i++) {
    int64_t pl = i / osp, o[3], kk[3], kp, cnt = 0, ii[3];
    double s = 0, m = -INFINITY;
    int seen_nan = 0;
    unflat(i % osp, c->sp, g.out, o);
    for (kp = 0; kp < ksp; kp++) {
      int inside = 1;
      int64_t xi = 0;
      unflat(kp, c->sp, g.k, kk);
      for (d = 0; d < c->sp; d++) {
        ii[d] = o[d] * g.st[d] + kk[d] - g.pb[d];
        if (ii[d] < 0 || ii[d] >= g.in[d]) inside = 0;
        xi = xi * g.in[d] + ii[d];
      }
      if (!inside) continue;
      cnt++;
      {
        double v = xv[pl * isp + xi];
        s += v;
        if (v != v) seen_nan = 1;
        else if (v > m) m = v;
      }
    }
    ref[i] = c->max ? (seen_nan ? NAN : m) : s / (double)(c->excl ? cnt : ksp);
  }
  ok = FOLD(op) == 1 && matches(ref, 2 + c->sp, os, 1e-6);
  free(xv);
  free(ref);
  return ok;
}

static void test_pools(void) {
  static const poolcase cases[] = {
      /* max sp pt ceil excl N C in k st pad nan */
      {1, 2, VALID, 0, 0, 2, 3, {6, 5, 1}, {2, 2, 1}, {2, 2, 1}, {0}, 0},
      {1, 2, VALID, 1, 0, 1, 2, {6, 5, 1}, {3, 2, 1}, {2, 2, 1}, {0}, 0},
      {1, 2, CUSTOM, 1, 0, 1, 2, {5, 5, 1}, {3, 3, 1}, {2, 2, 1}, {1, 1, 1, 1}, 0},
      {1, 2, SAME, 0, 0, 1, 2, {5, 6, 1}, {3, 2, 1}, {2, 1, 1}, {0}, 0},
      {1, 2, SAME_LOWER, 0, 0, 1, 2, {5, 6, 1}, {2, 4, 1}, {1, 3, 1}, {0}, 0},
      {1, 1, CUSTOM, 0, 0, 2, 2, {7, 1, 1}, {3, 1, 1}, {2, 1, 1}, {2, 1}, 1},
      {1, 3, VALID, 1, 0, 1, 2, {4, 5, 4}, {2, 2, 3}, {2, 2, 2}, {0}, 0},
      {0, 2, VALID, 0, 0, 2, 3, {6, 5, 1}, {2, 2, 1}, {2, 2, 1}, {0}, 0},
      {0, 2, CUSTOM, 0, 0, 1, 2, {5, 5, 1}, {3, 3, 1}, {2, 2, 1}, {1, 1, 1, 1}, 0},
      {0, 2, CUSTOM, 0, 1, 1, 2, {5, 5, 1}, {3, 3, 1}, {2, 2, 1}, {1, 1, 1, 1}, 0},
      {0, 2, CUSTOM, 1, 1, 1, 2, {6, 6, 1}, {3, 3, 1}, {2, 2, 1}, {1, 0, 1, 0}, 0},
      {0, 2, VALID, 1, 1, 1, 2, {6, 5, 1}, {3, 2, 1}, {2, 2, 1}, {0}, 0},
      {0, 2, SAME, 0, 0, 1, 2, {5, 6, 1}, {3, 2, 1}, {2, 1, 1}, {0}, 0},
      {0, 2, SAME, 0, 1, 1, 2, {5, 6, 1}, {3, 2, 1}, {2, 1, 1}, {0}, 0},
      {0, 2, SAME_LOWER, 0, 1, 1, 2, {5, 6, 1}, {4, 2, 1}, {1, 3, 1}, {0}, 0},
      {0, 1, CUSTOM, 0, 0, 2, 2, {7, 1, 1}, {3, 1, 1}, {2, 1, 1}, {2, 1}, 0},
      {0, 3, CUSTOM, 0, 1, 1, 2, {4, 5, 4}, {2, 2, 3}, {2, 2, 2}, {1, 0, 0, 1, 1, 1}, 0},
  };
  size_t i;
  setup();
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int ok = run_pool(&cases[i]);
    if (!ok) printf("  pool case %d\n", (int)i);
    CHECK(ok);
  }
  mgopt_program_destroy(P);
}

/* ---------------------------------------------------------------- norms, prelu, pixel_shuffle */

static void test_norms(void) {
  static const int64_t xs[4] = {2, 3, 4, 5}, cs[1] = {3};
  double *xv, *mv, *vv, *gv, *bv, ref[120], eps = 1e-3;
  mgopt_value *X, *M, *V, *G, *B;
  mgopt_op *op;
  int64_t i, j;
  int opt;
  setup();
  X = KR(MGOPT_DT_FP32, 4, xs, &xv);
  M = KR(MGOPT_DT_FP32, 1, cs, &mv);
  V = KR(MGOPT_DT_FP32, 1, cs, &vv);
  for (i = 0; i < 3; i++) { /* variance > 0 */
    vv[i] = fabs(vv[i]) + 0.25;
    mgopt_tensor_set_f64(mgopt_value_const(V), i, vv[i]);
  }
  G = KR(MGOPT_DT_FP32, 1, cs, &gv);
  B = KR(MGOPT_DT_FP32, 1, cs, &bv);
  /* batch_norm, with and without gamma / beta */
  for (opt = 0; opt < 2; opt++) {
    op = opt ? OP("batch_norm", 3, "x", X, "mean", M, "variance", V)
             : OP("batch_norm", 5, "x", X, "mean", M, "variance", V, "gamma", G, "beta", B);
    mgopt_op_set_float(op, "epsilon", eps);
    for (i = 0; i < 120; i++) {
      int64_t c = (i / 20) % 3;
      ref[i] = (xv[i] - mv[c]) / sqrt(vv[c] + eps) * (opt ? 1 : gv[c]) + (opt ? 0 : bv[c]);
    }
    CHECK(FOLD(op) == 1 && matches(ref, 4, xs, 1e-6));
  }
  /* instance_norm over (H, W) per (n, c) */
  for (opt = 0; opt < 2; opt++) {
    op = opt ? OP("instance_norm", 1, "x", X) : OP("instance_norm", 3, "x", X, "gamma", G, "beta", B);
    for (i = 0; i < 6; i++) {
      double mean = 0, var = 0;
      for (j = 0; j < 20; j++) mean += xv[i * 20 + j];
      mean /= 20;
      for (j = 0; j < 20; j++) var += (xv[i * 20 + j] - mean) * (xv[i * 20 + j] - mean);
      var /= 20;
      for (j = 0; j < 20; j++)
        ref[i * 20 + j] = (xv[i * 20 + j] - mean) / sqrt(var + 1e-5) * (opt ? 1 : gv[i % 3]) + (opt ? 0 : bv[i % 3]);
    }
    CHECK(FOLD(op) == 1 && matches(ref, 4, xs, 1e-6));
  }
  /* layer_norm over the trailing (4, 5), over (1, 3) and over all dims */
  {
    static const int64_t gs[2] = {4, 5}, gs13[2] = {3, 5}, ax[2] = {-2, -1}, ax13[2] = {3, 1};
    double *lg, *lb, *lg13;
    mgopt_value *LG = KR(MGOPT_DT_FP32, 2, gs, &lg), *LB = KR(MGOPT_DT_FP32, 2, gs, &lb),
                *LG13 = KR(MGOPT_DT_FP32, 2, gs13, &lg13);
    op = OP("layer_norm", 3, "x", X, "gamma", LG, "beta", LB);
    mgopt_op_set_ints(op, "axes", ax, 2);
    mgopt_op_set_float(op, "epsilon", eps);
    for (i = 0; i < 6; i++) {
      double mean = 0, var = 0;
      for (j = 0; j < 20; j++) mean += xv[i * 20 + j];
      mean /= 20;
      for (j = 0; j < 20; j++) var += (xv[i * 20 + j] - mean) * (xv[i * 20 + j] - mean);
      var /= 20;
      for (j = 0; j < 20; j++) ref[i * 20 + j] = (xv[i * 20 + j] - mean) / sqrt(var + eps) * lg[j] + lb[j];
    }
    CHECK(reinfer(op) && FOLD(op) == 1 && matches(ref, 4, xs, 1e-6));
    /* axes (3, 1): gamma is x's shape over dims 1 and 3, in dim order */
    op = OP("layer_norm", 2, "x", X, "gamma", LG13);
    mgopt_op_set_ints(op, "axes", ax13, 2);
    for (i = 0; i < 8; i++) { /* (n, h) */
      int64_t n = i / 4, h = i % 4, c, w;
      double mean = 0, var = 0;
      for (c = 0; c < 3; c++)
        for (w = 0; w < 5; w++) mean += xv[((n * 3 + c) * 4 + h) * 5 + w];
      mean /= 15;
      for (c = 0; c < 3; c++)
        for (w = 0; w < 5; w++) {
          double t = xv[((n * 3 + c) * 4 + h) * 5 + w] - mean;
          var += t * t;
        }
      var /= 15;
      for (c = 0; c < 3; c++)
        for (w = 0; w < 5; w++) {
          int64_t e = ((n * 3 + c) * 4 + h) * 5 + w;
          ref[e] = (xv[e] - mean) / sqrt(var + 1e-5) * lg13[c * 5 + w];
        }
    }
    CHECK(reinfer(op) && FOLD(op) == 1 && matches(ref, 4, xs, 1e-6));
    /* gamma of the wrong shape: not folded */
    op = OP("layer_norm", 2, "x", X, "gamma", LG);
    mgopt_op_set_ints(op, "axes", ax13, 2);
    CHECK(FOLD(op) == 0);
    /* no axes: all dims */
    op = OP("layer_norm", 1, "x", X);
    {
      double mean = 0, var = 0;
      for (j = 0; j < 120; j++) mean += xv[j];
      mean /= 120;
      for (j = 0; j < 120; j++) var += (xv[j] - mean) * (xv[j] - mean);
      var /= 120;
      for (j = 0; j < 120; j++) ref[j] = (xv[j] - mean) / sqrt(var + 1e-5);
    }
    CHECK(FOLD(op) == 1 && matches(ref, 4, xs, 1e-6));
    free(lg);
    free(lb);
    free(lg13);
  }
  /* prelu: channel axis 1 */
  op = OP("prelu", 2, "x", X, "alpha", G);
  for (i = 0; i < 120; i++) ref[i] = xv[i] > 0 ? xv[i] : gv[(i / 20) % 3] * xv[i];
  CHECK(FOLD(op) == 1 && matches(ref, 4, xs, 0));
  free(xv);
  free(mv);
  free(vv);
  free(gv);
  free(bv);
  mgopt_program_destroy(P);
}

static void test_pixel_shuffle(void) {
  static const int64_t xs[4] = {2, 8, 2, 3}, os[4] = {2, 2, 4, 6};
  double *xv, ref[96];
  mgopt_value *X;
  mgopt_op *op;
  int64_t n, c, h, w, i, j;
  setup();
  X = KR(MGOPT_DT_FP16, 4, xs, &xv);
  op = mgopt_op_new(P, "pixel_shuffle", 1, 0);
  mgopt_op_set_int(op, "upscale_factor", 2);
  mgopt_op_set_operand(op, "x", X);
  mgopt_op_append(op, F->body);
  REQUIRE(reinfer(op));
  for (n = 0; n < 2; n++)
    for (c = 0; c < 2; c++)
      for (h = 0; h < 2; h++)
        for (w = 0; w < 3; w++)
          for (i = 0; i < 2; i++)
            for (j = 0; j < 2; j++)
              ref[((n * 2 + c) * 4 + h * 2 + i) * 6 + w * 2 + j] = xv[((n * 8 + c * 4 + i * 2 + j) * 2 + h) * 3 + w];
  CHECK(FOLD(op) == 1 && matches(ref, 4, os, 0));
  free(xv);
  mgopt_program_destroy(P);
}

/* space_to_batch as TensorFlow's space_to_batch_nd in channel-first layout; batch_to_space with
   the same crops undoes it. */
static void test_space_batch(void) {
  static const int64_t xs[4] = {2, 3, 3, 5}, bs[2] = {2, 3}, pads[4] = {1, 0, 2, 2}, xs1[3] = {2, 2, 5},
                       bs1[1] = {2}, pads1[2] = {0, 1};
  int64_t os[4] = {12, 3, 2, 3}, os1[3] = {4, 2, 3}, e;
  double *xv, ref[216];
  mgopt_value *X, *S;
  mgopt_op *op;
  int rk;
  setup();
  for (rk = 0; rk < 2; rk++) { /* 2 spatial dims, then 1 */
    const int64_t *shape = rk ? xs1 : xs, *oshape = rk ? os1 : os;
    int nb = rk ? 1 : 2;
    int64_t N = shape[0], C = shape[1], H = shape[2], W = rk ? 1 : shape[3], b1 = rk ? bs1[0] : bs[0], b2 = rk ? 1 : bs[1];
    int64_t p1 = rk ? pads1[0] : pads[0], p2 = rk ? 0 : pads[2], OH = oshape[2], OW = rk ? 1 : oshape[3], n;
    X = KR(MGOPT_DT_FP32, 2 + nb, shape, &xv);
    op = mgopt_op_new(P, "space_to_batch", 1, 0);
    mgopt_op_set_ints(op, "block_shape", rk ? bs1 : bs, nb);
    mgopt_op_set_ints(op, "paddings", rk ? pads1 : pads, 2 * nb);
    mgopt_op_set_operand(op, "x", X);
    mgopt_op_append(op, F->body);
    REQUIRE(reinfer(op));
    n = oshape[0] * C * OH * OW;
    for (e = 0; e < n; e++) {
      int64_t ow = e % OW, oh = (e / OW) % OH, c = (e / (OW * OH)) % C, ob = e / (OW * OH * C);
      int64_t blk = ob / N, b = ob % N, h = oh * b1 + blk / b2 - p1, w = ow * b2 + blk % b2 - p2;
      ref[e] = (h < 0 || h >= H || w < 0 || w >= W) ? 0.0 : xv[((b * C + c) * H + h) * W + w];
    }
    CHECK(FOLD(op) == 1 && matches(ref, 2 + nb, oshape, 0));
    /* batch_to_space(space_to_batch(x)) == x */
    S = mgopt_build_const(P, F->body, NULL, NULL, OUT[0]);
    op = mgopt_op_new(P, "batch_to_space", 1, 0);
    mgopt_op_set_ints(op, "block_shape", rk ? bs1 : bs, nb);
    mgopt_op_set_ints(op, "crops", rk ? pads1 : pads, 2 * nb);
    mgopt_op_set_operand(op, "x", S);
    mgopt_op_append(op, F->body);
    REQUIRE(reinfer(op));
    CHECK(FOLD(op) == 1 && matches(xv, 2 + nb, shape, 0));
    free(xv);
  }
  mgopt_program_destroy(P);
}

/* ---------------------------------------------------------------- refusals and speed */

static void test_refusals(void) {
  static const int64_t xs[4] = {1, 2, 5, 5}, ws[4] = {2, 2, 3, 3}, w1[4] = {2, 1, 3, 3}, cs[1] = {2}, c3[1] = {3};
  static const int64_t st2[2] = {2, 2}, pad_big[4] = {3, 3, 3, 3}, k2[2] = {2, 2}, k3[2] = {3, 3};
  double *xv, *wv, *w1v, *iv, *cv, *c3v;
  mgopt_value *X, *W, *W1, *XI, *C2, *C3;
  mgopt_op *op;
  setup();
  X = KR(MGOPT_DT_FP32, 4, xs, &xv);
  W = KR(MGOPT_DT_FP32, 4, ws, &wv);
  W1 = KR(MGOPT_DT_FP32, 4, w1, &w1v);
  XI = KR(MGOPT_DT_INT32, 4, xs, &iv);
  C2 = KR(MGOPT_DT_FP32, 1, cs, &cv);
  C3 = KR(MGOPT_DT_FP32, 1, c3, &c3v);
  /* integer conv and pools */
  CHECK(FOLD(OP("conv", 2, "x", XI, "weight", W)) == 0);
  op = OP("max_pool", 1, "x", XI);
  mgopt_op_set_ints(op, "kernel_sizes", k2, 2);
  CHECK(FOLD(op) == 0);
  /* weight channels do not match the groups */
  op = OP("conv", 2, "x", X, "weight", W1);
  CHECK(FOLD(op) == 0);
  /* an avg_pool window counting padding past the end padding (ceil_mode) */
  {
    static const int64_t x6[4] = {1, 1, 6, 6};
    double *v6;
    mgopt_value *X6 = KR(MGOPT_DT_FP32, 4, x6, &v6);
    op = OP("avg_pool", 1, "x", X6);
    mgopt_op_set_ints(op, "kernel_sizes", k3, 2);
    mgopt_op_set_ints(op, "strides", st2, 2);
    mgopt_op_set_bool(op, "ceil_mode", 1);
    REQUIRE(reinfer(op));
    CHECK(FOLD(op) == 0);
    mgopt_op_set_bool(op, "exclude_padding_from_average", 1);
    CHECK(FOLD(op) == 1);
    free(v6);
  }
  /* a pool window of padding alone */
  op = OP("max_pool", 1, "x", X);
  mgopt_op_set_ints(op, "kernel_sizes", k3, 2);
  mgopt_op_set_string(op, "pad_type", "custom");
  mgopt_op_set_ints(op, "pad", pad_big, 4);
  CHECK(reinfer(op) && FOLD(op) == 0);
  /* conv_transpose same padding of an odd total: ONNX's SAME_UPPER crops the odd unit at the
     end (same_lower: at the beginning), so it equals custom padding [0, 1] per dim */
  {
    static const int64_t pad_up[4] = {0, 1, 0, 1}, pad_lo[4] = {1, 0, 1, 0};
    const char *pts2[2] = {"same", "same_lower"};
    int j;
    for (j = 0; j < 2; j++) {
      mgopt_tensor *a;
      op = OP("conv_transpose", 2, "x", X, "weight", W);
      mgopt_op_set_string(op, "pad_type", pts2[j]);
      mgopt_op_set_ints(op, "strides", st2, 2);
      CHECK(reinfer(op) && FOLD(op) == 1);
      a = OUT[0];
      op = OP("conv_transpose", 2, "x", X, "weight", W);
      mgopt_op_set_string(op, "pad_type", "custom");
      mgopt_op_set_ints(op, "pad", j == 0 ? pad_up : pad_lo, 4);
      mgopt_op_set_ints(op, "strides", st2, 2);
      CHECK(reinfer(op) && FOLD(op) == 1 && a && mgopt_tensor_equal(a, OUT[0]));
    }
  }
  op = OP("conv_transpose", 2, "x", X, "weight", W);
  mgopt_op_set_string(op, "pad_type", "same"); /* stride 1: a total of 2, folded */
  CHECK(reinfer(op) && FOLD(op) == 1);
  /* norms with per-channel operands of the wrong size */
  CHECK(FOLD(OP("batch_norm", 3, "x", X, "mean", C3, "variance", C3)) == 0);
  CHECK(FOLD(OP("instance_norm", 2, "x", X, "gamma", C3)) == 0);
  CHECK(FOLD(OP("prelu", 2, "x", X, "alpha", C3)) == 0);
  CHECK(FOLD(OP("batch_norm", 3, "x", X, "mean", C2, "variance", C2)) == 1);
  /* an output larger than the limit */
  {
    mgopt_fold_options o;
    memset(&o, 0, sizeof o);
    o.max_elements = 10;
    op = OP("conv", 2, "x", X, "weight", W);
    CHECK(mgopt_fold_op(P, op, OUT, &o) == 0);
    o.max_elements = 18;
    CHECK(mgopt_fold_op(P, op, OUT, &o) == 1);
  }
  free(xv);
  free(wv);
  free(w1v);
  free(iv);
  free(cv);
  free(c3v);
  mgopt_program_destroy(P);
}

/* A 3x3 conv of 64 -> 64 channels over 56x56 (115M multiply-adds) folds in well under a second. */
static void test_conv_speed(void) {
  static const int64_t xs[4] = {1, 64, 56, 56}, ws[4] = {64, 64, 3, 3};
  double *xv, *wv, secs;
  mgopt_op *op;
  clock_t t0;
  setup();
  op = OP("conv", 2, "x", KR(MGOPT_DT_FP32, 4, xs, &xv), "weight", KR(MGOPT_DT_FP32, 4, ws, &wv));
  mgopt_op_set_string(op, "pad_type", "same");
  REQUIRE(reinfer(op));
  t0 = clock();
  CHECK(FOLD(op) == 1);
  secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  printf("  conv 64x56x56 3x3: %.3f s\n", secs);
  CHECK(secs < 60.0); /* generous: unoptimized, sanitizer and valgrind runs take this test too */
  free(xv);
  free(wv);
  mgopt_program_destroy(P);
}

/* ---------------------------------------------------------------- hostile IR */

static int64_t pick(const int64_t *v, int n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return v[(rng >> 33) % (uint64_t)n];
}

/* Random shapes and attributes, with or without a matching stored type: a fold
   either refuses or computes, never reads out of bounds (run under sanitizers). */
static void test_random_ir(void) {
  static const char *const kinds[9] = {"conv", "conv_transpose", "avg_pool", "max_pool", "batch_norm",
                                       "instance_norm", "layer_norm", "prelu", "pixel_shuffle"};
  static const char *const pts[5] = {"valid", "same", "same_lower", "custom", "bogus"};
  static const int64_t dims[7] = {0, 1, 1, 2, 3, 4, 5}, small[9] = {-1, 0, 1, 1, 1, 2, 2, 3, (int64_t)1 << 40},
                       ranks[6] = {1, 2, 3, 4, 4, 5}, ints[8] = {0, 1, 2, 3, 4, 5, 6, 12};
  int it, folded = 0, refused = 0;
  for (it = 0; it < 3000; it++) {
    int64_t xs[6], ws[6], cs[1], v[12], r = pick(ranks, 6), i, n;
    double *xv, *wv, *cv;
    const char *kind = kinds[pick(ints, 8) % 9];
    mgopt_value *X, *W, *Cv;
    mgopt_op *op;
    int res;
    setup();
    for (i = 0; i < r; i++) {
      xs[i] = pick(dims, 7);
      ws[i] = pick(dims, 7);
    }
    cs[0] = pick(dims, 7);
    X = KR(MGOPT_DT_FP32, (int)r, xs, &xv);
    W = KR(MGOPT_DT_FP32, (int)(pick(ints, 4) == 0 ? r - 1 : r), ws, &wv);
    Cv = KR(MGOPT_DT_FP32, 1, cs, &cv);
    if (strcmp(kind, "conv") == 0 || strcmp(kind, "conv_transpose") == 0)
      op = pick(ints, 2) ? OP(kind, 3, "x", X, "weight", W, "bias", Cv) : OP(kind, 2, "x", X, "weight", W);
    else if (strcmp(kind, "batch_norm") == 0)
      op = OP(kind, 4, "x", X, "mean", Cv, "variance", Cv, "gamma", Cv);
    else if (strcmp(kind, "instance_norm") == 0 || strcmp(kind, "layer_norm") == 0)
      op = pick(ints, 2) ? OP(kind, 2, "x", X, "gamma", pick(ints, 2) ? Cv : W) : OP(kind, 1, "x", X);
    else if (strcmp(kind, "prelu") == 0)
      op = OP(kind, 2, "x", X, "alpha", Cv);
    else
      op = OP(kind, 1, "x", X);
    if (op) {
      n = pick(ints, 4);
      for (i = 0; i < 12; i++) v[i] = pick(small, 9);
      if (pick(ints, 2)) mgopt_op_set_ints(op, "strides", v, n);
      if (pick(ints, 2)) mgopt_op_set_ints(op, "dilations", v + 3, n);
      if (pick(ints, 2)) mgopt_op_set_ints(op, "pad", v + 4, 2 * n);
      if (pick(ints, 2)) mgopt_op_set_ints(op, "kernel_sizes", v + 6, n);
      if (pick(ints, 2)) mgopt_op_set_ints(op, "output_shape", v + 2, pick(ints, 2) ? n : r);
      if (pick(ints, 2)) mgopt_op_set_ints(op, "axes", v + 8, pick(ints, 3));
      if (pick(ints, 2)) mgopt_op_set_string(op, "pad_type", pts[pick(ints, 5)]);
      if (pick(ints, 2)) mgopt_op_set_int(op, "groups", v[11]);
      if (pick(ints, 2)) mgopt_op_set_int(op, "upscale_factor", v[10]);
      if (pick(ints, 2)) mgopt_op_set_bool(op, "ceil_mode", 1);
      if (pick(ints, 2)) mgopt_op_set_bool(op, "exclude_padding_from_average", 1);
      if (pick(ints, 2)) reinfer(op);
      res = FOLD(op);
      CHECK(res == 0 || res == 1);
      if (res == 1) folded++;
      else refused++;
    }
    free(xv);
    free(wv);
    free(cv);
    mgopt_program_destroy(P);
  }
  printf("  random IR: %d folded, %d refused\n", folded, refused);
  CHECK(folded > 100 && refused > 100);
}

static const test_case tests[] = {
    TEST(test_conv), TEST(test_pools), TEST(test_norms), TEST(test_pixel_shuffle), TEST(test_refusals),
    TEST(test_space_batch), TEST(test_conv_speed), TEST(test_random_ir),
};
TEST_MAIN(tests)
