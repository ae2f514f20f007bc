/* src/passes/onnx/prune_unused_graph_inputs.c — onnx::prune_unused_graph_inputs: inputs of main that nothing reads are removed.

   Spec: onnx_ir_optimizer_passes.txt, "prune_unused_graph_inputs" (graph only:
   function signatures stay). This pass changes main's inputs on purpose.

   Before:
     main(%x: (2, fp32), %unused: (3, fp32)) {
       %y: (2, fp32) = relu(x=%x)
     } -> (%y)
   After:
     main(%x: (2, fp32)) {
       %y: (2, fp32) = relu(x=%x)
     } -> (%y)

   Fires on: inputs of the function `main` with no use (no operand, no output).
   Must not fire: inputs of any other function (ONNX local functions and other
   entry points keep their signatures); inputs read only inside nested blocks
   (those are uses).
   Cost: O(inputs of main): one sweep keeps the used inputs in order and
   renumbers them (removing them one by one would shift the rest each time:
   quadratic in the number of unused inputs). */
#include "../../passes_internal.h"

static mgopt_status mgopt__pui_run(mgopt_pass_ctx *ctx) {
  mgopt_function *f = mgopt_program_function(ctx->program, "main");
  mgopt_block *b;
  int32_t i, kept = 0;
  if (!f) return MGOPT_OK;
  b = f->body;
  for (i = 0; i < b->nargs; i++) {
    mgopt_value *x = b->args[i];
    if (x->nuses == 0) continue; /* dropped: nothing refers to it */
    x->index = kept;
    b->args[kept++] = x;
  }
  ctx->rewrites += b->nargs - kept;
  b->nargs = kept;
  return MGOPT_OK;
}

MGOPT__DEFINE_PASS(onnx, onnx, prune_unused_graph_inputs, "inputs of main that nothing reads are removed",
                   mgopt__pui_run);
