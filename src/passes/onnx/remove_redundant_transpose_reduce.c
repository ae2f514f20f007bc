/* src/passes/onnx/remove_redundant_transpose_reduce.c — onnx::remove_redundant_transpose_reduce: a reduction reads the untransposed tensor when the transpose cannot change its result.

   Spec: onnx_ir_optimizer_passes.txt, "remove_redundant_transpose_reduce".

   Before:
     main(%x: (2, 4, 5, 3, fp32)) {
       %t: (2, 3, 4, 5, fp32) = transpose(x=%x, perm=[0, 3, 1, 2])
       %m: (2, 3, fp32) = reduce_mean(x=%t, axes=[2, 3], keep_dims=false)
     } -> (%m)
   After:
     main(%x: (2, 4, 5, 3, fp32)) {
       %m: (2, 3, fp32) = reduce_mean(x=%x, axes=[1, 2], keep_dims=false)
     } -> (%m)

   Fires on: reduce_sum, reduce_mean, reduce_max, reduce_min or reduce_prod of
   transpose(x, perm) when the axes that survive the reduction keep their
   relative order (perm restricted to the kept axes is increasing), so the
   reduction over perm[axes] of x yields the same elements in the same order;
   with keep_dims the resulting shape (x's dims, 1 at the new axes) must also
   equal the old output's dims. The
   axes become the sorted perm[axes]; no axes (reduce everything) stay none.
   The transpose is erased when nothing else reads it.
   Must not fire: kept axes reordered by the transpose; keep_dims with a
   different resulting shape; axes that are not constant.
   Cost: one worklist run, O(ops x rank). */
#include "../../passes_internal.h"

static int mgopt__rtr_rewrite(mgopt_rewriter *rw, mgopt_op *red, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *tv = mgopt_op_operand(red, "x"), *x;
  mgopt_op *t;
  const int64_t *perm, *axes = NULL;
  int64_t n, na = -1, i, newax[MGOPT_MAX_RANK], last = -1;
  int32_t nn = 0;
  uint8_t red_ax[MGOPT_MAX_RANK], in_ax[MGOPT_MAX_RANK];
  int has_axes = mgopt_op_attr(red, "axes") != NULL || mgopt_op_slot_index(red, "axes") >= 0;
  MGOPT__UNUSED(ud);
  t = tv ? mgopt__pu_def_of(tv, MGOPT_OP_transpose) : NULL;
  if (!t || red->nouts != 1 || !(x = mgopt_op_operand(t, "x"))) return 0;
  n = mgopt_op_get_ints(p, t, "perm", &perm);
  if (n <= 0 || n > MGOPT_MAX_RANK) return 0;
  if (has_axes) {
    na = mgopt_op_get_ints(p, red, "axes", &axes);
    if (na < 0 || na > n) return 0;
  }
  memset(red_ax, 0, sizeof red_ax);
  for (i = 0; i < (has_axes ? na : n); i++) {
    int64_t a = has_axes ? axes[i] : i;
    if (a < 0) a += n;
    if (a < 0 || a >= n || red_ax[a]) return 0;
    red_ax[a] = 1;
  }
  for (i = 0; i < n; i++) {
    int64_t src = perm[i] < 0 ? perm[i] + n : perm[i];
    if (src < 0 || src >= n) return 0;
    if (red_ax[i]) continue;
    if (src < last) return 0; /* kept axes reordered */
    last = src;
  }
  memset(in_ax, 0, sizeof in_ax);
  for (i = 0; i < n; i++)
    if (red_ax[i]) in_ax[perm[i] < 0 ? perm[i] + n : perm[i]] = 1;
  for (i = 0; i < n; i++)
    if (in_ax[i]) newax[nn++] = i;
  if (mgopt_op_get_bool(red, "keep_dims", 0)) {
    /* the kept-dims shape must come out the same: x's dims with 1 at the new axes */
    const mgopt_type *ot = &red->outs[0]->type;
    if (x->type.rank != n || ot->rank != n) return 0;
    for (i = 0; i < n; i++) {
      mgopt_dim d = in_ax[i] ? mgopt_dim_static(1) : x->type.dims[i], o = ot->dims[i];
      if (d.sym != o.sym || (!d.sym && (d.v < 0 || d.v != o.v))) return 0;
    }
  }
  mgopt_rw_set_operand(rw, red, "x", x);
  if (has_axes) {
    if (mgopt_op_slot_index(red, "axes") >= 0) mgopt_op_set_operand(red, "axes", NULL);
    mgopt_op_set_ints(red, "axes", newax, nn);
  }
  mgopt_op_infer(p, red, NULL);
  mgopt_rw_modified(rw, red);
  mgopt__pu_erase_if_dead(rw, t);
  return 1;
}

static const mgopt_pattern mgopt__rtr_patterns[] = {
    {"remove_redundant_transpose_reduce", MGOPT_OP_reduce_sum, NULL, 1, mgopt__rtr_rewrite, NULL},
    {"remove_redundant_transpose_reduce", MGOPT_OP_reduce_mean, NULL, 1, mgopt__rtr_rewrite, NULL},
    {"remove_redundant_transpose_reduce", MGOPT_OP_reduce_max, NULL, 1, mgopt__rtr_rewrite, NULL},
    {"remove_redundant_transpose_reduce", MGOPT_OP_reduce_min, NULL, 1, mgopt__rtr_rewrite, NULL},
    {"remove_redundant_transpose_reduce", MGOPT_OP_reduce_prod, NULL, 1, mgopt__rtr_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, remove_redundant_transpose_reduce,
                           "a reduction reads the untransposed tensor when the transpose cannot change its result",
                           mgopt__rtr_patterns);
