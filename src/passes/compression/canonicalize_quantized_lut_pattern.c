/* src/passes/compression/canonicalize_quantized_lut_pattern.c — common::canonicalize_quantized_lut_pattern: a quantized palette is dequantized before it is looked up (or after, by option).

   Spec: reference §3.36, canonicalize_quantized_lut_pattern, and §4.5 (the
   iOS18 constexpr_lut_to_dense and constexpr_blockwise_shift_scale).

   Before:
     main(%x: (4, 2, fp16)) {
       %i: (4, 2, uint1)* = const(val=[[0, 1], [1, 0], [1, 1], [0, 0]])
       %t: (2, 1, 2, 1, int8)* = const(val=[[[[-3], [5]]], [[[7], [-1]]]])
       %d: (4, 2, int8) = constexpr_lut_to_dense(indices=%i, lut=%t)
       %s: (4, 1, fp16)* = const(val=[[0.5], [0.25], [2], [1]])
       %w: (4, 2, fp16) = constexpr_blockwise_shift_scale(data=%d, scale=%s)
       %y: (4, 2, fp16) = add(x=%x, y=%w)
     } -> (%y)
   After:
     main(%x: (4, 2, fp16)) {
       %i: (4, 2, uint1)* = const(val=[[0, 1], [1, 0], [1, 1], [0, 0]])
       %d_lut: (4, 1, 2, 1, int8)* = const(val=[[[[-3], [5]]], [[[-3], [5]]], [[[7], [-1]]], [[[7], [-1]]]])
       %d_scale: (4, 1, 1, 1, fp16)* = const(val=[[[[0.5]]], [[[0.25]]], [[[2]]], [[[1]]]])
       %d: (4, 1, 2, 1, fp16) = constexpr_blockwise_shift_scale(data=%d_lut, scale=%d_scale)
       %w: (4, 2, fp16) = constexpr_lut_to_dense(indices=%i, lut=%d)
       %y: (4, 2, fp16) = add(x=%x, y=%w)
     } -> (%y)

   The target order (the reference's choice by iOS version) is option `order`:
   - "dequant_first" (default; the reference before iOS26): a
     constexpr_lut_to_dense (iOS18 form: lut of rank K+2 for K-dim indices)
     whose output's one use, not a block output, is the data of a
     constexpr_blockwise_shift_scale becomes a shift_scale of the palette
     (scale and offset reshaped to rank K+2 with two trailing 1s) followed
     by the lookup. Where the scale is finer than the palette's grouping
     along a dim, the palette (which must then be a constant) is repeated
     along it so each scale block has its own palette.
   - "lut_first" (iOS26): the reverse: a constexpr_blockwise_shift_scale of a
     palette with one scale (and offset) for the whole palette, read only as
     the lut of a lookup, becomes the lookup followed by a shift_scale whose
     scale and offset have the lookup's rank.
   The new lookup (or shift_scale) stands for the last op and keeps its
   name; the other new op takes the name of the first old op.
   Where mgopt is exact and the reference is not: a palette grouping finer
   than the scale's must divide evenly (the reference builds an invalid
   op); a scale varying along the vector axis of a vector palette is left
   alone (its blocks do not follow the palette's vectors); "lut_first"
   reshapes a per-tensor scale to the lookup's rank (the reference reshapes
   it to rank 2 whatever the rank, an invalid op unless the weight has rank
   2); an op that is a block output is never removed.
   Fires on: the pairs above with constant scale and offset.
   Must not fire: the iOS16 lookup (a `shape` parameter, a flat palette); a
   first op with another reader or that is a block output; a shift_scale
   that does not read the lookup as its data (dequant_first) or a lookup
   that does not read the shift_scale as its lut (lut_first); scales whose
   dims do not divide; a non-constant palette that would need repeating; a
   per-channel scale in lut_first.
   Numeric contract: exact: both orders compute scale * (lut[i] - offset)
   with the same roundings for each element (bit-identical outputs;
   tests/unit/test_qdq.c evaluates both).
   Cost: worklist pattern; O(palette size times repetition) per match. */
#include "../../passes_internal.h"

typedef struct mgopt__cql {
  int lut_first;
} mgopt__cql;

/* The constant tensor of v reshaped to rank r with dims shape (same element
   count), as a new const before pos named name; v itself when it has that
   shape already. NULL when v is not a constant or on OOM. */
static mgopt_value *mgopt__cql_reshaped(mgopt_rewriter *rw, mgopt_op *pos, mgopt_value *v, int32_t r,
                                        const int64_t *shape, const char *name) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_tensor *t = mgopt_value_const(v), *nt;
  int64_t i, n = 1;
  int32_t d;
  if (!t) return NULL;
  for (d = 0; d < r; d++) n *= shape[d];
  if (n != t->numel) return NULL;
  if (t->rank == r) {
    for (d = 0; d < r && t->shape[d] == shape[d]; d++) {
    }
    if (d == r) return v;
  }
  nt = mgopt_tensor_new(p, (mgopt_dtype)t->dtype, r, shape);
  if (!nt || !mgopt_tensor_data(p, t)) return NULL;
  for (i = 0; i < n; i++) {
    if (mgopt_dtype_is_float((mgopt_dtype)t->dtype))
      mgopt_tensor_set_f64(nt, i, mgopt_tensor_get_f64(t, i));
    else
      mgopt_tensor_set_i64(nt, i, mgopt_tensor_get_i64(t, i));
  }
  return mgopt_rw_const(rw, pos, name, nt);
}

/* lut (rank r) repeated rep[d] times along each dim d (np.repeat), new tensor. */
static mgopt_tensor *mgopt__cql_repeat(mgopt_program *p, mgopt_tensor *lut, const int64_t *rep) {
  int64_t shape[MGOPT_MAX_RANK], i;
  int32_t d, r = lut->rank;
  mgopt_tensor *o;
  for (d = 0; d < r; d++) shape[d] = lut->shape[d] * rep[d];
  o = mgopt_tensor_new(p, (mgopt_dtype)lut->dtype, r, shape);
  if (!o || !mgopt_tensor_data(p, lut)) return NULL;
  for (i = 0; i < o->numel; i++) {
    int64_t rem = i, k = 0, stride = 1, src;
    for (d = r - 1; d >= 0; d--) {
      int64_t c = rem % shape[d];
      rem /= shape[d];
      k += (c / rep[d]) * stride;
      stride *= lut->shape[d];
    }
    src = k;
    if (mgopt_dtype_is_float((mgopt_dtype)lut->dtype))
      mgopt_tensor_set_f64(o, i, mgopt_tensor_get_f64(lut, src));
    else
      mgopt_tensor_set_i64(o, i, mgopt_tensor_get_i64(lut, src));
  }
  return o;
}

/* 1 when op is an iOS18 lookup: no `shape` parameter, lut of rank indices' rank + 2. */
static int mgopt__cql_is_lut18(const mgopt_op *op) {
  mgopt_value *ix = mgopt_op_operand(op, "indices"), *lut = mgopt_op_operand(op, "lut");
  return op->kind == MGOPT_OP_constexpr_lut_to_dense && op->nouts == 1 && ix && lut &&
         !mgopt_op_attr(op, "shape") && mgopt_op_slot_index(op, "shape") < 0 && ix->type.rank >= 1 &&
         lut->type.rank == ix->type.rank + 2 && mgopt_type_is_static(&lut->type) &&
         mgopt_type_is_static(&ix->type);
}

/* The lookup op made from old lookup `like` (its vector_axis kept), reading indices and lut, before pos. */
static mgopt_op *mgopt__cql_lookup(mgopt_rewriter *rw, mgopt_op *pos, const mgopt_op *like, mgopt_value *lut,
                                   const char *name) {
  static const char *const slots[2] = {"indices", "lut"};
  mgopt_value *vals[2];
  const mgopt_attr *va = mgopt_op_attr(like, "vector_axis");
  mgopt_op *n;
  vals[0] = mgopt_op_operand(like, "indices");
  vals[1] = lut;
  n = mgopt_rw_create(rw, pos, "constexpr_lut_to_dense", name, 2, slots, vals, 1);
  if (n && va && mgopt_op_set_attr(n, va) != MGOPT_OK) {
    mgopt__pu_erase_with_consts(rw, n);
    return NULL;
  }
  return n;
}

static mgopt_op *mgopt__cql_shift(mgopt_rewriter *rw, mgopt_op *pos, mgopt_value *data, mgopt_value *scale,
                                  mgopt_value *offset, const char *name) {
  static const char *const slots[3] = {"data", "scale", "offset"};
  mgopt_value *vals[3];
  vals[0] = data;
  vals[1] = scale;
  vals[2] = offset;
  return mgopt_rw_create(rw, pos, "constexpr_blockwise_shift_scale", name, offset ? 3 : 2, slots, vals, 1);
}

/* Ends the swap: made[0] feeds made[1], which stands for last; first goes
   and made[0]'s output takes its name. */
static int mgopt__cql_finish(mgopt_rewriter *rw, mgopt_op **made, mgopt_op *last, mgopt_op *first) {
  const char *name = first->outs[0]->name;
  if (!mgopt__pu_fuse_finish_named(rw, made, 2, last, &first, 1)) return 0;
  if (name && !mgopt__pu_is_func_output(made[0]->outs[0])) mgopt__pu_rename(made[0]->outs[0], name);
  return 1;
}

/* lut_to_dense -> blockwise_shift_scale becomes blockwise_shift_scale (of the palette) -> lut_to_dense. */
static int mgopt__cql_dequant_first(mgopt_rewriter *rw, mgopt_op *lop) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *lut = mgopt_op_operand(lop, "lut"), *sv, *ov, *nlut, *nsc, *noff = NULL;
  mgopt_op *sop, *made[2];
  mgopt_tensor *sc, *lt;
  int64_t shape[MGOPT_MAX_RANK], rep[MGOPT_MAX_RANK];
  int32_t k, d, va = -1;
  int repeat = 0;
  const char *base;
  if (!mgopt__cql_is_lut18(lop) || mgopt__pu_is_block_output(lop->outs[0])) return 0;
  sop = mgopt__pu_single_user(lop->outs[0]);
  if (!sop || sop->kind != MGOPT_OP_constexpr_blockwise_shift_scale || sop->nouts != 1 ||
      mgopt_op_operand(sop, "data") != lop->outs[0])
    return 0;
  sv = mgopt_op_operand(sop, "scale");
  ov = mgopt_op_operand(sop, "offset");
  sc = sv ? mgopt_value_const(sv) : NULL;
  k = lut->type.rank - 2;
  if (!sc || sc->rank != k || (ov && !mgopt_value_const(ov))) return 0;
  if (lut->type.dims[k + 1].v > 1) {
    va = (int32_t)mgopt__pu_norm_axis(mgopt_op_get_int(lop, "vector_axis", 0), k);
    if (va < 0 || sc->shape[va] != 1) return 0;
  }
  for (d = 0; d < k; d++) {
    int64_t l = lut->type.dims[d].v, s = sc->shape[d];
    rep[d] = 1;
    if (s < 1 || l < 1) return 0;
    if (s > l) {
      if (s % l) return 0;
      rep[d] = s / l;
      repeat = 1;
    } else if (l % s) {
      return 0;
    }
    shape[d] = s;
  }
  rep[k] = rep[k + 1] = 1;
  shape[k] = shape[k + 1] = 1;
  base = mgopt__pu_value_name(lop->outs[0]);
  nlut = lut;
  if (repeat) {
    lt = mgopt_value_const(lut);
    if (!lt || !(lt = mgopt__cql_repeat(p, lt, rep))) return 0;
    if (!(nlut = mgopt_rw_const(rw, lop, mgopt__pu_name2(p, base, "_lut"), lt))) return 0;
  }
  nsc = mgopt__cql_reshaped(rw, lop, sv, k + 2, shape, mgopt__pu_name2(p, base, "_scale"));
  if (ov) noff = mgopt__cql_reshaped(rw, lop, ov, k + 2, shape, mgopt__pu_name2(p, base, "_offset"));
  if (!nsc || (ov && !noff)) return 0;
  made[0] = mgopt__cql_shift(rw, sop, nlut, nsc, noff, mgopt__pu_name2(p, base, "_dequantized"));
  made[1] = made[0] ? mgopt__cql_lookup(rw, sop, lop, made[0]->outs[0], mgopt__pu_value_name(sop->outs[0])) : NULL;
  if (!made[1]) {
    if (made[0]) mgopt__pu_erase_with_consts(rw, made[0]);
    return 0;
  }
  return mgopt__cql_finish(rw, made, sop, lop);
}

/* blockwise_shift_scale (of a palette, per tensor) -> lut_to_dense becomes lut_to_dense -> blockwise_shift_scale. */
static int mgopt__cql_lut_first(mgopt_rewriter *rw, mgopt_op *sop) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *sv = mgopt_op_operand(sop, "scale"), *ov = mgopt_op_operand(sop, "offset"), *nsc, *noff = NULL;
  mgopt_tensor *sc = sv ? mgopt_value_const(sv) : NULL;
  mgopt_op *lop, *made[2];
  int64_t shape[MGOPT_MAX_RANK];
  int32_t k, d;
  const char *base;
  if (sop->nouts != 1 || !sc || sc->numel != 1 || (ov && !mgopt_value_const(ov))) return 0;
  if (mgopt__pu_is_block_output(sop->outs[0])) return 0;
  lop = mgopt__pu_single_user(sop->outs[0]);
  if (!lop || !mgopt__cql_is_lut18(lop) || mgopt_op_operand(lop, "lut") != sop->outs[0]) return 0;
  k = mgopt_op_operand(lop, "indices")->type.rank;
  for (d = 0; d < k; d++) shape[d] = 1;
  base = mgopt__pu_value_name(sop->outs[0]);
  nsc = mgopt__cql_reshaped(rw, lop, sv, k, shape, mgopt__pu_name2(p, base, "_scale"));
  if (ov) noff = mgopt__cql_reshaped(rw, lop, ov, k, shape, mgopt__pu_name2(p, base, "_offset"));
  if (!nsc || (ov && !noff)) return 0;
  made[0] = mgopt__cql_lookup(rw, lop, lop, mgopt_op_operand(sop, "data"), mgopt__pu_name2(p, base, "_lookup"));
  made[1] = made[0] ? mgopt__cql_shift(rw, lop, made[0]->outs[0], nsc, noff, mgopt__pu_value_name(lop->outs[0]))
                    : NULL;
  if (!made[1]) {
    if (made[0]) mgopt__pu_erase_with_consts(rw, made[0]);
    return 0;
  }
  return mgopt__cql_finish(rw, made, lop, sop);
}

static int mgopt__cql_lut_root(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  return ((const mgopt__cql *)ud)->lut_first ? 0 : mgopt__cql_dequant_first(rw, op);
}

static int mgopt__cql_shift_root(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  return ((const mgopt__cql *)ud)->lut_first ? mgopt__cql_lut_first(rw, op) : 0;
}

static mgopt_status mgopt__cql_run(mgopt_pass_ctx *ctx) {
  mgopt_pattern pat[2];
  mgopt_pass_def pd;
  mgopt__cql o;
  const char *f = ctx->opts[0].s;
  if (!f || strcmp(f, "dequant_first") == 0)
    o.lut_first = 0;
  else if (strcmp(f, "lut_first") == 0)
    o.lut_first = 1;
  else
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "order must be dequant_first or lut_first, not '%s'", f);
  memset(pat, 0, sizeof pat);
  pat[0].name = "lut_then_shift_scale";
  pat[0].root_kind = MGOPT_OP_constexpr_lut_to_dense;
  pat[0].benefit = 1;
  pat[0].fn = mgopt__cql_lut_root;
  pat[0].ud = &o;
  pat[1].name = "shift_scale_then_lut";
  pat[1].root_kind = MGOPT_OP_constexpr_blockwise_shift_scale;
  pat[1].benefit = 1;
  pat[1].fn = mgopt__cql_shift_root;
  pat[1].ud = &o;
  memset(&pd, 0, sizeof pd);
  pd.patterns = pat;
  pd.npatterns = 2;
  return mgopt__pass_run_patterns(ctx, &pd);
}

static const mgopt_opt_def mgopt__cql_opts[] = {
    {"order", MGOPT_OPT_STRING, "dequant_first",
     "dequant_first (shift_scale on the palette, then the lookup; before iOS26) or lut_first (iOS26)", NULL},
};

MGOPT__DEFINE_PASS_WITH_OPTIONS(compression, common, canonicalize_quantized_lut_pattern,
                                "order a quantized palette's lookup and dequantization canonically",
                                mgopt__cql_opts, mgopt__cql_run);
