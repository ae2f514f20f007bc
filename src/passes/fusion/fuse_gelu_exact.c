/* src/passes/fusion/fuse_gelu_exact.c — common::fuse_gelu_exact: 0.5 * x * (1 + erf(x / sqrt(2))) becomes gelu(x, mode=EXACT).

   Spec: mil_graph_passes.txt, "the exact version of gelu"; reference §3.11.

   Before:
     main(%x: (2, 3, fp32)) {
       %s: (fp32)* = const(val=1.4142135)
       %d: (2, 3, fp32) = real_div(x=%x, y=%s)
       %e: (2, 3, fp32) = erf(x=%d)
       %one: (fp32)* = const(val=1.0)
       %a: (2, 3, fp32) = add(x=%e, y=%one)
       %h: (fp32)* = const(val=0.5)
       %m: (2, 3, fp32) = mul(x=%a, y=%h)
       %y: (2, 3, fp32) = mul(x=%m, y=%x)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %y: (2, 3, fp32) = gelu(x=%x, mode="EXACT")
     } -> (%y)

   Fires on: d = real_div(x, c) with c ~ sqrt(2), or mul(x, c) with c ~ 2^-0.5
   (either operand order), then e = erf(d), a = add(e, 1) (either order), and
   one of the three arrangements of the last two muls (each in either operand
   order):
     1. mul(mul(a, 0.5), x)
     2. mul(mul(a, x), 0.5)
     3. mul(a, mul(x, 0.5))
   Every intermediate value has exactly one use, by the next op of the
   pattern (so none is a block output; in arrangement 3 this includes
   mul(x, 0.5), which the reference does not check and then fails to
   remove); x is float. The last mul's output is replaced by gelu(x,
   mode="EXACT") named after it, built in its place; the matched ops are
   erased with the constants only they read. Constants are one-element
   tensors (any rank not above the other operand's, so none broadcasts),
   equal to the wanted value within 1e-5 relative (ONNX Runtime's
   GeluFusion; the fused gelu then differs from the pattern by roundings
   only) or equal to it rounded to their dtype (fp16 / bf16 constants).
   Option: inexact (bool, default false): true takes the reference's
   tolerance, 1e-3 absolute (sqrt(2) written 1.4135 fuses; fast_math).
   Must not fire: an intermediate with another use or that is a block
   output; a constant off by more than the tolerance; a constant that is not a scalar
   or would broadcast x; a non-float x; a gelu the program's target refuses
   (mgopt_program_target_accepts), or whose type does not fit the replaced
   value's declared type.
   Cost: worklist patterns rooted at mul, O(muls). */
#include "../../passes_internal.h"

/* How far a constant may be from the value it stands for: 1e-5 relative
   (ONNX Runtime's GeluFusion), or the reference's 1e-3 absolute when
   inexact. A constant equal to the value as its dtype holds it always
   matches (mgopt__pu_scalar_near). */
#define MGOPT__FGE_TOL(want) (inexact ? 1e-3 : 1e-5 * (want))

/* a = add(erf(x / sqrt(2)), 1) with single-use intermediates: x, and the
   matched ops in ops[0..3) (add, erf, div), else NULL. */
static mgopt_value *mgopt__fge_erf_part(mgopt_value *a, mgopt_op **ops, int inexact) {
  mgopt_op *add = mgopt__pu_single_use(a) ? mgopt__pu_def_of(a, MGOPT_OP_add) : NULL, *erf, *div;
  mgopt_value *e, *d, *x;
  if (!add || !(e = mgopt__pu_with_scalar(add, MGOPT_OP_add, 1.0, MGOPT__FGE_TOL(1.0)))) return NULL;
  if (!mgopt__pu_single_use(e) || !(erf = mgopt__pu_def_of(e, MGOPT_OP_erf))) return NULL;
  d = mgopt_op_operand(erf, "x");
  if (!d || !mgopt__pu_single_use(d) || !d->def) return NULL;
  div = d->def;
  x = mgopt__pu_with_scalar(div, MGOPT_OP_real_div, sqrt(2.0), MGOPT__FGE_TOL(sqrt(2.0)));
  if (!x) x = mgopt__pu_with_scalar(div, MGOPT_OP_mul, sqrt(0.5), MGOPT__FGE_TOL(sqrt(0.5)));
  if (!x || !mgopt_dtype_is_float((mgopt_dtype)x->type.dtype)) return NULL;
  ops[0] = add;
  ops[1] = erf;
  ops[2] = div;
  return x;
}

/* The operand of m other than v (v must be one of them), or NULL. */
static mgopt_value *mgopt__fge_other(const mgopt_op *m, const mgopt_value *v) {
  mgopt_value *a = mgopt_op_operand(m, "x"), *b = mgopt_op_operand(m, "y");
  if (!a || !b) return NULL;
  return a == v ? b : b == v ? a : NULL;
}

/* last = mul(p, q) in one of the three arrangements: x, with ops[0] the
   other mul and ops[1..4) the erf part, else NULL. */
static mgopt_value *mgopt__fge_match(mgopt_op *last, mgopt_value *p, mgopt_value *q, mgopt_op **ops, int inexact) {
  mgopt_op *m = mgopt__pu_single_use(p) ? mgopt__pu_def_of(p, MGOPT_OP_mul) : NULL;
  mgopt_value *a, *x;
  int k;
  if (m) {
    /* 1. mul(mul(a, 0.5), x) */
    a = mgopt__pu_with_scalar(m, MGOPT_OP_mul, 0.5, MGOPT__FGE_TOL(0.5));
    if (a && (x = mgopt__fge_erf_part(a, ops + 1, inexact)) != NULL && x == q) {
      ops[0] = m;
      return x;
    }
    /* 2. mul(mul(a, x), 0.5) */
    if (mgopt__pu_with_scalar(last, MGOPT_OP_mul, 0.5, MGOPT__FGE_TOL(0.5)) == p)
      for (k = 0; k < 2; k++) {
        a = mgopt_op_operand(m, k ? "y" : "x");
        if (a && (x = mgopt__fge_erf_part(a, ops + 1, inexact)) != NULL && mgopt__fge_other(m, a) == x) {
          ops[0] = m;
          return x;
        }
      }
  }
  /* 3. mul(a, mul(x, 0.5)) */
  m = mgopt__pu_single_use(q) ? mgopt__pu_def_of(q, MGOPT_OP_mul) : NULL;
  if (m && (x = mgopt__fge_erf_part(p, ops + 1, inexact)) != NULL &&
      mgopt__pu_with_scalar(m, MGOPT_OP_mul, 0.5, MGOPT__FGE_TOL(0.5)) == x) {
    ops[0] = m;
    return x;
  }
  return NULL;
}

static int mgopt__fge_fuse(mgopt_rewriter *rw, mgopt_op *last, void *ud) {
  static const char *const xs[1] = {"x"};
  mgopt_op *ops[4], *gelu;
  mgopt_value *a = mgopt_op_operand(last, "x"), *b = mgopt_op_operand(last, "y"), *x;
  int inexact = *(const int *)ud;
  if (last->nouts != 1 || !a || !b) return 0;
  x = mgopt__fge_match(last, a, b, ops, inexact);
  if (!x) x = mgopt__fge_match(last, b, a, ops, inexact);
  if (!x) return 0;
  gelu = mgopt_rw_create(rw, last, "gelu", mgopt__pu_value_name(last->outs[0]), 1, xs, &x, 1);
  if (!gelu) return 0;
  if (mgopt_op_set_string(gelu, "mode", "EXACT") != MGOPT_OK) {
    mgopt_rw_erase(rw, gelu);
    return 0;
  }
  return mgopt__pu_fuse_finish(rw, &gelu, 1, last, ops, 4);
}

static mgopt_status mgopt__fge_run(mgopt_pass_ctx *ctx) {
  int inexact = ctx->opts[0].i != 0;
  return mgopt__pass_run_pattern(ctx, "gelu_exact", MGOPT_OP_mul, mgopt__fge_fuse, &inexact);
}

static const mgopt_opt_def mgopt__fge_opts[] = {
    {"inexact", MGOPT_OPT_BOOL, "false",
     "the reference's tolerance: constants within 1e-3 of sqrt(2), 2^-0.5, 0.5 and 1 (the fused gelu then differs by "
     "more than a rounding); false: within 1e-5 relative, or equal as their dtype holds them", NULL},
};

MGOPT__DEFINE_PASS_WITH_OPTIONS(fusion, common, fuse_gelu_exact,
                                "0.5 * x * (1 + erf(x / sqrt(2))) in any of its three arrangements becomes gelu "
                                "(EXACT)",
                                mgopt__fge_opts, mgopt__fge_run);
