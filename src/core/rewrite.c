/* src/core/rewrite.c — the greedy worklist driver: dead-op erasure, folding, patterns, fixpoint. */
#include "../internal.h"

/* How it works. Every op of the function (nested blocks too) is queued once,
   in program order; when the run neither folds nor erases dead ops (nor
   shuffles) and no pattern takes any op, only the ops of the patterns' root
   kinds, from the op index, in the same order: the others would be popped
   and left as they are. A run in which no op could do anything (no op of a
   root kind, none dead when erasing, none with only constant operands when
   folding: a scan of the index's arrays) queues nothing. Popping an op: skip it if erased; erase it if it is pure
   and its outputs are unused; fold it if every operand is constant and a
   kernel exists; else try the patterns registered for its type, highest
   benefit first (ties by name), and stop at the first that changes the IR.
   Every change goes through the mgopt_rw_* calls, which queue only what may
   match anew: created ops, users of replaced values, producers of erased
   operands, users of modified ops. A queued flag keeps each op in the queue
   at most once. Cost: O(ops + rewrites x neighbourhood). */

#define MGOPT__OP_QUEUED (1u << 8)
/* how many queued ops ahead of the popped one are prefetched */
#define MGOPT__RW_AHEAD 8

struct mgopt_rewriter {
  mgopt_program *p;
  mgopt_op **q;          /* stack of queued ops (popped from the end) */
  int64_t nq, qcap;
  int oom;
  uint64_t rng;
  const mgopt_rewrite_config *cfg;
  mgopt_rewrite_stats *stats;
  mgopt_diag *d;
  /* pattern index: for each op kind, a range into `order` */
  int32_t *order;        /* pattern indices sorted by (root kind, -benefit, name) */
  int32_t *start;        /* MGOPT_OP__COUNT + 1 entries */
  int32_t nany;          /* patterns with root_kind -1 are at order[0..nany) */
  const mgopt_pattern *pats;
  int32_t npats;
  int64_t *hits;         /* per pattern, for the no-fixpoint diagnostic */
};

static void mgopt__rw_push(mgopt_rewriter *rw, mgopt_op *op) {
  if (!op || (op->flags & (MGOPT__OP_QUEUED | MGOPT_OP_ERASED))) return;
  if (rw->nq == rw->qcap) {
    void *arr = rw->q;
    if (!mgopt__grow(&rw->p->alloc, &arr, &rw->qcap, rw->nq + 1, sizeof(mgopt_op *))) {
      rw->oom = 1;
      return;
    }
    rw->q = (mgopt_op **)arr;
  }
  op->flags |= MGOPT__OP_QUEUED;
  rw->q[rw->nq++] = op;
}

static void mgopt__rw_push_users(mgopt_rewriter *rw, mgopt_value *v) {
  mgopt_use *u;
  for (u = v->uses; u; u = u->next) {
    if (u->op) mgopt__rw_push(rw, u->op);
    else if (u->block && u->block->parent_op) mgopt__rw_push(rw, u->block->parent_op);
  }
}

static void mgopt__rw_push_producers(mgopt_rewriter *rw, mgopt_op *op) {
  int32_t s, k;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      mgopt_value *v = op->slots[s].uses[k].value;
      if (v && v->def) mgopt__rw_push(rw, v->def);
    }
}

/* ---------------------------------------------------------------- rewriter API */

MGOPTDEF mgopt_program *mgopt_rw_program(mgopt_rewriter *rw) { return rw->p; }

MGOPTDEF void mgopt_rw_created(mgopt_rewriter *rw, mgopt_op *op) { mgopt__rw_push(rw, op); }

MGOPTDEF void mgopt_rw_replace_value(mgopt_rewriter *rw, mgopt_value *from, mgopt_value *to) {
  mgopt__rw_push_users(rw, from);
  mgopt_value_replace_all_uses(from, to);
  if (to->def) mgopt__rw_push(rw, to->def);
}

MGOPTDEF void mgopt_rw_erase(mgopt_rewriter *rw, mgopt_op *op) {
  int32_t i;
  for (i = 0; i < op->nouts; i++) MGOPT_ASSERT(op->outs[i]->nuses == 0);
  mgopt__rw_push_producers(rw, op);
  mgopt_op_erase(op);
  if (rw->stats) rw->stats->erased++;
}

MGOPTDEF void mgopt_rw_replace_op(mgopt_rewriter *rw, mgopt_op *op, mgopt_value *const *vals) {
  int32_t i;
  for (i = 0; i < op->nouts; i++)
    if (vals[i] && vals[i] != op->outs[i]) mgopt_rw_replace_value(rw, op->outs[i], vals[i]);
  for (i = 0; i < op->nouts; i++)
    if (op->outs[i]->nuses) return; /* an output could not be replaced: keep the op */
  mgopt_rw_erase(rw, op);
}

MGOPTDEF mgopt_status mgopt_rw_set_operand(mgopt_rewriter *rw, mgopt_op *op, const char *slot, mgopt_value *v) {
  mgopt_value *old = mgopt_op_operand(op, slot);
  mgopt_status s = mgopt_op_set_operand(op, slot, v);
  if (s != MGOPT_OK) rw->oom = 1;
  if (old && old->def) mgopt__rw_push(rw, old->def);
  mgopt__rw_push(rw, op);
  return s;
}

MGOPTDEF void mgopt_rw_modified(mgopt_rewriter *rw, mgopt_op *op) {
  int32_t i;
  mgopt__rw_push(rw, op);
  for (i = 0; i < op->nouts; i++) mgopt__rw_push_users(rw, op->outs[i]);
}

MGOPTDEF mgopt_op *mgopt_rw_create(mgopt_rewriter *rw, mgopt_op *pos, const char *type,
                                   const char *name, int32_t nslots, const char *const *slot_names,
                                   mgopt_value *const *vals, int32_t nouts) {
  mgopt_op *op;
  int32_t i;
  if (!name) name = mgopt_program_fresh_name(rw->p, type);
  op = mgopt_build_op(rw->p, pos->parent, pos, type, name, nslots, slot_names, vals, nouts);
  if (!op) {
    rw->oom = 1;
    return NULL;
  }
  for (i = 1; i < nouts; i++) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.40s_%d", name, (int)i);
    if (mgopt_value_set_name(op->outs[i], buf) != MGOPT_OK) rw->oom = 1;
  }
  mgopt__rw_push(rw, op);
  return op;
}

MGOPTDEF mgopt_value *mgopt_rw_const(mgopt_rewriter *rw, mgopt_op *pos, const char *name, mgopt_tensor *t) {
  mgopt_value *v = mgopt_build_const(rw->p, pos->parent, pos, name, t);
  if (!v) {
    rw->oom = 1;
    return NULL;
  }
  mgopt__rw_push(rw, v->def);
  return v;
}

/* ---------------------------------------------------------------- the driver */

MGOPT__PRIVATE int mgopt__op_has_effects(const mgopt_op *op) {
  if (op->flags & MGOPT_OP_HAS_EFFECTS) return 1;
  return op->kind != MGOPT_OP_OPAQUE && !(mgopt_op_traits(op) & MGOPT_TRAIT_PURE);
}

/* 1 when an op in the blocks of op (at any depth) has effects, or they nest
   too deeply to tell. */
static int mgopt__rw_blocks_have_effects(const mgopt_op *op, int depth) {
  int32_t i;
  const mgopt_op *o;
  if (depth > 256) return 1;
  for (i = 0; i < op->nblocks; i++)
    for (o = op->blocks[i]->first; o; o = o->next)
      if (mgopt__op_has_effects(o) || (o->nblocks && mgopt__rw_blocks_have_effects(o, depth + 1))) return 1;
  return 0;
}

MGOPT__PRIVATE int mgopt__op_is_dead(const mgopt_op *op) {
  int32_t i;
  if (op->nouts == 0) return 0;
  for (i = 0; i < op->nouts; i++)
    if (op->outs[i]->nuses) return 0;
  return !mgopt__op_has_effects(op) && !(op->nblocks && mgopt__rw_blocks_have_effects(op, 0));
}

static int mgopt__index_dead_fn(const mgopt_op *op, void *ud) {
  (void)ud;
  return mgopt__op_is_dead(op);
}

MGOPT__PRIVATE int mgopt__index_has_dead(mgopt_function *f) {
  return mgopt__index_any(f, -1, mgopt__index_dead_fn, NULL);
}

/* 0 when mgopt__rw_try_fold surely declines op, whatever the kernel: the op
   kinds and shapes it never folds, and an operand not made by a const op.
   mgopt__rw_try_fold starts with this test. */
static int mgopt__rw_may_fold(const mgopt_op *op) {
  int32_t s, k;
  if (op->kind == MGOPT_OP_const || op->kind == MGOPT_OP_OPAQUE || op->nblocks || op->nouts == 0 || op->nouts > 16)
    return 0;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      const mgopt_value *v = op->slots[s].uses[k].value;
      if (!v || !v->def || v->def->kind != MGOPT_OP_const) return 0;
    }
  return 1;
}

/* 1 folded, 0 not, -1 OOM */
static int mgopt__rw_try_fold(mgopt_rewriter *rw, mgopt_op *op) {
  const mgopt_rewrite_config *cfg = rw->cfg;
  mgopt_tensor *outs[16];
  mgopt_value *vals[16];
  int32_t s, k, i;
  int r;
  if (!cfg->fold || !mgopt__rw_may_fold(op)) return 0;
  /* every operand is a const op's output (mgopt__rw_may_fold): it must also hold its tensor */
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++)
      if (!mgopt_value_const(op->slots[s].uses[k].value)) return 0;
  if (cfg->fold_max_elements > 0)
    for (i = 0; i < op->nouts; i++) {
      int64_t n = mgopt_type_numel(&op->outs[i]->type);
      if (n > cfg->fold_max_elements) return 0;
    }
  memset(outs, 0, sizeof outs);
  r = cfg->fold(rw->p, op, outs, cfg->fold_ud);
  if (r <= 0) return r;
  for (i = 0; i < op->nouts; i++) {
    if (!outs[i]) return 0;
    if (cfg->fold_max_elements > 0 && outs[i]->numel > cfg->fold_max_elements) return 0;
  }
  for (i = 0; i < op->nouts; i++) {
    /* the constant takes the output's name, so graph outputs keep theirs */
    vals[i] = mgopt_build_const(rw->p, op->parent, op, op->outs[i]->name, outs[i]);
    if (!vals[i]) return -1;
    mgopt__rw_push(rw, vals[i]->def);
  }
  for (i = 0; i < op->nouts; i++) mgopt_rw_replace_value(rw, op->outs[i], vals[i]);
  mgopt_rw_erase(rw, op);
  if (rw->stats) rw->stats->folds++;
  return 1;
}

static int mgopt__rw_pat_before(const mgopt_pattern *a, const mgopt_pattern *b) {
  if (a->root_kind != b->root_kind) return a->root_kind < b->root_kind;
  if (a->benefit != b->benefit) return a->benefit > b->benefit;
  return strcmp(a->name ? a->name : "", b->name ? b->name : "") < 0;
}

static mgopt_status mgopt__rw_index(mgopt_rewriter *rw) {
  const mgopt_allocator *al = &rw->p->alloc;
  int32_t i, j, n = rw->npats;
  rw->order = (int32_t *)mgopt__heap_realloc(al, NULL, 0, sizeof(int32_t) * (size_t)(n + 1));
  rw->start = (int32_t *)mgopt__heap_realloc(al, NULL, 0, sizeof(int32_t) * (MGOPT_OP__COUNT + 2));
  rw->hits = (int64_t *)mgopt__heap_realloc(al, NULL, 0, sizeof(int64_t) * (size_t)(n + 1));
  if (!rw->order || !rw->start || !rw->hits) return MGOPT_ERR_NOMEM;
  memset(rw->hits, 0, sizeof(int64_t) * (size_t)(n + 1));
  for (i = 0; i < n; i++) {
    if (rw->pats[i].root_kind < -1 || rw->pats[i].root_kind >= MGOPT_OP__COUNT || !rw->pats[i].fn)
      return MGOPT_ERR_INVALID_ARG;
    rw->order[i] = i;
  }
  /* insertion sort: pattern sets are small */
  for (i = 1; i < n; i++) {
    int32_t x = rw->order[i];
    for (j = i; j > 0 && mgopt__rw_pat_before(&rw->pats[x], &rw->pats[rw->order[j - 1]]); j--)
      rw->order[j] = rw->order[j - 1];
    rw->order[j] = x;
  }
  rw->nany = 0;
  while (rw->nany < n && rw->pats[rw->order[rw->nany]].root_kind == -1) rw->nany++;
  j = rw->nany;
  for (i = 0; i <= MGOPT_OP__COUNT; i++) {
    while (j < n && rw->pats[rw->order[j]].root_kind < i) j++;
    rw->start[i] = j;
  }
  rw->start[MGOPT_OP__COUNT + 1] = n;
  return MGOPT_OK;
}

static int mgopt__rw_collect(mgopt_op *op, void *ud) {
  mgopt__rw_push((mgopt_rewriter *)ud, op);
  return 0;
}

/* Runs pattern `pi` on op; 1 if it changed the IR. */
static int mgopt__rw_apply(mgopt_rewriter *rw, int32_t pi, mgopt_op *op) {
  const mgopt_pattern *pt = &rw->pats[pi];
  if (pt->root_type && strcmp(pt->root_type, op->type) != 0) return 0;
  if (!pt->fn(rw, op, pt->ud)) return 0;
  rw->hits[pi]++;
  if (rw->stats) {
    rw->stats->rewrites++;
    if (rw->stats->per_pattern && pi < rw->stats->npatterns) rw->stats->per_pattern[pi]++;
  }
  return 1;
}

static mgopt_status mgopt__rw_cap_diag(mgopt_rewriter *rw, int64_t cap) {
  char names[MGOPT_DIAG_MSG_MAX];
  size_t len = 0;
  int32_t shown = 0;
  names[0] = 0;
  while (shown < 3) {
    int32_t i, best = -1;
    for (i = 0; i < rw->npats; i++)
      if (rw->hits[i] > 0 && (best < 0 || rw->hits[i] > rw->hits[best])) best = i;
    if (best < 0) break;
    len += (size_t)snprintf(names + len, sizeof names - len, "%s%s (%lld)", shown ? ", " : "",
                            rw->pats[best].name ? rw->pats[best].name : "?", (long long)rw->hits[best]);
    if (len >= sizeof names) len = sizeof names - 1;
    rw->hits[best] = -rw->hits[best];
    shown++;
  }
  return mgopt_diag_set(rw->d, MGOPT_ERR_NO_FIXPOINT,
                        "rewrite cap of %lld reached before a fixpoint; patterns that kept firing: %s",
                        (long long)cap, shown ? names : "(folding and erasure only)");
}

/* Queues the ops of the patterns' root kinds from the index (1), or returns 0
   when every op must be queued (folding, dead-op erasure, a shuffled order,
   a pattern for any op, or an incomplete index). */
static int mgopt__rw_seed_roots(mgopt_rewriter *rw, mgopt_function *f) {
  const mgopt_rewrite_config *cfg = rw->cfg;
  int32_t kinds[MGOPT_OP__COUNT], nk = 0, i;
  int64_t n;
  if (cfg->fold || !cfg->keep_dead || cfg->shuffle_seed || rw->nany) return 0;
  for (i = 0; i < MGOPT_OP__COUNT; i++)
    if (rw->start[i] < rw->start[i + 1]) kinds[nk++] = i;
  n = mgopt__index_collect(f, kinds, nk, &rw->q, &rw->qcap);
  if (n < 0) return 0;
  for (rw->nq = 0; rw->nq < n; rw->nq++) rw->q[rw->nq]->flags |= MGOPT__OP_QUEUED;
  return 1;
}

/* 1 if op may fold and has no operand (so no constant's use list shows it). */
static int mgopt__rw_may_fold_bare_fn(const mgopt_op *op, void *ud) {
  int32_t s;
  (void)ud;
  for (s = 0; s < op->nslots; s++)
    if (op->slots[s].n) return 0;
  return mgopt__rw_may_fold(op);
}

/* 1 if a user of const op c may fold. */
static int mgopt__rw_const_user_may_fold_fn(const mgopt_op *c, void *ud) {
  int32_t i;
  const mgopt_use *u;
  (void)ud;
  for (i = 0; i < c->nouts; i++)
    for (u = c->outs[i]->uses; u; u = u->next)
      if (u->op && mgopt__rw_may_fold(u->op)) return 1;
  return 0;
}

/* 1 when every well-formed op of this kind has an operand: a slot that is
   neither optional nor a list (the verifier requires a value there). Such
   ops are users of their operands, so the const-user walk sees them. */
static int mgopt__rw_kind_has_operand(int32_t kind) {
  const mgopt_op_def *def = mgopt_op_def_get(kind);
  int32_t k;
  for (k = 0; def && k < def->nslots; k++)
    if (!(def->slots[k].flags & (MGOPT_SLOT_OPTIONAL | MGOPT_SLOT_VARIADIC))) return 1;
  return 0;
}

/* 1 when popping every op of f would change nothing: no pattern can start
   anywhere, no op is dead (when erasing) and none may fold (when folding).
   Nothing changes before the first change, so the run would end as it began.
   An op with operands may fold only if they are all constants, so it is a
   user of a const op: the users of const ops, and the ops without operands,
   are all that folding needs looked at (of the kinds that may lack
   operands: an op missing a required one is malformed, and at worst stays
   unfolded). 0 when unsure. */
static int mgopt__rw_idle(mgopt_rewriter *rw, mgopt_function *f) {
  const mgopt_rewrite_config *cfg = rw->cfg;
  int32_t i;
  if (cfg->shuffle_seed || rw->nany) return 0;
  for (i = 0; i < MGOPT_OP__COUNT; i++)
    if (rw->start[i] < rw->start[i + 1] && mgopt__index_kind_count(f, i) != 0) return 0;
  if (!cfg->keep_dead && mgopt__index_has_dead(f) != 0) return 0;
  if (cfg->fold) {
    if (mgopt__index_any(f, MGOPT_OP_const, mgopt__rw_const_user_may_fold_fn, NULL) != 0) return 0;
    for (i = 0; i < MGOPT_OP__COUNT; i++)
      if (i != MGOPT_OP_const && i != MGOPT_OP_OPAQUE && !mgopt__rw_kind_has_operand(i) &&
          mgopt__index_any(f, i, mgopt__rw_may_fold_bare_fn, NULL) != 0)
        return 0;
  }
  return 1;
}

static mgopt_status mgopt__rw_run(mgopt_rewriter *rw, mgopt_function *f) {
  const mgopt_rewrite_config *cfg = rw->cfg;
  int64_t done = 0, cap = cfg->max_rewrites;
  mgopt_diag vd;
  if (mgopt__rw_idle(rw, f)) return MGOPT_OK;
  if (!mgopt__rw_seed_roots(rw, f)) mgopt_block_walk(f->body, mgopt__rw_collect, rw);
  /* the queue is a stack: reverse it so ops pop in program order */
  {
    int64_t i;
    for (i = 0; i < rw->nq / 2; i++) {
      mgopt_op *t = rw->q[i];
      rw->q[i] = rw->q[rw->nq - 1 - i];
      rw->q[rw->nq - 1 - i] = t;
    }
  }
  /* the default cap counts every op of the function, queued or not */
  if (cap <= 0) cap = 10 * (mgopt__index_op_count(f) + 100);
  while (rw->nq > 0) {
    mgopt_op *op;
    int changed = 0;
    if (rw->oom) return mgopt_diag_set(rw->d, MGOPT_ERR_NOMEM, "rewriter: out of memory");
    if (cfg->shuffle_seed && rw->nq > 1) {
      int64_t j;
      mgopt_op *t;
      rw->rng ^= rw->rng << 13;
      rw->rng ^= rw->rng >> 7;
      rw->rng ^= rw->rng << 17;
      j = (int64_t)(rw->rng % (uint64_t)rw->nq);
      t = rw->q[j];
      rw->q[j] = rw->q[rw->nq - 1];
      rw->q[rw->nq - 1] = t;
    }
    op = rw->q[--rw->nq];
    /* the ops popped next, and the operand slots of nearer ones: their loads
       overlap with the work on this one */
    if (rw->nq >= MGOPT__RW_AHEAD) MGOPT__PREFETCH(rw->q[rw->nq - MGOPT__RW_AHEAD]);
    if (rw->nq >= MGOPT__RW_AHEAD / 2) MGOPT__PREFETCH(rw->q[rw->nq - MGOPT__RW_AHEAD / 2]->slots);
    op->flags &= ~MGOPT__OP_QUEUED;
    if (op->flags & MGOPT_OP_ERASED) continue;
    if (rw->stats) rw->stats->pops++;
    if (!cfg->keep_dead && mgopt__op_is_dead(op)) {
      mgopt_rw_erase(rw, op);
      changed = 1;
    } else {
      int r = mgopt__rw_try_fold(rw, op);
      if (r < 0) return mgopt_diag_set(rw->d, MGOPT_ERR_NOMEM, "rewriter: out of memory while folding");
      if (r > 0) changed = 1;
      else {
        int32_t i, lo, hi;
        lo = rw->start[op->kind];
        hi = rw->start[op->kind + 1];
        for (i = lo; i < hi && !changed; i++) changed = mgopt__rw_apply(rw, rw->order[i], op);
        for (i = 0; i < rw->nany && !changed; i++) changed = mgopt__rw_apply(rw, rw->order[i], op);
      }
    }
    if (!changed) continue;
    if (rw->p->status) return mgopt_diag_set(rw->d, MGOPT_ERR_NOMEM, "rewriter: out of memory");
    if (cfg->verify_each) {
      mgopt_diag_clear(&vd);
      if (mgopt_program_verify(rw->p, &vd) != MGOPT_OK) {
        if (rw->d) *rw->d = vd;
        return MGOPT_ERR_VERIFY;
      }
    }
    if (++done >= cap) return mgopt__rw_cap_diag(rw, cap);
  }
  return rw->oom ? mgopt_diag_set(rw->d, MGOPT_ERR_NOMEM, "rewriter: out of memory") : MGOPT_OK;
}

static int mgopt__rw_unmark_group(mgopt_op *op, void *ud) {
  (void)ud;
  op->flags &= ~MGOPT__OP_FOLD_GROUP;
  return 0;
}

MGOPT__PRIVATE void mgopt__fold_groups_end(mgopt_program *p) {
  if (!p->fold_groups) return;
  mgopt_program_walk(p, mgopt__rw_unmark_group, NULL);
  p->fold_groups = 0;
}

MGOPTDEF mgopt_status mgopt_rewrite_function(mgopt_program *p, mgopt_function *f,
                                             const mgopt_pattern *patterns, int32_t npatterns,
                                             const mgopt_rewrite_config *cfg,
                                             mgopt_rewrite_stats *stats, mgopt_diag *d) {
  mgopt_rewriter rw;
  mgopt_rewrite_config dflt;
  mgopt_status s;
  const mgopt_allocator *al = &p->alloc;
  mgopt_diag_clear(d);
  if (!f || npatterns < 0 || (npatterns && !patterns))
    return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "rewrite: bad arguments");
  if (!cfg) {
    memset(&dflt, 0, sizeof dflt);
    cfg = &dflt;
  }
  memset(&rw, 0, sizeof rw);
  rw.p = p;
  rw.cfg = cfg;
  rw.stats = stats;
  rw.d = d;
  rw.pats = patterns;
  rw.npats = npatterns;
  rw.rng = cfg->shuffle_seed ? cfg->shuffle_seed : 1;
  s = mgopt__rw_index(&rw);
  if (s == MGOPT_ERR_INVALID_ARG) mgopt_diag_set(d, s, "rewrite: a pattern has no function or a bad root kind");
  else if (s) mgopt_diag_set(d, s, "rewrite: out of memory");
  else s = mgopt__rw_run(&rw, f);
  /* leave no queued flags behind, nor verdicts of groups of folds */
  while (rw.nq > 0) rw.q[--rw.nq]->flags &= ~MGOPT__OP_QUEUED;
  mgopt__fold_groups_end(p);
  if (rw.q) mgopt__heap_free(al, rw.q, (size_t)rw.qcap * sizeof(mgopt_op *));
  if (rw.order) mgopt__heap_free(al, rw.order, sizeof(int32_t) * (size_t)(npatterns + 1));
  if (rw.start) mgopt__heap_free(al, rw.start, sizeof(int32_t) * (MGOPT_OP__COUNT + 2));
  if (rw.hits) mgopt__heap_free(al, rw.hits, sizeof(int64_t) * (size_t)(npatterns + 1));
  if (stats) stats->npatterns = stats->npatterns ? stats->npatterns : npatterns;
  return s;
}

MGOPTDEF mgopt_status mgopt_rewrite_program(mgopt_program *p, const mgopt_pattern *patterns,
                                            int32_t npatterns, const mgopt_rewrite_config *cfg,
                                            mgopt_rewrite_stats *stats, mgopt_diag *d) {
  int32_t i;
  for (i = 0; i < p->nfuncs; i++) {
    mgopt_status s = mgopt_rewrite_function(p, p->funcs[i], patterns, npatterns, cfg, stats, d);
    if (s) return s;
  }
  return MGOPT_OK;
}
