/* tests/unit/test_eval.c — mgopt_eval: straight-line code, broadcasting, cond, while_loop, opaque ops, errors, memory. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <stdlib.h>
#include <math.h>

/* ---------------------------------------------------------------- fixtures */

/* Counts live bytes through the allocator hook, to show every run frees what it makes. */
typedef struct counting {
  long long live, blocks;
} counting;

static void *counting_realloc(void *ctx, void *ptr, size_t old, size_t size) {
  counting *c = (counting *)ctx;
  void *q;
  if (size == 0) {
    if (ptr) {
      c->live -= (long long)old;
      c->blocks--;
    }
    free(ptr);
    return NULL;
  }
  q = realloc(ptr, size);
  if (!q) return NULL;
  c->live += (long long)size - (long long)(ptr ? old : 0);
  if (!ptr) c->blocks++;
  return q;
}

static mgopt_program *parse(const char *text, const mgopt_allocator *a) {
  mgopt_program *p = NULL;
  mgopt_diag d;
  mgopt_parse_options o;
  memset(&o, 0, sizeof o);
  o.alloc = a;
  if (mgopt_mil_parse(text, strlen(text), &o, &p, &d) != MGOPT_OK) {
    printf("parse error %d:%d: %s\n", d.line, d.col, d.msg);
    return NULL;
  }
  return p;
}

static mgopt_tensor *tf32(mgopt_program *p, int rank, const int64_t *shape, const float *v) {
  mgopt_tensor *t = mgopt_eval_tensor_new(p, MGOPT_DT_FP32, rank, shape);
  if (t && t->nbytes) memcpy(t->data, v, t->nbytes);
  return t;
}

static const float *F(const mgopt_tensor *t) { return (const float *)t->data; }

/* ---------------------------------------------------------------- tests */

static void test_straight_line(void) {
  const char *src =
      "main(%x: (2, 3, fp32), %y: (3, fp32)) {\n"
      "  %a: (2, 3, fp32) = add(x=%x, y=%y)\n"
      "  %c: (fp32)* = const(val=2.0)\n"
      "  %m: (2, 3, fp32) = mul(x=%a, y=%c)\n"
      "  %r: (2, 3, fp32) = relu(x=%m)\n"
      "  %s: (2, fp32) = reduce_sum(x=%r, axes=[1], keep_dims=false)\n"
      "} -> (%s, %r, %c, %x)\n";
  mgopt_program *p = parse(src, NULL);
  int64_t sx[2] = {2, 3}, sy[1] = {3};
  float vx[6] = {1, -2, 3, -4, 5, -6}, vy[3] = {1, 1, 1};
  mgopt_tensor *in[2], *out[4];
  mgopt_diag d;
  REQUIRE(p);
  in[0] = tf32(p, 2, sx, vx);
  in[1] = tf32(p, 1, sy, vy);
  CHECK_EQ_INT(mgopt_eval(p, NULL, in, 2, out, 4, NULL, &d), MGOPT_OK);
  if (d.status == MGOPT_OK) {
    /* (x + y) * 2, relu: [4, 0, 8, 0, 12, 0]; sums [12, 12] */
    CHECK_EQ_INT(out[0]->rank, 1);
    CHECK_EQ_INT(out[0]->shape[0], 2);
    CHECK(F(out[0])[0] == 12.0f && F(out[0])[1] == 12.0f);
    CHECK(F(out[1])[0] == 4.0f && F(out[1])[1] == 0.0f && F(out[1])[4] == 12.0f);
    CHECK(out[2]->rank == 0 && F(out[2])[0] == 2.0f); /* a constant output: the caller's own copy */
    CHECK(out[3] != in[0] && F(out[3])[3] == -4.0f);  /* an input given back: a copy too */
    int i;
    for (i = 0; i < 4; i++) mgopt_eval_tensor_free(p, out[i]);
  }
  mgopt_eval_tensor_free(p, in[0]);
  mgopt_eval_tensor_free(p, in[1]);
  mgopt_program_destroy(p);
}

static void test_broadcast_and_inputs(void) {
  const char *src =
      "main(%x: (2, 1, fp32), %y: (1, s, fp32)) {\n"
      "  %a: (2, s, fp32) = sub(x=%x, y=%y)\n"
      "} -> (%a)\n";
  mgopt_program *p = parse(src, NULL);
  int64_t sx[2] = {2, 1}, sy[2] = {1, 3}, bad[2] = {2, 2};
  float vx[2] = {10, 20}, vy[3] = {1, 2, 3};
  mgopt_tensor *in[2], *out[1], *wrong;
  mgopt_diag d;
  REQUIRE(p);
  in[0] = tf32(p, 2, sx, vx);
  in[1] = tf32(p, 2, sy, vy); /* the symbolic dim takes 3 */
  CHECK_EQ_INT(mgopt_eval(p, NULL, in, 2, out, 1, NULL, &d), MGOPT_OK);
  if (d.status == MGOPT_OK) {
    CHECK(out[0]->shape[0] == 2 && out[0]->shape[1] == 3);
    CHECK(F(out[0])[0] == 9.0f && F(out[0])[2] == 7.0f && F(out[0])[3] == 19.0f && F(out[0])[5] == 17.0f);
    mgopt_eval_tensor_free(p, out[0]);
  }
  /* a static dim that disagrees, a wrong dtype, a wrong count */
  mgopt_eval_tensor_free(p, in[0]);
  wrong = mgopt_eval_tensor_new(p, MGOPT_DT_FP32, 2, bad);
  in[0] = wrong;
  CHECK_EQ_INT(mgopt_eval(p, NULL, in, 2, out, 1, NULL, &d), MGOPT_ERR_INVALID_ARG);
  CHECK(strstr(d.msg, "dim 1") != NULL);
  mgopt_eval_tensor_free(p, wrong);
  wrong = mgopt_eval_tensor_new(p, MGOPT_DT_INT32, 2, sx);
  in[0] = wrong;
  CHECK_EQ_INT(mgopt_eval(p, NULL, in, 2, out, 1, NULL, &d), MGOPT_ERR_INVALID_ARG);
  CHECK(strstr(d.msg, "int32") != NULL);
  CHECK_EQ_INT(mgopt_eval(p, NULL, in, 1, out, 1, NULL, &d), MGOPT_ERR_INVALID_ARG);
  CHECK_EQ_INT(mgopt_eval(p, "nope", in, 2, out, 1, NULL, &d), MGOPT_ERR_NOT_FOUND);
  mgopt_eval_tensor_free(p, wrong);
  mgopt_eval_tensor_free(p, in[1]);
  mgopt_program_destroy(p);
}

static void test_cond(void) {
  const char *src =
      "main(%p: (bool), %x: (3, fp32)) {\n"
      "  %o: (3, fp32) = cond(pred=%p)\n"
      "    then_branch() {\n"
      "      %a: (3, fp32) = exp(x=%x)\n"
      "      %b: (3, fp32) = add(x=%a, y=%x)\n"
      "    } -> (%b)\n"
      "    else_branch() {\n"
      "    } -> (%x)\n"
      "} -> (%o)\n";
  mgopt_program *p = parse(src, NULL);
  int64_t s3[1] = {3};
  float vx[3] = {0, 1, 2};
  mgopt_tensor *in[2], *out[1];
  mgopt_diag d;
  int b;
  REQUIRE(p);
  in[0] = mgopt_eval_tensor_new(p, MGOPT_DT_BOOL, 0, NULL);
  in[1] = tf32(p, 1, s3, vx);
  for (b = 0; b < 2; b++) {
    ((uint8_t *)in[0]->data)[0] = (uint8_t)b;
    CHECK_EQ_INT(mgopt_eval(p, NULL, in, 2, out, 1, NULL, &d), MGOPT_OK);
    if (d.status != MGOPT_OK) continue;
    if (b) CHECK(F(out[0])[0] == 1.0f && fabsf(F(out[0])[1] - (expf(1.0f) + 1.0f)) < 1e-6f);
    else CHECK(F(out[0])[0] == 0.0f && F(out[0])[2] == 2.0f);
    mgopt_eval_tensor_free(p, out[0]);
  }
  mgopt_eval_tensor_free(p, in[0]);
  mgopt_eval_tensor_free(p, in[1]);
  mgopt_program_destroy(p);
}

static void test_multi_output_and_block_outputs(void) {
  /* split's two outputs; a cond whose branches give a constant of the branch
     and a value of the enclosing block */
  const char *src =
      "main(%x: (4, fp32), %p: (bool)) {\n"
      "  %a: (2, fp32), %b: (2, fp32) = split(x=%x, num_splits=2, axis=0)\n"
      "  %o: (2, fp32) = cond(pred=%p)\n"
      "    then_branch() {\n"
      "      %k: (2, fp32)* = const(val=[7.0, 8.0])\n"
      "    } -> (%k)\n"
      "    else_branch() {\n"
      "    } -> (%b)\n"
      "  %s: (2, fp32) = add(x=%a, y=%o)\n"
      "} -> (%s, %b)\n";
  mgopt_program *p = parse(src, NULL);
  int64_t s4[1] = {4};
  float vx[4] = {1, 2, 3, 4};
  mgopt_tensor *in[2], *out[2];
  mgopt_diag d;
  int b;
  REQUIRE(p);
  in[0] = tf32(p, 1, s4, vx);
  in[1] = mgopt_eval_tensor_new(p, MGOPT_DT_BOOL, 0, NULL);
  for (b = 0; b < 2; b++) {
    ((uint8_t *)in[1]->data)[0] = (uint8_t)b;
    CHECK_EQ_INT(mgopt_eval(p, NULL, in, 2, out, 2, NULL, &d), MGOPT_OK);
    if (d.status != MGOPT_OK) continue;
    if (b) CHECK(F(out[0])[0] == 8.0f && F(out[0])[1] == 10.0f);
    else CHECK(F(out[0])[0] == 4.0f && F(out[0])[1] == 6.0f);
    CHECK(F(out[1])[0] == 3.0f && F(out[1])[1] == 4.0f);
    mgopt_eval_tensor_free(p, out[0]);
    mgopt_eval_tensor_free(p, out[1]);
  }
  mgopt_eval_tensor_free(p, in[0]);
  mgopt_eval_tensor_free(p, in[1]);
  mgopt_program_destroy(p);
}

/* sum = 0; i = 0; while i < n: sum += x; i += 1 — the count comes from an input. */
static const char *loop_src =
    "main(%n: (int32), %x: (2, fp32)) {\n"
    "  %i0: (int32)* = const(val=0)\n"
    "  %s0: (2, fp32)* = const(val=[0.0, 0.0])\n"
    "  %i: (int32), %s: (2, fp32) = while_loop(loop_vars=(%i0, %s0))\n"
    "    loop_cond(%ic: (int32), %sc: (2, fp32)) {\n"
    "      %lt: (bool) = less(x=%ic, y=%n)\n"
    "    } -> (%lt)\n"
    "    loop_body(%ib: (int32), %sb: (2, fp32)) {\n"
    "      %one: (int32)* = const(val=1)\n"
    "      %in: (int32) = add(x=%ib, y=%one)\n"
    "      %sn: (2, fp32) = add(x=%sb, y=%x)\n"
    "    } -> (%in, %sn)\n"
    "} -> (%i, %s)\n";

static void test_while_loop(void) {
  counting c = {0, 0};
  mgopt_allocator a;
  mgopt_program *p;
  int64_t s2[1] = {2};
  float vx[2] = {1.5f, -2};
  mgopt_tensor *in[2], *out[2];
  mgopt_eval_options o;
  mgopt_diag d;
  long long before;
  int32_t n;
  a.realloc = counting_realloc;
  a.ctx = &c;
  p = parse(loop_src, &a);
  REQUIRE(p);
  in[0] = mgopt_eval_tensor_new(p, MGOPT_DT_INT32, 0, NULL);
  in[1] = tf32(p, 1, s2, vx);
  before = c.live;
  for (n = 0; n <= 1000; n += 250) {
    memcpy(in[0]->data, &n, 4);
    CHECK_EQ_INT(mgopt_eval(p, NULL, in, 2, out, 2, NULL, &d), MGOPT_OK);
    if (d.status != MGOPT_OK) {
      printf("  %s\n", d.msg);
      continue;
    }
    CHECK_EQ_INT(((const int32_t *)out[0]->data)[0], n);
    CHECK(F(out[1])[0] == 1.5f * (float)n && F(out[1])[1] == -2.0f * (float)n);
    mgopt_eval_tensor_free(p, out[0]);
    mgopt_eval_tensor_free(p, out[1]);
    CHECK_EQ_INT(c.live, before); /* nothing held between runs, the arena did not grow */
  }
  /* the iteration bound */
  memset(&o, 0, sizeof o);
  o.max_loop_iterations = 10;
  n = 11;
  memcpy(in[0]->data, &n, 4);
  CHECK_EQ_INT(mgopt_eval(p, NULL, in, 2, out, 2, &o, &d), MGOPT_ERR_LIMIT);
  CHECK(strstr(d.msg, "while_loop") != NULL && strstr(d.msg, "10 iterations") != NULL);
  CHECK(d.line == 4); /* the op's place in the .mil text */
  CHECK_EQ_INT(c.live, before);
  n = 10;
  memcpy(in[0]->data, &n, 4);
  CHECK_EQ_INT(mgopt_eval(p, NULL, in, 2, out, 2, &o, &d), MGOPT_OK);
  if (d.status == MGOPT_OK) {
    mgopt_eval_tensor_free(p, out[0]);
    mgopt_eval_tensor_free(p, out[1]);
  }
  mgopt_eval_tensor_free(p, in[0]);
  mgopt_eval_tensor_free(p, in[1]);
  mgopt_program_destroy(p);
  CHECK_EQ_INT(c.live, 0);
  CHECK_EQ_INT(c.blocks, 0);
}

/* An op_fn for "my::twice": out = 2 * x (fp32). */
static mgopt_status twice_fn(void *ud, mgopt_program *p, const mgopt_op *op, mgopt_tensor *const *in, int32_t n,
                             mgopt_tensor **out, mgopt_diag *d) {
  int64_t i;
  int *calls = (int *)ud;
  (*calls)++;
  if (strcmp(op->type, "my::twice") != 0 || n != 1 || in[0]->dtype != MGOPT_DT_FP32)
    return mgopt_diag_set(d, MGOPT_ERR_UNSUPPORTED, "only my::twice on fp32");
  out[0] = mgopt_eval_tensor_new(p, MGOPT_DT_FP32, in[0]->rank, in[0]->shape);
  if (!out[0]) return MGOPT_ERR_NOMEM;
  for (i = 0; i < in[0]->numel; i++) ((float *)out[0]->data)[i] = 2.0f * ((const float *)in[0]->data)[i];
  return MGOPT_OK;
}

static void test_opaque_op(void) {
  const char *src =
      "main(%x: (2, fp32)) {\n"
      "  %a: (2, fp32) = my::twice(x=%x)\n"
      "  %b: (2, fp32) = relu(x=%a)\n"
      "} -> (%b)\n";
  mgopt_program *p = parse(src, NULL);
  int64_t s2[1] = {2};
  float vx[2] = {3, -1};
  mgopt_tensor *in[1], *out[1];
  mgopt_eval_options o;
  mgopt_diag d;
  int calls = 0;
  REQUIRE(p);
  in[0] = tf32(p, 1, s2, vx);
  CHECK_EQ_INT(mgopt_eval(p, NULL, in, 1, out, 1, NULL, &d), MGOPT_ERR_UNSUPPORTED);
  CHECK(strstr(d.msg, "no kernel for my::twice") != NULL);
  CHECK_EQ_INT(d.line, 2);
  memset(&o, 0, sizeof o);
  o.op_fn = twice_fn;
  o.op_ud = &calls;
  CHECK_EQ_INT(mgopt_eval(p, NULL, in, 1, out, 1, &o, &d), MGOPT_OK);
  CHECK_EQ_INT(calls, 1);
  if (d.status == MGOPT_OK) {
    CHECK(F(out[0])[0] == 6.0f && F(out[0])[1] == 0.0f);
    mgopt_eval_tensor_free(p, out[0]);
  }
  mgopt_eval_tensor_free(p, in[0]);
  mgopt_program_destroy(p);
}

static void test_kernel_refuses(void) {
  /* integer division by zero, an index out of range, an output over the limit */
  const char *src =
      "main(%x: (2, int32), %i: (1, int32)) {\n"
      "  %z: (int32)* = const(val=0)\n"
      "  %q: (2, int32) = floor_div(x=%x, y=%z)\n"
      "} -> (%q)\n"
      "gather_fn(%x: (2, fp32), %i: (1, int32)) {\n"
      "  %g: (1, fp32) = gather(x=%x, indices=%i, axis=0)\n"
      "} -> (%g)\n"
      "tile_fn(%x: (2, fp32)) {\n"
      "  %r: (1, int32)* = const(val=[100])\n"
      "  %t: (200, fp32) = tile(x=%x, reps=%r)\n"
      "} -> (%t)\n";
  counting c = {0, 0};
  mgopt_allocator a;
  mgopt_program *p;
  int64_t s1[1] = {1}, s2[1] = {2};
  mgopt_tensor *in[2], *out[1];
  mgopt_eval_options o;
  mgopt_diag d;
  a.realloc = counting_realloc;
  a.ctx = &c;
  p = parse(src, &a);
  REQUIRE(p);
  in[0] = mgopt_eval_tensor_new(p, MGOPT_DT_INT32, 1, s2);
  in[1] = mgopt_eval_tensor_new(p, MGOPT_DT_INT32, 1, s1);
  CHECK_EQ_INT(mgopt_eval(p, NULL, in, 2, out, 1, NULL, &d), MGOPT_ERR_UNSUPPORTED);
  CHECK(strstr(d.msg, "op 'q' (floor_div): cannot evaluate: integer division or modulo by zero") != NULL);
  CHECK_EQ_INT(d.line, 3);
  mgopt_eval_tensor_free(p, in[0]);
  in[0] = mgopt_eval_tensor_new(p, MGOPT_DT_FP32, 1, s2);
  ((int32_t *)in[1]->data)[0] = 5;
  CHECK(mgopt_eval(p, "gather_fn", in, 2, out, 1, NULL, &d) != MGOPT_OK);
  CHECK(strstr(d.msg, "(gather)") != NULL && strstr(d.msg, "index 5 out of range") != NULL);
  ((int32_t *)in[1]->data)[0] = -1; /* negative indices count from the end */
  CHECK_EQ_INT(mgopt_eval(p, "gather_fn", in, 2, out, 1, NULL, &d), MGOPT_OK);
  if (d.status == MGOPT_OK) mgopt_eval_tensor_free(p, out[0]);
  memset(&o, 0, sizeof o);
  o.max_elements = 100;
  CHECK_EQ_INT(mgopt_eval(p, "tile_fn", in, 1, out, 1, &o, &d), MGOPT_ERR_LIMIT);
  CHECK(strstr(d.msg, "above the limit") != NULL);
  mgopt_eval_tensor_free(p, in[0]);
  mgopt_eval_tensor_free(p, in[1]);
  mgopt_program_destroy(p);
  CHECK_EQ_INT(c.live, 0);
}

static void test_bad_program(void) {
  /* a hand-built program with an operand used before its definition: an error, never a crash */
  mgopt_program *p = mgopt_program_create(NULL);
  mgopt_function *f = p ? mgopt_function_new(p, "main") : NULL;
  mgopt_type t;
  mgopt_value *x;
  mgopt_op *a, *b;
  mgopt_tensor *in[1], *out[1];
  mgopt_diag d;
  int64_t s2[1] = {2};
  REQUIRE(f);
  REQUIRE(mgopt_type_make_static(p, &t, MGOPT_DT_FP32, 1, s2) == MGOPT_OK);
  x = mgopt_block_add_arg(f->body, "x", &t);
  a = mgopt_op_new(p, "relu", 1, 0);
  b = mgopt_op_new(p, "exp", 1, 0);
  REQUIRE(x && a && b);
  mgopt_op_append(b, f->body);
  mgopt_op_append(a, f->body);
  mgopt_op_set_operand(a, "x", x);
  mgopt_op_set_operand(b, "x", a->outs[0]);
  mgopt_value_set_name(a->outs[0], "a");
  mgopt_value_set_name(b->outs[0], "b");
  a->outs[0]->type = t;
  b->outs[0]->type = t;
  mgopt_block_add_output(f->body, b->outs[0]);
  in[0] = mgopt_eval_tensor_new(p, MGOPT_DT_FP32, 1, s2);
  CHECK_EQ_INT(mgopt_eval(p, NULL, in, 1, out, 1, NULL, &d), MGOPT_ERR_VERIFY);
  mgopt_eval_tensor_free(p, in[0]);
  mgopt_program_destroy(p);
}

static const test_case tests[] = {
    TEST(test_straight_line), TEST(test_broadcast_and_inputs), TEST(test_cond),       TEST(test_while_loop),
    TEST(test_opaque_op),     TEST(test_kernel_refuses),       TEST(test_bad_program),
    TEST(test_multi_output_and_block_outputs),
};
TEST_MAIN(tests)
