/* src/kernels/shape.c — folding kernels that move elements: reshape, transpose, expand_dims, squeeze,
   concat, stack, split, slice_by_index, slice_by_size, gather, tile, pad, one_hot.

   These copy bytes and never round. Every axis, permutation, index and size is
   validated; anything MIL's type inference would reject is not folded. */
#include "kernels.h"

/* Output 0 = the bytes of x under a new shape (reshape-like ops; any dtype). */
/* reshape, expand_dims, squeeze: the same bytes under a new shape. The result
   is a view of x's data, not a copy; both are marked borrowed, so a later
   write through either copies first and never changes the other (the rule
   const_deduplication follows for shared buffers). Strings are copied. */
static int mgopt__ks_copy_out(mgopt__kctx *k, mgopt_tensor *x, int32_t rank, const int64_t *shape) {
  const void *src;
  void *od;
  int r;
  if (mgopt__k_numel(rank, shape) != x->numel) return MGOPT__K_NO;
  if (x->dtype != MGOPT_DT_STRING) return mgopt__k_out_view(k, 0, x, 0, rank, shape);
  r = mgopt__k_out(k, 0, (mgopt_dtype)x->dtype, rank, shape, &od);
  if (r != MGOPT__K_OK) return r;
  if (k->out[0]->nbytes != x->nbytes) return MGOPT__K_NO;
  src = mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  if (x->nbytes) memcpy(od, src, x->nbytes);
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__ks_reshape(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *v;
  int64_t n, shape[MGOPT_MAX_RANK], known = 1;
  int32_t i, neg = -1;
  if (!x) return MGOPT__K_NO;
  n = mgopt__k_ints(k, "shape", &v);
  if (n < 0 || n > MGOPT_MAX_RANK) return MGOPT__K_NO;
  for (i = 0; i < (int32_t)n; i++) {
    int64_t s = v[i];
    if (s == -1) {
      if (neg >= 0) return MGOPT__K_NO;
      neg = i;
      continue;
    }
    if (s == 0) {
      /* 0 copies the input dim aligned from the right; none there means 1 */
      int64_t j = (int64_t)x->rank - (n - i);
      s = j >= 0 ? x->shape[j] : 1;
    } else if (s < 0) {
      return MGOPT__K_NO;
    }
    shape[i] = s;
    if (!mgopt__mul_i64(known, s, &known)) return MGOPT__K_NO;
  }
  if (neg >= 0) {
    if (known == 0 || x->numel % known) return MGOPT__K_NO;
    shape[neg] = x->numel / known;
  }
  return mgopt__ks_copy_out(k, x, (int32_t)n, shape);
}

MGOPT__PRIVATE int mgopt__ks_expand_dims(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *v;
  int64_t n, shape[MGOPT_MAX_RANK];
  uint8_t mark[MGOPT_MAX_RANK];
  int32_t i, j, orank, a;
  if (!x) return MGOPT__K_NO;
  n = mgopt__k_ints(k, "axes", &v);
  if (n < 0 || x->rank + n > MGOPT_MAX_RANK) return MGOPT__K_NO;
  orank = x->rank + (int32_t)n;
  memset(mark, 0, sizeof mark);
  for (i = 0; i < (int32_t)n; i++) {
    if (!mgopt__k_axis(v[i], orank, &a) || mark[a]) return MGOPT__K_NO;
    mark[a] = 1;
  }
  for (i = 0, j = 0; i < orank; i++) shape[i] = mark[i] ? 1 : x->shape[j++];
  return mgopt__ks_copy_out(k, x, orank, shape);
}

MGOPT__PRIVATE int mgopt__ks_squeeze(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *v;
  int64_t n, shape[MGOPT_MAX_RANK];
  uint8_t mark[MGOPT_MAX_RANK];
  int32_t i, orank = 0, a;
  if (!x) return MGOPT__K_NO;
  n = mgopt__k_ints(k, "axes", &v);
  memset(mark, 0, sizeof mark);
  if (n == -2) return MGOPT__K_NO;
  if (n < 0) {
    for (i = 0; i < x->rank; i++) mark[i] = x->shape[i] == 1;
  } else {
    /* only size-1 dims are removed; other listed dims stay (MIL's semantics) */
    for (i = 0; i < (int32_t)n; i++) {
      if (!mgopt__k_axis(v[i], x->rank, &a) || mark[a] & 2) return MGOPT__K_NO;
      mark[a] = (uint8_t)(2 | (x->shape[a] == 1));
    }
  }
  for (i = 0; i < x->rank; i++)
    if (!(mark[i] & 1)) shape[orank++] = x->shape[i];
  return mgopt__ks_copy_out(k, x, orank, shape);
}

MGOPT__PRIVATE int mgopt__ks_transpose(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *v;
  int64_t n, shape[MGOPT_MAX_RANK], st[MGOPT_MAX_RANK], ist[MGOPT_MAX_RANK];
  uint8_t seen[MGOPT_MAX_RANK];
  int32_t i, a;
  size_t es;
  const void *src;
  void *od;
  int r;
  if (!x) return MGOPT__K_NO;
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  n = mgopt__k_ints(k, "perm", &v);
  if (!es || n != x->rank) return MGOPT__K_NO;
  memset(seen, 0, sizeof seen);
  mgopt__k_strides(x->rank, x->shape, ist);
  for (i = 0; i < x->rank; i++) {
    if (!mgopt__k_axis(v[i], x->rank, &a) || seen[a]) return MGOPT__K_NO;
    seen[a] = 1;
    shape[i] = x->shape[a];
    st[i] = ist[a];
  }
  r = mgopt__k_out(k, 0, (mgopt_dtype)x->dtype, x->rank, shape, &od);
  if (r != MGOPT__K_OK) return r;
  src = mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  mgopt__k_strided(od, src, es, x->rank, shape, st, 0);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- concat, stack, split */

/* The constant tensors of the variadic slot `values` (at least one). */
static int mgopt__ks_values(mgopt__kctx *k, mgopt_tensor ***vals, int32_t *nv) {
  int32_t si = mgopt_op_slot_index(k->op, "values"), i;
  const mgopt_slot *s;
  mgopt_tensor **t;
  if (si < 0) return MGOPT__K_NO;
  s = &k->op->slots[si];
  if (s->n < 1) return MGOPT__K_NO;
  t = (mgopt_tensor **)mgopt__k_scratch(k, s->n, sizeof(mgopt_tensor *));
  if (!t) return MGOPT__K_OOM;
  for (i = 0; i < s->n; i++) {
    t[i] = mgopt__k_value(k, s->uses[i].value);
    if (!t[i] || t[i]->dtype != t[0]->dtype || t[i]->rank != t[0]->rank) return MGOPT__K_NO;
  }
  if (!mgopt__k_esize((mgopt_dtype)t[0]->dtype)) return MGOPT__K_NO;
  *vals = t;
  *nv = s->n;
  return MGOPT__K_OK;
}

/* dst = for each of `outer` rows, chunk[i] elements of each input i in turn. */
static int mgopt__ks_join(mgopt__kctx *k, mgopt_tensor **vals, int32_t nv, int64_t outer,
                          const int64_t *chunk, size_t es, uint8_t *dst) {
  int64_t o;
  int32_t i;
  const uint8_t **src = (const uint8_t **)mgopt__k_scratch(k, nv, sizeof(uint8_t *));
  if (!src) return MGOPT__K_OOM;
  /* byte copies: the inputs need no alignment, so none is copied to get it */
  for (i = 0; i < nv; i++) src[i] = (const uint8_t *)vals[i]->data;
  for (o = 0; o < outer; o++)
    for (i = 0; i < nv; i++) {
      size_t bytes = (size_t)chunk[i] * es;
      if (bytes) memcpy(dst, src[i] + (size_t)o * bytes, bytes);
      dst += bytes;
    }
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__ks_concat(mgopt__kctx *k) {
  mgopt_tensor **v;
  int32_t nv, rank, axis, i, d;
  int64_t shape[MGOPT_MAX_RANK], outer = 1, inner = 1, *chunk;
  int interleave;
  void *od;
  int r = mgopt__ks_values(k, &v, &nv);
  if (r != MGOPT__K_OK) return r;
  rank = v[0]->rank;
  if (rank < 1 || !mgopt__k_has_param(k->op, "axis") ||
      !mgopt__k_axis(mgopt_op_get_int(k->op, "axis", 0), rank, &axis))
    return MGOPT__K_NO;
  interleave = mgopt_op_get_bool(k->op, "interleave", 0);
  for (d = 0; d < rank; d++) shape[d] = v[0]->shape[d];
  shape[axis] = 0;
  for (i = 0; i < nv; i++) {
    for (d = 0; d < rank; d++)
      if ((d != axis || interleave) && v[i]->shape[d] != v[0]->shape[d]) return MGOPT__K_NO;
    if (!mgopt__add_i64(shape[axis], v[i]->shape[axis], &shape[axis])) return MGOPT__K_NO;
  }
  for (d = 0; d < axis; d++) outer *= shape[d];
  for (d = axis + 1; d < rank; d++) inner *= shape[d];
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)v[0]->dtype, rank, shape, &od);
  if (r != MGOPT__K_OK) return r;
  chunk = (int64_t *)mgopt__k_scratch(k, nv, sizeof(int64_t));
  if (!chunk) return MGOPT__K_OOM;
  /* interleaving takes one axis slice of each input in turn */
  if (interleave) outer *= v[0]->shape[axis];
  for (i = 0; i < nv; i++) chunk[i] = interleave ? inner : v[i]->shape[axis] * inner;
  return mgopt__ks_join(k, v, nv, outer, chunk, mgopt__k_esize((mgopt_dtype)v[0]->dtype),
                        (uint8_t *)od);
}

MGOPT__PRIVATE int mgopt__ks_stack(mgopt__kctx *k) {
  mgopt_tensor **v;
  int32_t nv, rank, axis, i, d;
  int64_t shape[MGOPT_MAX_RANK], outer = 1, *chunk;
  void *od;
  int r = mgopt__ks_values(k, &v, &nv);
  if (r != MGOPT__K_OK) return r;
  rank = v[0]->rank;
  if (rank + 1 > MGOPT_MAX_RANK || !mgopt__k_has_param(k->op, "axis") ||
      !mgopt__k_axis(mgopt_op_get_int(k->op, "axis", 0), rank + 1, &axis))
    return MGOPT__K_NO;
  for (i = 0; i < nv; i++)
    for (d = 0; d < rank; d++)
      if (v[i]->shape[d] != v[0]->shape[d]) return MGOPT__K_NO;
  for (d = 0, i = 0; d < rank + 1; d++) shape[d] = d == axis ? nv : v[0]->shape[i++];
  for (d = 0; d < axis; d++) outer *= shape[d];
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)v[0]->dtype, rank + 1, shape, &od);
  if (r != MGOPT__K_OK) return r;
  chunk = (int64_t *)mgopt__k_scratch(k, nv, sizeof(int64_t));
  if (!chunk) return MGOPT__K_OOM;
  for (i = 0; i < nv; i++) chunk[i] = outer ? v[0]->numel / outer : 0;
  return mgopt__ks_join(k, v, nv, outer, chunk, mgopt__k_esize((mgopt_dtype)v[0]->dtype),
                        (uint8_t *)od);
}

MGOPT__PRIVATE int mgopt__ks_split(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *sz;
  int64_t ns, *sizes, shape[MGOPT_MAX_RANK], outer = 1, inner = 1, dim, sum = 0, off, o;
  int32_t axis, i, d, nouts = op->nouts;
  size_t es;
  const uint8_t *src;
  int r;
  if (!x || x->rank < 1 || nouts < 1 || !mgopt__k_has_param(op, "axis") ||
      !mgopt__k_axis(mgopt_op_get_int(op, "axis", 0), x->rank, &axis))
    return MGOPT__K_NO;
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  if (!es) return MGOPT__K_NO;
  dim = x->shape[axis];
  sizes = (int64_t *)mgopt__k_scratch(k, nouts, sizeof(int64_t));
  if (!sizes) return MGOPT__K_OOM;
  ns = mgopt__k_ints(k, "split_sizes", &sz);
  if (ns == -2) return MGOPT__K_NO;
  if (ns >= 0) {
    if (ns != nouts) return MGOPT__K_NO;
    for (i = 0; i < nouts; i++) {
      if (sz[i] < 0 || !mgopt__add_i64(sum, sz[i], &sum)) return MGOPT__K_NO;
      sizes[i] = sz[i];
    }
    if (sum != dim) return MGOPT__K_NO;
  } else {
    ns = mgopt_op_get_int(op, "num_splits", -1);
    if (ns != nouts || dim % ns) return MGOPT__K_NO;
    for (i = 0; i < nouts; i++) sizes[i] = dim / ns;
  }
  for (d = 0; d < x->rank; d++) shape[d] = x->shape[d];
  for (i = 0; i < nouts; i++) {
    shape[axis] = sizes[i];
    r = mgopt__k_out_check(k, i, (mgopt_dtype)x->dtype, x->rank, shape);
    if (r != MGOPT__K_OK) return r;
  }
  for (d = 0; d < axis; d++) outer *= x->shape[d];
  for (d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
  src = (const uint8_t *)mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  for (i = 0, off = 0; i < nouts; i++) {
    void *od;
    size_t bytes = (size_t)(sizes[i] * inner) * es;
    shape[axis] = sizes[i];
    r = mgopt__k_out(k, i, (mgopt_dtype)x->dtype, x->rank, shape, &od);
    if (r != MGOPT__K_OK) return r;
    for (o = 0; o < outer && bytes; o++)
      memcpy((uint8_t *)od + (size_t)o * bytes, src + ((size_t)(o * dim + off) * (size_t)inner) * es,
             bytes);
    off += sizes[i];
  }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- slices */

/* One dimension of a Python slice begin:end:step over len elements:
   first index and count. Returns 0 for a zero step. */
static int mgopt__ks_pyslice(int64_t len, int64_t b, int has_b, int64_t e, int has_e, int64_t step,
                             int64_t *first, int64_t *count) {
  if (step == 0 || step == INT64_MIN) return 0;
  if (step > 0) {
    if (!has_b) b = 0;
    else if (b < 0) b = b + len < 0 ? 0 : b + len;
    else if (b > len) b = len;
    if (!has_e) e = len;
    else if (e < 0) e = e + len < 0 ? 0 : e + len;
    else if (e > len) e = len;
    *count = e > b ? (e - b - 1) / step + 1 : 0;
  } else {
    if (!has_b) b = len - 1;
    else if (b < 0) b = b + len < 0 ? -1 : b + len;
    else if (b >= len) b = len - 1;
    if (!has_e) e = -1;
    else if (e < 0) e = e + len < 0 ? -1 : e + len;
    else if (e >= len) e = len - 1;
    *count = b > e ? (b - e - 1) / (-step) + 1 : 0;
  }
  *first = b;
  return 1;
}

/* Output 0 = x sampled at base + sum(i_d * st_d) over shape (rank dims). */
static int mgopt__ks_gather_strided(mgopt__kctx *k, mgopt_tensor *x, int32_t rank, const int64_t *shape,
                                    const int64_t *st, int64_t base, int32_t orank, const int64_t *oshape) {
  const void *src;
  void *od;
  size_t es = mgopt__k_esize((mgopt_dtype)x->dtype);
  int r;
  if (!es) return MGOPT__K_NO;
  /* elements that lie in one run of x (rows of a matrix, a leading-axis
     slice): the result is a view of x, like reshape's, not a copy */
  if (mgopt__k_numel(orank, oshape) > 0) {
    int64_t dense = 1;
    int32_t d;
    for (d = rank - 1; d >= 0 && dense > 0; d--) {
      if (shape[d] == 1) continue;
      if (st[d] != dense) dense = 0;
      else dense *= shape[d];
    }
    if (dense > 0) return mgopt__k_out_view(k, 0, x, (size_t)base * es, orank, oshape);
  }
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, orank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  src = mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  mgopt__k_strided(od, src, es, rank, shape, st, base);
  return MGOPT__K_OK;
}

static int mgopt__ks_mask(const int64_t *m, int64_t n, int32_t i) { return n > 0 && m[i] != 0; }

MGOPT__PRIVATE int mgopt__ks_slice_by_index(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *b, *e, *s = NULL, *bm = NULL, *em = NULL, *sm = NULL;
  int64_t nb, ne, ns, nbm, nem, nsm, shape[MGOPT_MAX_RANK], st[MGOPT_MAX_RANK],
      ist[MGOPT_MAX_RANK], oshape[MGOPT_MAX_RANK], base = 0;
  int32_t d, orank = 0;
  if (!x) return MGOPT__K_NO;
  nb = mgopt__k_ints(k, "begin", &b);
  ne = mgopt__k_ints(k, "end", &e);
  ns = mgopt__k_ints(k, "stride", &s);
  nbm = mgopt__k_ints(k, "begin_mask", &bm);
  nem = mgopt__k_ints(k, "end_mask", &em);
  nsm = mgopt__k_ints(k, "squeeze_mask", &sm);
  if (nb != x->rank || ne != x->rank) return MGOPT__K_NO;
  if (ns == -2 || nbm == -2 || nem == -2 || nsm == -2) return MGOPT__K_NO;
  if ((ns >= 0 && ns != x->rank) || (nbm >= 0 && nbm != x->rank) || (nem >= 0 && nem != x->rank) ||
      (nsm >= 0 && nsm != x->rank))
    return MGOPT__K_NO;
  mgopt__k_strides(x->rank, x->shape, ist);
  for (d = 0; d < x->rank; d++) {
    int64_t len = x->shape[d], step = ns > 0 ? s[d] : 1, first, count;
    if (mgopt__ks_mask(sm, nsm, d)) {
      /* a pure index at begin (begin_mask makes it 0) */
      int64_t i = mgopt__ks_mask(bm, nbm, d) ? 0 : b[d];
      if (i < 0) i += len;
      if (i < 0 || i >= len) return MGOPT__K_NO;
      shape[d] = 1;
      st[d] = 0;
      base += i * ist[d];
      continue;
    }
    if (!mgopt__ks_pyslice(len, b[d], !mgopt__ks_mask(bm, nbm, d), e[d], !mgopt__ks_mask(em, nem, d),
                           step, &first, &count))
      return MGOPT__K_NO;
    shape[d] = count;
    st[d] = count > 1 ? step * ist[d] : 0;
    if (count > 0) base += first * ist[d];
    oshape[orank++] = count;
  }
  return mgopt__ks_gather_strided(k, x, x->rank, shape, st, base, orank, oshape);
}

MGOPT__PRIVATE int mgopt__ks_slice_by_size(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *b, *sz;
  int64_t nb, ns, shape[MGOPT_MAX_RANK], ist[MGOPT_MAX_RANK], base = 0;
  int32_t d;
  if (!x) return MGOPT__K_NO;
  nb = mgopt__k_ints(k, "begin", &b);
  ns = mgopt__k_ints(k, "size", &sz);
  if (nb != x->rank || ns != x->rank) return MGOPT__K_NO;
  mgopt__k_strides(x->rank, x->shape, ist);
  for (d = 0; d < x->rank; d++) {
    int64_t len = x->shape[d], begin = b[d], size = sz[d];
    if (begin < 0) begin += len;
    if (begin < 0 || begin > len) return MGOPT__K_NO;
    if (size == -1) size = len - begin;
    /* size 0 is ambiguous in MIL (empty by type, "to the end" by value) */
    else if (size < 1 || size > len - begin) return MGOPT__K_NO;
    shape[d] = size;
    if (size > 0) base += begin * ist[d];
  }
  return mgopt__ks_gather_strided(k, x, x->rank, shape, ist, base, x->rank, shape);
}

/* ---------------------------------------------------------------- gather */

MGOPT__PRIVATE int mgopt__ks_gather(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  mgopt_tensor *x = mgopt__k_operand(k, "x"), *ind = mgopt__k_operand(k, "indices");
  int64_t shape[MGOPT_MAX_RANK], B = 1, O = 1, I = 1, inner = 1, D, bd, bb, o, i, *idx;
  int32_t axis, d, orank = 0;
  size_t es;
  const uint8_t *src;
  uint8_t *dst;
  void *od;
  int r;
  if (!x || !ind || x->rank < 1) return MGOPT__K_NO;
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  if (!es || mgopt__k_lane((mgopt_dtype)ind->dtype) != MGOPT__LANE_I64) return MGOPT__K_NO;
  if (!mgopt__k_axis(mgopt_op_get_int(op, "axis", 0), x->rank, &axis)) return MGOPT__K_NO;
  bd = mgopt_op_get_int(op, "batch_dims", 0);
  if (bd < 0) bd += ind->rank;
  if (bd < 0 || bd > ind->rank || bd > axis) return MGOPT__K_NO;
  if ((int64_t)x->rank - 1 + ind->rank - bd > MGOPT_MAX_RANK) return MGOPT__K_NO;
  for (d = 0; d < (int32_t)bd; d++) {
    if (x->shape[d] != ind->shape[d]) return MGOPT__K_NO;
    B *= x->shape[d];
  }
  for (d = 0; d < axis; d++) shape[orank++] = x->shape[d];
  for (d = (int32_t)bd; d < axis; d++) O *= x->shape[d];
  for (d = (int32_t)bd; d < ind->rank; d++) {
    shape[orank++] = ind->shape[d];
    I *= ind->shape[d];
  }
  for (d = axis + 1; d < x->rank; d++) {
    shape[orank++] = x->shape[d];
    inner *= x->shape[d];
  }
  D = x->shape[axis];
  idx = (int64_t *)mgopt__k_scratch(k, ind->numel, 8);
  if (!idx) return MGOPT__K_OOM;
  r = mgopt__k_load(k, ind, MGOPT__LANE_I64, idx);
  if (r != MGOPT__K_OK) return r;
  for (i = 0; i < ind->numel; i++) {
    if (idx[i] < -D || idx[i] >= D)
      return mgopt__k_no(k, "index %lld out of range for a dim of %lld", (long long)idx[i], (long long)D);
    if (idx[i] < 0) idx[i] += D;
  }
  r = mgopt__k_out(k, 0, (mgopt_dtype)x->dtype, orank, shape, &od);
  if (r != MGOPT__K_OK) return r;
  src = (const uint8_t *)mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  dst = (uint8_t *)od;
  if (inner == 0) return MGOPT__K_OK;
  for (bb = 0; bb < B; bb++)
    for (o = 0; o < O; o++)
      for (i = 0; i < I; i++) {
        size_t n = (size_t)inner * es;
        memcpy(dst, src + (size_t)(((bb * O + o) * D + idx[bb * I + i]) * inner) * es, n);
        dst += n;
      }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- tile, pad */

MGOPT__PRIVATE int mgopt__ks_tile(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *reps;
  int64_t n, shape[MGOPT_MAX_RANK], s2[2 * MGOPT_MAX_RANK], st2[2 * MGOPT_MAX_RANK],
      ist[MGOPT_MAX_RANK];
  int32_t d;
  if (!x) return MGOPT__K_NO;
  n = mgopt__k_ints(k, "reps", &reps);
  if (n != x->rank) return MGOPT__K_NO;
  mgopt__k_strides(x->rank, x->shape, ist);
  /* out viewed as [r0, d0, r1, d1, ...] reading x with stride 0 over each r */
  for (d = 0; d < x->rank; d++) {
    if (reps[d] < 0 || !mgopt__mul_i64(reps[d], x->shape[d], &shape[d])) return MGOPT__K_NO;
    s2[2 * d] = reps[d];
    s2[2 * d + 1] = x->shape[d];
    st2[2 * d] = 0;
    st2[2 * d + 1] = ist[d];
  }
  return mgopt__ks_gather_strided(k, x, 2 * x->rank, s2, st2, 0, x->rank, shape);
}

/* The element bytes of a scalar parameter value in dtype dt. */
static int mgopt__ks_scalar(mgopt_dtype dt, double fv, uint8_t *out) {
  int64_t lo, hi;
  int lane = mgopt__k_lane(dt);
  if (lane == MGOPT__LANE_F32 || lane == MGOPT__LANE_F64) {
    mgopt__k_store_f64_at(dt, out, 0, fv);
    return 1;
  }
  if (lane == MGOPT__LANE_BOOL) {
    out[0] = fv != 0.0;
    return 1;
  }
  if (lane != MGOPT__LANE_I64 || !mgopt__k_int_range(dt, &lo, &hi)) return 0;
  /* hi + 1 is exact in double for every range (2^63 for int64) */
  if (!(fv >= (double)lo && fv < (double)hi + 1.0) || fv != floor(fv)) return 0;
  mgopt__k_store_i64_at(dt, out, 0, (int64_t)fv);
  return 1;
}

MGOPT__PRIVATE int mgopt__ks_pad(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *pad;
  const char *mode;
  int64_t np, shape[MGOPT_MAX_RANK], ist[MGOPT_MAX_RANK], idx[MGOPT_MAX_RANK], total = 0,
      *maps, *map[MGOPT_MAX_RANK], n, done, j;
  int32_t d, first, rank, m;
  uint8_t cval[16];
  size_t es;
  const uint8_t *src;
  uint8_t *dst;
  void *od;
  int r;
  if (!x) return MGOPT__K_NO;
  rank = x->rank;
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  np = mgopt__k_ints(k, "pad", &pad);
  if (!es || np < 0 || np % 2 || np / 2 > rank) return MGOPT__K_NO;
  mode = mgopt_op_get_string(k->op, "mode", NULL);
  if (!mode || strcmp(mode, "constant") == 0) m = 0;
  else if (strcmp(mode, "reflect") == 0) m = 1;
  else if (strcmp(mode, "replicate") == 0) m = 2;
  else return MGOPT__K_NO;
  memset(cval, 0, sizeof cval);
  if (m == 0 && !mgopt__ks_scalar((mgopt_dtype)x->dtype, mgopt_op_get_float(k->op, "constant_val", 0.0), cval))
    return MGOPT__K_NO;
  first = rank - (int32_t)(np / 2); /* pads apply to the last np/2 dims */
  for (d = 0; d < rank; d++) {
    int64_t before = d >= first ? pad[2 * (d - first)] : 0, after = d >= first ? pad[2 * (d - first) + 1] : 0;
    int64_t len = x->shape[d];
    if (before < 0 || after < 0) return MGOPT__K_NO;
    if (m == 1 && (before > len - 1 || after > len - 1) && (before || after)) return MGOPT__K_NO;
    if (m == 2 && len == 0 && (before || after)) return MGOPT__K_NO;
    if (!mgopt__add_i64(len, before, &shape[d]) || !mgopt__add_i64(shape[d], after, &shape[d]) ||
        !mgopt__add_i64(total, shape[d], &total))
      return MGOPT__K_NO;
  }
  r = mgopt__k_out(k, 0, (mgopt_dtype)x->dtype, rank, shape, &od);
  if (r != MGOPT__K_OK) return r;
  n = k->out[0]->numel;
  src = (const uint8_t *)mgopt__k_data(k, x);
  maps = (int64_t *)mgopt__k_scratch(k, total, 8);
  if (!src || !maps) return MGOPT__K_OOM;
  /* per dim: output coordinate -> input coordinate, or -1 for the constant */
  for (d = 0; d < rank; d++) {
    int64_t before = d >= first ? pad[2 * (d - first)] : 0, len = x->shape[d], o;
    map[d] = maps;
    maps += shape[d];
    for (o = 0; o < shape[d]; o++) {
      int64_t i = o - before;
      if (m == 0) i = (i >= 0 && i < len) ? i : -1;
      else if (m == 1) i = i < 0 ? -i : (i >= len ? 2 * (len - 1) - i : i);
      else i = i < 0 ? 0 : (i >= len ? len - 1 : i);
      map[d][o] = i;
    }
  }
  mgopt__k_strides(rank, x->shape, ist);
  dst = (uint8_t *)od;
  if (n == 0) return MGOPT__K_OK;
  if (rank == 0) {
    memcpy(dst, src, es);
    return MGOPT__K_OK;
  }
  for (d = 0; d < rank; d++) idx[d] = 0;
  for (done = 0; done < n; done += shape[rank - 1]) {
    int64_t base = 0;
    int konst = 0;
    for (d = 0; d < rank - 1; d++) {
      if (map[d][idx[d]] < 0) konst = 1;
      else base += map[d][idx[d]] * ist[d];
    }
    for (j = 0; j < shape[rank - 1]; j++, dst += es) {
      int64_t i = map[rank - 1][j];
      if (konst || i < 0) memcpy(dst, cval, es);
      else memcpy(dst, src + (size_t)(base + i) * es, es);
    }
    for (d = rank - 2; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- one_hot */

/* The dtype a scalar parameter carries: a constant operand's, or the kind of
   the attribute or of its registry default (float -> fp32, int -> int32,
   bool), else dflt. */
static mgopt_dtype mgopt__ks_param_dtype(mgopt__kctx *k, const char *name, mgopt_dtype dflt) {
  const mgopt_op *op = k->op;
  const mgopt_attr *a = mgopt_op_attr(op, name);
  const mgopt_attr_def *ad;
  mgopt_tensor *t;
  if (!a && !mgopt_op_operand(op, name) && (ad = mgopt__attr_def(op->kind, name)) != NULL && ad->deflt) {
    switch (ad->kind) {
      case MGOPT_ATTR_FLOAT: return MGOPT_DT_FP32;
      case MGOPT_ATTR_INT: return MGOPT_DT_INT32;
      case MGOPT_ATTR_BOOL: return MGOPT_DT_BOOL;
      default: return MGOPT_DT_UNKNOWN;
    }
  }
  if (a) {
    switch (a->kind) {
      case MGOPT_ATTR_FLOAT: return MGOPT_DT_FP32;
      case MGOPT_ATTR_INT: return MGOPT_DT_INT32;
      case MGOPT_ATTR_BOOL: return MGOPT_DT_BOOL;
      case MGOPT_ATTR_TENSOR: return (mgopt_dtype)a->u.t->dtype;
      default: return MGOPT_DT_UNKNOWN;
    }
  }
  t = mgopt__k_operand(k, name);
  if (t) return (mgopt_dtype)t->dtype;
  return mgopt_op_operand(op, name) ? MGOPT_DT_UNKNOWN : dflt;
}

MGOPT__PRIVATE int mgopt__ks_one_hot(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  mgopt_tensor *ind = mgopt__k_operand(k, "indices");
  mgopt_dtype dt, offdt;
  int64_t depth, shape[MGOPT_MAX_RANK], outer = 1, inner = 1, o, dpos, i, *idx;
  int32_t axis, d, j;
  uint8_t on[16], off[16], *dst;
  size_t es;
  void *od;
  int r;
  if (!ind || ind->rank + 1 > MGOPT_MAX_RANK || mgopt__k_lane((mgopt_dtype)ind->dtype) != MGOPT__LANE_I64 ||
      !mgopt__k_has_param(op, "one_hot_vector_size"))
    return MGOPT__K_NO;
  depth = mgopt_op_get_int(op, "one_hot_vector_size", -1);
  if (depth < 0 || !mgopt__k_axis(mgopt_op_get_int(op, "axis", -1), ind->rank + 1, &axis)) return MGOPT__K_NO;
  dt = mgopt__ks_param_dtype(k, "on_value", MGOPT_DT_INT32);
  offdt = mgopt__ks_param_dtype(k, "off_value", dt);
  if (offdt != dt && mgopt_op_attr(op, "off_value") && mgopt_op_attr(op, "on_value")) return MGOPT__K_NO;
  es = mgopt__k_esize(dt);
  memset(on, 0, sizeof on);
  memset(off, 0, sizeof off);
  if (!es || !mgopt__ks_scalar(dt, mgopt_op_get_float(op, "on_value", 1.0), on) ||
      !mgopt__ks_scalar(dt, mgopt_op_get_float(op, "off_value", 0.0), off))
    return MGOPT__K_NO;
  for (d = 0, j = 0; d < ind->rank + 1; d++) shape[d] = d == axis ? depth : ind->shape[j++];
  for (d = 0; d < axis; d++) outer *= ind->shape[d];
  for (d = axis; d < ind->rank; d++) inner *= ind->shape[d];
  idx = (int64_t *)mgopt__k_scratch(k, ind->numel, 8);
  if (!idx) return MGOPT__K_OOM;
  r = mgopt__k_load(k, ind, MGOPT__LANE_I64, idx);
  if (r != MGOPT__K_OK) return r;
  for (i = 0; i < ind->numel; i++)
    if (idx[i] < 0 || idx[i] >= depth) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, dt, ind->rank + 1, shape, &od);
  if (r != MGOPT__K_OK) return r;
  dst = (uint8_t *)od;
  for (o = 0; o < outer; o++)
    for (dpos = 0; dpos < depth; dpos++)
      for (i = 0; i < inner; i++, dst += es) memcpy(dst, idx[o * inner + i] == dpos ? on : off, es);
  return MGOPT__K_OK;
}
