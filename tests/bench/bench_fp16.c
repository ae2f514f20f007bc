/* tests/bench/bench_fp16.c — throughput of the bulk fp32 -> fp16 conversion (mgopt_f32_to_f16_n).

   usage: bench_fp16 [MILLIONS]   (default 16 M elements)

   Converts a buffer of varied fp32 values (normals, subnormals, values past
   fp16's range, NaN) and prints elements per second (best of 5) for the
   bulk conversion and for a loop over the scalar one, and checks that both
   give the same bits. Built by `make bench-fp16` with the build's CFLAGS;
   gcc on x86-64 takes the F16C path when the CPU has it (clang and others
   when they target F16C, e.g. -march=native); MGOPT_NO_SIMD measures
   the portable loop. A measurement, never a test. */
#define _POSIX_C_SOURCE 199309L
#define MGOPT_IMPLEMENTATION
#include "bench.h"
#include "mgopt.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
  int64_t n = (argc > 1 ? atoll(argv[1]) : 16) * 1000000, i;
  float *src = (float *)malloc((size_t)n * sizeof(float));
  uint16_t *a = (uint16_t *)malloc((size_t)n * 2), *b = (uint16_t *)malloc((size_t)n * 2);
  uint32_t s = 12345u;
  double best_bulk = 1e30, best_scalar = 1e30, t0;
  int rep;
  if (!src || !a || !b || n <= 0) return 1;
  for (i = 0; i < n; i++) {
    uint32_t x;
    s = s * 1664525u + 1013904223u;
    x = s;
    if (i % 16 == 0) memcpy(&src[i], &x, 4); /* any bit pattern: subnormals, inf, NaN */
    else src[i] = (float)((double)(int32_t)x / 2147483648.0 * (i % 3 ? 4.0 : 70000.0));
  }
  for (rep = 0; rep < 5; rep++) {
    t0 = bench_wall();
    mgopt_f32_to_f16_n(src, a, n);
    t0 = bench_wall() - t0;
    if (t0 < best_bulk) best_bulk = t0;
    t0 = bench_wall();
    for (i = 0; i < n; i++) b[i] = mgopt_f32_to_f16(src[i]);
    t0 = bench_wall() - t0;
    if (t0 < best_scalar) best_scalar = t0;
  }
  if (memcmp(a, b, (size_t)n * 2) != 0) {
    printf("bench_fp16: bulk and scalar conversions differ\n");
    return 1;
  }
  printf("fp32 -> fp16, %lld elements: bulk %.2f G elements/s (%s), scalar loop %.2f G elements/s\n",
         (long long)n, (double)n / best_bulk * 1e-9,
#if defined(MGOPT_NO_SIMD)
         "portable",
#elif defined(__F16C__) && defined(__AVX__)
         "F16C",
#elif defined(__x86_64__) && defined(__GNUC__) && __GNUC__ >= 5 && !defined(__clang__)
         __builtin_cpu_supports("f16c") ? "F16C by CPU dispatch" : "portable",
#else
         "portable",
#endif
         (double)n / best_scalar * 1e-9);
  free(src);
  free(a);
  free(b);
  return 0;
}
