/* src/onnx/functions.c — ONNX model-local functions as IR functions: their names in the IR, the order and types their bodies are imported with, and their FunctionProto written back. */
#include "convert_internal.h"

/* How it works. A model-local function (ModelProto.functions) becomes an IR
   function named as the opaque op a node calling it becomes: "domain::Name",
   or "domain::Name@overload" for an overloaded one (IR version 10), so a call
   stays an opaque op and mgopt_op_callee finds the function it calls by its
   type. The body is imported as a graph is (the same node mapping) when the
   first call to it is imported, its inputs typed by that call's operands; a
   later call passing other types widens them to the join (equal dtypes stay,
   differing dims become unknown) and the body is imported again, so each
   input ends with a type every caller agrees with. A call's outputs get the
   types of the body's outputs, the body being typed at least as generally
   as the call's operands. An input some caller does not pass, or of a
   function that a function kept as it came calls, has an unknown type;
   functions no imported graph calls are imported last with unknown input
   types. A node whose attribute refers to one of the function's attributes
   (ref_attr_name) stays opaque; the reference is an attribute of kind
   MGOPT_ATTR_BYTES tagged MGOPT_ONNX_ATTR_REF | its type, the bytes being
   the referenced name, and is written back as it came.
   A function is kept as it came (its FunctionProto copied verbatim on
   export, never looked into) when: its domain is the default one; its name
   or overload holds ':' or '@'; its default-domain opset differs from the
   model's (the body would be mapped at another opset than the one passes
   and the exporter target); two functions share its IR name; it calls
   itself through other functions; or its body does not import (an
   attribute kind the importer refuses, say). Export writes each imported
   function from the IR: its body through the same exporter as a subgraph
   (constants as Constant nodes), its input names and count as imported,
   its output names as imported (an Identity node makes an output whose
   value got another name, or that repeats one, carry its own name), and
   its domain, name, overload, attributes with and without defaults,
   opset imports (the default domain at the export opset), doc string and
   metadata as they came; value_info entries are kept for the names the
   written body still defines (export.c, mgopt__exp_function). */

/* The opaque op type of a node of domain/op_type/overload (default domain:
   "onnx::OpType"), into buf (NUL-terminated, parts cut as the importer cuts them). */
MGOPT__PRIVATE void mgopt__onnx_node_type(char *buf, size_t cap, mgopt_str domain, mgopt_str op_type, mgopt_str overload) {
  if (mgopt__imp_default_domain(domain))
    snprintf(buf, cap, "onnx::%.*s", (int)(op_type.len > 200 ? 200 : op_type.len), op_type.ptr ? op_type.ptr : "");
  else if (!overload.len)
    snprintf(buf, cap, "%.*s::%.*s", (int)(domain.len > 100 ? 100 : domain.len), domain.ptr,
             (int)(op_type.len > 120 ? 120 : op_type.len), op_type.ptr ? op_type.ptr : "");
  else
    snprintf(buf, cap, "%.*s::%.*s@%.*s", (int)(domain.len > 100 ? 100 : domain.len), domain.ptr,
             (int)(op_type.len > 120 ? 120 : op_type.len), op_type.ptr ? op_type.ptr : "",
             (int)(overload.len > 100 ? 100 : overload.len), overload.ptr);
}

static int mgopt__fn_has_char(mgopt_str s, char c) { return s.len && memchr(s.ptr, c, s.len) != NULL; }

/* The default-domain opset of function fn (the model's when it lists none). */
static int64_t mgopt__fn_opset(const mgopt_onnx_function *fn, int64_t model_opset) {
  int64_t i;
  for (i = 0; i < fn->nopset_imports; i++)
    if (mgopt__imp_default_domain(fn->opset_imports[i].domain)) return fn->opset_imports[i].version;
  return model_opset;
}

MGOPT__PRIVATE mgopt_status mgopt__onnx_function_names(mgopt_program *p, const mgopt_onnx_model *m, const char **calls,
                                                      const char **names) {
  mgopt__imap seen;
  int64_t k, opset = 1;
  char buf[400];
  for (k = 0; k < m->nopset_imports; k++)
    if (mgopt__imp_default_domain(m->opset_imports[k].domain)) opset = m->opset_imports[k].version;
  memset(&seen, 0, sizeof seen);
  seen.al = &p->alloc;
  for (k = 0; k < m->nfunctions; k++) {
    const mgopt_onnx_function *fn = &m->functions[k];
    mgopt__onnx_node_type(buf, sizeof buf, fn->domain, fn->name, fn->overload);
    calls[k] = mgopt_program_intern_cstr(p, buf);
    names[k] = NULL;
    if (!calls[k]) break;
    mgopt__imap_put(&seen, calls[k], (void *)(uintptr_t)((uintptr_t)mgopt__imap_get(&seen, calls[k]) + 1));
  }
  for (k = 0; k < m->nfunctions && calls[k]; k++) {
    const mgopt_onnx_function *fn = &m->functions[k];
    if (mgopt__imp_default_domain(fn->domain) || !fn->name.len || mgopt__fn_has_char(fn->name, ':') ||
        mgopt__fn_has_char(fn->name, '@') || mgopt__fn_has_char(fn->overload, ':') ||
        mgopt__fn_has_char(fn->overload, '@') || mgopt__fn_has_char(fn->domain, '@') ||
        mgopt__fn_opset(fn, opset) != opset || (uintptr_t)mgopt__imap_get(&seen, calls[k]) != 1)
      continue;
    names[k] = calls[k];
  }
  k = seen.oom || (m->nfunctions && !calls[m->nfunctions - 1]);
  mgopt__imap_free(&seen);
  return k ? MGOPT_ERR_NOMEM : MGOPT_OK;
}

/* ---------------------------------------------------------------- import */

/* acc joined with t: the type both agree on (equal dtypes stay, a dim stays
   where both have it alike, the rank where both have it; anything else
   becomes unknown). first: acc becomes t. Sets *changed when acc changed. */
static mgopt_status mgopt__fn_join(mgopt_program *p, mgopt_type *acc, const mgopt_type *t, int first, int *changed) {
  int32_t i;
  if (first) {
    *changed = 1;
    return mgopt__type_copy(p, acc, t);
  }
  if (acc->kind != t->kind || acc->kind != MGOPT_TYPE_TENSOR) {
    if (acc->kind == t->kind && acc->kind == MGOPT_TYPE_OTHER && acc->other_len == t->other_len &&
        (!acc->other_len || memcmp(acc->other, t->other, acc->other_len) == 0))
      return MGOPT_OK;
    if (acc->kind == MGOPT_TYPE_TENSOR && acc->dtype == MGOPT_DT_UNKNOWN && acc->rank < 0) return MGOPT_OK;
    memset(acc, 0, sizeof *acc);
    acc->rank = -1;
    *changed = 1;
    return MGOPT_OK;
  }
  if (acc->dtype != t->dtype && acc->dtype != MGOPT_DT_UNKNOWN) {
    acc->dtype = MGOPT_DT_UNKNOWN;
    *changed = 1;
  }
  if (acc->rank < 0) return MGOPT_OK;
  if (acc->rank != t->rank) {
    acc->rank = -1;
    acc->dims = NULL;
    *changed = 1;
    return MGOPT_OK;
  }
  for (i = 0; i < acc->rank; i++)
    if ((acc->dims[i].v >= 0 || acc->dims[i].sym) && (acc->dims[i].v != t->dims[i].v || acc->dims[i].sym != t->dims[i].sym)) {
      acc->dims[i].v = -1;
      acc->dims[i].sym = NULL;
      *changed = 1;
    }
  return MGOPT_OK;
}

static mgopt_status mgopt__fn_unseen_calls(mgopt__imp *I, const mgopt_onnx_node *nodes, int64_t n, int depth);

/* Imports function k's body into a new IR function with its inputs typed
   F->args, in place of the one imported before (if any). A body that does
   not import leaves the function as it came. The importer's state for the
   graph it was reading is kept aside meanwhile. */
static mgopt_status mgopt__fn_import(mgopt__imp *I, int64_t k) {
  mgopt__imp_func *F = &I->fns[k];
  const mgopt_onnx_function *fn = F->proto;
  mgopt_onnx_graph g;
  mgopt_function *f;
  mgopt_status s;
  int64_t i;
  mgopt__imap values = I->values, vinfo = I->vinfo;
  mgopt_block *b = I->b;
  const mgopt_onnx_node *node = I->node;
  int depth = I->depth, infer_failed = I->infer_failed, in_function = I->in_function;
  const mgopt_type *arg_types = I->arg_types;
  memset(&g, 0, sizeof g);
  g.name = fn->name;
  g.nodes = fn->nodes;
  g.nnodes = fn->nnodes;
  g.value_info = fn->value_info;
  g.nvalue_info = fn->nvalue_info;
  g.ninputs = fn->ninputs;
  g.noutputs = fn->noutputs;
  g.inputs = (mgopt_onnx_value_info *)mgopt_program_alloc(I->p, sizeof(mgopt_onnx_value_info) * (size_t)(fn->ninputs + 1), 8);
  g.outputs = (mgopt_onnx_value_info *)mgopt_program_alloc(I->p, sizeof(mgopt_onnx_value_info) * (size_t)(fn->noutputs + 1), 8);
  if (!g.inputs || !g.outputs) return MGOPT_ERR_NOMEM;
  for (i = 0; i < fn->ninputs; i++) g.inputs[i].name = fn->inputs[i];
  for (i = 0; i < fn->noutputs; i++) g.outputs[i].name = fn->outputs[i];
  if ((f = mgopt_program_function(I->p, F->name)) != NULL) mgopt__function_drop(f);
  f = mgopt_function_new(I->p, F->name);
  if (!f) return MGOPT_ERR_NOMEM;
  memset(&I->values, 0, sizeof I->values);
  memset(&I->vinfo, 0, sizeof I->vinfo);
  I->values.al = &I->p->alloc;
  I->vinfo.al = &I->p->alloc;
  I->in_function = 1;
  I->arg_types = F->args;
  I->depth++;
  F->state = 3;
  s = mgopt__imp_function_body(I, &g, f->body);
  if (I->values.oom || I->vinfo.oom) s = MGOPT_ERR_NOMEM;
  mgopt__imap_free(&I->values);
  mgopt__imap_free(&I->vinfo);
  I->values = values;
  I->vinfo = vinfo;
  I->b = b;
  I->node = node;
  I->depth = depth;
  I->infer_failed = infer_failed;
  I->in_function = in_function;
  I->arg_types = arg_types;
  F->dirty = 0;
  if (s == MGOPT_ERR_NOMEM || I->p->status) return MGOPT_ERR_NOMEM;
  if (s) {
    /* kept as it came; what it calls may be called with any types now */
    mgopt__function_drop(f);
    F->state = 2;
    if (I->d) mgopt_diag_clear(I->d);
    I->depth++;
    s = mgopt__fn_unseen_calls(I, fn->nodes, fn->nnodes, 0);
    I->depth--;
    return s;
  }
  F->state = 1;
  return MGOPT_OK;
}

/* Function k is called with the given input types (NULL: unknown, as by a
   function kept as it came): joined into its inputs' types, its body
   (re)imported when they changed (later, by mgopt__imp_functions, when
   calls are nested too deeply to do it now). */
static mgopt_status mgopt__fn_called(mgopt__imp *I, int64_t k, const mgopt_type *const *types, int64_t ntypes) {
  mgopt__imp_func *F = &I->fns[k];
  mgopt_type unknown;
  int64_t i;
  int changed = 0;
  if (!F->name || F->state >= 2) return MGOPT_OK;
  memset(&unknown, 0, sizeof unknown);
  unknown.rank = -1;
  for (i = 0; i < F->proto->ninputs; i++)
    if (mgopt__fn_join(I->p, &F->args[i], types && i < ntypes && types[i] ? types[i] : &unknown, F->ncalls == 0, &changed))
      return MGOPT_ERR_NOMEM;
  F->ncalls++;
  if (changed && F->state == 1) F->dirty = 1;
  if ((F->state == 0 || F->dirty) && I->depth < MGOPT__IMP_MAX_DEPTH) return mgopt__fn_import(I, k);
  return MGOPT_OK;
}

/* Every function the nodes (and their subgraphs) call is called with unknown types. */
static mgopt_status mgopt__fn_unseen_calls(mgopt__imp *I, const mgopt_onnx_node *nodes, int64_t n, int depth) {
  int64_t i, k;
  char buf[400];
  mgopt_status s;
  if (depth > MGOPT__IMP_MAX_DEPTH) return MGOPT_OK;
  for (i = 0; i < n; i++) {
    const mgopt_onnx_node *nd = &nodes[i];
    const char *t;
    uintptr_t r;
    for (k = 0; k < nd->nattributes; k++)
      if (nd->attributes[k].g &&
          (s = mgopt__fn_unseen_calls(I, nd->attributes[k].g->nodes, nd->attributes[k].g->nnodes, depth + 1)) != MGOPT_OK)
        return s;
    if (mgopt__imp_default_domain(nd->domain)) continue;
    mgopt__onnx_node_type(buf, sizeof buf, nd->domain, nd->op_type, nd->overload);
    if (!(t = mgopt_program_intern_cstr(I->p, buf))) return MGOPT_ERR_NOMEM;
    r = (uintptr_t)mgopt__imap_get(&I->fnames, t);
    if (r && (s = mgopt__fn_called(I, (int64_t)r - 1, NULL, 0)) != MGOPT_OK) return s;
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__imp_note_call(mgopt__imp *I, mgopt_op *op) {
  uintptr_t r = I->fnames.map.n ? (uintptr_t)mgopt__imap_get(&I->fnames, op->type) : 0;
  const mgopt_type *types[64], **tp = types;
  mgopt__imp_func *F;
  mgopt_function *f;
  mgopt_status s;
  int64_t k;
  int32_t j;
  if (!r) return MGOPT_OK;
  F = &I->fns[r - 1];
  if (F->proto->ninputs > 64) {
    tp = (const mgopt_type **)mgopt_program_alloc(I->p, sizeof(mgopt_type *) * (size_t)F->proto->ninputs, 8);
    if (!tp) return MGOPT_ERR_NOMEM;
  }
  for (k = 0; k < F->proto->ninputs; k++) {
    char slot[24];
    mgopt_value *v;
    snprintf(slot, sizeof slot, "in%d", (int)k);
    v = mgopt_op_operand(op, slot);
    tp[k] = v ? &v->type : NULL;
  }
  if ((s = mgopt__fn_called(I, (int64_t)r - 1, tp, F->proto->ninputs)) != MGOPT_OK) return s;
  /* the call's outputs: what the body, typed at least as generally as this
     call's operands, gives */
  f = F->state == 1 ? mgopt_program_function(I->p, F->name) : NULL;
  for (j = 0; f && j < op->nouts && j < f->body->nouts; j++)
    if (!(op->outs[j]->flags & MGOPT_VALUE_ABSENT) && mgopt__type_copy(I->p, &op->outs[j]->type, &f->body->outs[j]->value->type))
      return MGOPT_ERR_NOMEM;
  return MGOPT_OK;
}

/* Kahn's algorithm over the calls between importable functions: ncall[k]
   counts calls to k from functions not yet ordered. */
static void mgopt__fn_count_calls(mgopt__imp *I, const mgopt_onnx_node *nodes, int64_t n, int depth, int64_t *ncall,
                                  int64_t delta) {
  int64_t i, k;
  char buf[400];
  if (depth > MGOPT__IMP_MAX_DEPTH) return;
  for (i = 0; i < n; i++) {
    const mgopt_onnx_node *nd = &nodes[i];
    const char *t;
    uintptr_t r;
    for (k = 0; k < nd->nattributes; k++)
      if (nd->attributes[k].g) mgopt__fn_count_calls(I, nd->attributes[k].g->nodes, nd->attributes[k].g->nnodes, depth + 1, ncall, delta);
    if (mgopt__imp_default_domain(nd->domain)) continue;
    mgopt__onnx_node_type(buf, sizeof buf, nd->domain, nd->op_type, nd->overload);
    t = mgopt_program_intern_cstr(I->p, buf);
    r = t ? (uintptr_t)mgopt__imap_get(&I->fnames, t) : 0;
    if (r) ncall[r - 1] += delta;
  }
}

MGOPT__PRIVATE mgopt_status mgopt__imp_prepare_functions(mgopt__imp *I) {
  const mgopt_onnx_model *m = I->m;
  const char **calls, **names;
  int64_t k, n = m->nfunctions, *ncall;
  int progress = 1;
  if (!n) return MGOPT_OK;
  calls = (const char **)mgopt_program_alloc(I->p, sizeof(char *) * (size_t)n, 8);
  names = (const char **)mgopt_program_alloc(I->p, sizeof(char *) * (size_t)n, 8);
  ncall = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)n, 8);
  I->fns = (mgopt__imp_func *)mgopt_program_alloc(I->p, sizeof(mgopt__imp_func) * (size_t)n, 8);
  if (!calls || !names || !ncall || !I->fns || mgopt__onnx_function_names(I->p, m, calls, names)) return MGOPT_ERR_NOMEM;
  I->nfns = n;
  I->fnames.al = &I->p->alloc;
  for (k = 0; k < n; k++) {
    mgopt__imp_func *F = &I->fns[k];
    F->proto = &m->functions[k];
    F->name = names[k];
    if (!F->name) continue;
    F->args = (mgopt_type *)mgopt_program_alloc(I->p, sizeof(mgopt_type) * (size_t)(F->proto->ninputs + 1), 8);
    if (!F->args) return MGOPT_ERR_NOMEM;
    mgopt__imap_put(&I->fnames, F->name, (void *)(uintptr_t)(k + 1));
  }
  if (I->fnames.oom || I->p->status) return MGOPT_ERR_NOMEM;
  /* a function that calls itself (through others) is kept as it came, and so
     is every function only such functions reach */
  for (k = 0; k < n; k++)
    if (I->fns[k].name) mgopt__fn_count_calls(I, I->fns[k].proto->nodes, I->fns[k].proto->nnodes, 0, ncall, 1);
  while (progress) {
    progress = 0;
    for (k = 0; k < n; k++)
      if (I->fns[k].name && !I->fns[k].state && ncall[k] == 0) {
        I->fns[k].state = 1; /* ordered (reset below) */
        mgopt__fn_count_calls(I, I->fns[k].proto->nodes, I->fns[k].proto->nnodes, 0, ncall, -1);
        progress = 1;
      }
  }
  for (k = 0; k < n; k++) {
    if (I->fns[k].name && !I->fns[k].state) I->fns[k].name = NULL;
    I->fns[k].state = 0;
  }
  if (I->p->status) return MGOPT_ERR_NOMEM;
  /* what a function kept as it came calls may get any types */
  for (k = 0; k < n; k++) {
    mgopt_status s;
    if (!I->fns[k].name && (s = mgopt__fn_unseen_calls(I, I->fns[k].proto->nodes, I->fns[k].proto->nnodes, 0)) != MGOPT_OK)
      return s;
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__imp_functions(mgopt__imp *I) {
  int64_t k, i;
  mgopt_status s;
  int progress = 1;
  /* what is left: functions no graph calls (inputs of unknown types), and
     imports put off by deep nesting; an import may put others off again,
     each time with more general types, so this ends */
  while (progress) {
    progress = 0;
    for (k = 0; k < I->nfns; k++) {
      mgopt__imp_func *F = &I->fns[k];
      if (!F->name || !(F->state == 0 || (F->state == 1 && F->dirty))) continue;
      if (F->ncalls == 0)
        for (i = 0; i < F->proto->ninputs; i++) {
          memset(&F->args[i], 0, sizeof F->args[i]);
          F->args[i].rank = -1;
        }
      if ((s = mgopt__fn_import(I, k)) != MGOPT_OK) return s;
      progress = 1;
    }
  }
  return I->p->status ? MGOPT_ERR_NOMEM : MGOPT_OK;
}
