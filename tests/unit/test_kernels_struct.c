/* tests/unit/test_kernels_struct.c — kernels of the structural and index ops (scatter_along_axis, scatter_nd,
   gather_nd, reverse_sequence, depth_to_space, space_to_depth, topk, range_1d, fill) through mgopt_eval: the
   dtypes ONNX's conformance data uses, the scatter numeric contract against a step-by-step computation, and
   the contract errors (an index out of range is MGOPT_ERR_CORRUPT, never a crash). */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <math.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- fixtures */

static mgopt_program *parse(const char *text) {
  mgopt_program *p = NULL;
  mgopt_diag d;
  if (mgopt_mil_parse(text, strlen(text), NULL, &p, &d) != MGOPT_OK) {
    printf("  parse error %d:%d: %s\n", d.line, d.col, d.msg);
    return NULL;
  }
  return p;
}

/* An evaluator input of dtype dt holding v (converted as mgopt_tensor_set_f64 does). */
static mgopt_tensor *tin(mgopt_program *p, mgopt_dtype dt, int rank, const int64_t *shape, const double *v) {
  mgopt_tensor *t = mgopt_eval_tensor_new(p, dt, rank, shape);
  int64_t i;
  if (t)
    for (i = 0; i < t->numel; i++) mgopt_tensor_set_f64(t, i, v[i]);
  return t;
}

/* Evaluates p on in[0..nin) into out[0..nout); the status (d gets the message). */
static mgopt_status run(mgopt_program *p, mgopt_tensor **in, int nin, mgopt_tensor **out, int nout, mgopt_diag *d) {
  int i;
  for (i = 0; i < nout; i++) out[i] = NULL;
  return mgopt_eval(p, NULL, in, nin, out, nout, NULL, d);
}

static void free_all(mgopt_program *p, mgopt_tensor **t, int n) {
  int i;
  for (i = 0; i < n; i++) mgopt_eval_tensor_free(p, t[i]);
}

/* t has dtype dt, the given shape and values (as doubles; NaN matches NaN). */
static int is(const mgopt_tensor *t, mgopt_dtype dt, int rank, const int64_t *shape, const double *v) {
  int64_t i;
  int k;
  if (!t || t->dtype != dt || t->rank != rank) return 0;
  for (k = 0; k < rank; k++)
    if (t->shape[k] != shape[k]) return 0;
  for (i = 0; i < t->numel; i++) {
    double g = mgopt_tensor_get_f64(t, i);
    if (!(g == v[i] || (g != g && v[i] != v[i]))) {
      printf("  element %lld: got %.17g expected %.17g\n", (long long)i, g, v[i]);
      return 0;
    }
  }
  return 1;
}

#define I64S(name, ...) static const int64_t name[] = {__VA_ARGS__}
#define DBL(name, ...) static const double name[] = {__VA_ARGS__}

/* ---------------------------------------------------------------- scatter */

/* scatter_along_axis with run-time data over the dtypes ONNX's tests use (fp32) and the others its
   spec allows: update moves bytes (int8, bool, fp16, fp64); add wraps uint8; div is computed for floats. */
static void test_scatter_along_axis_dtypes(void) {
  static const char *const dts[] = {"fp32", "int8", "bool", "fp16", "fp64", "uint8", "int64"};
  static const mgopt_dtype dtv[] = {MGOPT_DT_FP32, MGOPT_DT_INT8, MGOPT_DT_BOOL, MGOPT_DT_FP16,
                                    MGOPT_DT_FP64, MGOPT_DT_UINT8, MGOPT_DT_INT64};
  I64S(s3, 3);
  I64S(s2, 2);
  DBL(dv, 1, 0, 250);
  DBL(uv, 10, 1);
  size_t i;
  for (i = 0; i < sizeof dts / sizeof dts[0]; i++) {
    char src[512];
    mgopt_program *p;
    mgopt_tensor *in[2], *out[2];
    mgopt_diag d;
    int is_bool = dtv[i] == MGOPT_DT_BOOL;
    snprintf(src, sizeof src,
             "main(%%d: (3, %s), %%u: (2, %s)) {\n"
             "  %%i: (2, int64)* = const(val=[2, 0])\n"
             "  %%a: (3, %s) = scatter_along_axis(data=%%d, indices=%%i, updates=%%u, mode=\"update\")\n"
             "  %%b: (3, %s) = scatter_along_axis(data=%%d, indices=%%i, updates=%%u, mode=\"%s\")\n"
             "} -> (%%a, %%b)\n",
             dts[i], dts[i], dts[i], dts[i], is_bool ? "update" : "add");
    p = parse(src);
    REQUIRE(p);
    in[0] = tin(p, dtv[i], 1, s3, dv);
    in[1] = tin(p, dtv[i], 1, s2, uv);
    CHECK_EQ_INT(run(p, in, 2, out, 2, &d), MGOPT_OK);
    if (d.status == MGOPT_OK) {
      double ua[3], ub[3];
      ua[0] = mgopt_tensor_get_f64(in[1], 1);
      ua[1] = 0;
      ua[2] = mgopt_tensor_get_f64(in[1], 0);
      ub[0] = mgopt_tensor_get_f64(in[0], 0) + ua[0];
      ub[1] = 0;
      ub[2] = mgopt_tensor_get_f64(in[0], 2) + ua[2];
      if (dtv[i] == MGOPT_DT_UINT8) ub[2] = 4; /* 250 + 10 wraps around */
      if (is_bool) memcpy(ub, ua, sizeof ub);
      CHECK(is(out[0], dtv[i], 1, s3, ua));
      CHECK(is(out[1], dtv[i], 1, s3, ub));
      free_all(p, out, 2);
    }
    free_all(p, in, 2);
    mgopt_program_destroy(p);
  }
}

/* The numeric contract: each step rounded to the dtype at once, in row-major order of the updates.
   fp32 against float arithmetic step by step (IEEE single, as a runtime computes), fp16 against the
   double result rounded to fp16 after each step. */
static void test_scatter_contract(void) {
  const char *src =
      "main(%d: (4, fp32), %u: (64, fp32), %h: (4, fp16), %v: (64, fp16)) {\n"
      "  %i: (64, int32)* = const(val=[0, 1, 2, 3, 3, 2, 1, 0, 0, 0, 1, 1, 2, 2, 3, 3, 0, 1, 2, 3, 3, 2, 1, 0, 0, 0, 1, 1, 2, 2, 3, 3,"
      " 0, 1, 2, 3, 3, 2, 1, 0, 0, 0, 1, 1, 2, 2, 3, 3, 0, 1, 2, 3, 3, 2, 1, 0, 0, 0, 1, 1, 2, 2, 3, 3])\n"
      "  %a: (4, fp32) = scatter_along_axis(data=%d, indices=%i, updates=%u, mode=\"add\")\n"
      "  %b: (4, fp32) = scatter_along_axis(data=%d, indices=%i, updates=%u, mode=\"mul\")\n"
      "  %c: (4, fp16) = scatter_along_axis(data=%h, indices=%i, updates=%v, mode=\"add\")\n"
      "} -> (%a, %b, %c)\n";
  static const int idx[16] = {0, 1, 2, 3, 3, 2, 1, 0, 0, 0, 1, 1, 2, 2, 3, 3};
  mgopt_program *p = parse(src);
  I64S(s4, 4);
  I64S(s64, 64);
  double dv[4] = {1.5, -2.25, 1e7, 3.0}, uv[64];
  float fa[4], fm[4];
  double ha[4];
  mgopt_tensor *in[4], *out[3];
  mgopt_diag d;
  int i;
  unsigned s = 12345u;
  REQUIRE(p);
  for (i = 0; i < 64; i++) {
    s = s * 1103515245u + 12345u;
    uv[i] = ((double)((s >> 8) % 20001u) - 10000.0) / 997.0;
  }
  in[0] = tin(p, MGOPT_DT_FP32, 1, s4, dv);
  in[1] = tin(p, MGOPT_DT_FP32, 1, s64, uv);
  in[2] = tin(p, MGOPT_DT_FP16, 1, s4, dv);
  in[3] = tin(p, MGOPT_DT_FP16, 1, s64, uv);
  for (i = 0; i < 4; i++) {
    fa[i] = fm[i] = (float)mgopt_tensor_get_f64(in[0], i);
    ha[i] = mgopt_tensor_get_f64(in[2], i);
  }
  for (i = 0; i < 64; i++) {
    volatile float u = (float)mgopt_tensor_get_f64(in[1], i), t;
    int j = idx[i % 16];
    t = fa[j] + u;
    fa[j] = t;
    t = fm[j] * u;
    fm[j] = t;
    ha[j] = (double)mgopt_f16_to_f32(mgopt_f32_to_f16((float)(ha[j] + mgopt_tensor_get_f64(in[3], i))));
  }
  CHECK_EQ_INT(run(p, in, 4, out, 3, &d), MGOPT_OK);
  if (d.status == MGOPT_OK) {
    double ea[4], em[4];
    for (i = 0; i < 4; i++) {
      ea[i] = fa[i];
      em[i] = fm[i];
    }
    CHECK(is(out[0], MGOPT_DT_FP32, 1, s4, ea));
    CHECK(is(out[1], MGOPT_DT_FP32, 1, s4, em));
    CHECK(is(out[2], MGOPT_DT_FP16, 1, s4, ha));
    free_all(p, out, 3);
  }
  free_all(p, in, 4);
  mgopt_program_destroy(p);
}

/* scatter_nd over fp32 (ONNX's tests) and int32: update, add, mul of slices; max and min. */
static void test_scatter_nd(void) {
  const char *src =
      "main(%d: (2, 3, fp32), %i: (2, 1, int64), %u: (2, 3, fp32), %n: (3, int32)) {\n"
      "  %a: (2, 3, fp32) = scatter_nd(data=%d, indices=%i, updates=%u, mode=\"update\")\n"
      "  %b: (2, 3, fp32) = scatter_nd(data=%d, indices=%i, updates=%u, mode=\"add\")\n"
      "  %c: (2, 3, fp32) = scatter_nd(data=%d, indices=%i, updates=%u, mode=\"mul\")\n"
      "  %j: (2, 1, int32)* = const(val=[[2], [2]])\n"
      "  %w: (2, int32)* = const(val=[-4, 9])\n"
      "  %e: (3, int32) = scatter_nd(data=%n, indices=%j, updates=%w, mode=\"max\")\n"
      "  %f: (3, int32) = scatter_nd(data=%n, indices=%j, updates=%w, mode=\"min\")\n"
      "} -> (%a, %b, %c, %e, %f)\n";
  mgopt_program *p = parse(src);
  I64S(s23, 2, 3);
  I64S(s21, 2, 1);
  I64S(s3, 3);
  DBL(dv, 1, 2, 3, 4, 5, 6);
  DBL(iv, 1, 1);
  DBL(uv, 10, 20, 30, 40, 50, 60);
  DBL(nv, 7, 8, 5);
  mgopt_tensor *in[4], *out[5];
  mgopt_diag d;
  REQUIRE(p);
  in[0] = tin(p, MGOPT_DT_FP32, 2, s23, dv);
  in[1] = tin(p, MGOPT_DT_INT64, 2, s21, iv);
  in[2] = tin(p, MGOPT_DT_FP32, 2, s23, uv);
  in[3] = tin(p, MGOPT_DT_INT32, 1, s3, nv);
  CHECK_EQ_INT(run(p, in, 4, out, 5, &d), MGOPT_OK);
  if (d.status == MGOPT_OK) {
    DBL(ea, 1, 2, 3, 40, 50, 60);
    DBL(eb, 1, 2, 3, 54, 75, 96);
    DBL(ec, 1, 2, 3, 1600, 5000, 10800);
    DBL(ee, 7, 8, 9);
    DBL(ef, 7, 8, -4);
    CHECK(is(out[0], MGOPT_DT_FP32, 2, s23, ea)); /* duplicates: the last update wins */
    CHECK(is(out[1], MGOPT_DT_FP32, 2, s23, eb));
    CHECK(is(out[2], MGOPT_DT_FP32, 2, s23, ec));
    CHECK(is(out[3], MGOPT_DT_INT32, 1, s3, ee));
    CHECK(is(out[4], MGOPT_DT_INT32, 1, s3, ef));
    free_all(p, out, 5);
  }
  free_all(p, in, 4);
  mgopt_program_destroy(p);
}

/* ---------------------------------------------------------------- gather_nd, reverse_sequence */

/* gather_nd over fp32 and int32 (ONNX's tests) and int8, with batch_dims 1 and whole slices. */
static void test_gather_nd(void) {
  const char *src =
      "main(%x: (2, 2, 2, int32), %i: (2, 1, int64), %y: (2, 3, int8), %f: (2, 2, fp32)) {\n"
      "  %a: (2, 2, int32) = gather_nd(x=%x, indices=%i, batch_dims=1)\n"
      "  %k: (3, 1, int32)* = const(val=[[1], [0], [-1]])\n"
      "  %b: (3, 3, int8) = gather_nd(x=%y, indices=%k)\n"
      "  %m: (2, 2, int64)* = const(val=[[0, 0], [1, 1]])\n"
      "  %c: (2, fp32) = gather_nd(x=%f, indices=%m)\n"
      "} -> (%a, %b, %c)\n";
  mgopt_program *p = parse(src);
  I64S(s222, 2, 2, 2);
  I64S(s21, 2, 1);
  I64S(s23, 2, 3);
  I64S(s22, 2, 2);
  I64S(s33, 3, 3);
  I64S(s2, 2);
  DBL(xv, 0, 1, 2, 3, 4, 5, 6, 7);
  DBL(iv, 1, 0);
  DBL(yv, -1, -2, -3, 4, 5, 6);
  DBL(fv, 0.5, 1.5, 2.5, 3.5);
  mgopt_tensor *in[4], *out[3];
  mgopt_diag d;
  REQUIRE(p);
  in[0] = tin(p, MGOPT_DT_INT32, 3, s222, xv);
  in[1] = tin(p, MGOPT_DT_INT64, 2, s21, iv);
  in[2] = tin(p, MGOPT_DT_INT8, 2, s23, yv);
  in[3] = tin(p, MGOPT_DT_FP32, 2, s22, fv);
  CHECK_EQ_INT(run(p, in, 4, out, 3, &d), MGOPT_OK);
  if (d.status == MGOPT_OK) {
    DBL(ea, 2, 3, 4, 5);
    DBL(eb, 4, 5, 6, -1, -2, -3, 4, 5, 6);
    DBL(ec, 0.5, 3.5);
    CHECK(is(out[0], MGOPT_DT_INT32, 2, s22, ea));
    CHECK(is(out[1], MGOPT_DT_INT8, 2, s33, eb));
    CHECK(is(out[2], MGOPT_DT_FP32, 1, s2, ec));
    free_all(p, out, 3);
  }
  free_all(p, in, 4);
  mgopt_program_destroy(p);
}

/* reverse_sequence on fp32 (ONNX's tests) and bool with run-time lengths; lengths 0 and 1 change nothing. */
static void test_reverse_sequence(void) {
  const char *src =
      "main(%x: (3, 2, fp32), %l: (2, int64), %b: (2, 3, bool), %m: (2, int32)) {\n"
      "  %a: (3, 2, fp32) = reverse_sequence(x=%x, lengths=%l, seq_axis=0, batch_axis=1)\n"
      "  %c: (2, 3, bool) = reverse_sequence(x=%b, lengths=%m, seq_axis=-1, batch_axis=0)\n"
      "} -> (%a, %c)\n";
  mgopt_program *p = parse(src);
  I64S(s32, 3, 2);
  I64S(s2, 2);
  I64S(s23, 2, 3);
  DBL(xv, 0, 1, 2, 3, 4, 5);
  DBL(lv, 3, 1);
  DBL(bv, 1, 0, 0, 1, 1, 0);
  DBL(mv, 2, 0);
  mgopt_tensor *in[4], *out[2];
  mgopt_diag d;
  REQUIRE(p);
  in[0] = tin(p, MGOPT_DT_FP32, 2, s32, xv);
  in[1] = tin(p, MGOPT_DT_INT64, 1, s2, lv);
  in[2] = tin(p, MGOPT_DT_BOOL, 2, s23, bv);
  in[3] = tin(p, MGOPT_DT_INT32, 1, s2, mv);
  CHECK_EQ_INT(run(p, in, 4, out, 2, &d), MGOPT_OK);
  if (d.status == MGOPT_OK) {
    DBL(ea, 4, 1, 2, 3, 0, 5);
    DBL(ec, 0, 1, 0, 1, 1, 0);
    CHECK(is(out[0], MGOPT_DT_FP32, 2, s32, ea));
    CHECK(is(out[1], MGOPT_DT_BOOL, 2, s23, ec));
    free_all(p, out, 2);
  }
  free_all(p, in, 4);
  mgopt_program_destroy(p);
}

/* ---------------------------------------------------------------- depth_to_space, space_to_depth */

/* depth_to_space against its DCR formula on fp32 (ONNX's tests) and int16; space_to_depth inverts it. */
static void test_depth_space(void) {
  const char *src =
      "main(%x: (2, 18, 2, 3, fp32), %y: (1, 4, 1, 2, int16)) {\n"
      "  %a: (2, 2, 6, 9, fp32) = depth_to_space(x=%x, block_size=3)\n"
      "  %b: (2, 18, 2, 3, fp32) = space_to_depth(x=%a, block_size=3)\n"
      "  %c: (1, 1, 2, 4, int16) = depth_to_space(x=%y, block_size=2)\n"
      "} -> (%a, %b, %c)\n";
  mgopt_program *p = parse(src);
  I64S(sx, 2, 18, 2, 3);
  I64S(sy, 1, 4, 1, 2);
  double xv[216], yv[8];
  mgopt_tensor *in[2], *out[3];
  mgopt_diag d;
  int i;
  REQUIRE(p);
  for (i = 0; i < 216; i++) xv[i] = i * 0.5 - 7;
  for (i = 0; i < 8; i++) yv[i] = i - 300;
  in[0] = tin(p, MGOPT_DT_FP32, 4, sx, xv);
  in[1] = tin(p, MGOPT_DT_INT16, 4, sy, yv);
  CHECK_EQ_INT(run(p, in, 2, out, 3, &d), MGOPT_OK);
  if (d.status == MGOPT_OK) {
    int n, c, h, w, bi, bj, bad = 0;
    DBL(ec, -300, -298, -299, -297, -296, -294, -295, -293);
    I64S(sc, 1, 1, 2, 4);
    for (n = 0; n < 2; n++)
      for (c = 0; c < 2; c++)
        for (h = 0; h < 2; h++)
          for (w = 0; w < 3; w++)
            for (bi = 0; bi < 3; bi++)
              for (bj = 0; bj < 3; bj++) {
                int64_t o = ((n * 2 + c) * 6 + h * 3 + bi) * 9 + w * 3 + bj;
                int64_t s = ((n * 18 + (bi * 3 + bj) * 2 + c) * 2 + h) * 3 + w;
                bad += mgopt_tensor_get_f64(out[0], o) != xv[s];
              }
    CHECK_EQ_INT(bad, 0);
    CHECK(is(out[1], MGOPT_DT_FP32, 4, sx, xv));
    CHECK(is(out[2], MGOPT_DT_INT16, 4, sc, ec));
    free_all(p, out, 3);
  }
  free_all(p, in, 2);
  mgopt_program_destroy(p);
}

/* ---------------------------------------------------------------- topk */

/* topk's two outputs on fp32 (ONNX's tests: int64 indices), fp16 and int64; ties in index order. */
static void test_topk(void) {
  const char *src =
      "main(%x: (3, 4, fp32), %h: (5, fp16), %q: (2, 3, int64)) {\n"
      "  %a: (3, 3, fp32), %ai: (3, 3, int64) = topk(x=%x, k=3, output_indices_dtype=\"int64\")\n"
      "  %b: (2, fp16), %bi: (2, int32) = topk(x=%h, k=2, ascending=true)\n"
      "  %c: (1, 3, int64), %ci: (1, 3, int64) = topk(x=%q, k=1, axis=0, output_indices_dtype=\"int64\")\n"
      "} -> (%a, %ai, %b, %bi, %c, %ci)\n";
  mgopt_program *p = parse(src);
  I64S(s34, 3, 4);
  I64S(s33, 3, 3);
  I64S(s5, 5);
  I64S(s2, 2);
  I64S(s23, 2, 3);
  I64S(s13, 1, 3);
  DBL(xv, 0, 1, 2, 3, 4, 5, 6, 7, 11, 10, 9, 8);
  DBL(hv, 0.5, -1, 0.5, -1, 65504);
  DBL(qv, -5, 4000000000.0, 7, -5, -4000000000.0, 8);
  mgopt_tensor *in[3], *out[6];
  mgopt_diag d;
  REQUIRE(p);
  in[0] = tin(p, MGOPT_DT_FP32, 2, s34, xv);
  in[1] = tin(p, MGOPT_DT_FP16, 1, s5, hv);
  in[2] = tin(p, MGOPT_DT_INT64, 2, s23, qv);
  CHECK_EQ_INT(run(p, in, 3, out, 6, &d), MGOPT_OK);
  if (d.status == MGOPT_OK) {
    DBL(ea, 3, 2, 1, 7, 6, 5, 11, 10, 9);
    DBL(eai, 3, 2, 1, 3, 2, 1, 0, 1, 2);
    DBL(eb, -1, -1);
    DBL(ebi, 1, 3);
    DBL(ec, -5, 4000000000.0, 8);
    DBL(eci, 0, 0, 1);
    CHECK(is(out[0], MGOPT_DT_FP32, 2, s33, ea));
    CHECK(is(out[1], MGOPT_DT_INT64, 2, s33, eai));
    CHECK(is(out[2], MGOPT_DT_FP16, 1, s2, eb));
    CHECK(is(out[3], MGOPT_DT_INT32, 1, s2, ebi));
    CHECK(is(out[4], MGOPT_DT_INT64, 2, s13, ec));
    CHECK(is(out[5], MGOPT_DT_INT64, 2, s13, eci));
    free_all(p, out, 6);
  }
  free_all(p, in, 3);
  mgopt_program_destroy(p);
}

/* ---------------------------------------------------------------- range_1d, fill */

/* range_1d on fp32 and int32 (ONNX's tests), int64 and fp64 with run-time bounds; fill with a
   run-time shape and int32 / fp32 / int64 values (ConstantOfShape's tests). */
static void test_range_fill(void) {
  const char *src =
      "main(%s: (fp32), %e: (fp32), %t: (fp32), %is: (int32), %ie: (int32), %it: (int32), %ls: (int64), %d: (fp64),"
      " %sh: (2, int64)) {\n"
      "  %a: (?, fp32) = range_1d(end=%e, start=%s, step=%t)\n"
      "  %b: (?, int32) = range_1d(end=%ie, start=%is, step=%it)\n"
      "  %ld: (int64)* = const(val=-7)\n"
      "  %c: (?, int64) = range_1d(end=%ld, start=%ls, step=%ld)\n"
      "  %z: (fp64)* = const(val=0)\n"
      "  %f: (?, fp64) = range_1d(end=%d, start=%z, step=%d)\n"
      "  %v: (int32)* = const(val=4)\n"
      "  %g: (?, ?, int32) = fill(shape=%sh, value=%v)\n"
      "  %h: (?, ?, fp32) = fill(shape=%sh)\n"
      "} -> (%a, %b, %c, %f, %g, %h)\n";
  mgopt_program *p = parse(src);
  DBL(vs, 1);
  DBL(ve, 5.5);
  DBL(vt, 1.5);
  DBL(vis, 10);
  DBL(vie, 4);
  DBL(vit, -3);
  DBL(vls, 20);
  DBL(vd, 0.25);
  DBL(vsh, 2, 0);
  I64S(s2, 2);
  mgopt_tensor *in[9], *out[6];
  mgopt_diag d;
  REQUIRE(p);
  in[0] = tin(p, MGOPT_DT_FP32, 0, NULL, vs);
  in[1] = tin(p, MGOPT_DT_FP32, 0, NULL, ve);
  in[2] = tin(p, MGOPT_DT_FP32, 0, NULL, vt);
  in[3] = tin(p, MGOPT_DT_INT32, 0, NULL, vis);
  in[4] = tin(p, MGOPT_DT_INT32, 0, NULL, vie);
  in[5] = tin(p, MGOPT_DT_INT32, 0, NULL, vit);
  in[6] = tin(p, MGOPT_DT_INT64, 0, NULL, vls);
  in[7] = tin(p, MGOPT_DT_FP64, 0, NULL, vd);
  in[8] = tin(p, MGOPT_DT_INT64, 1, s2, vsh);
  CHECK_EQ_INT(run(p, in, 9, out, 6, &d), MGOPT_OK);
  if (d.status == MGOPT_OK) {
    I64S(n3, 3);
    I64S(n2, 2);
    I64S(n4, 4);
    I64S(n1, 1);
    I64S(s20, 2, 0);
    DBL(ea, 1, 2.5, 4);
    DBL(eb, 10, 7);
    DBL(ec, 20, 13, 6, -1);
    DBL(ef, 0);
    CHECK(is(out[0], MGOPT_DT_FP32, 1, n3, ea));
    CHECK(is(out[1], MGOPT_DT_INT32, 1, n2, eb));
    CHECK(is(out[2], MGOPT_DT_INT64, 1, n4, ec));
    CHECK(is(out[3], MGOPT_DT_FP64, 1, n1, ef));
    CHECK(is(out[4], MGOPT_DT_INT32, 2, s20, ef));
    CHECK(is(out[5], MGOPT_DT_FP32, 2, s20, ef));
    free_all(p, out, 6);
  }
  free_all(p, in, 9);
  mgopt_program_destroy(p);
}

/* ---------------------------------------------------------------- contract errors */

/* An index, a length, k or a step out of range at run time: MGOPT_ERR_CORRUPT naming the value. */
static void test_contract_errors(void) {
  static const char *const srcs[] = {
      "main(%d: (3, fp32), %i: (2, int32)) {\n"
      "  %u: (2, fp32)* = const(val=[1, 2])\n"
      "  %a: (3, fp32) = scatter_along_axis(data=%d, indices=%i, updates=%u)\n"
      "} -> (%a)\n",
      "main(%d: (3, fp32), %i: (2, int32)) {\n"
      "  %j: (2, 1, int32) = expand_dims(x=%i, axes=[1])\n"
      "  %u: (2, fp32)* = const(val=[1, 2])\n"
      "  %a: (3, fp32) = scatter_nd(data=%d, indices=%j, updates=%u)\n"
      "} -> (%a)\n",
      "main(%d: (3, fp32), %i: (2, int32)) {\n"
      "  %j: (2, 1, int32) = expand_dims(x=%i, axes=[1])\n"
      "  %a: (2, fp32) = gather_nd(x=%d, indices=%j)\n"
      "} -> (%a)\n",
      "main(%d: (3, fp32), %i: (2, int32)) {\n"
      "  %x: (3, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6]])\n"
      "  %a: (3, 2, fp32) = reverse_sequence(x=%x, lengths=%i, seq_axis=0, batch_axis=1)\n"
      "} -> (%a)\n",
  };
  I64S(s3, 3);
  I64S(s2, 2);
  DBL(dv, 1, 2, 3);
  DBL(ok, 0, -3);
  DBL(bad, 1, 4);
  DBL(bad_neg, -4, 0);
  size_t i;
  for (i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
    mgopt_program *p = parse(srcs[i]);
    mgopt_tensor *in[2], *out[1];
    mgopt_diag d;
    REQUIRE(p);
    in[0] = tin(p, MGOPT_DT_FP32, 1, s3, dv);
    in[1] = tin(p, MGOPT_DT_INT32, 1, s2, i == 3 ? dv : ok);
    CHECK_EQ_INT(run(p, in, 2, out, 1, &d), MGOPT_OK);
    free_all(p, out, 1);
    mgopt_eval_tensor_free(p, in[1]);
    in[1] = tin(p, MGOPT_DT_INT32, 1, s2, bad);
    CHECK_EQ_INT(run(p, in, 2, out, 1, &d), MGOPT_ERR_CORRUPT);
    CHECK(strstr(d.msg, "4 is outside") != NULL);
    CHECK(out[0] == NULL);
    mgopt_eval_tensor_free(p, in[1]);
    in[1] = tin(p, MGOPT_DT_INT32, 1, s2, bad_neg);
    CHECK_EQ_INT(run(p, in, 2, out, 1, &d), MGOPT_ERR_CORRUPT);
    free_all(p, in, 2);
    mgopt_program_destroy(p);
  }
  {
    const char *src =
        "main(%x: (s, fp32), %t: (int32)) {\n"
        "  %a: (2, fp32), %b: (2, int32) = topk(x=%x, k=2)\n"
        "  %z: (int32)* = const(val=0)\n"
        "  %r: (?, int32) = range_1d(end=%t, start=%z, step=%t)\n"
        "} -> (%a, %r)\n";
    mgopt_program *p = parse(src);
    I64S(s1, 1);
    DBL(one, 1);
    DBL(zero, 0);
    mgopt_tensor *in[2], *out[2];
    mgopt_diag d;
    REQUIRE(p);
    in[0] = tin(p, MGOPT_DT_FP32, 1, s1, one); /* k 2 of an axis of 1 */
    in[1] = tin(p, MGOPT_DT_INT32, 0, NULL, one);
    CHECK_EQ_INT(run(p, in, 2, out, 2, &d), MGOPT_ERR_CORRUPT);
    CHECK(strstr(d.msg, "k 2 is outside [0, 1]") != NULL);
    mgopt_eval_tensor_free(p, in[0]);
    in[0] = tin(p, MGOPT_DT_FP32, 1, s2, dv);
    mgopt_eval_tensor_free(p, in[1]);
    in[1] = tin(p, MGOPT_DT_INT32, 0, NULL, zero); /* a step of 0 */
    CHECK_EQ_INT(run(p, in, 2, out, 2, &d), MGOPT_ERR_CORRUPT);
    CHECK(strstr(d.msg, "step") != NULL);
    free_all(p, in, 2);
    mgopt_program_destroy(p);
  }
}

static const test_case tests[] = {
    TEST(test_scatter_along_axis_dtypes), TEST(test_scatter_contract), TEST(test_scatter_nd),
    TEST(test_gather_nd), TEST(test_reverse_sequence), TEST(test_depth_space), TEST(test_topk),
    TEST(test_range_fill), TEST(test_contract_errors),
};
TEST_MAIN(tests)
