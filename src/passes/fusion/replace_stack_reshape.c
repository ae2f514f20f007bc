/* src/passes/fusion/replace_stack_reshape.c — common::replace_stack_reshape: a stack whose new axis a reshape merges into a neighbour becomes a concat.

   Spec: mil_graph_passes.txt, "A stack followed by a reshape layer can be
   replaced by a concat"; reference §3.33 (replace_stack_reshape).

   Before:
     main(%a: (1, 5, 3, 4, fp32), %b: (1, 5, 3, 4, fp32)) {
       %s: (1, 5, 2, 3, 4, fp32) = stack(values=(%a, %b), axis=2)
       %shape: (4, int32)* = const(val=[1, 10, 3, 4])
       %r: (1, 10, 3, 4, fp32) = reshape(x=%s, shape=%shape)
     } -> (%r)
   After:
     main(%a: (1, 5, 3, 4, fp32), %b: (1, 5, 3, 4, fp32)) {
       %r: (1, 10, 3, 4, fp32) = concat(values=(%a, %b), axis=1, interleave=true)
     } -> (%r)

   Fires on: reshape(stack(v0..vn-1, axis=a)) where every vi has the same
   static shape S (rank R), the reshape's output has rank R, all static, and
   differs from S in exactly one dim c with out[c] = n * S[c]. Row-major
   order makes that a merge of the stack axis with a neighbour: c == a (the
   new axis is the outer factor) is concat(axis=c); c == a - 1 (the new axis
   is the inner factor) is concat(axis=c, interleave=true). The concat takes
   the reshape's output name; the stack and the shape const go.
   Any n >= 2 (the reference hard-codes a doubling, so only n == 2 works
   there).
   Must not fire: the stack has another user or is a block output; the
   stack and the reshape sit in different blocks; a dim that is symbolic or
   unknown; out differs from S in another place or by another factor (c not
   next to the new axis: not a merge); the target cannot write the concat
   (mgopt_program_target_accepts).
   Cost: worklist patterns, O(reshapes x rank). */
#include "../../passes_internal.h"

/* S, the common static shape of the stack's n >= 2 values, into shape; 0 otherwise. */
static int mgopt__rsr_values_shape(const mgopt_op *st, int64_t *shape, int32_t *rank, int32_t *n) {
  int32_t si = mgopt_op_slot_index(st, "values"), i, d;
  int64_t other[MGOPT_MAX_RANK];
  if (si < 0 || st->slots[si].n < 2) return 0;
  *n = st->slots[si].n;
  for (i = 0; i < *n; i++) {
    const mgopt_value *v = st->slots[si].uses[i].value;
    if (!v || v->type.kind != MGOPT_TYPE_TENSOR || v->type.rank < 0) return 0;
    if (i == 0) {
      if (!mgopt__pu_static_shape(&v->type, shape, MGOPT_MAX_RANK)) return 0;
      *rank = v->type.rank;
      continue;
    }
    if (v->type.rank != *rank || !mgopt__pu_static_shape(&v->type, other, MGOPT_MAX_RANK)) return 0;
    for (d = 0; d < *rank; d++)
      if (other[d] != shape[d]) return 0;
  }
  return 1;
}

static int mgopt__rsr_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *out, **vals;
  mgopt_op *st = mgopt__pu_def_of(x, MGOPT_OP_stack), *cc;
  int64_t s[MGOPT_MAX_RANK], o[MGOPT_MAX_RANK], a;
  int32_t rank = 0, n = 0, d, c = -1, si, i;
  MGOPT__UNUSED(ud);
  if (!st || op->nouts != 1 || st->parent != op->parent || !mgopt__pu_single_use(x) ||
      mgopt__pu_is_block_output(x))
    return 0;
  out = op->outs[0];
  if (!mgopt__rsr_values_shape(st, s, &rank, &n)) return 0;
  if (out->type.rank != rank || !mgopt__pu_static_shape(&out->type, o, MGOPT_MAX_RANK)) return 0;
  a = mgopt__pu_norm_axis(mgopt_op_get_int(st, "axis", 0), (int64_t)rank + 1);
  if (a < 0) return 0;
  for (d = 0; d < rank; d++) {
    if (o[d] == s[d]) continue;
    if (c >= 0 || s[d] <= 0 || o[d] != s[d] * n) return 0;
    c = d;
  }
  if (c < 0 || (c != a && c != a - 1)) return 0;
  si = mgopt_op_slot_index(st, "values");
  vals = (mgopt_value **)mgopt_program_alloc(p, sizeof(mgopt_value *) * (size_t)n, 8);
  if (!vals) return 0;
  for (i = 0; i < n; i++) vals[i] = st->slots[si].uses[i].value;
  cc = mgopt_rw_create(rw, op, "concat", mgopt__pu_value_name(out), 0, NULL, NULL, 1);
  if (!cc) return 0;
  if (mgopt_op_set_operand_list(cc, "values", vals, n) != MGOPT_OK || mgopt_op_set_int(cc, "axis", c) != MGOPT_OK ||
      mgopt_op_set_bool(cc, "interleave", c == a - 1) != MGOPT_OK) {
    mgopt_rw_erase(rw, cc);
    return 0;
  }
  return mgopt__pu_fuse_finish(rw, &cc, 1, op, &st, 1);
}

static const mgopt_pattern mgopt__rsr_patterns[] = {
    {"stack_reshape", MGOPT_OP_reshape, NULL, 1, mgopt__rsr_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, replace_stack_reshape,
                           "a stack whose new axis a reshape merges into a neighbour becomes a concat",
                           mgopt__rsr_patterns);
