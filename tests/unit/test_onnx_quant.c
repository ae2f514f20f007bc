/* tests/unit/test_onnx_quant.c — ONNX forms of quantization and compressed weights on both sides of each opset boundary: QuantizeLinear / DequantizeLinear imported as quantize / dequantize (or left opaque) and written back, QDQ weights kept by the default pipeline, constexpr_affine_dequantize and constexpr_lut_to_dense written with standard ops (uint4 indices from opset 21); each written model read back and evaluated against the original, bit for bit; the fp16 pipeline on weights read in branches (the file must not grow). */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
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

/* A model written from p at `opset` and read back (the bytes kept in *buf,
   which must outlive it); NULL when the export refuses (*refused = 1) or fails. */
typedef struct written {
  mgopt_buf buf;
  mgopt_program *p;    /* the model imported again */
  mgopt_onnx_model *m; /* the exported tree (in the source program's arena) */
} written;

static int write_read(mgopt_program *src, int64_t opset, written *w) {
  mgopt_onnx_export_options eo;
  mgopt_diag d;
  mgopt_status s;
  memset(w, 0, sizeof *w);
  memset(&eo, 0, sizeof eo);
  eo.opset = opset;
  mgopt_diag_clear(&d);
  s = mgopt_onnx_export(src, &eo, &w->m, &d);
  if (s == MGOPT_ERR_UNSUPPORTED) return 0;
  if (s != MGOPT_OK || mgopt_onnx_write(w->m, NULL, &w->buf, NULL, &d) != MGOPT_OK ||
      mgopt_onnx_load(w->buf.data, w->buf.len, NULL, &w->p, &d) != MGOPT_OK) {
    printf("  opset %d: %s\n", (int)opset, d.msg);
    return -1;
  }
  return 1;
}

static void written_free(written *w) {
  if (w->p) mgopt_program_destroy(w->p);
  mgopt_buf_free(&w->buf);
  memset(w, 0, sizeof *w);
}

static int str_is(mgopt_str s, const char *c) { return s.len == strlen(c) && memcmp(s.ptr, c, s.len) == 0; }

static int count_type(const mgopt_onnx_model *m, const char *type) {
  int64_t i;
  int n = 0;
  for (i = 0; m && i < m->graph->nnodes; i++) n += str_is(m->graph->nodes[i].op_type, type);
  return n;
}

static const mgopt_onnx_node *node_of(const mgopt_onnx_model *m, const char *type) {
  int64_t i;
  for (i = 0; m && i < m->graph->nnodes; i++)
    if (str_is(m->graph->nodes[i].op_type, type)) return &m->graph->nodes[i];
  return NULL;
}

static int64_t attr_int(const mgopt_onnx_node *n, const char *name, int64_t dflt) {
  int64_t i;
  for (i = 0; n && i < n->nattributes; i++)
    if (str_is(n->attributes[i].name, name)) return n->attributes[i].i;
  return dflt;
}

static int count_kind(mgopt_program *p, int32_t kind) {
  mgopt_op *op;
  int n = 0;
  for (op = mgopt_program_function(p, "main")->body->first; op; op = op->next) n += op->kind == kind;
  return n;
}

/* Evaluates a and b on the same inputs (floats on a grid of 1/64 in [-4, 4],
   integers over their 8-bit range): 1 when every output is bit-identical. */
static int same_outputs(mgopt_program *a, mgopt_program *b) {
  mgopt_block *ba = mgopt_program_function(a, "main")->body;
  mgopt_tensor *in[4], *oa[4], *ob[4];
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  int32_t k, nin = ba->nargs, nout = ba->nouts, ok = 1;
  mgopt_diag d;
  mgopt_eval_options eo;
  memset(&eo, 0, sizeof eo);
  eo.op_fn = mgopt_onnx_eval_op; /* ops the written model holds opaque (integer Div) */
  if (nin > 4 || nout > 4) return 0;
  for (k = 0; k < nin; k++) {
    const mgopt_type *t = &ba->args[k]->type;
    int64_t shape[MGOPT_MAX_RANK], i;
    int32_t r;
    for (r = 0; r < t->rank; r++) shape[r] = t->dims[r].v;
    in[k] = mgopt_eval_tensor_new(a, (mgopt_dtype)t->dtype, t->rank, shape);
    if (!in[k]) return 0;
    for (i = 0; i < in[k]->numel; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      if (mgopt_dtype_is_float((mgopt_dtype)t->dtype)) mgopt_tensor_set_f64(in[k], i, (double)((int)(seed >> 55) - 256) / 64.0);
      else mgopt_tensor_set_i64(in[k], i, (int64_t)(seed >> 56) - (t->dtype == MGOPT_DT_INT8 ? 128 : 0));
    }
  }
  mgopt_diag_clear(&d);
  if (mgopt_eval(a, NULL, in, nin, oa, nout, &eo, &d) != MGOPT_OK) {
    printf("  eval a: %s\n", d.msg);
    return 0;
  }
  if (mgopt_eval(b, NULL, in, nin, ob, nout, &eo, &d) != MGOPT_OK) {
    printf("  eval b: %s\n", d.msg);
    return 0;
  }
  for (k = 0; k < nout; k++) {
    if (!mgopt_tensor_equal(oa[k], ob[k])) ok = 0;
    mgopt_eval_tensor_free(a, oa[k]);
    mgopt_eval_tensor_free(b, ob[k]);
  }
  for (k = 0; k < nin; k++) mgopt_eval_tensor_free(a, in[k]);
  return ok;
}

/* p written at opset-1 is refused and at opset gives a model that reads back
   and computes what p does; the written model in *w. */
static int boundary(mgopt_program *p, int64_t opset, written *w) {
  int r;
  if (!p) return 0;
  r = write_read(p, opset - 1, w);
  written_free(w);
  if (r != 0) {
    printf("  written at opset %d\n", (int)opset - 1);
    return 0;
  }
  if (write_read(p, opset, w) != 1) return 0;
  if (!same_outputs(p, w->p)) {
    printf("  opset %d: outputs differ\n", (int)opset);
    return 0;
  }
  return 1;
}

/* ---------------------------------------------------------------- QuantizeLinear / DequantizeLinear */

static const char qdq_tensor[] =
    "main(%x: (2, 3, fp32)) {\n"
    "  %s: (fp32)* = const(val=0.1)\n"
    "  %z: (int8)* = const(val=-3)\n"
    "  %q: (2, 3, int8) = quantize(input=%x, zero_point=%z, scale=%s, output_dtype=\"int8\")\n"
    "  %y: (2, 3, fp32) = dequantize(input=%q, zero_point=%z, scale=%s)\n"
    "} -> (%y)\n";

static const char qdq_axis[] =
    "main(%x: (2, 3, fp32)) {\n"
    "  %s: (3, fp32)* = const(val=[0.1, 0.25, 0.03125])\n"
    "  %z: (3, uint8)* = const(val=[0, 128, 255])\n"
    "  %q: (2, 3, uint8) = quantize(input=%x, zero_point=%z, scale=%s, axis=1, output_dtype=\"uint8\")\n"
    "  %y: (2, 3, fp32) = dequantize(input=%q, zero_point=%z, scale=%s, axis=-1)\n"
    "} -> (%y)\n";

static void test_qdq_tensor(void) {
  mgopt_program *p = parse(qdq_tensor);
  written w;
  CHECK(boundary(p, 10, &w));
  CHECK(count_type(w.m, "QuantizeLinear") == 1 && count_type(w.m, "DequantizeLinear") == 1);
  CHECK(attr_int(node_of(w.m, "QuantizeLinear"), "axis", -9) == -9);
  CHECK(w.p && count_kind(w.p, MGOPT_OP_quantize) == 1 && count_kind(w.p, MGOPT_OP_dequantize) == 1);
  written_free(&w);
  mgopt_program_destroy(p);
}

static void test_qdq_axis(void) {
  mgopt_program *p = parse(qdq_axis);
  written w;
  CHECK(boundary(p, 13, &w));
  CHECK(attr_int(node_of(w.m, "QuantizeLinear"), "axis", -9) == 1);
  CHECK(attr_int(node_of(w.m, "DequantizeLinear"), "axis", -9) == -1);
  CHECK(w.p && count_kind(w.p, MGOPT_OP_quantize) == 1 && count_kind(w.p, MGOPT_OP_dequantize) == 1);
  written_free(&w);
  mgopt_program_destroy(p);
}

/* int8 without a zero point: QuantizeLinear gets int8 zeros (its output dtype is the zero point's) */
static void test_qdq_int8_no_zero_point(void) {
  mgopt_program *p = parse("main(%x: (2, 3, fp32)) {\n"
                           "  %s: (3, fp32)* = const(val=[0.1, 0.25, 0.5])\n"
                           "  %q: (2, 3, int8) = quantize(input=%x, scale=%s, axis=1, output_dtype=\"int8\")\n"
                           "  %y: (2, 3, fp32) = dequantize(input=%q, scale=%s, axis=1)\n"
                           "} -> (%y)\n");
  written w;
  const mgopt_onnx_node *n;
  CHECK(boundary(p, 13, &w));
  n = node_of(w.m, "QuantizeLinear");
  CHECK(n && n->ninputs == 3);
  n = node_of(w.m, "DequantizeLinear");
  CHECK(n && n->ninputs == 2);
  written_free(&w);
  mgopt_program_destroy(p);
}

/* an fp16 scale from opset 19, 16-bit integers from 21 */
static void test_qdq_fp16_and_16bit(void) {
  mgopt_program *p = parse("main(%x: (2, 3, int8)) {\n"
                           "  %s: (fp16)* = const(val=0.125)\n"
                           "  %y: (2, 3, fp16) = dequantize(input=%x, scale=%s)\n"
                           "} -> (%y)\n");
  written w;
  CHECK(boundary(p, 19, &w));
  CHECK(w.p && count_kind(w.p, MGOPT_OP_dequantize) == 1);
  written_free(&w);
  mgopt_program_destroy(p);
  p = parse("main(%x: (2, 3, fp32)) {\n"
            "  %s: (fp32)* = const(val=0.001)\n"
            "  %z: (int16)* = const(val=-300)\n"
            "  %q: (2, 3, int16) = quantize(input=%x, zero_point=%z, scale=%s, output_dtype=\"int16\")\n"
            "  %y: (2, 3, fp32) = dequantize(input=%q, zero_point=%z, scale=%s)\n"
            "} -> (%y)\n");
  CHECK(boundary(p, 21, &w));
  CHECK(w.p && count_kind(w.p, MGOPT_OP_quantize) == 1 && count_kind(w.p, MGOPT_OP_dequantize) == 1);
  written_free(&w);
  mgopt_program_destroy(p);
}

/* Forms the canonical ops do not share with ONNX come back opaque. */
static int stays_opaque(const char *text, int64_t opset) {
  mgopt_program *p = parse(text);
  written w;
  int ok;
  if (!p) return 0;
  ok = write_read(p, opset, &w) == 1 && count_kind(w.p, MGOPT_OP_quantize) == 0 &&
       count_kind(w.p, MGOPT_OP_dequantize) == 0 && count_kind(w.p, MGOPT_OP_OPAQUE) == 1;
  written_free(&w);
  mgopt_program_destroy(p);
  return ok;
}

static void test_qdq_opaque_forms(void) {
  /* blocks */
  CHECK(stays_opaque("main(%x: (2, 4, int8)) {\n"
                     "  %s: (2, 2, fp32)* = const(val=[[0.5, 0.25], [1, 2]])\n"
                     "  %y: (2, 4, fp32) = onnx::DequantizeLinear(in0=%x, in1=%s, axis=1, block_size=2)\n"
                     "} -> (%y)\n",
                     21));
  /* int32 data */
  CHECK(stays_opaque("main(%x: (2, 4, int32)) {\n"
                     "  %s: (fp32)* = const(val=0.5)\n"
                     "  %y: (2, 4, fp32) = onnx::DequantizeLinear(in0=%x, in1=%s)\n"
                     "} -> (%y)\n",
                     13));
  /* an fp16 input to QuantizeLinear (ONNX Runtime divides in float) */
  CHECK(stays_opaque("main(%x: (2, 4, fp16)) {\n"
                     "  %s: (fp16)* = const(val=0.5)\n"
                     "  %z: (int8)* = const(val=0)\n"
                     "  %y: (2, 4, int8) = onnx::QuantizeLinear(in0=%x, in1=%s, in2=%z)\n"
                     "} -> (%y)\n",
                     19));
  /* a one-element vector scale on a dim that is not 1 (read per tensor by ONNX Runtime) */
  CHECK(stays_opaque("main(%x: (2, 4, uint8)) {\n"
                     "  %s: (1, fp32)* = const(val=[0.5])\n"
                     "  %y: (2, 4, fp32) = onnx::DequantizeLinear(in0=%x, in1=%s, axis=1)\n"
                     "} -> (%y)\n",
                     13));
  /* 4-bit integers */
  CHECK(stays_opaque("main(%x: (2, 4, int4x)) {\n"
                     "  %s: (fp32)* = const(val=0.5)\n"
                     "  %y: (2, 4, fp32) = onnx::DequantizeLinear(in0=%x, in1=%s)\n"
                     "} -> (%y)\n",
                     21));
}

/* ---------------------------------------------------------------- blocked and 4-bit DequantizeLinear of constants */

static const mgopt_onnx_tensor *init_of(const mgopt_onnx_model *m, mgopt_str name) {
  int64_t i;
  for (i = 0; m && i < m->graph->ninitializers; i++)
    if (m->graph->initializers[i].name.len == name.len && memcmp(m->graph->initializers[i].name.ptr, name.ptr, name.len) == 0)
      return &m->graph->initializers[i];
  return NULL;
}

/* initializers a and b hold the same dtype, dims and bytes */
static int same_init(const mgopt_onnx_tensor *a, const mgopt_onnx_tensor *b) {
  int64_t d;
  if (!a || !b || a->data_type != b->data_type || a->ndims != b->ndims || a->raw_data.len != b->raw_data.len) return 0;
  for (d = 0; d < a->ndims; d++)
    if (a->dims[d] != b->dims[d]) return 0;
  return memcmp(a->raw_data.ptr, b->raw_data.ptr, a->raw_data.len) == 0 && a->nint32_data == b->nint32_data &&
         (!a->nint32_data || memcmp(a->int32_data, b->int32_data, sizeof(int32_t) * (size_t)a->nint32_data) == 0);
}

/* The DequantizeLinear of `text` (written at opset 21 and read back) is a
   constexpr_blockwise_shift_scale computing what `expected` does (its
   weight as a plain const); written again it is the same DequantizeLinear
   (axis, block_size, the bytes of data, scale and zero point); opset 20
   refuses it; decompress_weights makes it a plain const. */
static int dq_const_case(const char *text, const char *expected, int64_t axis, int64_t block) {
  mgopt_program *p = parse(text), *e = parse(expected);
  written w1, w2, w3;
  const mgopt_onnx_node *n1, *n2;
  mgopt_diag d;
  int ok = 0, k;
  memset(&w2, 0, sizeof w2);
  if (!p || !e || write_read(p, 21, &w1) != 1) goto out;
  if (count_kind(w1.p, MGOPT_OP_constexpr_blockwise_shift_scale) != 1 || count_kind(w1.p, MGOPT_OP_OPAQUE) != 0) {
    printf("  not mapped\n");
    goto out1;
  }
  if (!same_outputs(e, w1.p) || write_read(w1.p, 21, &w2) != 1) goto out1;
  n1 = node_of(w1.m, "DequantizeLinear");
  n2 = node_of(w2.m, "DequantizeLinear");
  if (!n1 || !n2 || n1->ninputs != n2->ninputs || count_type(w2.m, "DequantizeLinear") != 1) goto out1;
  if (attr_int(n2, "axis", 1) != axis || attr_int(n2, "block_size", 0) != block) {
    printf("  written back with axis %d, block_size %d\n", (int)attr_int(n2, "axis", 1), (int)attr_int(n2, "block_size", 0));
    goto out1;
  }
  for (k = 0; k < n1->ninputs; k++)
    if (!same_init(init_of(w1.m, n1->inputs[k]), init_of(w2.m, n2->inputs[k]))) {
      printf("  input %d written with other bytes\n", k);
      goto out1;
    }
  if (!same_outputs(e, w2.p) || write_read(w1.p, 20, &w3) != 0) goto out1;
  mgopt_diag_clear(&d);
  if (mgopt_pipeline_run(w1.p, mgopt_builtin_registry(), "decompress_weights", NULL, &d) != MGOPT_OK ||
      count_kind(w1.p, MGOPT_OP_constexpr_blockwise_shift_scale) != 0 || !same_outputs(e, w1.p))
    goto out1;
  ok = 1;
out1:
  written_free(&w2);
  written_free(&w1);
out:
  if (p) mgopt_program_destroy(p);
  if (e) mgopt_program_destroy(e);
  return ok;
}

static void test_dq_blocked_int8(void) {
  /* blocks of 2 along the last axis (given as -1), a zero point per block */
  CHECK(dq_const_case("main(%x: (2, 4, fp32)) {\n"
                      "  %w: (2, 4, int8)* = const(val=[[1, -2, 3, -4], [5, 6, -7, 8]])\n"
                      "  %s: (2, 2, fp32)* = const(val=[[0.5, 0.25], [1, 2]])\n"
                      "  %z: (2, 2, int8)* = const(val=[[0, 1], [-1, 2]])\n"
                      "  %wd: (2, 4, fp32) = onnx::DequantizeLinear(in0=%w, in1=%s, in2=%z, axis=-1, block_size=2)\n"
                      "  %y: (2, 4, fp32) = add(x=%x, y=%wd)\n"
                      "} -> (%y)\n",
                      "main(%x: (2, 4, fp32)) {\n"
                      "  %w: (2, 4, fp32)* = const(val=[[0.5, -1, 0.5, -1.25], [6, 7, -18, 12]])\n"
                      "  %y: (2, 4, fp32) = add(x=%x, y=%w)\n"
                      "} -> (%y)\n",
                      1, 2));
  /* blocks along axis 0, no zero point */
  CHECK(dq_const_case("main(%x: (4, 2, fp32)) {\n"
                      "  %w: (4, 2, uint8)* = const(val=[[1, 2], [3, 4], [250, 6], [7, 8]])\n"
                      "  %s: (2, 2, fp32)* = const(val=[[0.5, 0.25], [1, 2]])\n"
                      "  %wd: (4, 2, fp32) = onnx::DequantizeLinear(in0=%w, in1=%s, axis=0, block_size=2)\n"
                      "  %y: (4, 2, fp32) = add(x=%x, y=%wd)\n"
                      "} -> (%y)\n",
                      "main(%x: (4, 2, fp32)) {\n"
                      "  %w: (4, 2, fp32)* = const(val=[[0.5, 0.5], [1.5, 1], [250, 12], [7, 16]])\n"
                      "  %y: (4, 2, fp32) = add(x=%x, y=%w)\n"
                      "} -> (%y)\n",
                      0, 2));
}

static void test_dq_4bit(void) {
  /* uint4 blocked, 27 elements (an odd count: the last byte half used), fp16 scale */
  CHECK(dq_const_case("main(%x: (3, 9, fp16)) {\n"
                      "  %w: (3, 9, uint4x)* = const(val=[[0, 1, 2, 3, 4, 5, 6, 7, 8], [9, 10, 11, 12, 13, 14, 15, 0, 1],"
                      " [2, 3, 4, 5, 6, 7, 8, 9, 10]])\n"
                      "  %s: (3, 3, fp16)* = const(val=[[1, 0.5, 0.25], [2, 1, 0.5], [0.125, 4, 1]])\n"
                      "  %z: (3, 3, uint4x)* = const(val=[[0, 1, 2], [3, 4, 5], [6, 7, 8]])\n"
                      "  %wd: (3, 9, fp16) = onnx::DequantizeLinear(in0=%w, in1=%s, in2=%z, axis=1, block_size=3)\n"
                      "  %y: (3, 9, fp16) = add(x=%x, y=%wd)\n"
                      "} -> (%y)\n",
                      "main(%x: (3, 9, fp16)) {\n"
                      "  %w: (3, 9, fp16)* = const(val=[[0, 1, 2, 1, 1.5, 2, 1, 1.25, 1.5], [12, 14, 16, 8, 9, 10, 5, -2.5, -2],"
                      " [-0.5, -0.375, -0.25, -8, -4, 0, 0, 1, 2]])\n"
                      "  %y: (3, 9, fp16) = add(x=%x, y=%w)\n"
                      "} -> (%y)\n",
                      1, 3));
  /* int4 per axis (the last, given as -1), 15 elements */
  CHECK(dq_const_case("main(%x: (3, 5, fp32)) {\n"
                      "  %w: (3, 5, int4x)* = const(val=[[-8, -1, 0, 1, 7], [2, -3, 4, -5, 6], [7, 7, -8, -8, 0]])\n"
                      "  %s: (5, fp32)* = const(val=[0.5, 1, 2, 0.25, 4])\n"
                      "  %z: (5, int4x)* = const(val=[0, 1, -1, 2, -2])\n"
                      "  %wd: (3, 5, fp32) = onnx::DequantizeLinear(in0=%w, in1=%s, in2=%z, axis=-1)\n"
                      "  %y: (3, 5, fp32) = add(x=%x, y=%wd)\n"
                      "} -> (%y)\n",
                      "main(%x: (3, 5, fp32)) {\n"
                      "  %w: (3, 5, fp32)* = const(val=[[-4, -2, 2, -0.25, 36], [1, -4, 10, -1.75, 32], [3.5, 6, -14, -2.5, 8]])\n"
                      "  %y: (3, 5, fp32) = add(x=%x, y=%w)\n"
                      "} -> (%y)\n",
                      1, 0));
  /* int4 per tensor, 5 elements, a zero point */
  CHECK(dq_const_case("main(%x: (5, fp32)) {\n"
                      "  %w: (5, int4x)* = const(val=[1, -2, 3, -4, 5])\n"
                      "  %s: (fp32)* = const(val=0.5)\n"
                      "  %z: (int4x)* = const(val=-1)\n"
                      "  %wd: (5, fp32) = onnx::DequantizeLinear(in0=%w, in1=%s, in2=%z)\n"
                      "  %y: (5, fp32) = add(x=%x, y=%wd)\n"
                      "} -> (%y)\n",
                      "main(%x: (5, fp32)) {\n"
                      "  %w: (5, fp32)* = const(val=[1, -0.5, 2, -1.5, 3])\n"
                      "  %y: (5, fp32) = add(x=%x, y=%w)\n"
                      "} -> (%y)\n",
                      1, 0));
}

/* blocks the canonical op cannot hold exactly as written stay opaque */
static void test_dq_blocked_opaque(void) {
  /* a short last block: 5 = 2 + 2 + 1 */
  CHECK(stays_opaque("main(%x: (2, 5, fp32)) {\n"
                     "  %w: (2, 5, int8)* = const(val=[[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]])\n"
                     "  %s: (2, 3, fp32)* = const(val=[[0.5, 0.25, 1], [1, 2, 4]])\n"
                     "  %wd: (2, 5, fp32) = onnx::DequantizeLinear(in0=%w, in1=%s, axis=1, block_size=2)\n"
                     "  %y: (2, 5, fp32) = add(x=%x, y=%wd)\n"
                     "} -> (%y)\n",
                     21));
  /* one block spanning the axis (written back it would be per axis on dim 0) */
  CHECK(stays_opaque("main(%x: (2, 4, fp32)) {\n"
                     "  %w: (2, 4, int8)* = const(val=[[1, 2, 3, 4], [5, 6, 7, 8]])\n"
                     "  %s: (2, 1, fp32)* = const(val=[[0.5], [2]])\n"
                     "  %wd: (2, 4, fp32) = onnx::DequantizeLinear(in0=%w, in1=%s, axis=1, block_size=4)\n"
                     "  %y: (2, 4, fp32) = add(x=%x, y=%wd)\n"
                     "} -> (%y)\n",
                     21));
  /* a block of one element (a scale per element: no one axis) */
  CHECK(stays_opaque("main(%x: (2, 2, fp32)) {\n"
                     "  %w: (2, 2, int4x)* = const(val=[[1, 2], [3, 4]])\n"
                     "  %s: (2, 2, fp32)* = const(val=[[0.5, 0.25], [1, 2]])\n"
                     "  %wd: (2, 2, fp32) = onnx::DequantizeLinear(in0=%w, in1=%s, axis=0, block_size=1)\n"
                     "  %y: (2, 2, fp32) = add(x=%x, y=%wd)\n"
                     "} -> (%y)\n",
                     21));
}

/* the fixture (tests/fixtures/quant/make_dq_blocked_4bit.py): its four
   DequantizeLinear nodes map, `default` keeps them, and the model written
   back computes what the decompressed one does */
static void test_dq_fixture(void) {
  mgopt_onnx_model *m = NULL;
  mgopt_program *dec;
  written w, w2;
  mgopt_diag d;
  int64_t i;
  mgopt_diag_clear(&d);
  REQUIRE(mgopt_onnx_read_file("tests/fixtures/quant/dq_blocked_4bit.onnx", NULL, &m, &d) == MGOPT_OK);
  REQUIRE(mgopt_onnx_import(m, &d) == MGOPT_OK);
  CHECK(count_kind(m->program, MGOPT_OP_constexpr_blockwise_shift_scale) == 4 && count_kind(m->program, MGOPT_OP_OPAQUE) == 0);
  REQUIRE(write_read(m->program, 21, &w) == 1);
  REQUIRE(write_read(m->program, 21, &w2) == 1);
  dec = w2.p;
  CHECK(mgopt_pipeline_run(w.p, mgopt_builtin_registry(), "default", NULL, &d) == MGOPT_OK);
  CHECK(count_kind(w.p, MGOPT_OP_constexpr_blockwise_shift_scale) == 4);
  CHECK(mgopt_pipeline_run(dec, mgopt_builtin_registry(), "decompress_weights", NULL, &d) == MGOPT_OK);
  CHECK(count_kind(dec, MGOPT_OP_constexpr_blockwise_shift_scale) == 0 && same_outputs(dec, w.p));
  CHECK(count_type(w.m, "DequantizeLinear") == 4);
  for (i = 0; i < m->graph->ninitializers; i++) /* written back under its own name, the same bytes */
    CHECK(same_init(&m->graph->initializers[i], init_of(w2.m, m->graph->initializers[i].name)));
  written_free(&w2);
  written_free(&w);
  mgopt_program_destroy(m->program);
}

/* A DequantizeLinear of a weight stays one through `default`: never folded to fp32. */
static void test_qdq_weight_kept_by_default(void) {
  mgopt_program *p = parse("main(%x: (1, 4, fp32)) {\n"
                           "  %w: (4, 3, int8)* = const(val=[[1, -2, 3], [4, 5, -6], [7, -8, 9], [-10, 11, 12]])\n"
                           "  %s: (3, fp32)* = const(val=[0.5, 0.25, 0.125])\n"
                           "  %z: (3, int8)* = const(val=[0, 1, -1])\n"
                           "  %wd: (4, 3, fp32) = onnx::DequantizeLinear(in0=%w, in1=%s, in2=%z, axis=1)\n"
                           "  %y: (1, 3, fp32) = matmul(x=%x, y=%wd)\n"
                           "} -> (%y)\n");
  written w, w2;
  mgopt_diag d;
  int64_t i;
  REQUIRE(p != NULL);
  REQUIRE(write_read(p, 13, &w) == 1);
  CHECK(count_kind(w.p, MGOPT_OP_dequantize) == 1);
  mgopt_diag_clear(&d);
  CHECK(mgopt_pipeline_run(w.p, mgopt_builtin_registry(), "default", NULL, &d) == MGOPT_OK);
  REQUIRE(write_read(w.p, 13, &w2) == 1);
  CHECK(count_type(w2.m, "DequantizeLinear") == 1);
  for (i = 0; i < w2.m->graph->ninitializers; i++) /* no fp32 copy of the weight */
    CHECK(w2.m->graph->initializers[i].data_type != MGOPT_ONNX_DT_FLOAT || w2.m->graph->initializers[i].ndims == 1);
  CHECK(same_outputs(p, w2.p));
  written_free(&w2);
  written_free(&w);
  mgopt_program_destroy(p);
}

/* ---------------------------------------------------------------- constexpr_affine_dequantize */

static const char affine_axis[] =
    "main(%x: (2, 3, fp32)) {\n"
    "  %q: (2, 3, int8)* = const(val=[[1, -2, 3], [-4, 5, 100]])\n"
    "  %z: (3, int8)* = const(val=[1, 0, -3])\n"
    "  %s: (3, fp32)* = const(val=[0.5, 0.25, 0.1])\n"
    "  %w: (2, 3, fp32) = constexpr_affine_dequantize(quantized_data=%q, zero_point=%z, scale=%s, axis=1)\n"
    "  %y: (2, 3, fp32) = add(x=%x, y=%w)\n"
    "} -> (%y)\n";

static void test_affine_forms(void) {
  mgopt_program *p = parse(affine_axis);
  written w;
  REQUIRE(p != NULL);
  /* per axis: Cast, Sub, Mul below 13, DequantizeLinear from 13 */
  CHECK(write_read(p, 12, &w) == 1 && same_outputs(p, w.p));
  CHECK(count_type(w.m, "Cast") == 1 && count_type(w.m, "Sub") == 1 && count_type(w.m, "Mul") == 1);
  written_free(&w);
  CHECK(write_read(p, 13, &w) == 1 && same_outputs(p, w.p));
  CHECK(count_type(w.m, "DequantizeLinear") == 1 && attr_int(node_of(w.m, "DequantizeLinear"), "axis", -9) == 1);
  CHECK(w.m && w.m->graph->ninitializers == 3);
  written_free(&w);
  mgopt_program_destroy(p);
  /* per tensor, zero point 0: DequantizeLinear without one from 10, Cast and Mul below */
  p = parse("main(%x: (2, 3, fp32)) {\n"
            "  %q: (2, 3, uint8)* = const(val=[[1, 2, 3], [4, 5, 255]])\n"
            "  %z: (uint8)* = const(val=0)\n"
            "  %s: (fp32)* = const(val=0.5)\n"
            "  %w: (2, 3, fp32) = constexpr_affine_dequantize(quantized_data=%q, zero_point=%z, scale=%s, axis=0)\n"
            "  %y: (2, 3, fp32) = add(x=%x, y=%w)\n"
            "} -> (%y)\n");
  REQUIRE(p != NULL);
  CHECK(write_read(p, 9, &w) == 1 && same_outputs(p, w.p) && count_type(w.m, "Sub") == 0 && count_type(w.m, "Mul") == 1);
  written_free(&w);
  CHECK(write_read(p, 10, &w) == 1 && same_outputs(p, w.p));
  CHECK(node_of(w.m, "DequantizeLinear") && node_of(w.m, "DequantizeLinear")->ninputs == 2);
  written_free(&w);
  mgopt_program_destroy(p);
  /* fp16 scale: Cast and Mul below 19 */
  p = parse("main(%x: (2, 3, fp16)) {\n"
            "  %q: (2, 3, int8)* = const(val=[[1, -2, 3], [-4, 5, 100]])\n"
            "  %z: (int8)* = const(val=3)\n"
            "  %s: (fp16)* = const(val=0.1)\n"
            "  %w: (2, 3, fp16) = constexpr_affine_dequantize(quantized_data=%q, zero_point=%z, scale=%s, axis=0)\n"
            "  %y: (2, 3, fp16) = add(x=%x, y=%w)\n"
            "} -> (%y)\n");
  REQUIRE(p != NULL);
  CHECK(write_read(p, 18, &w) == 1 && same_outputs(p, w.p) && count_type(w.m, "DequantizeLinear") == 0);
  written_free(&w);
  CHECK(write_read(p, 19, &w) == 1 && same_outputs(p, w.p) && count_type(w.m, "DequantizeLinear") == 1);
  written_free(&w);
  mgopt_program_destroy(p);
}

/* ---------------------------------------------------------------- constexpr_lut_to_dense */

/* indices [4, 3] of `bits` bits, LUT [2, 1, 2^bits, 1] (two palettes along dim 0) */
static char *lut_text(int bits, int vectors) {
  static const char *names[9] = {"", "uint1", "uint2", "uint3", "uint4", "", "uint6", "", "uint8"};
  char *t = (char *)malloc(1 << 16);
  size_t n = 0;
  int64_t i, k = (int64_t)1 << bits;
  if (!t) return NULL;
  n += (size_t)sprintf(t + n, "main(%%x: (4, 3, fp32)) {\n  %%i: (%d, 3, %s)* = const(val=[", vectors ? 2 : 4, names[bits]);
  for (i = 0; i < (vectors ? 6 : 12); i++) n += (size_t)sprintf(t + n, "%s%d", i ? ", " : "", (int)((i * 7 + 3) % k));
  if (vectors) {
    n += (size_t)sprintf(t + n, "])\n  %%l: (1, 1, %d, 2, fp32)* = const(val=[[[", (int)k);
    for (i = 0; i < k; i++) n += (size_t)sprintf(t + n, "%s[%g, %g]", i ? ", " : "", 0.5 * (double)i - 3, 0.25 * (double)i);
    n += (size_t)sprintf(t + n, "]]])\n  %%w: (4, 3, fp32) = constexpr_lut_to_dense(indices=%%i, lut=%%l, vector_axis=0)\n");
  } else {
    n += (size_t)sprintf(t + n, "])\n  %%l: (2, 1, %d, 1, fp32)* = const(val=[", (int)k);
    for (i = 0; i < 2; i++) {
      int64_t e;
      n += (size_t)sprintf(t + n, "%s[[", i ? ", " : "");
      for (e = 0; e < k; e++) n += (size_t)sprintf(t + n, "%s[%g]", e ? ", " : "", 0.5 * (double)e - 3 + 100 * (double)i);
      n += (size_t)sprintf(t + n, "]]");
    }
    n += (size_t)sprintf(t + n, "])\n  %%w: (4, 3, fp32) = constexpr_lut_to_dense(indices=%%i, lut=%%l)\n");
  }
  sprintf(t + n, "  %%y: (4, 3, fp32) = add(x=%%x, y=%%w)\n} -> (%%y)\n");
  return t;
}

static void test_lut_every_width(void) {
  static const int widths[6] = {1, 2, 3, 4, 6, 8};
  int j, vectors;
  for (vectors = 0; vectors < 2; vectors++)
    for (j = 0; j < 6; j++) {
      char *text = lut_text(widths[j], vectors);
      mgopt_program *p = text ? parse(text) : NULL;
      written w;
      int ok = boundary(p, 7, &w);
      if (!ok) printf("  %d bits%s\n", widths[j], vectors ? ", vectors" : "");
      CHECK(ok); /* opset 7: Div, Mul, Sub */
      CHECK(count_type(w.m, "Gather") == 1 && count_type(w.m, "Mod") == 0);
      written_free(&w);
      CHECK(write_read(p, 9, &w) == 1 && same_outputs(p, w.p)); /* opset 9: an int32 MatMul */
      CHECK(count_type(w.m, "MatMul") == (widths[j] < 6) && count_type(w.m, "Mod") == 0 &&
            count_type(w.m, "Sub") == 0);
      written_free(&w);
      CHECK(write_read(p, 10, &w) == 1 && same_outputs(p, w.p)); /* opset 10: Mod */
      CHECK(count_type(w.m, "Gather") == 1 && count_type(w.m, "Mod") == (widths[j] < 6));
      written_free(&w);
      mgopt_program_destroy(p);
      free(text);
    }
}

/* A palettized weight read back from ONNX and optimized again stays a
   palettized weight: `default` folds the unpacking (Cast, integer Div by
   ONNX's kernel, Mod / MatMul / Div-Mul-Sub, Reshape) and const_elimination
   turns the Gather from the table into constexpr_lut_to_dense again, at
   every opset form; the model written again computes the same and is as
   large but for the names of its new table and indices. */
static void test_lut_read_back_stays_compressed(void) {
  static const int64_t opsets[4] = {7, 9, 10, 17};
  char *t = (char *)malloc(200000);
  size_t n;
  int64_t e;
  int j;
  mgopt_program *p;
  REQUIRE(t);
  n = (size_t)sprintf(t, "main(%%x: (64, 32, fp32)) {\n  %%i: (64, 32, uint4)* = const(val=[");
  for (e = 0; e < 64 * 32; e++) n += (size_t)sprintf(t + n, "%s%d", e ? ", " : "", (int)((e * 7 + e / 32) % 16));
  n += (size_t)sprintf(t + n, "])\n  %%l: (1, 1, 16, 1, fp32)* = const(val=[[[");
  for (e = 0; e < 16; e++) n += (size_t)sprintf(t + n, "%s[%g]", e ? ", " : "", 0.25 * (double)e - 1.5);
  sprintf(t + n, "]]])\n  %%w: (64, 32, fp32) = constexpr_lut_to_dense(indices=%%i, lut=%%l)\n"
                 "  %%y: (64, 32, fp32) = add(x=%%x, y=%%w)\n} -> (%%y)\n");
  p = parse(t);
  REQUIRE(p);
  for (j = 0; j < 4; j++) {
    written w, w2;
    mgopt_diag d;
    int32_t nlut = 0;
    mgopt_op *op;
    CHECK(write_read(p, opsets[j], &w) == 1);
    mgopt_diag_clear(&d);
    CHECK(w.p && mgopt_pipeline_run(w.p, mgopt_builtin_registry(), "default", NULL, &d) == MGOPT_OK);
    for (op = w.p ? mgopt_program_function(w.p, "main")->body->first : NULL; op; op = op->next)
      nlut += op->kind == MGOPT_OP_constexpr_lut_to_dense;
    if (nlut != 1) printf("  opset %d: %d lut ops after default\n", (int)opsets[j], (int)nlut);
    CHECK(nlut == 1);
    CHECK(w.p && same_outputs(p, w.p));
    CHECK(w.p && write_read(w.p, opsets[j], &w2) == 1);
    /* 1 KB of 4-bit indices, not 8 KB of floats; written again, only the
       names of the new table and indices differ (w_lut, w_indices) */
    if (w2.buf.len > w.buf.len + 64)
      printf("  opset %d: %lu bytes, then %lu\n", (int)opsets[j], (unsigned long)w.buf.len, (unsigned long)w2.buf.len);
    CHECK(w.buf.len < 2048 && w2.buf.len <= w.buf.len + 64);
    written_free(&w2);
    written_free(&w);
  }
  mgopt_program_destroy(p);
  free(t);
}

/* opset 21: 3- and 4-bit indices are a uint4 initializer decoded by one Cast
   (no Div, Mod or Reshape of the unpacking) holding the indices themselves,
   low nibble first; opset 20 keeps the packed uint8 form; 1- and 2-bit
   indices keep it at 21 (fewer bytes). mgopt's evaluator has no Cast from
   uint4, so the uint4 form is checked on its bytes (ONNX Runtime runs it:
   tests/fixtures/quant/make_lut_uint4.sh) */
static void test_lut_uint4(void) {
  static const int widths[6] = {1, 2, 3, 4, 6, 8};
  int j, vectors;
  for (vectors = 0; vectors < 2; vectors++)
    for (j = 0; j < 6; j++) {
      char *text = lut_text(widths[j], vectors);
      mgopt_program *p = text ? parse(text) : NULL;
      int u4 = widths[j] == 3 || widths[j] == 4;
      written w;
      REQUIRE(p != NULL);
      CHECK(write_read(p, 20, &w) == 1 && same_outputs(p, w.p));
      CHECK(count_type(w.m, "Mod") == (widths[j] < 6));
      written_free(&w);
      CHECK(write_read(p, 21, &w) == 1);
      CHECK(count_type(w.m, "Gather") == 1 && count_type(w.m, "Cast") == 1);
      CHECK(count_type(w.m, "Mod") == (widths[j] < 6 && !u4) && count_type(w.m, "Div") == (widths[j] < 6 && !u4));
      if (!u4) {
        CHECK(same_outputs(p, w.p));
      } else {
        const mgopt_tensor *idx = NULL;
        const mgopt_op *op;
        int64_t i, found = 0;
        CHECK(count_type(w.m, "Reshape") == vectors); /* the vectors' own Reshape only */
        for (op = mgopt_program_function(p, "main")->body->first; op; op = op->next)
          if (op->kind == MGOPT_OP_constexpr_lut_to_dense) idx = mgopt_value_const(mgopt_op_operand(op, "indices"));
        REQUIRE(idx != NULL);
        for (i = 0; i < w.m->graph->ninitializers; i++) {
          const mgopt_onnx_tensor *t = &w.m->graph->initializers[i];
          if (t->data_type == MGOPT_ONNX_DT_UINT4) {
            int64_t e, bad = 0;
            found++;
            CHECK(t->raw_data.len == (size_t)(idx->numel + 1) / 2);
            CHECK(t->ndims == 2 && t->dims[0] == idx->shape[0] && t->dims[1] == idx->shape[1]);
            for (e = 0; e < idx->numel && (size_t)(e / 2) < t->raw_data.len; e++)
              bad += ((((const uint8_t *)t->raw_data.ptr)[e / 2] >> (4 * (e % 2))) & 15) != mgopt_tensor_get_i64(idx, e);
            CHECK(bad == 0);
          }
        }
        CHECK(found == 1);
        CHECK(same_outputs(p, w.p)); /* the uint4 Cast evaluated */
      }
      written_free(&w);
      mgopt_program_destroy(p);
      free(text);
    }
}

/* names of the model's graph in m (node outputs and initializers) are unique */
static int unique_names(const mgopt_onnx_model *m) {
  int64_t i, j, n = 0;
  mgopt_str names[256];
  for (i = 0; i < m->graph->ninitializers && n < 256; i++) names[n++] = m->graph->initializers[i].name;
  for (i = 0; i < m->graph->nnodes; i++)
    for (j = 0; j < m->graph->nodes[i].noutputs && n < 256; j++) names[n++] = m->graph->nodes[i].outputs[j];
  for (i = 0; i < n; i++)
    for (j = i + 1; j < n; j++)
      if (names[i].len == names[j].len && memcmp(names[i].ptr, names[j].ptr, names[i].len) == 0) return 0;
  return n < 256;
}

/* The decode graphs take short names that no value holds (the model here
   has values named q0, q1 and q2), and the tables two weights share are
   written once: the 2-bit weights' shifts, modulus and shape at opset 12,
   the int8 weights' common scale. */
static void test_decode_names_shared(void) {
  mgopt_program *p = parse("main(%q0: (4, 3, fp32)) {\n"
                           "  %i1: (4, 3, uint2)* = const(val=[[0, 1, 2], [3, 0, 1], [2, 3, 0], [1, 2, 3]])\n"
                           "  %i2: (4, 3, uint2)* = const(val=[[3, 2, 1], [0, 3, 2], [1, 0, 3], [2, 1, 0]])\n"
                           "  %l1: (1, 1, 4, 1, fp32)* = const(val=[[[[-1], [0.5], [2], [8]]]])\n"
                           "  %l2: (1, 1, 4, 1, fp32)* = const(val=[[[[-3], [1.5], [4], [16]]]])\n"
                           "  %q1: (4, 3, fp32) = constexpr_lut_to_dense(indices=%i1, lut=%l1)\n"
                           "  %q2: (4, 3, fp32) = constexpr_lut_to_dense(indices=%i2, lut=%l2)\n"
                           "  %d1: (4, 3, int8)* = const(val=[[1, -2, 3], [4, 5, -6], [7, -8, 9], [-10, 11, 12]])\n"
                           "  %d2: (4, 3, int8)* = const(val=[[-1, 2, 3], [4, -5, 6], [7, 8, -9], [10, 11, -12]])\n"
                           "  %s1: (1, 3, fp32)* = const(val=[[0.5, 0.25, 0.125]])\n"
                           "  %s2: (1, 3, fp32)* = const(val=[[0.5, 0.25, 0.125]])\n"
                           "  %w1: (4, 3, fp32) = constexpr_blockwise_shift_scale(data=%d1, scale=%s1)\n"
                           "  %w2: (4, 3, fp32) = constexpr_blockwise_shift_scale(data=%d2, scale=%s2)\n"
                           "  %a: (4, 3, fp32) = add(x=%q0, y=%q1)\n"
                           "  %b: (4, 3, fp32) = add(x=%a, y=%q2)\n"
                           "  %c: (4, 3, fp32) = add(x=%b, y=%w1)\n"
                           "  %y: (4, 3, fp32) = add(x=%c, y=%w2)\n"
                           "} -> (%y)\n");
  written w;
  int64_t i, fp32_scales = 0, i32 = 0;
  REQUIRE(p != NULL);
  REQUIRE(write_read(p, 12, &w) == 1);
  CHECK(same_outputs(p, w.p));
  CHECK(unique_names(w.m));
  CHECK(count_type(w.m, "Gather") == 2 && count_type(w.m, "Mod") == 2);
  for (i = 0; i < w.m->graph->ninitializers; i++) {
    const mgopt_onnx_tensor *t = &w.m->graph->initializers[i];
    fp32_scales += t->data_type == MGOPT_ONNX_DT_FLOAT && t->ndims == 2 && t->dims[0] == 1;
    i32 += t->data_type == MGOPT_ONNX_DT_INT32; /* shifts and modulus */
    CHECK(t->name.len <= 4); /* short names, own or the writer's */
  }
  CHECK(fp32_scales == 1 && i32 == 2);
  written_free(&w);
  mgopt_program_destroy(p);
}

/* the iOS16 form: packed uint8 bytes, a rank-1 LUT and `shape`; 5 indices of 2 bits (a Slice drops the padding) */
static void test_lut_ios16(void) {
  mgopt_program *p = parse("main(%x: (5, fp32)) {\n"
                           "  %i: (2, uint8)* = const(val=[228, 2])\n"
                           "  %l: (4, fp32)* = const(val=[-1, 0.5, 2, 8])\n"
                           "  %w: (5, fp32) = constexpr_lut_to_dense(indices=%i, lut=%l, shape=[5])\n"
                           "  %y: (5, fp32) = add(x=%x, y=%w)\n"
                           "} -> (%y)\n");
  written w;
  CHECK(boundary(p, 7, &w));
  CHECK(count_type(w.m, "Slice") == 1);
  written_free(&w);
  CHECK(write_read(p, 10, &w) == 1 && same_outputs(p, w.p) && count_type(w.m, "Slice") == 1);
  written_free(&w);
  mgopt_program_destroy(p);
}

/* palettize_weights on an ONNX target: the file holds the packed indices, and the model computes what the decompressed one does */
static void test_palettize_for_onnx(void) {
  char *text = (char *)malloc(1 << 16);
  size_t n = 0;
  mgopt_program *p;
  mgopt_diag d;
  written w;
  int64_t i;
  REQUIRE(text != NULL);
  n += (size_t)sprintf(text, "main(%%x: (1, 64, fp32)) {\n  %%w: (64, 64, fp32)* = const(val=[");
  for (i = 0; i < 64 * 64; i++) n += (size_t)sprintf(text + n, "%s%g", i ? ", " : "", (double)((i * 37) % 101) / 50.0 - 1.0);
  sprintf(text + n, "])\n  %%y: (1, 64, fp32) = linear(x=%%x, weight=%%w)\n} -> (%%y)\n");
  p = parse(text);
  free(text);
  REQUIRE(p != NULL);
  REQUIRE(mgopt_onnx_set_target(p, 6) == MGOPT_OK);
  mgopt_diag_clear(&d);
  REQUIRE(mgopt_pipeline_run(p, mgopt_builtin_registry(), "palettize_weights{nbits=4}", NULL, &d) == MGOPT_OK);
  CHECK(count_kind(p, MGOPT_OP_constexpr_lut_to_dense) == 0); /* refused below 7 */
  REQUIRE(mgopt_onnx_set_target(p, 13) == MGOPT_OK);
  REQUIRE(mgopt_pipeline_run(p, mgopt_builtin_registry(), "palettize_weights{nbits=4}", NULL, &d) == MGOPT_OK);
  CHECK(count_kind(p, MGOPT_OP_constexpr_lut_to_dense) == 1);
  REQUIRE(write_read(p, 13, &w) == 1);
  CHECK(same_outputs(p, w.p));
  CHECK(w.buf.len < 64 * 64 / 2 + 1024); /* 4 bits per weight and the graph */
  written_free(&w);
  mgopt_program_destroy(p);
}

/* a per-channel scale after the lookup (a blockwise_shift_scale of float data) is a Mul */
static void test_palettize_scaled_for_onnx(void) {
  mgopt_program *p = parse("main(%x: (1, 4, fp32)) {\n"
                           "  %w: (3, 4, fp32)* = const(val=[[1, 2, 1, 2], [3, 3, 1, 2], [1, 1, 2, 2]])\n"
                           "  %y: (1, 3, fp32) = linear(x=%x, weight=%w)\n"
                           "} -> (%y)\n");
  mgopt_diag d;
  written w;
  REQUIRE(p != NULL);
  REQUIRE(mgopt_onnx_set_target(p, 13) == MGOPT_OK);
  mgopt_diag_clear(&d);
  REQUIRE(mgopt_pipeline_run(p, mgopt_builtin_registry(),
                             "palettize_weights{mode=unique,enable_per_channel_scale=true,weight_threshold=0}", NULL,
                             &d) == MGOPT_OK);
  CHECK(count_kind(p, MGOPT_OP_constexpr_lut_to_dense) == 1 && count_kind(p, MGOPT_OP_constexpr_blockwise_shift_scale) == 1);
  REQUIRE(write_read(p, 13, &w) == 1);
  CHECK(same_outputs(p, w.p));
  CHECK(count_type(w.m, "Gather") == 1 && count_type(w.m, "Mul") == 1);
  written_free(&w);
  mgopt_program_destroy(p);
}

/* fp16 quantize is not written: ONNX Runtime divides in float, the canonical op at fp16 */
static void test_quantize_fp16_refused(void) {
  mgopt_program *p = parse("main(%x: (2, 3, fp16)) {\n"
                           "  %s: (fp16)* = const(val=0.1)\n"
                           "  %y: (2, 3, uint8) = quantize(input=%x, scale=%s, output_dtype=\"uint8\")\n"
                           "} -> (%y)\n");
  written w;
  REQUIRE(p != NULL);
  CHECK(write_read(p, 21, &w) == 0);
  written_free(&w);
  mgopt_program_destroy(p);
}

/* ---------------------------------------------------------------- the fp16 pipeline on weights read in branches */

/* An If whose branches read three weights of the outer graph: %w by a
   linear (fp16 compute), %wl and %rl transposed and given to an LSTM the
   pipeline keeps fp32 (an opaque op), as exported recurrent models do. */
static char *branch_weights_text(void) {
  char *t = (char *)malloc(1 << 16);
  size_t n = 0;
  int b, j;
  static const char *const names[3] = {"w", "wl", "rl"};
  static const int rows[3] = {32, 16, 8}, mult[3] = {37, 53, 29}, mod[3] = {101, 97, 89};
  if (!t) return NULL;
  n += (size_t)sprintf(t + n, "main(%%x: (4, 1, 16, fp32), %%p: (bool)) {\n");
  for (j = 0; j < 3; j++) {
    int64_t i, cols = j ? 32 : 16;
    n += (size_t)sprintf(t + n, "  %%%s: (%d, %d, fp32)* = const(val=[", names[j], rows[j], (int)cols);
    for (i = 0; i < rows[j] * cols; i++)
      n += (size_t)sprintf(t + n, "%s%s%g%s", i % cols ? ", " : i ? "], " : "", i % cols ? "" : "[",
                           ((double)((i * mult[j]) % mod[j]) / mod[j] - 0.5) * (j ? 0.5 : 1.0), "");
    n += (size_t)sprintf(t + n, "]])\n");
  }
  n += (size_t)sprintf(t + n, "  %%o: (4, 1, 32, fp32), %%q: (4, 1, 8, fp32) = onnx::If(in0=%%p)\n");
  for (b = 0; b < 2; b++) {
    const char *k = b ? "b" : "a";
    n += (size_t)sprintf(t + n,
                         "    %s() {\n"
                         "      %%y_%s: (4, 1, 32, fp32) = linear(x=%%x, weight=%%w)\n"
                         "      %%wt_%s: (32, 16, fp32) = transpose(x=%%wl, perm=[1, 0])\n"
                         "      %%wi_%s: (1, 32, 16, fp32) = expand_dims(x=%%wt_%s, axes=[0])\n"
                         "      %%rt_%s: (32, 8, fp32) = transpose(x=%%rl, perm=[1, 0])\n"
                         "      %%ri_%s: (1, 32, 8, fp32) = expand_dims(x=%%rt_%s, axes=[0])\n"
                         "      %%h_%s: (4, 1, 1, 8, fp32), %%hl_%s: (1, 1, 8, fp32), %%cl_%s: (1, 1, 8, fp32) = "
                         "onnx::LSTM(in0=%%x, in1=%%wi_%s, in2=%%ri_%s, hidden_size=8)\n"
                         "      %%hs_%s: (4, 1, 8, fp32) = squeeze(x=%%h_%s, axes=[1])\n"
                         "      %%o_%s: (4, 1, 32, fp32) = %s(x=%%y_%s, y=%%y_%s)\n"
                         "      %%q_%s: (4, 1, 8, fp32) = %s(x=%%hs_%s, y=%%hs_%s)\n"
                         "    } -> (%%o_%s, %%q_%s)\n",
                         b ? "else_branch" : "then_branch", k, k, k, k, k, k, k, k, k, k, k, k, k, k, k, b ? "sub" : "add",
                         k, k, k, b ? "add" : "mul", k, k, k, k);
  }
  sprintf(t + n, "} -> (%%o, %%q)\n");
  return t;
}

/* Bytes of p written as ONNX at `opset`, 0 on failure. */
static size_t onnx_size(mgopt_program *p, int64_t opset) {
  written w;
  size_t len;
  if (write_read(p, opset, &w) != 1) return 0;
  len = w.buf.len;
  written_free(&w);
  return len;
}

/* fp16 constants of n elements anywhere in block b */
static int count_fp16_consts(const mgopt_block *b, int64_t n) {
  const mgopt_op *op;
  int c = 0;
  int32_t i;
  for (op = b->first; op; op = op->next) {
    const mgopt_tensor *t = op->kind == MGOPT_OP_const ? mgopt_value_const(op->outs[0]) : NULL;
    c += t && t->dtype == MGOPT_DT_FP16 && t->numel == n;
    for (i = 0; i < op->nblocks; i++) c += count_fp16_consts(op->blocks[i], n);
  }
  return c;
}

/* -p fp16 never makes a file bigger: a weight of the outer graph read in
   both branches is converted once, and the weights folded per branch for
   the fp32 LSTM are kept once and stored as fp16 (one copy per branch made
   the file 121% of the original) */
static void test_fp16_branch_weights(void) {
  char *text = branch_weights_text();
  mgopt_program *p = text ? parse(text) : NULL;
  mgopt_diag d;
  size_t before, after;
  free(text);
  REQUIRE(p != NULL);
  REQUIRE(mgopt_onnx_set_target(p, 17) == MGOPT_OK);
  before = onnx_size(p, 17);
  REQUIRE(before > 0);
  mgopt_diag_clear(&d);
  REQUIRE(mgopt_pipeline_run(p, mgopt_builtin_registry(), "add_fp16_cast,dead_code_elimination", NULL, &d) == MGOPT_OK);
  /* w and wl (512 elements), rl (256) once each */
  CHECK(count_fp16_consts(mgopt_program_function(p, "main")->body, 512) == 2);
  CHECK(count_fp16_consts(mgopt_program_function(p, "main")->body, 256) == 1);
  mgopt_program_destroy(p);
  text = branch_weights_text();
  p = text ? parse(text) : NULL;
  free(text);
  REQUIRE(p != NULL);
  REQUIRE(mgopt_onnx_set_target(p, 17) == MGOPT_OK);
  REQUIRE(mgopt_pipeline_run(p, mgopt_builtin_registry(), "fp16", NULL, &d) == MGOPT_OK);
  after = onnx_size(p, 17);
  if (after * 4 > before * 3) printf("  %d -> %d bytes\n", (int)before, (int)after);
  /* 5 KB of fp32 weights, 3 KB of graph: w and the LSTM's W at fp16, its R
     (256 elements, under fp16_weights' threshold) at fp32 */
  CHECK(after > 0 && after * 4 <= before * 3);
  mgopt_program_destroy(p);
}

/* the same on the ONNX fixture (tests/fixtures/quant/make_fp16_branch_weights.py:
   an If and a nested If reading outer initializers by MatMul and LSTM): 22 KB
   became 52 KB before weights were converted once per graph; 14 KB now (the
   fp16 LSTM weights stay fp16, transposed and widened in each branch: folding
   the widening Cast would store them as fp32, a fold over its budget) */
static void test_fp16_branch_fixture(void) {
  static const char path[] = "tests/fixtures/quant/fp16_branch_weights.onnx";
  mgopt_onnx_model *m = NULL;
  mgopt_diag d;
  FILE *f = fopen(path, "rb");
  long before;
  size_t after;
  REQUIRE(f != NULL);
  fseek(f, 0, SEEK_END);
  before = ftell(f);
  fclose(f);
  mgopt_diag_clear(&d);
  REQUIRE(mgopt_onnx_read_file(path, NULL, &m, &d) == MGOPT_OK);
  REQUIRE(mgopt_onnx_import(m, &d) == MGOPT_OK);
  REQUIRE(mgopt_pipeline_run(m->program, mgopt_builtin_registry(), "fp16", NULL, &d) == MGOPT_OK);
  after = onnx_size(m->program, 17);
  if (after * 3 > (size_t)before * 2) printf("  %ld -> %d bytes\n", before, (int)after);
  CHECK(after > 0 && after * 3 <= (size_t)before * 2);
  mgopt_program_destroy(m->program);
}

/* the fp16 pipeline leaves a dequantize's scale fp32 where the target needs
   it (an fp16 scale is DequantizeLinear from opset 19) */
static void test_fp16_dequantize_target(void) {
  static const char text[] = "main(%x: (2, 3, fp32)) {\n"
                             "  %q: (2, 3, int8)* = const(val=[[1, -2, 3], [-4, 5, -6]])\n"
                             "  %s: (fp32)* = const(val=0.25)\n"
                             "  %w: (2, 3, fp32) = dequantize(input=%q, scale=%s)\n"
                             "  %y: (2, 3, fp32) = add(x=%x, y=%w)\n"
                             "} -> (%y)\n";
  int64_t opset;
  for (opset = 17; opset <= 19; opset += 2) {
    mgopt_program *p = parse(text);
    mgopt_diag d;
    written w;
    REQUIRE(p != NULL);
    REQUIRE(mgopt_onnx_set_target(p, opset) == MGOPT_OK);
    mgopt_diag_clear(&d);
    REQUIRE(mgopt_pipeline_run(p, mgopt_builtin_registry(), "add_fp16_cast", NULL, &d) == MGOPT_OK);
    CHECK(write_read(p, opset, &w) == 1);
    CHECK(count_type(w.m, "DequantizeLinear") == 1);
    written_free(&w);
    mgopt_program_destroy(p);
  }
}

static const test_case tests[] = {
    TEST(test_qdq_tensor),
    TEST(test_qdq_axis),
    TEST(test_qdq_int8_no_zero_point),
    TEST(test_qdq_fp16_and_16bit),
    TEST(test_qdq_opaque_forms),
    TEST(test_qdq_weight_kept_by_default),
    TEST(test_dq_blocked_int8),
    TEST(test_dq_4bit),
    TEST(test_dq_blocked_opaque),
    TEST(test_dq_fixture),
    TEST(test_affine_forms),
    TEST(test_lut_every_width), TEST(test_lut_read_back_stays_compressed),
    TEST(test_lut_ios16),
    TEST(test_lut_uint4),
    TEST(test_decode_names_shared),
    TEST(test_palettize_for_onnx),
    TEST(test_palettize_scaled_for_onnx),
    TEST(test_quantize_fp16_refused),
    TEST(test_fp16_branch_weights),
    TEST(test_fp16_branch_fixture),
    TEST(test_fp16_dequantize_target),
};
TEST_MAIN(tests)
