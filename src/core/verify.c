/* src/core/verify.c — the IR verifier: structure, scopes, exact use lists, op schemas, inferred types. */
#include "../internal.h"

/* Invariants checked, per function (nested blocks included):
   - block lists: prev/next links, parent pointers, op counts, no erased op linked;
   - every value has a name; outputs point back to their op, args to their block;
   - operands are defined before use in the op's scope (function inputs, earlier
     ops of the same or an enclosing block, args of the enclosing nested blocks);
   - use lists are exact: each use in a value's list points back at its operand
     or block-output slot, and the list length equals the number of such slots;
   - registered ops: operand slots and attributes known to the schema (a
     parameter may be given as an operand), required ones present, attribute
     kinds compatible, output and nested-block counts in range;
   - output types agree with type inference (no contradicting dtype, rank or
     static dim; a less precise stored dim is accepted);
   - block outputs defined;
   - the op index agrees with the program: every linked op is listed under its
     kind at its slot, labels increase in pre-order, the op count is exact,
     and a list not marked unsorted is label-ascending. */

/* The op's name (or its first output's) and, for an op read from .mil, its
   line:col found by binary search in the parser's table (ids ascend). */
MGOPT__PRIVATE void mgopt__diag_place(mgopt_diag *d, const mgopt_op *op) {
  const mgopt_program *p;
  int64_t lo = 0, hi;
  if (!d) return;
  d->op[0] = 0;
  d->line = d->col = 0;
  d->offset = -1;
  if (!op) return;
  snprintf(d->op, sizeof d->op, "%s",
           op->name ? op->name : (op->nouts > 0 && op->outs[0]->name) ? op->outs[0]->name : "");
  p = op->program;
  hi = p ? p->nplaces : 0;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (p->places[mid].id < op->id) lo = mid + 1;
    else hi = mid;
  }
  if (p && lo < p->nplaces && p->places[lo].id == op->id) {
    d->line = p->places[lo].line;
    d->col = p->places[lo].col;
  }
}

typedef struct mgopt__vfy {
  mgopt_program *p;
  mgopt_diag *d;
  uint8_t *visible;   /* by value id: 1 while in scope */
  int32_t *count;     /* by value id: operand/block-output slots seen */
  mgopt_value **seen; /* every value defined, to check its use list at the end */
  int64_t nseen, seen_cap;
  uint32_t nids;
  int depth;
} mgopt__vfy;

static mgopt_status mgopt__vfy_fail(mgopt__vfy *v, const mgopt_op *op, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static mgopt_status mgopt__vfy_fail(mgopt__vfy *v, const mgopt_op *op, const char *fmt, ...) {
  va_list ap;
  if (!v->d) return MGOPT_ERR_VERIFY;
  v->d->status = MGOPT_ERR_VERIFY;
  mgopt__diag_place(v->d, op);
  va_start(ap, fmt);
  vsnprintf(v->d->msg, sizeof v->d->msg, fmt, ap);
  va_end(ap);
  if (op) {
    mgopt__diag_prefix(v->d, "): ");
    mgopt__diag_prefix(v->d, op->type ? op->type : "?");
    mgopt__diag_prefix(v->d, "' (");
    mgopt__diag_prefix(v->d, v->d->op);
    mgopt__diag_prefix(v->d, "op '");
  }
  return MGOPT_ERR_VERIFY;
}

static int mgopt__vfy_id_ok(mgopt__vfy *v, const mgopt_value *x) { return x->id < v->nids; }

static mgopt_status mgopt__vfy_define(mgopt__vfy *v, mgopt_value *x, const mgopt_op *op) {
  if (!mgopt__vfy_id_ok(v, x)) return mgopt__vfy_fail(v, op, "value with an invalid id");
  if (!x->name && !(x->flags & MGOPT_VALUE_ABSENT))
    return mgopt__vfy_fail(v, op, "a value has no name");
  if (x->type.kind == MGOPT_TYPE_TENSOR && x->type.rank > 0 && !x->type.dims)
    return mgopt__vfy_fail(v, op, "value '%s' has rank %d but no dims", x->name ? x->name : "_",
                           (int)x->type.rank);
  v->visible[x->id] = 1;
  if (v->nseen == v->seen_cap) {
    void *arr = v->seen;
    if (!mgopt__grow(&v->p->alloc, &arr, &v->seen_cap, v->nseen + 1, sizeof(mgopt_value *)))
      return mgopt_diag_set(v->d, MGOPT_ERR_NOMEM, "verifier: out of memory");
    v->seen = (mgopt_value **)arr;
  }
  v->seen[v->nseen++] = x;
  return MGOPT_OK;
}

static int mgopt__vfy_kind_ok(uint8_t want, uint8_t have) {
  if (want == have) return 1;
  switch (want) {
    case MGOPT_ATTR_FLOAT: return have == MGOPT_ATTR_INT || have == MGOPT_ATTR_TENSOR;
    case MGOPT_ATTR_INT: return have == MGOPT_ATTR_BOOL || have == MGOPT_ATTR_TENSOR;
    case MGOPT_ATTR_BOOL: return have == MGOPT_ATTR_INT || have == MGOPT_ATTR_TENSOR;
    case MGOPT_ATTR_INTS: return have == MGOPT_ATTR_INT || have == MGOPT_ATTR_TENSOR || have == MGOPT_ATTR_BOOLS;
    case MGOPT_ATTR_FLOATS: return have == MGOPT_ATTR_INTS || have == MGOPT_ATTR_TENSOR || have == MGOPT_ATTR_FLOAT;
    case MGOPT_ATTR_BOOLS: return have == MGOPT_ATTR_INTS || have == MGOPT_ATTR_TENSOR;
    case MGOPT_ATTR_STRINGS: return have == MGOPT_ATTR_STRING;
    default: return 0;
  }
}

static const char *mgopt__vfy_name(const mgopt_value *x) { return x->name ? x->name : "_"; }

static mgopt_status mgopt__vfy_schema(mgopt__vfy *v, mgopt_op *op) {
  const mgopt_op_def *def = mgopt_op_def_get(op->kind);
  int32_t i, k;
  if (!def) return MGOPT_OK;
  for (i = 0; i < op->nslots; i++) {
    const mgopt_slot *s = &op->slots[i];
    int found = 0;
    if (!s->is_list && s->n == 0) continue; /* an absent operand (set to NULL) */
    for (k = 0; k < def->nslots && !found; k++)
      if (strcmp(def->slots[k].name, s->name) == 0) {
        found = 1;
        if (s->is_list && !(def->slots[k].flags & MGOPT_SLOT_VARIADIC))
          return mgopt__vfy_fail(v, op, "operand '%s' is a list but takes one value", s->name);
        if (!s->is_list && (def->slots[k].flags & MGOPT_SLOT_VARIADIC) && s->n)
          return mgopt__vfy_fail(v, op, "operand '%s' takes a list", s->name);
      }
    for (k = 0; k < def->nattrs && !found; k++)
      if (strcmp(def->attrs[k].name, s->name) == 0) found = 1; /* parameter given as an operand */
    if (!found) return mgopt__vfy_fail(v, op, "unknown operand '%s'", s->name);
  }
  for (k = 0; k < def->nslots; k++) {
    int32_t si;
    if (def->slots[k].flags & MGOPT_SLOT_OPTIONAL) continue;
    si = mgopt_op_slot_index(op, def->slots[k].name);
    if (si < 0 || (!op->slots[si].is_list && op->slots[si].n == 0))
      return mgopt__vfy_fail(v, op, "missing operand '%s'", def->slots[k].name);
  }
  for (i = 0; i < op->nattrs; i++) {
    const mgopt_attr *a = &op->attrs[i];
    const mgopt_attr_def *ad = NULL;
    for (k = 0; k < def->nattrs; k++)
      if (strcmp(def->attrs[k].name, a->name) == 0) ad = &def->attrs[k];
    if (!ad) return mgopt__vfy_fail(v, op, "unknown attribute '%s'", a->name);
    if (!mgopt__vfy_kind_ok(ad->kind, a->kind))
      return mgopt__vfy_fail(v, op, "attribute '%s' has the wrong kind", a->name);
    if (a->kind == MGOPT_ATTR_TENSOR && !a->u.t)
      return mgopt__vfy_fail(v, op, "attribute '%s' has no tensor", a->name);
  }
  for (k = 0; k < def->nattrs; k++) {
    if (!(def->attrs[k].flags & MGOPT_ATTR_REQUIRED)) continue;
    if (!mgopt_op_attr(op, def->attrs[k].name) && mgopt_op_slot_index(op, def->attrs[k].name) < 0)
      return mgopt__vfy_fail(v, op, "missing attribute '%s'", def->attrs[k].name);
  }
  if (op->nouts < def->nouts_min || (def->nouts_max >= 0 && op->nouts > def->nouts_max))
    return mgopt__vfy_fail(v, op, "has %d outputs", (int)op->nouts);
  if (def->nblocks >= 0 && op->nblocks != def->nblocks)
    return mgopt__vfy_fail(v, op, "has %d nested blocks, expected %d", (int)op->nblocks, (int)def->nblocks);
  return MGOPT_OK;
}

static mgopt_status mgopt__vfy_types(mgopt__vfy *v, mgopt_op *op) {
  mgopt_type tmp[8], *inf;
  mgopt_diag d2;
  mgopt_status st;
  int32_t i;
  mgopt_diag_clear(&d2);
  st = mgopt__op_infer_types(v->p, op, tmp, 8, &inf, &d2);
  if (st == MGOPT_ERR_NOMEM && d2.status == MGOPT_OK) /* no memory for the types */
    return mgopt_diag_set(v->d, MGOPT_ERR_NOMEM, "verifier: out of memory");
  if (st) return mgopt__vfy_fail(v, op, "type inference failed: %s", d2.msg);
  if (!inf) return MGOPT_OK;
  for (i = 0; i < op->nouts; i++) {
    const mgopt_type *s = &op->outs[i]->type, *t = &inf[i];
    const char *n = mgopt__vfy_name(op->outs[i]);
    int32_t c = mgopt__type_clash(s, t, 1);
    if (c == MGOPT__CLASH_KIND) return mgopt__vfy_fail(v, op, "output '%s': kind differs from inference", n);
    if (c == MGOPT__CLASH_DTYPE)
      return mgopt__vfy_fail(v, op, "output '%s' is %s, inference gives %s", n,
                             mgopt_dtype_name((mgopt_dtype)s->dtype), mgopt_dtype_name((mgopt_dtype)t->dtype));
    if (c == MGOPT__CLASH_RANK)
      return mgopt__vfy_fail(v, op, "output '%s' has rank %d, inference gives %d", n, (int)s->rank, (int)t->rank);
    if (c > 0)
      return mgopt__vfy_fail(v, op, "output '%s' dim %d is %lld, inference gives %lld", n, (int)(c - 1),
                             (long long)s->dims[c - 1].v, (long long)t->dims[c - 1].v);
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__vfy_block(mgopt__vfy *v, mgopt_block *b, mgopt_function *f);

static mgopt_status mgopt__vfy_op(mgopt__vfy *v, mgopt_op *op, mgopt_block *b, mgopt_function *f) {
  int32_t i, k;
  mgopt_status s;
  if (op->flags & MGOPT_OP_ERASED) return mgopt__vfy_fail(v, op, "erased op still linked");
  if (op->parent != b) return mgopt__vfy_fail(v, op, "wrong parent block");
  if (!op->type) return mgopt__vfy_fail(v, NULL, "op without a type");
  if (op->kind < 0 || op->kind >= MGOPT_OP__COUNT) return mgopt__vfy_fail(v, op, "bad op kind");
  for (i = 0; i < op->nslots; i++) {
    mgopt_slot *sl = &op->slots[i];
    if (!sl->name) return mgopt__vfy_fail(v, op, "unnamed operand slot");
    for (k = 0; k < sl->n; k++) {
      mgopt_use *u = &sl->uses[k];
      mgopt_value *x = u->value;
      if (!x) return mgopt__vfy_fail(v, op, "operand '%s'[%d] is missing", sl->name, (int)k);
      if (u->op != op || u->slot != i || u->index != k || u->block)
        return mgopt__vfy_fail(v, op, "operand '%s'[%d] has a corrupt use record", sl->name, (int)k);
      if (!mgopt__vfy_id_ok(v, x) || !v->visible[x->id])
        return mgopt__vfy_fail(v, op, "operand '%s' uses '%s' outside its scope or before its definition",
                               sl->name, mgopt__vfy_name(x));
      v->count[x->id]++;
    }
  }
  if ((s = mgopt__vfy_schema(v, op)) != MGOPT_OK) return s;
  if (op->kind == MGOPT_OP_while_loop) {
    /* both blocks take the loop vars and the body gives them back: same
       count, no contradicting types; the condition gives one bool */
    int32_t si = mgopt_op_slot_index(op, "loop_vars");
    int32_t nv = si >= 0 ? op->slots[si].n : 0;
    for (i = 0; i < op->nblocks; i++) {
      mgopt_block *nb = op->blocks[i];
      if (nb->nargs != nv)
        return mgopt__vfy_fail(v, op, "block %d takes %d arguments for %d loop vars", (int)i, (int)nb->nargs, (int)nv);
      for (k = 0; k < nv; k++) {
        int32_t j = mgopt__type_clash(&op->slots[si].uses[k].value->type, &nb->args[k]->type, 0);
        if (j == MGOPT__CLASH_KIND || j == MGOPT__CLASH_DTYPE)
          return mgopt__vfy_fail(v, op, "block %d argument %d differs in type from loop var %d", (int)i, (int)k, (int)k);
        if (j == MGOPT__CLASH_RANK)
          return mgopt__vfy_fail(v, op, "block %d argument %d differs in rank from loop var %d", (int)i, (int)k, (int)k);
        if (j > 0)
          return mgopt__vfy_fail(v, op, "block %d argument %d dim %d differs from loop var %d", (int)i, (int)k,
                                 (int)(j - 1), (int)k);
      }
    }
    if (op->nblocks == 2) {
      const mgopt_block *c = op->blocks[0], *body = op->blocks[1];
      const mgopt_value *o = c->nouts == 1 && c->outs[0] ? c->outs[0]->value : NULL;
      int one = o && o->type.kind == MGOPT_TYPE_TENSOR && (!o->type.dtype || o->type.dtype == MGOPT_DT_BOOL);
      for (k = 0; one && k < o->type.rank; k++) /* a scalar, or one element of any rank */
        one = !mgopt_dim_is_static(o->type.dims[k]) || o->type.dims[k].v == 1;
      if (!one) return mgopt__vfy_fail(v, op, "the loop condition must give one bool");
      if (body->nouts != nv)
        return mgopt__vfy_fail(v, op, "the loop body gives %d values for %d loop vars", (int)body->nouts, (int)nv);
      for (k = 0; k < nv; k++) {
        int32_t j;
        if (!body->outs[k] || !body->outs[k]->value) continue; /* reported with the block's outputs */
        j = mgopt__type_clash(&op->slots[si].uses[k].value->type, &body->outs[k]->value->type, 0);
        if (j != 0)
          return mgopt__vfy_fail(v, op, "the loop body's output %d contradicts the type of loop var %d", (int)k,
                                 (int)k);
      }
    }
  }
  /* nested blocks see what is visible here, plus their own args */
  for (i = 0; i < op->nblocks; i++) {
    mgopt_block *nb = op->blocks[i];
    if (nb->parent_op != op) return mgopt__vfy_fail(v, op, "nested block %d has a wrong parent", (int)i);
    if (v->depth > 256) return mgopt__vfy_fail(v, op, "blocks nested too deeply");
    v->depth++;
    s = mgopt__vfy_block(v, nb, f);
    v->depth--;
    if (s) return s;
  }
  for (i = 0; i < op->nouts; i++) {
    mgopt_value *x = op->outs[i];
    if (!x || x->def != op || x->index != i) return mgopt__vfy_fail(v, op, "output %d does not point back at its op", (int)i);
    if ((s = mgopt__vfy_define(v, x, op)) != MGOPT_OK) return s;
  }
  return mgopt__vfy_types(v, op);
}

static mgopt_status mgopt__vfy_block(mgopt__vfy *v, mgopt_block *b, mgopt_function *f) {
  mgopt_op *op, *prev = NULL;
  int32_t i, n = 0;
  mgopt_status s;
  if (b->func != f) return mgopt__vfy_fail(v, NULL, "block '%s' belongs to another function", b->name);
  for (i = 0; i < b->nargs; i++) {
    mgopt_value *x = b->args[i];
    if (x->def || x->owner != b || x->index != i)
      return mgopt__vfy_fail(v, b->parent_op, "block argument %d does not point back at its block", (int)i);
    if ((s = mgopt__vfy_define(v, x, b->parent_op)) != MGOPT_OK) return s;
  }
  for (op = b->first; op; op = op->next) {
    if (op->prev != prev) return mgopt__vfy_fail(v, op, "broken op list links");
    if ((s = mgopt__vfy_op(v, op, b, f)) != MGOPT_OK) return s;
    prev = op;
    n++;
  }
  if (b->last != prev) return mgopt__vfy_fail(v, NULL, "block '%s': last op pointer is stale", b->name);
  if (n != b->nops) return mgopt__vfy_fail(v, NULL, "block '%s': op count %d, found %d", b->name, (int)b->nops, (int)n);
  for (i = 0; i < b->nouts; i++) {
    mgopt_use *u = b->outs[i];
    mgopt_value *x = u->value;
    if (!x) return mgopt__vfy_fail(v, b->parent_op, "block '%s' output %d is missing", b->name, (int)i);
    if (u->block != b || u->op || u->index != i)
      return mgopt__vfy_fail(v, b->parent_op, "block '%s' output %d has a corrupt use record", b->name, (int)i);
    if (!mgopt__vfy_id_ok(v, x) || !v->visible[x->id])
      return mgopt__vfy_fail(v, b->parent_op, "block '%s' output '%s' is not defined in scope", b->name,
                             mgopt__vfy_name(x));
    v->count[x->id]++;
  }
  /* leaving the block: its definitions go out of scope */
  if (b->parent_op) {
    for (i = 0; i < b->nargs; i++) v->visible[b->args[i]->id] = 0;
    for (op = b->first; op; op = op->next)
      for (i = 0; i < op->nouts; i++) v->visible[op->outs[i]->id] = 0;
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__vfy_uses(mgopt__vfy *v) {
  int64_t i;
  for (i = 0; i < v->nseen; i++) {
    mgopt_value *x = v->seen[i];
    const mgopt_use *u, *prev = NULL;
    int32_t n = 0, nb = 0;
    for (u = x->uses; u; u = u->next) {
      if (u->value != x || u->prev != prev)
        return mgopt__vfy_fail(v, x->def, "use list of '%s' is corrupt", mgopt__vfy_name(x));
      if (!u->op && nb++ != n)
        return mgopt__vfy_fail(v, x->def, "use list of '%s' has a block output after an op use",
                               mgopt__vfy_name(x));
      if (u->op) {
        const mgopt_op *o = u->op;
        if ((o->flags & MGOPT_OP_ERASED) || u->slot < 0 || u->slot >= o->nslots ||
            u->index < 0 || u->index >= o->slots[u->slot].n || &o->slots[u->slot].uses[u->index] != u)
          return mgopt__vfy_fail(v, x->def, "use list of '%s' holds a stale use", mgopt__vfy_name(x));
      } else if (!u->block || u->index < 0 || u->index >= u->block->nouts || u->block->outs[u->index] != u) {
        return mgopt__vfy_fail(v, x->def, "use list of '%s' holds a stale block output", mgopt__vfy_name(x));
      }
      prev = u;
      n++;
    }
    if (nb != x->nblock_uses)
      return mgopt__vfy_fail(v, x->def, "use list of '%s' has %d block outputs, count %d", mgopt__vfy_name(x),
                             (int)nb, (int)x->nblock_uses);
    if (n != x->nuses || n != v->count[x->id])
      return mgopt__vfy_fail(v, x->def, "use list of '%s' has %d entries, count %d, found %d uses",
                             mgopt__vfy_name(x), (int)n, (int)x->nuses, (int)v->count[x->id]);
  }
  return MGOPT_OK;
}

/* The ops of block b (nested too) against f's index, in pre-order; *last is
   the label of the op before, *n counts the ops. */
static mgopt_status mgopt__vfy_index_block(mgopt__vfy *v, const mgopt__func_rec *fr, const mgopt_block *b,
                                           uint64_t *last, int64_t *n) {
  const mgopt_op *op;
  for (op = b->first; op; op = op->next) {
    const mgopt__op_rec *r = MGOPT__OP_REC(op);
    int32_t i;
    mgopt_status s;
    if (r->slot == MGOPT__SLOT_OFF) return mgopt__vfy_fail(v, op, "linked op missing from the op index");
    if (!fr->broken && (r->slot < 0 || !fr->kinds || r->slot >= fr->kinds[op->kind].n ||
                        fr->kinds[op->kind].ops[r->slot] != op))
      return mgopt__vfy_fail(v, op, "op index: not at its slot in the list of its kind");
    if (r->label <= *last) return mgopt__vfy_fail(v, op, "op index: label out of program order");
    *last = r->label;
    ++*n;
    for (i = 0; i < op->nblocks; i++)
      if ((s = mgopt__vfy_index_block(v, fr, op->blocks[i], last, n)) != MGOPT_OK) return s;
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__vfy_index(mgopt__vfy *v, mgopt_function *f) {
  const mgopt__func_rec *fr = MGOPT__FUNC_REC(f);
  uint64_t last = 0;
  int64_t n = 0, listed = 0, i;
  int32_t k;
  mgopt_status s = mgopt__vfy_index_block(v, fr, f->body, &last, &n);
  if (s) return s;
  if (n != fr->nops)
    return mgopt__vfy_fail(v, NULL, "op index of '%s' counts %lld ops, the function has %lld", f->name,
                           (long long)fr->nops, (long long)n);
  if (fr->broken || !fr->kinds) return MGOPT_OK;
  for (k = 0; k < MGOPT_OP__COUNT; k++) {
    const mgopt__kind_list *kl = &fr->kinds[k];
    uint64_t prev = 0;
    int64_t holes = 0;
    for (i = 0; i < kl->n; i++) {
      const mgopt_op *op = kl->ops[i];
      if (!op) {
        holes++;
        continue;
      }
      if (op->kind != k || MGOPT__OP_REC(op)->slot != i || (op->flags & MGOPT_OP_ERASED))
        return mgopt__vfy_fail(v, op, "op index: a stale entry in the list of kind %d", (int)k);
      if (!kl->unsorted && MGOPT__OP_REC(op)->label <= prev)
        return mgopt__vfy_fail(v, op, "op index: list of kind %d out of order", (int)k);
      prev = MGOPT__OP_REC(op)->label;
    }
    if (holes != kl->holes || (kl->n && !kl->ops[kl->n - 1]))
      return mgopt__vfy_fail(v, NULL, "op index of '%s': list of kind %d miscounts its holes", f->name, (int)k);
    listed += kl->n - kl->holes;
  }
  if (listed != n)
    return mgopt__vfy_fail(v, NULL, "op index of '%s' lists %lld ops, the function has %lld", f->name,
                           (long long)listed, (long long)n);
  return MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_program_verify(mgopt_program *p, mgopt_diag *d) {
  mgopt__vfy v;
  mgopt_status s = MGOPT_OK;
  int32_t i;
  mgopt_diag_clear(d);
  memset(&v, 0, sizeof v);
  v.p = p;
  v.d = d;
  if (p->status) return mgopt_diag_set(d, p->status, "the program ran out of memory earlier");
  v.nids = p->next_id;
  v.visible = (uint8_t *)mgopt__heap_realloc(&p->alloc, NULL, 0, v.nids);
  v.count = (int32_t *)mgopt__heap_realloc(&p->alloc, NULL, 0, sizeof(int32_t) * v.nids);
  if (!v.visible || !v.count) {
    s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "verifier: out of memory");
    goto done;
  }
  memset(v.visible, 0, v.nids);
  memset(v.count, 0, sizeof(int32_t) * v.nids);
  for (i = 0; i < p->nfuncs && !s; i++) {
    mgopt_function *f = p->funcs[i];
    if (!f->body || f->body->parent_op) {
      s = mgopt__vfy_fail(&v, NULL, "function '%s' has no body", f->name);
      break;
    }
    s = mgopt__vfy_block(&v, f->body, f);
    if (!s) s = mgopt__vfy_index(&v, f);
    /* function scopes are separate */
    if (!s) memset(v.visible, 0, v.nids);
  }
  if (!s) s = mgopt__vfy_uses(&v);
done:
  if (v.visible) mgopt__heap_free(&p->alloc, v.visible, v.nids);
  if (v.count) mgopt__heap_free(&p->alloc, v.count, sizeof(int32_t) * v.nids);
  if (v.seen) mgopt__heap_free(&p->alloc, v.seen, (size_t)v.seen_cap * sizeof(mgopt_value *));
  return s;
}
