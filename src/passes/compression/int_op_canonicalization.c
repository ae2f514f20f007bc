/* src/passes/compression/int_op_canonicalization.c — common::int_op_canonicalization: dequantize -> reshape -> quantize becomes a reshape of the integers.

   Spec: mil_graph_passes.txt, "For some quantized operators that do not
   involve floating-point arithmetic, however, it is unnecessary to prepend
   dequantize and append quantize"; reference §3.36, int_op_canonicalization.

   Before:
     main(%x: (2, 3, int8)) {
       %s: (fp32)* = const(val=0.5)
       %d: (2, 3, fp32) = dequantize(input=%x, scale=%s)
       %sh: (2, int32)* = const(val=[3, 2])
       %r: (3, 2, fp32) = reshape(x=%d, shape=%sh)
       %q: (3, 2, int8) = quantize(input=%r, scale=%s, output_dtype="int8")
       %y: (3, 2, int8) = add(x=%q, y=%q)
     } -> (%y)
   After:
     main(%x: (2, 3, int8)) {
       %sh: (2, int32)* = const(val=[3, 2])
       %q: (3, 2, int8) = reshape(x=%x, shape=%sh)
       %y: (3, 2, int8) = add(x=%q, y=%q)
     } -> (%y)

   Fires on: a reshape of a dequantize's output whose output has one use,
   not a block output, by a quantize with the dequantize's parameters
   (mgopt__pu_quant_params_equal: equal scales and zero points, output_dtype
   the dequantize input's dtype), per tensor (no axis, a one-element scale
   and zero point). The quantize's output is replaced by a new reshape of the
   dequantize's input (same shape operand), named like the quantize's
   output; the reshape and quantize go, the dequantize too when nothing else
   reads it.
   Must not fire: a reshape not fed by a dequantize; a reshape with another
   reader or that is a block output (the reference only counts readers and
   would drop a block output); a reader that is not a quantize; a quantize
   to another dtype than the dequantize's input (the result's dtype would
   change); parameters that differ or are per axis. The reference compares
   no parameters and carries the integers over when they differ (an int8 -8
   at scale 0.5 is -4.0, which quantizes to -16 at scale 0.25, not -8); per
   axis, the reshape moves elements under other channels' scales.
   Numeric contract: exact: quantize(dequantize(k)) == k for 8-bit integers
   under equal parameters (dequantize_quantize_pair_elimination's contract),
   and a reshape moves integers without changing them.
   Cost: worklist pattern rooted at reshape, O(1) per match. */
#include "../../passes_internal.h"

/* v is absent or holds one element */
static int mgopt__ioc_one_element(const mgopt_value *v) {
  const mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
  return !v || (t ? t->numel == 1 : mgopt_type_numel(&v->type) == 1);
}

static int mgopt__ioc_fold(mgopt_rewriter *rw, mgopt_op *rs, void *ud) {
  static const char *const slots[2] = {"x", "shape"};
  mgopt_value *x = mgopt_op_operand(rs, "x"), *vals[2], *qout;
  mgopt_op *dq = x ? mgopt__pu_def_of(x, MGOPT_OP_dequantize) : NULL, *q, *nr;
  mgopt_value *in = dq ? mgopt_op_operand(dq, "input") : NULL;
  size_t len = 0;
  const char *ods;
  MGOPT__UNUSED(ud);
  if (!in || rs->nouts != 1 || mgopt__pu_is_block_output(rs->outs[0])) return 0;
  q = mgopt__pu_single_user(rs->outs[0]);
  if (!q || q->kind != MGOPT_OP_quantize || q->nouts != 1 || mgopt_op_operand(q, "input") != rs->outs[0]) return 0;
  ods = mgopt_op_get_string(q, "output_dtype", &len);
  if (!ods || mgopt_dtype_from_name(ods, len) != (mgopt_dtype)in->type.dtype) return 0;
  /* exact only when q undoes dq element for element: the same per-tensor parameters */
  if (!mgopt__pu_quant_params_equal(dq, q) || mgopt_op_attr(dq, "axis") ||
      !mgopt__ioc_one_element(mgopt_op_operand(dq, "scale")) || !mgopt__ioc_one_element(mgopt_op_operand(dq, "zero_point")))
    return 0;
  qout = q->outs[0];
  vals[0] = in;
  vals[1] = mgopt_op_operand(rs, "shape");
  nr = mgopt_rw_create(rw, q, "reshape", mgopt__pu_value_name(qout), vals[1] ? 2 : 1, slots, vals, 1);
  if (!nr) return 0;
  if (!mgopt__pu_fuse_finish_named(rw, &nr, 1, q, &rs, 1)) return 0;
  mgopt__pu_erase_with_consts(rw, dq);
  return 1;
}

static const mgopt_pattern mgopt__ioc_patterns[] = {
    {"quantized_reshape", MGOPT_OP_reshape, NULL, 1, mgopt__ioc_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(compression, common, int_op_canonicalization,
                           "dequantize -> reshape -> quantize becomes a reshape of the integer tensor",
                           mgopt__ioc_patterns);
