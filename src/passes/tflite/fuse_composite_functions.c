/* src/passes/tflite/fuse_composite_functions.c — tflite::fuse_composite_functions: each call of a function that implements a composite op becomes that fused op (embedding_lookup -> gather, keras_lstm -> lstm), through a registry the caller extends.

   Spec: tflite_operation_fusion.md, "Wrap the composite operation in a
   tf.function" and "Implementing operation fusion": a function carrying an
   implements attribute is the interface of a composite op; the conversion
   code reads the function's operands and attributes and puts the fused op in
   its place. Here the call is replaced (the function itself stays: other
   tools may still call it, and a function with no calls left costs nothing
   at run time). Which functions implement what, the composite table and
   how a caller adds to it: mgopt_composites in mgopt_passes.h.

   Before:
     "tfl::lookup" attributes(implements="embedding_lookup") (%w: (4, 2, fp32), %ids: (3, int32)) {
       %r: (3, 2, fp32) = gather(x=%w, indices=%ids, axis=0, batch_dims=0)
     } -> (%r)
     main(%ids: (3, int32)) {
       %w: (4, 2, fp32)* = const(val=[[0, 1], [2, 3], [4, 5], [6, 7]])
       %y: (3, 2, fp32) = "tfl::lookup"(in0=%w, in1=%ids)
     } -> (%y)
   After:
     main(%ids: (3, int32)) {
       %w: (4, 2, fp32)* = const(val=[[0, 1], [2, 3], [4, 5], [6, 7]])
       %y: (3, 2, fp32) = gather(x=%w, indices=%ids, axis=0)
     } -> (%y)
   (the body may be anything: a loop of gathers, a one-hot matmul; a
   function whose every call was fused is removed, one still called stays)

   Built-in composites (the caller's table is searched first):
     embedding_lookup(embeddings, ids) -> (out): gather(x=embeddings,
       indices=ids, axis=0). Signature: 2 inputs, 1 output, embeddings of
       known rank >= 2, ids of an integer dtype.
     keras_lstm(x, h0, c0, kernel, recurrent_kernel, bias) -> (last_output,
       outputs, state_h, state_c): the Keras LSTM layer becomes
       transpose -> lstm(output_sequence=true) -> transpose (see
       mgopt__fcf_keras_lstm for the signature it checks; the weights are
       re-laid once, exactly).
     A forward and a go_backwards keras_lstm call over the same x joined as
       Keras' Bidirectional layer joins them (each used output concatenated
       on the last axis with its backward twin, the backward sequence first
       reversed along time by a slice_by_index) become one
       lstm(direction="bidirectional"); see mgopt__fcf_pairs.
   After a fuse function built its ops, each op must be accepted by the
   program's target (mgopt_program_target_accepts) and each replacement
   value's inferred type must fit the call output's declared type
   (mgopt__pu_adopt_type); otherwise everything built is erased and the
   call stays.

   Options: bind="dom::Name=composite;..." binds functions by IR name (as
   mgopt_composite_binding does); strict=true makes the pass fail, changing
   nothing, when a function that names a composite cannot be fused (the
   reason is the pass's diagnostic).
   Fires on: every call (in any function, nested blocks included) of a
   function that names a known composite whose fuse function accepts it.
   Must not fire: a function naming an unknown composite (reported); a
   signature or type that does not match (reported); a fused op the target
   refuses (reported); an op that is not a call.
   Cost: one walk over the program's ops, plus the fuse functions' work per
   call; a bidirectional pair also walks its block once from the forward
   call to find which call comes first. */
#include "../../passes_internal.h"

#define MGOPT__FCF_WHY 200

typedef struct mgopt__fcf_call {
  mgopt_op *call;
  const mgopt_composite *c;
  const char *implements;
} mgopt__fcf_call;

typedef struct mgopt__fcf {
  mgopt_pass_ctx *ctx;
  const mgopt_composites *cfg;
  const mgopt_composite *builtins;
  int32_t nbuiltins;
  mgopt__map fn_info;    /* function -> index + 1 into the per-function arrays */
  const char **impl;     /* per function: the composite it names, or NULL */
  const mgopt_composite **comp; /* per function: the composite found, or NULL */
  int *reported;
  int64_t *ncalls_of, *nfused_of; /* per function: its calls, and how many were fused */
  mgopt__fcf_call *calls;
  int64_t ncalls, calls_cap;
  int oom;
} mgopt__fcf;

/* ---------------------------------------------------------------- embedding_lookup */

static int mgopt__fcf_why(char *why, size_t cap, const char *msg) {
  if (why && cap) snprintf(why, cap, "%s", msg);
  return 0;
}

static int mgopt__fcf_embedding_lookup(mgopt_program *p, mgopt_op *call, mgopt_function *callee, int build,
                                       mgopt_value **outs, char *why, size_t why_cap, void *ud) {
  static const char *const slots[2] = {"x", "indices"};
  mgopt_value *vals[2];
  mgopt_op *g;
  MGOPT__UNUSED(ud);
  if (callee->body->nargs != 2 || callee->body->nouts != 1 || call->nouts != 1)
    return mgopt__fcf_why(why, why_cap, "embedding_lookup takes (embeddings, ids) and returns one value");
  vals[0] = mgopt_op_operand(call, "in0");
  vals[1] = mgopt_op_operand(call, "in1");
  if (!vals[0] || !vals[1]) return mgopt__fcf_why(why, why_cap, "embedding_lookup is called without both operands");
  if (vals[0]->type.kind != MGOPT_TYPE_TENSOR || vals[0]->type.rank < 2)
    return mgopt__fcf_why(why, why_cap, "the embeddings are not a tensor of known rank >= 2");
  if (vals[1]->type.kind != MGOPT_TYPE_TENSOR || !mgopt_dtype_is_int((mgopt_dtype)vals[1]->type.dtype))
    return mgopt__fcf_why(why, why_cap, "the ids are not integers");
  if (!build) return 1;
  g = mgopt_build_op(p, call->parent, call, "gather", mgopt__pu_value_name(call->outs[0]), 2, slots, vals, 1);
  if (!g) return -1;
  if (mgopt_op_set_int(g, "axis", 0)) return -1;
  if (mgopt_op_infer(p, g, NULL) != MGOPT_OK) return mgopt__fcf_why(why, why_cap, "the gather does not type check");
  outs[0] = g->outs[0];
  return 1;
}

/* ---------------------------------------------------------------- keras_lstm */

/* A transpose of v with perm [1, 0, 2] before pos; NULL on failure. */
static mgopt_value *mgopt__fcf_swap01(mgopt_program *p, mgopt_op *pos, mgopt_value *v, const char *name) {
  static const char *const slots[1] = {"x"};
  static const int64_t perm[3] = {1, 0, 2};
  mgopt_op *t = mgopt_build_op(p, pos->parent, pos, "transpose", mgopt_program_fresh_name(p, name), 1, slots, &v, 1);
  if (!t || mgopt_op_set_ints(t, "perm", perm, 3) || mgopt_op_infer(p, t, NULL) != MGOPT_OK) return NULL;
  return t->outs[0];
}

/* Keras' [rows, 4H] (gates i, f, c, o along the columns) as lstm's [4H, rows]
   (gates i, f, o, c along the rows); a vector [4H] when rows is 0. Exact. */
static mgopt_tensor *mgopt__fcf_lstm_weight(mgopt_program *p, const mgopt_tensor *k, int64_t rows, int64_t H) {
  static const int from[4] = {0, 1, 3, 2};
  int64_t shape[2], g, j, r;
  mgopt_tensor *t;
  shape[0] = 4 * H;
  shape[1] = rows;
  t = mgopt_tensor_new(p, (mgopt_dtype)k->dtype, rows ? 2 : 1, shape);
  if (!t) return NULL;
  for (g = 0; g < 4; g++)
    for (j = 0; j < H; j++) {
      if (!rows) mgopt_tensor_set_f64(t, g * H + j, mgopt_tensor_get_f64(k, from[g] * H + j));
      for (r = 0; r < rows; r++)
        mgopt_tensor_set_f64(t, (g * H + j) * rows + r, mgopt_tensor_get_f64(k, r * 4 * H + from[g] * H + j));
    }
  return t;
}

/* keras_lstm(x [B, T, I], h0 [B, H], c0 [B, H], kernel [I, 4H] const,
   recurrent_kernel [H, 4H] const, bias [4H] const) -> (last_output [B, H],
   outputs [B, T, H], state_h [B, H], state_c [B, H]); gates i, f, c, o;
   sigmoid and tanh. The function's or the call's attribute go_backwards
   (default false) makes the lstm run in reverse (outputs in processing
   order, as Keras gives them); time_major true takes x as [T, B, I] and
   gives outputs [T, B, H]. Becomes transpose(x) -> lstm(output_sequence)
   -> transpose, the weights re-laid once (exact). */
/* A keras_lstm flag (go_backwards, time_major): the call's attribute, else the function's; false when absent. */
static int mgopt__fcf_lstm_flag(const mgopt_op *call, const mgopt_function *callee, const char *name) {
  const mgopt_attr *a = mgopt_op_attr(call, name);
  if (!a) a = mgopt_function_attr(callee, name);
  return a && (a->kind == MGOPT_ATTR_BOOL || a->kind == MGOPT_ATTR_INT) && a->u.i != 0;
}

static int mgopt__fcf_keras_lstm(mgopt_program *p, mgopt_op *call, mgopt_function *callee, int build,
                                 mgopt_value **outs, char *why, size_t why_cap, void *ud) {
  static const char *const slots[6] = {"x", "initial_h", "initial_c", "weight_ih", "weight_hh", "bias"};
  mgopt_value *in[6], *vals[6];
  mgopt_tensor *k, *r, *b, *wi, *wh, *wb;
  int64_t I, H, i;
  int backwards = mgopt__fcf_lstm_flag(call, callee, "go_backwards"), time_major = mgopt__fcf_lstm_flag(call, callee, "time_major");
  mgopt_op *l;
  mgopt_dtype dt;
  MGOPT__UNUSED(ud);
  if (callee->body->nargs != 6 || callee->body->nouts != 4 || call->nouts != 4)
    return mgopt__fcf_why(why, why_cap, "keras_lstm takes 6 inputs and returns 4 values");
  for (i = 0; i < 6; i++) {
    char slot[8];
    snprintf(slot, sizeof slot, "in%d", (int)i);
    if (!(in[i] = mgopt_op_operand(call, slot))) return mgopt__fcf_why(why, why_cap, "keras_lstm is called without an operand");
  }
  k = mgopt_value_const(in[3]);
  r = mgopt_value_const(in[4]);
  b = mgopt_value_const(in[5]);
  if (!k || !r || !b) return mgopt__fcf_why(why, why_cap, "the kernels and the bias are not constants");
  dt = (mgopt_dtype)k->dtype;
  if ((dt != MGOPT_DT_FP32 && dt != MGOPT_DT_FP16) || r->dtype != dt || b->dtype != dt || in[0]->type.dtype != dt ||
      in[1]->type.dtype != dt || in[2]->type.dtype != dt)
    return mgopt__fcf_why(why, why_cap, "keras_lstm needs one float dtype (fp32 or fp16)");
  if (k->rank != 2 || r->rank != 2 || b->rank != 1 || r->shape[1] % 4 || (H = r->shape[1] / 4) < 1 || r->shape[0] != H ||
      k->shape[1] != 4 * H || b->shape[0] != 4 * H)
    return mgopt__fcf_why(why, why_cap, "the kernels are not [I, 4H], [H, 4H] and the bias [4H]");
  I = k->shape[0];
  if (in[0]->type.rank != 3 || !mgopt_dim_is_static(in[0]->type.dims[2]) || in[0]->type.dims[2].v != I ||
      in[1]->type.rank != 2 || in[2]->type.rank != 2)
    return mgopt__fcf_why(why, why_cap, "x is not [B, T, I] or the states not [B, H]");
  if (!build) return 1;
  wi = mgopt__fcf_lstm_weight(p, k, I, H);
  wh = mgopt__fcf_lstm_weight(p, r, H, H);
  wb = mgopt__fcf_lstm_weight(p, b, 0, H);
  if (!wi || !wh || !wb) return -1;
  vals[0] = time_major ? in[0] : mgopt__fcf_swap01(p, call, in[0], "lstm_x");
  vals[1] = in[1];
  vals[2] = in[2];
  vals[3] = mgopt_build_const(p, call->parent, call, mgopt_program_fresh_name(p, "lstm_weight_ih"), wi);
  vals[4] = mgopt_build_const(p, call->parent, call, mgopt_program_fresh_name(p, "lstm_weight_hh"), wh);
  vals[5] = mgopt_build_const(p, call->parent, call, mgopt_program_fresh_name(p, "lstm_bias"), wb);
  for (i = 0; i < 6; i++)
    if (!vals[i]) return mgopt_program_status(p) ? -1 : 0;
  l = mgopt_build_op(p, call->parent, call, "lstm", mgopt_program_fresh_name(p, "lstm"), 6, slots, vals, 3);
  if (!l || mgopt_value_set_name(l->outs[0], mgopt_program_fresh_name(p, "lstm_sequence")) ||
      mgopt_value_set_name(l->outs[1], mgopt_program_fresh_name(p, "lstm_h")) ||
      mgopt_value_set_name(l->outs[2], mgopt_program_fresh_name(p, "lstm_c")) || mgopt_op_set_bool(l, "output_sequence", 1) ||
      mgopt_op_set_string(l, "direction", backwards ? "reverse" : "forward"))
    return -1;
  if (mgopt_op_infer(p, l, NULL) != MGOPT_OK) return mgopt__fcf_why(why, why_cap, "the lstm does not type check");
  /* last_output is state_h; its own value, so both may keep a graph output's name */
  {
    static const char *const xs[1] = {"x"};
    mgopt_op *id = mgopt_build_op(p, call->parent, call, "identity", mgopt_program_fresh_name(p, "lstm_last"), 1, xs,
                                  &l->outs[1], 1);
    if (!id || mgopt_op_infer(p, id, NULL) != MGOPT_OK) return mgopt_program_status(p) ? -1 : 0;
    outs[0] = id->outs[0];
  }
  outs[1] = time_major ? l->outs[0] : mgopt__fcf_swap01(p, call, l->outs[0], "lstm_outputs");
  outs[2] = l->outs[1];
  outs[3] = l->outs[2];
  return outs[1] ? 1 : 0;
}

/* ---------------------------------------------------------------- lookup */

static const mgopt_composite *mgopt__fcf_find(const mgopt__fcf *F, const char *name) {
  int32_t i;
  if (F->cfg)
    for (i = 0; i < F->cfg->ncomposites; i++)
      if (F->cfg->composites[i].implements && strcmp(F->cfg->composites[i].implements, name) == 0 &&
          F->cfg->composites[i].fuse)
        return &F->cfg->composites[i];
  if (F->cfg && F->cfg->no_builtins) return NULL;
  for (i = 0; i < F->nbuiltins; i++)
    if (strcmp(F->builtins[i].implements, name) == 0) return &F->builtins[i];
  return NULL;
}

/* The composite named by the option string bind="a::B=name;..." for function fname, into buf. */
static const char *mgopt__fcf_bound_opt(const char *spec, const char *fname, char *buf, size_t cap) {
  size_t fl = strlen(fname);
  while (spec && *spec) {
    const char *end = strchr(spec, ';'), *eq;
    size_t len = end ? (size_t)(end - spec) : strlen(spec);
    eq = (const char *)memchr(spec, '=', len);
    if (eq && (size_t)(eq - spec) == fl && memcmp(spec, fname, fl) == 0) {
      size_t n = len - fl - 1;
      if (n + 1 > cap) n = cap - 1;
      memcpy(buf, eq + 1, n);
      buf[n] = 0;
      return buf;
    }
    spec = end ? end + 1 : NULL;
  }
  return NULL;
}

/* The composite function f names, or NULL: its implements attribute, else a
   binding, else (default names) the part of "domain::Name" after "::". */
static const char *mgopt__fcf_names(const mgopt__fcf *F, const mgopt_function *f, char *buf, size_t cap) {
  const mgopt_attr *a = mgopt_function_attr(f, "implements");
  const char *s;
  int32_t i;
  if (a && a->kind == MGOPT_ATTR_STRING && a->u.s.ptr) {
    size_t n = a->u.s.len < cap ? a->u.s.len : cap - 1;
    memcpy(buf, a->u.s.ptr, n);
    buf[n] = 0;
    return buf;
  }
  if ((s = mgopt__fcf_bound_opt(F->ctx->opts[0].s, f->name, buf, cap)) != NULL) return s;
  if (F->cfg)
    for (i = 0; i < F->cfg->nbindings; i++)
      if (F->cfg->bindings[i].function && F->cfg->bindings[i].implements &&
          strcmp(F->cfg->bindings[i].function, f->name) == 0)
        return F->cfg->bindings[i].implements;
  if (F->cfg && F->cfg->no_default_names) return NULL;
  s = strstr(f->name, "::");
  if (!s || strchr(f->name, '@')) return NULL;
  while (strstr(s + 2, "::")) s = strstr(s + 2, "::");
  return mgopt__fcf_find(F, s + 2) ? s + 2 : NULL;
}

static void mgopt__fcf_report(mgopt__fcf *F, int32_t fi, const mgopt_function *f, const mgopt_op *call,
                              const char *implements, const char *why) {
  if (F->reported[fi]) return;
  F->reported[fi] = 1;
  if (F->cfg && F->cfg->report) F->cfg->report(F->cfg->report_ud, f, call, implements, why);
}

static int mgopt__fcf_visit(mgopt_op *op, void *ud) {
  mgopt__fcf *F = (mgopt__fcf *)ud;
  mgopt_function *f;
  const mgopt__map_slot *sl;
  int64_t fi;
  if (op->kind != MGOPT_OP_OPAQUE || !(f = mgopt_op_callee(op))) return 0;
  sl = mgopt__map_find(&F->fn_info, mgopt__map_ptr_key(f));
  if (!sl) return 0;
  fi = sl->v.i - 1;
  if (!F->impl[fi] || !F->comp[fi]) return 0;
  F->ncalls_of[fi]++;
  if (F->ncalls == F->calls_cap) {
    void *arr = F->calls;
    if (!mgopt__grow(&F->ctx->program->alloc, &arr, &F->calls_cap, F->ncalls + 1, sizeof *F->calls)) {
      F->oom = 1;
      return 1;
    }
    F->calls = (mgopt__fcf_call *)arr;
  }
  F->calls[F->ncalls].call = op;
  F->calls[F->ncalls].c = F->comp[fi];
  F->calls[F->ncalls].implements = F->impl[fi];
  F->ncalls++;
  return 0;
}

/* Erases op (its outputs unused), then the constants it read that nothing else reads. */
static void mgopt__fcf_erase(mgopt_op *op) {
  mgopt_op *consts[16];
  int32_t n = 0, s, i;
  for (s = 0; s < op->nslots; s++)
    for (i = 0; i < op->slots[s].n; i++) {
      mgopt_op *d = op->slots[s].uses[i].value->def;
      if (d && d->kind == MGOPT_OP_const && n < 16) consts[n++] = d;
    }
  mgopt_op_erase(op);
  for (i = 0; i < n; i++)
    if (!(consts[i]->flags & MGOPT_OP_ERASED) && !consts[i]->outs[0]->nuses) mgopt_op_erase(consts[i]);
}

/* Erases the ops between `after` (exclusive; NULL: the block's start) and `call`, last first. */
static void mgopt__fcf_unbuild(mgopt_op *after, mgopt_op *call) {
  while (call->prev && call->prev != after) {
    mgopt_op *o = call->prev;
    int32_t i;
    for (i = 0; i < o->nouts; i++)
      if (o->outs[i]->nuses) return; /* read by something older: cannot be ours */
    mgopt_op_erase(o);
  }
}

/* 1 when v is an output of an op between `after` and `call`. */
static int mgopt__fcf_built(const mgopt_op *after, const mgopt_op *call, const mgopt_value *v) {
  const mgopt_op *o;
  for (o = call->prev; o && o != after; o = o->prev)
    if (v->def == o) return 1;
  return 0;
}

/* Fuses one call: 1 fused, 0 left alone (why says why), -1 out of memory. */
static int mgopt__fcf_fuse(mgopt__fcf *F, const mgopt__fcf_call *c, char *why) {
  mgopt_program *p = F->ctx->program;
  mgopt_op *call = c->call, *after = call->prev, *o;
  mgopt_function *callee = mgopt_op_callee(call);
  mgopt_value *outs[64];
  int32_t i;
  int r;
  if (call->nouts > 64) return mgopt__fcf_why(why, MGOPT__FCF_WHY, "too many outputs");
  for (i = 0; i < call->nouts; i++) outs[i] = NULL;
  r = c->c->fuse(p, call, callee, 1, outs, why, MGOPT__FCF_WHY, c->c->ud);
  if (r < 0 || mgopt_program_status(p)) return -1;
  for (o = after ? after->next : call->parent->first; r > 0 && o && o != call; o = o->next)
    if (!mgopt_program_target_accepts(p, o)) {
      snprintf(why, MGOPT__FCF_WHY, "the target cannot express the fused %s", o->type);
      r = 0;
    }
  for (i = 0; r > 0 && i < call->nouts; i++) {
    if (!outs[i] || outs[i] == call->outs[i]) {
      snprintf(why, MGOPT__FCF_WHY, "output %d has no replacement", (int)i);
      r = 0;
    } else if (mgopt__fcf_built(after, call, outs[i]) ? !mgopt__pu_adopt_type(p, outs[i], call->outs[i])
                                                      : !mgopt__pu_replace_fits(p, call->outs[i], outs[i])) {
      snprintf(why, MGOPT__FCF_WHY, "output %d of the fused op is typed unlike the call's", (int)i);
      r = 0;
    }
  }
  if (r <= 0) {
    mgopt__fcf_unbuild(after, call);
    return mgopt_program_status(p) ? -1 : 0;
  }
  for (i = 0; i < call->nouts; i++) mgopt_value_replace_all_uses(call->outs[i], outs[i]);
  for (o = after ? after->next : call->parent->first; o && o != call; o = o->next) mgopt__pu_sync_op_name(o);
  mgopt__fcf_erase(call);
  return 1;
}

/* ---------------------------------------------------------------- bidirectional pair

   Keras' Bidirectional(LSTM) with merge_mode "concat": a forward and a
   go_backwards keras_lstm call over the same x, the backward outputs
   reversed along time, joined on the last axis:
     %f_last, %f_seq, %f_h, %f_c = keras_lstm(x, hf, cf, Kf, Rf, bf)
     %b_last, %b_seq, %b_h, %b_c = keras_lstm(x, hb, cb, Kb, Rb, bb, go_backwards=true)
     %r = slice_by_index(%b_seq, ...)          (all of it, stride -1 on time)
     %y = concat(values=(%f_seq, %r), axis=-1)  [B, T, 2H]
     %s = concat(values=(%f_h, %b_h), axis=-1)  [B, 2H] (also last_output, state_c)
   becomes one lstm(direction="bidirectional", output_sequence=true) whose
   output sequence aligns both halves with x's time as %y does, and whose
   final states are [B, 2H] with the forward half first, as %s. Each output
   of the two calls is either unused in both or read only by its concat (the
   sequence by the reverse, the reverse by the concat). */

/* 1 when s is a slice_by_index that reads all of its input, reversed along
   axis ax and in order along every other axis (static dims, constant bounds). */
static int mgopt__fcf_is_reverse(mgopt_program *p, const mgopt_op *s, int32_t ax) {
  mgopt_value *x = mgopt_op_operand(s, "x"), *sv = mgopt_op_operand(s, "stride");
  const mgopt_tensor *tb = mgopt_value_const(mgopt_op_operand(s, "begin")), *te = mgopt_value_const(mgopt_op_operand(s, "end"));
  const mgopt_tensor *ts = sv ? mgopt_value_const(sv) : NULL;
  const int64_t *bm = NULL, *em = NULL, *sm = NULL;
  int64_t nbm, nem, nsm, d, r;
  if (!x || !tb || !te || !ts || x->type.kind != MGOPT_TYPE_TENSOR || (r = x->type.rank) < 1 || ax >= r) return 0;
  if (tb->numel != r || te->numel != r || ts->numel != r) return 0;
  nbm = mgopt_op_get_ints(p, s, "begin_mask", &bm);
  nem = mgopt_op_get_ints(p, s, "end_mask", &em);
  nsm = mgopt_op_get_ints(p, s, "squeeze_mask", &sm);
  for (d = 0; d < r; d++) {
    int64_t len = x->type.dims[d].v, b = mgopt_tensor_get_i64(tb, d), e = mgopt_tensor_get_i64(te, d);
    int64_t st = mgopt_tensor_get_i64(ts, d);
    int hb = !(d < nbm && bm[d]), he = !(d < nem && em[d]);
    if (!mgopt_dim_is_static(x->type.dims[d]) || (d < nsm && sm[d])) return 0;
    if (d == ax) {
      if (st != -1 || (hb && !(b >= len - 1 || b == -1)) || (he && e >= -len)) return 0;
    } else if (st != 1 || (hb && !(b == 0 || b <= -len)) || (he && e < len)) {
      return 0;
    }
  }
  return 1;
}

/* The concat that is v's only reader and joins exactly (v, other) along the
   last axis, with *other set; else NULL. */
static mgopt_op *mgopt__fcf_join(const mgopt_value *v, mgopt_value **other) {
  mgopt_op *c = mgopt__pu_single_user(v);
  int32_t si;
  int64_t axis, r = v->type.rank;
  if (!c || c->kind != MGOPT_OP_concat || c->nouts != 1 || mgopt_op_get_bool(c, "interleave", 0) || r < 1) return NULL;
  si = mgopt_op_slot_index(c, "values");
  if (si < 0 || c->slots[si].n != 2 || c->slots[si].uses[0].value != v) return NULL;
  axis = mgopt_op_get_int(c, "axis", r);
  if (axis < 0) axis += r;
  if (axis != r - 1) return NULL;
  *other = c->slots[si].uses[1].value;
  return c;
}

/* A forward keras_lstm call fc and its backward partner: *bc, the concat
   of each output slot (NULL: the slot is unused in both) and the reverse of
   the backward sequence. 0 when fc's outputs are not read that way. */
static int mgopt__fcf_bidi_match(mgopt_program *p, mgopt_op *fc, int time_major, mgopt_op **bc, mgopt_op **cat,
                                 mgopt_op **rev) {
  int32_t k;
  *bc = NULL;
  *rev = NULL;
  for (k = 0; k < 4; k++) {
    mgopt_value *v = fc->outs[k], *w = NULL;
    mgopt_op *c;
    cat[k] = NULL;
    if (!v->nuses) continue;
    if (!(c = mgopt__fcf_join(v, &w))) return 0;
    if (k == 1) {
      mgopt_op *r = w->def;
      if (!r || r->kind != MGOPT_OP_slice_by_index || mgopt__pu_single_user(w) != c ||
          !mgopt__fcf_is_reverse(p, r, time_major ? 0 : 1))
        return 0;
      *rev = r;
      w = mgopt_op_operand(r, "x");
    }
    if (!w || !w->def || w->def == fc || w->index != k || (*bc && w->def != *bc)) return 0;
    *bc = w->def;
    cat[k] = c;
  }
  if (!*bc || (*bc)->parent != fc->parent || (*bc)->nouts != 4) return 0;
  for (k = 0; k < 4; k++) {
    const mgopt_value *v = (*bc)->outs[k];
    if (!cat[k] ? v->nuses != 0 : mgopt__pu_single_user(v) != (k == 1 ? *rev : cat[k])) return 0;
  }
  return 1;
}

/* concat(values=(a, b), axis=-1) before pos; NULL on failure. */
static mgopt_value *mgopt__fcf_cat2(mgopt_program *p, mgopt_op *pos, mgopt_value *a, mgopt_value *b, const char *name) {
  mgopt_value *vs[2];
  mgopt_op *c = mgopt_build_op(p, pos->parent, pos, "concat", mgopt_program_fresh_name(p, name), 0, NULL, NULL, 1);
  vs[0] = a;
  vs[1] = b;
  if (!c || mgopt_op_set_operand_list(c, "values", vs, 2) || mgopt_op_set_int(c, "axis", -1) ||
      mgopt_op_set_bool(c, "interleave", 0) || mgopt_op_infer(p, c, NULL) != MGOPT_OK)
    return NULL;
  return c->outs[0];
}

/* 1 when op a comes before op b in their block. */
static int mgopt__fcf_before(const mgopt_op *a, const mgopt_op *b) {
  for (a = a->next; a; a = a->next)
    if (a == b) return 1;
  return 0;
}

/* Builds the bidirectional lstm of the pair (fc forward, bc backward) and
   replaces the concats; 1 done, 0 left alone (nothing changed), -1 OOM. */
static int mgopt__fcf_bidi_build(mgopt_program *p, mgopt_op *fc, mgopt_op *bc, mgopt_op *const *cat, mgopt_op *rev,
                                 int time_major) {
  static const char *const slots[9] = {"x", "initial_h", "initial_c", "weight_ih", "weight_hh", "bias",
                                       "weight_ih_back", "weight_hh_back", "bias_back"};
  mgopt_op *pos = mgopt__fcf_before(fc, bc) ? bc : fc, *after = pos->prev, *l, *o;
  mgopt_value *vals[9], *rep[4];
  mgopt_op *const calls[2] = {fc, bc};
  int64_t I, H;
  int32_t d, k;
  int ok = 1;
  {
    const mgopt_tensor *k0 = mgopt_value_const(mgopt_op_operand(fc, "in3"));
    const mgopt_tensor *r0 = mgopt_value_const(mgopt_op_operand(fc, "in4"));
    H = r0->shape[0];
    I = k0->shape[0];
  }
  for (d = 0; d < 2; d++) {
    mgopt_tensor *wi = mgopt__fcf_lstm_weight(p, mgopt_value_const(mgopt_op_operand(calls[d], "in3")), I, H);
    mgopt_tensor *wh = mgopt__fcf_lstm_weight(p, mgopt_value_const(mgopt_op_operand(calls[d], "in4")), H, H);
    mgopt_tensor *wb = mgopt__fcf_lstm_weight(p, mgopt_value_const(mgopt_op_operand(calls[d], "in5")), 0, H);
    if (!wi || !wh || !wb) return -1;
    vals[3 + 3 * d] = mgopt_build_const(p, pos->parent, pos, mgopt_program_fresh_name(p, d ? "lstm_weight_ih_back" : "lstm_weight_ih"), wi);
    vals[4 + 3 * d] = mgopt_build_const(p, pos->parent, pos, mgopt_program_fresh_name(p, d ? "lstm_weight_hh_back" : "lstm_weight_hh"), wh);
    vals[5 + 3 * d] = mgopt_build_const(p, pos->parent, pos, mgopt_program_fresh_name(p, d ? "lstm_bias_back" : "lstm_bias"), wb);
  }
  vals[0] = time_major ? mgopt_op_operand(fc, "in0") : mgopt__fcf_swap01(p, pos, mgopt_op_operand(fc, "in0"), "lstm_x");
  vals[1] = mgopt__fcf_cat2(p, pos, mgopt_op_operand(fc, "in1"), mgopt_op_operand(bc, "in1"), "lstm_initial_h");
  vals[2] = mgopt__fcf_cat2(p, pos, mgopt_op_operand(fc, "in2"), mgopt_op_operand(bc, "in2"), "lstm_initial_c");
  for (k = 0; k < 9; k++)
    if (!vals[k]) ok = 0;
  l = ok ? mgopt_build_op(p, pos->parent, pos, "lstm", mgopt_program_fresh_name(p, "lstm"), 9, slots, vals, 3) : NULL;
  if (!l || mgopt_value_set_name(l->outs[0], mgopt_program_fresh_name(p, "lstm_sequence")) ||
      mgopt_value_set_name(l->outs[1], mgopt_program_fresh_name(p, "lstm_h")) ||
      mgopt_value_set_name(l->outs[2], mgopt_program_fresh_name(p, "lstm_c")) || mgopt_op_set_bool(l, "output_sequence", 1) ||
      mgopt_op_set_string(l, "direction", "bidirectional") || mgopt_op_infer(p, l, NULL) != MGOPT_OK)
    ok = 0;
  if (ok) {
    static const char *const xs[1] = {"x"};
    rep[1] = cat[1] ? (time_major ? l->outs[0] : mgopt__fcf_swap01(p, pos, l->outs[0], "lstm_outputs")) : NULL;
    rep[2] = l->outs[1];
    rep[3] = l->outs[2];
    rep[0] = l->outs[1];
    if (cat[0] && cat[2]) { /* both joins of the final state: each its own value, so both may keep a graph output's name */
      mgopt_op *id = mgopt_build_op(p, pos->parent, pos, "identity", mgopt_program_fresh_name(p, "lstm_last"), 1, xs,
                                    &l->outs[1], 1);
      rep[0] = id && mgopt_op_infer(p, id, NULL) == MGOPT_OK ? id->outs[0] : NULL;
    }
    for (k = 0; k < 4; k++)
      if (cat[k] && (!rep[k] || !mgopt__pu_adopt_type(p, rep[k], cat[k]->outs[0]))) ok = 0;
  }
  for (o = after ? after->next : pos->parent->first; ok && o && o != pos; o = o->next)
    if (!mgopt_program_target_accepts(p, o)) ok = 0;
  if (mgopt_program_status(p)) return -1;
  if (!ok) {
    mgopt__fcf_unbuild(after, pos);
    return mgopt_program_status(p) ? -1 : 0;
  }
  for (k = 0; k < 4; k++)
    if (cat[k]) mgopt_value_replace_all_uses(cat[k]->outs[0], rep[k]);
  for (o = after ? after->next : pos->parent->first; o && o != pos; o = o->next) mgopt__pu_sync_op_name(o);
  for (k = 0; k < 4; k++)
    if (cat[k]) mgopt__fcf_erase(cat[k]);
  if (rev) mgopt__fcf_erase(rev);
  mgopt__fcf_erase(fc);
  mgopt__fcf_erase(bc);
  return 1;
}

/* Fuses each forward / backward keras_lstm pair joined as Keras'
   Bidirectional layer joins them; the fused calls leave F->calls (NULL).
   0, or -1 out of memory. */
static int mgopt__fcf_pairs(mgopt__fcf *F) {
  mgopt_program *p = F->ctx->program;
  mgopt__map at; /* call op -> index + 1 into F->calls */
  int64_t k;
  int rc = 0;
  mgopt__map_init(&at, &p->alloc);
  for (k = 0; k < F->ncalls; k++)
    if (F->calls[k].c->fuse == mgopt__fcf_keras_lstm) {
      mgopt__map_slot *sl = mgopt__map_get(&at, mgopt__map_ptr_key(F->calls[k].call), NULL);
      if (!sl) {
        rc = -1;
        goto done;
      }
      sl->v.i = k + 1;
    }
  for (k = 0; k < F->ncalls; k++) {
    mgopt__fcf_call *fcall = &F->calls[k];
    mgopt_op *fc = fcall->call, *bc, *cat[4], *rev;
    mgopt_function *ff, *bf;
    const mgopt__map_slot *sl;
    mgopt_value *outs[4];
    int tm, r;
    if (!fc || fcall->c->fuse != mgopt__fcf_keras_lstm) continue;
    ff = mgopt_op_callee(fc);
    tm = mgopt__fcf_lstm_flag(fc, ff, "time_major");
    if (mgopt__fcf_lstm_flag(fc, ff, "go_backwards") || fc->nouts != 4 || !mgopt__fcf_bidi_match(p, fc, tm, &bc, cat, &rev))
      continue;
    sl = mgopt__map_find(&at, mgopt__map_ptr_key(bc));
    if (!sl || !F->calls[sl->v.i - 1].call) continue;
    bf = mgopt_op_callee(bc);
    if (!mgopt__fcf_lstm_flag(bc, bf, "go_backwards") || mgopt__fcf_lstm_flag(bc, bf, "time_major") != tm) continue;
    if (mgopt_op_operand(fc, "in0") != mgopt_op_operand(bc, "in0")) continue;
    if (mgopt__fcf_keras_lstm(p, fc, ff, 0, outs, NULL, 0, NULL) != 1 || mgopt__fcf_keras_lstm(p, bc, bf, 0, outs, NULL, 0, NULL) != 1)
      continue;
    {
      const mgopt_tensor *rf = mgopt_value_const(mgopt_op_operand(fc, "in4")), *rb = mgopt_value_const(mgopt_op_operand(bc, "in4"));
      if (rf->shape[0] != rb->shape[0] || rf->dtype != rb->dtype) continue;
    }
    r = mgopt__fcf_bidi_build(p, fc, bc, cat, rev, tm);
    if (r < 0) {
      rc = -1;
      goto done;
    }
    if (r == 0) continue;
    F->ctx->rewrites++;
    {
      const mgopt__map_slot *fi = mgopt__map_find(&F->fn_info, mgopt__map_ptr_key(ff));
      const mgopt__map_slot *bi = mgopt__map_find(&F->fn_info, mgopt__map_ptr_key(bf));
      if (fi) F->nfused_of[fi->v.i - 1]++;
      if (bi) F->nfused_of[bi->v.i - 1]++;
    }
    F->calls[sl->v.i - 1].call = NULL;
    fcall->call = NULL;
  }
done:
  mgopt__map_free(&at);
  return rc;
}

static mgopt_status mgopt__fcf_run(mgopt_pass_ctx *ctx) {
  mgopt_program *p = ctx->program;
  static const mgopt_composite builtins[] = {
      {"embedding_lookup", mgopt__fcf_embedding_lookup, NULL},
      {"keras_lstm", mgopt__fcf_keras_lstm, NULL},
  };
  mgopt__fcf F;
  int32_t nf = mgopt_program_function_count(p), i;
  int64_t k;
  mgopt_status st = MGOPT_OK;
  char why[MGOPT__FCF_WHY], nbuf[256];
  memset(&F, 0, sizeof F);
  F.ctx = ctx;
  F.cfg = ctx->composites;
  F.builtins = builtins;
  F.nbuiltins = (int32_t)MGOPT__ARRAY_COUNT(builtins);
  mgopt__map_init(&F.fn_info, &p->alloc);
  F.impl = (const char **)mgopt_program_alloc(p, sizeof(char *) * (size_t)(nf + 1), 8);
  F.comp = (const mgopt_composite **)mgopt_program_alloc(p, sizeof(void *) * (size_t)(nf + 1), 8);
  F.reported = (int *)mgopt_program_alloc(p, sizeof(int) * (size_t)(nf + 1), 8);
  F.ncalls_of = (int64_t *)mgopt_program_alloc(p, sizeof(int64_t) * (size_t)(nf + 1), 8);
  F.nfused_of = (int64_t *)mgopt_program_alloc(p, sizeof(int64_t) * (size_t)(nf + 1), 8);
  if (!F.impl || !F.comp || !F.reported || !F.ncalls_of || !F.nfused_of)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
  for (i = 0; i < nf; i++) {
    mgopt_function *f = mgopt_program_function_at(p, i);
    const char *name = mgopt__fcf_names(&F, f, nbuf, sizeof nbuf);
    mgopt__map_slot *sl = mgopt__map_get(&F.fn_info, mgopt__map_ptr_key(f), NULL);
    if (!sl) {
      F.oom = 1;
      break;
    }
    sl->v.i = i + 1;
    if (!name) continue;
    F.impl[i] = mgopt_program_intern_cstr(p, name);
    F.comp[i] = mgopt__fcf_find(&F, name);
    if (!F.comp[i]) {
      if (ctx->opts[1].i) {
        st = mgopt_diag_set(ctx->diag, MGOPT_ERR_PASS, "function '%s' implements '%s', which is no known composite",
                            f->name, name);
        goto done;
      }
      mgopt__fcf_report(&F, i, f, NULL, F.impl[i], "no composite of that name");
    }
  }
  if (!F.oom) mgopt_program_walk(p, mgopt__fcf_visit, &F);
  if (F.oom || mgopt_program_status(p)) {
    st = mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
    goto done;
  }
  /* strict: every call is asked first, so a refusal changes nothing */
  for (k = 0; ctx->opts[1].i && k < F.ncalls; k++) {
    mgopt_value *outs[64];
    mgopt_op *call = F.calls[k].call;
    int r;
    why[0] = 0;
    r = call->nouts > 64 ? 0
                         : F.calls[k].c->fuse(p, call, mgopt_op_callee(call), 0, outs, why, sizeof why, F.calls[k].c->ud);
    if (r < 0) {
      st = mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
      goto done;
    }
    if (r == 0) {
      st = mgopt_diag_set(ctx->diag, MGOPT_ERR_PASS, "function '%s' does not look like composite '%s': %s",
                          mgopt_op_callee(call)->name, F.calls[k].implements, why);
      goto done;
    }
  }
  if (mgopt__fcf_pairs(&F) < 0) {
    st = mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
    goto done;
  }
  for (k = 0; k < F.ncalls; k++) {
    mgopt_function *callee;
    const mgopt__map_slot *sl;
    int r;
    if (!F.calls[k].call) continue; /* fused as half of a bidirectional pair */
    callee = mgopt_op_callee(F.calls[k].call);
    sl = mgopt__map_find(&F.fn_info, mgopt__map_ptr_key(callee));
    why[0] = 0;
    r = mgopt__fcf_fuse(&F, &F.calls[k], why);
    if (r < 0) {
      st = mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
      goto done;
    }
    if (r > 0) {
      ctx->rewrites++;
      if (sl) F.nfused_of[sl->v.i - 1]++;
    } else if (sl) mgopt__fcf_report(&F, (int32_t)(sl->v.i - 1), callee, F.calls[k].call, F.calls[k].implements, why);
  }
  /* a composite function whose every call was fused is gone with its calls */
  for (i = nf - 1; i >= 0; i--)
    if (F.nfused_of[i] && F.nfused_of[i] == F.ncalls_of[i]) {
      mgopt_function *f = mgopt_program_function_at(p, i);
      if (strcmp(f->name, "main") != 0) mgopt__function_drop(f);
    }
done:
  if (F.calls) mgopt__heap_free(&p->alloc, F.calls, (size_t)F.calls_cap * sizeof *F.calls);
  mgopt__map_free(&F.fn_info);
  return st;
}

static const mgopt_opt_def mgopt__fcf_opts[] = {
    {"bind", MGOPT_OPT_STRING, "", "functions bound to composites by IR name: \"dom::Name=composite;...\"", NULL},
    {"strict", MGOPT_OPT_BOOL, "false", "fail, changing nothing, when a function naming a composite cannot be fused", NULL}};

MGOPT__DEFINE_PASS_WITH_OPTIONS(tflite, tflite, fuse_composite_functions,
                                "calls of functions implementing a composite op become the fused op",
                                mgopt__fcf_opts, mgopt__fcf_run);
