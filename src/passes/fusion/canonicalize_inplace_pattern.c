/* src/passes/fusion/canonicalize_inplace_pattern.c — common::canonicalize_inplace_pattern: a state write right after the op computing its value.

   Spec: reference mil-passes.md §1.1 (entry 74) and §2.2; coremltools'
   optimize_state.py. An in-place update reads as read_state -> op ->
   coreml_update_state; the write may sit anywhere after the op, and the
   canonical order puts it immediately after (prefer_state_in_downstream
   relies on it).

   Before:
     main(%x: (2, fp16), %s: state(2, fp16)) {
       %r: (2, fp16) = read_state(input=%s)
       %m: (2, fp16) = mul(x=%r, y=%x)
       %a: (2, fp16) = add(x=%m, y=%x)
       %u: (2, fp16) = coreml_update_state(state=%s, value=%m)
     } -> (%a, %u)
   After:
     main(%x: (2, fp16), %s: state(2, fp16)) {
       %r: (2, fp16) = read_state(input=%s)
       %m: (2, fp16) = mul(x=%r, y=%x)
       %u: (2, fp16) = coreml_update_state(state=%s, value=%m)
       %a: (2, fp16) = add(x=%m, y=%x)
     } -> (%a, %u)

   Fires on: a coreml_update_state whose value is made by an op X of the same
   block that is not itself a state op; the write moves to just after X (after
   the writes of X's outputs already there, in their order). It keeps its
   name and its uses (they all come after its old place).
   Must not fire: when the write already follows X that way; when X sits in
   another block (a write inside a branch or loop body stays there); when an
   op between X and the write reads or writes the same state (a read_state
   there must still see the old contents: the reference moves the write
   regardless, mgopt does not), or has side effects (mgopt__op_has_effects);
   when the state value is made after X.
   Cost: the writes come from the op index; each checks the uses of its state
   (label comparisons) and the effectful ops of the function (a binary search
   in their labels): O(ops + writes x uses of their state). */
#include "../../passes_internal.h"

/* 1 when some op other than u reading state s lies strictly between x and u
   (ops nested in x or in an op between count). */
static int mgopt__cip_state_touched(const mgopt_value *s, const mgopt_op *x, const mgopt_op *u) {
  const mgopt_use *k;
  for (k = s->uses; k; k = k->next)
    if (k->op && k->op != u && MGOPT__OP_PRECEDES(x, k->op) && MGOPT__OP_PRECEDES(k->op, u)) return 1;
  return 0;
}

/* 1 when one of the effectful ops eff[0..n) (in program order) lies strictly between x and u. */
static int mgopt__cip_effect_between(mgopt_op *const *eff, int64_t n, const mgopt_op *x, const mgopt_op *u) {
  int64_t lo = 0, hi = n;
  while (lo < hi) { /* the first effectful op after x */
    int64_t mid = lo + (hi - lo) / 2;
    if (MGOPT__OP_PRECEDES(eff[mid], x) || eff[mid] == x) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && MGOPT__OP_PRECEDES(eff[lo], u);
}

typedef struct mgopt__cip_walk {
  mgopt_program *p;
  mgopt_op **eff;
  int64_t n, cap;
  int oom;
} mgopt__cip_walk;

static int mgopt__cip_collect(mgopt_op *op, void *ud) {
  mgopt__cip_walk *w = (mgopt__cip_walk *)ud;
  if (op->kind == MGOPT_OP_coreml_update_state || !mgopt__op_has_effects(op)) return 0;
  if (!mgopt__grow(&w->p->alloc, (void **)&w->eff, &w->cap, w->n + 1, sizeof *w->eff)) {
    w->oom = 1;
    return 1;
  }
  w->eff[w->n++] = op;
  return 0;
}

/* Moves u after its value's producer when that is legal; 1 if it moved. */
static int mgopt__cip_try(mgopt_op *u, void *ud) {
  const mgopt__cip_walk *w = (const mgopt__cip_walk *)ud;
  mgopt_value *v = mgopt_op_operand(u, "value"), *s = mgopt_op_operand(u, "state");
  mgopt_op *x, *pos, *a;
  if (!v || !s || !v->def) return 0;
  x = v->def;
  if (x->parent != u->parent || (mgopt_op_traits(x) & MGOPT_TRAIT_STATE)) return 0;
  for (pos = x->next; pos && pos != u && pos->kind == MGOPT_OP_coreml_update_state; pos = pos->next) {
    mgopt_value *pv = mgopt_op_operand(pos, "value");
    if (!pv || pv->def != x) break;
  }
  if (!pos || pos == u) return 0;
  a = s->def ? mgopt__pu_ancestor_in(s->def, u->parent) : NULL;
  if (a && a != x && !MGOPT__OP_PRECEDES(a, x)) return 0;
  if (mgopt__cip_state_touched(s, x, u)) return 0;
  if (mgopt__cip_effect_between(w->eff, w->n, x, u)) return 0;
  mgopt_op_move_before(u, pos);
  return 1;
}

/* The effectful ops of fn, in program order. */
static int mgopt__cip_prepare(mgopt_function *fn, void *ud) {
  mgopt__cip_walk *w = (mgopt__cip_walk *)ud;
  w->n = 0;
  mgopt_block_walk(fn->body, mgopt__cip_collect, w);
  return !w->oom;
}

static mgopt_status mgopt__cip_run(mgopt_pass_ctx *ctx) {
  mgopt__cip_walk w;
  mgopt_status st;
  memset(&w, 0, sizeof w);
  w.p = ctx->program;
  st = mgopt__pu_each_state_write(ctx, mgopt__cip_prepare, mgopt__cip_try, &w);
  if (w.eff) mgopt__heap_free(&w.p->alloc, w.eff, sizeof *w.eff * (size_t)w.cap);
  return st;
}

MGOPT__DEFINE_PASS(fusion, common, canonicalize_inplace_pattern,
                   "move each state write right after the op that computes its value", mgopt__cip_run);
