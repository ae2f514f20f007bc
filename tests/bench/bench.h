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

#endif
