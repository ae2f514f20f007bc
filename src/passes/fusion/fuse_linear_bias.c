/* src/passes/fusion/fuse_linear_bias.c — common::fuse_linear_bias: linear followed by add / sub of a constant becomes one linear.

   Spec: mil_graph_passes.txt, "Convert linear + add/sub to a single linear by
   updating the weight and bias of the linear layer"; reference §3.21.

   Before:
     main(%x: (2, 2, fp32)) {
       %w: (3, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6]])
       %b: (3, fp32)* = const(val=[1, 2, 3])
       %l: (2, 3, fp32) = linear(x=%x, weight=%w, bias=%b)
       %c: (1, 3, fp32)* = const(val=[[10, 20, 30]])
       %y: (2, 3, fp32) = sub(x=%c, y=%l)
     } -> (%y)
   After:
     main(%x: (2, 2, fp32)) {
       %y_weight: (3, 2, fp32)* = const(val=[[-1, -2], [-3, -4], [-5, -6]])
       %y_bias: (3, fp32)* = const(val=[9, 18, 27])
       %y: (2, 3, fp32) = linear(x=%x, weight=%y_weight, bias=%y_bias)
     } -> (%y)

   Fires on: a linear with a constant weight [Dout, Din] and a constant bias
   (Dout) or none (zeros), whose output is not a block output and has exactly
   one reader, an add or sub whose other operand is a constant c of Dout
   elements with last dim Dout and rank at most the linear's output rank (so
   the sum keeps the linear's shape). The result is linear(x, W', b') named
   after the add / sub output:
     add(linear, c), add(c, linear): W' = W,  b' = b + c
     sub(linear, c):                 W' = W,  b' = b - c
     sub(c, linear):                 W' = -W, b' = c - b
   (c - linear negates the weight as well as the bias: c - (xW^T + b) =
   x(-W)^T + (c - b)). The old linear, the add / sub and the constants only
   they read are erased.
   Must not fire: a run-time weight, bias or c; c of another element count,
   last dim or a higher rank (it would broadcast the output); dtypes that
   differ or are not float; a linear output that is a block output or has
   another reader; add(linear, linear); a target that cannot express the new
   linear (mgopt_program_target_accepts).
   Numeric contract: b' is computed in double from the stored values and
   rounded once to the weight's dtype (fp16 stays fp16); -W is exact.
   Cost: worklist patterns, O(linears + weight elements of the fused ones). */
#include "../../passes_internal.h"

/* the float dtype shared by every value given (NULLs skipped), else UNKNOWN */
static mgopt_dtype mgopt__flb_common_float(const mgopt_value *const *v, int32_t n) {
  mgopt_dtype dt = MGOPT_DT_UNKNOWN;
  int32_t i;
  for (i = 0; i < n; i++) {
    if (!v[i]) continue;
    if (dt == MGOPT_DT_UNKNOWN) dt = (mgopt_dtype)v[i]->type.dtype;
    if ((mgopt_dtype)v[i]->type.dtype != dt) return MGOPT_DT_UNKNOWN;
  }
  return mgopt_dtype_is_float(dt) ? dt : MGOPT_DT_UNKNOWN;
}

static int mgopt__flb_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const slots[3] = {"x", "weight", "bias"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "weight"), *b = mgopt_op_operand(op, "bias");
  mgopt_value *out, *c, *vals[3];
  const mgopt_value *chk[5];
  mgopt_tensor *wt, *bt = NULL, *ct, *nb, *nw = NULL;
  mgopt_op *user, *lin;
  mgopt_dtype dt;
  const char *name;
  int64_t dout, i;
  int first, neg_w, sub;
  MGOPT__UNUSED(ud);
  if (!x || !w || op->nouts != 1 || mgopt__pu_fused_act(op)) return 0;
  out = op->outs[0];
  if (mgopt__pu_is_block_output(out)) return 0;
  user = mgopt__pu_single_user(out);
  if (!user || (user->kind != MGOPT_OP_add && user->kind != MGOPT_OP_sub) || user->nouts != 1) return 0;
  first = mgopt_op_operand(user, "x") == out;
  c = mgopt_op_operand(user, first ? "y" : "x");
  if (!c || c == out) return 0;
  wt = mgopt_value_const(w);
  ct = mgopt_value_const(c);
  if (b) bt = mgopt_value_const(b);
  if (!wt || !ct || (b && !bt)) return 0;
  chk[0] = x, chk[1] = w, chk[2] = b, chk[3] = c, chk[4] = out;
  dt = mgopt__flb_common_float(chk, 5);
  if (dt == MGOPT_DT_UNKNOWN || wt->dtype != dt || ct->dtype != dt || (bt && bt->dtype != dt)) return 0;
  if (wt->rank != 2) return 0;
  dout = wt->shape[0];
  if (bt && (bt->rank != 1 || bt->shape[0] != dout)) return 0;
  if (ct->numel != dout || ct->rank < 1 || ct->shape[ct->rank - 1] != dout || out->type.rank < ct->rank) return 0;
  sub = user->kind == MGOPT_OP_sub;
  neg_w = sub && !first;
  nb = mgopt_tensor_new(p, dt, 1, &dout);
  if (!nb) return 0;
  for (i = 0; i < dout; i++) {
    double bv = bt ? mgopt_tensor_get_f64(bt, i) : 0.0, cv = mgopt_tensor_get_f64(ct, i);
    mgopt_tensor_set_f64(nb, i, !sub ? bv + cv : first ? bv - cv : cv - bv);
  }
  if (neg_w) {
    nw = mgopt_tensor_new(p, dt, 2, wt->shape);
    if (!nw) return 0;
    for (i = 0; i < wt->numel; i++) mgopt_tensor_set_f64(nw, i, -mgopt_tensor_get_f64(wt, i));
  }
  name = mgopt__pu_value_name(user->outs[0]);
  vals[0] = x;
  vals[1] = nw ? mgopt_rw_const(rw, user, mgopt__pu_name2(p, name, "_weight"), nw) : w;
  vals[2] = mgopt_rw_const(rw, user, mgopt__pu_name2(p, name, "_bias"), nb);
  if (!vals[1] || !vals[2]) return 0;
  lin = mgopt_rw_create(rw, user, "linear", name, 3, slots, vals, 1);
  if (!lin) {
    mgopt__pu_erase_if_dead(rw, vals[2]->def);
    if (nw) mgopt__pu_erase_if_dead(rw, vals[1]->def);
    return 0;
  }
  return mgopt__pu_fuse_finish_named(rw, &lin, 1, user, &op, 1);
}

static const mgopt_pattern mgopt__flb_patterns[] = {
    {"linear_add_sub", MGOPT_OP_linear, NULL, 1, mgopt__flb_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_linear_bias,
                           "fold an add / sub of a constant after a constant linear into its weight and bias",
                           mgopt__flb_patterns);
