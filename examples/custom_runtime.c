/* examples/custom_runtime.c — prepare a model for a small runtime: register what it lacks, lower it, check the result.

   The runtime of this example has elementwise ops, matmul and layer_norm,
   but neither silu nor gelu. The program

     main(%x: (2, 4, fp32)) {
       %a: (2, 4, fp32) = silu(x=%x)
       %g: (2, 4, fp32) = gelu(x=%a, mode="TANH_APPROXIMATION")
       %y: (2, 4, fp32) = layer_norm(x=%g, axes=[1], epsilon=1e-5)
     } -> (%y)

   goes through relay::legalize with
   - a legalization the caller registers (mgopt_legalization): silu(x)
     becomes mul(x, sigmoid(x)), for the target "tiny" only;
   - mgopt's own gelu legalization, chosen by name (ops="gelu,..."), which
     writes gelu's tanh form in elementwise ops; layer_norm is not named,
     so it stays (the runtime has it).
   The example checks that silu and gelu are gone, layer_norm is still there,
   and that the program computes what it computed before (mgopt_eval, the
   reference evaluator, on the same input). Exits 0 only if all hold.

   Build: cc -std=c99 -I. examples/custom_runtime.c -lm */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char program_text[] =
    "main(%x: (2, 4, fp32)) {\n"
    "  %a: (2, 4, fp32) = silu(x=%x)\n"
    "  %g: (2, 4, fp32) = gelu(x=%a, mode=\"TANH_APPROXIMATION\")\n"
    "  %y: (2, 4, fp32) = layer_norm(x=%g, axes=[1], epsilon=1e-5)\n"
    "} -> (%y)\n";

/* ---------------------------------------------------------------- the caller's legalization */

/* silu(x) = x * sigmoid(x). The ops are made with mgopt_rw_create before
   the op; the value returned (the output of the last op made) takes the
   op's place. NULL declines: then nothing changes. */
static mgopt_value *silu_to_sigmoid(void *ud, mgopt_rewriter *rw, mgopt_op *op, const char *target) {
  static const char *const one_slot[1] = {"x"};
  static const char *const two_slots[2] = {"x", "y"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *vals[2];
  mgopt_op *sig, *mul;
  int *calls = (int *)ud;
  (*calls)++;
  if (strcmp(target, "tiny") != 0 || !x) return NULL; /* another runtime may have silu */
  sig = mgopt_rw_create(rw, op, "sigmoid", mgopt_program_fresh_name(p, "silu_sigmoid"), 1, one_slot, &x, 1);
  if (!sig || mgopt_op_infer(p, sig, NULL) != MGOPT_OK) return NULL;
  vals[0] = x;
  vals[1] = sig->outs[0];
  mul = mgopt_rw_create(rw, op, "mul", mgopt_program_fresh_name(p, "silu_mul"), 2, two_slots, vals, 1);
  if (!mul || mgopt_op_infer(p, mul, NULL) != MGOPT_OK) return NULL;
  return mul->outs[0];
}

/* ---------------------------------------------------------------- helpers */

static void print(mgopt_program *p, const char *title) {
  mgopt_buf out;
  memset(&out, 0, sizeof out);
  if (mgopt_mil_print(p, NULL, &out) == MGOPT_OK) printf("# %s\n%.*s\n", title, (int)out.len, out.data);
  mgopt_buf_free(&out);
}

/* Evaluates main on a fixed input; the output tensor, or NULL. */
static mgopt_tensor *evaluate(mgopt_program *p) {
  static const int64_t shape[2] = {2, 4};
  mgopt_tensor *in = mgopt_eval_tensor_new(p, MGOPT_DT_FP32, 2, shape), *out = NULL;
  mgopt_diag d;
  int64_t i;
  if (!in) return NULL;
  for (i = 0; i < 8; i++) mgopt_tensor_set_f64(in, i, -2.0 + 0.55 * (double)i);
  if (mgopt_eval(p, NULL, &in, 1, &out, 1, NULL, &d) != MGOPT_OK) {
    printf("evaluation failed: %s\n", d.msg);
    out = NULL;
  }
  mgopt_eval_tensor_free(p, in);
  return out;
}

static int count_ops(mgopt_program *p, int32_t kind) {
  mgopt_op *op;
  int n = 0;
  for (op = mgopt_program_function(p, "main")->body->first; op; op = op->next) n += op->kind == kind;
  return n;
}

/* ---------------------------------------------------------------- a legalization for a custom runtime */

/* Returns the number of problems found (and says what they are). */
static int legalize_for_tiny(void) {
  mgopt_legalization rules[1];
  mgopt_legalize_config lc;
  mgopt_pipeline_options po;
  mgopt_program *p = NULL;
  mgopt_tensor *before, *after;
  mgopt_diag d;
  int calls = 0, bad = 0;
  int64_t i;

  if (mgopt_mil_parse(program_text, strlen(program_text), NULL, &p, &d) != MGOPT_OK) {
    printf("parse error %d:%d: %s\n", d.line, d.col, d.msg);
    return 1;
  }
  print(p, "before");
  before = evaluate(p);

  /* the registration: op type, the name `ops` selects it by, the function */
  rules[0].op_type = "silu";
  rules[0].name = "silu_to_sigmoid";
  rules[0].fn = silu_to_sigmoid;
  rules[0].ud = &calls;
  lc.rules = rules;
  lc.nrules = 1;
  memset(&po, 0, sizeof po);
  po.verify_each = 1;
  po.strict = 1;
  po.legalize_config = &lc;
  if (mgopt_pipeline_run(p, mgopt_builtin_registry(),
                         "relay::legalize{ops=\"silu_to_sigmoid,gelu\", target=tiny},dead_code_elimination", &po,
                         &d) != MGOPT_OK) {
    printf("pipeline failed: %s\n", d.msg);
    mgopt_program_destroy(p);
    return 1;
  }
  print(p, "after relay::legalize for the runtime \"tiny\"");
  after = evaluate(p);

  if (calls != 1) printf("the silu legalization was called %d times, expected 1\n", calls), bad++;
  if (count_ops(p, MGOPT_OP_silu) || count_ops(p, MGOPT_OP_gelu)) printf("silu or gelu left\n"), bad++;
  if (count_ops(p, MGOPT_OP_layer_norm) != 1) printf("layer_norm was not selected but is gone\n"), bad++;
  if (count_ops(p, MGOPT_OP_sigmoid) != 1 || count_ops(p, MGOPT_OP_tanh) != 1)
    printf("expected one sigmoid (silu) and one tanh (gelu)\n"), bad++;
  if (!before || !after) {
    bad++;
  } else {
    for (i = 0; i < before->numel; i++) {
      double a = mgopt_tensor_get_f64(before, i), b = mgopt_tensor_get_f64(after, i);
      if (fabs(a - b) > 1e-5 * (1.0 + fabs(a))) {
        printf("output %lld: %g before, %g after\n", (long long)i, a, b);
        bad++;
      }
    }
    printf("# the %lld outputs agree within 1e-5\n", (long long)before->numel);
  }
  mgopt_eval_tensor_free(p, before);
  mgopt_eval_tensor_free(p, after);
  mgopt_program_destroy(p);
  return bad;
}

int main(void) {
  int bad = legalize_for_tiny();
  if (bad) printf("FAILED: %d problems\n", bad);
  return bad ? 1 : 0;
}
