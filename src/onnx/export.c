/* src/onnx/export.c — the IR back to an ONNX model tree for the target opset. */
#include "../internal.h"

/* How it works. Function `main` becomes the graph. Graph inputs follow the
   imported model's order (an input that had an initializer is listed again
   with its constant), then any new arguments. Consts become initializers
   (or Constant nodes: inside subgraphs, and where the option keeps them).
   Canonical ops become the ONNX ops of the target opset, with parameters that
   newer opsets take as inputs written as int64 initializers; opaque ops go
   back as they came. Every value name is unique in the written model: a
   clash gets a fresh name, except graph inputs and outputs. Nodes are
   accumulated in heap vectors and copied into the program's arena at the
   end of each graph. */

typedef struct mgopt__exv {
  void *data;
  int64_t n, cap;
} mgopt__exv;

typedef struct mgopt__exg { /* a graph being written */
  mgopt__exv nodes, inits, inputs, outputs;
  int is_main;
} mgopt__exg;

typedef struct mgopt__exp {
  mgopt_program *p;
  const mgopt_onnx_export_options *o;
  mgopt_diag *d;
  int64_t opset;
  mgopt__exg *g;
  const mgopt_op *op; /* op being written, for messages */
  int depth;
  /* names taken in this model (interned pointers, open addressing): the IR's
     values, then each name the export makes up; with the next suffix per base,
     so exporting one program twice gives the same names */
  const char **names;
  size_t names_cap, names_count;
  const char **fresh_base;
  uint64_t *fresh_next;
  size_t fresh_cap, fresh_count;
} mgopt__exp;

static void *mgopt__exv_push(mgopt__exp *E, mgopt__exv *v, size_t elem) {
  char *slot;
  if (!mgopt__grow(&E->p->alloc, &v->data, &v->cap, v->n + 1, elem)) return NULL;
  slot = (char *)v->data + (size_t)v->n * elem;
  memset(slot, 0, elem);
  v->n++;
  return slot;
}

static void mgopt__exv_free(mgopt__exp *E, mgopt__exv *v, size_t elem) {
  if (v->data) mgopt__heap_free(&E->p->alloc, v->data, (size_t)v->cap * elem);
  memset(v, 0, sizeof *v);
}

/* Moves a vector's contents into the arena; returns the arena copy. */
static void *mgopt__exv_take(mgopt__exp *E, mgopt__exv *v, size_t elem, int64_t *count) {
  void *a = NULL;
  *count = v->n;
  if (v->n) a = mgopt__dup(E->p, v->data, (size_t)v->n * elem);
  mgopt__exv_free(E, v, elem);
  return a;
}

static mgopt_status mgopt__exp_fail(mgopt__exp *E, mgopt_status s, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static mgopt_status mgopt__exp_fail(mgopt__exp *E, mgopt_status s, const char *fmt, ...) {
  va_list ap;
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

static mgopt_str mgopt__exp_s(const char *c) {
  mgopt_str s;
  s.ptr = c ? c : "";
  s.len = c ? strlen(c) : 0;
  return s;
}

/* ---------------------------------------------------------------- types and tensors */

static int32_t mgopt__exp_dtype(mgopt_dtype t) {
  int32_t k;
  for (k = 1; k < MGOPT_ONNX_DT__COUNT; k++)
    if (mgopt_onnx_dtype(k) == t && t != MGOPT_DT_UNKNOWN) return k;
  return 0;
}

static mgopt_onnx_type *mgopt__exp_type(mgopt__exp *E, const mgopt_type *t) {
  mgopt_onnx_type *ot = (mgopt_onnx_type *)mgopt_program_alloc(E->p, sizeof *ot, 8);
  mgopt_onnx_tensor_type *tt;
  int32_t i;
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

/* Fills ot from t (raw_data borrowed from the tensor's bytes where the layouts agree). */
static mgopt_status mgopt__exp_tensor(mgopt__exp *E, const mgopt_tensor *t, const char *name, mgopt_onnx_tensor *ot) {
  int32_t dt = mgopt__exp_dtype((mgopt_dtype)t->dtype);
  int64_t nb, i;
  memset(ot, 0, sizeof *ot);
  if (!dt) return mgopt__exp_fail(E, MGOPT_ERR_UNSUPPORTED, "a %s tensor has no ONNX data type", mgopt_dtype_name((mgopt_dtype)t->dtype));
  ot->data_type = dt;
  ot->has = MGOPT_ONNX_TENSOR_HAS_DATA_TYPE;
  ot->name = mgopt__exp_s(name);
  ot->ndims = t->rank;
  ot->numel = t->numel;
  if (t->rank > 0) {
    ot->dims = (int64_t *)mgopt__dup(E->p, t->shape, sizeof(int64_t) * (size_t)t->rank);
    if (!ot->dims) return MGOPT_ERR_NOMEM;
  }
  if (t->dtype == MGOPT_DT_STRING) {
    ot->string_data = (mgopt_str *)t->data;
    ot->nstring_data = t->numel;
    return MGOPT_OK;
  }
  nb = mgopt_onnx_raw_nbytes(dt, t->numel);
  if (nb < 0) return mgopt__exp_fail(E, MGOPT_ERR_UNSUPPORTED, "cannot write a %s tensor", mgopt_dtype_name((mgopt_dtype)t->dtype));
  ot->has |= MGOPT_ONNX_TENSOR_HAS_RAW_DATA;
  if ((size_t)nb == t->nbytes) {
    ot->raw_data.ptr = (const char *)t->data;
    ot->raw_data.len = t->nbytes;
    return MGOPT_OK;
  }
  {
    /* 4-bit types: two per byte, low nibble first */
    uint8_t *r = (uint8_t *)mgopt_program_alloc(E->p, (size_t)nb + 1, 8);
    if (!r) return MGOPT_ERR_NOMEM;
    for (i = 0; i < t->numel; i++) r[i >> 1] |= (uint8_t)((mgopt_tensor_get_i64(t, i) & 15) << ((i & 1) * 4));
    ot->raw_data.ptr = (const char *)r;
    ot->raw_data.len = (size_t)nb;
  }
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- nodes */

static mgopt_onnx_node *mgopt__exp_node(mgopt__exp *E, const char *op_type, const char *domain, const char *name) {
  mgopt_onnx_node *n = (mgopt_onnx_node *)mgopt__exv_push(E, &E->g->nodes, sizeof(mgopt_onnx_node));
  if (!n) return NULL;
  n->op_type = mgopt__exp_s(op_type);
  n->domain = mgopt__exp_s(domain);
  if (name) n->name = mgopt__exp_s(name);
  return n;
}

static int mgopt__exp_set_io(mgopt__exp *E, mgopt_str **arr, int64_t *cnt, const char *const *names, int64_t n) {
  int64_t i;
  *arr = (mgopt_str *)mgopt_program_alloc(E->p, sizeof(mgopt_str) * (size_t)(n ? n : 1), 8);
  if (!*arr) return 0;
  for (i = 0; i < n; i++) (*arr)[i] = mgopt__exp_s(names[i]);
  *cnt = n;
  return 1;
}

static mgopt_onnx_attribute *mgopt__exp_attr(mgopt__exp *E, mgopt_onnx_node *n, const char *name, int32_t type) {
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

static int mgopt__exp_aint(mgopt__exp *E, mgopt_onnx_node *n, const char *name, int64_t v) {
  mgopt_onnx_attribute *a = mgopt__exp_attr(E, n, name, MGOPT_ONNX_ATTR_INT);
  if (!a) return 0;
  a->i = v;
  a->has |= MGOPT_ONNX_ATTR_HAS_I;
  return 1;
}

static int mgopt__exp_afloat(mgopt__exp *E, mgopt_onnx_node *n, const char *name, double v) {
  mgopt_onnx_attribute *a = mgopt__exp_attr(E, n, name, MGOPT_ONNX_ATTR_FLOAT);
  if (!a) return 0;
  a->f = (float)v;
  a->has |= MGOPT_ONNX_ATTR_HAS_F;
  return 1;
}

static int mgopt__exp_astr(mgopt__exp *E, mgopt_onnx_node *n, const char *name, const char *v) {
  mgopt_onnx_attribute *a = mgopt__exp_attr(E, n, name, MGOPT_ONNX_ATTR_STRING);
  if (!a) return 0;
  a->s = mgopt__exp_s(v);
  a->has |= MGOPT_ONNX_ATTR_HAS_S;
  return 1;
}

static int mgopt__exp_aints(mgopt__exp *E, mgopt_onnx_node *n, const char *name, const int64_t *v, int64_t cnt) {
  mgopt_onnx_attribute *a = mgopt__exp_attr(E, n, name, MGOPT_ONNX_ATTR_INTS);
  if (!a) return 0;
  a->ints = (int64_t *)mgopt__dup(E->p, v, sizeof(int64_t) * (size_t)(cnt ? cnt : 1));
  a->nints = cnt;
  return a->ints != NULL;
}

/* A fresh value name for an intermediate the export creates. */
static int mgopt__exp_claim(mgopt__exp *E, const char *name);

/* "<base>_mgopt_<k>" for the smallest k this export has not used and no
   value of the model holds. */
static const char *mgopt__exp_fresh(mgopt__exp *E, const char *base) {
  char buf[200];
  const char *b;
  size_t h;
  int r;
  snprintf(buf, sizeof buf, "%.120s_mgopt", base ? base : "v");
  b = mgopt_program_intern_cstr(E->p, buf);
  if (!b) return NULL;
  if ((E->fresh_count + 1) * 2 > E->fresh_cap) {
    size_t ncap = E->fresh_cap ? E->fresh_cap * 2 : 256, i;
    const char **nb = (const char **)mgopt__heap_realloc(&E->p->alloc, NULL, 0, ncap * sizeof(char *));
    uint64_t *nn = (uint64_t *)mgopt__heap_realloc(&E->p->alloc, NULL, 0, ncap * sizeof(uint64_t));
    if (!nb || !nn) {
      if (nb) mgopt__heap_free(&E->p->alloc, (void *)nb, ncap * sizeof(char *));
      if (nn) mgopt__heap_free(&E->p->alloc, nn, ncap * sizeof(uint64_t));
      return NULL;
    }
    memset((void *)nb, 0, ncap * sizeof(char *));
    for (i = 0; i < E->fresh_cap; i++)
      if (E->fresh_base[i]) {
        h = (size_t)((uintptr_t)E->fresh_base[i] >> 4) * 0x9e3779b97f4a7c15ull % ncap;
        while (nb[h]) h = (h + 1) % ncap;
        nb[h] = E->fresh_base[i];
        nn[h] = E->fresh_next[i];
      }
    if (E->fresh_base) mgopt__heap_free(&E->p->alloc, (void *)E->fresh_base, E->fresh_cap * sizeof(char *));
    if (E->fresh_next) mgopt__heap_free(&E->p->alloc, E->fresh_next, E->fresh_cap * sizeof(uint64_t));
    E->fresh_base = nb;
    E->fresh_next = nn;
    E->fresh_cap = ncap;
  }
  h = (size_t)((uintptr_t)b >> 4) * 0x9e3779b97f4a7c15ull % E->fresh_cap;
  while (E->fresh_base[h] && E->fresh_base[h] != b) h = (h + 1) % E->fresh_cap;
  if (!E->fresh_base[h]) {
    E->fresh_base[h] = b;
    E->fresh_next[h] = 0;
    E->fresh_count++;
  }
  for (;;) {
    const char *name;
    snprintf(buf, sizeof buf, "%s_%llu", b, (unsigned long long)E->fresh_next[h]++);
    name = mgopt_program_intern_cstr(E->p, buf);
    if (!name) return NULL;
    r = mgopt__exp_claim(E, name);
    if (r < 0) return NULL;
    if (r) return name;
  }
}

/* An int64 1-d initializer (or Constant node inside subgraphs) named fresh; returns its name. */
static const char *mgopt__exp_i64_const(mgopt__exp *E, const char *base, const int64_t *v, int64_t n) {
  mgopt_tensor *t = mgopt_tensor_new(E->p, MGOPT_DT_INT64, 1, &n);
  const char *name = mgopt__exp_fresh(E, base);
  mgopt_onnx_tensor *ot;
  if (!t || !name) return NULL;
  if (n) memcpy(t->data, v, sizeof(int64_t) * (size_t)n);
  if (E->g->is_main) {
    ot = (mgopt_onnx_tensor *)mgopt__exv_push(E, &E->g->inits, sizeof(mgopt_onnx_tensor));
    if (!ot || mgopt__exp_tensor(E, t, name, ot)) return NULL;
  } else {
    mgopt_onnx_node *nd = mgopt__exp_node(E, "Constant", "", NULL);
    mgopt_onnx_attribute *a;
    if (!nd || !mgopt__exp_set_io(E, &nd->outputs, &nd->noutputs, &name, 1)) return NULL;
    a = mgopt__exp_attr(E, nd, "value", MGOPT_ONNX_ATTR_TENSOR);
    if (!a) return NULL;
    a->t = (mgopt_onnx_tensor *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_tensor), 8);
    if (!a->t || mgopt__exp_tensor(E, t, "", a->t)) return NULL;
  }
  return name;
}

static const char *mgopt__exp_vname(const mgopt_value *v) { return v ? (v->name ? v->name : "") : ""; }

/* Name of an integer list operand as int64: a constant is rewritten as an
   int64 constant, an int64 value used as is, other integers cast. */
static const char *mgopt__exp_as_i64(mgopt__exp *E, mgopt_value *v) {
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
static mgopt_onnx_node *mgopt__exp_simple(mgopt__exp *E, const mgopt_op *op, const char *op_type,
                                          const char *const *ins, int64_t nin) {
  const char *outs[64];
  int32_t i;
  mgopt_onnx_node *n;
  if (op->nouts > 64) return NULL;
  for (i = 0; i < op->nouts; i++) outs[i] = (op->outs[i]->flags & MGOPT_VALUE_ABSENT) ? "" : mgopt__exp_vname(op->outs[i]);
  n = mgopt__exp_node(E, op_type, "", op->name);
  if (!n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, ins, nin) ||
      !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, outs, op->nouts))
    return NULL;
  return n;
}

static const char *mgopt__exp_in(const mgopt_op *op, const char *slot) {
  mgopt_value *v = mgopt_op_operand(op, slot);
  return v ? mgopt__exp_vname(v) : NULL;
}

/* ---------------------------------------------------------------- canonical ops */

static mgopt_status mgopt__exp_nomem(mgopt__exp *E) { return mgopt__exp_fail(E, MGOPT_ERR_NOMEM, "out of memory"); }

static mgopt_status mgopt__exp_unsupported(mgopt__exp *E, const mgopt_op *op, const char *why) {
  return mgopt__exp_fail(E, MGOPT_ERR_UNSUPPORTED, "cannot write op %s to ONNX opset %lld%s%s", op->type,
                         (long long)E->opset, why ? ": " : "", why ? why : "");
}

typedef struct mgopt__exp_map {
  int32_t kind;
  const char *onnx;
  const char *slots[3];
} mgopt__exp_map;

/* One-to-one ops: ONNX inputs in the order of the listed slots. */
static const mgopt__exp_map mgopt__exp_direct[] = {
    {MGOPT_OP_add, "Add", {"x", "y", NULL}},           {MGOPT_OP_sub, "Sub", {"x", "y", NULL}},
    {MGOPT_OP_mul, "Mul", {"x", "y", NULL}},           {MGOPT_OP_real_div, "Div", {"x", "y", NULL}},
    {MGOPT_OP_pow, "Pow", {"x", "y", NULL}},           {MGOPT_OP_maximum, "Max", {"x", "y", NULL}},
    {MGOPT_OP_minimum, "Min", {"x", "y", NULL}},       {MGOPT_OP_equal, "Equal", {"x", "y", NULL}},
    {MGOPT_OP_less, "Less", {"x", "y", NULL}},         {MGOPT_OP_greater, "Greater", {"x", "y", NULL}},
    {MGOPT_OP_less_equal, "LessOrEqual", {"x", "y", NULL}},
    {MGOPT_OP_greater_equal, "GreaterOrEqual", {"x", "y", NULL}},
    {MGOPT_OP_logical_and, "And", {"x", "y", NULL}},   {MGOPT_OP_logical_or, "Or", {"x", "y", NULL}},
    {MGOPT_OP_logical_xor, "Xor", {"x", "y", NULL}},   {MGOPT_OP_logical_not, "Not", {"x", NULL, NULL}},
    {MGOPT_OP_select, "Where", {"cond", "a", "b"}},    {MGOPT_OP_relu, "Relu", {"x", NULL, NULL}},
    {MGOPT_OP_sigmoid, "Sigmoid", {"x", NULL, NULL}},  {MGOPT_OP_tanh, "Tanh", {"x", NULL, NULL}},
    {MGOPT_OP_erf, "Erf", {"x", NULL, NULL}},          {MGOPT_OP_sqrt, "Sqrt", {"x", NULL, NULL}},
    {MGOPT_OP_exp, "Exp", {"x", NULL, NULL}},          {MGOPT_OP_log, "Log", {"x", NULL, NULL}},
    {MGOPT_OP_abs, "Abs", {"x", NULL, NULL}},          {MGOPT_OP_floor, "Floor", {"x", NULL, NULL}},
    {MGOPT_OP_ceil, "Ceil", {"x", NULL, NULL}},        {MGOPT_OP_sin, "Sin", {"x", NULL, NULL}},
    {MGOPT_OP_cos, "Cos", {"x", NULL, NULL}},          {MGOPT_OP_identity, "Identity", {"x", NULL, NULL}},
    {MGOPT_OP_sign, "Sign", {"x", NULL, NULL}},        {MGOPT_OP_round, "Round", {"x", NULL, NULL}},
};

static mgopt_status mgopt__exp_spatial(mgopt__exp *E, const mgopt_op *op, mgopt_onnx_node *n, int with_dil) {
  const int64_t *v = NULL;
  int64_t k;
  size_t len = 0;
  const char *pt = mgopt_op_get_string(op, "pad_type", &len);
  if ((k = mgopt_op_get_ints(E->p, op, "strides", &v)) >= 0 && !mgopt__exp_aints(E, n, "strides", v, k))
    return mgopt__exp_nomem(E);
  if (with_dil && (k = mgopt_op_get_ints(E->p, op, "dilations", &v)) >= 0 && !mgopt__exp_aints(E, n, "dilations", v, k))
    return mgopt__exp_nomem(E);
  if (!pt || strcmp(pt, "valid") == 0) {
    if (!mgopt__exp_astr(E, n, "auto_pad", "VALID")) return mgopt__exp_nomem(E);
  } else if (strcmp(pt, "same") == 0) {
    if (!mgopt__exp_astr(E, n, "auto_pad", "SAME_UPPER")) return mgopt__exp_nomem(E);
  } else if (strcmp(pt, "same_lower") == 0) {
    if (!mgopt__exp_astr(E, n, "auto_pad", "SAME_LOWER")) return mgopt__exp_nomem(E);
  } else if (strcmp(pt, "custom") == 0) {
    int64_t i, m, pads[64];
    k = mgopt_op_get_ints(E->p, op, "pad", &v);
    if (k < 0 || k % 2 || k > 64) return mgopt__exp_unsupported(E, op, "custom padding without a pad list");
    m = k / 2;
    for (i = 0; i < m; i++) {
      pads[i] = v[2 * i];
      pads[m + i] = v[2 * i + 1];
    }
    if (!mgopt__exp_aints(E, n, "pads", pads, k)) return mgopt__exp_nomem(E);
  } else {
    return mgopt__exp_unsupported(E, op, "unknown pad_type");
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__exp_block_graph(mgopt__exp *E, mgopt_block *b, mgopt_onnx_graph *g, int is_main);

static mgopt_status mgopt__exp_canonical(mgopt__exp *E, const mgopt_op *op) {
  const char *ins[8];
  mgopt_onnx_node *n;
  int32_t i;
  const int64_t *v = NULL;
  int64_t k;
  for (i = 0; i < MGOPT__ARRAY_COUNT(mgopt__exp_direct); i++)
    if (mgopt__exp_direct[i].kind == op->kind) {
      int64_t nin = 0;
      while (nin < 3 && mgopt__exp_direct[i].slots[nin]) {
        ins[nin] = mgopt__exp_in(op, mgopt__exp_direct[i].slots[nin]);
        if (!ins[nin]) return mgopt__exp_unsupported(E, op, "an operand is missing");
        nin++;
      }
      return mgopt__exp_simple(E, op, mgopt__exp_direct[i].onnx, ins, nin) ? MGOPT_OK : mgopt__exp_nomem(E);
    }
  ins[0] = mgopt__exp_in(op, "x");
  switch (op->kind) {
    case MGOPT_OP_leaky_relu:
      n = mgopt__exp_simple(E, op, "LeakyRelu", ins, 1);
      if (!n || !mgopt__exp_afloat(E, n, "alpha", mgopt_op_get_float(op, "alpha", 0.01))) return mgopt__exp_nomem(E);
      return MGOPT_OK;
    case MGOPT_OP_softmax: {
      int64_t axis = mgopt_op_get_int(op, "axis", -1);
      int r = op->outs[0]->type.rank;
      if (E->opset < 13 && !(axis == -1 || (r > 0 && axis == r - 1)))
        return mgopt__exp_unsupported(E, op, "softmax over an inner axis before opset 13");
      n = mgopt__exp_simple(E, op, "Softmax", ins, 1);
      if (!n || !mgopt__exp_aint(E, n, "axis", axis)) return mgopt__exp_nomem(E);
      return MGOPT_OK;
    }
    case MGOPT_OP_gelu: {
      size_t len = 0;
      const char *mode = mgopt_op_get_string(op, "mode", &len);
      if (E->opset < 20) return mgopt__exp_unsupported(E, op, "Gelu needs opset 20");
      if (mode && strcmp(mode, "EXACT") != 0 && strcmp(mode, "TANH_APPROXIMATION") != 0)
        return mgopt__exp_unsupported(E, op, "this gelu mode");
      n = mgopt__exp_simple(E, op, "Gelu", ins, 1);
      if (!n || (mode && strcmp(mode, "TANH_APPROXIMATION") == 0 && !mgopt__exp_astr(E, n, "approximate", "tanh")))
        return mgopt__exp_nomem(E);
      return MGOPT_OK;
    }
    case MGOPT_OP_clip: {
      double lo = mgopt_op_get_float(op, "alpha", -HUGE_VAL), hi = mgopt_op_get_float(op, "beta", HUGE_VAL);
      mgopt_dtype dt = (mgopt_dtype)op->outs[0]->type.dtype;
      if (E->opset < 11) {
        n = mgopt__exp_simple(E, op, "Clip", ins, 1);
        if (!n) return mgopt__exp_nomem(E);
        if (lo > -HUGE_VAL && !mgopt__exp_afloat(E, n, "min", lo)) return mgopt__exp_nomem(E);
        if (hi < HUGE_VAL && !mgopt__exp_afloat(E, n, "max", hi)) return mgopt__exp_nomem(E);
        return MGOPT_OK;
      }
      ins[1] = ins[2] = "";
      if (lo > -HUGE_VAL || hi < HUGE_VAL) {
        int j;
        for (j = 0; j < 2; j++) {
          double val = j ? hi : lo;
          mgopt_tensor *t;
          const char *nm;
          mgopt_onnx_tensor *ot;
          if (j ? !(hi < HUGE_VAL) : !(lo > -HUGE_VAL)) continue;
          t = mgopt_tensor_new_scalar_f64(E->p, dt, val);
          nm = mgopt__exp_fresh(E, j ? "clip_max" : "clip_min");
          if (!t || !nm) return mgopt__exp_nomem(E);
          if (E->g->is_main) {
            ot = (mgopt_onnx_tensor *)mgopt__exv_push(E, &E->g->inits, sizeof(mgopt_onnx_tensor));
            if (!ot || mgopt__exp_tensor(E, t, nm, ot)) return mgopt__exp_nomem(E);
          } else {
            mgopt_onnx_node *c = mgopt__exp_node(E, "Constant", "", NULL);
            mgopt_onnx_attribute *a;
            if (!c || !mgopt__exp_set_io(E, &c->outputs, &c->noutputs, &nm, 1)) return mgopt__exp_nomem(E);
            a = mgopt__exp_attr(E, c, "value", MGOPT_ONNX_ATTR_TENSOR);
            if (!a || !(a->t = (mgopt_onnx_tensor *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_tensor), 8)) ||
                mgopt__exp_tensor(E, t, "", a->t))
              return mgopt__exp_nomem(E);
          }
          ins[1 + j] = nm;
        }
      }
      return mgopt__exp_simple(E, op, "Clip", ins, hi < HUGE_VAL ? 3 : lo > -HUGE_VAL ? 2 : 1) ? MGOPT_OK
                                                                                                : mgopt__exp_nomem(E);
    }
    case MGOPT_OP_cast: {
      size_t len = 0;
      const char *to = mgopt_op_get_string(op, "dtype", &len);
      int32_t dt = to ? mgopt__exp_dtype(mgopt_dtype_from_name(to, len)) : 0;
      if (!dt) return mgopt__exp_unsupported(E, op, "unknown target dtype");
      n = mgopt__exp_simple(E, op, "Cast", ins, 1);
      if (!n || !mgopt__exp_aint(E, n, "to", dt)) return mgopt__exp_nomem(E);
      return MGOPT_OK;
    }
    case MGOPT_OP_transpose:
      k = mgopt_op_get_ints(E->p, op, "perm", &v);
      if (k < 0) return mgopt__exp_unsupported(E, op, "no perm");
      n = mgopt__exp_simple(E, op, "Transpose", ins, 1);
      if (!n || !mgopt__exp_aints(E, n, "perm", v, k)) return mgopt__exp_nomem(E);
      return MGOPT_OK;
    case MGOPT_OP_reshape: {
      mgopt_value *s = mgopt_op_operand(op, "shape");
      mgopt_tensor *t = s ? mgopt_value_const(s) : NULL;
      if (!s) return mgopt__exp_unsupported(E, op, "no shape");
      if (t) {
        /* MIL copies the input dim for a 0; ONNX Reshape does too (allowzero 0) */
        (void)t;
      }
      ins[1] = mgopt__exp_as_i64(E, s);
      if (!ins[1]) return mgopt__exp_nomem(E);
      return mgopt__exp_simple(E, op, "Reshape", ins, 2) ? MGOPT_OK : mgopt__exp_nomem(E);
    }
    case MGOPT_OP_squeeze:
    case MGOPT_OP_expand_dims: {
      const char *ot = op->kind == MGOPT_OP_squeeze ? "Squeeze" : "Unsqueeze";
      k = mgopt_op_get_ints(E->p, op, "axes", &v);
      if (k < 0) {
        if (op->kind == MGOPT_OP_expand_dims) return mgopt__exp_unsupported(E, op, "no axes");
        return mgopt__exp_simple(E, op, ot, ins, 1) ? MGOPT_OK : mgopt__exp_nomem(E);
      }
      if (E->opset >= 13) {
        ins[1] = mgopt__exp_i64_const(E, "axes", v, k);
        if (!ins[1]) return mgopt__exp_nomem(E);
        return mgopt__exp_simple(E, op, ot, ins, 2) ? MGOPT_OK : mgopt__exp_nomem(E);
      }
      n = mgopt__exp_simple(E, op, ot, ins, 1);
      if (!n || !mgopt__exp_aints(E, n, "axes", v, k)) return mgopt__exp_nomem(E);
      return MGOPT_OK;
    }
    case MGOPT_OP_concat: {
      int32_t si = mgopt_op_slot_index(op, "values");
      const char **vals;
      if (si < 0 || mgopt_op_get_bool(op, "interleave", 0)) return mgopt__exp_unsupported(E, op, "interleaved concat");
      vals = (const char **)mgopt_program_alloc(E->p, sizeof(char *) * (size_t)(op->slots[si].n + 1), 8);
      if (!vals) return mgopt__exp_nomem(E);
      for (i = 0; i < op->slots[si].n; i++) vals[i] = mgopt__exp_vname(op->slots[si].uses[i].value);
      n = mgopt__exp_simple(E, op, "Concat", vals, op->slots[si].n);
      if (!n || !mgopt__exp_aint(E, n, "axis", mgopt_op_get_int(op, "axis", 0))) return mgopt__exp_nomem(E);
      return MGOPT_OK;
    }
    case MGOPT_OP_split: {
      int64_t sizes[256], axis = mgopt_op_get_int(op, "axis", 0);
      mgopt_value *x = mgopt_op_operand(op, "x");
      int r = x ? x->type.rank : -1;
      k = mgopt_op_get_ints(E->p, op, "split_sizes", &v);
      if (op->nouts > 256) return mgopt__exp_unsupported(E, op, "too many outputs");
      if (k < 0 && mgopt_op_attr(op, "num_splits")) {
        /* an even split: ONNX's default without sizes (num_outputs from opset 18) */
        n = mgopt__exp_simple(E, op, "Split", ins, 1);
        if (!n || !mgopt__exp_aint(E, n, "axis", axis)) return mgopt__exp_nomem(E);
        if (E->opset >= 18 && !mgopt__exp_aint(E, n, "num_outputs", op->nouts)) return mgopt__exp_nomem(E);
        return MGOPT_OK;
      }
      if (k < 0) {
        /* even split: sizes from the outputs' static dims */
        if (axis < 0) axis += r;
        if (r < 0 || axis < 0 || axis >= r) return mgopt__exp_unsupported(E, op, "unknown split axis");
        for (i = 0; i < op->nouts; i++) {
          const mgopt_type *t = &op->outs[i]->type;
          if (t->rank != r || !mgopt_dim_is_static(t->dims[axis])) return mgopt__exp_unsupported(E, op, "split sizes unknown");
          sizes[i] = t->dims[axis].v;
        }
        v = sizes;
        k = op->nouts;
      }
      if (E->opset >= 13) {
        ins[1] = mgopt__exp_i64_const(E, "split", v, k);
        if (!ins[1]) return mgopt__exp_nomem(E);
        n = mgopt__exp_simple(E, op, "Split", ins, 2);
        if (!n || !mgopt__exp_aint(E, n, "axis", axis)) return mgopt__exp_nomem(E);
        return MGOPT_OK;
      }
      n = mgopt__exp_simple(E, op, "Split", ins, 1);
      if (!n || !mgopt__exp_aint(E, n, "axis", axis) || !mgopt__exp_aints(E, n, "split", v, k)) return mgopt__exp_nomem(E);
      return MGOPT_OK;
    }
    case MGOPT_OP_slice_by_index: {
      mgopt_value *x = mgopt_op_operand(op, "x");
      mgopt_tensor *tb = mgopt_value_const(mgopt_op_operand(op, "begin"));
      mgopt_tensor *te = mgopt_value_const(mgopt_op_operand(op, "end"));
      mgopt_value *sv = mgopt_op_operand(op, "stride");
      mgopt_tensor *ts = sv ? mgopt_value_const(sv) : NULL;
      const int64_t *bm = NULL, *em = NULL, *sm = NULL;
      int64_t nbm, nem, nsm, r, st[64], en[64], ax[64], stp[64], j, cnt = 0;
      if (!x || !tb || !te || (sv && !ts)) return mgopt__exp_unsupported(E, op, "non-constant bounds");
      r = tb->numel;
      if (r > 64 || te->numel != r || (ts && ts->numel != r)) return mgopt__exp_unsupported(E, op, "bad bounds");
      nbm = mgopt_op_get_ints(E->p, op, "begin_mask", &bm);
      nem = mgopt_op_get_ints(E->p, op, "end_mask", &em);
      nsm = mgopt_op_get_ints(E->p, op, "squeeze_mask", &sm);
      for (j = 0; j < nsm; j++)
        if (sm[j]) return mgopt__exp_unsupported(E, op, "squeeze_mask");
      for (j = 0; j < r; j++) {
        int64_t s = ts ? mgopt_tensor_get_i64(ts, j) : 1;
        int64_t b = mgopt_tensor_get_i64(tb, j), e = mgopt_tensor_get_i64(te, j);
        int bmask = j < nbm && bm[j], emask = j < nem && em[j];
        if (bmask && emask && s == 1) continue; /* the whole axis */
        st[cnt] = bmask ? (s > 0 ? 0 : INT64_MAX) : b;
        en[cnt] = emask ? (s > 0 ? INT64_MAX : INT64_MIN) : e;
        ax[cnt] = j;
        stp[cnt] = s;
        cnt++;
      }
      if (cnt == 0) return mgopt__exp_simple(E, op, "Identity", &ins[0], 1) ? MGOPT_OK : mgopt__exp_nomem(E);
      if (E->opset < 10) {
        /* Slice-1: starts/ends/axes attributes, unit steps only */
        for (j = 0; j < cnt; j++) {
          if (stp[j] != 1) return mgopt__exp_unsupported(E, op, "Slice with steps needs opset 10");
          if (en[j] == INT64_MAX) en[j] = INT32_MAX;
        }
        n = mgopt__exp_simple(E, op, "Slice", ins, 1);
        if (!n || !mgopt__exp_aints(E, n, "starts", st, cnt) || !mgopt__exp_aints(E, n, "ends", en, cnt) ||
            !mgopt__exp_aints(E, n, "axes", ax, cnt))
          return mgopt__exp_nomem(E);
        return MGOPT_OK;
      }
      ins[1] = mgopt__exp_i64_const(E, "starts", st, cnt);
      ins[2] = mgopt__exp_i64_const(E, "ends", en, cnt);
      ins[3] = mgopt__exp_i64_const(E, "axes", ax, cnt);
      ins[4] = mgopt__exp_i64_const(E, "steps", stp, cnt);
      if (!ins[1] || !ins[2] || !ins[3] || !ins[4]) return mgopt__exp_nomem(E);
      return mgopt__exp_simple(E, op, "Slice", ins, 5) ? MGOPT_OK : mgopt__exp_nomem(E);
    }
    case MGOPT_OP_gather:
      if (mgopt_op_get_int(op, "batch_dims", 0) != 0) return mgopt__exp_unsupported(E, op, "batch_dims");
      ins[1] = mgopt__exp_in(op, "indices");
      if (!ins[0] || !ins[1]) return mgopt__exp_unsupported(E, op, "an operand is missing");
      n = mgopt__exp_simple(E, op, "Gather", ins, 2);
      if (!n || !mgopt__exp_aint(E, n, "axis", mgopt_op_get_int(op, "axis", 0))) return mgopt__exp_nomem(E);
      return MGOPT_OK;
    case MGOPT_OP_matmul:
      if (mgopt_op_get_bool(op, "transpose_x", 0) || mgopt_op_get_bool(op, "transpose_y", 0)) {
        /* transposes of the last two dims as Transpose nodes */
        int j;
        const char *names[2] = {"x", "y"}, *flags[2] = {"transpose_x", "transpose_y"};
        for (j = 0; j < 2; j++) {
          mgopt_value *xv = mgopt_op_operand(op, names[j]);
          int64_t perm[64], r, q;
          const char *out;
          mgopt_onnx_node *t;
          if (!xv) return mgopt__exp_unsupported(E, op, "an operand is missing");
          ins[j] = mgopt__exp_vname(xv);
          if (!mgopt_op_get_bool(op, flags[j], 0)) continue;
          r = xv->type.rank;
          if (r < 2 || r > 64) return mgopt__exp_unsupported(E, op, "transposed operand of unknown rank");
          for (q = 0; q < r; q++) perm[q] = q;
          perm[r - 2] = r - 1;
          perm[r - 1] = r - 2;
          out = mgopt__exp_fresh(E, ins[j]);
          t = mgopt__exp_node(E, "Transpose", "", NULL);
          if (!out || !t || !mgopt__exp_set_io(E, &t->inputs, &t->ninputs, &ins[j], 1) ||
              !mgopt__exp_set_io(E, &t->outputs, &t->noutputs, &out, 1) || !mgopt__exp_aints(E, t, "perm", perm, r))
            return mgopt__exp_nomem(E);
          ins[j] = out;
        }
      } else {
        ins[1] = mgopt__exp_in(op, "y");
      }
      return mgopt__exp_simple(E, op, "MatMul", ins, 2) ? MGOPT_OK : mgopt__exp_nomem(E);
    case MGOPT_OP_linear: {
      mgopt_value *x = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "weight"), *b = mgopt_op_operand(op, "bias");
      if (!x || !w) return mgopt__exp_unsupported(E, op, "an operand is missing");
      ins[1] = mgopt__exp_vname(w);
      if (x->type.rank == 2 && (!b || b->type.rank == 1)) {
        ins[2] = b ? mgopt__exp_vname(b) : NULL;
        n = mgopt__exp_simple(E, op, "Gemm", ins, b ? 3 : 2);
        if (!n || !mgopt__exp_aint(E, n, "transB", 1)) return mgopt__exp_nomem(E);
        return MGOPT_OK;
      }
      {
        /* MatMul(x, Transpose(w)) (+ Add(bias)) */
        int64_t perm[2] = {1, 0};
        const char *wt = mgopt__exp_fresh(E, ins[1]), *mm = b ? mgopt__exp_fresh(E, mgopt__exp_vname(op->outs[0])) : NULL;
        const char *ins2[2];
        mgopt_onnx_node *t = mgopt__exp_node(E, "Transpose", "", NULL);
        if (w->type.rank != 2) return mgopt__exp_unsupported(E, op, "weight of rank other than 2");
        if (!wt || !t || !mgopt__exp_set_io(E, &t->inputs, &t->ninputs, &ins[1], 1) ||
            !mgopt__exp_set_io(E, &t->outputs, &t->noutputs, &wt, 1) || !mgopt__exp_aints(E, t, "perm", perm, 2))
          return mgopt__exp_nomem(E);
        ins2[0] = ins[0];
        ins2[1] = wt;
        if (!b) return mgopt__exp_simple(E, op, "MatMul", ins2, 2) ? MGOPT_OK : mgopt__exp_nomem(E);
        t = mgopt__exp_node(E, "MatMul", "", NULL);
        if (!mm || !t || !mgopt__exp_set_io(E, &t->inputs, &t->ninputs, ins2, 2) ||
            !mgopt__exp_set_io(E, &t->outputs, &t->noutputs, &mm, 1))
          return mgopt__exp_nomem(E);
        ins2[0] = mm;
        ins2[1] = mgopt__exp_vname(b);
        return mgopt__exp_simple(E, op, "Add", ins2, 2) ? MGOPT_OK : mgopt__exp_nomem(E);
      }
    }
    case MGOPT_OP_conv:
    case MGOPT_OP_conv_transpose: {
      mgopt_status s;
      ins[1] = mgopt__exp_in(op, "weight");
      ins[2] = mgopt__exp_in(op, "bias");
      if (!ins[0] || !ins[1]) return mgopt__exp_unsupported(E, op, "an operand is missing");
      if (op->kind == MGOPT_OP_conv_transpose && mgopt_op_attr(op, "output_shape")) {
        /* an output_shape that only restates what the pads give is left out */
        const mgopt_type *ot = &op->outs[0]->type;
        int64_t q;
        k = mgopt_op_get_ints(E->p, op, "output_shape", &v);
        if (k < 0 || !mgopt_type_is_static(ot) || k > ot->rank) return mgopt__exp_unsupported(E, op, "output_shape");
        for (q = 0; q < k; q++)
          if (v[q] != ot->dims[ot->rank - k + q].v) return mgopt__exp_unsupported(E, op, "output_shape");
      }
      n = mgopt__exp_simple(E, op, op->kind == MGOPT_OP_conv ? "Conv" : "ConvTranspose", ins, ins[2] ? 3 : 2);
      if (!n) return mgopt__exp_nomem(E);
      if ((s = mgopt__exp_spatial(E, op, n, 1)) != MGOPT_OK) return s;
      if (!mgopt__exp_aint(E, n, "group", mgopt_op_get_int(op, "groups", 1))) return mgopt__exp_nomem(E);
      return MGOPT_OK;
    }
    case MGOPT_OP_avg_pool:
    case MGOPT_OP_max_pool: {
      mgopt_status s;
      k = mgopt_op_get_ints(E->p, op, "kernel_sizes", &v);
      if (k < 0) return mgopt__exp_unsupported(E, op, "no kernel_sizes");
      n = mgopt__exp_simple(E, op, op->kind == MGOPT_OP_max_pool ? "MaxPool" : "AveragePool", ins, 1);
      if (!n || !mgopt__exp_aints(E, n, "kernel_shape", v, k)) return mgopt__exp_nomem(E);
      if ((s = mgopt__exp_spatial(E, op, n, 0)) != MGOPT_OK) return s;
      if (mgopt_op_get_bool(op, "ceil_mode", 0) && !mgopt__exp_aint(E, n, "ceil_mode", 1)) return mgopt__exp_nomem(E);
      if (op->kind == MGOPT_OP_avg_pool && !mgopt_op_get_bool(op, "exclude_padding_from_average", 0) &&
          !mgopt__exp_aint(E, n, "count_include_pad", 1))
        return mgopt__exp_nomem(E);
      return MGOPT_OK;
    }
    case MGOPT_OP_batch_norm:
      ins[1] = mgopt__exp_in(op, "gamma");
      ins[2] = mgopt__exp_in(op, "beta");
      ins[3] = mgopt__exp_in(op, "mean");
      ins[4] = mgopt__exp_in(op, "variance");
      if (!ins[0] || !ins[1] || !ins[2] || !ins[3] || !ins[4]) return mgopt__exp_unsupported(E, op, "gamma and beta are required");
      n = mgopt__exp_simple(E, op, "BatchNormalization", ins, 5);
      if (!n || !mgopt__exp_afloat(E, n, "epsilon", mgopt_op_get_float(op, "epsilon", 1e-5))) return mgopt__exp_nomem(E);
      return MGOPT_OK;
    case MGOPT_OP_instance_norm:
      ins[1] = mgopt__exp_in(op, "gamma");
      ins[2] = mgopt__exp_in(op, "beta");
      if (!ins[0] || !ins[1] || !ins[2]) return mgopt__exp_unsupported(E, op, "gamma and beta are required");
      n = mgopt__exp_simple(E, op, "InstanceNormalization", ins, 3);
      if (!n || !mgopt__exp_afloat(E, n, "epsilon", mgopt_op_get_float(op, "epsilon", 1e-5))) return mgopt__exp_nomem(E);
      return MGOPT_OK;
    case MGOPT_OP_layer_norm: {
      mgopt_value *x = mgopt_op_operand(op, "x");
      int64_t r = x ? x->type.rank : -1, j;
      k = mgopt_op_get_ints(E->p, op, "axes", &v);
      ins[1] = mgopt__exp_in(op, "gamma");
      ins[2] = mgopt__exp_in(op, "beta");
      if (E->opset < 17 || r < 1 || k < 1 || !ins[1]) return mgopt__exp_unsupported(E, op, "needs opset 17 and gamma");
      for (j = 0; j < k; j++)
        if ((v[j] < 0 ? v[j] + r : v[j]) != r - k + j) return mgopt__exp_unsupported(E, op, "axes not the trailing dims");
      n = mgopt__exp_simple(E, op, "LayerNormalization", ins, ins[2] ? 3 : 2);
      if (!n || !mgopt__exp_aint(E, n, "axis", r - k) ||
          !mgopt__exp_afloat(E, n, "epsilon", mgopt_op_get_float(op, "epsilon", 1e-5)))
        return mgopt__exp_nomem(E);
      return MGOPT_OK;
    }
    case MGOPT_OP_reduce_sum:
    case MGOPT_OP_reduce_mean:
    case MGOPT_OP_reduce_max:
    case MGOPT_OP_reduce_min:
    case MGOPT_OP_reduce_prod: {
      static const char *const names[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"};
      int idx = op->kind == MGOPT_OP_reduce_sum ? 0 : op->kind == MGOPT_OP_reduce_mean ? 1 : op->kind == MGOPT_OP_reduce_max ? 2
                : op->kind == MGOPT_OP_reduce_min ? 3 : 4;
      int64_t input_from = idx == 0 ? 13 : 18;
      k = mgopt_op_get_ints(E->p, op, "axes", &v);
      if (k >= 0 && E->opset >= input_from) {
        ins[1] = mgopt__exp_i64_const(E, "axes", v, k);
        if (!ins[1]) return mgopt__exp_nomem(E);
        n = mgopt__exp_simple(E, op, names[idx], ins, 2);
      } else {
        n = mgopt__exp_simple(E, op, names[idx], ins, 1);
        if (n && k >= 0 && !mgopt__exp_aints(E, n, "axes", v, k)) return mgopt__exp_nomem(E);
      }
      if (!n || !mgopt__exp_aint(E, n, "keepdims", mgopt_op_get_bool(op, "keep_dims", 0))) return mgopt__exp_nomem(E);
      return MGOPT_OK;
    }
    case MGOPT_OP_pad: {
      mgopt_tensor *tp = mgopt_value_const(mgopt_op_operand(op, "pad"));
      mgopt_value *x = mgopt_op_operand(op, "x");
      size_t len = 0;
      const char *mode = mgopt_op_get_string(op, "mode", &len);
      int64_t r = x ? x->type.rank : -1, pads[128], m, j;
      if (!tp || r < 1 || r > 64 || tp->numel % 2 || tp->numel / 2 > r) return mgopt__exp_unsupported(E, op, "non-constant pad");
      m = tp->numel / 2;
      for (j = 0; j < 2 * r; j++) pads[j] = 0;
      for (j = 0; j < m; j++) {
        pads[r - m + j] = mgopt_tensor_get_i64(tp, 2 * j);
        pads[2 * r - m + j] = mgopt_tensor_get_i64(tp, 2 * j + 1);
      }
      if (mode && strcmp(mode, "replicate") == 0) mode = "edge";
      if (E->opset >= 11) {
        mgopt_tensor *cv = mgopt_tensor_new_scalar_f64(E->p, (mgopt_dtype)x->type.dtype, mgopt_op_get_float(op, "constant_val", 0.0));
        const char *cn = mgopt__exp_fresh(E, "pad_value");
        mgopt_onnx_tensor *ot;
        ins[1] = mgopt__exp_i64_const(E, "pads", pads, 2 * r);
        if (!ins[1] || !cv || !cn) return mgopt__exp_nomem(E);
        if (E->g->is_main) {
          ot = (mgopt_onnx_tensor *)mgopt__exv_push(E, &E->g->inits, sizeof(mgopt_onnx_tensor));
          if (!ot || mgopt__exp_tensor(E, cv, cn, ot)) return mgopt__exp_nomem(E);
          ins[2] = cn;
        } else {
          ins[2] = NULL;
        }
        n = mgopt__exp_simple(E, op, "Pad", ins, ins[2] ? 3 : 2);
      } else {
        n = mgopt__exp_simple(E, op, "Pad", ins, 1);
        if (n && (!mgopt__exp_aints(E, n, "pads", pads, 2 * r) ||
                  !mgopt__exp_afloat(E, n, "value", mgopt_op_get_float(op, "constant_val", 0.0))))
          return mgopt__exp_nomem(E);
      }
      if (!n || !mgopt__exp_astr(E, n, "mode", mode ? mode : "constant")) return mgopt__exp_nomem(E);
      return MGOPT_OK;
    }
    case MGOPT_OP_tile: {
      mgopt_value *reps = mgopt_op_operand(op, "reps");
      if (!reps) return mgopt__exp_unsupported(E, op, "no reps");
      ins[1] = mgopt__exp_as_i64(E, reps);
      if (!ins[1]) return mgopt__exp_nomem(E);
      return mgopt__exp_simple(E, op, "Tile", ins, 2) ? MGOPT_OK : mgopt__exp_nomem(E);
    }
    default:
      return mgopt__exp_unsupported(E, op, NULL);
  }
}

/* ---------------------------------------------------------------- opaque ops */

static mgopt_status mgopt__exp_opaque(mgopt__exp *E, const mgopt_op *op) {
  const char *sep = strstr(op->type, "::"), *last = NULL, *q;
  char domain[128];
  const char *ins[1024];
  int64_t nin = 0, i;
  mgopt_onnx_node *n;
  for (q = op->type; (q = strstr(q, "::")) != NULL; q += 2) last = q;
  if (!sep || !last) return mgopt__exp_unsupported(E, op, "an opaque op needs a domain::OpType name");
  if ((size_t)(last - op->type) >= sizeof domain) return mgopt__exp_unsupported(E, op, "domain too long");
  memcpy(domain, op->type, (size_t)(last - op->type));
  domain[last - op->type] = 0;
  for (i = 0; i < op->nslots; i++) {
    const mgopt_slot *s = &op->slots[i];
    char *end;
    long k;
    if (s->n == 0 && !s->is_list) continue;
    if (strncmp(s->name, "in", 2) != 0 || s->is_list) return mgopt__exp_unsupported(E, op, "operand slots must be in0, in1, ...");
    k = strtol(s->name + 2, &end, 10);
    if (*end || k < 0 || k >= 1024) return mgopt__exp_unsupported(E, op, "operand slots must be in0, in1, ...");
    while (nin <= k) ins[nin++] = "";
    ins[k] = mgopt__exp_vname(s->uses[0].value);
  }
  n = mgopt__exp_simple(E, op, last + 2, ins, nin);
  if (!n) return mgopt__exp_nomem(E);
  n->domain = mgopt__exp_s(strcmp(domain, "onnx") == 0 ? "" : mgopt_program_intern_cstr(E->p, domain));
  for (i = 0; i < op->nattrs; i++) {
    const mgopt_attr *a = &op->attrs[i];
    mgopt_onnx_attribute *oa;
    int64_t j;
    switch ((mgopt_attr_kind)a->kind) {
      case MGOPT_ATTR_BOOL:
      case MGOPT_ATTR_INT:
        if (!mgopt__exp_aint(E, n, a->name, a->u.i)) return mgopt__exp_nomem(E);
        break;
      case MGOPT_ATTR_FLOAT:
        if (!mgopt__exp_afloat(E, n, a->name, a->u.f)) return mgopt__exp_nomem(E);
        break;
      case MGOPT_ATTR_STRING:
        oa = mgopt__exp_attr(E, n, a->name, MGOPT_ONNX_ATTR_STRING);
        if (!oa) return mgopt__exp_nomem(E);
        oa->s = a->u.s;
        oa->has |= MGOPT_ONNX_ATTR_HAS_S;
        break;
      case MGOPT_ATTR_BOOLS:
      case MGOPT_ATTR_INTS:
        if (!mgopt__exp_aints(E, n, a->name, a->u.ints, a->n)) return mgopt__exp_nomem(E);
        break;
      case MGOPT_ATTR_FLOATS:
        oa = mgopt__exp_attr(E, n, a->name, MGOPT_ONNX_ATTR_FLOATS);
        if (!oa || !(oa->floats = (float *)mgopt_program_alloc(E->p, sizeof(float) * (size_t)(a->n + 1), 8)))
          return mgopt__exp_nomem(E);
        for (j = 0; j < a->n; j++) oa->floats[j] = (float)a->u.floats[j];
        oa->nfloats = a->n;
        break;
      case MGOPT_ATTR_STRINGS:
        oa = mgopt__exp_attr(E, n, a->name, MGOPT_ONNX_ATTR_STRINGS);
        if (!oa) return mgopt__exp_nomem(E);
        oa->strings = a->u.strs;
        oa->nstrings = a->n;
        break;
      case MGOPT_ATTR_TENSOR:
        oa = mgopt__exp_attr(E, n, a->name, MGOPT_ONNX_ATTR_TENSOR);
        if (!oa || !(oa->t = (mgopt_onnx_tensor *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_tensor), 8)))
          return mgopt__exp_nomem(E);
        if (mgopt__exp_tensor(E, a->u.t, "", oa->t)) return E->d ? E->d->status : MGOPT_ERR_UNSUPPORTED;
        break;
      case MGOPT_ATTR_BYTES:
        if (a->tag != MGOPT_ONNX_ATTR_TYPE_PROTO || a->n <= 0)
          return mgopt__exp_unsupported(E, op, "a bytes attribute that is not an ONNX type");
        oa = mgopt__exp_attr(E, n, a->name, MGOPT_ONNX_ATTR_TYPE_PROTO);
        if (!oa || !(oa->tp = (mgopt_onnx_type *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_type), 8)))
          return mgopt__exp_nomem(E);
        oa->tp->other.ptr = (const char *)a->u.bytes;
        oa->tp->other.len = (size_t)a->n;
        break;
      default:
        return mgopt__exp_unsupported(E, op, "an attribute kind ONNX cannot hold");
    }
  }
  for (i = 0; i < op->nblocks; i++) {
    mgopt_onnx_attribute *oa = mgopt__exp_attr(E, n, op->blocks[i]->name, MGOPT_ONNX_ATTR_GRAPH);
    mgopt__exg *saved = E->g;
    const mgopt_op *saved_op = E->op;
    mgopt_status s;
    if (!oa || !(oa->g = (mgopt_onnx_graph *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_graph), 8)))
      return mgopt__exp_nomem(E);
    if (E->depth >= 64) return mgopt__exp_unsupported(E, op, "subgraphs nested too deeply");
    oa->g->name = mgopt__exp_s(op->blocks[i]->name);
    E->depth++;
    s = mgopt__exp_block_graph(E, op->blocks[i], oa->g, 0);
    E->depth--;
    E->g = saved;
    E->op = saved_op;
    if (s) return s;
  }
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- graphs */

static mgopt_onnx_value_info *mgopt__exp_vi(mgopt__exp *E, mgopt__exv *vec, const char *name, const mgopt_type *t) {
  mgopt_onnx_value_info *vi = (mgopt_onnx_value_info *)mgopt__exv_push(E, vec, sizeof(mgopt_onnx_value_info));
  if (!vi) return NULL;
  vi->name = mgopt__exp_s(name);
  /* an unknown element type is written as no type at all (ONNX rejects type 0) */
  if (t->kind == MGOPT_TYPE_TENSOR && t->dtype == MGOPT_DT_UNKNOWN) return vi;
  vi->type = mgopt__exp_type(E, t);
  return vi->type ? vi : NULL;
}

static int mgopt__exp_listed_input(const mgopt__exg *g, const char *name) {
  int64_t j;
  for (j = 0; j < g->inputs.n; j++)
    if (((const mgopt_onnx_value_info *)g->inputs.data)[j].name.ptr == name) return 1;
  return 0;
}

static mgopt_status mgopt__exp_block_graph(mgopt__exp *E, mgopt_block *b, mgopt_onnx_graph *og, int is_main) {
  mgopt__exg g;
  mgopt_op *op;
  int32_t i;
  mgopt_status s = MGOPT_OK;
  const mgopt_onnx_model *orig = (const mgopt_onnx_model *)E->p->onnx_meta;
  memset(&g, 0, sizeof g);
  g.is_main = is_main;
  E->g = &g;
  if (is_main && orig && orig->graph) {
    /* the imported input order; inputs that had initializers are listed again */
    int64_t k;
    for (k = 0; k < orig->graph->ninputs && !s; k++) {
      const char *nm = mgopt_program_intern(E->p, orig->graph->inputs[k].name.ptr ? orig->graph->inputs[k].name.ptr : "",
                                            orig->graph->inputs[k].name.len);
      mgopt_value *found = NULL;
      for (i = 0; i < b->nargs; i++)
        if (b->args[i]->name == nm) found = b->args[i];
      if (!found)
        for (op = b->first; op; op = op->next)
          if (op->kind == MGOPT_OP_const && op->outs[0]->name == nm) found = op->outs[0];
      if (found && !mgopt__exp_vi(E, &g.inputs, nm, &found->type)) s = mgopt__exp_nomem(E);
    }
    for (i = 0; i < b->nargs && !s; i++) {
      int64_t j, seen = 0;
      for (j = 0; j < g.inputs.n; j++)
        if (((mgopt_onnx_value_info *)g.inputs.data)[j].name.ptr == b->args[i]->name) seen = 1;
      if (!seen && !mgopt__exp_vi(E, &g.inputs, mgopt__exp_vname(b->args[i]), &b->args[i]->type)) s = mgopt__exp_nomem(E);
    }
  } else {
    for (i = 0; i < b->nargs && !s; i++)
      if (!mgopt__exp_vi(E, &g.inputs, mgopt__exp_vname(b->args[i]), &b->args[i]->type)) s = mgopt__exp_nomem(E);
  }
  for (op = b->first; op && !s; op = op->next) {
    E->op = op;
    if (op->kind == MGOPT_OP_const) {
      mgopt_tensor *t = mgopt_value_const(op->outs[0]);
      /* a constant nothing reads (one import turned into an attribute, or one
         export rewrote as int64) is not written, unless it is listed among
         the graph's inputs */
      if (op->outs[0]->nuses == 0 && !mgopt__exp_listed_input(&g, op->outs[0]->name)) continue;
      if (!t) {
        s = mgopt__exp_unsupported(E, op, "a const without a value");
        break;
      }
      if (is_main && !((op->flags & MGOPT_OP_ONNX_CONSTANT_NODE) && E->o && E->o->keep_constant_nodes)) {
        mgopt_onnx_tensor *ot = (mgopt_onnx_tensor *)mgopt__exv_push(E, &g.inits, sizeof(mgopt_onnx_tensor));
        if (!ot) s = mgopt__exp_nomem(E);
        else s = mgopt__exp_tensor(E, t, mgopt__exp_vname(op->outs[0]), ot);
      } else {
        mgopt_onnx_node *n = mgopt__exp_simple(E, op, "Constant", NULL, 0);
        mgopt_onnx_attribute *a = n ? mgopt__exp_attr(E, n, "value", MGOPT_ONNX_ATTR_TENSOR) : NULL;
        if (!a || !(a->t = (mgopt_onnx_tensor *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_tensor), 8))) s = mgopt__exp_nomem(E);
        else s = mgopt__exp_tensor(E, t, "", a->t);
      }
      continue;
    }
    if (op->kind == MGOPT_OP_OPAQUE) s = mgopt__exp_opaque(E, op);
    else if (op->nblocks) s = mgopt__exp_unsupported(E, op, "control flow");
    else s = mgopt__exp_canonical(E, op);
    E->g = &g;
  }
  E->op = NULL;
  for (i = 0; i < b->nouts && !s; i++) {
    mgopt_value *v = b->outs[i]->value;
    if (!mgopt__exp_vi(E, &g.outputs, mgopt__exp_vname(v), &v->type)) s = mgopt__exp_nomem(E);
  }
  if (!s) {
    og->nodes = (mgopt_onnx_node *)mgopt__exv_take(E, &g.nodes, sizeof(mgopt_onnx_node), &og->nnodes);
    og->initializers = (mgopt_onnx_tensor *)mgopt__exv_take(E, &g.inits, sizeof(mgopt_onnx_tensor), &og->ninitializers);
    og->inputs = (mgopt_onnx_value_info *)mgopt__exv_take(E, &g.inputs, sizeof(mgopt_onnx_value_info), &og->ninputs);
    og->outputs = (mgopt_onnx_value_info *)mgopt__exv_take(E, &g.outputs, sizeof(mgopt_onnx_value_info), &og->noutputs);
    if (E->p->status) s = mgopt__exp_nomem(E);
  }
  mgopt__exv_free(E, &g.nodes, sizeof(mgopt_onnx_node));
  mgopt__exv_free(E, &g.inits, sizeof(mgopt_onnx_tensor));
  mgopt__exv_free(E, &g.inputs, sizeof(mgopt_onnx_value_info));
  mgopt__exv_free(E, &g.outputs, sizeof(mgopt_onnx_value_info));
  return s;
}

/* Renames values whose name is already taken so every name in the model is
   unique. The function's inputs and outputs are claimed first and keep
   their names. */
typedef struct mgopt__exn {
  mgopt__exp *E;
  int oom;
} mgopt__exn;

/* 1 if the interned name was free (now claimed), 0 if taken, -1 on OOM. */
static int mgopt__exp_claim(mgopt__exp *E, const char *name) {
  size_t h;
  if ((E->names_count + 1) * 2 > E->names_cap) {
    size_t ncap = E->names_cap ? E->names_cap * 2 : 1024, i;
    const char **nt = (const char **)mgopt__heap_realloc(&E->p->alloc, NULL, 0, ncap * sizeof(char *));
    if (!nt) return -1;
    memset((void *)nt, 0, ncap * sizeof(char *));
    for (i = 0; i < E->names_cap; i++)
      if (E->names[i]) {
        h = (size_t)mgopt__hash_bytes(E->names[i], strlen(E->names[i]), MGOPT__HASH_SEED) & (ncap - 1);
        while (nt[h]) h = (h + 1) & (ncap - 1);
        nt[h] = E->names[i];
      }
    if (E->names) mgopt__heap_free(&E->p->alloc, (void *)E->names, E->names_cap * sizeof(char *));
    E->names = nt;
    E->names_cap = ncap;
  }
  h = (size_t)mgopt__hash_bytes(name, strlen(name), MGOPT__HASH_SEED) & (E->names_cap - 1);
  while (E->names[h]) {
    if (E->names[h] == name) return 0;
    h = (h + 1) & (E->names_cap - 1);
  }
  E->names[h] = name;
  E->names_count++;
  return 1;
}

static int mgopt__exn_claim(mgopt__exn *N, const char *name) {
  int r = mgopt__exp_claim(N->E, name);
  if (r < 0) N->oom = 1;
  return r != 0;
}

static void mgopt__exn_value(mgopt__exn *N, mgopt_value *v, int is_io) {
  if ((v->flags & MGOPT_VALUE_ABSENT) || !v->name || is_io || N->oom) return;
  while (!mgopt__exn_claim(N, v->name)) {
    v->name = mgopt__exp_fresh(N->E, v->name);
    if (!v->name) {
      N->oom = 1;
      return;
    }
  }
}

static void mgopt__exn_block(mgopt__exn *N, mgopt_block *b, mgopt_block *body, int depth) {
  mgopt_op *op;
  int32_t i, k;
  for (i = 0; i < b->nargs; i++) mgopt__exn_value(N, b->args[i], b == body);
  for (op = b->first; op; op = op->next) {
    for (k = 0; k < op->nblocks && depth < 64; k++) mgopt__exn_block(N, op->blocks[k], body, depth + 1);
    for (i = 0; i < op->nouts; i++) {
      mgopt_value *v = op->outs[i];
      int io = 0;
      const mgopt_use *u;
      for (u = v->uses; u; u = u->next)
        if (!u->op && u->block == body) io = 1;
      mgopt__exn_value(N, v, io);
    }
  }
}

static mgopt_status mgopt__exp_unique_names(mgopt__exp *E, mgopt_function *f) {
  mgopt__exn N;
  int32_t i;
  memset(&N, 0, sizeof N);
  N.E = E;
  for (i = 0; i < f->body->nargs; i++)
    if (f->body->args[i]->name) mgopt__exn_claim(&N, f->body->args[i]->name);
  for (i = 0; i < f->body->nouts; i++)
    if (f->body->outs[i]->value->name) mgopt__exn_claim(&N, f->body->outs[i]->value->name);
  mgopt__exn_block(&N, f->body, f->body, 0);
  return N.oom ? mgopt__exp_nomem(E) : MGOPT_OK;
}

static void mgopt__exp_free_names(mgopt__exp *E) {
  if (E->names) mgopt__heap_free(&E->p->alloc, (void *)E->names, E->names_cap * sizeof(char *));
  if (E->fresh_base) mgopt__heap_free(&E->p->alloc, (void *)E->fresh_base, E->fresh_cap * sizeof(char *));
  if (E->fresh_next) mgopt__heap_free(&E->p->alloc, E->fresh_next, E->fresh_cap * sizeof(uint64_t));
  E->names = E->fresh_base = NULL;
  E->fresh_next = NULL;
}

/* ---------------------------------------------------------------- unread initializers */

/* A set of names (by content), for dropping initializers no node reads. */
typedef struct mgopt__exr {
  mgopt_program *p;
  mgopt_str *tab;
  size_t cap, count;
  int oom;
} mgopt__exr;

static size_t mgopt__exr_h(const mgopt__exr *r, mgopt_str s) {
  return (size_t)mgopt__hash_bytes(s.ptr ? s.ptr : "", s.len, MGOPT__HASH_SEED) & (r->cap - 1);
}

static void mgopt__exr_add(mgopt__exr *r, mgopt_str s) {
  size_t h;
  if (r->oom || !s.len) return;
  if ((r->count + 1) * 2 > r->cap) {
    size_t ncap = r->cap ? r->cap * 2 : 1024, i;
    mgopt_str *nt = (mgopt_str *)mgopt__heap_realloc(&r->p->alloc, NULL, 0, ncap * sizeof(mgopt_str));
    mgopt_str *old = r->tab;
    size_t ocap = r->cap;
    if (!nt) {
      r->oom = 1;
      return;
    }
    memset(nt, 0, ncap * sizeof(mgopt_str));
    r->tab = nt;
    r->cap = ncap;
    r->count = 0;
    for (i = 0; i < ocap; i++)
      if (old[i].len) mgopt__exr_add(r, old[i]);
    if (old) mgopt__heap_free(&r->p->alloc, old, ocap * sizeof(mgopt_str));
  }
  h = mgopt__exr_h(r, s);
  while (r->tab[h].len) {
    if (r->tab[h].len == s.len && memcmp(r->tab[h].ptr, s.ptr, s.len) == 0) return;
    h = (h + 1) & (r->cap - 1);
  }
  r->tab[h] = s;
  r->count++;
}

static int mgopt__exr_has(const mgopt__exr *r, mgopt_str s) {
  size_t h;
  if (!r->cap) return 0;
  h = mgopt__exr_h(r, s);
  while (r->tab[h].len) {
    if (r->tab[h].len == s.len && memcmp(r->tab[h].ptr, s.ptr, s.len) == 0) return 1;
    h = (h + 1) & (r->cap - 1);
  }
  return 0;
}

/* Every name a graph (and its subgraphs) reads. */
static void mgopt__exr_graph(mgopt__exr *r, const mgopt_onnx_graph *g, int depth) {
  int64_t i, k;
  if (depth > 256) return;
  for (i = 0; i < g->nnodes; i++) {
    const mgopt_onnx_node *n = &g->nodes[i];
    for (k = 0; k < n->ninputs; k++) mgopt__exr_add(r, n->inputs[k]);
    for (k = 0; k < n->nattributes; k++)
      if (n->attributes[k].g) mgopt__exr_graph(r, n->attributes[k].g, depth + 1);
  }
  for (i = 0; i < g->noutputs; i++) mgopt__exr_add(r, g->outputs[i].name);
}

/* Drops initializers that no node reads and that are not graph inputs (an
   int32 constant the export rewrote as int64, for example). */
static mgopt_status mgopt__exp_drop_unread(mgopt_program *p, mgopt_onnx_graph *g) {
  mgopt__exr r;
  int64_t i, j = 0;
  memset(&r, 0, sizeof r);
  r.p = p;
  mgopt__exr_graph(&r, g, 0);
  for (i = 0; i < g->ninputs; i++) mgopt__exr_add(&r, g->inputs[i].name);
  if (!r.oom)
    for (i = 0; i < g->ninitializers; i++)
      if (mgopt__exr_has(&r, g->initializers[i].name)) g->initializers[j++] = g->initializers[i];
  if (!r.oom) g->ninitializers = j;
  if (r.tab) mgopt__heap_free(&p->alloc, r.tab, r.cap * sizeof(mgopt_str));
  return r.oom ? MGOPT_ERR_NOMEM : MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_onnx_export(mgopt_program *p, const mgopt_onnx_export_options *opts,
                                        mgopt_onnx_model **out, mgopt_diag *d) {
  mgopt__exp E;
  mgopt_function *f = p ? mgopt_program_function(p, "main") : NULL;
  const mgopt_onnx_model *orig;
  mgopt_onnx_model *m;
  mgopt_status s;
  int64_t i;
  if (!f) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "export: the program has no main function");
  orig = (const mgopt_onnx_model *)p->onnx_meta;
  memset(&E, 0, sizeof E);
  E.p = p;
  E.o = opts;
  E.d = d;
  E.opset = opts && opts->opset > 0 ? opts->opset : 0;
  m = (mgopt_onnx_model *)mgopt_program_alloc(p, sizeof *m, 8);
  if (!m) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  m->program = p;
  if (orig) {
    m->ir_version = orig->ir_version;
    m->domain = orig->domain;
    m->model_version = orig->model_version;
    m->doc_string = orig->doc_string;
    m->metadata_props = orig->metadata_props;
    m->nmetadata_props = orig->nmetadata_props;
    m->training_info = orig->training_info;
    m->ntraining_info = orig->ntraining_info;
    m->functions = orig->functions;
    m->nfunctions = orig->nfunctions;
    m->opset_imports = orig->opset_imports;
    m->nopset_imports = orig->nopset_imports;
    m->dir = orig->dir;
    for (i = 0; i < orig->nopset_imports; i++)
      if ((orig->opset_imports[i].domain.len == 0 || (orig->opset_imports[i].domain.len == 7 &&
                                                       memcmp(orig->opset_imports[i].domain.ptr, "ai.onnx", 7) == 0)) &&
          !E.opset)
        E.opset = orig->opset_imports[i].version;
  }
  if (!E.opset) E.opset = 17;
  if (!orig || (opts && opts->opset > 0)) {
    /* a fresh opset list: the default domain at the target version, others kept */
    int64_t n = orig ? orig->nopset_imports : 0, j = 0;
    mgopt_onnx_opset *os = (mgopt_onnx_opset *)mgopt_program_alloc(p, sizeof(mgopt_onnx_opset) * (size_t)(n + 1), 8);
    if (!os) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
    os[j].domain = mgopt__exp_s("");
    os[j++].version = E.opset;
    for (i = 0; i < n; i++)
      if (orig->opset_imports[i].domain.len && !(orig->opset_imports[i].domain.len == 7 &&
                                                  memcmp(orig->opset_imports[i].domain.ptr, "ai.onnx", 7) == 0))
        os[j++] = orig->opset_imports[i];
    m->opset_imports = os;
    m->nopset_imports = j;
  }
  if (!m->ir_version || E.opset > 18) m->ir_version = m->ir_version > 9 ? m->ir_version : 9;
  if (E.opset <= 18 && !orig) m->ir_version = 8;
  m->producer_name = mgopt__exp_s("mgopt");
  m->producer_version = mgopt__exp_s(MGOPT_VERSION_STRING);
  m->graph = (mgopt_onnx_graph *)mgopt_program_alloc(p, sizeof *m->graph, 8);
  if (!m->graph) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  m->graph->name = orig && orig->graph ? orig->graph->name : mgopt__exp_s("main");
  if (orig && orig->graph) {
    m->graph->doc_string = orig->graph->doc_string;
    m->graph->metadata_props = orig->graph->metadata_props;
    m->graph->nmetadata_props = orig->graph->nmetadata_props;
  }
  s = mgopt__exp_unique_names(&E, f);
  if (!s) s = mgopt__exp_block_graph(&E, f->body, m->graph, 1);
  mgopt__exp_free_names(&E);
  if (!s && mgopt__exp_drop_unread(p, m->graph)) s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  if (s) return s;
  if (m->ir_version > 0 && m->ir_version < 4) {
    /* before IR version 4 every initializer must also be a graph input */
    mgopt_onnx_graph *g = m->graph;
    int64_t extra = 0, j, k;
    mgopt_onnx_value_info *vi;
    mgopt__exr listed;
    memset(&listed, 0, sizeof listed);
    listed.p = p;
    for (j = 0; j < g->ninputs; j++) mgopt__exr_add(&listed, g->inputs[j].name);
    for (j = 0; j < g->ninitializers; j++)
      if (!mgopt__exr_has(&listed, g->initializers[j].name)) extra++;
    vi = listed.oom ? NULL
                    : (mgopt_onnx_value_info *)mgopt_program_alloc(
                          p, sizeof(mgopt_onnx_value_info) * (size_t)(g->ninputs + extra + 1), 8);
    if (!vi) {
      if (listed.tab) mgopt__heap_free(&p->alloc, listed.tab, listed.cap * sizeof(mgopt_str));
      return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
    }
    if (g->ninputs) memcpy(vi, g->inputs, sizeof(mgopt_onnx_value_info) * (size_t)g->ninputs);
    for (j = 0, k = g->ninputs; j < g->ninitializers && !s; j++) {
      const mgopt_onnx_tensor *t = &g->initializers[j];
      mgopt_type ty;
      if (mgopt__exr_has(&listed, t->name)) continue;
      mgopt__exr_add(&listed, t->name); /* listed once even if two initializers share a name */
      if (mgopt_type_make_static(p, &ty, mgopt_onnx_dtype(t->data_type), (int32_t)t->ndims, t->dims) ||
          listed.oom || !(vi[k].type = mgopt__exp_type(&E, &ty))) {
        s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
        break;
      }
      vi[k].name = t->name;
      k++;
    }
    if (listed.tab) mgopt__heap_free(&p->alloc, listed.tab, listed.cap * sizeof(mgopt_str));
    if (s) return s;
    g->inputs = vi;
    g->ninputs = k;
  }
  *out = m;
  return MGOPT_OK;
}
