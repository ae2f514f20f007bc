/* src/passes/fusion/fuse_pad_conv.c — common::fuse_pad_conv: a constant-zero pad melds into the conv (or, where exact, the pool) that reads it; a pad before a transpose into a conv moves next to it.

   Spec: mil_graph_passes.txt, "When we observe pad -> transpose -> conv, we
   move the pad to be next to conv. This allows us to meld pad + conv if
   possible"; reference mil-passes.md §3.20. ONNX Runtime's basic level does
   the meld (a constant-zero Pad into Conv's pads).

   Before:
     main(%x: (1, 2, 4, 4, fp32)) {
       %p: (8, int32)* = const(val=[0, 0, 0, 0, 1, 1, 2, 0])
       %a: (1, 2, 6, 6, fp32) = pad(x=%x, pad=%p, mode="constant", constant_val=0.0)
       %w: (3, 2, 3, 3, fp32)* = const(val=[[[[1, 1, 1], [1, 1, 1], [1, 1, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]], [[[1, 1, 1], [1, 1, 1], [1, 1, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]], [[[1, 1, 1], [1, 1, 1], [1, 1, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]]])
       %y: (1, 3, 4, 4, fp32) = conv(x=%a, weight=%w, pad_type="valid")
     } -> (%y)
   After:
     main(%x: (1, 2, 4, 4, fp32)) {
       %w: (3, 2, 3, 3, fp32)* = const(val=[[[[1, 1, 1], [1, 1, 1], [1, 1, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]], [[[1, 1, 1], [1, 1, 1], [1, 1, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]], [[[1, 1, 1], [1, 1, 1], [1, 1, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]]])
       %y: (1, 3, 4, 4, fp32) = conv(x=%x, weight=%w, pad_type="custom", pad=[1, 1, 2, 0])
     } -> (%y)

   Fires on (meld): a conv whose x is a pad in "constant" mode with
   constant_val 0, const non-negative amounts that leave the batch and
   channel axes alone, and the conv's rank; the conv's pad_type is "valid"
   or "custom" (its amounts add up). The conv reads the pad's input with
   pad_type "custom"; the pad stays while something else reads it.
   Fires on (move, the reference's rewrite): a pad, not a block output, whose
   only reader is a transpose that has a conv or conv_transpose among its
   readers: transpose(pad(x)) becomes pad(transpose(x)) with the amounts
   permuted (per axis, amounts[perm[i]] for output axis i), any mode and
   constant_val kept. The meld then applies when it can. Both layouts the
   reference meets are covered: NCHW (pad → conv) and channel-last
   (pad → transpose → conv).
   Fires on (pool meld, mgopt's, as ONNX Runtime's basic level does): a
   constant pad of the spatial axes read by a max_pool or avg_pool, when
   the pool's own padding gives the same values: avg_pool that counts the
   padding in the average (exclude_padding_from_average false) with a pad
   of zeros; max_pool (whose padding is -inf) with a pad of -inf, or of
   zeros on an input that is never negative by its producer (relu, relu6,
   sigmoid, softplus, abs, exp, square, clip with a constant min >= 0; a
   NaN stays a NaN either way). The pool has pad_type "valid" or "custom"
   and no ceil_mode, each total amount stays below the kernel on its axis
   (ONNX Runtime refuses a pool whose pad reaches its kernel), and for
   avg_pool the begin and end amounts are equal on each axis (ONNX
   Runtime's opset-19 AveragePool divided asymmetric count_include_pad
   windows wrongly before 1.25: onnxruntime#26708).
   Must not fire: a pad in reflect or replicate mode, or with a nonzero
   constant_val, into a conv (meld); run-time or negative amounts; padding
   on the batch or channel axis; a conv with pad_type "same" or
   "same_lower"; a conv_transpose (its pad crops the output); a pad read by
   several ops before a transpose (moving it would copy it: the program
   would grow); declared types that do not allow the replacement; into a
   pool: a zero pad before max_pool on an input that may be negative, a
   zero pad before avg_pool that excludes the padding from the average, a
   nonzero pad value (other than -inf for max_pool), ceil_mode, pad_type
   "same", a total amount that reaches the kernel, asymmetric amounts into
   avg_pool.
   Cost: worklist patterns, O(convs + pools + pads). */
#include "../../passes_internal.h"

/* The pad's amounts per axis of its rank-r input: rows[2i], rows[2i+1]. 0 when not const or malformed. */
static int mgopt__fpc_rows(mgopt_program *p, const mgopt_op *pad, int32_t r, int64_t *rows) {
  const int64_t *v = NULL;
  int64_t n = mgopt_op_get_ints(p, pad, "pad", &v), first, k;
  if (n < 0 || n % 2 || n / 2 > r || r < 1 || r > MGOPT_MAX_RANK) return 0;
  first = r - n / 2;
  for (k = 0; k < r; k++) {
    rows[2 * k] = k < first ? 0 : v[2 * (k - first)];
    rows[2 * k + 1] = k < first ? 0 : v[2 * (k - first) + 1];
  }
  return 1;
}

static int mgopt__fpc_is_mode(const mgopt_op *pad, const char *mode) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(pad, "mode", &n);
  if (!s) s = "constant", n = 8;
  return n == strlen(mode) && memcmp(s, mode, n) == 0;
}

/* Restores attribute `name` of op to *saved (absent when had is 0). */
static void mgopt__fpc_restore(mgopt_op *op, const char *name, int had, const mgopt_attr *saved) {
  if (had) (void)mgopt_op_set_attr(op, saved);
  else mgopt_op_remove_attr(op, name);
}

/* 1 when conv, reading x with pad_type "custom" and pad np[0..n), still has
   the output type it declares; the conv is left as it was. */
static int mgopt__fpc_try(mgopt_program *p, mgopt_op *conv, mgopt_value *a, mgopt_value *x, const int64_t *np,
                          int64_t n) {
  const mgopt_attr *pa = mgopt_op_attr(conv, "pad_type"), *pp = mgopt_op_attr(conv, "pad");
  mgopt_attr spt, spad;
  int ok;
  memset(&spt, 0, sizeof spt);
  memset(&spad, 0, sizeof spad);
  if (pa) spt = *pa;
  if (pp) spad = *pp;
  ok = mgopt_op_set_string(conv, "pad_type", "custom") == MGOPT_OK && mgopt_op_set_ints(conv, "pad", np, n) == MGOPT_OK &&
       mgopt_op_set_operand(conv, "x", x) == MGOPT_OK;
  ok = ok && mgopt__pu_infer_fits(p, conv);
  (void)mgopt_op_set_operand(conv, "x", a);
  mgopt__fpc_restore(conv, "pad_type", pa != NULL, &spt);
  mgopt__fpc_restore(conv, "pad", pp != NULL, &spad);
  return ok;
}

static int mgopt__fpc_meld(mgopt_rewriter *rw, mgopt_op *conv, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *a = mgopt_op_operand(conv, "x"), *x;
  mgopt_op *pad = mgopt__pu_def_of(a, MGOPT_OP_pad);
  int64_t rows[2 * MGOPT_MAX_RANK], np[2 * MGOPT_MAX_RANK], k;
  const int64_t *cp = NULL;
  int32_t r, sp;
  size_t ptn = 0;
  const char *pt = mgopt_op_get_string(conv, "pad_type", &ptn);
  int custom;
  MGOPT__UNUSED(ud);
  if (!pad || conv->nouts != 1 || !(x = mgopt_op_operand(pad, "x"))) return 0;
  r = x->type.rank;
  if (r < 3 || r != a->type.rank || !mgopt__fpc_is_mode(pad, "constant") ||
      mgopt_op_get_float(pad, "constant_val", 0.0) != 0.0 || !mgopt__fpc_rows(p, pad, r, rows))
    return 0;
  if (!pt) pt = "valid", ptn = 5;
  custom = ptn == 6 && memcmp(pt, "custom", 6) == 0;
  if (!custom && !(ptn == 5 && memcmp(pt, "valid", 5) == 0)) return 0;
  sp = r - 2;
  if (rows[0] || rows[1] || rows[2] || rows[3]) return 0;
  if (custom) {
    int64_t n = mgopt_op_get_ints(p, conv, "pad", &cp);
    if (n >= 0 && n != 2 * sp) return 0;
    if (n < 0) cp = NULL;
  }
  for (k = 0; k < 2 * sp; k++) {
    if (rows[4 + k] < 0) return 0;
    np[k] = rows[4 + k] + (cp ? cp[k] : 0);
    if (np[k] < rows[4 + k]) return 0; /* overflow */
  }
  if (!mgopt__fpc_try(p, conv, a, x, np, 2 * sp)) return 0;
  if (mgopt_op_set_string(conv, "pad_type", "custom") != MGOPT_OK || mgopt_op_set_ints(conv, "pad", np, 2 * sp) != MGOPT_OK)
    return 0;
  mgopt_rw_set_operand(rw, conv, "x", x);
  mgopt_rw_modified(rw, conv);
  mgopt__pu_erase_with_consts(rw, pad);
  return 1;
}

/* 1 when every value of v is >= 0 or NaN, by its producer: relu, relu6,
   sigmoid, softplus, abs, exp, square, a clip whose constant alpha is >= 0. */
static int mgopt__fpc_nonneg(const mgopt_value *v) {
  const mgopt_op *d = v->def;
  const mgopt_value *a;
  double lo;
  if (!d) return 0;
  switch (d->kind) {
  case MGOPT_OP_relu:
  case MGOPT_OP_relu6:
  case MGOPT_OP_sigmoid:
  case MGOPT_OP_softplus:
  case MGOPT_OP_abs:
  case MGOPT_OP_exp:
  case MGOPT_OP_square:
    return 1;
  case MGOPT_OP_clip:
    a = mgopt_op_operand(d, "alpha");
    if (a && !mgopt_value_const(a)) return 0;
    if (!a && !mgopt_op_attr(d, "alpha")) return 0;
    lo = mgopt_op_get_float(d, "alpha", -1.0);
    return lo >= 0.0;
  default:
    return 0;
  }
}

/* The pad is exactly what the pool's own padding does: avg_pool counting the
   padding in the average (count_include_pad) with a pad of zeros; max_pool
   with a pad of -inf, or of zeros on an input that is never negative (its
   own padding is -inf: a 0 never wins against an element >= 0). */
static int mgopt__fpc_pool_exact(const mgopt_op *pool, const mgopt_op *pad, const mgopt_value *x) {
  double c = mgopt_op_get_float(pad, "constant_val", 0.0);
  if (pool->kind == MGOPT_OP_avg_pool) return c == 0.0 && !mgopt_op_get_bool(pool, "exclude_padding_from_average", 0);
  return (c < 0.0 && c * 2.0 == c) || (c == 0.0 && mgopt__fpc_nonneg(x));
}

/* A constant pad of the spatial axes melds into the max_pool or avg_pool
   that reads it when that is exact (mgopt__fpc_pool_exact), the pool has no
   ceil_mode (a window that starts in the right padding would then count
   differently) and pad_type "valid" or "custom", and every total amount
   stays below the kernel on its axis (ONNX Runtime refuses a pool whose pad
   is not smaller than its kernel). */
static int mgopt__fpc_pool(mgopt_rewriter *rw, mgopt_op *pool, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *a = mgopt_op_operand(pool, "x"), *x;
  mgopt_op *pad = a ? mgopt__pu_def_of(a, MGOPT_OP_pad) : NULL;
  int64_t rows[2 * MGOPT_MAX_RANK], np[2 * MGOPT_MAX_RANK], k, nk, n;
  const int64_t *cp = NULL, *ks = NULL;
  int32_t r, sp;
  size_t ptn = 0;
  const char *pt = mgopt_op_get_string(pool, "pad_type", &ptn);
  MGOPT__UNUSED(ud);
  if (!pad || pool->nouts != 1 || !(x = mgopt_op_operand(pad, "x"))) return 0;
  r = x->type.rank;
  if (r < 3 || r != a->type.rank || !mgopt__fpc_is_mode(pad, "constant") || !mgopt__fpc_rows(p, pad, r, rows))
    return 0;
  if (mgopt_op_get_bool(pool, "ceil_mode", 0) || !mgopt__fpc_pool_exact(pool, pad, x)) return 0;
  if (!pt) pt = "valid", ptn = 5;
  sp = r - 2;
  if (ptn == 6 && memcmp(pt, "custom", 6) == 0) {
    n = mgopt_op_get_ints(p, pool, "pad", &cp);
    if (n >= 0 && n != 2 * sp) return 0;
    if (n < 0) cp = NULL;
  } else if (!(ptn == 5 && memcmp(pt, "valid", 5) == 0)) {
    return 0;
  }
  nk = mgopt_op_get_ints(p, pool, "kernel_sizes", &ks);
  if (nk != sp || rows[0] || rows[1] || rows[2] || rows[3]) return 0;
  for (k = 0; k < 2 * sp; k++) {
    if (rows[4 + k] < 0 || (cp && cp[k] < 0)) return 0;
    np[k] = rows[4 + k] + (cp ? cp[k] : 0);
    if (np[k] < rows[4 + k] || np[k] >= ks[k / 2]) return 0;
  }
  /* avg_pool: begin and end the same on each axis. ONNX Runtime's opset-19
     AveragePool read the wrong end pad for count_include_pad (#26708, fixed
     in 1.25): an asymmetric pad computed by Pad runs right on every runtime */
  if (pool->kind == MGOPT_OP_avg_pool)
    for (k = 0; k < sp; k++)
      if (np[2 * k] != np[2 * k + 1]) return 0;
  if (!mgopt__fpc_try(p, pool, a, x, np, 2 * sp)) return 0;
  if (mgopt_op_set_string(pool, "pad_type", "custom") != MGOPT_OK || mgopt_op_set_ints(pool, "pad", np, 2 * sp) != MGOPT_OK)
    return 0;
  mgopt_rw_set_operand(rw, pool, "x", x);
  mgopt_rw_modified(rw, pool);
  mgopt__pu_erase_with_consts(rw, pad);
  return 1;
}

static int mgopt__fpc_move(mgopt_rewriter *rw, mgopt_op *pad, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(pad, "x"), *po = pad->nouts == 1 ? pad->outs[0] : NULL, *tx[1];
  mgopt_op *t = po ? mgopt__pu_single_user(po) : NULL, *t2, *p2;
  int64_t rows[2 * MGOPT_MAX_RANK], nrows[2 * MGOPT_MAX_RANK], k, n, first = 0;
  const int64_t *perm = NULL;
  const mgopt_use *u;
  const char *tname;
  int32_t r;
  int any_conv = 0;
  static const char *const xs[1] = {"x"};
  MGOPT__UNUSED(ud);
  if (!t || t->kind != MGOPT_OP_transpose || t->nouts != 1 || mgopt__pu_is_block_output(po) || !x) return 0;
  r = x->type.rank;
  n = mgopt_op_get_ints(p, t, "perm", &perm);
  if (r < 1 || n != r || !mgopt__fpc_rows(p, pad, r, rows)) return 0;
  for (u = t->outs[0]->uses; u; u = u->next)
    if (u->op && (u->op->kind == MGOPT_OP_conv || u->op->kind == MGOPT_OP_conv_transpose)) any_conv = 1;
  if (!any_conv) return 0;
  for (k = 0; k < r; k++) {
    int64_t a = mgopt__pu_norm_axis(perm[k], r);
    if (a < 0) return 0;
    nrows[2 * k] = rows[2 * a];
    nrows[2 * k + 1] = rows[2 * a + 1];
  }
  while (first < r && nrows[2 * first] == 0 && nrows[2 * first + 1] == 0) first++;
  if (first == r) return 0; /* no padding: noop_elimination's */
  tname = mgopt__pu_value_name(t->outs[0]);
  tx[0] = x;
  t2 = mgopt_rw_create(rw, t, "transpose", mgopt__pu_name2(p, tname, "_unpadded"), 1, xs, tx, 1);
  if (!t2 || mgopt_op_set_ints(t2, "perm", perm, n) != MGOPT_OK || mgopt_op_infer(p, t2, NULL) != MGOPT_OK) {
    if (t2) mgopt_rw_erase(rw, t2);
    return 0;
  }
  tx[0] = t2->outs[0];
  p2 = mgopt_rw_create(rw, t, "pad", mgopt__pu_name2(p, tname, "_padded"), 1, xs, tx, 1);
  if (!p2) return 0;
  for (k = 0; k < pad->nattrs; k++)
    if (mgopt_op_set_attr(p2, &pad->attrs[k]) != MGOPT_OK) return 0;
  if (!mgopt__pu_set_ints_param(rw, p2, pad, "pad", nrows + 2 * first, 2 * (r - first)) ||
      mgopt_op_infer(p, p2, NULL) != MGOPT_OK || !mgopt__pu_adopt_type(p, p2->outs[0], t->outs[0])) {
    mgopt__pu_erase_with_consts(rw, p2);
    mgopt_rw_erase(rw, t2);
    return 0;
  }
  mgopt__pu_replace_value(rw, t->outs[0], p2->outs[0]);
  mgopt__pu_sync_op_name(p2);
  mgopt_rw_erase(rw, t);
  mgopt__pu_erase_with_consts(rw, pad);
  return 1;
}

static const mgopt_pattern mgopt__fpc_patterns[] = {
    {"pad_conv", MGOPT_OP_conv, NULL, 1, mgopt__fpc_meld, NULL},
    {"pad_transpose_conv", MGOPT_OP_pad, NULL, 1, mgopt__fpc_move, NULL},
    {"pad_max_pool", MGOPT_OP_max_pool, NULL, 1, mgopt__fpc_pool, NULL},
    {"pad_avg_pool", MGOPT_OP_avg_pool, NULL, 1, mgopt__fpc_pool, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_pad_conv,
                           "meld a constant-zero pad into the conv (or, where exact, the pool) that reads it; "
                           "move a pad before a "
                           "transpose into a conv next to the conv",
                           mgopt__fpc_patterns);
