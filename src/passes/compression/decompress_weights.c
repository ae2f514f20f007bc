/* src/passes/compression/decompress_weights.c — common::decompress_weights: every constexpr_* weight becomes a plain const.

   Spec: mil_graph_passes.txt, compression (WeightDecompressor); reference mil-passes.md §2.5, §4.5.

   Before:
     main(%x: (1, 5, fp32)) {
       %d: (5, fp32)* = const(val=[2, 3, -4, 5, 6])
       %m: (2, 5, uint1)* = const(val=[[0, 1, 0, 1, 0], [1, 0, 1, 0, 1]])
       %w: (2, 5, fp32) = constexpr_sparse_to_dense(nonzero_data=%d, mask=%m)
       %y: (1, 2, fp32) = linear(x=%x, weight=%w)
     } -> (%y)
   After:
     main(%x: (1, 5, fp32)) {
       %w: (2, 5, fp32)* = const(val=[[0, 2, 0, 3, 0], [-4, 0, 5, 0, 6]])
       %y: (1, 2, fp32) = linear(x=%x, weight=%w)
     } -> (%y)

   Fires on: every registered constexpr_* op (affine_dequantize,
   lut_to_dense, sparse_to_dense, blockwise_shift_scale, cast, and any other
   op of the constexpr trait), in every block, whose operands are constants
   and whose kernel computes it; chains (a constexpr reading another's
   output) fold in order. The const takes the output's name; the constants
   that fed only folded ops are erased.
   Must not fire: opaque constexpr ops (no kernel); an op the kernel refuses
   (a malformed mask, a shape that disagrees); when the result's static type
   does not suit a reader of the output.
   Numeric contract: the constexpr kernels' (src/kernels/constexpr.c,
   src/kernels/elementwise.c for constexpr_cast), the same values an
   evaluator or a runtime materializes.
   Cost: one worklist run over the program, plus each kernel's O(numel). */
#include "../../passes_internal.h"

typedef struct mgopt__dw_state {
  mgopt_fold_fn fold;
  void *ud;
  mgopt_op **fed; /* const ops that fed a folded op */
  int64_t nfed, cap;
  const mgopt_allocator *al;
  int oom;
} mgopt__dw_state;

static int mgopt__dw_fold(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud) {
  mgopt__dw_state *st = (mgopt__dw_state *)ud;
  int32_t s, k, i;
  int r;
  if (op->kind == MGOPT_OP_OPAQUE || !(mgopt_op_traits(op) & MGOPT_TRAIT_CONSTEXPR)) return 0;
  r = st->fold(p, op, out, st->ud);
  if (r != 1) return r;
  for (i = 0; i < op->nouts; i++)
    if (!mgopt__pu_replace_static_fits(p, op->outs[i], (mgopt_dtype)out[i]->dtype, out[i]->rank, out[i]->shape))
      return 0;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      mgopt_value *v = op->slots[s].uses[k].value;
      if (!v || !v->def) continue;
      if (st->nfed == st->cap) {
        int64_t nc = st->cap ? 2 * st->cap : 64;
        mgopt_op **q = (mgopt_op **)mgopt__heap_realloc(st->al, st->fed, (size_t)st->cap * sizeof(mgopt_op *),
                                                        (size_t)nc * sizeof(mgopt_op *));
        if (!q) return -1;
        st->fed = q;
        st->cap = nc;
      }
      st->fed[st->nfed++] = v->def;
    }
  return 1;
}

static int mgopt__dw_cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (mgopt_op *const *)a, y = (uintptr_t) * (mgopt_op *const *)b;
  return x < y ? -1 : x > y;
}

static mgopt_status mgopt__dw_run(mgopt_pass_ctx *ctx) {
  mgopt_rewrite_config cfg;
  mgopt_rewrite_stats stats;
  mgopt__dw_state st;
  mgopt_status s;
  int64_t i;
  memset(&st, 0, sizeof st);
  st.fold = ctx->fold ? ctx->fold : mgopt_fold_op;
  st.ud = ctx->fold ? ctx->fold_ud : NULL;
  st.al = &ctx->program->alloc;
  memset(&cfg, 0, sizeof cfg);
  memset(&stats, 0, sizeof stats);
  cfg.keep_dead = 1;
  cfg.fold = mgopt__dw_fold;
  cfg.fold_ud = &st;
  s = mgopt_rewrite_program(ctx->program, NULL, 0, &cfg, &stats, ctx->diag);
  /* the constants read only by folded ops go; each op once (a const may
     have fed several), and none was erased while the driver ran */
  if (st.nfed) qsort(st.fed, (size_t)st.nfed, sizeof(mgopt_op *), mgopt__dw_cmp_ptr);
  for (i = 0; i < st.nfed; i++) {
    if (i > 0 && st.fed[i] == st.fed[i - 1]) continue;
    if (st.fed[i]->kind == MGOPT_OP_const && mgopt__op_is_dead(st.fed[i])) mgopt_op_erase(st.fed[i]);
  }
  mgopt__heap_free(st.al, st.fed, (size_t)st.cap * sizeof(mgopt_op *));
  ctx->rewrites += stats.folds;
  return s;
}

MGOPT__DEFINE_PASS(compression, common, decompress_weights, "every constexpr_* weight becomes a plain const",
                   mgopt__dw_run);
