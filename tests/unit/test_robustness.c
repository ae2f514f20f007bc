/* tests/unit/test_robustness.c — scaling behaviour that golden files cannot show: many functions, many inputs. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"

/* Functions are found by name among thousands (a hash table), in creation order by index. */
static void test_function_lookup_many(void) {
  mgopt_program *p = mgopt_program_create(NULL);
  char name[32];
  int i;
  REQUIRE(p != NULL);
  for (i = 0; i < 3000; i++) {
    mgopt_function *f;
    snprintf(name, sizeof name, "f%d", i);
    f = mgopt_function_new(p, name);
    REQUIRE(f != NULL);
  }
  CHECK_EQ_INT(mgopt_program_function_count(p), 3000);
  for (i = 0; i < 3000; i++) {
    mgopt_function *f;
    snprintf(name, sizeof name, "f%d", i);
    f = mgopt_program_function(p, name);
    REQUIRE(f != NULL);
    CHECK_EQ_STR(f->name, name);
    CHECK(mgopt_program_function_at(p, i) == f);
  }
  CHECK(mgopt_function_new(p, "f1234") == NULL); /* a duplicate name */
  CHECK_EQ_INT(mgopt_program_function_count(p), 3000);
  CHECK(mgopt_program_function(p, "f3000") == NULL);
  CHECK(mgopt_program_function(p, "") == NULL);
  CHECK(mgopt_program_function(p, "main") == NULL);
  CHECK(mgopt_function_new(p, "") != NULL);
  CHECK(mgopt_program_function(p, "") != NULL);
  CHECK(mgopt_program_status(p) == MGOPT_OK);
  mgopt_program_destroy(p);
}

/* A parsed program with several functions: each found by name. */
static void test_function_lookup_parsed(void) {
  static const char src[] =
      "main(%x: (2, fp32)) {\n  %y: (2, fp32) = relu(x=%x)\n} -> (%y)\n\n"
      "helper(%p: (2, fp32)) {\n  %r: (2, fp32) = relu(x=%p)\n} -> (%r)\n";
  mgopt_diag d;
  mgopt_program *p = NULL;
  mgopt_mil_parse(src, sizeof src - 1, NULL, &p, &d);
  REQUIRE(p != NULL);
  CHECK(mgopt_program_function(p, "main") == mgopt_program_function_at(p, 0));
  CHECK(mgopt_program_function(p, "helper") == mgopt_program_function_at(p, 1));
  CHECK(mgopt_program_function(p, "help") == NULL);
  mgopt_program_destroy(p);
}

/* Thousands of inputs, two of every three unused: the used ones stay, in order, renumbered. */
static void test_prune_many_inputs(void) {
  static const char *const slot[1] = {"x"};
  mgopt_program *p = mgopt_program_create(NULL);
  mgopt_function *f;
  mgopt_type t;
  mgopt_diag d;
  int64_t shape[1] = {2};
  char name[32];
  int i, n = 6000;
  REQUIRE(p != NULL);
  f = mgopt_function_new(p, "main");
  REQUIRE(f != NULL);
  REQUIRE(mgopt_type_make_static(p, &t, MGOPT_DT_FP32, 1, shape) == MGOPT_OK);
  for (i = 0; i < n; i++) {
    mgopt_value *x;
    snprintf(name, sizeof name, "in%d", i);
    x = mgopt_block_add_arg(f->body, name, &t);
    REQUIRE(x != NULL);
    if (i % 3 == 1) {
      mgopt_op *op;
      snprintf(name, sizeof name, "out%d", i);
      op = mgopt_build_op(p, f->body, NULL, "relu", name, 1, slot, &x, 1);
      REQUIRE(op != NULL);
      REQUIRE(mgopt_op_infer(p, op, &d) == MGOPT_OK);
      REQUIRE(mgopt_block_add_output(f->body, op->outs[0]) == MGOPT_OK);
    }
  }
  REQUIRE(mgopt_program_verify(p, &d) == MGOPT_OK);
  CHECK(mgopt_pipeline_run(p, mgopt_builtin_registry(), "onnx::prune_unused_graph_inputs", NULL, &d) == MGOPT_OK);
  CHECK_EQ_INT(f->body->nargs, n / 3);
  for (i = 0; i < f->body->nargs; i++) {
    snprintf(name, sizeof name, "in%d", 3 * i + 1);
    CHECK_EQ_STR(f->body->args[i]->name, name);
    CHECK_EQ_INT(f->body->args[i]->index, i);
    CHECK(f->body->args[i]->owner == f->body);
  }
  CHECK(mgopt_program_verify(p, &d) == MGOPT_OK);
  mgopt_program_destroy(p);
}

static const test_case tests[] = {
    TEST(test_function_lookup_many),
    TEST(test_function_lookup_parsed),
    TEST(test_prune_many_inputs),
};
TEST_MAIN(tests)
