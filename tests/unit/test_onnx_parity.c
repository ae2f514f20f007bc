/* tests/unit/test_onnx_parity.c — the patterns ONNX Runtime's basic level rewrites, through `default` and the ONNX writer: the op counts each fixture must come out with.

   Fixtures: tests/fixtures/onnx/parity/, one NAME.onnx per pattern (tools/mkfixtures_parity.py).
   The counts are those measured against ONNX Runtime 1.30's basic level
   (mgopt's equal or below it) with every output EQUIV under ONNX Runtime;
   here they guard the rewrites: CSE over any output of any op, shape
   arithmetic with one symbolic dim, Pad into pools where exact, global
   pools written back, MatMul + Add over a DequantizeLinear weight as Gemm. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"

#define PAR "tests/fixtures/onnx/parity/"

/* little-endian integer of n bytes at p */
static int64_t le_int(const uint8_t *p, int n) {
  uint64_t v = 0;
  int i;
  for (i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
  return n == 4 ? (int64_t)(int32_t)(uint32_t)v : (int64_t)v;
}

static int str_is(mgopt_str s, const char *c) { return s.len == strlen(c) && memcmp(s.ptr, c, s.len) == 0; }

static int64_t count_op(const mgopt_onnx_model *m, const char *type) {
  int64_t i, n = 0;
  for (i = 0; i < m->graph->nnodes; i++)
    if (str_is(m->graph->nodes[i].op_type, type)) n++;
  return n;
}

/* The fixture through `default`, written back as an ONNX model tree (owned
   by *p, which the caller destroys); NULL on failure. */
static mgopt_onnx_model *optimized(const char *name, mgopt_program **p) {
  char path[256];
  mgopt_onnx_model *out = NULL;
  mgopt_diag d;
  mgopt_diag_clear(&d);
  *p = NULL;
  snprintf(path, sizeof path, PAR "%s.onnx", name);
  if (mgopt_onnx_load_file(path, NULL, p, &d) != MGOPT_OK) {
    printf("  %s: %s\n", path, d.msg);
    return NULL;
  }
  if (mgopt_pipeline_run(*p, mgopt_builtin_registry(), "default", NULL, &d) != MGOPT_OK ||
      mgopt_onnx_export(*p, NULL, &out, &d) != MGOPT_OK) {
    printf("  %s: %s\n", path, d.msg);
    return NULL;
  }
  return out;
}

/* Two Mul(x_scale, w_scale) over output 1 of DynamicQuantizeLinear merge, and
   so do the Muls they feed and two Relus over output 1 of a Split; random
   ops and Relus that are graph outputs stay two. */
static void test_cse_multi_output(void) {
  mgopt_program *p;
  mgopt_onnx_model *m = optimized("cse_multi_output", &p);
  REQUIRE(m != NULL);
  CHECK_EQ_INT(m->graph->nnodes, 14);
  CHECK_EQ_INT(count_op(m, "Mul"), 2);
  CHECK_EQ_INT(count_op(m, "Relu"), 3);
  CHECK_EQ_INT(count_op(m, "RandomUniformLike"), 2);
  mgopt_program_destroy(p);
}

/* Every dim but the width static: the Shape/Gather/Mul/Unsqueeze/Concat chain
   goes and the Reshape reads the constant [1, 0, 32]. */
static void test_reshape_one_symbolic(void) {
  mgopt_program *p;
  mgopt_onnx_model *m = optimized("reshape_one_symbolic", &p);
  int64_t i, k;
  int found = 0;
  REQUIRE(m != NULL);
  CHECK_EQ_INT(m->graph->nnodes, 4);
  CHECK_EQ_INT(count_op(m, "Shape") + count_op(m, "Gather") + count_op(m, "Concat"), 0);
  for (i = 0; i < m->graph->nnodes; i++) {
    const mgopt_onnx_node *n = &m->graph->nodes[i];
    if (!str_is(n->op_type, "Reshape") || n->ninputs != 2) continue;
    for (k = 0; k < m->graph->ninitializers; k++) {
      const mgopt_onnx_tensor *t = &m->graph->initializers[k];
      if (t->name.len != n->inputs[1].len || memcmp(t->name.ptr, n->inputs[1].ptr, t->name.len) != 0) continue;
      REQUIRE(t->ndims == 1 && t->dims[0] == 3);
      if (t->raw_data.len == 12 || t->raw_data.len == 24) {
        int w = (int)(t->raw_data.len / 3);
        const uint8_t *b = (const uint8_t *)t->raw_data.ptr;
        found = le_int(b, w) == 1 && le_int(b + w, w) == 0 && le_int(b + 2 * w, w) == 32;
      }
    }
  }
  CHECK(found);
  mgopt_program_destroy(p);
}

/* Batch and width symbolic and swapped: the shape stays computed. */
static void test_reshape_two_symbolic(void) {
  mgopt_program *p;
  mgopt_onnx_model *m = optimized("reshape_two_symbolic", &p);
  REQUIRE(m != NULL);
  CHECK_EQ_INT(count_op(m, "Shape"), 1);
  CHECK_EQ_INT(count_op(m, "Reshape"), 1);
  CHECK_EQ_INT(count_op(m, "Mul"), 0); /* the product of the two static dims folded */
  mgopt_program_destroy(p);
}

/* Of five Pads, three go into pools (after Relu, after Clip(0, 6), -inf into
   MaxPool) and one into the AveragePool with count_include_pad; the one
   read by MaxPool on a signed input and AveragePool excluding the padding
   stays, so does the one of value 0.5. */
static void test_pad_pool(void) {
  mgopt_program *p;
  mgopt_onnx_model *m = optimized("pad_pool", &p);
  REQUIRE(m != NULL);
  CHECK_EQ_INT(m->graph->nnodes, 11);
  CHECK_EQ_INT(count_op(m, "Pad"), 2);
  mgopt_program_destroy(p);
  m = optimized("pad_pool_limit", &p);
  REQUIRE(m != NULL);
  CHECK_EQ_INT(count_op(m, "Pad"), 1); /* the pads would reach the kernel */
  mgopt_program_destroy(p);
}

static void test_global_pools(void) {
  mgopt_program *p;
  mgopt_onnx_model *m = optimized("global_pools", &p);
  REQUIRE(m != NULL);
  CHECK_EQ_INT(count_op(m, "GlobalAveragePool"), 1);
  CHECK_EQ_INT(count_op(m, "GlobalMaxPool"), 1);
  CHECK_EQ_INT(count_op(m, "ReduceMean"), 2);
  mgopt_program_destroy(p);
}

/* The 2-d MatMul over its own DequantizeLinear weight becomes Gemm; the
   rank-3 one and the two reading one shared weight stay MatMul + Add. */
static void test_qdq_gemm(void) {
  mgopt_program *p;
  mgopt_onnx_model *m = optimized("qdq_gemm", &p);
  REQUIRE(m != NULL);
  CHECK_EQ_INT(count_op(m, "Gemm"), 1);
  CHECK_EQ_INT(count_op(m, "MatMul"), 3);
  CHECK_EQ_INT(count_op(m, "DequantizeLinear"), 4);
  CHECK_EQ_INT(m->graph->nnodes, 12);
  mgopt_program_destroy(p);
}

static const test_case tests[] = {
    TEST(test_cse_multi_output), TEST(test_reshape_one_symbolic), TEST(test_reshape_two_symbolic),
    TEST(test_pad_pool),         TEST(test_global_pools),         TEST(test_qdq_gemm),
};
TEST_MAIN(tests)
