/* src/passes/onnx/remove_redundant_reshape_pairs.c — onnx::remove_redundant_reshape_pairs: a reshape and a reshape back around a chain of elementwise ops cancel.

   Spec: onnx_ir_optimizer_passes.txt, "Reshape Pair Folding". ONNX's
   Reshape, Squeeze and Unsqueeze import as reshape, squeeze and
   expand_dims: each only re-reads its input's elements in row-major order
   under another shape, so any two of them make a pair (an Unsqueeze then a
   Squeeze of the same axis, as an imported LSTM's state output and the
   exporter's Squeeze give, is the flatten/unflatten pair of the spec).

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

   Fires on: R1(A) -> [elementwise]* -> R2(B), R1 and R2 each a reshape,
   squeeze or expand_dims, where A's dims equal R2's output dims: all
   static when R1 or R2 is a reshape, else each static and equal or the
   same symbol (squeeze and expand_dims only drop and insert unit dims);
   every hop has a single consumer (the next op) and no intermediate value
   is a block output. Middle ops as in remove_redundant_transpose_pairs
   (unary, or binary with a one-element constant of rank <= 1). The first
   middle op reads A, the middle types are re-inferred, consumers of R2
   read the last middle op (or A); both ops are erased (a reshape's shape
   constant is left for dead_code_elimination).
   Must not fire: a reshape end with a symbolic or unknown dim; an unknown
   dim or rank; a shape that does not come back (e.g. an expand_dims of
   axis 0 then a squeeze of axis 0 of another value's shape); a hop with
   two consumers; a broadcasting middle op; an R2 whose output is a
   function output while the replacement is an input or already an output;
   a replacement whose type does not suit R2's readers, or differs from its
   declared type while it is a function output (mgopt__pu_cancel_pair, as
   in remove_redundant_transpose_pairs).
   Cost: one worklist run; each match walks its chain once, O(ops) overall. */
#include "../../passes_internal.h"

static const int32_t mgopt__rrp_kinds[3] = {MGOPT_OP_reshape, MGOPT_OP_squeeze, MGOPT_OP_expand_dims};

/* a's and b's dims are equal: static, or (symbols allowed) the same symbol. */
static int mgopt__rrp_same_dims(const mgopt_type *a, const mgopt_type *b, int symbols) {
  int32_t k;
  if (a->kind != MGOPT_TYPE_TENSOR || b->kind != MGOPT_TYPE_TENSOR || a->rank < 0 || a->rank != b->rank) return 0;
  for (k = 0; k < a->rank; k++) {
    mgopt_dim x = a->dims[k], y = b->dims[k];
    if (x.sym || y.sym) {
      if (!symbols || x.sym != y.sym) return 0;
    } else if (x.v < 0 || x.v != y.v) {
      return 0;
    }
  }
  return 1;
}

static int mgopt__rrp_rewrite(mgopt_rewriter *rw, mgopt_op *r1, void *ud) {
  mgopt_op *chain[MGOPT__PU_MAX_CHAIN], *r2;
  mgopt_value *a = mgopt_op_operand(r1, "x");
  int32_t n = 0;
  MGOPT__UNUSED(ud);
  if (!a || r1->nouts != 1) return 0;
  r2 = mgopt__pu_elementwise_chain_to(r1->outs[0], mgopt__rrp_kinds, 3, chain, &n);
  if (!r2 || r2->nouts != 1) return 0;
  if (!mgopt__rrp_same_dims(&a->type, &r2->outs[0]->type,
                            r1->kind != MGOPT_OP_reshape && r2->kind != MGOPT_OP_reshape))
    return 0;
  return mgopt__pu_cancel_pair(rw, r1, a, chain, n, r2);
}

static const mgopt_pattern mgopt__rrp_patterns[] = {
    {"remove_redundant_reshape_pairs", MGOPT_OP_reshape, NULL, 1, mgopt__rrp_rewrite, NULL},
    {"remove_redundant_squeeze_pairs", MGOPT_OP_squeeze, NULL, 1, mgopt__rrp_rewrite, NULL},
    {"remove_redundant_expand_dims_pairs", MGOPT_OP_expand_dims, NULL, 1, mgopt__rrp_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, remove_redundant_reshape_pairs,
                           "a reshape and a reshape back around a chain of elementwise ops cancel",
                           mgopt__rrp_patterns);
