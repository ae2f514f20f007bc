/* tests/bench/write_floor.c — the least any in-process optimizer can spend writing a model.

   usage: write_floor IN OUT [RUNS]

   Loads IN into memory (untimed), then RUNS times writes those bytes to OUT
   and prints the median seconds of three ways to do it:
     overwrite  open an existing OUT, write over it, cut it to length (what
                the mgopt tool does when OUT exists)
     truncate   open OUT with O_TRUNC and write (what most writers do)
     fresh      unlink OUT, create it, write (a first run)
   The source is a warm heap buffer, so these are floors: no parsing, no
   optimizing, no reading of the input. An optimizer whose output is as large
   as its input cannot finish faster than the floor of the way it writes;
   tests/bench/onnx_e2e prints the floor beside ONNX Runtime's time to show
   how large a speed-up the file system leaves room for. POSIX only. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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

/* mode 0 overwrite, 1 truncate, 2 fresh; seconds or -1 */
static double one(const char *out, const char *buf, size_t n, int mode) {
  double t0 = now_seconds();
  int fd, ok;
  if (mode == 2) unlink(out);
  fd = open(out, O_WRONLY | O_CREAT | (mode == 1 ? O_TRUNC : 0), 0666);
  if (fd < 0) return -1;
  ok = write_all(fd, buf, n);
  if (ok && mode == 0) ok = ftruncate(fd, (off_t)n) == 0;
  if (close(fd) != 0) ok = 0;
  return ok ? now_seconds() - t0 : -1;
}

int main(int argc, char **argv) {
  static const char *names[3] = {"overwrite", "truncate", "fresh"};
  FILE *f;
  char *buf;
  double *t;
  long len;
  int runs = argc > 3 ? atoi(argv[3]) : 11, mode, r;
  if (argc < 3 || runs < 1) {
    fprintf(stderr, "usage: write_floor IN OUT [RUNS]\n");
    return 2;
  }
  f = fopen(argv[1], "rb");
  if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fprintf(stderr, "write_floor: cannot read %s\n", argv[1]);
    return 1;
  }
  buf = (char *)malloc((size_t)len + 1);
  t = (double *)malloc(sizeof(double) * (size_t)runs);
  if (!buf || !t || fread(buf, 1, (size_t)len, f) != (size_t)len) {
    fprintf(stderr, "write_floor: cannot read %s\n", argv[1]);
    return 1;
  }
  fclose(f);
  for (mode = 0; mode < 3; mode++) {
    if (one(argv[2], buf, (size_t)len, mode) < 0) { /* warm-up, and OUT exists afterwards */
      fprintf(stderr, "write_floor: cannot write %s\n", argv[2]);
      return 1;
    }
    for (r = 0; r < runs; r++)
      if ((t[r] = one(argv[2], buf, (size_t)len, mode)) < 0) {
        fprintf(stderr, "write_floor: cannot write %s\n", argv[2]);
        return 1;
      }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    printf("%s %.6f\n", names[mode], t[runs / 2]);
  }
  free(t);
  free(buf);
  return 0;
}
