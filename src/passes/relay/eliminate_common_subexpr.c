/* src/passes/relay/eliminate_common_subexpr.c — relay::eliminate_common_subexpr: global hash-consing of equal ops, across nested blocks where the first dominates.

   Spec: tvm_relay_passes.md, "EliminateCommonSubexpr": an op of the same
   kind, with equal attributes and the same operands in the same order as an
   earlier one, is the earlier one; scalar constants compare by value.

   Before:
     main(%x: (2, fp32)) {
       %c: (fp32)* = const(val=2)
       %d: (fp32)* = const(val=2)
       %a: (2, fp32) = mul(x=%x, y=%c)
       %b: (2, fp32) = mul(x=%x, y=%d)
       %s: (2, fp32) = add(x=%a, y=%b)
     } -> (%s)
   After:
     main(%x: (2, fp32)) {
       %c: (fp32)* = const(val=2)
       %a: (2, fp32) = mul(x=%x, y=%c)
       %s: (2, fp32) = add(x=%a, y=%a)
     } -> (%s)

   Two ops are equal when they have the same op type (opaque ops: the same
   type name), the same output count, the same operand slots (names, list
   shape), equal attributes, and operand by operand the same value or two
   constants of equal dtype, shape and content of at most
   MGOPT__CSE_SMALL (64) elements. The later op's outputs are replaced by
   the earlier op's, and the later op goes with the constants that fed only
   it. One sweep in program order, so a chain of equal ops collapses at
   once (the operands of a later op already read the kept values).

   Scopes: an op may be replaced by an equal op of its own block or of an
   enclosing block that comes before it (that value dominates it); never by
   an op of a nested block (its value is not visible outside), of a sibling
   block, or of another function. The table keeps every op seen; an entry
   whose block was left is dead for good (the sweep never comes back to
   it) and its slot is taken by the next op with that hash.

   Block outputs: replaced like any use. A function output keeps its name:
   the kept value takes it, or, when the kept value is a block argument or
   already a function output, an identity named like it reads the kept value.

   Fires on: every pure op, single- or multi-output, in any block.
   Must not fire: consts themselves (const_deduplication merges them); ops
   with nested blocks (their bodies are not compared; the ops inside them
   are candidates); state reads and writes; ops with side effects (an op
   whose registry row is not pure, an opaque op marked has_effects); ops
   that draw random numbers (opaque types naming Random, Bernoulli,
   Multinomial); constants of more than 64 elements that are not the same
   value; declared output types the kept value does not fit.

   Versus common::remove_redundant_ops (the MIL rule): that pass needs a
   non-const "parent" operand, takes single-output ops only, stays inside
   one block, and leaves block outputs alone (on either side); this one
   takes multi-output ops and block outputs, works across nested blocks
   where the value dominates, and compares constants up to 64 elements (the
   other up to 99) so that ops over small equal constants merge too.

   Cost: one sweep, one hash-table probe per op, O(ops + operands), plus
   the content hash of constants of at most 64 elements. */
#include "../../passes_internal.h"

#define MGOPT__CSE_SMALL 64
#define MGOPT__CSE_MAX_DEPTH 256

typedef struct mgopt__cse {
  mgopt_program *p;
  mgopt__map kept; /* hash -> op (several ops may share a hash) */
  mgopt__map open; /* block -> 1 while the sweep is inside it, 0 after */
  int64_t removed;
  int oom;
} mgopt__cse;

static int mgopt__cse_random(const mgopt_op *op) {
  return op->kind == MGOPT_OP_OPAQUE && op->type &&
         (strstr(op->type, "andom") || strstr(op->type, "Bernoulli") || strstr(op->type, "Multinomial"));
}

static int mgopt__cse_eligible(const mgopt_op *op) {
  if (op->nouts < 1 || op->nblocks || op->kind == MGOPT_OP_const) return 0;
  if ((mgopt_op_traits(op) & MGOPT_TRAIT_STATE) || mgopt__op_has_effects(op) || mgopt__cse_random(op)) return 0;
  return 1;
}

static mgopt_tensor *mgopt__cse_small(const mgopt_value *v) {
  mgopt_tensor *t = mgopt_value_const(v);
  return t && t->numel <= MGOPT__CSE_SMALL ? t : NULL;
}

static uint64_t mgopt__cse_hash(const mgopt_op *op) {
  uint64_t h = mgopt__pu_mix((uint64_t)(uintptr_t)op->type, (uint64_t)op->nouts);
  int32_t s, k;
  for (s = 0; s < op->nslots; s++) {
    h = mgopt__pu_mix(h, (uint64_t)(uintptr_t)op->slots[s].name);
    for (k = 0; k < op->slots[s].n; k++) {
      const mgopt_value *v = op->slots[s].uses[k].value;
      mgopt_tensor *t = v ? mgopt__cse_small(v) : NULL;
      h = mgopt__pu_mix(h, t ? mgopt_tensor_hash(t) : v ? (uint64_t)v->id * 0x100000001b3ull : 7u);
    }
  }
  return mgopt__pu_mix(h, mgopt__pu_attrs_hash(op)); /* attributes in any order */
}

static int mgopt__cse_value_eq(const mgopt_value *a, const mgopt_value *b) {
  const mgopt_tensor *x, *y;
  if (a == b) return 1;
  if (!a || !b) return 0;
  x = mgopt__cse_small(a);
  y = mgopt__cse_small(b);
  return x && y && mgopt_tensor_equal(x, y);
}

static int mgopt__cse_equal(const mgopt_op *a, const mgopt_op *b) {
  return a->nouts == b->nouts && mgopt__pu_ops_equal(a, b, mgopt__cse_value_eq);
}

/* 1 while the sweep is inside block b (b encloses the op being visited) */
static int mgopt__cse_is_open(const mgopt__cse *c, const mgopt_block *b) {
  const mgopt__map_slot *sl = mgopt__map_find(&c->open, mgopt__map_ptr_key(b));
  return sl && sl->v.i;
}

static int mgopt__cse_set_open(mgopt__cse *c, const mgopt_block *b, int open) {
  mgopt__map_slot *sl = mgopt__map_get(&c->open, mgopt__map_ptr_key(b), NULL);
  if (!sl) return 0;
  sl->v.i = open;
  return 1;
}

/* every output of op fits where first's would go */
static int mgopt__cse_fits(mgopt_program *p, const mgopt_op *op, const mgopt_op *first) {
  int32_t i;
  for (i = 0; i < op->nouts; i++)
    if (op->outs[i]->nuses && !mgopt__pu_replace_fits(p, op->outs[i], first->outs[i])) return 0;
  return 1;
}

/* op's outputs become first's, then op and the consts that fed only it go */
static void mgopt__cse_replace(mgopt__cse *c, mgopt_op *op, mgopt_op *first) {
  mgopt_op *feeds[8];
  int32_t nfeeds = 0, s, k, i;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      mgopt_value *v = op->slots[s].uses[k].value;
      if (v && v->def && v->def->kind == MGOPT_OP_const && nfeeds < 8) feeds[nfeeds++] = v->def;
    }
  for (i = 0; i < op->nouts; i++) {
    mgopt_value *from = op->outs[i], *to = first->outs[i];
    if (!from->nuses) continue;
    if (mgopt__pu_is_func_output(from) && (!to->def || mgopt__pu_is_func_output(to))) {
      static const char *const slot[1] = {"x"};
      mgopt_op *id = mgopt_build_op(c->p, op->parent, op, "identity", from->name, 1, slot, &to, 1);
      if (!id) {
        c->oom = 1;
        return;
      }
      (void)mgopt_op_infer(c->p, id, NULL);
      mgopt__pu_fill_type(c->p, id, 0, &from->type);
      to = id->outs[0];
    }
    {
      const char *old = to->name; /* a function output's name moves onto to: its op follows */
      mgopt_value_replace_all_uses(from, to);
      if (to->def && to->name != old && to->def->name == old && to->def->nouts == 1) to->def->name = to->name;
    }
  }
  mgopt_op_erase(op);
  for (i = 0; i < nfeeds; i++) {
    mgopt_op *f = feeds[i];
    if (!(f->flags & MGOPT_OP_ERASED) && !f->outs[0]->nuses) mgopt_op_erase(f);
  }
  c->removed++;
}

static void mgopt__cse_block(mgopt__cse *c, mgopt_block *b, int depth) {
  mgopt_op *op, *next;
  if (!mgopt__cse_set_open(c, b, 1)) {
    c->oom = 1;
    return;
  }
  for (op = b->first; op && !c->oom; op = next) {
    int32_t i;
    uint64_t h;
    mgopt__map_slot *sl, *stale = NULL;
    mgopt_op *first = NULL;
    next = op->next;
    if (depth < MGOPT__CSE_MAX_DEPTH)
      for (i = 0; i < op->nblocks && !c->oom; i++) mgopt__cse_block(c, op->blocks[i], depth + 1);
    if (c->oom || !mgopt__cse_eligible(op)) continue;
    h = mgopt__map_hash_key(mgopt__cse_hash(op));
    for (sl = mgopt__map_find(&c->kept, h); sl; sl = mgopt__map_next(&c->kept, sl)) {
      mgopt_op *o = (mgopt_op *)sl->v.p;
      if (!mgopt__cse_is_open(c, o->parent)) {
        if (!stale) stale = sl; /* left behind: never visible again */
      } else if (mgopt__cse_equal(o, op)) {
        first = o;
        break;
      }
    }
    if (first && mgopt__cse_fits(c->p, op, first)) {
      mgopt__cse_replace(c, op, first);
      continue;
    }
    if (first) continue; /* the kept one stays the representative */
    if (!stale && !(stale = mgopt__map_add(&c->kept, h))) {
      c->oom = 1;
      return;
    }
    stale->v.p = op;
  }
  if (!mgopt__cse_set_open(c, b, 0)) c->oom = 1;
}

static mgopt_status mgopt__cse_run(mgopt_pass_ctx *ctx) {
  mgopt__cse c;
  int32_t i;
  memset(&c, 0, sizeof c);
  c.p = ctx->program;
  mgopt__map_init_flags(&c.kept, &c.p->alloc, MGOPT__MAP_HASHED);
  mgopt__map_init(&c.open, &c.p->alloc);
  for (i = 0; i < mgopt_program_function_count(ctx->program) && !c.oom; i++)
    mgopt__cse_block(&c, mgopt_program_function_at(ctx->program, i)->body, 0);
  mgopt__map_free(&c.kept);
  mgopt__map_free(&c.open);
  ctx->rewrites += c.removed;
  if (c.oom) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "eliminate_common_subexpr: out of memory");
  return MGOPT_OK;
}

MGOPT__DEFINE_PASS(relay, relay, eliminate_common_subexpr,
                   "global hash-consing: an op equal to an earlier one that dominates it reads that one's outputs",
                   mgopt__cse_run);
