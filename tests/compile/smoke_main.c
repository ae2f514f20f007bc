/* tests/compile/smoke_main.c — the smoke test as a program. With
   SMOKE_WITH_IMPLEMENTATION it also compiles the implementation; otherwise it
   uses declarations only and links an implementation built elsewhere (as C, as
   C++, or with MGOPT_NO_STDIO). */
#ifdef SMOKE_WITH_IMPLEMENTATION
#define MGOPT_IMPLEMENTATION
#endif
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include "smoke.h"

static const test_case tests[] = {
    SMOKE_TESTS,
};
TEST_MAIN(tests)
