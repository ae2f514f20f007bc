/* src/passes/cleanup/merge_consecutive_reshapes.c — common::merge_consecutive_reshapes: reshape(reshape(x)) -> reshape(x).

   Spec: mil_graph_passes.txt, "Identify consecutive reshape ops which could
   be merged into a single reshape"; reference §3.29.

   Before:
     main(%x: (2, 6, fp32)) {
       %s1: (3, int32)* = const(val=[3, 2, 2])
       %a: (3, 2, 2, fp32) = reshape(x=%x, shape=%s1)
       %s2: (2, int32)* = const(val=[4, 3])
       %b: (4, 3, fp32) = reshape(x=%a, shape=%s2)
     } -> (%b)
   After:
     main(%x: (2, 6, fp32)) {
       %s2: (2, int32)* = const(val=[4, 3])
       %b: (4, 3, fp32) = reshape(x=%x, shape=%s2)
     } -> (%b)

   Fires on: a reshape whose input comes from a reshape: it reads the inner
   reshape's input instead (the element order of a reshape is row-major, so
   only the last target shape matters). Chains collapse one link at a time.
   The inner reshape is erased once unused (with a shape const that only it
   used); if it has other users or is a block output it stays.
   Must not fire: when the outer shape is not a constant or holds a 0 (a 0
   may mean "copy the input's dim", which would read a different input).
   Cost: worklist patterns, O(reshapes). */
#include "../../passes_internal.h"

static int mgopt__mcrs_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *inner_x;
  mgopt_op *inner = mgopt__pu_def_of(x, MGOPT_OP_reshape);
  const int64_t *shape = NULL;
  int64_t n, i;
  MGOPT__UNUSED(ud);
  if (!inner || inner == op) return 0;
  inner_x = mgopt_op_operand(inner, "x");
  if (!inner_x) return 0;
  n = mgopt_op_get_ints(p, op, "shape", &shape);
  if (n < 0) return 0;
  for (i = 0; i < n; i++)
    if (shape[i] == 0) return 0;
  {
    /* the inner reshape's declared type may hide an element count that does
       not match (its shape computed at run time): the merged reshape must type check */
    int ok;
    mgopt_op_set_operand(op, "x", inner_x);
    ok = mgopt__pu_infer_fits(p, op);
    mgopt_op_set_operand(op, "x", x);
    if (!ok) return 0;
  }
  mgopt_rw_set_operand(rw, op, "x", inner_x);
  mgopt__pu_erase_with_consts(rw, inner);
  return 1;
}

static const mgopt_pattern mgopt__mcrs_patterns[] = {
    {"reshape_reshape", MGOPT_OP_reshape, NULL, 1, mgopt__mcrs_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, merge_consecutive_reshapes,
                           "collapse reshape chains into one reshape", mgopt__mcrs_patterns);
