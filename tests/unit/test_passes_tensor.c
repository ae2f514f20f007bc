/* tests/unit/test_passes_tensor.c — the tensor fusions (replace_stack_reshape, detect_concat_interleave, concat_to_pixel_shuffle, use_reflection_padding, fuse_onehot_matmul_to_gather) where golden text cannot show it: a target that refuses the built op, pixel_shuffle's values against a CRD reference, and the ONNX form of what they build on both sides of the opset boundary. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include "pass_harness.h"
#include <stdlib.h> /* malloc, free for printed programs */

static const char stack_text[] =
    "main(%a: (1, 5, 3, 4, fp32), %b: (1, 5, 3, 4, fp32)) {\n"
    "  %s: (1, 5, 2, 3, 4, fp32) = stack(values=(%a, %b), axis=2)\n"
    "  %shape: (4, int32)* = const(val=[1, 10, 3, 4])\n"
    "  %r: (1, 10, 3, 4, fp32) = reshape(x=%s, shape=%shape)\n"
    "} -> (%r)\n";

static const char shuffle_text[] =
    "main(%a: (1, 2, 3, 3, fp32), %b: (1, 2, 3, 3, fp32)) {\n"
    "  %c: (1, 4, 3, 3, fp32) = concat(values=(%a, %b), axis=1)\n"
    "  %s1: (5, int32)* = const(val=[1, 2, 2, 3, 3])\n"
    "  %r1: (1, 2, 2, 3, 3, fp32) = reshape(x=%c, shape=%s1)\n"
    "  %t: (1, 2, 2, 3, 3, fp32) = transpose(x=%r1, perm=[0, 2, 1, 3, 4])\n"
    "  %s2: (4, int32)* = const(val=[1, 4, 3, 3])\n"
    "  %r2: (1, 4, 3, 3, fp32) = reshape(x=%t, shape=%s2)\n"
    "} -> (%r2)\n";

static const char rows_cols_text[] =
    "main(%a: (1, 2, 3, 4, fp32), %b: (1, 2, 3, 4, fp32), %c: (1, 2, 3, 4, fp32), %d: (1, 2, 3, 4, fp32)) {\n"
    "  %h0: (1, 2, 6, 4, fp32) = concat(values=(%a, %b), axis=2, interleave=true)\n"
    "  %h1: (1, 2, 6, 4, fp32) = concat(values=(%c, %d), axis=2, interleave=true)\n"
    "  %o: (1, 2, 6, 8, fp32) = concat(values=(%h0, %h1), axis=3, interleave=true)\n"
    "} -> (%o)\n";

static const char mirror_text[] =
    "main(%x: (2, 4, fp32)) {\n"
    "  %b0: (2, int32)* = const(val=[0, 1])\n"
    "  %e0: (2, int32)* = const(val=[2, 2])\n"
    "  %l: (2, 1, fp32) = slice_by_index(x=%x, begin=%b0, end=%e0)\n"
    "  %b1: (2, int32)* = const(val=[0, 2])\n"
    "  %e1: (2, int32)* = const(val=[2, 3])\n"
    "  %r: (2, 1, fp32) = slice_by_index(x=%x, begin=%b1, end=%e1)\n"
    "  %o: (2, 6, fp32) = concat(values=(%l, %x, %r), axis=1)\n"
    "} -> (%o)\n";

static const char onehot_text[] =
    "main(%i: (2, int32)) {\n"
    "  %h: (2, 3, fp32) = one_hot(indices=%i, one_hot_vector_size=3)\n"
    "  %w: (3, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6]])\n"
    "  %y: (2, 2, fp32) = matmul(x=%h, y=%w)\n"
    "} -> (%y)\n";

/* a writer without some construct: `ud` names the refused op kind; concat
   is refused only when it interleaves, pad only in reflect mode */
static int refuse_kind(const mgopt_program *p, const mgopt_op *op, void *ud) {
  int32_t kind = *(const int32_t *)ud;
  (void)p;
  if (op->kind != kind) return 1;
  if (kind == MGOPT_OP_concat) return !mgopt_op_get_bool(op, "interleave", 0);
  if (kind == MGOPT_OP_pad) {
    const char *m = mgopt_op_get_string(op, "mode", NULL);
    return !(m && strcmp(m, "reflect") == 0);
  }
  return 0;
}

/* 1 when `pass` changes the program without a target, and leaves it as it
   was when the target refuses ops of `kind`. */
static int refused(const char *text, const char *pass, int32_t kind) {
  mgopt_program *p = parse(text), *q = parse(text);
  char *before = NULL, *after = NULL, *free_run = NULL;
  int ok = 0;
  if (!p || !q) goto done;
  before = print(p);
  mgopt_program_set_target(p, refuse_kind, &kind);
  if (run(p, pass) != MGOPT_OK || run(q, pass) != MGOPT_OK) goto done;
  after = print(p);
  free_run = print(q);
  ok = before && after && free_run && strcmp(before, after) == 0 && strcmp(before, free_run) != 0;
done:
  free(before);
  free(after);
  free(free_run);
  mgopt_program_destroy(p);
  mgopt_program_destroy(q);
  return ok;
}

static void test_target_refusals(void) {
  CHECK(refused(stack_text, "replace_stack_reshape", MGOPT_OP_concat));
  CHECK(refused(shuffle_text, "detect_concat_interleave", MGOPT_OP_concat));
  CHECK(refused(rows_cols_text, "concat_to_pixel_shuffle", MGOPT_OP_pixel_shuffle));
  CHECK(refused(rows_cols_text, "concat_to_pixel_shuffle", MGOPT_OP_concat));
  CHECK(refused(mirror_text, "use_reflection_padding", MGOPT_OP_pad));
  CHECK(refused(onehot_text, "fuse_onehot_matmul_to_gather", MGOPT_OP_gather));
}

/* the nested concats over constant a, b, c, d folded directly, against the
   pass's channel concat folded and shuffled by a plain CRD loop */
static void test_pixel_shuffle_values(void) {
  static const char *const names[4] = {"a", "b", "c", "d"};
  char text[4096];
  size_t n = 0;
  int k, i;
  mgopt_program *p, *q;
  mgopt_op *op, *ps = NULL;
  mgopt_tensor *want, *in;
  n += (size_t)snprintf(text + n, sizeof text - n, "main() {\n");
  for (k = 0; k < 4; k++) {
    int c, y;
    n += (size_t)snprintf(text + n, sizeof text - n, "  %%%s: (1, 2, 2, 3, fp32) = const(val=[", names[k]);
    for (c = 0; c < 2; c++) {
      n += (size_t)snprintf(text + n, sizeof text - n, "%s[", c ? ", " : "");
      for (y = 0; y < 2; y++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%s[%d, %d, %d]", y ? ", " : "", 100 * k + 6 * c + 3 * y,
                              100 * k + 6 * c + 3 * y + 1, 100 * k + 6 * c + 3 * y + 2);
      n += (size_t)snprintf(text + n, sizeof text - n, "]");
    }
    n += (size_t)snprintf(text + n, sizeof text - n, "])\n");
  }
  n += (size_t)snprintf(text + n, sizeof text - n,
                        "  %%h0: (1, 2, 4, 3, fp32) = concat(values=(%%a, %%b), axis=2, interleave=true)\n"
                        "  %%h1: (1, 2, 4, 3, fp32) = concat(values=(%%c, %%d), axis=2, interleave=true)\n"
                        "  %%o: (1, 2, 4, 6, fp32) = concat(values=(%%h0, %%h1), axis=3, interleave=true)\n"
                        "} -> (%%o)\n");
  p = parse(text);
  q = parse(text);
  REQUIRE(p && q);
  REQUIRE(run(p, "const_elimination,dead_code_elimination") == MGOPT_OK);
  /* const_elimination would fold the pixel_shuffle too: its input is folded here alone */
  REQUIRE(run(q, "concat_to_pixel_shuffle") == MGOPT_OK);
  want = mgopt_value_const(mgopt_program_function_at(p, 0)->body->outs[0]->value);
  for (op = mgopt_program_function_at(q, 0)->body->first; op; op = op->next)
    if (op->kind == MGOPT_OP_pixel_shuffle) ps = op;
  REQUIRE(want && ps);
  in = mgopt_value_const(mgopt_op_operand(ps, "x"));
  if (!in && mgopt_op_operand(ps, "x")->def) {
    mgopt_tensor *folded[1];
    if (mgopt_fold_op(q, mgopt_op_operand(ps, "x")->def, folded, NULL) == 1) in = folded[0];
  }
  REQUIRE(in && in->rank == 4 && in->shape[1] == 8 && in->shape[2] == 2 && in->shape[3] == 3);
  REQUIRE(want->numel == 48);
  {
    /* out[0, c, 2y + i, 2x + j] = in[0, 4c + 2i + j, y, x] */
    int c, y, x, j, bad = 0;
    for (c = 0; c < 2; c++)
      for (y = 0; y < 2; y++)
        for (x = 0; x < 3; x++)
          for (i = 0; i < 2; i++)
            for (j = 0; j < 2; j++) {
              int64_t o = ((int64_t)c * 4 + 2 * y + i) * 6 + 2 * x + j;
              int64_t s = (((int64_t)4 * c + 2 * i + j) * 2 + y) * 3 + x;
              if (mgopt_tensor_get_f64(want, o) != mgopt_tensor_get_f64(in, s)) bad++;
            }
    CHECK_EQ_INT(bad, 0);
  }
  mgopt_program_destroy(p);
  mgopt_program_destroy(q);
}

/* op types of the exported graph's nodes, space-separated, into buf */
static int export_ops(mgopt_program *p, int64_t opset, char *buf, size_t cap) {
  mgopt_onnx_export_options eo;
  mgopt_onnx_model *m = NULL;
  mgopt_diag d;
  int64_t i;
  size_t n = 0;
  memset(&eo, 0, sizeof eo);
  eo.opset = opset;
  buf[0] = 0;
  if (mgopt_onnx_export(p, &eo, &m, &d) != MGOPT_OK) return (int)d.status;
  for (i = 0; i < m->graph->nnodes; i++) {
    mgopt_str t = m->graph->nodes[i].op_type;
    n += (size_t)snprintf(buf + n, cap - n, "%s%.*s", n ? " " : "", (int)t.len, t.ptr);
    if (n >= cap) break;
  }
  return 0;
}

static void test_onnx_forms(void) {
  static const char fused[] =
      "main(%a: (1, 2, 3, 4, fp32), %b: (1, 2, 3, 4, fp32), %c: (1, 2, 3, 4, fp32), %d: (1, 2, 3, 4, fp32)) {\n"
      "  %o_channels: (1, 8, 3, 4, fp32) = concat(values=(%a, %c, %b, %d), axis=1, interleave=true)\n"
      "  %o: (1, 2, 6, 8, fp32) = pixel_shuffle(x=%o_channels, upscale_factor=2)\n"
      "} -> (%o)\n";
  char ops[512];
  mgopt_program *p = parse(fused), *q = NULL;
  REQUIRE(p != NULL);
  /* pixel_shuffle is DepthToSpace(CRD) from opset 11; an interleaved concat
     is the channel shuffle from opset 5 (Reshape with a shape input) */
  CHECK_EQ_INT(export_ops(p, 11, ops, sizeof ops), 0);
  CHECK_EQ_STR(ops, "Concat Reshape Transpose Reshape DepthToSpace");
  CHECK_EQ_INT(export_ops(p, 10, ops, sizeof ops), MGOPT_ERR_UNSUPPORTED);
  mgopt_program_destroy(p);
  p = parse(shuffle_text);
  REQUIRE(p != NULL);
  REQUIRE(run(p, "detect_concat_interleave") == MGOPT_OK);
  CHECK_EQ_INT(export_ops(p, 5, ops, sizeof ops), 0);
  CHECK_EQ_STR(ops, "Concat Reshape Transpose Reshape");
  CHECK_EQ_INT(export_ops(p, 4, ops, sizeof ops), MGOPT_ERR_UNSUPPORTED);
  {
    /* written and read back, the shuffle is found again */
    mgopt_onnx_export_options eo;
    mgopt_onnx_model *m = NULL;
    mgopt_buf b;
    mgopt_diag d;
    char *txt;
    memset(&eo, 0, sizeof eo);
    memset(&b, 0, sizeof b);
    eo.opset = 13;
    REQUIRE(mgopt_onnx_export(p, &eo, &m, &d) == MGOPT_OK);
    REQUIRE(mgopt_onnx_write(m, NULL, &b, NULL, &d) == MGOPT_OK);
    CHECK(mgopt_onnx_load(b.data, b.len, NULL, &q, &d) == MGOPT_OK);
    if (q) {
      CHECK(run(q, "detect_concat_interleave,dead_code_elimination") == MGOPT_OK);
      txt = print(q);
      CHECK(txt && strstr(txt, "interleave=true") && !strstr(txt, "transpose"));
      free(txt);
      mgopt_program_destroy(q);
    }
    mgopt_buf_free(&b);
  }
  mgopt_program_destroy(p);
}

static const test_case tests[] = {
    TEST(test_target_refusals),
    TEST(test_pixel_shuffle_values),
    TEST(test_onnx_forms),
};

TEST_MAIN(tests)
