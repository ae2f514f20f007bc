/* tests/compile/nosimd_scalar.c — a private MGOPT_STATIC copy of mgopt built with
   MGOPT_NO_SIMD, running the folding cases for nosimd_main.c to compare. The
   Makefile also checks that no intrinsics header is included here. */
#define MGOPT_NO_SIMD
#define MGOPT_STATIC
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include "fold_cases.h"

int nosimd_scalar_fold(int i, unsigned char *out, size_t cap, size_t *len);
int nosimd_scalar_fold(int i, unsigned char *out, size_t cap, size_t *len) {
  return fold_case_run(i, out, cap, len);
}
