/* src/passes/cleanup/loop_invariant_elimination.c — common::loop_invariant_elimination: drop while_loop vars the body passes through.

   Spec: mil_graph_passes.txt, "When a block does not modify a block input
   var, eliminate that block input var and use the corresponding var in the
   outer scope"; reference §3.8.

   Before:
     main(%a: (1, 2, fp32), %b: (1, 2, fp32)) {
       %l0: (1, 2, fp32), %l1: (1, 2, fp32) = while_loop(loop_vars=(%a, %b))
         loop_cond(%a_x: (1, 2, fp32), %b_x: (1, 2, fp32)) {
           %ra: (fp32) = reduce_sum(x=%a_x, axes=[0, 1], keep_dims=false)
           %rb: (fp32) = reduce_sum(x=%b_x, axes=[0, 1], keep_dims=false)
           %c: (bool) = less(x=%ra, y=%rb)
         } -> (%c)
         loop_body(%a_x: (1, 2, fp32), %b_x: (1, 2, fp32)) {
           %s: (1, 2, fp32) = add(x=%a_x, y=%b_x)
         } -> (%s, %b_x)
     } -> (%l0, %l1)
   After:
     main(%a: (1, 2, fp32), %b: (1, 2, fp32)) {
       %l1: (1, 2, fp32) = identity(x=%b)
       %l0: (1, 2, fp32) = while_loop(loop_vars=(%a))
         loop_cond(%a_x: (1, 2, fp32)) {
           %ra: (fp32) = reduce_sum(x=%a_x, axes=[0, 1], keep_dims=false)
           %rb: (fp32) = reduce_sum(x=%b, axes=[0, 1], keep_dims=false)
           %c: (bool) = less(x=%ra, y=%rb)
         } -> (%c)
         loop_body(%a_x: (1, 2, fp32)) {
           %s: (1, 2, fp32) = add(x=%a_x, y=%b)
         } -> (%s)
     } -> (%l0, %l1)

   Loop var k is invariant when body output k is body argument k itself, or
   is loop_vars[k] (the outer value, returned unchanged). Then inside both
   blocks argument k is replaced by loop_vars[k], the argument, body output
   k, loop_vars[k] and loop output k are removed, and uses of loop output k
   read loop_vars[k]; where loop output k is a function output an identity
   of loop_vars[k] named like it keeps the output's name and type (the
   spec's example). At least one loop var is always kept.
   Types: a block argument (or the loop output) may be declared less
   precisely than the outer value that replaces it (a symbolic or unknown
   dim, an unknown dtype or rank, which the verifier accepts for loop vars).
   Every op that reads a replaced value, and transitively every op whose
   output type must change, is re-inferred with the outer value's type
   first: an output whose dtype was unknown takes the inferred one; an
   inference that fails or contradicts a declared type (dtype, rank, static
   dim; a nested loop's block arguments) means the declared types cannot
   hold for the outer value, and var k is left alone. So is a change that
   would reach a function output's type.
   Must not fire: a body that returns some other outer value for slot k
   (MIL's reference treats any outer value as invariant, which is wrong from
   the second iteration on), or a computed value.
   Inner loops first (nested blocks before their op). Cost: O(ops + loop
   vars + uses of the removed values, and of the values whose type they
   refine); nothing for a function without loops (the op index counts them). */
#include "../../passes_internal.h"

/* A type change under trial: the value and its type before the change. */
typedef struct mgopt__lie_undo {
  mgopt_value *v;
  mgopt_type old;
} mgopt__lie_undo;

typedef struct mgopt__lie {
  mgopt_pass_ctx *ctx;
  mgopt_program *p;
  mgopt__lie_undo *undo; /* changes made by the current trial */
  int64_t nundo, undo_cap;
  mgopt_value **work;    /* values whose type changed, their users to recheck */
  int64_t nwork, work_cap;
} mgopt__lie;

/* Sets v's type to t (the old one logged) and queues v's users. 0 on OOM. */
static int mgopt__lie_set_type(mgopt__lie *L, mgopt_value *v, const mgopt_type *t) {
  void *arr;
  arr = L->undo;
  if (!mgopt__grow(&L->p->alloc, &arr, &L->undo_cap, L->nundo + 1, sizeof(mgopt__lie_undo))) return 0;
  L->undo = (mgopt__lie_undo *)arr;
  arr = L->work;
  if (!mgopt__grow(&L->p->alloc, &arr, &L->work_cap, L->nwork + 1, sizeof(mgopt_value *))) return 0;
  L->work = (mgopt_value **)arr;
  L->undo[L->nundo].v = v;
  L->undo[L->nundo].old = v->type;
  L->nundo++;
  v->type = *t;
  L->work[L->nwork++] = v;
  return 1;
}

/* Re-infers op after an operand (or a nested block output) changed type.
   1: its declared output types still hold (outputs with an unknown dtype
   take the inferred one and are queued); 0: they cannot; -1: OOM. */
static int mgopt__lie_recheck(mgopt__lie *L, mgopt_op *op) {
  mgopt_type tmp[8], *inf;
  mgopt_status st;
  int32_t i;
  /* a loop's blocks keep their argument types: they must still fit the loop vars */
  if (!mgopt__pu_loop_args_fit(op)) return 0;
  inf = mgopt__pu_infer_outputs(L->p, op, tmp, &st);
  if (!inf) return st == MGOPT_OK ? 1 : st == MGOPT_ERR_NOMEM ? -1 : 0; /* no inference: types kept */
  for (i = 0; i < op->nouts; i++) {
    mgopt_value *o = op->outs[i];
    if (mgopt__type_clash(&o->type, &inf[i], 0)) return 0;
    if (o->type.kind == MGOPT_TYPE_TENSOR && o->type.dtype == MGOPT_DT_UNKNOWN && inf[i].dtype != MGOPT_DT_UNKNOWN) {
      mgopt_type t = o->type;
      if (mgopt__pu_is_func_output(o)) return 0; /* main's outputs keep their types */
      t.dtype = inf[i].dtype;
      if (!mgopt__lie_set_type(L, o, &t)) return -1;
    }
  }
  return 1;
}

/* Gives vals[i] the type types[i] and rechecks everything that depends on
   it. 1: the program types check (changes kept); 0: they do not (every
   change undone); -1: OOM (every change undone). */
static int mgopt__lie_retype(mgopt__lie *L, mgopt_value *const *vals, const mgopt_type *types, int32_t n) {
  int32_t i;
  int r = 1;
  L->nundo = 0;
  L->nwork = 0;
  for (i = 0; i < n && r == 1; i++)
    if (!mgopt_type_equal(&vals[i]->type, &types[i]) && !mgopt__lie_set_type(L, vals[i], &types[i])) r = -1;
  while (r == 1 && L->nwork > 0) {
    mgopt_value *v = L->work[--L->nwork];
    const mgopt_use *u;
    for (u = v->uses; u && r == 1; u = u->next) {
      mgopt_op *user = u->op;
      if (!user) {
        /* a block output: the op owning the block may infer from it (cond);
           a function output's type must not change */
        if (!u->block || !u->block->parent_op) {
          r = 0;
          break;
        }
        user = u->block->parent_op;
      }
      r = mgopt__lie_recheck(L, user);
    }
  }
  if (r != 1)
    while (L->nundo > 0) {
      L->nundo--;
      L->undo[L->nundo].v->type = L->undo[L->nundo].old;
    }
  return r;
}

static int mgopt__lie_invariant(const mgopt_op *op, int32_t k) {
  mgopt_block *body = op->blocks[1];
  mgopt_value *out = body->outs[k]->value;
  int32_t li = mgopt_op_slot_index(op, "loop_vars");
  mgopt_value *outer = op->slots[li].uses[k].value;
  return out == body->args[k] || out == outer;
}

static mgopt_status mgopt__lie_loop(mgopt__lie *L, mgopt_op *op) {
  static const char *const slot[1] = {"x"};
  mgopt_pass_ctx *ctx = L->ctx;
  mgopt_program *p = L->p;
  mgopt_block *cond, *body;
  int32_t li, n, k, kept;
  mgopt_value **vars;
  li = mgopt_op_slot_index(op, "loop_vars");
  if (op->nblocks != 2 || li < 0) return MGOPT_OK;
  cond = op->blocks[0];
  body = op->blocks[1];
  n = op->slots[li].n;
  if (n < 2 || op->nouts != n || body->nargs != n || cond->nargs != n || body->nouts != n) return MGOPT_OK;
  vars = (mgopt_value **)mgopt_program_alloc(p, sizeof(mgopt_value *) * (size_t)n, 8);
  if (!vars) return mgopt__oom(p);
  for (k = 0; k < n; k++) {
    vars[k] = op->slots[li].uses[k].value;
    if (!vars[k]) return MGOPT_OK;
  }
  kept = n;
  for (k = n - 1; k >= 0; k--) {
    mgopt_value *outer = vars[k], *res = op->outs[k];
    mgopt_value *tv[3];
    mgopt_type tt[3];
    int32_t j, nt = 0;
    int r, res_out;
    if (kept == 1) break;
    if (!mgopt__lie_invariant(op, k)) continue;
    /* the values outer replaces take its type first: what reads them must still type check */
    res_out = mgopt__pu_is_func_output(res);
    tv[nt] = cond->args[k];
    tt[nt++] = outer->type;
    tv[nt] = body->args[k];
    tt[nt++] = outer->type;
    if (!res_out) {
      tv[nt] = res;
      tt[nt++] = outer->type;
    }
    r = mgopt__lie_retype(L, tv, tt, nt);
    if (r < 0) return mgopt_diag_set(ctx->diag, mgopt__oom(p), "out of memory");
    if (r == 0) continue;
    if (res_out) {
      mgopt_op *id = mgopt_build_op(p, op->parent, op, "identity", res->name, 1, slot, &outer, 1);
      mgopt_status s;
      if (!id) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
      if ((s = mgopt_op_infer(p, id, ctx->diag)) != MGOPT_OK) return s;
      /* the function output keeps its declared type, which fits the outer value's */
      if (mgopt__type_copy(p, &id->outs[0]->type, &res->type))
        return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
      mgopt_value_replace_all_uses(res, id->outs[0]);
    } else {
      mgopt_value_replace_all_uses(res, outer);
    }
    mgopt_value_replace_all_uses(cond->args[k], outer);
    mgopt_value_replace_all_uses(body->args[k], outer);
    mgopt_block_remove_output(body, k);
    mgopt_block_remove_arg(cond, k);
    mgopt_block_remove_arg(body, k);
    mgopt__pu_op_remove_output(op, k);
    for (j = k; j + 1 < kept; j++) vars[j] = vars[j + 1];
    kept--;
    ctx->rewrites++;
  }
  if (kept != n && mgopt_op_set_operand_list(op, "loop_vars", vars, kept))
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
  return MGOPT_OK;
}

static mgopt_status mgopt__lie_block(mgopt__lie *L, mgopt_block *b, int depth) {
  mgopt_op *op;
  int32_t i;
  mgopt_status s;
  if (depth > 256) return mgopt_diag_set(L->ctx->diag, MGOPT_ERR_LIMIT, "blocks nested too deeply");
  for (op = b->first; op; op = op->next) {
    for (i = 0; i < op->nblocks; i++)
      if ((s = mgopt__lie_block(L, op->blocks[i], depth + 1)) != MGOPT_OK) return s;
    if (op->kind == MGOPT_OP_while_loop && (s = mgopt__lie_loop(L, op)) != MGOPT_OK) return s;
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__lie_run(mgopt_pass_ctx *ctx) {
  mgopt__lie L;
  mgopt_status s = MGOPT_OK;
  int32_t f;
  memset(&L, 0, sizeof L);
  L.ctx = ctx;
  L.p = ctx->program;
  for (f = 0; f < mgopt_program_function_count(ctx->program) && !s; f++) {
    mgopt_function *fn = mgopt_program_function_at(ctx->program, f);
    if (mgopt__index_kind_count(fn, MGOPT_OP_while_loop)) s = mgopt__lie_block(&L, fn->body, 0);
  }
  if (L.undo) mgopt__heap_free(&L.p->alloc, L.undo, (size_t)L.undo_cap * sizeof(mgopt__lie_undo));
  if (L.work) mgopt__heap_free(&L.p->alloc, L.work, (size_t)L.work_cap * sizeof(mgopt_value *));
  return s;
}

MGOPT__DEFINE_PASS(cleanup, common, loop_invariant_elimination,
                   "drop while_loop vars that the body passes through unchanged", mgopt__lie_run);
