/* mgopt_passes.h — mgopt's graph passes, constant-folding kernels and named pipelines.
   Generated from src/ by tools/amalgamate — do not edit. Needs mgopt.h. Version 0.1.0. */
#include "mgopt.h"
/* src/passes_api.h — public declarations of mgopt_passes.h: built-in passes, pipelines, folding. */
#ifndef MGOPT_PASSES_H_INCLUDED
#define MGOPT_PASSES_H_INCLUDED
#ifdef __cplusplus
extern "C" {
#endif

/* The registry of every built-in pass and named pipeline, with the built-in
   folding kernels. A static table: never NULL, never freed. */
MGOPTDEF const mgopt_registry *mgopt_builtin_registry(void);

/* The built-in folding function (see mgopt_fold_fn): evaluates an op whose
   operands are all constant with the kernel table. */
MGOPTDEF int mgopt_fold_op(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud);

#ifdef __cplusplus
}
#endif
#endif /* MGOPT_PASSES_H_INCLUDED */

#ifdef MGOPT_IMPLEMENTATION
#ifndef MGOPT__PASSES_IMPLEMENTATION_DONE
#define MGOPT__PASSES_IMPLEMENTATION_DONE
/* src/passes_internal.h — private helpers shared by passes: legality checks, pass declarations. */
#ifndef MGOPT__PASSES_INTERNAL_H
#define MGOPT__PASSES_INTERNAL_H

/* Each pass file defines one `MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_<name>`;
   passes/registry.c (amalgamated last) lists them. */

/* ---- shared legality checks and helpers (passes/util.c) */
/* v is an output of a function body (its name and type must survive). */
MGOPT__PRIVATE int mgopt__pu_is_func_output(const mgopt_value *v);
/* v is an output of any block (function body or nested). */
MGOPT__PRIVATE int mgopt__pu_is_block_output(const mgopt_value *v);
/* exactly one use, by an op (not a block output). */
MGOPT__PRIVATE int mgopt__pu_single_use(const mgopt_value *v);
/* that single user op, or NULL. */
MGOPT__PRIVATE mgopt_op *mgopt__pu_single_user(const mgopt_value *v);
/* the producer of v if it is an op of `kind`, else NULL. */
MGOPT__PRIVATE mgopt_op *mgopt__pu_def_of(const mgopt_value *v, int32_t kind);
/* v is a constant with one element; its value in *out. */
MGOPT__PRIVATE int mgopt__pu_const_scalar(const mgopt_value *v, double *out);
/* v is a non-empty constant whose elements all equal x. */
MGOPT__PRIVATE int mgopt__pu_const_all(const mgopt_value *v, double x);
MGOPT__PRIVATE int mgopt__pu_types_equal(const mgopt_value *a, const mgopt_value *b);
/* every output unused (and at least one output). */
MGOPT__PRIVATE int mgopt__pu_is_dead(const mgopt_op *op);
MGOPT__PRIVATE void mgopt__pu_erase_if_dead(mgopt_rewriter *rw, mgopt_op *op);
/* Runs patterns over every function with the worklist driver. Dead ops are
   NOT erased by the driver (a pass removes only what it made dead); with
   fold != 0 constant operands are folded through ctx->fold. Adds the rewrite
   count to ctx->rewrites. */
MGOPT__PRIVATE mgopt_status mgopt__pu_run_patterns(mgopt_pass_ctx *ctx, const mgopt_pattern *pats, int32_t n,
                                                   int fold);

#endif /* MGOPT__PASSES_INTERNAL_H */
/* src/kernels/fold.c — constant-folding kernel table (being written). */

MGOPTDEF int mgopt_fold_op(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(op);
  MGOPT__UNUSED(out);
  MGOPT__UNUSED(ud);
  return 0;
}
/* src/passes/util.c — legality checks and small rewrite helpers shared by the passes. */

MGOPT__PRIVATE int mgopt__pu_is_func_output(const mgopt_value *v) {
  const mgopt_use *u;
  for (u = v->uses; u; u = u->next)
    if (!u->op && u->block && !u->block->parent_op) return 1;
  return 0;
}

MGOPT__PRIVATE int mgopt__pu_is_block_output(const mgopt_value *v) { return mgopt_value_is_block_output(v); }

MGOPT__PRIVATE int mgopt__pu_single_use(const mgopt_value *v) {
  return v->nuses == 1 && v->uses->op != NULL;
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_single_user(const mgopt_value *v) {
  return mgopt__pu_single_use(v) ? v->uses->op : NULL;
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_def_of(const mgopt_value *v, int32_t kind) {
  return (v && v->def && v->def->kind == kind) ? v->def : NULL;
}

MGOPT__PRIVATE int mgopt__pu_const_scalar(const mgopt_value *v, double *out) {
  const mgopt_tensor *t = mgopt_value_const(v);
  if (!t || t->numel != 1 || t->dtype == MGOPT_DT_STRING) return 0;
  *out = mgopt_tensor_get_f64(t, 0);
  return 1;
}

MGOPT__PRIVATE int mgopt__pu_const_all(const mgopt_value *v, double x) {
  const mgopt_tensor *t = mgopt_value_const(v);
  return t && t->numel > 0 && mgopt_tensor_all_equal_f64(t, x);
}

MGOPT__PRIVATE int mgopt__pu_types_equal(const mgopt_value *a, const mgopt_value *b) {
  return mgopt_type_equal(&a->type, &b->type);
}

MGOPT__PRIVATE int mgopt__pu_is_dead(const mgopt_op *op) {
  int32_t i;
  if (op->nouts == 0) return 0;
  for (i = 0; i < op->nouts; i++)
    if (op->outs[i]->nuses) return 0;
  return 1;
}

MGOPT__PRIVATE void mgopt__pu_erase_if_dead(mgopt_rewriter *rw, mgopt_op *op) {
  if (op && !(op->flags & MGOPT_OP_ERASED) && mgopt__pu_is_dead(op)) mgopt_rw_erase(rw, op);
}

MGOPT__PRIVATE mgopt_status mgopt__pu_run_patterns(mgopt_pass_ctx *ctx, const mgopt_pattern *pats, int32_t n,
                                                   int fold) {
  mgopt_rewrite_config cfg;
  mgopt_rewrite_stats st;
  mgopt_status s;
  memset(&cfg, 0, sizeof cfg);
  memset(&st, 0, sizeof st);
  cfg.erase_dead = 0;
  if (fold) {
    cfg.fold = ctx->fold;
    cfg.fold_ud = ctx->fold_ud;
  }
  s = mgopt_rewrite_program(ctx->program, pats, n, &cfg, &st, ctx->diag);
  ctx->rewrites += st.rewrites + st.folds;
  return s;
}
/* src/passes/common/dead_code_elimination.c — common::dead_code_elimination: erase ops whose results reach no output.

   Spec: mil_graph_passes.txt, "Eliminate unused ops in program".

   Before:
     main(%x: (2, 4, fp32)) {
       %w: (4, 2, fp32)* = const(val=[1, 2, 3, 4, 5, 6, 7, 8])
       %b: (4, fp32)* = const(val=[1, 2, 3, 4])
       %m: (2, 2, fp32) = matmul(x=%x, y=%w)
       %l: (2, 4, fp32) = linear(x=%x, weight=%w, bias=%b)
     } -> (%l)
   After:
     main(%x: (2, 4, fp32)) {
       %w: (4, 2, fp32)* = const(val=[1, 2, 3, 4, 5, 6, 7, 8])
       %b: (4, fp32)* = const(val=[1, 2, 3, 4])
       %l: (2, 4, fp32) = linear(x=%x, weight=%w, bias=%b)
     } -> (%l)

   Fires on: every op with at least one output, none of them used, that is
   pure (registered ops with the pure trait, and opaque ops: model graphs
   have no side effects), in every block, nested blocks included (a nested
   block's outputs keep what feeds them alive). Ops without outputs are kept.
   Cost: one backward sweep per block, O(ops): erasing an op drops its
   operand uses, so producers earlier in the block are seen dead in the
   same sweep. */

static int mgopt__dce_removable(const mgopt_op *op) {
  int32_t i;
  if (op->nouts == 0) return 0;
  for (i = 0; i < op->nouts; i++)
    if (op->outs[i]->nuses) return 0;
  return op->kind == MGOPT_OP_OPAQUE || (mgopt_op_traits(op) & MGOPT_TRAIT_PURE);
}

static int64_t mgopt__dce_block(mgopt_block *b) {
  mgopt_op *op, *prev;
  int64_t n = 0;
  for (op = b->last; op; op = prev) {
    int32_t i;
    prev = op->prev;
    if (mgopt__dce_removable(op)) {
      mgopt_op_erase(op);
      n++;
      continue;
    }
    for (i = 0; i < op->nblocks; i++) n += mgopt__dce_block(op->blocks[i]);
  }
  return n;
}

static mgopt_status mgopt__dce_run(mgopt_pass_ctx *ctx) {
  int32_t i;
  for (i = 0; i < mgopt_program_function_count(ctx->program); i++)
    ctx->rewrites += mgopt__dce_block(mgopt_program_function_at(ctx->program, i)->body);
  return MGOPT_OK;
}

MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_dead_code_elimination = {
    "common::dead_code_elimination", "cleanup", "erase ops whose results reach no output", 0, NULL,
    mgopt__dce_run};
/* src/passes/common/noop_elimination.c — common::noop_elimination: remove ops that have no effect.

   Spec: mil_graph_passes.txt, "Remove ops that have no effect"; reference mil-passes.md §3.6.

   Before:
     main(%x: (1, 96, 128, 64, fp32)) {
       %s: (4, int32)* = const(val=[1, 96, 128, 64])
       %r: (1, 96, 128, 64, fp32) = reshape(x=%x, shape=%s)
       %c: (fp32)* = const(val=2.0)
       %y: (1, 96, 128, 64, fp32) = add(x=%r, y=%c)
     } -> (%y)
   After:
     main(%x: (1, 96, 128, 64, fp32)) {
       %s: (4, int32)* = const(val=[1, 96, 128, 64])
       %c: (fp32)* = const(val=2.0)
       %y: (1, 96, 128, 64, fp32) = add(x=%x, y=%c)
     } -> (%y)

   Fires on (the 19 op types MIL defines), for single-output ops whose output
   is not a block output, when the kept input has provably the same type as
   the output (same dtype, rank and dims, no unknown dim — so no broadcasting
   is lost):
     identity                                         always
     add (either side all 0), mul (either side all 1)
     sub (y all 0), real_div and pow (y all 1)
     floor_div (y all 1, integer dtypes only: for floats it is floor(x))
     reshape, split, slice_by_size, pad, tile, upsample_nearest_neighbor,
     upsample_bilinear, resize_bilinear, crop         same type in and out
     slice_by_index                                   same type, no negative const stride
     transpose                                        perm is the identity
     linear_activation                                alpha == 1 and beta == 0
   The last group's unregistered ops (upsample_*, resize_bilinear, crop,
   linear_activation) are matched by name with their MIL operand `x`.
   Must not fire: when the output is a block output; when the kept input's
   type differs or is not fully known; floor_div on floats.
   Cost: one worklist run, O(ops). The removed op's constant operands stay
   for dead_code_elimination. */

static int mgopt__noop_same_type(const mgopt_value *in, const mgopt_value *out) {
  const mgopt_type *a = &in->type, *b = &out->type;
  int32_t i;
  if (!mgopt_type_equal(a, b) || a->kind != MGOPT_TYPE_TENSOR || a->rank < 0) return 0;
  for (i = 0; i < a->rank; i++)
    if (!a->dims[i].sym && a->dims[i].v < 0) return 0;
  return 1;
}

/* Replaces op's only output by `keep` if the checks hold. */
static int mgopt__noop_forward(mgopt_rewriter *rw, mgopt_op *op, mgopt_value *keep) {
  mgopt_value *out;
  if (!keep || op->nouts != 1) return 0;
  out = op->outs[0];
  if (mgopt__pu_is_block_output(out) || !mgopt__noop_same_type(keep, out)) return 0;
  mgopt_rw_replace_value(rw, out, keep);
  mgopt_rw_erase(rw, op);
  return 1;
}

static int mgopt__noop_identity(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  MGOPT__UNUSED(ud);
  return mgopt__noop_forward(rw, op, mgopt_op_operand(op, "x"));
}

/* add / mul: either side the neutral element; sub / real_div / pow / floor_div: y only. */
static int mgopt__noop_binary(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y");
  double neutral = (op->kind == MGOPT_OP_add || op->kind == MGOPT_OP_sub) ? 0.0 : 1.0;
  MGOPT__UNUSED(ud);
  if (!x || !y || op->nouts != 1) return 0;
  if (op->kind == MGOPT_OP_floor_div && !mgopt_dtype_is_int((mgopt_dtype)x->type.dtype)) return 0;
  if (mgopt__pu_const_all(y, neutral) && mgopt__noop_forward(rw, op, x)) return 1;
  if ((op->kind == MGOPT_OP_add || op->kind == MGOPT_OP_mul) && mgopt__pu_const_all(x, neutral))
    return mgopt__noop_forward(rw, op, y);
  return 0;
}

static int mgopt__noop_same_shape(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  MGOPT__UNUSED(ud);
  return mgopt__noop_forward(rw, op, mgopt_op_operand(op, "x"));
}

static int mgopt__noop_slice_by_index(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  const int64_t *stride = NULL;
  int64_t n, i;
  MGOPT__UNUSED(ud);
  n = mgopt_op_get_ints(mgopt_rw_program(rw), op, "stride", &stride);
  for (i = 0; i < n; i++)
    if (stride[i] < 0) return 0;
  if (n < 0 && mgopt_op_operand(op, "stride")) return 0; /* a stride not known at compile time */
  return mgopt__noop_forward(rw, op, mgopt_op_operand(op, "x"));
}

static int mgopt__noop_transpose(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  const int64_t *perm = NULL;
  int64_t n, i;
  MGOPT__UNUSED(ud);
  n = mgopt_op_get_ints(mgopt_rw_program(rw), op, "perm", &perm);
  if (!x || n < 0 || x->type.rank != n) return 0;
  for (i = 0; i < n; i++)
    if ((perm[i] < 0 ? perm[i] + n : perm[i]) != i) return 0;
  return mgopt__noop_forward(rw, op, x);
}

static int mgopt__noop_linear_activation(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  MGOPT__UNUSED(ud);
  if (mgopt_op_get_float(op, "alpha", 0.0) != 1.0 || mgopt_op_get_float(op, "beta", 0.0) != 0.0) return 0;
  return mgopt__noop_forward(rw, op, mgopt_op_operand(op, "x"));
}

static const mgopt_pattern mgopt__noop_patterns[] = {
    {"noop_identity", MGOPT_OP_identity, NULL, 1, mgopt__noop_identity, NULL},
    {"noop_add", MGOPT_OP_add, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_mul", MGOPT_OP_mul, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_sub", MGOPT_OP_sub, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_real_div", MGOPT_OP_real_div, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_pow", MGOPT_OP_pow, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_floor_div", MGOPT_OP_floor_div, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_reshape", MGOPT_OP_reshape, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_split", MGOPT_OP_split, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_slice_by_size", MGOPT_OP_slice_by_size, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_pad", MGOPT_OP_pad, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_tile", MGOPT_OP_tile, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_upsample_nearest_neighbor", MGOPT_OP_OPAQUE, "upsample_nearest_neighbor", 1, mgopt__noop_same_shape, NULL},
    {"noop_upsample_bilinear", MGOPT_OP_OPAQUE, "upsample_bilinear", 1, mgopt__noop_same_shape, NULL},
    {"noop_resize_bilinear", MGOPT_OP_OPAQUE, "resize_bilinear", 1, mgopt__noop_same_shape, NULL},
    {"noop_crop", MGOPT_OP_OPAQUE, "crop", 1, mgopt__noop_same_shape, NULL},
    {"noop_slice_by_index", MGOPT_OP_slice_by_index, NULL, 1, mgopt__noop_slice_by_index, NULL},
    {"noop_transpose", MGOPT_OP_transpose, NULL, 1, mgopt__noop_transpose, NULL},
    {"noop_linear_activation", MGOPT_OP_OPAQUE, "linear_activation", 1, mgopt__noop_linear_activation, NULL},
};

static mgopt_status mgopt__noop_run(mgopt_pass_ctx *ctx) {
  return mgopt__pu_run_patterns(ctx, mgopt__noop_patterns, MGOPT__ARRAY_COUNT(mgopt__noop_patterns), 0);
}

MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_noop_elimination = {
    "common::noop_elimination", "cleanup", "remove ops that have no effect (identity reshape, add 0, mul 1, ...)",
    0, NULL, mgopt__noop_run};
/* src/passes/common/remove_redundant_ops.c — common::remove_redundant_ops: keep one of several identical ops.

   Spec: mil_graph_passes.txt, "If there are multiple ops with identical inputs"; reference §3.7.

   Before:
     main(%x: (2, fp32)) {
       %a: (fp32)* = const(val=4.5)
       %b: (fp32)* = const(val=4.5)
       %m: (2, fp32) = mul(x=%x, y=%a)
       %n: (2, fp32) = mul(x=%x, y=%b)
       %s: (2, fp32) = add(x=%m, y=%n)
     } -> (%s)
   After:
     main(%x: (2, fp32)) {
       %a: (fp32)* = const(val=4.5)
       %b: (fp32)* = const(val=4.5)
       %m: (2, fp32) = mul(x=%x, y=%a)
       %s: (2, fp32) = add(x=%m, y=%m)
     } -> (%s)

   Two ops are identical when they have the same type, the same operand slot
   names, equal attributes, and operand by operand either the same value or
   two constants of equal dtype, shape and content (constants of 100 or more
   elements only when they are the same value: deduplicating big constants is
   const_deduplication's job). They must share a "parent": an operand that is
   a block argument or output 0 of a non-const op (MIL's candidate rule), sit
   in the same block, and the later one is removed. Must not fire: on ops with
   more than one output, whose output is a block output, with nested blocks,
   or that draw random numbers. Cost: one sweep in program order with a hash
   table keyed on (block, type, operands, attributes): O(ops); a removal lets
   later users match in the same sweep. */

#define MGOPT__RRO_BIG 100

static int mgopt__rro_eligible(const mgopt_op *op) {
  int32_t s, k;
  int parent = 0;
  if (op->nouts != 1 || op->nblocks || op->kind == MGOPT_OP_const) return 0;
  if (op->kind == MGOPT_OP_OPAQUE && (strstr(op->type, "andom") || strstr(op->type, "Bernoulli") ||
                                      strstr(op->type, "Multinomial")))
    return 0;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      const mgopt_value *v = op->slots[s].uses[k].value;
      if (!v->def || (v->index == 0 && v->def->kind != MGOPT_OP_const)) parent = 1;
    }
  return parent;
}

static uint64_t mgopt__rro_mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

static uint64_t mgopt__rro_hash_value(const mgopt_value *v) {
  mgopt_tensor *t = mgopt_value_const(v);
  if (t && t->numel < MGOPT__RRO_BIG) return mgopt_tensor_hash(t);
  return (uint64_t)v->id * 0x100000001b3ull;
}

static uint64_t mgopt__rro_hash_attr(const mgopt_attr *a) {
  uint64_t h = mgopt__rro_mix((uint64_t)(uintptr_t)a->name, a->kind);
  switch ((mgopt_attr_kind)a->kind) {
    case MGOPT_ATTR_BOOL:
    case MGOPT_ATTR_INT: return mgopt__rro_mix(h, (uint64_t)a->u.i);
    case MGOPT_ATTR_FLOAT: return mgopt__hash_bytes(&a->u.f, sizeof a->u.f, h);
    case MGOPT_ATTR_STRING: return mgopt__hash_bytes(a->u.s.ptr, a->u.s.len, h);
    case MGOPT_ATTR_BOOLS:
    case MGOPT_ATTR_INTS: return mgopt__hash_bytes(a->u.ints, sizeof(int64_t) * (size_t)a->n, h);
    case MGOPT_ATTR_FLOATS: return mgopt__hash_bytes(a->u.floats, sizeof(double) * (size_t)a->n, h);
    case MGOPT_ATTR_TENSOR: return mgopt__rro_mix(h, mgopt_tensor_hash(a->u.t));
    default: return mgopt__rro_mix(h, (uint64_t)a->n);
  }
}

static uint64_t mgopt__rro_hash(const mgopt_op *op) {
  uint64_t h = mgopt__rro_mix((uint64_t)(uintptr_t)op->parent, (uint64_t)(uintptr_t)op->type);
  int32_t s, k;
  for (s = 0; s < op->nslots; s++) {
    h = mgopt__rro_mix(h, (uint64_t)(uintptr_t)op->slots[s].name);
    for (k = 0; k < op->slots[s].n; k++) h = mgopt__rro_mix(h, mgopt__rro_hash_value(op->slots[s].uses[k].value));
  }
  /* attributes in any order: combine commutatively */
  {
    uint64_t ah = 0;
    for (s = 0; s < op->nattrs; s++) ah += mgopt__rro_hash_attr(&op->attrs[s]);
    h = mgopt__rro_mix(h, ah);
  }
  return h;
}

static int mgopt__rro_value_eq(const mgopt_value *a, const mgopt_value *b) {
  const mgopt_tensor *x, *y;
  if (a == b) return 1;
  x = mgopt_value_const(a);
  y = mgopt_value_const(b);
  if (!x || !y || x->numel >= MGOPT__RRO_BIG || y->numel >= MGOPT__RRO_BIG) return 0;
  return mgopt_tensor_equal(x, y);
}

static int mgopt__rro_attr_eq(const mgopt_attr *a, const mgopt_attr *b) {
  int64_t i;
  if (a->kind != b->kind || a->n != b->n || a->tag != b->tag) return 0;
  switch ((mgopt_attr_kind)a->kind) {
    case MGOPT_ATTR_BOOL:
    case MGOPT_ATTR_INT: return a->u.i == b->u.i;
    case MGOPT_ATTR_FLOAT: return memcmp(&a->u.f, &b->u.f, sizeof a->u.f) == 0;
    case MGOPT_ATTR_STRING: return a->u.s.len == b->u.s.len && memcmp(a->u.s.ptr, b->u.s.ptr, a->u.s.len) == 0;
    case MGOPT_ATTR_BOOLS:
    case MGOPT_ATTR_INTS: return a->n == 0 || memcmp(a->u.ints, b->u.ints, sizeof(int64_t) * (size_t)a->n) == 0;
    case MGOPT_ATTR_FLOATS: return a->n == 0 || memcmp(a->u.floats, b->u.floats, sizeof(double) * (size_t)a->n) == 0;
    case MGOPT_ATTR_STRINGS:
      for (i = 0; i < a->n; i++)
        if (a->u.strs[i].len != b->u.strs[i].len || memcmp(a->u.strs[i].ptr, b->u.strs[i].ptr, a->u.strs[i].len))
          return 0;
      return 1;
    case MGOPT_ATTR_TENSOR: return mgopt_tensor_equal(a->u.t, b->u.t);
    case MGOPT_ATTR_BYTES: return a->n == 0 || memcmp(a->u.bytes, b->u.bytes, (size_t)a->n) == 0;
    default: return 1;
  }
}

static int mgopt__rro_equal(const mgopt_op *a, const mgopt_op *b) {
  int32_t s, k;
  if (a->type != b->type || a->parent != b->parent || a->nslots != b->nslots || a->nattrs != b->nattrs) return 0;
  for (s = 0; s < a->nslots; s++) {
    const mgopt_slot *sa = &a->slots[s];
    int32_t j = mgopt_op_slot_index(b, sa->name);
    const mgopt_slot *sb;
    if (j < 0) return 0;
    sb = &b->slots[j];
    if (sa->n != sb->n || sa->is_list != sb->is_list) return 0;
    for (k = 0; k < sa->n; k++)
      if (!mgopt__rro_value_eq(sa->uses[k].value, sb->uses[k].value)) return 0;
  }
  for (s = 0; s < a->nattrs; s++) {
    const mgopt_attr *o = mgopt_op_attr(b, a->attrs[s].name);
    if (!o || !mgopt__rro_attr_eq(&a->attrs[s], o)) return 0;
  }
  return 1;
}

typedef struct mgopt__rro {
  mgopt_program *p;
  mgopt_op **tab;
  uint64_t *hashes;
  size_t cap, count;
  int64_t removed;
  int oom;
} mgopt__rro;

static void mgopt__rro_grow(mgopt__rro *r) {
  size_t ncap = r->cap ? r->cap * 2 : 1024, i;
  mgopt_op **nt = (mgopt_op **)mgopt__heap_realloc(&r->p->alloc, NULL, 0, ncap * sizeof(mgopt_op *));
  uint64_t *nh = (uint64_t *)mgopt__heap_realloc(&r->p->alloc, NULL, 0, ncap * sizeof(uint64_t));
  if (!nt || !nh) {
    if (nt) mgopt__heap_free(&r->p->alloc, nt, ncap * sizeof(mgopt_op *));
    if (nh) mgopt__heap_free(&r->p->alloc, nh, ncap * sizeof(uint64_t));
    r->oom = 1;
    return;
  }
  memset(nt, 0, ncap * sizeof(mgopt_op *));
  for (i = 0; i < r->cap; i++)
    if (r->tab[i]) {
      size_t j = (size_t)r->hashes[i] & (ncap - 1);
      while (nt[j]) j = (j + 1) & (ncap - 1);
      nt[j] = r->tab[i];
      nh[j] = r->hashes[i];
    }
  if (r->tab) mgopt__heap_free(&r->p->alloc, r->tab, r->cap * sizeof(mgopt_op *));
  if (r->hashes) mgopt__heap_free(&r->p->alloc, r->hashes, r->cap * sizeof(uint64_t));
  r->tab = nt;
  r->hashes = nh;
  r->cap = ncap;
}

static void mgopt__rro_block(mgopt__rro *r, mgopt_block *b, int depth) {
  mgopt_op *op, *next;
  for (op = b->first; op && !r->oom; op = next) {
    int32_t i;
    uint64_t h;
    size_t j;
    next = op->next;
    if (depth < 256)
      for (i = 0; i < op->nblocks; i++) mgopt__rro_block(r, op->blocks[i], depth + 1);
    if (!mgopt__rro_eligible(op)) continue;
    if ((r->count + 1) * 2 > r->cap) {
      mgopt__rro_grow(r);
      if (r->oom) return;
    }
    h = mgopt__rro_hash(op);
    j = (size_t)h & (r->cap - 1);
    while (r->tab[j]) {
      mgopt_op *first = r->tab[j];
      if (r->hashes[j] == h && mgopt__rro_equal(first, op)) break;
      j = (j + 1) & (r->cap - 1);
    }
    if (r->tab[j]) {
      if (mgopt__pu_is_block_output(op->outs[0])) continue;
      mgopt_value_replace_all_uses(op->outs[0], r->tab[j]->outs[0]);
      mgopt_op_erase(op);
      r->removed++;
      continue;
    }
    r->tab[j] = op;
    r->hashes[j] = h;
    r->count++;
  }
}

static mgopt_status mgopt__rro_run(mgopt_pass_ctx *ctx) {
  mgopt__rro r;
  int32_t i;
  memset(&r, 0, sizeof r);
  r.p = ctx->program;
  for (i = 0; i < mgopt_program_function_count(ctx->program) && !r.oom; i++)
    mgopt__rro_block(&r, mgopt_program_function_at(ctx->program, i)->body, 0);
  if (r.tab) mgopt__heap_free(&r.p->alloc, r.tab, r.cap * sizeof(mgopt_op *));
  if (r.hashes) mgopt__heap_free(&r.p->alloc, r.hashes, r.cap * sizeof(uint64_t));
  ctx->rewrites += r.removed;
  if (r.oom) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "remove_redundant_ops: out of memory");
  return MGOPT_OK;
}

MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_remove_redundant_ops = {
    "common::remove_redundant_ops", "cleanup", "keep one of several ops with identical inputs", 0, NULL,
    mgopt__rro_run};
/* src/passes/registry.c — the table of built-in passes and named pipelines. */

static const mgopt_pass_def *const mgopt__builtin_passes[] = {
    /* issue 2: the first passes */
    &mgopt__pass_dead_code_elimination,
    &mgopt__pass_noop_elimination,
    &mgopt__pass_remove_redundant_ops,
};

static const mgopt_pipeline_def mgopt__builtin_pipelines[] = {
    {"default", "noop_elimination,remove_redundant_ops,dead_code_elimination", "the default optimization pipeline"},
};

static const mgopt_registry mgopt__builtin_registry = {
    mgopt__builtin_passes, MGOPT__ARRAY_COUNT(mgopt__builtin_passes),
    mgopt__builtin_pipelines, MGOPT__ARRAY_COUNT(mgopt__builtin_pipelines),
    mgopt_fold_op, NULL};

MGOPTDEF const mgopt_registry *mgopt_builtin_registry(void) { return &mgopt__builtin_registry; }
#endif /* MGOPT__PASSES_IMPLEMENTATION_DONE */
#endif /* MGOPT_IMPLEMENTATION */
/*
------------------------------------------------------------------------------
This software is available under 2 licenses -- choose whichever you prefer.
------------------------------------------------------------------------------
ALTERNATIVE A - MIT License
Copyright (c) 2026 the mgopt authors
Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:
The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
ALTERNATIVE B - Public Domain (www.unlicense.org)
This is free and unencumbered software released into the public domain.
Anyone is free to copy, modify, publish, use, compile, sell, or distribute this
software, either in source code form or as a compiled binary, for any purpose,
commercial or non-commercial, and by any means.
In jurisdictions that recognize copyright laws, the author or authors of this
software dedicate any and all copyright interest in the software to the public
domain. We make this dedication in the hope that it will be of use to
software's heirs and successors. We intend this dedication to be an overt act of
relinquishment in perpetuity of all present and future rights to this software
under copyright law.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN
ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION
WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
------------------------------------------------------------------------------
*/
