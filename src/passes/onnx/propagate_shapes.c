/* src/passes/onnx/propagate_shapes.c — onnx::propagate_shapes: fill unknown dtypes and dims through elementwise and unary ops.

   Spec: onnx_ir_optimizer_passes.txt, "propagate_elementwise_shapes" and
   "propagate_unary_shapes" (one pass here: both walk the same ops).

   Before:
     main(%x: (2, 3, fp32)) {
       %r: (?, ?, fp32) = relu(x=%x)
       %e: (?, 3, fp32) = exp(x=%r)
     } -> (%e)
   After:
     main(%x: (2, 3, fp32)) {
       %r: (2, 3, fp32) = relu(x=%x)
       %e: (2, 3, fp32) = exp(x=%r)
     } -> (%e)

   Fires on: registered ops with the unary, binary (broadcasting) or
   shape-preserving trait whose output types have an unknown dtype, rank or
   dim, in program order (so a chain fills in one sweep), nested blocks
   included. The registry's type inference computes the output types; only
   unknown parts are filled (a known dim or dtype is never changed, a
   contradicting inference is ignored).
   Must not fire: fully typed outputs (a no-op on fully typed graphs); opaque
   ops; other ops; an inference that fails.
   Cost: one walk, O(ops x rank). */
#include "../../passes_internal.h"

static int64_t mgopt__psh_block(mgopt_program *p, mgopt_block *b, int depth) {
  mgopt_op *op;
  int64_t n = 0;
  if (depth > 256) return 0;
  for (op = b->first; op; op = op->next) {
    const mgopt_op_def *def = mgopt_op_def_get(op->kind);
    int32_t i, any = 0;
    for (i = 0; i < op->nblocks; i++) n += mgopt__psh_block(p, op->blocks[i], depth + 1);
    if (!def || !def->infer || op->nouts < 1 || op->nouts > 16) continue;
    if (!(def->traits & (MGOPT_TRAIT_UNARY | MGOPT_TRAIT_BINARY | MGOPT_TRAIT_SHAPE_PRESERVING))) continue;
    for (i = 0; i < op->nouts; i++) any |= mgopt__pu_type_unknown(&op->outs[i]->type);
    if (!any) continue;
    {
      mgopt_type inf[16];
      memset(inf, 0, sizeof inf);
      if (def->infer(p, op, inf, NULL) != MGOPT_OK) continue;
      for (i = 0; i < op->nouts; i++) {
        mgopt_type cur = op->outs[i]->type;
        /* dims are shared arena memory: refine a private copy */
        if (mgopt__type_copy(p, &cur, &op->outs[i]->type)) return n;
        if (mgopt__pu_type_refine(p, &cur, &inf[i])) {
          op->outs[i]->type = cur;
          n++;
        }
      }
    }
  }
  return n;
}

static mgopt_status mgopt__psh_run(mgopt_pass_ctx *ctx) {
  int32_t i;
  for (i = 0; i < mgopt_program_function_count(ctx->program); i++)
    ctx->rewrites += mgopt__psh_block(ctx->program, mgopt_program_function_at(ctx->program, i)->body, 0);
  return MGOPT_OK;
}

MGOPT__DEFINE_PASS(onnx, onnx, propagate_shapes,
                   "fill unknown dtypes and dims through elementwise and unary ops", mgopt__psh_run);
