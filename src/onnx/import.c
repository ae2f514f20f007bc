/* src/onnx/import.c — the ONNX importer's driver: graphs and subgraphs, values, initializers, nodes handed to the mapping table or kept opaque. */
#include "convert_internal.h"

/* How it works. The graph becomes function `main`: graph inputs are its
   arguments, also those with an initializer (an overridable default, as
   old exporters list every weight: the interface stays, and export writes
   the default back) unless the model's constant_inputs asks to fold them or
   its IR version is below 4 (where every initializer had to be an input, and
   ONNX Runtime takes them as constants);
   other initializers and Constant nodes become `const` ops (their raw data
   stays borrowed); each default-domain node goes
   to the row of the mapping table for its op type and the model's opset
   (ops.c), which builds canonical ops when the semantics are exactly equal,
   types and attributes included. Otherwise the node becomes an opaque op
   `onnx::OpType` (or `domain::OpType`) whose operand slots in0, in1, ... are
   the node's inputs (an omitted optional input is an absent slot), whose
   attributes are kept, whose GRAPH attributes become nested blocks named
   after the attribute, and whose output types come from the type-rule table
   (opaque_types.c). Output types come from type inference, refined by
   value_info. Subgraphs see the values of enclosing graphs. Model-local
   functions become IR functions after `main` (functions.c). The model tree
   stays in the program (program->onnx_meta) so export can keep everything
   the IR does not hold: opset imports, metadata, functions kept as they
   came, doc strings. An error about a node names its graph and the node:
   "graph 'g', node 12 'Conv_3' (Conv): ...", outer graphs first. */

MGOPT__PRIVATE mgopt_status mgopt__imp_fail(mgopt__imp *I, mgopt_status s, const char *fmt, ...) {
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

/* Puts "graph 'g', node k 'name' (OpType): " before the message of an error
   about node k of g (its diag set as by mgopt__imp_fail; one without a
   message gets status s's "out of memory"). An outer graph's place that
   does not fit is left out, so the innermost place and the reason stay whole. */
static void mgopt__imp_locate(mgopt__imp *I, const mgopt_onnx_graph *g, int64_t k, mgopt_status s) {
  const mgopt_onnx_node *n = &g->nodes[k];
  char pre[400];
  if (!I->d) return;
  if (!I->d->status) {
    I->d->status = s;
    snprintf(I->d->msg, sizeof I->d->msg, "%s", s == MGOPT_ERR_NOMEM ? "out of memory" : mgopt_status_str(s));
  }
  if (mgopt__imp_default_domain(n->domain))
    snprintf(pre, sizeof pre, "graph '%.*s', node %lld '%.*s' (%.*s): ", (int)(g->name.len > 80 ? 80 : g->name.len),
             g->name.ptr ? g->name.ptr : "", (long long)k, (int)(n->name.len > 80 ? 80 : n->name.len),
             n->name.ptr ? n->name.ptr : "", (int)(n->op_type.len > 80 ? 80 : n->op_type.len),
             n->op_type.ptr ? n->op_type.ptr : "");
  else
    snprintf(pre, sizeof pre, "graph '%.*s', node %lld '%.*s' (%.*s::%.*s): ", (int)(g->name.len > 80 ? 80 : g->name.len),
             g->name.ptr ? g->name.ptr : "", (long long)k, (int)(n->name.len > 80 ? 80 : n->name.len),
             n->name.ptr ? n->name.ptr : "", (int)(n->domain.len > 60 ? 60 : n->domain.len),
             n->domain.ptr ? n->domain.ptr : "", (int)(n->op_type.len > 80 ? 80 : n->op_type.len),
             n->op_type.ptr ? n->op_type.ptr : "");
  if (strlen(pre) + strlen(I->d->msg) < sizeof I->d->msg) mgopt__diag_prefix(I->d, pre);
}

static mgopt_status mgopt__imp_graph(mgopt__imp *I, const mgopt_onnx_graph *g, mgopt_block *b, int is_main);

/* ---------------------------------------------------------------- opaque ops */

/* The node as an opaque op; e is its entry in the op index (NULL: none), for its type rule. */
static mgopt_status mgopt__imp_opaque(mgopt__imp *I, const mgopt__onnx_entry *e) {
  const mgopt_onnx_node *n = I->node;
  char type[256];
  int64_t i, ngraphs = 0;
  int32_t nouts = (int32_t)n->noutputs, bi = 0;
  mgopt_op *op;
  mgopt_status s;
  int refs = 0;
  mgopt__onnx_node_type(type, sizeof type, n->domain, n->op_type, n->overload);
  for (i = 0; i < n->nattributes; i++) {
    if (n->attributes[i].ref_attr_name.len) refs = 1;
    else if (n->attributes[i].type == MGOPT_ONNX_ATTR_GRAPH) ngraphs++;
  }
  if (nouts > 100000 || n->ninputs > 100000) return mgopt__imp_fail(I, MGOPT_ERR_LIMIT, "node with too many inputs or outputs");
  op = mgopt__imp_op(I, type, nouts, (int32_t)ngraphs);
  if (!op) return MGOPT_ERR_NOMEM;
  for (i = 0; i < n->ninputs; i++) {
    char slot[24];
    mgopt_value *v;
    if (n->inputs[i].len == 0) continue;
    v = mgopt__imp_in(I, i);
    if (!v)
      return mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "input '%.*s' is not defined",
                             (int)(n->inputs[i].len > 80 ? 80 : n->inputs[i].len), n->inputs[i].ptr);
    snprintf(slot, sizeof slot, "in%d", (int)i);
    if (mgopt_op_set_operand(op, slot, v)) return MGOPT_ERR_NOMEM;
  }
  if (mgopt__imp_note_call(I, op)) return MGOPT_ERR_NOMEM;
  for (i = 0; i < n->nattributes; i++) {
    const mgopt_onnx_attribute *a = &n->attributes[i];
    mgopt_attr at;
    memset(&at, 0, sizeof at);
    at.name = mgopt__imp_intern_copy(I, a->name);
    if (!at.name) return MGOPT_ERR_NOMEM;
    if (a->ref_attr_name.len) {
      /* a reference to an attribute of the function whose body holds the node */
      if (!I->in_function)
        return mgopt__imp_fail(I, MGOPT_ERR_UNSUPPORTED, "attribute references belong in functions, not graphs");
      if (a->type < 0 || a->type > 0xff)
        return mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "attribute reference of type %d", (int)a->type);
      at.kind = MGOPT_ATTR_BYTES;
      at.tag = MGOPT_ONNX_ATTR_REF | a->type;
      at.n = (int64_t)a->ref_attr_name.len;
      at.u.bytes = (const uint8_t *)a->ref_attr_name.ptr;
      if (mgopt_op_set_attr(op, &at)) return MGOPT_ERR_NOMEM;
      continue;
    }
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
        return mgopt__imp_fail(I, MGOPT_ERR_UNSUPPORTED, "attribute '%.*s' of type %d is not supported",
                               (int)(a->name.len > 60 ? 60 : a->name.len), a->name.ptr, (int)a->type);
    }
    if (mgopt_op_set_attr(op, &at)) return MGOPT_ERR_NOMEM;
  }
  /* a type rule reads the attributes: not when one is a reference */
  if (e && e->rule && !refs && (s = e->rule->fn(I, op, e->rule)) != MGOPT_OK) return s;
  return mgopt__imp_finish(I, op);
}

/* ---------------------------------------------------------------- graphs */

static mgopt_status mgopt__imp_node(mgopt__imp *I, const mgopt_onnx_node *n) {
  const mgopt__onnx_entry *e = NULL;
  mgopt__imp_fn fn = NULL;
  int64_t i;
  I->node = n;
  for (i = 0; i < n->ninputs; i++)
    if (n->inputs[i].len && !mgopt__imp_in(I, i))
      return mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "input '%.*s' is not defined before it",
                             (int)(n->inputs[i].len > 80 ? 80 : n->inputs[i].len), n->inputs[i].ptr);
  for (i = 0; i < n->noutputs; i++) {
    const char *nm;
    if (!n->outputs[i].len) continue;
    nm = mgopt__imp_intern(I, n->outputs[i]);
    if (!nm) return MGOPT_ERR_NOMEM;
    if (mgopt__imap_get(&I->values, nm))
      return mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "value '%s' is defined twice", nm);
  }
  if (mgopt__imp_default_domain(n->domain) && (e = mgopt__onnx_index_find(&I->ops, n->op_type)) != NULL && e->map)
    fn = e->map->to_ir;
  /* what imports writes back: a node whose canonical op the exporter writes
     only at a later opset than the model's stays opaque */
  if (fn && mgopt__onnx_kind_only_later(e->map->kind, I->opset)) fn = NULL;
  /* a mapping reads the attributes' values: a node with a reference stays opaque */
  for (i = 0; fn && i < n->nattributes; i++)
    if (n->attributes[i].ref_attr_name.len) fn = NULL;
  /* the mappings read the first output's name: a node without it stays opaque
     (but the recurrent ops' mapping, which names a missing Y itself) */
  if (fn && (n->noutputs < 1 || !n->outputs[0].len) &&
      !(n->noutputs >= 2 && (e->map->kind == MGOPT_OP_lstm || e->map->kind == MGOPT_OP_gru || e->map->kind == MGOPT_OP_rnn)))
    fn = NULL;
  if (fn) {
    mgopt_op *last = I->b->last;
    int64_t mark = I->values.nundo;
    int r;
    I->infer_failed = 0;
    r = fn(I, e->map);
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
  return mgopt__imp_opaque(I, e);
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

/* A sparse initializer densified (ONNX Runtime densifies it at load too):
   values [NNZ] at indices (integers: [NNZ] linear, or [NNZ, rank]
   coordinates) of a tensor of shape dims, zeros elsewhere. NULL with the
   diag set when it is malformed. */
static mgopt_tensor *mgopt__imp_sparse(mgopt__imp *I, const mgopt_onnx_sparse_tensor *st) {
  mgopt_tensor *val, *ind, *t;
  int64_t n = 1, nnz, k, d, es;
  int32_t rank;
  uint8_t *dst;
  const uint8_t *src;
  if (!st->values || !st->indices || st->ndims < 0 || st->ndims > MGOPT_MAX_RANK) {
    mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "a sparse initializer lacks values, indices or a valid shape");
    return NULL;
  }
  rank = (int32_t)st->ndims;
  for (d = 0; d < rank; d++)
    if (st->dims[d] < 0 || !mgopt__mul_i64(n, st->dims[d], &n)) {
      mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "sparse initializer '%.*s': bad dims", (int)st->values->name.len,
                      st->values->name.ptr);
      return NULL;
    }
  val = mgopt__imp_tensor(I, st->values);
  ind = val ? mgopt__imp_tensor(I, st->indices) : NULL;
  if (!val || !ind) return NULL;
  nnz = val->numel;
  es = (int64_t)mgopt_dtype_nbytes((mgopt_dtype)val->dtype, 1);
  if (val->rank != 1 || es <= 0 || mgopt_dtype_bits((mgopt_dtype)val->dtype) < 8 ||
      !mgopt_dtype_is_int((mgopt_dtype)ind->dtype) ||
      !((ind->rank == 1 && ind->numel == nnz) || (ind->rank == 2 && ind->shape[0] == nnz && ind->shape[1] == rank))) {
    mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "sparse initializer '%.*s': values and indices disagree",
                    (int)st->values->name.len, st->values->name.ptr);
    return NULL;
  }
  t = mgopt_tensor_new(I->p, (mgopt_dtype)val->dtype, rank, st->dims);
  src = (const uint8_t *)mgopt_tensor_data(I->p, val);
  if (!t || !src || !(dst = (uint8_t *)mgopt_tensor_data_mut(I->p, t))) {
    mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  memset(dst, 0, t->nbytes);
  for (k = 0; k < nnz; k++) {
    int64_t at = 0;
    if (ind->rank == 1) {
      at = mgopt_tensor_get_i64(ind, k);
    } else {
      for (d = 0; d < rank; d++) {
        int64_t c = mgopt_tensor_get_i64(ind, k * rank + d);
        if (c < 0 || c >= st->dims[d]) at = -1;
        if (at >= 0) at = at * st->dims[d] + c;
      }
    }
    if (at < 0 || at >= n) {
      mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "sparse initializer '%.*s': an index is out of range",
                      (int)st->values->name.len, st->values->name.ptr);
      return NULL;
    }
    memcpy(dst + at * es, src + k * es, (size_t)es);
  }
  return t;
}

/* 1 when init (a value of the initializer map) is one of g's sparse initializers. */
static int mgopt__imp_is_sparse(const mgopt_onnx_graph *g, const void *init) {
  uintptr_t a = (uintptr_t)init, lo = (uintptr_t)g->sparse_initializers;
  return g->nsparse_initializers > 0 && a >= lo &&
         a < lo + sizeof(mgopt_onnx_sparse_tensor) * (size_t)g->nsparse_initializers;
}

/* Imports graph g into block b: inputs become block args (for `main`, also
   the inputs with an initializer, whose default export writes back, unless
   the model's constant_inputs makes them the initializers' constants; for a
   function body, typed I->arg_types),
   initializers const ops, nodes ops, outputs block outputs. is_main: 0 a
   subgraph, 1 the model's graph, 2 a function body. */
static mgopt_status mgopt__imp_graph(mgopt__imp *I, const mgopt_onnx_graph *g, mgopt_block *b, int is_main) {
  int64_t i;
  mgopt_status s;
  mgopt__imap inits;
  memset(&inits, 0, sizeof inits);
  inits.al = &I->p->alloc;
  I->b = b;
  I->node = NULL;
  for (i = 0; i < g->nvalue_info; i++) mgopt__imap_put(&I->vinfo, mgopt__imp_intern(I, g->value_info[i].name), g->value_info[i].type);
  for (i = 0; i < g->noutputs; i++) mgopt__imap_put(&I->vinfo, mgopt__imp_intern(I, g->outputs[i].name), g->outputs[i].type);
  for (i = 0; i < g->ninitializers; i++) mgopt__imap_put(&inits, mgopt__imp_intern(I, g->initializers[i].name), &g->initializers[i]);
  for (i = 0; i < g->nsparse_initializers; i++)
    if (g->sparse_initializers[i].values)
      mgopt__imap_put(&inits, mgopt__imp_intern(I, g->sparse_initializers[i].values->name), &g->sparse_initializers[i]);
  if (inits.oom || I->vinfo.oom) {
    mgopt__imap_free(&inits);
    return mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory");
  }
  for (i = 0; i < g->ninputs; i++) {
    const char *nm = mgopt__imp_intern(I, g->inputs[i].name);
    const void *init;
    mgopt_type t;
    mgopt_value *v;
    if (!nm) return MGOPT_ERR_NOMEM;
    init = is_main == 1 ? mgopt__imap_get(&inits, nm) : NULL;
    /* an input with a default: a run-time input (export writes the default
       back), or the initializer's constant with constant_inputs, before IR
       version 4 (every initializer had to be an input: ONNX Runtime takes
       them as constants) and for a sparse default */
    if (init && (I->m->constant_inputs || (I->m->ir_version > 0 && I->m->ir_version < 4) ||
                 mgopt__imp_is_sparse(g, init)))
      continue;
    if (is_main == 2) t = I->arg_types[i];
    else if ((s = mgopt__imp_type(I, g->inputs[i].type, &t)) != MGOPT_OK) goto out;
    if (init && (t.kind != MGOPT_TYPE_TENSOR || t.rank < 0)) { /* undeclared: the default's type */
      const mgopt_onnx_tensor *it = (const mgopt_onnx_tensor *)init;
      if (mgopt_type_make_static(I->p, &t, mgopt_onnx_dtype(it->data_type), (int32_t)it->ndims, it->dims) != MGOPT_OK) {
        s = MGOPT_ERR_NOMEM;
        goto out;
      }
    }
    v = mgopt_block_add_arg(b, nm, &t);
    if (!v) {
      s = MGOPT_ERR_NOMEM;
      goto out;
    }
    mgopt__imap_put(&I->values, nm, v);
  }
  /* initializers, then sparse ones (read dense): const ops either way */
  for (i = 0; i < g->ninitializers + g->nsparse_initializers; i++) {
    const mgopt_onnx_sparse_tensor *st = i < g->ninitializers ? NULL : &g->sparse_initializers[i - g->ninitializers];
    const mgopt_onnx_tensor *ot = st ? st->values : &g->initializers[i];
    const char *nm = ot ? mgopt__imp_intern(I, ot->name) : NULL;
    mgopt_tensor *t;
    mgopt_value *v;
    if (!nm || !nm[0]) {
      s = mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, st ? "a sparse initializer has no name" : "an initializer has no name");
      goto out;
    }
    if (is_main == 1 && !st && (v = (mgopt_value *)mgopt__imap_get(&I->values, nm)) != NULL && !v->def)
      continue; /* the default of a run-time input */
    t = st ? mgopt__imp_sparse(I, st) : mgopt__imp_tensor(I, ot);
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
      if ((s = mgopt__imp_node(I, &g->nodes[order[i]])) != MGOPT_OK) {
        mgopt__imp_locate(I, g, order[i], s);
        break;
      }
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

MGOPT__PRIVATE mgopt_status mgopt__imp_function_body(mgopt__imp *I, const mgopt_onnx_graph *g, mgopt_block *b) {
  return mgopt__imp_graph(I, g, b, 2);
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
    if (mgopt__imp_default_domain(m->opset_imports[i].domain)) I.opset = m->opset_imports[i].version;
  if (mgopt_program_function(I.p, "main"))
    return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "import: the program already has a main function");
  f = mgopt_function_new(I.p, "main");
  if (!f) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  mgopt__onnx_index_build(&I.ops, I.opset);
  s = mgopt__imp_prepare_functions(&I) ? mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory") : MGOPT_OK;
  if (!s) s = mgopt__imp_graph(&I, m->graph, f->body, 1);
  if (!s && mgopt__imp_functions(&I)) s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  mgopt__imap_free(&I.values);
  mgopt__imap_free(&I.vinfo);
  mgopt__imap_free(&I.fnames);
  if (s == MGOPT_OK && I.p->status) s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  if (s == MGOPT_OK) I.p->onnx_meta = m;
  if (s == MGOPT_OK && mgopt_onnx_set_target(I.p, 0) != MGOPT_OK) s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
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

/* ---------------------------------------------------------------- importing an opaque op again */

/* The opaque op's attribute as the node's: 0 when it is of a kind the
   mappings do not read (tensors, graphs, encoded bytes). */
static int mgopt__imp_attr_back(mgopt_program *p, const mgopt_attr *a, mgopt_onnx_attribute *o) {
  int64_t k;
  memset(o, 0, sizeof *o);
  o->name.ptr = a->name;
  o->name.len = strlen(a->name);
  switch (a->kind) {
    case MGOPT_ATTR_INT: o->type = MGOPT_ONNX_ATTR_INT; o->i = a->u.i; return 1;
    case MGOPT_ATTR_FLOAT: o->type = MGOPT_ONNX_ATTR_FLOAT; o->f = (float)a->u.f; return 1;
    case MGOPT_ATTR_STRING: o->type = MGOPT_ONNX_ATTR_STRING; o->s = a->u.s; return 1;
    case MGOPT_ATTR_INTS: o->type = MGOPT_ONNX_ATTR_INTS; o->ints = a->u.ints; o->nints = a->n; return 1;
    case MGOPT_ATTR_STRINGS: o->type = MGOPT_ONNX_ATTR_STRINGS; o->strings = a->u.strs; o->nstrings = a->n; return 1;
    case MGOPT_ATTR_FLOATS:
      o->type = MGOPT_ONNX_ATTR_FLOATS;
      o->nfloats = a->n;
      o->floats = (float *)mgopt_program_alloc(p, sizeof(float) * (size_t)(a->n + 1), 8);
      if (!o->floats) return 0;
      for (k = 0; k < a->n; k++) o->floats[k] = (float)a->u.floats[k];
      return 1;
    default: return 0;
  }
}

/* Fills what `cur` does not know from `old` (the opaque output's type, which
   may hold declared value infos); 0 when the two disagree. */
static int mgopt__imp_keep_known(mgopt_program *p, mgopt_value *v, const mgopt_type *old) {
  mgopt_type t;
  int32_t i;
  if (old->kind != MGOPT_TYPE_TENSOR || v->type.kind != MGOPT_TYPE_TENSOR) return old->kind == v->type.kind;
  if (old->dtype != MGOPT_DT_UNKNOWN && v->type.dtype != MGOPT_DT_UNKNOWN && old->dtype != v->type.dtype) return 0;
  if (old->rank < 0) return 1;
  if (v->type.rank >= 0 && v->type.rank != old->rank) return 0;
  if (v->type.rank < 0) {
    uint8_t dt = v->type.dtype;
    if (mgopt__type_copy(p, &v->type, old)) return 0;
    if (dt != MGOPT_DT_UNKNOWN) v->type.dtype = dt;
    return 1;
  }
  if (mgopt__type_copy(p, &t, &v->type)) return 0;
  if (t.dtype == MGOPT_DT_UNKNOWN) t.dtype = old->dtype;
  for (i = 0; i < t.rank; i++) {
    int known_new = t.dims[i].sym || t.dims[i].v >= 0, known_old = old->dims[i].sym || old->dims[i].v >= 0;
    if (!known_new && known_old) t.dims[i] = old->dims[i];
    else if (known_new && known_old && !old->dims[i].sym && !t.dims[i].sym && old->dims[i].v != t.dims[i].v) return 0;
  }
  v->type = t;
  return 1;
}

MGOPTDEF int mgopt_onnx_reimport_op(mgopt_program *p, mgopt_op *op) {
  mgopt__imp I;
  mgopt_onnx_node n;
  const mgopt__onnx_map *row = NULL, *rows;
  const mgopt__onnx_rule *rule = NULL, *rules;
  mgopt_value *made[64];
  mgopt_str ty;
  mgopt_op *last, *o, *prev;
  int64_t opset, i;
  int32_t k, cnt, fam;
  int r = 0, refined = 0;
  if (!p || !op || op->kind != MGOPT_OP_OPAQUE || !op->parent || op->nblocks || op->nouts < 1 || op->nouts > 64 ||
      strncmp(op->type, "onnx::", 6) != 0)
    return 0;
  /* an attribute reference has no value a mapping or a type rule could read */
  for (k = 0; k < op->nattrs; k++)
    if (op->attrs[k].kind == MGOPT_ATTR_BYTES && (op->attrs[k].tag & MGOPT_ONNX_ATTR_REF)) return 0;
  ty.ptr = op->type + 6;
  ty.len = strlen(ty.ptr);
  opset = mgopt__onnx_export_opset(p, 0);
  for (fam = 0; !row && (rows = mgopt__onnx_family(fam, &cnt)) != NULL; fam++)
    for (k = 0; k < cnt && !row; k++)
      if (rows[k].to_ir && mgopt__imp_streq(ty, rows[k].onnx) && mgopt__onnx_in_range(rows[k].since, rows[k].until, opset))
        row = &rows[k];
  rules = mgopt__onnx_rules(&cnt);
  for (k = 0; k < cnt && !rule; k++)
    if (mgopt__imp_streq(ty, rules[k].onnx) && mgopt__onnx_in_range(rules[k].since, rules[k].until, opset)) rule = &rules[k];
  if (!row && !rule) return 0;
  /* the node the op was made from: inputs in0, in1, ... under their slot
     names, outputs under the op's output names, the attributes as they came */
  memset(&n, 0, sizeof n);
  n.op_type = ty;
  if (op->name) {
    n.name.ptr = op->name;
    n.name.len = strlen(op->name);
  }
  for (k = 0; k < op->nslots; k++) {
    const char *s = op->slots[k].name;
    char *end;
    long j;
    if (s[0] != 'i' || s[1] != 'n' || op->slots[k].is_list || op->slots[k].n != 1) return 0;
    j = strtol(s + 2, &end, 10);
    if (*end || j < 0 || j > 1000) return 0;
    if (j + 1 > n.ninputs) n.ninputs = j + 1;
  }
  n.inputs = (mgopt_str *)mgopt_program_alloc(p, sizeof(mgopt_str) * (size_t)(n.ninputs + 1), 8);
  n.outputs = (mgopt_str *)mgopt_program_alloc(p, sizeof(mgopt_str) * (size_t)op->nouts, 8);
  n.attributes = (mgopt_onnx_attribute *)mgopt_program_alloc(p, sizeof(mgopt_onnx_attribute) * (size_t)(op->nattrs + 1), 8);
  if (!n.inputs || !n.outputs || !n.attributes) return -1;
  memset(n.inputs, 0, sizeof(mgopt_str) * (size_t)(n.ninputs + 1));
  memset(&I, 0, sizeof I);
  I.p = p;
  I.m = (mgopt_onnx_model *)p->onnx_meta;
  I.values.al = &p->alloc;
  I.vinfo.al = &p->alloc;
  I.opset = opset;
  I.b = op->parent;
  I.node = &n;
  for (k = 0; k < op->nslots; k++) {
    long j = strtol(op->slots[k].name + 2, NULL, 10);
    n.inputs[j].ptr = op->slots[k].name;
    n.inputs[j].len = strlen(op->slots[k].name);
    mgopt__imap_put(&I.values, op->slots[k].name, op->slots[k].uses[0].value);
  }
  n.noutputs = op->nouts;
  for (k = 0; k < op->nouts; k++)
    if (!(op->outs[k]->flags & MGOPT_VALUE_ABSENT)) {
      n.outputs[k].ptr = op->outs[k]->name;
      n.outputs[k].len = strlen(op->outs[k]->name);
    }
  for (k = 0; k < op->nattrs; k++)
    if (!mgopt__imp_attr_back(p, &op->attrs[k], &n.attributes[n.nattributes++])) row = NULL;
  last = op->parent->last;
  if (row && n.outputs[0].len && !I.values.oom) {
    r = row->to_ir(&I, row);
    if (r < 0) r = 0; /* a mapping that fails here declines: the op stays as it is */
    for (k = 0; r > 0 && k < op->nouts; k++) {
      mgopt_value *v = op->outs[k];
      made[k] = (v->flags & MGOPT_VALUE_ABSENT) ? NULL : (mgopt_value *)mgopt__imap_get(&I.values, v->name);
      if (!made[k]) {
        if (!(v->flags & MGOPT_VALUE_ABSENT) && v->nuses) r = 0;
        continue;
      }
      /* a block output keeps its name; the declared type stays */
      if (made[k] == v || (made[k]->name != v->name && v->nblock_uses) || !mgopt__imp_keep_known(p, made[k], &v->type))
        r = 0;
    }
  }
  if (r > 0) {
    /* the new ops were appended to the block: they go before op, in order */
    o = last ? last->next : op->parent->first;
    while (o) {
      mgopt_op *nx = o->next;
      mgopt_op_move_before(o, op);
      o = nx;
    }
    for (k = 0; k < op->nouts; k++)
      if (made[k]) mgopt_value_replace_all_uses(op->outs[k], made[k]);
    mgopt_op_erase(op);
  } else {
    for (o = op->parent->last; o && o != last; o = prev) {
      prev = o->prev;
      mgopt_op_erase(o);
    }
    if (rule) {
      mgopt_type before[64];
      for (k = 0; k < op->nouts; k++) before[k] = op->outs[k]->type;
      if (rule->fn(&I, op, rule) != MGOPT_OK) r = -1;
      for (k = 0; k < op->nouts; k++)
        if (!mgopt_type_equal(&before[k], &op->outs[k]->type)) refined = 1;
    }
  }
  i = I.values.oom;
  mgopt__imap_free(&I.values);
  mgopt__imap_free(&I.vinfo);
  if (i || p->status) return -1;
  return r < 0 ? -1 : r > 0 ? 1 : refined ? 2 : 0;
}
