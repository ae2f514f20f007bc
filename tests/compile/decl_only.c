/* tests/compile/decl_only.c — the headers without MGOPT_IMPLEMENTATION: they must
   compile as C99 in any order, more than once, and define no symbol (the
   Makefile checks the object with nm). mgopt_passes.h includes mgopt.h itself. */
#include "mgopt_passes.h"
#include "mgopt.h"
#include "mgopt_passes.h"
#include "mgopt.h"
