/* src/passes/util.c — matching: where a value comes from and goes to, constant operands, elementwise chains; running a pattern set. */
#include "../passes_internal.h"

/* ---------------------------------------------------------------- uses and producers */

MGOPT__PRIVATE int mgopt__pu_is_func_output(const mgopt_value *v) {
  const mgopt_use *u;
  int32_t k;
  /* the block-output uses lead the list */
  for (u = v->uses, k = 0; u && k < v->nblock_uses; u = u->next, k++)
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

MGOPT__PRIVATE mgopt_op *mgopt__pu_ancestor_in(mgopt_op *op, const mgopt_block *b) {
  int guard = 0;
  while (op && op->parent != b) {
    if (!op->parent || !op->parent->parent_op || ++guard > 4096) return NULL;
    op = op->parent->parent_op;
  }
  return op;
}

/* ---------------------------------------------------------------- constant operands */

MGOPT__PRIVATE int mgopt__pu_const_all(const mgopt_value *v, double x) {
  const mgopt_tensor *t = mgopt_value_const(v);
  return t && t->numel > 0 && mgopt_tensor_all_equal_f64(t, x);
}

/* ---------------------------------------------------------------- elementwise chains */

/* op is a pure registered elementwise op (unary, or binary whose other operand
   is a one-element constant of rank <= 1) that does not reorder elements or
   change rank: its one non-constant operand goes to *data. Such ops commute
   with transposes and reshapes of that operand. */
static int mgopt__pu_elementwise_hop(const mgopt_op *op, mgopt_value **data) {
  uint32_t tr;
  int32_t s, nvar = 0;
  mgopt_value *var = NULL;
  if (op->kind == MGOPT_OP_OPAQUE || op->nouts != 1 || op->nblocks) return 0;
  tr = mgopt_op_traits(op);
  if (!(tr & MGOPT_TRAIT_PURE) || !(tr & (MGOPT_TRAIT_UNARY | MGOPT_TRAIT_BINARY))) return 0;
  if (tr & MGOPT_TRAIT_LAYOUT_SENSITIVE) return 0;
  for (s = 0; s < op->nslots; s++) {
    int32_t k;
    for (k = 0; k < op->slots[s].n; k++) {
      mgopt_value *v = op->slots[s].uses[k].value;
      const mgopt_tensor *t;
      if (!v) continue;
      t = mgopt_value_const(v);
      if (t && t->numel == 1 && t->rank <= 1 && (tr & MGOPT_TRAIT_BINARY)) continue;
      if (t && (tr & MGOPT_TRAIT_UNARY) && s > 0) continue;
      var = v;
      nvar++;
    }
  }
  if (nvar != 1) return 0;
  if (!mgopt_type_equal(&var->type, &op->outs[0]->type) &&
      (var->type.rank != op->outs[0]->type.rank || var->type.rank < 0))
    return 0;
  *data = var;
  return 1;
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_elementwise_chain(mgopt_value *v, int32_t end_kind, mgopt_op **chain, int32_t *n) {
  *n = 0;
  for (;;) {
    mgopt_value *data;
    mgopt_op *cur;
    if (mgopt__pu_is_block_output(v)) return NULL;
    cur = mgopt__pu_single_user(v);
    if (!cur) return NULL;
    if (cur->kind == end_kind) return mgopt_op_operand(cur, "x") == v ? cur : NULL;
    if (*n >= MGOPT__PU_MAX_CHAIN || !mgopt__pu_elementwise_hop(cur, &data) || data != v) return NULL;
    chain[(*n)++] = cur;
    v = cur->outs[0];
  }
}
