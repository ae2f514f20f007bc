/* tests/compile/nostdio_impl.c — the implementation with MGOPT_NO_STDIO: the
   Makefile checks with nm that this object references no stdio stream or file
   function, then links it with the smoke test. */
#define MGOPT_NO_STDIO
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
