/* src/passes/onnx/remove_redundant_transpose_pairs.c — onnx::remove_redundant_transpose_pairs: inverse transposes around a chain of elementwise ops cancel.

   Spec: onnx_ir_optimizer_passes.txt, "Transpose Pair Folding".

   Before:
     main(%x: (1, 3, 4, 5, fp32)) {
       %t1: (1, 4, 5, 3, fp32) = transpose(x=%x, perm=[0, 2, 3, 1])
       %r: (1, 4, 5, 3, fp32) = relu(x=%t1)
       %s: (1, 4, 5, 3, fp32) = sigmoid(x=%r)
       %t2: (1, 3, 4, 5, fp32) = transpose(x=%s, perm=[0, 3, 1, 2])
     } -> (%t2)
   After:
     main(%x: (1, 3, 4, 5, fp32)) {
       %r: (1, 3, 4, 5, fp32) = relu(x=%x)
       %t2: (1, 3, 4, 5, fp32) = sigmoid(x=%r)
     } -> (%t2)

   Fires on: transpose(x, p1) -> [elementwise]* -> transpose(y, p2) with
   p1[p2[i]] == i for every i, where every hop has a single consumer (the next
   op of the chain) and no intermediate value is a block output. The middle
   ops are pure registered elementwise ops that keep their operand's rank:
   unary ops, or binary ops whose other operand is a one-element constant of
   rank <= 1 (mgopt__pu_elementwise_chain). The first middle op reads x, the
   middle ops' types are re-inferred in x's layout, and the consumers of the
   second transpose read the last middle op (or x). Both transposes are erased.
   Must not fire: a composed perm that is not the identity; a hop with two
   consumers; a layout-sensitive, opaque or broadcasting middle op; a second
   transpose whose output is a function output while the replacement is an
   input or already an output (the output name must survive); a replacement
   whose type does not suit the second transpose's readers, or differs from
   its declared type while it is a function output (the last middle op keeps
   that declared type when it holds for the re-inferred one; with no middle
   op, x's type must fit: mgopt__pu_cancel_pair).
   Cost: one worklist run; each match walks its chain once, O(ops) overall. */
#include "../../passes_internal.h"

static int mgopt__rtp_rewrite(mgopt_rewriter *rw, mgopt_op *t1, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_op *chain[MGOPT__PU_MAX_CHAIN], *t2;
  mgopt_value *x = mgopt_op_operand(t1, "x");
  const int64_t *p1, *p2;
  int64_t n1, n2, i;
  int32_t n = 0;
  MGOPT__UNUSED(ud);
  if (!x || t1->nouts != 1) return 0;
  n1 = mgopt_op_get_ints(p, t1, "perm", &p1);
  if (n1 < 0) return 0;
  t2 = mgopt__pu_elementwise_chain(t1->outs[0], MGOPT_OP_transpose, chain, &n);
  if (!t2) return 0;
  n2 = mgopt_op_get_ints(p, t2, "perm", &p2);
  if (n2 != n1 || t2->nouts != 1) return 0;
  /* perms may be read from a shared arena copy: compare before changing anything */
  for (i = 0; i < n1; i++) {
    int64_t a = p2[i] < 0 ? p2[i] + n1 : p2[i], b;
    if (a < 0 || a >= n1) return 0;
    b = p1[a] < 0 ? p1[a] + n1 : p1[a];
    if (b != i) return 0;
  }
  return mgopt__pu_cancel_pair(rw, t1, x, chain, n, t2);
}

static const mgopt_pattern mgopt__rtp_patterns[] = {
    {"remove_redundant_transpose_pairs", MGOPT_OP_transpose, NULL, 1, mgopt__rtp_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, remove_redundant_transpose_pairs,
                           "inverse transposes around a chain of elementwise ops cancel",
                           mgopt__rtp_patterns);
