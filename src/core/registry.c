/* src/core/registry.c — the op registry: operand slots, attributes, traits and type inference per op. */
#include "../internal.h"

/* Conventions of the inference functions below:
   - an operand's type is read through mgopt__rg_in / mgopt__rg_opt, which turn
     a malformed tensor type (rank < -1, dims missing) into "rank unknown";
   - a dim is static (v >= 0, no symbol), symbolic (sym set) or unknown;
   - output dims are allocated in the program arena by mgopt__rg_out and then
     filled in place; every size derived from the IR goes through checked
     arithmetic; every failure is MGOPT_ERR_TYPE with a message, never an assert. */

#define MGOPT__RG_MAX_RANK 65536

/* ---------------------------------------------------------------- helpers */

static mgopt_status mgopt__rg_fail(mgopt_diag *d, const mgopt_op *op, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static mgopt_status mgopt__rg_fail(mgopt_diag *d, const mgopt_op *op, const char *fmt, ...) {
  char buf[MGOPT_DIAG_MSG_MAX];
  va_list ap;
  if (!d) return MGOPT_ERR_TYPE;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  mgopt_diag_set(d, MGOPT_ERR_TYPE, "%s: %s", op->type ? op->type : "?", buf);
  snprintf(d->op, sizeof d->op, "%s", op->name ? op->name : "");
  return MGOPT_ERR_TYPE;
}

static mgopt_status mgopt__rg_nomem(mgopt_diag *d) {
  return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "type inference: out of memory");
}

static int mgopt__rg_st(mgopt_dim x) { return x.sym == NULL && x.v >= 0; }

/* t sanitised: a tensor type whose rank cannot be trusted gets rank -1. */
static mgopt_type mgopt__rg_view(const mgopt_type *t) {
  mgopt_type v = *t;
  if (v.rank < -1 || (v.rank > 0 && !v.dims) || v.rank > MGOPT__RG_MAX_RANK) {
    v.rank = -1;
    v.dims = NULL;
  }
  if (v.rank < 0) v.dims = NULL;
  return v;
}

/* The single tensor operand of `slot`, or 0 when absent (a list counts as absent). */
static int mgopt__rg_opt(const mgopt_op *op, const char *slot, mgopt_type *t) {
  mgopt_value *v = mgopt_op_operand(op, slot);
  if (!v || v->type.kind != MGOPT_TYPE_TENSOR) return 0;
  *t = mgopt__rg_view(&v->type);
  return 1;
}

/* A required tensor operand. */
static mgopt_status mgopt__rg_in(const mgopt_op *op, const char *slot, mgopt_type *t, mgopt_diag *d) {
  mgopt_value *v = mgopt_op_operand(op, slot);
  if (!v) return mgopt__rg_fail(d, op, "missing operand '%s'", slot);
  if (v->type.kind != MGOPT_TYPE_TENSOR) return mgopt__rg_fail(d, op, "operand '%s' is not a tensor", slot);
  *t = mgopt__rg_view(&v->type);
  return MGOPT_OK;
}

/* Output type with `rank` unknown dims (rank -1: unknown rank). */
static mgopt_status mgopt__rg_out(mgopt_program *p, const mgopt_op *op, mgopt_type *out, int dt,
                                  int64_t rank, mgopt_diag *d) {
  if (rank < -1) rank = -1;
  if (rank > MGOPT__RG_MAX_RANK) return mgopt__rg_fail(d, op, "output rank %lld is too large", (long long)rank);
  if (mgopt_type_make(p, out, (mgopt_dtype)dt, (int32_t)rank, NULL)) return mgopt__rg_nomem(d);
  return MGOPT_OK;
}

/* Output equal to t (sanitised) with dtype dt. */
static mgopt_status mgopt__rg_like(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                   const mgopt_type *t, int dt, mgopt_diag *d) {
  mgopt_status s = mgopt__rg_out(p, op, out, dt, t->rank, d);
  if (s) return s;
  if (t->rank > 0) memcpy(out->dims, t->dims, sizeof(mgopt_dim) * (size_t)t->rank);
  return MGOPT_OK;
}

/* Normalises axis `ax` against `rank` (negative counts from the end). 0 if out of range. */
static int mgopt__rg_axis(int64_t ax, int64_t rank, int32_t *out) {
  if (ax < 0) ax += rank;
  if (ax < 0 || ax >= rank) return 0;
  *out = (int32_t)ax;
  return 1;
}

/* Broadcasts two dims: 0 on two different static non-1 dims. */
static int mgopt__rg_bdim(mgopt_dim a, mgopt_dim b, mgopt_dim *o) {
  int sa = mgopt__rg_st(a), sb = mgopt__rg_st(b);
  if (sa && sb) {
    if (a.v == b.v || b.v == 1) *o = a;
    else if (a.v == 1) *o = b;
    else return 0;
  } else if (sa) {
    *o = a.v == 1 ? b : a;
  } else if (sb) {
    *o = b.v == 1 ? a : b;
  } else {
    *o = (a.sym && a.sym == b.sym) ? a : mgopt_dim_unknown();
  }
  return 1;
}

/* Two dims that must be equal: the most precise of both; 0 on a static conflict. */
static int mgopt__rg_unify(mgopt_dim a, mgopt_dim b, mgopt_dim *o) {
  int sa = mgopt__rg_st(a), sb = mgopt__rg_st(b);
  if (sa && sb && a.v != b.v) return 0;
  if (sa) *o = a;
  else if (sb) *o = b;
  else *o = (a.sym && a.sym == b.sym) ? a : mgopt_dim_unknown();
  return 1;
}

/* Broadcast of n tensor types into out (dtype dt). */
static mgopt_status mgopt__rg_broadcast(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                        const mgopt_type *ts, int n, int dt, mgopt_diag *d) {
  int64_t rank = 0;
  int i, k;
  mgopt_status s;
  for (i = 0; i < n; i++) {
    if (ts[i].rank < 0) return mgopt__rg_out(p, op, out, dt, -1, d);
    if (ts[i].rank > rank) rank = ts[i].rank;
  }
  if ((s = mgopt__rg_out(p, op, out, dt, rank, d)) != MGOPT_OK) return s;
  for (k = 0; k < rank; k++) {
    mgopt_dim acc = mgopt_dim_static(1);
    for (i = 0; i < n; i++) {
      int64_t j = ts[i].rank - rank + k;
      if (j < 0) continue;
      if (!mgopt__rg_bdim(acc, ts[i].dims[j], &acc))
        return mgopt__rg_fail(d, op, "shapes do not broadcast (dim %d: %lld vs %lld)", k,
                              (long long)acc.v, (long long)ts[i].dims[j].v);
    }
    out->dims[k] = acc;
  }
  return MGOPT_OK;
}

/* An integer list parameter: count >= 0 (values in *v), -1 absent, -2 given but not constant. */
static int64_t mgopt__rg_ints(mgopt_program *p, const mgopt_op *op, const char *name, const int64_t **v) {
  int64_t n = mgopt_op_get_ints(p, op, name, v);
  if (n >= 0) return n;
  if (mgopt_op_attr(op, name)) return -2;
  return mgopt_op_slot_index(op, name) >= 0 ? -2 : -1;
}

/* A dtype parameter given by name ("fp32"); MGOPT_DT_UNKNOWN when absent or unknown. */
static int mgopt__rg_dtype_param(const mgopt_op *op, const char *name) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(op, name, &n);
  return s ? (int)mgopt_dtype_from_name(s, n) : (int)MGOPT_DT_UNKNOWN;
}

/* 1 when dtypes a and b are known and differ. */
static int mgopt__rg_dt_clash(int a, int b) {
  return a != MGOPT_DT_UNKNOWN && b != MGOPT_DT_UNKNOWN && a != b;
}

/* The values of variadic slot `slot` (NULL and 0 when absent). */
static int32_t mgopt__rg_list(const mgopt_op *op, const char *slot, const mgopt_use **uses) {
  int32_t i = mgopt_op_slot_index(op, slot);
  if (i < 0) {
    *uses = NULL;
    return 0;
  }
  *uses = op->slots[i].uses;
  return op->slots[i].n;
}

/* ---------------------------------------------------------------- elementwise */

static mgopt_status mgopt__rg_infer_const(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                          mgopt_diag *d) {
  const mgopt_attr *a = mgopt_op_attr(op, "val");
  const mgopt_tensor *t;
  int32_t i;
  mgopt_status s;
  if (!a || a->kind != MGOPT_ATTR_TENSOR || !a->u.t) return mgopt__rg_fail(d, op, "missing tensor attribute 'val'");
  t = a->u.t;
  if (t->rank < 0 || (t->rank > 0 && !t->shape)) return mgopt__rg_fail(d, op, "malformed tensor in 'val'");
  if ((s = mgopt__rg_out(p, op, out, t->dtype, t->rank, d)) != MGOPT_OK) return s;
  for (i = 0; i < t->rank; i++) {
    if (t->shape[i] < 0) return mgopt__rg_fail(d, op, "tensor 'val' has a negative dim");
    out->dims[i] = mgopt_dim_static(t->shape[i]);
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__rg_infer_identity(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                             mgopt_diag *d) {
  mgopt_value *v = mgopt_op_operand(op, "x");
  mgopt_type t;
  if (!v) return mgopt__rg_fail(d, op, "missing operand 'x'");
  if (v->type.kind != MGOPT_TYPE_TENSOR) {
    if (mgopt__type_copy(p, out, &v->type)) return mgopt__rg_nomem(d);
    return MGOPT_OK;
  }
  t = mgopt__rg_view(&v->type);
  return mgopt__rg_like(p, op, out, &t, t.dtype, d);
}

/* Elementwise unary (and every op whose output is x's type). */
static mgopt_status mgopt__rg_infer_unary(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                          mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  uint32_t tr = mgopt_op_traits(op);
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((tr & MGOPT_TRAIT_LOGICAL) && x.dtype != MGOPT_DT_UNKNOWN && x.dtype != MGOPT_DT_BOOL)
    return mgopt__rg_fail(d, op, "expects bool, got %s", mgopt_dtype_name((mgopt_dtype)x.dtype));
  return mgopt__rg_like(p, op, out, &x, x.dtype, d);
}

static mgopt_status mgopt__rg_infer_softmax(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                            mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  int32_t ax;
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (x.rank >= 0 && !mgopt__rg_axis(mgopt_op_get_int(op, "axis", -1), x.rank, &ax))
    return mgopt__rg_fail(d, op, "axis out of range for rank %d", (int)x.rank);
  return mgopt__rg_like(p, op, out, &x, x.dtype, d);
}

static mgopt_status mgopt__rg_infer_binary(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                           mgopt_diag *d) {
  mgopt_type t[2];
  mgopt_status s;
  uint32_t tr = mgopt_op_traits(op);
  int dt;
  if ((s = mgopt__rg_in(op, "x", &t[0], d)) != MGOPT_OK) return s;
  if ((s = mgopt__rg_in(op, "y", &t[1], d)) != MGOPT_OK) return s;
  /* pow keeps x's dtype (an integer exponent is common in imported models) */
  if (op->kind != MGOPT_OP_pow && mgopt__rg_dt_clash(t[0].dtype, t[1].dtype))
    return mgopt__rg_fail(d, op, "operand dtypes differ (%s vs %s)", mgopt_dtype_name((mgopt_dtype)t[0].dtype),
                          mgopt_dtype_name((mgopt_dtype)t[1].dtype));
  if ((tr & MGOPT_TRAIT_LOGICAL) &&
      ((t[0].dtype != MGOPT_DT_UNKNOWN && t[0].dtype != MGOPT_DT_BOOL) ||
       (t[1].dtype != MGOPT_DT_UNKNOWN && t[1].dtype != MGOPT_DT_BOOL)))
    return mgopt__rg_fail(d, op, "expects bool operands");
  dt = t[0].dtype != MGOPT_DT_UNKNOWN || op->kind == MGOPT_OP_pow ? t[0].dtype : t[1].dtype;
  if (tr & (MGOPT_TRAIT_COMPARISON | MGOPT_TRAIT_LOGICAL)) dt = MGOPT_DT_BOOL;
  return mgopt__rg_broadcast(p, op, out, t, 2, dt, d);
}

static mgopt_status mgopt__rg_infer_select(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                           mgopt_diag *d) {
  mgopt_type t[3];
  mgopt_status s;
  if ((s = mgopt__rg_in(op, "cond", &t[0], d)) != MGOPT_OK) return s;
  if ((s = mgopt__rg_in(op, "a", &t[1], d)) != MGOPT_OK) return s;
  if ((s = mgopt__rg_in(op, "b", &t[2], d)) != MGOPT_OK) return s;
  if (mgopt__rg_dt_clash(t[1].dtype, t[2].dtype)) return mgopt__rg_fail(d, op, "'a' and 'b' dtypes differ");
  return mgopt__rg_broadcast(p, op, out, t, 3, t[1].dtype != MGOPT_DT_UNKNOWN ? t[1].dtype : t[2].dtype, d);
}

static mgopt_status mgopt__rg_infer_cast(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                         mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const char *name = op->kind == MGOPT_OP_cast ? "dtype" : "output_dtype";
  const char *slot = op->kind == MGOPT_OP_cast ? "x" : "source_val";
  int dt = mgopt__rg_dtype_param(op, name);
  if ((s = mgopt__rg_in(op, slot, &x, d)) != MGOPT_OK) return s;
  if (dt == MGOPT_DT_UNKNOWN) return mgopt__rg_fail(d, op, "missing or unknown '%s'", name);
  return mgopt__rg_like(p, op, out, &x, dt, d);
}

/* ---------------------------------------------------------------- shape ops */

static mgopt_status mgopt__rg_infer_reshape(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                            mgopt_diag *d) {
  mgopt_type x, sh;
  mgopt_status s;
  const int64_t *v = NULL;
  int64_t n, k, infer_at = -1, rem_in = 1, rem_out = 1;
  int rem_ok = 1;
  uint8_t *copied;
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__rg_in(op, "shape", &sh, d)) != MGOPT_OK) return s;
  n = mgopt__rg_ints(p, op, "shape", &v);
  if (n < 0) {
    /* shape known only at run time: its length gives the rank */
    int64_t r = (sh.rank == 1 && mgopt__rg_st(sh.dims[0])) ? sh.dims[0].v : -1;
    if (sh.rank == 0) r = 0;
    return mgopt__rg_out(p, op, out, x.dtype, r, d);
  }
  if ((s = mgopt__rg_out(p, op, out, x.dtype, n, d)) != MGOPT_OK) return s;
  copied = (uint8_t *)mgopt_program_alloc(p, (size_t)(x.rank > 0 ? x.rank : 1), 1);
  if (!copied) return mgopt__rg_nomem(d);
  for (k = 0; k < n; k++) {
    if (v[k] == -1) {
      if (infer_at >= 0) return mgopt__rg_fail(d, op, "more than one -1 in 'shape'");
      infer_at = k;
    } else if (v[k] == 0) {
      if (x.rank >= 0 && k >= x.rank) return mgopt__rg_fail(d, op, "'shape' copies dim %lld of a rank-%d input", (long long)k, (int)x.rank);
      if (x.rank >= 0) {
        out->dims[k] = x.dims[k];
        copied[k] = 1;
      } else {
        rem_ok = 0;
      }
    } else if (v[k] < 0) {
      return mgopt__rg_fail(d, op, "negative entry %lld in 'shape'", (long long)v[k]);
    } else {
      out->dims[k] = mgopt_dim_static(v[k]);
      if (!mgopt__mul_i64(rem_out, v[k], &rem_out)) return mgopt__rg_fail(d, op, "'shape' overflows");
    }
  }
  /* element counts of the dims not copied through, on both sides: copied dims cancel out */
  if (x.rank < 0) rem_ok = 0;
  for (k = 0; rem_ok && k < x.rank; k++) {
    if (copied[k]) continue;
    if (!mgopt__rg_st(x.dims[k]) || !mgopt__mul_i64(rem_in, x.dims[k].v, &rem_in)) rem_ok = 0;
  }
  if (infer_at >= 0) {
    if (rem_ok) {
      if (rem_out == 0 || rem_in % rem_out != 0)
        return mgopt__rg_fail(d, op, "cannot reshape %lld elements into 'shape'", (long long)rem_in);
      out->dims[infer_at] = mgopt_dim_static(rem_in / rem_out);
    }
  } else if (rem_ok && rem_in != rem_out) {
    return mgopt__rg_fail(d, op, "element count changes (%lld vs %lld)", (long long)rem_in, (long long)rem_out);
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__rg_infer_transpose(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                              mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *perm = NULL;
  int64_t n, k;
  int32_t ax;
  uint8_t *seen;
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  n = mgopt__rg_ints(p, op, "perm", &perm);
  if (n == -1) return mgopt__rg_fail(d, op, "missing 'perm'");
  if (n < 0) return mgopt__rg_out(p, op, out, x.dtype, x.rank, d);
  if (x.rank >= 0 && n != x.rank) return mgopt__rg_fail(d, op, "'perm' has %lld entries for rank %d", (long long)n, (int)x.rank);
  if ((s = mgopt__rg_out(p, op, out, x.dtype, n, d)) != MGOPT_OK) return s;
  seen = (uint8_t *)mgopt_program_alloc(p, (size_t)(n ? n : 1), 1);
  if (!seen) return mgopt__rg_nomem(d);
  for (k = 0; k < n; k++) {
    if (!mgopt__rg_axis(perm[k], n, &ax) || seen[ax]) return mgopt__rg_fail(d, op, "'perm' is not a permutation");
    seen[ax] = 1;
    if (x.rank >= 0) out->dims[k] = x.dims[ax];
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__rg_infer_expand_dims(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *axes = NULL;
  int64_t n, k, r;
  int32_t ax, j = 0;
  uint8_t *ins;
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  n = mgopt__rg_ints(p, op, "axes", &axes);
  if (n == -1) return mgopt__rg_fail(d, op, "missing 'axes'");
  if (n < 0 || x.rank < 0) return mgopt__rg_out(p, op, out, x.dtype, n < 0 ? -1 : (x.rank < 0 ? -1 : x.rank + n), d);
  r = x.rank + n;
  if ((s = mgopt__rg_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  ins = (uint8_t *)mgopt_program_alloc(p, (size_t)(r ? r : 1), 1);
  if (!ins) return mgopt__rg_nomem(d);
  for (k = 0; k < n; k++) {
    if (!mgopt__rg_axis(axes[k], r, &ax) || ins[ax]) return mgopt__rg_fail(d, op, "bad or repeated axis %lld", (long long)axes[k]);
    ins[ax] = 1;
  }
  for (k = 0; k < r; k++) out->dims[k] = ins[k] ? mgopt_dim_static(1) : x.dims[j++];
  return MGOPT_OK;
}

static mgopt_status mgopt__rg_infer_squeeze(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                            mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *axes = NULL;
  int64_t n, k, r = 0;
  int32_t ax, j = 0;
  uint8_t *drop;
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  n = mgopt__rg_ints(p, op, "axes", &axes);
  if (x.rank < 0 || n == -2) return mgopt__rg_out(p, op, out, x.dtype, -1, d);
  drop = (uint8_t *)mgopt_program_alloc(p, (size_t)(x.rank ? x.rank : 1), 1);
  if (!drop) return mgopt__rg_nomem(d);
  if (n < 0) {
    for (k = 0; k < x.rank; k++) drop[k] = mgopt__rg_st(x.dims[k]) && x.dims[k].v == 1;
  } else {
    for (k = 0; k < n; k++) {
      if (!mgopt__rg_axis(axes[k], x.rank, &ax)) return mgopt__rg_fail(d, op, "axis %lld out of range", (long long)axes[k]);
      if (!mgopt__rg_st(x.dims[ax]) || x.dims[ax].v != 1)
        return mgopt__rg_fail(d, op, "dim %d is not 1", (int)ax);
      drop[ax] = 1;
    }
  }
  for (k = 0; k < x.rank; k++) r += !drop[k];
  if ((s = mgopt__rg_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  for (k = 0; k < x.rank; k++)
    if (!drop[k]) out->dims[j++] = x.dims[k];
  return MGOPT_OK;
}

/* concat and stack: every input has the same rank and (off the axis) the same dims. */
static mgopt_status mgopt__rg_infer_join(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                         mgopt_diag *d) {
  const mgopt_use *uses;
  int32_t n = mgopt__rg_list(op, "values", &uses), i, ax, k;
  int is_stack = op->kind == MGOPT_OP_stack;
  int64_t rank = -1, sum = 0;
  int dt = MGOPT_DT_UNKNOWN, sum_ok = 1;
  mgopt_type first;
  mgopt_status s;
  mgopt_dim *acc;
  if (n <= 0) return mgopt__rg_fail(d, op, "no 'values'");
  for (i = 0; i < n; i++) {
    const mgopt_value *v = uses[i].value;
    mgopt_type t;
    if (!v || v->type.kind != MGOPT_TYPE_TENSOR) return mgopt__rg_fail(d, op, "value %d is not a tensor", (int)i);
    t = mgopt__rg_view(&v->type);
    if (mgopt__rg_dt_clash(dt, t.dtype)) return mgopt__rg_fail(d, op, "values have different dtypes");
    if (t.dtype != MGOPT_DT_UNKNOWN) dt = t.dtype;
    if (t.rank >= 0) {
      if (rank >= 0 && t.rank != rank) return mgopt__rg_fail(d, op, "values have different ranks");
      rank = t.rank;
      first = t;
    }
  }
  if (rank < 0) return mgopt__rg_out(p, op, out, dt, -1, d);
  if (!mgopt__rg_axis(mgopt_op_get_int(op, "axis", 0), rank + is_stack, &ax))
    return mgopt__rg_fail(d, op, "axis out of range");
  acc = (mgopt_dim *)mgopt__dup(p, first.dims, sizeof(mgopt_dim) * (size_t)(rank ? rank : 1));
  if (!acc) return mgopt__rg_nomem(d);
  for (i = 0; i < n; i++) {
    mgopt_type t = mgopt__rg_view(&uses[i].value->type);
    if (t.rank < 0) {
      sum_ok = 0;
      continue;
    }
    for (k = 0; k < rank; k++) {
      if (!is_stack && k == ax) {
        if (!mgopt__rg_st(t.dims[k]) || !mgopt__add_i64(sum, t.dims[k].v, &sum)) sum_ok = 0;
      } else if (!mgopt__rg_unify(acc[k], t.dims[k], &acc[k])) {
        return mgopt__rg_fail(d, op, "values differ in dim %d", (int)k);
      }
    }
  }
  if ((s = mgopt__rg_out(p, op, out, dt, rank + is_stack, d)) != MGOPT_OK) return s;
  if (is_stack) {
    for (k = 0; k < rank + 1; k++)
      out->dims[k] = k < ax ? acc[k] : k == ax ? mgopt_dim_static(n) : acc[k - 1];
  } else {
    memcpy(out->dims, acc, sizeof(mgopt_dim) * (size_t)rank);
    out->dims[ax] = sum_ok ? mgopt_dim_static(sum) : mgopt_dim_unknown();
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__rg_infer_split(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                          mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *sizes = NULL;
  int64_t n, sum = 0, ns;
  int32_t ax = 0, i;
  mgopt_dim dim;
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (x.rank >= 0 && !mgopt__rg_axis(mgopt_op_get_int(op, "axis", 0), x.rank, &ax))
    return mgopt__rg_fail(d, op, "axis out of range");
  n = mgopt__rg_ints(p, op, "split_sizes", &sizes);
  ns = mgopt_op_get_int(op, "num_splits", op->nouts);
  if (n >= 0 && n != op->nouts) return mgopt__rg_fail(d, op, "%lld split sizes for %d outputs", (long long)n, (int)op->nouts);
  if (n == -1 && ns != op->nouts) return mgopt__rg_fail(d, op, "num_splits %lld for %d outputs", (long long)ns, (int)op->nouts);
  for (i = 0; i < n; i++) {
    if (sizes[i] < 0 || !mgopt__add_i64(sum, sizes[i], &sum)) return mgopt__rg_fail(d, op, "bad split size");
  }
  dim = x.rank >= 0 ? x.dims[ax] : mgopt_dim_unknown();
  if (n >= 0 && mgopt__rg_st(dim) && sum != dim.v)
    return mgopt__rg_fail(d, op, "split sizes add up to %lld, dim is %lld", (long long)sum, (long long)dim.v);
  if (n == -1 && mgopt__rg_st(dim) && dim.v % op->nouts != 0)
    return mgopt__rg_fail(d, op, "dim %lld does not split into %d equal parts", (long long)dim.v, (int)op->nouts);
  for (i = 0; i < op->nouts; i++) {
    if ((s = mgopt__rg_like(p, op, &out[i], &x, x.dtype, d)) != MGOPT_OK) return s;
    if (x.rank < 0) continue;
    if (n >= 0) out[i].dims[ax] = mgopt_dim_static(sizes[i]);
    else if (n == -2) out[i].dims[ax] = mgopt_dim_unknown();
    else if (mgopt__rg_st(dim)) out[i].dims[ax] = mgopt_dim_static(dim.v / op->nouts);
    else if (op->nouts != 1) out[i].dims[ax] = mgopt_dim_unknown();
  }
  return MGOPT_OK;
}

/* Length of x[b:e:st] along a dim of static size n, with begin/end masks. */
static int64_t mgopt__rg_slice_len(int64_t n, int64_t b, int64_t e, int64_t st, int bm, int em) {
  if (st > 0) {
    b = bm ? 0 : b;
    e = em ? n : e;
    if (b < 0) b += n;
    if (e < 0) e += n;
    b = b < 0 ? 0 : b > n ? n : b;
    e = e < 0 ? 0 : e > n ? n : e;
    return e > b ? (e - b - 1) / st + 1 : 0;
  } else {
    int64_t as = st == INT64_MIN ? INT64_MAX : -st;
    b = bm ? n - 1 : b;
    if (!bm && b < 0) b += n;
    if (!em && e < 0) e += n;
    if (em) e = -1;
    b = b < -1 ? -1 : b > n - 1 ? n - 1 : b;
    e = e < -1 ? -1 : e > n - 1 ? n - 1 : e;
    return b > e ? (b - e - 1) / as + 1 : 0;
  }
}

static int mgopt__rg_flag(const int64_t *m, int64_t n, int64_t i) { return m && i < n && m[i] != 0; }

static mgopt_status mgopt__rg_infer_slice_by_index(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                   mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *bv = NULL, *ev = NULL, *sv = NULL, *bm = NULL, *em = NULL, *sm = NULL;
  int64_t nb, ne, ns, nbm, nem, nsm, rank, k, r = 0;
  int32_t j = 0;
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (!mgopt_op_operand(op, "begin") || !mgopt_op_operand(op, "end"))
    return mgopt__rg_fail(d, op, "missing 'begin' or 'end'");
  nb = mgopt__rg_ints(p, op, "begin", &bv);
  ne = mgopt__rg_ints(p, op, "end", &ev);
  ns = mgopt__rg_ints(p, op, "stride", &sv);
  nbm = mgopt__rg_ints(p, op, "begin_mask", &bm);
  nem = mgopt__rg_ints(p, op, "end_mask", &em);
  nsm = mgopt__rg_ints(p, op, "squeeze_mask", &sm);
  rank = x.rank >= 0 ? x.rank : nb >= 0 ? nb : ne;
  if (rank < 0) return mgopt__rg_out(p, op, out, x.dtype, -1, d);
  if ((nb >= 0 && nb != rank) || (ne >= 0 && ne != rank) || (ns >= 0 && ns != rank))
    return mgopt__rg_fail(d, op, "begin/end/stride lengths do not match rank %lld", (long long)rank);
  if (nsm == -2) return mgopt__rg_out(p, op, out, x.dtype, -1, d);
  for (k = 0; k < rank; k++) r += !mgopt__rg_flag(sm, nsm, k);
  if ((s = mgopt__rg_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  for (k = 0; k < rank; k++) {
    mgopt_dim dim = x.rank >= 0 ? x.dims[k] : mgopt_dim_unknown(), o = mgopt_dim_unknown();
    int b_mask = mgopt__rg_flag(bm, nbm, k), e_mask = mgopt__rg_flag(em, nem, k);
    int known = (b_mask || nb >= 0) && (e_mask || ne >= 0) && ns != -2;
    int64_t st = ns >= 0 ? sv[k] : 1;
    if (ns >= 0 && st == 0) return mgopt__rg_fail(d, op, "stride 0 in dim %lld", (long long)k);
    if (nbm == -2 || nem == -2) known = 0;
    if (mgopt__rg_flag(sm, nsm, k)) continue;
    if (known && b_mask && e_mask && st == 1) o = dim;
    else if (known && mgopt__rg_st(dim))
      o = mgopt_dim_static(mgopt__rg_slice_len(dim.v, b_mask ? 0 : bv[k], e_mask ? 0 : ev[k], st, b_mask, e_mask));
    out->dims[j++] = o;
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__rg_infer_slice_by_size(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                  mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *bv = NULL, *zv = NULL;
  int64_t nb, nz, rank, k;
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (!mgopt_op_operand(op, "begin") || !mgopt_op_operand(op, "size"))
    return mgopt__rg_fail(d, op, "missing 'begin' or 'size'");
  nb = mgopt__rg_ints(p, op, "begin", &bv);
  nz = mgopt__rg_ints(p, op, "size", &zv);
  rank = x.rank >= 0 ? x.rank : nb >= 0 ? nb : nz;
  if (rank < 0) return mgopt__rg_out(p, op, out, x.dtype, -1, d);
  if ((nb >= 0 && nb != rank) || (nz >= 0 && nz != rank))
    return mgopt__rg_fail(d, op, "begin/size lengths do not match rank %lld", (long long)rank);
  if ((s = mgopt__rg_out(p, op, out, x.dtype, rank, d)) != MGOPT_OK) return s;
  for (k = 0; k < rank; k++) {
    mgopt_dim dim = x.rank >= 0 ? x.dims[k] : mgopt_dim_unknown();
    int64_t b = nb >= 0 ? bv[k] : -1, z = nz >= 0 ? zv[k] : -2;
    if (z < -1) {
      if (nz >= 0) return mgopt__rg_fail(d, op, "bad size %lld", (long long)z);
      continue;
    }
    if (mgopt__rg_st(dim) && nb >= 0) {
      if (b < 0) b += dim.v;
      if (b < 0 || b > dim.v) return mgopt__rg_fail(d, op, "begin %lld out of range in dim %lld", (long long)bv[k], (long long)k);
      if (z == -1) z = dim.v - b;
      if (z > dim.v - b) return mgopt__rg_fail(d, op, "slice past the end of dim %lld", (long long)k);
      out->dims[k] = mgopt_dim_static(z);
    } else if (z >= 0) {
      out->dims[k] = mgopt_dim_static(z);
    } else if (nb >= 0 && b == 0) {
      out->dims[k] = dim;
    }
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__rg_infer_gather(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                           mgopt_diag *d) {
  mgopt_type x, ix;
  mgopt_status s;
  int32_t ax, j = 0;
  int64_t bd, k;
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__rg_in(op, "indices", &ix, d)) != MGOPT_OK) return s;
  if (ix.dtype != MGOPT_DT_UNKNOWN && !mgopt_dtype_is_int((mgopt_dtype)ix.dtype))
    return mgopt__rg_fail(d, op, "indices are %s, not integers", mgopt_dtype_name((mgopt_dtype)ix.dtype));
  if (x.rank < 0 || ix.rank < 0) return mgopt__rg_out(p, op, out, x.dtype, -1, d);
  if (!mgopt__rg_axis(mgopt_op_get_int(op, "axis", 0), x.rank, &ax)) return mgopt__rg_fail(d, op, "axis out of range");
  bd = mgopt_op_get_int(op, "batch_dims", 0);
  if (bd < 0) bd += ix.rank;
  if (bd < 0 || bd > ix.rank || bd > ax) return mgopt__rg_fail(d, op, "bad batch_dims");
  if ((s = mgopt__rg_out(p, op, out, x.dtype, (int64_t)x.rank - 1 + ix.rank - bd, d)) != MGOPT_OK) return s;
  for (k = 0; k < ax; k++) out->dims[j++] = x.dims[k];
  for (k = bd; k < ix.rank; k++) out->dims[j++] = ix.dims[k];
  for (k = ax + 1; k < x.rank; k++) out->dims[j++] = x.dims[k];
  return MGOPT_OK;
}

static mgopt_status mgopt__rg_infer_one_hot(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                            mgopt_diag *d) {
  mgopt_type ix;
  mgopt_status s;
  int32_t ax, k, j = 0;
  int64_t depth = mgopt_op_get_int(op, "one_hot_vector_size", -1);
  if ((s = mgopt__rg_in(op, "indices", &ix, d)) != MGOPT_OK) return s;
  if (ix.rank < 0) return mgopt__rg_out(p, op, out, MGOPT_DT_FP32, -1, d);
  if (!mgopt__rg_axis(mgopt_op_get_int(op, "axis", -1), (int64_t)ix.rank + 1, &ax))
    return mgopt__rg_fail(d, op, "axis out of range");
  if ((s = mgopt__rg_out(p, op, out, MGOPT_DT_FP32, (int64_t)ix.rank + 1, d)) != MGOPT_OK) return s;
  for (k = 0; k <= ix.rank; k++)
    out->dims[k] = k == ax ? (depth >= 0 ? mgopt_dim_static(depth) : mgopt_dim_unknown()) : ix.dims[j++];
  return MGOPT_OK;
}

static mgopt_status mgopt__rg_infer_pad(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                        mgopt_diag *d) {
  mgopt_type x, pt;
  mgopt_status s;
  const int64_t *pv = NULL;
  int64_t n, k, first;
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__rg_in(op, "pad", &pt, d)) != MGOPT_OK) return s;
  n = mgopt__rg_ints(p, op, "pad", &pv);
  if ((s = mgopt__rg_like(p, op, out, &x, x.dtype, d)) != MGOPT_OK || x.rank < 0) return s;
  if (n < 0) {
    /* values known at run time only: the last len/2 dims (all when len is unknown) change */
    int64_t len = (pt.rank == 1 && mgopt__rg_st(pt.dims[0])) ? pt.dims[0].v : 2 * (int64_t)x.rank;
    if (len % 2 || len / 2 > x.rank) return mgopt__rg_fail(d, op, "'pad' has %lld entries for rank %d", (long long)len, (int)x.rank);
    for (k = x.rank - len / 2; k < x.rank; k++) out->dims[k] = mgopt_dim_unknown();
    return MGOPT_OK;
  }
  if (n % 2 || n / 2 > x.rank) return mgopt__rg_fail(d, op, "'pad' has %lld entries for rank %d", (long long)n, (int)x.rank);
  first = x.rank - n / 2;
  for (k = first; k < x.rank; k++) {
    int64_t b = pv[2 * (k - first)], e = pv[2 * (k - first) + 1], v;
    if (b == 0 && e == 0) continue;
    if (!mgopt__rg_st(x.dims[k])) {
      out->dims[k] = mgopt_dim_unknown();
      continue;
    }
    if (!mgopt__add_i64(x.dims[k].v, b, &v) || !mgopt__add_i64(v, e, &v) || v < 0)
      return mgopt__rg_fail(d, op, "bad padding for dim %lld", (long long)k);
    out->dims[k] = mgopt_dim_static(v);
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__rg_infer_tile(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                         mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *rv = NULL;
  int64_t n, k, v;
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (!mgopt_op_operand(op, "reps")) return mgopt__rg_fail(d, op, "missing operand 'reps'");
  n = mgopt__rg_ints(p, op, "reps", &rv);
  if (n < 0) return mgopt__rg_out(p, op, out, x.dtype, x.rank, d);
  if (x.rank >= 0 && n != x.rank) return mgopt__rg_fail(d, op, "'reps' has %lld entries for rank %d", (long long)n, (int)x.rank);
  if ((s = mgopt__rg_out(p, op, out, x.dtype, n, d)) != MGOPT_OK) return s;
  for (k = 0; k < n; k++) {
    if (rv[k] < 0) return mgopt__rg_fail(d, op, "negative repetition");
    if (x.rank < 0) continue;
    if (rv[k] == 1) out->dims[k] = x.dims[k];
    else if (rv[k] == 0) out->dims[k] = mgopt_dim_static(0);
    else if (mgopt__rg_st(x.dims[k])) {
      if (!mgopt__mul_i64(x.dims[k].v, rv[k], &v)) return mgopt__rg_fail(d, op, "dim overflows");
      out->dims[k] = mgopt_dim_static(v);
    }
  }
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- linear algebra */

static mgopt_status mgopt__rg_infer_matmul(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                           mgopt_diag *d) {
  mgopt_type x, y, bt[2];
  mgopt_status s;
  mgopt_dim m = mgopt_dim_unknown(), kx, ky, n = mgopt_dim_unknown(), kk;
  mgopt_type batch;
  int64_t r, k;
  int j = 0;
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__rg_in(op, "y", &y, d)) != MGOPT_OK) return s;
  if (mgopt__rg_dt_clash(x.dtype, y.dtype)) return mgopt__rg_fail(d, op, "operand dtypes differ");
  if (x.rank < 0 || y.rank < 0) return mgopt__rg_out(p, op, out, x.dtype, -1, d);
  if (x.rank == 0 || y.rank == 0) return mgopt__rg_fail(d, op, "scalar operand");
  if (x.rank == 1) {
    kx = x.dims[0];
  } else {
    int t = mgopt_op_get_bool(op, "transpose_x", 0);
    m = x.dims[x.rank - 2 + t];
    kx = x.dims[x.rank - 1 - t];
  }
  if (y.rank == 1) {
    ky = y.dims[0];
  } else {
    int t = mgopt_op_get_bool(op, "transpose_y", 0);
    ky = y.dims[y.rank - 2 + t];
    n = y.dims[y.rank - 1 - t];
  }
  if (!mgopt__rg_unify(kx, ky, &kk))
    return mgopt__rg_fail(d, op, "inner dims differ (%lld vs %lld)", (long long)kx.v, (long long)ky.v);
  /* batch dims broadcast */
  bt[0] = x;
  bt[0].rank = x.rank > 2 ? x.rank - 2 : 0;
  bt[1] = y;
  bt[1].rank = y.rank > 2 ? y.rank - 2 : 0;
  if ((s = mgopt__rg_broadcast(p, op, &batch, bt, 2, x.dtype, d)) != MGOPT_OK) return s;
  r = batch.rank + (x.rank > 1) + (y.rank > 1);
  if ((s = mgopt__rg_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  for (k = 0; k < batch.rank; k++) out->dims[j++] = batch.dims[k];
  if (x.rank > 1) out->dims[j++] = m;
  if (y.rank > 1) out->dims[j++] = n;
  return MGOPT_OK;
}

static mgopt_status mgopt__rg_infer_linear(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                           mgopt_diag *d) {
  mgopt_type x, w, b;
  mgopt_status s;
  mgopt_dim od = mgopt_dim_unknown(), tmp;
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__rg_in(op, "weight", &w, d)) != MGOPT_OK) return s;
  if (w.rank >= 0 && w.rank != 2) return mgopt__rg_fail(d, op, "weight has rank %d, not 2", (int)w.rank);
  if (x.rank == 0) return mgopt__rg_fail(d, op, "scalar input");
  if (w.rank == 2) {
    od = w.dims[0];
    if (x.rank > 0 && !mgopt__rg_unify(x.dims[x.rank - 1], w.dims[1], &tmp))
      return mgopt__rg_fail(d, op, "input has %lld features, weight expects %lld", (long long)x.dims[x.rank - 1].v,
                            (long long)w.dims[1].v);
  }
  if (mgopt__rg_opt(op, "bias", &b) && b.rank == 1 && !mgopt__rg_unify(od, b.dims[0], &od))
    return mgopt__rg_fail(d, op, "bias length differs from the output features");
  if ((s = mgopt__rg_like(p, op, out, &x, x.dtype, d)) != MGOPT_OK) return s;
  if (x.rank > 0) out->dims[x.rank - 1] = od;
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- windows: conv, pool */

enum { MGOPT__RG_VALID, MGOPT__RG_SAME, MGOPT__RG_SAME_LOWER, MGOPT__RG_CUSTOM };

static int mgopt__rg_pad_type(const mgopt_op *op) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(op, "pad_type", &n);
  if (!s) return MGOPT__RG_VALID;
  if (n == 5 && memcmp(s, "valid", 5) == 0) return MGOPT__RG_VALID;
  if (n == 4 && memcmp(s, "same", 4) == 0) return MGOPT__RG_SAME;
  if (n == 10 && memcmp(s, "same_lower", 10) == 0) return MGOPT__RG_SAME_LOWER;
  if (n == 6 && memcmp(s, "custom", 6) == 0) return MGOPT__RG_CUSTOM;
  return -1;
}

/* Output size of a sliding window over `in` (kernel k, stride st, dilation dl,
   pads pb/pe used only by custom). k < 0: kernel unknown. 0 when it does not fit. */
static int mgopt__rg_window(mgopt_dim in, int64_t k, int64_t st, int64_t dl, int64_t pb, int64_t pe, int pt,
                            int ceil_mode, mgopt_dim *o) {
  int64_t eff, num, v;
  *o = mgopt_dim_unknown();
  if (pt == MGOPT__RG_SAME || pt == MGOPT__RG_SAME_LOWER) {
    if (st == 1) *o = in;
    else if (mgopt__rg_st(in)) *o = mgopt_dim_static(in.v / st + (in.v % st != 0));
    return 1;
  }
  if (pt != MGOPT__RG_CUSTOM) pb = pe = 0;
  if (k < 0 || !mgopt__rg_st(in)) return 1;
  if (!mgopt__mul_i64(dl, k - 1, &eff) || !mgopt__add_i64(in.v, pb, &num) || !mgopt__add_i64(num, pe, &num) ||
      num - 1 < eff)
    return 0;
  num -= eff + 1;
  v = num / st + 1;
  if (ceil_mode && num % st != 0) {
    v++;
    /* the last window must start inside the input or its leading padding */
    if ((v - 1) >= (in.v + pb - 1) / st + 1) v--;
  }
  *o = mgopt_dim_static(v);
  return 1;
}

/* One INTS window parameter of `want` entries, each >= lo; *v = dflt when absent. */
static mgopt_status mgopt__rg_wparam(mgopt_program *p, const mgopt_op *op, const char *name, int64_t want,
                                     int64_t lo, const int64_t *dflt, const int64_t **v, mgopt_diag *d) {
  int64_t n = mgopt__rg_ints(p, op, name, v), k;
  if (n == -2) return mgopt__rg_fail(d, op, "'%s' is not constant", name);
  if (n == -1) {
    *v = dflt;
    return MGOPT_OK;
  }
  if (n != want) return mgopt__rg_fail(d, op, "'%s' has %lld entries, expected %lld", name, (long long)n, (long long)want);
  for (k = 0; k < n; k++)
    if ((*v)[k] < lo) return mgopt__rg_fail(d, op, "bad '%s' entry %lld", name, (long long)(*v)[k]);
  return MGOPT_OK;
}

/* Reads pad_type, strides and dilations (sp entries, default 1) and pad (2*sp, default 0). */
static mgopt_status mgopt__rg_window_params(mgopt_program *p, const mgopt_op *op, int64_t sp, const int64_t **st,
                                            const int64_t **dl, const int64_t **pd, int *pt, mgopt_diag *d) {
  int64_t *ones = (int64_t *)mgopt_program_alloc(p, sizeof(int64_t) * (size_t)(sp + 1), 8), k;
  int64_t *zeros = (int64_t *)mgopt_program_alloc(p, sizeof(int64_t) * (size_t)(2 * sp + 1), 8);
  mgopt_status s;
  if (!ones || !zeros) return mgopt__rg_nomem(d);
  for (k = 0; k < sp; k++) ones[k] = 1;
  *pt = mgopt__rg_pad_type(op);
  if (*pt < 0) return mgopt__rg_fail(d, op, "unknown pad_type");
  if ((s = mgopt__rg_wparam(p, op, "strides", sp, 1, ones, st, d)) != MGOPT_OK) return s;
  *dl = ones;
  if (op->kind == MGOPT_OP_conv || op->kind == MGOPT_OP_conv_transpose)
    if ((s = mgopt__rg_wparam(p, op, "dilations", sp, 1, ones, dl, d)) != MGOPT_OK) return s;
  *pd = zeros;
  if (*pt == MGOPT__RG_CUSTOM)
    if ((s = mgopt__rg_wparam(p, op, "pad", 2 * sp, 0, zeros, pd, d)) != MGOPT_OK) return s;
  return MGOPT_OK;
}

static mgopt_status mgopt__rg_infer_conv(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                         mgopt_diag *d) {
  mgopt_type x, w;
  mgopt_status s;
  const int64_t *st, *dl, *pd, *os = NULL;
  int64_t r, sp, k, groups = mgopt_op_get_int(op, "groups", 1), nos = -1;
  int pt, tr = op->kind == MGOPT_OP_conv_transpose;
  mgopt_dim cout = mgopt_dim_unknown();
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__rg_in(op, "weight", &w, d)) != MGOPT_OK) return s;
  r = x.rank >= 0 ? x.rank : w.rank;
  if (x.rank >= 0 && w.rank >= 0 && x.rank != w.rank)
    return mgopt__rg_fail(d, op, "input rank %d and weight rank %d differ", (int)x.rank, (int)w.rank);
  if (r >= 0 && r < 3) return mgopt__rg_fail(d, op, "rank %lld is too small", (long long)r);
  if (groups < 1) return mgopt__rg_fail(d, op, "groups must be positive");
  if (r < 0) return mgopt__rg_out(p, op, out, x.dtype, -1, d);
  sp = r - 2;
  if ((s = mgopt__rg_window_params(p, op, sp, &st, &dl, &pd, &pt, d)) != MGOPT_OK) return s;
  if (w.rank >= 0) {
    mgopt_dim cin = w.dims[tr ? 0 : 1];
    cout = w.dims[tr ? 1 : 0];
    if (tr && mgopt__rg_st(cout)) {
      int64_t v;
      if (!mgopt__mul_i64(cout.v, groups, &v)) return mgopt__rg_fail(d, op, "channel count overflows");
      cout = mgopt_dim_static(v);
    } else if (tr && groups != 1) {
      cout = mgopt_dim_unknown();
    }
    if (x.rank >= 0 && mgopt__rg_st(x.dims[1]) && mgopt__rg_st(cin)) {
      int64_t want = cin.v;
      if (!tr && !mgopt__mul_i64(cin.v, groups, &want)) return mgopt__rg_fail(d, op, "channel count overflows");
      if (x.dims[1].v != want || (tr && x.dims[1].v % groups != 0))
        return mgopt__rg_fail(d, op, "input has %lld channels, weight expects %lld", (long long)x.dims[1].v, (long long)want);
    }
  }
  if (tr) {
    nos = mgopt__rg_ints(p, op, "output_shape", &os);
    if (nos >= 0 && nos != r && nos != sp)
      return mgopt__rg_fail(d, op, "'output_shape' has %lld entries", (long long)nos);
  }
  if ((s = mgopt__rg_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  out->dims[0] = x.rank >= 0 ? x.dims[0] : mgopt_dim_unknown();
  out->dims[1] = cout;
  for (k = 0; k < sp; k++) {
    mgopt_dim in = x.rank >= 0 ? x.dims[2 + k] : mgopt_dim_unknown();
    int64_t kk = (w.rank >= 0 && mgopt__rg_st(w.dims[2 + k])) ? w.dims[2 + k].v : -1;
    mgopt_dim o = mgopt_dim_unknown();
    if (w.rank >= 0 && kk == 0) return mgopt__rg_fail(d, op, "empty kernel");
    if (!tr) {
      if (!mgopt__rg_window(in, kk, st[k], dl[k], pd[2 * k], pd[2 * k + 1], pt, 0, &o))
        return mgopt__rg_fail(d, op, "kernel does not fit the input in spatial dim %lld", (long long)k);
    } else if (nos == -2) {
      o = mgopt_dim_unknown();
    } else if (nos >= 0) {
      int64_t v = os[nos == r ? 2 + k : k];
      if (v < 0) return mgopt__rg_fail(d, op, "negative 'output_shape' entry");
      o = mgopt_dim_static(v);
    } else if (pt == MGOPT__RG_SAME || pt == MGOPT__RG_SAME_LOWER) {
      int64_t v;
      if (st[k] == 1) o = in;
      else if (mgopt__rg_st(in)) {
        if (!mgopt__mul_i64(in.v, st[k], &v)) return mgopt__rg_fail(d, op, "dim overflows");
        o = mgopt_dim_static(v);
      }
    } else if (mgopt__rg_st(in) && kk > 0) {
      int64_t v, e, pb = pt == MGOPT__RG_CUSTOM ? pd[2 * k] : 0, pe = pt == MGOPT__RG_CUSTOM ? pd[2 * k + 1] : 0;
      if (in.v < 1 || !mgopt__mul_i64(in.v - 1, st[k], &v) || !mgopt__mul_i64(dl[k], kk - 1, &e) ||
          !mgopt__add_i64(v, e + 1, &v))
        return mgopt__rg_fail(d, op, "bad spatial dim %lld", (long long)k);
      v = v - pb - pe;
      if (v < 0) return mgopt__rg_fail(d, op, "padding larger than the output in spatial dim %lld", (long long)k);
      o = mgopt_dim_static(v);
    }
    out->dims[2 + k] = o;
  }
  if (tr && nos == r) {
    if (os[0] < 0 || os[1] < 0) return mgopt__rg_fail(d, op, "negative 'output_shape' entry");
    out->dims[0] = mgopt_dim_static(os[0]);
    out->dims[1] = mgopt_dim_static(os[1]);
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__rg_infer_pool(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                         mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *ks = NULL, *st, *dl, *pd;
  int64_t n, r, k;
  int pt, cm = mgopt_op_get_bool(op, "ceil_mode", 0);
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  n = mgopt__rg_ints(p, op, "kernel_sizes", &ks);
  if (n == -1) return mgopt__rg_fail(d, op, "missing 'kernel_sizes'");
  r = x.rank >= 0 ? x.rank : n >= 0 ? n + 2 : -1;
  if (r < 0) return mgopt__rg_out(p, op, out, x.dtype, -1, d);
  if (r < 3) return mgopt__rg_fail(d, op, "rank %lld is too small", (long long)r);
  if (n >= 0 && n != r - 2) return mgopt__rg_fail(d, op, "'kernel_sizes' has %lld entries for rank %lld", (long long)n, (long long)r);
  if ((s = mgopt__rg_window_params(p, op, r - 2, &st, &dl, &pd, &pt, d)) != MGOPT_OK) return s;
  if ((s = mgopt__rg_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  if (x.rank >= 0) {
    out->dims[0] = x.dims[0];
    out->dims[1] = x.dims[1];
  }
  for (k = 0; k < r - 2; k++) {
    mgopt_dim in = x.rank >= 0 ? x.dims[2 + k] : mgopt_dim_unknown();
    int64_t kk = n >= 0 ? ks[k] : -1;
    if (n >= 0 && kk < 1) return mgopt__rg_fail(d, op, "bad kernel size %lld", (long long)kk);
    if (!mgopt__rg_window(in, kk, st[k], 1, pd[2 * k], pd[2 * k + 1], pt, cm, &out->dims[2 + k]))
      return mgopt__rg_fail(d, op, "kernel does not fit the input in spatial dim %lld", (long long)k);
  }
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- reductions and layout */

static mgopt_status mgopt__rg_infer_reduce(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                           mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *axes = NULL;
  int64_t n, k, r = 0;
  int32_t ax, j = 0;
  int keep = mgopt_op_get_bool(op, "keep_dims", 0);
  uint8_t *red;
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  n = mgopt__rg_ints(p, op, "axes", &axes);
  if (x.rank < 0) return mgopt__rg_out(p, op, out, x.dtype, (!keep && n == -1) ? 0 : -1, d);
  if (n == -2) {
    if (!keep) return mgopt__rg_out(p, op, out, x.dtype, -1, d);
    if ((s = mgopt__rg_out(p, op, out, x.dtype, x.rank, d)) != MGOPT_OK) return s;
    for (k = 0; k < x.rank; k++)
      if (mgopt__rg_st(x.dims[k]) && x.dims[k].v == 1) out->dims[k] = x.dims[k];
    return MGOPT_OK;
  }
  red = (uint8_t *)mgopt_program_alloc(p, (size_t)(x.rank ? x.rank : 1), 1);
  if (!red) return mgopt__rg_nomem(d);
  for (k = 0; k < x.rank; k++) red[k] = n == -1;
  for (k = 0; k < n; k++) {
    if (!mgopt__rg_axis(axes[k], x.rank, &ax)) return mgopt__rg_fail(d, op, "axis %lld out of range", (long long)axes[k]);
    red[ax] = 1;
  }
  for (k = 0; k < x.rank; k++) r += keep || !red[k];
  if ((s = mgopt__rg_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  for (k = 0; k < x.rank; k++) {
    if (!red[k]) out->dims[j++] = x.dims[k];
    else if (keep) out->dims[j++] = mgopt_dim_static(1);
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__rg_infer_pixel_shuffle(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                  mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  int64_t f = mgopt_op_get_int(op, "upscale_factor", -1), ff, k, v;
  if ((s = mgopt__rg_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (f < 1 || !mgopt__mul_i64(f, f, &ff)) return mgopt__rg_fail(d, op, "bad upscale_factor %lld", (long long)f);
  if (x.rank >= 0 && x.rank != 4) return mgopt__rg_fail(d, op, "expects rank 4, got %d", (int)x.rank);
  if ((s = mgopt__rg_out(p, op, out, x.dtype, 4, d)) != MGOPT_OK) return s;
  if (x.rank < 0) return MGOPT_OK;
  out->dims[0] = x.dims[0];
  if (mgopt__rg_st(x.dims[1])) {
    if (x.dims[1].v % ff) return mgopt__rg_fail(d, op, "%lld channels do not divide by %lld", (long long)x.dims[1].v, (long long)ff);
    out->dims[1] = mgopt_dim_static(x.dims[1].v / ff);
  } else if (f == 1) {
    out->dims[1] = x.dims[1];
  }
  for (k = 2; k < 4; k++) {
    if (f == 1) out->dims[k] = x.dims[k];
    else if (mgopt__rg_st(x.dims[k])) {
      if (!mgopt__mul_i64(x.dims[k].v, f, &v)) return mgopt__rg_fail(d, op, "dim overflows");
      out->dims[k] = mgopt_dim_static(v);
    }
  }
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- control flow */

static mgopt_status mgopt__rg_infer_while(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                          mgopt_diag *d) {
  const mgopt_use *uses;
  int32_t n = mgopt__rg_list(op, "loop_vars", &uses), i;
  if (n != op->nouts) return mgopt__rg_fail(d, op, "%d loop vars for %d outputs", (int)n, (int)op->nouts);
  for (i = 0; i < n; i++) {
    if (!uses[i].value) return mgopt__rg_fail(d, op, "loop var %d is missing", (int)i);
    if (mgopt__type_copy(p, &out[i], &uses[i].value->type)) return mgopt__rg_nomem(d);
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__rg_infer_cond(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                         mgopt_diag *d) {
  const mgopt_block *b = op->nblocks > 0 ? op->blocks[0] : NULL;
  int32_t i;
  if (!mgopt_op_operand(op, "pred")) return mgopt__rg_fail(d, op, "missing operand 'pred'");
  if (!b || b->nouts != op->nouts) return mgopt__rg_fail(d, op, "the true branch does not give %d outputs", (int)op->nouts);
  for (i = 0; i < op->nouts; i++) {
    if (!b->outs[i] || !b->outs[i]->value) return mgopt__rg_fail(d, op, "branch output %d is missing", (int)i);
    if (mgopt__type_copy(p, &out[i], &b->outs[i]->value->type)) return mgopt__rg_nomem(d);
  }
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- quantization */

static mgopt_status mgopt__rg_infer_quantize(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                             mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  int dt = mgopt__rg_dtype_param(op, "output_dtype");
  if ((s = mgopt__rg_in(op, "input", &x, d)) != MGOPT_OK) return s;
  if (!mgopt_op_operand(op, "scale")) return mgopt__rg_fail(d, op, "missing operand 'scale'");
  if (!mgopt_dtype_is_int((mgopt_dtype)dt)) return mgopt__rg_fail(d, op, "missing or bad 'output_dtype'");
  return mgopt__rg_like(p, op, out, &x, dt, d);
}

/* Output shaped like operand `data`, typed like operand `scale`
   (dequantize, constexpr_affine_dequantize, constexpr_blockwise_shift_scale). */
static mgopt_status mgopt__rg_infer_dequant(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                            mgopt_diag *d) {
  mgopt_type x, sc;
  mgopt_status s;
  const char *data = op->kind == MGOPT_OP_dequantize ? "input"
                     : op->kind == MGOPT_OP_constexpr_affine_dequantize ? "quantized_data"
                                                                        : "data";
  int dt;
  if ((s = mgopt__rg_in(op, data, &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__rg_in(op, "scale", &sc, d)) != MGOPT_OK) return s;
  dt = sc.dtype;
  if (op->kind == MGOPT_OP_dequantize && !mgopt_dtype_is_float((mgopt_dtype)dt)) dt = MGOPT_DT_FP32;
  return mgopt__rg_like(p, op, out, &x, dt, d);
}

/* Output with the static shape of INTS parameter `shape`: 1 if given. */
static int mgopt__rg_shape_param(mgopt_program *p, const mgopt_op *op, mgopt_type *out, int dt,
                                 mgopt_status *s, mgopt_diag *d) {
  const int64_t *v = NULL;
  int64_t n = mgopt__rg_ints(p, op, "shape", &v), k;
  if (n == -1) return 0;
  if (n == -2) {
    *s = mgopt__rg_out(p, op, out, dt, -1, d);
    return 1;
  }
  if ((*s = mgopt__rg_out(p, op, out, dt, n, d)) != MGOPT_OK) return 1;
  for (k = 0; k < n; k++) {
    if (v[k] < 0) {
      *s = mgopt__rg_fail(d, op, "negative entry in 'shape'");
      return 1;
    }
    out->dims[k] = mgopt_dim_static(v[k]);
  }
  return 1;
}

static mgopt_status mgopt__rg_infer_lut(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                        mgopt_diag *d) {
  mgopt_type ix, lut;
  mgopt_status s = MGOPT_OK;
  int32_t ax;
  mgopt_dim vs;
  if ((s = mgopt__rg_in(op, "indices", &ix, d)) != MGOPT_OK) return s;
  if ((s = mgopt__rg_in(op, "lut", &lut, d)) != MGOPT_OK) return s;
  if (mgopt__rg_shape_param(p, op, out, lut.dtype, &s, d)) return s;
  /* per-group palettes: lut [..., 2^nbits, vector_size]; vectors widen one axis of indices */
  if ((s = mgopt__rg_like(p, op, out, &ix, lut.dtype, d)) != MGOPT_OK || ix.rank < 0) return s;
  if (lut.rank >= 0 && lut.rank < 2) return mgopt__rg_fail(d, op, "lut has rank %d", (int)lut.rank);
  if (ix.rank == 0) return MGOPT_OK;
  if (!mgopt__rg_axis(mgopt_op_get_int(op, "vector_axis", -1), ix.rank, &ax))
    return mgopt__rg_fail(d, op, "vector_axis out of range");
  vs = lut.rank >= 0 ? lut.dims[lut.rank - 1] : mgopt_dim_unknown();
  if (mgopt__rg_st(vs) && vs.v == 1) return MGOPT_OK;
  if (mgopt__rg_st(vs) && mgopt__rg_st(ix.dims[ax])) {
    int64_t v;
    if (!mgopt__mul_i64(vs.v, ix.dims[ax].v, &v)) return mgopt__rg_fail(d, op, "dim overflows");
    out->dims[ax] = mgopt_dim_static(v);
  } else {
    out->dims[ax] = mgopt_dim_unknown();
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__rg_infer_sparse(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                           mgopt_diag *d) {
  mgopt_type nz, mask;
  mgopt_status s = MGOPT_OK;
  if ((s = mgopt__rg_in(op, "nonzero_data", &nz, d)) != MGOPT_OK) return s;
  if ((s = mgopt__rg_in(op, "mask", &mask, d)) != MGOPT_OK) return s;
  if (mgopt__rg_shape_param(p, op, out, nz.dtype, &s, d)) return s;
  return mgopt__rg_like(p, op, out, &mask, nz.dtype, d);
}

/* ---------------------------------------------------------------- the table */

#define MGOPT__RG_P MGOPT_TRAIT_PURE
#define MGOPT__RG_PU (MGOPT_TRAIT_PURE | MGOPT_TRAIT_UNARY)
#define MGOPT__RG_PB (MGOPT_TRAIT_PURE | MGOPT_TRAIT_BINARY)
#define MGOPT__RG_PBC (MGOPT__RG_PB | MGOPT_TRAIT_COMMUTATIVE)
#define MGOPT__RG_CMP (MGOPT__RG_PB | MGOPT_TRAIT_COMPARISON)
#define MGOPT__RG_LOG (MGOPT__RG_PBC | MGOPT_TRAIT_LOGICAL)
#define MGOPT__RG_SP (MGOPT_TRAIT_PURE | MGOPT_TRAIT_SHAPE_PRESERVING)
#define MGOPT__RG_LS (MGOPT_TRAIT_PURE | MGOPT_TRAIT_LAYOUT_SENSITIVE)
#define MGOPT__RG_CE (MGOPT_TRAIT_PURE | MGOPT_TRAIT_CONSTEXPR)
#define MGOPT__RG_CF (MGOPT_TRAIT_PURE | MGOPT_TRAIT_CONTROL_FLOW)

#define MGOPT__RG_OPT MGOPT_SLOT_OPTIONAL
#define MGOPT__RG_VAR MGOPT_SLOT_VARIADIC
#define MGOPT__RG_REQ MGOPT_ATTR_REQUIRED

/* one output, no nested blocks */
#define MGOPT__RG_DEF(nm, tr, sl, at, fn) \
  { #nm, tr, MGOPT__ARRAY_COUNT(sl), sl, MGOPT__ARRAY_COUNT(at), at, 1, 1, 0, fn }
#define MGOPT__RG_DEF0(nm, tr, sl, fn) { #nm, tr, MGOPT__ARRAY_COUNT(sl), sl, 0, NULL, 1, 1, 0, fn }

static const mgopt_slot_def mgopt__rg_s_x[] = {{"x", 0}};
static const mgopt_slot_def mgopt__rg_s_xy[] = {{"x", 0}, {"y", 0}};
static const mgopt_slot_def mgopt__rg_s_select[] = {{"cond", 0}, {"a", 0}, {"b", 0}};
static const mgopt_slot_def mgopt__rg_s_prelu[] = {{"x", 0}, {"alpha", 0}};
static const mgopt_slot_def mgopt__rg_s_reshape[] = {{"x", 0}, {"shape", 0}};
static const mgopt_slot_def mgopt__rg_s_values[] = {{"values", MGOPT__RG_VAR}};
static const mgopt_slot_def mgopt__rg_s_sbi[] = {{"x", 0}, {"begin", 0}, {"end", 0}, {"stride", MGOPT__RG_OPT}};
static const mgopt_slot_def mgopt__rg_s_sbs[] = {{"x", 0}, {"begin", 0}, {"size", 0}};
static const mgopt_slot_def mgopt__rg_s_gather[] = {{"x", 0}, {"indices", 0}};
static const mgopt_slot_def mgopt__rg_s_indices[] = {{"indices", 0}};
static const mgopt_slot_def mgopt__rg_s_pad[] = {{"x", 0}, {"pad", 0}};
static const mgopt_slot_def mgopt__rg_s_tile[] = {{"x", 0}, {"reps", 0}};
static const mgopt_slot_def mgopt__rg_s_linear[] = {{"x", 0}, {"weight", 0}, {"bias", MGOPT__RG_OPT}};
static const mgopt_slot_def mgopt__rg_s_bn[] = {
    {"x", 0}, {"mean", 0}, {"variance", 0}, {"gamma", MGOPT__RG_OPT}, {"beta", MGOPT__RG_OPT}};
static const mgopt_slot_def mgopt__rg_s_norm[] = {{"x", 0}, {"gamma", MGOPT__RG_OPT}, {"beta", MGOPT__RG_OPT}};
static const mgopt_slot_def mgopt__rg_s_loop[] = {{"loop_vars", MGOPT__RG_VAR}};
static const mgopt_slot_def mgopt__rg_s_cond[] = {{"pred", 0}};
static const mgopt_slot_def mgopt__rg_s_quant[] = {{"input", 0}, {"zero_point", MGOPT__RG_OPT}, {"scale", 0}};
static const mgopt_slot_def mgopt__rg_s_affine[] = {{"quantized_data", 0}, {"zero_point", 0}, {"scale", 0}};
static const mgopt_slot_def mgopt__rg_s_lut[] = {{"indices", 0}, {"lut", 0}};
static const mgopt_slot_def mgopt__rg_s_sparse[] = {{"nonzero_data", 0}, {"mask", 0}};
static const mgopt_slot_def mgopt__rg_s_shift[] = {{"data", 0}, {"scale", 0}, {"offset", MGOPT__RG_OPT}};
static const mgopt_slot_def mgopt__rg_s_ccast[] = {{"source_val", 0}};

static const mgopt_attr_def mgopt__rg_a_const[] = {{"val", MGOPT_ATTR_TENSOR, MGOPT__RG_REQ, NULL}};
static const mgopt_attr_def mgopt__rg_a_log[] = {{"epsilon", MGOPT_ATTR_FLOAT, 0, "1e-45"}};
static const mgopt_attr_def mgopt__rg_a_rsqrt[] = {{"epsilon", MGOPT_ATTR_FLOAT, 0, "1e-12"}};
static const mgopt_attr_def mgopt__rg_a_inverse[] = {{"epsilon", MGOPT_ATTR_FLOAT, 0, "0.0001"}};
static const mgopt_attr_def mgopt__rg_a_leaky[] = {{"alpha", MGOPT_ATTR_FLOAT, 0, "0.01"}};
static const mgopt_attr_def mgopt__rg_a_gelu[] = {{"mode", MGOPT_ATTR_STRING, 0, "\"EXACT\""}};
static const mgopt_attr_def mgopt__rg_a_softmax[] = {{"axis", MGOPT_ATTR_INT, 0, "-1"}};
static const mgopt_attr_def mgopt__rg_a_clip[] = {{"alpha", MGOPT_ATTR_FLOAT, MGOPT__RG_REQ, NULL},
                                                  {"beta", MGOPT_ATTR_FLOAT, MGOPT__RG_REQ, NULL}};
static const mgopt_attr_def mgopt__rg_a_elu[] = {{"alpha", MGOPT_ATTR_FLOAT, 0, "1.0"}};
static const mgopt_attr_def mgopt__rg_a_cast[] = {{"dtype", MGOPT_ATTR_STRING, MGOPT__RG_REQ, NULL}};
static const mgopt_attr_def mgopt__rg_a_perm[] = {{"perm", MGOPT_ATTR_INTS, MGOPT__RG_REQ, NULL}};
static const mgopt_attr_def mgopt__rg_a_axes_req[] = {{"axes", MGOPT_ATTR_INTS, MGOPT__RG_REQ, NULL}};
static const mgopt_attr_def mgopt__rg_a_axes[] = {{"axes", MGOPT_ATTR_INTS, 0, NULL}};
static const mgopt_attr_def mgopt__rg_a_concat[] = {{"axis", MGOPT_ATTR_INT, MGOPT__RG_REQ, NULL},
                                                    {"interleave", MGOPT_ATTR_BOOL, 0, "false"}};
static const mgopt_attr_def mgopt__rg_a_stack[] = {{"axis", MGOPT_ATTR_INT, MGOPT__RG_REQ, NULL}};
static const mgopt_attr_def mgopt__rg_a_split[] = {{"num_splits", MGOPT_ATTR_INT, 0, NULL},
                                                   {"split_sizes", MGOPT_ATTR_INTS, 0, NULL},
                                                   {"axis", MGOPT_ATTR_INT, MGOPT__RG_REQ, NULL}};
static const mgopt_attr_def mgopt__rg_a_sbi[] = {{"begin_mask", MGOPT_ATTR_BOOLS, 0, NULL},
                                                 {"end_mask", MGOPT_ATTR_BOOLS, 0, NULL},
                                                 {"squeeze_mask", MGOPT_ATTR_BOOLS, 0, NULL}};
static const mgopt_attr_def mgopt__rg_a_gather[] = {{"axis", MGOPT_ATTR_INT, 0, "0"},
                                                    {"batch_dims", MGOPT_ATTR_INT, 0, "0"},
                                                    {"validate_indices", MGOPT_ATTR_BOOL, 0, "false"}};
static const mgopt_attr_def mgopt__rg_a_one_hot[] = {{"one_hot_vector_size", MGOPT_ATTR_INT, MGOPT__RG_REQ, NULL},
                                                     {"axis", MGOPT_ATTR_INT, 0, "-1"},
                                                     {"on_value", MGOPT_ATTR_FLOAT, 0, "1.0"},
                                                     {"off_value", MGOPT_ATTR_FLOAT, 0, "0.0"}};
static const mgopt_attr_def mgopt__rg_a_pad[] = {{"mode", MGOPT_ATTR_STRING, 0, "\"constant\""},
                                                 {"constant_val", MGOPT_ATTR_FLOAT, 0, "0.0"}};
static const mgopt_attr_def mgopt__rg_a_matmul[] = {{"transpose_x", MGOPT_ATTR_BOOL, 0, "false"},
                                                    {"transpose_y", MGOPT_ATTR_BOOL, 0, "false"}};
static const mgopt_attr_def mgopt__rg_a_conv[] = {{"strides", MGOPT_ATTR_INTS, 0, NULL},
                                                  {"pad_type", MGOPT_ATTR_STRING, 0, "\"valid\""},
                                                  {"pad", MGOPT_ATTR_INTS, 0, NULL},
                                                  {"dilations", MGOPT_ATTR_INTS, 0, NULL},
                                                  {"groups", MGOPT_ATTR_INT, 0, "1"}};
static const mgopt_attr_def mgopt__rg_a_convt[] = {{"strides", MGOPT_ATTR_INTS, 0, NULL},
                                                   {"pad_type", MGOPT_ATTR_STRING, 0, "\"valid\""},
                                                   {"pad", MGOPT_ATTR_INTS, 0, NULL},
                                                   {"dilations", MGOPT_ATTR_INTS, 0, NULL},
                                                   {"groups", MGOPT_ATTR_INT, 0, "1"},
                                                   {"output_shape", MGOPT_ATTR_INTS, 0, NULL}};
static const mgopt_attr_def mgopt__rg_a_avg_pool[] = {{"kernel_sizes", MGOPT_ATTR_INTS, MGOPT__RG_REQ, NULL},
                                                      {"strides", MGOPT_ATTR_INTS, 0, NULL},
                                                      {"pad_type", MGOPT_ATTR_STRING, 0, "\"valid\""},
                                                      {"pad", MGOPT_ATTR_INTS, 0, NULL},
                                                      {"exclude_padding_from_average", MGOPT_ATTR_BOOL, 0, "false"},
                                                      {"ceil_mode", MGOPT_ATTR_BOOL, 0, "false"}};
static const mgopt_attr_def mgopt__rg_a_max_pool[] = {{"kernel_sizes", MGOPT_ATTR_INTS, MGOPT__RG_REQ, NULL},
                                                      {"strides", MGOPT_ATTR_INTS, 0, NULL},
                                                      {"pad_type", MGOPT_ATTR_STRING, 0, "\"valid\""},
                                                      {"pad", MGOPT_ATTR_INTS, 0, NULL},
                                                      {"ceil_mode", MGOPT_ATTR_BOOL, 0, "false"}};
static const mgopt_attr_def mgopt__rg_a_eps[] = {{"epsilon", MGOPT_ATTR_FLOAT, 0, "1e-05"}};
static const mgopt_attr_def mgopt__rg_a_layer_norm[] = {{"axes", MGOPT_ATTR_INTS, 0, NULL},
                                                        {"epsilon", MGOPT_ATTR_FLOAT, 0, "1e-05"}};
static const mgopt_attr_def mgopt__rg_a_reduce[] = {{"axes", MGOPT_ATTR_INTS, 0, NULL},
                                                    {"keep_dims", MGOPT_ATTR_BOOL, 0, "false"}};
static const mgopt_attr_def mgopt__rg_a_pixel_shuffle[] = {{"upscale_factor", MGOPT_ATTR_INT, MGOPT__RG_REQ, NULL}};
static const mgopt_attr_def mgopt__rg_a_quantize[] = {{"axis", MGOPT_ATTR_INT, 0, NULL},
                                                      {"output_dtype", MGOPT_ATTR_STRING, MGOPT__RG_REQ, NULL}};
static const mgopt_attr_def mgopt__rg_a_axis[] = {{"axis", MGOPT_ATTR_INT, 0, NULL}};
static const mgopt_attr_def mgopt__rg_a_axis_req[] = {{"axis", MGOPT_ATTR_INT, MGOPT__RG_REQ, NULL}};
static const mgopt_attr_def mgopt__rg_a_lut[] = {{"shape", MGOPT_ATTR_INTS, 0, NULL},
                                                 {"vector_axis", MGOPT_ATTR_INT, 0, NULL}};
static const mgopt_attr_def mgopt__rg_a_shape[] = {{"shape", MGOPT_ATTR_INTS, 0, NULL}};
static const mgopt_attr_def mgopt__rg_a_ccast[] = {{"output_dtype", MGOPT_ATTR_STRING, MGOPT__RG_REQ, NULL}};

#define MGOPT__RG_UN(nm) MGOPT__RG_DEF0(nm, MGOPT__RG_PU, mgopt__rg_s_x, mgopt__rg_infer_unary)
#define MGOPT__RG_BIN(nm, tr) MGOPT__RG_DEF0(nm, tr, mgopt__rg_s_xy, mgopt__rg_infer_binary)
#define MGOPT__RG_RED(nm) MGOPT__RG_DEF(nm, MGOPT__RG_P, mgopt__rg_s_x, mgopt__rg_a_reduce, mgopt__rg_infer_reduce)

/* In the order of MGOPT_OP_LIST: entry k describes op kind k + 1. */
static const mgopt_op_def mgopt__rg_defs[] = {
    {"const", MGOPT__RG_P, 0, NULL, 1, mgopt__rg_a_const, 1, 1, 0, mgopt__rg_infer_const},
    MGOPT__RG_DEF0(identity, MGOPT__RG_SP, mgopt__rg_s_x, mgopt__rg_infer_identity),
    MGOPT__RG_BIN(add, MGOPT__RG_PBC),
    MGOPT__RG_BIN(sub, MGOPT__RG_PB),
    MGOPT__RG_BIN(mul, MGOPT__RG_PBC),
    MGOPT__RG_BIN(real_div, MGOPT__RG_PB),
    MGOPT__RG_BIN(pow, MGOPT__RG_PB),
    MGOPT__RG_BIN(maximum, MGOPT__RG_PBC),
    MGOPT__RG_BIN(minimum, MGOPT__RG_PBC),
    MGOPT__RG_BIN(floor_div, MGOPT__RG_PB),
    MGOPT__RG_BIN(mod, MGOPT__RG_PB),
    MGOPT__RG_BIN(equal, MGOPT__RG_CMP | MGOPT_TRAIT_COMMUTATIVE),
    MGOPT__RG_BIN(not_equal, MGOPT__RG_CMP | MGOPT_TRAIT_COMMUTATIVE),
    MGOPT__RG_BIN(less, MGOPT__RG_CMP),
    MGOPT__RG_BIN(less_equal, MGOPT__RG_CMP),
    MGOPT__RG_BIN(greater, MGOPT__RG_CMP),
    MGOPT__RG_BIN(greater_equal, MGOPT__RG_CMP),
    MGOPT__RG_BIN(logical_and, MGOPT__RG_LOG),
    MGOPT__RG_BIN(logical_or, MGOPT__RG_LOG),
    MGOPT__RG_BIN(logical_xor, MGOPT__RG_LOG),
    MGOPT__RG_DEF0(logical_not, MGOPT__RG_PU | MGOPT_TRAIT_LOGICAL, mgopt__rg_s_x, mgopt__rg_infer_unary),
    MGOPT__RG_DEF0(select, MGOPT__RG_P, mgopt__rg_s_select, mgopt__rg_infer_select),
    MGOPT__RG_UN(abs),
    MGOPT__RG_UN(exp),
    MGOPT__RG_DEF(log, MGOPT__RG_PU, mgopt__rg_s_x, mgopt__rg_a_log, mgopt__rg_infer_unary),
    MGOPT__RG_UN(sqrt),
    MGOPT__RG_DEF(rsqrt, MGOPT__RG_PU, mgopt__rg_s_x, mgopt__rg_a_rsqrt, mgopt__rg_infer_unary),
    MGOPT__RG_DEF(inverse, MGOPT__RG_PU, mgopt__rg_s_x, mgopt__rg_a_inverse, mgopt__rg_infer_unary),
    MGOPT__RG_UN(square),
    MGOPT__RG_UN(erf),
    MGOPT__RG_UN(tanh),
    MGOPT__RG_UN(sigmoid),
    MGOPT__RG_UN(relu),
    MGOPT__RG_UN(relu6),
    MGOPT__RG_DEF(leaky_relu, MGOPT__RG_PU, mgopt__rg_s_x, mgopt__rg_a_leaky, mgopt__rg_infer_unary),
    MGOPT__RG_DEF0(prelu, MGOPT__RG_SP | MGOPT_TRAIT_LAYOUT_SENSITIVE, mgopt__rg_s_prelu, mgopt__rg_infer_unary),
    MGOPT__RG_DEF(gelu, MGOPT__RG_PU, mgopt__rg_s_x, mgopt__rg_a_gelu, mgopt__rg_infer_unary),
    /* not elementwise: it normalises along an axis */
    MGOPT__RG_DEF(softmax, MGOPT__RG_SP | MGOPT_TRAIT_LAYOUT_SENSITIVE, mgopt__rg_s_x, mgopt__rg_a_softmax,
                  mgopt__rg_infer_softmax),
    MGOPT__RG_DEF(clip, MGOPT__RG_PU, mgopt__rg_s_x, mgopt__rg_a_clip, mgopt__rg_infer_unary),
    MGOPT__RG_UN(floor),
    MGOPT__RG_UN(ceil),
    MGOPT__RG_UN(round),
    MGOPT__RG_UN(sign),
    MGOPT__RG_UN(sin),
    MGOPT__RG_UN(cos),
    MGOPT__RG_UN(silu),
    MGOPT__RG_UN(softplus),
    MGOPT__RG_DEF(elu, MGOPT__RG_PU, mgopt__rg_s_x, mgopt__rg_a_elu, mgopt__rg_infer_unary),
    MGOPT__RG_DEF(cast, MGOPT__RG_SP, mgopt__rg_s_x, mgopt__rg_a_cast, mgopt__rg_infer_cast),
    MGOPT__RG_DEF0(reshape, MGOPT__RG_P, mgopt__rg_s_reshape, mgopt__rg_infer_reshape),
    MGOPT__RG_DEF(transpose, MGOPT__RG_P, mgopt__rg_s_x, mgopt__rg_a_perm, mgopt__rg_infer_transpose),
    MGOPT__RG_DEF(expand_dims, MGOPT__RG_P, mgopt__rg_s_x, mgopt__rg_a_axes_req, mgopt__rg_infer_expand_dims),
    MGOPT__RG_DEF(squeeze, MGOPT__RG_P, mgopt__rg_s_x, mgopt__rg_a_axes, mgopt__rg_infer_squeeze),
    MGOPT__RG_DEF(concat, MGOPT__RG_P, mgopt__rg_s_values, mgopt__rg_a_concat, mgopt__rg_infer_join),
    MGOPT__RG_DEF(stack, MGOPT__RG_P, mgopt__rg_s_values, mgopt__rg_a_stack, mgopt__rg_infer_join),
    {"split", MGOPT__RG_P, 1, mgopt__rg_s_x, MGOPT__ARRAY_COUNT(mgopt__rg_a_split), mgopt__rg_a_split, 1, -1, 0,
     mgopt__rg_infer_split},
    MGOPT__RG_DEF(slice_by_index, MGOPT__RG_P, mgopt__rg_s_sbi, mgopt__rg_a_sbi, mgopt__rg_infer_slice_by_index),
    MGOPT__RG_DEF0(slice_by_size, MGOPT__RG_P, mgopt__rg_s_sbs, mgopt__rg_infer_slice_by_size),
    MGOPT__RG_DEF(gather, MGOPT__RG_P, mgopt__rg_s_gather, mgopt__rg_a_gather, mgopt__rg_infer_gather),
    MGOPT__RG_DEF(one_hot, MGOPT__RG_P, mgopt__rg_s_indices, mgopt__rg_a_one_hot, mgopt__rg_infer_one_hot),
    MGOPT__RG_DEF(pad, MGOPT__RG_P, mgopt__rg_s_pad, mgopt__rg_a_pad, mgopt__rg_infer_pad),
    MGOPT__RG_DEF0(tile, MGOPT__RG_P, mgopt__rg_s_tile, mgopt__rg_infer_tile),
    MGOPT__RG_DEF(matmul, MGOPT__RG_P, mgopt__rg_s_xy, mgopt__rg_a_matmul, mgopt__rg_infer_matmul),
    MGOPT__RG_DEF0(linear, MGOPT__RG_P, mgopt__rg_s_linear, mgopt__rg_infer_linear),
    MGOPT__RG_DEF(conv, MGOPT__RG_LS, mgopt__rg_s_linear, mgopt__rg_a_conv, mgopt__rg_infer_conv),
    MGOPT__RG_DEF(conv_transpose, MGOPT__RG_LS, mgopt__rg_s_linear, mgopt__rg_a_convt, mgopt__rg_infer_conv),
    MGOPT__RG_DEF(avg_pool, MGOPT__RG_LS, mgopt__rg_s_x, mgopt__rg_a_avg_pool, mgopt__rg_infer_pool),
    MGOPT__RG_DEF(max_pool, MGOPT__RG_LS, mgopt__rg_s_x, mgopt__rg_a_max_pool, mgopt__rg_infer_pool),
    MGOPT__RG_DEF(batch_norm, MGOPT__RG_SP | MGOPT_TRAIT_LAYOUT_SENSITIVE, mgopt__rg_s_bn, mgopt__rg_a_eps,
                  mgopt__rg_infer_unary),
    MGOPT__RG_DEF(instance_norm, MGOPT__RG_SP | MGOPT_TRAIT_LAYOUT_SENSITIVE, mgopt__rg_s_norm, mgopt__rg_a_eps,
                  mgopt__rg_infer_unary),
    MGOPT__RG_DEF(layer_norm, MGOPT__RG_SP, mgopt__rg_s_norm, mgopt__rg_a_layer_norm, mgopt__rg_infer_unary),
    MGOPT__RG_RED(reduce_sum),
    MGOPT__RG_RED(reduce_mean),
    MGOPT__RG_RED(reduce_max),
    MGOPT__RG_RED(reduce_min),
    MGOPT__RG_RED(reduce_prod),
    MGOPT__RG_DEF(pixel_shuffle, MGOPT__RG_LS, mgopt__rg_s_x, mgopt__rg_a_pixel_shuffle, mgopt__rg_infer_pixel_shuffle),
    {"while_loop", MGOPT__RG_CF, 1, mgopt__rg_s_loop, 0, NULL, 0, -1, 2, mgopt__rg_infer_while},
    {"cond", MGOPT__RG_CF, 1, mgopt__rg_s_cond, 0, NULL, 0, -1, 2, mgopt__rg_infer_cond},
    MGOPT__RG_DEF(quantize, MGOPT__RG_P, mgopt__rg_s_quant, mgopt__rg_a_quantize, mgopt__rg_infer_quantize),
    MGOPT__RG_DEF(dequantize, MGOPT__RG_P, mgopt__rg_s_quant, mgopt__rg_a_axis, mgopt__rg_infer_dequant),
    MGOPT__RG_DEF(constexpr_affine_dequantize, MGOPT__RG_CE, mgopt__rg_s_affine, mgopt__rg_a_axis_req,
                  mgopt__rg_infer_dequant),
    MGOPT__RG_DEF(constexpr_lut_to_dense, MGOPT__RG_CE, mgopt__rg_s_lut, mgopt__rg_a_lut, mgopt__rg_infer_lut),
    MGOPT__RG_DEF(constexpr_sparse_to_dense, MGOPT__RG_CE, mgopt__rg_s_sparse, mgopt__rg_a_shape,
                  mgopt__rg_infer_sparse),
    MGOPT__RG_DEF0(constexpr_blockwise_shift_scale, MGOPT__RG_CE, mgopt__rg_s_shift, mgopt__rg_infer_dequant),
    MGOPT__RG_DEF(constexpr_cast, MGOPT__RG_CE, mgopt__rg_s_ccast, mgopt__rg_a_ccast, mgopt__rg_infer_cast),
};

/* The table must list every op of MGOPT_OP_LIST (checked at compile time). */
typedef char mgopt__rg_defs_complete[(MGOPT__ARRAY_COUNT(mgopt__rg_defs) == MGOPT_OP__COUNT - 1) ? 1 : -1];

/* Op kinds sorted by name (byte order) for binary search. */
static const uint8_t mgopt__rg_sorted[] = {
#define MGOPT__RG_K(n) MGOPT_OP_##n,
    MGOPT__RG_K(abs) MGOPT__RG_K(add) MGOPT__RG_K(avg_pool) MGOPT__RG_K(batch_norm) MGOPT__RG_K(cast)
    MGOPT__RG_K(ceil) MGOPT__RG_K(clip) MGOPT__RG_K(concat) MGOPT__RG_K(cond) MGOPT__RG_K(const)
    MGOPT__RG_K(constexpr_affine_dequantize) MGOPT__RG_K(constexpr_blockwise_shift_scale)
    MGOPT__RG_K(constexpr_cast) MGOPT__RG_K(constexpr_lut_to_dense) MGOPT__RG_K(constexpr_sparse_to_dense)
    MGOPT__RG_K(conv) MGOPT__RG_K(conv_transpose) MGOPT__RG_K(cos) MGOPT__RG_K(dequantize) MGOPT__RG_K(elu)
    MGOPT__RG_K(equal) MGOPT__RG_K(erf) MGOPT__RG_K(exp) MGOPT__RG_K(expand_dims) MGOPT__RG_K(floor)
    MGOPT__RG_K(floor_div) MGOPT__RG_K(gather) MGOPT__RG_K(gelu) MGOPT__RG_K(greater) MGOPT__RG_K(greater_equal)
    MGOPT__RG_K(identity) MGOPT__RG_K(instance_norm) MGOPT__RG_K(inverse) MGOPT__RG_K(layer_norm)
    MGOPT__RG_K(leaky_relu) MGOPT__RG_K(less) MGOPT__RG_K(less_equal) MGOPT__RG_K(linear) MGOPT__RG_K(log)
    MGOPT__RG_K(logical_and) MGOPT__RG_K(logical_not) MGOPT__RG_K(logical_or) MGOPT__RG_K(logical_xor)
    MGOPT__RG_K(matmul) MGOPT__RG_K(max_pool) MGOPT__RG_K(maximum) MGOPT__RG_K(minimum) MGOPT__RG_K(mod)
    MGOPT__RG_K(mul) MGOPT__RG_K(not_equal) MGOPT__RG_K(one_hot) MGOPT__RG_K(pad) MGOPT__RG_K(pixel_shuffle)
    MGOPT__RG_K(pow) MGOPT__RG_K(prelu) MGOPT__RG_K(quantize) MGOPT__RG_K(real_div) MGOPT__RG_K(reduce_max)
    MGOPT__RG_K(reduce_mean) MGOPT__RG_K(reduce_min) MGOPT__RG_K(reduce_prod) MGOPT__RG_K(reduce_sum)
    MGOPT__RG_K(relu) MGOPT__RG_K(relu6) MGOPT__RG_K(reshape) MGOPT__RG_K(round) MGOPT__RG_K(rsqrt)
    MGOPT__RG_K(select) MGOPT__RG_K(sigmoid) MGOPT__RG_K(sign) MGOPT__RG_K(silu) MGOPT__RG_K(sin)
    MGOPT__RG_K(slice_by_index) MGOPT__RG_K(slice_by_size) MGOPT__RG_K(softmax) MGOPT__RG_K(softplus)
    MGOPT__RG_K(split) MGOPT__RG_K(sqrt) MGOPT__RG_K(square) MGOPT__RG_K(squeeze) MGOPT__RG_K(stack)
    MGOPT__RG_K(sub) MGOPT__RG_K(tanh) MGOPT__RG_K(tile) MGOPT__RG_K(transpose) MGOPT__RG_K(while_loop)
#undef MGOPT__RG_K
};
typedef char mgopt__rg_sorted_complete[(MGOPT__ARRAY_COUNT(mgopt__rg_sorted) == MGOPT_OP__COUNT - 1) ? 1 : -1];

/* Byte-order comparison of s[0..n) with the NUL-terminated name. */
static int mgopt__rg_cmp(const char *s, size_t n, const char *name) {
  size_t m = strlen(name);
  int c = memcmp(s, name, n < m ? n : m);
  if (c) return c;
  return n < m ? -1 : n > m ? 1 : 0;
}

/* ---------------------------------------------------------------- exported */

MGOPTDEF const mgopt_op_def *mgopt_op_def_get(int32_t kind) {
  if (kind <= MGOPT_OP_OPAQUE || kind >= MGOPT_OP__COUNT) return NULL;
  return &mgopt__rg_defs[kind - 1];
}

MGOPTDEF int32_t mgopt_op_kind_from_name(const char *s, size_t n) {
  int32_t lo = 0, hi = MGOPT__ARRAY_COUNT(mgopt__rg_sorted);
  if (!s) return MGOPT_OP_OPAQUE;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2, k = mgopt__rg_sorted[mid];
    int c = mgopt__rg_cmp(s, n, mgopt__rg_defs[k - 1].name);
    if (c == 0) return k;
    if (c < 0) hi = mid;
    else lo = mid + 1;
  }
  return MGOPT_OP_OPAQUE;
}

MGOPTDEF uint32_t mgopt_op_traits(const mgopt_op *op) {
  const mgopt_op_def *d = op ? mgopt_op_def_get(op->kind) : NULL;
  return d ? d->traits : 0;
}

MGOPT__PRIVATE const mgopt_attr_def *mgopt__attr_def(int32_t kind, const char *name) {
  const mgopt_op_def *d = mgopt_op_def_get(kind);
  int32_t i;
  if (!d) return NULL;
  for (i = 0; i < d->nattrs; i++)
    if (strcmp(d->attrs[i].name, name) == 0) return &d->attrs[i];
  return NULL;
}
