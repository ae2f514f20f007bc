/* tests/unit/test_onnx_eval.c — mgopt_onnx_eval_op: the ONNX kernels against hand-computed values, late mapping, errors, memory. */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
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

static const test_case tests[] = {
    TEST(test_log_softmax), TEST(test_nll_loss),      TEST(test_sce_loss),
    TEST(test_unknown_op),  TEST(test_late_reshape),  TEST(test_late_cumsum),
};
TEST_MAIN(tests)
