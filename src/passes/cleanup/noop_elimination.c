/* src/passes/cleanup/noop_elimination.c — common::noop_elimination: remove ops that have no effect.

   Spec: mil_graph_passes.txt, "Remove ops that have no effect"; reference mil-passes.md §3.6.

   Before:
     main(%x: (1, 96, 128, 64, fp32)) {
       %s: (4, int32)* = const(val=[1, 96, 128, 64])
       %r: (1, 96, 128, 64, fp32) = reshape(x=%x, shape=%s)
       %c: (fp32)* = const(val=2)
       %y: (1, 96, 128, 64, fp32) = add(x=%r, y=%c)
     } -> (%y)
   After:
     main(%x: (1, 96, 128, 64, fp32)) {
       %s: (4, int32)* = const(val=[1, 96, 128, 64])
       %c: (fp32)* = const(val=2)
       %y: (1, 96, 128, 64, fp32) = add(x=%x, y=%c)
     } -> (%y)

   Fires on (the 19 op types MIL defines), for single-output ops whose output
   is not a block output, when the kept input has provably the same type as
   the output (same dtype, rank and dims, no unknown dim — so no broadcasting
   is lost):
     identity                                         always
     add (either side all 0), mul (either side all 1)
     sub (y all 0), real_div and pow (y all 1)
     floor_div (y all 1, integer dtypes only: for floats it is floor(x))
     reshape, split, slice_by_size, pad, tile, upsample_nearest_neighbor,
     upsample_bilinear, resize_bilinear, crop         same type in and out
     slice_by_index                                   same type, no negative const stride;
                                                      or every axis whole (both masks, stride
                                                      1, no squeeze), unknown dims allowed
     transpose                                        perm is the identity
     linear_activation                                alpha == 1 and beta == 0
   The last group's unregistered ops (crop, linear_activation) are matched
   by name with their MIL operand `x`.
   Must not fire: when the output is a block output; when the kept input's
   type differs or is not fully known; floor_div on floats.
   Cost: one worklist run, O(ops). The removed op's constant operands stay
   for dead_code_elimination. */
#include "../../passes_internal.h"

static int mgopt__noop_same_type(const mgopt_value *in, const mgopt_value *out) {
  const mgopt_type *a = &in->type, *b = &out->type;
  int32_t i;
  if (!mgopt_type_equal(a, b) || a->kind != MGOPT_TYPE_TENSOR || a->rank < 0) return 0;
  for (i = 0; i < a->rank; i++)
    if (!a->dims[i].sym && a->dims[i].v < 0) return 0;
  return 1;
}

/* Replaces op's only output by `keep` if the checks hold. */
static int mgopt__noop_forward(mgopt_rewriter *rw, mgopt_op *op, mgopt_value *keep) {
  mgopt_value *out;
  if (!keep || op->nouts != 1) return 0;
  out = op->outs[0];
  if (mgopt__pu_is_block_output(out) || !mgopt__noop_same_type(keep, out)) return 0;
  if (!mgopt__pu_replace_fits(mgopt_rw_program(rw), out, keep)) return 0; /* equal types: always */
  mgopt_rw_replace_value(rw, out, keep);
  mgopt_rw_erase(rw, op);
  return 1;
}

static int mgopt__noop_identity(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  MGOPT__UNUSED(ud);
  return mgopt__noop_forward(rw, op, mgopt_op_operand(op, "x"));
}

/* add / mul: either side the neutral element; sub / real_div / pow / floor_div: y only. */
static int mgopt__noop_binary(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y");
  double neutral = (op->kind == MGOPT_OP_add || op->kind == MGOPT_OP_sub) ? 0.0 : 1.0;
  MGOPT__UNUSED(ud);
  if (!x || !y || op->nouts != 1) return 0;
  if (op->kind == MGOPT_OP_floor_div && !mgopt_dtype_is_int((mgopt_dtype)x->type.dtype)) return 0;
  if (mgopt__pu_const_all(y, neutral) && mgopt__noop_forward(rw, op, x)) return 1;
  if ((op->kind == MGOPT_OP_add || op->kind == MGOPT_OP_mul) && mgopt__pu_const_all(x, neutral))
    return mgopt__noop_forward(rw, op, y);
  return 0;
}

static int mgopt__noop_same_shape(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  MGOPT__UNUSED(ud);
  return mgopt__noop_forward(rw, op, mgopt_op_operand(op, "x"));
}

/* 1 when attribute `name` is BOOLS of length rank, every entry equal to want (absent: all 0). */
static int mgopt__noop_bools_all(const mgopt_op *op, const char *name, int32_t rank, int want) {
  const mgopt_attr *a = mgopt_op_attr(op, name);
  int32_t i;
  if (!a) return !want;
  if (a->kind != MGOPT_ATTR_BOOLS || a->n != rank) return 0;
  for (i = 0; i < rank; i++)
    if ((a->u.ints[i] != 0) != want) return 0;
  return 1;
}

/* Every axis whole (both masks set, stride 1, nothing squeezed): the identity
   whatever the dims, so unknown dims do not block it; dtype and rank must agree
   and the replacement must fit every reader. */
static int mgopt__noop_whole_slice(mgopt_rewriter *rw, mgopt_op *op, int64_t n, const int64_t *stride) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *out;
  int32_t r, i;
  if (!x || op->nouts != 1) return 0;
  out = op->outs[0];
  r = x->type.rank;
  if (x->type.kind != MGOPT_TYPE_TENSOR || r < 1 || out->type.rank != r || out->type.dtype != x->type.dtype ||
      n != r || mgopt__pu_is_block_output(out))
    return 0;
  for (i = 0; i < r; i++)
    if (stride[i] != 1) return 0;
  if (!mgopt__noop_bools_all(op, "begin_mask", r, 1) || !mgopt__noop_bools_all(op, "end_mask", r, 1) ||
      !mgopt__noop_bools_all(op, "squeeze_mask", r, 0))
    return 0;
  if (!mgopt__pu_replace_fits(mgopt_rw_program(rw), out, x)) return 0;
  mgopt_rw_replace_value(rw, out, x);
  mgopt_rw_erase(rw, op);
  return 1;
}

static int mgopt__noop_slice_by_index(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  const int64_t *stride = NULL;
  int64_t n, i;
  MGOPT__UNUSED(ud);
  n = mgopt_op_get_ints(mgopt_rw_program(rw), op, "stride", &stride);
  for (i = 0; i < n; i++)
    if (stride[i] < 0) return 0;
  if (n < 0 && mgopt_op_operand(op, "stride")) return 0; /* a stride not known at compile time */
  if (mgopt__noop_forward(rw, op, mgopt_op_operand(op, "x"))) return 1;
  return mgopt__noop_whole_slice(rw, op, n, stride);
}

static int mgopt__noop_transpose(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  const int64_t *perm = NULL;
  int64_t n, i;
  MGOPT__UNUSED(ud);
  n = mgopt_op_get_ints(mgopt_rw_program(rw), op, "perm", &perm);
  if (!x || n < 0 || x->type.rank != n) return 0;
  for (i = 0; i < n; i++)
    if ((perm[i] < 0 ? perm[i] + n : perm[i]) != i) return 0;
  return mgopt__noop_forward(rw, op, x);
}

static int mgopt__noop_linear_activation(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  MGOPT__UNUSED(ud);
  if (mgopt_op_get_float(op, "alpha", 0.0) != 1.0 || mgopt_op_get_float(op, "beta", 0.0) != 0.0) return 0;
  return mgopt__noop_forward(rw, op, mgopt_op_operand(op, "x"));
}

static const mgopt_pattern mgopt__noop_patterns[] = {
    {"noop_identity", MGOPT_OP_identity, NULL, 1, mgopt__noop_identity, NULL},
    {"noop_add", MGOPT_OP_add, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_mul", MGOPT_OP_mul, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_sub", MGOPT_OP_sub, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_real_div", MGOPT_OP_real_div, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_pow", MGOPT_OP_pow, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_floor_div", MGOPT_OP_floor_div, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_reshape", MGOPT_OP_reshape, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_split", MGOPT_OP_split, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_slice_by_size", MGOPT_OP_slice_by_size, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_pad", MGOPT_OP_pad, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_tile", MGOPT_OP_tile, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_upsample_nearest_neighbor", MGOPT_OP_upsample_nearest_neighbor, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_upsample_bilinear", MGOPT_OP_upsample_bilinear, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_resize_bilinear", MGOPT_OP_resize_bilinear, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_crop", MGOPT_OP_OPAQUE, "crop", 1, mgopt__noop_same_shape, NULL},
    {"noop_slice_by_index", MGOPT_OP_slice_by_index, NULL, 1, mgopt__noop_slice_by_index, NULL},
    {"noop_transpose", MGOPT_OP_transpose, NULL, 1, mgopt__noop_transpose, NULL},
    {"noop_linear_activation", MGOPT_OP_OPAQUE, "linear_activation", 1, mgopt__noop_linear_activation, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, noop_elimination,
                           "remove ops that have no effect (identity reshape, add 0, mul 1, ...)",
                           mgopt__noop_patterns);
