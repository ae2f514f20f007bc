/* src/kernels/reduce.c — folding kernels that combine elements: reduce_*, softmax, matmul, linear.

   Summation order. Sums and products accumulate in the lane type (float for
   fp16 / bf16 / fp32, as numpy does for fp16) strictly in increasing index
   order, and matmul / linear accumulate over k in increasing order starting
   from 0. numpy's pairwise summation (innermost-axis float sums longer than
   8 elements) and BLAS kernels group additions differently, so long float
   sums may differ from numpy in the last places; everything else is exact
   per the dtype. Empty max / min / mean reductions are not folded.

   reduce_l1_norm, reduce_l2_norm, reduce_log_sum, reduce_log_sum_exp and
   reduce_sum_square widen every float dtype to double, accumulate in
   increasing index order in double and round once to the dtype (sqrt / log
   applied in double). log_sum_exp subtracts the slice's finite max first, so
   it neither overflows nor loses large equal inputs; a NaN input gives NaN,
   +inf gives +inf. An empty slice folds to 0 (l1, l2, sum_square) or -inf
   (log_sum, log_sum_exp). Integer l1 / sum_square wrap around in int64 and
   then in the dtype; integer l2 / log_sum / log_sum_exp are not folded.
   Integer matmul (ONNX MatMul of int32 or int64) multiplies and sums modulo
   2^64 and stores modulo the dtype's width: exact whenever the true result
   fits, the two's complement wrap-around of an int accumulator otherwise;
   linear is float only. */
#include "kernels.h"

/* Which dims are reduced; returns the output shape. 0 on bad axes. */
static int mgopt__kr_axes(mgopt__kctx *k, const mgopt_tensor *x, uint8_t *red, int32_t *orank,
                          int64_t *oshape, int keep) {
  const int64_t *ax;
  int64_t n = mgopt__k_ints(k, "axes", &ax);
  int32_t i, a;
  memset(red, 0, MGOPT_MAX_RANK);
  if (n == -2) return 0;
  if (n < 0) {
    for (i = 0; i < x->rank; i++) red[i] = 1;
  } else {
    for (i = 0; i < (int32_t)n; i++) {
      if (!mgopt__k_axis(ax[i], x->rank, &a) || red[a]) return 0;
      red[a] = 1;
    }
  }
  *orank = 0;
  for (i = 0; i < x->rank; i++) {
    if (!red[i]) oshape[(*orank)++] = x->shape[i];
    else if (keep) oshape[(*orank)++] = 1;
  }
  return 1;
}

/* Accumulates the input (lane T) into out (one slot per output element) in
   input order: the output offset of an input element follows the input index
   with stride 0 along reduced dims. */
#define MGOPT__KR_ACC(T, INIT, STEP)                                                  \
  do {                                                                                \
    const T *MGOPT_RESTRICT in_ = (const T *)in;                                      \
    T *MGOPT_RESTRICT acc_ = (T *)acc;                                                \
    int64_t i_, o_ = 0, j_;                                                           \
    int32_t d_;                                                                       \
    for (i_ = 0; i_ < on; i_++) acc_[i_] = (INIT);                                    \
    for (d_ = 0; d_ < rank; d_++) idx[d_] = 0;                                        \
    for (i_ = 0; i_ < xn;) {                                                          \
      int64_t len_ = rank ? shape[rank - 1] : 1, s_ = rank ? ost[rank - 1] : 0;       \
      for (j_ = 0; j_ < len_; j_++) {                                                 \
        T a_ = acc_[o_ + j_ * s_], v_ = in_[i_ + j_];                                 \
        acc_[o_ + j_ * s_] = (STEP);                                                  \
      }                                                                               \
      i_ += len_;                                                                     \
      for (d_ = rank - 2; d_ >= 0; d_--) {                                            \
        o_ += ost[d_];                                                                \
        if (++idx[d_] < shape[d_]) break;                                             \
        o_ -= ost[d_] * shape[d_];                                                    \
        idx[d_] = 0;                                                                  \
      }                                                                               \
    }                                                                                 \
  } while (0)

MGOPT__PRIVATE int mgopt__kr_reduce(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  int32_t kind = op->kind, orank, rank, d;
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  uint8_t red[MGOPT_MAX_RANK];
  int64_t oshape[MGOPT_MAX_RANK], shape[MGOPT_MAX_RANK], ost[MGOPT_MAX_RANK],
      idx[MGOPT_MAX_RANK], full[MGOPT_MAX_RANK], on, xn, count = 1;
  mgopt_dtype dt;
  int lane, r, keep, wide;
  void *in, *acc, *od;
  if (!x) return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  lane = mgopt__k_lane(dt);
  if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64 && lane != MGOPT__LANE_I64) return MGOPT__K_NO;
  if (lane == MGOPT__LANE_I64 && kind != MGOPT_OP_reduce_sum && kind != MGOPT_OP_reduce_prod &&
      kind != MGOPT_OP_reduce_max && kind != MGOPT_OP_reduce_min && kind != MGOPT_OP_reduce_l1_norm &&
      kind != MGOPT_OP_reduce_sum_square)
    return MGOPT__K_NO;
  wide = kind == MGOPT_OP_reduce_l1_norm || kind == MGOPT_OP_reduce_l2_norm || kind == MGOPT_OP_reduce_log_sum ||
         kind == MGOPT_OP_reduce_log_sum_exp || kind == MGOPT_OP_reduce_sum_square;
  if (wide && lane == MGOPT__LANE_F32) lane = MGOPT__LANE_F64;
  keep = mgopt_op_get_bool(op, "keep_dims", 0);
  if (!mgopt__kr_axes(k, x, red, &orank, oshape, keep)) return MGOPT__K_NO;
  rank = x->rank;
  for (d = 0; d < rank; d++) {
    shape[d] = x->shape[d];
    full[d] = red[d] ? 1 : x->shape[d];
    if (red[d]) count *= x->shape[d];
  }
  if (count == 0 && !wide && kind != MGOPT_OP_reduce_sum && kind != MGOPT_OP_reduce_prod) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, dt, orank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  on = k->out[0]->numel;
  xn = x->numel;
  if (on == 0) return MGOPT__K_OK;
  mgopt__k_strides(rank, full, ost);
  for (d = 0; d < rank; d++)
    if (red[d]) ost[d] = 0;
  in = mgopt__k_scratch(k, xn, mgopt__k_lane_size(lane));
  acc = mgopt__k_scratch(k, on, mgopt__k_lane_size(lane));
  if (!in || !acc) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, lane, in);
  if (r != MGOPT__K_OK) return r;
  if (lane == MGOPT__LANE_F32) {
    switch (kind) {
      /* -0 is the additive identity that keeps the sign of an all -0 sum */
      case MGOPT_OP_reduce_sum: case MGOPT_OP_reduce_mean: MGOPT__KR_ACC(float, count ? -0.0f : 0.0f, a_ + v_); break;
      case MGOPT_OP_reduce_prod: MGOPT__KR_ACC(float, 1.0f, a_ * v_); break;
      case MGOPT_OP_reduce_max: MGOPT__KR_ACC(float, -HUGE_VALF, (a_ >= v_ || a_ != a_) ? a_ : v_); break;
      case MGOPT_OP_reduce_min: MGOPT__KR_ACC(float, HUGE_VALF, (a_ <= v_ || a_ != a_) ? a_ : v_); break;
      default: return MGOPT__K_NO;
    }
    if (kind == MGOPT_OP_reduce_mean) {
      float *a = (float *)acc, c = (float)count;
      int64_t i;
      for (i = 0; i < on; i++) a[i] = a[i] / c;
    }
  } else if (lane == MGOPT__LANE_F64) {
    switch (kind) {
      case MGOPT_OP_reduce_sum: case MGOPT_OP_reduce_mean: MGOPT__KR_ACC(double, count ? -0.0 : 0.0, a_ + v_); break;
      case MGOPT_OP_reduce_prod: MGOPT__KR_ACC(double, 1.0, a_ * v_); break;
      case MGOPT_OP_reduce_max: MGOPT__KR_ACC(double, -HUGE_VAL, (a_ >= v_ || a_ != a_) ? a_ : v_); break;
      case MGOPT_OP_reduce_min: MGOPT__KR_ACC(double, HUGE_VAL, (a_ <= v_ || a_ != a_) ? a_ : v_); break;
      case MGOPT_OP_reduce_l1_norm: MGOPT__KR_ACC(double, 0.0, a_ + fabs(v_)); break;
      case MGOPT_OP_reduce_l2_norm: case MGOPT_OP_reduce_sum_square: MGOPT__KR_ACC(double, 0.0, a_ + v_ * v_); break;
      case MGOPT_OP_reduce_log_sum: MGOPT__KR_ACC(double, 0.0, a_ + v_); break;
      case MGOPT_OP_reduce_log_sum_exp: {
        double *mx = (double *)mgopt__k_scratch(k, on, sizeof(double));
        double *a = (double *)acc;
        int64_t i;
        if (!mx) return MGOPT__K_OOM;
        MGOPT__KR_ACC(double, -HUGE_VAL, (a_ >= v_ || a_ != a_) ? a_ : v_);
        for (i = 0; i < on; i++) mx[i] = (a[i] - a[i] == 0.0) ? a[i] : 0.0; /* finite max, else 0 */
        MGOPT__KR_ACC(double, 0.0, a_ + exp(v_ - mx[o_ + j_ * s_]));
        for (i = 0; i < on; i++) a[i] = mx[i] + log(a[i]);
        break;
      }
      default: return MGOPT__K_NO;
    }
    if (kind == MGOPT_OP_reduce_mean || kind == MGOPT_OP_reduce_l2_norm || kind == MGOPT_OP_reduce_log_sum) {
      double *a = (double *)acc, c = (double)count;
      int64_t i;
      for (i = 0; i < on; i++)
        a[i] = kind == MGOPT_OP_reduce_mean ? a[i] / c : kind == MGOPT_OP_reduce_l2_norm ? sqrt(a[i]) : log(a[i]);
    }
  } else {
    switch (kind) {
      case MGOPT_OP_reduce_sum: MGOPT__KR_ACC(int64_t, 0, (int64_t)((uint64_t)a_ + (uint64_t)v_)); break;
      case MGOPT_OP_reduce_prod: MGOPT__KR_ACC(int64_t, 1, (int64_t)((uint64_t)a_ * (uint64_t)v_)); break;
      case MGOPT_OP_reduce_max: MGOPT__KR_ACC(int64_t, INT64_MIN, a_ >= v_ ? a_ : v_); break;
      case MGOPT_OP_reduce_min: MGOPT__KR_ACC(int64_t, INT64_MAX, a_ <= v_ ? a_ : v_); break;
      case MGOPT_OP_reduce_l1_norm:
        MGOPT__KR_ACC(int64_t, 0, (int64_t)((uint64_t)a_ + (v_ < 0 ? 0u - (uint64_t)v_ : (uint64_t)v_)));
        break;
      case MGOPT_OP_reduce_sum_square: MGOPT__KR_ACC(int64_t, 0, (int64_t)((uint64_t)a_ + (uint64_t)v_ * (uint64_t)v_)); break;
      default: return MGOPT__K_NO;
    }
  }
  mgopt__k_store(lane, acc, on, dt, od);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- softmax */

/* softmax along one axis: e = exp(x - max), e / sum(e). For fp16 / bf16 the
   difference and the exponential are rounded to the dtype, as numpy does. */
#define MGOPT__KR_SOFTMAX(T, EXP, RND)                                                \
  do {                                                                                \
    T *MGOPT_RESTRICT v_ = (T *)buf;                                                  \
    int64_t o_, i_, a_;                                                               \
    for (o_ = 0; o_ < outer; o_++)                                                    \
      for (i_ = 0; i_ < inner; i_++) {                                                \
        T *p_ = v_ + o_ * len * inner + i_;                                           \
        T mx_ = p_[0], s_ = (T)0;                                                     \
        for (a_ = 1; a_ < len; a_++) {                                                \
          T y_ = p_[a_ * inner];                                                      \
          mx_ = (mx_ >= y_ || mx_ != mx_) ? mx_ : y_;                                 \
        }                                                                             \
        for (a_ = 0; a_ < len; a_++) {                                                \
          T e_ = RND(EXP(RND(p_[a_ * inner] - mx_)));                                 \
          p_[a_ * inner] = e_;                                                        \
          s_ += e_;                                                                   \
        }                                                                             \
        s_ = RND(s_);                                                                 \
        for (a_ = 0; a_ < len; a_++) p_[a_ * inner] = p_[a_ * inner] / s_;            \
      }                                                                               \
  } while (0)

MGOPT__PRIVATE int mgopt__kr_softmax(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  int64_t outer = 1, inner = 1, len;
  int32_t axis, d;
  mgopt_dtype dt;
  int lane, r;
  void *buf, *od;
  if (!x || x->rank < 1) return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  lane = mgopt__k_lane(dt);
  if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64) return MGOPT__K_NO;
  if (!mgopt__k_axis(mgopt_op_get_int(k->op, "axis", -1), x->rank, &axis)) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, dt, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  if (x->numel == 0) return MGOPT__K_OK;
  for (d = 0; d < axis; d++) outer *= x->shape[d];
  for (d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
  len = x->shape[axis];
  buf = mgopt__k_scratch(k, x->numel, mgopt__k_lane_size(lane));
  if (!buf) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, lane, buf);
  if (r != MGOPT__K_OK) return r;
  if (lane == MGOPT__LANE_F32) {
#define MGOPT__KR_RND32(v) mgopt__k_rnd(dt, (v))
    MGOPT__KR_SOFTMAX(float, expf, MGOPT__KR_RND32);
  } else {
#define MGOPT__KR_RND64(v) (v)
    MGOPT__KR_SOFTMAX(double, exp, MGOPT__KR_RND64);
  }
  mgopt__k_store(lane, buf, x->numel, dt, od);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- matmul, linear */

/* C[m, n] = sum_k A[m, k] * B[k, n] for one matrix pair, A and B addressed
   through (row, col) strides so transposes need no copy. The products of a
   row go through `prod` before being added, keeping a*b+c unfused. */
#define MGOPT__KR_GEMM(NAME, T)                                                       \
  static void NAME(const T *a, int64_t ars, int64_t acs, const T *b, int64_t brs,     \
                   int64_t bcs, T *MGOPT_RESTRICT c, T *MGOPT_RESTRICT prod,          \
                   int64_t M, int64_t K, int64_t N) {                                 \
    int64_t m, kk, n;                                                                 \
    for (m = 0; m < M; m++) {                                                         \
      T *MGOPT_RESTRICT crow = c + m * N;                                             \
      for (n = 0; n < N; n++) crow[n] = (T)0;                                         \
      for (kk = 0; kk < K; kk++) {                                                    \
        const T av = a[m * ars + kk * acs];                                           \
        const T *brow = b + kk * brs;                                                 \
        if (bcs == 1) for (n = 0; n < N; n++) prod[n] = av * brow[n];                 \
        else for (n = 0; n < N; n++) prod[n] = av * brow[n * bcs];                    \
        for (n = 0; n < N; n++) crow[n] = crow[n] + prod[n];                          \
      }                                                                               \
    }                                                                                 \
  }
MGOPT__KR_GEMM(mgopt__kr_gemm_f32, float)
MGOPT__KR_GEMM(mgopt__kr_gemm_f64, double)
/* integers: the int64 lane's bits as uint64, products and sums modulo 2^64 */
MGOPT__KR_GEMM(mgopt__kr_gemm_u64, uint64_t)

/* Batched matmul with numpy broadcasting of the batch dims. x is [..., M, K]
   (or [..., K, M] when tx), y is [..., K, N] (or [..., N, K] when ty). */
static int mgopt__kr_bmm(mgopt__kctx *k, mgopt_tensor *x, mgopt_tensor *y, int tx, int ty, int lane,
                         void *res, int32_t *orank_out, int64_t *oshape_out) {
  int64_t xs[MGOPT_MAX_RANK], ys[MGOPT_MAX_RANK], bshape[MGOPT_MAX_RANK],
      xst[MGOPT_MAX_RANK], yst[MGOPT_MAX_RANK], bx[MGOPT_MAX_RANK], by[MGOPT_MAX_RANK],
      idx[MGOPT_MAX_RANK], M, K, N, K2, nb = 1, b, xo = 0, yo = 0;
  int32_t xr = x->rank, yr = y->rank, br, d, orank = 0;
  size_t es = mgopt__k_lane_size(lane);
  void *xa, *ya, *prod;
  int r;
  if (xr < 1 || yr < 1 || (xr == 1 && tx) || (yr == 1 && ty)) return MGOPT__K_NO;
  /* promote rank-1 operands as numpy does */
  if (xr == 1) { xs[0] = 1; xs[1] = x->shape[0]; xr = 2; }
  else for (d = 0; d < xr; d++) xs[d] = x->shape[d];
  if (yr == 1) { ys[0] = y->shape[0]; ys[1] = 1; yr = 2; }
  else for (d = 0; d < yr; d++) ys[d] = y->shape[d];
  M = tx ? xs[xr - 1] : xs[xr - 2];
  K = tx ? xs[xr - 2] : xs[xr - 1];
  K2 = ty ? ys[yr - 1] : ys[yr - 2];
  N = ty ? ys[yr - 2] : ys[yr - 1];
  if (K != K2) return MGOPT__K_NO;
  if (!mgopt__k_bcast_shape(xr - 2, xs, yr - 2, ys, &br, bshape)) return MGOPT__K_NO;
  for (d = 0; d < br; d++) {
    oshape_out[orank++] = bshape[d];
    if (!mgopt__mul_i64(nb, bshape[d], &nb)) return MGOPT__K_NO;
  }
  if (x->rank > 1) oshape_out[orank++] = M;
  if (y->rank > 1) oshape_out[orank++] = N;
  *orank_out = orank;
  if (!res) return MGOPT__K_OK; /* shape only */
  /* batch strides (in matrices), 0 where broadcast */
  mgopt__k_strides(xr - 2, xs, xst);
  mgopt__k_strides(yr - 2, ys, yst);
  for (d = 0; d < br; d++) {
    int32_t dx = d - (br - (xr - 2)), dy = d - (br - (yr - 2));
    bx[d] = (dx < 0 || xs[dx] == 1) ? 0 : xst[dx] * M * K;
    by[d] = (dy < 0 || ys[dy] == 1) ? 0 : yst[dy] * K * N;
    idx[d] = 0;
  }
  xa = mgopt__k_scratch(k, x->numel, es);
  ya = mgopt__k_scratch(k, y->numel, es);
  prod = mgopt__k_scratch(k, N, es);
  if (!xa || !ya || !prod) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, lane, xa);
  if (r == MGOPT__K_OK) r = mgopt__k_load(k, y, lane, ya);
  if (r != MGOPT__K_OK) return r;
  for (b = 0; b < nb; b++) {
    int64_t ars = tx ? 1 : K, acs = tx ? M : 1, brs = ty ? 1 : N, bcs = ty ? K : 1;
    if (lane == MGOPT__LANE_F32)
      mgopt__kr_gemm_f32((const float *)xa + xo, ars, acs, (const float *)ya + yo, brs, bcs,
                         (float *)res + b * M * N, (float *)prod, M, K, N);
    else if (lane == MGOPT__LANE_I64)
      mgopt__kr_gemm_u64((const uint64_t *)xa + xo, ars, acs, (const uint64_t *)ya + yo, brs, bcs,
                         (uint64_t *)res + b * M * N, (uint64_t *)prod, M, K, N);
    else
      mgopt__kr_gemm_f64((const double *)xa + xo, ars, acs, (const double *)ya + yo, brs, bcs,
                         (double *)res + b * M * N, (double *)prod, M, K, N);
    for (d = br - 1; d >= 0; d--) {
      xo += bx[d];
      yo += by[d];
      if (++idx[d] < bshape[d]) break;
      xo -= bx[d] * bshape[d];
      yo -= by[d] * bshape[d];
      idx[d] = 0;
    }
  }
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__kr_matmul(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x"), *y = mgopt__k_operand(k, "y");
  int64_t oshape[MGOPT_MAX_RANK + 2], n;
  int32_t orank;
  int tx, ty, lane, r;
  mgopt_dtype dt;
  void *res, *od;
  if (!x || !y || x->dtype != y->dtype || x->rank > MGOPT_MAX_RANK || y->rank > MGOPT_MAX_RANK)
    return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  lane = mgopt__k_lane(dt);
  if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64 && lane != MGOPT__LANE_I64) return MGOPT__K_NO;
  tx = mgopt_op_get_bool(k->op, "transpose_x", 0);
  ty = mgopt_op_get_bool(k->op, "transpose_y", 0);
  r = mgopt__kr_bmm(k, x, y, tx, ty, lane, NULL, &orank, oshape);
  if (r != MGOPT__K_OK) return r;
  r = mgopt__k_out(k, 0, dt, orank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  n = k->out[0]->numel;
  if (n == 0) return MGOPT__K_OK;
  res = mgopt__k_scratch(k, n, mgopt__k_lane_size(lane));
  if (!res) return MGOPT__K_OOM;
  r = mgopt__kr_bmm(k, x, y, tx, ty, lane, res, &orank, oshape);
  if (r != MGOPT__K_OK) return r;
  mgopt__k_store(lane, res, n, dt, od);
  return MGOPT__K_OK;
}

/* linear(x, weight, bias) = matmul(x, weight^T) + bias; the matmul result is
   rounded to the dtype before the bias is added (two numpy operations). */
MGOPT__PRIVATE int mgopt__kr_linear(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  mgopt_tensor *x = mgopt__k_operand(k, "x"), *w = mgopt__k_operand(k, "weight"),
               *bias = mgopt__k_operand(k, "bias");
  int64_t oshape[MGOPT_MAX_RANK + 2], n, i, N;
  int32_t orank;
  int lane, r;
  mgopt_dtype dt;
  void *res, *bv = NULL, *od;
  if (!x || !w || x->dtype != w->dtype || w->rank != 2 || x->rank > MGOPT_MAX_RANK) return MGOPT__K_NO;
  if (mgopt_op_operand(op, "bias") && !bias) return MGOPT__K_NO;
  if (mgopt__k_fused_act(op) < 0) return mgopt__k_no(k, "unknown fused_activation");
  dt = (mgopt_dtype)x->dtype;
  lane = mgopt__k_lane(dt);
  if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64) return MGOPT__K_NO;
  N = w->shape[0];
  if (bias && (bias->dtype != x->dtype || bias->rank != 1 || bias->shape[0] != N)) return MGOPT__K_NO;
  r = mgopt__kr_bmm(k, x, w, 0, 1, lane, NULL, &orank, oshape);
  if (r != MGOPT__K_OK) return r;
  r = mgopt__k_out(k, 0, dt, orank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  n = k->out[0]->numel;
  if (n == 0) return MGOPT__K_OK;
  res = mgopt__k_scratch(k, n, mgopt__k_lane_size(lane));
  if (!res) return MGOPT__K_OOM;
  r = mgopt__kr_bmm(k, x, w, 0, 1, lane, res, &orank, oshape);
  if (r != MGOPT__K_OK) return r;
  if (bias && N > 0) {
    bv = mgopt__k_scratch(k, N, mgopt__k_lane_size(lane));
    if (!bv) return MGOPT__K_OOM;
    r = mgopt__k_load(k, bias, lane, bv);
    if (r != MGOPT__K_OK) return r;
    if (lane == MGOPT__LANE_F32) {
      float *a = (float *)res;
      const float *b = (const float *)bv;
      for (i = 0; i < n; i++) a[i] = mgopt__k_rnd(dt, a[i]) + b[i % N];
    } else {
      double *a = (double *)res;
      const double *b = (const double *)bv;
      for (i = 0; i < n; i++) a[i] = a[i] + b[i % N];
    }
  }
  mgopt__k_store(lane, res, n, dt, od);
  mgopt__k_apply_fused_act(k, mgopt__k_fused_act(op));
  return MGOPT__K_OK;
}
