/* src/core/ir.c — functions, blocks, ops and values: building, use lists, mutation, walking. */
#include "../internal.h"

/* ---------------------------------------------------------------- use lists */

MGOPT__PRIVATE void mgopt__use_unlink(mgopt_use *u) {
  mgopt_value *v = u->value;
  if (!v) return;
  if (u->prev) u->prev->next = u->next;
  else v->uses = u->next;
  if (u->next) u->next->prev = u->prev;
  u->prev = u->next = NULL;
  u->value = NULL;
  v->nuses--;
  if (!u->op) v->nblock_uses--;
}

MGOPT__PRIVATE void mgopt__use_link(mgopt_use *u, mgopt_value *v) {
  if (u->value) mgopt__use_unlink(u);
  u->value = v;
  if (!v) return;
  if (u->op && v->nblock_uses) {
    /* block-output uses stay at the head (so finding them costs their
       count, not the value's uses): an op use goes in after them */
    mgopt_use *at = v->uses;
    int32_t k;
    for (k = 1; k < v->nblock_uses; k++) at = at->next;
    u->prev = at;
    u->next = at->next;
    if (at->next) at->next->prev = u;
    at->next = u;
  } else {
    u->prev = NULL;
    u->next = v->uses;
    if (v->uses) v->uses->prev = u;
    v->uses = u;
  }
  v->nuses++;
  if (!u->op) v->nblock_uses++;
}

/* ---------------------------------------------------------------- creation */

MGOPT__PRIVATE mgopt_value *mgopt__value_new(mgopt_program *p, const char *name) {
  mgopt_value *v = (mgopt_value *)mgopt_program_alloc(p, sizeof *v, 8);
  if (!v) return NULL;
  if (name) {
    v->name = mgopt_program_intern_cstr(p, name);
    if (!v->name) return NULL;
  }
  v->type.rank = -1;
  v->id = p->next_id++;
  return v;
}

/* Every mgopt_block is the head of one of these: the array capacities stay
   out of the public struct. */
typedef struct mgopt__block_rec {
  mgopt_block b;
  int32_t args_cap, outs_cap;
} mgopt__block_rec;

MGOPT__PRIVATE mgopt_block *mgopt__block_new(mgopt_program *p, const char *name) {
  mgopt_block *b = (mgopt_block *)mgopt_program_alloc(p, sizeof(mgopt__block_rec), 8);
  if (!b) return NULL;
  b->program = p;
  b->name = mgopt_program_intern_cstr(p, name ? name : "");
  if (!b->name) return NULL;
  return b;
}

static void mgopt__erase_block_contents(mgopt_block *b);

MGOPTDEF int32_t mgopt_program_function_count(const mgopt_program *p) { return p->nfuncs; }

MGOPTDEF mgopt_function *mgopt_program_function_at(const mgopt_program *p, int32_t i) {
  return (i >= 0 && i < p->nfuncs) ? p->funcs[i] : NULL;
}

/* Functions by name: the map is keyed by the interned name, so a name that
   was never interned names no function. */
MGOPTDEF mgopt_function *mgopt_program_function(const mgopt_program *p, const char *name) {
  const char *key;
  const mgopt__map_slot *sl;
  if (!p || !name || !(key = mgopt__intern_lookup(p, name, strlen(name)))) return NULL;
  sl = mgopt__map_find(&p->func_by_name, mgopt__map_ptr_key(key));
  return sl ? (mgopt_function *)sl->v.p : NULL;
}

MGOPTDEF mgopt_function *mgopt_function_new(mgopt_program *p, const char *name) {
  mgopt_function *f;
  mgopt__map_slot *sl;
  if (!name || mgopt_program_function(p, name)) return NULL;
  if (p->nfuncs == p->funcs_cap) {
    int64_t cap = p->funcs_cap;
    void *arr = p->funcs;
    if (!mgopt__grow(&p->alloc, &arr, &cap, p->nfuncs + 1, sizeof(mgopt_function *))) {
      mgopt__oom(p);
      return NULL;
    }
    p->funcs = (mgopt_function **)arr;
    p->funcs_cap = (int32_t)cap;
  }
  f = (mgopt_function *)mgopt_program_alloc(p, sizeof(mgopt__func_rec), 8);
  if (!f) return NULL;
  f->program = p;
  f->name = mgopt_program_intern_cstr(p, name);
  f->body = mgopt__block_new(p, "");
  if (!f->name || !f->body) return NULL;
  f->body->func = f;
  if (!(sl = mgopt__map_get(&p->func_by_name, mgopt__map_ptr_key(f->name), NULL))) {
    mgopt__oom(p);
    return NULL;
  }
  sl->v.p = f;
  p->funcs[p->nfuncs++] = f;
  return f;
}

MGOPT__PRIVATE void mgopt__function_drop(mgopt_function *f) {
  mgopt_program *p = f->program;
  int32_t i, j = 0;
  mgopt__map_slot *sl;
  mgopt__erase_block_contents(f->body);
  mgopt__index_free(f);
  for (i = 0; i < p->nfuncs; i++)
    if (p->funcs[i] != f) p->funcs[j++] = p->funcs[i];
  p->nfuncs = j;
  /* the map has no removal: it is filled again, in the room it has */
  mgopt__map_reset(&p->func_by_name, (size_t)p->nfuncs);
  for (i = 0; i < p->nfuncs; i++)
    if ((sl = mgopt__map_get(&p->func_by_name, mgopt__map_ptr_key(p->funcs[i]->name), NULL)) != NULL)
      sl->v.p = p->funcs[i];
}

MGOPTDEF const mgopt_attr *mgopt_function_attr(const mgopt_function *f, const char *name) {
  int32_t i;
  if (!f || !name) return NULL;
  for (i = 0; i < f->nattrs; i++)
    if (strcmp(f->attrs[i].name, name) == 0) return &f->attrs[i];
  return NULL;
}

MGOPTDEF mgopt_function *mgopt_op_callee(const mgopt_op *op) {
  if (!op || op->kind != MGOPT_OP_OPAQUE || !op->type || !strstr(op->type, "::")) return NULL;
  return mgopt_program_function(op->program, op->type);
}

MGOPTDEF int64_t mgopt_program_op_count(const mgopt_program *p) {
  /* kept up to date by linking, unlinking and erasing: O(1) */
  return p->nlinked;
}

MGOPTDEF void mgopt_program_set_target(mgopt_program *p, mgopt_target_fn accepts, void *ud) {
  p->target = accepts;
  p->target_ud = ud;
}

MGOPTDEF int mgopt_program_target_accepts(const mgopt_program *p, const mgopt_op *op) {
  return !p->target || p->target(p, op, p->target_ud) != 0;
}

/* Grows an arena array of pointers (old contents copied; the old block is
   left in the arena). */
static int mgopt__arena_grow(mgopt_program *p, void **arr, int32_t *cap, int32_t need, size_t elem) {
  int32_t ncap;
  void *na;
  if (need <= *cap) return 1;
  ncap = *cap ? *cap * 2 : 4;
  while (ncap < need) {
    if (ncap > INT32_MAX / 2) return 0;
    ncap *= 2;
  }
  na = mgopt_program_alloc(p, (size_t)ncap * elem, 8);
  if (!na) return 0;
  if (*cap) memcpy(na, *arr, (size_t)*cap * elem);
  *arr = na;
  *cap = ncap;
  return 1;
}

MGOPTDEF mgopt_value *mgopt_block_add_arg(mgopt_block *b, const char *name, const mgopt_type *t) {
  mgopt_program *p = b->program;
  mgopt_value *v;
  void *arr = b->args;
  if (!mgopt__arena_grow(p, &arr, &((mgopt__block_rec *)(void *)b)->args_cap, b->nargs + 1, sizeof(mgopt_value *))) return NULL;
  b->args = (mgopt_value **)arr;
  v = mgopt__value_new(p, name);
  if (!v) return NULL;
  if (t && mgopt__type_copy(p, &v->type, t)) return NULL;
  v->owner = b;
  v->index = b->nargs;
  b->args[b->nargs++] = v;
  return v;
}

MGOPTDEF void mgopt_block_remove_arg(mgopt_block *b, int32_t i) {
  int32_t k;
  MGOPT_ASSERT(i >= 0 && i < b->nargs && b->args[i]->nuses == 0);
  for (k = i; k + 1 < b->nargs; k++) {
    b->args[k] = b->args[k + 1];
    b->args[k]->index = k;
  }
  b->nargs--;
}

MGOPTDEF mgopt_status mgopt_block_add_output(mgopt_block *b, mgopt_value *v) {
  mgopt_program *p = b->program;
  mgopt_use *u;
  void *arr = b->outs;
  if (!mgopt__arena_grow(p, &arr, &((mgopt__block_rec *)(void *)b)->outs_cap, b->nouts + 1, sizeof(mgopt_use *)))
    return MGOPT_ERR_NOMEM;
  b->outs = (mgopt_use **)arr;
  u = (mgopt_use *)mgopt_program_alloc(p, sizeof *u, 8);
  if (!u) return MGOPT_ERR_NOMEM;
  u->block = b;
  u->index = b->nouts;
  u->slot = -1;
  mgopt__use_link(u, v);
  b->outs[b->nouts++] = u;
  return MGOPT_OK;
}

MGOPTDEF void mgopt_block_set_output(mgopt_block *b, int32_t i, mgopt_value *v) {
  MGOPT_ASSERT(i >= 0 && i < b->nouts);
  mgopt__use_link(b->outs[i], v);
}

MGOPTDEF void mgopt_block_remove_output(mgopt_block *b, int32_t i) {
  int32_t k;
  MGOPT_ASSERT(i >= 0 && i < b->nouts);
  mgopt__use_unlink(b->outs[i]);
  for (k = i; k + 1 < b->nouts; k++) {
    b->outs[k] = b->outs[k + 1];
    b->outs[k]->index = k;
  }
  b->nouts--;
}

MGOPTDEF mgopt_op *mgopt_op_new(mgopt_program *p, const char *type, int32_t nouts, int32_t nblocks) {
  mgopt_op *op;
  int32_t i;
  if (nouts < 0 || nblocks < 0) return NULL;
  op = (mgopt_op *)mgopt_program_alloc(p, sizeof(mgopt__op_rec), 8);
  if (!op) return NULL;
  MGOPT__OP_REC(op)->slot = MGOPT__SLOT_OFF;
  op->program = p;
  op->type = mgopt_program_intern_cstr(p, type);
  if (!op->type) return NULL;
  op->kind = mgopt_op_kind_from_name(type, strlen(type));
  op->id = p->next_id++;
  if (nouts) {
    op->outs = (mgopt_value **)mgopt_program_alloc(p, sizeof(mgopt_value *) * (size_t)nouts, 8);
    if (!op->outs) return NULL;
    for (i = 0; i < nouts; i++) {
      mgopt_value *v = mgopt__value_new(p, NULL);
      if (!v) return NULL;
      v->def = op;
      v->index = i;
      op->outs[i] = v;
    }
  }
  op->nouts = nouts;
  if (nblocks) {
    op->blocks = (mgopt_block **)mgopt_program_alloc(p, sizeof(mgopt_block *) * (size_t)nblocks, 8);
    if (!op->blocks) return NULL;
    for (i = 0; i < nblocks; i++) {
      mgopt_block *b = mgopt__block_new(p, "");
      if (!b) return NULL;
      b->parent_op = op;
      op->blocks[i] = b;
    }
  }
  op->nblocks = nblocks;
  return op;
}

static void mgopt__set_func(mgopt_op *op, mgopt_function *f) {
  int32_t i;
  mgopt_op *o;
  for (i = 0; i < op->nblocks; i++) {
    op->blocks[i]->func = f;
    for (o = op->blocks[i]->first; o; o = o->next) mgopt__set_func(o, f);
  }
}

/* ---------------------------------------------------------------- the op index */

/* Labels lie in [1, END); 0 stands for the start of the function. Ops
   appended at the end are GAP apart, so building a program in order never
   relabels. */
#define MGOPT__LABEL_END (1ull << 62)
#define MGOPT__LABEL_GAP (1ull << 32)

static uint64_t mgopt__label(const mgopt_op *op) { return MGOPT__OP_REC(op)->label; }

/* 1 if block b is linked into a function: a function's body, or a block of
   an op that is. */
static int mgopt__block_indexed(const mgopt_block *b) {
  if (b->parent_op) return MGOPT__OP_REC(b->parent_op)->slot != MGOPT__SLOT_OFF;
  return b->func && b->func->body == b;
}

static int32_t mgopt__block_index_in(const mgopt_op *parent, const mgopt_block *b) {
  int32_t i = 0;
  while (i < parent->nblocks && parent->blocks[i] != b) i++;
  return i;
}

/* The last op of op's subtree in pre-order (op itself when its blocks are empty). */
static mgopt_op *mgopt__pre_last(mgopt_op *op) {
  for (;;) {
    int32_t i = op->nblocks - 1;
    while (i >= 0 && !op->blocks[i]->last) i--;
    if (i < 0) return op;
    op = op->blocks[i]->last;
  }
}

/* The op before op in its function's pre-order, or NULL. */
static mgopt_op *mgopt__pre_prev(mgopt_op *op) {
  mgopt_op *up;
  int32_t i;
  if (op->prev) return mgopt__pre_last(op->prev);
  up = op->parent->parent_op;
  if (!up) return NULL;
  for (i = mgopt__block_index_in(up, op->parent) - 1; i >= 0; i--)
    if (up->blocks[i]->last) return mgopt__pre_last(up->blocks[i]->last);
  return up;
}

/* The first op after op and its nested ops in pre-order, or NULL. */
static mgopt_op *mgopt__pre_after(mgopt_op *op) {
  for (;;) {
    mgopt_op *up;
    int32_t i;
    if (op->next) return op->next;
    up = op->parent->parent_op;
    if (!up) return NULL;
    for (i = mgopt__block_index_in(up, op->parent) + 1; i < up->nblocks; i++)
      if (up->blocks[i]->first) return up->blocks[i]->first;
    op = up;
  }
}

static mgopt_op *mgopt__pre_next(mgopt_op *op) {
  int32_t i;
  for (i = 0; i < op->nblocks; i++)
    if (op->blocks[i]->first) return op->blocks[i]->first;
  return mgopt__pre_after(op);
}

/* Makes room for m labels between a and b, neighbours in pre-order (NULL:
   the start or the end of the function): relabels evenly the smallest
   aligned label range around the gap whose ops, with the m new ones, stay
   under a density that falls as the range grows (Bender et al., "Two
   simplified algorithms for maintaining order in a list"), so an insertion
   costs O(log n) amortized. */
static void mgopt__label_open(mgopt_op *a, mgopt_op *b, int64_t m) {
  uint64_t x = a ? mgopt__label(a) : 0, lo = 0, hi = 0, step, lab;
  mgopt_op *lfirst = a, *lcand = a ? mgopt__pre_prev(a) : NULL, *rnext = b, *o;
  int64_t nl = a ? 1 : 0, nr = 0, i;
  double lim = 1.0;
  int k;
  for (k = 1; k <= 62; k++) {
    uint64_t size = 1ull << k;
    lo = x & ~(size - 1);
    hi = lo + size - 1;
    if (hi >= MGOPT__LABEL_END) hi = MGOPT__LABEL_END - 1;
    lim *= 1.5;
    while (lcand && mgopt__label(lcand) >= lo) {
      lfirst = lcand;
      lcand = mgopt__pre_prev(lcand);
      nl++;
    }
    while (rnext && mgopt__label(rnext) <= hi) {
      rnext = mgopt__pre_next(rnext);
      nr++;
    }
    if ((uint64_t)(nl + nr + m) < hi - lo + 1 && ((double)(nl + nr + m) <= lim || k == 62)) break;
  }
  MGOPT_ASSERT(k <= 62); /* 2^62 labels outnumber any program that fits in memory */
  step = (hi - lo + 1) / (uint64_t)(nl + nr + m + 1);
  lab = lo;
  for (o = lfirst, i = 0; i < nl; i++, o = mgopt__pre_next(o)) MGOPT__OP_REC(o)->label = lab += step;
  lab += step * (uint64_t)m;
  for (o = b, i = 0; i < nr; i++, o = mgopt__pre_next(o)) MGOPT__OP_REC(o)->label = lab += step;
}

static int64_t mgopt__subtree_size(const mgopt_op *op) {
  int64_t n = 1;
  int32_t i;
  const mgopt_op *o;
  for (i = 0; i < op->nblocks; i++)
    for (o = op->blocks[i]->first; o; o = o->next) n += mgopt__subtree_size(o);
  return n;
}

static void mgopt__index_add(mgopt__func_rec *fr, mgopt_op *op) {
  mgopt__op_rec *r = MGOPT__OP_REC(op);
  mgopt__kind_list *kl;
  mgopt_program *p = op->program;
  fr->nops++;
  r->slot = MGOPT__SLOT_UNLISTED;
  if (fr->broken) return;
  MGOPT_ASSERT(op->kind >= 0 && op->kind < MGOPT_OP__COUNT);
  if (!fr->kinds) {
    size_t sz = sizeof(mgopt__kind_list) * MGOPT_OP__COUNT;
    fr->kinds = (mgopt__kind_list *)mgopt__heap_realloc(&p->alloc, NULL, 0, sz);
    if (!fr->kinds) {
      fr->broken = 1;
      mgopt__oom(p);
      return;
    }
    memset(fr->kinds, 0, sz);
  }
  kl = &fr->kinds[op->kind];
  if (kl->n == kl->cap) {
    void *arr = kl->ops;
    if (!mgopt__grow(&p->alloc, &arr, &kl->cap, kl->n + 1, sizeof(mgopt_op *))) {
      fr->broken = 1;
      mgopt__oom(p);
      return;
    }
    kl->ops = (mgopt_op **)arr;
  }
  if (kl->n && mgopt__label(kl->ops[kl->n - 1]) > r->label) kl->unsorted = 1;
  r->slot = kl->n;
  kl->ops[kl->n++] = op;
}

/* Labels op's subtree (pre-order, step apart after *lab) and lists it. */
static void mgopt__index_add_tree(mgopt__func_rec *fr, mgopt_op *op, uint64_t *lab, uint64_t step) {
  int32_t i;
  mgopt_op *o;
  MGOPT__OP_REC(op)->label = *lab += step;
  mgopt__index_add(fr, op);
  for (i = 0; i < op->nblocks; i++)
    for (o = op->blocks[i]->first; o; o = o->next) mgopt__index_add_tree(fr, o, lab, step);
}

/* op (with its nested ops) was just linked into a block of fr's function. */
static void mgopt__index_link(mgopt__func_rec *fr, mgopt_op *op) {
  mgopt_op *a = mgopt__pre_prev(op), *b = mgopt__pre_after(op);
  int64_t m = op->nblocks ? mgopt__subtree_size(op) : 1;
  uint64_t lo = a ? mgopt__label(a) : 0, hi = b ? mgopt__label(b) : MGOPT__LABEL_END, step;
  if (hi - lo <= (uint64_t)m) {
    mgopt__label_open(a, b, m);
    lo = a ? mgopt__label(a) : 0;
    hi = b ? mgopt__label(b) : MGOPT__LABEL_END;
  }
  step = (hi - lo) / (uint64_t)(m + 1);
  if (!b && step > MGOPT__LABEL_GAP) step = MGOPT__LABEL_GAP;
  mgopt__index_add_tree(fr, op, &lo, step);
}

/* op (with its nested ops) is about to leave fr's function. */
static void mgopt__index_unlink(mgopt__func_rec *fr, mgopt_op *op) {
  mgopt__op_rec *r = MGOPT__OP_REC(op);
  int32_t i;
  mgopt_op *o;
  if (r->slot >= 0) {
    mgopt__kind_list *kl = &fr->kinds[op->kind];
    kl->ops[r->slot] = NULL;
    if (r->slot == kl->n - 1) {
      kl->n--;
      while (kl->n > 0 && !kl->ops[kl->n - 1]) {
        kl->n--;
        kl->holes--;
      }
    } else
      kl->holes++;
  }
  r->slot = MGOPT__SLOT_OFF;
  fr->nops--;
  for (i = 0; i < op->nblocks; i++)
    for (o = op->blocks[i]->first; o; o = o->next) mgopt__index_unlink(fr, o);
}

static int mgopt__label_cmp(const void *a, const void *b) {
  uint64_t x = mgopt__label(*(mgopt_op *const *)a), y = mgopt__label(*(mgopt_op *const *)b);
  return x < y ? -1 : x > y;
}

/* Drops the holes of a list and sorts it by label. */
static void mgopt__index_tidy(mgopt__kind_list *kl) {
  int64_t i, j = 0;
  if (!kl->holes && !kl->unsorted) return;
  for (i = 0; i < kl->n; i++)
    if (kl->ops[i]) kl->ops[j++] = kl->ops[i];
  kl->n = j;
  kl->holes = 0;
  if (kl->unsorted) qsort(kl->ops, (size_t)kl->n, sizeof(mgopt_op *), mgopt__label_cmp);
  kl->unsorted = 0;
  for (i = 0; i < kl->n; i++) MGOPT__OP_REC(kl->ops[i])->slot = i;
}

MGOPT__PRIVATE int64_t mgopt__index_collect(mgopt_function *f, const int32_t *kinds, int32_t nk,
                                            mgopt_op ***out, int64_t *cap) {
  mgopt__func_rec *fr = MGOPT__FUNC_REC(f);
  mgopt_program *p = f->program;
  int64_t total = 0, pos[8], k;
  int32_t i;
  if (fr->broken) return -1;
  if (!fr->kinds) return 0;
  for (i = 0; i < nk; i++) {
    mgopt__index_tidy(&fr->kinds[kinds[i]]);
    total += fr->kinds[kinds[i]].n;
  }
  if (total > *cap) {
    void *arr = *out;
    if (!mgopt__grow(&p->alloc, &arr, cap, total, sizeof(mgopt_op *))) return -1;
    *out = (mgopt_op **)arr;
  }
  if (nk == 1) {
    if (total) memcpy(*out, fr->kinds[kinds[0]].ops, sizeof(mgopt_op *) * (size_t)total);
    return total;
  }
  /* merge by label, up to 8 lists at a time (each pass merges into the result so far) */
  {
    int64_t have = 0;
    int32_t base;
    for (base = 0; base < nk; base += 7) {
      const mgopt__kind_list *ls[8];
      int32_t nl = 0, j;
      mgopt_op **dst = *out;
      int64_t n0 = have, add = 0;
      /* the result so far moves to the top of the array, so the merge can
         write from the bottom without overtaking it */
      for (j = base; j < nk && j < base + 7; j++) {
        ls[nl] = &fr->kinds[kinds[j]];
        add += ls[nl]->n;
        nl++;
      }
      if (n0) memmove(dst + add, dst, sizeof(mgopt_op *) * (size_t)n0);
      for (j = 0; j < nl; j++) pos[j] = 0;
      pos[nl] = 0;
      for (k = 0; k < n0 + add; k++) {
        int32_t best = -1;
        uint64_t bl = 0;
        for (j = 0; j < nl; j++)
          if (pos[j] < ls[j]->n && (best < 0 || mgopt__label(ls[j]->ops[pos[j]]) < bl)) {
            best = j;
            bl = mgopt__label(ls[j]->ops[pos[j]]);
          }
        if (pos[nl] < n0 && (best < 0 || mgopt__label(dst[add + pos[nl]]) < bl)) best = nl;
        dst[k] = best == nl ? dst[add + pos[nl]] : ls[best]->ops[pos[best]];
        pos[best]++;
      }
      have = n0 + add;
    }
  }
  return total;
}

MGOPT__PRIVATE mgopt_op *const *mgopt__index_list(mgopt_function *f, int32_t kind, int64_t *n) {
  mgopt__func_rec *fr = MGOPT__FUNC_REC(f);
  *n = fr->broken ? -1 : 0;
  if (fr->broken || !fr->kinds) return NULL;
  mgopt__index_tidy(&fr->kinds[kind]);
  *n = fr->kinds[kind].n;
  return fr->kinds[kind].ops;
}

MGOPT__PRIVATE int64_t mgopt__index_kind_count(const mgopt_function *f, int32_t kind) {
  const mgopt__func_rec *fr = MGOPT__FUNC_REC(f);
  if (fr->broken) return -1;
  return fr->kinds ? fr->kinds[kind].n - fr->kinds[kind].holes : 0;
}

MGOPT__PRIVATE int64_t mgopt__index_op_count(const mgopt_function *f) {
  return MGOPT__FUNC_REC(f)->nops;
}

/* how many ops ahead mgopt__index_any prefetches */
#define MGOPT__INDEX_AHEAD 16

MGOPT__PRIVATE int mgopt__index_any(mgopt_function *f, int32_t kind, int (*fn)(const mgopt_op *op, void *ud),
                                    void *ud) {
  const mgopt__func_rec *fr = MGOPT__FUNC_REC(f);
  int32_t k, k0 = kind < 0 ? 0 : kind, k1 = kind < 0 ? MGOPT_OP__COUNT : kind + 1;
  int64_t i;
  if (fr->broken) return -1;
  if (!fr->kinds) return 0;
  for (k = k0; k < k1; k++) {
    mgopt_op *const *ops = fr->kinds[k].ops;
    int64_t n = fr->kinds[k].n;
    for (i = 0; i < n; i++) {
      int r;
      if (i + MGOPT__INDEX_AHEAD < n && ops[i + MGOPT__INDEX_AHEAD]) MGOPT__PREFETCH(ops[i + MGOPT__INDEX_AHEAD]);
      if (!ops[i]) continue;
      r = fn(ops[i], ud);
      if (r) return r;
    }
  }
  return 0;
}

MGOPT__PRIVATE void mgopt__index_free(mgopt_function *f) {
  mgopt__func_rec *fr = MGOPT__FUNC_REC(f);
  int32_t i;
  if (!fr->kinds) return;
  for (i = 0; i < MGOPT_OP__COUNT; i++)
    if (fr->kinds[i].ops)
      mgopt__heap_free(&f->program->alloc, fr->kinds[i].ops, sizeof(mgopt_op *) * (size_t)fr->kinds[i].cap);
  mgopt__heap_free(&f->program->alloc, fr->kinds, sizeof(mgopt__kind_list) * MGOPT_OP__COUNT);
  fr->kinds = NULL;
}

static void mgopt__link_before(mgopt_op *op, mgopt_block *b, mgopt_op *pos) {
  op->parent = b;
  op->next = pos;
  op->prev = pos ? pos->prev : b->last;
  if (op->prev) op->prev->next = op;
  else b->first = op;
  if (pos) pos->prev = op;
  else b->last = op;
  b->nops++;
  b->program->nlinked++;
  if (op->nblocks) mgopt__set_func(op, b->func);
  if (mgopt__block_indexed(b)) mgopt__index_link(MGOPT__FUNC_REC(b->func), op);
}

static void mgopt__unlink(mgopt_op *op) {
  mgopt_block *b = op->parent;
  if (!b) return;
  if (MGOPT__OP_REC(op)->slot != MGOPT__SLOT_OFF) mgopt__index_unlink(MGOPT__FUNC_REC(b->func), op);
  if (op->prev) op->prev->next = op->next;
  else b->first = op->next;
  if (op->next) op->next->prev = op->prev;
  else b->last = op->prev;
  b->nops--;
  b->program->nlinked--;
  op->prev = op->next = NULL;
  op->parent = NULL;
}

MGOPTDEF void mgopt_op_insert_before(mgopt_op *op, mgopt_op *pos) {
  MGOPT_ASSERT(!op->parent && pos && pos->parent);
  mgopt__link_before(op, pos->parent, pos);
}

MGOPTDEF void mgopt_op_insert_after(mgopt_op *op, mgopt_op *pos) {
  MGOPT_ASSERT(!op->parent && pos && pos->parent);
  mgopt__link_before(op, pos->parent, pos->next);
}

MGOPTDEF void mgopt_op_append(mgopt_op *op, mgopt_block *b) {
  MGOPT_ASSERT(!op->parent);
  mgopt__link_before(op, b, NULL);
}

MGOPTDEF void mgopt_op_move_before(mgopt_op *op, mgopt_op *pos) {
  if (op == pos) return;
  mgopt__unlink(op);
  mgopt__link_before(op, pos->parent, pos);
}

MGOPTDEF void mgopt_op_move_to_end(mgopt_op *op, mgopt_block *b) {
  mgopt__unlink(op);
  mgopt__link_before(op, b, NULL);
}

static void mgopt__drop_operands(mgopt_op *op) {
  int32_t s, k;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) mgopt__use_unlink(&op->slots[s].uses[k]);
}

static void mgopt__erase_block_contents(mgopt_block *b) {
  mgopt_op *o, *prev;
  int32_t i;
  for (i = 0; i < b->nouts; i++) mgopt__use_unlink(b->outs[i]);
  /* erase back to front so uses inside the block disappear before their defs */
  for (o = b->last; o; o = prev) {
    int32_t k;
    prev = o->prev;
    mgopt__drop_operands(o);
    for (k = 0; k < o->nblocks; k++) mgopt__erase_block_contents(o->blocks[k]);
    if (!(o->flags & MGOPT_OP_ERASED)) b->program->nlinked--;
    o->flags |= MGOPT_OP_ERASED;
  }
}

MGOPTDEF void mgopt_op_erase(mgopt_op *op) {
  int32_t k;
  for (k = 0; k < op->nblocks; k++) mgopt__erase_block_contents(op->blocks[k]);
  mgopt__drop_operands(op);
  mgopt__unlink(op);
  op->flags |= MGOPT_OP_ERASED;
}

MGOPTDEF mgopt_status mgopt_op_set_name(mgopt_op *op, const char *name) {
  const char *n = name ? mgopt_program_intern_cstr(op->program, name) : NULL;
  if (name && !n) return MGOPT_ERR_NOMEM;
  op->name = n;
  return MGOPT_OK;
}

static mgopt_program *mgopt__value_program(const mgopt_value *v) {
  return v->def ? v->def->program : v->owner->program;
}

MGOPTDEF mgopt_status mgopt_value_set_name(mgopt_value *v, const char *name) {
  const char *n = name ? mgopt_program_intern_cstr(mgopt__value_program(v), name) : NULL;
  if (name && !n) return MGOPT_ERR_NOMEM;
  v->name = n;
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- operands */

MGOPTDEF int32_t mgopt_op_slot_index(const mgopt_op *op, const char *slot) {
  int32_t i;
  for (i = 0; i < op->nslots; i++)
    if (strcmp(op->slots[i].name, slot) == 0) return i;
  return -1;
}

static int32_t mgopt__slot_get_or_add(mgopt_op *op, const char *slot) {
  int32_t i = mgopt_op_slot_index(op, slot);
  mgopt_slot *ns;
  if (i >= 0) return i;
  ns = (mgopt_slot *)mgopt_program_alloc(op->program, sizeof(mgopt_slot) * (size_t)(op->nslots + 1), 8);
  if (!ns) return -1;
  if (op->nslots) {
    /* uses hold their slot index, not pointers to slots, so moving the array is safe */
    memcpy(ns, op->slots, sizeof(mgopt_slot) * (size_t)op->nslots);
  }
  ns[op->nslots].name = mgopt_program_intern_cstr(op->program, slot);
  if (!ns[op->nslots].name) return -1;
  op->slots = ns;
  return op->nslots++;
}

MGOPTDEF mgopt_status mgopt_op_set_operand_list(mgopt_op *op, const char *slot,
                                                mgopt_value *const *vs, int32_t n) {
  int32_t si = mgopt__slot_get_or_add(op, slot), k;
  mgopt_slot *s;
  if (si < 0) return mgopt__oom(op->program);
  s = &op->slots[si];
  for (k = 0; k < s->n; k++) mgopt__use_unlink(&s->uses[k]);
  s->is_list = 1;
  s->n = 0;
  if (n > 0) {
    mgopt_use *u = (mgopt_use *)mgopt_program_alloc(op->program, sizeof(mgopt_use) * (size_t)n, 8);
    if (!u) return mgopt__oom(op->program);
    s->uses = u;
    for (k = 0; k < n; k++) {
      u[k].op = op;
      u[k].slot = si;
      u[k].index = k;
      mgopt__use_link(&u[k], vs[k]);
    }
  }
  s->n = n;
  return MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_op_set_operand(mgopt_op *op, const char *slot, mgopt_value *v) {
  int32_t si = mgopt__slot_get_or_add(op, slot);
  mgopt_slot *s;
  if (si < 0) return mgopt__oom(op->program);
  s = &op->slots[si];
  if (!s->is_list && s->n == 1) {
    if (v) mgopt__use_link(&s->uses[0], v);
    else {
      mgopt__use_unlink(&s->uses[0]);
      s->n = 0;
    }
    return MGOPT_OK;
  }
  {
    int32_t k;
    for (k = 0; k < s->n; k++) mgopt__use_unlink(&s->uses[k]);
  }
  s->is_list = 0;
  s->n = 0;
  if (!v) return MGOPT_OK;
  if (!s->uses) {
    s->uses = (mgopt_use *)mgopt_program_alloc(op->program, sizeof(mgopt_use), 8);
    if (!s->uses) return mgopt__oom(op->program);
  }
  s->uses[0].op = op;
  s->uses[0].slot = si;
  s->uses[0].index = 0;
  s->uses[0].value = NULL;
  mgopt__use_link(&s->uses[0], v);
  s->n = 1;
  return MGOPT_OK;
}

MGOPTDEF void mgopt_op_set_operand_at(mgopt_op *op, int32_t slot_index, int32_t index, mgopt_value *v) {
  MGOPT_ASSERT(slot_index >= 0 && slot_index < op->nslots);
  MGOPT_ASSERT(index >= 0 && index < op->slots[slot_index].n && v);
  mgopt__use_link(&op->slots[slot_index].uses[index], v);
}

MGOPTDEF mgopt_value *mgopt_op_operand(const mgopt_op *op, const char *slot) {
  int32_t i = mgopt_op_slot_index(op, slot);
  if (i < 0 || op->slots[i].is_list || op->slots[i].n != 1) return NULL;
  return op->slots[i].uses[0].value;
}

MGOPTDEF int32_t mgopt_op_operand_count(const mgopt_op *op) {
  int32_t i, n = 0;
  for (i = 0; i < op->nslots; i++) n += op->slots[i].n;
  return n;
}

/* ---------------------------------------------------------------- attributes */

static int32_t mgopt__attr_index(const mgopt_op *op, const char *name) {
  int32_t i;
  for (i = 0; i < op->nattrs; i++)
    if (strcmp(op->attrs[i].name, name) == 0) return i;
  return -1;
}

MGOPTDEF const mgopt_attr *mgopt_op_attr(const mgopt_op *op, const char *name) {
  int32_t i = mgopt__attr_index(op, name);
  return i < 0 ? NULL : &op->attrs[i];
}

MGOPTDEF void mgopt_op_remove_attr(mgopt_op *op, const char *name) {
  int32_t i = mgopt__attr_index(op, name);
  if (i < 0) return;
  memmove(&op->attrs[i], &op->attrs[i + 1], sizeof(mgopt_attr) * (size_t)(op->nattrs - i - 1));
  op->nattrs--;
}

MGOPTDEF mgopt_status mgopt_op_set_attr(mgopt_op *op, const mgopt_attr *a) {
  mgopt_program *p = op->program;
  mgopt_attr c = *a;
  int32_t i;
  c.name = mgopt_program_intern_cstr(p, a->name);
  if (!c.name) return mgopt__oom(p);
  switch ((mgopt_attr_kind)a->kind) {
    case MGOPT_ATTR_STRING:
      c.u.s.ptr = mgopt__dupz(p, a->u.s.ptr, a->u.s.len);
      if (!c.u.s.ptr) return mgopt__oom(p);
      break;
    case MGOPT_ATTR_BOOLS:
    case MGOPT_ATTR_INTS:
      c.u.ints = (int64_t *)mgopt__dup(p, a->u.ints, sizeof(int64_t) * (size_t)a->n);
      if (!c.u.ints) return mgopt__oom(p);
      break;
    case MGOPT_ATTR_FLOATS:
      c.u.floats = (double *)mgopt__dup(p, a->u.floats, sizeof(double) * (size_t)a->n);
      if (!c.u.floats) return mgopt__oom(p);
      break;
    case MGOPT_ATTR_STRINGS: {
      int64_t k;
      c.u.strs = (mgopt_str *)mgopt_program_alloc(p, sizeof(mgopt_str) * (size_t)(a->n ? a->n : 1), 8);
      if (!c.u.strs) return mgopt__oom(p);
      for (k = 0; k < a->n; k++) {
        char *s = mgopt__dupz(p, a->u.strs[k].ptr, a->u.strs[k].len);
        if (!s) return mgopt__oom(p);
        c.u.strs[k].ptr = s;
        c.u.strs[k].len = a->u.strs[k].len;
      }
      break;
    }
    case MGOPT_ATTR_BYTES:
      c.u.bytes = (const uint8_t *)mgopt__dup(p, a->u.bytes, (size_t)a->n);
      if (!c.u.bytes) return mgopt__oom(p);
      break;
    default: /* scalars by value; tensors by reference (they live in the same arena) */
      break;
  }
  i = mgopt__attr_index(op, c.name);
  if (i < 0) {
    mgopt_attr *na = (mgopt_attr *)mgopt_program_alloc(p, sizeof(mgopt_attr) * (size_t)(op->nattrs + 1), 8);
    if (!na) return mgopt__oom(p);
    if (op->nattrs) memcpy(na, op->attrs, sizeof(mgopt_attr) * (size_t)op->nattrs);
    op->attrs = na;
    i = op->nattrs++;
  }
  op->attrs[i] = c;
  return MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_op_set_bool(mgopt_op *op, const char *name, int v) {
  mgopt_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = MGOPT_ATTR_BOOL;
  a.u.i = v != 0;
  return mgopt_op_set_attr(op, &a);
}

MGOPTDEF mgopt_status mgopt_op_set_int(mgopt_op *op, const char *name, int64_t v) {
  mgopt_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = MGOPT_ATTR_INT;
  a.u.i = v;
  return mgopt_op_set_attr(op, &a);
}

MGOPTDEF mgopt_status mgopt_op_set_float(mgopt_op *op, const char *name, double v) {
  mgopt_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = MGOPT_ATTR_FLOAT;
  a.u.f = v;
  return mgopt_op_set_attr(op, &a);
}

MGOPTDEF mgopt_status mgopt_op_set_string(mgopt_op *op, const char *name, const char *v) {
  mgopt_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = MGOPT_ATTR_STRING;
  a.u.s.ptr = v;
  a.u.s.len = strlen(v);
  return mgopt_op_set_attr(op, &a);
}

MGOPTDEF mgopt_status mgopt_op_set_ints(mgopt_op *op, const char *name, const int64_t *v, int64_t n) {
  mgopt_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = MGOPT_ATTR_INTS;
  a.n = n;
  a.u.ints = (int64_t *)(uintptr_t)v;
  return mgopt_op_set_attr(op, &a);
}

MGOPTDEF mgopt_status mgopt_op_set_floats(mgopt_op *op, const char *name, const double *v, int64_t n) {
  mgopt_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = MGOPT_ATTR_FLOATS;
  a.n = n;
  a.u.floats = (double *)(uintptr_t)v;
  return mgopt_op_set_attr(op, &a);
}

MGOPTDEF mgopt_status mgopt_op_set_tensor(mgopt_op *op, const char *name, mgopt_tensor *t) {
  mgopt_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = MGOPT_ATTR_TENSOR;
  a.u.t = t;
  return mgopt_op_set_attr(op, &a);
}

/* A registry default parsed from its literal text: only scalars are needed here. */
static int mgopt__default_scalar(const mgopt_op *op, const char *name, double *f, int64_t *i,
                                 const char **s, size_t *slen) {
  const mgopt_attr_def *ad = mgopt__attr_def(op->kind, name);
  const char *d;
  if (!ad || !ad->deflt) return 0;
  d = ad->deflt;
  if (strcmp(d, "true") == 0) {
    *i = 1;
    *f = 1;
    return 1;
  }
  if (strcmp(d, "false") == 0) {
    *i = 0;
    *f = 0;
    return 1;
  }
  if (d[0] == '"') {
    size_t n = strlen(d);
    if (n < 2) return 0;
    *s = d + 1;
    *slen = n - 2;
    return 2;
  }
  *f = strtod(d, NULL);
  *i = strtoll(d, NULL, 10);
  return 1;
}

/* A parameter given as a constant operand instead of an attribute (MIL lets
   either form appear): the const tensor in slot `name`, else NULL. */
static const mgopt_tensor *mgopt__param_const(const mgopt_op *op, const char *name) {
  mgopt_value *v = mgopt_op_operand(op, name);
  return v ? mgopt_value_const(v) : NULL;
}

MGOPTDEF int64_t mgopt_op_get_int(const mgopt_op *op, const char *name, int64_t dflt) {
  const mgopt_attr *a = mgopt_op_attr(op, name);
  const mgopt_tensor *ct = a ? NULL : mgopt__param_const(op, name);
  double f;
  int64_t i;
  const char *s;
  size_t sl;
  if (a) {
    if (a->kind == MGOPT_ATTR_INT || a->kind == MGOPT_ATTR_BOOL) return a->u.i;
    if (a->kind == MGOPT_ATTR_FLOAT) {
      /* out of range or NaN: the default (a cast would be undefined) */
      if (!(a->u.f > -9.2233720368547758e18 && a->u.f < 9.2233720368547758e18)) return dflt;
      return (int64_t)a->u.f;
    }
    if (a->kind == MGOPT_ATTR_TENSOR && a->u.t->numel == 1 && a->u.t->dtype != MGOPT_DT_STRING)
      return mgopt_tensor_get_i64(a->u.t, 0);
    return dflt;
  }
  if (ct && ct->numel == 1 && ct->dtype != MGOPT_DT_STRING) return mgopt_tensor_get_i64(ct, 0);
  if (mgopt__default_scalar(op, name, &f, &i, &s, &sl) == 1) return i;
  return dflt;
}

MGOPTDEF double mgopt_op_get_float(const mgopt_op *op, const char *name, double dflt) {
  const mgopt_attr *a = mgopt_op_attr(op, name);
  const mgopt_tensor *ct = a ? NULL : mgopt__param_const(op, name);
  double f;
  int64_t i;
  const char *s;
  size_t sl;
  if (a) {
    if (a->kind == MGOPT_ATTR_FLOAT) return a->u.f;
    if (a->kind == MGOPT_ATTR_INT || a->kind == MGOPT_ATTR_BOOL) return (double)a->u.i;
    if (a->kind == MGOPT_ATTR_TENSOR && a->u.t->numel == 1 && a->u.t->dtype != MGOPT_DT_STRING)
      return mgopt_tensor_get_f64(a->u.t, 0);
    return dflt;
  }
  if (ct && ct->numel == 1 && ct->dtype != MGOPT_DT_STRING) return mgopt_tensor_get_f64(ct, 0);
  if (mgopt__default_scalar(op, name, &f, &i, &s, &sl) == 1) return f;
  return dflt;
}

MGOPTDEF int mgopt_op_get_bool(const mgopt_op *op, const char *name, int dflt) {
  return mgopt_op_get_int(op, name, dflt) != 0;
}

MGOPTDEF const char *mgopt_op_get_string(const mgopt_op *op, const char *name, size_t *len) {
  const mgopt_attr *a = mgopt_op_attr(op, name);
  double f;
  int64_t i;
  const char *s = NULL;
  size_t sl = 0;
  const mgopt_tensor *ct = a ? NULL : mgopt__param_const(op, name);
  if (a) {
    if (a->kind != MGOPT_ATTR_STRING) return NULL;
    if (len) *len = a->u.s.len;
    return a->u.s.ptr;
  }
  if (ct && ct->dtype == MGOPT_DT_STRING && ct->numel == 1) {
    const mgopt_str *str = (const mgopt_str *)ct->data;
    const char *c = mgopt_program_intern(op->program, str->ptr, str->len);
    if (c && len) *len = str->len;
    return c;
  }
  if (mgopt__default_scalar(op, name, &f, &i, &s, &sl) == 2) {
    /* defaults live in static tables: intern to get a NUL-terminated copy */
    const char *c = mgopt_program_intern(op->program, s, sl);
    if (c && len) *len = sl;
    return c;
  }
  return NULL;
}

static int64_t mgopt__tensor_ints(mgopt_program *p, const mgopt_tensor *t, const int64_t **out) {
  int64_t k, n = t->numel;
  int64_t *v;
  if (t->rank > 1 || !(mgopt_dtype_is_int((mgopt_dtype)t->dtype) || t->dtype == MGOPT_DT_BOOL)) return -1;
  v = (int64_t *)mgopt_program_alloc(p, sizeof(int64_t) * (size_t)(n ? n : 1), 8);
  if (!v) return -1;
  for (k = 0; k < n; k++) v[k] = mgopt_tensor_get_i64(t, k);
  *out = v;
  return n;
}

MGOPTDEF int64_t mgopt_op_get_ints(mgopt_program *p, const mgopt_op *op, const char *name,
                                   const int64_t **out) {
  const mgopt_attr *a = mgopt_op_attr(op, name);
  if (!a) {
    const mgopt_tensor *ct = mgopt__param_const(op, name);
    return ct ? mgopt__tensor_ints(p, ct, out) : -1;
  }
  if (a->kind == MGOPT_ATTR_INTS || a->kind == MGOPT_ATTR_BOOLS) {
    *out = a->u.ints;
    return a->n;
  }
  if (a->kind == MGOPT_ATTR_INT) {
    *out = &a->u.i;
    return 1;
  }
  if (a->kind == MGOPT_ATTR_TENSOR) return mgopt__tensor_ints(p, a->u.t, out);
  return -1;
}

/* ---------------------------------------------------------------- values */

/* 1 if v is an output of a function body (not of a nested block). */
static int mgopt__is_function_output(const mgopt_value *v) {
  const mgopt_use *u;
  int32_t k;
  for (u = v->uses, k = 0; u && k < v->nblock_uses; u = u->next, k++) /* block outputs lead */
    if (!u->op && u->block && !u->block->parent_op) return 1;
  return 0;
}

MGOPTDEF void mgopt_value_replace_all_uses(mgopt_value *from, mgopt_value *to) {
  if (from == to) return;
  /* a function output keeps its name: the replacement takes it, unless the
     replacement is an input or already another output (its name must stay) */
  if (to->def && mgopt__is_function_output(from) && !mgopt__is_function_output(to)) to->name = from->name;
  while (from->uses) mgopt__use_link(from->uses, to);
}

/* 1 if block `inner` is b or nested inside b. */
static int mgopt__block_within(const mgopt_block *inner, const mgopt_block *b) {
  while (inner) {
    if (inner == b) return 1;
    inner = inner->parent_op ? inner->parent_op->parent : NULL;
  }
  return 0;
}

MGOPTDEF int32_t mgopt_value_replace_uses_in_scope(mgopt_value *from, mgopt_value *to) {
  mgopt_block *scope = to->def ? to->def->parent : to->owner;
  mgopt_use *u = from->uses, *next;
  int32_t left = 0;
  for (; u; u = next) {
    mgopt_block *where = u->op ? u->op->parent : u->block;
    next = u->next;
    if (scope && mgopt__block_within(where, scope)) mgopt__use_link(u, to);
    else left++;
  }
  return left;
}

MGOPTDEF int mgopt_value_is_block_output(const mgopt_value *v) { return v->nblock_uses > 0; }

MGOPTDEF mgopt_tensor *mgopt_value_const(const mgopt_value *v) {
  const mgopt_attr *a;
  if (!v || !v->def || v->def->kind != MGOPT_OP_const) return NULL;
  a = mgopt_op_attr(v->def, "val");
  return (a && a->kind == MGOPT_ATTR_TENSOR) ? a->u.t : NULL;
}

MGOPT__PRIVATE mgopt_status mgopt__op_infer_types(mgopt_program *p, const mgopt_op *op, mgopt_type *tmp, int32_t ntmp,
                                                 mgopt_type **out, mgopt_diag *d) {
  const mgopt_op_def *def = mgopt_op_def_get(op->kind);
  mgopt_type *t = tmp;
  mgopt_status s;
  *out = NULL;
  if (!def || !def->infer || op->nouts == 0) return MGOPT_OK;
  if (op->nouts > ntmp) {
    t = (mgopt_type *)mgopt_program_alloc(p, sizeof(mgopt_type) * (size_t)op->nouts, 8);
    if (!t) return MGOPT_ERR_NOMEM; /* the arena set the program's sticky status */
  }
  memset(t, 0, sizeof(mgopt_type) * (size_t)op->nouts);
  s = def->infer(p, op, t, d);
  if (s) return s;
  *out = t;
  return MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_op_infer(mgopt_program *p, mgopt_op *op, mgopt_diag *d) {
  mgopt_type tmp[16], *outs;
  mgopt_status s = mgopt__op_infer_types(p, op, tmp, 16, &outs, d);
  int32_t i;
  if (s || !outs) return s;
  for (i = 0; i < op->nouts; i++) op->outs[i]->type = outs[i];
  return MGOPT_OK;
}

MGOPTDEF mgopt_op *mgopt_build_op(mgopt_program *p, mgopt_block *b, mgopt_op *pos,
                                  const char *type, const char *name, int32_t nslots,
                                  const char *const *slot_names, mgopt_value *const *vals,
                                  int32_t nouts) {
  mgopt_op *op = mgopt_op_new(p, type, nouts, 0);
  int32_t i;
  if (!op) return NULL;
  if (name) {
    mgopt_op_set_name(op, name);
    if (nouts == 1) mgopt_value_set_name(op->outs[0], name);
  }
  for (i = 0; i < nslots; i++)
    if (mgopt_op_set_operand(op, slot_names[i], vals[i])) return NULL;
  if (pos) mgopt_op_insert_before(op, pos);
  else mgopt_op_append(op, b);
  return op;
}

MGOPTDEF mgopt_value *mgopt_build_const(mgopt_program *p, mgopt_block *b, mgopt_op *pos,
                                        const char *name, mgopt_tensor *t) {
  mgopt_op *op;
  if (!name) name = mgopt_program_fresh_name(p, "const");
  op = mgopt_build_op(p, b, pos, "const", name, 0, NULL, NULL, 1);
  if (!op || mgopt_op_set_tensor(op, "val", t)) return NULL;
  if (mgopt_type_make_static(p, &op->outs[0]->type, (mgopt_dtype)t->dtype, t->rank, t->shape))
    return NULL;
  return op->outs[0];
}

/* ---------------------------------------------------------------- walking */

MGOPTDEF int mgopt_block_walk(mgopt_block *b, mgopt_op_visit_fn fn, void *ud) {
  mgopt_op *op, *next;
  for (op = b->first; op; op = next) {
    int r;
    int32_t i;
    next = op->next;
    r = fn(op, ud);
    if (r) return r;
    if (op->flags & MGOPT_OP_ERASED) continue;
    for (i = 0; i < op->nblocks; i++) {
      r = mgopt_block_walk(op->blocks[i], fn, ud);
      if (r) return r;
    }
  }
  return 0;
}

MGOPTDEF int mgopt_program_walk(mgopt_program *p, mgopt_op_visit_fn fn, void *ud) {
  int32_t i;
  for (i = 0; i < p->nfuncs; i++) {
    int r = mgopt_block_walk(p->funcs[i]->body, fn, ud);
    if (r) return r;
  }
  return 0;
}
