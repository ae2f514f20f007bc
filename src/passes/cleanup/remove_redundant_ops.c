/* src/passes/cleanup/remove_redundant_ops.c — common::remove_redundant_ops: keep one of several identical ops.

   Spec: mil_graph_passes.txt, "If there are multiple ops with identical inputs"; reference §3.7.

   Before:
     main(%x: (2, fp32)) {
       %a: (fp32)* = const(val=4.5)
       %b: (fp32)* = const(val=4.5)
       %m: (2, fp32) = mul(x=%x, y=%a)
       %n: (2, fp32) = mul(x=%x, y=%b)
       %s: (2, fp32) = add(x=%m, y=%n)
     } -> (%s)
   After:
     main(%x: (2, fp32)) {
       %a: (fp32)* = const(val=4.5)
       %b: (fp32)* = const(val=4.5)
       %m: (2, fp32) = mul(x=%x, y=%a)
       %s: (2, fp32) = add(x=%m, y=%m)
     } -> (%s)

   Two ops are identical when they have the same type, the same operand slot
   names, the same output count, equal attributes, and operand by operand
   either the same value or two constants of equal dtype, shape and content
   (constants of 100 or more elements only when they are the same value:
   deduplicating big constants is const_deduplication's job). They must
   share a non-constant operand (a block argument or any output of a
   non-const op, multi-output producers included: MIL only takes output 0,
   which misses e.g. two Mul(x_scale, w_scale) of one DynamicQuantizeLinear's
   scale output, ONNX Runtime merges those), sit in the same block, and the
   later one is removed, each of its outputs replaced by the kept op's.
   Fires on multi-output ops too (two equal splits). Must not fire: on state
   ops (a write may come between two reads) and ops with side effects, when
   an output of the removed op is a block output, or an output of the kept op
   that would gain readers is one (the kept one is not given more consumers,
   which keeps fp16 models bit-identical under ONNX Runtime), on ops with
   nested blocks, or that draw random numbers (Random*, Bernoulli,
   Multinomial, Dropout), or across blocks. Cost: one sweep in program order
   with a hash table keyed on (block, type, operands, attributes): O(ops); a
   removal lets later users match in the same sweep. */
#include "../../passes_internal.h"

#define MGOPT__RRO_BIG 100

static int mgopt__rro_eligible(const mgopt_op *op) {
  int32_t s, k;
  int parent = 0;
  if (op->nouts < 1 || op->nblocks || op->kind == MGOPT_OP_const || (mgopt_op_traits(op) & MGOPT_TRAIT_STATE) ||
      mgopt__op_has_effects(op))
    return 0;
  if (op->kind == MGOPT_OP_OPAQUE && (strstr(op->type, "andom") || strstr(op->type, "Bernoulli") ||
                                      strstr(op->type, "Multinomial") || strstr(op->type, "Dropout")))
    return 0;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      const mgopt_value *v = op->slots[s].uses[k].value;
      if (!v->def || v->def->kind != MGOPT_OP_const) parent = 1;
    }
  return parent;
}

static uint64_t mgopt__rro_hash_value(const mgopt_value *v) {
  mgopt_tensor *t = mgopt_value_const(v);
  if (t && t->numel < MGOPT__RRO_BIG) return mgopt_tensor_hash(t);
  return (uint64_t)v->id * 0x100000001b3ull;
}

static uint64_t mgopt__rro_hash(const mgopt_op *op) {
  uint64_t h = mgopt__pu_mix((uint64_t)(uintptr_t)op->parent, (uint64_t)(uintptr_t)op->type);
  int32_t s, k;
  for (s = 0; s < op->nslots; s++) {
    h = mgopt__pu_mix(h, (uint64_t)(uintptr_t)op->slots[s].name);
    for (k = 0; k < op->slots[s].n; k++) h = mgopt__pu_mix(h, mgopt__rro_hash_value(op->slots[s].uses[k].value));
  }
  /* attributes in any order: combine commutatively */
  return mgopt__pu_mix(h, mgopt__pu_attrs_hash(op));
}

static int mgopt__rro_value_eq(const mgopt_value *a, const mgopt_value *b) {
  const mgopt_tensor *x, *y;
  if (a == b) return 1;
  x = mgopt_value_const(a);
  y = mgopt_value_const(b);
  if (!x || !y || x->numel >= MGOPT__RRO_BIG || y->numel >= MGOPT__RRO_BIG) return 0;
  return mgopt_tensor_equal(x, y);
}

static int mgopt__rro_equal(const mgopt_op *a, const mgopt_op *b) {
  return a->parent == b->parent && a->nouts == b->nouts && mgopt__pu_ops_equal(a, b, mgopt__rro_value_eq);
}

/* op's outputs may all be replaced by first's: no output of op is a block
   output (its name would go), no output of first that would gain readers is
   one (feeding an output of the model to more consumers changes how
   runtimes schedule fp16 casts around it: ONNX Runtime's CPU provider
   rounds differently then), and op's readers accept first's declared types
   (opaque ops keep what they came with; a dim may be symbolic in one). */
static int mgopt__rro_can_merge(mgopt_program *p, const mgopt_op *op, const mgopt_op *first) {
  int32_t i;
  if (op->nouts != first->nouts) return 0;
  for (i = 0; i < op->nouts; i++) {
    if (mgopt__pu_is_block_output(op->outs[i])) return 0;
    if (!op->outs[i]->nuses) continue;
    if (mgopt__pu_is_block_output(first->outs[i]) || !mgopt__pu_replace_fits(p, op->outs[i], first->outs[i]))
      return 0;
  }
  return 1;
}

typedef struct mgopt__rro {
  mgopt_program *p;
  mgopt__map kept; /* the ops kept so far, by hash (distinct ops may share one) */
  int64_t removed;
  int oom;
} mgopt__rro;

static void mgopt__rro_block(mgopt__rro *r, mgopt_block *b, int depth) {
  mgopt_op *op, *next;
  for (op = b->first; op && !r->oom; op = next) {
    int32_t i;
    uint64_t h;
    mgopt__map_slot *sl;
    mgopt_op *first = NULL;
    next = op->next;
    if (depth < 256)
      for (i = 0; i < op->nblocks; i++) mgopt__rro_block(r, op->blocks[i], depth + 1);
    if (!mgopt__rro_eligible(op)) continue;
    h = mgopt__map_hash_key(mgopt__rro_hash(op));
    for (sl = mgopt__map_find(&r->kept, h); sl && !first; sl = mgopt__map_next(&r->kept, sl))
      if (mgopt__rro_equal((mgopt_op *)sl->v.p, op)) first = (mgopt_op *)sl->v.p;
    if (first) {
      if (!mgopt__rro_can_merge(r->p, op, first)) continue;
      for (i = 0; i < op->nouts; i++) mgopt_value_replace_all_uses(op->outs[i], first->outs[i]);
      mgopt_op_erase(op);
      r->removed++;
      continue;
    }
    if (!(sl = mgopt__map_add(&r->kept, h))) {
      r->oom = 1;
      return;
    }
    sl->v.p = op;
  }
}

static mgopt_status mgopt__rro_run(mgopt_pass_ctx *ctx) {
  mgopt__rro r;
  int32_t i;
  memset(&r, 0, sizeof r);
  r.p = ctx->program;
  mgopt__map_init_flags(&r.kept, &r.p->alloc, MGOPT__MAP_HASHED);
  for (i = 0; i < mgopt_program_function_count(ctx->program) && !r.oom; i++)
    mgopt__rro_block(&r, mgopt_program_function_at(ctx->program, i)->body, 0);
  mgopt__map_free(&r.kept);
  ctx->rewrites += r.removed;
  if (r.oom) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "remove_redundant_ops: out of memory");
  return MGOPT_OK;
}

MGOPT__DEFINE_PASS(cleanup, common, remove_redundant_ops, "keep one of several ops with identical inputs",
                   mgopt__rro_run);
