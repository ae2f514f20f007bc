/* tests/compile/hooks.c — MGOPT_MALLOC, MGOPT_REALLOC and MGOPT_FREE all
   overridden: a program created without an allocator must use them for every
   block and return every block by mgopt_program_destroy. */
#include <stdlib.h>
#include <stddef.h>

static long hooks_live;     /* blocks handed out and not yet freed */
static long hooks_mallocs;  /* calls of each hook */
static long hooks_reallocs;
static long hooks_frees;

static void *hooks_malloc(size_t n) {
  void *p = malloc(n);
  hooks_mallocs++;
  if (p) hooks_live++;
  return p;
}
static void *hooks_realloc(void *old, size_t n) {
  void *p = realloc(old, n);
  hooks_reallocs++;
  if (p && !old) hooks_live++;
  return p;
}
static void hooks_free(void *p) {
  hooks_frees++;
  if (p) hooks_live--;
  free(p);
}

#define MGOPT_MALLOC(sz) hooks_malloc(sz)
#define MGOPT_REALLOC(p, sz) hooks_realloc(p, sz)
#define MGOPT_FREE(p) hooks_free(p)
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include "smoke.h"

static void test_hooks_used_and_balanced(void) {
  mgopt_program *p;
  hooks_live = hooks_mallocs = hooks_reallocs = hooks_frees = 0;
  p = mgopt_program_create(NULL);
  REQUIRE(p != NULL);
  CHECK(hooks_mallocs + hooks_reallocs > 0);
  CHECK(hooks_live > 0);
  CHECK(smoke_build(p) != NULL);
  mgopt_program_destroy(p);
  CHECK_EQ_INT(hooks_live, 0);
  CHECK(hooks_frees > 0);
}

static void test_hooks_smoke_pipeline(void) {
  hooks_live = 0;
  smoke_run(NULL);
  CHECK_EQ_INT(hooks_live, 0);
}

static const test_case tests[] = {
    SMOKE_TESTS,
    TEST(test_hooks_used_and_balanced),
    TEST(test_hooks_smoke_pipeline),
};
TEST_MAIN(tests)
