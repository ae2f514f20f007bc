/* src/onnx/wire.h — private declarations of the protobuf wire codec (pb.c): wire types, reader results, the back-to-front writer. */
#ifndef MGOPT__ONNX_WIRE_H
#define MGOPT__ONNX_WIRE_H
#include "../internal.h"
#include "onnx_api.h"

/* Wire types. 3 and 4 (groups) are deprecated and rejected by the readers. */
#define MGOPT__PB_VARINT 0
#define MGOPT__PB_FIXED64 1
#define MGOPT__PB_LEN 2
#define MGOPT__PB_SGROUP 3
#define MGOPT__PB_EGROUP 4
#define MGOPT__PB_FIXED32 5

/* Results of the primitive readers. */
#define MGOPT__PB_OK 0
#define MGOPT__PB_TRUNCATED 1 /* the bytes end inside the item */
#define MGOPT__PB_OVERFLOW 2  /* varint longer than 10 bytes or above 2^64 - 1 */
#define MGOPT__PB_BADWIRE 3   /* wire type 6 or 7 */
#define MGOPT__PB_GROUP 4     /* wire type 3 or 4 */
#define MGOPT__PB_PASTEND 5   /* a length prefix larger than the bytes left */

/* sint64 (zigzag) encoding. */
static inline int64_t mgopt__pb_unzigzag(uint64_t v) {
  return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}
static inline uint64_t mgopt__pb_zigzag(int64_t v) {
  return ((uint64_t)v << 1) ^ (v < 0 ? ~(uint64_t)0 : (uint64_t)0);
}

/* Primitive readers over b[*pos, end): MGOPT__PB_OK advances *pos. */
MGOPT__PRIVATE int mgopt__pb_varint(const uint8_t *b, size_t *pos, size_t end, uint64_t *out);
MGOPT__PRIVATE int mgopt__pb_fixed32(const uint8_t *b, size_t *pos, size_t end, uint32_t *out);
MGOPT__PRIVATE int mgopt__pb_fixed64(const uint8_t *b, size_t *pos, size_t end, uint64_t *out);
MGOPT__PRIVATE int mgopt__pb_key(const uint8_t *b, size_t *pos, size_t end, uint32_t *field, int *wt);
MGOPT__PRIVATE int mgopt__pb_skip(const uint8_t *b, size_t *pos, size_t end, int wt, size_t *start,
                                  size_t *len);
MGOPT__PRIVATE const char *mgopt__pb_err_str(int r);

/* ---------------------------------------------------------------- writer
   The writer fills its buffer from the back: a message's fields are emitted
   last to first, and a nested message is written before its length prefix,
   which is then known exactly. Every byte is written once, so encoding is
   linear in the output size however deep the nesting. The finished bytes are
   buf[cap - len, cap).

   Byte fields of at least borrow_min bytes (0 = never) are not copied: the
   writer records a span (the field's pointer and length, and where it sits
   among the buffered bytes) and counts its length in vlen, so the output is
   the buffered bytes with the spans spliced in (mgopt__pbw_emit). A weight
   borrowed from the caller's file thus reaches the output file without ever
   being copied in memory. Marks and lengths count both kinds of bytes. */
#define MGOPT__PBW_BORROW_MIN 4096

typedef struct mgopt__pbw_span {
  size_t at; /* buffered bytes written before the span, i.e. after it in the output */
  const void *p;
  size_t n;
} mgopt__pbw_span;

typedef struct mgopt__pbw {
  uint8_t *buf;
  size_t cap, len;
  int oom;
  const mgopt_allocator *alloc;
  size_t borrow_min;       /* 0 = copy every byte field */
  size_t vlen;             /* bytes held in spans */
  mgopt__pbw_span *spans;  /* in writing order: last in the output first */
  int64_t nspans, spancap;
} mgopt__pbw;

/* Output bytes so far, spans included: what marks and length prefixes count. */
static inline size_t mgopt__pbw_mark(const mgopt__pbw *w) { return w->len + w->vlen; }

MGOPT__PRIVATE int mgopt__pbw_reserve(mgopt__pbw *w, size_t n);
MGOPT__PRIVATE void mgopt__pbw_free(mgopt__pbw *w);
MGOPT__PRIVATE void mgopt__pbw_bytes(mgopt__pbw *w, const void *p, size_t n);
MGOPT__PRIVATE void mgopt__pbw_varint(mgopt__pbw *w, uint64_t v);
MGOPT__PRIVATE void mgopt__pbw_fixed32(mgopt__pbw *w, uint32_t v);
MGOPT__PRIVATE void mgopt__pbw_fixed64(mgopt__pbw *w, uint64_t v);
MGOPT__PRIVATE void mgopt__pbw_key(mgopt__pbw *w, uint32_t field, int wt);
MGOPT__PRIVATE void mgopt__pbw_close(mgopt__pbw *w, size_t mark, uint32_t field);
MGOPT__PRIVATE void mgopt__pbw_borrow(mgopt__pbw *w, const void *p, size_t n);
MGOPT__PRIVATE void mgopt__pbw_lenfield(mgopt__pbw *w, uint32_t field, const void *p, size_t n);
MGOPT__PRIVATE mgopt_status mgopt__pbw_emit(const mgopt__pbw *w, mgopt_write_fn sink, void *ctx);

#endif
