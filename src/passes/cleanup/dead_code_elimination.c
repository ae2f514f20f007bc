/* src/passes/cleanup/dead_code_elimination.c — common::dead_code_elimination: erase ops whose results reach no output.

   Spec: mil_graph_passes.txt, "Eliminate unused ops in program".

   Before:
     main(%x: (2, 4, fp32)) {
       %w: (4, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6], [7, 8]])
       %v: (2, 4, fp32)* = const(val=[[1, 2, 3, 4], [5, 6, 7, 8]])
       %b: (2, fp32)* = const(val=[1, 2])
       %m: (2, 2, fp32) = matmul(x=%x, y=%w)
       %l: (2, 2, fp32) = linear(x=%x, weight=%v, bias=%b)
     } -> (%l)
   After:
     main(%x: (2, 4, fp32)) {
       %v: (2, 4, fp32)* = const(val=[[1, 2, 3, 4], [5, 6, 7, 8]])
       %b: (2, fp32)* = const(val=[1, 2])
       %l: (2, 2, fp32) = linear(x=%x, weight=%v, bias=%b)
     } -> (%l)

   Fires on: every op with at least one output, none of them used, without
   side effects (mgopt__op_is_dead: registered ops with the pure trait, and
   opaque ops not flagged MGOPT_OP_HAS_EFFECTS: model graphs have no side
   effects), in every block, nested blocks included (a nested block's
   outputs keep what feeds them alive).
   Must not fire: on ops without outputs; on a state write
   (coreml_update_state: the reference keeps every state write's outputs
   alive), an opaque op marked `has_effects=true`, or a control-flow op
   with such an op in its blocks; their operands stay alive with them.
   Cost: a scan of the op index for a dead op (the arrays of op pointers, no
   list walk), then, if one is found, one backward sweep per block, O(ops): erasing an op drops its
   operand uses, so producers earlier in the block are seen dead in the
   same sweep. */
#include "../../passes_internal.h"

static int64_t mgopt__dce_block(mgopt_block *b) {
  mgopt_op *op, *prev;
  int64_t n = 0;
  for (op = b->last; op; op = prev) {
    int32_t i;
    prev = op->prev;
    if (mgopt__op_is_dead(op)) {
      mgopt_op_erase(op);
      n++;
      continue;
    }
    for (i = 0; i < op->nblocks; i++) n += mgopt__dce_block(op->blocks[i]);
  }
  return n;
}

static mgopt_status mgopt__dce_run(mgopt_pass_ctx *ctx) {
  int32_t i;
  for (i = 0; i < mgopt_program_function_count(ctx->program); i++) {
    mgopt_function *f = mgopt_program_function_at(ctx->program, i);
    /* no dead op: the sweep would erase nothing */
    if (mgopt__index_has_dead(f) == 0) continue;
    ctx->rewrites += mgopt__dce_block(f->body);
  }
  return MGOPT_OK;
}

MGOPT__DEFINE_PASS(cleanup, common, dead_code_elimination, "erase ops whose results reach no output",
                   mgopt__dce_run);
