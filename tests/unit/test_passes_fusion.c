/* tests/unit/test_passes_fusion.c — fusion passes: the numeric contract of folding into weights (computed in double, rounded once to the weight's dtype) against an independent double-precision computation, and what golden text cannot show. */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include "pass_harness.h"
#include <math.h>

/* The const tensor of the value named `name` in main's body, NULL if none. */
static mgopt_tensor *const_named(mgopt_program *p, const char *name) {
  mgopt_op *op;
  for (op = mgopt_program_function(p, "main")->body->first; op; op = op->next)
    if (op->nouts == 1 && op->outs[0]->name && strcmp(op->outs[0]->name, name) == 0) return mgopt_value_const(op->outs[0]);
  return NULL;
}

/* The tensor a conv-like op of main reads in `slot`. */
static mgopt_tensor *conv_operand(mgopt_program *p, int32_t kind, const char *slot) {
  mgopt_op *op;
  for (op = mgopt_program_function(p, "main")->body->first; op; op = op->next)
    if (op->kind == kind) return mgopt_value_const(mgopt_op_operand(op, slot));
  return NULL;
}

/* Deterministic values in [-2, 2). */
static double rnd(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return ((double)((*s >> 8) & 0xffff) / 65536.0) * 4.0 - 2.0;
}

/* The value of the 16-bit pattern h as fp16 (bf = 0) or bf16 (bf = 1). */
static double half_value(unsigned h, int bf) {
  return bf ? (double)mgopt_bf16_to_f32((uint16_t)h) : (double)mgopt_f16_to_f32((uint16_t)h);
}

/* The nearest finite fp16 / bf16 to v by search over every pattern (ties to an even pattern), or
   +-inf past the largest finite one as IEEE rounds: independent of the code under test. */
static double nearest16(double v, int bf) {
  double best = 0, bd = -1, maxf = bf ? half_value(0x7f7f, 1) : 65504.0, ulp = bf ? ldexp(1.0, 127 - 7) : 32.0;
  unsigned h, bh = 0;
  if (fabs(v) >= maxf + ulp / 2) return v < 0 ? -HUGE_VAL : HUGE_VAL;
  for (h = 0; h < 0x10000u; h++) {
    double x = half_value(h, bf), dd;
    if (!isfinite(x)) continue;
    dd = fabs(x - v);
    if (bd < 0 || dd < bd || (dd == bd && (h & 1u) == 0 && (bh & 1u) == 1)) {
      bd = dd;
      best = x;
      bh = h;
    }
  }
  return best;
}

/* mgopt__pw_round: one rounding from double, to nearest even, for fp16, bf16 and fp32. */
static void test_round_once(void) {
  unsigned s = 7;
  int i;
  /* ties and near-ties: fp16 1 + 2^-11 (halfway between 1 and 1 + 2^-10), its neighbours, a
     subnormal halfway point, the overflow boundary; and a value that rounds differently through fp32 */
  static const double cases[] = {1.0 + 0.00048828125, 1.0 + 0.00048828125 + 1e-12, 1.0 + 3 * 0.00048828125,
                                 5.960464477539063e-08 / 2, 3 * 5.960464477539063e-08 / 2, 65519.99, 65520.0,
                                 -65520.0, 1.0 + 0.00048828125 + 9.094947017729282e-13, 0.1, -0.3333333333333333, 0.0};
  for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
    CHECK(mgopt__pw_round(MGOPT_DT_FP16, cases[i]) == nearest16(cases[i], 0));
    CHECK(mgopt__pw_round(MGOPT_DT_BF16, cases[i]) == nearest16(cases[i], 1));
  }
  /* through fp32 first, 1 + 2^-11 + 2^-40 (9.09e-13) would become the tie 1 + 2^-11 and round to 1: once, it rounds up */
  CHECK(mgopt__pw_round(MGOPT_DT_FP16, 1.0 + 0.00048828125 + ldexp(1.0, -40)) == 1.0 + 0.0009765625);
  for (i = 0; i < 300; i++) {
    double v = rnd(&s) * ldexp(1.0, (int)(rnd(&s) * 12));
    CHECK(mgopt__pw_round(MGOPT_DT_FP16, v) == nearest16(v, 0));
    CHECK(mgopt__pw_round(MGOPT_DT_BF16, v) == nearest16(v, 1));
    CHECK(mgopt__pw_round(MGOPT_DT_FP32, v) == (double)(float)v);
  }
}

/* Builds "[a, b, ...]" of n values (%.17g: the literal reads back exactly). */
static void put_list(char *buf, size_t cap, const double *v, int n) {
  size_t len = strlen(buf);
  int i;
  len += (size_t)snprintf(buf + len, cap - len, "[");
  for (i = 0; i < n; i++) len += (size_t)snprintf(buf + len, cap - len, "%s%.17g", i ? ", " : "", v[i]);
  snprintf(buf + len, cap - len, "]");
}

/* fuse_conv_batchnorm on a grouped conv_transpose (Cin 4, Cout 6, groups 2, kernel 2): every
   weight and bias element equals the double-precision formula rounded once to the weight dtype,
   with output channel k*Cout/g + j scaling W[k*Cin/g:(k+1)*Cin/g, j]. */
static void check_bn_contract(const char *dt, mgopt_dtype dtype) {
  static char text[8192];
  double w[4 * 3 * 2], b[6], m[6], v[6], g[6], be[6];
  unsigned s = 11;
  int i, j, k, o;
  mgopt_program *p;
  mgopt_tensor *tw, *tb, *tm, *tv, *tg, *tbe, *nw, *nb, *ow, *obias;
  for (i = 0; i < 24; i++) w[i] = rnd(&s);
  for (i = 0; i < 6; i++) {
    b[i] = rnd(&s);
    m[i] = rnd(&s);
    v[i] = fabs(rnd(&s)) + 0.1;
    g[i] = rnd(&s);
    be[i] = rnd(&s);
  }
  {
    char *q = text;
    size_t len;
    snprintf(q, sizeof text, "main(%%x: (1, 4, 3, %s)) {\n  %%w: (4, 3, 2, %s)* = const(val=[", dt, dt);
    for (i = 0; i < 4; i++) {
      len = strlen(q);
      snprintf(q + len, sizeof text - len, "%s[", i ? ", " : "");
      for (j = 0; j < 3; j++) {
        len = strlen(q);
        snprintf(q + len, sizeof text - len, "%s[%.17g, %.17g]", j ? ", " : "", w[(i * 3 + j) * 2], w[(i * 3 + j) * 2 + 1]);
      }
      len = strlen(q);
      snprintf(q + len, sizeof text - len, "]");
    }
    len = strlen(q);
    snprintf(q + len, sizeof text - len, "])\n  %%b: (6, %s)* = const(val=", dt);
    put_list(q, sizeof text, b, 6);
    len = strlen(q);
    snprintf(q + len, sizeof text - len, ")\n  %%c: (1, 6, 4, %s) = conv_transpose(x=%%x, weight=%%w, bias=%%b, groups=2)\n  %%m: (6, fp32)* = const(val=", dt);
    put_list(q, sizeof text, m, 6);
    len = strlen(q);
    snprintf(q + len, sizeof text - len, ")\n  %%v: (6, fp32)* = const(val=");
    put_list(q, sizeof text, v, 6);
    len = strlen(q);
    snprintf(q + len, sizeof text - len, ")\n  %%g: (6, fp32)* = const(val=");
    put_list(q, sizeof text, g, 6);
    len = strlen(q);
    snprintf(q + len, sizeof text - len, ")\n  %%be: (6, fp32)* = const(val=");
    put_list(q, sizeof text, be, 6);
    len = strlen(q);
    snprintf(q + len, sizeof text - len,
             ")\n  %%y: (1, 6, 4, %s) = batch_norm(x=%%c, mean=%%m, variance=%%v, gamma=%%g, beta=%%be, epsilon=0.001)\n} -> (%%y)\n",
             dt);
  }
  p = parse(text);
  REQUIRE(p != NULL);
  tw = const_named(p, "w");
  tb = const_named(p, "b");
  tm = const_named(p, "m");
  tv = const_named(p, "v");
  tg = const_named(p, "g");
  tbe = const_named(p, "be");
  REQUIRE(tw && tb && tm && tv && tg && tbe);
  ow = tw;
  obias = tb;
  CHECK_EQ_INT(run(p, "fuse_conv_batchnorm"), MGOPT_OK);
  nw = conv_operand(p, MGOPT_OP_conv_transpose, "weight");
  nb = conv_operand(p, MGOPT_OP_conv_transpose, "bias");
  REQUIRE(nw && nb && nw != ow && nb != obias);
  CHECK_EQ_INT(nw->dtype, dtype);
  CHECK_EQ_INT(nb->dtype, dtype);
  CHECK_EQ_INT(mgopt_program_op_count(p), 3);
  for (o = 0; o < 6; o++) {
    double sc = mgopt_tensor_get_f64(tg, o) / sqrt(mgopt_tensor_get_f64(tv, o) + 0.001);
    double want = sc * (mgopt_tensor_get_f64(obias, o) - mgopt_tensor_get_f64(tm, o)) + mgopt_tensor_get_f64(tbe, o);
    double r = dtype == MGOPT_DT_FP32 ? (double)(float)want : nearest16(want, 0);
    CHECK(mgopt_tensor_get_f64(nb, o) == r);
  }
  for (i = 0; i < 4; i++)
    for (j = 0; j < 3; j++)
      for (k = 0; k < 2; k++) {
        int64_t f = (i * 3 + j) * 2 + k;
        int ch = (i / 2) * 3 + j; /* group i / (Cin/g), its channel j */
        double sc = mgopt_tensor_get_f64(tg, ch) / sqrt(mgopt_tensor_get_f64(tv, ch) + 0.001);
        double want = mgopt_tensor_get_f64(ow, f) * sc;
        double r = dtype == MGOPT_DT_FP32 ? (double)(float)want : nearest16(want, 0);
        CHECK(mgopt_tensor_get_f64(nw, f) == r);
      }
  mgopt_program_destroy(p);
}

static void test_conv_batchnorm_contract(void) {
  check_bn_contract("fp32", MGOPT_DT_FP32);
  check_bn_contract("fp16", MGOPT_DT_FP16);
}

/* fuse_conv_scale with real_div: W' = W * (1/s) in double, rounded once; real_div(s, conv) untouched. */
static void test_conv_scale_contract(void) {
  static const char *text =
      "main(%x: (1, 2, 3, fp16)) {\n"
      "  %w: (2, 2, 1, fp16)* = const(val=[[[0.7], [-1.3]], [[2.9], [0.011]]])\n"
      "  %c: (1, 2, 3, fp16) = conv(x=%x, weight=%w)\n"
      "  %s: (2, 1, fp16)* = const(val=[[3], [0.7]])\n"
      "  %y: (1, 2, 3, fp16) = real_div(x=%c, y=%s)\n"
      "} -> (%y)\n";
  mgopt_program *p = parse(text);
  mgopt_tensor *w, *sc, *nw;
  int64_t f;
  REQUIRE(p != NULL);
  w = const_named(p, "w");
  sc = const_named(p, "s");
  REQUIRE(w && sc);
  CHECK_EQ_INT(run(p, "fuse_conv_scale"), MGOPT_OK);
  nw = conv_operand(p, MGOPT_OP_conv, "weight");
  REQUIRE(nw && nw != w);
  CHECK_EQ_INT(nw->dtype, MGOPT_DT_FP16);
  for (f = 0; f < 4; f++) {
    double want = mgopt_tensor_get_f64(w, f) * (1.0 / mgopt_tensor_get_f64(sc, f / 2));
    CHECK(mgopt_tensor_get_f64(nw, f) == nearest16(want, 0));
  }
  mgopt_program_destroy(p);
}

/* conv -> mul -> batch_norm: the second fold scales the weight the first
   one made in place (it alone holds it, the conv alone reads it), each fold
   rounding once; the parsed weight, which the first fold only read, keeps its
   values. A fold whose result would not be finite leaves the weight as it was. */
static void test_conv_fold_chain_in_place(void) {
  static const char *const texts[2] = {
      "main(%x: (1, 2, 3, fp32)) {\n"
      "  %w: (2, 2, 1, fp32)* = const(val=[[[0.7], [-1.3]], [[2.9], [0.011]]])\n"
      "  %c: (1, 2, 3, fp32) = conv(x=%x, weight=%w)\n"
      "  %s: (2, 1, fp32)* = const(val=[[3], [0.7]])\n"
      "  %d: (1, 2, 3, fp32) = mul(x=%c, y=%s)\n"
      "  %m: (2, fp32)* = const(val=[0.5, -1])\n"
      "  %v: (2, fp32)* = const(val=[1.5, 0.25])\n"
      "  %y: (1, 2, 3, fp32) = batch_norm(x=%d, mean=%m, variance=%v, epsilon=0.001)\n"
      "} -> (%y)\n",
      "main(%x: (1, 2, 3, fp32)) {\n"
      "  %w: (2, 2, 1, fp32)* = const(val=[[[0.7], [-1.3]], [[2.9], [0.011]]])\n"
      "  %c: (1, 2, 3, fp32) = conv(x=%x, weight=%w)\n"
      "  %s: (2, 1, fp32)* = const(val=[[3], [0.7]])\n"
      "  %d: (1, 2, 3, fp32) = mul(x=%c, y=%s)\n"
      "  %m: (2, fp32)* = const(val=[0.5, -1])\n"
      "  %v: (2, fp32)* = const(val=[1.5, 0.25])\n"
      "  %g: (2, fp32)* = const(val=[3e38, 1])\n"
      "  %y: (1, 2, 3, fp32) = batch_norm(x=%d, mean=%m, variance=%v, gamma=%g, epsilon=0.001)\n"
      "} -> (%y)\n"};
  static const double w[4] = {(float)0.7, (float)-1.3, (float)2.9, (float)0.011}, sc[2] = {3, (float)0.7},
                      v[2] = {1.5, 0.25}; /* casts round even where float math runs in double */
  int t;
  for (t = 0; t < 2; t++) {
    mgopt_program *p = parse(texts[t]);
    mgopt_tensor *w0, *w1, *w2;
    float first[4];
    int64_t f;
    REQUIRE(p != NULL);
    w0 = const_named(p, "w");
    REQUIRE(w0 != NULL);
    CHECK_EQ_INT(run(p, "fuse_conv_scale"), MGOPT_OK);
    w1 = conv_operand(p, MGOPT_OP_conv, "weight");
    REQUIRE(w1 != NULL && w1 != w0);
    for (f = 0; f < 4; f++) {
      first[f] = (float)(w[f] * sc[f / 2]);
      CHECK(mgopt_tensor_get_f64(w1, f) == first[f]);
      CHECK(mgopt_tensor_get_f64(w0, f) == w[f]);
    }
    CHECK_EQ_INT(run(p, "fuse_conv_batchnorm"), MGOPT_OK);
    w2 = conv_operand(p, MGOPT_OP_conv, "weight");
    REQUIRE(w2 != NULL);
    CHECK(w2 == w1);
    CHECK_EQ_INT(mgopt_program_op_count(p), (t ? 6 : 3));
    for (f = 0; f < 4; f++) {
      double want = t ? first[f] : (double)first[f] * (1.0 / sqrt(v[f / 2] + 0.001));
      CHECK(mgopt_tensor_get_f64(w2, f) == (double)(float)want);
    }
    mgopt_program_destroy(p);
  }
}

static const test_case tests[] = {
    TEST(test_conv_fold_chain_in_place),
    TEST(test_round_once),
    TEST(test_conv_batchnorm_contract),
    TEST(test_conv_scale_contract),
};

TEST_MAIN(tests)
