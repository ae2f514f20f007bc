/* src/onnx/map_nn.c — ONNX <-> canonical mappings of network layers: MatMul, Gemm, Conv, ConvTranspose, pools, normalizations, Softmax, Resize, Upsample, Einsum. */
#include "convert_internal.h"

/* ---------------------------------------------------------------- MatMul, Gemm */

static int mgopt__imp_matmul(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *y = mgopt__imp_in(I, 1);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || !y || x->type.dtype != y->type.dtype) return 0;
  /* float, and from opset 9 int32 and int64 (exact; wrapped past the dtype) */
  if (!mgopt__imp_is_float(x) &&
      !(I->opset >= 9 && (x->type.dtype == MGOPT_DT_INT32 || x->type.dtype == MGOPT_DT_INT64)))
    return 0;
  op = mgopt__imp_op(I, "matmul", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "y", y) ||
      mgopt_op_set_bool(op, "transpose_x", 0) || mgopt_op_set_bool(op, "transpose_y", 0))
    return -1;
  return mgopt__imp_done(I, op);
}

/* Transposes of the last two dims become Transpose nodes. */
static const char *mgopt__exw_matmul(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  static const char *const names[2] = {"x", "y"}, *const flags[2] = {"transpose_x", "transpose_y"};
  int j;
  MGOPT__UNUSED(p);
  for (j = 0; j < 2; j++) {
    mgopt_value *v = mgopt_op_operand(op, names[j]);
    if (!v) return "an operand is missing";
    if (!mgopt_dtype_is_float((mgopt_dtype)v->type.dtype) && m->since < 9) return "MatMul of integers needs opset 9";
    if (mgopt_op_get_bool(op, flags[j], 0) && (v->type.rank < 2 || v->type.rank > MGOPT_MAX_RANK))
      return "transposed operand of unknown rank";
  }
  return NULL;
}

static mgopt_status mgopt__exp_matmul(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  ins[0] = mgopt__exp_in(op, "x");
  if (mgopt_op_get_bool(op, "transpose_x", 0) || mgopt_op_get_bool(op, "transpose_y", 0)) {
    int j;
    const char *names[2] = {"x", "y"}, *flags[2] = {"transpose_x", "transpose_y"};
    for (j = 0; j < 2; j++) {
      mgopt_value *xv = mgopt_op_operand(op, names[j]);
      int64_t perm[MGOPT_MAX_RANK], r, q;
      const char *out;
      mgopt_onnx_node *t;
      ins[j] = mgopt__exp_vname(xv);
      if (!mgopt_op_get_bool(op, flags[j], 0)) continue;
      r = xv->type.rank;
      for (q = 0; q < r; q++) perm[q] = q;
      perm[r - 2] = r - 1;
      perm[r - 1] = r - 2;
      out = mgopt__exp_fresh(E, ins[j]);
      t = mgopt__exp_node(E, "Transpose", "", NULL);
      if (!out || !t || !mgopt__exp_set_io(E, &t->inputs, &t->ninputs, &ins[j], 1) ||
          !mgopt__exp_set_io(E, &t->outputs, &t->noutputs, &out, 1) || !mgopt__exp_aints(E, t, "perm", perm, r))
        return mgopt__exp_nomem(E);
      ins[j] = out;
    }
  } else {
    ins[1] = mgopt__exp_in(op, "y");
  }
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 2));
}

/* An intermediate op of the Gemm decomposition: `type` over (a, b) in slots
   (sa, sb), output named after the node's output and `what`, types inferred.
   NULL on error (d set). */
static mgopt_op *mgopt__imp_gemm_step(mgopt__imp *I, const char *type, const char *what, const char *sa, mgopt_value *a,
                                      const char *sb, mgopt_value *b) {
  const char *slots[2];
  mgopt_value *vals[2];
  mgopt_op *op;
  mgopt_diag d2;
  char buf[160];
  snprintf(buf, sizeof buf, "%.100s_%s", I->node->noutputs ? mgopt__imp_intern(I, I->node->outputs[0]) : "gemm", what);
  slots[0] = sa;
  slots[1] = sb;
  vals[0] = a;
  vals[1] = b;
  op = mgopt_build_op(I->p, I->b, NULL, type, mgopt_program_fresh_name(I->p, buf), b ? 2 : 1, slots, vals, 1);
  if (!op) return NULL;
  if (op->kind == MGOPT_OP_matmul && (mgopt_op_set_bool(op, "transpose_x", 0) || mgopt_op_set_bool(op, "transpose_y", 0)))
    return NULL;
  if (op->kind == MGOPT_OP_transpose) {
    static const int64_t perm[2] = {1, 0};
    if (mgopt_op_set_ints(op, "perm", perm, 2)) return NULL;
  }
  mgopt_diag_clear(&d2);
  if (mgopt_op_infer(I->p, op, &d2)) {
    mgopt__imp_fail(I, MGOPT_ERR_TYPE, "Gemm: %s", d2.msg);
    return NULL;
  }
  return op;
}

/* A scalar constant v of x's dtype (rank 0), appended. */
static mgopt_value *mgopt__imp_gemm_scalar(mgopt__imp *I, const mgopt_value *x, const char *what, double v) {
  mgopt_tensor *t = mgopt_tensor_new_scalar_f64(I->p, (mgopt_dtype)x->type.dtype, v);
  char buf[160];
  snprintf(buf, sizeof buf, "%.100s_%s", I->node->noutputs ? mgopt__imp_intern(I, I->node->outputs[0]) : "gemm", what);
  return t ? mgopt_build_const(I->p, I->b, NULL, mgopt_program_fresh_name(I->p, buf), t) : NULL;
}

/* Gemm: Y = alpha * op(A) * op(B) + beta * C, as ops whose export reads back
   as the same ops: a transposed A through transpose, A * B' as linear (no
   bias), A * B as matmul, then mul by alpha when it is not 1 and add of C
   (multiplied by beta first when beta is not 1). alpha = beta = 1, no
   transposed A, a transposed B and a 1-d (or absent) C is one linear. beta
   = 0 drops C, as ONNX's definition does (a NaN in C does not reach Y).
   The constants come first, as initializers do when the model is read back. */
static int mgopt__imp_gemm(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *a = mgopt__imp_in(I, 0), *b = mgopt__imp_in(I, 1), *c = mgopt__imp_in(I, 2), *av = NULL, *bv = NULL;
  int64_t ta = mgopt__imp_aint(I->node, "transA", 0), tb = mgopt__imp_aint(I->node, "transB", 0);
  double alpha = mgopt__imp_afloat(I->node, "alpha", 1.0), beta = mgopt__imp_afloat(I->node, "beta", 1.0);
  mgopt_op *op;
  mgopt_value *y;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(a) || !b || a->type.dtype != b->type.dtype || (c && c->type.dtype != a->type.dtype))
    return 0;
  if (!(alpha == alpha) || !(beta == beta)) return 0;
  if (mgopt__imp_rank(a) != 2 || mgopt__imp_rank(b) != 2 || (c && (mgopt__imp_rank(c) < 0 || mgopt__imp_rank(c) > 2)))
    return 0;
  /* before opset 7, C broadcasts only with broadcast = 1 (else it has Y's shape) */
  if (c && I->opset < 7 && !mgopt__imp_aint(I->node, "broadcast", 0) && mgopt__imp_rank(c) != 2) return 0;
  if (beta == 0.0) c = NULL;
  if (alpha == 1.0 && !ta && tb && (!c || (beta == 1.0 && mgopt__imp_rank(c) == 1))) {
    op = mgopt__imp_op(I, "linear", 1, 0);
    if (!op || mgopt_op_set_operand(op, "x", a) || mgopt_op_set_operand(op, "weight", b)) return -1;
    if (c && mgopt_op_set_operand(op, "bias", c)) return -1;
    return mgopt__imp_done(I, op);
  }
  if (c && beta != 1.0 && !(bv = mgopt__imp_gemm_scalar(I, a, "beta", beta))) return -1;
  if (alpha != 1.0 && !(av = mgopt__imp_gemm_scalar(I, a, "alpha", alpha))) return -1;
  if (ta) {
    mgopt_op *t = mgopt__imp_gemm_step(I, "transpose", "a_t", "x", a, NULL, NULL);
    if (!t) return -1;
    a = t->outs[0];
  }
  if (alpha == 1.0 && !c) {
    op = mgopt__imp_op(I, tb ? "linear" : "matmul", 1, 0);
    if (!op || mgopt_op_set_operand(op, "x", a) || mgopt_op_set_operand(op, tb ? "weight" : "y", b)) return -1;
    if (!tb && (mgopt_op_set_bool(op, "transpose_x", 0) || mgopt_op_set_bool(op, "transpose_y", 0))) return -1;
    return mgopt__imp_done(I, op);
  }
  op = tb ? mgopt__imp_gemm_step(I, "linear", "matmul", "x", a, "weight", b)
          : mgopt__imp_gemm_step(I, "matmul", "matmul", "x", a, "y", b);
  if (!op) return -1;
  y = op->outs[0];
  if (bv) {
    mgopt_op *bc = mgopt__imp_gemm_step(I, "mul", "beta_c", "x", c, "y", bv);
    if (!bc) return -1;
    c = bc->outs[0];
  }
  if (av) {
    if (!c) {
      op = mgopt__imp_op(I, "mul", 1, 0);
      if (!op || mgopt_op_set_operand(op, "x", y) || mgopt_op_set_operand(op, "y", av)) return -1;
      return mgopt__imp_done(I, op);
    }
    op = mgopt__imp_gemm_step(I, "mul", "alpha_ab", "x", y, "y", av);
    if (!op) return -1;
    y = op->outs[0];
  }
  op = mgopt__imp_op(I, "add", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", y) || mgopt_op_set_operand(op, "y", c)) return -1;
  return mgopt__imp_done(I, op);
}

/* linear: Gemm(transB) for a 2-d input, else MatMul + Add; a 2-d weight is
   written transposed (a constant as a transposed initializer, else through a
   Transpose node). */
/* ---------------------------------------------------------------- fused activations

   A conv or linear whose fused_activation is relu or relu6 is written as
   its plain nodes followed by Relu, or Clip(0, 6): the node that wrote the
   op's output writes a fresh name instead and the activation writes the
   output. Nodes [first, end) of the graph being written are the op's. */
static const char *mgopt__exw_fused_act(const mgopt_op *op) {
  const char *a = mgopt_op_get_string(op, "fused_activation", NULL);
  if (!a || strcmp(a, "none") == 0 || strcmp(a, "relu") == 0 || strcmp(a, "relu6") == 0) return NULL;
  return "fused_activation other than none, relu or relu6";
}

MGOPT__PRIVATE mgopt_status mgopt__exp_fused_activation(mgopt__exp *E, const mgopt_op *op, int64_t first) {
  const char *a = mgopt_op_get_string(op, "fused_activation", NULL), *out, *pre, *ins[3];
  mgopt_onnx_node *nodes, *n;
  int64_t k, j, found = 0;
  int relu6;
  if (!a || strcmp(a, "none") == 0 || op->nouts != 1) return MGOPT_OK;
  relu6 = strcmp(a, "relu6") == 0;
  out = mgopt__exp_vname(op->outs[0]);
  pre = mgopt__exp_fresh(E, out);
  if (!pre) return mgopt__exp_nomem(E);
  nodes = (mgopt_onnx_node *)E->g->nodes.data;
  for (k = E->g->nodes.n - 1; k >= first && !found; k--)
    for (j = 0; j < nodes[k].noutputs; j++)
      if (nodes[k].outputs[j].len == strlen(out) && memcmp(nodes[k].outputs[j].ptr, out, strlen(out)) == 0) {
        nodes[k].outputs[j] = mgopt__exp_s(pre);
        found = 1;
        break;
      }
  if (!found) return mgopt__exp_fail(E, MGOPT_ERR_UNSUPPORTED, "fused activation: no node writes '%s'", out);
  ins[0] = pre;
  if (relu6 && E->opset >= 11) {
    mgopt_dtype dt = (mgopt_dtype)op->outs[0]->type.dtype;
    ins[1] = mgopt__exp_const(E, "clip_min", mgopt_tensor_new_scalar_f64(E->p, dt, 0.0));
    ins[2] = mgopt__exp_const(E, "clip_max", mgopt_tensor_new_scalar_f64(E->p, dt, 6.0));
    if (!ins[1] || !ins[2]) return mgopt__exp_nomem(E);
  }
  n = mgopt__exp_node(E, relu6 ? "Clip" : "Relu", "", NULL);
  if (!n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, ins, relu6 && E->opset >= 11 ? 3 : 1) ||
      !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &out, 1))
    return mgopt__exp_nomem(E);
  if (relu6 && E->opset < 11 && (!mgopt__exp_afloat(E, n, "min", 0.0) || !mgopt__exp_afloat(E, n, "max", 6.0)))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

static const char *mgopt__exw_linear(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "weight");
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x || !w) return "an operand is missing";
  if (mgopt__exw_fused_act(op)) return mgopt__exw_fused_act(op);
  return w->type.rank == 2 ? NULL : "weight of rank other than 2";
}

/* The transpose of the 2-d whole-byte constant t (what
   mgopt__exp_linear_folds_weight accepts): when t was made as a transpose
   (fuse_matmul_weight_bias), the bytes it was made from, without copying;
   NULL only when memory ran out. */
static mgopt_tensor *mgopt__exp_transposed(mgopt__exp *E, mgopt_tensor *t) { return mgopt__tensor_transpose2d(E->p, t); }

MGOPT__PRIVATE int mgopt__exp_linear_folds_weight(const mgopt_op *op) {
  const mgopt_value *x = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "weight"), *b = mgopt_op_operand(op, "bias");
  const mgopt_tensor *t = w ? mgopt_value_const(w) : NULL;
  int bits = t ? mgopt_dtype_bits((mgopt_dtype)t->dtype) : 0;
  if (op->kind != MGOPT_OP_linear || !x || (x->type.rank == 2 && (!b || b->type.rank == 1))) return 0;
  return t && t->rank == 2 && bits >= 8 && bits % 8 == 0 && t->dtype != MGOPT_DT_STRING;
}

static mgopt_status mgopt__exp_linear(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "weight"), *b = mgopt_op_operand(op, "bias");
  const char *ins[3];
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_vname(w);
  if (x->type.rank == 2 && (!b || b->type.rank == 1)) {
    ins[2] = b ? mgopt__exp_vname(b) : NULL;
    n = mgopt__exp_simple(E, op, m->onnx, ins, b ? 3 : 2);
    if (!n || !mgopt__exp_aint(E, n, "transB", 1)) return mgopt__exp_nomem(E);
    /* before opset 7 a bias of another shape than Y's needs broadcast = 1 */
    if (b && E->opset < 7 && !mgopt__exp_aint(E, n, "broadcast", 1)) return mgopt__exp_nomem(E);
    return MGOPT_OK;
  }
  {
    /* a constant weight goes out transposed, and alone when nothing else
       reads it (export.c asks mgopt__exp_linear_folds_weight too) */
    int folds = mgopt__exp_linear_folds_weight(op);
    mgopt_tensor *tw = folds ? mgopt__exp_transposed(E, mgopt_value_const(w)) : NULL;
    const char *wt = tw ? mgopt__exp_const(E, ins[1], tw) : folds ? NULL : mgopt__exp_fresh(E, ins[1]);
    const char *mm = b ? mgopt__exp_fresh(E, mgopt__exp_vname(op->outs[0])) : NULL;
    const char *ins2[2];
    mgopt_onnx_node *t;
    if (!wt) return mgopt__exp_nomem(E);
    if (!tw) {
      int64_t perm[2] = {1, 0};
      t = mgopt__exp_node(E, "Transpose", "", NULL);
      if (!t || !mgopt__exp_set_io(E, &t->inputs, &t->ninputs, &ins[1], 1) ||
          !mgopt__exp_set_io(E, &t->outputs, &t->noutputs, &wt, 1) || !mgopt__exp_aints(E, t, "perm", perm, 2))
        return mgopt__exp_nomem(E);
    }
    ins2[0] = ins[0];
    ins2[1] = wt;
    if (!b) return mgopt__exp_done(E, mgopt__exp_simple(E, op, "MatMul", ins2, 2));
    t = mgopt__exp_node(E, "MatMul", "", NULL);
    if (!mm || !t || !mgopt__exp_set_io(E, &t->inputs, &t->ninputs, ins2, 2) ||
        !mgopt__exp_set_io(E, &t->outputs, &t->noutputs, &mm, 1))
      return mgopt__exp_nomem(E);
    ins2[0] = mm;
    ins2[1] = mgopt__exp_vname(b);
    return mgopt__exp_done(E, mgopt__exp_simple(E, op, "Add", ins2, 2));
  }
}

/* ---------------------------------------------------------------- convolutions and pools */

/* Spatial attributes shared by Conv, ConvTranspose and the pools: strides,
   dilations and MIL pad [b0, e0, b1, e1, ...] from ONNX [b0, b1, ..., e0, e1, ...].
   Returns 0 when the auto_pad mode has no exact MIL form. */
static int mgopt__imp_spatial(mgopt__imp *I, mgopt_op *op, int64_t nsp, int with_dil) {
  const int64_t *v = NULL;
  int64_t n, i, *pad;
  const char *pad_type = "custom";
  const mgopt_onnx_attribute *ap = mgopt__imp_attr(I->node, "auto_pad");
  if (ap && !mgopt__imp_streq(ap->s, "NOTSET")) {
    if (mgopt__imp_streq(ap->s, "VALID")) pad_type = "valid";
    else if (mgopt__imp_streq(ap->s, "SAME_UPPER")) pad_type = "same";
    else if (mgopt__imp_streq(ap->s, "SAME_LOWER")) pad_type = "same_lower";
    else return 0;
  }
  n = mgopt__imp_aints(I->node, "strides", &v);
  if (n >= 0 && n != nsp) return 0;
  if (n >= 0 && mgopt_op_set_ints(op, "strides", v, n)) return -1;
  n = mgopt__imp_aints(I->node, "dilations", &v);
  if (n >= 0 && n != nsp) return 0;
  if (n >= 0) {
    if (!with_dil) {
      for (i = 0; i < n; i++)
        if (v[i] != 1) return 0;
    } else if (mgopt_op_set_ints(op, "dilations", v, n)) {
      return -1;
    }
  }
  if (mgopt_op_set_string(op, "pad_type", pad_type)) return -1;
  if (strcmp(pad_type, "custom") == 0) {
    pad = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(2 * nsp + 1), 8);
    if (!pad) return -1;
    n = mgopt__imp_aints(I->node, "pads", &v);
    if (n >= 0 && n != 2 * nsp) return 0;
    for (i = 0; i < nsp; i++) {
      pad[2 * i] = n >= 0 ? v[i] : 0;
      pad[2 * i + 1] = n >= 0 ? v[nsp + i] : 0;
      if (pad[2 * i] < 0 || pad[2 * i + 1] < 0) return 0;
    }
    if (mgopt_op_set_ints(op, "pad", pad, 2 * nsp)) return -1;
  }
  return 1;
}

/* A pad_type ONNX has, with a pad list for custom padding. */
static const char *mgopt__exw_spatial(mgopt_program *p, const mgopt_op *op) {
  const char *pt = mgopt_op_get_string(op, "pad_type", NULL);
  const int64_t *v = NULL;
  int64_t k;
  if (!pt || strcmp(pt, "valid") == 0 || strcmp(pt, "same") == 0 || strcmp(pt, "same_lower") == 0) return NULL;
  if (strcmp(pt, "custom") != 0) return "unknown pad_type";
  k = mgopt_op_get_ints(p, op, "pad", &v);
  return k < 0 || k % 2 || k > 2 * MGOPT_MAX_RANK ? "custom padding without a pad list" : NULL;
}

/* strides, dilations and MIL's pad_type/pad [b0, e0, b1, e1, ...] as ONNX auto_pad/pads [b0, b1, ..., e0, e1, ...] */
static mgopt_status mgopt__exp_spatial(mgopt__exp *E, const mgopt_op *op, mgopt_onnx_node *n, int with_dil) {
  const int64_t *v = NULL;
  int64_t k;
  size_t len = 0;
  const char *pt = mgopt_op_get_string(op, "pad_type", &len);
  if ((k = mgopt_op_get_ints(E->p, op, "strides", &v)) >= 0 && !mgopt__exp_aints(E, n, "strides", v, k))
    return mgopt__exp_nomem(E);
  if (with_dil && (k = mgopt_op_get_ints(E->p, op, "dilations", &v)) >= 0 && !mgopt__exp_aints(E, n, "dilations", v, k))
    return mgopt__exp_nomem(E);
  if (!pt || strcmp(pt, "valid") == 0) {
    if (!mgopt__exp_astr(E, n, "auto_pad", "VALID")) return mgopt__exp_nomem(E);
  } else if (strcmp(pt, "same") == 0) {
    if (!mgopt__exp_astr(E, n, "auto_pad", "SAME_UPPER")) return mgopt__exp_nomem(E);
  } else if (strcmp(pt, "same_lower") == 0) {
    if (!mgopt__exp_astr(E, n, "auto_pad", "SAME_LOWER")) return mgopt__exp_nomem(E);
  } else if (strcmp(pt, "custom") == 0) {
    int64_t i, m, pads[2 * MGOPT_MAX_RANK];
    k = mgopt_op_get_ints(E->p, op, "pad", &v);
    m = k / 2;
    for (i = 0; i < m; i++) {
      pads[i] = v[2 * i];
      pads[m + i] = v[2 * i + 1];
    }
    if (!mgopt__exp_aints(E, n, "pads", pads, k)) return mgopt__exp_nomem(E);
  }
  return MGOPT_OK;
}

/* The canonical op built detached (so a mode without an exact form leaves nothing behind), now named after the node and appended. */
static int mgopt__imp_append(mgopt__imp *I, mgopt_op *op) {
  if (I->node->name.len) op->name = mgopt__imp_intern(I, I->node->name);
  op->outs[0]->name = mgopt__imp_intern(I, I->node->outputs[0]);
  mgopt_op_append(op, I->b);
  return mgopt__imp_done(I, op);
}

/* ConvTranspose's output_padding and output_shape as conv_transpose's pad and
   output_shape (op has the node's spatial attributes already). The output is
   the natural size (in - 1) * stride + (k - 1) * dilation + 1 - pads, and
   output_padding adds that many positions at the end. A given output_shape
   makes the pads: total = natural(no pads) + output_padding - output_shape,
   begin = total - total / 2 and end = total / 2 when total >= 0 (ONNX's rule
   for auto_pad NOTSET), no pads and the output extended at the end when
   total < 0. The positions past the natural size get no input: they hold the
   bias alone. conv_transpose's output_shape holds only an extension by less
   than one stride (its kernel's rule), so a larger one, padding given with
   output_shape, auto_pad other than NOTSET/VALID, or a dim of unknown size
   stays opaque. 1 mapped, 0 opaque, -1 error. */
static int mgopt__imp_convt_shape(mgopt__imp *I, mgopt_op *op, const mgopt_value *x, const mgopt_value *w, int64_t sp) {
  const int64_t *op_pad = NULL, *os = NULL, *st = NULL, *dl = NULL, *pd = NULL;
  int64_t nop = mgopt__imp_aints(I->node, "output_padding", &op_pad), nos = mgopt__imp_aints(I->node, "output_shape", &os);
  int64_t nst = mgopt__imp_aints(I->node, "strides", &st), ndl = mgopt__imp_aints(I->node, "dilations", &dl), i;
  int64_t pad[2 * MGOPT_MAX_RANK], target[MGOPT_MAX_RANK];
  const char *pt = mgopt_op_get_string(op, "pad_type", NULL);
  int extend = 0;
  if (nop < 0 && nos < 0) return 1;
  if (sp < 1 || sp > MGOPT_MAX_RANK || !pt || (strcmp(pt, "custom") != 0 && strcmp(pt, "valid") != 0)) return 0;
  if ((nop >= 0 && nop != sp) || (nos >= 0 && nos != sp && nos != sp + 2)) return 0;
  if (strcmp(pt, "custom") == 0 && mgopt_op_get_ints(I->p, op, "pad", &pd) != 2 * sp) return 0;
  for (i = 0; i < sp; i++) {
    mgopt_dim in = x->type.dims[2 + i], kk = w->type.dims[2 + i];
    int64_t s = nst >= 0 ? st[i] : 1, d = ndl >= 0 ? dl[i] : 1, opd = nop >= 0 ? op_pad[i] : 0, nat0, nat;
    int64_t pb = pd ? pd[2 * i] : 0, pe = pd ? pd[2 * i + 1] : 0;
    if (!mgopt_dim_is_static(in) || !mgopt_dim_is_static(kk) || in.v < 1 || in.v > ((int64_t)1 << 30) || kk.v < 1 ||
        kk.v > ((int64_t)1 << 30) || s < 1 || s > ((int64_t)1 << 30) || d < 1 || d > ((int64_t)1 << 30) || opd < 0 ||
        opd >= s)
      return 0;
    nat0 = (in.v - 1) * s + (kk.v - 1) * d + 1;
    if (nos >= 0) {
      int64_t o = os[nos - sp + i], total;
      if (pb || pe || o < 1 || o > ((int64_t)1 << 40)) return 0;
      total = nat0 + opd - o;
      if (total >= 0) {
        pb = total - total / 2;
        pe = total / 2;
      }
      nat = nat0 - pb - pe;
      if (nat < 1 || o < nat || o - nat >= s) return 0;
      target[i] = o;
    } else {
      nat = nat0 - pb - pe;
      if (nat < 1) return 0;
      target[i] = nat + opd;
    }
    pad[2 * i] = pb;
    pad[2 * i + 1] = pe;
    if (target[i] != nat) extend = 1;
  }
  if (nos >= 0 && nos == sp + 2) {
    mgopt_dim n0 = x->type.dims[0];
    if (!mgopt_dim_is_static(n0) || os[0] != n0.v) return 0;
    if (!mgopt_dim_is_static(w->type.dims[1]) || os[1] != w->type.dims[1].v * mgopt__imp_aint(I->node, "group", 1))
      return 0;
  }
  if (mgopt_op_set_string(op, "pad_type", "custom") || mgopt_op_set_ints(op, "pad", pad, 2 * sp)) return -1;
  if (extend && mgopt_op_set_ints(op, "output_shape", target, sp)) return -1;
  return 1;
}

static int mgopt__imp_conv(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *w = mgopt__imp_in(I, 1), *bias = mgopt__imp_in(I, 2);
  int r = mgopt__imp_rank(x), k;
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || !w || w->type.dtype != x->type.dtype || r < 3 || mgopt__imp_rank(w) != r) return 0;
  if (bias && bias->type.dtype != x->type.dtype) return 0;
  {
    const int64_t *ks = NULL;
    int64_t nk = mgopt__imp_aints(I->node, "kernel_shape", &ks), i;
    if (nk >= 0) {
      if (nk != r - 2) return 0;
      for (i = 0; i < nk; i++)
        if (!mgopt_dim_is_static(w->type.dims[i + 2]) || w->type.dims[i + 2].v != ks[i]) return 0;
    }
  }
  /* build detached first so a mode without an exact form leaves nothing behind */
  op = mgopt_op_new(I->p, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op) return -1;
  k = mgopt__imp_spatial(I, op, r - 2, 1);
  if (k <= 0) return k;
  if (m->kind == MGOPT_OP_conv_transpose && (k = mgopt__imp_convt_shape(I, op, x, w, r - 2)) <= 0) return k;
  if (mgopt_op_set_int(op, "groups", mgopt__imp_aint(I->node, "group", 1))) return -1;
  if (mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "weight", w)) return -1;
  if (bias && mgopt_op_set_operand(op, "bias", bias)) return -1;
  return mgopt__imp_append(I, op);
}

/* conv_transpose's output_shape as ONNX's output_padding: per spatial dim,
   how far output_shape extends the natural size (less than one stride, with
   custom or valid padding and static sizes). The count of spatial dims, 0
   without an extension, -1 when output_shape has no such form. */
static int64_t mgopt__exp_convt_extra(mgopt_program *p, const mgopt_op *op, int64_t *extra) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "weight");
  const int64_t *os = NULL, *st = NULL, *dl = NULL, *pd = NULL;
  int64_t nos, sp, i, nst, ndl, npd = -1, any = 0;
  const char *pt = mgopt_op_get_string(op, "pad_type", NULL);
  if (!mgopt_op_attr(op, "output_shape")) return 0;
  {
    /* output_shape restates the output's static shape; same padding gives that shape alone */
    const mgopt_type *ot = &op->outs[0]->type;
    int64_t k = mgopt_op_get_ints(p, op, "output_shape", &os), q;
    if (k < 0 || !mgopt_type_is_static(ot) || k > ot->rank) return -1;
    for (q = 0; q < k; q++)
      if (os[q] != ot->dims[ot->rank - k + q].v) return -1;
    if (pt && (strcmp(pt, "same") == 0 || strcmp(pt, "same_lower") == 0)) return 0;
  }
  if (!x || !w || x->type.rank < 3 || x->type.rank > MGOPT_MAX_RANK || w->type.rank != x->type.rank) return -1;
  sp = x->type.rank - 2;
  nos = mgopt_op_get_ints(p, op, "output_shape", &os);
  if (nos != sp && nos != sp + 2) return -1;
  if (pt && strcmp(pt, "valid") != 0 && strcmp(pt, "custom") != 0) return -1;
  if (pt && strcmp(pt, "custom") == 0 && (npd = mgopt_op_get_ints(p, op, "pad", &pd)) != 2 * sp) return -1;
  nst = mgopt_op_get_ints(p, op, "strides", &st);
  ndl = mgopt_op_get_ints(p, op, "dilations", &dl);
  if ((nst >= 0 && nst != sp) || (ndl >= 0 && ndl != sp)) return -1;
  if (nos == sp + 2) {
    const mgopt_type *ot = &op->outs[0]->type;
    if (ot->rank != x->type.rank || !mgopt_dim_is_static(ot->dims[0]) || !mgopt_dim_is_static(ot->dims[1]) ||
        os[0] != ot->dims[0].v || os[1] != ot->dims[1].v)
      return -1;
  }
  for (i = 0; i < sp; i++) {
    mgopt_dim in = x->type.dims[2 + i], kk = w->type.dims[2 + i];
    int64_t s = nst >= 0 ? st[i] : 1, d = ndl >= 0 ? dl[i] : 1, nat, o = os[nos - sp + i];
    if (!mgopt_dim_is_static(in) || !mgopt_dim_is_static(kk) || in.v < 1 || in.v > ((int64_t)1 << 30) || kk.v < 1 ||
        kk.v > ((int64_t)1 << 30) || s < 1 || s > ((int64_t)1 << 30) || d < 1 || d > ((int64_t)1 << 30))
      return -1;
    nat = (in.v - 1) * s + (kk.v - 1) * d + 1 - (npd > 0 ? pd[2 * i] + pd[2 * i + 1] : 0);
    if (o < nat || o - nat >= s) return -1;
    extra[i] = o - nat;
    any |= extra[i];
  }
  return any ? sp : 0;
}

/* A bias is Conv's (and ConvTranspose's) third input B. */
static const char *mgopt__exw_conv(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(m);
  if (!mgopt_op_operand(op, "x") || !mgopt_op_operand(op, "weight")) return "an operand is missing";
  if (mgopt__exw_fused_act(op)) return mgopt__exw_fused_act(op);
  if (op->kind == MGOPT_OP_conv_transpose && mgopt_op_attr(op, "output_shape")) {
    /* an output_shape that extends the natural size by less than a stride
       is written as output_padding; one that only restates it is left out */
    int64_t extra[MGOPT_MAX_RANK];
    if (mgopt__exp_convt_extra(p, op, extra) < 0) return "output_shape";
  }
  return mgopt__exw_spatial(p, op);
}

static mgopt_status mgopt__exp_conv(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[3];
  mgopt_onnx_node *n;
  mgopt_status s;
  int64_t extra[MGOPT_MAX_RANK], ne = op->kind == MGOPT_OP_conv_transpose ? mgopt__exp_convt_extra(E->p, op, extra) : 0;
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_in(op, "weight");
  ins[2] = mgopt__exp_in(op, "bias");
  n = mgopt__exp_simple(E, op, m->onnx, ins, ins[2] ? 3 : 2);
  if (!n) return mgopt__exp_nomem(E);
  if ((s = mgopt__exp_spatial(E, op, n, 1)) != MGOPT_OK) return s;
  if (!mgopt__exp_aint(E, n, "group", mgopt_op_get_int(op, "groups", 1))) return mgopt__exp_nomem(E);
  if (ne > 0 && !mgopt__exp_aints(E, n, "output_padding", extra, ne)) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

static int mgopt__imp_pool(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int r = mgopt__imp_rank(x), k;
  const int64_t *ks = NULL;
  int64_t nk = mgopt__imp_aints(I->node, "kernel_shape", &ks);
  mgopt_op *op;
  int is_max = m->kind == MGOPT_OP_max_pool;
  if (!mgopt__imp_is_float(x) || r < 3 || nk != r - 2 || mgopt__imp_nout(I->node) != 1) return 0;
  if (is_max && mgopt__imp_aint(I->node, "storage_order", 0) != 0) return 0;
  op = mgopt_op_new(I->p, is_max ? "max_pool" : "avg_pool", 1, 0);
  if (!op) return -1;
  k = mgopt__imp_spatial(I, op, r - 2, 0);
  if (k <= 0) return k;
  if (mgopt_op_set_ints(op, "kernel_sizes", ks, nk) ||
      mgopt_op_set_bool(op, "ceil_mode", mgopt__imp_aint(I->node, "ceil_mode", 0) != 0))
    return -1;
  if (!is_max && mgopt_op_set_bool(op, "exclude_padding_from_average",
                                   mgopt__imp_aint(I->node, "count_include_pad", 0) == 0))
    return -1;
  if (mgopt_op_set_operand(op, "x", x)) return -1;
  return mgopt__imp_append(I, op);
}

static const char *mgopt__exw_pool(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  const int64_t *v = NULL;
  MGOPT__UNUSED(m);
  if (mgopt_op_get_ints(p, op, "kernel_sizes", &v) < 0) return "no kernel_sizes";
  return mgopt__exw_spatial(p, op);
}

static mgopt_status mgopt__exp_pool(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  const int64_t *v = NULL;
  int64_t k = mgopt_op_get_ints(E->p, op, "kernel_sizes", &v);
  mgopt_onnx_node *n;
  mgopt_status s;
  n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_aints(E, n, "kernel_shape", v, k)) return mgopt__exp_nomem(E);
  if ((s = mgopt__exp_spatial(E, op, n, 0)) != MGOPT_OK) return s;
  if (mgopt_op_get_bool(op, "ceil_mode", 0) && !mgopt__exp_aint(E, n, "ceil_mode", 1)) return mgopt__exp_nomem(E);
  if (op->kind == MGOPT_OP_avg_pool && !mgopt_op_get_bool(op, "exclude_padding_from_average", 0) &&
      !mgopt__exp_aint(E, n, "count_include_pad", 1))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* GlobalAveragePool, GlobalMaxPool: reduce_mean, reduce_max over the spatial dims, kept. */
static int mgopt__imp_global_pool(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int r = mgopt__imp_rank(x);
  int64_t axes[MGOPT_MAX_RANK], i;
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || r < 3 || r > MGOPT_MAX_RANK) return 0;
  for (i = 2; i < r; i++) axes[i - 2] = i;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_ints(op, "axes", axes, r - 2) ||
      mgopt_op_set_bool(op, "keep_dims", 1))
    return -1;
  op->flags |= MGOPT_OP_ONNX_GLOBAL_POOL; /* written back as the global pool it was */
  return mgopt__imp_done(I, op);
}

/* ---------------------------------------------------------------- normalizations */

static int mgopt__imp_batchnorm(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *g = mgopt__imp_in(I, 1), *b = mgopt__imp_in(I, 2), *mean = mgopt__imp_in(I, 3),
              *v = mgopt__imp_in(I, 4);
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || !g || !b || !mean || !v || mgopt__imp_nout(I->node) != 1) return 0;
  if (mgopt__imp_aint(I->node, "training_mode", 0) || (m->since < 7 && mgopt__imp_aint(I->node, "is_test", 0) == 0))
    return 0;
  if (g->type.dtype != x->type.dtype || b->type.dtype != x->type.dtype || mean->type.dtype != x->type.dtype ||
      v->type.dtype != x->type.dtype || mgopt__imp_rank(x) < 2)
    return 0;
  op = mgopt__imp_op(I, "batch_norm", 1, 0);
  /* (double)(float): the fp32 default, rounded even where float constants keep
     double precision (FLT_EVAL_METHOD 1: s390x at -std=c99) */
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "mean", mean) ||
      mgopt_op_set_operand(op, "variance", v) || mgopt_op_set_operand(op, "gamma", g) ||
      mgopt_op_set_operand(op, "beta", b) ||
      mgopt_op_set_float(op, "epsilon", mgopt__imp_afloat(I->node, "epsilon", (double)(float)1e-5f)))
    return -1;
  return mgopt__imp_done(I, op);
}

/* BatchNormalization and InstanceNormalization need their scale and offset:
   a gamma or beta the op leaves out (1 and 0) is written as a constant of
   the channel count, known from x's dim 1 or a 1-d operand. */
static int64_t mgopt__exp_channels(const mgopt_op *op) {
  static const char *const slots[4] = {"mean", "variance", "gamma", "beta"};
  mgopt_value *x = mgopt_op_operand(op, "x");
  int k;
  if (x && x->type.rank >= 2 && mgopt_dim_is_static(x->type.dims[1])) return x->type.dims[1].v;
  for (k = 0; k < 4; k++) {
    mgopt_value *v = mgopt_op_operand(op, slots[k]);
    if (v && v->type.rank == 1 && mgopt_dim_is_static(v->type.dims[0])) return v->type.dims[0].v;
  }
  return -1;
}

static const char *mgopt__exw_scale_offset(const mgopt_op *op) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  if (!x) return "an operand is missing";
  if (x->type.rank >= 0 && x->type.rank < (op->kind == MGOPT_OP_batch_norm ? 2 : 3)) return "an input of too low a rank";
  if ((!mgopt_op_operand(op, "gamma") || !mgopt_op_operand(op, "beta")) &&
      (mgopt__exp_channels(op) < 0 || !mgopt_dtype_is_float((mgopt_dtype)x->type.dtype)))
    return "gamma or beta left out, with an unknown channel count";
  return NULL;
}

/* The operand in `slot`, or a constant of x's dtype and `shape` filled with v in its place. */
static const char *mgopt__exp_or_filled(mgopt__exp *E, const mgopt_op *op, const char *slot, int32_t rank,
                                        const int64_t *shape, double v) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  mgopt_tensor *t;
  int64_t i;
  char base[64];
  if (mgopt_op_operand(op, slot)) return mgopt__exp_in(op, slot);
  t = mgopt_tensor_new(E->p, (mgopt_dtype)x->type.dtype, rank, shape);
  if (!t) return NULL;
  for (i = 0; i < t->numel; i++) mgopt_tensor_set_f64(t, i, v);
  snprintf(base, sizeof base, "%.40s_%s", mgopt__exp_vname(op->outs[0]), slot);
  return mgopt__exp_const(E, base, t);
}

static const char *mgopt__exw_batchnorm(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!mgopt_op_operand(op, "mean") || !mgopt_op_operand(op, "variance")) return "an operand is missing";
  return mgopt__exw_scale_offset(op);
}

static mgopt_status mgopt__exp_batchnorm(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[5];
  int64_t c = mgopt__exp_channels(op);
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_or_filled(E, op, "gamma", 1, &c, 1.0);
  ins[2] = mgopt__exp_or_filled(E, op, "beta", 1, &c, 0.0);
  ins[3] = mgopt__exp_in(op, "mean");
  ins[4] = mgopt__exp_in(op, "variance");
  if (!ins[1] || !ins[2]) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, ins, 5);
  if (!n || !mgopt__exp_afloat(E, n, "epsilon", mgopt_op_get_float(op, "epsilon", 1e-5))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

static int mgopt__imp_instancenorm(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *g = mgopt__imp_in(I, 1), *b = mgopt__imp_in(I, 2);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || !g || !b || mgopt__imp_rank(x) < 3 || g->type.dtype != x->type.dtype) return 0;
  op = mgopt__imp_op(I, "instance_norm", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "gamma", g) ||
      mgopt_op_set_operand(op, "beta", b) ||
      mgopt_op_set_float(op, "epsilon", mgopt__imp_afloat(I->node, "epsilon", (double)(float)1e-5f)))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_instancenorm(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt__exw_scale_offset(op);
}

static mgopt_status mgopt__exp_instancenorm(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[3];
  int64_t c = mgopt__exp_channels(op);
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_or_filled(E, op, "gamma", 1, &c, 1.0);
  ins[2] = mgopt__exp_or_filled(E, op, "beta", 1, &c, 0.0);
  if (!ins[1] || !ins[2]) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, ins, 3);
  if (!n || !mgopt__exp_afloat(E, n, "epsilon", mgopt_op_get_float(op, "epsilon", 1e-5))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

static int mgopt__imp_layernorm(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *g = mgopt__imp_in(I, 1), *b = mgopt__imp_in(I, 2);
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", -1), axes[64], i, n = 0;
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || !g || r < 1 || r > 64 || mgopt__imp_nout(I->node) != 1) return 0;
  if (mgopt__imp_aint(I->node, "stash_type", 1) != 1) return 0;
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return 0;
  for (i = axis; i < r; i++) axes[n++] = i;
  /* gamma and beta must cover exactly the normalised dims (no broadcasting from a lower rank) */
  if (mgopt__imp_rank(g) != n || (b && mgopt__imp_rank(b) != n)) return 0;
  op = mgopt__imp_op(I, "layer_norm", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "gamma", g) ||
      mgopt_op_set_ints(op, "axes", axes, n) ||
      mgopt_op_set_float(op, "epsilon", mgopt__imp_afloat(I->node, "epsilon", (double)(float)1e-5f)))
    return -1;
  if (b && mgopt_op_set_operand(op, "beta", b)) return -1;
  return mgopt__imp_done(I, op);
}

/* LayerNormalization normalizes the dims from `axis` on: layer_norm's axes
   must be the trailing dims, in order (no axes: all of them). Its scale is
   required: a gamma the op leaves out is written as ones over those dims. */
static int64_t mgopt__exp_layernorm_axis(mgopt_program *p, const mgopt_op *op) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  int64_t r = x ? x->type.rank : -1, j, k;
  const int64_t *v = NULL;
  if (r < 1) return -1;
  k = mgopt_op_get_ints(p, op, "axes", &v);
  if (k < 0) return 0;
  if (k < 1 || k > r) return -1;
  for (j = 0; j < k; j++)
    if ((v[j] < 0 ? v[j] + r : v[j]) != r - k + j) return -1;
  return r - k;
}

static const char *mgopt__exw_layernorm(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  int64_t axis = mgopt__exp_layernorm_axis(p, op), j;
  MGOPT__UNUSED(m);
  if (axis < 0) return "axes not the trailing dims";
  if (!mgopt_op_operand(op, "gamma")) {
    if (!mgopt_dtype_is_float((mgopt_dtype)x->type.dtype)) return "gamma left out";
    for (j = axis; j < x->type.rank; j++)
      if (!mgopt_dim_is_static(x->type.dims[j])) return "gamma left out, over dims of unknown size";
  }
  return NULL;
}

static mgopt_status mgopt__exp_layernorm(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  int64_t axis = mgopt__exp_layernorm_axis(E->p, op), shape[MGOPT_MAX_RANK], j;
  const char *ins[3];
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  for (j = axis; j < x->type.rank && j - axis < MGOPT_MAX_RANK; j++) shape[j - axis] = x->type.dims[j].v;
  ins[1] = mgopt__exp_or_filled(E, op, "gamma", (int32_t)(x->type.rank - axis), shape, 1.0);
  ins[2] = mgopt__exp_in(op, "beta");
  if (!ins[1]) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, ins, ins[2] ? 3 : 2);
  if (!n || !mgopt__exp_aint(E, n, "axis", axis) ||
      !mgopt__exp_afloat(E, n, "epsilon", mgopt_op_get_float(op, "epsilon", 1e-5)))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- Softmax

   Before opset 13 the input is coerced to 2-d at axis (default 1): the same
   as MIL's softmax only over the last axis. From 13 on, any axis (default -1). */

static int mgopt__imp_softmax(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", m->since >= 13 ? -1 : 1);
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || r < 1) return 0;
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return 0;
  if (m->since < 13 && axis != r - 1) return 0;
  op = mgopt__imp_op(I, "softmax", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_int(op, "axis", axis)) return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_softmax(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  int64_t axis = mgopt_op_get_int(op, "axis", -1);
  int r = op->outs[0]->type.rank;
  MGOPT__UNUSED(p);
  if (m->since < 13 && !(axis == -1 || (r > 0 && axis == r - 1))) return "softmax over an inner axis before opset 13";
  return NULL;
}

static mgopt_status mgopt__exp_softmax(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  int64_t axis = mgopt_op_get_int(op, "axis", -1);
  mgopt_onnx_node *n;
  n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_aint(E, n, "axis", axis)) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- Resize, Upsample

   MIL's four resampling ops over the last two dims, each the exact form of
   some ONNX modes (kernels/resample.c gives their coordinates):
     scales given, nearest, asymmetric + floor        upsample_nearest_neighbor
       (Upsample 7-9 and Resize 10: scales >= 1, where their nearest is floor)
     scales given, linear, half_pixel / align_corners upsample_bilinear(align_corners)
     sizes given, nearest, asymmetric + floor         resize_nearest_neighbor
     sizes given, linear, asymmetric / half_pixel /   resize_bilinear(DEFAULT /
       align_corners                                    UNALIGN_CORNERS / STRICT_ALIGN_CORNERS)
   pytorch_half_pixel is half_pixel when no resampled output dim is 1.
   Scales must give whole output sizes (in * scale integral): MIL's bilinear
   grid takes its spacing from the sizes, ONNX's from the scale, and these
   agree only then; a nearest resize by sizes must enlarge each dim by a whole
   factor (ONNX computes i / (out / in) in floating point, which is floor(i *
   in / out) for certain only then). The leading dims keep their size
   (scale 1). Everything else stays opaque: cubic, the other coordinate
   modes and nearest modes, antialias, exclude_outside, axes, a
   keep_aspect_ratio_policy other than stretch, scales or sizes known only at
   run time. Export writes the form the op came from: scales for upsample_*,
   sizes for resize_*, with the modes above. */

#define MGOPT__RS_BIG ((int64_t)1 << 30)

/* 1 if in * s is a whole number in [1, 2^30] (*out set). */
static int mgopt__rs_whole(int64_t in, double s, int64_t *out) {
  double v = (double)in * s;
  if (!(v >= 1.0) || v > (double)MGOPT__RS_BIG || v != floor(v)) return 0;
  *out = (int64_t)v;
  return 1;
}

static int mgopt__imp_resize(mgopt__imp *I, const mgopt__onnx_map *m) {
  const mgopt_onnx_node *n = I->node;
  mgopt_value *x = mgopt__imp_in(I, 0), *sv = NULL, *zv = NULL;
  int r = mgopt__imp_rank(x), linear, j, by_sizes = 0;
  double sc[MGOPT_MAX_RANK];
  int64_t out[2], in[2];
  const char *type, *ctm = "asymmetric";
  mgopt_op *op;
  mgopt_tensor *t;
  if (!mgopt__imp_is_float(x) || r < 3 || r > MGOPT_MAX_RANK || mgopt__imp_nout(n) != 1) return 0;
  for (j = 0; j < 2; j++) {
    mgopt_dim d = x->type.dims[r - 2 + j];
    if (!mgopt_dim_is_static(d) || d.v < 1 || d.v > MGOPT__RS_BIG) return 0;
    in[j] = d.v;
  }
  if (mgopt__imp_astr(n, "mode", "nearest") || !mgopt__imp_attr(n, "mode")) linear = 0;
  else if (mgopt__imp_astr(n, "mode", "linear") || (I->opset < 10 && mgopt__imp_astr(n, "mode", "bilinear"))) linear = 1;
  else return 0;
  if (I->opset >= 11) {
    const mgopt_onnx_attribute *a = mgopt__imp_attr(n, "coordinate_transformation_mode");
    if (a && a->type != MGOPT_ONNX_ATTR_STRING) return 0;
    ctm = "half_pixel";
    if (a) {
      static const char *const modes[4] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"};
      int k;
      for (k = 0; k < 4 && !mgopt__imp_streq(a->s, modes[k]); k++) {
      }
      if (k == 4) return 0;
      ctm = modes[k];
    }
    if (!linear && (strcmp(ctm, "asymmetric") != 0 || !mgopt__imp_astr(n, "nearest_mode", "floor"))) return 0;
    if (mgopt__imp_aint(n, "exclude_outside", 0) || mgopt__imp_aint(n, "antialias", 0) || mgopt__imp_attr(n, "axes"))
      return 0;
    if (mgopt__imp_attr(n, "keep_aspect_ratio_policy") && !mgopt__imp_astr(n, "keep_aspect_ratio_policy", "stretch"))
      return 0;
    zv = mgopt__imp_in(I, 3);
    sv = mgopt__imp_in(I, 2);
    if (zv) {
      mgopt_tensor *st = sv ? mgopt_value_const(sv) : NULL;
      if (sv && (!st || st->numel != 0)) return 0; /* scales and sizes both given */
      by_sizes = 1;
    }
  } else if (I->opset >= 9) {
    sv = mgopt__imp_in(I, 1);
  }
  if (linear && I->opset < 11) return 0; /* Upsample and Resize 10 interpolate asymmetrically */
  if (by_sizes) {
    t = mgopt_value_const(zv);
    if (!t || t->numel != r || !mgopt_dtype_is_int((mgopt_dtype)t->dtype) || !mgopt_tensor_data(I->p, t)) return 0;
    for (j = 0; j < r - 2; j++)
      if (!mgopt_dim_is_static(x->type.dims[j]) || mgopt_tensor_get_i64(t, j) != x->type.dims[j].v) return 0;
    for (j = 0; j < 2; j++) {
      out[j] = mgopt_tensor_get_i64(t, r - 2 + j);
      if (out[j] < 1 || out[j] > MGOPT__RS_BIG) return 0;
      if (!linear && out[j] % in[j] != 0) return 0;
    }
  } else {
    if (I->opset < 9) {
      const mgopt_onnx_attribute *a = mgopt__imp_attr(n, "scales");
      if (!a || a->type != MGOPT_ONNX_ATTR_FLOATS || a->nfloats != r) return 0;
      for (j = 0; j < r; j++) sc[j] = (double)a->floats[j];
    } else {
      t = sv ? mgopt_value_const(sv) : NULL;
      if (!t || t->numel != r || !mgopt_dtype_is_float((mgopt_dtype)t->dtype) || !mgopt_tensor_data(I->p, t)) return 0;
      for (j = 0; j < r; j++) sc[j] = mgopt_tensor_get_f64(t, j);
    }
    for (j = 0; j < r - 2; j++)
      if (sc[j] != 1.0) return 0;
    for (j = 0; j < 2; j++) {
      if (!mgopt__rs_whole(in[j], sc[r - 2 + j], &out[j])) return 0;
      if (I->opset < 11 && sc[r - 2 + j] < 1.0) return 0;
    }
  }
  if (strcmp(ctm, "pytorch_half_pixel") == 0)
    for (j = 0; j < 2; j++)
      if (out[j] == 1 && in[j] != 1) return 0;
  if (!linear) type = by_sizes ? "resize_nearest_neighbor" : "upsample_nearest_neighbor";
  else type = by_sizes ? "resize_bilinear" : "upsample_bilinear";
  if (!by_sizes && linear && strcmp(ctm, "asymmetric") == 0) return 0;
  op = mgopt__imp_op(I, type, 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x)) return -1;
  if (by_sizes) {
    if (mgopt_op_set_int(op, "target_size_height", out[0]) || mgopt_op_set_int(op, "target_size_width", out[1])) return -1;
    if (linear && mgopt_op_set_string(op, "sampling_mode", strcmp(ctm, "align_corners") == 0 ? "STRICT_ALIGN_CORNERS"
                                                            : strcmp(ctm, "asymmetric") == 0 ? "DEFAULT"
                                                                                             : "UNALIGN_CORNERS"))
      return -1;
  } else {
    if (mgopt_op_set_float(op, "scale_factor_height", sc[r - 2]) || mgopt_op_set_float(op, "scale_factor_width", sc[r - 1]))
      return -1;
    if (linear && mgopt_op_set_bool(op, "align_corners", strcmp(ctm, "align_corners") == 0)) return -1;
  }
  MGOPT__UNUSED(m);
  return mgopt__imp_done(I, op);
}

/* What the export writes for `op` at m's opset: the ONNX modes, the output
   sizes of the two resampled dims (*out) and their input sizes (*in). A
   reason when no form is exact, NULL when one is. */
static const char *mgopt__exw_resample(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  int r, j, up = op->kind == MGOPT_OP_upsample_nearest_neighbor || op->kind == MGOPT_OP_upsample_bilinear;
  MGOPT__UNUSED(p);
  if (!x) return "an operand is missing";
  r = x->type.rank;
  if (r < 3 || r > MGOPT_MAX_RANK) return "an input of unknown rank";
  if (m->since < 11 && op->kind != MGOPT_OP_upsample_nearest_neighbor) return "Resize before opset 11 interpolates asymmetrically";
  for (j = 0; j < 2; j++) {
    mgopt_dim d = x->type.dims[r - 2 + j];
    int64_t o;
    if (!mgopt_dim_is_static(d) || d.v < 1 || d.v > MGOPT__RS_BIG) return "a resampled dim of unknown size";
    if (up) {
      double s = mgopt_op_get_float(op, j ? "scale_factor_width" : "scale_factor_height", 1.0);
      if ((double)(float)s != s) return "a scale factor that is not a float";
      if (!mgopt__rs_whole(d.v, s, &o)) return "a scale factor that does not give a whole size";
      if (m->since < 11 && s < 1.0) return "a nearest downsampling before opset 11";
    } else {
      o = mgopt_op_get_int(op, j ? "target_size_width" : "target_size_height", 1);
      if (op->kind == MGOPT_OP_resize_nearest_neighbor && o % d.v != 0) return "a nearest resize by a fraction";
      if (op->kind == MGOPT_OP_resize_bilinear && o == 1) {
        const char *sm = mgopt_op_get_string(op, "sampling_mode", NULL);
        if (sm && strcmp(sm, "ALIGN_CORNERS") == 0) return "ALIGN_CORNERS to a size of 1";
      }
    }
  }
  if (!up)
    for (j = 0; j < r - 2; j++)
      if (!mgopt_dim_is_static(x->type.dims[j])) return "a leading dim of unknown size";
  if (op->kind == MGOPT_OP_resize_bilinear) {
    const char *sm = mgopt_op_get_string(op, "sampling_mode", NULL);
    if (sm && strcmp(sm, "OFFSET_CORNERS") == 0) return "OFFSET_CORNERS";
  }
  return NULL;
}

static mgopt_status mgopt__exp_resample(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  int r = x->type.rank, j, up = op->kind == MGOPT_OP_upsample_nearest_neighbor || op->kind == MGOPT_OP_upsample_bilinear;
  int linear = op->kind == MGOPT_OP_upsample_bilinear || op->kind == MGOPT_OP_resize_bilinear;
  const char *ins[4], *base = mgopt__exp_vname(op->outs[0]);
  int64_t nin = 1, shape0 = 0;
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = ins[2] = ins[3] = "";
  if (E->opset >= 11 && E->opset < 13) {
    /* roi and scales are required inputs there: empty when unused */
    mgopt_tensor *e = mgopt_tensor_new(E->p, MGOPT_DT_FP32, 1, &shape0);
    if (!e || !(ins[1] = mgopt__exp_const(E, "resize_roi", e))) return mgopt__exp_nomem(E);
    if (!up && !(ins[2] = mgopt__exp_const(E, "resize_scales", e))) return mgopt__exp_nomem(E);
  }
  if (up) {
    int64_t rr = r;
    mgopt_tensor *t = mgopt_tensor_new(E->p, MGOPT_DT_FP32, 1, &rr);
    char nm[96];
    if (!t) return mgopt__exp_nomem(E);
    for (j = 0; j < r; j++) mgopt_tensor_set_f64(t, j, 1.0);
    mgopt_tensor_set_f64(t, r - 2, mgopt_op_get_float(op, "scale_factor_height", 1.0));
    mgopt_tensor_set_f64(t, r - 1, mgopt_op_get_float(op, "scale_factor_width", 1.0));
    snprintf(nm, sizeof nm, "%.80s_scales", base);
    if (E->opset >= 9) {
      const char *sc = mgopt__exp_const(E, nm, t);
      if (!sc) return mgopt__exp_nomem(E);
      if (E->opset >= 11) ins[2] = sc, nin = 3;
      else ins[1] = sc, nin = 2;
    }
    n = mgopt__exp_simple(E, op, m->onnx, ins, nin);
    if (!n) return mgopt__exp_nomem(E);
    if (E->opset < 9) {
      float f[MGOPT_MAX_RANK];
      for (j = 0; j < r; j++) f[j] = (float)mgopt_tensor_get_f64(t, j);
      if (!mgopt__exp_afloats(E, n, "scales", f, r)) return mgopt__exp_nomem(E);
    }
  } else {
    int64_t sz[MGOPT_MAX_RANK];
    char nm[96];
    for (j = 0; j < r - 2; j++) sz[j] = x->type.dims[j].v;
    sz[r - 2] = mgopt_op_get_int(op, "target_size_height", 1);
    sz[r - 1] = mgopt_op_get_int(op, "target_size_width", 1);
    snprintf(nm, sizeof nm, "%.80s_sizes", base);
    if (!(ins[3] = mgopt__exp_i64_const(E, nm, sz, r))) return mgopt__exp_nomem(E);
    n = mgopt__exp_simple(E, op, m->onnx, ins, 4);
    if (!n) return mgopt__exp_nomem(E);
  }
  if (!mgopt__exp_astr(E, n, "mode", linear ? "linear" : "nearest")) return mgopt__exp_nomem(E);
  if (E->opset >= 11) {
    const char *ctm = "asymmetric";
    if (op->kind == MGOPT_OP_upsample_bilinear) {
      ctm = mgopt_op_get_bool(op, "align_corners", 1) ? "align_corners" : "half_pixel";
    } else if (op->kind == MGOPT_OP_resize_bilinear) {
      const char *sm = mgopt_op_get_string(op, "sampling_mode", NULL);
      ctm = !sm || strcmp(sm, "DEFAULT") == 0 ? "asymmetric" : strcmp(sm, "UNALIGN_CORNERS") == 0 ? "half_pixel" : "align_corners";
    }
    if (!mgopt__exp_astr(E, n, "coordinate_transformation_mode", ctm)) return mgopt__exp_nomem(E);
    if (!linear && !mgopt__exp_astr(E, n, "nearest_mode", "floor")) return mgopt__exp_nomem(E);
  }
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- Einsum

   Einsum (opset 12 on) is einsum with ONNX's equation language as it is
   (core/infer/reduce.c reads it): every operand of one dtype, known ranks,
   numeric dtypes the kernel computes (floats, integers of 8 bits or more). */

static int mgopt__imp_einsum(mgopt__imp *I, const mgopt__onnx_map *m) {
  int64_t n = I->node->ninputs, i;
  const mgopt_onnx_attribute *a = mgopt__imp_attr(I->node, "equation");
  mgopt_value *vals[MGOPT__EINSUM_MAX_OPS];
  int32_t ranks[MGOPT__EINSUM_MAX_OPS];
  mgopt__einsum e;
  mgopt_op *op;
  char eq[256];
  MGOPT__UNUSED(m);
  if (n < 1 || n > MGOPT__EINSUM_MAX_OPS || !a || a->type != MGOPT_ONNX_ATTR_STRING || a->s.len >= sizeof eq ||
      mgopt__imp_nout(I->node) != 1)
    return 0;
  for (i = 0; i < n; i++) {
    vals[i] = mgopt__imp_in(I, i);
    if (!vals[i] || vals[i]->type.kind != MGOPT_TYPE_TENSOR || vals[i]->type.dtype != vals[0]->type.dtype ||
        vals[i]->type.rank < 0)
      return 0;
    ranks[i] = vals[i]->type.rank;
  }
  if (!mgopt__imp_is_float(vals[0]) && !(mgopt_dtype_is_int((mgopt_dtype)vals[0]->type.dtype) &&
                                        mgopt_dtype_bits((mgopt_dtype)vals[0]->type.dtype) >= 8))
    return 0;
  if (a->s.len) memcpy(eq, a->s.ptr, a->s.len);
  eq[a->s.len] = 0;
  if (!mgopt__einsum_parse(eq, a->s.len, (int32_t)n, ranks, &e)) return 0;
  op = mgopt__imp_op(I, "einsum", 1, 0);
  if (!op || mgopt_op_set_operand_list(op, "values", vals, (int32_t)n) || mgopt_op_set_string(op, "equation", eq))
    return -1;
  return mgopt__imp_done(I, op);
}

static mgopt_status mgopt__exp_einsum(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  int32_t si = mgopt_op_slot_index(op, "values"), i;
  const char **vals = (const char **)mgopt_program_alloc(E->p, sizeof(char *) * (size_t)(op->slots[si].n + 1), 8);
  mgopt_onnx_node *n;
  if (!vals) return mgopt__exp_nomem(E);
  for (i = 0; i < op->slots[si].n; i++) vals[i] = mgopt__exp_vname(op->slots[si].uses[i].value);
  n = mgopt__exp_simple(E, op, m->onnx, vals, op->slots[si].n);
  if (!n || !mgopt__exp_astr(E, n, "equation", mgopt_op_get_string(op, "equation", NULL))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- the table */

/* LRN: local_response_norm(x, size, alpha, beta, k = bias), the same formula with alpha / size.
   MIL sums over a symmetric neighbourhood of channels: an even size (ONNX's window is then
   lopsided) and ranks other than 3 and 4 (MIL's) stay opaque. */
static int mgopt__imp_lrn(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int64_t size = mgopt__imp_aint(I->node, "size", 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || mgopt__imp_nout(I->node) != 1 || (x->type.rank != 3 && x->type.rank != 4)) return 0;
  if (size < 1 || size % 2 == 0 || size > INT32_MAX) return 0;
  op = mgopt__imp_op(I, "local_response_norm", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_int(op, "size", size) ||
      mgopt_op_set_float(op, "alpha", mgopt__imp_afloat(I->node, "alpha", (double)(float)1e-4f)) ||
      mgopt_op_set_float(op, "beta", mgopt__imp_afloat(I->node, "beta", (double)(float)0.75f)) ||
      mgopt_op_set_float(op, "k", mgopt__imp_afloat(I->node, "bias", 1.0)))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_lrn(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  int64_t size = mgopt_op_get_int(op, "size", 0);
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!mgopt_op_operand(op, "x")) return "an operand is missing";
  if (size < 1 || size > INT32_MAX) return "a size below 1";
  return NULL;
}

static mgopt_status mgopt__exp_lrn(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_aint(E, n, "size", mgopt_op_get_int(op, "size", 1)) ||
      !mgopt__exp_afloat(E, n, "alpha", mgopt_op_get_float(op, "alpha", 1e-4)) ||
      !mgopt__exp_afloat(E, n, "beta", mgopt_op_get_float(op, "beta", 0.75)) ||
      !mgopt__exp_afloat(E, n, "bias", mgopt_op_get_float(op, "k", 1.0)))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

static const mgopt__onnx_map mgopt__onnx_nn[] = {
    {"MatMul", 1, 8, MGOPT_OP_matmul, mgopt__imp_matmul, mgopt__exp_matmul, {NULL, NULL, NULL}, mgopt__exw_matmul},
    {"MatMul", 9, 0, MGOPT_OP_matmul, mgopt__imp_matmul, mgopt__exp_matmul, {NULL, NULL, NULL}, mgopt__exw_matmul},
    {"Gemm", 1, 0, MGOPT_OP_linear, mgopt__imp_gemm, mgopt__exp_linear, {NULL, NULL, NULL}, mgopt__exw_linear},
    {"Conv", 1, 0, MGOPT_OP_conv, mgopt__imp_conv, mgopt__exp_conv, {NULL, NULL, NULL}, mgopt__exw_conv},
    {"ConvTranspose", 1, 0, MGOPT_OP_conv_transpose, mgopt__imp_conv, mgopt__exp_conv, {NULL, NULL, NULL}, mgopt__exw_conv},
    {"MaxPool", 1, 0, MGOPT_OP_max_pool, mgopt__imp_pool, mgopt__exp_pool, {NULL, NULL, NULL}, mgopt__exw_pool},
    {"AveragePool", 1, 0, MGOPT_OP_avg_pool, mgopt__imp_pool, mgopt__exp_pool, {NULL, NULL, NULL}, mgopt__exw_pool},
    {"GlobalAveragePool", 1, 0, MGOPT_OP_reduce_mean, mgopt__imp_global_pool, NULL, {NULL, NULL, NULL}, NULL},
    {"GlobalMaxPool", 1, 0, MGOPT_OP_reduce_max, mgopt__imp_global_pool, NULL, {NULL, NULL, NULL}, NULL},
    {"BatchNormalization", 1, 6, MGOPT_OP_batch_norm, mgopt__imp_batchnorm, mgopt__exp_batchnorm, {NULL, NULL, NULL}, mgopt__exw_batchnorm},
    {"BatchNormalization", 7, 0, MGOPT_OP_batch_norm, mgopt__imp_batchnorm, mgopt__exp_batchnorm, {NULL, NULL, NULL}, mgopt__exw_batchnorm},
    {"InstanceNormalization", 1, 0, MGOPT_OP_instance_norm, mgopt__imp_instancenorm, mgopt__exp_instancenorm, {NULL, NULL, NULL}, mgopt__exw_instancenorm},
    /* LayerNormalization is an ONNX op from opset 17; read in any model that has it */
    {"LayerNormalization", 1, 16, MGOPT_OP_layer_norm, mgopt__imp_layernorm, NULL, {NULL, NULL, NULL}, NULL},
    {"LayerNormalization", 17, 0, MGOPT_OP_layer_norm, mgopt__imp_layernorm, mgopt__exp_layernorm, {NULL, NULL, NULL}, mgopt__exw_layernorm},
    {"Softmax", 1, 12, MGOPT_OP_softmax, mgopt__imp_softmax, mgopt__exp_softmax, {NULL, NULL, NULL}, mgopt__exw_softmax},
    {"Softmax", 13, 0, MGOPT_OP_softmax, mgopt__imp_softmax, mgopt__exp_softmax, {NULL, NULL, NULL}, mgopt__exw_softmax},
    {"LRN", 1, 0, MGOPT_OP_local_response_norm, mgopt__imp_lrn, mgopt__exp_lrn, {NULL, NULL, NULL}, mgopt__exw_lrn},
    {"Einsum", 12, 0, MGOPT_OP_einsum, mgopt__imp_einsum, mgopt__exp_einsum, {NULL, NULL, NULL}, NULL},
    /* resampling: one importing row per ONNX op and opset; the export-only rows share it (ops.c) */
    {"Upsample", 7, 9, MGOPT_OP_upsample_nearest_neighbor, mgopt__imp_resize, mgopt__exp_resample, {NULL, NULL, NULL}, mgopt__exw_resample},
    {"Resize", 10, 10, MGOPT_OP_upsample_nearest_neighbor, mgopt__imp_resize, mgopt__exp_resample, {NULL, NULL, NULL}, mgopt__exw_resample},
    {"Resize", 11, 0, MGOPT_OP_upsample_nearest_neighbor, mgopt__imp_resize, mgopt__exp_resample, {NULL, NULL, NULL}, mgopt__exw_resample},
    {"Resize", 11, 0, MGOPT_OP_upsample_bilinear, NULL, mgopt__exp_resample, {NULL, NULL, NULL}, mgopt__exw_resample},
    {"Resize", 11, 0, MGOPT_OP_resize_nearest_neighbor, NULL, mgopt__exp_resample, {NULL, NULL, NULL}, mgopt__exw_resample},
    {"Resize", 11, 0, MGOPT_OP_resize_bilinear, NULL, mgopt__exp_resample, {NULL, NULL, NULL}, mgopt__exw_resample},
};

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_nn(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_nn);
  return mgopt__onnx_nn;
}
