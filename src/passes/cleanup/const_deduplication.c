/* src/passes/cleanup/const_deduplication.c — common::const_deduplication: merge equal consts and identical constexpr_* ops.

   Spec: mil_graph_passes.txt, "Remove duplicated large constants (tensor with
   100+ elements)"; reference §3.1.

   Before:
     main(%q: (2, 10, fp32), %k: (2, 10, fp32)) {
       %wq: (10, 10, fp32)* = const(val=[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [10, 11, 12, 13, 14, 15, 16, 17, 18, 19], [20, 21, 22, 23, 24, 25, 26, 27, 28, 29], [30, 31, 32, 33, 34, 35, 36, 37, 38, 39], [40, 41, 42, 43, 44, 45, 46, 47, 48, 49], [50, 51, 52, 53, 54, 55, 56, 57, 58, 59], [60, 61, 62, 63, 64, 65, 66, 67, 68, 69], [70, 71, 72, 73, 74, 75, 76, 77, 78, 79], [80, 81, 82, 83, 84, 85, 86, 87, 88, 89], [90, 91, 92, 93, 94, 95, 96, 97, 98, 99]])
       %wk: (10, 10, fp32)* = const(val=[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [10, 11, 12, 13, 14, 15, 16, 17, 18, 19], [20, 21, 22, 23, 24, 25, 26, 27, 28, 29], [30, 31, 32, 33, 34, 35, 36, 37, 38, 39], [40, 41, 42, 43, 44, 45, 46, 47, 48, 49], [50, 51, 52, 53, 54, 55, 56, 57, 58, 59], [60, 61, 62, 63, 64, 65, 66, 67, 68, 69], [70, 71, 72, 73, 74, 75, 76, 77, 78, 79], [80, 81, 82, 83, 84, 85, 86, 87, 88, 89], [90, 91, 92, 93, 94, 95, 96, 97, 98, 99]])
       %eq: (2, 10, fp32) = linear(x=%q, weight=%wq)
       %ek: (2, 10, fp32) = linear(x=%k, weight=%wk)
     } -> (%eq, %ek)
   After:
     main(%q: (2, 10, fp32), %k: (2, 10, fp32)) {
       %wq: (10, 10, fp32)* = const(val=[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [10, 11, 12, 13, 14, 15, 16, 17, 18, 19], [20, 21, 22, 23, 24, 25, 26, 27, 28, 29], [30, 31, 32, 33, 34, 35, 36, 37, 38, 39], [40, 41, 42, 43, 44, 45, 46, 47, 48, 49], [50, 51, 52, 53, 54, 55, 56, 57, 58, 59], [60, 61, 62, 63, 64, 65, 66, 67, 68, 69], [70, 71, 72, 73, 74, 75, 76, 77, 78, 79], [80, 81, 82, 83, 84, 85, 86, 87, 88, 89], [90, 91, 92, 93, 94, 95, 96, 97, 98, 99]])
       %eq: (2, 10, fp32) = linear(x=%q, weight=%wq)
       %ek: (2, 10, fp32) = linear(x=%k, weight=%wq)
     } -> (%eq, %ek)

   Fires on, in program order (nested blocks included):
   - a const with at least `const_threshold` elements (default 100; a scalar
     counts 1) whose dtype, shape and bytes equal an earlier const visible
     from it (same block, or an enclosing block before the nested op): its
     uses take the earlier one and it is erased;
   - a constexpr_* op (no threshold) with the same type, attributes and
     operands as an earlier visible one, operands compared after they were
     deduplicated (same value, or constants with equal contents).
   The earlier op is kept. Consts are keyed by dtype and shape, probed
   (mgopt__tensor_probe: the first and last bytes) only when shapes meet, hashed
   in full only when probes meet, and compared exactly (mgopt_tensor_equal: bitwise, so -0.0 != 0.0), unlike
   MIL's hash of the first 100 elements plus a tolerance.
   Must not fire: a duplicate that is a function output (both names must
   survive: it stays), consts under the threshold, a duplicate constexpr op
   whose declared output types the kept one's do not suit
   (mgopt__pu_replace_fits).
   Sibling scopes (two branches of a cond, a loop's cond and body, nested
   blocks of different ops): neither const can see the other, so the earlier
   one moves up to the innermost block enclosing both, just before the op of
   that block that holds it, and the later one is erased: a model whose
   branches fold the same weights is written with them once (mgopt goes
   further than MIL here; a const has no operands, so moving it outwards keeps
   every use in its scope). Not when either const is a block's output (the
   block would then return an outer value).
   Across functions: an op in one function cannot use a value of another, so
   no op is removed there. Instead equal consts over the threshold that
   remain share one data buffer, both marked borrowed so the first write
   through either copies it (mgopt_tensor_data_mut) and never alters the
   other: memory is held once and writers can detect the sharing by pointer,
   as MIL's shared weight ids do for multifunction models.
   Cost: one walk, a scoped hash table (entries popped when their block
   ends, sized by the candidates the op index counts), O(ops) lookups, and
   nothing at all when the index counts no candidate; a const whose shape
   meets another's is probed, one whose probe meets another's is hashed in
   full, and each match is compared exactly: a weight with a shape of its own
   is never read. */
#include "../../passes_internal.h"

typedef struct mgopt__cdd_entry {
  mgopt_op *op;
  uint64_t hash;
  int64_t next; /* the entry filed before it under the same hash, -1 = none */
} mgopt__cdd_entry;

typedef struct mgopt__cdd {
  mgopt_pass_ctx *ctx;
  mgopt_program *p;
  int64_t threshold;
  mgopt__map by_hash; /* hash -> 1 + index in e of the latest entry filed under it, 0 = none */
  mgopt__cdd_entry *e;
  int64_t ne, ecap;
  mgopt_op **hoist; /* pairs (duplicate, earlier const) in sibling scopes */
  int64_t nhoist, hcap;
} mgopt__cdd;

static uint64_t mgopt__cdd_mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

static int mgopt__cdd_is_constexpr(const mgopt_op *op) {
  return strncmp(op->type, "constexpr_", 10) == 0 && op->nblocks == 0 && op->nouts > 0;
}

static mgopt_tensor *mgopt__cdd_const(const mgopt_op *op) {
  return op->kind == MGOPT_OP_const && op->nouts == 1 ? mgopt_value_const(op->outs[0]) : NULL;
}

static uint64_t mgopt__cdd_value_hash(const mgopt_value *v) {
  mgopt_tensor *t = mgopt_value_const(v);
  return t ? mgopt__cdd_mix(1, mgopt_tensor_hash(t)) : mgopt__cdd_mix(2, v->id);
}

static int mgopt__cdd_value_equal(const mgopt_value *a, const mgopt_value *b) {
  const mgopt_tensor *x, *y;
  if (a == b) return 1;
  x = mgopt_value_const(a);
  y = mgopt_value_const(b);
  return x && y && mgopt_tensor_equal(x, y) && mgopt_type_equal(&a->type, &b->type);
}

/* Order-insensitive over slots and attributes (they may be stored in any order). */
static uint64_t mgopt__cdd_op_hash(const mgopt_op *op) {
  uint64_t h = mgopt__hash_bytes(op->type, strlen(op->type), MGOPT__HASH_SEED), sum;
  int32_t i, k;
  mgopt_tensor *t = mgopt__cdd_const(op);
  if (t) { /* dtype and shape only: the bytes are looked at when another const has them too */
    h = mgopt__hash_bytes(&t->dtype, 1, h);
    h = mgopt__hash_bytes(&t->rank, sizeof t->rank, h);
    return t->rank > 0 ? mgopt__hash_bytes(t->shape, sizeof(int64_t) * (size_t)t->rank, h) : h;
  }
  sum = mgopt__pu_attrs_hash(op);
  for (i = 0; i < op->nslots; i++) {
    uint64_t s;
    if (op->slots[i].n == 0) continue;
    s = mgopt__hash_bytes(op->slots[i].name, strlen(op->slots[i].name), 7);
    for (k = 0; k < op->slots[i].n; k++) s = mgopt__cdd_mix(s, mgopt__cdd_value_hash(op->slots[i].uses[k].value));
    sum += s;
  }
  return mgopt__cdd_mix(mgopt__cdd_mix(h, sum), (uint64_t)op->nouts);
}

static int32_t mgopt__cdd_nonempty_slots(const mgopt_op *op) {
  int32_t i, n = 0;
  for (i = 0; i < op->nslots; i++) n += op->slots[i].n > 0;
  return n;
}

static int mgopt__cdd_op_equal(const mgopt_op *a, const mgopt_op *b) {
  int32_t i, k;
  mgopt_tensor *x, *y;
  if (a->type != b->type || a->nouts != b->nouts || a->nattrs != b->nattrs) return 0;
  for (i = 0; i < a->nouts; i++)
    if (!mgopt_type_equal(&a->outs[i]->type, &b->outs[i]->type)) return 0;
  x = mgopt__cdd_const(a);
  y = mgopt__cdd_const(b);
  if (x || y) return x && y && mgopt_tensor_equal(x, y);
  if (!mgopt__pu_attrs_equal(a, b)) return 0;
  if (mgopt__cdd_nonempty_slots(a) != mgopt__cdd_nonempty_slots(b)) return 0;
  for (i = 0; i < a->nslots; i++) {
    const mgopt_slot *s = &a->slots[i], *o;
    int32_t j;
    if (s->n == 0) continue;
    j = mgopt_op_slot_index(b, s->name);
    if (j < 0) return 0;
    o = &b->slots[j];
    if (o->n != s->n || o->is_list != s->is_list) return 0;
    for (k = 0; k < s->n; k++)
      if (!mgopt__cdd_value_equal(s->uses[k].value, o->uses[k].value)) return 0;
  }
  return 1;
}

static int mgopt__cdd_is_candidate(const mgopt__cdd *c, const mgopt_op *op) {
  mgopt_tensor *t = mgopt__cdd_const(op);
  if (t) return t->numel >= c->threshold;
  return mgopt__cdd_is_constexpr(op);
}

static int mgopt__cdd_any_func_output(const mgopt_op *op) {
  int32_t i;
  for (i = 0; i < op->nouts; i++)
    if (mgopt__pu_is_func_output(op->outs[i])) return 1;
  return 0;
}

/* every output of rep may replace op's (equal tensors; a constexpr op's
   declared output types may still differ) */
static int mgopt__cdd_fits(mgopt__cdd *c, mgopt_op *op, const mgopt_op *rep) {
  int32_t i;
  for (i = 0; i < op->nouts; i++)
    if (!mgopt__pu_replace_fits(c->p, op->outs[i], rep->outs[i])) return 0;
  return 1;
}

static int mgopt__cdd_push(mgopt__cdd *c, mgopt_op *op, uint64_t h) {
  mgopt__cdd_entry *e;
  mgopt__map_slot *sl = mgopt__map_get(&c->by_hash, mgopt__map_hash_key(h), NULL);
  if (!sl) return 0;
  if (c->ne == c->ecap) {
    void *arr = c->e;
    if (!mgopt__grow(&c->p->alloc, &arr, &c->ecap, c->ne + 1, sizeof(mgopt__cdd_entry))) return 0;
    c->e = (mgopt__cdd_entry *)arr;
  }
  e = &c->e[c->ne];
  e->op = op;
  e->hash = h;
  e->next = sl->v.i - 1;
  sl->v.i = ++c->ne;
  return 1;
}

/* Entries are popped in reverse order, so each is the latest under its hash. */
static void mgopt__cdd_pop_to(mgopt__cdd *c, int64_t mark) {
  while (c->ne > mark) {
    mgopt__cdd_entry *e = &c->e[--c->ne];
    mgopt__map_slot *sl = mgopt__map_find(&c->by_hash, mgopt__map_hash_key(e->hash));
    if (sl) sl->v.i = e->next + 1;
  }
}

/* The earlier visible op equal to op, or NULL; *key is what op is filed under
   when it stays. A const is keyed by its dtype and shape first: the bytes of a
   weight whose shape no other const has are never read (in a mapped model
   file, never even paged in). When op meets an unequal const under that key,
   it is filed under a probe of its bytes too (mgopt__tensor_probe: its first and
   last bytes), and when it meets one there, under the full hash as
   well; its equals are looked for at each level on the way. An equal const
   met the same ones, so it is filed at the level op reaches. Look-alikes
   cost one probe or one full hash each, never a comparison with every other. */
static mgopt_op *mgopt__cdd_find(const mgopt__cdd *c, mgopt_op *op, uint64_t *key) {
  uint64_t h = mgopt__cdd_op_hash(op);
  mgopt_tensor *t = mgopt__cdd_const(op);
  int level;
  for (level = 0;; level++) {
    const mgopt__map_slot *sl = mgopt__map_find(&c->by_hash, mgopt__map_hash_key(h));
    int64_t i;
    int met = 0;
    for (i = sl ? sl->v.i - 1 : -1; i >= 0; i = c->e[i].next) {
      if (c->e[i].hash != h) continue; /* hashes 0 and 1 share a key */
      if (mgopt__cdd_op_equal(c->e[i].op, op)) {
        *key = h;
        return c->e[i].op;
      }
      met = 1;
    }
    if (level == 2 || !t || !met) break;
    h = mgopt__cdd_mix(h, level == 0 ? mgopt__tensor_probe(t) : mgopt_tensor_hash(t));
  }
  *key = h;
  return NULL;
}

static mgopt_status mgopt__cdd_block(mgopt__cdd *c, mgopt_block *b, int depth) {
  int64_t mark = c->ne;
  mgopt_op *op, *next;
  if (depth > 256) return mgopt_diag_set(c->ctx->diag, MGOPT_ERR_LIMIT, "blocks nested too deeply");
  for (op = b->first; op; op = next) {
    int32_t i;
    next = op->next;
    if (mgopt__cdd_is_candidate(c, op)) {
      uint64_t h;
      mgopt_op *rep = mgopt__cdd_find(c, op, &h);
      if (rep && !mgopt__cdd_any_func_output(op) && mgopt__cdd_fits(c, op, rep)) {
        for (i = 0; i < op->nouts; i++) mgopt_value_replace_all_uses(op->outs[i], rep->outs[i]);
        mgopt_op_erase(op);
        c->ctx->rewrites++;
        continue;
      }
      if (!rep && !mgopt__cdd_push(c, op, h)) return mgopt_diag_set(c->ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
    }
    for (i = 0; i < op->nblocks; i++) {
      mgopt_status s = mgopt__cdd_block(c, op->blocks[i], depth + 1);
      if (s) return s;
    }
  }
  mgopt__cdd_pop_to(c, mark);
  return MGOPT_OK;
}

/* The innermost block enclosing blocks a and b (either may be it), or NULL
   when they lie in different functions. */
static mgopt_block *mgopt__cdd_common_block(mgopt_block *a, mgopt_block *b) {
  int32_t da = 0, db = 0;
  const mgopt_block *x;
  for (x = a; x->parent_op; x = x->parent_op->parent) da++;
  for (x = b; x->parent_op; x = x->parent_op->parent) db++;
  for (; da > db; da--) a = a->parent_op->parent;
  for (; db > da; db--) b = b->parent_op->parent;
  while (a != b && a->parent_op && b->parent_op) {
    a = a->parent_op->parent;
    b = b->parent_op->parent;
  }
  return a == b ? a : NULL;
}

/* Const ops over the threshold anywhere in the program: a duplicate in a
   sibling scope is filed for hoisting, one in another function shares data. */
static int mgopt__cdd_share_visit(mgopt_op *op, void *ud) {
  mgopt__cdd *c = (mgopt__cdd *)ud;
  mgopt_tensor *t = mgopt__cdd_const(op);
  mgopt_op *rep;
  uint64_t h;
  if (!t || t->numel < c->threshold || t->dtype == MGOPT_DT_STRING || t->nbytes == 0) return 0;
  rep = mgopt__cdd_find(c, op, &h);
  if (!rep) return mgopt__cdd_push(c, op, h) ? 0 : 1;
  if (!mgopt__pu_is_func_output(op->outs[0]) && !mgopt_value_is_block_output(op->outs[0]) &&
      !mgopt_value_is_block_output(rep->outs[0]) && mgopt__cdd_common_block(op->parent, rep->parent)) {
    void *arr = c->hoist;
    if (c->nhoist + 2 > c->hcap && !mgopt__grow(&c->p->alloc, &arr, &c->hcap, c->nhoist + 2, sizeof(mgopt_op *)))
      return 1;
    c->hoist = (mgopt_op **)arr;
    c->hoist[c->nhoist++] = op;
    c->hoist[c->nhoist++] = rep;
    return 0;
  }
  {
    mgopt_tensor *r = mgopt__cdd_const(rep);
    if (r->data != t->data) {
      t->data = r->data;
      t->borrowed = 1;
      r->borrowed = 1;
      c->ctx->rewrites++;
    }
  }
  return 0;
}

/* Moves each filed earlier const up to the block enclosing its duplicate,
   before the op there that holds it (the walk saw it first, so that op comes
   first), and erases the duplicate. */
static void mgopt__cdd_hoist(mgopt__cdd *c) {
  int64_t i;
  for (i = 0; i < c->nhoist; i += 2) {
    mgopt_op *dup = c->hoist[i], *rep = c->hoist[i + 1], *at = rep;
    mgopt_block *b = mgopt__cdd_common_block(dup->parent, rep->parent);
    while (at->parent != b) at = at->parent->parent_op;
    if (at != rep) mgopt_op_move_before(rep, at);
    mgopt_value_replace_all_uses(dup->outs[0], rep->outs[0]);
    mgopt_op_erase(dup);
    c->ctx->rewrites++;
  }
}

static int mgopt__cdd_count(mgopt_op *op, void *ud) {
  MGOPT__UNUSED(op);
  (*(int64_t *)ud)++;
  return 0;
}

/* At least as many as the candidate ops of the program (consts over the
   threshold, constexpr_* ops), from the op index: each function's consts,
   registered constexpr_* ops and opaque ops. A function whose index is
   incomplete counts all its ops. */
static int64_t mgopt__cdd_candidates(mgopt__cdd *c) {
  int64_t total = 0, n, i;
  int32_t f, k;
  for (f = 0; f < mgopt_program_function_count(c->p); f++) {
    mgopt_function *fn = mgopt_program_function_at(c->p, f);
    mgopt_op *const *ops = mgopt__index_list(fn, MGOPT_OP_const, &n);
    if (n < 0) {
      n = 0;
      mgopt_block_walk(fn->body, mgopt__cdd_count, &n);
      total += n;
      continue;
    }
    for (i = 0; i < n; i++)
      if (mgopt__cdd_is_candidate(c, ops[i])) total++;
    for (k = 0; k < MGOPT_OP__COUNT; k++) {
      const mgopt_op_def *def = mgopt_op_def_get(k);
      if (k == MGOPT_OP_OPAQUE || (def && strncmp(def->name, "constexpr_", 10) == 0))
        total += mgopt__index_kind_count(fn, k);
    }
  }
  return total;
}

static mgopt_status mgopt__cdd_run(mgopt_pass_ctx *ctx) {
  mgopt__cdd c;
  mgopt_status s = MGOPT_OK;
  int64_t nops = 0;
  int32_t f;
  memset(&c, 0, sizeof c);
  c.ctx = ctx;
  c.p = ctx->program;
  c.threshold = ctx->opts[0].i < 0 ? 0 : ctx->opts[0].i;
  nops = mgopt__cdd_candidates(&c);
  if (nops == 0) return MGOPT_OK; /* nothing to merge, nothing to share */
  mgopt__map_init_flags(&c.by_hash, &c.p->alloc, MGOPT__MAP_HASHED | MGOPT__MAP_SPARSE);
  if (!mgopt__map_reset(&c.by_hash, (size_t)nops)) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
  for (f = 0; f < mgopt_program_function_count(c.p) && !s; f++)
    s = mgopt__cdd_block(&c, mgopt_program_function_at(c.p, f)->body, 0);
  if (!s) {
    mgopt__cdd_pop_to(&c, 0);
    if (mgopt_program_walk(c.p, mgopt__cdd_share_visit, &c))
      s = mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
    else
      mgopt__cdd_hoist(&c);
  }
  mgopt__map_free(&c.by_hash);
  if (c.e) mgopt__heap_free(&c.p->alloc, c.e, sizeof(mgopt__cdd_entry) * (size_t)c.ecap);
  if (c.hoist) mgopt__heap_free(&c.p->alloc, c.hoist, sizeof(mgopt_op *) * (size_t)c.hcap);
  return s;
}

static const mgopt_opt_def mgopt__cdd_opts[] = {
    {"const_threshold", MGOPT_OPT_INT, "100", "consts with fewer elements are left alone", NULL},
};

MGOPT__DEFINE_PASS_WITH_OPTIONS(cleanup, common, const_deduplication,
                                "merge equal consts and identical constexpr ops",
                                mgopt__cdd_opts, mgopt__cdd_run);
