/* src/passes/compression/dequantize_to_constexpr.c — common::dequantize_to_constexpr: a dequantize of constant integers becomes a constexpr dequantization.

   Spec: mil_graph_passes.txt, "dequantize op with constant input is
   equivalent to constexpr_affine_dequantize"; reference §3.36,
   dequantize_to_constexpr, and §4.5 (the constexpr ops).

   Before:
     main(%x: (2, 3, fp32)) {
       %c: (2, 3, int8)* = const(val=[[1, -2, 3], [-4, 5, 100]])
       %s: (fp32)* = const(val=0.5)
       %z: (int8)* = const(val=1)
       %w: (2, 3, fp32) = dequantize(input=%c, zero_point=%z, scale=%s)
       %y: (2, 3, fp32) = add(x=%x, y=%w)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %c: (2, 3, int8)* = const(val=[[1, -2, 3], [-4, 5, 100]])
       %s: (fp32)* = const(val=0.5)
       %z: (int8)* = const(val=1)
       %w_affine_dequantized: (2, 3, fp32) = constexpr_affine_dequantize(quantized_data=%c, zero_point=%z, scale=%s, axis=0)
       %y: (2, 3, fp32) = add(x=%x, y=%w_affine_dequantized)
     } -> (%y)

   The form (the reference's choice by iOS version) is option `form`:
   - "affine" (the reference below iOS18): constexpr_affine_dequantize. Its
     axis is the dequantize's, else the one dim along which the scale or zero
     point varies, else 0. Scale and zero point become rank 0 (one element)
     or a vector along the axis; a missing zero point becomes 0 of the
     data's dtype. Needs int8/uint8 data and parameters that vary along at
     most one dim.
   - "blockwise" (iOS18 and later): constexpr_blockwise_shift_scale. Scale
     and offset get the data's rank (size 1 but along the dims they vary
     on); the offset (the zero point at the data's dtype) is there only when
     some zero point is not 0; int8 (uint8) data whose values and zero
     points all fit int4 (uint4) is stored as int4 (uint4) when this op is
     its only reader.
   - "auto" (default): "affine" when it can express the dequantize and the
     program's target accepts the op (mgopt_program_target_accepts), else
     "blockwise" under the same two conditions, else nothing.
   The new op is named "<dequantize output>_affine_dequantized" as in the
   reference, and the dequantize goes (with constants only it read).

   Where mgopt is exact and the reference is not: a scale that varies along
   one dim gets that dim of the data as the axis; a dequantize without axis
   reads its scale broadcast against the data's rank, never left-aligned
   (the reference reshapes a vector scale to [n, 1, ...] and builds an
   invalid op); a scalar zero point with a vector scale is broadcast (the
   reference fails to reshape it); data is narrowed to 4 bits only when the
   zero points fit too (the reference casts a zero point of, e.g., 100 to
   int4 and wraps it); empty data is never narrowed.
   Fires on: a dequantize whose input, scale and zero_point (if any) are
   constants; the input of rank >= 1 and dtype int8 or uint8 (also int4 or
   uint4 for blockwise); the scale fp16 or fp32; scale and zero point shaped
   as the dequantize kernel reads them (rank 0, a vector along `axis`, or the
   data's rank with each dim 1 or the data's).
   Must not fire: a non-constant input, scale or zero point; rank-0 data;
   a non-float scale; parameters that do not broadcast onto the data; a form
   the target refuses (then the dequantize stays).
   Numeric contract: exact: both constexpr ops compute scale * (q - zp) with
   the single rounding to the scale's dtype the dequantize kernel does (for
   8-bit integers q - zp is exact at fp16 and the product exact at fp32), so
   outputs are bit-identical (tests/unit/test_qdq.c evaluates both).
   Cost: worklist pattern rooted at dequantize, O(data) when narrowing and
   O(parameters) otherwise. */
#include "../../passes_internal.h"

enum { MGOPT__DTC_AUTO, MGOPT__DTC_AFFINE, MGOPT__DTC_BLOCKWISE };

typedef struct mgopt__dtc {
  int form;
} mgopt__dtc;

/* The dims (rank r) of parameter t as the dequantize kernel broadcasts it
   onto data of shape ds: 1 everywhere but along the dims it varies on.
   0 when the kernel would refuse it. */
static int mgopt__dtc_param_shape(const mgopt_tensor *t, int has_axis, int64_t axis, const int64_t *ds, int32_t r,
                                  int64_t *ps) {
  int32_t d;
  for (d = 0; d < r; d++) ps[d] = 1;
  if (t->rank == 0) return 1;
  if (t->rank == 1 && has_axis) {
    if (t->shape[0] != ds[axis]) return 0;
    ps[axis] = ds[axis];
    return 1;
  }
  if (t->rank != r) return 0;
  for (d = 0; d < r; d++) {
    if (t->shape[d] != 1 && t->shape[d] != ds[d]) return 0;
    ps[d] = t->shape[d];
  }
  return 1;
}

/* Flat index into a parameter of (rank r) shape ps for the flat index i of
   a tensor of shape fs (ps[d] is 1 or fs[d]). */
static int64_t mgopt__dtc_index(const int64_t *fs, const int64_t *ps, int32_t r, int64_t i) {
  int64_t k = 0, stride = 1;
  int32_t d;
  for (d = r - 1; d >= 0; d--) {
    int64_t c = i % fs[d];
    i /= fs[d];
    if (ps[d] != 1) k += c * stride;
    stride *= ps[d];
  }
  return k;
}

/* A new tensor of dtype dt and shape (rank, shape) holding t (broadcast as
   parameter shape ps of rank r, expanded to fs) element by element; t NULL:
   zeros. NULL on OOM. */
static mgopt_tensor *mgopt__dtc_param(mgopt_program *p, mgopt_tensor *t, mgopt_dtype dt, const int64_t *ps,
                                      const int64_t *fs, int32_t r, int32_t rank, const int64_t *shape) {
  mgopt_tensor *o = mgopt_tensor_new(p, dt, rank, shape);
  int64_t i;
  if (!o || !t) return o;
  if (!mgopt_tensor_data(p, t)) return NULL;
  for (i = 0; i < o->numel; i++) {
    int64_t k = mgopt__dtc_index(fs, ps, r, i);
    if (mgopt_dtype_is_float(dt))
      mgopt_tensor_set_f64(o, i, mgopt_tensor_get_f64(t, k));
    else
      mgopt_tensor_set_i64(o, i, mgopt_tensor_get_i64(t, k));
  }
  return o;
}

/* What both forms read from the dequantize. */
typedef struct mgopt__dtc_in {
  mgopt_op *dq;
  mgopt_value *in;
  mgopt_tensor *q, *s, *z; /* z NULL: no zero point */
  int has_axis;
  int64_t axis; /* normalized when has_axis */
  int32_t r;
  int64_t ps[MGOPT_MAX_RANK], pz[MGOPT_MAX_RANK], fs[MGOPT_MAX_RANK];
} mgopt__dtc_in;

/* Ends the rewrite: the constexpr op ce stands for the dequantize. */
static int mgopt__dtc_finish(mgopt_rewriter *rw, mgopt__dtc_in *a, mgopt_op *ce) {
  return mgopt__pu_fuse_finish(rw, &ce, 1, a->dq, NULL, 0);
}

static const char *mgopt__dtc_name(mgopt_program *p, const mgopt__dtc_in *a) {
  return mgopt__pu_name2(p, mgopt__pu_value_name(a->dq->outs[0]), "_affine_dequantized");
}

/* The affine op's form of a parameter (value v holding t, NULL: zeros):
   one element of rank 0, or a vector along axis. v itself when it has that
   form already. NULL on OOM. */
static mgopt_value *mgopt__dtc_affine_param(mgopt_rewriter *rw, const mgopt__dtc_in *a, mgopt_value *v,
                                            mgopt_tensor *t, mgopt_dtype dt, const int64_t *ps, int64_t axis,
                                            const char *suffix) {
  mgopt_program *p = mgopt_rw_program(rw);
  int vec = t && ps[axis] != 1;
  int64_t len = a->q->shape[axis];
  mgopt_tensor *nt;
  if (t && t->rank == (vec ? 1 : 0)) return v;
  nt = mgopt__dtc_param(p, t, dt, ps, ps, a->r, vec, &len);
  if (!nt) return NULL;
  return mgopt_rw_const(rw, a->dq, mgopt__pu_name2(p, mgopt__pu_value_name(a->dq->outs[0]), suffix), nt);
}

static int mgopt__dtc_affine(mgopt_rewriter *rw, mgopt__dtc_in *a) {
  static const char *const slots[3] = {"quantized_data", "zero_point", "scale"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_dtype qdt = (mgopt_dtype)a->q->dtype, zdt = a->z ? (mgopt_dtype)a->z->dtype : qdt;
  int64_t axis = -1;
  mgopt_value *vals[3];
  mgopt_op *ce;
  int32_t d;
  if (qdt != MGOPT_DT_INT8 && qdt != MGOPT_DT_UINT8) return 0;
  if (zdt != qdt && zdt != MGOPT_DT_FP32) return 0;
  for (d = 0; d < a->r; d++)
    if (a->fs[d] != 1) {
      if (axis >= 0) return 0; /* parameters vary along two dims: blockwise only */
      axis = d;
    }
  if (axis < 0) axis = a->has_axis ? a->axis : 0;
  /* each parameter: one element (rank 0) or a vector along the axis */
  vals[0] = a->in;
  vals[1] = mgopt__dtc_affine_param(rw, a, a->z ? mgopt_op_operand(a->dq, "zero_point") : NULL, a->z, zdt, a->pz,
                                    axis, "_zero_point");
  vals[2] = mgopt__dtc_affine_param(rw, a, mgopt_op_operand(a->dq, "scale"), a->s, (mgopt_dtype)a->s->dtype, a->ps,
                                    axis, "_scale");
  if (!vals[1] || !vals[2]) return 0;
  ce = mgopt_rw_create(rw, a->dq, "constexpr_affine_dequantize", mgopt__dtc_name(p, a), 3, slots, vals, 1);
  if (!ce) return 0;
  if (mgopt_op_set_int(ce, "axis", axis) != MGOPT_OK) {
    mgopt__pu_erase_with_consts(rw, ce);
    return 0;
  }
  return mgopt__dtc_finish(rw, a, ce);
}

/* 1 when every element of t lies in [lo, hi]. */
static int mgopt__dtc_fits(const mgopt_tensor *t, int64_t lo, int64_t hi) {
  int64_t i;
  for (i = 0; i < t->numel; i++) {
    int64_t v = mgopt_tensor_get_i64(t, i);
    if (v < lo || v > hi) return 0;
  }
  return 1;
}

/* t has rank r and shape fs. */
static int mgopt__dtc_same_shape(const mgopt_tensor *t, const int64_t *fs, int32_t r) {
  int32_t d;
  if (t->rank != r) return 0;
  for (d = 0; d < r; d++)
    if (t->shape[d] != fs[d]) return 0;
  return 1;
}

static int mgopt__dtc_blockwise(mgopt_rewriter *rw, mgopt__dtc_in *a) {
  static const char *const slots[3] = {"data", "scale", "offset"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_dtype qdt = (mgopt_dtype)a->q->dtype, ndt = qdt;
  mgopt_value *vals[3], *sv, *zv;
  mgopt_op *ce;
  int64_t i;
  int offset = 0;
  if (qdt != MGOPT_DT_INT8 && qdt != MGOPT_DT_UINT8 && qdt != MGOPT_DT_INT4 && qdt != MGOPT_DT_UINT4) return 0;
  if (a->z) {
    if (!mgopt_dtype_is_int((mgopt_dtype)a->z->dtype)) return 0;
    for (i = 0; i < a->z->numel && !offset; i++) offset = mgopt_tensor_get_i64(a->z, i) != 0;
  }
  /* 4 bits when data and offsets fit and no other op reads the data */
  if (a->q->numel > 0 && a->in->nuses == 1 && !mgopt__pu_is_block_output(a->in)) {
    int64_t lo = qdt == MGOPT_DT_INT8 ? -8 : 0, hi = qdt == MGOPT_DT_INT8 ? 7 : 15;
    if ((qdt == MGOPT_DT_INT8 || qdt == MGOPT_DT_UINT8) && mgopt__dtc_fits(a->q, lo, hi) &&
        (!offset || mgopt__dtc_fits(a->z, lo, hi)))
      ndt = qdt == MGOPT_DT_INT8 ? MGOPT_DT_INT4 : MGOPT_DT_UINT4;
  }
  if (offset && !mgopt__dtc_fits(a->z, ndt == MGOPT_DT_INT8 ? -128 : ndt == MGOPT_DT_INT4 ? -8 : 0,
                                 ndt == MGOPT_DT_INT8 ? 127 : ndt == MGOPT_DT_UINT8 ? 255 : ndt == MGOPT_DT_INT4 ? 7 : 15))
    return 0;
  sv = mgopt_op_operand(a->dq, "scale");
  zv = mgopt_op_operand(a->dq, "zero_point");
  if (!mgopt__dtc_same_shape(a->s, a->fs, a->r)) {
    mgopt_tensor *st = mgopt__dtc_param(p, a->s, (mgopt_dtype)a->s->dtype, a->ps, a->fs, a->r, a->r, a->fs);
    sv = st ? mgopt_rw_const(rw, a->dq, mgopt__pu_name2(p, mgopt__pu_value_name(a->dq->outs[0]), "_scale"), st) : NULL;
  }
  if (offset && (a->z->dtype != (uint8_t)ndt || !mgopt__dtc_same_shape(a->z, a->fs, a->r))) {
    mgopt_tensor *ot = mgopt__dtc_param(p, a->z, ndt, a->pz, a->fs, a->r, a->r, a->fs);
    zv = ot ? mgopt_rw_const(rw, a->dq, mgopt__pu_name2(p, mgopt__pu_value_name(a->dq->outs[0]), "_offset"), ot) : NULL;
  }
  if (!sv || (offset && !zv)) return 0;
  vals[0] = a->in;
  if (ndt != qdt) {
    mgopt_tensor *nt = mgopt_tensor_new(p, ndt, a->q->rank, a->q->shape);
    if (!nt || !mgopt_tensor_data(p, a->q)) return 0;
    for (i = 0; i < a->q->numel; i++) mgopt_tensor_set_i64(nt, i, mgopt_tensor_get_i64(a->q, i));
    vals[0] = mgopt_rw_const(rw, a->dq, mgopt__pu_value_name(a->in), nt);
  }
  vals[1] = sv;
  vals[2] = offset ? zv : NULL;
  if (!vals[0]) return 0;
  ce = mgopt_rw_create(rw, a->dq, "constexpr_blockwise_shift_scale", mgopt__dtc_name(p, a), offset ? 3 : 2, slots,
                       vals, 1);
  if (!ce) return 0;
  return mgopt__dtc_finish(rw, a, ce);
}

static int mgopt__dtc_fold(mgopt_rewriter *rw, mgopt_op *dq, void *ud) {
  const mgopt__dtc *o = (const mgopt__dtc *)ud;
  mgopt__dtc_in a;
  mgopt_value *sv = mgopt_op_operand(dq, "scale"), *zv = mgopt_op_operand(dq, "zero_point");
  int32_t d;
  memset(&a, 0, sizeof a);
  a.dq = dq;
  a.in = mgopt_op_operand(dq, "input");
  a.q = a.in ? mgopt_value_const(a.in) : NULL;
  a.s = sv ? mgopt_value_const(sv) : NULL;
  a.z = zv ? mgopt_value_const(zv) : NULL;
  if (!a.q || !a.s || (zv && !a.z) || dq->nouts != 1) return 0;
  if (!mgopt_dtype_is_int((mgopt_dtype)a.q->dtype) || a.q->rank < 1) return 0;
  if (a.s->dtype != MGOPT_DT_FP16 && a.s->dtype != MGOPT_DT_FP32) return 0;
  a.r = a.q->rank;
  a.has_axis = mgopt_op_attr(dq, "axis") != NULL;
  if (a.has_axis && (a.axis = mgopt__pu_norm_axis(mgopt_op_get_int(dq, "axis", 0), a.r)) < 0) return 0;
  if (!mgopt__dtc_param_shape(a.s, a.has_axis, a.axis, a.q->shape, a.r, a.ps)) return 0;
  if (a.z && !mgopt__dtc_param_shape(a.z, a.has_axis, a.axis, a.q->shape, a.r, a.pz)) return 0;
  if (!a.z || mgopt__pu_const_all(zv, 0.0)) /* zeros: their shape does not matter */
    for (d = 0; d < a.r; d++) a.pz[d] = 1;
  for (d = 0; d < a.r; d++) a.fs[d] = a.ps[d] > a.pz[d] ? a.ps[d] : a.pz[d];
  if (o->form != MGOPT__DTC_BLOCKWISE && mgopt__dtc_affine(rw, &a)) return 1;
  if (o->form != MGOPT__DTC_AFFINE && mgopt__dtc_blockwise(rw, &a)) return 1;
  return 0;
}

static mgopt_status mgopt__dtc_run(mgopt_pass_ctx *ctx) {
  mgopt__dtc o;
  const char *f = ctx->opts[0].s;
  if (!f || strcmp(f, "auto") == 0)
    o.form = MGOPT__DTC_AUTO;
  else if (strcmp(f, "affine") == 0)
    o.form = MGOPT__DTC_AFFINE;
  else if (strcmp(f, "blockwise") == 0)
    o.form = MGOPT__DTC_BLOCKWISE;
  else
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "form must be auto, affine or blockwise, not '%s'", f);
  return mgopt__pass_run_pattern(ctx, "constant_dequantize", MGOPT_OP_dequantize, mgopt__dtc_fold, &o);
}

static const mgopt_opt_def mgopt__dtc_opts[] = {
    {"form", MGOPT_OPT_STRING, "auto",
     "auto (affine if the target takes it, else blockwise), affine (constexpr_affine_dequantize, before iOS18) "
     "or blockwise (constexpr_blockwise_shift_scale, iOS18)", NULL},
};

MGOPT__DEFINE_PASS_WITH_OPTIONS(compression, common, dequantize_to_constexpr,
                                "a dequantize of constant integers becomes constexpr_affine_dequantize or "
                                "constexpr_blockwise_shift_scale",
                                mgopt__dtc_opts, mgopt__dtc_run);
