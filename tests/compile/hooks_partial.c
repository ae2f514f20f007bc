/* tests/compile/hooks_partial.c — negative compile test: defining only some of
   MGOPT_MALLOC, MGOPT_REALLOC and MGOPT_FREE must stop the build with an #error.
   HOOKS_PARTIAL selects which (1..6); without it nothing is defined and the file
   must compile (the control case). */
#include <stdlib.h>
#if defined(HOOKS_PARTIAL)
#if HOOKS_PARTIAL == 1 || HOOKS_PARTIAL == 4 || HOOKS_PARTIAL == 5
#define MGOPT_MALLOC(sz) malloc(sz)
#endif
#if HOOKS_PARTIAL == 2 || HOOKS_PARTIAL == 4 || HOOKS_PARTIAL == 6
#define MGOPT_REALLOC(p, sz) realloc(p, sz)
#endif
#if HOOKS_PARTIAL == 3 || HOOKS_PARTIAL == 5 || HOOKS_PARTIAL == 6
#define MGOPT_FREE(p) free(p)
#endif
#endif
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"

int hooks_partial_version_major(void);
int hooks_partial_version_major(void) { return MGOPT_VERSION_MAJOR; }
