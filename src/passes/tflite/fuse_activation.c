/* src/passes/tflite/fuse_activation.c — tflite::fuse_activation: a relu or relu6 after a conv or fully connected layer becomes that op's fused_activation.

   Spec: tflite_operation_fusion.md, "What are fused operations": convolution
   (conv2d, bias add, relu) and fully connected (matmul, bias add, relu) are
   single fused TFLite ops. conv and linear carry the activation in their
   optional attribute fused_activation ("none", "relu", "relu6"); the
   evaluator applies it, and the ONNX writer writes it back as the plain
   sequence (Conv/Gemm, then Relu or Clip(0, 6)), so a file never changes
   meaning. Biases fused by fuse_conv_bias / fuse_linear_bias first are the
   op's bias operand here.

   Before:
     main(%x: (1, 2, 4, 4, fp32)) {
       %w: (3, 2, 1, 1, fp32)* = const(val=[[[[1]], [[2]]], [[[3]], [[4]]], [[[5]], [[6]]]])
       %c: (1, 3, 4, 4, fp32) = conv(x=%x, weight=%w)
       %y: (1, 3, 4, 4, fp32) = relu(x=%c)
     } -> (%y)
   After:
     main(%x: (1, 2, 4, 4, fp32)) {
       %w: (3, 2, 1, 1, fp32)* = const(val=[[[[1]], [[2]]], [[[3]], [[4]]], [[[5]], [[6]]]])
       %y: (1, 3, 4, 4, fp32) = conv(x=%x, weight=%w, fused_activation="relu")
     } -> (%y)

   The activations: relu; relu6; clip(alpha=0, beta=6) (ONNX's Clip(0, 6))
   as relu6 and clip(alpha=0) without an upper bound as relu. The fully
   connected forms: linear (+ bias), and matmul(x, W) with W a constant
   matrix (transpose_x false), optionally followed by add(., c) with c a
   constant vector of W's output width, become
   linear(x, weight=W^T, bias=c, fused_activation=...) (the weight
   transposed once; exact).
   Numeric contract: exact. The activation clamps the op's rounded output
   (max(0, y), min(max(0, y), 6)), which is what the separate op did.
   Fires on: the patterns above where each value between the first op and
   the activation is read only by the next op and is no block output, the
   dtype is a float one, the op has no fused activation yet, and the target
   accepts the fused op.
   Must not fire: an extra reader of the pre-activation value; a
   pre-activation value that is a block output; other activations (sigmoid,
   leaky_relu, clip to other bounds); a conv_transpose; a non-constant
   matmul weight or bias, a bias of another shape; transposed matmul
   inputs x; integer dtypes.
   Cost: worklist patterns, O(activations), plus the transposed weight. */
#include "../../passes_internal.h"

/* The activation op act stands for: "relu", "relu6" or NULL. */
static const char *mgopt__fa_kind(const mgopt_op *act) {
  if (act->kind == MGOPT_OP_relu) return "relu";
  if (act->kind == MGOPT_OP_relu6) return "relu6";
  if (act->kind == MGOPT_OP_clip) {
    double lo = mgopt_op_get_float(act, "alpha", -HUGE_VAL), hi = mgopt_op_get_float(act, "beta", HUGE_VAL);
    if (lo == 0.0 && hi == 6.0) return "relu6";
    if (lo == 0.0 && hi == HUGE_VAL) return "relu";
  }
  return NULL;
}

/* 1 when v is read by one op only and is no block output. */
static int mgopt__fa_private(const mgopt_value *v) { return mgopt__pu_single_use(v) && !mgopt__pu_is_block_output(v); }

/* The activation's output name moves to v (the fused op's output). */
static void mgopt__fa_take_name(mgopt_rewriter *rw, mgopt_op *act, mgopt_value *v) {
  const char *name = act->outs[0]->name;
  int out = mgopt__pu_is_block_output(act->outs[0]);
  mgopt__pu_replace_value(rw, act->outs[0], v);
  mgopt_rw_erase(rw, act);
  if (!out && name) mgopt__pu_rename(v, name);
  mgopt__pu_sync_op_name(v->def);
}

/* conv / linear (+ bias) -> act */
static int mgopt__fa_direct(mgopt_rewriter *rw, mgopt_op *act, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *v = mgopt_op_operand(act, "x");
  const char *kind = mgopt__fa_kind(act);
  mgopt_op *d;
  MGOPT__UNUSED(ud);
  if (!kind || !v || act->nouts != 1 || !(d = v->def) || (d->kind != MGOPT_OP_conv && d->kind != MGOPT_OP_linear) ||
      d->nouts != 1 || mgopt__pu_fused_act(d) || !mgopt__fa_private(v) ||
      !mgopt_dtype_is_float((mgopt_dtype)v->type.dtype) || act->outs[0]->type.dtype != v->type.dtype ||
      !mgopt__pu_replace_fits(p, act->outs[0], v))
    return 0;
  if (mgopt_op_set_string(d, "fused_activation", kind)) return 0;
  if (!mgopt_program_target_accepts(p, d)) {
    mgopt_op_remove_attr(d, "fused_activation");
    return 0;
  }
  mgopt__fa_take_name(rw, act, v);
  return 1;
}

/* matmul(x, W) (+ c) -> act becomes linear(x, W^T, c, fused_activation) */
static int mgopt__fa_matmul(mgopt_rewriter *rw, mgopt_op *act, void *ud) {
  static const char *const slots[3] = {"x", "weight", "bias"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *v = mgopt_op_operand(act, "x"), *mv, *x, *wv, *vals[3];
  const char *kind = mgopt__fa_kind(act), *name;
  mgopt_op *add = NULL, *mm, *lin;
  mgopt_tensor *w, *c = NULL, *wt;
  mgopt_dtype dt;
  MGOPT__UNUSED(ud);
  if (!kind || !v || act->nouts != 1 || !v->def || !mgopt__fa_private(v)) return 0;
  mv = v;
  if (v->def->kind == MGOPT_OP_add && v->def->nouts == 1) {
    mgopt_value *a = mgopt_op_operand(v->def, "x"), *b = mgopt_op_operand(v->def, "y");
    add = v->def;
    if (a && b && (c = mgopt_value_const(b)) != NULL && a->def && a->def->kind == MGOPT_OP_matmul) mv = a;
    else if (a && b && (c = mgopt_value_const(a)) != NULL && b->def && b->def->kind == MGOPT_OP_matmul) mv = b;
    else return 0;
    if (!mgopt__fa_private(mv)) return 0;
  }
  mm = mv->def;
  if (!mm || mm->kind != MGOPT_OP_matmul || mm->nouts != 1 || mgopt_op_get_bool(mm, "transpose_x", 0)) return 0;
  x = mgopt_op_operand(mm, "x");
  wv = mgopt_op_operand(mm, "y");
  if (!x || !wv || !(w = mgopt_value_const(wv)) || w->rank != 2 || mgopt_value_const(x)) return 0;
  dt = (mgopt_dtype)w->dtype;
  if (!mgopt__pw_is_float_weight(dt) || x->type.dtype != dt || act->outs[0]->type.dtype != dt || x->type.rank < 1)
    return 0;
  wt = mgopt_op_get_bool(mm, "transpose_y", 0) ? w : mgopt__tensor_transpose2d(p, w); /* [N, K] */
  if (!wt) return 0;
  if (c && (c->dtype != dt || c->rank != 1 || c->shape[0] != wt->shape[0])) return 0;
  if (!mgopt__pu_replace_fits(p, act->outs[0], v)) return 0;
  name = mgopt__pu_value_name(act->outs[0]);
  vals[0] = x;
  vals[1] = wt == w ? wv : mgopt_rw_const(rw, mm, mgopt__pu_name2(p, mgopt__pu_value_name(wv), "_transposed"), wt);
  vals[2] = c ? (mgopt_value_const(mgopt_op_operand(add, "y")) == c ? mgopt_op_operand(add, "y") : mgopt_op_operand(add, "x"))
              : NULL;
  if (!vals[1]) return 0;
  lin = mgopt_rw_create(rw, act, "linear", mgopt__pu_name2(p, name, "_fused"), c ? 3 : 2, slots, vals, 1);
  if (!lin || mgopt_op_set_string(lin, "fused_activation", kind) || mgopt_op_infer(p, lin, NULL) != MGOPT_OK ||
      !mgopt_program_target_accepts(p, lin) || !mgopt__pu_adopt_type(p, lin->outs[0], act->outs[0])) {
    if (lin) mgopt_rw_erase(rw, lin);
    if (vals[1] != wv) mgopt_rw_erase(rw, vals[1]->def);
    return 0;
  }
  mgopt__fa_take_name(rw, act, lin->outs[0]);
  if (add) mgopt__pu_erase_with_consts(rw, add);
  mgopt__pu_erase_with_consts(rw, mm);
  return 1;
}

static const mgopt_pattern mgopt__fa_patterns[] = {
    {"relu_direct", MGOPT_OP_relu, NULL, 2, mgopt__fa_direct, NULL},
    {"relu6_direct", MGOPT_OP_relu6, NULL, 2, mgopt__fa_direct, NULL},
    {"clip_direct", MGOPT_OP_clip, NULL, 2, mgopt__fa_direct, NULL},
    {"relu_matmul", MGOPT_OP_relu, NULL, 1, mgopt__fa_matmul, NULL},
    {"relu6_matmul", MGOPT_OP_relu6, NULL, 1, mgopt__fa_matmul, NULL},
    {"clip_matmul", MGOPT_OP_clip, NULL, 1, mgopt__fa_matmul, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(tflite, tflite, fuse_activation,
                           "a relu or relu6 after a conv or fully connected layer becomes its fused_activation",
                           mgopt__fa_patterns);
