/* src/kernels/struct.c — kernels of structural and index ops: scatter_along_axis, scatter_nd, gather_nd,
   reverse_sequence, depth_to_space, space_to_depth, topk, range_1d, fill.

   Indices. Every index operand is an integer tensor read as int64; a negative
   index counts from the end of its dim. An index outside [-len, len), a
   sequence length outside [0, len], a range step of 0 and a topk k above the
   axis length break the op's contract: the op is not folded, and evaluation
   reports MGOPT_ERR_CORRUPT with the offending value, never reads or writes
   out of bounds.

   Moving ops (gather_nd, reverse_sequence, depth_to_space, space_to_depth,
   fill, topk's values, scatter mode "update") copy elements bit for bit and
   take any byte-addressable dtype.

   Numeric contract of scatter_along_axis and scatter_nd. The output starts as
   a copy of data; the updates are applied one at a time in row-major order of
   the updates tensor (so of indices). Duplicate indices: mode "update" keeps
   the last update written to an element; the other modes accumulate, each
   step reading the element as the previous step left it. Each step is
   computed in double for floats (operands widen exactly) and rounded at once
   to the data dtype (nearest even), so fp32 and fp16 results equal a runtime
   that computes each step in the dtype; integers compute in int64 with two's
   complement wrap-around and are stored truncated to the dtype (modes add,
   sub, mul wrap; max, min are exact). mode "div" is computed for floats only
   (IEEE: x/0 is +-Inf or NaN); an integer div is not folded. max and min
   propagate NaN: a NaN on either side gives NaN. bool data takes mode
   "update" only.

   topk: values compare exactly (floats widened to double, integers as int64);
   a NaN counts as larger than every number (it comes first when largest,
   last when ascending); equal values keep increasing index order (a stable
   sort: ONNX's tie rule). sort false still gives sorted output, one of the
   orders it allows. Indices are written as output_indices_dtype (int32,
   int64; uint16 when the axis fits).

   range_1d: n = ceil((end - start) / step) elements (0 when negative), element
   i = start + i * step: floats computed in double and rounded once to the
   dtype, integers in int64 (a length or value that int64 cannot hold is not
   folded). fill writes value (its dtype) into every element of the shape. */
#include "kernels.h"

/* The operands break the op's contract (an index out of range): not folded;
   evaluation reports MGOPT_ERR_CORRUPT with this reason. */
static int mgopt__kt_bad(mgopt__kctx *k, const char *what, int64_t v, int64_t lo, int64_t hi) {
  if (!k->why[0] && lo <= hi)
    snprintf(k->why, sizeof k->why, "%s %lld is outside [%lld, %lld]", what, (long long)v, (long long)lo, (long long)hi);
  else if (!k->why[0])
    snprintf(k->why, sizeof k->why, "%s %lld is invalid", what, (long long)v);
  k->bad = 1;
  return MGOPT__K_NO;
}

/* An integer operand as int64 scratch (NULL *out for an empty one). */
static int mgopt__kt_ints(mgopt__kctx *k, mgopt_tensor *t, int64_t **out) {
  int64_t *v;
  *out = NULL;
  if (mgopt__k_lane((mgopt_dtype)t->dtype) != MGOPT__LANE_I64) return mgopt__k_no(k, "indices are not integers");
  if (t->numel == 0) return MGOPT__K_OK;
  v = (int64_t *)mgopt__k_scratch(k, t->numel, sizeof(int64_t));
  if (!v) return MGOPT__K_OOM;
  *out = v;
  return mgopt__k_load(k, t, MGOPT__LANE_I64, v);
}

static int64_t mgopt__kt_prod(const int64_t *shape, int32_t from, int32_t to) {
  int64_t n = 1;
  int32_t d;
  for (d = from; d < to; d++) n *= shape[d];
  return n;
}

/* ---------------------------------------------------------------- scatter */

enum { MGOPT__KT_UPDATE, MGOPT__KT_ADD, MGOPT__KT_SUB, MGOPT__KT_MUL, MGOPT__KT_DIV, MGOPT__KT_MAX, MGOPT__KT_MIN };

static int mgopt__kt_mode(const mgopt_op *op) {
  static const char *const names[] = {"update", "add", "sub", "mul", "div", "max", "min"};
  size_t n = 0, i;
  const char *s = mgopt_op_get_string(op, "mode", &n);
  if (!s) return MGOPT__KT_ADD; /* MIL's default */
  for (i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0) return (int)i;
  return -1;
}

/* v rounded to dtype dt (a float dtype). */
static double mgopt__kt_round(mgopt_dtype dt, double v) {
  float f;
  switch (dt) {
    case MGOPT_DT_FP64: return v;
    case MGOPT_DT_FP32: return (double)(float)v;
    case MGOPT_DT_FP16: {
      uint16_t h;
      mgopt__k_store_f64_at(dt, &h, 0, v);
      f = mgopt_f16_to_f32(h);
      return (double)f;
    }
    case MGOPT_DT_BF16: {
      uint16_t h;
      mgopt__k_store_f64_at(dt, &h, 0, v);
      f = mgopt_bf16_to_f32(h);
      return (double)f;
    }
    default: return v;
  }
}

static double mgopt__kt_fstep(int mode, double a, double b) {
  switch (mode) {
    case MGOPT__KT_ADD: return a + b;
    case MGOPT__KT_SUB: return a - b;
    case MGOPT__KT_MUL: return a * b;
    case MGOPT__KT_DIV: return a / b;
    case MGOPT__KT_MAX: return (a != a || b != b) ? a + b : (a > b ? a : b);
    case MGOPT__KT_MIN: return (a != a || b != b) ? a + b : (a < b ? a : b);
    default: return b;
  }
}

static int64_t mgopt__kt_istep(int mode, int64_t a, int64_t b) {
  switch (mode) {
    case MGOPT__KT_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case MGOPT__KT_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case MGOPT__KT_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case MGOPT__KT_MAX: return a > b ? a : b;
    case MGOPT__KT_MIN: return a < b ? a : b;
    default: return b;
  }
}

/* Output 0 = data with update element i applied at data element pos[i], in order. */
static int mgopt__kt_scatter(mgopt__kctx *k, mgopt_tensor *data, mgopt_tensor *upd, const int64_t *pos, int mode) {
  mgopt_dtype dt = (mgopt_dtype)data->dtype;
  size_t es = mgopt__k_esize(dt);
  int lane = mgopt__k_lane(dt), r;
  int64_t i;
  void *od;
  if (mode < 0) return mgopt__k_no(k, "unknown mode");
  if (!es || dt == MGOPT_DT_STRING || upd->dtype != data->dtype) return mgopt__k_no(k, "data and updates differ in dtype");
  if (mode != MGOPT__KT_UPDATE && (lane == MGOPT__LANE_BOOL || lane == MGOPT__LANE_NONE))
    return mgopt__k_no(k, "mode needs numbers, data is %s", mgopt_dtype_name(dt));
  if (mode == MGOPT__KT_DIV && lane == MGOPT__LANE_I64) return mgopt__k_no(k, "integer div is not computed");
  r = mgopt__k_out_full(k, 0, dt, data->rank, data->shape, &od);
  if (r != MGOPT__K_OK || data->numel == 0) return r;
  if (mode == MGOPT__KT_UPDATE) {
    const uint8_t *s = (const uint8_t *)mgopt__k_data(k, data), *u = (const uint8_t *)mgopt__k_data(k, upd);
    if (!s || (!u && upd->numel)) return MGOPT__K_OOM;
    memcpy(od, s, (size_t)data->numel * es);
    for (i = 0; i < upd->numel; i++) memcpy((uint8_t *)od + (size_t)pos[i] * es, u + (size_t)i * es, es);
    return MGOPT__K_OK;
  }
  if (lane == MGOPT__LANE_I64) {
    int64_t *a = (int64_t *)mgopt__k_scratch(k, data->numel, 8), *b = (int64_t *)mgopt__k_scratch(k, upd->numel, 8);
    if (!a || !b) return MGOPT__K_OOM;
    if ((r = mgopt__k_load(k, data, lane, a)) != MGOPT__K_OK) return r;
    if (upd->numel && (r = mgopt__k_load(k, upd, lane, b)) != MGOPT__K_OK) return r;
    for (i = 0; i < upd->numel; i++) a[pos[i]] = mgopt__kt_istep(mode, a[pos[i]], b[i]);
    mgopt__k_store(lane, a, data->numel, dt, od);
  } else {
    double *a = (double *)mgopt__k_scratch(k, data->numel, 8), *b = (double *)mgopt__k_scratch(k, upd->numel, 8);
    if (!a || !b) return MGOPT__K_OOM;
    if ((r = mgopt__k_load(k, data, MGOPT__LANE_F64, a)) != MGOPT__K_OK) return r;
    if (upd->numel && (r = mgopt__k_load(k, upd, MGOPT__LANE_F64, b)) != MGOPT__K_OK) return r;
    for (i = 0; i < upd->numel; i++) a[pos[i]] = mgopt__kt_round(dt, mgopt__kt_fstep(mode, a[pos[i]], b[i]));
    for (i = 0; i < data->numel; i++) mgopt__k_store_f64_at(dt, od, i, a[i]);
  }
  return MGOPT__K_OK;
}

/* data[.., indices[p], ..] (op) updates[p] along the axis, p over indices' elements. */
MGOPT__PRIVATE int mgopt__kt_scatter_along_axis(mgopt__kctx *k) {
  mgopt_tensor *data = mgopt__k_operand(k, "data"), *ind = mgopt__k_operand(k, "indices"),
               *upd = mgopt__k_operand(k, "updates");
  int64_t outer, inner, len, ilen, o, j, i, *idx, *pos;
  int32_t axis, d;
  int r;
  if (!data || !ind || !upd || data->rank < 1 || ind->rank != data->rank || upd->rank != ind->rank)
    return mgopt__k_no(k, "data, indices and updates differ in rank");
  if (!mgopt__k_axis(mgopt_op_get_int(k->op, "axis", 0), data->rank, &axis)) return mgopt__k_no(k, "axis out of range");
  for (d = 0; d < data->rank; d++)
    if (upd->shape[d] != ind->shape[d] || (d != axis && data->shape[d] != ind->shape[d]))
      return mgopt__k_no(k, "indices, updates and data differ in shape");
  if ((r = mgopt__kt_ints(k, ind, &idx)) != MGOPT__K_OK) return r;
  outer = mgopt__kt_prod(data->shape, 0, axis);
  inner = mgopt__kt_prod(data->shape, axis + 1, data->rank);
  len = data->shape[axis];
  ilen = ind->shape[axis];
  pos = (int64_t *)mgopt__k_scratch(k, ind->numel, 8);
  if (!pos) return MGOPT__K_OOM;
  for (o = 0; o < outer; o++)
    for (j = 0; j < ilen; j++)
      for (i = 0; i < inner; i++) {
        int64_t at = (o * ilen + j) * inner + i, v = idx[at];
        if (v < -len || v >= len) return mgopt__kt_bad(k, "index", v, -len, len - 1);
        if (v < 0) v += len;
        pos[at] = (o * len + v) * inner + i;
      }
  return mgopt__kt_scatter(k, data, upd, pos, mgopt__kt_mode(k->op));
}

/* The flat offset (in units of the trailing slice) of index tuple t (K entries) into dims. */
static int mgopt__kt_tuple(mgopt__kctx *k, const int64_t *t, int64_t K, const int64_t *dims, int64_t *off) {
  int64_t j, o = 0;
  for (j = 0; j < K; j++) {
    int64_t v = t[j];
    if (v < -dims[j] || v >= dims[j]) return mgopt__kt_bad(k, "index", v, -dims[j], dims[j] - 1);
    if (v < 0) v += dims[j];
    o = o * dims[j] + v;
  }
  *off = o;
  return MGOPT__K_OK;
}

/* data[indices[n, :]] (op) updates[n, ...], n over indices' leading dims. */
MGOPT__PRIVATE int mgopt__kt_scatter_nd(mgopt__kctx *k) {
  mgopt_tensor *data = mgopt__k_operand(k, "data"), *ind = mgopt__k_operand(k, "indices"),
               *upd = mgopt__k_operand(k, "updates");
  int64_t K, N, inner, n, i, off, *idx, *pos;
  int32_t d, q;
  int r;
  if (!data || !ind || !upd || ind->rank < 1) return mgopt__k_no(k, "indices need rank 1 or more");
  q = ind->rank;
  K = ind->shape[q - 1];
  if (K > data->rank || upd->rank != q - 1 + data->rank - K) return mgopt__k_no(k, "updates do not fit data and indices");
  for (d = 0; d < q - 1; d++)
    if (upd->shape[d] != ind->shape[d]) return mgopt__k_no(k, "updates do not fit indices");
  for (d = (int32_t)K; d < data->rank; d++)
    if (upd->shape[q - 1 + d - K] != data->shape[d]) return mgopt__k_no(k, "updates do not fit data");
  if ((r = mgopt__kt_ints(k, ind, &idx)) != MGOPT__K_OK) return r;
  N = mgopt__kt_prod(ind->shape, 0, q - 1);
  inner = mgopt__kt_prod(data->shape, (int32_t)K, data->rank);
  pos = (int64_t *)mgopt__k_scratch(k, upd->numel, 8);
  if (!pos) return MGOPT__K_OOM;
  for (n = 0; n < N; n++) {
    if ((r = mgopt__kt_tuple(k, idx ? idx + n * K : NULL, K, data->shape, &off)) != MGOPT__K_OK) return r;
    for (i = 0; i < inner; i++) pos[n * inner + i] = off * inner + i;
  }
  return mgopt__kt_scatter(k, data, upd, pos, mgopt__kt_mode(k->op));
}

/* ---------------------------------------------------------------- gather_nd */

/* out[b.., n..] = x[b.., indices[b.., n.., :], ...] with batch_dims leading dims shared. */
MGOPT__PRIVATE int mgopt__kt_gather_nd(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x"), *ind = mgopt__k_operand(k, "indices");
  int64_t bd = mgopt_op_get_int(k->op, "batch_dims", 0), shape[MGOPT_MAX_RANK], K, B, N, inner, xb, b, n, off, *idx;
  int32_t q, d, orank = 0;
  size_t es;
  const uint8_t *src;
  uint8_t *dst;
  void *od;
  int r;
  if (!x || !ind || ind->rank < 1) return mgopt__k_no(k, "indices need rank 1 or more");
  q = ind->rank;
  K = ind->shape[q - 1];
  if (bd < 0 || bd >= q || bd + K > x->rank) return mgopt__k_no(k, "batch_dims or the index length do not fit x");
  for (d = 0; d < (int32_t)bd; d++)
    if (x->shape[d] != ind->shape[d]) return mgopt__k_no(k, "x and indices differ in batch dim %d", (int)d);
  if (q - 1 + x->rank - bd - K > MGOPT_MAX_RANK) return mgopt__k_no(k, "the output rank is too high");
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  if (!es || x->dtype == MGOPT_DT_STRING) return mgopt__k_no(k, "x's dtype is not byte-addressable");
  for (d = 0; d < q - 1; d++) shape[orank++] = ind->shape[d];
  for (d = (int32_t)(bd + K); d < x->rank; d++) shape[orank++] = x->shape[d];
  if ((r = mgopt__kt_ints(k, ind, &idx)) != MGOPT__K_OK) return r;
  B = mgopt__kt_prod(ind->shape, 0, (int32_t)bd);
  N = mgopt__kt_prod(ind->shape, (int32_t)bd, q - 1);
  inner = mgopt__kt_prod(x->shape, (int32_t)(bd + K), x->rank);
  xb = mgopt__kt_prod(x->shape, (int32_t)bd, x->rank);
  for (b = 0; b < B && K > 0; b++)
    for (n = 0; n < N; n++)
      if ((r = mgopt__kt_tuple(k, idx + (b * N + n) * K, K, x->shape + bd, &off)) != MGOPT__K_OK) return r;
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, orank, shape, &od);
  if (r != MGOPT__K_OK || B * N * inner == 0) return r;
  src = (const uint8_t *)mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  dst = (uint8_t *)od;
  for (b = 0; b < B; b++)
    for (n = 0; n < N; n++) {
      off = 0;
      if (K > 0) mgopt__kt_tuple(k, idx + (b * N + n) * K, K, x->shape + bd, &off);
      memcpy(dst, src + (size_t)(b * xb + off * inner) * es, (size_t)inner * es);
      dst += (size_t)inner * es;
    }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- reverse_sequence */

/* The first lengths[b] elements along seq_axis of each slice b along batch_axis, reversed. */
MGOPT__PRIVATE int mgopt__kt_reverse_sequence(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x"), *lt = mgopt__k_operand(k, "lengths");
  int64_t idx[MGOPT_MAX_RANK], st[MGOPT_MAX_RANK], *len, i, S, NB;
  int32_t sa, ba, d;
  size_t es;
  const uint8_t *src;
  uint8_t *dst;
  void *od;
  int r;
  if (!x || !lt || x->rank < 2) return mgopt__k_no(k, "x needs rank 2 or more");
  if (!mgopt__k_axis(mgopt_op_get_int(k->op, "seq_axis", 0), x->rank, &sa) ||
      !mgopt__k_axis(mgopt_op_get_int(k->op, "batch_axis", 0), x->rank, &ba) || sa == ba)
    return mgopt__k_no(k, "seq_axis and batch_axis must be two different axes");
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  if (!es || x->dtype == MGOPT_DT_STRING) return mgopt__k_no(k, "x's dtype is not byte-addressable");
  S = x->shape[sa];
  NB = x->shape[ba];
  if (lt->rank != 1 || lt->shape[0] != NB) return mgopt__k_no(k, "lengths does not match the batch axis");
  if ((r = mgopt__kt_ints(k, lt, &len)) != MGOPT__K_OK) return r;
  for (i = 0; i < NB; i++)
    if (len[i] < 0 || len[i] > S) return mgopt__kt_bad(k, "sequence length", len[i], 0, S);
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK || x->numel == 0) return r;
  src = (const uint8_t *)mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  dst = (uint8_t *)od;
  mgopt__k_strides(x->rank, x->shape, st);
  for (d = 0; d < x->rank; d++) idx[d] = 0;
  for (i = 0; i < x->numel; i++) {
    int64_t s = idx[sa], l = len[idx[ba]], from = i;
    if (s < l) from = i + (l - 1 - 2 * s) * st[sa];
    memcpy(dst + (size_t)i * es, src + (size_t)from * es, es);
    for (d = x->rank - 1; d >= 0; d--) {
      if (++idx[d] < x->shape[d]) break;
      idx[d] = 0;
    }
  }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- depth_to_space, space_to_depth

   depth_to_space (DCR order, MIL's and TensorFlow's):
     out[n, c, h * b + i, w * b + j] = x[n, (i * b + j) * C' + c, h, w], C' = C / b^2
   space_to_depth is its inverse:
     out[n, (i * b + j) * C + c, h, w] = x[n, c, h * b + i, w * b + j] */
MGOPT__PRIVATE int mgopt__kt_depth_space(mgopt__kctx *k) {
  int to_space = k->op->kind == MGOPT_OP_depth_to_space;
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  int64_t b = mgopt_op_get_int(k->op, "block_size", -1), N, C, H, W, oshape[4], shape[6], stride[6];
  size_t es;
  const void *src;
  void *od;
  int r;
  if (!x || x->rank != 4 || b < 1 || b > ((int64_t)1 << 30)) return mgopt__k_no(k, "needs rank 4 and a block_size");
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  if (!es || x->dtype == MGOPT_DT_STRING) return mgopt__k_no(k, "x's dtype is not byte-addressable");
  N = x->shape[0];
  C = x->shape[1];
  H = x->shape[2];
  W = x->shape[3];
  if (to_space) {
    if (C % (b * b) != 0) return mgopt__k_no(k, "channels do not divide by block_size^2");
    oshape[0] = N; oshape[1] = C / (b * b); oshape[2] = H * b; oshape[3] = W * b;
    /* output as [N, C', H, b(i), W, b(j)] */
    shape[0] = N; stride[0] = C * H * W;
    shape[1] = C / (b * b); stride[1] = H * W;
    shape[2] = H; stride[2] = W;
    shape[3] = b; stride[3] = b * (C / (b * b)) * H * W;
    shape[4] = W; stride[4] = 1;
    shape[5] = b; stride[5] = (C / (b * b)) * H * W;
  } else {
    if (H % b != 0 || W % b != 0) return mgopt__k_no(k, "height or width do not divide by block_size");
    oshape[0] = N; oshape[1] = C * b * b; oshape[2] = H / b; oshape[3] = W / b;
    /* output as [N, b(i), b(j), C, H', W'] */
    shape[0] = N; stride[0] = C * H * W;
    shape[1] = b; stride[1] = W;
    shape[2] = b; stride[2] = 1;
    shape[3] = C; stride[3] = H * W;
    shape[4] = H / b; stride[4] = b * W;
    shape[5] = W / b; stride[5] = b;
  }
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, 4, oshape, &od);
  if (r != MGOPT__K_OK || x->numel == 0) return r;
  src = mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  mgopt__k_strided(od, src, es, 6, shape, stride, 0);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- topk */

/* a before b in topk's order: the contract's comparison (NaN largest), ties by index. */
static int mgopt__kt_before(const double *fv, const int64_t *iv, int64_t a, int64_t b, int asc) {
  if (fv) {
    double x = fv[a], y = fv[b];
    int xn = x != x, yn = y != y;
    if (xn || yn) {
      if (xn && yn) return a < b;
      return asc ? yn : xn;
    }
    if (x != y) return asc ? x < y : x > y;
  } else if (iv[a] != iv[b]) {
    return asc ? iv[a] < iv[b] : iv[a] > iv[b];
  }
  return a < b;
}

/* Stable merge sort of ord[0..n) (positions into the line) with tmp scratch. */
static void mgopt__kt_sort(int64_t *ord, int64_t *tmp, int64_t n, const double *fv, const int64_t *iv, int asc) {
  int64_t w, lo;
  for (w = 1; w < n; w *= 2) {
    for (lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, a = lo, b = mid, t = lo;
      while (a < mid && b < hi) tmp[t++] = mgopt__kt_before(fv, iv, ord[b], ord[a], asc) ? ord[b++] : ord[a++];
      while (a < mid) tmp[t++] = ord[a++];
      while (b < hi) tmp[t++] = ord[b++];
    }
    memcpy(ord, tmp, (size_t)n * sizeof *ord);
  }
}

/* values and indices of the k largest (smallest when ascending) along the axis. */
MGOPT__PRIVATE int mgopt__kt_topk(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  int64_t K = mgopt_op_get_int(k->op, "k", 1), shape[MGOPT_MAX_RANK], outer, inner, len, o, i, j, *ord, *tmp;
  int64_t *iv = NULL, *line_i = NULL;
  double *fv = NULL, *line_f = NULL;
  int asc = mgopt_op_get_bool(k->op, "ascending", 0), lane, r;
  int32_t axis, d;
  size_t es, n = 0;
  const char *ods = mgopt_op_get_string(k->op, "output_indices_dtype", &n);
  mgopt_dtype idt = ods ? mgopt_dtype_from_name(ods, n) : MGOPT_DT_INT32;
  const uint8_t *src;
  void *ov, *oi;
  if (!x || x->rank < 1) return mgopt__k_no(k, "x needs rank 1 or more");
  if (k->op->nouts != 2) return mgopt__k_no(k, "topk gives values and indices");
  if (!mgopt__k_axis(mgopt_op_get_int(k->op, "axis", -1), x->rank, &axis)) return mgopt__k_no(k, "axis out of range");
  if (idt != MGOPT_DT_INT32 && idt != MGOPT_DT_INT64 && idt != MGOPT_DT_UINT16)
    return mgopt__k_no(k, "output_indices_dtype is not int32, int64 or uint16");
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  lane = mgopt__k_lane((mgopt_dtype)x->dtype);
  if (!es || (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64 && lane != MGOPT__LANE_I64))
    return mgopt__k_no(k, "x is not numeric");
  len = x->shape[axis];
  if (K < 0 || K > len) return mgopt__kt_bad(k, "k", K, 0, len);
  if (idt == MGOPT_DT_UINT16 && len > 65536) return mgopt__k_no(k, "uint16 cannot hold the indices");
  if (idt == MGOPT_DT_INT32 && len > ((int64_t)1 << 31)) return mgopt__k_no(k, "int32 cannot hold the indices");
  for (d = 0; d < x->rank; d++) shape[d] = d == axis ? K : x->shape[d];
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, x->rank, shape, &ov);
  if (r == MGOPT__K_OK) r = mgopt__k_out_full(k, 1, idt, x->rank, shape, &oi);
  if (r != MGOPT__K_OK || x->numel == 0 || K == 0) return r;
  src = (const uint8_t *)mgopt__k_data(k, x);
  ord = (int64_t *)mgopt__k_scratch(k, len, 8);
  tmp = (int64_t *)mgopt__k_scratch(k, len, 8);
  if (lane == MGOPT__LANE_I64) {
    iv = (int64_t *)mgopt__k_scratch(k, x->numel, 8);
    line_i = (int64_t *)mgopt__k_scratch(k, len, 8);
    if (!iv || !line_i) return MGOPT__K_OOM;
    r = mgopt__k_load(k, x, lane, iv);
  } else {
    fv = (double *)mgopt__k_scratch(k, x->numel, 8);
    line_f = (double *)mgopt__k_scratch(k, len, 8);
    if (!fv || !line_f) return MGOPT__K_OOM;
    r = mgopt__k_load(k, x, MGOPT__LANE_F64, fv);
  }
  if (r != MGOPT__K_OK) return r;
  if (!src || !ord || !tmp) return MGOPT__K_OOM;
  outer = mgopt__kt_prod(x->shape, 0, axis);
  inner = mgopt__kt_prod(x->shape, axis + 1, x->rank);
  for (o = 0; o < outer; o++)
    for (i = 0; i < inner; i++) {
      for (j = 0; j < len; j++) {
        int64_t at = (o * len + j) * inner + i;
        if (fv) line_f[j] = fv[at];
        else line_i[j] = iv[at];
        ord[j] = j;
      }
      mgopt__kt_sort(ord, tmp, len, line_f, line_i, asc);
      for (j = 0; j < K; j++) {
        int64_t to = (o * K + j) * inner + i;
        memcpy((uint8_t *)ov + (size_t)to * es, src + (size_t)((o * len + ord[j]) * inner + i) * es, es);
        mgopt__k_store_i64_at(idt, oi, to, ord[j]);
      }
    }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- range_1d, fill */

MGOPT__PRIVATE int mgopt__kt_range_1d(mgopt__kctx *k) {
  mgopt_tensor *e = mgopt__k_operand(k, "end"), *s = mgopt__k_operand(k, "start"), *st = mgopt__k_operand(k, "step");
  mgopt_dtype dt;
  int64_t n, i;
  void *od;
  int r;
  if (!e || !s || !st || e->numel != 1 || s->numel != 1 || st->numel != 1 || e->rank > 1 || s->rank > 1 || st->rank > 1)
    return mgopt__k_no(k, "end, start and step must be scalars");
  dt = (mgopt_dtype)s->dtype;
  if (e->dtype != s->dtype || st->dtype != s->dtype) return mgopt__k_no(k, "end, start and step differ in dtype");
  if (mgopt__k_lane(dt) == MGOPT__LANE_F32 || mgopt__k_lane(dt) == MGOPT__LANE_F64) {
    double a = mgopt_tensor_get_f64(s, 0), b = mgopt_tensor_get_f64(e, 0), c = mgopt_tensor_get_f64(st, 0), q;
    if (c == 0 || c != c) return mgopt__kt_bad(k, "step", 0, 1, 0);
    q = ceil((b - a) / c);
    if (q != q) return mgopt__k_no(k, "the length is not a number");
    if (q > 9.2e18) return mgopt__k_no(k, "the length is too large");
    n = q > 0 ? (int64_t)q : 0;
    if ((r = mgopt__k_out_full(k, 0, dt, 1, &n, &od)) != MGOPT__K_OK) return r;
    for (i = 0; i < n; i++) mgopt__k_store_f64_at(dt, od, i, a + (double)i * c);
  } else if (mgopt__k_lane(dt) == MGOPT__LANE_I64 && dt != MGOPT_DT_UINT64) {
    int64_t a = mgopt_tensor_get_i64(s, 0), b = mgopt_tensor_get_i64(e, 0), c = mgopt_tensor_get_i64(st, 0), span;
    if (c == 0) return mgopt__kt_bad(k, "step", 0, 1, 0);
    if ((b > 0 && a < INT64_MIN + b) || (b < 0 && a > INT64_MAX + b)) return mgopt__k_no(k, "the span overflows");
    span = b - a;
    if ((span > 0) != (c > 0) || span == 0) n = 0;
    else n = span / c + (span % c != 0);
    if ((r = mgopt__k_out_full(k, 0, dt, 1, &n, &od)) != MGOPT__K_OK) return r;
    for (i = 0; i < n; i++) mgopt__k_store_i64_at(dt, od, i, a + i * c); /* |i * c| < |span|: no overflow */
  } else {
    return mgopt__k_no(k, "range_1d needs numbers");
  }
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__kt_fill(mgopt__kctx *k) {
  mgopt_tensor *sh = mgopt__k_operand(k, "shape"), *v = mgopt__k_operand(k, "value");
  int64_t shape[MGOPT_MAX_RANK], i, *dims;
  mgopt_dtype dt = v ? (mgopt_dtype)v->dtype : MGOPT_DT_FP32;
  size_t es = mgopt__k_esize(dt);
  float zero = 0;
  const uint8_t *val = (const uint8_t *)&zero;
  uint8_t *dst;
  void *od;
  int r;
  if (!sh || sh->rank != 1 || sh->numel > MGOPT_MAX_RANK) return mgopt__k_no(k, "shape must be a vector of at most 32 dims");
  if (v && (v->numel != 1 || !es || dt == MGOPT_DT_STRING)) return mgopt__k_no(k, "value must be one element");
  if (mgopt_op_operand(k->op, "value") && !v) return mgopt__k_no(k, "value is not known");
  if ((r = mgopt__kt_ints(k, sh, &dims)) != MGOPT__K_OK) return r;
  for (i = 0; i < sh->numel; i++) {
    if (dims[i] < 0) return mgopt__kt_bad(k, "dim", dims[i], 1, 0);
    shape[i] = dims[i];
  }
  if (v && !(val = (const uint8_t *)mgopt__k_data(k, v))) return MGOPT__K_OOM;
  r = mgopt__k_out_full(k, 0, dt, (int32_t)sh->numel, shape, &od);
  if (r != MGOPT__K_OK) return r;
  dst = (uint8_t *)od;
  for (i = 0; i < k->out[0]->numel; i++) memcpy(dst + (size_t)i * es, val, es);
  return MGOPT__K_OK;
}
