/* src/passes/cleanup/topological_reorder.c — common::topological_reorder: move casts, then transposes, next to their first use.

   Spec: mil_graph_passes.txt, "Topologically re-orders the list of
   operations ... places each operation closer to its first use, or at the
   end if it's not consumed"; reference §3.10.

   Before:
     main(%x: (2, 4, fp32)) {
       %c: (2, 4, fp16) = cast(x=%x, dtype="fp16")
       %r: (2, 4, fp32) = relu(x=%x)
       %s: (2, 4, fp16) = square(x=%c)
       %t: (4, 2, fp32) = transpose(x=%r, perm=[1, 0])
     } -> (%s, %t)
   (the cast moves down to its user; the transpose, used by nothing in the
   block, is already at the end)
   After:
     main(%x: (2, 4, fp32)) {
       %r: (2, 4, fp32) = relu(x=%x)
       %c: (2, 4, fp16) = cast(x=%x, dtype="fp16")
       %s: (2, 4, fp16) = square(x=%c)
       %t: (4, 2, fp32) = transpose(x=%r, perm=[1, 0])
     } -> (%s, %t)

   Two stages per block, first every cast, then every transpose. Within a
   stage the moved ops are taken from last to first; each goes immediately
   before its earliest user in the current order (a use inside a nested
   block counts as a use by the op owning that block), or to the end of the
   block when nothing in the block uses it (block outputs are not ops). This
   is the order the spec's example shows: two unused casts end up at the
   end, the later one first. Ops keep their names; other ops keep their
   relative order. Nested blocks are reordered too.
   Cost per block and stage: O(ops + uses); nothing for a function without
   casts or transposes (the op index counts them). Finding the earliest of
   several moved users compares positions through the chain of moved ops
   placed before one another (usually of length 0 or 1), no rescans of the
   block. */
#include "../../passes_internal.h"

typedef struct mgopt__tr {
  mgopt_op **ops;
  int32_t *parent;  /* moved op placed right before this moved op; -1 = before its anchor */
  int32_t *depth;
  int32_t *anchor;  /* index of the unmoved op it precedes; n = block end */
  int32_t n, cap;
} mgopt__tr;

#define MGOPT__TR_IDX(op) ((int32_t)(uintptr_t)(op)->scratch - 1)

/* 1 if moved op u comes before moved op v (same anchor) in the current order. */
static int mgopt__tr_before(const mgopt__tr *t, int32_t u, int32_t v) {
  int guard = 0;
  while (t->depth[u] > t->depth[v]) {
    u = t->parent[u];
    if (u == v) return 1;
  }
  while (t->depth[v] > t->depth[u]) {
    v = t->parent[v];
    if (u == v) return 0;
  }
  while (t->parent[u] != t->parent[v] && ++guard < 1 << 30) {
    u = t->parent[u];
    v = t->parent[v];
  }
  /* siblings: the one placed first (the later one in the old order) comes first */
  return u > v;
}

static void mgopt__tr_stage(mgopt__tr *t, mgopt_block *b, int32_t kind, int64_t *moved) {
  mgopt_op *op;
  int32_t i, n = 0;
  for (op = b->first; op; op = op->next) {
    op->scratch = (void *)(uintptr_t)(n + 1);
    t->ops[n++] = op;
  }
  t->n = n;
  for (i = n - 1; i >= 0; i--) {
    int32_t k, best_anchor = n, best_node = -1;
    mgopt_op *dest;
    op = t->ops[i];
    t->parent[i] = -1;
    t->depth[i] = 0;
    t->anchor[i] = i;
    if (op->kind != kind) continue;
    for (k = 0; k < op->nouts; k++) {
      mgopt_use *u;
      for (u = op->outs[k]->uses; u; u = u->next) {
        mgopt_op *c = u->op ? mgopt__pu_ancestor_in(u->op, b)
                            : (u->block != b && u->block->parent_op ? mgopt__pu_ancestor_in(u->block->parent_op, b) : NULL);
        int32_t ci, ca, cn;
        if (!c || c == op) continue;
        ci = MGOPT__TR_IDX(c);
        ca = t->anchor[ci];
        cn = t->ops[ci]->kind == kind ? ci : -1;
        if (ca < best_anchor || (ca == best_anchor && cn >= 0 &&
                                 (best_node < 0 || mgopt__tr_before(t, cn, best_node)))) {
          best_anchor = ca;
          best_node = cn;
        }
      }
    }
    t->anchor[i] = best_anchor;
    if (best_node >= 0) {
      t->parent[i] = best_node;
      t->depth[i] = t->depth[best_node] + 1;
      dest = t->ops[best_node];
    } else {
      dest = best_anchor < n ? t->ops[best_anchor] : NULL;
    }
    if (dest) {
      if (op->next != dest) {
        mgopt_op_move_before(op, dest);
        (*moved)++;
      }
    } else if (op != b->last) {
      mgopt_op_move_to_end(op, b);
      (*moved)++;
    }
  }
  for (op = b->first; op; op = op->next) op->scratch = NULL;
}

static mgopt_status mgopt__tr_block(mgopt_pass_ctx *ctx, mgopt__tr *t, mgopt_block *b, int depth) {
  mgopt_program *p = ctx->program;
  mgopt_op *op;
  int32_t i;
  if (depth > 256) return mgopt_diag_set(ctx->diag, MGOPT_ERR_LIMIT, "blocks nested too deeply");
  for (op = b->first; op; op = op->next)
    for (i = 0; i < op->nblocks; i++) {
      mgopt_status s = mgopt__tr_block(ctx, t, op->blocks[i], depth + 1);
      if (s) return s;
    }
  if (b->nops > t->cap) {
    size_t per = sizeof(mgopt_op *) + 3 * sizeof(int32_t);
    void *m = mgopt__heap_realloc(&p->alloc, t->ops, per * (size_t)t->cap, per * (size_t)b->nops);
    if (!m) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
    t->cap = b->nops;
    t->ops = (mgopt_op **)m;
    t->parent = (int32_t *)(void *)(t->ops + t->cap);
    t->depth = t->parent + t->cap;
    t->anchor = t->depth + t->cap;
  }
  if (b->nops > 1) {
    /* a stage moves only ops of its kind: none in the function, nothing to do */
    if (mgopt__index_kind_count(b->func, MGOPT_OP_cast)) mgopt__tr_stage(t, b, MGOPT_OP_cast, &ctx->rewrites);
    if (mgopt__index_kind_count(b->func, MGOPT_OP_transpose))
      mgopt__tr_stage(t, b, MGOPT_OP_transpose, &ctx->rewrites);
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__tr_run(mgopt_pass_ctx *ctx) {
  mgopt__tr t;
  mgopt_status s = MGOPT_OK;
  int32_t f;
  memset(&t, 0, sizeof t);
  for (f = 0; f < mgopt_program_function_count(ctx->program) && !s; f++) {
    mgopt_function *fn = mgopt_program_function_at(ctx->program, f);
    if (mgopt__index_kind_count(fn, MGOPT_OP_cast) || mgopt__index_kind_count(fn, MGOPT_OP_transpose))
      s = mgopt__tr_block(ctx, &t, fn->body, 0);
  }
  if (t.ops) mgopt__heap_free(&ctx->program->alloc, t.ops, (sizeof(mgopt_op *) + 3 * sizeof(int32_t)) * (size_t)t.cap);
  return s;
}

MGOPT__DEFINE_PASS(cleanup, common, topological_reorder,
                   "move casts, then transposes, to just before their first use", mgopt__tr_run);
