/* src/passes/onnx/resolve_reshape_shape.c — onnx::resolve_reshape_shape: a reshape whose target shape is computed from its own input's shape gets a constant shape.

   Spec: ONNX Runtime's basic-level reshape fusion. A target shape built at
   run time (Concat of Shape(x)[i] pieces and constants, through Cast,
   Slice, Gather, Unsqueeze) often only says "keep dim i of x" and "these
   constants": each such element becomes 0, which Reshape (allowzero 0) and
   the canonical reshape both read as "copy the input's dim at this
   position"; a dim known statically becomes its value. The Shape, Slice,
   Cast and Concat that computed it are left without readers.

   Before:
     main(%x: (N, 200, 1, 1, fp32)) {
       %s: (4, int64) = onnx::Shape(in0=%x)
       %c: (4, int32) = cast(x=%s, dtype="int32")
       %b: (1, int32)* = const(val=[0])
       %e: (1, int32)* = const(val=[1])
       %n: (1, int32) = slice_by_index(x=%c, begin=%b, end=%e)
       %m: (1, int64) = cast(x=%n, dtype="int64")
       %k: (1, int64)* = const(val=[200])
       %t: (2, int64) = concat(values=(%m, %k), axis=0)
       %y: (N, 200, fp32) = onnx::Reshape(in0=%x, in1=%t)
     } -> (%y)
   After:
     main(%x: (N, 200, 1, 1, fp32)) {
       %s: (4, int64) = onnx::Shape(in0=%x)
       %c: (4, int32) = cast(x=%s, dtype="int32")
       %b: (1, int32)* = const(val=[0])
       %e: (1, int32)* = const(val=[1])
       %n: (1, int32) = slice_by_index(x=%c, begin=%b, end=%e)
       %m: (1, int64) = cast(x=%n, dtype="int64")
       %k: (1, int64)* = const(val=[200])
       %t: (2, int64) = concat(values=(%m, %k), axis=0)
       %y_shape: (2, int32)* = const(val=[0, 200])
       %y: (N, 200, fp32) = reshape(x=%x, shape=%y_shape)
     } -> (%y)
   The shape computation is left to dead_code_elimination.

   Fires on: a canonical reshape whose shape is not constant, and an
   onnx::Reshape (allowzero 0 or absent) whose shape input is not constant,
   when every element of the shape is known through a chain of constants,
   onnx::Shape (start/end as ONNX clamps them), int32/int64 casts of
   integers, slice_by_index and gather with constant parameters, concat on
   axis 0, expand_dims/squeeze/reshape between 0-d and 1-d, and integer
   add/sub/mul (an element is known when both of its operands are and the
   result does not wrap in the dtype: the product of two static dims of a
   shape whose width is symbolic): an element is a constant, or dim k of
   some value (its static value when static).
   Dim i of the reshape's own input at position i becomes 0. One element
   that is neither (any other run-time value) becomes -1 when every other
   element is a positive constant, so that -1 is exactly that element. The
   op becomes a canonical reshape with an int32 constant shape, its output
   type inferred (and checked against the declared one).
   Must not fire: allowzero 1; a shape element that is a run-time value
   other than one such -1 (two of them, a -1 already there, another
   element that is a copied symbolic dim or a 0); a dim of another value or
   of x at another position when it is symbolic; a constant below -1; an
   element beyond int32; a shape of more than MGOPT_MAX_RANK elements or of
   unknown length; when the target cannot express a reshape or the inferred
   type contradicts the declared one. Casts to int32 assume dims below 2^31,
   as every tensor the IR can hold.
   Cost: one worklist run; each reshape walks its shape's producers at most
   16 deep, with at most MGOPT_MAX_RANK elements at each: O(ops). */
#include "../../passes_internal.h"

#define MGOPT__RRS_DEPTH 16

/* The static length of a 0-d or 1-d integer value (1 for 0-d), or -1. */
static int64_t mgopt__rrs_len(const mgopt_value *v) {
  const mgopt_type *t = &v->type;
  if (t->kind != MGOPT_TYPE_TENSOR || !mgopt_dtype_is_int((mgopt_dtype)t->dtype)) return -1;
  if (t->rank == 0) return 1;
  if (t->rank != 1 || !mgopt_dim_is_static(t->dims[0]) || t->dims[0].v > MGOPT_MAX_RANK) return -1;
  return t->dims[0].v;
}

/* The constant integers of v (rank <= 1) into out[0..cap); their count or -1. */
static int64_t mgopt__rrs_ints(const mgopt_value *v, int64_t *out, int64_t cap) {
  mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
  int64_t i;
  if (!t || t->rank > 1 || !mgopt_dtype_is_int((mgopt_dtype)t->dtype) || t->numel > cap) return -1;
  for (i = 0; i < t->numel; i++) out[i] = mgopt_tensor_get_i64(t, i);
  return t->numel;
}

static int64_t mgopt__rrs_trace(mgopt_program *p, const mgopt_value *v, mgopt__shape_elt *out, int depth);

/* onnx::Shape(x, start, end): dims [start, end) of x. */
static int64_t mgopt__rrs_shape(const mgopt_op *op, mgopt__shape_elt *out) {
  const mgopt_value *x = mgopt_op_operand(op, "in0");
  int64_t start, end, i;
  if (!mgopt__pu_onnx_shape_range(op, &start, &end)) return -1;
  for (i = start; i < end; i++) {
    mgopt__shape_elt *e = &out[i - start];
    e->of = x;
    if (mgopt_dim_is_static(x->type.dims[i])) {
      e->kind = MGOPT__SHAPE_ELT_CONST;
      e->v = x->type.dims[i].v;
    } else {
      e->kind = MGOPT__SHAPE_ELT_DIM;
      e->v = i;
    }
  }
  return end - start;
}

/* One entry of ints parameter `name` of a 1-d op (dflt when absent), or -1 in *ok. */
static int64_t mgopt__rrs_param(mgopt_program *p, const mgopt_op *op, const char *name, int64_t dflt, int *ok) {
  const int64_t *v = NULL;
  int64_t n = mgopt_op_get_ints(p, op, name, &v);
  if (n < 0 && !mgopt_op_attr(op, name) && !mgopt_op_operand(op, name)) return dflt;
  if (n != 1) *ok = 0;
  return n == 1 ? v[0] : dflt;
}

/* slice_by_index of a 1-d value with constant parameters (a squeezed axis gives 0-d). */
static int64_t mgopt__rrs_slice(mgopt_program *p, const mgopt_op *op, mgopt__shape_elt *out, int depth) {
  mgopt__shape_elt in[MGOPT_MAX_RANK];
  const mgopt_value *x = mgopt_op_operand(op, "x");
  int64_t b, e, s, n, i, cnt, bm, em, sm;
  int ok = 1;
  if (!x || x->type.rank != 1) return -1;
  n = mgopt__rrs_trace(p, x, in, depth + 1);
  b = mgopt__rrs_param(p, op, "begin", 0, &ok);
  e = mgopt__rrs_param(p, op, "end", 0, &ok);
  s = mgopt__rrs_param(p, op, "stride", 1, &ok);
  bm = mgopt__rrs_param(p, op, "begin_mask", 0, &ok);
  em = mgopt__rrs_param(p, op, "end_mask", 0, &ok);
  sm = mgopt__rrs_param(p, op, "squeeze_mask", 0, &ok);
  if (n < 0 || !ok || !mgopt_op_operand(op, "begin") || !mgopt_op_operand(op, "end") || s == 0 || s == INT64_MIN)
    return -1;
  if (sm) {
    i = bm ? 0 : b;
    if (i < 0) i += n;
    if (i < 0 || i >= n) return -1;
    out[0] = in[i];
    return 1;
  }
  if (s > 0) {
    if (bm) b = 0;
    else if (b < 0) b = b + n < 0 ? 0 : b + n;
    else if (b > n) b = n;
    if (em) e = n;
    else if (e < 0) e = e + n < 0 ? 0 : e + n;
    else if (e > n) e = n;
    cnt = e > b ? (e - b - 1) / s + 1 : 0;
  } else {
    if (bm) b = n - 1;
    else if (b < 0) b = b + n < 0 ? -1 : b + n;
    else if (b >= n) b = n - 1;
    if (em) e = -1;
    else if (e < 0) e = e + n < 0 ? -1 : e + n;
    else if (e >= n) e = n - 1;
    cnt = b > e ? (b - e - 1) / (-s) + 1 : 0;
  }
  for (i = 0; i < cnt; i++) out[i] = in[b + i * s];
  return cnt;
}

/* gather on axis 0 of a 1-d value with constant indices. */
static int64_t mgopt__rrs_gather(mgopt_program *p, const mgopt_op *op, mgopt__shape_elt *out, int depth) {
  mgopt__shape_elt in[MGOPT_MAX_RANK];
  const mgopt_value *x = mgopt_op_operand(op, "x");
  int64_t idx[MGOPT_MAX_RANK], n, k, i;
  if (mgopt_op_get_int(op, "axis", 0) != 0 && mgopt_op_get_int(op, "axis", 0) != -1) return -1;
  if (mgopt_op_get_int(op, "batch_dims", 0) != 0) return -1;
  if (!x || x->type.rank != 1) return -1;
  n = mgopt__rrs_trace(p, x, in, depth + 1);
  k = mgopt__rrs_ints(mgopt_op_operand(op, "indices"), idx, MGOPT_MAX_RANK);
  if (n < 0 || k < 0) return -1;
  for (i = 0; i < k; i++) {
    int64_t j = idx[i] < 0 ? idx[i] + n : idx[i];
    if (j < 0 || j >= n) return -1;
    out[i] = in[j];
  }
  return k;
}

/* concat on axis 0 of 1-d values. */
static int64_t mgopt__rrs_concat(mgopt_program *p, const mgopt_op *op, mgopt__shape_elt *out, int depth) {
  int32_t si = mgopt_op_slot_index(op, "values"), i;
  int64_t n = 0, k;
  mgopt__shape_elt part[MGOPT_MAX_RANK];
  if (si < 0 || (mgopt_op_get_int(op, "axis", 1) != 0 && mgopt_op_get_int(op, "axis", 1) != -1)) return -1;
  if (mgopt_op_get_bool(op, "interleave", 0)) return -1;
  for (i = 0; i < op->slots[si].n; i++) {
    const mgopt_value *v = op->slots[si].uses[i].value;
    if (!v || v->type.rank != 1) return -1;
    k = mgopt__rrs_trace(p, v, part, depth + 1);
    if (k < 0 || n + k > MGOPT_MAX_RANK) return -1;
    memcpy(out + n, part, sizeof(mgopt__shape_elt) * (size_t)k);
    n += k;
  }
  return n;
}

/* add, sub, mul of two integer 0-d / 1-d values (one may have one element,
   broadcast): an element is a constant when both of its operands are (and
   the result fits in int64), unknown otherwise. */
static int64_t mgopt__rrs_arith(mgopt_program *p, const mgopt_op *op, mgopt__shape_elt *out, int depth) {
  mgopt__shape_elt a[MGOPT_MAX_RANK], b[MGOPT_MAX_RANK];
  const mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y");
  int64_t na, nb, n, i;
  if (!x || !y || x->type.rank > 1 || y->type.rank > 1 || x->type.rank < 0 || y->type.rank < 0) return -1;
  na = mgopt__rrs_trace(p, x, a, depth + 1);
  nb = mgopt__rrs_trace(p, y, b, depth + 1);
  if (na < 0 || nb < 0 || (na != nb && na != 1 && nb != 1)) return -1;
  n = na > nb ? na : nb;
  for (i = 0; i < n; i++) {
    const mgopt__shape_elt *ea = &a[na == 1 ? 0 : i], *eb = &b[nb == 1 ? 0 : i];
    int64_t r = 0;
    int ok = ea->kind == MGOPT__SHAPE_ELT_CONST && eb->kind == MGOPT__SHAPE_ELT_CONST;
    if (ok && op->kind == MGOPT_OP_mul) ok = mgopt__mul_i64(ea->v, eb->v, &r);
    else if (ok && op->kind == MGOPT_OP_add) ok = mgopt__add_i64(ea->v, eb->v, &r);
    else if (ok) ok = eb->v != INT64_MIN && mgopt__add_i64(ea->v, -eb->v, &r);
    if (ok && op->outs[0]->type.dtype == MGOPT_DT_INT32 && (r < INT32_MIN || r > INT32_MAX)) ok = 0; /* it wraps */
    out[i].kind = ok ? MGOPT__SHAPE_ELT_CONST : MGOPT__SHAPE_ELT_UNKNOWN;
    out[i].v = ok ? r : 0;
    out[i].of = NULL;
  }
  return n;
}

/* The elements of v, a 0-d or 1-d integer value (at most MGOPT_MAX_RANK of
   them): their count, or -1 when even the length is unknown. */
static int64_t mgopt__rrs_trace(mgopt_program *p, const mgopt_value *v, mgopt__shape_elt *out, int depth) {
  int64_t len, n = -1, i, c[MGOPT_MAX_RANK];
  const mgopt_op *d;
  if (!v) return -1;
  len = mgopt__rrs_len(v);
  if (len < 0) return -1;
  if (mgopt__rrs_ints(v, c, MGOPT_MAX_RANK) == len) {
    for (i = 0; i < len; i++) {
      out[i].kind = MGOPT__SHAPE_ELT_CONST;
      out[i].v = c[i];
      out[i].of = NULL;
    }
    return len;
  }
  d = v->def;
  if (d && depth < MGOPT__RRS_DEPTH && d->nouts == 1 && !d->nblocks) {
    const mgopt_value *x = mgopt_op_operand(d, "x");
    if (d->kind == MGOPT_OP_OPAQUE && strcmp(d->type, "onnx::Shape") == 0) n = mgopt__rrs_shape(d, out);
    else if (d->kind == MGOPT_OP_slice_by_index) n = mgopt__rrs_slice(p, d, out, depth);
    else if (d->kind == MGOPT_OP_gather) n = mgopt__rrs_gather(p, d, out, depth);
    else if (d->kind == MGOPT_OP_concat) n = mgopt__rrs_concat(p, d, out, depth);
    else if ((d->kind == MGOPT_OP_add || d->kind == MGOPT_OP_sub || d->kind == MGOPT_OP_mul) &&
             (v->type.dtype == MGOPT_DT_INT32 || v->type.dtype == MGOPT_DT_INT64))
      n = mgopt__rrs_arith(p, d, out, depth);
    else if (d->kind == MGOPT_OP_cast && x && mgopt_dtype_is_int((mgopt_dtype)x->type.dtype) &&
             (v->type.dtype == MGOPT_DT_INT32 || v->type.dtype == MGOPT_DT_INT64))
      n = mgopt__rrs_trace(p, x, out, depth + 1);
    else if ((d->kind == MGOPT_OP_expand_dims || d->kind == MGOPT_OP_squeeze || d->kind == MGOPT_OP_reshape) && x &&
             x->type.rank >= 0 && x->type.rank <= 1)
      n = mgopt__rrs_trace(p, x, out, depth + 1);
  }
  if (n == len) return n;
  for (i = 0; i < len; i++) {
    out[i].kind = MGOPT__SHAPE_ELT_UNKNOWN;
    out[i].v = 0;
    out[i].of = NULL;
  }
  return len;
}

MGOPT__PRIVATE int64_t mgopt__pu_shape_trace(mgopt_program *p, const mgopt_value *v, mgopt__shape_elt *out) {
  return mgopt__rrs_trace(p, v, out, 0);
}

static int mgopt__rrs_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  int opaque = op->kind == MGOPT_OP_OPAQUE;
  mgopt_value *x = mgopt_op_operand(op, opaque ? "in0" : "x"), *s = mgopt_op_operand(op, opaque ? "in1" : "shape");
  mgopt__shape_elt el[MGOPT_MAX_RANK];
  int64_t shape[MGOPT_MAX_RANK], n, i, unknown = -1;
  int32_t nunknown = 0, ninfer = 0, nvague = 0;
  mgopt_value *c, *ins[2];
  mgopt_op *made;
  static const char *const slots[2] = {"x", "shape"};
  MGOPT__UNUSED(ud);
  if (!x || !s || op->nouts != 1 || op->nblocks || mgopt_value_const(s)) return 0;
  if (opaque && (mgopt_op_operand_count(op) != 2 || mgopt_op_get_int(op, "allowzero", 0) != 0)) return 0;
  if (s->type.rank != 1) return 0;
  n = mgopt__pu_shape_trace(p, s, el);
  if (n < 0) return 0;
  for (i = 0; i < n; i++) {
    mgopt__shape_elt *e = &el[i];
    if (e->kind == MGOPT__SHAPE_ELT_CONST) {
      shape[i] = e->v;
      if (e->v < -1 || e->v > INT32_MAX) return 0;
      if (e->v == -1) ninfer++;
      /* a 0 copies x's dim i: known only when that dim is static */
      if (e->v == 0 && !(x->type.rank > i && mgopt_dim_is_static(x->type.dims[i]) && x->type.dims[i].v > 0)) nvague++;
    } else if (e->kind == MGOPT__SHAPE_ELT_DIM && e->of == x && e->v == i) {
      shape[i] = 0;
      nvague++;
    } else {
      unknown = i;
      nunknown++;
    }
  }
  /* one run-time element becomes -1 only when every other is a positive constant */
  if (nunknown > 1 || (nunknown == 1 && (ninfer || nvague))) return 0;
  if (nunknown == 1) shape[unknown] = -1;
  {
    mgopt_tensor *t = mgopt_tensor_new(p, MGOPT_DT_INT32, 1, &n);
    if (!t) return 0;
    for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, shape[i]);
    c = mgopt_rw_const(rw, op, mgopt__pu_name2(p, mgopt__pu_value_name(op->outs[0]), "_shape"), t);
  }
  if (!c) return 0;
  ins[0] = x;
  ins[1] = c;
  made = mgopt_rw_create(rw, op, "reshape", mgopt__pu_value_name(op->outs[0]), 2, slots, ins, 1);
  if (!made) {
    mgopt__pu_erase_with_consts(rw, c->def);
    return 0;
  }
  return mgopt__pu_fuse_finish(rw, &made, 1, op, NULL, 0);
}

static const mgopt_pattern mgopt__rrs_patterns[] = {
    MGOPT__PATTERN("resolve_reshape_shape", MGOPT_OP_reshape, 1, mgopt__rrs_rewrite),
    MGOPT__OPAQUE_PATTERN("resolve_onnx_reshape_shape", "onnx::Reshape", 1, mgopt__rrs_rewrite),
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, resolve_reshape_shape,
                           "a reshape whose target shape is computed from its own input's shape gets a constant shape",
                           mgopt__rrs_patterns);
