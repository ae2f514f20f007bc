/* src/passes/cleanup/const_elimination.c — common::const_elimination: replace ops whose operands are all constant by constants.

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
   disagrees, an output over its size limit, or outputs taking more bytes
   than the operand constants that die with the op free plus
   MGOPT_FOLD_MAX_GROWTH_BYTES: a Transpose of a table a Gather also reads
   stays a Transpose); when an output of rank > 0 has more elements than
   skip_const_by_size (scalars always fold); when the constant's static type
   does not suit a reader of the output, or differs from the declared type of
   a function output (mgopt__pu_replace_static_fits: a symbolic dim may hide a
   contradiction, and main's declared outputs keep their types).
   Repeated work: an op of the same type, attributes and declared result
   types as one folded before, whose operands are the same bytes (the same
   data pointer, dtype and shape: a weight, or views of it), takes that op's
   results as views instead of computing them again (the checks above still
   apply to it). A model that repeats a weight transform in each branch of a
   conditional (gates reordered by slice + concat before every LSTM, say) so
   folds each once and holds it once; const_deduplication then keeps one
   const. Only results of at least 1 KB are remembered. This assumes the
   folding function is a function of those inputs, as the built-in kernels are.
   A table lookup is a palettized weight: a gather (axis 0, no batch dims)
   of a rank-1 float table of at most 256 entries at constant integer
   indices within it, whose result would be over
   MGOPT__CE_LUT_MIN_BYTES, becomes constexpr_lut_to_dense (indices of 1,
   2, 4 or 8 bits in the indices' shape, the table padded with its last
   entry to 2^nbits) instead of a float constant: lut[index] is the gather's
   element, bit for bit. This is the form a palettized weight takes in ONNX
   (a Gather from a small table after the indices are unpacked), so a
   compressed model read and optimized again stays compressed instead of
   growing by a factor of 8 to 32. Where the program's target refuses the
   constexpr op, the gather is folded as any other op. The lookup's
   constants are held to the growth budget of every fold (its indices
   shared with another reader are stored again).
   Cost: one worklist run, O(ops) plus the kernels' work on folded values;
   the memo costs one hash of the operands' metadata per folded op. */
#include "../../passes_internal.h"
#include "../../kernels/kernels.h" /* mgopt__fold_budget: the growth rule of every fold */

/* A folded op, found again by what its results were computed from. */
typedef struct mgopt__ce_memo {
  const mgopt_op *op; /* erased once folded; its attributes and result types stay readable */
  uint64_t *key;      /* mgopt__ce_key of its operands */
  int32_t nkey;
  mgopt_tensor **out; /* op->nouts results */
} mgopt__ce_memo;

#define MGOPT__CE_KEY_CAP 256
#define MGOPT__CE_MEMO_MIN_BYTES 1024
#define MGOPT__CE_LUT_MIN_BYTES 1024

typedef struct mgopt__ce_state {
  mgopt_fold_fn fold;
  void *ud;
  double skip_by_size; /* < 0: no limit */
  mgopt__map memo; /* hash of what an op was folded from -> its mgopt__ce_memo (a multimap) */
  int oom;
} mgopt__ce_state;

/* The bytes a fold may add beyond what it frees (mgopt_fold_op's rule): the
   caller's mgopt_fold_options when the kernels are the built-in ones. */
static int64_t mgopt__ce_allowance(const mgopt__ce_state *st) {
  const mgopt_fold_options *o = st->fold == mgopt_fold_op ? (const mgopt_fold_options *)st->ud : NULL;
  return o && o->max_growth_bytes ? o->max_growth_bytes : MGOPT_FOLD_MAX_GROWTH_BYTES;
}

static int mgopt__ce_too_big(const mgopt__ce_state *st, int32_t rank, int64_t numel) {
  return st->skip_by_size >= 0 && rank > 0 && (double)numel > st->skip_by_size;
}

/* The operands' layout and identity: per slot its length, per operand the
   data pointer, dtype, rank and shape. Equal keys mean equal operand bytes.
   Returns the key's length, or -1 when it does not fit. */
static int32_t mgopt__ce_key(const mgopt_op *op, uint64_t *key) {
  int32_t n = 0, s, k, d;
  key[n++] = (uint64_t)op->nslots;
  for (s = 0; s < op->nslots; s++) {
    if (n >= MGOPT__CE_KEY_CAP) return -1;
    key[n++] = (uint64_t)op->slots[s].n;
    for (k = 0; k < op->slots[s].n; k++) {
      const mgopt_tensor *t = mgopt_value_const(op->slots[s].uses[k].value);
      if (!t || n + 2 + t->rank > MGOPT__CE_KEY_CAP) return -1;
      key[n++] = (uint64_t)(uintptr_t)t->data;
      key[n++] = (uint64_t)t->dtype | (uint64_t)(uint32_t)t->rank << 8;
      for (d = 0; d < t->rank; d++) key[n++] = (uint64_t)t->shape[d];
    }
  }
  return n;
}

static uint64_t mgopt__ce_hash(const mgopt_op *op, const uint64_t *key, int32_t nkey) {
  uint64_t h = mgopt__hash_bytes(key, sizeof(uint64_t) * (size_t)nkey, (uint64_t)(uintptr_t)op->type);
  uint64_t attrs = mgopt__pu_attrs_hash(op);
  return mgopt__hash_bytes(&attrs, sizeof attrs, h);
}

static int mgopt__ce_same(const mgopt__ce_memo *m, const mgopt_op *op, const uint64_t *key, int32_t nkey) {
  const mgopt_op *a = m->op;
  int32_t i;
  if (a->type != op->type || a->nouts != op->nouts || m->nkey != nkey ||
      memcmp(m->key, key, sizeof(uint64_t) * (size_t)nkey) != 0)
    return 0;
  for (i = 0; i < op->nouts; i++)
    if (!mgopt_type_equal(&a->outs[i]->type, &op->outs[i]->type)) return 0;
  return mgopt__pu_attrs_equal(op, a);
}

static mgopt__ce_memo *mgopt__ce_lookup(const mgopt__ce_state *st, const mgopt_op *op, uint64_t h,
                                        const uint64_t *key, int32_t nkey) {
  const mgopt__map_slot *sl;
  for (sl = mgopt__map_find(&st->memo, mgopt__map_hash_key(h)); sl; sl = mgopt__map_next(&st->memo, sl))
    if (mgopt__ce_same((const mgopt__ce_memo *)sl->v.p, op, key, nkey)) return (mgopt__ce_memo *)sl->v.p;
  return NULL;
}

static void mgopt__ce_remember(mgopt_program *p, mgopt__ce_state *st, const mgopt_op *op, mgopt_tensor **out) {
  uint64_t key[MGOPT__CE_KEY_CAP];
  int32_t nkey = mgopt__ce_key(op, key), i;
  size_t bytes = 0;
  mgopt__ce_memo *m;
  mgopt__map_slot *sl;
  for (i = 0; i < op->nouts; i++) bytes += out[i]->nbytes;
  if (nkey < 0 || bytes < MGOPT__CE_MEMO_MIN_BYTES || st->oom) return;
  m = (mgopt__ce_memo *)mgopt_program_alloc(p, sizeof *m, 8);
  if (m) m->key = (uint64_t *)mgopt_program_alloc(p, sizeof(uint64_t) * (size_t)nkey, 8);
  if (m && m->key) m->out = (mgopt_tensor **)mgopt_program_alloc(p, sizeof(mgopt_tensor *) * (size_t)op->nouts, 8);
  sl = NULL;
  if (m && m->key && m->out) sl = mgopt__map_add(&st->memo, mgopt__map_hash_key(mgopt__ce_hash(op, key, nkey)));
  if (!sl) {
    st->oom = 1; /* the memo only saves work: folding goes on without it */
    return;
  }
  memcpy(m->key, key, sizeof(uint64_t) * (size_t)nkey);
  m->nkey = nkey;
  m->op = op;
  for (i = 0; i < op->nouts; i++) m->out[i] = out[i];
  sl->v.p = m;
}

/* 1 when gather op may be a lookup in a small constant table (see the
   header), its index width in *bits: the shapes, dtypes and size; the
   indices themselves are checked as mgopt__ce_lut copies them. */
static int mgopt__ce_lut_candidate(const mgopt_op *op, int *bits) {
  const mgopt_tensor *x, *ix;
  int64_t k;
  if (op->kind != MGOPT_OP_gather || op->nouts != 1 || mgopt_op_get_int(op, "batch_dims", 0) != 0) return 0;
  x = mgopt_value_const(mgopt_op_operand(op, "x"));
  ix = mgopt_value_const(mgopt_op_operand(op, "indices"));
  if (!x || !ix || x->rank != 1 || !mgopt_dtype_is_float((mgopt_dtype)x->dtype) || x->numel < 2 || x->numel > 256 ||
      !mgopt_dtype_is_int((mgopt_dtype)ix->dtype) || ix->rank < 1 || ix->rank > MGOPT_MAX_RANK - 2)
    return 0;
  k = mgopt_op_get_int(op, "axis", 0);
  if ((k != 0 && k != -1) || ix->numel * (int64_t)mgopt_dtype_nbytes((mgopt_dtype)x->dtype, 1) <= MGOPT__CE_LUT_MIN_BYTES)
    return 0;
  for (*bits = 1; ((int64_t)1 << *bits) < x->numel; *bits *= 2) {
  }
  return 1;
}

/* The constexpr_lut_to_dense standing for candidate gather op, replacing
   it: 1; 0 (nothing left built) when an index is outside the table, the
   target refuses the op or its constants are over the fold's budget (bytes,
   -1: none). */
static int mgopt__ce_lut_op(mgopt_rewriter *rw, mgopt_op *op, int bits, int64_t budget) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_tensor *x = mgopt_value_const(mgopt_op_operand(op, "x")), *ix = mgopt_value_const(mgopt_op_operand(op, "indices"));
  mgopt_tensor *it, *lt;
  size_t esz;
  int64_t lshape[MGOPT_MAX_RANK], i, k = (int64_t)1 << bits, v;
  int32_t d;
  mgopt_value *vals[2];
  mgopt_op *lop;
  const char *name = mgopt__pu_value_name(op->outs[0]);
  static const char *const slots[2] = {"indices", "lut"};
  if (!mgopt_tensor_data(p, ix) || !mgopt_tensor_data(p, x)) return 0;
  if (budget >= 0 && (ix->numel * bits + 7) / 8 + mgopt_dtype_nbytes((mgopt_dtype)x->dtype, k) > budget) return 0;
  for (d = 0; d < ix->rank; d++) lshape[d] = 1;
  lshape[ix->rank] = k;
  lshape[ix->rank + 1] = 1;
  it = mgopt_tensor_new(p, mgopt__dtype_lut_index(bits), ix->rank, ix->shape);
  lt = mgopt_tensor_new(p, (mgopt_dtype)x->dtype, ix->rank + 2, lshape);
  if (!it || !lt || !mgopt_tensor_data_mut(p, it) || !mgopt_tensor_data_mut(p, lt)) return 0;
  for (i = 0; i < ix->numel; i++) {
    v = mgopt_tensor_get_i64(ix, i);
    if (v < -x->numel || v >= x->numel) return 0;
    mgopt_tensor_set_i64(it, i, v < 0 ? v + x->numel : v);
  }
  /* the table's bytes as they are, its last entry again up to 2^bits */
  esz = (size_t)mgopt_dtype_nbytes((mgopt_dtype)x->dtype, 1);
  for (i = 0; i < k; i++)
    memcpy((char *)lt->data + (size_t)i * esz, (const char *)x->data + (size_t)(i < x->numel ? i : x->numel - 1) * esz, esz);
  vals[0] = mgopt_rw_const(rw, op, mgopt__pu_name2(p, name, "_indices"), it);
  vals[1] = vals[0] ? mgopt_rw_const(rw, op, mgopt__pu_name2(p, name, "_lut"), lt) : NULL;
  lop = vals[1] ? mgopt_rw_create(rw, op, "constexpr_lut_to_dense", name, 2, slots, vals, 1) : NULL;
  if (lop && mgopt_op_infer(p, lop, NULL) == MGOPT_OK && mgopt_program_target_accepts(p, lop) &&
      mgopt_type_equal(&lop->outs[0]->type, &op->outs[0]->type) && mgopt__pu_replace_fits(p, op->outs[0], lop->outs[0])) {
    mgopt_rw_replace_op(rw, op, lop->outs);
    return 1;
  }
  if (lop) mgopt_rw_erase(rw, lop);
  if (vals[1]) mgopt_rw_erase(rw, vals[1]->def);
  if (vals[0]) mgopt_rw_erase(rw, vals[0]->def);
  return 0;
}

/* Folds op as the header says (limits, memo); 1 with out[] set, 0, -1. */
static int mgopt__ce_fold_op(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, mgopt__ce_state *st) {
  int32_t i;
  int r, hit = 0;
  if ((mgopt_op_traits(op) & MGOPT_TRAIT_CONSTEXPR) || op->kind == MGOPT_OP_dequantize) return 0;
  if (op->kind == MGOPT_OP_OPAQUE && strncmp(op->type, "constexpr_", 10) == 0) return 0;
  /* a stored static type over the limit needs no evaluation */
  for (i = 0; i < op->nouts; i++) {
    int64_t n = mgopt_type_numel(&op->outs[i]->type);
    if (n >= 0 && mgopt__ce_too_big(st, op->outs[i]->type.rank, n)) return 0;
  }
  if (st->memo.n) {
    uint64_t key[MGOPT__CE_KEY_CAP];
    int32_t nkey = mgopt__ce_key(op, key);
    mgopt__ce_memo *m = nkey < 0 ? NULL : mgopt__ce_lookup(st, op, mgopt__ce_hash(op, key, nkey), key, nkey);
    if (m) {
      for (i = 0; i < op->nouts; i++) {
        out[i] = mgopt__tensor_view(p, m->out[i], 0, m->out[i]->rank, m->out[i]->shape);
        if (!out[i]) break;
      }
      hit = i == op->nouts;
    }
  }
  if (!hit && (r = st->fold(p, op, out, st->ud)) != 1) return r;
  if (hit) { /* the results are views, but the file would hold them again: the growth rule applies */
    int64_t budget = mgopt__fold_budget(op, mgopt__ce_allowance(st)), bytes = 0;
    for (i = 0; i < op->nouts; i++) bytes += out[i] ? (int64_t)out[i]->nbytes : 0;
    if (budget >= 0 && bytes > budget) return 0;
  }
  for (i = 0; i < op->nouts; i++)
    if (!out[i] || mgopt__ce_too_big(st, out[i]->rank, out[i]->numel) ||
        !mgopt__pu_replace_static_fits(p, op->outs[i], (mgopt_dtype)out[i]->dtype, out[i]->rank, out[i]->shape))
      return 0;
  /* keyed after folding: a kernel may have moved a misaligned operand's bytes */
  if (!hit) mgopt__ce_remember(p, st, op, out);
  return 1;
}

/* The driver's folding function: every op but a candidate lookup, which
   mgopt__ce_lut takes. */
static int mgopt__ce_fold(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud) {
  int bits;
  if (op->kind == MGOPT_OP_gather && mgopt__ce_lut_candidate(op, &bits)) return 0;
  return mgopt__ce_fold_op(p, op, out, (mgopt__ce_state *)ud);
}

/* gather(table, indices) -> constexpr_lut_to_dense; when it is not a
   lookup after all, or the target refuses the op, the gather folds as any
   other op. */
static int mgopt__ce_lut(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  const mgopt__ce_state *st = (const mgopt__ce_state *)ud;
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_tensor *folded = NULL;
  mgopt_value *c;
  int bits;
  if (!mgopt__ce_lut_candidate(op, &bits)) return 0;
  if (mgopt__ce_lut_op(rw, op, bits, mgopt__fold_budget(op, mgopt__ce_allowance(st)))) return 1;
  if (mgopt__ce_fold_op(p, op, &folded, (mgopt__ce_state *)ud) != 1) return 0;
  c = mgopt_rw_const(rw, op, mgopt__pu_value_name(op->outs[0]), folded);
  if (!c) return 0;
  mgopt_rw_replace_op(rw, op, &c);
  return 1;
}

static mgopt_status mgopt__ce_run(mgopt_pass_ctx *ctx) {
  mgopt_rewrite_config cfg;
  mgopt_rewrite_stats stats;
  mgopt__ce_state st;
  mgopt_pattern lut;
  mgopt_status s;
  if (!ctx->fold) return MGOPT_OK; /* no kernels: nothing can fold */
  st.fold = ctx->fold;
  st.ud = ctx->fold_ud;
  st.skip_by_size = ctx->opts[0].f;
  mgopt__map_init_flags(&st.memo, &ctx->program->alloc, MGOPT__MAP_HASHED);
  st.oom = 0;
  memset(&cfg, 0, sizeof cfg);
  memset(&stats, 0, sizeof stats);
  cfg.keep_dead = 1;
  cfg.fold = mgopt__ce_fold;
  cfg.fold_ud = &st;
  memset(&lut, 0, sizeof lut);
  lut.name = "gather_to_lut";
  lut.root_kind = MGOPT_OP_gather;
  lut.benefit = 1;
  lut.fn = mgopt__ce_lut;
  lut.ud = &st;
  s = mgopt_rewrite_program(ctx->program, &lut, 1, &cfg, &stats, ctx->diag);
  mgopt__map_free(&st.memo);
  ctx->rewrites += stats.folds + stats.rewrites;
  return s;
}

static const mgopt_opt_def mgopt__ce_opts[] = {
    {"skip_const_by_size", MGOPT_OPT_FLOAT, "-1",
     "do not fold outputs of rank > 0 with more elements than this (-1: no limit)", NULL},
};

MGOPT__DEFINE_PASS_WITH_OPTIONS(cleanup, common, const_elimination,
                                "replace ops whose operands are all constant by constants",
                                mgopt__ce_opts, mgopt__ce_run);
