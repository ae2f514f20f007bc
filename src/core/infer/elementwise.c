/* src/core/infer/elementwise.c — type inference of elementwise ops: const, identity, unary, binary
   with broadcasting, select, cast, bias_add. */
#include "infer.h"

MGOPT__PRIVATE mgopt_status mgopt__infer_const(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                               mgopt_diag *d) {
  const mgopt_attr *a = mgopt_op_attr(op, "val");
  const mgopt_tensor *t;
  int32_t i;
  mgopt_status s;
  if (!a || a->kind != MGOPT_ATTR_TENSOR || !a->u.t) return mgopt__ti_fail(d, op, "missing tensor attribute 'val'");
  t = a->u.t;
  if (t->rank < 0 || (t->rank > 0 && !t->shape)) return mgopt__ti_fail(d, op, "malformed tensor in 'val'");
  if ((s = mgopt__ti_out(p, op, out, t->dtype, t->rank, d)) != MGOPT_OK) return s;
  for (i = 0; i < t->rank; i++) {
    if (t->shape[i] < 0) return mgopt__ti_fail(d, op, "tensor 'val' has a negative dim");
    out->dims[i] = mgopt_dim_static(t->shape[i]);
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_identity(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                  mgopt_diag *d) {
  mgopt_value *v = mgopt_op_operand(op, "x");
  mgopt_type t;
  if (!v) return mgopt__ti_fail(d, op, "missing operand 'x'");
  if (v->type.kind != MGOPT_TYPE_TENSOR) {
    if (mgopt__type_copy(p, out, &v->type)) return mgopt__ti_nomem(d);
    return MGOPT_OK;
  }
  t = mgopt__ti_view(&v->type);
  return mgopt__ti_like(p, op, out, &t, t.dtype, d);
}

/* Elementwise unary (and every op whose output is x's type). */
MGOPT__PRIVATE mgopt_status mgopt__infer_unary(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                               mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  uint32_t tr = mgopt_op_traits(op);
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (op->kind == MGOPT_OP_gelu && !mgopt__ti_enum_ok(op, "mode", "EXACT|TANH_APPROXIMATION|SIGMOID_APPROXIMATION"))
    return mgopt__ti_fail(d, op, "unknown mode");
  if ((tr & MGOPT_TRAIT_LOGICAL) && x.dtype != MGOPT_DT_UNKNOWN && x.dtype != MGOPT_DT_BOOL)
    return mgopt__ti_fail(d, op, "expects bool, got %s", mgopt_dtype_name((mgopt_dtype)x.dtype));
  return mgopt__ti_like(p, op, out, &x, x.dtype, d);
}

/* bias_add: x of any rank plus a 1-d bias along `axis` (negative counts from
   the end); the bias holds x's dim at axis when both are known. */
MGOPT__PRIVATE mgopt_status mgopt__infer_bias_add(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                  mgopt_diag *d) {
  mgopt_type x, b;
  mgopt_status s;
  int64_t axis = mgopt_op_get_int(op, "axis", 1);
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "bias", &b, d)) != MGOPT_OK) return s;
  if (mgopt__ti_dt_clash(x.dtype, b.dtype))
    return mgopt__ti_fail(d, op, "operand dtypes differ (%s vs %s)", mgopt_dtype_name((mgopt_dtype)x.dtype),
                          mgopt_dtype_name((mgopt_dtype)b.dtype));
  if (b.rank >= 0 && b.rank != 1) return mgopt__ti_fail(d, op, "bias of rank %d, expected 1", (int)b.rank);
  if (x.rank >= 0) {
    if (axis < -(int64_t)x.rank || axis >= (int64_t)x.rank)
      return mgopt__ti_fail(d, op, "axis %lld out of range for rank %d", (long long)axis, (int)x.rank);
    if (axis < 0) axis += x.rank;
    if (b.rank == 1 && mgopt_dim_is_static(b.dims[0]) && mgopt_dim_is_static(x.dims[axis]) &&
        b.dims[0].v != x.dims[axis].v)
      return mgopt__ti_fail(d, op, "bias of %lld values for a dim of %lld", (long long)b.dims[0].v,
                            (long long)x.dims[axis].v);
  }
  return mgopt__ti_like(p, op, out, &x, x.dtype != MGOPT_DT_UNKNOWN ? x.dtype : b.dtype, d);
}

MGOPT__PRIVATE mgopt_status mgopt__infer_binary(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                mgopt_diag *d) {
  mgopt_type t[2];
  mgopt_status s;
  uint32_t tr = mgopt_op_traits(op);
  int dt;
  if ((s = mgopt__ti_in(op, "x", &t[0], d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "y", &t[1], d)) != MGOPT_OK) return s;
  /* pow keeps x's dtype (an integer exponent is common in imported models) */
  if (op->kind != MGOPT_OP_pow && mgopt__ti_dt_clash(t[0].dtype, t[1].dtype))
    return mgopt__ti_fail(d, op, "operand dtypes differ (%s vs %s)", mgopt_dtype_name((mgopt_dtype)t[0].dtype),
                          mgopt_dtype_name((mgopt_dtype)t[1].dtype));
  if ((tr & MGOPT_TRAIT_LOGICAL) &&
      ((t[0].dtype != MGOPT_DT_UNKNOWN && t[0].dtype != MGOPT_DT_BOOL) ||
       (t[1].dtype != MGOPT_DT_UNKNOWN && t[1].dtype != MGOPT_DT_BOOL)))
    return mgopt__ti_fail(d, op, "expects bool operands");
  dt = t[0].dtype != MGOPT_DT_UNKNOWN || op->kind == MGOPT_OP_pow ? t[0].dtype : t[1].dtype;
  if (tr & (MGOPT_TRAIT_COMPARISON | MGOPT_TRAIT_LOGICAL)) dt = MGOPT_DT_BOOL;
  return mgopt__ti_broadcast(p, op, out, t, 2, dt, d);
}

MGOPT__PRIVATE mgopt_status mgopt__infer_select(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                mgopt_diag *d) {
  mgopt_type t[3];
  mgopt_status s;
  if ((s = mgopt__ti_in(op, "cond", &t[0], d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "a", &t[1], d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "b", &t[2], d)) != MGOPT_OK) return s;
  if (mgopt__ti_dt_clash(t[1].dtype, t[2].dtype)) return mgopt__ti_fail(d, op, "'a' and 'b' dtypes differ");
  return mgopt__ti_broadcast(p, op, out, t, 3, t[1].dtype != MGOPT_DT_UNKNOWN ? t[1].dtype : t[2].dtype, d);
}

MGOPT__PRIVATE mgopt_status mgopt__infer_cast(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                              mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const char *name = op->kind == MGOPT_OP_cast ? "dtype" : "output_dtype";
  const char *slot = op->kind == MGOPT_OP_cast ? "x" : "source_val";
  int dt = mgopt__ti_dtype_param(op, name);
  if ((s = mgopt__ti_in(op, slot, &x, d)) != MGOPT_OK) return s;
  if (dt == MGOPT_DT_UNKNOWN) return mgopt__ti_fail(d, op, "missing or unknown '%s'", name);
  return mgopt__ti_like(p, op, out, &x, dt, d);
}
