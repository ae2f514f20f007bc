/* src/passes/relay/combine_parallel_conv2d.c — relay::combine_parallel_conv2d: parallel convs of one input become one wide conv and a split; also the combiner shared with combine_parallel_dense.

   Spec: tvm_relay_passes.md, "CombineParallelConv2D(min_num_branches)":
   branches that read the same input with compatible convolutions are
   combined (ParallelOpCombiner) when there are at least min_num_branches
   of them (default 3, as TVM).

   Before:
     main(%x: (1, 1, 2, fp32)) {
       %w1: (1, 1, 1, fp32)* = const(val=[[[1]]])
       %w2: (1, 1, 1, fp32)* = const(val=[[[2]]])
       %w3: (1, 1, 1, fp32)* = const(val=[[[-1]]])
       %a: (1, 1, 2, fp32) = conv(x=%x, weight=%w1)
       %b: (1, 1, 2, fp32) = conv(x=%x, weight=%w2)
       %c: (1, 1, 2, fp32) = conv(x=%x, weight=%w3)
       %r: (1, 1, 2, fp32) = relu(x=%a)
       %s: (1, 1, 2, fp32) = relu(x=%b)
       %t: (1, 1, 2, fp32) = relu(x=%c)
     } -> (%r, %s, %t)
   After:
     main(%x: (1, 1, 2, fp32)) {
       %a_weight_0: (3, 1, 1, fp32)* = const(val=[[[1]], [[2]], [[-1]]])
       %a_wide_0: (1, 3, 2, fp32) = conv(x=%x, weight=%a_weight_0)
       %r_wide_0: (1, 3, 2, fp32) = relu(x=%a_wide_0)
       %r: (1, 1, 2, fp32), %s: (1, 1, 2, fp32), %t: (1, 1, 2, fp32) = split(x=%r_wide_0, split_sizes=[1, 1, 1], axis=1, name="r_split_0")
     } -> (%r, %s, %t)

   Branches: the ops of one kind (conv; linear for combine_parallel_dense)
   in one block that read the same value as x, with equal attributes
   (strides, pad_type, pad, dilations; groups 1), constant float weights of
   one dtype whose shapes agree but for axis 0 (kernel size and input
   channels), and a constant bias each or none (an absent bias reads as
   zeros when another branch has one). At least min_num_branches of them:
   their weights are concatenated once along axis 0 (a new constant), their
   biases likewise, one wide op replaces them, in the order the ops were
   created. Then, while every branch's value has exactly one reader, not a
   block output, and these readers line up — the same pure unary op with
   equal attributes, or the same add, sub or mul with the branch value in
   the same slot and a constant scalar or per-channel operand in the other
   (channel axis 1 for conv, the last for linear) — they are combined too
   (their constants concatenated). A split on the channel axis gives each
   branch its part back; the ops combined go.
   Exact: the wide op computes each output channel from the same weights
   and input as its branch did.

   Fires on: min_num_branches or more compatible branches.
   Must not fire: fewer branches; groups other than 1; different kernel
   sizes, strides, pads or dilations; a run-time weight or bias; branches
   in different blocks; declared types the split's parts do not fit.
   Cost: worklist patterns rooted at each conv (linear). The readers of an
   input value are grouped into classes of compatible ones once, in one
   pass (classes found by a hash of op kind, block, weight shape and
   attributes), and again only after the value's use count changed, so a
   value read by many convs that stay below min_num_branches, or by many
   incompatible ones, costs O(readers) in all; plus the weight bytes of each
   combination. */
#include "../../passes_internal.h"

#define MGOPT__CPO_MAX 256 /* branches combined at once */

typedef struct mgopt__cpo_branch {
  mgopt_op *op;
  mgopt_tensor *w, *b;
} mgopt__cpo_branch;

static int mgopt__cpo_by_id(const void *a, const void *b) {
  const mgopt__cpo_branch *x = (const mgopt__cpo_branch *)a, *y = (const mgopt__cpo_branch *)b;
  return x->op->id < y->op->id ? -1 : x->op->id > y->op->id;
}

/* op's constant weight and bias if it can be a branch like `like` (NULL: the first) */
static int mgopt__cpo_branch_of(mgopt_op *op, const mgopt_value *x, const mgopt__cpo_branch *like,
                                mgopt__cpo_branch *br) {
  mgopt_value *wv = mgopt_op_operand(op, "weight"), *bv = mgopt_op_operand(op, "bias");
  int32_t s, d;
  if (op->nouts != 1 || op->nblocks || mgopt_op_operand(op, "x") != x || !wv) return 0;
  for (s = 0; s < op->nslots; s++) {
    const char *n = op->slots[s].name;
    if (strcmp(n, "x") && strcmp(n, "weight") && strcmp(n, "bias")) return 0;
  }
  br->op = op;
  br->w = mgopt__pu_def_of(wv, MGOPT_OP_const) ? mgopt_value_const(wv) : NULL;
  br->b = bv ? (mgopt__pu_def_of(bv, MGOPT_OP_const) ? mgopt_value_const(bv) : NULL) : NULL;
  if (!br->w || (bv && !br->b) || br->w->rank < 2 || !mgopt__pw_is_float_weight((mgopt_dtype)br->w->dtype)) return 0;
  if (br->b && (br->b->rank != 1 || br->b->shape[0] != br->w->shape[0])) return 0;
  if (op->kind == MGOPT_OP_conv && mgopt_op_get_int(op, "groups", 1) != 1) return 0;
  if (!like) return 1;
  if (op->kind != like->op->kind || op->parent != like->op->parent || br->w->dtype != like->w->dtype ||
      br->w->rank != like->w->rank || !mgopt__pu_attrs_equal(op, like->op))
    return 0;
  for (d = 1; d < br->w->rank; d++)
    if (br->w->shape[d] != like->w->shape[d]) return 0;
  return 1;
}

/* the constant operand of a lined-up binary op and its slot ("x" or "y"), given the branch value v */
static mgopt_value *mgopt__cpo_const_operand(const mgopt_op *u, const mgopt_value *v, int *slot) {
  mgopt_value *x = mgopt_op_operand(u, "x"), *y = mgopt_op_operand(u, "y");
  if (!x || !y || x == y) return NULL;
  if (x == v && mgopt_value_const(y)) return *slot = 1, y;
  if (y == v && mgopt_value_const(x)) return *slot = 0, x;
  return NULL;
}

/* 1 when the readers u[0..n) of the branch values v[0..n) line up (see the header) */
static int mgopt__cpo_lined_up(mgopt_program *p, mgopt_op *const *u, mgopt_value *const *v, int32_t n, int32_t rank,
                               int32_t axis, const int64_t *cout, double *vals) {
  int32_t i, slot0 = -1;
  int64_t off = 0;
  for (i = 0; i < n; i++) {
    if (u[i]->type != u[0]->type || u[i]->nouts != 1 || u[i]->nblocks || u[i]->parent != u[0]->parent ||
        mgopt__op_has_effects(u[i]) || !mgopt__pu_attrs_equal(u[i], u[0]))
      return 0;
    if (u[0]->kind == MGOPT_OP_add || u[0]->kind == MGOPT_OP_sub || u[0]->kind == MGOPT_OP_mul) {
      int slot;
      mgopt_value *c = mgopt__cpo_const_operand(u[i], v[i], &slot);
      if (!c || (slot0 >= 0 && slot != slot0)) return 0;
      slot0 = slot;
      if (!mgopt__pw_channel_const(p, c, rank, axis, cout[i], vals + off)) return 0;
      off += cout[i];
    } else if (!(mgopt_op_traits(u[i]) & MGOPT_TRAIT_UNARY) || u[i]->nslots != 1 ||
               mgopt_op_operand(u[i], "x") != v[i]) {
      return 0;
    }
  }
  return 1;
}

/* to's attributes become from's (0 on OOM) */
static int mgopt__cpo_copy_attrs(mgopt_op *to, const mgopt_op *from) {
  int32_t i;
  for (i = 0; i < from->nattrs; i++)
    if (mgopt_op_set_attr(to, &from->attrs[i]) != MGOPT_OK) return 0;
  return 1;
}

/* the producer of a chain op's non-constant operand */
static mgopt_op *mgopt__cpo_chain_prev(const mgopt_op *q) {
  mgopt_value *a = mgopt_op_operand(q, "x"), *b = mgopt_op_operand(q, "y");
  if (a && a->def && !mgopt_value_const(a)) return a->def;
  if (b && b->def && !mgopt_value_const(b)) return b->def;
  return NULL;
}

typedef struct mgopt__cpo_opts {
  int64_t min_branches;
  mgopt__map grouped; /* input value -> its use count + 1 when its readers were last grouped */
} mgopt__cpo_opts;

/* Combines the n branches br (compatible, reading x; n >= 2) into one wide op and a split; 1 when it did. */
static int mgopt__cpo_group(mgopt_rewriter *rw, mgopt_value *x, mgopt__cpo_branch *br, int32_t n) {
  static const char *const slots3[3] = {"x", "weight", "bias"};
  static const char *const slots2[2] = {"x", "y"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *vals[3], *cur[MGOPT__CPO_MAX], *wide;
  mgopt_op *u[MGOPT__CPO_MAX], *pos, *wop, *split, *root;
  mgopt_tensor *wt, *bt = NULL;
  int64_t cout[MGOPT__CPO_MAX], total = 0, shape[MGOPT_MAX_RANK], rowbytes, off;
  double *dv;
  int32_t i, rank, axis, any_bias = 0, level;
  const char *base;
  qsort(br, (size_t)n, sizeof br[0], mgopt__cpo_by_id);
  root = br[0].op;
  rank = root->outs[0]->type.rank;
  if (root->outs[0]->type.kind != MGOPT_TYPE_TENSOR || rank < 1 || rank > MGOPT_MAX_RANK) return 0;
  axis = root->kind == MGOPT_OP_linear ? rank - 1 : 1;
  for (i = 0; i < n; i++) {
    cout[i] = br[i].w->shape[0];
    total += cout[i];
    any_bias |= br[i].b != NULL;
    cur[i] = br[i].op->outs[0];
    if (cur[i]->type.kind != MGOPT_TYPE_TENSOR || cur[i]->type.rank != rank) return 0;
  }
  /* the weights, concatenated along axis 0 once */
  for (i = 0; i < br[0].w->rank; i++) shape[i] = br[0].w->shape[i];
  shape[0] = total;
  wt = mgopt_tensor_new(p, (mgopt_dtype)br[0].w->dtype, br[0].w->rank, shape);
  if (!wt) return 0;
  rowbytes = (int64_t)(br[0].w->nbytes / (size_t)cout[0]);
  for (i = 0, off = 0; i < n; i++) {
    if ((int64_t)br[i].w->nbytes != rowbytes * cout[i]) return 0;
    memcpy((char *)wt->data + off, mgopt_tensor_data(p, br[i].w), br[i].w->nbytes);
    off += (int64_t)br[i].w->nbytes;
  }
  dv = (double *)mgopt_program_alloc(p, sizeof(double) * (size_t)total, 8);
  if (!dv) return 0;
  if (any_bias) {
    for (i = 0, off = 0; i < n; off += cout[i], i++) {
      int64_t k;
      if (!br[i].b) {
        for (k = 0; k < cout[i]; k++) dv[off + k] = 0;
      } else if (!mgopt__pw_read_channels(p, br[i].b, cout[i], dv + off)) {
        return 0;
      }
    }
    if (!(bt = mgopt__pw_vector(p, (mgopt_dtype)br[0].w->dtype, total, dv))) return 0;
  }
  /* where the wide ops go: right after x is made (before every branch) */
  pos = x->def && x->def->parent == root->parent ? x->def->next : root->parent->first;
  if (!pos) return 0;
  base = mgopt__pu_value_name(br[0].op->outs[0]);
  vals[0] = x;
  vals[1] = mgopt_rw_const(rw, pos, mgopt_program_fresh_name(p, mgopt__pu_name2(p, base, "_weight")), wt);
  vals[2] = bt ? mgopt_rw_const(rw, pos, mgopt_program_fresh_name(p, mgopt__pu_name2(p, base, "_bias")), bt) : NULL;
  if (!vals[1] || (bt && !vals[2])) return 0;
  wop = mgopt_rw_create(rw, pos, root->type, mgopt_program_fresh_name(p, mgopt__pu_name2(p, base, "_wide")), bt ? 3 : 2,
                        slots3, vals, 1);
  if (!wop || !mgopt__cpo_copy_attrs(wop, root) || mgopt_op_infer(p, wop, NULL)) {
    if (wop) mgopt__pu_erase_with_consts(rw, wop);
    return 0;
  }
  wide = wop->outs[0];
  /* the elementwise readers that line up */
  for (level = 0; level < 64; level++) {
    mgopt_op *nu;
    for (i = 0; i < n; i++) {
      if (cur[i]->nuses != 1 || mgopt__pu_is_block_output(cur[i]) || !cur[i]->uses->op) break;
      u[i] = cur[i]->uses->op;
    }
    if (i < n || !mgopt__cpo_lined_up(p, u, cur, n, rank, axis, cout, dv)) break;
    base = mgopt__pu_value_name(u[0]->outs[0]);
    if (u[0]->kind == MGOPT_OP_add || u[0]->kind == MGOPT_OP_sub || u[0]->kind == MGOPT_OP_mul) {
      int slot = 0;
      int32_t k;
      mgopt_tensor *ct;
      for (k = 0; k < rank - axis; k++) shape[k] = k ? 1 : total;
      (void)mgopt__cpo_const_operand(u[0], cur[0], &slot);
      ct = mgopt_tensor_new(p, (mgopt_dtype)mgopt_value_const(mgopt_op_operand(u[0], slot ? "y" : "x"))->dtype,
                            rank - axis, shape);
      if (!ct) break;
      for (k = 0; k < total; k++)
        if (!mgopt__pw_store(ct, k, dv[k])) break;
      if (k < total) break;
      vals[slot] = mgopt_rw_const(rw, pos, mgopt_program_fresh_name(p, mgopt__pu_name2(p, base, "_const")), ct);
      vals[1 - slot] = wide;
      if (!vals[slot]) break;
      nu = mgopt_rw_create(rw, pos, u[0]->type, mgopt_program_fresh_name(p, mgopt__pu_name2(p, base, "_wide")), 2,
                           slots2, vals, 1);
    } else {
      nu = mgopt_rw_create(rw, pos, u[0]->type, mgopt_program_fresh_name(p, mgopt__pu_name2(p, base, "_wide")), 1,
                           slots2, &wide, 1);
    }
    if (!nu || !mgopt__cpo_copy_attrs(nu, u[0]) || mgopt_op_infer(p, nu, NULL)) {
      if (nu) mgopt__pu_erase_with_consts(rw, nu);
      break;
    }
    wide = nu->outs[0];
    for (i = 0; i < n; i++) cur[i] = u[i]->outs[0];
  }
  /* the split that gives each branch its part */
  vals[0] = wide;
  split = mgopt_rw_create(rw, pos, "split", mgopt_program_fresh_name(p, mgopt__pu_name2(p, base, "_split")), 1, slots2,
                          vals, n);
  i = 0;
  if (split && !mgopt_op_set_ints(split, "split_sizes", cout, n) && !mgopt_op_set_int(split, "axis", axis) &&
      !mgopt_op_infer(p, split, NULL))
    for (i = 0; i < n; i++)
      if (!mgopt__pu_replace_fits(p, cur[i], split->outs[i])) break;
  if (!split || i < n) {
    /* back out: erase what was built, the last op first */
    mgopt_op *q = wide->def;
    if (split) mgopt__pu_erase_with_consts(rw, split);
    while (q) {
      mgopt_op *prev = q == wop ? NULL : mgopt__cpo_chain_prev(q);
      mgopt__pu_erase_with_consts(rw, q);
      q = prev;
    }
    return 0;
  }
  for (i = 0; i < n; i++) {
    mgopt__pu_fill_type(p, split, i, &cur[i]->type);
    mgopt__pu_rename(split->outs[i],
                     mgopt_program_fresh_name(p, mgopt__pu_name2(p, mgopt__pu_value_name(cur[i]), "_part")));
    if (!mgopt__pu_replace_keep_io(rw, cur[i], split->outs[i])) return 1;
  }
  /* the branches' ops are dead now: last first */
  for (i = 0; i < n; i++) {
    mgopt_op *q = cur[i]->def;
    while (q) {
      mgopt_op *prev = q == br[i].op ? NULL : mgopt__cpo_chain_prev(q);
      mgopt__pu_erase_with_consts(rw, q);
      q = prev;
    }
  }
  return 1;
}

/* A branch's class: op kind, block, weight dtype and shape past axis 0, attributes (equal classes hash equal). */
static uint64_t mgopt__cpo_class_key(const mgopt__cpo_branch *b) {
  uint64_t h = mgopt__hash_bytes(&b->op->kind, sizeof b->op->kind, 0x9E3779B97F4A7C15ull);
  h = mgopt__hash_bytes(&b->op->parent, sizeof b->op->parent, h);
  h = mgopt__hash_bytes(&b->w->dtype, sizeof b->w->dtype, h);
  h = mgopt__hash_bytes(b->w->shape + 1, sizeof(int64_t) * (size_t)(b->w->rank - 1), h);
  return mgopt__map_hash_key(h ^ (mgopt__pu_attrs_hash(b->op) * 0xBF58476D1CE4E5B9ull));
}

typedef struct mgopt__cpo_class {
  uint32_t first_id; /* the smallest op id among its branches: classes combine in that order */
  int32_t rep, count;
} mgopt__cpo_class;

static int mgopt__cpo_by_first_id(const void *a, const void *b) {
  const mgopt__cpo_class *x = (const mgopt__cpo_class *)a, *y = (const mgopt__cpo_class *)b;
  return x->first_id < y->first_id ? -1 : x->first_id > y->first_id;
}

/* Groups x's readers that can be branches into classes of compatible ones
   (one pass over the readers, classes found by hash) and combines each class
   of at least min_branches; 1 when something changed. */
static int mgopt__cpo_groups(mgopt_rewriter *rw, mgopt_value *x, const mgopt__cpo_opts *o) {
  mgopt_program *p = mgopt_rw_program(rw);
  size_t cap = (size_t)x->nuses + 1;
  size_t bytes = cap * (sizeof(mgopt__cpo_branch) + sizeof(int32_t) + sizeof(mgopt__cpo_class));
  mgopt__cpo_branch *all = (mgopt__cpo_branch *)mgopt__heap_realloc(&p->alloc, NULL, 0, bytes), tmp;
  mgopt__cpo_class *cls = all ? (mgopt__cpo_class *)(void *)(all + cap) : NULL;
  int32_t *of = cls ? (int32_t *)(void *)(cls + cap) : NULL, n = 0, ncls = 0, c, i, changed = 0;
  mgopt__map classes;
  mgopt_use *use;
  if (!all) return 0;
  mgopt__map_init(&classes, &p->alloc);
  for (use = x->uses; use; use = use->next) {
    mgopt_op *op = use->op;
    mgopt__map_slot *sl;
    uint64_t key;
    if (!op || (op->flags & MGOPT_OP_ERASED) || use->slot != mgopt_op_slot_index(op, "x") ||
        !mgopt__cpo_branch_of(op, x, NULL, &all[n]))
      continue;
    key = mgopt__cpo_class_key(&all[n]);
    for (sl = mgopt__map_find(&classes, key); sl; sl = mgopt__map_next(&classes, sl))
      if (mgopt__cpo_branch_of(op, x, &all[cls[sl->v.i].rep], &tmp)) break;
    if (!sl) {
      if (!(sl = mgopt__map_add(&classes, key))) break;
      sl->v.i = ncls;
      cls[ncls].rep = n;
      cls[ncls].count = 0;
      cls[ncls].first_id = op->id;
      ncls++;
    }
    c = (int32_t)sl->v.i;
    of[n++] = c;
    cls[c].count++;
    if (op->id < cls[c].first_id) cls[c].first_id = op->id;
  }
  mgopt__map_free(&classes);
  /* the class index of each branch, as each class is sorted away from its index */
  for (c = 0; c < ncls; c++) cls[c].rep = c;
  qsort(cls, (size_t)ncls, sizeof cls[0], mgopt__cpo_by_first_id);
  for (c = 0; c < ncls; c++) {
    mgopt__cpo_branch br[MGOPT__CPO_MAX];
    int32_t nb = 0;
    if (cls[c].count < o->min_branches || cls[c].count < 2) continue;
    for (i = 0; i < n && nb < MGOPT__CPO_MAX; i++)
      if (of[i] == cls[c].rep) br[nb++] = all[i];
    changed |= mgopt__cpo_group(rw, x, br, nb);
  }
  mgopt__heap_free(&p->alloc, all, bytes);
  return changed;
}

/* Each input value's readers are grouped once, and again only after its use count changed. */
static int mgopt__cpo_combine(mgopt_rewriter *rw, mgopt_op *root, void *ud) {
  mgopt__cpo_opts *o = (mgopt__cpo_opts *)ud;
  mgopt_value *x = mgopt_op_operand(root, "x");
  mgopt__cpo_branch first;
  mgopt__map_slot *sl;
  int changed = 0, round;
  if (!x || !mgopt__cpo_branch_of(root, x, NULL, &first)) return 0;
  sl = mgopt__map_find(&o->grouped, mgopt__map_ptr_key(x));
  if (sl && sl->v.i == (int64_t)x->nuses + 1) return 0;
  /* a class beyond MGOPT__CPO_MAX branches combines in rounds (the wide op joins the rest) */
  for (round = 0; round < 64 && mgopt__cpo_groups(rw, x, o); round++) changed = 1;
  if ((sl = mgopt__map_get(&o->grouped, mgopt__map_ptr_key(x), NULL)) != NULL) sl->v.i = (int64_t)x->nuses + 1;
  return changed;
}

/* Runs the combiner on the ops of `kind` with ctx's option min_num_branches. */
MGOPT__PRIVATE mgopt_status mgopt__cpo_run(mgopt_pass_ctx *ctx, int32_t kind) {
  mgopt__cpo_opts o;
  mgopt_status st;
  o.min_branches = ctx->opts[0].i;
  mgopt__map_init(&o.grouped, &ctx->program->alloc);
  st = mgopt__pass_run_pattern(ctx, "combine_parallel", kind, mgopt__cpo_combine, &o);
  mgopt__map_free(&o.grouped);
  return st;
}

static mgopt_status mgopt__cpc_run(mgopt_pass_ctx *ctx) { return mgopt__cpo_run(ctx, MGOPT_OP_conv); }

static const mgopt_opt_def mgopt__cpc_opts[] = {
    {"min_num_branches", MGOPT_OPT_INT, "3", "combine only this many parallel convs or more", NULL},
};

MGOPT__DEFINE_PASS_WITH_OPTIONS(relay, relay, combine_parallel_conv2d,
                                "parallel convs of one input become one wide conv and a split",
                                mgopt__cpc_opts, mgopt__cpc_run);
