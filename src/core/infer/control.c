/* src/core/infer/control.c — type inference of control flow: while_loop, cond. */
#include "infer.h"

MGOPT__PRIVATE mgopt_status mgopt__infer_while(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                               mgopt_diag *d) {
  const mgopt_use *uses;
  int32_t n = mgopt__ti_list(op, "loop_vars", &uses), i;
  if (n != op->nouts) return mgopt__ti_fail(d, op, "%d loop vars for %d outputs", (int)n, (int)op->nouts);
  for (i = 0; i < n; i++) {
    if (!uses[i].value) return mgopt__ti_fail(d, op, "loop var %d is missing", (int)i);
    if (mgopt__type_copy(p, &out[i], &uses[i].value->type)) return mgopt__ti_nomem(d);
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_cond(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                              mgopt_diag *d) {
  const mgopt_block *b = op->nblocks > 0 ? op->blocks[0] : NULL;
  int32_t i;
  if (!mgopt_op_operand(op, "pred")) return mgopt__ti_fail(d, op, "missing operand 'pred'");
  if (!b || b->nouts != op->nouts) return mgopt__ti_fail(d, op, "the true branch does not give %d outputs", (int)op->nouts);
  for (i = 0; i < op->nouts; i++) {
    if (!b->outs[i] || !b->outs[i]->value) return mgopt__ti_fail(d, op, "branch output %d is missing", (int)i);
    if (mgopt__type_copy(p, &out[i], &b->outs[i]->value->type)) return mgopt__ti_nomem(d);
  }
  return MGOPT_OK;
}
