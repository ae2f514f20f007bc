/* src/kernels/fold.c — the constant-folding kernel table and mgopt_fold_op, the evaluator of one op.

   mgopt_fold_op evaluates an op whose operands are all constant with MIL's
   semantics and returns new owned tensors. It never trusts the IR: ranks,
   axes, indices, element counts and the stored output types are checked, and
   anything doubtful is "not folded" (0) rather than guessed. The kernels are
   the seed of a reference evaluator: each takes the op and writes its outputs. */
#include "kernels.h"

typedef struct mgopt__kentry {
  int32_t kind;
  mgopt__kernel_fn fn;
} mgopt__kentry;

/* Every op with a kernel. A pair list rather than a positional array so that
   adding ops to MGOPT_OP_LIST never shifts it; mgopt__k_kernel indexes it. */
static const mgopt__kentry mgopt__k_entries[] = {
    {MGOPT_OP_identity, mgopt__ke_identity},
    {MGOPT_OP_add, mgopt__ke_binary}, {MGOPT_OP_sub, mgopt__ke_binary},
    {MGOPT_OP_mul, mgopt__ke_binary}, {MGOPT_OP_real_div, mgopt__ke_binary},
    {MGOPT_OP_pow, mgopt__ke_binary}, {MGOPT_OP_maximum, mgopt__ke_binary},
    {MGOPT_OP_minimum, mgopt__ke_binary}, {MGOPT_OP_floor_div, mgopt__ke_binary},
    {MGOPT_OP_mod, mgopt__ke_binary}, {MGOPT_OP_equal, mgopt__ke_binary},
    {MGOPT_OP_not_equal, mgopt__ke_binary}, {MGOPT_OP_less, mgopt__ke_binary},
    {MGOPT_OP_less_equal, mgopt__ke_binary}, {MGOPT_OP_greater, mgopt__ke_binary},
    {MGOPT_OP_greater_equal, mgopt__ke_binary}, {MGOPT_OP_logical_and, mgopt__ke_binary},
    {MGOPT_OP_logical_or, mgopt__ke_binary}, {MGOPT_OP_logical_xor, mgopt__ke_binary},
    {MGOPT_OP_logical_not, mgopt__ke_logical_not}, {MGOPT_OP_select, mgopt__ke_select},
    {MGOPT_OP_abs, mgopt__ke_unary}, {MGOPT_OP_exp, mgopt__ke_unary},
    {MGOPT_OP_log, mgopt__ke_unary}, {MGOPT_OP_sqrt, mgopt__ke_unary},
    {MGOPT_OP_rsqrt, mgopt__ke_unary}, {MGOPT_OP_inverse, mgopt__ke_unary},
    {MGOPT_OP_square, mgopt__ke_unary}, {MGOPT_OP_erf, mgopt__ke_unary},
    {MGOPT_OP_tanh, mgopt__ke_unary}, {MGOPT_OP_sigmoid, mgopt__ke_unary},
    {MGOPT_OP_relu, mgopt__ke_unary}, {MGOPT_OP_relu6, mgopt__ke_unary},
    {MGOPT_OP_leaky_relu, mgopt__ke_unary}, {MGOPT_OP_gelu, mgopt__ke_unary},
    {MGOPT_OP_clip, mgopt__ke_unary}, {MGOPT_OP_floor, mgopt__ke_unary},
    {MGOPT_OP_ceil, mgopt__ke_unary}, {MGOPT_OP_round, mgopt__ke_unary},
    {MGOPT_OP_sign, mgopt__ke_unary}, {MGOPT_OP_sin, mgopt__ke_unary},
    {MGOPT_OP_cos, mgopt__ke_unary}, {MGOPT_OP_silu, mgopt__ke_unary},
    {MGOPT_OP_softplus, mgopt__ke_unary}, {MGOPT_OP_elu, mgopt__ke_unary},
    {MGOPT_OP_softmax, mgopt__kr_softmax}, {MGOPT_OP_cast, mgopt__ke_cast},
    {MGOPT_OP_reshape, mgopt__ks_reshape}, {MGOPT_OP_transpose, mgopt__ks_transpose},
    {MGOPT_OP_expand_dims, mgopt__ks_expand_dims}, {MGOPT_OP_squeeze, mgopt__ks_squeeze},
    {MGOPT_OP_concat, mgopt__ks_concat}, {MGOPT_OP_stack, mgopt__ks_stack},
    {MGOPT_OP_split, mgopt__ks_split}, {MGOPT_OP_slice_by_index, mgopt__ks_slice_by_index},
    {MGOPT_OP_slice_by_size, mgopt__ks_slice_by_size}, {MGOPT_OP_gather, mgopt__ks_gather},
    {MGOPT_OP_one_hot, mgopt__ks_one_hot}, {MGOPT_OP_pad, mgopt__ks_pad},
    {MGOPT_OP_tile, mgopt__ks_tile}, {MGOPT_OP_matmul, mgopt__kr_matmul},
    {MGOPT_OP_linear, mgopt__kr_linear}, {MGOPT_OP_reduce_sum, mgopt__kr_reduce},
    {MGOPT_OP_reduce_mean, mgopt__kr_reduce}, {MGOPT_OP_reduce_max, mgopt__kr_reduce},
    {MGOPT_OP_reduce_min, mgopt__kr_reduce}, {MGOPT_OP_reduce_prod, mgopt__kr_reduce},
    {MGOPT_OP_quantize, mgopt__kc_quantize}, {MGOPT_OP_dequantize, mgopt__kc_dequantize},
    {MGOPT_OP_constexpr_affine_dequantize, mgopt__kc_affine_dequantize},
    {MGOPT_OP_constexpr_lut_to_dense, mgopt__kc_lut_to_dense},
    {MGOPT_OP_constexpr_sparse_to_dense, mgopt__kc_sparse_to_dense},
    {MGOPT_OP_constexpr_blockwise_shift_scale, mgopt__kc_blockwise_shift_scale},
    {MGOPT_OP_constexpr_cast, mgopt__kc_constexpr_cast},
};

static mgopt__kernel_fn mgopt__k_kernel(int32_t kind) {
  int32_t i;
  for (i = 0; i < MGOPT__ARRAY_COUNT(mgopt__k_entries); i++)
    if (mgopt__k_entries[i].kind == kind) return mgopt__k_entries[i].fn;
  return NULL;
}

MGOPT__PRIVATE int mgopt__fold_has_kernel(int32_t kind) { return mgopt__k_kernel(kind) != NULL; }

/* A constant tensor is usable when its header is self-consistent. */
static int mgopt__k_tensor_ok(const mgopt_tensor *t) {
  int64_t nb;
  if (t->rank < 0 || t->rank > MGOPT__K_MAX_RANK || (t->rank > 0 && !t->shape)) return 0;
  if (mgopt__k_numel(t->rank, t->shape) != t->numel) return 0;
  nb = mgopt_dtype_nbytes((mgopt_dtype)t->dtype, t->numel);
  return nb >= 0 && (uint64_t)nb == (uint64_t)t->nbytes && (t->data || t->nbytes == 0);
}

MGOPTDEF int mgopt_fold_op(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud) {
  const mgopt_fold_options *opts = (const mgopt_fold_options *)ud;
  mgopt__kernel_fn fn;
  mgopt__kctx k;
  int32_t s, i;
  int r;
  if (!p || !op || !out || (op->flags & MGOPT_OP_ERASED) || op->nblocks != 0 || op->nouts < 1)
    return MGOPT__K_NO;
  fn = mgopt__k_kernel(op->kind);
  if (!fn) return MGOPT__K_NO;
  for (s = 0; s < op->nslots; s++)
    for (i = 0; i < op->slots[s].n; i++) {
      mgopt_tensor *t = mgopt_value_const(op->slots[s].uses[i].value);
      if (!t || !mgopt__k_tensor_ok(t)) return MGOPT__K_NO;
    }
  memset(&k, 0, sizeof k);
  k.p = p;
  k.op = op;
  k.out = out;
  k.max_elements = opts ? opts->max_elements : 0;
  for (i = 0; i < op->nouts; i++) out[i] = NULL;
  r = fn(&k);
  for (i = 0; i < k.nscratch; i++) mgopt__heap_free(&p->alloc, k.scratch[i], k.scratch_size[i]);
  if (r != MGOPT__K_OK)
    for (i = 0; i < op->nouts; i++) out[i] = NULL;
  return r;
}
