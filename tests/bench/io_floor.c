/* tests/bench/io_floor.c — the least time an in-process optimizer can spend on a model's file I/O.

   usage: io_floor IN OUT [RUNS]

   Prints the median seconds (of RUNS, after one warm-up) of ways to turn IN
   into an OUT of the same bytes, each inside this process, each with nothing
   between reading and writing (no parsing, no optimizing):
     copy        open IN, copy_file_range it into OUT (Linux; "-" elsewhere)
     read-write  open IN, read it into a heap buffer (kept warm across runs),
                 write the buffer to OUT
     write       write a warm heap buffer to OUT, IN untouched: a bound no
                 writer can beat
     truncate    write, but through O_TRUNC (what most writers do)
     fresh       write, but unlink OUT and create it again (a first run)
   The first three overwrite the existing OUT and cut it to length, as the
   mgopt tool does. An optimizer whose output is about as large as its input
   cannot finish faster than min(copy, read-write); tests/bench/onnx_e2e
   prints that floor beside ONNX Runtime's time. POSIX. */
#if defined(__linux__)
#define _GNU_SOURCE /* copy_file_range */
#else
#define _POSIX_C_SOURCE 200809L
#endif
#include "bench.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { COPY, READ_WRITE, WRITE, TRUNCATE, FRESH, NMODES };
static const char *names[NMODES] = {"copy", "read-write", "write", "truncate", "fresh"};

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) return 0;
    p += w;
    n -= (size_t)w;
  }
  return 1;
}

static int read_all(int fd, char *p, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r <= 0) return 0;
    p += r;
    n -= (size_t)r;
  }
  return 1;
}

/* One run of mode: seconds, or -1 when it failed (or is not available). */
static double one(int mode, const char *in, const char *out, char *buf, size_t n) {
  double t0 = bench_wall();
  int fd, ifd = -1, ok = 1;
  if (mode == FRESH) unlink(out);
  if (mode == COPY || mode == READ_WRITE) {
    struct stat st;
    ifd = open(in, O_RDONLY);
    if (ifd < 0 || fstat(ifd, &st) != 0 || (size_t)st.st_size != n) ok = 0;
  }
  fd = open(out, O_WRONLY | O_CREAT | (mode == TRUNCATE ? O_TRUNC : 0), 0666);
  if (fd < 0) ok = 0;
  if (ok && mode == COPY) {
#if defined(__linux__)
    size_t left = n;
    while (ok && left > 0) {
      ssize_t c = copy_file_range(ifd, NULL, fd, NULL, left, 0);
      if (c <= 0) ok = 0;
      else left -= (size_t)c;
    }
#else
    ok = 0;
#endif
  } else if (ok) {
    if (mode == READ_WRITE) ok = read_all(ifd, buf, n);
    ok = ok && write_all(fd, buf, n);
  }
  if (ok && mode != TRUNCATE && mode != FRESH) ok = ftruncate(fd, (off_t)n) == 0;
  if (fd >= 0 && close(fd) != 0) ok = 0;
  if (ifd >= 0) close(ifd);
  return ok ? bench_wall() - t0 : -1;
}

int main(int argc, char **argv) {
  FILE *f;
  char *buf;
  double *t;
  long len;
  int runs = argc > 3 ? atoi(argv[3]) : 11, mode, r;
  if (argc < 3 || runs < 1) {
    fprintf(stderr, "usage: io_floor IN OUT [RUNS]\n");
    return 2;
  }
  f = fopen(argv[1], "rb");
  if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fprintf(stderr, "io_floor: cannot read %s\n", argv[1]);
    return 1;
  }
  buf = (char *)malloc((size_t)len + 1);
  t = (double *)malloc(sizeof(double) * (size_t)runs);
  if (!buf || !t || fread(buf, 1, (size_t)len, f) != (size_t)len) {
    fprintf(stderr, "io_floor: cannot read %s\n", argv[1]);
    return 1;
  }
  fclose(f);
  for (mode = 0; mode < NMODES; mode++) {
    int ok = one(mode, argv[1], argv[2], buf, (size_t)len) >= 0; /* warm-up; OUT exists afterwards */
    for (r = 0; ok && r < runs; r++) ok = (t[r] = one(mode, argv[1], argv[2], buf, (size_t)len)) >= 0;
    if (!ok) {
      printf("%s -\n", names[mode]);
      continue;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    printf("%s %.6f\n", names[mode], t[runs / 2]);
  }
  free(t);
  free(buf);
  return 0;
}
