/* src/passes/compression/dequantize_quantize_pair_elimination.c — common::dequantize_quantize_pair_elimination: a dequantize followed by an identical quantize cancels.

   Spec: mil_graph_passes.txt, "When a dequantize is followed by an identical
   quantize (same scale, zero point, axis), they cancel out"; reference §3.36,
   dequantize_quantize_pair_elimination.

   Before:
     main(%x: (2, 3, int8)) {
       %s: (fp32)* = const(val=0.5)
       %z: (int8)* = const(val=3)
       %d: (2, 3, fp32) = dequantize(input=%x, zero_point=%z, scale=%s)
       %s2: (fp32)* = const(val=0.5)
       %z2: (int8)* = const(val=3)
       %q: (2, 3, int8) = quantize(input=%d, zero_point=%z2, scale=%s2, output_dtype="int8")
       %y: (2, 3, int8) = add(x=%q, y=%q)
     } -> (%y)
   After:
     main(%x: (2, 3, int8)) {
       %y: (2, 3, int8) = add(x=%x, y=%x)
     } -> (%y)

   Fires on: a dequantize whose output is not a block output, for each
   quantize reading it whose parameters are identical: scale constants equal
   element by element (numeric comparison across float dtypes; a one-element
   constant equals a tensor whose elements all equal it) or the very same
   value; zero_point absent on both, or equal the same way; axis absent on
   both, or equal once normalized against the input's rank; and the quantize's
   output_dtype is the dequantize input's dtype. Each such quantize is replaced
   by the dequantize's input (the integers it would reproduce); the dequantize
   goes when no reader is left. Other readers of the dequantize keep it.
   Must not fire: the reversed pair quantize -> dequantize (it carries the
   activation's quantization parameters); a dequantize that is a block output;
   scales, zero points or axes that differ; a scale or zero point that is not
   a constant, unless both sides read the same value (the reference compares
   two unknown values as equal); a quantize to another dtype than the
   dequantize's input (the reference does not check this and would change the
   value's dtype).
   Numeric contract: exact: for integers k of 8 bits or less and a finite
   nonzero scale s, round(fl(s*(k - zp)) / s) + zp == k, so the pair is the
   identity on every value the input can hold.
   Cost: worklist pattern rooted at dequantize; each step compares the
   parameters once per quantize reader. */
#include "../../passes_internal.h"

static int mgopt__dqp_eliminate(mgopt_rewriter *rw, mgopt_op *dq, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *out, *in = mgopt_op_operand(dq, "input");
  int changed = 0, again = 1;
  MGOPT__UNUSED(ud);
  if (!in || dq->nouts != 1) return 0;
  out = dq->outs[0];
  if (mgopt__pu_is_block_output(out)) return 0;
  /* the use list changes as quantizes go: rescan after each one */
  while (again) {
    mgopt_use *u;
    again = 0;
    for (u = out->uses; u; u = u->next) {
      mgopt_op *q = u->op;
      if (!q || q->kind != MGOPT_OP_quantize || q->nouts != 1 || mgopt_op_operand(q, "input") != out) continue;
      if (!mgopt__pu_quant_params_equal(dq, q) || !mgopt__pu_replace_fits(p, q->outs[0], in)) continue;
      if (!mgopt__pu_replace_keep_io(rw, q->outs[0], in)) return changed;
      mgopt__pu_erase_with_consts(rw, q);
      changed = again = 1;
      break;
    }
  }
  if (changed) mgopt__pu_erase_with_consts(rw, dq);
  return changed;
}

static const mgopt_pattern mgopt__dqp_patterns[] = {
    {"dequantize_quantize", MGOPT_OP_dequantize, NULL, 1, mgopt__dqp_eliminate, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(compression, common, dequantize_quantize_pair_elimination,
                           "a quantize with the parameters of the dequantize it reads is replaced by that dequantize's input",
                           mgopt__dqp_patterns);
