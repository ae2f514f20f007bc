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

static int mgopt__psh_unknown(const mgopt_type *t) {
  int32_t i;
  if (t->kind != MGOPT_TYPE_TENSOR) return 0;
  if (t->dtype == MGOPT_DT_UNKNOWN || t->rank < 0) return 1;
  for (i = 0; i < t->rank; i++)
    if (!t->dims[i].sym && t->dims[i].v < 0) return 1;
  return 0;
}

/* 1 if cur was refined from inf */
static int mgopt__psh_merge(mgopt_program *p, mgopt_type *cur, const mgopt_type *inf) {
  int32_t i;
  int changed = 0;
  if (inf->kind != MGOPT_TYPE_TENSOR) return 0;
  if (cur->dtype == MGOPT_DT_UNKNOWN && inf->dtype != MGOPT_DT_UNKNOWN) {
    cur->dtype = inf->dtype;
    changed = 1;
  }
  if (cur->rank < 0) {
    if (inf->rank >= 0) {
      uint8_t dt = cur->dtype;
      if (mgopt__type_copy(p, cur, inf)) return 0;
      cur->dtype = dt;
      changed = 1;
    }
    return changed;
  }
  if (inf->rank != cur->rank) return changed;
  for (i = 0; i < cur->rank; i++)
    if (!cur->dims[i].sym && cur->dims[i].v < 0 && (inf->dims[i].sym || inf->dims[i].v >= 0)) {
      cur->dims[i] = inf->dims[i];
      changed = 1;
    }
  return changed;
}

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
    for (i = 0; i < op->nouts; i++) any |= mgopt__psh_unknown(&op->outs[i]->type);
    if (!any) continue;
    {
      mgopt_type inf[16];
      memset(inf, 0, sizeof inf);
      if (def->infer(p, op, inf, NULL) != MGOPT_OK) continue;
      for (i = 0; i < op->nouts; i++) {
        mgopt_type cur = op->outs[i]->type;
        /* dims are shared arena memory: refine a private copy */
        if (mgopt__type_copy(p, &cur, &op->outs[i]->type)) return n;
        if (mgopt__psh_merge(p, &cur, &inf[i])) {
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
