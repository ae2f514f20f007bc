/* tests/unit/test_mil.c — the .mil text format: printer, parser, exact round trip, errors and limits. */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <math.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- helpers */

/* Heap-allocated copy of the printed text of p (NULL on failure). */
static char *print_prog(mgopt_program *p, const mgopt_print_options *o) {
  mgopt_buf b;
  char *s;
  memset(&b, 0, sizeof b);
  if (mgopt_mil_print(p, o, &b) != MGOPT_OK) {
    mgopt_buf_free(&b);
    return NULL;
  }
  s = (char *)malloc(b.len + 1);
  memcpy(s, b.data, b.len + 1);
  mgopt_buf_free(&b);
  return s;
}

static mgopt_program *parse_str(const char *text, mgopt_diag *d) {
  mgopt_program *p = NULL;
  mgopt_status s = mgopt_mil_parse(text, strlen(text), NULL, &p, d);
  /* the status is the diag's, and the program is there exactly when it is OK */
  CHECK(s == (d ? d->status : s));
  CHECK((s == MGOPT_OK) == (p != NULL));
  return p;
}

/* Parses text, prints it; the printed text must parse and print identically.
   Returns the first print (caller frees) or NULL. */
static char *roundtrip(const char *text, size_t len) {
  mgopt_diag d;
  mgopt_program *p = NULL, *q;
  mgopt_mil_parse(text, len, NULL, &p, &d);
  char *a, *b;
  if (!p) {
    printf("  parse failed %d:%d: %s\n", d.line, d.col, d.msg);
    return NULL;
  }
  a = print_prog(p, NULL);
  mgopt_program_destroy(p);
  if (!a) return NULL;
  if (mgopt_mil_parse(a, strlen(a), NULL, &q, &d) != MGOPT_OK) q = NULL;
  if (!q) {
    printf("  reparse failed %d:%d: %s\n%s", d.line, d.col, d.msg, a);
    free(a);
    return NULL;
  }
  b = print_prog(q, NULL);
  mgopt_program_destroy(q);
  if (!b || strcmp(a, b) != 0) {
    printf("  not a fixed point:\n%s----\n%s", a, b ? b : "(null)");
    free(a);
    free(b);
    return NULL;
  }
  free(b);
  return a;
}

/* Prints a built program, then checks parse(print) prints the same. */
static int fixed_point(mgopt_program *p, char **text_out) {
  char *a = print_prog(p, NULL), *b;
  mgopt_diag d;
  mgopt_program *q;
  if (!a) return 0;
  if (mgopt_mil_parse(a, strlen(a), NULL, &q, &d) != MGOPT_OK) q = NULL;
  if (!q) {
    printf("  reparse failed %d:%d: %s\n%s", d.line, d.col, d.msg, a);
    free(a);
    return 0;
  }
  b = print_prog(q, NULL);
  mgopt_program_destroy(q);
  if (!b || strcmp(a, b) != 0) {
    printf("  not a fixed point:\n%s----\n%s", a, b ? b : "(null)");
    free(a);
    free(b);
    return 0;
  }
  free(b);
  if (text_out) *text_out = a;
  else free(a);
  return 1;
}

static mgopt_op *nth_op(mgopt_block *b, int n) {
  mgopt_op *op = b->first;
  while (op && n-- > 0) op = op->next;
  return op;
}

static const char *design_example =
    "main(%x: (2, 4, fp32), %y: (s0, 4, fp32)) {\n"
    "  %w: (4, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6], [7, 8]])\n"
    "  %m: (2, 2, fp32) = matmul(x=%x, y=%w, transpose_x=false, transpose_y=false)\n"
    "  %c: (2, 6, fp32) = concat(values=(%m, %x), axis=1, interleave=false)\n"
    "} -> (%c)\n";

/* ---------------------------------------------------------------- printing and structure */

static void test_design_example_is_canonical(void) {
  char *t = roundtrip(design_example, strlen(design_example));
  REQUIRE(t != NULL);
  CHECK_EQ_STR(t, design_example);
  free(t);
}

static void test_parse_structure(void) {
  mgopt_diag d;
  mgopt_program *p = parse_str(design_example, &d);
  mgopt_function *f;
  mgopt_op *w, *m, *c;
  mgopt_tensor *t;
  REQUIRE(p != NULL);
  CHECK_EQ_INT(mgopt_program_function_count(p), 1);
  f = mgopt_program_function(p, "main");
  REQUIRE(f != NULL);
  CHECK(f->opset == NULL);
  REQUIRE(f->body->nargs == 2);
  CHECK_EQ_STR(f->body->args[0]->name, "x");
  CHECK_EQ_INT(f->body->args[1]->type.rank, 2);
  CHECK_EQ_STR(f->body->args[1]->type.dims[0].sym, "s0");
  CHECK(f->body->args[1]->type.dims[0].sym == mgopt_program_intern_cstr(p, "s0"));
  CHECK_EQ_INT(f->body->args[1]->type.dims[1].v, 4);
  CHECK_EQ_INT(f->body->nops, 3);
  w = nth_op(f->body, 0);
  m = nth_op(f->body, 1);
  c = nth_op(f->body, 2);
  REQUIRE(w && m && c);
  CHECK_EQ_INT(w->kind, MGOPT_OP_const);
  CHECK_EQ_STR(w->name, "w");
  t = mgopt_value_const(w->outs[0]);
  REQUIRE(t != NULL);
  CHECK_EQ_INT(t->dtype, MGOPT_DT_FP32);
  CHECK_EQ_INT(t->rank, 2);
  CHECK_EQ_INT(t->shape[0], 4);
  CHECK_EQ_INT(t->shape[1], 2);
  CHECK(mgopt_tensor_get_f64(t, 5) == 6.0);
  CHECK_EQ_INT(m->kind, MGOPT_OP_matmul);
  CHECK(mgopt_op_operand(m, "x") == f->body->args[0]);
  CHECK(mgopt_op_operand(m, "y") == w->outs[0]);
  CHECK_EQ_INT(m->nattrs, 2);
  CHECK_EQ_INT(mgopt_op_attr(m, "transpose_x")->kind, MGOPT_ATTR_BOOL);
  CHECK_EQ_INT(w->outs[0]->nuses, 1);
  REQUIRE(c->nslots == 1);
  CHECK(c->slots[0].is_list == 1 && c->slots[0].n == 2);
  CHECK(c->slots[0].uses[0].value == m->outs[0]);
  CHECK(c->slots[0].uses[1].value == f->body->args[0]);
  CHECK_EQ_INT(mgopt_op_attr(c, "axis")->u.i, 1);
  REQUIRE(f->body->nouts == 1);
  CHECK(f->body->outs[0]->value == c->outs[0]);
  CHECK_EQ_INT(f->body->args[0]->nuses, 2);
  mgopt_program_destroy(p);
}

/* Builds a program with every construct through the API and checks the
   print -> parse -> print fixed point. */
static void test_builder_roundtrip_everything(void) {
  mgopt_program *p = mgopt_program_create(NULL);
  mgopt_function *f, *g;
  mgopt_type t;
  mgopt_dim dims[3];
  mgopt_value *x, *y, *vals[3];
  mgopt_op *op, *loop, *inner;
  mgopt_tensor *tn;
  mgopt_attr a;
  int64_t ints[3] = {1, -2, INT64_MIN};
  double fl[3] = {0.1, -0.0, 1e300};
  mgopt_str strs[2];
  const uint8_t raw[3] = {0, 0xab, 0xff};
  static const uint8_t other[2] = {0x12, 0x34};
  char *text = NULL;
  int dt;
  REQUIRE(p != NULL);
  f = mgopt_function_new(p, "main");
  REQUIRE(f != NULL);
  f->opset = mgopt_program_intern_cstr(p, "CoreML7");
  dims[0].v = -1;
  dims[0].sym = mgopt_program_intern_cstr(p, "batch");
  dims[1] = mgopt_dim_unknown();
  dims[2] = mgopt_dim_static(4);
  REQUIRE(mgopt_type_make(p, &t, MGOPT_DT_FP32, 3, dims) == MGOPT_OK);
  x = mgopt_block_add_arg(f->body, "input 0/x", &t);
  REQUIRE(mgopt_type_make(p, &t, MGOPT_DT_INT64, -1, NULL) == MGOPT_OK);
  y = mgopt_block_add_arg(f->body, "y:0", &t);
  REQUIRE(x && y);
  /* a const of every dtype that holds numbers */
  for (dt = MGOPT_DT_BOOL; dt < MGOPT_DT__COUNT; dt++) {
    int64_t shape[2] = {2, 3};
    int64_t k;
    char name[32];
    if (dt == MGOPT_DT_STRING) continue;
    tn = mgopt_tensor_new(p, (mgopt_dtype)dt, 2, shape);
    REQUIRE(tn != NULL);
    for (k = 0; k < 6; k++) {
      if (mgopt_dtype_is_float((mgopt_dtype)dt)) mgopt_tensor_set_f64(tn, k, 0.5 * (double)k - 1.0);
      else mgopt_tensor_set_i64(tn, k, (dt == MGOPT_DT_BOOL) ? (k & 1) : (k % 2 ? 1 : 0));
    }
    if (dt == MGOPT_DT_COMPLEX64 || dt == MGOPT_DT_FP8E5M2) ((uint8_t *)tn->data)[1] = 0x3f;
    snprintf(name, sizeof name, "c_%s", mgopt_dtype_name((mgopt_dtype)dt));
    REQUIRE(mgopt_build_const(p, f->body, NULL, name, tn) != NULL);
  }
  /* string const, scalar const, empty const */
  {
    int64_t two = 2, zero_shape[2] = {3, 0};
    mgopt_str *sd;
    tn = mgopt_tensor_new(p, MGOPT_DT_STRING, 1, &two);
    REQUIRE(tn != NULL);
    sd = (mgopt_str *)tn->data;
    sd[0].ptr = "a\"b";
    sd[0].len = 3;
    sd[1].ptr = "\x01\n";
    sd[1].len = 2;
    REQUIRE(mgopt_build_const(p, f->body, NULL, "strs", tn) != NULL);
    REQUIRE(mgopt_build_const(p, f->body, NULL, "scalar", mgopt_tensor_new_scalar_f64(p, MGOPT_DT_FP16, 0.1)) != NULL);
    REQUIRE(mgopt_build_const(p, f->body, NULL, "empty", mgopt_tensor_new(p, MGOPT_DT_FP32, 2, zero_shape)) != NULL);
  }
  /* an opaque op with every attribute kind, an absent output and a quoted type */
  op = mgopt_op_new(p, "onnx::Weird", 3, 0);
  REQUIRE(op != NULL);
  mgopt_value_set_name(op->outs[0], "w0");
  op->outs[1]->flags |= MGOPT_VALUE_ABSENT;
  mgopt_value_set_name(op->outs[2], "");
  mgopt_op_set_name(op, "weird op");
  CHECK(mgopt_op_set_operand(op, "x", x) == MGOPT_OK);
  CHECK(mgopt_op_set_operand(op, "absent", NULL) == MGOPT_OK);
  vals[0] = x;
  vals[1] = y;
  CHECK(mgopt_op_set_operand_list(op, "list", vals, 2) == MGOPT_OK);
  CHECK(mgopt_op_set_operand_list(op, "empty", vals, 0) == MGOPT_OK);
  mgopt_op_set_bool(op, "b", 1);
  mgopt_op_set_int(op, "i", INT64_MIN);
  mgopt_op_set_float(op, "f", -0.0);
  mgopt_op_set_float(op, "nan", NAN);
  mgopt_op_set_float(op, "inf", -HUGE_VAL);
  mgopt_op_set_string(op, "s", "fp16 \"quoted\" \\ \t");
  mgopt_op_set_ints(op, "is", ints, 3);
  mgopt_op_set_ints(op, "is0", ints, 0);
  mgopt_op_set_floats(op, "fs", fl, 3);
  mgopt_op_set_floats(op, "fs0", fl, 0);
  memset(&a, 0, sizeof a);
  a.name = "bs";
  a.kind = MGOPT_ATTR_BOOLS;
  a.n = 2;
  a.u.ints = ints; /* 1, -2: both true */
  mgopt_op_set_attr(op, &a);
  a.name = "bs0";
  a.n = 0;
  mgopt_op_set_attr(op, &a);
  strs[0].ptr = "x";
  strs[0].len = 1;
  strs[1].ptr = "";
  strs[1].len = 0;
  a.name = "ss";
  a.kind = MGOPT_ATTR_STRINGS;
  a.n = 2;
  a.u.strs = strs;
  mgopt_op_set_attr(op, &a);
  a.name = "ss0";
  a.n = 0;
  mgopt_op_set_attr(op, &a);
  a.name = "raw";
  a.kind = MGOPT_ATTR_BYTES;
  a.tag = -5;
  a.n = 3;
  a.u.bytes = raw;
  mgopt_op_set_attr(op, &a);
  a.name = "key with space";
  a.kind = MGOPT_ATTR_INT;
  a.u.i = 7;
  mgopt_op_set_attr(op, &a);
  {
    int64_t shape[3] = {2, 1, 2};
    tn = mgopt_tensor_new(p, MGOPT_DT_UINT4, 3, shape);
    REQUIRE(tn != NULL);
    mgopt_tensor_set_i64(tn, 0, 15);
    mgopt_tensor_set_i64(tn, 3, 9);
    mgopt_op_set_tensor(op, "t", tn);
  }
  op->outs[0]->type.kind = MGOPT_TYPE_OTHER;
  op->outs[0]->type.other = other;
  op->outs[0]->type.other_len = 2;
  mgopt_op_append(op, f->body);
  /* a zero-output op, named */
  inner = mgopt_op_new(p, "com.microsoft::Print", 0, 0);
  REQUIRE(inner != NULL);
  mgopt_op_set_operand(inner, "x", op->outs[0]);
  mgopt_op_set_name(inner, "printer");
  mgopt_op_append(inner, f->body);
  /* a loop with two nested blocks; the body has a nested cond */
  loop = mgopt_op_new(p, "while_loop", 1, 2);
  REQUIRE(loop != NULL);
  mgopt_value_set_name(loop->outs[0], "loop:0");
  loop->outs[0]->type = x->type;
  mgopt_op_set_operand_list(loop, "loop_vars", &x, 1);
  loop->blocks[0]->name = mgopt_program_intern_cstr(p, "loop_cond");
  mgopt_op_append(loop, f->body);
  {
    mgopt_value *cx = mgopt_block_add_arg(loop->blocks[0], "x.1", &x->type);
    mgopt_value *bx = mgopt_block_add_arg(loop->blocks[1], "x.1", &x->type);
    const char *slot_names[2] = {"x", "y"};
    mgopt_value *slot_vals[2];
    mgopt_op *lt, *cnd;
    slot_vals[0] = cx;
    slot_vals[1] = y;
    lt = mgopt_build_op(p, loop->blocks[0], NULL, "some_op", "cv", 2, slot_names, slot_vals, 1);
    REQUIRE(cx && bx && lt);
    mgopt_type_make(p, &lt->outs[0]->type, MGOPT_DT_BOOL, 0, NULL);
    mgopt_block_add_output(loop->blocks[0], lt->outs[0]);
    cnd = mgopt_op_new(p, "cond", 1, 2);
    REQUIRE(cnd != NULL);
    mgopt_value_set_name(cnd->outs[0], "x.1"); /* shadows the block arg */
    cnd->outs[0]->type = x->type;
    mgopt_op_set_operand(cnd, "pred", bx);
    mgopt_op_append(cnd, loop->blocks[1]);
    cnd->blocks[0]->name = mgopt_program_intern_cstr(p, "then");
    cnd->blocks[1]->name = mgopt_program_intern_cstr(p, "else");
    mgopt_block_add_output(cnd->blocks[0], bx);
    mgopt_block_add_output(cnd->blocks[1], x);
    mgopt_block_add_output(loop->blocks[1], cnd->outs[0]);
  }
  mgopt_block_add_output(f->body, loop->outs[0]);
  mgopt_block_add_output(f->body, op->outs[0]);
  mgopt_block_add_output(f->body, NULL);
  /* a second function, with an unnamed value and an empty name */
  g = mgopt_function_new(p, "second fn");
  REQUIRE(g != NULL);
  {
    mgopt_value *z = mgopt_block_add_arg(g->body, NULL, NULL);
    mgopt_op *u = mgopt_op_new(p, "relu", 1, 0);
    REQUIRE(z && u);
    mgopt_op_set_operand(u, "x", z);
    mgopt_op_append(u, g->body);
    mgopt_block_add_output(g->body, u->outs[0]);
  }
  REQUIRE(fixed_point(p, &text));
  /* a few things the text must show */
  CHECK(strstr(text, "main[CoreML7](%\"input 0/x\": (batch, ?, 4, fp32), %y:0: (*, int64)) {\n") != NULL);
  CHECK(strstr(text, "%w0: opaque(\"1234\"), _, %\"\": (*, unknown) = onnx::Weird(") != NULL);
  CHECK(strstr(text, "absent=") == NULL);
  CHECK(strstr(text, "list=(%\"input 0/x\", %y:0), empty=()") != NULL);
  CHECK(strstr(text, "i=-9223372036854775808, f=-0.0, nan=nan, inf=-inf") != NULL);
  CHECK(strstr(text, "is0=[], fs=[0.1, -0.0, 1e+300], fs0=floats[], bs=[true, true], bs0=bools[]") != NULL);
  CHECK(strstr(text, "ss=[\"x\", \"\"], ss0=strings[], raw=bytes<-5>(\"00abff\"), \"key with space\"=7") != NULL);
  CHECK(strstr(text, "t=tensor<(2, 1, 2, uint4)>([[[15, 0]], [[0, 9]]]), name=\"weird op\")\n") != NULL);
  CHECK(strstr(text, "  com.microsoft::Print(x=%w0, name=\"printer\")\n") != NULL);
  CHECK(strstr(text, "  %c_fp32: (2, 3, fp32)* = const(val=[[-1, -0.5, 0], [0.5, 1, 1.5]])\n") != NULL);
  CHECK(strstr(text, "  %c_int4: (2, 3, int4)* = const(val=[[0, 1, 0], [1, 0, 1]])\n") != NULL);
  CHECK(strstr(text, "  %strs: (2, string)* = const(val=[\"a\\\"b\", \"\\x01\\n\"])\n") != NULL);
  CHECK(strstr(text, "  %scalar: (fp16)* = const(val=0.1)\n") != NULL);
  CHECK(strstr(text, "  %empty: (3, 0, fp32)* = const(val=[])\n") != NULL);
  CHECK(strstr(text, "    loop_cond(%x.1: (batch, ?, 4, fp32)) {\n"
                     "      %cv: (bool) = some_op(x=%x.1, y=%y:0)\n"
                     "    } -> (%cv)\n"
                     "    \"\"(%x.1: (batch, ?, 4, fp32)) {\n"
                     "      %x.1: (batch, ?, 4, fp32) = cond(pred=%x.1)\n"
                     "        then() {\n"
                     "        } -> (%x.1)\n") != NULL);
  CHECK(strstr(text, "} -> (%loop:0, %w0, _)\n\n\"second fn\"(%__v") != NULL);
  free(text);
  mgopt_program_destroy(p);
}

static void test_parse_names_and_defaults(void) {
  const char *src =
      "main(%a: (1, fp32)) {\n"
      "  %b: (1, fp32) = relu(x=%a)\n"
      "  %c: (1, fp32) = relu(x=%b, name=\"custom\")\n"
      "  %d: (1, fp32) = relu(x=%c, name=\"d\")\n"
      "  _, %e: (1, fp32) = split2(x=%d)\n"
      "  sink(x=%e)\n"
      "  sink(x=%e, name=\"s\")\n"
      "} -> (%e)\n";
  const char *canon =
      "main(%a: (1, fp32)) {\n"
      "  %b: (1, fp32) = relu(x=%a)\n"
      "  %c: (1, fp32) = relu(x=%b, name=\"custom\")\n"
      "  %d: (1, fp32) = relu(x=%c)\n"
      "  _, %e: (1, fp32) = split2(x=%d)\n"
      "  sink(x=%e)\n"
      "  sink(x=%e, name=\"s\")\n"
      "} -> (%e)\n";
  mgopt_diag d;
  mgopt_program *p = parse_str(src, &d);
  mgopt_block *b;
  char *t;
  REQUIRE(p != NULL);
  b = mgopt_program_function(p, "main")->body;
  CHECK_EQ_STR(nth_op(b, 0)->name, "b");
  CHECK_EQ_STR(nth_op(b, 1)->name, "custom");
  CHECK_EQ_STR(nth_op(b, 2)->name, "d");
  CHECK(nth_op(b, 3)->name == NULL);
  CHECK(nth_op(b, 3)->outs[0]->flags & MGOPT_VALUE_ABSENT);
  CHECK(nth_op(b, 3)->outs[0]->name == NULL);
  CHECK(nth_op(b, 4)->name == NULL);
  CHECK_EQ_INT(nth_op(b, 4)->nouts, 0);
  CHECK_EQ_STR(nth_op(b, 5)->name, "s");
  t = print_prog(p, NULL);
  CHECK_EQ_STR(t, canon);
  free(t);
  mgopt_program_destroy(p);
}

static void test_scoping_and_shadowing(void) {
  const char *src =
      "main(%x: (fp32)) {\n"
      "  %x: (fp32) = relu(x=%x)\n"              /* shadows the input; uses it */
      "  %l: (fp32) = while_loop(v=(%x))\n"
      "    cond(%x: (fp32)) {\n"                 /* block arg shadows outer %x */
      "      %k: (bool) = less(x=%x, y=%x)\n"
      "    } -> (%k)\n"
      "    body(%y: (fp32)) {\n"
      "      %z: (fp32) = add(x=%x, y=%y)\n"    /* outer %x: the relu */
      "    } -> (%z)\n"
      "  %k: (fp32) = relu(x=%l)\n"              /* %k of the cond block is gone */
      "} -> (%k, %x)\n";
  mgopt_diag d;
  mgopt_program *p = parse_str(src, &d);
  mgopt_block *b;
  mgopt_op *relu, *loop;
  char *t;
  REQUIRE(p != NULL);
  b = mgopt_program_function(p, "main")->body;
  relu = nth_op(b, 0);
  loop = nth_op(b, 1);
  CHECK(mgopt_op_operand(relu, "x") == b->args[0]);
  CHECK(loop->slots[0].uses[0].value == relu->outs[0]);
  REQUIRE(loop->nblocks == 2);
  CHECK(loop->blocks[0]->parent_op == loop);
  CHECK(loop->blocks[0]->func == mgopt_program_function(p, "main"));
  CHECK(mgopt_op_operand(loop->blocks[0]->first, "x") == loop->blocks[0]->args[0]);
  CHECK(mgopt_op_operand(loop->blocks[1]->first, "x") == relu->outs[0]);
  CHECK(mgopt_op_operand(loop->blocks[1]->first, "y") == loop->blocks[1]->args[0]);
  CHECK(b->outs[1]->value == relu->outs[0]);
  CHECK(b->outs[0]->value == nth_op(b, 2)->outs[0]);
  t = roundtrip(src, strlen(src));
  CHECK(t != NULL);
  free(t);
  mgopt_program_destroy(p);
  /* an op's own outputs are not visible inside its nested blocks */
  p = parse_str("main() {\n  %o: (fp32) = cond()\n    then() {\n    } -> (%o)\n} -> (%o)\n", &d);
  CHECK(p == NULL);
  CHECK_EQ_INT(d.status, MGOPT_ERR_PARSE);
  CHECK_EQ_INT(d.line, 4);
  CHECK_EQ_INT(d.col, 11);
  /* values of a nested block are not visible after it */
  p = parse_str("main() {\n  cond()\n    then() {\n      %i: (fp32) = f()\n    } -> (%i)\n  g(x=%i)\n} -> ()\n", &d);
  CHECK(p == NULL);
  CHECK_EQ_INT(d.line, 6);
  CHECK_EQ_INT(d.col, 7);
}

static void test_mil_printout_forms(void) {
  const char *src =
      "\n"
      "main[CoreML5](%input: (1, 2, 3, fp32)(Tensor),\n"
      "              %n: (3,i32)) {\n"
      "  block0() {\n"
      "    %var_3: (1, 2, 3, fp32)(Tensor) = relu(x=%input, name=\"input\")\n"
      "    %tx_0: (bool)* = const(val=False)\n"
      "    %s: (3,int32)*(Tensor) = const(val=[1,2,3])\n"
      "    %loop:0: (1, 2, fp32), %loop:1: (1, 2, fp32) =            while_loop(loop_vars=(%var_3, %var_3))\n"
      "      loop_cond(%a.x, %b.x) {\n"
      "        %cond_var: (bool) = some_op(x=%a.x, y=%b.x, keep=True)\n"
      "      } -> (%cond_var)\n"
      "  } -> (%var_3, %loop:1)\n"
      "}\n"
      "\n"
      "other(%q: (fp32)) {\n"
      "  block0() {\n"
      "  } -> (%q)\n";
  const char *canon =
      "main[CoreML5](%input: (1, 2, 3, fp32), %n: (3, int32)) {\n"
      "  %var_3: (1, 2, 3, fp32) = relu(x=%input, name=\"input\")\n"
      "  %tx_0: (bool)* = const(val=false)\n"
      "  %s: (3, int32)* = const(val=[1, 2, 3])\n"
      "  %loop:0: (1, 2, fp32), %loop:1: (1, 2, fp32) = while_loop(loop_vars=(%var_3, %var_3))\n"
      "    loop_cond(%a.x: (*, unknown), %b.x: (*, unknown)) {\n"
      "      %cond_var: (bool) = some_op(x=%a.x, y=%b.x, keep=true)\n"
      "    } -> (%cond_var)\n"
      "} -> (%var_3, %loop:1)\n"
      "\n"
      "other(%q: (fp32)) {\n"
      "} -> (%q)\n";
  char *t = roundtrip(src, strlen(src));
  REQUIRE(t != NULL);
  CHECK_EQ_STR(t, canon);
  free(t);
}

static void test_whitespace_and_comments(void) {
  const char *src =
      "# leading comment\n"
      "main(\n  %x: (\n 2 ,\n fp32 )  # trailing\n ) {\n"
      "  %y: (2, fp32)\n = \n relu(\n x = %x # in args\n )\n"
      "}\n->\n(\n%y\n)";
  char *t = roundtrip(src, strlen(src));
  REQUIRE(t != NULL);
  CHECK_EQ_STR(t, "main(%x: (2, fp32)) {\n  %y: (2, fp32) = relu(x=%x)\n} -> (%y)\n");
  free(t);
}

static void test_empty_program(void) {
  mgopt_diag d;
  mgopt_program *p = parse_str("  # nothing\n", &d);
  char *t;
  REQUIRE(p != NULL);
  CHECK_EQ_INT(mgopt_program_function_count(p), 0);
  t = print_prog(p, NULL);
  CHECK_EQ_STR(t, "");
  free(t);
  mgopt_program_destroy(p);
}

static void test_operand_where_attribute_expected(void) {
  const char *src =
      "main(%x: (2, 4, fp32)) {\n"
      "  %tx_0: (bool)* = const(val=false)\n"
      "  %m: (2, 2, fp32) = matmul(x=%x, y=%x, transpose_x=%tx_0)\n"
      "} -> (%m)\n";
  mgopt_diag d;
  mgopt_program *p = parse_str(src, &d);
  mgopt_op *m;
  char *t;
  REQUIRE(p != NULL);
  m = nth_op(mgopt_program_function(p, "main")->body, 1);
  CHECK(mgopt_op_attr(m, "transpose_x") == NULL);
  CHECK(mgopt_op_operand(m, "transpose_x") != NULL);
  CHECK_EQ_INT(mgopt_op_get_bool(m, "transpose_x", 1), 0);
  t = print_prog(p, NULL);
  CHECK_EQ_STR(t, src);
  free(t);
  mgopt_program_destroy(p);
}

static void test_literal_kinds(void) {
  const char *src =
      "main() {\n"
      "  f(a=1, b=1.0, c=-1e-05, d=true, e=\"s\", g=[1, 2], h=[1, 2.5], i=[true, false],\n"
      "    j=[\"x\"], k=[], l=floats[], m=bools[], n=strings[], o=ints[], p=floats[1, 2],\n"
      "    q=(1, 2), r=inf, s=-inf, t=nan, u=none, v=1.5e300, w=tensor<(fp32)>(2),\n"
      "    x=tensor<(2, 2, bool)>([[true, false], [false, true]]), y=bytes<0>(\"\"), z=-0)\n"
      "} -> ()\n";
  mgopt_diag d;
  mgopt_program *p = parse_str(src, &d);
  mgopt_op *op;
  char *t;
  REQUIRE(p != NULL);
  op = mgopt_program_function(p, "main")->body->first;
  REQUIRE(op != NULL);
  CHECK_EQ_INT(mgopt_op_attr(op, "a")->kind, MGOPT_ATTR_INT);
  CHECK_EQ_INT(mgopt_op_attr(op, "b")->kind, MGOPT_ATTR_FLOAT);
  CHECK(mgopt_op_attr(op, "c")->u.f == -1e-05);
  CHECK_EQ_INT(mgopt_op_attr(op, "d")->kind, MGOPT_ATTR_BOOL);
  CHECK_EQ_INT(mgopt_op_attr(op, "e")->kind, MGOPT_ATTR_STRING);
  CHECK_EQ_INT(mgopt_op_attr(op, "g")->kind, MGOPT_ATTR_INTS);
  CHECK_EQ_INT(mgopt_op_attr(op, "h")->kind, MGOPT_ATTR_FLOATS);
  CHECK(mgopt_op_attr(op, "h")->u.floats[0] == 1.0);
  CHECK_EQ_INT(mgopt_op_attr(op, "i")->kind, MGOPT_ATTR_BOOLS);
  CHECK_EQ_INT(mgopt_op_attr(op, "j")->kind, MGOPT_ATTR_STRINGS);
  CHECK_EQ_INT(mgopt_op_attr(op, "k")->kind, MGOPT_ATTR_INTS);
  CHECK_EQ_INT(mgopt_op_attr(op, "k")->n, 0);
  CHECK_EQ_INT(mgopt_op_attr(op, "l")->kind, MGOPT_ATTR_FLOATS);
  CHECK_EQ_INT(mgopt_op_attr(op, "m")->kind, MGOPT_ATTR_BOOLS);
  CHECK_EQ_INT(mgopt_op_attr(op, "n")->kind, MGOPT_ATTR_STRINGS);
  CHECK_EQ_INT(mgopt_op_attr(op, "o")->kind, MGOPT_ATTR_INTS);
  CHECK_EQ_INT(mgopt_op_attr(op, "p")->kind, MGOPT_ATTR_FLOATS);
  CHECK_EQ_INT(mgopt_op_attr(op, "q")->kind, MGOPT_ATTR_INTS);
  CHECK(mgopt_op_attr(op, "r")->u.f == HUGE_VAL);
  CHECK(mgopt_op_attr(op, "t")->u.f != mgopt_op_attr(op, "t")->u.f);
  CHECK_EQ_INT(mgopt_op_attr(op, "u")->kind, MGOPT_ATTR_NONE);
  CHECK_EQ_INT(mgopt_op_attr(op, "w")->kind, MGOPT_ATTR_TENSOR);
  CHECK_EQ_INT(mgopt_op_attr(op, "w")->u.t->rank, 0);
  CHECK_EQ_INT(mgopt_op_attr(op, "x")->u.t->numel, 4);
  CHECK_EQ_INT(mgopt_op_attr(op, "y")->kind, MGOPT_ATTR_BYTES);
  CHECK_EQ_INT(mgopt_op_attr(op, "z")->u.i, 0);
  t = print_prog(p, NULL);
  CHECK_EQ_STR(t,
               "main() {\n"
               "  f(a=1, b=1.0, c=-1e-05, d=true, e=\"s\", g=[1, 2], h=[1.0, 2.5], i=[true, false], "
               "j=[\"x\"], k=[], l=floats[], m=bools[], n=strings[], o=[], p=[1.0, 2.0], q=[1, 2], "
               "r=inf, s=-inf, t=nan, u=none, v=1.5e+300, w=tensor<(fp32)>(2), "
               "x=tensor<(2, 2, bool)>([[true, false], [false, true]]), y=bytes<0>(\"\"), z=0)\n"
               "} -> ()\n");
  free(t);
  mgopt_program_destroy(p);
  t = roundtrip(src, strlen(src));
  CHECK(t != NULL);
  free(t);
}

/* ---------------------------------------------------------------- numbers */

/* Every fp16 and bf16 bit pattern (NaNs aside) survives print -> parse. */
static void test_half_floats_exact(void) {
  int which;
  for (which = 0; which < 2; which++) {
    mgopt_program *p = mgopt_program_create(NULL), *q;
    mgopt_function *f = mgopt_function_new(p, "main");
    int64_t n = 65536, k, bad = 0;
    mgopt_tensor *t = mgopt_tensor_new(p, which ? MGOPT_DT_BF16 : MGOPT_DT_FP16, 1, &n), *u;
    mgopt_diag d;
    char *text;
    REQUIRE(f && t);
    for (k = 0; k < n; k++) {
      uint16_t h = (uint16_t)k;
      int isnan_ = which ? ((h & 0x7f80) == 0x7f80 && (h & 0x7f)) : ((h & 0x7c00) == 0x7c00 && (h & 0x3ff));
      if (isnan_) h = which ? 0x7fc0 : 0x7e00; /* canonical NaN */
      memcpy((uint8_t *)t->data + 2 * k, &h, 2);
    }
    REQUIRE(mgopt_build_const(p, f->body, NULL, "h", t) != NULL);
    text = print_prog(p, NULL);
    REQUIRE(text != NULL);
    if (mgopt_mil_parse(text, strlen(text), NULL, &q, &d) != MGOPT_OK) q = NULL;
    REQUIRE(q != NULL);
    u = mgopt_value_const(mgopt_program_function(q, "main")->body->first->outs[0]);
    REQUIRE(u != NULL && u->numel == n);
    for (k = 0; k < n; k++) {
      uint16_t a, b;
      memcpy(&a, (uint8_t *)t->data + 2 * k, 2);
      memcpy(&b, (uint8_t *)u->data + 2 * k, 2);
      if (a != b) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    free(text);
    mgopt_program_destroy(q);
    mgopt_program_destroy(p);
  }
}

static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 11;
}

/* fp32 and fp64 bit patterns (random, subnormal, extreme) survive exactly. */
static void test_float_bits_exact(void) {
  mgopt_program *p = mgopt_program_create(NULL), *q;
  mgopt_function *f = mgopt_function_new(p, "main");
  int64_t n = 4000, k, bad = 0;
  mgopt_tensor *t32 = mgopt_tensor_new(p, MGOPT_DT_FP32, 1, &n);
  mgopt_tensor *t64 = mgopt_tensor_new(p, MGOPT_DT_FP64, 1, &n);
  mgopt_tensor *u32, *u64;
  uint64_t seed = 42;
  mgopt_diag d;
  char *text;
  REQUIRE(f && t32 && t64);
  for (k = 0; k < n; k++) {
    uint32_t b32 = (uint32_t)lcg(&seed);
    uint64_t b64 = lcg(&seed) ^ (lcg(&seed) << 40);
    if (k < 8) b32 = (uint32_t)k, b64 = (uint64_t)k;                          /* tiny subnormals */
    else if (k < 16) b32 = 0x7f7fffffu - (uint32_t)(k - 8), b64 = 0x7fefffffffffffffull - (uint64_t)(k - 8);
    if ((b32 & 0x7f800000u) == 0x7f800000u && (b32 & 0x7fffffu)) b32 = 0x7fc00000u;
    if ((b64 & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (b64 & 0xfffffffffffffull))
      b64 = 0x7ff8000000000000ull;
    memcpy((uint8_t *)t32->data + 4 * k, &b32, 4);
    memcpy((uint8_t *)t64->data + 8 * k, &b64, 8);
  }
  REQUIRE(mgopt_build_const(p, f->body, NULL, "a", t32) != NULL);
  REQUIRE(mgopt_build_const(p, f->body, NULL, "b", t64) != NULL);
  text = print_prog(p, NULL);
  REQUIRE(text != NULL);
  if (mgopt_mil_parse(text, strlen(text), NULL, &q, &d) != MGOPT_OK) q = NULL;
  REQUIRE(q != NULL);
  u32 = mgopt_value_const(mgopt_program_function(q, "main")->body->first->outs[0]);
  u64 = mgopt_value_const(mgopt_program_function(q, "main")->body->last->outs[0]);
  REQUIRE(u32 && u64);
  for (k = 0; k < n; k++) {
    if (memcmp((uint8_t *)t32->data + 4 * k, (uint8_t *)u32->data + 4 * k, 4)) bad++;
    if (memcmp((uint8_t *)t64->data + 8 * k, (uint8_t *)u64->data + 8 * k, 8)) bad++;
  }
  CHECK_EQ_INT(bad, 0);
  free(text);
  mgopt_program_destroy(q);
  mgopt_program_destroy(p);
}

static void test_float_attr_exact(void) {
  mgopt_program *p = mgopt_program_create(NULL), *q;
  mgopt_function *f = mgopt_function_new(p, "main");
  mgopt_op *op = mgopt_op_new(p, "f", 0, 0), *o2;
  double vals[64];
  uint64_t seed = 7;
  int k, bad = 0;
  mgopt_diag d;
  char *text;
  REQUIRE(f && op);
  for (k = 0; k < 64; k++) {
    uint64_t b = lcg(&seed) ^ (lcg(&seed) << 40);
    if ((b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull) b &= ~0x4000000000000000ull;
    memcpy(&vals[k], &b, 8);
  }
  vals[0] = 5e-324;
  vals[1] = 1.0;
  vals[2] = 100.0;
  mgopt_op_set_floats(op, "v", vals, 64);
  mgopt_op_set_float(op, "one", 3.0);
  mgopt_op_append(op, f->body);
  text = print_prog(p, NULL);
  REQUIRE(text != NULL);
  CHECK(strstr(text, "[5e-324, 1.0, 100.0, ") != NULL); /* mgopt__fmt_f64: shortest text, plain decimals where they read as well */
  CHECK(strstr(text, "one=3.0)") != NULL);
  if (mgopt_mil_parse(text, strlen(text), NULL, &q, &d) != MGOPT_OK) q = NULL;
  REQUIRE(q != NULL);
  o2 = mgopt_program_function(q, "main")->body->first;
  REQUIRE(mgopt_op_attr(o2, "v") && mgopt_op_attr(o2, "v")->kind == MGOPT_ATTR_FLOATS);
  for (k = 0; k < 64; k++)
    if (memcmp(&vals[k], &mgopt_op_attr(o2, "v")->u.floats[k], 8)) bad++;
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(mgopt_op_attr(o2, "one")->kind, MGOPT_ATTR_FLOAT);
  free(text);
  mgopt_program_destroy(q);
  mgopt_program_destroy(p);
}

/* Each integer dtype accepts its range and rejects one past either end. */
static void test_int_ranges(void) {
  static const struct {
    const char *dt, *lo, *hi, *below, *above;
  } cases[] = {
      {"int4", "-8", "7", "-9", "8"},
      {"uint1", "0", "1", "-1", "2"},
      {"uint2", "0", "3", "-1", "4"},
      {"uint3", "0", "7", "-1", "8"},
      {"uint4", "0", "15", "-1", "16"},
      {"uint6", "0", "63", "-1", "64"},
      {"int8", "-128", "127", "-129", "128"},
      {"uint8", "0", "255", "-1", "256"},
      {"int16", "-32768", "32767", "-32769", "32768"},
      {"uint16", "0", "65535", "-1", "65536"},
      {"int32", "-2147483648", "2147483647", "-2147483649", "2147483648"},
      {"uint32", "0", "4294967295", "-1", "4294967296"},
      {"int64", "-9223372036854775808", "9223372036854775807", "-9223372036854775809",
       "9223372036854775808"},
      {"uint64", "0", "18446744073709551615", "-1", "18446744073709551616"},
      {"int4x", "-8", "7", "-9", "8"},
      {"uint4x", "0", "15", "-1", "16"},
  };
  int i;
  for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
    char src[512];
    mgopt_diag d;
    mgopt_program *p;
    char *t;
    snprintf(src, sizeof src, "main() {\n  %%c: (3, %s)* = const(val=[%s, %s, 1])\n} -> (%%c)\n", cases[i].dt,
             cases[i].lo, cases[i].hi);
    t = roundtrip(src, strlen(src));
    CHECK(t != NULL);
    if (t) CHECK_EQ_STR(t, src);
    free(t);
    snprintf(src, sizeof src, "main() {\n  %%c: (2, %s)* = const(val=[%s, 1])\n} -> (%%c)\n", cases[i].dt,
             cases[i].below);
    p = parse_str(src, &d);
    CHECK(p == NULL);
    CHECK_EQ_INT(d.status, MGOPT_ERR_TYPE);
    CHECK_EQ_INT(d.line, 2);
    CHECK_EQ_INT(d.col, 27 + (int)strlen(cases[i].dt));
    snprintf(src, sizeof src, "main() {\n  %%c: (2, %s)* = const(val=[1, %s])\n} -> (%%c)\n", cases[i].dt,
             cases[i].above);
    p = parse_str(src, &d);
    CHECK(p == NULL);
    CHECK_EQ_INT(d.status, MGOPT_ERR_TYPE);
    CHECK_EQ_INT(d.col, 30 + (int)strlen(cases[i].dt));
  }
}

static void test_exotic_dtypes(void) {
  const char *src =
      "main() {\n"
      "  %a: (2, complex64)* = const(val=[[1, -0.5], [inf, nan]])\n"
      "  %b: (complex128)* = const(val=[0.1, 2])\n"
      "  %c: (3, fp8e4m3fn)* = const(val=[0, 127, 255])\n"
      "  %d: (2, 2, bf16)* = const(val=[[1, 0.1], [-inf, 3.39e+38]])\n"
      "  %e: (1, 1, 1, uint1)* = const(val=[[[1]]])\n"
      "} -> (%a, %b, %c, %d, %e)\n";
  char *t = roundtrip(src, strlen(src));
  REQUIRE(t != NULL);
  CHECK_EQ_STR(t, src);
  free(t);
}

/* ---------------------------------------------------------------- random programs */

/* Random name bytes, weighted towards the characters the bare-name rules care about. */
static const char *rnd_name(mgopt_program *p, uint64_t *seed) {
  static const char pool[] = "ab_.:0%#\"\\ ()[]{}=,-\n\t\x01\x7f\xc3\xa9\xff*?<>'";
  char buf[16];
  int n = (int)(lcg(seed) % 6), k;
  if (lcg(seed) % 3 == 0) { /* often a plain name */
    snprintf(buf, sizeof buf, "v%d", (int)(lcg(seed) % 50));
    return mgopt_program_intern_cstr(p, buf);
  }
  for (k = 0; k < n; k++) buf[k] = pool[lcg(seed) % (sizeof pool - 1)];
  buf[n] = 0;
  return mgopt_program_intern_cstr(p, buf);
}

static void rnd_type(mgopt_program *p, uint64_t *seed, mgopt_type *t) {
  mgopt_dim dims[4];
  int32_t rank = (int32_t)(lcg(seed) % 6) - 1, i; /* -1 .. 4 */
  mgopt_dtype dt = (mgopt_dtype)(lcg(seed) % MGOPT_DT__COUNT);
  if (lcg(seed) % 10 == 0) {
    static const uint8_t other[3] = {1, 2, 3};
    memset(t, 0, sizeof *t);
    t->kind = MGOPT_TYPE_OTHER;
    t->other = other;
    t->other_len = (size_t)(lcg(seed) % 4);
    return;
  }
  if (rank > 4) rank = 4;
  for (i = 0; i < (rank > 0 ? rank : 0); i++) {
    int r = (int)(lcg(seed) % 4);
    dims[i] = r == 0 ? mgopt_dim_unknown() : mgopt_dim_static((int64_t)(lcg(seed) % 4));
    if (r == 1) dims[i].sym = rnd_name(p, seed);
  }
  mgopt_type_make(p, t, dt, rank, rank > 0 ? dims : NULL);
}

static mgopt_tensor *rnd_tensor(mgopt_program *p, uint64_t *seed, mgopt_dtype dt, int32_t rank,
                                const int64_t *shape) {
  mgopt_tensor *t = mgopt_tensor_new(p, dt, rank, shape);
  int64_t k;
  if (!t) return NULL;
  if (dt == MGOPT_DT_STRING) {
    mgopt_str *s = (mgopt_str *)t->data;
    for (k = 0; k < t->numel; k++) {
      const char *nm = rnd_name(p, seed);
      s[k].ptr = nm;
      s[k].len = strlen(nm);
    }
  } else {
    for (k = 0; k < (int64_t)t->nbytes; k++) ((uint8_t *)t->data)[k] = (uint8_t)(lcg(seed) >> 13);
  }
  return t;
}

static void rnd_attr(mgopt_program *p, uint64_t *seed, mgopt_op *op) {
  mgopt_attr a;
  int64_t ints[4];
  double fl[4];
  mgopt_str strs[4];
  int64_t n = (int64_t)(lcg(seed) % 5), k;
  static uint8_t bytes[4] = {0, 1, 0xfe, 0xff};
  memset(&a, 0, sizeof a);
  a.name = rnd_name(p, seed);
  if (strcmp(a.name, "name") == 0 || mgopt_op_attr(op, a.name) || mgopt_op_slot_index(op, a.name) >= 0) return;
  a.kind = (uint8_t)(1 + lcg(seed) % 10);
  for (k = 0; k < 4; k++) {
    uint64_t b = lcg(seed) ^ (lcg(seed) << 40);
    ints[k] = (int64_t)b;
    memcpy(&fl[k], &b, 8);
    if (fl[k] != fl[k]) fl[k] = (k & 1) ? HUGE_VAL : -0.0;
    strs[k].ptr = rnd_name(p, seed);
    strs[k].len = strlen(strs[k].ptr) + (k == 1); /* one string with its NUL inside */
  }
  switch (a.kind) {
    case MGOPT_ATTR_BOOL: a.u.i = ints[0] & 1; break;
    case MGOPT_ATTR_INT: a.u.i = ints[0]; break;
    case MGOPT_ATTR_FLOAT: a.u.f = fl[0]; break;
    case MGOPT_ATTR_STRING: a.u.s = strs[1]; break;
    case MGOPT_ATTR_BOOLS: case MGOPT_ATTR_INTS:
      for (k = 0; k < n; k++) ints[k] = a.kind == MGOPT_ATTR_BOOLS ? (ints[k] & 1) : ints[k];
      a.n = n;
      a.u.ints = ints;
      break;
    case MGOPT_ATTR_FLOATS: a.n = n; a.u.floats = fl; break;
    case MGOPT_ATTR_STRINGS: a.n = n; a.u.strs = strs; break;
    case MGOPT_ATTR_TENSOR: {
      int64_t shape[3];
      int32_t rank = (int32_t)(lcg(seed) % 4), i;
      mgopt_dtype dt = (mgopt_dtype)(1 + lcg(seed) % (MGOPT_DT__COUNT - 1));
      for (i = 0; i < rank; i++) shape[i] = (int64_t)(lcg(seed) % 3);
      a.u.t = rnd_tensor(p, seed, dt, rank, shape);
      if (!a.u.t) return;
      break;
    }
    case MGOPT_ATTR_BYTES: a.tag = (int32_t)ints[0]; a.n = n; a.u.bytes = bytes; break;
    default: break;
  }
  mgopt_op_set_attr(op, &a);
}

/* Values visible at the current point, innermost last. */
typedef struct rnd_scope {
  mgopt_value *v[4096];
  int n;
} rnd_scope;

static void rnd_block(mgopt_program *p, uint64_t *seed, mgopt_block *b, rnd_scope *sc, int depth) {
  int nops = (int)(lcg(seed) % 6), i, k, mark = sc->n;
  for (i = 0; i < nops && sc->n < 4000; i++) {
    int nouts = (int)(lcg(seed) % 3), nblocks = depth < 3 ? (int)(lcg(seed) % 3) / 2 * (1 + (int)(lcg(seed) % 2)) : 0;
    int is_const = lcg(seed) % 4 == 0;
    mgopt_op *op = mgopt_op_new(p, is_const ? "const" : (lcg(seed) % 2 ? "add" : rnd_name(p, seed)),
                                is_const ? 1 : nouts, nblocks);
    int nslots = is_const ? 0 : (int)(lcg(seed) % 3), nattrs = (int)(lcg(seed) % 3);
    if (!op) return;
    for (k = 0; k < op->nouts; k++) {
      if (!is_const && lcg(seed) % 5 == 0) op->outs[k]->flags |= MGOPT_VALUE_ABSENT;
      else mgopt_value_set_name(op->outs[k], rnd_name(p, seed));
      rnd_type(p, seed, &op->outs[k]->type);
    }
    if (is_const) {
      int64_t shape[3];
      int32_t rank = (int32_t)(lcg(seed) % 4), r;
      mgopt_dtype dt = (mgopt_dtype)(1 + lcg(seed) % (MGOPT_DT__COUNT - 1));
      for (r = 0; r < rank; r++) shape[r] = (int64_t)(lcg(seed) % 3);
      mgopt_op_set_tensor(op, "val", rnd_tensor(p, seed, dt, rank, shape));
      if (lcg(seed) % 4) mgopt_type_make_static(p, &op->outs[0]->type, dt, rank, shape);
    }
    for (k = 0; k < nslots && sc->n > 0; k++) {
      const char *sn = rnd_name(p, seed);
      if (strcmp(sn, "name") == 0 || mgopt_op_slot_index(op, sn) >= 0) continue;
      if (lcg(seed) % 2) {
        mgopt_value *vs[3];
        int32_t n = (int32_t)(lcg(seed) % 4), j;
        for (j = 0; j < n; j++) vs[j] = lcg(seed) % 8 ? sc->v[lcg(seed) % (uint64_t)sc->n] : NULL;
        mgopt_op_set_operand_list(op, sn, vs, n);
      } else {
        mgopt_op_set_operand(op, sn, lcg(seed) % 8 ? sc->v[lcg(seed) % (uint64_t)sc->n] : NULL);
      }
    }
    for (k = 0; k < nattrs; k++) rnd_attr(p, seed, op);
    if (lcg(seed) % 3 == 0) mgopt_op_set_name(op, rnd_name(p, seed));
    mgopt_op_append(op, b);
    for (k = 0; k < op->nblocks; k++) {
      mgopt_block *nb = op->blocks[k];
      int na = (int)(lcg(seed) % 3), j, inner = sc->n;
      mgopt_type t;
      nb->name = rnd_name(p, seed);
      for (j = 0; j < na; j++) {
        rnd_type(p, seed, &t);
        sc->v[sc->n++] = mgopt_block_add_arg(nb, rnd_name(p, seed), &t);
      }
      rnd_block(p, seed, nb, sc, depth + 1);
      sc->n = inner;
    }
    for (k = 0; k < op->nouts; k++)
      if (!(op->outs[k]->flags & MGOPT_VALUE_ABSENT)) sc->v[sc->n++] = op->outs[k];
  }
  for (i = 0; i < (int)(lcg(seed) % 3) && sc->n > 0; i++)
    mgopt_block_add_output(b, lcg(seed) % 8 ? sc->v[lcg(seed) % (uint64_t)sc->n] : NULL);
  sc->n = mark;
}

/* Random programs built through the API print to a fixed point. */
static void test_random_programs_fixed_point(void) {
  static rnd_scope sc;
  uint64_t seed = 12345;
  int iter, bad = 0;
  for (iter = 0; iter < 400; iter++) {
    mgopt_program *p = mgopt_program_create(NULL);
    int nf = 1 + (int)(lcg(&seed) % 2), f;
    for (f = 0; f < nf; f++) {
      mgopt_function *fn = mgopt_function_new(p, rnd_name(p, &seed));
      int na = (int)(lcg(&seed) % 3), j;
      if (!fn) continue;
      if (lcg(&seed) % 2) fn->opset = rnd_name(p, &seed);
      sc.n = 0;
      for (j = 0; j < na; j++) {
        mgopt_type t;
        rnd_type(p, &seed, &t);
        sc.v[sc.n++] = mgopt_block_add_arg(fn->body, rnd_name(p, &seed), &t);
      }
      rnd_block(p, &seed, fn->body, &sc, 0);
    }
    if (!fixed_point(p, NULL)) {
      printf("  random program %d\n", iter);
      bad++;
    }
    mgopt_program_destroy(p);
    if (bad > 3) break;
  }
  CHECK_EQ_INT(bad, 0);
}

/* ---------------------------------------------------------------- errors */

typedef struct err_case {
  const char *text;
  int status, line, col;
} err_case;

static void test_errors(void) {
  static const err_case cases[] = {
      /* undefined %ref */
      {"main(%x: (fp32)) {\n  %y: (fp32) = relu(x=%z)\n} -> (%y)\n", MGOPT_ERR_PARSE, 2, 23},
      {"main(%x: (fp32)) {\n} -> (%nope)\n", MGOPT_ERR_PARSE, 2, 7},
      /* const literal vs declared type */
      {"main() {\n  %c: (2, 2, fp32)* = const(val=[1, 2, 3])\n} -> (%c)\n", MGOPT_ERR_TYPE, 2, 33},
      {"main() {\n  %c: (2, fp32)* = const(val=[1, 2, 3])\n} -> (%c)\n", MGOPT_ERR_TYPE, 2, 37},
      {"main() {\n  %c: (s0, fp32)* = const(val=[1])\n} -> (%c)\n", MGOPT_ERR_TYPE, 2, 31},
      {"main() {\n  %c = const(val=[1])\n} -> (%c)\n", MGOPT_ERR_TYPE, 2, 18},
      {"main() {\n  const(val=1)\n} -> ()\n", MGOPT_ERR_TYPE, 2, 13},
      /* unknown dtype */
      {"main(%x: (2, fp33)) {\n} -> ()\n", MGOPT_ERR_TYPE, 1, 14},
      /* wrong literal kind */
      {"main() {\n  %c: (2, fp32)* = const(val=[true, false])\n} -> (%c)\n", MGOPT_ERR_TYPE, 2, 31},
      {"main() {\n  %c: (2, int32)* = const(val=[1.5, 2])\n} -> (%c)\n", MGOPT_ERR_TYPE, 2, 32},
      {"main() {\n  %c: (bool)* = const(val=1)\n} -> (%c)\n", MGOPT_ERR_TYPE, 2, 27},
      {"main() {\n  %c: (string)* = const(val=1)\n} -> (%c)\n", MGOPT_ERR_TYPE, 2, 29},
      {"main() {\n  f(a=[1, true])\n} -> ()\n", MGOPT_ERR_TYPE, 2, 7},
      {"main() {\n  f(a=ints[1, 2.5])\n} -> ()\n", MGOPT_ERR_TYPE, 2, 15},
      {"main() {\n  f(a=[[1], [2]])\n} -> ()\n", MGOPT_ERR_TYPE, 2, 8},
      /* int out of range */
      {"main() {\n  %c: (int8)* = const(val=200)\n} -> (%c)\n", MGOPT_ERR_TYPE, 2, 27},
      /* duplicate attribute / operand / name */
      {"main(%x: (fp32)) {\n  f(a=1, b=2, a=3)\n} -> ()\n", MGOPT_ERR_PARSE, 2, 15},
      {"main(%x: (fp32)) {\n  f(x=%x, x=1)\n} -> ()\n", MGOPT_ERR_PARSE, 2, 11},
      {"main(%x: (fp32)) {\n  f(name=\"a\", name=\"b\")\n} -> ()\n", MGOPT_ERR_PARSE, 2, 15},
      {"main() {\n} -> ()\n\nmain() {\n} -> ()\n", MGOPT_ERR_PARSE, 4, 1},
      /* unterminated string, bad escapes, control bytes */
      {"main() {\n  f(s=\"abc)\n} -> ()\n", MGOPT_ERR_PARSE, 2, 7},
      {"main() {\n  f(s=\"abc", MGOPT_ERR_PARSE, 2, 7},
      {"main() {\n  f(s=\"a\\qb\")\n} -> ()\n", MGOPT_ERR_PARSE, 2, 9},
      {"main() {\n  f(s=\"a\\x4\")\n} -> ()\n", MGOPT_ERR_PARSE, 2, 9},
      {"main() {\n  f(s=\"a\tb\")\n} -> ()\n", MGOPT_ERR_PARSE, 2, 9},
      /* garbage characters */
      {"main() {\n  @\n} -> ()\n", MGOPT_ERR_PARSE, 2, 3},
      {"main() {\n  %a: (fp32) = f()\n} -> (%a) $\n", MGOPT_ERR_PARSE, 3, 11},
      {"main(%x: (fp32)) {\n  f(x=%x y=1)\n} -> ()\n", MGOPT_ERR_PARSE, 2, 10},
      {"main(%x: (fp32)) {\n  f(x=12abc)\n} -> ()\n", MGOPT_ERR_PARSE, 2, 7},
      {"main(%x: (2 fp32)) {\n} -> ()\n", MGOPT_ERR_PARSE, 1, 13},
      {"main(%x: (2.5, fp32)) {\n} -> ()\n", MGOPT_ERR_PARSE, 1, 11},
      {"main(%x: (*, 2, fp32)) {\n} -> ()\n", MGOPT_ERR_PARSE, 1, 10},
      {"main(%: (fp32)) {\n} -> ()\n", MGOPT_ERR_PARSE, 1, 6},
      {"main() {\n  f(a=@)\n} -> ()\n", MGOPT_ERR_PARSE, 2, 7},
      {"main() {\n  f(a=bytes<1>(\"abc\"))\n} -> ()\n", MGOPT_ERR_PARSE, 2, 16},
      {"main() {\n  f(a=tensor<(s, fp32)>([1]))\n} -> ()\n", MGOPT_ERR_TYPE, 2, 14},
      /* huge numbers */
      {"main() {\n  f(a=99999999999999999999)\n} -> ()\n", MGOPT_ERR_PARSE, 2, 7},
      {"main() {\n  f(a=9223372036854775808)\n} -> ()\n", MGOPT_ERR_PARSE, 2, 7},
      {"main() {\n  f(a=1e999)\n} -> ()\n", MGOPT_ERR_PARSE, 2, 7},
      {"main() {\n  f(a=[1, 1e999])\n} -> ()\n", MGOPT_ERR_PARSE, 2, 11},
      {"main() {\n  f(a=[1, 99999999999999999999])\n} -> ()\n", MGOPT_ERR_PARSE, 2, 11},
      {"main() {\n  %c: (fp32)* = const(val=1e39)\n} -> (%c)\n", MGOPT_ERR_TYPE, 2, 27},
      {"main() {\n  %c: (fp16)* = const(val=65520)\n} -> (%c)\n", MGOPT_ERR_TYPE, 2, 27},
      {"main(%x: (99999999999999999999, fp32)) {\n} -> ()\n", MGOPT_ERR_PARSE, 1, 11},
      {"main() {\n  f(a=0.0000000000000000000000000000000000000000000000000000000000000000000000000000"
       "000000000000000000000000000000000000000000000000000000001)\n} -> ()\n",
       MGOPT_ERR_LIMIT, 2, 7},
      /* elided tensors do not read back */
      {"main() {\n  %c: (20, fp32)* = const(val=[...])\n} -> (%c)\n", MGOPT_ERR_PARSE, 2, 32},
      {"main() {\n  f(t=tensor<(20, fp32)>([...]))\n} -> ()\n", MGOPT_ERR_PARSE, 2, 27},
      /* truncated */
      {"main(%x: (fp32)) {\n  %y: (fp32) = relu(x=%x", MGOPT_ERR_PARSE, 2, 25},
      {"main(%x: (fp32)) {\n  %y: (fp32) = relu(x=%x)\n", MGOPT_ERR_PARSE, 3, 1},
      {"main(%x: (fp32)) {\n} -> (%x", MGOPT_ERR_PARSE, 2, 9},
      {"main(", MGOPT_ERR_PARSE, 1, 6},
      /* NUL bytes in names */
      {"main() {\n  %\"a\\x00b\": (fp32) = f()\n} -> ()\n", MGOPT_ERR_PARSE, 2, 3},
  };
  int i;
  for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
    mgopt_diag d;
    mgopt_program *p = parse_str(cases[i].text, &d);
    if (p || (int)d.status != cases[i].status || d.line != cases[i].line || d.col != cases[i].col) {
      printf("  case %d: got %s status %d at %d:%d (%s), want status %d at %d:%d\n", i, p ? "a program" : "NULL",
             (int)d.status, d.line, d.col, d.msg, cases[i].status, cases[i].line, cases[i].col);
      harness_failed_checks++;
    }
    CHECK(d.msg[0] != 0);
    mgopt_program_destroy(p);
  }
}

static void test_nul_bytes_and_garbage(void) {
  static const char with_nul[] = "main() {\n  f(a=1)\0\n} -> ()\n";
  static const char nul_in_str[] = "main() {\n  f(a=\"x\0y\")\n} -> ()\n";
  static const char high[] = "main() {\n  f(a=\"\xc3\xa9\xff\")\n} -> ()\n";
  mgopt_diag d;
  mgopt_program *p;
  char *t;
  unsigned char junk[512];
  uint64_t seed = 3;
  int i, k;
  if (mgopt_mil_parse(with_nul, sizeof with_nul - 1, NULL, &p, &d) != MGOPT_OK) p = NULL;
  CHECK(p == NULL);
  CHECK_EQ_INT(d.status, MGOPT_ERR_PARSE);
  CHECK_EQ_INT(d.line, 2);
  CHECK_EQ_INT(d.col, 9);
  if (mgopt_mil_parse(nul_in_str, sizeof nul_in_str - 1, NULL, &p, &d) != MGOPT_OK) p = NULL;
  CHECK(p == NULL);
  CHECK_EQ_INT(d.col, 9);
  /* raw bytes >= 0x80 are kept in strings (UTF-8 passes through) */
  t = roundtrip(high, sizeof high - 1);
  CHECK(t != NULL);
  if (t) CHECK_EQ_STR(t, high);
  free(t);
  /* random bytes: an error or a program, never a crash */
  for (i = 0; i < 300; i++) {
    for (k = 0; k < (int)sizeof junk; k++) junk[k] = (unsigned char)(lcg(&seed) >> 7);
    if (mgopt_mil_parse((const char *)junk, (size_t)(i + 1), NULL, &p, &d) != MGOPT_OK) p = NULL;
    if (p) mgopt_program_destroy(p);
    else CHECK(d.line >= 1 && d.col >= 1);
  }
  /* NULL text */
  if (mgopt_mil_parse(NULL, 5, NULL, &p, &d) != MGOPT_OK) p = NULL;
  CHECK(p == NULL);
  CHECK_EQ_INT(d.status, MGOPT_ERR_INVALID_ARG);
  if (mgopt_mil_parse(NULL, 0, NULL, &p, NULL) != MGOPT_OK) p = NULL;
  CHECK(p != NULL);
  mgopt_program_destroy(p);
}

static const char *rich_program =
    "main[CoreML7](%x: (2, 4, fp32), %y: (s0, 4, fp32), %\"q r\": (*, int32)) {\n"
    "  %w: (4, 2, fp32)* = const(val=[[1, 2], [3, 4.5], [5, 6], [7, 8]])\n"
    "  %m: (2, 2, fp32) = matmul(x=%x, y=%w, transpose_x=false, transpose_y=false)\n"
    "  %c: (2, 6, fp32) = concat(values=(%m, %x), axis=1, interleave=false)\n"
    "  %s: (3, string)* = const(val=[\"a\", \"b\\n\", \"\"])\n"
    "  %l:0: (2, 6, fp32), _ = while_loop(loop_vars=(%c), name=\"loop\")\n"
    "    cond(%a: (2, 6, fp32)) {\n"
    "      %k: (bool) = onnx::Less(x=%a, y=%a, eps=1e-05, f=[1.0, 2.5], t=tensor<(2, int8)>([-1, 1]))\n"
    "    } -> (%k)\n"
    "    body(%a: (2, 6, fp32)) {\n"
    "      %k: (2, 6, fp32) = add(x=%a, y=%c, b=bytes<3>(\"0aff\"), e=[], n=\"fp16\")\n"
    "    } -> (%k)\n"
    "  sink(x=%\"q r\")\n"
    "} -> (%l:0, %y)\n"
    "\n"
    "other(%z: (?, fp16)) {\n"
    "  %h: (2, fp16)* = const(val=[0.1, -inf])\n"
    "} -> (%z, %h)\n";

/* Every prefix of a valid program gives an error or a program, never a crash
   (run under ASan/UBSan this also shows no leak or bad access). */
static void test_truncation_every_prefix(void) {
  size_t n = strlen(rich_program), k;
  int ok_count = 0;
  char *t = roundtrip(rich_program, n);
  REQUIRE(t != NULL);
  CHECK_EQ_STR(t, rich_program);
  free(t);
  for (k = 0; k < n; k++) {
    mgopt_diag d;
    char *copy = (char *)malloc(k ? k : 1); /* exact size: ASan sees any over-read */
    mgopt_program *p;
    memcpy(copy, rich_program, k);
    if (mgopt_mil_parse(copy, k, NULL, &p, &d) != MGOPT_OK) p = NULL;
    if (p) {
      char *a = print_prog(p, NULL);
      ok_count++;
      CHECK(a != NULL);
      free(a);
      mgopt_program_destroy(p);
    } else {
      CHECK(d.status == MGOPT_ERR_PARSE || d.status == MGOPT_ERR_TYPE);
      CHECK(d.line >= 1 && d.line <= 19 && d.col >= 1);
    }
    free(copy);
  }
  /* the empty prefix; each function cut after "}", "} " or its outputs; the
     first one also with one or two newlines after */
  CHECK_EQ_INT(ok_count, 9);
}

static void test_depth_limits(void) {
  char *src = (char *)malloc(300000);
  size_t n = 0;
  int i;
  mgopt_diag d;
  mgopt_program *p;
  mgopt_parse_options o;
  REQUIRE(src != NULL);
  /* 64 nested blocks are fine, 65 are not */
  n = (size_t)sprintf(src, "main() {\n");
  for (i = 0; i < 65; i++) n += (size_t)sprintf(src + n, "c()\nb() {\n");
  for (i = 0; i < 65; i++) n += (size_t)sprintf(src + n, "} -> ()\n");
  n += (size_t)sprintf(src + n, "} -> ()\n");
  if (mgopt_mil_parse(src, n, NULL, &p, &d) != MGOPT_OK) p = NULL;
  CHECK(p == NULL);
  CHECK_EQ_INT(d.status, MGOPT_ERR_LIMIT);
  CHECK_EQ_INT(d.line, 3 + 2 * 64);
  memset(&o, 0, sizeof o);
  o.max_depth = 65;
  if (mgopt_mil_parse(src, n, &o, &p, &d) != MGOPT_OK) p = NULL;
  CHECK(p != NULL);
  if (p) {
    char *a = print_prog(p, NULL), *b;
    mgopt_program *q = NULL;
    mgopt_mil_parse(a, strlen(a), &o, &q, &d);
    CHECK(q != NULL);
    b = q ? print_prog(q, NULL) : NULL;
    CHECK(b && strcmp(a, b) == 0);
    free(a);
    free(b);
    mgopt_program_destroy(q);
  }
  mgopt_program_destroy(p);
  /* deeply nested list literals: the limit, not the stack */
  n = (size_t)sprintf(src, "main() {\n  %%c: (1, fp32)* = const(val=");
  for (i = 0; i < 100000; i++) src[n++] = '[';
  n += (size_t)sprintf(src + n, "1");
  for (i = 0; i < 100000; i++) src[n++] = ']';
  n += (size_t)sprintf(src + n, ")\n} -> ()\n");
  if (mgopt_mil_parse(src, n, NULL, &p, &d) != MGOPT_OK) p = NULL;
  CHECK(p == NULL);
  CHECK_EQ_INT(d.status, MGOPT_ERR_LIMIT);
  CHECK_EQ_INT(d.col, 30 + 64);
  /* an attribute's nested list is refused without recursion either */
  n = (size_t)sprintf(src, "main() {\n  f(a=");
  for (i = 0; i < 100000; i++) src[n++] = '[';
  if (mgopt_mil_parse(src, n, NULL, &p, &d) != MGOPT_OK) p = NULL;
  CHECK(p == NULL);
  CHECK_EQ_INT(d.status, MGOPT_ERR_TYPE);
  /* a rank above MGOPT_MAX_RANK is refused in the type */
  n = (size_t)sprintf(src, "main() {\n  %%c: (");
  for (i = 0; i < 70; i++) n += (size_t)sprintf(src + n, "1, ");
  n += (size_t)sprintf(src + n, "fp32)* = const(val=1)\n} -> ()\n");
  if (mgopt_mil_parse(src, n, NULL, &p, &d) != MGOPT_OK) p = NULL;
  CHECK(p == NULL);
  CHECK_EQ_INT(d.status, MGOPT_ERR_LIMIT);
  CHECK_EQ_INT(d.col, 7);
  /* a literal's rank above the nesting limit is refused */
  n = (size_t)sprintf(src, "main() {\n  %%c: (1, 1, 1, 1, 1, fp32)* = const(val=[[[[[1]]]]])\n} -> ()\n");
  memset(&o, 0, sizeof o);
  o.max_depth = 4;
  if (mgopt_mil_parse(src, n, &o, &p, &d) != MGOPT_OK) p = NULL;
  CHECK(p == NULL);
  CHECK_EQ_INT(d.status, MGOPT_ERR_LIMIT);
  CHECK(strstr(d.msg, "nesting limit") != NULL);
  o.max_depth = 5;
  if (mgopt_mil_parse(src, n, &o, &p, &d) != MGOPT_OK) p = NULL;
  CHECK(p != NULL);
  mgopt_program_destroy(p);
  free(src);
}

/* A type of rank n: "(1, 1, ..., fp32)". */
static void rank_type(char *out, int n) {
  int i;
  out += sprintf(out, "(");
  for (i = 0; i < n; i++) out += sprintf(out, "1, ");
  sprintf(out, "fp32)");
}

static void test_rank_limit(void) {
  char src[1024], t32[256], t33[256];
  mgopt_diag d;
  mgopt_program *p;
  mgopt_op *op;
  rank_type(t32, MGOPT_MAX_RANK);
  rank_type(t33, MGOPT_MAX_RANK + 1);
  /* rank MGOPT_MAX_RANK is read, inferred and verified */
  sprintf(src, "main(%%x: %s) {\n  %%y: %s = relu(x=%%x)\n} -> (%%y)\n", t32, t32);
  p = parse_str(src, &d);
  REQUIRE(p != NULL);
  CHECK_EQ_INT(mgopt_program_verify(p, &d), MGOPT_OK);
  CHECK_EQ_INT(mgopt_program_function(p, "main")->body->first->outs[0]->type.rank, MGOPT_MAX_RANK);
  /* type inference refuses an output rank above the limit */
  op = mgopt_program_function(p, "main")->body->first;
  CHECK_EQ_INT(mgopt_op_infer(p, op, &d), MGOPT_OK);
  mgopt_program_destroy(p);
  sprintf(src, "main(%%x: %s) {\n  %%y: (*, fp32) = expand_dims(x=%%x, axes=[0])\n} -> (%%y)\n", t32);
  p = parse_str(src, &d);
  REQUIRE(p != NULL);
  op = mgopt_program_function(p, "main")->body->first;
  CHECK_EQ_INT(mgopt_op_infer(p, op, &d), MGOPT_ERR_TYPE);
  CHECK_EQ_INT(op->outs[0]->type.rank, -1);
  mgopt_program_destroy(p);
  /* one more dim is refused where the type starts: an op's output, then an input */
  sprintf(src, "main(%%x: (1, fp32)) {\n  %%y: %s = relu(x=%%x)\n} -> (%%y)\n", t33);
  p = parse_str(src, &d);
  CHECK(p == NULL);
  CHECK_EQ_INT(d.status, MGOPT_ERR_LIMIT);
  CHECK_EQ_INT(d.line, 2);
  CHECK_EQ_INT(d.col, 7);
  sprintf(src, "main(%%a: (1, fp32),\n     %%x: %s) {\n} -> (%%x)\n", t33);
  p = parse_str(src, &d);
  CHECK(p == NULL);
  CHECK_EQ_INT(d.status, MGOPT_ERR_LIMIT);
  CHECK_EQ_INT(d.line, 2);
  CHECK_EQ_INT(d.col, 10);
}

static void test_element_limits(void) {
  mgopt_diag d;
  mgopt_program *p;
  mgopt_parse_options o;
  const char *src = "main() {\n  %c: (2, 3, int32)* = const(val=[[1, 2, 3], [4, 5, 6]])\n} -> (%c)\n";
  memset(&o, 0, sizeof o);
  o.max_elements = 5;
  if (mgopt_mil_parse(src, strlen(src), &o, &p, &d) != MGOPT_OK) p = NULL;
  CHECK(p == NULL);
  CHECK_EQ_INT(d.status, MGOPT_ERR_LIMIT);
  o.max_elements = 6;
  if (mgopt_mil_parse(src, strlen(src), &o, &p, &d) != MGOPT_OK) p = NULL;
  CHECK(p != NULL);
  mgopt_program_destroy(p);
  /* a type far larger than its text is refused before allocating */
  p = parse_str("main() {\n  %c: (100000, 100000, fp64)* = const(val=[1])\n} -> (%c)\n", &d);
  CHECK(p == NULL);
  CHECK_EQ_INT(d.status, MGOPT_ERR_LIMIT);
  p = parse_str("main() {\n  %c: (1000, 1000, fp64)* = const(val=[1])\n} -> (%c)\n", &d);
  CHECK(p == NULL);
  CHECK_EQ_INT(d.status, MGOPT_ERR_TYPE);
  /* zero-element tensors with huge dims still count against the limit */
  p = parse_str("main() {\n  %c: (1000000000000, 0, fp32)* = const(val=[])\n} -> (%c)\n", &d);
  CHECK(p == NULL);
  CHECK_EQ_INT(d.status, MGOPT_ERR_LIMIT);
  /* list attributes count too */
  o.max_elements = 3;
  src = "main() {\n  f(a=[1, 2, 3, 4])\n} -> ()\n";
  if (mgopt_mil_parse(src, strlen(src), &o, &p, &d) != MGOPT_OK) p = NULL;
  CHECK(p == NULL);
  CHECK_EQ_INT(d.status, MGOPT_ERR_LIMIT);
  CHECK_EQ_INT(d.col, 17);
}

static void test_elide(void) {
  const char *src =
      "main() {\n"
      "  %c: (2, 3, fp32)* = const(val=[[1, 2, 3], [4, 5, 6]])\n"
      "  %s: (2, fp32)* = const(val=[1, 2])\n"
      "  f(t=tensor<(7, int8)>([1, 2, 3, 4, 5, 6, 7]))\n"
      "} -> (%c)\n";
  mgopt_diag d;
  mgopt_program *p = parse_str(src, &d), *q;
  mgopt_print_options o;
  char *t;
  REQUIRE(p != NULL);
  o.elide_above = 4;
  t = print_prog(p, &o);
  CHECK_EQ_STR(t,
               "main() {\n"
               "  %c: (2, 3, fp32)* = const(val=[...])\n"
               "  %s: (2, fp32)* = const(val=[1, 2])\n"
               "  f(t=tensor<(7, int8)>([...]))\n"
               "} -> (%c)\n");
  q = parse_str(t, &d);
  CHECK(q == NULL);
  CHECK_EQ_INT(d.status, MGOPT_ERR_PARSE);
  CHECK_EQ_INT(d.line, 2);
  CHECK_EQ_INT(d.col, 34);
  free(t);
  o.elide_above = 0;
  t = print_prog(p, &o);
  CHECK_EQ_STR(t, src);
  free(t);
  mgopt_program_destroy(p);
}

/* ---------------------------------------------------------------- memory */

typedef struct count_alloc {
  long live;
  long fail_after; /* -1 = never fail */
} count_alloc;

static void *counting_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
  count_alloc *c = (count_alloc *)ctx;
  (void)old_size;
  if (new_size == 0) {
    if (ptr) c->live--;
    free(ptr);
    return NULL;
  }
  if (c->fail_after == 0) return NULL;
  if (c->fail_after > 0) c->fail_after--;
  if (!ptr) {
    void *r = malloc(new_size);
    if (r) c->live++;
    return r;
  }
  return realloc(ptr, new_size);
}

/* Every allocation is returned on success, on error, and when any single
   allocation fails (the parse reports ERR_NOMEM, never crashes). */
static void test_allocator_balance_and_oom(void) {
  count_alloc c;
  mgopt_allocator a;
  mgopt_parse_options o;
  mgopt_diag d;
  mgopt_program *p;
  long k;
  int saw_nomem = 0, saw_ok = 0;
  a.realloc = counting_realloc;
  a.ctx = &c;
  memset(&o, 0, sizeof o);
  o.alloc = &a;
  c.live = 0;
  c.fail_after = -1;
  if (mgopt_mil_parse(rich_program, strlen(rich_program), &o, &p, &d) != MGOPT_OK) p = NULL;
  CHECK(p != NULL);
  mgopt_program_destroy(p);
  CHECK_EQ_INT(c.live, 0);
  if (mgopt_mil_parse(rich_program, strlen(rich_program) - 20, &o, &p, &d) != MGOPT_OK) p = NULL;
  CHECK(p == NULL);
  CHECK_EQ_INT(c.live, 0);
  for (k = 0; k < 60; k++) {
    c.live = 0;
    c.fail_after = k;
    if (mgopt_mil_parse(rich_program, strlen(rich_program), &o, &p, &d) != MGOPT_OK) p = NULL;
    if (p) {
      saw_ok++;
      mgopt_program_destroy(p);
    } else {
      CHECK_EQ_INT(d.status, MGOPT_ERR_NOMEM);
      saw_nomem++;
    }
    CHECK_EQ_INT(c.live, 0);
  }
  CHECK(saw_nomem > 0);
  CHECK(saw_ok > 0);
}

static void test_print_errors(void) {
  mgopt_buf b;
  mgopt_program *p = mgopt_program_create(NULL);
  memset(&b, 0, sizeof b);
  CHECK_EQ_INT(mgopt_mil_print(NULL, NULL, &b), MGOPT_ERR_INVALID_ARG);
  CHECK_EQ_INT(mgopt_mil_print(p, NULL, NULL), MGOPT_ERR_INVALID_ARG);
  CHECK_EQ_INT(mgopt_mil_print(p, NULL, &b), MGOPT_OK);
  CHECK(b.data != NULL && b.len == 0);
  mgopt_buf_free(&b);
  mgopt_program_destroy(p);
}

/* Printing appends to what the buffer holds. */
/* Ops keep where they were written: verifier and pass errors name the line:col. */
static mgopt_status fail_naming_b(mgopt_pass_ctx *ctx) {
  mgopt_diag_set(ctx->diag, MGOPT_ERR_PASS, "cannot handle this op");
  snprintf(ctx->diag->op, sizeof ctx->diag->op, "%s", "b");
  return MGOPT_ERR_PASS;
}

static void test_op_places_in_diags(void) {
  static const char bad_types[] =
      "main(%x: (2, 3, fp32), %w: (4, 5, fp32)) {\n"
      "  %a: (2, 3, fp32) = relu(x=%x)\n"
      "    %y: (2, 5, fp32) = matmul(x=%a, y=%w, transpose_x=false, transpose_y=false)\n"
      "} -> (%y)\n";
  static const char nested[] =
      "main(%x: (1, 2, int8), %s: (1, 2, fp32)) {\n"
      "  %l: (1, 2, fp32) = while_loop(loop_vars=(%s))\n"
      "    loop_cond(%s_x: (1, 2, fp32)) {\n"
      "      %r: (fp32) = reduce_sum(x=%s_x, axes=[0, 1], keep_dims=false)\n"
      "      %z: (fp32)* = const(val=10.5)\n"
      "      %lt: (bool) = less(x=%r, y=%z)\n"
      "    } -> (%lt)\n"
      "    loop_body(%s_x: (1, 2, fp32)) {\n"
      "      %n: (1, 2, fp32) = add(x=%s_x, y=%s_x)\n"
      "      %b: (1, 2, fp32) = relu(x=%n)\n"
      "    } -> (%b)\n"
      "} -> (%l)\n";
  mgopt_pass_def failing;
  const mgopt_pass_def *passes[1];
  mgopt_registry r;
  mgopt_diag d;
  mgopt_pipeline_options strict; /* the failure stops the pipeline and is returned */
  mgopt_program *p = parse_str(bad_types, &d);
  mgopt_op *relu;
  memset(&strict, 0, sizeof strict);
  strict.strict = 1;
  REQUIRE(p != NULL);
  /* the verifier names the matmul where it was written */
  CHECK_EQ_INT(mgopt_program_verify(p, &d), MGOPT_ERR_VERIFY);
  CHECK_EQ_STR(d.op, "y");
  CHECK_EQ_INT(d.line, 3);
  CHECK_EQ_INT(d.col, 5);
  /* an op built later has no place: the fields say so */
  relu = mgopt_program_function(p, "main")->body->first;
  mgopt_op_set_name(relu, "renamed");
  mgopt_diag_clear(&d);
  CHECK_EQ_INT(mgopt_program_verify(p, &d), MGOPT_ERR_VERIFY);
  CHECK_EQ_INT(d.line, 3);
  mgopt_program_destroy(p);
  /* a pass that names an op (nested in a loop body) gets its place too */
  p = parse_str(nested, &d);
  REQUIRE(p != NULL);
  CHECK_EQ_INT(mgopt_program_verify(p, &d), MGOPT_OK);
  memset(&failing, 0, sizeof failing);
  failing.name = "test::failing";
  failing.family = "test";
  failing.description = "fails naming op b";
  failing.run = fail_naming_b;
  passes[0] = &failing;
  memset(&r, 0, sizeof r);
  r.passes = passes;
  r.npasses = 1;
  CHECK_EQ_INT(mgopt_pipeline_run(p, &r, "failing", &strict, &d), MGOPT_ERR_PASS);
  CHECK_EQ_INT(d.status, MGOPT_ERR_PASS);
  CHECK_EQ_STR(d.op, "b");
  CHECK_EQ_INT(d.line, 10);
  CHECK_EQ_INT(d.col, 7);
  mgopt_program_destroy(p);
  /* a program built in code has no places */
  p = mgopt_program_create(NULL);
  REQUIRE(p != NULL);
  {
    mgopt_function *f = mgopt_function_new(p, "main");
    mgopt_type t;
    mgopt_value *x;
    static const char *const slot[1] = {"x"};
    mgopt_op *op;
    REQUIRE(f != NULL);
    mgopt_type_make_static(p, &t, MGOPT_DT_FP32, 0, NULL);
    x = mgopt_block_add_arg(f->body, "x", &t);
    op = mgopt_build_op(p, f->body, NULL, "relu", "b", 1, slot, &x, 1);
    REQUIRE(op != NULL);
    mgopt_block_add_output(f->body, op->outs[0]);
    CHECK_EQ_INT(mgopt_pipeline_run(p, &r, "failing", &strict, &d), MGOPT_ERR_PASS);
    CHECK_EQ_STR(d.op, "b");
    CHECK_EQ_INT(d.line, 0);
    CHECK_EQ_INT(d.col, 0);
  }
  mgopt_program_destroy(p);
}

static void test_print_appends(void) {
  mgopt_diag d;
  mgopt_program *p = parse_str(design_example, &d);
  mgopt_buf b;
  REQUIRE(p != NULL);
  memset(&b, 0, sizeof b);
  CHECK_EQ_INT(mgopt_mil_print(p, NULL, &b), MGOPT_OK);
  CHECK_EQ_INT(mgopt_mil_print(p, NULL, &b), MGOPT_OK);
  CHECK_EQ_INT(b.len, 2 * strlen(design_example));
  CHECK(strncmp(b.data + strlen(design_example), design_example, strlen(design_example)) == 0);
  mgopt_buf_free(&b);
  mgopt_program_destroy(p);
}

static const test_case tests[] = {
    TEST(test_design_example_is_canonical),
    TEST(test_parse_structure),
    TEST(test_builder_roundtrip_everything),
    TEST(test_parse_names_and_defaults),
    TEST(test_scoping_and_shadowing),
    TEST(test_mil_printout_forms),
    TEST(test_whitespace_and_comments),
    TEST(test_empty_program),
    TEST(test_operand_where_attribute_expected),
    TEST(test_literal_kinds),
    TEST(test_half_floats_exact),
    TEST(test_float_bits_exact),
    TEST(test_float_attr_exact),
    TEST(test_int_ranges),
    TEST(test_exotic_dtypes),
    TEST(test_random_programs_fixed_point),
    TEST(test_errors),
    TEST(test_nul_bytes_and_garbage),
    TEST(test_truncation_every_prefix),
    TEST(test_depth_limits),
    TEST(test_rank_limit),
    TEST(test_element_limits),
    TEST(test_elide),
    TEST(test_allocator_balance_and_oom),
    TEST(test_print_errors),
    TEST(test_print_appends),
    TEST(test_op_places_in_diags),
};
TEST_MAIN(tests)
