/* tests/bench/bench_palettize.c — time of 4-bit k-means palettization of a 16 M-element fp32 weight
   (one LUT, per_tensor), with the mean squared error against the weight. Not a test: prints figures.
   Usage: bench_palettize [elements] [nbits] [repeats] */
#define _POSIX_C_SOURCE 199309L
#define MGOPT_IMPLEMENTATION
#include "bench.h"
#include "mgopt.h"
#include "mgopt_passes.h"
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : (int64_t)1 << 24, i, shape[2];
  int nbits = argc > 2 ? atoi(argv[2]) : 4, reps = argc > 3 ? atoi(argv[3]) : 3, r, j;
  float *w = (float *)malloc((size_t)n * sizeof(float));
  uint64_t s = 1;
  double best = 1e30, best_cpu = 1e30, mse = 0.0;
  mgopt__pal_cfg c;
  mgopt__pal_out o;
  if (!w) return 1;
  bench_keep_freed_memory();
  for (i = 0; i < n; i++) { /* bell-shaped values like trained weights */
    double v = 0.0;
    for (j = 0; j < 4; j++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      v += (double)(s >> 40) / 16777216.0;
    }
    w[i] = (float)((v - 2.0) * 0.05);
  }
  shape[0] = n / 1024;
  shape[1] = 1024;
  memset(&c, 0, sizeof c);
  c.mode = MGOPT__PAL_KMEANS;
  c.nbits = nbits;
  c.cluster_dim = 1;
  for (r = 0; r < reps; r++) {
    double t0 = bench_wall(), t;
    clock_t c0 = clock();
    if (mgopt__kp_palettize(&c, w, 2, shape, &o) != MGOPT__K_OK) return 1;
    t = bench_wall() - t0;
    if (t < best) best = t;
    if ((double)(clock() - c0) / CLOCKS_PER_SEC < best_cpu) best_cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
    if (r + 1 < reps) mgopt__kp_free(&o);
  }
  for (i = 0; i < n; i++) {
    double e = (double)w[i] - o.lut[o.idx[i]];
    mse += e * e;
  }
  printf("palettize kmeans nbits=%d elements=%lld: best %.3f s wall, %.3f s cpu (%.1f M elements/s), rmse %.3g\n",
         nbits, (long long)n, best, best_cpu, (double)n / best * 1e-6, sqrt(mse / (double)n));
  mgopt__kp_free(&o);
  free(w);
  return 0;
}
