/* src/passes/cleanup/divide_to_multiply.c — common::divide_to_multiply: real_div by a constant becomes mul by its reciprocal where that gives the same bits.

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
   computable is left for const_elimination first), x and y of one dtype,
   fp16, bf16, fp32 or fp64, and every element of y is +-2^k with both y and
   1/y normal numbers of that dtype (fp32 and bf16: 2^-126 <= |y| <= 2^126;
   fp16: 2^-14 <= |y| <= 2^14; fp64: 2^-1022 <= |y| <= 2^1022).
   Numeric contract: exact, the same bits as the division for every x.
   Proof: 1/y = +-2^-k is a power of two inside the dtype's normal range, so
   the constant holds it exactly, and for every real x, x * (1/y) and x / y
   are the same real number. IEEE 754 division and multiplication each return
   that exact real rounded once (to nearest even; also when the result is
   subnormal or overflows, since both round the same real), so the two ops
   give the same bits; their signs agree (the signs of y and 1/y are equal)
   also for a zero or infinite x, and a NaN x gives NaN in both. An op that
   computes fp16 or bf16 in fp32 and rounds back rounds the same real twice
   in both forms. y and 1/y are both normal because a runtime that treats
   subnormal operands as zero (DAZ, common on GPUs) would otherwise read
   one side as 0: y = 2^127 in fp32 is refused, its reciprocal 2^-127 is
   subnormal. A zero, infinite or NaN y, and any y not a power of two
   (x / 3, x / 1.4142135), stay divisions: x * fl(1/y) then rounds twice and
   can differ from x / y by an ulp, which a later rounding step (a
   DynamicQuantizeLinear, a floor) turns into a different value.
   Option: inexact (bool, default false): true is the reference's rewrite for
   every finite reciprocal: the reciprocal 1/y is computed element by element
   and rounded once to y's dtype, and x * fl(1/y) may differ from x / y by
   an ulp per element. It is what the `fast_math` pipeline runs; x / y and
   x * (1/y) cost the same on the runtimes mgopt writes for, so nothing else
   turns it on.
   The mul is named "_inversed_<op>" (the op's name, else its output's); a
   function output keeps its name.
   Must not fire: integer dtypes (real_div on ints is not a multiply); a y
   that is not a power of two, or whose power or reciprocal leaves the
   dtype's normal range (unless inexact); with inexact, when any reciprocal
   is not finite (a zero divisor, or a subnormal whose reciprocal
   overflows); fp8 dtypes (no arithmetic in fp8) unless inexact.
   Cost: one worklist run; O(ops + constant elements). The old divisor stays for
   dead_code_elimination. */
#include "../../passes_internal.h"

/* The exponent range in which a power of two and its reciprocal are both
   normal numbers of dtype dt: |y| in [2^-lim, 2^lim]. 0 for a dtype the
   exact rewrite does not handle. */
static int mgopt__d2m_exp_limit(mgopt_dtype dt) {
  switch (dt) {
    case MGOPT_DT_FP16: return 14;
    case MGOPT_DT_BF16: case MGOPT_DT_FP32: return 126;
    case MGOPT_DT_FP64: return 1022;
    default: return 0;
  }
}

/* 1 when v is +-2^k with |k| <= lim. */
static int mgopt__d2m_pow2_within(double v, int lim) {
  int e;
  double m;
  if (!isfinite(v) || v == 0.0) return 0;
  m = frexp(v, &e); /* v = m * 2^e, 0.5 <= |m| < 1 */
  return (m == 0.5 || m == -0.5) && e - 1 >= -lim && e - 1 <= lim;
}

static int mgopt__d2m_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y"), *inv, *ins[2];
  mgopt_tensor *t, *r;
  const char *base, *name;
  static const char *const slots[2] = {"x", "y"};
  mgopt_op *mul;
  int64_t i;
  int inexact = *(const int *)ud, lim;
  if (!x || !y || op->nouts != 1 || !mgopt__pu_def_of(y, MGOPT_OP_const)) return 0;
  t = mgopt_value_const(y);
  if (!t || t->numel < 1 || !mgopt_dtype_is_float((mgopt_dtype)x->type.dtype) ||
      !mgopt_dtype_is_float((mgopt_dtype)t->dtype))
    return 0;
  lim = mgopt__d2m_exp_limit((mgopt_dtype)t->dtype);
  if (!inexact) {
    if (lim == 0 || x->type.dtype != t->dtype) return 0;
    for (i = 0; i < t->numel; i++)
      if (!mgopt__d2m_pow2_within(mgopt_tensor_get_f64(t, i), lim)) return 0;
  }
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

static mgopt_status mgopt__d2m_run(mgopt_pass_ctx *ctx) {
  int inexact = ctx->opts[0].i != 0;
  return mgopt__pass_run_pattern(ctx, "divide_to_multiply", MGOPT_OP_real_div, mgopt__d2m_rewrite, &inexact);
}

static const mgopt_opt_def mgopt__d2m_opts[] = {
    {"inexact", MGOPT_OPT_BOOL, "false",
     "every finite reciprocal, as the reference does: x * fl(1/c) can differ from x / c by an ulp; false keeps to "
     "divisors that are powers of two with a normal reciprocal, where the product has the division's bits", NULL},
};

MGOPT__DEFINE_PASS_WITH_OPTIONS(cleanup, common, divide_to_multiply,
                                "real_div by a float constant becomes mul by its reciprocal (exact: a power of two; "
                                "any constant with inexact=true)",
                                mgopt__d2m_opts, mgopt__d2m_run);
