/* src/passes_internal.h — private helpers shared by passes: legality checks, pass declarations. */
#ifndef MGOPT__PASSES_INTERNAL_H
#define MGOPT__PASSES_INTERNAL_H
#include "internal.h"
#include "passes_api.h"

#endif /* MGOPT__PASSES_INTERNAL_H */
