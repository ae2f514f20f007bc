/* src/passes/onnx/fold_shape_ops.c — onnx::fold_shape_ops: a Shape of a statically shaped tensor, a gather or slice of a shape that picks only static dims, and a ConstantOfShape of a constant shape, become constants.

   Spec: ONNX Runtime's basic-level constant folding, for the two ONNX ops
   that have no canonical form (they stay opaque as onnx::Shape and
   onnx::ConstantOfShape) and so no folding kernel: Shape needs only its
   input's static dims, ConstantOfShape only its constant shape. The
   constants then fold on through const_elimination (the slice and concat
   of a shape computation), and a Pad or Resize whose sizes were computed
   from a shape reads constants.

   Before:
     main(%x: (1, 3, 8, 8, fp32)) {
       %s: (4, int64) = onnx::Shape(in0=%x)
       %h: (2, int64) = onnx::Shape(in0=%x, start=2)
       %c: (2, int64)* = const(val=[2, 3])
       %z: (2, 3, fp32) = onnx::ConstantOfShape(in0=%c, value=tensor<(1, fp32)>([0.5]))
     } -> (%s, %h, %z)
   After:
     main(%x: (1, 3, 8, 8, fp32)) {
       %s: (4, int64)* = const(val=[1, 3, 8, 8])
       %h: (2, int64)* = const(val=[8, 8])
       %c: (2, int64)* = const(val=[2, 3])
       %z: (2, 3, fp32)* = const(val=[[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]])
     } -> (%s, %h, %z)

   Fires on: onnx::Shape with one input of known rank whose dims in
   [start, end) (opset 15's attributes, negative counted from the end,
   clamped as ONNX does) are all static; onnx::ConstantOfShape whose shape
   is a constant 1-d integer tensor of positive dims with at most 2^20
   elements in all, and whose value (default: fp32 0) is one element of a
   whole-byte dtype; a gather or slice_by_index of a computed integer
   vector whose every picked element is known through
   mgopt__pu_shape_trace (Shape, gather, slice, concat, casts, integer
   add/sub/mul of known elements that do not wrap in their dtype): a Gather
   of a static dim of a shape whose other dims are symbolic, as ONNX
   Runtime folds it. The constant takes the output's name (function outputs
   keep theirs); operands left unused stay for dead_code_elimination.
   Must not fire: a symbolic or unknown dim in the range (of a Shape, or
   picked by a gather or slice); a product that wraps in int32; an input of
   unknown rank or a non-tensor; a shape computed at run time, a zero or
   negative dim, more elements than the limit (the model would carry the
   whole tensor); a value that is not one element; when the constant's
   static type does not suit a reader of the output
   (mgopt__pu_replace_static_fits).
   Cost: one worklist run, O(ops); a ConstantOfShape writes its elements
   once. */
#include "../../passes_internal.h"

#define MGOPT__FSO_MAX_ELEMENTS ((int64_t)1 << 20)

/* Replaces op's only output by constant t. */
static int mgopt__fso_replace(mgopt_rewriter *rw, mgopt_op *op, mgopt_tensor *t) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *c;
  if (!t || !mgopt__pu_replace_static_fits(p, op->outs[0], (mgopt_dtype)t->dtype, t->rank, t->shape)) return 0;
  c = mgopt_rw_const(rw, op, op->outs[0]->name, t);
  if (!c) return 0;
  mgopt_rw_replace_op(rw, op, &c);
  return 1;
}

static int mgopt__fso_shape(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "in0");
  int64_t start, end, n, i;
  mgopt_tensor *t;
  MGOPT__UNUSED(ud);
  if (!mgopt__pu_onnx_shape_range(op, &start, &end)) return 0;
  n = end - start;
  for (i = start; i < end; i++)
    if (!mgopt_dim_is_static(x->type.dims[i])) return 0;
  t = mgopt_tensor_new(mgopt_rw_program(rw), MGOPT_DT_INT64, 1, &n);
  if (!t) return 0;
  for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, x->type.dims[start + i].v);
  return mgopt__fso_replace(rw, op, t);
}

static int mgopt__fso_constant_of_shape(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *sv = mgopt_op_operand(op, "in0");
  mgopt_tensor *st = sv ? mgopt_value_const(sv) : NULL, *t;
  const mgopt_attr *va = mgopt_op_attr(op, "value");
  const mgopt_tensor *v = va && va->kind == MGOPT_ATTR_TENSOR ? va->u.t : NULL;
  int64_t shape[MGOPT_MAX_RANK], numel = 1, i;
  size_t es;
  const uint8_t *src;
  uint8_t *dst;
  float zero = 0.0f;
  MGOPT__UNUSED(ud);
  if (!st || op->nouts != 1 || op->nblocks || mgopt_op_operand_count(op) != 1 || st->rank != 1 ||
      !mgopt_dtype_is_int((mgopt_dtype)st->dtype) || st->numel > MGOPT_MAX_RANK)
    return 0;
  if (va && (!v || v->numel != 1 || v->dtype == MGOPT_DT_STRING || mgopt_dtype_bits((mgopt_dtype)v->dtype) % 8 ||
             v->nbytes * 8 != (size_t)mgopt_dtype_bits((mgopt_dtype)v->dtype)))
    return 0;
  for (i = 0; i < st->numel; i++) {
    shape[i] = mgopt_tensor_get_i64(st, i);
    if (shape[i] <= 0 || !mgopt__mul_i64(numel, shape[i], &numel) || numel > MGOPT__FSO_MAX_ELEMENTS) return 0;
  }
  t = mgopt_tensor_new(p, v ? (mgopt_dtype)v->dtype : MGOPT_DT_FP32, (int32_t)st->numel, shape);
  if (!t) return 0;
  es = v ? v->nbytes : sizeof zero;
  src = v ? (const uint8_t *)v->data : (const uint8_t *)&zero;
  dst = (uint8_t *)t->data;
  for (i = 0; i < numel; i++) memcpy(dst + (size_t)i * es, src, es);
  return mgopt__fso_replace(rw, op, t);
}

/* A gather or slice_by_index of a shape (any chain mgopt__pu_shape_trace
   reads) whose every element is known: a constant, though the shape has
   symbolic dims elsewhere. Only when x is computed (constants are
   const_elimination's). */
static int mgopt__fso_pick(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *out = op->nouts == 1 ? op->outs[0] : NULL;
  mgopt__shape_elt el[MGOPT_MAX_RANK];
  mgopt_tensor *t;
  int64_t n, i;
  MGOPT__UNUSED(ud);
  if (!x || !out || op->nblocks || mgopt_value_const(x) || out->type.rank < 0 || out->type.rank > 1 ||
      (out->type.dtype != MGOPT_DT_INT32 && out->type.dtype != MGOPT_DT_INT64))
    return 0;
  n = mgopt__pu_shape_trace(mgopt_rw_program(rw), out, el);
  if (n < 0 || (out->type.rank == 0 && n != 1)) return 0;
  for (i = 0; i < n; i++)
    if (el[i].kind != MGOPT__SHAPE_ELT_CONST) return 0;
  t = mgopt_tensor_new(mgopt_rw_program(rw), (mgopt_dtype)out->type.dtype, out->type.rank, &n);
  if (!t) return 0;
  for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, el[i].v);
  return mgopt__fso_replace(rw, op, t);
}

static const mgopt_pattern mgopt__fso_patterns[] = {
    MGOPT__PATTERN("fold_shape_gather", MGOPT_OP_gather, 1, mgopt__fso_pick),
    MGOPT__PATTERN("fold_shape_slice", MGOPT_OP_slice_by_index, 1, mgopt__fso_pick),
    MGOPT__OPAQUE_PATTERN("fold_shape", "onnx::Shape", 1, mgopt__fso_shape),
    MGOPT__OPAQUE_PATTERN("fold_constant_of_shape", "onnx::ConstantOfShape", 1, mgopt__fso_constant_of_shape),
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, fold_shape_ops,
                           "a Shape of a statically shaped tensor, a gather or slice of a shape that picks only "
                           "static dims, and a ConstantOfShape of a constant shape, become constants",
                           mgopt__fso_patterns);
