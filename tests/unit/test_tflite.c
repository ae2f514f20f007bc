/* tests/unit/test_tflite.c — the composite registry of tflite::fuse_composite_functions (the caller's composites, bindings, reports, the target's refusal) and what golden text cannot show of the tflite passes. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <math.h> /* fabs */

static const char *const emb_text =
    "\"t::lookup\" attributes(implements=\"embedding_lookup\") (%w: (4, 2, fp32), %ids: (3, int32)) {\n"
    "  %r: (3, 2, fp32) = gather(x=%w, indices=%ids, axis=0, batch_dims=0)\n"
    "} -> (%r)\n"
    "\"t::custom\" attributes(implements=\"rt_scale\", factor=3) (%a: (3, 2, fp32)) {\n"
    "  %k: (fp32)* = const(val=3)\n"
    "  %r: (3, 2, fp32) = mul(x=%a, y=%k)\n"
    "} -> (%r)\n"
    "\"t::unknown\" attributes(implements=\"nobody_knows\") (%a: (3, 2, fp32)) {\n"
    "  %r: (3, 2, fp32) = relu(x=%a)\n"
    "} -> (%r)\n"
    "\"dom::Emb\"(%w: (4, 2, fp32), %ids: (3, int32)) {\n"
    "  %r: (3, 2, fp32) = gather(x=%w, indices=%ids, axis=0, batch_dims=0)\n"
    "} -> (%r)\n"
    "main(%w: (4, 2, fp32), %ids: (3, int32)) {\n"
    "  %y: (3, 2, fp32) = \"t::lookup\"(in0=%w, in1=%ids)\n"
    "  %s: (3, 2, fp32) = \"t::custom\"(in0=%y)\n"
    "  %u: (3, 2, fp32) = \"t::unknown\"(in0=%s)\n"
    "  %v: (3, 2, fp32) = \"dom::Emb\"(in0=%w, in1=%ids)\n"
    "  %o: (3, 2, fp32) = add(x=%u, y=%v)\n"
    "} -> (%o)\n";

typedef struct reports {
  int n;
  char what[8][160];
} reports;

static void on_report(void *ud, const mgopt_function *f, const mgopt_op *call, const char *implements, const char *why) {
  reports *r = (reports *)ud;
  (void)call;
  if (r->n < 8) snprintf(r->what[r->n], sizeof r->what[0], "%s %s: %s", f->name, implements, why ? why : "");
  r->n++;
}

/* The caller's composite: the call becomes an opaque op of the runtime, with
   the function's `factor` attribute carried over. */
static int fuse_rt_scale(mgopt_program *p, mgopt_op *call, mgopt_function *callee, int build, mgopt_value **outs,
                         char *why, size_t why_cap, void *ud) {
  static const char *const slots[1] = {"x"};
  const mgopt_attr *a = mgopt_function_attr(callee, "factor");
  mgopt_value *x = mgopt_op_operand(call, "in0");
  mgopt_op *op;
  (*(int *)ud)++;
  if (!a || a->kind != MGOPT_ATTR_INT || !x) {
    snprintf(why, why_cap, "no factor");
    return 0;
  }
  if (!build) return 1;
  op = mgopt_build_op(p, call->parent, call, "rt::Scale", call->outs[0]->name, 1, slots, &x, 1);
  if (!op || mgopt_op_set_int(op, "factor", a->u.i)) return -1;
  op->outs[0]->type = call->outs[0]->type;
  outs[0] = op->outs[0];
  return 1;
}

static int count_type(mgopt_program *p, const char *type) {
  const mgopt_op *op;
  int n = 0;
  for (op = mgopt_program_function(p, "main")->body->first; op; op = op->next) n += strcmp(op->type, type) == 0;
  return n;
}

static mgopt_program *run(const char *text, const char *pipeline, const mgopt_composites *c, mgopt_status *st) {
  mgopt_program *p = NULL;
  mgopt_diag d;
  mgopt_pipeline_options o;
  memset(&o, 0, sizeof o);
  o.verify_each = 1;
  o.strict = 1;
  o.composites = c;
  if (mgopt_mil_parse(text, strlen(text), NULL, &p, &d) != MGOPT_OK) {
    printf("parse error %d:%d: %s\n", d.line, d.col, d.msg);
    return NULL;
  }
  *st = mgopt_pipeline_run(p, mgopt_builtin_registry(), pipeline, &o, &d);
  if (*st) printf("  (%s)\n", d.msg);
  return p;
}

static void test_caller_composites_bindings_and_reports(void) {
  int calls = 0;
  mgopt_composite mine = {"rt_scale", fuse_rt_scale, NULL};
  mgopt_composite_binding bind = {"dom::Emb", "embedding_lookup"};
  mgopt_composites c;
  reports r;
  mgopt_status st;
  mgopt_program *p;
  memset(&c, 0, sizeof c);
  memset(&r, 0, sizeof r);
  mine.ud = &calls;
  c.composites = &mine;
  c.ncomposites = 1;
  c.bindings = &bind;
  c.nbindings = 1;
  c.report = on_report;
  c.report_ud = &r;
  p = run(emb_text, "fuse_composite_functions", &c, &st);
  REQUIRE(p != NULL);
  CHECK(st == MGOPT_OK);
  CHECK_EQ_INT(count_type(p, "gather"), 2); /* the attribute and the binding */
  CHECK_EQ_INT(count_type(p, "rt::Scale"), 1);
  CHECK_EQ_INT(count_type(p, "t::unknown"), 1);
  CHECK_EQ_INT(calls, 1);
  CHECK(mgopt_program_function(p, "t::lookup") == NULL);
  CHECK(mgopt_program_function(p, "t::unknown") != NULL);
  CHECK_EQ_INT(r.n, 1);
  CHECK(strstr(r.what[0], "t::unknown nobody_knows") != NULL);
  mgopt_program_destroy(p);
}

static void test_no_builtins_and_no_default_names(void) {
  mgopt_composites c;
  mgopt_status st;
  mgopt_program *p;
  reports r;
  memset(&c, 0, sizeof c);
  memset(&r, 0, sizeof r);
  c.no_builtins = 1;
  c.report = on_report;
  c.report_ud = &r;
  p = run(emb_text, "fuse_composite_functions", &c, &st);
  REQUIRE(p != NULL);
  CHECK_EQ_INT(count_type(p, "gather"), 0);
  CHECK_EQ_INT(r.n, 3); /* embedding_lookup, rt_scale, nobody_knows: none known */
  mgopt_program_destroy(p);
  /* an ONNX function named domain::embedding_lookup matches only with default names on */
  {
    static const char *const text = "\"d::embedding_lookup\"(%w: (4, 2, fp32), %ids: (3, int32)) {\n"
                                     "  %r: (3, 2, fp32) = gather(x=%w, indices=%ids, axis=0, batch_dims=0)\n"
                                     "} -> (%r)\n"
                                     "main(%w: (4, 2, fp32), %ids: (3, int32)) {\n"
                                     "  %y: (3, 2, fp32) = \"d::embedding_lookup\"(in0=%w, in1=%ids)\n"
                                     "} -> (%y)\n";
    memset(&c, 0, sizeof c);
    c.no_default_names = 1;
    p = run(text, "fuse_composite_functions", &c, &st);
    REQUIRE(p != NULL);
    CHECK_EQ_INT(count_type(p, "gather"), 0);
    mgopt_program_destroy(p);
    p = run(text, "fuse_composite_functions", NULL, &st);
    REQUIRE(p != NULL);
    CHECK_EQ_INT(count_type(p, "gather"), 1);
    mgopt_program_destroy(p);
  }
}

static int refuse_gather(const mgopt_program *p, const mgopt_op *op, void *ud) {
  (void)p;
  if (strcmp(op->type, "gather") != 0) return 1;
  (*(int *)ud)++;
  return 0;
}

/* A target that cannot express the fused op: the call stays, reported. */
static void test_target_refuses_fused_op(void) {
  mgopt_composites c;
  mgopt_status st;
  mgopt_program *p = NULL;
  mgopt_diag d;
  mgopt_pipeline_options o;
  reports r;
  int asked = 0;
  static const char *const text = "\"t::lookup\" attributes(implements=\"embedding_lookup\") (%w: (4, 2, fp32), %ids: (3, int32)) {\n"
                                   "  %r: (3, 2, fp32) = gather(x=%w, indices=%ids, axis=0, batch_dims=0)\n"
                                   "} -> (%r)\n"
                                   "main(%w: (4, 2, fp32), %ids: (3, int32)) {\n"
                                   "  %y: (3, 2, fp32) = \"t::lookup\"(in0=%w, in1=%ids)\n"
                                   "} -> (%y)\n";
  memset(&c, 0, sizeof c);
  memset(&r, 0, sizeof r);
  c.report = on_report;
  c.report_ud = &r;
  memset(&o, 0, sizeof o);
  o.verify_each = 1;
  o.composites = &c;
  REQUIRE(mgopt_mil_parse(text, strlen(text), NULL, &p, &d) == MGOPT_OK);
  mgopt_program_set_target(p, refuse_gather, &asked);
  st = mgopt_pipeline_run(p, mgopt_builtin_registry(), "fuse_composite_functions", &o, &d);
  CHECK(st == MGOPT_OK);
  CHECK_EQ_INT(asked, 1);
  CHECK_EQ_INT(count_type(p, "gather"), 0);
  CHECK_EQ_INT(count_type(p, "t::lookup"), 1);
  CHECK_EQ_INT(r.n, 1);
  CHECK(strstr(r.what[0], "target") != NULL);
  mgopt_program_destroy(p);
}

/* ---------------------------------------------------------------- fused activations */

static const char *const fused_text =
    "main(%x: (1, 2, 2, 2, fp32), %u: (3, 2, fp32)) {\n"
    "  %w: (2, 2, 1, 1, fp32)* = const(val=[[[[3]], [[-2]]], [[[4]], [[5]]]])\n"
    "  %b: (2, fp32)* = const(val=[0.5, -1])\n"
    "  %c: (1, 2, 2, 2, fp32) = conv(x=%x, weight=%w, bias=%b)\n"
    "  %y: (1, 2, 2, 2, fp32) = relu6(x=%c)\n"
    "  %lw: (2, 2, fp32)* = const(val=[[2, -1], [-3, 4]])\n"
    "  %l: (3, 2, fp32) = linear(x=%u, weight=%lw)\n"
    "  %z: (3, 2, fp32) = relu(x=%l)\n"
    "} -> (%y, %z)\n";

static int eval2(mgopt_program *p, mgopt_tensor **outs) {
  static const int64_t xs[5] = {1, 2, 2, 2}, us[2] = {3, 2};
  mgopt_tensor *in[2];
  mgopt_diag d;
  int64_t i;
  int ok;
  in[0] = mgopt_eval_tensor_new(p, MGOPT_DT_FP32, 4, xs);
  in[1] = mgopt_eval_tensor_new(p, MGOPT_DT_FP32, 2, us);
  if (!in[0] || !in[1]) return 0;
  for (i = 0; i < 8; i++) mgopt_tensor_set_f64(in[0], i, -3.0 + 1.1 * (double)i);
  for (i = 0; i < 6; i++) mgopt_tensor_set_f64(in[1], i, 2.5 - 1.3 * (double)i);
  ok = mgopt_eval(p, NULL, in, 2, outs, 2, NULL, &d) == MGOPT_OK;
  if (!ok) printf("  eval: %s\n", d.msg);
  mgopt_eval_tensor_free(p, in[0]);
  mgopt_eval_tensor_free(p, in[1]);
  return ok;
}

/* The evaluator applies fused_activation: the fused program computes what
   the separate ops did, bit for bit; the ONNX writer writes the plain
   sequence (Conv, Clip; Gemm, Relu), which reads back to the same values. */
static void test_fused_activation_evaluates_and_writes_back(void) {
  mgopt_status st;
  mgopt_program *p = run(fused_text, "none", NULL, &st), *q = run(fused_text, "fuse_activation", NULL, &st), *r = NULL;
  mgopt_tensor *a[2] = {NULL, NULL}, *b[2] = {NULL, NULL}, *c[2] = {NULL, NULL};
  mgopt_onnx_model *e = NULL, *m = NULL;
  mgopt_buf bytes;
  mgopt_diag d;
  int64_t i, k, nrelu = 0, nclip = 0, nconv = 0, ngemm = 0;
  memset(&bytes, 0, sizeof bytes);
  REQUIRE(p && q);
  CHECK_EQ_INT(count_type(q, "relu"), 0);
  CHECK_EQ_INT(count_type(q, "relu6"), 0);
  REQUIRE(eval2(p, a) && eval2(q, b));
  for (k = 0; k < 2; k++)
    for (i = 0; i < a[k]->numel; i++) CHECK(mgopt_tensor_get_f64(a[k], i) == mgopt_tensor_get_f64(b[k], i));
  CHECK(mgopt_tensor_get_f64(b[0], 0) == 0.0); /* the clamps bite: some values were below 0, some above 6 */
  for (i = 0, k = 0; i < b[0]->numel; i++) k += mgopt_tensor_get_f64(b[0], i) == 6.0;
  CHECK(k > 0);
  REQUIRE(mgopt_onnx_export(q, NULL, &e, &d) == MGOPT_OK);
  for (i = 0; i < e->graph->nnodes; i++) {
    const mgopt_str *t = &e->graph->nodes[i].op_type;
    nrelu += t->len == 4 && memcmp(t->ptr, "Relu", 4) == 0;
    nclip += t->len == 4 && memcmp(t->ptr, "Clip", 4) == 0;
    nconv += t->len == 4 && memcmp(t->ptr, "Conv", 4) == 0;
    ngemm += t->len == 4 && memcmp(t->ptr, "Gemm", 4) == 0;
  }
  CHECK(nrelu == 1 && nclip == 1 && nconv == 1 && ngemm == 1);
  REQUIRE(mgopt_onnx_write(e, NULL, &bytes, NULL, &d) == MGOPT_OK);
  REQUIRE(mgopt_onnx_read(bytes.data, bytes.len, NULL, &m, &d) == MGOPT_OK);
  REQUIRE(mgopt_onnx_import(m, &d) == MGOPT_OK);
  r = m->program;
  REQUIRE(eval2(r, c));
  for (k = 0; k < 2; k++)
    for (i = 0; i < a[k]->numel; i++) CHECK(mgopt_tensor_get_f64(a[k], i) == mgopt_tensor_get_f64(c[k], i));
  for (k = 0; k < 2; k++) {
    mgopt_eval_tensor_free(p, a[k]);
    mgopt_eval_tensor_free(q, b[k]);
    mgopt_eval_tensor_free(r, c[k]);
  }
  mgopt_program_destroy(r);
  mgopt_buf_free(&bytes);
  mgopt_program_destroy(p);
  mgopt_program_destroy(q);
}

/* An unknown fused_activation is refused by the writer, not written wrong. */
static void test_unknown_fused_activation_refused(void) {
  static const char *const text = "main(%u: (3, 2, fp32)) {\n"
                                   "  %lw: (2, 2, fp32)* = const(val=[[2, -1], [-3, 4]])\n"
                                   "  %l: (3, 2, fp32) = linear(x=%u, weight=%lw, fused_activation=\"tanh\")\n"
                                   "} -> (%l)\n";
  mgopt_status st;
  mgopt_program *p = run(text, "none", NULL, &st);
  mgopt_onnx_model *e = NULL;
  mgopt_diag d;
  REQUIRE(p != NULL);
  CHECK(mgopt_onnx_export(p, NULL, &e, &d) == MGOPT_ERR_UNSUPPORTED);
  mgopt_program_destroy(p);
}

static mgopt_program *load_onnx(const char *path, const char *pipeline) {
  mgopt_onnx_model *m = NULL;
  mgopt_diag d;
  mgopt_pipeline_options o;
  mgopt_diag_clear(&d);
  if (mgopt_onnx_read_file(path, NULL, &m, &d) != MGOPT_OK || mgopt_onnx_import(m, &d) != MGOPT_OK) {
    printf("  %s: %s\n", path, d.msg);
    return NULL;
  }
  memset(&o, 0, sizeof o);
  o.verify_each = 1;
  o.strict = 1;
  if (mgopt_pipeline_run(m->program, mgopt_builtin_registry(), pipeline, &o, &d) != MGOPT_OK) {
    printf("  %s: %s\n", pipeline, d.msg);
    mgopt_program_destroy(m->program);
    return NULL;
  }
  return m->program;
}

/* Evaluates main on fixed inputs (x [2, 4, 3], four states [2, 5]) into out[3]; 1 when it ran. */
static int eval_bilstm(mgopt_program *p, mgopt_tensor **out) {
  static const int64_t xs[3] = {2, 4, 3}, ss[2] = {2, 5};
  mgopt_tensor *in[5];
  mgopt_eval_options o;
  mgopt_diag d;
  int32_t i;
  int64_t k;
  int ok;
  for (i = 0; i < 5; i++) {
    in[i] = mgopt_eval_tensor_new(p, MGOPT_DT_FP32, i ? 2 : 3, i ? ss : xs);
    for (k = 0; in[i] && k < in[i]->numel; k++) mgopt_tensor_set_f64(in[i], k, (double)((k * 7 + i * 3) % 11 - 5) / 4.0);
  }
  memset(&o, 0, sizeof o);
  o.op_fn = mgopt_onnx_eval_op;
  ok = mgopt_eval(p, NULL, in, 5, out, 3, &o, &d) == MGOPT_OK;
  if (!ok) printf("  eval: %s\n", d.msg);
  for (i = 0; i < 5; i++) mgopt_eval_tensor_free(p, in[i]);
  return ok;
}

/* The Keras Bidirectional(LSTM) fixture (tests/fixtures/tflite/mk_keras_bilstm.py):
   the two composite calls become one bidirectional lstm that computes what
   the inlined functions compute, written as one ONNX LSTM and no function. */
static void test_keras_bilstm_fixture(void) {
  const char *path = "tests/fixtures/tflite/keras_bilstm.onnx";
  mgopt_program *ref = load_onnx(path, "tflite::inline_functions");
  mgopt_program *p = load_onnx(path, "tflite::fuse_composite_functions,dead_code_elimination");
  mgopt_tensor *a[3] = {NULL, NULL, NULL}, *b[3] = {NULL, NULL, NULL};
  const mgopt_op *op;
  mgopt_onnx_model *e = NULL, *back = NULL;
  mgopt_buf bytes;
  mgopt_diag d;
  int nlstm = 0, nbi = 0, k;
  int64_t j;
  REQUIRE(ref && p);
  CHECK_EQ_INT(mgopt_program_function_count(p), 1);
  for (op = mgopt_program_function(p, "main")->body->first; op; op = op->next)
    if (op->kind == MGOPT_OP_lstm) {
      nlstm++;
      nbi += strcmp(mgopt_op_get_string(op, "direction", NULL), "bidirectional") == 0;
    }
  CHECK_EQ_INT(nlstm, 1);
  CHECK_EQ_INT(nbi, 1);
  REQUIRE(eval_bilstm(ref, a) && eval_bilstm(p, b));
  for (k = 0; k < 3; k++) {
    CHECK(a[k]->numel == b[k]->numel && a[k]->numel > 0);
    for (j = 0; j < a[k]->numel && j < b[k]->numel; j++)
      CHECK(fabs(mgopt_tensor_get_f64(a[k], j) - mgopt_tensor_get_f64(b[k], j)) <= 1e-5);
    mgopt_eval_tensor_free(ref, a[k]);
    mgopt_eval_tensor_free(p, b[k]);
  }
  memset(&bytes, 0, sizeof bytes);
  mgopt_diag_clear(&d);
  REQUIRE(mgopt_onnx_export(p, NULL, &e, &d) == MGOPT_OK && mgopt_onnx_write(e, NULL, &bytes, NULL, &d) == MGOPT_OK);
  REQUIRE(mgopt_onnx_read(bytes.data, bytes.len, NULL, &back, &d) == MGOPT_OK);
  CHECK_EQ_INT((int)back->nfunctions, 0);
  nlstm = 0;
  for (j = 0; j < back->graph->nnodes; j++)
    if (back->graph->nodes[j].op_type.len == 4 && memcmp(back->graph->nodes[j].op_type.ptr, "LSTM", 4) == 0) nlstm++;
  CHECK_EQ_INT(nlstm, 1);
  mgopt_program_destroy(back->program);
  mgopt_buf_free(&bytes);
  mgopt_program_destroy(p);
  mgopt_program_destroy(ref);
}

static const test_case tests[] = {
    TEST(test_caller_composites_bindings_and_reports),
    TEST(test_no_builtins_and_no_default_names),
    TEST(test_target_refuses_fused_op),
    TEST(test_fused_activation_evaluates_and_writes_back),
    TEST(test_unknown_fused_activation_refused),
    TEST(test_keras_bilstm_fixture),
};

TEST_MAIN(tests)
