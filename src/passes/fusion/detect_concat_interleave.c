/* src/passes/fusion/detect_concat_interleave.c — common::detect_concat_interleave: a channel concat shuffled by reshape/transpose/reshape becomes an interleaved concat.

   Spec: mil_graph_passes.txt, "Detect the pattern concat-->reshape--->
   transpose--->reshape"; reference §3.31.

   Before:
     main(%a: (1, 2, 3, 3, fp32), %b: (1, 2, 3, 3, fp32)) {
       %c: (1, 4, 3, 3, fp32) = concat(values=(%a, %b), axis=-3)
       %s1: (5, int32)* = const(val=[1, 2, 2, 3, 3])
       %r1: (1, 2, 2, 3, 3, fp32) = reshape(x=%c, shape=%s1)
       %t: (1, 2, 2, 3, 3, fp32) = transpose(x=%r1, perm=[0, 2, 1, 3, 4])
       %s2: (4, int32)* = const(val=[1, 4, 3, 3])
       %r2: (1, 4, 3, 3, fp32) = reshape(x=%t, shape=%s2)
     } -> (%r2)
   After:
     main(%a: (1, 2, 3, 3, fp32), %b: (1, 2, 3, 3, fp32)) {
       %r2: (1, 4, 3, 3, fp32) = concat(values=(%a, %b), axis=-3, interleave=true)
     } -> (%r2)

   Fires on: a non-interleaved concat on axis -3 (1) of n rank-4 values, all
   of one static shape (B, C, H, W), whose only user is a reshape to
   (B, n, C, H, W), whose only user is transpose(perm=[0, 2, 1, 3, 4]),
   whose only user is a reshape to (B, n*C, H, W) (every type static). The
   chain computes out[b, c*n + i] = values[i][b, c]: interleave. The last
   reshape's output takes the new concat; the chain and its shape consts go.
   Must not fire: another user or a block output anywhere before the last
   reshape; ops in different blocks; a concat that already interleaves,
   another axis or rank; values of different shapes; symbolic or unknown
   dims; another perm or other reshape shapes; the target cannot write an
   interleaved concat (mgopt_program_target_accepts).
   Cost: worklist patterns, O(concats x inputs). */
#include "../../passes_internal.h"

/* The single user of v, of kind `kind`, in block b, reading v in its "x"; v is no block output. */
static mgopt_op *mgopt__dci_next(const mgopt_value *v, int32_t kind, const mgopt_block *b) {
  mgopt_op *u = mgopt__pu_single_user(v);
  if (!u || u->kind != kind || u->parent != b || u->nouts != 1 || mgopt__pu_is_block_output(v) ||
      mgopt_op_operand(u, "x") != v)
    return NULL;
  return u;
}

/* 1 when v's type is static with exactly the dims want[0..rank). */
static int mgopt__dci_shape_is(const mgopt_value *v, const int64_t *want, int32_t rank) {
  int64_t s[MGOPT_MAX_RANK];
  int32_t d;
  if (v->type.kind != MGOPT_TYPE_TENSOR || v->type.rank != rank || !mgopt__pu_static_shape(&v->type, s, MGOPT_MAX_RANK))
    return 0;
  for (d = 0; d < rank; d++)
    if (s[d] != want[d]) return 0;
  return 1;
}

static int mgopt__dci_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const int64_t want_perm[5] = {0, 2, 1, 3, 4};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_op *r1, *tr, *r2, *cc, *matched[3];
  mgopt_value *out, **vals;
  const int64_t *perm = NULL;
  int64_t s[MGOPT_MAX_RANK], w[5];
  int32_t si = mgopt_op_slot_index(op, "values"), n, i;
  MGOPT__UNUSED(ud);
  if (si < 0 || op->nouts != 1 || mgopt_op_get_bool(op, "interleave", 0)) return 0;
  n = op->slots[si].n;
  if (n < 1 || mgopt__pu_norm_axis(mgopt_op_get_int(op, "axis", 0), 4) != 1) return 0;
  for (i = 0; i < n; i++) {
    const mgopt_value *v = op->slots[si].uses[i].value;
    if (!v || v->type.kind != MGOPT_TYPE_TENSOR || v->type.rank != 4) return 0;
    if (i == 0 && !mgopt__pu_static_shape(&v->type, s, MGOPT_MAX_RANK)) return 0;
    if (!mgopt__dci_shape_is(v, s, 4)) return 0;
  }
  r1 = mgopt__dci_next(op->outs[0], MGOPT_OP_reshape, op->parent);
  w[0] = s[0], w[1] = n, w[2] = s[1], w[3] = s[2], w[4] = s[3];
  if (!r1 || !mgopt__dci_shape_is(r1->outs[0], w, 5)) return 0;
  tr = mgopt__dci_next(r1->outs[0], MGOPT_OP_transpose, op->parent);
  if (!tr || mgopt_op_get_ints(p, tr, "perm", &perm) != 5) return 0;
  for (i = 0; i < 5; i++)
    if (mgopt__pu_norm_axis(perm[i], 5) != want_perm[i]) return 0;
  r2 = mgopt__dci_next(tr->outs[0], MGOPT_OP_reshape, op->parent);
  w[1] = s[1] * n, w[2] = s[2], w[3] = s[3];
  if (!r2 || !mgopt__dci_shape_is(r2->outs[0], w, 4)) return 0;
  out = r2->outs[0];
  vals = (mgopt_value **)mgopt_program_alloc(p, sizeof(mgopt_value *) * (size_t)n, 8);
  if (!vals) return 0;
  for (i = 0; i < n; i++) vals[i] = op->slots[si].uses[i].value;
  cc = mgopt_rw_create(rw, r2, "concat", mgopt__pu_value_name(out), 0, NULL, NULL, 1);
  if (!cc) return 0;
  if (mgopt_op_set_operand_list(cc, "values", vals, n) != MGOPT_OK ||
      mgopt_op_set_int(cc, "axis", mgopt_op_get_int(op, "axis", 0)) != MGOPT_OK ||
      mgopt_op_set_bool(cc, "interleave", 1) != MGOPT_OK) {
    mgopt_rw_erase(rw, cc);
    return 0;
  }
  matched[0] = tr;
  matched[1] = r1;
  matched[2] = op;
  return mgopt__pu_fuse_finish(rw, &cc, 1, r2, matched, 3);
}

static const mgopt_pattern mgopt__dci_patterns[] = {
    {"concat_reshape_transpose_reshape", MGOPT_OP_concat, NULL, 1, mgopt__dci_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, detect_concat_interleave,
                           "a channel concat shuffled by reshape, transpose, reshape becomes an interleaved concat",
                           mgopt__dci_patterns);
