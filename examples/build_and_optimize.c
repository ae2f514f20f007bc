/* examples/build_and_optimize.c — build a small graph through the API, run the
   default pipeline, print the result.

   The graph (in .mil text):

     main(%x: (2, 4, fp32)) {
       %w: (4, 3, fp32) = const(val=[[...]])
       %b: (3, fp32) = const(val=[0.5, -0.5, 1.0])
       %m: (2, 3, fp32) = matmul(x=%x, y=%w, transpose_x=false, transpose_y=false)
       %a: (2, 3, fp32) = add(x=%m, y=%b)
       %two: (fp32) = const(val=2.0)
       %three: (fp32) = const(val=3.0)
       %six: (fp32) = mul(x=%two, y=%three)       # a constant expression
       %s: (2, 3, fp32) = mul(x=%a, y=%six)
       %dead: (2, 3, fp32) = sigmoid(x=%m)         # nobody reads it
       %y: (2, 3, fp32) = relu(x=%s)
     } -> (%y)

   After `default`: the sigmoid is gone, %six is folded into a constant, and the
   output keeps its name and type. Exits 0 only if that holds.

   Build: cc -std=c99 -I. examples/build_and_optimize.c -lm */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include <stdio.h>
#include <string.h>

/* Appends op `type` with operands (x, y) (y may be NULL) and infers its type. */
static mgopt_value *add_op(mgopt_program *p, mgopt_block *b, const char *type, const char *name,
                           mgopt_value *x, mgopt_value *y, mgopt_diag *d) {
  const char *slots[2];
  mgopt_value *vals[2];
  mgopt_op *op;
  slots[0] = "x";
  slots[1] = "y";
  vals[0] = x;
  vals[1] = y;
  op = mgopt_build_op(p, b, NULL, type, name, y ? 2 : 1, slots, vals, 1);
  if (!op) return NULL;
  if (strcmp(type, "matmul") == 0) {
    mgopt_op_set_bool(op, "transpose_x", 0);
    mgopt_op_set_bool(op, "transpose_y", 0);
  }
  if (mgopt_op_infer(p, op, d) != MGOPT_OK) return NULL;
  return op->outs[0];
}

static mgopt_value *add_const(mgopt_program *p, mgopt_block *b, const char *name, int32_t rank,
                              const int64_t *shape, const float *vals) {
  mgopt_tensor *t = mgopt_tensor_new(p, MGOPT_DT_FP32, rank, shape);
  int64_t i;
  if (!t) return NULL;
  for (i = 0; i < t->numel; i++) mgopt_tensor_set_f64(t, i, vals[i]);
  return mgopt_build_const(p, b, NULL, name, t);
}

static int build(mgopt_program *p, mgopt_diag *d) {
  static const int64_t xshape[2] = {2, 4}, wshape[2] = {4, 3}, bshape[1] = {3};
  static const float w[12] = {1, 0, -1, 0.5f, 2, 0, 0, -0.25f, 1, 1, 1, 1};
  static const float bias[3] = {0.5f, -0.5f, 1};
  static const float two = 2, three = 3;
  mgopt_function *f = mgopt_function_new(p, "main");
  mgopt_type xt;
  mgopt_value *x, *vw, *vb, *m, *a, *k2, *k3, *six, *s, *y;
  if (!f || mgopt_type_make_static(p, &xt, MGOPT_DT_FP32, 2, xshape) != MGOPT_OK) return 0;
  x = mgopt_block_add_arg(f->body, "x", &xt);
  vw = add_const(p, f->body, "w", 2, wshape, w);
  vb = add_const(p, f->body, "b", 1, bshape, bias);
  if (!x || !vw || !vb) return 0;
  m = add_op(p, f->body, "matmul", "m", x, vw, d);
  a = m ? add_op(p, f->body, "add", "a", m, vb, d) : NULL;
  k2 = add_const(p, f->body, "two", 0, NULL, &two);
  k3 = add_const(p, f->body, "three", 0, NULL, &three);
  six = k2 && k3 ? add_op(p, f->body, "mul", "six", k2, k3, d) : NULL;
  s = a && six ? add_op(p, f->body, "mul", "s", a, six, d) : NULL;
  if (!s || !add_op(p, f->body, "sigmoid", "dead", m, NULL, d)) return 0;
  y = add_op(p, f->body, "relu", "y", s, NULL, d);
  return y && mgopt_block_add_output(f->body, y) == MGOPT_OK;
}

static int print(mgopt_program *p, const char *title) {
  mgopt_buf out;
  mgopt_status s;
  memset(&out, 0, sizeof out);
  s = mgopt_mil_print(p, NULL, &out);
  if (s == MGOPT_OK) printf("# %s\n%.*s\n", title, (int)out.len, out.data);
  else printf("# %s: cannot print: %s\n", title, mgopt_status_str(s));
  mgopt_buf_free(&out);
  return s == MGOPT_OK;
}

/* The checks: returns the number of problems found (and says what they are). */
static int check(mgopt_program *p) {
  mgopt_function *f = mgopt_program_function(p, "main");
  mgopt_op *op;
  mgopt_value *y;
  mgopt_diag d;
  int bad = 0;
  if (mgopt_program_verify(p, &d) != MGOPT_OK) {
    printf("verifier: %s\n", d.msg);
    bad++;
  }
  for (op = f->body->first; op; op = op->next) {
    int32_t s, k, nconst = 0, nops = 0;
    if (op->kind == MGOPT_OP_sigmoid) {
      printf("the dead sigmoid is still there\n");
      bad++;
    }
    if (op->kind == MGOPT_OP_const) continue;
    for (s = 0; s < op->nslots; s++)
      for (k = 0; k < op->slots[s].n; k++) {
        nops++;
        nconst += mgopt_value_const(op->slots[s].uses[k].value) != NULL;
      }
    if (nops > 0 && nconst == nops) {
      printf("op %s has only constant operands: not folded\n", op->type);
      bad++;
    }
  }
  y = f->body->nouts == 1 ? f->body->outs[0]->value : NULL;
  if (!y || strcmp(y->name, "y") != 0 || y->type.dtype != MGOPT_DT_FP32 || y->type.rank != 2 ||
      y->type.dims[0].v != 2 || y->type.dims[1].v != 3) {
    printf("the output lost its name or type\n");
    bad++;
  }
  return bad;
}

int main(void) {
  mgopt_program *p = mgopt_program_create(NULL);
  mgopt_pass_report rep[64]; /* one report per pass run (named pipelines expand) */
  int32_t nrep = 0, i;
  mgopt_pipeline_options po = {0}; /* zeroed: every default */
  mgopt_diag d;
  int64_t before;
  int bad;
  if (!p) return 1;
  mgopt_diag_clear(&d);
  if (!build(p, &d)) {
    printf("building the graph failed: %s\n", d.msg);
    mgopt_program_destroy(p);
    return 1;
  }
  before = mgopt_program_op_count(p);
  print(p, "before");
  po.reports = rep;
  po.reports_cap = 64;
  po.nreports = &nrep;
  if (mgopt_pipeline_run(p, mgopt_builtin_registry(), "default", &po, &d) != MGOPT_OK) {
    printf("pipeline failed: %s\n", d.msg);
    mgopt_program_destroy(p);
    return 1;
  }
  print(p, "after default");
  for (i = 0; i < nrep && i < 64; i++)
    printf("# %-40s %3lld rewrites, %lld -> %lld ops\n", rep[i].name, (long long)rep[i].rewrites,
           (long long)rep[i].ops_before, (long long)rep[i].ops_after);
  bad = check(p);
  if (mgopt_program_op_count(p) >= before) {
    printf("nothing was removed\n");
    bad++;
  }
  mgopt_program_destroy(p);
  if (bad) printf("FAILED: %d problems\n", bad);
  return bad ? 1 : 0;
}
