/* tests/unit/test_core.c — arena, interner, tensors, use lists under mutation, builder, verifier, rewriter, pass manager. */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"

static mgopt_type ty(mgopt_program *p, mgopt_dtype dt, int32_t rank, const int64_t *shape) {
  mgopt_type t;
  memset(&t, 0, sizeof t);
  mgopt_type_make_static(p, &t, dt, rank, shape);
  return t;
}

/* A program main(%x: (2, 3, fp32)) with an empty body. */
static mgopt_program *new_prog(mgopt_function **f, mgopt_value **x) {
  static const int64_t shape[2] = {2, 3};
  mgopt_program *p = mgopt_program_create(NULL);
  mgopt_type t;
  *f = mgopt_function_new(p, "main");
  t = ty(p, MGOPT_DT_FP32, 2, shape);
  *x = mgopt_block_add_arg((*f)->body, "x", &t);
  return p;
}

static mgopt_op *unary(mgopt_program *p, mgopt_block *b, const char *type, const char *name, mgopt_value *x) {
  static const char *const slot[1] = {"x"};
  mgopt_op *op = mgopt_build_op(p, b, NULL, type, name, 1, slot, &x, 1);
  /* a copy: the output must not share its dims array with the input */
  mgopt_type_make(p, &op->outs[0]->type, (mgopt_dtype)x->type.dtype, x->type.rank, x->type.dims);
  return op;
}

static void test_arena_and_interner(void) {
  mgopt_program *p = mgopt_program_create(NULL);
  const char *a, *b, *c;
  int i;
  void *big;
  REQUIRE(p != NULL);
  a = mgopt_program_intern(p, "hello world", 5);
  b = mgopt_program_intern_cstr(p, "hello");
  c = mgopt_program_intern_cstr(p, "hellO");
  CHECK(a == b);
  CHECK(a != c);
  CHECK_EQ_STR(a, "hello");
  /* many strings: the table grows and pointers stay stable */
  for (i = 0; i < 5000; i++) {
    char buf[32];
    snprintf(buf, sizeof buf, "name_%d", i);
    CHECK(mgopt_program_intern_cstr(p, buf) != NULL);
  }
  CHECK(mgopt_program_intern_cstr(p, "hello") == a);
  /* every length through the hash's word, half-word and byte tails: a string
     and each one-byte change of it are distinct, interning is stable across
     growth, and an interned pointer interns to itself */
  {
    static const char base[] = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH";
    const char *first[41][41];
    int n, k, ok = 1;
    for (n = 0; n <= 40; n++)
      for (k = 0; k <= n; k++) {
        char buf[48];
        memcpy(buf, base, (size_t)n);
        if (k < n) buf[k] ^= 0x20; /* k == n: the string itself */
        first[n][k] = mgopt_program_intern(p, buf, (size_t)n);
        if (!first[n][k] || memcmp(first[n][k], buf, (size_t)n) != 0 || first[n][k][n] != 0) ok = 0;
      }
    CHECK(ok);
    for (n = 0; n <= 40; n++)
      for (k = 0; k <= n; k++) {
        int j;
        if (mgopt_program_intern(p, first[n][k], (size_t)n) != first[n][k]) ok = 0;
        for (j = 0; j < k; j++)
          if (first[n][j] == first[n][k]) ok = 0;
      }
    CHECK(ok);
    for (i = 0; i < 20000; i++) { /* grow the table again */
      char buf[32];
      snprintf(buf, sizeof buf, "v%d", i);
      if (!mgopt_program_intern_cstr(p, buf)) ok = 0;
    }
    for (n = 0; n <= 40; n++) {
      char buf[48];
      memcpy(buf, base, (size_t)n);
      if (mgopt_program_intern(p, buf, (size_t)n) != first[n][n]) ok = 0;
    }
    CHECK(ok);
    CHECK(mgopt__intern_lookup(p, "v19999", 6) && !mgopt__intern_lookup(p, "v20000", 6));
  }
  for (i = 0; i < 100; i++) {
    char *m = (char *)mgopt_program_alloc(p, (size_t)(i * 37 + 1), 64);
    REQUIRE(m != NULL);
    CHECK(((uintptr_t)m & 63u) == 0);
    CHECK(m[0] == 0);
  }
  big = mgopt_program_alloc(p, (size_t)1 << 20, 64); /* bigger than a chunk */
  CHECK(big != NULL && ((uintptr_t)big & 63u) == 0);
  CHECK(mgopt_program_alloc(p, 8, 3) == NULL); /* not a power of two */
  CHECK(mgopt_program_status(p) == MGOPT_OK);
  CHECK(mgopt_program_arena_bytes(p) >= ((size_t)1 << 20));
  mgopt_program_destroy(p);
  mgopt_program_destroy(NULL);
}

static void test_fresh_names(void) {
  mgopt_program *p = mgopt_program_create(NULL);
  const char *a, *b;
  mgopt_program_intern_cstr(p, "relu_0");
  a = mgopt_program_fresh_name(p, "relu");
  b = mgopt_program_fresh_name(p, "relu");
  CHECK(a && b && a != b);
  CHECK(strcmp(a, "relu_0") != 0);
  mgopt_program_destroy(p);
}

static void test_dtypes_and_fp16(void) {
  CHECK_EQ_STR(mgopt_dtype_name(MGOPT_DT_FP32), "fp32");
  CHECK(mgopt_dtype_from_name("int32", 5) == MGOPT_DT_INT32);
  CHECK(mgopt_dtype_from_name("i32", 3) == MGOPT_DT_INT32);
  CHECK(mgopt_dtype_from_name("nope", 4) == MGOPT_DT_UNKNOWN);
  CHECK_EQ_INT(mgopt_dtype_nbytes(MGOPT_DT_UINT4, 3), 2);
  CHECK_EQ_INT(mgopt_dtype_nbytes(MGOPT_DT_UINT1, 9), 2);
  CHECK_EQ_INT(mgopt_dtype_nbytes(MGOPT_DT_FP16, 3), 6);
  CHECK_EQ_INT(mgopt_dtype_nbytes(MGOPT_DT_FP32, INT64_MAX / 2), -1);
  CHECK(mgopt_f32_to_f16(1.0f) == 0x3c00);
  CHECK(mgopt_f32_to_f16(-2.0f) == 0xc000);
  CHECK(mgopt_f32_to_f16(65504.0f) == 0x7bff);
  CHECK(mgopt_f32_to_f16(65520.0f) == 0x7c00);           /* rounds to inf */
  CHECK(mgopt_f32_to_f16(5.9604645e-08f) == 0x0001);     /* smallest subnormal */
  CHECK(mgopt_f32_to_f16(2.98e-08f) == 0x0000);          /* below half of it */
  CHECK(mgopt_f32_to_f16(1.0f + 1.0f / 2048.0f) == 0x3c00); /* tie to even */
  CHECK(mgopt_f32_to_f16(1.0f + 3.0f / 2048.0f) == 0x3c02);
  CHECK(mgopt_f16_to_f32(0x3555) > 0.333f && mgopt_f16_to_f32(0x3555) < 0.334f);
  CHECK(mgopt_f16_to_f32(0x0001) == 0x1p-24f); /* exact: no excess precision to differ by */
  {
    float nan = mgopt_f16_to_f32(0x7e00);
    CHECK(nan != nan);
  }
  CHECK(mgopt_f32_to_bf16(1.0f) == 0x3f80);
  CHECK(mgopt_bf16_to_f32(0x3f80) == 1.0f);
  {
    /* every fp16 value converts to fp32 and back unchanged */
    uint32_t h;
    int bad = 0;
    for (h = 0; h < 0x10000u; h++) {
      float f = mgopt_f16_to_f32((uint16_t)h);
      if (f == f && mgopt_f32_to_f16(f) != (uint16_t)h) bad++;
    }
    CHECK_EQ_INT(bad, 0);
  }
}

static void test_tensors(void) {
  mgopt_program *p = mgopt_program_create(NULL);
  static const int64_t shape[2] = {2, 3};
  mgopt_tensor *t = mgopt_tensor_new(p, MGOPT_DT_INT32, 2, shape), *u, *q;
  union {
    uint32_t align; /* raw + 1 is then misaligned for a float on every host */
    unsigned char b[8 * 4];
  } rawbuf;
  unsigned char *raw = rawbuf.b;
  int64_t i;
  REQUIRE(t != NULL);
  CHECK_EQ_INT(t->numel, 6);
  CHECK_EQ_INT(t->nbytes, 24);
  CHECK(((uintptr_t)t->data & 63u) == 0);
  for (i = 0; i < 6; i++) mgopt_tensor_set_i64(t, i, i * 10 - 20);
  CHECK_EQ_INT(mgopt_tensor_get_i64(t, 0), -20);
  CHECK(mgopt_tensor_get_f64(t, 5) == 30.0);
  u = mgopt_tensor_clone(p, t);
  CHECK(mgopt_tensor_equal(t, u));
  CHECK(mgopt_tensor_hash(t) == mgopt_tensor_hash(u));
  mgopt_tensor_set_i64(u, 2, 99);
  CHECK(!mgopt_tensor_equal(t, u));
  /* sub-byte packing */
  q = mgopt_tensor_new(p, MGOPT_DT_UINT4, 1, &shape[1]);
  mgopt_tensor_set_i64(q, 0, 15);
  mgopt_tensor_set_i64(q, 1, 3);
  mgopt_tensor_set_i64(q, 2, 9);
  CHECK_EQ_INT(q->nbytes, 2);
  CHECK(((unsigned char *)q->data)[0] == 0x3f);
  CHECK_EQ_INT(mgopt_tensor_get_i64(q, 2), 9);
  q = mgopt_tensor_new(p, MGOPT_DT_INT4, 1, &shape[1]);
  mgopt_tensor_set_i64(q, 1, -3);
  CHECK_EQ_INT(mgopt_tensor_get_i64(q, 1), -3);
  /* borrowed, misaligned: reading aligns a copy, the original buffer is untouched */
  {
    int64_t n7 = 7;
    float one = 1.5f;
    for (i = 0; i < 7; i++) memcpy(raw + 1 + 4 * i, &one, 4);
    u = mgopt_tensor_new_borrowed(p, MGOPT_DT_FP32, 1, &n7, raw + 1, 28);
    REQUIRE(u != NULL);
    CHECK(u->borrowed);
    CHECK(mgopt_tensor_get_f64(u, 6) == 1.5);
    CHECK(mgopt_tensor_data(p, u) != (const void *)(raw + 1));
    CHECK(!u->borrowed);
    CHECK(mgopt_tensor_new_borrowed(p, MGOPT_DT_FP32, 1, &n7, raw, 27) == NULL); /* size mismatch */
  }
  mgopt_program_destroy(p);
}

static int count_visit(mgopt_op *op, void *ud) {
  (void)op;
  (*(int64_t *)ud)++;
  return 0;
}

/* the O(1) op count agrees with a walk */
static int64_t walked_ops(mgopt_program *p) {
  int64_t n = 0;
  mgopt_program_walk(p, count_visit, &n);
  return n;
}

static void test_use_lists_under_mutation(void) {
  mgopt_function *f;
  mgopt_value *x;
  mgopt_program *p = new_prog(&f, &x);
  mgopt_op *ops[200];
  mgopt_diag d;
  int i;
  uint32_t rng = 12345;
  /* a chain of 200 unary ops; then random rewiring of operands */
  for (i = 0; i < 200; i++) ops[i] = unary(p, f->body, "relu", NULL, i ? ops[i - 1]->outs[0] : x);
  for (i = 0; i < 200; i++) {
    char nm[16];
    snprintf(nm, sizeof nm, "v%d", i);
    mgopt_value_set_name(ops[i]->outs[0], nm);
  }
  mgopt_block_add_output(f->body, ops[199]->outs[0]);
  CHECK(mgopt_program_verify(p, &d) == MGOPT_OK);
  CHECK_EQ_INT(x->nuses, 1);
  for (i = 0; i < 5000; i++) {
    int a, b;
    rng = rng * 1103515245u + 12345u;
    a = 1 + (int)((rng >> 8) % 199u);
    rng = rng * 1103515245u + 12345u;
    b = (int)((rng >> 8) % (uint32_t)a); /* an earlier op: stays in scope */
    mgopt_op_set_operand(ops[a], "x", ops[b]->outs[0]);
  }
  CHECK(mgopt_program_verify(p, &d) == MGOPT_OK);
  {
    /* sum of use counts equals the number of operand slots + the block output */
    int64_t total = x->nuses;
    for (i = 0; i < 200; i++) total += ops[i]->outs[0]->nuses;
    CHECK_EQ_INT(total, 200 + 1);
  }
  /* replace all uses of op 0 with x, then erase op 0 */
  mgopt_value_replace_all_uses(ops[0]->outs[0], x);
  CHECK_EQ_INT(ops[0]->outs[0]->nuses, 0);
  mgopt_op_erase(ops[0]);
  CHECK(ops[0]->flags & MGOPT_OP_ERASED);
  CHECK(mgopt_program_verify(p, &d) == MGOPT_OK);
  CHECK_EQ_INT(f->body->nops, 199);
  CHECK_EQ_INT(mgopt_program_op_count(p), 199);
  CHECK_EQ_INT(walked_ops(p), 199);
  /* move the last op to the front: now it uses values defined after it */
  mgopt_op_move_before(ops[199], f->body->first);
  CHECK(mgopt_program_verify(p, &d) == MGOPT_ERR_VERIFY);
  mgopt_op_move_to_end(ops[199], f->body);
  CHECK(mgopt_program_verify(p, &d) == MGOPT_OK);
  mgopt_program_destroy(p);
}

static void test_variadic_and_block_outputs(void) {
  mgopt_function *f;
  mgopt_value *x;
  mgopt_program *p = new_prog(&f, &x);
  mgopt_op *c = mgopt_op_new(p, "concat", 1, 0);
  mgopt_value *vals[3];
  mgopt_diag d;
  vals[0] = x;
  vals[1] = x;
  vals[2] = x;
  REQUIRE(c != NULL);
  mgopt_op_set_operand_list(c, "values", vals, 3);
  mgopt_op_set_int(c, "axis", 0);
  mgopt_op_append(c, f->body);
  mgopt_value_set_name(c->outs[0], "c");
  {
    static const int64_t s[2] = {6, 3};
    c->outs[0]->type = ty(p, MGOPT_DT_FP32, 2, s);
  }
  CHECK_EQ_INT(x->nuses, 3);
  mgopt_op_set_operand_list(c, "values", vals, 2);
  CHECK_EQ_INT(x->nuses, 2);
  mgopt_block_add_output(f->body, c->outs[0]);
  mgopt_block_add_output(f->body, x);
  CHECK_EQ_INT(x->nuses, 3);
  CHECK(mgopt_value_is_block_output(x));
  mgopt_block_remove_output(f->body, 1);
  CHECK_EQ_INT(x->nuses, 2);
  CHECK(!mgopt_value_is_block_output(x));
  {
    static const int64_t s[2] = {4, 3};
    c->outs[0]->type = ty(p, MGOPT_DT_FP32, 2, s);
  }
  CHECK(mgopt_program_verify(p, &d) == MGOPT_OK);
  mgopt_program_destroy(p);
}

static void test_attributes_and_params(void) {
  mgopt_function *f;
  mgopt_value *x;
  mgopt_program *p = new_prog(&f, &x);
  mgopt_op *op = unary(p, f->body, "transpose", "t", x);
  const int64_t perm[2] = {1, 0};
  const int64_t *got = NULL;
  mgopt_op_set_ints(op, "perm", perm, 2);
  CHECK_EQ_INT(mgopt_op_get_ints(p, op, "perm", &got), 2);
  CHECK(got && got[0] == 1 && got[1] == 0);
  mgopt_op_set_float(op, "alpha", 0.5);
  CHECK(mgopt_op_get_float(op, "alpha", 0) == 0.5);
  mgopt_op_set_float(op, "alpha", 0.25); /* overwrite, not duplicate */
  CHECK_EQ_INT(op->nattrs, 2);
  CHECK(mgopt_op_get_float(op, "alpha", 0) == 0.25);
  mgopt_op_set_string(op, "mode", "EXACT");
  CHECK_EQ_STR(mgopt_op_get_string(op, "mode", NULL), "EXACT");
  mgopt_op_remove_attr(op, "alpha");
  CHECK(mgopt_op_attr(op, "alpha") == NULL);
  CHECK(mgopt_op_get_float(op, "alpha", 7.0) == 7.0);
  /* a parameter given as a constant operand */
  {
    mgopt_tensor *t = mgopt_tensor_new_scalar_i64(p, MGOPT_DT_INT32, 3);
    mgopt_value *c = mgopt_build_const(p, f->body, op, "k", t);
    REQUIRE(c != NULL);
    mgopt_op_set_operand(op, "axis", c);
    CHECK_EQ_INT(mgopt_op_get_int(op, "axis", -1), 3);
  }
  mgopt_program_destroy(p);
}

static void test_op_count_with_nested_blocks(void) {
  static const char text[] =
      "main(%a: (1, 2, fp32)) {\n"
      "  %l: (1, 2, fp32) = while_loop(loop_vars=(%a))\n"
      "    loop_cond(%a_x: (1, 2, fp32)) {\n"
      "      %r: (fp32) = reduce_sum(x=%a_x, axes=[0, 1], keep_dims=false)\n"
      "      %z: (fp32)* = const(val=10)\n"
      "      %lt: (bool) = less(x=%r, y=%z)\n"
      "    } -> (%lt)\n"
      "    loop_body(%a_x: (1, 2, fp32)) {\n"
      "      %s: (1, 2, fp32) = add(x=%a_x, y=%a_x)\n"
      "    } -> (%s)\n"
      "  %y: (1, 2, fp32) = relu(x=%a)\n"
      "} -> (%y)\n";
  mgopt_diag d;
  mgopt_program *p = NULL;
  mgopt_mil_parse(text, sizeof text - 1, NULL, &p, &d);
  REQUIRE(p != NULL);
  CHECK_EQ_INT(mgopt_program_op_count(p), 6);
  CHECK_EQ_INT(walked_ops(p), 6);
  CHECK(mgopt_pipeline_run(p, mgopt_builtin_registry(), "dead_code_elimination", NULL, &d) == MGOPT_OK);
  CHECK_EQ_INT(mgopt_program_op_count(p), 1);
  CHECK_EQ_INT(walked_ops(p), 1);
  mgopt_program_destroy(p);
}

static void test_verifier_loop_block_args(void) {
  static const char text[] =
      "main(%a: (1, 2, fp32)) {\n"
      "  %l: (1, 2, fp32) = while_loop(loop_vars=(%a))\n"
      "    loop_cond(%a_x: (1, 2, fp32)) {\n"
      "      %r: (fp32) = reduce_sum(x=%a_x, axes=[0, 1], keep_dims=false)\n"
      "      %z: (fp32)* = const(val=10)\n"
      "      %lt: (bool) = less(x=%r, y=%z)\n"
      "    } -> (%lt)\n"
      "    loop_body(%a_x: (1, 3, fp32)) {\n"
      "      %s: (1, 3, fp32) = add(x=%a_x, y=%a_x)\n"
      "    } -> (%s)\n"
      "} -> (%l)\n";
  mgopt_diag d;
  mgopt_program *p = NULL;
  mgopt_mil_parse(text, sizeof text - 1, NULL, &p, &d);
  REQUIRE(p != NULL);
  /* the body's argument contradicts the loop var's static dim */
  CHECK(mgopt_program_verify(p, &d) == MGOPT_ERR_VERIFY);
  mgopt_program_destroy(p);
}

/* The body gives the loop vars back and the condition gives one bool: a
   body output or condition that contradicts them is caught; symbolic dims
   and a one-element condition pass. */
static void test_verifier_loop_body_outputs(void) {
  static const char *const cases[][2] = {
      /* body output, condition, */
      {"%s: (1, 2, fp32) = add(x=%a_x, y=%a_x)", "%lt: (bool) = less(x=%r, y=%z)"},
      {"%s: (1, n, fp32) = add(x=%a_x, y=%a_x)", "%lt: (1, bool) = less(x=%r1, y=%z)"},
      {"%s: (1, 3, fp32) = slice_by_size(x=%a_x, begin=[0, 0], size=[1, 3])", "%lt: (bool) = less(x=%r, y=%z)"},
      {"%s: (1, 2, fp16) = cast(x=%a_x, dtype=\"fp16\")", "%lt: (bool) = less(x=%r, y=%z)"},
      {"%s: (1, 2, fp32) = add(x=%a_x, y=%a_x)", "%lt: (1, 2, bool) = less(x=%a_x, y=%z)"},
  };
  static const int ok[] = {1, 1, 0, 0, 0};
  int i;
  for (i = 0; i < 5; i++) {
    char text[1024];
    mgopt_diag d;
    mgopt_program *p;
    snprintf(text, sizeof text,
             "main(%%a: (1, 2, fp32)) {\n"
             "  %%l: (1, 2, fp32) = while_loop(loop_vars=(%%a))\n"
             "    loop_cond(%%a_x: (1, 2, fp32)) {\n"
             "      %%r: (fp32) = reduce_sum(x=%%a_x, axes=[0, 1], keep_dims=false)\n"
             "      %%r1: (1, fp32) = reduce_sum(x=%%a_x, axes=[1], keep_dims=false)\n"
             "      %%z: (fp32)* = const(val=10)\n"
             "      %s\n"
             "    } -> (%%lt)\n"
             "    loop_body(%%a_x: (1, 2, fp32)) {\n"
             "      %s\n"
             "    } -> (%%s)\n"
             "} -> (%%l)\n",
             cases[i][1], cases[i][0]);
    if (mgopt_mil_parse(text, strlen(text), NULL, &p, &d) != MGOPT_OK) p = NULL;
    REQUIRE(p != NULL);
    if (ok[i]) CHECK_EQ_INT(mgopt_program_verify(p, &d), MGOPT_OK);
    else CHECK_EQ_INT(mgopt_program_verify(p, &d), MGOPT_ERR_VERIFY);
    mgopt_program_destroy(p);
  }
}

/* ---- verifier: each kind of broken IR is caught */

static void test_verifier_catches(void) {
  mgopt_function *f;
  mgopt_value *x;
  mgopt_diag d;
  mgopt_program *p = new_prog(&f, &x);
  mgopt_op *a = unary(p, f->body, "relu", "a", x);
  mgopt_op *b = unary(p, f->body, "relu", "b", a->outs[0]);
  mgopt_block_add_output(f->body, b->outs[0]);
  CHECK(mgopt_program_verify(p, &d) == MGOPT_OK);
  /* stale use count */
  a->outs[0]->nuses++;
  CHECK(mgopt_program_verify(p, &d) == MGOPT_ERR_VERIFY);
  CHECK(d.op[0] != 0);
  a->outs[0]->nuses--;
  /* a use record pointing elsewhere */
  b->slots[0].uses[0].index = 5;
  CHECK(mgopt_program_verify(p, &d) == MGOPT_ERR_VERIFY);
  b->slots[0].uses[0].index = 0;
  /* unnamed value */
  a->outs[0]->name = NULL;
  CHECK(mgopt_program_verify(p, &d) == MGOPT_ERR_VERIFY);
  mgopt_value_set_name(a->outs[0], "a");
  /* op count out of date */
  f->body->nops++;
  CHECK(mgopt_program_verify(p, &d) == MGOPT_ERR_VERIFY);
  f->body->nops--;
  /* an erased op left in the list */
  b->flags |= MGOPT_OP_ERASED;
  CHECK(mgopt_program_verify(p, &d) == MGOPT_ERR_VERIFY);
  b->flags &= ~(uint32_t)MGOPT_OP_ERASED;
  /* block output defined nowhere in scope */
  {
    mgopt_op *lone = mgopt_op_new(p, "relu", 1, 0);
    mgopt_value_set_name(lone->outs[0], "lone");
    mgopt_block_set_output(f->body, 0, lone->outs[0]);
    CHECK(mgopt_program_verify(p, &d) == MGOPT_ERR_VERIFY);
    mgopt_block_set_output(f->body, 0, b->outs[0]);
  }
  CHECK(mgopt_program_verify(p, &d) == MGOPT_OK);
  mgopt_program_destroy(p);
}

static void test_verifier_schema_and_types(void) {
  mgopt_function *f;
  mgopt_value *x;
  mgopt_diag d;
  mgopt_program *p;
  mgopt_op *a;
  REQUIRE(mgopt_op_def_get(MGOPT_OP_relu) != NULL);
  p = new_prog(&f, &x);
  a = unary(p, f->body, "relu", "a", x);
  mgopt_block_add_output(f->body, a->outs[0]);
  CHECK(mgopt_program_verify(p, &d) == MGOPT_OK);
  /* unknown operand slot */
  mgopt_op_set_operand(a, "bogus", x);
  CHECK(mgopt_program_verify(p, &d) == MGOPT_ERR_VERIFY);
  mgopt_op_set_operand(a, "bogus", NULL);
  CHECK(mgopt_program_verify(p, &d) == MGOPT_OK);
  /* missing operand */
  mgopt_op_set_operand(a, "x", NULL);
  CHECK(mgopt_program_verify(p, &d) == MGOPT_ERR_VERIFY);
  mgopt_op_set_operand(a, "x", x);
  /* unknown attribute */
  mgopt_op_set_int(a, "bogus", 1);
  CHECK(mgopt_program_verify(p, &d) == MGOPT_ERR_VERIFY);
  mgopt_op_remove_attr(a, "bogus");
  /* output type contradicting inference */
  a->outs[0]->type.dtype = MGOPT_DT_INT32;
  CHECK(mgopt_program_verify(p, &d) == MGOPT_ERR_VERIFY);
  a->outs[0]->type.dtype = MGOPT_DT_FP32;
  a->outs[0]->type.dims[1].v = 4;
  CHECK(mgopt_program_verify(p, &d) == MGOPT_ERR_VERIFY);
  a->outs[0]->type.dims[1].v = 3;
  CHECK(mgopt_program_verify(p, &d) == MGOPT_OK);
  mgopt_program_destroy(p);
}

/* ---- rewriter */

/* relu(relu(x)) -> relu(x) */
static int pat_relu_relu(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *in = mgopt_op_operand(op, "x");
  (void)ud;
  if (!in || !in->def || in->def->kind != MGOPT_OP_relu) return 0;
  mgopt_rw_replace_value(rw, op->outs[0], in);
  mgopt_rw_erase(rw, op);
  return 1;
}

/* a pattern that never converges: flips an attribute forever */
static int pat_flip(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  (void)ud;
  mgopt_op_set_int(op, "flip", !mgopt_op_get_int(op, "flip", 0));
  mgopt_rw_modified(rw, op);
  return 1;
}

static void test_rewriter(void) {
  mgopt_function *f;
  mgopt_value *x;
  mgopt_diag d;
  mgopt_program *p = new_prog(&f, &x);
  mgopt_op *prev = NULL;
  mgopt_pattern pats[1];
  mgopt_rewrite_stats st;
  int64_t per[1] = {0};
  int i;
  for (i = 0; i < 50; i++) {
    char nm[16];
    snprintf(nm, sizeof nm, "r%d", i);
    prev = unary(p, f->body, "relu", nm, prev ? prev->outs[0] : x);
  }
  unary(p, f->body, "exp", "dead", x);
  mgopt_block_add_output(f->body, prev->outs[0]);
  memset(pats, 0, sizeof pats);
  pats[0].name = "relu_relu";
  pats[0].root_kind = MGOPT_OP_relu;
  pats[0].benefit = 1;
  pats[0].fn = pat_relu_relu;
  memset(&st, 0, sizeof st);
  st.npatterns = 1;
  st.per_pattern = per;
  {
    mgopt_rewrite_config cfg;
    memset(&cfg, 0, sizeof cfg); /* zeroed: dead ops are erased */
    cfg.verify_each = 1;
    CHECK(mgopt_rewrite_function(p, f, pats, 1, &cfg, &st, &d) == MGOPT_OK);
  }
  CHECK_EQ_INT(f->body->nops, 1); /* one relu left, the dead exp erased */
  CHECK_EQ_INT(mgopt_program_op_count(p), walked_ops(p));
  CHECK_EQ_INT(per[0], 49);
  CHECK(f->body->outs[0]->value->def->kind == MGOPT_OP_relu);
  CHECK(f->body->outs[0]->value->def->slots[0].uses[0].value == x);
  CHECK(mgopt_program_verify(p, &d) == MGOPT_OK);
  /* the rewrite cap names the pattern that kept firing */
  pats[0].name = "flip";
  pats[0].fn = pat_flip;
  {
    mgopt_rewrite_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.max_rewrites = 100;
    CHECK(mgopt_rewrite_function(p, f, pats, 1, &cfg, NULL, &d) == MGOPT_ERR_NO_FIXPOINT);
    CHECK(strstr(d.msg, "flip") != NULL);
  }
  /* a bad pattern table is an error, not a crash */
  pats[0].fn = NULL;
  CHECK(mgopt_rewrite_function(p, f, pats, 1, NULL, NULL, &d) == MGOPT_ERR_INVALID_ARG);
  mgopt_program_destroy(p);
}

/* A zeroed config and a NULL one both erase dead ops; keep_dead keeps them. */
static void test_rewrite_config_defaults(void) {
  int k;
  for (k = 0; k < 3; k++) {
    mgopt_function *f;
    mgopt_value *x;
    mgopt_diag d;
    mgopt_program *p = new_prog(&f, &x);
    mgopt_rewrite_config cfg;
    mgopt_op *live = unary(p, f->body, "relu", "live", x);
    unary(p, f->body, "exp", "dead", x);
    mgopt_block_add_output(f->body, live->outs[0]);
    memset(&cfg, 0, sizeof cfg);
    cfg.keep_dead = k == 2;
    CHECK(mgopt_rewrite_function(p, f, NULL, 0, k == 0 ? NULL : &cfg, NULL, &d) == MGOPT_OK);
    CHECK_EQ_INT(f->body->nops, k == 2 ? 2 : 1);
    mgopt_program_destroy(p);
  }
}

/* mgopt_rw_set_operand reports what mgopt_op_set_operand reports. */
static int pat_set_operand(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  mgopt_status *st = (mgopt_status *)ud;
  if (!x || mgopt_op_operand(op, "y")) return 0;
  *st = mgopt_rw_set_operand(rw, op, "y", x);
  return 1;
}

static void test_rw_set_operand_status(void) {
  mgopt_function *f;
  mgopt_value *x;
  mgopt_diag d;
  mgopt_program *p = new_prog(&f, &x);
  mgopt_pattern pat;
  mgopt_status st = MGOPT_ERR_PASS;
  mgopt_op *op = unary(p, f->body, "add", "a", x);
  mgopt_block_add_output(f->body, op->outs[0]);
  memset(&pat, 0, sizeof pat);
  pat.name = "set_y";
  pat.root_kind = MGOPT_OP_add;
  pat.fn = pat_set_operand;
  pat.ud = &st;
  CHECK(mgopt_rewrite_function(p, f, &pat, 1, NULL, NULL, &d) == MGOPT_OK);
  CHECK_EQ_INT(st, MGOPT_OK);
  CHECK(mgopt_op_operand(op, "y") == x);
  mgopt_program_destroy(p);
}

/* ---- pass manager */

static int counter_runs;
static mgopt_status counter_run(mgopt_pass_ctx *ctx) {
  counter_runs += (int)ctx->opts[0].i;
  if (ctx->opts[1].f != 0.5) counter_runs += 1000;
  if (strcmp(ctx->opts[2].s, "abc") != 0 && strcmp(ctx->opts[2].s, "a b") != 0 && strcmp(ctx->opts[2].s, "x,y+z") != 0)
    counter_runs += 100000;
  return MGOPT_OK;
}
static mgopt_status failing_run(mgopt_pass_ctx *ctx) {
  return mgopt_diag_set(ctx->diag, MGOPT_ERR_PASS, "cannot do it");
}
static int skipped_seen;
static void note_skipped(mgopt_program *p, const mgopt_pass_report *r, void *ud) {
  (void)p;
  (void)ud;
  if (r->status == MGOPT_ERR_PASS && r->diag && strstr(r->diag->msg, "cannot do it")) skipped_seen++;
}

static void test_pass_manager(void) {
  static const mgopt_opt_def opts[3] = {{"n", MGOPT_OPT_INT, "1", "count", "1..8"},
                                        {"f", MGOPT_OPT_FLOAT, "0.5", "a float", "-1|0..1"},
                                        {"s", MGOPT_OPT_STRING, "abc", "a string", NULL}};
  static const mgopt_pass_def counter = {"test::counter", "test", "counts", 3, opts, counter_run, NULL, 0, 0, NULL, 0};
  static const mgopt_pass_def failing = {"test::failing", "test", "fails", 0, NULL, failing_run, NULL, 0, 0, NULL, 0};
  static const mgopt_pass_def *const passes[2] = {&counter, &failing};
  static const mgopt_pipeline_def pipes[2] = {{"twice", "counter,counter{n=2}", "x"},
                                              {"loop", "loop", "recursive"}};
  mgopt_registry r;
  mgopt_function *f;
  mgopt_value *x;
  mgopt_diag d;
  mgopt_program *p = new_prog(&f, &x);
  mgopt_pass_report reps[8];
  int32_t nrep = 0;
  mgopt_pipeline_options po;
  memset(&po, 0, sizeof po);
  po.reports = reps;
  po.reports_cap = 8;
  po.nreports = &nrep;
  memset(&r, 0, sizeof r);
  r.passes = passes;
  r.npasses = 2;
  r.pipelines = pipes;
  r.npipelines = 2;
  CHECK(mgopt_registry_find(&r, "counter", 7) == &counter);
  CHECK(mgopt_registry_find(&r, "test::counter", 13) == &counter);
  CHECK(mgopt_registry_find(&r, "count", 5) == NULL);
  counter_runs = 0;
  CHECK(mgopt_pipeline_run(p, &r, "counter{n=5}, twice,test::counter{s=\"a b\"}", &po, &d) == MGOPT_OK);
  CHECK_EQ_INT(counter_runs, 5 + 1 + 2 + 1);
  CHECK_EQ_INT(nrep, 4);
  CHECK_EQ_STR(reps[0].name, "test::counter");
  /* a bare list value keeps its commas up to the next "name=" */
  counter_runs = 0;
  CHECK(mgopt_pipeline_run(p, &r, "counter{s=x,y+z, n=3},counter{n=2,s=x,y+z}", NULL, &d) == MGOPT_OK);
  CHECK_EQ_INT(counter_runs, 5);
  CHECK(mgopt_pipeline_check(&r, "counter{s=x,y+z,}", &d) == MGOPT_ERR_INVALID_ARG);
  CHECK(mgopt_pipeline_run(p, &r, "none", NULL, &d) == MGOPT_OK);
  CHECK(mgopt_pipeline_run(p, &r, "", NULL, &d) == MGOPT_OK);
  /* errors: unknown pass, unknown option, bad value, syntax, recursion: nothing runs */
  counter_runs = 0;
  CHECK(mgopt_pipeline_run(p, &r, "counter,nosuch", NULL, &d) == MGOPT_ERR_INVALID_ARG);
  CHECK_EQ_INT(d.col, 9);
  CHECK_EQ_INT(counter_runs, 0);
  CHECK(mgopt_pipeline_check(&r, "counter{m=1}", &d) == MGOPT_ERR_INVALID_ARG);
  CHECK_EQ_INT(d.col, 9);
  CHECK(mgopt_pipeline_check(&r, "counter{n=x}", &d) == MGOPT_ERR_INVALID_ARG);
  /* a value outside the declared allowed values: its column and the allowed ones */
  CHECK(mgopt_pipeline_run(p, &r, "counter,counter{n=9}", NULL, &d) == MGOPT_ERR_INVALID_ARG);
  CHECK_EQ_INT(d.col, 19);
  CHECK(strstr(d.msg, "'9'") && strstr(d.msg, "(allowed: 1..8)"));
  CHECK_EQ_INT(counter_runs, 0);
  CHECK(mgopt_pipeline_check(&r, "counter{n=0}", &d) == MGOPT_ERR_INVALID_ARG);
  CHECK(mgopt_pipeline_check(&r, "counter{n=8,f=-1}", &d) == MGOPT_OK);
  CHECK(mgopt_pipeline_check(&r, "counter{f=0}", &d) == MGOPT_OK);
  CHECK(mgopt_pipeline_check(&r, "counter{f=1.5}", &d) == MGOPT_ERR_INVALID_ARG);
  CHECK(strstr(d.msg, "(allowed: -1, 0..1)") != NULL);
  CHECK(mgopt_pipeline_check(&r, "counter{f=-0.5}", &d) == MGOPT_ERR_INVALID_ARG);
  CHECK(mgopt_pipeline_check(&r, "counter{f=nan}", &d) == MGOPT_ERR_INVALID_ARG);
  CHECK(mgopt_pipeline_check(&r, "counter{n=1", &d) == MGOPT_ERR_INVALID_ARG);
  CHECK(mgopt_pipeline_check(&r, "counter,,counter", &d) == MGOPT_ERR_INVALID_ARG);
  CHECK(mgopt_pipeline_check(&r, "counter counter", &d) == MGOPT_ERR_INVALID_ARG);
  CHECK(mgopt_pipeline_check(&r, "twice{n=1}", &d) == MGOPT_ERR_INVALID_ARG);
  CHECK(mgopt_pipeline_check(&r, "loop", &d) == MGOPT_ERR_INVALID_ARG);
  /* strict: a failing pass stops the pipeline with its name and status */
  po.strict = 1;
  nrep = 0;
  counter_runs = 0;
  CHECK(mgopt_pipeline_run(p, &r, "failing,counter", &po, &d) == MGOPT_ERR_PASS);
  CHECK(strstr(d.msg, "test::failing") != NULL);
  CHECK_EQ_INT(counter_runs, 0);
  /* by default it is skipped: reported with its status, the pipeline goes on */
  counter_runs = 0;
  CHECK(mgopt_pipeline_run(p, &r, "failing,counter", NULL, &d) == MGOPT_OK);
  CHECK_EQ_INT(counter_runs, 1);
  CHECK_EQ_INT(d.status, MGOPT_OK);
  po.strict = 0;
  skipped_seen = 0;
  po.after_pass = note_skipped;
  CHECK(mgopt_pipeline_run(p, &r, "failing,counter", &po, &d) == MGOPT_OK);
  CHECK_EQ_INT(nrep, 2);
  CHECK_EQ_INT(reps[0].status, MGOPT_ERR_PASS);
  CHECK(reps[0].diag == NULL);
  CHECK_EQ_INT(reps[1].status, MGOPT_OK);
  CHECK_EQ_INT(skipped_seen, 1);
  mgopt_program_destroy(p);
}

static void test_builtin_registry(void) {
  const mgopt_registry *r = mgopt_builtin_registry();
  int32_t i, j;
  mgopt_diag d;
  REQUIRE(r != NULL);
  CHECK(mgopt_registry_find(r, "dead_code_elimination", 21) != NULL);
  CHECK(mgopt_registry_find(r, "common::dead_code_elimination", 29) != NULL);
  /* names unique, every named pipeline valid */
  for (i = 0; i < r->npasses; i++)
    for (j = i + 1; j < r->npasses; j++) CHECK(strcmp(r->passes[i]->name, r->passes[j]->name) != 0);
  for (i = 0; i < r->npipelines; i++) {
    CHECK(mgopt_pipeline_check(r, r->pipelines[i].passes, &d) == MGOPT_OK);
  }
}

/* ---- op index */

typedef struct kinds_walk {
  const int32_t *kinds;
  int32_t nk;
  mgopt_op *ops[4096];
  int64_t n;
} kinds_walk;

static int collect_kinds(mgopt_op *op, void *ud) {
  kinds_walk *w = (kinds_walk *)ud;
  int32_t i;
  for (i = 0; i < w->nk; i++)
    if (op->kind == w->kinds[i] && w->n < 4096) w->ops[w->n++] = op;
  return 0;
}

/* The index lists the ops of `kinds` in the order a walk of f meets them,
   and the verifier (which checks the index) accepts the program. */
static int index_agrees(mgopt_program *p, mgopt_function *f, const int32_t *kinds, int32_t nk) {
  static kinds_walk w;
  mgopt_op **got = NULL;
  int64_t cap = 0, n, i;
  mgopt_diag d;
  int ok;
  w.kinds = kinds;
  w.nk = nk;
  w.n = 0;
  mgopt_block_walk(f->body, collect_kinds, &w);
  n = mgopt__index_collect(f, kinds, nk, &got, &cap);
  ok = n == w.n && mgopt_program_verify(p, &d) == MGOPT_OK;
  if (!ok) printf("index_agrees: %lld vs %lld: %s\n", (long long)n, (long long)w.n, d.msg);
  for (i = 0; ok && i < n; i++) ok = got[i] == w.ops[i];
  if (got) mgopt__heap_free(&p->alloc, got, sizeof(mgopt_op *) * (size_t)cap);
  return ok;
}

static mgopt_op *named_unary(mgopt_program *p, mgopt_block *b, const char *type, mgopt_value *x) {
  static int serial;
  char nm[32];
  snprintf(nm, sizeof nm, "n%d", serial++);
  return unary(p, b, type, nm, x);
}

static void test_op_index(void) {
  static const int32_t rx[2] = {MGOPT_OP_relu, MGOPT_OP_exp}, re[1] = {MGOPT_OP_exp};
  static const int32_t nested[4] = {MGOPT_OP_add, MGOPT_OP_exp, MGOPT_OP_less, MGOPT_OP_while_loop};
  static const char text[] =
      "main(%a: (1, 2, fp32)) {\n"
      "  %l: (1, 2, fp32) = while_loop(loop_vars=(%a))\n"
      "    loop_cond(%a_x: (1, 2, fp32)) {\n"
      "      %r: (fp32) = reduce_sum(x=%a_x, axes=[0, 1], keep_dims=false)\n"
      "      %z: (fp32)* = const(val=10)\n"
      "      %lt: (bool) = less(x=%r, y=%z)\n"
      "    } -> (%lt)\n"
      "    loop_body(%a_x: (1, 2, fp32)) {\n"
      "      %s: (1, 2, fp32) = add(x=%a_x, y=%a_x)\n"
      "    } -> (%s)\n"
      "  %y: (1, 2, fp32) = exp(x=%a)\n"
      "} -> (%y)\n";
  mgopt_function *f;
  mgopt_value *x;
  mgopt_diag d;
  mgopt_program *p = new_prog(&f, &x);
  mgopt_op *ops[600], *second, *loop;
  uint64_t rng = 12345;
  int i;
  for (i = 0; i < 300; i++) ops[i] = named_unary(p, f->body, i % 3 ? "relu" : "exp", x);
  CHECK(index_agrees(p, f, rx, 2));
  CHECK(index_agrees(p, f, re, 1));
  /* many inserts at one place and at the front relabel locally */
  second = ops[1];
  for (i = 0; i < 2000; i++) {
    mgopt_op *o = named_unary(p, f->body, "exp", x);
    if (i % 2) mgopt_op_move_before(o, second);
    else mgopt_op_move_before(o, f->body->first);
  }
  CHECK(index_agrees(p, f, rx, 2));
  CHECK_EQ_INT(mgopt__index_op_count(f), 2300);
  /* moves and erasures anywhere */
  for (i = 0; i < 3000; i++) {
    mgopt_op *a, *b;
    int32_t k;
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    a = f->body->first;
    for (k = (int32_t)((rng >> 33) % 300); k > 0 && a->next; k--) a = a->next;
    b = f->body->last;
    for (k = (int32_t)((rng >> 17) % 300); k > 0 && b->prev; k--) b = b->prev;
    if (i % 7 == 0) mgopt_op_erase(a);
    else if (i % 11 == 0) mgopt_op_move_to_end(a, f->body);
    else mgopt_op_move_before(a, b);
  }
  CHECK(index_agrees(p, f, rx, 2));
  CHECK(index_agrees(p, f, re, 1));
  /* more kinds than one merge round takes */
  {
    static const char *const names[10] = {"abs", "exp", "log", "sqrt", "square", "tanh",
                                          "sigmoid", "relu", "floor", "ceil"};
    static const int32_t ten[10] = {MGOPT_OP_abs, MGOPT_OP_exp, MGOPT_OP_log, MGOPT_OP_sqrt,
                                    MGOPT_OP_square, MGOPT_OP_tanh, MGOPT_OP_sigmoid, MGOPT_OP_relu,
                                    MGOPT_OP_floor, MGOPT_OP_ceil};
    for (i = 0; i < 500; i++) {
      mgopt_op *o = named_unary(p, f->body, names[i % 10], x), *at = f->body->first;
      int32_t k;
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      for (k = (int32_t)((rng >> 33) % 500); k > 0 && at->next; k--) at = at->next;
      mgopt_op_move_before(o, at);
    }
    CHECK(index_agrees(p, f, ten, 10));
  }
  /* drift is caught */
  {
    mgopt__op_rec *r0 = MGOPT__OP_REC(f->body->first), *r1 = MGOPT__OP_REC(f->body->first->next);
    uint64_t t = r0->label;
    r0->label = r1->label;
    r1->label = t;
    CHECK(mgopt_program_verify(p, &d) == MGOPT_ERR_VERIFY);
    r1->label = r0->label;
    r0->label = t;
    CHECK(mgopt_program_verify(p, &d) == MGOPT_OK);
  }
  mgopt_program_destroy(p);

  /* nested blocks: an op's nested ops follow it, before its next op */
  REQUIRE(mgopt_mil_parse(text, sizeof text - 1, NULL, &p, &d) == MGOPT_OK);
  f = mgopt_program_function(p, "main");
  CHECK(index_agrees(p, f, nested, 4));
  loop = f->body->first;
  for (i = 0; i < 200; i++) {
    mgopt_block *b = loop->blocks[i % 2];
    mgopt_op *o = named_unary(p, b, "exp", b->args[0]);
    if (i % 3 == 0) mgopt_op_move_before(o, b->first);
    if (i % 5 == 0) mgopt_op_move_before(named_unary(p, f->body, "exp", f->body->args[0]), loop);
  }
  CHECK(index_agrees(p, f, nested, 4));
  CHECK_EQ_INT(mgopt__index_op_count(f), mgopt_program_op_count(p));
  /* a detached op keeps its nested ops out of the index until it is linked again */
  mgopt_op_move_to_end(loop, f->body);
  CHECK(index_agrees(p, f, nested, 4));
  CHECK(mgopt_pipeline_run(p, mgopt_builtin_registry(), "dead_code_elimination", NULL, &d) == MGOPT_OK);
  CHECK(index_agrees(p, f, nested, 4));
  CHECK_EQ_INT(mgopt__index_op_count(f), mgopt_program_op_count(p));
  mgopt_program_destroy(p);
}

/* refuses relu whose input is rank 3: stands for a writer's limit */
static int relu_rank3_refused(const mgopt_program *p, const mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  (void)p;
  ++*(int *)ud;
  return !(op->kind == MGOPT_OP_relu && x && x->type.rank == 3);
}

static void test_target(void) {
  static const char text[] =
      "main(%a: (1, 2, fp32), %b: (1, 2, 3, fp32)) {\n"
      "  %y: (1, 2, fp32) = relu(x=%a)\n"
      "  %z: (1, 2, 3, fp32) = relu(x=%b)\n"
      "} -> (%y, %z)\n";
  mgopt_diag d;
  mgopt_program *p = NULL;
  int calls = 0;
  mgopt_op *y, *z;
  mgopt_mil_parse(text, sizeof text - 1, NULL, &p, &d);
  REQUIRE(p != NULL);
  y = mgopt_program_function_at(p, 0)->body->first;
  REQUIRE(y != NULL && y->next != NULL);
  z = y->next;
  CHECK(mgopt_program_target_accepts(p, y) == 1); /* no target: everything */
  CHECK(mgopt_program_target_accepts(p, z) == 1);
  mgopt_program_set_target(p, relu_rank3_refused, &calls);
  CHECK(mgopt_program_target_accepts(p, y) == 1);
  CHECK(mgopt_program_target_accepts(p, z) == 0);
  CHECK_EQ_INT(calls, 2);
  mgopt_program_set_target(p, NULL, NULL);
  CHECK(mgopt_program_target_accepts(p, z) == 1);
  CHECK_EQ_INT(calls, 2);
  mgopt_program_destroy(p);
}

static const test_case tests[] = {
    TEST(test_target),
    TEST(test_arena_and_interner),       TEST(test_fresh_names),
    TEST(test_dtypes_and_fp16),          TEST(test_tensors),
    TEST(test_use_lists_under_mutation), TEST(test_variadic_and_block_outputs),
    TEST(test_attributes_and_params),    TEST(test_verifier_catches),
    TEST(test_op_count_with_nested_blocks), TEST(test_verifier_loop_block_args), TEST(test_verifier_loop_body_outputs),
    TEST(test_verifier_schema_and_types), TEST(test_rewriter),        TEST(test_op_index),
    TEST(test_rewrite_config_defaults),  TEST(test_rw_set_operand_status),
    TEST(test_pass_manager),             TEST(test_builtin_registry),
};
TEST_MAIN(tests)
