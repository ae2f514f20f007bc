/* src/onnx/opaque_types.c — the output types of ONNX ops kept opaque: one rule per op and opset range, as a table. */
#include "convert_internal.h"

/* An op the importer keeps opaque still has outputs whose types ONNX defines
   from its inputs and attributes. Without them every op downstream would see
   unknown types and stay opaque too (one Pad with computed pads made a whole
   network opaque). These rules give what the ONNX spec makes certain (element
   type, rank, the dims that pass through unchanged) and leave the rest
   unknown; declared value infos still refine them afterwards. Default domain
   only; an input of unknown type gives nothing. */

typedef struct mgopt__imp_ty {
  mgopt_dtype dt;
  int32_t rank; /* -1 unknown */
  mgopt_dim dims[MGOPT_MAX_RANK];
} mgopt__imp_ty;

/* The tensor type of input k, or NULL. */
static const mgopt_type *mgopt__imp_tin(mgopt__imp *I, int64_t k) {
  mgopt_value *v = mgopt__imp_in(I, k);
  return v && v->type.kind == MGOPT_TYPE_TENSOR ? &v->type : NULL;
}

static void mgopt__imp_ty_unknown(mgopt__imp_ty *t, mgopt_dtype dt, int32_t rank) {
  int32_t i;
  t->dt = dt;
  t->rank = rank >= 0 && rank <= MGOPT_MAX_RANK ? rank : -1;
  for (i = 0; i < MGOPT_MAX_RANK; i++) t->dims[i] = mgopt_dim_unknown();
}

/* dtype and shape of x (rank -1 when x is unknown or too high). */
static void mgopt__imp_ty_of(mgopt__imp_ty *t, const mgopt_type *x) {
  int32_t i;
  mgopt__imp_ty_unknown(t, x ? (mgopt_dtype)x->dtype : MGOPT_DT_UNKNOWN, x ? x->rank : -1);
  for (i = 0; i < t->rank; i++) t->dims[i] = x->dims[i];
}

/* Multidirectional broadcast of inputs [from, to) into t (dtype left alone):
   per axis, the one size other than 1 (static, or a symbol all agree on). */
static void mgopt__imp_ty_bcast(mgopt__imp *I, mgopt__imp_ty *t, int64_t from, int64_t to) {
  int64_t k;
  int32_t rank = 0, a;
  for (k = from; k < to; k++) {
    const mgopt_type *x = mgopt__imp_tin(I, k);
    if (!x || x->rank < 0) {
      t->rank = -1;
      return;
    }
    if (x->rank > rank) rank = x->rank;
  }
  mgopt__imp_ty_unknown(t, t->dt, rank);
  for (a = 0; a < t->rank; a++) {
    /* a static size other than 1 decides (the others must be 1 or equal to
       it); else a symbol every non-1 size shares; else all 1; else unknown */
    int64_t big = -1;
    const char *sym = NULL;
    int ones = 1, clash = 0, other = 0;
    for (k = from; k < to; k++) {
      const mgopt_type *x = mgopt__imp_tin(I, k);
      int32_t j = a - (rank - x->rank);
      mgopt_dim e;
      if (j < 0) continue;
      e = x->dims[j];
      if (mgopt_dim_is_static(e)) {
        if (e.v == 1) continue;
        if (big >= 0 && big != e.v) clash = 1;
        big = e.v;
      } else if (e.sym && (!sym || sym == e.sym)) {
        sym = e.sym;
      } else {
        other = 1; /* unknown, or a second symbol */
      }
      ones = 0;
    }
    if (clash) continue;
    if (big >= 0) t->dims[a] = mgopt_dim_static(big);
    else if (ones) t->dims[a] = mgopt_dim_static(1);
    else if (sym && !other) {
      t->dims[a].v = -1;
      t->dims[a].sym = sym;
    }
  }
}

/* The length of a 1-d shape-like input whose length is static, else -1. */
static int32_t mgopt__imp_ty_len(const mgopt_type *x) {
  if (!x || x->rank != 1 || !mgopt_dim_is_static(x->dims[0]) || x->dims[0].v > MGOPT_MAX_RANK) return -1;
  return (int32_t)x->dims[0].v;
}

/* ONNX's MatMul shape for a (ra) @ b (rb), both of rank >= 1 (1-d operands promoted and squeezed). */
static void mgopt__imp_ty_matmul(mgopt__imp_ty *t, const mgopt_type *a, const mgopt_type *b) {
  int32_t ra, rb, r, i;
  if (!a || !b || a->rank < 1 || b->rank < 1) {
    t->rank = -1;
    return;
  }
  ra = a->rank;
  rb = b->rank;
  r = (ra > rb ? ra : rb);
  if (ra == 1 && rb == 1) r = 0;
  else if (ra == 1 || rb == 1) r = (ra > rb ? ra : rb) - 1;
  mgopt__imp_ty_unknown(t, t->dt, r);
  if (t->rank < 0) return;
  if (ra >= 2 && rb >= 2) {
    /* batch dims: equal or broadcast from 1 */
    for (i = 0; i < r - 2; i++) {
      int32_t ia = i - (r - ra), ib = i - (r - rb);
      mgopt_dim da = ia >= 0 ? a->dims[ia] : mgopt_dim_static(1), db = ib >= 0 ? b->dims[ib] : mgopt_dim_static(1);
      if (mgopt_dim_is_static(da) && da.v == 1) t->dims[i] = db;
      else if (mgopt_dim_is_static(db) && db.v == 1) t->dims[i] = da;
      else if (da.v == db.v && da.sym == db.sym) t->dims[i] = da;
    }
    t->dims[r - 2] = a->dims[ra - 2];
    t->dims[r - 1] = b->dims[rb - 1];
  } else if (ra >= 2) {
    for (i = 0; i < r; i++) t->dims[i] = a->dims[i];
  } else if (rb >= 2) {
    for (i = 0; i < r - 1; i++) t->dims[i] = b->dims[i];
    t->dims[r - 1] = b->dims[rb - 1];
  }
}

static mgopt_status mgopt__imp_ty_set(mgopt__imp *I, mgopt_op *op, int32_t k, const mgopt__imp_ty *t) {
  mgopt_value *v;
  if (k >= op->nouts) return MGOPT_OK;
  v = op->outs[k];
  if ((v->flags & MGOPT_VALUE_ABSENT) || v->type.kind != MGOPT_TYPE_TENSOR || v->type.dtype != MGOPT_DT_UNKNOWN ||
      v->type.rank >= 0 || t->dt == MGOPT_DT_UNKNOWN)
    return MGOPT_OK;
  if (mgopt_type_make(I->p, &v->type, t->dt, t->rank, t->rank > 0 ? t->dims : NULL))
    return mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory");
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- the rules

   Each reads I->node, whose input 0 is x, and sets the types of op's outputs. */

/* Output 0 is x. */
static mgopt_status mgopt__oty_same(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  mgopt__imp_ty_of(&t, mgopt__imp_tin(I, 0));
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* Output 0 is x, output 1 (the mask) x's shape with dtype arg (MGOPT_DT_UNKNOWN: x's). */
static mgopt_status mgopt__oty_dropout(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  mgopt__imp_ty t;
  mgopt_status s;
  mgopt__imp_ty_of(&t, mgopt__imp_tin(I, 0));
  s = mgopt__imp_ty_set(I, op, 0, &t);
  if (s) return s;
  if (r->arg != MGOPT_DT_UNKNOWN) t.dt = (mgopt_dtype)r->arg;
  return mgopt__imp_ty_set(I, op, 1, &t);
}

/* x's shape, bool. */
static mgopt_status mgopt__oty_to_bool(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  mgopt__imp_ty_of(&t, x);
  t.dt = x ? MGOPT_DT_BOOL : MGOPT_DT_UNKNOWN;
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* The broadcast shape of every input; dtype that of input arg (-1: bool). */
static mgopt_status mgopt__oty_bcast(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  mgopt__imp_ty t;
  mgopt__imp_ty_of(&t, mgopt__imp_tin(I, 0));
  if (r->arg < 0) {
    t.dt = MGOPT_DT_BOOL;
  } else if (r->arg > 0) {
    const mgopt_type *xv = mgopt__imp_tin(I, r->arg);
    t.dt = xv ? (mgopt_dtype)xv->dtype : MGOPT_DT_UNKNOWN;
  }
  if (mgopt__imp_nin(I->node) < 1) return MGOPT_OK;
  mgopt__imp_ty_bcast(I, &t, 0, mgopt__imp_nin(I->node));
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* x's shape; dtype from attribute `to` (arg 0) or input 1's (arg 1: CastLike). */
static mgopt_status mgopt__oty_cast(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  mgopt__imp_ty_of(&t, x);
  if (r->arg == 0) {
    const mgopt_onnx_attribute *a = mgopt__imp_attr(I->node, "to");
    t.dt = a && a->type == MGOPT_ONNX_ATTR_INT && a->i >= 0 && a->i <= 0x7fffffff ? mgopt_onnx_dtype((int32_t)a->i)
                                                                                     : MGOPT_DT_UNKNOWN;
  } else {
    const mgopt_type *like = mgopt__imp_tin(I, 1);
    t.dt = like ? (mgopt_dtype)like->dtype : MGOPT_DT_UNKNOWN;
  }
  return x ? mgopt__imp_ty_set(I, op, 0, &t) : MGOPT_OK;
}

static mgopt_status mgopt__oty_shape(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_onnx_node *n = I->node;
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  int64_t start = mgopt__imp_aint(n, "start", 0), end = mgopt__imp_aint(n, "end", x ? x->rank : 0);
  MGOPT__UNUSED(r);
  if (!x) return MGOPT_OK;
  if (x->rank < 0) { /* 1-d int64 whatever x is */
    mgopt__imp_ty_unknown(&t, MGOPT_DT_INT64, 1);
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (start < 0) start += x->rank;
  if (end < 0) end += x->rank;
  start = start < 0 ? 0 : start > x->rank ? x->rank : start;
  end = end < 0 ? 0 : end > x->rank ? x->rank : end;
  mgopt__imp_ty_unknown(&t, MGOPT_DT_INT64, 1);
  t.dims[0] = mgopt_dim_static(end > start ? end - start : 0);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

static mgopt_status mgopt__oty_size(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  mgopt__imp_ty_unknown(&t, mgopt__imp_tin(I, 0) ? MGOPT_DT_INT64 : MGOPT_DT_UNKNOWN, 0);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

static mgopt_status mgopt__oty_dynamic_quantize(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  mgopt_status s;
  MGOPT__UNUSED(r);
  if (!x) return MGOPT_OK;
  mgopt__imp_ty_of(&t, x);
  t.dt = MGOPT_DT_UINT8;
  s = mgopt__imp_ty_set(I, op, 0, &t);
  mgopt__imp_ty_unknown(&t, MGOPT_DT_FP32, 0);
  if (!s) s = mgopt__imp_ty_set(I, op, 1, &t);
  t.dt = MGOPT_DT_UINT8;
  if (!s) s = mgopt__imp_ty_set(I, op, 2, &t);
  return s;
}

/* x's shape; the zero point's dtype, else output_dtype, else uint8. */
static mgopt_status mgopt__oty_quantize(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0), *zp = mgopt__imp_tin(I, 2);
  int64_t odt = mgopt__imp_aint(I->node, "output_dtype", 0);
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  mgopt__imp_ty_of(&t, x);
  if (zp) t.dt = (mgopt_dtype)zp->dtype;
  else if (mgopt__imp_in(I, 2)) t.dt = MGOPT_DT_UNKNOWN;
  else t.dt = odt > 0 && odt <= 0x7fffffff ? mgopt_onnx_dtype((int32_t)odt) : MGOPT_DT_UINT8;
  return x ? mgopt__imp_ty_set(I, op, 0, &t) : MGOPT_OK;
}

/* x's shape; float (arg 1: the scale's dtype, from opset 19 on). */
static mgopt_status mgopt__oty_dequantize(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0), *sc = mgopt__imp_tin(I, 1);
  mgopt__imp_ty t;
  mgopt__imp_ty_of(&t, x);
  t.dt = !r->arg ? MGOPT_DT_FP32 : sc ? (mgopt_dtype)sc->dtype : MGOPT_DT_UNKNOWN;
  if (mgopt__imp_attr(I->node, "output_dtype")) t.dt = MGOPT_DT_UNKNOWN; /* opset 23's override: not modelled */
  return x ? mgopt__imp_ty_set(I, op, 0, &t) : MGOPT_OK;
}

#define MGOPT__OTY_INT32 1       /* the output is int32 (ConvInteger, MatMulInteger) */
#define MGOPT__OTY_NO_CHANNELS 2 /* W's first dim is not the output's channels (ConvTranspose) */

/* X and W have one rank; the output has it too, X's batch and W's output
   channels. arg: MGOPT__OTY_* flags. */
static mgopt_status mgopt__oty_conv(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0), *w = mgopt__imp_tin(I, 1);
  int32_t rank = x && x->rank >= 0 ? x->rank : w ? w->rank : -1;
  mgopt_dtype dt = (r->arg & MGOPT__OTY_INT32) ? MGOPT_DT_INT32
                   : x && x->dtype != MGOPT_DT_UNKNOWN ? (mgopt_dtype)x->dtype
                   : w ? (mgopt_dtype)w->dtype : MGOPT_DT_UNKNOWN;
  mgopt__imp_ty t;
  if (!x || rank < 3 || (w && w->rank >= 0 && w->rank != rank)) return MGOPT_OK;
  mgopt__imp_ty_unknown(&t, dt, rank);
  if (x->rank >= 0) t.dims[0] = x->dims[0];
  if (w && w->rank >= 1 && !(r->arg & MGOPT__OTY_NO_CHANNELS)) t.dims[1] = w->dims[0];
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* arg: MGOPT__OTY_INT32 or 0 (x's dtype). */
static mgopt_status mgopt__oty_matmul(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  mgopt__imp_ty_of(&t, x);
  if (r->arg & MGOPT__OTY_INT32) t.dt = MGOPT_DT_INT32;
  mgopt__imp_ty_matmul(&t, x, mgopt__imp_tin(I, 1));
  return mgopt__imp_ty_set(I, op, 0, &t);
}

static mgopt_status mgopt__oty_constant_of_shape(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(I->node, "value");
  mgopt_dtype dt = a && a->type == MGOPT_ONNX_ATTR_TENSOR && a->t ? mgopt_onnx_dtype(a->t->data_type) : MGOPT_DT_FP32;
  int64_t *v = NULL, len = mgopt__imp_const_ints(I, mgopt__imp_in(I, 0), &v);
  mgopt__imp_ty t;
  int32_t i;
  MGOPT__UNUSED(r);
  if (len > MGOPT_MAX_RANK) return MGOPT_OK;
  mgopt__imp_ty_unknown(&t, dt, len >= 0 ? (int32_t)len : mgopt__imp_ty_len(mgopt__imp_tin(I, 0)));
  for (i = 0; len >= 0 && i < t.rank; i++)
    if (v[i] >= 0) t.dims[i] = mgopt_dim_static(v[i]);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

static mgopt_status mgopt__oty_gather(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0), *idx = mgopt__imp_tin(I, 1);
  int64_t axis = mgopt__imp_aint(I->node, "axis", 0);
  int32_t rank, i, j = 0;
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  if (!x || !idx || x->rank < 1 || idx->rank < 0) return MGOPT_OK;
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank) return MGOPT_OK;
  rank = x->rank - 1 + idx->rank;
  mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, rank);
  if (t.rank < 0) return MGOPT_OK;
  for (i = 0; i < x->rank; i++) {
    if (i == axis) {
      int32_t q;
      for (q = 0; q < idx->rank; q++) t.dims[j++] = idx->dims[q];
    } else {
      t.dims[j++] = x->dims[i];
    }
  }
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* The indices' shape, x's dtype. */
static mgopt_status mgopt__oty_gather_elements(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0), *idx = mgopt__imp_tin(I, 1);
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  if (!x || !idx) return MGOPT_OK;
  mgopt__imp_ty_of(&t, idx);
  t.dt = (mgopt_dtype)x->dtype;
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* The rank is the length of the shape input (arg 1: Expand, at least x's rank). */
static mgopt_status mgopt__oty_reshape(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  int32_t len = mgopt__imp_ty_len(mgopt__imp_tin(I, 1));
  mgopt__imp_ty t;
  if (!x || len < 0) return MGOPT_OK;
  if (r->arg) {
    if (x->rank < 0) return MGOPT_OK;
    if (x->rank > len) len = x->rank;
  }
  mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, len);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* Unsqueeze-13: x's rank plus the length of the axes input. */
static mgopt_status mgopt__oty_unsqueeze(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  int32_t len = mgopt__imp_ty_len(mgopt__imp_tin(I, 1));
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  if (!x || x->rank < 0 || len < 0) return MGOPT_OK;
  mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, x->rank + len);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* x without the axes drop[] marks (those dims are 1 at run time, or reduced away). */
static mgopt_status mgopt__oty_drop_axes(mgopt__imp *I, mgopt_op *op, const mgopt_type *x, const int64_t *ax, int64_t na) {
  uint8_t drop[MGOPT_MAX_RANK];
  mgopt__imp_ty t;
  int32_t i, j = 0;
  memset(drop, 0, sizeof drop);
  for (i = 0; i < na; i++) {
    int64_t a = ax[i] < 0 ? ax[i] + x->rank : ax[i];
    if (a < 0 || a >= x->rank || drop[a]) return MGOPT_OK;
    drop[a] = 1;
  }
  mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, x->rank - (int32_t)na);
  for (i = 0; i < x->rank; i++)
    if (!drop[i]) t.dims[j++] = x->dims[i];
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* With its axes known: x without them. arg 1: the axes are an input (from opset 13), 0: an attribute. */
static mgopt_status mgopt__oty_squeeze(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  int64_t *ax = NULL, na = r->arg ? mgopt__imp_const_ints(I, mgopt__imp_in(I, 1), &ax) : -1;
  if (!r->arg) na = mgopt__imp_aints(I->node, "axes", (const int64_t **)&ax);
  if (!x || x->rank < 0 || x->rank > MGOPT_MAX_RANK || na < 1) return MGOPT_OK;
  return mgopt__oty_drop_axes(I, op, x, ax, na);
}

static mgopt_status mgopt__oty_flatten(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  mgopt__imp_ty_unknown(&t, x ? (mgopt_dtype)x->dtype : MGOPT_DT_UNKNOWN, 2);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

#define MGOPT__OTY_BATCH 1   /* dim 0 passes through (pools, depth/space moves) */
#define MGOPT__OTY_ALL_OUTS 2 /* every output has the type (Split) */
#define MGOPT__OTY_INDICES 4 /* output 1 is int64 indices of the same rank (MaxPool) */

/* x's dtype and rank. arg: MGOPT__OTY_BATCH, _ALL_OUTS, _INDICES flags. */
static mgopt_status mgopt__oty_rank(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  mgopt_status s = MGOPT_OK;
  int32_t k;
  if (!x || x->rank < 0) return MGOPT_OK;
  mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, x->rank);
  if ((r->arg & MGOPT__OTY_BATCH) && x->rank >= 1) t.dims[0] = x->dims[0];
  for (k = 0; k < ((r->arg & MGOPT__OTY_ALL_OUTS) ? op->nouts : 1) && !s; k++) s = mgopt__imp_ty_set(I, op, k, &t);
  if (!s && (r->arg & MGOPT__OTY_INDICES)) {
    t.dt = MGOPT_DT_INT64;
    s = mgopt__imp_ty_set(I, op, 1, &t);
  }
  return s;
}

/* Reductions (arg 0) and ArgMax/ArgMin (arg 1): keepdims keeps the rank;
   without it, x without the reduced axes when they are known. */
static mgopt_status mgopt__oty_reduce(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_onnx_node *n = I->node;
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  int arg = r->arg;
  mgopt__imp_ty t;
  int32_t i;
  if (!x || x->rank < 0) return MGOPT_OK;
  if (mgopt__imp_aint(n, "keepdims", 1) != 0) {
    mgopt__imp_ty_unknown(&t, arg ? MGOPT_DT_INT64 : (mgopt_dtype)x->dtype, x->rank);
  } else if (!arg && x->rank <= MGOPT_MAX_RANK) {
    /* keepdims 0 with the axes known (an attribute, or a constant input
       since ReduceSum 13 / the rest 18): x without them */
    const int64_t *ca = NULL;
    int64_t *ia = NULL, na = mgopt__imp_aints(n, "axes", &ca);
    if (na < 0 && (na = mgopt__imp_const_ints(I, mgopt__imp_in(I, 1), &ia)) >= 0) ca = ia;
    if (na < 1) return MGOPT_OK; /* all axes, or none (noop_with_empty_axes): not worth the cases */
    return mgopt__oty_drop_axes(I, op, x, ca, na);
  } else if (arg && x->rank >= 1) {
    int64_t axis = mgopt__imp_aint(n, "axis", 0);
    int32_t j = 0;
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank) return MGOPT_OK;
    mgopt__imp_ty_unknown(&t, MGOPT_DT_INT64, x->rank - 1);
    for (i = 0; i < x->rank; i++)
      if (i != axis) t.dims[j++] = x->dims[i];
  } else {
    return MGOPT_OK;
  }
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* x with every spatial dim 1. */
static mgopt_status mgopt__oty_global_pool(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  int32_t i;
  MGOPT__UNUSED(r);
  if (!x || x->rank < 2) return MGOPT_OK;
  mgopt__imp_ty_of(&t, x);
  for (i = 2; i < t.rank; i++) t.dims[i] = mgopt_dim_static(1);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* LSTM, GRU, RNN: Y and Y_h (arg: the number of outputs, 3 with LSTM's Y_c). */
static mgopt_status mgopt__oty_rnn(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  /* X: [seq, batch, input] (layout 0) or [batch, seq, input] (layout 1) */
  const mgopt_onnx_node *n = I->node;
  const mgopt_type *x = mgopt__imp_tin(I, 0), *w = mgopt__imp_tin(I, 1);
  int64_t hidden = mgopt__imp_aint(n, "hidden_size", -1), layout = mgopt__imp_aint(n, "layout", 0);
  int64_t dirs = mgopt__imp_astr(n, "direction", "bidirectional") ? 2 : 1;
  mgopt_dtype dt = x && x->dtype != MGOPT_DT_UNKNOWN ? (mgopt_dtype)x->dtype : w ? (mgopt_dtype)w->dtype : MGOPT_DT_UNKNOWN;
  mgopt_dim seq = mgopt_dim_unknown(), batch = mgopt_dim_unknown();
  mgopt__imp_ty t;
  mgopt_status s;
  if (!x || (x->rank >= 0 && x->rank != 3) || hidden < 1 || (layout != 0 && layout != 1)) return MGOPT_OK;
  if (x->rank == 3) {
    seq = x->dims[layout ? 1 : 0];
    batch = x->dims[layout ? 0 : 1];
  }
  mgopt__imp_ty_unknown(&t, dt, 4);
  t.dims[0] = layout ? batch : seq;
  t.dims[1] = layout ? seq : mgopt_dim_static(dirs);
  t.dims[2] = layout ? mgopt_dim_static(dirs) : batch;
  t.dims[3] = mgopt_dim_static(hidden);
  s = mgopt__imp_ty_set(I, op, 0, &t);
  mgopt__imp_ty_unknown(&t, dt, 3);
  t.dims[0] = layout ? batch : mgopt_dim_static(dirs);
  t.dims[1] = layout ? mgopt_dim_static(dirs) : batch;
  t.dims[2] = mgopt_dim_static(hidden);
  if (!s) s = mgopt__imp_ty_set(I, op, 1, &t);
  if (!s && r->arg > 2) s = mgopt__imp_ty_set(I, op, 2, &t);
  return s;
}

static mgopt_status mgopt__oty_nonzero(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  if (!x) return MGOPT_OK;
  mgopt__imp_ty_unknown(&t, MGOPT_DT_INT64, 2);
  if (x->rank >= 0) t.dims[0] = mgopt_dim_static(x->rank);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

static mgopt_status mgopt__oty_topk(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  mgopt_status s;
  MGOPT__UNUSED(r);
  if (!x || x->rank < 0) return MGOPT_OK;
  mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, x->rank);
  s = mgopt__imp_ty_set(I, op, 0, &t);
  t.dt = MGOPT_DT_INT64;
  return s ? s : mgopt__imp_ty_set(I, op, 1, &t);
}

static mgopt_status mgopt__oty_range(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  mgopt__imp_ty_unknown(&t, x ? (mgopt_dtype)x->dtype : MGOPT_DT_UNKNOWN, 1);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* What both branches agree on. */
static mgopt_status mgopt__oty_if(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  mgopt_block *a, *b;
  mgopt__imp_ty t;
  mgopt_status s = MGOPT_OK;
  int32_t k, i;
  MGOPT__UNUSED(r);
  if (op->nblocks != 2) return MGOPT_OK;
  a = op->blocks[0];
  b = op->blocks[1];
  if (a->nouts != op->nouts || b->nouts != op->nouts) return MGOPT_OK;
  for (k = 0; k < op->nouts && !s; k++) {
    const mgopt_type *ta = &a->outs[k]->value->type, *tb = &b->outs[k]->value->type;
    if (ta->kind != MGOPT_TYPE_TENSOR || tb->kind != MGOPT_TYPE_TENSOR || ta->dtype != tb->dtype) continue;
    mgopt__imp_ty_unknown(&t, (mgopt_dtype)ta->dtype, ta->rank == tb->rank ? ta->rank : -1);
    for (i = 0; i < t.rank; i++)
      if (ta->dims[i].v == tb->dims[i].v && ta->dims[i].sym == tb->dims[i].sym) t.dims[i] = ta->dims[i];
    s = mgopt__imp_ty_set(I, op, k, &t);
  }
  return s;
}

/* ---------------------------------------------------------------- the table */

static const mgopt__onnx_rule mgopt__onnx_rule_table[] = {
    {"Relu", 1, 0, mgopt__oty_same, 0},
    {"LeakyRelu", 1, 0, mgopt__oty_same, 0},
    {"PRelu", 1, 0, mgopt__oty_same, 0},
    {"Sigmoid", 1, 0, mgopt__oty_same, 0},
    {"HardSigmoid", 1, 0, mgopt__oty_same, 0},
    {"HardSwish", 1, 0, mgopt__oty_same, 0},
    {"Tanh", 1, 0, mgopt__oty_same, 0},
    {"Softplus", 1, 0, mgopt__oty_same, 0},
    {"Softsign", 1, 0, mgopt__oty_same, 0},
    {"Selu", 1, 0, mgopt__oty_same, 0},
    {"Elu", 1, 0, mgopt__oty_same, 0},
    {"Celu", 1, 0, mgopt__oty_same, 0},
    {"ThresholdedRelu", 1, 0, mgopt__oty_same, 0},
    {"Mish", 1, 0, mgopt__oty_same, 0},
    {"Gelu", 1, 0, mgopt__oty_same, 0},
    {"Erf", 1, 0, mgopt__oty_same, 0},
    {"Abs", 1, 0, mgopt__oty_same, 0},
    {"Neg", 1, 0, mgopt__oty_same, 0},
    {"Exp", 1, 0, mgopt__oty_same, 0},
    {"Log", 1, 0, mgopt__oty_same, 0},
    {"Sqrt", 1, 0, mgopt__oty_same, 0},
    {"Reciprocal", 1, 0, mgopt__oty_same, 0},
    {"Floor", 1, 0, mgopt__oty_same, 0},
    {"Ceil", 1, 0, mgopt__oty_same, 0},
    {"Round", 1, 0, mgopt__oty_same, 0},
    {"Sign", 1, 0, mgopt__oty_same, 0},
    {"Sin", 1, 0, mgopt__oty_same, 0},
    {"Cos", 1, 0, mgopt__oty_same, 0},
    {"Tan", 1, 0, mgopt__oty_same, 0},
    {"Asin", 1, 0, mgopt__oty_same, 0},
    {"Acos", 1, 0, mgopt__oty_same, 0},
    {"Atan", 1, 0, mgopt__oty_same, 0},
    {"Sinh", 1, 0, mgopt__oty_same, 0},
    {"Cosh", 1, 0, mgopt__oty_same, 0},
    {"Asinh", 1, 0, mgopt__oty_same, 0},
    {"Acosh", 1, 0, mgopt__oty_same, 0},
    {"Atanh", 1, 0, mgopt__oty_same, 0},
    {"Clip", 1, 0, mgopt__oty_same, 0},
    {"Softmax", 1, 0, mgopt__oty_same, 0},
    {"LogSoftmax", 1, 0, mgopt__oty_same, 0},
    {"Hardmax", 1, 0, mgopt__oty_same, 0},
    {"Identity", 1, 0, mgopt__oty_same, 0},
    {"CumSum", 1, 0, mgopt__oty_same, 0},
    {"LRN", 1, 0, mgopt__oty_same, 0},
    {"LpNormalization", 1, 0, mgopt__oty_same, 0},
    {"MeanVarianceNormalization", 1, 0, mgopt__oty_same, 0},
    {"InstanceNormalization", 1, 0, mgopt__oty_same, 0},
    {"BatchNormalization", 1, 0, mgopt__oty_same, 0},
    {"LayerNormalization", 1, 0, mgopt__oty_same, 0},
    {"GroupNormalization", 1, 0, mgopt__oty_same, 0},
    {"Trilu", 1, 0, mgopt__oty_same, 0},
    {"Shrink", 1, 0, mgopt__oty_same, 0},
    {"ScatterND", 1, 0, mgopt__oty_same, 0},
    {"ScatterElements", 1, 0, mgopt__oty_same, 0},
    {"BitwiseNot", 1, 0, mgopt__oty_same, 0},
    {"ReverseSequence", 1, 0, mgopt__oty_same, 0},
    {"Dropout", 1, 9, mgopt__oty_dropout, MGOPT_DT_UNKNOWN},
    {"Dropout", 10, 0, mgopt__oty_dropout, MGOPT_DT_BOOL},
    {"Not", 1, 0, mgopt__oty_to_bool, 0},
    {"IsNaN", 1, 0, mgopt__oty_to_bool, 0},
    {"IsInf", 1, 0, mgopt__oty_to_bool, 0},
    {"Add", 1, 0, mgopt__oty_bcast, 0},
    {"Sub", 1, 0, mgopt__oty_bcast, 0},
    {"Mul", 1, 0, mgopt__oty_bcast, 0},
    {"Div", 1, 0, mgopt__oty_bcast, 0},
    {"Pow", 1, 0, mgopt__oty_bcast, 0},
    {"Mod", 1, 0, mgopt__oty_bcast, 0},
    {"Max", 1, 0, mgopt__oty_bcast, 0},
    {"Min", 1, 0, mgopt__oty_bcast, 0},
    {"Sum", 1, 0, mgopt__oty_bcast, 0},
    {"Mean", 1, 0, mgopt__oty_bcast, 0},
    {"BitwiseAnd", 1, 0, mgopt__oty_bcast, 0},
    {"BitwiseOr", 1, 0, mgopt__oty_bcast, 0},
    {"BitwiseXor", 1, 0, mgopt__oty_bcast, 0},
    {"BitShift", 1, 0, mgopt__oty_bcast, 0},
    {"Equal", 1, 0, mgopt__oty_bcast, -1},
    {"Less", 1, 0, mgopt__oty_bcast, -1},
    {"Greater", 1, 0, mgopt__oty_bcast, -1},
    {"LessOrEqual", 1, 0, mgopt__oty_bcast, -1},
    {"GreaterOrEqual", 1, 0, mgopt__oty_bcast, -1},
    {"And", 1, 0, mgopt__oty_bcast, -1},
    {"Or", 1, 0, mgopt__oty_bcast, -1},
    {"Xor", 1, 0, mgopt__oty_bcast, -1},
    {"Where", 1, 0, mgopt__oty_bcast, 1},
    {"Cast", 1, 0, mgopt__oty_cast, 0},
    {"CastLike", 1, 0, mgopt__oty_cast, 1},
    {"Shape", 1, 0, mgopt__oty_shape, 0},
    {"Size", 1, 0, mgopt__oty_size, 0},
    {"DynamicQuantizeLinear", 1, 0, mgopt__oty_dynamic_quantize, 0},
    {"QuantizeLinear", 1, 0, mgopt__oty_quantize, 0},
    {"DequantizeLinear", 1, 18, mgopt__oty_dequantize, 0},
    {"DequantizeLinear", 19, 0, mgopt__oty_dequantize, 1},
    {"Conv", 1, 0, mgopt__oty_conv, 0},
    {"ConvInteger", 1, 0, mgopt__oty_conv, MGOPT__OTY_INT32},
    {"ConvTranspose", 1, 0, mgopt__oty_conv, MGOPT__OTY_NO_CHANNELS},
    {"MatMul", 1, 0, mgopt__oty_matmul, 0},
    {"MatMulInteger", 1, 0, mgopt__oty_matmul, MGOPT__OTY_INT32},
    {"ConstantOfShape", 1, 0, mgopt__oty_constant_of_shape, 0},
    {"Gather", 1, 0, mgopt__oty_gather, 0},
    {"GatherElements", 1, 0, mgopt__oty_gather_elements, 0},
    {"Reshape", 1, 0, mgopt__oty_reshape, 0},
    {"Expand", 1, 0, mgopt__oty_reshape, 1},
    {"Unsqueeze", 13, 0, mgopt__oty_unsqueeze, 0},
    {"Squeeze", 1, 12, mgopt__oty_squeeze, 0},
    {"Squeeze", 13, 0, mgopt__oty_squeeze, 1},
    {"Flatten", 1, 0, mgopt__oty_flatten, 0},
    {"Pad", 1, 0, mgopt__oty_rank, 0},
    {"Resize", 1, 0, mgopt__oty_rank, 0},
    {"Upsample", 1, 0, mgopt__oty_rank, 0},
    {"Slice", 1, 0, mgopt__oty_rank, 0},
    {"Tile", 1, 0, mgopt__oty_rank, 0},
    {"Transpose", 1, 0, mgopt__oty_rank, 0},
    {"Concat", 1, 0, mgopt__oty_rank, 0},
    {"Split", 1, 0, mgopt__oty_rank, MGOPT__OTY_ALL_OUTS},
    {"MaxPool", 1, 0, mgopt__oty_rank, MGOPT__OTY_BATCH | MGOPT__OTY_INDICES},
    {"AveragePool", 1, 0, mgopt__oty_rank, MGOPT__OTY_BATCH},
    {"LpPool", 1, 0, mgopt__oty_rank, MGOPT__OTY_BATCH},
    {"DepthToSpace", 1, 0, mgopt__oty_rank, MGOPT__OTY_BATCH},
    {"SpaceToDepth", 1, 0, mgopt__oty_rank, MGOPT__OTY_BATCH},
    {"MaxUnpool", 1, 0, mgopt__oty_rank, MGOPT__OTY_BATCH},
    {"ReduceMean", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceSum", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceMax", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceMin", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceProd", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceL1", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceL2", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceLogSum", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceLogSumExp", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceSumSquare", 1, 0, mgopt__oty_reduce, 0},
    {"ArgMax", 1, 0, mgopt__oty_reduce, 1},
    {"ArgMin", 1, 0, mgopt__oty_reduce, 1},
    {"GlobalAveragePool", 1, 0, mgopt__oty_global_pool, 0},
    {"GlobalMaxPool", 1, 0, mgopt__oty_global_pool, 0},
    {"GlobalLpPool", 1, 0, mgopt__oty_global_pool, 0},
    {"LSTM", 1, 0, mgopt__oty_rnn, 3},
    {"GRU", 1, 0, mgopt__oty_rnn, 2},
    {"RNN", 1, 0, mgopt__oty_rnn, 2},
    {"NonZero", 1, 0, mgopt__oty_nonzero, 0},
    {"TopK", 1, 0, mgopt__oty_topk, 0},
    {"Range", 1, 0, mgopt__oty_range, 0},
    {"If", 1, 0, mgopt__oty_if, 0},
};

MGOPT__PRIVATE const mgopt__onnx_rule *mgopt__onnx_rules(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_rule_table);
  return mgopt__onnx_rule_table;
}
