/* src/passes/fusion/fuse_elementwise_to_batchnorm.c — common::fuse_elementwise_to_batchnorm: a per-channel mul then add of constants on a rank-4 tensor becomes batch_norm.

   Spec: mil_graph_passes.txt, "Fold mul + add into a batchnorm if the const
   feeding into the mul/add is of shape (1,C,1,1) or (C,1,1) and input to mul
   is of rank 4"; reference §3.25.

   Before:
     main(%x: (1, 2, 3, 3, fp32)) {
       %g: (1, 2, 1, 1, fp32)* = const(val=[[[[2]], [[3]]]])
       %m: (1, 2, 3, 3, fp32) = mul(x=%x, y=%g)
       %b: (2, 1, 1, fp32)* = const(val=[[[1]], [[-1]]])
       %y: (1, 2, 3, 3, fp32) = add(x=%m, y=%b)
     } -> (%y)
   After:
     main(%x: (1, 2, 3, 3, fp32)) {
       %y_mean: (2, fp32)* = const(val=[0, 0])
       %y_variance: (2, fp32)* = const(val=[1, 1])
       %y_gamma: (2, fp32)* = const(val=[2, 3])
       %y_beta: (2, fp32)* = const(val=[1, -1])
       %y: (1, 2, 3, 3, fp32) = batch_norm(x=%x, mean=%y_mean, variance=%y_variance, gamma=%y_gamma, beta=%y_beta, epsilon=0.0)
     } -> (%y)

   Fires on: mul(x, g) (either operand order) with x of rank 4 whose channel
   dim (axis 1) is static C != 1, g a constant of shape (1, C, 1, 1) or
   (C, 1, 1), the mul's output not a block output with one reader, an add
   (either order) whose other operand is a constant b of one of those shapes.
   The result is batch_norm(x, mean = 0, variance = 1, gamma = g, beta = b,
   epsilon = 0) named after the add's output: (x - 0) / sqrt(1 + 0) * g + b
   is g x + b exactly (the reference keeps batch_norm's default epsilon 1e-5,
   which scales every output by 1 / sqrt(1 + 1e-5)). The mul, the add and the
   constants only they read are erased.
   Must not fire: x of another rank or a channel dim that is 1, symbolic or
   unknown; a constant of another shape (per-element or per-row, C = 1); a
   run-time g or b; dtypes that differ or are not float; a mul output that is
   a block output or has another reader; a target that cannot express
   batch_norm (mgopt_program_target_accepts).
   Numeric contract: exact. g and b are copied in their own dtype (fp16
   stays fp16); mean, variance and epsilon are 0, 1 and 0, so batch_norm
   computes g x + b.
   Cost: worklist patterns, O(muls + C for the fused ones). */
#include "../../passes_internal.h"

/* 1 when t has shape (1, c, 1, 1) or (c, 1, 1) */
static int mgopt__feb_per_channel(const mgopt_tensor *t, int64_t c) {
  if (t->rank == 4) return t->shape[0] == 1 && t->shape[1] == c && t->shape[2] == 1 && t->shape[3] == 1;
  if (t->rank == 3) return t->shape[0] == c && t->shape[1] == 1 && t->shape[2] == 1;
  return 0;
}

/* The operand of binary op that is not v; NULL when both are v. */
static mgopt_value *mgopt__feb_other(const mgopt_op *op, const mgopt_value *v) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y");
  if (x == v) return y == v ? NULL : y;
  return y == v ? x : NULL;
}

/* a new const (c) of dtype dt, filled from src (NULL: all `fill`), before pos */
static mgopt_value *mgopt__feb_vec(mgopt_rewriter *rw, mgopt_op *pos, const char *name, mgopt_dtype dt, int64_t c,
                                    const mgopt_tensor *src, double fill) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_tensor *t = mgopt_tensor_new(p, dt, 1, &c);
  int64_t i;
  if (!t) return NULL;
  for (i = 0; i < c; i++) mgopt_tensor_set_f64(t, i, src ? mgopt_tensor_get_f64(src, i) : fill);
  return mgopt_rw_const(rw, pos, name, t);
}

static int mgopt__feb_fuse(mgopt_rewriter *rw, mgopt_op *mul, void *ud) {
  static const char *const slots[5] = {"x", "mean", "variance", "gamma", "beta"};
  static const char *const suffix[4] = {"_mean", "_variance", "_gamma", "_beta"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *a = mgopt_op_operand(mul, "x"), *bv = mgopt_op_operand(mul, "y"), *x, *g, *out, *beta, *vals[5];
  mgopt_tensor *gt, *bt;
  mgopt_op *add, *bn;
  mgopt_dtype dt;
  const char *name;
  int64_t c;
  int k;
  MGOPT__UNUSED(ud);
  if (!a || !bv || mul->nouts != 1) return 0;
  if (mgopt_value_const(bv)) x = a, g = bv;
  else x = bv, g = a;
  gt = mgopt_value_const(g);
  if (!gt || mgopt_value_const(x) || x->type.rank != 4 || !mgopt_dim_is_static(x->type.dims[1])) return 0;
  c = x->type.dims[1].v;
  out = mul->outs[0];
  if (c == 1 || mgopt__pu_is_block_output(out)) return 0;
  add = mgopt__pu_single_user(out);
  if (!add || add->kind != MGOPT_OP_add || add->nouts != 1) return 0;
  beta = mgopt__feb_other(add, out);
  if (!beta || !(bt = mgopt_value_const(beta))) return 0;
  dt = (mgopt_dtype)x->type.dtype;
  if (!mgopt_dtype_is_float(dt) || gt->dtype != dt || bt->dtype != dt || out->type.dtype != dt ||
      add->outs[0]->type.dtype != dt)
    return 0;
  if (!mgopt__feb_per_channel(gt, c) || !mgopt__feb_per_channel(bt, c)) return 0;
  name = mgopt__pu_value_name(add->outs[0]);
  vals[0] = x;
  vals[1] = mgopt__feb_vec(rw, add, mgopt__pu_name2(p, name, suffix[0]), dt, c, NULL, 0.0);
  vals[2] = mgopt__feb_vec(rw, add, mgopt__pu_name2(p, name, suffix[1]), dt, c, NULL, 1.0);
  vals[3] = mgopt__feb_vec(rw, add, mgopt__pu_name2(p, name, suffix[2]), dt, c, gt, 0.0);
  vals[4] = mgopt__feb_vec(rw, add, mgopt__pu_name2(p, name, suffix[3]), dt, c, bt, 0.0);
  bn = NULL;
  if (vals[1] && vals[2] && vals[3] && vals[4]) bn = mgopt_rw_create(rw, add, "batch_norm", name, 5, slots, vals, 1);
  if (!bn || mgopt_op_set_float(bn, "epsilon", 0.0) != MGOPT_OK) {
    if (bn) mgopt_rw_erase(rw, bn);
    for (k = 1; k < 5; k++)
      if (vals[k]) mgopt__pu_erase_if_dead(rw, vals[k]->def);
    return 0;
  }
  return mgopt__pu_fuse_finish_named(rw, &bn, 1, add, &mul, 1);
}

static const mgopt_pattern mgopt__feb_patterns[] = {
    {"mul_add_batch_norm", MGOPT_OP_mul, NULL, 1, mgopt__feb_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_elementwise_to_batchnorm,
                           "a per-channel mul then add of constants on a rank-4 tensor becomes batch_norm (epsilon 0)",
                           mgopt__feb_patterns);
