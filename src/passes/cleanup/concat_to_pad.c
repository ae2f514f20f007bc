/* src/passes/cleanup/concat_to_pad.c — common::concat_to_pad: a concat of one tensor with constants that hold one value becomes a constant pad.

   Spec: none in MIL; an mgopt canonicalization. Converters write a channel
   pad as a concat with a block of zeros (TensorFlow's Pad on channels comes
   out of tf2onnx as ConstantOfShape + Concat). Folding the ConstantOfShape
   stores the whole block of zeros in the file; a pad stores its amounts.

   Before:
     main(%x: (1, 3, 2, fp32)) {
       %z: (1, 2, 2, fp32)* = const(val=[[[0, 0], [0, 0]]])
       %y: (1, 5, 2, fp32) = concat(values=(%x, %z), axis=1, interleave=false)
     } -> (%y)
   After:
     main(%x: (1, 3, 2, fp32)) {
       %y_pad_0: (4, int32)* = const(val=[0, 2, 0, 0])
       %y: (1, 5, 2, fp32) = pad(x=%x, pad=%y_pad_0, mode="constant", constant_val=0.0)
     } -> (%y)

   Exact: every element of the result is the tensor's or the constant's,
   bit for bit (the constants' elements are compared as bytes, so a block of
   -0.0 pads with -0.0 and a block mixing 0.0 and -0.0 is left alone).
   Fires on: a concat (interleave false) of fp32, fp16 or bf16 values, one
   of them not constant and every other a constant whose elements all have
   the same bytes, or a fill of a constant value (or of the default 0) to a
   static shape (the fold of a block larger than 1 KB is refused: the file
   would grow), the same for all of them and not a NaN; the constants
   before the tensor pad before it, those after pad after it; the axis in
   range. The pad amounts cover the dims from the axis to the last (pad's
   vector addresses the last dims). The concat's output keeps its name.
   Must not fire: two or more non-constant values (no single tensor to
   pad); constants holding different values; interleave; integer and other
   dtypes (pad's constant_val is a float, and ONNX's Pad import takes
   floats only); a symbolic size on the axis of a constant (not possible:
   constants are static); a target that cannot write pad (taken back).
   Cost: worklist patterns, O(concat operands) plus one pass over each
   constant's bytes. */
#include "../../passes_internal.h"

/* 1 when t's elements all have the bytes of its first, which go to elem */
static int mgopt__ctp_splat(mgopt_program *p, mgopt_tensor *t, size_t esize, unsigned char *elem) {
  const unsigned char *d = (const unsigned char *)mgopt_tensor_data(p, t);
  int64_t i;
  if (!d || t->numel < 1 || t->nbytes != (size_t)t->numel * esize) return 0;
  memcpy(elem, d, esize);
  for (i = 1; i < t->numel; i++)
    if (memcmp(d + (size_t)i * esize, elem, esize) != 0) return 0;
  return 1;
}

/* 1 when v is made by a fill of a constant value (0 when absent) to its
   static type of dtype dt: elem gets the value's bytes in dt, *len v's size
   on axis. Left unfolded, a fill is how a block of zeros stays small. */
static int mgopt__ctp_fill(mgopt_program *p, const mgopt_value *v, int32_t dt, size_t esize, int64_t axis,
                           unsigned char *elem, int64_t *len) {
  const mgopt_op *op = v->def;
  const mgopt_value *val;
  const mgopt_tensor *c = NULL;
  mgopt_tensor *t;
  if (!op || op->kind != MGOPT_OP_fill || !mgopt_type_is_static(&v->type) || v->type.dtype != dt) return 0;
  val = mgopt_op_operand(op, "value");
  if (val && (!(c = mgopt_value_const(val)) || c->numel != 1 || c->dtype != dt)) return 0;
  t = mgopt_tensor_new(p, (mgopt_dtype)dt, 0, NULL);
  if (!t || !mgopt_tensor_data_mut(p, t) || t->nbytes != esize) return 0;
  mgopt_tensor_set_f64(t, 0, c ? mgopt_tensor_get_f64(c, 0) : 0.0);
  memcpy(elem, t->data, esize);
  *len = v->type.dims[axis].v;
  return 1;
}

static int mgopt__ctp_rewrite(mgopt_rewriter *rw, mgopt_op *cat, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = NULL, *y, *first = NULL;
  unsigned char want[8], got[8];
  int64_t axis, before = 0, after = 0;
  int32_t si, i, n, rank, dt;
  size_t esize;
  double cval;
  mgopt_op *pad;
  MGOPT__UNUSED(ud);
  if (cat->nouts != 1 || mgopt_op_get_bool(cat, "interleave", 0)) return 0;
  y = cat->outs[0];
  if (y->type.kind != MGOPT_TYPE_TENSOR || y->type.rank < 1 || y->type.rank > MGOPT_MAX_RANK) return 0;
  rank = y->type.rank;
  dt = y->type.dtype;
  if (dt == MGOPT_DT_FP32) esize = 4;
  else if (dt == MGOPT_DT_FP16 || dt == MGOPT_DT_BF16) esize = 2;
  else return 0;
  axis = mgopt__pu_norm_axis(mgopt_op_get_int(cat, "axis", MGOPT_MAX_RANK + 1), rank);
  si = mgopt_op_slot_index(cat, "values");
  if (axis < 0 || si < 0 || cat->slots[si].n < 2) return 0;
  n = cat->slots[si].n;
  for (i = 0; i < n; i++) {
    mgopt_value *v = cat->slots[si].uses[i].value;
    mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
    int64_t len;
    if (!v || v->type.kind != MGOPT_TYPE_TENSOR || v->type.dtype != dt || v->type.rank != rank) return 0;
    if (t) {
      if (t->dtype != dt || t->rank != rank || !mgopt__ctp_splat(p, t, esize, first ? got : want)) return 0;
      len = t->shape[axis];
    } else if (!mgopt__ctp_fill(p, v, dt, esize, axis, first ? got : want, &len)) {
      if (x) return 0;
      x = v;
      continue;
    }
    if (first && memcmp(got, want, esize) != 0) return 0;
    first = v;
    if (x) after += len;
    else before += len;
  }
  if (!x || !first) return 0;
  {
    mgopt_tensor *e = mgopt_tensor_new(p, (mgopt_dtype)dt, 0, NULL);
    if (!e || !mgopt_tensor_data_mut(p, e)) return 0;
    memcpy(e->data, want, esize);
    cval = mgopt_tensor_get_f64(e, 0);
  }
  if (cval != cval) return 0;
  pad = mgopt__pu_const_pad(rw, cat, x, rank, axis, before, after, cval,
                            mgopt_program_fresh_name(p, mgopt__pu_name2(p, mgopt__pu_value_name(y), "_pad")), y->name);
  if (!pad) return 0;
  return mgopt__pu_fuse_finish_named(rw, &pad, 1, cat, NULL, 0);
}

static const mgopt_pattern mgopt__ctp_patterns[] = {
    {"concat_to_pad", MGOPT_OP_concat, NULL, 1, mgopt__ctp_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, concat_to_pad,
                           "a concat of one tensor with constants of one value becomes a constant pad",
                           mgopt__ctp_patterns);
