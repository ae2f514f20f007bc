/* tests/fuzz/fuzz_mil.c — libFuzzer harness for the .mil parser, printer, verifier and the `default` pipeline.

   Each input is parsed; a program is printed, the text parsed again and
   printed again, and the two prints must be identical (print is a fixed
   point of parse). A program that verifies then runs the `default` pipeline
   with the verifier after every pass: a pass may refuse a graph with an
   error status, but must never crash, leave a program the verifier rejects
   (after success or failure), or produce one whose print does not parse
   back, verify and print the same. Anything else — a crash, a sanitizer
   report, a broken invariant — is a bug.

   make fuzz-mil          builds build/fuzz_mil with clang -fsanitize=fuzzer,address,undefined
   build/fuzz_mil tests/fuzz/corpus/mil -max_total_time=600

   Built with -DMGOPT_FUZZ_REPLAY it is a plain program instead: it runs every
   file named on the command line (or, with none, every file of the directory
   MGOPT_FUZZ_CORPUS) and prints "N passed, N failed", as tests/run.sh expects.
   With -DMGOPT_FUZZ_STRICT a pipeline error other than a limit is a bug too
   (to look for passes that give up where they should not). */
#if defined(MGOPT_FUZZ_REPLAY) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* opendir/readdir for the corpus directory */
#endif
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* print(p) must parse back to a program that verifies (when `verifies`) and
   prints the same. 0 when it does, 1 on a bug (reported on stderr). */
static int fuzz_mil_roundtrip(mgopt_program *p, const mgopt_parse_options *o, int verifies, const char *when) {
  mgopt_diag d;
  mgopt_program *q;
  mgopt_buf a, b;
  int bad = 0;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  if (mgopt_mil_print(p, NULL, &a) != MGOPT_OK) {
    fprintf(stderr, "fuzz_mil: %s: print failed\n", when);
    bad = 1;
  } else {
    if (mgopt_mil_parse(a.data, a.len, o, &q, &d) != MGOPT_OK) q = NULL;
    if (!q) {
      fprintf(stderr, "fuzz_mil: %s: printed text does not parse: %d:%d: %s\n%s\n", when, d.line, d.col, d.msg,
              a.data);
      bad = 1;
    } else {
      if (mgopt_mil_print(q, NULL, &b) != MGOPT_OK || a.len != b.len || memcmp(a.data, b.data, a.len) != 0) {
        fprintf(stderr, "fuzz_mil: %s: print is not a fixed point\n--- first\n%s\n--- second\n%s\n", when, a.data,
                b.data ? b.data : "(null)");
        bad = 1;
      } else if (verifies && mgopt_program_verify(q, &d) != MGOPT_OK) {
        fprintf(stderr, "fuzz_mil: %s: the re-parsed program does not verify: %s\n%s\n", when, d.msg, a.data);
        bad = 1;
      }
      mgopt_program_destroy(q);
    }
  }
  mgopt_buf_free(&a);
  mgopt_buf_free(&b);
  return bad;
}

/* Returns 0 when the input behaved (an error, or a program that survives the
   checks above), 1 on a bug. */
static int fuzz_mil_one(const uint8_t *data, size_t size) {
  mgopt_diag d;
  mgopt_parse_options o;
  mgopt_pipeline_options ro;
  mgopt_program *p;
  mgopt_status s;
  int bad;
  memset(&o, 0, sizeof o);
  o.max_elements = 1 << 20;
  if (mgopt_mil_parse((const char *)data, size, &o, &p, &d) != MGOPT_OK) p = NULL;
  if (!p) {
    /* every error names a place inside the text */
    if (d.line < 1 || d.col < 1 || d.status == MGOPT_OK || d.offset < 0 || (uint64_t)d.offset > size) {
      fprintf(stderr, "fuzz_mil: bad diagnostic: status %d at %d:%d offset %lld\n", (int)d.status, d.line,
              d.col, (long long)d.offset);
      return 1;
    }
    return 0;
  }
  bad = fuzz_mil_roundtrip(p, &o, 0, "parsed input");
  if (bad || mgopt_program_verify(p, &d) != MGOPT_OK) {
    mgopt_program_destroy(p);
    return bad;
  }
  memset(&ro, 0, sizeof ro);
  ro.verify_each = 1;
  mgopt_diag_clear(&d);
  s = mgopt_pipeline_run(p, mgopt_builtin_registry(), "default", &ro, &d);
  if (s == MGOPT_ERR_VERIFY) {
    fprintf(stderr, "fuzz_mil: a pass left a program the verifier rejects: %s\n", d.msg);
    bad = 1;
  } else if (s != MGOPT_OK) {
#ifdef MGOPT_FUZZ_STRICT
    if (s != MGOPT_ERR_LIMIT && s != MGOPT_ERR_NOMEM) {
      fprintf(stderr, "fuzz_mil: the pipeline failed (%s): %s\n", mgopt_status_str(s), d.msg);
      bad = 1;
    }
#endif
    /* a pass that gives up must still leave a valid program */
    if (!bad && s != MGOPT_ERR_NOMEM && mgopt_program_verify(p, &d) != MGOPT_OK) {
      fprintf(stderr, "fuzz_mil: after a pipeline error (%s) the program does not verify: %s\n",
              mgopt_status_str(s), d.msg);
      bad = 1;
    }
  }
  if (!bad && s != MGOPT_ERR_NOMEM) bad = fuzz_mil_roundtrip(p, &o, 1, "after the default pipeline");
  mgopt_program_destroy(p);
  return bad;
}

#ifndef MGOPT_FUZZ_REPLAY

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (fuzz_mil_one(data, size)) abort(); /* a real bug: let the fuzzer keep the input */
  return 0;
}

#else /* MGOPT_FUZZ_REPLAY */

#include <dirent.h>

static int fuzz_mil_file(const char *path) {
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
  /* an exact-size copy, so sanitizers see any read past the end */
  {
    uint8_t *exact = (uint8_t *)malloc(n ? n : 1);
    if (!exact) {
      free(buf);
      return 1;
    }
    if (n) memcpy(exact, buf, n);
    free(buf);
    bad = fuzz_mil_one(exact, n);
    free(exact);
  }
  if (bad) printf("FAIL %s\n", path);
  return bad;
}

int main(int argc, char **argv) {
  int i, passed = 0, failed = 0;
  if (argc > 1) {
    for (i = 1; i < argc; i++) {
      if (fuzz_mil_file(argv[i])) failed++;
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
        if (fuzz_mil_file(path)) failed++;
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
