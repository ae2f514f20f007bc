/* src/passes/fusion/fuse_dilated_conv.c — common::fuse_dilated_conv: space_to_batch → conv → batch_to_space becomes one dilated conv.

   Spec: mil_graph_passes.txt (the TensorFlow atrous-convolution idiom);
   reference mil-passes.md §3.33 (fuse_dilated_conv).

   Before:
     main(%x: (1, 1, 5, 5, fp32)) {
       %s: (4, 1, 5, 5, fp32) = space_to_batch(x=%x, block_shape=[2, 2], paddings=[2, 3, 2, 3])
       %w: (1, 1, 3, 3, fp32)* = const(val=[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]]])
       %c: (4, 1, 3, 3, fp32) = conv(x=%s, weight=%w)
       %y: (1, 1, 5, 5, fp32) = batch_to_space(x=%c, block_shape=[2, 2], crops=[0, 1, 0, 1])
     } -> (%y)
   After:
     main(%x: (1, 1, 5, 5, fp32)) {
       %w: (1, 1, 3, 3, fp32)* = const(val=[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]]])
       %y: (1, 1, 5, 5, fp32) = conv(x=%x, weight=%w, dilations=[2, 2], pad_type="custom", pad=[2, 2, 2, 2])
     } -> (%y)

   Fires on: batch_to_space(conv(space_to_batch(x))) with equal block_shape
   d (one entry per spatial dim of the conv), the intermediate values
   single-use and not block outputs, and the conv not strided, not dilated,
   and not padded (pad_type "valid", or "custom" with zeros). The phases of
   the space_to_batch each see a valid conv of the padded input, and
   batch_to_space interleaves them back: that is the padded input's conv
   dilated by d, cropped. So the result is conv(x, dilations=d) with pads
   (paddings_begin − crops_begin, paddings_end − crops_end) per spatial dim
   (pad_type "custom", or "valid" when they are all 0), its other inputs and
   attributes kept, named after the batch_to_space's output. This holds for
   any paddings the crops do not exceed: TensorFlow's "same" padding with
   its end extra and crop [0, extra] (the only nonzero padding the reference
   takes, as pad_type "same") is one case; its "valid" padding another.
   Must not fire: different block shapes; a crop larger than the padding on
   its side; a strided, dilated or padded inner conv (pad_type "same"
   included); an intermediate value with another reader or that is a
   block output; declared types that do not allow the replacement.
   Cost: worklist patterns, O(batch_to_spaces). */
#include "../../passes_internal.h"

/* 1 when INTS parameter `name` of op is absent or all ones. */
static int mgopt__fdc_ones(mgopt_program *p, const mgopt_op *op, const char *name) {
  const int64_t *v = NULL;
  int64_t n = mgopt_op_get_ints(p, op, name, &v), k;
  for (k = 0; k < n; k++)
    if (v[k] != 1) return 0;
  return 1;
}

/* 1 when conv pads nothing. */
static int mgopt__fdc_unpadded(mgopt_program *p, const mgopt_op *conv) {
  size_t n = 0;
  const char *pt = mgopt_op_get_string(conv, "pad_type", &n);
  const int64_t *v = NULL;
  int64_t np, k;
  if (!pt || (n == 5 && memcmp(pt, "valid", 5) == 0)) return 1;
  if (n != 6 || memcmp(pt, "custom", 6) != 0) return 0;
  np = mgopt_op_get_ints(p, conv, "pad", &v);
  for (k = 0; k < np; k++)
    if (v[k] != 0) return 0;
  return 1;
}

static int mgopt__fdc_fuse(mgopt_rewriter *rw, mgopt_op *b2s, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *cv = mgopt_op_operand(b2s, "x"), *sv, *x;
  mgopt_op *conv = mgopt__pu_def_of(cv, MGOPT_OP_conv), *s2b, *n;
  const int64_t *bs1 = NULL, *bs2 = NULL, *pd = NULL, *cr = NULL;
  int64_t nb, k, pads[4], any = 0;
  const char *name;
  MGOPT__UNUSED(ud);
  if (!conv || b2s->nouts != 1 || !mgopt__pu_single_use(cv) || mgopt__pu_is_block_output(cv)) return 0;
  sv = mgopt_op_operand(conv, "x");
  s2b = mgopt__pu_def_of(sv, MGOPT_OP_space_to_batch);
  if (!s2b || !mgopt__pu_single_use(sv) || mgopt__pu_is_block_output(sv) || !(x = mgopt_op_operand(s2b, "x"))) return 0;
  nb = mgopt_op_get_ints(p, s2b, "block_shape", &bs1);
  if (nb < 1 || nb > 2 || mgopt_op_get_ints(p, b2s, "block_shape", &bs2) != nb || x->type.rank != nb + 2 ||
      mgopt_op_get_ints(p, s2b, "paddings", &pd) != 2 * nb || mgopt_op_get_ints(p, b2s, "crops", &cr) != 2 * nb)
    return 0;
  for (k = 0; k < nb; k++)
    if (bs1[k] != bs2[k]) return 0;
  for (k = 0; k < 2 * nb; k++) {
    pads[k] = pd[k] - cr[k];
    if (pads[k] < 0) return 0;
    any |= pads[k];
  }
  if (!mgopt__fdc_ones(p, conv, "strides") || !mgopt__fdc_ones(p, conv, "dilations") || !mgopt__fdc_unpadded(p, conv))
    return 0;
  n = mgopt__pu_clone_op(p, conv);
  if (!n) return 0;
  name = mgopt__pu_value_name(b2s->outs[0]);
  if (mgopt_op_set_operand(n, "x", x) != MGOPT_OK || mgopt_op_set_ints(n, "dilations", bs1, nb) != MGOPT_OK ||
      mgopt_op_set_string(n, "pad_type", any ? "custom" : "valid") != MGOPT_OK ||
      mgopt_op_set_name(n, name) != MGOPT_OK || mgopt_value_set_name(n->outs[0], name) != MGOPT_OK)
    return 0;
  if (any) {
    if (mgopt_op_set_ints(n, "pad", pads, 2 * nb) != MGOPT_OK) return 0;
  } else {
    mgopt_op_remove_attr(n, "pad");
  }
  mgopt_op_insert_before(n, b2s);
  mgopt_rw_created(rw, n);
  if (mgopt_op_infer(p, n, NULL) != MGOPT_OK || !mgopt__pu_adopt_type(p, n->outs[0], b2s->outs[0])) {
    mgopt_rw_erase(rw, n);
    return 0;
  }
  mgopt__pu_replace_value(rw, b2s->outs[0], n->outs[0]);
  mgopt__pu_sync_op_name(n);
  mgopt_rw_erase(rw, b2s);
  mgopt__pu_erase_with_consts(rw, conv);
  mgopt_rw_erase(rw, s2b);
  return 1;
}

static const mgopt_pattern mgopt__fdc_patterns[] = {
    {"space_to_batch_conv", MGOPT_OP_batch_to_space, NULL, 1, mgopt__fdc_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_dilated_conv,
                           "space_to_batch, conv and batch_to_space become one dilated conv", mgopt__fdc_patterns);
