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
