/* tests/fuzz/fuzz_onnx.c — libFuzzer harness for the ONNX reader: read, write, read again, compare, write again, free.

   Fuzz:    make fuzz-onnx            (clang -fsanitize=fuzzer,address,undefined)
   Replay:  build with -DMGOPT_FUZZ_REPLAY; run with files to replay, or with
            no argument to replay every file of tests/fuzz/corpus/onnx/.
            Prints "N passed, N failed" (make test runs it). */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 if the input behaves: rejected with a located diagnostic, or accepted
   and then stable under write -> read (equal trees) and write (equal bytes). */
static int fuzz_onnx_check(const uint8_t *data, size_t size, char *why, size_t why_len) {
  mgopt_diag d;
  mgopt_onnx_model *m, *m2;
  mgopt_buf b1, b2;
  char where[256];
  int ok = 1;
  why[0] = 0;
  m = mgopt_onnx_read(size ? (const void *)data : (const void *)"", size, NULL, &d);
  if (!m) {
    if (d.status == MGOPT_OK || d.msg[0] == 0) {
      snprintf(why, why_len, "rejected without a diagnostic");
      return 0;
    }
    if (d.status != MGOPT_ERR_NOMEM && (d.offset < 0 || (size_t)d.offset > size)) {
      snprintf(why, why_len, "diagnostic offset %lld outside the input", (long long)d.offset);
      return 0;
    }
    return 1;
  }
  memset(&b1, 0, sizeof b1);
  memset(&b2, 0, sizeof b2);
  if (mgopt_onnx_write(m, NULL, &b1, NULL, &d) != MGOPT_OK) {
    snprintf(why, why_len, "write failed: %s", d.msg);
    ok = 0;
  } else {
    m2 = mgopt_onnx_read(b1.data, b1.len, NULL, &d);
    if (!m2) {
      snprintf(why, why_len, "re-read failed: %s", d.msg);
      ok = 0;
    } else {
      if (!mgopt_onnx_model_equal(m, m2, where, sizeof where)) {
        snprintf(why, why_len, "round trip differs at %s", where);
        ok = 0;
      }
      if (mgopt_onnx_write(m2, NULL, &b2, NULL, &d) != MGOPT_OK || b1.len != b2.len ||
          memcmp(b1.data, b2.data, b1.len) != 0) {
        snprintf(why, why_len, "second write differs");
        ok = 0;
      }
      mgopt_program_destroy(m2->program);
    }
  }
  mgopt_buf_free(&b1);
  mgopt_buf_free(&b2);
  mgopt_program_destroy(m->program);
  return ok;
}

#ifndef MGOPT_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char why[512];
  if (!fuzz_onnx_check(data, size, why, sizeof why)) {
    fprintf(stderr, "fuzz_onnx: %s\n", why);
    abort();
  }
  return 0;
}
#else
#if defined(__unix__) || defined(__APPLE__)
#include <dirent.h> /* listing the corpus directory */
#define FUZZ_HAVE_DIRENT 1
#endif

static int replay_file(const char *path, int *passed, int *failed) {
  FILE *f = fopen(path, "rb");
  uint8_t *buf = NULL;
  size_t n = 0, cap = 0;
  char why[512];
  if (!f) return 0;
  for (;;) {
    size_t got;
    if (n == cap) {
      uint8_t *nb;
      cap = cap ? cap * 2 : 4096;
      nb = (uint8_t *)realloc(buf, cap);
      if (!nb) break;
      buf = nb;
    }
    got = fread(buf + n, 1, cap - n, f);
    if (got == 0) break;
    n += got;
  }
  fclose(f);
  if (fuzz_onnx_check(buf, n, why, sizeof why)) (*passed)++;
  else {
    printf("%s: %s\n", path, why);
    (*failed)++;
  }
  free(buf);
  return 1;
}

int main(int argc, char **argv) {
  int i, passed = 0, failed = 0;
  if (argc > 1) {
    for (i = 1; i < argc; i++)
      if (!replay_file(argv[i], &passed, &failed)) {
        printf("%s: cannot open\n", argv[i]);
        failed++;
      }
  } else {
#ifdef FUZZ_HAVE_DIRENT
    const char *dir = "tests/fuzz/corpus/onnx";
    DIR *dp = opendir(dir);
    struct dirent *e;
    if (!dp) {
      printf("%s: cannot open (run from the repository root)\n", dir);
      failed++;
    } else {
      while ((e = readdir(dp)) != NULL) {
        char path[1024];
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        replay_file(path, &passed, &failed);
      }
      closedir(dp);
    }
#else
    printf("note: give the corpus files as arguments on this platform\n");
#endif
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
#endif
