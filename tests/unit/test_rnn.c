/* tests/unit/test_rnn.c — the recurrent kernels (ONNX LSTM, GRU, RNN through mgopt_onnx_eval_op; MIL's lstm, gru, rnn) against scalar double-precision references. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <stdlib.h>
#include <math.h>

/* ---------------------------------------------------------------- fixtures */

typedef struct spec {
  mgopt_dtype dt;
  int32_t rank;
  int64_t shape[4];
  double v[16];
} spec;

static double sig(double x) { return 1.0 / (1.0 + exp(-x)); }

/* Parses src, evaluates it with the ONNX-op callback on inputs made from
   specs; out[nout] receives the results (free with mgopt_eval_tensor_free on
   *pp). Returns the status; *pp is the program (destroy it). */
static mgopt_status eval(const char *src, int32_t nin, const spec *in, mgopt_tensor **out, int32_t nout,
                         mgopt_program **pp) {
  mgopt_program *p = NULL;
  mgopt_tensor *t[12];
  mgopt_eval_options o;
  mgopt_diag d;
  mgopt_status s;
  int32_t i;
  *pp = NULL;
  if (mgopt_mil_parse(src, strlen(src), NULL, &p, &d) != MGOPT_OK) {
    printf("  parse error %d:%d: %s\n", d.line, d.col, d.msg);
    return d.status;
  }
  *pp = p;
  for (i = 0; i < nin; i++) {
    int64_t k;
    t[i] = mgopt_eval_tensor_new(p, in[i].dt, in[i].rank, in[i].shape);
    for (k = 0; t[i] && k < t[i]->numel; k++) mgopt_tensor_set_f64(t[i], k, in[i].v[k]);
  }
  memset(&o, 0, sizeof o);
  o.op_fn = mgopt_onnx_eval_op;
  s = mgopt_eval(p, NULL, t, nin, out, nout, &o, &d);
  if (s != MGOPT_OK) printf("  eval: %s\n", d.msg);
  for (i = 0; i < nin; i++) mgopt_eval_tensor_free(p, t[i]);
  return s;
}

/* Every element of t within 1e-6 (relative) of want[n] as fp32 rounds it. */
static int near_all(const mgopt_tensor *t, const double *want, int64_t n) {
  int64_t i;
  if (!t || t->numel != n) {
    printf("  %lld elements, want %lld\n", t ? (long long)t->numel : -1LL, (long long)n);
    return 0;
  }
  for (i = 0; i < n; i++) {
    double g = mgopt_tensor_get_f64(t, i), w = want[i];
    if (fabs(g - w) > 1e-6 * (1.0 + fabs(w))) {
      printf("  element %lld: got %.9g, want %.9g\n", (long long)i, g, w);
      return 0;
    }
  }
  return 1;
}

static int shape_is(const mgopt_tensor *t, int32_t rank, int64_t a, int64_t b, int64_t c, int64_t d) {
  int64_t s[4];
  int32_t i;
  s[0] = a, s[1] = b, s[2] = c, s[3] = d;
  if (!t || t->rank != rank) return 0;
  for (i = 0; i < rank; i++)
    if (t->shape[i] != s[i]) return 0;
  return 1;
}

static void release(mgopt_program *p, mgopt_tensor **out, int32_t n) {
  int32_t i;
  for (i = 0; i < n; i++)
    if (out[i]) mgopt_eval_tensor_free(p, out[i]);
  mgopt_program_destroy(p);
}

/* ---------------------------------------------------------------- RNN */

/* H = I = 1: h' = tanh(w x + r h + wb + rb) over x[t] for t in order. */
static void ref_rnn(const double *x, int64_t len, int rev, double w, double r, double wb, double rb, double h0,
                    double *y, double *yh) {
  int64_t k;
  double h = h0;
  for (k = 0; k < len; k++) {
    int64_t t = rev ? len - 1 - k : k;
    h = tanh(w * x[t] + r * h + wb + rb);
    y[t] = h;
  }
  *yh = h;
}

static void test_rnn_bidirectional(void) {
  /* S 3, batch 2, sequence_lens {3, 2}: batch 1 stops after 2 steps and its
     reverse direction starts at t = 1; Y is 0 past a batch's length */
  const char *src =
      "main(%x: (3, 2, 1, fp32), %w: (2, 1, 1, fp32), %r: (2, 1, 1, fp32), %b: (2, 2, fp32), %l: (2, int32),"
      " %h: (2, 2, 1, fp32)) {\n"
      "  %y: (3, 2, 2, 1, fp32), %yh: (2, 2, 1, fp32) = onnx::RNN(in0=%x, in1=%w, in2=%r, in3=%b, in4=%l, in5=%h,"
      " hidden_size=1, direction=\"bidirectional\")\n"
      "} -> (%y, %yh)\n";
  spec in[6] = {{MGOPT_DT_FP32, 3, {3, 2, 1}, {0.5, -1, 1.5, 2, -0.25, 7}},
                {MGOPT_DT_FP32, 3, {2, 1, 1}, {0.75, -0.5}},
                {MGOPT_DT_FP32, 3, {2, 1, 1}, {0.25, 1.25}},
                {MGOPT_DT_FP32, 2, {2, 2}, {0.125, -0.375, 0.5, 0.0625}},
                {MGOPT_DT_INT32, 1, {2}, {3, 2}},
                {MGOPT_DT_FP32, 3, {2, 2, 1}, {0.1, -0.2, 0.3, 0.4}}};
  double want_y[12], want_h[4], xb[3], yb[3];
  mgopt_tensor *out[2] = {NULL, NULL};
  mgopt_program *p;
  int d, b, t;
  memset(want_y, 0, sizeof want_y);
  for (d = 0; d < 2; d++)
    for (b = 0; b < 2; b++) {
      int len = b == 0 ? 3 : 2;
      for (t = 0; t < 3; t++) xb[t] = in[0].v[t * 2 + b];
      ref_rnn(xb, len, d, in[1].v[d], in[2].v[d], in[3].v[d * 2], in[3].v[d * 2 + 1], in[5].v[d * 2 + b], yb,
              &want_h[d * 2 + b]);
      for (t = 0; t < len; t++) want_y[(t * 2 + d) * 2 + b] = yb[t];
    }
  CHECK(eval(src, 6, in, out, 2, &p) == MGOPT_OK);
  CHECK(shape_is(out[0], 4, 3, 2, 2, 1) && near_all(out[0], want_y, 12));
  CHECK(shape_is(out[1], 3, 2, 2, 1, 0) && near_all(out[1], want_h, 4));
  release(p, out, 2);
}

static void test_rnn_layout1_reverse(void) {
  /* layout 1: X [batch, S, I], Y [batch, S, D, H]; activation Affine */
  const char *src =
      "main(%x: (1, 3, 1, fp32), %w: (1, 1, 1, fp32), %r: (1, 1, 1, fp32)) {\n"
      "  %y: (1, 3, 1, 1, fp32), %yh: (1, 1, 1, fp32) = onnx::RNN(in0=%x, in1=%w, in2=%r, hidden_size=1, layout=1,"
      " direction=\"reverse\", activations=[\"Affine\"], activation_alpha=[0.5], activation_beta=[2.0])\n"
      "} -> (%y, %yh)\n";
  spec in[3] = {{MGOPT_DT_FP32, 3, {1, 3, 1}, {1, 2, 3}},
                {MGOPT_DT_FP32, 3, {1, 1, 1}, {2}},
                {MGOPT_DT_FP32, 3, {1, 1, 1}, {-1}}};
  double y[3], h = 0.0;
  mgopt_tensor *out[2] = {NULL, NULL};
  mgopt_program *p;
  int t;
  for (t = 2; t >= 0; t--) y[t] = h = 0.5 * (2.0 * in[0].v[t] - h) + 2.0;
  CHECK(eval(src, 3, in, out, 2, &p) == MGOPT_OK);
  CHECK(shape_is(out[0], 4, 1, 3, 1, 1) && near_all(out[0], y, 3));
  CHECK(shape_is(out[1], 3, 1, 1, 1, 0) && near_all(out[1], &h, 1));
  release(p, out, 2);
}

/* ---------------------------------------------------------------- GRU */

static void test_gru_linear_before_reset(void) {
  /* H = I = 1, gates z, r, h; the recurrent bias of the h gate is inside
     the reset product only with linear_before_reset 1 */
  const char *src0 =
      "main(%x: (2, 1, 1, fp32), %w: (1, 3, 1, fp32), %r: (1, 3, 1, fp32), %b: (1, 6, fp32), %h: (1, 1, 1, fp32)) {\n"
      "  %y: (2, 1, 1, 1, fp32) = onnx::GRU(in0=%x, in1=%w, in2=%r, in3=%b, in5=%h, hidden_size=1)\n"
      "} -> (%y)\n";
  const char *src1 =
      "main(%x: (2, 1, 1, fp32), %w: (1, 3, 1, fp32), %r: (1, 3, 1, fp32), %b: (1, 6, fp32), %h: (1, 1, 1, fp32)) {\n"
      "  %y: (2, 1, 1, 1, fp32) = onnx::GRU(in0=%x, in1=%w, in2=%r, in3=%b, in5=%h, hidden_size=1,"
      " linear_before_reset=1)\n"
      "} -> (%y)\n";
  spec in[5] = {{MGOPT_DT_FP32, 3, {2, 1, 1}, {0.5, -1.5}},
                {MGOPT_DT_FP32, 3, {1, 3, 1}, {0.3, -0.6, 0.9}},
                {MGOPT_DT_FP32, 3, {1, 3, 1}, {0.2, 0.7, -1.1}},
                {MGOPT_DT_FP32, 2, {1, 6}, {0.1, 0.2, 0.3, -0.4, 0.5, 0.8}},
                {MGOPT_DT_FP32, 3, {1, 1, 1}, {0.25}}};
  const double *w = in[1].v, *r = in[2].v, *b = in[3].v;
  double y0[2], y1[2], h0 = in[4].v[0], h1 = in[4].v[0];
  mgopt_tensor *out[1] = {NULL};
  mgopt_program *p;
  int t;
  for (t = 0; t < 2; t++) {
    double x = in[0].v[t], z, rr, n;
    z = sig(w[0] * x + r[0] * h0 + b[0] + b[3]);
    rr = sig(w[1] * x + r[1] * h0 + b[1] + b[4]);
    n = tanh(w[2] * x + r[2] * (rr * h0) + b[5] + b[2]);
    y0[t] = h0 = (1 - z) * n + z * h0;
    z = sig(w[0] * x + r[0] * h1 + b[0] + b[3]);
    rr = sig(w[1] * x + r[1] * h1 + b[1] + b[4]);
    n = tanh(w[2] * x + rr * (r[2] * h1 + b[5]) + b[2]);
    y1[t] = h1 = (1 - z) * n + z * h1;
  }
  CHECK(eval(src0, 5, in, out, 1, &p) == MGOPT_OK);
  CHECK(shape_is(out[0], 4, 2, 1, 1, 1) && near_all(out[0], y0, 2));
  release(p, out, 1);
  out[0] = NULL;
  CHECK(eval(src1, 5, in, out, 1, &p) == MGOPT_OK);
  CHECK(near_all(out[0], y1, 2));
  release(p, out, 1);
  CHECK(fabs(y0[1] - y1[1]) > 1e-3);
}

/* ---------------------------------------------------------------- LSTM */

static void test_lstm_peepholes_clip(void) {
  /* H = I = 1, gates i, o, f, c; peepholes [Pi, Po, Pf]; clip 0.5 on every
     gate's pre-activation (not on h's input); f = HardSigmoid(alpha 0.25,
     beta 0.4), g = Tanh, h = Softsign; the three outputs */
  const char *src =
      "main(%x: (2, 1, 1, fp32), %w: (1, 4, 1, fp32), %r: (1, 4, 1, fp32), %b: (1, 8, fp32), %h: (1, 1, 1, fp32),"
      " %c: (1, 1, 1, fp32), %pp: (1, 3, fp32)) {\n"
      "  %y: (2, 1, 1, 1, fp32), %yh: (1, 1, 1, fp32), %yc: (1, 1, 1, fp32) = onnx::LSTM(in0=%x, in1=%w, in2=%r,"
      " in3=%b, in5=%h, in6=%c, in7=%pp, hidden_size=1, clip=0.5,"
      " activations=[\"HardSigmoid\", \"Tanh\", \"Softsign\"], activation_alpha=[0.25], activation_beta=[0.4])\n"
      "} -> (%y, %yh, %yc)\n";
  spec in[7] = {{MGOPT_DT_FP32, 3, {2, 1, 1}, {0.5, -2}},
                {MGOPT_DT_FP32, 3, {1, 4, 1}, {0.3, -0.6, 0.9, 1.2}},
                {MGOPT_DT_FP32, 3, {1, 4, 1}, {0.2, 0.7, -1.1, 0.4}},
                {MGOPT_DT_FP32, 2, {1, 8}, {0.1, 0.2, 0.3, -0.4, 0.5, 0.8, -0.2, 0.05}},
                {MGOPT_DT_FP32, 3, {1, 1, 1}, {0.25}},
                {MGOPT_DT_FP32, 3, {1, 1, 1}, {-0.75}},
                {MGOPT_DT_FP32, 2, {1, 3}, {0.5, -0.25, 1.5}}};
  const double *w = in[1].v, *r = in[2].v, *b = in[3].v, *pp = in[6].v;
  double y[2], h = in[4].v[0], c = in[5].v[0];
  mgopt_tensor *out[3] = {NULL, NULL, NULL};
  mgopt_program *p;
  int t;
#define CL(v) ((v) < -0.5 ? -0.5 : (v) > 0.5 ? 0.5 : (v))
#define HS(v) (0.25 * (v) + 0.4 < 0 ? 0.0 : 0.25 * (v) + 0.4 > 1 ? 1.0 : 0.25 * (v) + 0.4)
  for (t = 0; t < 2; t++) {
    double x = in[0].v[t], ig, og, fg, cg, a;
    a = CL(w[0] * x + r[0] * h + pp[0] * c + b[0] + b[4]);
    ig = HS(a);
    a = CL(w[2] * x + r[2] * h + pp[2] * c + b[2] + b[6]);
    fg = HS(a);
    cg = tanh(CL(w[3] * x + r[3] * h + b[3] + b[7]));
    c = fg * c + ig * cg;
    a = CL(w[1] * x + r[1] * h + pp[1] * c + b[1] + b[5]);
    og = HS(a);
    y[t] = h = og * (c / (1.0 + fabs(c)));
  }
#undef CL
#undef HS
  CHECK(eval(src, 7, in, out, 3, &p) == MGOPT_OK);
  CHECK(shape_is(out[0], 4, 2, 1, 1, 1) && near_all(out[0], y, 2));
  CHECK(near_all(out[1], &h, 1));
  CHECK(near_all(out[2], &c, 1));
  release(p, out, 3);
}

static void test_lstm_input_forget(void) {
  /* input_forget couples f = 1 - i; default activations */
  const char *src =
      "main(%x: (3, 1, 1, fp32), %w: (1, 4, 1, fp32), %r: (1, 4, 1, fp32)) {\n"
      "  %y: (3, 1, 1, 1, fp32), %yh: (1, 1, 1, fp32), %yc: (1, 1, 1, fp32) = onnx::LSTM(in0=%x, in1=%w, in2=%r,"
      " hidden_size=1, input_forget=1)\n"
      "} -> (%y, %yh, %yc)\n";
  spec in[3] = {{MGOPT_DT_FP32, 3, {3, 1, 1}, {1, -1, 0.5}},
                {MGOPT_DT_FP32, 3, {1, 4, 1}, {0.3, -0.6, 0.9, 1.2}},
                {MGOPT_DT_FP32, 3, {1, 4, 1}, {0.2, 0.7, -1.1, 0.4}}};
  const double *w = in[1].v, *r = in[2].v;
  double y[3], h = 0.0, c = 0.0;
  mgopt_tensor *out[3] = {NULL, NULL, NULL};
  mgopt_program *p;
  int t;
  for (t = 0; t < 3; t++) {
    double x = in[0].v[t], ig = sig(w[0] * x + r[0] * h), og = sig(w[1] * x + r[1] * h), cg = tanh(w[3] * x + r[3] * h);
    c = (1.0 - ig) * c + ig * cg;
    y[t] = h = og * tanh(c);
  }
  CHECK(eval(src, 3, in, out, 3, &p) == MGOPT_OK);
  CHECK(near_all(out[0], y, 3));
  CHECK(near_all(out[1], &h, 1));
  CHECK(near_all(out[2], &c, 1));
  release(p, out, 3);
}

/* ---------------------------------------------------------------- MIL's lstm and gru */

static void test_mil_lstm_matches_onnx(void) {
  /* a bidirectional lstm (gates i, f, o, z; one bias; states [B, 2H]) and
     the ONNX LSTM with the same weights in (i, o, f, c) order */
  const char *mil =
      "main(%x: (2, 1, 1, fp32), %h: (1, 2, fp32), %c: (1, 2, fp32), %wi: (4, 1, fp32), %wh: (4, 1, fp32), %b: (4, fp32),"
      " %wib: (4, 1, fp32), %whb: (4, 1, fp32), %bb: (4, fp32)) {\n"
      "  %y: (2, 1, 2, fp32), %yh: (1, 2, fp32), %yc: (1, 2, fp32) = lstm(x=%x, initial_h=%h, initial_c=%c, weight_ih=%wi,"
      " weight_hh=%wh, bias=%b, weight_ih_back=%wib, weight_hh_back=%whb, bias_back=%bb, direction=\"bidirectional\","
      " output_sequence=true)\n"
      "} -> (%y, %yh, %yc)\n";
  const char *onnx =
      "main(%x: (2, 1, 1, fp32), %w: (2, 4, 1, fp32), %r: (2, 4, 1, fp32), %b: (2, 8, fp32), %h: (2, 1, 1, fp32),"
      " %c: (2, 1, 1, fp32)) {\n"
      "  %y: (2, 2, 1, 1, fp32), %yh: (2, 1, 1, fp32), %yc: (2, 1, 1, fp32) = onnx::LSTM(in0=%x, in1=%w, in2=%r, in3=%b,"
      " in5=%h, in6=%c, hidden_size=1, direction=\"bidirectional\")\n"
      "} -> (%y, %yh, %yc)\n";
  /* MIL order i, f, o, z -> ONNX i, o, f, c: ONNX q takes MIL from[q] */
  static const int from[4] = {0, 2, 1, 3};
  spec m[9] = {{MGOPT_DT_FP32, 3, {2, 1, 1}, {0.5, -2}},
               {MGOPT_DT_FP32, 2, {1, 2}, {0.25, -0.5}},
               {MGOPT_DT_FP32, 2, {1, 2}, {-0.75, 0.125}},
               {MGOPT_DT_FP32, 2, {4, 1}, {0.3, 0.9, -0.6, 1.2}},
               {MGOPT_DT_FP32, 2, {4, 1}, {0.2, -1.1, 0.7, 0.4}},
               {MGOPT_DT_FP32, 1, {4}, {0.6, 0.1, 0.7, -0.35}},
               {MGOPT_DT_FP32, 2, {4, 1}, {-0.4, 0.8, 0.5, -1}},
               {MGOPT_DT_FP32, 2, {4, 1}, {0.6, 0.3, -0.9, 0.1}},
               {MGOPT_DT_FP32, 1, {4}, {-0.1, 0.2, 0.3, 0.4}}};
  spec o[6] = {{MGOPT_DT_FP32, 3, {2, 1, 1}, {0.5, -2}},
               {MGOPT_DT_FP32, 3, {2, 4, 1}, {0}},
               {MGOPT_DT_FP32, 3, {2, 4, 1}, {0}},
               {MGOPT_DT_FP32, 2, {2, 8}, {0}},
               {MGOPT_DT_FP32, 3, {2, 1, 1}, {0.25, -0.5}},
               {MGOPT_DT_FP32, 3, {2, 1, 1}, {-0.75, 0.125}}};
  mgopt_tensor *mo[3] = {NULL, NULL, NULL}, *oo[3] = {NULL, NULL, NULL};
  mgopt_program *mp, *op;
  double want[4];
  int q, d;
  for (d = 0; d < 2; d++)
    for (q = 0; q < 4; q++) {
      o[1].v[d * 4 + q] = m[d ? 6 : 3].v[from[q]];
      o[2].v[d * 4 + q] = m[d ? 7 : 4].v[from[q]];
      o[3].v[d * 8 + q] = m[d ? 8 : 5].v[from[q]];
    }
  CHECK(eval(mil, 9, m, mo, 3, &mp) == MGOPT_OK);
  CHECK(eval(onnx, 6, o, oo, 3, &op) == MGOPT_OK);
  if (mo[0] && oo[0]) {
    /* ONNX Y [t, d, 0, 0] is MIL's [t, 0, d] */
    for (q = 0; q < 4; q++) want[q] = mgopt_tensor_get_f64(oo[0], q);
    CHECK(shape_is(mo[0], 3, 2, 1, 2, 0) && near_all(mo[0], want, 4));
    for (q = 0; q < 2; q++) want[q] = mgopt_tensor_get_f64(oo[1], q);
    CHECK(near_all(mo[1], want, 2));
    for (q = 0; q < 2; q++) want[q] = mgopt_tensor_get_f64(oo[2], q);
    CHECK(near_all(mo[2], want, 2));
  }
  release(mp, mo, 3);
  release(op, oo, 3);
}

static void test_mil_gru_reverse(void) {
  /* gates (r, o, z), one bias, reset before the recurrent product; reverse
     lists the states in processing order; fp16 output rounded once */
  const char *src =
      "main(%x: (2, 1, 1, fp16), %h: (1, 1, fp16), %wi: (3, 1, fp16), %wh: (3, 1, fp16), %b: (3, fp16)) {\n"
      "  %y: (2, 1, 1, fp16), %yh: (1, 1, fp16) = gru(x=%x, initial_h=%h, weight_ih=%wi, weight_hh=%wh, bias=%b,"
      " direction=\"reverse\", output_sequence=true)\n"
      "} -> (%y, %yh)\n";
  spec in[5] = {{MGOPT_DT_FP16, 3, {2, 1, 1}, {0.5, -1.5}},
                {MGOPT_DT_FP16, 2, {1, 1}, {0.25}},
                {MGOPT_DT_FP16, 2, {3, 1}, {-0.625, 0.875, 0.3125}},
                {MGOPT_DT_FP16, 2, {3, 1}, {0.75, -1.125, 0.25}},
                {MGOPT_DT_FP16, 1, {3}, {-0.25, 1.125, 0.375}}};
  const double *w = in[2].v, *r = in[3].v, *b = in[4].v;
  double y[2], h = in[1].v[0];
  mgopt_tensor *out[2] = {NULL, NULL};
  mgopt_program *p;
  int k;
  for (k = 0; k < 2; k++) {
    double x = in[0].v[1 - k], rr = sig(w[0] * x + r[0] * h + b[0]), z = sig(w[2] * x + r[2] * h + b[2]);
    double o = tanh(w[1] * x + r[1] * (rr * h) + b[1]);
    h = (1 - z) * o + z * h;
    y[k] = mgopt_f16_to_f32(mgopt_f32_to_f16((float)h));
  }
  CHECK(eval(src, 5, in, out, 2, &p) == MGOPT_OK);
  CHECK(out[0] && out[0]->dtype == MGOPT_DT_FP16 && near_all(out[0], y, 2));
  CHECK(near_all(out[1], &y[1], 1));
  release(p, out, 2);
}

/* ---------------------------------------------------------------- errors */

static void test_errors(void) {
  const char *too_long =
      "main(%x: (2, 1, 1, fp32), %w: (1, 1, 1, fp32), %r: (1, 1, 1, fp32), %l: (1, int32)) {\n"
      "  %y: (2, 1, 1, 1, fp32) = onnx::RNN(in0=%x, in1=%w, in2=%r, in4=%l, hidden_size=1)\n"
      "} -> (%y)\n";
  const char *unknown =
      "main(%x: (2, 1, 1, fp32), %w: (1, 1, 1, fp32), %r: (1, 1, 1, fp32)) {\n"
      "  %y: (2, 1, 1, 1, fp32) = onnx::RNN(in0=%x, in1=%w, in2=%r, hidden_size=1, activations=[\"Gelu\"])\n"
      "} -> (%y)\n";
  const char *bad_w =
      "main(%x: (2, 1, 1, fp32), %w: (1, 2, 1, fp32), %r: (1, 1, 1, fp32)) {\n"
      "  %y: (2, 1, 1, 1, fp32) = onnx::RNN(in0=%x, in1=%w, in2=%r, hidden_size=1)\n"
      "} -> (%y)\n";
  spec in[4] = {{MGOPT_DT_FP32, 3, {2, 1, 1}, {1, 2}},
                {MGOPT_DT_FP32, 3, {1, 1, 1}, {1}},
                {MGOPT_DT_FP32, 3, {1, 1, 1}, {1}},
                {MGOPT_DT_INT32, 1, {1}, {3}}};
  spec w2 = {MGOPT_DT_FP32, 3, {1, 2, 1}, {1, 1}};
  mgopt_tensor *out[1] = {NULL};
  mgopt_program *p;
  CHECK(eval(too_long, 4, in, out, 1, &p) == MGOPT_ERR_INVALID_ARG && !out[0]);
  release(p, out, 1);
  CHECK(eval(unknown, 3, in, out, 1, &p) == MGOPT_ERR_UNSUPPORTED && !out[0]);
  release(p, out, 1);
  in[1] = w2;
  CHECK(eval(bad_w, 3, in, out, 1, &p) == MGOPT_ERR_INVALID_ARG && !out[0]);
  release(p, out, 1);
}

/* ---------------------------------------------------------------- ONNX export and import */

/* Exports p to ONNX bytes and imports them again (NULL on failure, reported);
   *n_canon gets how many lstm / gru / rnn ops the import made. */
static mgopt_program *onnx_round_trip(mgopt_program *p, mgopt_buf *bytes, int *n_canon, const char **onnx_type) {
  mgopt_diag d;
  mgopt_onnx_model *e = NULL, *m = NULL;
  mgopt_op *op;
  int64_t k;
  memset(&d, 0, sizeof d);
  *n_canon = 0;
  if (mgopt_onnx_export(p, NULL, &e, &d) != MGOPT_OK || !e || mgopt_onnx_write(e, NULL, bytes, NULL, &d) != MGOPT_OK) {
    printf("  export: %s\n", d.msg);
    return NULL;
  }
  *onnx_type = NULL;
  for (k = 0; k < e->graph->nnodes; k++) {
    mgopt_str t = e->graph->nodes[k].op_type;
    if ((t.len == 4 && memcmp(t.ptr, "LSTM", 4) == 0) || (t.len == 3 && memcmp(t.ptr, "GRU", 3) == 0) ||
        (t.len == 3 && memcmp(t.ptr, "RNN", 3) == 0))
      *onnx_type = t.len == 4 ? "LSTM" : t.ptr[0] == 'G' ? "GRU" : "RNN";
  }
  if (mgopt_onnx_read(bytes->data, bytes->len, NULL, &m, &d) != MGOPT_OK || mgopt_onnx_import(m, &d) != MGOPT_OK) {
    printf("  import: %s\n", d.msg);
    return NULL;
  }
  for (op = mgopt_program_function(m->program, "main")->body->first; op; op = op->next)
    if (op->kind == MGOPT_OP_lstm || op->kind == MGOPT_OP_gru || op->kind == MGOPT_OP_rnn) ++*n_canon;
  return m->program;
}

/* Evaluates program p on inputs in[nin]; outputs into out[nout]. */
static int eval_prog(mgopt_program *p, int32_t nin, const spec *in, mgopt_tensor **out, int32_t nout) {
  mgopt_tensor *t[8];
  mgopt_eval_options o;
  mgopt_diag d;
  mgopt_status s;
  int32_t i;
  memset(t, 0, sizeof t);
  for (i = 0; i < nin; i++) {
    int64_t k;
    t[i] = mgopt_eval_tensor_new(p, in[i].dt, in[i].rank, in[i].shape);
    for (k = 0; t[i] && k < t[i]->numel; k++) mgopt_tensor_set_f64(t[i], k, in[i].v[k]);
  }
  memset(&o, 0, sizeof o);
  o.op_fn = mgopt_onnx_eval_op;
  s = mgopt_eval(p, NULL, t, nin, out, nout, &o, &d);
  if (s != MGOPT_OK) printf("  eval: %s\n", d.msg);
  for (i = 0; i < nin; i++) mgopt_eval_tensor_free(p, t[i]);
  return s == MGOPT_OK;
}

/* Each MIL program goes out as the ONNX op (with the layout nodes it needs),
   comes back as the canonical op when the import can map it exactly (else
   opaque, evaluated by the ONNX kernels), and evaluates the same. */
static void test_onnx_export_import(void) {
  static const struct {
    const char *src, *onnx;
    int nout, canon; /* outputs; the import maps back to the canonical op */
  } cases[] = {
      {"main(%x: (2, 1, 1, fp32), %h: (1, 2, fp32), %c: (1, 2, fp32)) {\n"
       "  %wi: (4, 1, fp32)* = const(val=[[0.3], [0.9], [-0.6], [1.2]])\n"
       "  %wh: (4, 1, fp32)* = const(val=[[0.2], [-1.1], [0.7], [0.4]])\n"
       "  %b: (4, fp32)* = const(val=[0.6, 0.1, 0.7, -0.35])\n"
       "  %p: (3, fp32)* = const(val=[0.5, 1.5, -0.25])\n"
       "  %wib: (4, 1, fp32)* = const(val=[[-0.4], [0.8], [0.5], [-1]])\n"
       "  %whb: (4, 1, fp32)* = const(val=[[0.6], [0.3], [-0.9], [0.1]])\n"
       "  %y: (2, 1, 2, fp32), %yh: (1, 2, fp32), %yc: (1, 2, fp32) = lstm(x=%x, initial_h=%h, initial_c=%c, weight_ih=%wi,"
       " weight_hh=%wh, bias=%b, peephole=%p, weight_ih_back=%wib, weight_hh_back=%whb, direction=\"bidirectional\","
       " output_sequence=true, recurrent_activation=\"sigmoid_hard\")\n"
       "} -> (%y, %yh, %yc)\n",
       "LSTM", 3, 1},
      {"main(%x: (2, 1, 1, fp32), %h: (1, 1, fp32), %c: (1, 1, fp32)) {\n"
       "  %wi: (4, 1, fp32)* = const(val=[[0.3], [0.9], [-0.6], [1.2]])\n"
       "  %wh: (4, 1, fp32)* = const(val=[[0.2], [-1.1], [0.7], [0.4]])\n"
       "  %y: (2, 1, 1, fp32), %yh: (1, 1, fp32), %yc: (1, 1, fp32) = lstm(x=%x, initial_h=%h, initial_c=%c, weight_ih=%wi,"
       " weight_hh=%wh, direction=\"reverse\", output_sequence=true)\n"
       "} -> (%y, %yh, %yc)\n",
       "LSTM", 3, 0},
      {"main(%x: (2, 1, 1, fp32), %h: (1, 1, fp32)) {\n"
       "  %wi: (3, 1, fp32)* = const(val=[[-0.6], [0.9], [0.3]])\n"
       "  %wh: (3, 1, fp32)* = const(val=[[0.7], [-1.1], [0.2]])\n"
       "  %b: (3, fp32)* = const(val=[-0.2, 1.1, 0.4])\n"
       "  %y: (2, 1, 1, fp32), %yh: (1, 1, fp32) = gru(x=%x, initial_h=%h, weight_ih=%wi, weight_hh=%wh, bias=%b,"
       " output_sequence=true, activation=\"linear\")\n"
       "} -> (%y, %yh)\n",
       "GRU", 2, 1},
      {"main(%x: (2, 1, 1, fp32), %h: (1, 1, fp32)) {\n"
       "  %wi: (1, 1, fp32)* = const(val=[[0.5]])\n"
       "  %wh: (1, 1, fp32)* = const(val=[[-0.25]])\n"
       "  %y: (1, 1, 1, fp32), %yh: (1, 1, fp32) = rnn(x=%x, initial_h=%h, weight_ih=%wi, weight_hh=%wh, activation=\"relu\")\n"
       "} -> (%y, %yh)\n",
       "RNN", 2, 1},
  };
  spec in[3] = {{MGOPT_DT_FP32, 3, {2, 1, 1}, {0.5, -2}},
                {MGOPT_DT_FP32, 2, {1, 2}, {0.25, -0.5}},
                {MGOPT_DT_FP32, 2, {1, 2}, {-0.75, 0.125}}};
  size_t c;
  for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    mgopt_tensor *a[3] = {NULL, NULL, NULL}, *b[3] = {NULL, NULL, NULL};
    mgopt_program *p = NULL, *q = NULL;
    mgopt_buf bytes;
    mgopt_diag d;
    const char *ty = NULL;
    int nin = cases[c].nout == 3 ? 3 : 2, canon = 0, k, ok;
    spec ins[3];
    memcpy(ins, in, sizeof ins);
    if (!strstr(cases[c].src, "(1, 2, fp32)")) ins[1].shape[1] = ins[2].shape[1] = 1; /* one direction: [1, H] states */
    memset(&bytes, 0, sizeof bytes);
    CHECK(mgopt_mil_parse(cases[c].src, strlen(cases[c].src), NULL, &p, &d) == MGOPT_OK);
    if (!p) continue;
    CHECK(eval_prog(p, nin, ins, a, cases[c].nout));
    q = onnx_round_trip(p, &bytes, &canon, &ty);
    CHECK(q != NULL);
    CHECK(ty && strcmp(ty, cases[c].onnx) == 0);
    CHECK_EQ_INT(canon, cases[c].canon);
    ok = q && eval_prog(q, nin, ins, b, cases[c].nout);
    CHECK(ok);
    for (k = 0; ok && k < cases[c].nout; k++) {
        double want[8];
      int64_t i;
      for (i = 0; a[k] && i < a[k]->numel && i < 8; i++) want[i] = mgopt_tensor_get_f64(a[k], i);
        CHECK(a[k] && near_all(b[k], want, a[k]->numel));
    }
    for (k = 0; k < 3; k++) {
      if (a[k]) mgopt_eval_tensor_free(p, a[k]);
      if (b[k]) mgopt_eval_tensor_free(q, b[k]);
    }
    if (q) mgopt_program_destroy(q);
    mgopt_program_destroy(p);
    mgopt_buf_free(&bytes);
  }
}

/* An ONNX LSTM, GRU or RNN whose first output (Y) is unnamed maps to the
   canonical op all the same (the mapping names that output itself), and the
   round trip writes the same bytes again. */
static void test_unnamed_y(void) {
  static const struct {
    const char *src, *onnx;
    int nout;
  } cases[] = {
      {"main(%x: (2, 1, 1, fp32), %h: (1, 2, fp32), %c: (1, 2, fp32)) {\n"
       "  %wi: (4, 1, fp32)* = const(val=[[0.3], [0.9], [-0.6], [1.2]])\n"
       "  %wh: (4, 1, fp32)* = const(val=[[0.2], [-1.1], [0.7], [0.4]])\n"
       "  %wib: (4, 1, fp32)* = const(val=[[-0.4], [0.8], [0.5], [-1]])\n"
       "  %whb: (4, 1, fp32)* = const(val=[[0.6], [0.3], [-0.9], [0.1]])\n"
       "  %y: (1, 1, 2, fp32), %yh: (1, 2, fp32), %yc: (1, 2, fp32) = lstm(x=%x, initial_h=%h, initial_c=%c, weight_ih=%wi,"
       " weight_hh=%wh, weight_ih_back=%wib, weight_hh_back=%whb, direction=\"bidirectional\")\n"
       "} -> (%yh, %yc)\n",
       "LSTM", 2},
      {"main(%x: (2, 1, 1, fp32), %h: (1, 1, fp32), %c: (1, 1, fp32)) {\n"
       "  %wi: (4, 1, fp32)* = const(val=[[0.3], [0.9], [-0.6], [1.2]])\n"
       "  %wh: (4, 1, fp32)* = const(val=[[0.2], [-1.1], [0.7], [0.4]])\n"
       "  %y: (1, 1, 1, fp32), %yh: (1, 1, fp32), %yc: (1, 1, fp32) = lstm(x=%x, initial_h=%h, initial_c=%c, weight_ih=%wi,"
       " weight_hh=%wh, direction=\"reverse\")\n"
       "} -> (%yc)\n",
       "LSTM", 1},
      {"main(%x: (2, 1, 1, fp32), %h: (1, 1, fp32)) {\n"
       "  %wi: (3, 1, fp32)* = const(val=[[-0.6], [0.9], [0.3]])\n"
       "  %wh: (3, 1, fp32)* = const(val=[[0.7], [-1.1], [0.2]])\n"
       "  %y: (1, 1, 1, fp32), %yh: (1, 1, fp32) = gru(x=%x, initial_h=%h, weight_ih=%wi, weight_hh=%wh)\n"
       "} -> (%yh)\n",
       "GRU", 1},
      {"main(%x: (2, 1, 1, fp32), %h: (1, 1, fp32)) {\n"
       "  %wi: (1, 1, fp32)* = const(val=[[0.5]])\n"
       "  %wh: (1, 1, fp32)* = const(val=[[-0.25]])\n"
       "  %y: (1, 1, 1, fp32), %yh: (1, 1, fp32) = rnn(x=%x, initial_h=%h, weight_ih=%wi, weight_hh=%wh)\n"
       "} -> (%yh)\n",
       "RNN", 1},
  };
  spec in[3] = {{MGOPT_DT_FP32, 3, {2, 1, 1}, {0.5, -2}},
                {MGOPT_DT_FP32, 2, {1, 2}, {0.25, -0.5}},
                {MGOPT_DT_FP32, 2, {1, 2}, {-0.75, 0.125}}};
  size_t c;
  for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    mgopt_tensor *a[3] = {NULL, NULL, NULL}, *b[3] = {NULL, NULL, NULL};
    mgopt_program *p = NULL, *q = NULL, *q2 = NULL;
    mgopt_buf bytes, bytes2;
    mgopt_diag d;
    const char *ty = NULL;
    int nin = strstr(cases[c].src, "%c:") ? 3 : 2, canon = 0, canon2 = 0, k, ok;
    int64_t j;
    spec ins[3];
    mgopt_onnx_model *e = NULL;
    memcpy(ins, in, sizeof ins);
    if (!strstr(cases[c].src, "(1, 2, fp32)")) ins[1].shape[1] = ins[2].shape[1] = 1;
    memset(&bytes, 0, sizeof bytes);
    memset(&bytes2, 0, sizeof bytes2);
    REQUIRE(mgopt_mil_parse(cases[c].src, strlen(cases[c].src), NULL, &p, &d) == MGOPT_OK);
    CHECK(eval_prog(p, nin, ins, a, cases[c].nout));
    q = onnx_round_trip(p, &bytes, &canon, &ty);
    REQUIRE(q != NULL);
    CHECK(ty && strcmp(ty, cases[c].onnx) == 0);
    CHECK_EQ_INT(canon, 1); /* Y is "" in the file, and the node maps all the same */
    mgopt_diag_clear(&d);
    CHECK(mgopt_onnx_export(p, NULL, &e, &d) == MGOPT_OK && e);
    for (j = 0; e && j < e->graph->nnodes; j++)
      if (ty && e->graph->nodes[j].op_type.len == strlen(ty) && memcmp(e->graph->nodes[j].op_type.ptr, ty, strlen(ty)) == 0 &&
          e->graph->nodes[j].noutputs >= 1)
        CHECK_EQ_INT((int)e->graph->nodes[j].outputs[0].len, 0);
    ok = eval_prog(q, nin, ins, b, cases[c].nout);
    CHECK(ok);
    for (k = 0; ok && k < cases[c].nout; k++) {
      double want[8];
      int64_t i;
      for (i = 0; a[k] && i < a[k]->numel && i < 8; i++) want[i] = mgopt_tensor_get_f64(a[k], i);
      CHECK(a[k] && near_all(b[k], want, a[k]->numel));
    }
    /* the imported program writes the same nodes again, Y unnamed (the
       re-laid weights take names of their own; the state layout ops of two
       directions cancel in onnx_cleanup: as for a named Y) */
    if (strstr(cases[c].src, "bidirectional"))
      CHECK(mgopt_pipeline_run(q, mgopt_builtin_registry(), "onnx_cleanup", NULL, &d) == MGOPT_OK);
    q2 = onnx_round_trip(q, &bytes2, &canon2, &ty);
    CHECK(q2 != NULL);
    CHECK_EQ_INT(canon2, 1);
    {
      mgopt_onnx_model *m1 = NULL, *m2 = NULL;
      CHECK(mgopt_onnx_read(bytes.data, bytes.len, NULL, &m1, &d) == MGOPT_OK);
      CHECK(mgopt_onnx_read(bytes2.data, bytes2.len, NULL, &m2, &d) == MGOPT_OK);
      CHECK(m1 && m2 && m1->graph->nnodes == m2->graph->nnodes);
      for (j = 0; m1 && m2 && j < m1->graph->nnodes && j < m2->graph->nnodes; j++) {
        const mgopt_onnx_node *n1 = &m1->graph->nodes[j], *n2 = &m2->graph->nodes[j];
        int64_t o;
        CHECK(n1->op_type.len == n2->op_type.len && memcmp(n1->op_type.ptr, n2->op_type.ptr, n1->op_type.len) == 0);
        CHECK(n1->noutputs == n2->noutputs && n1->ninputs == n2->ninputs && n1->nattributes == n2->nattributes);
        for (o = 0; o < n1->noutputs && o < n2->noutputs; o++) CHECK((n1->outputs[o].len == 0) == (n2->outputs[o].len == 0));
      }
      if (m1) mgopt_program_destroy(m1->program);
      if (m2) mgopt_program_destroy(m2->program);
    }
    for (k = 0; k < 3; k++) {
      if (a[k]) mgopt_eval_tensor_free(p, a[k]);
      if (b[k]) mgopt_eval_tensor_free(q, b[k]);
    }
    if (q2) mgopt_program_destroy(q2);
    mgopt_program_destroy(q);
    mgopt_program_destroy(p);
    mgopt_buf_free(&bytes);
    mgopt_buf_free(&bytes2);
  }
}

static const test_case tests[] = {
    TEST(test_unnamed_y),
    TEST(test_rnn_bidirectional), TEST(test_rnn_layout1_reverse), TEST(test_gru_linear_before_reset),
    TEST(test_lstm_peepholes_clip), TEST(test_lstm_input_forget),  TEST(test_mil_lstm_matches_onnx),
    TEST(test_mil_gru_reverse),     TEST(test_errors),               TEST(test_onnx_export_import),
};
TEST_MAIN(tests)
