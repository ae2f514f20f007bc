/* src/onnx/map_shape.c — ONNX <-> canonical mappings of data movement: Transpose, Reshape, Flatten, Squeeze, Unsqueeze, Concat, Split, Slice, Gather, GatherElements, Pad, Tile, DepthToSpace, Constant. */
#include "convert_internal.h"

/* ---------------------------------------------------------------- Transpose */

static int mgopt__imp_transpose(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  const int64_t *perm = NULL;
  int64_t n = mgopt__imp_aints(I->node, "perm", &perm), i, *rev = NULL;
  int r = mgopt__imp_rank(x);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || r < 0) return 0;
  if (n < 0) {
    rev = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(r + 1), 8);
    if (!rev) return -1;
    for (i = 0; i < r; i++) rev[i] = r - 1 - i;
    perm = rev;
    n = r;
  }
  if (n != r) return 0;
  op = mgopt__imp_op(I, "transpose", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_ints(op, "perm", perm, n)) return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_transpose(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  const int64_t *v = NULL;
  MGOPT__UNUSED(m);
  return mgopt_op_get_ints(p, op, "perm", &v) < 0 ? "no perm" : NULL;
}

static mgopt_status mgopt__exp_transpose(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  const int64_t *v = NULL;
  int64_t k = mgopt_op_get_ints(E->p, op, "perm", &v);
  mgopt_onnx_node *n;
  n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_aints(E, n, "perm", v, k)) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- Reshape, Flatten */

/* Reshape with a constant shape whose entries are all resolvable without the
   "0 copies the input dim" rule (a 0 is resolved from a static input dim). */
static int mgopt__imp_reshape(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *sv = mgopt__imp_in(I, 1);
  int64_t *shape = NULL, n, i;
  int allowzero = (int)mgopt__imp_aint(I->node, "allowzero", 0);
  mgopt_op *op;
  mgopt_value *c;
  MGOPT__UNUSED(m);
  if (!x || !sv) return 0;
  n = mgopt__imp_const_ints(I, sv, &shape);
  if (n < 0) return 0;
  for (i = 0; i < n; i++) {
    if (shape[i] == 0 && !allowzero) {
      if (x->type.rank <= i || !mgopt_dim_is_static(x->type.dims[i])) return 0;
      shape[i] = x->type.dims[i].v;
      if (shape[i] == 0) return 0;
    } else if (shape[i] == 0 || shape[i] < -1) {
      return 0;
    }
  }
  c = mgopt__imp_const_i32s(I, NULL, "shape", shape, n);
  if (!c) return 0;
  op = mgopt__imp_op(I, "reshape", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "shape", c)) return -1;
  return mgopt__imp_done(I, op);
}

/* MIL copies the input dim for a 0 in the shape; ONNX Reshape does too (allowzero 0). */
static const char *mgopt__exw_reshape(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt_op_operand(op, "shape") ? NULL : "no shape";
}

static mgopt_status mgopt__exp_reshape(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *s = mgopt_op_operand(op, "shape");
  const char *ins[2];
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_as_i64(E, s);
  if (!ins[1]) return mgopt__exp_nomem(E);
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 2));
}

/* Flatten to 2-d: a reshape when the input shape is static. */
static int mgopt__imp_flatten(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *c;
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", 1), shape[2] = {1, 1}, i;
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || r < 0 || !mgopt_type_is_static(&x->type)) return 0;
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) return 0;
  for (i = 0; i < r; i++)
    if (!mgopt__mul_i64(shape[i < axis ? 0 : 1], x->type.dims[i].v, &shape[i < axis ? 0 : 1])) return 0;
  c = mgopt__imp_const_i32s(I, NULL, "shape", shape, 2);
  if (!c) return 0;
  op = mgopt__imp_op(I, "reshape", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "shape", c)) return -1;
  return mgopt__imp_done(I, op);
}

/* ---------------------------------------------------------------- Squeeze, Unsqueeze

   Before opset 13 the axes are an attribute, from 13 on an input. */

static int mgopt__imp_squeeze(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int64_t *axes = NULL, n = mgopt__imp_axes(I, 1, m->since < 13, &axes);
  mgopt_op *op;
  if (!x || n == -1) return 0;
  op = mgopt__imp_op(I, "squeeze", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x)) return -1;
  if (n >= 0 && mgopt_op_set_ints(op, "axes", axes, n)) return -1;
  return mgopt__imp_done(I, op);
}

static int mgopt__imp_unsqueeze(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int64_t *axes = NULL, n = mgopt__imp_axes(I, 1, m->since < 13, &axes);
  mgopt_op *op;
  if (!x || n < 1) return 0;
  op = mgopt__imp_op(I, "expand_dims", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_ints(op, "axes", axes, n)) return -1;
  return mgopt__imp_done(I, op);
}

/* squeeze without axes is Squeeze without axes; expand_dims needs them */
static const char *mgopt__exw_squeeze_like(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  const int64_t *v = NULL;
  MGOPT__UNUSED(m);
  return op->kind == MGOPT_OP_expand_dims && mgopt_op_get_ints(p, op, "axes", &v) < 0 ? "no axes" : NULL;
}

static mgopt_status mgopt__exp_squeeze_like(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  const int64_t *v = NULL;
  int64_t k = mgopt_op_get_ints(E->p, op, "axes", &v);
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  if (k < 0) {
    return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 1));
  }
  if (m->since >= 13) {
    ins[1] = mgopt__exp_i64_const(E, "axes", v, k);
    if (!ins[1]) return mgopt__exp_nomem(E);
    return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 2));
  }
  n = mgopt__exp_simple(E, op, m->onnx, ins, 1);
  if (!n || !mgopt__exp_aints(E, n, "axes", v, k)) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- Concat, Split */

static int mgopt__imp_concat(mgopt__imp *I, const mgopt__onnx_map *m) {
  int64_t n = I->node->ninputs, i, axis = mgopt__imp_aint(I->node, "axis", 1);
  mgopt_value **vals;
  mgopt_op *op;
  int r = -1;
  MGOPT__UNUSED(m);
  if (n < 1 || n > 100000 || !mgopt__imp_attr(I->node, "axis")) return 0;
  vals = (mgopt_value **)mgopt_program_alloc(I->p, sizeof(mgopt_value *) * (size_t)n, 8);
  if (!vals) return -1;
  for (i = 0; i < n; i++) {
    vals[i] = mgopt__imp_in(I, i);
    if (!vals[i]) return 0;
    if (i == 0) r = mgopt__imp_rank(vals[0]);
    if (mgopt__imp_rank(vals[i]) != r || vals[i]->type.dtype != vals[0]->type.dtype) return 0;
  }
  if (r < 1 || axis < -r || axis >= r) return 0;
  op = mgopt__imp_op(I, "concat", 1, 0);
  if (!op || mgopt_op_set_operand_list(op, "values", vals, (int32_t)n) || mgopt_op_set_int(op, "axis", axis) ||
      mgopt_op_set_bool(op, "interleave", 0))
    return -1;
  return mgopt__imp_done(I, op);
}

/* An interleaved concat of n values of one static shape S on axis a, as the
   channel shuffle it stands for: Concat(a) -> Reshape(S[:a] + [n, S[a]] +
   S[a+1:]) -> Transpose(swap a, a+1) -> Reshape(out), the form
   detect_concat_interleave reads. mgopt__exw_concat_n has checked the shapes,
   the axis and the opset (Reshape's shape input: opset 5). */
static mgopt_status mgopt__exp_concat_interleaved(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m,
                                                  const char *const *vals, int32_t nv) {
  int32_t si = mgopt_op_slot_index(op, "values"), i, r;
  const mgopt_value *v0 = nv > 0 ? op->slots[si].uses[0].value : NULL;
  int64_t a, split[MGOPT_MAX_RANK + 1], perm[MGOPT_MAX_RANK + 1], outs[MGOPT_MAX_RANK];
  const char *cat, *rs, *tr, *ins[2];
  mgopt_onnx_node *n;
  MGOPT__UNUSED(m);
  r = v0 ? v0->type.rank : -1;
  a = r > 0 ? mgopt_op_get_int(op, "axis", 0) : -1;
  if (a < 0) a += r;
  for (i = 0; i < r; i++) {
    int64_t dim = v0->type.dims[i].v;
    split[i < a ? i : i + 1] = dim;
    outs[i] = i == a ? dim * nv : dim;
  }
  split[a] = nv;
  for (i = 0; i <= r; i++) perm[i] = i == a ? a + 1 : i == a + 1 ? a : i;
  cat = mgopt__exp_fresh(E, mgopt__exp_vname(op->outs[0]));
  rs = mgopt__exp_fresh(E, mgopt__exp_vname(op->outs[0]));
  tr = mgopt__exp_fresh(E, mgopt__exp_vname(op->outs[0]));
  if (!cat || !rs || !tr) return mgopt__exp_nomem(E);
  n = mgopt__exp_node(E, "Concat", "", NULL);
  if (!n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, vals, nv) ||
      !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &cat, 1) || !mgopt__exp_aint(E, n, "axis", a))
    return mgopt__exp_nomem(E);
  ins[0] = cat;
  ins[1] = mgopt__exp_i64_const(E, "shape", split, r + 1);
  n = mgopt__exp_node(E, "Reshape", "", NULL);
  if (!ins[1] || !n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, ins, 2) ||
      !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &rs, 1))
    return mgopt__exp_nomem(E);
  n = mgopt__exp_node(E, "Transpose", "", NULL);
  if (!n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, &rs, 1) ||
      !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &tr, 1) || !mgopt__exp_aints(E, n, "perm", perm, r + 1))
    return mgopt__exp_nomem(E);
  ins[0] = tr;
  ins[1] = mgopt__exp_i64_const(E, "shape", outs, r);
  if (!ins[1]) return mgopt__exp_nomem(E);
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, "Reshape", ins, 2));
}

/* Concat writes any plain concat; an interleaved one needs Reshape's shape
   input (opset 5: the row below) and n values of one static shape. */
static const char *mgopt__exw_concat_n(const mgopt_op *op, int interleave_ok) {
  int32_t si = mgopt_op_slot_index(op, "values"), i, d, r;
  const mgopt_value *v0;
  int64_t a;
  if (si < 0 || op->slots[si].n < 1) return "no values";
  if (!mgopt_op_get_bool(op, "interleave", 0)) return NULL;
  if (!interleave_ok) return "interleaved concat needs opset 5";
  v0 = op->slots[si].uses[0].value;
  r = v0->type.rank;
  a = mgopt_op_get_int(op, "axis", 0);
  if (a < 0) a += r;
  if (r < 1 || r >= MGOPT_MAX_RANK || a < 0 || a >= r) return "interleaved concat of this rank or axis";
  for (i = 0; i < op->slots[si].n; i++) {
    const mgopt_value *v = op->slots[si].uses[i].value;
    if (v->type.rank != r) return "interleaved concat of unequal ranks";
    for (d = 0; d < r; d++)
      if (!mgopt_dim_is_static(v->type.dims[d]) || v->type.dims[d].v < 1 || v->type.dims[d].v != v0->type.dims[d].v)
        return "interleaved concat of shapes not static and equal";
  }
  return NULL;
}
static const char *mgopt__exw_concat_1(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt__exw_concat_n(op, 0);
}
static const char *mgopt__exw_concat(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt__exw_concat_n(op, 1);
}

static mgopt_status mgopt__exp_concat(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  int32_t si = mgopt_op_slot_index(op, "values"), i;
  const char **vals;
  mgopt_onnx_node *n;
  vals = (const char **)mgopt_program_alloc(E->p, sizeof(char *) * (size_t)(op->slots[si].n + 1), 8);
  if (!vals) return mgopt__exp_nomem(E);
  for (i = 0; i < op->slots[si].n; i++) vals[i] = mgopt__exp_vname(op->slots[si].uses[i].value);
  if (mgopt_op_get_bool(op, "interleave", 0)) return mgopt__exp_concat_interleaved(E, op, m, vals, op->slots[si].n);
  n = mgopt__exp_simple(E, op, m->onnx, vals, op->slots[si].n);
  if (!n || !mgopt__exp_aint(E, n, "axis", mgopt_op_get_int(op, "axis", 0))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* Split with sizes known: explicit split, or an even split of a static dim. */
static int mgopt__imp_split(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", 0), nout = I->node->noutputs, *sizes = NULL, n = -2, i;
  const int64_t *as = NULL;
  mgopt_op *op;
  if (!x || r < 1 || nout < 1 || mgopt__imp_nout(I->node) != nout) return 0;
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return 0;
  if (m->since < 13) { /* sizes: an attribute before opset 13, an input from 13 on */
    n = mgopt__imp_aints(I->node, "split", &as);
    if (n >= 0) {
      sizes = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(n + 1), 8);
      if (sizes && n) memcpy(sizes, as, sizeof(int64_t) * (size_t)n);
    }
  } else if (I->node->ninputs > 1 && I->node->inputs[1].len) {
    n = mgopt__imp_const_ints(I, mgopt__imp_in(I, 1), &sizes);
    if (n < 0) return 0;
  }
  if (n == -2 || !sizes) {
    /* even split of a static dim (opset 18's uneven num_outputs split stays opaque) */
    int64_t dim;
    if (!mgopt_dim_is_static(x->type.dims[axis])) return 0;
    dim = x->type.dims[axis].v;
    if (dim % nout) return 0;
    op = mgopt__imp_op(I, "split", (int32_t)nout, 0);
    if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_int(op, "num_splits", nout) ||
        mgopt_op_set_int(op, "axis", axis))
      return -1;
    return mgopt__imp_done(I, op);
  }
  if (n != nout) return 0;
  for (i = 0; i < n; i++)
    if (sizes[i] < 0) return 0;
  op = mgopt__imp_op(I, "split", (int32_t)nout, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_ints(op, "split_sizes", sizes, n) ||
      mgopt_op_set_int(op, "axis", axis))
    return -1;
  return mgopt__imp_done(I, op);
}

/* An even split without sizes is ONNX's default (num_outputs from opset 18);
   sizes are an attribute before opset 13, an input from 13 on. Without
   num_splits or split_sizes the sizes come from the outputs' static dims. */
static const char *mgopt__exw_split(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  const int64_t *v = NULL;
  int64_t axis = mgopt_op_get_int(op, "axis", 0);
  mgopt_value *x = mgopt_op_operand(op, "x");
  int r = x ? x->type.rank : -1;
  int32_t i;
  MGOPT__UNUSED(m);
  if (mgopt_op_get_ints(p, op, "split_sizes", &v) >= 0 || mgopt_op_attr(op, "num_splits")) return NULL;
  if (axis < 0) axis += r;
  if (r < 0 || axis < 0 || axis >= r) return "unknown split axis";
  for (i = 0; i < op->nouts; i++)
    if (op->outs[i]->type.rank != r || !mgopt_dim_is_static(op->outs[i]->type.dims[axis])) return "split sizes unknown";
  return NULL;
}

static mgopt_status mgopt__exp_split(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  int64_t *sizes, axis = mgopt_op_get_int(op, "axis", 0), k;
  const int64_t *v = NULL;
  mgopt_value *x = mgopt_op_operand(op, "x");
  int r = x ? x->type.rank : -1;
  int32_t i;
  const char *ins[2];
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  k = mgopt_op_get_ints(E->p, op, "split_sizes", &v);
  if (k < 0 && mgopt_op_attr(op, "num_splits")) {
    n = mgopt__exp_simple(E, op, m->onnx, ins, 1);
    if (!n || !mgopt__exp_aint(E, n, "axis", axis)) return mgopt__exp_nomem(E);
    if (m->since >= 18 && !mgopt__exp_aint(E, n, "num_outputs", op->nouts)) return mgopt__exp_nomem(E);
    return MGOPT_OK;
  }
  if (k < 0) {
    /* even split: sizes from the outputs' static dims */
    if (axis < 0) axis += r;
    sizes = (int64_t *)mgopt_program_alloc(E->p, sizeof(int64_t) * (size_t)(op->nouts + 1), 8);
    if (!sizes) return mgopt__exp_nomem(E);
    for (i = 0; i < op->nouts; i++) sizes[i] = op->outs[i]->type.dims[axis].v;
    v = sizes;
    k = op->nouts;
  }
  if (m->since >= 13) {
    ins[1] = mgopt__exp_i64_const(E, "split", v, k);
    if (!ins[1]) return mgopt__exp_nomem(E);
    n = mgopt__exp_simple(E, op, m->onnx, ins, 2);
    if (!n || !mgopt__exp_aint(E, n, "axis", axis)) return mgopt__exp_nomem(E);
    return MGOPT_OK;
  }
  n = mgopt__exp_simple(E, op, m->onnx, ins, 1);
  if (!n || !mgopt__exp_aint(E, n, "axis", axis) || !mgopt__exp_aints(E, n, "split", v, k)) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- Slice

   Before opset 10 starts, ends and axes are attributes (unit steps); from 10
   on they and the steps are inputs. */

/* Slice with constant starts/ends/axes/steps on an input of known rank. */
static int mgopt__imp_slice(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *c[3];
  int r = mgopt__imp_rank(x);
  int64_t *starts = NULL, *ends = NULL, *axes = NULL, *steps = NULL, ns, ne, na = -2, nst = -2, i;
  int64_t *b, *e, *st, *bm, *em;
  mgopt_op *op;
  if (!x || r < 1) return 0;
  if (m->since < 10) {
    const int64_t *a1 = NULL, *a2 = NULL, *a3 = NULL;
    ns = mgopt__imp_aints(I->node, "starts", &a1);
    ne = mgopt__imp_aints(I->node, "ends", &a2);
    na = mgopt__imp_aints(I->node, "axes", &a3);
    starts = (int64_t *)(uintptr_t)a1;
    ends = (int64_t *)(uintptr_t)a2;
    axes = (int64_t *)(uintptr_t)a3;
  } else {
    ns = mgopt__imp_const_ints(I, mgopt__imp_in(I, 1), &starts);
    ne = mgopt__imp_const_ints(I, mgopt__imp_in(I, 2), &ends);
    if (I->node->ninputs > 3 && I->node->inputs[3].len) {
      na = mgopt__imp_const_ints(I, mgopt__imp_in(I, 3), &axes);
      if (na < 0) return 0;
    }
    if (I->node->ninputs > 4 && I->node->inputs[4].len) {
      nst = mgopt__imp_const_ints(I, mgopt__imp_in(I, 4), &steps);
      if (nst < 0) return 0;
    }
  }
  if (ns < 0 || ne != ns || (na >= 0 && na != ns) || (nst >= 0 && nst != ns)) return 0;
  b = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)r * 5, 8);
  if (!b) return -1;
  e = b + r;
  st = e + r;
  bm = st + r;
  em = bm + r;
  for (i = 0; i < r; i++) {
    b[i] = 0;
    e[i] = 0;
    st[i] = 1;
    bm[i] = 1;
    em[i] = 1;
  }
  for (i = 0; i < ns; i++) {
    int64_t ax = na >= 0 ? axes[i] : i, s = nst >= 0 ? steps[i] : 1, dim;
    if (ax < 0) ax += r;
    if (ax < 0 || ax >= r || s == 0 || !bm[ax]) return 0; /* bad or repeated axis */
    {
      int64_t j, aj;
      for (j = 0; j < i; j++) { /* a whole axis below keeps its mask: find a repeat here */
        aj = na >= 0 ? axes[j] : j;
        if (aj < 0) aj += r;
        if (aj == ax) return 0;
      }
    }
    if (!mgopt_dim_is_static(x->type.dims[ax])) {
      /* an unknown dim: only the whole axis forward (start 0 or clamped to 0, end at or past
         any int32 dim) is expressible, as masks */
      if (s < 0 || s > INT32_MAX || starts[i] > 0 || (starts[i] < 0 && starts[i] > -(int64_t)INT32_MAX - 1) ||
          ends[i] < INT32_MAX)
        return 0;
      bm[ax] = 1;
      em[ax] = 1;
      st[ax] = s;
      b[ax] = 0;
      e[ax] = 0;
      continue;
    }
    dim = x->type.dims[ax].v;
    /* clamp as ONNX does, then express with masks where the bound is the end */
    {
      int64_t lo = starts[i], hi = ends[i];
      if (lo < 0) lo += dim;
      if (hi < 0) hi += dim;
      if (s > 0) {
        lo = lo < 0 ? 0 : lo > dim ? dim : lo;
        hi = hi < 0 ? 0 : hi > dim ? dim : hi;
      } else {
        lo = lo < 0 ? -1 : lo > dim - 1 ? dim - 1 : lo;
        hi = hi < -1 ? -1 : hi > dim - 1 ? dim - 1 : hi;
      }
      if (s < 0 && hi == -1) em[ax] = 1, hi = 0;
      else em[ax] = 0;
      if (s < 0 && lo == -1) return 0; /* empty result from the far end: leave it to ONNX */
      bm[ax] = 0;
      b[ax] = lo;
      e[ax] = hi;
      st[ax] = s;
      if (lo > INT32_MAX || hi > INT32_MAX || s > INT32_MAX || s < INT32_MIN) return 0;
    }
  }
  c[0] = mgopt__imp_const_i32s(I, NULL, "begin", b, r);
  c[1] = mgopt__imp_const_i32s(I, NULL, "end", e, r);
  c[2] = mgopt__imp_const_i32s(I, NULL, "stride", st, r);
  if (!c[0] || !c[1] || !c[2]) return -1;
  op = mgopt__imp_op(I, "slice_by_index", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "begin", c[0]) ||
      mgopt_op_set_operand(op, "end", c[1]) || mgopt_op_set_operand(op, "stride", c[2]))
    return -1;
  {
    mgopt_attr a;
    memset(&a, 0, sizeof a);
    a.kind = MGOPT_ATTR_BOOLS;
    a.n = r;
    a.name = "begin_mask";
    a.u.ints = bm;
    if (mgopt_op_set_attr(op, &a)) return -1;
    a.name = "end_mask";
    a.u.ints = em;
    if (mgopt_op_set_attr(op, &a)) return -1;
  }
  return mgopt__imp_done(I, op);
}

/* Constant bounds, no squeezed axis, and unit steps before opset 10. */
static const char *mgopt__exw_slice(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  mgopt_tensor *tb = mgopt_value_const(mgopt_op_operand(op, "begin"));
  mgopt_tensor *te = mgopt_value_const(mgopt_op_operand(op, "end"));
  mgopt_value *sv = mgopt_op_operand(op, "stride");
  mgopt_tensor *ts = sv ? mgopt_value_const(sv) : NULL;
  const int64_t *bm = NULL, *em = NULL, *sm = NULL;
  int64_t nbm, nem, nsm, r, j;
  if (!x || !tb || !te || (sv && !ts)) return "non-constant bounds";
  r = tb->numel;
  if (r > MGOPT_MAX_RANK || te->numel != r || (ts && ts->numel != r)) return "bad bounds";
  nbm = mgopt_op_get_ints(p, op, "begin_mask", &bm);
  nem = mgopt_op_get_ints(p, op, "end_mask", &em);
  nsm = mgopt_op_get_ints(p, op, "squeeze_mask", &sm);
  for (j = 0; j < nsm; j++)
    if (sm[j]) return "squeeze_mask";
  for (j = 0; j < r && m->since < 10; j++) {
    int64_t s = ts ? mgopt_tensor_get_i64(ts, j) : 1;
    if (s != 1 && !(j < nbm && bm[j] && j < nem && em[j] && s == 1)) return "Slice with steps needs opset 10";
  }
  return NULL;
}

static mgopt_status mgopt__exp_slice(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  mgopt_tensor *tb = mgopt_value_const(mgopt_op_operand(op, "begin"));
  mgopt_tensor *te = mgopt_value_const(mgopt_op_operand(op, "end"));
  mgopt_value *sv = mgopt_op_operand(op, "stride");
  mgopt_tensor *ts = sv ? mgopt_value_const(sv) : NULL;
  const int64_t *bm = NULL, *em = NULL;
  int64_t nbm, nem, r, j, cnt = 0;
  int64_t st[MGOPT_MAX_RANK], en[MGOPT_MAX_RANK], ax[MGOPT_MAX_RANK], stp[MGOPT_MAX_RANK];
  const char *ins[5];
  mgopt_onnx_node *n;
  MGOPT__UNUSED(x);
  ins[0] = mgopt__exp_in(op, "x");
  r = tb->numel;
  nbm = mgopt_op_get_ints(E->p, op, "begin_mask", &bm);
  nem = mgopt_op_get_ints(E->p, op, "end_mask", &em);
  for (j = 0; j < r; j++) {
    int64_t s = ts ? mgopt_tensor_get_i64(ts, j) : 1;
    int64_t b = mgopt_tensor_get_i64(tb, j), e = mgopt_tensor_get_i64(te, j);
    int bmask = j < nbm && bm[j], emask = j < nem && em[j];
    if (bmask && emask && s == 1) continue; /* the whole axis */
    st[cnt] = bmask ? (s > 0 ? 0 : INT64_MAX) : b;
    en[cnt] = emask ? (s > 0 ? INT64_MAX : INT64_MIN) : e;
    ax[cnt] = j;
    stp[cnt] = s;
    cnt++;
  }
  if (cnt == 0) return mgopt__exp_done(E, mgopt__exp_simple(E, op, "Identity", &ins[0], 1));
  if (m->since < 10) {
    for (j = 0; j < cnt; j++)
      if (en[j] == INT64_MAX) en[j] = INT32_MAX;
    n = mgopt__exp_simple(E, op, m->onnx, ins, 1);
    if (!n || !mgopt__exp_aints(E, n, "starts", st, cnt) || !mgopt__exp_aints(E, n, "ends", en, cnt) ||
        !mgopt__exp_aints(E, n, "axes", ax, cnt))
      return mgopt__exp_nomem(E);
    return MGOPT_OK;
  }
  {
    /* unit steps are the default, and then axes 0, 1, ... are too */
    int64_t nin = 3;
    for (j = 0; j < cnt; j++) {
      if (stp[j] != 1) nin = 5;
      if (ax[j] != j && nin < 4) nin = 4;
    }
    ins[1] = mgopt__exp_i64_const(E, "starts", st, cnt);
    ins[2] = mgopt__exp_i64_const(E, "ends", en, cnt);
    ins[3] = nin > 3 ? mgopt__exp_i64_const(E, "axes", ax, cnt) : "";
    ins[4] = nin > 4 ? mgopt__exp_i64_const(E, "steps", stp, cnt) : "";
    if (!ins[1] || !ins[2] || !ins[3] || !ins[4]) return mgopt__exp_nomem(E);
    return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, nin));
  }
}

/* ---------------------------------------------------------------- Gather */

static int mgopt__imp_gather(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *idx = mgopt__imp_in(I, 1);
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || !idx || r < 1 || (idx->type.dtype != MGOPT_DT_INT32 && idx->type.dtype != MGOPT_DT_INT64)) return 0;
  if (axis < -r || axis >= r) return 0;
  op = mgopt__imp_op(I, "gather", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "indices", idx) ||
      mgopt_op_set_int(op, "axis", axis))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_gather(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (mgopt_op_get_int(op, "batch_dims", 0) != 0) return "batch_dims";
  return mgopt_op_operand(op, "x") && mgopt_op_operand(op, "indices") ? NULL : "an operand is missing";
}

static mgopt_status mgopt__exp_gather(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_in(op, "indices");
  n = mgopt__exp_simple(E, op, m->onnx, ins, 2);
  if (!n || !mgopt__exp_aint(E, n, "axis", mgopt_op_get_int(op, "axis", 0))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- GatherElements

   gather_along_axis where indices match x off the axis (equal static dims or
   one symbol): ONNX's smaller index dims have no MIL form and stay opaque. */
static int mgopt__imp_gather_elements(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *idx = mgopt__imp_in(I, 1);
  int r = mgopt__imp_rank(x), k;
  int64_t axis = mgopt__imp_aint(I->node, "axis", 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || !idx || r < 1 || mgopt__imp_rank(idx) != r ||
      (idx->type.dtype != MGOPT_DT_INT32 && idx->type.dtype != MGOPT_DT_INT64))
    return 0;
  if (axis < -r || axis >= r) return 0;
  for (k = 0; k < r; k++) {
    mgopt_dim a = x->type.dims[k], b = idx->type.dims[k];
    if (k == axis || k == axis + r) continue;
    if (a.sym ? a.sym != b.sym : (a.v < 0 || b.sym || a.v != b.v)) return 0;
  }
  op = mgopt__imp_op(I, "gather_along_axis", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "indices", idx) ||
      mgopt_op_set_int(op, "axis", axis))
    return -1;
  return mgopt__imp_done(I, op);
}

/* ---------------------------------------------------------------- Pad

   Before opset 11 the pads and the value are attributes; from 11 on, inputs. */

/* Constant pads [b0, b1, ..., e0, e1, ...] over every dim -> MIL's [b0, e0, b1, e1, ...]. */
static int mgopt__imp_pad(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *c;
  int r = mgopt__imp_rank(x);
  int64_t *pads = NULL, n, i, *mp;
  const int64_t *ap = NULL;
  double cval = 0.0;
  const char *mode = "constant";
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || r < 1) return 0;
  if (mgopt__imp_astr(I->node, "mode", "reflect")) mode = "reflect";
  else if (mgopt__imp_astr(I->node, "mode", "edge")) mode = "replicate";
  else if (mgopt__imp_attr(I->node, "mode") && !mgopt__imp_astr(I->node, "mode", "constant")) return 0;
  if (m->since < 11) {
    n = mgopt__imp_aints(I->node, "pads", &ap);
    if (n < 0) n = mgopt__imp_aints(I->node, "paddings", &ap);
    pads = (int64_t *)(uintptr_t)ap;
    cval = mgopt__imp_afloat(I->node, "value", 0.0);
  } else {
    mgopt_value *cv = mgopt__imp_in(I, 2);
    n = mgopt__imp_const_ints(I, mgopt__imp_in(I, 1), &pads);
    if (I->node->ninputs > 3 && I->node->inputs[3].len) return 0; /* axes input */
    if (cv) {
      mgopt_tensor *t = mgopt_value_const(cv);
      if (!t || t->numel != 1) return 0;
      cval = mgopt_tensor_get_f64(t, 0);
    }
  }
  if (n != 2 * r) return 0;
  mp = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(2 * r), 8);
  if (!mp) return -1;
  for (i = 0; i < r; i++) {
    mp[2 * i] = pads[i];
    mp[2 * i + 1] = pads[r + i];
    if (mp[2 * i] < 0 || mp[2 * i + 1] < 0) return 0; /* cropping pads */
    if (strcmp(mode, "constant") != 0 && (mp[2 * i] || mp[2 * i + 1]) && i < r - 2) return 0;
  }
  c = mgopt__imp_const_i32s(I, NULL, "pad", mp, 2 * r);
  if (!c) return 0;
  op = mgopt__imp_op(I, "pad", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "pad", c) ||
      mgopt_op_set_string(op, "mode", mode) || mgopt_op_set_float(op, "constant_val", cval))
    return -1;
  return mgopt__imp_done(I, op);
}

/* Constant pads over the last dims of an input of known rank; MIL's modes
   constant, reflect and replicate are Pad's constant, reflect and edge. */
static const char *mgopt__exw_pad(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_tensor *tp = mgopt_value_const(mgopt_op_operand(op, "pad"));
  mgopt_value *x = mgopt_op_operand(op, "x");
  const char *mode = mgopt_op_get_string(op, "mode", NULL);
  int64_t r = x ? x->type.rank : -1;
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!tp || r < 1 || r > MGOPT_MAX_RANK || tp->numel % 2 || tp->numel / 2 > r) return "non-constant pad";
  if (mode && strcmp(mode, "constant") != 0 && strcmp(mode, "reflect") != 0 && strcmp(mode, "replicate") != 0)
    return "this pad mode";
  return NULL;
}

static mgopt_status mgopt__exp_pad(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_tensor *tp = mgopt_value_const(mgopt_op_operand(op, "pad"));
  mgopt_value *x = mgopt_op_operand(op, "x");
  size_t len = 0;
  const char *mode = mgopt_op_get_string(op, "mode", &len);
  int64_t r = x->type.rank, pads[2 * MGOPT_MAX_RANK], k, j;
  const char *ins[3];
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  k = tp->numel / 2;
  for (j = 0; j < 2 * r; j++) pads[j] = 0;
  for (j = 0; j < k; j++) {
    pads[r - k + j] = mgopt_tensor_get_i64(tp, 2 * j);
    pads[2 * r - k + j] = mgopt_tensor_get_i64(tp, 2 * j + 1);
  }
  if (mode && strcmp(mode, "replicate") == 0) mode = "edge";
  if (m->since >= 11) {
    mgopt_tensor *cv = mgopt_tensor_new_scalar_f64(E->p, (mgopt_dtype)x->type.dtype, mgopt_op_get_float(op, "constant_val", 0.0));
    const char *cn = mgopt__exp_fresh(E, "pad_value");
    mgopt_onnx_tensor *ot;
    ins[1] = mgopt__exp_i64_const(E, "pads", pads, 2 * r);
    if (!ins[1] || !cv || !cn) return mgopt__exp_nomem(E);
    if (E->g->inits_ok) {
      ot = (mgopt_onnx_tensor *)mgopt__exv_push(E, &E->g->inits, sizeof(mgopt_onnx_tensor));
      if (!ot || mgopt__exp_tensor(E, cv, cn, ot)) return mgopt__exp_nomem(E);
      ins[2] = cn;
    } else if (mgopt_op_get_float(op, "constant_val", 0.0) != 0.0) {
      /* a Constant node holds the value; a zero is Pad's default */
      ins[2] = mgopt__exp_const(E, "pad_value", cv);
      if (!ins[2]) return mgopt__exp_nomem(E);
    } else {
      ins[2] = NULL;
    }
    n = mgopt__exp_simple(E, op, m->onnx, ins, ins[2] ? 3 : 2);
  } else {
    n = mgopt__exp_simple(E, op, m->onnx, ins, 1);
    if (n && (!mgopt__exp_aints(E, n, "pads", pads, 2 * r) ||
              !mgopt__exp_afloat(E, n, "value", mgopt_op_get_float(op, "constant_val", 0.0))))
      return mgopt__exp_nomem(E);
  }
  if (!n || !mgopt__exp_astr(E, n, "mode", mode ? mode : "constant")) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- DepthToSpace

   pixel_shuffle moves channel c*r*r + i*r + j to row i, column j of channel
   c: DepthToSpace's CRD mode, which opset 11 added (before it, only DCR). */

static const char *mgopt__exw_pixel_shuffle(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x || x->type.rank != 4) return "DepthToSpace needs a 4-d input";
  return mgopt_op_get_int(op, "upscale_factor", 0) >= 1 ? NULL : "no upscale_factor";
}

static mgopt_status mgopt__exp_pixel_shuffle(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_aint(E, n, "blocksize", mgopt_op_get_int(op, "upscale_factor", 1)) ||
      !mgopt__exp_astr(E, n, "mode", "CRD"))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- Tile, Constant */

static int mgopt__imp_tile(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *reps = mgopt__imp_in(I, 1);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || !reps || !mgopt__imp_known_dtype(x)) return 0;
  op = mgopt__imp_op(I, "tile", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "reps", reps)) return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_tile(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt_op_operand(op, "reps") ? NULL : "no reps";
}

static mgopt_status mgopt__exp_tile(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *reps = mgopt_op_operand(op, "reps");
  const char *ins[2];
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_as_i64(E, reps);
  if (!ins[1]) return mgopt__exp_nomem(E);
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 2));
}

/* Constant node -> const op (remembering it was a node, for export). */
static int mgopt__imp_constant(mgopt__imp *I, const mgopt__onnx_map *m) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(I->node, "value");
  mgopt_tensor *t = NULL;
  mgopt_op *op;
  int64_t one = 1;
  MGOPT__UNUSED(m);
  if (I->node->nattributes != 1 || mgopt__imp_nout(I->node) != 1) return 0;
  if (a && a->type == MGOPT_ONNX_ATTR_TENSOR && a->t) {
    t = mgopt__imp_tensor(I, a->t);
    if (!t) return -1;
  } else if ((a = mgopt__imp_attr(I->node, "value_float")) != NULL && a->type == MGOPT_ONNX_ATTR_FLOAT) {
    t = mgopt_tensor_new_scalar_f64(I->p, MGOPT_DT_FP32, (double)a->f);
  } else if ((a = mgopt__imp_attr(I->node, "value_int")) != NULL && a->type == MGOPT_ONNX_ATTR_INT) {
    t = mgopt_tensor_new_scalar_i64(I->p, MGOPT_DT_INT64, a->i);
  } else if ((a = mgopt__imp_attr(I->node, "value_floats")) != NULL && a->type == MGOPT_ONNX_ATTR_FLOATS) {
    int64_t i;
    one = a->nfloats;
    t = mgopt_tensor_new(I->p, MGOPT_DT_FP32, 1, &one);
    if (t)
      for (i = 0; i < one; i++) mgopt_tensor_set_f64(t, i, (double)a->floats[i]);
  } else if ((a = mgopt__imp_attr(I->node, "value_ints")) != NULL && a->type == MGOPT_ONNX_ATTR_INTS) {
    int64_t i;
    one = a->nints;
    t = mgopt_tensor_new(I->p, MGOPT_DT_INT64, 1, &one);
    if (t)
      for (i = 0; i < one; i++) mgopt_tensor_set_i64(t, i, a->ints[i]);
  } else {
    return 0; /* string and sparse constants stay opaque */
  }
  if (!t) return -1;
  op = mgopt__imp_op(I, "const", 1, 0);
  if (!op || mgopt_op_set_tensor(op, "val", t)) return -1;
  op->flags |= MGOPT_OP_ONNX_CONSTANT_NODE;
  if (mgopt_type_make_static(I->p, &op->outs[0]->type, (mgopt_dtype)t->dtype, t->rank, t->shape)) return -1;
  return mgopt__imp_done(I, op);
}

/* ---------------------------------------------------------------- the table */

static const mgopt__onnx_map mgopt__onnx_shape[] = {
    {"Transpose", 1, 0, MGOPT_OP_transpose, mgopt__imp_transpose, mgopt__exp_transpose, {NULL, NULL, NULL}, mgopt__exw_transpose},
    /* Reshape-1 took the shape as an attribute: read as opaque, written in the later form */
    {"Reshape", 1, 4, MGOPT_OP_reshape, NULL, mgopt__exp_reshape, {NULL, NULL, NULL}, mgopt__exw_reshape},
    {"Reshape", 5, 0, MGOPT_OP_reshape, mgopt__imp_reshape, mgopt__exp_reshape, {NULL, NULL, NULL}, mgopt__exw_reshape},
    {"Flatten", 1, 0, MGOPT_OP_reshape, mgopt__imp_flatten, NULL, {NULL, NULL, NULL}, NULL},
    {"Squeeze", 1, 12, MGOPT_OP_squeeze, mgopt__imp_squeeze, mgopt__exp_squeeze_like, {NULL, NULL, NULL}, mgopt__exw_squeeze_like},
    {"Squeeze", 13, 0, MGOPT_OP_squeeze, mgopt__imp_squeeze, mgopt__exp_squeeze_like, {NULL, NULL, NULL}, mgopt__exw_squeeze_like},
    {"Unsqueeze", 1, 12, MGOPT_OP_expand_dims, mgopt__imp_unsqueeze, mgopt__exp_squeeze_like, {NULL, NULL, NULL}, mgopt__exw_squeeze_like},
    {"Unsqueeze", 13, 0, MGOPT_OP_expand_dims, mgopt__imp_unsqueeze, mgopt__exp_squeeze_like, {NULL, NULL, NULL}, mgopt__exw_squeeze_like},
    {"Concat", 1, 4, MGOPT_OP_concat, mgopt__imp_concat, mgopt__exp_concat, {NULL, NULL, NULL}, mgopt__exw_concat_1},
    {"Concat", 5, 0, MGOPT_OP_concat, mgopt__imp_concat, mgopt__exp_concat, {NULL, NULL, NULL}, mgopt__exw_concat},
    {"Split", 1, 12, MGOPT_OP_split, mgopt__imp_split, mgopt__exp_split, {NULL, NULL, NULL}, mgopt__exw_split},
    {"Split", 13, 17, MGOPT_OP_split, mgopt__imp_split, mgopt__exp_split, {NULL, NULL, NULL}, mgopt__exw_split},
    {"Split", 18, 0, MGOPT_OP_split, mgopt__imp_split, mgopt__exp_split, {NULL, NULL, NULL}, mgopt__exw_split},
    {"Slice", 1, 9, MGOPT_OP_slice_by_index, mgopt__imp_slice, mgopt__exp_slice, {NULL, NULL, NULL}, mgopt__exw_slice},
    {"Slice", 10, 0, MGOPT_OP_slice_by_index, mgopt__imp_slice, mgopt__exp_slice, {NULL, NULL, NULL}, mgopt__exw_slice},
    {"Gather", 1, 0, MGOPT_OP_gather, mgopt__imp_gather, mgopt__exp_gather, {NULL, NULL, NULL}, mgopt__exw_gather},
    {"GatherElements", 11, 0, MGOPT_OP_gather_along_axis, mgopt__imp_gather_elements, mgopt__exp_gather, {NULL, NULL, NULL}, mgopt__exw_gather},
    {"Pad", 1, 10, MGOPT_OP_pad, mgopt__imp_pad, mgopt__exp_pad, {NULL, NULL, NULL}, mgopt__exw_pad},
    {"Pad", 11, 0, MGOPT_OP_pad, mgopt__imp_pad, mgopt__exp_pad, {NULL, NULL, NULL}, mgopt__exw_pad},
    /* DepthToSpace is read in map_struct.c (its CRD mode as pixel_shuffle): this row writes pixel_shuffle */
    {"DepthToSpace", 11, 0, MGOPT_OP_pixel_shuffle, NULL, mgopt__exp_pixel_shuffle, {NULL, NULL, NULL}, mgopt__exw_pixel_shuffle},
    /* Tile-1 took tiles and axis inputs: read as opaque, written in the later form */
    {"Tile", 1, 5, MGOPT_OP_tile, NULL, mgopt__exp_tile, {NULL, NULL, NULL}, mgopt__exw_tile},
    {"Tile", 6, 0, MGOPT_OP_tile, mgopt__imp_tile, mgopt__exp_tile, {NULL, NULL, NULL}, mgopt__exw_tile},
    {"Constant", 1, 0, MGOPT_OP_const, mgopt__imp_constant, NULL, {NULL, NULL, NULL}, NULL},
};

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_shape(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_shape);
  return mgopt__onnx_shape;
}
