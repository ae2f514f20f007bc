/* tests/unit/test_compress_quant.c — linear_quantize_weights against a double-precision model of its numeric contract, the compression configuration (mgopt_compress_config), folding that keeps compressed weights, and the ONNX forms of quantized weights per opset. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <math.h>
#include <stdlib.h>

static mgopt_program *parse(const char *text) {
  mgopt_program *p = NULL;
  mgopt_diag d;
  mgopt_diag_clear(&d);
  if (mgopt_mil_parse(text, strlen(text), NULL, &p, &d) != MGOPT_OK) {
    printf("  parse: %d:%d: %s\n", d.line, d.col, d.msg);
    return NULL;
  }
  return p;
}

static mgopt_status run(mgopt_program *p, const char *pipeline, const mgopt_compress_config *cfg) {
  mgopt_pipeline_options ro;
  mgopt_diag d;
  memset(&ro, 0, sizeof ro);
  ro.strict = 1;
  ro.verify_each = 1;
  ro.compress_config = cfg;
  mgopt_diag_clear(&d);
  return mgopt_pipeline_run(p, mgopt_builtin_registry(), pipeline, &ro, &d);
}

/* The op of main producing the value named `name`, or NULL. */
static mgopt_op *op_named(mgopt_program *p, const char *name) {
  mgopt_op *op;
  for (op = mgopt_program_function(p, "main")->body->first; op; op = op->next)
    if (op->nouts > 0 && op->outs[0]->name && strcmp(op->outs[0]->name, name) == 0) return op;
  return NULL;
}

static mgopt_tensor *const_named(mgopt_program *p, const char *name) {
  mgopt_op *op = op_named(p, name);
  return op ? mgopt_value_const(op->outs[0]) : NULL;
}

/* ---------------------------------------------------------------- the reference's example */

static void test_reference_example(void) {
  static const int64_t want[4] = {-1, -8, 7, -2};
  mgopt_program *p = parse("main(%x: (1, 4, fp32)) {\n"
                           "  %w: (3, 4, fp32)* = const(val=[[-2, -10, 6, -3], [0, 0, 0, 0], [-2, -10, 6, -3]])\n"
                           "  %y: (1, 3, fp32) = linear(x=%x, weight=%w)\n"
                           "} -> (%y)\n");
  mgopt_tensor *q, *z;
  int i;
  REQUIRE(p != NULL);
  CHECK_EQ_INT(run(p, "linear_quantize_weights{mode=linear,dtype=int4,granularity=per_tensor,weight_threshold=0}", NULL),
               MGOPT_OK);
  q = const_named(p, "w_quantized_data");
  z = const_named(p, "w_quantized_offset");
  REQUIRE(q && z);
  CHECK_EQ_INT(q->dtype, MGOPT_DT_INT4);
  for (i = 0; i < 4; i++) CHECK_EQ_INT(mgopt_tensor_get_i64(q, i), want[i]);
  for (i = 4; i < 8; i++) CHECK_EQ_INT(mgopt_tensor_get_i64(q, i), 1); /* zeros: round(0) + zp */
  CHECK_EQ_INT(mgopt_tensor_get_i64(z, 0), 1);
  mgopt_program_destroy(p);
}

/* ---------------------------------------------------------------- numeric contract */

static double rne(double x) {
  double f = floor(x), d = x - f;
  if (d > 0.5 || (d == 0.5 && fmod(f, 2.0) != 0.0)) f += 1.0;
  return f;
}

/* A (16, 40) fp32 weight per channel in every mode and dtype against the
   contract computed here in double with fp32 rounding at each step. */
static void test_numeric_contract(void) {
  static const char *const dts[4] = {"int8", "uint8", "int4", "uint4"};
  char *text = (char *)malloc(64 * 1024);
  int mode, k, r, c;
  size_t n = 0;
  float w[16][40];
  uint32_t s = 12345u;
  REQUIRE(text != NULL);
  n += (size_t)sprintf(text + n, "main(%%x: (1, 40, fp32)) {\n  %%w: (16, 40, fp32)* = const(val=[");
  for (r = 0; r < 16; r++) {
    n += (size_t)sprintf(text + n, "%s[", r ? ", " : "");
    for (c = 0; c < 40; c++) {
      s = s * 1103515245u + 12345u;
      w[r][c] = (float)((double)((s >> 8) % 20001) / 10000.0 - 1.0) * (float)(r + 1) * 0.37f;
      if (r == 5) w[r][c] = 0.0f;                      /* an all-zero channel */
      if (r == 7) w[r][c] = fabsf(w[r][c]) + 0.125f; /* all positive */
      n += (size_t)sprintf(text + n, "%s%.9g", c ? ", " : "", (double)w[r][c]);
    }
    n += (size_t)sprintf(text + n, "]");
  }
  sprintf(text + n, "])\n  %%y: (1, 16, fp32) = linear(x=%%x, weight=%%w)\n} -> (%%y)\n");
  for (mode = 0; mode < 2; mode++)
    for (k = 0; k < 4; k++) {
      char pipe[160];
      mgopt_program *p = parse(text);
      mgopt_tensor *q, *sc, *z;
      int bits = k >= 2 ? 4 : 8, sgn = k == 0 || k == 2;
      int64_t qmin = sgn ? -(1 << (bits - 1)) : 0, qmax = sgn ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
      int bad = 0;
      REQUIRE(p != NULL);
      if (!mode && sgn) qmin = -qmax;
      if (!mode && !sgn) qmax -= 1;
      snprintf(pipe, sizeof pipe, "linear_quantize_weights{mode=%s,dtype=%s,weight_threshold=0}",
               mode ? "linear" : "linear_symmetric", dts[k]);
      CHECK_EQ_INT(run(p, pipe, NULL), MGOPT_OK);
      q = const_named(p, "w_quantized_data");
      sc = const_named(p, "w_quantized_scale");
      z = const_named(p, "w_quantized_offset");
      REQUIRE(q && sc);
      CHECK_EQ_INT(z != NULL, mode || !sgn);
      for (r = 0; r < 16; r++) {
        double lo = w[r][0], hi = w[r][0], vmin, vmax, scale, zp;
        for (c = 1; c < 40; c++) {
          lo = w[r][c] < lo ? w[r][c] : lo;
          hi = w[r][c] > hi ? w[r][c] : hi;
        }
        if (mode) {
          vmin = lo < 0 ? lo : 0;
          vmax = hi > 0 ? hi : 0;
        } else {
          vmax = fabs(lo) > fabs(hi) ? fabs(lo) : fabs(hi);
          vmin = -vmax;
        }
        if (vmax == vmin) {
          scale = 1;
          zp = mode ? (double)qmin : sgn ? 0 : (double)(qmax / 2);
        } else {
          scale = (double)(float)((double)(float)(vmax - vmin) / (double)(qmax - qmin));
          if (mode) {
            double num = (double)(float)((double)(float)((double)qmin * vmax) - (double)(float)((double)qmax * vmin));
            zp = rne((double)(float)(num / (double)(float)(vmax - vmin)));
            zp = zp < (double)qmin ? (double)qmin : zp > (double)qmax ? (double)qmax : zp;
          } else {
            zp = sgn ? 0 : (double)(qmax / 2);
          }
        }
        if (mgopt_tensor_get_f64(sc, r) != scale) bad++;
        if (z && (double)mgopt_tensor_get_i64(z, r) != zp) bad++;
        for (c = 0; c < 40; c++) {
          double e = rne((double)(float)((double)w[r][c] / scale)) + zp, deq;
          e = e < (double)qmin ? (double)qmin : e > (double)qmax ? (double)qmax : e;
          if ((double)mgopt_tensor_get_i64(q, r * 40 + c) != e) bad++;
          /* and the decompressed weight is within half a step */
          deq = scale * ((double)mgopt_tensor_get_i64(q, r * 40 + c) - zp);
          if (fabs(deq - (double)w[r][c]) > scale * 0.5000001) bad++;
        }
      }
      if (bad) printf("  %s: %d mismatches\n", pipe, bad);
      CHECK_EQ_INT(bad, 0);
      mgopt_program_destroy(p);
    }
  free(text);
}

/* ---------------------------------------------------------------- configuration */

static const char two_weights[] =
    "main(%x: (1, 4, fp32), %z: (3, 3, fp32)) {\n"
    "  %a: (3, 4, fp32)* = const(val=[[-2, -10, 6, -3], [1, 1, 1, 1], [0.5, 1, 1.5, 2.5]])\n"
    "  %y: (1, 3, fp32) = linear(x=%x, weight=%a, name=\"fc\")\n"
    "  %b: (3, 4, fp32)* = const(val=[[-2, -10, 6, -3], [1, 1, 1, 1], [0.5, 1, 1.5, 2.5]])\n"
    "  %v: (3, 4, fp32) = matmul(x=%z, y=%b)\n"
    "  %u: (1, 3, fp32) = linear(x=%x, weight=%b)\n"
    "} -> (%y, %v, %u)\n";

static void test_config(void) {
  mgopt_program *p;
  mgopt_compress_rule rules[4];
  mgopt_compress_config cfg;
  memset(rules, 0, sizeof rules);
  cfg.rules = rules;
  /* by op type: linear int4, matmul int8: b's readers disagree, b stays */
  rules[0].pass = "linear_quantize_weights";
  rules[0].scope = MGOPT_COMPRESS_OP_TYPE;
  rules[0].key = "linear";
  rules[0].options = "dtype=int4 weight_threshold=0";
  rules[1].pass = "common::linear_quantize_weights";
  rules[1].scope = MGOPT_COMPRESS_OP_TYPE;
  rules[1].key = "matmul";
  rules[1].options = "dtype=int8, weight_threshold=0";
  cfg.nrules = 2;
  p = parse(two_weights);
  REQUIRE(p != NULL);
  CHECK_EQ_INT(run(p, "linear_quantize_weights", &cfg), MGOPT_OK);
  CHECK(const_named(p, "a_quantized_data") && const_named(p, "a_quantized_data")->dtype == MGOPT_DT_INT4);
  CHECK(const_named(p, "b") != NULL && const_named(p, "b_quantized_data") == NULL);
  mgopt_program_destroy(p);
  /* a global rule with per_tensor: both; the op named fc skips a */
  rules[0].scope = MGOPT_COMPRESS_GLOBAL;
  rules[0].key = NULL;
  rules[0].options = "granularity=per_tensor weight_threshold=0";
  rules[1].scope = MGOPT_COMPRESS_OP_NAME;
  rules[1].key = "fc";
  rules[1].options = "skip";
  p = parse(two_weights);
  REQUIRE(p != NULL);
  CHECK_EQ_INT(run(p, "linear_quantize_weights", &cfg), MGOPT_OK);
  CHECK(const_named(p, "a") != NULL && const_named(p, "a_quantized_data") == NULL);
  CHECK(const_named(p, "b_quantized_data") != NULL);
  mgopt_program_destroy(p);
  /* rules of another pass: the pipeline's options hold for every weight */
  rules[0].pass = rules[1].pass = "palettize_weights";
  p = parse(two_weights);
  REQUIRE(p != NULL);
  CHECK_EQ_INT(run(p, "linear_quantize_weights{weight_threshold=0,granularity=per_tensor}", &cfg), MGOPT_OK);
  CHECK(const_named(p, "a_quantized_data") && const_named(p, "b_quantized_data"));
  mgopt_program_destroy(p);
  /* an option the pass does not have */
  rules[0].pass = NULL;
  rules[0].options = "nbits=4";
  p = parse(two_weights);
  REQUIRE(p != NULL);
  CHECK_EQ_INT(run(p, "linear_quantize_weights", &cfg), MGOPT_ERR_INVALID_ARG);
  mgopt_program_destroy(p);
}

/* const_elimination keeps compressed weights compressed. */
static void test_folding_keeps_compressed(void) {
  mgopt_program *p = parse(two_weights);
  REQUIRE(p != NULL);
  CHECK_EQ_INT(run(p, "linear_quantize_weights{weight_threshold=0,granularity=per_tensor},const_elimination,"
                      "dead_code_elimination", NULL),
               MGOPT_OK);
  CHECK(op_named(p, "a_quantized") && op_named(p, "a_quantized")->kind == MGOPT_OP_constexpr_blockwise_shift_scale);
  CHECK(op_named(p, "b_quantized") && op_named(p, "b_quantized")->kind == MGOPT_OP_constexpr_blockwise_shift_scale);
  CHECK(const_named(p, "a") == NULL);
  mgopt_program_destroy(p);
}

/* ---------------------------------------------------------------- ONNX forms */

static int str_is(mgopt_str s, const char *c) { return s.len == strlen(c) && memcmp(s.ptr, c, s.len) == 0; }

static int count_type(const mgopt_onnx_model *m, const char *type) {
  int64_t i;
  int n = 0;
  for (i = 0; i < m->graph->nnodes; i++) n += str_is(m->graph->nodes[i].op_type, type);
  return n;
}

static const mgopt_onnx_node *node_of(const mgopt_onnx_model *m, const char *type) {
  int64_t i;
  for (i = 0; i < m->graph->nnodes; i++)
    if (str_is(m->graph->nodes[i].op_type, type)) return &m->graph->nodes[i];
  return NULL;
}

static int64_t attr_int(const mgopt_onnx_node *n, const char *name, int64_t dflt) {
  int64_t i;
  for (i = 0; n && i < n->nattributes; i++)
    if (str_is(n->attributes[i].name, name)) return n->attributes[i].i;
  return dflt;
}

static const char conv_text[] =
    "main(%x: (1, 4, 3, 3, fp32)) {\n"
    "  %w: (2, 4, 1, 2, fp32)* = const(val=[[[[1, 2]], [[3, 4]], [[-1, 0.5]], [[0.25, 0]]], [[[8, -8]], [[4, 2]], [[1, 1]], [[2, 2]]]])\n"
    "  %y: (1, 2, 3, 2, fp32) = conv(x=%x, weight=%w)\n"
    "} -> (%y)\n";

/* Quantizes conv_text with `opts` for an ONNX target at `opset`; returns the
   number of weights compressed (-1 on failure) and, when one was, the model. */
static int quantize_for(const char *opts, int64_t opset, mgopt_onnx_model **m, mgopt_program **pp) {
  char pipe[200];
  mgopt_program *p = parse(conv_text);
  mgopt_onnx_export_options eo;
  mgopt_diag d;
  int n;
  *m = NULL;
  *pp = p;
  if (!p || mgopt_onnx_set_target(p, opset) != MGOPT_OK) return -1;
  snprintf(pipe, sizeof pipe, "linear_quantize_weights{weight_threshold=0,%s}", opts);
  if (run(p, pipe, NULL) != MGOPT_OK) return -1;
  n = op_named(p, "w_quantized") != NULL;
  memset(&eo, 0, sizeof eo);
  eo.opset = opset;
  mgopt_diag_clear(&d);
  if (mgopt_onnx_export(p, &eo, m, &d) != MGOPT_OK) {
    printf("  export at opset %d: %s\n", (int)opset, d.msg);
    return -1;
  }
  return n;
}

static void test_onnx_forms(void) {
  mgopt_onnx_model *m;
  mgopt_program *p;
  const mgopt_onnx_node *n;
  /* per channel, opset 13: DequantizeLinear on axis 0, no zero point */
  CHECK_EQ_INT(quantize_for("granularity=per_channel", 13, &m, &p), 1);
  n = m ? node_of(m, "DequantizeLinear") : NULL;
  CHECK(n && n->ninputs == 2 && attr_int(n, "axis", -9) == 0);
  CHECK(m && m->graph->ninitializers == 2 && count_type(m, "Conv") == 1);
  mgopt_program_destroy(p);
  /* per channel below 13: Cast and Mul, the scale broadcasting */
  CHECK_EQ_INT(quantize_for("granularity=per_channel", 11, &m, &p), 1);
  CHECK(m && count_type(m, "DequantizeLinear") == 0 && count_type(m, "Cast") == 1 && count_type(m, "Mul") == 1);
  mgopt_program_destroy(p);
  /* with a zero point below 13: Cast, Sub, Mul */
  CHECK_EQ_INT(quantize_for("granularity=per_channel,dtype=uint8", 9, &m, &p), 1);
  CHECK(m && count_type(m, "Sub") == 1 && count_type(m, "Mul") == 1);
  mgopt_program_destroy(p);
  /* per tensor from opset 10: DequantizeLinear without axis */
  CHECK_EQ_INT(quantize_for("granularity=per_tensor,mode=linear", 10, &m, &p), 1);
  n = m ? node_of(m, "DequantizeLinear") : NULL;
  CHECK(n && n->ninputs == 3 && attr_int(n, "axis", -9) == -9);
  mgopt_program_destroy(p);
  /* blocked and 4-bit: refused by the target below 21 (the weight stays), written at 21 */
  CHECK_EQ_INT(quantize_for("granularity=per_block,block_size=2", 20, &m, &p), 0);
  mgopt_program_destroy(p);
  CHECK_EQ_INT(quantize_for("granularity=per_channel,dtype=int4", 20, &m, &p), 0);
  mgopt_program_destroy(p);
  CHECK_EQ_INT(quantize_for("granularity=per_block,block_size=2", 21, &m, &p), 1);
  n = m ? node_of(m, "DequantizeLinear") : NULL;
  CHECK(n && attr_int(n, "axis", -9) == 1 && attr_int(n, "block_size", -9) == 2);
  mgopt_program_destroy(p);
  CHECK_EQ_INT(quantize_for("granularity=per_channel,dtype=uint4", 21, &m, &p), 1);
  n = m ? node_of(m, "DequantizeLinear") : NULL;
  CHECK(n && n->ninputs == 3);
  mgopt_program_destroy(p);
}

static const test_case tests[] = {
    TEST(test_reference_example),
    TEST(test_numeric_contract),
    TEST(test_config),
    TEST(test_folding_keeps_compressed),
    TEST(test_onnx_forms),
};
TEST_MAIN(tests)
