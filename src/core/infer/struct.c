/* src/core/infer/struct.c — type inference of structural and index ops: scatter_along_axis, scatter_nd, gather_nd,
   reverse_sequence, depth_to_space, space_to_depth, topk, range_1d, fill.

   Shapes that depend on operand values (range_1d's length, fill's dims) are
   static when those operands are constants, and unknown dims of a known rank
   otherwise. */
#include "infer.h"

static mgopt_status mgopt__tis_int_operand(const mgopt_op *op, const mgopt_type *t, const char *what, mgopt_diag *d) {
  if (t->dtype != MGOPT_DT_UNKNOWN && !mgopt_dtype_is_int((mgopt_dtype)t->dtype))
    return mgopt__ti_fail(d, op, "%s are %s, not integers", what, mgopt_dtype_name((mgopt_dtype)t->dtype));
  return MGOPT_OK;
}

/* Dims a and b must agree (static conflict: an error). */
static mgopt_status mgopt__tis_same(const mgopt_op *op, mgopt_dim a, mgopt_dim b, const char *what, int k,
                                    mgopt_diag *d) {
  mgopt_dim o;
  if (!mgopt__ti_unify(a, b, &o)) return mgopt__ti_fail(d, op, "%s differ in dim %d", what, k);
  return MGOPT_OK;
}

/* scatter_along_axis: data's type; indices and updates share a shape that
   matches data off the axis (MIL's rule). */
MGOPT__PRIVATE mgopt_status mgopt__infer_scatter_axis(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                      mgopt_diag *d) {
  mgopt_type x, ix, up;
  mgopt_status s;
  int32_t ax, k;
  if ((s = mgopt__ti_in(op, "data", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "indices", &ix, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "updates", &up, d)) != MGOPT_OK) return s;
  if ((s = mgopt__tis_int_operand(op, &ix, "indices", d)) != MGOPT_OK) return s;
  if (mgopt__ti_dt_clash(x.dtype, up.dtype)) return mgopt__ti_fail(d, op, "data and updates differ in dtype");
  if (!mgopt__ti_enum_ok(op, "mode", "update|add|sub|mul|div|max|min")) return mgopt__ti_fail(d, op, "unknown mode");
  if (x.rank >= 0 && !mgopt__ti_axis(mgopt_op_get_int(op, "axis", 0), x.rank, &ax))
    return mgopt__ti_fail(d, op, "axis out of range");
  if (x.rank >= 0 && ix.rank >= 0 && up.rank >= 0) {
    if (x.rank != ix.rank || ix.rank != up.rank) return mgopt__ti_fail(d, op, "data, indices and updates differ in rank");
    for (k = 0; k < x.rank; k++) {
      if ((s = mgopt__tis_same(op, ix.dims[k], up.dims[k], "indices and updates", k, d)) != MGOPT_OK) return s;
      if (k != ax && (s = mgopt__tis_same(op, x.dims[k], ix.dims[k], "data and indices", k, d)) != MGOPT_OK) return s;
    }
  }
  return mgopt__ti_like(p, op, out, &x, x.dtype, d);
}

/* scatter_nd: data's type; updates = indices.shape[:-1] + data.shape[K:]. */
MGOPT__PRIVATE mgopt_status mgopt__infer_scatter_nd(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                    mgopt_diag *d) {
  mgopt_type x, ix, up;
  mgopt_status s;
  int32_t k;
  if ((s = mgopt__ti_in(op, "data", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "indices", &ix, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "updates", &up, d)) != MGOPT_OK) return s;
  if ((s = mgopt__tis_int_operand(op, &ix, "indices", d)) != MGOPT_OK) return s;
  if (mgopt__ti_dt_clash(x.dtype, up.dtype)) return mgopt__ti_fail(d, op, "data and updates differ in dtype");
  if (!mgopt__ti_enum_ok(op, "mode", "update|add|sub|mul|div|max|min")) return mgopt__ti_fail(d, op, "unknown mode");
  if (ix.rank == 0) return mgopt__ti_fail(d, op, "indices need rank 1 or more");
  if (x.rank >= 0 && ix.rank > 0 && up.rank >= 0 && mgopt__ti_st(ix.dims[ix.rank - 1])) {
    int64_t K = ix.dims[ix.rank - 1].v;
    if (K > x.rank || up.rank != ix.rank - 1 + x.rank - K)
      return mgopt__ti_fail(d, op, "updates of rank %d do not fit data and indices", (int)up.rank);
    for (k = 0; k < ix.rank - 1; k++)
      if ((s = mgopt__tis_same(op, ix.dims[k], up.dims[k], "indices and updates", k, d)) != MGOPT_OK) return s;
    for (k = (int32_t)K; k < x.rank; k++)
      if ((s = mgopt__tis_same(op, x.dims[k], up.dims[ix.rank - 1 + k - K], "data and updates", k, d)) != MGOPT_OK)
        return s;
  }
  return mgopt__ti_like(p, op, out, &x, x.dtype, d);
}

/* gather_nd: indices.shape[:-1] + x.shape[batch_dims + K:], K = indices.shape[-1]. */
MGOPT__PRIVATE mgopt_status mgopt__infer_gather_nd(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                   mgopt_diag *d) {
  mgopt_type x, ix;
  mgopt_status s;
  int64_t bd = mgopt_op_get_int(op, "batch_dims", 0), K;
  int32_t k, at = 0;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "indices", &ix, d)) != MGOPT_OK) return s;
  if ((s = mgopt__tis_int_operand(op, &ix, "indices", d)) != MGOPT_OK) return s;
  if (ix.rank == 0) return mgopt__ti_fail(d, op, "indices need rank 1 or more");
  if (bd < 0 || (ix.rank > 0 && bd >= ix.rank)) return mgopt__ti_fail(d, op, "batch_dims %lld out of range", (long long)bd);
  if (x.rank < 0 || ix.rank < 0 || !mgopt__ti_st(ix.dims[ix.rank - 1])) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  K = ix.dims[ix.rank - 1].v;
  if (bd + K > x.rank) return mgopt__ti_fail(d, op, "index tuples of %lld do not fit rank %d", (long long)K, (int)x.rank);
  for (k = 0; k < (int32_t)bd; k++)
    if ((s = mgopt__tis_same(op, x.dims[k], ix.dims[k], "x and indices", k, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_out(p, op, out, x.dtype, ix.rank - 1 + x.rank - bd - K, d)) != MGOPT_OK) return s;
  for (k = 0; k < ix.rank - 1; k++) out->dims[at++] = ix.dims[k];
  for (k = (int32_t)(bd + K); k < x.rank; k++) out->dims[at++] = x.dims[k];
  return MGOPT_OK;
}

/* reverse_sequence: x's type; lengths is an integer vector over the batch axis. */
MGOPT__PRIVATE mgopt_status mgopt__infer_reverse_sequence(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                          mgopt_diag *d) {
  mgopt_type x, lt;
  mgopt_status s;
  int32_t sa, ba;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "lengths", &lt, d)) != MGOPT_OK) return s;
  if ((s = mgopt__tis_int_operand(op, &lt, "lengths", d)) != MGOPT_OK) return s;
  if (lt.rank >= 0 && lt.rank != 1) return mgopt__ti_fail(d, op, "lengths must be a vector");
  if (x.rank >= 0) {
    if (!mgopt__ti_axis(mgopt_op_get_int(op, "seq_axis", 0), x.rank, &sa) ||
        !mgopt__ti_axis(mgopt_op_get_int(op, "batch_axis", 0), x.rank, &ba) || sa == ba)
      return mgopt__ti_fail(d, op, "seq_axis and batch_axis must be two different axes");
    if (lt.rank == 1 && (s = mgopt__tis_same(op, x.dims[ba], lt.dims[0], "the batch axis and lengths", 0, d)) != MGOPT_OK)
      return s;
  }
  return mgopt__ti_like(p, op, out, &x, x.dtype, d);
}

/* depth_to_space [n, C, H, W] -> [n, C / b^2, H * b, W * b]; space_to_depth the inverse. */
MGOPT__PRIVATE mgopt_status mgopt__infer_depth_space(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                     mgopt_diag *d) {
  int to_space = op->kind == MGOPT_OP_depth_to_space;
  mgopt_type x;
  mgopt_status s;
  int64_t b = mgopt_op_get_int(op, "block_size", -1), bb;
  int32_t k;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (b < 1 || b > ((int64_t)1 << 30)) return mgopt__ti_fail(d, op, "bad block_size %lld", (long long)b);
  bb = b * b;
  if (x.rank >= 0 && x.rank != 4) return mgopt__ti_fail(d, op, "expects rank 4, got %d", (int)x.rank);
  if ((s = mgopt__ti_out(p, op, out, x.dtype, 4, d)) != MGOPT_OK) return s;
  if (x.rank < 0) return MGOPT_OK;
  out->dims[0] = x.dims[0];
  for (k = 1; k < 4; k++) {
    mgopt_dim in = x.dims[k];
    int64_t div = to_space ? (k == 1 ? bb : 1) : (k == 1 ? 1 : b), mul = to_space ? (k == 1 ? 1 : b) : (k == 1 ? bb : 1), v;
    if (!mgopt__ti_st(in)) {
      if (b == 1) out->dims[k] = in;
      continue;
    }
    if (in.v % div) return mgopt__ti_fail(d, op, "dim %d of %lld does not divide by %lld", (int)k, (long long)in.v, (long long)div);
    if (!mgopt__mul_i64(in.v / div, mul, &v)) return mgopt__ti_fail(d, op, "dim %d overflows", (int)k);
    out->dims[k] = mgopt_dim_static(v);
  }
  return MGOPT_OK;
}

/* topk: values (x's dtype) and indices (output_indices_dtype) with k along the axis. */
MGOPT__PRIVATE mgopt_status mgopt__infer_topk(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                              mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  int64_t kk = mgopt_op_get_int(op, "k", 1);
  int32_t ax, i;
  int idt;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (op->nouts != 2) return mgopt__ti_fail(d, op, "gives values and indices");
  if (!mgopt__ti_enum_ok(op, "output_indices_dtype", "int32|uint16|int64"))
    return mgopt__ti_fail(d, op, "output_indices_dtype must be int32, uint16 or int64");
  idt = mgopt__ti_dtype_param(op, "output_indices_dtype");
  if (idt == MGOPT_DT_UNKNOWN) idt = MGOPT_DT_INT32;
  if (kk < 0) return mgopt__ti_fail(d, op, "k is negative");
  if (x.rank == 0) return mgopt__ti_fail(d, op, "x needs rank 1 or more");
  if ((s = mgopt__ti_like(p, op, &out[0], &x, x.dtype, d)) != MGOPT_OK) return s;
  if (x.rank > 0) {
    if (!mgopt__ti_axis(mgopt_op_get_int(op, "axis", -1), x.rank, &ax)) return mgopt__ti_fail(d, op, "axis out of range");
    if (mgopt__ti_st(x.dims[ax]) && kk > x.dims[ax].v)
      return mgopt__ti_fail(d, op, "k %lld is above the axis length %lld", (long long)kk, (long long)x.dims[ax].v);
    out[0].dims[ax] = mgopt_dim_static(kk);
  }
  if ((s = mgopt__ti_out(p, op, &out[1], idt, out[0].rank, d)) != MGOPT_OK) return s;
  for (i = 0; i < out[0].rank; i++) out[1].dims[i] = out[0].dims[i];
  return MGOPT_OK;
}

/* The one element of constant scalar operand `slot` as double, 0 when not a constant. */
static int mgopt__tis_scalar(const mgopt_op *op, const char *slot, double *v, int64_t *iv) {
  mgopt_tensor *t = mgopt_value_const(mgopt_op_operand(op, slot));
  if (!t || t->numel != 1 || t->dtype == MGOPT_DT_STRING) return 0;
  *v = mgopt_tensor_get_f64(t, 0);
  *iv = mgopt_tensor_get_i64(t, 0);
  return 1;
}

/* range_1d: a vector of start's dtype; its length when end, start and step are constants. */
MGOPT__PRIVATE mgopt_status mgopt__infer_range_1d(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                  mgopt_diag *d) {
  mgopt_type e, s0, st;
  mgopt_status s;
  double a, b, c;
  int64_t ia, ib, ic, n = -1;
  if ((s = mgopt__ti_in(op, "end", &e, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "start", &s0, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "step", &st, d)) != MGOPT_OK) return s;
  if (mgopt__ti_dt_clash(e.dtype, s0.dtype) || mgopt__ti_dt_clash(st.dtype, s0.dtype))
    return mgopt__ti_fail(d, op, "end, start and step differ in dtype");
  if ((e.rank > 0 && !(e.rank == 1 && e.dims[0].v == 1)) || s0.rank > 1 || st.rank > 1)
    return mgopt__ti_fail(d, op, "end, start and step must be scalars");
  if ((s = mgopt__ti_out(p, op, out, s0.dtype, 1, d)) != MGOPT_OK) return s;
  if (mgopt__tis_scalar(op, "start", &a, &ia) && mgopt__tis_scalar(op, "end", &b, &ib) &&
      mgopt__tis_scalar(op, "step", &c, &ic)) {
    if (mgopt_dtype_is_float((mgopt_dtype)s0.dtype)) {
      double q = c != 0 ? ceil((b - a) / c) : 0;
      if (c != 0 && q == q && q < 9.2e18) n = q > 0 ? (int64_t)q : 0;
    } else if (ic != 0 && ((ib >= 0 && ia >= INT64_MIN + ib) || (ib < 0 && ia <= INT64_MAX + ib))) {
      int64_t span = ib - ia;
      n = ((span > 0) != (ic > 0) || span == 0) ? 0 : span / ic + (span % ic != 0);
    }
  }
  if (n >= 0) out->dims[0] = mgopt_dim_static(n);
  return MGOPT_OK;
}

/* fill: value's dtype (fp32 without one), the dims of a constant shape, else len(shape) unknown dims. */
MGOPT__PRIVATE mgopt_status mgopt__infer_fill(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                              mgopt_diag *d) {
  mgopt_type sh, v;
  mgopt_status s;
  const int64_t *dims = NULL;
  int64_t n, k;
  int dt = MGOPT_DT_FP32;
  if ((s = mgopt__ti_in(op, "shape", &sh, d)) != MGOPT_OK) return s;
  if ((s = mgopt__tis_int_operand(op, &sh, "shape", d)) != MGOPT_OK) return s;
  if (sh.rank >= 0 && sh.rank != 1) return mgopt__ti_fail(d, op, "shape must be a vector");
  if (mgopt__ti_opt(op, "value", &v)) {
    if (v.rank > 0 && !(v.rank == 1 && v.dims[0].v == 1)) return mgopt__ti_fail(d, op, "value must be a scalar");
    dt = v.dtype;
  }
  n = mgopt__ti_ints(p, op, "shape", &dims);
  if (n < 0) return mgopt__ti_out(p, op, out, dt, sh.rank == 1 && mgopt__ti_st(sh.dims[0]) ? sh.dims[0].v : -1, d);
  if ((s = mgopt__ti_out(p, op, out, dt, n, d)) != MGOPT_OK) return s;
  for (k = 0; k < n; k++) {
    if (dims[k] < 0) return mgopt__ti_fail(d, op, "negative dim %lld in shape", (long long)dims[k]);
    out->dims[k] = mgopt_dim_static(dims[k]);
  }
  return MGOPT_OK;
}
