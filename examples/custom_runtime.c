/* examples/custom_runtime.c — prepare a model for a small runtime: register what it lacks, lower it, fuse what it has a kernel for, check the result.

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
   reference evaluator, on the same input).

   Then the other direction: the runtime has a fused layer_norm kernel, and
   the model writes layer normalization as a function that says so
   (attributes(implements="layer_norm", epsilon=...), as a tf.function with
   experimental_implements does) with elementwise ops in its body. The
   caller registers a composite (mgopt_composite) for "layer_norm" that
   checks the function's signature, reads its epsilon attribute and builds
   one layer_norm op; tflite::fuse_composite_functions puts it at each call
   (through mgopt_pipeline_options.composites). The example checks that the
   call is gone, one layer_norm is there, and that the outputs agree with
   the function inlined (tflite::inline_functions). Exits 0 only if all hold.

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

/* ---------------------------------------------------------------- a composite for a custom runtime */

static const char composite_text[] =
    "\"tiny::layer_norm\" attributes(implements=\"layer_norm\", epsilon=1e-5) (%a: (2, 4, fp32)) {\n"
    "  %m: (2, 1, fp32) = reduce_mean(x=%a, axes=[1], keep_dims=true)\n"
    "  %d: (2, 4, fp32) = sub(x=%a, y=%m)\n"
    "  %q: (2, 4, fp32) = mul(x=%d, y=%d)\n"
    "  %v: (2, 1, fp32) = reduce_mean(x=%q, axes=[1], keep_dims=true)\n"
    "  %e: (fp32)* = const(val=1e-5)\n"
    "  %ve: (2, 1, fp32) = add(x=%v, y=%e)\n"
    "  %s: (2, 1, fp32) = sqrt(x=%ve)\n"
    "  %y: (2, 4, fp32) = real_div(x=%d, y=%s)\n"
    "} -> (%y)\n"
    "main(%x: (2, 4, fp32)) {\n"
    "  %t: (2, 4, fp32) = tanh(x=%x)\n"
    "  %n: (2, 4, fp32) = \"tiny::layer_norm\"(in0=%t)\n"
    "  %y: (2, 4, fp32) = add(x=%n, y=%x)\n"
    "} -> (%y)\n";

/* The caller's composite: a function implementing "layer_norm" over the
   last axis of one input becomes layer_norm(x, axes=[-1], epsilon). With
   build = 0 it only says whether it can; it returns 0 (and why) for a
   function that does not look like it, which then stays as it is. */
static int fuse_layer_norm(mgopt_program *p, mgopt_op *call, mgopt_function *callee, int build, mgopt_value **outs,
                           char *why, size_t why_cap, void *ud) {
  static const char *const slots[1] = {"x"};
  static const int64_t last_axis[1] = {-1};
  const mgopt_attr *eps = mgopt_function_attr(callee, "epsilon");
  mgopt_value *x = mgopt_op_operand(call, "in0");
  mgopt_op *ln;
  (void)ud;
  if (callee->body->nargs != 1 || callee->body->nouts != 1 || call->nouts != 1 || !x) {
    snprintf(why, why_cap, "layer_norm takes one input and returns one value");
    return 0;
  }
  if (!eps || (eps->kind != MGOPT_ATTR_FLOAT && eps->kind != MGOPT_ATTR_INT)) {
    snprintf(why, why_cap, "no epsilon attribute");
    return 0;
  }
  if (!build) return 1;
  ln = mgopt_build_op(p, call->parent, call, "layer_norm", call->outs[0]->name, 1, slots, &x, 1);
  if (!ln || mgopt_op_set_ints(ln, "axes", last_axis, 1) ||
      mgopt_op_set_float(ln, "epsilon", eps->kind == MGOPT_ATTR_FLOAT ? eps->u.f : (double)eps->u.i))
    return -1;
  if (mgopt_op_infer(p, ln, NULL) != MGOPT_OK) {
    snprintf(why, why_cap, "layer_norm does not type check");
    return 0;
  }
  outs[0] = ln->outs[0];
  return 1;
}

static int count_type(mgopt_program *p, const char *type) {
  mgopt_op *op;
  int n = 0;
  for (op = mgopt_program_function(p, "main")->body->first; op; op = op->next) n += strcmp(op->type, type) == 0;
  return n;
}

/* Parses the composite program and runs pipeline on it with the caller's composites. */
static mgopt_program *prepare(const char *pipeline, const mgopt_composites *c) {
  mgopt_pipeline_options po;
  mgopt_program *p = NULL;
  mgopt_diag d;
  if (mgopt_mil_parse(composite_text, strlen(composite_text), NULL, &p, &d) != MGOPT_OK) {
    printf("parse error %d:%d: %s\n", d.line, d.col, d.msg);
    return NULL;
  }
  memset(&po, 0, sizeof po);
  po.verify_each = 1;
  po.strict = 1;
  po.composites = c;
  if (mgopt_pipeline_run(p, mgopt_builtin_registry(), pipeline, &po, &d) != MGOPT_OK) {
    printf("pipeline %s failed: %s\n", pipeline, d.msg);
    mgopt_program_destroy(p);
    return NULL;
  }
  return p;
}

/* Returns the number of problems found (and says what they are). */
static int fuse_for_tiny(void) {
  mgopt_composite mine;
  mgopt_composites c;
  mgopt_program *fused, *inlined;
  mgopt_tensor *ref = NULL, *out = NULL;
  int bad = 0;
  int64_t i;
  /* the registration: the composite's name and the function that fuses it */
  mine.implements = "layer_norm";
  mine.fuse = fuse_layer_norm;
  mine.ud = NULL;
  memset(&c, 0, sizeof c);
  c.composites = &mine;
  c.ncomposites = 1;
  fused = prepare("tflite::fuse_composite_functions{strict=true}", &c);
  inlined = prepare("tflite::inline_functions", NULL);
  if (!fused || !inlined) {
    mgopt_program_destroy(fused);
    mgopt_program_destroy(inlined);
    return 1;
  }
  print(fused, "after tflite::fuse_composite_functions with the runtime's layer_norm composite");
  if (count_type(fused, "tiny::layer_norm") != 0 || count_type(fused, "layer_norm") != 1)
    printf("expected the call replaced by one layer_norm\n"), bad++;
  ref = evaluate(inlined);
  out = evaluate(fused);
  if (!ref || !out) {
    bad++;
  } else {
    for (i = 0; i < ref->numel; i++) {
      double a = mgopt_tensor_get_f64(ref, i), b = mgopt_tensor_get_f64(out, i);
      if (fabs(a - b) > 1e-5 * (1.0 + fabs(a))) {
        printf("output %lld: %g with the function inlined, %g fused\n", (long long)i, a, b);
        bad++;
      }
    }
    printf("# the %lld outputs agree with the inlined function within 1e-5\n", (long long)ref->numel);
  }
  mgopt_eval_tensor_free(inlined, ref);
  mgopt_eval_tensor_free(fused, out);
  mgopt_program_destroy(fused);
  mgopt_program_destroy(inlined);
  return bad;
}

int main(void) {
  int bad = legalize_for_tiny();
  bad += fuse_for_tiny();
  if (bad) printf("FAILED: %d problems\n", bad);
  return bad ? 1 : 0;
}
