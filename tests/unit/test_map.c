/* tests/unit/test_map.c — the core hash map: growth, collisions, reset, failing allocator, multi-map, removal. */
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


/* Multi-map slots of one key come back in the order they were added, across
   growth (with runs that wrap around the end) and removals. */
static void test_map_multi_and_remove(void) {
  counting c = {-1, 0};
  mgopt_allocator a = {counting_realloc, NULL};
  mgopt__map m;
  uint64_t k;
  int64_t i;
  a.ctx = &c;
  mgopt__map_init_flags(&m, &a, MGOPT__MAP_HASHED | MGOPT__MAP_SPARSE);
  /* hashed keys near the top of the table: their runs wrap to slot 0 */
  for (i = 0; i < 3000; i++) {
    mgopt__map_slot *s = mgopt__map_add(&m, mgopt__map_hash_key((uint64_t)(60 + i % 7) | ((uint64_t)1 << 40)));
    REQUIRE(s != NULL);
    s->v.i = i;
  }
  CHECK(m.n == 3000 && m.n * 2 <= m.cap);
  for (k = 60; k < 67; k++) {
    const mgopt__map_slot *s = mgopt__map_find(&m, k | ((uint64_t)1 << 40));
    int64_t last = -1, count = 0;
    for (; s; s = mgopt__map_next(&m, s)) {
      CHECK(s->v.i > last && s->v.i % 7 == (int64_t)(k - 60));
      last = s->v.i;
      count++;
    }
    CHECK(count == (k < 64 ? 429 : 428));
  }
  /* remove every other slot of key 61, then check the rest and order */
  {
    mgopt__map_slot *s = mgopt__map_find(&m, 61 | ((uint64_t)1 << 40));
    int64_t removed = 0;
    while (s) {
      int64_t v = s->v.i;
      if (v % 2 == 0) {
        mgopt__map_remove(&m, s);
        removed++;
        /* the slots moved: find the first one after v again */
        for (s = mgopt__map_find(&m, 61 | ((uint64_t)1 << 40)); s && s->v.i <= v; s = mgopt__map_next(&m, s)) {
        }
      } else
        s = mgopt__map_next(&m, s);
    }
    CHECK(removed == 214);
    CHECK(m.n == 3000 - 214);
  }
  for (k = 60; k < 67; k++) {
    const mgopt__map_slot *s = mgopt__map_find(&m, k | ((uint64_t)1 << 40));
    int64_t last = -1, count = 0;
    for (; s; s = mgopt__map_next(&m, s)) {
      CHECK(s->v.i > last);
      if (k == 61) CHECK(s->v.i % 2 == 1);
      last = s->v.i;
      count++;
    }
    CHECK(count == (k == 61 ? 215 : k < 64 ? 429 : 428));
  }
  mgopt__map_free(&m);
  CHECK(c.live == 0);
}

/* Removing keys one by one leaves every other key findable. */
static void test_map_remove(void) {
  counting c = {-1, 0};
  mgopt_allocator a = {counting_realloc, NULL};
  mgopt__map m;
  uint64_t k;
  a.ctx = &c;
  mgopt__map_init(&m, &a);
  for (k = 1; k <= 2000; k++) {
    mgopt__map_slot *s = mgopt__map_get(&m, k * 24, NULL);
    REQUIRE(s != NULL);
    s->v.u = k;
  }
  for (k = 1; k <= 2000; k += 3) {
    mgopt__map_slot *s = mgopt__map_find(&m, k * 24);
    REQUIRE(s != NULL);
    mgopt__map_remove(&m, s);
  }
  CHECK(m.n == 2000 - 667);
  for (k = 1; k <= 2000; k++) {
    const mgopt__map_slot *s = mgopt__map_find(&m, k * 24);
    if (k % 3 == 1) CHECK(s == NULL);
    else CHECK(s && s->v.u == k);
  }
  mgopt__map_prefetch(&m, 24);
  mgopt__map_free(&m);
  CHECK(c.live == 0);
}

static const test_case tests[] = {
    TEST(test_map_growth),
    TEST(test_map_collisions_and_reset),
    TEST(test_map_out_of_memory),
    TEST(test_map_multi_and_remove),
    TEST(test_map_remove),
};
TEST_MAIN(tests)
