/* src/passes/compression/nullify_redundant_quantization_zero_point.c — common::nullify_redundant_quantization_zero_point: zero points of 0 dropped, ±128 folded into int8 <-> uint8.

   Spec: mil_graph_passes.txt, "In Core ML quantization, the performance is
   better when zero point = 0"; reference §3.36,
   nullify_redundant_quantization_zero_point.

   Before:
     main(%x: (2, fp32)) {
       %s: (fp32)* = const(val=0.5)
       %z: (int8)* = const(val=-128)
       %q: (2, int8) = quantize(input=%x, zero_point=%z, scale=%s, output_dtype="int8")
       %t: (fp32)* = const(val=0.25)
       %y: (int8)* = const(val=-128)
       %d: (2, fp32) = dequantize(input=%q, zero_point=%y, scale=%t)
     } -> (%d)
   After:
     main(%x: (2, fp32)) {
       %s: (fp32)* = const(val=0.5)
       %q: (2, uint8) = quantize(input=%x, scale=%s, output_dtype="uint8")
       %t: (fp32)* = const(val=0.25)
       %d: (2, fp32) = dequantize(input=%q, scale=%t)
     } -> (%d)

   Fires on, each rewriting the ops in place (names kept):
   (a) a quantize or dequantize whose zero_point is a constant of zeros: the
       zero_point goes;
   (b) a dequantize of a constant int8 input with zero_point all -128: the
       input becomes the uint8 constant q + 128 and the zero_point goes; of a
       constant uint8 input with zero_point all 128: the int8 constant q - 128;
   (c) a quantize to int8 with zero_point all -128 (to uint8 with all 128)
       whose output's one use is a dequantize with zero_point all -128 (all
       128): both lose their zero_point and the quantize makes uint8 (int8).
   Must not fire: a zero point that is not a constant, or has other values;
   (b) on an input that is not a constant, that another op also reads (the
   program would hold both constants), or whose dtype is not the one the zero
   point implies (the reference shifts a uint8 input by 128 too and wraps);
   (c) when the quantize's output has another reader or is a block output
   (the reference removes it anyway), or the dequantize's zero point differs.
   Numeric contract: exact. (b) shifts every integer by 128 exactly (int8
   [-128, 127] <-> uint8 [0, 255]); (c) clip(round(x/s) - 128, -128, 127) + 128
   == clip(round(x/s), 0, 255), so the dequantized values are bit-identical.
   Cost: worklist patterns rooted at quantize and dequantize, O(size of the
   zero point, and of the input constant for (b)). */
#include "../../passes_internal.h"

/* v is a non-empty constant whose elements all equal x (any integer or float dtype). */
static int mgopt__nzp_all(const mgopt_value *v, double x) { return v && mgopt__pu_const_all(v, x); }

/* (a): the zero point of op is all 0: drop it. */
static int mgopt__nzp_zero(mgopt_rewriter *rw, mgopt_op *op) {
  mgopt_value *zp = mgopt_op_operand(op, "zero_point");
  if (!mgopt__nzp_all(zp, 0.0)) return 0;
  if (mgopt_rw_set_operand(rw, op, "zero_point", NULL) != MGOPT_OK) return 0;
  mgopt__pu_erase_if_dead(rw, zp->def);
  return 1;
}

/* (b): dequantize(const q, zp = -128 int8 / +128 uint8) reads q shifted into the other dtype. */
static int mgopt__nzp_const_input(mgopt_rewriter *rw, mgopt_op *dq) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *zp = mgopt_op_operand(dq, "zero_point"), *in = mgopt_op_operand(dq, "input"), *nv;
  mgopt_tensor *t = in ? mgopt_value_const(in) : NULL, *nt;
  mgopt_dtype to;
  int64_t i, shift;
  if (!t || in->nuses != 1 || mgopt__pu_is_block_output(in)) return 0;
  if (t->dtype == MGOPT_DT_INT8 && mgopt__nzp_all(zp, -128.0)) {
    to = MGOPT_DT_UINT8;
    shift = 128;
  } else if (t->dtype == MGOPT_DT_UINT8 && mgopt__nzp_all(zp, 128.0)) {
    to = MGOPT_DT_INT8;
    shift = -128;
  } else {
    return 0;
  }
  nt = mgopt_tensor_new(p, to, t->rank, t->shape);
  if (!nt || !mgopt_tensor_data(p, t)) return 0;
  for (i = 0; i < t->numel; i++) mgopt_tensor_set_i64(nt, i, mgopt_tensor_get_i64(t, i) + shift);
  nv = mgopt_rw_const(rw, dq, mgopt__pu_value_name(in), nt);
  if (!nv) return 0;
  mgopt_rw_set_operand(rw, dq, "input", nv);
  mgopt_rw_set_operand(rw, dq, "zero_point", NULL);
  mgopt__pu_erase_if_dead(rw, in->def);
  mgopt__pu_erase_if_dead(rw, zp->def);
  return 1;
}

/* (c): quantize(zp = ±128) -> dequantize(zp = same) lose both zero points; the integers flip dtype. */
static int mgopt__nzp_pair(mgopt_rewriter *rw, mgopt_op *q) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *zq = mgopt_op_operand(q, "zero_point"), *zd, *out;
  mgopt_op *dq;
  size_t len = 0;
  const char *ods = mgopt_op_get_string(q, "output_dtype", &len);
  mgopt_dtype dt = ods ? mgopt_dtype_from_name(ods, len) : MGOPT_DT_UNKNOWN;
  double z;
  if (q->nouts != 1) return 0;
  if (dt == MGOPT_DT_INT8 && mgopt__nzp_all(zq, -128.0))
    z = -128.0;
  else if (dt == MGOPT_DT_UINT8 && mgopt__nzp_all(zq, 128.0))
    z = 128.0;
  else
    return 0;
  out = q->outs[0];
  dq = mgopt__pu_single_user(out);
  if (!dq || dq->kind != MGOPT_OP_dequantize || mgopt__pu_is_block_output(out)) return 0;
  zd = mgopt_op_operand(dq, "zero_point");
  if (!mgopt__nzp_all(zd, z)) return 0;
  if (mgopt_op_set_string(q, "output_dtype", z < 0 ? "uint8" : "int8") != MGOPT_OK) return 0;
  mgopt_rw_set_operand(rw, q, "zero_point", NULL);
  mgopt_rw_set_operand(rw, dq, "zero_point", NULL);
  if (mgopt_op_infer(p, q, NULL) != MGOPT_OK || mgopt_op_infer(p, dq, NULL) != MGOPT_OK) return 0;
  mgopt_rw_modified(rw, q);
  mgopt_rw_modified(rw, dq);
  mgopt__pu_erase_if_dead(rw, zq->def);
  mgopt__pu_erase_if_dead(rw, zd->def);
  return 1;
}

static int mgopt__nzp_quantize(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  MGOPT__UNUSED(ud);
  return mgopt__nzp_zero(rw, op) || mgopt__nzp_pair(rw, op);
}

static int mgopt__nzp_dequantize(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  MGOPT__UNUSED(ud);
  return mgopt__nzp_zero(rw, op) || mgopt__nzp_const_input(rw, op);
}

static const mgopt_pattern mgopt__nzp_patterns[] = {
    {"quantize_zero_point", MGOPT_OP_quantize, NULL, 1, mgopt__nzp_quantize, NULL},
    {"dequantize_zero_point", MGOPT_OP_dequantize, NULL, 1, mgopt__nzp_dequantize, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(compression, common, nullify_redundant_quantization_zero_point,
                           "drop zero points of 0; fold zero points of -128/128 into uint8/int8 data",
                           mgopt__nzp_patterns);
