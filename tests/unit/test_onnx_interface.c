/* tests/unit/test_onnx_interface.c — a model's interface under the pipelines, and initializers that are also graph inputs.

   Fixtures: tests/fixtures/interface/ (make_fixtures.py). Every pipeline of
   the default set keeps main's inputs and outputs: names, order, dtypes and
   dims. An initializer that is also a graph input (IR version 4 on) is a
   run-time input whose default export writes back, unless
   mgopt_onnx_read_options.constant_inputs makes it a constant; below IR
   version 4 every initializer is a constant. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <stdlib.h>

#define FIX "tests/fixtures/interface/"

static mgopt_program *load(const char *path, int constant_inputs) {
  mgopt_onnx_read_options ro;
  mgopt_program *p = NULL;
  mgopt_diag d;
  memset(&ro, 0, sizeof ro);
  ro.constant_inputs = constant_inputs;
  mgopt_diag_clear(&d);
  if (mgopt_onnx_load_file(path, &ro, &p, &d) != MGOPT_OK) {
    printf("  %s: %s\n", path, d.msg);
    return NULL;
  }
  return p;
}

static mgopt_block *main_body(mgopt_program *p) {
  mgopt_function *f = p ? mgopt_program_function(p, "main") : NULL;
  return f ? f->body : NULL;
}

/* 1 when a and b (main's inputs or outputs) have the same names, dtypes and dims */
static int same_value(const mgopt_value *a, const mgopt_value *b) {
  int32_t k;
  if (strcmp(a->name, b->name) != 0 || a->type.kind != b->type.kind || a->type.dtype != b->type.dtype ||
      a->type.rank != b->type.rank)
    return 0;
  for (k = 0; k < a->type.rank; k++)
    if (a->type.dims[k].v != b->type.dims[k].v || (a->type.dims[k].sym == NULL) != (b->type.dims[k].sym == NULL) ||
        (a->type.dims[k].sym && strcmp(a->type.dims[k].sym, b->type.dims[k].sym) != 0))
      return 0;
  return 1;
}

static int same_interface(mgopt_block *a, mgopt_block *b) {
  int32_t i;
  if (!a || !b || a->nargs != b->nargs || a->nouts != b->nouts) return 0;
  for (i = 0; i < a->nargs; i++)
    if (!same_value(a->args[i], b->args[i])) {
      printf("  input %d: %s then %s\n", (int)i, a->args[i]->name, b->args[i]->name);
      return 0;
    }
  for (i = 0; i < a->nouts; i++)
    if (!same_value(a->outs[i]->value, b->outs[i]->value)) {
      printf("  output %d: %s then %s\n", (int)i, a->outs[i]->value->name, b->outs[i]->value->name);
      return 0;
    }
  return 1;
}

/* p written to *buf (freed by the caller after the program returned) and
   read back with the default read options; *exported: the model written */
static mgopt_program *write_read(mgopt_program *p, mgopt_onnx_model **exported, mgopt_buf *buf) {
  mgopt_onnx_model *m = NULL;
  mgopt_program *q = NULL;
  mgopt_diag d;
  mgopt_diag_clear(&d);
  memset(buf, 0, sizeof *buf);
  if (mgopt_onnx_export(p, NULL, &m, &d) != MGOPT_OK || mgopt_onnx_write(m, NULL, buf, NULL, &d) != MGOPT_OK ||
      mgopt_onnx_load(buf->data, buf->len, NULL, &q, &d) != MGOPT_OK) {
    printf("  write/read: %s\n", d.msg);
    return NULL;
  }
  *exported = m;
  return q;
}

static int64_t count_named(const mgopt_onnx_graph *g, const char *name, int inputs) {
  int64_t i, n = 0;
  if (inputs) {
    for (i = 0; i < g->ninputs; i++) n += strcmp(g->inputs[i].name.ptr, name) == 0;
  } else {
    for (i = 0; i < g->ninitializers; i++) n += strcmp(g->initializers[i].name.ptr, name) == 0;
  }
  return n;
}

static const char *const pipelines[] = {"default", "default_fp16", "cleanup", "fp16", "quantization",
                                        "default_palettization", "default_sparsification"};
static const char *const fixtures[] = {FIX "interface.onnx", FIX "initializer_inputs.onnx",
                                       FIX "initializer_inputs_ir3.onnx", FIX "tied_embedding.onnx"};

/* every pipeline of the default set: inputs kept (an unread one too),
   outputs kept (an input passed through, a constant, one value under two
   names), dtypes and dims kept, names kept; and in the written model */
static void test_pipelines_keep_the_interface(void) {
  size_t i, j;
  for (i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++)
    for (j = 0; j < sizeof pipelines / sizeof pipelines[0]; j++) {
      mgopt_program *before = load(fixtures[i], 0), *p = load(fixtures[i], 0), *back = NULL;
      mgopt_onnx_model *m = NULL;
      mgopt_buf buf;
      mgopt_diag d;
      mgopt_diag_clear(&d);
      REQUIRE(before && p);
      CHECK(mgopt_pipeline_run(p, mgopt_builtin_registry(), pipelines[j], NULL, &d) == MGOPT_OK);
      if (!same_interface(main_body(before), main_body(p))) {
        printf("  %s -p %s: the interface changed\n", fixtures[i], pipelines[j]);
        CHECK(0);
      }
      back = write_read(p, &m, &buf);
      CHECK(back && same_interface(main_body(before), main_body(back)));
      mgopt_program_destroy(back);
      mgopt_buf_free(&buf);
      mgopt_program_destroy(p);
      mgopt_program_destroy(before);
    }
}

/* an initializer that is also an input stays an input with its default:
   not folded, not removed, written back as initializer and input */
static void test_initializer_inputs_stay_inputs(void) {
  static const char *const names[] = {"x", "ids", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias",
                                      "embed.weight", "scale", "two"};
  mgopt_program *p = load(FIX "initializer_inputs.onnx", 0), *back;
  mgopt_onnx_model *m = NULL;
  mgopt_block *b = main_body(p);
  mgopt_buf buf;
  mgopt_diag d;
  mgopt_op *op;
  int32_t i, consts = 0;
  REQUIRE(b != NULL);
  CHECK_EQ_INT(b->nargs, 9);
  for (i = 0; i < b->nargs && i < 9; i++) CHECK(strcmp(b->args[i]->name, names[i]) == 0);
  mgopt_diag_clear(&d);
  REQUIRE(mgopt_pipeline_run(p, mgopt_builtin_registry(), "default", NULL, &d) == MGOPT_OK);
  CHECK_EQ_INT(b->nargs, 9);
  for (op = b->first; op; op = op->next) consts += op->kind == MGOPT_OP_const;
  CHECK_EQ_INT(consts, 0); /* scale * two is computed at run time: a caller may feed either */
  back = write_read(p, &m, &buf);
  REQUIRE(back && m);
  CHECK_EQ_INT(m->graph->ninputs, 9);
  for (i = 2; i < 9; i++) CHECK(count_named(m->graph, names[i], 1) == 1 && count_named(m->graph, names[i], 0) == 1);
  CHECK(count_named(m->graph, "x", 0) == 0);
  CHECK_EQ_INT(main_body(back)->nargs, 9);
  mgopt_program_destroy(back);
  mgopt_buf_free(&buf);
  mgopt_program_destroy(p);
}

/* constant_inputs: the initializers are constants, and fold */
static void test_constant_inputs_fold(void) {
  mgopt_program *p = load(FIX "initializer_inputs.onnx", 1);
  mgopt_block *b = main_body(p);
  mgopt_diag d;
  REQUIRE(b != NULL);
  CHECK_EQ_INT(b->nargs, 2);
  mgopt_diag_clear(&d);
  REQUIRE(mgopt_pipeline_run(p, mgopt_builtin_registry(), "default", NULL, &d) == MGOPT_OK);
  REQUIRE(b->nouts == 3);
  CHECK(b->outs[2]->value->def && b->outs[2]->value->def->kind == MGOPT_OP_const); /* s = scale * two */
  CHECK(strcmp(b->outs[2]->value->name, "s") == 0);
  mgopt_program_destroy(p);
}

/* below IR version 4 every initializer is an input: all are constants (as
   ONNX Runtime takes them), whatever constant_inputs says */
static void test_ir3_initializers_are_constants(void) {
  mgopt_program *p = load(FIX "initializer_inputs_ir3.onnx", 0);
  mgopt_block *b = main_body(p);
  REQUIRE(b != NULL);
  CHECK_EQ_INT(b->nargs, 2);
  CHECK(strcmp(b->args[0]->name, "x") == 0 && strcmp(b->args[1]->name, "ids") == 0);
  mgopt_program_destroy(p);
}

static const test_case tests[] = {
    TEST(test_pipelines_keep_the_interface),
    TEST(test_initializer_inputs_stay_inputs),
    TEST(test_constant_inputs_fold),
    TEST(test_ir3_initializers_are_constants),
};
TEST_MAIN(tests)
