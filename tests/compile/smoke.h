/* tests/compile/smoke.h — a small use of the public API shared by the compile tests.

   Builds main(%x: (2, 4, fp32)) with a relu feeding the output, a const used by
   an opaque op that is itself dead, runs dead_code_elimination through the
   built-in registry, and checks that only the relu is left (the opaque op is
   erased first, which leaves the const dead too). Uses only declarations: the implementation comes
   from whatever translation unit the test links. Needs harness.h. */
#ifndef MGOPT_TEST_SMOKE_H
#define MGOPT_TEST_SMOKE_H

/* Builds the program into p; returns the relu op or NULL. */
static mgopt_op *smoke_build(mgopt_program *p) {
  static const int64_t shape[2] = {2, 4};
  const char *slot = "x";
  mgopt_function *f;
  mgopt_type t;
  mgopt_value *x;
  mgopt_op *relu, *dead;
  mgopt_tensor *k;
  mgopt_value *two;
  const char *slots2[2];
  mgopt_value *vals2[2];
  f = mgopt_function_new(p, "main");
  if (!f) return NULL;
  if (mgopt_type_make_static(p, &t, MGOPT_DT_FP32, 2, shape) != MGOPT_OK) return NULL;
  x = mgopt_block_add_arg(f->body, "x", &t);
  if (!x) return NULL;
  k = mgopt_tensor_new_scalar_f64(p, MGOPT_DT_FP32, 2.0);
  two = k ? mgopt_build_const(p, f->body, NULL, "two", k) : NULL;
  if (!two) return NULL;
  slots2[0] = "x";
  slots2[1] = "scale";
  vals2[0] = x;
  vals2[1] = two;
  dead = mgopt_build_op(p, f->body, NULL, "test::dead", "dead", 2, slots2, vals2, 1);
  if (!dead) return NULL;
  dead->outs[0]->type = t;
  relu = mgopt_build_op(p, f->body, NULL, "relu", "y", 1, &slot, &x, 1);
  if (!relu) return NULL;
  relu->outs[0]->type = t;
  if (mgopt_op_infer(p, relu, NULL) != MGOPT_OK) return NULL;
  if (mgopt_block_add_output(f->body, relu->outs[0]) != MGOPT_OK) return NULL;
  return relu;
}

/* Runs the smoke program with allocator a (NULL = default). */
static void smoke_run(const mgopt_allocator *a) {
  mgopt_program *p = mgopt_program_create(a);
  mgopt_function *f;
  mgopt_op *relu;
  mgopt_diag d;
  mgopt_status s;
  mgopt_pass_report rep[4];
  int32_t nrep = 0;
  mgopt_pipeline_options po;
  REQUIRE(p != NULL);
  relu = smoke_build(p);
  CHECK(relu != NULL);
  if (!relu) {
    mgopt_program_destroy(p);
    return;
  }
  f = mgopt_program_function(p, "main");
  CHECK(f != NULL);
  CHECK_EQ_INT(mgopt_program_op_count(p), 3);
  mgopt_diag_clear(&d);
  s = mgopt_program_verify(p, &d);
  CHECK_EQ_INT(s, MGOPT_OK);
  if (s != MGOPT_OK) printf("  verify: %s\n", d.msg);
  memset(&po, 0, sizeof po);
  po.reports = rep;
  po.reports_cap = 4;
  po.nreports = &nrep;
  s = mgopt_pipeline_run(p, mgopt_builtin_registry(), "dead_code_elimination", &po, &d);
  CHECK_EQ_INT(s, MGOPT_OK);
  CHECK_EQ_INT(nrep, 1);
  CHECK_EQ_INT(mgopt_program_op_count(p), 1);
  if (f) {
    CHECK(f->body->last == relu);
    CHECK_EQ_INT(f->body->nouts, 1);
  }
  CHECK_EQ_INT(mgopt_program_status(p), MGOPT_OK);
  CHECK_EQ_INT(mgopt_program_verify(p, &d), MGOPT_OK);
  mgopt_program_destroy(p);
}

static void test_smoke_version(void) {
  CHECK_EQ_STR(mgopt_version(), MGOPT_VERSION_STRING);
  CHECK_EQ_STR(mgopt_status_str(MGOPT_OK), "ok");
  CHECK(mgopt_status_str(MGOPT_STATUS__COUNT) != NULL); /* out of range: still a string */
  CHECK_EQ_STR(mgopt_dtype_name(MGOPT_DT_FP16), "fp16");
}

static void test_smoke_program(void) { smoke_run(NULL); }

/* Both smoke tests, for the test table of every compile test. */
#define SMOKE_TESTS TEST(test_smoke_version), TEST(test_smoke_program)

#endif
