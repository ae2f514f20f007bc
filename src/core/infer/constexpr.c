/* src/core/infer/constexpr.c — type inference of quantization and weight compression: quantize,
   dequantize, constexpr_*. */
#include "infer.h"

MGOPT__PRIVATE mgopt_status mgopt__infer_quantize(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                  mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  int dt = mgopt__ti_dtype_param(op, "output_dtype");
  if ((s = mgopt__ti_in(op, "input", &x, d)) != MGOPT_OK) return s;
  if (!mgopt_op_operand(op, "scale")) return mgopt__ti_fail(d, op, "missing operand 'scale'");
  if (!mgopt_dtype_is_int((mgopt_dtype)dt)) return mgopt__ti_fail(d, op, "missing or bad 'output_dtype'");
  return mgopt__ti_like(p, op, out, &x, dt, d);
}

/* Output shaped like operand `data`, typed like operand `scale`
   (dequantize, constexpr_affine_dequantize, constexpr_blockwise_shift_scale). */
MGOPT__PRIVATE mgopt_status mgopt__infer_dequant(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                 mgopt_diag *d) {
  mgopt_type x, sc;
  mgopt_status s;
  const char *data = op->kind == MGOPT_OP_dequantize ? "input"
                     : op->kind == MGOPT_OP_constexpr_affine_dequantize ? "quantized_data"
                                                                        : "data";
  int dt;
  if ((s = mgopt__ti_in(op, data, &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "scale", &sc, d)) != MGOPT_OK) return s;
  dt = sc.dtype;
  if (op->kind == MGOPT_OP_dequantize && !mgopt_dtype_is_float((mgopt_dtype)dt)) dt = MGOPT_DT_FP32;
  return mgopt__ti_like(p, op, out, &x, dt, d);
}

/* Output with the static shape of INTS parameter `shape`: 1 if given. */
static int mgopt__ti_shape_param(mgopt_program *p, const mgopt_op *op, mgopt_type *out, int dt,
                                 mgopt_status *s, mgopt_diag *d) {
  const int64_t *v = NULL;
  int64_t n = mgopt__ti_ints(p, op, "shape", &v), k;
  if (n == -1) return 0;
  if (n == -2) {
    *s = mgopt__ti_out(p, op, out, dt, -1, d);
    return 1;
  }
  if ((*s = mgopt__ti_out(p, op, out, dt, n, d)) != MGOPT_OK) return 1;
  for (k = 0; k < n; k++) {
    if (v[k] < 0) {
      *s = mgopt__ti_fail(d, op, "negative entry in 'shape'");
      return 1;
    }
    out->dims[k] = mgopt_dim_static(v[k]);
  }
  return 1;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_lut(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                             mgopt_diag *d) {
  mgopt_type ix, lut;
  mgopt_status s = MGOPT_OK;
  int32_t ax;
  mgopt_dim vs;
  if ((s = mgopt__ti_in(op, "indices", &ix, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "lut", &lut, d)) != MGOPT_OK) return s;
  if (mgopt__ti_shape_param(p, op, out, lut.dtype, &s, d)) return s;
  /* per-group palettes: lut [..., 2^nbits, vector_size]; vectors widen one axis of indices */
  if ((s = mgopt__ti_like(p, op, out, &ix, lut.dtype, d)) != MGOPT_OK || ix.rank < 0) return s;
  if (lut.rank >= 0 && lut.rank < 2) return mgopt__ti_fail(d, op, "lut has rank %d", (int)lut.rank);
  if (ix.rank == 0) return MGOPT_OK;
  if (!mgopt__ti_axis(mgopt_op_get_int(op, "vector_axis", -1), ix.rank, &ax))
    return mgopt__ti_fail(d, op, "vector_axis out of range");
  vs = lut.rank >= 0 ? lut.dims[lut.rank - 1] : mgopt_dim_unknown();
  if (mgopt__ti_st(vs) && vs.v == 1) return MGOPT_OK;
  if (mgopt__ti_st(vs) && mgopt__ti_st(ix.dims[ax])) {
    int64_t v;
    if (!mgopt__mul_i64(vs.v, ix.dims[ax].v, &v)) return mgopt__ti_fail(d, op, "dim overflows");
    out->dims[ax] = mgopt_dim_static(v);
  } else {
    out->dims[ax] = mgopt_dim_unknown();
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_sparse(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                mgopt_diag *d) {
  mgopt_type nz, mask;
  mgopt_status s = MGOPT_OK;
  if ((s = mgopt__ti_in(op, "nonzero_data", &nz, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "mask", &mask, d)) != MGOPT_OK) return s;
  if (mgopt__ti_shape_param(p, op, out, nz.dtype, &s, d)) return s;
  return mgopt__ti_like(p, op, out, &mask, nz.dtype, d);
}

/* The vector length of a lut type [..., 2^n, VS] (0: not known) and the
   vector axis of op for indices of rank `rank` (-1 when VS is 1). */
static mgopt_status mgopt__ti_lut_vector(const mgopt_op *op, const mgopt_type *lut, int32_t rank, int64_t *vs,
                                         int32_t *ax, mgopt_diag *d) {
  mgopt_dim v;
  *vs = 0;
  *ax = -1;
  if (lut->rank >= 0 && lut->rank < 2) return mgopt__ti_fail(d, op, "lut has rank %d", (int)lut->rank);
  v = lut->rank >= 0 ? lut->dims[lut->rank - 1] : mgopt_dim_unknown();
  if (mgopt__ti_st(v)) *vs = v.v;
  if (*vs == 1 || rank < 0) return MGOPT_OK;
  if (rank == 0 || !mgopt__ti_axis(mgopt_op_get_int(op, "vector_axis", -1), rank, ax))
    return mgopt__ti_fail(d, op, "vector_axis out of range");
  return MGOPT_OK;
}

/* constexpr_lut_to_sparse: (the mask widened by the vector length along
   vector_axis, uint1; the palettized non-zero values, lut dtype [D * VS]). */
MGOPT__PRIVATE mgopt_status mgopt__infer_lut_sparse(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                    mgopt_diag *d) {
  mgopt_type mask, nz, lut;
  mgopt_status s;
  int64_t vs, v;
  int32_t ax;
  if (op->nouts != 2) return mgopt__ti_fail(d, op, "gives a mask and non-zero data");
  if ((s = mgopt__ti_in(op, "indices_mask", &mask, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "indices_nonzero_data", &nz, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "lut", &lut, d)) != MGOPT_OK) return s;
  if (nz.rank >= 0 && nz.rank != 1) return mgopt__ti_fail(d, op, "indices_nonzero_data must have rank 1");
  if ((s = mgopt__ti_lut_vector(op, &lut, mask.rank, &vs, &ax, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_like(p, op, &out[0], &mask, MGOPT_DT_UINT1, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_out(p, op, &out[1], lut.dtype, 1, d)) != MGOPT_OK) return s;
  if (vs == 1) {
    out[1].dims[0] = nz.rank == 1 ? nz.dims[0] : mgopt_dim_unknown();
    return MGOPT_OK;
  }
  out[1].dims[0] = mgopt_dim_unknown();
  if (vs > 1 && nz.rank == 1 && mgopt__ti_st(nz.dims[0])) {
    if (!mgopt__mul_i64(vs, nz.dims[0].v, &v)) return mgopt__ti_fail(d, op, "dim overflows");
    out[1].dims[0] = mgopt_dim_static(v);
  }
  if (ax >= 0) {
    if (vs > 1 && mgopt__ti_st(out[0].dims[ax])) {
      if (!mgopt__mul_i64(vs, out[0].dims[ax].v, &v)) return mgopt__ti_fail(d, op, "dim overflows");
      out[0].dims[ax] = mgopt_dim_static(v);
    } else {
      out[0].dims[ax] = mgopt_dim_unknown();
    }
  }
  return MGOPT_OK;
}

/* constexpr_sparse_blockwise_shift_scale: (the mask, uint1; the dequantized
   non-zero values, scale dtype [D]). */
MGOPT__PRIVATE mgopt_status mgopt__infer_sparse_shift(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                      mgopt_diag *d) {
  mgopt_type mask, nz, sc;
  mgopt_status s;
  if (op->nouts != 2) return mgopt__ti_fail(d, op, "gives a mask and non-zero data");
  if ((s = mgopt__ti_in(op, "data_mask", &mask, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "nonzero_data", &nz, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "scale", &sc, d)) != MGOPT_OK) return s;
  if (nz.rank >= 0 && nz.rank != 1) return mgopt__ti_fail(d, op, "nonzero_data must have rank 1");
  if (sc.rank >= 0 && mask.rank >= 0 && sc.rank != mask.rank)
    return mgopt__ti_fail(d, op, "scale must have the mask's rank");
  if ((s = mgopt__ti_like(p, op, &out[0], &mask, MGOPT_DT_UINT1, d)) != MGOPT_OK) return s;
  return mgopt__ti_like(p, op, &out[1], &nz, sc.dtype, d);
}
