/* tests/bench/bench_quant.c — linear_quantize_weights throughput: int8 per-channel quantization of one 16M-element fp32 weight.

   usage: bench_quant [ROWS COLS [PIPELINE]]   (default 4096 4096, 'linear_quantize_weights{dtype=int8}')

   Builds main(%x: (1, COLS)) { linear(x, weight=const (ROWS, COLS)) } with
   deterministic pseudo-random weights, runs the pass alone (verification
   off) on a fresh program five times (freed memory kept for the next, as
   the tool keeps it) and prints the best time and the
   throughput in G elements/s (weight elements per second). A measurement,
   never a test: run it with `make bench-quant`. */
#define _POSIX_C_SOURCE 199309L
#define MGOPT_IMPLEMENTATION
#include "bench.h"
#include "mgopt.h"
#include "mgopt_passes.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* main(%x: (1, cols)) -> linear(x, weight=w) with w (rows, cols) borrowed from data. */
static mgopt_program *build(int64_t rows, int64_t cols, const float *data) {
  mgopt_program *p = mgopt_program_create(NULL);
  mgopt_function *f;
  mgopt_type t;
  mgopt_value *x, *w, *vals[2];
  mgopt_op *op;
  int64_t xs[2], ws[2];
  static const char *const slots[2] = {"x", "weight"};
  if (!p) return NULL;
  xs[0] = 1;
  xs[1] = cols;
  ws[0] = rows;
  ws[1] = cols;
  f = mgopt_function_new(p, "main");
  memset(&t, 0, sizeof t);
  mgopt_type_make_static(p, &t, MGOPT_DT_FP32, 2, xs);
  x = mgopt_block_add_arg(f->body, "x", &t);
  w = mgopt_build_const(p, f->body, NULL, "w",
                        mgopt_tensor_new_borrowed(p, MGOPT_DT_FP32, 2, ws, data, (size_t)(rows * cols) * 4));
  vals[0] = x;
  vals[1] = w;
  op = mgopt_build_op(p, f->body, NULL, "linear", "y", 2, slots, vals, 1);
  if (!w || !op || mgopt_op_infer(p, op, NULL) != MGOPT_OK || mgopt_block_add_output(f->body, op->outs[0]) != MGOPT_OK) {
    mgopt_program_destroy(p);
    return NULL;
  }
  return p;
}

int main(int argc, char **argv) {
  int64_t rows = argc > 2 ? atoll(argv[1]) : 4096, cols = argc > 2 ? atoll(argv[2]) : 4096, i, n;
  const char *pipe = argc > 3 ? argv[3] : "linear_quantize_weights{dtype=int8}";
  float *data;
  double best = 1e30;
  uint32_t s = 1u;
  int r;
  if (rows <= 0 || cols <= 0) return 2;
  bench_keep_freed_memory();
  n = rows * cols;
  data = (float *)malloc((size_t)n * sizeof(float));
  if (!data) return 1;
  for (i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    data[i] = (float)((double)(s >> 8) / 16777216.0 - 0.5) * 0.2f;
  }
  for (r = 0; r < 5; r++) {
    mgopt_program *p = build(rows, cols, data);
    mgopt_diag d;
    double t0, t;
    if (!p) return 1;
    mgopt_diag_clear(&d);
    t0 = bench_wall();
    if (mgopt_pipeline_run(p, mgopt_builtin_registry(), pipe, NULL, &d) != MGOPT_OK) {
      fprintf(stderr, "bench_quant: %s\n", d.msg);
      return 1;
    }
    t = bench_wall() - t0;
    if (t < best) best = t;
    mgopt_program_destroy(p);
  }
  printf("%s on a (%lld, %lld) fp32 weight: best of 5 %.3f ms, %.2f G elements/s\n", pipe, (long long)rows,
         (long long)cols, best * 1e3, (double)n / best * 1e-9);
  free(data);
  return 0;
}
