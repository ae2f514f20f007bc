/* tests/unit/test_exact.c — the default pipeline changes no float value for nothing: a GELU written as Erf(x / 1.4142135) ahead of dynamic quantization keeps its Div under `default` (bit for bit the original's outputs) and becomes a Mul under `fast_math` (an ulp off for some x); a Div by a power of two becomes a Mul under both.

   Fixture: tests/fixtures/onnx/gelu_div_sqrt2.onnx (tools/mkfixtures_exact.py). */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"

#define FIX "tests/fixtures/onnx/"

static mgopt_program *load(const char *path) {
  mgopt_onnx_model *m = NULL;
  mgopt_diag d;
  mgopt_diag_clear(&d);
  if (mgopt_onnx_read_file(path, NULL, &m, &d) != MGOPT_OK) {
    printf("  %s: %s\n", path, d.msg);
    return NULL;
  }
  if (mgopt_onnx_import(m, &d) != MGOPT_OK) {
    printf("  %s: import: %s\n", path, d.msg);
    mgopt_program_destroy(m->program);
    return NULL;
  }
  return m->program;
}

/* The fixture after `pipeline`, exported, written to *b and read back (as
   a user gets it from the tool); NULL on failure. The program borrows the
   weights from *b: free *b (mgopt_buf_free) after the program. */
static mgopt_program *optimized(const char *pipeline, mgopt_buf *b) {
  mgopt_program *p = load(FIX "gelu_div_sqrt2.onnx"), *q = NULL;
  mgopt_onnx_model *e = NULL;
  mgopt_diag d;
  memset(b, 0, sizeof *b);
  mgopt_diag_clear(&d);
  if (!p) return NULL;
  if (mgopt_pipeline_run(p, mgopt_builtin_registry(), pipeline, NULL, &d) != MGOPT_OK ||
      mgopt_onnx_export(p, NULL, &e, &d) != MGOPT_OK || mgopt_onnx_write(e, NULL, b, NULL, &d) != MGOPT_OK ||
      mgopt_onnx_load(b->data, b->len, NULL, &q, &d) != MGOPT_OK) {
    printf("  %s: %s\n", pipeline, d.msg);
    q = NULL;
  }
  mgopt_program_destroy(p);
  return q;
}

static int count_kind(mgopt_program *p, int32_t kind) {
  mgopt_op *op;
  int n = 0;
  for (op = mgopt_program_function(p, "main")->body->first; op; op = op->next) n += op->kind == kind;
  return n;
}

/* Evaluates a and b on `runs` inputs x (fp32, uniform in [-8, 8) from a fixed
   generator) and counts the output elements whose bits differ; -1 on an
   evaluation failure. */
static int64_t differing(mgopt_program *a, mgopt_program *b, int runs) {
  mgopt_block *ba = mgopt_program_function(a, "main")->body;
  mgopt_tensor *in, *oa[3], *ob[3];
  uint64_t seed = 0x2545f4914f6cdd1dull;
  int64_t shape[2] = {4, 16}, n = 0, i;
  int32_t k, nout = ba->nouts;
  int r;
  mgopt_diag d;
  mgopt_eval_options eo;
  memset(&eo, 0, sizeof eo);
  eo.op_fn = mgopt_onnx_eval_op; /* DynamicQuantizeLinear, MatMulInteger stay opaque */
  if (ba->nargs != 1 || nout != 3) return -1;
  for (r = 0; r < runs; r++) {
    in = mgopt_eval_tensor_new(a, MGOPT_DT_FP32, 2, shape);
    if (!in) return -1;
    for (i = 0; i < in->numel; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      mgopt_tensor_set_f64(in, i, (double)(float)((double)(seed >> 40) / 16777216.0 * 16.0 - 8.0));
    }
    mgopt_diag_clear(&d);
    if (mgopt_eval(a, NULL, &in, 1, oa, nout, &eo, &d) != MGOPT_OK) {
      printf("  eval a: %s\n", d.msg);
      mgopt_eval_tensor_free(a, in);
      return -1;
    }
    if (mgopt_eval(b, NULL, &in, 1, ob, nout, &eo, &d) != MGOPT_OK) {
      printf("  eval b: %s\n", d.msg);
      for (k = 0; k < nout; k++) mgopt_eval_tensor_free(a, oa[k]);
      mgopt_eval_tensor_free(a, in);
      return -1;
    }
    for (k = 0; k < nout; k++) {
      if (oa[k]->numel != ob[k]->numel || oa[k]->dtype != MGOPT_DT_FP32 || ob[k]->dtype != MGOPT_DT_FP32) n = -1000000;
      for (i = 0; i < oa[k]->numel && i < ob[k]->numel; i++)
        n += memcmp((const float *)oa[k]->data + i, (const float *)ob[k]->data + i, sizeof(float)) != 0;
      mgopt_eval_tensor_free(a, oa[k]);
      mgopt_eval_tensor_free(b, ob[k]);
    }
    mgopt_eval_tensor_free(a, in);
  }
  return n < 0 ? -1 : n;
}

/* default: the Div by 1.4142135 stays, the Div by 4 is a Mul by 0.25, and
   every output has the original's bits. */
static void test_default_keeps_gelu_div(void) {
  mgopt_buf b;
  mgopt_program *orig = load(FIX "gelu_div_sqrt2.onnx"), *opt = optimized("default", &b);
  REQUIRE(orig && opt);
  CHECK_EQ_INT(count_kind(orig, MGOPT_OP_real_div), 2);
  CHECK_EQ_INT(count_kind(opt, MGOPT_OP_real_div), 1);
  CHECK_EQ_INT(differing(orig, opt, 64), 0);
  mgopt_program_destroy(orig);
  mgopt_program_destroy(opt);
  mgopt_buf_free(&b);
}

/* fast_math: both Divs become Muls, and x * 0.70710677 moves some GELU
   values by an ulp (the test would not see a wrong default otherwise). */
static void test_fast_math_rewrites(void) {
  mgopt_buf b;
  mgopt_program *orig = load(FIX "gelu_div_sqrt2.onnx"), *opt = optimized("fast_math", &b);
  int64_t n;
  REQUIRE(orig && opt);
  CHECK_EQ_INT(count_kind(opt, MGOPT_OP_real_div), 0);
  n = differing(orig, opt, 64);
  CHECK(n > 0);
  mgopt_program_destroy(orig);
  mgopt_program_destroy(opt);
  mgopt_buf_free(&b);
}

/* Every named pipeline that starts from `default` keeps the GELU's Div. */
static void test_default_family_exact(void) {
  static const char *const pipes[] = {"default_palettization", "default_sparsification", "default_fp16"};
  size_t i;
  for (i = 0; i < sizeof pipes / sizeof pipes[0]; i++) {
    mgopt_buf b;
    mgopt_program *opt = optimized(pipes[i], &b);
    REQUIRE(opt);
    if (count_kind(opt, MGOPT_OP_real_div) < 1) printf("  %s: the Div by 1.4142135 went\n", pipes[i]);
    CHECK(count_kind(opt, MGOPT_OP_real_div) >= 1);
    mgopt_program_destroy(opt);
    mgopt_buf_free(&b);
  }
}

static const test_case tests[] = {
    TEST(test_default_keeps_gelu_div),
    TEST(test_fast_math_rewrites),
    TEST(test_default_family_exact),
};

TEST_MAIN(tests)
