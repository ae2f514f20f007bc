/* src/onnx/map_sparse.c — ONNX export of pruned and fp16-stored weights: constexpr_sparse_to_dense as a sparse or dense initializer, constexpr_cast as an fp16 initializer and Cast. */
#include "convert_internal.h"

/* ---------------------------------------------------------------- constexpr_sparse_to_dense

   Written as one initializer named like the op's output (every ONNX opset):
   a sparse_initializer (values and int64 linear indices, IR version >= 6)
   when it is smaller than the dense tensor, i.e. when nnz * (element size
   + 8) < numel * element size (past 2/3 sparsity for fp32, 4/5 for fp16),
   else a dense initializer. ONNX Runtime densifies sparse initializers at
   load: the file shrinks, the memory at run time does not. Inside
   subgraphs, or when the output's name is taken, the dense form is written.
   The operands (nonzero_data, mask, shape) are not written. */

/* The dense shape and mask bytes of op, or 0 when it is not one the exporter writes. */
static int mgopt__ms_form(const mgopt_op *op, mgopt_tensor **nz, const uint8_t **mask, int32_t *rank,
                          int64_t *shape) {
  mgopt_tensor *m, *s;
  mgopt_value *sv = mgopt_op_operand(op, "shape");
  int64_t n = 1, i, set = 0;
  int32_t d;
  *nz = mgopt_value_const(mgopt_op_operand(op, "nonzero_data"));
  m = mgopt_value_const(mgopt_op_operand(op, "mask"));
  s = sv ? mgopt_value_const(sv) : NULL;
  if (!*nz || !m || (sv && !s) || (*nz)->rank != 1 || !mgopt_dtype_nbytes((mgopt_dtype)(*nz)->dtype, 1) ||
      mgopt_dtype_bits((mgopt_dtype)(*nz)->dtype) < 8)
    return 0;
  if (s) {
    if (s->rank != 1 || s->numel > MGOPT_MAX_RANK || m->dtype != MGOPT_DT_UINT8 || m->rank != 1) return 0;
    *rank = (int32_t)s->numel;
    for (d = 0; d < *rank; d++) {
      shape[d] = mgopt_tensor_get_i64(s, d);
      if (shape[d] < 0) return 0;
      n *= shape[d];
    }
    if ((n + 7) / 8 != m->numel) return 0;
  } else {
    if (m->dtype != MGOPT_DT_UINT1) return 0;
    *rank = m->rank;
    for (d = 0; d < *rank; d++) shape[d] = m->shape[d];
    n = m->numel;
  }
  *mask = (const uint8_t *)m->data;
  for (i = 0; i < n; i++) set += ((*mask)[i >> 3] >> (i & 7)) & 1;
  return set == (*nz)->numel;
}

static const char *mgopt__exw_sparse(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_tensor *nz;
  const uint8_t *mask;
  int32_t rank;
  int64_t shape[MGOPT_MAX_RANK];
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt__ms_form(op, &nz, &mask, &rank, shape) ? NULL : "a mask or nonzero_data that does not agree";
}

/* 1 when a sparse_initializer (IR version >= 6) is smaller than the dense tensor. */
static int mgopt__ms_sparse_pays(const mgopt__exp *E, int64_t nnz, int64_t n, size_t es) {
  const mgopt_onnx_model *orig = (const mgopt_onnx_model *)E->p->onnx_meta;
  if (orig && orig->ir_version > 0 && orig->ir_version < 6) return 0;
  return (double)nnz * (double)(es + 8) < (double)n * (double)es;
}

/* The sparse_initializer `name`: nz's values at the set bits of mask (dense t's shape). */
static mgopt_status mgopt__ms_write_sparse(mgopt__exp *E, const mgopt_tensor *t, mgopt_tensor *nz, const uint8_t *mask,
                                           const char *name) {
  int64_t d = nz->numel, i, j = 0;
  mgopt_tensor *ix = mgopt_tensor_new(E->p, MGOPT_DT_INT64, 1, &d);
  mgopt_onnx_sparse_tensor *st = (mgopt_onnx_sparse_tensor *)mgopt__exv_push(E, &E->g->sparse, sizeof *st);
  int64_t *iv, *dims;
  int32_t k;
  if (!ix || !st || !(iv = (int64_t *)mgopt_tensor_data_mut(E->p, ix))) return mgopt__exp_nomem(E);
  for (i = 0; i < t->numel; i++)
    if ((mask[i >> 3] >> (i & 7)) & 1) iv[j++] = i;
  st->values = (mgopt_onnx_tensor *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_tensor), 8);
  st->indices = (mgopt_onnx_tensor *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_tensor), 8);
  dims = (int64_t *)mgopt_program_alloc(E->p, sizeof(int64_t) * (size_t)(t->rank ? t->rank : 1), 8);
  if (!st->values || !st->indices || !dims || mgopt__exp_tensor(E, nz, name, st->values) ||
      mgopt__exp_tensor(E, ix, "", st->indices))
    return mgopt__exp_nomem(E);
  for (k = 0; k < t->rank; k++) dims[k] = t->shape[k];
  st->dims = dims;
  st->ndims = t->rank;
  return MGOPT_OK;
}

static mgopt_status mgopt__exp_sparse(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_tensor *nz, *t;
  const uint8_t *mask, *src;
  uint8_t *dst;
  int32_t rank;
  int64_t shape[MGOPT_MAX_RANK], i, j = 0;
  size_t es;
  const char *name = mgopt__exp_vname(op->outs[0]);
  mgopt_onnx_tensor *ot;
  int r;
  MGOPT__UNUSED(m);
  mgopt__ms_form(op, &nz, &mask, &rank, shape);
  es = (size_t)mgopt_dtype_nbytes((mgopt_dtype)nz->dtype, 1);
  t = mgopt_tensor_new(E->p, (mgopt_dtype)nz->dtype, rank, shape);
  src = (const uint8_t *)mgopt_tensor_data(E->p, nz);
  if (!t || !src || !(dst = (uint8_t *)mgopt_tensor_data_mut(E->p, t))) return mgopt__exp_nomem(E);
  memset(dst, 0, t->nbytes);
  for (i = 0; i < t->numel; i++)
    if ((mask[i >> 3] >> (i & 7)) & 1) memcpy(dst + (size_t)i * es, src + (size_t)j++ * es, es);
  r = E->g->inits_ok ? mgopt__exp_claim(E, name) : 0;
  if (r < 0) return mgopt__exp_nomem(E);
  if (E->g->is_main && mgopt__ms_sparse_pays(E, nz->numel, t->numel, es)) {
    /* under the output's name when free, else under a fresh one read through an Identity */
    const char *in = r ? name : mgopt__exp_fresh(E, name);
    mgopt_onnx_node *n;
    if (!in || mgopt__ms_write_sparse(E, t, nz, mask, in)) return mgopt__exp_nomem(E);
    if (r) return MGOPT_OK;
    n = mgopt__exp_simple(E, op, "Identity", &in, 1);
    return n ? mgopt__exp_done(E, n) : mgopt__exp_nomem(E);
  }
  if (r) { /* the output's name is free: the initializer takes it */
    ot = (mgopt_onnx_tensor *)mgopt__exv_push(E, &E->g->inits, sizeof(mgopt_onnx_tensor));
    if (!ot || mgopt__exp_tensor(E, t, name, ot)) return mgopt__exp_nomem(E);
    return MGOPT_OK;
  } else {
    const char *in = mgopt__exp_const(E, name, t);
    mgopt_onnx_node *n = in ? mgopt__exp_simple(E, op, "Identity", &in, 1) : NULL;
    return n ? mgopt__exp_done(E, n) : mgopt__exp_nomem(E);
  }
}

/* ---------------------------------------------------------------- constexpr_cast

   fp16 source written as its own fp16 initializer, widened by Cast(to=FLOAT)
   (every opset): the file holds 2 bytes per weight element. */

static const char *mgopt__exw_ccast(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "source_val");
  size_t len = 0;
  const char *s = mgopt_op_get_string(op, "output_dtype", &len);
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR || x->type.dtype != MGOPT_DT_FP16) return "a source that is not fp16";
  if (!s || mgopt_dtype_from_name(s, len) != MGOPT_DT_FP32) return "an output dtype other than fp32";
  return NULL;
}

static mgopt_status mgopt__exp_ccast(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *in = mgopt__exp_in(op, "source_val");
  mgopt_onnx_node *n;
  MGOPT__UNUSED(m);
  n = mgopt__exp_simple(E, op, "Cast", &in, 1);
  if (!n || !mgopt__exp_aint(E, n, "to", mgopt__exp_dtype(MGOPT_DT_FP32))) return mgopt__exp_nomem(E);
  return mgopt__exp_done(E, n);
}

static const mgopt__onnx_map mgopt__onnx_sparse[] = {
    /* export only */
    {"Identity", 1, 0, MGOPT_OP_constexpr_sparse_to_dense, NULL, mgopt__exp_sparse, {NULL, NULL, NULL},
     mgopt__exw_sparse},
    {"Cast", 1, 0, MGOPT_OP_constexpr_cast, NULL, mgopt__exp_ccast, {NULL, NULL, NULL}, mgopt__exw_ccast},
};

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_sparse(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_sparse);
  return mgopt__onnx_sparse;
}
