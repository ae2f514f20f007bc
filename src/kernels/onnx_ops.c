/* src/kernels/onnx_ops.c — the table of kernels for ONNX ops without a MIL op, the helpers they share, and the elementwise and shape kernels.

   Numeric contract (each kernel of this file; onnx_nn.c states its own).
   Real dtypes (fp16, bf16, fp32, fp64) are read into double, computed in
   double and rounded once to the output dtype (nearest even); NaN and Inf
   propagate as in IEEE 754. Integer dtypes compute in int64 (uint64 as its
   bits) and wrap around to the output dtype on store. Shape-moving kernels
   copy elements and never round. */
#include "onnx_ops.h"

/* ---------------------------------------------------------------- helpers */

MGOPT__PRIVATE int mgopt__ox_fail(mgopt__ox *c, mgopt_status s, const char *fmt, ...) {
  va_list ap;
  c->status = s;
  if (!c->d) return MGOPT__OX_ERR;
  c->d->status = s;
  va_start(ap, fmt);
  vsnprintf(c->d->msg, sizeof c->d->msg, fmt, ap);
  va_end(ap);
  return MGOPT__OX_ERR;
}

MGOPT__PRIVATE int mgopt__ox_no(mgopt__ox *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->why, sizeof c->why, fmt, ap);
  va_end(ap);
  return MGOPT__OX_NO;
}

MGOPT__PRIVATE mgopt_tensor *mgopt__ox_in(mgopt__ox *c, int32_t i) { return i >= 0 && i < c->nin ? c->in[i] : NULL; }

MGOPT__PRIVATE mgopt_tensor *mgopt__ox_need(mgopt__ox *c, int32_t i) {
  mgopt_tensor *t = mgopt__ox_in(c, i);
  if (!t) mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "input %d is missing", (int)i);
  return t;
}

MGOPT__PRIVATE int mgopt__ox_wants(const mgopt__ox *c, int32_t i) {
  return i >= 0 && i < c->nout && !(c->op->outs[i]->flags & MGOPT_VALUE_ABSENT);
}

MGOPT__PRIVATE int mgopt__ox_out(mgopt__ox *c, int32_t i, mgopt_dtype dt, int32_t rank, const int64_t *shape) {
  int64_t n = mgopt__k_numel(rank, shape);
  if (i < 0 || i >= c->nout) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "output %d of %d", (int)i, (int)c->nout);
  if (n < 0) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "output %d has an invalid shape", (int)i);
  if (c->max_elements > 0 && n > c->max_elements)
    return mgopt__ox_fail(c, MGOPT_ERR_LIMIT, "output %d has %lld elements, above the limit %lld", (int)i,
                          (long long)n, (long long)c->max_elements);
  if (c->out[i]) mgopt_eval_tensor_free(c->p, c->out[i]);
  c->out[i] = mgopt_eval_tensor_new(c->p, dt, rank, shape);
  return c->out[i] ? MGOPT__OX_OK : mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
}

MGOPT__PRIVATE int mgopt__ox_axis(mgopt__ox *c, int64_t a, int32_t rank, int32_t *out) {
  if (a < -(int64_t)rank || a >= rank)
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "axis %lld is outside [%d, %d)", (long long)a, -(int)rank, (int)rank);
  *out = (int32_t)(a < 0 ? a + rank : a);
  return MGOPT__OX_OK;
}

MGOPT__PRIVATE int64_t mgopt__ox_int(const mgopt__ox *c, const char *name, int64_t dflt) {
  const mgopt_attr *a = mgopt_op_attr(c->op, name);
  return a && (a->kind == MGOPT_ATTR_INT || a->kind == MGOPT_ATTR_BOOL) ? a->u.i : dflt;
}

MGOPT__PRIVATE int mgopt__ox_str_is(const mgopt__ox *c, const char *name, const char *want, int dflt) {
  const mgopt_attr *a = mgopt_op_attr(c->op, name);
  if (!a) return dflt;
  return a->kind == MGOPT_ATTR_STRING && a->u.s.len == strlen(want) && memcmp(a->u.s.ptr, want, a->u.s.len) == 0;
}

MGOPT__PRIVATE int mgopt__ox_is_real(mgopt_dtype dt) {
  return dt == MGOPT_DT_FP16 || dt == MGOPT_DT_BF16 || dt == MGOPT_DT_FP32 || dt == MGOPT_DT_FP64;
}

MGOPT__PRIVATE double mgopt__ox_getf(const mgopt_tensor *t, int64_t i) { return mgopt_tensor_get_f64(t, i); }

MGOPT__PRIVATE int64_t mgopt__ox_geti(const mgopt_tensor *t, int64_t i) {
  if (t->dtype == MGOPT_DT_BOOL) return ((const uint8_t *)t->data)[i] != 0;
  return mgopt_tensor_get_i64(t, i);
}

MGOPT__PRIVATE void mgopt__ox_setf(mgopt_tensor *t, int64_t i, double v) {
  mgopt__k_store_f64_at((mgopt_dtype)t->dtype, t->data, i, v);
}

/* ---------------------------------------------------------------- the table */

static const mgopt__ox_row mgopt__ox_table[] = {
    {"Softmax", 1, 0, mgopt__ox_softmax},
    {"LogSoftmax", 1, 0, mgopt__ox_softmax},
    {"Hardmax", 1, 0, mgopt__ox_softmax},
    {"NegativeLogLikelihoodLoss", 12, 0, mgopt__ox_nll_loss},
    {"SoftmaxCrossEntropyLoss", 12, 0, mgopt__ox_sce_loss},
};

MGOPT__PRIVATE const mgopt__ox_row *mgopt__ox_rows(int32_t *n) {
  *n = (int32_t)MGOPT__ARRAY_COUNT(mgopt__ox_table);
  return mgopt__ox_table;
}
