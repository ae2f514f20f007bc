/* src/internal.h — private declarations shared by the files of src/ (static once amalgamated). */
#ifndef MGOPT__INTERNAL_H
#define MGOPT__INTERNAL_H

#include "api.h"
#include <string.h> /* memcpy, memset, memcmp, strlen */
#include <stdarg.h> /* va_list for diagnostics and the text buffer */
#include <stdio.h>  /* vsnprintf (formatting only; no file I/O in the core) */
#include <math.h>   /* isnan, isinf, floor, ... in kernels and literals */
#include <limits.h> /* INT64_MAX and friends for checked arithmetic */
#include <stdlib.h> /* strtod, strtoll for literals; malloc family for the default allocator */

#if defined(__GNUC__) || defined(__clang__)
#define MGOPT__MAYBE_UNUSED __attribute__((unused))
#else
#define MGOPT__MAYBE_UNUSED
#endif
/* A hint that p will be read soon; no effect where unsupported. */
#if defined(__GNUC__) || defined(__clang__)
#define MGOPT__PREFETCH(p) __builtin_prefetch(p)
#else
#define MGOPT__PREFETCH(p) ((void)(p))
#endif
#ifndef MGOPT__PRIVATE
#define MGOPT__PRIVATE static MGOPT__MAYBE_UNUSED
#endif

/* An op flag of the folding budget (src/kernels/fold.c): the op belongs to
   a group of folds judged together to fit, so it folds whatever its own
   budget says. The program's fold_groups says some op may carry it;
   mgopt__fold_groups_end clears them all (the worklist driver at the end of
   its run, the pass manager after each pass). */
#define MGOPT__OP_FOLD_GROUP 0x80000000u

#ifndef MGOPT_ASSERT
#include <assert.h> /* default MGOPT_ASSERT */
#define MGOPT_ASSERT(x) assert(x)
#endif

#if defined(MGOPT_MALLOC) && defined(MGOPT_REALLOC) && defined(MGOPT_FREE)
/* user-provided */
#elif !defined(MGOPT_MALLOC) && !defined(MGOPT_REALLOC) && !defined(MGOPT_FREE)
#define MGOPT_MALLOC(sz) malloc(sz)
#define MGOPT_REALLOC(p, sz) realloc(p, sz)
#define MGOPT_FREE(p) free(p)
#else
#error "Define all or none of MGOPT_MALLOC, MGOPT_REALLOC and MGOPT_FREE."
#endif

#if defined(__cplusplus)
#define MGOPT_RESTRICT
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L
#define MGOPT_RESTRICT restrict
#else
#define MGOPT_RESTRICT
#endif

#define MGOPT__UNUSED(x) ((void)(x))
#define MGOPT__ARRAY_COUNT(a) ((int32_t)(sizeof(a) / sizeof((a)[0])))

/* ---- heap through the program's allocator (for tables that outlive no program) */
MGOPT__PRIVATE void *mgopt__heap_realloc(const mgopt_allocator *a, void *ptr, size_t old_size,
                                         size_t new_size);
#define mgopt__heap_free(a, ptr, old) ((void)mgopt__heap_realloc((a), (ptr), (old), 0))

/* ---- one hash map (core/map.c): 64-bit keys to a pointer or an int64.
   A key is an interned string or another pointer cast to uint64_t, or a
   64-bit hash; key 0 is reserved (empty slot).
   Open addressing with linear probing, power-of-two capacity (at least 64
   once used), load at most 3/4 (1/2 with MGOPT__MAP_SPARSE). Memory comes
   from `alloc` (the program's allocator); every call that may allocate
   reports failure (NULL or 0) and leaves the map as it was. No global state. */
typedef struct mgopt__map_slot {
  uint64_t key; /* 0 = empty */
  union {
    void *p;
    int64_t i;
    uint64_t u;
  } v;
} mgopt__map_slot;
typedef struct mgopt__map {
  const mgopt_allocator *alloc;
  mgopt__map_slot *s;
  size_t cap, n;
  unsigned flags; /* MGOPT__MAP_* */
} mgopt__map;
/* keys are already well-mixed hashes: their low bits pick the slot as they are */
#define MGOPT__MAP_HASHED 1u
/* load at most 1/2: shorter probes where most lookups miss, for twice the memory */
#define MGOPT__MAP_SPARSE 2u
#define mgopt__map_ptr_key(ptr) ((uint64_t)(uintptr_t)(ptr))
/* A hash as a key: 0 (reserved) becomes 1. */
static inline uint64_t mgopt__map_hash_key(uint64_t h) {
  return h ? h : 1;
}
/* An empty map drawing memory from alloc (no allocation yet). */
MGOPT__PRIVATE void mgopt__map_init(mgopt__map *m, const mgopt_allocator *alloc);
/* The same with MGOPT__MAP_* flags. */
MGOPT__PRIVATE void mgopt__map_init_flags(mgopt__map *m, const mgopt_allocator *alloc, unsigned flags);
/* Frees the slots; m is empty and usable again. */
MGOPT__PRIVATE void mgopt__map_free(mgopt__map *m);
/* Empties m, keeping its memory, with room for n keys without growing.
   0 on OOM or overflow (m is then emptied too). */
MGOPT__PRIVATE int mgopt__map_reset(mgopt__map *m, size_t n);
/* The slot of key, added with a zero value if absent (*added says which;
   added may be NULL). NULL on OOM. The slot moves when the map grows. */
MGOPT__PRIVATE mgopt__map_slot *mgopt__map_get(mgopt__map *m, uint64_t key, int *added);
/* The slot holding key, or NULL (with several: the first added). */
MGOPT__PRIVATE mgopt__map_slot *mgopt__map_find(const mgopt__map *m, uint64_t key);
/* A new slot for key (value zero) even when key is there already: a
   multimap for hash keys that distinct entries may share. NULL on OOM. */
MGOPT__PRIVATE mgopt__map_slot *mgopt__map_add(mgopt__map *m, uint64_t key);
/* The next slot holding sl's key after sl (from mgopt__map_find or an
   earlier call, with no add in between), or NULL. */
MGOPT__PRIVATE mgopt__map_slot *mgopt__map_next(const mgopt__map *m, const mgopt__map_slot *sl);

/* ---- checked arithmetic: return 0 on overflow */
static inline int mgopt__mul_i64(int64_t a, int64_t b, int64_t *out) {
  if (a < 0 || b < 0) return 0;
  if (a != 0 && b > INT64_MAX / a) return 0;
  *out = a * b;
  return 1;
}
static inline int mgopt__add_i64(int64_t a, int64_t b, int64_t *out) {
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return 0;
  *out = a + b;
  return 1;
}

/* ---- hashing: eight bytes per multiply (names are hashed on every intern,
   so a byte-at-a-time hash was a chain of dependent multiplies per character),
   the tail packed into one word with its length. Values are for in-process
   tables only: they depend on the machine's byte order. */
static inline uint64_t mgopt__hash_bytes(const void *data, size_t n, uint64_t h) {
  const unsigned char *p = (const unsigned char *)data;
  size_t len = n;
  uint64_t w = 0;
  for (; n >= 8; p += 8, n -= 8) {
    memcpy(&w, p, 8);
    h = (h ^ w) * 0x9fb21c651e98df25ull;
    h ^= h >> 32;
  }
  /* the tail as fixed-size loads (a variable-length copy stalls on the
     store-to-load round trip): the data's last 8 bytes when there are that
     many, else two 4-byte halves that may overlap, else three single bytes */
  if (n == 0) w = 0;
  else if (len >= 8) memcpy(&w, p + n - 8, 8);
  else if (n >= 4) {
    uint32_t a, b;
    memcpy(&a, p, 4);
    memcpy(&b, p + n - 4, 4);
    w = (uint64_t)a | (uint64_t)b << 32;
  } else
    w = (uint64_t)p[0] | (uint64_t)p[n / 2] << 8 | (uint64_t)p[n - 1] << 16;
  /* last word, then a full avalanche: tables index by the low bits, which
     a product alone leaves depending on the low bits of its input only */
  h = (h ^ w ^ (uint64_t)n << 56) * 0xd6e8feb86659fd93ull;
  h ^= h >> 29;
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 32);
}
#define MGOPT__HASH_SEED 14695981039346656037ull

/* ---- program internals */
typedef struct mgopt__chunk {
  struct mgopt__chunk *next;
  size_t size, used;
} mgopt__chunk;

/* The line:col (1-based) of the op with this id in the text it was parsed from. */
typedef struct mgopt__srcpos {
  uint32_t id;
  int32_t line, col;
} mgopt__srcpos;

struct mgopt_program {
  mgopt_allocator alloc;
  mgopt__chunk *chunks;      /* current chunk first */
  size_t arena_bytes;
  mgopt_status status;       /* sticky: NOMEM */
  /* interner: open addressing, heap memory */
  const char **intern_tab;
  uint64_t *intern_key; /* per slot: 32-bit hash << 32 | length */
  size_t intern_cap, intern_count;
  /* functions */
  mgopt_function **funcs;
  int32_t nfuncs, funcs_cap;
  mgopt__map func_by_name; /* interned name -> function */
  uint32_t next_id;
  mgopt__map fresh; /* fresh names: interned base name -> the next suffix to try */
  int64_t nlinked;           /* ops linked into any block (kept by ir.c) */
  /* free-form metadata for readers/writers (e.g. ONNX model fields), owned by them */
  void *onnx_meta;
  /* the target (mgopt_program_set_target); NULL accepts every op */
  mgopt_target_fn target;
  void *target_ud;
  /* where the .mil parser read each op (arena, by ascending op id) */
  const mgopt__srcpos *places;
  int64_t nplaces;
  int fold_groups; /* some op may carry MGOPT__OP_FOLD_GROUP */
};

/* Clears MGOPT__OP_FOLD_GROUP from every op of p when some may carry it (core/rewrite.c). */
MGOPT__PRIVATE void mgopt__fold_groups_end(mgopt_program *p);

/* Runs pass pd's patterns over every function with the worklist driver
   (core/passmgr.c), skipping functions without an op of a kind pd needs.
   Dead ops are NOT erased by the driver (a pass removes only what it made
   dead); with pd->fold_constants, constant operands are folded through
   ctx->fold. Adds rewrites and folds to ctx->rewrites. Pattern-table passes
   run through it. */
MGOPT__PRIVATE mgopt_status mgopt__pass_run_patterns(mgopt_pass_ctx *ctx, const mgopt_pass_def *pd);
/* The same for one pattern made at run time (its ud holds the pass's
   options or state): rooted at ops of root_kind, benefit 1, no folding. */
MGOPT__PRIVATE mgopt_status mgopt__pass_run_pattern(mgopt_pass_ctx *ctx, const char *name, int32_t root_kind,
                                                    mgopt_pattern_fn fn, void *ud);
/* Names op in d (d->op, and d->line/d->col when the op was read from .mil text). */
MGOPT__PRIVATE void mgopt__diag_place(mgopt_diag *d, const mgopt_op *op);
/* Copy of n bytes into the arena (NULL on OOM). */
MGOPT__PRIVATE void *mgopt__dup(mgopt_program *p, const void *src, size_t n);
MGOPT__PRIVATE char *mgopt__dupz(mgopt_program *p, const char *src, size_t n);
/* mgopt_tensor_new, with the data left unzeroed when zero is 0 (not strings). */
MGOPT__PRIVATE mgopt_tensor *mgopt__tensor_new_data(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                                  const int64_t *shape, int zero);
/* Bytes of the record every mgopt_tensor heads (the tensor and its private
   caches): a tensor made outside the arena reserves this much, zeroed. */
MGOPT__PRIVATE size_t mgopt__tensor_rec_size(void);
/* The interned copy of s, NULL when s was never interned (looks, never adds). */
MGOPT__PRIVATE const char *mgopt__intern_lookup(const mgopt_program *p, const char *s, size_t n);
/* A key equal for equal tensors and almost always unequal otherwise, from the
   dtype, shape and a few sampled windows of the data (see tensor.c). */
MGOPT__PRIVATE uint64_t mgopt__tensor_probe(mgopt_tensor *t);
/* A run of t's bytes from offset, under shape (not strings): a new tensor
   borrowing them; t is marked borrowed too, so a later write through either
   copies first and never changes the other. NULL if the run does not fit in
   t or on OOM. */
MGOPT__PRIVATE mgopt_tensor *mgopt__tensor_view(mgopt_program *p, mgopt_tensor *t, size_t offset, int32_t rank,
                                              const int64_t *shape);
/* The transpose of the 2-d tensor t of whole-byte elements (not strings;
   NULL for those and on OOM). t's bytes are frozen (t is marked borrowed: a
   later write copies first), so the result remembers them: its own
   transpose, until the result is written, is a tensor borrowing t's bytes,
   made without copying. */
MGOPT__PRIVATE mgopt_tensor *mgopt__tensor_transpose2d(mgopt_program *p, mgopt_tensor *t);
/* Records holder (an op) as the only holder of t. */
MGOPT__PRIVATE void mgopt__tensor_set_holder(mgopt_tensor *t, const void *holder);
/* 1 when t owns its bytes (not borrowed, shared or frozen) and holder is the
   one recorded by mgopt__tensor_set_holder: that holder's owner may write t
   in place. */
MGOPT__PRIVATE int mgopt__tensor_held_only_by(const mgopt_tensor *t, const void *holder);
/* ---- byte order. Tensor data is in the host's order; ONNX stores it
   little-endian. 1 on a little-endian host: a constant the compiler folds. */
static inline int mgopt__host_le(void) {
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
  return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
#else
  const union {
    uint32_t u;
    unsigned char b[4];
  } probe = {1u};
  return probe.b[0] == 1;
#endif
}
/* The unsigned index dtype of nbits bits a palettized weight's indices take
   (constexpr_lut_to_dense): uint1, uint2, uint3, uint4, uint6 for 1, 2, 3,
   4, 6; uint8 for any other. */
MGOPT__PRIVATE mgopt_dtype mgopt__dtype_lut_index(int nbits);
/* Bytes that swap as one unit between host and little-endian order for dt:
   the element width (each part's for complex types); 1 for 8-bit and sub-byte
   types (packed little-endian bit order per byte), which never swap. */
MGOPT__PRIVATE size_t mgopt__dtype_swap_unit(mgopt_dtype dt);
/* Copies n bytes of unit-byte elements between little-endian and host order
   (either way: the same operation). A memcpy on a little-endian host or for
   unit 1. dst and src must not overlap. */
MGOPT__PRIVATE void mgopt__le_copy(void *dst, const void *src, size_t n, size_t unit);
/* mgopt_program_alloc with zero = 0 for memory the caller fills at once. */
MGOPT__PRIVATE void *mgopt__arena_alloc(mgopt_program *p, size_t size, size_t align, int zero);
/* Sets the sticky OOM status and returns MGOPT_ERR_NOMEM. */
MGOPT__PRIVATE mgopt_status mgopt__oom(mgopt_program *p);

/* Prepends the text `pre` to d->msg (truncating at the end). d may be NULL. */
MGOPT__PRIVATE void mgopt__diag_prefix(mgopt_diag *d, const char *pre);

/* ---- growable arrays in heap memory (used by scratch structures) */
MGOPT__PRIVATE int mgopt__grow(const mgopt_allocator *a, void **ptr, int64_t *cap, int64_t need,
                               size_t elem);

/* ---- text buffer */
/* Room for extra more bytes and the NUL; 0 (b->oom set) when memory ran out. */
MGOPT__PRIVATE int mgopt__buf_reserve(mgopt_buf *b, size_t extra);
MGOPT__PRIVATE void mgopt__buf_putn(mgopt_buf *b, const char *s, size_t n);
MGOPT__PRIVATE void mgopt__buf_puts(mgopt_buf *b, const char *s);
MGOPT__PRIVATE void mgopt__buf_putc(mgopt_buf *b, char c);
MGOPT__PRIVATE void mgopt__buf_printf(mgopt_buf *b, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Shortest decimal text of a double that reads back to the same value (via
   strtod). Always contains '.', 'e', "inf" or "nan" so that it
   reads back as a float literal. buf must hold 40 bytes. */
MGOPT__PRIVATE void mgopt__fmt_f64(char *buf, double v);

/* ---- the op index: each function keeps its linked ops (nested blocks
   included) in one list per op kind, so a pass can visit the ops of the kinds
   it could change without walking the program. Every op carries a label that
   increases in program order (pre-order: an op, then the ops of its nested
   blocks, then its next op), kept by ir.c on every link, move and erase; a
   list is label-ascending unless `unsorted`, and sorted again when read. */
typedef struct mgopt__kind_list {
  mgopt_op **ops;         /* live ops and NULL holes; ops[n - 1] is live when n > 0 */
  int64_t n, cap, holes;
  int unsorted;
} mgopt__kind_list;

typedef struct mgopt__func_rec {
  mgopt_function f;       /* first: every mgopt_function is the head of one of these */
  mgopt__kind_list *kinds;/* MGOPT_OP__COUNT lists (heap), NULL until the first op */
  int64_t nops;           /* ops linked into the function, nested blocks included */
  int broken;             /* a list failed to grow (OOM): the lists are incomplete */
} mgopt__func_rec;

typedef struct mgopt__op_rec {
  mgopt_op op;            /* first: every mgopt_op is the head of one of these */
  uint64_t label;         /* position in its function's pre-order, while linked */
  int64_t slot;           /* index in its kind list; MGOPT__SLOT_OFF when not linked into a function */
} mgopt__op_rec;
#define MGOPT__SLOT_OFF (-1)     /* not linked into a function */
#define MGOPT__SLOT_UNLISTED (-2) /* linked, but its list could not grow */
#define MGOPT__OP_REC(o) ((mgopt__op_rec *)(void *)(o))
/* 1 when op a comes before op b in their function's pre-order (both linked into one function). */
#define MGOPT__OP_PRECEDES(a, b) (MGOPT__OP_REC(a)->label < MGOPT__OP_REC(b)->label)
#define MGOPT__FUNC_REC(f) ((mgopt__func_rec *)(void *)(f))

/* The ops of function f whose kinds are kinds[0..nk) (distinct), in program
   order, into *out (heap, grown by mgopt__grow; *cap its capacity). Returns
   their count, or -1 when the index is incomplete or memory runs out (then
   walk the function instead). */
MGOPT__PRIVATE int64_t mgopt__index_collect(mgopt_function *f, const int32_t *kinds, int32_t nk,
                                            mgopt_op ***out, int64_t *cap);
/* The ops of kind linked into function f (nested blocks included), in
   program order: *n of them, valid until the IR changes. NULL with *n = -1
   when the index is incomplete (walk the function instead). */
MGOPT__PRIVATE mgopt_op *const *mgopt__index_list(mgopt_function *f, int32_t kind, int64_t *n);
/* Ops of kind linked into function f (nested blocks included), or -1 when
   the index is incomplete: O(1). */
MGOPT__PRIVATE int64_t mgopt__index_kind_count(const mgopt_function *f, int32_t kind);
/* 1 if a parsed option value is one of od->allowed (passmgr.c); its text for a message. */
MGOPT__PRIVATE int mgopt__pm_allowed(const mgopt_opt_def *od, const mgopt_opt_value *v);
MGOPT__PRIVATE const char *mgopt__pm_allowed_text(const mgopt_opt_def *od, char *buf, size_t cap);
/* Ops linked into function f, nested blocks included: O(1). */
MGOPT__PRIVATE int64_t mgopt__index_op_count(const mgopt_function *f);
/* Calls fn on each op of kind (-1: of every kind) linked into function f
   (nested blocks included), in no set order, until fn returns nonzero.
   Returns what fn returned last (0 when every call returned 0), or -1 when
   the index is incomplete (walk the function instead). A scan of the lists'
   arrays, not of the linked ops: the loads of different ops overlap, and
   the op structs are prefetched ahead. fn must not change the IR. */
MGOPT__PRIVATE int mgopt__index_any(mgopt_function *f, int32_t kind, int (*fn)(const mgopt_op *op, void *ud),
                                    void *ud);
/* 1 if some op linked into f is dead (mgopt__op_is_dead), 0 if none, -1 when
   the index is incomplete. */
MGOPT__PRIVATE int mgopt__index_has_dead(mgopt_function *f);
/* Frees the lists of f's index (heap memory). */
MGOPT__PRIVATE void mgopt__index_free(mgopt_function *f);
/* Removes function f from its program: its body's ops are erased, its name
   is free again. Nothing outside f may refer to its values. */
MGOPT__PRIVATE void mgopt__function_drop(mgopt_function *f);

/* ---- IR internals */
/* Unlinks a use from its value's list. */
MGOPT__PRIVATE void mgopt__use_unlink(mgopt_use *u);
/* Links u (owned by op/block) into v's use list; u->value = v. v may be NULL. */
MGOPT__PRIVATE void mgopt__use_link(mgopt_use *u, mgopt_value *v);
/* New value (not attached). */
MGOPT__PRIVATE mgopt_value *mgopt__value_new(mgopt_program *p, const char *name);
/* New empty block owned by op (or a function body when op is NULL). */
MGOPT__PRIVATE mgopt_block *mgopt__block_new(mgopt_program *p, const char *name);
/* Copies t into the program's arena (dims). */
MGOPT__PRIVATE mgopt_status mgopt__type_copy(mgopt_program *p, mgopt_type *dst, const mgopt_type *src);
/* The type rule: where two types of one value contradict each other. 0
   nowhere; MGOPT__CLASH_KIND, MGOPT__CLASH_DTYPE, MGOPT__CLASH_RANK; or 1 + j
   when static dim j differs. Unknowns contradict nothing: an unknown dtype or
   rank, a dim that is not static on either side (a symbol or unknown). With
   strict_dtype an unknown dtype of decl does contradict a known one of have
   (a declared output type against its inference: the declaration must name
   the dtype inference gives); without it either side's unknown dtype passes
   (a while_loop's block arguments and body outputs against its loop vars). */
#define MGOPT__CLASH_KIND (-1)
#define MGOPT__CLASH_DTYPE (-2)
#define MGOPT__CLASH_RANK (-3)
MGOPT__PRIVATE int32_t mgopt__type_clash(const mgopt_type *decl, const mgopt_type *have, int strict_dtype);
/* Runs op's type inference without storing the result: *out gets the output
   types, in tmp (ntmp entries) or in arena memory for more outputs, or NULL
   when op has no inference (or no outputs). MGOPT_ERR_NOMEM with d untouched
   when that memory fails; otherwise what the inference returns, its message
   in d. */
MGOPT__PRIVATE mgopt_status mgopt__op_infer_types(mgopt_program *p, const mgopt_op *op, mgopt_type *tmp, int32_t ntmp,
                                                 mgopt_type **out, mgopt_diag *d);
/* op changes something besides its outputs: a registered op without the pure
   trait (coreml_update_state writes a state), or any op flagged
   MGOPT_OP_HAS_EFFECTS. Such an op is never erased, merged with another or
   moved across another op with effects. Other opaque ops have none: model
   graphs have no side effects. */
MGOPT__PRIVATE int mgopt__op_has_effects(const mgopt_op *op);
/* op may be erased: it has outputs, none is used, and neither it nor an op
   in its nested blocks has effects (mgopt__op_has_effects). */
MGOPT__PRIVATE int mgopt__op_is_dead(const mgopt_op *op);
/* Registry default for attribute `name` of op kind, or NULL. */
MGOPT__PRIVATE const mgopt_attr_def *mgopt__attr_def(int32_t kind, const char *name);

/* An einsum equation read against its operands' ranks (core/infer/reduce.c).
   Labels a-z are 0-25, A-Z 26-51; the dims an ellipsis stands for are
   52 + j, right-aligned over the longest ellipsis (numpy broadcasting). The
   output is the one after "->", else the ellipsis dims then the labels met
   once, in alphabetical order. */
#define MGOPT__EINSUM_MAX_OPS 8
#define MGOPT__EINSUM_LABELS (52 + MGOPT_MAX_RANK)
typedef struct mgopt__einsum {
  int32_t nops, rank[MGOPT__EINSUM_MAX_OPS], out_rank;
  uint8_t lab[MGOPT__EINSUM_MAX_OPS][MGOPT_MAX_RANK], out[MGOPT_MAX_RANK];
} mgopt__einsum;
/* 1 when eq is a well-formed equation for nops operands of the given ranks (e filled), else 0. */
MGOPT__PRIVATE int mgopt__einsum_parse(const char *eq, size_t len, int32_t nops, const int32_t *ranks, mgopt__einsum *e);

#endif /* MGOPT__INTERNAL_H */
