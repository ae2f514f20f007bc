/* src/onnx/scope.c — the importer's scoped name map: interned pointer to pointer, popped when a subgraph ends. */
#include "convert_internal.h"

static size_t mgopt__imap_h(const void *k, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)k;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

MGOPT__PRIVATE void mgopt__imap_free(mgopt__imap *m) {
  if (m->keys) mgopt__heap_free(m->al, (void *)m->keys, m->cap * sizeof(void *));
  if (m->vals) mgopt__heap_free(m->al, m->vals, m->cap * sizeof(void *));
  if (m->undo) mgopt__heap_free(m->al, m->undo, (size_t)m->undo_cap * sizeof(mgopt__imap_undo));
  memset(m, 0, sizeof *m);
}

static int mgopt__imap_rehash(mgopt__imap *m, size_t ncap) {
  const void **nk = (const void **)mgopt__heap_realloc(m->al, NULL, 0, ncap * sizeof(void *));
  void **nv = (void **)mgopt__heap_realloc(m->al, NULL, 0, ncap * sizeof(void *));
  size_t i;
  int64_t u;
  if (!nk || !nv) {
    if (nk) mgopt__heap_free(m->al, (void *)nk, ncap * sizeof(void *));
    if (nv) mgopt__heap_free(m->al, nv, ncap * sizeof(void *));
    m->oom = 1;
    return 0;
  }
  memset((void *)nk, 0, ncap * sizeof(void *));
  memset(nv, 0, ncap * sizeof(void *));
  for (i = 0; i < m->cap; i++)
    if (m->keys[i]) {
      size_t j = mgopt__imap_h(m->keys[i], ncap);
      while (nk[j]) j = (j + 1) & (ncap - 1);
      nk[j] = m->keys[i];
      nv[j] = m->vals[i];
    }
  /* undo records hold slots: re-point them */
  for (u = 0; u < m->nundo; u++) {
    size_t j = mgopt__imap_h(m->undo[u].key, ncap);
    while (nk[j] != m->undo[u].key) j = (j + 1) & (ncap - 1);
    m->undo[u].slot = j;
  }
  if (m->keys) mgopt__heap_free(m->al, (void *)m->keys, m->cap * sizeof(void *));
  if (m->vals) mgopt__heap_free(m->al, m->vals, m->cap * sizeof(void *));
  m->keys = nk;
  m->vals = nv;
  m->cap = ncap;
  return 1;
}

MGOPT__PRIVATE void *mgopt__imap_get(const mgopt__imap *m, const void *k) {
  size_t j;
  if (!m->cap || !k) return NULL;
  j = mgopt__imap_h(k, m->cap);
  while (m->keys[j]) {
    if (m->keys[j] == k) return m->vals[j];
    j = (j + 1) & (m->cap - 1);
  }
  return NULL;
}

/* Sets k -> v, remembering the previous value so a scope can be popped. */
MGOPT__PRIVATE void mgopt__imap_put(mgopt__imap *m, const void *k, void *v) {
  size_t j;
  if (m->oom || !k) return;
  if ((m->count + 1) * 2 > m->cap && !mgopt__imap_rehash(m, m->cap ? m->cap * 2 : 256)) return;
  j = mgopt__imap_h(k, m->cap);
  while (m->keys[j] && m->keys[j] != k) j = (j + 1) & (m->cap - 1);
  if (m->nundo == m->undo_cap) {
    void *arr = m->undo;
    if (!mgopt__grow(m->al, &arr, &m->undo_cap, m->nundo + 1, sizeof(mgopt__imap_undo))) {
      m->oom = 1;
      return;
    }
    m->undo = (mgopt__imap_undo *)arr;
  }
  m->undo[m->nundo].slot = j;
  m->undo[m->nundo].key = k;
  m->undo[m->nundo].val = m->keys[j] ? m->vals[j] : NULL;
  m->nundo++;
  if (!m->keys[j]) m->count++;
  m->keys[j] = k;
  m->vals[j] = v;
}

/* Restores the map to what it was when nundo was `mark` (entries stay, set to their old value). */
MGOPT__PRIVATE void mgopt__imap_pop(mgopt__imap *m, int64_t mark) {
  while (m->nundo > mark) {
    mgopt__imap_undo *u = &m->undo[--m->nundo];
    m->vals[u->slot] = u->val;
  }
}
