/* tools/keep_memory.h — memory kept for the next job of a process: the tool's policy, which the benchmarks share.

   glibc hands blocks of more than 128 KB back to the system as soon as they
   are freed, and the weights a fusion computes are such blocks: every further
   model of the process (--repeat, `mgopt test` over a folder, a benchmark's
   next run) then pays the page faults of fresh memory again, which on a
   virtual machine cost more than the arithmetic. Freed memory stays in the
   heap instead, up to MGOPT_KEEP_FREED_BYTES; larger blocks (a model's file
   bytes) are still mapped. Elsewhere it does nothing. */
#ifndef MGOPT_KEEP_MEMORY_H
#define MGOPT_KEEP_MEMORY_H
#if defined(__GLIBC__)
#include <malloc.h>
#define MGOPT_KEEP_FREED_BYTES (512 << 20)
static inline void mgopt_keep_freed_memory(void) {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, MGOPT_KEEP_FREED_BYTES);
}
#else
static inline void mgopt_keep_freed_memory(void) {}
#endif
#endif
