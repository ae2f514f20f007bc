/* src/onnx/export_build.c — what the export mappings share: node and attribute building, fresh names, constants made for ONNX inputs, types and tensors as ONNX's. */
#include "convert_internal.h"

MGOPT__PRIVATE void *mgopt__exv_push(mgopt__exp *E, mgopt__exv *v, size_t elem) {
  char *slot;
  if (!mgopt__grow(&E->p->alloc, &v->data, &v->cap, v->n + 1, elem)) return NULL;
  slot = (char *)v->data + (size_t)v->n * elem;
  memset(slot, 0, elem);
  v->n++;
  return slot;
}

MGOPT__PRIVATE void mgopt__exv_free(mgopt__exp *E, mgopt__exv *v, size_t elem) {
  if (v->data) mgopt__heap_free(&E->p->alloc, v->data, (size_t)v->cap * elem);
  memset(v, 0, sizeof *v);
}

/* Moves a vector's contents into the arena; returns the arena copy. */
MGOPT__PRIVATE void *mgopt__exv_take(mgopt__exp *E, mgopt__exv *v, size_t elem, int64_t *count) {
  void *a = NULL;
  *count = v->n;
  if (v->n) a = mgopt__dup(E->p, v->data, (size_t)v->n * elem);
  mgopt__exv_free(E, v, elem);
  return a;
}

MGOPT__PRIVATE mgopt_status mgopt__exp_fail(mgopt__exp *E, mgopt_status s, const char *fmt, ...) {
  va_list ap;
  if (s != MGOPT_ERR_NOMEM && !E->cause) E->cause = s;
  if (!E->d) return s;
  E->d->status = s;
  E->d->op[0] = 0;
  if (E->op) {
    const char *n = E->op->name ? E->op->name : (E->op->nouts && E->op->outs[0]->name) ? E->op->outs[0]->name : "";
    snprintf(E->d->op, sizeof E->d->op, "%.90s", n);
  }
  va_start(ap, fmt);
  vsnprintf(E->d->msg, sizeof E->d->msg, fmt, ap);
  va_end(ap);
  return s;
}

MGOPT__PRIVATE mgopt_str mgopt__exp_s(const char *c) {
  mgopt_str s;
  s.ptr = c ? c : "";
  s.len = c ? strlen(c) : 0;
  return s;
}

/* ---------------------------------------------------------------- types and tensors */

MGOPT__PRIVATE int32_t mgopt__exp_dtype(mgopt_dtype t) {
  int32_t k;
  for (k = 1; k < MGOPT_ONNX_DT__COUNT; k++)
    if (mgopt_onnx_dtype(k) == t && t != MGOPT_DT_UNKNOWN) return k;
  return 0;
}

/* t as an ONNX type; NULL when out of memory, or when ONNX has no such type
   (a state, a dtype without an ONNX code: mgopt__exp_fail says which). */
MGOPT__PRIVATE mgopt_onnx_type *mgopt__exp_type(mgopt__exp *E, const mgopt_type *t) {
  mgopt_onnx_type *ot;
  mgopt_onnx_tensor_type *tt;
  int32_t i;
  if (t->kind == MGOPT_TYPE_STATE) {
    mgopt__exp_fail(E, MGOPT_ERR_UNSUPPORTED, "a state: ONNX has no state type");
    return NULL;
  }
  if (t->kind == MGOPT_TYPE_TENSOR && t->dtype != MGOPT_DT_UNKNOWN && !mgopt__exp_dtype((mgopt_dtype)t->dtype)) {
    mgopt__exp_fail(E, MGOPT_ERR_UNSUPPORTED, "a %s tensor: ONNX has no such data type",
                    mgopt_dtype_name((mgopt_dtype)t->dtype));
    return NULL;
  }
  ot = (mgopt_onnx_type *)mgopt_program_alloc(E->p, sizeof *ot, 8);
  if (!ot) return NULL;
  if (t->kind == MGOPT_TYPE_OTHER) {
    ot->other.ptr = (const char *)t->other;
    ot->other.len = t->other_len;
    return ot;
  }
  tt = (mgopt_onnx_tensor_type *)mgopt_program_alloc(E->p, sizeof *tt, 8);
  if (!tt) return NULL;
  ot->tensor_type = tt;
  tt->elem_type = mgopt__exp_dtype((mgopt_dtype)t->dtype);
  if (tt->elem_type) tt->has |= MGOPT_ONNX_TTYPE_HAS_ELEM_TYPE;
  if (t->rank >= 0) {
    tt->shape = (mgopt_onnx_shape *)mgopt_program_alloc(E->p, sizeof *tt->shape, 8);
    if (!tt->shape) return NULL;
    tt->shape->ndims = t->rank;
    if (t->rank > 0) {
      tt->shape->dims = (mgopt_onnx_dim *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_dim) * (size_t)t->rank, 8);
      if (!tt->shape->dims) return NULL;
    }
    for (i = 0; i < t->rank; i++) {
      mgopt_onnx_dim *od = &tt->shape->dims[i];
      if (t->dims[i].sym) {
        od->has = MGOPT_ONNX_DIM_HAS_PARAM;
        od->param = mgopt__exp_s(t->dims[i].sym);
      } else if (t->dims[i].v >= 0) {
        od->has = MGOPT_ONNX_DIM_HAS_VALUE;
        od->value = t->dims[i].v;
      }
    }
  }
  return ot;
}

/* Why t cannot be an ONNX tensor (formatted in buf), NULL when it can. */
MGOPT__PRIVATE const char *mgopt__exp_tensor_why_not(const mgopt_tensor *t, char *buf, size_t cap) {
  int32_t dt = mgopt__exp_dtype((mgopt_dtype)t->dtype);
  if (!dt) {
    snprintf(buf, cap, "a %s tensor has no ONNX data type", mgopt_dtype_name((mgopt_dtype)t->dtype));
    return buf;
  }
  if (t->dtype != MGOPT_DT_STRING && mgopt_onnx_raw_nbytes(dt, t->numel) < 0) {
    snprintf(buf, cap, "cannot write a %s tensor", mgopt_dtype_name((mgopt_dtype)t->dtype));
    return buf;
  }
  return NULL;
}

/* Fills ot from t (raw_data borrowed from the tensor's bytes where the layouts
   and byte orders agree). */
MGOPT__PRIVATE mgopt_status mgopt__exp_tensor(mgopt__exp *E, const mgopt_tensor *t, const char *name, mgopt_onnx_tensor *ot) {
  int32_t dt = mgopt__exp_dtype((mgopt_dtype)t->dtype);
  int64_t nb, i;
  char why[96];
  memset(ot, 0, sizeof *ot);
  if (mgopt__exp_tensor_why_not(t, why, sizeof why)) return mgopt__exp_fail(E, MGOPT_ERR_UNSUPPORTED, "%s", why);
  ot->data_type = dt;
  ot->has = MGOPT_ONNX_TENSOR_HAS_DATA_TYPE;
  ot->name = mgopt__exp_s(name);
  ot->ndims = t->rank;
  ot->numel = t->numel;
  if (t->rank > 0) {
    ot->dims = (int64_t *)mgopt__dup(E->p, t->shape, sizeof(int64_t) * (size_t)t->rank);
    if (!ot->dims) return mgopt__exp_nomem(E);
  }
  if (t->dtype == MGOPT_DT_STRING) {
    ot->string_data = (mgopt_str *)t->data;
    ot->nstring_data = t->numel;
    return MGOPT_OK;
  }
  nb = mgopt_onnx_raw_nbytes(dt, t->numel);
  ot->has |= MGOPT_ONNX_TENSOR_HAS_RAW_DATA;
  if ((size_t)nb == t->nbytes) {
    size_t unit = mgopt__dtype_swap_unit((mgopt_dtype)t->dtype);
    ot->raw_data.ptr = (const char *)t->data;
    ot->raw_data.len = t->nbytes;
    if (unit > 1 && !mgopt__host_le()) { /* a big-endian host: a little-endian copy */
      char *r = (char *)mgopt__arena_alloc(E->p, t->nbytes ? t->nbytes : 1, 8, 0); /* written whole */
      if (!r) return mgopt__exp_nomem(E);
      mgopt__le_copy(r, t->data, t->nbytes, unit);
      ot->raw_data.ptr = r;
    }
    return MGOPT_OK;
  }
  {
    /* 4-bit types: two per byte, low nibble first */
    uint8_t *r = (uint8_t *)mgopt_program_alloc(E->p, (size_t)nb + 1, 8);
    if (!r) return mgopt__exp_nomem(E);
    for (i = 0; i < t->numel; i++) r[i >> 1] |= (uint8_t)((mgopt_tensor_get_i64(t, i) & 15) << ((i & 1) * 4));
    ot->raw_data.ptr = (const char *)r;
    ot->raw_data.len = (size_t)nb;
  }
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- nodes */

MGOPT__PRIVATE mgopt_onnx_node *mgopt__exp_node(mgopt__exp *E, const char *op_type, const char *domain, const char *name) {
  mgopt_onnx_node *n = (mgopt_onnx_node *)mgopt__exv_push(E, &E->g->nodes, sizeof(mgopt_onnx_node));
  if (!n) return NULL;
  n->op_type = mgopt__exp_s(op_type);
  n->domain = mgopt__exp_s(domain);
  if (name) n->name = mgopt__exp_s(name);
  return n;
}

MGOPT__PRIVATE int mgopt__exp_set_io(mgopt__exp *E, mgopt_str **arr, int64_t *cnt, const char *const *names, int64_t n) {
  int64_t i;
  *arr = (mgopt_str *)mgopt_program_alloc(E->p, sizeof(mgopt_str) * (size_t)(n ? n : 1), 8);
  if (!*arr) return 0;
  for (i = 0; i < n; i++) (*arr)[i] = mgopt__exp_s(names[i]);
  *cnt = n;
  return 1;
}

MGOPT__PRIVATE mgopt_onnx_attribute *mgopt__exp_attr(mgopt__exp *E, mgopt_onnx_node *n, const char *name, int32_t type) {
  mgopt_onnx_attribute *a = (mgopt_onnx_attribute *)mgopt_program_alloc(
      E->p, sizeof(mgopt_onnx_attribute) * (size_t)(n->nattributes + 1), 8);
  if (!a) return NULL;
  if (n->nattributes) memcpy(a, n->attributes, sizeof(mgopt_onnx_attribute) * (size_t)n->nattributes);
  n->attributes = a;
  a = &a[n->nattributes++];
  a->name = mgopt__exp_s(name);
  a->type = type;
  a->has = MGOPT_ONNX_ATTR_HAS_TYPE;
  return a;
}

MGOPT__PRIVATE int mgopt__exp_aint(mgopt__exp *E, mgopt_onnx_node *n, const char *name, int64_t v) {
  mgopt_onnx_attribute *a = mgopt__exp_attr(E, n, name, MGOPT_ONNX_ATTR_INT);
  if (!a) return 0;
  a->i = v;
  a->has |= MGOPT_ONNX_ATTR_HAS_I;
  return 1;
}

MGOPT__PRIVATE int mgopt__exp_afloat(mgopt__exp *E, mgopt_onnx_node *n, const char *name, double v) {
  mgopt_onnx_attribute *a = mgopt__exp_attr(E, n, name, MGOPT_ONNX_ATTR_FLOAT);
  if (!a) return 0;
  a->f = (float)v;
  a->has |= MGOPT_ONNX_ATTR_HAS_F;
  return 1;
}

MGOPT__PRIVATE int mgopt__exp_astr(mgopt__exp *E, mgopt_onnx_node *n, const char *name, const char *v) {
  mgopt_onnx_attribute *a = mgopt__exp_attr(E, n, name, MGOPT_ONNX_ATTR_STRING);
  if (!a) return 0;
  a->s = mgopt__exp_s(v);
  a->has |= MGOPT_ONNX_ATTR_HAS_S;
  return 1;
}

MGOPT__PRIVATE int mgopt__exp_aints(mgopt__exp *E, mgopt_onnx_node *n, const char *name, const int64_t *v, int64_t cnt) {
  mgopt_onnx_attribute *a = mgopt__exp_attr(E, n, name, MGOPT_ONNX_ATTR_INTS);
  if (!a) return 0;
  a->ints = (int64_t *)mgopt__dup(E->p, v, sizeof(int64_t) * (size_t)(cnt ? cnt : 1));
  a->nints = cnt;
  return a->ints != NULL;
}

MGOPT__PRIVATE int mgopt__exp_afloats(mgopt__exp *E, mgopt_onnx_node *n, const char *name, const float *v, int64_t cnt) {
  mgopt_onnx_attribute *a = mgopt__exp_attr(E, n, name, MGOPT_ONNX_ATTR_FLOATS);
  if (!a) return 0;
  a->floats = (float *)mgopt__dup(E->p, v, sizeof(float) * (size_t)(cnt ? cnt : 1));
  a->nfloats = cnt;
  return a->floats != NULL;
}


/* "<base>_mgopt_<k>" for the smallest k this export has not used and no
   value of the model holds. */
MGOPT__PRIVATE const char *mgopt__exp_fresh(mgopt__exp *E, const char *base) {
  char buf[200];
  const char *b;
  mgopt__map_slot *sl;
  int r;
  snprintf(buf, sizeof buf, "%.120s_mgopt", base ? base : "v");
  b = mgopt_program_intern_cstr(E->p, buf);
  if (!b) return NULL;
  if (!(sl = mgopt__map_get(&E->fresh, mgopt__map_ptr_key(b), NULL))) return NULL;
  for (;;) {
    const char *name;
    snprintf(buf, sizeof buf, "%s_%llu", b, (unsigned long long)sl->v.u++);
    name = mgopt_program_intern_cstr(E->p, buf);
    if (!name) return NULL;
    r = mgopt__exp_claim(E, name);
    if (r < 0) return NULL;
    if (r) return name;
  }
}

/* An int64 1-d initializer (a Constant node in a graph that holds none) named fresh; returns its name. */
MGOPT__PRIVATE const char *mgopt__exp_i64_const(mgopt__exp *E, const char *base, const int64_t *v, int64_t n) {
  mgopt_tensor *t = mgopt_tensor_new(E->p, MGOPT_DT_INT64, 1, &n);
  if (!t) return NULL;
  if (n) memcpy(t->data, v, sizeof(int64_t) * (size_t)n);
  return mgopt__exp_const(E, base, t);
}

/* An initializer (a Constant node in a graph that holds none) holding t,
   named fresh after base; returns its name. One the export made before in
   this graph with the same dtype, shape and bytes is read again instead:
   the bounds, axes and steps that mappings write as inputs are written
   once per graph however many nodes read them. */
MGOPT__PRIVATE const char *mgopt__exp_const(mgopt__exp *E, const char *base, mgopt_tensor *t) {
  mgopt__exg *g = E->g;
  const mgopt__map_slot *sl;
  mgopt__map_slot *added;
  mgopt__exg_made *mk;
  const char *nm;
  uint64_t key;
  mgopt_onnx_tensor *ot;
  if (!t) return NULL;
  key = mgopt__map_hash_key(mgopt_tensor_hash(t));
  if (!g->by_content.alloc) mgopt__map_init_flags(&g->by_content, &E->p->alloc, MGOPT__MAP_HASHED);
  for (sl = mgopt__map_find(&g->by_content, key); sl; sl = mgopt__map_next(&g->by_content, sl)) {
    const mgopt__exg_made *d = (const mgopt__exg_made *)g->made.data + (sl->v.i - 1);
    if (mgopt_tensor_equal(d->t, t)) return d->name;
  }
  if (!(nm = mgopt__exp_fresh(E, base))) return NULL;
  if (g->inits_ok) {
    ot = (mgopt_onnx_tensor *)mgopt__exv_push(E, &g->inits, sizeof(mgopt_onnx_tensor));
    if (!ot || mgopt__exp_tensor(E, t, nm, ot)) return NULL;
  } else {
    mgopt_onnx_node *c = mgopt__exp_node(E, "Constant", "", NULL);
    mgopt_onnx_attribute *a;
    if (!c || !mgopt__exp_set_io(E, &c->outputs, &c->noutputs, &nm, 1)) return NULL;
    a = mgopt__exp_attr(E, c, "value", MGOPT_ONNX_ATTR_TENSOR);
    if (!a || !(a->t = (mgopt_onnx_tensor *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_tensor), 8)) ||
        mgopt__exp_tensor(E, t, "", a->t))
      return NULL;
  }
  mk = (mgopt__exg_made *)mgopt__exv_push(E, &g->made, sizeof(mgopt__exg_made));
  if (!mk || !(added = mgopt__map_add(&g->by_content, key))) return NULL;
  mk->t = t;
  mk->name = nm;
  added->v.i = g->made.n;
  return nm;
}

MGOPT__PRIVATE const char *mgopt__exp_vname(const mgopt_value *v) { return v ? (v->name ? v->name : "") : ""; }

/* Name of an integer list operand as int64: a constant is rewritten as an
   int64 constant, an int64 value used as is, other integers cast. */
MGOPT__PRIVATE const char *mgopt__exp_as_i64(mgopt__exp *E, mgopt_value *v) {
  mgopt_tensor *t = mgopt_value_const(v);
  if (t && mgopt_dtype_is_int((mgopt_dtype)t->dtype) && t->rank <= 1) {
    int64_t i, n = t->numel, *arr;
    if (t->dtype == MGOPT_DT_INT64 && t->rank == 1) return mgopt__exp_vname(v);
    arr = (int64_t *)mgopt_program_alloc(E->p, sizeof(int64_t) * (size_t)(n + 1), 8);
    if (!arr) return NULL;
    mgopt_tensor_data(E->p, t);
    for (i = 0; i < n; i++) arr[i] = mgopt_tensor_get_i64(t, i);
    return mgopt__exp_i64_const(E, mgopt__exp_vname(v), arr, n);
  }
  if (v->type.dtype == MGOPT_DT_INT64) return mgopt__exp_vname(v);
  {
    const char *out = mgopt__exp_fresh(E, mgopt__exp_vname(v));
    const char *in = mgopt__exp_vname(v);
    mgopt_onnx_node *n = mgopt__exp_node(E, "Cast", "", NULL);
    if (!n || !out || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, &in, 1) ||
        !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &out, 1) ||
        !mgopt__exp_aint(E, n, "to", MGOPT_ONNX_DT_INT64))
      return NULL;
    return out;
  }
}

/* Emits op_type with the given inputs and the op's outputs (named). */
MGOPT__PRIVATE mgopt_onnx_node *mgopt__exp_simple(mgopt__exp *E, const mgopt_op *op, const char *op_type,
                                          const char *const *ins, int64_t nin) {
  const char *local[64], **outs = local;
  int32_t i;
  mgopt_onnx_node *n;
  if (op->nouts > 64 && !(outs = (const char **)mgopt_program_alloc(E->p, sizeof(char *) * (size_t)op->nouts, 8))) return NULL;
  for (i = 0; i < op->nouts; i++) outs[i] = (op->outs[i]->flags & MGOPT_VALUE_ABSENT) ? "" : mgopt__exp_vname(op->outs[i]);
  n = mgopt__exp_node(E, op_type, "", op->name);
  if (!n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, ins, nin) ||
      !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, outs, op->nouts))
    return NULL;
  return n;
}

MGOPT__PRIVATE const char *mgopt__exp_in(const mgopt_op *op, const char *slot) {
  mgopt_value *v = mgopt_op_operand(op, slot);
  return v ? mgopt__exp_vname(v) : NULL;
}

/* A builder returned NULL: out of memory, unless a builder recorded another
   cause (a tensor of a dtype ONNX cannot hold, say), which stands. */
MGOPT__PRIVATE mgopt_status mgopt__exp_nomem(mgopt__exp *E) {
  if (E->cause) return E->cause;
  return mgopt__exp_fail(E, MGOPT_ERR_NOMEM, "out of memory");
}

MGOPT__PRIVATE mgopt_status mgopt__exp_unsupported(mgopt__exp *E, const mgopt_op *op, const char *why) {
  return mgopt__exp_fail(E, MGOPT_ERR_UNSUPPORTED, "cannot write op %s to ONNX opset %lld%s%s", op->type,
                         (long long)E->opset, why ? ": " : "", why ? why : "");
}

/* The mapping's status for a node it built (NULL: out of memory). */
MGOPT__PRIVATE mgopt_status mgopt__exp_done(mgopt__exp *E, const mgopt_onnx_node *n) {
  return n ? MGOPT_OK : mgopt__exp_nomem(E);
}

/* One-to-one ops: the row's ONNX op with the operand slots m->slots as its inputs. */
MGOPT__PRIVATE const char *mgopt__exw_direct(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  int k;
  MGOPT__UNUSED(p);
  for (k = 0; k < 3 && m->slots[k]; k++)
    if (!mgopt_op_operand(op, m->slots[k])) return "an operand is missing";
  return NULL;
}

MGOPT__PRIVATE mgopt_status mgopt__exp_direct(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[3];
  int64_t nin = 0;
  while (nin < 3 && m->slots[nin]) {
    ins[nin] = mgopt__exp_in(op, m->slots[nin]);
    nin++;
  }
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, nin));
}

/* 1 if the interned name was free (now claimed), 0 if taken, -1 on OOM. */
MGOPT__PRIVATE int mgopt__exp_claim(mgopt__exp *E, const char *name) {
  int added;
  if (!mgopt__map_get(&E->names, mgopt__map_ptr_key(name), &added)) return -1;
  return added;
}
