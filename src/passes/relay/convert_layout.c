/* src/passes/relay/convert_layout.c — relay::convert_layout: channel-last regions around conv, pool and norm ops become channel-first, with transposes only at their borders.

   Spec: tvm_relay_passes.md, "ToNCHWLayout": a graph whose convs read
   channel-last (NHWC) data is converted to channel-first (NCHW).

   Representation: conv, conv_transpose, avg_pool, max_pool, batch_norm and
   instance_norm are channel-first in the IR (the MIL form); they carry no
   data_format attribute. A channel-last graph therefore reaches mgopt with
   each such op wrapped in a transpose to channel-first before it (perm
   [0, 3, 1, 2], rank 5: [0, 4, 1, 2, 3]) and one back to channel-last after
   it (perm [0, 2, 3, 1], rank 5: [0, 2, 3, 4, 1]), the layout-agnostic ops
   between them working channel-last. The pass converts such regions to
   channel-first: a transpose to channel-first moves up, and a transpose to
   channel-last moves down, through layout-agnostic ops, which then work
   channel-first; their constants are re-laid once in the IR; a pair that
   meets cancels. What stays is a transpose at each border of a region: a
   block argument or output, or an op that is not layout-agnostic.
   reduce_transposes, run after it, cancels what it can across the borders.
   A conv or conv_transpose weight that is a transpose of a constant becomes
   that constant re-laid: no run-time transpose of a constant stays.
   Only layout=NCHW (the default) converts: layout=NHWC is refused
   (MGOPT_ERR_UNSUPPORTED), the IR having no channel-last conv to convert to.
   Rank 3 (1-d convs) is left alone: both transposes are perm [0, 2, 1] there,
   so the direction of a move is not given by the perm.

   Before:
     main(%x: (1, 4, 4, 2, fp32)) {
       %t0: (1, 2, 4, 4, fp32) = transpose(x=%x, perm=[0, 3, 1, 2])
       %w: (2, 2, 1, 1, fp32)* = const(val=[[[[1]], [[2]]], [[[3]], [[4]]]])
       %c0: (1, 2, 4, 4, fp32) = conv(x=%t0, weight=%w)
       %t1: (1, 4, 4, 2, fp32) = transpose(x=%c0, perm=[0, 2, 3, 1])
       %b: (2, fp32)* = const(val=[0.5, -0.5])
       %a: (1, 4, 4, 2, fp32) = add(x=%t1, y=%b)
       %r: (1, 4, 4, 2, fp32) = relu(x=%a)
       %t2: (1, 2, 4, 4, fp32) = transpose(x=%r, perm=[0, 3, 1, 2])
       %c1: (1, 2, 4, 4, fp32) = conv(x=%t2, weight=%w)
       %t3: (1, 4, 4, 2, fp32) = transpose(x=%c1, perm=[0, 2, 3, 1])
     } -> (%t3)
   After:
     main(%x: (1, 4, 4, 2, fp32)) {
       %t0: (1, 2, 4, 4, fp32) = transpose(x=%x, perm=[0, 3, 1, 2])
       %w: (2, 2, 1, 1, fp32)* = const(val=[[[[1]], [[2]]], [[[3]], [[4]]]])
       %c0: (1, 2, 4, 4, fp32) = conv(x=%t0, weight=%w)
       %b_nchw: (1, 2, 1, 1, fp32)* = const(val=[[[[0.5]], [[-0.5]]]])
       %a_nchw: (1, 2, 4, 4, fp32) = add(x=%c0, y=%b_nchw)
       %r_nchw: (1, 2, 4, 4, fp32) = relu(x=%a_nchw)
       %c1: (1, 2, 4, 4, fp32) = conv(x=%r_nchw, weight=%w)
       %t3: (1, 4, 4, 2, fp32) = transpose(x=%c1, perm=[0, 2, 3, 1])
     } -> (%t3)

   A layout-agnostic op: a pure unary or binary elementwise op (or a cast)
   with one output, no nested blocks and no layout-sensitive trait, whose
   parameters other than its data are one-element constants.
   Fires on: (down) an agnostic op of rank r (4..8) reading, in at least one
   operand, a transpose to channel-last read only by it, its other operands
   such transposes or constants: the op reads their channel-first inputs and
   constants re-laid, and one transpose to channel-last follows it; (up) a
   transpose to channel-first of the output of an agnostic op read only by
   it: the op moves after it, its operands being channel-first inputs of
   transposes to channel-last, re-laid constants, or at most one run-time
   value of rank r that gets its own transpose to channel-first; (cancel) a
   transpose to channel-first of a transpose to channel-last; (weight) a conv
   or conv_transpose weight that is a transpose of a constant read only there.
   Must not fire: a transpose with other readers (the program would grow), or
   that is a block output in the down move; a move between blocks; a constant that broadcasts the
   data or varies along a dim that is not static (symbolic dims); a run-time
   operand of another rank, or two of them in the up move; an op that is not
   layout-agnostic (softmax, reshape, reductions: a border); rank 3 or an
   unknown rank; layout=NHWC; a weight transposing a run-time value.
   Numeric contract: no arithmetic; constants are moved element by element,
   bit for bit.
   Cost: worklist patterns, O(ops + the elements of the re-laid constants);
   every move passes a transpose over one op in its direction, so the moves
   end. */
#include "../../passes_internal.h"

#define MGOPT__CL_MAXR 8

/* The channel-first (to_last 0: [0, r-1, 1, .., r-2]) or channel-last
   (to_last 1: [0, 2, .., r-1, 1]) perm of rank r. */
static void mgopt__cl_perm(int32_t r, int to_last, int64_t *perm) {
  int32_t i;
  perm[0] = 0;
  for (i = 1; i < r; i++) perm[i] = to_last ? (i == r - 1 ? 1 : i + 1) : (i == 1 ? r - 1 : i - 1);
}

/* op is a transpose of a tensor of rank 4..MAXR by the to_last perm; its rank in *r. */
static int mgopt__cl_is_tr(mgopt_program *p, const mgopt_op *op, int to_last, int32_t *r) {
  const int64_t *perm;
  int64_t n, want[MGOPT__CL_MAXR];
  const mgopt_value *x;
  int32_t i;
  if (!op || op->kind != MGOPT_OP_transpose || op->nouts != 1) return 0;
  x = mgopt_op_operand(op, "x");
  n = mgopt_op_get_ints(p, op, "perm", &perm);
  if (!x || n < 4 || n > MGOPT__CL_MAXR || x->type.kind != MGOPT_TYPE_TENSOR || x->type.rank != n) return 0;
  mgopt__cl_perm((int32_t)n, to_last, want);
  for (i = 0; i < n; i++)
    if ((perm[i] < 0 ? perm[i] + n : perm[i]) != want[i]) return 0;
  *r = (int32_t)n;
  return 1;
}

/* Slot s of op is its data (slot 0 of a unary op, both slots of a binary one). */
static int mgopt__cl_data_slot(const mgopt_op *op, int32_t s) {
  return s == 0 || (mgopt_op_traits(op) & MGOPT_TRAIT_BINARY);
}

/* op is layout-agnostic (see the header). */
static int mgopt__cl_agnostic(const mgopt_op *op) {
  uint32_t tr;
  int32_t s, k;
  if (op->kind == MGOPT_OP_OPAQUE || op->nouts != 1 || op->nblocks) return 0;
  tr = mgopt_op_traits(op);
  if (!(tr & MGOPT_TRAIT_PURE) || (tr & MGOPT_TRAIT_LAYOUT_SENSITIVE)) return 0;
  if (!(tr & (MGOPT_TRAIT_UNARY | MGOPT_TRAIT_BINARY)) && op->kind != MGOPT_OP_cast) return 0;
  for (s = 0; s < op->nslots; s++) {
    if (op->slots[s].is_list || op->slots[s].n > 1) return 0;
    for (k = 0; k < op->slots[s].n; k++) {
      const mgopt_tensor *t = mgopt_value_const(op->slots[s].uses[k].value);
      if (!mgopt__cl_data_slot(op, s) && (!t || t->numel != 1)) return 0;
    }
  }
  return 1;
}

/* Constant t may stay as it is after the move: one element of rank <= r. */
static int mgopt__cl_const_keeps(const mgopt_tensor *t, int32_t r) { return t->numel == 1 && t->rank <= r; }

/* Constant t broadcasts onto data of type `data` (rank r) without changing
   its shape: right-aligned, each of its dims is 1 or the data's static dim. */
static int mgopt__cl_const_fits(const mgopt_tensor *t, const mgopt_type *data, int32_t r) {
  int32_t i, lead = r - t->rank;
  if (t->rank > r || data->rank != r) return 0;
  for (i = 0; i < t->rank; i++) {
    mgopt_dim d = data->dims[lead + i];
    if (t->shape[i] != 1 && (!mgopt_dim_is_static(d) || d.v != t->shape[i])) return 0;
  }
  return 1;
}

/* A new const before pos holding t (left-padded with 1s to rank r) laid
   channel-first: transposed by the channel-first perm. NULL for data that
   cannot be moved (strings, sub-byte) or on OOM. */
static mgopt_value *mgopt__cl_relaid(mgopt_rewriter *rw, mgopt_op *pos, const mgopt_value *v, int32_t r) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_tensor *t = mgopt_value_const(v), *nt;
  int64_t shape[MGOPT__CL_MAXR], perm[MGOPT__CL_MAXR];
  int32_t i, lead = r - t->rank;
  for (i = 0; i < r; i++) shape[i] = i < lead ? 1 : t->shape[i - lead];
  mgopt__cl_perm(r, 0, perm);
  nt = mgopt__pu_transpose_data(p, t, shape, r, perm);
  if (!nt) return NULL;
  return mgopt_rw_const(rw, pos, mgopt__pu_name2(p, mgopt__pu_value_name(v), "_nchw"), nt);
}

/* A transpose of v by the to_last perm of rank r, named `name`, before pos. */
static mgopt_op *mgopt__cl_transpose(mgopt_rewriter *rw, mgopt_op *pos, mgopt_value *v, int32_t r, int to_last,
                                     const char *name) {
  static const char *const slot[1] = {"x"};
  int64_t perm[MGOPT__CL_MAXR];
  mgopt_op *t = mgopt_rw_create(rw, pos, "transpose", name, 1, slot, &v, 1);
  mgopt__cl_perm(r, to_last, perm);
  if (t && mgopt_op_set_ints(t, "perm", perm, r) != MGOPT_OK) {
    mgopt_rw_erase(rw, t);
    return NULL;
  }
  return t;
}

/* A copy of agnostic op e before pos reading vals (one per operand, in slot
   order), named `name`. NULL on OOM. */
static mgopt_op *mgopt__cl_copy(mgopt_rewriter *rw, mgopt_op *e, mgopt_op *pos, mgopt_value *const *vals,
                                const char *name) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_op *n = mgopt__pu_clone_op(p, e);
  int32_t s, k, i = 0;
  if (!n) return NULL;
  for (s = 0; s < e->nslots; s++)
    for (k = 0; k < e->slots[s].n; k++, i++)
      if (vals[i] != e->slots[s].uses[k].value) mgopt_op_set_operand_at(n, s, k, vals[i]);
  if (mgopt_op_set_name(n, name) != MGOPT_OK || mgopt_value_set_name(n->outs[0], name) != MGOPT_OK) {
    mgopt_op_erase(n);
    return NULL;
  }
  mgopt_op_insert_before(n, pos);
  mgopt_rw_created(rw, n);
  return n;
}

/* Erases the consts in vals[0..n) that were made for a move (not in olds). */
static void mgopt__cl_unmake(mgopt_rewriter *rw, mgopt_value *const *vals, mgopt_value *const *olds, int32_t n) {
  int32_t i;
  for (i = 0; i < n; i++)
    if (vals[i] && vals[i] != olds[i] && vals[i]->def && vals[i]->def->kind == MGOPT_OP_const && vals[i]->nuses == 0)
      mgopt_rw_erase(rw, vals[i]->def);
}

#define MGOPT__CL_MAXIN 8

/* What an operand of an agnostic op is to a move (mgopt__cl_gather). */
enum { MGOPT__CL_KEEP, MGOPT__CL_TR, MGOPT__CL_RUN };

/* Gathers the operands of agnostic op e (output rank r), in slot order, into
   olds (as they are) and vals, and says in kinds what each is: CL_TR a
   transpose to channel-last of rank r (its vals entry is that transpose's
   channel-first input), CL_KEEP a parameter, an absent operand or a constant
   that broadcasts onto the output, CL_RUN any other run-time value. The
   count, or -1 when e has more than MAXIN operands or a constant operand of
   its data does not broadcast onto the output unchanged. */
static int32_t mgopt__cl_gather(mgopt_program *p, const mgopt_op *e, int32_t r, mgopt_value **olds,
                                mgopt_value **vals, int *kinds) {
  int32_t s, k, n = 0, rr;
  for (s = 0; s < e->nslots; s++)
    for (k = 0; k < e->slots[s].n; k++, n++) {
      mgopt_value *v = e->slots[s].uses[k].value;
      const mgopt_tensor *t;
      if (n >= MGOPT__CL_MAXIN) return -1;
      olds[n] = vals[n] = v;
      kinds[n] = MGOPT__CL_KEEP;
      if (!v || !mgopt__cl_data_slot(e, s)) continue;
      if (mgopt__cl_is_tr(p, v->def, 1, &rr) && rr == r) {
        vals[n] = mgopt_op_operand(v->def, "x");
        kinds[n] = MGOPT__CL_TR;
      } else if ((t = mgopt_value_const(v)) != NULL) {
        if (!mgopt__cl_const_keeps(t, r) && !mgopt__cl_const_fits(t, &e->outs[0]->type, r)) return -1;
      } else
        kinds[n] = MGOPT__CL_RUN;
    }
  return n;
}

/* Moves a transpose to channel-last down over agnostic op e. */
static int mgopt__cl_down(mgopt_rewriter *rw, mgopt_op *e, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *olds[MGOPT__CL_MAXIN], *vals[MGOPT__CL_MAXIN];
  mgopt_op *trs[MGOPT__CL_MAXIN], *made[2];
  const mgopt_type *ot;
  int kinds[MGOPT__CL_MAXIN];
  int32_t n, ntr = 0, i, r = 0;
  MGOPT__UNUSED(ud);
  if (!mgopt__cl_agnostic(e)) return 0;
  ot = &e->outs[0]->type;
  if (ot->kind != MGOPT_TYPE_TENSOR || ot->rank < 4 || ot->rank > MGOPT__CL_MAXR) return 0;
  r = ot->rank;
  if ((n = mgopt__cl_gather(p, e, r, olds, vals, kinds)) < 0) return 0;
  for (i = 0; i < n; i++) {
    int32_t j, dup = 0;
    if (kinds[i] == MGOPT__CL_RUN) return 0;
    if (kinds[i] != MGOPT__CL_TR) continue;
    if (mgopt__pu_is_block_output(olds[i]) || olds[i]->def->parent != e->parent) return 0;
    for (j = 0; j < i; j++) dup |= olds[j] == olds[i];
    if (!dup) trs[ntr++] = olds[i]->def;
  }
  if (ntr == 0) return 0;
  /* every transpose moved is read by e alone */
  for (i = 0; i < ntr; i++) {
    int32_t reads = 0, j;
    for (j = 0; j < n; j++) reads += olds[j] == trs[i]->outs[0];
    if (trs[i]->outs[0]->nuses != reads) return 0;
  }
  for (i = 0; i < n; i++) {
    const mgopt_tensor *t = olds[i] && vals[i] == olds[i] ? mgopt_value_const(olds[i]) : NULL;
    if (t && !mgopt__cl_const_keeps(t, r)) {
      vals[i] = mgopt__cl_relaid(rw, e, olds[i], r);
      if (!vals[i]) {
        mgopt__cl_unmake(rw, vals, olds, i);
        return 0;
      }
    }
  }
  made[0] = mgopt__cl_copy(rw, e, e, vals, mgopt__pu_name2(p, mgopt__pu_value_name(e->outs[0]), "_nchw"));
  made[1] = made[0] ? mgopt__cl_transpose(rw, e, made[0]->outs[0], r, 1, e->outs[0]->name) : NULL;
  if (!made[1]) {
    if (made[0]) mgopt_rw_erase(rw, made[0]);
    mgopt__cl_unmake(rw, vals, olds, n);
    return 0;
  }
  if (!mgopt__pu_fuse_finish_named(rw, made, 2, e, NULL, 0)) return 0;
  for (i = 0; i < ntr; i++) mgopt__pu_erase_if_dead(rw, trs[i]);
  return 1;
}

/* Moves transpose to channel-first tr up over the agnostic op producing its input. */
static int mgopt__cl_up(mgopt_rewriter *rw, mgopt_op *tr, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *olds[MGOPT__CL_MAXIN], *vals[MGOPT__CL_MAXIN], *u;
  mgopt_op *e, *made[2], *outs[MGOPT__CL_MAXIN];
  int kinds[MGOPT__CL_MAXIN];
  int32_t n, nout = 0, nmade = 0, i, r, run = -1;
  MGOPT__UNUSED(ud);
  if (!mgopt__cl_is_tr(p, tr, 0, &r)) return 0;
  u = mgopt_op_operand(tr, "x");
  e = u->def;
  if (!e || e->parent != tr->parent || u->nuses != 1 || mgopt__pu_is_block_output(u) || !mgopt__cl_agnostic(e))
    return 0;
  if ((n = mgopt__cl_gather(p, e, r, olds, vals, kinds)) < 0) return 0;
  for (i = 0; i < n; i++) {
    if (kinds[i] == MGOPT__CL_TR) outs[nout++] = olds[i]->def;
    if (kinds[i] != MGOPT__CL_RUN) continue;
    if (run >= 0 || olds[i]->type.kind != MGOPT_TYPE_TENSOR || olds[i]->type.rank != r) return 0;
    run = i;
  }
  for (i = 0; i < n; i++) {
    const mgopt_tensor *t = olds[i] && vals[i] == olds[i] && i != run ? mgopt_value_const(olds[i]) : NULL;
    if (t && !mgopt__cl_const_keeps(t, r)) {
      vals[i] = mgopt__cl_relaid(rw, tr, olds[i], r);
      if (!vals[i]) {
        mgopt__cl_unmake(rw, vals, olds, i);
        return 0;
      }
    }
  }
  if (run >= 0) {
    made[nmade] = mgopt__cl_transpose(rw, tr, olds[run], r, 0,
                                      mgopt__pu_name2(p, mgopt__pu_value_name(olds[run]), "_nchw"));
    if (!made[nmade]) {
      mgopt__cl_unmake(rw, vals, olds, n);
      return 0;
    }
    vals[run] = made[nmade++]->outs[0];
  }
  made[nmade] = mgopt__cl_copy(rw, e, tr, vals, mgopt__pu_value_name(tr->outs[0]));
  if (!made[nmade]) {
    if (nmade) mgopt_rw_erase(rw, made[0]);
    mgopt__cl_unmake(rw, vals, olds, n);
    return 0;
  }
  nmade++;
  if (!mgopt__pu_fuse_finish_named(rw, made, nmade, tr, &e, 1)) return 0;
  for (i = 0; i < nout; i++)
    if (outs[i]->parent) mgopt__pu_erase_if_dead(rw, outs[i]);
  return 1;
}

/* A transpose to channel-first of a transpose to channel-last: both go. */
static int mgopt__cl_cancel(mgopt_rewriter *rw, mgopt_op *tr, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *u;
  int32_t r, rr;
  MGOPT__UNUSED(ud);
  if (!mgopt__cl_is_tr(p, tr, 0, &r)) return 0;
  u = mgopt_op_operand(tr, "x");
  if (!mgopt__cl_is_tr(p, u->def, 1, &rr) || rr != r) return 0;
  return mgopt__pu_cancel_pair(rw, u->def, mgopt_op_operand(u->def, "x"), NULL, 0, tr);
}

/* A conv or conv_transpose weight transposing a constant becomes the constant re-laid. */
static int mgopt__cl_weight(mgopt_rewriter *rw, mgopt_op *conv, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *w = mgopt_op_operand(conv, "weight"), *c, *nv;
  mgopt_tensor *t, *nt;
  mgopt_op *tr;
  const int64_t *perm;
  int64_t n, np[MGOPT_MAX_RANK];
  int32_t i;
  MGOPT__UNUSED(ud);
  if (!w || !(tr = mgopt__pu_def_of(w, MGOPT_OP_transpose)) || w->nuses != 1 || mgopt__pu_is_block_output(w))
    return 0;
  c = mgopt_op_operand(tr, "x");
  if (!c || !(t = mgopt_value_const(c)) || tr->nouts != 1) return 0;
  n = mgopt_op_get_ints(p, tr, "perm", &perm);
  if (n != t->rank || n < 1 || n > MGOPT_MAX_RANK) return 0;
  for (i = 0; i < n; i++) np[i] = perm[i] < 0 ? perm[i] + n : perm[i];
  nt = mgopt__pu_transpose_data(p, t, t->shape, t->rank, np);
  if (!nt || !mgopt__pu_replace_static_fits(p, w, (mgopt_dtype)nt->dtype, nt->rank, nt->shape)) return 0;
  nv = mgopt_rw_const(rw, tr, mgopt__pu_name2(p, mgopt__pu_value_name(w), "_relaid"), nt);
  if (!nv) return 0;
  mgopt_rw_replace_value(rw, w, nv);
  mgopt__pu_erase_with_consts(rw, tr);
  return 1;
}

static const mgopt_pattern mgopt__cl_patterns[] = {
    {"cancel", MGOPT_OP_transpose, NULL, 3, mgopt__cl_cancel, NULL},
    {"weight", MGOPT_OP_conv, NULL, 2, mgopt__cl_weight, NULL},
    {"weight_transpose", MGOPT_OP_conv_transpose, NULL, 2, mgopt__cl_weight, NULL},
    {"up", MGOPT_OP_transpose, NULL, 1, mgopt__cl_up, NULL},
    {"down", -1, NULL, 1, mgopt__cl_down, NULL},
};

static const mgopt_opt_def mgopt__cl_opts[1] = {
    {"layout", MGOPT_OPT_STRING, "NCHW", "the layout to convert to: NCHW (NHWC is refused: no channel-last conv in the IR)", NULL},
};

static mgopt_status mgopt__cl_run(mgopt_pass_ctx *ctx) {
  static const int32_t needs[6] = {MGOPT_OP_conv,     MGOPT_OP_conv_transpose, MGOPT_OP_avg_pool,
                                   MGOPT_OP_max_pool, MGOPT_OP_batch_norm,     MGOPT_OP_instance_norm};
  const char *layout = ctx->opts[0].s ? ctx->opts[0].s : "NCHW";
  mgopt_program *p = ctx->program;
  mgopt_rewrite_config cfg;
  mgopt_rewrite_stats st;
  mgopt_status s = MGOPT_OK;
  int32_t f, i;
  if (!strcmp(layout, "NHWC"))
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_UNSUPPORTED,
                          "layout=NHWC: conv, pool and norm ops are channel-first only; nothing converts to NHWC");
  if (strcmp(layout, "NCHW") != 0)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "layout=%.40s: NCHW or NHWC", layout);
  memset(&cfg, 0, sizeof cfg);
  memset(&st, 0, sizeof st);
  cfg.keep_dead = 1;
  for (f = 0; f < mgopt_program_function_count(p) && !s; f++) {
    mgopt_function *fn = mgopt_program_function_at(p, f);
    int any = 0;
    for (i = 0; i < 6; i++) any |= mgopt__index_kind_count(fn, needs[i]) != 0;
    if (any)
      s = mgopt_rewrite_function(p, fn, mgopt__cl_patterns, MGOPT__ARRAY_COUNT(mgopt__cl_patterns), &cfg, &st,
                                 ctx->diag);
  }
  ctx->rewrites += st.rewrites;
  return s;
}

MGOPT__DEFINE_PASS_WITH_OPTIONS(relay, relay, convert_layout,
                                "channel-last regions around conv, pool and norm ops become channel-first",
                                mgopt__cl_opts, mgopt__cl_run);
