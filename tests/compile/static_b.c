/* tests/compile/static_b.c — the second MGOPT_STATIC translation unit (see
   static_a.c), with the test program. */
#define MGOPT_STATIC
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include "smoke.h"

typedef const char *(*static_version_fn)(void);
static_version_fn static_a_version(void);
int64_t static_a_op_count(void);

static void test_static_private_copies(void) {
  static_version_fn mine = mgopt_version;
  /* each unit has its own internal-linkage copy */
  CHECK(static_a_version() != mine);
  CHECK_EQ_STR(static_a_version()(), mine());
  CHECK_EQ_INT(static_a_op_count(), 1);
}

static const test_case tests[] = {
    TEST(test_static_private_copies),
    SMOKE_TESTS,
};
TEST_MAIN(tests)
