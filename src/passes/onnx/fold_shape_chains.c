/* src/passes/onnx/fold_shape_chains.c — onnx::fold_shape_chains: constant folding, opaque-op mapping and shape folding repeated until a shape computation stops changing.

   Spec: ONNX Runtime's basic level runs its transformers, constant folding
   among them, over and over until the graph stops changing, so a chain of
   shape arithmetic that alternates between ops mgopt folds
   (const_elimination), ops it maps once their operands are constant
   (canonicalize_opaque_ops: a Slice with a "through the first element"
   end) and ops only their static shape folds (fold_shape_ops: Shape,
   ConstantOfShape) ends as one constant however long the chain is. Each
   of those passes runs in program order, or over a worklist that does not
   cross the others' ops, so one run of each settles one alternation; this
   pass repeats the three until a round changes nothing.

   Before:
     main(%x: (2, 3, fp32)) {
       %s: (2, int64) = onnx::Shape(in0=%x)
       %one: (2, int64)* = const(val=[1, 1])
       %a: (2, int64) = sub(x=%s, y=%one)
       %st: (1, int64)* = const(val=[-1])
       %en: (1, int64)* = const(val=[-9223372036854775807])
       %ax: (1, int64)* = const(val=[0])
       %v: (?, int64) = onnx::Slice(in0=%a, in1=%st, in2=%en, in3=%ax, in4=%st)
     } -> (%v)
   After:
     main(%x: (2, 3, fp32)) {
       %s: (2, int64)* = const(val=[2, 3])
       %one: (2, int64)* = const(val=[1, 1])
       %a: (2, int64)* = const(val=[1, 2])
       %st: (1, int64)* = const(val=[-1])
       %en: (1, int64)* = const(val=[-9223372036854775807])
       %ax: (1, int64)* = const(val=[0])
       %v_begin_0: (1, int32)* = const(val=[1])
       %v_end_0: (1, int32)* = const(val=[0])
       %v_stride_0: (1, int32)* = const(val=[-1])
       %v: (2, int64)* = const(val=[2, 1])
     } -> (%v)
   (the first round folds the Shape, the second the sub and maps the Slice,
   the third folds that, the fourth finds nothing to do)

   Fires on: whatever const_elimination (its defaults), canonicalize_opaque_ops
   and fold_shape_ops fire on, with the caller's folding kernels.
   Must not fire: in a program without opaque ops (a shape chain alternates
   through opaque ONNX ops: Shape, an unmapped Slice; without one there is
   nothing to settle, and const_elimination alone folds what can fold);
   where none of the three does; a failing inner pass stops the
   rounds and fails this pass (the program stays as the last good round
   left it).
   Cost: O(functions) without an opaque op (the op index counts them); else
   at most MGOPT__FSC_MAX_ROUNDS rounds of three linear passes, the last of
   which changes nothing: O(ops). A chain with more alternations than rounds
   is left partly folded. */
#include "../../passes_internal.h"

#define MGOPT__FSC_MAX_ROUNDS 8

static mgopt_status mgopt__fsc_run(mgopt_pass_ctx *ctx) {
  mgopt_pass_report rep[3];
  mgopt_pipeline_options o;
  mgopt_diag d;
  mgopt_registry reg = *mgopt_builtin_registry();
  int32_t nrep = 0, round, i;
  reg.fold = ctx->fold; /* the caller's kernels, as const_elimination alone would use */
  reg.fold_ud = ctx->fold_ud;
  for (i = 0; i < mgopt_program_function_count(ctx->program); i++)
    if (mgopt__index_kind_count(mgopt_program_function_at(ctx->program, i), MGOPT_OP_OPAQUE) != 0) break;
  if (i == mgopt_program_function_count(ctx->program)) return MGOPT_OK; /* no opaque op: no shape chain */
  for (round = 0; round < MGOPT__FSC_MAX_ROUNDS; round++) {
    int64_t changed = 0;
    mgopt_status s;
    memset(&o, 0, sizeof o);
    o.strict = 1;
    o.reports = rep;
    o.reports_cap = 3;
    o.nreports = &nrep;
    s = mgopt_pipeline_run(ctx->program, &reg, "const_elimination,canonicalize_opaque_ops,fold_shape_ops", &o, &d);
    if (s) return mgopt_diag_set(ctx->diag, s, "%s", d.msg);
    for (i = 0; i < nrep; i++) changed += rep[i].rewrites;
    ctx->rewrites += changed;
    if (!changed) break;
  }
  return MGOPT_OK;
}

MGOPT__DEFINE_PASS(onnx, onnx, fold_shape_chains,
                   "constant folding, opaque-op mapping and shape folding, repeated until shape computations settle",
                   mgopt__fsc_run);
