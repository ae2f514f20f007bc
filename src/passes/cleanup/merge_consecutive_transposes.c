/* src/passes/cleanup/merge_consecutive_transposes.c — common::merge_consecutive_transposes: compose transpose chains.

   Spec: mil_graph_passes.txt, "Identify consecutive 'transpose' layers which
   could be merged into a single 'transpose' layer"; reference §3.29.

   Before:
     main(%x: (1, 2, 3, fp32)) {
       %a: (2, 3, 1, fp32) = transpose(x=%x, perm=[1, 2, 0])
       %b: (3, 2, 1, fp32) = transpose(x=%a, perm=[1, 0, 2])
     } -> (%b)
   After:
     main(%x: (1, 2, 3, fp32)) {
       %b: (3, 2, 1, fp32) = transpose(x=%x, perm=[2, 1, 0])
     } -> (%b)

   Fires on: a transpose whose input comes from a transpose with a perm of
   the same length: it reads the inner input with perm[i] = inner[outer[i]]
   (negative entries normalized first). When that perm is the identity the
   outer transpose goes and its uses read x (an identity op keeps a function
   output's name when x cannot take it). The inner transpose is erased once
   unused; with other users it stays.
   Must not fire: non-constant or malformed perms (wrong length, repeated or
   out-of-range axes); when the outer transpose's declared type would not
   hold for x (a symbolic dim in the middle may hide a contradiction), or, for
   the identity, x's type does not suit a reader of the outer output or
   differs from it while it is a function output (mgopt__pu_replace_fits).
   Cost: worklist patterns, O(transposes x rank). */
#include "../../passes_internal.h"

/* Reads a permutation of length rank into out (normalized); 0 if malformed.
   seen: rank bytes of scratch. */
static int mgopt__mct_perm(mgopt_program *p, const mgopt_op *op, int64_t rank, int64_t *out, uint8_t *seen) {
  const int64_t *v = NULL;
  int64_t n = mgopt_op_get_ints(p, op, "perm", &v), i;
  if (n != rank) return 0;
  memset(seen, 0, (size_t)rank);
  for (i = 0; i < n; i++) {
    out[i] = mgopt__pu_norm_axis(v[i], rank);
    if (out[i] < 0 || seen[out[i]]) return 0;
    seen[out[i]] = 1;
  }
  return 1;
}

static int mgopt__mct_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *inner_x;
  mgopt_op *inner = mgopt__pu_def_of(x, MGOPT_OP_transpose);
  int64_t rank, i, *p1, *p2, *pc;
  const int64_t *tmp = NULL;
  mgopt_type composed;
  uint8_t *seen;
  int ident = 1;
  MGOPT__UNUSED(ud);
  if (!inner || inner == op || op->nouts != 1) return 0;
  inner_x = mgopt_op_operand(inner, "x");
  rank = x->type.rank;
  if (!inner_x || rank < 0 || inner_x->type.rank != rank) return 0;
  if (mgopt_op_get_ints(p, inner, "perm", &tmp) != rank || mgopt_op_get_ints(p, op, "perm", &tmp) != rank) return 0;
  p1 = (int64_t *)mgopt_program_alloc(p, (3 * sizeof(int64_t) + sizeof(mgopt_dim) + 1) * (size_t)rank + 8, 8);
  if (!p1) return 0;
  p2 = p1 + rank;
  pc = p2 + rank;
  composed = inner_x->type;
  composed.dims = (mgopt_dim *)(pc + rank);
  seen = (uint8_t *)(composed.dims + rank);
  if (!mgopt__mct_perm(p, inner, rank, p1, seen) || !mgopt__mct_perm(p, op, rank, p2, seen)) return 0;
  for (i = 0; i < rank; i++) {
    pc[i] = p1[p2[i]];
    if (pc[i] != i) ident = 0;
  }
  /* the outer transpose then reads x: its declared type must hold for x permuted by pc */
  for (i = 0; i < rank; i++)
    composed.dims[i] = inner_x->type.dims ? inner_x->type.dims[pc[i]] : mgopt_dim_unknown();
  if (mgopt__type_clash(&op->outs[0]->type, &composed, 1)) return 0;
  if (ident) {
    if (!mgopt__pu_replace_fits(p, op->outs[0], inner_x) || !mgopt__pu_replace_keep_io(rw, op->outs[0], inner_x))
      return 0;
    mgopt__pu_erase_with_consts(rw, op);
  } else {
    if (!mgopt__pu_set_ints_param(rw, op, op, "perm", pc, rank)) return 0;
    mgopt_rw_set_operand(rw, op, "x", inner_x);
    mgopt_rw_modified(rw, op);
  }
  mgopt__pu_erase_with_consts(rw, inner);
  return 1;
}

static const mgopt_pattern mgopt__mct_patterns[] = {
    {"transpose_transpose", MGOPT_OP_transpose, NULL, 1, mgopt__mct_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, merge_consecutive_transposes,
                           "compose transpose chains into one transpose", mgopt__mct_patterns);
