/* tests/unit/test_passes_linear.c — fusion passes that make linear, batch_norm, layer_norm and instance_norm: refusal by the program's target, their weight arithmetic against a double-precision computation, and how ONNX export writes a linear. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include "pass_harness.h"
#include <math.h>   /* sqrt: the reference normalizations */
#include <stdlib.h> /* malloc / free of the printed texts */

/* the target refuses ops of the kind *ud */
static int refuse_kind(const mgopt_program *p, const mgopt_op *op, void *ud) {
  (void)p;
  return op->kind != *(const int32_t *)ud;
}

/* ops of main's body that are not const */
static int64_t compute_ops(mgopt_program *p) {
  mgopt_op *op;
  int64_t n = 0;
  for (op = mgopt_program_function_at(p, 0)->body->first; op; op = op->next) n += op->kind != MGOPT_OP_const;
  return n;
}

/* the first op of main's body of `kind`, or NULL */
static mgopt_op *find(mgopt_program *p, int32_t kind) {
  mgopt_op *op;
  for (op = mgopt_program_function_at(p, 0)->body->first; op; op = op->next)
    if (op->kind == kind) return op;
  return NULL;
}

static const char linear_text[] =
    "main(%x: (2, 2, fp32)) {\n"
    "  %w: (3, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6]])\n"
    "  %b: (3, fp32)* = const(val=[1, 2, 3])\n"
    "  %l: (2, 3, fp32) = linear(x=%x, weight=%w, bias=%b)\n"
    "  %c: (3, fp32)* = const(val=[0.5, -2, 4])\n"
    "  %y: (2, 3, fp32) = sub(x=%c, y=%l)\n"
    "} -> (%y)\n";
static const char matmul_text[] =
    "main(%x: (2, 3, fp32)) {\n"
    "  %w: (3, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6]])\n"
    "  %m: (2, 2, fp32) = matmul(x=%x, y=%w, transpose_x=false, transpose_y=false)\n"
    "  %c: (2, fp32)* = const(val=[10, 20])\n"
    "  %y: (2, 2, fp32) = add(x=%m, y=%c)\n"
    "} -> (%y)\n";
static const char bn_text[] =
    "main(%x: (1, 2, 3, 3, fp32)) {\n"
    "  %g: (1, 2, 1, 1, fp32)* = const(val=[[[[2]], [[3]]]])\n"
    "  %m: (1, 2, 3, 3, fp32) = mul(x=%x, y=%g)\n"
    "  %b: (1, 2, 1, 1, fp32)* = const(val=[[[[1]], [[-1]]]])\n"
    "  %y: (1, 2, 3, 3, fp32) = add(x=%m, y=%b)\n"
    "} -> (%y)\n";
static const char ln_text[] =
    "main(%x: (3, 4, fp32)) {\n"
    "  %m: (3, 1, fp32) = reduce_mean(x=%x, axes=[-1], keep_dims=true)\n"
    "  %d: (3, 4, fp32) = sub(x=%x, y=%m)\n"
    "  %two: (fp32)* = const(val=2)\n"
    "  %q: (3, 4, fp32) = pow(x=%d, y=%two)\n"
    "  %v: (3, 1, fp32) = reduce_mean(x=%q, axes=[-1], keep_dims=true)\n"
    "  %e: (fp32)* = const(val=1e-05)\n"
    "  %ve: (3, 1, fp32) = add(x=%v, y=%e)\n"
    "  %s: (3, 1, fp32) = sqrt(x=%ve)\n"
    "  %n: (3, 4, fp32) = real_div(x=%d, y=%s)\n"
    "  %g: (4, fp32)* = const(val=[1, 2, 3, 4])\n"
    "  %ng: (3, 4, fp32) = mul(x=%n, y=%g)\n"
    "  %b: (4, fp32)* = const(val=[0, 1, 0, 1])\n"
    "  %y: (3, 4, fp32) = add(x=%ng, y=%b)\n"
    "} -> (%y)\n";
static const char in_text[] =
    "main(%x: (1, 2, 2, 2, fp32)) {\n"
    "  %m: (1, 2, 1, 1, fp32) = reduce_mean(x=%x, axes=[2, 3], keep_dims=true)\n"
    "  %d: (1, 2, 2, 2, fp32) = sub(x=%x, y=%m)\n"
    "  %q: (1, 2, 2, 2, fp32) = square(x=%d)\n"
    "  %v: (1, 2, 1, 1, fp32) = reduce_mean(x=%q, axes=[2, 3], keep_dims=true)\n"
    "  %e: (fp32)* = const(val=0.001)\n"
    "  %ve: (1, 2, 1, 1, fp32) = add(x=%v, y=%e)\n"
    "  %s: (1, 2, 1, 1, fp32) = sqrt(x=%ve)\n"
    "  %n: (1, 2, 2, 2, fp32) = real_div(x=%d, y=%s)\n"
    "  %g: (2, 1, 1, fp32)* = const(val=[[[2]], [[3]]])\n"
    "  %ng: (1, 2, 2, 2, fp32) = mul(x=%n, y=%g)\n"
    "  %b: (2, 1, 1, fp32)* = const(val=[[[1]], [[-1]]])\n"
    "  %y: (1, 2, 2, 2, fp32) = add(x=%ng, y=%b)\n"
    "} -> (%y)\n";

/* Each pass that builds a new op kind backs out, leaving the program as it
   was, when the target refuses that op; with no target it fires, leaving
   fewer ops that compute (constants aside: batch_norm takes four). */
static void test_target_refusal(void) {
  static const struct {
    const char *text, *pass;
    int32_t kind;
  } cases[] = {
      {linear_text, "fuse_linear_bias", MGOPT_OP_linear},
      {matmul_text, "fuse_matmul_weight_bias", MGOPT_OP_linear},
      {bn_text, "fuse_elementwise_to_batchnorm", MGOPT_OP_batch_norm},
      {ln_text, "fuse_layernorm_or_instancenorm", MGOPT_OP_layer_norm},
      {in_text, "fuse_layernorm_or_instancenorm", MGOPT_OP_instance_norm},
  };
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mgopt_program *p = parse(cases[i].text);
    char *before, *after;
    int64_t n, nc;
    REQUIRE(p != NULL);
    mgopt_program_set_target(p, refuse_kind, (void *)&cases[i].kind);
    before = print(p);
    n = mgopt_program_op_count(p);
    nc = compute_ops(p);
    CHECK_EQ_INT(run(p, cases[i].pass), MGOPT_OK);
    after = print(p);
    REQUIRE(before && after);
    CHECK(strcmp(before, after) == 0);
    CHECK_EQ_INT(mgopt_program_op_count(p), n);
    CHECK(find(p, cases[i].kind) == NULL || cases[i].kind == MGOPT_OP_linear);
    free(before);
    free(after);
    mgopt_program_set_target(p, NULL, NULL);
    CHECK_EQ_INT(run(p, cases[i].pass), MGOPT_OK);
    CHECK(find(p, cases[i].kind) != NULL);
    CHECK_EQ_INT(compute_ops(p), cases[i].kind == MGOPT_OP_linear ? nc - 1 : 1);
    mgopt_program_destroy(p);
  }
}

/* xorshift in [-8, 8): deterministic values with many mantissa bits */
static double rnd(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (double)(*s >> 11) / 9007199254740992.0 * 16.0 - 8.0;
}

/* fuse_linear_bias: the new bias is b + c (b - c, c - b) computed in double
   and rounded once to fp32; c - linear negates the weight exactly. */
static void test_linear_bias_rounds_once(void) {
  static const char *const ops[3] = {"add(x=%l, y=%c)", "sub(x=%l, y=%c)", "sub(x=%c, y=%l)"};
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  int k;
  for (k = 0; k < 3; k++) {
    char text[4096];
    float b[6], c[6], w[12];
    int i, n = 0;
    mgopt_program *p;
    mgopt_op *lin;
    mgopt_tensor *nb, *nw;
    for (i = 0; i < 6; i++) b[i] = (float)rnd(&seed), c[i] = (float)rnd(&seed) * 1e-3f;
    for (i = 0; i < 12; i++) w[i] = (float)rnd(&seed);
    n += snprintf(text + n, sizeof text - (size_t)n, "main(%%x: (3, 2, fp32)) {\n  %%w: (6, 2, fp32)* = const(val=[");
    for (i = 0; i < 6; i++)
      n += snprintf(text + n, sizeof text - (size_t)n, "%s[%.9g, %.9g]", i ? ", " : "", w[2 * i], w[2 * i + 1]);
    n += snprintf(text + n, sizeof text - (size_t)n, "])\n  %%b: (6, fp32)* = const(val=[");
    for (i = 0; i < 6; i++) n += snprintf(text + n, sizeof text - (size_t)n, "%s%.9g", i ? ", " : "", b[i]);
    n += snprintf(text + n, sizeof text - (size_t)n, "])\n  %%c: (6, fp32)* = const(val=[");
    for (i = 0; i < 6; i++) n += snprintf(text + n, sizeof text - (size_t)n, "%s%.9g", i ? ", " : "", c[i]);
    snprintf(text + n, sizeof text - (size_t)n,
             "])\n  %%l: (3, 6, fp32) = linear(x=%%x, weight=%%w, bias=%%b)\n  %%y: (3, 6, fp32) = %s\n} -> (%%y)\n",
             ops[k]);
    p = parse(text);
    REQUIRE(p != NULL);
    CHECK_EQ_INT(run(p, "fuse_linear_bias"), MGOPT_OK);
    lin = find(p, MGOPT_OP_linear);
    REQUIRE(lin != NULL && mgopt_op_operand(lin, "bias") != NULL);
    CHECK(find(p, MGOPT_OP_add) == NULL && find(p, MGOPT_OP_sub) == NULL);
    nb = mgopt_value_const(mgopt_op_operand(lin, "bias"));
    nw = mgopt_value_const(mgopt_op_operand(lin, "weight"));
    REQUIRE(nb != NULL && nw != NULL && nb->dtype == MGOPT_DT_FP32);
    for (i = 0; i < 6; i++) {
      double want = k == 0 ? (double)b[i] + (double)c[i] : k == 1 ? (double)b[i] - (double)c[i] : (double)c[i] - (double)b[i];
      CHECK(mgopt_tensor_get_f64(nb, i) == (double)(float)want);
    }
    for (i = 0; i < 12; i++) CHECK(mgopt_tensor_get_f64(nw, i) == (k == 2 ? -(double)w[i] : (double)w[i]));
    mgopt_program_destroy(p);
  }
}

/* fuse_matmul_weight_bias is exact: the linear computes, in double, the
   very sums the matmul and add did (the same products in the same order). */
static void test_matmul_linear_exact(void) {
  static const char *const texts[2] = {
      "main(%x: (2, 3, fp32)) {\n"
      "  %w: (3, 2, fp32)* = const(val=[[0.1, -2.5], [3.25, 4e-3], [-5.5, 6.125]])\n"
      "  %m: (2, 2, fp32) = matmul(x=%x, y=%w, transpose_x=false, transpose_y=false)\n"
      "  %c: (2, fp32)* = const(val=[0.3, -7])\n"
      "  %y: (2, 2, fp32) = sub(x=%c, y=%m)\n"
      "} -> (%y)\n",
      "main(%x: (2, 3, fp32)) {\n"
      "  %w: (2, 3, fp32)* = const(val=[[0.1, 3.25, -5.5], [-2.5, 4e-3, 6.125]])\n"
      "  %m: (2, 2, fp32) = matmul(x=%w, y=%x, transpose_x=false, transpose_y=true)\n"
      "  %c: (2, 1, fp32)* = const(val=[[0.3], [-7]])\n"
      "  %y: (2, 2, fp32) = sub(x=%m, y=%c)\n"
      "} -> (%y)\n"};
  /* (float) casts: the constants rounded to fp32 even where float
     expressions keep double precision (FLT_EVAL_METHOD 1, as s390x with -std=c99) */
  static const double w0[3][2] = {{(float)0.1f, -2.5f}, {3.25f, (float)4e-3f}, {-5.5f, 6.125f}};
  static const double c0[2] = {(float)0.3f, -7};
  static const double x[2][3] = {{1.5, -0.25, 2}, {0.125, 3, -1}};
  int t, i, j, k;
  for (t = 0; t < 2; t++) {
    mgopt_program *p = parse(texts[t]);
    mgopt_op *lin;
    mgopt_tensor *a, *b;
    REQUIRE(p != NULL);
    CHECK_EQ_INT(run(p, "fuse_matmul_weight_bias"), MGOPT_OK);
    lin = find(p, MGOPT_OP_linear);
    REQUIRE(lin != NULL);
    CHECK(find(p, MGOPT_OP_matmul) == NULL);
    a = mgopt_value_const(mgopt_op_operand(lin, "weight"));
    b = mgopt_value_const(mgopt_op_operand(lin, "bias"));
    REQUIRE(a != NULL && b != NULL && a->rank == 2 && a->shape[0] == 2 && a->shape[1] == 3);
    for (i = 0; i < 2; i++)
      for (j = 0; j < 2; j++) {
        /* t 0: y[i][j] = c[j] - sum_k x[i][k] w[k][j]; the linear: sum_k x[i][k] a[j][k] + b[j].
           t 1: y[i][j] = sum_k w^T... = sum_k w0[k][i] x[j][k] - c[i]; the linear on x, transposed. */
        double ref = 0, got = 0;
        for (k = 0; k < 3; k++) {
          ref += t == 0 ? x[i][k] * w0[k][j] : w0[k][i] * x[j][k];
          got += t == 0 ? x[i][k] * mgopt_tensor_get_f64(a, j * 3 + k) : x[j][k] * mgopt_tensor_get_f64(a, i * 3 + k);
        }
        ref = t == 0 ? c0[j] - ref : ref - c0[i];
        got += mgopt_tensor_get_f64(b, t == 0 ? j : i);
        CHECK(ref == got);
      }
    mgopt_program_destroy(p);
  }
}

/* fuse_elementwise_to_batchnorm is exact: batch_norm's formula with the new
   constants gives g x + b for every x (in double). */
static void test_batchnorm_exact(void) {
  mgopt_program *p = parse(bn_text);
  mgopt_op *bn;
  mgopt_tensor *mean, *var, *g, *b;
  double eps;
  uint64_t seed = 12345;
  int i, c;
  REQUIRE(p != NULL);
  CHECK_EQ_INT(run(p, "fuse_elementwise_to_batchnorm"), MGOPT_OK);
  bn = find(p, MGOPT_OP_batch_norm);
  REQUIRE(bn != NULL);
  mean = mgopt_value_const(mgopt_op_operand(bn, "mean"));
  var = mgopt_value_const(mgopt_op_operand(bn, "variance"));
  g = mgopt_value_const(mgopt_op_operand(bn, "gamma"));
  b = mgopt_value_const(mgopt_op_operand(bn, "beta"));
  REQUIRE(mean && var && g && b);
  eps = mgopt_op_get_float(bn, "epsilon", 1e-5);
  CHECK(eps == 0.0);
  for (c = 0; c < 2; c++)
    for (i = 0; i < 100; i++) {
      double x = rnd(&seed), gc = c == 0 ? 2 : 3, bc = c == 0 ? 1 : -1;
      double y = (x - mgopt_tensor_get_f64(mean, c)) / sqrt(mgopt_tensor_get_f64(var, c) + eps) *
                     mgopt_tensor_get_f64(g, c) +
                 mgopt_tensor_get_f64(b, c);
      CHECK(y == gc * x + bc);
    }
  mgopt_program_destroy(p);
}

/* fuse_layernorm_or_instancenorm: layer_norm with the fused parameters gives
   what the decomposed ops give, both in double, to rounding. */
static void test_layernorm_matches_decomposition(void) {
  mgopt_program *p = parse(ln_text);
  mgopt_op *ln;
  mgopt_tensor *g, *b;
  double eps, x[4], mean = 0, var = 0;
  uint64_t seed = 777;
  int i, t;
  REQUIRE(p != NULL);
  CHECK_EQ_INT(run(p, "fuse_layernorm_or_instancenorm"), MGOPT_OK);
  ln = find(p, MGOPT_OP_layer_norm);
  REQUIRE(ln != NULL);
  CHECK_EQ_INT(mgopt_program_op_count(p), 3);
  g = mgopt_value_const(mgopt_op_operand(ln, "gamma"));
  b = mgopt_value_const(mgopt_op_operand(ln, "beta"));
  eps = mgopt_op_get_float(ln, "epsilon", 0);
  REQUIRE(g && b);
  CHECK(eps == (double)(float)1e-5f);
  for (t = 0; t < 20; t++) {
    mean = var = 0;
    for (i = 0; i < 4; i++) mean += (x[i] = rnd(&seed)) / 4;
    for (i = 0; i < 4; i++) var += (x[i] - mean) * (x[i] - mean) / 4;
    for (i = 0; i < 4; i++) {
      static const double gamma[4] = {1, 2, 3, 4}, beta[4] = {0, 1, 0, 1};
      double want = (x[i] - mean) / sqrt(var + (double)(float)1e-5f) * gamma[i] + beta[i];
      double got = (x[i] - mean) / sqrt(var + eps) * mgopt_tensor_get_f64(g, i) + mgopt_tensor_get_f64(b, i);
      CHECK(fabs(want - got) <= 1e-12 * (1 + fabs(want)));
    }
  }
  mgopt_program_destroy(p);
}

static int node_is(const mgopt_onnx_node *n, const char *op_type) {
  return n->op_type.len == strlen(op_type) && memcmp(n->op_type.ptr, op_type, n->op_type.len) == 0;
}

/* A linear over a rank-3 input is written as MatMul by the constant
   weight's transposed copy and Add, with no Transpose node and the weight
   written once; over a rank-2 input, as Gemm(transB=1). */
static void test_linear_export(void) {
  static const char rank3[] =
      "main(%x: (2, 5, 3, fp32)) {\n"
      "  %w: (2, 3, fp32)* = const(val=[[1, 2, 3], [4, 5, 6]])\n"
      "  %b: (2, fp32)* = const(val=[1, 2])\n"
      "  %y: (2, 5, 2, fp32) = linear(x=%x, weight=%w, bias=%b)\n"
      "} -> (%y)\n";
  static const char rank2[] =
      "main(%x: (5, 3, fp32)) {\n"
      "  %w: (2, 3, fp32)* = const(val=[[1, 2, 3], [4, 5, 6]])\n"
      "  %b: (2, fp32)* = const(val=[1, 2])\n"
      "  %y: (5, 2, fp32) = linear(x=%x, weight=%w, bias=%b)\n"
      "} -> (%y)\n";
  static const float want[6] = {1, 4, 2, 5, 3, 6};
  mgopt_onnx_export_options eo;
  mgopt_onnx_model *m = NULL;
  mgopt_diag d;
  mgopt_program *p = parse(rank3);
  const mgopt_onnx_graph *g;
  int64_t i, found = 0;
  int k;
  REQUIRE(p != NULL);
  memset(&eo, 0, sizeof eo);
  CHECK_EQ_INT(mgopt_onnx_export(p, &eo, &m, &d), MGOPT_OK);
  REQUIRE(m != NULL && m->graph != NULL);
  g = m->graph;
  REQUIRE(g->nnodes == 2);
  CHECK(node_is(&g->nodes[0], "MatMul") && node_is(&g->nodes[1], "Add"));
  CHECK_EQ_INT(g->ninitializers, 2);
  for (i = 0; i < g->ninitializers; i++) {
    const mgopt_onnx_tensor *t = &g->initializers[i];
    if (t->ndims != 2) continue;
    found = 1;
    CHECK(t->dims[0] == 3 && t->dims[1] == 2);
    REQUIRE(t->raw_data.len == sizeof want);
    for (k = 0; k < 6; k++) CHECK(harness_le_f32(t->raw_data.ptr + 4 * k) == want[k]);
    CHECK(g->nodes[0].ninputs == 2 && g->nodes[0].inputs[1].len == t->name.len &&
          memcmp(g->nodes[0].inputs[1].ptr, t->name.ptr, t->name.len) == 0);
  }
  CHECK(found);
  mgopt_program_destroy(p);
  p = parse(rank2);
  REQUIRE(p != NULL);
  CHECK_EQ_INT(mgopt_onnx_export(p, &eo, &m, &d), MGOPT_OK);
  REQUIRE(m != NULL && m->graph != NULL && m->graph->nnodes == 1);
  CHECK(node_is(&m->graph->nodes[0], "Gemm"));
  mgopt_program_destroy(p);
}

/* The weight fuse_matmul_weight_bias transposes into a linear over a rank-3
   input goes out as the bytes it was made from, without a copy back, while
   the linear's weight is unwritten; a negated one (c - matmul) is written as
   what it holds. */
static void test_matmul_weight_written_back(void) {
  static const char *const texts[2] = {
      "main(%x: (2, 5, 3, fp32)) {\n"
      "  %w: (3, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6]])\n"
      "  %m: (2, 5, 2, fp32) = matmul(x=%x, y=%w, transpose_x=false, transpose_y=false)\n"
      "  %c: (2, fp32)* = const(val=[1, 2])\n"
      "  %y: (2, 5, 2, fp32) = add(x=%m, y=%c)\n"
      "} -> (%y)\n",
      "main(%x: (2, 5, 3, fp32)) {\n"
      "  %w: (3, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6]])\n"
      "  %m: (2, 5, 2, fp32) = matmul(x=%x, y=%w, transpose_x=false, transpose_y=false)\n"
      "  %c: (2, fp32)* = const(val=[1, 2])\n"
      "  %y: (2, 5, 2, fp32) = sub(x=%c, y=%m)\n"
      "} -> (%y)\n"};
  static const float w[6] = {1, 2, 3, 4, 5, 6}, negw[6] = {-1, -2, -3, -4, -5, -6};
  int k;
  for (k = 0; k < 2; k++) {
    mgopt_onnx_export_options eo;
    mgopt_onnx_model *m = NULL;
    mgopt_diag d;
    mgopt_program *p = parse(texts[k]);
    const mgopt_onnx_graph *g;
    mgopt_op *wop;
    const void *wdata;
    int64_t i, found = 0;
    REQUIRE(p != NULL);
    for (wop = mgopt_program_function_at(p, 0)->body->first; wop; wop = wop->next)
      if (wop->kind == MGOPT_OP_const && strcmp(wop->outs[0]->name, "w") == 0) break;
    REQUIRE(wop != NULL);
    wdata = mgopt_value_const(wop->outs[0])->data;
    CHECK_EQ_INT(run(p, "fuse_matmul_weight_bias"), MGOPT_OK);
    REQUIRE(find(p, MGOPT_OP_linear) != NULL);
    memset(&eo, 0, sizeof eo);
    CHECK_EQ_INT(mgopt_onnx_export(p, &eo, &m, &d), MGOPT_OK);
    REQUIRE(m != NULL && m->graph != NULL);
    g = m->graph;
    for (i = 0; i < g->ninitializers; i++) {
      const mgopt_onnx_tensor *t = &g->initializers[i];
      if (t->ndims != 2) continue;
      found++;
      CHECK(t->dims[0] == 3 && t->dims[1] == 2);
      REQUIRE(t->raw_data.len == sizeof w);
      {
        const uint16_t one = 1;
        int j, host_le = *(const unsigned char *)&one == 1;
        for (j = 0; j < 6; j++)
          CHECK(harness_le_f32((const unsigned char *)t->raw_data.ptr + 4 * j) == (k ? negw[j] : w[j]));
        if (host_le) /* zero copy only where the host's byte order is ONNX's */
          CHECK(k ? (const void *)t->raw_data.ptr != wdata : (const void *)t->raw_data.ptr == wdata);
      }
    }
    CHECK_EQ_INT(found, 1);
    mgopt_program_destroy(p);
  }
}

static const test_case tests[] = {
    TEST(test_linear_export),
    TEST(test_matmul_weight_written_back),
    TEST(test_target_refusal),
    TEST(test_linear_bias_rounds_once),
    TEST(test_matmul_linear_exact),
    TEST(test_batchnorm_exact),
    TEST(test_layernorm_matches_decomposition),
};

TEST_MAIN(tests)
