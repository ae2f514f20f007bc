/* src/passes/cleanup/rank0_expand_dims_swap.c — common::rank0_expand_dims_swap: a rank-0 binary op followed by expand_dims([0]) runs on rank-1 operands instead.

   Spec: mil_graph_passes.txt, "Identify the pattern of a rank-0 binary
   elementwise operation followed by an expand_dims op"; reference
   mil-passes.md §3.33.

   Before:
     main(%x: (fp32)) {
       %c: (fp32)* = const(val=1.5)
       %s: (fp32) = sub(x=%x, y=%c)
       %e: (1, fp32) = expand_dims(x=%s, axes=[0])
       %r: (fp32) = relu(x=%s)
     } -> (%e, %r)
   After:
     main(%x: (fp32)) {
       %c: (fp32)* = const(val=1.5)
       %x_expanded: (1, fp32) = expand_dims(x=%x, axes=[0])
       %c_expanded: (1, fp32) = expand_dims(x=%c, axes=[0])
       %e: (1, fp32) = sub(x=%x_expanded, y=%c_expanded)
       %s: (fp32) = squeeze(x=%e, axes=[0])
       %r: (fp32) = relu(x=%s)
     } -> (%e, %r)

   Fires on: add, sub, mul, real_div or floor_div whose x and y are both rank 0
   with exactly one of them produced by a const op, whose output is not a block
   output and has exactly one expand_dims(axes=[0]) consumer (other consumers
   are allowed: they read squeeze(new, axes=[0]), which takes the old name).
   The new op is named after the expand_dims output. Expanding the constant
   is left for const_elimination.
   Must not fire: two or zero constant operands, a rank other than 0, a block
   output, no or several expand_dims([0]) consumers, other axes.
   Cost: one worklist run; O(ops + uses). */
#include "../../passes_internal.h"

static int mgopt__r0s_is_expand0(const mgopt_op *op) {
  const int64_t *ax;
  int64_t n;
  if (op->kind != MGOPT_OP_expand_dims || op->nouts != 1) return 0;
  n = mgopt_op_get_ints(op->program, op, "axes", &ax);
  return n == 1 && ax[0] == 0;
}

static int mgopt__r0s_rank0(const mgopt_value *v) {
  return v->type.kind == MGOPT_TYPE_TENSOR && v->type.rank == 0;
}

static mgopt_op *mgopt__r0s_expand(mgopt_rewriter *rw, mgopt_op *pos, mgopt_value *v) {
  mgopt_program *p = mgopt_rw_program(rw);
  static const char *const slot[1] = {"x"};
  int64_t zero = 0;
  mgopt_op *e = mgopt_rw_create(rw, pos, "expand_dims", mgopt__pu_name2(p, mgopt__pu_value_name(v), "_expanded"),
                                1, slot, &v, 1);
  if (!e) return NULL;
  if (mgopt_op_set_ints(e, "axes", &zero, 1) || mgopt_op_infer(p, e, NULL)) {
    mgopt_rw_erase(rw, e);
    return NULL;
  }
  return e;
}

static int mgopt__r0s_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y"), *out, *ins[2];
  mgopt_op *exp_op = NULL, *ex, *ey, *nop, *sq = NULL;
  mgopt_use *u;
  int32_t nexp = 0, nother = 0;
  static const char *const slots[2] = {"x", "y"};
  MGOPT__UNUSED(ud);
  if (!x || !y || op->nouts != 1 || op->nslots != 2) return 0;
  if (!mgopt__r0s_rank0(x) || !mgopt__r0s_rank0(y)) return 0;
  if ((mgopt__pu_def_of(x, MGOPT_OP_const) != NULL) == (mgopt__pu_def_of(y, MGOPT_OP_const) != NULL)) return 0;
  out = op->outs[0];
  if (mgopt__pu_is_block_output(out)) return 0;
  for (u = out->uses; u; u = u->next) {
    if (mgopt__r0s_is_expand0(u->op)) {
      exp_op = u->op;
      nexp++;
    } else {
      nother++;
    }
  }
  if (nexp != 1) return 0;
  ex = mgopt__r0s_expand(rw, op, x);
  if (!ex) return 0;
  ey = mgopt__r0s_expand(rw, op, y);
  if (!ey) {
    mgopt_rw_erase(rw, ex);
    return 0;
  }
  ins[0] = ex->outs[0];
  ins[1] = ey->outs[0];
  nop = mgopt_rw_create(rw, op, op->type, mgopt__pu_value_name(exp_op->outs[0]), 2, slots, ins, 1);
  if (!nop || mgopt_op_infer(p, nop, NULL) || !mgopt_type_equal(&nop->outs[0]->type, &exp_op->outs[0]->type)) {
    if (nop) mgopt_rw_erase(rw, nop);
    mgopt_rw_erase(rw, ey);
    mgopt_rw_erase(rw, ex);
    return 0;
  }
  if (nother) {
    static const char *const slot[1] = {"x"};
    int64_t zero = 0;
    sq = mgopt_rw_create(rw, op, "squeeze", mgopt__pu_value_name(out), 1, slot, &nop->outs[0], 1);
    if (!sq) return 1; /* OOM: the rewriter reports it */
    mgopt_op_set_ints(sq, "axes", &zero, 1);
    mgopt_op_infer(p, sq, NULL);
  }
  mgopt_rw_replace_op(rw, exp_op, nop->outs);
  if (sq) mgopt_rw_replace_op(rw, op, sq->outs);
  else mgopt_rw_erase(rw, op);
  return 1;
}

static const mgopt_pattern mgopt__r0s_patterns[] = {
    {"rank0_expand_dims_swap", MGOPT_OP_add, NULL, 1, mgopt__r0s_rewrite, NULL},
    {"rank0_expand_dims_swap", MGOPT_OP_sub, NULL, 1, mgopt__r0s_rewrite, NULL},
    {"rank0_expand_dims_swap", MGOPT_OP_mul, NULL, 1, mgopt__r0s_rewrite, NULL},
    {"rank0_expand_dims_swap", MGOPT_OP_real_div, NULL, 1, mgopt__r0s_rewrite, NULL},
    {"rank0_expand_dims_swap", MGOPT_OP_floor_div, NULL, 1, mgopt__r0s_rewrite, NULL},
};

/* the patterns match only where one of these is */
static const int32_t mgopt__r0s_needs[] = {MGOPT_OP_expand_dims};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(cleanup, common, rank0_expand_dims_swap,
                                   "a rank-0 binary op followed by expand_dims([0]) computes on expanded operands instead",
                                   mgopt__r0s_patterns, mgopt__r0s_needs);
