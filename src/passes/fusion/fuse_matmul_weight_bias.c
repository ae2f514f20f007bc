/* src/passes/fusion/fuse_matmul_weight_bias.c — common::fuse_matmul_weight_bias: matmul by a constant matrix followed by add / sub of a constant becomes linear.

   Spec: mil_graph_passes.txt, "Convert matmul + add/sub to linear whenever
   possible"; reference §3.21.

   Before:
     main(%x: (2, 3, fp32)) {
       %w: (3, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6]])
       %m: (2, 2, fp32) = matmul(x=%x, y=%w, transpose_x=false, transpose_y=false)
       %c: (2, fp32)* = const(val=[10, 20])
       %y: (2, 2, fp32) = sub(x=%c, y=%m)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %y_weight: (2, 3, fp32)* = const(val=[[-1, -3, -5], [-2, -4, -6]])
       %y_bias: (2, fp32)* = const(val=[10, 20])
       %y: (2, 2, fp32) = linear(x=%x, weight=%y_weight, bias=%y_bias)
     } -> (%y)

   Fires on: a matmul with exactly one constant operand W of rank 2 that
   nothing else reads, constant transpose_x / transpose_y, the other operand
   of rank >= 2, and an output that is not a block output with one reader, an
   add or sub whose other operand is a constant c. linear(x, A, b) computes
   x A^T + b, so:
   - W is y: out = x' W' with W' = W^T if transpose_y else W, of shape
     [K, N]; c must have N elements along the last axis (leading dims 1, rank
     at most the output's). The result is linear(x', A, b) with A = W'^T
     ([N, K]: W itself when transpose_y, its transposed data otherwise) and
     x' = transpose(x) over the last two axes when transpose_x.
   - W is x: out = W' y' with W' = W^T if transpose_x else W, of shape
     [M, K], and out^T = y'^T W'^T = linear(y'^T, W', b) with the bias along
     the rows: c must have shape [..., M, 1] (leading dims 1). Only when
     transpose_y is set (y'^T is y itself), so the result,
     transpose(linear(y, W', b)), has no more ops than the matmul and add.
   The sign: add(mm, c) and add(c, mm): A, b = c; sub(mm, c): A, b = -c;
   sub(c, mm): -A, b = c (c - xW = x(-W) + c: the weight is negated, never
   the bias alone). The matmul, the add / sub and the constants only they read
   are erased; the last new op takes the add / sub output's name.
   Must not fire: two constant or two run-time operands; a weight of another
   rank, read by another op too, or another dtype; an operand of rank < 2; a
   transpose flag that is not constant; a bias of another length or layout,
   or of higher rank than the output (it would broadcast it), or not constant;
   W as x without transpose_y (two transposes would be added); a matmul
   output that is a block output or has another reader; a target that cannot
   express the linear (mgopt_program_target_accepts).
   Numeric contract: exact. The weight and bias are only transposed and
   negated, in their own dtype (fp16 stays fp16); no value is rounded.
   Cost: worklist patterns, O(matmuls + weight elements of the fused ones).
   A transposed weight remembers the bytes it came from
   (mgopt__tensor_transpose2d), so ONNX export, which writes a linear over a
   rank > 2 input as MatMul by the weight's transpose, writes those bytes
   without transposing again. */
#include "../../passes_internal.h"

/* the value of bool flag `name` of op, or -1 when it is a run-time operand */
static int mgopt__fmw_flag(const mgopt_op *op, const char *name) {
  const mgopt_value *v = mgopt_op_operand(op, name);
  if (v && !mgopt_value_const(v)) return -1;
  return mgopt_op_get_bool(op, name, 0) ? 1 : 0;
}

/* 1 when c has n elements laid out as [1, ..., 1, n] (col 0) or
   [1, ..., 1, n, 1] (col 1), rank at most max_rank. */
static int mgopt__fmw_bias_layout(const mgopt_tensor *c, int64_t n, int col, int32_t max_rank) {
  int32_t lead = c->rank - 1 - col;
  if (c->numel != n || lead < 0 || c->rank > max_rank) return 0;
  return c->shape[lead] == n && (!col || c->shape[c->rank - 1] == 1);
}

/* transpose of v's last two axes before pos, named `name`; NULL on failure */
static mgopt_op *mgopt__fmw_transpose(mgopt_rewriter *rw, mgopt_op *pos, mgopt_value *v, const char *name) {
  static const char *const slot[1] = {"x"};
  int64_t perm[MGOPT_MAX_RANK], r = v->type.rank, i;
  mgopt_op *t;
  if (r < 2 || r > MGOPT_MAX_RANK) return NULL;
  for (i = 0; i < r; i++) perm[i] = i;
  perm[r - 2] = r - 1;
  perm[r - 1] = r - 2;
  t = mgopt_rw_create(rw, pos, "transpose", name, 1, slot, &v, 1);
  if (!t) return NULL;
  if (mgopt_op_set_ints(t, "perm", perm, r) != MGOPT_OK || mgopt_op_infer(mgopt_rw_program(rw), t, NULL) != MGOPT_OK) {
    mgopt_rw_erase(rw, t);
    return NULL;
  }
  return t;
}

static int mgopt__fmw_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const slots[3] = {"x", "weight", "bias"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *mx = mgopt_op_operand(op, "x"), *my = mgopt_op_operand(op, "y"), *out, *c, *w, *other, *vals[3];
  mgopt_tensor *wt, *ct, *nw = NULL, *nb;
  mgopt_op *user, *pre = NULL, *lin, *post = NULL, *made[3];
  mgopt_value *wv = NULL, *bv = NULL;
  const char *name;
  int64_t n, i;
  int tx = mgopt__fmw_flag(op, "transpose_x"), ty = mgopt__fmw_flag(op, "transpose_y");
  int w_is_x, first, sub, neg_w, transpose_w;
  int32_t nmade = 0;
  mgopt_dtype dt;
  MGOPT__UNUSED(ud);
  if (!mx || !my || op->nouts != 1 || tx < 0 || ty < 0) return 0;
  out = op->outs[0];
  if (mgopt__pu_is_block_output(out)) return 0;
  user = mgopt__pu_single_user(out);
  if (!user || (user->kind != MGOPT_OP_add && user->kind != MGOPT_OP_sub) || user->nouts != 1) return 0;
  first = mgopt_op_operand(user, "x") == out;
  c = mgopt_op_operand(user, first ? "y" : "x");
  if (!c || c == out || !(ct = mgopt_value_const(c))) return 0;
  if ((mgopt_value_const(mx) != NULL) == (mgopt_value_const(my) != NULL)) return 0;
  w_is_x = mgopt_value_const(mx) != NULL;
  w = w_is_x ? mx : my;
  other = w_is_x ? my : mx;
  wt = mgopt_value_const(w);
  dt = (mgopt_dtype)w->type.dtype;
  if (!mgopt_dtype_is_float(dt) || wt->dtype != dt || ct->dtype != dt || other->type.dtype != dt ||
      out->type.dtype != dt || c->type.dtype != dt)
    return 0;
  if (wt->rank != 2 || other->type.rank < 2 || w->nuses != 1 || mgopt__pu_is_block_output(w)) return 0;
  if (w_is_x && !ty) return 0;
  /* A: the linear's weight before the sign. W as y: A = W'^T, which is W when
     transpose_y. W as x: A = W', which is W unless transpose_x. */
  transpose_w = w_is_x ? tx : !ty;
  n = transpose_w ? wt->shape[1] : wt->shape[0];
  if (!mgopt__fmw_bias_layout(ct, n, w_is_x, out->type.rank)) return 0;
  sub = user->kind == MGOPT_OP_sub;
  neg_w = sub && !first;
  name = mgopt__pu_value_name(user->outs[0]);
  if (transpose_w || neg_w) {
    nw = transpose_w ? mgopt__tensor_transpose2d(p, wt) : mgopt_tensor_clone(p, wt);
    if (!nw) return 0;
    if (neg_w)
      for (i = 0; i < nw->numel; i++) mgopt_tensor_set_f64(nw, i, -mgopt_tensor_get_f64(nw, i));
  }
  nb = mgopt_tensor_new(p, dt, 1, &n);
  if (!nb) return 0;
  for (i = 0; i < n; i++) mgopt_tensor_set_f64(nb, i, sub && first ? -mgopt_tensor_get_f64(ct, i) : mgopt_tensor_get_f64(ct, i));
  if (!w_is_x && tx) {
    pre = mgopt__fmw_transpose(rw, user, other, mgopt__pu_name2(p, name, "_x_transposed"));
    if (!pre) return 0;
  }
  wv = nw ? mgopt_rw_const(rw, user, mgopt__pu_name2(p, name, "_weight"), nw) : w;
  bv = mgopt_rw_const(rw, user, mgopt__pu_name2(p, name, "_bias"), nb);
  vals[0] = pre ? pre->outs[0] : other;
  vals[1] = wv;
  vals[2] = bv;
  lin = wv && bv ? mgopt_rw_create(rw, user, "linear", w_is_x ? mgopt__pu_name2(p, name, "_linear") : name, 3, slots,
                                   vals, 1)
                 : NULL;
  /* W as x: a transpose after the linear, made once the linear's rank is known */
  if (lin && w_is_x && mgopt_op_infer(p, lin, NULL) == MGOPT_OK) post = mgopt__fmw_transpose(rw, user, lin->outs[0], name);
  if (!lin || (w_is_x && !post)) {
    if (lin) mgopt_rw_erase(rw, lin);
    if (pre) mgopt_rw_erase(rw, pre);
    if (bv) mgopt__pu_erase_if_dead(rw, bv->def);
    if (nw && wv) mgopt__pu_erase_if_dead(rw, wv->def);
    return 0;
  }
  if (pre) made[nmade++] = pre;
  made[nmade++] = lin;
  if (post) made[nmade++] = post;
  return mgopt__pu_fuse_finish_named(rw, made, nmade, user, &op, 1);
}

static const mgopt_pattern mgopt__fmw_patterns[] = {
    {"matmul_add_sub", MGOPT_OP_matmul, NULL, 1, mgopt__fmw_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_matmul_weight_bias,
                           "matmul by a constant matrix followed by add / sub of a constant becomes linear",
                           mgopt__fmw_patterns);
