/* src/core/infer/reduce.c — type inference of ops that combine elements: reduce_*, reduce_argmax, reduce_argmin, cumsum, softmax, matmul, linear. */
#include "infer.h"

MGOPT__PRIVATE mgopt_status mgopt__infer_reduce(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *axes = NULL;
  int64_t n, k, r = 0;
  int32_t ax, j = 0;
  int keep = mgopt_op_get_bool(op, "keep_dims", 0);
  uint8_t *red;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  n = mgopt__ti_ints(p, op, "axes", &axes);
  if (x.rank < 0) return mgopt__ti_out(p, op, out, x.dtype, (!keep && n == -1) ? 0 : -1, d);
  if (n == -2) {
    if (!keep) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
    if ((s = mgopt__ti_out(p, op, out, x.dtype, x.rank, d)) != MGOPT_OK) return s;
    for (k = 0; k < x.rank; k++)
      if (mgopt__ti_st(x.dims[k]) && x.dims[k].v == 1) out->dims[k] = x.dims[k];
    return MGOPT_OK;
  }
  red = (uint8_t *)mgopt_program_alloc(p, (size_t)(x.rank ? x.rank : 1), 1);
  if (!red) return mgopt__ti_nomem(d);
  for (k = 0; k < x.rank; k++) red[k] = n == -1;
  for (k = 0; k < n; k++) {
    if (!mgopt__ti_axis(axes[k], x.rank, &ax)) return mgopt__ti_fail(d, op, "axis %lld out of range", (long long)axes[k]);
    red[ax] = 1;
  }
  for (k = 0; k < x.rank; k++) r += keep || !red[k];
  if ((s = mgopt__ti_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  for (k = 0; k < x.rank; k++) {
    if (!red[k]) out->dims[j++] = x.dims[k];
    else if (keep) out->dims[j++] = mgopt_dim_static(1);
  }
  return MGOPT_OK;
}

/* reduce_argmax, reduce_argmin: one axis removed (or kept as 1); the index dtype is
   output_dtype: MIL's int32 or uint16, or int64 (ONNX's ArgMax/ArgMin). */
MGOPT__PRIVATE mgopt_status mgopt__infer_reduce_arg(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                    mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  int32_t ax, k, j = 0;
  int keep = mgopt_op_get_bool(op, "keep_dims", 0), dt;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (!mgopt__ti_enum_ok(op, "output_dtype", "int32|uint16|int64"))
    return mgopt__ti_fail(d, op, "output_dtype is not int32, uint16 or int64");
  dt = mgopt__ti_dtype_param(op, "output_dtype");
  if (dt == MGOPT_DT_UNKNOWN) dt = MGOPT_DT_INT32;
  if (x.dtype == MGOPT_DT_BOOL || x.dtype == MGOPT_DT_STRING)
    return mgopt__ti_fail(d, op, "x is %s, not a number", mgopt_dtype_name((mgopt_dtype)x.dtype));
  if (x.rank < 0) return mgopt__ti_out(p, op, out, dt, -1, d);
  if (!mgopt__ti_axis(mgopt_op_get_int(op, "axis", -1), x.rank, &ax))
    return mgopt__ti_fail(d, op, "axis out of range for rank %d", (int)x.rank);
  if ((s = mgopt__ti_out(p, op, out, dt, keep ? x.rank : x.rank - 1, d)) != MGOPT_OK) return s;
  for (k = 0; k < x.rank; k++) {
    if (k != ax) out->dims[j++] = x.dims[k];
    else if (keep) out->dims[j++] = mgopt_dim_static(1);
  }
  return MGOPT_OK;
}

/* cumsum: x's type; the axis must lie in x's rank. */
MGOPT__PRIVATE mgopt_status mgopt__infer_cumsum(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  int32_t ax;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (x.dtype == MGOPT_DT_BOOL || x.dtype == MGOPT_DT_STRING)
    return mgopt__ti_fail(d, op, "x is %s, not a number", mgopt_dtype_name((mgopt_dtype)x.dtype));
  if (x.rank >= 0 && !mgopt__ti_axis(mgopt_op_get_int(op, "axis", 0), x.rank, &ax))
    return mgopt__ti_fail(d, op, "axis out of range for rank %d", (int)x.rank);
  return mgopt__ti_like(p, op, out, &x, x.dtype, d);
}

MGOPT__PRIVATE mgopt_status mgopt__infer_softmax(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                 mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  int32_t ax;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (x.rank >= 0 && !mgopt__ti_axis(mgopt_op_get_int(op, "axis", -1), x.rank, &ax))
    return mgopt__ti_fail(d, op, "axis out of range for rank %d", (int)x.rank);
  return mgopt__ti_like(p, op, out, &x, x.dtype, d);
}

MGOPT__PRIVATE mgopt_status mgopt__infer_matmul(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                mgopt_diag *d) {
  mgopt_type x, y, bt[2];
  mgopt_status s;
  mgopt_dim m = mgopt_dim_unknown(), kx, ky, n = mgopt_dim_unknown(), kk;
  mgopt_type batch;
  int64_t r, k;
  int j = 0;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "y", &y, d)) != MGOPT_OK) return s;
  if (mgopt__ti_dt_clash(x.dtype, y.dtype)) return mgopt__ti_fail(d, op, "operand dtypes differ");
  if (x.rank < 0 || y.rank < 0) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  if (x.rank == 0 || y.rank == 0) return mgopt__ti_fail(d, op, "scalar operand");
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
  if (!mgopt__ti_unify(kx, ky, &kk))
    return mgopt__ti_fail(d, op, "inner dims differ (%lld vs %lld)", (long long)kx.v, (long long)ky.v);
  /* batch dims broadcast */
  bt[0] = x;
  bt[0].rank = x.rank > 2 ? x.rank - 2 : 0;
  bt[1] = y;
  bt[1].rank = y.rank > 2 ? y.rank - 2 : 0;
  if ((s = mgopt__ti_broadcast(p, op, &batch, bt, 2, x.dtype, d)) != MGOPT_OK) return s;
  r = batch.rank + (x.rank > 1) + (y.rank > 1);
  if ((s = mgopt__ti_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  for (k = 0; k < batch.rank; k++) out->dims[j++] = batch.dims[k];
  if (x.rank > 1) out->dims[j++] = m;
  if (y.rank > 1) out->dims[j++] = n;
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_linear(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                mgopt_diag *d) {
  mgopt_type x, w, b;
  mgopt_status s;
  mgopt_dim od = mgopt_dim_unknown(), tmp;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "weight", &w, d)) != MGOPT_OK) return s;
  if (w.rank >= 0 && w.rank != 2) return mgopt__ti_fail(d, op, "weight has rank %d, not 2", (int)w.rank);
  if (x.rank == 0) return mgopt__ti_fail(d, op, "scalar input");
  if (w.rank == 2) {
    od = w.dims[0];
    if (x.rank > 0 && !mgopt__ti_unify(x.dims[x.rank - 1], w.dims[1], &tmp))
      return mgopt__ti_fail(d, op, "input has %lld features, weight expects %lld", (long long)x.dims[x.rank - 1].v,
                            (long long)w.dims[1].v);
  }
  if (mgopt__ti_opt(op, "bias", &b) && b.rank == 1 && !mgopt__ti_unify(od, b.dims[0], &od))
    return mgopt__ti_fail(d, op, "bias length differs from the output features");
  if ((s = mgopt__ti_like(p, op, out, &x, x.dtype, d)) != MGOPT_OK) return s;
  if (x.rank > 0) out->dims[x.rank - 1] = od;
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- einsum */

/* One operand's term of eq[*i..) up to ',' or '-' or the end: labels into lab (the ellipsis as
   255), its count in *n. 0 on a bad character, a second ellipsis or too many labels. */
static int mgopt__einsum_term(const char *eq, size_t len, size_t *i, uint8_t *lab, int32_t *n, int *ell) {
  *n = 0;
  *ell = 0;
  while (*i < len && eq[*i] != ',' && eq[*i] != '-') {
    char c = eq[*i];
    if (c == ' ') {
      (*i)++;
      continue;
    }
    if (*n >= MGOPT_MAX_RANK) return 0;
    if (c == '.') {
      if (*ell || *i + 2 >= len + 0 || eq[*i + 1] != '.' || eq[*i + 2] != '.') return 0;
      *ell = 1;
      lab[(*n)++] = 255;
      *i += 3;
      continue;
    }
    if (c >= 'a' && c <= 'z') lab[(*n)++] = (uint8_t)(c - 'a');
    else if (c >= 'A' && c <= 'Z') lab[(*n)++] = (uint8_t)(26 + c - 'A');
    else return 0;
    (*i)++;
  }
  return 1;
}

/* Expands a term's ellipsis (at most one) over `er` dims of the `ell` the equation has. */
static int mgopt__einsum_expand(const uint8_t *t, int32_t n, int32_t rank, int32_t ell, uint8_t *out, int32_t *nout) {
  int32_t k, j, m = 0, er = -1;
  for (k = 0; k < n; k++)
    if (t[k] == 255) er = rank - (n - 1);
  if (er < 0 && n != rank) return 0;
  if (er > ell) return 0;
  for (k = 0; k < n; k++) {
    if (t[k] != 255) {
      out[m++] = t[k];
      continue;
    }
    for (j = 0; j < er; j++) out[m++] = (uint8_t)(52 + ell - er + j);
  }
  *nout = m;
  return m <= MGOPT_MAX_RANK;
}

MGOPT__PRIVATE int mgopt__einsum_parse(const char *eq, size_t len, int32_t nops, const int32_t *ranks, mgopt__einsum *e) {
  uint8_t terms[MGOPT__EINSUM_MAX_OPS][MGOPT_MAX_RANK], ot[MGOPT_MAX_RANK];
  int32_t nt[MGOPT__EINSUM_MAX_OPS], k, j, ell = 0, no = 0, count[MGOPT__EINSUM_LABELS];
  int has_ell[MGOPT__EINSUM_MAX_OPS], oell = 0, arrow = 0;
  size_t i = 0;
  if (!eq || nops < 1 || nops > MGOPT__EINSUM_MAX_OPS) return 0;
  memset(e, 0, sizeof *e);
  e->nops = nops;
  for (k = 0; k < nops; k++) {
    if (ranks[k] < 0 || ranks[k] > MGOPT_MAX_RANK) return 0;
    if (!mgopt__einsum_term(eq, len, &i, terms[k], &nt[k], &has_ell[k])) return 0;
    if (k + 1 < nops) {
      if (i >= len || eq[i] != ',') return 0;
      i++;
    }
    if (has_ell[k]) {
      int32_t er = ranks[k] - (nt[k] - 1);
      if (er < 0) return 0;
      if (er > ell) ell = er;
    }
  }
  if (i < len) {
    if (eq[i] != '-' || i + 1 >= len || eq[i + 1] != '>') return 0;
    i += 2;
    arrow = 1;
    if (!mgopt__einsum_term(eq, len, &i, ot, &no, &oell) || i != len) return 0;
  }
  if (ell > MGOPT_MAX_RANK) return 0;
  memset(count, 0, sizeof count);
  for (k = 0; k < nops; k++) {
    if (!mgopt__einsum_expand(terms[k], nt[k], ranks[k], ell, e->lab[k], &e->rank[k]) || e->rank[k] != ranks[k]) return 0;
    for (j = 0; j < e->rank[k]; j++) count[e->lab[k][j]]++;
  }
  if (arrow) {
    int seen[MGOPT__EINSUM_LABELS];
    int32_t on = 0;
    memset(seen, 0, sizeof seen);
    for (j = 0; j < no; j++) {
      if (ot[j] == 255) {
        for (k = 0; k < ell; k++) {
          if (on >= MGOPT_MAX_RANK) return 0;
          e->out[on++] = (uint8_t)(52 + k);
        }
        continue;
      }
      if (!count[ot[j]] || seen[ot[j]]++ || on >= MGOPT_MAX_RANK) return 0;
      e->out[on++] = ot[j];
    }
    if (!oell)
      for (k = 0; k < ell; k++)
        if (count[52 + k]) return 0; /* broadcast dims left out of an explicit output */
    e->out_rank = on;
  } else {
    int32_t on = 0;
    for (k = 0; k < ell; k++) e->out[on++] = (uint8_t)(52 + k);
    for (j = 0; j < 52; j++)
      if (count[j] == 1) {
        if (on >= MGOPT_MAX_RANK) return 0;
        e->out[on++] = (uint8_t)j;
      }
    e->out_rank = on;
  }
  return 1;
}

/* einsum: values (1 to 8 operands, one dtype), equation. A label's size is the
   same in every operand; a dim an ellipsis stands for broadcasts from 1. */
MGOPT__PRIVATE mgopt_status mgopt__infer_einsum(mgopt_program *p, const mgopt_op *op, mgopt_type *out, mgopt_diag *d) {
  mgopt_type ts[MGOPT__EINSUM_MAX_OPS];
  int32_t ranks[MGOPT__EINSUM_MAX_OPS], k, j, n = 0, dt = MGOPT_DT_UNKNOWN;
  mgopt_dim size[MGOPT__EINSUM_LABELS];
  int known[MGOPT__EINSUM_LABELS];
  mgopt__einsum e;
  size_t len = 0;
  const char *eq = mgopt_op_get_string(op, "equation", &len);
  mgopt_status s;
  const mgopt_use *uses;
  int32_t nv = mgopt__ti_list(op, "values", &uses);
  if (nv > MGOPT__EINSUM_MAX_OPS) return mgopt__ti_fail(d, op, "more than %d operands", MGOPT__EINSUM_MAX_OPS);
  for (k = 0; k < nv; k++) {
    const mgopt_value *v = uses[k].value;
    if (!v || v->type.kind != MGOPT_TYPE_TENSOR) return mgopt__ti_fail(d, op, "an operand is not a tensor");
    ts[n] = mgopt__ti_view(&v->type);
    if (dt == MGOPT_DT_UNKNOWN) dt = ts[n].dtype;
    else if (ts[n].dtype != MGOPT_DT_UNKNOWN && ts[n].dtype != dt) return mgopt__ti_fail(d, op, "operands of different dtypes");
    ranks[n] = ts[n].rank;
    n++;
  }
  if (n == 0) return mgopt__ti_fail(d, op, "no operands");
  for (k = 0; k < n; k++)
    if (ranks[k] < 0) return mgopt__ti_out(p, op, out, dt, -1, d);
  if (!eq || !mgopt__einsum_parse(eq, len, n, ranks, &e)) return mgopt__ti_fail(d, op, "bad equation for these operands");
  for (j = 0; j < MGOPT__EINSUM_LABELS; j++) {
    size[j] = mgopt_dim_static(1);
    known[j] = 0;
  }
  for (k = 0; k < n; k++)
    for (j = 0; j < e.rank[k]; j++) {
      int l = e.lab[k][j];
      mgopt_dim dd = ts[k].dims[j];
      if (l >= 52 && mgopt__ti_st(dd) && dd.v == 1) continue; /* broadcasts */
      if (!known[l]) {
        size[l] = dd;
        known[l] = 1;
      } else if (mgopt__ti_st(dd) && mgopt__ti_st(size[l])) {
        if (dd.v != size[l].v) return mgopt__ti_fail(d, op, "label %d has sizes %lld and %lld", l, (long long)size[l].v, (long long)dd.v);
      } else if (!mgopt__ti_st(size[l]) && mgopt__ti_st(dd)) {
        size[l] = dd;
      }
    }
  if ((s = mgopt__ti_out(p, op, out, dt, e.out_rank, d)) != MGOPT_OK) return s;
  for (j = 0; j < e.out_rank; j++) out->dims[j] = size[e.out[j]];
  return MGOPT_OK;
}
