/* tests/unit/test_onnx_functions.c — ONNX model-local functions as IR functions: import (names, callee, input types from the callers, attribute references), export from the IR (exact round trip, names kept), passes inside function bodies, and the functions kept as they came.

   Fixtures: tests/fixtures/onnx/function*.onnx (tools/mkfixtures_onnx.py).
   Some cases edit the model tree between mgopt_onnx_read and
   mgopt_onnx_import to reach what the fixture generator's onnx version
   cannot write (overloads) or what must be kept as it came. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"

#define FIX "tests/fixtures/onnx/"

/* ---------------------------------------------------------------- helpers */

static mgopt_onnx_model *read_model(const char *path) {
  mgopt_onnx_model *m = NULL;
  mgopt_diag d;
  mgopt_diag_clear(&d);
  if (mgopt_onnx_read_file(path, NULL, &m, &d) != MGOPT_OK) {
    printf("  %s: %s\n", path, d.msg);
    return NULL;
  }
  return m;
}

static mgopt_program *load(const char *path) {
  mgopt_onnx_model *m = read_model(path);
  mgopt_diag d;
  mgopt_diag_clear(&d);
  if (!m) return NULL;
  if (mgopt_onnx_import(m, &d) != MGOPT_OK) {
    printf("  %s: import: %s\n", path, d.msg);
    mgopt_program_destroy(m->program);
    return NULL;
  }
  return m->program;
}

/* p exported and encoded into out (zeroed by the caller); 0 on failure. */
static int to_bytes(mgopt_program *p, mgopt_buf *out) {
  mgopt_onnx_model *e = NULL;
  mgopt_diag d;
  mgopt_diag_clear(&d);
  if (mgopt_onnx_export(p, NULL, &e, &d) != MGOPT_OK || mgopt_onnx_write(e, NULL, out, NULL, &d) != MGOPT_OK) {
    printf("  export: %s\n", d.msg);
    return 0;
  }
  return 1;
}

/* The model tree of bytes b (which must outlive it), NULL on failure. */
static mgopt_onnx_model *from_bytes(const mgopt_buf *b) {
  mgopt_onnx_model *m = NULL;
  mgopt_diag d;
  mgopt_diag_clear(&d);
  if (mgopt_onnx_read(b->data, b->len, NULL, &m, &d) != MGOPT_OK) {
    printf("  read back: %s\n", d.msg);
    return NULL;
  }
  return m;
}

static int str_is(mgopt_str s, const char *c) { return s.len == strlen(c) && (!s.len || memcmp(s.ptr, c, s.len) == 0); }

static int run(mgopt_program *p, const char *pipeline) {
  mgopt_pipeline_options o;
  mgopt_diag d;
  memset(&o, 0, sizeof o);
  o.verify_each = 1;
  o.strict = 1;
  mgopt_diag_clear(&d);
  if (mgopt_pipeline_run(p, mgopt_builtin_registry(), pipeline, &o, &d) != MGOPT_OK) {
    printf("  %s: %s\n", pipeline, d.msg);
    return 0;
  }
  return 1;
}

static int count_ops(const mgopt_block *b, const char *type) {
  const mgopt_op *op;
  int n = 0;
  for (op = b->first; op; op = op->next)
    if (!type || strcmp(op->type, type) == 0) n++;
  return n;
}

static const mgopt_onnx_function *find_fn(const mgopt_onnx_model *m, const char *name) {
  int64_t i;
  for (i = 0; i < m->nfunctions; i++)
    if (str_is(m->functions[i].name, name)) return &m->functions[i];
  return NULL;
}

/* ---------------------------------------------------------------- import */

static void test_import_called_twice(void) {
  mgopt_program *p = load(FIX "function_twice.onnx");
  mgopt_function *main_fn, *f;
  mgopt_op *op;
  mgopt_diag d;
  int calls = 0;
  REQUIRE(p);
  CHECK_EQ_INT(mgopt_program_function_count(p), 2);
  main_fn = mgopt_program_function(p, "main");
  f = mgopt_program_function(p, "test.fn::AddRelu");
  REQUIRE(main_fn && f);
  for (op = main_fn->body->first; op; op = op->next)
    if (strcmp(op->type, "test.fn::AddRelu") == 0) {
      CHECK(mgopt_op_callee(op) == f);
      /* the call's output takes the body's type */
      CHECK_EQ_INT(op->outs[0]->type.dtype, MGOPT_DT_FP32);
      CHECK_EQ_INT(op->outs[0]->type.rank, 2);
      calls++;
    }
  CHECK_EQ_INT(calls, 2);
  CHECK(mgopt_op_callee(f->body->first) == NULL);
  /* both calls pass (2, 3) fp32 and (3) fp32: the inputs are typed so */
  REQUIRE(f->body->nargs == 2);
  CHECK_EQ_STR(f->body->args[0]->name, "x");
  CHECK_EQ_INT(f->body->args[0]->type.dtype, MGOPT_DT_FP32);
  CHECK_EQ_INT(f->body->args[0]->type.rank, 2);
  CHECK_EQ_INT(f->body->args[0]->type.dims[1].v, 3);
  CHECK_EQ_INT(f->body->args[1]->type.rank, 1);
  /* the body went through the node mapping */
  CHECK_EQ_INT(count_ops(f->body, "relu"), 1);
  CHECK_EQ_INT(count_ops(f->body, "add"), 2);
  mgopt_diag_clear(&d);
  CHECK(mgopt_program_verify(p, &d) == MGOPT_OK);
  mgopt_program_destroy(p);
}

static void test_import_types_disagree(void) {
  mgopt_program *p = load(FIX "function_domain.onnx");
  mgopt_function *dbl, *pass;
  REQUIRE(p);
  dbl = mgopt_program_function(p, "com.example.ops::Double");
  pass = mgopt_program_function(p, "com.example.ops::Pass");
  REQUIRE(dbl && pass);
  /* called with (3) fp32 and (2) int64: neither dtype nor dims agree */
  CHECK_EQ_INT(dbl->body->args[0]->type.dtype, MGOPT_DT_UNKNOWN);
  CHECK_EQ_INT(dbl->body->args[0]->type.rank, 1);
  CHECK(dbl->body->args[0]->type.dims[0].v < 0);
  CHECK_EQ_INT(pass->body->args[0]->type.dtype, MGOPT_DT_FP32);
  mgopt_program_destroy(p);
}

static void test_import_nested(void) {
  mgopt_program *p = load(FIX "function_nested.onnx");
  mgopt_function *outer, *gelu;
  mgopt_op *op;
  int calls = 0;
  REQUIRE(p);
  outer = mgopt_program_function(p, "test.fn::Outer");
  gelu = mgopt_program_function(p, "test.fn::GeluErf");
  REQUIRE(outer && gelu);
  for (op = outer->body->first; op; op = op->next)
    if (mgopt_op_callee(op) == gelu) calls++;
  CHECK_EQ_INT(calls, 2);
  /* the inner function is typed from the outer one's calls */
  CHECK_EQ_INT(gelu->body->args[0]->type.dtype, MGOPT_DT_FP32);
  CHECK_EQ_INT(gelu->body->args[0]->type.rank, 2);
  mgopt_program_destroy(p);
}

static void test_import_attribute_reference(void) {
  mgopt_program *p = load(FIX "function_attr_ref.onnx");
  mgopt_function *f;
  const mgopt_op *op;
  const mgopt_attr *a;
  REQUIRE(p);
  f = mgopt_program_function(p, "test.fn::LRelu");
  REQUIRE(f);
  /* the LeakyRelu whose alpha refers to the function's attribute stays opaque */
  for (op = f->body->first; op && strcmp(op->type, "onnx::LeakyRelu") != 0; op = op->next) {
  }
  REQUIRE(op);
  a = mgopt_op_attr(op, "alpha");
  REQUIRE(a);
  CHECK_EQ_INT(a->kind, MGOPT_ATTR_BYTES);
  CHECK_EQ_INT(a->tag, MGOPT_ONNX_ATTR_REF | MGOPT_ONNX_ATTR_FLOAT);
  CHECK(a->n == 5 && memcmp(a->u.bytes, "alpha", 5) == 0);
  /* passes leave it alone, and it is written back as a reference */
  REQUIRE(run(p, "default"));
  mgopt_program_destroy(p);
}

/* ---------------------------------------------------------------- export */

/* Each fixture: the functions written from the IR keep their signature and
   metadata; export of the re-imported model is a fixed point. */
static void roundtrip_one(const char *path) {
  mgopt_onnx_model *orig = read_model(path), *back = NULL, *back2 = NULL;
  mgopt_program *p = NULL, *p2 = NULL;
  mgopt_buf b1, b2;
  mgopt_diag d;
  int64_t i, j;
  memset(&b1, 0, sizeof b1);
  memset(&b2, 0, sizeof b2);
  mgopt_diag_clear(&d);
  REQUIRE(orig);
  p = orig->program;
  if (mgopt_onnx_import(orig, &d) != MGOPT_OK) {
    printf("  %s: %s\n", path, d.msg);
    CHECK(0);
    goto out;
  }
  CHECK(to_bytes(p, &b1));
  back = from_bytes(&b1);
  CHECK(back != NULL);
  if (!back) goto out;
  CHECK_EQ_INT(back->nfunctions, orig->nfunctions);
  for (i = 0; i < orig->nfunctions && i < back->nfunctions; i++) {
    const mgopt_onnx_function *a = &orig->functions[i], *b = &back->functions[i];
    CHECK(str_is(b->name, "") == str_is(a->name, "") && b->name.len == a->name.len &&
          memcmp(a->name.ptr, b->name.ptr, a->name.len) == 0);
    CHECK(b->domain.len == a->domain.len && memcmp(a->domain.ptr, b->domain.ptr, a->domain.len) == 0);
    CHECK(b->doc_string.len == a->doc_string.len);
    CHECK_EQ_INT(b->ninputs, a->ninputs);
    CHECK_EQ_INT(b->noutputs, a->noutputs);
    for (j = 0; j < a->ninputs && j < b->ninputs; j++)
      CHECK(a->inputs[j].len == b->inputs[j].len && memcmp(a->inputs[j].ptr, b->inputs[j].ptr, a->inputs[j].len) == 0);
    for (j = 0; j < a->noutputs && j < b->noutputs; j++)
      CHECK(a->outputs[j].len == b->outputs[j].len &&
            memcmp(a->outputs[j].ptr, b->outputs[j].ptr, a->outputs[j].len) == 0);
    CHECK_EQ_INT(b->nattributes, a->nattributes);
    CHECK_EQ_INT(b->nattribute_protos, a->nattribute_protos);
    CHECK_EQ_INT(b->nopset_imports, a->nopset_imports);
  }
  mgopt_diag_clear(&d);
  if (mgopt_onnx_import(back, &d) != MGOPT_OK) {
    printf("  %s: re-import: %s\n", path, d.msg);
    CHECK(0);
    goto out;
  }
  p2 = back->program;
  CHECK(to_bytes(p2, &b2));
  CHECK(b1.len == b2.len && memcmp(b1.data, b2.data, b1.len) == 0);
  back2 = from_bytes(&b2);
  CHECK(back2 != NULL);
  if (back2) mgopt_program_destroy(back2->program);
out:
  if (p2) mgopt_program_destroy(p2);
  else if (back) mgopt_program_destroy(back->program);
  mgopt_program_destroy(p);
  mgopt_buf_free(&b1);
  mgopt_buf_free(&b2);
}

static void test_roundtrip_fixtures(void) {
  roundtrip_one(FIX "function.onnx");
  roundtrip_one(FIX "function_twice.onnx");
  roundtrip_one(FIX "function_attr_ref.onnx");
  roundtrip_one(FIX "function_nested.onnx");
  roundtrip_one(FIX "function_domain.onnx");
}

static void test_export_attribute_reference(void) {
  mgopt_program *p = load(FIX "function_attr_ref.onnx");
  mgopt_onnx_model *m;
  const mgopt_onnx_function *f;
  mgopt_buf b;
  int64_t i, k, refs = 0;
  memset(&b, 0, sizeof b);
  REQUIRE(p);
  REQUIRE(to_bytes(p, &b));
  m = from_bytes(&b);
  REQUIRE(m);
  f = find_fn(m, "LRelu");
  REQUIRE(f);
  CHECK_EQ_INT(f->nattribute_protos, 1); /* the default alpha */
  for (i = 0; i < f->nnodes; i++)
    for (k = 0; k < f->nodes[i].nattributes; k++) {
      const mgopt_onnx_attribute *a = &f->nodes[i].attributes[k];
      if (!a->ref_attr_name.len) continue;
      CHECK(str_is(a->name, "alpha") && str_is(a->ref_attr_name, "alpha"));
      CHECK_EQ_INT(a->type, MGOPT_ONNX_ATTR_FLOAT);
      refs++;
    }
  CHECK_EQ_INT(refs, 1);
  mgopt_program_destroy(m->program);
  mgopt_program_destroy(p);
  mgopt_buf_free(&b);
}

/* A function output whose value a pass replaced by the function's input is
   still written under its own name (through an Identity). */
static void test_export_output_keeps_name(void) {
  mgopt_program *p = load(FIX "function_domain.onnx");
  mgopt_function *pass;
  mgopt_onnx_model *m;
  const mgopt_onnx_function *f;
  mgopt_buf b;
  memset(&b, 0, sizeof b);
  REQUIRE(p);
  pass = mgopt_program_function(p, "com.example.ops::Pass");
  REQUIRE(pass && pass->body->nouts == 1);
  mgopt_block_set_output(pass->body, 0, pass->body->args[0]);
  REQUIRE(to_bytes(p, &b));
  m = from_bytes(&b);
  REQUIRE(m);
  f = find_fn(m, "Pass");
  REQUIRE(f && f->noutputs == 1 && f->ninputs == 1);
  CHECK(str_is(f->inputs[0], "v"));
  CHECK(str_is(f->outputs[0], "w"));
  REQUIRE(f->nnodes >= 1);
  CHECK(str_is(f->nodes[f->nnodes - 1].op_type, "Identity"));
  CHECK(str_is(f->nodes[f->nnodes - 1].outputs[0], "w"));
  mgopt_program_destroy(m->program);
  mgopt_program_destroy(p);
  mgopt_buf_free(&b);
}

/* ---------------------------------------------------------------- passes inside functions */

static void test_pass_in_function_body(void) {
  mgopt_program *p = load(FIX "function_twice.onnx");
  mgopt_function *f;
  const mgopt_op *op;
  REQUIRE(p);
  f = mgopt_program_function(p, "test.fn::AddRelu");
  REQUIRE(f);
  CHECK_EQ_INT(count_ops(f->body, "add"), 2);
  /* 1 + 1 folds inside the body */
  REQUIRE(run(p, "const_elimination,dead_code_elimination"));
  CHECK_EQ_INT(count_ops(f->body, "add"), 1);
  for (op = f->body->first; op; op = op->next)
    if (op->kind == MGOPT_OP_const) CHECK(mgopt_tensor_get_f64(mgopt_value_const(op->outs[0]), 0) == 2.0);
  /* the signature stays */
  CHECK_EQ_INT(f->body->nargs, 2);
  CHECK_EQ_INT(f->body->nouts, 1);
  mgopt_program_destroy(p);
}

static void test_fusion_in_nested_function(void) {
  mgopt_program *p = load(FIX "function_nested.onnx");
  mgopt_function *gelu;
  REQUIRE(p);
  /* the model's opset (13) has no Gelu: the ONNX target refuses the fusion
     there; without a target it happens inside the inner function */
  mgopt_program_set_target(p, NULL, NULL);
  REQUIRE(run(p, "default"));
  gelu = mgopt_program_function(p, "test.fn::GeluErf");
  REQUIRE(gelu);
  CHECK_EQ_INT(count_ops(gelu->body, "gelu"), 1);
  CHECK_EQ_INT(count_ops(gelu->body, NULL), 1);
  mgopt_program_destroy(p);
}

/* A function whose every call was inlined is gone from the program, and the
   export writes no FunctionProto for it; one still called is written. */
static void test_export_drops_removed_function(void) {
  mgopt_program *p = load(FIX "function_twice.onnx");
  mgopt_onnx_model *m;
  mgopt_buf b;
  REQUIRE(p);
  REQUIRE(run(p, "tflite::inline_functions"));
  CHECK(mgopt_program_function(p, "test.fn::AddRelu") == NULL);
  memset(&b, 0, sizeof b);
  REQUIRE(to_bytes(p, &b));
  m = from_bytes(&b);
  REQUIRE(m);
  CHECK_EQ_INT((int)m->nfunctions, 0);
  CHECK(m->graph->nnodes >= 2);
  mgopt_program_destroy(m->program);
  mgopt_program_destroy(p);
  mgopt_buf_free(&b);
  /* only the inner function inlined: the outer one stays and is written */
  p = load(FIX "function_nested.onnx");
  REQUIRE(p);
  REQUIRE(run(p, "tflite::inline_functions{functions=\"test.fn::GeluErf\"}"));
  memset(&b, 0, sizeof b);
  REQUIRE(to_bytes(p, &b));
  m = from_bytes(&b);
  REQUIRE(m);
  CHECK_EQ_INT((int)m->nfunctions, 1);
  CHECK(find_fn(m, "Outer") != NULL && find_fn(m, "GeluErf") == NULL);
  mgopt_program_destroy(m->program);
  mgopt_program_destroy(p);
  mgopt_buf_free(&b);
}

/* ---------------------------------------------------------------- kept as they came */

/* A function whose default opset differs from the model's, one whose body
   does not import, and two that share a name: none becomes an IR function;
   each is written back verbatim and the model still loads. */
static void test_kept_as_they_came(void) {
  mgopt_onnx_model *m = read_model(FIX "function.onnx");
  mgopt_onnx_model *out;
  mgopt_onnx_opset *os;
  mgopt_onnx_attribute *at;
  mgopt_diag d;
  REQUIRE(m);
  /* opset 12 in the function, 13 in the model */
  os = (mgopt_onnx_opset *)mgopt_program_alloc(m->program, sizeof *os, 8);
  REQUIRE(os);
  *os = m->functions[0].opset_imports[0];
  os->version = 12;
  m->functions[0].opset_imports = os;
  mgopt_diag_clear(&d);
  REQUIRE(mgopt_onnx_import(m, &d) == MGOPT_OK);
  CHECK_EQ_INT(mgopt_program_function_count(m->program), 1);
  REQUIRE(mgopt_onnx_export(m->program, NULL, &out, &d) == MGOPT_OK);
  CHECK(out->nfunctions == 1 && out->functions[0].nodes == m->functions[0].nodes);
  mgopt_program_destroy(m->program);

  /* a body node with an attribute kind the importer refuses (an opaque node's) */
  m = read_model(FIX "function.onnx");
  REQUIRE(m);
  at = (mgopt_onnx_attribute *)mgopt_program_alloc(m->program, sizeof *at, 8);
  REQUIRE(at);
  at->name.ptr = "ts";
  at->name.len = 2;
  at->type = MGOPT_ONNX_ATTR_TENSORS;
  m->functions[0].nodes[0].attributes = at;
  m->functions[0].nodes[0].nattributes = 1;
  m->functions[0].nodes[0].domain.ptr = "custom.x"; /* opaque: its attributes are read */
  m->functions[0].nodes[0].domain.len = 8;
  mgopt_diag_clear(&d);
  REQUIRE(mgopt_onnx_import(m, &d) == MGOPT_OK);
  CHECK_EQ_INT(d.status, MGOPT_OK);
  CHECK_EQ_INT(mgopt_program_function_count(m->program), 1);
  REQUIRE(mgopt_onnx_export(m->program, NULL, &out, &d) == MGOPT_OK);
  CHECK(out->nfunctions == 1 && out->functions[0].nodes == m->functions[0].nodes);
  mgopt_program_destroy(m->program);

  /* two functions of one name */
  m = read_model(FIX "function_domain.onnx");
  REQUIRE(m && m->nfunctions == 2);
  m->functions[1].name = m->functions[0].name;
  mgopt_diag_clear(&d);
  REQUIRE(mgopt_onnx_import(m, &d) == MGOPT_OK);
  CHECK_EQ_INT(mgopt_program_function_count(m->program), 1);
  mgopt_program_destroy(m->program);
}

/* A function that calls itself (not valid ONNX, but read) stays as it came. */
static void test_recursive_kept(void) {
  mgopt_onnx_model *m = read_model(FIX "function_nested.onnx");
  mgopt_onnx_function *gelu;
  mgopt_diag d;
  REQUIRE(m);
  gelu = (mgopt_onnx_function *)find_fn(m, "GeluErf");
  REQUIRE(gelu && gelu->nnodes > 4);
  /* Erf becomes a call of Outer: Outer -> GeluErf -> Outer */
  gelu->nodes[4].op_type.ptr = "Outer";
  gelu->nodes[4].op_type.len = 5;
  gelu->nodes[4].domain.ptr = "test.fn";
  gelu->nodes[4].domain.len = 7;
  mgopt_diag_clear(&d);
  REQUIRE(mgopt_onnx_import(m, &d) == MGOPT_OK);
  CHECK_EQ_INT(mgopt_program_function_count(m->program), 1);
  mgopt_program_destroy(m->program);
}

/* An overloaded function (IR version 10): its IR name and the calls' op
   type carry the overload; both are written back split. */
static void test_overload(void) {
  mgopt_onnx_model *m = read_model(FIX "function.onnx"), *back;
  mgopt_function *f;
  mgopt_buf b;
  memset(&b, 0, sizeof b);
  REQUIRE(m);
  m->ir_version = 10;
  m->functions[0].overload.ptr = "v2";
  m->functions[0].overload.len = 2;
  m->graph->nodes[0].overload = m->functions[0].overload;
  {
    mgopt_diag d;
    mgopt_diag_clear(&d);
    REQUIRE(mgopt_onnx_import(m, &d) == MGOPT_OK);
  }
  f = mgopt_program_function(m->program, "test.fn::AddMul@v2");
  REQUIRE(f);
  CHECK(mgopt_op_callee(mgopt_program_function(m->program, "main")->body->first) == f);
  {
    /* the .mil text holds the name (quoted) and reads back to the same text */
    mgopt_buf t1, t2;
    mgopt_program *q = NULL;
    mgopt_diag d;
    memset(&t1, 0, sizeof t1);
    memset(&t2, 0, sizeof t2);
    mgopt_diag_clear(&d);
    CHECK(mgopt_mil_print(m->program, NULL, &t1) == MGOPT_OK);
    CHECK(mgopt_mil_parse(t1.data, t1.len, NULL, &q, &d) == MGOPT_OK);
    if (q) {
      CHECK(mgopt_program_function(q, "test.fn::AddMul@v2") != NULL);
      CHECK(mgopt_mil_print(q, NULL, &t2) == MGOPT_OK);
      CHECK(t1.len == t2.len && memcmp(t1.data, t2.data, t1.len) == 0);
      mgopt_program_destroy(q);
    }
    mgopt_buf_free(&t1);
    mgopt_buf_free(&t2);
  }
  REQUIRE(to_bytes(m->program, &b));
  back = from_bytes(&b);
  REQUIRE(back);
  CHECK(str_is(back->graph->nodes[0].op_type, "AddMul"));
  CHECK(str_is(back->graph->nodes[0].overload, "v2"));
  CHECK(str_is(back->functions[0].name, "AddMul"));
  CHECK(str_is(back->functions[0].overload, "v2"));
  mgopt_program_destroy(back->program);
  mgopt_program_destroy(m->program);
  mgopt_buf_free(&b);
}

/* An attribute reference outside a function is still refused. */
static void test_reference_outside_function(void) {
  mgopt_onnx_model *m = read_model(FIX "function_twice.onnx");
  mgopt_onnx_attribute *at;
  mgopt_diag d;
  REQUIRE(m);
  at = (mgopt_onnx_attribute *)mgopt_program_alloc(m->program, sizeof *at, 8);
  REQUIRE(at);
  at->name.ptr = "k";
  at->name.len = 1;
  at->ref_attr_name = at->name;
  at->type = MGOPT_ONNX_ATTR_INT;
  m->graph->nodes[0].attributes = at;
  m->graph->nodes[0].nattributes = 1;
  mgopt_diag_clear(&d);
  CHECK_EQ_INT(mgopt_onnx_import(m, &d), MGOPT_ERR_UNSUPPORTED);
  mgopt_program_destroy(m->program);
}

static const test_case tests[] = {
    TEST(test_import_called_twice),
    TEST(test_import_types_disagree),
    TEST(test_import_nested),
    TEST(test_import_attribute_reference),
    TEST(test_roundtrip_fixtures),
    TEST(test_export_attribute_reference),
    TEST(test_export_output_keeps_name),
    TEST(test_pass_in_function_body),
    TEST(test_fusion_in_nested_function),
    TEST(test_kept_as_they_came),
    TEST(test_recursive_kept),
    TEST(test_overload),
    TEST(test_reference_outside_function),
    TEST(test_export_drops_removed_function),
};

TEST_MAIN(tests)
