/* src/kernels/onnx_rnn.c — kernels of ONNX's recurrent ops LSTM, GRU and RNN in every form (directions, layouts, activations, clip, input_forget, peepholes, sequence_lens, linear_before_reset).

   Semantics (ONNX operator definitions; W, R are [num_directions, gates*H,
   I or H], B is [num_directions, 2*gates*H] = input-side biases Wb then
   recurrent biases Rb, f/g/h the activations of one direction):
     RNN  gates (i):        H' = f(x W^T + H R^T + Wb + Rb)
     GRU  gates (z, r, h):  z = f(x Wz^T + H Rz^T + Wbz + Rbz)
                            r = f(x Wr^T + H Rr^T + Wbr + Rbr)
                            linear_before_reset 0: n = g(x Wh^T + (r * H) Rh^T + Rbh + Wbh)
                            linear_before_reset 1: n = g(x Wh^T + r * (H Rh^T + Rbh) + Wbh)
                            H' = (1 - z) * n + z * H
     LSTM gates (i, o, f, c), peepholes P = [Pi, Po, Pf]:
                            i = f(x Wi^T + H Ri^T + Pi * C + Wbi + Rbi)
                            f = f(x Wf^T + H Rf^T + Pf * C + Wbf + Rbf), or 1 - i with input_forget
                            c = g(x Wc^T + H Rc^T + Wbc + Rbc)
                            C' = f * C + i * c
                            o = f(x Wo^T + H Ro^T + Po * C' + Wbo + Rbo)
                            H' = o * h(C')
   Direction "forward" runs t = 0 .. len-1, "reverse" t = len-1 .. 0,
   "bidirectional" both (direction 0 forward, 1 reverse). With sequence_lens
   a batch entry runs its first len steps only: Y is 0 at t >= len and Y_h /
   Y_c hold the state after its last step (the initial state when len is 0).
   layout 0: X [S, B, I], states [D, B, H], Y [S, D, B, H]; layout 1:
   X [B, S, I], states [B, D, H], Y [B, S, D, H]. Activations (names compared
   without case): Sigmoid, Tanh, Relu, Affine (alpha*x + beta), LeakyRelu,
   ThresholdedRelu, ScaledTanh (alpha*tanh(beta*x)), HardSigmoid, Elu,
   Softsign, Softplus; activation_alpha / activation_beta are taken in order
   by the activations that have the parameter, ONNX's operator defaults when
   the list runs out. clip c bounds every gate's pre-activation to [-c, c]
   (the input of f and g; h's input C' is not clipped, as ONNX Runtime does).

   Numeric contract. Every real dtype is read into double; every dot product
   is summed in double in increasing index order, then the biases are added
   (Wb then Rb); the hidden and cell states stay in double across steps and
   each output element is rounded once to X's dtype (nearest even). exp and
   tanh are the C library's in double. NaN and Inf propagate as IEEE 754
   does. A sequence length outside [0, S] is an error. */
#include "onnx_ops.h"

/* Activation functions. */
enum { MGOPT__OXR_SIGMOID, MGOPT__OXR_TANH, MGOPT__OXR_RELU, MGOPT__OXR_AFFINE, MGOPT__OXR_LEAKY_RELU,
       MGOPT__OXR_THRESHOLDED_RELU, MGOPT__OXR_SCALED_TANH, MGOPT__OXR_HARD_SIGMOID, MGOPT__OXR_ELU,
       MGOPT__OXR_SOFTSIGN, MGOPT__OXR_SOFTPLUS };

typedef struct mgopt__oxr_act {
  int fn;
  double alpha, beta;
} mgopt__oxr_act;

/* The activation names, whether each takes alpha / beta, and their defaults. */
static const struct {
  const char *name;
  int fn, has_alpha, has_beta;
  double alpha, beta;
} mgopt__oxr_acts[] = {
    {"sigmoid", MGOPT__OXR_SIGMOID, 0, 0, 0.0, 0.0},
    {"tanh", MGOPT__OXR_TANH, 0, 0, 0.0, 0.0},
    {"relu", MGOPT__OXR_RELU, 0, 0, 0.0, 0.0},
    {"affine", MGOPT__OXR_AFFINE, 1, 1, 1.0, 0.0},
    {"leakyrelu", MGOPT__OXR_LEAKY_RELU, 1, 0, 0.01, 0.0},
    {"thresholdedrelu", MGOPT__OXR_THRESHOLDED_RELU, 1, 0, 1.0, 0.0},
    {"scaledtanh", MGOPT__OXR_SCALED_TANH, 1, 1, 1.0, 1.0},
    {"hardsigmoid", MGOPT__OXR_HARD_SIGMOID, 1, 1, 0.2, 0.5},
    {"elu", MGOPT__OXR_ELU, 1, 0, 1.0, 0.0},
    {"softsign", MGOPT__OXR_SOFTSIGN, 0, 0, 0.0, 0.0},
    {"softplus", MGOPT__OXR_SOFTPLUS, 0, 0, 0.0, 0.0},
};

static double mgopt__oxr_apply(const mgopt__oxr_act *a, double x) {
  double v;
  switch (a->fn) {
  case MGOPT__OXR_SIGMOID: return 1.0 / (1.0 + exp(-x));
  case MGOPT__OXR_TANH: return tanh(x);
  case MGOPT__OXR_RELU: return x > 0 ? x : x != x ? x : 0.0;
  case MGOPT__OXR_AFFINE: return a->alpha * x + a->beta;
  case MGOPT__OXR_LEAKY_RELU: return x >= 0 ? x : a->alpha * x;
  case MGOPT__OXR_THRESHOLDED_RELU: return x > a->alpha ? x : x != x ? x : 0.0;
  case MGOPT__OXR_SCALED_TANH: return a->alpha * tanh(a->beta * x);
  case MGOPT__OXR_HARD_SIGMOID:
    v = a->alpha * x + a->beta;
    return v != v ? v : v < 0 ? 0.0 : v > 1 ? 1.0 : v;
  case MGOPT__OXR_ELU: return x >= 0 ? x : a->alpha * (exp(x) - 1.0);
  case MGOPT__OXR_SOFTSIGN: return x / (1.0 + fabs(x));
  default: return log(1.0 + exp(x));
  }
}

/* 1 when s equals the lowercase name, ignoring case. */
static int mgopt__oxr_name_is(const mgopt_str *s, const char *name) {
  size_t i, n = strlen(name);
  if (s->len != n) return 0;
  for (i = 0; i < n; i++) {
    char ch = s->ptr[i];
    if (ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
    if (ch != name[i]) return 0;
  }
  return 1;
}

/* Fills acts[nd * per] from the activations attribute (or the defaults
   dflt[per]); a list of `per` names serves both directions. */
static int mgopt__oxr_parse_acts(mgopt__ox *c, int32_t nd, int32_t per, const int *dflt, mgopt__oxr_act *acts) {
  const mgopt_attr *names = mgopt_op_attr(c->op, "activations");
  const mgopt_attr *al = mgopt_op_attr(c->op, "activation_alpha");
  const mgopt_attr *be = mgopt_op_attr(c->op, "activation_beta");
  int64_t ia = 0, ib = 0;
  int32_t k, j, n = nd * per;
  if (names && (names->kind != MGOPT_ATTR_STRINGS || (names->n != n && names->n != per)))
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "activations has %lld names, expected %d", (long long)names->n, (int)n);
  if (al && al->kind != MGOPT_ATTR_FLOATS) al = NULL;
  if (be && be->kind != MGOPT_ATTR_FLOATS) be = NULL;
  for (k = 0; k < n; k++) {
    int found = -1;
    if (!names) {
      for (j = 0; j < (int32_t)(sizeof mgopt__oxr_acts / sizeof mgopt__oxr_acts[0]); j++)
        if (mgopt__oxr_acts[j].fn == dflt[k % per]) found = j;
    } else {
      const mgopt_str *s = &names->u.strs[names->n == n ? k : k % per];
      for (j = 0; j < (int32_t)(sizeof mgopt__oxr_acts / sizeof mgopt__oxr_acts[0]); j++)
        if (mgopt__oxr_name_is(s, mgopt__oxr_acts[j].name)) found = j;
      if (found < 0) return mgopt__ox_no(c, "activation '%.*s'", (int)s->len, s->ptr);
    }
    acts[k].fn = mgopt__oxr_acts[found].fn;
    acts[k].alpha = mgopt__oxr_acts[found].alpha;
    acts[k].beta = mgopt__oxr_acts[found].beta;
    if (mgopt__oxr_acts[found].has_alpha && al && ia < al->n) acts[k].alpha = al->u.floats[ia++];
    if (mgopt__oxr_acts[found].has_beta && be && ib < be->n) acts[k].beta = be->u.floats[ib++];
  }
  return MGOPT__OX_OK;
}

/* 1 when t is a real tensor of rank r whose dims equal d (a -1 in d: any). */
static int mgopt__oxr_shape_is(const mgopt_tensor *t, int32_t r, const int64_t *d) {
  int32_t i;
  if (!mgopt__ox_is_real((mgopt_dtype)t->dtype) || t->rank != r) return 0;
  for (i = 0; i < r; i++)
    if (d[i] >= 0 && t->shape[i] != d[i]) return 0;
  return 1;
}

/* kind: 0 RNN, 1 GRU, 2 LSTM. */
static int mgopt__oxr_run(mgopt__ox *c, int kind) {
  static const int dflt_rnn[] = {MGOPT__OXR_TANH}, dflt_gru[] = {MGOPT__OXR_SIGMOID, MGOPT__OXR_TANH},
                   dflt_lstm[] = {MGOPT__OXR_SIGMOID, MGOPT__OXR_TANH, MGOPT__OXR_TANH};
  const int32_t G = kind == 2 ? 4 : kind == 1 ? 3 : 1, per = kind == 2 ? 3 : kind == 1 ? 2 : 1;
  mgopt_tensor *X = mgopt__ox_need(c, 0), *W = mgopt__ox_need(c, 1), *R = mgopt__ox_need(c, 2);
  mgopt_tensor *B = mgopt__ox_in(c, 3), *SL = mgopt__ox_in(c, 4), *H0 = mgopt__ox_in(c, 5);
  mgopt_tensor *C0 = kind == 2 ? mgopt__ox_in(c, 6) : NULL, *P = kind == 2 ? mgopt__ox_in(c, 7) : NULL;
  mgopt_tensor *Y, *YH, *YC;
  mgopt__oxr_act acts[6];
  int64_t layout = mgopt__ox_int(c, "layout", 0), S, NB, I, H, D, d, b, k, j, q, shape[4];
  int64_t lbr = kind == 1 ? mgopt__ox_int(c, "linear_before_reset", 0) : 0;
  int64_t input_forget = kind == 2 ? mgopt__ox_int(c, "input_forget", 0) : 0;
  const mgopt_attr *clip_a = mgopt_op_attr(c->op, "clip");
  double clip = clip_a && clip_a->kind == MGOPT_ATTR_FLOAT ? clip_a->u.f : 0.0;
  int has_clip = clip_a && clip_a->kind == MGOPT_ATTR_FLOAT;
  double *buf, *gx, *gh, *h, *cs, *nh;
  size_t bytes;
  int st, reverse_only = 0;
  if (!X || !W || !R) return MGOPT__OX_ERR;
  if (mgopt__ox_str_is(c, "direction", "forward", 1)) D = 1;
  else if (mgopt__ox_str_is(c, "direction", "reverse", 0)) D = 1, reverse_only = 1;
  else if (mgopt__ox_str_is(c, "direction", "bidirectional", 0)) D = 2;
  else return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "direction is not forward, reverse or bidirectional");
  if (layout != 0 && layout != 1) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "layout %lld", (long long)layout);
  if (!mgopt__ox_is_real((mgopt_dtype)X->dtype) || X->rank != 3)
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "X is not a real tensor of rank 3");
  S = X->shape[layout ? 1 : 0];
  NB = X->shape[layout ? 0 : 1];
  I = X->shape[2];
  H = mgopt__ox_int(c, "hidden_size", W->rank == 3 ? W->shape[1] / G : -1);
  if (H <= 0) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "hidden_size %lld", (long long)H);
  shape[0] = D, shape[1] = G * H, shape[2] = I;
  if (!mgopt__oxr_shape_is(W, 3, shape)) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "W does not fit X and hidden_size");
  shape[2] = H;
  if (!mgopt__oxr_shape_is(R, 3, shape)) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "R does not fit hidden_size");
  shape[1] = 2 * G * H;
  if (B && !mgopt__oxr_shape_is(B, 2, shape)) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "B does not fit hidden_size");
  shape[1] = 3 * H;
  if (P && !mgopt__oxr_shape_is(P, 2, shape)) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "P does not fit hidden_size");
  shape[0] = layout ? NB : D, shape[1] = layout ? D : NB, shape[2] = H;
  if (H0 && !mgopt__oxr_shape_is(H0, 3, shape)) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "initial_h does not fit");
  if (C0 && !mgopt__oxr_shape_is(C0, 3, shape)) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "initial_c does not fit");
  if (SL) {
    if (SL->rank != 1 || SL->shape[0] != NB || mgopt__ox_is_real((mgopt_dtype)SL->dtype))
      return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "sequence_lens is not an integer tensor [batch]");
    for (b = 0; b < NB; b++)
      if (mgopt__ox_geti(SL, b) < 0 || mgopt__ox_geti(SL, b) > S)
        return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "sequence length %lld outside [0, %lld]",
                              (long long)mgopt__ox_geti(SL, b), (long long)S);
  }
  if ((st = mgopt__oxr_parse_acts(c, (int32_t)D, per, kind == 2 ? dflt_lstm : kind == 1 ? dflt_gru : dflt_rnn, acts)) !=
      MGOPT__OX_OK)
    return st;
  /* outputs, zero-filled */
  if (layout) shape[0] = NB, shape[1] = S, shape[2] = D, shape[3] = H;
  else shape[0] = S, shape[1] = D, shape[2] = NB, shape[3] = H;
  if (mgopt__ox_wants(c, 0) && (st = mgopt__ox_out(c, 0, (mgopt_dtype)X->dtype, 4, shape)) != MGOPT__OX_OK) return st;
  shape[0] = layout ? NB : D, shape[1] = layout ? D : NB, shape[2] = H;
  if (mgopt__ox_wants(c, 1) && (st = mgopt__ox_out(c, 1, (mgopt_dtype)X->dtype, 3, shape)) != MGOPT__OX_OK) return st;
  if (kind == 2 && mgopt__ox_wants(c, 2) && (st = mgopt__ox_out(c, 2, (mgopt_dtype)X->dtype, 3, shape)) != MGOPT__OX_OK)
    return st;
  Y = mgopt__ox_wants(c, 0) ? c->out[0] : NULL;
  YH = mgopt__ox_wants(c, 1) ? c->out[1] : NULL;
  YC = kind == 2 && mgopt__ox_wants(c, 2) ? c->out[2] : NULL;
  /* gate sums from x and from H, state, cell, next state */
  bytes = sizeof(double) * (size_t)(2 * G * H + 3 * H);
  buf = (double *)mgopt__heap_realloc(&c->p->alloc, NULL, 0, bytes);
  if (!buf) return mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
  gx = buf, gh = gx + G * H, h = gh + G * H, cs = h + H, nh = cs + H;
  for (d = 0; d < D; d++) {
    const mgopt__oxr_act *fa = &acts[d * per], *ga = &acts[d * per + (per > 1)], *ha = &acts[d * per + 2 * (per > 2)];
    int rev = reverse_only || d == 1;
    for (b = 0; b < NB; b++) {
      int64_t len = SL ? mgopt__ox_geti(SL, b) : S, step, sidx = layout ? (b * D + d) * H : (d * NB + b) * H;
      for (j = 0; j < H; j++) {
        h[j] = H0 ? mgopt__ox_getf(H0, sidx + j) : 0.0;
        cs[j] = C0 ? mgopt__ox_getf(C0, sidx + j) : 0.0;
      }
      for (step = 0; step < len; step++) {
        int64_t t = rev ? len - 1 - step : step, xo = layout ? (b * S + t) * I : (t * NB + b) * I;
        /* gx = x W^T + Wb, gh = H R^T + Rb (GRU with linear_before_reset 0: gh of the h gate later) */
        for (q = 0; q < G * H; q++) {
          double sx = 0.0, sh = 0.0;
          int64_t wo = (d * G * H + q) * I, ro = (d * G * H + q) * H;
          for (k = 0; k < I; k++) sx += mgopt__ox_getf(W, wo + k) * mgopt__ox_getf(X, xo + k);
          if (B) sx += mgopt__ox_getf(B, d * 2 * G * H + q);
          gx[q] = sx;
          if (kind == 1 && !lbr && q >= 2 * H) continue;
          for (k = 0; k < H; k++) sh += mgopt__ox_getf(R, ro + k) * h[k];
          if (B) sh += mgopt__ox_getf(B, d * 2 * G * H + G * H + q);
          gh[q] = sh;
        }
#define MGOPT__OXR_CLIP(v) (has_clip ? ((v) < -clip ? -clip : (v) > clip ? clip : (v)) : (v))
        if (kind == 0) {
          for (j = 0; j < H; j++) nh[j] = mgopt__oxr_apply(fa, MGOPT__OXR_CLIP(gx[j] + gh[j]));
        } else if (kind == 1) {
          /* z in gx[0..H), r in gx[H..2H) after this loop */
          for (q = 0; q < 2 * H; q++) gx[q] = mgopt__oxr_apply(fa, MGOPT__OXR_CLIP(gx[q] + gh[q]));
          for (j = 0; j < H; j++) {
            double r = gx[H + j], z = gx[j], n, pre;
            if (lbr) pre = gx[2 * H + j] + r * gh[2 * H + j];
            else {
              double sh = 0.0;
              int64_t ro = (d * G * H + 2 * H + j) * H;
              for (k = 0; k < H; k++) sh += mgopt__ox_getf(R, ro + k) * (gx[H + k] * h[k]);
              if (B) sh += mgopt__ox_getf(B, d * 2 * G * H + G * H + 2 * H + j);
              pre = gx[2 * H + j] + sh;
            }
            n = mgopt__oxr_apply(ga, MGOPT__OXR_CLIP(pre));
            nh[j] = (1.0 - z) * n + z * h[j];
          }
        } else {
          for (j = 0; j < H; j++) {
            double pi = P ? mgopt__ox_getf(P, d * 3 * H + j) : 0.0, po = P ? mgopt__ox_getf(P, d * 3 * H + H + j) : 0.0;
            double pf = P ? mgopt__ox_getf(P, d * 3 * H + 2 * H + j) : 0.0, ig, fg, cg, og, cn;
            ig = mgopt__oxr_apply(fa, MGOPT__OXR_CLIP(gx[j] + gh[j] + pi * cs[j]));
            fg = input_forget ? 1.0 - ig : mgopt__oxr_apply(fa, MGOPT__OXR_CLIP(gx[2 * H + j] + gh[2 * H + j] + pf * cs[j]));
            cg = mgopt__oxr_apply(ga, MGOPT__OXR_CLIP(gx[3 * H + j] + gh[3 * H + j]));
            cn = fg * cs[j] + ig * cg;
            og = mgopt__oxr_apply(fa, MGOPT__OXR_CLIP(gx[H + j] + gh[H + j] + po * cn));
            cs[j] = cn;
            nh[j] = og * mgopt__oxr_apply(ha, cn);
          }
        }
#undef MGOPT__OXR_CLIP
        for (j = 0; j < H; j++) h[j] = nh[j];
        if (Y) {
          int64_t yo = layout ? ((b * S + t) * D + d) * H : ((t * D + d) * NB + b) * H;
          for (j = 0; j < H; j++) mgopt__ox_setf(Y, yo + j, h[j]);
        }
      }
      for (j = 0; j < H; j++) {
        if (YH) mgopt__ox_setf(YH, sidx + j, h[j]);
        if (YC) mgopt__ox_setf(YC, sidx + j, cs[j]);
      }
    }
  }
  mgopt__heap_free(&c->p->alloc, buf, bytes);
  return MGOPT__OX_OK;
}

MGOPT__PRIVATE int mgopt__ox_rnn(mgopt__ox *c) { return mgopt__oxr_run(c, 0); }
MGOPT__PRIVATE int mgopt__ox_gru(mgopt__ox *c) { return mgopt__oxr_run(c, 1); }
MGOPT__PRIVATE int mgopt__ox_lstm(mgopt__ox *c) { return mgopt__oxr_run(c, 2); }
