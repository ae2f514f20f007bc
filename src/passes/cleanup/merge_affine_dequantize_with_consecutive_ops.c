/* src/passes/cleanup/merge_affine_dequantize_with_consecutive_ops.c — common::merge_affine_dequantize_with_consecutive_ops: layout ops into quantized data.

   Spec: mil_graph_passes.txt, "const folding to a chain of supported ops starts
   with a constexpr_affine_dequantize op"; reference §3 (passes listed elsewhere),
   merge_affine_dequantize_with_consecutive_ops.

   Before:
     main() {
       %d: (2, 3, int8)* = const(val=[[1, 2, 3], [4, 5, 6]])
       %s: (fp32)* = const(val=0.5)
       %z: (int8)* = const(val=0)
       %w: (2, 3, fp32) = constexpr_affine_dequantize(quantized_data=%d, zero_point=%z, scale=%s, axis=0)
       %t: (3, 2, fp32) = transpose(x=%w, perm=[1, 0])
       %e: (1, 3, 2, fp32) = expand_dims(x=%t, axes=[0])
     } -> (%e)
   After:
     main() {
       %s: (fp32)* = const(val=0.5)
       %z: (int8)* = const(val=0)
       %e_data: (1, 3, 2, int8)* = const(val=[[[1, 4], [2, 5], [3, 6]]])
       %e: (1, 3, 2, fp32) = constexpr_affine_dequantize(quantized_data=%e_data, zero_point=%z, scale=%s, axis=0)
     } -> (%e)

   Fires on: a constexpr_affine_dequantize whose quantized_data is a const read
   by it alone and whose output has exactly one use, not a block output, by a
   transpose, reshape, expand_dims or squeeze (constant parameters, static
   output shape). The op moves onto the integer data: the const becomes the
   data transformed the same way (a transpose permutes it; the others keep
   its bytes under a new shape, as a view), the dequantize takes the user's
   place and name, and the user goes. Repeated by the worklist, a whole chain
   folds into one dequantize. Per-tensor quantization (scale and zero_point
   of rank 0) takes all four ops; per-channel takes only transpose, and its
   axis becomes the position of the old axis in the perm.
   Must not fire: quantized data shared with another op (the spec's two
   dequantizes of one const), a dequantize with two users or that is a block
   output, per-channel data followed by reshape / expand_dims / squeeze,
   a transpose of sub-byte data (int4 and narrower), dynamic shapes, a
   layout op whose parameters (shape, perm, axes) are not constants, a
   result of rank 0 (the op needs data of rank >= 1: a squeeze to a scalar
   stays), a result whose static type does not suit a reader of the layout
   op's output or differs from it while it is a function output
   (mgopt__pu_replace_static_fits).
   Cost: worklist patterns; each step copies the quantized data once for a
   transpose and never for the others. */
#include "../../passes_internal.h"

/* 1 if every operand of u other than x is a constant: the layout op's
   parameters (shape, perm, axes) must be known, not only its output type. */
static int mgopt__mad_params_const(const mgopt_op *u) {
  int32_t i, j;
  for (i = 0; i < u->nslots; i++) {
    const mgopt_slot *sl = &u->slots[i];
    if (sl->name && strcmp(sl->name, "x") == 0) continue;
    for (j = 0; j < sl->n; j++)
      if (sl->uses[j].value && !mgopt_value_const(sl->uses[j].value)) return 0;
  }
  return 1;
}

/* The transformed integer data for user u of the dequantize; NULL if it
   cannot be computed. *axis is remapped for a transpose. */
static mgopt_tensor *mgopt__mad_data(mgopt_program *p, const mgopt_op *u, mgopt_tensor *t, int64_t *axis) {
  int64_t shape[MGOPT_MAX_RANK], perm[MGOPT_MAX_RANK], n = 1, new_axis = *axis;
  const mgopt_type *ot = &u->outs[0]->type;
  const int64_t *pv = NULL;
  int32_t r = ot->rank, i;
  /* the op's data has rank >= 1 (its axis must lie in [-rank, rank)) */
  if (r < 1 || !mgopt__pu_static_shape(ot, shape, MGOPT_MAX_RANK)) return NULL;
  for (i = 0; i < r; i++) n *= shape[i];
  if (n != t->numel) return NULL;
  /* same bytes, new shape: a view (mgopt__tensor_view keeps writers apart) */
  if (u->kind != MGOPT_OP_transpose) return mgopt__tensor_view(p, t, 0, r, shape);
  if (r != t->rank || mgopt_op_get_ints(p, u, "perm", &pv) != r) return NULL;
  for (i = 0; i < r; i++) {
    perm[i] = mgopt__pu_norm_axis(pv[i], r);
    if (perm[i] < 0 || t->shape[perm[i]] != shape[i]) return NULL;
    if (*axis == perm[i]) new_axis = i;
  }
  *axis = new_axis;
  return mgopt__pu_transpose_data(p, t, t->shape, r, perm); /* NULL for sub-byte data */
}

static int mgopt__mad_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *qd = mgopt_op_operand(op, "quantized_data"), *sc = mgopt_op_operand(op, "scale");
  mgopt_value *zp = mgopt_op_operand(op, "zero_point"), *out, *nd;
  mgopt_tensor *t = qd ? mgopt_value_const(qd) : NULL, *nt;
  mgopt_op *u;
  const char *name;
  int64_t axis, old_axis;
  int per_tensor;
  MGOPT__UNUSED(ud);
  if (!t || !sc || !zp || op->nouts != 1 || qd->nuses != 1) return 0;
  if (!mgopt_value_const(sc) || !mgopt_value_const(zp)) return 0;
  out = op->outs[0];
  if (out->nuses != 1 || mgopt__pu_is_block_output(out)) return 0;
  u = mgopt__pu_single_user(out);
  if (!u || u->nouts != 1 || mgopt_op_operand(u, "x") != out) return 0;
  if (u->kind != MGOPT_OP_transpose && u->kind != MGOPT_OP_reshape && u->kind != MGOPT_OP_expand_dims &&
      u->kind != MGOPT_OP_squeeze)
    return 0;
  if (!mgopt__mad_params_const(u)) return 0;
  per_tensor = sc->type.rank == 0 && zp->type.rank == 0;
  if (!per_tensor && u->kind != MGOPT_OP_transpose) return 0;
  old_axis = mgopt_op_get_int(op, "axis", 0);
  axis = mgopt__pu_norm_axis(old_axis, t->rank);
  if (axis < 0) axis = old_axis; /* per-tensor: the axis is not used */
  nt = mgopt__mad_data(p, u, t, &axis);
  /* the dequantize's output will be nt's shape at the dtype it has now */
  if (!nt || !mgopt__pu_replace_static_fits(p, u->outs[0], (mgopt_dtype)op->outs[0]->type.dtype, nt->rank, nt->shape))
    return 0;
  if (per_tensor) axis = old_axis; /* not used: left as it was, unless out of range below */
  if (per_tensor && (axis < -nt->rank || axis >= nt->rank)) axis = 0; /* unused, kept in range */
  nd = mgopt_rw_const(rw, op, mgopt__pu_name2(p, mgopt__pu_value_name(u->outs[0]), "_data"), nt);
  if (!nd) return 0;
  mgopt_rw_set_operand(rw, op, "quantized_data", nd);
  if (axis != old_axis && mgopt_op_set_int(op, "axis", axis) != MGOPT_OK) return 0;
  if (mgopt_op_infer(p, op, NULL) != MGOPT_OK) return 0;
  mgopt_rw_modified(rw, op);
  /* the dequantize takes the user's place, and its name once the user is gone */
  name = u->outs[0]->name;
  out = mgopt__pu_replace_keep_io(rw, u->outs[0], op->outs[0]);
  if (!out) return 0;
  mgopt__pu_erase_with_consts(rw, u);
  if (name && out == op->outs[0] && !mgopt__pu_is_func_output(out)) mgopt__pu_rename(out, name);
  mgopt__pu_erase_if_dead(rw, qd->def);
  return 1;
}

static const mgopt_pattern mgopt__mad_patterns[] = {
    {"affine_dequantize_then_layout", MGOPT_OP_constexpr_affine_dequantize, NULL, 1, mgopt__mad_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, merge_affine_dequantize_with_consecutive_ops,
                           "fold transpose/reshape/expand_dims/squeeze after a constexpr_affine_dequantize into its data",
                           mgopt__mad_patterns);
