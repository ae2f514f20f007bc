/* src/onnx/import.c — ONNX model tree to the canonical IR: exact op mappings, the rest opaque. */
#include "../internal.h"

/* How it works. The graph becomes function `main`: graph inputs without an
   initializer are its arguments; initializers and Constant nodes become
   `const` ops (their raw data stays borrowed); each node becomes canonical
   ops when the semantics are exactly equal for this opset, types and
   attributes included, and otherwise an opaque op `onnx::OpType` (or
   `domain::OpType`) whose operand slots in0, in1, ... are the node's inputs
   (an omitted optional input is an absent slot), whose attributes are
   kept, and whose GRAPH attributes become nested blocks named after the
   attribute. Output types come from type inference, refined by value_info.
   Subgraphs see the values of enclosing graphs. The model tree stays in the
   program (program->onnx_meta) so export can keep everything the IR does not
   hold: opset imports, metadata, local functions, doc strings. */

#define MGOPT__IMP_MAX_DEPTH 64
#define MGOPT__IMP_MAX_RANK 32 /* types of opaque ops: higher ranks stay unknown */

/* ---------------------------------------------------------------- scoped name map */

typedef struct mgopt__imap_undo {
  size_t slot;
  const void *key;
  void *val;
} mgopt__imap_undo;

typedef struct mgopt__imap {
  const mgopt_allocator *al;
  const void **keys;
  void **vals;
  size_t cap, count;
  mgopt__imap_undo *undo;
  int64_t nundo, undo_cap;
  int oom;
} mgopt__imap;

static size_t mgopt__imap_h(const void *k, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)k;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

static void mgopt__imap_free(mgopt__imap *m) {
  if (m->keys) mgopt__heap_free(m->al, (void *)m->keys, m->cap * sizeof(void *));
  if (m->vals) mgopt__heap_free(m->al, m->vals, m->cap * sizeof(void *));
  if (m->undo) mgopt__heap_free(m->al, m->undo, (size_t)m->undo_cap * sizeof(mgopt__imap_undo));
  memset(m, 0, sizeof *m);
}

static int mgopt__imap_rehash(mgopt__imap *m, size_t ncap) {
  const void **nk = (const void **)mgopt__heap_realloc(m->al, NULL, 0, ncap * sizeof(void *));
  void **nv = (void **)mgopt__heap_realloc(m->al, NULL, 0, ncap * sizeof(void *));
  size_t i;
  int64_t u;
  if (!nk || !nv) {
    if (nk) mgopt__heap_free(m->al, (void *)nk, ncap * sizeof(void *));
    if (nv) mgopt__heap_free(m->al, nv, ncap * sizeof(void *));
    m->oom = 1;
    return 0;
  }
  memset((void *)nk, 0, ncap * sizeof(void *));
  memset(nv, 0, ncap * sizeof(void *));
  for (i = 0; i < m->cap; i++)
    if (m->keys[i]) {
      size_t j = mgopt__imap_h(m->keys[i], ncap);
      while (nk[j]) j = (j + 1) & (ncap - 1);
      nk[j] = m->keys[i];
      nv[j] = m->vals[i];
    }
  /* undo records hold slots: re-point them */
  for (u = 0; u < m->nundo; u++) {
    size_t j = mgopt__imap_h(m->undo[u].key, ncap);
    while (nk[j] != m->undo[u].key) j = (j + 1) & (ncap - 1);
    m->undo[u].slot = j;
  }
  if (m->keys) mgopt__heap_free(m->al, (void *)m->keys, m->cap * sizeof(void *));
  if (m->vals) mgopt__heap_free(m->al, m->vals, m->cap * sizeof(void *));
  m->keys = nk;
  m->vals = nv;
  m->cap = ncap;
  return 1;
}

static void *mgopt__imap_get(const mgopt__imap *m, const void *k) {
  size_t j;
  if (!m->cap || !k) return NULL;
  j = mgopt__imap_h(k, m->cap);
  while (m->keys[j]) {
    if (m->keys[j] == k) return m->vals[j];
    j = (j + 1) & (m->cap - 1);
  }
  return NULL;
}

/* Sets k -> v, remembering the previous value so a scope can be popped. */
static void mgopt__imap_put(mgopt__imap *m, const void *k, void *v) {
  size_t j;
  if (m->oom || !k) return;
  if ((m->count + 1) * 2 > m->cap && !mgopt__imap_rehash(m, m->cap ? m->cap * 2 : 256)) return;
  j = mgopt__imap_h(k, m->cap);
  while (m->keys[j] && m->keys[j] != k) j = (j + 1) & (m->cap - 1);
  if (m->nundo == m->undo_cap) {
    void *arr = m->undo;
    if (!mgopt__grow(m->al, &arr, &m->undo_cap, m->nundo + 1, sizeof(mgopt__imap_undo))) {
      m->oom = 1;
      return;
    }
    m->undo = (mgopt__imap_undo *)arr;
  }
  m->undo[m->nundo].slot = j;
  m->undo[m->nundo].key = k;
  m->undo[m->nundo].val = m->keys[j] ? m->vals[j] : NULL;
  m->nundo++;
  if (!m->keys[j]) m->count++;
  m->keys[j] = k;
  m->vals[j] = v;
}

/* Restores the map to what it was when nundo was `mark` (entries stay, set to their old value). */
static void mgopt__imap_pop(mgopt__imap *m, int64_t mark) {
  while (m->nundo > mark) {
    mgopt__imap_undo *u = &m->undo[--m->nundo];
    m->vals[u->slot] = u->val;
  }
}

/* ---------------------------------------------------------------- importer state */

typedef struct mgopt__imp {
  mgopt_program *p;
  mgopt_onnx_model *m;
  mgopt_diag *d;
  mgopt__imap values;  /* interned name -> mgopt_value */
  mgopt__imap vinfo;   /* interned name -> mgopt_onnx_type */
  int64_t opset;       /* default-domain opset version */
  int depth;
  mgopt_block *b;      /* block being filled */
  const mgopt_onnx_node *node;
  int infer_failed;    /* a mapped op's types did not infer (the node then stays opaque) */
} mgopt__imp;

static mgopt_status mgopt__imp_fail(mgopt__imp *I, mgopt_status s, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static mgopt_status mgopt__imp_fail(mgopt__imp *I, mgopt_status s, const char *fmt, ...) {
  va_list ap;
  if (!I->d) return s;
  I->d->status = s;
  I->d->op[0] = 0;
  if (I->node && I->node->name.len)
    snprintf(I->d->op, sizeof I->d->op, "%.*s", (int)(I->node->name.len > 90 ? 90 : I->node->name.len),
             I->node->name.ptr);
  va_start(ap, fmt);
  vsnprintf(I->d->msg, sizeof I->d->msg, fmt, ap);
  va_end(ap);
  return s;
}

/* A value or node name of the tree as the program's interned pointer. The
   tree's names are interned in the program already (see onnx_api.h; trees
   from mgopt_onnx_export too), so the pointer is taken as it is: hashing every name again on every lookup was a sixth of the
   import. A name that breaks the rule cannot match (it is then reported as
   undefined), never a different name. */
static const char *mgopt__imp_intern(mgopt__imp *I, mgopt_str s) {
  if (s.ptr && s.len) return s.ptr;
  return mgopt_program_intern(I->p, "", 0);
}

/* Interned for certain (attribute names and dim params: few, and a tree built
   by mgopt_onnx_export spells them with literals). */
static const char *mgopt__imp_intern_copy(mgopt__imp *I, mgopt_str s) {
  return mgopt_program_intern(I->p, s.ptr ? s.ptr : "", s.len);
}

static int mgopt__imp_streq(mgopt_str s, const char *c) {
  size_t n = strlen(c);
  return s.len == n && (n == 0 || memcmp(s.ptr, c, n) == 0);
}

/* ---------------------------------------------------------------- types and tensors */

static mgopt_status mgopt__imp_type(mgopt__imp *I, const mgopt_onnx_type *ot, mgopt_type *out) {
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
  if (ot->tensor_type->shape) {
    const mgopt_onnx_shape *sh = ot->tensor_type->shape;
    int64_t i;
    if (sh->ndims > 4096) return mgopt__imp_fail(I, MGOPT_ERR_LIMIT, "a type has %lld dims", (long long)sh->ndims);
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
static mgopt_status mgopt__imp_refine(mgopt__imp *I, mgopt_value *v, const mgopt_onnx_type *ot) {
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

/* ONNX tensor -> mgopt tensor; raw_data is borrowed. NULL with d set on error. */
static mgopt_tensor *mgopt__imp_tensor(mgopt__imp *I, const mgopt_onnx_tensor *ot) {
  mgopt_dtype dt = mgopt_onnx_dtype(ot->data_type);
  mgopt_tensor *t;
  int64_t i, n;
  if (dt == MGOPT_DT_UNKNOWN) {
    mgopt__imp_fail(I, MGOPT_ERR_UNSUPPORTED, "tensor '%.*s' has data type %d, which mgopt cannot hold",
                    (int)(ot->name.len > 80 ? 80 : ot->name.len), ot->name.ptr ? ot->name.ptr : "", (int)ot->data_type);
    return NULL;
  }
  if (ot->ndims > 4096 || ot->numel < 0) {
    mgopt__imp_fail(I, MGOPT_ERR_LIMIT, "tensor with %lld dims", (long long)ot->ndims);
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
      t = mgopt_tensor_new_borrowed(I->p, dt, (int32_t)ot->ndims, ot->dims, ot->raw_data.ptr ? ot->raw_data.ptr : "",
                                    (size_t)nb);
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

/* ---------------------------------------------------------------- building blocks */

static const mgopt_onnx_attribute *mgopt__imp_attr(const mgopt_onnx_node *n, const char *name) {
  int64_t i;
  for (i = 0; i < n->nattributes; i++)
    if (mgopt__imp_streq(n->attributes[i].name, name)) return &n->attributes[i];
  return NULL;
}

static int64_t mgopt__imp_aint(const mgopt_onnx_node *n, const char *name, int64_t dflt) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(n, name);
  return a && a->type == MGOPT_ONNX_ATTR_INT ? a->i : dflt;
}

static double mgopt__imp_afloat(const mgopt_onnx_node *n, const char *name, double dflt) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(n, name);
  return a && a->type == MGOPT_ONNX_ATTR_FLOAT ? (double)a->f : dflt;
}

/* INTS attribute: count, -1 if absent. */
static int64_t mgopt__imp_aints(const mgopt_onnx_node *n, const char *name, const int64_t **out) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(n, name);
  if (!a || a->type != MGOPT_ONNX_ATTR_INTS) return -1;
  *out = a->ints;
  return a->nints;
}

static int mgopt__imp_astr(const mgopt_onnx_node *n, const char *name, const char *want) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(n, name);
  return a && a->type == MGOPT_ONNX_ATTR_STRING && mgopt__imp_streq(a->s, want);
}

/* Input k of the node: NULL when absent or omitted. */
static mgopt_value *mgopt__imp_in(mgopt__imp *I, int64_t k) {
  const mgopt_onnx_node *n = I->node;
  if (k >= n->ninputs || n->inputs[k].len == 0) return NULL;
  return (mgopt_value *)mgopt__imap_get(&I->values, mgopt__imp_intern(I, n->inputs[k]));
}

static int64_t mgopt__imp_nin(const mgopt_onnx_node *n) {
  int64_t k = n->ninputs;
  while (k > 0 && n->inputs[k - 1].len == 0) k--;
  return k;
}

static int64_t mgopt__imp_nout(const mgopt_onnx_node *n) {
  int64_t k = n->noutputs;
  while (k > 0 && n->outputs[k - 1].len == 0) k--;
  return k;
}

/* Constant integer list from a const value (1-d or scalar integer tensor). */
static int64_t mgopt__imp_const_ints(mgopt__imp *I, mgopt_value *v, int64_t **out) {
  mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
  int64_t i, *arr;
  if (!t || t->rank > 1 || !mgopt_dtype_is_int((mgopt_dtype)t->dtype) || t->numel > 4096) return -1;
  arr = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(t->numel + 1), 8);
  if (!arr) return -1;
  mgopt_tensor_data(I->p, t);
  for (i = 0; i < t->numel; i++) arr[i] = mgopt_tensor_get_i64(t, i);
  *out = arr;
  return t->numel;
}

static int mgopt__imp_rank(const mgopt_value *v) {
  return v && v->type.kind == MGOPT_TYPE_TENSOR ? v->type.rank : -1;
}

/* A new op of `type` at the end of the current block, outputs named after the
   node's outputs 0..nouts-1 (absent outputs flagged). Not inferred yet. */
static mgopt_op *mgopt__imp_op(mgopt__imp *I, const char *type, int32_t nouts, int32_t nblocks) {
  mgopt_op *op = mgopt_op_new(I->p, type, nouts, nblocks);
  int32_t i;
  if (!op) return NULL;
  if (I->node->name.len) op->name = mgopt__imp_intern(I, I->node->name);
  for (i = 0; i < nouts; i++) {
    if (i < I->node->noutputs && I->node->outputs[i].len) {
      op->outs[i]->name = mgopt__imp_intern(I, I->node->outputs[i]);
      if (!op->outs[i]->name) return NULL;
    } else {
      op->outs[i]->flags |= MGOPT_VALUE_ABSENT;
    }
  }
  mgopt_op_append(op, I->b);
  return op;
}

/* A const value (named after the node and `what`) holding t, inserted before `pos`. */
static mgopt_value *mgopt__imp_const(mgopt__imp *I, mgopt_op *pos, const char *what, mgopt_tensor *t) {
  char buf[160];
  const char *nm;
  mgopt_value *v;
  snprintf(buf, sizeof buf, "%.100s_%s", I->node->outputs && I->node->noutputs && I->node->outputs[0].len
                                            ? mgopt__imp_intern(I, I->node->outputs[0]) : "const", what);
  nm = mgopt_program_fresh_name(I->p, buf);
  if (!nm || !t) return NULL;
  v = mgopt_build_const(I->p, I->b, pos, nm, t);
  return v;
}

static mgopt_value *mgopt__imp_const_i32s(mgopt__imp *I, mgopt_op *pos, const char *what, const int64_t *v, int64_t n) {
  mgopt_tensor *t = mgopt_tensor_new(I->p, MGOPT_DT_INT32, 1, &n);
  int64_t i;
  if (!t) return NULL;
  for (i = 0; i < n; i++) {
    if (v[i] < INT32_MIN || v[i] > INT32_MAX) return NULL;
    mgopt_tensor_set_i64(t, i, v[i]);
  }
  return mgopt__imp_const(I, pos, what, t);
}

/* After a canonical op is built: infer, refine with declared types, and bind the outputs. */
static mgopt_status mgopt__imp_finish(mgopt__imp *I, mgopt_op *op) {
  int32_t i;
  mgopt_diag d2;
  mgopt_status s;
  mgopt_diag_clear(&d2);
  if (op->kind != MGOPT_OP_OPAQUE) {
    s = mgopt_op_infer(I->p, op, &d2);
    if (s == MGOPT_ERR_NOMEM) return mgopt__imp_fail(I, s, "out of memory");
    if (s) {
      I->infer_failed = 1;
      return mgopt__imp_fail(I, MGOPT_ERR_TYPE, "%s: %s", op->type, d2.msg);
    }
  }
  for (i = 0; i < op->nouts; i++) {
    mgopt_value *v = op->outs[i];
    if (v->flags & MGOPT_VALUE_ABSENT) continue;
    s = mgopt__imp_refine(I, v, (const mgopt_onnx_type *)mgopt__imap_get(&I->vinfo, v->name));
    if (s) return s;
    mgopt__imap_put(&I->values, v->name, v);
  }
  return I->values.oom ? mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory") : MGOPT_OK;
}

/* The node's output k is value v (an existing value): bind the name with an identity.
   Callers check mgopt__imp_forwardable first. */
static mgopt_status mgopt__imp_forward(mgopt__imp *I, mgopt_value *v) {
  mgopt_op *op = mgopt__imp_op(I, "identity", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", v)) return MGOPT_ERR_NOMEM;
  return mgopt__imp_finish(I, op);
}

/* ---------------------------------------------------------------- opaque ops */

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
static mgopt_status mgopt__imp_type_bytes(mgopt__imp *I, const mgopt_onnx_type *t, mgopt_str *out) {
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

static mgopt_status mgopt__imp_graph(mgopt__imp *I, const mgopt_onnx_graph *g, mgopt_block *b, int is_main);

/* ---------------------------------------------------------------- types of opaque ops

   An op the importer keeps opaque still has outputs whose types ONNX defines
   from its inputs and attributes. Without them every op downstream would see
   unknown types and stay opaque too (one Pad with computed pads made a whole
   network opaque). These rules give what the ONNX spec makes certain (element
   type, rank, the dims that pass through unchanged) and leave the rest
   unknown; declared value infos still refine them afterwards. Default domain
   only; an input of unknown type gives nothing. */

typedef struct mgopt__imp_ty {
  mgopt_dtype dt;
  int32_t rank; /* -1 unknown */
  mgopt_dim dims[MGOPT__IMP_MAX_RANK];
} mgopt__imp_ty;

/* The tensor type of input k, or NULL. */
static const mgopt_type *mgopt__imp_tin(mgopt__imp *I, int64_t k) {
  mgopt_value *v = mgopt__imp_in(I, k);
  return v && v->type.kind == MGOPT_TYPE_TENSOR ? &v->type : NULL;
}

static void mgopt__imp_ty_unknown(mgopt__imp_ty *t, mgopt_dtype dt, int32_t rank) {
  int32_t i;
  t->dt = dt;
  t->rank = rank >= 0 && rank <= MGOPT__IMP_MAX_RANK ? rank : -1;
  for (i = 0; i < MGOPT__IMP_MAX_RANK; i++) t->dims[i] = mgopt_dim_unknown();
}

/* dtype and shape of x (rank -1 when x is unknown or too high). */
static void mgopt__imp_ty_of(mgopt__imp_ty *t, const mgopt_type *x) {
  int32_t i;
  mgopt__imp_ty_unknown(t, x ? (mgopt_dtype)x->dtype : MGOPT_DT_UNKNOWN, x ? x->rank : -1);
  for (i = 0; i < t->rank; i++) t->dims[i] = x->dims[i];
}

/* Multidirectional broadcast of inputs [from, to) into t (dtype left alone):
   per axis, the one size other than 1 (static, or a symbol all agree on). */
static void mgopt__imp_ty_bcast(mgopt__imp *I, mgopt__imp_ty *t, int64_t from, int64_t to) {
  int64_t k;
  int32_t rank = 0, a;
  for (k = from; k < to; k++) {
    const mgopt_type *x = mgopt__imp_tin(I, k);
    if (!x || x->rank < 0) {
      t->rank = -1;
      return;
    }
    if (x->rank > rank) rank = x->rank;
  }
  mgopt__imp_ty_unknown(t, t->dt, rank);
  for (a = 0; a < t->rank; a++) {
    /* a static size other than 1 decides (the others must be 1 or equal to
       it); else a symbol every non-1 size shares; else all 1; else unknown */
    int64_t big = -1;
    const char *sym = NULL;
    int ones = 1, clash = 0, other = 0;
    for (k = from; k < to; k++) {
      const mgopt_type *x = mgopt__imp_tin(I, k);
      int32_t j = a - (rank - x->rank);
      mgopt_dim e;
      if (j < 0) continue;
      e = x->dims[j];
      if (mgopt_dim_is_static(e)) {
        if (e.v == 1) continue;
        if (big >= 0 && big != e.v) clash = 1;
        big = e.v;
      } else if (e.sym && (!sym || sym == e.sym)) {
        sym = e.sym;
      } else {
        other = 1; /* unknown, or a second symbol */
      }
      ones = 0;
    }
    if (clash) continue;
    if (big >= 0) t->dims[a] = mgopt_dim_static(big);
    else if (ones) t->dims[a] = mgopt_dim_static(1);
    else if (sym && !other) {
      t->dims[a].v = -1;
      t->dims[a].sym = sym;
    }
  }
}

/* The length of a 1-d shape-like input whose length is static, else -1. */
static int32_t mgopt__imp_ty_len(const mgopt_type *x) {
  if (!x || x->rank != 1 || !mgopt_dim_is_static(x->dims[0]) || x->dims[0].v > MGOPT__IMP_MAX_RANK) return -1;
  return (int32_t)x->dims[0].v;
}

/* ONNX's MatMul shape for a (ra) @ b (rb), both of rank >= 1 (1-d operands promoted and squeezed). */
static void mgopt__imp_ty_matmul(mgopt__imp_ty *t, const mgopt_type *a, const mgopt_type *b) {
  int32_t ra, rb, r, i;
  if (!a || !b || a->rank < 1 || b->rank < 1) {
    t->rank = -1;
    return;
  }
  ra = a->rank;
  rb = b->rank;
  r = (ra > rb ? ra : rb);
  if (ra == 1 && rb == 1) r = 0;
  else if (ra == 1 || rb == 1) r = (ra > rb ? ra : rb) - 1;
  mgopt__imp_ty_unknown(t, t->dt, r);
  if (t->rank < 0) return;
  if (ra >= 2 && rb >= 2) {
    /* batch dims: equal or broadcast from 1 */
    for (i = 0; i < r - 2; i++) {
      int32_t ia = i - (r - ra), ib = i - (r - rb);
      mgopt_dim da = ia >= 0 ? a->dims[ia] : mgopt_dim_static(1), db = ib >= 0 ? b->dims[ib] : mgopt_dim_static(1);
      if (mgopt_dim_is_static(da) && da.v == 1) t->dims[i] = db;
      else if (mgopt_dim_is_static(db) && db.v == 1) t->dims[i] = da;
      else if (da.v == db.v && da.sym == db.sym) t->dims[i] = da;
    }
    t->dims[r - 2] = a->dims[ra - 2];
    t->dims[r - 1] = b->dims[rb - 1];
  } else if (ra >= 2) {
    for (i = 0; i < r; i++) t->dims[i] = a->dims[i];
  } else if (rb >= 2) {
    for (i = 0; i < r - 1; i++) t->dims[i] = b->dims[i];
    t->dims[r - 1] = b->dims[rb - 1];
  }
}

static mgopt_status mgopt__imp_ty_set(mgopt__imp *I, mgopt_op *op, int32_t k, const mgopt__imp_ty *t) {
  mgopt_value *v;
  if (k >= op->nouts) return MGOPT_OK;
  v = op->outs[k];
  if ((v->flags & MGOPT_VALUE_ABSENT) || v->type.kind != MGOPT_TYPE_TENSOR || v->type.dtype != MGOPT_DT_UNKNOWN ||
      v->type.rank >= 0 || t->dt == MGOPT_DT_UNKNOWN)
    return MGOPT_OK;
  if (mgopt_type_make(I->p, &v->type, t->dt, t->rank, t->rank > 0 ? t->dims : NULL))
    return mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory");
  return MGOPT_OK;
}

static int mgopt__imp_is(const mgopt_onnx_node *n, const char *const *names) {
  for (; *names; names++)
    if (mgopt__imp_streq(n->op_type, *names)) return 1;
  return 0;
}

/* The types of the outputs of opaque op (default domain), where ONNX makes them certain. */
static mgopt_status mgopt__imp_opaque_types(mgopt__imp *I, mgopt_op *op) {
  static const char *const same[] = {
      "Relu", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Softplus", "Softsign", "Selu",
      "Elu", "Celu", "ThresholdedRelu", "Mish", "Gelu", "Erf", "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal",
      "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
      "Acosh", "Atanh", "Clip", "Softmax", "LogSoftmax", "Hardmax", "Identity", "CumSum", "LRN",
      "LpNormalization", "MeanVarianceNormalization", "InstanceNormalization", "BatchNormalization",
      "LayerNormalization", "GroupNormalization", "Dropout", "Trilu", "Shrink", "ScatterND", "ScatterElements",
      "BitwiseNot", "ReverseSequence", NULL};
  static const char *const to_bool[] = {"Not", "IsNaN", "IsInf", NULL};
  static const char *const bcast[] = {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean",
                                      "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitShift", NULL};
  static const char *const compare[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And",
                                        "Or", "Xor", NULL};
  static const char *const keep_rank[] = {"Pad", "Resize", "Upsample", "Slice", "Tile", "MaxPool", "AveragePool",
                                          "LpPool", "DepthToSpace", "SpaceToDepth", "MaxUnpool", NULL};
  static const char *const reduce[] = {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
                                       "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                                       "ReduceSumSquare", NULL};
  static const char *const global_pool[] = {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", NULL};
  static const char *const rnn[] = {"LSTM", "GRU", "RNN", NULL};
  const mgopt_onnx_node *n = I->node;
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  mgopt_status s = MGOPT_OK;
  int32_t i;
  if (!(n->domain.len == 0 || mgopt__imp_streq(n->domain, "ai.onnx"))) return MGOPT_OK;
  mgopt__imp_ty_of(&t, x);
  if (mgopt__imp_is(n, same)) {
    s = mgopt__imp_ty_set(I, op, 0, &t);
    if (!s && mgopt__imp_streq(n->op_type, "Dropout")) { /* the mask: bool since opset 10, x's type before */
      if (I->opset >= 10) t.dt = MGOPT_DT_BOOL;
      s = mgopt__imp_ty_set(I, op, 1, &t);
    }
    return s;
  }
  if (mgopt__imp_is(n, to_bool)) {
    t.dt = x ? MGOPT_DT_BOOL : MGOPT_DT_UNKNOWN;
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (mgopt__imp_is(n, bcast) || mgopt__imp_is(n, compare) || mgopt__imp_streq(n->op_type, "Where")) {
    int64_t from = 0;
    if (mgopt__imp_streq(n->op_type, "Where")) { /* dtype of X */
      const mgopt_type *xv = mgopt__imp_tin(I, 1);
      t.dt = xv ? (mgopt_dtype)xv->dtype : MGOPT_DT_UNKNOWN;
    } else if (mgopt__imp_is(n, compare)) {
      t.dt = MGOPT_DT_BOOL;
    }
    if (mgopt__imp_nin(n) < 1) return MGOPT_OK;
    mgopt__imp_ty_bcast(I, &t, from, mgopt__imp_nin(n));
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (mgopt__imp_streq(n->op_type, "Cast") || mgopt__imp_streq(n->op_type, "CastLike")) {
    if (mgopt__imp_streq(n->op_type, "Cast")) {
      const mgopt_onnx_attribute *a = mgopt__imp_attr(n, "to");
      t.dt = a && a->type == MGOPT_ONNX_ATTR_INT && a->i >= 0 && a->i <= 0x7fffffff ? mgopt_onnx_dtype((int32_t)a->i)
                                                                                       : MGOPT_DT_UNKNOWN;
    } else {
      const mgopt_type *like = mgopt__imp_tin(I, 1);
      t.dt = like ? (mgopt_dtype)like->dtype : MGOPT_DT_UNKNOWN;
    }
    return x ? mgopt__imp_ty_set(I, op, 0, &t) : MGOPT_OK;
  }
  if (mgopt__imp_streq(n->op_type, "Shape")) {
    int64_t start = mgopt__imp_aint(n, "start", 0), end = mgopt__imp_aint(n, "end", x ? x->rank : 0);
    if (!x) return MGOPT_OK;
    if (x->rank < 0) { /* 1-d int64 whatever x is */
      mgopt__imp_ty_unknown(&t, MGOPT_DT_INT64, 1);
      return mgopt__imp_ty_set(I, op, 0, &t);
    }
    if (start < 0) start += x->rank;
    if (end < 0) end += x->rank;
    start = start < 0 ? 0 : start > x->rank ? x->rank : start;
    end = end < 0 ? 0 : end > x->rank ? x->rank : end;
    mgopt__imp_ty_unknown(&t, MGOPT_DT_INT64, 1);
    t.dims[0] = mgopt_dim_static(end > start ? end - start : 0);
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (mgopt__imp_streq(n->op_type, "Size")) {
    mgopt__imp_ty_unknown(&t, x ? MGOPT_DT_INT64 : MGOPT_DT_UNKNOWN, 0);
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (mgopt__imp_streq(n->op_type, "DynamicQuantizeLinear")) {
    if (!x) return MGOPT_OK;
    t.dt = MGOPT_DT_UINT8;
    s = mgopt__imp_ty_set(I, op, 0, &t);
    mgopt__imp_ty_unknown(&t, MGOPT_DT_FP32, 0);
    if (!s) s = mgopt__imp_ty_set(I, op, 1, &t);
    t.dt = MGOPT_DT_UINT8;
    if (!s) s = mgopt__imp_ty_set(I, op, 2, &t);
    return s;
  }
  if (mgopt__imp_streq(n->op_type, "QuantizeLinear")) {
    const mgopt_type *zp = mgopt__imp_tin(I, 2);
    int64_t odt = mgopt__imp_aint(n, "output_dtype", 0);
    if (zp) t.dt = (mgopt_dtype)zp->dtype;
    else if (mgopt__imp_in(I, 2)) t.dt = MGOPT_DT_UNKNOWN;
    else t.dt = odt > 0 && odt <= 0x7fffffff ? mgopt_onnx_dtype((int32_t)odt) : MGOPT_DT_UINT8;
    return x ? mgopt__imp_ty_set(I, op, 0, &t) : MGOPT_OK;
  }
  if (mgopt__imp_streq(n->op_type, "DequantizeLinear")) {
    const mgopt_type *sc = mgopt__imp_tin(I, 1);
    /* float before opset 19; from 19 on, the scale's type */
    t.dt = I->opset < 19 ? MGOPT_DT_FP32 : sc ? (mgopt_dtype)sc->dtype : MGOPT_DT_UNKNOWN;
    if (mgopt__imp_attr(n, "output_dtype")) t.dt = MGOPT_DT_UNKNOWN; /* opset 23's override: not modelled */
    return x ? mgopt__imp_ty_set(I, op, 0, &t) : MGOPT_OK;
  }
  if (mgopt__imp_streq(n->op_type, "ConvInteger") || mgopt__imp_streq(n->op_type, "Conv") ||
      mgopt__imp_streq(n->op_type, "ConvTranspose")) {
    /* X and W have one rank; the output has it too, X's batch and W's
       output channels (ConvTranspose: rank and batch only) */
    const mgopt_type *w = mgopt__imp_tin(I, 1);
    int32_t r = x && x->rank >= 0 ? x->rank : w ? w->rank : -1;
    mgopt_dtype dt = mgopt__imp_streq(n->op_type, "ConvInteger") ? MGOPT_DT_INT32
                     : x && x->dtype != MGOPT_DT_UNKNOWN ? (mgopt_dtype)x->dtype
                     : w ? (mgopt_dtype)w->dtype : MGOPT_DT_UNKNOWN;
    if (!x || r < 3 || (w && w->rank >= 0 && w->rank != r)) return MGOPT_OK;
    mgopt__imp_ty_unknown(&t, dt, r);
    if (x->rank >= 0) t.dims[0] = x->dims[0];
    if (w && w->rank >= 1 && !mgopt__imp_streq(n->op_type, "ConvTranspose")) t.dims[1] = w->dims[0];
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (mgopt__imp_streq(n->op_type, "MatMulInteger") || mgopt__imp_streq(n->op_type, "MatMul")) {
    t.dt = mgopt__imp_streq(n->op_type, "MatMulInteger") ? MGOPT_DT_INT32 : t.dt;
    mgopt__imp_ty_matmul(&t, x, mgopt__imp_tin(I, 1));
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (mgopt__imp_streq(n->op_type, "ConstantOfShape")) {
    const mgopt_onnx_attribute *a = mgopt__imp_attr(n, "value");
    mgopt_dtype dt = a && a->type == MGOPT_ONNX_ATTR_TENSOR && a->t ? mgopt_onnx_dtype(a->t->data_type) : MGOPT_DT_FP32;
    int64_t *v = NULL, len = mgopt__imp_const_ints(I, mgopt__imp_in(I, 0), &v);
    if (len > MGOPT__IMP_MAX_RANK) return MGOPT_OK;
    mgopt__imp_ty_unknown(&t, dt, len >= 0 ? (int32_t)len : mgopt__imp_ty_len(x));
    for (i = 0; len >= 0 && i < t.rank; i++)
      if (v[i] >= 0) t.dims[i] = mgopt_dim_static(v[i]);
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (mgopt__imp_streq(n->op_type, "Gather")) {
    const mgopt_type *idx = mgopt__imp_tin(I, 1);
    int64_t axis = mgopt__imp_aint(n, "axis", 0);
    int32_t r, j = 0;
    if (!x || !idx || x->rank < 1 || idx->rank < 0) return MGOPT_OK;
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank) return MGOPT_OK;
    r = x->rank - 1 + idx->rank;
    mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, r);
    if (t.rank < 0) return MGOPT_OK;
    for (i = 0; i < x->rank; i++) {
      if (i == axis) {
        int32_t q;
        for (q = 0; q < idx->rank; q++) t.dims[j++] = idx->dims[q];
      } else {
        t.dims[j++] = x->dims[i];
      }
    }
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (mgopt__imp_streq(n->op_type, "GatherElements")) {
    const mgopt_type *idx = mgopt__imp_tin(I, 1);
    if (!x || !idx) return MGOPT_OK;
    mgopt__imp_ty_of(&t, idx);
    t.dt = (mgopt_dtype)x->dtype;
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (mgopt__imp_streq(n->op_type, "Reshape") || mgopt__imp_streq(n->op_type, "Expand")) {
    int32_t len = mgopt__imp_ty_len(mgopt__imp_tin(I, 1));
    if (!x || len < 0) return MGOPT_OK;
    if (mgopt__imp_streq(n->op_type, "Expand")) {
      if (x->rank < 0) return MGOPT_OK;
      if (x->rank > len) len = x->rank;
    }
    mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, len);
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (mgopt__imp_streq(n->op_type, "Unsqueeze") && I->opset >= 13) {
    int32_t len = mgopt__imp_ty_len(mgopt__imp_tin(I, 1));
    if (!x || x->rank < 0 || len < 0) return MGOPT_OK;
    mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, x->rank + len);
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (mgopt__imp_streq(n->op_type, "Squeeze")) {
    /* with its axes known: x without them (those dims are 1 at run time) */
    int64_t *ax = NULL, na = I->opset >= 13 ? mgopt__imp_const_ints(I, mgopt__imp_in(I, 1), &ax) : -1;
    uint8_t drop[MGOPT__IMP_MAX_RANK];
    int32_t j = 0;
    if (I->opset < 13) na = mgopt__imp_aints(n, "axes", (const int64_t **)&ax);
    if (!x || x->rank < 0 || x->rank > MGOPT__IMP_MAX_RANK || na < 1) return MGOPT_OK;
    memset(drop, 0, sizeof drop);
    for (i = 0; i < na; i++) {
      int64_t a = ax[i] < 0 ? ax[i] + x->rank : ax[i];
      if (a < 0 || a >= x->rank || drop[a]) return MGOPT_OK;
      drop[a] = 1;
    }
    mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, x->rank - (int32_t)na);
    for (i = 0; i < x->rank; i++)
      if (!drop[i]) t.dims[j++] = x->dims[i];
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (mgopt__imp_streq(n->op_type, "Flatten")) {
    mgopt__imp_ty_unknown(&t, x ? (mgopt_dtype)x->dtype : MGOPT_DT_UNKNOWN, 2);
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (mgopt__imp_is(n, keep_rank) || mgopt__imp_streq(n->op_type, "Transpose") ||
      mgopt__imp_streq(n->op_type, "Split") || mgopt__imp_streq(n->op_type, "Concat")) {
    int32_t k;
    if (!x || x->rank < 0) return MGOPT_OK;
    mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, x->rank);
    if (mgopt__imp_is(n, keep_rank) && mgopt__imp_streq(n->op_type, "Pad") == 0 &&
        mgopt__imp_streq(n->op_type, "Slice") == 0 && mgopt__imp_streq(n->op_type, "Tile") == 0 &&
        mgopt__imp_streq(n->op_type, "Resize") == 0 && mgopt__imp_streq(n->op_type, "Upsample") == 0 &&
        x->rank >= 1)
      t.dims[0] = x->dims[0]; /* pools and depth/space moves keep the batch */
    for (k = 0; k < (mgopt__imp_streq(n->op_type, "Split") ? op->nouts : 1) && !s; k++) s = mgopt__imp_ty_set(I, op, k, &t);
    if (!s && mgopt__imp_streq(n->op_type, "MaxPool")) { /* Indices */
      t.dt = MGOPT_DT_INT64;
      s = mgopt__imp_ty_set(I, op, 1, &t);
    }
    return s;
  }
  if (mgopt__imp_is(n, reduce) || mgopt__imp_streq(n->op_type, "ArgMax") || mgopt__imp_streq(n->op_type, "ArgMin")) {
    int arg = mgopt__imp_streq(n->op_type, "ArgMax") || mgopt__imp_streq(n->op_type, "ArgMin");
    if (!x || x->rank < 0) return MGOPT_OK;
    if (mgopt__imp_aint(n, "keepdims", 1) != 0) {
      mgopt__imp_ty_unknown(&t, arg ? MGOPT_DT_INT64 : (mgopt_dtype)x->dtype, x->rank);
    } else if (!arg && x->rank <= MGOPT__IMP_MAX_RANK) {
      /* keepdims 0 with the axes known (an attribute, or a constant input
         since ReduceSum 13 / the rest 18): x without them */
      const int64_t *ca = NULL;
      int64_t *ia = NULL, na = mgopt__imp_aints(n, "axes", &ca);
      uint8_t drop[MGOPT__IMP_MAX_RANK];
      int32_t j = 0;
      if (na < 0 && (na = mgopt__imp_const_ints(I, mgopt__imp_in(I, 1), &ia)) >= 0) ca = ia;
      if (na < 1) return MGOPT_OK; /* all axes, or none (noop_with_empty_axes): not worth the cases */
      memset(drop, 0, sizeof drop);
      for (i = 0; i < na; i++) {
        int64_t a = ca[i] < 0 ? ca[i] + x->rank : ca[i];
        if (a < 0 || a >= x->rank || drop[a]) return MGOPT_OK;
        drop[a] = 1;
      }
      mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, x->rank - (int32_t)na);
      for (i = 0; i < x->rank; i++)
        if (!drop[i]) t.dims[j++] = x->dims[i];
    } else if (arg && x->rank >= 1) {
      int64_t axis = mgopt__imp_aint(n, "axis", 0);
      int32_t j = 0;
      if (axis < 0) axis += x->rank;
      if (axis < 0 || axis >= x->rank) return MGOPT_OK;
      mgopt__imp_ty_unknown(&t, MGOPT_DT_INT64, x->rank - 1);
      for (i = 0; i < x->rank; i++)
        if (i != axis) t.dims[j++] = x->dims[i];
    } else {
      return MGOPT_OK;
    }
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (mgopt__imp_is(n, global_pool)) {
    if (!x || x->rank < 2) return MGOPT_OK;
    for (i = 2; i < t.rank; i++) t.dims[i] = mgopt_dim_static(1);
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (mgopt__imp_is(n, rnn)) {
    /* X: [seq, batch, input] (layout 0) or [batch, seq, input] (layout 1) */
    int64_t hidden = mgopt__imp_aint(n, "hidden_size", -1), layout = mgopt__imp_aint(n, "layout", 0);
    int64_t dirs = mgopt__imp_astr(n, "direction", "bidirectional") ? 2 : 1;
    const mgopt_type *w = mgopt__imp_tin(I, 1);
    mgopt_dtype dt = x && x->dtype != MGOPT_DT_UNKNOWN ? (mgopt_dtype)x->dtype : w ? (mgopt_dtype)w->dtype : MGOPT_DT_UNKNOWN;
    mgopt_dim seq = mgopt_dim_unknown(), batch = mgopt_dim_unknown();
    if (!x || (x->rank >= 0 && x->rank != 3) || hidden < 1 || (layout != 0 && layout != 1)) return MGOPT_OK;
    if (x->rank == 3) {
      seq = x->dims[layout ? 1 : 0];
      batch = x->dims[layout ? 0 : 1];
    }
    mgopt__imp_ty_unknown(&t, dt, 4);
    t.dims[0] = layout ? batch : seq;
    t.dims[1] = layout ? seq : mgopt_dim_static(dirs);
    t.dims[2] = layout ? mgopt_dim_static(dirs) : batch;
    t.dims[3] = mgopt_dim_static(hidden);
    s = mgopt__imp_ty_set(I, op, 0, &t);
    mgopt__imp_ty_unknown(&t, dt, 3);
    t.dims[0] = layout ? batch : mgopt_dim_static(dirs);
    t.dims[1] = layout ? mgopt_dim_static(dirs) : batch;
    t.dims[2] = mgopt_dim_static(hidden);
    if (!s) s = mgopt__imp_ty_set(I, op, 1, &t);
    if (!s && mgopt__imp_streq(n->op_type, "LSTM")) s = mgopt__imp_ty_set(I, op, 2, &t);
    return s;
  }
  if (mgopt__imp_streq(n->op_type, "NonZero")) {
    if (!x) return MGOPT_OK;
    mgopt__imp_ty_unknown(&t, MGOPT_DT_INT64, 2);
    if (x->rank >= 0) t.dims[0] = mgopt_dim_static(x->rank);
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (mgopt__imp_streq(n->op_type, "TopK")) {
    if (!x || x->rank < 0) return MGOPT_OK;
    mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, x->rank);
    s = mgopt__imp_ty_set(I, op, 0, &t);
    t.dt = MGOPT_DT_INT64;
    return s ? s : mgopt__imp_ty_set(I, op, 1, &t);
  }
  if (mgopt__imp_streq(n->op_type, "Range")) {
    mgopt__imp_ty_unknown(&t, x ? (mgopt_dtype)x->dtype : MGOPT_DT_UNKNOWN, 1);
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (mgopt__imp_streq(n->op_type, "If") && op->nblocks == 2) {
    /* what both branches agree on */
    mgopt_block *a = op->blocks[0], *b = op->blocks[1];
    int32_t k;
    if (a->nouts != op->nouts || b->nouts != op->nouts) return MGOPT_OK;
    for (k = 0; k < op->nouts && !s; k++) {
      const mgopt_type *ta = &a->outs[k]->value->type, *tb = &b->outs[k]->value->type;
      if (ta->kind != MGOPT_TYPE_TENSOR || tb->kind != MGOPT_TYPE_TENSOR || ta->dtype != tb->dtype) continue;
      mgopt__imp_ty_unknown(&t, (mgopt_dtype)ta->dtype, ta->rank == tb->rank ? ta->rank : -1);
      for (i = 0; i < t.rank; i++)
        if (ta->dims[i].v == tb->dims[i].v && ta->dims[i].sym == tb->dims[i].sym) t.dims[i] = ta->dims[i];
      s = mgopt__imp_ty_set(I, op, k, &t);
    }
    return s;
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__imp_opaque(mgopt__imp *I) {
  const mgopt_onnx_node *n = I->node;
  char type[256];
  int64_t i, ngraphs = 0;
  int32_t nouts = (int32_t)n->noutputs, bi = 0;
  mgopt_op *op;
  mgopt_status s;
  if (n->domain.len == 0 || mgopt__imp_streq(n->domain, "ai.onnx"))
    snprintf(type, sizeof type, "onnx::%.*s", (int)(n->op_type.len > 200 ? 200 : n->op_type.len), n->op_type.ptr);
  else
    snprintf(type, sizeof type, "%.*s::%.*s", (int)(n->domain.len > 100 ? 100 : n->domain.len), n->domain.ptr,
             (int)(n->op_type.len > 120 ? 120 : n->op_type.len), n->op_type.ptr);
  for (i = 0; i < n->nattributes; i++)
    if (n->attributes[i].type == MGOPT_ONNX_ATTR_GRAPH) ngraphs++;
  if (nouts > 100000 || n->ninputs > 100000) return mgopt__imp_fail(I, MGOPT_ERR_LIMIT, "node with too many inputs or outputs");
  op = mgopt__imp_op(I, type, nouts, (int32_t)ngraphs);
  if (!op) return MGOPT_ERR_NOMEM;
  for (i = 0; i < n->ninputs; i++) {
    char slot[24];
    mgopt_value *v;
    if (n->inputs[i].len == 0) continue;
    v = mgopt__imp_in(I, i);
    if (!v)
      return mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "input '%.*s' of node %s is not defined",
                             (int)(n->inputs[i].len > 80 ? 80 : n->inputs[i].len), n->inputs[i].ptr, type);
    snprintf(slot, sizeof slot, "in%d", (int)i);
    if (mgopt_op_set_operand(op, slot, v)) return MGOPT_ERR_NOMEM;
  }
  for (i = 0; i < n->nattributes; i++) {
    const mgopt_onnx_attribute *a = &n->attributes[i];
    mgopt_attr at;
    memset(&at, 0, sizeof at);
    at.name = mgopt__imp_intern_copy(I, a->name);
    if (!at.name) return MGOPT_ERR_NOMEM;
    if (a->ref_attr_name.len)
      return mgopt__imp_fail(I, MGOPT_ERR_UNSUPPORTED, "attribute references belong in functions, not graphs");
    switch (a->type) {
      case MGOPT_ONNX_ATTR_FLOAT: at.kind = MGOPT_ATTR_FLOAT; at.u.f = (double)a->f; break;
      case MGOPT_ONNX_ATTR_INT: at.kind = MGOPT_ATTR_INT; at.u.i = a->i; break;
      case MGOPT_ONNX_ATTR_STRING: at.kind = MGOPT_ATTR_STRING; at.u.s = a->s; if (!at.u.s.ptr) at.u.s.ptr = ""; break;
      case MGOPT_ONNX_ATTR_INTS: at.kind = MGOPT_ATTR_INTS; at.n = a->nints; at.u.ints = a->ints; break;
      case MGOPT_ONNX_ATTR_FLOATS: {
        int64_t k;
        at.kind = MGOPT_ATTR_FLOATS;
        at.n = a->nfloats;
        at.u.floats = (double *)mgopt_program_alloc(I->p, sizeof(double) * (size_t)(a->nfloats + 1), 8);
        if (!at.u.floats) return MGOPT_ERR_NOMEM;
        for (k = 0; k < a->nfloats; k++) at.u.floats[k] = (double)a->floats[k];
        break;
      }
      case MGOPT_ONNX_ATTR_STRINGS: at.kind = MGOPT_ATTR_STRINGS; at.n = a->nstrings; at.u.strs = a->strings; break;
      case MGOPT_ONNX_ATTR_TENSOR:
        if (!a->t) return mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "tensor attribute without a tensor");
        at.kind = MGOPT_ATTR_TENSOR;
        at.u.t = mgopt__imp_tensor(I, a->t);
        if (!at.u.t) return I->d ? I->d->status : MGOPT_ERR_CORRUPT;
        break;
      case MGOPT_ONNX_ATTR_GRAPH: {
        mgopt_block *nb = op->blocks[bi++];
        int64_t mark = I->values.nundo, vmark = I->vinfo.nundo;
        mgopt_block *saved = I->b;
        const mgopt_onnx_node *saved_node = I->node;
        if (!a->g) return mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "graph attribute without a graph");
        nb->name = at.name;
        if (I->depth >= MGOPT__IMP_MAX_DEPTH) return mgopt__imp_fail(I, MGOPT_ERR_LIMIT, "subgraphs nested too deeply");
        I->depth++;
        s = mgopt__imp_graph(I, a->g, nb, 0);
        I->depth--;
        I->b = saved;
        I->node = saved_node;
        mgopt__imap_pop(&I->values, mark);
        mgopt__imap_pop(&I->vinfo, vmark);
        if (s) return s;
        continue;
      }
      case MGOPT_ONNX_ATTR_TYPE_PROTO: {
        mgopt_str bytes;
        if (!a->tp) return mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "type attribute without a type");
        if ((s = mgopt__imp_type_bytes(I, a->tp, &bytes)) != MGOPT_OK) return s;
        at.kind = MGOPT_ATTR_BYTES;
        at.tag = MGOPT_ONNX_ATTR_TYPE_PROTO;
        at.n = (int64_t)bytes.len;
        at.u.bytes = (const uint8_t *)bytes.ptr;
        break;
      }
      default:
        return mgopt__imp_fail(I, MGOPT_ERR_UNSUPPORTED, "%s: attribute '%.*s' of type %d is not supported", type,
                               (int)(a->name.len > 60 ? 60 : a->name.len), a->name.ptr, (int)a->type);
    }
    if (mgopt_op_set_attr(op, &at)) return MGOPT_ERR_NOMEM;
  }
  if ((s = mgopt__imp_opaque_types(I, op)) != MGOPT_OK) return s;
  return mgopt__imp_finish(I, op);
}

/* ---------------------------------------------------------------- canonical mappings */

/* Each returns 1 when it built canonical ops, 0 to fall back to an opaque op
   (nothing was created then), or -1 on error (d set). */
typedef int (*mgopt__imp_fn)(mgopt__imp *I);

static int mgopt__imp_err(mgopt_status s) { return s ? -1 : 1; }

static int mgopt__imp_is_float(const mgopt_value *v) {
  return v && v->type.kind == MGOPT_TYPE_TENSOR &&
         (v->type.dtype == MGOPT_DT_FP32 || v->type.dtype == MGOPT_DT_FP16 || v->type.dtype == MGOPT_DT_FP64);
}

static int mgopt__imp_known_dtype(const mgopt_value *v) {
  return v && v->type.kind == MGOPT_TYPE_TENSOR && v->type.dtype != MGOPT_DT_UNKNOWN;
}

/* Binary elementwise: same dtypes on both sides, one output. */
static int mgopt__imp_binary(mgopt__imp *I, const char *type, int float_only) {
  mgopt_value *x = mgopt__imp_in(I, 0), *y = mgopt__imp_in(I, 1);
  mgopt_op *op;
  if (!x || !y || mgopt__imp_nin(I->node) != 2 || mgopt__imp_nout(I->node) != 1) return 0;
  if (!mgopt__imp_known_dtype(x) || x->type.dtype != y->type.dtype) return 0;
  if (float_only && !mgopt__imp_is_float(x)) return 0;
  if (x->type.dtype == MGOPT_DT_STRING || x->type.dtype == MGOPT_DT_BOOL) return 0;
  op = mgopt__imp_op(I, type, 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "y", y)) return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

static int mgopt__imp_add(mgopt__imp *I) { return mgopt__imp_binary(I, "add", 0); }
static int mgopt__imp_sub(mgopt__imp *I) { return mgopt__imp_binary(I, "sub", 0); }
static int mgopt__imp_mul(mgopt__imp *I) { return mgopt__imp_binary(I, "mul", 0); }
static int mgopt__imp_div(mgopt__imp *I) { return mgopt__imp_binary(I, "real_div", 1); } /* ints truncate: opaque */
static int mgopt__imp_pow(mgopt__imp *I) { return mgopt__imp_binary(I, "pow", 1); }
static int mgopt__imp_max(mgopt__imp *I) { return mgopt__imp_binary(I, "maximum", 1); }
static int mgopt__imp_min(mgopt__imp *I) { return mgopt__imp_binary(I, "minimum", 1); }

static int mgopt__imp_compare(mgopt__imp *I, const char *type) {
  mgopt_value *x = mgopt__imp_in(I, 0), *y = mgopt__imp_in(I, 1);
  mgopt_op *op;
  if (!x || !y || mgopt__imp_nout(I->node) != 1 || !mgopt__imp_known_dtype(x) || x->type.dtype != y->type.dtype)
    return 0;
  if (x->type.dtype == MGOPT_DT_STRING) return 0;
  op = mgopt__imp_op(I, type, 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "y", y)) return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}
static int mgopt__imp_equal(mgopt__imp *I) { return mgopt__imp_compare(I, "equal"); }
static int mgopt__imp_less(mgopt__imp *I) { return mgopt__imp_compare(I, "less"); }
static int mgopt__imp_greater(mgopt__imp *I) { return mgopt__imp_compare(I, "greater"); }
static int mgopt__imp_less_equal(mgopt__imp *I) { return mgopt__imp_compare(I, "less_equal"); }
static int mgopt__imp_greater_equal(mgopt__imp *I) { return mgopt__imp_compare(I, "greater_equal"); }

static int mgopt__imp_logical(mgopt__imp *I, const char *type) {
  mgopt_value *x = mgopt__imp_in(I, 0), *y = mgopt__imp_in(I, 1);
  mgopt_op *op;
  if (!x || !y || x->type.dtype != MGOPT_DT_BOOL || y->type.dtype != MGOPT_DT_BOOL) return 0;
  op = mgopt__imp_op(I, type, 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "y", y)) return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}
static int mgopt__imp_and(mgopt__imp *I) { return mgopt__imp_logical(I, "logical_and"); }
static int mgopt__imp_or(mgopt__imp *I) { return mgopt__imp_logical(I, "logical_or"); }
static int mgopt__imp_xor(mgopt__imp *I) { return mgopt__imp_logical(I, "logical_xor"); }

/* Unary elementwise on float tensors. */
static int mgopt__imp_unary_f(mgopt__imp *I, const char *type) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || mgopt__imp_nout(I->node) != 1) return 0;
  op = mgopt__imp_op(I, type, 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x)) return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}
static int mgopt__imp_relu(mgopt__imp *I) { return mgopt__imp_unary_f(I, "relu"); }
static int mgopt__imp_sigmoid(mgopt__imp *I) { return mgopt__imp_unary_f(I, "sigmoid"); }
static int mgopt__imp_tanh(mgopt__imp *I) { return mgopt__imp_unary_f(I, "tanh"); }
static int mgopt__imp_erf(mgopt__imp *I) { return mgopt__imp_unary_f(I, "erf"); }
static int mgopt__imp_sqrt(mgopt__imp *I) { return mgopt__imp_unary_f(I, "sqrt"); }
static int mgopt__imp_exp(mgopt__imp *I) { return mgopt__imp_unary_f(I, "exp"); }
static int mgopt__imp_log(mgopt__imp *I) { return mgopt__imp_unary_f(I, "log"); }
static int mgopt__imp_abs(mgopt__imp *I) { return mgopt__imp_unary_f(I, "abs"); }
static int mgopt__imp_floor(mgopt__imp *I) { return mgopt__imp_unary_f(I, "floor"); }
static int mgopt__imp_ceil(mgopt__imp *I) { return mgopt__imp_unary_f(I, "ceil"); }
static int mgopt__imp_sin(mgopt__imp *I) { return mgopt__imp_unary_f(I, "sin"); }
static int mgopt__imp_cos(mgopt__imp *I) { return mgopt__imp_unary_f(I, "cos"); }

static int mgopt__imp_not(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  if (!x || x->type.dtype != MGOPT_DT_BOOL) return 0;
  op = mgopt__imp_op(I, "logical_not", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x)) return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

/* 1 if an identity can stand for the node: a tensor goes in, and the first
   output is not declared as something else (a sequence, a map): those stay opaque. */
static int mgopt__imp_forwardable(mgopt__imp *I, const mgopt_value *x) {
  const mgopt_onnx_type *ot;
  const char *nm;
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR) return 0;
  nm = I->node->noutputs ? mgopt__imp_intern(I, I->node->outputs[0]) : NULL;
  ot = nm ? (const mgopt_onnx_type *)mgopt__imap_get(&I->vinfo, nm) : NULL;
  return !ot || ot->tensor_type || !ot->other.len;
}

static int mgopt__imp_identity(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  if (!mgopt__imp_forwardable(I, x) || mgopt__imp_nout(I->node) != 1) return 0;
  return mgopt__imp_err(mgopt__imp_forward(I, x));
}

/* Dropout at inference: output 0 is the input when training is off and the mask is not asked for. */
static int mgopt__imp_dropout(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0), *train = mgopt__imp_in(I, 2);
  if (!mgopt__imp_forwardable(I, x) || mgopt__imp_nout(I->node) != 1) return 0;
  if (mgopt__imp_aint(I->node, "is_test", 1) == 0 && I->opset < 7) return 0;
  if (train) {
    mgopt_tensor *t = mgopt_value_const(train);
    if (!t || t->numel != 1 || mgopt_tensor_get_i64(t, 0) != 0) return 0;
  }
  return mgopt__imp_err(mgopt__imp_forward(I, x));
}

static int mgopt__imp_leaky_relu(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  if (!mgopt__imp_is_float(x)) return 0;
  op = mgopt__imp_op(I, "leaky_relu", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) ||
      mgopt_op_set_float(op, "alpha", mgopt__imp_afloat(I->node, "alpha", (double)0.01f)))
    return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

static int mgopt__imp_gelu(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  int tanh_mode = mgopt__imp_astr(I->node, "approximate", "tanh");
  if (!mgopt__imp_is_float(x) || (!tanh_mode && mgopt__imp_attr(I->node, "approximate") &&
                                  !mgopt__imp_astr(I->node, "approximate", "none")))
    return 0;
  op = mgopt__imp_op(I, "gelu", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) ||
      mgopt_op_set_string(op, "mode", tanh_mode ? "TANH_APPROXIMATION" : "EXACT"))
    return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

static int mgopt__imp_softmax(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", I->opset >= 13 ? -1 : 1);
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || r < 1) return 0;
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return 0;
  /* before opset 13 the input is coerced to 2-d at axis: the same only for the last axis */
  if (I->opset < 13 && axis != r - 1) return 0;
  op = mgopt__imp_op(I, "softmax", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_int(op, "axis", axis)) return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

static int mgopt__imp_clip(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  double lo = -HUGE_VAL, hi = HUGE_VAL;
  mgopt_op *op;
  if (!x || (x->type.dtype != MGOPT_DT_FP32 && x->type.dtype != MGOPT_DT_FP16)) return 0;
  if (I->opset < 11) {
    lo = mgopt__imp_afloat(I->node, "min", -HUGE_VAL);
    hi = mgopt__imp_afloat(I->node, "max", HUGE_VAL);
  } else {
    mgopt_value *a = mgopt__imp_in(I, 1), *b = mgopt__imp_in(I, 2);
    mgopt_tensor *ta = a ? mgopt_value_const(a) : NULL, *tb = b ? mgopt_value_const(b) : NULL;
    if ((a && (!ta || ta->numel != 1)) || (b && (!tb || tb->numel != 1))) return 0;
    if (ta) lo = mgopt_tensor_get_f64(ta, 0);
    if (tb) hi = mgopt_tensor_get_f64(tb, 0);
  }
  if (!(lo <= hi)) return 0; /* min > max (or NaN) is defined differently */
  op = mgopt__imp_op(I, "clip", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_float(op, "alpha", lo) ||
      mgopt_op_set_float(op, "beta", hi))
    return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

static int mgopt__imp_cast(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_dtype to = mgopt_onnx_dtype((int32_t)mgopt__imp_aint(I->node, "to", 0));
  mgopt_op *op;
  static const mgopt_dtype ok[] = {MGOPT_DT_BOOL,  MGOPT_DT_INT8,   MGOPT_DT_UINT8, MGOPT_DT_INT16,
                                   MGOPT_DT_UINT16, MGOPT_DT_INT32, MGOPT_DT_INT64, MGOPT_DT_FP16,
                                   MGOPT_DT_FP32,  MGOPT_DT_FP64};
  int i, good_to = 0, good_from = 0;
  if (!x || mgopt__imp_attr(I->node, "saturate")) return 0;
  for (i = 0; i < (int)(sizeof ok / sizeof ok[0]); i++) {
    if (ok[i] == to) good_to = 1;
    if (ok[i] == (mgopt_dtype)x->type.dtype) good_from = 1;
  }
  if (!good_to || !good_from) return 0;
  op = mgopt__imp_op(I, "cast", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_string(op, "dtype", mgopt_dtype_name(to))) return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

static int mgopt__imp_transpose(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  const int64_t *perm = NULL;
  int64_t n = mgopt__imp_aints(I->node, "perm", &perm), i, *rev = NULL;
  int r = mgopt__imp_rank(x);
  mgopt_op *op;
  if (!x || r < 0) return 0;
  if (n < 0) {
    rev = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(r + 1), 8);
    if (!rev) return -1;
    for (i = 0; i < r; i++) rev[i] = r - 1 - i;
    perm = rev;
    n = r;
  }
  if (n != r) return 0;
  op = mgopt__imp_op(I, "transpose", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_ints(op, "perm", perm, n)) return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

/* Reshape with a constant shape whose entries are all resolvable without the
   "0 copies the input dim" rule (a 0 is resolved from a static input dim). */
static int mgopt__imp_reshape(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0), *sv = mgopt__imp_in(I, 1);
  int64_t *shape = NULL, n, i;
  int allowzero = (int)mgopt__imp_aint(I->node, "allowzero", 0);
  mgopt_op *op;
  mgopt_value *c;
  if (!x || !sv || I->opset < 5) return 0;
  n = mgopt__imp_const_ints(I, sv, &shape);
  if (n < 0) return 0;
  for (i = 0; i < n; i++) {
    if (shape[i] == 0 && !allowzero) {
      if (x->type.rank <= i || !mgopt_dim_is_static(x->type.dims[i])) return 0;
      shape[i] = x->type.dims[i].v;
      if (shape[i] == 0) return 0;
    } else if (shape[i] == 0 || shape[i] < -1) {
      return 0;
    }
  }
  c = mgopt__imp_const_i32s(I, NULL, "shape", shape, n);
  if (!c) return 0;
  op = mgopt__imp_op(I, "reshape", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "shape", c)) return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

/* Axes from the attribute (older opsets) or a constant input (newer): count,
   -1 when neither form is usable, -2 when absent. */
static int64_t mgopt__imp_axes(mgopt__imp *I, int64_t input_k, int64_t attr_until, int64_t **out) {
  const int64_t *a = NULL;
  int64_t n;
  if (I->opset < attr_until) {
    n = mgopt__imp_aints(I->node, "axes", &a);
    if (n < 0) return -2;
    /* one spare slot, as callers expect; only n entries are read from the attribute */
    *out = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(n + 1), 8);
    if (*out && n) memcpy(*out, a, sizeof(int64_t) * (size_t)n);
    return *out ? n : -1;
  }
  if (input_k >= I->node->ninputs || I->node->inputs[input_k].len == 0) return -2;
  return mgopt__imp_const_ints(I, mgopt__imp_in(I, input_k), out);
}

static int mgopt__imp_squeeze(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int64_t *axes = NULL, n = mgopt__imp_axes(I, 1, 13, &axes);
  mgopt_op *op;
  if (!x || n == -1) return 0;
  op = mgopt__imp_op(I, "squeeze", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x)) return -1;
  if (n >= 0 && mgopt_op_set_ints(op, "axes", axes, n)) return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

static int mgopt__imp_unsqueeze(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int64_t *axes = NULL, n = mgopt__imp_axes(I, 1, 13, &axes);
  mgopt_op *op;
  if (!x || n < 1) return 0;
  op = mgopt__imp_op(I, "expand_dims", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_ints(op, "axes", axes, n)) return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

/* Flatten to 2-d: a reshape when the input shape is static. */
static int mgopt__imp_flatten(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0), *c;
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", 1), shape[2] = {1, 1}, i;
  mgopt_op *op;
  if (!x || r < 0 || !mgopt_type_is_static(&x->type)) return 0;
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) return 0;
  for (i = 0; i < r; i++)
    if (!mgopt__mul_i64(shape[i < axis ? 0 : 1], x->type.dims[i].v, &shape[i < axis ? 0 : 1])) return 0;
  c = mgopt__imp_const_i32s(I, NULL, "shape", shape, 2);
  if (!c) return 0;
  op = mgopt__imp_op(I, "reshape", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "shape", c)) return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

static int mgopt__imp_concat(mgopt__imp *I) {
  int64_t n = I->node->ninputs, i, axis = mgopt__imp_aint(I->node, "axis", 1);
  mgopt_value **vals;
  mgopt_op *op;
  int r = -1;
  if (n < 1 || n > 100000 || !mgopt__imp_attr(I->node, "axis")) return 0;
  vals = (mgopt_value **)mgopt_program_alloc(I->p, sizeof(mgopt_value *) * (size_t)n, 8);
  if (!vals) return -1;
  for (i = 0; i < n; i++) {
    vals[i] = mgopt__imp_in(I, i);
    if (!vals[i]) return 0;
    if (i == 0) r = mgopt__imp_rank(vals[0]);
    if (mgopt__imp_rank(vals[i]) != r || vals[i]->type.dtype != vals[0]->type.dtype) return 0;
  }
  if (r < 1 || axis < -r || axis >= r) return 0;
  op = mgopt__imp_op(I, "concat", 1, 0);
  if (!op || mgopt_op_set_operand_list(op, "values", vals, (int32_t)n) || mgopt_op_set_int(op, "axis", axis) ||
      mgopt_op_set_bool(op, "interleave", 0))
    return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

/* Split with sizes known: explicit split, or an even split of a static dim. */
static int mgopt__imp_split(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", 0), nout = I->node->noutputs, *sizes = NULL, n = -2, i;
  const int64_t *as = NULL;
  mgopt_op *op;
  if (!x || r < 1 || nout < 1 || mgopt__imp_nout(I->node) != nout) return 0;
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return 0;
  if (I->opset < 13) {
    n = mgopt__imp_aints(I->node, "split", &as);
    if (n >= 0) {
      sizes = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(n + 1), 8);
      if (sizes && n) memcpy(sizes, as, sizeof(int64_t) * (size_t)n);
    }
  } else if (I->node->ninputs > 1 && I->node->inputs[1].len) {
    n = mgopt__imp_const_ints(I, mgopt__imp_in(I, 1), &sizes);
    if (n < 0) return 0;
  }
  if (n == -2 || !sizes) {
    /* even split of a static dim (opset 18's uneven num_outputs split stays opaque) */
    int64_t dim;
    if (!mgopt_dim_is_static(x->type.dims[axis])) return 0;
    dim = x->type.dims[axis].v;
    if (dim % nout) return 0;
    op = mgopt__imp_op(I, "split", (int32_t)nout, 0);
    if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_int(op, "num_splits", nout) ||
        mgopt_op_set_int(op, "axis", axis))
      return -1;
    return mgopt__imp_err(mgopt__imp_finish(I, op));
  }
  if (n != nout) return 0;
  for (i = 0; i < n; i++)
    if (sizes[i] < 0) return 0;
  op = mgopt__imp_op(I, "split", (int32_t)nout, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_ints(op, "split_sizes", sizes, n) ||
      mgopt_op_set_int(op, "axis", axis))
    return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

/* Slice with constant starts/ends/axes/steps on an input of known rank. */
static int mgopt__imp_slice(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0), *c[3];
  int r = mgopt__imp_rank(x);
  int64_t *starts = NULL, *ends = NULL, *axes = NULL, *steps = NULL, ns, ne, na = -2, nst = -2, i;
  int64_t *b, *e, *st, *bm, *em;
  mgopt_op *op;
  if (!x || r < 1) return 0;
  if (I->opset < 10) {
    const int64_t *a1 = NULL, *a2 = NULL, *a3 = NULL;
    ns = mgopt__imp_aints(I->node, "starts", &a1);
    ne = mgopt__imp_aints(I->node, "ends", &a2);
    na = mgopt__imp_aints(I->node, "axes", &a3);
    starts = (int64_t *)(uintptr_t)a1;
    ends = (int64_t *)(uintptr_t)a2;
    axes = (int64_t *)(uintptr_t)a3;
  } else {
    ns = mgopt__imp_const_ints(I, mgopt__imp_in(I, 1), &starts);
    ne = mgopt__imp_const_ints(I, mgopt__imp_in(I, 2), &ends);
    if (I->node->ninputs > 3 && I->node->inputs[3].len) {
      na = mgopt__imp_const_ints(I, mgopt__imp_in(I, 3), &axes);
      if (na < 0) return 0;
    }
    if (I->node->ninputs > 4 && I->node->inputs[4].len) {
      nst = mgopt__imp_const_ints(I, mgopt__imp_in(I, 4), &steps);
      if (nst < 0) return 0;
    }
  }
  if (ns < 0 || ne != ns || (na >= 0 && na != ns) || (nst >= 0 && nst != ns)) return 0;
  b = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)r * 5, 8);
  if (!b) return -1;
  e = b + r;
  st = e + r;
  bm = st + r;
  em = bm + r;
  for (i = 0; i < r; i++) {
    b[i] = 0;
    e[i] = 0;
    st[i] = 1;
    bm[i] = 1;
    em[i] = 1;
  }
  for (i = 0; i < ns; i++) {
    int64_t ax = na >= 0 ? axes[i] : i, s = nst >= 0 ? steps[i] : 1, dim;
    if (ax < 0) ax += r;
    if (ax < 0 || ax >= r || s == 0 || !bm[ax]) return 0; /* bad or repeated axis */
    if (!mgopt_dim_is_static(x->type.dims[ax])) return 0;
    dim = x->type.dims[ax].v;
    /* clamp as ONNX does, then express with masks where the bound is the end */
    {
      int64_t lo = starts[i], hi = ends[i];
      if (lo < 0) lo += dim;
      if (hi < 0) hi += dim;
      if (s > 0) {
        lo = lo < 0 ? 0 : lo > dim ? dim : lo;
        hi = hi < 0 ? 0 : hi > dim ? dim : hi;
      } else {
        lo = lo < 0 ? -1 : lo > dim - 1 ? dim - 1 : lo;
        hi = hi < -1 ? -1 : hi > dim - 1 ? dim - 1 : hi;
      }
      if (s < 0 && hi == -1) em[ax] = 1, hi = 0;
      else em[ax] = 0;
      if (s < 0 && lo == -1) return 0; /* empty result from the far end: leave it to ONNX */
      bm[ax] = 0;
      b[ax] = lo;
      e[ax] = hi;
      st[ax] = s;
      if (lo > INT32_MAX || hi > INT32_MAX || s > INT32_MAX || s < INT32_MIN) return 0;
    }
  }
  c[0] = mgopt__imp_const_i32s(I, NULL, "begin", b, r);
  c[1] = mgopt__imp_const_i32s(I, NULL, "end", e, r);
  c[2] = mgopt__imp_const_i32s(I, NULL, "stride", st, r);
  if (!c[0] || !c[1] || !c[2]) return -1;
  op = mgopt__imp_op(I, "slice_by_index", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "begin", c[0]) ||
      mgopt_op_set_operand(op, "end", c[1]) || mgopt_op_set_operand(op, "stride", c[2]))
    return -1;
  {
    mgopt_attr a;
    memset(&a, 0, sizeof a);
    a.kind = MGOPT_ATTR_BOOLS;
    a.n = r;
    a.name = "begin_mask";
    a.u.ints = bm;
    if (mgopt_op_set_attr(op, &a)) return -1;
    a.name = "end_mask";
    a.u.ints = em;
    if (mgopt_op_set_attr(op, &a)) return -1;
  }
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

static int mgopt__imp_gather(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0), *idx = mgopt__imp_in(I, 1);
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", 0);
  mgopt_op *op;
  if (!x || !idx || r < 1 || (idx->type.dtype != MGOPT_DT_INT32 && idx->type.dtype != MGOPT_DT_INT64)) return 0;
  if (axis < -r || axis >= r) return 0;
  op = mgopt__imp_op(I, "gather", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "indices", idx) ||
      mgopt_op_set_int(op, "axis", axis))
    return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

static int mgopt__imp_where(mgopt__imp *I) {
  mgopt_value *c = mgopt__imp_in(I, 0), *a = mgopt__imp_in(I, 1), *b = mgopt__imp_in(I, 2);
  mgopt_op *op;
  if (!c || !a || !b || c->type.dtype != MGOPT_DT_BOOL || !mgopt__imp_known_dtype(a) || a->type.dtype != b->type.dtype)
    return 0;
  op = mgopt__imp_op(I, "select", 1, 0);
  if (!op || mgopt_op_set_operand(op, "cond", c) || mgopt_op_set_operand(op, "a", a) ||
      mgopt_op_set_operand(op, "b", b))
    return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

static int mgopt__imp_matmul(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0), *y = mgopt__imp_in(I, 1);
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || !y || x->type.dtype != y->type.dtype) return 0;
  op = mgopt__imp_op(I, "matmul", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "y", y) ||
      mgopt_op_set_bool(op, "transpose_x", 0) || mgopt_op_set_bool(op, "transpose_y", 0))
    return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

/* Gemm with alpha = beta = 1 and no transposed A: linear when B is transposed
   and C is 1-d (or absent), else matmul (+ add). */
static int mgopt__imp_gemm(mgopt__imp *I) {
  mgopt_value *a = mgopt__imp_in(I, 0), *b = mgopt__imp_in(I, 1), *c = mgopt__imp_in(I, 2);
  int64_t ta = mgopt__imp_aint(I->node, "transA", 0), tb = mgopt__imp_aint(I->node, "transB", 0);
  mgopt_op *op;
  if (!mgopt__imp_is_float(a) || !b || a->type.dtype != b->type.dtype || (c && c->type.dtype != a->type.dtype))
    return 0;
  if (mgopt__imp_afloat(I->node, "alpha", 1.0) != 1.0 || (c && mgopt__imp_afloat(I->node, "beta", 1.0) != 1.0)) return 0;
  if (mgopt__imp_rank(a) != 2 || mgopt__imp_rank(b) != 2 || ta) return 0;
  if (tb && (!c || mgopt__imp_rank(c) == 1)) {
    op = mgopt__imp_op(I, "linear", 1, 0);
    if (!op || mgopt_op_set_operand(op, "x", a) || mgopt_op_set_operand(op, "weight", b)) return -1;
    if (c && mgopt_op_set_operand(op, "bias", c)) return -1;
    return mgopt__imp_err(mgopt__imp_finish(I, op));
  }
  if (!c) {
    op = mgopt__imp_op(I, "matmul", 1, 0);
    if (!op || mgopt_op_set_operand(op, "x", a) || mgopt_op_set_operand(op, "y", b) ||
        mgopt_op_set_bool(op, "transpose_x", 0) || mgopt_op_set_bool(op, "transpose_y", tb != 0))
      return -1;
    return mgopt__imp_err(mgopt__imp_finish(I, op));
  }
  {
    /* matmul into a fresh value, then add(C) under the node's output name */
    static const char *const slots[2] = {"x", "y"};
    mgopt_value *vals[2];
    mgopt_op *mm;
    mgopt_diag d2;
    char buf[160];
    snprintf(buf, sizeof buf, "%.100s_matmul", I->node->noutputs ? mgopt__imp_intern(I, I->node->outputs[0]) : "gemm");
    vals[0] = a;
    vals[1] = b;
    mm = mgopt_build_op(I->p, I->b, NULL, "matmul", mgopt_program_fresh_name(I->p, buf), 2, slots, vals, 1);
    if (!mm || mgopt_op_set_bool(mm, "transpose_x", 0) || mgopt_op_set_bool(mm, "transpose_y", tb != 0)) return -1;
    mgopt_diag_clear(&d2);
    if (mgopt_op_infer(I->p, mm, &d2)) return mgopt__imp_fail(I, MGOPT_ERR_TYPE, "Gemm: %s", d2.msg), -1;
    op = mgopt__imp_op(I, "add", 1, 0);
    if (!op || mgopt_op_set_operand(op, "x", mm->outs[0]) || mgopt_op_set_operand(op, "y", c)) return -1;
    return mgopt__imp_err(mgopt__imp_finish(I, op));
  }
}

/* Spatial attributes shared by Conv, ConvTranspose and the pools: strides,
   dilations and MIL pad [b0, e0, b1, e1, ...] from ONNX [b0, b1, ..., e0, e1, ...].
   Returns 0 when the auto_pad mode has no exact MIL form. */
static int mgopt__imp_spatial(mgopt__imp *I, mgopt_op *op, int64_t nsp, int with_dil) {
  const int64_t *v = NULL;
  int64_t n, i, *pad;
  const char *pad_type = "custom";
  const mgopt_onnx_attribute *ap = mgopt__imp_attr(I->node, "auto_pad");
  if (ap && !mgopt__imp_streq(ap->s, "NOTSET")) {
    if (mgopt__imp_streq(ap->s, "VALID")) pad_type = "valid";
    else if (mgopt__imp_streq(ap->s, "SAME_UPPER")) pad_type = "same";
    else if (mgopt__imp_streq(ap->s, "SAME_LOWER")) pad_type = "same_lower";
    else return 0;
  }
  n = mgopt__imp_aints(I->node, "strides", &v);
  if (n >= 0 && n != nsp) return 0;
  if (n >= 0 && mgopt_op_set_ints(op, "strides", v, n)) return -1;
  n = mgopt__imp_aints(I->node, "dilations", &v);
  if (n >= 0 && n != nsp) return 0;
  if (n >= 0) {
    if (!with_dil) {
      for (i = 0; i < n; i++)
        if (v[i] != 1) return 0;
    } else if (mgopt_op_set_ints(op, "dilations", v, n)) {
      return -1;
    }
  }
  if (mgopt_op_set_string(op, "pad_type", pad_type)) return -1;
  if (strcmp(pad_type, "custom") == 0) {
    pad = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(2 * nsp + 1), 8);
    if (!pad) return -1;
    n = mgopt__imp_aints(I->node, "pads", &v);
    if (n >= 0 && n != 2 * nsp) return 0;
    for (i = 0; i < nsp; i++) {
      pad[2 * i] = n >= 0 ? v[i] : 0;
      pad[2 * i + 1] = n >= 0 ? v[nsp + i] : 0;
      if (pad[2 * i] < 0 || pad[2 * i + 1] < 0) return 0;
    }
    if (mgopt_op_set_ints(op, "pad", pad, 2 * nsp)) return -1;
  }
  return 1;
}

static int mgopt__imp_conv_like(mgopt__imp *I, const char *type) {
  mgopt_value *x = mgopt__imp_in(I, 0), *w = mgopt__imp_in(I, 1), *bias = mgopt__imp_in(I, 2);
  int r = mgopt__imp_rank(x), k;
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || !w || w->type.dtype != x->type.dtype || r < 3 || mgopt__imp_rank(w) != r) return 0;
  if (bias && bias->type.dtype != x->type.dtype) return 0;
  if (strcmp(type, "conv_transpose") == 0 &&
      (mgopt__imp_attr(I->node, "output_padding") || mgopt__imp_attr(I->node, "output_shape")))
    return 0;
  {
    const int64_t *ks = NULL;
    int64_t nk = mgopt__imp_aints(I->node, "kernel_shape", &ks), i;
    if (nk >= 0) {
      if (nk != r - 2) return 0;
      for (i = 0; i < nk; i++)
        if (!mgopt_dim_is_static(w->type.dims[i + 2]) || w->type.dims[i + 2].v != ks[i]) return 0;
    }
  }
  /* build detached first so a mode without an exact form leaves nothing behind */
  op = mgopt_op_new(I->p, type, 1, 0);
  if (!op) return -1;
  k = mgopt__imp_spatial(I, op, r - 2, 1);
  if (k <= 0) return k;
  if (mgopt_op_set_int(op, "groups", mgopt__imp_aint(I->node, "group", 1))) return -1;
  if (mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "weight", w)) return -1;
  if (bias && mgopt_op_set_operand(op, "bias", bias)) return -1;
  if (I->node->name.len) op->name = mgopt__imp_intern(I, I->node->name);
  op->outs[0]->name = mgopt__imp_intern(I, I->node->outputs[0]);
  mgopt_op_append(op, I->b);
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}
static int mgopt__imp_conv(mgopt__imp *I) { return mgopt__imp_conv_like(I, "conv"); }
static int mgopt__imp_conv_transpose(mgopt__imp *I) { return mgopt__imp_conv_like(I, "conv_transpose"); }

static int mgopt__imp_pool(mgopt__imp *I, int is_max) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int r = mgopt__imp_rank(x), k;
  const int64_t *ks = NULL;
  int64_t nk = mgopt__imp_aints(I->node, "kernel_shape", &ks);
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || r < 3 || nk != r - 2 || mgopt__imp_nout(I->node) != 1) return 0;
  if (is_max && mgopt__imp_aint(I->node, "storage_order", 0) != 0) return 0;
  op = mgopt_op_new(I->p, is_max ? "max_pool" : "avg_pool", 1, 0);
  if (!op) return -1;
  k = mgopt__imp_spatial(I, op, r - 2, 0);
  if (k <= 0) return k;
  if (mgopt_op_set_ints(op, "kernel_sizes", ks, nk) ||
      mgopt_op_set_bool(op, "ceil_mode", mgopt__imp_aint(I->node, "ceil_mode", 0) != 0))
    return -1;
  if (!is_max && mgopt_op_set_bool(op, "exclude_padding_from_average",
                                   mgopt__imp_aint(I->node, "count_include_pad", 0) == 0))
    return -1;
  if (mgopt_op_set_operand(op, "x", x)) return -1;
  if (I->node->name.len) op->name = mgopt__imp_intern(I, I->node->name);
  op->outs[0]->name = mgopt__imp_intern(I, I->node->outputs[0]);
  mgopt_op_append(op, I->b);
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}
static int mgopt__imp_maxpool(mgopt__imp *I) { return mgopt__imp_pool(I, 1); }
static int mgopt__imp_avgpool(mgopt__imp *I) { return mgopt__imp_pool(I, 0); }

static int mgopt__imp_reduce_like(mgopt__imp *I, const char *type, int64_t axes_input_from) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int64_t *axes = NULL, n = mgopt__imp_axes(I, 1, axes_input_from, &axes);
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || n == -1) return 0;
  if (n == 0 || (n == -2 && mgopt__imp_aint(I->node, "noop_with_empty_axes", 0))) return 0;
  op = mgopt__imp_op(I, type, 1, 0);
  /* axes, then keep_dims: the order GlobalAveragePool's reduce_mean has too */
  if (!op || mgopt_op_set_operand(op, "x", x) || (n > 0 && mgopt_op_set_ints(op, "axes", axes, n)) ||
      mgopt_op_set_bool(op, "keep_dims", mgopt__imp_aint(I->node, "keepdims", 1) != 0))
    return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}
static int mgopt__imp_reduce_sum(mgopt__imp *I) { return mgopt__imp_reduce_like(I, "reduce_sum", 13); }
static int mgopt__imp_reduce_mean(mgopt__imp *I) { return mgopt__imp_reduce_like(I, "reduce_mean", 18); }
static int mgopt__imp_reduce_max(mgopt__imp *I) { return mgopt__imp_reduce_like(I, "reduce_max", 18); }
static int mgopt__imp_reduce_min(mgopt__imp *I) { return mgopt__imp_reduce_like(I, "reduce_min", 18); }
static int mgopt__imp_reduce_prod(mgopt__imp *I) { return mgopt__imp_reduce_like(I, "reduce_prod", 18); }

static int mgopt__imp_global_avgpool(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int r = mgopt__imp_rank(x);
  int64_t axes[64], i;
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || r < 3 || r > 64) return 0;
  for (i = 2; i < r; i++) axes[i - 2] = i;
  op = mgopt__imp_op(I, "reduce_mean", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_ints(op, "axes", axes, r - 2) ||
      mgopt_op_set_bool(op, "keep_dims", 1))
    return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

static int mgopt__imp_batchnorm(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0), *g = mgopt__imp_in(I, 1), *b = mgopt__imp_in(I, 2), *m = mgopt__imp_in(I, 3),
              *v = mgopt__imp_in(I, 4);
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || !g || !b || !m || !v || mgopt__imp_nout(I->node) != 1) return 0;
  if (mgopt__imp_aint(I->node, "training_mode", 0) || (I->opset < 7 && mgopt__imp_aint(I->node, "is_test", 0) == 0))
    return 0;
  if (g->type.dtype != x->type.dtype || b->type.dtype != x->type.dtype || m->type.dtype != x->type.dtype ||
      v->type.dtype != x->type.dtype || mgopt__imp_rank(x) < 2)
    return 0;
  op = mgopt__imp_op(I, "batch_norm", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "mean", m) ||
      mgopt_op_set_operand(op, "variance", v) || mgopt_op_set_operand(op, "gamma", g) ||
      mgopt_op_set_operand(op, "beta", b) ||
      mgopt_op_set_float(op, "epsilon", mgopt__imp_afloat(I->node, "epsilon", (double)1e-5f)))
    return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

static int mgopt__imp_instancenorm(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0), *g = mgopt__imp_in(I, 1), *b = mgopt__imp_in(I, 2);
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || !g || !b || mgopt__imp_rank(x) < 3 || g->type.dtype != x->type.dtype) return 0;
  op = mgopt__imp_op(I, "instance_norm", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "gamma", g) ||
      mgopt_op_set_operand(op, "beta", b) ||
      mgopt_op_set_float(op, "epsilon", mgopt__imp_afloat(I->node, "epsilon", (double)1e-5f)))
    return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

static int mgopt__imp_layernorm(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0), *g = mgopt__imp_in(I, 1), *b = mgopt__imp_in(I, 2);
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", -1), axes[64], i, n = 0;
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || !g || r < 1 || r > 64 || mgopt__imp_nout(I->node) != 1) return 0;
  if (mgopt__imp_aint(I->node, "stash_type", 1) != 1) return 0;
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return 0;
  for (i = axis; i < r; i++) axes[n++] = i;
  /* gamma and beta must cover exactly the normalised dims (no broadcasting from a lower rank) */
  if (mgopt__imp_rank(g) != n || (b && mgopt__imp_rank(b) != n)) return 0;
  op = mgopt__imp_op(I, "layer_norm", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "gamma", g) ||
      mgopt_op_set_ints(op, "axes", axes, n) ||
      mgopt_op_set_float(op, "epsilon", mgopt__imp_afloat(I->node, "epsilon", (double)1e-5f)))
    return -1;
  if (b && mgopt_op_set_operand(op, "beta", b)) return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

/* Constant pads [b0, b1, ..., e0, e1, ...] over every dim -> MIL's [b0, e0, b1, e1, ...]. */
static int mgopt__imp_pad(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0), *c;
  int r = mgopt__imp_rank(x);
  int64_t *pads = NULL, n, i, *mp;
  const int64_t *ap = NULL;
  double cval = 0.0;
  const char *mode = "constant";
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || r < 1) return 0;
  if (mgopt__imp_astr(I->node, "mode", "reflect")) mode = "reflect";
  else if (mgopt__imp_astr(I->node, "mode", "edge")) mode = "replicate";
  else if (mgopt__imp_attr(I->node, "mode") && !mgopt__imp_astr(I->node, "mode", "constant")) return 0;
  if (I->opset < 11) {
    n = mgopt__imp_aints(I->node, "pads", &ap);
    if (n < 0) n = mgopt__imp_aints(I->node, "paddings", &ap);
    pads = (int64_t *)(uintptr_t)ap;
    cval = mgopt__imp_afloat(I->node, "value", 0.0);
  } else {
    mgopt_value *cv = mgopt__imp_in(I, 2);
    n = mgopt__imp_const_ints(I, mgopt__imp_in(I, 1), &pads);
    if (I->node->ninputs > 3 && I->node->inputs[3].len) return 0; /* axes input */
    if (cv) {
      mgopt_tensor *t = mgopt_value_const(cv);
      if (!t || t->numel != 1) return 0;
      cval = mgopt_tensor_get_f64(t, 0);
    }
  }
  if (n != 2 * r) return 0;
  mp = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(2 * r), 8);
  if (!mp) return -1;
  for (i = 0; i < r; i++) {
    mp[2 * i] = pads[i];
    mp[2 * i + 1] = pads[r + i];
    if (mp[2 * i] < 0 || mp[2 * i + 1] < 0) return 0; /* cropping pads */
    if (strcmp(mode, "constant") != 0 && (mp[2 * i] || mp[2 * i + 1]) && i < r - 2) return 0;
  }
  c = mgopt__imp_const_i32s(I, NULL, "pad", mp, 2 * r);
  if (!c) return 0;
  op = mgopt__imp_op(I, "pad", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "pad", c) ||
      mgopt_op_set_string(op, "mode", mode) || mgopt_op_set_float(op, "constant_val", cval))
    return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

static int mgopt__imp_tile(mgopt__imp *I) {
  mgopt_value *x = mgopt__imp_in(I, 0), *reps = mgopt__imp_in(I, 1);
  mgopt_op *op;
  if (!x || !reps || I->opset < 6 || !mgopt__imp_known_dtype(x)) return 0;
  op = mgopt__imp_op(I, "tile", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "reps", reps)) return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

/* Constant node -> const op (remembering it was a node, for export). */
static int mgopt__imp_constant(mgopt__imp *I) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(I->node, "value");
  mgopt_tensor *t = NULL;
  mgopt_op *op;
  int64_t one = 1;
  if (I->node->nattributes != 1 || mgopt__imp_nout(I->node) != 1) return 0;
  if (a && a->type == MGOPT_ONNX_ATTR_TENSOR && a->t) {
    t = mgopt__imp_tensor(I, a->t);
    if (!t) return -1;
  } else if ((a = mgopt__imp_attr(I->node, "value_float")) != NULL && a->type == MGOPT_ONNX_ATTR_FLOAT) {
    t = mgopt_tensor_new_scalar_f64(I->p, MGOPT_DT_FP32, (double)a->f);
  } else if ((a = mgopt__imp_attr(I->node, "value_int")) != NULL && a->type == MGOPT_ONNX_ATTR_INT) {
    t = mgopt_tensor_new_scalar_i64(I->p, MGOPT_DT_INT64, a->i);
  } else if ((a = mgopt__imp_attr(I->node, "value_floats")) != NULL && a->type == MGOPT_ONNX_ATTR_FLOATS) {
    int64_t i;
    one = a->nfloats;
    t = mgopt_tensor_new(I->p, MGOPT_DT_FP32, 1, &one);
    if (t)
      for (i = 0; i < one; i++) mgopt_tensor_set_f64(t, i, (double)a->floats[i]);
  } else if ((a = mgopt__imp_attr(I->node, "value_ints")) != NULL && a->type == MGOPT_ONNX_ATTR_INTS) {
    int64_t i;
    one = a->nints;
    t = mgopt_tensor_new(I->p, MGOPT_DT_INT64, 1, &one);
    if (t)
      for (i = 0; i < one; i++) mgopt_tensor_set_i64(t, i, a->ints[i]);
  } else {
    return 0; /* string and sparse constants stay opaque */
  }
  if (!t) return -1;
  op = mgopt__imp_op(I, "const", 1, 0);
  if (!op || mgopt_op_set_tensor(op, "val", t)) return -1;
  op->flags |= MGOPT_OP_ONNX_CONSTANT_NODE;
  if (mgopt_type_make_static(I->p, &op->outs[0]->type, (mgopt_dtype)t->dtype, t->rank, t->shape)) return -1;
  return mgopt__imp_err(mgopt__imp_finish(I, op));
}

/* ---------------------------------------------------------------- the op table */

typedef struct mgopt__imp_entry {
  const char *name;
  mgopt__imp_fn fn;
} mgopt__imp_entry;

/* Sorted by name for binary search. */
static const mgopt__imp_entry mgopt__imp_table[] = {
    {"Abs", mgopt__imp_abs},
    {"Add", mgopt__imp_add},
    {"And", mgopt__imp_and},
    {"AveragePool", mgopt__imp_avgpool},
    {"BatchNormalization", mgopt__imp_batchnorm},
    {"Cast", mgopt__imp_cast},
    {"Ceil", mgopt__imp_ceil},
    {"Clip", mgopt__imp_clip},
    {"Concat", mgopt__imp_concat},
    {"Constant", mgopt__imp_constant},
    {"Conv", mgopt__imp_conv},
    {"ConvTranspose", mgopt__imp_conv_transpose},
    {"Cos", mgopt__imp_cos},
    {"Div", mgopt__imp_div},
    {"Dropout", mgopt__imp_dropout},
    {"Equal", mgopt__imp_equal},
    {"Erf", mgopt__imp_erf},
    {"Exp", mgopt__imp_exp},
    {"Flatten", mgopt__imp_flatten},
    {"Floor", mgopt__imp_floor},
    {"Gather", mgopt__imp_gather},
    {"Gelu", mgopt__imp_gelu},
    {"Gemm", mgopt__imp_gemm},
    {"GlobalAveragePool", mgopt__imp_global_avgpool},
    {"Greater", mgopt__imp_greater},
    {"GreaterOrEqual", mgopt__imp_greater_equal},
    {"Identity", mgopt__imp_identity},
    {"InstanceNormalization", mgopt__imp_instancenorm},
    {"LayerNormalization", mgopt__imp_layernorm},
    {"LeakyRelu", mgopt__imp_leaky_relu},
    {"Less", mgopt__imp_less},
    {"LessOrEqual", mgopt__imp_less_equal},
    {"Log", mgopt__imp_log},
    {"MatMul", mgopt__imp_matmul},
    {"Max", mgopt__imp_max},
    {"MaxPool", mgopt__imp_maxpool},
    {"Min", mgopt__imp_min},
    {"Mul", mgopt__imp_mul},
    {"Not", mgopt__imp_not},
    {"Or", mgopt__imp_or},
    {"Pad", mgopt__imp_pad},
    {"Pow", mgopt__imp_pow},
    {"ReduceMax", mgopt__imp_reduce_max},
    {"ReduceMean", mgopt__imp_reduce_mean},
    {"ReduceMin", mgopt__imp_reduce_min},
    {"ReduceProd", mgopt__imp_reduce_prod},
    {"ReduceSum", mgopt__imp_reduce_sum},
    {"Relu", mgopt__imp_relu},
    {"Reshape", mgopt__imp_reshape},
    {"Sigmoid", mgopt__imp_sigmoid},
    {"Sin", mgopt__imp_sin},
    {"Slice", mgopt__imp_slice},
    {"Softmax", mgopt__imp_softmax},
    {"Split", mgopt__imp_split},
    {"Sqrt", mgopt__imp_sqrt},
    {"Squeeze", mgopt__imp_squeeze},
    {"Sub", mgopt__imp_sub},
    {"Tanh", mgopt__imp_tanh},
    {"Tile", mgopt__imp_tile},
    {"Transpose", mgopt__imp_transpose},
    {"Unsqueeze", mgopt__imp_unsqueeze},
    {"Where", mgopt__imp_where},
    {"Xor", mgopt__imp_xor},
};

static mgopt__imp_fn mgopt__imp_lookup(mgopt_str op) {
  int lo = 0, hi = MGOPT__ARRAY_COUNT(mgopt__imp_table) - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    const char *n = mgopt__imp_table[mid].name;
    size_t nl = strlen(n), m = nl < op.len ? nl : op.len;
    int c = m ? memcmp(n, op.ptr, m) : 0;
    if (c == 0) c = nl < op.len ? -1 : nl > op.len ? 1 : 0;
    if (c == 0) return mgopt__imp_table[mid].fn;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return NULL;
}

/* ---------------------------------------------------------------- graphs */

static mgopt_status mgopt__imp_node(mgopt__imp *I, const mgopt_onnx_node *n) {
  mgopt__imp_fn fn = NULL;
  int64_t i;
  I->node = n;
  for (i = 0; i < n->ninputs; i++)
    if (n->inputs[i].len && !mgopt__imp_in(I, i))
      return mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "node '%.*s' (%.*s): input '%.*s' is not defined before it",
                             (int)(n->name.len > 60 ? 60 : n->name.len), n->name.ptr ? n->name.ptr : "",
                             (int)(n->op_type.len > 60 ? 60 : n->op_type.len), n->op_type.ptr ? n->op_type.ptr : "",
                             (int)(n->inputs[i].len > 80 ? 80 : n->inputs[i].len), n->inputs[i].ptr);
  for (i = 0; i < n->noutputs; i++) {
    const char *nm;
    if (!n->outputs[i].len) continue;
    nm = mgopt__imp_intern(I, n->outputs[i]);
    if (!nm) return MGOPT_ERR_NOMEM;
    if (mgopt__imap_get(&I->values, nm))
      return mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "value '%s' is defined twice", nm);
  }
  if (n->domain.len == 0 || mgopt__imp_streq(n->domain, "ai.onnx")) fn = mgopt__imp_lookup(n->op_type);
  /* the mappings read the first output's name: a node without it stays opaque */
  if (fn && (n->noutputs < 1 || !n->outputs[0].len)) fn = NULL;
  if (fn) {
    mgopt_op *last = I->b->last;
    int64_t mark = I->values.nundo;
    int r;
    I->infer_failed = 0;
    r = fn(I);
    /* a mapping whose canonical op rejects the types (a squeezed dim not known
       to be 1, say: ONNX checks that at run time) is declined, not an error:
       the names it bound are unbound and the node stays opaque */
    if (r < 0 && I->infer_failed && !I->values.oom) {
      mgopt__imap_pop(&I->values, mark);
      if (I->d) mgopt_diag_clear(I->d);
      r = 0;
    }
    if (r < 0) return I->d && I->d->status ? I->d->status : MGOPT_ERR_NOMEM;
    if (r > 0) return MGOPT_OK;
    /* declined: anything it left behind must go before the opaque fallback */
    while (I->b->last != last && I->b->last) {
      mgopt_op *o = I->b->last;
      int32_t k, used = 0;
      for (k = 0; k < o->nouts; k++) used |= o->outs[k]->nuses != 0;
      if (used) break;
      mgopt_op_erase(o);
    }
  }
  return mgopt__imp_opaque(I);
}

/* The order to import g's nodes in: the given order when every node's inputs
   are defined before it (the ONNX rule), else a topological order (Kahn's
   algorithm, ties by original position). *order gets n indices (heap memory,
   caller frees); MGOPT_ERR_CORRUPT on a cycle. */
static mgopt_status mgopt__imp_order(mgopt__imp *I, const mgopt_onnx_graph *g, int64_t **order) {
  const mgopt_allocator *al = &I->p->alloc;
  int64_t n = g->nnodes, i, k, *ord, *indeg, *start, *adj, *heap, nheap = 0, nemit = 0, nedges = 0;
  mgopt__imap prod;
  int sorted = 1;
  mgopt_status s = MGOPT_OK;
  size_t words;
  *order = NULL;
  if (n > ((int64_t)1 << 40)) return mgopt__imp_fail(I, MGOPT_ERR_LIMIT, "too many nodes");
  memset(&prod, 0, sizeof prod);
  prod.al = al;
  for (i = 0; i < n; i++)
    for (k = 0; k < g->nodes[i].noutputs; k++)
      if (g->nodes[i].outputs[k].len) mgopt__imap_put(&prod, mgopt__imp_intern(I, g->nodes[i].outputs[k]), (void *)(uintptr_t)(i + 1));
  for (i = 0; i < n && sorted; i++)
    for (k = 0; k < g->nodes[i].ninputs; k++) {
      uintptr_t j;
      if (!g->nodes[i].inputs[k].len) continue;
      j = (uintptr_t)mgopt__imap_get(&prod, mgopt__imp_intern(I, g->nodes[i].inputs[k]));
      if (j && (int64_t)j - 1 >= i) sorted = 0;
    }
  words = (size_t)(n + 1) * 4;
  ord = (int64_t *)mgopt__heap_realloc(al, NULL, 0, sizeof(int64_t) * words);
  if (!ord || prod.oom) {
    mgopt__imap_free(&prod);
    if (ord) mgopt__heap_free(al, ord, sizeof(int64_t) * words);
    return mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory");
  }
  if (sorted) {
    for (i = 0; i < n; i++) ord[i] = i;
    mgopt__imap_free(&prod);
    *order = ord;
    return MGOPT_OK;
  }
  indeg = ord + (n + 1);
  start = indeg + (n + 1);
  heap = start + (n + 1);
  memset(indeg, 0, sizeof(int64_t) * (size_t)(n + 1) * 3);
  /* edges producer -> consumer, in CSR form */
  for (i = 0; i < n; i++)
    for (k = 0; k < g->nodes[i].ninputs; k++) {
      uintptr_t j = g->nodes[i].inputs[k].len ? (uintptr_t)mgopt__imap_get(&prod, mgopt__imp_intern(I, g->nodes[i].inputs[k])) : 0;
      if (j) {
        indeg[i]++;
        start[j - 1]++;
        nedges++;
      }
    }
  adj = (int64_t *)mgopt__heap_realloc(al, NULL, 0, sizeof(int64_t) * (size_t)(nedges + 1));
  if (!adj) {
    s = mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory");
    goto out;
  }
  {
    int64_t acc = 0;
    for (i = 0; i <= n; i++) {
      int64_t c = start[i];
      start[i] = acc;
      acc += c;
    }
  }
  {
    /* fill: a cursor per producer, reusing heap[] as scratch */
    for (i = 0; i <= n; i++) heap[i] = start[i];
    for (i = 0; i < n; i++)
      for (k = 0; k < g->nodes[i].ninputs; k++) {
        uintptr_t j = g->nodes[i].inputs[k].len ? (uintptr_t)mgopt__imap_get(&prod, mgopt__imp_intern(I, g->nodes[i].inputs[k])) : 0;
        if (j) adj[heap[j - 1]++] = i;
      }
  }
  /* binary min-heap of ready nodes */
  for (i = 0; i < n; i++)
    if (indeg[i] == 0) {
      int64_t c = nheap++;
      heap[c] = i;
      while (c > 0 && heap[(c - 1) / 2] > heap[c]) {
        int64_t t = heap[c];
        heap[c] = heap[(c - 1) / 2];
        heap[(c - 1) / 2] = t;
        c = (c - 1) / 2;
      }
    }
  while (nheap > 0) {
    int64_t top = heap[0], c = 0, e;
    heap[0] = heap[--nheap];
    for (;;) {
      int64_t l = 2 * c + 1, r = l + 1, m = c, t;
      if (l < nheap && heap[l] < heap[m]) m = l;
      if (r < nheap && heap[r] < heap[m]) m = r;
      if (m == c) break;
      t = heap[c];
      heap[c] = heap[m];
      heap[m] = t;
      c = m;
    }
    ord[nemit++] = top;
    for (e = start[top]; e < (top + 1 <= n ? start[top + 1] : nedges); e++) {
      int64_t x = adj[e];
      if (--indeg[x] == 0) {
        int64_t q = nheap++;
        heap[q] = x;
        while (q > 0 && heap[(q - 1) / 2] > heap[q]) {
          int64_t t = heap[q];
          heap[q] = heap[(q - 1) / 2];
          heap[(q - 1) / 2] = t;
          q = (q - 1) / 2;
        }
      }
    }
  }
  if (nemit != n) s = mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "the graph has a cycle: %lld of %lld nodes cannot be ordered",
                                      (long long)(n - nemit), (long long)n);
out:
  if (adj) mgopt__heap_free(al, adj, sizeof(int64_t) * (size_t)(nedges + 1));
  mgopt__imap_free(&prod);
  if (s) mgopt__heap_free(al, ord, sizeof(int64_t) * words);
  else *order = ord;
  return s;
}

/* Imports graph g into block b: inputs become block args (for `main`, only the
   inputs without an initializer), initializers const ops, nodes ops, outputs
   block outputs. */
static mgopt_status mgopt__imp_graph(mgopt__imp *I, const mgopt_onnx_graph *g, mgopt_block *b, int is_main) {
  int64_t i;
  mgopt_status s;
  mgopt__imap inits;
  memset(&inits, 0, sizeof inits);
  inits.al = &I->p->alloc;
  I->b = b;
  I->node = NULL;
  if (g->nsparse_initializers)
    return mgopt__imp_fail(I, MGOPT_ERR_UNSUPPORTED, "sparse initializers are not supported");
  for (i = 0; i < g->nvalue_info; i++) mgopt__imap_put(&I->vinfo, mgopt__imp_intern(I, g->value_info[i].name), g->value_info[i].type);
  for (i = 0; i < g->noutputs; i++) mgopt__imap_put(&I->vinfo, mgopt__imp_intern(I, g->outputs[i].name), g->outputs[i].type);
  for (i = 0; i < g->ninitializers; i++) mgopt__imap_put(&inits, mgopt__imp_intern(I, g->initializers[i].name), &g->initializers[i]);
  if (inits.oom || I->vinfo.oom) {
    mgopt__imap_free(&inits);
    return mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory");
  }
  for (i = 0; i < g->ninputs; i++) {
    const char *nm = mgopt__imp_intern(I, g->inputs[i].name);
    mgopt_type t;
    mgopt_value *v;
    if (!nm) return MGOPT_ERR_NOMEM;
    if (is_main && mgopt__imap_get(&inits, nm)) continue; /* an input with a default: the initializer */
    if ((s = mgopt__imp_type(I, g->inputs[i].type, &t)) != MGOPT_OK) goto out;
    v = mgopt_block_add_arg(b, nm, &t);
    if (!v) {
      s = MGOPT_ERR_NOMEM;
      goto out;
    }
    mgopt__imap_put(&I->values, nm, v);
  }
  for (i = 0; i < g->ninitializers; i++) {
    const mgopt_onnx_tensor *ot = &g->initializers[i];
    const char *nm = mgopt__imp_intern(I, ot->name);
    mgopt_tensor *t;
    mgopt_value *v;
    if (!nm || !nm[0]) {
      s = mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "an initializer has no name");
      goto out;
    }
    t = mgopt__imp_tensor(I, ot);
    if (!t) {
      s = I->d && I->d->status ? I->d->status : MGOPT_ERR_NOMEM;
      goto out;
    }
    v = mgopt_build_const(I->p, b, NULL, nm, t);
    if (!v) {
      s = MGOPT_ERR_NOMEM;
      goto out;
    }
    mgopt__imap_put(&I->values, nm, v);
  }
  {
    int64_t *order = NULL;
    if ((s = mgopt__imp_order(I, g, &order)) != MGOPT_OK) goto out;
    for (i = 0; i < g->nnodes; i++) {
      if ((s = mgopt__imp_node(I, &g->nodes[order[i]])) != MGOPT_OK) break;
      I->b = b;
    }
    mgopt__heap_free(&I->p->alloc, order, sizeof(int64_t) * (size_t)(g->nnodes + 1) * 4);
    if (s) goto out;
  }
  I->node = NULL;
  for (i = 0; i < g->noutputs; i++) {
    const char *nm = mgopt__imp_intern(I, g->outputs[i].name);
    mgopt_value *v = (mgopt_value *)mgopt__imap_get(&I->values, nm);
    if (!v) {
      s = mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "graph output '%s' is not produced by any node", nm ? nm : "");
      goto out;
    }
    if (mgopt_block_add_output(b, v)) {
      s = MGOPT_ERR_NOMEM;
      goto out;
    }
  }
  s = I->values.oom || I->vinfo.oom ? mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory") : MGOPT_OK;
  if (!s) {
    /* constants nothing reads (an input a mapping turned into an attribute or
       rewrote in another dtype) go, so a round trip reaches a fixed point */
    mgopt_op *op, *prev;
    for (op = b->last; op; op = prev) {
      prev = op->prev;
      if (op->kind == MGOPT_OP_const && op->outs[0]->nuses == 0) mgopt_op_erase(op);
    }
  }
out:
  mgopt__imap_free(&inits);
  return s;
}

MGOPTDEF mgopt_status mgopt_onnx_import(mgopt_onnx_model *m, mgopt_diag *d) {
  mgopt__imp I;
  mgopt_function *f;
  mgopt_status s;
  int64_t i;
  if (!m || !m->program || !m->graph) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "import: the model has no graph");
  memset(&I, 0, sizeof I);
  I.p = m->program;
  I.m = m;
  I.d = d;
  I.values.al = &I.p->alloc;
  I.vinfo.al = &I.p->alloc;
  I.opset = 1;
  for (i = 0; i < m->nopset_imports; i++)
    if (m->opset_imports[i].domain.len == 0 || mgopt__imp_streq(m->opset_imports[i].domain, "ai.onnx"))
      I.opset = m->opset_imports[i].version;
  if (mgopt_program_function(I.p, "main"))
    return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "import: the program already has a main function");
  f = mgopt_function_new(I.p, "main");
  if (!f) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  s = mgopt__imp_graph(&I, m->graph, f->body, 1);
  mgopt__imap_free(&I.values);
  mgopt__imap_free(&I.vinfo);
  if (s == MGOPT_OK && I.p->status) s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  if (s == MGOPT_OK) I.p->onnx_meta = m;
  return s;
}

MGOPTDEF mgopt_status mgopt_onnx_load(const void *buf, size_t len, const mgopt_onnx_read_options *opts,
                                     mgopt_program **out, mgopt_diag *d) {
  mgopt_onnx_model *m = NULL;
  mgopt_status s = out ? mgopt_onnx_read(buf, len, opts, &m, d) : mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "out is NULL");
  if (s != MGOPT_OK) return s;
  if ((s = mgopt_onnx_import(m, d)) != MGOPT_OK) {
    mgopt_program_destroy(m->program);
    return s;
  }
  *out = m->program;
  return MGOPT_OK;
}

#ifndef MGOPT_NO_STDIO
MGOPTDEF mgopt_status mgopt_onnx_load_file(const char *path, const mgopt_onnx_read_options *opts, mgopt_program **out,
                                          mgopt_diag *d) {
  mgopt_onnx_model *m = NULL;
  mgopt_status s = out ? mgopt_onnx_read_file(path, opts, &m, d) : mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "out is NULL");
  if (s != MGOPT_OK) return s;
  if ((s = mgopt_onnx_import(m, d)) != MGOPT_OK) {
    mgopt_program_destroy(m->program);
    return s;
  }
  *out = m->program;
  return MGOPT_OK;
}
#endif
