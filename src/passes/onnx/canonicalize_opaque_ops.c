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
   opaque ONNX op whose unknown output types its type rule now gives;
   an onnx::CastLike of a constant to a value of known dtype (only the
   dtype is read: a cast of a constant); control flow and sequences: an
   onnx::If whose condition is a constant
   becomes the branch it takes (its ops move before it); an onnx::If or
   onnx::Loop, or an op reading a sequence (ConcatFromSequence,
   SequenceAt, SequenceLength, ...), whose every read (inside its blocks
   too) is a constant or computed from constants is evaluated in place
   (mgopt__eval_in_place: at most 1024 ops first, 65536 ops run, 4096
   iterations a loop, 2^20 elements a value) and its tensor results
   become constants within the same growth rule (an output that is a
   sequence must be read by nothing: a sequence never becomes a constant); a
   registered op whose output types have an unknown dtype, rank or dim that
   its type inference knows (only unknown parts are filled). Nested blocks
   are walked too.
   Must not fire: other domains; an op the mapping still declines (a
   non-constant pads input, an input of unknown rank); an output of the
   function whose name the mapping would change; a canonical type that
   contradicts what the opaque output's declared type said; known types
   (never changed); an If on a run-time condition; a Loop whose trip
   count, carried values or values its body reads come from run time, or
   that runs beyond the budget; a sequence holding a run-time tensor; a
   constant If whose branch gives a function output a value it does not
   make (the output would lose its name).
   Cost: one sweep, O(ops x rank) plus one mapping-table lookup per opaque
   op, plus for each If, Loop or reader of a sequence a walk of the ops it
   depends on (at most 1024) and, when that finds only constants, its
   evaluation within the budget above; the operands left unused stay for dead_code_elimination. */
#include "../../passes_internal.h"
#include "../../onnx/convert_api.h" /* mgopt_onnx_reimport_op: the mappings stay the importer's */
#include "../../kernels/kernels.h"  /* mgopt__eval_in_place, the evaluator's sequences, mgopt__fold_budget */

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

/* Ends a fold of op whose evaluated results are outs (NULL: an output
   nothing reads): with ok 1 each result becomes a constant named as its
   output and standing for it, and op goes; the results are freed either
   way. 1 when op went, 0 when it stays, -1 when memory ran out. */
static int mgopt__coo_settle(mgopt_program *p, mgopt_op *op, mgopt_tensor **outs, int ok) {
  mgopt_value *cs[16];
  int32_t i;
  for (i = 0; i < op->nouts && ok == 1; i++) {
    mgopt_tensor *c;
    void *dst;
    cs[i] = NULL;
    if (!outs[i]) continue;
    c = mgopt_tensor_new(p, (mgopt_dtype)outs[i]->dtype, outs[i]->rank, outs[i]->shape);
    dst = c ? mgopt_tensor_data_mut(p, c) : NULL;
    if (!dst && outs[i]->nbytes) ok = -1;
    else {
      if (outs[i]->nbytes) memcpy(dst, outs[i]->data, outs[i]->nbytes);
      cs[i] = mgopt_build_const(p, op->parent, op, mgopt__pu_value_name(op->outs[i]), c);
      if (!cs[i]) ok = -1;
    }
  }
  for (i = 0; i < op->nouts; i++)
    if (outs[i]) mgopt_eval_tensor_free(p, outs[i]);
  if (ok != 1) return ok < 0 ? -1 : 0;
  for (i = 0; i < op->nouts; i++)
    if (cs[i]) mgopt_value_replace_all_uses(op->outs[i], cs[i]);
  mgopt_op_erase(op);
  return 1;
}

/* The opaque ONNX op `op` with constant operands, evaluated by ONNX's
   kernels, becomes constants named as its outputs: 1 when it did, 0 when it
   stays (an operand not constant, no kernel, a limit, a result its declared
   type or readers do not take), -1 when memory ran out. */
static int mgopt__coo_fold(mgopt_program *p, mgopt_op *op) {
  mgopt_tensor *ins[64], *outs[16];
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
    ok = t && !mgopt__ev_seq_items(t, NULL, NULL) && !(op->outs[i]->flags & MGOPT_VALUE_ABSENT) &&
         mgopt__pu_replace_static_fits(p, op->outs[i], (mgopt_dtype)t->dtype, t->rank, t->shape);
    if (t) out_bytes += (int64_t)t->nbytes;
  }
  if (budget >= 0 && out_bytes > budget) ok = 0;
  return mgopt__coo_settle(p, op, outs, ok);
}

/* ---------------------------------------------------------------- control flow and sequences */

#define MGOPT__COO_CONE_OPS 1024 /* ops evaluated before one folded in place */
#define MGOPT__COO_EVAL_MAX_ELEMENTS ((int64_t)1 << 20) /* elements of a value computed while folding */

/* 1 when v holds (or may hold) an ONNX sequence: made by a sequence op, or
   an output of an op with nested blocks (a Loop may carry a sequence). */
static int mgopt__coo_seq_made(const mgopt_value *v) {
  const mgopt_op *d = v ? v->def : NULL;
  const char *t;
  if (!d || d->kind != MGOPT_OP_OPAQUE || !d->type || strncmp(d->type, "onnx::", 6) != 0) return 0;
  t = d->type + 6;
  return d->nblocks > 0 || strncmp(t, "Sequence", 8) == 0 || strcmp(t, "SplitToSequence") == 0;
}

/* The ONNX op `op` (If, Loop, or an op reading a sequence) evaluated in place
   (mgopt__eval_in_place: every value it reads, inside its blocks too, is a
   constant or computed from constants) becomes constants: 1 when it did, 0
   when it stays (a run-time value read, no kernel, a limit, an output that
   is a sequence something reads, a result over the growth limit), -1 when
   memory ran out. */
static int mgopt__coo_fold_in_place(mgopt_program *p, mgopt_op *op) {
  mgopt_tensor *outs[16];
  mgopt_eval_options eo;
  mgopt_onnx_eval_options oo;
  mgopt_diag d;
  int32_t i, ok = 1, any = 0;
  int64_t budget, out_bytes = 0;
  if (op->nouts < 1 || op->nouts > 16) return 0;
  budget = mgopt__fold_budget(op, MGOPT_FOLD_MAX_GROWTH_BYTES);
  memset(&eo, 0, sizeof eo);
  memset(&oo, 0, sizeof oo);
  /* a bound on the work: no value inside the evaluation grows past it */
  eo.max_elements = oo.max_elements = MGOPT__COO_EVAL_MAX_ELEMENTS;
  eo.max_loop_iterations = (int64_t)1 << 12;
  eo.op_fn = mgopt_onnx_eval_op;
  eo.op_ud = &oo;
  if (mgopt__eval_in_place(p, op, outs, &eo, MGOPT__COO_CONE_OPS, &d) != MGOPT_OK)
    return d.status == MGOPT_ERR_NOMEM ? -1 : 0;
  for (i = 0; i < op->nouts && ok; i++) {
    const mgopt_tensor *t = outs[i];
    if (!t) { /* a sequence (or an output nothing reads): it must be dead */
      ok = op->outs[i]->nuses == 0;
      continue;
    }
    any = 1;
    out_bytes += (int64_t)t->nbytes;
    ok = !(op->outs[i]->flags & MGOPT_VALUE_ABSENT) && (budget < 0 || out_bytes <= budget) &&
         mgopt__pu_replace_static_fits(p, op->outs[i], (mgopt_dtype)t->dtype, t->rank, t->shape);
  }
  if (!any && ok == 1) ok = 0; /* every output a sequence: nothing to fold */
  return mgopt__coo_settle(p, op, outs, ok);
}

/* An onnx::If whose condition is a constant becomes the branch it takes: the
   branch's ops move before it and its outputs stand for the If's. 1 when
   it did, 0 when it stays (a run-time condition; an output of the
   function the branch gives as a value it does not make, which would lose
   its name). */
static int mgopt__coo_if(mgopt_program *p, mgopt_op *op) {
  const mgopt_tensor *c = mgopt_value_const(mgopt_op_operand(op, "in0"));
  mgopt_block *b = NULL;
  const char *want;
  mgopt_value *outs[64];
  const char *names[64];
  int32_t i, j;
  if (!c || c->numel != 1 || !mgopt_tensor_data(p, (mgopt_tensor *)c) || c->dtype != MGOPT_DT_BOOL || op->nblocks != 2 ||
      op->nouts > 64)
    return 0;
  want = ((const uint8_t *)mgopt_tensor_data(p, (mgopt_tensor *)c))[0] ? "then_branch" : "else_branch";
  for (i = 0; i < op->nblocks; i++)
    if (op->blocks[i]->name && strcmp(op->blocks[i]->name, want) == 0) b = op->blocks[i];
  if (!b || b->nargs || b->nouts != op->nouts) return 0;
  for (i = 0; i < op->nouts; i++) {
    mgopt_value *v = b->outs[i]->value;
    names[i] = NULL;
    outs[i] = v;
    if (!mgopt_value_is_block_output(op->outs[i])) continue;
    /* a function output keeps its name: the branch must make the value, once */
    if (!v->def || v->def->parent != b || v->nblock_uses != 1) return 0;
    for (j = 0; j < i; j++)
      if (outs[j] == v) return 0;
    names[i] = op->outs[i]->name;
  }
  while (b->nouts) mgopt_block_remove_output(b, b->nouts - 1);
  while (b->first) mgopt_op_move_before(b->first, op);
  for (i = 0; i < op->nouts; i++) mgopt_value_replace_all_uses(op->outs[i], outs[i]);
  mgopt_op_erase(op);
  for (i = 0; i < op->nouts; i++) {
    int follows;
    if (!names[i]) continue;
    follows = outs[i]->def->name == outs[i]->name; /* an op named as its output keeps following it */
    if (mgopt_value_set_name(outs[i], names[i]) || (follows && mgopt_op_set_name(outs[i]->def, outs[i]->name))) return -1;
  }
  return mgopt_program_status(p) ? -1 : 1;
}

/* An onnx::CastLike of a constant to a value whose dtype is known (a
   run-time tensor: only its dtype is read) becomes the constant cast to
   that dtype by ONNX's kernel: 1 when it did, 0 when it stays, -1 on OOM. */
static int mgopt__coo_castlike(mgopt_program *p, mgopt_op *op) {
  mgopt_value *x = mgopt_op_operand(op, "in0"), *like = mgopt_op_operand(op, "in1");
  mgopt_tensor *ins[2], *outs[1] = {NULL};
  mgopt_onnx_eval_options eo;
  mgopt_diag d;
  int64_t zero = 0, budget;
  int ok;
  if (op->nslots != 2 || op->nouts != 1 || !x || !like || !(ins[0] = mgopt_value_const(x)) || mgopt_value_const(like) ||
      like->type.kind != MGOPT_TYPE_TENSOR || like->type.dtype == MGOPT_DT_UNKNOWN ||
      ins[0]->numel > MGOPT__COO_EVAL_MAX_ELEMENTS || !mgopt_tensor_data(p, ins[0]))
    return 0;
  budget = mgopt__fold_budget(op, MGOPT_FOLD_MAX_GROWTH_BYTES);
  if (!(ins[1] = mgopt_eval_tensor_new(p, (mgopt_dtype)like->type.dtype, 1, &zero))) return -1;
  memset(&eo, 0, sizeof eo);
  eo.max_elements = MGOPT__COO_EVAL_MAX_ELEMENTS;
  ok = mgopt_onnx_eval_op(&eo, p, op, ins, 2, outs, &d) == MGOPT_OK ? 1 : d.status == MGOPT_ERR_NOMEM ? -1 : 0;
  mgopt_eval_tensor_free(p, ins[1]);
  if (ok == 1 && budget >= 0 && (int64_t)outs[0]->nbytes > budget) ok = 0; /* a cast that widens a shared constant */
  if (ok == 1 && !mgopt__pu_replace_static_fits(p, op->outs[0], (mgopt_dtype)outs[0]->dtype, outs[0]->rank, outs[0]->shape))
    ok = 0;
  return mgopt__coo_settle(p, op, outs, ok);
}

/* 1 when an operand of op is not a constant and may be a sequence. */
static int mgopt__coo_reads_seq(const mgopt_op *op) {
  int32_t s, j;
  for (s = 0; s < op->nslots; s++)
    for (j = 0; j < op->slots[s].n; j++)
      if (mgopt__coo_seq_made(op->slots[s].uses[j].value)) return 1;
  return 0;
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
      int onnx = strncmp(op->type, "onnx::", 6) == 0;
      int r = onnx ? mgopt_onnx_reimport_op(p, op) : 0, f = 0;
      /* still opaque (at most its types were filled): it may fold */
      if (r >= 0 && onnx && !(op->flags & MGOPT_OP_ERASED)) {
        if (strcmp(op->type, "onnx::If") == 0) f = mgopt__coo_if(p, op);
        if (f == 0) f = mgopt__coo_fold(p, op);
        if (f == 0 && strcmp(op->type, "onnx::CastLike") == 0) f = mgopt__coo_castlike(p, op);
        if (f == 0 && (op->nblocks || mgopt__coo_reads_seq(op))) f = mgopt__coo_fold_in_place(p, op);
        if (f != 0) r = f;
      }
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
