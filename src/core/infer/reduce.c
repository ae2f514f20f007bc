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
