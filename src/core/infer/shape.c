/* src/core/infer/shape.c — type inference of ops that move elements: reshape, transpose, expand_dims, squeeze,
   concat, stack, split, slice_by_index, slice_by_size, gather, gather_along_axis, one_hot, pad, tile, pixel_shuffle,
   space_to_batch, batch_to_space. */
#include "infer.h"

MGOPT__PRIVATE mgopt_status mgopt__infer_reshape(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                 mgopt_diag *d) {
  mgopt_type x, sh;
  mgopt_status s;
  const int64_t *v = NULL;
  int64_t n, k, infer_at = -1, rem_in = 1, rem_out = 1;
  int rem_ok = 1;
  uint8_t *copied;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "shape", &sh, d)) != MGOPT_OK) return s;
  n = mgopt__ti_ints(p, op, "shape", &v);
  if (n < 0) {
    /* shape known only at run time: its length gives the rank */
    int64_t r = (sh.rank == 1 && mgopt__ti_st(sh.dims[0])) ? sh.dims[0].v : -1;
    if (sh.rank == 0) r = 0;
    return mgopt__ti_out(p, op, out, x.dtype, r, d);
  }
  if ((s = mgopt__ti_out(p, op, out, x.dtype, n, d)) != MGOPT_OK) return s;
  copied = (uint8_t *)mgopt_program_alloc(p, (size_t)(x.rank > 0 ? x.rank : 1), 1);
  if (!copied) return mgopt__ti_nomem(d);
  for (k = 0; k < n; k++) {
    if (v[k] == -1) {
      if (infer_at >= 0) return mgopt__ti_fail(d, op, "more than one -1 in 'shape'");
      infer_at = k;
    } else if (v[k] == 0) {
      if (x.rank >= 0 && k >= x.rank) return mgopt__ti_fail(d, op, "'shape' copies dim %lld of a rank-%d input", (long long)k, (int)x.rank);
      if (x.rank >= 0) {
        out->dims[k] = x.dims[k];
        copied[k] = 1;
      } else {
        rem_ok = 0;
      }
    } else if (v[k] < 0) {
      return mgopt__ti_fail(d, op, "negative entry %lld in 'shape'", (long long)v[k]);
    } else {
      out->dims[k] = mgopt_dim_static(v[k]);
      if (!mgopt__mul_i64(rem_out, v[k], &rem_out)) return mgopt__ti_fail(d, op, "'shape' overflows");
    }
  }
  /* element counts of the dims not copied through, on both sides: copied dims cancel out */
  if (x.rank < 0) rem_ok = 0;
  for (k = 0; rem_ok && k < x.rank; k++) {
    if (copied[k]) continue;
    if (!mgopt__ti_st(x.dims[k]) || !mgopt__mul_i64(rem_in, x.dims[k].v, &rem_in)) rem_ok = 0;
  }
  if (infer_at >= 0) {
    if (rem_ok) {
      if (rem_out == 0 || rem_in % rem_out != 0)
        return mgopt__ti_fail(d, op, "cannot reshape %lld elements into 'shape'", (long long)rem_in);
      out->dims[infer_at] = mgopt_dim_static(rem_in / rem_out);
    }
  } else if (rem_ok && rem_in != rem_out) {
    return mgopt__ti_fail(d, op, "element count changes (%lld vs %lld)", (long long)rem_in, (long long)rem_out);
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_transpose(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                   mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *perm = NULL;
  int64_t n, k;
  int32_t ax;
  uint8_t *seen;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  n = mgopt__ti_ints(p, op, "perm", &perm);
  if (n == -1) return mgopt__ti_fail(d, op, "missing 'perm'");
  if (n < 0) return mgopt__ti_out(p, op, out, x.dtype, x.rank, d);
  if (x.rank >= 0 && n != x.rank) return mgopt__ti_fail(d, op, "'perm' has %lld entries for rank %d", (long long)n, (int)x.rank);
  if ((s = mgopt__ti_out(p, op, out, x.dtype, n, d)) != MGOPT_OK) return s;
  seen = (uint8_t *)mgopt_program_alloc(p, (size_t)(n ? n : 1), 1);
  if (!seen) return mgopt__ti_nomem(d);
  for (k = 0; k < n; k++) {
    if (!mgopt__ti_axis(perm[k], n, &ax) || seen[ax]) return mgopt__ti_fail(d, op, "'perm' is not a permutation");
    seen[ax] = 1;
    if (x.rank >= 0) out->dims[k] = x.dims[ax];
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_expand_dims(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                     mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *axes = NULL;
  int64_t n, k, r;
  int32_t ax, j = 0;
  uint8_t *ins;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  n = mgopt__ti_ints(p, op, "axes", &axes);
  if (n == -1) return mgopt__ti_fail(d, op, "missing 'axes'");
  if (n < 0 || x.rank < 0) return mgopt__ti_out(p, op, out, x.dtype, n < 0 ? -1 : (x.rank < 0 ? -1 : x.rank + n), d);
  r = x.rank + n;
  if ((s = mgopt__ti_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  ins = (uint8_t *)mgopt_program_alloc(p, (size_t)(r ? r : 1), 1);
  if (!ins) return mgopt__ti_nomem(d);
  for (k = 0; k < n; k++) {
    if (!mgopt__ti_axis(axes[k], r, &ax) || ins[ax]) return mgopt__ti_fail(d, op, "bad or repeated axis %lld", (long long)axes[k]);
    ins[ax] = 1;
  }
  for (k = 0; k < r; k++) out->dims[k] = ins[k] ? mgopt_dim_static(1) : x.dims[j++];
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_squeeze(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                 mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *axes = NULL;
  int64_t n, k, r = 0;
  int32_t ax, j = 0;
  uint8_t *drop;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  n = mgopt__ti_ints(p, op, "axes", &axes);
  if (x.rank < 0 || n == -2) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  drop = (uint8_t *)mgopt_program_alloc(p, (size_t)(x.rank ? x.rank : 1), 1);
  if (!drop) return mgopt__ti_nomem(d);
  if (n < 0) {
    for (k = 0; k < x.rank; k++) drop[k] = mgopt__ti_st(x.dims[k]) && x.dims[k].v == 1;
  } else {
    for (k = 0; k < n; k++) {
      if (!mgopt__ti_axis(axes[k], x.rank, &ax)) return mgopt__ti_fail(d, op, "axis %lld out of range", (long long)axes[k]);
      if (!mgopt__ti_st(x.dims[ax]) || x.dims[ax].v != 1)
        return mgopt__ti_fail(d, op, "dim %d is not 1", (int)ax);
      drop[ax] = 1;
    }
  }
  for (k = 0; k < x.rank; k++) r += !drop[k];
  if ((s = mgopt__ti_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  for (k = 0; k < x.rank; k++)
    if (!drop[k]) out->dims[j++] = x.dims[k];
  return MGOPT_OK;
}

/* concat and stack: every input has the same rank and (off the axis) the same dims. */
MGOPT__PRIVATE mgopt_status mgopt__infer_join(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                              mgopt_diag *d) {
  const mgopt_use *uses;
  int32_t n = mgopt__ti_list(op, "values", &uses), i, ax, k;
  int is_stack = op->kind == MGOPT_OP_stack;
  int64_t rank = -1, sum = 0;
  int dt = MGOPT_DT_UNKNOWN, sum_ok = 1;
  mgopt_type first;
  mgopt_status s;
  mgopt_dim *acc;
  if (n <= 0) return mgopt__ti_fail(d, op, "no 'values'");
  for (i = 0; i < n; i++) {
    const mgopt_value *v = uses[i].value;
    mgopt_type t;
    if (!v || v->type.kind != MGOPT_TYPE_TENSOR) return mgopt__ti_fail(d, op, "value %d is not a tensor", (int)i);
    t = mgopt__ti_view(&v->type);
    if (mgopt__ti_dt_clash(dt, t.dtype)) return mgopt__ti_fail(d, op, "values have different dtypes");
    if (t.dtype != MGOPT_DT_UNKNOWN) dt = t.dtype;
    if (t.rank >= 0) {
      if (rank >= 0 && t.rank != rank) return mgopt__ti_fail(d, op, "values have different ranks");
      rank = t.rank;
      first = t;
    }
  }
  if (rank < 0) return mgopt__ti_out(p, op, out, dt, -1, d);
  if (!mgopt__ti_axis(mgopt_op_get_int(op, "axis", 0), rank + is_stack, &ax))
    return mgopt__ti_fail(d, op, "axis out of range");
  if (!is_stack && rank == 0) return mgopt__ti_fail(d, op, "cannot concatenate scalars");
  acc = (mgopt_dim *)mgopt_program_alloc(p, sizeof(mgopt_dim) * (size_t)(rank ? rank : 1), 8);
  if (!acc) return mgopt__ti_nomem(d);
  if (rank) memcpy(acc, first.dims, sizeof(mgopt_dim) * (size_t)rank);
  for (i = 0; i < n; i++) {
    mgopt_type t = mgopt__ti_view(&uses[i].value->type);
    if (t.rank < 0) {
      sum_ok = 0;
      continue;
    }
    for (k = 0; k < rank; k++) {
      if (!is_stack && k == ax) {
        if (!mgopt__ti_st(t.dims[k]) || !mgopt__add_i64(sum, t.dims[k].v, &sum)) sum_ok = 0;
      } else if (!mgopt__ti_unify(acc[k], t.dims[k], &acc[k])) {
        return mgopt__ti_fail(d, op, "values differ in dim %d", (int)k);
      }
    }
  }
  if ((s = mgopt__ti_out(p, op, out, dt, rank + is_stack, d)) != MGOPT_OK) return s;
  if (is_stack) {
    for (k = 0; k < rank + 1; k++)
      out->dims[k] = k < ax ? acc[k] : k == ax ? mgopt_dim_static(n) : acc[k - 1];
  } else {
    memcpy(out->dims, acc, sizeof(mgopt_dim) * (size_t)rank);
    out->dims[ax] = sum_ok ? mgopt_dim_static(sum) : mgopt_dim_unknown();
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_split(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                               mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *sizes = NULL;
  int64_t n, sum = 0, ns;
  int32_t ax = 0, i;
  mgopt_dim dim;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (x.rank >= 0 && !mgopt__ti_axis(mgopt_op_get_int(op, "axis", 0), x.rank, &ax))
    return mgopt__ti_fail(d, op, "axis out of range");
  n = mgopt__ti_ints(p, op, "split_sizes", &sizes);
  ns = mgopt_op_get_int(op, "num_splits", op->nouts);
  if (n >= 0 && n != op->nouts) return mgopt__ti_fail(d, op, "%lld split sizes for %d outputs", (long long)n, (int)op->nouts);
  if (n == -1 && ns != op->nouts) return mgopt__ti_fail(d, op, "num_splits %lld for %d outputs", (long long)ns, (int)op->nouts);
  for (i = 0; i < n; i++) {
    if (sizes[i] < 0 || !mgopt__add_i64(sum, sizes[i], &sum)) return mgopt__ti_fail(d, op, "bad split size");
  }
  dim = x.rank >= 0 ? x.dims[ax] : mgopt_dim_unknown();
  if (n >= 0 && mgopt__ti_st(dim) && sum != dim.v)
    return mgopt__ti_fail(d, op, "split sizes add up to %lld, dim is %lld", (long long)sum, (long long)dim.v);
  if (n == -1 && mgopt__ti_st(dim) && dim.v % op->nouts != 0)
    return mgopt__ti_fail(d, op, "dim %lld does not split into %d equal parts", (long long)dim.v, (int)op->nouts);
  for (i = 0; i < op->nouts; i++) {
    if ((s = mgopt__ti_like(p, op, &out[i], &x, x.dtype, d)) != MGOPT_OK) return s;
    if (x.rank < 0) continue;
    if (n >= 0) out[i].dims[ax] = mgopt_dim_static(sizes[i]);
    else if (n == -2) out[i].dims[ax] = mgopt_dim_unknown();
    else if (mgopt__ti_st(dim)) out[i].dims[ax] = mgopt_dim_static(dim.v / op->nouts);
    else if (op->nouts != 1) out[i].dims[ax] = mgopt_dim_unknown();
  }
  return MGOPT_OK;
}

/* Length of x[b:e:st] along a dim of static size n, with begin/end masks. */
static int64_t mgopt__ti_slice_len(int64_t n, int64_t b, int64_t e, int64_t st, int bm, int em) {
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

static int mgopt__ti_flag(const int64_t *m, int64_t n, int64_t i) { return m && i < n && m[i] != 0; }

MGOPT__PRIVATE mgopt_status mgopt__infer_slice_by_index(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                        mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *bv = NULL, *ev = NULL, *sv = NULL, *bm = NULL, *em = NULL, *sm = NULL;
  int64_t nb, ne, ns, nbm, nem, nsm, rank, k, r = 0;
  int32_t j = 0;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (!mgopt_op_operand(op, "begin") || !mgopt_op_operand(op, "end"))
    return mgopt__ti_fail(d, op, "missing 'begin' or 'end'");
  nb = mgopt__ti_ints(p, op, "begin", &bv);
  ne = mgopt__ti_ints(p, op, "end", &ev);
  ns = mgopt__ti_ints(p, op, "stride", &sv);
  nbm = mgopt__ti_ints(p, op, "begin_mask", &bm);
  nem = mgopt__ti_ints(p, op, "end_mask", &em);
  nsm = mgopt__ti_ints(p, op, "squeeze_mask", &sm);
  rank = x.rank >= 0 ? x.rank : nb >= 0 ? nb : ne;
  if (rank < 0) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  if ((nb >= 0 && nb != rank) || (ne >= 0 && ne != rank) || (ns >= 0 && ns != rank))
    return mgopt__ti_fail(d, op, "begin/end/stride lengths do not match rank %lld", (long long)rank);
  if (nsm == -2) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  for (k = 0; k < rank; k++) r += !mgopt__ti_flag(sm, nsm, k);
  if ((s = mgopt__ti_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  for (k = 0; k < rank; k++) {
    mgopt_dim dim = x.rank >= 0 ? x.dims[k] : mgopt_dim_unknown(), o = mgopt_dim_unknown();
    int b_mask = mgopt__ti_flag(bm, nbm, k), e_mask = mgopt__ti_flag(em, nem, k);
    int known = (b_mask || nb >= 0) && (e_mask || ne >= 0) && ns != -2;
    int64_t st = ns >= 0 ? sv[k] : 1;
    if (ns >= 0 && st == 0) return mgopt__ti_fail(d, op, "stride 0 in dim %lld", (long long)k);
    if (nbm == -2 || nem == -2) known = 0;
    if (mgopt__ti_flag(sm, nsm, k)) continue;
    if (known && b_mask && e_mask && st == 1) o = dim;
    else if (known && mgopt__ti_st(dim))
      o = mgopt_dim_static(mgopt__ti_slice_len(dim.v, b_mask ? 0 : bv[k], e_mask ? 0 : ev[k], st, b_mask, e_mask));
    out->dims[j++] = o;
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_slice_by_size(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                       mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *bv = NULL, *zv = NULL;
  int64_t nb, nz, rank, k;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (!mgopt_op_operand(op, "begin") || !mgopt_op_operand(op, "size"))
    return mgopt__ti_fail(d, op, "missing 'begin' or 'size'");
  nb = mgopt__ti_ints(p, op, "begin", &bv);
  nz = mgopt__ti_ints(p, op, "size", &zv);
  rank = x.rank >= 0 ? x.rank : nb >= 0 ? nb : nz;
  if (rank < 0) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  if ((nb >= 0 && nb != rank) || (nz >= 0 && nz != rank))
    return mgopt__ti_fail(d, op, "begin/size lengths do not match rank %lld", (long long)rank);
  if ((s = mgopt__ti_out(p, op, out, x.dtype, rank, d)) != MGOPT_OK) return s;
  for (k = 0; k < rank; k++) {
    mgopt_dim dim = x.rank >= 0 ? x.dims[k] : mgopt_dim_unknown();
    int64_t b = nb >= 0 ? bv[k] : -1, z = nz >= 0 ? zv[k] : -2;
    if (z < -1) {
      if (nz >= 0) return mgopt__ti_fail(d, op, "bad size %lld", (long long)z);
      continue;
    }
    if (mgopt__ti_st(dim) && nb >= 0) {
      if (b < 0) b += dim.v;
      if (b < 0 || b > dim.v) return mgopt__ti_fail(d, op, "begin %lld out of range in dim %lld", (long long)bv[k], (long long)k);
      if (z == -1) z = dim.v - b;
      if (z > dim.v - b) return mgopt__ti_fail(d, op, "slice past the end of dim %lld", (long long)k);
      out->dims[k] = mgopt_dim_static(z);
    } else if (z >= 0) {
      out->dims[k] = mgopt_dim_static(z);
    } else if (nb >= 0 && b == 0) {
      out->dims[k] = dim;
    }
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_gather(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                mgopt_diag *d) {
  mgopt_type x, ix;
  mgopt_status s;
  int32_t ax, j = 0;
  int64_t bd, k;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "indices", &ix, d)) != MGOPT_OK) return s;
  if (ix.dtype != MGOPT_DT_UNKNOWN && !mgopt_dtype_is_int((mgopt_dtype)ix.dtype))
    return mgopt__ti_fail(d, op, "indices are %s, not integers", mgopt_dtype_name((mgopt_dtype)ix.dtype));
  if (x.rank < 0 || ix.rank < 0) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  if (!mgopt__ti_axis(mgopt_op_get_int(op, "axis", 0), x.rank, &ax)) return mgopt__ti_fail(d, op, "axis out of range");
  bd = mgopt_op_get_int(op, "batch_dims", 0);
  if (bd < 0) bd += ix.rank;
  if (bd < 0 || bd > ix.rank || bd > ax) return mgopt__ti_fail(d, op, "bad batch_dims");
  if ((s = mgopt__ti_out(p, op, out, x.dtype, (int64_t)x.rank - 1 + ix.rank - bd, d)) != MGOPT_OK) return s;
  for (k = 0; k < ax; k++) out->dims[j++] = x.dims[k];
  for (k = bd; k < ix.rank; k++) out->dims[j++] = ix.dims[k];
  for (k = ax + 1; k < x.rank; k++) out->dims[j++] = x.dims[k];
  return MGOPT_OK;
}

/* gather_along_axis: indices' shape with x's dtype; x and indices have one rank
   and the same dims off the axis (MIL's rule: ONNX's smaller ones stay opaque). */
MGOPT__PRIVATE mgopt_status mgopt__infer_gather_axis(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                     mgopt_diag *d) {
  mgopt_type x, ix;
  mgopt_status s;
  int32_t ax, k;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "indices", &ix, d)) != MGOPT_OK) return s;
  if (ix.dtype != MGOPT_DT_UNKNOWN && !mgopt_dtype_is_int((mgopt_dtype)ix.dtype))
    return mgopt__ti_fail(d, op, "indices are %s, not integers", mgopt_dtype_name((mgopt_dtype)ix.dtype));
  if (x.rank < 0 || ix.rank < 0) return mgopt__ti_like(p, op, out, &ix, x.dtype, d);
  if (x.rank != ix.rank) return mgopt__ti_fail(d, op, "x has rank %d, indices rank %d", (int)x.rank, (int)ix.rank);
  if (!mgopt__ti_axis(mgopt_op_get_int(op, "axis", 0), x.rank, &ax)) return mgopt__ti_fail(d, op, "axis out of range");
  if ((s = mgopt__ti_like(p, op, out, &ix, x.dtype, d)) != MGOPT_OK) return s;
  for (k = 0; k < x.rank; k++)
    if (k != ax && !mgopt__ti_unify(x.dims[k], ix.dims[k], &out->dims[k]))
      return mgopt__ti_fail(d, op, "x and indices differ in dim %d", (int)k);
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_one_hot(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                 mgopt_diag *d) {
  mgopt_type ix;
  mgopt_status s;
  int32_t ax, k, j = 0;
  int64_t depth = mgopt_op_get_int(op, "one_hot_vector_size", -1);
  if ((s = mgopt__ti_in(op, "indices", &ix, d)) != MGOPT_OK) return s;
  if (ix.rank < 0) return mgopt__ti_out(p, op, out, MGOPT_DT_FP32, -1, d);
  if (!mgopt__ti_axis(mgopt_op_get_int(op, "axis", -1), (int64_t)ix.rank + 1, &ax))
    return mgopt__ti_fail(d, op, "axis out of range");
  if ((s = mgopt__ti_out(p, op, out, MGOPT_DT_FP32, (int64_t)ix.rank + 1, d)) != MGOPT_OK) return s;
  for (k = 0; k <= ix.rank; k++)
    out->dims[k] = k == ax ? (depth >= 0 ? mgopt_dim_static(depth) : mgopt_dim_unknown()) : ix.dims[j++];
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_pad(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                             mgopt_diag *d) {
  mgopt_type x, pt;
  mgopt_status s;
  const int64_t *pv = NULL;
  int64_t n, k, first;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "pad", &pt, d)) != MGOPT_OK) return s;
  if (!mgopt__ti_enum_ok(op, "mode", "constant|reflect|replicate")) return mgopt__ti_fail(d, op, "unknown mode");
  n = mgopt__ti_ints(p, op, "pad", &pv);
  if ((s = mgopt__ti_like(p, op, out, &x, x.dtype, d)) != MGOPT_OK || x.rank < 0) return s;
  if (n < 0) {
    /* values known at run time only: the last len/2 dims (all when len is unknown) change */
    int64_t len = (pt.rank == 1 && mgopt__ti_st(pt.dims[0])) ? pt.dims[0].v : 2 * (int64_t)x.rank;
    if (len % 2 || len / 2 > x.rank) return mgopt__ti_fail(d, op, "'pad' has %lld entries for rank %d", (long long)len, (int)x.rank);
    for (k = x.rank - len / 2; k < x.rank; k++) out->dims[k] = mgopt_dim_unknown();
    return MGOPT_OK;
  }
  if (n % 2 || n / 2 > x.rank) return mgopt__ti_fail(d, op, "'pad' has %lld entries for rank %d", (long long)n, (int)x.rank);
  first = x.rank - n / 2;
  for (k = first; k < x.rank; k++) {
    int64_t b = pv[2 * (k - first)], e = pv[2 * (k - first) + 1], v;
    if (b == 0 && e == 0) continue;
    if (!mgopt__ti_st(x.dims[k])) {
      out->dims[k] = mgopt_dim_unknown();
      continue;
    }
    if (!mgopt__add_i64(x.dims[k].v, b, &v) || !mgopt__add_i64(v, e, &v) || v < 0)
      return mgopt__ti_fail(d, op, "bad padding for dim %lld", (long long)k);
    out->dims[k] = mgopt_dim_static(v);
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_tile(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                              mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *rv = NULL;
  int64_t n, k, v;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (!mgopt_op_operand(op, "reps")) return mgopt__ti_fail(d, op, "missing operand 'reps'");
  n = mgopt__ti_ints(p, op, "reps", &rv);
  if (n < 0) return mgopt__ti_out(p, op, out, x.dtype, x.rank, d);
  if (x.rank >= 0 && n != x.rank) return mgopt__ti_fail(d, op, "'reps' has %lld entries for rank %d", (long long)n, (int)x.rank);
  if ((s = mgopt__ti_out(p, op, out, x.dtype, n, d)) != MGOPT_OK) return s;
  for (k = 0; k < n; k++) {
    if (rv[k] < 0) return mgopt__ti_fail(d, op, "negative repetition");
    if (x.rank < 0) continue;
    if (rv[k] == 1) out->dims[k] = x.dims[k];
    else if (rv[k] == 0) out->dims[k] = mgopt_dim_static(0);
    else if (mgopt__ti_st(x.dims[k])) {
      if (!mgopt__mul_i64(x.dims[k].v, rv[k], &v)) return mgopt__ti_fail(d, op, "dim overflows");
      out->dims[k] = mgopt_dim_static(v);
    }
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_pixel_shuffle(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                       mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  int64_t f = mgopt_op_get_int(op, "upscale_factor", -1), ff, k, v;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (f < 1 || !mgopt__mul_i64(f, f, &ff)) return mgopt__ti_fail(d, op, "bad upscale_factor %lld", (long long)f);
  if (x.rank >= 0 && x.rank != 4) return mgopt__ti_fail(d, op, "expects rank 4, got %d", (int)x.rank);
  if ((s = mgopt__ti_out(p, op, out, x.dtype, 4, d)) != MGOPT_OK) return s;
  if (x.rank < 0) return MGOPT_OK;
  out->dims[0] = x.dims[0];
  if (mgopt__ti_st(x.dims[1])) {
    if (x.dims[1].v % ff) return mgopt__ti_fail(d, op, "%lld channels do not divide by %lld", (long long)x.dims[1].v, (long long)ff);
    out->dims[1] = mgopt_dim_static(x.dims[1].v / ff);
  } else if (f == 1) {
    out->dims[1] = x.dims[1];
  }
  for (k = 2; k < 4; k++) {
    if (f == 1) out->dims[k] = x.dims[k];
    else if (mgopt__ti_st(x.dims[k])) {
      if (!mgopt__mul_i64(x.dims[k].v, f, &v)) return mgopt__ti_fail(d, op, "dim overflows");
      out->dims[k] = mgopt_dim_static(v);
    }
  }
  return MGOPT_OK;
}

/* space_to_batch and batch_to_space: x [n, C, spatial...] with 1 or 2 spatial dims; block_shape (one
   entry >= 1 per spatial dim) and paddings or crops (begin, end per spatial dim, >= 0), flattened. */
static mgopt_status mgopt__ti_s2b(mgopt_program *p, const mgopt_op *op, mgopt_type *out, mgopt_diag *d, int to_batch) {
  mgopt_type x;
  mgopt_status s;
  const char *pname = to_batch ? "paddings" : "crops";
  const int64_t *bs = NULL, *pd = NULL;
  int64_t nb = mgopt__ti_ints(p, op, "block_shape", &bs), np = mgopt__ti_ints(p, op, pname, &pd), k, prod = 1, v;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (nb < 1 || nb > 2) return mgopt__ti_fail(d, op, "'block_shape' must have 1 or 2 constant entries");
  if (np != 2 * nb) return mgopt__ti_fail(d, op, "'%s' must have %lld constant entries", pname, (long long)(2 * nb));
  for (k = 0; k < nb; k++)
    if (bs[k] < 1 || !mgopt__mul_i64(prod, bs[k], &prod)) return mgopt__ti_fail(d, op, "bad 'block_shape'");
  for (k = 0; k < np; k++)
    if (pd[k] < 0) return mgopt__ti_fail(d, op, "negative '%s'", pname);
  if (x.rank >= 0 && x.rank != nb + 2)
    return mgopt__ti_fail(d, op, "expects rank %lld, got %d", (long long)(nb + 2), (int)x.rank);
  if ((s = mgopt__ti_out(p, op, out, x.dtype, nb + 2, d)) != MGOPT_OK) return s;
  if (x.rank < 0) return MGOPT_OK;
  out->dims[1] = x.dims[1];
  if (mgopt__ti_st(x.dims[0])) {
    if (to_batch) {
      if (!mgopt__mul_i64(x.dims[0].v, prod, &v)) return mgopt__ti_fail(d, op, "dim overflows");
    } else {
      if (x.dims[0].v % prod) return mgopt__ti_fail(d, op, "batch %lld does not divide by %lld", (long long)x.dims[0].v, (long long)prod);
      v = x.dims[0].v / prod;
    }
    out->dims[0] = mgopt_dim_static(v);
  } else if (prod == 1) {
    out->dims[0] = x.dims[0];
  }
  for (k = 0; k < nb; k++) {
    mgopt_dim in = x.dims[2 + k];
    if (!mgopt__ti_st(in)) continue;
    if (to_batch) {
      if (!mgopt__add_i64(in.v, pd[2 * k], &v) || !mgopt__add_i64(v, pd[2 * k + 1], &v))
        return mgopt__ti_fail(d, op, "dim overflows");
      if (v % bs[k]) return mgopt__ti_fail(d, op, "padded dim %lld does not divide by %lld", (long long)v, (long long)bs[k]);
      v /= bs[k];
    } else {
      if (!mgopt__mul_i64(in.v, bs[k], &v)) return mgopt__ti_fail(d, op, "dim overflows");
      v -= pd[2 * k]; /* crops are >= 0 and v >= 0: no overflow */
      if (v >= 0) v -= pd[2 * k + 1];
      if (v < 0) return mgopt__ti_fail(d, op, "crops larger than the dim");
    }
    out->dims[2 + k] = mgopt_dim_static(v);
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_space_to_batch(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                        mgopt_diag *d) {
  return mgopt__ti_s2b(p, op, out, d, 1);
}

MGOPT__PRIVATE mgopt_status mgopt__infer_batch_to_space(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                        mgopt_diag *d) {
  return mgopt__ti_s2b(p, op, out, d, 0);
}
