/* tests/unit/pass_harness.h — what the pass tests share: parse .mil text, run a pipeline on the built-in registry, print a program.

   Included after mgopt.h, mgopt_passes.h and harness.h by tests/unit/test_passes_*.c;
   the helpers are static inline, so a test file that uses only some of them
   compiles without warnings. */
#ifndef MGOPT_TEST_PASS_HARNESS_H
#define MGOPT_TEST_PASS_HARNESS_H
#include <stdio.h>
#include <stdlib.h> /* malloc for printed programs; the caller frees them */
#include <string.h>

/* The program of .mil text, or NULL (the parse error printed). */
static inline mgopt_program *parse(const char *text) {
  mgopt_diag d;
  mgopt_program *p = NULL;
  mgopt_mil_parse(text, strlen(text), NULL, &p, &d);
  if (!p) printf("parse error %d:%d: %s\n", d.line, d.col, d.msg);
  return p;
}

/* Runs pipeline on the built-in registry, verifying after each pass; a failure is printed. */
static inline mgopt_status run(mgopt_program *p, const char *pipeline) {
  mgopt_diag d;
  mgopt_pipeline_options ro;
  mgopt_status s;
  memset(&ro, 0, sizeof ro);
  ro.verify_each = 1;
  s = mgopt_pipeline_run(p, mgopt_builtin_registry(), pipeline, &ro, &d);
  if (s != MGOPT_OK) printf("pipeline %s: %s\n", pipeline, d.msg);
  return s;
}

/* The printed program (the caller frees it), NULL when printing fails. */
static inline char *print(mgopt_program *p) {
  mgopt_buf b;
  char *s;
  memset(&b, 0, sizeof b);
  if (mgopt_mil_print(p, NULL, &b) != MGOPT_OK) return NULL;
  s = (char *)malloc(b.len + 1);
  if (s) {
    memcpy(s, b.data, b.len);
    s[b.len] = 0;
  }
  mgopt_buf_free(&b);
  return s;
}

#endif /* MGOPT_TEST_PASS_HARNESS_H */
