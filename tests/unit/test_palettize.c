/* tests/unit/test_palettize.c — palettization kernels: bit packing of indices (bit-exact against the
   unpacking the lut_to_dense kernel uses, every nbits), k-means (exact cases, Lloyd fixed point, a
   host-independent checksum), uniform (round half to even), unique, groups, vectors, per-channel
   scale and the custom LUT callback. */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <math.h>
#include <stdlib.h>

/* A fixed pseudo-random stream (64-bit LCG) so data is the same on every host. */
static uint32_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(*s >> 33);
}

static void test_pack_every_nbits(void) {
  static const int bits[6] = {1, 2, 3, 4, 6, 8};
  uint8_t idx[1000], packed[1000];
  uint64_t s = 7;
  int b, i, n;
  for (b = 0; b < 6; b++)
    for (n = 0; n <= 37; n++) {
      int64_t nbytes = ((int64_t)n * bits[b] + 7) / 8, k;
      for (i = 0; i < n; i++) idx[i] = (uint8_t)(lcg(&s) & ((1u << bits[b]) - 1u));
      memset(packed, 0xAA, sizeof packed);
      mgopt__kp_pack(idx, n, bits[b], packed);
      for (i = 0; i < n; i++) CHECK_EQ_INT((int64_t)mgopt__k_bits(packed, i, bits[b]), idx[i]);
      /* padding bits of the last byte are zero */
      if (n * bits[b] % 8) CHECK_EQ_INT(packed[nbytes - 1] >> (n * bits[b] % 8), 0);
      for (k = nbytes; k < nbytes + 2; k++) CHECK_EQ_INT(packed[k], 0xAA); /* nothing written past the end */
    }
}

static void test_pack_known_bytes(void) {
  /* element i at bits [i*b, i*b+b) from the LSB of byte 0 */
  const uint8_t i3[8] = {1, 2, 3, 4, 5, 6, 7, 0};
  const uint8_t i6[4] = {63, 1, 32, 5};
  const uint8_t i1[9] = {1, 0, 0, 0, 0, 0, 0, 1, 1};
  const uint8_t i4[3] = {0xA, 0x3, 0xF};
  uint8_t o[8];
  mgopt__kp_pack(i3, 8, 3, o);
  CHECK_EQ_INT(o[0], 0xD1);
  CHECK_EQ_INT(o[1], 0x58);
  CHECK_EQ_INT(o[2], 0x1F);
  mgopt__kp_pack(i6, 4, 6, o);
  CHECK_EQ_INT(o[0], 0x7F);
  CHECK_EQ_INT(o[1], 0x00);
  CHECK_EQ_INT(o[2], 0x16);
  mgopt__kp_pack(i1, 9, 1, o);
  CHECK_EQ_INT(o[0], 0x81);
  CHECK_EQ_INT(o[1], 0x01);
  mgopt__kp_pack(i4, 3, 4, o);
  CHECK_EQ_INT(o[0], 0x3A);
  CHECK_EQ_INT(o[1], 0x0F);
}

static void test_kmeans_exact(void) {
  const float x[8] = {0.0f, 0.5f, 10.0f, 10.5f, 20.0f, 20.5f, 30.0f, 30.5f};
  const float few[5] = {2.0f, -1.0f, 2.0f, -0.0f, 0.0f};
  double lut[16];
  uint8_t idx[8];
  int i;
  REQUIRE(mgopt__kp_kmeans1d(x, 8, 4, lut, idx) == 1);
  CHECK(lut[0] == 0.25 && lut[1] == 10.25 && lut[2] == 20.25 && lut[3] == 30.25);
  for (i = 0; i < 8; i++) CHECK_EQ_INT(idx[i], i / 2);
  /* at most k distinct values: the LUT is those values, zero-padded; -0 is 0 */
  REQUIRE(mgopt__kp_kmeans1d(few, 5, 4, lut, idx) == 1);
  CHECK(lut[0] == -1.0 && lut[1] == 0.0 && lut[2] == 2.0 && lut[3] == 0.0);
  CHECK(idx[0] == 2 && idx[1] == 0 && idx[2] == 2 && idx[3] == 1 && idx[4] == 1);
}

#define KMEANS_CHECKSUM 0x486e53a0faae224cull

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const uint8_t *b = (const uint8_t *)p;
  size_t i;
  for (i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* Lloyd's fixed point: each entry is the mean of its elements, each element at its nearest entry;
   and a checksum of the result that must be the same on every host (LE or BE, any FPU). */
static void test_kmeans_fixed_point_and_checksum(void) {
  enum { N = 20000, K = 16 };
  float *x = (float *)malloc(N * sizeof(float));
  uint8_t *idx = (uint8_t *)malloc(N);
  double lut[K], sum[K];
  int64_t cnt[K], i;
  uint64_t s = 1, h = 1469598103934665603ull;
  int j;
  REQUIRE(x && idx);
  for (i = 0; i < N; i++) { /* a sum of uniforms: bell-shaped like trained weights */
    double v = 0;
    for (j = 0; j < 4; j++) v += (double)(lcg(&s) % 100000) / 100000.0;
    x[i] = (float)((v - 2.0) * 0.05);
  }
  REQUIRE(mgopt__kp_kmeans1d(x, N, K, lut, idx) == 1);
  for (j = 0; j < K; j++) sum[j] = 0, cnt[j] = 0;
  for (i = 0; i < N; i++) sum[idx[i]] += x[i], cnt[idx[i]]++;
  for (j = 0; j < K; j++) {
    CHECK(cnt[j] > 0);
    if (cnt[j]) CHECK(fabs(sum[j] / (double)cnt[j] - lut[j]) < 1e-9);
    if (j) CHECK(lut[j] > lut[j - 1]);
  }
  for (i = 0; i < N; i++) {
    double best = fabs(x[i] - lut[idx[i]]);
    for (j = 0; j < K; j++) CHECK(fabs(x[i] - lut[j]) >= best);
  }
  for (j = 0; j < K; j++) {
    uint64_t u;
    memcpy(&u, &lut[j], 8);
    /* hash the value's bits, not its bytes in memory: byte order must not matter */
    for (i = 0; i < 8; i++) {
      uint8_t byte = (uint8_t)(u >> (8 * i));
      h = fnv(h, &byte, 1);
    }
  }
  h = fnv(h, idx, N);
  printf("  kmeans checksum %016llx\n", (unsigned long long)h);
  CHECK(h == KMEANS_CHECKSUM);
  free(x);
  free(idx);
}

static void test_uniform(void) {
  const float x[6] = {0.0f, 0.5f, 1.5f, 3.0f, 2.5f, 1.0f};
  const float flat[3] = {2.0f, 2.0f, 2.0f};
  double lut[4];
  uint8_t idx[6];
  mgopt__kp_uniform(x, 6, 4, lut, idx);
  CHECK(lut[0] == 0.0 && lut[1] == 1.0 && lut[2] == 2.0 && lut[3] == 3.0);
  /* 0.5 -> 0 and 1.5 -> 2, 2.5 -> 2: half to even */
  CHECK(idx[0] == 0 && idx[1] == 0 && idx[2] == 2 && idx[3] == 3 && idx[4] == 2 && idx[5] == 1);
  mgopt__kp_uniform(flat, 3, 2, lut, idx);
  CHECK(lut[0] == 2.0 && idx[0] == 0 && idx[2] == 0);
}

static void test_unique(void) {
  const float x[4] = {3.0f, 1.0f, 3.0f, 2.0f};
  const float v[8] = {1, 2, 0, 5, 1, 2, 1, 1}; /* vectors of 2: (1,2) (0,5) (1,2) (1,1) */
  float *many = (float *)malloc(300 * sizeof(float));
  double lut[512];
  uint8_t idx[300];
  int i;
  REQUIRE(many);
  CHECK_EQ_INT(mgopt__kp_unique(x, 4, 1, lut, idx), 3);
  CHECK(lut[0] == 1 && lut[1] == 2 && lut[2] == 3);
  CHECK(idx[0] == 2 && idx[1] == 0 && idx[2] == 2 && idx[3] == 1);
  CHECK_EQ_INT(mgopt__kp_nbits_for(3), 2);
  CHECK_EQ_INT(mgopt__kp_nbits_for(5), 3);
  CHECK_EQ_INT(mgopt__kp_nbits_for(17), 6);
  CHECK_EQ_INT(mgopt__kp_nbits_for(257), 0);
  CHECK_EQ_INT(mgopt__kp_unique(v, 4, 2, lut, idx), 3);
  CHECK(lut[0] == 0 && lut[1] == 5 && lut[2] == 1 && lut[3] == 1 && lut[4] == 1 && lut[5] == 2);
  CHECK(idx[0] == 2 && idx[1] == 0 && idx[2] == 2 && idx[3] == 1);
  for (i = 0; i < 300; i++) many[i] = (float)i;
  CHECK_EQ_INT(mgopt__kp_unique(many, 256, 1, lut, idx), 256);
  CHECK_EQ_INT(mgopt__kp_unique(many, 257, 1, lut, idx), -1);
  free(many);
}

/* Two groups of 2 channels along axis 0 of a [4, 3] weight, unique mode. */
static void test_grouped_unique(void) {
  const float w[12] = {1, 2, 1, 2, 2, 1, 7, 7, 7, 9, 8, 7};
  const int64_t shape[2] = {4, 3};
  mgopt__pal_cfg c;
  mgopt__pal_out o;
  int i;
  memset(&c, 0, sizeof c);
  c.mode = MGOPT__PAL_UNIQUE;
  c.per_grouped_channel = 1;
  c.group_size = 2;
  c.channel_axis = 0;
  c.cluster_dim = 1;
  REQUIRE(mgopt__kp_palettize(&c, w, 2, shape, &o) == MGOPT__K_OK);
  CHECK_EQ_INT(o.nbits, 2); /* 3 values in group 1 */
  CHECK_EQ_INT(o.groups, 2);
  CHECK(o.lut[0] == 1 && o.lut[1] == 2 && o.lut[2] == 0 && o.lut[3] == 0);
  CHECK(o.lut[4] == 7 && o.lut[5] == 8 && o.lut[6] == 9 && o.lut[7] == 0);
  for (i = 0; i < 12; i++) CHECK(o.lut[(i / 6) * 4 + o.idx[i]] == w[i]);
  mgopt__kp_free(&o);
  c.group_size = 3; /* 4 channels are not groups of 3 */
  CHECK(mgopt__kp_palettize(&c, w, 2, shape, &o) == MGOPT__K_NO);
  c.group_size = 0; /* the whole axis */
  REQUIRE(mgopt__kp_palettize(&c, w, 2, shape, &o) == MGOPT__K_OK);
  CHECK_EQ_INT(o.groups, 1);
  CHECK_EQ_INT(o.nbits, 3);
  mgopt__kp_free(&o);
}

/* Vectors of 2 along axis 1 of a [2, 4] weight; per-channel scale along axis 0. */
static void test_vector_and_scale(void) {
  const float w[8] = {1, 2, 1, 2, 3, 4, 1, 2};
  const float s[6] = {2, -4, 1, 2, 0, 0};
  const int64_t shape[2] = {2, 4}, s_shape[2] = {2, 3};
  mgopt__pal_cfg c;
  mgopt__pal_out o;
  int i, d;
  memset(&c, 0, sizeof c);
  c.mode = MGOPT__PAL_KMEANS;
  c.nbits = 1;
  c.channel_axis = 1;
  c.cluster_dim = 2;
  REQUIRE(mgopt__kp_palettize(&c, w, 2, shape, &o) == MGOPT__K_OK);
  CHECK_EQ_INT(o.cluster_dim, 2);
  CHECK(o.lut[0] == 1 && o.lut[1] == 2 && o.lut[2] == 3 && o.lut[3] == 4);
  for (i = 0; i < 4; i++)
    for (d = 0; d < 2; d++) CHECK(o.lut[o.idx[i] * 2 + d] == w[i * 2 + d]);
  mgopt__kp_free(&o);
  c.mode = MGOPT__PAL_UNIFORM; /* uniform has no vectors */
  CHECK(mgopt__kp_palettize(&c, w, 2, shape, &o) == MGOPT__K_NO);
  memset(&c, 0, sizeof c);
  c.mode = MGOPT__PAL_UNIQUE;
  c.channel_axis = 0;
  c.cluster_dim = 1;
  c.per_channel_scale = 1;
  REQUIRE(mgopt__kp_palettize(&c, s, 2, s_shape, &o) == MGOPT__K_OK);
  REQUIRE(o.pcs != NULL);
  CHECK(o.pcs[0] == 2 && o.pcs[1] == 4 && o.pcs[2] == 1); /* max |w| over axis 0; 0 -> 1 never here */
  for (i = 0; i < 6; i++) CHECK(o.lut[o.idx[i]] * o.pcs[i % 3] == s[i]);
  mgopt__kp_free(&o);
}

static int32_t halves(void *ud, const char *name, int64_t group, const float *values, int64_t n, int32_t cd,
                      float *lut, uint8_t *indices) {
  int64_t i;
  (void)name;
  (void)cd;
  *(int *)ud += 1;
  lut[0] = (float)group;
  lut[1] = 100.0f;
  for (i = 0; i < n; i++) indices[i] = values[i] > 0 ? 1 : 0;
  return 2;
}

static void test_custom(void) {
  const float w[4] = {-1, 1, 1, -1};
  const int64_t shape[2] = {2, 2};
  mgopt__pal_cfg c;
  mgopt__pal_out o;
  int calls = 0;
  memset(&c, 0, sizeof c);
  c.mode = MGOPT__PAL_CUSTOM;
  c.per_grouped_channel = 1;
  c.group_size = 1;
  c.channel_axis = 0;
  c.cluster_dim = 1;
  c.lut_fn = halves;
  c.lut_ud = &calls;
  REQUIRE(mgopt__kp_palettize(&c, w, 2, shape, &o) == MGOPT__K_OK);
  CHECK_EQ_INT(calls, 2);
  CHECK_EQ_INT(o.nbits, 1);
  CHECK(o.lut[0] == 0 && o.lut[1] == 100 && o.lut[2] == 1 && o.lut[3] == 100);
  CHECK(o.idx[0] == 0 && o.idx[1] == 1 && o.idx[2] == 1 && o.idx[3] == 0);
  mgopt__kp_free(&o);
}

static void test_nonfinite_refused(void) {
  float w[4] = {1, 2, 3, 0};
  const int64_t shape[2] = {2, 2};
  mgopt__pal_cfg c;
  mgopt__pal_out o;
  memset(&c, 0, sizeof c);
  c.mode = MGOPT__PAL_KMEANS;
  c.nbits = 4;
  c.cluster_dim = 1;
  w[3] = (float)HUGE_VAL;
  CHECK(mgopt__kp_palettize(&c, w, 2, shape, &o) == MGOPT__K_NO);
  w[3] = 1;
  c.nbits = 5;
  CHECK(mgopt__kp_palettize(&c, w, 2, shape, &o) == MGOPT__K_NO);
}


/* ---------------------------------------------------------------- the pass, evaluated */

/* A program y = x + w with w (8, 8) from vals; x is zeros when evaluated, so y is the
   decompressed weight. */
static mgopt_program *add_program(const float *vals) {
  char text[4096];
  size_t n = 0;
  int i;
  mgopt_program *p = NULL;
  mgopt_diag d;
  n += (size_t)sprintf(text + n, "main(%%x: (8, 8, fp32)) {\n  %%w: (8, 8, fp32)* = const(val=[");
  for (i = 0; i < 64; i++)
    n += (size_t)sprintf(text + n, "%s%s%.9g%s", i % 8 == 0 ? (i ? ", [" : "[") : ", ", "", (double)vals[i],
                         i % 8 == 7 ? "]" : "");
  n += (size_t)sprintf(text + n, "])\n  %%y: (8, 8, fp32) = add(x=%%x, y=%%w)\n} -> (%%y)\n");
  if (mgopt_mil_parse(text, n, NULL, &p, &d) != MGOPT_OK) {
    printf("  parse error %d:%d: %s\n", d.line, d.col, d.msg);
    return NULL;
  }
  return p;
}

/* Runs pipeline (with cfg) and evaluates y; 1 on success, out[64] filled. */
static int run_and_eval(mgopt_program *p, const char *pipeline, const mgopt_compress_config *cfg, float *out) {
  mgopt_pipeline_options po;
  mgopt_diag d;
  mgopt_tensor *in, *res = NULL;
  const int64_t shape[2] = {8, 8};
  int i, ok;
  memset(&po, 0, sizeof po);
  po.strict = 1;
  po.verify_each = 1;
  po.compress_config = cfg;
  if (mgopt_pipeline_run(p, mgopt_builtin_registry(), pipeline, &po, &d) != MGOPT_OK) {
    printf("  pipeline: %s\n", d.msg);
    return 0;
  }
  in = mgopt_eval_tensor_new(p, MGOPT_DT_FP32, 2, shape);
  if (!in) return 0;
  ok = mgopt_eval(p, NULL, &in, 1, &res, 1, NULL, &d) == MGOPT_OK;
  if (!ok) printf("  eval: %s\n", d.msg);
  if (ok)
    for (i = 0; i < 64; i++) out[i] = (float)mgopt_tensor_get_f64(res, i);
  mgopt_eval_tensor_free(p, in);
  mgopt_eval_tensor_free(p, res);
  return ok;
}

/* The emitted constexpr_lut_to_dense decompresses (through the folding kernel) to exactly
   the kernel's lut[idx], for every nbits: the packing is the kernel's unpacking inverted. */
static void test_pass_roundtrip_every_nbits(void) {
  static const int bits[6] = {1, 2, 3, 4, 6, 8};
  float w[64], got[64];
  uint64_t s = 3;
  int b, i;
  for (i = 0; i < 64; i++) w[i] = (float)((int)(lcg(&s) % 2001) - 1000) / 256.0f;
  for (b = 0; b < 6; b++) {
    char pipe[128];
    mgopt__pal_cfg c;
    mgopt__pal_out o;
    const int64_t shape[2] = {8, 8};
    mgopt_program *p = add_program(w);
    REQUIRE(p != NULL);
    sprintf(pipe, "palettize_weights{nbits=%d,granularity=per_grouped_channel,group_size=4,weight_threshold=0}",
            bits[b]);
    REQUIRE(run_and_eval(p, pipe, NULL, got));
    memset(&c, 0, sizeof c);
    c.mode = MGOPT__PAL_KMEANS;
    c.nbits = bits[b];
    c.per_grouped_channel = 1;
    c.group_size = 4;
    c.cluster_dim = 1;
    REQUIRE(mgopt__kp_palettize(&c, w, 2, shape, &o) == MGOPT__K_OK);
    for (i = 0; i < 64; i++) CHECK(got[i] == (float)o.lut[(i / 32) * (1 << bits[b]) + o.idx[i]]);
    mgopt__kp_free(&o);
    mgopt_program_destroy(p);
  }
  { /* unique is lossless */
    mgopt_program *p = add_program(w);
    float u[64];
    for (i = 0; i < 64; i++) u[i] = (float)(i % 5) * 0.25f - 0.5f;
    mgopt_program_destroy(p);
    p = add_program(u);
    REQUIRE(p != NULL);
    REQUIRE(run_and_eval(p, "palettize_weights{mode=unique,weight_threshold=0}", NULL, got));
    for (i = 0; i < 64; i++) CHECK(got[i] == u[i]);
    mgopt_program_destroy(p);
  }
}

static int32_t signs(void *ud, const char *name, int64_t group, const float *values, int64_t n, int32_t cd,
                     float *lut, uint8_t *indices) {
  int64_t i;
  (void)cd;
  (void)group;
  if (strcmp(name, "w") != 0) return 0;
  *(int *)ud += 1;
  lut[0] = -1.0f;
  lut[1] = 0.0f;
  lut[2] = 1.0f;
  for (i = 0; i < n; i++) indices[i] = values[i] < 0 ? 0 : values[i] > 0 ? 2 : 1;
  return 3;
}

static void test_pass_custom_lut(void) {
  float w[64], got[64];
  mgopt_compress_config cfg;
  mgopt_program *p;
  int i, calls = 0;
  for (i = 0; i < 64; i++) w[i] = (float)(i % 3) - 1.0f + (i % 3 ? 0.5f : 0.0f);
  memset(&cfg, 0, sizeof cfg);
  cfg.palettize_lut = signs;
  cfg.palettize_lut_ud = &calls;
  p = add_program(w);
  REQUIRE(p != NULL);
  REQUIRE(run_and_eval(p, "palettize_weights{mode=custom,granularity=per_grouped_channel,group_size=2,weight_threshold=0}",
                       &cfg, got));
  CHECK_EQ_INT(calls, 4);
  for (i = 0; i < 64; i++) CHECK(got[i] == (w[i] < 0 ? -1.0f : w[i] > 0 ? 1.0f : 0.0f));
  mgopt_program_destroy(p);
  /* no callback: the weight stays */
  p = add_program(w);
  REQUIRE(p != NULL);
  REQUIRE(run_and_eval(p, "palettize_weights{mode=custom,weight_threshold=0}", NULL, got));
  for (i = 0; i < 64; i++) CHECK(got[i] == w[i]);
  mgopt_program_destroy(p);
}

static const test_case tests[] = {
    TEST(test_pack_every_nbits), TEST(test_pack_known_bytes), TEST(test_kmeans_exact),
    TEST(test_kmeans_fixed_point_and_checksum), TEST(test_uniform), TEST(test_unique),
    TEST(test_grouped_unique), TEST(test_vector_and_scale), TEST(test_custom),
    TEST(test_nonfinite_refused), TEST(test_pass_roundtrip_every_nbits), TEST(test_pass_custom_lut),
};
TEST_MAIN(tests)
