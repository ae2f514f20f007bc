/* tests/unit/test_kernels.c — constant-folding kernels: mgopt_fold_op against hand-computed values. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <math.h>
#include <stdarg.h>

/* ---------------------------------------------------------------- fixtures */

typedef struct fx {
  mgopt_program *p;
  mgopt_function *f;
  mgopt_tensor *out[4];
} fx;

static fx fx_new(void) {
  fx x;
  memset(&x, 0, sizeof x);
  x.p = mgopt_program_create(NULL);
  x.f = x.p ? mgopt_function_new(x.p, "main") : NULL;
  return x;
}

/* A const of dtype dt with the given values (converted like mgopt_tensor_set_f64). */
static mgopt_value *K(fx *x, mgopt_dtype dt, int rank, const int64_t *shape, const double *v) {
  mgopt_tensor *t = mgopt_tensor_new(x->p, dt, rank, shape);
  int64_t i;
  if (!t) return NULL;
  for (i = 0; i < t->numel; i++) mgopt_tensor_set_f64(t, i, v[i]);
  return mgopt_build_const(x->p, x->f->body, NULL, NULL, t);
}

/* A const from raw bytes (hand-packed sub-byte data, exact bit patterns). */
static mgopt_value *KB(fx *x, mgopt_dtype dt, int rank, const int64_t *shape, const void *bytes) {
  mgopt_tensor *t = mgopt_tensor_new(x->p, dt, rank, shape);
  if (!t) return NULL;
  memcpy(t->data, bytes, t->nbytes);
  return mgopt_build_const(x->p, x->f->body, NULL, NULL, t);
}

static mgopt_value *S(fx *x, mgopt_dtype dt, double v) { return K(x, dt, 0, NULL, &v); }

/* An op with n (slot name, value) pairs. */
static mgopt_op *OP(fx *x, const char *type, int nouts, int n, ...) {
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
  return mgopt_build_op(x->p, x->f->body, NULL, type, NULL, n, names, vals, nouts);
}

static int FOLD(fx *x, mgopt_op *op) { return op ? mgopt_fold_op(x->p, op, x->out, NULL) : -2; }

static double G(const mgopt_tensor *t, int64_t i) { return mgopt_tensor_get_f64(t, i); }

static uint16_t H(const mgopt_tensor *t, int64_t i) {
  uint16_t h;
  memcpy(&h, (const uint8_t *)t->data + 2 * i, 2);
  return h;
}

static int shape_is(const mgopt_tensor *t, int rank, const int64_t *s) {
  int i;
  if (!t || t->rank != rank) return 0;
  for (i = 0; i < rank; i++)
    if (t->shape[i] != s[i]) return 0;
  return 1;
}

/* all of t equal to e (as doubles; NaN matches NaN) */
static int vals_are(const mgopt_tensor *t, int64_t n, const double *e) {
  int64_t i;
  if (!t || t->numel != n) return 0;
  for (i = 0; i < n; i++) {
    double v = G(t, i);
    if (!(v == e[i] || (v != v && e[i] != e[i]))) {
      printf("  element %lld: got %.17g expected %.17g\n", (long long)i, v, e[i]);
      return 0;
    }
  }
  return 1;
}

static int near(double a, double b) { return fabs(a - b) <= 1e-6 * (fabs(b) > 1 ? fabs(b) : 1); }

#define ARR(...) __VA_ARGS__
#define I64S(name, ...) static const int64_t name[] = {__VA_ARGS__}
#define DBL(name, ...) static const double name[] = {__VA_ARGS__}

/* ---------------------------------------------------------------- broadcasting */

static void test_binary_broadcast(void) {
  fx x = fx_new();
  I64S(s23, 2, 3);
  I64S(s3, 3);
  I64S(s21, 2, 1);
  I64S(s213, 2, 1, 3);
  I64S(s41, 4, 1);
  DBL(a, 1, 2, 3, 4, 5, 6);
  DBL(row, 10, 20, 30);
  DBL(col, 100, 200);
  DBL(b4, 1, 2, 3, 4);
  mgopt_value *va = K(&x, MGOPT_DT_FP32, 2, s23, a);
  REQUIRE(va);
  /* row */
  REQUIRE(FOLD(&x, OP(&x, "add", 1, 2, "x", va, "y", K(&x, MGOPT_DT_FP32, 1, s3, row))) == 1);
  {
    DBL(e, 11, 22, 33, 14, 25, 36);
    CHECK(shape_is(x.out[0], 2, s23));
    CHECK(vals_are(x.out[0], 6, e));
  }
  /* column */
  REQUIRE(FOLD(&x, OP(&x, "mul", 1, 2, "x", va, "y", K(&x, MGOPT_DT_FP32, 2, s21, col))) == 1);
  {
    DBL(e, 100, 200, 300, 800, 1000, 1200);
    CHECK(vals_are(x.out[0], 6, e));
  }
  /* scalar on the left */
  REQUIRE(FOLD(&x, OP(&x, "sub", 1, 2, "x", S(&x, MGOPT_DT_FP32, 10), "y", va)) == 1);
  {
    DBL(e, 9, 8, 7, 6, 5, 4);
    CHECK(x.out[0]->rank == 2);
    CHECK(vals_are(x.out[0], 6, e));
  }
  /* rank mismatch: (2,1,3) with (4,1) -> (2,4,3) */
  REQUIRE(FOLD(&x, OP(&x, "add", 1, 2, "x", K(&x, MGOPT_DT_FP32, 3, s213, a), "y",
                      K(&x, MGOPT_DT_FP32, 2, s41, b4))) == 1);
  {
    I64S(s243, 2, 4, 3);
    CHECK(shape_is(x.out[0], 3, s243));
    /* out[1][2][0] = a[1][0][0] + b[2][0] = 4 + 3 */
    CHECK(G(x.out[0], 1 * 12 + 2 * 3 + 0) == 7);
    /* out[0][3][2] = 3 + 4 */
    CHECK(G(x.out[0], 0 * 12 + 3 * 3 + 2) == 7);
    CHECK(G(x.out[0], 1 * 12 + 0 * 3 + 1) == 6);
  }
  /* incompatible shapes */
  CHECK(FOLD(&x, OP(&x, "add", 1, 2, "x", va, "y", K(&x, MGOPT_DT_FP32, 2, s41, b4))) == 0);
  /* mixed dtypes are not MIL */
  CHECK(FOLD(&x, OP(&x, "add", 1, 2, "x", va, "y", S(&x, MGOPT_DT_INT32, 1))) == 0);
  mgopt_program_destroy(x.p);
}

/* ---------------------------------------------------------------- dtypes */

static void test_binary_dtypes(void) {
  fx x = fx_new();
  I64S(s2, 2);
  DBL(i32a, 2147483647, -5);
  DBL(one2, 1, 1);
  /* int32 wraps */
  REQUIRE(FOLD(&x, OP(&x, "add", 1, 2, "x", K(&x, MGOPT_DT_INT32, 1, s2, i32a), "y",
                      K(&x, MGOPT_DT_INT32, 1, s2, one2))) == 1);
  CHECK(x.out[0]->dtype == MGOPT_DT_INT32);
  CHECK(mgopt_tensor_get_i64(x.out[0], 0) == INT32_MIN);
  CHECK(mgopt_tensor_get_i64(x.out[0], 1) == -4);
  /* int8 mul wraps: 100 * 3 = 300 = 44 mod 256 */
  REQUIRE(FOLD(&x, OP(&x, "mul", 1, 2, "x", S(&x, MGOPT_DT_INT8, 100), "y", S(&x, MGOPT_DT_INT8, 3))) == 1);
  CHECK(x.out[0]->dtype == MGOPT_DT_INT8 && G(x.out[0], 0) == 44);
  /* uint8 and uint16 sub wrap */
  REQUIRE(FOLD(&x, OP(&x, "sub", 1, 2, "x", S(&x, MGOPT_DT_UINT8, 0), "y", S(&x, MGOPT_DT_UINT8, 1))) == 1);
  CHECK(G(x.out[0], 0) == 255);
  REQUIRE(FOLD(&x, OP(&x, "sub", 1, 2, "x", S(&x, MGOPT_DT_UINT16, 1), "y", S(&x, MGOPT_DT_UINT16, 3))) == 1);
  CHECK(G(x.out[0], 0) == 65534);
  /* int16 maximum, int64 mul */
  REQUIRE(FOLD(&x, OP(&x, "maximum", 1, 2, "x", S(&x, MGOPT_DT_INT16, -300), "y", S(&x, MGOPT_DT_INT16, -301))) == 1);
  CHECK(G(x.out[0], 0) == -300);
  REQUIRE(FOLD(&x, OP(&x, "mul", 1, 2, "x", S(&x, MGOPT_DT_INT64, 3000000000.0), "y", S(&x, MGOPT_DT_INT64, 3))) == 1);
  CHECK(mgopt_tensor_get_i64(x.out[0], 0) == 9000000000LL);
  /* integer pow */
  REQUIRE(FOLD(&x, OP(&x, "pow", 1, 2, "x", S(&x, MGOPT_DT_INT32, -3), "y", S(&x, MGOPT_DT_INT32, 3))) == 1);
  CHECK(G(x.out[0], 0) == -27);
  CHECK(FOLD(&x, OP(&x, "pow", 1, 2, "x", S(&x, MGOPT_DT_INT32, 2), "y", S(&x, MGOPT_DT_INT32, -1))) == 0);
  /* fp64 */
  REQUIRE(FOLD(&x, OP(&x, "real_div", 1, 2, "x", S(&x, MGOPT_DT_FP64, 1), "y", S(&x, MGOPT_DT_FP64, 3))) == 1);
  CHECK(x.out[0]->dtype == MGOPT_DT_FP64 && G(x.out[0], 0) == 1.0 / 3.0);
  /* fp32 division rounds at fp32: 1/3 as float */
  REQUIRE(FOLD(&x, OP(&x, "real_div", 1, 2, "x", S(&x, MGOPT_DT_FP32, 1), "y", S(&x, MGOPT_DT_FP32, 3))) == 1);
  CHECK(G(x.out[0], 0) == (double)0.3333333432674408f);
  /* comparisons give bool, with NaN unordered */
  {
    DBL(av, 1, NAN);
    DBL(bv, 2, NAN);
    mgopt_value *fa = K(&x, MGOPT_DT_FP32, 1, s2, av), *fb = K(&x, MGOPT_DT_FP32, 1, s2, bv);
    REQUIRE(FOLD(&x, OP(&x, "less", 1, 2, "x", fa, "y", fb)) == 1);
    CHECK(x.out[0]->dtype == MGOPT_DT_BOOL && G(x.out[0], 0) == 1 && G(x.out[0], 1) == 0);
    REQUIRE(FOLD(&x, OP(&x, "not_equal", 1, 2, "x", fa, "y", fb)) == 1);
    CHECK(G(x.out[0], 0) == 1 && G(x.out[0], 1) == 1);
    /* maximum propagates NaN */
    REQUIRE(FOLD(&x, OP(&x, "maximum", 1, 2, "x", fa, "y", fb)) == 1);
    CHECK(G(x.out[0], 0) == 2 && G(x.out[0], 1) != G(x.out[0], 1));
  }
  /* logical ops on bool */
  {
    DBL(p4, 0, 0, 1, 1);
    DBL(q4, 0, 1, 0, 1);
    I64S(s4, 4);
    mgopt_value *bp = K(&x, MGOPT_DT_BOOL, 1, s4, p4), *bq = K(&x, MGOPT_DT_BOOL, 1, s4, q4);
    DBL(and_e, 0, 0, 0, 1);
    DBL(or_e, 0, 1, 1, 1);
    DBL(xor_e, 0, 1, 1, 0);
    DBL(not_e, 1, 1, 0, 0);
    REQUIRE(FOLD(&x, OP(&x, "logical_and", 1, 2, "x", bp, "y", bq)) == 1);
    CHECK(vals_are(x.out[0], 4, and_e));
    REQUIRE(FOLD(&x, OP(&x, "logical_or", 1, 2, "x", bp, "y", bq)) == 1);
    CHECK(vals_are(x.out[0], 4, or_e));
    REQUIRE(FOLD(&x, OP(&x, "logical_xor", 1, 2, "x", bp, "y", bq)) == 1);
    CHECK(vals_are(x.out[0], 4, xor_e));
    REQUIRE(FOLD(&x, OP(&x, "logical_not", 1, 1, "x", bp)) == 1);
    CHECK(x.out[0]->dtype == MGOPT_DT_BOOL && vals_are(x.out[0], 4, not_e));
    /* bool arithmetic and logical ops on numbers are not MIL */
    CHECK(FOLD(&x, OP(&x, "add", 1, 2, "x", bp, "y", bq)) == 0);
    CHECK(FOLD(&x, OP(&x, "logical_not", 1, 1, "x", S(&x, MGOPT_DT_FP32, 1))) == 0);
    CHECK(FOLD(&x, OP(&x, "logical_or", 1, 2, "x", S(&x, MGOPT_DT_INT32, 1), "y", S(&x, MGOPT_DT_INT32, 0))) == 0);
  }
  mgopt_program_destroy(x.p);
}

static void test_fp16_bf16_rounding(void) {
  fx x = fx_new();
  I64S(s2, 2);
  static const uint16_t a16[2] = {0x3C00, 0x3C00};  /* 1, 1 */
  static const uint16_t b16[2] = {0x1000, 0x1600};  /* 2^-11, 3*2^-11 */
  static const uint16_t a_bf[2] = {0x3F80, 0x3F80}; /* 1, 1 */
  static const uint16_t b_bf[2] = {0x3B80, 0x3C40}; /* 2^-8, 3*2^-8 */
  /* 1 + 2^-11 is a tie between 1 and 1+2^-10: even wins; 1 + 3*2^-11 rounds up to 1+2^-9 */
  REQUIRE(FOLD(&x, OP(&x, "add", 1, 2, "x", KB(&x, MGOPT_DT_FP16, 1, s2, a16), "y",
                      KB(&x, MGOPT_DT_FP16, 1, s2, b16))) == 1);
  CHECK(x.out[0]->dtype == MGOPT_DT_FP16);
  CHECK(H(x.out[0], 0) == 0x3C00);
  CHECK(H(x.out[0], 1) == 0x3C02);
  REQUIRE(FOLD(&x, OP(&x, "add", 1, 2, "x", KB(&x, MGOPT_DT_BF16, 1, s2, a_bf), "y",
                      KB(&x, MGOPT_DT_BF16, 1, s2, b_bf))) == 1);
  CHECK(x.out[0]->dtype == MGOPT_DT_BF16);
  CHECK(H(x.out[0], 0) == 0x3F80);
  CHECK(H(x.out[0], 1) == 0x3F82);
  /* fp16 division: 1/3 = 0x3555; overflow to inf: 60000 * 2 */
  REQUIRE(FOLD(&x, OP(&x, "real_div", 1, 2, "x", S(&x, MGOPT_DT_FP16, 1), "y", S(&x, MGOPT_DT_FP16, 3))) == 1);
  CHECK(H(x.out[0], 0) == 0x3555);
  REQUIRE(FOLD(&x, OP(&x, "mul", 1, 2, "x", S(&x, MGOPT_DT_FP16, 60000), "y", S(&x, MGOPT_DT_FP16, 2))) == 1);
  CHECK(H(x.out[0], 0) == 0x7C00);
  /* inverse at fp16: the default epsilon 1e-4 is rounded to fp16 (0x068E) and
     4 + eps rounds back to 4 in fp16, so inverse(4) = 0.25 exactly */
  REQUIRE(FOLD(&x, OP(&x, "inverse", 1, 1, "x", S(&x, MGOPT_DT_FP16, 4))) == 1);
  CHECK(H(x.out[0], 0) == 0x3400);
  /* log at fp16: the default epsilon 1e-45 is 0 in fp16, so log(0) = -inf */
  REQUIRE(FOLD(&x, OP(&x, "log", 1, 1, "x", S(&x, MGOPT_DT_FP16, 0))) == 1);
  CHECK(H(x.out[0], 0) == 0xFC00);
  /* ...but at fp32 the subnormal epsilon keeps it finite: log(2^-149) = -103.28 */
  REQUIRE(FOLD(&x, OP(&x, "log", 1, 1, "x", S(&x, MGOPT_DT_FP32, 0))) == 1);
  CHECK(near(G(x.out[0], 0), -103.27893066));
  mgopt_program_destroy(x.p);
}

/* ---------------------------------------------------------------- division */

static void test_floor_div_mod(void) {
  fx x = fx_new();
  I64S(s5, 5);
  DBL(av, -7, 7, -7, 7, -8);
  DBL(bv, 2, -2, -2, 2, 2);
  mgopt_value *ia = K(&x, MGOPT_DT_INT32, 1, s5, av), *ib = K(&x, MGOPT_DT_INT32, 1, s5, bv);
  mgopt_value *fa = K(&x, MGOPT_DT_FP32, 1, s5, av), *fb = K(&x, MGOPT_DT_FP32, 1, s5, bv);
  DBL(div_e, -4, -4, 3, 3, -4);
  DBL(mod_e, 1, -1, -1, 1, 0);
  REQUIRE(FOLD(&x, OP(&x, "floor_div", 1, 2, "x", ia, "y", ib)) == 1);
  CHECK(vals_are(x.out[0], 5, div_e));
  REQUIRE(FOLD(&x, OP(&x, "mod", 1, 2, "x", ia, "y", ib)) == 1);
  CHECK(vals_are(x.out[0], 5, mod_e));
  REQUIRE(FOLD(&x, OP(&x, "floor_div", 1, 2, "x", fa, "y", fb)) == 1);
  CHECK(vals_are(x.out[0], 5, div_e));
  REQUIRE(FOLD(&x, OP(&x, "mod", 1, 2, "x", fa, "y", fb)) == 1);
  CHECK(vals_are(x.out[0], 5, mod_e));
  /* numpy: 1.0 // 0.1 == 9.0 and 1.0 % 0.1 == 0.09999999999999995 (0.1 is above 1/10) */
  REQUIRE(FOLD(&x, OP(&x, "floor_div", 1, 2, "x", S(&x, MGOPT_DT_FP64, 1), "y", S(&x, MGOPT_DT_FP64, 0.1))) == 1);
  CHECK(G(x.out[0], 0) == 9.0);
  REQUIRE(FOLD(&x, OP(&x, "mod", 1, 2, "x", S(&x, MGOPT_DT_FP64, 1), "y", S(&x, MGOPT_DT_FP64, 0.1))) == 1);
  CHECK(G(x.out[0], 0) == 0.09999999999999995);
  /* integer division by zero and INT64_MIN // -1 are not folded */
  CHECK(FOLD(&x, OP(&x, "floor_div", 1, 2, "x", S(&x, MGOPT_DT_INT32, 5), "y", S(&x, MGOPT_DT_INT32, 0))) == 0);
  CHECK(x.out[0] == NULL);
  CHECK(FOLD(&x, OP(&x, "mod", 1, 2, "x", S(&x, MGOPT_DT_INT64, 5), "y", S(&x, MGOPT_DT_INT64, 0))) == 0);
  {
    mgopt_tensor *t = mgopt_tensor_new_scalar_i64(x.p, MGOPT_DT_INT64, INT64_MIN);
    mgopt_value *m = mgopt_build_const(x.p, x.f->body, NULL, NULL, t);
    CHECK(FOLD(&x, OP(&x, "floor_div", 1, 2, "x", m, "y", S(&x, MGOPT_DT_INT64, -1))) == 0);
    REQUIRE(FOLD(&x, OP(&x, "mod", 1, 2, "x", m, "y", S(&x, MGOPT_DT_INT64, -1))) == 1);
    CHECK(G(x.out[0], 0) == 0);
  }
  /* float division by zero is IEEE */
  REQUIRE(FOLD(&x, OP(&x, "real_div", 1, 2, "x", S(&x, MGOPT_DT_FP32, -1), "y", S(&x, MGOPT_DT_FP32, 0))) == 1);
  CHECK(G(x.out[0], 0) == -HUGE_VAL);
  /* integer real_div has no well-defined MIL value */
  CHECK(FOLD(&x, OP(&x, "real_div", 1, 2, "x", S(&x, MGOPT_DT_INT32, 1), "y", S(&x, MGOPT_DT_INT32, 2))) == 0);
  mgopt_program_destroy(x.p);
}

/* ---------------------------------------------------------------- unary */

static mgopt_tensor *un(fx *x, const char *type, mgopt_value *v) {
  mgopt_op *op = OP(x, type, 1, 1, "x", v);
  return FOLD(x, op) == 1 ? x->out[0] : NULL;
}

static void test_unary(void) {
  fx x = fx_new();
  I64S(s6, 6);
  DBL(v, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5);
  mgopt_value *a = K(&x, MGOPT_DT_FP32, 1, s6, v);
  mgopt_tensor *t;
  mgopt_op *op;
  DBL(round_e, -2, -2, -0.0, 0, 2, 2);
  DBL(floor_e, -3, -2, -1, 0, 1, 2);
  DBL(ceil_e, -2, -1, -0.0, 1, 2, 3);
  DBL(abs_e, 2.5, 1.5, 0.5, 0.5, 1.5, 2.5);
  DBL(sign_e, -1, -1, -1, 1, 1, 1);
  DBL(relu_e, 0, 0, 0, 0.5, 1.5, 2.5);
  DBL(square_e, 6.25, 2.25, 0.25, 0.25, 2.25, 6.25);
  CHECK(vals_are(un(&x, "round", a), 6, round_e));
  t = un(&x, "round", a);
  CHECK(t && signbit(G(t, 2)) && !signbit(G(t, 3)));
  CHECK(vals_are(un(&x, "floor", a), 6, floor_e));
  CHECK(vals_are(un(&x, "ceil", a), 6, ceil_e));
  CHECK(vals_are(un(&x, "abs", a), 6, abs_e));
  CHECK(vals_are(un(&x, "sign", a), 6, sign_e));
  CHECK(vals_are(un(&x, "relu", a), 6, relu_e));
  CHECK(vals_are(un(&x, "square", a), 6, square_e));
  {
    DBL(r6v, -1, 3, 7, NAN);
    I64S(s4, 4);
    DBL(r6e, 0, 3, 6, NAN);
    CHECK(vals_are(un(&x, "relu6", K(&x, MGOPT_DT_FP32, 1, s4, r6v)), 4, r6e));
  }
  /* integer abs / sign / square; exp on int32 is not MIL */
  {
    DBL(iv, -3, 0, 4);
    I64S(s3, 3);
    DBL(ia_e, 3, 0, 4);
    DBL(is_e, -1, 0, 1);
    mgopt_value *ia = K(&x, MGOPT_DT_INT32, 1, s3, iv);
    CHECK(vals_are(un(&x, "abs", ia), 3, ia_e));
    CHECK(vals_are(un(&x, "sign", ia), 3, is_e));
    CHECK(un(&x, "exp", ia) == NULL);
  }
  /* transcendental values from tables */
  t = un(&x, "exp", S(&x, MGOPT_DT_FP32, 1));
  CHECK(t && near(G(t, 0), 2.718281828));
  t = un(&x, "sqrt", S(&x, MGOPT_DT_FP32, 2));
  CHECK(t && G(t, 0) == (double)1.41421353816986083984375f);
  t = un(&x, "rsqrt", S(&x, MGOPT_DT_FP32, 4));
  CHECK(t && G(t, 0) == 0.5); /* 4 + 1e-12 rounds to 4 in fp32 */
  t = un(&x, "inverse", S(&x, MGOPT_DT_FP32, 4));
  CHECK(t && near(G(t, 0), 0.24999375015624609)); /* 1 / (4 + 1e-4) */
  t = un(&x, "erf", S(&x, MGOPT_DT_FP32, 0.5));
  CHECK(t && G(t, 0) == (double)(float)0.5204998778130465);
  t = un(&x, "tanh", S(&x, MGOPT_DT_FP32, 0.5));
  CHECK(t && near(G(t, 0), 0.46211715726));
  t = un(&x, "sigmoid", S(&x, MGOPT_DT_FP32, 0));
  CHECK(t && G(t, 0) == 0.5);
  t = un(&x, "silu", S(&x, MGOPT_DT_FP32, 2));
  CHECK(t && near(G(t, 0), 1.76159415596));
  t = un(&x, "softplus", S(&x, MGOPT_DT_FP32, 1));
  CHECK(t && near(G(t, 0), 1.31326168752));
  t = un(&x, "sin", S(&x, MGOPT_DT_FP32, 1));
  CHECK(t && near(G(t, 0), 0.8414709848));
  t = un(&x, "cos", S(&x, MGOPT_DT_FP32, 1));
  CHECK(t && near(G(t, 0), 0.5403023059));
  /* gelu, three modes, at x = 1 */
  t = un(&x, "gelu", S(&x, MGOPT_DT_FP32, 1));
  CHECK(t && G(t, 0) == (double)(float)0.8413447460685429);
  op = OP(&x, "gelu", 1, 1, "x", S(&x, MGOPT_DT_FP32, 1));
  mgopt_op_set_string(op, "mode", "TANH_APPROXIMATION");
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(G(x.out[0], 0) == (double)(float)0.8411919906082768);
  mgopt_op_set_string(op, "mode", "SIGMOID_APPROXIMATION");
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(near(G(x.out[0], 0), 0.8457957));
  mgopt_op_set_string(op, "mode", "CUBIC");
  CHECK(FOLD(&x, op) == 0);
  /* parameters */
  op = OP(&x, "leaky_relu", 1, 1, "x", a);
  mgopt_op_set_float(op, "alpha", 0.5);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, -1.25, -0.75, -0.25, 0.5, 1.5, 2.5);
    CHECK(vals_are(x.out[0], 6, e));
  }
  op = OP(&x, "clip", 1, 2, "x", a, "alpha", S(&x, MGOPT_DT_FP32, -1)); /* alpha as a const operand */
  mgopt_op_set_float(op, "beta", 1);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, -1, -1, -0.5, 0.5, 1, 1);
    CHECK(vals_are(x.out[0], 6, e));
  }
  /* clip without beta (required in MIL) is not folded */
  op = OP(&x, "clip", 1, 1, "x", a);
  mgopt_op_set_float(op, "alpha", 0);
  CHECK(FOLD(&x, op) == 0);
  op = OP(&x, "elu", 1, 1, "x", S(&x, MGOPT_DT_FP32, -1));
  mgopt_op_set_float(op, "alpha", 2);
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(near(G(x.out[0], 0), 2 * (0.36787944117 - 1)));
  /* identity copies any dtype */
  t = un(&x, "identity", S(&x, MGOPT_DT_INT64, 42));
  CHECK(t && t->dtype == MGOPT_DT_INT64 && G(t, 0) == 42);
  mgopt_program_destroy(x.p);
}

static void test_softmax_select(void) {
  fx x = fx_new();
  I64S(s23, 2, 3);
  DBL(v, 1, 2, 3, 0, 0, 0);
  mgopt_op *op;
  op = OP(&x, "softmax", 1, 1, "x", K(&x, MGOPT_DT_FP32, 2, s23, v));
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(near(G(x.out[0], 0), 0.09003057317));
  CHECK(near(G(x.out[0], 1), 0.24472847105));
  CHECK(near(G(x.out[0], 2), 0.66524095577));
  CHECK(near(G(x.out[0], 4), 1.0 / 3.0));
  mgopt_op_set_int(op, "axis", 0); /* along columns: softmax(1, 0), ... */
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(near(G(x.out[0], 0), 0.73105857863));
  CHECK(near(G(x.out[0], 3), 0.26894142137));
  mgopt_op_set_int(op, "axis", 2);
  CHECK(FOLD(&x, op) == 0);
  /* select: cond (2,1) bool, a (1,3), b scalar */
  {
    I64S(s21, 2, 1);
    I64S(s13, 1, 3);
    DBL(c, 1, 0);
    DBL(av, 1, 2, 3);
    DBL(e, 1, 2, 3, -1, -1, -1);
    op = OP(&x, "select", 1, 3, "cond", K(&x, MGOPT_DT_BOOL, 2, s21, c), "a", K(&x, MGOPT_DT_INT32, 2, s13, av),
            "b", S(&x, MGOPT_DT_INT32, -1));
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(x.out[0]->dtype == MGOPT_DT_INT32 && shape_is(x.out[0], 2, s23));
    CHECK(vals_are(x.out[0], 6, e));
  }
  mgopt_program_destroy(x.p);
}

/* ---------------------------------------------------------------- cast */

static mgopt_op *cast_op(fx *x, mgopt_value *v, const char *dt) {
  mgopt_op *op = OP(x, "cast", 1, 1, "x", v);
  if (op) mgopt_op_set_string(op, "dtype", dt);
  return op;
}

static void test_cast(void) {
  fx x = fx_new();
  I64S(s4, 4);
  DBL(v, -1.7, 2.9, -0.5, 255.9);
  mgopt_value *a = K(&x, MGOPT_DT_FP32, 1, s4, v);
  DBL(ti, -1, 2, 0, 255);
  REQUIRE(FOLD(&x, cast_op(&x, a, "int32")) == 1);
  CHECK(x.out[0]->dtype == MGOPT_DT_INT32 && vals_are(x.out[0], 4, ti));
  REQUIRE(FOLD(&x, cast_op(&x, a, "int16")) == 1);
  CHECK(x.out[0]->dtype == MGOPT_DT_INT16 && vals_are(x.out[0], 4, ti));
  /* -1.7 does not fit uint8 */
  CHECK(FOLD(&x, cast_op(&x, a, "uint8")) == 0);
  CHECK(FOLD(&x, cast_op(&x, S(&x, MGOPT_DT_FP32, 300), "int8")) == 0);
  CHECK(FOLD(&x, cast_op(&x, S(&x, MGOPT_DT_FP32, NAN), "int32")) == 0);
  /* an integer out of an integer dtype's range keeps its low bits (ONNX's Cast, numpy's astype) */
  REQUIRE(FOLD(&x, cast_op(&x, S(&x, MGOPT_DT_INT32, 70000), "int16")) == 1);
  CHECK(x.out[0]->dtype == MGOPT_DT_INT16 && G(x.out[0], 0) == 4464);
  REQUIRE(FOLD(&x, cast_op(&x, S(&x, MGOPT_DT_INT32, 200), "int8")) == 1);
  CHECK(G(x.out[0], 0) == -56);
  CHECK(FOLD(&x, cast_op(&x, S(&x, MGOPT_DT_FP32, 1), "string")) == 0);
  REQUIRE(FOLD(&x, cast_op(&x, S(&x, MGOPT_DT_INT32, -3), "int64")) == 1);
  CHECK(x.out[0]->dtype == MGOPT_DT_INT64 && G(x.out[0], 0) == -3);
  /* to bool: nonzero, NaN is true */
  {
    DBL(bv, 0, -0.0, 2, NAN);
    DBL(be, 0, 0, 1, 1);
    REQUIRE(FOLD(&x, cast_op(&x, K(&x, MGOPT_DT_FP32, 1, s4, bv), "bool")) == 1);
    CHECK(x.out[0]->dtype == MGOPT_DT_BOOL && vals_are(x.out[0], 4, be));
  }
  /* to fp16: rounding and overflow */
  {
    DBL(hv, 1.0 / 3.0, 65519, 65520, -2);
    REQUIRE(FOLD(&x, cast_op(&x, K(&x, MGOPT_DT_FP32, 1, s4, hv), "fp16")) == 1);
    CHECK(x.out[0]->dtype == MGOPT_DT_FP16);
    CHECK(H(x.out[0], 0) == 0x3555);
    CHECK(H(x.out[0], 1) == 0x7BFF);
    CHECK(H(x.out[0], 2) == 0x7C00);
    CHECK(H(x.out[0], 3) == 0xC000);
  }
  /* fp64 -> fp16 is rounded once: 1 + 2^-11 + 2^-40 is just above the tie */
  REQUIRE(FOLD(&x, cast_op(&x, S(&x, MGOPT_DT_FP64, 1.0 + ldexp(1, -11) + ldexp(1, -40)), "fp16")) == 1);
  CHECK(H(x.out[0], 0) == 0x3C01);
  /* int -> fp32 and bool -> fp32 */
  REQUIRE(FOLD(&x, cast_op(&x, S(&x, MGOPT_DT_INT32, 16777217), "fp32")) == 1);
  CHECK(G(x.out[0], 0) == 16777216.0);
  REQUIRE(FOLD(&x, cast_op(&x, S(&x, MGOPT_DT_BOOL, 1), "fp32")) == 1);
  CHECK(x.out[0]->dtype == MGOPT_DT_FP32 && G(x.out[0], 0) == 1);
  /* constexpr_cast fp16 -> fp32 */
  {
    static const uint16_t h[2] = {0x3555, 0xC000};
    I64S(s2, 2);
    mgopt_op *op = OP(&x, "constexpr_cast", 1, 1, "source_val", KB(&x, MGOPT_DT_FP16, 1, s2, h));
    mgopt_op_set_string(op, "output_dtype", "fp32");
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(x.out[0]->dtype == MGOPT_DT_FP32 && G(x.out[0], 0) == 0.333251953125 && G(x.out[0], 1) == -2);
  }
  mgopt_program_destroy(x.p);
}

/* ---------------------------------------------------------------- shape ops */

static mgopt_value *arange(fx *x, mgopt_dtype dt, int rank, const int64_t *shape) {
  double v[64];
  int i;
  for (i = 0; i < 64; i++) v[i] = i;
  return K(x, dt, rank, shape, v);
}

static void test_reshape_transpose(void) {
  fx x = fx_new();
  I64S(s234, 2, 3, 4);
  I64S(s25, 2, 50);
  mgopt_value *a = arange(&x, MGOPT_DT_FP32, 3, s234);
  mgopt_op *op;
  {
    /* shape as a constant operand: 0 copies the input dim, -1 takes the rest */
    I64S(e, 2, 6, 2);
    op = OP(&x, "reshape", 1, 2, "x", a, "shape", K(&x, MGOPT_DT_INT32, 1, ARR((const int64_t[]){3}), ARR((const double[]){0, -1, 2})));
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(shape_is(x.out[0], 3, e));
    CHECK(G(x.out[0], 23) == 23);
  }
  /* iOS17: 0 matches the input dim counted from the right, else 1 */
  {
    mgopt_tensor *big = mgopt_tensor_new(x.p, MGOPT_DT_INT8, 2, s25);
    mgopt_value *b = mgopt_build_const(x.p, x.f->body, NULL, NULL, big);
    I64S(e, 1, 1, 2, 50);
    op = OP(&x, "reshape", 1, 1, "x", b);
    mgopt_op_set_ints(op, "shape", ARR((const int64_t[]){1, 0, -1, 0}), 4);
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(shape_is(x.out[0], 4, e));
  }
  op = OP(&x, "reshape", 1, 1, "x", a);
  mgopt_op_set_ints(op, "shape", ARR((const int64_t[]){-1, -1}), 2);
  CHECK(FOLD(&x, op) == 0);
  mgopt_op_set_ints(op, "shape", ARR((const int64_t[]){5, -1}), 2);
  CHECK(FOLD(&x, op) == 0);
  mgopt_op_set_ints(op, "shape", ARR((const int64_t[]){25}), 1);
  CHECK(FOLD(&x, op) == 0);
  /* a reshape folds to a view: the result shares the input's bytes, both
     are marked borrowed, and a write through one leaves the other alone */
  {
    mgopt_tensor *in = mgopt_value_const(a), *v;
    float *w;
    I64S(e, 6, 4);
    op = OP(&x, "reshape", 1, 1, "x", a);
    mgopt_op_set_ints(op, "shape", ARR((const int64_t[]){6, 4}), 2);
    REQUIRE(FOLD(&x, op) == 1);
    v = x.out[0];
    CHECK(shape_is(v, 2, e));
    CHECK(v->data == in->data);
    CHECK(v->borrowed && in->borrowed);
    w = (float *)mgopt_tensor_data_mut(x.p, v);
    REQUIRE(w != NULL);
    CHECK(v->data != in->data && !v->borrowed);
    w[5] = -1.0f;
    CHECK(G(v, 5) == -1 && G(in, 5) == 5);
  }
  /* transpose with a negative axis: out[k][i][j] = a[i][j][k] */
  op = OP(&x, "transpose", 1, 1, "x", a);
  mgopt_op_set_ints(op, "perm", ARR((const int64_t[]){-1, 0, 1}), 3);
  REQUIRE(FOLD(&x, op) == 1);
  {
    I64S(e, 4, 2, 3);
    int i, j, kk, ok = 1;
    CHECK(shape_is(x.out[0], 3, e));
    for (i = 0; i < 2; i++)
      for (j = 0; j < 3; j++)
        for (kk = 0; kk < 4; kk++)
          if (G(x.out[0], kk * 6 + i * 3 + j) != i * 12 + j * 4 + kk) ok = 0;
    CHECK(ok);
  }
  mgopt_op_set_ints(op, "perm", ARR((const int64_t[]){0, 0, 1}), 3);
  CHECK(FOLD(&x, op) == 0);
  mgopt_op_set_ints(op, "perm", ARR((const int64_t[]){0, 1}), 2);
  CHECK(FOLD(&x, op) == 0);
  mgopt_op_set_ints(op, "perm", ARR((const int64_t[]){0, 1, 3}), 3);
  CHECK(FOLD(&x, op) == 0);
  mgopt_program_destroy(x.p);
}

static void test_expand_squeeze(void) {
  fx x = fx_new();
  I64S(s23, 2, 3);
  I64S(s2131, 2, 1, 3, 1);
  mgopt_value *a = arange(&x, MGOPT_DT_INT32, 2, s23), *b = arange(&x, MGOPT_DT_FP16, 4, s2131);
  mgopt_op *op = OP(&x, "expand_dims", 1, 1, "x", a);
  mgopt_op_set_ints(op, "axes", ARR((const int64_t[]){-1}), 1);
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(shape_is(x.out[0], 3, ARR((const int64_t[]){2, 3, 1})));
  CHECK(G(x.out[0], 5) == 5);
  mgopt_op_set_ints(op, "axes", ARR((const int64_t[]){0, -1}), 2);
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(shape_is(x.out[0], 4, ARR((const int64_t[]){1, 2, 3, 1})));
  mgopt_op_set_ints(op, "axes", ARR((const int64_t[]){-4}), 1);
  CHECK(FOLD(&x, op) == 0);
  mgopt_op_set_ints(op, "axes", ARR((const int64_t[]){1, 1}), 2);
  CHECK(FOLD(&x, op) == 0);
  op = OP(&x, "squeeze", 1, 1, "x", b);
  REQUIRE(FOLD(&x, op) == 1); /* all size-1 dims */
  CHECK(shape_is(x.out[0], 2, s23) && x.out[0]->dtype == MGOPT_DT_FP16);
  mgopt_op_set_ints(op, "axes", ARR((const int64_t[]){-1}), 1);
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(shape_is(x.out[0], 3, ARR((const int64_t[]){2, 1, 3})));
  mgopt_op_set_ints(op, "axes", ARR((const int64_t[]){0, -3}), 2); /* dim 0 is 2: kept */
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(shape_is(x.out[0], 3, ARR((const int64_t[]){2, 3, 1})));
  mgopt_op_set_ints(op, "axes", ARR((const int64_t[]){4}), 1);
  CHECK(FOLD(&x, op) == 0);
  mgopt_program_destroy(x.p);
}

static void test_concat_stack_split(void) {
  fx x = fx_new();
  I64S(s21, 2, 1);
  I64S(s22, 2, 2);
  I64S(s32, 3, 2);
  DBL(a, 1, 2);
  DBL(b, 3, 4, 5, 6);
  DBL(p, 1, 2, 3, 4, 5, 6);
  DBL(q, 7, 8, 9, 10, 11, 12);
  mgopt_value *vs[2];
  mgopt_op *op;
  vs[0] = K(&x, MGOPT_DT_FP32, 2, s21, a);
  vs[1] = K(&x, MGOPT_DT_FP32, 2, s22, b);
  op = OP(&x, "concat", 1, 0);
  REQUIRE(op && mgopt_op_set_operand_list(op, "values", vs, 2) == MGOPT_OK);
  mgopt_op_set_int(op, "axis", -1);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 1, 3, 4, 2, 5, 6);
    CHECK(shape_is(x.out[0], 2, ARR((const int64_t[]){2, 3})) && vals_are(x.out[0], 6, e));
  }
  mgopt_op_set_int(op, "axis", 0); /* dims 1 differ */
  CHECK(FOLD(&x, op) == 0);
  /* interleave (the example of MIL's concat) */
  vs[0] = K(&x, MGOPT_DT_INT32, 2, s32, p);
  vs[1] = K(&x, MGOPT_DT_INT32, 2, s32, q);
  op = OP(&x, "concat", 1, 0);
  mgopt_op_set_operand_list(op, "values", vs, 2);
  mgopt_op_set_int(op, "axis", 0);
  mgopt_op_set_bool(op, "interleave", 1);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 1, 2, 7, 8, 3, 4, 9, 10, 5, 6, 11, 12);
    CHECK(shape_is(x.out[0], 2, ARR((const int64_t[]){6, 2})) && vals_are(x.out[0], 12, e));
  }
  mgopt_op_remove_attr(op, "axis"); /* axis is required */
  CHECK(FOLD(&x, op) == 0);
  /* stack at a negative axis */
  op = OP(&x, "stack", 1, 0);
  mgopt_op_set_operand_list(op, "values", vs, 2);
  mgopt_op_set_int(op, "axis", -1);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11, 6, 12);
    CHECK(shape_is(x.out[0], 3, ARR((const int64_t[]){3, 2, 2})) && vals_are(x.out[0], 12, e));
  }
  mgopt_op_set_int(op, "axis", 0);
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(shape_is(x.out[0], 3, ARR((const int64_t[]){2, 3, 2})) && G(x.out[0], 6) == 7);
  /* split into two outputs along -1 */
  {
    I64S(s24, 2, 4);
    mgopt_value *c = arange(&x, MGOPT_DT_FP32, 2, s24);
    op = OP(&x, "split", 2, 1, "x", c);
    mgopt_op_set_int(op, "axis", -1);
    mgopt_op_set_int(op, "num_splits", 2);
    REQUIRE(FOLD(&x, op) == 1);
    {
      DBL(e0, 0, 1, 4, 5);
      DBL(e1, 2, 3, 6, 7);
      CHECK(shape_is(x.out[0], 2, s22) && vals_are(x.out[0], 4, e0));
      CHECK(shape_is(x.out[1], 2, s22) && vals_are(x.out[1], 4, e1));
    }
    mgopt_op_set_ints(op, "split_sizes", ARR((const int64_t[]){1, 3}), 2);
    REQUIRE(FOLD(&x, op) == 1);
    {
      DBL(e0, 0, 4);
      DBL(e1, 1, 2, 3, 5, 6, 7);
      CHECK(shape_is(x.out[0], 2, s21) && vals_are(x.out[0], 2, e0));
      CHECK(shape_is(x.out[1], 2, ARR((const int64_t[]){2, 3})) && vals_are(x.out[1], 6, e1));
    }
    mgopt_op_set_ints(op, "split_sizes", ARR((const int64_t[]){1, 2}), 2); /* sums to 3, not 4 */
    CHECK(FOLD(&x, op) == 0);
    op = OP(&x, "split", 3, 1, "x", c); /* 4 is not divisible by 3 */
    mgopt_op_set_int(op, "axis", 1);
    mgopt_op_set_int(op, "num_splits", 3);
    CHECK(FOLD(&x, op) == 0);
    CHECK(x.out[0] == NULL && x.out[1] == NULL);
  }
  mgopt_program_destroy(x.p);
}

static void test_slices(void) {
  fx x = fx_new();
  I64S(s10, 10);
  I64S(s34, 3, 4);
  mgopt_value *v = arange(&x, MGOPT_DT_INT32, 1, s10), *m = arange(&x, MGOPT_DT_FP32, 2, s34);
  mgopt_op *op;
  /* x[-3:] */
  op = OP(&x, "slice_by_index", 1, 1, "x", v);
  mgopt_op_set_ints(op, "begin", ARR((const int64_t[]){-3}), 1);
  mgopt_op_set_ints(op, "end", ARR((const int64_t[]){0}), 1);
  mgopt_op_set_ints(op, "end_mask", ARR((const int64_t[]){1}), 1);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 7, 8, 9);
    CHECK(vals_are(x.out[0], 3, e));
    /* one run of x: a view at element 7, not a copy */
    CHECK(x.out[0]->data == (int32_t *)mgopt_value_const(v)->data + 7 && x.out[0]->borrowed);
  }
  /* x[::-1] */
  mgopt_op_set_ints(op, "begin_mask", ARR((const int64_t[]){1}), 1);
  mgopt_op_set_ints(op, "stride", ARR((const int64_t[]){-1}), 1);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const int32_t *xd = (const int32_t *)mgopt_value_const(v)->data;
    const int32_t *od = (const int32_t *)x.out[0]->data;
    CHECK(vals_are(x.out[0], 10, e));
    CHECK(od + 10 <= xd || od >= xd + 10); /* reversed: a copy */
  }
  /* x[8:2:-2] and x[-2:-20:-3] (end clamps) */
  op = OP(&x, "slice_by_index", 1, 1, "x", v);
  mgopt_op_set_ints(op, "begin", ARR((const int64_t[]){8}), 1);
  mgopt_op_set_ints(op, "end", ARR((const int64_t[]){2}), 1);
  mgopt_op_set_ints(op, "stride", ARR((const int64_t[]){-2}), 1);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 8, 6, 4);
    CHECK(vals_are(x.out[0], 3, e));
  }
  mgopt_op_set_ints(op, "begin", ARR((const int64_t[]){-2}), 1);
  mgopt_op_set_ints(op, "end", ARR((const int64_t[]){-20}), 1);
  mgopt_op_set_ints(op, "stride", ARR((const int64_t[]){-3}), 1);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 8, 5, 2);
    CHECK(vals_are(x.out[0], 3, e));
  }
  mgopt_op_set_ints(op, "stride", ARR((const int64_t[]){0}), 1);
  CHECK(FOLD(&x, op) == 0);
  /* empty: x[5:2] */
  mgopt_op_set_ints(op, "begin", ARR((const int64_t[]){5}), 1);
  mgopt_op_set_ints(op, "end", ARR((const int64_t[]){2}), 1);
  mgopt_op_set_ints(op, "stride", ARR((const int64_t[]){1}), 1);
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(x.out[0]->rank == 1 && x.out[0]->shape[0] == 0);
  /* m[-1, 1:] with squeeze_mask on dim 0 -> shape (3,) */
  op = OP(&x, "slice_by_index", 1, 1, "x", m);
  mgopt_op_set_ints(op, "begin", ARR((const int64_t[]){-1, 1}), 2);
  mgopt_op_set_ints(op, "end", ARR((const int64_t[]){0, 4}), 2);
  mgopt_op_set_ints(op, "squeeze_mask", ARR((const int64_t[]){1, 0}), 2);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 9, 10, 11);
    CHECK(shape_is(x.out[0], 1, ARR((const int64_t[]){3})) && vals_are(x.out[0], 3, e));
    CHECK(x.out[0]->data == (float *)mgopt_value_const(m)->data + 9);
  }
  /* both squeezed: a scalar m[1, -2] */
  mgopt_op_set_ints(op, "begin", ARR((const int64_t[]){1, -2}), 2);
  mgopt_op_set_ints(op, "squeeze_mask", ARR((const int64_t[]){1, 1}), 2);
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(x.out[0]->rank == 0 && G(x.out[0], 0) == 6);
  mgopt_op_set_ints(op, "begin", ARR((const int64_t[]){3, 0}), 2); /* index out of range */
  CHECK(FOLD(&x, op) == 0);
  mgopt_op_set_ints(op, "begin", ARR((const int64_t[]){0}), 1); /* wrong length */
  CHECK(FOLD(&x, op) == 0);
  /* slice_by_size with a negative begin and size -1 */
  op = OP(&x, "slice_by_size", 1, 1, "x", m);
  mgopt_op_set_ints(op, "begin", ARR((const int64_t[]){1, -2}), 2);
  mgopt_op_set_ints(op, "size", ARR((const int64_t[]){-1, 2}), 2);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 6, 7, 10, 11);
    CHECK(shape_is(x.out[0], 2, ARR((const int64_t[]){2, 2})) && vals_are(x.out[0], 4, e));
  }
  mgopt_op_set_ints(op, "size", ARR((const int64_t[]){-1, 3}), 2); /* runs past the end */
  CHECK(FOLD(&x, op) == 0);
  /* whole rows m[1:3] are one run: a view; a write through it copies first
     and leaves m alone (and the other way round) */
  mgopt_op_set_ints(op, "begin", ARR((const int64_t[]){1, 0}), 2);
  mgopt_op_set_ints(op, "size", ARR((const int64_t[]){2, -1}), 2);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 4, 5, 6, 7, 8, 9, 10, 11);
    mgopt_tensor *in = mgopt_value_const(m), *out = x.out[0];
    float *w;
    CHECK(vals_are(out, 8, e));
    CHECK(out->data == (float *)in->data + 4 && out->borrowed && in->borrowed);
    w = (float *)mgopt_tensor_data_mut(x.p, out);
    REQUIRE(w != NULL);
    w[0] = -1.0f;
    CHECK(G(out, 0) == -1 && G(in, 4) == 4);
    w = (float *)mgopt_tensor_data_mut(x.p, in);
    REQUIRE(w != NULL);
    w[5] = -2.0f;
    CHECK(G(in, 5) == -2 && G(out, 1) == 5);
  }
  mgopt_program_destroy(x.p);
}

static void test_gather(void) {
  fx x = fx_new();
  I64S(s34, 3, 4);
  I64S(s2, 2);
  DBL(idx, -1, 0);
  mgopt_value *m = arange(&x, MGOPT_DT_FP32, 2, s34), *ind = K(&x, MGOPT_DT_INT32, 1, s2, idx);
  mgopt_op *op = OP(&x, "gather", 1, 2, "x", m, "indices", ind);
  REQUIRE(FOLD(&x, op) == 1); /* axis 0: rows 2, 0 */
  {
    DBL(e, 8, 9, 10, 11, 0, 1, 2, 3);
    CHECK(shape_is(x.out[0], 2, ARR((const int64_t[]){2, 4})) && vals_are(x.out[0], 8, e));
  }
  mgopt_op_set_int(op, "axis", -1); /* columns 3, 0 */
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 3, 0, 7, 4, 11, 8);
    CHECK(shape_is(x.out[0], 2, ARR((const int64_t[]){3, 2})) && vals_are(x.out[0], 6, e));
  }
  /* scalar index removes the axis */
  op = OP(&x, "gather", 1, 2, "x", m, "indices", S(&x, MGOPT_DT_INT32, 1));
  mgopt_op_set_int(op, "axis", 1);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 1, 5, 9);
    CHECK(shape_is(x.out[0], 1, ARR((const int64_t[]){3})) && vals_are(x.out[0], 3, e));
  }
  /* batch_dims = 1: out[b, i] = m[b, ind[b, i]] */
  {
    I64S(s32, 3, 2);
    DBL(bi, 0, 3, 1, -1, 2, 2);
    DBL(e, 0, 3, 5, 7, 10, 10);
    op = OP(&x, "gather", 1, 2, "x", m, "indices", K(&x, MGOPT_DT_INT16, 2, s32, bi));
    mgopt_op_set_int(op, "axis", 1);
    mgopt_op_set_int(op, "batch_dims", 1);
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(shape_is(x.out[0], 2, s32) && vals_are(x.out[0], 6, e));
  }
  /* out of range indices are not folded */
  {
    DBL(bad, 4, 0);
    op = OP(&x, "gather", 1, 2, "x", m, "indices", K(&x, MGOPT_DT_INT32, 1, s2, bad));
    mgopt_op_set_int(op, "axis", 1);
    CHECK(FOLD(&x, op) == 0);
    mgopt_op_set_int(op, "axis", 0);
    CHECK(FOLD(&x, op) == 0);
    mgopt_op_set_int(op, "axis", 2);
    CHECK(FOLD(&x, op) == 0);
  }
  /* float indices are not indices */
  CHECK(FOLD(&x, OP(&x, "gather", 1, 2, "x", m, "indices", S(&x, MGOPT_DT_FP32, 0))) == 0);
  mgopt_program_destroy(x.p);
}

static void test_reduce_arg(void) {
  fx x = fx_new();
  I64S(s23, 2, 3);
  I64S(s20, 2, 0);
  I64S(s3, 3);
  DBL(v, 4, -1, 4, 2, 2, 9);
  mgopt_value *m = K(&x, MGOPT_DT_FP16, 2, s23, v);
  mgopt_op *op = OP(&x, "reduce_argmax", 1, 1, "x", m);
  mgopt_diag d;
  REQUIRE(FOLD(&x, op) == 1); /* axis -1, ties to the first */
  {
    DBL(e, 0, 2);
    CHECK(x.out[0]->dtype == MGOPT_DT_INT32 && shape_is(x.out[0], 1, ARR((const int64_t[]){2})) &&
          vals_are(x.out[0], 2, e));
  }
  op = OP(&x, "reduce_argmin", 1, 1, "x", m);
  mgopt_op_set_int(op, "axis", -2);
  mgopt_op_set_bool(op, "keep_dims", 1);
  mgopt_op_set_string(op, "output_dtype", "int64");
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 1, 0, 0);
    CHECK(x.out[0]->dtype == MGOPT_DT_INT64 && shape_is(x.out[0], 2, ARR((const int64_t[]){1, 3})) &&
          vals_are(x.out[0], 3, e));
  }
  /* int64 extremes compare exactly; uint8 in its lane */
  {
    mgopt_tensor *t = mgopt_tensor_new(x.p, MGOPT_DT_INT64, 1, s3);
    int64_t iv[3] = {INT64_MIN, INT64_MAX, INT64_MAX - 1};
    memcpy(t->data, iv, sizeof iv);
    op = OP(&x, "reduce_argmin", 1, 1, "x", mgopt_build_const(x.p, x.f->body, NULL, NULL, t));
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(G(x.out[0], 0) == 0);
    op = OP(&x, "reduce_argmax", 1, 1, "x", mgopt_build_const(x.p, x.f->body, NULL, NULL, t));
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(G(x.out[0], 0) == 1);
  }
  /* an empty reduced axis is not folded; an empty kept axis is */
  op = OP(&x, "reduce_argmax", 1, 1, "x", K(&x, MGOPT_DT_FP32, 2, s20, v));
  CHECK(FOLD(&x, op) == 0);
  mgopt_op_set_int(op, "axis", 1);
  CHECK(FOLD(&x, op) == 0);
  mgopt_op_set_int(op, "axis", 0);
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(x.out[0]->numel == 0);
  /* bool and string inputs, axis out of range, an unknown index type: type errors, not folded */
  op = OP(&x, "reduce_argmax", 1, 1, "x", m);
  mgopt_op_set_int(op, "axis", 2);
  CHECK(mgopt_op_infer(x.p, op, &d) == MGOPT_ERR_TYPE);
  CHECK(FOLD(&x, op) == 0);
  mgopt_op_set_int(op, "axis", 0);
  mgopt_op_set_string(op, "output_dtype", "fp32");
  CHECK(mgopt_op_infer(x.p, op, &d) == MGOPT_ERR_TYPE);
  CHECK(FOLD(&x, op) == 0);
  op = OP(&x, "reduce_argmax", 1, 1, "x", K(&x, MGOPT_DT_BOOL, 1, s3, v));
  CHECK(mgopt_op_infer(x.p, op, &d) == MGOPT_ERR_TYPE);
  CHECK(FOLD(&x, op) == 0);
  mgopt_program_destroy(x.p);
}

/* reduce_l1_norm .. reduce_sum_square: float inputs summed in double, rounded
   once; checked against the same formula computed here in double. */
static void test_reduce_norms(void) {
  fx x = fx_new();
  I64S(s3, 3);
  DBL(v, 0.1, -0.2, 0.3);
  DBL(big, 100, 100, 80);
  static const char *const kinds[] = {"reduce_l1_norm", "reduce_l2_norm", "reduce_log_sum", "reduce_log_sum_exp",
                                      "reduce_sum_square"};
  mgopt_value *m = K(&x, MGOPT_DT_FP32, 1, s3, v), *h = K(&x, MGOPT_DT_FP16, 1, s3, big);
  double f[3], l1 = 0, sq = 0, sum = 0, se = 0, mx, e[5];
  int i;
  for (i = 0; i < 3; i++) {
    f[i] = (double)(float)v[i];
    l1 += fabs(f[i]);
    sq += f[i] * f[i];
    sum += f[i];
  }
  mx = f[2];
  for (i = 0; i < 3; i++) se += exp(f[i] - mx);
  e[0] = (float)l1;
  e[1] = (float)sqrt(sq);
  e[2] = (float)log(sum);
  e[3] = (float)(mx + log(se));
  e[4] = (float)sq;
  for (i = 0; i < 5; i++) {
    mgopt_op *op = OP(&x, kinds[i], 1, 1, "x", m);
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(x.out[0]->dtype == MGOPT_DT_FP32 && x.out[0]->rank == 0 && G(x.out[0], 0) == e[i]);
  }
  /* fp16: 100^2 + 100^2 + 80^2 = 26400; log_sum_exp of 100, 100, 80 does not
     overflow although exp(100) does in fp16 and fp32; rounded once to fp16 */
  {
    mgopt_op *op = OP(&x, "reduce_sum_square", 1, 1, "x", h);
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(G(x.out[0], 0) == mgopt_f16_to_f32(mgopt_f32_to_f16(26400.0f)));
    op = OP(&x, "reduce_log_sum_exp", 1, 1, "x", h);
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(G(x.out[0], 0) == mgopt_f16_to_f32(mgopt_f32_to_f16((float)(100.0 + log(2.0 + exp(-20.0))))));
  }
  mgopt_program_destroy(x.p);
}

static void test_cumsum(void) {
  fx x = fx_new();
  I64S(s23, 2, 3);
  I64S(s20, 2, 0);
  I64S(s3, 3);
  DBL(v, 1, 2, 3, 4, 5, 6);
  mgopt_value *m = K(&x, MGOPT_DT_FP16, 2, s23, v);
  mgopt_op *op = OP(&x, "cumsum", 1, 1, "x", m);
  mgopt_diag d;
  mgopt_op_set_int(op, "axis", -1);
  mgopt_op_set_bool(op, "reverse", 1);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 6, 5, 3, 15, 11, 6);
    CHECK(x.out[0]->dtype == MGOPT_DT_FP16 && shape_is(x.out[0], 2, s23) && vals_are(x.out[0], 6, e));
  }
  mgopt_op_set_bool(op, "exclusive", 1);
  mgopt_op_set_int(op, "axis", 0);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 4, 5, 6, 0, 0, 0);
    CHECK(vals_are(x.out[0], 6, e));
  }
  /* fp16 sums in float, rounded once per output: 2048 + 1 + 1 is 2050, not 2048 */
  {
    DBL(h, 2048, 1, 1);
    DBL(e, 2048, 2048, 2050);
    op = OP(&x, "cumsum", 1, 1, "x", K(&x, MGOPT_DT_FP16, 1, s3, h));
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(vals_are(x.out[0], 3, e));
  }
  /* int64 wraps around */
  {
    mgopt_tensor *t = mgopt_tensor_new(x.p, MGOPT_DT_INT64, 1, s3);
    int64_t iv[3] = {INT64_MAX, 1, -1};
    memcpy(t->data, iv, sizeof iv);
    op = OP(&x, "cumsum", 1, 1, "x", mgopt_build_const(x.p, x.f->body, NULL, NULL, t));
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(((const int64_t *)x.out[0]->data)[1] == INT64_MIN && ((const int64_t *)x.out[0]->data)[2] == INT64_MAX);
  }
  /* empty tensors fold to empty tensors */
  op = OP(&x, "cumsum", 1, 1, "x", K(&x, MGOPT_DT_FP32, 2, s20, v));
  mgopt_op_set_int(op, "axis", 1);
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(shape_is(x.out[0], 2, s20));
  /* axis out of range and bool input: type errors, not folded */
  mgopt_op_set_int(op, "axis", 2);
  CHECK(mgopt_op_infer(x.p, op, &d) == MGOPT_ERR_TYPE);
  CHECK(FOLD(&x, op) == 0);
  op = OP(&x, "cumsum", 1, 1, "x", K(&x, MGOPT_DT_BOOL, 1, s3, v));
  CHECK(mgopt_op_infer(x.p, op, &d) == MGOPT_ERR_TYPE);
  CHECK(FOLD(&x, op) == 0);
  mgopt_program_destroy(x.p);
}

static void test_gather_along_axis(void) {
  fx x = fx_new();
  I64S(s23, 2, 3);
  I64S(s13, 1, 3);
  I64S(s03, 0, 3);
  I64S(s22, 2, 2);
  DBL(iv, -1, 0, 1);
  mgopt_value *m = arange(&x, MGOPT_DT_INT64, 2, s23);
  mgopt_op *op = OP(&x, "gather_along_axis", 1, 2, "x", m, "indices", K(&x, MGOPT_DT_INT32, 2, s13, iv));
  mgopt_diag d;
  REQUIRE(FOLD(&x, op) == 1); /* axis 0: rows -1, 0, 1 of columns 0, 1, 2 */
  {
    DBL(e, 3, 1, 5);
    CHECK(x.out[0]->dtype == MGOPT_DT_INT64 && shape_is(x.out[0], 2, s13) && vals_are(x.out[0], 3, e));
  }
  /* an empty index tensor gives an empty result */
  op = OP(&x, "gather_along_axis", 1, 2, "x", m, "indices", K(&x, MGOPT_DT_INT64, 2, s03, iv));
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(shape_is(x.out[0], 2, s03));
  /* indices out of range, off-axis dims that differ (ONNX allows smaller ones), rank mismatch: not folded */
  {
    DBL(bad, 2, 0, 0);
    op = OP(&x, "gather_along_axis", 1, 2, "x", m, "indices", K(&x, MGOPT_DT_INT32, 2, s13, bad));
    CHECK(FOLD(&x, op) == 0);
    DBL(iv4, -1, 0, 1, 0);
    op = OP(&x, "gather_along_axis", 1, 2, "x", m, "indices", K(&x, MGOPT_DT_INT32, 2, s22, iv4));
    CHECK(FOLD(&x, op) == 0);
    CHECK(mgopt_op_infer(x.p, op, &d) == MGOPT_ERR_TYPE);
    op = OP(&x, "gather_along_axis", 1, 2, "x", m, "indices", K(&x, MGOPT_DT_INT32, 1, s13 + 1, iv));
    CHECK(FOLD(&x, op) == 0);
    CHECK(mgopt_op_infer(x.p, op, &d) == MGOPT_ERR_TYPE);
  }
  mgopt_program_destroy(x.p);
}

static void test_tile_pad_onehot(void) {
  fx x = fx_new();
  I64S(s12, 1, 2);
  I64S(s3, 3);
  DBL(a, 1, 2);
  DBL(v3, 1, 2, 3);
  mgopt_value *t12 = K(&x, MGOPT_DT_FP32, 2, s12, a), *x3 = K(&x, MGOPT_DT_FP32, 1, s3, v3);
  mgopt_op *op = OP(&x, "tile", 1, 1, "x", t12);
  mgopt_op_set_ints(op, "reps", ARR((const int64_t[]){2, 3}), 2);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2);
    CHECK(shape_is(x.out[0], 2, ARR((const int64_t[]){2, 6})) && vals_are(x.out[0], 12, e));
  }
  mgopt_op_set_ints(op, "reps", ARR((const int64_t[]){2}), 1);
  CHECK(FOLD(&x, op) == 0);
  /* pad [2, 1] in three modes */
  op = OP(&x, "pad", 1, 1, "x", x3);
  mgopt_op_set_ints(op, "pad", ARR((const int64_t[]){2, 1}), 2);
  mgopt_op_set_float(op, "constant_val", 9);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 9, 9, 1, 2, 3, 9);
    CHECK(vals_are(x.out[0], 6, e));
  }
  mgopt_op_set_string(op, "mode", "reflect");
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 3, 2, 1, 2, 3, 2);
    CHECK(vals_are(x.out[0], 6, e));
  }
  mgopt_op_set_string(op, "mode", "replicate");
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 1, 1, 1, 2, 3, 3);
    CHECK(vals_are(x.out[0], 6, e));
  }
  mgopt_op_set_string(op, "mode", "reflect");
  mgopt_op_set_ints(op, "pad", ARR((const int64_t[]){3, 0}), 2); /* reflect needs pad < dim */
  CHECK(FOLD(&x, op) == 0);
  mgopt_op_set_string(op, "mode", "wrap");
  CHECK(FOLD(&x, op) == 0);
  /* pad only the last dim of a (2,2) */
  {
    I64S(s22, 2, 2);
    DBL(b, 1, 2, 3, 4);
    DBL(e, 0, 1, 2, 0, 3, 4);
    op = OP(&x, "pad", 1, 1, "x", K(&x, MGOPT_DT_FP16, 2, s22, b));
    mgopt_op_set_ints(op, "pad", ARR((const int64_t[]){1, 0}), 2);
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(shape_is(x.out[0], 2, ARR((const int64_t[]){2, 3})) && vals_are(x.out[0], 6, e));
  }
  /* one_hot */
  {
    I64S(s2, 2);
    DBL(ind, 0, 2);
    DBL(e, 1, 0, 0, 0, 0, 1);
    DBL(e0, 1, 0, 0, 0, 0, 1);
    op = OP(&x, "one_hot", 1, 1, "indices", K(&x, MGOPT_DT_INT32, 1, s2, ind));
    mgopt_op_set_int(op, "one_hot_vector_size", 3);
    mgopt_op_set_int(op, "on_value", 1);
    mgopt_op_set_int(op, "off_value", 0);
    REQUIRE(FOLD(&x, op) == 1); /* integer on/off values give int32 */
    CHECK(x.out[0]->dtype == MGOPT_DT_INT32 && shape_is(x.out[0], 2, ARR((const int64_t[]){2, 3})));
    CHECK(vals_are(x.out[0], 6, e));
    mgopt_op_set_int(op, "axis", 0);
    mgopt_op_set_float(op, "on_value", 5);
    mgopt_op_set_float(op, "off_value", -1);
    REQUIRE(FOLD(&x, op) == 1);
    {
      DBL(e2, 5, -1, -1, -1, -1, 5);
      CHECK(x.out[0]->dtype == MGOPT_DT_FP32 && shape_is(x.out[0], 2, ARR((const int64_t[]){3, 2})));
      CHECK(vals_are(x.out[0], 6, e2));
    }
    mgopt_op_set_int(op, "one_hot_vector_size", 2); /* index 2 is out of range */
    CHECK(FOLD(&x, op) == 0);
    (void)e0;
  }
  mgopt_program_destroy(x.p);
}

/* ---------------------------------------------------------------- reductions and matmul */

static void test_reduce(void) {
  fx x = fx_new();
  I64S(s23, 2, 3);
  DBL(v, 1, 2, 3, 4, 5, 6);
  mgopt_value *a = K(&x, MGOPT_DT_FP32, 2, s23, v), *ia = K(&x, MGOPT_DT_INT32, 2, s23, v);
  mgopt_op *op = OP(&x, "reduce_sum", 1, 1, "x", a);
  mgopt_op_set_ints(op, "axes", ARR((const int64_t[]){-1}), 1);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 6, 15);
    CHECK(shape_is(x.out[0], 1, ARR((const int64_t[]){2})) && vals_are(x.out[0], 2, e));
  }
  mgopt_op_set_bool(op, "keep_dims", 1);
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(shape_is(x.out[0], 2, ARR((const int64_t[]){2, 1})));
  op = OP(&x, "reduce_mean", 1, 1, "x", a);
  mgopt_op_set_ints(op, "axes", ARR((const int64_t[]){0}), 1);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 2.5, 3.5, 4.5);
    CHECK(vals_are(x.out[0], 3, e));
  }
  op = OP(&x, "reduce_max", 1, 1, "x", a); /* all axes */
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(x.out[0]->rank == 0 && G(x.out[0], 0) == 6);
  op = OP(&x, "reduce_min", 1, 1, "x", a);
  mgopt_op_set_ints(op, "axes", ARR((const int64_t[]){1, -1}), 2); /* duplicate axis */
  CHECK(FOLD(&x, op) == 0);
  op = OP(&x, "reduce_prod", 1, 1, "x", ia);
  mgopt_op_set_ints(op, "axes", ARR((const int64_t[]){0}), 1);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 4, 10, 18);
    CHECK(x.out[0]->dtype == MGOPT_DT_INT32 && vals_are(x.out[0], 3, e));
  }
  CHECK(FOLD(&x, OP(&x, "reduce_mean", 1, 1, "x", ia)) == 0);
  /* fp32 accumulation in index order: 2^24 + 1 + 1 stays 2^24 */
  {
    DBL(w, 16777216, 1, 1);
    REQUIRE(FOLD(&x, OP(&x, "reduce_sum", 1, 1, "x", K(&x, MGOPT_DT_FP32, 1, ARR((const int64_t[]){3}), w))) == 1);
    CHECK(G(x.out[0], 0) == 16777216.0);
  }
  mgopt_program_destroy(x.p);
}

static void test_matmul_linear(void) {
  fx x = fx_new();
  I64S(s23, 2, 3);
  I64S(s32, 3, 2);
  I64S(s223, 2, 2, 3);
  DBL(a, 1, 2, 3, 4, 5, 6);
  DBL(b, 7, 8, 9, 10, 11, 12);
  DBL(ab, 58, 64, 139, 154);
  mgopt_value *A = K(&x, MGOPT_DT_FP32, 2, s23, a), *B = K(&x, MGOPT_DT_FP32, 2, s32, b);
  mgopt_op *op = OP(&x, "matmul", 1, 2, "x", A, "y", B);
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(shape_is(x.out[0], 2, ARR((const int64_t[]){2, 2})) && vals_are(x.out[0], 4, ab));
  /* A^T A with transpose_x: (3,2)^T... use A as both with transpose_y: A A^T = [[14, 32], [32, 77]] */
  op = OP(&x, "matmul", 1, 2, "x", A, "y", A);
  mgopt_op_set_bool(op, "transpose_y", 1);
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 14, 32, 32, 77);
    CHECK(vals_are(x.out[0], 4, e));
  }
  mgopt_op_set_bool(op, "transpose_y", 0);
  mgopt_op_set_bool(op, "transpose_x", 1); /* A^T A: (3,3) */
  REQUIRE(FOLD(&x, op) == 1);
  {
    DBL(e, 17, 22, 27, 22, 29, 36, 27, 36, 45);
    CHECK(shape_is(x.out[0], 2, ARR((const int64_t[]){3, 3})) && vals_are(x.out[0], 9, e));
  }
  mgopt_op_set_bool(op, "transpose_x", 0);
  CHECK(FOLD(&x, op) == 0); /* (2,3) x (2,3) */
  /* batch broadcast: (2,2,3) x (3,2) */
  {
    DBL(c, 1, 2, 3, 4, 5, 6, 0, 0, 1, 1, 0, 0);
    op = OP(&x, "matmul", 1, 2, "x", K(&x, MGOPT_DT_FP32, 3, s223, c), "y", B);
    REQUIRE(FOLD(&x, op) == 1);
    {
      DBL(e, 58, 64, 139, 154, 11, 12, 7, 8);
      CHECK(shape_is(x.out[0], 3, ARR((const int64_t[]){2, 2, 2})) && vals_are(x.out[0], 8, e));
    }
  }
  /* rank-1 x: (3) x (3,2) -> (2) */
  {
    DBL(r, 1, 0, -1);
    op = OP(&x, "matmul", 1, 2, "x", K(&x, MGOPT_DT_FP32, 1, ARR((const int64_t[]){3}), r), "y", B);
    REQUIRE(FOLD(&x, op) == 1);
    {
      DBL(e, -4, -4);
      CHECK(shape_is(x.out[0], 1, ARR((const int64_t[]){2})) && vals_are(x.out[0], 2, e));
    }
  }
  /* linear: x (2,3), weight (2,3) -> x W^T + bias */
  {
    DBL(bias, 0.5, -1);
    op = OP(&x, "linear", 1, 3, "x", A, "weight", A, "bias", K(&x, MGOPT_DT_FP32, 1, ARR((const int64_t[]){2}), bias));
    REQUIRE(FOLD(&x, op) == 1);
    {
      DBL(e, 14.5, 31, 32.5, 76);
      CHECK(vals_are(x.out[0], 4, e));
    }
    op = OP(&x, "linear", 1, 2, "x", A, "weight", B); /* weight (3,2): K mismatch */
    CHECK(FOLD(&x, op) == 0);
  }
  mgopt_program_destroy(x.p);
}

/* ---------------------------------------------------------------- constexpr and quantization */

static void test_lut_to_dense(void) {
  fx x = fx_new();
  mgopt_op *op;
  /* iOS16: uint2 indices packed LSB first: i0=0, i1=3, i2=2, i3=1 | i4=3 */
  {
    static const uint8_t packed[2] = {0x6C, 0x03};
    DBL(lut, 10, 20, 30, 40);
    DBL(e, 10, 40, 30, 20, 40);
    op = OP(&x, "constexpr_lut_to_dense", 1, 2, "indices", KB(&x, MGOPT_DT_UINT8, 1, ARR((const int64_t[]){2}), packed),
            "lut", K(&x, MGOPT_DT_FP32, 1, ARR((const int64_t[]){4}), lut));
    mgopt_op_set_ints(op, "shape", ARR((const int64_t[]){5}), 1);
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(shape_is(x.out[0], 1, ARR((const int64_t[]){5})) && vals_are(x.out[0], 5, e));
    mgopt_op_set_ints(op, "shape", ARR((const int64_t[]){9}), 1); /* needs 3 bytes */
    CHECK(FOLD(&x, op) == 0);
  }
  /* iOS18: uint4 tensor (2,2) = [[1, 15], [0, 7]] -> bytes 0xF1 0x70; one palette of 16 */
  {
    static const uint8_t packed[2] = {0xF1, 0x70};
    double lut[16];
    int i;
    DBL(e, 2, 30, 0, 14);
    for (i = 0; i < 16; i++) lut[i] = 2 * i;
    op = OP(&x, "constexpr_lut_to_dense", 1, 2, "indices", KB(&x, MGOPT_DT_UINT4, 2, ARR((const int64_t[]){2, 2}), packed),
            "lut", K(&x, MGOPT_DT_INT8, 4, ARR((const int64_t[]){1, 1, 16, 1}), lut));
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(x.out[0]->dtype == MGOPT_DT_INT8 && shape_is(x.out[0], 2, ARR((const int64_t[]){2, 2})));
    CHECK(vals_are(x.out[0], 4, e));
  }
  /* iOS18 per-group: uint2 (6,2), lut (2,1,4,1): rows 0-2 use lut0, rows 3-5 lut1 */
  {
    /* indices 2,3,3,0 | 1,0,3,0 | 2,1,0,3 packed 2 bits LSB first */
    static const uint8_t packed[3] = {0x3E, 0x31, 0xC6};
    DBL(lut, 1, 5, 9, 13, 2, 10, 18, 26);
    DBL(e, 9, 13, 13, 1, 5, 1, 26, 2, 18, 10, 2, 26);
    op = OP(&x, "constexpr_lut_to_dense", 1, 2, "indices", KB(&x, MGOPT_DT_UINT2, 2, ARR((const int64_t[]){6, 2}), packed),
            "lut", K(&x, MGOPT_DT_FP16, 4, ARR((const int64_t[]){2, 1, 4, 1}), lut));
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(x.out[0]->dtype == MGOPT_DT_FP16 && vals_are(x.out[0], 12, e));
  }
  /* iOS18 vector palettization: uint1 (2,2,2) = [[0,0],[1,0]],[[1,1],[0,0]], VS 3 along axis 2 */
  {
    static const uint8_t packed[1] = {0x34}; /* bits: 0,0,1,0,1,1,0,0 */
    DBL(lut, 1, 2, 3, 4, 5, 6); /* a = (1,2,3), b = (4,5,6) */
    DBL(e, 1, 2, 3, 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3, 1, 2, 3);
    DBL(e1, 1, 1, 2, 2, 3, 3, 4, 1, 5, 2, 6, 3, 4, 4, 5, 5, 6, 6, 1, 1, 2, 2, 3, 3);
    mgopt_value *iv = KB(&x, MGOPT_DT_UINT1, 3, ARR((const int64_t[]){2, 2, 2}), packed);
    mgopt_value *lv = K(&x, MGOPT_DT_FP32, 5, ARR((const int64_t[]){1, 1, 1, 2, 3}), lut);
    op = OP(&x, "constexpr_lut_to_dense", 1, 2, "indices", iv, "lut", lv);
    CHECK(FOLD(&x, op) == 0); /* vector_axis is required when VS > 1 */
    mgopt_op_set_int(op, "vector_axis", -1);
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(shape_is(x.out[0], 3, ARR((const int64_t[]){2, 2, 6})) && vals_are(x.out[0], 24, e));
    mgopt_op_set_int(op, "vector_axis", 1);
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(shape_is(x.out[0], 3, ARR((const int64_t[]){2, 6, 2})) && vals_are(x.out[0], 24, e1));
  }
  mgopt_program_destroy(x.p);
}

static void test_sparse_and_quant(void) {
  fx x = fx_new();
  mgopt_op *op;
  /* iOS16 sparse: shape (5,), mask 0b00001100 -> elements 2, 3 set */
  {
    static const uint8_t mask[1] = {0x0C};
    static const uint8_t bad[1] = {0x8C}; /* a padding bit set */
    DBL(nz, 7, 8);
    DBL(e, 0, 0, 7, 8, 0);
    mgopt_value *nzv = K(&x, MGOPT_DT_FP16, 1, ARR((const int64_t[]){2}), nz);
    op = OP(&x, "constexpr_sparse_to_dense", 1, 2, "nonzero_data", nzv, "mask",
            KB(&x, MGOPT_DT_UINT8, 1, ARR((const int64_t[]){1}), mask));
    mgopt_op_set_ints(op, "shape", ARR((const int64_t[]){5}), 1);
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(x.out[0]->dtype == MGOPT_DT_FP16 && vals_are(x.out[0], 5, e));
    op = OP(&x, "constexpr_sparse_to_dense", 1, 2, "nonzero_data", nzv, "mask",
            KB(&x, MGOPT_DT_UINT8, 1, ARR((const int64_t[]){1}), bad));
    mgopt_op_set_ints(op, "shape", ARR((const int64_t[]){5}), 1);
    CHECK(FOLD(&x, op) == 0);
  }
  /* iOS18 sparse: uint1 mask (2,3) = [[1,0,0],[0,1,1]], int4 data */
  {
    static const uint8_t mask[1] = {0x31};
    static const uint8_t nz4[2] = {0xF3, 0x08}; /* int4: 3, -1, -8 */
    DBL(e, 3, 0, 0, 0, -1, -8);
    op = OP(&x, "constexpr_sparse_to_dense", 1, 2, "nonzero_data", KB(&x, MGOPT_DT_INT4, 1, ARR((const int64_t[]){3}), nz4),
            "mask", KB(&x, MGOPT_DT_UINT1, 2, ARR((const int64_t[]){2, 3}), mask));
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(x.out[0]->dtype == MGOPT_DT_INT4 && shape_is(x.out[0], 2, ARR((const int64_t[]){2, 3})));
    CHECK(vals_are(x.out[0], 6, e));
    op = OP(&x, "constexpr_sparse_to_dense", 1, 2, "nonzero_data", K(&x, MGOPT_DT_FP32, 1, ARR((const int64_t[]){2}), e),
            "mask", KB(&x, MGOPT_DT_UINT1, 2, ARR((const int64_t[]){2, 3}), mask)); /* 3 bits, 2 values */
    CHECK(FOLD(&x, op) == 0);
  }
  /* affine dequantize: per-row zero point, scalar scale */
  {
    DBL(q, 0, 10, 255, 128);
    DBL(zp, 5, 128);
    op = OP(&x, "constexpr_affine_dequantize", 1, 3, "quantized_data",
            K(&x, MGOPT_DT_UINT8, 2, ARR((const int64_t[]){2, 2}), q), "zero_point",
            K(&x, MGOPT_DT_UINT8, 1, ARR((const int64_t[]){2}), zp), "scale", S(&x, MGOPT_DT_FP16, 0.05));
    CHECK(FOLD(&x, op) == 0); /* axis is required */
    mgopt_op_set_int(op, "axis", 0);
    REQUIRE(FOLD(&x, op) == 1);
    /* fp16(0.05) = 1638 / 32768; (0 - 5) * it = -0.24993896484375 is an fp16 tie
       between -0.25 (even) and its neighbour; 127 * it = 6.3484497... -> 6.34765625 */
    CHECK(x.out[0]->dtype == MGOPT_DT_FP16);
    CHECK(H(x.out[0], 0) == 0xB400 && H(x.out[0], 1) == 0x3400);
    CHECK(G(x.out[0], 2) == 6.34765625 && H(x.out[0], 3) == 0);
  }
  /* blockwise shift scale: int4 data (2,4), scale (2,2) -> blocks of 2 along axis 1 */
  {
    static const uint8_t d4[4] = {0x21, 0x43, 0xFF, 0x08}; /* 1,2,3,4 | -1,-1,-8,0 */
    static const uint8_t o4[2] = {0x01, 0x1F};             /* offsets 1,0 | -1,1 */
    DBL(sc, 1, 0.5, 2, 4);
    DBL(e, 0, 1, 1.5, 2, 0, 0, -36, -4);
    op = OP(&x, "constexpr_blockwise_shift_scale", 1, 3, "data", KB(&x, MGOPT_DT_INT4, 2, ARR((const int64_t[]){2, 4}), d4),
            "scale", K(&x, MGOPT_DT_FP32, 2, ARR((const int64_t[]){2, 2}), sc), "offset",
            KB(&x, MGOPT_DT_INT4, 2, ARR((const int64_t[]){2, 2}), o4));
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(x.out[0]->dtype == MGOPT_DT_FP32 && vals_are(x.out[0], 8, e));
    op = OP(&x, "constexpr_blockwise_shift_scale", 1, 2, "data", KB(&x, MGOPT_DT_INT4, 2, ARR((const int64_t[]){2, 4}), d4),
            "scale", K(&x, MGOPT_DT_FP32, 2, ARR((const int64_t[]){2, 3}), e)); /* 4 % 3 != 0 */
    CHECK(FOLD(&x, op) == 0);
  }
  /* quantize: round half to even, add zero point, clip */
  {
    DBL(v, 0.25, 0.75, 100, -100);
    DBL(e, 1, 3, 127, -128);
    mgopt_value *xv = K(&x, MGOPT_DT_FP32, 1, ARR((const int64_t[]){4}), v);
    op = OP(&x, "quantize", 1, 3, "input", xv, "scale", S(&x, MGOPT_DT_FP32, 0.5), "zero_point", S(&x, MGOPT_DT_INT8, 1));
    mgopt_op_set_string(op, "output_dtype", "int8");
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(x.out[0]->dtype == MGOPT_DT_INT8 && vals_are(x.out[0], 4, e));
    mgopt_op_set_string(op, "output_dtype", "uint8"); /* zero point dtype must match */
    CHECK(FOLD(&x, op) == 0);
  }
  /* dequantize with per-channel scale along axis 1, no zero point */
  {
    DBL(q, 1, 2, -3, 4);
    DBL(sc, 0.5, 2);
    DBL(e, 0.5, 4, -1.5, 8);
    op = OP(&x, "dequantize", 1, 2, "input", K(&x, MGOPT_DT_INT8, 2, ARR((const int64_t[]){2, 2}), q), "scale",
            K(&x, MGOPT_DT_FP32, 1, ARR((const int64_t[]){2}), sc));
    mgopt_op_set_int(op, "axis", 1);
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(vals_are(x.out[0], 4, e));
    mgopt_op_set_int(op, "axis", 3);
    CHECK(FOLD(&x, op) == 0);
  }
  mgopt_program_destroy(x.p);
}

/* ---------------------------------------------------------------- refusals */

static void test_refusals(void) {
  fx x = fx_new();
  mgopt_type ty;
  mgopt_value *arg, *c;
  mgopt_op *op;
  mgopt_fold_options fo;
  I64S(s4, 4);
  DBL(v, 1, 2, 3, 4);
  REQUIRE(mgopt_type_make_static(x.p, &ty, MGOPT_DT_FP32, 1, s4) == MGOPT_OK);
  arg = mgopt_block_add_arg(x.f->body, "in", &ty);
  c = K(&x, MGOPT_DT_FP32, 1, s4, v);
  /* an operand that is not constant */
  CHECK(FOLD(&x, OP(&x, "add", 1, 2, "x", arg, "y", c)) == 0);
  /* an op without a kernel, and an unknown op */
  CHECK(FOLD(&x, OP(&x, "conv", 1, 1, "x", c)) == 0);
  CHECK(FOLD(&x, OP(&x, "onnx::Foo", 1, 1, "x", c)) == 0);
  /* stored output type disagrees with the computed one */
  op = OP(&x, "add", 1, 2, "x", c, "y", c);
  REQUIRE(FOLD(&x, op) == 1);
  REQUIRE(mgopt_type_make_static(x.p, &op->outs[0]->type, MGOPT_DT_FP32, 1, s4) == MGOPT_OK);
  CHECK(FOLD(&x, op) == 1); /* agrees */
  op->outs[0]->type.dims[0].v = 5;
  CHECK(FOLD(&x, op) == 0);
  REQUIRE(mgopt_type_make_static(x.p, &op->outs[0]->type, MGOPT_DT_FP16, 1, s4) == MGOPT_OK);
  CHECK(FOLD(&x, op) == 0);
  REQUIRE(mgopt_type_make(x.p, &op->outs[0]->type, MGOPT_DT_FP32, 2, NULL) == MGOPT_OK);
  CHECK(FOLD(&x, op) == 0);
  REQUIRE(mgopt_type_make(x.p, &op->outs[0]->type, MGOPT_DT_UNKNOWN, 1, NULL) == MGOPT_OK);
  CHECK(FOLD(&x, op) == 1); /* unknown dims and dtype accept anything of rank 1 */
  /* size limit through the options */
  memset(&fo, 0, sizeof fo);
  fo.max_elements = 3;
  CHECK(mgopt_fold_op(x.p, op, x.out, &fo) == 0);
  fo.max_elements = 4;
  CHECK(mgopt_fold_op(x.p, op, x.out, &fo) == 1);
  /* growth budget: the outputs may take what the fold frees (the operand
     constants read by the op alone) plus max_growth_bytes */
  {
    DBL(v4, 1, 2, 3, 4);
    mgopt_value *c1 = K(&x, MGOPT_DT_FP32, 1, ARR((const int64_t[]){4}), v4); /* read by the tile alone */
    mgopt_value *c2 = K(&x, MGOPT_DT_FP32, 1, ARR((const int64_t[]){4}), v4); /* read by a relu and an opaque op */
    mgopt_op *rl = OP(&x, "relu", 1, 1, "x", c2);
    REQUIRE(OP(&x, "test::Bar", 1, 1, "x", c2) != NULL);
    memset(&fo, 0, sizeof fo);
    fo.max_growth_bytes = 8;
    CHECK(mgopt_fold_op(x.p, rl, x.out, &fo) == 0); /* 16 bytes, nothing freed */
    fo.max_growth_bytes = 16;
    CHECK(mgopt_fold_op(x.p, rl, x.out, &fo) == 1);
    op = OP(&x, "tile", 1, 1, "x", c1);
    mgopt_op_set_ints(op, "reps", ARR((const int64_t[]){8}), 1); /* 128 bytes, 16 freed */
    fo.max_growth_bytes = 64;
    CHECK(mgopt_fold_op(x.p, op, x.out, &fo) == 0);
    fo.max_growth_bytes = 112;
    CHECK(mgopt_fold_op(x.p, op, x.out, &fo) == 1);
    fo.max_growth_bytes = -1;
    CHECK(mgopt_fold_op(x.p, op, x.out, &fo) == 1);
    fo.max_growth_bytes = 0; /* the default, 1 KB */
    CHECK(mgopt_fold_op(x.p, op, x.out, &fo) == 1);
    mgopt_op_set_ints(op, "reps", ARR((const int64_t[]){300}), 1);
    CHECK(mgopt_fold_op(x.p, op, x.out, &fo) == 0);
    mgopt_op_set_ints(op, "reps", ARR((const int64_t[]){64}), 1);
    CHECK(mgopt_fold_op(x.p, op, x.out, &fo) == 1);
    mgopt_op_set_ints(op, "reps", ARR((const int64_t[]){65}), 1);
    CHECK(mgopt_fold_op(x.p, op, x.out, &fo) == 1);
    mgopt_op_set_ints(op, "reps", ARR((const int64_t[]){66}), 1);
    CHECK(mgopt_fold_op(x.p, op, x.out, &fo) == 0);
  }
  mgopt_op_set_ints(op, "reps", ARR((const int64_t[]){(1 << 18) + 1}), 1); /* 4 MiB + 16 */
  CHECK(mgopt_fold_op(x.p, op, x.out, &fo) == 0);
  CHECK(mgopt_fold_op(x.p, op, x.out, NULL) == 0);
  fo.max_elements = 4;
  /* odd IR: parameters present but unreadable, absurd sizes */
  op = OP(&x, "reduce_sum", 1, 2, "x", c, "axes", S(&x, MGOPT_DT_FP32, 0));
  CHECK(FOLD(&x, op) == 0);
  op = OP(&x, "squeeze", 1, 1, "x", c);
  mgopt_op_set_string(op, "axes", "all");
  CHECK(FOLD(&x, op) == 0);
  op = OP(&x, "reshape", 1, 1, "x", c);
  mgopt_op_set_ints(op, "shape", ARR((const int64_t[]){-3, -1}), 2);
  CHECK(FOLD(&x, op) == 0);
  op = OP(&x, "tile", 1, 1, "x", c);
  mgopt_op_set_ints(op, "reps", ARR((const int64_t[]){INT64_MAX / 2}), 1);
  CHECK(FOLD(&x, op) == 0); /* 4 * 2^62 overflows */
  mgopt_op_set_ints(op, "reps", ARR((const int64_t[]){1000}), 1);
  CHECK(mgopt_fold_op(x.p, op, x.out, &fo) == 0); /* over max_elements */
  op = OP(&x, "one_hot", 1, 1, "indices", S(&x, MGOPT_DT_INT32, 0));
  CHECK(FOLD(&x, op) == 0); /* no one_hot_vector_size */
  CHECK(FOLD(&x, OP(&x, "concat", 1, 0)) == 0);
  op = OP(&x, "slice_by_index", 1, 3, "x", c, "begin", K(&x, MGOPT_DT_FP32, 1, ARR((const int64_t[]){1}), v), "end",
          K(&x, MGOPT_DT_INT32, 1, ARR((const int64_t[]){1}), v));
  CHECK(FOLD(&x, op) == 0);
  op = OP(&x, "split", 2, 1, "x", c); /* neither num_splits nor split_sizes */
  mgopt_op_set_int(op, "axis", 0);
  CHECK(FOLD(&x, op) == 0);
  /* bad arguments */
  CHECK(mgopt_fold_op(x.p, NULL, x.out, NULL) == 0);
  CHECK(mgopt_fold_op(x.p, op, NULL, NULL) == 0);
  mgopt_program_destroy(x.p);
}

/* ---------------------------------------------------------------- the pass */

static void test_const_elimination_pass(void) {
  fx x = fx_new();
  mgopt_type ty;
  mgopt_value *in, *sum, *y, *lut;
  mgopt_op *add, *mul, *dec;
  mgopt_diag d;
  mgopt_tensor *c;
  I64S(s2, 2);
  DBL(a, 1, 2);
  DBL(b, 3, 4);
  static const uint8_t packed[1] = {0x01};
  REQUIRE(mgopt_type_make_static(x.p, &ty, MGOPT_DT_FP32, 1, s2) == MGOPT_OK);
  in = mgopt_block_add_arg(x.f->body, "x", &ty);
  add = OP(&x, "add", 1, 2, "x", K(&x, MGOPT_DT_FP32, 1, s2, a), "y", K(&x, MGOPT_DT_FP32, 1, s2, b));
  REQUIRE(add);
  sum = add->outs[0];
  mgopt_value_set_name(sum, "c");
  /* the cascade: (c * 2) folds once c is a constant */
  mul = OP(&x, "mul", 1, 2, "x", sum, "y", S(&x, MGOPT_DT_FP32, 2));
  REQUIRE(mul);
  /* a constexpr stays compressed, and what uses it is not folded */
  dec = OP(&x, "constexpr_lut_to_dense", 1, 2, "indices", KB(&x, MGOPT_DT_UINT8, 1, ARR((const int64_t[]){1}), packed),
           "lut", K(&x, MGOPT_DT_FP32, 1, s2, a));
  REQUIRE(dec);
  mgopt_op_set_ints(dec, "shape", s2, 1);
  lut = dec->outs[0];
  y = OP(&x, "add", 1, 2, "x", in, "y", mul->outs[0])->outs[0];
  REQUIRE(mgopt_block_add_output(x.f->body, y) == MGOPT_OK);
  REQUIRE(mgopt_block_add_output(x.f->body, OP(&x, "sub", 1, 2, "x", lut, "y", lut)->outs[0]) == MGOPT_OK);
  REQUIRE(mgopt_pipeline_run(x.p, mgopt_builtin_registry(), "const_elimination", NULL, &d) == MGOPT_OK);
  CHECK(add->flags & MGOPT_OP_ERASED);
  CHECK(mul->flags & MGOPT_OP_ERASED);
  CHECK(!(dec->flags & MGOPT_OP_ERASED));
  c = mgopt_value_const(y->def->slots[mgopt_op_slot_index(y->def, "y")].uses[0].value);
  REQUIRE(c);
  {
    DBL(e, 8, 12);
    CHECK(vals_are(c, 2, e));
  }
  /* the folded add kept its name */
  {
    mgopt_op *o;
    int found = 0;
    for (o = x.f->body->first; o; o = o->next)
      if (o->kind == MGOPT_OP_const && o->outs[0]->name && strcmp(o->outs[0]->name, "c") == 0) found = 1;
    CHECK(found);
  }
  /* skip_const_by_size: a 2-element result stays, a scalar still folds */
  add = OP(&x, "add", 1, 2, "x", K(&x, MGOPT_DT_FP32, 1, s2, a), "y", K(&x, MGOPT_DT_FP32, 1, s2, b));
  mul = OP(&x, "mul", 1, 2, "x", S(&x, MGOPT_DT_FP32, 3), "y", S(&x, MGOPT_DT_FP32, 2));
  REQUIRE(mgopt_block_add_output(x.f->body, add->outs[0]) == MGOPT_OK);
  REQUIRE(mgopt_block_add_output(x.f->body, mul->outs[0]) == MGOPT_OK);
  REQUIRE(mgopt_pipeline_run(x.p, mgopt_builtin_registry(), "common::const_elimination{skip_const_by_size=1}", NULL, &d) == MGOPT_OK);
  CHECK(!(add->flags & MGOPT_OP_ERASED));
  CHECK(mul->flags & MGOPT_OP_ERASED);
  mgopt_program_destroy(x.p);
}

/* ---------------------------------------------------------------- odd IR */

static uint64_t rng_state = 88172645463325252ull;
static int64_t rnd(int64_t lo, int64_t hi) { /* inclusive */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return lo + (int64_t)(rng_state % (uint64_t)(hi - lo + 1));
}

static mgopt_value *rnd_const(fx *x) {
  static const mgopt_dtype dts[] = {MGOPT_DT_FP32, MGOPT_DT_FP16, MGOPT_DT_INT32, MGOPT_DT_INT8,
                                    MGOPT_DT_UINT8, MGOPT_DT_BOOL, MGOPT_DT_FP64, MGOPT_DT_UINT4,
                                    MGOPT_DT_INT64, MGOPT_DT_UINT1};
  int64_t shape[4], i;
  double v[256];
  int rank = (int)rnd(0, 3), d;
  for (d = 0; d < rank; d++) shape[d] = rnd(0, 4);
  for (i = 0; i < 256; i++) v[i] = (double)rnd(-6, 6) / (rnd(0, 1) ? 1 : 2);
  return K(x, dts[rnd(0, 9)], rank, shape, v);
}

static void rnd_ints(mgopt_op *op, const char *name) {
  int64_t v[5];
  int n = (int)rnd(0, 4), i;
  for (i = 0; i < n; i++) v[i] = rnd(-5, 5);
  mgopt_op_set_ints(op, name, v, n);
}

/* Random operands and parameters for every kernel: each call returns 0 or 1
   (never crashes, never leaks: run under ASan), and a fold gives whole outputs. */
static void test_random_ir(void) {
  static const char *const ops[] = {
      "add", "floor_div", "mod", "pow", "less", "logical_xor", "select", "exp", "rsqrt", "abs", "sign",
      "clip", "softmax", "cast", "reshape", "transpose", "expand_dims", "squeeze", "concat", "stack",
      "split", "slice_by_index", "slice_by_size", "gather", "tile", "pad", "one_hot", "reduce_sum",
      "reduce_max", "reduce_mean", "matmul", "linear", "quantize", "dequantize",
      "constexpr_affine_dequantize", "constexpr_lut_to_dense", "constexpr_sparse_to_dense",
      "constexpr_blockwise_shift_scale", "identity", "logical_not"};
  static const char *const slots[] = {"x", "y", "cond", "a", "b", "indices", "weight", "bias", "input",
                                      "scale", "zero_point", "data", "offset", "lut", "mask", "nonzero_data",
                                      "quantized_data", "shape"};
  static const char *const lists[] = {"axes", "perm", "begin", "end", "stride", "begin_mask", "end_mask",
                                      "squeeze_mask", "size", "reps", "pad", "split_sizes", "shape"};
  static const char *const ints[] = {"axis", "num_splits", "batch_dims", "one_hot_vector_size", "vector_axis"};
  static const char *const dtypes[] = {"fp16", "fp32", "int8", "uint8", "int32", "bool", "int64"};
  int iter, folded = 0, refused = 0;
  for (iter = 0; iter < 3000; iter++) {
    fx x = fx_new();
    const char *names[4];
    mgopt_value *vals[4], *list[3];
    mgopt_op *op;
    int n = (int)rnd(1, 3), i, r;
    for (i = 0; i < n; i++) {
      names[i] = i == 0 ? (rnd(0, 3) ? "x" : slots[rnd(0, 17)]) : slots[rnd(0, 17)];
      vals[i] = rnd_const(&x);
    }
    op = mgopt_build_op(x.p, x.f->body, NULL, ops[iter % 40], NULL, n, names, vals, (int32_t)rnd(1, 2));
    REQUIRE(op);
    if (rnd(0, 1)) {
      for (i = 0; i < 3; i++) list[i] = rnd(0, 1) ? vals[0] : rnd_const(&x);
      mgopt_op_set_operand_list(op, "values", list, (int32_t)rnd(1, 3));
    }
    for (i = 0; i < 3; i++) rnd_ints(op, lists[rnd(0, 12)]);
    for (i = 0; i < 2; i++) mgopt_op_set_int(op, ints[rnd(0, 4)], rnd(-4, 4));
    if (rnd(0, 1)) mgopt_op_set_string(op, rnd(0, 1) ? "dtype" : "output_dtype", dtypes[rnd(0, 6)]);
    if (rnd(0, 1)) mgopt_op_set_float(op, rnd(0, 1) ? "alpha" : "beta", (double)rnd(-2, 2));
    r = mgopt_fold_op(x.p, op, x.out, NULL);
    CHECK(r == 0 || r == 1);
    if (r == 1) {
      folded++;
      for (i = 0; i < op->nouts; i++)
        CHECK(x.out[i] && x.out[i]->numel >= 0 && x.out[i]->nbytes == (size_t)mgopt_dtype_nbytes((mgopt_dtype)x.out[i]->dtype, x.out[i]->numel));
    } else {
      refused++;
      CHECK(x.out[0] == NULL);
    }
    mgopt_program_destroy(x.p);
  }
  /* both outcomes occur, so the generator reaches the kernels */
  CHECK(folded > 100 && refused > 100);
}

static const test_case tests[] = {
    TEST(test_binary_broadcast), TEST(test_binary_dtypes), TEST(test_fp16_bf16_rounding),
    TEST(test_floor_div_mod), TEST(test_unary), TEST(test_softmax_select), TEST(test_cast),
    TEST(test_reshape_transpose), TEST(test_expand_squeeze), TEST(test_concat_stack_split),
    TEST(test_slices), TEST(test_gather), TEST(test_reduce_arg), TEST(test_cumsum), TEST(test_reduce_norms), TEST(test_gather_along_axis), TEST(test_tile_pad_onehot), TEST(test_reduce),
    TEST(test_matmul_linear), TEST(test_lut_to_dense), TEST(test_sparse_and_quant),
    TEST(test_refusals), TEST(test_const_elimination_pass), TEST(test_random_ir),
};
TEST_MAIN(tests)
