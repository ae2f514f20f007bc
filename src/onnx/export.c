/* src/onnx/export.c — the ONNX exporter's driver: the IR back to a model tree for the target opset, canonical ops written through the mapping table. */
#include "convert_internal.h"

/* How it works. Function `main` becomes the graph. Graph inputs follow the
   imported model's order (an input that had an initializer is listed again
   with its constant), then any new arguments. A const becomes an
   initializer of the graph it lives in, subgraphs included (ONNX allows
   them there from IR version 4). It is a Constant node when it was one
   and the option keeps those, in a function body (FunctionProto has no
   initializers), and in the subgraphs of a model before IR version 4
   (whose initializers must also be graph inputs, which a subgraph cannot
   list). A constant no node reads is dropped, in every graph. A main
   output the imported model declared with a shape the graph contradicts
   keeps its declared type (mgopt_onnx_output_conflicts).
   Each canonical op goes to the row of the mapping table that writes its
   kind at the target opset (ops.c), which writes the ONNX ops of that
   opset, with parameters that newer opsets take as inputs written as int64
   initializers; opaque ops go back as they came. Every value name is unique
   in the written model: a clash gets a fresh name, except graph inputs and
   outputs. Nodes are accumulated in heap vectors and copied into the
   program's arena at the end of each graph. Model-local functions imported
   as IR functions are written from the IR after the graph, each with names
   unique in its own body (mgopt__exp_function); the others go back as
   they came. */

static mgopt_status mgopt__exp_block_graph(mgopt__exp *E, mgopt_block *b, mgopt_onnx_graph *g, int kind);
static int64_t mgopt__exp_conflicts(mgopt_program *p, mgopt_onnx_output_conflict *out, int64_t cap,
                                    const mgopt_onnx_type **kept);

/* ---------------------------------------------------------------- what can be written */

/* An opaque op goes back as the node it came from: a domain::OpType name,
   operand slots in0, in1, ... and attributes of the kinds ONNX holds. */
static const char *mgopt__exw_opaque(const mgopt_op *op, char *buf, size_t cap) {
  const char *q, *last = NULL;
  int32_t i;
  for (q = op->type; (q = strstr(q, "::")) != NULL; q += 2) last = q;
  if (!last) return "an opaque op needs a domain::OpType name";
  for (i = 0; i < op->nslots; i++) {
    const mgopt_slot *s = &op->slots[i];
    char *end;
    long k;
    if (s->n == 0 && !s->is_list) continue;
    if (strncmp(s->name, "in", 2) != 0 || s->is_list) return "operand slots must be in0, in1, ...";
    k = strtol(s->name + 2, &end, 10);
    if (*end || k < 0 || k >= INT32_MAX) return "operand slots must be in0, in1, ...";
  }
  for (i = 0; i < op->nattrs; i++) {
    const mgopt_attr *a = &op->attrs[i];
    switch ((mgopt_attr_kind)a->kind) {
      case MGOPT_ATTR_BOOL:
      case MGOPT_ATTR_INT:
      case MGOPT_ATTR_FLOAT:
      case MGOPT_ATTR_STRING:
      case MGOPT_ATTR_BOOLS:
      case MGOPT_ATTR_INTS:
      case MGOPT_ATTR_FLOATS:
      case MGOPT_ATTR_STRINGS:
        break;
      case MGOPT_ATTR_TENSOR: {
        const char *why = mgopt__exp_tensor_why_not(a->u.t, buf, cap);
        if (why) return why;
        break;
      }
      case MGOPT_ATTR_BYTES:
        if ((a->tag & MGOPT_ONNX_ATTR_REF) && a->n > 0 && !(a->tag & ~(MGOPT_ONNX_ATTR_REF | 0xff)) &&
            op->parent && op->parent->func && op->parent->func->body->parent_op == NULL &&
            strcmp(op->parent->func->name, "main") != 0)
          break; /* an attribute reference, inside a function */
        if (a->tag != MGOPT_ONNX_ATTR_TYPE_PROTO || a->n <= 0) return "a bytes attribute that is not an ONNX type";
        break;
      default:
        return "an attribute kind ONNX cannot hold";
    }
  }
  return NULL;
}

MGOPT__PRIVATE const char *mgopt__onnx_why_not(mgopt_program *p, const mgopt__onnx_map *const *by_kind, int64_t opset,
                                               const mgopt_op *op, char *buf, size_t cap) {
  const mgopt__onnx_map *m;
  if (op->kind == MGOPT_OP_const) {
    mgopt_tensor *t = mgopt_value_const(op->outs[0]);
    return t ? mgopt__exp_tensor_why_not(t, buf, cap) : "a const without a value";
  }
  if (op->kind == MGOPT_OP_OPAQUE) return mgopt__exw_opaque(op, buf, cap);
  if (op->nblocks) return "control flow";
  m = op->kind > 0 && op->kind < MGOPT_OP__COUNT ? by_kind[op->kind] : NULL;
  if (!m) {
    const mgopt__onnx_map *later = mgopt__onnx_kind_later(op->kind, opset);
    if (!later) return "";
    snprintf(buf, cap, "%s needs opset %d", later->onnx, (int)later->since);
    return buf;
  }
  return m->check ? m->check(p, op, m) : NULL;
}

/* The requested opset, else an imported model's own: the opset its nodes
   were read at (import.c's rule: the last default-domain entry, 1 when
   there is none), so what was read is written back under the same opset
   list; 17 for a program that was not imported. */
MGOPT__PRIVATE int64_t mgopt__onnx_export_opset(const mgopt_program *p, int64_t requested) {
  const mgopt_onnx_model *orig = (const mgopt_onnx_model *)p->onnx_meta;
  int64_t i, opset = 1;
  if (requested > 0) return requested;
  if (!orig) return 17;
  for (i = 0; i < orig->nopset_imports; i++)
    if (mgopt__imp_default_domain(orig->opset_imports[i].domain)) opset = orig->opset_imports[i].version;
  return opset;
}

/* ---------------------------------------------------------------- opaque ops */

/* Files nd in E->orig_nodes under key (an interned name): E itself when
   another node is there already. 0 on OOM. */
static int mgopt__exp_index_node(mgopt__exp *E, mgopt_str key, const mgopt_onnx_node *nd) {
  const char *nm = mgopt_program_intern(E->p, key.ptr, key.len);
  int added;
  mgopt__map_slot *sl = nm ? mgopt__map_get(&E->orig_nodes, mgopt__map_ptr_key(nm), &added) : NULL;
  if (!sl) return 0;
  if (added || sl->v.p != (const void *)nd) sl->v.p = added ? (void *)nd : (void *)E;
  return 1;
}

/* Indexes nodes[0..n) and the nodes of their subgraphs in E->orig_nodes,
   by node name and by first output. */
static void mgopt__exp_index_nodes(mgopt__exp *E, const mgopt_onnx_node *nodes, int64_t n, int depth) {
  int64_t i, k;
  for (i = 0; i < n && depth < 64; i++) {
    const mgopt_onnx_node *nd = &nodes[i];
    int has_graph = 0;
    for (k = 0; k < nd->nattributes; k++)
      if (nd->attributes[k].g) {
        has_graph = 1;
        mgopt__exp_index_nodes(E, nd->attributes[k].g->nodes, nd->attributes[k].g->nnodes, depth + 1);
      }
    if (!has_graph) continue;
    /* on OOM the subgraphs keep the names of their attributes */
    if (nd->name.len && !mgopt__exp_index_node(E, nd->name, nd)) return;
    if (nd->noutputs && nd->outputs[0].len && !mgopt__exp_index_node(E, nd->outputs[0], nd)) return;
  }
}

/* The name of the graph written for block b of op: the name of the
   subgraph it was imported from (found through op's name or its first
   output's, when they name one node of the imported model), else b's name. */
static mgopt_str mgopt__exp_graph_name(mgopt__exp *E, const mgopt_op *op, const mgopt_block *b) {
  const mgopt_onnx_model *orig = (const mgopt_onnx_model *)E->p->onnx_meta;
  const char *keys[2];
  size_t len = strlen(b->name);
  int64_t k, j;
  if (!orig || !orig->graph) return mgopt__exp_s(b->name);
  if (!E->orig_nodes_built) {
    E->orig_nodes_built = 1;
    mgopt__exp_index_nodes(E, orig->graph->nodes, orig->graph->nnodes, 0);
    for (k = 0; k < orig->nfunctions; k++) mgopt__exp_index_nodes(E, orig->functions[k].nodes, orig->functions[k].nnodes, 0);
  }
  keys[0] = op->name;
  keys[1] = op->nouts ? op->outs[0]->name : NULL;
  for (j = 0; j < 2; j++) {
    const mgopt__map_slot *sl = keys[j] && *keys[j] ? mgopt__map_find(&E->orig_nodes, mgopt__map_ptr_key(keys[j])) : NULL;
    const mgopt_onnx_node *nd = sl && sl->v.p != (void *)E ? (const mgopt_onnx_node *)sl->v.p : NULL;
    for (k = 0; nd && k < nd->nattributes; k++) {
      const mgopt_onnx_attribute *a = &nd->attributes[k];
      if (a->g && a->g->name.len && len && a->name.len == len && memcmp(a->name.ptr, b->name, len) == 0) return a->g->name;
    }
  }
  return mgopt__exp_s(b->name);
}

/* Runs only on an op mgopt__exw_opaque accepted. */
static mgopt_status mgopt__exp_opaque(mgopt__exp *E, const mgopt_op *op) {
  const char *last = NULL, *q, *domain, **ins;
  int64_t nin = 0, i;
  mgopt_onnx_node *n;
  for (q = op->type; (q = strstr(q, "::")) != NULL; q += 2) last = q;
  domain = mgopt_program_intern(E->p, op->type, (size_t)(last - op->type));
  for (i = 0; i < op->nslots; i++) {
    const mgopt_slot *s = &op->slots[i];
    long k;
    if (s->n == 0 && !s->is_list) continue;
    k = strtol(s->name + 2, NULL, 10);
    if (k + 1 > nin) nin = k + 1;
  }
  ins = (const char **)mgopt_program_alloc(E->p, sizeof(char *) * (size_t)(nin + 1), 8);
  if (!domain || !ins) return mgopt__exp_nomem(E);
  for (i = 0; i < nin; i++) ins[i] = "";
  for (i = 0; i < op->nslots; i++) {
    const mgopt_slot *s = &op->slots[i];
    if (s->n == 0 && !s->is_list) continue;
    ins[strtol(s->name + 2, NULL, 10)] = mgopt__exp_vname(s->uses[0].value);
  }
  if (E->overloads.map.n && mgopt__imap_get(&E->overloads, op->type)) {
    /* a call of an overloaded function: domain::Name@overload */
    const char *at = strchr(last + 2, '@');
    const char *nm = mgopt_program_intern(E->p, last + 2, (size_t)(at - (last + 2)));
    n = nm ? mgopt__exp_simple(E, op, nm, ins, nin) : NULL;
    if (n) n->overload = mgopt__exp_s(mgopt_program_intern_cstr(E->p, at + 1));
    if (n && !n->overload.ptr) n = NULL;
  } else
    n = mgopt__exp_simple(E, op, last + 2, ins, nin);
  if (!n) return mgopt__exp_nomem(E);
  n->domain = mgopt__exp_s(strcmp(domain, "onnx") == 0 ? "" : domain);
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
        if (a->tag & MGOPT_ONNX_ATTR_REF) {
          oa = mgopt__exp_attr(E, n, a->name, a->tag & 0xff);
          if (!oa) return mgopt__exp_nomem(E);
          oa->ref_attr_name.ptr = (const char *)a->u.bytes;
          oa->ref_attr_name.len = (size_t)a->n;
          break;
        }
        oa = mgopt__exp_attr(E, n, a->name, MGOPT_ONNX_ATTR_TYPE_PROTO);
        if (!oa || !(oa->tp = (mgopt_onnx_type *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_type), 8)))
          return mgopt__exp_nomem(E);
        oa->tp->other.ptr = (const char *)a->u.bytes;
        oa->tp->other.len = (size_t)a->n;
        break;
      default:
        break; /* refused by mgopt__exw_opaque */
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
    oa->g->name = mgopt__exp_graph_name(E, op, op->blocks[i]);
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

/* A graph input or output named `name` of type t; NULL when out of memory or
   when t has no ONNX form (then the message names the value: E->cause). */
static mgopt_onnx_value_info *mgopt__exp_vi(mgopt__exp *E, mgopt__exv *vec, const char *name, const mgopt_type *t) {
  mgopt_onnx_value_info *vi = (mgopt_onnx_value_info *)mgopt__exv_push(E, vec, sizeof(mgopt_onnx_value_info));
  mgopt_status before = E->cause;
  if (!vi) return NULL;
  vi->name = mgopt__exp_s(name);
  /* an unknown element type is written as no type at all (ONNX rejects type 0) */
  if (t->kind == MGOPT_TYPE_TENSOR && t->dtype == MGOPT_DT_UNKNOWN) return vi;
  vi->type = mgopt__exp_type(E, t);
  if (!vi->type && !before && E->cause && E->d) {
    char why[sizeof E->d->msg];
    snprintf(why, sizeof why, "%s", E->d->msg);
    mgopt__exp_fail(E, E->cause, "value '%.100s': %s", name, why);
  }
  return vi->type ? vi : NULL;
}

/* 1 when some reader needs v written: not only linear ops that write a
   transposed copy of it (mgopt__exp_linear_folds_weight) */
static int mgopt__exp_const_read(const mgopt_value *v, int64_t opset) {
  const mgopt_use *u;
  for (u = v->uses; u; u = u->next) {
    mgopt_value *kept = u->op ? mgopt__exp_unary_form(u->op, opset) : NULL;
    if (u->op && mgopt__exp_writes_consts(u->op)) continue; /* written by map_quant.c */
    if (u->op && u->op->kind == MGOPT_OP_constexpr_sparse_to_dense) continue; /* written dense by map_sparse.c */
    if (kept && kept != v) continue; /* the -1 of a Neg, the 1 of a Reciprocal */
    if (u->op && u->op->kind == MGOPT_OP_fill && mgopt_op_operand(u->op, "value") == v) continue; /* an attribute */
    if (mgopt__exp_recurrent_folds(u->op, v)) continue; /* written re-laid by map_recurrent.c */
    if (!u->op || mgopt_op_operand(u->op, "weight") != v || !mgopt__exp_linear_folds_weight(u->op) ||
        mgopt_op_operand(u->op, "x") == v || mgopt_op_operand(u->op, "bias") == v)
      return 1;
  }
  return 0;
}

static int mgopt__exp_listed_input(const mgopt__exg *g, const char *name) {
  int64_t j;
  for (j = 0; j < g->inputs.n; j++)
    if (((const mgopt_onnx_value_info *)g->inputs.data)[j].name.ptr == name) return 1;
  return 0;
}

/* Writes block b as graph og. kind: 0 a subgraph, 1 the model's graph, 2 a function body. */
static mgopt_status mgopt__exp_block_graph(mgopt__exp *E, mgopt_block *b, mgopt_onnx_graph *og, int kind) {
  mgopt__exg g;
  mgopt_op *op;
  int32_t i;
  mgopt_status s = MGOPT_OK;
  const mgopt_onnx_model *orig = (const mgopt_onnx_model *)E->p->onnx_meta;
  const mgopt_onnx_type **kept = NULL;
  int is_main = kind == 1;
  memset(&g, 0, sizeof g);
  g.is_main = is_main;
  g.inits_ok = is_main || (kind == 0 && E->sub_inits);
  E->g = &g;
  for (i = 0; i < b->nargs; i++)
    if (b->args[i]->type.kind == MGOPT_TYPE_STATE)
      return mgopt__exp_fail(E, MGOPT_ERR_UNSUPPORTED, "input '%s' is a state: ONNX has no state type",
                             mgopt__exp_vname(b->args[i]));
  if (is_main && orig && orig->graph) {
    /* the imported input order; inputs that had initializers are listed
       again, and an input that stayed one (mgopt_onnx_read_options'
       constant_inputs) gets its initializer back: its default */
    int64_t k;
    mgopt__imap defaults;
    memset(&defaults, 0, sizeof defaults);
    defaults.al = &E->p->alloc;
    for (k = 0; k < orig->graph->ninitializers; k++) {
      const mgopt_onnx_tensor *it = &orig->graph->initializers[k];
      const char *nm = mgopt_program_intern(E->p, it->name.ptr ? it->name.ptr : "", it->name.len);
      if (nm) mgopt__imap_put(&defaults, nm, (void *)(uintptr_t)it);
    }
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
      else if (found && !found->def && defaults.map.n) {
        const mgopt_onnx_tensor *it = (const mgopt_onnx_tensor *)mgopt__imap_get(&defaults, nm);
        mgopt_onnx_tensor *ot = it ? (mgopt_onnx_tensor *)mgopt__exv_push(E, &g.inits, sizeof(mgopt_onnx_tensor)) : NULL;
        if (it && !ot) s = mgopt__exp_nomem(E);
        else if (ot) {
          *ot = *it;
          ot->name = mgopt__exp_s(nm);
        }
      }
    }
    if (defaults.oom && !s) s = mgopt__exp_nomem(E);
    mgopt__imap_free(&defaults);
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
    char buf[160];
    const char *why;
    E->op = op;
    /* a constant nothing reads (one import turned into an attribute, one
       export rewrote as int64, or a linear weight written transposed) is
       not written, unless it is listed among the graph's inputs */
    if (op->kind == MGOPT_OP_const && !mgopt__exp_const_read(op->outs[0], E->opset) &&
        !mgopt__exp_listed_input(&g, op->outs[0]->name))
      continue;
    if (mgopt__exp_recurrent_absorbs(op)) continue; /* written by the lstm / gru / rnn it feeds or reads */
    why = mgopt__onnx_why_not(E->p, E->by_kind, E->opset, op, buf, sizeof buf);
    if (why) {
      s = mgopt__exp_unsupported(E, op, *why ? why : NULL);
      break;
    }
    if (op->kind == MGOPT_OP_const) {
      mgopt_tensor *t = mgopt_value_const(op->outs[0]);
      if (g.inits_ok && !((op->flags & MGOPT_OP_ONNX_CONSTANT_NODE) && E->o && E->o->keep_constant_nodes)) {
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
    if (op->kind == MGOPT_OP_OPAQUE) {
      s = mgopt__exp_opaque(E, op);
    } else {
      int64_t first = g.nodes.n;
      s = E->by_kind[op->kind]->to_onnx(E, op, E->by_kind[op->kind]);
      E->g = &g;
      if (!s && (op->kind == MGOPT_OP_conv || op->kind == MGOPT_OP_linear)) s = mgopt__exp_fused_activation(E, op, first);
    }
    E->g = &g;
  }
  E->op = NULL;
  if (is_main && !s && b->nouts) {
    /* the declared types of the outputs whose declared shape the graph contradicts */
    kept = (const mgopt_onnx_type **)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_type *) * (size_t)b->nouts, 8);
    if (!kept || mgopt__exp_conflicts(E->p, NULL, 0, kept) < 0) s = mgopt__exp_nomem(E);
  }
  for (i = 0; i < b->nouts && !s; i++) {
    mgopt_value *v = b->outs[i]->value;
    const char *nm = mgopt__exp_vname(v);
    if (kept && kept[i]) {
      mgopt_onnx_value_info *vi = (mgopt_onnx_value_info *)mgopt__exv_push(E, &g.outputs, sizeof(mgopt_onnx_value_info));
      if (!vi) s = mgopt__exp_nomem(E);
      else {
        vi->name = mgopt__exp_s(nm);
        vi->type = (mgopt_onnx_type *)kept[i]; /* the imported model's, shared */
      }
      continue;
    }
    if (b == E->fn_body && nm != E->fn_outs[i]) {
      /* a function output keeps its name: the value under it through an Identity */
      mgopt_onnx_node *n = mgopt__exp_node(E, "Identity", "", NULL);
      if (!n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, &nm, 1) ||
          !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &E->fn_outs[i], 1)) {
        s = mgopt__exp_nomem(E);
        break;
      }
      nm = E->fn_outs[i];
    }
    if (!mgopt__exp_vi(E, &g.outputs, nm, &v->type)) s = mgopt__exp_nomem(E);
  }
  if (!s) {
    og->nodes = (mgopt_onnx_node *)mgopt__exv_take(E, &g.nodes, sizeof(mgopt_onnx_node), &og->nnodes);
    og->initializers = (mgopt_onnx_tensor *)mgopt__exv_take(E, &g.inits, sizeof(mgopt_onnx_tensor), &og->ninitializers);
    og->sparse_initializers = (mgopt_onnx_sparse_tensor *)mgopt__exv_take(E, &g.sparse, sizeof(mgopt_onnx_sparse_tensor),
                                                                         &og->nsparse_initializers);
    og->inputs = (mgopt_onnx_value_info *)mgopt__exv_take(E, &g.inputs, sizeof(mgopt_onnx_value_info), &og->ninputs);
    og->outputs = (mgopt_onnx_value_info *)mgopt__exv_take(E, &g.outputs, sizeof(mgopt_onnx_value_info), &og->noutputs);
    if (E->p->status && E->p->status != E->status0) s = mgopt__exp_nomem(E);
  }
  mgopt__exv_free(E, &g.nodes, sizeof(mgopt_onnx_node));
  mgopt__exv_free(E, &g.inits, sizeof(mgopt_onnx_tensor));
  mgopt__exv_free(E, &g.sparse, sizeof(mgopt_onnx_sparse_tensor));
  mgopt__exv_free(E, &g.inputs, sizeof(mgopt_onnx_value_info));
  mgopt__exv_free(E, &g.outputs, sizeof(mgopt_onnx_value_info));
  mgopt__exv_free(E, &g.made, sizeof(mgopt__exg_made));
  mgopt__map_free(&g.by_content);
  return s;
}

/* Renames values whose name is already taken so every name in the model is
   unique. The function's inputs and outputs are claimed first and keep
   their names. */
typedef struct mgopt__exn {
  mgopt__exp *E;
  int oom;
} mgopt__exn;

/* 1 when the use u of v by body's outputs keeps v's name: every output of
   main; an output of a function only when v carries that output's name
   (else the export writes an Identity to it). */
static int mgopt__exn_keeps(const mgopt__exn *N, const mgopt_value *v, const mgopt_use *u, const mgopt_block *body) {
  if (u->op || u->block != body) return 0;
  return body != N->E->fn_body || v->name == N->E->fn_outs[u->index];
}


static int mgopt__exn_claim(mgopt__exn *N, const char *name) {
  int r = mgopt__exp_claim(N->E, name);
  if (r < 0) N->oom = 1;
  return r != 0;
}

static void mgopt__exn_value(mgopt__exn *N, mgopt_value *v, int is_io) {
  if ((v->flags & MGOPT_VALUE_ABSENT) || !v->name || is_io || N->oom) return;
  /* a name taken before: a fresh one (mgopt__exp_fresh claims it) */
  if (!mgopt__exn_claim(N, v->name) && !N->oom && !(v->name = mgopt__exp_fresh(N->E, v->name))) N->oom = 1;
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
        if (mgopt__exn_keeps(N, v, u, body)) io = 1;
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
    if (f->body == E->fn_body) mgopt__exn_claim(&N, E->fn_outs[i]);
    else if (f->body->outs[i]->value->name) mgopt__exn_claim(&N, f->body->outs[i]->value->name);
  mgopt__exn_block(&N, f->body, f->body, 0);
  return N.oom ? mgopt__exp_nomem(E) : MGOPT_OK;
}

static void mgopt__exp_free_names(mgopt__exp *E) {
  mgopt__map_free(&E->names);
  mgopt__map_free(&E->fresh);
}

/* ---------------------------------------------------------------- unread initializers */

/* A set of names (by content), for dropping initializers no node reads:
   the names in an array, found by the hash of their bytes. */
typedef struct mgopt__exr {
  mgopt_program *p;
  mgopt__map by_hash; /* hash of a name -> 1 + its index in names (a multimap) */
  mgopt_str *names;
  int64_t count, cap;
  int oom;
} mgopt__exr;

static void mgopt__exr_init(mgopt__exr *r, mgopt_program *p) {
  memset(r, 0, sizeof *r);
  r->p = p;
  mgopt__map_init_flags(&r->by_hash, &p->alloc, MGOPT__MAP_HASHED);
}

static void mgopt__exr_free(mgopt__exr *r) {
  mgopt__map_free(&r->by_hash);
  if (r->names) mgopt__heap_free(&r->p->alloc, r->names, (size_t)r->cap * sizeof(mgopt_str));
  r->names = NULL;
}

static uint64_t mgopt__exr_key(mgopt_str s) {
  return mgopt__map_hash_key(mgopt__hash_bytes(s.ptr ? s.ptr : "", s.len, MGOPT__HASH_SEED));
}

static int mgopt__exr_has(const mgopt__exr *r, mgopt_str s) {
  const mgopt__map_slot *sl;
  for (sl = mgopt__map_find(&r->by_hash, mgopt__exr_key(s)); sl; sl = mgopt__map_next(&r->by_hash, sl)) {
    const mgopt_str *t = &r->names[sl->v.i - 1];
    if (t->len == s.len && memcmp(t->ptr, s.ptr, s.len) == 0) return 1;
  }
  return 0;
}

static void mgopt__exr_add(mgopt__exr *r, mgopt_str s) {
  mgopt__map_slot *sl;
  void *arr = r->names;
  int grown;
  if (r->oom || !s.len || mgopt__exr_has(r, s)) return;
  grown = mgopt__grow(&r->p->alloc, &arr, &r->cap, r->count + 1, sizeof(mgopt_str));
  r->names = (mgopt_str *)arr;
  if (!grown || !(sl = mgopt__map_add(&r->by_hash, mgopt__exr_key(s)))) {
    r->oom = 1;
    return;
  }
  r->names[r->count++] = s;
  sl->v.i = r->count;
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

/* 1 when n is a Constant node whose output nothing in the model reads. */
static int mgopt__exr_unread_constant(const mgopt__exr *r, const mgopt_onnx_node *n) {
  return n->noutputs == 1 && !n->domain.len && n->op_type.len == 8 && memcmp(n->op_type.ptr, "Constant", 8) == 0 &&
         !mgopt__exr_has(r, n->outputs[0]);
}

/* Drops from g and its subgraphs the initializers and Constant nodes whose
   value r does not hold. */
static void mgopt__exr_drop(const mgopt__exr *r, mgopt_onnx_graph *g, int depth) {
  int64_t i, j, k;
  if (depth > 256) return;
  for (i = j = 0; i < g->ninitializers; i++)
    if (mgopt__exr_has(r, g->initializers[i].name)) g->initializers[j++] = g->initializers[i];
  g->ninitializers = j;
  for (i = j = 0; i < g->nnodes; i++) {
    mgopt_onnx_node *n = &g->nodes[i];
    if (mgopt__exr_unread_constant(r, n)) continue;
    for (k = 0; k < n->nattributes; k++)
      if (n->attributes[k].g) mgopt__exr_drop(r, n->attributes[k].g, depth + 1);
    g->nodes[j++] = *n;
  }
  g->nnodes = j;
}

/* Drops the initializers and Constant nodes that no node reads and that are
   not graph inputs or outputs (an int32 constant the export rewrote as
   int64, bounds a mapping wrote again in its own form), in every graph of
   the model. Written names are unique in the model, so one set of the
   names read anywhere serves every graph. */
static mgopt_status mgopt__exp_drop_unread(mgopt_program *p, mgopt_onnx_graph *g) {
  mgopt__exr r;
  int64_t i;
  mgopt__exr_init(&r, p);
  mgopt__exr_graph(&r, g, 0);
  for (i = 0; i < g->ninputs; i++) mgopt__exr_add(&r, g->inputs[i].name);
  if (!r.oom) mgopt__exr_drop(&r, g, 0);
  mgopt__exr_free(&r);
  return r.oom ? MGOPT_ERR_NOMEM : MGOPT_OK;
}

/* ---------------------------------------------------------------- model-local functions */

/* Writes imported function f as dst, src being the FunctionProto it came
   from (functions.c says what is kept): its body as a subgraph whose
   output names are src's. */
static mgopt_status mgopt__exp_function(mgopt__exp *E, const mgopt_onnx_function *src, mgopt_function *f,
                                                mgopt_onnx_function *dst) {
  mgopt_onnx_graph og;
  const char **outs;
  mgopt_status s;
  int64_t i, j;
  mgopt__exr defined;
  *dst = *src;
  if (f->body->nargs != src->ninputs || f->body->nouts != src->noutputs)
    return mgopt__exp_fail(E, MGOPT_ERR_UNSUPPORTED, "function '%s' has %d inputs and %d outputs, its callers %lld and %lld",
                           f->name, (int)f->body->nargs, (int)f->body->nouts, (long long)src->ninputs,
                           (long long)src->noutputs);
  outs = (const char **)mgopt_program_alloc(E->p, sizeof(char *) * (size_t)(src->noutputs + 1), 8);
  if (!outs) return mgopt__exp_nomem(E);
  for (i = 0; i < src->noutputs; i++)
    if (!(outs[i] = mgopt_program_intern(E->p, src->outputs[i].ptr ? src->outputs[i].ptr : "", src->outputs[i].len)))
      return mgopt__exp_nomem(E);
  memset(&og, 0, sizeof og);
  E->fn_outs = outs;
  E->fn_body = f->body;
  s = mgopt__exp_unique_names(E, f);
  if (!s) s = mgopt__exp_block_graph(E, f->body, &og, 2);
  E->fn_outs = NULL;
  E->fn_body = NULL;
  mgopt__exp_free_names(E);
  if (s) return s;
  dst->nodes = og.nodes;
  dst->nnodes = og.nnodes;
  dst->inputs = (mgopt_str *)mgopt_program_alloc(E->p, sizeof(mgopt_str) * (size_t)(og.ninputs + 1), 8);
  dst->outputs = (mgopt_str *)mgopt_program_alloc(E->p, sizeof(mgopt_str) * (size_t)(og.noutputs + 1), 8);
  if (!dst->inputs || !dst->outputs) return mgopt__exp_nomem(E);
  for (i = 0; i < og.ninputs; i++) dst->inputs[i] = og.inputs[i].name;
  for (i = 0; i < og.noutputs; i++) dst->outputs[i] = og.outputs[i].name;
  dst->ninputs = og.ninputs;
  dst->noutputs = og.noutputs;
  /* the default domain at the export opset */
  {
    mgopt_onnx_opset *os =
        (mgopt_onnx_opset *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_opset) * (size_t)(src->nopset_imports + 1), 8);
    int has = 0;
    if (!os) return mgopt__exp_nomem(E);
    for (i = 0; i < src->nopset_imports; i++) {
      os[i] = src->opset_imports[i];
      if (mgopt__imp_default_domain(os[i].domain)) {
        os[i].version = E->opset;
        has = 1;
      }
    }
    dst->opset_imports = os;
    dst->nopset_imports = src->nopset_imports;
    if (!has && og.nnodes) {
      /* the body may hold default-domain nodes the import mapped: say which opset */
      os[i].domain = mgopt__exp_s("");
      os[i].version = E->opset;
      dst->nopset_imports++;
    }
  }
  /* value_info only for names the body still defines */
  if (src->nvalue_info) {
    mgopt_onnx_value_info *vi;
    mgopt__exr_init(&defined, E->p);
    for (i = 0; i < dst->ninputs; i++) mgopt__exr_add(&defined, dst->inputs[i]);
    for (i = 0; i < dst->nnodes; i++)
      for (j = 0; j < dst->nodes[i].noutputs; j++) mgopt__exr_add(&defined, dst->nodes[i].outputs[j]);
    vi = (mgopt_onnx_value_info *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_value_info) * (size_t)src->nvalue_info, 8);
    if (!vi || defined.oom) s = mgopt__exp_nomem(E);
    for (i = j = 0; !s && i < src->nvalue_info; i++)
      if (mgopt__exr_has(&defined, src->value_info[i].name)) vi[j++] = src->value_info[i];
    dst->value_info = vi;
    dst->nvalue_info = j;
    mgopt__exr_free(&defined);
  }
  return s;
}

/* Which of the model's functions (op types calls[0..n)) something calls. */
typedef struct mgopt__exf_called {
  const char **calls;
  int64_t n;
  uint8_t *called;
} mgopt__exf_called;

static void mgopt__exf_mark(mgopt__exf_called *c, const char *type) {
  int64_t k;
  for (k = 0; k < c->n; k++)
    if (c->calls[k] && strcmp(c->calls[k], type) == 0) c->called[k] = 1;
}

static int mgopt__exf_mark_op(mgopt_op *op, void *ud) {
  if (op->kind == MGOPT_OP_OPAQUE && op->type && strstr(op->type, "::")) mgopt__exf_mark((mgopt__exf_called *)ud, op->type);
  return 0;
}

/* The calls of ONNX nodes (their subgraphs included, at most 64 deep). */
static void mgopt__exf_mark_nodes(mgopt__exf_called *c, const mgopt_onnx_node *nodes, int64_t n, int depth) {
  char buf[400];
  int64_t i, a, g;
  for (i = 0; i < n && depth < 64; i++) {
    mgopt__onnx_node_type(buf, sizeof buf, nodes[i].domain, nodes[i].op_type, nodes[i].overload);
    mgopt__exf_mark(c, buf);
    for (a = 0; a < nodes[i].nattributes; a++) {
      const mgopt_onnx_attribute *at = &nodes[i].attributes[a];
      if (at->g) mgopt__exf_mark_nodes(c, at->g->nodes, at->g->nnodes, depth + 1);
      for (g = 0; g < at->ngraphs; g++) mgopt__exf_mark_nodes(c, at->graphs[g].nodes, at->graphs[g].nnodes, depth + 1);
    }
  }
}

/* The model's functions: each imported one written from the IR, the others
   as they came; but an imported function the program no longer has (every
   call of it fused or inlined) is not written when nothing written calls
   it. Also fills E->overloads (before anything is written). */
static mgopt_status mgopt__exp_functions(mgopt__exp *E, const mgopt_onnx_model *orig, mgopt_onnx_model *m, int write) {
  const char **calls, **names;
  int64_t k;
  mgopt_status s = MGOPT_OK;
  if (!orig || !orig->nfunctions) return MGOPT_OK;
  calls = (const char **)mgopt_program_alloc(E->p, sizeof(char *) * (size_t)orig->nfunctions, 8);
  names = (const char **)mgopt_program_alloc(E->p, sizeof(char *) * (size_t)orig->nfunctions, 8);
  if (!calls || !names || mgopt__onnx_function_names(E->p, orig, calls, names)) return mgopt__exp_nomem(E);
  if (!write) {
    E->overloads.al = &E->p->alloc;
    for (k = 0; k < orig->nfunctions; k++)
      if (orig->functions[k].overload.len) mgopt__imap_put(&E->overloads, calls[k], (void *)(uintptr_t)1);
    return E->overloads.oom ? mgopt__exp_nomem(E) : MGOPT_OK;
  }
  m->functions = (mgopt_onnx_function *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_function) * (size_t)orig->nfunctions, 8);
  if (!m->functions) return mgopt__exp_nomem(E);
  m->nfunctions = 0;
  {
    /* called: by an op of the program, or by a function written as it came
       (those found until no more are) */
    mgopt__exf_called c;
    uint8_t *verbatim = (uint8_t *)mgopt_program_alloc(E->p, (size_t)orig->nfunctions * 2, 1);
    int more = 1;
    if (!verbatim) return mgopt__exp_nomem(E);
    memset(verbatim, 0, (size_t)orig->nfunctions * 2);
    c.calls = calls;
    c.n = orig->nfunctions;
    c.called = verbatim + orig->nfunctions;
    mgopt_program_walk(E->p, mgopt__exf_mark_op, &c);
    while (more)
      for (more = 0, k = 0; k < orig->nfunctions; k++)
        if (!verbatim[k] && !(names[k] && mgopt_program_function(E->p, names[k])) && (!names[k] || c.called[k])) {
          verbatim[k] = 1;
          more = 1;
          mgopt__exf_mark_nodes(&c, orig->functions[k].nodes, orig->functions[k].nnodes, 0);
        }
    for (k = 0; k < orig->nfunctions && !s; k++) {
      mgopt_function *f = names[k] ? mgopt_program_function(E->p, names[k]) : NULL;
      if (f) s = mgopt__exp_function(E, &orig->functions[k], f, &m->functions[m->nfunctions++]);
      else if (verbatim[k]) m->functions[m->nfunctions++] = orig->functions[k];
    }
  }
  return s;
}

/* ---------------------------------------------------------------- declared output shapes */

/* 1 when the declared type dt and the computed type t disagree about the
   shape: both have a rank and the ranks differ, or a dim both give as a
   number has two sizes. Types of another dtype are not compared (a pass
   that changes an output's dtype means to). */
static int mgopt__exp_shape_contradicts(const mgopt_type *dt, const mgopt_type *t) {
  int32_t i;
  if (dt->kind != MGOPT_TYPE_TENSOR || t->kind != MGOPT_TYPE_TENSOR || dt->dtype != t->dtype || dt->rank < 0 ||
      t->rank < 0)
    return 0;
  if (dt->rank != t->rank) return 1;
  for (i = 0; i < t->rank; i++)
    if (mgopt_dim_is_static(dt->dims[i]) && mgopt_dim_is_static(t->dims[i]) && dt->dims[i].v != t->dims[i].v) return 1;
  return 0;
}

/* mgopt_onnx_output_conflicts; kept (NULL, or one entry per output of
   main) receives the declared ONNX type of each output that contradicts
   the graph, NULL for the others. */
static int64_t mgopt__exp_conflicts(mgopt_program *p, mgopt_onnx_output_conflict *out, int64_t cap,
                                    const mgopt_onnx_type **kept) {
  const mgopt_onnx_model *orig = (const mgopt_onnx_model *)p->onnx_meta;
  mgopt_function *f = mgopt_program_function(p, "main");
  mgopt__imap declared;
  mgopt__imp I;
  int64_t n = 0, k;
  int32_t i;
  if (kept && f)
    for (i = 0; i < f->body->nouts; i++) kept[i] = NULL;
  if (!f || !orig || !orig->graph || !orig->graph->noutputs) return 0;
  memset(&declared, 0, sizeof declared);
  declared.al = &p->alloc;
  for (k = 0; k < orig->graph->noutputs; k++) {
    const mgopt_onnx_value_info *vi = &orig->graph->outputs[k];
    const char *nm = mgopt_program_intern(p, vi->name.ptr ? vi->name.ptr : "", vi->name.len);
    if (!nm) declared.oom = 1;
    if (vi->type && vi->type->tensor_type && vi->type->tensor_type->shape) mgopt__imap_put(&declared, nm, (void *)vi);
  }
  memset(&I, 0, sizeof I);
  I.p = p; /* for mgopt__imp_type only; I.d NULL: no message */
  for (i = 0; i < f->body->nouts && !declared.oom; i++) {
    mgopt_value *v = f->body->outs[i]->value;
    const mgopt_onnx_value_info *vi = v->name ? (const mgopt_onnx_value_info *)mgopt__imap_get(&declared, v->name) : NULL;
    mgopt_type dt;
    mgopt_status s = vi ? mgopt__imp_type(&I, vi->type, &dt) : MGOPT_ERR_LIMIT;
    if (s == MGOPT_ERR_NOMEM) declared.oom = 1;
    if (s || !mgopt__exp_shape_contradicts(&dt, &v->type)) continue;
    if (kept) kept[i] = vi->type;
    if (n < cap) {
      out[n].name = v->name;
      out[n].declared = dt;
      out[n].computed = v->type;
    }
    n++;
  }
  k = declared.oom || p->status ? -1 : n;
  mgopt__imap_free(&declared);
  return k;
}

MGOPTDEF int64_t mgopt_onnx_output_conflicts(mgopt_program *p, mgopt_onnx_output_conflict *out, int64_t cap) {
  if (!p || (cap > 0 && !out)) return 0;
  return mgopt__exp_conflicts(p, out, cap < 0 ? 0 : cap, NULL);
}

/* ---------------------------------------------------------------- the program's target */

/* The exporter at one opset as a program's target; lives in the program's arena. */
typedef struct mgopt__onnx_target {
  mgopt_program *p;
  int64_t opset;
  const mgopt__onnx_map *by_kind[MGOPT_OP__COUNT];
} mgopt__onnx_target;

static int mgopt__onnx_target_accepts(const mgopt_program *p, const mgopt_op *op, void *ud) {
  const mgopt__onnx_target *t = (const mgopt__onnx_target *)ud;
  char buf[160];
  MGOPT__UNUSED(p);
  return mgopt__onnx_why_not(t->p, t->by_kind, t->opset, op, buf, sizeof buf) == NULL;
}

MGOPTDEF mgopt_status mgopt_onnx_set_target(mgopt_program *p, int64_t opset) {
  mgopt__onnx_target *t;
  if (!p) return MGOPT_ERR_INVALID_ARG;
  t = (mgopt__onnx_target *)mgopt_program_alloc(p, sizeof *t, 8);
  if (!t) return MGOPT_ERR_NOMEM;
  t->p = p;
  t->opset = mgopt__onnx_export_opset(p, opset);
  mgopt__onnx_kind_index(t->by_kind, t->opset);
  mgopt_program_set_target(p, mgopt__onnx_target_accepts, t);
  return MGOPT_OK;
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
  mgopt__map_init(&E.names, &p->alloc);
  mgopt__map_init(&E.fresh, &p->alloc);
  mgopt__map_init(&E.orig_nodes, &p->alloc);
  E.o = opts;
  E.d = d;
  E.opset = mgopt__onnx_export_opset(p, opts ? opts->opset : 0);
  E.status0 = p->status;
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
  }
  mgopt__onnx_kind_index(E.by_kind, E.opset);
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
  E.sub_inits = m->ir_version >= 4;
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
  s = mgopt__exp_functions(&E, orig, m, 0);
  if (!s) s = mgopt__exp_unique_names(&E, f);
  if (!s) s = mgopt__exp_block_graph(&E, f->body, m->graph, 1);
  mgopt__exp_free_names(&E);
  if (!s) s = mgopt__exp_functions(&E, orig, m, 1);
  mgopt__imap_free(&E.overloads);
  mgopt__map_free(&E.orig_nodes);
  if (!s && mgopt__exp_drop_unread(p, m->graph)) s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  if (s) return s;
  if (m->ir_version > 0 && m->ir_version < 4) {
    /* before IR version 4 every initializer must also be a graph input */
    mgopt_onnx_graph *g = m->graph;
    int64_t extra = 0, j, k;
    mgopt_onnx_value_info *vi;
    mgopt__exr listed;
    mgopt__exr_init(&listed, p);
    for (j = 0; j < g->ninputs; j++) mgopt__exr_add(&listed, g->inputs[j].name);
    for (j = 0; j < g->ninitializers; j++)
      if (!mgopt__exr_has(&listed, g->initializers[j].name)) extra++;
    vi = listed.oom ? NULL
                    : (mgopt_onnx_value_info *)mgopt_program_alloc(
                          p, sizeof(mgopt_onnx_value_info) * (size_t)(g->ninputs + extra + 1), 8);
    if (!vi) {
      mgopt__exr_free(&listed);
      return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
    }
    if (g->ninputs) memcpy(vi, g->inputs, sizeof(mgopt_onnx_value_info) * (size_t)g->ninputs);
    for (j = 0, k = g->ninputs; j < g->ninitializers && !s; j++) {
      const mgopt_onnx_tensor *t = &g->initializers[j];
      mgopt_type ty;
      if (mgopt__exr_has(&listed, t->name)) continue;
      mgopt__exr_add(&listed, t->name); /* listed once even if two initializers share a name */
      if (mgopt_type_make_static(p, &ty, mgopt_onnx_dtype(t->data_type), (int32_t)t->ndims, t->dims) || listed.oom) {
        s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
        break;
      }
      if (!(vi[k].type = mgopt__exp_type(&E, &ty))) {
        s = mgopt__exp_nomem(&E);
        break;
      }
      vi[k].name = t->name;
      k++;
    }
    mgopt__exr_free(&listed);
    if (s) return s;
    g->inputs = vi;
    g->ninputs = k;
  }
  *out = m;
  return MGOPT_OK;
}
