/* src/passes/onnx/remove_redundant_reshape_pairs.c — onnx::remove_redundant_reshape_pairs: a reshape and a reshape back around a chain of elementwise ops cancel.

   Spec: onnx_ir_optimizer_passes.txt, "Reshape Pair Folding".

   Before:
     main(%x: (2, 3, 4, fp32)) {
       %s1: (2, int32)* = const(val=[6, 4])
       %r1: (6, 4, fp32) = reshape(x=%x, shape=%s1)
       %g: (6, 4, fp32) = tanh(x=%r1)
       %s2: (3, int32)* = const(val=[2, 3, 4])
       %r2: (2, 3, 4, fp32) = reshape(x=%g, shape=%s2)
     } -> (%r2)
   After:
     main(%x: (2, 3, 4, fp32)) {
       %s1: (2, int32)* = const(val=[6, 4])
       %r2: (2, 3, 4, fp32) = tanh(x=%x)
       %s2: (3, int32)* = const(val=[2, 3, 4])
     } -> (%r2)

   Fires on: reshape(A) -> [elementwise]* -> reshape(B) where A's type is
   fully static and equal (dims) to the second reshape's output, every hop
   has a single consumer (the next op) and no intermediate value is a block
   output. Middle ops as in remove_redundant_transpose_pairs (unary, or binary
   with a one-element constant of rank <= 1). The first middle op reads A, the
   middle types are re-inferred, consumers of the second reshape read the last
   middle op (or A); both reshapes are erased (their shape constants are left
   for dead_code_elimination).
   Must not fire: symbolic or unknown dims; a shape that does not come back;
   a hop with two consumers; a broadcasting middle op; a second reshape whose
   output is a function output while the replacement is an input or already
   an output; a replacement whose type does not suit the second reshape's
   readers, or differs from its declared type while it is a function output
   (mgopt__pu_cancel_pair, as in remove_redundant_transpose_pairs).
   Cost: one worklist run; each match walks its chain once, O(ops) overall. */
#include "../../passes_internal.h"

static int mgopt__rrp_rewrite(mgopt_rewriter *rw, mgopt_op *r1, void *ud) {
  mgopt_op *chain[MGOPT__PU_MAX_CHAIN], *r2;
  mgopt_value *a = mgopt_op_operand(r1, "x");
  int64_t sa[MGOPT_MAX_RANK], sb[MGOPT_MAX_RANK];
  int32_t n = 0, k;
  MGOPT__UNUSED(ud);
  if (!a || r1->nouts != 1) return 0;
  if (!mgopt__pu_static_shape(&a->type, sa, MGOPT_MAX_RANK)) return 0;
  r2 = mgopt__pu_elementwise_chain(r1->outs[0], MGOPT_OP_reshape, chain, &n);
  if (!r2) return 0;
  if (r2->nouts != 1 || !mgopt__pu_static_shape(&r2->outs[0]->type, sb, MGOPT_MAX_RANK)) return 0;
  if (r2->outs[0]->type.rank != a->type.rank) return 0;
  for (k = 0; k < a->type.rank; k++)
    if (sa[k] != sb[k]) return 0;
  return mgopt__pu_cancel_pair(rw, r1, a, chain, n, r2);
}

static const mgopt_pattern mgopt__rrp_patterns[] = {
    {"remove_redundant_reshape_pairs", MGOPT_OP_reshape, NULL, 1, mgopt__rrp_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, remove_redundant_reshape_pairs,
                           "a reshape and a reshape back around a chain of elementwise ops cancel",
                           mgopt__rrp_patterns);
