/* src/kernels/onnx_rnn.c — kernels of ONNX's recurrent ops LSTM, GRU and RNN in every form (directions, layouts, activations, clip, input_forget, peepholes, sequence_lens, linear_before_reset).

   The cell equations and the loop are recurrent.c's (mgopt__rnn_run):
   this file reads the ONNX operands into its layout. W, R are
   [num_directions, gates*H, I or H], B is [num_directions, 2*gates*H] =
   input-side biases Wb then recurrent biases Rb, P = [Pi, Po, Pf];
   "bidirectional" runs direction 0 forward and 1 reverse. With
   sequence_lens a batch entry runs its first len steps only: Y is 0 at
   t >= len and Y_h / Y_c hold the state after its last step (the initial
   state when len is 0). layout 0: X [S, B, I], states [D, B, H], Y
   [S, D, B, H]; layout 1: X [B, S, I], states [B, D, H], Y [B, S, D, H].
   Activations (names compared without case): Sigmoid, Tanh, Relu, Affine
   (alpha*x + beta), LeakyRelu, ThresholdedRelu, ScaledTanh
   (alpha*tanh(beta*x)), HardSigmoid, Elu, Softsign, Softplus;
   activation_alpha / activation_beta are taken in order by the activations
   that have the parameter, ONNX's operator defaults when the list runs out.
   clip c bounds every gate's pre-activation to [-c, c] (the input of f and
   g; h's input C' is not clipped, as ONNX Runtime does).

   Numeric contract: recurrent.c's (double throughout, each output element
   rounded once to X's dtype). A sequence length outside [0, S] is an error. */
#include "onnx_ops.h"

/* The activation names, whether each takes alpha / beta, and their defaults. */
static const struct {
  const char *name;
  int fn, has_alpha, has_beta;
  double alpha, beta;
} mgopt__oxr_acts[] = {
    {"sigmoid", MGOPT__RNN_SIGMOID, 0, 0, 0.0, 0.0},
    {"tanh", MGOPT__RNN_TANH, 0, 0, 0.0, 0.0},
    {"relu", MGOPT__RNN_RELU, 0, 0, 0.0, 0.0},
    {"affine", MGOPT__RNN_AFFINE, 1, 1, 1.0, 0.0},
    {"leakyrelu", MGOPT__RNN_LEAKY_RELU, 1, 0, 0.01, 0.0},
    {"thresholdedrelu", MGOPT__RNN_THRESHOLDED_RELU, 1, 0, 1.0, 0.0},
    {"scaledtanh", MGOPT__RNN_SCALED_TANH, 1, 1, 1.0, 1.0},
    {"hardsigmoid", MGOPT__RNN_HARD_SIGMOID, 1, 1, 0.2, 0.5},
    {"elu", MGOPT__RNN_ELU, 1, 0, 1.0, 0.0},
    {"softsign", MGOPT__RNN_SOFTSIGN, 0, 0, 0.0, 0.0},
    {"softplus", MGOPT__RNN_SOFTPLUS, 0, 0, 0.0, 0.0},
};

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
static int mgopt__oxr_parse_acts(mgopt__ox *c, int32_t nd, int32_t per, const int *dflt, mgopt__rnn_act_fn *acts) {
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
  static const int dflt_rnn[] = {MGOPT__RNN_TANH}, dflt_gru[] = {MGOPT__RNN_SIGMOID, MGOPT__RNN_TANH},
                   dflt_lstm[] = {MGOPT__RNN_SIGMOID, MGOPT__RNN_TANH, MGOPT__RNN_TANH};
  const int32_t G = kind == 2 ? 4 : kind == 1 ? 3 : 1, per = kind == 2 ? 3 : kind == 1 ? 2 : 1;
  mgopt_tensor *X = mgopt__ox_need(c, 0), *W = mgopt__ox_need(c, 1), *R = mgopt__ox_need(c, 2);
  mgopt_tensor *B = mgopt__ox_in(c, 3), *SL = mgopt__ox_in(c, 4), *H0 = mgopt__ox_in(c, 5);
  mgopt_tensor *C0 = kind == 2 ? mgopt__ox_in(c, 6) : NULL, *P = kind == 2 ? mgopt__ox_in(c, 7) : NULL;
  mgopt_tensor *Y, *YH, *YC;
  mgopt__rnn_act_fn acts[6];
  int64_t layout = mgopt__ox_int(c, "layout", 0), S, NB, I, H, D, d, b, k, j, q, shape[4];
  int64_t lbr = kind == 1 ? mgopt__ox_int(c, "linear_before_reset", 0) : 0;
  int64_t input_forget = kind == 2 ? mgopt__ox_int(c, "input_forget", 0) : 0;
  const mgopt_attr *clip_a = mgopt_op_attr(c->op, "clip");
  double clip = clip_a && clip_a->kind == MGOPT_ATTR_FLOAT ? clip_a->u.f : 0.0;
  int has_clip = clip_a && clip_a->kind == MGOPT_ATTR_FLOAT;
  mgopt__rnn r;
  double *buf, *work;
  int64_t n, t;
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
  /* the operands in the loop's layout, one block: X, W, R, Wb, Rb, P, h0,
     c0, lengths, Y, Y_h, Y_c, work space */
  memset(&r, 0, sizeof r);
  r.kind = kind, r.S = S, r.B = NB, r.I = I, r.H = H, r.D = D;
  r.rev[0] = reverse_only, r.rev[1] = 1;
  r.linear_before_reset = lbr != 0, r.input_forget = input_forget != 0;
  r.has_gate_clip = has_clip, r.gate_clip = clip;
  memcpy(r.acts, acts, sizeof acts);
  n = S * NB * I + D * G * H * I + D * G * H * H + 2 * D * G * H + D * 3 * H + 2 * D * NB * H + NB + S * D * NB * H +
      2 * D * NB * H + (int64_t)(mgopt__rnn_work_size(&r) / sizeof(double)) + 1;
  bytes = sizeof(double) * (size_t)n;
  buf = (double *)mgopt__heap_realloc(&c->p->alloc, NULL, 0, bytes);
  if (!buf) return mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
  memset(buf, 0, bytes);
  {
    double *at = buf, *xs, *w, *rr, *wb, *rb, *pp, *h0, *c0, *ln;
    xs = at, at += S * NB * I;
    w = at, at += D * G * H * I;
    rr = at, at += D * G * H * H;
    wb = at, at += D * G * H;
    rb = at, at += D * G * H;
    pp = at, at += D * 3 * H;
    h0 = at, at += D * NB * H;
    c0 = at, at += D * NB * H;
    ln = at, at += NB;
    r.Y = at, at += S * D * NB * H;
    r.Yh = at, at += D * NB * H;
    r.Yc = at, at += D * NB * H;
    work = at;
    for (t = 0; t < S; t++)
      for (b = 0; b < NB; b++)
        for (k = 0; k < I; k++) xs[(t * NB + b) * I + k] = mgopt__ox_getf(X, (layout ? b * S + t : t * NB + b) * I + k);
    for (q = 0; q < D * G * H * I; q++) w[q] = mgopt__ox_getf(W, q);
    for (q = 0; q < D * G * H * H; q++) rr[q] = mgopt__ox_getf(R, q);
    for (d = 0; B && d < D; d++)
      for (q = 0; q < G * H; q++) {
        wb[d * G * H + q] = mgopt__ox_getf(B, d * 2 * G * H + q);
        rb[d * G * H + q] = mgopt__ox_getf(B, d * 2 * G * H + G * H + q);
      }
    for (q = 0; P && q < D * 3 * H; q++) pp[q] = mgopt__ox_getf(P, q);
    for (d = 0; d < D; d++)
      for (b = 0; b < NB; b++)
        for (j = 0; j < H; j++) {
          int64_t from = layout ? (b * D + d) * H + j : (d * NB + b) * H + j;
          if (H0) h0[(d * NB + b) * H + j] = mgopt__ox_getf(H0, from);
          if (C0) c0[(d * NB + b) * H + j] = mgopt__ox_getf(C0, from);
        }
    r.X = xs, r.W = w, r.R = rr, r.Wb = B ? wb : NULL, r.Rb = B ? rb : NULL, r.P = P ? pp : NULL;
    r.h0 = H0 ? h0 : NULL, r.c0 = C0 ? c0 : NULL;
    if (SL) {
      /* the lengths as int64 in the double block's room (one double per entry) */
      int64_t *li = (int64_t *)(void *)ln;
      for (b = 0; b < NB; b++) li[b] = mgopt__ox_geti(SL, b);
      r.len = li;
    }
  }
  mgopt__rnn_run(&r, work);
  for (t = 0; Y && t < S; t++)
    for (d = 0; d < D; d++)
      for (b = 0; b < NB; b++)
        for (j = 0; j < H; j++)
          mgopt__ox_setf(Y, (layout ? (b * S + t) * D + d : (t * D + d) * NB + b) * H + j, r.Y[((t * D + d) * NB + b) * H + j]);
  for (d = 0; d < D; d++)
    for (b = 0; b < NB; b++)
      for (j = 0; j < H; j++) {
        int64_t to = layout ? (b * D + d) * H + j : (d * NB + b) * H + j, from = (d * NB + b) * H + j;
        if (YH) mgopt__ox_setf(YH, to, r.Yh[from]);
        if (YC) mgopt__ox_setf(YC, to, r.Yc[from]);
      }
  mgopt__heap_free(&c->p->alloc, buf, bytes);
  return MGOPT__OX_OK;
}

MGOPT__PRIVATE int mgopt__ox_rnn(mgopt__ox *c) { return mgopt__oxr_run(c, 0); }
MGOPT__PRIVATE int mgopt__ox_gru(mgopt__ox *c) { return mgopt__oxr_run(c, 1); }
MGOPT__PRIVATE int mgopt__ox_lstm(mgopt__ox *c) { return mgopt__oxr_run(c, 2); }
