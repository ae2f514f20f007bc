/* src/passes/cleanup/merge_consecutive_relus.c — common::merge_consecutive_relus: relu(relu(x)) -> relu(x).

   Spec: mil_graph_passes.txt, "Identify consecutive relu layers which could
   be merged into a single relu layer"; reference §3.29.

   Before:
     main(%x: (2, 3, fp32)) {
       %r1: (2, 3, fp32) = relu(x=%x)
       %r2: (2, 3, fp32) = relu(x=%r1)
       %r3: (2, 3, fp32) = relu(x=%r2)
     } -> (%r3)
   After:
     main(%x: (2, 3, fp32)) {
       %r3: (2, 3, fp32) = relu(x=%x)
     } -> (%r3)

   Fires on: a relu whose input is produced by a relu, in any block; the
   outer relu's uses take the inner relu's output (which takes the outer
   name when the outer output is a function output). relu is idempotent, so
   the inner relu may have other users: it then simply stays.
   Must not fire: when both outputs are function outputs (two names must
   survive); when the inner relu's declared type does not suit a reader of
   the outer one, or differs from it while the outer one is a function
   output (mgopt__pu_replace_fits); relu fed by anything else.
   Cost: worklist patterns, O(relus). */
#include "../../passes_internal.h"

static int mgopt__mcr_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  mgopt_op *inner = mgopt__pu_def_of(x, MGOPT_OP_relu);
  MGOPT__UNUSED(ud);
  if (!inner || op->nouts != 1 || inner == op) return 0;
  if (mgopt__pu_is_func_output(op->outs[0]) && mgopt__pu_is_func_output(x)) return 0;
  if (!mgopt__pu_replace_fits(mgopt_rw_program(rw), op->outs[0], x)) return 0;
  mgopt__pu_replace_value(rw, op->outs[0], x);
  mgopt_rw_erase(rw, op);
  return 1;
}

static const mgopt_pattern mgopt__mcr_patterns[] = {
    {"relu_relu", MGOPT_OP_relu, NULL, 1, mgopt__mcr_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, merge_consecutive_relus, "collapse relu chains into one relu",
                           mgopt__mcr_patterns);
