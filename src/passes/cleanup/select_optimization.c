/* src/passes/cleanup/select_optimization.c — common::select_optimization: select with a constant condition becomes its input, or an add of masked ±inf.

   Spec: mil_graph_passes.txt, "For select(cond, a, b), there are 2 cases ...";
   reference mil-passes.md §3.27.

   Before:
     main(%b: (2, 2, fp32)) {
       %c: (2, 2, bool)* = const(val=[[true, false], [false, true]])
       %a: (fp32)* = const(val=-inf)
       %y: (2, 2, fp32) = select(cond=%c, a=%a, b=%b)
     } -> (%y)
   After:
     main(%b: (2, 2, fp32)) {
       %c: (2, 2, bool)* = const(val=[[true, false], [false, true]])
       %a: (fp32)* = const(val=-inf)
       %y_masked: (2, 2, fp32)* = const(val=[[-inf, -0], [-0, -inf]])
       %y: (2, 2, fp32) = add(x=%y_masked, y=%b)
     } -> (%y)

   Fires on: select whose cond is produced by a const op (when a and b are
   both const too, nothing: const_elimination folds it).
     1. every element of cond true: the output is a; all false: b. Only when
        that input's type equals the output type (no broadcasting is lost).
        The chosen input replaces the output; an `identity` carries the name
        when the output is a function output fed by an input or another output.
     2. otherwise, a is a const whose every element is +inf or -inf (or b is,
        with cond negated): a is broadcast to cond's shape with the masked-out
        places set to -0.0, and select becomes add(masked, b) named after the
        select's output (inf + b = inf, -inf + b = -inf, -0.0 + b = b).
        Numeric contract: exact for every b that holds no NaN and no
        infinity of the opposite sign at a place where a is taken; there
        the add gives NaN where select gave a (NaN + inf, -inf + inf). The
        rewrite exists for masks (attention scores + -inf), whose b is
        finite; the reference makes the same assumption. Where b is taken
        the result is b's bits, a -0.0 included (the reference masks with
        +0.0, and +0.0 + -0.0 is +0.0).
   Option: exact (bool, default false): true keeps to case 1, which is exact
   for every input; case 2 is left alone.
   Must not fire: a non-const cond; case 1 with broadcasting; case 2 with a
   finite or NaN element in the infinite side, a non-float dtype, or shapes that
   are not static.
   Cost: one worklist run; O(ops + constant elements). */
#include "../../passes_internal.h"

static int mgopt__selo_case1(mgopt_rewriter *rw, mgopt_op *op, mgopt_value *keep) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *out = op->outs[0];
  static const char *const slot[1] = {"x"};
  if (!mgopt_type_equal(&keep->type, &out->type) || !mgopt__pu_replace_fits(p, out, keep)) return 0;
  if (mgopt__pu_is_func_output(out) && (!keep->def || mgopt__pu_is_func_output(keep))) {
    mgopt_op *id = mgopt_rw_create(rw, op, "identity", mgopt__pu_name2(p, mgopt__pu_value_name(out), "_id"), 1,
                                   slot, &keep, 1);
    if (!id) return 0;
    if (mgopt_op_infer(p, id, NULL) != MGOPT_OK) {
      mgopt_rw_erase(rw, id);
      return 0;
    }
    keep = id->outs[0];
  }
  mgopt_rw_replace_op(rw, op, &keep);
  if (keep->def) mgopt__pu_sync_op_name(keep->def);
  return 1;
}

static int mgopt__selo_all_inf(const mgopt_tensor *t) {
  int64_t i;
  if (!t || t->numel < 1 || !mgopt_dtype_is_float((mgopt_dtype)t->dtype)) return 0;
  for (i = 0; i < t->numel; i++)
    if (!isinf(mgopt_tensor_get_f64(t, i))) return 0;
  return 1;
}

static int mgopt__selo_case2(mgopt_rewriter *rw, mgopt_op *op, const mgopt_tensor *cond, mgopt_value *inf_side,
                             mgopt_value *other, int negate) {
  mgopt_program *p = mgopt_rw_program(rw);
  const mgopt_tensor *a = mgopt_value_const(inf_side);
  int64_t shape[MGOPT_MAX_RANK] = {0};
  int32_t rank, i;
  int64_t k, n = 1;
  mgopt_tensor *m;
  mgopt_value *mv, *ins[2];
  mgopt_op *add;
  const char *oname = mgopt__pu_value_name(op->outs[0]);
  static const char *const slots[2] = {"x", "y"};
  if (!mgopt__selo_all_inf(a) || a->dtype != other->type.dtype) return 0;
  if (!mgopt__pu_broadcast(cond->shape, cond->rank, a->shape, a->rank, shape, &rank)) return 0;
  for (i = 0; i < rank; i++)
    if (!mgopt__mul_i64(n, shape[i], &n)) return 0;
  m = mgopt_tensor_new(p, (mgopt_dtype)a->dtype, rank, shape);
  if (!m) return 0;
  for (k = 0; k < n; k++) {
    int c = mgopt_tensor_get_f64(cond, mgopt__pu_bcast_index(shape, rank, cond->shape, cond->rank, k)) != 0.0;
    double v = mgopt_tensor_get_f64(a, mgopt__pu_bcast_index(shape, rank, a->shape, a->rank, k));
    mgopt_tensor_set_f64(m, k, (c != negate) ? v : -0.0);
  }
  mv = mgopt_rw_const(rw, op, mgopt__pu_name2(p, oname, "_masked"), m);
  if (!mv) return 0;
  ins[0] = mv;
  ins[1] = other;
  add = mgopt_rw_create(rw, op, "add", oname, 2, slots, ins, 1);
  if (!add || mgopt_op_infer(p, add, NULL) != MGOPT_OK || !mgopt_type_equal(&add->outs[0]->type, &op->outs[0]->type)) {
    if (add) mgopt_rw_erase(rw, add);
    mgopt_rw_erase(rw, mv->def);
    return 0;
  }
  mgopt_rw_replace_op(rw, op, add->outs);
  return 1;
}

static int mgopt__selo_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *c = mgopt_op_operand(op, "cond"), *a = mgopt_op_operand(op, "a"), *b = mgopt_op_operand(op, "b");
  const mgopt_tensor *ct;
  int64_t i, ntrue = 0;
  int exact = *(const int *)ud;
  if (!c || !a || !b || op->nouts != 1 || !mgopt__pu_def_of(c, MGOPT_OP_const)) return 0;
  ct = mgopt_value_const(c);
  if (!ct || ct->numel < 1 || ct->dtype == MGOPT_DT_STRING) return 0;
  if (mgopt_value_const(a) && mgopt_value_const(b)) return 0;
  for (i = 0; i < ct->numel; i++)
    if (mgopt_tensor_get_f64(ct, i) != 0.0) ntrue++;
  if (ntrue == ct->numel && mgopt__selo_case1(rw, op, a)) return 1;
  if (ntrue == 0 && mgopt__selo_case1(rw, op, b)) return 1;
  if (exact) return 0;
  if (mgopt__selo_all_inf(mgopt_value_const(a))) return mgopt__selo_case2(rw, op, ct, a, b, 0);
  if (mgopt__selo_all_inf(mgopt_value_const(b))) return mgopt__selo_case2(rw, op, ct, b, a, 1);
  return 0;
}

static mgopt_status mgopt__selo_run(mgopt_pass_ctx *ctx) {
  int exact = ctx->opts[0].i != 0;
  return mgopt__pass_run_pattern(ctx, "select_optimization", MGOPT_OP_select, mgopt__selo_rewrite, &exact);
}

static const mgopt_opt_def mgopt__selo_opts[] = {
    {"exact", MGOPT_OPT_BOOL, "false",
     "only the rewrites exact for every input (a select whose cond is all true or all false); "
     "false also turns a select of +-inf into an add, which gives NaN where the other side is NaN or the opposite "
     "infinity", NULL},
};

MGOPT__DEFINE_PASS_WITH_OPTIONS(cleanup, common, select_optimization,
                                "select with a constant condition becomes one of its inputs, or an add of masked "
                                "infinities",
                                mgopt__selo_opts, mgopt__selo_run);
