/* src/onnx/pb.c — protobuf wire codec: a bounds-checked reader over (ptr, len) and a back-to-front writer. */
#include "wire.h"

/* Reads a varint at *pos (< end). On success advances *pos. Accepts the
   non-minimal encodings protobuf allows, up to 10 bytes; the 10th byte may
   only carry the top bit of a 64-bit value. */
MGOPT__PRIVATE int mgopt__pb_varint(const uint8_t *b, size_t *pos, size_t end, uint64_t *out) {
  uint64_t v = 0;
  size_t p = *pos;
  int shift = 0;
  for (;;) {
    uint8_t c;
    if (p >= end) return MGOPT__PB_TRUNCATED;
    c = b[p++];
    if (shift == 63 && (c & 0x7e)) return MGOPT__PB_OVERFLOW;
    v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) break;
    shift += 7;
    if (shift > 63) return MGOPT__PB_OVERFLOW;
  }
  *pos = p;
  *out = v;
  return MGOPT__PB_OK;
}

MGOPT__PRIVATE int mgopt__pb_fixed32(const uint8_t *b, size_t *pos, size_t end, uint32_t *out) {
  size_t p = *pos;
  if (end - p < 4) return MGOPT__PB_TRUNCATED;
  *out = (uint32_t)b[p] | (uint32_t)b[p + 1] << 8 | (uint32_t)b[p + 2] << 16 | (uint32_t)b[p + 3] << 24;
  *pos = p + 4;
  return MGOPT__PB_OK;
}

MGOPT__PRIVATE int mgopt__pb_fixed64(const uint8_t *b, size_t *pos, size_t end, uint64_t *out) {
  uint32_t lo, hi;
  if (end - *pos < 8) return MGOPT__PB_TRUNCATED;
  mgopt__pb_fixed32(b, pos, end, &lo);
  mgopt__pb_fixed32(b, pos, end, &hi);
  *out = (uint64_t)lo | (uint64_t)hi << 32;
  return MGOPT__PB_OK;
}

/* Reads a field key: field number and wire type. Rejects field 0, wire types
   6/7 and groups (the caller reports them). */
MGOPT__PRIVATE int mgopt__pb_key(const uint8_t *b, size_t *pos, size_t end, uint32_t *field, int *wt) {
  uint64_t k;
  int r = mgopt__pb_varint(b, pos, end, &k);
  if (r) return r;
  *wt = (int)(k & 7);
  if ((k >> 3) > 0x1fffffffu) return MGOPT__PB_OVERFLOW;
  *field = (uint32_t)(k >> 3);
  if (*wt == MGOPT__PB_SGROUP || *wt == MGOPT__PB_EGROUP) return MGOPT__PB_GROUP;
  if (*wt > MGOPT__PB_FIXED32) return MGOPT__PB_BADWIRE;
  return MGOPT__PB_OK;
}

/* Skips the payload of a field of wire type wt; for MGOPT__PB_LEN returns the
   payload's start and length (checked against end) in *start / *len. */
MGOPT__PRIVATE int mgopt__pb_skip(const uint8_t *b, size_t *pos, size_t end, int wt, size_t *start,
                                  size_t *len) {
  uint64_t v;
  int r;
  *start = *pos;
  *len = 0;
  switch (wt) {
  case MGOPT__PB_VARINT: return mgopt__pb_varint(b, pos, end, &v);
  case MGOPT__PB_FIXED64:
    if (end - *pos < 8) return MGOPT__PB_TRUNCATED;
    *pos += 8;
    return MGOPT__PB_OK;
  case MGOPT__PB_FIXED32:
    if (end - *pos < 4) return MGOPT__PB_TRUNCATED;
    *pos += 4;
    return MGOPT__PB_OK;
  case MGOPT__PB_LEN:
    r = mgopt__pb_varint(b, pos, end, &v);
    if (r) return r;
    if (v > (uint64_t)(end - *pos)) return MGOPT__PB_PASTEND;
    *start = *pos;
    *len = (size_t)v;
    *pos += (size_t)v;
    return MGOPT__PB_OK;
  default: return MGOPT__PB_BADWIRE;
  }
}

MGOPT__PRIVATE const char *mgopt__pb_err_str(int r) {
  switch (r) {
  case MGOPT__PB_TRUNCATED: return "truncated";
  case MGOPT__PB_OVERFLOW: return "varint too long or out of range";
  case MGOPT__PB_BADWIRE: return "invalid wire type";
  case MGOPT__PB_GROUP: return "protobuf groups are not supported";
  case MGOPT__PB_PASTEND: return "length past end";
  default: return "ok";
  }
}

/* ---------------------------------------------------------------- writer */

MGOPT__PRIVATE int mgopt__pbw_reserve(mgopt__pbw *w, size_t n) {
  size_t ncap;
  uint8_t *nb;
  if (w->oom) return 0;
  if (w->cap - w->len >= n) return 1;
  if (n > SIZE_MAX - w->len) {
    w->oom = 1;
    return 0;
  }
  ncap = w->cap ? w->cap : 4096;
  while (ncap - w->len < n) {
    if (ncap > SIZE_MAX / 2) {
      ncap = w->len + n;
      break;
    }
    ncap *= 2;
  }
  nb = (uint8_t *)mgopt__heap_realloc(w->alloc, w->buf, w->cap, ncap);
  if (!nb) {
    w->oom = 1;
    return 0;
  }
  /* the written bytes sit at the end of the old block: move them to the new end */
  if (w->len) memmove(nb + ncap - w->len, nb + w->cap - w->len, w->len);
  w->buf = nb;
  w->cap = ncap;
  return 1;
}

MGOPT__PRIVATE void mgopt__pbw_free(mgopt__pbw *w) {
  if (w->buf) mgopt__heap_free(w->alloc, w->buf, w->cap);
  if (w->spans) mgopt__heap_free(w->alloc, w->spans, (size_t)w->spancap * sizeof *w->spans);
  w->buf = NULL;
  w->spans = NULL;
  w->cap = w->len = w->vlen = 0;
  w->nspans = w->spancap = 0;
}

/* NULL while nothing is buffered (callers then have no bytes to read). */
static inline const uint8_t *mgopt__pbw_data(const mgopt__pbw *w) {
  return w->buf ? w->buf + (w->cap - w->len) : NULL;
}

MGOPT__PRIVATE void mgopt__pbw_bytes(mgopt__pbw *w, const void *p, size_t n) {
  if (!n || !mgopt__pbw_reserve(w, n)) return;
  w->len += n;
  memcpy(w->buf + (w->cap - w->len), p, n);
}

MGOPT__PRIVATE void mgopt__pbw_varint(mgopt__pbw *w, uint64_t v) {
  uint8_t tmp[10];
  size_t n = 0;
  do {
    uint8_t c = (uint8_t)(v & 0x7f);
    v >>= 7;
    tmp[n++] = (uint8_t)(c | (v ? 0x80 : 0));
  } while (v);
  mgopt__pbw_bytes(w, tmp, n);
}

MGOPT__PRIVATE void mgopt__pbw_fixed32(mgopt__pbw *w, uint32_t v) {
  uint8_t tmp[4];
  tmp[0] = (uint8_t)v;
  tmp[1] = (uint8_t)(v >> 8);
  tmp[2] = (uint8_t)(v >> 16);
  tmp[3] = (uint8_t)(v >> 24);
  mgopt__pbw_bytes(w, tmp, 4);
}

MGOPT__PRIVATE void mgopt__pbw_fixed64(mgopt__pbw *w, uint64_t v) {
  /* back to front: high word first */
  mgopt__pbw_fixed32(w, (uint32_t)(v >> 32));
  mgopt__pbw_fixed32(w, (uint32_t)v);
}

MGOPT__PRIVATE void mgopt__pbw_key(mgopt__pbw *w, uint32_t field, int wt) {
  mgopt__pbw_varint(w, (uint64_t)field << 3 | (uint64_t)wt);
}

/* Closes a length-delimited field whose payload was written since `mark`
   (the writer's len before the payload). */
MGOPT__PRIVATE void mgopt__pbw_close(mgopt__pbw *w, size_t mark, uint32_t field) {
  mgopt__pbw_varint(w, (uint64_t)(mgopt__pbw_mark(w) - mark));
  mgopt__pbw_key(w, field, MGOPT__PB_LEN);
}

/* Writes n bytes at p that stay alive until mgopt__pbw_emit: large ones become spans. */
MGOPT__PRIVATE void mgopt__pbw_borrow(mgopt__pbw *w, const void *p, size_t n) {
  if (!w->borrow_min || n < w->borrow_min) {
    mgopt__pbw_bytes(w, p, n);
    return;
  }
  if (w->oom) return;
  if (n > SIZE_MAX - w->vlen - w->len ||
      !mgopt__grow(w->alloc, (void **)&w->spans, &w->spancap, w->nspans + 1, sizeof *w->spans)) {
    w->oom = 1;
    return;
  }
  w->spans[w->nspans].at = w->len;
  w->spans[w->nspans].p = p;
  w->spans[w->nspans].n = n;
  w->nspans++;
  w->vlen += n;
}

MGOPT__PRIVATE void mgopt__pbw_lenfield(mgopt__pbw *w, uint32_t field, const void *p, size_t n) {
  mgopt__pbw_borrow(w, p, n);
  mgopt__pbw_varint(w, (uint64_t)n);
  mgopt__pbw_key(w, field, MGOPT__PB_LEN);
}

/* Hands the finished output to sink front to back: runs of buffered bytes
   (pointers into w's buffer) and the spans' own pointers, each at most once,
   in output order. Stops at the first status other than MGOPT_OK. */
MGOPT__PRIVATE mgopt_status mgopt__pbw_emit(const mgopt__pbw *w, mgopt_write_fn sink, void *ctx) {
  const uint8_t *data = mgopt__pbw_data(w);
  size_t done = 0; /* buffered bytes handed out */
  int64_t k;
  mgopt_status st;
  for (k = w->nspans - 1; k >= 0; k--) {
    const mgopt__pbw_span *s = &w->spans[k];
    size_t upto = w->len - s->at; /* buffered bytes before the span */
    if (upto > done && (st = sink(ctx, data + done, upto - done)) != MGOPT_OK) return st;
    done = upto > done ? upto : done;
    if ((st = sink(ctx, s->p, s->n)) != MGOPT_OK) return st;
  }
  if (w->len > done) return sink(ctx, data + done, w->len - done);
  return MGOPT_OK;
}
