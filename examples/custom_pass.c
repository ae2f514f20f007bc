/* examples/custom_pass.c — write a rewrite pattern and run it with the worklist driver.

   The pattern turns `mul(x, 2)` (either operand order) into `add(x, x)`:

     main(%x: (2, 3, fp32)) {
       %two: (fp32) = const(val=2.0)
       %three: (fp32) = const(val=3.0)
       %y: (2, 3, fp32) = mul(x=%x, y=%two)
       %z: (2, 3, fp32) = mul(x=%two, y=%y)
       %w: (2, 3, fp32) = mul(x=%z, y=%three)
     } -> (%w)

   becomes

     main(%x: (2, 3, fp32)) {
       %three: (fp32) = const(val=3.0)
       %y: (2, 3, fp32) = add(x=%x, y=%x)
       %z: (2, 3, fp32) = add(x=%y, y=%y)
       %w: (2, 3, fp32) = mul(x=%z, y=%three)
     } -> (%w)

   (%two is erased by the driver once nothing reads it.) Exits 0 only if the
   pattern fired twice and the result is as above.

   Build: cc -std=c99 -I. examples/custom_pass.c -lm */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include <stdio.h>
#include <string.h>

/* The pattern: returns 1 iff it changed the IR, and changes it only through
   the mgopt_rw_* calls so the driver sees every change. */
static int mul_by_two_to_add(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y"), *other;
  const mgopt_tensor *c;
  const char *slots[2];
  mgopt_value *vals[2];
  mgopt_op *add;
  (void)ud;
  if (!x || !y) return 0;
  /* mul is commutative: the 2 may be on either side */
  c = mgopt_value_const(y);
  other = x;
  if (!c || !mgopt_tensor_all_equal_f64(c, 2.0)) {
    c = mgopt_value_const(x);
    other = y;
  }
  if (!c || !mgopt_tensor_all_equal_f64(c, 2.0)) return 0;
  /* x + x has x's shape: only rewrite when the 2 does not broadcast the result */
  if (!mgopt_type_equal(&other->type, &op->outs[0]->type)) return 0;
  slots[0] = "x";
  slots[1] = "y";
  vals[0] = other;
  vals[1] = other;
  /* the new op takes over the output's name (it may be a function output) */
  add = mgopt_rw_create(rw, op, "add", op->outs[0]->name, 2, slots, vals, 1);
  if (!add) return 0;
  add->outs[0]->type = op->outs[0]->type;
  mgopt_rw_replace_op(rw, op, add->outs);
  return 1;
}

static mgopt_value *scalar(mgopt_program *p, mgopt_block *b, const char *name, double v) {
  mgopt_tensor *t = mgopt_tensor_new_scalar_f64(p, MGOPT_DT_FP32, v);
  return t ? mgopt_build_const(p, b, NULL, name, t) : NULL;
}

static mgopt_value *mul(mgopt_program *p, mgopt_block *b, const char *name, mgopt_value *x,
                        mgopt_value *y) {
  static const char *const slots[2] = {"x", "y"};
  mgopt_value *vals[2];
  mgopt_op *op;
  vals[0] = x;
  vals[1] = y;
  op = mgopt_build_op(p, b, NULL, "mul", name, 2, slots, vals, 1);
  if (!op) return NULL;
  op->outs[0]->type = x->type.rank >= y->type.rank ? x->type : y->type;
  return op->outs[0];
}

static int build(mgopt_program *p) {
  static const int64_t shape[2] = {2, 3};
  mgopt_function *f = mgopt_function_new(p, "main");
  mgopt_type t;
  mgopt_value *x, *two, *three, *y, *z, *w;
  if (!f || mgopt_type_make_static(p, &t, MGOPT_DT_FP32, 2, shape) != MGOPT_OK) return 0;
  x = mgopt_block_add_arg(f->body, "x", &t);
  two = scalar(p, f->body, "two", 2.0);
  three = scalar(p, f->body, "three", 3.0);
  if (!x || !two || !three) return 0;
  y = mul(p, f->body, "y", x, two);
  z = y ? mul(p, f->body, "z", two, y) : NULL;
  w = z ? mul(p, f->body, "w", z, three) : NULL;
  return w && mgopt_block_add_output(f->body, w) == MGOPT_OK;
}

static void print(mgopt_program *p, const char *title) {
  mgopt_buf out;
  mgopt_status s;
  memset(&out, 0, sizeof out);
  s = mgopt_mil_print(p, NULL, &out);
  if (s == MGOPT_OK) printf("# %s\n%.*s\n", title, (int)out.len, out.data);
  else printf("# %s: cannot print: %s\n", title, mgopt_status_str(s));
  mgopt_buf_free(&out);
}

/* Returns the number of problems found (and says what they are). */
static int check(mgopt_program *p, const mgopt_rewrite_stats *st) {
  mgopt_block *b = mgopt_program_function(p, "main")->body;
  mgopt_op *op;
  mgopt_diag d;
  int adds = 0, muls = 0, bad = 0;
  if (mgopt_program_verify(p, &d) != MGOPT_OK) {
    printf("verifier: %s\n", d.msg);
    bad++;
  }
  for (op = b->first; op; op = op->next) {
    if (op->kind == MGOPT_OP_add) {
      adds++;
      if (mgopt_op_operand(op, "x") != mgopt_op_operand(op, "y")) {
        printf("add %s does not add a value to itself\n", op->outs[0]->name);
        bad++;
      }
    }
    if (op->kind == MGOPT_OP_mul) muls++;
    if (op->kind == MGOPT_OP_const && strcmp(op->outs[0]->name, "two") == 0) {
      printf("the const 2 is unused but still there\n");
      bad++;
    }
  }
  if (adds != 2 || muls != 1) {
    printf("expected 2 add and 1 mul, found %d add and %d mul\n", adds, muls);
    bad++;
  }
  if (st->per_pattern[0] != 2) {
    printf("the pattern fired %lld times, expected 2\n", (long long)st->per_pattern[0]);
    bad++;
  }
  if (b->nouts != 1 || strcmp(b->outs[0]->value->name, "w") != 0) {
    printf("the output changed\n");
    bad++;
  }
  return bad;
}

int main(void) {
  mgopt_pattern pat;
  mgopt_rewrite_config cfg;
  mgopt_rewrite_stats st;
  int64_t counts[1] = {0};
  mgopt_diag d;
  mgopt_status s;
  mgopt_program *p = mgopt_program_create(NULL);
  int bad;
  if (!p) return 1;
  if (!build(p)) {
    printf("building the graph failed\n");
    mgopt_program_destroy(p);
    return 1;
  }
  print(p, "before");

  memset(&pat, 0, sizeof pat);
  pat.name = "mul_by_two_to_add";
  pat.root_kind = MGOPT_OP_mul;
  pat.benefit = 1;
  pat.fn = mul_by_two_to_add;
  memset(&cfg, 0, sizeof cfg);
  memset(&st, 0, sizeof st);
  st.npatterns = 1;
  st.per_pattern = counts;
  mgopt_diag_clear(&d);
  s = mgopt_rewrite_program(p, &pat, 1, &cfg, &st, &d);
  if (s != MGOPT_OK) {
    printf("rewrite failed: %s: %s\n", mgopt_status_str(s), d.msg);
    mgopt_program_destroy(p);
    return 1;
  }
  print(p, "after mul_by_two_to_add");
  printf("# %lld rewrites, %lld erased, %lld pops\n", (long long)st.rewrites, (long long)st.erased,
         (long long)st.pops);
  bad = check(p, &st);
  mgopt_program_destroy(p);
  if (bad) printf("FAILED: %d problems\n", bad);
  return bad ? 1 : 0;
}
