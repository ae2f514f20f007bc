/* src/passes/registry.c — the table of built-in passes and named pipelines. */
#include "../passes_internal.h"

static const mgopt_pass_def *const mgopt__builtin_passes[] = {
    /* issue 2: the first passes */
    &mgopt__pass_dead_code_elimination,
    &mgopt__pass_noop_elimination,
    &mgopt__pass_remove_redundant_ops,
    /* issue 4, group B: cleanup, I/O, precision and ONNX IR passes */
    &mgopt__pass_divide_to_multiply,
    &mgopt__pass_select_optimization,
    &mgopt__pass_rank0_expand_dims_swap,
    &mgopt__pass_expand_high_rank_reshape_and_transpose,
    &mgopt__pass_add_conv_transpose_output_shape,
    &mgopt__pass_sanitize_input_output_names,
    &mgopt__pass_update_output_dtypes,
    &mgopt__pass_image_input_preprocess,
    &mgopt__pass_add_fp16_cast,
    &mgopt__pass_add_int16_cast,
    &mgopt__pass_guard_negative_gather_indices,
    &mgopt__pass_remove_redundant_transpose_pairs,
    &mgopt__pass_remove_redundant_reshape_pairs,
    &mgopt__pass_remove_redundant_transpose_reduce,
    &mgopt__pass_rewrite_mul_rsqrt_as_div,
    &mgopt__pass_inline_dropout_training_mode_constants,
    &mgopt__pass_propagate_shapes,
    &mgopt__pass_prune_unused_graph_inputs,
};

static const mgopt_pipeline_def mgopt__builtin_pipelines[] = {
    {"default", "noop_elimination,remove_redundant_ops,dead_code_elimination", "the default optimization pipeline"},
};

static const mgopt_registry mgopt__builtin_registry = {
    mgopt__builtin_passes, MGOPT__ARRAY_COUNT(mgopt__builtin_passes),
    mgopt__builtin_pipelines, MGOPT__ARRAY_COUNT(mgopt__builtin_pipelines),
    mgopt_fold_op, NULL};

MGOPTDEF const mgopt_registry *mgopt_builtin_registry(void) { return &mgopt__builtin_registry; }
