/* src/core/infer/state.c — type inference of the state ops: read_state, coreml_update_state. */
#include "infer.h"

/* The state operand of `slot`: a value of kind MGOPT_TYPE_STATE. */
static mgopt_status mgopt__ti_state_in(const mgopt_op *op, const char *slot, mgopt_type *t, mgopt_diag *d) {
  mgopt_value *v = mgopt_op_operand(op, slot);
  if (!v) return mgopt__ti_fail(d, op, "missing operand '%s'", slot);
  if (v->type.kind != MGOPT_TYPE_STATE) return mgopt__ti_fail(d, op, "operand '%s' is not a state", slot);
  *t = mgopt__ti_view(&v->type);
  t->kind = MGOPT_TYPE_TENSOR;
  return MGOPT_OK;
}

/* read_state(input): a tensor of the state's dtype and shape. */
MGOPT__PRIVATE mgopt_status mgopt__infer_read_state(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                    mgopt_diag *d) {
  mgopt_type st;
  mgopt_status s = mgopt__ti_state_in(op, "input", &st, d);
  if (s) return s;
  return mgopt__ti_like(p, op, out, &st, st.dtype, d);
}

/* coreml_update_state(state, value): writes value into the state and gives
   it back; value's dtype and shape must be the state's. */
MGOPT__PRIVATE mgopt_status mgopt__infer_update_state(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                      mgopt_diag *d) {
  mgopt_type st, vt;
  mgopt_status s = mgopt__ti_state_in(op, "state", &st, d);
  if (s || (s = mgopt__ti_in(op, "value", &vt, d))) return s;
  if (mgopt__type_clash(&st, &vt, 0)) return mgopt__ti_fail(d, op, "the value's type differs from the state's");
  return mgopt__ti_like(p, op, out, &vt, vt.dtype != MGOPT_DT_UNKNOWN ? vt.dtype : st.dtype, d);
}
