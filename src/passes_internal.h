/* src/passes_internal.h — private helpers shared by passes: legality checks, pass declarations. */
#ifndef MGOPT__PASSES_INTERNAL_H
#define MGOPT__PASSES_INTERNAL_H
#include "internal.h"
#include "passes_api.h"

/* 1 if mgopt_fold_op has a kernel for ops of this kind (kernels/fold.c). */
MGOPT__PRIVATE int mgopt__fold_has_kernel(int32_t kind);

#endif /* MGOPT__PASSES_INTERNAL_H */
