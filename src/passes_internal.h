/* src/passes_internal.h — private helpers shared by passes: legality checks, pass declarations. */
#ifndef MGOPT__PASSES_INTERNAL_H
#define MGOPT__PASSES_INTERNAL_H
#include "internal.h"
#include "passes_api.h"

/* Each pass file defines one `MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_<name>`;
   passes/registry.c (amalgamated last) lists them. */

#endif /* MGOPT__PASSES_INTERNAL_H */
