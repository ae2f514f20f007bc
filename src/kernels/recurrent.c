/* src/kernels/recurrent.c — the recurrent cell loop shared by the ONNX kernels (onnx_rnn.c) and the kernels of MIL's lstm, gru and rnn.

   The loop (mgopt__rnn_run) works on double arrays in one layout, ONNX's
   gate order: RNN (i), GRU (z, r, h), LSTM (i, o, f, c), peepholes (i, o, f):
     RNN   H' = f(x Wi^T + H Ri^T + Wb + Rb)
     GRU   z = f(x Wz^T + H Rz^T + Wbz + Rbz), r = f(x Wr^T + H Rr^T + Wbr + Rbr)
           linear_before_reset 0: n = g(x Wh^T + (r * H) Rh^T + Rbh + Wbh)
           linear_before_reset 1: n = g(x Wh^T + r * (H Rh^T + Rbh) + Wbh)
           H' = (1 - z) * n + z * H
     LSTM  i = f(x Wi^T + H Ri^T + Pi * C + Wbi + Rbi)
           f = f(x Wf^T + H Rf^T + Pf * C + Wbf + Rbf), or 1 - i (input_forget)
           c = g(x Wc^T + H Rc^T + Wbc + Rbc), C' = f * C + i * c
           C' clipped to [-cell_clip, cell_clip] when cell_clip is set (MIL's clip)
           o = f(x Wo^T + H Ro^T + Po * C' + Wbo + Rbo), H' = o * h(C')
   gate_clip (ONNX's clip) bounds every gate's pre-activation, the input of f
   and g. Direction d runs t = 0 .. len-1, or len-1 .. 0 when rev[d]; Y[t]
   is the state after the step that read x[t] (0 at t >= len); Yh / Yc the
   state after the last step (the initial one when len is 0).

   MIL's ops map onto it: lstm's weights are [4H, I] in gate order (i, f, o,
   z) with one bias (input and recurrent biases summed), peepholes (i, f, o),
   the _back operands for the reverse half of "bidirectional"; gru's are
   (r, o, z) with one bias and the reset applied before the recurrent
   product (ONNX's linear_before_reset 0); states are [batch, D*H], the
   forward half first; the output sequence of "reverse" is in processing
   order (out[k] is the state after reading x[S-1-k]) while "bidirectional"
   aligns both halves with x's time; without output_sequence the first
   output is the final state [1, batch, D*H]. Activations: sigmoid, tanh,
   relu, scaled_tanh (alpha 1, beta 1), sigmoid_hard (0.2, 0.5), linear
   (alpha 1, beta 0).

   Numeric contract. Operands are read into double; each dot product is
   summed in double in increasing index order, then the input bias and the
   recurrent bias are added; states stay in double across steps; every output
   element is rounded once to the output dtype (fp16 / fp32: nearest even).
   exp, tanh and log are the C library's in double; NaN and Inf propagate as
   IEEE 754 does. */
#include "kernels.h"

MGOPT__PRIVATE double mgopt__rnn_act(const mgopt__rnn_act_fn *a, double x) {
  double v;
  switch (a->fn) {
  case MGOPT__RNN_SIGMOID: return 1.0 / (1.0 + exp(-x));
  case MGOPT__RNN_TANH: return tanh(x);
  case MGOPT__RNN_RELU: return x > 0 ? x : x != x ? x : 0.0;
  case MGOPT__RNN_AFFINE: return a->alpha * x + a->beta;
  case MGOPT__RNN_LEAKY_RELU: return x >= 0 ? x : a->alpha * x;
  case MGOPT__RNN_THRESHOLDED_RELU: return x > a->alpha ? x : 0.0; /* ONNX's x > alpha ? x : 0: NaN gives 0 */
  case MGOPT__RNN_SCALED_TANH: return a->alpha * tanh(a->beta * x);
  case MGOPT__RNN_HARD_SIGMOID:
    v = a->alpha * x + a->beta;
    return v != v ? v : v < 0 ? 0.0 : v > 1 ? 1.0 : v;
  case MGOPT__RNN_ELU: return x >= 0 ? x : a->alpha * (exp(x) - 1.0);
  case MGOPT__RNN_SOFTSIGN: return x / (1.0 + fabs(x));
  default: return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); /* softplus, without overflow or lost tails */
  }
}

MGOPT__PRIVATE size_t mgopt__rnn_work_size(const mgopt__rnn *r) {
  int64_t G = r->kind == 2 ? 4 : r->kind == 1 ? 3 : 1;
  return sizeof(double) * (size_t)(2 * G * r->H + 3 * r->H);
}

MGOPT__PRIVATE void mgopt__rnn_run(const mgopt__rnn *r, double *work) {
  const int64_t G = r->kind == 2 ? 4 : r->kind == 1 ? 3 : 1, per = r->kind == 2 ? 3 : r->kind == 1 ? 2 : 1;
  const int64_t S = r->S, NB = r->B, I = r->I, H = r->H, D = r->D;
  double *gx = work, *gh = gx + G * H, *h = gh + G * H, *cs = h + H, *nh = cs + H;
  int64_t d, b, k, j, q, step;
#define MGOPT__RNN_GCLIP(v) (r->has_gate_clip ? ((v) < -r->gate_clip ? -r->gate_clip : (v) > r->gate_clip ? r->gate_clip : (v)) : (v))
  if (r->Y) memset(r->Y, 0, sizeof(double) * (size_t)(S * D * NB * H));
  for (d = 0; d < D; d++) {
    const mgopt__rnn_act_fn *fa = &r->acts[d * per], *ga = &r->acts[d * per + (per > 1)];
    const mgopt__rnn_act_fn *ha = &r->acts[d * per + 2 * (per > 2)];
    const double *W = r->W + d * G * H * I, *R = r->R + d * G * H * H;
    const double *Wb = r->Wb ? r->Wb + d * G * H : NULL, *Rb = r->Rb ? r->Rb + d * G * H : NULL;
    const double *P = r->P ? r->P + d * 3 * H : NULL;
    for (b = 0; b < NB; b++) {
      int64_t len = r->len ? r->len[b] : S, sidx = (d * NB + b) * H;
      for (j = 0; j < H; j++) {
        h[j] = r->h0 ? r->h0[sidx + j] : 0.0;
        cs[j] = r->c0 ? r->c0[sidx + j] : 0.0;
      }
      for (step = 0; step < len; step++) {
        int64_t t = r->rev[d] ? len - 1 - step : step;
        const double *x = r->X + (t * NB + b) * I;
        /* gx = x W^T + Wb, gh = H R^T + Rb (the GRU h gate of linear_before_reset 0 after r) */
        for (q = 0; q < G * H; q++) {
          double sx = 0.0, sh = 0.0;
          for (k = 0; k < I; k++) sx += W[q * I + k] * x[k];
          gx[q] = Wb ? sx + Wb[q] : sx;
          if (r->kind == 1 && !r->linear_before_reset && q >= 2 * H) continue;
          for (k = 0; k < H; k++) sh += R[q * H + k] * h[k];
          gh[q] = Rb ? sh + Rb[q] : sh;
        }
        if (r->kind == 0) {
          for (j = 0; j < H; j++) nh[j] = mgopt__rnn_act(fa, MGOPT__RNN_GCLIP(gx[j] + gh[j]));
        } else if (r->kind == 1) {
          /* z and r, activated, in gx[0, 2H) */
          for (q = 0; q < 2 * H; q++) gx[q] = mgopt__rnn_act(fa, MGOPT__RNN_GCLIP(gx[q] + gh[q]));
          for (j = 0; j < H; j++) {
            double z = gx[j], pre;
            if (r->linear_before_reset) pre = gx[2 * H + j] + gx[H + j] * gh[2 * H + j];
            else {
              double sh = 0.0;
              for (k = 0; k < H; k++) sh += R[(2 * H + j) * H + k] * (gx[H + k] * h[k]);
              pre = gx[2 * H + j] + (Rb ? sh + Rb[2 * H + j] : sh);
            }
            nh[j] = (1.0 - z) * mgopt__rnn_act(ga, MGOPT__RNN_GCLIP(pre)) + z * h[j];
          }
        } else {
          for (j = 0; j < H; j++) {
            double pi = P ? P[j] : 0.0, po = P ? P[H + j] : 0.0, pf = P ? P[2 * H + j] : 0.0, ig, fg, cg, og, cn;
            ig = mgopt__rnn_act(fa, MGOPT__RNN_GCLIP(gx[j] + gh[j] + pi * cs[j]));
            fg = r->input_forget ? 1.0 - ig : mgopt__rnn_act(fa, MGOPT__RNN_GCLIP(gx[2 * H + j] + gh[2 * H + j] + pf * cs[j]));
            cg = mgopt__rnn_act(ga, MGOPT__RNN_GCLIP(gx[3 * H + j] + gh[3 * H + j]));
            cn = fg * cs[j] + ig * cg;
            if (r->has_cell_clip) cn = cn < -r->cell_clip ? -r->cell_clip : cn > r->cell_clip ? r->cell_clip : cn;
            og = mgopt__rnn_act(fa, MGOPT__RNN_GCLIP(gx[H + j] + gh[H + j] + po * cn));
            cs[j] = cn;
            nh[j] = og * mgopt__rnn_act(ha, cn);
          }
        }
        for (j = 0; j < H; j++) h[j] = nh[j];
        if (r->Y)
          for (j = 0; j < H; j++) r->Y[((t * D + d) * NB + b) * H + j] = h[j];
      }
      for (j = 0; j < H; j++) {
        if (r->Yh) r->Yh[sidx + j] = h[j];
        if (r->Yc) r->Yc[sidx + j] = cs[j];
      }
    }
  }
#undef MGOPT__RNN_GCLIP
}

/* ---------------------------------------------------------------- MIL's lstm, gru, rnn */

/* MIL's activation names, with their default parameters. */
static int mgopt__kq_act(const mgopt_op *op, const char *name, const char *dflt, mgopt__rnn_act_fn *a) {
  static const struct {
    const char *name;
    int fn;
    double alpha, beta;
  } acts[] = {{"sigmoid", MGOPT__RNN_SIGMOID, 0, 0},           {"tanh", MGOPT__RNN_TANH, 0, 0},
              {"relu", MGOPT__RNN_RELU, 0, 0},                 {"scaled_tanh", MGOPT__RNN_SCALED_TANH, 1, 1},
              {"sigmoid_hard", MGOPT__RNN_HARD_SIGMOID, 0.2, 0.5}, {"linear", MGOPT__RNN_AFFINE, 1, 0}};
  size_t len, i;
  const char *s = mgopt_op_get_string(op, name, &len);
  if (!s) s = dflt, len = strlen(dflt);
  for (i = 0; i < sizeof acts / sizeof acts[0]; i++)
    if (strlen(acts[i].name) == len && memcmp(acts[i].name, s, len) == 0) {
      a->fn = acts[i].fn, a->alpha = acts[i].alpha, a->beta = acts[i].beta;
      return 1;
    }
  return 0;
}

/* The MIL direction: 0 forward, 1 reverse, 2 bidirectional, -1 otherwise. */
MGOPT__PRIVATE int mgopt__rnn_mil_direction(const mgopt_op *op) {
  size_t len;
  const char *s = mgopt_op_get_string(op, "direction", &len);
  if (!s || (len == 7 && memcmp(s, "forward", 7) == 0)) return 0;
  if (len == 7 && memcmp(s, "reverse", 7) == 0) return 1;
  if (len == 13 && memcmp(s, "bidirectional", 13) == 0) return 2;
  return -1;
}

/* t's elements as doubles into v; 0 when its data cannot be read (OOM). */
static int mgopt__kq_load(mgopt__kctx *k, mgopt_tensor *t, double *v) {
  int64_t i;
  if (!mgopt__k_data(k, t)) return 0;
  for (i = 0; i < t->numel; i++) v[i] = mgopt_tensor_get_f64(t, i);
  return 1;
}

/* Copies the gate blocks of MIL weight w ([G*H, n] or [G*H]) into dst in ONNX
   order: ONNX block q is MIL block from[q]. */
static void mgopt__kq_gates(double *dst, const double *w, int64_t G, int64_t H, int64_t n, const int *from) {
  int64_t q;
  for (q = 0; q < G; q++) memcpy(dst + q * H * n, w + (int64_t)from[q] * H * n, sizeof(double) * (size_t)(H * n));
}

static int mgopt__kq_real(const mgopt_tensor *t) {
  return t && (t->dtype == MGOPT_DT_FP32 || t->dtype == MGOPT_DT_FP16 || t->dtype == MGOPT_DT_FP64);
}

/* kind: 0 rnn, 1 gru, 2 lstm. */
static int mgopt__kq_run(mgopt__kctx *k, int kind) {
  static const int lstm_from[4] = {0, 2, 1, 3}, gru_from[3] = {2, 0, 1}, rnn_from[1] = {0}, peep_from[3] = {0, 2, 1};
  static const char *const fw[4] = {"weight_ih", "weight_hh", "bias", "peephole"};
  static const char *const bw[4] = {"weight_ih_back", "weight_hh_back", "bias_back", "peephole_back"};
  const int64_t G = kind == 2 ? 4 : kind == 1 ? 3 : 1;
  const int *from = kind == 2 ? lstm_from : kind == 1 ? gru_from : rnn_from;
  mgopt_tensor *x = mgopt__k_operand(k, "x"), *ih = mgopt__k_operand(k, "initial_h");
  mgopt_tensor *ic = kind == 2 ? mgopt__k_operand(k, "initial_c") : NULL;
  mgopt__rnn r;
  int dir = mgopt__rnn_mil_direction(k->op), seq = mgopt_op_get_bool(k->op, "output_sequence", 0), res;
  int64_t S, NB, I, H, D, d, b, t, j, shape[3];
  double *h0d, *c0d, *work, *stage, *w, *rr, *wb, *pp, *xs;
  void *o0, *o1, *o2 = NULL;
  mgopt_dtype dt;
  memset(&r, 0, sizeof r);
  if (!mgopt__kq_real(x) || x->rank != 3 || !mgopt__kq_real(ih) || (kind == 2 && !mgopt__kq_real(ic)))
    return mgopt__k_no(k, "x, initial_h%s must be real tensors, x of rank 3", kind == 2 ? ", initial_c" : "");
  if (dir < 0 || (dir == 2 && kind != 2)) return mgopt__k_no(k, "direction is not supported");
  if (k->op->nouts != (kind == 2 ? 3 : 2)) return mgopt__k_no(k, "wrong output count");
  dt = (mgopt_dtype)x->dtype;
  S = x->shape[0], NB = x->shape[1], I = x->shape[2], D = dir == 2 ? 2 : 1;
  r.kind = kind, r.S = S, r.B = NB, r.I = I, r.D = D;
  r.rev[0] = dir == 1, r.rev[1] = 1;
  {
    mgopt_tensor *whh = mgopt__k_operand(k, "weight_hh");
    if (!mgopt__kq_real(whh) || whh->rank != 2 || whh->shape[1] <= 0 || whh->shape[0] != G * whh->shape[1])
      return mgopt__k_no(k, "weight_hh is not [%d*H, H]", (int)G);
    H = r.H = whh->shape[1];
  }
  if (kind == 2) {
    if (!mgopt__kq_act(k->op, "recurrent_activation", "sigmoid", &r.acts[0]) ||
        !mgopt__kq_act(k->op, "cell_activation", "tanh", &r.acts[1]) || !mgopt__kq_act(k->op, "activation", "tanh", &r.acts[2]))
      return mgopt__k_no(k, "unknown activation");
    r.acts[3] = r.acts[0], r.acts[4] = r.acts[1], r.acts[5] = r.acts[2];
    if (mgopt_op_attr(k->op, "clip")) r.has_cell_clip = 1, r.cell_clip = mgopt_op_get_float(k->op, "clip", 0.0);
  } else if (kind == 1) {
    if (!mgopt__kq_act(k->op, "recurrent_activation", "sigmoid", &r.acts[0]) || !mgopt__kq_act(k->op, "activation", "tanh", &r.acts[1]))
      return mgopt__k_no(k, "unknown activation");
  } else if (!mgopt__kq_act(k->op, "activation", "tanh", &r.acts[0])) {
    return mgopt__k_no(k, "unknown activation");
  }
  if (ih->rank != 2 || ih->shape[0] != NB || ih->shape[1] != D * H) return mgopt__k_no(k, "initial_h is not [batch, %d*H]", (int)D);
  if (ic && (ic->rank != 2 || ic->shape[0] != NB || ic->shape[1] != D * H))
    return mgopt__k_no(k, "initial_c is not [batch, %d*H]", (int)D);
  /* one scratch block: weights in ONNX's layout (both directions), states,
     x, the results, the loop's work space and a staging row for loads */
  {
    int64_t n = D * G * H * I + D * G * H * H + D * G * H + D * 3 * H + 2 * D * NB * H + x->numel + S * D * NB * H +
                2 * D * NB * H + (int64_t)(mgopt__rnn_work_size(&r) / sizeof(double)) + G * H * (I > H ? I : H) + 1;
    double *blk = (double *)mgopt__k_scratch(k, n, sizeof(double));
    if (!blk) return MGOPT__K_OOM;
    memset(blk, 0, sizeof(double) * (size_t)n);
    w = blk, blk += D * G * H * I;
    rr = blk, blk += D * G * H * H;
    wb = blk, blk += D * G * H;
    pp = blk, blk += D * 3 * H;
    h0d = blk, blk += D * NB * H;
    c0d = blk, blk += D * NB * H;
    xs = blk, blk += x->numel;
    r.Y = blk, blk += S * D * NB * H;
    r.Yh = blk, blk += D * NB * H;
    r.Yc = blk, blk += D * NB * H;
    work = blk, blk += (int64_t)(mgopt__rnn_work_size(&r) / sizeof(double));
    stage = blk;
  }
  if (!mgopt__kq_load(k, x, xs) || !mgopt__k_data(k, ih) || (ic && !mgopt__k_data(k, ic))) return MGOPT__K_OOM;
  for (d = 0; d < D; d++) {
    const char *const *nm = d ? bw : fw;
    mgopt_tensor *wi = mgopt__k_operand(k, nm[0]), *wh = mgopt__k_operand(k, nm[1]), *bi = mgopt__k_operand(k, nm[2]);
    mgopt_tensor *pe = kind == 2 ? mgopt__k_operand(k, nm[3]) : NULL;
    if (!mgopt__kq_real(wi) || wi->rank != 2 || wi->shape[0] != G * H || wi->shape[1] != I)
      return mgopt__k_no(k, "%s does not fit x and H", nm[0]);
    if (!mgopt__kq_real(wh) || wh->rank != 2 || wh->shape[0] != G * H || wh->shape[1] != H)
      return mgopt__k_no(k, "%s does not fit H", nm[1]);
    if (bi && (!mgopt__kq_real(bi) || bi->rank != 1 || bi->shape[0] != G * H)) return mgopt__k_no(k, "%s does not fit H", nm[2]);
    if (pe && (!mgopt__kq_real(pe) || pe->rank != 1 || pe->shape[0] != 3 * H))
      return mgopt__k_no(k, "%s does not fit H", nm[3]);
    if (!mgopt__kq_load(k, wi, stage)) return MGOPT__K_OOM;
    mgopt__kq_gates(w + d * G * H * I, stage, G, H, I, from);
    if (!mgopt__kq_load(k, wh, stage)) return MGOPT__K_OOM;
    mgopt__kq_gates(rr + d * G * H * H, stage, G, H, H, from);
    if (bi) {
      if (!mgopt__kq_load(k, bi, stage)) return MGOPT__K_OOM;
      mgopt__kq_gates(wb + d * G * H, stage, G, H, 1, from);
    }
    if (pe) {
      if (!mgopt__kq_load(k, pe, stage)) return MGOPT__K_OOM;
      mgopt__kq_gates(pp + d * 3 * H, stage, 3, H, 1, peep_from);
    }
  }
  /* states [batch, D*H] -> [D, batch, H] */
  for (d = 0; d < D; d++)
    for (b = 0; b < NB; b++)
      for (j = 0; j < H; j++) {
        h0d[(d * NB + b) * H + j] = mgopt_tensor_get_f64(ih, b * D * H + d * H + j);
        if (ic) c0d[(d * NB + b) * H + j] = mgopt_tensor_get_f64(ic, b * D * H + d * H + j);
      }
  r.X = xs, r.W = w, r.R = rr, r.Wb = wb, r.P = kind == 2 ? pp : NULL;
  r.h0 = h0d, r.c0 = ic ? c0d : NULL;
  if (kind != 2) r.Yc = NULL;
  /* outputs: [S or 1, batch, D*H], [batch, D*H] (x2) */
  shape[0] = seq ? S : 1, shape[1] = NB, shape[2] = D * H;
  if ((res = mgopt__k_out_full(k, 0, dt, 3, shape, &o0)) != MGOPT__K_OK) return res;
  if ((res = mgopt__k_out_full(k, 1, dt, 2, shape + 1, &o1)) != MGOPT__K_OK) return res;
  if (kind == 2 && (res = mgopt__k_out_full(k, 2, dt, 2, shape + 1, &o2)) != MGOPT__K_OK) return res;
  mgopt__rnn_run(&r, work);
  for (b = 0; b < NB; b++)
    for (d = 0; d < D; d++)
      for (j = 0; j < H; j++) {
        int64_t at = b * D * H + d * H + j, from_at = (d * NB + b) * H + j;
        mgopt__k_store_f64_at(dt, o1, at, r.Yh[from_at]);
        if (o2) mgopt__k_store_f64_at(dt, o2, at, r.Yc[from_at]);
        if (!seq) mgopt__k_store_f64_at(dt, o0, at, r.Yh[from_at]);
      }
  if (seq)
    for (t = 0; t < S; t++)
      for (b = 0; b < NB; b++)
        for (d = 0; d < D; d++) {
          /* "reverse" lists its states in processing order */
          int64_t ts = dir == 1 ? S - 1 - t : t;
          for (j = 0; j < H; j++)
            mgopt__k_store_f64_at(dt, o0, (t * NB + b) * D * H + d * H + j, r.Y[((ts * D + d) * NB + b) * H + j]);
        }
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__kq_rnn(mgopt__kctx *k) { return mgopt__kq_run(k, 0); }
MGOPT__PRIVATE int mgopt__kq_gru(mgopt__kctx *k) { return mgopt__kq_run(k, 1); }
MGOPT__PRIVATE int mgopt__kq_lstm(mgopt__kctx *k) { return mgopt__kq_run(k, 2); }
