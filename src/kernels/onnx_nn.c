/* src/kernels/onnx_nn.c — kernels of ONNX ops without a MIL op, neural-network family: Softmax / LogSoftmax / Hardmax across opsets, NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, ArgMax / ArgMin, GlobalMaxPool, LayerNormalization.

   Numeric contract. Every real dtype (fp16, bf16, fp32, fp64) is read into
   double, computed in double in increasing index order and rounded once to
   the output dtype (nearest even). Softmax subtracts the row's maximum
   before exp; LogSoftmax is x - max - log(sum(exp(x - max))). NaN and Inf
   propagate as in IEEE 754 (a row holding NaN is NaN; a row of -Inf is NaN,
   as x - max is -Inf - -Inf). Hardmax puts its 1 at the first maximum, a NaN
   counting as the maximum (numpy's argmax). Losses: loss = -w * x[n,
   target, d] with w = weight[target] (1 without weights) and w = 0 where
   target == ignore_index; "mean" is sum(w * loss) / sum(w), NaN when every
   weight is 0 or there is nothing to reduce (numpy's 0/0); a target outside
   [0, C) that is not ignored is an error. ArgMax / ArgMin, GlobalMaxPool
   and LayerNormalization state their rules above each kernel (the same
   double computation, NaN counted as the extreme). */
#include "onnx_ops.h"

/* ---------------------------------------------------------------- softmax family */

/* The rows a softmax-like op works on: `outer` blocks, each of `inner`
   rows of n elements at stride `inner`. Before opset 13 the input is seen
   as 2-D, [prod(dims before axis), prod(dims from axis)]: one row per block. */
static int mgopt__oxn_rows(mgopt__ox *c, const mgopt_tensor *x, int64_t *outer, int64_t *n, int64_t *inner) {
  int64_t axis = mgopt__ox_int(c, "axis", c->opset < 13 ? 1 : -1);
  int32_t a = 0, i;
  int r;
  if (x->rank == 0) {
    /* a scalar: one row of one element */
    *outer = *n = *inner = 1;
    return axis == 0 || axis == -1 ? MGOPT__OX_OK
                                   : mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "axis %lld of a scalar", (long long)axis);
  }
  if ((r = mgopt__ox_axis(c, axis, x->rank, &a)) != MGOPT__OX_OK) return r;
  *outer = *n = *inner = 1;
  for (i = 0; i < a; i++) *outer *= x->shape[i];
  if (c->opset < 13) {
    for (i = a; i < x->rank; i++) *n *= x->shape[i];
    return MGOPT__OX_OK;
  }
  *n = x->shape[a];
  for (i = a + 1; i < x->rank; i++) *inner *= x->shape[i];
  return MGOPT__OX_OK;
}

/* Softmax (mode 0), LogSoftmax (1), Hardmax (2). */
static int mgopt__oxn_softmax_mode(mgopt__ox *c, int mode) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *y;
  int64_t outer, n, inner, o, r, j;
  int st;
  if (!x) return MGOPT__OX_ERR;
  if (!mgopt__ox_is_real((mgopt_dtype)x->dtype))
    return mgopt__ox_fail(c, MGOPT_ERR_UNSUPPORTED, "%s of %s", c->name, mgopt_dtype_name((mgopt_dtype)x->dtype));
  if ((st = mgopt__oxn_rows(c, x, &outer, &n, &inner)) != MGOPT__OX_OK) return st;
  if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, x->rank, x->shape)) != MGOPT__OX_OK) return st;
  y = c->out[0];
  if (x->numel == 0) return MGOPT__OX_OK;
  for (o = 0; o < outer; o++)
    for (r = 0; r < inner; r++) {
      int64_t base = o * n * inner + r, best = 0;
      double mx = mgopt__ox_getf(x, base), sum = 0.0;
      for (j = 1; j < n; j++) {
        double v = mgopt__ox_getf(x, base + j * inner);
        if (mx != mx) break;
        if (v != v || v > mx) {
          mx = v;
          best = j;
        }
      }
      if (mode == 2) {
        mgopt__ox_setf(y, base + best * inner, 1.0);
        continue;
      }
      for (j = 0; j < n; j++) sum += exp(mgopt__ox_getf(x, base + j * inner) - mx);
      for (j = 0; j < n; j++) {
        double v = mgopt__ox_getf(x, base + j * inner) - mx;
        mgopt__ox_setf(y, base + j * inner, mode == 1 ? v - log(sum) : exp(v) / sum);
      }
    }
  return MGOPT__OX_OK;
}

MGOPT__PRIVATE int mgopt__ox_softmax(mgopt__ox *c) {
  int mode = strcmp(c->name, "LogSoftmax") == 0 ? 1 : strcmp(c->name, "Hardmax") == 0 ? 2 : 0;
  return mgopt__oxn_softmax_mode(c, mode);
}

/* ---------------------------------------------------------------- losses */

/* The loss of log-probabilities lp (N, C, d1..dk) against target (N, d1..dk)
   with optional weight (C) into output 0: reduction "none", "sum" or
   "mean"; the loss has dtype dt (lp's, or the scores' when lp holds their
   log_softmax in fp64). */
static int mgopt__oxn_nll(mgopt__ox *c, const mgopt_tensor *lp, mgopt_dtype dt, const mgopt_tensor *target,
                          const mgopt_tensor *weight, const char *reduction_default) {
  int64_t N, C, D = 1, n, d, ignore = 0;
  int has_ignore = mgopt_op_attr(c->op, "ignore_index") != NULL, reduce, st;
  int32_t i;
  double total = 0.0, wsum = 0.0;
  mgopt_tensor *y;
  if (mgopt__ox_str_is(c, "reduction", "none", strcmp(reduction_default, "none") == 0)) reduce = 0;
  else if (mgopt__ox_str_is(c, "reduction", "sum", strcmp(reduction_default, "sum") == 0)) reduce = 1;
  else if (mgopt__ox_str_is(c, "reduction", "mean", strcmp(reduction_default, "mean") == 0)) reduce = 2;
  else return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "unknown reduction");
  if (has_ignore) ignore = mgopt__ox_int(c, "ignore_index", 0);
  if (!mgopt__ox_is_real((mgopt_dtype)lp->dtype))
    return mgopt__ox_fail(c, MGOPT_ERR_UNSUPPORTED, "%s of %s", c->name, mgopt_dtype_name((mgopt_dtype)lp->dtype));
  if (target->dtype != MGOPT_DT_INT32 && target->dtype != MGOPT_DT_INT64)
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the target is %s, not an int32 or int64 tensor",
                          mgopt_dtype_name((mgopt_dtype)target->dtype));
  if (lp->rank < 2 || target->rank != lp->rank - 1 || target->shape[0] != lp->shape[0])
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the input (rank %d) and the target (rank %d) disagree",
                          (int)lp->rank, (int)target->rank);
  for (i = 2; i < lp->rank; i++) {
    if (target->shape[i - 1] != lp->shape[i])
      return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "target dim %d is %lld, input dim %d is %lld", (int)(i - 1),
                            (long long)target->shape[i - 1], (int)i, (long long)lp->shape[i]);
    D *= lp->shape[i];
  }
  N = lp->shape[0];
  C = lp->shape[1];
  if (weight && (weight->rank != 1 || weight->shape[0] != C || weight->dtype != dt))
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the weight is not a 1-D tensor of C = %lld elements of the input's dtype",
                          (long long)C);
  if (reduce == 0) st = mgopt__ox_out(c, 0, dt, target->rank, target->shape);
  else st = mgopt__ox_out(c, 0, dt, 0, NULL);
  if (st != MGOPT__OX_OK) return st;
  y = c->out[0];
  for (n = 0; n < N; n++)
    for (d = 0; d < D; d++) {
      int64_t t = mgopt__ox_geti(target, n * D + d);
      double w, l;
      if (has_ignore && t == ignore) continue; /* loss 0, weight 0 */
      if (t < 0 || t >= C)
        return mgopt__ox_fail(c, MGOPT_ERR_CORRUPT, "target %lld at %lld is outside [0, %lld)", (long long)t,
                              (long long)(n * D + d), (long long)C);
      w = weight ? mgopt__ox_getf(weight, t) : 1.0;
      l = -mgopt__ox_getf(lp, (n * C + t) * D + d) * w;
      if (reduce == 0) mgopt__ox_setf(y, n * D + d, l);
      total += l;
      wsum += w;
    }
  if (reduce == 1) mgopt__ox_setf(y, 0, total);
  else if (reduce == 2) mgopt__ox_setf(y, 0, total / wsum);
  return MGOPT__OX_OK;
}

MGOPT__PRIVATE int mgopt__ox_nll_loss(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *t = x ? mgopt__ox_need(c, 1) : NULL;
  if (!t) return MGOPT__OX_ERR;
  return mgopt__oxn_nll(c, x, (mgopt_dtype)x->dtype, t, mgopt__ox_in(c, 2), "mean");
}

/* log_softmax over axis 1 into lp (the scores' shape and dtype). */
static void mgopt__oxn_log_softmax_c(const mgopt_tensor *x, mgopt_tensor *lp) {
  int64_t N = x->shape[0], C = x->shape[1], D = x->numel / (N * C), n, d, j;
  for (n = 0; n < N; n++)
    for (d = 0; d < D; d++) {
      int64_t base = n * C * D + d;
      double mx = mgopt__ox_getf(x, base), sum = 0.0;
      for (j = 1; j < C; j++) {
        double v = mgopt__ox_getf(x, base + j * D);
        if (mx != mx) break;
        if (v != v || v > mx) mx = v;
      }
      for (j = 0; j < C; j++) sum += exp(mgopt__ox_getf(x, base + j * D) - mx);
      for (j = 0; j < C; j++) mgopt__ox_setf(lp, base + j * D, mgopt__ox_getf(x, base + j * D) - mx - log(sum));
    }
}

/* SoftmaxCrossEntropyLoss: the NLL loss of log_softmax(scores, axis 1);
   output 1 (optional) is that log_softmax. The loss reads the log
   probabilities in double before they are rounded to the output dtype. */
MGOPT__PRIVATE int mgopt__ox_sce_loss(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *t = x ? mgopt__ox_need(c, 1) : NULL, *lp;
  int st;
  if (!t) return MGOPT__OX_ERR;
  if (!mgopt__ox_is_real((mgopt_dtype)x->dtype))
    return mgopt__ox_fail(c, MGOPT_ERR_UNSUPPORTED, "%s of %s", c->name, mgopt_dtype_name((mgopt_dtype)x->dtype));
  if (x->rank < 2) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the scores have rank %d, below 2", (int)x->rank);
  /* the log probabilities in fp64 (freed below), then rounded once into output 1 */
  lp = mgopt_eval_tensor_new(c->p, MGOPT_DT_FP64, x->rank, x->shape);
  if (!lp) return mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
  if (x->numel) mgopt__oxn_log_softmax_c(x, lp);
  st = mgopt__oxn_nll(c, lp, (mgopt_dtype)x->dtype, t, mgopt__ox_in(c, 2), "mean");
  if (st == MGOPT__OX_OK && mgopt__ox_wants(c, 1)) {
    int64_t i;
    st = mgopt__ox_out(c, 1, (mgopt_dtype)x->dtype, x->rank, x->shape);
    for (i = 0; st == MGOPT__OX_OK && i < x->numel; i++) mgopt__ox_setf(c->out[1], i, mgopt__ox_getf(lp, i));
  }
  mgopt_eval_tensor_free(c->p, lp);
  return st;
}

/* ---------------------------------------------------------------- arg max / min, global max pool */

/* ArgMax / ArgMin along `axis` (default 0), int64 out, keepdims (default 1),
   select_last_index (default 0) picks the last of equal extremes. Reals
   compare in double, a NaN counting as the extreme (numpy); integers in
   int64 (uint64 unsigned). */
MGOPT__PRIVATE int mgopt__ox_arg_extreme(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0);
  int want_max = strcmp(c->name, "ArgMax") == 0, last = (int)mgopt__ox_int(c, "select_last_index", 0), st, real;
  int64_t shape[MGOPT_MAX_RANK], outer = 1, n, inner = 1, o, r, j;
  int32_t a = 0, d, rank = 0;
  if (!x) return MGOPT__OX_ERR;
  real = mgopt__ox_is_real((mgopt_dtype)x->dtype);
  if (!real && !(mgopt_dtype_is_int((mgopt_dtype)x->dtype) && mgopt_dtype_bits((mgopt_dtype)x->dtype) >= 8))
    return mgopt__ox_no(c, "%s of %s", c->name, mgopt_dtype_name((mgopt_dtype)x->dtype));
  if (x->rank == 0) return mgopt__ox_no(c, "%s of a scalar", c->name);
  if ((st = mgopt__ox_axis(c, mgopt__ox_int(c, "axis", 0), x->rank, &a)) != MGOPT__OX_OK) return st;
  n = x->shape[a];
  if (n == 0) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "%s over an empty axis", c->name);
  for (d = 0; d < x->rank; d++) {
    if (d < a) outer *= x->shape[d];
    if (d > a) inner *= x->shape[d];
    if (d != a) shape[rank++] = x->shape[d];
    else if (mgopt__ox_int(c, "keepdims", 1)) shape[rank++] = 1;
  }
  if ((st = mgopt__ox_out(c, 0, MGOPT_DT_INT64, rank, shape)) != MGOPT__OX_OK) return st;
  for (o = 0; o < outer; o++)
    for (r = 0; r < inner; r++) {
      int64_t base = o * n * inner + r, best = 0;
      for (j = 1; j < n; j++) {
        int better, equal;
        if (real) {
          double v = mgopt__ox_getf(x, base + j * inner), b = mgopt__ox_getf(x, base + best * inner);
          if (b != b) break;
          better = v != v || (want_max ? v > b : v < b);
          equal = v == b;
        } else {
          int64_t v = mgopt__ox_geti(x, base + j * inner), b = mgopt__ox_geti(x, base + best * inner);
          if (x->dtype == MGOPT_DT_UINT64) better = want_max ? (uint64_t)v > (uint64_t)b : (uint64_t)v < (uint64_t)b;
          else better = want_max ? v > b : v < b;
          equal = v == b;
        }
        if (better || (last && equal)) best = j;
      }
      mgopt__ox_seti(c->out[0], o * inner + r, best);
    }
  return MGOPT__OX_OK;
}

/* GlobalMaxPool: the maximum over every dim after the first two (kept as 1). */
MGOPT__PRIVATE int mgopt__ox_global_max_pool(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0);
  int64_t shape[MGOPT_MAX_RANK], rows, n, r, j;
  int32_t d;
  int st;
  if (!x) return MGOPT__OX_ERR;
  if (!mgopt__ox_is_real((mgopt_dtype)x->dtype) || x->rank < 3)
    return mgopt__ox_no(c, "GlobalMaxPool of %s rank %d", mgopt_dtype_name((mgopt_dtype)x->dtype), (int)x->rank);
  for (d = 0; d < x->rank; d++) shape[d] = d < 2 ? x->shape[d] : 1;
  rows = x->shape[0] * x->shape[1];
  n = rows ? x->numel / rows : 0;
  if (n == 0 && rows) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "GlobalMaxPool over no element");
  if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, x->rank, shape)) != MGOPT__OX_OK) return st;
  for (r = 0; r < rows; r++) {
    double m = mgopt__ox_getf(x, r * n);
    for (j = 1; j < n && m == m; j++) {
      double v = mgopt__ox_getf(x, r * n + j);
      if (v != v || v > m) m = v;
    }
    mgopt__ox_setf(c->out[0], r, m);
  }
  return MGOPT__OX_OK;
}

/* ---------------------------------------------------------------- layer normalization */

/* LayerNormalization over the dims from `axis` (default -1): mean, then
   the variance of (x - mean) (two passes, in double), y = (x - mean) /
   sqrt(var + epsilon) * scale + bias; outputs 1 and 2 (optional) are the
   mean and 1 / sqrt(var + epsilon) with the normalized dims kept as 1, of
   their declared dtype (fp32, the stash type, when not declared). Scale and
   bias hold the normalized dims' elements (or one). */
MGOPT__PRIVATE int mgopt__ox_layer_norm(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *s = x ? mgopt__ox_need(c, 1) : NULL, *b = mgopt__ox_in(c, 2);
  double eps = mgopt__ox_float(c, "epsilon", 1e-5);
  int64_t shape[MGOPT_MAX_RANK], outer = 1, n = 1, o, j;
  int32_t a = 0, d, k;
  int st;
  if (!s) return MGOPT__OX_ERR;
  if (!mgopt__ox_is_real((mgopt_dtype)x->dtype) || x->rank == 0)
    return mgopt__ox_no(c, "LayerNormalization of %s rank %d", mgopt_dtype_name((mgopt_dtype)x->dtype), (int)x->rank);
  if ((st = mgopt__ox_axis(c, mgopt__ox_int(c, "axis", -1), x->rank, &a)) != MGOPT__OX_OK) return st;
  for (d = 0; d < x->rank; d++) {
    if (d < a) outer *= x->shape[d];
    else n *= x->shape[d];
    shape[d] = d < a ? x->shape[d] : 1;
  }
  if ((s->numel != n && s->numel != 1) || (b && b->numel != n && b->numel != 1))
    return mgopt__ox_no(c, "a scale or bias that is not of the normalized shape");
  if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, x->rank, x->shape)) != MGOPT__OX_OK) return st;
  for (k = 1; k <= 2; k++)
    if (mgopt__ox_wants(c, k)) {
      mgopt_dtype dt = (mgopt_dtype)c->op->outs[k]->type.dtype;
      if (!mgopt__ox_is_real(dt)) dt = MGOPT_DT_FP32;
      if ((st = mgopt__ox_out(c, k, dt, x->rank, shape)) != MGOPT__OX_OK) return st;
    }
  if (n == 0) return MGOPT__OX_OK;
  for (o = 0; o < outer; o++) {
    double mean = 0.0, var = 0.0, inv;
    for (j = 0; j < n; j++) mean += mgopt__ox_getf(x, o * n + j);
    mean /= (double)n;
    for (j = 0; j < n; j++) {
      double v = mgopt__ox_getf(x, o * n + j) - mean;
      var += v * v;
    }
    var /= (double)n;
    inv = 1.0 / sqrt(var + eps);
    for (j = 0; j < n; j++) {
      double v = (mgopt__ox_getf(x, o * n + j) - mean) * inv * mgopt__ox_getf(s, s->numel == 1 ? 0 : j);
      if (b) v += mgopt__ox_getf(b, b->numel == 1 ? 0 : j);
      mgopt__ox_setf(c->out[0], o * n + j, v);
    }
    if (c->nout > 1 && c->out[1]) mgopt__ox_setf(c->out[1], o, mean);
    if (c->nout > 2 && c->out[2]) mgopt__ox_setf(c->out[2], o, inv);
  }
  return MGOPT__OX_OK;
}
