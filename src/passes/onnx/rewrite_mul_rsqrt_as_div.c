/* src/passes/onnx/rewrite_mul_rsqrt_as_div.c — onnx::rewrite_mul_rsqrt_as_div: x times the reciprocal of sqrt(y) becomes x / sqrt(y).

   Spec: onnx_ir_optimizer_passes.txt, "rewrite_mul_rsqrt_as_div".

   Before:
     main(%x: (2, 3, fp32), %y: (2, 3, fp32)) {
       %s: (2, 3, fp32) = sqrt(x=%y)
       %r: (2, 3, fp32) = inverse(x=%s, epsilon=0.0)
       %m: (2, 3, fp32) = mul(x=%x, y=%r)
     } -> (%m)
   After:
     main(%x: (2, 3, fp32), %y: (2, 3, fp32)) {
       %s: (2, 3, fp32) = sqrt(x=%y)
       %m: (2, 3, fp32) = real_div(x=%x, y=%s)
     } -> (%m)

   Fires on: mul (either operand) of r where r is
     inverse(sqrt(y)) with epsilon exactly 0 (ONNX Reciprocal),
     real_div(1, sqrt(y)) with a constant numerator whose elements are all 1
       and whose type does not broadcast the quotient, or
     rsqrt(y) with epsilon exactly 0,
   r is float, has a single consumer (the mul) and is not a block output. The
   mul becomes real_div(x, sqrt(y)) (a new sqrt for the rsqrt form), named
   after the mul's output; the reciprocal (and an unused sqrt) are erased.
   Must not fire: a nonzero epsilon (MIL's inverse and rsqrt add it, so the
   chain is not exactly 1/sqrt); a reciprocal with other consumers; a
   numerator other than 1; a quotient whose type differs from the mul's.
   Cost: one worklist run, O(ops). */
#include "../../passes_internal.h"

/* the y of sqrt(y) when r is exactly 1/sqrt(y); *s the sqrt value (NULL for the rsqrt form) */
static mgopt_value *mgopt__mrd_match(mgopt_value *r, mgopt_value **s) {
  mgopt_op *d = r->def;
  mgopt_value *sv;
  *s = NULL;
  if (!d || !mgopt_dtype_is_float((mgopt_dtype)r->type.dtype)) return NULL;
  if (d->kind == MGOPT_OP_rsqrt) {
    if (mgopt_op_get_float(d, "epsilon", 1.0) != 0.0) return NULL;
    return mgopt_op_operand(d, "x");
  }
  if (d->kind == MGOPT_OP_inverse) {
    if (mgopt_op_get_float(d, "epsilon", 1.0) != 0.0) return NULL;
    sv = mgopt_op_operand(d, "x");
  } else if (d->kind == MGOPT_OP_real_div) {
    mgopt_value *num = mgopt_op_operand(d, "x");
    sv = mgopt_op_operand(d, "y");
    if (!num || !sv || !mgopt__pu_const_all(num, 1.0) || !mgopt_type_equal(&sv->type, &r->type)) return NULL;
  } else {
    return NULL;
  }
  if (!sv || !mgopt__pu_def_of(sv, MGOPT_OP_sqrt)) return NULL;
  *s = sv;
  return mgopt_op_operand(sv->def, "x");
}

static int mgopt__mrd_rewrite(mgopt_rewriter *rw, mgopt_op *mul, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *a = mgopt_op_operand(mul, "x"), *b = mgopt_op_operand(mul, "y"), *x, *r, *y, *s, *ins[2];
  mgopt_op *div, *rop, *sq = NULL;
  static const char *const xy[2] = {"x", "y"};
  static const char *const xs[1] = {"x"};
  int side;
  MGOPT__UNUSED(ud);
  if (!a || !b || mul->nouts != 1) return 0;
  for (side = 0; side < 2; side++) {
    x = side ? b : a;
    r = side ? a : b;
    if (!mgopt__pu_single_use(r) || mgopt__pu_is_block_output(r)) continue;
    y = mgopt__mrd_match(r, &s);
    if (y) break;
  }
  if (side == 2) return 0;
  rop = r->def;
  if (!s) {
    sq = mgopt_rw_create(rw, mul, "sqrt", mgopt__pu_name2(p, mgopt__pu_value_name(y), "_sqrt"), 1, xs, &y, 1);
    if (!sq) return 0;
    if (mgopt_op_infer(p, sq, NULL) != MGOPT_OK) {
      mgopt_rw_erase(rw, sq);
      return 0;
    }
    s = sq->outs[0];
  }
  ins[0] = x;
  ins[1] = s;
  div = mgopt_rw_create(rw, mul, "real_div", mgopt__pu_value_name(mul->outs[0]), 2, xy, ins, 1);
  if (!div || mgopt_op_infer(p, div, NULL) != MGOPT_OK || !mgopt_type_equal(&div->outs[0]->type, &mul->outs[0]->type)) {
    if (div) mgopt_rw_erase(rw, div);
    if (sq) mgopt_rw_erase(rw, sq);
    return 0;
  }
  mgopt_rw_replace_op(rw, mul, div->outs);
  mgopt__pu_sync_op_name(div);
  mgopt__pu_erase_if_dead(rw, rop);
  return 1;
}

static const mgopt_pattern mgopt__mrd_patterns[] = {
    {"rewrite_mul_rsqrt_as_div", MGOPT_OP_mul, NULL, 1, mgopt__mrd_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, rewrite_mul_rsqrt_as_div,
                           "x times the reciprocal of sqrt(y) becomes x / sqrt(y)", mgopt__mrd_patterns);
