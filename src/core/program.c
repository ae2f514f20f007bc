/* src/core/program.c — status strings, diagnostics, heap hooks, the arena, the interner, text buffers. */
#include "../internal.h"

/* ---------------------------------------------------------------- status and diag */

static const char *const mgopt__status_strs[] = {
#define MGOPT__STATUS_STR(name, str) str,
    MGOPT_STATUS_LIST(MGOPT__STATUS_STR)
#undef MGOPT__STATUS_STR
};

MGOPTDEF const char *mgopt_status_str(mgopt_status s) {
  if ((int)s < 0 || (int)s >= (int)MGOPT_STATUS__COUNT) return "unknown status";
  return mgopt__status_strs[s];
}

MGOPTDEF const char *mgopt_version(void) { return MGOPT_VERSION_STRING; }

MGOPTDEF void mgopt_diag_clear(mgopt_diag *d) {
  if (!d) return;
  memset(d, 0, sizeof *d);
  d->offset = -1;
}

MGOPTDEF mgopt_status mgopt_diag_set(mgopt_diag *d, mgopt_status s, const char *fmt, ...) {
  va_list ap;
  if (!d) return s;
  /* keep a location the caller already set (parsers set it before the message) */
  d->status = s;
  va_start(ap, fmt);
  vsnprintf(d->msg, sizeof d->msg, fmt, ap);
  va_end(ap);
  return s;
}

MGOPT__PRIVATE void mgopt__diag_prefix(mgopt_diag *d, const char *pre) {
  size_t pl, ml, cap = sizeof d->msg - 1;
  if (!d) return;
  pl = strlen(pre);
  if (pl > cap) pl = cap;
  ml = strlen(d->msg);
  if (ml > cap - pl) ml = cap - pl;
  memmove(d->msg + pl, d->msg, ml);
  memcpy(d->msg, pre, pl);
  d->msg[pl + ml] = 0;
}

/* ---------------------------------------------------------------- heap */

static void *mgopt__default_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
  MGOPT__UNUSED(ctx);
  MGOPT__UNUSED(old_size);
  if (new_size == 0) {
    MGOPT_FREE(ptr);
    return NULL;
  }
  if (!ptr) return MGOPT_MALLOC(new_size);
  return MGOPT_REALLOC(ptr, new_size);
}

MGOPT__PRIVATE void *mgopt__heap_realloc(const mgopt_allocator *a, void *ptr, size_t old_size,
                                         size_t new_size) {
  if (a && a->realloc) return a->realloc(a->ctx, ptr, old_size, new_size);
  return mgopt__default_realloc(NULL, ptr, old_size, new_size);
}

MGOPT__PRIVATE int mgopt__grow(const mgopt_allocator *a, void **ptr, int64_t *cap, int64_t need,
                               size_t elem) {
  int64_t ncap;
  void *np;
  if (need <= *cap) return 1;
  ncap = *cap ? *cap : 16;
  while (ncap < need) {
    if (ncap > INT64_MAX / 2) return 0;
    ncap *= 2;
  }
  if ((uint64_t)ncap > (uint64_t)SIZE_MAX / elem) return 0;
  np = mgopt__heap_realloc(a, *ptr, (size_t)*cap * elem, (size_t)ncap * elem);
  if (!np) return 0;
  *ptr = np;
  *cap = ncap;
  return 1;
}

/* ---------------------------------------------------------------- arena */

#define MGOPT__CHUNK_MIN ((size_t)64 * 1024)
#define MGOPT__CHUNK_HDR ((size_t)64) /* header rounded so chunk payloads are 64-aligned */

MGOPT__PRIVATE mgopt_status mgopt__oom(mgopt_program *p) {
  p->status = MGOPT_ERR_NOMEM;
  return MGOPT_ERR_NOMEM;
}

/* Arena memory, zeroed unless the caller overwrites all of it at once (file
   bytes, tensor data): zeroing 100 MB only to read a file over it costs as
   much as the read. */
MGOPT__PRIVATE void *mgopt__arena_alloc(mgopt_program *p, size_t size, size_t align, int zero) {
  mgopt__chunk *c = p->chunks;
  uintptr_t base, at;
  if (align == 0 || (align & (align - 1)) || align > 4096) return NULL;
  if (align < 8) align = 8;
  if (size == 0) size = 1;
  if (c) {
    /* align absolute addresses: the allocator's blocks need not be 64-aligned */
    base = (uintptr_t)c + MGOPT__CHUNK_HDR;
    at = (base + c->used + align - 1) & ~(uintptr_t)(align - 1);
    if (at - base <= c->size && c->size - (size_t)(at - base) >= size) {
      c->used = (size_t)(at - base) + size;
      if (zero) memset((void *)at, 0, size);
      return (void *)at;
    }
  }
  {
    size_t want, csize;
    mgopt__chunk *nc;
    if (size > SIZE_MAX - align - MGOPT__CHUNK_HDR - MGOPT__CHUNK_MIN) {
      mgopt__oom(p);
      return NULL;
    }
    want = size + align;
    csize = want > MGOPT__CHUNK_MIN ? want : MGOPT__CHUNK_MIN;
    nc = (mgopt__chunk *)mgopt__heap_realloc(&p->alloc, NULL, 0, csize + MGOPT__CHUNK_HDR);
    if (!nc) {
      mgopt__oom(p);
      return NULL;
    }
    nc->size = csize;
    p->arena_bytes += csize + MGOPT__CHUNK_HDR;
    base = (uintptr_t)nc + MGOPT__CHUNK_HDR;
    at = (base + align - 1) & ~(uintptr_t)(align - 1);
    /* a big allocation gets its own chunk, kept behind the current one so the
       current chunk's free space is not wasted */
    if (c && want > MGOPT__CHUNK_MIN) {
      nc->next = c->next;
      c->next = nc;
      nc->used = nc->size;
    } else {
      nc->next = c;
      p->chunks = nc;
      nc->used = (size_t)(at - base) + size;
    }
    if (zero) memset((void *)at, 0, size);
    return (void *)at;
  }
}

MGOPTDEF void *mgopt_program_alloc(mgopt_program *p, size_t size, size_t align) {
  return mgopt__arena_alloc(p, size, align, 1);
}

MGOPT__PRIVATE void *mgopt__dup(mgopt_program *p, const void *src, size_t n) {
  void *d = mgopt__arena_alloc(p, n, 8, n == 0);
  if (d && n) memcpy(d, src, n);
  return d;
}

/* n bytes of src and a NUL after them (src need not be NUL-terminated). */
MGOPT__PRIVATE char *mgopt__dupz(mgopt_program *p, const char *src, size_t n) {
  char *d = n < SIZE_MAX ? (char *)mgopt__arena_alloc(p, n + 1, 1, 0) : NULL;
  if (!d) return NULL;
  if (n) memcpy(d, src, n);
  d[n] = 0;
  return d;
}

MGOPTDEF size_t mgopt_program_arena_bytes(const mgopt_program *p) { return p ? p->arena_bytes : 0; }

MGOPTDEF mgopt_program *mgopt_program_create(const mgopt_allocator *alloc) {
  mgopt_program *p;
  mgopt_allocator a;
  if (alloc && alloc->realloc) a = *alloc;
  else {
    a.realloc = mgopt__default_realloc;
    a.ctx = NULL;
  }
  p = (mgopt_program *)a.realloc(a.ctx, NULL, 0, sizeof *p);
  if (!p) return NULL;
  memset(p, 0, sizeof *p);
  p->alloc = a;
  p->next_id = 1;
  mgopt__map_init(&p->func_by_name, &p->alloc);
  mgopt__map_init(&p->fresh, &p->alloc);
  return p;
}

MGOPTDEF void mgopt_program_destroy(mgopt_program *p) {
  mgopt__chunk *c, *n;
  mgopt_allocator a;
  if (!p) return;
  a = p->alloc;
  {
    int32_t i;
    for (i = 0; i < p->nfuncs; i++) mgopt__index_free(p->funcs[i]);
  }
  for (c = p->chunks; c; c = n) {
    n = c->next;
    a.realloc(a.ctx, c, c->size + MGOPT__CHUNK_HDR, 0);
  }
  if (p->intern_tab) a.realloc(a.ctx, (void *)p->intern_tab, p->intern_cap * sizeof(char *), 0);
  if (p->intern_key) a.realloc(a.ctx, p->intern_key, p->intern_cap * sizeof(uint64_t), 0);
  if (p->funcs) a.realloc(a.ctx, p->funcs, (size_t)p->funcs_cap * sizeof(mgopt_function *), 0);
  mgopt__map_free(&p->func_by_name);
  mgopt__map_free(&p->fresh);
  a.realloc(a.ctx, p, sizeof *p, 0);
}

MGOPTDEF mgopt_status mgopt_program_status(const mgopt_program *p) {
  return p ? p->status : MGOPT_ERR_INVALID_ARG;
}

/* ---------------------------------------------------------------- interner */

/* Open addressing. Each slot keeps its string's 32-bit hash and length in one
   word, so a probe compares a word before any bytes, growing never rehashes a
   string, and a string that is already interned (names handed back by the
   ONNX reader, say) is recognised by its pointer without a byte comparison. */
static uint64_t mgopt__intern_key(const char *s, size_t n) {
  return mgopt__hash_bytes(s, n, MGOPT__HASH_SEED) << 32 | (uint64_t)(uint32_t)n;
}

static int mgopt__intern_rehash(mgopt_program *p, size_t ncap) {
  const char **nt;
  uint64_t *nk;
  size_t i;
  nt = (const char **)mgopt__heap_realloc(&p->alloc, NULL, 0, ncap * sizeof(char *));
  nk = (uint64_t *)mgopt__heap_realloc(&p->alloc, NULL, 0, ncap * sizeof(uint64_t));
  if (!nt || !nk) {
    if (nt) mgopt__heap_free(&p->alloc, (void *)nt, ncap * sizeof(char *));
    if (nk) mgopt__heap_free(&p->alloc, nk, ncap * sizeof(uint64_t));
    return 0;
  }
  memset((void *)nt, 0, ncap * sizeof(char *));
  for (i = 0; i < p->intern_cap; i++) {
    if (p->intern_tab[i]) {
      size_t h = (size_t)(p->intern_key[i] >> 32) & (ncap - 1);
      while (nt[h]) h = (h + 1) & (ncap - 1);
      nt[h] = p->intern_tab[i];
      nk[h] = p->intern_key[i];
    }
  }
  if (p->intern_tab) mgopt__heap_free(&p->alloc, (void *)p->intern_tab, p->intern_cap * sizeof(char *));
  if (p->intern_key) mgopt__heap_free(&p->alloc, p->intern_key, p->intern_cap * sizeof(uint64_t));
  p->intern_tab = nt;
  p->intern_key = nk;
  p->intern_cap = ncap;
  return 1;
}

/* The slot holding s, or the empty slot where it belongs. intern_cap > 0. */
static size_t mgopt__intern_find(const mgopt_program *p, const char *s, size_t n, uint64_t key) {
  size_t h = (size_t)(key >> 32) & (p->intern_cap - 1);
  const char *e;
  while ((e = p->intern_tab[h]) != NULL) {
    if (p->intern_key[h] == key && (e == s || memcmp(e, s, n) == 0)) return h;
    h = (h + 1) & (p->intern_cap - 1);
  }
  return h;
}

MGOPTDEF const char *mgopt_program_intern(mgopt_program *p, const char *s, size_t n) {
  size_t h;
  uint64_t key;
  char *copy;
  if (!s || n > 0xffffffffu) return NULL;
  if ((p->intern_count + 1) * 2 > p->intern_cap) {
    if (!mgopt__intern_rehash(p, p->intern_cap ? p->intern_cap * 2 : 256)) {
      mgopt__oom(p);
      return NULL;
    }
  }
  key = mgopt__intern_key(s, n);
  h = mgopt__intern_find(p, s, n, key);
  if (p->intern_tab[h]) return p->intern_tab[h];
  copy = (char *)mgopt_program_alloc(p, n + 1, 1);
  if (!copy) return NULL;
  memcpy(copy, s, n);
  copy[n] = 0;
  p->intern_tab[h] = copy;
  p->intern_key[h] = key;
  p->intern_count++;
  return copy;
}

MGOPTDEF const char *mgopt_program_intern_cstr(mgopt_program *p, const char *s) {
  return s ? mgopt_program_intern(p, s, strlen(s)) : NULL;
}

/* The interned copy of s, or NULL when s was never interned (looks, never adds). */
MGOPT__PRIVATE const char *mgopt__intern_lookup(const mgopt_program *p, const char *s, size_t n) {
  if (!p->intern_cap || n > 0xffffffffu) return NULL;
  return p->intern_tab[mgopt__intern_find(p, s, n, mgopt__intern_key(s, n))];
}

/* "<base>_<k>" for the smallest k not yet tried for this base whose name was
   never interned: the result depends only on the names the program has seen
   and the earlier requests for the same base, never on unrelated ones. */
MGOPTDEF const char *mgopt_program_fresh_name(mgopt_program *p, const char *base) {
  char buf[256];
  size_t bl = strlen(base);
  const char *key;
  mgopt__map_slot *slot;
  uint64_t *next;
  if (bl > 200) bl = 200;
  key = mgopt_program_intern(p, base, bl);
  if (!key) return NULL;
  slot = mgopt__map_get(&p->fresh, mgopt__map_ptr_key(key), NULL);
  if (!slot) {
    mgopt__oom(p);
    return NULL;
  }
  next = &slot->v.u;
  for (;;) {
    int n = snprintf(buf, sizeof buf, "%.*s_%llu", (int)bl, base, (unsigned long long)(*next)++);
    if (n < 0) return NULL;
    if (!mgopt__intern_lookup(p, buf, (size_t)n)) return mgopt_program_intern(p, buf, (size_t)n);
  }
}

/* ---------------------------------------------------------------- text buffer */

MGOPTDEF void mgopt_buf_free(mgopt_buf *b) {
  if (!b) return;
  if (b->data) mgopt__heap_free(b->alloc, b->data, b->cap);
  b->data = NULL;
  b->len = b->cap = 0;
}

MGOPT__PRIVATE int mgopt__buf_reserve(mgopt_buf *b, size_t extra) {
  size_t need, ncap;
  char *nd;
  if (b->oom) return 0;
  if (extra > SIZE_MAX - 1 - b->len) {
    b->oom = 1;
    return 0;
  }
  need = b->len + extra + 1;
  if (need <= b->cap) return 1;
  ncap = b->cap ? b->cap : 256;
  while (ncap < need) ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
  nd = (char *)mgopt__heap_realloc(b->alloc, b->data, b->cap, ncap);
  if (!nd) {
    b->oom = 1;
    return 0;
  }
  b->data = nd;
  b->cap = ncap;
  return 1;
}

MGOPT__PRIVATE void mgopt__buf_putn(mgopt_buf *b, const char *s, size_t n) {
  if (!mgopt__buf_reserve(b, n)) return;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

MGOPT__PRIVATE void mgopt__buf_puts(mgopt_buf *b, const char *s) { mgopt__buf_putn(b, s, strlen(s)); }

MGOPT__PRIVATE void mgopt__buf_putc(mgopt_buf *b, char c) { mgopt__buf_putn(b, &c, 1); }

MGOPT__PRIVATE void mgopt__buf_printf(mgopt_buf *b, const char *fmt, ...) {
  va_list ap;
  int n;
  char small[256];
  va_start(ap, fmt);
  n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof small) {
    mgopt__buf_putn(b, small, (size_t)n);
    return;
  }
  if (!mgopt__buf_reserve(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* ---------------------------------------------------------------- float text */

static void mgopt__float_suffix(char *buf) {
  /* make sure the text reads back as a float literal */
  if (strchr(buf, '.') || strchr(buf, 'e') || strchr(buf, 'n') || strchr(buf, 'i')) return;
  strcat(buf, ".0");
}

MGOPT__PRIVATE void mgopt__fmt_f64(char *buf, double v) {
  int prec;
  if (v != v) {
    strcpy(buf, "nan");
    return;
  }
  if (v == HUGE_VAL) {
    strcpy(buf, "inf");
    return;
  }
  if (v == -HUGE_VAL) {
    strcpy(buf, "-inf");
    return;
  }
  for (prec = 1; prec <= 17; prec++) {
    snprintf(buf, 40, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  /* prefer plain decimals (100.0, 0.001) to exponents where they read as well */
  if (strchr(buf, 'e') && fabs(v) >= 1e-4 && fabs(v) < 1e15) {
    char alt[40];
    int k;
    for (k = 1; k <= 20; k++) {
      snprintf(alt, sizeof alt, "%.*f", k, v);
      if (strtod(alt, NULL) == v) break;
    }
    if (k <= 20 && strlen(alt) <= strlen(buf) + 4) strcpy(buf, alt);
  }
  mgopt__float_suffix(buf);
}
