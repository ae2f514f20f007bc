/* src/passes/tflite/inline_functions.c — tflite::inline_functions: each call of a program function is replaced by a copy of the function's body.

   Spec: tflite_operation_fusion.md, "Extending the TensorFlow Lite
   converter": functions are kept until the composite ones were fused
   (tflite::fuse_composite_functions), then the others are inlined so the
   graph is flat for the passes and writers that follow.

   Before:
     "t::f"(%a: (2, fp32), %b: (2, fp32)) {
       %s: (2, fp32) = add(x=%a, y=%b)
       %r: (2, fp32) = relu(x=%s)
     } -> (%r)
     main(%x: (2, fp32)) {
       %y: (2, fp32) = "t::f"(in0=%x, in1=%x)
       %z: (2, fp32) = exp(x=%y)
     } -> (%z)
   After:
     main(%x: (2, fp32)) {
       %y_s: (2, fp32) = add(x=%x, y=%x)
       %y: (2, fp32) = relu(x=%y_s)
       %z: (2, fp32) = exp(x=%y)
     } -> (%z)

   A call is an opaque op whose type names one of the program's functions
   (mgopt_op_callee); its operand "in<i>" is the function's input i. The
   body's ops are copied before the call (nested blocks, attributes, names
   and the has-effects flag included): a copied value is named
   "<call output>_<body name>", except that the value a body output gives
   takes the call output's name. A function whose every call was inlined is
   removed; main and functions never called stay. Calls inside an inlined
   body are inlined in the next round, up to 64 rounds. A function on a
   cycle of the call graph (calling itself, directly or through other
   functions, from any nested block) is never inlined: its calls stay
   calls. The cycles are found once, before the first round (Tarjan's
   strongly connected components over the calls, linear): inlining a
   function that is on no cycle cannot make one.
   Options: functions="a::F;b::G" inlines only those (empty: every function).
   Fires on: every call of a function of the program.
   Must not fire: a call of a function kept outside the IR (an ONNX
   function kept as it came: not a callee); a call leaving out an input the
   body reads; a call of the function that holds it (recursion); a call
   whose output count differs from the function's; a body referring to
   the function's attributes (an ONNX ref_attr_name: its value is the
   call's).
   Cost: one walk per round plus the size of the copied bodies; the cycles,
   one walk and O(functions + calls). */
#include "../../passes_internal.h"
#include "../../onnx/onnx_api.h" /* MGOPT_ONNX_ATTR_REF: an attribute reference inside an ONNX function */

typedef struct mgopt__inl {
  mgopt_program *p;
  mgopt__map vmap; /* body value -> copy */
  const char *prefix;
  int oom;
} mgopt__inl;

static mgopt_value *mgopt__inl_get(const mgopt__inl *I, mgopt_value *v) {
  const mgopt__map_slot *sl = v ? mgopt__map_find(&I->vmap, mgopt__map_ptr_key(v)) : NULL;
  return sl ? (mgopt_value *)sl->v.p : v;
}

static void mgopt__inl_put(mgopt__inl *I, const mgopt_value *from, mgopt_value *to) {
  mgopt__map_slot *sl = mgopt__map_get(&I->vmap, mgopt__map_ptr_key(from), NULL);
  if (!sl) I->oom = 1;
  else sl->v.p = to;
}

static const char *mgopt__inl_name(mgopt__inl *I, const mgopt_value *v) {
  return mgopt__pu_name2(I->p, I->prefix, mgopt__pu_value_name(v));
}

static int mgopt__inl_block(mgopt__inl *I, const mgopt_block *src, mgopt_block *dst, mgopt_op *pos, int depth);

/* A copy of op inserted before pos (or appended to dst when pos is NULL). */
static int mgopt__inl_op(mgopt__inl *I, const mgopt_op *op, mgopt_block *dst, mgopt_op *pos, int depth) {
  mgopt_program *p = I->p;
  mgopt_op *n = mgopt_op_new(p, op->type, op->nouts, op->nblocks);
  int32_t s, k, i;
  if (!n) return 0;
  for (s = 0; s < op->nslots; s++) {
    const mgopt_slot *sl = &op->slots[s];
    if (sl->is_list) {
      mgopt_value **vals = (mgopt_value **)mgopt_program_alloc(p, sizeof(mgopt_value *) * (size_t)(sl->n + 1), 8);
      if (!vals) return 0;
      for (k = 0; k < sl->n; k++) vals[k] = mgopt__inl_get(I, sl->uses[k].value);
      if (mgopt_op_set_operand_list(n, sl->name, vals, sl->n)) return 0;
    } else if (mgopt_op_set_operand(n, sl->name, sl->n ? mgopt__inl_get(I, sl->uses[0].value) : NULL)) {
      return 0;
    }
  }
  for (i = 0; i < op->nattrs; i++)
    if (mgopt_op_set_attr(n, &op->attrs[i])) return 0;
  n->flags |= op->flags & (MGOPT_OP_HAS_EFFECTS | MGOPT_OP_ONNX_CONSTANT_NODE | MGOPT_OP_ONNX_GLOBAL_POOL);
  for (i = 0; i < op->nouts; i++) {
    mgopt_value *o = op->outs[i];
    if (mgopt__type_copy(p, &n->outs[i]->type, &o->type)) return 0;
    n->outs[i]->flags = o->flags;
    if (mgopt_value_set_name(n->outs[i], mgopt__inl_name(I, o))) return 0;
    mgopt__inl_put(I, o, n->outs[i]);
  }
  if (op->name && mgopt_op_set_name(n, op->nouts && op->name == op->outs[0]->name ? n->outs[0]->name
                                                                                    : mgopt__pu_name2(p, I->prefix, op->name)))
    return 0;
  if (pos) mgopt_op_insert_before(n, pos);
  else mgopt_op_append(n, dst);
  for (i = 0; i < op->nblocks; i++) {
    const mgopt_block *sb = op->blocks[i];
    mgopt_block *nb = n->blocks[i];
    nb->name = sb->name;
    for (k = 0; k < sb->nargs; k++) {
      mgopt_value *a = mgopt_block_add_arg(nb, mgopt__inl_name(I, sb->args[k]), &sb->args[k]->type);
      if (!a) return 0;
      mgopt__inl_put(I, sb->args[k], a);
    }
    if (!mgopt__inl_block(I, sb, nb, NULL, depth + 1)) return 0;
    for (k = 0; k < sb->nouts; k++)
      if (mgopt_block_add_output(nb, mgopt__inl_get(I, sb->outs[k]->value))) return 0;
  }
  return !I->oom && !mgopt_program_status(p);
}

/* 1 when an op of block b (nested blocks included) refers to an attribute of
   the function holding it (an ONNX ref_attr_name): the copy would need the
   call's attribute values. */
static int mgopt__inl_refers(const mgopt_block *b, int depth) {
  const mgopt_op *o;
  int32_t i;
  if (depth > 64) return 1;
  for (o = b->first; o; o = o->next) {
    for (i = 0; i < o->nattrs; i++)
      if (o->attrs[i].kind == MGOPT_ATTR_BYTES && (o->attrs[i].tag & MGOPT_ONNX_ATTR_REF)) return 1;
    for (i = 0; i < o->nblocks; i++)
      if (mgopt__inl_refers(o->blocks[i], depth + 1)) return 1;
  }
  return 0;
}

static int mgopt__inl_block(mgopt__inl *I, const mgopt_block *src, mgopt_block *dst, mgopt_op *pos, int depth) {
  const mgopt_op *o;
  if (depth > 64) return 0;
  for (o = src->first; o; o = o->next)
    if (!mgopt__inl_op(I, o, dst, pos, depth)) return 0;
  return 1;
}

/* 1 when function name is one of "a;b;..." (an empty list names every function). */
static int mgopt__inl_listed(const char *list, const char *name) {
  size_t n = strlen(name);
  if (!list || !*list) return 1;
  while (*list) {
    const char *end = strchr(list, ';');
    size_t len = end ? (size_t)(end - list) : strlen(list);
    if (len == n && memcmp(list, name, n) == 0) return 1;
    if (!end) break;
    list = end + 1;
  }
  return 0;
}

typedef struct mgopt__inl_calls {
  mgopt_program *p;
  const char *only;
  const mgopt__map *cyclic; /* functions on a call cycle (keys), never inlined; NULL: none known */
  mgopt_op **ops;
  int64_t n, cap;
  int oom;
} mgopt__inl_calls;

static int mgopt__inl_collect(mgopt_op *op, void *ud) {
  mgopt__inl_calls *C = (mgopt__inl_calls *)ud;
  mgopt_function *f;
  if (op->kind != MGOPT_OP_OPAQUE || !(f = mgopt_op_callee(op)) || !mgopt__inl_listed(C->only, f->name)) return 0;
  if (C->cyclic && mgopt__map_find(C->cyclic, mgopt__map_ptr_key(f))) return 0;
  if (C->n == C->cap) {
    void *arr = C->ops;
    if (!mgopt__grow(&C->p->alloc, &arr, &C->cap, C->n + 1, sizeof *C->ops)) {
      C->oom = 1;
      return 1;
    }
    C->ops = (mgopt_op **)arr;
  }
  C->ops[C->n++] = op;
  return 0;
}

/* 1 when v is an output of an op copied between `after` and `call`. */
static int mgopt__inl_copied(const mgopt_op *after, const mgopt_op *call, const mgopt_value *v) {
  const mgopt_op *o;
  if (!v->def) return 0;
  for (o = call->prev; o && o != after; o = o->prev)
    if (o == v->def) return 1;
  return 0;
}

/* The calls of each function fns[0..nf) now, into count. 0 on OOM. */
static int mgopt__inl_count(mgopt__inl_calls *C, mgopt_function *const *fns, int32_t nf, int64_t *count) {
  mgopt__map m;
  int64_t k;
  int32_t i;
  int ok = 1;
  mgopt__map_init(&m, &C->p->alloc);
  for (i = 0; i < nf; i++) {
    mgopt__map_slot *sl = mgopt__map_get(&m, mgopt__map_ptr_key(fns[i]), NULL);
    count[i] = 0;
    if (!sl) ok = 0;
    else sl->v.i = i;
  }
  C->n = 0;
  C->only = NULL;
  C->cyclic = NULL;
  if (ok) mgopt_program_walk(C->p, mgopt__inl_collect, C);
  for (k = 0; ok && k < C->n; k++) {
    const mgopt__map_slot *sl = mgopt__map_find(&m, mgopt__map_ptr_key(mgopt_op_callee(C->ops[k])));
    if (sl) count[sl->v.i]++;
  }
  mgopt__map_free(&m);
  return ok && !C->oom;
}

/* Puts in `cyclic` every function of fns[0..nf) that lies on a cycle of the
   call graph: a call of itself, or a strongly connected component of more
   than one function (Tarjan's algorithm, iterative, O(functions + calls)).
   An edge f -> g is a call of g anywhere in f's body, nested blocks included.
   0 on OOM. */
static int mgopt__inl_cycles(mgopt__inl_calls *C, mgopt_function *const *fns, int32_t nf, mgopt__map *cyclic) {
  mgopt_program *p = C->p;
  mgopt__map idx;
  int64_t k;
  int32_t *start, *to, *num, *low, *stk, *cs_node, *cs_edge, i, sp = 0, cp = 0, next = 1;
  uint8_t *on;
  int ok = 1;
  mgopt__map_init(&idx, &p->alloc);
  for (i = 0; i < nf && ok; i++) {
    mgopt__map_slot *sl = mgopt__map_get(&idx, mgopt__map_ptr_key(fns[i]), NULL);
    if (!sl) ok = 0;
    else sl->v.i = i;
  }
  C->n = 0;
  C->only = NULL;
  C->cyclic = NULL;
  if (ok) mgopt_program_walk(p, mgopt__inl_collect, C);
  ok = ok && !C->oom;
  start = (int32_t *)mgopt_program_alloc(p, sizeof(int32_t) * (size_t)(nf + 2), 8);
  to = (int32_t *)mgopt_program_alloc(p, sizeof(int32_t) * (size_t)(C->n + 1), 8);
  num = (int32_t *)mgopt_program_alloc(p, sizeof(int32_t) * (size_t)(6 * nf + 1), 8);
  on = (uint8_t *)mgopt_program_alloc(p, (size_t)nf + 1, 8);
  if (!ok || !start || !to || !num || !on) {
    mgopt__map_free(&idx);
    return 0;
  }
  low = num + nf;
  stk = low + nf;
  cs_node = stk + nf;
  cs_edge = cs_node + nf;
  memset(start, 0, sizeof(int32_t) * (size_t)(nf + 2));
  memset(num, 0, sizeof(int32_t) * (size_t)(6 * nf + 1));
  memset(on, 0, (size_t)nf + 1);
  /* the edges, grouped by caller (counting sort) */
  for (k = 0; k < C->n; k++) {
    const mgopt_function *from = C->ops[k]->parent ? C->ops[k]->parent->func : NULL;
    const mgopt__map_slot *a = from ? mgopt__map_find(&idx, mgopt__map_ptr_key(from)) : NULL;
    const mgopt__map_slot *b = mgopt__map_find(&idx, mgopt__map_ptr_key(mgopt_op_callee(C->ops[k])));
    if (a && b) start[a->v.i + 2]++;
  }
  for (i = 0; i < nf; i++) start[i + 2] += start[i + 1];
  for (k = 0; k < C->n; k++) {
    const mgopt_function *from = C->ops[k]->parent ? C->ops[k]->parent->func : NULL;
    const mgopt__map_slot *a = from ? mgopt__map_find(&idx, mgopt__map_ptr_key(from)) : NULL;
    const mgopt__map_slot *b = mgopt__map_find(&idx, mgopt__map_ptr_key(mgopt_op_callee(C->ops[k])));
    if (a && b) to[start[a->v.i + 1]++] = (int32_t)b->v.i;
  }
  /* start[f] .. start[f + 1]: f's callees */
  for (i = 0; i < nf && ok; i++) {
    if (num[i]) continue;
    cs_node[cp] = i;
    cs_edge[cp++] = start[i];
    num[i] = low[i] = next++;
    stk[sp++] = i;
    on[i] = 1;
    while (cp > 0) {
      int32_t v = cs_node[cp - 1];
      if (cs_edge[cp - 1] < start[v + 1]) {
        int32_t w = to[cs_edge[cp - 1]++];
        if (w == v) {
          mgopt__map_slot *sl = mgopt__map_get(cyclic, mgopt__map_ptr_key(fns[v]), NULL);
          if (!sl) ok = 0;
        } else if (!num[w]) {
          num[w] = low[w] = next++;
          stk[sp++] = w;
          on[w] = 1;
          cs_node[cp] = w;
          cs_edge[cp++] = start[w];
        } else if (on[w] && num[w] < low[v]) {
          low[v] = num[w];
        }
        continue;
      }
      cp--;
      if (cp > 0 && low[v] < low[cs_node[cp - 1]]) low[cs_node[cp - 1]] = low[v];
      if (low[v] == num[v]) { /* v roots a component: the functions above it on the stack */
        int big = stk[sp - 1] != v;
        int32_t w;
        do {
          w = stk[--sp];
          on[w] = 0;
          if (big && !mgopt__map_get(cyclic, mgopt__map_ptr_key(fns[w]), NULL)) ok = 0;
        } while (w != v);
      }
    }
  }
  mgopt__map_free(&idx);
  return ok;
}

/* Inlines one call: 1 done, 0 left alone, -1 out of memory. */
static int mgopt__inl_call(mgopt_program *p, mgopt_op *call) {
  mgopt_function *f = mgopt_op_callee(call);
  const mgopt_block *body = f->body;
  mgopt__inl I;
  mgopt_op *after = call->prev;
  mgopt_value *outs[256];
  const char *names[256];
  int follows[256];
  int32_t i, j;
  int ok;
  if (call->parent->func == f || call->nouts != body->nouts || call->nouts > 256 || mgopt__inl_refers(body, 0)) return 0;
  memset(&I, 0, sizeof I);
  I.p = p;
  mgopt__map_init(&I.vmap, &p->alloc);
  I.prefix = mgopt__pu_name2(p, call->nouts ? mgopt__pu_value_name(call->outs[0]) : "call", "_");
  ok = I.prefix != NULL;
  for (i = 0; ok && i < body->nargs; i++) {
    char slot[24];
    mgopt_value *v;
    snprintf(slot, sizeof slot, "in%d", (int)i);
    v = mgopt_op_operand(call, slot);
    if (!v && body->args[i]->nuses) ok = 0;
    else if (v) mgopt__inl_put(&I, body->args[i], v);
  }
  if (ok && !mgopt__inl_block(&I, body, call->parent, call, 0)) ok = -1;
  for (i = 0; ok > 0 && i < call->nouts; i++) {
    mgopt_value *to = mgopt__inl_get(&I, body->outs[i]->value);
    /* an input the call left out; or a value that is not a copy (an operand
       passed through) standing for a function output, which would lose its name */
    if (to->owner == body || (!mgopt__inl_copied(after, call, to) && mgopt_value_is_block_output(call->outs[i]))) ok = 0;
  }
  if (ok <= 0) {
    while (call->prev && call->prev != after) mgopt_op_erase(call->prev);
    mgopt__map_free(&I.vmap);
    return I.oom || mgopt_program_status(p) ? -1 : 0;
  }
  for (i = 0; i < call->nouts; i++) {
    outs[i] = mgopt__inl_get(&I, body->outs[i]->value);
    follows[i] = mgopt__inl_copied(after, call, outs[i]) && outs[i]->def->name == outs[i]->name;
    /* a copied value standing for a call output takes that output's name
       (the first output it stands for) once the call is gone; a function
       output's name moves by itself */
    names[i] = mgopt__inl_copied(after, call, outs[i]) && !mgopt_value_is_block_output(call->outs[i])
                   ? call->outs[i]->name
                   : NULL;
    for (j = 0; j < i; j++)
      if (outs[j] == outs[i]) names[i] = NULL, follows[i] = 0;
    mgopt_value_replace_all_uses(call->outs[i], outs[i]);
  }
  mgopt__map_free(&I.vmap);
  mgopt_op_erase(call);
  for (i = 0; i < call->nouts; i++) {
    if (names[i] && mgopt_value_set_name(outs[i], names[i])) return -1;
    if (follows[i] && mgopt_op_set_name(outs[i]->def, outs[i]->name)) return -1;
  }
  return mgopt_program_status(p) ? -1 : 1;
}

static mgopt_status mgopt__inl_run(mgopt_pass_ctx *ctx) {
  mgopt_program *p = ctx->program;
  int32_t nf = mgopt_program_function_count(p), i, round;
  int64_t k, *calls_before;
  mgopt_function **fns;
  mgopt__inl_calls C;
  mgopt__map cyclic;
  memset(&C, 0, sizeof C);
  C.p = p;
  C.only = ctx->opts[0].s;
  mgopt__map_init(&cyclic, &p->alloc);
  fns = (mgopt_function **)mgopt_program_alloc(p, sizeof(void *) * (size_t)(nf + 1), 8);
  calls_before = (int64_t *)mgopt_program_alloc(p, sizeof(int64_t) * (size_t)(nf + 1), 8);
  if (!fns || !calls_before) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
  for (i = 0; i < nf; i++) fns[i] = mgopt_program_function_at(p, i);
  if (!mgopt__inl_count(&C, fns, nf, calls_before)) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
  if (!mgopt__inl_cycles(&C, fns, nf, &cyclic)) {
    mgopt__map_free(&cyclic);
    if (C.ops) mgopt__heap_free(&p->alloc, C.ops, (size_t)C.cap * sizeof *C.ops);
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
  }
  C.only = ctx->opts[0].s;
  C.cyclic = &cyclic;
  for (round = 0; round < 64; round++) {
    int64_t done = 0;
    C.n = 0;
    mgopt_program_walk(p, mgopt__inl_collect, &C);
    if (C.oom) break;
    for (k = 0; k < C.n; k++) {
      int r = mgopt__inl_call(p, C.ops[k]);
      if (r < 0) {
        C.oom = 1;
        break;
      }
      done += r;
    }
    ctx->rewrites += done;
    if (!done || C.oom) break;
  }
  C.cyclic = NULL;
  mgopt__map_free(&cyclic);
  if (C.oom || mgopt_program_status(p)) {
    if (C.ops) mgopt__heap_free(&p->alloc, C.ops, (size_t)C.cap * sizeof *C.ops);
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
  }
  /* a function that had calls and has none left goes (main stays) */
  if (ctx->rewrites) {
    int64_t *left = (int64_t *)mgopt_program_alloc(p, sizeof(int64_t) * (size_t)(nf + 1), 8);
    if (!left || !mgopt__inl_count(&C, fns, nf, left)) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
    for (i = 0; i < nf; i++)
      if (calls_before[i] && !left[i] && strcmp(fns[i]->name, "main") != 0) mgopt__function_drop(fns[i]);
  }
  if (C.ops) mgopt__heap_free(&p->alloc, C.ops, (size_t)C.cap * sizeof *C.ops);
  return MGOPT_OK;
}

static const mgopt_opt_def mgopt__inl_opts[] = {
    {"functions", MGOPT_OPT_STRING, "", "only calls of these functions: \"a::F;b::G\" (empty: every function)", NULL}};

MGOPT__DEFINE_PASS_WITH_OPTIONS(tflite, tflite, inline_functions, "each call of a program function becomes a copy of its body",
                                mgopt__inl_opts, mgopt__inl_run);
