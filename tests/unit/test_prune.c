/* tests/unit/test_prune.c — the pruning kernels (numpy's percentile, masks, the sparse encoding as
   constexpr_sparse_to_dense reads it) and the bulk fp32 -> fp16 conversion. */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <math.h>
#include <stdlib.h>

static uint32_t rnd(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return *s >> 8;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* numpy.percentile's linear method on a sorted copy, written out directly. */
static double ref_percentile(const double *v, int64_t n, double q) {
  double *s = (double *)malloc((size_t)n * sizeof(double)), vi, t, a, b, r;
  int64_t lo;
  memcpy(s, v, (size_t)n * sizeof(double));
  qsort(s, (size_t)n, sizeof(double), cmp_double);
  vi = (double)(n - 1) * (q / 100.0);
  lo = (int64_t)floor(vi);
  if (lo >= n - 1) {
    r = s[n - 1];
  } else {
    t = vi - (double)lo;
    a = s[lo];
    b = s[lo + 1];
    r = t >= 0.5 ? b - (b - a) * (1.0 - t) : a + (b - a) * t;
  }
  free(s);
  return r;
}

static void test_percentile(void) {
  double v[10] = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, w[10];
  double four[4] = {4, 1, 3, 2};
  uint32_t s = 7;
  int64_t n, i;
  /* numpy.percentile(np.arange(1, 11), q) */
  memcpy(w, v, sizeof v);
  CHECK(mgopt__kp_percentile(w, 10, 45.0) == 5.05);
  memcpy(w, v, sizeof v);
  CHECK(mgopt__kp_percentile(w, 10, 40.0) == 4.6);
  memcpy(w, v, sizeof v);
  CHECK(mgopt__kp_percentile(w, 10, 50.0) == 5.5);
  memcpy(w, v, sizeof v);
  CHECK(mgopt__kp_percentile(w, 10, 0.0) == 1.0);
  memcpy(w, v, sizeof v);
  CHECK(mgopt__kp_percentile(w, 10, 100.0) == 10.0);
  CHECK(mgopt__kp_percentile(four, 4, 25.0) == 1.75); /* numpy.percentile([4, 1, 3, 2], 25) */
  w[0] = 1;
  w[1] = NAN;
  CHECK(isnan(mgopt__kp_percentile(w, 2, 50.0)));
  /* against a full sort, with many ties and sizes around the insertion cutoff */
  for (n = 1; n <= 3000; n = n * 3 + 1) {
    double *a = (double *)malloc((size_t)n * sizeof(double)), *b = (double *)malloc((size_t)n * sizeof(double));
    int qi;
    for (qi = 0; qi <= 20; qi++) {
      double q = qi * 5.0 + (qi % 3) * 0.37;
      if (q > 100.0) q = 100.0;
      for (i = 0; i < n; i++) a[i] = (double)(rnd(&s) % (qi % 2 ? 7u : 100000u)) * 0.125;
      memcpy(b, a, (size_t)n * sizeof(double));
      CHECK(mgopt__kp_percentile(b, n, q) == ref_percentile(a, n, q));
    }
    free(a);
    free(b);
  }
}

static mgopt_tensor *tensor_f32(mgopt_program *p, int32_t rank, const int64_t *shape, const float *v) {
  mgopt_tensor *t = mgopt_tensor_new(p, MGOPT_DT_FP32, rank, shape);
  if (t) memcpy(mgopt_tensor_data_mut(p, t), v, (size_t)t->numel * 4);
  return t;
}

static void test_masks(void) {
  mgopt_program *p = mgopt_program_create(NULL);
  static const int64_t s34[2] = {3, 4}, s43[2] = {4, 3};
  static const float w34[12] = {1, 3, 4, -3, 2, -2, 0.5f, 0.25f, -1, 6, 7, 8};
  static const float w43[12] = {1, 10, 0.1f, 1, 10, 0.1f, 5, 0.2f, 3, -5, 0.2f, 3};
  double mag[12], scratch[12];
  uint8_t keep[12];
  mgopt_tensor *t;
  int i;
  REQUIRE(p);
  t = tensor_f32(p, 2, s34, w34);
  REQUIRE(t);
  mgopt__kp_magnitude(t, mag);
  CHECK(mgopt__kp_nm_mask(t, mag, 1, 2, 1, keep));
  {
    static const uint8_t want[12] = {0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1};
    CHECK(memcmp(keep, want, 12) == 0);
  }
  CHECK(!mgopt__kp_nm_mask(t, mag, 1, 3, 1, keep)); /* m > 4 / 2 */
  CHECK(!mgopt__kp_nm_mask(t, mag, 3, 2, 1, keep)); /* n > m */
  mgopt__kp_threshold_mask(mag, 12, 1.0, keep);
  for (i = 0; i < 12; i++) CHECK_EQ_INT(keep[i], fabs(w34[i]) > 1.0);
  t = tensor_f32(p, 2, s43, w43);
  REQUIRE(t);
  CHECK(mgopt__kp_block_magnitude(t, 0, 2, mag));
  CHECK(mag[0] == sqrt(2.0) && mag[3] == sqrt(2.0) && mag[6] == sqrt(50.0) && mag[9] == sqrt(50.0));
  CHECK(!mgopt__kp_block_magnitude(t, 0, 3, mag)); /* 3 > 4 / 2 */
  CHECK(mgopt__kp_block_magnitude(t, 0, 2, mag));
  mgopt__kp_magnitude_mask(mag, 12, 0.5, scratch, keep);
  {
    static const uint8_t want[12] = {0, 1, 0, 0, 1, 0, 1, 0, 1, 1, 0, 1};
    CHECK(memcmp(keep, want, 12) == 0);
  }
  mgopt__kp_magnitude_mask(mag, 12, 1.0, scratch, keep);
  for (i = 0; i < 12; i++) CHECK(!keep[i]);
  mgopt__kp_magnitude_mask(mag, 12, 0.0, scratch, keep);
  for (i = 0; i < 12; i++) CHECK(keep[i]);
  mgopt_program_destroy(p);
}

/* The encoding, byte for byte, and decoded by the constexpr_sparse_to_dense kernel in both forms. */
static void test_encode(void) {
  static const char *text =
      "main() {\n"
      "  %nz: (4, fp32)* = const(val=[1, 2, 3, 4])\n"
      "  %m: (2, uint8)* = const(val=[26, 1])\n"
      "  %s: (1, uint32)* = const(val=[9])\n"
      "  %y: (9, fp32) = constexpr_sparse_to_dense(nonzero_data=%nz, mask=%m, shape=%s)\n"
      "  %m1: (9, uint1)* = const(val=[0, 1, 0, 1, 1, 0, 0, 0, 1])\n"
      "  %z: (9, fp32) = constexpr_sparse_to_dense(nonzero_data=%nz, mask=%m1)\n"
      "} -> (%y, %z)\n";
  static const float w[9] = {0, 1, 0.5f, 2, 3, 0, -0.25f, 0, 4};
  static const int64_t s9[1] = {9};
  mgopt_program *p = NULL;
  mgopt_diag d;
  mgopt_tensor *t, *out[1];
  mgopt_function *f;
  mgopt_op *op;
  double mag[9];
  uint8_t keep[9], mask[2];
  float nz[9];
  int k = 0;
  REQUIRE(mgopt_mil_parse(text, strlen(text), NULL, &p, &d) == MGOPT_OK);
  t = tensor_f32(p, 1, s9, w);
  REQUIRE(t);
  mgopt__kp_magnitude(t, mag);
  mgopt__kp_threshold_mask(mag, 9, 0.5, keep); /* 0.5 and -0.25 go */
  CHECK_EQ_INT(mgopt__kp_nonzero_count(t, keep), 4);
  mgopt__kp_encode(t, keep, nz, mask);
  CHECK_EQ_INT(mask[0], 26);
  CHECK_EQ_INT(mask[1], 1);
  CHECK(nz[0] == 1 && nz[1] == 2 && nz[2] == 3 && nz[3] == 4);
  f = mgopt_program_function(p, "main");
  REQUIRE(f);
  for (op = f->body->first; op; op = op->next) {
    int64_t i;
    if (op->kind != MGOPT_OP_constexpr_sparse_to_dense) continue;
    REQUIRE(mgopt_fold_op(p, op, out, NULL) == 1);
    REQUIRE(out[0]->numel == 9);
    for (i = 0; i < 9; i++) CHECK(mgopt_tensor_get_f64(out[0], i) == (keep[i] ? w[i] : 0.0));
    k++;
  }
  CHECK_EQ_INT(k, 2);
  mgopt_program_destroy(p);
}

static void test_fp16_bulk(void) {
  enum { N = 1 << 16 };
  static const struct {
    uint32_t f;
    uint16_t h;
  } edge[] = {
      {0x00000000u, 0x0000u}, {0x80000000u, 0x8000u}, {0x477fe000u, 0x7bffu}, /* 65504 */
      {0x477ff000u, 0x7c00u},                                                 /* 65520: ties to even, inf */
      {0x477fefffu, 0x7bffu}, {0x7f800000u, 0x7c00u}, {0xff800000u, 0xfc00u},
      {0x33800000u, 0x0001u}, /* 2^-24 */
      {0x33000000u, 0x0000u}, /* 2^-25: ties to even, 0 */
      {0x33400000u, 0x0001u}, /* 1.5 * 2^-25 */
      {0x38800000u, 0x0400u}, /* 2^-14 */
      {0x387fc000u, 0x03ffu}, {0x387fe000u, 0x0400u}, /* rounds up into the normals */
      {0x3f800000u, 0x3c00u}, {0x3f801000u, 0x3c00u}, {0x3f803000u, 0x3c02u},
      {0x7fc00000u, 0x7e00u}, {0xffc12345u, 0xfe09u}, {0x7f800001u, 0x7e00u}, {0x00000001u, 0x0000u},
  };
  float *src = (float *)malloc(N * sizeof(float));
  uint16_t *dst = (uint16_t *)malloc(N * 2);
  uint32_t x = 0;
  size_t i;
  REQUIRE(src && dst);
  for (i = 0; i < sizeof edge / sizeof edge[0]; i++) {
    float f;
    memcpy(&f, &edge[i].f, 4);
    CHECK_EQ_INT(mgopt_f32_to_f16(f), edge[i].h);
    src[i] = f;
  }
  mgopt_f32_to_f16_n(src, dst, (int64_t)(sizeof edge / sizeof edge[0]));
  for (i = 0; i < sizeof edge / sizeof edge[0]; i++) CHECK_EQ_INT(dst[i], edge[i].h);
  /* every 65521st bit pattern (all exponents, both signs), bulk against scalar, an odd length */
  for (i = 0; i < N; i++, x += 65521u) memcpy(&src[i], &x, 4);
  mgopt_f32_to_f16_n(src, dst, N - 3);
  for (i = 0; i + 3 < N; i++)
    if (dst[i] != mgopt_f32_to_f16(src[i])) {
      CHECK(dst[i] == mgopt_f32_to_f16(src[i]));
      break;
    }
  free(src);
  free(dst);
}

static const test_case tests[] = {
    TEST(test_percentile),
    TEST(test_masks),
    TEST(test_encode),
    TEST(test_fp16_bulk),
};
TEST_MAIN(tests)
