/* src/core/infer/common.c — helpers shared by the type inference functions: failures, operands,
   parameters, dim arithmetic, output types and broadcasting. */
#include "infer.h"

MGOPT__PRIVATE mgopt_status mgopt__ti_fail(mgopt_diag *d, const mgopt_op *op, const char *fmt, ...) {
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

MGOPT__PRIVATE mgopt_status mgopt__ti_nomem(mgopt_diag *d) {
  return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "type inference: out of memory");
}

MGOPT__PRIVATE int mgopt__ti_st(mgopt_dim x) { return x.sym == NULL && x.v >= 0; }

/* An operand type above MGOPT_MAX_RANK (or malformed) reads as rank unknown. */
MGOPT__PRIVATE mgopt_type mgopt__ti_view(const mgopt_type *t) {
  mgopt_type v = *t;
  if (v.rank < -1 || (v.rank > 0 && !v.dims) || v.rank > MGOPT_MAX_RANK) {
    v.rank = -1;
    v.dims = NULL;
  }
  if (v.rank < 0) v.dims = NULL;
  return v;
}

MGOPT__PRIVATE int mgopt__ti_opt(const mgopt_op *op, const char *slot, mgopt_type *t) {
  mgopt_value *v = mgopt_op_operand(op, slot);
  if (!v || v->type.kind != MGOPT_TYPE_TENSOR) return 0;
  *t = mgopt__ti_view(&v->type);
  return 1;
}

MGOPT__PRIVATE mgopt_status mgopt__ti_in(const mgopt_op *op, const char *slot, mgopt_type *t, mgopt_diag *d) {
  mgopt_value *v = mgopt_op_operand(op, slot);
  if (!v) return mgopt__ti_fail(d, op, "missing operand '%s'", slot);
  if (v->type.kind != MGOPT_TYPE_TENSOR) return mgopt__ti_fail(d, op, "operand '%s' is not a tensor", slot);
  *t = mgopt__ti_view(&v->type);
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__ti_out(mgopt_program *p, const mgopt_op *op, mgopt_type *out, int dt,
                                          int64_t rank, mgopt_diag *d) {
  if (rank < -1) rank = -1;
  if (rank > MGOPT_MAX_RANK)
    return mgopt__ti_fail(d, op, "output rank %lld is above %d", (long long)rank, MGOPT_MAX_RANK);
  if (mgopt_type_make(p, out, (mgopt_dtype)dt, (int32_t)rank, NULL)) return mgopt__ti_nomem(d);
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__ti_like(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                           const mgopt_type *t, int dt, mgopt_diag *d) {
  mgopt_status s = mgopt__ti_out(p, op, out, dt, t->rank, d);
  if (s) return s;
  if (t->rank > 0) memcpy(out->dims, t->dims, sizeof(mgopt_dim) * (size_t)t->rank);
  return MGOPT_OK;
}

MGOPT__PRIVATE int mgopt__ti_axis(int64_t ax, int64_t rank, int32_t *out) {
  if (ax < 0) ax += rank;
  if (ax < 0 || ax >= rank) return 0;
  *out = (int32_t)ax;
  return 1;
}

MGOPT__PRIVATE int mgopt__ti_bdim(mgopt_dim a, mgopt_dim b, mgopt_dim *o) {
  int sa = mgopt__ti_st(a), sb = mgopt__ti_st(b);
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

MGOPT__PRIVATE int mgopt__ti_unify(mgopt_dim a, mgopt_dim b, mgopt_dim *o) {
  int sa = mgopt__ti_st(a), sb = mgopt__ti_st(b);
  if (sa && sb && a.v != b.v) return 0;
  if (sa) *o = a;
  else if (sb) *o = b;
  else if (a.sym && (a.sym == b.sym || !b.sym)) *o = a;
  else if (b.sym && !a.sym) *o = b;
  else *o = mgopt_dim_unknown();
  return 1;
}

MGOPT__PRIVATE mgopt_status mgopt__ti_broadcast(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                const mgopt_type *ts, int n, int dt, mgopt_diag *d) {
  int64_t rank = 0;
  int i, k;
  mgopt_status s;
  for (i = 0; i < n; i++) {
    if (ts[i].rank < 0) return mgopt__ti_out(p, op, out, dt, -1, d);
    if (ts[i].rank > rank) rank = ts[i].rank;
  }
  if ((s = mgopt__ti_out(p, op, out, dt, rank, d)) != MGOPT_OK) return s;
  for (k = 0; k < rank; k++) {
    mgopt_dim acc = mgopt_dim_static(1);
    for (i = 0; i < n; i++) {
      int64_t j = ts[i].rank - rank + k;
      if (j < 0) continue;
      if (!mgopt__ti_bdim(acc, ts[i].dims[j], &acc))
        return mgopt__ti_fail(d, op, "shapes do not broadcast (dim %d: %lld vs %lld)", k,
                              (long long)acc.v, (long long)ts[i].dims[j].v);
    }
    out->dims[k] = acc;
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE int64_t mgopt__ti_ints(mgopt_program *p, const mgopt_op *op, const char *name, const int64_t **v) {
  int64_t n = mgopt_op_get_ints(p, op, name, v);
  if (n >= 0) return n;
  if (mgopt_op_attr(op, name)) return -2;
  return mgopt_op_slot_index(op, name) >= 0 ? -2 : -1;
}

MGOPT__PRIVATE int mgopt__ti_dtype_param(const mgopt_op *op, const char *name) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(op, name, &n);
  return s ? (int)mgopt_dtype_from_name(s, n) : (int)MGOPT_DT_UNKNOWN;
}

MGOPT__PRIVATE int mgopt__ti_enum_ok(const mgopt_op *op, const char *name, const char *allowed) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(op, name, &n), *a = allowed;
  if (!s) return 1;
  while (*a) {
    size_t m = strcspn(a, "|");
    if (m == n && memcmp(a, s, n) == 0) return 1;
    a += m + (a[m] == '|');
  }
  return 0;
}

MGOPT__PRIVATE int mgopt__ti_dt_clash(int a, int b) {
  return a != MGOPT_DT_UNKNOWN && b != MGOPT_DT_UNKNOWN && a != b;
}

MGOPT__PRIVATE int32_t mgopt__ti_list(const mgopt_op *op, const char *slot, const mgopt_use **uses) {
  int32_t i = mgopt_op_slot_index(op, slot);
  if (i < 0) {
    *uses = NULL;
    return 0;
  }
  *uses = op->slots[i].uses;
  return op->slots[i].n;
}
