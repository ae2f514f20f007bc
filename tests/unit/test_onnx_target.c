/* tests/unit/test_onnx_target.c — the ONNX exporter as a program's target: which ops each opset can hold, that the target and the exporter agree on every op kind, and how the fused ops are written.

   Programs are written in .mil with their outputs' types left to inference
   (parse, then mgopt_op_infer on each op in order). For each opset boundary
   the op is refused by the target and by the exporter on one side, and
   accepted and written as the expected ONNX node on the other. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <math.h>

/* ---------------------------------------------------------------- helpers */

static void infer_block(mgopt_program *p, mgopt_block *b, int depth) {
  mgopt_op *op;
  int32_t k;
  mgopt_diag d;
  for (op = b->first; op; op = op->next) {
    for (k = 0; k < op->nblocks && depth < 8; k++) infer_block(p, op->blocks[k], depth + 1);
    mgopt_diag_clear(&d);
    mgopt_op_infer(p, op, &d);
  }
}

/* The program of `text` with its types inferred, NULL when it does not parse. */
static mgopt_program *parse(const char *text) {
  mgopt_program *p = NULL;
  mgopt_diag d;
  mgopt_diag_clear(&d);
  if (mgopt_mil_parse(text, strlen(text), NULL, &p, &d) != MGOPT_OK) {
    printf("  parse: %d:%d: %s\n%s\n", d.line, d.col, d.msg, text);
    return NULL;
  }
  infer_block(p, mgopt_program_function(p, "main")->body, 0);
  return p;
}

/* The last op of main: the one each program is about. */
static mgopt_op *last_op(mgopt_program *p) { return mgopt_program_function(p, "main")->body->last; }

/* Every op of main (nested blocks' ops are asked when they are built, not here) accepted by p's target. */
static int all_accepted(mgopt_program *p) {
  mgopt_op *op;
  for (op = mgopt_program_function(p, "main")->body->first; op; op = op->next)
    if (!mgopt_program_target_accepts(p, op)) return 0;
  return 1;
}

static mgopt_status export_at(mgopt_program *p, int64_t opset, mgopt_onnx_model **out) {
  mgopt_onnx_export_options eo;
  mgopt_diag d;
  memset(&eo, 0, sizeof eo);
  eo.opset = opset;
  mgopt_diag_clear(&d);
  return mgopt_onnx_export(p, &eo, out, &d);
}

static int str_is(mgopt_str s, const char *c) { return s.len == strlen(c) && memcmp(s.ptr, c, s.len) == 0; }

/* The graph's only node of type `type` (NULL when there is none or more than one). */
static const mgopt_onnx_node *node_of(const mgopt_onnx_model *m, const char *type) {
  const mgopt_onnx_node *found = NULL;
  int64_t i;
  for (i = 0; i < m->graph->nnodes; i++)
    if (str_is(m->graph->nodes[i].op_type, type)) {
      if (found) return NULL;
      found = &m->graph->nodes[i];
    }
  return found;
}

static int64_t count_nodes(const mgopt_onnx_model *m) { return m->graph->nnodes; }

static const mgopt_onnx_attribute *attr_of(const mgopt_onnx_node *n, const char *name) {
  int64_t i;
  for (i = 0; n && i < n->nattributes; i++)
    if (str_is(n->attributes[i].name, name)) return &n->attributes[i];
  return NULL;
}

static const mgopt_onnx_tensor *init_of(const mgopt_onnx_model *m, mgopt_str name) {
  int64_t i;
  for (i = 0; i < m->graph->ninitializers; i++)
    if (m->graph->initializers[i].name.len == name.len && memcmp(m->graph->initializers[i].name.ptr, name.ptr, name.len) == 0)
      return &m->graph->initializers[i];
  return NULL;
}

/* Program `text` at `opset`: the target's answer for its last op and whether
   export succeeds must be `want`; on success *m is the written model. */
static mgopt_program *at_opset(const char *text, int64_t opset, int want, mgopt_onnx_model **m) {
  mgopt_program *p = parse(text);
  mgopt_onnx_model *out = NULL;
  mgopt_status s;
  if (!p) return NULL;
  CHECK(mgopt_onnx_set_target(p, opset) == MGOPT_OK);
  CHECK_EQ_INT(mgopt_program_target_accepts(p, last_op(p)), want);
  s = export_at(p, opset, &out);
  CHECK_EQ_INT(s == MGOPT_OK, want);
  if (!want) CHECK_EQ_INT(s, MGOPT_ERR_UNSUPPORTED);
  *m = s == MGOPT_OK ? out : NULL;
  return p;
}

/* ---------------------------------------------------------------- opset boundaries */

static const char layer_norm_text[] =
    "main(%x: (2, 3, 4, fp32)) {\n"
    "  %g: (4, fp32)* = const(val=[0.5, 0.75, 1, 1.25])\n"
    "  %b: (4, fp32)* = const(val=[0, 0.25, 0.5, 0.75])\n"
    "  %y = layer_norm(x=%x, gamma=%g, beta=%b, axes=[-1], epsilon=0.001)\n"
    "} -> (%y)\n";

static void test_layer_norm_opset_17(void) {
  mgopt_onnx_model *m = NULL;
  mgopt_program *p = at_opset(layer_norm_text, 16, 0, &m);
  const mgopt_onnx_node *n;
  mgopt_program_destroy(p);
  p = at_opset(layer_norm_text, 17, 1, &m);
  REQUIRE(p && m);
  n = node_of(m, "LayerNormalization");
  REQUIRE(n != NULL);
  CHECK_EQ_INT(n->ninputs, 3);
  CHECK(attr_of(n, "axis") && attr_of(n, "axis")->i == 2);
  CHECK(attr_of(n, "epsilon") && fabs(attr_of(n, "epsilon")->f - 0.001) < 1e-9);
  CHECK_EQ_INT(count_nodes(m), 1);
  mgopt_program_destroy(p);
}

/* Axes that are not the trailing dims have no LayerNormalization at any opset. */
static void test_layer_norm_axes(void) {
  mgopt_onnx_model *m = NULL;
  mgopt_program *p = at_opset("main(%x: (2, 3, 4, fp32)) {\n"
                              "  %g: (3, fp32)* = const(val=[1, 2, 3])\n"
                              "  %y = layer_norm(x=%x, gamma=%g, axes=[1])\n"
                              "} -> (%y)\n",
                              21, 0, &m);
  mgopt_program_destroy(p);
  /* two trailing axes, no gamma, no beta: ones over (3, 4) */
  p = at_opset("main(%x: (2, 3, 4, fp32)) {\n"
               "  %y = layer_norm(x=%x, axes=[1, 2])\n"
               "} -> (%y)\n",
               17, 1, &m);
  REQUIRE(p && m);
  {
    const mgopt_onnx_node *n = node_of(m, "LayerNormalization");
    const mgopt_onnx_tensor *g;
    REQUIRE(n != NULL && n->ninputs == 2);
    CHECK(attr_of(n, "axis") && attr_of(n, "axis")->i == 1);
    g = init_of(m, n->inputs[1]);
    REQUIRE(g != NULL);
    CHECK(g->ndims == 2 && g->dims[0] == 3 && g->dims[1] == 4);
  }
  mgopt_program_destroy(p);
  /* no gamma over a symbolic dim: nothing to write the ones with */
  p = at_opset("main(%x: (2, 3, N, fp32)) {\n"
               "  %y = layer_norm(x=%x, axes=[2])\n"
               "} -> (%y)\n",
               17, 0, &m);
  mgopt_program_destroy(p);
}

static void test_gelu_opset_20(void) {
  static const char exact[] = "main(%x: (2, 3, fp32)) {\n  %y = gelu(x=%x, mode=\"EXACT\")\n} -> (%y)\n";
  static const char tanh_[] = "main(%x: (2, 3, fp32)) {\n  %y = gelu(x=%x, mode=\"TANH_APPROXIMATION\")\n} -> (%y)\n";
  static const char sigm[] = "main(%x: (2, 3, fp32)) {\n  %y = gelu(x=%x, mode=\"SIGMOID_APPROXIMATION\")\n} -> (%y)\n";
  mgopt_onnx_model *m = NULL;
  mgopt_program *p = at_opset(exact, 19, 0, &m);
  const mgopt_onnx_node *n;
  mgopt_program_destroy(p);
  p = at_opset(exact, 20, 1, &m);
  REQUIRE(p && m);
  n = node_of(m, "Gelu");
  CHECK(n != NULL && attr_of(n, "approximate") == NULL);
  mgopt_program_destroy(p);
  p = at_opset(tanh_, 19, 0, &m);
  mgopt_program_destroy(p);
  p = at_opset(tanh_, 20, 1, &m);
  REQUIRE(p && m);
  n = node_of(m, "Gelu");
  CHECK(n != NULL && attr_of(n, "approximate") && str_is(attr_of(n, "approximate")->s, "tanh"));
  mgopt_program_destroy(p);
  p = at_opset(sigm, 21, 0, &m); /* Gelu has no sigmoid approximation */
  mgopt_program_destroy(p);
}

static void test_pixel_shuffle_opset_11(void) {
  static const char text[] =
      "main(%x: (1, 8, 3, 5, fp32)) {\n  %y = pixel_shuffle(x=%x, upscale_factor=2)\n} -> (%y)\n";
  mgopt_onnx_model *m = NULL;
  mgopt_program *p = at_opset(text, 10, 0, &m);
  const mgopt_onnx_node *n;
  mgopt_program_destroy(p);
  p = at_opset(text, 11, 1, &m);
  REQUIRE(p && m);
  n = node_of(m, "DepthToSpace");
  REQUIRE(n != NULL);
  CHECK(attr_of(n, "blocksize") && attr_of(n, "blocksize")->i == 2);
  CHECK(attr_of(n, "mode") && str_is(attr_of(n, "mode")->s, "CRD"));
  mgopt_program_destroy(p);
}

/* PRelu broadcasts its slope from opset 7: alpha (C,) is written as (C, 1, 1). */
static void test_prelu(void) {
  static const char text[] =
      "main(%x: (1, 3, 2, 2, fp32)) {\n"
      "  %a: (3, fp32)* = const(val=[0.1, 0.2, 0.3])\n"
      "  %y = prelu(x=%x, alpha=%a)\n"
      "} -> (%y)\n";
  /* before opset 7 the slope is per channel where it cannot mean the last axis (last dim 2, not 3) */
  static const char ambiguous[] =
      "main(%x: (1, 3, 2, 3, fp32)) {\n"
      "  %a: (3, fp32)* = const(val=[0.1, 0.2, 0.3])\n"
      "  %y = prelu(x=%x, alpha=%a)\n"
      "} -> (%y)\n";
  mgopt_onnx_model *m = NULL;
  mgopt_program *p = at_opset(text, 6, 1, &m);
  const mgopt_onnx_node *n;
  const mgopt_onnx_tensor *s;
  REQUIRE(p && m);
  n = node_of(m, "PRelu");
  REQUIRE(n != NULL && n->ninputs == 2);
  s = init_of(m, n->inputs[1]);
  REQUIRE(s != NULL);
  CHECK(s->ndims == 1 && s->dims[0] == 3);
  mgopt_program_destroy(p);
  p = at_opset(ambiguous, 6, 0, &m);
  mgopt_program_destroy(p);
  p = at_opset(text, 7, 1, &m);
  REQUIRE(p && m);
  n = node_of(m, "PRelu");
  REQUIRE(n != NULL && n->ninputs == 2);
  s = init_of(m, n->inputs[1]);
  REQUIRE(s != NULL);
  CHECK(s->ndims == 3 && s->dims[0] == 3 && s->dims[1] == 1 && s->dims[2] == 1);
  CHECK_EQ_INT(count_nodes(m), 1);
  mgopt_program_destroy(p);
}

/* ---------------------------------------------------------------- the fused ops' forms */

static void test_leaky_relu_and_norms(void) {
  mgopt_onnx_model *m = NULL;
  mgopt_program *p = at_opset("main(%x: (1, 3, 2, 2, fp32)) {\n  %y = leaky_relu(x=%x, alpha=0.2)\n} -> (%y)\n", 13, 1, &m);
  REQUIRE(p && m);
  CHECK(node_of(m, "LeakyRelu") && attr_of(node_of(m, "LeakyRelu"), "alpha") &&
        fabs(attr_of(node_of(m, "LeakyRelu"), "alpha")->f - 0.2) < 1e-7);
  mgopt_program_destroy(p);
  p = at_opset("main(%x: (1, 3, 2, 2, fp32)) {\n"
               "  %g: (3, fp32)* = const(val=[1, 2, 3])\n"
               "  %b: (3, fp32)* = const(val=[0, 1, 2])\n"
               "  %y = instance_norm(x=%x, gamma=%g, beta=%b, epsilon=0.01)\n"
               "} -> (%y)\n",
               13, 1, &m);
  REQUIRE(p && m);
  CHECK(node_of(m, "InstanceNormalization") && node_of(m, "InstanceNormalization")->ninputs == 3);
  mgopt_program_destroy(p);
  /* batch_norm without gamma and beta: BatchNormalization gets ones and zeros of C */
  p = at_opset("main(%x: (1, 3, 2, 2, fp32)) {\n"
               "  %mu: (3, fp32)* = const(val=[1, 2, 3])\n"
               "  %v: (3, fp32)* = const(val=[1, 1, 2])\n"
               "  %y = batch_norm(x=%x, mean=%mu, variance=%v, epsilon=0.001)\n"
               "} -> (%y)\n",
               13, 1, &m);
  REQUIRE(p && m);
  {
    const mgopt_onnx_node *n = node_of(m, "BatchNormalization");
    const mgopt_onnx_tensor *g, *b;
    REQUIRE(n != NULL && n->ninputs == 5);
    g = init_of(m, n->inputs[1]);
    b = init_of(m, n->inputs[2]);
    REQUIRE(g && b);
    CHECK(g->ndims == 1 && g->dims[0] == 3 && b->ndims == 1 && b->dims[0] == 3);
    CHECK(g->raw_data.len == 12 && harness_le_f32(g->raw_data.ptr + 8) == 1.0f);
    CHECK(b->raw_data.len == 12 && harness_le_f32(b->raw_data.ptr + 8) == 0.0f);
  }
  mgopt_program_destroy(p);
}

/* linear: Gemm at rank 2; at rank 3 MatMul with the weight written transposed, then Add. */
static void test_linear(void) {
  mgopt_onnx_model *m = NULL;
  mgopt_program *p = at_opset("main(%x: (2, 3, fp32)) {\n"
                              "  %w: (2, 3, fp32)* = const(val=[[1, 2, 3], [4, 5, 6]])\n"
                              "  %b: (2, fp32)* = const(val=[7, 8])\n"
                              "  %y = linear(x=%x, weight=%w, bias=%b)\n"
                              "} -> (%y)\n",
                              13, 1, &m);
  REQUIRE(p && m);
  CHECK(node_of(m, "Gemm") && attr_of(node_of(m, "Gemm"), "transB") && node_of(m, "Gemm")->ninputs == 3);
  CHECK_EQ_INT(count_nodes(m), 1);
  mgopt_program_destroy(p);
  p = at_opset("main(%x: (5, 2, 3, fp32)) {\n"
               "  %w: (2, 3, fp32)* = const(val=[[1, 2, 3], [4, 5, 6]])\n"
               "  %b: (2, fp32)* = const(val=[7, 8])\n"
               "  %y = linear(x=%x, weight=%w, bias=%b)\n"
               "} -> (%y)\n",
               13, 1, &m);
  REQUIRE(p && m);
  {
    const mgopt_onnx_node *mm = node_of(m, "MatMul");
    const mgopt_onnx_tensor *wt;
    static const float want[6] = {1, 4, 2, 5, 3, 6};
    int k;
    REQUIRE(mm != NULL && node_of(m, "Add") != NULL);
    CHECK_EQ_INT(count_nodes(m), 2); /* no Transpose node */
    wt = init_of(m, mm->inputs[1]);
    REQUIRE(wt != NULL);
    CHECK(wt->ndims == 2 && wt->dims[0] == 3 && wt->dims[1] == 2);
    REQUIRE(wt->raw_data.len == 24);
    for (k = 0; k < 6; k++) CHECK(harness_le_f32(wt->raw_data.ptr + 4 * k) == want[k]);
  }
  mgopt_program_destroy(p);
}

/* The written model read back and written again at opset: its only node. */
static const mgopt_onnx_node *written_again(const mgopt_onnx_model *m, int64_t opset, mgopt_onnx_model **m2,
                                            mgopt_program **q) {
  mgopt_buf b;
  mgopt_diag d;
  memset(&b, 0, sizeof b);
  *m2 = NULL;
  *q = NULL;
  if (mgopt_onnx_write(m, NULL, &b, NULL, &d) != MGOPT_OK) return NULL;
  if (mgopt_onnx_load(b.data, b.len, NULL, q, &d) != MGOPT_OK || export_at(*q, opset, m2) != MGOPT_OK) *m2 = NULL;
  mgopt_buf_free(&b);
  return *m2 && count_nodes(*m2) == 1 ? &(*m2)->graph->nodes[0] : NULL;
}

/* A GlobalAveragePool / GlobalMaxPool read in (a reduce_mean / reduce_max
   with keep_dims over the spatial axes, marked MGOPT_OP_ONNX_GLOBAL_POOL) is
   written back as that op at every opset; a reduction read in as a
   ReduceMean / ReduceMax over the same axes stays one (ONNX Runtime sums
   the two in different orders), as does every reduction a .mil program has
   and the marked forms the global pools cannot hold (fp64). */
static void test_global_pools(void) {
  static const struct {
    const char *text, *first, *again;
  } cases[] = {
      {"main(%x: (1, 2, 3, 4, fp32)) {\n  %y: (1, 2, 1, 1, fp32) = onnx::GlobalAveragePool(in0=%x)\n} -> (%y)\n",
       "GlobalAveragePool", "GlobalAveragePool"},
      {"main(%x: (1, 2, 3, 4, fp32)) {\n  %y: (1, 2, 1, 1, fp32) = onnx::GlobalMaxPool(in0=%x)\n} -> (%y)\n",
       "GlobalMaxPool", "GlobalMaxPool"},
      {"main(%x: (1, 2, 3, fp16)) {\n  %y: (1, 2, 1, fp16) = onnx::GlobalAveragePool(in0=%x)\n} -> (%y)\n",
       "GlobalAveragePool", "GlobalAveragePool"},
      {"main(%x: (1, 2, 3, 4, fp32)) {\n  %y = reduce_mean(x=%x, axes=[2, 3], keep_dims=true)\n} -> (%y)\n",
       "ReduceMean", "ReduceMean"},
      {"main(%x: (1, 2, 3, 4, fp32)) {\n  %y = reduce_max(x=%x, axes=[-1, 2], keep_dims=true)\n} -> (%y)\n",
       "ReduceMax", "ReduceMax"},
      {"main(%x: (1, 2, 3, fp32)) {\n  %y = reduce_mean(x=%x, axes=[-1], keep_dims=true)\n} -> (%y)\n",
       "ReduceMean", "ReduceMean"},
      {"main(%x: (1, 2, 3, 4, fp32)) {\n  %y = reduce_mean(x=%x, axes=[2, 3], keep_dims=false)\n} -> (%y)\n",
       "ReduceMean", "ReduceMean"},
      {"main(%x: (1, 2, 3, 4, int32)) {\n  %y = reduce_max(x=%x, axes=[2, 3], keep_dims=true)\n} -> (%y)\n",
       "ReduceMax", "ReduceMax"},
      /* fp64: ONNX Runtime's CPU global pools take no double */
      {"main(%x: (1, 2, 3, 4, fp64)) {\n  %y: (1, 2, 1, 1, fp64) = onnx::GlobalAveragePool(in0=%x)\n} -> (%y)\n",
       "GlobalAveragePool", "ReduceMean"},
  };
  static const int64_t ops[] = {11, 13, 18};
  size_t i, k;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (k = 0; k < sizeof ops / sizeof ops[0]; k++) {
      mgopt_onnx_model *m = NULL, *m2 = NULL;
      mgopt_program *p = at_opset(cases[i].text, ops[k], 1, &m), *q = NULL;
      const mgopt_onnx_node *n;
      REQUIRE(p && m);
      CHECK(node_of(m, cases[i].first) != NULL);
      CHECK_EQ_INT(count_nodes(m), 1);
      n = written_again(m, ops[k], &m2, &q);
      CHECK(n != NULL && str_is(n->op_type, cases[i].again));
      if (q) mgopt_program_destroy(q);
      mgopt_program_destroy(p);
    }
}

/* A folded conv bias is Conv's B; pad reflect is Pad's reflect. */
static void test_conv_bias_and_reflect_pad(void) {
  mgopt_onnx_model *m = NULL;
  mgopt_program *p = at_opset("main(%x: (1, 2, 4, 4, fp32)) {\n"
                              "  %w: (1, 2, 1, 1, fp32)* = const(val=[[[[1]], [[2]]]])\n"
                              "  %b: (1, fp32)* = const(val=[0.5])\n"
                              "  %y = conv(x=%x, weight=%w, bias=%b, pad_type=\"valid\")\n"
                              "} -> (%y)\n",
                              13, 1, &m);
  REQUIRE(p && m);
  CHECK(node_of(m, "Conv") && node_of(m, "Conv")->ninputs == 3);
  mgopt_program_destroy(p);
  p = at_opset("main(%x: (1, 2, 4, 4, fp32)) {\n"
               "  %pd: (4, int32)* = const(val=[1, 1, 2, 2])\n"
               "  %y = pad(x=%x, pad=%pd, mode=\"reflect\")\n"
               "} -> (%y)\n",
               13, 1, &m);
  REQUIRE(p && m);
  CHECK(node_of(m, "Pad") && attr_of(node_of(m, "Pad"), "mode") &&
        str_is(attr_of(node_of(m, "Pad"), "mode")->s, "reflect"));
  mgopt_program_destroy(p);
}

/* The importer sets the target for the model's opset; mgopt_onnx_set_target moves it. */
static void test_import_sets_target(void) {
  mgopt_program *p = NULL;
  mgopt_diag d;
  mgopt_op *ln;
  mgopt_diag_clear(&d);
  REQUIRE(mgopt_onnx_load_file("tests/fixtures/onnx/ops/relu_13.onnx", NULL, &p, &d) == MGOPT_OK);
  {
    mgopt_block *b = mgopt_program_function(p, "main")->body;
    mgopt_value *x = b->args[0];
    mgopt_value *vals[1];
    static const char *const slots[1] = {"x"};
    int64_t axes[1] = {-1};
    vals[0] = x;
    ln = mgopt_build_op(p, b, NULL, "layer_norm", "ln_test", 1, slots, vals, 1);
    REQUIRE(ln != NULL);
    CHECK(mgopt_op_set_ints(ln, "axes", axes, 1) == MGOPT_OK);
  }
  CHECK_EQ_INT(mgopt_program_target_accepts(p, ln), 0); /* opset 13 */
  CHECK(mgopt_onnx_set_target(p, 17) == MGOPT_OK);
  CHECK_EQ_INT(mgopt_program_target_accepts(p, ln), 1);
  CHECK(mgopt_onnx_set_target(p, 0) == MGOPT_OK); /* back to the model's own */
  CHECK_EQ_INT(mgopt_program_target_accepts(p, ln), 0);
  mgopt_op_erase(ln);
  mgopt_program_destroy(p);
  CHECK(mgopt_onnx_set_target(NULL, 17) == MGOPT_ERR_INVALID_ARG);
}

/* ---------------------------------------------------------------- every op kind */

/* Programs for the kinds the generic forms below do not make, and the
   variants each row's check tells apart. */
static const char *const special[] = {
    /* const alone */
    "main() {\n  %c: (2, fp32)* = const(val=[1, 2])\n} -> (%c)\n",
    "main() {\n  %c: (2, uint4)* = const(val=[1, 2])\n} -> (%c)\n",
    "main(%x: (2, 3, fp32)) {\n  %y = clip(x=%x, alpha=-1.0, beta=1.0)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32)) {\n  %y = cast(x=%x, dtype=\"int32\")\n} -> (%y)\n",
    "main(%x: (2, 3, fp32)) {\n  %y = cast(x=%x, dtype=\"uint4\")\n} -> (%y)\n",
    "main(%x: (2, 3, fp32)) {\n  %y = softmax(x=%x, axis=1)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32)) {\n  %y = softmax(x=%x, axis=0)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32), %s: (2, bool)) {\n  %y = prelu(x=%x, alpha=%x)\n} -> (%y)\n",
    "main(%x: (1, 3, 2, fp32), %a: (3, fp32)) {\n  %y = prelu(x=%x, alpha=%a)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32)) {\n  %a: (3, fp32)* = const(val=[1, 2, 3])\n  %y = prelu(x=%x, alpha=%a)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32)) {\n  %y = gelu(x=%x)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32)) {\n  %s: (2, int32)* = const(val=[3, 2])\n  %y = reshape(x=%x, shape=%s)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32)) {\n  %y = transpose(x=%x, perm=[1, 0])\n} -> (%y)\n",
    "main(%x: (2, 3, fp32)) {\n  %y = expand_dims(x=%x, axes=[0])\n} -> (%y)\n",
    "main(%x: (1, 3, fp32)) {\n  %y = squeeze(x=%x, axes=[0])\n} -> (%y)\n",
    "main(%x: (1, 3, fp32)) {\n  %y = squeeze(x=%x)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32)) {\n  %y = concat(values=(%x, %x), axis=0)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32)) {\n  %y = concat(values=(%x, %x), axis=0, interleave=true)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32)) {\n  %y = stack(values=(%x, %x), axis=0)\n} -> (%y)\n",
    "main(%x: (4, 3, fp32)) {\n  %a, %b = split(x=%x, num_splits=2, axis=0)\n} -> (%a, %b)\n",
    "main(%x: (4, 3, fp32)) {\n  %a, %b = split(x=%x, split_sizes=[1, 3], axis=0)\n} -> (%a, %b)\n",
    "main(%x: (4, 3, fp32)) {\n"
    "  %b: (2, int32)* = const(val=[1, 0])\n  %e: (2, int32)* = const(val=[3, 3])\n"
    "  %y = slice_by_index(x=%x, begin=%b, end=%e)\n} -> (%y)\n",
    "main(%x: (4, 3, fp32)) {\n"
    "  %b: (2, int32)* = const(val=[0, 0])\n  %e: (2, int32)* = const(val=[4, 3])\n  %s: (2, int32)* = const(val=[2, 1])\n"
    "  %y = slice_by_index(x=%x, begin=%b, end=%e, stride=%s)\n} -> (%y)\n",
    "main(%x: (4, 3, fp32), %e: (2, int32)) {\n"
    "  %b: (2, int32)* = const(val=[0, 0])\n"
    "  %y = slice_by_index(x=%x, begin=%b, end=%e)\n} -> (%y)\n",
    "main(%x: (4, 3, fp32)) {\n"
    "  %b: (2, int32)* = const(val=[1, 0])\n  %s: (2, int32)* = const(val=[2, 3])\n"
    "  %y = slice_by_size(x=%x, begin=%b, size=%s)\n} -> (%y)\n",
    "main(%x: (4, 3, fp32)) {\n  %i: (2, int32)* = const(val=[0, 2])\n  %y = gather(x=%x, indices=%i, axis=0)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32), %i: (2, 2, int32)) {\n  %y = gather(x=%x, indices=%i, axis=1, batch_dims=1)\n} -> (%y)\n",
    "main(%i: (2, int32)) {\n  %y = one_hot(indices=%i, one_hot_vector_size=4)\n} -> (%y)\n",
    "main(%x: (1, 2, 4, 4, fp32)) {\n  %pd: (4, int32)* = const(val=[1, 1, 2, 2])\n"
    "  %y = pad(x=%x, pad=%pd, mode=\"replicate\")\n} -> (%y)\n",
    "main(%x: (1, 2, 4, 4, fp32)) {\n  %pd: (4, int32)* = const(val=[1, 1, 2, 2])\n"
    "  %y = pad(x=%x, pad=%pd, mode=\"constant\", constant_val=2.5)\n} -> (%y)\n",
    "main(%x: (1, 2, 4, 4, fp32)) {\n  %pd: (4, int32)* = const(val=[1, 1, 2, 2])\n"
    "  %y = pad(x=%x, pad=%pd, mode=\"symmetric\")\n} -> (%y)\n",
    "main(%x: (1, 2, 4, 4, fp32), %pd: (4, int32)) {\n  %y = pad(x=%x, pad=%pd)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32)) {\n  %r: (2, int32)* = const(val=[2, 1])\n  %y = tile(x=%x, reps=%r)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32), %w: (4, 3, fp32)) {\n  %y = matmul(x=%x, y=%w, transpose_y=true)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32), %w: (3, 4, fp32)) {\n  %y = matmul(x=%x, y=%w)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32)) {\n  %w: (4, 3, fp32)* = const(val=[[1, 2, 3], [4, 5, 6], [1, 2, 3], [4, 5, 6]])\n"
    "  %y = linear(x=%x, weight=%w)\n} -> (%y)\n",
    "main(%x: (2, 2, 3, fp32), %w: (4, 3, fp32)) {\n  %y = linear(x=%x, weight=%w)\n} -> (%y)\n",
    "main(%x: (1, 2, 4, 4, fp32), %w: (3, 2, 3, 3, fp32)) {\n"
    "  %y = conv(x=%x, weight=%w, pad_type=\"custom\", pad=[1, 1, 1, 1])\n} -> (%y)\n",
    "main(%x: (1, 2, 4, 4, fp32), %w: (3, 2, 3, 3, fp32)) {\n  %y = conv(x=%x, weight=%w, pad_type=\"same\")\n} -> (%y)\n",
    "main(%x: (1, 2, 4, 4, fp32), %w: (2, 3, 3, 3, fp32)) {\n"
    "  %y = conv_transpose(x=%x, weight=%w, pad_type=\"valid\")\n} -> (%y)\n",
    "main(%x: (1, 2, 4, 4, fp32)) {\n  %y = avg_pool(x=%x, kernel_sizes=[2, 2], strides=[2, 2], pad_type=\"valid\")\n} -> (%y)\n",
    "main(%x: (1, 2, 4, 4, fp32)) {\n  %y = max_pool(x=%x, kernel_sizes=[2, 2], strides=[2, 2], pad_type=\"valid\")\n} -> (%y)\n",
    "main(%x: (1, 3, 2, 2, fp32)) {\n  %mu: (3, fp32)* = const(val=[1, 2, 3])\n  %v: (3, fp32)* = const(val=[1, 1, 2])\n"
    "  %g: (3, fp32)* = const(val=[1, 2, 3])\n  %b: (3, fp32)* = const(val=[1, 1, 2])\n"
    "  %y = batch_norm(x=%x, mean=%mu, variance=%v, gamma=%g, beta=%b)\n} -> (%y)\n",
    "main(%x: (1, C, 2, 2, fp32), %mu: (C, fp32), %v: (C, fp32)) {\n"
    "  %y = batch_norm(x=%x, mean=%mu, variance=%v)\n} -> (%y)\n",
    "main(%x: (1, 3, 2, 2, fp32)) {\n  %y = instance_norm(x=%x)\n} -> (%y)\n",
    "main(%x: (1, 1, 5, 5, fp32)) {\n  %y = space_to_batch(x=%x, block_shape=[2, 2], paddings=[2, 3, 2, 3])\n} -> (%y)\n",
    "main(%x: (4, 1, 3, 3, fp32)) {\n  %y = batch_to_space(x=%x, block_shape=[2, 2], crops=[0, 1, 0, 1])\n} -> (%y)\n",
    "main(%s: state(2, fp16)) {\n  %y = read_state(input=%s)\n} -> (%y)\n",
    "main(%x: (2, fp16), %s: state(2, fp16)) {\n  %y = coreml_update_state(state=%s, value=%x)\n} -> (%y)\n",
    "main(%x: (1, C, 2, 2, fp32)) {\n  %y = instance_norm(x=%x)\n} -> (%y)\n",
    "main(%x: (2, 3, 4, fp32)) {\n  %y = layer_norm(x=%x)\n} -> (%y)\n",
    "main(%x: (2, 3, 4, fp32)) {\n  %g: (4, fp32)* = const(val=[1, 2, 3, 4])\n"
    "  %y = layer_norm(x=%x, gamma=%g, axes=[2])\n} -> (%y)\n",
    "main(%x: (2, 3, 4, fp32)) {\n  %y = layer_norm(x=%x, axes=[0])\n} -> (%y)\n",
    "main(%x: (2, 3, 4, fp32)) {\n  %y = reduce_sum(x=%x, axes=[1], keep_dims=true)\n} -> (%y)\n",
    "main(%x: (2, 3, 4, fp32)) {\n  %y = reduce_mean(x=%x, axes=[1])\n} -> (%y)\n",
    "main(%x: (2, 3, 4, fp32)) {\n  %y = reduce_max(x=%x, axes=[1])\n} -> (%y)\n",
    "main(%x: (2, 3, 4, fp32)) {\n  %y = reduce_min(x=%x)\n} -> (%y)\n",
    "main(%x: (2, 3, 4, fp32)) {\n  %y = reduce_prod(x=%x, axes=[-1])\n} -> (%y)\n",
    "main(%x: (2, 3, 4, fp32)) {\n  %y = reduce_argmax(x=%x, axis=-1, output_dtype=\"int64\")\n} -> (%y)\n",
    "main(%x: (2, 3, 4, fp32)) {\n  %y = reduce_argmin(x=%x, axis=1)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32)) {\n  %y = cumsum(x=%x, axis=1, reverse=true)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32), %z: (3, 4, fp32)) {\n  %y = einsum(values=(%x, %z), equation=\"ij,jk->ik\")\n} -> (%y)\n",
    "main(%x: (1, 2, 3, 4, fp32)) {\n  %y = upsample_nearest_neighbor(x=%x, scale_factor_height=2.0)\n} -> (%y)\n",
    "main(%x: (1, 2, 3, 4, fp32)) {\n  %y = upsample_nearest_neighbor(x=%x, scale_factor_height=0.5)\n} -> (%y)\n",
    "main(%x: (1, 2, 3, 4, fp32)) {\n  %y = resize_nearest_neighbor(x=%x, target_size_height=6, target_size_width=8)\n} -> (%y)\n",
    "main(%x: (1, 2, 3, 4, fp32)) {\n  %y = resize_nearest_neighbor(x=%x, target_size_height=4, target_size_width=8)\n} -> (%y)\n",
    "main(%x: (1, 2, 3, 4, fp32)) {\n  %y = upsample_bilinear(x=%x, scale_factor_width=1.5)\n} -> (%y)\n",
    "main(%x: (1, 2, 3, 4, fp32)) {\n  %y = upsample_bilinear(x=%x, scale_factor_width=1.1)\n} -> (%y)\n",
    "main(%x: (1, 2, 3, 4, fp32)) {\n  %y = resize_bilinear(x=%x, target_size_height=5, sampling_mode=\"UNALIGN_CORNERS\")\n} -> (%y)\n",
    "main(%x: (1, 2, 3, 4, fp32)) {\n  %y = resize_bilinear(x=%x, sampling_mode=\"OFFSET_CORNERS\")\n} -> (%y)\n",
    "main(%x: (2, 3, 4, fp32)) {\n  %y = reduce_l1_norm(x=%x, axes=[1])\n} -> (%y)\n",
    "main(%x: (2, 3, 4, fp32)) {\n  %y = reduce_l2_norm(x=%x, axes=[-1], keep_dims=true)\n} -> (%y)\n",
    "main(%x: (2, 3, 4, fp32)) {\n  %y = reduce_log_sum(x=%x)\n} -> (%y)\n",
    "main(%x: (2, 3, 4, fp32)) {\n  %y = reduce_log_sum_exp(x=%x, axes=[0, 2])\n} -> (%y)\n",
    "main(%x: (2, 3, 4, fp32)) {\n  %y = reduce_sum_square(x=%x, axes=[1])\n} -> (%y)\n",
    "main(%x: (2, 3, fp32)) {\n  %i: (2, 2, int32)* = const(val=[[0, 2], [1, -1]])\n"
    "  %y = gather_along_axis(x=%x, indices=%i, axis=1)\n} -> (%y)\n",
    "main(%d: (2, 3, fp32), %u: (2, 2, fp32)) {\n  %i: (2, 2, int32)* = const(val=[[0, 2], [1, -1]])\n"
    "  %y = scatter_along_axis(data=%d, indices=%i, updates=%u, axis=1, mode=\"update\")\n} -> (%y)\n",
    "main(%d: (2, 3, fp32), %i: (2, 3, int64), %u: (2, 3, fp32)) {\n"
    "  %y = scatter_along_axis(data=%d, indices=%i, updates=%u, mode=\"max\")\n} -> (%y)\n",
    "main(%d: (2, 3, fp32), %i: (2, 3, int64), %u: (2, 3, fp32)) {\n"
    "  %y = scatter_along_axis(data=%d, indices=%i, updates=%u, mode=\"sub\")\n} -> (%y)\n",
    "main(%d: (4, 3, fp32), %i: (2, 1, int64), %u: (2, 3, fp32)) {\n"
    "  %y = scatter_nd(data=%d, indices=%i, updates=%u)\n} -> (%y)\n",
    "main(%x: (2, 3, 4, fp32), %i: (2, 1, int32)) {\n  %y = gather_nd(x=%x, indices=%i, batch_dims=1)\n} -> (%y)\n",
    "main(%x: (3, 2, fp32), %l: (2, int32)) {\n"
    "  %y = reverse_sequence(x=%x, lengths=%l, seq_axis=0, batch_axis=1)\n} -> (%y)\n",
    "main(%x: (1, 8, 3, 5, fp32)) {\n  %y = depth_to_space(x=%x, block_size=2)\n} -> (%y)\n",
    "main(%x: (1, 2, 4, 6, fp32)) {\n  %y = space_to_depth(x=%x, block_size=2)\n} -> (%y)\n",
    "main(%x: (3, 4, fp32)) {\n  %v, %i = topk(x=%x, k=2, output_indices_dtype=\"int64\")\n} -> (%v, %i)\n",
    "main(%x: (3, 4, fp32)) {\n  %v, %i = topk(x=%x, k=2, ascending=true, output_indices_dtype=\"int64\")\n} -> (%v, %i)\n",
    "main(%x: (3, 4, fp32)) {\n  %v, %i = topk(x=%x, k=2)\n} -> (%v, %i)\n",
    "main(%e: (int32)) {\n  %s: (int32)* = const(val=0)\n  %t: (int32)* = const(val=2)\n"
    "  %y = range_1d(end=%e, start=%s, step=%t)\n} -> (%y)\n",
    "main(%s: (2, int32)) {\n  %v: (fp16)* = const(val=1.5)\n  %y = fill(shape=%s, value=%v)\n} -> (%y)\n",
    "main(%s: (2, int64)) {\n  %y = fill(shape=%s)\n} -> (%y)\n",
    "main(%x: (1, 8, 3, 5, fp32)) {\n  %y = pixel_shuffle(x=%x, upscale_factor=2)\n} -> (%y)\n",
    "main(%x: (8, 3, 5, fp32)) {\n  %y = pixel_shuffle(x=%x, upscale_factor=2)\n} -> (%y)\n",
    "main(%x: (2, fp32), %p: (bool)) {\n  %o: (2, fp32) = cond(pred=%p)\n    then_branch() {\n    } -> (%x)\n"
    "    else_branch() {\n    } -> (%x)\n} -> (%o)\n",
    "main(%x: (2, fp32)) {\n  %s: (fp32)* = const(val=0.5)\n"
    "  %y = quantize(input=%x, scale=%s, output_dtype=\"int8\")\n} -> (%y)\n",
    "main(%x: (2, int8)) {\n  %s: (fp32)* = const(val=0.5)\n  %y = dequantize(input=%x, scale=%s)\n} -> (%y)\n",
    "main() {\n  %d: (2, int8)* = const(val=[1, 2])\n  %z: (int8)* = const(val=0)\n  %s: (fp32)* = const(val=0.5)\n"
    "  %y = constexpr_affine_dequantize(quantized_data=%d, zero_point=%z, scale=%s, axis=0)\n} -> (%y)\n",
    "main() {\n  %c: (2, fp16)* = const(val=[1, 2])\n  %y = constexpr_cast(source_val=%c, output_dtype=\"fp32\")\n} -> (%y)\n",
    "main(%x: (1, 4, 2, 2, fp32)) {\n  %y = local_response_norm(x=%x, size=3)\n} -> (%y)\n",
    "main(%x: (2, 3, fp16)) {\n  %y = thresholded_relu(x=%x, alpha=0.5)\n} -> (%y)\n",
    "main(%x: (2, 3, int32), %z: (2, 3, int32)) {\n  %y = mod(x=%x, y=%z)\n} -> (%y)\n",
    "main(%x: (2, 3, int32), %z: (2, 3, int32)) {\n  %y = maximum(x=%x, y=%z)\n} -> (%y)\n",
    "main(%x: (2, 3, fp32), %z: (2, 3, int64)) {\n  %y = pow(x=%x, y=%z)\n} -> (%y)\n",
    "main(%x: (2, 3, int8)) {\n  %y = clip(x=%x, alpha=-3.0, beta=5.0)\n} -> (%y)\n",
    "main(%x: (2, 3, int8)) {\n  %y = clip(x=%x, alpha=-300.0, beta=5.0)\n} -> (%y)\n",
    "main(%x: (2, 1, 3, fp32), %h: (1, 1, fp32), %c: (1, 1, fp32)) {\n"
    "  %wi: (4, 3, fp32)* = const(val=[[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]])\n"
    "  %wh: (4, 1, fp32)* = const(val=[[1], [2], [3], [4]])\n"
    "  %y, %yh, %yc = lstm(x=%x, initial_h=%h, initial_c=%c, weight_ih=%wi, weight_hh=%wh, output_sequence=true)\n"
    "} -> (%y, %yh, %yc)\n",
    "main(%x: (2, 1, 3, fp32), %h: (1, 1, fp32), %c: (1, 1, fp32)) {\n"
    "  %wi: (4, 3, fp32)* = const(val=[[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]])\n"
    "  %wh: (4, 1, fp32)* = const(val=[[1], [2], [3], [4]])\n"
    "  %y, %yh, %yc = lstm(x=%x, initial_h=%h, initial_c=%c, weight_ih=%wi, weight_hh=%wh, clip=2.0)\n"
    "} -> (%y, %yh, %yc)\n",
    "main(%x: (2, 1, 3, fp32), %h: (1, 1, fp32)) {\n"
    "  %wi: (3, 3, fp32)* = const(val=[[1, 0, 0], [0, 1, 0], [0, 0, 1]])\n"
    "  %wh: (3, 1, fp32)* = const(val=[[1], [2], [3]])\n"
    "  %y, %yh = gru(x=%x, initial_h=%h, weight_ih=%wi, weight_hh=%wh, direction=\"reverse\", output_sequence=true)\n"
    "} -> (%y, %yh)\n",
    "main(%x: (2, 1, 3, fp32), %h: (1, 1, fp32), %wh: (1, 1, fp32)) {\n"
    "  %wi: (1, 3, fp32)* = const(val=[[1, 0, 0]])\n"
    "  %y, %yh = rnn(x=%x, initial_h=%h, weight_ih=%wi, weight_hh=%wh, activation=\"relu\")\n"
    "} -> (%y, %yh)\n",
    "main(%x: (2, 1, 3, fp32), %h: (1, 1, fp32)) {\n"
    "  %wi: (1, 3, fp32)* = const(val=[[1, 0, 0]])\n  %wh: (1, 1, fp32)* = const(val=[[0.5]])\n"
    "  %y, %yh = rnn(x=%x, initial_h=%h, weight_ih=%wi, weight_hh=%wh, activation=\"relu\")\n"
    "} -> (%y, %yh)\n",
    "main(%x: (1, 3, 2, 2, fp32)) {\n  %b: (3, fp32)* = const(val=[1, 2, 3])\n"
    "  %y = bias_add(x=%x, bias=%b, axis=1)\n} -> (%y)\n",
    "main(%x: (1, 3, fp32), %b: (3, fp32)) {\n  %y = bias_add(x=%x, bias=%b)\n} -> (%y)\n",
};

static const int64_t opsets[] = {1, 5, 6, 7, 9, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20, 21};

/* For one program at every opset: the target accepts every op of main
   exactly when the exporter writes the program. Marks its kinds in seen[]. */
static int agrees(const char *text, int *seen, int *accepted_somewhere) {
  size_t i;
  int ok = 1;
  for (i = 0; i < sizeof opsets / sizeof opsets[0]; i++) {
    mgopt_program *p = parse(text);
    mgopt_onnx_model *m = NULL;
    mgopt_op *op;
    int acc, wrote;
    if (!p) return 0;
    for (op = mgopt_program_function(p, "main")->body->first; op; op = op->next)
      if (op->kind > 0 && op->kind < MGOPT_OP__COUNT) seen[op->kind] = 1;
    if (mgopt_onnx_set_target(p, opsets[i]) != MGOPT_OK) ok = 0;
    acc = all_accepted(p);
    wrote = export_at(p, opsets[i], &m) == MGOPT_OK;
    if (acc != wrote) {
      printf("  opset %d: target %s, exporter %s:\n%s", (int)opsets[i], acc ? "accepts" : "refuses",
             wrote ? "writes" : "refuses", text);
      ok = 0;
    }
    if (acc) *accepted_somewhere = 1;
    mgopt_program_destroy(p);
  }
  return ok;
}

static void test_target_agrees_with_exporter(void) {
  int seen[MGOPT_OP__COUNT], k, programs = 0, writable = 0;
  char text[512];
  size_t i;
  memset(seen, 0, sizeof seen);
  /* every kind the registry describes well enough to write generically:
     elementwise unary and binary ops without required attributes */
  for (k = 1; k < MGOPT_OP__COUNT; k++) {
    const mgopt_op_def *def = mgopt_op_def_get(k);
    int32_t a, required = 0;
    const char *dt = (def->traits & MGOPT_TRAIT_LOGICAL) ? "bool" : "fp32";
    for (a = 0; a < def->nattrs; a++)
      if (def->attrs[a].flags & MGOPT_ATTR_REQUIRED) required = 1;
    if (required || def->nblocks) continue;
    if ((def->traits & MGOPT_TRAIT_UNARY) && def->nslots == 1 && strcmp(def->slots[0].name, "x") == 0)
      snprintf(text, sizeof text, "main(%%x: (1, 4, 2, 2, %s)) {\n  %%y = %s(x=%%x)\n} -> (%%y)\n", dt, def->name);
    else if ((def->traits & MGOPT_TRAIT_BINARY) && def->nslots == 2)
      snprintf(text, sizeof text, "main(%%x: (1, 4, %s), %%z: (1, 4, %s)) {\n  %%y = %s(x=%%x, y=%%z)\n} -> (%%y)\n", dt,
               dt, def->name);
    else if (k == MGOPT_OP_identity)
      snprintf(text, sizeof text, "main(%%x: (1, 4, fp32)) {\n  %%y = identity(x=%%x)\n} -> (%%y)\n");
    else if (k == MGOPT_OP_select)
      snprintf(text, sizeof text,
               "main(%%c: (1, 4, bool), %%x: (1, 4, fp32)) {\n  %%y = select(cond=%%c, a=%%x, b=%%x)\n} -> (%%y)\n");
    else
      continue;
    {
      int w = 0;
      CHECK(agrees(text, seen, &w));
      programs++;
      writable += w;
    }
  }
  for (i = 0; i < sizeof special / sizeof special[0]; i++) {
    int w = 0;
    CHECK(agrees(special[i], seen, &w));
    programs++;
    writable += w;
  }
  for (k = 1; k < MGOPT_OP__COUNT; k++)
    if (!seen[k] && k != MGOPT_OP_while_loop && strncmp(mgopt_op_def_get(k)->name, "constexpr_", 10) != 0)
      printf("  no program has a %s\n", mgopt_op_def_get(k)->name);
  for (k = 1; k < MGOPT_OP__COUNT; k++)
    CHECK(seen[k] || k == MGOPT_OP_while_loop || strncmp(mgopt_op_def_get(k)->name, "constexpr_", 10) == 0);
  printf("note: onnx target: %d programs at %d opsets, %d writable at some opset\n", programs,
         (int)(sizeof opsets / sizeof opsets[0]), writable);
  CHECK(writable > 40 && writable < programs);
}

static const test_case tests[] = {
    TEST(test_layer_norm_opset_17),
    TEST(test_layer_norm_axes),
    TEST(test_gelu_opset_20),
    TEST(test_pixel_shuffle_opset_11),
    TEST(test_prelu),
    TEST(test_leaky_relu_and_norms),
    TEST(test_linear),
    TEST(test_conv_bias_and_reflect_pad),
    TEST(test_global_pools),
    TEST(test_import_sets_target),
    TEST(test_target_agrees_with_exporter),
};
TEST_MAIN(tests)
