/* src/onnx/map_nn.c — ONNX <-> canonical mappings of network layers: MatMul, Gemm, Conv, ConvTranspose, pools, normalizations, Softmax. */
#include "convert_internal.h"

/* ---------------------------------------------------------------- MatMul, Gemm */

static int mgopt__imp_matmul(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *y = mgopt__imp_in(I, 1);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || !y || x->type.dtype != y->type.dtype) return 0;
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
  MGOPT__UNUSED(m);
  for (j = 0; j < 2; j++) {
    mgopt_value *v = mgopt_op_operand(op, names[j]);
    if (!v) return "an operand is missing";
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

/* Gemm with alpha = beta = 1 and no transposed A: linear when B is transposed
   and C is 1-d (or absent), else matmul (+ add). */
static int mgopt__imp_gemm(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *a = mgopt__imp_in(I, 0), *b = mgopt__imp_in(I, 1), *c = mgopt__imp_in(I, 2);
  int64_t ta = mgopt__imp_aint(I->node, "transA", 0), tb = mgopt__imp_aint(I->node, "transB", 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(a) || !b || a->type.dtype != b->type.dtype || (c && c->type.dtype != a->type.dtype))
    return 0;
  if (mgopt__imp_afloat(I->node, "alpha", 1.0) != 1.0 || (c && mgopt__imp_afloat(I->node, "beta", 1.0) != 1.0)) return 0;
  if (mgopt__imp_rank(a) != 2 || mgopt__imp_rank(b) != 2 || ta) return 0;
  if (tb && (!c || mgopt__imp_rank(c) == 1)) {
    op = mgopt__imp_op(I, "linear", 1, 0);
    if (!op || mgopt_op_set_operand(op, "x", a) || mgopt_op_set_operand(op, "weight", b)) return -1;
    if (c && mgopt_op_set_operand(op, "bias", c)) return -1;
    return mgopt__imp_done(I, op);
  }
  if (!c) {
    op = mgopt__imp_op(I, "matmul", 1, 0);
    if (!op || mgopt_op_set_operand(op, "x", a) || mgopt_op_set_operand(op, "y", b) ||
        mgopt_op_set_bool(op, "transpose_x", 0) || mgopt_op_set_bool(op, "transpose_y", tb != 0))
      return -1;
    return mgopt__imp_done(I, op);
  }
  {
    /* matmul into a fresh value, then add(C) under the node's output name */
    static const char *const slots[2] = {"x", "y"};
    mgopt_value *vals[2];
    mgopt_op *mm;
    mgopt_diag d2;
    char buf[160];
    snprintf(buf, sizeof buf, "%.100s_matmul", I->node->noutputs ? mgopt__imp_intern(I, I->node->outputs[0]) : "gemm");
    vals[0] = a;
    vals[1] = b;
    mm = mgopt_build_op(I->p, I->b, NULL, "matmul", mgopt_program_fresh_name(I->p, buf), 2, slots, vals, 1);
    if (!mm || mgopt_op_set_bool(mm, "transpose_x", 0) || mgopt_op_set_bool(mm, "transpose_y", tb != 0)) return -1;
    mgopt_diag_clear(&d2);
    if (mgopt_op_infer(I->p, mm, &d2)) return mgopt__imp_fail(I, MGOPT_ERR_TYPE, "Gemm: %s", d2.msg), -1;
    op = mgopt__imp_op(I, "add", 1, 0);
    if (!op || mgopt_op_set_operand(op, "x", mm->outs[0]) || mgopt_op_set_operand(op, "y", c)) return -1;
    return mgopt__imp_done(I, op);
  }
}

/* linear: Gemm(transB) for a 2-d input, else MatMul + Add; a 2-d weight is
   written transposed (a constant as a transposed initializer, else through a
   Transpose node). */
static const char *mgopt__exw_linear(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "weight");
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x || !w) return "an operand is missing";
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

static int mgopt__imp_conv(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *w = mgopt__imp_in(I, 1), *bias = mgopt__imp_in(I, 2);
  int r = mgopt__imp_rank(x), k;
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || !w || w->type.dtype != x->type.dtype || r < 3 || mgopt__imp_rank(w) != r) return 0;
  if (bias && bias->type.dtype != x->type.dtype) return 0;
  if (m->kind == MGOPT_OP_conv_transpose &&
      (mgopt__imp_attr(I->node, "output_padding") || mgopt__imp_attr(I->node, "output_shape")))
    return 0;
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
  if (mgopt_op_set_int(op, "groups", mgopt__imp_aint(I->node, "group", 1))) return -1;
  if (mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "weight", w)) return -1;
  if (bias && mgopt_op_set_operand(op, "bias", bias)) return -1;
  return mgopt__imp_append(I, op);
}

/* A bias is Conv's (and ConvTranspose's) third input B. */
static const char *mgopt__exw_conv(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(m);
  if (!mgopt_op_operand(op, "x") || !mgopt_op_operand(op, "weight")) return "an operand is missing";
  if (op->kind == MGOPT_OP_conv_transpose && mgopt_op_attr(op, "output_shape")) {
    /* an output_shape that only restates what the pads give is left out */
    const mgopt_type *ot = &op->outs[0]->type;
    const int64_t *v = NULL;
    int64_t k = mgopt_op_get_ints(p, op, "output_shape", &v), q;
    if (k < 0 || !mgopt_type_is_static(ot) || k > ot->rank) return "output_shape";
    for (q = 0; q < k; q++)
      if (v[q] != ot->dims[ot->rank - k + q].v) return "output_shape";
  }
  return mgopt__exw_spatial(p, op);
}

static mgopt_status mgopt__exp_conv(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[3];
  mgopt_onnx_node *n;
  mgopt_status s;
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_in(op, "weight");
  ins[2] = mgopt__exp_in(op, "bias");
  n = mgopt__exp_simple(E, op, m->onnx, ins, ins[2] ? 3 : 2);
  if (!n) return mgopt__exp_nomem(E);
  if ((s = mgopt__exp_spatial(E, op, n, 1)) != MGOPT_OK) return s;
  if (!mgopt__exp_aint(E, n, "group", mgopt_op_get_int(op, "groups", 1))) return mgopt__exp_nomem(E);
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

static int mgopt__imp_global_avgpool(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int r = mgopt__imp_rank(x);
  int64_t axes[MGOPT_MAX_RANK], i;
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || r < 3 || r > MGOPT_MAX_RANK) return 0;
  for (i = 2; i < r; i++) axes[i - 2] = i;
  op = mgopt__imp_op(I, "reduce_mean", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_ints(op, "axes", axes, r - 2) ||
      mgopt_op_set_bool(op, "keep_dims", 1))
    return -1;
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
      mgopt_op_set_float(op, "alpha", mgopt__imp_afloat(I->node, "alpha", (double)1e-4f)) ||
      mgopt_op_set_float(op, "beta", mgopt__imp_afloat(I->node, "beta", (double)0.75f)) ||
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
    {"MatMul", 1, 0, MGOPT_OP_matmul, mgopt__imp_matmul, mgopt__exp_matmul, {NULL, NULL, NULL}, mgopt__exw_matmul},
    {"Gemm", 1, 0, MGOPT_OP_linear, mgopt__imp_gemm, mgopt__exp_linear, {NULL, NULL, NULL}, mgopt__exw_linear},
    {"Conv", 1, 0, MGOPT_OP_conv, mgopt__imp_conv, mgopt__exp_conv, {NULL, NULL, NULL}, mgopt__exw_conv},
    {"ConvTranspose", 1, 0, MGOPT_OP_conv_transpose, mgopt__imp_conv, mgopt__exp_conv, {NULL, NULL, NULL}, mgopt__exw_conv},
    {"MaxPool", 1, 0, MGOPT_OP_max_pool, mgopt__imp_pool, mgopt__exp_pool, {NULL, NULL, NULL}, mgopt__exw_pool},
    {"AveragePool", 1, 0, MGOPT_OP_avg_pool, mgopt__imp_pool, mgopt__exp_pool, {NULL, NULL, NULL}, mgopt__exw_pool},
    {"GlobalAveragePool", 1, 0, MGOPT_OP_reduce_mean, mgopt__imp_global_avgpool, NULL, {NULL, NULL, NULL}, NULL},
    {"BatchNormalization", 1, 6, MGOPT_OP_batch_norm, mgopt__imp_batchnorm, mgopt__exp_batchnorm, {NULL, NULL, NULL}, mgopt__exw_batchnorm},
    {"BatchNormalization", 7, 0, MGOPT_OP_batch_norm, mgopt__imp_batchnorm, mgopt__exp_batchnorm, {NULL, NULL, NULL}, mgopt__exw_batchnorm},
    {"InstanceNormalization", 1, 0, MGOPT_OP_instance_norm, mgopt__imp_instancenorm, mgopt__exp_instancenorm, {NULL, NULL, NULL}, mgopt__exw_instancenorm},
    /* LayerNormalization is an ONNX op from opset 17; read in any model that has it */
    {"LayerNormalization", 1, 16, MGOPT_OP_layer_norm, mgopt__imp_layernorm, NULL, {NULL, NULL, NULL}, NULL},
    {"LayerNormalization", 17, 0, MGOPT_OP_layer_norm, mgopt__imp_layernorm, mgopt__exp_layernorm, {NULL, NULL, NULL}, mgopt__exw_layernorm},
    {"Softmax", 1, 12, MGOPT_OP_softmax, mgopt__imp_softmax, mgopt__exp_softmax, {NULL, NULL, NULL}, mgopt__exw_softmax},
    {"Softmax", 13, 0, MGOPT_OP_softmax, mgopt__imp_softmax, mgopt__exp_softmax, {NULL, NULL, NULL}, mgopt__exw_softmax},
    {"LRN", 1, 0, MGOPT_OP_local_response_norm, mgopt__imp_lrn, mgopt__exp_lrn, {NULL, NULL, NULL}, mgopt__exw_lrn},
};

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_nn(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_nn);
  return mgopt__onnx_nn;
}
