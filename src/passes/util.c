/* src/passes/util.c — matching: where a value comes from and goes to, constant operands, scalar operands of fusion patterns, ending a fusion, elementwise chains. */
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

MGOPT__PRIVATE int mgopt__pu_fused_act(const mgopt_op *op) {
  const char *a = mgopt_op_get_string(op, "fused_activation", NULL);
  return a && strcmp(a, "none") != 0;
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

/* want as a one-element tensor of dtype dt holds it (round to nearest even);
   want itself for the other dtypes (tolerance alone decides). */
static double mgopt__pu_round_to(double want, mgopt_dtype dt) {
  switch (dt) {
  case MGOPT_DT_FP16: return (double)mgopt_f16_to_f32(mgopt_f32_to_f16((float)want));
  case MGOPT_DT_BF16: return (double)mgopt_bf16_to_f32(mgopt_f32_to_bf16((float)want));
  case MGOPT_DT_FP32: return (double)(float)want;
  default: return want;
  }
}

MGOPT__PRIVATE int mgopt__pu_scalar_near(const mgopt_value *v, double want, double tol, double *c) {
  const mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
  double x;
  if (!t || t->numel != 1) return 0;
  if (!mgopt_dtype_is_float((mgopt_dtype)t->dtype) && !mgopt_dtype_is_int((mgopt_dtype)t->dtype)) return 0;
  x = mgopt_tensor_get_f64(t, 0);
  if (c) *c = x;
  return fabs(x - want) < tol || x == mgopt__pu_round_to(want, (mgopt_dtype)t->dtype);
}

/* t (one element) broadcast against `other` leaves other's shape as it is */
static int mgopt__pu_keeps_shape(const mgopt_tensor *t, const mgopt_value *other) {
  return t->rank == 0 || (other->type.rank >= 0 && t->rank <= other->type.rank);
}

MGOPT__PRIVATE mgopt_value *mgopt__pu_scalar_operand(const mgopt_op *op, mgopt_value **other) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y");
  int side;
  if (!x || !y) return NULL;
  for (side = 0; side < 2; side++) {
    mgopt_value *c = side ? x : y, *o = side ? y : x;
    const mgopt_tensor *t = mgopt_value_const(c);
    if (side && !(mgopt_op_traits(op) & MGOPT_TRAIT_COMMUTATIVE)) break;
    if (t && t->numel == 1 && mgopt__pu_keeps_shape(t, o)) {
      *other = o;
      return c;
    }
  }
  return NULL;
}

MGOPT__PRIVATE mgopt_value *mgopt__pu_with_scalar(const mgopt_op *op, int32_t kind, double want, double tol) {
  mgopt_value *x, *y;
  int side;
  if (!op || op->kind != kind || op->nouts != 1) return NULL;
  x = mgopt_op_operand(op, "x");
  y = mgopt_op_operand(op, "y");
  if (!x || !y) return NULL;
  for (side = 0; side < 2; side++) {
    mgopt_value *c = side ? x : y, *o = side ? y : x;
    const mgopt_tensor *t = mgopt_value_const(c);
    if (side && !(mgopt_op_traits(op) & MGOPT_TRAIT_COMMUTATIVE)) break;
    if (t && mgopt__pu_keeps_shape(t, o) && mgopt__pu_scalar_near(c, want, tol, NULL)) return o;
  }
  return NULL;
}

static int mgopt__pu_fuse_end(mgopt_rewriter *rw, mgopt_op *const *made, int32_t nmade, mgopt_op *last,
                              mgopt_op *const *matched, int32_t nmatched, int keep_name) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_op *top = made[nmade - 1];
  int32_t i;
  int ok = top->nouts == 1 && last->nouts == 1;
  for (i = 0; i < nmade && ok; i++)
    ok = mgopt_op_infer(p, made[i], NULL) == MGOPT_OK && mgopt_program_target_accepts(p, made[i]);
  if (ok) ok = mgopt__pu_adopt_type(p, top->outs[0], last->outs[0]);
  if (!ok) {
    for (i = nmade - 1; i >= 0; i--) mgopt__pu_erase_with_consts(rw, made[i]);
    return 0;
  }
  if (keep_name) top->name = last->name ? last->name : top->outs[0]->name;
  mgopt__pu_replace_value(rw, last->outs[0], top->outs[0]);
  mgopt__pu_sync_op_name(top);
  mgopt__pu_erase_with_consts(rw, last);
  for (i = 0; i < nmatched; i++) mgopt__pu_erase_with_consts(rw, matched[i]);
  return 1;
}

MGOPT__PRIVATE int mgopt__pu_fuse_finish(mgopt_rewriter *rw, mgopt_op *const *made, int32_t nmade, mgopt_op *last,
                                         mgopt_op *const *matched, int32_t nmatched) {
  return mgopt__pu_fuse_end(rw, made, nmade, last, matched, nmatched, 0);
}

MGOPT__PRIVATE int mgopt__pu_fuse_finish_named(mgopt_rewriter *rw, mgopt_op *const *made, int32_t nmade,
                                               mgopt_op *last, mgopt_op *const *matched, int32_t nmatched) {
  return mgopt__pu_fuse_end(rw, made, nmade, last, matched, nmatched, 1);
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
  return mgopt__pu_elementwise_chain_to(v, &end_kind, 1, chain, n);
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_elementwise_chain_to(mgopt_value *v, const int32_t *end_kinds, int32_t nend,
                                                        mgopt_op **chain, int32_t *n) {
  *n = 0;
  for (;;) {
    mgopt_value *data;
    mgopt_op *cur;
    int32_t e;
    if (mgopt__pu_is_block_output(v)) return NULL;
    cur = mgopt__pu_single_user(v);
    if (!cur) return NULL;
    for (e = 0; e < nend; e++)
      if (cur->kind == end_kinds[e]) return mgopt_op_operand(cur, "x") == v ? cur : NULL;
    if (*n >= MGOPT__PU_MAX_CHAIN || !mgopt__pu_elementwise_hop(cur, &data) || data != v) return NULL;
    chain[(*n)++] = cur;
    v = cur->outs[0];
  }
}

MGOPT__PRIVATE mgopt_status mgopt__pu_each_state_write(mgopt_pass_ctx *ctx, int (*prepare)(mgopt_function *, void *),
                                                      int (*visit)(mgopt_op *, void *), void *ud) {
  mgopt_program *p = ctx->program;
  mgopt_op **ups = NULL;
  int64_t cap = 0, n, i;
  int32_t f, kind = MGOPT_OP_coreml_update_state;
  mgopt_status st = MGOPT_OK;
  for (f = 0; f < mgopt_program_function_count(p) && !st; f++) {
    mgopt_function *fn = mgopt_program_function_at(p, f);
    if (mgopt__index_kind_count(fn, kind) == 0) continue;
    n = mgopt__index_collect(fn, &kind, 1, &ups, &cap);
    if (n < 0 || (prepare && !prepare(fn, ud))) {
      st = mgopt__oom(p);
      break;
    }
    for (i = 0; i < n; i++) ctx->rewrites += visit(ups[i], ud);
  }
  if (ups) mgopt__heap_free(&p->alloc, ups, sizeof *ups * (size_t)cap);
  return st;
}

MGOPT__PRIVATE int mgopt__pu_onnx_shape_range(const mgopt_op *op, int64_t *start, int64_t *end) {
  const mgopt_value *x = mgopt_op_operand(op, "in0");
  const mgopt_attr *as = mgopt_op_attr(op, "start"), *ae = mgopt_op_attr(op, "end");
  int64_t r, b, e;
  if (!x || op->nouts != 1 || op->nblocks || mgopt_op_operand_count(op) != 1 || x->type.kind != MGOPT_TYPE_TENSOR ||
      x->type.rank < 0)
    return 0;
  if ((as && as->kind != MGOPT_ATTR_INT) || (ae && ae->kind != MGOPT_ATTR_INT)) return 0;
  r = x->type.rank;
  b = as ? as->u.i : 0;
  e = ae ? ae->u.i : r;
  if (b < 0) b += r;
  if (e < 0) e += r;
  *start = b < 0 ? 0 : b > r ? r : b;
  *end = e < 0 ? 0 : e > r ? r : e;
  if (*end < *start) *end = *start;
  return 1;
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_const_pad(mgopt_rewriter *rw, mgopt_op *pos, mgopt_value *x, int32_t rank,
                                             int64_t axis, int64_t before, int64_t after, double cval,
                                             const char *pad_name, const char *op_name) {
  static const char *const slots[2] = {"x", "pad"};
  mgopt_program *p = mgopt_rw_program(rw);
  int64_t pads[2 * MGOPT_MAX_RANK];
  int32_t n = 2 * (rank - (int32_t)axis), i;
  mgopt_value *vals[2];
  mgopt_op *op;
  if (axis < 0 || axis >= rank || rank > MGOPT_MAX_RANK) return NULL;
  for (i = 0; i < n; i++) pads[i] = 0;
  pads[0] = before;
  pads[1] = after;
  vals[0] = x;
  vals[1] = mgopt_rw_const(rw, pos, pad_name, mgopt__pu_const_i32_1d(p, pads, n));
  if (!vals[1]) return NULL;
  op = mgopt_rw_create(rw, pos, "pad", op_name, 2, slots, vals, 1);
  if (!op) {
    mgopt_rw_erase(rw, vals[1]->def);
    return NULL;
  }
  if (mgopt_op_set_string(op, "mode", "constant") || mgopt_op_set_float(op, "constant_val", cval)) {
    mgopt__pu_erase_with_consts(rw, op);
    return NULL;
  }
  return op;
}
