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
   Cost: O(inputs of main). */
#include "../../passes_internal.h"

static mgopt_status mgopt__pui_run(mgopt_pass_ctx *ctx) {
  mgopt_function *f = mgopt_program_function(ctx->program, "main");
  int32_t i;
  if (!f) return MGOPT_OK;
  for (i = f->body->nargs - 1; i >= 0; i--)
    if (f->body->args[i]->nuses == 0) {
      mgopt_block_remove_arg(f->body, i);
      ctx->rewrites++;
    }
  return MGOPT_OK;
}

MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_prune_unused_graph_inputs = {
    "onnx::prune_unused_graph_inputs", "onnx", "inputs of main that nothing reads are removed", 0, NULL,
    mgopt__pui_run};
