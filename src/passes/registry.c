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

static const mgopt_pipeline_def mgopt__builtin_pipelines[] = {
    /* MIL's default order (_COMMON_PASSES, reference mil-passes.md §1.1) with the
       passes mgopt has, then `cleanup`. Left out on purpose: passes that change
       the model's interface (sanitize_input_output_names, update_output_dtypes,
       image_input_preprocess, add_fp16_cast, add_int16_cast: each needs an
       option or a decision by the user) and guard_negative_gather_indices
       (a Core ML backend workaround that adds ops). remove_symbolic_reshape
       skips what it cannot resolve instead of failing. */
    {"default",
     "cast_optimization,noop_elimination,const_elimination,divide_to_multiply,select_optimization,"
     "add_conv_transpose_output_shape,const_elimination,const_deduplication,loop_invariant_elimination,"
     "remove_symbolic_reshape{strict=false},noop_elimination,rank0_expand_dims_swap,fuse_squeeze_expand_dims,"
     "merge_consecutive_paddings,merge_consecutive_relus,merge_consecutive_reshapes,"
     "merge_consecutive_transposes,expand_high_rank_reshape_and_transpose,fuse_stack_split,"
     "remove_redundant_ops,dedup_op_and_var_names,const_elimination,dead_code_elimination,"
     "cast_optimization,dead_code_elimination,const_elimination,dead_code_elimination,cleanup",
     "the default optimization pipeline: MIL's common passes, then cleanup"},
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
};

static const mgopt_registry mgopt__builtin_registry = {
    mgopt__builtin_passes, MGOPT__ARRAY_COUNT(mgopt__builtin_passes),
    mgopt__builtin_pipelines, MGOPT__ARRAY_COUNT(mgopt__builtin_pipelines),
    mgopt_fold_op, NULL};

MGOPTDEF const mgopt_registry *mgopt_builtin_registry(void) { return &mgopt__builtin_registry; }
