/* src/passes/relay/legalize.c — relay::legalize: ops a target runtime lacks become equivalent subgraphs, by registered legalizations.

   Spec: tvm_relay_passes.md, "Legalize()": for an op with a registered
   legalize function, the function gets the op's attributes, operands and
   types and returns an equivalent expression that replaces the op (or
   nothing, and the op stays). Here a legalization is a mgopt_legalize_fn
   registered per op type (mgopt_legalization, passes_api.h): the caller's
   come from mgopt_pipeline_options.legalize_config and are tried first, in
   order; then mgopt's own, each chosen by name:
   - gelu: its mode's formula in elementwise ops. EXACT:
     0.5 * x * (1 + erf(x * 1/sqrt(2))); TANH_APPROXIMATION:
     0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x * x * x)));
     SIGMOID_APPROXIMATION: x * sigmoid(1.702 * x);
   - layer_norm, instance_norm, batch_norm: the elementwise ops of
     relay::simplify_inference (the same code, see its header);
   - linear with x of rank > 2: matmul(x, weight, transpose_y=true) and an
     add of the bias when there is one (a runtime's dense/Gemm takes rank 2).
   The reference asserts that a legalized value is a call; here a result must
   be an op the legalization made, of the op's type, and accepted by the
   program's target (see mgopt_legalize_fn).

   Before:
     main(%x: (2, 3, fp32)) {
       %y: (2, 3, fp32) = gelu(x=%x, mode="SIGMOID_APPROXIMATION")
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %y_k_0: (fp32)* = const(val=1.702)
       %y_scaled_0: (2, 3, fp32) = mul(x=%x, y=%y_k_0)
       %y_sigmoid_0: (2, 3, fp32) = sigmoid(x=%y_scaled_0)
       %y: (2, 3, fp32) = mul(x=%x, y=%y_sigmoid_0)
     } -> (%y)

   Options: ops (default "all"): the names of mgopt's and the caller's named
   legalizations to apply, separated by ',', '+', '|' or spaces (quote a
   list with spaces: ops="gelu layer_norm"); "all" selects every one; the
   caller's unnamed ones always apply. target (default ""): passed to each
   legalization.

   Numeric contract: gelu's constants (1/sqrt(2), sqrt(2/pi), 0.044715, 0.5,
   1.702) are computed in double and rounded once to x's dtype; the ops then
   compute in x's dtype (the fused gelu rounds once: the results differ by the
   roundings of up to seven ops, a few ulp of the output's magnitude). The
   norms: see relay::simplify_inference. linear: the same products and sums.

   Fires on: an op with one output for which a selected legalization returns
   a result that passes the checks above. Built-ins need x of a float dtype
   (gelu, norms) and, for linear, x of known rank > 2 and a weight of rank 2.
   Must not fire: no selected legalization for the op's type; every one
   declines; the result's type differs from the op's; the target refuses an
   op made (the made ops are taken back).
   Cost: one worklist pass over every op, O(ops x legalizations of its type)
   plus what the legalizations build. */
#include "../../passes_internal.h"

#define MGOPT__LG_MAXMADE 64

typedef struct mgopt__lg {
  const mgopt_legalize_config *cfg;
  const char *ops;
  const char *target;
} mgopt__lg;

/* ---------------------------------------------------------------- built-in legalizations */

/* a new op named <op's output>_<what>, before op */
static mgopt_value *mgopt__lg_make(mgopt_rewriter *rw, mgopt_op *op, const char *type, const char *what, int32_t n,
                                   const char *const *slots, mgopt_value *const *vals) {
  mgopt_program *p = mgopt_rw_program(rw);
  const char *name = mgopt_program_fresh_name(p, mgopt__pu_name2(p, mgopt__pu_value_name(op->outs[0]), what));
  mgopt_op *o = mgopt_rw_create(rw, op, type, name, n, slots, vals, 1);
  if (!o) return NULL;
  return mgopt_op_infer(p, o, NULL) == MGOPT_OK ? o->outs[0] : NULL;
}

static mgopt_value *mgopt__lg_binary(mgopt_rewriter *rw, mgopt_op *op, const char *type, const char *what,
                                     mgopt_value *x, mgopt_value *y) {
  static const char *const slots[2] = {"x", "y"};
  mgopt_value *vals[2];
  if (!x || !y) return NULL;
  vals[0] = x;
  vals[1] = y;
  return mgopt__lg_make(rw, op, type, what, 2, slots, vals);
}

static mgopt_value *mgopt__lg_unary(mgopt_rewriter *rw, mgopt_op *op, const char *type, const char *what,
                                    mgopt_value *x) {
  static const char *const slot[1] = {"x"};
  return x ? mgopt__lg_make(rw, op, type, what, 1, slot, &x) : NULL;
}

/* a scalar constant of dtype dt holding v (rounded once) */
static mgopt_value *mgopt__lg_scalar(mgopt_rewriter *rw, mgopt_op *op, const char *what, mgopt_dtype dt, double v) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_tensor *t = mgopt_tensor_new_scalar_f64(p, dt, v);
  if (!t) return NULL;
  return mgopt_rw_const(rw, op, mgopt_program_fresh_name(p, mgopt__pu_name2(p, mgopt__pu_value_name(op->outs[0]), what)),
                        t);
}

static mgopt_value *mgopt__lg_gelu(void *ud, mgopt_rewriter *rw, mgopt_op *op, const char *target) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *t, *h;
  const char *mode = mgopt_op_get_string(op, "mode", NULL);
  mgopt_dtype dt;
  MGOPT__UNUSED(ud);
  MGOPT__UNUSED(target);
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR || !mgopt__pw_is_float_weight((mgopt_dtype)x->type.dtype)) return NULL;
  dt = (mgopt_dtype)x->type.dtype;
  if (!mode) mode = "EXACT";
  if (strcmp(mode, "SIGMOID_APPROXIMATION") == 0) {
    t = mgopt__lg_binary(rw, op, "mul", "_scaled", x, mgopt__lg_scalar(rw, op, "_k", dt, 1.702));
    return mgopt__lg_binary(rw, op, "mul", "", x, mgopt__lg_unary(rw, op, "sigmoid", "_sigmoid", t));
  }
  if (strcmp(mode, "TANH_APPROXIMATION") == 0) {
    t = mgopt__lg_binary(rw, op, "mul", "_square", x, x);
    t = mgopt__lg_binary(rw, op, "mul", "_cube", t, x);
    t = mgopt__lg_binary(rw, op, "mul", "_cubic", t, mgopt__lg_scalar(rw, op, "_k", dt, 0.044715));
    t = mgopt__lg_binary(rw, op, "add", "_inner", x, t);
    t = mgopt__lg_binary(rw, op, "mul", "_scaled", t,
                         mgopt__lg_scalar(rw, op, "_sqrt_2_over_pi", dt, sqrt(2.0 / 3.14159265358979323846)));
    t = mgopt__lg_unary(rw, op, "tanh", "_tanh", t);
  } else if (strcmp(mode, "EXACT") == 0) {
    t = mgopt__lg_binary(rw, op, "mul", "_scaled", x, mgopt__lg_scalar(rw, op, "_rsqrt2", dt, 1.0 / sqrt(2.0)));
    t = mgopt__lg_unary(rw, op, "erf", "_erf", t);
  } else {
    return NULL;
  }
  t = mgopt__lg_binary(rw, op, "add", "_plus1", t, mgopt__lg_scalar(rw, op, "_one", dt, 1.0));
  h = mgopt__lg_binary(rw, op, "mul", "_half", x, mgopt__lg_scalar(rw, op, "_k_half", dt, 0.5));
  return mgopt__lg_binary(rw, op, "mul", "", h, t);
}

static mgopt_value *mgopt__lg_norm(void *ud, mgopt_rewriter *rw, mgopt_op *op, const char *target) {
  MGOPT__UNUSED(ud);
  MGOPT__UNUSED(target);
  return mgopt__si_norm_elementwise(rw, op);
}

static mgopt_value *mgopt__lg_linear(void *ud, mgopt_rewriter *rw, mgopt_op *op, const char *target) {
  static const char *const slots[2] = {"x", "y"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "weight"), *b = mgopt_op_operand(op, "bias");
  mgopt_value *vals[2];
  mgopt_op *mm;
  MGOPT__UNUSED(ud);
  MGOPT__UNUSED(target);
  if (!x || !w || x->type.kind != MGOPT_TYPE_TENSOR || x->type.rank <= 2 || w->type.rank != 2) return NULL;
  vals[0] = x;
  vals[1] = w;
  mm = mgopt_rw_create(rw, op, "matmul",
                       mgopt_program_fresh_name(p, mgopt__pu_name2(p, mgopt__pu_value_name(op->outs[0]), "_matmul")), 2,
                       slots, vals, 1);
  if (!mm || mgopt_op_set_bool(mm, "transpose_y", 1) != MGOPT_OK || mgopt_op_infer(p, mm, NULL) != MGOPT_OK)
    return NULL;
  return b ? mgopt__lg_binary(rw, op, "add", "", mm->outs[0], b) : mm->outs[0];
}

static const mgopt_legalization mgopt__lg_builtin[] = {
    {"gelu", "gelu", mgopt__lg_gelu, NULL},
    {"layer_norm", "layer_norm", mgopt__lg_norm, NULL},
    {"instance_norm", "instance_norm", mgopt__lg_norm, NULL},
    {"batch_norm", "batch_norm", mgopt__lg_norm, NULL},
    {"linear", "linear", mgopt__lg_linear, NULL},
};

/* ---------------------------------------------------------------- the pass */

static int mgopt__lg_sep(char c) { return c == ',' || c == '+' || c == '|' || c == ' ' || c == '\t'; }

/* 1 when legalization `name` is selected by the ops list */
static int mgopt__lg_selected(const char *ops, const char *name) {
  size_t n;
  if (!name || !*name) return 1;
  n = strlen(name);
  while (*ops) {
    size_t k = 0;
    while (mgopt__lg_sep(*ops)) ops++;
    while (ops[k] && !mgopt__lg_sep(ops[k])) k++;
    if ((k == 3 && memcmp(ops, "all", 3) == 0) || (k == n && memcmp(ops, name, n) == 0)) return 1;
    ops += k;
  }
  return 0;
}

/* Runs one legalization on op; 1 when op was replaced. The made ops are
   those between op's old predecessor and op. */
static int mgopt__lg_try(mgopt_rewriter *rw, mgopt_op *op, const mgopt_legalization *l, const char *target) {
  mgopt_op *before = op->prev, *made[MGOPT__LG_MAXMADE], *o;
  mgopt_block *b = op->parent;
  mgopt_value *y = l->fn(l->ud, rw, op, target);
  int32_t n = 0, over = 0;
  for (o = before ? before->next : b->first; o && o != op; o = o->next) {
    if (n < MGOPT__LG_MAXMADE) made[n++] = o;
    else over = 1;
  }
  if (!y || over || n == 0 || y->def != made[n - 1] || y->def->nouts != 1) {
    /* declined, or a result the pass cannot take: what was made goes (users first) */
    mgopt_op *last = op->prev;
    while (last && last != before) {
      mgopt_op *prev = last->prev;
      if (mgopt__op_is_dead(last)) mgopt_rw_erase(rw, last);
      last = prev;
    }
    return 0;
  }
  mgopt__pu_rename(y, op->outs[0]->name); /* the result stands for the op's output */
  return mgopt__pu_fuse_finish_named(rw, made, n, op, NULL, 0);
}

static int mgopt__lg_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  const mgopt__lg *s = (const mgopt__lg *)ud;
  size_t i;
  if (op->nouts != 1 || op->nblocks || !op->parent || !op->type || op->kind == MGOPT_OP_const) return 0;
  if (s->cfg)
    for (i = 0; i < (size_t)s->cfg->nrules; i++) {
      const mgopt_legalization *l = &s->cfg->rules[i];
      if (l->fn && l->op_type && strcmp(l->op_type, op->type) == 0 && mgopt__lg_selected(s->ops, l->name) &&
          mgopt__lg_try(rw, op, l, s->target))
        return 1;
    }
  for (i = 0; i < MGOPT__ARRAY_COUNT(mgopt__lg_builtin); i++) {
    const mgopt_legalization *l = &mgopt__lg_builtin[i];
    if (strcmp(l->op_type, op->type) == 0 && mgopt__lg_selected(s->ops, l->name) &&
        mgopt__lg_try(rw, op, l, s->target))
      return 1;
  }
  return 0;
}

static mgopt_status mgopt__lg_run(mgopt_pass_ctx *ctx) {
  mgopt_rewrite_config cfg;
  mgopt_rewrite_stats st;
  mgopt_pattern pat;
  mgopt__lg s;
  mgopt_status r;
  s.cfg = ctx->legalize_config;
  s.ops = ctx->opts[0].s ? ctx->opts[0].s : "all";
  s.target = ctx->opts[1].s ? ctx->opts[1].s : "";
  memset(&pat, 0, sizeof pat);
  pat.name = "legalize";
  pat.root_kind = -1;
  pat.benefit = 1;
  pat.fn = mgopt__lg_rewrite;
  pat.ud = &s;
  memset(&cfg, 0, sizeof cfg);
  memset(&st, 0, sizeof st);
  cfg.keep_dead = 1;
  r = mgopt_rewrite_program(ctx->program, &pat, 1, &cfg, &st, ctx->diag);
  ctx->rewrites += st.rewrites;
  return r;
}

static const mgopt_opt_def mgopt__lg_opts[] = {
    {"ops", MGOPT_OPT_STRING, "all", "the legalizations to apply (names separated by , + | or spaces; all = every one)", NULL},
    {"target", MGOPT_OPT_STRING, "", "the target name passed to each legalization", NULL},
};

MGOPT__DEFINE_PASS_WITH_OPTIONS(relay, relay, legalize,
                                "ops a runtime lacks become equivalent subgraphs (gelu, norms, linear of rank > 2, "
                                "and the caller's legalizations)",
                                mgopt__lg_opts, mgopt__lg_run);
