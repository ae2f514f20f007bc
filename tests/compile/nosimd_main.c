/* tests/compile/nosimd_main.c — folding with the default build (SIMD paths where
   the compiler and mgopt have them) must give the same bits as the MGOPT_NO_SIMD
   build of nosimd_scalar.c. Both are MGOPT_STATIC copies in one program. */
#define MGOPT_STATIC
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include "smoke.h"
#include "fold_cases.h"

int nosimd_scalar_fold(int i, unsigned char *out, size_t cap, size_t *len);

#define NOSIMD_CAP (64 * 1024)
static unsigned char nosimd_a[NOSIMD_CAP], nosimd_b[NOSIMD_CAP];

static void test_nosimd_bit_identical(void) {
  int i, folded = 0;
  for (i = 0; i < FOLD_CASE_COUNT; i++) {
    size_t la = 0, lb = 0;
    int ra = fold_case_run(i, nosimd_a, NOSIMD_CAP, &la);
    int rb = nosimd_scalar_fold(i, nosimd_b, NOSIMD_CAP, &lb);
    if (ra != rb || la != lb || memcmp(nosimd_a, nosimd_b, la) != 0) {
      printf("case %d (%s, %s): default build %d (%lu bytes), MGOPT_NO_SIMD %d (%lu bytes)\n", i,
             fold_cases[i].op, mgopt_dtype_name(fold_cases[i].dt), ra, (unsigned long)la, rb,
             (unsigned long)lb);
      CHECK(0);
    }
    CHECK(ra != -2 && ra != -1);
    if (ra == 1) folded++;
  }
  if (folded == 0) printf("note: no folding kernel folded any case yet: nothing compared\n");
  else printf("%d of %d cases folded and compared\n", folded, FOLD_CASE_COUNT);
}

static const test_case tests[] = {
    SMOKE_TESTS,
    TEST(test_nosimd_bit_identical),
};
TEST_MAIN(tests)
