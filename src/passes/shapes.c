/* src/passes/shapes.c — shapes and broadcasting, axes, and the layout of constant data. */
#include "../passes_internal.h"
#include "../kernels/kernels.h" /* mgopt__k_strided: transposing constant data */

/* ---------------------------------------------------------------- shapes and broadcasting */

MGOPT__PRIVATE int mgopt__pu_static_shape(const mgopt_type *t, int64_t *shape, int32_t cap) {
  int32_t i;
  if (t->kind != MGOPT_TYPE_TENSOR || t->rank < 0 || t->rank > cap) return 0;
  for (i = 0; i < t->rank; i++) {
    if (!mgopt_dim_is_static(t->dims[i])) return 0;
    shape[i] = t->dims[i].v;
  }
  return 1;
}

MGOPT__PRIVATE int mgopt__pu_same_known_shape(const mgopt_value *a, const mgopt_value *b) {
  const mgopt_type *s = &a->type, *t = &b->type;
  int32_t i;
  if (s->kind != MGOPT_TYPE_TENSOR || t->kind != MGOPT_TYPE_TENSOR) return 0;
  if (s->dtype == MGOPT_DT_UNKNOWN || s->dtype != t->dtype) return 0;
  if (s->rank < 0 || s->rank != t->rank) return 0;
  for (i = 0; i < s->rank; i++) {
    mgopt_dim x = s->dims[i], y = t->dims[i];
    if (x.sym || y.sym) {
      if (x.sym != y.sym) return 0;
    } else if (x.v < 0 || x.v != y.v) {
      return 0;
    }
  }
  return 1;
}

MGOPT__PRIVATE int64_t mgopt__pu_norm_axis(int64_t axis, int64_t rank) {
  if (rank < 0) return -1;
  if (axis < 0) axis += rank;
  return (axis >= 0 && axis < rank) ? axis : -1;
}

MGOPT__PRIVATE int mgopt__pu_broadcast(const int64_t *a, int32_t ra, const int64_t *b, int32_t rb, int64_t *out,
                                       int32_t *rout) {
  int32_t r = ra > rb ? ra : rb, i;
  if (r > MGOPT_MAX_RANK) return 0;
  for (i = 0; i < r; i++) {
    int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
    int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
    if (da != db && da != 1 && db != 1) return 0;
    out[i] = da == 1 ? db : da;
  }
  *rout = r;
  return 1;
}

MGOPT__PRIVATE int64_t mgopt__pu_bcast_index(const int64_t *out, int32_t rout, const int64_t *in, int32_t rin,
                                             int64_t flat) {
  int64_t idx = 0, stride = 1;
  int32_t i;
  for (i = rout - 1; i >= 0; i--) {
    int64_t c = flat % out[i];
    int32_t k = i - (rout - rin);
    flat /= out[i];
    if (k < 0) continue;
    if (in[k] != 1) idx += c * stride;
    stride *= in[k];
  }
  return idx;
}

/* ---------------------------------------------------------------- constant data */

MGOPT__PRIVATE mgopt_tensor *mgopt__pu_const_i32_1d(mgopt_program *p, const int64_t *v, int32_t n) {
  int64_t shape[1];
  mgopt_tensor *t;
  int32_t i;
  shape[0] = n;
  t = mgopt_tensor_new(p, MGOPT_DT_INT32, 1, shape);
  if (!t) return NULL;
  for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, v[i]);
  return t;
}

MGOPT__PRIVATE mgopt_tensor *mgopt__pu_transpose_data(mgopt_program *p, mgopt_tensor *t, const int64_t *in_shape,
                                                      int32_t rank, const int64_t *perm) {
  int64_t shape[MGOPT_MAX_RANK], stride[MGOPT_MAX_RANK], st[MGOPT_MAX_RANK], acc = 1;
  int bits = mgopt_dtype_bits((mgopt_dtype)t->dtype);
  int32_t i;
  mgopt_tensor *nt;
  const void *src;
  if (rank < 0 || rank > MGOPT_MAX_RANK || t->dtype == MGOPT_DT_STRING || bits < 8 || bits % 8)
    return NULL;
  for (i = rank - 1; i >= 0; i--) {
    st[i] = acc;
    acc *= in_shape[i];
  }
  for (i = 0; i < rank; i++) {
    shape[i] = in_shape[perm[i]];
    stride[i] = st[perm[i]];
  }
  src = mgopt_tensor_data(p, t);
  nt = src ? mgopt__tensor_new_data(p, (mgopt_dtype)t->dtype, rank, shape, 0) : NULL; /* all written below */
  if (!nt) return NULL;
  mgopt__k_strided(nt->data, src, (size_t)(bits / 8), rank, shape, stride, 0);
  return nt;
}

/* 1 when tensor type t has an unknown dtype, rank or dim (a symbol counts as known). */
MGOPT__PRIVATE int mgopt__pu_type_unknown(const mgopt_type *t) {
  int32_t i;
  if (t->kind != MGOPT_TYPE_TENSOR) return 0;
  if (t->dtype == MGOPT_DT_UNKNOWN || t->rank < 0) return 1;
  for (i = 0; i < t->rank; i++)
    if (!t->dims[i].sym && t->dims[i].v < 0) return 1;
  return 0;
}

/* Fills the unknown parts of cur (dtype, rank, dims) from inf; 1 when it
   changed something. cur's dims must be its own copy (mgopt__type_copy). */
MGOPT__PRIVATE int mgopt__pu_type_refine(mgopt_program *p, mgopt_type *cur, const mgopt_type *inf) {
  int32_t i;
  int changed = 0;
  if (inf->kind != MGOPT_TYPE_TENSOR) return 0;
  if (cur->dtype == MGOPT_DT_UNKNOWN && inf->dtype != MGOPT_DT_UNKNOWN) {
    cur->dtype = inf->dtype;
    changed = 1;
  }
  if (cur->rank < 0) {
    if (inf->rank >= 0) {
      uint8_t dt = cur->dtype;
      if (mgopt__type_copy(p, cur, inf)) return 0;
      cur->dtype = dt;
      changed = 1;
    }
    return changed;
  }
  if (inf->rank != cur->rank) return changed;
  for (i = 0; i < cur->rank; i++)
    if (!cur->dims[i].sym && cur->dims[i].v < 0 && (inf->dims[i].sym || inf->dims[i].v >= 0)) {
      cur->dims[i] = inf->dims[i];
      changed = 1;
    }
  return changed;
}
