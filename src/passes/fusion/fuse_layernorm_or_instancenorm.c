/* src/passes/fusion/fuse_layernorm_or_instancenorm.c — common::fuse_layernorm_or_instancenorm: five decomposed normalization patterns become layer_norm or instance_norm.

   Spec: mil_graph_passes.txt, "detect and fuse several variants of
   layer_norm or instance_norm"; reference §3.24.

   Before:
     main(%x: (2, 4, fp32)) {
       %m: (2, 1, fp32) = reduce_mean(x=%x, axes=[-1], keep_dims=true)
       %d: (2, 4, fp32) = sub(x=%x, y=%m)
       %two: (fp32)* = const(val=2)
       %q: (2, 4, fp32) = pow(x=%d, y=%two)
       %v: (2, 1, fp32) = reduce_mean(x=%q, axes=[-1], keep_dims=true)
       %e: (fp32)* = const(val=1e-05)
       %ve: (2, 1, fp32) = add(x=%v, y=%e)
       %s: (2, 1, fp32) = sqrt(x=%ve)
       %n: (2, 4, fp32) = real_div(x=%d, y=%s)
       %g: (4, fp32)* = const(val=[1, 2, 3, 4])
       %ng: (2, 4, fp32) = mul(x=%n, y=%g)
       %b: (4, fp32)* = const(val=[0, 1, 0, 1])
       %y: (2, 4, fp32) = add(x=%ng, y=%b)
     } -> (%y)
   After:
     main(%x: (2, 4, fp32)) {
       %g: (4, fp32)* = const(val=[1, 2, 3, 4])
       %b: (4, fp32)* = const(val=[0, 1, 0, 1])
       %y: (2, 4, fp32) = layer_norm(x=%x, gamma=%g, beta=%b, axes=[-1], epsilon=9.999999747378752e-06)
     } -> (%y)

   In the patterns, mean = reduce_mean(x, axes A, keep_dims=true) and
   d = sub(x, mean); "square" is square(d), mul(d, d) or pow(d, 2); "var" is
   reduce_mean(square, the same axes A, keep_dims=true); eps, gamma and beta
   are constants; binary ops take their operands in either order unless a
   sub says otherwise.
   1. x*[g*rsqrt(var+eps)] + (beta - mean*[g*rsqrt(var+eps)])  (TF BERT).
   2. d / pow(var+eps, 0.5) * gamma + beta, also with sqrt for the pow and
      one sub d read by both the square and the real_div (as ONNX exporters
      write it) instead of two equal subs.
   3. x*rsqrt(var+eps) + (mean*rsqrt(var+eps))*(-1)  (TF-Addons; no gamma or
      beta: instance_norm with gamma 1 and beta 0).
   4. the sum form: mean = reduce_sum(x)*k, var = reduce_sum(x*x)*k - mean*mean,
      then as 1, with k exactly 1/N (N the reduced element count).
   5. d*rsqrt(var+eps) on axes [1] of a rank-4 x (ml-ane-transformers BC1S),
      optionally followed by add(beta) then mul(gamma):
      layer_norm(axes=[1], gamma, beta*gamma).
   Each pattern's ops but the last must have no reader outside the pattern
   and not be a block output; x may have other readers. The result, named
   after the last op's output, is (patterns 1, 2, 4, checked in this order):
   - instance_norm(x, gamma, beta) when x has rank 4, A is {-2, -1} (NCHW)
     or {-3, -2} (NHWC, between transpose(x, [0, 3, 1, 2]) and a transpose
     back [0, 2, 3, 1]), and gamma and beta are constant along every axis
     but the channel's, which is static (they become (C) constants);
   - else layer_norm(x, axes A, gamma, beta) when A is the last |A| axes and
     gamma and beta have exactly the shape of those dims of x.
   epsilon is eps (the value its constant holds, e.g. fp32 1e-05 is
   9.999999747378752e-06) plus the rsqrt's own epsilon (rsqrt(v) is
   1/sqrt(v + e)).
   Must not fire: keep_dims false or run-time axes; variance axes that differ
   from the mean's; an eps of more than one element or run-time; pow
   exponents other than exactly 2 and 0.5; a -1 that is not -1; k not 1/N or
   a dynamic reduced dim; an intermediate with another reader or that is a
   block output; gamma or beta of other layouts (for instance, per element
   of a normalized axis for instance_norm, or broadcast for layer_norm);
   dtypes that differ or are not float; a target that cannot express the new
   op (mgopt_program_target_accepts).
   Numeric contract: gamma and beta are copied in their own dtype (fp16 stays
   fp16); pattern 5's beta*gamma is computed in double and rounded once to
   that dtype; epsilon is summed in double.
   Cost: worklist patterns rooted at reduce_mean / reduce_sum, each match
   O(pattern size + gamma/beta elements). */
#include "../../passes_internal.h"

#define MGOPT__FLN_MAXOPS 32
#define MGOPT__FLN_MAXUSE 8

typedef struct mgopt__fln_match {
  mgopt_op *ops[MGOPT__FLN_MAXOPS]; /* matched ops, the last one included */
  int32_t n;
  mgopt_value *x;
  mgopt_op *red;            /* the first reduction (its axes are A) */
  mgopt_value *gamma, *beta; /* constants, NULL when the pattern has none */
  double eps;
  mgopt_op *end;
  int pattern;
} mgopt__fln_match;

static void mgopt__fln_add(mgopt__fln_match *m, mgopt_op *op) {
  int32_t k;
  for (k = 0; k < m->n; k++)
    if (m->ops[k] == op) return;
  if (m->n < MGOPT__FLN_MAXOPS) m->ops[m->n++] = op;
}

/* the distinct ops reading v into us; -1 when v is a block output or has more than cap readers */
static int32_t mgopt__fln_users(const mgopt_value *v, mgopt_op **us, int32_t cap) {
  const mgopt_use *u;
  int32_t n = 0, k;
  if (!v || v->nblock_uses) return -1;
  for (u = v->uses; u; u = u->next) {
    if (!u->op) return -1;
    for (k = 0; k < n && us[k] != u->op; k++) {
    }
    if (k < n) continue;
    if (n == cap) return -1;
    us[n++] = u->op;
  }
  return n;
}

/* the only (distinct) reader of v when it is of `kind`, else NULL */
static mgopt_op *mgopt__fln_only(const mgopt_value *v, int32_t kind) {
  mgopt_op *us[MGOPT__FLN_MAXUSE];
  if (mgopt__fln_users(v, us, MGOPT__FLN_MAXUSE) != 1 || us[0]->kind != kind || us[0]->nouts != 1) return NULL;
  return us[0];
}

/* the operand of binary op that is not v (v itself for op(v, v)); NULL when v is not an operand */
static mgopt_value *mgopt__fln_other(const mgopt_op *op, const mgopt_value *v) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y");
  if (x == v) return y;
  return y == v ? x : NULL;
}

/* v is a one-element float constant; its value in *val */
static int mgopt__fln_scalar(const mgopt_value *v, double *val) {
  const mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
  if (!t || t->numel != 1 || !mgopt_dtype_is_float((mgopt_dtype)t->dtype)) return 0;
  *val = mgopt_tensor_get_f64(t, 0);
  return 1;
}

/* op is square(d), mul(d, d) or pow(d, 2) */
static int mgopt__fln_is_square(const mgopt_op *op, const mgopt_value *d) {
  double e;
  if (!op || op->nouts != 1) return 0;
  if (op->kind == MGOPT_OP_square) return mgopt_op_operand(op, "x") == d;
  if (op->kind == MGOPT_OP_mul) return mgopt_op_operand(op, "x") == d && mgopt_op_operand(op, "y") == d;
  if (op->kind == MGOPT_OP_pow)
    return mgopt_op_operand(op, "x") == d && mgopt__fln_scalar(mgopt_op_operand(op, "y"), &e) && e == 2.0;
  return 0;
}

/* normalized, sorted axes of a reduction with constant axes and keep_dims
   true over x of known rank; the count, or -1 */
static int32_t mgopt__fln_axes(mgopt_program *p, const mgopt_op *red, int64_t *ax) {
  const mgopt_value *x = mgopt_op_operand(red, "x"), *kd = mgopt_op_operand(red, "keep_dims");
  const int64_t *v = NULL;
  int64_t n, i, j, r;
  if (!x || red->nouts != 1 || (kd && !mgopt_value_const(kd)) || !mgopt_op_get_bool(red, "keep_dims", 0)) return -1;
  r = x->type.rank;
  n = mgopt_op_get_ints(p, red, "axes", &v);
  if (r < 1 || r > MGOPT_MAX_RANK || n < 1 || n > r) return -1;
  for (i = 0; i < n; i++) {
    int64_t a = mgopt__pu_norm_axis(v[i], r);
    if (a < 0) return -1;
    for (j = i; j > 0 && ax[j - 1] > a; j--) ax[j] = ax[j - 1];
    ax[j] = a;
  }
  for (i = 0; i + 1 < n; i++)
    if (ax[i] == ax[i + 1]) return -1;
  return (int32_t)n;
}

/* red2 is a reduction of `kind` over the same axes as m->red */
static int mgopt__fln_same_axes(mgopt_program *p, const mgopt__fln_match *m, const mgopt_op *red2, int32_t kind) {
  int64_t a[MGOPT_MAX_RANK], b[MGOPT_MAX_RANK];
  int32_t na, nb, i;
  if (!red2 || red2->kind != kind) return 0;
  na = mgopt__fln_axes(p, m->red, a);
  nb = mgopt__fln_axes(p, red2, b);
  if (na < 0 || na != nb) return 0;
  for (i = 0; i < na; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

/* from var (a reduce output): add(var, eps) then rsqrt; the rsqrt, with eps
   summed into m->eps; NULL when absent */
static mgopt_op *mgopt__fln_add_eps(mgopt__fln_match *m, mgopt_value *var, int32_t next_kind) {
  mgopt_op *ae = mgopt__fln_only(var, MGOPT_OP_add), *nx;
  double e;
  if (!ae || !mgopt__fln_scalar(mgopt__fln_other(ae, var), &e) || mgopt__fln_other(ae, var) == var) return NULL;
  if (mgopt_value_const(mgopt__fln_other(ae, var))->rank > var->type.rank) return NULL;
  m->eps = e;
  mgopt__fln_add(m, ae);
  nx = mgopt__fln_only(ae->outs[0], next_kind);
  if (!nx || mgopt_op_operand(nx, "x") != ae->outs[0]) return NULL;
  if (next_kind == MGOPT_OP_rsqrt) m->eps += mgopt_op_get_float(nx, "epsilon", 1e-12);
  mgopt__fln_add(m, nx);
  return nx;
}

/* d -> square -> reduce_mean (A); the variance op, NULL when absent */
static mgopt_op *mgopt__fln_variance(mgopt_program *p, mgopt__fln_match *m, mgopt_op *sq) {
  mgopt_op *var;
  if (!sq) return NULL;
  var = mgopt__fln_only(sq->outs[0], MGOPT_OP_reduce_mean);
  if (!var || !mgopt__fln_same_axes(p, m, var, MGOPT_OP_reduce_mean)) return NULL;
  mgopt__fln_add(m, sq);
  mgopt__fln_add(m, var);
  return var;
}

/* the square-like reader of d among us[0..n), or NULL */
static mgopt_op *mgopt__fln_find_square(mgopt_op *const *us, int32_t n, const mgopt_value *d) {
  int32_t k;
  for (k = 0; k < n; k++)
    if (mgopt__fln_is_square(us[k], d)) return us[k];
  return NULL;
}

/* the tail shared by patterns 1 and 4: r -> mul(r, gamma) read by mul(x, .)
   and mul(mean, .); the latter -> sub(beta, .) -> add with the former */
static int mgopt__fln_affine_tail(mgopt__fln_match *m, mgopt_op *r, mgopt_value *mean) {
  mgopt_op *gm = mgopt__fln_only(r->outs[0], MGOPT_OP_mul), *us[MGOPT__FLN_MAXUSE], *mx = NULL, *mm = NULL, *sb, *fin;
  mgopt_value *g, *gv;
  int32_t k;
  if (!gm) return 0;
  g = mgopt__fln_other(gm, r->outs[0]);
  if (!g || !mgopt_value_const(g)) return 0;
  gv = gm->outs[0];
  if (mgopt__fln_users(gv, us, MGOPT__FLN_MAXUSE) != 2) return 0;
  for (k = 0; k < 2; k++) {
    mgopt_value *o = us[k]->kind == MGOPT_OP_mul && us[k]->nouts == 1 ? mgopt__fln_other(us[k], gv) : NULL;
    if (o == m->x && !mx) mx = us[k];
    else if (o == mean && !mm) mm = us[k];
  }
  if (!mx || !mm) return 0;
  sb = mgopt__fln_only(mm->outs[0], MGOPT_OP_sub);
  if (!sb || mgopt_op_operand(sb, "y") != mm->outs[0] || !mgopt_value_const(mgopt_op_operand(sb, "x"))) return 0;
  fin = mgopt__fln_only(sb->outs[0], MGOPT_OP_add);
  if (!fin || mgopt__fln_other(fin, sb->outs[0]) != mx->outs[0]) return 0;
  if (mgopt__fln_only(mx->outs[0], MGOPT_OP_add) != fin) return 0;
  m->gamma = g;
  m->beta = mgopt_op_operand(sb, "x");
  mgopt__fln_add(m, gm);
  mgopt__fln_add(m, mx);
  mgopt__fln_add(m, mm);
  mgopt__fln_add(m, sb);
  mgopt__fln_add(m, fin);
  m->end = fin;
  return 1;
}

/* the sub(x, mean) readers of mean among us[0..n): count, into subs */
static int32_t mgopt__fln_subs(mgopt_op *const *us, int32_t n, const mgopt_value *x, const mgopt_value *mean,
                               mgopt_op **subs) {
  int32_t k, c = 0;
  for (k = 0; k < n; k++)
    if (us[k]->kind == MGOPT_OP_sub && us[k]->nouts == 1 && mgopt_op_operand(us[k], "x") == x &&
        mgopt_op_operand(us[k], "y") == mean)
      subs[c++] = us[k];
  return c;
}

/* 1: x*[g*rsqrt(var+eps)] + (beta - mean*[g*rsqrt(var+eps)]) */
static int mgopt__fln_p1(mgopt_program *p, mgopt__fln_match *m) {
  mgopt_value *mean = m->red->outs[0];
  mgopt_op *us[MGOPT__FLN_MAXUSE], *subs[MGOPT__FLN_MAXUSE], *sub, *var, *r, *dus[MGOPT__FLN_MAXUSE];
  if (mgopt__fln_users(mean, us, MGOPT__FLN_MAXUSE) != 2 || mgopt__fln_subs(us, 2, m->x, mean, subs) != 1) return 0;
  sub = subs[0];
  mgopt__fln_add(m, sub);
  if (mgopt__fln_users(sub->outs[0], dus, MGOPT__FLN_MAXUSE) != 1) return 0;
  var = mgopt__fln_variance(p, m, mgopt__fln_find_square(dus, 1, sub->outs[0]));
  r = var ? mgopt__fln_add_eps(m, var->outs[0], MGOPT_OP_rsqrt) : NULL;
  return r && mgopt__fln_affine_tail(m, r, mean);
}

/* 2: (x - mean) / pow(var + eps, 0.5) * gamma + beta (or sqrt; one or two subs) */
static int mgopt__fln_p2(mgopt_program *p, mgopt__fln_match *m) {
  mgopt_value *mean = m->red->outs[0], *g, *b;
  mgopt_op *us[MGOPT__FLN_MAXUSE], *subs[MGOPT__FLN_MAXUSE], *s0 = NULL, *s1 = NULL, *var, *pw, *dv, *gm, *ab;
  mgopt_op *dus[MGOPT__FLN_MAXUSE];
  int32_t nu = mgopt__fln_users(mean, us, MGOPT__FLN_MAXUSE), ns, k, nd;
  double e;
  if (nu < 1 || nu > 2 || (ns = mgopt__fln_subs(us, nu, m->x, mean, subs)) != nu) return 0;
  for (k = 0; k < ns; k++) {
    nd = mgopt__fln_users(subs[k]->outs[0], dus, MGOPT__FLN_MAXUSE);
    if (nd < 1 || nd > 2 || (ns == 2 && nd != 1)) return 0;
    if (!s0 && mgopt__fln_find_square(dus, nd, subs[k]->outs[0])) s0 = subs[k];
    else s1 = subs[k];
  }
  if (!s0) return 0;
  if (ns == 1) s1 = s0;
  if (!s1) return 0;
  mgopt__fln_add(m, s0);
  mgopt__fln_add(m, s1);
  nd = mgopt__fln_users(s0->outs[0], dus, MGOPT__FLN_MAXUSE);
  var = mgopt__fln_variance(p, m, mgopt__fln_find_square(dus, nd, s0->outs[0]));
  if (!var) return 0;
  {
    mgopt_op *ae = mgopt__fln_only(var->outs[0], MGOPT_OP_add);
    mgopt_op *aus[MGOPT__FLN_MAXUSE];
    if (!ae || mgopt__fln_users(ae->outs[0], aus, MGOPT__FLN_MAXUSE) != 1) return 0;
    pw = aus[0];
    if (pw->kind == MGOPT_OP_pow) {
      if (!mgopt__fln_scalar(mgopt_op_operand(pw, "y"), &e) || e != 0.5) return 0;
      pw = mgopt__fln_add_eps(m, var->outs[0], MGOPT_OP_pow);
    } else {
      pw = mgopt__fln_add_eps(m, var->outs[0], MGOPT_OP_sqrt);
    }
  }
  if (!pw) return 0;
  dv = mgopt__fln_only(pw->outs[0], MGOPT_OP_real_div);
  if (!dv || mgopt_op_operand(dv, "x") != s1->outs[0] || mgopt_op_operand(dv, "y") != pw->outs[0]) return 0;
  /* with one sub, its readers are exactly the square and this real_div */
  if (ns == 1 && (nd != 2 || (dus[0] != dv && dus[1] != dv))) return 0;
  gm = mgopt__fln_only(dv->outs[0], MGOPT_OP_mul);
  g = gm ? mgopt__fln_other(gm, dv->outs[0]) : NULL;
  if (!g || g == dv->outs[0] || !mgopt_value_const(g)) return 0;
  ab = mgopt__fln_only(gm->outs[0], MGOPT_OP_add);
  b = ab ? mgopt__fln_other(ab, gm->outs[0]) : NULL;
  if (!b || b == gm->outs[0] || !mgopt_value_const(b)) return 0;
  mgopt__fln_add(m, dv);
  mgopt__fln_add(m, gm);
  mgopt__fln_add(m, ab);
  m->gamma = g;
  m->beta = b;
  m->end = ab;
  return 1;
}

/* 3: x*rsqrt(var+eps) + (mean*rsqrt(var+eps))*(-1), no gamma or beta */
static int mgopt__fln_p3(mgopt_program *p, mgopt__fln_match *m) {
  mgopt_value *mean = m->red->outs[0], *rv;
  mgopt_op *us[MGOPT__FLN_MAXUSE], *subs[MGOPT__FLN_MAXUSE], *sub, *var, *r, *dus[MGOPT__FLN_MAXUSE], *m1 = NULL,
      *m2 = NULL, *neg, *fin;
  int32_t k;
  double e;
  if (mgopt__fln_users(mean, us, MGOPT__FLN_MAXUSE) != 2 || mgopt__fln_subs(us, 2, m->x, mean, subs) != 1) return 0;
  sub = subs[0];
  mgopt__fln_add(m, sub);
  if (mgopt__fln_users(sub->outs[0], dus, MGOPT__FLN_MAXUSE) != 1) return 0;
  var = mgopt__fln_variance(p, m, mgopt__fln_find_square(dus, 1, sub->outs[0]));
  r = var ? mgopt__fln_add_eps(m, var->outs[0], MGOPT_OP_rsqrt) : NULL;
  if (!r) return 0;
  rv = r->outs[0];
  if (mgopt__fln_users(rv, us, MGOPT__FLN_MAXUSE) != 2) return 0;
  for (k = 0; k < 2; k++) {
    mgopt_value *o = us[k]->kind == MGOPT_OP_mul && us[k]->nouts == 1 ? mgopt__fln_other(us[k], rv) : NULL;
    if (o == m->x && !m1) m1 = us[k];
    else if (o == mean && !m2) m2 = us[k];
  }
  if (!m1 || !m2) return 0;
  neg = mgopt__fln_only(m2->outs[0], MGOPT_OP_mul);
  if (!neg || !mgopt__fln_scalar(mgopt__fln_other(neg, m2->outs[0]), &e) || e != -1.0) return 0;
  fin = mgopt__fln_only(neg->outs[0], MGOPT_OP_add);
  if (!fin || mgopt__fln_other(fin, neg->outs[0]) != m1->outs[0] || mgopt__fln_only(m1->outs[0], MGOPT_OP_add) != fin)
    return 0;
  mgopt__fln_add(m, m1);
  mgopt__fln_add(m, m2);
  mgopt__fln_add(m, neg);
  mgopt__fln_add(m, fin);
  m->end = fin;
  return 1;
}

/* v is mul(s, k) with k exactly 1/n in its dtype; the mul */
static mgopt_op *mgopt__fln_mean_of_sum(mgopt_program *p, const mgopt_value *s, int64_t n) {
  mgopt_op *mm = mgopt__fln_only(s, MGOPT_OP_mul);
  mgopt_value *k = mm ? mgopt__fln_other(mm, s) : NULL;
  mgopt_tensor *kt = k && k != s ? mgopt_value_const(k) : NULL, *want;
  if (!kt || kt->numel != 1 || !mgopt_dtype_is_float((mgopt_dtype)kt->dtype) || kt->rank > s->type.rank) return NULL;
  want = mgopt_tensor_new(p, (mgopt_dtype)kt->dtype, 0, NULL);
  if (!want) return NULL;
  mgopt_tensor_set_f64(want, 0, 1.0 / (double)n);
  return mgopt_tensor_get_f64(kt, 0) == mgopt_tensor_get_f64(want, 0) ? mm : NULL;
}

/* 4: the sum form, rooted at reduce_sum(x) */
static int mgopt__fln_p4(mgopt_program *p, mgopt__fln_match *m) {
  int64_t ax[MGOPT_MAX_RANK], n = 1;
  int32_t na = mgopt__fln_axes(p, m->red, ax), k, nu;
  mgopt_value *mean;
  mgopt_op *mm, *us[MGOPT__FLN_MAXUSE], *msq = NULL, *xsq = NULL, *s2, *mm2, *sv, *r;
  const mgopt_use *u;
  if (na < 0) return 0;
  for (k = 0; k < na; k++) {
    mgopt_dim d = m->x->type.dims[ax[k]];
    if (!mgopt_dim_is_static(d) || d.v < 1) return 0;
    n *= d.v;
  }
  mm = mgopt__fln_mean_of_sum(p, m->red->outs[0], n);
  if (!mm) return 0;
  mgopt__fln_add(m, mm);
  mean = mm->outs[0];
  nu = mgopt__fln_users(mean, us, MGOPT__FLN_MAXUSE);
  if (nu != 2) return 0;
  for (k = 0; k < 2; k++)
    if (mgopt__fln_is_square(us[k], mean)) msq = us[k];
  if (!msq) return 0;
  for (u = m->x->uses; u && !xsq; u = u->next)
    if (u->op && u->op != m->red && mgopt__fln_is_square(u->op, m->x) &&
        mgopt__fln_same_axes(p, m, mgopt__fln_only(u->op->outs[0], MGOPT_OP_reduce_sum), MGOPT_OP_reduce_sum))
      xsq = u->op;
  if (!xsq) return 0;
  s2 = mgopt__fln_only(xsq->outs[0], MGOPT_OP_reduce_sum);
  mm2 = mgopt__fln_mean_of_sum(p, s2->outs[0], n);
  if (!mm2) return 0;
  sv = mgopt__fln_only(mm2->outs[0], MGOPT_OP_sub);
  if (!sv || mgopt_op_operand(sv, "x") != mm2->outs[0] || mgopt_op_operand(sv, "y") != msq->outs[0] ||
      mgopt__fln_only(msq->outs[0], MGOPT_OP_sub) != sv)
    return 0;
  mgopt__fln_add(m, msq);
  mgopt__fln_add(m, xsq);
  mgopt__fln_add(m, s2);
  mgopt__fln_add(m, mm2);
  mgopt__fln_add(m, sv);
  r = mgopt__fln_add_eps(m, sv->outs[0], MGOPT_OP_rsqrt);
  return r && mgopt__fln_affine_tail(m, r, mean);
}

/* 5: d*rsqrt(var+eps) over axes [1] of a rank-4 x, then optionally add(beta), mul(gamma) */
static int mgopt__fln_p5(mgopt_program *p, mgopt__fln_match *m) {
  mgopt_value *mean = m->red->outs[0], *d, *rv;
  mgopt_op *sub, *dus[MGOPT__FLN_MAXUSE], *var, *r, *mn, *ab, *mg;
  const int64_t *axv = NULL;
  int32_t nd;
  if (m->x->type.rank != 4 || mgopt_op_get_ints(p, m->red, "axes", &axv) != 1 || axv[0] != 1) return 0;
  sub = mgopt__fln_only(mean, MGOPT_OP_sub);
  if (!sub || mgopt_op_operand(sub, "x") != m->x || mgopt_op_operand(sub, "y") != mean) return 0;
  mgopt__fln_add(m, sub);
  d = sub->outs[0];
  nd = mgopt__fln_users(d, dus, MGOPT__FLN_MAXUSE);
  if (nd != 2) return 0;
  var = mgopt__fln_variance(p, m, mgopt__fln_find_square(dus, 2, d));
  r = var ? mgopt__fln_add_eps(m, var->outs[0], MGOPT_OP_rsqrt) : NULL;
  if (!r) return 0;
  rv = r->outs[0];
  mn = mgopt__fln_only(rv, MGOPT_OP_mul);
  if (!mn || mgopt__fln_other(mn, rv) != d || (dus[0] != mn && dus[1] != mn)) return 0;
  mgopt__fln_add(m, mn);
  m->end = mn;
  ab = mgopt__fln_only(mn->outs[0], MGOPT_OP_add);
  mg = ab ? mgopt__fln_only(ab->outs[0], MGOPT_OP_mul) : NULL;
  if (ab && mg) {
    mgopt_value *b = mgopt__fln_other(ab, mn->outs[0]), *g = mgopt__fln_other(mg, ab->outs[0]);
    if (b && b != mn->outs[0] && mgopt_value_const(b) && g && g != ab->outs[0] && mgopt_value_const(g)) {
      m->beta = b;
      m->gamma = g;
      mgopt__fln_add(m, ab);
      mgopt__fln_add(m, mg);
      m->end = mg;
    }
  }
  return 1;
}

/* 1 when t (rank <= 4, right-aligned against a rank-4 x) is constant along
   every axis but ch, where it has c entries or 1 */
static int mgopt__fln_per_channel(const mgopt_tensor *t, int32_t ch, int64_t c) {
  int32_t i;
  if (t->rank > 4) return 0;
  for (i = 0; i < t->rank; i++) {
    int32_t j = 4 - t->rank + i;
    if (t->shape[i] != 1 && (j != ch || t->shape[i] != c)) return 0;
  }
  return 1;
}

/* a (c) constant: t's per-channel values (t NULL: `fill`), times f's when given */
static mgopt_value *mgopt__fln_channel_const(mgopt_rewriter *rw, mgopt_op *pos, const char *name, mgopt_dtype dt,
                                             int64_t c, const mgopt_tensor *t, double fill, const mgopt_tensor *f) {
  mgopt_tensor *nt = mgopt_tensor_new(mgopt_rw_program(rw), dt, 1, &c);
  int64_t i;
  if (!nt) return NULL;
  for (i = 0; i < c; i++) {
    double v = t ? mgopt_tensor_get_f64(t, t->numel == 1 ? 0 : i) : fill;
    if (f) v *= mgopt_tensor_get_f64(f, f->numel == 1 ? 0 : i);
    mgopt_tensor_set_f64(nt, i, v);
  }
  return mgopt_rw_const(rw, pos, name, nt);
}

/* every matched op but the end is read only by matched ops */
static int mgopt__fln_closed(const mgopt__fln_match *m) {
  int32_t i, k, o;
  for (i = 0; i < m->n; i++) {
    if (m->ops[i] == m->end) continue;
    for (o = 0; o < m->ops[i]->nouts; o++) {
      const mgopt_use *u;
      const mgopt_value *v = m->ops[i]->outs[o];
      if (v->nblock_uses) return 0;
      for (u = v->uses; u; u = u->next) {
        for (k = 0; k < m->n && m->ops[k] != u->op; k++) {
        }
        if (k == m->n) return 0;
      }
    }
  }
  return 1;
}

/* builds the normalization for match m; 1 when it replaced the end op */
static int mgopt__fln_apply(mgopt_rewriter *rw, mgopt__fln_match *m) {
  static const char *const slots[3] = {"x", "gamma", "beta"};
  mgopt_program *p = mgopt_rw_program(rw);
  int64_t ax[MGOPT_MAX_RANK], axes[MGOPT_MAX_RANK], c = 0;
  int32_t na = mgopt__fln_axes(p, m->red, ax), r = m->x->type.rank, i, ch = -1, built = 0;
  mgopt_tensor *gt = m->gamma ? mgopt_value_const(m->gamma) : NULL, *bt = m->beta ? mgopt_value_const(m->beta) : NULL;
  mgopt_dtype dt = (mgopt_dtype)m->x->type.dtype;
  mgopt_value *vals[3], *out = m->end->outs[0], *cur;
  mgopt_op *made[4], *norm = NULL;
  const char *name = mgopt__pu_value_name(out);
  const int64_t *axv = NULL;
  int instance = 0, nhwc = 0;
  if (na < 0 || m->n >= MGOPT__FLN_MAXOPS || !mgopt__fln_closed(m)) return 0;
  if (!mgopt_dtype_is_float(dt) || out->type.dtype != dt || (gt && gt->dtype != dt) || (bt && bt->dtype != dt)) return 0;
  if (r == 4 && na == 2 && ((ax[0] == 2 && ax[1] == 3) || (ax[0] == 1 && ax[1] == 2)) && m->pattern != 5) {
    nhwc = ax[0] == 1;
    ch = nhwc ? 3 : 1;
    if (mgopt_dim_is_static(m->x->type.dims[ch])) {
      c = m->x->type.dims[ch].v;
      instance = m->pattern == 3 || (gt && bt && mgopt__fln_per_channel(gt, ch, c) && mgopt__fln_per_channel(bt, ch, c));
    }
  }
  vals[0] = m->x;
  vals[1] = vals[2] = NULL;
  if (m->pattern == 5) {
    /* layer_norm over axis 1 with (C) constants; beta applied before gamma */
    if (!mgopt_dim_is_static(m->x->type.dims[1])) return 0;
    c = m->x->type.dims[1].v;
    if (gt && (!mgopt__fln_per_channel(gt, 1, c) || !mgopt__fln_per_channel(bt, 1, c))) return 0;
    if (gt) {
      vals[1] = mgopt__fln_channel_const(rw, m->end, mgopt__pu_name2(p, name, "_gamma"), dt, c, gt, 0.0, NULL);
      vals[2] = mgopt__fln_channel_const(rw, m->end, mgopt__pu_name2(p, name, "_beta"), dt, c, bt, 0.0, gt);
      if (!vals[1] || !vals[2]) goto undo;
    }
  } else if (instance) {
    vals[1] = mgopt__fln_channel_const(rw, m->end, mgopt__pu_name2(p, name, "_gamma"), dt, c, gt, 1.0, NULL);
    vals[2] = mgopt__fln_channel_const(rw, m->end, mgopt__pu_name2(p, name, "_beta"), dt, c, bt, 0.0, NULL);
    if (!vals[1] || !vals[2]) goto undo;
  } else {
    /* layer_norm: trailing axes, gamma and beta shaped like those dims */
    if (!gt || !bt || gt->rank != na || bt->rank != na) return 0;
    for (i = 0; i < na; i++) {
      mgopt_dim d = m->x->type.dims[r - na + i];
      if (ax[i] != r - na + i || !mgopt_dim_is_static(d) || gt->shape[i] != d.v || bt->shape[i] != d.v) return 0;
    }
    vals[1] = m->gamma;
    vals[2] = m->beta;
  }
  cur = m->x;
  if (instance && nhwc) {
    static const int64_t to_nchw[4] = {0, 3, 1, 2};
    made[built] = mgopt_rw_create(rw, m->end, "transpose", mgopt__pu_name2(p, name, "_transpose_nhwc_nchw"), 1, slots,
                                  &cur, 1);
    if (!made[built]) goto undo;
    built++;
    if (mgopt_op_set_ints(made[built - 1], "perm", to_nchw, 4) || mgopt_op_infer(p, made[built - 1], NULL)) goto undo;
    cur = made[built - 1]->outs[0];
  }
  vals[0] = cur;
  norm = mgopt_rw_create(rw, m->end, instance ? "instance_norm" : "layer_norm",
                         instance && nhwc ? mgopt__pu_name2(p, name, "_instancenorm") : name, vals[1] ? 3 : 1, slots,
                         vals, 1);
  if (!norm) goto undo;
  made[built++] = norm;
  if (!instance) {
    if (m->pattern == 5) {
      axes[0] = 1;
      na = 1;
    } else {
      /* the reduction's own axes (their signs kept), in ascending order */
      int64_t n = mgopt_op_get_ints(p, m->red, "axes", &axv), j;
      for (j = 0; j < n; j++)
        for (i = 0; i < na; i++)
          if (mgopt__pu_norm_axis(axv[j], r) == ax[i]) axes[i] = axv[j];
    }
    if (mgopt_op_set_ints(norm, "axes", axes, na)) goto undo;
  }
  if (mgopt_op_set_float(norm, "epsilon", m->eps) || mgopt_op_infer(p, norm, NULL) ||
      !mgopt_program_target_accepts(p, norm))
    goto undo;
  cur = norm->outs[0];
  if (instance && nhwc) {
    static const int64_t to_nhwc[4] = {0, 2, 3, 1};
    made[built] = mgopt_rw_create(rw, m->end, "transpose", name, 1, slots, &cur, 1);
    if (!made[built]) goto undo;
    built++;
    if (mgopt_op_set_ints(made[built - 1], "perm", to_nhwc, 4) || mgopt_op_infer(p, made[built - 1], NULL)) goto undo;
    cur = made[built - 1]->outs[0];
  }
  if (!mgopt__pu_adopt_type(p, cur, out)) goto undo;
  cur->def->name = m->end->name ? m->end->name : cur->name;
  mgopt__pu_replace_value(rw, out, cur);
  mgopt__pu_sync_op_name(cur->def);
  {
    /* erase the matched ops, readers first, then the constants they read */
    mgopt_op *consts[2 * MGOPT__FLN_MAXOPS];
    int32_t nc = 0, s, k, left = m->n, progress = 1;
    for (i = 0; i < m->n; i++)
      for (s = 0; s < m->ops[i]->nslots; s++)
        for (k = 0; k < m->ops[i]->slots[s].n && nc < 2 * MGOPT__FLN_MAXOPS; k++) {
          mgopt_value *v = m->ops[i]->slots[s].uses[k].value;
          if (v && v->def && v->def->kind == MGOPT_OP_const) consts[nc++] = v->def;
        }
    while (left && progress) {
      progress = 0;
      for (i = 0; i < m->n; i++) {
        mgopt_op *op = m->ops[i];
        if (op->flags & MGOPT_OP_ERASED || !mgopt__op_is_dead(op)) continue;
        mgopt_rw_erase(rw, op);
        left--;
        progress = 1;
      }
    }
    for (k = 0; k < nc; k++) mgopt__pu_erase_if_dead(rw, consts[k]);
  }
  return 1;
undo:
  while (built > 0) mgopt_rw_erase(rw, made[--built]);
  for (i = 1; i < 3; i++)
    if (vals[i] && vals[i] != m->gamma && vals[i] != m->beta) mgopt__pu_erase_if_dead(rw, vals[i]->def);
  return 0;
}

static void mgopt__fln_start(mgopt__fln_match *m, mgopt_op *red, int pattern) {
  memset(m, 0, sizeof *m);
  m->red = red;
  m->x = mgopt_op_operand(red, "x");
  m->pattern = pattern;
  mgopt__fln_add(m, red);
}

static int mgopt__fln_mean(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  int64_t ax[MGOPT_MAX_RANK];
  mgopt__fln_match m;
  MGOPT__UNUSED(ud);
  if (mgopt__fln_axes(p, op, ax) < 0) return 0;
  mgopt__fln_start(&m, op, 1);
  if (mgopt__fln_p1(p, &m) && mgopt__fln_apply(rw, &m)) return 1;
  mgopt__fln_start(&m, op, 2);
  if (mgopt__fln_p2(p, &m) && mgopt__fln_apply(rw, &m)) return 1;
  mgopt__fln_start(&m, op, 3);
  if (mgopt__fln_p3(p, &m) && mgopt__fln_apply(rw, &m)) return 1;
  mgopt__fln_start(&m, op, 5);
  return mgopt__fln_p5(p, &m) && mgopt__fln_apply(rw, &m);
}

static int mgopt__fln_sum(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  int64_t ax[MGOPT_MAX_RANK];
  mgopt__fln_match m;
  MGOPT__UNUSED(ud);
  if (mgopt__fln_axes(p, op, ax) < 0) return 0;
  mgopt__fln_start(&m, op, 4);
  return mgopt__fln_p4(p, &m) && mgopt__fln_apply(rw, &m);
}

static const mgopt_pattern mgopt__fln_patterns[] = {
    {"normalization_mean", MGOPT_OP_reduce_mean, NULL, 1, mgopt__fln_mean, NULL},
    {"normalization_sum", MGOPT_OP_reduce_sum, NULL, 1, mgopt__fln_sum, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_layernorm_or_instancenorm,
                           "decomposed layer or instance normalizations (five patterns) become layer_norm or instance_norm",
                           mgopt__fln_patterns);
