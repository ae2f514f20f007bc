/* tests/difftest/lib.c — the mgopt implementation for the differential tester, in a translation unit of its own. */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
