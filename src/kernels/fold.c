/* src/kernels/fold.c — the kernel column of MGOPT_OP_TABLE and mgopt_fold_op, the evaluator of one op.

   mgopt_fold_op evaluates an op whose operands are all constant with MIL's
   semantics and returns new owned tensors. It never trusts the IR: ranks,
   axes, indices, element counts and the stored output types are checked, and
   anything doubtful is "not folded" (0) rather than guessed. The kernels are
   the seed of a reference evaluator: each takes the op and writes its outputs. */
#include "kernels.h"

/* The kernel column of MGOPT_OP_TABLE, by kind (NULL: the op has no kernel, as MGOPT_OP_OPAQUE). */
#define MGOPT__K_ROW(name, traits, slots, attrs, nouts_min, nouts_max, nblocks, infer, kernel) kernel,
static const mgopt__kernel_fn mgopt__k_kernels[] = {NULL, MGOPT_OP_TABLE(MGOPT__K_ROW)};
#undef MGOPT__K_ROW

MGOPT__PRIVATE mgopt__kernel_fn mgopt__k_kernel(int32_t kind) {
  return kind > MGOPT_OP_OPAQUE && kind < MGOPT_OP__COUNT ? mgopt__k_kernels[kind] : NULL;
}

MGOPT__PRIVATE int mgopt__k_multi_output(int32_t kind) {
  return kind == MGOPT_OP_split || kind == MGOPT_OP_topk || kind == MGOPT_OP_lstm || kind == MGOPT_OP_gru ||
         kind == MGOPT_OP_rnn || kind == MGOPT_OP_constexpr_lut_to_sparse ||
         kind == MGOPT_OP_constexpr_sparse_blockwise_shift_scale;
}

/* A constant tensor is usable when its header is self-consistent. */
static int mgopt__k_tensor_ok(const mgopt_tensor *t) {
  int64_t nb;
  if (t->rank < 0 || t->rank > MGOPT_MAX_RANK || (t->rank > 0 && !t->shape)) return 0;
  if (mgopt__k_numel(t->rank, t->shape) != t->numel) return 0;
  nb = mgopt_dtype_nbytes((mgopt_dtype)t->dtype, t->numel);
  return nb >= 0 && (uint64_t)nb == (uint64_t)t->nbytes && (t->data || t->nbytes == 0);
}

MGOPTDEF int mgopt_fold_op(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud) {
  const mgopt_fold_options *opts = (const mgopt_fold_options *)ud;
  mgopt__kernel_fn fn;
  mgopt__kctx k;
  int32_t s, i;
  int64_t in_bytes = 0;
  int r;
  if (!p || !op || !out || (op->flags & MGOPT_OP_ERASED) || op->nblocks != 0 || op->nouts < 1)
    return MGOPT__K_NO;
  fn = mgopt__k_kernel(op->kind);
  if (!fn || (op->nouts != 1 && !mgopt__k_multi_output(op->kind))) return MGOPT__K_NO;
  for (s = 0; s < op->nslots; s++)
    for (i = 0; i < op->slots[s].n; i++) {
      mgopt_tensor *t = mgopt_value_const(op->slots[s].uses[i].value);
      if (!t || !mgopt__k_tensor_ok(t)) return MGOPT__K_NO;
      in_bytes += (int64_t)t->nbytes;
    }
  memset(&k, 0, sizeof k);
  k.p = p;
  k.op = op;
  k.out = out;
  k.max_elements = opts ? opts->max_elements : 0;
  if (k.max_elements == 0) k.max_elements = MGOPT_FOLD_MAX_ELEMENTS;
  else if (k.max_elements < 0) k.max_elements = 0; /* kernels: 0 = no limit */
  k.max_growth = opts ? opts->max_growth_bytes : 0;
  if (k.max_growth == 0) k.max_growth = MGOPT_FOLD_MAX_GROWTH_BYTES;
  if (k.max_growth < 0 || (mgopt_op_traits(op) & MGOPT_TRAIT_CONSTEXPR)) k.max_growth = 0;
  k.in_bytes = in_bytes;
  for (i = 0; i < op->nouts; i++) out[i] = NULL;
  r = fn(&k);
  for (i = 0; i < k.nscratch; i++) mgopt__heap_free(&p->alloc, k.scratch[i], k.scratch_size[i]);
  for (i = 0; i < op->nouts && r == MGOPT__K_OK; i++)
    if (!out[i]) r = MGOPT__K_NO; /* every output is computed, or the op is not folded */
  if (r != MGOPT__K_OK)
    for (i = 0; i < op->nouts; i++) out[i] = NULL;
  return r;
}
