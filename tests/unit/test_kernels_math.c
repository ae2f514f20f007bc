/* tests/unit/test_kernels_math.c — folding kernels of the trigonometric and hyperbolic ops, the activations
   sigmoid_hard, softsign, thresholded_relu, local_response_norm, and the integer forms of maximum, minimum,
   mod, pow, sign, clip, against double-precision references written here. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <stdlib.h>
#include <math.h>

/* ---------------------------------------------------------------- fixtures */

static mgopt_program *P;
static mgopt_function *F;
static mgopt_tensor *OUT[2];

static void setup(void) {
  P = mgopt_program_create(NULL);
  F = P ? mgopt_function_new(P, "main") : NULL;
}

static void teardown(void) {
  mgopt_program_destroy(P);
  P = NULL;
  F = NULL;
}

/* A 1-d constant of dtype dt holding v[0..n). */
static mgopt_value *K(mgopt_dtype dt, int64_t n, const double *v) {
  mgopt_tensor *t = mgopt_tensor_new(P, dt, 1, &n);
  int64_t i;
  if (!t) return NULL;
  for (i = 0; i < n; i++) mgopt_tensor_set_f64(t, i, v[i]);
  return mgopt_build_const(P, F->body, NULL, NULL, t);
}

/* A 1-d integer constant of dtype dt holding v[0..n) (bit patterns for uint64). */
static mgopt_value *KI(mgopt_dtype dt, int64_t n, const int64_t *v) {
  mgopt_tensor *t = mgopt_tensor_new(P, dt, 1, &n);
  int64_t i;
  if (!t) return NULL;
  for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, v[i]);
  return mgopt_build_const(P, F->body, NULL, NULL, t);
}

static mgopt_op *OP1(const char *type, mgopt_value *x) {
  const char *names[1] = {"x"};
  return mgopt_build_op(P, F->body, NULL, type, NULL, 1, names, &x, 1);
}

static mgopt_op *OP2(const char *type, mgopt_value *x, mgopt_value *y) {
  const char *names[2] = {"x", "y"};
  mgopt_value *vals[2];
  vals[0] = x;
  vals[1] = y;
  return mgopt_build_op(P, F->body, NULL, type, NULL, 2, names, vals, 1);
}

/* Re-infers the output type after attributes were set (0 when the op is ill-typed). */
static int reinfer(mgopt_op *op) {
  mgopt_diag d;
  memset(&d, 0, sizeof d);
  return op && mgopt_op_infer(P, op, &d) == MGOPT_OK;
}

static int FOLD(mgopt_op *op) { return op ? mgopt_fold_op(P, op, OUT, NULL) : -2; }

/* OUT[0] (n elements) equals ref exactly (bitwise value; NaN matches NaN). */
static int exact(const double *ref, int64_t n) {
  int64_t i;
  mgopt_tensor *t = OUT[0];
  if (!t || t->numel != n) return printf("  %lld elements expected\n", (long long)n), 0;
  for (i = 0; i < n; i++) {
    double g = mgopt_tensor_get_f64(t, i), e = ref[i];
    if (g != g && e != e) continue;
    if (g != e || (g == 0 && signbit(g) != signbit(e))) {
      printf("  element %lld: got %.17g expected %.17g\n", (long long)i, g, e);
      return 0;
    }
  }
  return 1;
}

static int exact_i(const int64_t *ref, int64_t n) {
  int64_t i;
  mgopt_tensor *t = OUT[0];
  if (!t || t->numel != n) return printf("  %lld elements expected\n", (long long)n), 0;
  for (i = 0; i < n; i++)
    if (mgopt_tensor_get_i64(t, i) != ref[i]) {
      printf("  element %lld: got %lld expected %lld\n", (long long)i, (long long)mgopt_tensor_get_i64(t, i),
             (long long)ref[i]);
      return 0;
    }
  return 1;
}

/* ---------------------------------------------------------------- trigonometric, hyperbolic */

static double ref_unary(int f, double x) {
  switch (f) {
    case 0: return acos(x);
    case 1: return asin(x);
    case 2: return atan(x);
    case 3: return atanh(x);
    case 4: return cosh(x);
    case 5: return sinh(x);
    default: return tan(x);
  }
}

/* Each op on fp32 equals the double result rounded once to float, including NaN
   propagation, domain errors (NaN), poles (atanh(+-1) = +-inf) and overflow. */
static void test_trig_fp32_rounded_once(void) {
  static const char *const ops[7] = {"acos", "asin", "atan", "atanh", "cosh", "sinh", "tan"};
  static const double xs[] = {-1.0, -0.75, -0.1, 0.0, 0.3, 0.5, 1.0, 1.5, -2.0, 100.0, 1e-8, NAN, INFINITY};
  const int64_t n = (int64_t)(sizeof xs / sizeof xs[0]);
  int f;
  int64_t i;
  for (f = 0; f < 7; f++) {
    double ref[sizeof xs / sizeof xs[0]];
    setup();
    for (i = 0; i < n; i++) ref[i] = (double)(float)ref_unary(f, (double)(float)xs[i]);
    CHECK_EQ_INT(FOLD(OP1(ops[f], K(MGOPT_DT_FP32, n, xs))), 1);
    if (!exact(ref, n)) printf("  in %s\n", ops[f]);
    CHECK(exact(ref, n));
    teardown();
  }
}

/* fp64 is computed and stored in double; fp16 rounds the float result to fp16. */
static void test_trig_fp64_fp16(void) {
  static const double xs[] = {-0.5, 0.25, 0.75, 2.0};
  double ref[4];
  int64_t i;
  setup();
  for (i = 0; i < 4; i++) ref[i] = atan(xs[i]);
  CHECK_EQ_INT(FOLD(OP1("atan", K(MGOPT_DT_FP64, 4, xs))), 1);
  CHECK(exact(ref, 4));
  for (i = 0; i < 4; i++) ref[i] = mgopt_f16_to_f32(mgopt_f32_to_f16((float)sinh(xs[i])));
  CHECK_EQ_INT(FOLD(OP1("sinh", K(MGOPT_DT_FP16, 4, xs))), 1);
  CHECK(exact(ref, 4));
  CHECK(OUT[0] && OUT[0]->dtype == MGOPT_DT_FP16);
  /* no integer forms */
  {
    static const int64_t iv[2] = {0, 1};
    CHECK_EQ_INT(FOLD(OP1("cosh", KI(MGOPT_DT_INT32, 2, iv))), 0);
  }
  teardown();
}

/* sign, abs on integers; uint64 values of 2^63 and more are not folded (the
   integer lane is int64), never read as negative. */
static void test_sign_abs_integers(void) {
  static const int64_t v[3] = {0, 5, 1000};
  static const int64_t want_sign[3] = {0, 1, 1};
  static const int64_t big[2] = {1, INT64_MIN}; /* uint64: 1, 2^63 */
  static const int64_t sv[4] = {0, 5, -7, INT64_MIN};
  static const int64_t want_ssign[4] = {0, 1, -1, -1};
  setup();
  CHECK_EQ_INT(FOLD(OP1("sign", KI(MGOPT_DT_UINT64, 3, v))), 1);
  CHECK(exact_i(want_sign, 3));
  CHECK_EQ_INT(FOLD(OP1("sign", KI(MGOPT_DT_UINT64, 2, big))), 0);
  CHECK_EQ_INT(FOLD(OP1("sign", KI(MGOPT_DT_INT64, 4, sv))), 1);
  CHECK(exact_i(want_ssign, 4));
  teardown();
}

/* ---------------------------------------------------------------- activations */

/* sigmoid_hard in fp32 arithmetic (each step rounded to float); softsign in
   double, rounded once; thresholded_relu keeps x >= alpha, NaN gives 0. */
static void test_activations(void) {
  static const double xs[] = {-7.0, -2.5, -0.3, 0.0, 0.1, 0.5, 1.0, 2.5, 3.0, 1e30, -1e30, NAN};
  const int64_t n = (int64_t)(sizeof xs / sizeof xs[0]);
  double ref[sizeof xs / sizeof xs[0]];
  mgopt_op *op;
  int64_t i;
  setup();
  op = OP1("sigmoid_hard", K(MGOPT_DT_FP32, n, xs));
  mgopt_op_set_float(op, "alpha", 0.3);
  mgopt_op_set_float(op, "beta", 0.45);
  for (i = 0; i < n; i++) {
    float t = (float)((double)0.3f * (double)(float)xs[i]); /* one float multiply */
    t = (float)((double)t + (double)0.45f);
    ref[i] = t != t ? (double)t : t < 0.0f ? 0.0 : t > 1.0f ? 1.0 : (double)t;
  }
  CHECK_EQ_INT(FOLD(op), 1);
  CHECK(exact(ref, n));
  for (i = 0; i < n; i++) ref[i] = (double)(float)((double)(float)xs[i] / (1.0 + fabs((double)(float)xs[i])));
  CHECK_EQ_INT(FOLD(OP1("softsign", K(MGOPT_DT_FP32, n, xs))), 1);
  CHECK(exact(ref, n));
  op = OP1("thresholded_relu", K(MGOPT_DT_FP32, n, xs));
  mgopt_op_set_float(op, "alpha", 0.5);
  for (i = 0; i < n; i++) ref[i] = (float)xs[i] >= 0.5f ? (double)(float)xs[i] : 0.0;
  CHECK_EQ_INT(FOLD(op), 1);
  CHECK(exact(ref, n));
  CHECK(ref[n - 1] == 0.0); /* NaN is not >= alpha */
  teardown();
}

/* local_response_norm against a direct double computation of ONNX LRN's
   formula, odd and even sizes, rank 3 and 4. */
static void test_lrn(void) {
  static const int64_t sizes[4] = {1, 2, 3, 5};
  int si;
  for (si = 0; si < 4; si++) {
    int64_t shape[4] = {2, 5, 2, 3}, N = 2, C = 5, S = 6, size = sizes[si], nn, c, s, j, i;
    double v[60], ref[60];
    mgopt_tensor *t;
    mgopt_op *op;
    mgopt_value *x;
    setup();
    t = mgopt_tensor_new(P, MGOPT_DT_FP32, 4, shape);
    REQUIRE(t != NULL);
    for (i = 0; i < 60; i++) {
      v[i] = (double)(float)(((i * 37) % 23) / 7.0 - 1.5);
      mgopt_tensor_set_f64(t, i, v[i]);
    }
    x = mgopt_build_const(P, F->body, NULL, NULL, t);
    op = OP1("local_response_norm", x);
    REQUIRE(op != NULL);
    mgopt_op_set_int(op, "size", size);
    mgopt_op_set_float(op, "alpha", 0.02);
    mgopt_op_set_float(op, "beta", 0.75);
    mgopt_op_set_float(op, "k", 1.5);
    for (nn = 0; nn < N; nn++)
      for (c = 0; c < C; c++)
        for (s = 0; s < S; s++) {
          double sum = 0;
          for (j = c - (size - 1) / 2; j <= c + size / 2; j++)
            if (j >= 0 && j < C) sum += v[(nn * C + j) * S + s] * v[(nn * C + j) * S + s];
          i = (nn * C + c) * S + s;
          ref[i] = (double)(float)(v[i] / pow(1.5 + (double)0.02f / (double)size * sum, 0.75));
        }
    CHECK_EQ_INT(FOLD(op), 1);
    if (!exact(ref, 60)) printf("  size %d\n", (int)size);
    CHECK(exact(ref, 60));
    teardown();
  }
}

/* ---------------------------------------------------------------- integer forms */

/* mod of integers equals Python's %: the result takes the divisor's sign. */
static void test_int_mod_max_min(void) {
  static const int64_t a[8] = {-7, 7, -7, 7, 0, -128, 127, 5};
  static const int64_t b[8] = {3, -3, -3, 3, -5, -1, 2, 5};
  int64_t want[8], mx[8], mn[8];
  int i;
  setup();
  for (i = 0; i < 8; i++) {
    int64_t m = a[i] % b[i];
    if (m != 0 && (m < 0) != (b[i] < 0)) m += b[i];
    want[i] = m;
    mx[i] = a[i] > b[i] ? a[i] : b[i];
    mn[i] = a[i] < b[i] ? a[i] : b[i];
  }
  CHECK_EQ_INT(FOLD(OP2("mod", KI(MGOPT_DT_INT8, 8, a), KI(MGOPT_DT_INT8, 8, b))), 1);
  CHECK(exact_i(want, 8));
  CHECK_EQ_INT(FOLD(OP2("maximum", KI(MGOPT_DT_INT16, 8, a), KI(MGOPT_DT_INT16, 8, b))), 1);
  CHECK(exact_i(mx, 8));
  CHECK_EQ_INT(FOLD(OP2("minimum", KI(MGOPT_DT_INT64, 8, a), KI(MGOPT_DT_INT64, 8, b))), 1);
  CHECK(exact_i(mn, 8));
  {
    static const int64_t z[1] = {0};
    CHECK_EQ_INT(FOLD(OP2("mod", KI(MGOPT_DT_INT32, 8, a), KI(MGOPT_DT_INT32, 1, z))), 0);
  }
  teardown();
}

/* pow with mixed dtypes: the base's dtype, computed in double. */
static void test_pow_mixed(void) {
  static const double f[4] = {2.0, -3.0, 0.5, 1.7};
  static const int64_t e[4] = {3, 2, -2, 5};
  static const int64_t ib[4] = {2, 3, -2, 7};
  static const double fe[4] = {0.5, 2.0, 3.0, 1.5};
  double ref[4];
  int64_t iref[4];
  int i;
  mgopt_op *op;
  setup();
  for (i = 0; i < 4; i++) ref[i] = (double)(float)pow((double)(float)f[i], (double)e[i]);
  op = OP2("pow", K(MGOPT_DT_FP32, 4, f), KI(MGOPT_DT_INT32, 4, e));
  CHECK(reinfer(op));
  CHECK_EQ_INT(FOLD(op), 1);
  CHECK(exact(ref, 4));
  CHECK(OUT[0] && OUT[0]->dtype == MGOPT_DT_FP32);
  for (i = 0; i < 4; i++) iref[i] = (int64_t)trunc(pow((double)ib[i], (double)(float)fe[i]));
  CHECK_EQ_INT(FOLD(OP2("pow", KI(MGOPT_DT_INT64, 4, ib), K(MGOPT_DT_FP32, 4, fe))), 1);
  CHECK(exact_i(iref, 4));
  for (i = 0; i < 4; i++) iref[i] = (int64_t)pow((double)ib[i], (double)(i + 1));
  {
    static const int64_t pe[4] = {1, 2, 3, 4};
    CHECK_EQ_INT(FOLD(OP2("pow", KI(MGOPT_DT_INT32, 4, ib), KI(MGOPT_DT_UINT8, 4, pe))), 1);
    CHECK(exact_i(iref, 4));
    /* a negative integer exponent of an integer base is not folded */
    CHECK_EQ_INT(FOLD(OP2("pow", KI(MGOPT_DT_INT32, 4, ib), KI(MGOPT_DT_INT64, 4, e))), 0);
  }
  teardown();
}

static void test_int_clip(void) {
  static const int64_t a[5] = {-100, -5, 0, 6, 100};
  static const int64_t want[5] = {-5, -5, 0, 6, 7};
  mgopt_op *op;
  setup();
  op = OP1("clip", KI(MGOPT_DT_INT16, 5, a));
  mgopt_op_set_float(op, "alpha", -5.0);
  mgopt_op_set_float(op, "beta", 7.0);
  CHECK_EQ_INT(FOLD(op), 1);
  CHECK(exact_i(want, 5));
  op = OP1("clip", KI(MGOPT_DT_INT16, 5, a));
  mgopt_op_set_float(op, "alpha", -HUGE_VAL);
  mgopt_op_set_float(op, "beta", HUGE_VAL);
  CHECK_EQ_INT(FOLD(op), 1);
  CHECK(exact_i(a, 5));
  op = OP1("clip", KI(MGOPT_DT_INT16, 5, a));
  mgopt_op_set_float(op, "alpha", 0.5);
  mgopt_op_set_float(op, "beta", 7.0);
  CHECK_EQ_INT(FOLD(op), 0);
  teardown();
}

static const test_case tests[] = {
    TEST(test_trig_fp32_rounded_once),
    TEST(test_trig_fp64_fp16),
    TEST(test_sign_abs_integers),
    TEST(test_activations),
    TEST(test_lrn),
    TEST(test_int_mod_max_min),
    TEST(test_pow_mixed),
    TEST(test_int_clip),
};
TEST_MAIN(tests)
