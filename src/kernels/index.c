/* src/kernels/index.c — kernels of ops that compute indices or scan along an axis: reduce_argmax, reduce_argmin, cumsum,
   gather_along_axis.

   Numeric contract of reduce_argmax / reduce_argmin: x is read exactly in its
   compute lane (fp16, bf16 and fp32 widen exactly to float, fp64 stays double,
   integers of up to 64 bits are int64; uint64 above INT64_MAX is not folded),
   so every comparison is exact. Ties give the lowest index (numpy, ONNX with
   select_last_index 0). A NaN counts as larger than and smaller than every
   number: the first NaN along the axis wins (numpy's rule). An empty axis has
   no answer and is not folded; an index that output_dtype cannot hold (uint16
   over 65535, int32 over INT32_MAX) is not folded either.

   Numeric contract of cumsum: the running sum is added in order along the axis
   (from the end when reverse), one addition per element as a sequential
   runtime does: fp32 sums in float, fp64 in double, fp16 and bf16 sum in float
   and each output is rounded once to the dtype (a runtime summing in fp16
   rounds every partial sum: up to one fp16 ulp per step apart). Integers sum in
   int64 with two's complement wrap-around and are stored truncated to the
   dtype, as ONNX Runtime's fixed-width sums. exclusive shifts by one: the
   first output of each run is 0. NaN and Inf propagate as in IEEE addition. */
#include "kernels.h"

/* ---------------------------------------------------------------- reduce_argmax, reduce_argmin */

/* The index of the extreme of row (len elements, stride `inner`) of a lane
   buffer; `want_max` picks the comparison. NaN-first as the contract says. */
#define MGOPT__KX_ARG_ROW(T, ISNAN)                                                        \
  static int64_t mgopt__kx_arg_row_##T(const T *v, int64_t len, int64_t inner, int want_max) { \
    int64_t i, best = 0;                                                                   \
    T bv = v[0];                                                                           \
    if (ISNAN(bv)) return 0;                                                               \
    for (i = 1; i < len; i++) {                                                            \
      T c = v[i * inner];                                                                  \
      if (ISNAN(c)) return i;                                                              \
      if (want_max ? c > bv : c < bv) {                                                    \
        bv = c;                                                                            \
        best = i;                                                                          \
      }                                                                                    \
    }                                                                                      \
    return best;                                                                           \
  }
#define MGOPT__KX_ISNAN_F(v) ((v) != (v))
#define MGOPT__KX_ISNAN_I(v) ((void)(v), 0)
typedef float mgopt__kx_f32;
typedef double mgopt__kx_f64;
typedef int64_t mgopt__kx_i64;
MGOPT__KX_ARG_ROW(mgopt__kx_f32, MGOPT__KX_ISNAN_F)
MGOPT__KX_ARG_ROW(mgopt__kx_f64, MGOPT__KX_ISNAN_F)
MGOPT__KX_ARG_ROW(mgopt__kx_i64, MGOPT__KX_ISNAN_I)

MGOPT__PRIVATE int mgopt__kx_reduce_arg(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  int64_t shape[MGOPT_MAX_RANK], outer = 1, inner = 1, len, o, i, lo, hi;
  int32_t axis, d, orank = 0;
  int keep = mgopt_op_get_bool(k->op, "keep_dims", 0), want_max = k->op->kind == MGOPT_OP_reduce_argmax, lane, r;
  size_t n = 0;
  const char *ods = mgopt_op_get_string(k->op, "output_dtype", &n);
  mgopt_dtype odt = ods ? mgopt_dtype_from_name(ods, n) : MGOPT_DT_INT32;
  void *buf, *od;
  if (!x || x->rank < 1) return MGOPT__K_NO;
  if (odt != MGOPT_DT_INT32 && odt != MGOPT_DT_UINT16 && odt != MGOPT_DT_INT64) return MGOPT__K_NO;
  lane = mgopt__k_lane((mgopt_dtype)x->dtype);
  if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64 && lane != MGOPT__LANE_I64) return MGOPT__K_NO;
  if (!mgopt__k_axis(mgopt_op_get_int(k->op, "axis", -1), x->rank, &axis)) return MGOPT__K_NO;
  len = x->shape[axis];
  if (len < 1 || !mgopt__k_int_range(odt, &lo, &hi) || len - 1 > hi) return MGOPT__K_NO;
  for (d = 0; d < x->rank; d++) {
    if (d < axis) outer *= x->shape[d];
    if (d > axis) inner *= x->shape[d];
    if (d != axis) shape[orank++] = x->shape[d];
    else if (keep) shape[orank++] = 1;
  }
  r = mgopt__k_out_full(k, 0, odt, orank, shape, &od);
  if (r != MGOPT__K_OK || x->numel == 0) return r;
  buf = mgopt__k_scratch(k, x->numel, mgopt__k_lane_size(lane));
  if (!buf) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, lane, buf);
  if (r != MGOPT__K_OK) return r;
  for (o = 0; o < outer; o++)
    for (i = 0; i < inner; i++) {
      int64_t at = o * len * inner + i, best;
      if (lane == MGOPT__LANE_F32) best = mgopt__kx_arg_row_mgopt__kx_f32((const float *)buf + at, len, inner, want_max);
      else if (lane == MGOPT__LANE_F64) best = mgopt__kx_arg_row_mgopt__kx_f64((const double *)buf + at, len, inner, want_max);
      else best = mgopt__kx_arg_row_mgopt__kx_i64((const int64_t *)buf + at, len, inner, want_max);
      mgopt__k_store_i64_at(odt, od, o * inner + i, best);
    }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- cumsum */

#define MGOPT__KX_CUMSUM(T, ADD)                                                                       \
  static void mgopt__kx_cumsum_##T(T *v, int64_t outer, int64_t len, int64_t inner, int excl, int rev) { \
    int64_t o, i, j;                                                                                   \
    for (o = 0; o < outer; o++)                                                                        \
      for (i = 0; i < inner; i++) {                                                                    \
        T *row = v + o * len * inner + i, acc = (T)0;                                                  \
        for (j = 0; j < len; j++) {                                                                    \
          T *e = row + (rev ? len - 1 - j : j) * inner, c = *e;                                        \
          if (!excl) acc = ADD(acc, c);                                                                \
          *e = acc;                                                                                    \
          if (excl) acc = ADD(acc, c);                                                                 \
        }                                                                                              \
      }                                                                                                \
  }
#define MGOPT__KX_ADD_F(a, b) ((a) + (b))
#define MGOPT__KX_ADD_I(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
MGOPT__KX_CUMSUM(mgopt__kx_f32, MGOPT__KX_ADD_F)
MGOPT__KX_CUMSUM(mgopt__kx_f64, MGOPT__KX_ADD_F)
MGOPT__KX_CUMSUM(mgopt__kx_i64, MGOPT__KX_ADD_I)

MGOPT__PRIVATE int mgopt__kx_cumsum(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  int64_t outer = 1, inner = 1, len;
  int32_t axis, d;
  int excl = mgopt_op_get_bool(k->op, "exclusive", 0), rev = mgopt_op_get_bool(k->op, "reverse", 0), lane, r;
  mgopt_dtype dt;
  void *buf, *od;
  if (!x || x->rank < 1) return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  lane = mgopt__k_lane(dt);
  if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64 && lane != MGOPT__LANE_I64) return MGOPT__K_NO;
  if (!mgopt__k_axis(mgopt_op_get_int(k->op, "axis", 0), x->rank, &axis)) return MGOPT__K_NO;
  len = x->shape[axis];
  for (d = 0; d < axis; d++) outer *= x->shape[d];
  for (d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
  r = mgopt__k_out_full(k, 0, dt, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK || x->numel == 0) return r;
  buf = mgopt__k_scratch(k, x->numel, mgopt__k_lane_size(lane));
  if (!buf) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, lane, buf);
  if (r != MGOPT__K_OK) return r;
  if (lane == MGOPT__LANE_F32) mgopt__kx_cumsum_mgopt__kx_f32((float *)buf, outer, len, inner, excl, rev);
  else if (lane == MGOPT__LANE_F64) mgopt__kx_cumsum_mgopt__kx_f64((double *)buf, outer, len, inner, excl, rev);
  else mgopt__kx_cumsum_mgopt__kx_i64((int64_t *)buf, outer, len, inner, excl, rev);
  mgopt__k_store(lane, buf, x->numel, dt, od);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- gather_along_axis

   out[i0..ik..] = x[i0..indices[i0..ik..]..] along the axis; a negative index
   counts from the end; an index out of [-len, len) is not folded. Elements
   are copied bit for bit. */
MGOPT__PRIVATE int mgopt__kx_gather_along_axis(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x"), *ind = mgopt__k_operand(k, "indices");
  int64_t outer = 1, inner = 1, len, ilen, o, i, j, *idx;
  int32_t axis, d;
  size_t es;
  const uint8_t *src;
  uint8_t *dst;
  void *od;
  int r;
  if (!x || !ind || x->rank < 1 || x->rank != ind->rank) return MGOPT__K_NO;
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  if (!es || mgopt__k_lane((mgopt_dtype)ind->dtype) != MGOPT__LANE_I64) return MGOPT__K_NO;
  if (!mgopt__k_axis(mgopt_op_get_int(k->op, "axis", 0), x->rank, &axis)) return MGOPT__K_NO;
  for (d = 0; d < x->rank; d++) {
    if (d != axis && x->shape[d] != ind->shape[d]) return MGOPT__K_NO;
    if (d < axis) outer *= x->shape[d];
    if (d > axis) inner *= x->shape[d];
  }
  len = x->shape[axis];
  ilen = ind->shape[axis];
  idx = (int64_t *)mgopt__k_scratch(k, ind->numel, 8);
  if (!idx && ind->numel) return MGOPT__K_OOM;
  if (ind->numel) {
    r = mgopt__k_load(k, ind, MGOPT__LANE_I64, idx);
    if (r != MGOPT__K_OK) return r;
  }
  for (i = 0; i < ind->numel; i++) {
    if (idx[i] < -len || idx[i] >= len) return MGOPT__K_NO;
    if (idx[i] < 0) idx[i] += len;
  }
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, ind->rank, ind->shape, &od);
  if (r != MGOPT__K_OK || ind->numel == 0) return r;
  src = (const uint8_t *)mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  dst = (uint8_t *)od;
  for (o = 0; o < outer; o++)
    for (j = 0; j < ilen; j++)
      for (i = 0; i < inner; i++) {
        int64_t at = (o * ilen + j) * inner + i;
        memcpy(dst + (size_t)at * es, src + (size_t)((o * len + idx[at]) * inner + i) * es, es);
      }
  return MGOPT__K_OK;
}
