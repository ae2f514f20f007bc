/* tests/unit/test_onnx_eval.c — mgopt_onnx_eval_op: the ONNX kernels against hand-computed values, late mapping, errors, memory. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <stdlib.h>
#include <math.h>

/* ---------------------------------------------------------------- fixtures */

/* Counts live bytes through the allocator hook: every run frees what it makes. */
typedef struct counting {
  long long live, blocks;
} counting;

static void *counting_realloc(void *ctx, void *ptr, size_t old, size_t size) {
  counting *c = (counting *)ctx;
  void *q;
  if (size == 0) {
    if (ptr) {
      c->live -= (long long)old;
      c->blocks--;
    }
    free(ptr);
    return NULL;
  }
  q = realloc(ptr, size);
  if (!q) return NULL;
  c->live += (long long)size - (long long)(ptr ? old : 0);
  if (!ptr) c->blocks++;
  return q;
}

/* A program read from .mil text, or written as ONNX at `opset` and read
   back (opset > 0): the import then decides what stays opaque. buf keeps
   the bytes the program borrows (free it after the program). */
static mgopt_program *load(const char *src, int64_t opset, const mgopt_allocator *a, mgopt_buf *buf) {
  mgopt_program *p = NULL, *q = NULL;
  mgopt_diag d;
  mgopt_parse_options po;
  mgopt_onnx_export_options eo;
  mgopt_onnx_read_options ro;
  mgopt_onnx_model *m = NULL;
  memset(&po, 0, sizeof po);
  po.alloc = a;
  memset(buf, 0, sizeof *buf);
  if (mgopt_mil_parse(src, strlen(src), &po, &p, &d) != MGOPT_OK) {
    printf("parse error %d:%d: %s\n", d.line, d.col, d.msg);
    return NULL;
  }
  if (opset <= 0) return p;
  memset(&eo, 0, sizeof eo);
  eo.opset = opset;
  memset(&ro, 0, sizeof ro);
  ro.alloc = a;
  if (mgopt_onnx_export(p, &eo, &m, &d) != MGOPT_OK || mgopt_onnx_write(m, NULL, buf, NULL, &d) != MGOPT_OK ||
      mgopt_onnx_load(buf->data, buf->len, &ro, &q, &d) != MGOPT_OK) {
    printf("onnx round trip: %s\n", d.msg);
    q = NULL;
  }
  mgopt_program_destroy(p);
  return q;
}

static mgopt_tensor *mk(mgopt_program *p, mgopt_dtype dt, int32_t rank, const int64_t *shape, const double *v) {
  mgopt_tensor *t = mgopt_eval_tensor_new(p, dt, rank, shape);
  int64_t i;
  for (i = 0; t && v && i < t->numel; i++) mgopt_tensor_set_f64(t, i, v[i]);
  return t;
}

static mgopt_status run(mgopt_program *p, mgopt_tensor **in, int32_t nin, mgopt_tensor **out, int32_t nout,
                        mgopt_diag *d) {
  mgopt_eval_options o;
  memset(&o, 0, sizeof o);
  o.op_fn = mgopt_onnx_eval_op;
  return mgopt_eval(p, NULL, in, nin, out, nout, &o, d);
}

/* Every element of t within 1e-6 (relative) of want; NaN matches NaN. */
static int near_all(const mgopt_tensor *t, const double *want, int64_t n) {
  int64_t i;
  if (!t || t->numel != n) {
    printf("  %lld elements, want %lld\n", t ? (long long)t->numel : -1LL, (long long)n);
    return 0;
  }
  for (i = 0; i < n; i++) {
    double g = mgopt_tensor_get_f64(t, i), w = want[i];
    if (w != w ? g == g : fabs(g - w) > 1e-6 * (1.0 + fabs(w))) {
      printf("  element %lld: got %.9g, want %.9g\n", (long long)i, g, w);
      return 0;
    }
  }
  return 1;
}

/* Runs a one-output program on inputs and checks its output against want
   (dtype dt, n elements); frees everything. */
static int check1(mgopt_program *p, mgopt_tensor **in, int32_t nin, mgopt_dtype dt, const double *want, int64_t n) {
  mgopt_tensor *out[1] = {NULL};
  mgopt_diag d;
  int32_t i;
  int ok = run(p, in, nin, out, 1, &d) == MGOPT_OK;
  if (!ok) printf("  eval: %s\n", d.msg);
  else ok = out[0]->dtype == dt && near_all(out[0], want, n);
  if (out[0]) mgopt_eval_tensor_free(p, out[0]);
  for (i = 0; i < nin; i++) mgopt_eval_tensor_free(p, in[i]);
  return ok;
}

/* ---------------------------------------------------------------- softmax family */

static void test_log_softmax(void) {
  /* opset 13: over the last axis */
  const char *src =
      "main(%x: (2, 3, fp32)) {\n"
      "  %y: (2, 3, fp32) = onnx::LogSoftmax(in0=%x)\n"
      "} -> (%y)\n";
  /* opset 11: axis 0 of a (2, 3) input coerces it to one row of 6 */
  const char *src11 =
      "main(%x: (2, 3, fp32)) {\n"
      "  %y: (2, 3, fp32) = onnx::LogSoftmax(in0=%x, axis=0)\n"
      "} -> (%y)\n";
  static const double x[6] = {1, 2, 3, 1, 1, 1};
  static const double want[6] = {-2.4076059644443806, -1.4076059644443804, -0.4076059644443804,
                                 -1.0986122886681098, -1.0986122886681098, -1.0986122886681098};
  static const double want11[6] = {-2.6466950823946482, -1.6466950823946482, -0.6466950823946483,
                                   -2.6466950823946482, -2.6466950823946482, -2.6466950823946482};
  static const double xnan[6] = {1, NAN, 3, 1, 1, 1};
  static const double wnan[6] = {NAN, NAN, NAN, -1.0986122886681098, -1.0986122886681098, -1.0986122886681098};
  int64_t s[2] = {2, 3};
  mgopt_buf buf;
  mgopt_program *p = load(src, 0, NULL, &buf);
  mgopt_tensor *in[1];
  REQUIRE(p);
  in[0] = mk(p, MGOPT_DT_FP32, 2, s, x);
  CHECK(check1(p, in, 1, MGOPT_DT_FP32, want, 6));
  /* NaN propagates through its row only */
  in[0] = mk(p, MGOPT_DT_FP32, 2, s, xnan);
  CHECK(check1(p, in, 1, MGOPT_DT_FP32, wnan, 6));
  mgopt_program_destroy(p);
  p = load(src11, 11, NULL, &buf);
  REQUIRE(p);
  in[0] = mk(p, MGOPT_DT_FP32, 2, s, x);
  CHECK(check1(p, in, 1, MGOPT_DT_FP32, want11, 6));
  mgopt_program_destroy(p);
  mgopt_buf_free(&buf);
}

/* ---------------------------------------------------------------- losses */

static void test_nll_loss(void) {
  /* log-probabilities (2, 3), target [2, -1] with ignore_index -1, weights [1, 2, 3]:
     the first row gives -(-3) * 3 = 9, the second is ignored (loss 0, weight 0) */
  const char *src =
      "main(%x: (2, 3, fp32), %t: (2, int64), %w: (3, fp32)) {\n"
      "  %none: (2, fp32) = onnx::NegativeLogLikelihoodLoss(in0=%x, in1=%t, in2=%w, reduction=\"none\", ignore_index=-1)\n"
      "  %sum: (fp32) = onnx::NegativeLogLikelihoodLoss(in0=%x, in1=%t, in2=%w, reduction=\"sum\", ignore_index=-1)\n"
      "  %mean: (fp32) = onnx::NegativeLogLikelihoodLoss(in0=%x, in1=%t, in2=%w, ignore_index=-1)\n"
      "} -> (%none, %sum, %mean)\n";
  /* no weights, no ignore_index: the mean over every element */
  const char *plain =
      "main(%x: (2, 3, fp32), %t: (2, int64)) {\n"
      "  %mean: (fp32) = onnx::NegativeLogLikelihoodLoss(in0=%x, in1=%t)\n"
      "} -> (%mean)\n";
  static const double x[6] = {-1, -2, -3, -0.5, -1.5, -2.5}, t[2] = {2, -1}, w[3] = {1, 2, 3};
  static const double none[2] = {9, 0}, sum[1] = {9}, mean[1] = {3}, t2[2] = {2, 1}, plain2[1] = {(3.0 + 1.5) / 2};
  static const double nan1[1] = {NAN}, zero1[1] = {0};
  int64_t s[2] = {2, 3};
  counting c = {0, 0};
  mgopt_allocator a;
  mgopt_buf buf;
  mgopt_program *p;
  mgopt_tensor *in[3], *out[3] = {NULL, NULL, NULL};
  mgopt_diag d;
  int i;
  a.realloc = counting_realloc;
  a.ctx = &c;
  p = load(plain, 0, &a, &buf);
  REQUIRE(p);
  in[0] = mk(p, MGOPT_DT_FP32, 2, s, x);
  in[1] = mk(p, MGOPT_DT_INT64, 1, s, t);
  /* target -1 without ignore_index is outside [0, 3): an error, nothing left allocated */
  CHECK_EQ_INT(run(p, in, 2, out, 1, &d), MGOPT_ERR_CORRUPT);
  CHECK(out[0] == NULL);
  mgopt_eval_tensor_free(p, in[1]);
  in[1] = mk(p, MGOPT_DT_INT64, 1, s, t2);
  CHECK(check1(p, in, 2, MGOPT_DT_FP32, plain2, 1));
  mgopt_program_destroy(p);
  p = load(src, 0, &a, &buf);
  REQUIRE(p);
  in[0] = mk(p, MGOPT_DT_FP32, 2, s, x);
  in[1] = mk(p, MGOPT_DT_INT64, 1, s, t);
  in[2] = mk(p, MGOPT_DT_FP32, 1, s + 1, w);
  CHECK_EQ_INT(run(p, in, 3, out, 3, &d), MGOPT_OK);
  if (d.status == MGOPT_OK) {
    CHECK(near_all(out[0], none, 2));
    CHECK(near_all(out[1], sum, 1));
    CHECK(near_all(out[2], mean, 1));
    for (i = 0; i < 3; i++) mgopt_eval_tensor_free(p, out[i]);
  }
  /* every target ignored: the sum is 0, the mean 0 / 0 */
  mgopt_tensor_set_f64(in[1], 0, -1.0);
  CHECK_EQ_INT(run(p, in, 3, out, 3, &d), MGOPT_OK);
  if (d.status == MGOPT_OK) {
    CHECK(near_all(out[1], zero1, 1));
    CHECK(near_all(out[2], nan1, 1));
    for (i = 0; i < 3; i++) mgopt_eval_tensor_free(p, out[i]);
  }
  for (i = 0; i < 3; i++) mgopt_eval_tensor_free(p, in[i]);
  mgopt_program_destroy(p);
  CHECK_EQ_INT(c.live, 0);
}

static void test_sce_loss(void) {
  /* scores [[1, 2, 3], [1, 1, 1]], labels [2, 0]: the mean of -log_softmax at them */
  const char *src =
      "main(%x: (2, 3, fp32), %t: (2, int32)) {\n"
      "  %loss: (fp32), %lp: (2, 3, fp32) = onnx::SoftmaxCrossEntropyLoss(in0=%x, in1=%t)\n"
      "  %ii: (2, fp32) = onnx::SoftmaxCrossEntropyLoss(in0=%x, in1=%t, reduction=\"none\", ignore_index=0)\n"
      "} -> (%loss, %lp, %ii)\n";
  static const double x[6] = {1, 2, 3, 1, 1, 1}, t[2] = {2, 0};
  static const double loss[1] = {0.7531091265562451}, ii[2] = {0.4076059644443804, 0};
  static const double lp[6] = {-2.4076059644443806, -1.4076059644443804, -0.4076059644443804,
                               -1.0986122886681098, -1.0986122886681098, -1.0986122886681098};
  int64_t s[2] = {2, 3};
  mgopt_buf buf;
  mgopt_program *p = load(src, 0, NULL, &buf);
  mgopt_tensor *in[2], *out[3] = {NULL, NULL, NULL};
  mgopt_diag d;
  int i;
  REQUIRE(p);
  in[0] = mk(p, MGOPT_DT_FP32, 2, s, x);
  in[1] = mk(p, MGOPT_DT_INT32, 1, s, t);
  CHECK_EQ_INT(run(p, in, 2, out, 3, &d), MGOPT_OK);
  if (d.status == MGOPT_OK) {
    CHECK(near_all(out[0], loss, 1));
    CHECK(near_all(out[1], lp, 6));
    CHECK(near_all(out[2], ii, 2));
    for (i = 0; i < 3; i++) mgopt_eval_tensor_free(p, out[i]);
  }
  for (i = 0; i < 2; i++) mgopt_eval_tensor_free(p, in[i]);
  mgopt_program_destroy(p);
}

/* ---------------------------------------------------------------- late mapping and errors */

static void test_unknown_op(void) {
  const char *src =
      "main(%x: (2, fp32)) {\n"
      "  %y: (2, fp32) = onnx::NoSuchOp(in0=%x)\n"
      "  %z: (2, fp32) = relu(x=%y)\n"
      "} -> (%z)\n";
  counting c = {0, 0};
  mgopt_allocator a;
  mgopt_buf buf;
  mgopt_program *p;
  mgopt_tensor *in[1], *out[1] = {NULL};
  mgopt_diag d;
  int64_t s[1] = {2};
  a.realloc = counting_realloc;
  a.ctx = &c;
  p = load(src, 0, &a, &buf);
  REQUIRE(p);
  in[0] = mk(p, MGOPT_DT_FP32, 1, s, NULL);
  CHECK(!mgopt_onnx_eval_covers(p, mgopt_program_function(p, "main")->body->first));
  CHECK_EQ_INT(run(p, in, 1, out, 1, &d), MGOPT_ERR_UNSUPPORTED);
  CHECK(strstr(d.msg, "cannot evaluate onnx::NoSuchOp") != NULL);
  CHECK(out[0] == NULL);
  mgopt_eval_tensor_free(p, in[0]);
  mgopt_program_destroy(p);
  CHECK_EQ_INT(c.live, 0);
}

static void test_late_reshape(void) {
  /* the shape is a graph input: the import leaves the Reshape opaque */
  const char *src =
      "main(%x: (2, 3, fp32), %s: (2, int64)) {\n"
      "  %y: (?, ?, fp32) = onnx::Reshape(in0=%x, in1=%s)\n"
      "} -> (%y)\n";
  static const double x[6] = {1, 2, 3, 4, 5, 6}, shape[2] = {3, -1}, bad[2] = {4, -1};
  int64_t s23[2] = {2, 3}, s2[1] = {2};
  counting c = {0, 0};
  mgopt_allocator a;
  mgopt_buf buf;
  mgopt_program *p;
  mgopt_tensor *in[2], *out[1] = {NULL};
  mgopt_diag d;
  a.realloc = counting_realloc;
  a.ctx = &c;
  p = load(src, 17, &a, &buf);
  REQUIRE(p);
  REQUIRE(strcmp(mgopt_program_function(p, "main")->body->last->type, "onnx::Reshape") == 0);
  CHECK(mgopt_onnx_eval_covers(p, mgopt_program_function(p, "main")->body->last));
  in[0] = mk(p, MGOPT_DT_FP32, 2, s23, x);
  in[1] = mk(p, MGOPT_DT_INT64, 1, s2, shape);
  CHECK_EQ_INT(run(p, in, 2, out, 1, &d), MGOPT_OK);
  if (out[0]) {
    CHECK(out[0]->rank == 2 && out[0]->shape[0] == 3 && out[0]->shape[1] == 2);
    CHECK(near_all(out[0], x, 6));
    mgopt_eval_tensor_free(p, out[0]);
  }
  /* 6 elements do not make 4 rows: an error, nothing left allocated */
  mgopt_tensor_set_f64(in[1], 0, bad[0]);
  out[0] = NULL;
  CHECK(run(p, in, 2, out, 1, &d) != MGOPT_OK);
  CHECK(out[0] == NULL);
  mgopt_eval_tensor_free(p, in[0]);
  mgopt_eval_tensor_free(p, in[1]);
  mgopt_program_destroy(p);
  mgopt_buf_free(&buf);
  CHECK_EQ_INT(c.live, 0);
}

static void test_late_cumsum(void) {
  /* the axis is a graph input */
  const char *src =
      "main(%x: (2, 3, fp32), %axis: (int32)) {\n"
      "  %y: (2, 3, fp32) = onnx::CumSum(in0=%x, in1=%axis)\n"
      "  %r: (2, 3, fp32) = onnx::CumSum(in0=%x, in1=%axis, reverse=1, exclusive=1)\n"
      "} -> (%y, %r)\n";
  static const double x[6] = {1, 2, 3, 4, 5, 6};
  static const double ax0[6] = {1, 2, 3, 5, 7, 9}, ax1[6] = {1, 3, 6, 4, 9, 15};
  static const double rev1[6] = {5, 3, 0, 11, 6, 0};
  int64_t s23[2] = {2, 3};
  double axis;
  mgopt_buf buf;
  mgopt_program *p = load(src, 17, NULL, &buf);
  mgopt_tensor *in[2], *out[2] = {NULL, NULL};
  mgopt_diag d;
  REQUIRE(p);
  REQUIRE(strcmp(mgopt_program_function(p, "main")->body->last->type, "onnx::CumSum") == 0);
  in[0] = mk(p, MGOPT_DT_FP32, 2, s23, x);
  for (axis = 0; axis >= -1; axis -= 1) {
    double av[1];
    av[0] = axis;
    in[1] = mk(p, MGOPT_DT_INT32, 0, NULL, av);
    CHECK_EQ_INT(run(p, in, 2, out, 2, &d), MGOPT_OK);
    if (d.status == MGOPT_OK) {
      CHECK(near_all(out[0], axis == 0 ? ax0 : ax1, 6));
      if (axis != 0) CHECK(near_all(out[1], rev1, 6));
      mgopt_eval_tensor_free(p, out[0]);
      mgopt_eval_tensor_free(p, out[1]);
    }
    mgopt_eval_tensor_free(p, in[1]);
  }
  mgopt_eval_tensor_free(p, in[0]);
  mgopt_program_destroy(p);
  mgopt_buf_free(&buf);
}

/* ---------------------------------------------------------------- the other kernels */

/* One op of one output: builds "main(args) { %y: (?..) = OP } -> (%y)" from
   src, runs it on inputs made from specs, checks dtype, shape and values. */
typedef struct spec {
  mgopt_dtype dt;
  int32_t rank;
  int64_t shape[4];
  double v[32];
} spec;

static int one(const char *src, int32_t nin, const spec *in, mgopt_dtype dt, int32_t rank, const int64_t *shape,
               const double *want) {
  mgopt_buf buf;
  mgopt_program *p = load(src, 0, NULL, &buf);
  mgopt_tensor *t[4], *out[1] = {NULL};
  mgopt_diag d;
  int32_t i;
  int64_t n = 1;
  int ok;
  if (!p) return 0;
  for (i = 0; i < nin; i++) t[i] = mk(p, in[i].dt, in[i].rank, in[i].shape, in[i].v);
  ok = run(p, t, nin, out, 1, &d) == MGOPT_OK;
  if (!ok) printf("  eval: %s\n", d.msg);
  if (ok && (out[0]->dtype != dt || out[0]->rank != rank)) {
    printf("  got %s rank %d\n", mgopt_dtype_name((mgopt_dtype)out[0]->dtype), (int)out[0]->rank);
    ok = 0;
  }
  for (i = 0; ok && i < rank; i++) {
    if (out[0]->shape[i] != shape[i]) ok = 0;
    n *= shape[i];
  }
  if (ok) ok = near_all(out[0], want, n);
  if (out[0]) mgopt_eval_tensor_free(p, out[0]);
  for (i = 0; i < nin; i++) mgopt_eval_tensor_free(p, t[i]);
  mgopt_program_destroy(p);
  return ok;
}

/* The status of running a one-output program (nothing may be left set). */
static mgopt_status fails(const char *src, int32_t nin, const spec *in) {
  counting c = {0, 0};
  mgopt_allocator a;
  mgopt_buf buf;
  mgopt_program *p;
  mgopt_tensor *t[4], *out[1] = {NULL};
  mgopt_diag d;
  mgopt_status s;
  int32_t i;
  a.realloc = counting_realloc;
  a.ctx = &c;
  p = load(src, 0, &a, &buf);
  if (!p) return MGOPT_OK;
  for (i = 0; i < nin; i++) t[i] = mk(p, in[i].dt, in[i].rank, in[i].shape, in[i].v);
  s = run(p, t, nin, out, 1, &d);
  if (out[0]) {
    mgopt_eval_tensor_free(p, out[0]);
    s = MGOPT_OK;
  }
  for (i = 0; i < nin; i++) mgopt_eval_tensor_free(p, t[i]);
  mgopt_program_destroy(p);
  if (c.live != 0) s = MGOPT_OK; /* a leak */
  return s;
}

static void test_nary(void) {
  spec in[3] = {{MGOPT_DT_FP32, 1, {3}, {1, 2, 3}}, {MGOPT_DT_FP32, 2, {2, 1}, {10, 20}}, {MGOPT_DT_FP32, 0, {0}, {2.5}}};
  spec nan[2] = {{MGOPT_DT_FP32, 1, {2}, {1, NAN}}, {MGOPT_DT_FP32, 1, {2}, {2, 2}}};
  spec ints[2] = {{MGOPT_DT_INT32, 1, {2}, {-1, 5}}, {MGOPT_DT_INT32, 1, {1}, {3}}};
  int64_t s23[2] = {2, 3}, s2[1] = {2};
  static const double sum[6] = {13.5, 14.5, 15.5, 23.5, 24.5, 25.5}, mean[6] = {13.5 / 3, 14.5 / 3, 15.5 / 3, 23.5 / 3, 24.5 / 3, 25.5 / 3};
  static const double max[2] = {2, NAN}, imax[2] = {3, 5}, imin[2] = {-1, 3};
  CHECK(one("main(%a: (3, fp32), %b: (2, 1, fp32), %c: (fp32)) {\n"
            "  %y: (2, 3, fp32) = onnx::Sum(in0=%a, in1=%b, in2=%c)\n} -> (%y)\n",
            3, in, MGOPT_DT_FP32, 2, s23, sum));
  CHECK(one("main(%a: (3, fp32), %b: (2, 1, fp32), %c: (fp32)) {\n"
            "  %y: (2, 3, fp32) = onnx::Mean(in0=%a, in1=%b, in2=%c)\n} -> (%y)\n",
            3, in, MGOPT_DT_FP32, 2, s23, mean));
  /* NaN propagates through Max */
  CHECK(one("main(%a: (2, fp32), %b: (2, fp32)) {\n  %y: (2, fp32) = onnx::Max(in0=%a, in1=%b)\n} -> (%y)\n", 2,
            nan, MGOPT_DT_FP32, 1, s2, max));
  CHECK(one("main(%a: (2, int32), %b: (1, int32)) {\n  %y: (2, int32) = onnx::Max(in0=%a, in1=%b)\n} -> (%y)\n", 2,
            ints, MGOPT_DT_INT32, 1, s2, imax));
  CHECK(one("main(%a: (2, int32), %b: (1, int32)) {\n  %y: (2, int32) = onnx::Min(in0=%a, in1=%b)\n} -> (%y)\n", 2,
            ints, MGOPT_DT_INT32, 1, s2, imin));
}

static void test_mod_bitshift(void) {
  spec f[2] = {{MGOPT_DT_FP32, 1, {2}, {-4, 5.5}}, {MGOPT_DT_FP32, 1, {2}, {3, -2}}};
  spec i[2] = {{MGOPT_DT_INT32, 1, {2}, {-4, 4}}, {MGOPT_DT_INT32, 1, {2}, {3, -3}}};
  spec z[2] = {{MGOPT_DT_INT32, 1, {2}, {-4, 4}}, {MGOPT_DT_INT32, 1, {2}, {3, 0}}};
  spec u[2] = {{MGOPT_DT_UINT8, 1, {4}, {1, 255, 1, 16}}, {MGOPT_DT_UINT8, 1, {4}, {3, 1, 8, 2}}};
  int64_t s2[1] = {2}, s4[1] = {4};
  static const double wf[2] = {-1, 1.5}, wfmod[2] = {-1, 1}, wpy[2] = {2, -2}, wl[4] = {8, 254, 0, 64};
  static const double wr[4] = {0, 127, 0, 4};
  CHECK(one("main(%a: (2, fp32), %b: (2, fp32)) {\n  %y: (2, fp32) = onnx::Mod(in0=%a, in1=%b, fmod=1)\n} -> (%y)\n",
            2, f, MGOPT_DT_FP32, 1, s2, wf));
  CHECK(one("main(%a: (2, int32), %b: (2, int32)) {\n  %y: (2, int32) = onnx::Mod(in0=%a, in1=%b, fmod=1)\n} -> (%y)\n",
            2, i, MGOPT_DT_INT32, 1, s2, wfmod));
  CHECK(one("main(%a: (2, int32), %b: (2, int32)) {\n  %y: (2, int32) = onnx::Mod(in0=%a, in1=%b)\n} -> (%y)\n", 2, i,
            MGOPT_DT_INT32, 1, s2, wpy));
  /* an integer modulo by zero is an error */
  CHECK_EQ_INT(fails("main(%a: (2, int32), %b: (2, int32)) {\n  %y: (2, int32) = onnx::Mod(in0=%a, in1=%b, fmod=1)\n} -> (%y)\n",
                     2, z),
               MGOPT_ERR_INVALID_ARG);
  /* a shift of the width or more gives 0 */
  CHECK(one("main(%a: (4, uint8), %b: (4, uint8)) {\n  %y: (4, uint8) = onnx::BitShift(in0=%a, in1=%b, direction=\"LEFT\")\n} -> (%y)\n",
            2, u, MGOPT_DT_UINT8, 1, s4, wl));
  CHECK(one("main(%a: (4, uint8), %b: (4, uint8)) {\n  %y: (4, uint8) = onnx::BitShift(in0=%a, in1=%b, direction=\"RIGHT\")\n} -> (%y)\n",
            2, u, MGOPT_DT_UINT8, 1, s4, wr));
}

static void test_unary(void) {
  spec x[1] = {{MGOPT_DT_FP32, 1, {3}, {-1, 2, 0.3}}};
  spec r[1] = {{MGOPT_DT_FP32, 1, {5}, {0.5, 1.5, 2.5, -0.5, -1.5}}};
  spec inf[1] = {{MGOPT_DT_FP32, 1, {4}, {HUGE_VAL, -HUGE_VAL, 1, NAN}}};
  spec ac[1] = {{MGOPT_DT_FP64, 1, {2}, {2, 0.5}}};
  spec ni[1] = {{MGOPT_DT_INT8, 1, {3}, {-128, 5, 0}}};
  int64_t s3[1] = {3}, s5[1] = {5}, s4[1] = {4}, s2[1] = {2};
  static const double selu[3] = {-1.1113307412864781, 2.1014020442962646, 0.31521031916977194};
  static const double celu[3] = {-0.63212055882855767, 2, 0.3}, shrink[3] = {-0.8, 1.8, 0};
  static const double hswish[3] = {-1.0 / 3, 2 * (2.0 / 6 + 0.5), 0.3 * (0.3 / 6 + 0.5)};
  static const double round[5] = {0, 2, 2, -0.0, -2}, isinf[4] = {1, 1, 0, 0}, ispos[4] = {1, 0, 0, 0};
  static const double isnan[4] = {0, 0, 0, 1}, acosh[2] = {1.3169578969248166, NAN}, neg[3] = {-128, -5, 0};
  CHECK(one("main(%x: (3, fp32)) {\n  %y: (3, fp32) = onnx::Selu(in0=%x)\n} -> (%y)\n", 1, x, MGOPT_DT_FP32, 1, s3, selu));
  CHECK(one("main(%x: (3, fp32)) {\n  %y: (3, fp32) = onnx::Celu(in0=%x)\n} -> (%y)\n", 1, x, MGOPT_DT_FP32, 1, s3, celu));
  CHECK(one("main(%x: (3, fp32)) {\n  %y: (3, fp32) = onnx::Shrink(in0=%x, bias=0.2)\n} -> (%y)\n", 1, x,
            MGOPT_DT_FP32, 1, s3, shrink));
  CHECK(one("main(%x: (3, fp32)) {\n  %y: (3, fp32) = onnx::HardSwish(in0=%x)\n} -> (%y)\n", 1, x, MGOPT_DT_FP32, 1,
            s3, hswish));
  /* halves round to even */
  CHECK(one("main(%x: (5, fp32)) {\n  %y: (5, fp32) = onnx::Round(in0=%x)\n} -> (%y)\n", 1, r, MGOPT_DT_FP32, 1, s5,
            round));
  CHECK(one("main(%x: (4, fp32)) {\n  %y: (4, bool) = onnx::IsInf(in0=%x)\n} -> (%y)\n", 1, inf, MGOPT_DT_BOOL, 1, s4,
            isinf));
  CHECK(one("main(%x: (4, fp32)) {\n  %y: (4, bool) = onnx::IsInf(in0=%x, detect_negative=0)\n} -> (%y)\n", 1, inf,
            MGOPT_DT_BOOL, 1, s4, ispos));
  CHECK(one("main(%x: (4, fp32)) {\n  %y: (4, bool) = onnx::IsNaN(in0=%x)\n} -> (%y)\n", 1, inf, MGOPT_DT_BOOL, 1, s4,
            isnan));
  /* acosh below 1 is NaN */
  CHECK(one("main(%x: (2, fp64)) {\n  %y: (2, fp64) = onnx::Acosh(in0=%x)\n} -> (%y)\n", 1, ac, MGOPT_DT_FP64, 1, s2,
            acosh));
  /* integers wrap: -(-128) is -128 in int8 */
  CHECK(one("main(%x: (3, int8)) {\n  %y: (3, int8) = onnx::Neg(in0=%x)\n} -> (%y)\n", 1, ni, MGOPT_DT_INT8, 1, s3,
            neg));
}

static void test_cast_like(void) {
  spec x[2] = {{MGOPT_DT_FP32, 1, {3}, {1.7, -1.7, NAN}}, {MGOPT_DT_INT32, 1, {1}, {0}}};
  spec b[2] = {{MGOPT_DT_FP32, 1, {3}, {1.7, 0, NAN}}, {MGOPT_DT_BOOL, 1, {1}, {0}}};
  int64_t s3[1] = {3};
  static const double wi[3] = {1, -1, 0}, wb[3] = {1, 0, 1};
  /* truncation toward zero; NaN to an integer saturates to 0; NaN to bool is true */
  CHECK(one("main(%x: (3, fp32), %l: (1, int32)) {\n  %y: (3, int32) = onnx::CastLike(in0=%x, in1=%l)\n} -> (%y)\n", 2,
            x, MGOPT_DT_INT32, 1, s3, wi));
  CHECK(one("main(%x: (3, fp32), %l: (1, bool)) {\n  %y: (3, bool) = onnx::CastLike(in0=%x, in1=%l)\n} -> (%y)\n", 2, b,
            MGOPT_DT_BOOL, 1, s3, wb));
}

/* 4-bit integers (opset 21): to them a value saturates, a real rounded half
   to even after the clip; from them every value is exact; NaN is declined */
static void test_cast_4bit(void) {
  spec f[1] = {{MGOPT_DT_FP32, 1, {10}, {-9.5, -8.5, -2.5, -1.5, 0.5, 1.5, 2.5, 6.6, 7.5, 100}}};
  spec fu[1] = {{MGOPT_DT_FP32, 1, {6}, {-3, 0.5, 1.5, 14.5, 15.2, 99}}};
  spec i[1] = {{MGOPT_DT_INT32, 1, {6}, {-100, -9, -8, 7, 8, 100}}};
  spec i4[1] = {{MGOPT_DT_INT4X, 1, {5}, {-8, -1, 0, 3, 7}}};
  spec u4[1] = {{MGOPT_DT_UINT4X, 1, {3}, {0, 15, 9}}};
  spec nan[1] = {{MGOPT_DT_FP32, 1, {2}, {1, NAN}}};
  int64_t s10[1] = {10}, s6[1] = {6}, s5[1] = {5}, s3[1] = {3};
  static const double wf[10] = {-8, -8, -2, -2, 0, 2, 2, 7, 7, 7}, wfu[6] = {0, 0, 2, 14, 15, 15};
  static const double wi[6] = {-8, -8, -8, 7, 7, 7}, wi4[5] = {-8, -1, 0, 3, 7}, wu4[3] = {0, 15, 9};
  static const double wu[5] = {0, 0, 0, 3, 7};
  CHECK(one("main(%x: (10, fp32)) {\n  %y: (10, int4x) = onnx::Cast(in0=%x, to=22)\n} -> (%y)\n", 1, f, MGOPT_DT_INT4X, 1,
            s10, wf));
  CHECK(one("main(%x: (6, fp32)) {\n  %y: (6, uint4x) = onnx::Cast(in0=%x, to=21)\n} -> (%y)\n", 1, fu, MGOPT_DT_UINT4X, 1,
            s6, wfu));
  CHECK(one("main(%x: (6, int32)) {\n  %y: (6, int4x) = onnx::Cast(in0=%x, to=22)\n} -> (%y)\n", 1, i, MGOPT_DT_INT4X, 1,
            s6, wi));
  CHECK(one("main(%x: (5, int4x)) {\n  %y: (5, fp32) = onnx::Cast(in0=%x, to=1)\n} -> (%y)\n", 1, i4, MGOPT_DT_FP32, 1, s5,
            wi4));
  CHECK(one("main(%x: (3, uint4x)) {\n  %y: (3, int32) = onnx::Cast(in0=%x, to=6)\n} -> (%y)\n", 1, u4, MGOPT_DT_INT32, 1,
            s3, wu4));
  CHECK(one("main(%x: (5, int4x)) {\n  %y: (5, uint4x) = onnx::Cast(in0=%x, to=21)\n} -> (%y)\n", 1, i4, MGOPT_DT_UINT4X, 1,
            s5, wu));
  CHECK(fails("main(%x: (2, fp32)) {\n  %y: (2, int4x) = onnx::Cast(in0=%x, to=22)\n} -> (%y)\n", 1, nan) != MGOPT_OK);
}

static void test_shapes(void) {
  spec x[1] = {{MGOPT_DT_FP32, 3, {2, 3, 4}, {0}}};
  spec m[2] = {{MGOPT_DT_FP32, 2, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}, {MGOPT_DT_INT64, 0, {0}, {1}}};
  spec e[1] = {{MGOPT_DT_FP32, 2, {2, 3}, {0}}};
  spec cmp[2] = {{MGOPT_DT_FP32, 2, {3, 2}, {1, 2, 3, 4, 5, 6}}, {MGOPT_DT_BOOL, 1, {3}, {0, 1, 1}}};
  spec none[2] = {{MGOPT_DT_FP32, 2, {3, 2}, {1, 2, 3, 4, 5, 6}}, {MGOPT_DT_BOOL, 1, {3}, {0, 0, 0}}};
  spec ex[2] = {{MGOPT_DT_INT32, 2, {3, 1}, {1, 2, 3}}, {MGOPT_DT_INT64, 1, {3}, {2, 1, 2}}};
  int64_t s0[1] = {0}, s2[1] = {2}, s33[2] = {3, 3}, s23[2] = {2, 3}, s22[2] = {2, 2}, s02[2] = {0, 2}, s232[3] = {2, 3, 2};
  static const double size[1] = {24}, shape[2] = {3, 4}, up[9] = {0, 2, 3, 0, 0, 6, 0, 0, 0};
  static const double lo[9] = {1, 0, 0, 4, 5, 0, 7, 8, 9}, all[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, eye[6] = {0, 1, 0, 0, 0, 1};
  static const double zeros[6] = {0, 0, 0, 0, 0, 0}, c0[4] = {3, 4, 5, 6}, cflat[2] = {2, 3};
  static const double wex[12] = {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3};
  CHECK(one("main(%x: (2, 3, 4, fp32)) {\n  %y: (int64) = onnx::Size(in0=%x)\n} -> (%y)\n", 1, x, MGOPT_DT_INT64, 0,
            NULL, size));
  CHECK(one("main(%x: (2, 3, 4, fp32)) {\n  %y: (2, int64) = onnx::Shape(in0=%x, start=-2)\n} -> (%y)\n", 1, x,
            MGOPT_DT_INT64, 1, s2, shape));
  /* an end before the start: no dims */
  CHECK(one("main(%x: (2, 3, 4, fp32)) {\n  %y: (0, int64) = onnx::Shape(in0=%x, start=2, end=-5)\n} -> (%y)\n", 1, x,
            MGOPT_DT_INT64, 1, s0, NULL));
  CHECK(one("main(%x: (3, 3, fp32), %k: (int64)) {\n  %y: (3, 3, fp32) = onnx::Trilu(in0=%x, in1=%k)\n} -> (%y)\n", 2,
            m, MGOPT_DT_FP32, 2, s33, up));
  CHECK(one("main(%x: (3, 3, fp32)) {\n  %y: (3, 3, fp32) = onnx::Trilu(in0=%x, upper=0)\n} -> (%y)\n", 1, m,
            MGOPT_DT_FP32, 2, s33, lo));
  /* k beyond the matrix keeps everything */
  m[1].v[0] = -5;
  CHECK(one("main(%x: (3, 3, fp32), %k: (int64)) {\n  %y: (3, 3, fp32) = onnx::Trilu(in0=%x, in1=%k)\n} -> (%y)\n", 2,
            m, MGOPT_DT_FP32, 2, s33, all));
  CHECK(one("main(%x: (2, 3, fp32)) {\n  %y: (2, 3, int32) = onnx::EyeLike(in0=%x, k=1, dtype=6)\n} -> (%y)\n", 1, e,
            MGOPT_DT_INT32, 2, s23, eye));
  CHECK(one("main(%x: (2, 3, fp32)) {\n  %y: (2, 3, fp32) = onnx::EyeLike(in0=%x, k=5)\n} -> (%y)\n", 1, e,
            MGOPT_DT_FP32, 2, s23, zeros));
  CHECK(one("main(%x: (3, 2, fp32), %c: (3, bool)) {\n  %y: (2, 2, fp32) = onnx::Compress(in0=%x, in1=%c, axis=0)\n} -> (%y)\n",
            2, cmp, MGOPT_DT_FP32, 2, s22, c0));
  CHECK(one("main(%x: (3, 2, fp32), %c: (3, bool)) {\n  %y: (2, fp32) = onnx::Compress(in0=%x, in1=%c)\n} -> (%y)\n", 2,
            cmp, MGOPT_DT_FP32, 1, s2, cflat));
  /* nothing selected: an empty axis */
  CHECK(one("main(%x: (3, 2, fp32), %c: (3, bool)) {\n  %y: (0, 2, fp32) = onnx::Compress(in0=%x, in1=%c, axis=0)\n} -> (%y)\n",
            2, none, MGOPT_DT_FP32, 2, s02, NULL));
  CHECK(one("main(%x: (3, 1, int32), %s: (3, int64)) {\n  %y: (2, 3, 2, int32) = onnx::Expand(in0=%x, in1=%s)\n} -> (%y)\n",
            2, ex, MGOPT_DT_INT32, 3, s232, wex));
}

static void test_reduce_sum(void) {
  spec x[2] = {{MGOPT_DT_FP32, 2, {2, 3}, {1, 2, 3, 4, 5, 6}}, {MGOPT_DT_INT64, 1, {1}, {-1}}};
  spec none[2] = {{MGOPT_DT_INT32, 2, {2, 3}, {1, 2, 3, 4, 5, 6}}, {MGOPT_DT_INT64, 1, {0}, {0}}};
  int64_t s21[2] = {2, 1}, s11[2] = {1, 1}, s23[2] = {2, 3};
  static const double rows[2] = {6, 15}, all[1] = {21}, same[6] = {1, 2, 3, 4, 5, 6};
  CHECK(one("main(%x: (2, 3, fp32), %a: (1, int64)) {\n  %y: (2, 1, fp32) = onnx::ReduceSum(in0=%x, in1=%a)\n} -> (%y)\n",
            2, x, MGOPT_DT_FP32, 2, s21, rows));
  /* no axes: every axis; with noop_with_empty_axes: the input */
  CHECK(one("main(%x: (2, 3, int32), %a: (0, int64)) {\n  %y: (1, 1, int32) = onnx::ReduceSum(in0=%x, in1=%a)\n} -> (%y)\n",
            2, none, MGOPT_DT_INT32, 2, s11, all));
  CHECK(one("main(%x: (2, 3, int32), %a: (0, int64)) {\n"
            "  %y: (2, 3, int32) = onnx::ReduceSum(in0=%x, in1=%a, noop_with_empty_axes=1)\n} -> (%y)\n",
            2, none, MGOPT_DT_INT32, 2, s23, same));
}

static void test_dropout_layer_norm(void) {
  spec x[1] = {{MGOPT_DT_FP32, 1, {2}, {1, 2}}};
  spec t[3] = {{MGOPT_DT_FP32, 1, {2}, {1, 2}}, {MGOPT_DT_FP32, 0, {0}, {0.5}}, {MGOPT_DT_BOOL, 0, {0}, {1}}};
  spec ln[3] = {{MGOPT_DT_FP32, 2, {2, 3}, {1, 2, 3, 2, 2, 2}}, {MGOPT_DT_FP32, 1, {3}, {1, 1, 2}},
                {MGOPT_DT_FP32, 1, {3}, {0, 0, 1}}};
  int64_t s2[1] = {2}, s23[2] = {2, 3};
  double inv = 1.0 / sqrt(2.0 / 3 + 1e-5), ln_y[6];
  static const double ones[2] = {1, 1};
  ln_y[0] = -inv;
  ln_y[1] = 0;
  ln_y[2] = 2 * inv + 1;
  ln_y[3] = ln_y[4] = 0; /* a row of zero variance */
  ln_y[5] = 1;
  CHECK(one("main(%x: (2, fp32)) {\n  %y: (2, fp32), %m: (2, bool) = onnx::Dropout(in0=%x)\n} -> (%m)\n", 1, x,
            MGOPT_DT_BOOL, 1, s2, ones));
  /* training with a ratio of 0.5 is random: not evaluated */
  CHECK_EQ_INT(fails("main(%x: (2, fp32), %r: (fp32), %t: (bool)) {\n"
                     "  %y: (2, fp32) = onnx::Dropout(in0=%x, in1=%r, in2=%t)\n} -> (%y)\n",
                     3, t),
               MGOPT_ERR_UNSUPPORTED);
  CHECK(one("main(%x: (2, 3, fp32), %s: (3, fp32), %b: (3, fp32)) {\n"
            "  %y: (2, 3, fp32) = onnx::LayerNormalization(in0=%x, in1=%s, in2=%b)\n} -> (%y)\n",
            3, ln, MGOPT_DT_FP32, 2, s23, ln_y));
}

static void test_arg_and_pool(void) {
  spec x[1] = {{MGOPT_DT_FP32, 2, {2, 3}, {1, 3, 3, 2, 2, 1}}};
  spec p[1] = {{MGOPT_DT_FP32, 4, {1, 2, 2, 2}, {1, 5, 3, 2, NAN, 0, 1, 2}}};
  int64_t s21[2] = {2, 1}, s3[1] = {3}, s1211[4] = {1, 2, 1, 1};
  static const double last[2] = {2, 1}, first[2] = {1, 0}, amin[3] = {0, 1, 1}, pool[2] = {5, NAN};
  CHECK(one("main(%x: (2, 3, fp32)) {\n  %y: (2, 1, int64) = onnx::ArgMax(in0=%x, axis=1, select_last_index=1)\n} -> (%y)\n",
            1, x, MGOPT_DT_INT64, 2, s21, last));
  CHECK(one("main(%x: (2, 3, fp32)) {\n  %y: (2, 1, int64) = onnx::ArgMax(in0=%x, axis=1, select_last_index=0)\n} -> (%y)\n",
            1, x, MGOPT_DT_INT64, 2, s21, first));
  CHECK(one("main(%x: (2, 3, fp32)) {\n  %y: (3, int64) = onnx::ArgMin(in0=%x, keepdims=0, select_last_index=1)\n} -> (%y)\n",
            1, x, MGOPT_DT_INT64, 1, s3, amin));
  /* NaN propagates through the max */
  CHECK(one("main(%x: (1, 2, 2, 2, fp32)) {\n  %y: (1, 2, 1, 1, fp32) = onnx::GlobalMaxPool(in0=%x)\n} -> (%y)\n", 1, p,
            MGOPT_DT_FP32, 4, s1211, pool));
}

/* ---------------------------------------------------------------- control flow and sequences */

/* Runs src (.mil) on one int64 or fp32 input and gives the status; outputs
   checked against want0/want1 (NULL: not checked) and freed; no byte stays
   allocated. */
static mgopt_status cf_run(const char *src, mgopt_dtype dt, int32_t rank, const int64_t *shape, const double *in,
                           int32_t nout, const double *want0, int64_t n0, const double *want1, int64_t n1,
                           int64_t max_iters, char *msg) {
  counting c = {0, 0};
  mgopt_allocator a;
  mgopt_buf buf;
  mgopt_program *p;
  mgopt_tensor *x[1], *out[2] = {NULL, NULL};
  mgopt_eval_options o;
  mgopt_diag d;
  mgopt_status st;
  a.realloc = counting_realloc;
  a.ctx = &c;
  p = load(src, 0, &a, &buf);
  if (!p) return MGOPT_ERR_CORRUPT;
  x[0] = mk(p, dt, rank, shape, in);
  memset(&o, 0, sizeof o);
  o.op_fn = mgopt_onnx_eval_op;
  o.max_loop_iterations = max_iters;
  st = mgopt_eval(p, NULL, x, 1, out, nout, &o, &d);
  if (msg) snprintf(msg, 200, "%.190s", st ? d.msg : "");
  if (st == MGOPT_OK) {
    CHECK(!want0 || near_all(out[0], want0, n0));
    CHECK(!want1 || near_all(out[1], want1, n1));
  } else {
    CHECK(out[0] == NULL && out[1] == NULL);
  }
  if (out[0]) mgopt_eval_tensor_free(p, out[0]);
  if (out[1]) mgopt_eval_tensor_free(p, out[1]);
  mgopt_eval_tensor_free(p, x[0]);
  mgopt_program_destroy(p);
  CHECK_EQ_INT(c.live, 0);
  return st;
}

static void test_control_flow(void) {
  static const char *loop =
      "main(%m: (int64)) {\n"
      "  %s0: (int64)* = const(val=10)\n"
      "  %s: (int64), %sq: (*, int64) = onnx::Loop(in0=%m, in2=%s0)\n"
      "    body(%i: (int64), %c: (bool), %a: (int64)) {\n"
      "      %b: (int64) = add(x=%a, y=%i)\n"
      "      %q: (int64) = mul(x=%i, y=%i)\n"
      "    } -> (%c, %b, %q)\n"
      "} -> (%s, %sq)\n";
  static const char *scan =
      "main(%x: (2, 3, fp32)) {\n"
      "  %z: (2, fp32)* = const(val=[0, 0])\n"
      "  %s: (2, fp32), %o: (2, 3, fp32) = onnx::Scan(in0=%z, in1=%x, num_scan_inputs=1, scan_input_axes=[1],"
      " scan_input_directions=[1], scan_output_axes=[1])\n"
      "    body(%st: (2, fp32), %col: (2, fp32)) {\n"
      "      %n: (2, fp32) = add(x=%st, y=%col)\n"
      "    } -> (%n, %n)\n"
      "} -> (%s, %o)\n";
  static const char *iff =
      "main(%c: (bool)) {\n"
      "  %k: (2, fp32)* = const(val=[1, 2])\n"
      "  %y: (2, fp32) = onnx::If(in0=%c)\n"
      "    then_branch() {\n"
      "      %t: (2, fp32) = onnx::Neg(in0=%k)\n"
      "    } -> (%t)\n"
      "    else_branch() {\n"
      "    } -> (%k)\n"
      "} -> (%y)\n";
  int64_t s23[2] = {2, 3};
  static const double m3[1] = {3}, m0[1] = {0}, big[1] = {1000}, sum3[1] = {13}, sq3[3] = {0, 1, 4}, ten[1] = {10};
  static const double x[6] = {1, 2, 3, 4, 5, 6}, st[2] = {6, 15}, so[6] = {3, 5, 6, 6, 11, 15};
  static const double t1[1] = {1}, t0[1] = {0}, neg[2] = {-1, -2}, pos[2] = {1, 2};
  char msg[200];
  /* carried value and scan output (stacked on a new axis 0) */
  CHECK_EQ_INT(cf_run(loop, MGOPT_DT_INT64, 0, NULL, m3, 2, sum3, 1, sq3, 3, 0, msg), MGOPT_OK);
  /* no iteration: the carried value passes through; a scan output has no shape */
  CHECK_EQ_INT(cf_run(loop, MGOPT_DT_INT64, 0, NULL, m0, 2, ten, 1, NULL, 0, 0, msg), MGOPT_ERR_UNSUPPORTED);
  CHECK(strstr(msg, "no iteration") != NULL);
  /* beyond the iteration limit: an error, nothing leaks */
  CHECK_EQ_INT(cf_run(loop, MGOPT_DT_INT64, 0, NULL, big, 2, NULL, 0, NULL, 0, 10, msg), MGOPT_ERR_LIMIT);
  /* Scan: columns from the end, outputs stacked along axis 1 */
  CHECK_EQ_INT(cf_run(scan, MGOPT_DT_FP32, 2, s23, x, 2, st, 2, so, 6, 0, msg), MGOPT_OK);
  /* If on a run-time condition, both ways (the else branch gives a constant) */
  CHECK_EQ_INT(cf_run(iff, MGOPT_DT_BOOL, 0, NULL, t1, 1, neg, 2, NULL, 0, 0, msg), MGOPT_OK);
  CHECK_EQ_INT(cf_run(iff, MGOPT_DT_BOOL, 0, NULL, t0, 1, pos, 2, NULL, 0, 0, msg), MGOPT_OK);
}

static void test_sequences(void) {
  static const char *ok =
      "main(%x: (2, fp32)) {\n"
      "  %k: (3, fp32)* = const(val=[3, 4, 5])\n"
      "  %e: (*, unknown) = onnx::SequenceEmpty(dtype=1)\n"
      "  %s1: (*, unknown) = onnx::SequenceInsert(in0=%e, in1=%k)\n"
      "  %z: (int64)* = const(val=0)\n"
      "  %s2: (*, unknown) = onnx::SequenceInsert(in0=%s1, in1=%x, in2=%z)\n"
      "  %c: (5, fp32) = onnx::ConcatFromSequence(in0=%s2, axis=0)\n"
      "  %n: (int64) = onnx::SequenceLength(in0=%s2)\n"
      "} -> (%c, %n)\n";
  static const char *bad_at =
      "main(%x: (2, fp32)) {\n"
      "  %s: (*, unknown) = onnx::SequenceConstruct(in0=%x, in1=%x)\n"
      "  %p: (int64)* = const(val=2)\n"
      "  %y: (*, unknown) = onnx::SequenceAt(in0=%s, in1=%p)\n"
      "} -> (%y)\n";
  static const char *bad_dtype =
      "main(%x: (2, fp32)) {\n"
      "  %e: (*, unknown) = onnx::SequenceEmpty(dtype=7)\n"
      "  %s: (*, unknown) = onnx::SequenceInsert(in0=%e, in1=%x)\n"
      "  %n: (int64) = onnx::SequenceLength(in0=%s)\n"
      "} -> (%n)\n";
  static const char *empty =
      "main(%x: (2, fp32)) {\n"
      "  %e: (*, unknown) = onnx::SequenceEmpty()\n"
      "  %c: (*, unknown) = onnx::ConcatFromSequence(in0=%e, axis=0)\n"
      "} -> (%c)\n";
  static const char *seq_out =
      "main(%x: (2, fp32)) {\n"
      "  %s: (*, unknown) = onnx::SequenceConstruct(in0=%x)\n"
      "} -> (%s)\n";
  static const char *kernel_reads =
      "main(%x: (2, fp32)) {\n"
      "  %s: (*, unknown) = onnx::SequenceConstruct(in0=%x)\n"
      "  %y: (*, unknown) = onnx::Relu(in0=%s)\n"
      "  %r: (*, unknown) = onnx::Shape(in0=%s)\n"
      "} -> (%y)\n";
  int64_t s2[1] = {2};
  static const double x[2] = {1, 2}, cat[5] = {1, 2, 3, 4, 5}, two[1] = {2};
  char msg[200];
  CHECK_EQ_INT(cf_run(ok, MGOPT_DT_FP32, 1, s2, x, 2, cat, 5, two, 1, 0, msg), MGOPT_OK);
  CHECK_EQ_INT(cf_run(bad_at, MGOPT_DT_FP32, 1, s2, x, 1, NULL, 0, NULL, 0, 0, msg), MGOPT_ERR_CORRUPT);
  CHECK(strstr(msg, "out of range") != NULL);
  CHECK_EQ_INT(cf_run(bad_dtype, MGOPT_DT_FP32, 1, s2, x, 1, NULL, 0, NULL, 0, 0, msg), MGOPT_ERR_CORRUPT);
  CHECK_EQ_INT(cf_run(empty, MGOPT_DT_FP32, 1, s2, x, 1, NULL, 0, NULL, 0, 0, msg), MGOPT_ERR_CORRUPT);
  CHECK(strstr(msg, "empty") != NULL);
  CHECK_EQ_INT(cf_run(seq_out, MGOPT_DT_FP32, 1, s2, x, 1, NULL, 0, NULL, 0, 0, msg), MGOPT_ERR_UNSUPPORTED);
  CHECK(strstr(msg, "sequence") != NULL);
  CHECK_EQ_INT(cf_run(kernel_reads, MGOPT_DT_FP32, 1, s2, x, 1, NULL, 0, NULL, 0, 0, msg), MGOPT_ERR_UNSUPPORTED);
  CHECK(strstr(msg, "sequence") != NULL);
}

static const test_case tests[] = {
    TEST(test_log_softmax), TEST(test_nll_loss),      TEST(test_sce_loss),
    TEST(test_unknown_op),  TEST(test_late_reshape),  TEST(test_late_cumsum),  TEST(test_nary),
    TEST(test_mod_bitshift), TEST(test_unary),        TEST(test_cast_like),
    TEST(test_cast_4bit),    TEST(test_shapes),
    TEST(test_dropout_layer_norm), TEST(test_arg_and_pool), TEST(test_reduce_sum),
    TEST(test_control_flow), TEST(test_sequences),
};
TEST_MAIN(tests)
