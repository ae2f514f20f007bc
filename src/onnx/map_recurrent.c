/* src/onnx/map_recurrent.c — ONNX <-> canonical mappings of the recurrent ops: LSTM <-> lstm, GRU <-> gru, RNN <-> rnn.

   Layouts. ONNX (layout 0): X [S, B, I], W [D, G*H, I], R [D, G*H, H],
   B [D, 2*G*H] (input biases then recurrent biases), P [D, 3*H], states
   [D, B, H], Y [S, D, B, H]. MIL: x [S, B, I], weight_ih [G*H, I] and
   weight_hh [G*H, H] per direction (the reverse half of a bidirectional
   lstm in the _back operands), one bias [G*H] (input + recurrent), states
   [B, D*H] (the forward half first), the first output [S, B, D*H] with
   output_sequence, else the final state [1, B, D*H].

   Gate order. LSTM: ONNX (i, o, f, c), MIL (i, f, o, z); peepholes ONNX
   (i, o, f), MIL (i, f, o). GRU: ONNX (z, r, h), MIL (r, o, z), and MIL's
   gru applies the reset gate before the recurrent product with one bias,
   which is ONNX's linear_before_reset = 0 (the h gate's two biases summed).
   Weights are constants, re-laid once at import and back at export, so an
   import / export round trip writes the original gate order again (the two
   biases come back summed in the input half, the recurrent half zero).

   Import maps exactly only: layout 0, constant W, R (and B, P) of the
   node's own graph, not a control-flow branch, read by no other op (a
   shared weight is not copied: mgopt__rci_sole_reader), no
   sequence_lens, no clip (ONNX clips the gates, MIL's clip the cell
   state), no input_forget, GRU's linear_before_reset 0, activations MIL
   has (Sigmoid, Tanh, Relu; ScaledTanh 1, 1; HardSigmoid 0.2, 0.5; Affine
   1, 0) and the same for both directions, GRU and RNN one direction, and
   no Y from "reverse" (MIL lists a reverse run's outputs in processing
   order, ONNX in time order). Initial states: absent (zeros, when the batch
   is static), constant (re-laid), or squeeze / transpose + reshape ops;
   outputs: expand_dims / reshape + transpose ops after the canonical op.
   Everything else stays an opaque onnx::LSTM / GRU / RNN.

   Export writes the ONNX op at the target opset (7 and later) with the
   Squeeze / Unsqueeze / Transpose / Reshape (and, for a reverse output
   sequence, a Slice with step -1, opset 10) the layouts need; MIL's clip
   has no ONNX form and is refused. */
#include "convert_internal.h"

/* kind index: 0 rnn, 1 gru, 2 lstm */
static int mgopt__rcm_kind(int32_t k) { return k == MGOPT_OP_lstm ? 2 : k == MGOPT_OP_gru ? 1 : 0; }
static int64_t mgopt__rcm_gates(int kind) { return kind == 2 ? 4 : kind == 1 ? 3 : 1; }

/* ONNX gate block q is MIL gate block from[q]; peepholes likewise. */
static const int mgopt__rcm_lstm_from[4] = {0, 2, 1, 3}, mgopt__rcm_gru_from[3] = {2, 0, 1}, mgopt__rcm_rnn_from[1] = {0};
static const int mgopt__rcm_peep_from[3] = {0, 2, 1};

static const int *mgopt__rcm_from(int kind) {
  return kind == 2 ? mgopt__rcm_lstm_from : kind == 1 ? mgopt__rcm_gru_from : mgopt__rcm_rnn_from;
}

/* MIL activation names and their ONNX forms (alpha, beta where ONNX's function takes them). */
static const struct {
  const char *mil, *onnx;
  int has_alpha, has_beta;
  float alpha, beta;
} mgopt__rcm_acts[] = {
    {"sigmoid", "Sigmoid", 0, 0, 0.0f, 0.0f},      {"tanh", "Tanh", 0, 0, 0.0f, 0.0f},
    {"relu", "Relu", 0, 0, 0.0f, 0.0f},            {"scaled_tanh", "ScaledTanh", 1, 1, 1.0f, 1.0f},
    {"sigmoid_hard", "HardSigmoid", 1, 1, 0.2f, 0.5f}, {"linear", "Affine", 1, 1, 1.0f, 0.0f},
};
#define MGOPT__RCM_NACTS 6

static int mgopt__rcm_ieq(mgopt_str s, const char *c) {
  size_t i, n = strlen(c);
  if (s.len != n) return 0;
  for (i = 0; i < n; i++) {
    char a = s.ptr[i], b = c[i];
    if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z') b = (char)(b - 'A' + 'a');
    if (a != b) return 0;
  }
  return 1;
}

/* The MIL activation index of op's attribute `name` (default dflt), -1 for another word. */
static int mgopt__rcm_mil_act(const mgopt_op *op, const char *name, const char *dflt) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(op, name, &n);
  int i;
  if (!s) s = dflt, n = strlen(dflt);
  for (i = 0; i < MGOPT__RCM_NACTS; i++)
    if (strlen(mgopt__rcm_acts[i].mil) == n && memcmp(mgopt__rcm_acts[i].mil, s, n) == 0) return i;
  return -1;
}

/* The activation slots of each kind, ONNX's order: (f), (f, g), (f, g, h). */
static const char *const mgopt__rcm_act_attr[3][3] = {
    {"activation", NULL, NULL},
    {"recurrent_activation", "activation", NULL},
    {"recurrent_activation", "cell_activation", "activation"},
};
static const char *const mgopt__rcm_act_dflt[3][3] = {
    {"tanh", NULL, NULL}, {"sigmoid", "tanh", NULL}, {"sigmoid", "tanh", "tanh"}};

/* MIL's direction: 0 forward, 1 reverse, 2 bidirectional, -1 another word. */
static int mgopt__rcm_dir(const mgopt_op *op) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(op, "direction", &n);
  if (!s || (n == 7 && memcmp(s, "forward", 7) == 0)) return 0;
  if (n == 7 && memcmp(s, "reverse", 7) == 0) return 1;
  if (n == 13 && memcmp(s, "bidirectional", 13) == 0) return 2;
  return -1;
}

static int mgopt__rcm_real(mgopt_dtype t) { return t == MGOPT_DT_FP32 || t == MGOPT_DT_FP16; }

/* 1 when v is read by the program past this op: a use by another op or a block output. */
static int mgopt__rcm_used(const mgopt_value *v) { return v && !(v->flags & MGOPT_VALUE_ABSENT) && v->nuses > 0; }

/* ---------------------------------------------------------------- import */

/* Reads the activations attribute into MIL indices act[per] (one set for
   every direction); 0 when some function has no MIL form or the directions differ. */
static int mgopt__rci_acts(mgopt__imp *I, int kind, int64_t D, int *act) {
  static const char *const dflt_onnx[3][3] = {{"Tanh", NULL, NULL}, {"Sigmoid", "Tanh", NULL}, {"Sigmoid", "Tanh", "Tanh"}};
  const mgopt_onnx_attribute *names = mgopt__imp_attr(I->node, "activations");
  const mgopt_onnx_attribute *al = mgopt__imp_attr(I->node, "activation_alpha");
  const mgopt_onnx_attribute *be = mgopt__imp_attr(I->node, "activation_beta");
  int per = kind + 1, j, k;
  int64_t ai = 0, bi = 0, d;
  if (names && (names->type != MGOPT_ONNX_ATTR_STRINGS || (names->nstrings != per && names->nstrings != per * D)))
    return 0;
  if ((al && al->type != MGOPT_ONNX_ATTR_FLOATS) || (be && be->type != MGOPT_ONNX_ATTR_FLOATS)) return 0;
  for (d = 0; d < D; d++)
    for (j = 0; j < per; j++) {
      mgopt_str s;
      int found = -1;
      if (names) {
        s = names->strings[names->nstrings == per ? j : d * per + j];
      } else {
        s.ptr = dflt_onnx[kind][j];
        s.len = strlen(s.ptr);
      }
      for (k = 0; k < MGOPT__RCM_NACTS && found < 0; k++)
        if (mgopt__rcm_ieq(s, mgopt__rcm_acts[k].onnx)) found = k;
      if (found < 0) return 0;
      if (mgopt__rcm_acts[found].has_alpha) {
        float a = al && ai < al->nfloats ? al->floats[ai] : mgopt__rcm_acts[found].alpha;
        ai++;
        if (a != mgopt__rcm_acts[found].alpha) return 0;
      }
      if (mgopt__rcm_acts[found].has_beta) {
        float b = be && bi < be->nfloats ? be->floats[bi] : mgopt__rcm_acts[found].beta;
        bi++;
        if (b != mgopt__rcm_acts[found].beta) return 0;
      }
      if (d == 0) act[j] = found;
      else if (act[j] != found) return 0;
    }
  return 1;
}

/* A constant holding direction d of ONNX tensor t ([D, G*H, n], or [D, G*H]
   when n is 0) in MIL's gate order; with sum (ONNX's B) the two bias halves added. */
static mgopt_value *mgopt__rci_gates(mgopt__imp *I, const mgopt_tensor *t, int kind, int64_t d, int64_t G, int64_t H,
                                     int64_t n, int peep, int sum, const char *what) {
  const int *from = peep ? mgopt__rcm_peep_from : mgopt__rcm_from(kind);
  int64_t shape[2], q, j, k, cols = n ? n : 1, per = G * H * cols;
  mgopt_tensor *o;
  shape[0] = G * H;
  shape[1] = n;
  o = mgopt_tensor_new(I->p, (mgopt_dtype)t->dtype, n ? 2 : 1, shape);
  if (!o) return NULL;
  for (q = 0; q < G; q++) /* MIL block from[q] is ONNX block q */
    for (j = 0; j < H; j++)
      for (k = 0; k < cols; k++) {
        int64_t src = (sum ? d * 2 * per : d * per) + (q * H + j) * cols + k;
        double v = mgopt_tensor_get_f64(t, src);
        if (sum) v += mgopt_tensor_get_f64(t, src + per);
        mgopt_tensor_set_f64(o, ((int64_t)from[q] * H + j) * cols + k, v);
      }
  return mgopt__imp_const(I, NULL, what, o);
}

/* An intermediate op over x with int attribute list `ints` (perm or axes) or
   a shape constant, output named after the node's output and `what`, typed. */
static mgopt_value *mgopt__rci_step(mgopt__imp *I, const char *type, mgopt_value *x, const char *attr, const int64_t *ints,
                                    int64_t n, const char *what, const char *out_name) {
  char buf[160];
  const char *slots[2] = {"x", "shape"};
  mgopt_value *vals[2];
  mgopt_op *op;
  mgopt_diag d2;
  int reshape = strcmp(type, "reshape") == 0;
  vals[0] = x;
  vals[1] = NULL;
  if (reshape && !(vals[1] = mgopt__imp_const_i32s(I, NULL, what, ints, n))) return NULL;
  snprintf(buf, sizeof buf, "%.100s_%s", I->node->noutputs && I->node->outputs[0].len ? mgopt__imp_intern(I, I->node->outputs[0]) : "rnn", what);
  op = mgopt_build_op(I->p, I->b, NULL, type, out_name ? out_name : mgopt_program_fresh_name(I->p, buf), reshape ? 2 : 1,
                      slots, vals, 1);
  if (!op || (!reshape && mgopt_op_set_ints(op, attr, ints, n))) return NULL;
  mgopt_diag_clear(&d2);
  if (out_name) {
    if (mgopt__imp_finish(I, op)) return NULL;
  } else if (mgopt_op_infer(I->p, op, &d2)) {
    mgopt__imp_fail(I, MGOPT_ERR_TYPE, "%s: %s", type, d2.msg);
    return NULL;
  }
  return op->outs[0];
}

/* MIL's initial state [B, D*H] from ONNX input k ([D, B, H]); NULL on error. */
static mgopt_value *mgopt__rci_state(mgopt__imp *I, int64_t k, mgopt_dtype dt, mgopt_dim batch, int64_t D, int64_t H,
                                     const char *what) {
  mgopt_value *s = mgopt__imp_in(I, k);
  const mgopt_tensor *t = s ? mgopt_value_const(s) : NULL;
  int64_t shape[2], b, d, j;
  mgopt_tensor *o;
  if (!s || t) {
    shape[0] = batch.v;
    shape[1] = D * H;
    o = mgopt_tensor_new(I->p, dt, 2, shape);
    if (!o) return NULL;
    if (t)
      for (d = 0; d < D; d++)
        for (b = 0; b < batch.v; b++)
          for (j = 0; j < H; j++) mgopt_tensor_set_f64(o, b * D * H + d * H + j, mgopt_tensor_get_f64(t, (d * batch.v + b) * H + j));
    return mgopt__imp_const(I, NULL, what, o);
  }
  if (D == 1) {
    static const int64_t ax[1] = {0};
    return mgopt__rci_step(I, "squeeze", s, "axes", ax, 1, what, NULL);
  } else {
    static const int64_t perm[3] = {1, 0, 2};
    int64_t shp[2];
    mgopt_value *tr = mgopt__rci_step(I, "transpose", s, "perm", perm, 3, what, NULL);
    shp[0] = -1;
    shp[1] = D * H;
    return tr ? mgopt__rci_step(I, "reshape", tr, NULL, shp, 2, what, NULL) : NULL;
  }
}

/* 1 when state input k can be made: absent with a static batch, a constant
   [D, B, H] with a static batch, or a value [D, ?, H] (its first dim known). */
static int mgopt__rci_state_ok(mgopt__imp *I, int64_t k, mgopt_dtype dt, mgopt_dim batch, int64_t D, int64_t H) {
  mgopt_value *s = mgopt__imp_in(I, k);
  const mgopt_tensor *t = s ? mgopt_value_const(s) : NULL;
  if (!s || t) {
    if (!mgopt_dim_is_static(batch)) return 0;
    return !t || (t->rank == 3 && t->shape[0] == D && t->shape[1] == batch.v && t->shape[2] == H && t->dtype == (int32_t)dt);
  }
  return s->type.kind == MGOPT_TYPE_TENSOR && s->type.rank == 3 && s->type.dtype == (int32_t)dt &&
         mgopt_dim_is_static(s->type.dims[0]) && s->type.dims[0].v == D &&
         (!mgopt_dim_is_static(s->type.dims[2]) || s->type.dims[2].v == H);
}

/* ONNX output k from MIL output v (seq: the [S, B, D*H] sequence, else a [B, D*H] state). */
static int mgopt__rci_output(mgopt__imp *I, int64_t k, mgopt_value *v, int seq, int64_t D, int64_t H, mgopt_dim S,
                             mgopt_dim B) {
  const char *name;
  if (k >= I->node->noutputs || !I->node->outputs[k].len) return 1;
  name = mgopt__imp_intern(I, I->node->outputs[k]);
  if (!name) return 0;
  if (D == 1) {
    int64_t ax = seq ? 1 : 0;
    return mgopt__rci_step(I, "expand_dims", v, "axes", &ax, 1, "y", name) != NULL;
  }
  if (seq) {
    static const int64_t perm[4] = {0, 2, 1, 3};
    int64_t shp[4];
    mgopt_value *r;
    shp[0] = mgopt_dim_is_static(S) ? S.v : -1;
    shp[1] = mgopt_dim_is_static(S) ? -1 : B.v;
    shp[2] = 2;
    shp[3] = H;
    r = mgopt__rci_step(I, "reshape", v, NULL, shp, 4, "y_shape", NULL);
    return r && mgopt__rci_step(I, "transpose", r, "perm", perm, 4, "y", name) != NULL;
  } else {
    static const int64_t perm[3] = {1, 0, 2};
    int64_t shp[3] = {-1, 2, 0};
    mgopt_value *r;
    shp[2] = H;
    r = mgopt__rci_step(I, "reshape", v, NULL, shp, 3, "y_shape", NULL);
    return r && mgopt__rci_step(I, "transpose", r, "perm", perm, 3, "y", name) != NULL;
  }
}

/* 1 when nothing but the node itself reads v, made in the node's own graph,
   a function body: a weight shared with another reader stays shared (the
   node stays opaque rather than copy it re-laid), and so does one in a
   control-flow branch, whose sibling branches commonly hold equal weights
   that const_deduplication merges across the branches. */
static int mgopt__rci_sole_reader(mgopt__imp *I, const mgopt_value *v) {
  const mgopt_use *u;
  /* one from an enclosing graph may have readers in branches not read yet */
  if (!v->def || v->def->parent != I->b || I->b->parent_op) return 0;
  for (u = v->uses; u; u = u->next) {
    const mgopt_op *o = u->op;
    /* the opaque op being mapped again reads it under the node's name */
    if (o && o->kind == MGOPT_OP_OPAQUE && o->name && I->node->name.len && mgopt__imp_streq(I->node->name, o->name)) continue;
    return 0;
  }
  return 1;
}

static int mgopt__imp_recurrent(mgopt__imp *I, const mgopt__onnx_map *m) {
  static const char *const kinds[3] = {"rnn", "gru", "lstm"};
  static const char *const fw[4] = {"weight_ih", "weight_hh", "bias", "peephole"};
  static const char *const bw[4] = {"weight_ih_back", "weight_hh_back", "bias_back", "peephole_back"};
  int kind = mgopt__rcm_kind(m->kind), act[3] = {0, 0, 0}, dir, seq, j;
  int64_t G = mgopt__rcm_gates(kind), H = mgopt__imp_aint(I->node, "hidden_size", -1), D, d, I_, nout;
  mgopt_value *x = mgopt__imp_in(I, 0), *wv = mgopt__imp_in(I, 1), *rv = mgopt__imp_in(I, 2), *bv = mgopt__imp_in(I, 3);
  mgopt_value *pv = kind == 2 ? mgopt__imp_in(I, 7) : NULL, *h0, *c0 = NULL, *outs[3];
  const mgopt_tensor *W = wv ? mgopt_value_const(wv) : NULL, *R = rv ? mgopt_value_const(rv) : NULL;
  const mgopt_tensor *Bt = bv ? mgopt_value_const(bv) : NULL, *P = pv ? mgopt_value_const(pv) : NULL;
  mgopt_dtype dt;
  mgopt_dim S, B;
  mgopt_op *op;
  char buf[160];
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR || x->type.rank != 3 || !mgopt__rcm_real((mgopt_dtype)x->type.dtype)) return 0;
  dt = (mgopt_dtype)x->type.dtype;
  if (mgopt__imp_aint(I->node, "layout", 0) != 0 || mgopt__imp_attr(I->node, "clip") || mgopt__imp_in(I, 4)) return 0;
  if (kind == 2 && mgopt__imp_aint(I->node, "input_forget", 0) != 0) return 0;
  if (kind == 1 && mgopt__imp_aint(I->node, "linear_before_reset", 0) != 0) return 0;
  if (!mgopt__imp_attr(I->node, "direction") || mgopt__imp_astr(I->node, "direction", "forward")) dir = 0;
  else if (mgopt__imp_astr(I->node, "direction", "reverse")) dir = 1;
  else if (mgopt__imp_astr(I->node, "direction", "bidirectional")) dir = 2;
  else return 0;
  if (dir == 2 && kind != 2) return 0;
  D = dir == 2 ? 2 : 1;
  nout = mgopt__imp_nout(I->node);
  seq = nout >= 1 && I->node->outputs[0].len > 0;
  if (seq && dir == 1) return 0; /* MIL's reverse sequence is in processing order */
  S = x->type.dims[0];
  B = x->type.dims[1];
  if (seq && D == 2 && !mgopt_dim_is_static(S) && !mgopt_dim_is_static(B)) return 0;
  I_ = x->type.dims[2].v;
  if (!W || !R || (bv && !Bt) || (pv && !P) || H < 1 || !mgopt_dim_is_static(x->type.dims[2])) return 0;
  if (W->dtype != (int32_t)dt || R->dtype != (int32_t)dt || (Bt && Bt->dtype != (int32_t)dt) || (P && P->dtype != (int32_t)dt))
    return 0;
  if (W->rank != 3 || W->shape[0] != D || W->shape[1] != G * H || W->shape[2] != I_) return 0;
  if (R->rank != 3 || R->shape[0] != D || R->shape[1] != G * H || R->shape[2] != H) return 0;
  if (Bt && (Bt->rank != 2 || Bt->shape[0] != D || Bt->shape[1] != 2 * G * H)) return 0;
  if (P && (P->rank != 2 || P->shape[0] != D || P->shape[1] != 3 * H)) return 0;
  if (!mgopt__rci_acts(I, kind, D, act)) return 0;
  if (!mgopt__rci_sole_reader(I, wv) || !mgopt__rci_sole_reader(I, rv) || (bv && !mgopt__rci_sole_reader(I, bv)) ||
      (pv && !mgopt__rci_sole_reader(I, pv)))
    return 0;
  if (!mgopt__rci_state_ok(I, 5, dt, B, D, H) || (kind == 2 && !mgopt__rci_state_ok(I, 6, dt, B, D, H))) return 0;
  /* everything checked: build */
  if (!(h0 = mgopt__rci_state(I, 5, dt, B, D, H, "initial_h"))) return -1;
  if (kind == 2 && !(c0 = mgopt__rci_state(I, 6, dt, B, D, H, "initial_c"))) return -1;
  snprintf(buf, sizeof buf, "%.100s", I->node->name.len ? mgopt__imp_intern(I, I->node->name) : kinds[kind]);
  op = mgopt_op_new(I->p, kinds[kind], kind == 2 ? 3 : 2, 0);
  if (!op) return -1;
  if (I->node->name.len) op->name = mgopt__imp_intern(I, I->node->name);
  for (j = 0; j < op->nouts; j++) {
    char ob[180];
    snprintf(ob, sizeof ob, "%.100s_out%d", I->node->noutputs && I->node->outputs[0].len ? mgopt__imp_intern(I, I->node->outputs[0]) : buf, j);
    if (!(op->outs[j]->name = mgopt_program_fresh_name(I->p, ob))) return -1;
  }
  /* one direction without Y: the final-state output [1, B, H] is Y_h itself */
  if (D == 1 && !seq && nout >= 2 && I->node->outputs[1].len && !(op->outs[0]->name = mgopt__imp_intern(I, I->node->outputs[1])))
    return -1;
  if (mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "initial_h", h0) ||
      (c0 && mgopt_op_set_operand(op, "initial_c", c0)))
    return -1;
  for (d = 0; d < D; d++) {
    const char *const *nm = d ? bw : fw;
    mgopt_value *a = mgopt__rci_gates(I, W, kind, d, G, H, I_, 0, 0, nm[0]);
    mgopt_value *b = a ? mgopt__rci_gates(I, R, kind, d, G, H, H, 0, 0, nm[1]) : NULL;
    if (!a || !b || mgopt_op_set_operand(op, nm[0], a) || mgopt_op_set_operand(op, nm[1], b)) return -1;
    if (Bt && (!(a = mgopt__rci_gates(I, Bt, kind, d, G, H, 0, 0, 1, nm[2])) || mgopt_op_set_operand(op, nm[2], a))) return -1;
    if (P && (!(a = mgopt__rci_gates(I, P, kind, d, 3, H, 0, 1, 0, nm[3])) || mgopt_op_set_operand(op, nm[3], a))) return -1;
  }
  if (dir && mgopt_op_set_string(op, "direction", dir == 1 ? "reverse" : "bidirectional")) return -1;
  if (seq && mgopt_op_set_bool(op, "output_sequence", 1)) return -1;
  for (j = 0; j <= kind; j++)
    if (strcmp(mgopt__rcm_acts[act[j]].mil, mgopt__rcm_act_dflt[kind][j]) != 0 &&
        mgopt_op_set_string(op, mgopt__rcm_act_attr[kind][j], mgopt__rcm_acts[act[j]].mil))
      return -1;
  mgopt_op_append(op, I->b);
  if (mgopt__imp_finish(I, op)) return -1;
  for (j = 0; j < op->nouts; j++) outs[j] = op->outs[j];
  if (!mgopt__rci_output(I, 0, outs[0], 1, D, H, S, B) ||
      (!(D == 1 && !seq) && !mgopt__rci_output(I, 1, outs[1], 0, D, H, S, B)) ||
      (kind == 2 && !mgopt__rci_output(I, 2, outs[2], 0, D, H, S, B)))
    return -1;
  return 1;
}

/* ---------------------------------------------------------------- export */

/* Why op cannot be written at opset m->since and later (NULL: it can). */
static const char *mgopt__exw_recurrent(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  static const char *const fw[4] = {"weight_ih", "weight_hh", "bias", "peephole"};
  static const char *const bw[4] = {"weight_ih_back", "weight_hh_back", "bias_back", "peephole_back"};
  int kind = mgopt__rcm_kind(op->kind), dir = mgopt__rcm_dir(op), j, d;
  int64_t G = mgopt__rcm_gates(kind), H, I_;
  mgopt_value *x = mgopt_op_operand(op, "x"), *h0 = mgopt_op_operand(op, "initial_h");
  mgopt_value *c0 = kind == 2 ? mgopt_op_operand(op, "initial_c") : NULL;
  const mgopt_tensor *whh = mgopt_op_operand(op, "weight_hh") ? mgopt_value_const(mgopt_op_operand(op, "weight_hh")) : NULL;
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x || !h0 || (kind == 2 && !c0) || op->nouts != (kind == 2 ? 3 : 2)) return "an operand is missing";
  if (x->type.rank != 3 || !mgopt__rcm_real((mgopt_dtype)x->type.dtype) || !mgopt_dim_is_static(x->type.dims[2]))
    return "x is not [S, B, I] of fp32 or fp16 with a static I";
  if (dir < 0 || (dir == 2 && kind != 2)) return "direction has no ONNX form";
  if (kind == 2 && mgopt_op_attr(op, "clip")) return "lstm's clip bounds the cell state: ONNX's clip bounds the gates";
  for (j = 0; j <= kind; j++)
    if (mgopt__rcm_mil_act(op, mgopt__rcm_act_attr[kind][j], mgopt__rcm_act_dflt[kind][j]) < 0) return "unknown activation";
  if (!whh || whh->rank != 2 || whh->shape[1] < 1 || whh->shape[0] != G * whh->shape[1]) return "weight_hh is not a constant [G*H, H]";
  H = whh->shape[1];
  I_ = x->type.dims[2].v;
  for (d = 0; d < (dir == 2 ? 2 : 1); d++) {
    const char *const *nm = d ? bw : fw;
    for (j = 0; j < (kind == 2 ? 4 : 3); j++) {
      mgopt_value *v = mgopt_op_operand(op, nm[j]);
      const mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
      int64_t rows = j == 3 ? 3 * H : G * H, cols = j == 0 ? I_ : j == 1 ? H : 0;
      if (!v && j >= 2) continue;
      if (!t || t->dtype != x->type.dtype || t->rank != (cols ? 2 : 1) || t->shape[0] != rows || (cols && t->shape[1] != cols))
        return "the weights are not constants of x's dtype and the op's shapes";
    }
  }
  for (j = 0; j < (kind == 2 ? 2 : 1); j++) {
    mgopt_value *s = j ? c0 : h0;
    if (s->type.rank != 2 || s->type.dtype != x->type.dtype) return "an initial state is not [B, D*H] of x's dtype";
  }
  if (dir == 1 && mgopt_op_get_bool(op, "output_sequence", 0) && mgopt__rcm_used(op->outs[0]) && m->since < 10)
    return "a reverse output sequence needs Slice with steps (opset 10)";
  return NULL;
}

/* ONNX's W / R / B / P of the op ([D, G*H, n], [D, 2*G*H], [D, 3*H]) from the MIL constants. */
static mgopt_tensor *mgopt__rce_gates(mgopt__exp *E, const mgopt_op *op, int kind, int64_t D, int j, int64_t H, int64_t n) {
  static const char *const fw[4] = {"weight_ih", "weight_hh", "bias", "peephole"};
  static const char *const bw[4] = {"weight_ih_back", "weight_hh_back", "bias_back", "peephole_back"};
  const int *from = j == 3 ? mgopt__rcm_peep_from : mgopt__rcm_from(kind);
  int64_t G = j == 3 ? 3 : mgopt__rcm_gates(kind), cols = n ? n : 1, shape[3], d, q, r, k;
  int any = 0;
  mgopt_dtype dt = (mgopt_dtype)mgopt_op_operand(op, "x")->type.dtype;
  mgopt_tensor *o;
  shape[0] = D;
  shape[1] = j == 2 ? 2 * G * H : G * H;
  shape[2] = n;
  for (d = 0; d < D; d++) any |= mgopt_op_operand(op, (d ? bw : fw)[j]) != NULL;
  if (!any) return NULL;
  o = mgopt_tensor_new(E->p, dt, n ? 3 : 2, shape);
  if (!o) return NULL;
  memset(o->data, 0, (size_t)o->nbytes);
  for (d = 0; d < D; d++) {
    mgopt_value *v = mgopt_op_operand(op, (d ? bw : fw)[j]);
    const mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
    if (!t) continue;
    for (q = 0; q < G; q++)
      for (r = 0; r < H; r++)
        for (k = 0; k < cols; k++)
          mgopt_tensor_set_f64(o, d * shape[1] * cols + (q * H + r) * cols + k,
                               mgopt_tensor_get_f64(t, ((int64_t)from[q] * H + r) * cols + k));
  }
  return o;
}

/* One node op_type(ins) -> out with an optional int list attribute. */
static int mgopt__rce_node(mgopt__exp *E, const char *op_type, const char *const *ins, int64_t nin, const char *out,
                           const char *attr, const int64_t *v, int64_t n) {
  mgopt_onnx_node *nd = mgopt__exp_node(E, op_type, "", NULL);
  return nd && mgopt__exp_set_io(E, &nd->inputs, &nd->ninputs, ins, nin) &&
         mgopt__exp_set_io(E, &nd->outputs, &nd->noutputs, &out, 1) && (!attr || mgopt__exp_aints(E, nd, attr, v, n));
}

/* Squeeze (or Unsqueeze) of axis, in the opset's form. */
static int mgopt__rce_squeeze(mgopt__exp *E, int unsq, const char *in, const char *out, int64_t axis) {
  const char *ins[2];
  ins[0] = in;
  if (E->opset >= 13) {
    if (!(ins[1] = mgopt__exp_i64_const(E, "axes", &axis, 1))) return 0;
    return mgopt__rce_node(E, unsq ? "Unsqueeze" : "Squeeze", ins, 2, out, NULL, NULL, 0);
  }
  return mgopt__rce_node(E, unsq ? "Unsqueeze" : "Squeeze", ins, 1, out, "axes", &axis, 1);
}

static int mgopt__rce_reshape(mgopt__exp *E, const char *in, const char *out, const int64_t *shape, int64_t n) {
  const char *ins[2];
  ins[0] = in;
  ins[1] = mgopt__exp_i64_const(E, "shape", shape, n);
  return ins[1] && mgopt__rce_node(E, "Reshape", ins, 2, out, NULL, NULL, 0);
}

/* 1 when op (squeeze or expand_dims) has exactly the int list attribute axes = [axis]. */
static int mgopt__rce_axes_is(const mgopt_op *op, int64_t axis) {
  const mgopt_attr *a = mgopt_op_attr(op, "axes");
  int64_t r = op->outs[0]->type.rank + (op->kind == MGOPT_OP_squeeze ? 1 : 0);
  return a && a->kind == MGOPT_ATTR_INTS && a->n == 1 && r > 0 && (a->u.ints[0] == axis || a->u.ints[0] == axis - r);
}

/* The import's squeeze(axes=[0]) before a one-direction op's state: the
   [1, B, H] value it squeezes, written as the ONNX state itself, when the
   squeeze feeds nothing else (NULL otherwise). */
static mgopt_value *mgopt__rce_state_src(const mgopt_op *op, const char *slot) {
  mgopt_value *v = mgopt_op_operand(op, slot);
  const mgopt_op *sq = v ? v->def : NULL;
  if (!sq || sq->kind != MGOPT_OP_squeeze || v->nuses != 1 || v->nblock_uses || mgopt__rcm_dir(op) == 2) return NULL;
  if (mgopt_op_operand(op, "x") == v || !mgopt_op_operand(sq, "x") || mgopt_op_operand(sq, "x")->type.rank != 3 ||
      !mgopt__rce_axes_is(sq, 0))
    return NULL;
  return mgopt_op_operand(sq, "x");
}

/* The import's expand_dims after a one-direction op's output k (axis 1 of a
   forward sequence, axis 0 of a state, forward or reverse): its value,
   written as the ONNX output itself, when output k feeds nothing else (NULL
   otherwise). */
static mgopt_value *mgopt__rce_out_dst(const mgopt_op *op, int k) {
  const mgopt_value *v = op->outs[k];
  const mgopt_op *ex = v->nuses == 1 && !v->nblock_uses && v->uses ? v->uses->op : NULL;
  int seq = mgopt_op_get_bool(op, "output_sequence", 0), dir = mgopt__rcm_dir(op);
  if (!ex || ex->kind != MGOPT_OP_expand_dims || dir == 2 || (dir != 0 && k == 0) || mgopt_op_operand(ex, "x") != v)
    return NULL;
  if (k == 0 && !seq) return NULL;
  return mgopt__rce_axes_is(ex, k == 0 ? 1 : 0) ? ex->outs[0] : NULL;
}

MGOPT__PRIVATE int mgopt__exp_recurrent_absorbs(const mgopt_op *op) {
  int k;
  if (op->kind == MGOPT_OP_squeeze && op->outs[0]->nuses == 1 && op->outs[0]->uses && op->outs[0]->uses->op) {
    const mgopt_op *r = op->outs[0]->uses->op;
    if (r->kind != MGOPT_OP_lstm && r->kind != MGOPT_OP_gru && r->kind != MGOPT_OP_rnn) return 0;
    return (mgopt_op_operand(r, "initial_h") == op->outs[0] && mgopt__rce_state_src(r, "initial_h")) ||
           (mgopt_op_operand(r, "initial_c") == op->outs[0] && mgopt__rce_state_src(r, "initial_c"));
  }
  if (op->kind == MGOPT_OP_expand_dims) {
    const mgopt_value *x = mgopt_op_operand(op, "x");
    const mgopt_op *r = x ? x->def : NULL;
    if (!r || (r->kind != MGOPT_OP_lstm && r->kind != MGOPT_OP_gru && r->kind != MGOPT_OP_rnn)) return 0;
    for (k = 0; k < r->nouts; k++)
      if (r->outs[k] == x && mgopt__rce_out_dst(r, k) == op->outs[0]) return 1;
  }
  return 0;
}

/* ONNX's state [D, B, H] from MIL's [B, D*H]: none for zeros, a re-laid
   constant, Unsqueeze, or Reshape + Transpose. */
static const char *mgopt__rce_state(mgopt__exp *E, mgopt_value *s, const mgopt_value *src, int64_t D, int64_t H) {
  const mgopt_tensor *t = mgopt_value_const(s);
  const char *nm = mgopt__exp_vname(s), *out;
  if (src) return mgopt__exp_vname(src); /* already [1, B, H] */
  if (t && t->rank == 2 && t->shape[1] == D * H && mgopt_tensor_all_equal_f64(t, 0.0)) return ""; /* ONNX's default */
  if (t && t->rank == 2 && t->shape[1] == D * H) {
    int64_t shape[3], b, d, j, NB = t->shape[0];
    mgopt_tensor *o;
    shape[0] = D;
    shape[1] = NB;
    shape[2] = H;
    if (!(o = mgopt_tensor_new(E->p, (mgopt_dtype)t->dtype, 3, shape))) return NULL;
    for (d = 0; d < D; d++)
      for (b = 0; b < NB; b++)
        for (j = 0; j < H; j++) mgopt_tensor_set_f64(o, (d * NB + b) * H + j, mgopt_tensor_get_f64(t, b * D * H + d * H + j));
    return mgopt__exp_const(E, nm, o);
  }
  if (!(out = mgopt__exp_fresh(E, nm))) return NULL;
  if (D == 1) return mgopt__rce_squeeze(E, 1, nm, out, 0) ? out : NULL;
  {
    static const int64_t perm[3] = {1, 0, 2};
    int64_t shape[3] = {0, 2, 0};
    const char *rs = mgopt__exp_fresh(E, nm);
    shape[2] = H;
    if (!rs || !mgopt__rce_reshape(E, nm, rs, shape, 3) || !mgopt__rce_node(E, "Transpose", &rs, 1, out, "perm", perm, 3))
      return NULL;
    return out;
  }
}

static mgopt_status mgopt__exp_recurrent(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  static const char *const onnx_dirs[3] = {"forward", "reverse", "bidirectional"};
  int kind = mgopt__rcm_kind(op->kind), dir = mgopt__rcm_dir(op), seq = mgopt_op_get_bool(op, "output_sequence", 0), j, d;
  int64_t D = dir == 2 ? 2 : 1, H = mgopt_value_const(mgopt_op_operand(op, "weight_hh"))->shape[1];
  int64_t I_ = mgopt_op_operand(op, "x")->type.dims[2].v;
  const char *ins[8], *outs[3] = {"", "", ""}, *y_seq = NULL;
  mgopt_tensor *w, *r, *b, *pp = NULL;
  mgopt_onnx_node *n;
  int any_act = 0, use[3];
  const mgopt_value *dst[3];
  int64_t nin;
  for (j = 0; j < op->nouts; j++) {
    use[j] = mgopt__rcm_used(op->outs[j]);
    dst[j] = mgopt__rce_out_dst(op, j);
  }
  w = mgopt__rce_gates(E, op, kind, D, 0, H, I_);
  r = mgopt__rce_gates(E, op, kind, D, 1, H, H);
  b = mgopt__rce_gates(E, op, kind, D, 2, H, 0);
  if (kind == 2) pp = mgopt__rce_gates(E, op, kind, D, 3, H, 0);
  if (!w || !r) return mgopt__exp_nomem(E);
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_const(E, mgopt__exp_in(op, "weight_ih"), w);
  ins[2] = mgopt__exp_const(E, mgopt__exp_in(op, "weight_hh"), r);
  ins[3] = b ? mgopt__exp_const(E, mgopt__exp_in(op, "bias"), b) : "";
  ins[4] = "";
  ins[5] = mgopt__rce_state(E, mgopt_op_operand(op, "initial_h"), mgopt__rce_state_src(op, "initial_h"), D, H);
  ins[6] = kind == 2 ? mgopt__rce_state(E, mgopt_op_operand(op, "initial_c"), mgopt__rce_state_src(op, "initial_c"), D, H)
                     : NULL;
  ins[7] = pp ? mgopt__exp_const(E, mgopt__exp_in(op, "peephole"), pp) : NULL;
  if (!ins[1] || !ins[2] || !ins[3] || !ins[5] || (kind == 2 && !ins[6]) || (pp && !ins[7])) return mgopt__exp_nomem(E);
  /* ONNX outputs: Y when the sequence is read, Y_h for out1 (and out0
     without output_sequence), Y_c for out2 */
  if (dst[0]) outs[0] = mgopt__exp_vname(dst[0]); /* the import's expand_dims, written by this node */
  else if (seq && use[0] && !(outs[0] = y_seq = mgopt__exp_fresh(E, mgopt__exp_vname(op->outs[0]))))
    return mgopt__exp_nomem(E);
  if (dst[1]) outs[1] = mgopt__exp_vname(dst[1]);
  else if (D == 1 && !seq && use[0]) outs[1] = mgopt__exp_vname(op->outs[0]); /* [1, B, H] both */
  else if ((use[1] || (!seq && use[0])) && !(outs[1] = mgopt__exp_fresh(E, mgopt__exp_vname(op->outs[1]))))
    return mgopt__exp_nomem(E);
  if (kind == 2 && dst[2]) outs[2] = mgopt__exp_vname(dst[2]);
  else if (kind == 2 && use[2] && !(outs[2] = mgopt__exp_fresh(E, mgopt__exp_vname(op->outs[2])))) return mgopt__exp_nomem(E);
  nin = kind == 2 ? (pp ? 8 : 7) : 6;
  while (nin > 3 && !ins[nin - 1][0]) nin--; /* no trailing omitted inputs */
  n = mgopt__exp_node(E, m->onnx, "", op->name);
  if (!n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, ins, nin) ||
      !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, outs, kind == 2 ? 3 : 2) ||
      !mgopt__exp_aint(E, n, "hidden_size", H) || (dir && !mgopt__exp_astr(E, n, "direction", onnx_dirs[dir])))
    return mgopt__exp_nomem(E);
  /* activations, when some differs from ONNX's defaults */
  for (j = 0; j <= kind; j++)
    if (mgopt__rcm_mil_act(op, mgopt__rcm_act_attr[kind][j], mgopt__rcm_act_dflt[kind][j]) !=
        mgopt__rcm_mil_act(op, "", mgopt__rcm_act_dflt[kind][j]))
      any_act = 1;
  if (any_act) {
    mgopt_onnx_attribute *a = mgopt__exp_attr(E, n, "activations", MGOPT_ONNX_ATTR_STRINGS);
    float al[6], be[6];
    int64_t nal = 0, nbe = 0, k = 0;
    if (!a || !(a->strings = (mgopt_str *)mgopt_program_alloc(E->p, sizeof(mgopt_str) * (size_t)(D * (kind + 1)), 8)))
      return mgopt__exp_nomem(E);
    for (d = 0; d < D; d++)
      for (j = 0; j <= kind; j++) {
        int i = mgopt__rcm_mil_act(op, mgopt__rcm_act_attr[kind][j], mgopt__rcm_act_dflt[kind][j]);
        a->strings[k++] = mgopt__exp_s(mgopt__rcm_acts[i].onnx);
        if (mgopt__rcm_acts[i].has_alpha) al[nal++] = mgopt__rcm_acts[i].alpha;
        if (mgopt__rcm_acts[i].has_beta) be[nbe++] = mgopt__rcm_acts[i].beta;
      }
    a->nstrings = k;
    if ((nal && !mgopt__exp_afloats(E, n, "activation_alpha", al, nal)) ||
        (nbe && !mgopt__exp_afloats(E, n, "activation_beta", be, nbe)))
      return mgopt__exp_nomem(E);
  }
  /* MIL's outputs from ONNX's */
  if (y_seq) {
    const char *src = y_seq, *out0 = mgopt__exp_vname(op->outs[0]);
    if (dir == 1) {
      /* time order back to processing order */
      static const int64_t starts = -1, ends = INT64_MIN, axes = 0, steps = -1;
      const char *sl[5], *rv = mgopt__exp_fresh(E, y_seq);
      sl[0] = y_seq;
      sl[1] = mgopt__exp_i64_const(E, "starts", &starts, 1);
      sl[2] = mgopt__exp_i64_const(E, "ends", &ends, 1);
      sl[3] = mgopt__exp_i64_const(E, "axes", &axes, 1);
      sl[4] = mgopt__exp_i64_const(E, "steps", &steps, 1);
      if (!rv || !sl[1] || !sl[2] || !sl[3] || !sl[4] || !mgopt__rce_node(E, "Slice", sl, 5, rv, NULL, NULL, 0))
        return mgopt__exp_nomem(E);
      src = rv;
    }
    if (D == 1) {
      if (!mgopt__rce_squeeze(E, 0, src, out0, 1)) return mgopt__exp_nomem(E);
    } else {
      static const int64_t perm[4] = {0, 2, 1, 3};
      int64_t shape[3] = {0, 0, 0};
      const char *tr = mgopt__exp_fresh(E, y_seq);
      shape[2] = 2 * H;
      if (!tr || !mgopt__rce_node(E, "Transpose", &src, 1, tr, "perm", perm, 4) || !mgopt__rce_reshape(E, tr, out0, shape, 3))
        return mgopt__exp_nomem(E);
    }
  }
  for (j = 1; j < op->nouts; j++) {
    const char *src = outs[j], *flat;
    if (!src[0] || dst[j]) continue;
    flat = use[j] ? mgopt__exp_vname(op->outs[j]) : NULL;
    if (D == 1) {
      /* [1, B, H]: out0 without output_sequence is this state as it is */
      if (flat && !mgopt__rce_squeeze(E, 0, src, flat, 0)) return mgopt__exp_nomem(E);
    } else {
      static const int64_t perm[3] = {1, 0, 2};
      const char *tr = mgopt__exp_fresh(E, src);
      int64_t shape[3] = {0, -1, 0};
      if (!tr || !mgopt__rce_node(E, "Transpose", &src, 1, tr, "perm", perm, 3)) return mgopt__exp_nomem(E);
      if (flat && !mgopt__rce_reshape(E, tr, flat, shape, 2)) return mgopt__exp_nomem(E);
      if (j == 1 && !seq && use[0]) {
        shape[0] = 1;
        shape[1] = -1;
        shape[2] = 2 * H;
        if (!mgopt__rce_reshape(E, tr, mgopt__exp_vname(op->outs[0]), shape, 3)) return mgopt__exp_nomem(E);
      }
    }
  }
  return MGOPT_OK;
}

/* 1 when v, a constant, is written by the op that reads it (re-laid weights
   or states), so nothing else needs it as it is. */
MGOPT__PRIVATE int mgopt__exp_recurrent_folds(const mgopt_op *op, const mgopt_value *v) {
  int32_t k;
  if (!op || (op->kind != MGOPT_OP_lstm && op->kind != MGOPT_OP_gru && op->kind != MGOPT_OP_rnn)) return 0;
  if (mgopt_op_operand(op, "x") == v) return 0;
  for (k = 0; k < op->nslots; k++)
    if (op->slots[k].n == 1 && op->slots[k].uses[0].value == v) return 1;
  return 0;
}

/* ---------------------------------------------------------------- the table */

static const mgopt__onnx_map mgopt__onnx_recurrent[] = {
    {"RNN", 7, 9, MGOPT_OP_rnn, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
    {"RNN", 10, 13, MGOPT_OP_rnn, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
    {"RNN", 14, 0, MGOPT_OP_rnn, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
    {"GRU", 7, 9, MGOPT_OP_gru, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
    {"GRU", 10, 13, MGOPT_OP_gru, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
    {"GRU", 14, 0, MGOPT_OP_gru, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
    {"LSTM", 7, 9, MGOPT_OP_lstm, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
    {"LSTM", 10, 13, MGOPT_OP_lstm, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
    {"LSTM", 14, 0, MGOPT_OP_lstm, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
};

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_recurrent(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_recurrent);
  return mgopt__onnx_recurrent;
}
