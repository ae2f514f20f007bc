/* src/onnx/map_elementwise.c — ONNX <-> canonical mappings of elementwise ops: unary math and activations (PRelu, LeakyRelu, Gelu), arithmetic, comparisons, logic, Where, Cast, Clip, Identity, Dropout. */
#include "convert_internal.h"

/* ---------------------------------------------------------------- unary */

/* 1 if v is a tensor of an integer dtype of 8 bits or more (ONNX's integer types). */
static int mgopt__imp_is_int(const mgopt_value *v) {
  int32_t dt = v && v->type.kind == MGOPT_TYPE_TENSOR ? v->type.dtype : (int32_t)MGOPT_DT_UNKNOWN;
  return dt == MGOPT_DT_INT8 || dt == MGOPT_DT_UINT8 || dt == MGOPT_DT_INT16 || dt == MGOPT_DT_UINT16 ||
         dt == MGOPT_DT_INT32 || dt == MGOPT_DT_UINT32 || dt == MGOPT_DT_INT64 || dt == MGOPT_DT_UINT64;
}

/* Unary elementwise on float tensors, to the row's canonical op. */
static int mgopt__imp_unary_float(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || mgopt__imp_nout(I->node) != 1) return 0;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x)) return -1;
  return mgopt__imp_done(I, op);
}

/* Log is log with epsilon 0 set: the canonical log adds its epsilon (1e-45
   by default, the smallest fp32 denormal) before the logarithm, which would
   turn log(0) = -inf into -103.28 and log(-denormal) = NaN into -inf; with
   epsilon 0, x + 0 is x for every x but -0 (+0, whose log is -inf too). */
static int mgopt__imp_log(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || mgopt__imp_nout(I->node) != 1) return 0;
  op = mgopt__imp_op(I, "log", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_float(op, "epsilon", 0.0)) return -1;
  return mgopt__imp_done(I, op);
}

/* log(x, epsilon) writes Log(x) when epsilon is 0 (or rounds to 0 in x's
   dtype), else Log(Add(x, epsilon)) with epsilon as a scalar of x's dtype:
   the value the canonical log computes, x + epsilon rounded to the dtype. */
static mgopt_status mgopt__exp_log(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *xv = mgopt_op_operand(op, "x");
  const char *x = mgopt__exp_vname(xv), *ins[2], *sum;
  mgopt_tensor *eps = mgopt_tensor_new_scalar_f64(E->p, (mgopt_dtype)xv->type.dtype, mgopt_op_get_float(op, "epsilon", 1e-45));
  mgopt_onnx_node *n;
  if (!eps) return mgopt__exp_nomem(E);
  if (mgopt_tensor_get_f64(eps, 0) == 0) return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, &x, 1));
  ins[0] = x;
  ins[1] = mgopt__exp_const(E, "log_epsilon", eps);
  sum = mgopt__exp_fresh(E, x);
  n = ins[1] && sum ? mgopt__exp_node(E, "Add", "", NULL) : NULL;
  if (!n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, ins, 2) ||
      !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &sum, 1))
    return mgopt__exp_nomem(E);
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, &sum, 1));
}

/* The epsilon of a log is added in x's dtype: a float dtype ONNX's Add takes. */
static const char *mgopt__exw_log(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  const char *why = mgopt__exw_direct(p, op, m);
  if (why) return why;
  return mgopt_dtype_is_float((mgopt_dtype)x->type.dtype) && x->type.dtype != MGOPT_DT_UNKNOWN ? NULL
                                                                                              : "log of a non-float";
}

static int mgopt__imp_not(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || x->type.dtype != MGOPT_DT_BOOL) return 0;
  op = mgopt__imp_op(I, "logical_not", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x)) return -1;
  return mgopt__imp_done(I, op);
}

static int mgopt__imp_leaky_relu(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x)) return 0;
  op = mgopt__imp_op(I, "leaky_relu", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) ||
      mgopt_op_set_float(op, "alpha", mgopt__imp_afloat(I->node, "alpha", (double)(float)0.01f)))
    return -1;
  return mgopt__imp_done(I, op);
}

static mgopt_status mgopt__exp_leaky_relu(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_afloat(E, n, "alpha", mgopt_op_get_float(op, "alpha", 0.01))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* prelu scales channel axis 1 by alpha (C,); PRelu broadcasts its slope from
   the trailing dims, so for a rank-r input (r > 2) the slope is written as
   (C, 1, ..., 1): a reshaped initializer for a constant alpha, else a Reshape. */
static const char *mgopt__exw_prelu(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *a = mgopt_op_operand(op, "alpha");
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x || !a) return "an operand is missing";
  if (x->type.rank < 1 || x->type.rank > MGOPT_MAX_RANK) return "an input of unknown rank";
  if (a->type.rank != 1) return "alpha is not 1-d";
  return NULL;
}

static mgopt_status mgopt__exp_prelu(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *a = mgopt_op_operand(op, "alpha");
  int32_t r = x->type.rank, i;
  const char *ins[2];
  ins[0] = mgopt__exp_vname(x);
  ins[1] = mgopt__exp_vname(a);
  if (r > 2) {
    mgopt_tensor *t = mgopt_value_const(a);
    int64_t shape[MGOPT_MAX_RANK];
    shape[0] = t ? t->numel : -1;
    for (i = 1; i < r - 1; i++) shape[i] = 1;
    if (t && t->rank == 1 && mgopt_dtype_is_float((mgopt_dtype)t->dtype)) {
      mgopt_tensor *nt = mgopt_tensor_new(E->p, (mgopt_dtype)t->dtype, r - 1, shape);
      if (!nt) return mgopt__exp_nomem(E);
      if (t->nbytes) memcpy(nt->data, t->data, t->nbytes);
      ins[1] = mgopt__exp_const(E, ins[1], nt);
    } else {
      const char *sh = mgopt__exp_i64_const(E, "prelu_shape", shape, r - 1), *out = mgopt__exp_fresh(E, ins[1]);
      mgopt_onnx_node *n = mgopt__exp_node(E, "Reshape", "", NULL);
      const char *rin[2];
      rin[0] = ins[1];
      rin[1] = sh;
      if (!sh || !out || !n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, rin, 2) ||
          !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &out, 1))
        return mgopt__exp_nomem(E);
      ins[1] = out;
    }
    if (!ins[1]) return mgopt__exp_nomem(E);
  }
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 2));
}

/* bias_add as Add (opset 7 on: multidirectional broadcast): the bias goes
   out with shape [C, 1, ..., 1] of rank r - axis so that it lines up with x's
   axis; a constant bias as a reshaped initializer, a run-time one through a
   Reshape node. */
static const char *mgopt__exw_bias_add(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *b = mgopt_op_operand(op, "bias");
  int64_t axis = mgopt_op_get_int(op, "axis", 1);
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x || !b) return "an operand is missing";
  if (x->type.rank < 1 || x->type.rank > MGOPT_MAX_RANK) return "an input of unknown rank";
  if (axis < -(int64_t)x->type.rank || axis >= (int64_t)x->type.rank) return "axis out of range";
  if (b->type.rank != 1) return "bias is not 1-d";
  return NULL;
}

static mgopt_status mgopt__exp_bias_add(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *b = mgopt_op_operand(op, "bias");
  int32_t r = x->type.rank, i, n;
  int64_t axis = mgopt_op_get_int(op, "axis", 1), shape[MGOPT_MAX_RANK];
  mgopt_tensor *t = mgopt_value_const(b);
  const char *ins[2];
  if (axis < 0) axis += r;
  n = r - (int32_t)axis;
  ins[0] = mgopt__exp_vname(x);
  ins[1] = mgopt__exp_vname(b);
  shape[0] = t ? t->numel : -1;
  for (i = 1; i < n; i++) shape[i] = 1;
  if (n > 1 && t && t->rank == 1 && t->dtype != MGOPT_DT_STRING && mgopt_dtype_bits((mgopt_dtype)t->dtype) % 8 == 0) {
    mgopt_tensor *nt = mgopt_tensor_new(E->p, (mgopt_dtype)t->dtype, n, shape);
    if (!nt) return mgopt__exp_nomem(E);
    if (t->nbytes) memcpy(nt->data, mgopt_tensor_data(E->p, t), t->nbytes);
    ins[1] = mgopt__exp_const(E, ins[1], nt);
  } else if (n > 1) {
    const char *sh = mgopt__exp_i64_const(E, "bias_shape", shape, n), *out = mgopt__exp_fresh(E, ins[1]);
    mgopt_onnx_node *rn = mgopt__exp_node(E, "Reshape", "", NULL);
    const char *rin[2];
    rin[0] = ins[1];
    rin[1] = sh;
    if (!sh || !out || !rn || !mgopt__exp_set_io(E, &rn->inputs, &rn->ninputs, rin, 2) ||
        !mgopt__exp_set_io(E, &rn->outputs, &rn->noutputs, &out, 1))
      return mgopt__exp_nomem(E);
    ins[1] = out;
  }
  if (!ins[1]) return mgopt__exp_nomem(E);
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 2));
}

/* PRelu as prelu: the slope must vary along x's axis 1 alone. From opset 7
   the slope broadcasts from the trailing dims (unidirectionally): exact when,
   right-aligned, each of its dims is 1 but the one over axis 1, which is 1 or
   C. Before opset 7 a slope of one value is shared by every channel, and a
   1-d slope of C values is per channel (what the exporters of that time wrote);
   a 1-d slope that could also mean the last axis (last dim C, rank > 2) stays
   opaque. A constant slope becomes prelu's alpha (C,); a run-time one only
   when it has that shape already. */
static int mgopt__imp_prelu(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *s = mgopt__imp_in(I, 1), *alpha = s;
  int r = mgopt__imp_rank(x), rs = mgopt__imp_rank(s), j;
  mgopt_tensor *t = s ? mgopt_value_const(s) : NULL;
  int64_t C, i;
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || !s || s->type.dtype != x->type.dtype || r < 2 || r > MGOPT_MAX_RANK || rs < 0 || rs > r)
    return 0;
  if (!mgopt_dim_is_static(x->type.dims[1]) || x->type.dims[1].v < 1 || x->type.dims[1].v > ((int64_t)1 << 24)) return 0;
  C = x->type.dims[1].v;
  if (m->since >= 7) {
    for (j = 0; j < rs; j++) {
      mgopt_dim d = s->type.dims[j];
      int axis = r - rs + j;
      if (!mgopt_dim_is_static(d) || (d.v != 1 && (axis != 1 || d.v != C))) return 0;
    }
  } else {
    int64_t n = mgopt_type_numel(&s->type);
    if (n != 1) {
      mgopt_dim last = x->type.dims[r - 1];
      if (rs != 1 || n != C || (r > 2 && (!mgopt_dim_is_static(last) || last.v == C))) return 0;
    }
  }
  if (!(rs == 1 && mgopt_dim_is_static(s->type.dims[0]) && s->type.dims[0].v == C && (r == 2 || m->since < 7))) {
    mgopt_tensor *a;
    char buf[160];
    if (!t || t->numel < 1) return 0;
    a = mgopt_tensor_new(I->p, (mgopt_dtype)x->type.dtype, 1, &C);
    if (!a || !mgopt_tensor_data(I->p, t)) return -1;
    for (i = 0; i < C; i++) mgopt_tensor_set_f64(a, i, mgopt_tensor_get_f64(t, t->numel == 1 ? 0 : i));
    snprintf(buf, sizeof buf, "%.100s_alpha", mgopt__imp_intern(I, I->node->outputs[0]));
    alpha = mgopt_build_const(I->p, I->b, NULL, mgopt_program_fresh_name(I->p, buf), a);
    if (!alpha) return -1;
  }
  op = mgopt__imp_op(I, "prelu", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "alpha", alpha)) return -1;
  return mgopt__imp_done(I, op);
}

/* Before opset 7 the slope is written as prelu's alpha (C,), which that
   PRelu reads per channel where it cannot mean the last axis. */
static const char *mgopt__exw_prelu_v1(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *a = mgopt_op_operand(op, "alpha");
  int32_t r;
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x || !a) return "an operand is missing";
  r = x->type.rank;
  if (r < 2 || r > MGOPT_MAX_RANK || a->type.rank != 1 || !mgopt_dim_is_static(x->type.dims[1])) return "an input of unknown rank";
  if (r > 2 && x->type.dims[1].v != 1 && (!mgopt_dim_is_static(x->type.dims[r - 1]) || x->type.dims[r - 1].v == x->type.dims[1].v))
    return "a per-channel slope that PRelu before opset 7 reads ambiguously";
  return NULL;
}

static mgopt_status mgopt__exp_prelu_v1(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_in(op, "alpha");
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 2));
}

static int mgopt__imp_gelu(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  int tanh_mode = mgopt__imp_astr(I->node, "approximate", "tanh");
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || (!tanh_mode && mgopt__imp_attr(I->node, "approximate") &&
                                  !mgopt__imp_astr(I->node, "approximate", "none")))
    return 0;
  op = mgopt__imp_op(I, "gelu", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) ||
      mgopt_op_set_string(op, "mode", tanh_mode ? "TANH_APPROXIMATION" : "EXACT"))
    return -1;
  return mgopt__imp_done(I, op);
}

/* Gelu holds the exact form and the tanh approximation, not the sigmoid one. */
static const char *mgopt__exw_gelu(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *mode = mgopt_op_get_string(op, "mode", NULL);
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (mode && strcmp(mode, "EXACT") != 0 && strcmp(mode, "TANH_APPROXIMATION") != 0) return "this gelu mode";
  return NULL;
}

static mgopt_status mgopt__exp_gelu(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  size_t len = 0;
  const char *mode = mgopt_op_get_string(op, "mode", &len);
  mgopt_onnx_node *n;
  n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || (mode && strcmp(mode, "TANH_APPROXIMATION") == 0 && !mgopt__exp_astr(E, n, "approximate", "tanh")))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* Sign on floats and on integers of 8 bits or more (ONNX's numeric types). */
static int mgopt__imp_sign(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || mgopt__imp_nout(I->node) != 1 || (!mgopt__imp_is_float(x) && !mgopt__imp_is_int(x))) return 0;
  op = mgopt__imp_op(I, "sign", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x)) return -1;
  return mgopt__imp_done(I, op);
}

/* Elu-6 on: elu(x, alpha), alpha 1 by default in both. */
static int mgopt__imp_elu(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || mgopt__imp_nout(I->node) != 1) return 0;
  op = mgopt__imp_op(I, "elu", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_float(op, "alpha", mgopt__imp_afloat(I->node, "alpha", 1.0)))
    return -1;
  return mgopt__imp_done(I, op);
}

static mgopt_status mgopt__exp_elu(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_afloat(E, n, "alpha", mgopt_op_get_float(op, "alpha", 1.0))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* HardSigmoid-6 on: sigmoid_hard(x, alpha, beta) = min(max(alpha * x + beta, 0), 1), defaults 0.2 and 0.5. */
static int mgopt__imp_hard_sigmoid(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || mgopt__imp_nout(I->node) != 1) return 0;
  op = mgopt__imp_op(I, "sigmoid_hard", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) ||
      mgopt_op_set_float(op, "alpha", mgopt__imp_afloat(I->node, "alpha", (double)(float)0.2f)) ||
      mgopt_op_set_float(op, "beta", mgopt__imp_afloat(I->node, "beta", (double)(float)0.5f)))
    return -1;
  return mgopt__imp_done(I, op);
}

static mgopt_status mgopt__exp_hard_sigmoid(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_afloat(E, n, "alpha", mgopt_op_get_float(op, "alpha", 0.2)) ||
      !mgopt__exp_afloat(E, n, "beta", mgopt_op_get_float(op, "beta", 0.5)))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ThresholdedRelu keeps x where x > alpha, thresholded_relu where x >= alpha:
   on fp32, x > a exactly when x >= the next float above a, so the import
   writes that threshold and the export the float below it. Other dtypes (the
   comparison's dtype is not pinned down) and a NaN or +inf alpha stay opaque. */
static int mgopt__imp_thresholded_relu(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  float a = (float)mgopt__imp_afloat(I->node, "alpha", 1.0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR || x->type.dtype != MGOPT_DT_FP32 || mgopt__imp_nout(I->node) != 1)
    return 0;
  if (a != a || a == HUGE_VALF) return 0;
  op = mgopt__imp_op(I, "thresholded_relu", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_float(op, "alpha", (double)nextafterf(a, HUGE_VALF)))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_thresholded_relu(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  float a = (float)mgopt_op_get_float(op, "alpha", 1.0);
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x) return "an operand is missing";
  if (x->type.dtype != MGOPT_DT_FP32) return "ThresholdedRelu's threshold is exact on fp32 only";
  if (a != a || a == -HUGE_VALF) return "a NaN or -inf alpha";
  return NULL;
}

static mgopt_status mgopt__exp_thresholded_relu(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  float a = (float)mgopt_op_get_float(op, "alpha", 1.0);
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_afloat(E, n, "alpha", (double)nextafterf(a, -HUGE_VALF))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* A scalar constant of dtype dt holding v, for the node being imported. */
static mgopt_value *mgopt__imp_scalar(mgopt__imp *I, const char *what, mgopt_dtype dt, double v) {
  char buf[160];
  const char *nm;
  mgopt_tensor *t = mgopt_tensor_new_scalar_f64(I->p, dt, v);
  snprintf(buf, sizeof buf, "%.100s_%s",
           I->node->noutputs && I->node->outputs[0].len ? mgopt__imp_intern(I, I->node->outputs[0]) : "const", what);
  nm = mgopt_program_fresh_name(I->p, buf);
  return t && nm ? mgopt_build_const(I->p, I->b, NULL, nm, t) : NULL;
}

/* Neg is mul(x, -1): exact for floats (a sign flip, NaN stays NaN) and for
   signed integers (two's complement: -INT_MIN wraps to INT_MIN both ways).
   ONNX defines Neg on floats and signed integers only. */
static int mgopt__imp_neg(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *c;
  mgopt_dtype dt;
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || mgopt__imp_nout(I->node) != 1) return 0;
  dt = (mgopt_dtype)x->type.dtype;
  if (!mgopt__imp_is_float(x) && dt != MGOPT_DT_INT8 && dt != MGOPT_DT_INT16 && dt != MGOPT_DT_INT32 &&
      dt != MGOPT_DT_INT64)
    return 0;
  c = mgopt__imp_scalar(I, "neg", dt, -1.0);
  op = c ? mgopt__imp_op(I, "mul", 1, 0) : NULL;
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "y", c)) return -1;
  return mgopt__imp_done(I, op);
}

/* Reciprocal is real_div(1, x) on floats: one correctly rounded division, as
   ONNX's 1/x (the canonical inverse adds an epsilon, so it is not used). */
static int mgopt__imp_reciprocal(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *c;
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || mgopt__imp_nout(I->node) != 1) return 0;
  c = mgopt__imp_scalar(I, "one", (mgopt_dtype)x->type.dtype, 1.0);
  op = c ? mgopt__imp_op(I, "real_div", 1, 0) : NULL;
  if (!op || mgopt_op_set_operand(op, "x", c) || mgopt_op_set_operand(op, "y", x)) return -1;
  return mgopt__imp_done(I, op);
}

/* ---------------------------------------------------------------- binary */

/* Binary elementwise: same dtypes on both sides, one output. */
static int mgopt__imp_binary_like(mgopt__imp *I, const mgopt__onnx_map *m, int float_only) {
  mgopt_value *x = mgopt__imp_in(I, 0), *y = mgopt__imp_in(I, 1);
  mgopt_op *op;
  if (!x || !y || mgopt__imp_nin(I->node) != 2 || mgopt__imp_nout(I->node) != 1) return 0;
  if (!mgopt__imp_known_dtype(x) || x->type.dtype != y->type.dtype) return 0;
  if (float_only && !mgopt__imp_is_float(x)) return 0;
  if (x->type.dtype == MGOPT_DT_STRING || x->type.dtype == MGOPT_DT_BOOL) return 0;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "y", y)) return -1;
  return mgopt__imp_done(I, op);
}
static int mgopt__imp_binary(mgopt__imp *I, const mgopt__onnx_map *m) { return mgopt__imp_binary_like(I, m, 0); }
/* integer Div truncates, Pow/Max/Min of integers differ in corner cases: float only */
static int mgopt__imp_binary_float(mgopt__imp *I, const mgopt__onnx_map *m) { return mgopt__imp_binary_like(I, m, 1); }

/* Max and Min of two inputs: every numeric dtype from opset 12, floats before. */
static int mgopt__imp_max_min(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  if (I->opset < 12 && !mgopt__imp_is_float(x)) return 0;
  return mgopt__imp_binary_like(I, m, 0);
}

/* Mod with fmod 0 on integers is mod (the remainder takes the divisor's sign,
   as floor division leaves it). fmod 1 (C's fmod, the dividend's sign) and
   floats (which ONNX allows with fmod 1 only) stay opaque. */
static int mgopt__imp_mod(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  if (!mgopt__imp_is_int(x) || mgopt__imp_aint(I->node, "fmod", 0) != 0) return 0;
  return mgopt__imp_binary_like(I, m, 0);
}

/* mod writes Mod on integers only (ONNX's float Mod is fmod). */
static const char *mgopt__exw_mod(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  const char *why = mgopt__exw_direct(p, op, m);
  if (why) return why;
  return mgopt__imp_is_int(x) ? NULL : "mod of floats (ONNX's float Mod is C's fmod)";
}

/* 1 if ONNX's Pow-12 on takes dtype dt for its base (T) or, with exponent set, its exponent (T1). */
static int mgopt__onnx_pow_dtype(int32_t dt, int exponent) {
  if (dt == MGOPT_DT_INT32 || dt == MGOPT_DT_INT64 || dt == MGOPT_DT_FP16 || dt == MGOPT_DT_FP32 ||
      dt == MGOPT_DT_FP64)
    return 1;
  return exponent && (dt == MGOPT_DT_INT8 || dt == MGOPT_DT_INT16 || dt == MGOPT_DT_UINT8 || dt == MGOPT_DT_UINT16 ||
                      dt == MGOPT_DT_UINT32 || dt == MGOPT_DT_UINT64);
}

/* Pow-12 on: pow(x, y) keeps the base's dtype, the exponent may have another. */
static int mgopt__imp_pow(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *y = mgopt__imp_in(I, 1);
  mgopt_op *op;
  if (!x || !y || mgopt__imp_nin(I->node) != 2 || mgopt__imp_nout(I->node) != 1) return 0;
  if (!mgopt__imp_known_dtype(x) || !mgopt__imp_known_dtype(y) || !mgopt__onnx_pow_dtype(x->type.dtype, 0) ||
      !mgopt__onnx_pow_dtype(y->type.dtype, 1))
    return 0;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "y", y)) return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_pow(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y");
  const char *why = mgopt__exw_direct(p, op, m);
  if (why) return why;
  if (m->since < 12 && (x->type.dtype != y->type.dtype || !mgopt__imp_is_float(x)))
    return "Pow before opset 12 takes one float dtype";
  if (!mgopt__onnx_pow_dtype(x->type.dtype, 0) || !mgopt__onnx_pow_dtype(y->type.dtype, 1)) return "these dtypes";
  return NULL;
}

/* Max and Min before opset 12 take floats only. */
static const char *mgopt__exw_max_min(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *why = mgopt__exw_direct(p, op, m);
  if (why) return why;
  return m->since < 12 && !mgopt__imp_is_float(mgopt_op_operand(op, "x")) ? "integer Max / Min before opset 12" : NULL;
}

/* 1 if v is a constant whose every element is `want` and that does not
   broaden `out` when broadcast against `x` (out has x's type). */
static int mgopt__exp_scalar_is(const mgopt_value *v, const mgopt_value *x, const mgopt_value *out, double want) {
  mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
  if (!t || t->numel != 1 || !x || !out || t->rank > x->type.rank || !mgopt_type_equal(&x->type, &out->type)) return 0;
  return mgopt_tensor_get_f64(t, 0) == want;
}

/* 1 if ONNX's Neg and Reciprocal take this dtype (Reciprocal: floats only). */
static int mgopt__exp_neg_dtype(int32_t dt, int floats_only) {
  if (dt == MGOPT_DT_FP16 || dt == MGOPT_DT_FP32 || dt == MGOPT_DT_FP64) return 1;
  return !floats_only && (dt == MGOPT_DT_INT8 || dt == MGOPT_DT_INT16 || dt == MGOPT_DT_INT32 || dt == MGOPT_DT_INT64);
}

/* The operand that mul(x, -1) or real_div(1, x) writes as ONNX Neg or
   Reciprocal, NULL when op is written as Mul or Div. The constant (-1 or 1)
   is then not read by the written node. */
MGOPT__PRIVATE mgopt_value *mgopt__exp_unary_form(const mgopt_op *op, int64_t opset) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y"), *out = op->nouts ? op->outs[0] : NULL;
  if (!x || !y) return NULL;
  if (op->kind == MGOPT_OP_mul && opset >= 6 && mgopt__exp_neg_dtype(x->type.dtype, 0)) {
    if (mgopt__exp_scalar_is(y, x, out, -1.0)) return x;
    if (mgopt__exp_scalar_is(x, y, out, -1.0)) return y;
  }
  if (op->kind == MGOPT_OP_real_div && mgopt__exp_neg_dtype(y->type.dtype, 1) && mgopt__exp_scalar_is(x, y, out, 1.0))
    return y;
  return NULL;
}

/* mul(x, -1) (either order) writes Neg, real_div(1, x) Reciprocal, the rest Mul and Div. */
static mgopt_status mgopt__exp_mul_div(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *v = mgopt__exp_unary_form(op, E->opset);
  const char *in;
  if (!v) return mgopt__exp_direct(E, op, m);
  in = mgopt__exp_vname(v);
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, op->kind == MGOPT_OP_mul ? "Neg" : "Reciprocal", &in, 1));
}

static int mgopt__imp_compare(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *y = mgopt__imp_in(I, 1);
  mgopt_op *op;
  if (!x || !y || mgopt__imp_nout(I->node) != 1 || !mgopt__imp_known_dtype(x) || x->type.dtype != y->type.dtype)
    return 0;
  if (x->type.dtype == MGOPT_DT_STRING) return 0;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "y", y)) return -1;
  return mgopt__imp_done(I, op);
}

static int mgopt__imp_logical(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *y = mgopt__imp_in(I, 1);
  mgopt_op *op;
  if (!x || !y || x->type.dtype != MGOPT_DT_BOOL || y->type.dtype != MGOPT_DT_BOOL) return 0;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "y", y)) return -1;
  return mgopt__imp_done(I, op);
}

static int mgopt__imp_where(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *c = mgopt__imp_in(I, 0), *a = mgopt__imp_in(I, 1), *b = mgopt__imp_in(I, 2);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!c || !a || !b || c->type.dtype != MGOPT_DT_BOOL || !mgopt__imp_known_dtype(a) || a->type.dtype != b->type.dtype)
    return 0;
  op = mgopt__imp_op(I, "select", 1, 0);
  if (!op || mgopt_op_set_operand(op, "cond", c) || mgopt_op_set_operand(op, "a", a) ||
      mgopt_op_set_operand(op, "b", b))
    return -1;
  return mgopt__imp_done(I, op);
}

/* ---------------------------------------------------------------- Identity, Dropout */

static int mgopt__imp_identity(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  MGOPT__UNUSED(m);
  if (!mgopt__imp_forwardable(I, x) || mgopt__imp_nout(I->node) != 1) return 0;
  return mgopt__imp_forward(I, x) ? -1 : 1;
}

/* Dropout at inference: output 0 is the input when training is off and the mask is not asked for. */
static int mgopt__imp_dropout(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *train = mgopt__imp_in(I, 2);
  MGOPT__UNUSED(m);
  if (!mgopt__imp_forwardable(I, x) || mgopt__imp_nout(I->node) != 1) return 0;
  if (train) {
    mgopt_tensor *t = mgopt_value_const(train);
    if (!t || t->numel != 1 || mgopt_tensor_get_i64(t, 0) != 0) return 0;
  }
  return mgopt__imp_forward(I, x) ? -1 : 1;
}

/* Dropout-1 and -6: is_test 0 means training. */
static int mgopt__imp_dropout_v1(mgopt__imp *I, const mgopt__onnx_map *m) {
  return mgopt__imp_aint(I->node, "is_test", 1) == 0 ? 0 : mgopt__imp_dropout(I, m);
}

/* ---------------------------------------------------------------- Clip */

/* clip(x, alpha=lo, beta=hi) when the bounds are in order (min > max, or NaN, is defined differently). */
static int mgopt__imp_clip_to(mgopt__imp *I, mgopt_value *x, double lo, double hi) {
  mgopt_op *op;
  if (!(lo <= hi)) return 0;
  op = mgopt__imp_op(I, "clip", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_float(op, "alpha", lo) ||
      mgopt_op_set_float(op, "beta", hi))
    return -1;
  return mgopt__imp_done(I, op);
}

static int mgopt__imp_clip_float(const mgopt_value *x) {
  return x && (x->type.dtype == MGOPT_DT_FP32 || x->type.dtype == MGOPT_DT_FP16);
}

/* 1 if bound v of an integer clip is written exactly as an element of dtype dt (or is no bound). */
static int mgopt__clip_int_bound(double v, int32_t dt) {
  int64_t lo, hi;
  if (v == HUGE_VAL || v == -HUGE_VAL) return 1;
  if (v != floor(v) || !(fabs(v) <= 9007199254740992.0)) return 0;
  switch (dt) {
    case MGOPT_DT_INT8: lo = -128; hi = 127; break;
    case MGOPT_DT_UINT8: lo = 0; hi = 255; break;
    case MGOPT_DT_INT16: lo = -32768; hi = 32767; break;
    case MGOPT_DT_UINT16: lo = 0; hi = 65535; break;
    case MGOPT_DT_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
    case MGOPT_DT_UINT32: lo = 0; hi = (int64_t)UINT32_MAX; break;
    case MGOPT_DT_UINT64: lo = 0; hi = INT64_MAX; break;
    default: lo = INT64_MIN; hi = INT64_MAX; break;
  }
  return v >= (double)lo && v <= (double)hi;
}

/* Clip takes integers from opset 12 on; an integer clip's bounds must be whole numbers of its dtype. */
static const char *mgopt__exw_clip(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  MGOPT__UNUSED(p);
  if (!x) return "an operand is missing";
  if (!mgopt__imp_is_int(x)) return NULL;
  if (m->since < 12) return "integer Clip before opset 12";
  if (!mgopt__clip_int_bound(mgopt_op_get_float(op, "alpha", -HUGE_VAL), x->type.dtype) ||
      !mgopt__clip_int_bound(mgopt_op_get_float(op, "beta", HUGE_VAL), x->type.dtype))
    return "a bound that is not a value of the dtype";
  return NULL;
}

/* An absent Clip bound is the dtype's lowest / largest finite value (Clip-6:
   the float attribute's default, +-3.402823e+38; from Clip-11: the input
   dtype's numeric_limits lowest() / max()), so Clip(+inf) with no max is the
   largest finite value, not +inf. For integers that bound clamps nothing, as
   clip's -inf / +inf does. */
static double mgopt__clip_limit(int32_t dt, int hi) {
  double v = dt == MGOPT_DT_FP16   ? 65504.0
             : dt == MGOPT_DT_BF16 ? 3.3895313892515355e+38
             : dt == MGOPT_DT_FP32 ? 3.4028234663852886e+38
             : dt == MGOPT_DT_FP64 ? 1.7976931348623157e+308
                                   : HUGE_VAL;
  return hi ? v : -v;
}

/* Clip-6: min and max are attributes, +-3.402823e+38 by default. */
static int mgopt__imp_clip_v6(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  MGOPT__UNUSED(m);
  if (!mgopt__imp_clip_float(x)) return 0;
  return mgopt__imp_clip_to(I, x, mgopt__imp_afloat(I->node, "min", mgopt__clip_limit(MGOPT_DT_FP32, 0)),
                            mgopt__imp_afloat(I->node, "max", mgopt__clip_limit(MGOPT_DT_FP32, 1)));
}

/* A bound is left out where it is the attribute's default; an infinite one is written. */
static mgopt_status mgopt__exp_clip_v6(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  double lo = mgopt_op_get_float(op, "alpha", -HUGE_VAL), hi = mgopt_op_get_float(op, "beta", HUGE_VAL);
  const char *x = mgopt__exp_in(op, "x");
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n) return mgopt__exp_nomem(E);
  if (lo != mgopt__clip_limit(MGOPT_DT_FP32, 0) && !mgopt__exp_afloat(E, n, "min", lo)) return mgopt__exp_nomem(E);
  if (hi != mgopt__clip_limit(MGOPT_DT_FP32, 1) && !mgopt__exp_afloat(E, n, "max", hi)) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* Clip-11 on: min and max are optional constant inputs. */
static int mgopt__imp_clip_v11(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *a = mgopt__imp_in(I, 1), *b = mgopt__imp_in(I, 2);
  mgopt_tensor *ta = a ? mgopt_value_const(a) : NULL, *tb = b ? mgopt_value_const(b) : NULL;
  double lo, hi;
  int is_int = I->opset >= 12 && mgopt__imp_is_int(x);
  MGOPT__UNUSED(m);
  if (!mgopt__imp_clip_float(x) && !is_int) return 0;
  lo = mgopt__clip_limit(x->type.dtype, 0);
  hi = mgopt__clip_limit(x->type.dtype, 1);
  if ((a && (!ta || ta->numel != 1)) || (b && (!tb || tb->numel != 1))) return 0;
  if (ta) lo = mgopt_tensor_get_f64(ta, 0);
  if (tb) hi = mgopt_tensor_get_f64(tb, 0);
  /* integer bounds are held as doubles: exact up to 2^53 */
  if (is_int && ((ta && (double)mgopt_tensor_get_i64(ta, 0) != lo) || (tb && (double)mgopt_tensor_get_i64(tb, 0) != hi) ||
                 !mgopt__clip_int_bound(lo, x->type.dtype) || !mgopt__clip_int_bound(hi, x->type.dtype)))
    return 0;
  return mgopt__imp_clip_to(I, x, lo, hi);
}

static mgopt_status mgopt__exp_clip_v11(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  double lo = mgopt_op_get_float(op, "alpha", -HUGE_VAL), hi = mgopt_op_get_float(op, "beta", HUGE_VAL);
  mgopt_dtype dt = (mgopt_dtype)op->outs[0]->type.dtype;
  const char *ins[3];
  int j;
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = ins[2] = "";
  /* a bound is left out where it is the dtype's limit (what an absent one means); an infinite one is written */
  for (j = 0; j < 2; j++) {
    if ((j ? hi : lo) == mgopt__clip_limit(dt, j)) continue;
    ins[1 + j] = mgopt__exp_const(E, j ? "clip_max" : "clip_min",
                                         mgopt_tensor_new_scalar_f64(E->p, dt, j ? hi : lo));
    if (!ins[1 + j]) return mgopt__exp_nomem(E);
  }
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, *ins[2] ? 3 : *ins[1] ? 2 : 1));
}

/* ---------------------------------------------------------------- Cast */

static int mgopt__imp_cast(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_dtype to = mgopt_onnx_dtype((int32_t)mgopt__imp_aint(I->node, "to", 0));
  mgopt_op *op;
  static const mgopt_dtype ok[] = {MGOPT_DT_BOOL,  MGOPT_DT_INT8,   MGOPT_DT_UINT8, MGOPT_DT_INT16,
                                   MGOPT_DT_UINT16, MGOPT_DT_INT32, MGOPT_DT_INT64, MGOPT_DT_FP16,
                                   MGOPT_DT_FP32,  MGOPT_DT_FP64};
  int i, good_to = 0, good_from = 0;
  MGOPT__UNUSED(m);
  if (!x || mgopt__imp_attr(I->node, "saturate")) return 0;
  for (i = 0; i < (int)(sizeof ok / sizeof ok[0]); i++) {
    if (ok[i] == to) good_to = 1;
    if (ok[i] == (mgopt_dtype)x->type.dtype) good_from = 1;
  }
  if (!good_to || !good_from) return 0;
  op = mgopt__imp_op(I, "cast", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_string(op, "dtype", mgopt_dtype_name(to))) return -1;
  return mgopt__imp_done(I, op);
}

static int32_t mgopt__exp_cast_to(const mgopt_op *op) {
  size_t len = 0;
  const char *to = mgopt_op_get_string(op, "dtype", &len);
  return to ? mgopt__exp_dtype(mgopt_dtype_from_name(to, len)) : 0;
}

static const char *mgopt__exw_cast(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt__exp_cast_to(op) ? NULL : "unknown target dtype";
}

static mgopt_status mgopt__exp_cast(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  int32_t dt = mgopt__exp_cast_to(op);
  mgopt_onnx_node *n;
  n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_aint(E, n, "to", dt)) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- the table */

#define MGOPT__MAP_UNARY(onnx, kind) MGOPT__MAP_UNARY_SINCE(onnx, 1, kind)
#define MGOPT__MAP_UNARY_SINCE(onnx, since, kind) \
  {onnx, since, 0, kind, mgopt__imp_unary_float, mgopt__exp_direct, {"x", NULL, NULL}, mgopt__exw_direct}
#define MGOPT__MAP_XY(onnx, kind, imp) {onnx, 1, 0, kind, imp, mgopt__exp_direct, {"x", "y", NULL}, mgopt__exw_direct}

static const mgopt__onnx_map mgopt__onnx_elementwise[] = {
    MGOPT__MAP_UNARY("Abs", MGOPT_OP_abs),
    MGOPT__MAP_UNARY("Ceil", MGOPT_OP_ceil),
    MGOPT__MAP_UNARY("Cos", MGOPT_OP_cos),
    MGOPT__MAP_UNARY("Erf", MGOPT_OP_erf),
    MGOPT__MAP_UNARY("Exp", MGOPT_OP_exp),
    MGOPT__MAP_UNARY("Floor", MGOPT_OP_floor),
    {"Log", 1, 0, MGOPT_OP_log, mgopt__imp_log, mgopt__exp_log, {"x", NULL, NULL}, mgopt__exw_log},
    MGOPT__MAP_UNARY("Relu", MGOPT_OP_relu),
    MGOPT__MAP_UNARY("Sigmoid", MGOPT_OP_sigmoid),
    MGOPT__MAP_UNARY("Sin", MGOPT_OP_sin),
    MGOPT__MAP_UNARY("Sqrt", MGOPT_OP_sqrt),
    MGOPT__MAP_UNARY("Tanh", MGOPT_OP_tanh),
    MGOPT__MAP_UNARY("Softplus", MGOPT_OP_softplus),
    MGOPT__MAP_UNARY_SINCE("Acos", 7, MGOPT_OP_acos),
    MGOPT__MAP_UNARY_SINCE("Asin", 7, MGOPT_OP_asin),
    MGOPT__MAP_UNARY_SINCE("Atan", 7, MGOPT_OP_atan),
    MGOPT__MAP_UNARY_SINCE("Tan", 7, MGOPT_OP_tan),
    MGOPT__MAP_UNARY_SINCE("Atanh", 9, MGOPT_OP_atanh),
    MGOPT__MAP_UNARY_SINCE("Cosh", 9, MGOPT_OP_cosh),
    MGOPT__MAP_UNARY_SINCE("Sinh", 9, MGOPT_OP_sinh),
    MGOPT__MAP_UNARY("Softsign", MGOPT_OP_softsign),
    /* HardSigmoid-1 has the legacy consumed_inputs attribute */
    {"HardSigmoid", 6, 0, MGOPT_OP_sigmoid_hard, mgopt__imp_hard_sigmoid, mgopt__exp_hard_sigmoid, {NULL, NULL, NULL}, NULL},
    {"ThresholdedRelu", 10, 0, MGOPT_OP_thresholded_relu, mgopt__imp_thresholded_relu, mgopt__exp_thresholded_relu,
     {NULL, NULL, NULL}, mgopt__exw_thresholded_relu},
    /* Elu-1 has the legacy consumed_inputs attribute */
    {"Elu", 6, 0, MGOPT_OP_elu, mgopt__imp_elu, mgopt__exp_elu, {NULL, NULL, NULL}, NULL},
    /* decompositions, read only (mul and real_div write Mul and Div); Reciprocal from opset 7, where
       Mul and Div broadcast; Neg from opset 6 (Neg-1 has consumed_inputs), where mul(x, -1) writes Neg */
    {"Neg", 6, 0, MGOPT_OP_mul, mgopt__imp_neg, NULL, {NULL, NULL, NULL}, NULL},
    {"Reciprocal", 7, 0, MGOPT_OP_real_div, mgopt__imp_reciprocal, NULL, {NULL, NULL, NULL}, NULL},
    {"Sign", 1, 0, MGOPT_OP_sign, mgopt__imp_sign, mgopt__exp_direct, {"x", NULL, NULL}, mgopt__exw_direct},
    /* Round (opset 11 on) rounds half to even, as round does */
    MGOPT__MAP_UNARY("Round", MGOPT_OP_round),
    {"Not", 1, 0, MGOPT_OP_logical_not, mgopt__imp_not, mgopt__exp_direct, {"x", NULL, NULL}, mgopt__exw_direct},
    /* PRelu broadcasts its slope from opset 7 on; earlier, a single value or one per channel */
    {"PRelu", 1, 6, MGOPT_OP_prelu, mgopt__imp_prelu, mgopt__exp_prelu_v1, {NULL, NULL, NULL}, mgopt__exw_prelu_v1},
    {"PRelu", 7, 0, MGOPT_OP_prelu, mgopt__imp_prelu, mgopt__exp_prelu, {NULL, NULL, NULL}, mgopt__exw_prelu},
    {"LeakyRelu", 1, 0, MGOPT_OP_leaky_relu, mgopt__imp_leaky_relu, mgopt__exp_leaky_relu, {NULL, NULL, NULL}, NULL},
    /* Gelu is an ONNX op from opset 20; read in any model that has it */
    {"Add", 7, 0, MGOPT_OP_bias_add, NULL, mgopt__exp_bias_add, {NULL, NULL, NULL}, mgopt__exw_bias_add},
    {"Gelu", 1, 19, MGOPT_OP_gelu, mgopt__imp_gelu, NULL, {NULL, NULL, NULL}, NULL},
    {"Gelu", 20, 0, MGOPT_OP_gelu, mgopt__imp_gelu, mgopt__exp_gelu, {NULL, NULL, NULL}, mgopt__exw_gelu},
    MGOPT__MAP_XY("Add", MGOPT_OP_add, mgopt__imp_binary),
    MGOPT__MAP_XY("Sub", MGOPT_OP_sub, mgopt__imp_binary),
    {"Mul", 1, 0, MGOPT_OP_mul, mgopt__imp_binary, mgopt__exp_mul_div, {"x", "y", NULL}, mgopt__exw_direct},
    {"Div", 1, 0, MGOPT_OP_real_div, mgopt__imp_binary_float, mgopt__exp_mul_div, {"x", "y", NULL}, mgopt__exw_direct},
    /* Pow: one float dtype before opset 12; from 12 integer bases and an exponent of any numeric dtype */
    {"Pow", 1, 11, MGOPT_OP_pow, mgopt__imp_binary_float, mgopt__exp_direct, {"x", "y", NULL}, mgopt__exw_pow},
    {"Pow", 12, 0, MGOPT_OP_pow, mgopt__imp_pow, mgopt__exp_direct, {"x", "y", NULL}, mgopt__exw_pow},
    /* Max and Min of two inputs (integers from opset 12); one or three and more inputs stay opaque */
    {"Max", 1, 11, MGOPT_OP_maximum, mgopt__imp_max_min, mgopt__exp_direct, {"x", "y", NULL}, mgopt__exw_max_min},
    {"Max", 12, 0, MGOPT_OP_maximum, mgopt__imp_max_min, mgopt__exp_direct, {"x", "y", NULL}, mgopt__exw_max_min},
    {"Min", 1, 11, MGOPT_OP_minimum, mgopt__imp_max_min, mgopt__exp_direct, {"x", "y", NULL}, mgopt__exw_max_min},
    {"Min", 12, 0, MGOPT_OP_minimum, mgopt__imp_max_min, mgopt__exp_direct, {"x", "y", NULL}, mgopt__exw_max_min},
    {"Mod", 10, 0, MGOPT_OP_mod, mgopt__imp_mod, mgopt__exp_direct, {"x", "y", NULL}, mgopt__exw_mod},
    MGOPT__MAP_XY("Equal", MGOPT_OP_equal, mgopt__imp_compare),
    MGOPT__MAP_XY("Less", MGOPT_OP_less, mgopt__imp_compare),
    MGOPT__MAP_XY("Greater", MGOPT_OP_greater, mgopt__imp_compare),
    MGOPT__MAP_XY("LessOrEqual", MGOPT_OP_less_equal, mgopt__imp_compare),
    MGOPT__MAP_XY("GreaterOrEqual", MGOPT_OP_greater_equal, mgopt__imp_compare),
    MGOPT__MAP_XY("And", MGOPT_OP_logical_and, mgopt__imp_logical),
    MGOPT__MAP_XY("Or", MGOPT_OP_logical_or, mgopt__imp_logical),
    MGOPT__MAP_XY("Xor", MGOPT_OP_logical_xor, mgopt__imp_logical),
    {"Where", 1, 0, MGOPT_OP_select, mgopt__imp_where, mgopt__exp_direct, {"cond", "a", "b"}, mgopt__exw_direct},
    {"Identity", 1, 0, MGOPT_OP_identity, mgopt__imp_identity, mgopt__exp_direct, {"x", NULL, NULL}, mgopt__exw_direct},
    {"Dropout", 1, 6, MGOPT_OP_identity, mgopt__imp_dropout_v1, NULL, {NULL, NULL, NULL}, NULL},
    {"Dropout", 7, 0, MGOPT_OP_identity, mgopt__imp_dropout, NULL, {NULL, NULL, NULL}, NULL},
    {"Clip", 1, 10, MGOPT_OP_clip, mgopt__imp_clip_v6, mgopt__exp_clip_v6, {NULL, NULL, NULL}, mgopt__exw_clip},
    {"Clip", 11, 11, MGOPT_OP_clip, mgopt__imp_clip_v11, mgopt__exp_clip_v11, {NULL, NULL, NULL}, mgopt__exw_clip},
    /* integers from opset 12 */
    {"Clip", 12, 0, MGOPT_OP_clip, mgopt__imp_clip_v11, mgopt__exp_clip_v11, {NULL, NULL, NULL}, mgopt__exw_clip},
    {"Cast", 1, 0, MGOPT_OP_cast, mgopt__imp_cast, mgopt__exp_cast, {NULL, NULL, NULL}, mgopt__exw_cast},
};

#undef MGOPT__MAP_UNARY
#undef MGOPT__MAP_UNARY_SINCE
#undef MGOPT__MAP_XY

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_elementwise(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_elementwise);
  return mgopt__onnx_elementwise;
}
