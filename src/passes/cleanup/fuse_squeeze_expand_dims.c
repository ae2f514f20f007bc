/* src/passes/cleanup/fuse_squeeze_expand_dims.c — common::fuse_squeeze_expand_dims: expand_dims(squeeze(x)) -> x when shapes match.

   Spec: reference §3.33 ("squeeze then expand_dims that cancel"); the MIL
   spec names the pass in its pipeline only.

   Before:
     main(%x: (2, 1, 3, fp32)) {
       %s: (2, 3, fp32) = squeeze(x=%x, axes=[1])
       %e: (2, 1, 3, fp32) = expand_dims(x=%s, axes=[1])
       %r: (2, 1, 3, fp32) = relu(x=%e)
     } -> (%r)
   After:
     main(%x: (2, 1, 3, fp32)) {
       %r: (2, 1, 3, fp32) = relu(x=%x)
     } -> (%r)

   Fires on: an expand_dims of a squeeze whose output type equals the
   squeeze's input type, every dim known (static, or the same symbol): both
   ops only drop and insert unit dims and keep the row-major element order,
   so equal shapes mean equal tensors. Uses of the expand_dims read x
   directly (MIL emits an identity; here one appears only when a function
   output would otherwise lose its name). The squeeze goes once unused.
   Must not fire: shapes that differ or hold unknown dims (e.g. squeezing
   axis 1 then expanding axis 0); expand_dims fed by anything else.
   Cost: worklist patterns, O(expand_dims x rank). */
#include "../../passes_internal.h"

static int mgopt__fsed_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *s = mgopt_op_operand(op, "x"), *x;
  mgopt_op *sq = mgopt__pu_def_of(s, MGOPT_OP_squeeze);
  MGOPT__UNUSED(ud);
  if (!sq || op->nouts != 1) return 0;
  x = mgopt_op_operand(sq, "x");
  if (!x || !mgopt__pu_same_known_shape(x, op->outs[0])) return 0;
  if (!mgopt__pu_replace_fits(mgopt_rw_program(rw), op->outs[0], x)) return 0; /* equal types: always */
  if (!mgopt__pu_replace_keep_io(rw, op->outs[0], x)) return 0;
  mgopt__pu_erase_with_consts(rw, op);
  mgopt__pu_erase_with_consts(rw, sq);
  return 1;
}

static const mgopt_pattern mgopt__fsed_patterns[] = {
    {"squeeze_expand_dims", MGOPT_OP_expand_dims, NULL, 1, mgopt__fsed_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, fuse_squeeze_expand_dims,
                           "remove a squeeze followed by an expand_dims that restores its shape",
                           mgopt__fsed_patterns);
