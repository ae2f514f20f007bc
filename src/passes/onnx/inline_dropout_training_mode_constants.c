/* src/passes/onnx/inline_dropout_training_mode_constants.c — onnx::inline_dropout_training_mode_constants: a Dropout whose training_mode is statically false becomes its input.

   Spec: onnx_ir_optimizer_passes.txt, "inline_dropout_training_mode_constants".
   ONNX Dropout has no canonical op: it stays opaque as onnx::Dropout with the
   positional operands in0 (data), in1 (ratio), in2 (training_mode) and the
   outputs output and (optional) mask.

   Before:
     main(%x: (2, 3, fp32)) {
       %r: (fp32)* = const(val=0.5)
       %t: (bool)* = const(val=true)
       %f: (bool) = logical_not(x=%t)
       %d: (2, 3, fp32) = onnx::Dropout(in0=%x, in1=%r, in2=%f)
       %y: (2, 3, fp32) = relu(x=%d)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %r: (fp32)* = const(val=0.5)
       %t: (bool)* = const(val=true)
       %y: (2, 3, fp32) = relu(x=%x)
     } -> (%y)

   Fires on: onnx::Dropout whose training_mode is absent or statically false:
   a constant false, or a chain of logical_not / identity / cast ops over a
   constant that evaluates to false. Then Dropout is the identity on in0: its
   output is replaced by in0 and, when the mask output is unused or absent,
   the op is erased. With a used mask, the training_mode operand is inlined
   instead (dropped, which ONNX reads as false) and the op stays.
   Must not fire: training_mode true or computed at run time; an output that
   is a function output while in0 is an input or already an output (the name
   must survive); in0's declared type does not suit a reader of the output,
   or differs from it while it is a function output (mgopt__pu_replace_fits).
   In those cases a constant training_mode is still inlined.
   Cost: one worklist run, O(ops); the static evaluation follows at most 16
   producers. */
#include "../../passes_internal.h"

/* 1 false, 0 true, -1 not static */
static int mgopt__idt_is_false(const mgopt_value *v) {
  int negate = 0, depth;
  for (depth = 0; depth < 16 && v; depth++) {
    const mgopt_tensor *t = mgopt_value_const(v);
    const mgopt_op *d = v->def;
    if (t) {
      int64_t i;
      int any = 0;
      if (t->numel != 1 || t->dtype == MGOPT_DT_STRING) return -1;
      for (i = 0; i < t->numel; i++)
        if (mgopt_tensor_get_f64(t, i) != 0.0) any = 1;
      return (any == negate) ? 1 : 0;
    }
    if (!d) return -1;
    if (d->kind == MGOPT_OP_logical_not) negate = !negate;
    else if (d->kind != MGOPT_OP_identity && !(d->kind == MGOPT_OP_cast && v->type.dtype == MGOPT_DT_BOOL))
      return -1;
    v = mgopt_op_operand(d, "x");
  }
  return -1;
}

MGOPT__PRIVATE int mgopt__pu_dropout_inference(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *data = mgopt_op_operand(op, "in0"), *tm = mgopt_op_operand(op, "in2"), *out;
  int mask_used, changed = 0;
  MGOPT__UNUSED(ud);
  if (!data || op->nouts < 1 || op->nouts > 2 || op->nblocks) return 0;
  if (tm && mgopt__idt_is_false(tm) != 1) return 0;
  out = op->outs[0];
  mask_used = op->nouts == 2 && !(op->outs[1]->flags & MGOPT_VALUE_ABSENT) && op->outs[1]->nuses > 0;
  if (out->nuses && !(mgopt__pu_is_func_output(out) && (!data->def || mgopt__pu_is_func_output(data))) &&
      mgopt__pu_replace_fits(mgopt_rw_program(rw), out, data)) {
    mgopt_rw_replace_value(rw, out, data);
    changed = 1;
  }
  if (changed && !mask_used && out->nuses == 0) {
    mgopt_op *tdef = tm ? tm->def : NULL;
    mgopt_rw_erase(rw, op);
    /* the training_mode chain fed only this op: it goes too (constants stay for dead_code_elimination) */
    while (tdef && tdef->kind != MGOPT_OP_const && mgopt__op_is_dead(tdef)) {
      mgopt_value *in = mgopt_op_operand(tdef, "x");
      mgopt_rw_erase(rw, tdef);
      tdef = in ? in->def : NULL;
    }
    return 1;
  }
  if (tm && (mask_used || out->nuses)) {
    mgopt_rw_set_operand(rw, op, "in2", NULL);
    changed = 1;
  }
  return changed;
}

static const mgopt_pattern mgopt__idt_patterns[] = {
    {"inline_dropout_training_mode_constants", MGOPT_OP_OPAQUE, "onnx::Dropout", 1, mgopt__pu_dropout_inference, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, inline_dropout_training_mode_constants,
                           "a Dropout whose training_mode is statically false becomes its input",
                           mgopt__idt_patterns);
