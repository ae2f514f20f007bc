/* src/passes/common/const_elimination.c — common::const_elimination: replace ops whose operands are all constant by constants.

   Spec: mil_graph_passes.txt, "Replace non-const ops that have const Var"; reference mil-passes.md §3.2.

   Before:
     main(%x: (2, fp32)) {
       %a: (2, fp32)* = const(val=[1, 2])
       %b: (2, fp32)* = const(val=[3, 4])
       %c: (2, fp32) = add(x=%a, y=%b)
       %y: (2, fp32) = mul(x=%x, y=%c)
     } -> (%y)
   After:
     main(%x: (2, fp32)) {
       %a: (2, fp32)* = const(val=[1, 2])
       %b: (2, fp32)* = const(val=[3, 4])
       %c: (2, fp32)* = const(val=[4, 6])
       %y: (2, fp32) = mul(x=%x, y=%c)
     } -> (%y)

   Fires on: every op (nested blocks included) whose operands are all
   constant and for which the folding function in use (the built-in kernels of
   mgopt_fold_op unless the caller gave others) computes every output; folds
   cascade through the worklist. The constant takes the output's name, so
   function outputs keep theirs. The operands left unused stay for
   dead_code_elimination, as in MIL.
   Must not fire: on constexpr_* ops and dequantize (the compressed form of
   weights is kept; their outputs are not constants, so nothing below them
   folds either); on ops owning blocks; when the kernel refuses (see
   mgopt_fold_op: bad parameters, integer division by zero, a stored type that
   disagrees); when an output of rank > 0 has more elements than
   skip_const_by_size (scalars always fold); when the constant's static type
   does not suit a reader of the output, or differs from the declared type of
   a function output (mgopt__pu_replace_static_fits: a symbolic dim may hide a
   contradiction, and main's declared outputs keep their types).
   Cost: one worklist run, O(ops) plus the kernels' work on folded values. */
#include "../../passes_internal.h"

typedef struct mgopt__ce_state {
  mgopt_fold_fn fold;
  void *ud;
  double skip_by_size; /* < 0: no limit */
} mgopt__ce_state;

static int mgopt__ce_too_big(const mgopt__ce_state *st, int32_t rank, int64_t numel) {
  return st->skip_by_size >= 0 && rank > 0 && (double)numel > st->skip_by_size;
}

static int mgopt__ce_fold(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud) {
  const mgopt__ce_state *st = (const mgopt__ce_state *)ud;
  int32_t i;
  int r;
  switch (op->kind) {
    case MGOPT_OP_constexpr_affine_dequantize: case MGOPT_OP_constexpr_lut_to_dense:
    case MGOPT_OP_constexpr_sparse_to_dense: case MGOPT_OP_constexpr_blockwise_shift_scale:
    case MGOPT_OP_constexpr_cast: case MGOPT_OP_dequantize:
      return 0;
    default: break;
  }
  if (op->kind == MGOPT_OP_OPAQUE && strncmp(op->type, "constexpr_", 10) == 0) return 0;
  /* a stored static type over the limit needs no evaluation */
  for (i = 0; i < op->nouts; i++) {
    int64_t n = mgopt_type_numel(&op->outs[i]->type);
    if (n >= 0 && mgopt__ce_too_big(st, op->outs[i]->type.rank, n)) return 0;
  }
  r = st->fold(p, op, out, st->ud);
  if (r != 1) return r;
  for (i = 0; i < op->nouts; i++)
    if (!out[i] || mgopt__ce_too_big(st, out[i]->rank, out[i]->numel) ||
        !mgopt__pu_replace_static_fits(p, op->outs[i], (mgopt_dtype)out[i]->dtype, out[i]->rank, out[i]->shape))
      return 0;
  return 1;
}

static mgopt_status mgopt__ce_run(mgopt_pass_ctx *ctx) {
  mgopt_rewrite_config cfg;
  mgopt_rewrite_stats stats;
  mgopt__ce_state st;
  mgopt_status s;
  if (!ctx->fold) return MGOPT_OK; /* no kernels: nothing can fold */
  st.fold = ctx->fold;
  st.ud = ctx->fold_ud;
  st.skip_by_size = ctx->opts[0].f;
  memset(&cfg, 0, sizeof cfg);
  memset(&stats, 0, sizeof stats);
  cfg.erase_dead = 0;
  cfg.fold = mgopt__ce_fold;
  cfg.fold_ud = &st;
  s = mgopt_rewrite_program(ctx->program, NULL, 0, &cfg, &stats, ctx->diag);
  ctx->rewrites += stats.folds;
  return s;
}

static const mgopt_opt_def mgopt__ce_opts[] = {
    {"skip_const_by_size", MGOPT_OPT_FLOAT, "-1",
     "do not fold outputs of rank > 0 with more elements than this (-1: no limit)"},
};

MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_const_elimination = {
    "common::const_elimination", "cleanup", "replace ops whose operands are all constant by constants",
    1, mgopt__ce_opts, mgopt__ce_run};
