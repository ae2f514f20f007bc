/* src/passes/cleanup/fuse_transpose_matmul.c — common::fuse_transpose_matmul: fold last-two-axes transposes into matmul.

   Spec: mil_graph_passes.txt, "fuse_transpose_matmul"; reference §3.22.

   Before:
     main(%x: (2, 4, 3, fp32), %y: (2, 5, 4, fp32)) {
       %xt: (2, 3, 4, fp32) = transpose(x=%x, perm=[0, 2, 1])
       %yt: (2, 4, 5, fp32) = transpose(x=%y, perm=[0, -1, -2])
       %z: (2, 3, 5, fp32) = matmul(x=%xt, y=%yt, transpose_x=false, transpose_y=false)
     } -> (%z)
   After:
     main(%x: (2, 4, 3, fp32), %y: (2, 5, 4, fp32)) {
       %z: (2, 3, 5, fp32) = matmul(x=%x, y=%y, transpose_x=true, transpose_y=true)
     } -> (%z)

   Fires on: a matmul operand made by a transpose of rank >= 2 whose perm,
   normalized, swaps exactly the last two axes and keeps every other axis in
   place ([0, 1, ..., r-1, r-2]). The matmul reads the transpose's input and
   its transpose_x / transpose_y flips (a constant operand for the flag is
   replaced by the attribute). The transpose stays while something else reads
   it, and is erased once unused.
   Must not fire: any other perm ((0, 2, 1, 3) moves a batch axis), rank 1,
   a perm that is not constant, or a transpose_x / transpose_y that is not
   constant (its value is unknown). Cost: worklist patterns, O(matmuls x rank). */
#include "../../passes_internal.h"

/* 1 if transpose t swaps exactly the last two axes of its input. */
static int mgopt__ftm_swaps_last_two(mgopt_program *p, const mgopt_op *t) {
  const mgopt_value *x = mgopt_op_operand(t, "x");
  const int64_t *perm = NULL;
  int64_t r, n, i;
  if (!x || t->nouts != 1) return 0;
  r = x->type.rank;
  n = mgopt_op_get_ints(p, t, "perm", &perm);
  if (r < 2 || n != r) return 0;
  for (i = 0; i < r; i++) {
    int64_t want = i < r - 2 ? i : i == r - 2 ? r - 1 : r - 2;
    if (mgopt__pu_norm_axis(perm[i], r) != want) return 0;
  }
  return 1;
}

/* The value of the bool flag `name` of op, or -1 when it is a non-constant operand. */
static int mgopt__ftm_flag(const mgopt_op *op, const char *name) {
  const mgopt_value *v = mgopt_op_operand(op, name);
  if (v && !mgopt_value_const(v)) return -1;
  return mgopt_op_get_bool(op, name, 0) ? 1 : 0;
}

static int mgopt__ftm_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const slots[2] = {"x", "y"};
  static const char *const flags[2] = {"transpose_x", "transpose_y"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_op *tr[2];
  int f[2], s, any = 0;
  MGOPT__UNUSED(ud);
  for (s = 0; s < 2; s++) {
    tr[s] = mgopt__pu_def_of(mgopt_op_operand(op, slots[s]), MGOPT_OP_transpose);
    f[s] = mgopt__ftm_flag(op, flags[s]);
    if (f[s] < 0 || !tr[s] || !mgopt__ftm_swaps_last_two(p, tr[s])) tr[s] = NULL;
    if (tr[s]) any = 1;
  }
  if (!any) return 0;
  {
    /* the matmul will see the transposes' inputs, typed as inference gives
       them: a transpose output declared less precisely (a symbolic dim) may
       hide that the matmul's declared type contradicts them */
    mgopt_type saved[2], inf;
    int ok = 1;
    for (s = 0; s < 2; s++) {
      if (!tr[s]) continue;
      saved[s] = tr[s]->outs[0]->type;
      if (mgopt__pu_inferred_type(p, tr[s], 0, &inf)) tr[s]->outs[0]->type = inf;
      else ok = 0;
    }
    if (ok) ok = mgopt__pu_infer_fits(p, op);
    for (s = 1; s >= 0; s--)
      if (tr[s]) tr[s]->outs[0]->type = saved[s];
    if (!ok) return 0;
  }
  for (s = 0; s < 2; s++) {
    mgopt_value *old;
    if (!tr[s]) continue;
    old = mgopt_op_operand(op, flags[s]);
    if (old) mgopt_rw_set_operand(rw, op, flags[s], NULL);
    if (mgopt_op_set_bool(op, flags[s], !f[s]) != MGOPT_OK) return 0;
    if (old) mgopt__pu_erase_if_dead(rw, old->def);
    mgopt_rw_set_operand(rw, op, slots[s], mgopt_op_operand(tr[s], "x"));
  }
  mgopt_rw_modified(rw, op);
  for (s = 0; s < 2; s++)
    if (tr[s] && (s == 0 || tr[1] != tr[0])) mgopt__pu_erase_with_consts(rw, tr[s]);
  return 1;
}

static const mgopt_pattern mgopt__ftm_patterns[] = {
    {"transpose_matmul", MGOPT_OP_matmul, NULL, 1, mgopt__ftm_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, fuse_transpose_matmul,
                           "fold transposes of the last two axes into matmul's transpose_x / transpose_y",
                           mgopt__ftm_patterns);
