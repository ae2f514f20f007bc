/* src/core/map.c — the one hash map: 64-bit keys (pointers, interned strings, hashes) to a pointer or an int64. */
#include "../internal.h"

#define MGOPT__MAP_MIN ((size_t)64)

/* The home slot of key: a 64-bit finalizer, so pointer keys (aligned, close
   together) spread over every bit before the mask; hash keys as they are. */
static size_t mgopt__map_home(const mgopt__map *m, uint64_t key) {
  if (!(m->flags & MGOPT__MAP_HASHED)) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
  }
  return (size_t)key & (m->cap - 1);
}

/* 1 if n entries fit in cap slots at the map's load limit. */
static int mgopt__map_fits(const mgopt__map *m, size_t n, size_t cap) {
  return (m->flags & MGOPT__MAP_SPARSE) ? n <= cap / 2 : n <= cap / 4 * 3;
}

MGOPT__PRIVATE void mgopt__map_init_flags(mgopt__map *m, const mgopt_allocator *alloc, unsigned flags) {
  m->alloc = alloc;
  m->s = NULL;
  m->cap = 0;
  m->n = 0;
  m->flags = flags;
}

MGOPT__PRIVATE void mgopt__map_init(mgopt__map *m, const mgopt_allocator *alloc) {
  mgopt__map_init_flags(m, alloc, 0);
}

MGOPT__PRIVATE void mgopt__map_free(mgopt__map *m) {
  if (m->s) mgopt__heap_free(m->alloc, m->s, sizeof(mgopt__map_slot) * m->cap);
  m->s = NULL;
  m->cap = 0;
  m->n = 0;
}

/* Moves every entry into fresh zeroed slots of capacity ncap (a power of
   two, larger than n). The old slots are read from just after an empty one,
   so each run of occupied slots is read in probe order and the slots of one
   key keep their order. 0 on OOM. */
static int mgopt__map_rehash(mgopt__map *m, size_t ncap) {
  mgopt__map_slot *ns, *os = m->s;
  size_t i, start = 0, ocap = m->cap;
  if (ncap > SIZE_MAX / sizeof(mgopt__map_slot)) return 0;
  ns = (mgopt__map_slot *)mgopt__heap_realloc(m->alloc, NULL, 0, sizeof(mgopt__map_slot) * ncap);
  if (!ns) return 0;
  memset(ns, 0, sizeof(mgopt__map_slot) * ncap);
  while (start < ocap && os[start].key) start++; /* load < 1: some slot is empty */
  m->s = ns;
  m->cap = ncap;
  for (i = 0; i < ocap; i++) {
    const mgopt__map_slot *o = &os[(start + i) & (ocap - 1)];
    if (o->key) {
      size_t h = mgopt__map_home(m, o->key);
      while (ns[h].key) h = (h + 1) & (ncap - 1);
      ns[h] = *o;
    }
  }
  if (os) mgopt__heap_free(m->alloc, os, sizeof(mgopt__map_slot) * ocap);
  return 1;
}

MGOPT__PRIVATE int mgopt__map_reset(mgopt__map *m, size_t n) {
  size_t cap = MGOPT__MAP_MIN;
  while (!mgopt__map_fits(m, n + 1, cap)) {
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

/* Room for one more entry at the load limit. 0 on OOM. */
static int mgopt__map_room(mgopt__map *m) {
  if (m->cap && mgopt__map_fits(m, m->n + 1, m->cap)) return 1;
  if (m->cap > SIZE_MAX / 8) return 0;
  return mgopt__map_rehash(m, m->cap ? m->cap * 2 : MGOPT__MAP_MIN);
}

MGOPT__PRIVATE mgopt__map_slot *mgopt__map_get(mgopt__map *m, uint64_t key, int *added) {
  size_t h;
  if (!mgopt__map_room(m)) return NULL;
  h = mgopt__map_home(m, key);
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
  return mgopt__map_scan(m, key, mgopt__map_home(m, key));
}

MGOPT__PRIVATE mgopt__map_slot *mgopt__map_add(mgopt__map *m, uint64_t key) {
  size_t h;
  if (!mgopt__map_room(m)) return NULL;
  h = mgopt__map_home(m, key);
  while (m->s[h].key) h = (h + 1) & (m->cap - 1);
  m->s[h].key = key;
  m->n++;
  return &m->s[h];
}

MGOPT__PRIVATE mgopt__map_slot *mgopt__map_next(const mgopt__map *m, const mgopt__map_slot *sl) {
  return mgopt__map_scan(m, sl->key, ((size_t)(sl - m->s) + 1) & (m->cap - 1));
}

