/* src/passes/cleanup/fuse_stack_split.c — common::fuse_stack_split: squeeze(split(stack(v))[k]) -> v[k].

   Spec: reference §3.33 (stack, then split along the same axis into unit
   pieces, then squeeze of that axis); the MIL spec names the pass in its
   pipeline only.

   Before:
     main(%a: (2, 3, fp32), %b: (2, 3, fp32)) {
       %s: (2, 2, 3, fp32) = stack(values=(%a, %b), axis=1)
       %p0: (2, 1, 3, fp32), %p1: (2, 1, 3, fp32) = split(x=%s, num_splits=2, axis=1)
       %q0: (2, 3, fp32) = squeeze(x=%p0, axes=[1])
       %q1: (2, 3, fp32) = squeeze(x=%p1, axes=[1])
       %r: (2, 3, fp32) = add(x=%q0, y=%q1)
     } -> (%r)
   After:
     main(%a: (2, 3, fp32), %b: (2, 3, fp32)) {
       %r: (2, 3, fp32) = add(x=%a, y=%b)
     } -> (%r)

   Fires on: a squeeze of output k of a split of a stack of n values, when
   the split cuts the stack axis into n pieces of size 1 (num_splits = n, or
   split_sizes all 1) and the squeeze removes exactly that axis (axes = the
   axis, or its output has values[k]'s known shape). Each squeeze fires on
   its own, so pieces with other users are fine; the split and the stack go
   once unused. MIL emits identities; here an identity appears only when a
   function output would otherwise lose its name.
   Must not fire: a split along another axis, uneven or non-unit pieces, a
   squeeze of other axes, a split not fed by a stack.
   Cost: worklist patterns, O(squeezes x rank). */
#include "../../passes_internal.h"

static int mgopt__fss_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *piece = mgopt_op_operand(op, "x"), *sx, *v;
  mgopt_op *split = mgopt__pu_def_of(piece, MGOPT_OP_split), *stack;
  const int64_t *ax = NULL, *sizes = NULL;
  int64_t n, rank, axis, saxis, nax, i;
  int32_t vi;
  MGOPT__UNUSED(ud);
  if (!split || op->nouts != 1) return 0;
  sx = mgopt_op_operand(split, "x");
  stack = mgopt__pu_def_of(sx, MGOPT_OP_stack);
  vi = mgopt_op_slot_index(stack ? stack : split, "values");
  if (!stack || vi < 0 || !stack->slots[vi].is_list) return 0;
  n = stack->slots[vi].n;
  rank = sx->type.rank;
  if (n < 1 || split->nouts != n || rank < 1) return 0;
  axis = mgopt__pu_norm_axis(mgopt_op_get_int(stack, "axis", 0), rank);
  saxis = mgopt__pu_norm_axis(mgopt_op_get_int(split, "axis", 0), rank);
  if (axis < 0 || axis != saxis) return 0;
  i = mgopt_op_get_ints(p, split, "split_sizes", &sizes);
  if (i >= 0) {
    if (i != n) return 0;
    for (i = 0; i < n; i++)
      if (sizes[i] != 1) return 0;
  } else if (mgopt_op_get_int(split, "num_splits", -1) != n) {
    return 0;
  }
  v = stack->slots[vi].uses[piece->index].value;
  nax = mgopt_op_get_ints(p, op, "axes", &ax);
  if (!(nax == 1 && mgopt__pu_norm_axis(ax[0], rank) == axis) && !mgopt__pu_same_known_shape(v, op->outs[0]))
    return 0;
  if (!mgopt__pu_replace_fits(p, op->outs[0], v) || !mgopt__pu_replace_keep_io(rw, op->outs[0], v)) return 0;
  mgopt__pu_erase_with_consts(rw, op);
  mgopt__pu_erase_with_consts(rw, split);
  mgopt__pu_erase_with_consts(rw, stack);
  return 1;
}

static const mgopt_pattern mgopt__fss_patterns[] = {
    {"stack_split_squeeze", MGOPT_OP_squeeze, NULL, 1, mgopt__fss_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, fuse_stack_split, "remove a stack that a split and squeezes undo",
                           mgopt__fss_patterns);
