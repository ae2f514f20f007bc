/* src/passes/fusion/fuse_gelu_tanh_approximation.c — common::fuse_gelu_tanh_approximation: the tanh form of gelu becomes gelu(x, mode=TANH_APPROXIMATION).

   Spec: mil_graph_passes.txt, "the tanh approximate version of gelu"
   (get_gelu_pattern1, get_gelu_pattern2); reference §3.12.

   Before:
     main(%x: (2, 3, fp32)) {
       %three: (fp32)* = const(val=3.0)
       %p: (2, 3, fp32) = pow(x=%x, y=%three)
       %k: (fp32)* = const(val=0.044715)
       %m1: (2, 3, fp32) = mul(x=%k, y=%p)
       %s: (2, 3, fp32) = add(x=%x, y=%m1)
       %r: (fp32)* = const(val=0.7978846)
       %m2: (2, 3, fp32) = mul(x=%r, y=%s)
       %t: (2, 3, fp32) = tanh(x=%m2)
       %one: (fp32)* = const(val=1.0)
       %a: (2, 3, fp32) = add(x=%one, y=%t)
       %h: (fp32)* = const(val=0.5)
       %m: (2, 3, fp32) = mul(x=%h, y=%a)
       %y: (2, 3, fp32) = mul(x=%m, y=%x)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %y: (2, 3, fp32) = gelu(x=%x, mode="TANH_APPROXIMATION")
     } -> (%y)

   Fires on: a = add(tanh(mul(add(x, mul(pow(x, 3), 0.044715)), 0.79788)), 1)
   and then either
     1. mul(mul(a, 0.5), x), or
     2. mul(mul(x, 0.5), a),
   every add and mul in either operand order (pow(x, 3) has its exponent in
   y). Every intermediate value has exactly one use, by the next op of the
   pattern (so none is a block output); the three reads of x are the same
   value, which may have other users (the reference's matcher asks x for
   exactly the pattern's three users; only the pattern's dataflow matters
   here, and it is checked edge by edge, where the reference's matcher
   checks child counts and op kinds); x is float. The last mul's output is
   replaced by gelu(x, mode="TANH_APPROXIMATION") named after it; the
   matched ops are erased with the constants only they read. Constants are
   one-element tensors not broadcasting the other operand, within 1e-5
   relative (ONNX Runtime's FastGeluFusion; the reference's 0.79788 for
   sqrt(2/pi) is 5.7e-6 off) of 0.5, 3, 0.044715, sqrt(2/pi) and 1, or
   equal to the value rounded to their dtype (fp16 / bf16).
   Option: inexact (bool, default false): true takes the reference's
   tolerance, 1e-3 absolute (fast_math).
   Must not fire: an intermediate with another use or that is a block
   output; a constant off by more than the tolerance, not a scalar, or
   broadcasting x;
   a pattern whose reads of x are different values; a non-float x; a gelu
   the program's target refuses (mgopt_program_target_accepts), or whose
   type does not fit the replaced value's declared type.
   Cost: worklist patterns rooted at mul, O(muls). */
#include "../../passes_internal.h"

/* How far a constant may be from the value it stands for: 1e-5 relative
   (ONNX Runtime's FastGeluFusion), or the reference's 1e-3 absolute when
   inexact. A constant equal to the value as its dtype holds it always
   matches (mgopt__pu_scalar_near). */
#define MGOPT__FGT_TOL(want) (inexact ? 1e-3 : 1e-5 * (want))
#define MGOPT__FGT_K sqrt(2.0 / 3.14159265358979323846)

/* the def of v when it is of `kind` and v has a single use, else NULL */
static mgopt_op *mgopt__fgt_def1(mgopt_value *v, int32_t kind) {
  return v && mgopt__pu_single_use(v) ? mgopt__pu_def_of(v, kind) : NULL;
}

/* s = add(x, mul(pow(x, 3), 0.044715)): x, with the add, mul and pow in ops[0..3). */
static mgopt_value *mgopt__fgt_cubic(mgopt_value *s, mgopt_op **ops, int inexact) {
  mgopt_op *add = mgopt__fgt_def1(s, MGOPT_OP_add);
  int side;
  if (!add) return NULL;
  for (side = 0; side < 2; side++) {
    mgopt_value *x = mgopt_op_operand(add, side ? "y" : "x"), *m1v = mgopt_op_operand(add, side ? "x" : "y");
    mgopt_op *m1 = mgopt__fgt_def1(m1v, MGOPT_OP_mul), *pw;
    mgopt_value *pv;
    if (!x || !m1 || !(pv = mgopt__pu_with_scalar(m1, MGOPT_OP_mul, 0.044715, MGOPT__FGT_TOL(0.044715)))) continue;
    pw = mgopt__fgt_def1(pv, MGOPT_OP_pow);
    if (!pw || mgopt__pu_with_scalar(pw, MGOPT_OP_pow, 3.0, MGOPT__FGT_TOL(3.0)) != x) continue;
    ops[0] = add;
    ops[1] = m1;
    ops[2] = pw;
    return x;
  }
  return NULL;
}

/* a = add(tanh(mul(s, 0.79788)), 1) with s the cubic part: x, with the
   six matched ops in ops[0..6) (consumers first). */
static mgopt_value *mgopt__fgt_tanh_part(mgopt_value *a, mgopt_op **ops, int inexact) {
  mgopt_op *add1 = mgopt__fgt_def1(a, MGOPT_OP_add), *th, *m2;
  mgopt_value *t, *s, *x;
  if (!add1 || !(t = mgopt__pu_with_scalar(add1, MGOPT_OP_add, 1.0, MGOPT__FGT_TOL(1.0)))) return NULL;
  if (!(th = mgopt__fgt_def1(t, MGOPT_OP_tanh))) return NULL;
  if (!(m2 = mgopt__fgt_def1(mgopt_op_operand(th, "x"), MGOPT_OP_mul))) return NULL;
  if (!(s = mgopt__pu_with_scalar(m2, MGOPT_OP_mul, MGOPT__FGT_K, MGOPT__FGT_TOL(MGOPT__FGT_K))))
    return NULL;
  if (!(x = mgopt__fgt_cubic(s, ops + 3, inexact)) || !mgopt_dtype_is_float((mgopt_dtype)x->type.dtype)) return NULL;
  ops[0] = add1;
  ops[1] = th;
  ops[2] = m2;
  return x;
}

/* last = mul(p, q) in pattern 1 or 2: x, with the seven matched ops other
   than last in ops[0..7) (consumers first). */
static mgopt_value *mgopt__fgt_match(mgopt_value *p, mgopt_value *q, mgopt_op **ops, int inexact) {
  mgopt_op *m = mgopt__fgt_def1(p, MGOPT_OP_mul);
  mgopt_value *a, *x;
  if (!m || !(a = mgopt__pu_with_scalar(m, MGOPT_OP_mul, 0.5, MGOPT__FGT_TOL(0.5)))) return NULL;
  ops[0] = m;
  /* 1. mul(mul(a, 0.5), x) */
  if ((x = mgopt__fgt_tanh_part(a, ops + 1, inexact)) != NULL && x == q) return x;
  /* 2. mul(mul(x, 0.5), a) */
  if ((x = mgopt__fgt_tanh_part(q, ops + 1, inexact)) != NULL && x == a) return x;
  return NULL;
}

static int mgopt__fgt_fuse(mgopt_rewriter *rw, mgopt_op *last, void *ud) {
  static const char *const xs[1] = {"x"};
  mgopt_op *ops[7], *gelu;
  mgopt_value *a = mgopt_op_operand(last, "x"), *b = mgopt_op_operand(last, "y"), *x;
  int inexact = *(const int *)ud;
  if (last->nouts != 1 || !a || !b) return 0;
  x = mgopt__fgt_match(a, b, ops, inexact);
  if (!x) x = mgopt__fgt_match(b, a, ops, inexact);
  if (!x) return 0;
  gelu = mgopt_rw_create(rw, last, "gelu", mgopt__pu_value_name(last->outs[0]), 1, xs, &x, 1);
  if (!gelu) return 0;
  if (mgopt_op_set_string(gelu, "mode", "TANH_APPROXIMATION") != MGOPT_OK) {
    mgopt_rw_erase(rw, gelu);
    return 0;
  }
  return mgopt__pu_fuse_finish(rw, &gelu, 1, last, ops, 7);
}

static mgopt_status mgopt__fgt_run(mgopt_pass_ctx *ctx) {
  int inexact = ctx->opts[0].i != 0;
  return mgopt__pass_run_pattern(ctx, "gelu_tanh_approximation", MGOPT_OP_mul, mgopt__fgt_fuse, &inexact);
}

static const mgopt_opt_def mgopt__fgt_opts[] = {
    {"inexact", MGOPT_OPT_BOOL, "false",
     "the reference's tolerance: constants within 1e-3 of 0.5, 3, 0.044715, sqrt(2/pi) and 1 (the fused gelu then "
     "differs by more than a rounding); false: within 1e-5 relative, or equal as their dtype holds them", NULL},
};

MGOPT__DEFINE_PASS_WITH_OPTIONS(fusion, common, fuse_gelu_tanh_approximation,
                                "the tanh approximation of gelu, in both arrangements, becomes gelu "
                                "(TANH_APPROXIMATION)",
                                mgopt__fgt_opts, mgopt__fgt_run);
