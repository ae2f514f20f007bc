/* src/passes/util.c — legality checks and small rewrite helpers shared by the passes. */
#include "../passes_internal.h"

MGOPT__PRIVATE int mgopt__pu_is_func_output(const mgopt_value *v) {
  const mgopt_use *u;
  for (u = v->uses; u; u = u->next)
    if (!u->op && u->block && !u->block->parent_op) return 1;
  return 0;
}

MGOPT__PRIVATE int mgopt__pu_is_block_output(const mgopt_value *v) { return mgopt_value_is_block_output(v); }

MGOPT__PRIVATE int mgopt__pu_single_use(const mgopt_value *v) {
  return v->nuses == 1 && v->uses->op != NULL;
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_single_user(const mgopt_value *v) {
  return mgopt__pu_single_use(v) ? v->uses->op : NULL;
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_def_of(const mgopt_value *v, int32_t kind) {
  return (v && v->def && v->def->kind == kind) ? v->def : NULL;
}

MGOPT__PRIVATE int mgopt__pu_const_scalar(const mgopt_value *v, double *out) {
  const mgopt_tensor *t = mgopt_value_const(v);
  if (!t || t->numel != 1 || t->dtype == MGOPT_DT_STRING) return 0;
  *out = mgopt_tensor_get_f64(t, 0);
  return 1;
}

MGOPT__PRIVATE int mgopt__pu_const_all(const mgopt_value *v, double x) {
  const mgopt_tensor *t = mgopt_value_const(v);
  return t && t->numel > 0 && mgopt_tensor_all_equal_f64(t, x);
}

MGOPT__PRIVATE int mgopt__pu_types_equal(const mgopt_value *a, const mgopt_value *b) {
  return mgopt_type_equal(&a->type, &b->type);
}

MGOPT__PRIVATE int mgopt__pu_is_dead(const mgopt_op *op) {
  int32_t i;
  if (op->nouts == 0) return 0;
  for (i = 0; i < op->nouts; i++)
    if (op->outs[i]->nuses) return 0;
  return 1;
}

MGOPT__PRIVATE void mgopt__pu_erase_if_dead(mgopt_rewriter *rw, mgopt_op *op) {
  if (op && !(op->flags & MGOPT_OP_ERASED) && mgopt__pu_is_dead(op)) mgopt_rw_erase(rw, op);
}

MGOPT__PRIVATE mgopt_status mgopt__pu_run_patterns(mgopt_pass_ctx *ctx, const mgopt_pattern *pats, int32_t n,
                                                   int fold) {
  mgopt_rewrite_config cfg;
  mgopt_rewrite_stats st;
  mgopt_status s;
  memset(&cfg, 0, sizeof cfg);
  memset(&st, 0, sizeof st);
  cfg.erase_dead = 0;
  if (fold) {
    cfg.fold = ctx->fold;
    cfg.fold_ud = ctx->fold_ud;
  }
  s = mgopt_rewrite_program(ctx->program, pats, n, &cfg, &st, ctx->diag);
  ctx->rewrites += st.rewrites + st.folds;
  return s;
}

/* ---------------------------------------------------------------- group A: cleanup passes */

MGOPT__PRIVATE int64_t mgopt__pu_norm_axis(int64_t axis, int64_t rank) {
  if (rank < 0) return -1;
  if (axis < 0) axis += rank;
  return (axis >= 0 && axis < rank) ? axis : -1;
}

MGOPT__PRIVATE int mgopt__pu_same_known_shape(const mgopt_value *a, const mgopt_value *b) {
  const mgopt_type *s = &a->type, *t = &b->type;
  int32_t i;
  if (s->kind != MGOPT_TYPE_TENSOR || t->kind != MGOPT_TYPE_TENSOR) return 0;
  if (s->dtype == MGOPT_DT_UNKNOWN || s->dtype != t->dtype) return 0;
  if (s->rank < 0 || s->rank != t->rank) return 0;
  for (i = 0; i < s->rank; i++) {
    mgopt_dim x = s->dims[i], y = t->dims[i];
    if (x.sym || y.sym) {
      if (x.sym != y.sym) return 0;
    } else if (x.v < 0 || x.v != y.v) {
      return 0;
    }
  }
  return 1;
}

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

MGOPT__PRIVATE int mgopt__pu_set_ints_param(mgopt_rewriter *rw, mgopt_op *op, const mgopt_op *like, const char *name,
                                            const int64_t *v, int64_t n) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *old = like ? mgopt_op_operand(like, name) : NULL;
  mgopt_tensor *t;
  mgopt_value *c;
  mgopt_dtype dt = MGOPT_DT_INT32;
  int64_t k;
  if (!old) {
    if (mgopt_op_slot_index(op, name) >= 0) mgopt_rw_set_operand(rw, op, name, NULL);
    return mgopt_op_set_ints(op, name, v, n) == MGOPT_OK;
  }
  if (mgopt_dtype_is_int((mgopt_dtype)old->type.dtype)) dt = (mgopt_dtype)old->type.dtype;
  t = mgopt_tensor_new(p, dt, 1, &n);
  if (!t) return 0;
  for (k = 0; k < n; k++) mgopt_tensor_set_i64(t, k, v[k]);
  c = mgopt_rw_const(rw, op, mgopt_program_fresh_name(p, name), t);
  if (!c) return 0;
  mgopt_op_remove_attr(op, name);
  old = mgopt_op_operand(op, name);
  mgopt_rw_set_operand(rw, op, name, c);
  if (old) mgopt__pu_erase_if_dead(rw, old->def);
  return 1;
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

MGOPT__PRIVATE mgopt_op *mgopt__pu_ancestor_in(mgopt_op *op, const mgopt_block *b) {
  int guard = 0;
  while (op && op->parent != b) {
    if (!op->parent || !op->parent->parent_op || ++guard > 4096) return NULL;
    op = op->parent->parent_op;
  }
  return op;
}

MGOPT__PRIVATE mgopt_dtype mgopt__pu_cast_dtype(const mgopt_op *cast) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(cast, "dtype", &n);
  if (!s) return MGOPT_DT_UNKNOWN;
  return mgopt_dtype_from_name(s, n);
}

MGOPT__PRIVATE void mgopt__pu_erase_with_consts(mgopt_rewriter *rw, mgopt_op *op) {
  mgopt_op *consts[8];
  int32_t s, k, n = 0;
  if (!op || (op->flags & MGOPT_OP_ERASED) || !mgopt__pu_is_dead(op)) return;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n && n < 8; k++) {
      mgopt_value *v = op->slots[s].uses[k].value;
      if (v && v->def && v->def->kind == MGOPT_OP_const) consts[n++] = v->def;
    }
  mgopt_rw_erase(rw, op);
  for (k = 0; k < n; k++) mgopt__pu_erase_if_dead(rw, consts[k]);
}
