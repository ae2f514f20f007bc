/* src/passes/cleanup/add_conv_transpose_output_shape.c — common::add_conv_transpose_output_shape: give conv_transpose an explicit output_shape when its output shape is static.

   Spec: mil_graph_passes.txt, "The conv_transpose input output_shape is an
   optional input ..."; reference mil-passes.md §3.33.

   Before:
     main(%x: (1, 5, 10, fp32)) {
       %w: (5, 5, 3, fp32)* = const(val=[[[1, 0, 1], [0, 1, 0], [1, 1, 1], [0, 0, 0], [1, 0, 0]], [[0, 1, 0], [1, 0, 1], [0, 0, 1], [1, 1, 0], [0, 1, 1]], [[1, 1, 0], [0, 1, 1], [1, 0, 0], [0, 0, 1], [1, 0, 1]], [[0, 0, 1], [1, 0, 0], [0, 1, 1], [1, 1, 1], [0, 1, 0]], [[1, 0, 0], [0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 1]]])
       %y: (1, 5, 21, fp32) = conv_transpose(x=%x, weight=%w, strides=[2], pad_type="valid")
     } -> (%y)
   After:
     main(%x: (1, 5, 10, fp32)) {
       %w: (5, 5, 3, fp32)* = const(val=[[[1, 0, 1], [0, 1, 0], [1, 1, 1], [0, 0, 0], [1, 0, 0]], [[0, 1, 0], [1, 0, 1], [0, 0, 1], [1, 1, 0], [0, 1, 1]], [[1, 1, 0], [0, 1, 1], [1, 0, 0], [0, 0, 1], [1, 0, 1]], [[0, 0, 1], [1, 0, 0], [0, 1, 1], [1, 1, 1], [0, 1, 0]], [[1, 0, 0], [0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 1]]])
       %y: (1, 5, 21, fp32) = conv_transpose(x=%x, weight=%w, strides=[2], pad_type="valid", output_shape=[1, 5, 21])
     } -> (%y)

   Fires on: conv_transpose with no output_shape (neither attribute nor
   operand) whose output type is static: output_shape (a parameter MIL declares
   const, so an attribute) is set to that shape, in place.
   Must not fire: an output shape with a symbolic or unknown dim; an op that
   already has output_shape.
   Cost: one worklist run, O(ops). */
#include "../../passes_internal.h"

static int mgopt__acts_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  int64_t shape[MGOPT_MAX_RANK];
  MGOPT__UNUSED(ud);
  if (op->nouts != 1 || mgopt_op_attr(op, "output_shape") || mgopt_op_slot_index(op, "output_shape") >= 0) return 0;
  if (!mgopt__pu_static_shape(&op->outs[0]->type, shape, MGOPT_MAX_RANK)) return 0;
  if (mgopt_op_set_ints(op, "output_shape", shape, op->outs[0]->type.rank)) return 0;
  mgopt_rw_modified(rw, op);
  return 1;
}

static const mgopt_pattern mgopt__acts_patterns[] = {
    {"add_conv_transpose_output_shape", MGOPT_OP_conv_transpose, NULL, 1, mgopt__acts_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, add_conv_transpose_output_shape,
                           "give conv_transpose an explicit output_shape when its output shape is static",
                           mgopt__acts_patterns);
