/* tests/bench/bench.h — the benchmarks' clocks: wall time and this process's CPU time, in seconds.
   Include it after defining _POSIX_C_SOURCE (clock_gettime). */
#ifndef MGOPT_BENCH_H
#define MGOPT_BENCH_H
#include <time.h>

static inline double bench_clock(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
/* Wall time: what a user waits for. */
static inline double bench_wall(void) { return bench_clock(CLOCK_MONOTONIC); }
/* CPU time of the whole process: what a pass costs, whatever else the machine runs. */
static inline double bench_cpu(void) { return bench_clock(CLOCK_PROCESS_CPUTIME_ID); }

/* Freed memory stays in the heap for the next run, as the tool keeps it: a
   benchmark that builds a fresh program per run would otherwise time the
   page faults of fresh memory instead of the kernel. */
#include "../../tools/keep_memory.h"
static inline void bench_keep_freed_memory(void) { mgopt_keep_freed_memory(); }

#endif
