/* src/onnx/scope.c — the importer's scoped name map: interned pointer to pointer, popped when a subgraph ends. */
#include "convert_internal.h"

MGOPT__PRIVATE void mgopt__imap_free(mgopt__imap *m) {
  mgopt__map_free(&m->map);
  if (m->undo) mgopt__heap_free(m->al, m->undo, (size_t)m->undo_cap * sizeof(mgopt__imap_undo));
  memset(m, 0, sizeof *m);
}

MGOPT__PRIVATE void *mgopt__imap_get(const mgopt__imap *m, const void *k) {
  const mgopt__map_slot *s = k ? mgopt__map_find(&m->map, mgopt__map_ptr_key(k)) : NULL;
  return s ? s->v.p : NULL;
}

/* Sets k -> v, remembering the previous value so a scope can be popped. */
MGOPT__PRIVATE void mgopt__imap_put(mgopt__imap *m, const void *k, void *v) {
  mgopt__map_slot *s;
  if (m->oom || !k) return;
  if (m->nundo == m->undo_cap) {
    void *arr = m->undo;
    if (!mgopt__grow(m->al, &arr, &m->undo_cap, m->nundo + 1, sizeof(mgopt__imap_undo))) {
      m->oom = 1;
      return;
    }
    m->undo = (mgopt__imap_undo *)arr;
  }
  m->map.alloc = m->al;
  s = mgopt__map_get(&m->map, mgopt__map_ptr_key(k), NULL);
  if (!s) {
    m->oom = 1;
    return;
  }
  m->undo[m->nundo].key = k;
  m->undo[m->nundo].val = s->v.p;
  m->nundo++;
  s->v.p = v;
}

/* Restores the map to what it was when nundo was `mark` (entries stay, set to their old value). */
MGOPT__PRIVATE void mgopt__imap_pop(mgopt__imap *m, int64_t mark) {
  while (m->nundo > mark) {
    mgopt__imap_undo *u = &m->undo[--m->nundo];
    mgopt__map_find(&m->map, mgopt__map_ptr_key(u->key))->v.p = u->val;
  }
}
