/* src/passes/registry.c — the built-in registry: the passes of passes/list.h in its order, and the named pipelines. */
#include "../passes_internal.h"

/* Every pass's def, declared for compiling this file alone. C++ cannot declare
   an internal object ahead of its definition; it needs no declaration, since
   the amalgamation defines every pass before this file. */
#ifndef __cplusplus
#define MGOPT__PASS_DECLARE(family, name) MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_##name;
MGOPT__PASS_LIST(MGOPT__PASS_DECLARE)
#undef MGOPT__PASS_DECLARE
#endif

/* The passes in list order (passes/list.h). */
#define MGOPT__PASS_ADDRESS(family, name) &mgopt__pass_##name,
static const mgopt_pass_def *const mgopt__builtin_passes[] = {MGOPT__PASS_LIST(MGOPT__PASS_ADDRESS)};
#undef MGOPT__PASS_ADDRESS

/* MIL's default order (_COMMON_PASSES, reference mil-passes.md §1.1), one
   entry per line with its number there; `cleanup` (entries 78-96) follows.
   Left out on purpose: sanitize_input_output_names (it renames the model's
   interface) and guard_negative_gather_indices (a Core ML backend workaround
   that adds ops). update_output_dtypes and image_input_preprocess do nothing
   without their options. add_fp16_cast and add_int16_cast (60, 61, 68) run
   only in default_fp16. remove_symbolic_reshape skips what it cannot resolve
   instead of failing. mgopt's own entries say why in their comment:
   canonicalize_opaque_ops and fold_shape_ops after entries 11 and 16 (an
   ONNX op left opaque for want of constant operands maps once they are
   constant, and shapes known by then fold; the second time catches what
   the first one's folds made constant; resolve_reshape_shape then gives a
   reshape to its own input's dims a constant shape, and fold_shape_chains
   repeats the three until a shape computation stops changing),
   eliminate_output_identity after entry 20 (an identity whose only job is
   to name a block output), dead_code_elimination
   after it (the fusions that follow fire only when the value they fold has
   no other reader, and a reader nobody uses must not hold them back). Passes mgopt
   does not have yet are named where they belong; each joins its place when
   it exists (an unknown pass is an error). */
/* `default` changes no value for nothing (README, "Rewrites that can
   change float values"); fast_math runs these entries' inexact forms:
   entry 8, distributive_quantized_binary_op_scale_normalization, only there
   (its new scales are rounded, so a quantized output can move by one step,
   and it fuses nothing); entries 13 and 14 in default only where they give
   the same bits (divide_to_multiply by powers of two; select_optimization
   of an all-true or all-false condition); entries 23 and 24, the GELU
   fusions, in default only for constants within 1e-5 relative (ONNX
   Runtime's), not the reference's 1e-3; entry 42, fuse_reduce_mean, in
   default only for a constant that is the count (or 1/count) as its dtype
   holds it. */
#define MGOPT__DEFAULT_13_14 \
  "divide_to_multiply," /* 13 */ \
  "select_optimization{exact=true}," /* 14 */
#define MGOPT__FAST_MATH_13_14 \
  "divide_to_multiply{inexact=true}," /* 13 */ \
  "select_optimization," /* 14 */
#define MGOPT__DEFAULT_23_24 \
  "fuse_gelu_tanh_approximation," /* 23 */ \
  "fuse_gelu_exact," /* 24 */
#define MGOPT__FAST_MATH_23_24 \
  "fuse_gelu_tanh_approximation{inexact=true}," /* 23 */ \
  "fuse_gelu_exact{inexact=true}," /* 24 */
#define MGOPT__DEFAULT_HEAD \
  MGOPT__DEFAULT_HEAD_WITH("", MGOPT__DEFAULT_13_14, MGOPT__DEFAULT_23_24, "fuse_reduce_mean,")
#define MGOPT__DEFAULT_HEAD_WITH(entry_8, entries_13_14, entries_23_24, entry_42) \
  /*  1 lower_complex_dialect_ops: not written yet */ \
  "update_output_dtypes," /* 2 */ \
  "cast_optimization," /* 3 */ \
  "noop_elimination," /* 4 */ \
  "int_op_canonicalization," /* 5 */ \
  "nullify_redundant_quantization_zero_point," /* 6 */ \
  "dequantize_quantize_pair_elimination," /* 7 */ \
  entry_8 /* 8 distributive_quantized_binary_op_scale_normalization */ \
  "dequantize_to_constexpr," /* 9 */ \
  "canonicalize_quantized_lut_pattern," /* 10 */ \
  "const_elimination," /* 11 */ \
  "canonicalize_opaque_ops," /* mgopt: an ONNX op opaque for want of constants maps now */ \
  "fold_shape_ops," /* mgopt: a Shape of what is now typed folds */ \
  /* 12 sanitize_input_output_names: left out, renames the model's inputs and outputs */ \
  entries_13_14 \
  "add_conv_transpose_output_shape," /* 15 */ \
  "const_elimination," /* 16 */ \
  "canonicalize_opaque_ops," /* mgopt: ops whose operands entries 11-16 made constant map now */ \
  "fold_shape_ops," /* mgopt: and the shapes they now type fold */ \
  "resolve_reshape_shape," /* mgopt: a reshape to its own input's dims gets a constant shape */ \
  "fold_shape_chains," /* mgopt: the three above again until shape computations settle */ \
  "const_deduplication," /* 17 */ \
  "loop_invariant_elimination," /* 18 */ \
  "remove_symbolic_reshape{strict=false}," /* 19 */ \
  "noop_elimination," /* 20 */ \
  "eliminate_output_identity," /* mgopt: an identity that only names a block output goes */ \
  "dead_code_elimination," /* mgopt: a dead reader must not block the fusions */ \
  "fuse_matmul_weight_bias," /* 21 */ \
  "fuse_linear_bias," /* 22 */ \
  "fuse_matmul_dequantized_weight_bias," /* mgopt: the same over a dequantized weight (ONNX Runtime writes Gemm) */ \
  entries_23_24 \
  "fuse_gelu_sigmoid_approximation," /* 25 */ \
  "fuse_leaky_relu," /* 26 */ \
  "rank0_expand_dims_swap," /* 27 */ \
  "fuse_squeeze_expand_dims," /* 28 */ \
  "compose_conv1d," /* 29 */ \
  "use_reflection_padding," /* 30 */ \
  "concat_to_pad," /* mgopt: a concat with a block of one constant value is a pad */ \
  "merge_consecutive_paddings," /* 31 */ \
  "fuse_pad_conv," /* 32 */ \
  "image_input_preprocess," /* 33 */ \
  "replace_stack_reshape," /* 34 */ \
  "reduce_transposes," /* 35 */ \
  "fuse_dilated_conv," /* 36 */ \
  "fuse_conv_scale," /* 37 */ \
  "fuse_conv_bias," /* 38 */ \
  "fuse_onehot_matmul_to_gather," /* 39 */ \
  "fuse_layernorm_or_instancenorm," /* 40 */ \
  "fuse_elementwise_to_batchnorm," /* 41 */ \
  entry_42 /* 42 fuse_reduce_mean */ \
  "fuse_conv_batchnorm," /* 43 */ \
  "fuse_conv_scale," /* 44 */ \
  "fuse_conv_bias," /* 45 */ \
  "fuse_conv_batchnorm," /* 46 */ \
  "detect_concat_interleave," /* 47 */ \
  "concat_to_pixel_shuffle," /* 48 */ \
  "fuse_prelu," /* 49 */ \
  "prelu_to_lrelu," /* 50 */ \
  "merge_consecutive_relus," /* 51 */ \
  "merge_consecutive_reshapes," /* 52 */ \
  "merge_consecutive_transposes," /* 53 */ \
  "fuse_transpose_matmul," /* 54 */ \
  "expand_high_rank_reshape_and_transpose," /* 55 */ \
  "fuse_stack_split," /* 56 */ \
  "reduce_transposes," /* 57 */ \
  "remove_redundant_ops," /* 58 */ \
  "dedup_op_and_var_names," /* 59 */ \
  ""
#define MGOPT__DEFAULT_MID \
  "update_output_dtypes," /* 62 */ \
  /* 63 guard_negative_gather_indices: left out, a Core ML backend workaround that adds ops */ \
  "const_elimination," /* 64 */ \
  "dead_code_elimination," /* 65 */ \
  "cast_optimization," /* 66 */ \
  "dead_code_elimination," /* 67 */ \
  ""
#define MGOPT__DEFAULT_TAIL \
  "const_elimination," /* 69 */ \
  "dead_code_elimination," /* 70 */ \
  "cast_optimization," /* 71 */ \
  "dead_code_elimination," /* 72 */ \
  "const_elimination," /* 73 */ \
  "canonicalize_inplace_pattern," /* 74 */ \
  "prefer_state_in_downstream," /* 75 */ \
  "const_elimination," /* 76 */ \
  "dead_code_elimination," /* 77 */ \
  ""

static const mgopt_pipeline_def mgopt__builtin_pipelines[] = {
    {"default", MGOPT__DEFAULT_HEAD MGOPT__DEFAULT_MID MGOPT__DEFAULT_TAIL "cleanup",
     "the default optimization pipeline: MIL's common passes, then cleanup"},
    {"fast_math",
     MGOPT__DEFAULT_HEAD_WITH("distributive_quantized_binary_op_scale_normalization,", MGOPT__FAST_MATH_13_14,
                              MGOPT__FAST_MATH_23_24, "fuse_reduce_mean{inexact=true},")
     MGOPT__DEFAULT_MID MGOPT__DEFAULT_TAIL "cleanup",
     "default plus rewrites that change float values beyond what a fusion needs: x / c becomes x * (1/c) for any "
     "constant c (an ulp per element), a select of +-inf becomes an add (NaN where the other side is NaN), "
     "reduce_sum / c becomes reduce_mean for c within 1e-2 of the count, GELUs fuse with constants 1e-3 off, a "
     "quantized add's scales are normalized (an output may move by one step)"},
    {"default_fp16",
     MGOPT__DEFAULT_HEAD "add_fp16_cast,add_int16_cast," MGOPT__DEFAULT_MID "add_int16_cast," MGOPT__DEFAULT_TAIL
     "cleanup",
     "default with fp16 compute: casts fp32 ops to fp16 (add_fp16_cast, add_int16_cast) at MIL's places"},
    /* MIL's _CLEANUP_PASSES (reference mil-passes.md §1.1, entries 78-96) in
       their exact order. Passes mgopt does not have yet are named where they
       belong; each joins the string when it exists (an unknown pass is an error). */
    {"cleanup",
     "dead_code_elimination," /* 78 */
     "const_elimination," /* 79 */
     "cast_optimization," /* 80 */
     "dead_code_elimination," /* 81 */
     "const_elimination," /* 82 */
     "const_deduplication," /* 83 */
     "dead_code_elimination," /* 84 */
     "merge_affine_dequantize_with_consecutive_ops," /* 85 */
     "expand_dynamic_linear," /* 86 */
     "fuse_transpose_matmul," /* 87 */
     "dead_code_elimination," /* 88 */
     "const_deduplication," /* 89 */
     "loop_invariant_elimination," /* 90 */
     "noop_elimination," /* 91 */
     "dedup_op_and_var_names," /* 92 */
     "reduce_transposes," /* 93 */
     "remove_redundant_ops," /* 94 */
     "topological_reorder," /* 95 */
     "dead_code_elimination", /* 96 */
     "MIL's cleanup passes (_CLEANUP_PASSES order)"},
    /* The ONNX IR optimizer order (spec onnx_ir_optimizer_passes.txt, "Current
       order"); a MIL twin stands in where it does the same job. */
    {"onnx_cleanup",
     "name_fix," /* 1 */
     "cast_optimization," /* 2 remove_redundant_casts (twin) */
     "remove_redundant_transpose_reduce," /* 3 */
     "remove_redundant_transpose_add_forests," /* 4 */
     "remove_redundant_transpose_pairs," /* 5 */
     "remove_redundant_reshape_pairs," /* 6 */
     "noop_elimination," /* 7 remove_identity_reshapes (twin; also drops other no-ops) */
     "remove_redundant_ops," /* 8 common_subexpression_elimination (twin) */
     /* 9 lift_constants_to_initializers (an export concern: the ONNX writer) */
     "rewrite_mul_rsqrt_as_div," /* 10 */
     "inline_dropout_training_mode_constants," /* 11 */
     "propagate_shapes," /* 12-13 propagate_elementwise_shapes, propagate_unary_shapes */
     "cast_optimization," /* 14 remove_redundant_casts_after_propagation (twin) */
     "dead_code_elimination," /* 15 remove_dead_nodes; 16 remove_orphan_transposes */
     "prune_unused_graph_inputs", /* 17 */
     "the ONNX IR optimizer passes in their reference order"},
    /* The reference's lossless re-encodings (mil-passes.md §1.2, §4.3, §4.4):
       the compression pass first, then COMMON + CLEANUP (`default`). */
    {"default_palettization", "palettize_weights{mode=unique},default",
     "weights with at most 256 distinct values stored as a LUT (unique mode), then default"},
    {"default_sparsification", "prune_weights{mode=threshold,threshold=1e-12},default",
     "weights whose zeros are half or more stored sparse (|w| <= 1e-12), then default"},
    /* The common weight quantization (the reference's OpLinearQuantizerConfig
       defaults: int8, linear_symmetric, per_channel, weight_threshold 2048). */
    {"quantization", "linear_quantize_weights,default",
     "int8 per-channel symmetric weight quantization (weights over 2048 elements), then default"},
    /* Whole-model fp16 with the model's I/O types kept (what onnxconverter-
       common's float16 conversion does): ops compute in fp16 between casts
       at the inputs and outputs; ops kept fp32 are add_fp16_cast's own
       (casts, control flow, states, opaque ops, ops with a constant beyond
       fp16's range) and these, whose results or accumulations leave fp16's
       range or precision: topk, range_1d, cumsum, resize_bilinear,
       upsample_bilinear, reduce_sum, reduce_prod. The file must not grow:
       weights transformed for an op kept fp32 fold to one fp32 constant per
       reader (per branch of a conditional, say), so const_deduplication
       keeps one of each and fp16_weights stores those over 256 elements as
       fp16 widened by a Cast (their values are fp16 already, or the weights
       of fp32 ops, stored as fp16 as whole-model fp16 converters do). */
    {"fp16",
     "add_fp16_cast{skip_ops_by_type=\"topk,range_1d,cumsum,resize_bilinear,upsample_bilinear,reduce_sum,reduce_prod\"},"
     "cast_optimization,const_elimination,const_deduplication,fp16_weights{weight_threshold=256},"
     "dead_code_elimination",
     "whole-model fp16 compute, fp32 inputs and outputs kept"},
    /* TVM Relay's preparation for an embedded runtime (tvm_relay_passes.md,
       in its order): Legalize, SimplifyInference, EliminateCommonSubexpr,
       CombineParallelConv2D/Dense, FoldConstant, FoldScaleAxis,
       CanonicalizeCast, CanonicalizeOp, the peepholes PT1-PT5 followed by
       FoldScaleAxis and FoldConstant again. ToNCHWLayout and
       CanonicalizeConcatPos have no pass yet; PrintIR is relay::print_ir,
       placed by the caller. */
    {"relay_prepare",
     "relay::legalize,relay::simplify_inference,relay::eliminate_common_subexpr,"
     "relay::combine_parallel_conv2d,relay::combine_parallel_dense,const_elimination,relay::fold_scale_axis,"
     "const_elimination,relay::canonicalize_cast,relay::canonicalize_op,relay::convert_layout{layout=NCHW},"
     "reduce_transposes,relay::peephole_conv_add_mul,"
     "relay::peephole_add_add,relay::peephole_concat_add_pad,relay::peephole_dense_to_conv,"
     "relay::fold_scale_axis,const_elimination,relay::canonicalize_concat_pos,dead_code_elimination",
     "TVM Relay's preparation passes for an embedded runtime, in the spec's order"},
};

static const mgopt_registry mgopt__builtin_registry = {
    mgopt__builtin_passes, MGOPT__ARRAY_COUNT(mgopt__builtin_passes),
    mgopt__builtin_pipelines, MGOPT__ARRAY_COUNT(mgopt__builtin_pipelines),
    mgopt_fold_op, NULL};

MGOPTDEF const mgopt_registry *mgopt_builtin_registry(void) { return &mgopt__builtin_registry; }
