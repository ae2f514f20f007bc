/* src/passes/cleanup/dedup_op_and_var_names.c — common::dedup_op_and_var_names: unique op names and value names per function.

   Spec: mil_graph_passes.txt, "For each function, this pass renames ops and
   variables with the same name as any preceding ops/variables across all
   scopes"; reference §3.4.

   Before:
     main(%x: (2, 3, fp32)) {
       %castop: (2, 3, fp16) = cast(x=%x, dtype="fp16")
       %castop: (2, 3, fp32) = cast(x=%castop, dtype="fp32")
       %square_last: (2, 3, fp32) = square(x=%castop)
     } -> (%square_last)
   (the second cast reads the first: the text format resolves a name to its
   latest definition)
   After:
     main(%x: (2, 3, fp32)) {
       %castop: (2, 3, fp16) = cast(x=%x, dtype="fp16")
       %castop_1: (2, 3, fp32) = cast(x=%castop, dtype="fp32")
       %square_last: (2, 3, fp32) = square(x=%castop_1)
     } -> (%square_last)

   What it does, per function: the function's inputs and outputs keep their
   names and claim them first (with the op names of the ops producing those
   outputs, where equal). Then, in program order, each nested block's
   arguments, then for each op its nested blocks (first), its outputs, and
   its op name: a name already claimed by something else becomes
   `<name>_1`, `<name>_2`, ... — the first suffix that is neither claimed
   nor any name present in the function, so a later `%a_1` keeps its own.
   An op named like its first output follows that output's new name when
   that name is free among op names (so the text stays free of name="...").
   Op names and value names are separate namespaces.
   Fails (MGOPT_ERR_PASS) when two different inputs/outputs of a function
   share a name (an input and an output, or two outputs): no renaming can
   keep both. The same value listed twice, or an input returned as an
   output, is fine.
   Cost: per function one walk claiming names in one core map keyed by
   interned name pointers (sized from the op index's count up front) when no
   name clashes; else two more walks with one map per namespace and a
   per-name next-suffix counter: O(names) plus the suffix probes. */
#include "../../passes_internal.h"

/* A name's entry in a map keyed by the interned name: the owner (id + 1 of
   the value or op that claimed it; 0 = unclaimed) in bits 0..31, whether the
   name appears somewhere in the function in bit 32, the next suffix to try
   for it as a base name in bits 33..63. */
#define MGOPT__DN_OWNER(x) ((x)->id + 1u)
#define MGOPT__DN_PRESENT ((uint64_t)1 << 32)
#define mgopt__dn_owner(s) ((uint32_t)((s)->v.u & 0xffffffffu))
#define mgopt__dn_next_k(s) ((uint32_t)((s)->v.u >> 33))

static void mgopt__dn_set_owner(mgopt__map_slot *s, uint32_t owner) {
  s->v.u = (s->v.u & ~(uint64_t)0xffffffffu) | owner;
}

typedef struct mgopt__dn {
  mgopt_pass_ctx *ctx;
  mgopt_program *p;
  mgopt_function *f;
  mgopt__map vals, ops;
  char *buf;
  size_t bufcap;
  int oom;
  int clashed;               /* the first try met a name claimed by another owner */
} mgopt__dn;

/* The entry of key, added (unclaimed, unmarked) if absent. NULL on OOM. */
static mgopt__map_slot *mgopt__dn_get(mgopt__dn *d, mgopt__map *t, const char *key) {
  mgopt__map_slot *s = mgopt__map_get(t, mgopt__map_ptr_key(key), NULL);
  if (!s) d->oom = 1;
  return s;
}

/* Returns the name `owner` (a value or an op) gets for `name` and claims it:
   the name itself if unclaimed or already claimed by owner, else the first
   free suffixed name. NULL on OOM. */
static const char *mgopt__dn_claim(mgopt__dn *d, mgopt__map *t, const char *name, uint32_t owner) {
  mgopt__map_slot *s = mgopt__dn_get(d, t, name);
  size_t len;
  uint32_t k;
  if (!s) return NULL;
  if (!mgopt__dn_owner(s) || mgopt__dn_owner(s) == owner) {
    mgopt__dn_set_owner(s, owner);
    return name;
  }
  len = strlen(name);
  if (len + 16 > d->bufcap) {
    size_t ncap = len + 64;
    char *nb = (char *)mgopt__heap_realloc(&d->p->alloc, d->buf, d->bufcap, ncap);
    if (!nb) {
      d->oom = 1;
      return NULL;
    }
    d->buf = nb;
    d->bufcap = ncap;
  }
  for (k = mgopt__dn_next_k(s) ? mgopt__dn_next_k(s) : 1;; k++) {
    const char *cand;
    int n = snprintf(d->buf, d->bufcap, "%s_%u", name, (unsigned)k);
    mgopt__map_slot *c;
    if (n < 0) return NULL;
    cand = mgopt_program_intern(d->p, d->buf, (size_t)n);
    if (!cand) {
      d->oom = 1;
      return NULL;
    }
    if (mgopt__map_find(t, mgopt__map_ptr_key(cand))) continue;
    s = mgopt__dn_get(d, t, name); /* the table may have moved */
    if (!s) return NULL;
    s->v.u = (s->v.u & ~(~(uint64_t)0 << 33)) | (uint64_t)((k + 1) & 0x7fffffffu) << 33;
    c = mgopt__dn_get(d, t, cand);
    if (!c) return NULL;
    c->v.u |= MGOPT__DN_PRESENT;
    mgopt__dn_set_owner(c, owner);
    return cand;
  }
}

static int mgopt__dn_mark(mgopt__dn *d, mgopt_block *b, int depth) {
  mgopt_op *op;
  int32_t i;
  if (depth > 256) return 0;
  for (i = 0; i < b->nargs; i++)
    if (b->args[i]->name) {
      mgopt__map_slot *s = mgopt__dn_get(d, &d->vals, b->args[i]->name);
      if (!s) return 0;
      s->v.u |= MGOPT__DN_PRESENT;
    }
  for (op = b->first; op; op = op->next) {
    mgopt__map_slot *s;
    if (op->name) {
      s = mgopt__dn_get(d, &d->ops, op->name);
      if (!s) return 0;
      s->v.u |= MGOPT__DN_PRESENT;
    }
    for (i = 0; i < op->nouts; i++)
      if (op->outs[i]->name) {
        s = mgopt__dn_get(d, &d->vals, op->outs[i]->name);
        if (!s) return 0;
        s->v.u |= MGOPT__DN_PRESENT;
      }
    for (i = 0; i < op->nblocks; i++)
      if (!mgopt__dn_mark(d, op->blocks[i], depth + 1)) return 0;
  }
  return 1;
}

static int mgopt__dn_rename_value(mgopt__dn *d, mgopt_value *v) {
  const char *n;
  if (!v->name) return 1;
  n = mgopt__dn_claim(d, &d->vals, v->name, MGOPT__DN_OWNER(v));
  if (!n) return 0;
  if (n != v->name) {
    v->name = n;
    d->ctx->rewrites++;
  }
  return 1;
}

static int mgopt__dn_block(mgopt__dn *d, mgopt_block *b, int depth) {
  mgopt_op *op;
  const char *old0;
  int32_t i;
  if (depth > 256) return 0;
  if (b->parent_op)
    for (i = 0; i < b->nargs; i++)
      if (!mgopt__dn_rename_value(d, b->args[i])) return 0;
  for (op = b->first; op; op = op->next) {
    for (i = 0; i < op->nblocks; i++)
      if (!mgopt__dn_block(d, op->blocks[i], depth + 1)) return 0;
    old0 = op->nouts ? op->outs[0]->name : NULL;
    for (i = 0; i < op->nouts; i++)
      if (!mgopt__dn_rename_value(d, op->outs[i])) return 0;
    if (op->name) {
      /* an op named like its first output follows that output's new name when it can */
      const mgopt__map_slot *f = NULL;
      const char *n;
      if (op->name == old0 && op->outs[0]->name != old0) f = mgopt__map_find(&d->ops, mgopt__map_ptr_key(op->outs[0]->name));
      if (op->name == old0 && op->outs[0]->name != old0 && (!f || !mgopt__dn_owner(f)))
        n = mgopt__dn_claim(d, &d->ops, op->outs[0]->name, MGOPT__DN_OWNER(op));
      else
        n = mgopt__dn_claim(d, &d->ops, op->name, MGOPT__DN_OWNER(op));
      if (!n) return 0;
      if (n != op->name) {
        op->name = n;
        d->ctx->rewrites++;
      }
    }
  }
  return 1;
}

/* Claims the io names; MGOPT_ERR_PASS when two different io values share one. */
static mgopt_status mgopt__dn_claim_io(mgopt__dn *d, mgopt_value *v) {
  mgopt__map_slot *s;
  if (!v || !v->name) return MGOPT_OK;
  s = mgopt__dn_get(d, &d->vals, v->name);
  if (!s) return mgopt_diag_set(d->ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
  if (mgopt__dn_owner(s) && mgopt__dn_owner(s) != MGOPT__DN_OWNER(v))
    return mgopt_diag_set(d->ctx->diag, MGOPT_ERR_PASS,
                          "function '%s': the name '%s' is used by two different inputs/outputs; "
                          "it cannot be made unique without renaming one of them",
                          d->f->name, v->name);
  s->v.u |= MGOPT__DN_PRESENT;
  mgopt__dn_set_owner(s, MGOPT__DN_OWNER(v));
  /* the op of a function output, named like it, keeps that name too */
  if (v->def && v->def->name == v->name && v->index == 0) {
    s = mgopt__dn_get(d, &d->ops, v->name);
    if (!s) return mgopt_diag_set(d->ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
    if (!mgopt__dn_owner(s)) {
      s->v.u |= MGOPT__DN_PRESENT;
      mgopt__dn_set_owner(s, MGOPT__DN_OWNER(v->def));
    }
  }
  return MGOPT_OK;
}

/* ---- the first try: one map for both namespaces, value owner in bits
   0..31 of a name's entry, op owner in bits 32..63 (an op is mostly named
   like its first output: one lookup claims both), no presence marks, stop at
   the first clash. Order does not matter here: nothing is renamed, and a
   clash exists in any order or in none. */

/* Claims name for owner in the value (shift 0) or op (shift 32) half; 0 on a clash or OOM. */
static int mgopt__dn_try(mgopt__dn *d, const char *name, int shift, uint32_t owner) {
  mgopt__map_slot *s = mgopt__dn_get(d, &d->vals, name);
  uint32_t cur;
  if (!s) return 0;
  cur = (uint32_t)(s->v.u >> shift);
  if (cur && cur != owner) {
    d->clashed = 1;
    return 0;
  }
  s->v.u |= (uint64_t)owner << shift;
  return 1;
}

static int mgopt__dn_try_block(mgopt__dn *d, mgopt_block *b, int depth) {
  mgopt_op *op;
  int32_t i;
  if (depth > 256) return 0;
  if (b->parent_op)
    for (i = 0; i < b->nargs; i++)
      if (b->args[i]->name && !mgopt__dn_try(d, b->args[i]->name, 0, MGOPT__DN_OWNER(b->args[i]))) return 0;
  for (op = b->first; op; op = op->next) {
    for (i = 0; i < op->nblocks; i++)
      if (!mgopt__dn_try_block(d, op->blocks[i], depth + 1)) return 0;
    for (i = 0; i < op->nouts; i++)
      if (op->outs[i]->name && !mgopt__dn_try(d, op->outs[i]->name, 0, MGOPT__DN_OWNER(op->outs[i]))) return 0;
    if (op->name && !mgopt__dn_try(d, op->name, 32, MGOPT__DN_OWNER(op))) return 0;
  }
  return 1;
}

/* mgopt__dn_claim_io for the first try. */
static mgopt_status mgopt__dn_try_io(mgopt__dn *d, mgopt_value *v) {
  mgopt__map_slot *s;
  uint32_t cur;
  if (!v || !v->name) return MGOPT_OK;
  s = mgopt__dn_get(d, &d->vals, v->name);
  if (!s) return mgopt_diag_set(d->ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
  cur = (uint32_t)(s->v.u & 0xffffffffu);
  if (cur && cur != MGOPT__DN_OWNER(v))
    return mgopt_diag_set(d->ctx->diag, MGOPT_ERR_PASS,
                          "function '%s': the name '%s' is used by two different inputs/outputs; "
                          "it cannot be made unique without renaming one of them",
                          d->f->name, v->name);
  s->v.u = (s->v.u & ~(uint64_t)0xffffffffu) | MGOPT__DN_OWNER(v);
  /* the op of a function output, named like it, keeps that name too */
  if (v->def && v->def->name == v->name && v->index == 0 && !(s->v.u >> 32))
    s->v.u |= (uint64_t)MGOPT__DN_OWNER(v->def) << 32;
  return MGOPT_OK;
}

/* Claims f's io names, then renames what clashes. The first try (above)
   claims names without marking which are present (the marks matter only to
   choose a suffix): when nothing clashes, nothing is renamed and that one
   walk is the whole pass; at the first clash (nothing renamed yet) it starts
   over with the marks and a map per namespace. */
static mgopt_status mgopt__dn_function(mgopt__dn *d) {
  mgopt_block *body = d->f->body;
  size_t nops = (size_t)mgopt__index_op_count(d->f);
  mgopt_status s = MGOPT_OK;
  int32_t i;
  d->clashed = 0;
  if (!mgopt__map_reset(&d->vals, nops + (size_t)body->nargs))
    return mgopt_diag_set(d->ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
  for (i = 0; i < body->nargs && !s; i++) s = mgopt__dn_try_io(d, body->args[i]);
  for (i = 0; i < body->nouts && !s; i++) s = mgopt__dn_try_io(d, body->outs[i]->value);
  if (s) return s;
  if (mgopt__dn_try_block(d, body, 0)) return MGOPT_OK;
  if (d->clashed) {
    if (!mgopt__map_reset(&d->vals, nops + (size_t)body->nargs) || !mgopt__map_reset(&d->ops, nops))
      return mgopt_diag_set(d->ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
    for (i = 0; i < body->nargs && !s; i++) s = mgopt__dn_claim_io(d, body->args[i]);
    for (i = 0; i < body->nouts && !s; i++) s = mgopt__dn_claim_io(d, body->outs[i]->value);
    if (s) return s;
    if (mgopt__dn_mark(d, body, 0) && mgopt__dn_block(d, body, 0)) return MGOPT_OK;
  }
  return d->oom ? mgopt_diag_set(d->ctx->diag, MGOPT_ERR_NOMEM, "out of memory")
                : mgopt_diag_set(d->ctx->diag, MGOPT_ERR_LIMIT, "blocks nested too deeply");
}

static mgopt_status mgopt__dn_run(mgopt_pass_ctx *ctx) {
  mgopt__dn d;
  mgopt_status s = MGOPT_OK;
  int32_t fi;
  memset(&d, 0, sizeof d);
  d.ctx = ctx;
  d.p = ctx->program;
  mgopt__map_init(&d.vals, &d.p->alloc);
  mgopt__map_init(&d.ops, &d.p->alloc);
  for (fi = 0; fi < mgopt_program_function_count(d.p) && !s; fi++) {
    d.f = mgopt_program_function_at(d.p, fi);
    s = mgopt__dn_function(&d);
  }
  mgopt__map_free(&d.vals);
  mgopt__map_free(&d.ops);
  if (d.buf) mgopt__heap_free(&d.p->alloc, d.buf, d.bufcap);
  return s;
}

MGOPT__DEFINE_PASS(cleanup, common, dedup_op_and_var_names,
                   "make op names and value names unique within each function", mgopt__dn_run);
