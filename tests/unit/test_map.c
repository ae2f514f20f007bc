/* tests/unit/test_map.c — the core hash map: growth, collisions, reset, failing allocator. */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "harness.h"
#include <stdlib.h>

/* An allocator that fails once `left` allocations (not frees) have been made. */
typedef struct counting {
  int left;
  long live;
} counting;

static void *counting_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
  counting *c = (counting *)ctx;
  if (new_size == 0) {
    free(ptr);
    if (ptr) c->live--;
    return NULL;
  }
  if (c->left == 0) return NULL;
  c->left--;
  (void)old_size;
  if (!ptr) c->live++;
  return realloc(ptr, new_size);
}

static void test_map_growth(void) {
  counting c = {-1, 0};
  mgopt_allocator a = {counting_realloc, NULL};
  mgopt__map m;
  uint64_t k;
  int added = 0;
  a.ctx = &c;
  mgopt__map_init(&m, &a);
  CHECK(mgopt__map_find(&m, 8) == NULL);
  for (k = 1; k <= 10000; k++) {
    mgopt__map_slot *s = mgopt__map_get(&m, k * 16, &added);
    REQUIRE(s != NULL);
    CHECK(added);
    s->v.i = (int64_t)k;
  }
  CHECK(m.n == 10000);
  CHECK((m.cap & (m.cap - 1)) == 0);
  CHECK(m.n * 4 <= m.cap * 3);
  for (k = 1; k <= 10000; k++) {
    mgopt__map_slot *s = mgopt__map_get(&m, k * 16, &added);
    CHECK(!added);
    CHECK(s && s->v.i == (int64_t)k);
    CHECK(mgopt__map_find(&m, k * 16) == s);
  }
  CHECK(mgopt__map_find(&m, 8) == NULL);
  CHECK(m.n == 10000);
  mgopt__map_free(&m);
  CHECK(c.live == 0);
}

static void test_map_collisions_and_reset(void) {
  counting c = {-1, 0};
  mgopt_allocator a = {counting_realloc, NULL};
  mgopt__map m;
  uint64_t k;
  a.ctx = &c;
  mgopt__map_init(&m, &a);
  /* keys a multiple of 2^40 apart share their low bits: only the mixing spreads them */
  for (k = 1; k <= 500; k++) {
    mgopt__map_slot *s = mgopt__map_get(&m, k << 40, NULL);
    REQUIRE(s != NULL);
    s->v.p = &m;
  }
  for (k = 1; k <= 500; k++) CHECK(mgopt__map_find(&m, k << 40) && mgopt__map_find(&m, k << 40)->v.p == &m);
  CHECK(mgopt__map_find(&m, 501ull << 40) == NULL);
  /* reset keeps the memory and empties the map */
  {
    size_t cap = m.cap;
    CHECK(mgopt__map_reset(&m, 10));
    CHECK(m.cap == cap && m.n == 0);
    CHECK(mgopt__map_find(&m, 1ull << 40) == NULL);
    CHECK(mgopt__map_reset(&m, 5000));
    CHECK(m.cap >= 8192 && m.n == 0);
    for (k = 1; k <= 5000; k++) REQUIRE(mgopt__map_get(&m, k, NULL) != NULL);
    CHECK(m.cap == cap || m.cap >= 8192); /* no growth after a reset to 5000 */
  }
  mgopt__map_free(&m);
  CHECK(c.live == 0);
}

static void test_map_out_of_memory(void) {
  counting c = {0, 0};
  mgopt_allocator a = {counting_realloc, NULL};
  mgopt__map m;
  uint64_t k;
  a.ctx = &c;
  mgopt__map_init(&m, &a);
  CHECK(mgopt__map_get(&m, 8, NULL) == NULL);
  CHECK(!mgopt__map_reset(&m, 5));
  CHECK(m.n == 0);
  c.left = 1; /* the first table, then growth fails */
  for (k = 1; k <= 48; k++) REQUIRE(mgopt__map_get(&m, k * 8, NULL) != NULL);
  CHECK(m.cap == 64);
  CHECK(mgopt__map_get(&m, 49 * 8, NULL) == NULL);
  CHECK(m.n == 48 && m.cap == 64); /* unchanged after the failure */
  for (k = 1; k <= 48; k++) CHECK(mgopt__map_find(&m, k * 8) != NULL);
  CHECK(!mgopt__map_reset(&m, (size_t)-1 / 2));
  mgopt__map_free(&m);
  CHECK(c.live == 0);
}


static const test_case tests[] = {
    TEST(test_map_growth),
    TEST(test_map_collisions_and_reset),
    TEST(test_map_out_of_memory),
};
TEST_MAIN(tests)
