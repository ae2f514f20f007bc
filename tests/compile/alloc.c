/* tests/compile/alloc.c — a counting allocator passed to mgopt_program_create,
   and the MGOPT_MALLOC / MGOPT_REALLOC / MGOPT_FREE hooks overridden together.

   Every block the library takes must come from it (the MGOPT_MALLOC family is
   overridden to count calls that bypass it), every realloc/free must state the
   block's true old size, and mgopt_program_destroy must return every byte.
   A failing variant runs the same work with the allocator failing at the k-th
   request, for every k until the work succeeds: no crash, no leak.
   Without an allocator, the hooks must serve every block and get each back. */
#include <stdlib.h>
#include <string.h>

static long alloc_bypass;     /* MGOPT_MALLOC family calls (0 when an allocator is given) */
static long alloc_hook_live;  /* blocks from the hooks not yet freed */
static void *alloc_bypass_malloc(size_t n) {
  void *p = malloc(n);
  alloc_bypass++;
  if (p) alloc_hook_live++;
  return p;
}
static void *alloc_bypass_realloc(void *old, size_t n) {
  void *p = realloc(old, n);
  alloc_bypass++;
  if (p && !old) alloc_hook_live++;
  return p;
}
static void alloc_bypass_free(void *p) {
  if (p) {
    alloc_bypass++;
    alloc_hook_live--;
  }
  free(p);
}
#define MGOPT_MALLOC(sz) alloc_bypass_malloc(sz)
#define MGOPT_REALLOC(p, sz) alloc_bypass_realloc(p, sz)
#define MGOPT_FREE(p) alloc_bypass_free(p)
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include "smoke.h"

typedef struct counter {
  size_t live_bytes, peak_bytes;
  long live_blocks, requests, bad_old_size;
  long fail_at; /* fail the request with this number (1-based); 0 = never */
  long failed;
} counter;

/* A 16-byte header in front of every block holds its size, so the old size
   the library passes can be checked. */
#define ALLOC_HDR 16

static void *count_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
  counter *c = (counter *)ctx;
  unsigned char *base = ptr ? (unsigned char *)ptr - ALLOC_HDR : NULL;
  size_t stored = 0;
  if (base) {
    memcpy(&stored, base, sizeof stored);
    if (stored != old_size) c->bad_old_size++;
  } else if (old_size != 0) {
    c->bad_old_size++;
  }
  if (new_size == 0) {
    if (base) {
      c->live_bytes -= stored;
      c->live_blocks--;
      free(base);
    }
    return NULL;
  }
  c->requests++;
  if (c->fail_at && c->requests == c->fail_at) {
    c->failed++;
    return NULL;
  }
  if (new_size > (size_t)-1 - ALLOC_HDR) return NULL;
  base = (unsigned char *)realloc(base, new_size + ALLOC_HDR);
  if (!base) return NULL;
  memcpy(base, &new_size, sizeof new_size);
  if (!ptr) c->live_blocks++;
  c->live_bytes = c->live_bytes - stored + new_size;
  if (c->live_bytes > c->peak_bytes) c->peak_bytes = c->live_bytes;
  return base + ALLOC_HDR;
}

static void test_alloc_counts_and_frees(void) {
  counter c;
  mgopt_allocator a;
  memset(&c, 0, sizeof c);
  a.realloc = count_realloc;
  a.ctx = &c;
  alloc_bypass = 0;
  smoke_run(&a);
  CHECK(c.requests > 0);
  CHECK(c.peak_bytes > 0);
  CHECK_EQ_INT(c.live_bytes, 0);
  CHECK_EQ_INT(c.live_blocks, 0);
  CHECK_EQ_INT(c.bad_old_size, 0);
  CHECK_EQ_INT(alloc_bypass, 0);
}

/* The .mil parser takes its allocator from the parse options. */
static void test_alloc_parse(void) {
  static const char text[] =
      "main(%x: (2, 4, fp32)) {\n"
      "  %y: (2, 4, fp32) = relu(x=%x)\n"
      "} -> (%y)\n";
  counter c;
  mgopt_allocator a;
  mgopt_parse_options o;
  mgopt_diag d;
  mgopt_program *p;
  memset(&c, 0, sizeof c);
  memset(&o, 0, sizeof o);
  a.realloc = count_realloc;
  a.ctx = &c;
  o.alloc = &a;
  alloc_bypass = 0;
  mgopt_diag_clear(&d);
  if (mgopt_mil_parse(text, sizeof text - 1, &o, &p, &d) != MGOPT_OK) p = NULL;
  if (!p && d.status == MGOPT_ERR_UNSUPPORTED) {
    printf("note: test_alloc_parse skipped: mgopt_mil_parse is not implemented yet\n");
    return;
  }
  REQUIRE(p != NULL);
  CHECK_EQ_INT(mgopt_program_op_count(p), 1);
  CHECK(c.live_blocks > 0);
  mgopt_program_destroy(p);
  CHECK_EQ_INT(c.live_bytes, 0);
  CHECK_EQ_INT(c.live_blocks, 0);
  CHECK_EQ_INT(c.bad_old_size, 0);
  CHECK_EQ_INT(alloc_bypass, 0);
}

/* Builds, verifies and runs dead_code_elimination; returns 1 when all succeeded. */
static int alloc_work(const mgopt_allocator *a) {
  mgopt_program *p = mgopt_program_create(a);
  mgopt_diag d;
  int ok = 0;
  if (!p) return 0;
  if (smoke_build(p) && mgopt_program_status(p) == MGOPT_OK &&
      mgopt_program_verify(p, &d) == MGOPT_OK &&
      mgopt_pipeline_run(p, mgopt_builtin_registry(), "dead_code_elimination", NULL, &d) == MGOPT_OK)
    ok = 1;
  mgopt_program_destroy(p);
  return ok;
}

static void test_alloc_failures(void) {
  counter c;
  mgopt_allocator a;
  long k, leaks = 0, bad = 0;
  int ok = 0;
  a.realloc = count_realloc;
  a.ctx = &c;
  for (k = 1; k < 10000 && !ok; k++) {
    memset(&c, 0, sizeof c);
    c.fail_at = k;
    ok = alloc_work(&a);
    if (c.live_blocks != 0) leaks++;
    if (c.bad_old_size != 0) bad++;
    if (!ok) CHECK(c.failed == 1);
  }
  CHECK(ok);
  printf("%ld allocation failures injected\n", k - 2);
  CHECK(k > 2); /* at least one failure was injected and survived */
  CHECK_EQ_INT(leaks, 0);
  CHECK_EQ_INT(bad, 0);
}

/* MGOPT_MALLOC family: used when no allocator is given, and balanced. */
static void test_hooks_used_and_balanced(void) {
  mgopt_program *p;
  alloc_bypass = alloc_hook_live = 0;
  p = mgopt_program_create(NULL);
  REQUIRE(p != NULL);
  CHECK(alloc_bypass > 0);
  CHECK(alloc_hook_live > 0);
  CHECK(smoke_build(p) != NULL);
  mgopt_program_destroy(p);
  CHECK_EQ_INT(alloc_hook_live, 0);
  smoke_run(NULL);
  CHECK_EQ_INT(alloc_hook_live, 0);
}

static const test_case tests[] = {
    SMOKE_TESTS,
    TEST(test_alloc_counts_and_frees),
    TEST(test_alloc_parse),
    TEST(test_alloc_failures),
    TEST(test_hooks_used_and_balanced),
};
TEST_MAIN(tests)
