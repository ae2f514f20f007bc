/* src/passes/fusion/fuse_prelu.c — common::fuse_prelu: relu(x) + a * relu(-x) becomes prelu(x, alpha=-a), also behind an NCHW-to-NHWC transpose.

   Spec: mil_graph_passes.txt, "Detect the following patterns that can be
   mapped to a prelu op" (Pattern 1, Pattern 2); reference §3.15.

   Before:
     main(%x: (1, 3, 4, 4, fp32)) {
       %m1: (fp32)* = const(val=-1.0)
       %n: (1, 3, 4, 4, fp32) = mul(x=%x, y=%m1)
       %r1: (1, 3, 4, 4, fp32) = relu(x=%n)
       %a: (3, 1, 1, fp32)* = const(val=[[[0.5]], [[0.25]], [[-1.0]]])
       %am: (1, 3, 4, 4, fp32) = mul(x=%r1, y=%a)
       %r2: (1, 3, 4, 4, fp32) = relu(x=%x)
       %y: (1, 3, 4, 4, fp32) = add(x=%r2, y=%am)
     } -> (%y)
   After:
     main(%x: (1, 3, 4, 4, fp32)) {
       %y_alpha: (3, fp32)* = const(val=[-0.5, -0.25, 1])
       %y: (1, 3, 4, 4, fp32) = prelu(x=%x, alpha=%y_alpha)
     } -> (%y)

   Fires on: add(relu(x), mul(relu(mul(x, -1)), a)), every add and mul in
   either operand order, where the neg constant is one element within 1e-3
   of -1 (absolute, as the reference, or -1 in its dtype) not broadcasting
   x, a is a constant of finite values, x is float, and the two relus, the
   neg mul and the alpha mul each have exactly one use (the next op of the
   pattern); x may have other users. For x < 0 the sum is (-a) * x, for
   x >= 0 it is x: prelu with alpha = -a.
     1. x of rank 4 (N, C, H, W) with C static, a of rank 3 or 4 holding its
        elements along axis -3 ((C, 1, 1) or (1, C, 1, 1)): prelu(x,
        alpha=-a flattened), named after the add's output.
     2. x = transpose(x0, perm=[0, 2, 3, 1]) (NCHW to NHWC), x0 with C
        static, a of rank 1 to 4 holding its elements along axis -1 ((C,),
        (1, C), (1, 1, C), (1, 1, 1, C)): prelu(x0, alpha=-a flattened) then
        transpose(perm=[0, 2, 3, 1]) named after the add's output; the
        original transpose goes when nothing else reads it.
   Pattern 1 is tried first (it holds for any rank-4 x). a may hold C
   elements, or one (it then broadcasts over every channel: alpha is that
   value C times). alpha keeps a's dtype (fp16 stays fp16); negation is
   exact. The matched ops are erased with the constants only they read.
   Must not fire: a relu, neg or alpha mul with another use or that is a
   block output; a neg constant other than -1; a non-constant a, or one
   with non-finite values, or with a number of elements other than C or 1,
   or laid out along another axis; x of another rank; a symbolic channel
   count; a transpose with another perm; a non-float x; a prelu the
   program's target refuses (mgopt_program_target_accepts), or a result
   whose type does not fit the add's declared type.
   Cost: worklist patterns rooted at add, O(adds + alpha elements). */
#include "../../passes_internal.h"

/* the def of v when it is of `kind` and v has a single use, else NULL */
static mgopt_op *mgopt__fpr_def1(mgopt_value *v, int32_t kind) {
  return v && mgopt__pu_single_use(v) ? mgopt__pu_def_of(v, kind) : NULL;
}

/* The pattern's parts, from the add. */
typedef struct mgopt__fpr_match {
  mgopt_value *x;      /* the relus' common input */
  mgopt_value *a;      /* the alpha constant */
  mgopt_op *ops[5];    /* alpha mul, relu(-x), neg mul, relu(x), [the transpose]: consumers first */
} mgopt__fpr_match;

static int mgopt__fpr_find(mgopt_op *add, mgopt__fpr_match *m) {
  int side, k;
  for (side = 0; side < 2; side++) {
    mgopt_op *r2 = mgopt__fpr_def1(mgopt_op_operand(add, side ? "y" : "x"), MGOPT_OP_relu);
    mgopt_op *am = mgopt__fpr_def1(mgopt_op_operand(add, side ? "x" : "y"), MGOPT_OP_mul);
    if (!r2 || !am || am->nouts != 1) continue;
    for (k = 0; k < 2; k++) {
      mgopt_value *a = mgopt_op_operand(am, k ? "x" : "y");
      mgopt_op *r1 = mgopt__fpr_def1(mgopt_op_operand(am, k ? "y" : "x"), MGOPT_OP_relu), *neg;
      mgopt_value *x;
      if (!a || !mgopt_value_const(a) || !r1) continue;
      neg = mgopt__fpr_def1(mgopt_op_operand(r1, "x"), MGOPT_OP_mul);
      x = neg ? mgopt__pu_with_scalar(neg, MGOPT_OP_mul, -1.0, 1e-3) : NULL;
      if (!x || x != mgopt_op_operand(r2, "x") || !mgopt_dtype_is_float((mgopt_dtype)x->type.dtype)) continue;
      m->x = x;
      m->a = a;
      m->ops[0] = am;
      m->ops[1] = r1;
      m->ops[2] = neg;
      m->ops[3] = r2;
      return 1;
    }
  }
  return 0;
}

/* The static channel count dims[axis] of a rank-4 value, or -1. */
static int64_t mgopt__fpr_channels(const mgopt_value *v, int32_t axis) {
  if (v->type.kind != MGOPT_TYPE_TENSOR || v->type.rank != 4) return -1;
  if (v->type.dims[axis].sym || v->type.dims[axis].v < 0) return -1;
  return v->type.dims[axis].v;
}

/* 1 when the rank-4 transpose t moves NCHW to NHWC (perm [0, 2, 3, 1]). */
static int mgopt__fpr_to_nhwc(mgopt_program *p, const mgopt_op *t) {
  static const int64_t want[4] = {0, 2, 3, 1};
  const int64_t *perm = NULL;
  int32_t i;
  if (mgopt_op_get_ints(p, t, "perm", &perm) != 4) return 0;
  for (i = 0; i < 4; i++)
    if (mgopt__pu_norm_axis(perm[i], 4) != want[i]) return 0;
  return 1;
}

/* alpha = -a flattened to c elements (a holds c elements or one), in a's
   dtype; NULL when a has a non-finite value or on OOM. */
static mgopt_tensor *mgopt__fpr_alpha(mgopt_program *p, const mgopt_tensor *a, int64_t c) {
  mgopt_tensor *t = mgopt_tensor_new(p, (mgopt_dtype)a->dtype, 1, &c);
  int64_t i;
  if (!t) return NULL;
  for (i = 0; i < c; i++) {
    double v = mgopt_tensor_get_f64(a, a->numel == 1 ? 0 : i);
    if (!isfinite(v)) return NULL;
    mgopt_tensor_set_f64(t, i, -v);
  }
  return t;
}

static int mgopt__fpr_fuse(mgopt_rewriter *rw, mgopt_op *add, void *ud) {
  static const char *const slots[2] = {"x", "alpha"};
  static const int64_t perm[4] = {0, 2, 3, 1};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt__fpr_match m;
  const mgopt_tensor *a;
  mgopt_op *tr = NULL, *made[2];
  mgopt_value *ins[2];
  mgopt_tensor *alpha;
  const char *name, *pname;
  int64_t c = -1;
  int32_t nmatched = 4;
  MGOPT__UNUSED(ud);
  if (add->nouts != 1 || !mgopt__fpr_find(add, &m)) return 0;
  a = mgopt_value_const(m.a);
  /* 1. NCHW: a laid out along axis -3 */
  if ((a->rank == 3 || a->rank == 4) && a->numel == a->shape[a->rank - 3]) c = mgopt__fpr_channels(m.x, 1);
  if (c < 0 || (a->numel != c && a->numel != 1)) {
    /* 2. NHWC behind transpose(perm=[0, 2, 3, 1]): a laid out along axis -1 */
    tr = mgopt__pu_def_of(m.x, MGOPT_OP_transpose);
    c = -1;
    if (tr && tr->nouts == 1 && a->rank >= 1 && a->rank <= 4 && a->numel == a->shape[a->rank - 1] &&
        mgopt_op_operand(tr, "x") && mgopt__fpr_to_nhwc(p, tr))
      c = mgopt__fpr_channels(mgopt_op_operand(tr, "x"), 1);
    if (c < 0 || (a->numel != c && a->numel != 1)) return 0;
    m.x = mgopt_op_operand(tr, "x");
  }
  if (!(alpha = mgopt__fpr_alpha(p, a, c))) return 0;
  name = mgopt__pu_value_name(add->outs[0]);
  pname = tr ? mgopt__pu_name2(p, name, "_prelu") : name;
  ins[0] = m.x;
  ins[1] = mgopt_rw_const(rw, add, mgopt__pu_name2(p, pname, "_alpha"), alpha);
  if (!ins[1]) return 0;
  made[0] = mgopt_rw_create(rw, add, "prelu", pname, 2, slots, ins, 1);
  if (!made[0]) {
    mgopt__pu_erase_if_dead(rw, ins[1]->def);
    return 0;
  }
  if (tr) {
    made[1] = mgopt_rw_create(rw, add, "transpose", name, 1, slots, made[0]->outs, 1);
    if (!made[1] || mgopt_op_set_ints(made[1], "perm", perm, 4) != MGOPT_OK) {
      if (made[1]) mgopt_rw_erase(rw, made[1]);
      mgopt__pu_erase_with_consts(rw, made[0]);
      return 0;
    }
    m.ops[nmatched++] = tr;
  }
  return mgopt__pu_fuse_finish(rw, made, tr ? 2 : 1, add, m.ops, nmatched);
}

static const mgopt_pattern mgopt__fpr_patterns[] = {
    {"prelu", MGOPT_OP_add, NULL, 1, mgopt__fpr_fuse, NULL},
};

/* the patterns match only where one of these is */
static const int32_t mgopt__fpr_needs[] = {MGOPT_OP_relu};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(fusion, common, fuse_prelu,
                                   "relu(x) + a * relu(-x) becomes prelu(x, -a), also behind an NCHW-to-NHWC transpose",
                                   mgopt__fpr_patterns, mgopt__fpr_needs);
