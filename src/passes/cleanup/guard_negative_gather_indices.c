/* src/passes/cleanup/guard_negative_gather_indices.c — common::guard_negative_gather_indices: negative gather indices wrap explicitly (idx < 0 becomes idx + dim).

   Spec: reference mil-passes.md §3.33 (guard_negative_gather_indices).

   Before:
     main(%x: (5, 3, fp32), %i: (2, int32)) {
       %g: (2, 3, fp32) = gather(x=%x, indices=%i, axis=0)
     } -> (%g)
   After:
     main(%x: (5, 3, fp32), %i: (2, int32)) {
       %i_zero: (int32)* = const(val=0)
       %i_nonneg: (2, bool) = greater_equal(x=%i, y=%i_zero)
       %i_dim: (int32)* = const(val=5)
       %i_wrapped: (2, int32) = add(x=%i, y=%i_dim)
       %i_guarded: (2, int32) = select(cond=%i_nonneg, a=%i, b=%i_wrapped)
       %g: (2, 3, fp32) = gather(x=%x, indices=%i_guarded, axis=0)
     } -> (%g)

   Fires on: gather whose indices have a signed integer dtype and whose
   gathered axis of x has a static size. Computed indices get
   select(greater_equal(idx, 0), idx, add(idx, dim)) (named "<idx>_nonneg",
   "<idx>_wrapped", "<idx>_guarded"), one guard per gather; constant indices
   with a negative entry are replaced by a wrapped constant "<idx>_wrapped".
   Must not fire: unsigned indices; constant indices that are all >= 0;
   indices already produced by this guard; a gathered axis of symbolic or
   unknown size (wrapping needs shape(x), which has no canonical op here); a
   size that does not fit the indices' dtype. Indices keep their dtype (the
   reference casts to int32 for a Core ML runtime limit; mgopt does not).
   Cost: one walk over the ops, O(ops + constant elements). */
#include "../../passes_internal.h"

static int mgopt__gng_is_guard(const mgopt_value *idx) {
  const mgopt_op *sel = idx->def, *ge;
  const mgopt_value *c;
  if (!sel || sel->kind != MGOPT_OP_select) return 0;
  c = mgopt_op_operand(sel, "cond");
  ge = c ? c->def : NULL;
  return ge && ge->kind == MGOPT_OP_greater_equal && mgopt_op_operand(ge, "x") == mgopt_op_operand(sel, "a") &&
         mgopt__pu_const_all(mgopt_op_operand(ge, "y"), 0.0);
}

static int64_t mgopt__gng_dtype_max(mgopt_dtype dt) {
  switch (dt) {
    case MGOPT_DT_INT8: return 127;
    case MGOPT_DT_INT16: return 32767;
    case MGOPT_DT_INT32: return 2147483647;
    case MGOPT_DT_INT64: return INT64_MAX;
    default: return -1;
  }
}

static mgopt_op *mgopt__gng_op(mgopt_program *p, mgopt_op *pos, const char *type, const char *name, int32_t n,
                               const char *const *slots, mgopt_value *const *vals) {
  mgopt_op *op = mgopt_build_op(p, pos->parent, pos, type, name, n, slots, vals, 1);
  if (!op) return NULL;
  if (mgopt_op_infer(p, op, NULL) != MGOPT_OK) return NULL;
  return op;
}

/* 1 rewritten, 0 not, -1 OOM */
static int mgopt__gng_one(mgopt_pass_ctx *ctx, mgopt_op *g) {
  mgopt_program *p = ctx->program;
  mgopt_value *x = mgopt_op_operand(g, "x"), *idx = mgopt_op_operand(g, "indices"), *ins[3], *guarded;
  const mgopt_tensor *ct;
  mgopt_dtype dt;
  int64_t axis, dim, i;
  const char *base;
  static const char *const xy[2] = {"x", "y"};
  static const char *const cab[3] = {"cond", "a", "b"};
  mgopt_op *ge, *add, *sel;
  if (!x || !idx || x->type.kind != MGOPT_TYPE_TENSOR || x->type.rank <= 0 || idx->type.kind != MGOPT_TYPE_TENSOR)
    return 0;
  dt = (mgopt_dtype)idx->type.dtype;
  if (!mgopt_dtype_is_int(dt) || !mgopt_dtype_is_signed(dt) || mgopt__gng_dtype_max(dt) < 0) return 0;
  axis = mgopt_op_get_int(g, "axis", 0);
  if (axis < 0) axis += x->type.rank;
  if (axis < 0 || axis >= x->type.rank || !mgopt_dim_is_static(x->type.dims[axis])) return 0;
  dim = x->type.dims[axis].v;
  if (dim > mgopt__gng_dtype_max(dt) || mgopt__gng_is_guard(idx)) return 0;
  base = mgopt__pu_value_name(idx);
  ct = mgopt_value_const(idx);
  if (ct) {
    mgopt_tensor *w;
    int neg = 0;
    for (i = 0; i < ct->numel; i++)
      if (mgopt_tensor_get_i64(ct, i) < 0) neg = 1;
    if (!neg) return 0;
    w = mgopt_tensor_new(p, dt, ct->rank, ct->shape);
    if (!w) return -1;
    for (i = 0; i < ct->numel; i++) {
      int64_t e = mgopt_tensor_get_i64(ct, i);
      mgopt_tensor_set_i64(w, i, e < 0 ? e + dim : e);
    }
    guarded = mgopt_build_const(p, g->parent, g, mgopt__pu_name2(p, base, "_wrapped"), w);
    if (!guarded) return -1;
  } else {
    mgopt_tensor *zt = mgopt_tensor_new_scalar_i64(p, dt, 0), *dimt = mgopt_tensor_new_scalar_i64(p, dt, dim);
    if (!zt || !dimt) return -1;
    ins[0] = idx;
    ins[1] = mgopt_build_const(p, g->parent, g, mgopt__pu_name2(p, base, "_zero"), zt);
    if (!ins[1]) return -1;
    ge = mgopt__gng_op(p, g, "greater_equal", mgopt__pu_name2(p, base, "_nonneg"), 2, xy, ins);
    if (!ge) return -1;
    ins[1] = mgopt_build_const(p, g->parent, g, mgopt__pu_name2(p, base, "_dim"), dimt);
    if (!ins[1]) return -1;
    add = mgopt__gng_op(p, g, "add", mgopt__pu_name2(p, base, "_wrapped"), 2, xy, ins);
    if (!add) return -1;
    ins[0] = ge->outs[0];
    ins[1] = idx;
    ins[2] = add->outs[0];
    sel = mgopt__gng_op(p, g, "select", mgopt__pu_name2(p, base, "_guarded"), 3, cab, ins);
    if (!sel) return -1;
    guarded = sel->outs[0];
  }
  mgopt_op_set_operand(g, "indices", guarded);
  ctx->rewrites++;
  return 1;
}

static int mgopt__gng_block(mgopt_pass_ctx *ctx, mgopt_block *b, int depth) {
  mgopt_op *op, *next;
  if (depth > 256) return -2;
  for (op = b->first; op; op = next) {
    int32_t i;
    next = op->next;
    for (i = 0; i < op->nblocks; i++) {
      int r = mgopt__gng_block(ctx, op->blocks[i], depth + 1);
      if (r < 0) return r;
    }
    if (op->kind == MGOPT_OP_gather && mgopt__gng_one(ctx, op) < 0) return -1;
  }
  return 0;
}

static mgopt_status mgopt__gng_run(mgopt_pass_ctx *ctx) {
  int32_t i;
  for (i = 0; i < mgopt_program_function_count(ctx->program); i++) {
    int r = mgopt__gng_block(ctx, mgopt_program_function_at(ctx->program, i)->body, 0);
    if (r == -2) return mgopt_diag_set(ctx->diag, MGOPT_ERR_LIMIT, "guard_negative_gather_indices: blocks nested too deeply");
    if (r < 0) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "guard_negative_gather_indices: out of memory");
  }
  return MGOPT_OK;
}

MGOPT__DEFINE_PASS(cleanup, common, guard_negative_gather_indices,
                   "negative gather indices wrap explicitly: idx < 0 becomes idx + dim", mgopt__gng_run);
