/* src/passes/replace.c — replacing values: the typed replacement rule, pair cancellation around a chain, names that must survive, erasing what a rewrite left dead. */
#include "../passes_internal.h"

/* ---------------------------------------------------------------- replacing a value */

MGOPT__PRIVATE void mgopt__pu_fill_type(mgopt_program *p, mgopt_op *op, int32_t i, const mgopt_type *t) {
  mgopt_type *o = &op->outs[i]->type;
  if (o->kind == MGOPT_TYPE_TENSOR && o->dtype == MGOPT_DT_UNKNOWN && o->rank < 0)
    (void)mgopt__type_copy(p, o, t);
}

MGOPT__PRIVATE void mgopt__pu_replace_value(mgopt_rewriter *rw, mgopt_value *from, mgopt_value *to) {
  const char *old = to->name;
  mgopt_rw_replace_value(rw, from, to);
  if (to->def && to->name != old && to->def->name == old && to->def->nouts == 1) to->def->name = to->name;
}

MGOPT__PRIVATE mgopt_value *mgopt__pu_replace_keep_io(mgopt_rewriter *rw, mgopt_value *from, mgopt_value *to) {
  mgopt_program *p = mgopt_rw_program(rw);
  if (from == to) return to;
  if (mgopt__pu_is_func_output(from) && (!to->def || mgopt__pu_is_func_output(to))) {
    static const char *const slot[1] = {"x"};
    mgopt_op *id = mgopt_rw_create(rw, from->def, "identity", from->name, 1, slot, &to, 1);
    if (!id) return NULL;
    if (mgopt_op_infer(p, id, NULL)) return NULL;
    mgopt__pu_fill_type(p, id, 0, &from->type);
    to = id->outs[0];
  }
  mgopt__pu_replace_value(rw, from, to);
  return to;
}

/* ---------------------------------------------------------------- typed replacements */

MGOPT__PRIVATE int mgopt__pu_loop_args_fit(const mgopt_op *op) {
  int32_t si = mgopt_op_slot_index(op, "loop_vars"), nv, i, k;
  if (op->kind != MGOPT_OP_while_loop) return 1;
  nv = si >= 0 ? op->slots[si].n : 0;
  for (i = 0; i < op->nblocks; i++)
    for (k = 0; k < nv && k < op->blocks[i]->nargs; k++)
      if (op->slots[si].uses[k].value &&
          mgopt__type_clash(&op->blocks[i]->args[k]->type, &op->slots[si].uses[k].value->type, 0))
        return 0;
  return 1;
}

MGOPT__PRIVATE mgopt_type *mgopt__pu_infer_outputs(mgopt_program *p, const mgopt_op *op, mgopt_type *tmp,
                                                   mgopt_status *st) {
  mgopt_type *inf;
  mgopt_diag d;
  mgopt_diag_clear(&d);
  *st = mgopt__op_infer_types(p, op, tmp, 8, &inf, &d);
  if (*st) {
    /* no memory for the types (d untouched), or the inference's own failure */
    *st = (*st == MGOPT_ERR_NOMEM && d.status == MGOPT_OK) || d.status == MGOPT_ERR_NOMEM ? MGOPT_ERR_NOMEM
                                                                                        : MGOPT_ERR_TYPE;
    return NULL;
  }
  return inf;
}

MGOPT__PRIVATE int mgopt__pu_infer_fits(mgopt_program *p, const mgopt_op *op) {
  mgopt_type tmp[8], *inf;
  mgopt_status st;
  int32_t i;
  if (!mgopt__pu_loop_args_fit(op)) return 0;
  inf = mgopt__pu_infer_outputs(p, op, tmp, &st);
  if (!inf) return st == MGOPT_OK; /* no inference: nothing to contradict */
  for (i = 0; i < op->nouts; i++)
    if (mgopt__type_clash(&op->outs[i]->type, &inf[i], 1)) return 0;
  return 1;
}

MGOPT__PRIVATE int mgopt__pu_inferred_type(mgopt_program *p, const mgopt_op *op, int32_t i, mgopt_type *out) {
  mgopt_type tmp[8], *inf;
  mgopt_status st;
  if (i < 0 || i >= op->nouts) return 0;
  inf = mgopt__pu_infer_outputs(p, op, tmp, &st);
  if (!inf) return 0;
  *out = inf[i];
  return 1;
}

/* Every op reading `from` (or owning a nested block that outputs it: cond
   and while_loop infer from their blocks), except `skip`, type checks with
   `from` typed `t`; with `forgive`, a reader that does not type check as it
   is does not count (the retyping did not break it). */
static int mgopt__pu_readers_accept(mgopt_program *p, mgopt_value *from, const mgopt_type *t, const mgopt_op *skip,
                                    int forgive) {
  mgopt_type saved = from->type;
  const mgopt_use *u;
  int ok = 1;
  for (u = from->uses; u && ok; u = u->next) {
    const mgopt_op *user = u->op ? u->op : (u->block ? u->block->parent_op : NULL);
    if (!user || user == skip) continue;
    from->type = *t;
    ok = mgopt__pu_infer_fits(p, user);
    from->type = saved;
    if (!ok && forgive) ok = !mgopt__pu_infer_fits(p, user);
  }
  return ok;
}

MGOPT__PRIVATE int mgopt__pu_uses_accept(mgopt_program *p, mgopt_value *from, const mgopt_type *t, const mgopt_op *skip) {
  return mgopt_type_equal(&from->type, t) || mgopt__pu_readers_accept(p, from, t, skip, 0);
}

/* The one rule for every replacement of `from` (see passes_internal.h). A
   function body's outputs are its signature (main's are the model's declared
   outputs, a called function's are what `call` sites infer from), so there
   only equal types pass, or any type where nothing was declared (dtype and
   rank unknown: a program built through the API without inference). Anywhere
   else the verifier is the arbiter: each reader must still type check with
   `from` typed `t`. Readers' own outputs keep their declared types, so
   nothing further downstream can change. A reader that does not type check
   as it is (a program built through the API without inference) is not held
   against the replacement: it did not break it. `skip` is an op that will
   not read the replacement (the op that produces it). */
static int mgopt__pu_replace_fits_as(mgopt_program *p, mgopt_value *from, const mgopt_type *t, const mgopt_op *skip) {
  const mgopt_type *d = &from->type;
  if (mgopt_type_equal(d, t)) return 1;
  if (mgopt__pu_is_func_output(from) && !(d->kind == MGOPT_TYPE_TENSOR && d->dtype == MGOPT_DT_UNKNOWN && d->rank < 0))
    return 0;
  return mgopt__pu_readers_accept(p, from, t, skip, 1);
}

MGOPT__PRIVATE int mgopt__pu_replace_fits(mgopt_program *p, mgopt_value *from, const mgopt_value *to) {
  if (from == to) return 1;
  return mgopt__pu_replace_fits_as(p, from, &to->type, to->def);
}

MGOPT__PRIVATE int mgopt__pu_replace_static_fits(mgopt_program *p, mgopt_value *from, mgopt_dtype dt, int32_t rank,
                                                const int64_t *shape) {
  mgopt_dim dims[MGOPT_MAX_RANK];
  mgopt_type t;
  int32_t k;
  if (rank < 0 || rank > MGOPT_MAX_RANK) return 0;
  memset(&t, 0, sizeof t);
  t.kind = MGOPT_TYPE_TENSOR;
  t.dtype = (uint8_t)dt;
  t.rank = rank;
  t.dims = rank ? dims : NULL;
  for (k = 0; k < rank; k++) dims[k] = mgopt_dim_static(shape[k]);
  return mgopt__pu_replace_fits_as(p, from, &t, NULL);
}

MGOPT__PRIVATE int mgopt__pu_adopt_type(mgopt_program *p, mgopt_value *to, mgopt_value *from) {
  if (mgopt_type_equal(&to->type, &from->type)) return 1;
  if (to->type.kind == from->type.kind &&
      (from->type.kind != MGOPT_TYPE_TENSOR || from->type.dtype != MGOPT_DT_UNKNOWN || to->type.dtype == MGOPT_DT_UNKNOWN) &&
      !mgopt__type_clash(&from->type, &to->type, 1))
    return mgopt__type_copy(p, &to->type, &from->type) == MGOPT_OK;
  return mgopt__pu_replace_fits(p, from, to);
}

MGOPT__PRIVATE int mgopt__pu_rebase_chain(mgopt_rewriter *rw, mgopt_op *const *chain, int32_t n, mgopt_value *in,
                                          mgopt_value *x, mgopt_value *from) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_type saved[MGOPT__PU_MAX_CHAIN];
  const char *slot = NULL;
  int32_t s, k;
  int ok = 1;
  if (n == 0) return mgopt__pu_replace_fits(p, from, x);
  if (n > MGOPT__PU_MAX_CHAIN) return 0;
  for (s = 0; s < chain[0]->nslots && !slot; s++)
    if (chain[0]->slots[s].n == 1 && chain[0]->slots[s].uses[0].value == in) slot = chain[0]->slots[s].name;
  if (!slot) return 0;
  /* a trial behind the rewriter's back: undone without a trace when it fails
     (queueing ops for a change that did not happen would run the pattern
     again and again); made again through the rewriter when it holds */
  for (k = 0; k < n; k++) saved[k] = chain[k]->outs[0]->type;
  if (mgopt_op_set_operand(chain[0], slot, x) != MGOPT_OK) return 0;
  for (k = 0; k < n && ok; k++) ok = mgopt_op_infer(p, chain[k], NULL) == MGOPT_OK;
  if (ok) ok = mgopt__pu_adopt_type(p, chain[n - 1]->outs[0], from);
  (void)mgopt_op_set_operand(chain[0], slot, in);
  if (!ok) {
    for (k = 0; k < n; k++) chain[k]->outs[0]->type = saved[k];
    return 0;
  }
  mgopt_rw_set_operand(rw, chain[0], slot, x);
  for (k = 0; k < n; k++) mgopt_rw_modified(rw, chain[k]);
  return 1;
}

MGOPT__PRIVATE int mgopt__pu_cancel_pair(mgopt_rewriter *rw, mgopt_op *first, mgopt_value *x, mgopt_op *const *chain,
                                         int32_t n, mgopt_op *end) {
  mgopt_value *last = n ? chain[n - 1]->outs[0] : x;
  if (mgopt__pu_is_func_output(end->outs[0]) && (!last->def || mgopt__pu_is_func_output(last))) return 0;
  /* the chain reads x; its last op keeps end's declared type when it holds */
  if (!mgopt__pu_rebase_chain(rw, chain, n, first->outs[0], x, end->outs[0])) return 0;
  mgopt_rw_replace_value(rw, end->outs[0], last);
  if (n) mgopt__pu_sync_op_name(chain[n - 1]);
  mgopt_rw_erase(rw, end);
  mgopt__pu_erase_if_dead(rw, first);
  return 1;
}

/* ---------------------------------------------------------------- names */

MGOPT__PRIVATE const char *mgopt__pu_name2(mgopt_program *p, const char *a, const char *b) {
  char buf[240];
  size_t la = a ? strlen(a) : 0, lb = b ? strlen(b) : 0;
  if (la > 160) la = 160;
  if (lb > 60) lb = 60;
  if (la) memcpy(buf, a, la);
  if (lb) memcpy(buf + la, b, lb);
  buf[la + lb] = 0;
  if (!la && !lb) return mgopt_program_fresh_name(p, "v");
  if (!mgopt__intern_lookup(p, buf, la + lb)) return mgopt_program_intern(p, buf, la + lb);
  return mgopt_program_fresh_name(p, buf);
}

MGOPT__PRIVATE const char *mgopt__pu_value_name(const mgopt_value *v) {
  return (v && v->name) ? v->name : "v";
}

MGOPT__PRIVATE void mgopt__pu_rename(mgopt_value *v, const char *name) {
  const char *old = v->name;
  mgopt_value_set_name(v, name);
  if (v->def && v->def->nouts == 1 && (!v->def->name || v->def->name == old)) v->def->name = v->name;
}

MGOPT__PRIVATE void mgopt__pu_sync_op_name(mgopt_op *op) {
  if (op && op->nouts == 1 && op->outs[0]->name && mgopt__pu_is_func_output(op->outs[0])) op->name = op->outs[0]->name;
}

/* ---------------------------------------------------------------- erasing */

MGOPT__PRIVATE void mgopt__pu_erase_if_dead(mgopt_rewriter *rw, mgopt_op *op) {
  if (op && !(op->flags & MGOPT_OP_ERASED) && mgopt__op_is_dead(op)) mgopt_rw_erase(rw, op);
}

MGOPT__PRIVATE void mgopt__pu_erase_with_consts(mgopt_rewriter *rw, mgopt_op *op) {
  mgopt_op *consts[8];
  int32_t s, k, n = 0;
  if (!op || (op->flags & MGOPT_OP_ERASED) || !mgopt__op_is_dead(op)) return;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n && n < 8; k++) {
      mgopt_value *v = op->slots[s].uses[k].value;
      if (v && v->def && v->def->kind == MGOPT_OP_const) consts[n++] = v->def;
    }
  mgopt_rw_erase(rw, op);
  for (k = 0; k < n; k++) mgopt__pu_erase_if_dead(rw, consts[k]);
}

MGOPT__PRIVATE void mgopt__pu_op_remove_output(mgopt_op *op, int32_t i) {
  int32_t k;
  MGOPT_ASSERT(i >= 0 && i < op->nouts && op->outs[i]->nuses == 0);
  for (k = i; k + 1 < op->nouts; k++) {
    op->outs[k] = op->outs[k + 1];
    op->outs[k]->index = k;
  }
  op->nouts--;
}
