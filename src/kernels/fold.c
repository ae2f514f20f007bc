/* src/kernels/fold.c — the kernel column of MGOPT_OP_TABLE and mgopt_fold_op, the evaluator of one op.

   mgopt_fold_op evaluates an op whose operands are all constant with MIL's
   semantics and returns new owned tensors. It never trusts the IR: ranks,
   axes, indices, element counts and the stored output types are checked, and
   anything doubtful is "not folded" (0) rather than guessed. The kernels are
   the seed of a reference evaluator: each takes the op and writes its outputs. */
#include "kernels.h"
#include "../passes_internal.h" /* mgopt__pu_attrs_equal */

/* The kernel column of MGOPT_OP_TABLE, by kind (NULL: the op has no kernel, as MGOPT_OP_OPAQUE). */
#define MGOPT__K_ROW(name, traits, slots, attrs, nouts_min, nouts_max, nblocks, infer, kernel) kernel,
static const mgopt__kernel_fn mgopt__k_kernels[] = {NULL, MGOPT_OP_TABLE(MGOPT__K_ROW)};
#undef MGOPT__K_ROW

MGOPT__PRIVATE mgopt__kernel_fn mgopt__k_kernel(int32_t kind) {
  return kind > MGOPT_OP_OPAQUE && kind < MGOPT_OP__COUNT ? mgopt__k_kernels[kind] : NULL;
}

MGOPT__PRIVATE int mgopt__k_multi_output(int32_t kind) {
  return kind == MGOPT_OP_split || kind == MGOPT_OP_topk || kind == MGOPT_OP_lstm || kind == MGOPT_OP_gru ||
         kind == MGOPT_OP_rnn || kind == MGOPT_OP_constexpr_lut_to_sparse ||
         kind == MGOPT_OP_constexpr_sparse_blockwise_shift_scale;
}

/* A constant tensor is usable when its header is self-consistent. */
static int mgopt__k_tensor_ok(const mgopt_tensor *t) {
  int64_t nb;
  if (t->rank < 0 || t->rank > MGOPT_MAX_RANK || (t->rank > 0 && !t->shape)) return 0;
  if (mgopt__k_numel(t->rank, t->shape) != t->numel) return 0;
  nb = mgopt_dtype_nbytes((mgopt_dtype)t->dtype, t->numel);
  return nb >= 0 && (uint64_t)nb == (uint64_t)t->nbytes && (t->data || t->nbytes == 0);
}

/* ---------------------------------------------------------------- the growth budget

   A fold replaces an op by constants: the file gains its outputs' bytes and
   loses the operand constants that die with it (their every reader is the
   op; a constant with another reader, or that a block returns, stays). The
   budget of a fold is what it frees plus the allowance; a fold over its
   budget is refused, so a Transpose of a table that a Gather also reads
   keeps the Transpose instead of storing the table twice.
   Folds may grow and shrink again together: the unpacking of a palettized
   weight (packed bytes, Cast to int32, Div, Mod, Reshape, then a Gather from
   a small table that const_elimination stores as packed indices again), a
   weight sliced into gates and concatenated in another order, the same
   transform of an outer weight in both branches of a conditional (folded
   to equal constants that const_deduplication merges). So a fold over its
   own budget is judged with its group: the ops around it that fold too
   (each operand a constant or made in the group), reached through its
   readers, the other operands of those readers, and the other readers of
   its operand constants over the allowance, or failing that the group
   without the ops that widen (a Cast to fp32 at the end of a chain of
   fp16 weights stays, and the chain folds before it). The fold is made
   when what leaves the group (by static types; values made by equivalent ops, same
   op, attributes and operands, once) takes no more bytes than the
   constants that die in the group plus the allowance. A gather from a
   rank-1 float table of at most 256 entries counts at the bytes of its
   constexpr_lut_to_dense form (indices of 1, 2, 4 or 8 bits and the
   table), as const_elimination stores it. A group that fits keeps its
   verdict (MGOPT__OP_FOLD_GROUP on its ops) while its ops fold one by one
   (the first folds turn what the others see into constants, so the group
   would no longer be recognized whole), until the worklist run or the
   pass ends (mgopt__fold_groups_end). The group is at most
   MGOPT__FOLD_GROUP_OPS ops found in MGOPT__FOLD_GROUP_USES use-list
   entries; a value of unknown size leaving it keeps the fold to its own
   budget. */

#define MGOPT__FOLD_GROUP_OPS 32
#define MGOPT__FOLD_GROUP_USES 512

typedef struct mgopt__fold_group {
  const mgopt_op *ops[MGOPT__FOLD_GROUP_OPS];
  int32_t n;
  int32_t uses; /* use-list entries looked at, bounded */
} mgopt__fold_group;

static int mgopt__fold_in(const mgopt__fold_group *g, const mgopt_op *op) {
  int32_t i;
  for (i = 0; op && i < g->n; i++)
    if (g->ops[i] == op) return 1;
  return 0;
}

/* The bytes of the group's operand constants whose every reader is in the
   group (each counted once: at its first use). */
static int64_t mgopt__fold_freed_in(mgopt__fold_group *g) {
  int64_t freed = 0;
  int32_t i, s, k;
  for (i = 0; i < g->n; i++) {
    const mgopt_op *op = g->ops[i];
    for (s = 0; s < op->nslots; s++)
      for (k = 0; k < op->slots[s].n; k++) {
        const mgopt_value *v = op->slots[s].uses[k].value;
        const mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
        const mgopt_use *u;
        int dies = 1;
        if (!t || !v->uses || v->uses->op != op || v->uses->slot != s || v->uses->index != k) continue;
        for (u = v->uses; u && dies; u = u->next)
          dies = ++g->uses <= MGOPT__FOLD_GROUP_USES * 2 && u->op && mgopt__fold_in(g, u->op);
        if (dies) freed += (int64_t)t->nbytes;
      }
  }
  return freed;
}

MGOPT__PRIVATE int64_t mgopt__fold_freed(const mgopt_op *op) {
  mgopt__fold_group g;
  g.ops[0] = op;
  g.n = 1;
  g.uses = 0;
  return mgopt__fold_freed_in(&g);
}

/* 1 when op may fold once its operands are constant: a kernel or an ONNX
   op the evaluator may take, no blocks, not a constexpr or dequantize
   (kept compressed). */
static int mgopt__fold_may(const mgopt_op *op) {
  if (op->kind == MGOPT_OP_const || op->nblocks || op->nouts < 1 || op->nouts > 16 ||
      op->kind == MGOPT_OP_dequantize || (mgopt_op_traits(op) & MGOPT_TRAIT_CONSTEXPR))
    return 0;
  if (op->kind == MGOPT_OP_OPAQUE) return op->type && strncmp(op->type, "onnx::", 6) == 0;
  return mgopt__k_kernel(op->kind) != NULL;
}

/* 1 when every operand of op is a constant or made in the group. */
static int mgopt__fold_fed(const mgopt__fold_group *g, const mgopt_op *op) {
  int32_t s, k;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      const mgopt_value *v = op->slots[s].uses[k].value;
      if (!v || !v->def || (v->def->kind != MGOPT_OP_const && !mgopt__fold_in(g, v->def))) return 0;
    }
  return 1;
}

static int64_t mgopt__fold_out_bytes(const mgopt_op *op, int32_t i);

/* 1 when op's outputs take more bytes than its operands (by static types):
   a widening cast, a broadcast, a tile. */
static int mgopt__fold_widens(const mgopt_op *op) {
  int64_t in = 0, out = 0, b;
  int32_t s, k, i;
  for (i = 0; i < op->nouts; i++) {
    if ((b = mgopt__fold_out_bytes(op, i)) < 0) return 0;
    out += b;
  }
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      const mgopt_value *v = op->slots[s].uses[k].value;
      int64_t n = v && v->type.kind == MGOPT_TYPE_TENSOR ? mgopt_type_numel(&v->type) : -1;
      if (n < 0 || (b = mgopt_dtype_nbytes((mgopt_dtype)v->type.dtype, n)) < 0) return 0;
      in += b;
    }
  return out > in;
}

/* Adds op to the group when it folds with it, first adding the producers
   of its operands that fold now; 1 when added. narrow: no op that widens
   joins. */
static int mgopt__fold_join(mgopt__fold_group *g, const mgopt_op *op, int narrow) {
  int32_t s, k;
  if (mgopt__fold_in(g, op) || !mgopt__fold_may(op) || (narrow && mgopt__fold_widens(op))) return 0;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      const mgopt_value *v = op->slots[s].uses[k].value;
      const mgopt_op *q = v ? v->def : NULL;
      if (!q || q->kind == MGOPT_OP_const || mgopt__fold_in(g, q)) continue;
      if (g->n == MGOPT__FOLD_GROUP_OPS || !mgopt__fold_may(q) || !mgopt__fold_fed(g, q) ||
          (narrow && mgopt__fold_widens(q)))
        return 0;
      g->ops[g->n++] = q;
    }
  if (g->n == MGOPT__FOLD_GROUP_OPS || !mgopt__fold_fed(g, op)) return 0;
  g->ops[g->n++] = op;
  return 1;
}

/* 1 when a and b hold the same bytes as the same dtype and shape. */
static int mgopt__fold_same_tensor(const mgopt_tensor *a, const mgopt_tensor *b) {
  int32_t d;
  if (a->dtype != b->dtype || a->rank != b->rank || a->nbytes != b->nbytes || (a->nbytes && (!a->data || !b->data)))
    return 0;
  for (d = 0; d < a->rank; d++)
    if (a->shape[d] != b->shape[d]) return 0;
  return a->data == b->data || a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0;
}

/* 1 when a and b compute the same: same op, attributes and output types,
   operands the same values, constants of the same bytes or the same
   outputs of equivalent ops. */
static int mgopt__fold_same(const mgopt__fold_group *g, const mgopt_op *a, const mgopt_op *b, int depth) {
  int32_t s, k;
  if (a == b) return 1;
  if (depth > 8 || a->kind != b->kind || strcmp(a->type, b->type) != 0 || a->nouts != b->nouts ||
      a->nslots != b->nslots || !mgopt__pu_attrs_equal(a, b))
    return 0;
  for (k = 0; k < a->nouts; k++)
    if (!mgopt_type_equal(&a->outs[k]->type, &b->outs[k]->type)) return 0;
  for (s = 0; s < a->nslots; s++) {
    if (a->slots[s].n != b->slots[s].n) return 0;
    for (k = 0; k < a->slots[s].n; k++) {
      const mgopt_value *va = a->slots[s].uses[k].value, *vb = b->slots[s].uses[k].value;
      const mgopt_tensor *ta = va ? mgopt_value_const(va) : NULL, *tb = vb ? mgopt_value_const(vb) : NULL;
      if (va == vb || (ta && tb && mgopt__fold_same_tensor(ta, tb))) continue;
      if (!va || !vb || !va->def || !vb->def || va->index != vb->index || !mgopt__fold_in(g, va->def) ||
          !mgopt__fold_in(g, vb->def) || !mgopt__fold_same(g, va->def, vb->def, depth + 1))
        return 0;
    }
  }
  return 1;
}

/* The bytes output i of op takes once folded, -1 when unknown. */
static int64_t mgopt__fold_out_bytes(const mgopt_op *op, int32_t i) {
  const mgopt_type *t = &op->outs[i]->type;
  int64_t n = mgopt_type_numel(t);
  if (op->kind == MGOPT_OP_gather && op->nouts == 1 && mgopt_op_get_int(op, "batch_dims", 0) == 0) {
    const mgopt_tensor *x = mgopt_value_const(mgopt_op_operand(op, "x"));
    const mgopt_value *ix = mgopt_op_operand(op, "indices");
    int64_t m = ix ? mgopt_type_numel(&ix->type) : -1;
    int bits;
    if (x && x->rank == 1 && mgopt_dtype_is_float((mgopt_dtype)x->dtype) && x->numel >= 2 && x->numel <= 256 &&
        m >= 0) {
      for (bits = 1; ((int64_t)1 << bits) < x->numel; bits *= 2) {
      }
      return (m * bits + 7) / 8 + mgopt_dtype_nbytes((mgopt_dtype)x->dtype, (int64_t)1 << bits);
    }
  }
  if (t->kind != MGOPT_TYPE_TENSOR || n < 0) return -1;
  return mgopt_dtype_nbytes((mgopt_dtype)t->dtype, n);
}

/* 1 when output i of g->ops[j] is read outside the group (or by a block). */
static int mgopt__fold_leaves(mgopt__fold_group *g, int32_t j, int32_t i) {
  const mgopt_use *u;
  for (u = g->ops[j]->outs[i]->uses; u; u = u->next)
    if (!u->op || !mgopt__fold_in(g, u->op)) return 1;
  return 0;
}

/* 1 when op's group (narrow: without ops that widen, whose inputs then
   leave the group) fits: what leaves it takes no more bytes than the
   constants that die in it plus allowance; g holds the group. */
static int mgopt__fold_group_fits(const mgopt_op *op, int64_t allowance, int narrow, mgopt__fold_group *g) {
  int64_t ends = 0;
  int32_t i, j, s, k, jj, changed;
  g->ops[0] = op;
  g->n = 1;
  g->uses = 0;
  /* grown to a fixpoint within its bounds */
  for (changed = 1; changed && g->uses < MGOPT__FOLD_GROUP_USES;) {
    changed = 0;
    for (j = 0; j < g->n; j++) {
      const mgopt_op *o = g->ops[j];
      const mgopt_use *u;
      for (i = 0; i < o->nouts; i++)
        for (u = o->outs[i]->uses; u && ++g->uses < MGOPT__FOLD_GROUP_USES; u = u->next)
          if (u->op) changed |= mgopt__fold_join(g, u->op, narrow);
      for (s = 0; s < o->nslots; s++)
        for (k = 0; k < o->slots[s].n; k++) {
          const mgopt_value *v = o->slots[s].uses[k].value;
          const mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
          if (!t || (int64_t)t->nbytes <= allowance) continue;
          for (u = v->uses; u && ++g->uses < MGOPT__FOLD_GROUP_USES; u = u->next)
            if (u->op) changed |= mgopt__fold_join(g, u->op, narrow);
        }
    }
  }
  if (g->n == 1) return 0;
  for (j = 0; j < g->n; j++)
    for (i = 0; i < g->ops[j]->nouts; i++) {
      int64_t b;
      if (!mgopt__fold_leaves(g, j, i)) continue;
      for (jj = 0; jj < j; jj++)
        if (mgopt__fold_same(g, g->ops[jj], g->ops[j], 0) && mgopt__fold_leaves(g, jj, i)) break;
      if (jj < j) continue; /* the same constant again: const_deduplication keeps one */
      b = mgopt__fold_out_bytes(g->ops[j], i);
      if (b < 0) return 0;
      ends += b;
    }
  return ends <= mgopt__fold_freed_in(g) + allowance;
}

MGOPT__PRIVATE int64_t mgopt__fold_budget(const mgopt_op *op, int64_t allowance) {
  mgopt__fold_group g;
  int64_t own, out = 0;
  int32_t i, j;
  if (allowance < 0 || (op->flags & MGOPT__OP_FOLD_GROUP)) return -1;
  own = mgopt__fold_freed(op) + allowance;
  for (i = 0; i < op->nouts && out >= 0; i++) {
    int64_t b = mgopt__fold_out_bytes(op, i);
    out = b < 0 ? -1 : out + b;
  }
  if (out >= 0 && out <= own) return own;
  if (!mgopt__fold_group_fits(op, allowance, 0, &g) && !mgopt__fold_group_fits(op, allowance, 1, &g)) return own;
  /* the group folds whole: its ops keep the verdict while the first folds
     change what the rest see (a constant where an equivalent op was) */
  for (j = 0; j < g.n; j++) ((mgopt_op *)(uintptr_t)g.ops[j])->flags |= MGOPT__OP_FOLD_GROUP;
  if (op->program) op->program->fold_groups = 1;
  return -1;
}

MGOPTDEF int mgopt_fold_op(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud) {
  const mgopt_fold_options *opts = (const mgopt_fold_options *)ud;
  mgopt__kernel_fn fn;
  mgopt__kctx k;
  int32_t s, i;
  int64_t allowance, out_bytes = 0;
  int r;
  if (!p || !op || !out || (op->flags & MGOPT_OP_ERASED) || op->nblocks != 0 || op->nouts < 1)
    return MGOPT__K_NO;
  fn = mgopt__k_kernel(op->kind);
  if (!fn || (op->nouts != 1 && !mgopt__k_multi_output(op->kind))) return MGOPT__K_NO;
  for (s = 0; s < op->nslots; s++)
    for (i = 0; i < op->slots[s].n; i++) {
      mgopt_tensor *t = mgopt_value_const(op->slots[s].uses[i].value);
      if (!t || !mgopt__k_tensor_ok(t)) return MGOPT__K_NO;
    }
  memset(&k, 0, sizeof k);
  k.p = p;
  k.op = op;
  k.out = out;
  k.max_elements = opts ? opts->max_elements : 0;
  if (k.max_elements == 0) k.max_elements = MGOPT_FOLD_MAX_ELEMENTS;
  else if (k.max_elements < 0) k.max_elements = 0; /* kernels: 0 = no limit */
  allowance = opts ? opts->max_growth_bytes : 0;
  if (allowance == 0) allowance = MGOPT_FOLD_MAX_GROWTH_BYTES;
  k.budget = (mgopt_op_traits(op) & MGOPT_TRAIT_CONSTEXPR) ? -1 : mgopt__fold_budget(op, allowance);
  for (i = 0; i < op->nouts; i++) out[i] = NULL;
  r = fn(&k);
  for (i = 0; i < k.nscratch; i++) mgopt__heap_free(&p->alloc, k.scratch[i], k.scratch_size[i]);
  for (i = 0; i < op->nouts && r == MGOPT__K_OK; i++) {
    if (!out[i]) r = MGOPT__K_NO; /* every output is computed, or the op is not folded */
    else out_bytes += (int64_t)out[i]->nbytes;
  }
  if (r == MGOPT__K_OK && k.budget >= 0 && out_bytes > k.budget) r = MGOPT__K_NO; /* together over the budget */
  if (r != MGOPT__K_OK)
    for (i = 0; i < op->nouts; i++) out[i] = NULL;
  return r;
}
