/* src/passes/onnx/canonicalize_opaque_ops.c — onnx::canonicalize_opaque_ops: an ONNX op left opaque becomes canonical once its operands are constant or typed, and types downstream are inferred again.

   Spec: ONNX Runtime's basic level folds constants and then sees every op
   with the shapes they give; the importer maps a node to canonical ops only
   from what it knows at import (a Pad whose pads come from a Split and a
   Concat of constants stays onnx::Pad, its output type unknown). After
   const_elimination the same node can map: this pass imports each opaque
   ONNX op again (mgopt_onnx_reimport_op, the importer's mapping row for the
   op type at the program's opset) and, in the same program-order sweep,
   fills unknown output types of registered ops from their type inference
   and of opaque ONNX ops from their type rules, so the readers of a value
   that became typed map or fold in turn (a Shape of it, for fold_shape_ops).

   Before:
     main(%x: (1, 2, 4, 4, fp32)) {
       %p: (8, int64)* = const(val=[0, 0, 0, 0, 0, 0, 1, 1])
       %y: (?, ?, ?, ?, fp32) = onnx::Pad(in0=%x, in1=%p, mode="constant")
       %r: (?, ?, ?, ?, fp32) = relu(x=%y)
     } -> (%r)
   After:
     main(%x: (1, 2, 4, 4, fp32)) {
       %p: (8, int64)* = const(val=[0, 0, 0, 0, 0, 0, 1, 1])
       %y_pad_0: (8, int32)* = const(val=[0, 0, 0, 0, 0, 1, 0, 1])
       %y: (1, 2, 5, 5, fp32) = pad(x=%x, pad=%y_pad_0, mode="constant", constant_val=0.0)
       %r: (1, 2, 5, 5, fp32) = relu(x=%y)
     } -> (%r)

   Fires on: an opaque op `onnx::T` (default domain, no nested blocks) whose
   mapping now builds canonical ops (same conditions as at import); one the
   mapping declines whose operands are all constant and which ONNX's
   kernels evaluate (mgopt_onnx_eval_op: an integer Div, which truncates and
   so has no canonical op; not a random op): it becomes constants, within
   the folding limits of mgopt_fold_op (MGOPT_FOLD_MAX_ELEMENTS; outputs
   taking more bytes than the operand constants that die with the op free
   plus MGOPT_FOLD_MAX_GROWTH_BYTES stay), as ONNX Runtime folds it; an
   opaque ONNX op whose unknown output types its type rule now gives; a
   registered op whose output types have an unknown dtype, rank or dim that
   its type inference knows (only unknown parts are filled). Nested blocks
   are walked too.
   Must not fire: other domains; an op the mapping still declines (a
   non-constant pads input, an input of unknown rank); an output of the
   function whose name the mapping would change; a canonical type that
   contradicts what the opaque output's declared type said; known types
   (never changed).
   Cost: one sweep, O(ops x rank) plus one mapping-table lookup per opaque
   op; the operands left unused stay for dead_code_elimination. */
#include "../../passes_internal.h"
#include "../../onnx/convert_api.h" /* mgopt_onnx_reimport_op: the mappings stay the importer's */
#include "../../kernels/kernels.h"     /* mgopt__fold_budget: the growth rule of every fold */

/* 1 if op's declared outputs agree with its type inference (as the verifier
   asks), or it has none. */
static int mgopt__coo_agrees(mgopt_program *p, const mgopt_op *op) {
  mgopt_type tmp[8], *inf;
  mgopt_diag d;
  int32_t i;
  mgopt_diag_clear(&d);
  if (!op || mgopt__op_infer_types(p, op, tmp, 8, &inf, &d) != MGOPT_OK) return op == NULL;
  for (i = 0; inf && i < op->nouts; i++)
    if (mgopt__type_clash(&op->outs[i]->type, &inf[i], 1) != 0) return 0;
  return 1;
}

/* Refines v's type from inf (mgopt__pu_type_refine on a private copy of its
   dims); 1 when it changed. A program read with an unknown dim may declare a
   reader's output that only the unknown let pass (%r: (?, fp32) read by an
   op declared (8, fp32) whose input is really 4): such a refinement is not
   made, so the program stays one the verifier accepts. */
static int mgopt__coo_merge(mgopt_program *p, mgopt_value *v, const mgopt_type *inf) {
  mgopt_type cur, old = v->type;
  const mgopt_use *u;
  if (inf->kind != MGOPT_TYPE_TENSOR || v->type.kind != MGOPT_TYPE_TENSOR) return 0;
  if (mgopt__type_copy(p, &cur, &v->type) || !mgopt__pu_type_refine(p, &cur, inf)) return 0;
  v->type = cur;
  for (u = v->uses; u; u = u->next)
    if (!mgopt__coo_agrees(p, u->op ? u->op : u->block ? u->block->parent_op : NULL)) {
      v->type = old;
      return 0;
    }
  return 1;
}

/* The opaque ONNX op `op` with constant operands, evaluated by ONNX's
   kernels, becomes constants named as its outputs: 1 when it did, 0 when it
   stays (an operand not constant, no kernel, a limit, a result its declared
   type or readers do not take), -1 when memory ran out. */
static int mgopt__coo_fold(mgopt_program *p, mgopt_op *op) {
  mgopt_tensor *ins[64], *outs[16];
  mgopt_value *cs[16];
  mgopt_onnx_eval_options eo;
  mgopt_diag d;
  int64_t budget, out_bytes = 0;
  int32_t n = 0, s, j, i, ok = 1;
  if (op->nblocks || op->nouts < 1 || op->nouts > 16) return 0;
  for (s = 0; s < op->nslots; s++)
    for (j = 0; j < op->slots[s].n; j++) {
      mgopt_tensor *t = mgopt_value_const(op->slots[s].uses[j].value);
      if (!t || n == 64 || !mgopt_tensor_data(p, t)) return 0;
      ins[n++] = t;
    }
  if (n == 0) return 0; /* a generator (RandomNormal, a Constant left opaque): nothing to compute from */
  /* an output of more elements than 8 x its budget has more bytes than
     the budget (an element takes a bit at least): it would be refused, so
     it is not computed (a ConstantOfShape of 2^28) */
  budget = mgopt__fold_budget(op, MGOPT_FOLD_MAX_GROWTH_BYTES);
  memset(&eo, 0, sizeof eo);
  eo.max_elements = budget >= 0 && budget < MGOPT_FOLD_MAX_ELEMENTS / 8 ? budget * 8 : MGOPT_FOLD_MAX_ELEMENTS;
  for (i = 0; i < op->nouts; i++) outs[i] = NULL;
  mgopt_diag_clear(&d);
  if (mgopt_onnx_eval_op(&eo, p, op, ins, n, outs, &d) != MGOPT_OK)
    return d.status == MGOPT_ERR_NOMEM ? -1 : 0;
  for (i = 0; i < op->nouts && ok; i++) {
    const mgopt_tensor *t = outs[i];
    ok = t && !(op->outs[i]->flags & MGOPT_VALUE_ABSENT) &&
         mgopt__pu_replace_static_fits(p, op->outs[i], (mgopt_dtype)t->dtype, t->rank, t->shape);
    if (t) out_bytes += (int64_t)t->nbytes;
  }
  if (budget >= 0 && out_bytes > budget) ok = 0;
  for (i = 0; i < op->nouts && ok; i++) {
    mgopt_tensor *c = mgopt_tensor_new(p, (mgopt_dtype)outs[i]->dtype, outs[i]->rank, outs[i]->shape);
    void *dst = c ? mgopt_tensor_data_mut(p, c) : NULL;
    if (!dst && outs[i]->nbytes) ok = -1;
    else {
      if (outs[i]->nbytes) memcpy(dst, outs[i]->data, outs[i]->nbytes);
      cs[i] = mgopt_build_const(p, op->parent, op, mgopt__pu_value_name(op->outs[i]), c);
      if (!cs[i]) ok = -1;
    }
  }
  for (i = 0; i < op->nouts; i++)
    if (outs[i]) mgopt_eval_tensor_free(p, outs[i]);
  if (ok != 1) return ok;
  for (i = 0; i < op->nouts; i++) mgopt_value_replace_all_uses(op->outs[i], cs[i]);
  mgopt_op_erase(op);
  return 1;
}

static int64_t mgopt__coo_block(mgopt_program *p, mgopt_block *b, int depth, mgopt_status *st) {
  mgopt_op *op, *next;
  int64_t n = 0;
  if (depth > 256) return 0;
  for (op = b->first; op && !*st; op = next) {
    const mgopt_op_def *def;
    int32_t i, any = 0;
    next = op->next;
    for (i = 0; i < op->nblocks; i++) n += mgopt__coo_block(p, op->blocks[i], depth + 1, st);
    if (op->kind == MGOPT_OP_OPAQUE) {
      int r = strncmp(op->type, "onnx::", 6) == 0 ? mgopt_onnx_reimport_op(p, op) : 0;
      if (r == 0 && strncmp(op->type, "onnx::", 6) == 0) r = mgopt__coo_fold(p, op);
      if (r < 0) *st = MGOPT_ERR_NOMEM;
      else if (r > 0) n++;
      continue;
    }
    def = mgopt_op_def_get(op->kind);
    if (!def || !def->infer || op->kind == MGOPT_OP_const || op->nouts < 1 || op->nouts > 16) continue;
    for (i = 0; i < op->nouts; i++) any |= mgopt__pu_type_unknown(&op->outs[i]->type);
    if (!any) continue;
    {
      mgopt_type inf[16];
      int changed = 0;
      memset(inf, 0, sizeof inf);
      if (def->infer(p, op, inf, NULL) != MGOPT_OK) continue;
      for (i = 0; i < op->nouts; i++) changed |= mgopt__coo_merge(p, op->outs[i], &inf[i]);
      n += changed;
    }
  }
  return n;
}

static mgopt_status mgopt__coo_run(mgopt_pass_ctx *ctx) {
  mgopt_status st = MGOPT_OK;
  int32_t i;
  for (i = 0; i < mgopt_program_function_count(ctx->program) && !st; i++)
    ctx->rewrites += mgopt__coo_block(ctx->program, mgopt_program_function_at(ctx->program, i)->body, 0, &st);
  return st;
}

MGOPT__DEFINE_PASS(onnx, onnx, canonicalize_opaque_ops,
                   "an ONNX op left opaque becomes canonical once its operands are constant or typed; unknown types "
                   "downstream are inferred again",
                   mgopt__coo_run);
