/* src/passes/relay/peephole_conv_add_mul.c — relay::peephole_conv_add_mul: conv, then a per-channel add, then a per-channel mul fold into the conv's weight and bias.

   Spec: tvm_relay_passes.md, "Peephole", PatternTransformer1: the chain
   conv2d (or conv2d_transpose) -> add -> multiply, with constant add and
   multiply operands, becomes one convolution. The reference's rewrite
   returns add(conv, c·s): it drops the scale on the conv's own output;
   here (conv(x, W) + b + c)·s = conv(x, W·s) + (b + c)·s, exactly.

   Before:
     main(%x: (1, 2, 3, fp32)) {
       %w: (2, 2, 1, fp32)* = const(val=[[[1], [2]], [[3], [4]]])
       %c: (1, 2, 3, fp32) = conv(x=%x, weight=%w)
       %k: (2, 1, fp32)* = const(val=[[1], [-1]])
       %a: (1, 2, 3, fp32) = add(x=%c, y=%k)
       %s: (2, 1, fp32)* = const(val=[[2], [0.5]])
       %y: (1, 2, 3, fp32) = mul(x=%a, y=%s)
     } -> (%y)
   After:
     main(%x: (1, 2, 3, fp32)) {
       %c_weight: (2, 2, 1, fp32)* = const(val=[[[2], [4]], [[1.5], [2]]])
       %c_bias: (2, fp32)* = const(val=[2, -0.5])
       %y: (1, 2, 3, fp32) = conv(x=%x, weight=%c_weight, bias=%c_bias)
     } -> (%y)

   Per output channel o: W'[o] = s[o]·W[o], b'[o] = (b[o] + c[o])·s[o]
   (b = 0 when the conv has no bias; a bias is then created). A grouped
   conv_transpose maps its channels as fuse_conv_scale does.
   Numeric contract: each element of W' and b' is computed in double from
   the exact constant values (b[o] + c[o] and the product in double) and
   rounded once, to nearest even, to the weight's dtype (fp16 stays fp16).

   Fires on: mul(add(conv, c), s) with either operand order of the add and
   of the mul, conv a conv or conv_transpose with a constant float weight
   and a constant or absent bias (mgopt__pw_conv_get), c and s constants
   that are scalars or vary only along the channel axis without changing
   the output's shape ((Cout, 1, 1), (1, Cout, 1, 1), ... for a 2-D conv:
   mgopt__pw_channel_const); the conv read only by the add, the add only by
   the mul, neither a block output. The conv keeps its name and stands for
   the mul's output; the add, the mul and their constants go.
   Must not fire: a run-time add or mul operand; a constant that varies
   along a spatial axis or broadcasts the output to another shape; a conv
   or add with another reader or that is a block output; a sub or div in
   place of the add or mul; a result that is not finite; declared types
   that do not allow the replacement (mgopt__pu_replace_fits).
   Cost: worklist patterns, O(muls + weight elements). */
#include "../../passes_internal.h"

/* the operand of binary op other than v */
static mgopt_value *mgopt__pcam_other(const mgopt_op *op, const mgopt_value *v) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y");
  if (!x || !y) return NULL;
  return x == v ? y : y == v ? x : NULL;
}

/* the operand of op made by an op of `kind` read only by op (and not a block output), else NULL */
static mgopt_value *mgopt__pcam_sole(const mgopt_op *op, int32_t kind) {
  mgopt_value *v[2];
  int k;
  v[0] = mgopt_op_operand(op, "x");
  v[1] = mgopt_op_operand(op, "y");
  for (k = 0; k < 2; k++)
    if (v[k] && v[k]->def && v[k]->def->kind == kind && v[k]->def->nouts == 1 && v[k]->nuses == 1 &&
        !mgopt__pu_is_block_output(v[k]))
      return v[k];
  return NULL;
}

static int mgopt__pcam_fuse(mgopt_rewriter *rw, mgopt_op *mul, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *av, *cv = NULL, *cc, *sc;
  mgopt_op *add;
  mgopt__pw_conv c;
  mgopt_tensor *nw, *nb;
  double *s, *k, *b;
  int64_t o;
  int j;
  MGOPT__UNUSED(ud);
  if (mul->nouts != 1 || !(av = mgopt__pcam_sole(mul, MGOPT_OP_add))) return 0;
  add = av->def;
  for (j = 0; j < 2 && !cv; j++) {
    mgopt_value *v = mgopt_op_operand(add, j ? "y" : "x");
    if (v && v->def && v->nuses == 1 && !mgopt__pu_is_block_output(v) && mgopt__pw_conv_get(p, v->def, &c)) cv = v;
  }
  if (!cv || !(cc = mgopt__pcam_other(add, cv)) || !(sc = mgopt__pcam_other(mul, av))) return 0;
  s = (double *)mgopt_program_alloc(p, sizeof(double) * (size_t)c.cout * 2, 8);
  if (!s) return 0;
  k = s + c.cout;
  if (!mgopt__pw_channel_const(p, cc, c.w->rank, 1, c.cout, k) ||
      !mgopt__pw_channel_const(p, sc, c.w->rank, 1, c.cout, s))
    return 0;
  if (!mgopt__pu_replace_fits(p, mul->outs[0], cv)) return 0;
  if (!(b = mgopt__pw_conv_bias(p, &c))) return 0;
  for (o = 0; o < c.cout; o++) b[o] = (b[o] + k[o]) * s[o];
  if (!(nb = mgopt__pw_vector(p, (mgopt_dtype)c.w->dtype, c.cout, b))) return 0;
  nw = mgopt__pw_conv_scale(p, &c, s); /* last: it may scale in place */
  if (!nw || !mgopt__pw_conv_set(rw, cv->def, nw, nb)) return 0;
  mgopt__pu_replace_value(rw, mul->outs[0], cv);
  mgopt__pu_erase_with_consts(rw, mul);
  mgopt__pu_erase_with_consts(rw, add);
  return 1;
}

static const mgopt_pattern mgopt__pcam_patterns[] = {
    {"conv_add_mul", MGOPT_OP_mul, NULL, 1, mgopt__pcam_fuse, NULL},
};

/* the pattern matches only where one of these is */
static const int32_t mgopt__pcam_needs[] = {MGOPT_OP_conv, MGOPT_OP_conv_transpose};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(relay, relay, peephole_conv_add_mul,
                                   "conv, a per-channel add and a per-channel mul fold into the conv's weight and bias",
                                   mgopt__pcam_patterns, mgopt__pcam_needs);
