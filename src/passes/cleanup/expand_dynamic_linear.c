/* src/passes/cleanup/expand_dynamic_linear.c — common::expand_dynamic_linear: a linear with a run-time weight or bias becomes matmul (+ add).

   Spec: mil_graph_passes.txt, "Translate to linear when the operand is a
   descendant of const ... this pass would clean up the too-ambitious linear
   ops by replacing them with matmul ops"; reference §3.5.

   Before:
     main(%x: (2, 4, fp32), %w: (3, 4, fp32), %b: (3, fp32)) {
       %y: (2, 3, fp32) = linear(x=%x, weight=%w, bias=%b)
     } -> (%y)
   After:
     main(%x: (2, 4, fp32), %w: (3, 4, fp32), %b: (3, fp32)) {
       %y_matmul_0: (2, 3, fp32) = matmul(x=%x, y=%w, transpose_x=false, transpose_y=true)
       %y: (2, 3, fp32) = add(x=%y_matmul_0, y=%b)
     } -> (%y)

   An operand is static when absent or produced by const or constexpr_*.
   Fires on a linear (weight is [out, in], so matmul takes transpose_y=true):
   - weight not static: matmul(x, weight, transpose_y=true), then add(bias)
     unless the bias is absent or a constant of zeros;
   - weight static, bias not static: linear(x, weight) with no bias, then
     add(bias).
   The last new op takes the linear's output name and op name, and its
   declared type when that holds for the inferred one (mgopt__pu_adopt_type:
   main's output types stay).
   Must not fire: weight and bias both static; a 2-d x when the program's
   target accepts the linear as it is (an ONNX program writes it as one
   Gemm, where matmul + add would be two or three nodes); x and a run-time weight or a
   bias of different dtypes (linear does not check them, matmul and add do);
   a new type that contradicts a reader of the linear's output.
   Cost: worklist patterns, O(linears). */
#include "../../passes_internal.h"

static int mgopt__edl_static(const mgopt_value *v) {
  if (!v) return 1;
  if (!v->def) return 0;
  return v->def->kind == MGOPT_OP_const || strncmp(v->def->type, "constexpr_", 10) == 0;
}

/* dtypes that matmul / add accept together (an unknown one is left to inference) */
static int mgopt__edl_same_dtype(const mgopt_value *a, const mgopt_value *b) {
  return !a || !b || a->type.dtype == MGOPT_DT_UNKNOWN || b->type.dtype == MGOPT_DT_UNKNOWN ||
         a->type.dtype == b->type.dtype;
}

static int mgopt__edl_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const slots[2] = {"x", "y"};
  static const char *const lslots[2] = {"x", "weight"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "weight");
  mgopt_value *b = mgopt_op_operand(op, "bias"), *out, *vals[2];
  mgopt_op *mm, *add;
  char base[160];
  int wstatic = mgopt__edl_static(w), bstatic = mgopt__edl_static(b), ok = 0;
  MGOPT__UNUSED(ud);
  if (!x || !w || op->nouts != 1 || (wstatic && bstatic) || mgopt__pu_fused_act(op)) return 0;
  /* a target that writes this linear as one op keeps it (ONNX: a Gemm with
     transB for a 2-d x, whatever its weight): matmul + add would be more */
  if (p->target && x->type.rank == 2 && mgopt_program_target_accepts(p, op)) return 0;
  /* linear's inference does not compare dtypes; the matmul and add do */
  if (!mgopt__edl_same_dtype(x, b) || (!wstatic && !mgopt__edl_same_dtype(x, w))) return 0;
  out = op->outs[0];
  vals[0] = x;
  vals[1] = w;
  if (!wstatic) {
    snprintf(base, sizeof base, "%.120s_matmul", out->name ? out->name : "linear");
    mm = mgopt_rw_create(rw, op, "matmul", mgopt_program_fresh_name(p, base), 2, slots, vals, 1);
    if (!mm || mgopt_op_set_bool(mm, "transpose_x", 0) || mgopt_op_set_bool(mm, "transpose_y", 1)) return 0;
  } else {
    snprintf(base, sizeof base, "%.120s_linear", out->name ? out->name : "linear");
    mm = mgopt_rw_create(rw, op, "linear", mgopt_program_fresh_name(p, base), 2, lslots, vals, 1);
    if (!mm) return 0;
  }
  if (mgopt_op_infer(p, mm, NULL)) {
    mgopt_rw_erase(rw, mm); /* cannot be typed: leave the linear as it was */
    return 0;
  }
  mgopt__pu_fill_type(p, mm, 0, &out->type);
  if (!b || mgopt__pu_const_all(b, 0.0)) {
    if (!mgopt__pu_adopt_type(p, mm->outs[0], out)) {
      mgopt_rw_erase(rw, mm);
      return 0;
    }
    mm->name = op->name;
    mm->outs[0]->name = out->name;
    mgopt_rw_replace_value(rw, out, mm->outs[0]);
  } else {
    vals[0] = mm->outs[0];
    vals[1] = b;
    add = mgopt_rw_create(rw, op, "add", out->name, 2, slots, vals, 1);
    if (!add) return 0;
    add->name = op->name;
    if (mgopt_op_infer(p, add, NULL) == MGOPT_OK) {
      mgopt__pu_fill_type(p, add, 0, &out->type);
      ok = mgopt__pu_adopt_type(p, add->outs[0], out);
    }
    if (!ok) {
      mgopt_rw_erase(rw, add);
      mgopt_rw_erase(rw, mm);
      return 0;
    }
    mgopt_rw_replace_value(rw, out, add->outs[0]);
  }
  mgopt__pu_erase_with_consts(rw, op);
  return 1;
}

static const mgopt_pattern mgopt__edl_patterns[] = {
    {"dynamic_linear", MGOPT_OP_linear, NULL, 1, mgopt__edl_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, expand_dynamic_linear,
                           "turn a linear with a run-time weight or bias into matmul and add",
                           mgopt__edl_patterns);
