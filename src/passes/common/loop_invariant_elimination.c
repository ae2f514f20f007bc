/* src/passes/common/loop_invariant_elimination.c — common::loop_invariant_elimination: drop while_loop vars the body passes through.

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
   of loop_vars[k] named like it keeps the output's name (the spec's
   example). At least one loop var is always kept.
   Must not fire: a body that returns some other outer value for slot k
   (MIL's reference treats any outer value as invariant, which is wrong from
   the second iteration on), or a computed value.
   Inner loops first (nested blocks before their op). Cost: O(ops + loop
   vars + uses of the removed values). */
#include "../../passes_internal.h"

static int mgopt__lie_invariant(const mgopt_op *op, int32_t k) {
  mgopt_block *body = op->blocks[1];
  mgopt_value *out = body->outs[k]->value;
  int32_t li = mgopt_op_slot_index(op, "loop_vars");
  mgopt_value *outer = op->slots[li].uses[k].value;
  return out == body->args[k] || out == outer;
}

static mgopt_status mgopt__lie_loop(mgopt_pass_ctx *ctx, mgopt_op *op) {
  static const char *const slot[1] = {"x"};
  mgopt_program *p = ctx->program;
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
  for (k = 0; k < n; k++) vars[k] = op->slots[li].uses[k].value;
  kept = n;
  for (k = n - 1; k >= 0; k--) {
    mgopt_value *outer = vars[k], *res = op->outs[k];
    int32_t j;
    if (kept == 1) break;
    if (!mgopt__lie_invariant(op, k)) continue;
    if (mgopt__pu_is_func_output(res)) {
      mgopt_op *id = mgopt_build_op(p, op->parent, op, "identity", res->name, 1, slot, &outer, 1);
      mgopt_status s;
      if (!id) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
      if ((s = mgopt_op_infer(p, id, ctx->diag)) != MGOPT_OK) return s;
      mgopt__pu_fill_type(p, id, 0, &res->type);
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

static mgopt_status mgopt__lie_block(mgopt_pass_ctx *ctx, mgopt_block *b, int depth) {
  mgopt_op *op;
  int32_t i;
  mgopt_status s;
  if (depth > 256) return mgopt_diag_set(ctx->diag, MGOPT_ERR_LIMIT, "blocks nested too deeply");
  for (op = b->first; op; op = op->next) {
    for (i = 0; i < op->nblocks; i++)
      if ((s = mgopt__lie_block(ctx, op->blocks[i], depth + 1)) != MGOPT_OK) return s;
    if (op->kind == MGOPT_OP_while_loop && (s = mgopt__lie_loop(ctx, op)) != MGOPT_OK) return s;
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__lie_run(mgopt_pass_ctx *ctx) {
  int32_t f;
  for (f = 0; f < mgopt_program_function_count(ctx->program); f++) {
    mgopt_status s = mgopt__lie_block(ctx, mgopt_program_function_at(ctx->program, f)->body, 0);
    if (s) return s;
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_loop_invariant_elimination = {
    "common::loop_invariant_elimination", "cleanup", "drop while_loop vars that the body passes through unchanged",
    0, NULL, mgopt__lie_run};
