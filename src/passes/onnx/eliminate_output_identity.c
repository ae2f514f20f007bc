/* src/passes/onnx/eliminate_output_identity.c — onnx::eliminate_output_identity: an identity that only renames a value into a block output goes.

   Spec: onnx_ir_optimizer_passes.txt, "Identity Elimination" (ONNX Runtime's
   basic level removes these too: the producer's output takes the graph output).
   noop_elimination keeps every block output (MIL's rule); in ONNX a block output
   is just a name, so the identity in front of it can go when its input is made
   by an op of the same block.

   Before:
     main(%x: (2, fp32)) {
       %a: (2, fp32) = relu(x=%x)
       %y: (2, fp32) = identity(x=%a)
     } -> (%y)
   After:
     main(%x: (2, fp32)) {
       %y: (2, fp32) = relu(x=%x, name="a")
     } -> (%y)
   The same inside an if / loop body, where the output is matched by position.

   Fires on: identity(x) whose output is a block output (of a function body or
   a nested block), where x is made by a non-const op of the same block, x is
   not already an output of that block, and x's type fits every use of the
   identity's output (for a function output: equal declared types). Other
   readers of the identity's output read x.
   Must not fire: x a block argument (a graph input or a loop-carried value:
   its name cannot change), x from an enclosing block (ONNX wants a subgraph
   output made inside it), x a const (it would become an initializer output),
   x already an output of the block (the name would repeat), a type mismatch.
   Cost: one worklist run, O(ops + block outputs). */
#include "../../passes_internal.h"

static int mgopt__eoi_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *out;
  mgopt_block *b = op->parent;
  MGOPT__UNUSED(ud);
  if (!x || !b || op->nouts != 1) return 0;
  out = op->outs[0];
  if (!mgopt__pu_is_block_output(out) || mgopt__pu_is_block_output(x)) return 0;
  if (!x->def || x->def->parent != b || x->def->kind == MGOPT_OP_const) return 0;
  if (!mgopt__pu_replace_fits(mgopt_rw_program(rw), out, x)) return 0;
  mgopt_rw_replace_value(rw, out, x);
  mgopt_rw_erase(rw, op);
  return 1;
}

static const mgopt_pattern mgopt__eoi_patterns[] = {
    {"eliminate_output_identity", MGOPT_OP_identity, NULL, 1, mgopt__eoi_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, eliminate_output_identity,
                           "an identity that only renames a value into a block output goes",
                           mgopt__eoi_patterns);
