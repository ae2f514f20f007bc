/* src/passes/precision/add_fp16_cast.c — common::add_fp16_cast: fp32 ops compute in fp16, with casts in and out.

   Spec: mil_graph_passes.txt, "For each input of dtype float32, inject a cast op
   to change it to float16 dtype ..." (FP16ComputePrecision); reference
   mil-passes.md §3.35.

   Before:
     main(%x: (2, 3, fp32)) {
       %a: (2, 3, fp32) = square(x=%x)
       %b: (2, 3, fp32) = relu(x=%x)
       %c: (2, 3, fp32) = add(x=%a, y=%b)
     } -> (%c)
   After:
     main(%x: (2, 3, fp32)) {
       %x_to_fp16: (2, 3, fp16) = cast(x=%x, dtype="fp16")
       %a_cast_fp16: (2, 3, fp16) = square(x=%x_to_fp16)
       %a_cast_fp16_to_fp32: (2, 3, fp32) = cast(x=%a_cast_fp16, dtype="fp32")
       %b_cast_fp16: (2, 3, fp16) = relu(x=%x_to_fp16)
       %b_cast_fp16_to_fp32: (2, 3, fp32) = cast(x=%b_cast_fp16, dtype="fp32")
       %a_cast_fp16_to_fp32_to_fp16: (2, 3, fp16) = cast(x=%a_cast_fp16_to_fp32, dtype="fp16")
       %b_cast_fp16_to_fp32_to_fp16: (2, 3, fp16) = cast(x=%b_cast_fp16_to_fp32, dtype="fp16")
       %c_cast_fp16: (2, 3, fp16) = add(x=%a_cast_fp16_to_fp32_to_fp16, y=%b_cast_fp16_to_fp32_to_fp16)
       %c: (2, 3, fp32) = cast(x=%c_cast_fp16, dtype="fp32")
     } -> (%c)
   (cast_optimization then cancels each fp16 -> fp32 -> fp16 pair.)

   Option `skip_ops_by_type`: op types left in fp32, comma-separated ("add,mul").
   Fires on: every registered op, in every block, with an fp32 tensor operand,
   except cast, const, constexpr_* ops, ops owning blocks (while_loop, cond:
   their bodies are converted op by op) and opaque ops. Each fp32 operand
   becomes fp16: a computed value through cast(x, dtype="fp16") named
   "<x>_to_fp16", shared by the consumers in one block; a const through a new
   fp16 const of the same name, made once beside it and read by every block
   that reads the const (a weight of the outer graph read in both branches of
   a conditional is held once, not once per branch), where a finite value that would round to
   +-inf becomes +-65504 and (for constants of fewer than 400 elements) a
   non-zero value that would round to 0 becomes the smallest fp16 subnormal
   of its sign. The op is re-created with outputs "<out>_cast_fp16"; each
   output that became fp16 is cast back ("<out>_cast_fp16_to_fp32"). Function
   outputs keep their names and fp32 dtype.
   Stays fp32 (as on iOS17+, mixed precision): alpha of elu, leaky_relu,
   prelu, thresholded_relu; alpha and beta of clamped_relu,
   linear_activation, scaled_tanh, sigmoid_hard, softplus_parametric; epsilon
   of inverse, log, rsqrt — when given as operands.
   Must not fire: an op with an fp32 const operand holding a finite value
   with 65504 < |v| < 1e38 (fp16 would overflow it); an op whose type
   inference rejects fp16 operands; an op the program's target cannot write
   with fp16 operands (a dequantize with an fp16 scale below ONNX opset 19);
   ops listed in skip_ops_by_type.
   Cost: one walk, O(ops + operands + constant elements); the cast cache is a
   hash table. */
#include "../../passes_internal.h"

static mgopt_opt_def const mgopt__f16_opts[1] = {
    {"skip_ops_by_type", MGOPT_OPT_STRING, "", "op types kept in fp32, comma-separated", NULL}};

static int mgopt__f16_listed(const char *list, const char *type) {
  size_t n = strlen(type);
  const char *q = list;
  if (!list) return 0;
  for (;;) {
    size_t len = strcspn(q, ","), a = 0, b = len;
    while (a < b && q[a] == ' ') a++;
    while (b > a && q[b - 1] == ' ') b--;
    if (b - a == n && memcmp(q + a, type, n) == 0) return 1;
    if (!q[len]) return 0;
    q += len + 1;
  }
}

static int mgopt__f16_keeps_param(const char *type, const char *slot) {
  static const char *const alpha_only[] = {"elu", "leaky_relu", "prelu", "thresholded_relu"};
  static const char *const alpha_beta[] = {"clamped_relu", "linear_activation", "scaled_tanh", "sigmoid_hard",
                                           "softplus_parametric"};
  static const char *const eps[] = {"inverse", "log", "rsqrt"};
  size_t i;
  if (strcmp(slot, "alpha") == 0 || strcmp(slot, "beta") == 0) {
    for (i = 0; i < sizeof alpha_beta / sizeof alpha_beta[0]; i++)
      if (strcmp(type, alpha_beta[i]) == 0) return 1;
    if (strcmp(slot, "alpha") == 0)
      for (i = 0; i < sizeof alpha_only / sizeof alpha_only[0]; i++)
        if (strcmp(type, alpha_only[i]) == 0) return 1;
  }
  if (strcmp(slot, "epsilon") == 0)
    for (i = 0; i < sizeof eps / sizeof eps[0]; i++)
      if (strcmp(type, eps[i]) == 0) return 1;
  return 0;
}

static int mgopt__f16_decide(const mgopt_op *op, int32_t s, int32_t k, mgopt_value *v, int32_t *dt, mgopt_value **rep,
                             void *ud) {
  const char *skip = (const char *)ud;
  const mgopt_tensor *t;
  MGOPT__UNUSED(k);
  MGOPT__UNUSED(rep);
  if (op->kind == MGOPT_OP_cast || (mgopt_op_traits(op) & MGOPT_TRAIT_CONSTEXPR) ||
      strncmp(op->type, "constexpr_", 10) == 0 || mgopt__f16_listed(skip, op->type))
    return -1;
  if (v->type.kind != MGOPT_TYPE_TENSOR || v->type.dtype != MGOPT_DT_FP32) return 0;
  if (mgopt__f16_keeps_param(op->type, op->slots[s].name)) return 0;
  t = mgopt_value_const(v);
  if (t && t->dtype == MGOPT_DT_FP32) {
    int64_t i;
    for (i = 0; i < t->numel; i++) {
      double a = fabs(mgopt_tensor_get_f64(t, i));
      if (isfinite(a) && a > 65504.0 && a < 1e38) return -1;
    }
  }
  *dt = MGOPT_DT_FP16;
  return 1;
}

static mgopt_value *mgopt__f16_conv(mgopt_program *p, mgopt_op *pos, mgopt_value *v, int32_t dt, void *ud) {
  const mgopt_tensor *t = mgopt_value_const(v);
  const char *name = mgopt__pu_converted_name(p, v, MGOPT_DT_FP16);
  MGOPT__UNUSED(ud);
  if (t && t->dtype == MGOPT_DT_FP32) {
    mgopt_tensor *h = mgopt_tensor_new(p, MGOPT_DT_FP16, t->rank, t->shape);
    int64_t i;
    if (!h) return NULL;
    for (i = 0; i < t->numel; i++) {
      double x = mgopt_tensor_get_f64(t, i), y;
      mgopt_tensor_set_f64(h, i, x);
      y = mgopt_tensor_get_f64(h, i);
      if (isfinite(x) && isinf(y)) mgopt_tensor_set_f64(h, i, x > 0 ? 65504.0 : -65504.0);
      else if (t->numel < 400 && x != 0.0 && y == 0.0 && !isnan(x))
        mgopt_tensor_set_f64(h, i, x > 0 ? 5.9604644775390625e-08 : -5.9604644775390625e-08);
    }
    return mgopt_build_const(p, pos->parent, pos, name, h);
  }
  return mgopt__pu_cast_value(p, pos, v, (mgopt_dtype)dt, name);
}

static mgopt_status mgopt__f16_run(mgopt_pass_ctx *ctx) {
  return mgopt__pu_precision_run(ctx, "_cast_fp16", mgopt__f16_decide, mgopt__f16_conv, (void *)ctx->opts[0].s);
}

MGOPT__DEFINE_PASS_WITH_OPTIONS(precision, common, add_fp16_cast,
                                "fp32 ops compute in fp16, with casts in and out",
                                mgopt__f16_opts, mgopt__f16_run);
