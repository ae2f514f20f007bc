/* src/passes/compression/prune_weights.c — common::prune_weights: weights with their small values zeroed, stored as the non-zero values and a bit mask.

   Spec: mil_graph_passes.txt, compression::prune_weights; reference mil-passes.md §2.5, §4.1, §4.4, §4.5.

   Before (weight_threshold=0, threshold=0.5, minimum_sparsity_percentile=0.3):
     main(%x: (1, 5, fp32)) {
       %w: (2, 5, fp32)* = const(val=[[0.1, 2, -0.5, 3, 0], [-4, 0.2, 5, 0.4, 6]])
       %y: (1, 2, fp32) = linear(x=%x, weight=%w)
     } -> (%y)
   After:
     main(%x: (1, 5, fp32)) {
       %w_sparsified_nonzero_data: (5, fp32)* = const(val=[2, 3, -4, 5, 6])
       %w_sparsified_mask: (2, 5, uint1)* = const(val=[[0, 1, 0, 1, 0], [1, 0, 1, 0, 1]])
       %w_sparsified: (2, 5, fp32) = constexpr_sparse_to_dense(nonzero_data=%w_sparsified_nonzero_data,
                                                               mask=%w_sparsified_mask)
       %y: (1, 2, fp32) = linear(x=%x, weight=%w_sparsified)
     } -> (%y)

   Options (defaults as the reference's OpThresholdPrunerConfig /
   OpMagnitudePrunerConfig):
   - mode: threshold (default) or magnitude.
   - threshold (1e-12, >= 0): threshold mode zeroes |w| <= threshold.
   - minimum_sparsity_percentile (0.5, in [0, 1]): threshold mode leaves a
     weight alone when the fraction of zeros after pruning is below it.
   - target_sparsity (in [0, 1]): magnitude mode zeroes |w| <= the
     100*target_sparsity percentile of the magnitudes (numpy's linear
     method); 1 zeroes everything, 0 nothing.
   - block_size (> 1): magnitude mode on blocks of block_size consecutive
     entries along axis `dim` (0 by default), ranked by their L2 norm (the
     last block may be short); skipped when block_size > shape[dim] / 2.
   - n_m_ratio ("n:m", n <= m): magnitude mode zeroes the n smallest |w| of
     every m consecutive entries along axis `dim` (1 by default; the last
     group zero-padded); skipped when m > shape[dim] / 2. Exclusive with
     target_sparsity and block_size.
   - dim (0 or 1): the axis of block_size and n_m_ratio.
   - weight_threshold (2048): a weight is pruned when it has MORE elements.
   - joint_compression (false): prune compressed weights instead of plain
     ones (reference §4.6): each constexpr_blockwise_shift_scale of constant
     data and each scalar iOS18 constexpr_lut_to_dense is judged by its
     materialized value (the folding kernels) like a const; the values it
     prunes decide the mask, and the op becomes
     constexpr_sparse_blockwise_shift_scale(data_mask, the data at the mask,
     scale, offset) or constexpr_lut_to_sparse(indices_mask, the indices at
     the mask, lut), named <op>_sparse, read by constexpr_sparse_to_dense
     <op>_sparsified. Plain consts are then left alone, as the reference.
   Per-weight options come from the compression configuration
   (mgopt_compress_config).

   Fires on: every weight the compression driver offers (passes/compress.c:
   fp16, bf16, fp32, int8 or uint8 const of rank >= 2, more than
   weight_threshold elements, read by an op). The op emitted is the
   reference's iOS18 form: nonzero_data (the weight's dtype, the kept
   non-zero values in row-major order) and mask (uint1, the weight's shape,
   1 where a value is kept), named <const>_sparsified. Values that were zero
   before are dropped like pruned ones (the mask is w != 0), so -0.0 comes
   back as +0.0.
   Must not fire: threshold mode below minimum_sparsity_percentile; block
   and n:m pruning of a weight read by anything but conv.weight or
   linear.weight, of rank outside 2..5, or too small along `dim` (see
   above); on consts read by constexpr_* ops; joint: on a compressed op
   read by another constexpr_* op, on data that is not constant, on vector
   LUTs (the reference builds a mask of the widened shape for the smaller
   indices and fails); when the program's target refuses the ops (an ONNX
   writer has no sparse joint form: it refuses them).

   Numeric contract (src/kernels/prune.c): magnitudes in double from the
   weight's exact values; the percentile is numpy's default linear method in
   double (numpy 2 compares float32 magnitudes with the float64 percentile:
   so does this); block norms are a sum of squares in double and one sqrt
   (numpy computes them in the weight's dtype: a magnitude within an ulp of
   the percentile may be decided differently); n:m breaks ties by position.
   Kept values are copied bit for bit.

   Cost: O(numel) per weight for threshold and n:m (times m), a quickselect
   (expected O(numel)) for the percentile; numel doubles and numel bytes of
   scratch. */
#include "../../passes_internal.h"
#include "../../kernels/kernels.h"

static mgopt_opt_def const mgopt__pr_opts[9] = {
    {"mode", MGOPT_OPT_STRING, "threshold", "threshold or magnitude", "threshold|magnitude"},
    {"threshold", MGOPT_OPT_FLOAT, "1e-12", "threshold mode: zero |w| <= threshold", "0.."},
    {"minimum_sparsity_percentile", MGOPT_OPT_FLOAT, "0.5",
     "threshold mode: skip a weight whose fraction of zeros stays below this", "0..1"},
    {"target_sparsity", MGOPT_OPT_FLOAT, "-1", "magnitude mode: fraction of the weight zeroed (0..1)", "-1|0..1"},
    {"block_size", MGOPT_OPT_INT, "1", "magnitude mode: prune blocks of this many entries along dim (> 1)", "1.."},
    {"n_m_ratio", MGOPT_OPT_STRING, "", "magnitude mode: \"n:m\", zero n of every m entries along dim", NULL},
    {"dim", MGOPT_OPT_INT, "-1", "axis of block_size (default 0) and n_m_ratio (default 1)", NULL},
    {"weight_threshold", MGOPT_OPT_INT, "2048", "prune weights with more elements than this", "0.."},
    {"joint_compression", MGOPT_OPT_BOOL, "false",
     "prune quantized / palettized weights instead (constexpr_sparse_blockwise_shift_scale, constexpr_lut_to_sparse)", NULL}};

enum {
  MGOPT__PR_MODE,
  MGOPT__PR_THRESHOLD,
  MGOPT__PR_MIN_SPARSITY,
  MGOPT__PR_TARGET,
  MGOPT__PR_BLOCK,
  MGOPT__PR_NM,
  MGOPT__PR_DIM,
  MGOPT__PR_WEIGHT_THRESHOLD,
  MGOPT__PR_JOINT
};

typedef struct mgopt__pr_cfg {
  int magnitude;
  double threshold, min_sparsity, target;
  int64_t block, n, m;
  int32_t dim;
} mgopt__pr_cfg;

/* Reads one weight's options; 0 with diag set when they are not valid. */
static int mgopt__pr_config(mgopt_pass_ctx *ctx, const mgopt_opt_value *o, mgopt__pr_cfg *c) {
  const char *mode = o[MGOPT__PR_MODE].s ? o[MGOPT__PR_MODE].s : "threshold";
  const char *nm = o[MGOPT__PR_NM].s ? o[MGOPT__PR_NM].s : "";
  memset(c, 0, sizeof *c);
  if (strcmp(mode, "threshold") == 0) c->magnitude = 0;
  else if (strcmp(mode, "magnitude") == 0) c->magnitude = 1;
  else return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "prune_weights: unknown mode '%s'", mode), 0;
  c->threshold = o[MGOPT__PR_THRESHOLD].f;
  c->min_sparsity = o[MGOPT__PR_MIN_SPARSITY].f;
  c->target = o[MGOPT__PR_TARGET].f;
  c->block = o[MGOPT__PR_BLOCK].i;
  c->dim = (int32_t)o[MGOPT__PR_DIM].i;
  if (!(c->threshold >= 0.0))
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "prune_weights: threshold must be >= 0"), 0;
  if (!(c->min_sparsity >= 0.0 && c->min_sparsity <= 1.0))
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG,
                          "prune_weights: minimum_sparsity_percentile must be in [0, 1]"),
           0;
  if (o[MGOPT__PR_WEIGHT_THRESHOLD].i < 0)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "prune_weights: weight_threshold must be >= 0"), 0;
  if (nm[0]) {
    char *end = NULL;
    long long n = strtoll(nm, &end, 10), m;
    if (!end || *end != ':')
      return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "prune_weights: n_m_ratio must be \"n:m\""), 0;
    m = strtoll(end + 1, &end, 10);
    if (*end || n < 0 || m <= 0 || n > m)
      return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG,
                            "prune_weights: n_m_ratio must be \"n:m\" with 0 <= n <= m, m > 0"),
             0;
    c->n = n;
    c->m = m;
  }
  if (!c->magnitude) {
    if (c->m || c->block != 1 || c->target != -1.0)
      return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG,
                            "prune_weights: target_sparsity, block_size and n_m_ratio need mode=magnitude"),
             0;
    return 1;
  }
  if ((c->target != -1.0) == (c->m != 0))
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG,
                          "prune_weights: magnitude mode takes exactly one of target_sparsity and n_m_ratio"),
           0;
  if (c->m && c->block != 1)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG,
                          "prune_weights: block_size and n_m_ratio exclude each other"),
           0;
  if (!c->m && !(c->target >= 0.0 && c->target <= 1.0))
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "prune_weights: target_sparsity must be in [0, 1]"), 0;
  if (c->block < 1)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "prune_weights: block_size must be >= 1"), 0;
  if (c->dim == -1) c->dim = c->m ? 1 : 0;
  if (c->dim != 0 && c->dim != 1)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "prune_weights: dim must be 0 or 1"), 0;
  return 1;
}

/* Every reader of v reads it as the weight of a conv or linear. */
static int mgopt__pr_conv_linear_only(const mgopt_value *v) {
  const mgopt_use *u;
  for (u = v->uses; u; u = u->next) {
    const mgopt_op *op = u->op;
    if (!op || (op->kind != MGOPT_OP_conv && op->kind != MGOPT_OP_linear)) return 0;
    if (u->slot < 0 || u->slot >= op->nslots || strcmp(op->slots[u->slot].name, "weight") != 0) return 0;
  }
  return 1;
}

/* keep[] for w under c: 1 done, 0 the weight is left alone. */
static int mgopt__pr_mask(const mgopt__pr_cfg *c, const mgopt_tensor *t, double *mag, double *scratch,
                          uint8_t *keep) {
  int64_t n = t->numel, i, zeros = 0;
  if (!c->magnitude) {
    mgopt__kp_magnitude(t, mag);
    mgopt__kp_threshold_mask(mag, n, c->threshold, keep);
    for (i = 0; i < n; i++) zeros += !keep[i] || mag[i] == 0.0;
    return !((double)zeros / (double)n < c->min_sparsity);
  }
  if (c->m) {
    mgopt__kp_magnitude(t, mag);
    return mgopt__kp_nm_mask(t, mag, c->n, c->m, c->dim, keep);
  }
  if (c->block > 1) {
    if (!mgopt__kp_block_magnitude(t, c->dim, c->block, mag)) return 0;
  } else {
    mgopt__kp_magnitude(t, mag);
  }
  mgopt__kp_magnitude_mask(mag, n, c->target, scratch, keep);
  return 1;
}

/* A compressed weight the joint form can take: constexpr_blockwise_shift_scale
   of constant data, or an iOS18 scalar constexpr_lut_to_dense (vector LUTs:
   the mask of the widened weight does not fit the indices, where the
   reference fails). */
static int mgopt__pr_joint_form(const mgopt_op *op) {
  mgopt_tensor *lut;
  if (op->kind == MGOPT_OP_constexpr_blockwise_shift_scale) return mgopt_value_const(mgopt_op_operand(op, "data")) != NULL;
  lut = mgopt_value_const(mgopt_op_operand(op, "lut"));
  return mgopt_value_const(mgopt_op_operand(op, "indices")) && lut && lut->rank >= 3 &&
         lut->shape[lut->rank - 1] == 1 && !mgopt_op_attr(op, "shape") && !mgopt_op_operand(op, "shape");
}

/* Replaces compressed weight w->op by its sparse form under mask mt:
   constexpr_sparse_blockwise_shift_scale (the data at the mask, the same
   scale and offset) or constexpr_lut_to_sparse (the indices at the mask, the
   same lut), then constexpr_sparse_to_dense named <op>_sparsified. */
static int mgopt__pr_joint(mgopt_program *p, const mgopt__cw_weight *w, mgopt_tensor *mt) {
  static const char *const qslots[4] = {"data_mask", "nonzero_data", "scale", "offset"};
  static const char *const lslots[3] = {"indices_mask", "indices_nonzero_data", "lut"};
  static const char *const slots[2] = {"nonzero_data", "mask"};
  mgopt_op *op = w->op, *jo, *ce;
  int q = op->kind == MGOPT_OP_constexpr_blockwise_shift_scale;
  mgopt_value *src = mgopt_op_operand(op, q ? "data" : "indices"), *vals[4];
  const char *base = mgopt__pu_value_name(op->outs[0]);
  mgopt_tensor *nz = mgopt__cw_gather(p, mgopt_value_const(src), mt);
  if (!nz) return -1;
  vals[0] = mgopt_build_const(p, op->parent, op, mgopt__pu_name2(p, base, "_sparsified_mask"), mt);
  vals[1] = mgopt_build_const(p, op->parent, op,
                              mgopt__pu_name2(p, base, q ? "_sparsified_data" : "_sparsified_indices"), nz);
  vals[2] = mgopt_op_operand(op, q ? "scale" : "lut");
  vals[3] = q ? mgopt_op_operand(op, "offset") : NULL;
  if (!vals[0] || !vals[1]) return -1;
  jo = mgopt__cw_build_sparse(p, op, q ? "constexpr_sparse_blockwise_shift_scale" : "constexpr_lut_to_sparse",
                              mgopt__pu_name2(p, base, "_sparse"), vals[3] ? 4 : 3, q ? qslots : lslots, vals);
  if (!jo) return -1;
  if (!q && mgopt_op_attr(op, "vector_axis") &&
      mgopt_op_set_int(jo, "vector_axis", mgopt_op_get_int(op, "vector_axis", 0)) != MGOPT_OK)
    return -1;
  if (mgopt_op_infer(p, jo, NULL) != MGOPT_OK || !mgopt_program_target_accepts(p, jo)) {
    mgopt__cw_unbuild(jo);
    return 0;
  }
  vals[0] = jo->outs[1];
  vals[1] = jo->outs[0];
  ce = mgopt_build_op(p, op->parent, op, "constexpr_sparse_to_dense", mgopt__pu_name2(p, base, "_sparsified"), 2,
                      slots, vals, 1);
  if (!ce) return -1;
  if (mgopt_op_infer(p, ce, NULL) != MGOPT_OK || !mgopt_type_equal(&ce->outs[0]->type, &op->outs[0]->type) ||
      !mgopt_program_target_accepts(p, ce)) {
    mgopt_op_erase(ce);
    mgopt__cw_unbuild(jo);
    return 0;
  }
  mgopt__cw_replace(w, ce->outs[0]);
  return 1;
}

static int mgopt__pr_fn(mgopt_pass_ctx *ctx, const mgopt__cw_weight *w, void *ud) {
  mgopt_program *p = ctx->program;
  mgopt__pr_cfg c;
  mgopt_tensor *t = w->t, *nzt, *mt;
  int64_t n = t->numel, d;
  double *mag = NULL;
  uint8_t *keep;
  const char *base = mgopt__pu_value_name(w->op->outs[0]);
  static const char *const slots[2] = {"nonzero_data", "mask"};
  mgopt_value *vals[2];
  mgopt_op *ce;
  void *nzd;
  int ok;
  MGOPT__UNUSED(ud);
  if (!mgopt__pr_config(ctx, w->opts, &c)) return -2;
  if (!mgopt__kp_weight_dtype((mgopt_dtype)t->dtype) || n <= 0) return 0;
  if (w->op->kind != MGOPT_OP_const && !mgopt__pr_joint_form(w->op)) return 0;
  if (c.magnitude && (c.m || c.block > 1) && !mgopt__pr_conv_linear_only(w->op->outs[0])) return 0;
  if (!mgopt_tensor_data(p, t)) return -1;
  mag = (double *)mgopt__heap_realloc(&p->alloc, NULL, 0, (size_t)n * (2 * sizeof(double) + 1));
  if (!mag) return -1;
  keep = (uint8_t *)(mag + 2 * n);
  ok = mgopt__pr_mask(&c, t, mag, mag + n, keep);
  nzt = mt = NULL;
  nzd = NULL;
  if (ok && w->op->kind != MGOPT_OP_const) {
    /* joint: only the mask is taken from the pruned values */
    mt = mgopt_tensor_new(p, MGOPT_DT_UINT1, t->rank, t->shape);
    if (mt && mgopt_tensor_data_mut(p, mt)) {
      uint8_t *mb = (uint8_t *)mt->data;
      int64_t i;
      memset(mb, 0, mt->nbytes);
      for (i = 0; i < n; i++)
        if (keep[i] && mgopt_tensor_get_f64(t, i) != 0.0) mb[i >> 3] = (uint8_t)(mb[i >> 3] | (1u << (i & 7)));
    } else {
      ok = -1;
    }
    mgopt__heap_free(&p->alloc, mag, (size_t)n * (2 * sizeof(double) + 1));
    return ok == 1 ? mgopt__pr_joint(p, w, mt) : ok;
  }
  if (ok) {
    d = mgopt__kp_nonzero_count(t, keep);
    nzt = mgopt_tensor_new(p, (mgopt_dtype)t->dtype, 1, &d);
    mt = mgopt_tensor_new(p, MGOPT_DT_UINT1, t->rank, t->shape);
    if (nzt && mt && (nzd = mgopt_tensor_data_mut(p, nzt)) != NULL && mgopt_tensor_data_mut(p, mt))
      mgopt__kp_encode(t, keep, nzd, (uint8_t *)mt->data);
    else
      ok = -1;
  }
  mgopt__heap_free(&p->alloc, mag, (size_t)n * (2 * sizeof(double) + 1));
  if (ok != 1) return ok;
  vals[0] = mgopt_build_const(p, w->op->parent, w->op, mgopt__pu_name2(p, base, "_sparsified_nonzero_data"), nzt);
  vals[1] = mgopt_build_const(p, w->op->parent, w->op, mgopt__pu_name2(p, base, "_sparsified_mask"), mt);
  if (!vals[0] || !vals[1]) return -1;
  ce = mgopt_build_op(p, w->op->parent, w->op, "constexpr_sparse_to_dense", mgopt__pu_name2(p, base, "_sparsified"), 2,
                      slots, vals, 1);
  if (!ce) return -1;
  return mgopt__cw_finish(p, w, ce);
}

static mgopt_status mgopt__pr_run(mgopt_pass_ctx *ctx) {
  mgopt__pr_cfg c;
  mgopt__cw_pass cp;
  if (!mgopt__pr_config(ctx, ctx->opts, &c)) return MGOPT_ERR_INVALID_ARG;
  memset(&cp, 0, sizeof cp);
  cp.name = "prune_weights";
  cp.opts = mgopt__pr_opts;
  cp.nopts = MGOPT__ARRAY_COUNT(mgopt__pr_opts);
  cp.fn = mgopt__pr_fn;
  cp.compressed_ops = ctx->opts[MGOPT__PR_JOINT].i != 0;
  return mgopt__cw_run(ctx, &cp);
}

MGOPT__DEFINE_PASS_WITH_OPTIONS(compression, common, prune_weights,
                                "weights with small values zeroed, stored sparse (constexpr_sparse_to_dense)",
                                mgopt__pr_opts, mgopt__pr_run);
