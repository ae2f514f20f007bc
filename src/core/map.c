/* src/core/map.c — the one hash map: 64-bit keys (pointers, interned strings, hashes) to a pointer or an int64. */
#include "../internal.h"

#define MGOPT__MAP_MIN ((size_t)64)

/* The home slot of key: a 64-bit finalizer, so pointer keys (aligned, close
   together) spread over every bit before the mask. */
static size_t mgopt__map_home(uint64_t key, size_t cap) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  return (size_t)key & (cap - 1);
}

MGOPT__PRIVATE void mgopt__map_init(mgopt__map *m, const mgopt_allocator *alloc) {
  m->alloc = alloc;
  m->s = NULL;
  m->cap = 0;
  m->n = 0;
}

MGOPT__PRIVATE void mgopt__map_free(mgopt__map *m) {
  if (m->s) mgopt__heap_free(m->alloc, m->s, sizeof(mgopt__map_slot) * m->cap);
  m->s = NULL;
  m->cap = 0;
  m->n = 0;
}

/* Moves every entry into fresh zeroed slots of capacity ncap (a power of
   two, larger than n). Entries keep their relative probe order. 0 on OOM. */
static int mgopt__map_rehash(mgopt__map *m, size_t ncap) {
  mgopt__map_slot *ns;
  size_t i;
  if (ncap > SIZE_MAX / sizeof(mgopt__map_slot)) return 0;
  ns = (mgopt__map_slot *)mgopt__heap_realloc(m->alloc, NULL, 0, sizeof(mgopt__map_slot) * ncap);
  if (!ns) return 0;
  memset(ns, 0, sizeof(mgopt__map_slot) * ncap);
  for (i = 0; i < m->cap; i++)
    if (m->s[i].key) {
      size_t h = mgopt__map_home(m->s[i].key, ncap);
      while (ns[h].key) h = (h + 1) & (ncap - 1);
      ns[h] = m->s[i];
    }
  if (m->s) mgopt__heap_free(m->alloc, m->s, sizeof(mgopt__map_slot) * m->cap);
  m->s = ns;
  m->cap = ncap;
  return 1;
}

MGOPT__PRIVATE int mgopt__map_reset(mgopt__map *m, size_t n) {
  size_t cap = MGOPT__MAP_MIN;
  /* cap is a multiple of 4, so cap / 4 * 3 is exactly 3/4 of it */
  while (n >= cap / 4 * 3) {
    if (cap > SIZE_MAX / 8) {
      mgopt__map_free(m);
      return 0;
    }
    cap *= 2;
  }
  if (cap > m->cap) {
    mgopt__map_free(m);
    return mgopt__map_rehash(m, cap);
  }
  if (m->s) memset(m->s, 0, sizeof(mgopt__map_slot) * m->cap);
  m->n = 0;
  return 1;
}

/* Room for one more entry at load <= 3/4. 0 on OOM. */
static int mgopt__map_room(mgopt__map *m) {
  if ((m->n + 1) * 4 <= m->cap * 3) return 1;
  if (m->cap > SIZE_MAX / 8) return 0;
  return mgopt__map_rehash(m, m->cap ? m->cap * 2 : MGOPT__MAP_MIN);
}

MGOPT__PRIVATE mgopt__map_slot *mgopt__map_get(mgopt__map *m, uint64_t key, int *added) {
  size_t h;
  if (!mgopt__map_room(m)) return NULL;
  h = mgopt__map_home(key, m->cap);
  while (m->s[h].key && m->s[h].key != key) h = (h + 1) & (m->cap - 1);
  if (added) *added = !m->s[h].key;
  if (!m->s[h].key) {
    m->s[h].key = key;
    m->n++;
  }
  return &m->s[h];
}

/* The first slot at or after index h (in probe order) holding key, or NULL. */
static mgopt__map_slot *mgopt__map_scan(const mgopt__map *m, uint64_t key, size_t h) {
  while (m->s[h].key) {
    if (m->s[h].key == key) return &m->s[h];
    h = (h + 1) & (m->cap - 1);
  }
  return NULL;
}

MGOPT__PRIVATE mgopt__map_slot *mgopt__map_find(const mgopt__map *m, uint64_t key) {
  if (!m->n) return NULL;
  return mgopt__map_scan(m, key, mgopt__map_home(key, m->cap));
}
