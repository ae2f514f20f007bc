/* src/passes/fusion/fuse_conv_bias.c — common::fuse_conv_bias: an add or sub of a constant after a conv (or its transpose) folds into its bias.

   Spec: mil_graph_passes.txt, "Fold add/sub into bias of conv and
   conv_transpose"; reference mil-passes.md §3.18.

   Before:
     main(%x: (1, 2, 3, fp32)) {
       %w: (2, 2, 1, fp32)* = const(val=[[[1], [2]], [[3], [4]]])
       %c: (1, 2, 3, fp32) = conv(x=%x, weight=%w)
       %k: (2, 1, fp32)* = const(val=[[0.5], [-1]])
       %y: (1, 2, 3, fp32) = add(x=%c, y=%k)
     } -> (%y)
   After:
     main(%x: (1, 2, 3, fp32)) {
       %w: (2, 2, 1, fp32)* = const(val=[[[1], [2]], [[3], [4]]])
       %c_bias: (2, fp32)* = const(val=[0.5, -1])
       %y: (1, 2, 3, fp32) = conv(x=%x, weight=%w, bias=%c_bias)
     } -> (%y)

   Fires on (pattern 1): add(conv, k), add(k, conv), sub(conv, k) and
   sub(k, conv), where conv is a conv or conv_transpose (mgopt__pw_conv_get:
   const float weight, bias absent or const) whose output has no other use
   and is not a block output, and k is a const that is a scalar or varies
   only along the channel axis without changing the output's shape
   (mgopt__pw_channel_const: (1, C, 1) or (C, 1) for a 1-D conv, (1, C, 1, 1)
   or (C, 1, 1) for 2-D, ...). b' = b + k, b' = b − k; for k − conv the
   weight is negated too: W' = −W, b' = k − b (the reference matches k − conv
   only after a transpose). Pattern 2: the same through a transpose,
   conv → transpose(perm) → add/sub, the transpose's output single-use and
   not a block output, k varying only along the axis the channels moved to
   (perm's position of 1); the transpose then reads the new conv. An absent
   bias is zeros(Cout). The conv keeps its name; the add or sub and its
   unused consts are erased.
   Numeric contract: each element of b' is computed in double from the exact
   constant values and rounded once, to nearest even, to the weight's dtype
   (fp16 stays fp16); −W is exact.
   Must not fire: k of another shape (varying along a spatial axis, or
   broadcasting the output to a higher rank); a run-time k, weight or bias;
   a conv (or transpose) output with another use or that is a block output;
   a result that is not finite; declared types that do not allow the
   replacement (mgopt__pu_replace_fits).
   Cost: worklist patterns, O(adds and subs + bias elements; weight elements
   for k − conv, negated in place when an earlier fold made the weight and
   this conv alone reads it). */
#include "../../passes_internal.h"

/* v's producer is a conv (then *tr NULL) or a transpose of a conv (*tr the
   transpose), each output single-use and not a block output; *axis is where
   the channels are in v. The conv, or NULL. */
static mgopt_op *mgopt__fcbias_conv(mgopt_program *p, mgopt_value *v, mgopt__pw_conv *c, mgopt_op **tr,
                                    int32_t *axis) {
  mgopt_op *d = v ? v->def : NULL;
  *tr = NULL;
  *axis = 1;
  if (d && d->kind == MGOPT_OP_transpose && d->nouts == 1) {
    mgopt_value *tx = mgopt_op_operand(d, "x");
    const int64_t *perm = NULL;
    int64_t n = mgopt_op_get_ints(p, d, "perm", &perm), i;
    if (!tx || !mgopt__pu_single_use(v) || mgopt__pu_is_block_output(v) || n != tx->type.rank || n < 2) return NULL;
    *axis = -1;
    for (i = 0; i < n; i++)
      if (mgopt__pu_norm_axis(perm[i], n) == 1) *axis = (int32_t)i;
    if (*axis < 0) return NULL;
    *tr = d;
    v = tx;
    d = v->def;
  }
  if (!d || !mgopt__pw_conv_get(p, d, c) || !mgopt__pu_single_use(v) || mgopt__pu_is_block_output(v)) return NULL;
  if ((*tr) && (*tr)->outs[0]->type.rank != c->w->rank) return NULL;
  return d;
}

static int mgopt__fcbias_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y"), *kv = NULL, *res;
  mgopt_op *conv = NULL, *tr = NULL;
  mgopt__pw_conv c;
  mgopt_tensor *nw = NULL, *nb;
  double *k, *b, *neg;
  int32_t axis = 1, side;
  int64_t o;
  MGOPT__UNUSED(ud);
  if (!x || !y || op->nouts != 1) return 0;
  for (side = 0; side < 2 && !conv; side++) {
    conv = mgopt__fcbias_conv(p, side ? y : x, &c, &tr, &axis);
    kv = side ? x : y;
  }
  side--; /* 0: conv ± k, 1: k ± conv */
  if (!conv) return 0;
  k = (double *)mgopt_program_alloc(p, sizeof(double) * (size_t)c.cout, 8);
  if (!k || !mgopt__pw_channel_const(p, kv, c.w->rank, axis, c.cout, k)) return 0;
  res = tr ? tr->outs[0] : conv->outs[0];
  if (!mgopt__pu_replace_fits(p, op->outs[0], res) || !(b = mgopt__pw_conv_bias(p, &c))) return 0;
  for (o = 0; o < c.cout; o++) {
    if (op->kind == MGOPT_OP_add) b[o] += k[o];
    else if (side == 0) b[o] -= k[o];
    else b[o] = k[o] - b[o];
  }
  if (!(nb = mgopt__pw_vector(p, (mgopt_dtype)c.w->dtype, c.cout, b))) return 0;
  if (op->kind == MGOPT_OP_sub && side == 1) {
    neg = (double *)mgopt_program_alloc(p, sizeof(double) * (size_t)c.cout, 8);
    if (!neg) return 0;
    for (o = 0; o < c.cout; o++) neg[o] = -1.0;
    if (!(nw = mgopt__pw_conv_scale(p, &c, neg))) return 0; /* last: it may negate in place */
  }
  if (!mgopt__pw_conv_set(rw, conv, nw, nb)) return 0;
  mgopt__pu_replace_value(rw, op->outs[0], res);
  mgopt__pu_erase_with_consts(rw, op);
  return 1;
}

static const mgopt_pattern mgopt__fcbias_patterns[] = {
    {"conv_add", MGOPT_OP_add, NULL, 1, mgopt__fcbias_fuse, NULL},
    {"conv_sub", MGOPT_OP_sub, NULL, 1, mgopt__fcbias_fuse, NULL},
};

/* the patterns match only where one of these is */
static const int32_t mgopt__fcbias_needs[] = {MGOPT_OP_conv, MGOPT_OP_conv_transpose};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(fusion, common, fuse_conv_bias,
                                   "fold an add or sub of a constant after a conv (or its transpose) into its bias",
                                   mgopt__fcbias_patterns, mgopt__fcbias_needs);
