/* src/passes/compression/distributive_quantized_binary_op_scale_normalization.c — common::distributive_quantized_binary_op_scale_normalization: a quantized add/sub reads one input at scale 1.

   Spec: mil_graph_passes.txt, "In the backend, for better performance,
   quantized op can have 1 input scale fused within the quantized op
   kernel"; reference §3.36,
   distributive_quantized_binary_op_scale_normalization.

   Before:
     main(%x: (2, int8), %y: (2, int8)) {
       %sx: (fp32)* = const(val=0.5)
       %sy: (fp32)* = const(val=0.25)
       %sz: (fp32)* = const(val=2)
       %dx: (2, fp32) = dequantize(input=%x, scale=%sx)
       %dy: (2, fp32) = dequantize(input=%y, scale=%sy)
       %a: (2, fp32) = add(x=%dx, y=%dy)
       %z: (2, int8) = quantize(input=%a, scale=%sz, output_dtype="int8")
       %r: (2, int8) = add(x=%z, y=%x)
     } -> (%r)
   After:
     main(%x: (2, int8), %y: (2, int8)) {
       %dx_normalized_scale: (fp32)* = const(val=2)
       %dx_normalized: (2, fp32) = dequantize(input=%x, scale=%dx_normalized_scale)
       %dy_normalized_scale: (fp32)* = const(val=1)
       %dy_normalized: (2, fp32) = dequantize(input=%y, scale=%dy_normalized_scale)
       %a: (2, fp32) = add(x=%dx_normalized, y=%dy_normalized)
       %z_scale: (fp32)* = const(val=8)
       %z: (2, int8) = quantize(input=%a, scale=%z_scale, output_dtype="int8")
       %r: (2, int8) = add(x=%z, y=%x)
     } -> (%r)

   Fires on: add or sub whose two operands are dequantize outputs, followed
   by an optional relu that is its only reader, followed by a quantize that
   is the only reader of that; no output of these ops is a block output;
   scales are constants of fp16 or fp32. The side whose dequantize has no
   axis and a one-element scale s_y is normalized (y first, else x: the
   reference swaps when only s_x is a scalar); the other dequantize's scale
   becomes s_x/s_y, the quantize's s_z/s_y, and the normalized side's 1.
   New dequantizes (named "<old>_normalized") feed this op only, so other
   readers of the old ones are untouched; an old dequantize goes when this
   op was its last reader. The quantize keeps its name and takes the new
   scale.
   Must not fire: another binary op (mul, real_div: not distributive); an
   operand that is not a dequantize; a relu or add/sub output with another
   reader; no quantize after; any of the five outputs a block output; both
   scales vectors (or with an axis); non-constant scales; a quotient whose
   magnitude exceeds 65504 or is below the smallest fp16 subnormal 2^-24
   anywhere (the reference's fp16 limits); s_y already 1 (nothing to do).
   Numeric contract: the quotients are computed in fp32 (each operand
   rounded to fp32 first, as the reference) and rounded once to their
   scale's dtype (fp16 scales stay fp16). Mathematically the quantized output
   is unchanged; in floating point each new scale carries one rounding, so
   an output integer may move by one unit where the exact value sits at a
   rounding boundary (tests/unit/test_qdq.c checks |before - after| <= 1 and
   both against a double-precision computation).
   Cost: worklist pattern rooted at add and sub, O(scale sizes) per match;
   nothing in a function without a quantize. */
#include "../../passes_internal.h"

#define MGOPT__DQS_FP16_MAX 65504.0
#define MGOPT__DQS_FP16_TINY 5.9604644775390625e-08 /* 2^-24, the smallest fp16 subnormal */

/* The scale tensor of dequantize or quantize op, if a float constant. */
static mgopt_tensor *mgopt__dqs_scale(const mgopt_op *op) {
  mgopt_value *v = mgopt_op_operand(op, "scale");
  mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
  return t && (t->dtype == MGOPT_DT_FP16 || t->dtype == MGOPT_DT_FP32) && t->numel > 0 ? t : NULL;
}

/* t / d elementwise in fp32, into a new tensor of t's dtype and shape; NULL
   when a quotient leaves fp16's range (see the header) or on OOM. */
static mgopt_tensor *mgopt__dqs_divide(mgopt_program *p, mgopt_tensor *t, float d) {
  mgopt_tensor *o = mgopt_tensor_new(p, (mgopt_dtype)t->dtype, t->rank, t->shape);
  int64_t i;
  if (!o) return NULL;
  for (i = 0; i < t->numel; i++) {
    volatile float q = (float)mgopt_tensor_get_f64(t, i) / d; /* one fp32 division, not wider */
    double a = fabs((double)q);
    if (!(a <= MGOPT__DQS_FP16_MAX) || a < MGOPT__DQS_FP16_TINY) return NULL;
    mgopt_tensor_set_f64(o, i, (double)q);
  }
  return o;
}

/* A copy of dequantize dq before pos reading scale s, named "<dq>_normalized". */
static mgopt_op *mgopt__dqs_dequantize(mgopt_rewriter *rw, mgopt_op *dq, mgopt_op *pos, mgopt_tensor *s) {
  static const char *const slots[3] = {"input", "zero_point", "scale"};
  mgopt_program *p = mgopt_rw_program(rw);
  const char *name = mgopt__pu_name2(p, mgopt__pu_value_name(dq->outs[0]), "_normalized");
  mgopt_value *vals[3];
  const mgopt_attr *ax = mgopt_op_attr(dq, "axis");
  mgopt_op *n;
  vals[0] = mgopt_op_operand(dq, "input");
  vals[1] = mgopt_op_operand(dq, "zero_point");
  vals[2] = mgopt_rw_const(rw, pos, mgopt__pu_name2(p, name, "_scale"), s);
  if (!vals[2]) return NULL;
  n = mgopt_rw_create(rw, pos, "dequantize", name, 3, slots, vals, 1);
  if (!n) return NULL;
  if ((ax && mgopt_op_set_attr(n, ax) != MGOPT_OK) || mgopt_op_infer(p, n, NULL) != MGOPT_OK) {
    mgopt__pu_erase_with_consts(rw, n);
    return NULL;
  }
  return n;
}

static int mgopt__dqs_normalize(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *vx = mgopt_op_operand(op, "x"), *vy = mgopt_op_operand(op, "y"), *osz, *nsz;
  mgopt_op *dx = vx ? mgopt__pu_def_of(vx, MGOPT_OP_dequantize) : NULL;
  mgopt_op *dy = vy ? mgopt__pu_def_of(vy, MGOPT_OP_dequantize) : NULL;
  mgopt_op *tail = op, *q, *u, *nx, *ny;
  mgopt_tensor *sx, *sy, *sz, *nsx, *nsz_t, *one;
  float d;
  int64_t i;
  MGOPT__UNUSED(ud);
  if (!dx || !dy || op->nouts != 1) return 0;
  u = mgopt__pu_single_user(op->outs[0]);
  if (u && u->kind == MGOPT_OP_relu && u->nouts == 1) tail = u;
  q = mgopt__pu_single_user(tail->outs[0]);
  if (!q || q->kind != MGOPT_OP_quantize || q->nouts != 1 || mgopt_op_operand(q, "input") != tail->outs[0]) return 0;
  if (mgopt__pu_is_block_output(dx->outs[0]) || mgopt__pu_is_block_output(dy->outs[0]) ||
      mgopt__pu_is_block_output(op->outs[0]) || mgopt__pu_is_block_output(tail->outs[0]) ||
      mgopt__pu_is_block_output(q->outs[0]))
    return 0;
  sx = mgopt__dqs_scale(dx);
  sy = mgopt__dqs_scale(dy);
  sz = mgopt__dqs_scale(q);
  if (!sx || !sy || !sz) return 0;
  /* the normalized side: a one-element scale without axis, y first */
  if (mgopt_op_attr(dy, "axis") || sy->numel != 1) {
    mgopt_op *t = dx;
    mgopt_tensor *ts = sx;
    if (mgopt_op_attr(dx, "axis") || sx->numel != 1) return 0;
    dx = dy;
    dy = t;
    sx = sy;
    sy = ts;
  }
  d = (float)mgopt_tensor_get_f64(sy, 0);
  if (d == 1.0f) return 0;
  nsx = mgopt__dqs_divide(p, sx, d);
  nsz_t = mgopt__dqs_divide(p, sz, d);
  one = mgopt_tensor_new(p, (mgopt_dtype)sy->dtype, sy->rank, sy->shape);
  if (!nsx || !nsz_t || !one) return 0;
  for (i = 0; i < one->numel; i++) mgopt_tensor_set_f64(one, i, 1.0);
  nx = mgopt__dqs_dequantize(rw, dx, op, nsx);
  ny = nx && dy != dx ? mgopt__dqs_dequantize(rw, dy, op, one) : nx;
  if (!nx || !ny) {
    if (nx) mgopt__pu_erase_with_consts(rw, nx);
    return 0;
  }
  nsz = mgopt_rw_const(rw, q, mgopt__pu_name2(p, mgopt__pu_value_name(q->outs[0]), "_scale"), nsz_t);
  if (!nsz) return 0;
  /* dx == dy: s_x/s_y is 1 too, one new dequantize serves both operands */
  mgopt_rw_set_operand(rw, op, "x", vx == dx->outs[0] ? nx->outs[0] : ny->outs[0]);
  mgopt_rw_set_operand(rw, op, "y", vy == dx->outs[0] ? nx->outs[0] : ny->outs[0]);
  osz = mgopt_op_operand(q, "scale");
  mgopt_rw_set_operand(rw, q, "scale", nsz);
  mgopt__pu_erase_if_dead(rw, osz->def);
  mgopt__pu_erase_with_consts(rw, dx);
  if (dy != dx) mgopt__pu_erase_with_consts(rw, dy);
  return 1;
}

static const mgopt_pattern mgopt__dqs_patterns[] = {
    {"quantized_add", MGOPT_OP_add, NULL, 1, mgopt__dqs_normalize, NULL},
    {"quantized_sub", MGOPT_OP_sub, NULL, 1, mgopt__dqs_normalize, NULL},
};

/* every match ends in a quantize: functions without one are skipped */
static const int32_t mgopt__dqs_needs[] = {MGOPT_OP_quantize};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(compression, common, distributive_quantized_binary_op_scale_normalization,
                                   "a quantized add or sub reads one input at scale 1, the other and the output scales divided",
                                   mgopt__dqs_patterns, mgopt__dqs_needs);
