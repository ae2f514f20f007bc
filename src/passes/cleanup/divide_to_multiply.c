/* src/passes/cleanup/divide_to_multiply.c — common::divide_to_multiply: real_div by a constant becomes mul by its reciprocal.

   Spec: mil_graph_passes.txt, "Convert divide into multiply if the divisor is
   const"; reference mil-passes.md §3.26.

   Before:
     main(%x: (2, 3, fp32)) {
       %c: (3, fp32)* = const(val=[2.0, 4.0, 0.5])
       %y: (2, 3, fp32) = real_div(x=%x, y=%c)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %c: (3, fp32)* = const(val=[2, 4, 0.5])
       %_inversed_y_y: (3, fp32)* = const(val=[0.5, 0.25, 2])
       %y: (2, 3, fp32) = mul(x=%x, y=%_inversed_y_y)
     } -> (%y)

   Fires on: real_div whose y is produced by a `const` op (a value that is only
   computable is left for const_elimination first) and whose x and y have a
   float dtype. The reciprocal 1/y is computed element by element and rounded
   once to y's dtype (the double quotient rounds to fp16/fp32 exactly as a
   division in that dtype would). The mul is named "_inversed_<op>" (the op's
   name, else its output's); a function output keeps its name.
   Must not fire: integer dtypes (real_div on ints is not a multiply); when any
   reciprocal is not finite (a zero divisor, or a subnormal whose reciprocal
   overflows) — the division then stays as written.
   Cost: one worklist run; O(ops + constant elements). The old divisor stays for
   dead_code_elimination. */
#include "../../passes_internal.h"

static int mgopt__d2m_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y"), *inv, *ins[2];
  mgopt_tensor *t, *r;
  const char *base, *name;
  static const char *const slots[2] = {"x", "y"};
  mgopt_op *mul;
  int64_t i;
  MGOPT__UNUSED(ud);
  if (!x || !y || op->nouts != 1 || !mgopt__pu_def_of(y, MGOPT_OP_const)) return 0;
  t = mgopt_value_const(y);
  if (!t || t->numel < 1 || !mgopt_dtype_is_float((mgopt_dtype)x->type.dtype) ||
      !mgopt_dtype_is_float((mgopt_dtype)t->dtype))
    return 0;
  r = mgopt_tensor_new(p, (mgopt_dtype)t->dtype, t->rank, t->shape);
  if (!r) return 0;
  for (i = 0; i < t->numel; i++) {
    double v = 1.0 / mgopt_tensor_get_f64(t, i);
    mgopt_tensor_set_f64(r, i, v);
    if (!isfinite(v) || !isfinite(mgopt_tensor_get_f64(r, i))) return 0;
  }
  base = op->name ? op->name : mgopt__pu_value_name(op->outs[0]);
  name = mgopt__pu_name2(p, "_inversed_", base);
  inv = mgopt_rw_const(rw, op, mgopt__pu_name2(p, name, "_y"), r);
  if (!inv || !name) return 0;
  ins[0] = x;
  ins[1] = inv;
  mul = mgopt_rw_create(rw, op, "mul", name, 2, slots, ins, 1);
  if (!mul) return 0;
  /* the mul keeps the real_div's declared type: a more precise one could
     contradict what its users declared */
  if (mgopt_op_infer(p, mul, NULL) != MGOPT_OK || !mgopt__pu_adopt_type(p, mul->outs[0], op->outs[0])) {
    mgopt_rw_erase(rw, mul);
    mgopt_rw_erase(rw, inv->def);
    return 0;
  }
  mgopt_rw_replace_op(rw, op, mul->outs);
  mgopt__pu_sync_op_name(mul);
  return 1;
}

static const mgopt_pattern mgopt__d2m_patterns[] = {
    {"divide_to_multiply", MGOPT_OP_real_div, NULL, 1, mgopt__d2m_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, divide_to_multiply,
                           "real_div by a float constant becomes mul by its reciprocal", mgopt__d2m_patterns);
