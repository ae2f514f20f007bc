/* src/passes/compression/fp16_weights.c — common::fp16_weights: fp32 weights stored as fp16, read back through constexpr_cast.

   Spec: coreml_compression_conversion.md (fp16 weight storage); reference mil-passes.md §4.1 (which consts
   are weights), §4.5 (constexpr_cast).

   Before (weight_threshold=0):
     main(%x: (1, 5, fp32)) {
       %w: (2, 5, fp32)* = const(val=[[0.1, 2, -0.5, 3, 0], [-4, 0.2, 5, 0.4, 6]])
       %y: (1, 2, fp32) = linear(x=%x, weight=%w)
     } -> (%y)
   After:
     main(%x: (1, 5, fp32)) {
       %w_fp16: (2, 5, fp16)* = const(val=[[0.1, 2, -0.5, 3, 0], [-4, 0.2, 5, 0.4, 6]])
       %w_fp32: (2, 5, fp32) = constexpr_cast(source_val=%w_fp16, output_dtype="fp32")
       %y: (1, 2, fp32) = linear(x=%x, weight=%w_fp32)
     } -> (%y)

   Options: weight_threshold (0): a weight is stored as fp16 when it has
   MORE elements. Per-weight options come from the compression
   configuration (mgopt_compress_config).
   Fires on: every fp32 weight the compression driver offers
   (passes/compress.c: rank >= 2, at least 10 elements, read by an op).
   The computation stays fp32: only the stored bytes halve.
   Must not fire: on a weight with a finite value that fp16 cannot hold
   (|v| >= 65520 rounds to inf); on fp16, bf16 and integer weights; on
   consts read by constexpr_* ops; when the program's target refuses
   constexpr_cast.
   Numeric contract: each value rounded once to nearest even fp16
   (mgopt_f32_to_f16_n; subnormals kept, values below 2^-25 become zero of
   their sign, NaN stays NaN, inf stays inf); constexpr_cast widens it back
   exactly.
   Cost: one scan and one vectorized conversion per weight, O(numel). */
#include "../../passes_internal.h"

static mgopt_opt_def const mgopt__fw_opts[1] = {
    {"weight_threshold", MGOPT_OPT_INT, "0", "store weights with more elements than this as fp16", NULL}};

static int mgopt__fw_fn(mgopt_pass_ctx *ctx, const mgopt__cw_weight *w, void *ud) {
  mgopt_program *p = ctx->program;
  mgopt_tensor *t = w->t, *h;
  const float *src;
  const char *base = mgopt__pu_value_name(w->op->outs[0]);
  static const char *const slots[1] = {"source_val"};
  mgopt_value *v;
  mgopt_op *ce;
  int64_t i;
  MGOPT__UNUSED(ud);
  if (w->opts[0].i < 0)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "fp16_weights: weight_threshold must be >= 0"), -2;
  if (t->dtype != MGOPT_DT_FP32) return 0;
  src = (const float *)mgopt_tensor_data(p, t);
  if (!src) return -1;
  for (i = 0; i < t->numel; i++) {
    float a = fabsf(src[i]);
    if (a >= 65520.0f && a < (float)HUGE_VAL) return 0; /* finite, and inf in fp16 */
  }
  h = mgopt_tensor_new(p, MGOPT_DT_FP16, t->rank, t->shape);
  if (!h || !mgopt_tensor_data_mut(p, h)) return -1;
  mgopt_f32_to_f16_n(src, (uint16_t *)h->data, t->numel);
  v = mgopt_build_const(p, w->op->parent, w->op, mgopt__pu_name2(p, base, "_fp16"), h);
  if (!v) return -1;
  ce = mgopt_build_op(p, w->op->parent, w->op, "constexpr_cast", mgopt__pu_name2(p, base, "_fp32"), 1, slots, &v, 1);
  if (!ce || mgopt_op_set_string(ce, "output_dtype", "fp32") != MGOPT_OK) return -1;
  return mgopt__cw_finish(p, w, ce);
}

static mgopt_status mgopt__fw_run(mgopt_pass_ctx *ctx) {
  mgopt__cw_pass cp;
  if (ctx->opts[0].i < 0)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "fp16_weights: weight_threshold must be >= 0");
  memset(&cp, 0, sizeof cp);
  cp.name = "fp16_weights";
  cp.opts = mgopt__fw_opts;
  cp.nopts = MGOPT__ARRAY_COUNT(mgopt__fw_opts);
  cp.fn = mgopt__fw_fn;
  return mgopt__cw_run(ctx, &cp);
}

MGOPT__DEFINE_PASS_WITH_OPTIONS(compression, common, fp16_weights,
                                "fp32 weights stored as fp16, widened by constexpr_cast", mgopt__fw_opts,
                                mgopt__fw_run);
