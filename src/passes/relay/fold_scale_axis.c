/* src/passes/relay/fold_scale_axis.c — relay::fold_scale_axis: per-channel multiplies after or before a conv or linear fold into its weight (and bias).

   Spec: tvm_relay_passes.md, "FoldScaleAxis" (BackwardFoldScaleAxis,
   ForwardFoldScaleAxis, then FoldConstant): a multiply by a constant that
   varies only along the channel axis moves into the weights; here the
   folded weights are computed at once (no constant folding left to do).

   Before:
     main(%x: (1, 2, 3, fp32)) {
       %s: (2, 1, fp32)* = const(val=[[2], [4]])
       %m: (1, 2, 3, fp32) = mul(x=%x, y=%s)
       %w: (2, 2, 1, fp32)* = const(val=[[[1], [2]], [[3], [4]]])
       %c: (1, 2, 3, fp32) = conv(x=%m, weight=%w)
     } -> (%c)
   After:
     main(%x: (1, 2, 3, fp32)) {
       %c_weight: (2, 2, 1, fp32)* = const(val=[[[2], [8]], [[6], [16]]])
       %c: (1, 2, 3, fp32) = conv(x=%x, weight=%c_weight)
     } -> (%c)

   Backward (a scale after): mul(conv, s) or mul(linear, s), s a constant
   that is a scalar or varies only along the output channel axis (axis 1
   of a conv or conv_transpose output; the last axis of a linear's)
   without changing the shape: W'[o] = s[o]·W[o], b'[o] = s[o]·b[o] (an
   absent bias stays absent). The conv or linear must be read by the mul
   alone and not be a block output; it keeps its name.
   Forward (a scale before): conv(mul(x, s)) or linear(mul(x, s)), s
   varying only along the input channel axis (axis 1 of a conv input,
   the last axis of a linear's) with x already of the full shape:
   W'[o, i, ...] = W[o, i, ...]·s[g·Cin/g + i] for output channel o in
   group g. Also across a relu between the mul and the conv or linear when
   every s is > 0 (relu(x·s) = relu(x)·s only then). conv's own padding
   pads with zeros, which scale to zeros: it does not stop the fold. The
   mul (and the relu) must have no other reader and not be block outputs.
   Numeric contract: each element of W' and b' is the product computed in
   double from the exact constant values and rounded once, to nearest
   even, to the weight's dtype (fp16 stays fp16); a product that is not
   finite leaves the op alone.

   Must not fire: a run-time scale or weight; a scale that varies along
   another axis or broadcasts x to a bigger shape; a scale of zero or
   below across a relu; a forward fold into a conv_transpose (its input
   channels are weight axis 0; not taken); any op between the mul and the
   conv but one relu (a pad op with a non-zero value, another activation);
   a mul, relu or conv with another reader or that is a block output; a
   conv or linear with a fused_activation (its output is the activation's);
   declared types that do not allow the replacement (mgopt__pu_replace_fits).
   Cost: worklist patterns, O(muls, convs and linears + weight elements). */
#include "../../passes_internal.h"

/* The constant weights of a conv, conv_transpose or linear op, seen alike. */
typedef struct mgopt__fsa_w {
  mgopt_tensor *w, *b;   /* b NULL when absent */
  int32_t waxis;         /* the weight's output-channel axis */
  int64_t groups, cout, cin;
  int32_t out_axis;      /* the channel axis of the op's output and input */
} mgopt__fsa_w;

static int mgopt__fsa_get(mgopt_program *p, const mgopt_op *op, mgopt__fsa_w *f) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *wv, *bv;
  memset(f, 0, sizeof *f);
  if (op->nouts != 1 || !x || x->type.kind != MGOPT_TYPE_TENSOR || x->type.rank < 1) return 0;
  if (op->kind == MGOPT_OP_conv || op->kind == MGOPT_OP_conv_transpose) {
    mgopt__pw_conv c;
    if (!mgopt__pw_conv_get(p, op, &c)) return 0;
    f->w = c.w, f->b = c.b, f->waxis = c.axis, f->groups = c.groups, f->cout = c.cout, f->out_axis = 1;
    f->cin = c.axis == 0 ? c.w->shape[1] * c.groups : c.w->shape[0];
    return 1;
  }
  if (op->kind != MGOPT_OP_linear || mgopt__pu_fused_act(op)) return 0; /* its output is the activation's */
  wv = mgopt_op_operand(op, "weight");
  bv = mgopt_op_operand(op, "bias");
  f->w = wv && mgopt__pu_def_of(wv, MGOPT_OP_const) ? mgopt_value_const(wv) : NULL;
  if (!f->w || f->w->rank != 2 || !mgopt__pw_is_float_weight((mgopt_dtype)f->w->dtype) ||
      x->type.dtype != f->w->dtype)
    return 0;
  f->cout = f->w->shape[0], f->cin = f->w->shape[1], f->groups = 1, f->out_axis = x->type.rank - 1;
  if (bv) {
    f->b = mgopt__pu_def_of(bv, MGOPT_OP_const) ? mgopt_value_const(bv) : NULL;
    if (!f->b || f->b->rank != 1 || f->b->shape[0] != f->cout) return 0;
  }
  return 1;
}

/* backward: mul(op, s) with op a conv, conv_transpose or linear */
static int mgopt__fsa_backward(mgopt_rewriter *rw, mgopt_op *mul, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(mul, "x"), *y = mgopt_op_operand(mul, "y"), *ov = NULL, *sv = NULL;
  mgopt__fsa_w f;
  mgopt_tensor *nw, *nb = NULL;
  double *s, *b;
  int64_t o;
  int k;
  MGOPT__UNUSED(ud);
  if (!x || !y || mul->nouts != 1) return 0;
  for (k = 0; k < 2 && !ov; k++) {
    mgopt_value *a = k ? y : x;
    if (a->def && mgopt__fsa_get(p, a->def, &f)) ov = a, sv = k ? x : y;
  }
  if (!ov || !mgopt__pu_single_use(ov) || mgopt__pu_is_block_output(ov) || ov->type.kind != MGOPT_TYPE_TENSOR) return 0;
  if (ov->type.rank != mgopt_op_operand(ov->def, "x")->type.rank) return 0;
  s = (double *)mgopt_program_alloc(p, sizeof(double) * (size_t)f.cout * 2, 8);
  if (!s || !mgopt__pw_channel_const(p, sv, ov->type.rank, f.out_axis, f.cout, s)) return 0;
  if (!mgopt__pu_replace_fits(p, mul->outs[0], ov)) return 0;
  if (f.b) {
    b = s + f.cout;
    if (!mgopt__pw_read_channels(p, f.b, f.cout, b)) return 0;
    for (o = 0; o < f.cout; o++) b[o] *= s[o];
    if (!(nb = mgopt__pw_vector(p, (mgopt_dtype)f.b->dtype, f.cout, b))) return 0;
  }
  nw = mgopt__pw_scale_channels(p, f.w, f.waxis, f.groups, s);
  if (!nw || !mgopt__pw_conv_set(rw, ov->def, nw, nb)) return 0;
  mgopt__pu_replace_value(rw, mul->outs[0], ov);
  mgopt__pu_erase_with_consts(rw, mul);
  return 1;
}

/* w with input channel c of every output channel scaled by s[c]: weight
   [Cout, Cin/g, ...] (conv, linear), input channel of element
   [o, i, ...] = (o / (Cout/g))·(Cin/g) + i. NULL when a product is not finite. */
static mgopt_tensor *mgopt__fsa_scale_in(mgopt_program *p, const mgopt__fsa_w *f, const double *s) {
  mgopt_tensor *t = mgopt_tensor_new(p, (mgopt_dtype)f->w->dtype, f->w->rank, f->w->shape);
  int64_t inner = 1, cing = f->w->shape[1], coutg = f->cout / f->groups, e;
  int32_t d;
  if (!t || coutg < 1) return NULL;
  for (d = 2; d < f->w->rank; d++) inner *= f->w->shape[d];
  for (e = 0; e < f->w->numel; e++) {
    int64_t o = e / (cing * inner), i = (e / inner) % cing;
    if (!mgopt__pw_store(t, e, mgopt_tensor_get_f64(f->w, e) * s[(o / coutg) * cing + i])) return NULL;
  }
  return t;
}

/* forward: op(mul(x, s)) or op(relu(mul(x, s))), op a conv or linear */
static int mgopt__fsa_forward(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *in = mgopt_op_operand(op, "x"), *mv, *data = NULL, *sv = NULL, *mx, *my;
  mgopt_op *relu = NULL, *mul;
  mgopt__fsa_w f;
  mgopt_tensor *nw;
  double *s;
  int64_t i;
  int32_t r;
  int k;
  MGOPT__UNUSED(ud);
  if (!in || !in->def || !mgopt__pu_single_use(in) || mgopt__pu_is_block_output(in)) return 0;
  if (op->kind == MGOPT_OP_conv_transpose || !mgopt__fsa_get(p, op, &f) || f.waxis != 0) return 0;
  mv = in;
  if (in->def->kind == MGOPT_OP_relu) {
    relu = in->def;
    mv = mgopt_op_operand(relu, "x");
    if (!mv || !mv->def || !mgopt__pu_single_use(mv) || mgopt__pu_is_block_output(mv)) return 0;
  }
  mul = mv->def;
  if (mul->kind != MGOPT_OP_mul || mul->nouts != 1) return 0;
  mx = mgopt_op_operand(mul, "x");
  my = mgopt_op_operand(mul, "y");
  if (!mx || !my) return 0;
  r = in->type.rank;
  for (k = 0; k < 2 && !data; k++) {
    mgopt_value *c = k ? mx : my, *d = k ? my : mx;
    if (mgopt__pu_def_of(c, MGOPT_OP_const) && !mgopt_value_const(d)) data = d, sv = c;
  }
  if (!data || data->type.kind != MGOPT_TYPE_TENSOR || data->type.rank != r || mv->type.rank != r) return 0;
  if (!mgopt_dim_is_static(data->type.dims[f.out_axis]) || data->type.dims[f.out_axis].v != f.cin) return 0;
  s = (double *)mgopt_program_alloc(p, sizeof(double) * (size_t)f.cin, 8);
  if (!s || !mgopt__pw_channel_const(p, sv, r, f.out_axis, f.cin, s)) return 0;
  if (relu)
    for (i = 0; i < f.cin; i++)
      if (!(s[i] > 0)) return 0;
  if (!mgopt__pu_replace_fits(p, mv, data)) return 0;
  if (!(nw = mgopt__fsa_scale_in(p, &f, s))) return 0;
  if (!mgopt__pw_conv_set(rw, op, nw, NULL)) return 0;
  mgopt__pu_replace_value(rw, mv, data);
  mgopt__pu_erase_with_consts(rw, mul);
  return 1;
}

static const mgopt_pattern mgopt__fsa_patterns[] = {
    {"backward", MGOPT_OP_mul, NULL, 2, mgopt__fsa_backward, NULL},
    {"forward_conv", MGOPT_OP_conv, NULL, 1, mgopt__fsa_forward, NULL},
    {"forward_linear", MGOPT_OP_linear, NULL, 1, mgopt__fsa_forward, NULL},
};

/* the patterns match only where one of these is */
static const int32_t mgopt__fsa_needs[] = {MGOPT_OP_conv, MGOPT_OP_conv_transpose, MGOPT_OP_linear};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(relay, relay, fold_scale_axis,
                                   "per-channel multiplies after or before a conv or linear fold into its weight and bias",
                                   mgopt__fsa_patterns, mgopt__fsa_needs);
