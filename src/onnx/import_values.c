/* src/onnx/import_values.c — ONNX types and tensors as the IR's: value types, declared-type refinement, tensor data, type attributes. */
#include "convert_internal.h"

/* An ONNX type as the IR's: a tensor type (rank -1 without a shape, a dim
   param as a symbol), or any other kind kept as its bytes. */
MGOPT__PRIVATE mgopt_status mgopt__imp_type(mgopt__imp *I, const mgopt_onnx_type *ot, mgopt_type *out) {
  mgopt_type t;
  memset(&t, 0, sizeof t);
  t.rank = -1;
  if (!ot) {
    *out = t;
    return MGOPT_OK;
  }
  if (!ot->tensor_type) {
    if (ot->other.len) {
      t.kind = MGOPT_TYPE_OTHER;
      t.other = (const uint8_t *)ot->other.ptr;
      t.other_len = ot->other.len;
    }
    *out = t;
    return MGOPT_OK;
  }
  t.dtype = (uint8_t)mgopt_onnx_dtype(ot->tensor_type->elem_type);
  if (t.dtype == MGOPT_DT_UNKNOWN && ot->tensor_type->elem_type != 0) {
    /* an element type the IR has no dtype for (FLOAT4E2M1, a newer code):
       the type is kept as its bytes, so it is written back as it came */
    mgopt_str bytes;
    mgopt_status s = mgopt__imp_type_bytes(I, ot, &bytes);
    if (s) return s;
    if (bytes.len) {
      t.kind = MGOPT_TYPE_OTHER;
      t.other = (const uint8_t *)bytes.ptr;
      t.other_len = bytes.len;
    }
    *out = t;
    return MGOPT_OK;
  }
  if (ot->tensor_type->shape) {
    const mgopt_onnx_shape *sh = ot->tensor_type->shape;
    int64_t i;
    if (sh->ndims > MGOPT_MAX_RANK)
      return mgopt__imp_fail(I, MGOPT_ERR_LIMIT, "a type has %lld dims, above %d", (long long)sh->ndims,
                             MGOPT_MAX_RANK);
    if (mgopt_type_make(I->p, &t, (mgopt_dtype)t.dtype, (int32_t)sh->ndims, NULL)) return MGOPT_ERR_NOMEM;
    for (i = 0; i < sh->ndims; i++) {
      const mgopt_onnx_dim *od = &sh->dims[i];
      if ((od->has & MGOPT_ONNX_DIM_HAS_VALUE) && od->value >= 0) t.dims[i] = mgopt_dim_static(od->value);
      else if ((od->has & MGOPT_ONNX_DIM_HAS_PARAM) && od->param.len) {
        t.dims[i].v = -1;
        t.dims[i].sym = mgopt__imp_intern_copy(I, od->param);
        if (!t.dims[i].sym) return MGOPT_ERR_NOMEM;
      }
    }
  }
  *out = t;
  return MGOPT_OK;
}

/* Merges the declared ONNX type into v's inferred type: declared info fills
   what inference left unknown and never contradicts it. */
MGOPT__PRIVATE mgopt_status mgopt__imp_refine(mgopt__imp *I, mgopt_value *v, const mgopt_onnx_type *ot) {
  mgopt_type dt;
  mgopt_type *t = &v->type;
  int32_t i;
  mgopt_status s;
  if (!ot) return MGOPT_OK;
  if ((s = mgopt__imp_type(I, ot, &dt)) != MGOPT_OK) return s;
  if (dt.kind == MGOPT_TYPE_OTHER) {
    /* a sequence or map: only an opaque op (or a graph input) can make one;
       a canonical op makes tensors whatever its output claims */
    if (t->kind == MGOPT_TYPE_TENSOR && t->dtype == MGOPT_DT_UNKNOWN && t->rank < 0 &&
        (!v->def || v->def->kind == MGOPT_OP_OPAQUE))
      *t = dt;
    return MGOPT_OK;
  }
  if (t->kind != MGOPT_TYPE_TENSOR) return MGOPT_OK;
  if (t->dtype == MGOPT_DT_UNKNOWN) t->dtype = dt.dtype;
  if (t->rank < 0) {
    if (dt.rank >= 0) {
      uint8_t known = t->dtype; /* inference's dtype wins over the declared one */
      *t = dt;
      if (known != MGOPT_DT_UNKNOWN) t->dtype = known;
    }
    return MGOPT_OK;
  }
  if (dt.rank != t->rank) return MGOPT_OK;
  for (i = 0; i < t->rank; i++) {
    if (mgopt_dim_is_static(t->dims[i])) continue;
    if (mgopt_dim_is_static(dt.dims[i]) || (!t->dims[i].sym && dt.dims[i].sym)) t->dims[i] = dt.dims[i];
  }
  return MGOPT_OK;
}

/* ONNX tensor -> mgopt tensor; raw_data is borrowed where its little-endian
   bytes are the host's. NULL with d set on error. */
MGOPT__PRIVATE mgopt_tensor *mgopt__imp_tensor(mgopt__imp *I, const mgopt_onnx_tensor *ot) {
  mgopt_dtype dt = mgopt_onnx_dtype(ot->data_type);
  mgopt_tensor *t;
  int64_t i, n;
  if (dt == MGOPT_DT_UNKNOWN) {
    mgopt__imp_fail(I, MGOPT_ERR_UNSUPPORTED, "tensor '%.*s' has data type %d, which mgopt cannot hold",
                    (int)(ot->name.len > 80 ? 80 : ot->name.len), ot->name.ptr ? ot->name.ptr : "", (int)ot->data_type);
    return NULL;
  }
  if (ot->ndims > MGOPT_MAX_RANK || ot->numel < 0) {
    mgopt__imp_fail(I, MGOPT_ERR_LIMIT, "tensor with %lld dims, above %d", (long long)ot->ndims, MGOPT_MAX_RANK);
    return NULL;
  }
  if (ot->data_location == MGOPT_ONNX_LOC_EXTERNAL) {
    mgopt__imp_fail(I, MGOPT_ERR_UNSUPPORTED, "tensor '%.*s' is stored externally and was not loaded",
                    (int)(ot->name.len > 80 ? 80 : ot->name.len), ot->name.ptr ? ot->name.ptr : "");
    return NULL;
  }
  if (dt != MGOPT_DT_STRING && (ot->has & MGOPT_ONNX_TENSOR_HAS_RAW_DATA)) {
    int64_t nb = mgopt_onnx_raw_nbytes(ot->data_type, ot->numel);
    if (nb < 0 || (uint64_t)nb != ot->raw_data.len) {
      mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "tensor '%.*s': raw_data holds %llu bytes, its dims need %lld",
                      (int)(ot->name.len > 80 ? 80 : ot->name.len), ot->name.ptr ? ot->name.ptr : "",
                      (unsigned long long)ot->raw_data.len, (long long)nb);
      return NULL;
    }
    if ((int64_t)mgopt_dtype_nbytes(dt, ot->numel) == nb) {
      size_t unit = mgopt__dtype_swap_unit(dt);
      if (unit == 1 || mgopt__host_le()) {
        t = mgopt_tensor_new_borrowed(I->p, dt, (int32_t)ot->ndims, ot->dims,
                                      ot->raw_data.ptr ? ot->raw_data.ptr : "", (size_t)nb);
      } else { /* a big-endian host: an owned copy in host order */
        t = mgopt__tensor_new_data(I->p, dt, (int32_t)ot->ndims, ot->dims, 0);
        if (!t) {
          mgopt__oom(I->p);
          mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory");
          return NULL;
        }
        mgopt__le_copy(t->data, ot->raw_data.ptr, (size_t)nb, unit);
      }
      if (t) {
        t->ext_location = ot->ext_location;
        t->ext_offset = ot->ext_offset;
      }
      return t;
    }
    /* the layouts differ (sub-byte types): convert element by element below */
  }
  t = mgopt_tensor_new(I->p, dt, (int32_t)ot->ndims, ot->dims);
  if (!t) {
    mgopt__oom(I->p);
    mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  n = t->numel;
  if (dt == MGOPT_DT_STRING) {
    mgopt_str *s = (mgopt_str *)t->data;
    if (ot->nstring_data != n) {
      mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "string tensor with %lld strings for %lld elements",
                      (long long)ot->nstring_data, (long long)n);
      return NULL;
    }
    for (i = 0; i < n; i++) s[i] = ot->string_data[i];
    return t;
  }
  switch (ot->data_type) {
    case MGOPT_ONNX_DT_FLOAT:
    case MGOPT_ONNX_DT_COMPLEX64: { /* complex: real and imaginary parts, two floats per element */
      int64_t per = ot->data_type == MGOPT_ONNX_DT_FLOAT ? 1 : 2;
      if (ot->nfloat_data != n * per) goto count;
      if (n) memcpy(t->data, ot->float_data, (size_t)(n * per) * 4);
      break;
    }
    case MGOPT_ONNX_DT_DOUBLE:
    case MGOPT_ONNX_DT_COMPLEX128: {
      int64_t per = ot->data_type == MGOPT_ONNX_DT_DOUBLE ? 1 : 2;
      if (ot->ndouble_data != n * per) goto count;
      if (n) memcpy(t->data, ot->double_data, (size_t)(n * per) * 8);
      break;
    }
    case MGOPT_ONNX_DT_INT64:
      if (ot->nint64_data != n) goto count;
      if (n) memcpy(t->data, ot->int64_data, (size_t)n * 8);
      break;
    case MGOPT_ONNX_DT_UINT32:
    case MGOPT_ONNX_DT_UINT64:
      if (ot->nuint64_data != n) goto count;
      for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, (int64_t)ot->uint64_data[i]);
      break;
    case MGOPT_ONNX_DT_FLOAT16:
    case MGOPT_ONNX_DT_BFLOAT16:
      if (ot->nint32_data != n) goto count;
      for (i = 0; i < n; i++) {
        uint16_t h = (uint16_t)ot->int32_data[i];
        memcpy((char *)t->data + 2 * i, &h, 2);
      }
      break;
    case MGOPT_ONNX_DT_INT32:
    case MGOPT_ONNX_DT_INT16:
    case MGOPT_ONNX_DT_INT8:
    case MGOPT_ONNX_DT_UINT16:
    case MGOPT_ONNX_DT_UINT8:
    case MGOPT_ONNX_DT_BOOL:
      if (ot->nint32_data != n) goto count;
      for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, ot->int32_data[i]);
      break;
    case MGOPT_ONNX_DT_UINT4:
    case MGOPT_ONNX_DT_INT4:
      if (ot->has & MGOPT_ONNX_TENSOR_HAS_RAW_DATA) {
        const uint8_t *r = (const uint8_t *)ot->raw_data.ptr;
        for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, (r[i >> 1] >> ((i & 1) * 4)) & 15);
      } else {
        if (ot->nint32_data != (n + 1) / 2) goto count;
        for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, (ot->int32_data[i >> 1] >> ((i & 1) * 4)) & 15);
      }
      break;
    default:
      if (ot->nint32_data != n) goto count;
      for (i = 0; i < n; i++) ((uint8_t *)t->data)[i] = (uint8_t)ot->int32_data[i];
      break;
  }
  return t;
count:
  mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "tensor '%.*s': the number of values does not match its dims",
                  (int)(ot->name.len > 80 ? 80 : ot->name.len), ot->name.ptr ? ot->name.ptr : "");
  return NULL;
}

/* Appends a protobuf varint. */
static void mgopt__imp_varint(mgopt_buf *b, uint64_t v) {
  char c[10];
  size_t n = 0;
  do {
    c[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  mgopt__buf_putn(b, c, n);
}

/* The encoded TypeProto of t: its kept bytes, or a tensor type encoded here
   (elem_type, shape dims as value or param, denotation). */
MGOPT__PRIVATE mgopt_status mgopt__imp_type_bytes(mgopt__imp *I, const mgopt_onnx_type *t, mgopt_str *out) {
  mgopt_buf tt, sh, ty;
  int64_t i;
  if (t->other.len) {
    *out = t->other;
    return MGOPT_OK;
  }
  memset(&tt, 0, sizeof tt);
  memset(&sh, 0, sizeof sh);
  memset(&ty, 0, sizeof ty);
  tt.alloc = sh.alloc = ty.alloc = &I->p->alloc;
  if (t->tensor_type) {
    const mgopt_onnx_tensor_type *x = t->tensor_type;
    if (x->has & MGOPT_ONNX_TTYPE_HAS_ELEM_TYPE) {
      mgopt__buf_putc(&tt, 0x08);
      mgopt__imp_varint(&tt, (uint64_t)(uint32_t)x->elem_type);
    }
    if (x->shape) {
      for (i = 0; i < x->shape->ndims; i++) {
        const mgopt_onnx_dim *dm = &x->shape->dims[i];
        mgopt_buf d1;
        memset(&d1, 0, sizeof d1);
        d1.alloc = &I->p->alloc;
        if (dm->has & MGOPT_ONNX_DIM_HAS_VALUE) {
          mgopt__buf_putc(&d1, 0x08);
          mgopt__imp_varint(&d1, (uint64_t)dm->value);
        } else if (dm->has & MGOPT_ONNX_DIM_HAS_PARAM) {
          mgopt__buf_putc(&d1, 0x12);
          mgopt__imp_varint(&d1, dm->param.len);
          mgopt__buf_putn(&d1, dm->param.ptr, dm->param.len);
        }
        mgopt__buf_putc(&sh, 0x0a);
        mgopt__imp_varint(&sh, d1.len);
        if (d1.len) mgopt__buf_putn(&sh, d1.data, d1.len);
        if (d1.oom) sh.oom = 1;
        mgopt_buf_free(&d1);
      }
      mgopt__buf_putc(&tt, 0x12);
      mgopt__imp_varint(&tt, sh.len);
      if (sh.len) mgopt__buf_putn(&tt, sh.data, sh.len);
    }
    mgopt__buf_putc(&ty, 0x0a);
    mgopt__imp_varint(&ty, tt.len);
    if (tt.len) mgopt__buf_putn(&ty, tt.data, tt.len);
  }
  if (t->denotation.len) {
    mgopt__buf_putc(&ty, 0x32);
    mgopt__imp_varint(&ty, t->denotation.len);
    mgopt__buf_putn(&ty, t->denotation.ptr, t->denotation.len);
  }
  out->len = ty.len;
  out->ptr = ty.len ? (const char *)mgopt__dup(I->p, ty.data, ty.len) : "";
  {
    int oom = tt.oom || sh.oom || ty.oom || !out->ptr;
    mgopt_buf_free(&tt);
    mgopt_buf_free(&sh);
    mgopt_buf_free(&ty);
    return oom ? mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory") : MGOPT_OK;
  }
}
