/* src/passes/onnx/name_fix.c — onnx::name_fix: every value and op gets a name, unique in its scope.

   Spec: onnx_ir_optimizer_passes.txt, "name_fix" (model scope: the ONNX
   Script name-fix pass). In every function, in this order: the body's
   inputs, its outputs, the constants that stand for initializers (consts not
   read from a Constant node), then each op in program order: its name, its
   operands, its outputs, then its nested blocks the same way (arguments,
   outputs, ops). A value without a name is named "v", an op without one
   "node"; a name already taken becomes "<name>_<k>" with the first k (from a
   counter per base name, separate for values and ops) that is free. Value
   names are unique within a block and the blocks around it; op names within
   a block.

   Before:
     main(%x: (2, fp32)) {
       %a: (2, fp32) = relu(x=%x, name="n")
       %b: (2, fp32) = exp(x=%a, name="n")
       %c: (2, fp32) = onnx::Celu(in0=%b, name="n")
     } -> (%c)
   After:
     main(%x: (2, fp32)) {
       %a: (2, fp32) = relu(x=%x, name="n")
       %b: (2, fp32) = exp(x=%a, name="n_1")
       %c: (2, fp32) = onnx::Celu(in0=%b, name="n_2")
     } -> (%c)

   Fires on: ops and values without a name or with a name taken before them.
   Must not fire: on the inputs and outputs of a function (a model's
   interface keeps its names: they are taken first, so only a clash between
   two of them could rename one, and it is left as it is); on the op names
   of initializer constants (no ONNX node); on absent optional outputs.
   Cost: one walk, hash maps of names (a nested block's names are undone on
   leaving it): O(ops + values). */
#include "../../passes_internal.h"

typedef struct mgopt__nf_undo {
  mgopt__map *m;
  uint64_t key;
  int64_t prev;
} mgopt__nf_undo;

typedef struct mgopt__nf {
  mgopt_program *p;
  mgopt__map vals;      /* value name -> 1 + level that took it (0: free) */
  mgopt__map ops;       /* op name -> 1 + level that took it (taken only at that level) */
  mgopt__map vcount;    /* base name -> last suffix tried, for values */
  mgopt__map ocount;    /* the same for ops */
  mgopt__map seen;      /* values already named */
  mgopt__nf_undo *undo;
  int64_t nundo, cap;
  int32_t level;
  mgopt_buf buf;
  int oom;
  int64_t renamed;
} mgopt__nf;

static int mgopt__nf_taken(const mgopt__nf *s, int is_op, const char *name) {
  const mgopt__map_slot *sl = mgopt__map_find(is_op ? &s->ops : &s->vals, mgopt__map_ptr_key(name));
  if (!sl) return 0;
  return is_op ? sl->v.i == s->level + 1 : sl->v.i > 0;
}

static void mgopt__nf_take(mgopt__nf *s, int is_op, const char *name) {
  mgopt__map *m = is_op ? &s->ops : &s->vals;
  mgopt__map_slot *sl = mgopt__map_get(m, mgopt__map_ptr_key(name), NULL);
  if (!sl || !mgopt__grow(&s->p->alloc, (void **)&s->undo, &s->cap, s->nundo + 1, sizeof *s->undo)) {
    s->oom = 1;
    return;
  }
  s->undo[s->nundo].m = m;
  s->undo[s->nundo].key = mgopt__map_ptr_key(name);
  s->undo[s->nundo++].prev = sl->v.i;
  sl->v.i = s->level + 1;
}

/* The first free name of base, base_1, base_2, ... (counting on from the last
   suffix tried for base), taken. NULL on OOM. */
static const char *mgopt__nf_fresh(mgopt__nf *s, int is_op, const char *base) {
  const char *name = base;
  mgopt__map_slot *c;
  while (name && mgopt__nf_taken(s, is_op, name)) {
    c = mgopt__map_get(is_op ? &s->ocount : &s->vcount, mgopt__map_ptr_key(base), NULL);
    if (!c) break;
    c->v.i++;
    s->buf.len = 0;
    mgopt__buf_printf(&s->buf, "%s_%lld", base, (long long)c->v.i);
    name = s->buf.oom ? NULL : mgopt_program_intern(s->p, s->buf.data, s->buf.len);
  }
  if (!name || (name == base && mgopt__nf_taken(s, is_op, name))) {
    s->oom = 1;
    return NULL;
  }
  mgopt__nf_take(s, is_op, name);
  return name;
}

static void mgopt__nf_value(mgopt__nf *s, mgopt_value *v, int keep) {
  int added = 0;
  mgopt__map_slot *sl;
  const char *name;
  if (!v || (v->flags & MGOPT_VALUE_ABSENT)) return;
  sl = mgopt__map_get(&s->seen, mgopt__map_ptr_key(v), &added);
  if (!sl) {
    s->oom = 1;
    return;
  }
  if (!added) return;
  if (v->name && (keep || !mgopt__nf_taken(s, 0, v->name))) {
    mgopt__nf_take(s, 0, v->name);
    return;
  }
  name = mgopt__nf_fresh(s, 0, v->name ? v->name : mgopt_program_intern_cstr(s->p, "v"));
  if (name && mgopt_value_set_name(v, name) == MGOPT_OK) s->renamed++;
}

static void mgopt__nf_block(mgopt__nf *s, mgopt_block *b, int depth);

static void mgopt__nf_op(mgopt__nf *s, mgopt_op *op, int depth) {
  int32_t i, k;
  int init = !op->parent->parent_op && op->kind == MGOPT_OP_const && !(op->flags & MGOPT_OP_ONNX_CONSTANT_NODE);
  if (!init) {
    if (op->name && !mgopt__nf_taken(s, 1, op->name)) {
      mgopt__nf_take(s, 1, op->name);
    } else {
      const char *name = mgopt__nf_fresh(s, 1, op->name ? op->name : mgopt_program_intern_cstr(s->p, "node"));
      if (name && mgopt_op_set_name(op, name) == MGOPT_OK) s->renamed++;
    }
  }
  for (i = 0; i < op->nslots; i++)
    for (k = 0; k < op->slots[i].n; k++) mgopt__nf_value(s, op->slots[i].uses[k].value, 0);
  for (i = 0; i < op->nouts; i++) mgopt__nf_value(s, op->outs[i], 0);
  for (i = 0; i < op->nblocks && !s->oom; i++) mgopt__nf_block(s, op->blocks[i], depth + 1);
}

/* A block in a new scope: value names seen around it stay taken, op names
   start afresh; what it takes is given back on leaving. */
static void mgopt__nf_block(mgopt__nf *s, mgopt_block *b, int depth) {
  int64_t mark = s->nundo;
  int fbody = b->parent_op == NULL;
  mgopt_op *op;
  int32_t i;
  if (depth > 256) { /* deeper than any reader builds: leave the names alone */
    return;
  }
  s->level++;
  for (i = 0; i < b->nargs; i++) mgopt__nf_value(s, b->args[i], fbody);
  for (i = 0; i < b->nouts; i++) mgopt__nf_value(s, b->outs[i]->value, fbody);
  if (fbody)
    for (op = b->first; op; op = op->next)
      if (op->kind == MGOPT_OP_const && !(op->flags & MGOPT_OP_ONNX_CONSTANT_NODE)) mgopt__nf_value(s, op->outs[0], 0);
  for (op = b->first; op && !s->oom; op = op->next) mgopt__nf_op(s, op, depth);
  while (s->nundo > mark) {
    const mgopt__nf_undo *u = &s->undo[--s->nundo];
    mgopt__map_slot *sl = mgopt__map_find(u->m, u->key);
    if (sl) sl->v.i = u->prev;
  }
  s->level--;
}

static mgopt_status mgopt__nf_run(mgopt_pass_ctx *ctx) {
  mgopt__nf s;
  int32_t f;
  memset(&s, 0, sizeof s);
  s.p = ctx->program;
  s.buf.alloc = &s.p->alloc;
  mgopt__map_init(&s.vals, &s.p->alloc);
  mgopt__map_init(&s.ops, &s.p->alloc);
  mgopt__map_init(&s.vcount, &s.p->alloc);
  mgopt__map_init(&s.ocount, &s.p->alloc);
  mgopt__map_init(&s.seen, &s.p->alloc);
  for (f = 0; f < mgopt_program_function_count(s.p) && !s.oom; f++) {
    /* names are unique per function; the counters start afresh too */
    mgopt__map_free(&s.vcount);
    mgopt__map_free(&s.ocount);
    mgopt__nf_block(&s, mgopt_program_function_at(s.p, f)->body, 0);
  }
  ctx->rewrites += s.renamed;
  mgopt__map_free(&s.vals);
  mgopt__map_free(&s.ops);
  mgopt__map_free(&s.vcount);
  mgopt__map_free(&s.ocount);
  mgopt__map_free(&s.seen);
  if (s.undo) mgopt__heap_free(&s.p->alloc, s.undo, sizeof *s.undo * (size_t)s.cap);
  mgopt_buf_free(&s.buf);
  return s.oom ? mgopt_diag_set(ctx->diag, mgopt__oom(s.p), "name_fix: out of memory") : MGOPT_OK;
}

MGOPT__DEFINE_PASS(onnx, onnx, name_fix, "give every value and op a name unique in its scope", mgopt__nf_run);
