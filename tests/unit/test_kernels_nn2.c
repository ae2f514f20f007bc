/* tests/unit/test_kernels_nn2.c — folding kernels of the resampling ops against values computed here in double. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <stdlib.h>
#include <math.h>
#include <stdarg.h>

typedef struct fx {
  mgopt_program *p;
  mgopt_function *f;
  mgopt_tensor *out[4];
} fx;

static fx fx_new(void) {
  fx x;
  memset(&x, 0, sizeof x);
  x.p = mgopt_program_create(NULL);
  x.f = x.p ? mgopt_function_new(x.p, "main") : NULL;
  return x;
}

static mgopt_value *K(fx *x, mgopt_dtype dt, int rank, const int64_t *shape, const double *v) {
  mgopt_tensor *t = mgopt_tensor_new(x->p, dt, rank, shape);
  int64_t i;
  if (!t) return NULL;
  for (i = 0; i < t->numel; i++) mgopt_tensor_set_f64(t, i, v[i]);
  return mgopt_build_const(x->p, x->f->body, NULL, NULL, t);
}

static mgopt_op *OP1(fx *x, const char *type, mgopt_value *v) {
  const char *names[1] = {"x"};
  mgopt_value *vals[1];
  vals[0] = v;
  return mgopt_build_op(x->p, x->f->body, NULL, type, NULL, 1, names, vals, 1);
}

/* einsum over n values with equation eq */
static mgopt_op *EINSUM(fx *x, const char *eq, int n, mgopt_value **vals) {
  mgopt_op *op = mgopt_build_op(x->p, x->f->body, NULL, "einsum", NULL, 0, NULL, NULL, 1);
  if (!op || mgopt_op_set_operand_list(op, "values", vals, n) || mgopt_op_set_string(op, "equation", eq)) return NULL;
  return op;
}

static int FOLD(fx *x, mgopt_op *op) { return op ? mgopt_fold_op(x->p, op, x->out, NULL) : -2; }

/* The bilinear grid point of output i of m over an input of n, written out per mode. */
static double grid(const char *mode, int64_t i, int64_t n, int64_t m) {
  double g;
  if (strcmp(mode, "STRICT_ALIGN_CORNERS") == 0) g = m == 1 ? 0.0 : (double)i * (double)(n - 1) / (double)(m - 1);
  else if (strcmp(mode, "ALIGN_CORNERS") == 0) g = m == 1 ? (double)(n - 1) / 2.0 : (double)i * (double)(n - 1) / (double)(m - 1);
  else if (strcmp(mode, "UNALIGN_CORNERS") == 0) g = ((double)i + 0.5) * (double)n / (double)m - 0.5;
  else if (strcmp(mode, "DEFAULT") == 0) g = (double)i * (double)n / (double)m;
  else {
    double d = (double)(n - 1 > 1 ? n - 1 : 1) / (double)m;
    g = 0.5 * d + (double)i * d;
  }
  return g < 0 ? 0 : g > (double)(n - 1) ? (double)(n - 1) : g;
}

/* resize_bilinear of a 1x1x3x4 input against a direct double computation, every sampling mode */
static void test_resize_bilinear_modes(void) {
  static const char *const modes[5] = {"DEFAULT", "STRICT_ALIGN_CORNERS", "ALIGN_CORNERS", "UNALIGN_CORNERS", "OFFSET_CORNERS"};
  static const int64_t s[4] = {1, 1, 3, 4}, targets[3][2] = {{5, 7}, {1, 2}, {2, 1}};
  double v[12];
  int mi, ti;
  for (mi = 0; mi < 12; mi++) v[mi] = (double)((mi * 7) % 11) - 3.5;
  for (mi = 0; mi < 5; mi++)
    for (ti = 0; ti < 3; ti++) {
      fx x = fx_new();
      int64_t Ho = targets[ti][0], Wo = targets[ti][1], a, b;
      mgopt_op *op = OP1(&x, "resize_bilinear", K(&x, MGOPT_DT_FP64, 4, s, v));
      int bad = 0;
      REQUIRE(op != NULL);
      mgopt_op_set_int(op, "target_size_height", Ho);
      mgopt_op_set_int(op, "target_size_width", Wo);
      mgopt_op_set_string(op, "sampling_mode", modes[mi]);
      REQUIRE(FOLD(&x, op) == 1);
      CHECK(x.out[0]->rank == 4 && x.out[0]->shape[2] == Ho && x.out[0]->shape[3] == Wo);
      for (a = 0; a < Ho; a++)
        for (b = 0; b < Wo; b++) {
          double gh = grid(modes[mi], a, 3, Ho), gw = grid(modes[mi], b, 4, Wo), e;
          int64_t h0 = (int64_t)floor(gh), w0 = (int64_t)floor(gw), h1 = h0 + 1 < 3 ? h0 + 1 : 2, w1 = w0 + 1 < 4 ? w0 + 1 : 3;
          double fh = gh - (double)h0, fw = gw - (double)w0;
          e = (1 - fh) * ((1 - fw) * v[h0 * 4 + w0] + fw * v[h0 * 4 + w1]) + fh * ((1 - fw) * v[h1 * 4 + w0] + fw * v[h1 * 4 + w1]);
          if (fabs(mgopt_tensor_get_f64(x.out[0], a * Wo + b) - e) > 1e-12) bad++;
        }
      CHECK(bad == 0);
      mgopt_program_destroy(x.p);
    }
}

/* upsample_bilinear: align_corners true is STRICT_ALIGN_CORNERS, false is UNALIGN_CORNERS;
   fp32 results are the double computation rounded once */
static void test_upsample_bilinear(void) {
  static const int64_t s[3] = {1, 2, 2};
  static const double v[4] = {1, 2, 3, 4};
  fx x = fx_new();
  mgopt_op *op = OP1(&x, "upsample_bilinear", K(&x, MGOPT_DT_FP32, 3, s, v));
  REQUIRE(op != NULL);
  mgopt_op_set_float(op, "scale_factor_height", 2.0);
  mgopt_op_set_float(op, "scale_factor_width", 2.0);
  mgopt_op_set_bool(op, "align_corners", 0);
  REQUIRE(FOLD(&x, op) == 1);
  {
    /* half-pixel grid over 2 -> 4: 0, 0.25, 0.75, 1 */
    static const double e[16] = {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4};
    int i, bad = 0;
    CHECK(x.out[0]->dtype == MGOPT_DT_FP32 && x.out[0]->shape[1] == 4 && x.out[0]->shape[2] == 4);
    for (i = 0; i < 16; i++) bad += mgopt_tensor_get_f64(x.out[0], i) != e[i];
    CHECK(bad == 0);
  }
  mgopt_op_set_bool(op, "align_corners", 1);
  REQUIRE(FOLD(&x, op) == 1);
  {
    /* aligned grid over 2 -> 4: 0, 1/3, 2/3, 1; rounded once to fp32 */
    double g[4] = {0, 1.0 / 3.0, 2.0 / 3.0, 1};
    int a, b, bad = 0;
    for (a = 0; a < 4; a++)
      for (b = 0; b < 4; b++) {
        double top = (1 - g[b]) * 1 + g[b] * 2, bot = (1 - g[b]) * 3 + g[b] * 4, e = (1 - g[a]) * top + g[a] * bot;
        bad += mgopt_tensor_get_f64(x.out[0], a * 4 + b) != (double)(float)e;
      }
    CHECK(bad == 0);
  }
  mgopt_program_destroy(x.p);
}

/* nearest: floor(i * n / m) exactly, for up- and downsampling; elements copied (int32 too) */
static void test_nearest(void) {
  static const int64_t s[3] = {1, 3, 4};
  double v[12];
  fx x = fx_new();
  mgopt_op *op;
  int i, a, b, bad = 0;
  for (i = 0; i < 12; i++) v[i] = i;
  op = OP1(&x, "upsample_nearest_neighbor", K(&x, MGOPT_DT_INT32, 3, s, v));
  REQUIRE(op != NULL);
  mgopt_op_set_float(op, "scale_factor_height", 2.0);
  mgopt_op_set_float(op, "scale_factor_width", 0.5);
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(x.out[0]->dtype == MGOPT_DT_INT32 && x.out[0]->shape[1] == 6 && x.out[0]->shape[2] == 2);
  for (a = 0; a < 6; a++)
    for (b = 0; b < 2; b++) bad += mgopt_tensor_get_f64(x.out[0], a * 2 + b) != (double)((a / 2) * 4 + b * 2);
  CHECK(bad == 0);
  op = OP1(&x, "resize_nearest_neighbor", K(&x, MGOPT_DT_FP16, 3, s, v));
  REQUIRE(op != NULL);
  mgopt_op_set_int(op, "target_size_height", 4);
  mgopt_op_set_int(op, "target_size_width", 6);
  REQUIRE(FOLD(&x, op) == 1);
  bad = 0;
  for (a = 0; a < 4; a++)
    for (b = 0; b < 6; b++) bad += mgopt_tensor_get_f64(x.out[0], a * 6 + b) != (double)((a * 3 / 4) * 4 + b * 4 / 6);
  CHECK(bad == 0);
  mgopt_program_destroy(x.p);
}

/* refusals: rank 2, an output dim of 0, an unknown sampling_mode; NaN reaches the outputs that read it */
static void test_resample_refusals(void) {
  static const int64_t s2[2] = {2, 2}, s3[3] = {1, 2, 2};
  static const double v[4] = {1, 2, 3, 4};
  fx x = fx_new();
  mgopt_op *op = OP1(&x, "upsample_nearest_neighbor", K(&x, MGOPT_DT_FP32, 2, s2, v));
  CHECK(FOLD(&x, op) == 0);
  op = OP1(&x, "upsample_nearest_neighbor", K(&x, MGOPT_DT_FP32, 3, s3, v));
  mgopt_op_set_float(op, "scale_factor_height", 0.25);
  CHECK(FOLD(&x, op) == 0);
  op = OP1(&x, "resize_bilinear", K(&x, MGOPT_DT_FP32, 3, s3, v));
  mgopt_op_set_string(op, "sampling_mode", "SIDEWAYS");
  CHECK(FOLD(&x, op) == 0);
  {
    double n[4] = {1, 2, 3, 4};
    n[0] = NAN;
    op = OP1(&x, "resize_bilinear", K(&x, MGOPT_DT_FP32, 3, s3, n));
    mgopt_op_set_int(op, "target_size_height", 2);
    mgopt_op_set_int(op, "target_size_width", 2);
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(isnan(mgopt_tensor_get_f64(x.out[0], 0)) && mgopt_tensor_get_f64(x.out[0], 3) == 4.0);
  }
  mgopt_program_destroy(x.p);
}

/* einsum: three operands against a direct double computation; int64 wraps around; fp16 is rounded once */
static void test_einsum(void) {
  static const int64_t s23[2] = {2, 3}, s34[2] = {3, 4}, s4[1] = {4}, s2[1] = {2};
  double a[6], b[12], c[4];
  fx x = fx_new();
  mgopt_value *vals[3];
  mgopt_op *op;
  int i, j, kk, bad = 0;
  for (i = 0; i < 6; i++) a[i] = 0.1 * i - 0.2;
  for (i = 0; i < 12; i++) b[i] = 1.0 / (i + 1);
  for (i = 0; i < 4; i++) c[i] = i - 1.5;
  vals[0] = K(&x, MGOPT_DT_FP64, 2, s23, a);
  vals[1] = K(&x, MGOPT_DT_FP64, 2, s34, b);
  vals[2] = K(&x, MGOPT_DT_FP64, 1, s4, c);
  op = EINSUM(&x, "ij,jk,k->i", 3, vals);
  REQUIRE(op != NULL);
  REQUIRE(FOLD(&x, op) == 1);
  CHECK(x.out[0]->rank == 1 && x.out[0]->shape[0] == 2);
  for (i = 0; i < 2; i++) {
    double e = 0;
    int first = 1;
    for (j = 0; j < 3; j++)
      for (kk = 0; kk < 4; kk++) {
        double t = a[i * 3 + j] * b[j * 4 + kk] * c[kk];
        e = first ? t : e + t;
        first = 0;
      }
    bad += mgopt_tensor_get_f64(x.out[0], i) != e;
  }
  CHECK(bad == 0);
  {
    /* int64: 2^62 * 4 wraps to 0 */
    mgopt_tensor *t = mgopt_tensor_new(x.p, MGOPT_DT_INT64, 1, s2);
    mgopt_value *v1[1];
    REQUIRE(t != NULL);
    mgopt_tensor_set_i64(t, 0, (int64_t)1 << 62);
    mgopt_tensor_set_i64(t, 1, 4);
    v1[0] = mgopt_build_const(x.p, x.f->body, NULL, NULL, t);
    op = EINSUM(&x, "i->", 1, v1);
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(mgopt_tensor_get_i64(x.out[0], 0) == (int64_t)(((uint64_t)1 << 62) + 4));
    {
      mgopt_value *v2[2];
      v2[0] = v1[0];
      v2[1] = v1[0];
      op = EINSUM(&x, "i,i", 2, v2);
      REQUIRE(FOLD(&x, op) == 1);
      CHECK(mgopt_tensor_get_i64(x.out[0], 0) == 16); /* 2^124 wraps to 0, plus 16 */
    }
  }
  {
    /* fp16: 2048 + 1 + 1 summed in double, rounded once: 2050 */
    double h[3] = {2048, 1, 1};
    static const int64_t s3[1] = {3};
    mgopt_value *v1[1];
    v1[0] = K(&x, MGOPT_DT_FP16, 1, s3, h);
    op = EINSUM(&x, "i->", 1, v1);
    REQUIRE(FOLD(&x, op) == 1);
    CHECK(x.out[0]->dtype == MGOPT_DT_FP16 && mgopt_tensor_get_f64(x.out[0], 0) == 2050.0);
    /* a bad equation does not fold */
    mgopt_op_set_string(op, "equation", "ij->i");
    CHECK(FOLD(&x, op) == 0);
  }
  mgopt_program_destroy(x.p);
}

static const test_case tests[] = {
    TEST(test_einsum),
    TEST(test_resize_bilinear_modes),
    TEST(test_upsample_bilinear),
    TEST(test_nearest),
    TEST(test_resample_refusals),
};
TEST_MAIN(tests)
