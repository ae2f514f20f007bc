/* src/passes/fusion/prelu_to_lrelu.c — common::prelu_to_lrelu: a prelu whose alpha values are all equal becomes leaky_relu.

   Spec: mil_graph_passes.txt, "If prelu has the same leakage factor across
   all channels, it will be converted to leaky_relu"; reference §3.15.

   Before:
     main(%x: (1, 3, 4, 4, fp32)) {
       %al: (3, fp32)* = const(val=[0.25, 0.25, 0.25])
       %y: (1, 3, 4, 4, fp32) = prelu(x=%x, alpha=%al)
     } -> (%y)
   After:
     main(%x: (1, 3, 4, 4, fp32)) {
       %y: (1, 3, 4, 4, fp32) = leaky_relu(x=%x, alpha=0.25)
     } -> (%y)

   Fires on: prelu whose alpha is a constant of at least one element, all
   equal (compared by value: -0 equals 0, a NaN equals nothing). The prelu's
   output is replaced by leaky_relu(x, alpha=alpha[0]) named after it
   (alpha[0]'s exact value: an fp16 alpha keeps its fp16 value); the prelu is
   erased, with its alpha constant when only it read it.
   Must not fire: alpha values that differ; a NaN alpha; alpha not a
   constant; a leaky_relu the program's target refuses
   (mgopt_program_target_accepts).
   Cost: worklist patterns rooted at prelu, O(prelus + alpha elements). */
#include "../../passes_internal.h"

static int mgopt__p2l_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const xs[1] = {"x"};
  mgopt_value *x = mgopt_op_operand(op, "x"), *av = mgopt_op_operand(op, "alpha");
  const mgopt_tensor *a = av ? mgopt_value_const(av) : NULL;
  mgopt_op *lr;
  double a0;
  int64_t i;
  MGOPT__UNUSED(ud);
  if (!x || !a || a->numel < 1 || op->nouts != 1) return 0;
  if (!mgopt_dtype_is_float((mgopt_dtype)a->dtype)) return 0;
  a0 = mgopt_tensor_get_f64(a, 0);
  for (i = 0; i < a->numel; i++)
    if (!(mgopt_tensor_get_f64(a, i) == a0)) return 0;
  lr = mgopt_rw_create(rw, op, "leaky_relu", mgopt__pu_value_name(op->outs[0]), 1, xs, &x, 1);
  if (!lr) return 0;
  if (mgopt_op_set_float(lr, "alpha", a0) != MGOPT_OK) {
    mgopt_rw_erase(rw, lr);
    return 0;
  }
  return mgopt__pu_fuse_finish(rw, &lr, 1, op, NULL, 0);
}

static const mgopt_pattern mgopt__p2l_patterns[] = {
    {"prelu_to_lrelu", MGOPT_OP_prelu, NULL, 1, mgopt__p2l_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, prelu_to_lrelu, "a prelu whose alpha values are all equal becomes leaky_relu",
                           mgopt__p2l_patterns);
