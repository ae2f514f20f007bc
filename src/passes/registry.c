/* src/passes/registry.c — the table of built-in passes and named pipelines. */
#include "../passes_internal.h"

static const mgopt_pass_def *const mgopt__builtin_passes[] = {
    /* issue 2: the first passes */
    &mgopt__pass_dead_code_elimination,
    &mgopt__pass_noop_elimination,
    &mgopt__pass_remove_redundant_ops,
};

static const mgopt_pipeline_def mgopt__builtin_pipelines[] = {
    {"default", "noop_elimination,remove_redundant_ops,dead_code_elimination", "the default optimization pipeline"},
};

static const mgopt_registry mgopt__builtin_registry = {
    mgopt__builtin_passes, MGOPT__ARRAY_COUNT(mgopt__builtin_passes),
    mgopt__builtin_pipelines, MGOPT__ARRAY_COUNT(mgopt__builtin_pipelines),
    mgopt_fold_op, NULL};

MGOPTDEF const mgopt_registry *mgopt_builtin_registry(void) { return &mgopt__builtin_registry; }
