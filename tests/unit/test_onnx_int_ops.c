/* tests/unit/test_onnx_int_ops.c — the kernels of ONNX's integer ops (DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv, int32 MatMul) against hand-computed integers: rounding half to even, saturation, negative zero points, per-row/column/channel parameters, int32 wraparound. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <stdlib.h>

/* Counts live bytes: every run frees what it makes. */
typedef struct counting {
  long long live;
} counting;

static void *counting_realloc(void *ctx, void *ptr, size_t old, size_t size) {
  counting *c = (counting *)ctx;
  void *q;
  if (size == 0) {
    if (ptr) c->live -= (long long)old;
    free(ptr);
    return NULL;
  }
  q = realloc(ptr, size);
  if (!q) return NULL;
  c->live += (long long)size - (long long)(ptr ? old : 0);
  return q;
}

typedef struct arg {
  mgopt_dtype dt;
  int32_t rank;
  int64_t shape[4];
  const double *v; /* numel values */
} arg;

typedef struct want {
  mgopt_dtype dt;
  int32_t rank;
  int64_t shape[4];
  const double *v;
} want;

/* Parses src, evaluates it on the inputs and checks nout outputs exactly;
   returns the status of the evaluation (MGOPT_OK when every output matches,
   MGOPT_ERR_VERIFY on a mismatch or a leak). */
static mgopt_status run(const char *src, int32_t nin, const arg *in, int32_t nout, const want *w) {
  counting cnt = {0};
  mgopt_allocator a;
  mgopt_parse_options po;
  mgopt_eval_options eo;
  mgopt_program *p = NULL;
  mgopt_tensor *t[9], *out[3] = {NULL, NULL, NULL};
  mgopt_diag d;
  mgopt_status s;
  int32_t i, j;
  int64_t e;
  a.realloc = counting_realloc;
  a.ctx = &cnt;
  memset(&po, 0, sizeof po);
  po.alloc = &a;
  if (mgopt_mil_parse(src, strlen(src), &po, &p, &d) != MGOPT_OK) {
    printf("  parse error %d:%d: %s\n", d.line, d.col, d.msg);
    return MGOPT_ERR_VERIFY;
  }
  for (i = 0; i < nin; i++) {
    t[i] = mgopt_eval_tensor_new(p, in[i].dt, in[i].rank, in[i].shape);
    for (e = 0; t[i] && e < t[i]->numel; e++) mgopt_tensor_set_f64(t[i], e, in[i].v[e]);
  }
  memset(&eo, 0, sizeof eo);
  eo.op_fn = mgopt_onnx_eval_op;
  s = mgopt_eval(p, NULL, t, nin, out, nout, &eo, &d);
  if (s != MGOPT_OK) printf("  eval: %s\n", d.msg);
  for (j = 0; s == MGOPT_OK && j < nout; j++) {
    const mgopt_tensor *o = out[j];
    if (o->dtype != w[j].dt || o->rank != w[j].rank) {
      printf("  output %d: %s of rank %d\n", (int)j, mgopt_dtype_name((mgopt_dtype)o->dtype), (int)o->rank);
      s = MGOPT_ERR_VERIFY;
      break;
    }
    for (i = 0; i < o->rank; i++)
      if (o->shape[i] != w[j].shape[i]) s = MGOPT_ERR_VERIFY;
    for (e = 0; s == MGOPT_OK && e < o->numel; e++)
      if (mgopt_tensor_get_f64(o, e) != w[j].v[e]) {
        printf("  output %d element %lld: got %.9g, want %.9g\n", (int)j, (long long)e, mgopt_tensor_get_f64(o, e),
               w[j].v[e]);
        s = MGOPT_ERR_VERIFY;
      }
  }
  for (j = 0; j < nout; j++)
    if (out[j]) mgopt_eval_tensor_free(p, out[j]);
  for (i = 0; i < nin; i++) mgopt_eval_tensor_free(p, t[i]);
  mgopt_program_destroy(p);
  if (cnt.live != 0) {
    printf("  %lld bytes leaked\n", cnt.live);
    s = MGOPT_ERR_VERIFY;
  }
  return s;
}

static void test_dynamic_quantize(void) {
  const char *src =
      "main(%x: (4, fp32)) {\n"
      "  %y: (4, uint8), %s: (fp32), %z: (uint8) = onnx::DynamicQuantizeLinear(in0=%x)\n"
      "} -> (%y, %s, %z)\n";
  /* range [-1.5, 253.5]: scale 255 / 255 = 1, zero point round(1.5) = 2;
     253.5 -> round(253.5) + 2 = 256 saturates to 255; 2.5 -> 2 + 2 (half to
     even); -1.5 -> -2 + 2 = 0 */
  static const double x[4] = {-1.5, 253.5, 0, 2.5}, y[4] = {0, 255, 2, 4}, one[1] = {1}, two[1] = {2};
  /* all zeros: scale 1/255 (ONNX's reference), zero point 0 */
  static const double z[4] = {0, 0, 0, 0}, zero[1] = {0};
  double s255[1];
  arg in[1] = {{MGOPT_DT_FP32, 1, {4}, NULL}};
  want w[3] = {{MGOPT_DT_UINT8, 1, {4}, NULL}, {MGOPT_DT_FP32, 0, {0}, NULL}, {MGOPT_DT_UINT8, 0, {0}, NULL}};
  in[0].v = x;
  w[0].v = y;
  w[1].v = one;
  w[2].v = two;
  CHECK(run(src, 1, in, 3, w) == MGOPT_OK);
  s255[0] = (double)(float)(1.0 / 255.0);
  in[0].v = z;
  w[0].v = z;
  w[1].v = s255;
  w[2].v = zero;
  CHECK(run(src, 1, in, 3, w) == MGOPT_OK);
  /* only values >= 0: the range still starts at 0; max 255 gives scale 1,
     zero point 0, and the halves round to even */
  {
    const char *src6 =
        "main(%x: (6, fp32)) {\n"
        "  %y: (6, uint8), %s: (fp32), %z: (uint8) = onnx::DynamicQuantizeLinear(in0=%x)\n"
        "} -> (%y, %s, %z)\n";
    static const double xp[6] = {0, 2.5, 3.5, 255, 0.5, 1.5}, yp[6] = {0, 2, 4, 255, 0, 2};
    arg in6[1] = {{MGOPT_DT_FP32, 1, {6}, NULL}};
    want w6[3] = {{MGOPT_DT_UINT8, 1, {6}, NULL}, {MGOPT_DT_FP32, 0, {0}, NULL}, {MGOPT_DT_UINT8, 0, {0}, NULL}};
    in6[0].v = xp;
    w6[0].v = yp;
    w6[1].v = one;
    w6[2].v = zero;
    CHECK(run(src6, 1, in6, 3, w6) == MGOPT_OK);
  }
}

static void test_matmul_integer(void) {
  /* per-row a_zero_point [1, 4] (uint8), per-column b_zero_point [-2, 2] (int8):
     a - azp = [[0, 1, 2], [3, 1, 2]], b - bzp = [[1, 0], [5, -6], [7, 4]] */
  const char *src =
      "main(%a: (2, 3, uint8), %b: (3, 2, int8), %az: (2, uint8), %bz: (2, int8)) {\n"
      "  %y: (2, 2, int32) = onnx::MatMulInteger(in0=%a, in1=%b, in2=%az, in3=%bz)\n"
      "} -> (%y)\n";
  static const double a[6] = {1, 2, 3, 7, 5, 6}, b[6] = {-1, 2, 3, -4, 5, 6}, az[2] = {1, 4}, bz[2] = {-2, 2};
  static const double y[4] = {19, 2, 22, 2};
  /* the N-D zero points: [2, 1] for a, [2, 1, 2] for a batch of 2 over b
     (batch 1: b - [0, 0] = [[-2, 2], [-2, 2], [-2, 2]]) */
  const char *src_nd =
      "main(%a: (2, 3, uint8), %b: (2, 3, 2, int8), %az: (2, 1, uint8), %bz: (2, 1, 2, int8)) {\n"
      "  %y: (2, 2, 2, int32) = onnx::MatMulInteger(in0=%a, in1=%b, in2=%az, in3=%bz)\n"
      "} -> (%y)\n";
  static const double b2[12] = {-1, 2, 3, -4, 5, 6, -2, 2, -2, 2, -2, 2}, y2[8] = {19, 2, 22, 2, -6, 6, -12, 12},
                      bz2[4] = {-2, 2, 0, 0};
  /* no zero points: int8 x int8 */
  const char *src0 =
      "main(%a: (1, 2, int8), %b: (2, 1, int8)) {\n"
      "  %y: (1, 1, int32) = onnx::MatMulInteger(in0=%a, in1=%b)\n"
      "} -> (%y)\n";
  static const double a0[2] = {-128, -128}, b0[2] = {-128, 127}, y0[1] = {16384 - 16256};
  arg in[4] = {{MGOPT_DT_UINT8, 2, {2, 3}, a},
               {MGOPT_DT_INT8, 2, {3, 2}, b},
               {MGOPT_DT_UINT8, 1, {2}, az},
               {MGOPT_DT_INT8, 1, {2}, bz}};
  want w[1] = {{MGOPT_DT_INT32, 2, {2, 2}, y}};
  arg in2[4] = {{MGOPT_DT_UINT8, 2, {2, 3}, a},
                {MGOPT_DT_INT8, 3, {2, 3, 2}, b2},
                {MGOPT_DT_UINT8, 2, {2, 1}, az},
                {MGOPT_DT_INT8, 3, {2, 1, 2}, bz2}};
  want w2[1] = {{MGOPT_DT_INT32, 3, {2, 2, 2}, y2}};
  arg in0[2] = {{MGOPT_DT_INT8, 2, {1, 2}, a0}, {MGOPT_DT_INT8, 2, {2, 1}, b0}};
  want w0[1] = {{MGOPT_DT_INT32, 2, {1, 1}, y0}};
  CHECK(run(src, 4, in, 1, w) == MGOPT_OK);
  CHECK(run(src_nd, 4, in2, 1, w2) == MGOPT_OK);
  CHECK(run(src0, 2, in0, 1, w0) == MGOPT_OK);
}

/* The int32 accumulator wraps: 33100 products of 255 * (-128 - 127) sum to
   -2152327500, stored as -2152327500 + 2^32 = 2142639796. */
static void test_matmul_integer_wraps(void) {
  enum { K = 33100 };
  const char *src =
      "main(%a: (1, 33100, uint8), %b: (33100, 1, int8), %bz: (int8)) {\n"
      "  %y: (1, 1, int32) = onnx::MatMulInteger(in0=%a, in1=%b, in3=%bz)\n"
      "} -> (%y)\n";
  double *a = (double *)malloc(sizeof(double) * K), *b = (double *)malloc(sizeof(double) * K);
  static const double bz[1] = {127}, y[1] = {2142639796.0};
  arg in[3] = {{MGOPT_DT_UINT8, 2, {1, K}, NULL}, {MGOPT_DT_INT8, 2, {K, 1}, NULL}, {MGOPT_DT_INT8, 0, {0}, bz}};
  want w[1] = {{MGOPT_DT_INT32, 2, {1, 1}, y}};
  int i;
  REQUIRE(a && b);
  for (i = 0; i < K; i++) {
    a[i] = 255;
    b[i] = -128;
  }
  in[0].v = a;
  in[1].v = b;
  CHECK(-2152327500.0 + 4294967296.0 == y[0]);
  CHECK(run(src, 3, in, 1, w) == MGOPT_OK);
  free(a);
  free(b);
}

/* MatMul of int32: exact products, the sum modulo 2^32 */
static void test_matmul_int32(void) {
  const char *src =
      "main(%a: (2, 2, int32), %b: (2, 2, int32)) {\n"
      "  %y: (2, 2, int32) = onnx::MatMul(in0=%a, in1=%b)\n"
      "} -> (%y)\n";
  static const double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, y[4] = {19, 22, 43, 50};
  static const double big[4] = {1073741824, 1073741824, -2147483648.0, 2147483647}, four[4] = {4, 1, 4, -1};
  static const double wrapped[4] = {0, 0, -4, 1};
  arg in[2] = {{MGOPT_DT_INT32, 2, {2, 2}, a}, {MGOPT_DT_INT32, 2, {2, 2}, b}};
  want w[1] = {{MGOPT_DT_INT32, 2, {2, 2}, y}};
  CHECK(run(src, 2, in, 1, w) == MGOPT_OK);
  /* 2^30 * 4 + 2^30 * 4 = 2^33 -> 0; -2^31 * 4 + (2^31 - 1) * 4 = -4 past int32 on the way;
     -2^31 * 1 + (2^31 - 1) * -1 = 1 - 2^32 -> 1 */
  in[0].v = big;
  in[1].v = four;
  w[0].v = wrapped;
  CHECK(run(src, 2, in, 1, w) == MGOPT_OK);
}

static void test_conv_integer(void) {
  /* x - 1 = [[0, 1, 2], [3, 4, 5], [6, 7, 8]] padded at the end (with the
     zero point: adds 0), stride 2; per-channel w_zero_point [0, -1]:
     kernel 0 [[1, 0], [0, -1]], kernel 1 [[-1, 0], [1, 2]] + 1 = [[0, 1], [2, 3]] */
  const char *src =
      "main(%x: (1, 1, 3, 3, uint8), %w: (2, 1, 2, 2, int8), %xz: (uint8), %wz: (2, int8)) {\n"
      "  %y: (1, 2, 2, 2, int32) = onnx::ConvInteger(in0=%x, in1=%w, in2=%xz, in3=%wz, pads=[0, 0, 1, 1], strides=[2, 2])\n"
      "} -> (%y)\n";
  static const double x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, wt[8] = {1, 0, 0, -1, -1, 0, 1, 2}, xz[1] = {1},
                      wz[2] = {0, -1};
  static const double y[8] = {-4, 2, 6, 8, 19, 10, 7, 0};
  /* SAME_UPPER, stride 1, 1x1 kernel, group 2 */
  const char *src_g =
      "main(%x: (1, 2, 1, 2, uint8), %w: (2, 1, 1, 1, uint8)) {\n"
      "  %y: (1, 2, 1, 2, int32) = onnx::ConvInteger(in0=%x, in1=%w, group=2, auto_pad=\"SAME_UPPER\")\n"
      "} -> (%y)\n";
  static const double xg[4] = {1, 2, 3, 4}, wg[2] = {10, 255}, yg[4] = {10, 20, 765, 1020};
  arg in[4] = {{MGOPT_DT_UINT8, 4, {1, 1, 3, 3}, x},
               {MGOPT_DT_INT8, 4, {2, 1, 2, 2}, wt},
               {MGOPT_DT_UINT8, 0, {0}, xz},
               {MGOPT_DT_INT8, 1, {2}, wz}};
  want w[1] = {{MGOPT_DT_INT32, 4, {1, 2, 2, 2}, y}};
  arg ing[2] = {{MGOPT_DT_UINT8, 4, {1, 2, 1, 2}, xg}, {MGOPT_DT_UINT8, 4, {2, 1, 1, 1}, wg}};
  want wgw[1] = {{MGOPT_DT_INT32, 4, {1, 2, 1, 2}, yg}};
  CHECK(run(src, 4, in, 1, w) == MGOPT_OK);
  CHECK(run(src_g, 2, ing, 1, wgw) == MGOPT_OK);
}

static void test_qlinear_matmul(void) {
  /* a - 10 = [0, 10]; b - (-1) = [[2, -2, 128, -127], [5, -4, 128, -127]];
     acc = [50, -40, 1280, -1270]; multipliers 0.5 * b_scale / 0.5 =
     [0.25, 0.5, 0.25, 0.25]: [12.5, -20, 320, -317.5] -> half to even
     [12, -20, 320, -318] + (-3) -> saturated to int8 [9, -23, 127, -128] */
  const char *src =
      "main(%a: (1, 2, uint8), %as: (fp32), %az: (uint8), %b: (2, 4, int8), %bs: (4, fp32), %bz: (4, int8),\n"
      "     %ys: (fp32), %yz: (int8)) {\n"
      "  %y: (1, 4, int8) = onnx::QLinearMatMul(in0=%a, in1=%as, in2=%az, in3=%b, in4=%bs, in5=%bz, in6=%ys, in7=%yz)\n"
      "} -> (%y)\n";
  static const double a[2] = {10, 20}, as[1] = {0.5}, az[1] = {10}, b[8] = {1, -3, 127, -128, 4, -5, 127, -128},
                      bs[4] = {0.25, 0.5, 0.25, 0.25}, bz[4] = {-1, -1, -1, -1}, ys[1] = {0.5}, yz[1] = {-3};
  static const double y[4] = {9, -23, 127, -128};
  arg in[8] = {{MGOPT_DT_UINT8, 2, {1, 2}, a}, {MGOPT_DT_FP32, 0, {0}, as}, {MGOPT_DT_UINT8, 0, {0}, az},
               {MGOPT_DT_INT8, 2, {2, 4}, b},  {MGOPT_DT_FP32, 1, {4}, bs}, {MGOPT_DT_INT8, 1, {4}, bz},
               {MGOPT_DT_FP32, 0, {0}, ys},    {MGOPT_DT_INT8, 0, {0}, yz}};
  want w[1] = {{MGOPT_DT_INT8, 2, {1, 4}, y}};
  CHECK(run(src, 8, in, 1, w) == MGOPT_OK);
}

static void test_qlinear_conv(void) {
  /* x - 10 = [0, 2, 4, 6]; per-channel w: (3 - 0) * 0.5 and (-2 - 1) * 1.0;
     bias [1, -2]; y_scale 1, y_zero_point 252 (uint8):
     channel 0: (3x + 1) * 0.25 = [0.25, 1.75, 3.25, 4.75] -> [0, 2, 3, 5] + 252 -> [252, 254, 255, 255 (257)]
     channel 1: (-3x - 2) * 0.5 = [-1, -4, -7, -10] + 252 -> [251, 248, 245, 242] */
  const char *src =
      "main(%x: (1, 1, 2, 2, uint8), %xs: (fp32), %xz: (uint8), %w: (2, 1, 1, 1, int8), %ws: (2, fp32), %wz: (2, int8),\n"
      "     %ys: (fp32), %yz: (uint8), %bias: (2, int32)) {\n"
      "  %y: (1, 2, 2, 2, uint8) = onnx::QLinearConv(in0=%x, in1=%xs, in2=%xz, in3=%w, in4=%ws, in5=%wz, in6=%ys, in7=%yz, in8=%bias)\n"
      "} -> (%y)\n";
  static const double x[4] = {10, 12, 14, 16}, xs[1] = {0.5}, xz[1] = {10}, wt[2] = {3, -2}, ws[2] = {0.5, 1.0},
                      wz[2] = {0, 1}, ys[1] = {1.0}, yz[1] = {252}, bias[2] = {1, -2};
  static const double y[8] = {252, 254, 255, 255, 251, 248, 245, 242};
  arg in[9] = {{MGOPT_DT_UINT8, 4, {1, 1, 2, 2}, x}, {MGOPT_DT_FP32, 0, {0}, xs}, {MGOPT_DT_UINT8, 0, {0}, xz},
               {MGOPT_DT_INT8, 4, {2, 1, 1, 1}, wt}, {MGOPT_DT_FP32, 1, {2}, ws}, {MGOPT_DT_INT8, 1, {2}, wz},
               {MGOPT_DT_FP32, 0, {0}, ys},          {MGOPT_DT_UINT8, 0, {0}, yz}, {MGOPT_DT_INT32, 1, {2}, bias}};
  want w[1] = {{MGOPT_DT_UINT8, 4, {1, 2, 2, 2}, y}};
  CHECK(run(src, 9, in, 1, w) == MGOPT_OK);
}

/* QLinearMatMul is not dequantize -> matmul -> quantize (src/onnx/map_quant.c):
   every scale 0.1, a = [[1]], b = [[5]]: the operator rounds 5 *
   fp32(fp32(0.1 * 0.1) / 0.1) = 0.50000004 to 1, the chain rounds
   fp32(0.1 * 0.5) / 0.1 = 0.5 to 0. */
static void test_qlinear_is_not_the_float_chain(void) {
  const char *src =
      "main(%a: (1, 1, uint8), %b: (1, 1, uint8), %s: (fp32), %z: (uint8)) {\n"
      "  %q: (1, 1, uint8) = onnx::QLinearMatMul(in0=%a, in1=%s, in2=%z, in3=%b, in4=%s, in5=%z, in6=%s, in7=%z)\n"
      "  %da: (1, 1, fp32) = dequantize(input=%a, zero_point=%z, scale=%s)\n"
      "  %db: (1, 1, fp32) = dequantize(input=%b, zero_point=%z, scale=%s)\n"
      "  %m: (1, 1, fp32) = matmul(x=%da, y=%db)\n"
      "  %c: (1, 1, uint8) = quantize(input=%m, zero_point=%z, scale=%s, output_dtype=\"uint8\")\n"
      "} -> (%q, %c)\n";
  static const double a[1] = {1}, b[1] = {5}, s01[1] = {0.1f}, z[1] = {0}, one[1] = {1}, zero[1] = {0};
  arg in[4] = {{MGOPT_DT_UINT8, 2, {1, 1}, a}, {MGOPT_DT_UINT8, 2, {1, 1}, b}, {MGOPT_DT_FP32, 0, {0}, s01},
               {MGOPT_DT_UINT8, 0, {0}, z}};
  want w[2] = {{MGOPT_DT_UINT8, 2, {1, 1}, one}, {MGOPT_DT_UINT8, 2, {1, 1}, zero}};
  CHECK(run(src, 4, in, 2, w) == MGOPT_OK);
}

/* What the kernels do not define is "cannot evaluate", with nothing leaked. */
static void test_declines(void) {
  const char *src16 =
      "main(%a: (1, 2, int16), %b: (2, 1, int16)) {\n"
      "  %y: (1, 1, int32) = onnx::MatMulInteger(in0=%a, in1=%b)\n"
      "} -> (%y)\n";
  const char *src_zp =
      "main(%a: (2, 3, uint8), %b: (3, 2, uint8), %az: (3, uint8)) {\n"
      "  %y: (2, 2, int32) = onnx::MatMulInteger(in0=%a, in1=%b, in2=%az)\n"
      "} -> (%y)\n";
  static const double v[6] = {1, 2, 3, 4, 5, 6};
  arg in16[2] = {{MGOPT_DT_INT16, 2, {1, 2}, v}, {MGOPT_DT_INT16, 2, {2, 1}, v}};
  arg inzp[3] = {{MGOPT_DT_UINT8, 2, {2, 3}, v}, {MGOPT_DT_UINT8, 2, {3, 2}, v}, {MGOPT_DT_UINT8, 1, {3}, v}};
  want w[1] = {{MGOPT_DT_INT32, 2, {1, 1}, v}};
  CHECK(run(src16, 2, in16, 1, w) == MGOPT_ERR_UNSUPPORTED);
  CHECK(run(src_zp, 3, inzp, 1, w) == MGOPT_ERR_UNSUPPORTED);
}

static const test_case tests[] = {
    TEST(test_dynamic_quantize), TEST(test_matmul_integer), TEST(test_matmul_integer_wraps),
    TEST(test_conv_integer),     TEST(test_qlinear_matmul), TEST(test_qlinear_conv),
    TEST(test_qlinear_is_not_the_float_chain), TEST(test_declines), TEST(test_matmul_int32),
};
TEST_MAIN(tests)
