/* src/passes/fusion/fuse_reduce_mean.c — common::fuse_reduce_mean: reduce_sum times 1/count (or divided by count) becomes reduce_mean.

   Spec: mil_graph_passes.txt, "Detect the reduce_sum —> mul/real_div
   pattern than can be mapped to reduce_mean"; reference §3.16.

   Before:
     main(%x: (3, 5, 6, fp32)) {
       %s: (3, fp32) = reduce_sum(x=%x, axes=[1, -1], keep_dims=false)
       %c: (fp32)* = const(val=0.033333335)
       %y: (3, fp32) = mul(x=%s, y=%c)
     } -> (%y)
   After:
     main(%x: (3, 5, 6, fp32)) {
       %y: (3, fp32) = reduce_mean(x=%x, axes=[1, -1], keep_dims=false)
     } -> (%y)

   Fires on: s = reduce_sum(x, axes) with axes constant, non-empty, each in
   range and none repeated, every reduced dim of x static and count, their
   product, nonzero; s has exactly one use, either
     mul(s, c) in either operand order with c equal to 1/count, or
     real_div(s, c) with c equal to count,
   c a one-element constant not broadcasting s (its rank at most s's),
   "equal" as c's dtype holds the value (an fp16 1/49 is 1.5e-5 off 1/49
   yet is the fp16 value of it). reduce_mean then differs from the pair
   by at most the rounding of its own division by count (one fused op for
   two).
   Option: inexact (bool, default false): true takes the reference's
   tolerances, |c - 1/count| < 1e-6 and |c - count| < 1e-2: a divisor of
   30.005 for a count of 30 becomes a mean, a relative change of 1.7e-4
   (fast_math runs it). x is float. The mul/real_div's
   output is replaced by reduce_mean with the reduce_sum's parameters as
   written (axes, keep_dims), named after it; the reduce_sum and the
   constant only they read are erased.
   Must not fire: no axes, empty axes, repeated axes; a symbolic, unknown or
   zero reduced dim; a reduce_sum with another use or that is a block
   output; a constant off (the reference's tests: 5.0 and 31.0 for a count
   of 30), not a constant, or broadcasting; real_div(c, s); a non-float x;
   a reduce_mean the program's target refuses (mgopt_program_target_accepts),
   or whose type does not fit the replaced value's declared type.
   Cost: worklist patterns rooted at reduce_sum, O(reduce_sums x rank). */
#include "../../passes_internal.h"

/* The number of elements each output of reduce_sum op sums, or 0 when it
   is not known statically (or the axes are not usable). */
static double mgopt__frm_count(mgopt_program *p, const mgopt_op *op, const mgopt_value *x) {
  const int64_t *axes = NULL;
  int64_t n = mgopt_op_get_ints(p, op, "axes", &axes), i, j, r = x->type.rank;
  double count = 1;
  if (n <= 0 || r < 0 || (mgopt_op_operand(op, "axes") && !mgopt_value_const(mgopt_op_operand(op, "axes")))) return 0;
  for (i = 0; i < n; i++) {
    int64_t a = mgopt__pu_norm_axis(axes[i], r);
    const mgopt_dim *d;
    if (a < 0) return 0;
    for (j = 0; j < i; j++)
      if (mgopt__pu_norm_axis(axes[j], r) == a) return 0;
    d = &x->type.dims[a];
    if (d->sym || d->v <= 0) return 0;
    count *= (double)d->v;
  }
  return count;
}

static int mgopt__frm_fuse(mgopt_rewriter *rw, mgopt_op *sum, void *ud) {
  int inexact = *(const int *)ud;
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(sum, "x"), *s, *kd, *vals[4];
  const char *names[4];
  mgopt_op *child, *mean;
  double count;
  int32_t i, n = 0;
  if (!x || sum->nouts != 1 || !mgopt_dtype_is_float((mgopt_dtype)x->type.dtype)) return 0;
  s = sum->outs[0];
  if (!(child = mgopt__pu_single_user(s)) || child->nouts != 1) return 0;
  kd = mgopt_op_operand(sum, "keep_dims");
  if ((kd && !mgopt_value_const(kd)) || !(count = mgopt__frm_count(p, sum, x))) return 0;
  if (child->kind == MGOPT_OP_mul) {
    if (mgopt__pu_with_scalar(child, MGOPT_OP_mul, 1.0 / count, inexact ? 1e-6 : 0.0) != s) return 0;
  } else if (child->kind == MGOPT_OP_real_div) {
    if (mgopt__pu_with_scalar(child, MGOPT_OP_real_div, count, inexact ? 1e-2 : 0.0) != s) return 0;
  } else {
    return 0;
  }
  /* the reduce_sum's operands and attributes, as written */
  for (i = 0; i < sum->nslots; i++) {
    const mgopt_slot *sl = &sum->slots[i];
    if (sl->n == 0) continue;
    if (sl->is_list || sl->n != 1 || n == 4) return 0;
    names[n] = sl->name;
    vals[n++] = sl->uses[0].value;
  }
  mean = mgopt_rw_create(rw, child, "reduce_mean", mgopt__pu_value_name(child->outs[0]), n, names, vals, 1);
  if (!mean) return 0;
  for (i = 0; i < sum->nattrs; i++)
    if (mgopt_op_set_attr(mean, &sum->attrs[i]) != MGOPT_OK) {
      mgopt_rw_erase(rw, mean);
      return 0;
    }
  return mgopt__pu_fuse_finish(rw, &mean, 1, child, &sum, 1);
}

static mgopt_status mgopt__frm_run(mgopt_pass_ctx *ctx) {
  int inexact = ctx->opts[0].i != 0;
  return mgopt__pass_run_pattern(ctx, "reduce_mean", MGOPT_OP_reduce_sum, mgopt__frm_fuse, &inexact);
}

static const mgopt_opt_def mgopt__frm_opts[] = {
    {"inexact", MGOPT_OPT_BOOL, "false",
     "the reference's tolerances: a multiplier within 1e-6 of 1/count, a divisor within 1e-2 of count (the mean then "
     "differs from the sum's scaled value by up to 1e-2 / count relative); false keeps to constants that equal "
     "1/count or count as their dtype holds it", NULL},
};

MGOPT__DEFINE_PASS_WITH_OPTIONS(fusion, common, fuse_reduce_mean,
                                "reduce_sum times 1/count, or divided by count, becomes reduce_mean", mgopt__frm_opts,
                                mgopt__frm_run);
