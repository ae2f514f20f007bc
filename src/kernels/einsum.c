/* src/kernels/einsum.c — the folding kernel of einsum, for any equation (core/infer/reduce.c reads it).

   MIL's einsum takes two operands and the equations "nchw,nwhu->nchu" and
   "chw,whr->chr" (with any letters); mgopt's einsum takes the ONNX Einsum
   language as a whole (1 to 8 operands, repeated labels for diagonals,
   ellipsis broadcasting, implicit output), of which those are a part, so
   the kernel is general: out[o] = sum over the labels not in the output of
   the product of the operands' elements at those labels.

   Numeric contract. fp16, bf16, fp32, fp64: each product and sum in double,
   products formed left to right over the operands, the terms summed in
   row-major order of the summed labels (in the order they first appear in
   the equation), the result rounded once to the dtype (nearest even); an
   empty sum is 0. Integers of 8 bits or more: int64 arithmetic with
   wrap-around, stored by truncation to the dtype. NaN and Inf propagate as
   in IEEE arithmetic. Not folded: bool, sub-byte and other dtypes, more
   than 2^24 terms in all. */
#include "kernels.h"

#define MGOPT__KEI_WORK ((int64_t)1 << 24)

MGOPT__PRIVATE int mgopt__kx_einsum(mgopt__kctx *k) {
  MGOPT__K_NOCONTRACT
  int32_t si = mgopt_op_slot_index(k->op, "values"), n, i, j, r[MGOPT__EINSUM_MAX_OPS], nl = 0, lane, q;
  mgopt_tensor *t[MGOPT__EINSUM_MAX_OPS];
  mgopt__einsum e;
  int64_t size[MGOPT__EINSUM_LABELS], stride[MGOPT__EINSUM_MAX_OPS][MGOPT__EINSUM_LABELS], oshape[MGOPT_MAX_RANK];
  int64_t onumel = 1, inner = 1, work, o, idx[MGOPT__EINSUM_LABELS];
  uint8_t order[MGOPT__EINSUM_LABELS], used[MGOPT__EINSUM_LABELS];
  void *lanes[MGOPT__EINSUM_MAX_OPS], *od;
  size_t len = 0;
  const char *eq = mgopt_op_get_string(k->op, "equation", &len);
  mgopt_dtype dt;
  int rc;
  if (si < 0 || !eq) return MGOPT__K_NO;
  n = k->op->slots[si].n;
  if (n < 1 || n > MGOPT__EINSUM_MAX_OPS) return MGOPT__K_NO;
  for (i = 0; i < n; i++) {
    t[i] = mgopt__k_value(k, k->op->slots[si].uses[i].value);
    if (!t[i] || t[i]->dtype != t[0]->dtype) return MGOPT__K_NO;
    r[i] = t[i]->rank;
  }
  dt = (mgopt_dtype)t[0]->dtype;
  lane = mgopt__k_lane(dt);
  if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64 && lane != MGOPT__LANE_I64) return MGOPT__K_NO;
  if (lane == MGOPT__LANE_F32) lane = MGOPT__LANE_F64;
  if (!mgopt__einsum_parse(eq, len, n, r, &e)) return mgopt__k_no(k, "einsum: bad equation");
  memset(used, 0, sizeof used);
  for (j = 0; j < MGOPT__EINSUM_LABELS; j++) size[j] = -1;
  /* label sizes; a broadcast dim (ellipsis, size 1) takes the others' size */
  for (i = 0; i < n; i++)
    for (j = 0; j < r[i]; j++) {
      int l = e.lab[i][j];
      int64_t s = t[i]->shape[j];
      if (l >= 52 && s == 1) continue;
      if (size[l] >= 0 && size[l] != s) return mgopt__k_no(k, "einsum: label sizes differ");
      size[l] = s;
    }
  for (i = 0; i < n; i++)
    for (j = 0; j < r[i]; j++)
      if (size[e.lab[i][j]] < 0) size[e.lab[i][j]] = 1;
  /* the labels in loop order: the output's, then the summed ones as met */
  for (j = 0; j < e.out_rank; j++) {
    order[nl++] = e.out[j];
    used[e.out[j]] = 1;
    oshape[j] = size[e.out[j]];
    if (!mgopt__mul_i64(onumel, oshape[j], &onumel)) return MGOPT__K_NO;
  }
  for (i = 0; i < n; i++)
    for (j = 0; j < r[i]; j++)
      if (!used[e.lab[i][j]]) {
        used[e.lab[i][j]] = 1;
        order[nl++] = e.lab[i][j];
        if (!mgopt__mul_i64(inner, size[e.lab[i][j]], &inner)) return MGOPT__K_NO;
      }
  if (!mgopt__mul_i64(onumel, inner, &work) || !mgopt__mul_i64(work, n, &work) || work > MGOPT__KEI_WORK)
    return mgopt__k_no(k, "einsum: more than 2^24 terms");
  /* element strides per label (summed over repeated labels: a diagonal; 0 where a dim broadcasts) */
  for (i = 0; i < n; i++) {
    int64_t st[MGOPT_MAX_RANK];
    for (j = 0; j < MGOPT__EINSUM_LABELS; j++) stride[i][j] = 0;
    mgopt__k_strides(r[i], t[i]->shape, st);
    for (j = 0; j < r[i]; j++)
      if (!(e.lab[i][j] >= 52 && t[i]->shape[j] == 1)) stride[i][e.lab[i][j]] += st[j];
  }
  rc = mgopt__k_out_full(k, 0, dt, e.out_rank, oshape, &od);
  if (rc != MGOPT__K_OK) return rc;
  if (onumel == 0) return MGOPT__K_OK;
  for (i = 0; i < n; i++) {
    lanes[i] = mgopt__k_scratch(k, t[i]->numel ? t[i]->numel : 1, mgopt__k_lane_size(lane));
    if (!lanes[i]) return MGOPT__K_OOM;
    rc = mgopt__k_load(k, t[i], lane, lanes[i]);
    if (rc != MGOPT__K_OK) return rc;
  }
  {
    double *rd = lane == MGOPT__LANE_F64 ? (double *)mgopt__k_scratch(k, onumel, sizeof(double)) : NULL;
    int64_t *ri = lane == MGOPT__LANE_I64 ? (int64_t *)mgopt__k_scratch(k, onumel, sizeof(int64_t)) : NULL;
    if (!rd && !ri) return MGOPT__K_OOM;
    for (j = 0; j < nl; j++) idx[j] = 0;
    for (o = 0; o < onumel; o++) {
      double accd = 0.0;
      int64_t acci = 0, m;
      for (j = e.out_rank; j < nl; j++) idx[j] = 0;
      for (m = 0; m < inner; m++) {
        double pd = 1.0;
        uint64_t pi = 1;
        for (i = 0; i < n; i++) {
          int64_t off = 0;
          for (q = 0; q < nl; q++) off += idx[q] * stride[i][order[q]];
          if (rd) pd = i == 0 ? ((const double *)lanes[i])[off] : pd * ((const double *)lanes[i])[off];
          else pi *= (uint64_t)((const int64_t *)lanes[i])[off];
        }
        if (rd) accd = m == 0 ? pd : accd + pd;
        else acci = (int64_t)((uint64_t)acci + pi);
        /* next summed position */
        for (q = nl - 1; q >= e.out_rank; q--) {
          if (++idx[q] < size[order[q]]) break;
          idx[q] = 0;
        }
      }
      if (rd) rd[o] = inner ? accd : 0.0;
      else ri[o] = acci;
      /* next output position */
      for (q = e.out_rank - 1; q >= 0; q--) {
        if (++idx[q] < size[order[q]]) break;
        idx[q] = 0;
      }
    }
    if (rd) mgopt__k_store(MGOPT__LANE_F64, rd, onumel, dt, od);
    else mgopt__k_store(MGOPT__LANE_I64, ri, onumel, dt, od);
  }
  return MGOPT__K_OK;
}
