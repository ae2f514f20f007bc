/* tests/unit/test_qdq.c — the activation-QDQ canonicalization passes evaluated before and after on random inputs (mgopt_eval), their numeric contracts against a direct computation, and refusals by the program's target. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include "pass_harness.h"
#include <math.h>

/* A small deterministic generator (xorshift64*), the same on every host. */
static uint64_t rng_next(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

/* Random inputs for main's arguments: floats uniform in [-lim, lim] on a
   grid of 1/64, integers over their whole 8-bit range. */
static int make_inputs(mgopt_program *p, uint64_t *seed, double lim, mgopt_tensor **in, int cap) {
  mgopt_block *b = mgopt_program_function(p, "main")->body;
  int k;
  for (k = 0; k < b->nargs && k < cap; k++) {
    const mgopt_type *t = &b->args[k]->type;
    int64_t shape[MGOPT_MAX_RANK], i;
    int32_t d;
    for (d = 0; d < t->rank; d++) shape[d] = t->dims[d].v;
    in[k] = mgopt_eval_tensor_new(p, (mgopt_dtype)t->dtype, t->rank, shape);
    if (!in[k]) return -1;
    for (i = 0; i < in[k]->numel; i++) {
      uint64_t r = rng_next(seed) >> 11;
      if (t->dtype == MGOPT_DT_INT8)
        mgopt_tensor_set_i64(in[k], i, (int64_t)(r % 256) - 128);
      else if (t->dtype == MGOPT_DT_UINT8)
        mgopt_tensor_set_i64(in[k], i, (int64_t)(r % 256));
      else if (t->dtype == MGOPT_DT_BOOL)
        mgopt_tensor_set_i64(in[k], i, (int64_t)(r % 2));
      else
        mgopt_tensor_set_f64(in[k], i, ((double)(r % 4097) - 2048.0) / 2048.0 * lim);
    }
  }
  return k;
}

static void free_all(mgopt_program *p, mgopt_tensor **t, int n) {
  int i;
  for (i = 0; i < n; i++) mgopt_eval_tensor_free(p, t[i]);
}

/* Largest |a - b| over the elements (both of one shape); -1 when the shapes differ. */
static double max_diff(const mgopt_tensor *a, const mgopt_tensor *b) {
  double m = 0;
  int64_t i;
  if (a->numel != b->numel || a->rank != b->rank) return -1;
  for (i = 0; i < a->numel; i++) {
    double d = fabs(mgopt_tensor_get_f64(a, i) - mgopt_tensor_get_f64(b, i));
    if (d > m) m = d;
  }
  return m;
}

/* Runs `pipeline` on a copy of `text` (it must change the program) and
   evaluates both on `rounds` sets of random inputs. tol < 0: the outputs must
   be bit-identical; else every element within tol. The number of output
   elements compared (0 on a failure, printed). */
static int64_t same_results(const char *text, const char *pipeline, int rounds, double lim, double tol) {
  mgopt_program *a = parse(text), *b = parse(text);
  mgopt_tensor *in[8], *oa[8], *ob[8];
  mgopt_diag d;
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  int64_t compared = 0;
  int r, nin, nout, i;
  char *pa = NULL, *pb = NULL;
  if (!a || !b || run(b, pipeline) != MGOPT_OK) goto fail;
  pa = print(a);
  pb = print(b);
  if (!pa || !pb || strcmp(pa, pb) == 0) {
    printf("  %s did not change the program\n", pipeline);
    goto fail;
  }
  nout = mgopt_program_function(a, "main")->body->nouts;
  if (nout > 8) goto fail;
  for (r = 0; r < rounds; r++) {
    nin = make_inputs(a, &seed, lim, in, 8);
    if (nin < 0) goto fail;
    if (mgopt_eval(a, NULL, in, nin, oa, nout, NULL, &d) != MGOPT_OK ||
        mgopt_eval(b, NULL, in, nin, ob, nout, NULL, &d) != MGOPT_OK) {
      printf("  eval: %s\n", d.msg);
      free_all(a, in, nin);
      goto fail;
    }
    for (i = 0; i < nout; i++) {
      int ok = tol < 0 ? mgopt_tensor_equal(oa[i], ob[i]) : (max_diff(oa[i], ob[i]) >= 0 && max_diff(oa[i], ob[i]) <= tol);
      if (!ok) {
        printf("  output %d differs after %s (max diff %g)\n", i, pipeline, max_diff(oa[i], ob[i]));
        compared = -1;
      } else if (compared >= 0) {
        compared += oa[i]->numel;
      }
    }
    free_all(a, oa, nout);
    free_all(b, ob, nout);
    free_all(a, in, nin);
    if (compared < 0) goto fail;
  }
  free(pa);
  free(pb);
  mgopt_program_destroy(a);
  mgopt_program_destroy(b);
  return compared;
fail:
  free(pa);
  free(pb);
  mgopt_program_destroy(a);
  mgopt_program_destroy(b);
  return 0;
}

/* ---------------------------------------------------------------- exact rewrites */

static void test_pair_elimination_exact(void) {
  static const char text[] =
      "main(%x: (4, 8, int8), %w: (4, 8, uint8)) {\n"
      "  %s: (8, fp16)* = const(val=[0.5, 0.25, 0.125, 3, 0.001, 7.5, 1, 0.3])\n"
      "  %z: (8, int8)* = const(val=[0, 1, -1, 5, -128, 127, 3, 0])\n"
      "  %d: (4, 8, fp16) = dequantize(input=%x, zero_point=%z, scale=%s, axis=1)\n"
      "  %q: (4, 8, int8) = quantize(input=%d, zero_point=%z, scale=%s, axis=1, output_dtype=\"int8\")\n"
      "  %t: (fp32)* = const(val=0.0173)\n"
      "  %u: (uint8)* = const(val=200)\n"
      "  %e: (4, 8, fp32) = dequantize(input=%w, zero_point=%u, scale=%t)\n"
      "  %r: (4, 8, uint8) = quantize(input=%e, zero_point=%u, scale=%t, output_dtype=\"uint8\")\n"
      "} -> (%q, %r)\n";
  CHECK(same_results(text, "dequantize_quantize_pair_elimination", 8, 0, -1) == 8 * 64);
}

static void test_zero_point_folds_exact(void) {
  /* (b) a constant dequantize with zero point -128 and +128, (c) a quantize -> dequantize pair */
  static const char text[] =
      "main(%x: (3, 5, fp32)) {\n"
      "  %c: (2, 3, int8)* = const(val=[[-128, -1, 0], [1, 100, 127]])\n"
      "  %s: (fp32)* = const(val=0.37)\n"
      "  %n: (int8)* = const(val=-128)\n"
      "  %d: (2, 3, fp32) = dequantize(input=%c, zero_point=%n, scale=%s)\n"
      "  %c2: (2, 3, uint8)* = const(val=[[0, 1, 127], [128, 200, 255]])\n"
      "  %h: (3, fp16)* = const(val=[0.5, 0.0123, 3])\n"
      "  %p: (3, uint8)* = const(val=[128, 128, 128])\n"
      "  %d2: (2, 3, fp16) = dequantize(input=%c2, zero_point=%p, scale=%h, axis=1)\n"
      "  %v: (5, fp32)* = const(val=[0.01, 0.02, 0.05, 0.1, 0.003])\n"
      "  %m: (5, int8)* = const(val=[-128, -128, -128, -128, -128])\n"
      "  %q: (3, 5, int8) = quantize(input=%x, zero_point=%m, scale=%v, axis=1, output_dtype=\"int8\")\n"
      "  %e: (3, 5, fp32) = dequantize(input=%q, zero_point=%m, scale=%v, axis=1)\n"
      "} -> (%d, %d2, %e)\n";
  CHECK(same_results(text, "nullify_redundant_quantization_zero_point", 16, 2.0, -1) > 0);
}

static const char dequant_text[] =
    "main(%x: (2, 4, fp32)) {\n"
    "  %c: (2, 4, int8)* = const(val=[[-128, -7, 0, 3], [5, 7, 100, 127]])\n"
    "  %s: (2, 1, fp32)* = const(val=[[0.37], [0.0041]])\n"
    "  %z: (1, 4, int8)* = const(val=[[0, 1, -3, 100]])\n"
    "  %w: (2, 4, fp32) = dequantize(input=%c, zero_point=%z, scale=%s)\n"
    "  %c2: (2, 4, uint8)* = const(val=[[0, 1, 2, 3], [4, 5, 6, 15]])\n"
    "  %h: (4, fp16)* = const(val=[0.5, 0.0123, 3, 0.007])\n"
    "  %p: (uint8)* = const(val=9)\n"
    "  %w2: (2, 4, fp16) = dequantize(input=%c2, zero_point=%p, scale=%h, axis=1)\n"
    "  %c3: (2, 4, int8)* = const(val=[[-8, -7, 0, 3], [5, 7, 1, 2]])\n"
    "  %g: (fp16)* = const(val=0.031)\n"
    "  %w3: (2, 4, fp16) = dequantize(input=%c3, scale=%g)\n"
    "  %y: (2, 4, fp32) = add(x=%x, y=%w)\n"
    "} -> (%y, %w2, %w3)\n";

static void test_dequantize_to_constexpr_exact(void) {
  /* every form: outputs bit-identical to the dequantize kernel's */
  CHECK(same_results(dequant_text, "dequantize_to_constexpr", 4, 3.0, -1) > 0);
  CHECK(same_results(dequant_text, "dequantize_to_constexpr{form=affine}", 4, 3.0, -1) > 0);
  CHECK(same_results(dequant_text, "dequantize_to_constexpr{form=blockwise}", 4, 3.0, -1) > 0);
}

/* ---------------------------------------------------------------- scale normalization */

static const char add_text[] =
    "main(%x: (4, 8, int8), %y: (4, 8, uint8)) {\n"
    "  %sx: (8, fp32)* = const(val=[0.011, 0.5, 0.0371, 1.7, 0.003, 0.25, 0.0625, 0.9])\n"
    "  %zx: (8, int8)* = const(val=[0, 1, -1, 5, -128, 127, 3, 0])\n"
    "  %sy: (fp32)* = const(val=0.0371)\n"
    "  %zy: (uint8)* = const(val=131)\n"
    "  %sz: (fp32)* = const(val=0.0473)\n"
    "  %zz: (int8)* = const(val=-5)\n"
    "  %dx: (4, 8, fp32) = dequantize(input=%x, zero_point=%zx, scale=%sx, axis=1)\n"
    "  %dy: (4, 8, fp32) = dequantize(input=%y, zero_point=%zy, scale=%sy)\n"
    "  %a: (4, 8, fp32) = ADD(x=%dx, y=%dy)\n"
    "  %z: (4, 8, int8) = quantize(input=%a, zero_point=%zz, scale=%sz, output_dtype=\"int8\")\n"
    "  %o: (4, 8, int8) = identity(x=%z)\n"
    "} -> (%o)\n";

static double round_half_even(double v) {
  double f = floor(v), d = v - f;
  if (d > 0.5 || (d == 0.5 && fmod(f, 2.0) != 0.0)) f += 1.0;
  return f;
}

/* Each normalized output integer is within one unit of the quantization of
   the exact (double) result, and of the output before the rewrite. */
static void check_normalized(int sub) {
  static const double sx[8] = {0.011, 0.5, 0.0371, 1.7, 0.003, 0.25, 0.0625, 0.9};
  static const double zx[8] = {0, 1, -1, 5, -128, 127, 3, 0};
  char text[sizeof add_text];
  char *op;
  mgopt_program *p;
  mgopt_tensor *in[8], *out[1];
  mgopt_diag d;
  uint64_t seed = 12345;
  int r, nin;
  int64_t i, moved = 0;
  memcpy(text, add_text, sizeof add_text);
  op = strstr(text, "ADD(");
  REQUIRE(op != NULL);
  memcpy(op, sub ? "sub" : "add", 3);
  CHECK(same_results(text, "distributive_quantized_binary_op_scale_normalization", 16, 0, 1.0) > 0);
  p = parse(text);
  REQUIRE(p != NULL);
  REQUIRE(run(p, "distributive_quantized_binary_op_scale_normalization") == MGOPT_OK);
  for (r = 0; r < 16; r++) {
    nin = make_inputs(p, &seed, 0, in, 8);
    REQUIRE(nin == 2);
    REQUIRE(mgopt_eval(p, NULL, in, nin, out, 1, NULL, &d) == MGOPT_OK);
    for (i = 0; i < 32; i++) {
      double x = mgopt_tensor_get_f64(in[0], i), y = mgopt_tensor_get_f64(in[1], i);
      double a = (x - zx[i % 8]) * (double)(float)sx[i % 8], b = (y - 131) * (double)(float)0.0371;
      double z = round_half_even((sub ? a - b : a + b) / (double)(float)0.0473) - 5;
      double got = mgopt_tensor_get_f64(out[0], i);
      if (z < -128) z = -128;
      if (z > 127) z = 127;
      CHECK(fabs(got - z) <= 1.0);
      moved += got != z;
    }
    free_all(p, out, 1);
    free_all(p, in, nin);
  }
  CHECK(moved < 16 * 32 / 8); /* a rounding boundary is rare */
  mgopt_program_destroy(p);
}

static void test_scale_normalization_add(void) { check_normalized(0); }
static void test_scale_normalization_sub(void) { check_normalized(1); }

/* ---------------------------------------------------------------- palette order */

static void test_lut_order_exact(void) {
  static const char dequant_first[] =
      "main(%x: (4, 6, fp16)) {\n"
      "  %i: (4, 3, uint2)* = const(val=[[0, 1, 3], [1, 0, 2], [3, 3, 1], [0, 2, 2]])\n"
      "  %t: (2, 1, 4, 2, int8)* = const(val=[[[[-3, 1], [5, 9], [-128, 127], [0, 7]]], "
      "[[[7, -2], [-1, 4], [3, 3], [100, -50]]]])\n"
      "  %d: (4, 6, int8) = constexpr_lut_to_dense(indices=%i, lut=%t, vector_axis=1)\n"
      "  %s: (4, 1, fp16)* = const(val=[[0.0137], [0.25], [2.7], [1]])\n"
      "  %o: (4, 1, int8)* = const(val=[[2], [-3], [0], [1]])\n"
      "  %w: (4, 6, fp16) = constexpr_blockwise_shift_scale(data=%d, scale=%s, offset=%o)\n"
      "  %y: (4, 6, fp16) = add(x=%x, y=%w)\n"
      "} -> (%y)\n";
  static const char lut_first[] =
      "main(%x: (4, 2, fp32)) {\n"
      "  %i: (4, 2, uint1)* = const(val=[[0, 1], [1, 0], [1, 1], [0, 0]])\n"
      "  %t: (2, 1, 2, 1, fp32)* = const(val=[[[[-3.7], [5.1]]], [[[0.3], [1e-3]]]])\n"
      "  %s: (1, 1, 1, 1, fp16)* = const(val=[[[[0.37]]]])\n"
      "  %p: (2, 1, 2, 1, fp16) = constexpr_blockwise_shift_scale(data=%t, scale=%s)\n"
      "  %w: (4, 2, fp16) = constexpr_lut_to_dense(indices=%i, lut=%p)\n"
      "  %y: (4, 2, fp32) = cast(x=%w, dtype=\"fp32\")\n"
      "  %z: (4, 2, fp32) = add(x=%x, y=%y)\n"
      "} -> (%z)\n";
  CHECK(same_results(dequant_first, "canonicalize_quantized_lut_pattern", 2, 8.0, -1) == 2 * 24);
  CHECK(same_results(lut_first, "canonicalize_quantized_lut_pattern{order=lut_first}", 2, 8.0, -1) == 2 * 8);
}

/* ---------------------------------------------------------------- the target */

static int refuse_affine(const mgopt_program *p, const mgopt_op *op, void *ud) {
  (void)p;
  (void)ud;
  return op->kind != MGOPT_OP_constexpr_affine_dequantize;
}

static int refuse_constexpr(const mgopt_program *p, const mgopt_op *op, void *ud) {
  (void)p;
  (void)ud;
  return op->kind != MGOPT_OP_constexpr_affine_dequantize && op->kind != MGOPT_OP_constexpr_blockwise_shift_scale;
}

static int count_kind(mgopt_program *p, int32_t kind) {
  mgopt_op *op;
  int n = 0;
  for (op = mgopt_program_function(p, "main")->body->first; op; op = op->next) n += op->kind == kind;
  return n;
}

static void test_dequantize_to_constexpr_target(void) {
  mgopt_program *p = parse(dequant_text);
  char *before, *after;
  REQUIRE(p != NULL);
  /* a target without the affine op: auto takes the blockwise form */
  mgopt_program_set_target(p, refuse_affine, NULL);
  REQUIRE(run(p, "dequantize_to_constexpr") == MGOPT_OK);
  CHECK_EQ_INT(count_kind(p, MGOPT_OP_constexpr_affine_dequantize), 0);
  CHECK_EQ_INT(count_kind(p, MGOPT_OP_constexpr_blockwise_shift_scale), 3);
  CHECK_EQ_INT(count_kind(p, MGOPT_OP_dequantize), 0);
  mgopt_program_destroy(p);
  /* a target with neither: nothing changes, for every form */
  p = parse(dequant_text);
  REQUIRE(p != NULL);
  mgopt_program_set_target(p, refuse_constexpr, NULL);
  before = print(p);
  CHECK(run(p, "dequantize_to_constexpr") == MGOPT_OK);
  CHECK(run(p, "dequantize_to_constexpr{form=blockwise}") == MGOPT_OK);
  CHECK(run(p, "dequantize_to_constexpr{form=affine}") == MGOPT_OK);
  after = print(p);
  CHECK_EQ_STR(before, after);
  free(before);
  free(after);
  mgopt_program_destroy(p);
}

static const test_case tests[] = {
    TEST(test_pair_elimination_exact),
    TEST(test_zero_point_folds_exact),
    TEST(test_dequantize_to_constexpr_exact),
    TEST(test_dequantize_to_constexpr_target),
    TEST(test_scale_normalization_add),
    TEST(test_scale_normalization_sub),
    TEST(test_lut_order_exact),
};

TEST_MAIN(tests)
