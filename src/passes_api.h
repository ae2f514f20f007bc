/* src/passes_api.h — public declarations of mgopt_passes.h: built-in passes, pipelines, folding. */
#ifndef MGOPT_PASSES_H_INCLUDED
#define MGOPT_PASSES_H_INCLUDED
#include "api.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The registry of every built-in pass and named pipeline, with the built-in
   folding kernels. A static table: never NULL, never freed. */
MGOPTDEF const mgopt_registry *mgopt_builtin_registry(void);

/* Options for mgopt_fold_op, passed as its `ud` (NULL = every default).
   A zeroed struct means no limit. */
typedef struct mgopt_fold_options {
  int64_t max_elements;  /* do not fold when an output has more elements (0 = no limit) */
} mgopt_fold_options;

/* The built-in folding function (see mgopt_fold_fn): evaluates an op whose
   operands are all constant with the kernel table, following MIL semantics.
   On 1, out[0..op->nouts) are new tensors owned by p. Returns 0 (out set to
   NULL) when it cannot fold: no kernel, an operand not constant, an
   unsupported dtype, invalid parameters or indices, integer division by zero,
   a stored output type that disagrees with the computed one, or an output
   over opts->max_elements. -1 when memory ran out. ud: a mgopt_fold_options
   or NULL. */
MGOPTDEF int mgopt_fold_op(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud);

#ifdef __cplusplus
}
#endif
#endif /* MGOPT_PASSES_H_INCLUDED */
