/* src/passes/onnx/merge_consecutive_expand_dims.c — onnx::merge_consecutive_expand_dims: expand_dims(expand_dims(x)) -> one expand_dims.

   Spec: ONNX Runtime's basic level leaves one Unsqueeze where a model has a
   chain of them (Unsqueeze and Reshape chains); merge_consecutive_reshapes
   covers reshapes, and fuse_squeeze_expand_dims only a squeeze followed by
   an expand_dims. ONNX Unsqueeze is imported as expand_dims.

   Before:
     main(%x: (2, 3, fp32)) {
       %a: (1, 2, 3, fp32) = expand_dims(x=%x, axes=[0])
       %b: (1, 2, 3, 1, fp32) = expand_dims(x=%a, axes=[-1])
     } -> (%b)
   After:
     main(%x: (2, 3, fp32)) {
       %b: (1, 2, 3, 1, fp32) = expand_dims(x=%x, axes=[0, 3])
     } -> (%b)

   Fires on: an expand_dims whose input is made by an expand_dims that has
   no other use and is not a block output, in any block, when the inner
   input's rank is known. Axes count in the output's dims (negative from
   its end, as ONNX Unsqueeze and MIL's expand_dims read them): the outer
   op's axes stay where they are, and each inner axis moves to the output
   position that the outer op leaves for that dim. The outer op keeps its
   output (name and type); the inner one is erased.
   Must not fire: an inner expand_dims with another use or that is a block
   output (both would then stay: no gain); an input of unknown rank; axes
   out of range or repeated (left to the verifier's complaint).
   Cost: worklist patterns, O(ops x rank). */
#include "../../passes_internal.h"

/* Normalizes n axes of an output of rank r into sorted, checked positions; 0 when out of range or repeated. */
static int mgopt__mce_axes(const int64_t *v, int64_t n, int64_t r, int64_t *out) {
  int64_t i, j;
  if (n < 1 || n > r || r > MGOPT_MAX_RANK) return 0;
  for (i = 0; i < n; i++) {
    int64_t a = v[i] < 0 ? v[i] + r : v[i];
    if (a < 0 || a >= r) return 0;
    for (j = i; j > 0 && out[j - 1] > a; j--) out[j] = out[j - 1];
    out[j] = a;
  }
  for (i = 1; i < n; i++)
    if (out[i] == out[i - 1]) return 0;
  return 1;
}

static int mgopt__mce_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *mid = mgopt_op_operand(op, "x"), *x;
  mgopt_op *inner = mgopt__pu_def_of(mid, MGOPT_OP_expand_dims);
  const int64_t *va = NULL, *vb = NULL;
  int64_t na, nb, r0, r1, r2, a[MGOPT_MAX_RANK], b[MGOPT_MAX_RANK], pos[MGOPT_MAX_RANK], all[MGOPT_MAX_RANK];
  int64_t merged[MGOPT_MAX_RANK];
  int64_t i, k, n;
  MGOPT__UNUSED(ud);
  if (!inner || inner == op || op->nouts != 1 || !mgopt__pu_single_use(mid) || mgopt__pu_is_block_output(mid)) return 0;
  x = mgopt_op_operand(inner, "x");
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR || x->type.rank < 0) return 0;
  na = mgopt_op_get_ints(p, inner, "axes", &va);
  nb = mgopt_op_get_ints(p, op, "axes", &vb);
  r0 = x->type.rank;
  r1 = r0 + na;
  r2 = r1 + nb;
  if (na < 1 || nb < 1 || !mgopt__mce_axes(va, na, r1, a) || !mgopt__mce_axes(vb, nb, r2, b)) return 0;
  /* pos[j]: where dim j of the inner output lands in the outer output */
  for (i = 0, k = 0, n = 0; i < r2; i++) {
    if (k < nb && b[k] == i) {
      k++;
      continue;
    }
    pos[n++] = i;
  }
  for (i = 0; i < nb; i++) all[i] = b[i];
  for (i = 0; i < na; i++) all[nb + i] = pos[a[i]];
  if (!mgopt__mce_axes(all, na + nb, r2, merged)) return 0;
  if (mgopt_rw_set_operand(rw, op, "x", x) != MGOPT_OK || mgopt_op_set_ints(op, "axes", merged, na + nb) != MGOPT_OK)
    return 0;
  mgopt_rw_modified(rw, op);
  if (mid->nuses == 0) mgopt_rw_erase(rw, inner);
  return 1;
}

static const mgopt_pattern mgopt__mce_patterns[] = {
    {"expand_dims_expand_dims", MGOPT_OP_expand_dims, NULL, 1, mgopt__mce_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, merge_consecutive_expand_dims,
                           "collapse a chain of expand_dims (ONNX Unsqueeze) into one", mgopt__mce_patterns);
