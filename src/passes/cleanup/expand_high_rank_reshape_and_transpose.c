/* src/passes/cleanup/expand_high_rank_reshape_and_transpose.c — common::expand_high_rank_reshape_and_transpose: a rank >= 6 reshape/transpose/reshape becomes a chain of rank <= 5 ops.

   Spec: mil_graph_passes.txt, "Detect the pattern reshape_1 --> transpose -->
   reshape_2 ..."; reference mil-passes.md §3.32.

   Before:
     main(%x: (1, 2, 3, 4, 5, fp32)) {
       %s1: (6, int32)* = const(val=[1, 2, 3, 2, 2, 5])
       %r1: (1, 2, 3, 2, 2, 5, fp32) = reshape(x=%x, shape=%s1)
       %t: (2, 5, 2, 3, 1, 2, fp32) = transpose(x=%r1, perm=[4, 5, 3, 2, 0, 1])
       %s2: (2, int32)* = const(val=[5, 24])
       %y: (5, 24, fp32) = reshape(x=%t, shape=%s2)
     } -> (%y)
   After:
     main(%x: (1, 2, 3, 4, 5, fp32)) {
       %s1: (6, int32)* = const(val=[1, 2, 3, 2, 2, 5])
       %r1_shape: (4, int32)* = const(val=[2, 3, 2, 10])
       %r1_reshaped: (2, 3, 2, 10, fp32) = reshape(x=%x, shape=%r1_shape)
       %t_transposed: (10, 2, 3, 2, fp32) = transpose(x=%r1_reshaped, perm=[3, 2, 1, 0])
       %s2: (2, int32)* = const(val=[5, 24])
       %y: (5, 24, fp32) = reshape(x=%t_transposed, shape=%s2)
     } -> (%y)

   Fires on: reshape with a static output of rank >= 6 (not a block output)
   whose single consumer is a transpose (not a block output) whose single
   consumer is a reshape with an output rank <= 5. Runs of consecutive axes
   in perm are merged first (their sizes multiply). When that leaves rank < 6:
   reshape(merged shape) -> transpose(merged perm) -> the last reshape. Else
   each axis is moved into place by reshape([lead, before, axis, after]) ->
   transpose([0, 2, 1, 3]) in turn, then the last reshape.
   Must not fire: a non-static or rank < 6 first output; a block output or a
   second consumer in the chain; a last rank above 5; an empty tensor; when
   the last reshape's declared type does not hold for the new chain's static
   type (the transpose's declared type had symbolic dims hiding that).
   Cost: one worklist run; O(ops + rank^2) per match. The first reshape and
   transpose become dead and are erased. */
#include "../../passes_internal.h"

#define MGOPT__EHR_MAX 64

/* The ops a rewrite has built so far, erased again if it cannot finish. */
typedef struct mgopt__ehr_made {
  mgopt_op *op[3 * MGOPT__EHR_MAX];
  int32_t n;
} mgopt__ehr_made;

static mgopt_value *mgopt__ehr_reshape(mgopt_rewriter *rw, mgopt_op *pos, mgopt_value *x, const int64_t *shape,
                                       int32_t n, const char *base, mgopt__ehr_made *made) {
  mgopt_program *p = mgopt_rw_program(rw);
  static const char *const slots[2] = {"x", "shape"};
  mgopt_value *ins[2];
  mgopt_tensor *t = mgopt__pu_const_i32_1d(p, shape, n);
  mgopt_op *r;
  if (!t) return NULL;
  ins[0] = x;
  ins[1] = mgopt_rw_const(rw, pos, mgopt__pu_name2(p, base, "_shape"), t);
  if (!ins[1]) return NULL;
  made->op[made->n++] = ins[1]->def;
  r = mgopt_rw_create(rw, pos, "reshape", mgopt__pu_name2(p, base, "_reshaped"), 2, slots, ins, 1);
  if (!r) return NULL;
  made->op[made->n++] = r;
  return mgopt_op_infer(p, r, NULL) ? NULL : r->outs[0];
}

static mgopt_value *mgopt__ehr_transpose(mgopt_rewriter *rw, mgopt_op *pos, mgopt_value *x, const int64_t *perm,
                                         int32_t n, const char *base, mgopt__ehr_made *made) {
  mgopt_program *p = mgopt_rw_program(rw);
  static const char *const slot[1] = {"x"};
  mgopt_op *t = mgopt_rw_create(rw, pos, "transpose", mgopt__pu_name2(p, base, "_transposed"), 1, slot, &x, 1);
  if (!t) return NULL;
  made->op[made->n++] = t;
  if (mgopt_op_set_ints(t, "perm", perm, n) || mgopt_op_infer(p, t, NULL)) return NULL;
  return t->outs[0];
}

static int mgopt__ehr_rewrite(mgopt_rewriter *rw, mgopt_op *r1, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  int64_t shape[MGOPT__EHR_MAX], nshape[MGOPT__EHR_MAX], nperm[MGOPT__EHR_MAX], gstart[MGOPT__EHR_MAX],
      gend[MGOPT__EHR_MAX], order[MGOPT__EHR_MAX];
  const int64_t *perm;
  int32_t rank, ng = 0, i, j;
  mgopt_op *tr, *r2;
  mgopt_value *cur;
  const char *b1, *bt;
  mgopt__ehr_made made;
  MGOPT__UNUSED(ud);
  made.n = 0;
  if (r1->nouts != 1 || mgopt__pu_is_block_output(r1->outs[0])) return 0;
  if (!mgopt__pu_static_shape(&r1->outs[0]->type, shape, MGOPT__EHR_MAX)) return 0;
  rank = r1->outs[0]->type.rank;
  if (rank < 6) return 0;
  tr = mgopt__pu_single_user(r1->outs[0]);
  if (!tr || tr->kind != MGOPT_OP_transpose || tr->nouts != 1 || mgopt__pu_is_block_output(tr->outs[0])) return 0;
  if (mgopt_op_operand(tr, "x") != r1->outs[0]) return 0;
  r2 = mgopt__pu_single_user(tr->outs[0]);
  if (!r2 || r2->kind != MGOPT_OP_reshape || mgopt_op_operand(r2, "x") != tr->outs[0]) return 0;
  if (r2->outs[0]->type.rank < 0 || r2->outs[0]->type.rank > 5) return 0;
  if (mgopt_op_get_ints(p, tr, "perm", &perm) != rank) return 0;
  {
    /* r1's declared shape must hold as many elements as its input, or the
       new reshapes do not type check (r1's own shape may be computed at run
       time); an empty tensor is left alone (a 0 in a reshape's shape is not
       a size) */
    int64_t in = mgopt_type_numel(&mgopt_op_operand(r1, "x")->type), vol = 1;
    for (i = 0; i < rank; i++)
      if (!mgopt__mul_i64(vol, shape[i], &vol)) return 0;
    if ((in >= 0 && in != vol) || vol == 0) return 0;
  }
  for (i = 0; i < rank; i++) {
    int64_t a = perm[i] < 0 ? perm[i] + rank : perm[i];
    if (a < 0 || a >= rank) return 0;
    if (ng > 0 && gend[ng - 1] + 1 == a) gend[ng - 1] = a;
    else {
      gstart[ng] = a;
      gend[ng] = a;
      ng++;
    }
  }
  /* groups sorted by start axis give the merged shape; perm indexes into that order */
  for (i = 0; i < ng; i++) order[i] = i;
  for (i = 1; i < ng; i++) {
    int64_t x = order[i];
    for (j = i; j > 0 && gstart[order[j - 1]] > gstart[x]; j--) order[j] = order[j - 1];
    order[j] = x;
  }
  for (i = 0; i < ng; i++) {
    int64_t g = order[i], k, prod = 1;
    for (k = gstart[g]; k <= gend[g]; k++) prod *= shape[k];
    nshape[i] = prod;
    nperm[g] = i; /* group g (in perm order) sits at merged axis i */
  }
  b1 = mgopt__pu_value_name(r1->outs[0]);
  bt = mgopt__pu_value_name(tr->outs[0]);
  if (ng < 6) {
    cur = mgopt__ehr_reshape(rw, r1, mgopt_op_operand(r1, "x"), nshape, ng, b1, &made);
    if (cur) cur = mgopt__ehr_transpose(rw, r1, cur, nperm, ng, bt, &made);
  } else {
    int64_t lead = 1;
    uint8_t memo[MGOPT__EHR_MAX];
    static const int64_t swap[4] = {0, 2, 1, 3};
    memset(memo, 0, sizeof memo);
    cur = mgopt_op_operand(r1, "x");
    for (i = 0; i < ng && cur; i++) {
      int64_t ax = nperm[i], before = 1, after = 1, s4[4];
      for (j = 0; j < ng; j++) {
        if (memo[j] || j == ax) continue;
        if (j < ax) before *= nshape[j];
        else after *= nshape[j];
      }
      s4[0] = lead;
      s4[1] = before;
      s4[2] = nshape[ax];
      s4[3] = after;
      cur = mgopt__ehr_reshape(rw, r1, cur, s4, 4, b1, &made);
      if (cur) cur = mgopt__ehr_transpose(rw, r1, cur, swap, 4, bt, &made);
      lead *= nshape[ax];
      memo[ax] = 1;
    }
  }
  /* the last reshape must still type check reading the new chain's static
     type (the transpose's declared one may have hidden a contradiction) */
  if (cur && !mgopt__pu_uses_accept(p, tr->outs[0], &cur->type, NULL)) cur = NULL;
  if (!cur) { /* out of memory, or a type the ops refuse: take the new ops back, change nothing */
    while (made.n > 0) mgopt_rw_erase(rw, made.op[--made.n]);
    return 0;
  }
  mgopt_rw_set_operand(rw, r2, "x", cur);
  mgopt__pu_erase_if_dead(rw, tr);
  mgopt__pu_erase_if_dead(rw, r1);
  return 1;
}

static const mgopt_pattern mgopt__ehr_patterns[] = {
    {"expand_high_rank_reshape_and_transpose", MGOPT_OP_reshape, NULL, 1, mgopt__ehr_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, expand_high_rank_reshape_and_transpose,
                           "a rank >= 6 reshape/transpose/reshape becomes a chain of rank <= 5 reshapes and transposes",
                           mgopt__ehr_patterns);
