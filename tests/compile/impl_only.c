/* tests/compile/impl_only.c — the implementation alone, compiled as C99 or as C++
   (-x c++); the test's main lives in another translation unit. */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
