/* tests/fuzz/fuzz_eval.c — libFuzzer harness for the evaluator: random valid programs evaluated before and after the `default` pipeline.

   Each input steers the differential tester's generator (tests/difftest/
   gen.c) choice by choice: its first byte picks a pass's pattern template
   (or none), the rest are the generator's choices (two bytes each; past the
   end a PRNG seeded with the input's hash takes over). The program and
   random inputs (from the same hash) go through tests/difftest/check.c:
   mgopt_eval before, the `default` pipeline with the verifier after every
   pass, mgopt_eval after, outputs compared within the pipeline's tolerance.
   A crash, a sanitizer report, a leak or a mismatch (abort) is a bug; a
   program the evaluator declines (a limit, an op without a kernel) is not.

   make fuzz-eval        builds build/fuzz_eval with clang -fsanitize=fuzzer,address,undefined
   build/fuzz_eval -max_total_time=600 CORPUS_DIR tests/fuzz/corpus/eval

   Built with -DMGOPT_FUZZ_REPLAY it is a plain program instead: it runs every
   file named on the command line (or, with none, every file of the directory
   MGOPT_FUZZ_CORPUS) and prints "N passed, N failed", as tests/run.sh expects. */
#if defined(MGOPT_FUZZ_REPLAY) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* opendir/readdir for the corpus directory */
#endif
#include "../difftest/check.h"
#include "../difftest/gen.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 0 when the input behaved, 1 on a mismatch (reported on stderr with the program). */
static int fuzz_eval_one(const uint8_t *data, size_t size) {
  int ntmpl = 0, rc;
  const char *pass;
  uint64_t h = 0x84222325CBF29CE4ull;
  size_t i;
  dt_text text = {NULL, 0, 0};
  dt_tol tol = dt_tol_of("default");
  dt_result res;
  if (size < 1) return 0;
  while (dt_template_pass(ntmpl)) ntmpl++;
  pass = dt_template_pass(data[0] % (ntmpl + 1)); /* NULL: a plain random program */
  for (i = 0; i < size; i++) h = (h ^ data[i]) * 0x100000001B3ull;
  if (dt_generate_bytes(data + 1, size - 1, pass, tol.smooth, &text) < 0) {
    dt_text_free(&text);
    return 0;
  }
  rc = dt_check(text.data, "default", &tol, h, &res);
  if (rc == DT_MISMATCH) fprintf(stderr, "fuzz_eval: default: %s\n%s\n", res.why, text.data);
  dt_text_free(&text);
  return rc == DT_MISMATCH;
}

#ifndef MGOPT_FUZZ_REPLAY

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (fuzz_eval_one(data, size)) abort(); /* a real bug: let the fuzzer keep the input */
  return 0;
}

#else /* MGOPT_FUZZ_REPLAY */

#include <dirent.h>

static int fuzz_eval_file(const char *path) {
  FILE *f = fopen(path, "rb");
  uint8_t *buf = NULL;
  size_t n = 0, cap = 0;
  int bad;
  if (!f) {
    printf("%s: cannot open\n", path);
    return 1;
  }
  for (;;) {
    size_t got;
    if (n == cap) {
      uint8_t *nb;
      cap = cap ? cap * 2 : 4096;
      nb = (uint8_t *)realloc(buf, cap);
      if (!nb) {
        free(buf);
        fclose(f);
        return 1;
      }
      buf = nb;
    }
    got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  fclose(f);
  bad = fuzz_eval_one(buf, n);
  free(buf);
  if (bad) printf("FAIL %s\n", path);
  return bad;
}

int main(int argc, char **argv) {
  int i, passed = 0, failed = 0;
  if (argc > 1) {
    for (i = 1; i < argc; i++) {
      if (fuzz_eval_file(argv[i])) failed++;
      else passed++;
    }
  } else {
#ifdef MGOPT_FUZZ_CORPUS
    DIR *dir = opendir(MGOPT_FUZZ_CORPUS);
    struct dirent *e;
    if (!dir) {
      printf("cannot open %s\n", MGOPT_FUZZ_CORPUS);
      failed++;
    } else {
      while ((e = readdir(dir)) != NULL) {
        char path[4096];
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", MGOPT_FUZZ_CORPUS, e->d_name);
        if (fuzz_eval_file(path)) failed++;
        else passed++;
      }
      closedir(dir);
    }
#endif
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

#endif /* MGOPT_FUZZ_REPLAY */
