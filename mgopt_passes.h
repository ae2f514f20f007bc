/* mgopt_passes.h — mgopt's graph passes, constant-folding kernels and named pipelines.
   Generated from src/ by tools/amalgamate — do not edit. Needs mgopt.h. Version 0.1.0. */
#include "mgopt.h"
/* src/passes_api.h — public declarations of mgopt_passes.h: built-in passes, pipelines, folding. */
#ifndef MGOPT_PASSES_H_INCLUDED
#define MGOPT_PASSES_H_INCLUDED
#ifdef __cplusplus
extern "C" {
#endif

/* The registry of every built-in pass and named pipeline, with the built-in
   folding kernels. A static table: never NULL, never freed. */
MGOPTDEF const mgopt_registry *mgopt_builtin_registry(void);

/* The built-in folding function (see mgopt_fold_fn): evaluates an op whose
   operands are all constant with the kernel table. */
MGOPTDEF int mgopt_fold_op(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud);

#ifdef __cplusplus
}
#endif
#endif /* MGOPT_PASSES_H_INCLUDED */

#ifdef MGOPT_IMPLEMENTATION
#ifndef MGOPT__PASSES_IMPLEMENTATION_DONE
#define MGOPT__PASSES_IMPLEMENTATION_DONE
/* src/passes_internal.h — private helpers shared by passes: legality checks, pass declarations. */
#ifndef MGOPT__PASSES_INTERNAL_H
#define MGOPT__PASSES_INTERNAL_H

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
/* src/kernels/fold.c — constant-folding kernel table (being written). */

MGOPTDEF int mgopt_fold_op(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(op);
  MGOPT__UNUSED(out);
  MGOPT__UNUSED(ud);
  return 0;
}
/* src/passes/util.c — legality checks and small rewrite helpers shared by the passes. */

MGOPT__PRIVATE int mgopt__pu_is_func_output(const mgopt_value *v) {
  const mgopt_use *u;
  for (u = v->uses; u; u = u->next)
    if (!u->op && u->block && !u->block->parent_op) return 1;
  return 0;
}

MGOPT__PRIVATE int mgopt__pu_is_block_output(const mgopt_value *v) { return mgopt_value_is_block_output(v); }

MGOPT__PRIVATE int mgopt__pu_single_use(const mgopt_value *v) {
  return v->nuses == 1 && v->uses->op != NULL;
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_single_user(const mgopt_value *v) {
  return mgopt__pu_single_use(v) ? v->uses->op : NULL;
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_def_of(const mgopt_value *v, int32_t kind) {
  return (v && v->def && v->def->kind == kind) ? v->def : NULL;
}

MGOPT__PRIVATE int mgopt__pu_const_scalar(const mgopt_value *v, double *out) {
  const mgopt_tensor *t = mgopt_value_const(v);
  if (!t || t->numel != 1 || t->dtype == MGOPT_DT_STRING) return 0;
  *out = mgopt_tensor_get_f64(t, 0);
  return 1;
}

MGOPT__PRIVATE int mgopt__pu_const_all(const mgopt_value *v, double x) {
  const mgopt_tensor *t = mgopt_value_const(v);
  return t && t->numel > 0 && mgopt_tensor_all_equal_f64(t, x);
}

MGOPT__PRIVATE int mgopt__pu_types_equal(const mgopt_value *a, const mgopt_value *b) {
  return mgopt_type_equal(&a->type, &b->type);
}

MGOPT__PRIVATE int mgopt__pu_is_dead(const mgopt_op *op) {
  int32_t i;
  if (op->nouts == 0) return 0;
  for (i = 0; i < op->nouts; i++)
    if (op->outs[i]->nuses) return 0;
  return 1;
}

MGOPT__PRIVATE void mgopt__pu_erase_if_dead(mgopt_rewriter *rw, mgopt_op *op) {
  if (op && !(op->flags & MGOPT_OP_ERASED) && mgopt__pu_is_dead(op)) mgopt_rw_erase(rw, op);
}

MGOPT__PRIVATE mgopt_status mgopt__pu_run_patterns(mgopt_pass_ctx *ctx, const mgopt_pattern *pats, int32_t n,
                                                   int fold) {
  mgopt_rewrite_config cfg;
  mgopt_rewrite_stats st;
  mgopt_status s;
  memset(&cfg, 0, sizeof cfg);
  memset(&st, 0, sizeof st);
  cfg.erase_dead = 0;
  if (fold) {
    cfg.fold = ctx->fold;
    cfg.fold_ud = ctx->fold_ud;
  }
  s = mgopt_rewrite_program(ctx->program, pats, n, &cfg, &st, ctx->diag);
  ctx->rewrites += st.rewrites + st.folds;
  return s;
}
/* src/passes/common/dead_code_elimination.c — common::dead_code_elimination: erase ops whose results reach no output.

   Spec: mil_graph_passes.txt, "Eliminate unused ops in program".

   Before:
     main(%x: (2, 4, fp32)) {
       %w: (4, 2, fp32)* = const(val=[1, 2, 3, 4, 5, 6, 7, 8])
       %b: (4, fp32)* = const(val=[1, 2, 3, 4])
       %m: (2, 2, fp32) = matmul(x=%x, y=%w)
       %l: (2, 4, fp32) = linear(x=%x, weight=%w, bias=%b)
     } -> (%l)
   After:
     main(%x: (2, 4, fp32)) {
       %w: (4, 2, fp32)* = const(val=[1, 2, 3, 4, 5, 6, 7, 8])
       %b: (4, fp32)* = const(val=[1, 2, 3, 4])
       %l: (2, 4, fp32) = linear(x=%x, weight=%w, bias=%b)
     } -> (%l)

   Fires on: every op with at least one output, none of them used, that is
   pure (registered ops with the pure trait, and opaque ops: model graphs
   have no side effects), in every block, nested blocks included (a nested
   block's outputs keep what feeds them alive). Ops without outputs are kept.
   Cost: one backward sweep per block, O(ops): erasing an op drops its
   operand uses, so producers earlier in the block are seen dead in the
   same sweep. */

static int mgopt__dce_removable(const mgopt_op *op) {
  int32_t i;
  if (op->nouts == 0) return 0;
  for (i = 0; i < op->nouts; i++)
    if (op->outs[i]->nuses) return 0;
  return op->kind == MGOPT_OP_OPAQUE || (mgopt_op_traits(op) & MGOPT_TRAIT_PURE);
}

static int64_t mgopt__dce_block(mgopt_block *b) {
  mgopt_op *op, *prev;
  int64_t n = 0;
  for (op = b->last; op; op = prev) {
    int32_t i;
    prev = op->prev;
    if (mgopt__dce_removable(op)) {
      mgopt_op_erase(op);
      n++;
      continue;
    }
    for (i = 0; i < op->nblocks; i++) n += mgopt__dce_block(op->blocks[i]);
  }
  return n;
}

static mgopt_status mgopt__dce_run(mgopt_pass_ctx *ctx) {
  int32_t i;
  for (i = 0; i < mgopt_program_function_count(ctx->program); i++)
    ctx->rewrites += mgopt__dce_block(mgopt_program_function_at(ctx->program, i)->body);
  return MGOPT_OK;
}

MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_dead_code_elimination = {
    "common::dead_code_elimination", "cleanup", "erase ops whose results reach no output", 0, NULL,
    mgopt__dce_run};
/* src/passes/registry.c — the table of built-in passes and named pipelines. */

static const mgopt_pass_def *const mgopt__builtin_passes[] = {
    &mgopt__pass_dead_code_elimination,
};

static const mgopt_pipeline_def mgopt__builtin_pipelines[] = {
    {"default", "dead_code_elimination", "the default optimization pipeline"},
};

static const mgopt_registry mgopt__builtin_registry = {
    mgopt__builtin_passes, MGOPT__ARRAY_COUNT(mgopt__builtin_passes),
    mgopt__builtin_pipelines, MGOPT__ARRAY_COUNT(mgopt__builtin_pipelines),
    mgopt_fold_op, NULL};

MGOPTDEF const mgopt_registry *mgopt_builtin_registry(void) { return &mgopt__builtin_registry; }
#endif /* MGOPT__PASSES_IMPLEMENTATION_DONE */
#endif /* MGOPT_IMPLEMENTATION */
/*
------------------------------------------------------------------------------
This software is available under 2 licenses -- choose whichever you prefer.
------------------------------------------------------------------------------
ALTERNATIVE A - MIT License
Copyright (c) 2026 the mgopt authors
Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:
The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
ALTERNATIVE B - Public Domain (www.unlicense.org)
This is free and unencumbered software released into the public domain.
Anyone is free to copy, modify, publish, use, compile, sell, or distribute this
software, either in source code form or as a compiled binary, for any purpose,
commercial or non-commercial, and by any means.
In jurisdictions that recognize copyright laws, the author or authors of this
software dedicate any and all copyright interest in the software to the public
domain. We make this dedication in the hope that it will be of use to
software's heirs and successors. We intend this dedication to be an overt act of
relinquishment in perpetuity of all present and future rights to this software
under copyright law.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN
ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION
WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
------------------------------------------------------------------------------
*/
