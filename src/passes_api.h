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
