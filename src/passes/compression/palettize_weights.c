/* src/passes/compression/palettize_weights.c — common::palettize_weights: weights stored as a small lookup table (per tensor or per channel group) and packed 1..8-bit indices.

   Spec: mil_graph_passes.txt, compression::palettize_weights; reference mil-passes.md §2.5, §4.1,
   §4.3, §4.5.

   Before (12 elements: at most weight_threshold, 2048 by default, so the weight stays):
     main(%x: (1, 4, fp32)) {
       %w: (3, 4, fp32)* = const(val=[[1, 2, 1, 2], [3, 3, 1, 2], [1, 1, 2, 2]])
       %y: (1, 3, fp32) = linear(x=%x, weight=%w)
     } -> (%y)
   After:
     main(%x: (1, 4, fp32)) {
       %w: (3, 4, fp32)* = const(val=[[1, 2, 1, 2], [3, 3, 1, 2], [1, 1, 2, 2]])
       %y: (1, 3, fp32) = linear(x=%x, weight=%w)
     } -> (%y)
   With {mode=unique,weight_threshold=0} the weight becomes a 3-entry LUT and 2-bit indices:
       %w_palettized_indices: (3, 4, uint2)* = const(val=[[0, 1, 0, 1], [2, 2, 0, 1], [0, 0, 1, 1]])
       %w_palettized_lut: (1, 1, 4, 1, fp32)* = const(val=[[[[1], [2], [3], [0]]]])
       %w_palettized: (3, 4, fp32) = constexpr_lut_to_dense(indices=%w_palettized_indices,
                                       lut=%w_palettized_lut)
       %y: (1, 3, fp32) = linear(x=%x, weight=%w_palettized)

   Options (defaults as the reference): mode kmeans | uniform | unique | custom; nbits 1, 2, 3,
   4, 6 or 8 (required for kmeans and uniform, refused for unique and custom: the width then
   follows the number of distinct entries); granularity per_tensor | per_grouped_channel;
   group_size 32 (channels per LUT, 0: the whole axis); channel_axis (default: the weight's
   output-channel axis from its readers, see passes/compress.c); cluster_dim 1 (vector
   palettization: entries of cluster_dim consecutive elements along the channel axis);
   enable_per_channel_scale false; weight_threshold 2048 (strictly more elements are taken).
   mode=custom calls mgopt_compress_config.palettize_lut once per channel group (see
   mgopt_palettize_lut_fn). Per-weight options come from the compression configuration.
   joint_compression (default false; reference §4.6): when true, also take a const that is the only operand
   nonzero_data of a constexpr_sparse_to_dense (pruned: the weight is densified with its mask,
   zeros included, clustered, and becomes constexpr_lut_to_sparse(indices_mask = the mask,
   the indices at the mask, lut) named <const>_palettized, whose two outputs the
   sparse_to_dense reads) or data of a constexpr_blockwise_shift_scale (quantized: int8 /
   uint8 data is clustered in any mode and the LUT cast back to the data's dtype, truncating
   k-means centres like the reference's astype). The weight threshold and channel axes are the
   final weight's.


   Emitted: the reference's iOS18 form, constexpr_lut_to_dense(indices: uint{n} with the
   weight's shape (the channel axis divided by cluster_dim), lut: [1.., groups at the channel
   axis, .., 2^n, cluster_dim] of the weight's dtype, vector_axis when cluster_dim > 1), named
   <const>_palettized. With enable_per_channel_scale the weight is first divided by its max |w|
   along the channel axis (0 -> 1), as the reference does, and the output is wrapped in
   constexpr_blockwise_shift_scale(data=<lut op>, scale) named <const>_palettized_pcs.

   Fires on: every weight the compression driver offers (fp32 or fp16 const of rank >= 2 with
   more than weight_threshold elements, read by an op; int8/uint8 weights in unique mode).
   Must not fire: on non-finite weights; when the channel count is not a multiple of group_size
   or group_size not a multiple of cluster_dim; on cluster_dim > 1 with mode uniform; when the
   readers disagree on the channel axis and it is needed (grouped, vectors, scale; per_tensor
   takes axis 0); unique mode with more than 256 distinct values (vectors) in a group; indices
   as wide as the elements they stand for (an int8 weight with more than 128 distinct values:
   the LUT and its decoding would only make the file larger); a custom
   callback returning 0 or an index outside its LUT; consts read by constexpr_* ops (joint:
   other than the two above, or read by anything else too; pruned data with cluster_dim > 1
   or a per-channel scale, or quantized int data with a per-channel scale, where the
   reference fails); when the program's target refuses the ops (asked before clustering when
   the index width is known, kmeans and uniform, except for pruned data). Invalid options (nbits with
   unique, no nbits with kmeans, a bad granularity or group_size < 0, cluster_dim < 1) fail the
   pass with MGOPT_ERR_INVALID_ARG.

   Numeric contract: k-means and uniform compute in double from the weight's values (fp16
   widened exactly), see src/kernels/palettize.c for the k-means algorithm and its
   determinism; each LUT entry is rounded once to the weight's dtype (round to nearest even).
   unique and custom LUT entries are the weight's own values (exact). The per-channel scale is
   max |w| (exact, in the weight's dtype), the division w / scale is in float. Indices are
   packed little-endian (src/kernels/palettize.c).

   Cost: kmeans O(n) radix sort + O(K log n) per Lloyd step + O(n log K) assignment per group;
   uniform O(n); unique O(n log n) per group; vectors O(n K cluster_dim) per Lloyd step. */
#include "../../passes_internal.h"
#include "../../kernels/kernels.h"

static mgopt_opt_def const mgopt__pal_opts[9] = {
    {"mode", MGOPT_OPT_STRING, "kmeans", "kmeans, uniform, unique or custom", "kmeans|uniform|unique|custom"},
    {"nbits", MGOPT_OPT_INT, "0", "index bits: 1, 2, 3, 4, 6 or 8 (kmeans, uniform)", "0|1|2|3|4|6|8"},
    {"granularity", MGOPT_OPT_STRING, "per_tensor", "per_tensor or per_grouped_channel", "per_tensor|per_grouped_channel"},
    {"group_size", MGOPT_OPT_INT, "32", "per_grouped_channel: channels per LUT (0: the whole axis)", "0.."},
    {"channel_axis", MGOPT_OPT_STRING, "auto", "the channel axis (auto: the output-channel axis)", NULL},
    {"cluster_dim", MGOPT_OPT_INT, "1", "elements per LUT entry along the channel axis", "1.."},
    {"enable_per_channel_scale", MGOPT_OPT_BOOL, "false", "scale by max |w| along the channel axis", NULL},
    {"weight_threshold", MGOPT_OPT_INT, "2048", "compress weights with more elements than this", "0.."},
    {"joint_compression", MGOPT_OPT_BOOL, "false",
     "also palettize pruned non-zero data (constexpr_lut_to_sparse) and quantized data", NULL}};

enum { MGOPT__PW_MODE, MGOPT__PW_NBITS, MGOPT__PW_GRAN, MGOPT__PW_GROUP, MGOPT__PW_AXIS, MGOPT__PW_CD,
       MGOPT__PW_PCS, MGOPT__PW_THRESHOLD, MGOPT__PW_JOINT };

/* Reads the options into c (channel_axis: *axis_auto, else c->channel_axis unnormalised);
   0 with diag set when one is not valid. A missing nbits is an error only when
   need_nbits (a weight is being compressed). */
static int mgopt__pal_config(mgopt_pass_ctx *ctx, const mgopt_opt_value *o, mgopt__pal_cfg *c, int *axis_auto,
                             int need_nbits) {
  const char *mode = o[MGOPT__PW_MODE].s, *g = o[MGOPT__PW_GRAN].s, *ax = o[MGOPT__PW_AXIS].s;
  int64_t nb = o[MGOPT__PW_NBITS].i;
  memset(c, 0, sizeof *c);
  if (strcmp(mode, "kmeans") == 0) c->mode = MGOPT__PAL_KMEANS;
  else if (strcmp(mode, "uniform") == 0) c->mode = MGOPT__PAL_UNIFORM;
  else if (strcmp(mode, "unique") == 0) c->mode = MGOPT__PAL_UNIQUE;
  else if (strcmp(mode, "custom") == 0) c->mode = MGOPT__PAL_CUSTOM;
  else return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "palettize_weights: unknown mode '%s'", mode), 0;
  if (c->mode == MGOPT__PAL_KMEANS || c->mode == MGOPT__PAL_UNIFORM) {
    if ((need_nbits || nb != 0) && (nb < 1 || nb > 8 || mgopt__kp_nbits_for((int64_t)1 << nb) != nb))
      return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG,
                            "palettize_weights: mode %s needs nbits=1, 2, 3, 4, 6 or 8", mode), 0;
    c->nbits = (int)nb;
  } else if (nb != 0) {
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "palettize_weights: nbits is not allowed with mode %s",
                          mode), 0;
  }
  if (strcmp(g, "per_tensor") == 0) c->per_grouped_channel = 0;
  else if (strcmp(g, "per_grouped_channel") == 0) c->per_grouped_channel = 1;
  else
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "palettize_weights: unknown granularity '%s'", g), 0;
  c->group_size = o[MGOPT__PW_GROUP].i;
  if (c->group_size < 0)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "palettize_weights: group_size must be >= 0"), 0;
  if (o[MGOPT__PW_CD].i < 1 || o[MGOPT__PW_CD].i > 1024)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "palettize_weights: cluster_dim must be 1..1024"), 0;
  c->cluster_dim = (int32_t)o[MGOPT__PW_CD].i;
  c->per_channel_scale = o[MGOPT__PW_PCS].i != 0;
  if (o[MGOPT__PW_THRESHOLD].i < 0)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "palettize_weights: weight_threshold must be >= 0"), 0;
  *axis_auto = strcmp(ax, "auto") == 0;
  if (!*axis_auto) {
    char *end = NULL;
    long v = strtol(ax, &end, 10);
    if (!*ax || !end || *end || v < -MGOPT_MAX_RANK || v >= MGOPT_MAX_RANK)
      return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "palettize_weights: bad channel_axis '%s'", ax), 0;
    c->channel_axis = (int32_t)v;
  }
  return 1;
}

/* The dtype of indices of nbits bits. */
/* The ops that stand for weight w (rank r, channel axis `axis`): indices
   uint{nbits} and a LUT of `groups` palettes of vectors of cd entries, and a
   per-channel scale when pcs; the tensors are made here, to be filled by the
   caller. 1 when built and the program's target accepts them, 0 when it
   refuses (nothing is left built), -1 when memory runs out. */
typedef struct mgopt__pal_ops {
  mgopt_tensor *it, *lt, *st;
  mgopt_op *lop, *sop;
} mgopt__pal_ops;

static void mgopt__pal_unbuild(mgopt__pal_ops *b) {
  if (b->sop) mgopt__cw_unbuild(b->sop);
  if (b->lop) mgopt__cw_unbuild(b->lop);
  memset(b, 0, sizeof *b);
}

static int mgopt__pal_build(mgopt_program *p, const mgopt__cw_weight *w, int32_t axis, int nbits, int64_t groups,
                            int32_t cd, int pcs, mgopt__pal_ops *b) {
  mgopt_tensor *t = w->t;
  mgopt_dtype wdt = (mgopt_dtype)t->dtype, idt;
  int32_t rank = t->rank, d;
  int64_t ishape[MGOPT_MAX_RANK], lshape[MGOPT_MAX_RANK + 2], sshape[MGOPT_MAX_RANK];
  const char *base = mgopt__pu_value_name(w->op->outs[0]);
  const char *slots[2] = {"indices", "lut"}, *sslots[2] = {"data", "scale"};
  mgopt_value *vals[2];
  memset(b, 0, sizeof *b);
  for (d = 0; d < rank; d++) {
    ishape[d] = d == axis ? t->shape[d] / cd : t->shape[d];
    lshape[d] = d == axis ? groups : 1;
    sshape[d] = d == axis ? 1 : t->shape[d];
  }
  lshape[rank] = (int64_t)1 << nbits;
  lshape[rank + 1] = cd;
  idt = mgopt__dtype_lut_index(nbits);
  b->it = mgopt_tensor_new(p, idt, rank, ishape);
  b->lt = mgopt_tensor_new(p, wdt, rank + 2, lshape);
  if (pcs) b->st = mgopt_tensor_new(p, wdt, rank, sshape);
  if (!b->it || !b->lt || (pcs && !b->st)) return -1;
  vals[0] = mgopt_build_const(p, w->op->parent, w->op, mgopt__pu_name2(p, base, "_palettized_indices"), b->it);
  vals[1] = mgopt_build_const(p, w->op->parent, w->op, mgopt__pu_name2(p, base, "_palettized_lut"), b->lt);
  if (!vals[0] || !vals[1]) return -1;
  b->lop = mgopt_build_op(p, w->op->parent, w->op, "constexpr_lut_to_dense", mgopt__pu_name2(p, base, "_palettized"), 2,
                          slots, vals, 1);
  if (!b->lop) return -1;
  if (cd > 1 && mgopt_op_set_int(b->lop, "vector_axis", axis) != MGOPT_OK) return -1;
  if (mgopt_op_infer(p, b->lop, NULL) != MGOPT_OK || !mgopt_program_target_accepts(p, b->lop)) {
    mgopt__pal_unbuild(b);
    return 0;
  }
  if (pcs) {
    vals[0] = b->lop->outs[0];
    vals[1] = mgopt_build_const(p, w->op->parent, w->op, mgopt__pu_name2(p, base, "_palettized_pcs_scale"), b->st);
    if (!vals[1]) return -1;
    b->sop = mgopt_build_op(p, w->op->parent, w->op, "constexpr_blockwise_shift_scale",
                            mgopt__pu_name2(p, base, "_palettized_pcs"), 2, sslots, vals, 1);
    if (!b->sop) return -1;
    if (mgopt_op_infer(p, b->sop, NULL) != MGOPT_OK || !mgopt_program_target_accepts(p, b->sop)) {
      mgopt__pal_unbuild(b);
      return 0;
    }
  }
  if (!mgopt_type_equal(&(b->sop ? b->sop : b->lop)->outs[0]->type, &w->op->outs[0]->type)) {
    mgopt__pal_unbuild(b);
    return 0;
  }
  return 1;
}

/* Joint: nonzero_data (w->op) of constexpr_sparse_to_dense `sp` becomes
   constexpr_lut_to_sparse(indices_mask = sp's mask, the dense indices it
   at the mask, lut lt) named <const>_palettized, whose outputs sp reads. */
static int mgopt__pal_sparse(mgopt_program *p, const mgopt__cw_weight *w, mgopt_op *sp, mgopt_tensor *mask,
                             mgopt_tensor *it, mgopt_tensor *lt) {
  static const char *const slots[3] = {"indices_mask", "indices_nonzero_data", "lut"};
  const char *base = mgopt__pu_value_name(w->op->outs[0]);
  mgopt_tensor *nz = mgopt__cw_gather(p, it, mask);
  mgopt_value *vals[3];
  mgopt_op *ls;
  if (!nz) return -1;
  vals[0] = mgopt_op_operand(sp, "mask");
  vals[1] = mgopt_build_const(p, sp->parent, sp, mgopt__pu_name2(p, base, "_palettized_indices"), nz);
  vals[2] = mgopt_build_const(p, sp->parent, sp, mgopt__pu_name2(p, base, "_palettized_lut"), lt);
  if (!vals[1] || !vals[2]) return -1;
  ls = mgopt__cw_build_sparse(p, sp, "constexpr_lut_to_sparse", mgopt__pu_name2(p, base, "_palettized"), 3, slots,
                              vals);
  if (!ls) return -1;
  if (mgopt_op_infer(p, ls, NULL) != MGOPT_OK || !mgopt_type_equal(&ls->outs[1]->type, &w->op->outs[0]->type) ||
      !mgopt_type_equal(&ls->outs[0]->type, &vals[0]->type) || !mgopt_program_target_accepts(p, ls)) {
    mgopt__cw_unbuild(ls);
    return 0;
  }
  if (mgopt_op_set_operand(sp, "mask", ls->outs[0]) != MGOPT_OK ||
      mgopt_op_set_operand(sp, "nonzero_data", ls->outs[1]) != MGOPT_OK)
    return -1;
  if (!mgopt_program_target_accepts(p, sp)) { /* back to the plain sparse form */
    mgopt_op_set_operand(sp, "mask", vals[0]);
    mgopt_op_set_operand(sp, "nonzero_data", w->op->outs[0]);
    mgopt__cw_unbuild(ls);
    return 0;
  }
  mgopt__cw_unbuild(w->op);
  return 1;
}

static int mgopt__pal_fn(mgopt_pass_ctx *ctx, const mgopt__cw_weight *w, void *ud) {
  mgopt_program *p = ctx->program;
  mgopt_tensor *t = w->t;
  mgopt_dtype wdt = (mgopt_dtype)t->dtype;
  mgopt__pal_cfg c;
  mgopt__pal_out o;
  mgopt__pal_ops b;
  int32_t rank = t->rank, axis;
  int64_t i, n = t->numel, k, groups = 0;
  int axis_auto, need_axis, r;
  float *x;
  const char *base = mgopt__pu_value_name(w->op->outs[0]);
  mgopt_op *sparse = NULL; /* joint: the constexpr_sparse_to_dense reading the const as nonzero_data */
  mgopt_tensor *mask = NULL;
  int joint_q = 0;          /* joint: the const is the data of a constexpr_blockwise_shift_scale */
  (void)ud;
  memset(&b, 0, sizeof b);
  if (!mgopt__pal_config(ctx, w->opts, &c, &axis_auto, 1)) return -2;
  if (mgopt_op_traits(w->reader) & MGOPT_TRAIT_CONSTEXPR) {
    if (mgopt__cw_sole_reader(w, MGOPT_OP_constexpr_sparse_to_dense, "nonzero_data")) {
      /* clustered densified (the pruned zeros take part), indices kept at the mask;
         vectors and per-channel scales do not fit the sparse form (the reference fails) */
      mask = mgopt_value_const(mgopt_op_operand(w->reader, "mask"));
      if (!mask || mask->dtype != MGOPT_DT_UINT1 || mgopt_op_operand(w->reader, "shape") ||
          mgopt_op_attr(w->reader, "shape") || c.cluster_dim > 1 || c.per_channel_scale)
        return 0;
      if (!mgopt_tensor_data(p, mask) || !mgopt_tensor_data(p, t)) return -1;
      t = mgopt__cw_densify(p, w->t, mask);
      if (!t) return 0;
      sparse = w->reader;
    } else if (mgopt__cw_sole_reader(w, MGOPT_OP_constexpr_blockwise_shift_scale, "data")) {
      joint_q = 1;
      if ((wdt == MGOPT_DT_INT8 || wdt == MGOPT_DT_UINT8) && c.per_channel_scale) return 0;
    } else {
      return 0;
    }
  }
  rank = t->rank;
  n = t->numel;
  if (wdt != MGOPT_DT_FP32 && wdt != MGOPT_DT_FP16 &&
      !((c.mode == MGOPT__PAL_UNIQUE || joint_q) && (wdt == MGOPT_DT_INT8 || wdt == MGOPT_DT_UINT8)))
    return 0;
  if (rank < 1 || rank + 2 > MGOPT_MAX_RANK || n == 0) return 0;
  need_axis = c.per_grouped_channel || c.cluster_dim > 1 || c.per_channel_scale;
  if (!axis_auto) {
    if (c.channel_axis < -rank || c.channel_axis >= rank) return 0;
    axis = c.channel_axis < 0 ? c.channel_axis + rank : c.channel_axis;
  } else if (w->out_axis >= 0) {
    axis = w->out_axis;
  } else if (!need_axis) {
    axis = 0;
  } else {
    return 0;
  }
  c.channel_axis = axis;
  if (c.mode == MGOPT__PAL_CUSTOM) {
    if (!ctx->compress_config || !ctx->compress_config->palettize_lut) return 0;
    c.lut_fn = ctx->compress_config->palettize_lut;
    c.lut_ud = ctx->compress_config->palettize_lut_ud;
    c.weight_name = base;
  }
  /* with the index width known (kmeans, uniform) the ops are built, and
     the target asked, before any clustering; they are filled after it */
  if (!sparse && (c.mode == MGOPT__PAL_KMEANS || c.mode == MGOPT__PAL_UNIFORM)) {
    int64_t ch = t->shape[axis], gs = c.per_grouped_channel ? (c.group_size == 0 ? ch : c.group_size) : ch;
    int32_t cd = c.cluster_dim < 1 ? 1 : c.cluster_dim;
    if (gs <= 0 || ch % gs || gs % cd || c.nbits < 1 || c.nbits > 8) return 0;
    groups = ch / gs;
    r = mgopt__pal_build(p, w, axis, c.nbits, groups, cd, c.per_channel_scale, &b);
    if (r <= 0) return r;
  }
  /* the values as float (fp16, int8, uint8 widen exactly) */
  x = (float *)mgopt_program_alloc(p, (size_t)n * sizeof(float), 64);
  if (!x || !mgopt_tensor_data(p, t)) return -1;
  if (wdt == MGOPT_DT_FP32) memcpy(x, mgopt_tensor_data(p, t), (size_t)n * sizeof(float));
  else
    for (i = 0; i < n; i++) x[i] = (float)mgopt_tensor_get_f64(t, i);
  r = mgopt__kp_palettize(&c, x, rank, t->shape, &o);
  if (r == MGOPT__K_OOM) return -1;
  if (r == MGOPT__K_OK && o.nbits >= mgopt_dtype_bits(wdt) * (o.cluster_dim > 0 ? o.cluster_dim : 1)) {
    mgopt__kp_free(&o); /* an index per element as wide as the element: the file would only grow */
    r = MGOPT__K_NO;
  }
  if (r != MGOPT__K_OK) {
    mgopt__pal_unbuild(&b);
    return 0;
  }
  if (sparse) {
    mgopt_tensor *it, *lt;
    int64_t ishape[MGOPT_MAX_RANK], lshape[MGOPT_MAX_RANK + 2];
    int32_t d;
    for (d = 0; d < rank; d++) {
      ishape[d] = t->shape[d];
      lshape[d] = d == axis ? o.groups : 1;
    }
    k = (int64_t)1 << o.nbits;
    lshape[rank] = k;
    lshape[rank + 1] = 1;
    it = mgopt_tensor_new(p, mgopt__dtype_lut_index(o.nbits), rank, ishape);
    lt = mgopt_tensor_new(p, wdt, rank + 2, lshape);
    if (!it || !lt) {
      mgopt__kp_free(&o);
      return -1;
    }
    mgopt__kp_pack(o.idx, n, o.nbits, (uint8_t *)it->data);
    for (i = 0; i < o.groups * k; i++) mgopt_tensor_set_f64(lt, i, o.lut[i]);
    mgopt__kp_free(&o);
    return mgopt__pal_sparse(p, w, sparse, mask, it, lt);
  }
  if (b.lop && (o.nbits != c.nbits || o.groups != groups)) mgopt__pal_unbuild(&b);
  if (!b.lop) {
    r = mgopt__pal_build(p, w, axis, o.nbits, o.groups, o.cluster_dim, c.per_channel_scale, &b);
    if (r <= 0) {
      mgopt__kp_free(&o);
      return r;
    }
  }
  k = (int64_t)1 << o.nbits;
  mgopt__kp_pack(o.idx, n / o.cluster_dim, o.nbits, (uint8_t *)b.it->data);
  for (i = 0; i < o.groups * k * o.cluster_dim; i++) mgopt_tensor_set_f64(b.lt, i, o.lut[i]);
  if (b.st)
    for (i = 0; i < b.st->numel; i++) mgopt_tensor_set_f64(b.st, i, (double)o.pcs[i]);
  mgopt__kp_free(&o);
  mgopt__cw_replace(w, (b.sop ? b.sop : b.lop)->outs[0]);
  return 1;
}

static mgopt_status mgopt__pal_run(mgopt_pass_ctx *ctx) {
  mgopt__pal_cfg c;
  mgopt__cw_pass cp;
  int axis_auto;
  /* the pipeline string's options are checked when they are the configuration
     (with rules, each weight's resolved options are checked instead) */
  if ((!ctx->compress_config || ctx->compress_config->nrules == 0) && !mgopt__pal_config(ctx, ctx->opts, &c, &axis_auto, 0))
    return MGOPT_ERR_INVALID_ARG;
  memset(&cp, 0, sizeof cp);
  cp.name = "palettize_weights";
  cp.opts = mgopt__pal_opts;
  cp.nopts = MGOPT__ARRAY_COUNT(mgopt__pal_opts);
  cp.fn = mgopt__pal_fn;
  cp.constexpr_readers = ctx->opts[MGOPT__PW_JOINT].i != 0;
  return mgopt__cw_run(ctx, &cp);
}

MGOPT__DEFINE_PASS_WITH_OPTIONS(compression, common, palettize_weights,
                                "weights stored as a lookup table and packed indices (constexpr_lut_to_dense)",
                                mgopt__pal_opts, mgopt__pal_run);
