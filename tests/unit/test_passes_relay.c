/* tests/unit/test_passes_relay.c — relay passes through the API: a caller's legalizations (registration, selection, declining, target refusal), gelu's elementwise forms against a double-precision computation, and the bias_add op (type inference, evaluation, ONNX export, canonicalize_op). */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include "pass_harness.h"
#include <math.h>   /* erf, tanh, exp: the reference gelu */
#include <stdlib.h> /* free of the printed texts */

static int count_kind(mgopt_program *p, int32_t kind) {
  mgopt_op *op;
  int n = 0;
  for (op = mgopt_program_function_at(p, 0)->body->first; op; op = op->next) n += op->kind == kind;
  return n;
}

static mgopt_status run_with(mgopt_program *p, const char *pipeline, const mgopt_legalize_config *lc) {
  mgopt_pipeline_options ro;
  mgopt_diag d;
  mgopt_status s;
  memset(&ro, 0, sizeof ro);
  ro.verify_each = 1;
  ro.strict = 1;
  ro.legalize_config = lc;
  s = mgopt_pipeline_run(p, mgopt_builtin_registry(), pipeline, &ro, &d);
  if (s != MGOPT_OK) printf("pipeline %s: %s\n", pipeline, d.msg);
  return s;
}

/* relu(x) = maximum(x, 0); counts its calls in *ud; declines for target "keep" */
static mgopt_value *relu_to_maximum(void *ud, mgopt_rewriter *rw, mgopt_op *op, const char *target) {
  static const char *const slots[2] = {"x", "y"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *vals[2];
  mgopt_op *m;
  mgopt_tensor *zero;
  (*(int *)ud)++;
  if (strcmp(target, "keep") == 0) return NULL;
  vals[0] = mgopt_op_operand(op, "x");
  zero = mgopt_tensor_new_scalar_f64(p, (mgopt_dtype)vals[0]->type.dtype, 0.0);
  vals[1] = zero ? mgopt_rw_const(rw, op, mgopt_program_fresh_name(p, "zero"), zero) : NULL;
  if (!vals[1]) return NULL;
  m = mgopt_rw_create(rw, op, "maximum", mgopt_program_fresh_name(p, "relu_max"), 2, slots, vals, 1);
  return m ? m->outs[0] : NULL;
}

/* builds two ops and declines: the pass must take them back */
static mgopt_value *build_then_decline(void *ud, mgopt_rewriter *rw, mgopt_op *op, const char *target) {
  static const char *const slot[1] = {"x"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x");
  mgopt_op *a, *b;
  (void)target;
  (*(int *)ud)++;
  a = mgopt_rw_create(rw, op, "exp", mgopt_program_fresh_name(p, "tmp"), 1, slot, &x, 1);
  b = a ? mgopt_rw_create(rw, op, "exp", mgopt_program_fresh_name(p, "tmp"), 1, slot, &a->outs[0], 1) : NULL;
  (void)b;
  return NULL;
}

static const char relu_text[] =
    "main(%x: (2, 3, fp32)) {\n"
    "  %a: (2, 3, fp32) = relu(x=%x)\n"
    "  %b: (2, 3, fp32) = relu(x=%a)\n"
    "} -> (%b)\n";

static void test_caller_legalization(void) {
  mgopt_legalization rule;
  mgopt_legalize_config lc;
  mgopt_program *p = parse(relu_text);
  int calls = 0;
  char *out;
  REQUIRE(p != NULL);
  rule.op_type = "relu";
  rule.name = NULL; /* unnamed: applies whatever ops selects */
  rule.fn = relu_to_maximum;
  rule.ud = &calls;
  lc.rules = &rule;
  lc.nrules = 1;
  CHECK(run_with(p, "relay::legalize{ops=\"\"}", &lc) == MGOPT_OK);
  CHECK_EQ_INT(calls, 2);
  CHECK_EQ_INT(count_kind(p, MGOPT_OP_relu), 0);
  CHECK_EQ_INT(count_kind(p, MGOPT_OP_maximum), 2);
  out = print(p);
  REQUIRE(out != NULL);
  /* the result takes the op's output name; the function output stays %b */
  CHECK(strstr(out, "%b: (2, 3, fp32) = maximum(x=%a") != NULL);
  CHECK(strstr(out, "} -> (%b)") != NULL);
  free(out);
  mgopt_program_destroy(p);
}

static void test_caller_legalization_selection(void) {
  mgopt_legalization rule;
  mgopt_legalize_config lc;
  mgopt_program *p = parse(relu_text);
  int calls = 0;
  REQUIRE(p != NULL);
  rule.op_type = "relu";
  rule.name = "relu_max";
  rule.fn = relu_to_maximum;
  rule.ud = &calls;
  lc.rules = &rule;
  lc.nrules = 1;
  /* named, not selected: never called */
  CHECK(run_with(p, "relay::legalize{ops=gelu}", &lc) == MGOPT_OK);
  CHECK_EQ_INT(calls, 0);
  CHECK_EQ_INT(count_kind(p, MGOPT_OP_relu), 2);
  /* declining (target "keep"): called, nothing changes */
  CHECK(run_with(p, "relay::legalize{ops=relu_max, target=keep}", &lc) == MGOPT_OK);
  CHECK_EQ_INT(calls, 2);
  CHECK_EQ_INT(count_kind(p, MGOPT_OP_relu), 2);
  CHECK_EQ_INT(count_kind(p, MGOPT_OP_const), 0);
  /* selected by name among others */
  CHECK(run_with(p, "relay::legalize{ops=\"gelu,relu_max\"}", &lc) == MGOPT_OK);
  CHECK_EQ_INT(count_kind(p, MGOPT_OP_relu), 0);
  mgopt_program_destroy(p);
}

static void test_declined_ops_taken_back(void) {
  mgopt_legalization rule;
  mgopt_legalize_config lc;
  mgopt_program *p = parse(relu_text);
  int calls = 0;
  char *before, *after;
  REQUIRE(p != NULL);
  before = print(p);
  rule.op_type = "relu";
  rule.name = NULL;
  rule.fn = build_then_decline;
  rule.ud = &calls;
  lc.rules = &rule;
  lc.nrules = 1;
  CHECK(run_with(p, "relay::legalize", &lc) == MGOPT_OK);
  CHECK(calls >= 2); /* an op whose neighbourhood changed is visited again */
  after = print(p);
  REQUIRE(before != NULL && after != NULL);
  CHECK_EQ_STR(after, before);
  free(before);
  free(after);
  mgopt_program_destroy(p);
}

/* the target refuses erf */
static int refuse_erf(const mgopt_program *p, const mgopt_op *op, void *ud) {
  (void)p;
  (void)ud;
  return op->kind != MGOPT_OP_erf;
}

static void test_target_refusal(void) {
  mgopt_program *p = parse(
      "main(%x: (4, fp32)) {\n"
      "  %y: (4, fp32) = gelu(x=%x)\n"
      "  %z: (4, fp32) = gelu(x=%y, mode=\"TANH_APPROXIMATION\")\n"
      "} -> (%z)\n");
  REQUIRE(p != NULL);
  mgopt_program_set_target(p, refuse_erf, NULL);
  CHECK(run(p, "relay::legalize{ops=gelu}") == MGOPT_OK);
  /* the exact gelu needs erf: it stays, with nothing left of the attempt; the tanh form goes through */
  CHECK_EQ_INT(count_kind(p, MGOPT_OP_gelu), 1);
  CHECK_EQ_INT(count_kind(p, MGOPT_OP_erf), 0);
  CHECK_EQ_INT(count_kind(p, MGOPT_OP_tanh), 1);
  CHECK_EQ_INT(count_kind(p, MGOPT_OP_const), 4);
  mgopt_program_destroy(p);
}

static double gelu_ref(double x, int mode) {
  if (mode == 1) return 0.5 * x * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
  if (mode == 2) return x / (1.0 + exp(-1.702 * x));
  return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
}

/* the elementwise forms in fp32 stay within a few ulp of gelu computed in double */
static void test_gelu_forms_against_double(void) {
  static const char *const modes[3] = {"EXACT", "TANH_APPROXIMATION", "SIGMOID_APPROXIMATION"};
  int m;
  for (m = 0; m < 3; m++) {
    static const int64_t shape[1] = {64};
    char text[256];
    mgopt_program *p;
    mgopt_tensor *in, *out = NULL;
    mgopt_diag d;
    int64_t i;
    double worst = 0;
    snprintf(text, sizeof text, "main(%%x: (64, fp32)) {\n  %%y: (64, fp32) = gelu(x=%%x, mode=\"%s\")\n} -> (%%y)\n",
             modes[m]);
    p = parse(text);
    REQUIRE(p != NULL);
    CHECK(run(p, "relay::legalize{ops=gelu}") == MGOPT_OK);
    CHECK_EQ_INT(count_kind(p, MGOPT_OP_gelu), 0);
    in = mgopt_eval_tensor_new(p, MGOPT_DT_FP32, 1, shape);
    REQUIRE(in != NULL);
    for (i = 0; i < 64; i++) mgopt_tensor_set_f64(in, i, -6.0 + 12.0 * (double)i / 63.0);
    CHECK(mgopt_eval(p, NULL, &in, 1, &out, 1, NULL, &d) == MGOPT_OK);
    if (out) {
      for (i = 0; i < 64; i++) {
        double x = mgopt_tensor_get_f64(in, i), e = fabs(mgopt_tensor_get_f64(out, i) - gelu_ref(x, m));
        double tol = 8.0 * 1.2e-7 * (1.0 + fabs(x));
        if (e / tol > worst) worst = e / tol;
      }
      CHECK(worst <= 1.0);
    }
    mgopt_eval_tensor_free(p, in);
    mgopt_eval_tensor_free(p, out);
    mgopt_program_destroy(p);
  }
}


static const char bias_add_text[] =
    "main(%x: (2, 3, 2, 2, fp32)) {\n"
    "  %b: (3, fp32)* = const(val=[0.5, -1, 2])\n"
    "  %y: (2, 3, 2, 2, fp32) = bias_add(x=%x, bias=%b)\n"
    "} -> (%y)\n";

/* main of p on x = 0.25 * i - 3 (24 elements); NULL when evaluation fails */
static mgopt_tensor *eval_bias_add(mgopt_program *p) {
  static const int64_t shape[4] = {2, 3, 2, 2};
  mgopt_tensor *in = mgopt_eval_tensor_new(p, MGOPT_DT_FP32, 4, shape), *out = NULL;
  mgopt_diag d;
  int64_t i;
  if (!in) return NULL;
  for (i = 0; i < 24; i++) mgopt_tensor_set_f64(in, i, 0.25 * (double)i - 3.0);
  if (mgopt_eval(p, NULL, &in, 1, &out, 1, NULL, &d) != MGOPT_OK) {
    printf("eval: %s\n", d.msg);
    out = NULL;
  }
  mgopt_eval_tensor_free(p, in);
  return out;
}

/* bias_add evaluates to x + bias[c] (c = the index along axis 1), like its canonical form */
static void test_bias_add_eval(void) {
  static const double bias[3] = {0.5, -1, 2};
  mgopt_program *p = parse(bias_add_text);
  mgopt_tensor *a, *b;
  int64_t i;
  REQUIRE(p != NULL);
  a = eval_bias_add(p);
  REQUIRE(a != NULL);
  for (i = 0; i < 24; i++) CHECK(mgopt_tensor_get_f64(a, i) == 0.25 * (double)i - 3.0 + bias[(i / 4) % 3]);
  CHECK(run(p, "relay::canonicalize_op") == MGOPT_OK);
  CHECK_EQ_INT(count_kind(p, MGOPT_OP_bias_add), 0);
  b = eval_bias_add(p);
  REQUIRE(b != NULL);
  for (i = 0; i < 24; i++) CHECK(mgopt_tensor_get_f64(a, i) == mgopt_tensor_get_f64(b, i));
  mgopt_eval_tensor_free(p, a);
  mgopt_eval_tensor_free(p, b);
  mgopt_program_destroy(p);
}

/* a bias whose size is not x's dim at axis, of rank 2, or an axis out of range: the verifier rejects it */
static void test_bias_add_verify(void) {
  static const char *const bad[3] = {
      "main(%x: (1, 2, 3, fp32)) {\n  %b: (3, fp32)* = const(val=[1, 2, 3])\n"
      "  %y: (1, 2, 3, fp32) = bias_add(x=%x, bias=%b)\n} -> (%y)\n",
      "main(%x: (1, 2, 3, fp32), %b: (2, 1, fp32)) {\n"
      "  %y: (1, 2, 3, fp32) = bias_add(x=%x, bias=%b)\n} -> (%y)\n",
      "main(%x: (1, 2, 3, fp32), %b: (2, fp32)) {\n"
      "  %y: (1, 2, 3, fp32) = bias_add(x=%x, bias=%b, axis=3)\n} -> (%y)\n"};
  int i;
  for (i = 0; i < 3; i++) {
    mgopt_program *p = parse(bad[i]);
    mgopt_diag d;
    REQUIRE(p != NULL);
    CHECK(mgopt_program_verify(p, &d) != MGOPT_OK);
    mgopt_program_destroy(p);
  }
}

/* ONNX export writes bias_add as Add with the bias as a (C, 1, 1)
   initializer; read back, the model computes the same values */
static void test_bias_add_onnx(void) {
  mgopt_onnx_export_options eo;
  mgopt_onnx_write_options wo;
  mgopt_onnx_model *m = NULL;
  mgopt_program *p = parse(bias_add_text), *q = NULL;
  mgopt_buf buf;
  mgopt_diag d;
  mgopt_tensor *a, *b;
  int64_t i, found = 0;
  REQUIRE(p != NULL);
  memset(&eo, 0, sizeof eo);
  memset(&wo, 0, sizeof wo);
  memset(&buf, 0, sizeof buf);
  CHECK_EQ_INT(mgopt_onnx_export(p, &eo, &m, &d), MGOPT_OK);
  REQUIRE(m != NULL && m->graph != NULL);
  REQUIRE(m->graph->nnodes == 1);
  CHECK(m->graph->nodes[0].op_type.len == 3 && memcmp(m->graph->nodes[0].op_type.ptr, "Add", 3) == 0);
  for (i = 0; i < m->graph->ninitializers; i++) {
    const mgopt_onnx_tensor *t = &m->graph->initializers[i];
    if (t->ndims == 3 && t->dims[0] == 3 && t->dims[1] == 1 && t->dims[2] == 1) found = 1;
  }
  CHECK(found);
  CHECK_EQ_INT(mgopt_onnx_write(m, &wo, &buf, NULL, &d), MGOPT_OK);
  CHECK_EQ_INT(mgopt_onnx_load(buf.data, buf.len, NULL, &q, &d), MGOPT_OK);
  REQUIRE(q != NULL);
  a = eval_bias_add(p);
  b = eval_bias_add(q);
  REQUIRE(a != NULL && b != NULL);
  for (i = 0; i < 24; i++) CHECK(mgopt_tensor_get_f64(a, i) == mgopt_tensor_get_f64(b, i));
  mgopt_eval_tensor_free(p, a);
  mgopt_eval_tensor_free(q, b);
  mgopt_program_destroy(q);
  mgopt_buf_free(&buf);
  mgopt_program_destroy(p);
}

static const test_case tests[] = {
    TEST(test_caller_legalization),
    TEST(test_caller_legalization_selection),
    TEST(test_declined_ops_taken_back),
    TEST(test_target_refusal),
    TEST(test_gelu_forms_against_double),
    TEST(test_bias_add_eval),
    TEST(test_bias_add_verify),
    TEST(test_bias_add_onnx),
};
TEST_MAIN(tests)
