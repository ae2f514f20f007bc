/* src/passes/fusion/compose_conv1d.c — common::compose_conv1d: expand_dims → 2-D conv → squeeze becomes a 1-D conv.

   Spec: mil_graph_passes.txt, "In TensorFlow, tf.keras.layers.Conv1D is a
   composite op ... we should recompose the fragments back to MIL conv";
   reference mil-passes.md §3.33 (compose_conv1d).

   Before:
     main(%x: (1, 2, 5, fp32)) {
       %e: (1, 2, 1, 5, fp32) = expand_dims(x=%x, axes=[-2])
       %w: (3, 2, 1, 2, fp32)* = const(val=[[[[1, 2]], [[3, 4]]], [[[5, 6]], [[7, 8]]], [[[9, 10]], [[11, 12]]]])
       %c: (1, 3, 1, 3, fp32) = conv(x=%e, weight=%w, strides=[1, 2], pad_type="custom", pad=[0, 0, 1, 0], dilations=[1, 1])
       %y: (1, 3, 3, fp32) = squeeze(x=%c, axes=[-2])
     } -> (%y)
   After:
     main(%x: (1, 2, 5, fp32)) {
       %y_weight: (3, 2, 2, fp32)* = const(val=[[[1, 2], [3, 4]], [[5, 6], [7, 8]], [[9, 10], [11, 12]]])
       %y: (1, 3, 3, fp32) = conv(x=%x, weight=%y_weight, strides=[2], pad_type="custom", pad=[1, 0], dilations=[1])
     } -> (%y)

   Fires on (pattern 1, channel-first): squeeze(axes=[2] or [-2]) of a 2-D
   conv of expand_dims(x, axes=[2] or [-2]) with x of rank 3; (pattern 2,
   channel-last): squeeze(axes=[1] or [-3]) of transpose(perm=[0, 2, 3, 1])
   of a 2-D conv of transpose(perm=[0, 3, 1, 2]) of expand_dims(x, axes=[1]
   or [-3]), which becomes transpose(x, [0, 2, 1]) → 1-D conv →
   transpose([0, 2, 1]). Every value between the first and the last op has
   that one reader and is not a block output. The conv's kernel is 1 high
   (weight [Cout, Cin/g, 1, K]) and pads nothing along the height (custom
   pads 0 there); the 1-D conv takes the width's stride, dilation and pads,
   the same pad_type, groups and bias, and a weight [Cout, Cin/g, K]: a
   const weight becomes a const sharing its bytes, a run-time one a
   squeeze(axes=[2]). The new conv is named after the squeeze's output.
   Must not fire: a kernel taller than 1 or padding along the height; an
   expand_dims or squeeze on another axis, or x not of rank 3; other
   transpose perms; an intermediate value with another reader or that is a
   block output; declared types that do not allow the replacement.
   Cost: worklist patterns, O(squeezes). */
#include "../../passes_internal.h"

/* The single axis of op's `axes`, normalized against rank r; -1 otherwise. */
static int64_t mgopt__cc1_axis(mgopt_program *p, const mgopt_op *op, int64_t r) {
  const int64_t *a = NULL;
  int64_t n = mgopt_op_get_ints(p, op, "axes", &a);
  return n == 1 ? mgopt__pu_norm_axis(a[0], r) : -1;
}

/* v is produced by a transpose of rank 4 with perm want, single-use and not a block output: that transpose. */
static mgopt_op *mgopt__cc1_transpose(mgopt_program *p, mgopt_value *v, const int64_t *want) {
  mgopt_op *t = mgopt__pu_def_of(v, MGOPT_OP_transpose);
  const int64_t *perm = NULL;
  int64_t k;
  if (!t || !mgopt__pu_single_use(v) || mgopt__pu_is_block_output(v) || mgopt_op_get_ints(p, t, "perm", &perm) != 4)
    return NULL;
  for (k = 0; k < 4; k++)
    if (mgopt__pu_norm_axis(perm[k], 4) != want[k]) return NULL;
  return t;
}

/* An INTS parameter of conv of `want` entries into out (left as it is when absent); 0 when malformed. */
static int mgopt__cc1_param(mgopt_program *p, const mgopt_op *conv, const char *name, int64_t want, int64_t *out) {
  const int64_t *v = NULL;
  int64_t n = mgopt_op_get_ints(p, conv, name, &v), k;
  if (n < 0) return 1;
  if (n != want) return 0;
  for (k = 0; k < n; k++) out[k] = v[k];
  return 1;
}

static mgopt_op *mgopt__cc1_build(mgopt_rewriter *rw, mgopt_op *conv, mgopt_op *pos, mgopt_value *x,
                                  const char *name) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *w = mgopt_op_operand(conv, "weight"), *b = mgopt_op_operand(conv, "bias"), *w1, *ins[3];
  mgopt_tensor *wt = mgopt__pu_def_of(w, MGOPT_OP_const) ? mgopt_value_const(w) : NULL;
  static const char *const slots[3] = {"x", "weight", "bias"};
  int64_t st[2] = {1, 1}, dl[2] = {1, 1}, pd[4] = {0, 0, 0, 0}, shape[3];
  size_t ptn = 0;
  const char *pt = mgopt_op_get_string(conv, "pad_type", &ptn);
  mgopt_op *n;
  int32_t k;
  if (w->type.rank != 4 || !mgopt_dim_is_static(w->type.dims[2]) || w->type.dims[2].v != 1) return NULL;
  if (!mgopt__cc1_param(p, conv, "strides", 2, st) || !mgopt__cc1_param(p, conv, "dilations", 2, dl) ||
      !mgopt__cc1_param(p, conv, "pad", 4, pd))
    return NULL;
  if (pt && ptn == 6 && memcmp(pt, "custom", 6) == 0 && (pd[0] || pd[1])) return NULL;
  if (wt) {
    for (k = 0; k < 3; k++) shape[k] = wt->shape[k < 2 ? k : 3];
    wt = mgopt__tensor_view(p, wt, 0, 3, shape);
    w1 = wt ? mgopt_rw_const(rw, pos, mgopt__pu_name2(p, name, "_weight"), wt) : NULL;
  } else {
    int64_t two = 2;
    mgopt_op *sq = mgopt_rw_create(rw, pos, "squeeze", mgopt__pu_name2(p, name, "_weight"), 1, slots, &w, 1);
    if (!sq) return NULL;
    if (mgopt_op_set_ints(sq, "axes", &two, 1) != MGOPT_OK || mgopt_op_infer(p, sq, NULL) != MGOPT_OK) {
      mgopt_rw_erase(rw, sq);
      return NULL;
    }
    w1 = sq->outs[0];
  }
  if (!w1) return NULL;
  ins[0] = x;
  ins[1] = w1;
  ins[2] = b;
  n = mgopt_rw_create(rw, pos, "conv", name, b ? 3 : 2, slots, ins, 1);
  if (!n) return NULL;
  /* the conv's attributes in its order, strides, pad and dilations cut to the width */
  for (k = 0; k < conv->nattrs; k++) {
    const mgopt_attr *a = &conv->attrs[k];
    mgopt_status s;
    if (!strcmp(a->name, "strides")) s = mgopt_op_set_ints(n, "strides", st + 1, 1);
    else if (!strcmp(a->name, "dilations")) s = mgopt_op_set_ints(n, "dilations", dl + 1, 1);
    else if (!strcmp(a->name, "pad")) s = mgopt_op_set_ints(n, "pad", pd + 2, 2);
    else s = mgopt_op_set_attr(n, a);
    if (s != MGOPT_OK) return NULL;
  }
  if (mgopt_op_infer(p, n, NULL) != MGOPT_OK) {
    mgopt_rw_erase(rw, n);
    mgopt__pu_erase_with_consts(rw, w1->def);
    return NULL;
  }
  return n;
}

static int mgopt__cc1_fuse(mgopt_rewriter *rw, mgopt_op *sq, void *ud) {
  static const int64_t to_nchw[4] = {0, 3, 1, 2}, to_nhwc[4] = {0, 2, 3, 1};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *v = mgopt_op_operand(sq, "x"), *x, *ins[1];
  mgopt_op *t2 = NULL, *t1 = NULL, *conv, *ed, *n, *tin = NULL, *tout = NULL;
  int64_t sax, perm[3] = {0, 2, 1};
  int last;
  const char *name;
  static const char *const xs[1] = {"x"};
  MGOPT__UNUSED(ud);
  if (!v || sq->nouts != 1 || v->type.rank != 4) return 0;
  sax = mgopt__cc1_axis(p, sq, 4);
  if (sax != 1 && sax != 2) return 0;
  last = sax == 1;
  if (last) {
    if (!(t2 = mgopt__cc1_transpose(p, v, to_nhwc))) return 0;
    v = mgopt_op_operand(t2, "x");
  } else if (!mgopt__pu_single_use(v) || mgopt__pu_is_block_output(v)) {
    return 0;
  }
  conv = mgopt__pu_def_of(v, MGOPT_OP_conv);
  if (!conv || conv->nouts != 1 || (last && (!mgopt__pu_single_use(v) || mgopt__pu_is_block_output(v)))) return 0;
  v = mgopt_op_operand(conv, "x");
  if (last) {
    if (!(t1 = mgopt__cc1_transpose(p, v, to_nchw))) return 0;
    v = mgopt_op_operand(t1, "x");
  } else if (!mgopt__pu_single_use(v) || mgopt__pu_is_block_output(v)) {
    return 0;
  }
  ed = mgopt__pu_def_of(v, MGOPT_OP_expand_dims);
  if (!ed || (last && (!mgopt__pu_single_use(v) || mgopt__pu_is_block_output(v)))) return 0;
  x = mgopt_op_operand(ed, "x");
  if (!x || x->type.rank != 3 || mgopt__cc1_axis(p, ed, 4) != sax) return 0;
  name = mgopt__pu_value_name(sq->outs[0]);
  if (last) {
    ins[0] = x;
    tin = mgopt_rw_create(rw, sq, "transpose", mgopt__pu_name2(p, name, "_in"), 1, xs, ins, 1);
    if (!tin || mgopt_op_set_ints(tin, "perm", perm, 3) != MGOPT_OK || mgopt_op_infer(p, tin, NULL) != MGOPT_OK) {
      if (tin) mgopt_rw_erase(rw, tin);
      return 0;
    }
    x = tin->outs[0];
  }
  n = mgopt__cc1_build(rw, conv, sq, x, last ? mgopt__pu_name2(p, name, "_conv") : name);
  if (n && last) {
    ins[0] = n->outs[0];
    tout = mgopt_rw_create(rw, sq, "transpose", name, 1, xs, ins, 1);
    if (tout && (mgopt_op_set_ints(tout, "perm", perm, 3) != MGOPT_OK || mgopt_op_infer(p, tout, NULL) != MGOPT_OK)) {
      mgopt_rw_erase(rw, tout);
      tout = NULL;
    }
  }
  if (!n || (last && !tout) || !mgopt__pu_adopt_type(p, last ? tout->outs[0] : n->outs[0], sq->outs[0])) {
    if (tout) mgopt_rw_erase(rw, tout);
    if (n) {
      mgopt_value *w = mgopt_op_operand(n, "weight");
      mgopt_rw_erase(rw, n);
      if (w) mgopt__pu_erase_with_consts(rw, w->def);
    }
    if (tin) mgopt_rw_erase(rw, tin);
    return 0;
  }
  mgopt__pu_replace_value(rw, sq->outs[0], last ? tout->outs[0] : n->outs[0]);
  mgopt__pu_sync_op_name(last ? tout : n);
  mgopt_rw_erase(rw, sq);
  if (t2) mgopt_rw_erase(rw, t2);
  mgopt__pu_erase_with_consts(rw, conv);
  if (t1) mgopt_rw_erase(rw, t1);
  mgopt__pu_erase_with_consts(rw, ed);
  return 1;
}

static const mgopt_pattern mgopt__cc1_patterns[] = {
    {"expand_conv_squeeze", MGOPT_OP_squeeze, NULL, 1, mgopt__cc1_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, compose_conv1d,
                           "expand_dims, a 2-D conv and squeeze (also channel-last) become a 1-D conv",
                           mgopt__cc1_patterns);
