/* src/passes_internal.h — private helpers shared by passes: legality checks, pass declarations. */
#ifndef MGOPT__PASSES_INTERNAL_H
#define MGOPT__PASSES_INTERNAL_H
#include "internal.h"
#include "passes_api.h"

/* Each pass file defines one `MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_<name>`;
   passes/registry.c (amalgamated last) lists them. */

/* ---- shared legality checks and helpers (passes/util.c) */
/* v is an output of a function body (its name and type must survive). */
MGOPT__PRIVATE int mgopt__pu_is_func_output(const mgopt_value *v);
/* v is an output of any block (function body or nested). */
MGOPT__PRIVATE int mgopt__pu_is_block_output(const mgopt_value *v);
/* exactly one use, by an op (not a block output). */
MGOPT__PRIVATE int mgopt__pu_single_use(const mgopt_value *v);
/* that single user op, or NULL. */
MGOPT__PRIVATE mgopt_op *mgopt__pu_single_user(const mgopt_value *v);
/* the producer of v if it is an op of `kind`, else NULL. */
MGOPT__PRIVATE mgopt_op *mgopt__pu_def_of(const mgopt_value *v, int32_t kind);
/* v is a constant with one element; its value in *out. */
MGOPT__PRIVATE int mgopt__pu_const_scalar(const mgopt_value *v, double *out);
/* v is a non-empty constant whose elements all equal x. */
MGOPT__PRIVATE int mgopt__pu_const_all(const mgopt_value *v, double x);
MGOPT__PRIVATE int mgopt__pu_types_equal(const mgopt_value *a, const mgopt_value *b);
/* every output unused (and at least one output). */
MGOPT__PRIVATE int mgopt__pu_is_dead(const mgopt_op *op);
MGOPT__PRIVATE void mgopt__pu_erase_if_dead(mgopt_rewriter *rw, mgopt_op *op);
/* Runs patterns over every function with the worklist driver. Dead ops are
   NOT erased by the driver (a pass removes only what it made dead); with
   fold != 0 constant operands are folded through ctx->fold. Adds the rewrite
   count to ctx->rewrites. */
MGOPT__PRIVATE mgopt_status mgopt__pu_run_patterns(mgopt_pass_ctx *ctx, const mgopt_pattern *pats, int32_t n,
                                                   int fold);

#endif /* MGOPT__PASSES_INTERNAL_H */
