/* tests/unit/test_fusion_activation.c — activation fusions and fuse_reduce_mean: each backs out when the program's target refuses the op it built (what golden text cannot show). */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"

typedef struct fusion_case {
  const char *pipeline;
  const char *made;    /* the op kind the fusion makes (and the target refuses) */
  const char *text;
} fusion_case;

static const fusion_case cases[] = {
    {"fuse_gelu_exact", "gelu",
     "main(%x: (2, 3, fp32)) {\n"
     "  %s: (fp32)* = const(val=1.4142135)\n"
     "  %d: (2, 3, fp32) = real_div(x=%x, y=%s)\n"
     "  %e: (2, 3, fp32) = erf(x=%d)\n"
     "  %one: (fp32)* = const(val=1.0)\n"
     "  %a: (2, 3, fp32) = add(x=%e, y=%one)\n"
     "  %h: (fp32)* = const(val=0.5)\n"
     "  %m: (2, 3, fp32) = mul(x=%a, y=%h)\n"
     "  %y: (2, 3, fp32) = mul(x=%m, y=%x)\n"
     "} -> (%y)\n"},
    {"fuse_gelu_tanh_approximation", "gelu",
     "main(%x: (2, 3, fp32)) {\n"
     "  %three: (fp32)* = const(val=3.0)\n"
     "  %p: (2, 3, fp32) = pow(x=%x, y=%three)\n"
     "  %k: (fp32)* = const(val=0.044715)\n"
     "  %m1: (2, 3, fp32) = mul(x=%k, y=%p)\n"
     "  %s: (2, 3, fp32) = add(x=%x, y=%m1)\n"
     "  %r: (fp32)* = const(val=0.7978846)\n"
     "  %m2: (2, 3, fp32) = mul(x=%r, y=%s)\n"
     "  %t: (2, 3, fp32) = tanh(x=%m2)\n"
     "  %one: (fp32)* = const(val=1.0)\n"
     "  %a: (2, 3, fp32) = add(x=%one, y=%t)\n"
     "  %h: (fp32)* = const(val=0.5)\n"
     "  %m: (2, 3, fp32) = mul(x=%h, y=%a)\n"
     "  %y: (2, 3, fp32) = mul(x=%m, y=%x)\n"
     "} -> (%y)\n"},
    {"fuse_gelu_sigmoid_approximation", "gelu",
     "main(%x: (2, 3, fp32)) {\n"
     "  %k: (fp32)* = const(val=1.702)\n"
     "  %s: (2, 3, fp32) = mul(x=%x, y=%k)\n"
     "  %g: (2, 3, fp32) = sigmoid(x=%s)\n"
     "  %y: (2, 3, fp32) = mul(x=%x, y=%g)\n"
     "} -> (%y)\n"},
    {"fuse_leaky_relu", "leaky_relu",
     "main(%x: (2, 3, fp32)) {\n"
     "  %a: (fp32)* = const(val=0.25)\n"
     "  %m: (2, 3, fp32) = mul(x=%x, y=%a)\n"
     "  %y: (2, 3, fp32) = maximum(x=%m, y=%x)\n"
     "} -> (%y)\n"},
    {"fuse_prelu", "prelu",
     "main(%x: (1, 3, 4, 4, fp32)) {\n"
     "  %m1: (fp32)* = const(val=-1.0)\n"
     "  %n: (1, 3, 4, 4, fp32) = mul(x=%x, y=%m1)\n"
     "  %r1: (1, 3, 4, 4, fp32) = relu(x=%n)\n"
     "  %a: (3, 1, 1, fp32)* = const(val=[[[0.5]], [[0.25]], [[-1.0]]])\n"
     "  %am: (1, 3, 4, 4, fp32) = mul(x=%r1, y=%a)\n"
     "  %r2: (1, 3, 4, 4, fp32) = relu(x=%x)\n"
     "  %y: (1, 3, 4, 4, fp32) = add(x=%r2, y=%am)\n"
     "} -> (%y)\n"},
    {"fuse_prelu", "prelu", /* the NHWC pattern: prelu, then a transpose */
     "main(%x: (1, 3, 4, 5, fp32)) {\n"
     "  %t: (1, 4, 5, 3, fp32) = transpose(x=%x, perm=[0, 2, 3, 1])\n"
     "  %m1: (fp32)* = const(val=-1.0)\n"
     "  %n: (1, 4, 5, 3, fp32) = mul(x=%t, y=%m1)\n"
     "  %r1: (1, 4, 5, 3, fp32) = relu(x=%n)\n"
     "  %a: (3, fp32)* = const(val=[0.5, 0.25, -1.0])\n"
     "  %am: (1, 4, 5, 3, fp32) = mul(x=%r1, y=%a)\n"
     "  %r2: (1, 4, 5, 3, fp32) = relu(x=%t)\n"
     "  %y: (1, 4, 5, 3, fp32) = add(x=%r2, y=%am)\n"
     "} -> (%y)\n"},
    {"prelu_to_lrelu", "leaky_relu",
     "main(%x: (1, 3, 4, 4, fp32)) {\n"
     "  %al: (3, fp32)* = const(val=[0.25, 0.25, 0.25])\n"
     "  %y: (1, 3, 4, 4, fp32) = prelu(x=%x, alpha=%al)\n"
     "} -> (%y)\n"},
    {"fuse_reduce_mean", "reduce_mean",
     "main(%x: (3, 5, 6, fp32)) {\n"
     "  %s: (3, fp32) = reduce_sum(x=%x, axes=[1, 2], keep_dims=false)\n"
     "  %c: (fp32)* = const(val=30.0)\n"
     "  %y: (3, fp32) = real_div(x=%s, y=%c)\n"
     "} -> (%y)\n"},
};

typedef struct refusal {
  const char *kind;
  int asked;
} refusal;

static int refuse_kind(const mgopt_program *p, const mgopt_op *op, void *ud) {
  refusal *r = (refusal *)ud;
  (void)p;
  if (strcmp(op->type, r->kind) != 0) return 1;
  r->asked++;
  return 0;
}

static int count_kind(mgopt_program *p, const char *kind) {
  const mgopt_op *op;
  int n = 0;
  for (op = mgopt_program_function_at(p, 0)->body->first; op; op = op->next) n += strcmp(op->type, kind) == 0;
  return n;
}

/* Runs the case's pass, with a target refusing the op it makes when refuse
   is set; the printed program in *out (caller frees). */
static mgopt_program *run_case(const fusion_case *c, int refuse, refusal *r, mgopt_buf *out) {
  mgopt_diag d;
  mgopt_program *p = NULL;
  mgopt_pipeline_options o;
  memset(&o, 0, sizeof o);
  o.verify_each = 1;
  if (mgopt_mil_parse(c->text, strlen(c->text), NULL, &p, &d) != MGOPT_OK) {
    printf("%s: parse error %d:%d: %s\n", c->pipeline, d.line, d.col, d.msg);
    return NULL;
  }
  r->kind = c->made;
  r->asked = 0;
  if (refuse) mgopt_program_set_target(p, refuse_kind, r);
  if (mgopt_pipeline_run(p, mgopt_builtin_registry(), c->pipeline, &o, &d) != MGOPT_OK ||
      mgopt_mil_print(p, NULL, out) != MGOPT_OK) {
    printf("%s: %s\n", c->pipeline, d.msg);
    mgopt_program_destroy(p);
    return NULL;
  }
  return p;
}

/* Without a target the fusion makes its op and shrinks the program; with a
   target that refuses that op it asks, backs out and leaves the program
   exactly as it was (nothing made, nothing erased). */
static void test_fusions_ask_the_target(void) {
  size_t i;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const fusion_case *c = &cases[i];
    mgopt_buf in = {0}, free_out = {0}, refused_out = {0};
    mgopt_diag d;
    mgopt_program *orig = NULL, *p;
    refusal r;
    int64_t n0;
    int failed_before = harness_failed_checks;
    if (mgopt_mil_parse(c->text, strlen(c->text), NULL, &orig, &d) != MGOPT_OK) {
      CHECK(orig != NULL);
      continue;
    }
    n0 = mgopt_program_op_count(orig);
    CHECK(mgopt_mil_print(orig, NULL, &in) == MGOPT_OK);
    p = run_case(c, 0, &r, &free_out);
    CHECK(p != NULL);
    if (p) {
      CHECK(count_kind(p, c->made) >= 1);
      CHECK(mgopt_program_op_count(p) < n0);
      CHECK_EQ_INT(r.asked, 0);
      mgopt_program_destroy(p);
    }
    p = run_case(c, 1, &r, &refused_out);
    CHECK(p != NULL);
    if (p) {
      CHECK(r.asked >= 1);
      CHECK_EQ_INT(count_kind(p, c->made), 0);
      CHECK_EQ_INT(mgopt_program_op_count(p), n0);
      CHECK_EQ_STR(refused_out.data, in.data);
      mgopt_program_destroy(p);
    }
    if (harness_failed_checks != failed_before) printf("  in case %s\n", c->pipeline);
    mgopt_buf_free(&in);
    mgopt_buf_free(&free_out);
    mgopt_buf_free(&refused_out);
    mgopt_program_destroy(orig);
  }
}

static const test_case tests[] = {
    TEST(test_fusions_ask_the_target),
};

TEST_MAIN(tests)
