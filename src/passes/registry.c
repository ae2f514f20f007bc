/* src/passes/registry.c — the table of built-in passes and named pipelines. */
#include "../passes_internal.h"

static const mgopt_pass_def *const mgopt__builtin_passes[] = {
    /* issue 2: the first passes */
    &mgopt__pass_dead_code_elimination,
    &mgopt__pass_noop_elimination,
    &mgopt__pass_remove_redundant_ops,
    /* group A: cleanup and canonicalization passes (issue 4) */
    &mgopt__pass_const_deduplication,
    &mgopt__pass_dedup_op_and_var_names,
    &mgopt__pass_expand_dynamic_linear,
    &mgopt__pass_loop_invariant_elimination,
    &mgopt__pass_remove_symbolic_reshape,
    &mgopt__pass_topological_reorder,
    &mgopt__pass_cast_optimization,
    &mgopt__pass_merge_consecutive_paddings,
    &mgopt__pass_merge_consecutive_relus,
    &mgopt__pass_merge_consecutive_reshapes,
    &mgopt__pass_merge_consecutive_transposes,
    &mgopt__pass_fuse_squeeze_expand_dims,
    &mgopt__pass_fuse_stack_split,
    /* end of group A */
};

static const mgopt_pipeline_def mgopt__builtin_pipelines[] = {
    {"default", "noop_elimination,remove_redundant_ops,dead_code_elimination", "the default optimization pipeline"},
};

static const mgopt_registry mgopt__builtin_registry = {
    mgopt__builtin_passes, MGOPT__ARRAY_COUNT(mgopt__builtin_passes),
    mgopt__builtin_pipelines, MGOPT__ARRAY_COUNT(mgopt__builtin_pipelines),
    mgopt_fold_op, NULL};

MGOPTDEF const mgopt_registry *mgopt_builtin_registry(void) { return &mgopt__builtin_registry; }
