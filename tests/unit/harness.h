/* tests/unit/harness.h — a small test harness: an explicit test table, CHECK continues, REQUIRE returns.

   Each tests/unit/test_*.c is its own program:

       #include "harness.h"
       static void test_arena(void) { CHECK(1 + 1 == 2); REQUIRE(p != NULL); ... }
       static const test_case tests[] = { TEST(test_arena), ... };
       TEST_MAIN(tests)

   The program prints one line per failure (file:line and both sides for the
   _EQ forms) and a last line "N passed, N failed"; exit status 1 on failure.
   A test passes when none of its checks failed. Run one test by name with
   argv[1]. The implementation of mgopt is compiled in by the test file
   (#define MGOPT_IMPLEMENTATION before including the headers). */
#ifndef MGOPT_TEST_HARNESS_H
#define MGOPT_TEST_HARNESS_H
#include <stdio.h>
#include <string.h>
#include <stdint.h>

/* Little-endian bytes (ONNX's order for raw_data and fixed-width fields) to
   and from host values, by shifts: right on hosts of either byte order. */
static inline uint64_t harness_le(const void *p, int n) {
  const unsigned char *b = (const unsigned char *)p;
  uint64_t v = 0;
  while (n-- > 0) v = v << 8 | b[n];
  return v;
}
static inline float harness_le_f32(const void *p) {
  uint32_t u = (uint32_t)harness_le(p, 4);
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline double harness_le_f64(const void *p) {
  uint64_t u = harness_le(p, 8);
  double f;
  memcpy(&f, &u, 8);
  return f;
}
static inline void harness_put_le(void *p, uint64_t v, int n) {
  unsigned char *b = (unsigned char *)p;
  int i;
  for (i = 0; i < n; i++) b[i] = (unsigned char)(v >> (8 * i));
}
static inline void harness_put_le_f32(void *p, float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  harness_put_le(p, u, 4);
}

typedef struct test_case {
  const char *name;
  void (*fn)(void);
} test_case;

static int harness_failed_checks;

#define TEST(fn) { #fn, fn }

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      printf("%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);      \
      harness_failed_checks++;                                             \
    }                                                                      \
  } while (0)

#define REQUIRE(cond)                                                      \
  do {                                                                     \
    if (!(cond)) {                                                         \
      printf("%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond);    \
      harness_failed_checks++;                                             \
      return;                                                              \
    }                                                                      \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                 \
  do {                                                                     \
    long long harness_a = (long long)(a), harness_b = (long long)(b);      \
    if (harness_a != harness_b) {                                          \
      printf("%s:%d: CHECK_EQ_INT failed: %s == %s (%lld vs %lld)\n",      \
             __FILE__, __LINE__, #a, #b, harness_a, harness_b);            \
      harness_failed_checks++;                                             \
    }                                                                      \
  } while (0)

#define CHECK_EQ_STR(a, b)                                                 \
  do {                                                                     \
    const char *harness_a = (a), *harness_b = (b);                         \
    if (!harness_a || !harness_b || strcmp(harness_a, harness_b) != 0) {   \
      printf("%s:%d: CHECK_EQ_STR failed: %s == %s\n  left:  %s\n  right: %s\n", \
             __FILE__, __LINE__, #a, #b, harness_a ? harness_a : "(null)", \
             harness_b ? harness_b : "(null)");                            \
      harness_failed_checks++;                                             \
    }                                                                      \
  } while (0)

static int harness_run(const test_case *tests, int n, int argc, char **argv) {
  int i, passed = 0, failed = 0;
  for (i = 0; i < n; i++) {
    int before = harness_failed_checks;
    if (argc > 1 && strcmp(argv[1], tests[i].name) != 0) continue;
    tests[i].fn();
    if (harness_failed_checks != before) {
      printf("FAIL %s\n", tests[i].name);
      failed++;
    } else {
      passed++;
    }
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

#define TEST_MAIN(table)                                                   \
  int main(int argc, char **argv) {                                        \
    return harness_run(table, (int)(sizeof(table) / sizeof((table)[0])), argc, argv); \
  }

#endif
