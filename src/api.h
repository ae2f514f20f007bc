/* src/api.h — the public declarations of mgopt.h: IR, registry, text format, rewriter, pass manager. */
#ifndef MGOPT_H_INCLUDED
#define MGOPT_H_INCLUDED

#include <stddef.h> /* size_t */
#include <stdint.h> /* fixed-width integers in the IR */

#define MGOPT_VERSION_MAJOR 0
#define MGOPT_VERSION_MINOR 1
#define MGOPT_VERSION_PATCH 0
#define MGOPT_VERSION_STRING "0.1.0"

#ifndef MGOPTDEF
#ifdef MGOPT_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define MGOPTDEF static __attribute__((unused))
#else
#define MGOPTDEF static
#endif
#else
#define MGOPTDEF extern
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- status */

/* Every status code, once: the enum and mgopt_status_str() both come from it. */
#define MGOPT_STATUS_LIST(X)                                               \
  X(OK, "ok")                                                              \
  X(ERR_NOMEM, "out of memory")                                            \
  X(ERR_INVALID_ARG, "invalid argument")                                   \
  X(ERR_PARSE, "syntax error")                                             \
  X(ERR_TYPE, "type error")                                                \
  X(ERR_VERIFY, "IR verification failed")                                  \
  X(ERR_UNSUPPORTED, "unsupported construct")                              \
  X(ERR_LIMIT, "a configured limit was exceeded")                          \
  X(ERR_IO, "input/output error")                                          \
  X(ERR_CORRUPT, "malformed input data")                                   \
  X(ERR_NOT_FOUND, "not found")                                            \
  X(ERR_PASS, "pass failed")                                               \
  X(ERR_NO_FIXPOINT, "rewrite cap reached before a fixpoint")

typedef enum mgopt_status {
#define MGOPT__STATUS_ENUM(name, str) MGOPT_##name,
  MGOPT_STATUS_LIST(MGOPT__STATUS_ENUM)
#undef MGOPT__STATUS_ENUM
  MGOPT_STATUS__COUNT
} mgopt_status;

/* A short constant string for a status code; never NULL. */
MGOPTDEF const char *mgopt_status_str(mgopt_status s);
/* "0.1.0" */
MGOPTDEF const char *mgopt_version(void);

/* Diagnostics are written into a caller-owned struct; the library never prints.
   line/col are 1-based (0 = not applicable); offset is a byte offset into a
   binary input (-1 = not applicable); op names the op concerned ("" = none). */
#define MGOPT_DIAG_MSG_MAX 320
typedef struct mgopt_diag {
  mgopt_status status;
  int line, col;
  int64_t offset;
  char op[96];
  char msg[MGOPT_DIAG_MSG_MAX];
} mgopt_diag;

/* Sets the status and the message and returns s; the place (line, col,
   offset, op) is left as the caller set it. d may be NULL (then it only
   returns s). Every fallible call clears d first, so a place never leaks
   from one call into the next. */
MGOPTDEF mgopt_status mgopt_diag_set(mgopt_diag *d, mgopt_status s, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Clears d to MGOPT_OK. d may be NULL. */
MGOPTDEF void mgopt_diag_clear(mgopt_diag *d);

/* ---------------------------------------------------------------- memory */

/* One function does everything: new_size == 0 frees ptr; ptr == NULL allocates.
   old_size is the size of ptr's block (0 when ptr is NULL). ctx is passed through. */
typedef struct mgopt_allocator {
  void *(*realloc)(void *ctx, void *ptr, size_t old_size, size_t new_size);
  void *ctx;
} mgopt_allocator;

/* ---------------------------------------------------------------- types */

/* Element types. Sub-byte types (int4, uint1..uint6) are stored packed,
   little-endian bit order, as in Core ML's palettization indices. The last
   group exists so ONNX models carrying them survive import and export. */
#define MGOPT_DTYPE_LIST(X)            \
  X(UNKNOWN, "unknown", 0)             \
  X(BOOL, "bool", 8)                   \
  X(INT4, "int4", 4)                   \
  X(UINT1, "uint1", 1)                 \
  X(UINT2, "uint2", 2)                 \
  X(UINT3, "uint3", 3)                 \
  X(UINT4, "uint4", 4)                 \
  X(UINT6, "uint6", 6)                 \
  X(INT8, "int8", 8)                   \
  X(UINT8, "uint8", 8)                 \
  X(INT16, "int16", 16)                \
  X(UINT16, "uint16", 16)              \
  X(INT32, "int32", 32)                \
  X(UINT32, "uint32", 32)              \
  X(INT64, "int64", 64)                \
  X(UINT64, "uint64", 64)              \
  X(FP16, "fp16", 16)                  \
  X(BF16, "bf16", 16)                  \
  X(FP32, "fp32", 32)                  \
  X(FP64, "fp64", 64)                  \
  X(STRING, "string", 0)               \
  X(COMPLEX64, "complex64", 64)        \
  X(COMPLEX128, "complex128", 128)     \
  X(FP8E4M3FN, "fp8e4m3fn", 8)         \
  X(FP8E4M3FNUZ, "fp8e4m3fnuz", 8)     \
  X(FP8E5M2, "fp8e5m2", 8)             \
  X(FP8E5M2FNUZ, "fp8e5m2fnuz", 8)     \
  X(UINT4X, "uint4x", 4)               \
  X(INT4X, "int4x", 4)

typedef enum mgopt_dtype {
#define MGOPT__DT_ENUM(name, str, bits) MGOPT_DT_##name,
  MGOPT_DTYPE_LIST(MGOPT__DT_ENUM)
#undef MGOPT__DT_ENUM
  MGOPT_DT__COUNT
} mgopt_dtype;

/* Name as printed in .mil ("fp32"); "unknown" for out-of-range values. */
MGOPTDEF const char *mgopt_dtype_name(mgopt_dtype t);
/* Parses a dtype name or common alias (int32/i32, fp32/float32, fp16/float16, ...).
   Returns MGOPT_DT_UNKNOWN if not recognised. */
MGOPTDEF mgopt_dtype mgopt_dtype_from_name(const char *s, size_t n);
/* Bits per element (0 for string). */
MGOPTDEF int mgopt_dtype_bits(mgopt_dtype t);
MGOPTDEF int mgopt_dtype_is_float(mgopt_dtype t);   /* fp16 bf16 fp32 fp64 fp8* */
MGOPTDEF int mgopt_dtype_is_int(mgopt_dtype t);     /* signed or unsigned integers, not bool */
MGOPTDEF int mgopt_dtype_is_signed(mgopt_dtype t);
/* Bytes needed to store n elements (sub-byte types packed); -1 on overflow. */
MGOPTDEF int64_t mgopt_dtype_nbytes(mgopt_dtype t, int64_t n);

/* A dimension: static (v >= 0, sym NULL), symbolic (sym != NULL, interned
   in the program, compare by pointer), or unknown (v < 0, sym NULL). */
typedef struct mgopt_dim {
  int64_t v;
  const char *sym;
} mgopt_dim;

/* The highest tensor rank mgopt handles. The .mil parser and the ONNX reader
   refuse a type or tensor of higher rank (MGOPT_ERR_LIMIT), type inference
   refuses to produce one (MGOPT_ERR_TYPE), passes and folding kernels leave
   such ops alone. */
#define MGOPT_MAX_RANK 32

typedef enum mgopt_type_kind {
  MGOPT_TYPE_TENSOR = 0, /* dtype + rank + dims; rank -1 = unknown rank */
  MGOPT_TYPE_OTHER = 1,  /* a non-tensor type kept as bytes (e.g. an ONNX TypeProto for a sequence) */
  MGOPT_TYPE_STATE = 2   /* a state (Core ML's mutable model state) holding a tensor of dtype + rank +
                            dims: read by read_state, written by coreml_update_state, `state(1, fp16)` */
} mgopt_type_kind;

typedef struct mgopt_type {
  uint8_t kind;   /* mgopt_type_kind */
  uint8_t dtype;  /* mgopt_dtype */
  int32_t rank;   /* -1 = unknown */
  mgopt_dim *dims; /* rank entries, arena-owned; NULL when rank <= 0 */
  const uint8_t *other; /* MGOPT_TYPE_OTHER: encoded bytes (arena-owned) */
  size_t other_len;
} mgopt_type;

/* ---------------------------------------------------------------- tensors */

/* A constant tensor. Tensors are made only by mgopt_tensor_new* (and by the
   readers and passes) in a program's arena, never declared by the caller:
   the library keeps private caches beside each one. */
typedef struct mgopt_tensor {
  uint8_t dtype;      /* mgopt_dtype */
  uint8_t borrowed;   /* data points into a caller's buffer: copy before writing */
  int32_t rank;
  int64_t *shape;     /* rank entries, all static */
  int64_t numel;
  size_t nbytes;
  void *data;         /* owned: 64-byte aligned, arena memory; borrowed: any alignment.
                         STRING tensors: data is an array of numel mgopt_str. */
  /* where the bytes came from, for writers that keep external data in place */
  const char *ext_location;
  int64_t ext_offset;
} mgopt_tensor;

typedef struct mgopt_str {
  const char *ptr;
  size_t len;
} mgopt_str;

/* ---------------------------------------------------------------- IR */

typedef struct mgopt_program mgopt_program;
typedef struct mgopt_function mgopt_function;
typedef struct mgopt_block mgopt_block;
typedef struct mgopt_op mgopt_op;
typedef struct mgopt_value mgopt_value;
typedef struct mgopt_use mgopt_use;
typedef struct mgopt_slot mgopt_slot;
typedef struct mgopt_attr mgopt_attr;

/* A use of a value: by operand slot `slot` element `index` of `op`, or by
   output `index` of `block` (op == NULL). Kept in the value's doubly linked
   use list: add and remove are O(1). */
struct mgopt_use {
  mgopt_value *value;
  mgopt_op *op;
  mgopt_block *block;
  int32_t slot;
  int32_t index;
  mgopt_use *prev, *next;
};

#define MGOPT_VALUE_ABSENT 1u /* placeholder for an omitted optional output (ONNX "") */

struct mgopt_value {
  const char *name;     /* interned */
  mgopt_type type;
  mgopt_op *def;        /* producing op, or NULL for a block argument */
  mgopt_block *owner;   /* block whose argument this is (def == NULL) */
  int32_t index;        /* output index in def, or argument index in owner */
  uint32_t flags;
  mgopt_use *uses;      /* head of the use list; uses by block outputs come first */
  int32_t nuses;
  int32_t nblock_uses;  /* how many of the uses are block outputs (op == NULL) */
  uint32_t id;          /* unique per program, stable */
};

/* A named operand slot: one value (is_list 0, n 1), absent (n 0), or a variadic list. */
struct mgopt_slot {
  const char *name;     /* interned */
  int32_t is_list;
  int32_t n;
  mgopt_use *uses;      /* n entries (arena); uses[i].value is the operand */
};

typedef enum mgopt_attr_kind {
  MGOPT_ATTR_NONE = 0,
  MGOPT_ATTR_BOOL,
  MGOPT_ATTR_INT,     /* int64 */
  MGOPT_ATTR_FLOAT,   /* double */
  MGOPT_ATTR_STRING,
  MGOPT_ATTR_BOOLS,
  MGOPT_ATTR_INTS,
  MGOPT_ATTR_FLOATS,
  MGOPT_ATTR_STRINGS,
  MGOPT_ATTR_TENSOR,  /* a typed tensor (const's val, ONNX tensor attributes) */
  MGOPT_ATTR_BYTES    /* opaque encoded bytes with a tag (e.g. an ONNX TypeProto / SparseTensorProto) */
} mgopt_attr_kind;

struct mgopt_attr {
  const char *name;   /* interned */
  uint8_t kind;       /* mgopt_attr_kind */
  int32_t tag;        /* MGOPT_ATTR_BYTES: what the bytes are (e.g. the ONNX AttributeProto type) */
  int64_t n;          /* list length; byte count for MGOPT_ATTR_BYTES */
  union {
    int64_t i;        /* BOOL, INT */
    double f;         /* FLOAT */
    mgopt_str s;      /* STRING */
    int64_t *ints;    /* BOOLS (0/1), INTS */
    double *floats;
    mgopt_str *strs;
    mgopt_tensor *t;
    const uint8_t *bytes;
  } u;
};

#define MGOPT_OP_ERASED 1u
#define MGOPT_OP_ONNX_CONSTANT_NODE 2u /* a const that was an ONNX Constant node (export may keep it a node) */
/* The op has side effects (writes memory or state outside its outputs, does
   I/O): passes never erase it, merge it with another op or move a state op
   across it. Registered ops say so by their traits (an op without
   MGOPT_TRAIT_PURE, e.g. coreml_update_state); for an opaque op, whose
   semantics mgopt does not know, its reader or the caller sets this flag.
   The ONNX reader sets it on no op: no ai.onnx op has side effects; a
   caller whose custom-domain op has some marks it after loading. In .mil
   text it is the argument `has_effects=true` (printed after the
   attributes; not an attribute). */
#define MGOPT_OP_HAS_EFFECTS 4u
/* A reduce_mean / reduce_max that was an ONNX GlobalAveragePool /
   GlobalMaxPool: the writer gives it back as that op (a ReduceMean over the
   same axes computes the same mean, but ONNX Runtime sums it in another
   order, so a ReduceMean read in stays one). */
#define MGOPT_OP_ONNX_GLOBAL_POOL 8u

struct mgopt_op {
  mgopt_op *prev, *next;  /* in parent block */
  mgopt_block *parent;    /* NULL while detached */
  mgopt_program *program;
  int32_t kind;           /* mgopt_op_kind; MGOPT_OP_OPAQUE for unknown ops */
  const char *type;       /* op type name, interned ("conv", "onnx::NonMaxSuppression") */
  const char *name;       /* interned; may be NULL */
  uint32_t flags;
  uint32_t id;            /* unique per program, stable */
  int32_t nslots;
  mgopt_slot *slots;
  int32_t nattrs;
  mgopt_attr *attrs;
  int32_t nouts;
  mgopt_value **outs;
  int32_t nblocks;
  mgopt_block **blocks;
  void *scratch;          /* free for the running pass; NULL between passes */
};

struct mgopt_block {
  mgopt_program *program;
  const char *name;       /* "" for function bodies; e.g. "loop_cond", "then_branch" for nested */
  mgopt_op *first, *last;
  int32_t nops;
  mgopt_op *parent_op;    /* NULL for a function body */
  mgopt_function *func;
  int32_t nargs;
  mgopt_value **args;
  int32_t nouts;
  mgopt_use **outs;       /* nouts uses, owner block */
};

struct mgopt_function {
  const char *name;       /* interned */
  const char *opset;      /* e.g. "CoreML7"; NULL if none */
  mgopt_block *body;      /* inputs = body->args, outputs = body->outs */
  mgopt_program *program;
  /* the function's own attributes (e.g. `implements`: the composite op it
     stands for); names interned, in the arena. In .mil text:
     `name[opset] attributes(key=literal, ...) (args) { ... }` */
  int32_t nattrs;
  mgopt_attr *attrs;
};

/* ---- program ---- */

/* Creates an empty program. alloc may be NULL (the MGOPT_MALLOC family is used).
   Returns NULL only when memory is exhausted. */
MGOPTDEF mgopt_program *mgopt_program_create(const mgopt_allocator *alloc);
/* Frees everything the program owns. NULL is ignored. */
MGOPTDEF void mgopt_program_destroy(mgopt_program *p);
/* Sticky status: MGOPT_ERR_NOMEM once any arena allocation failed, else MGOPT_OK. */
MGOPTDEF mgopt_status mgopt_program_status(const mgopt_program *p);
/* Arena allocation, zeroed, aligned to `align` (power of two, <= 4096). NULL on
   failure (and the sticky status is set). Freed with the program. */
MGOPTDEF void *mgopt_program_alloc(mgopt_program *p, size_t size, size_t align);
/* Interns n bytes (need not be NUL-terminated); equal strings give the same pointer.
   NULL on memory exhaustion. */
MGOPTDEF const char *mgopt_program_intern(mgopt_program *p, const char *s, size_t n);
MGOPTDEF const char *mgopt_program_intern_cstr(mgopt_program *p, const char *s);
/* Bytes held by the arena (for benchmarks and limits). */
MGOPTDEF size_t mgopt_program_arena_bytes(const mgopt_program *p);

MGOPTDEF int32_t mgopt_program_function_count(const mgopt_program *p);
MGOPTDEF mgopt_function *mgopt_program_function_at(const mgopt_program *p, int32_t i);
/* NULL if absent. */
MGOPTDEF mgopt_function *mgopt_program_function(const mgopt_program *p, const char *name);
/* Adds a function with an empty body. NULL on OOM or if the name exists. */
MGOPTDEF mgopt_function *mgopt_function_new(mgopt_program *p, const char *name);
/* The function an op calls: an opaque op whose type is the name of one of
   the program's functions (an ONNX model-local function `domain::Name`
   called from a node of that domain and type). NULL for any other op. */
MGOPTDEF mgopt_function *mgopt_op_callee(const mgopt_op *op);
/* Attribute `name` of function f as stored, NULL if absent. */
MGOPTDEF const mgopt_attr *mgopt_function_attr(const mgopt_function *f, const char *name);
/* Number of live ops in the program, nested blocks included (ops inside the
   blocks of a detached op count too). O(1). */
MGOPTDEF int64_t mgopt_program_op_count(const mgopt_program *p);

/* The target: what the program will be written to (an ONNX opset, a runtime)
   may not express every op. A rewrite that makes a new kind of op (a fusion)
   asks mgopt_program_target_accepts about the op it built and backs out when
   the answer is 0, so optimizing never leaves an op the writer must refuse.
   `accepts` returns 1 when the target can express `op` as it stands (kind,
   attributes, operand types). No target (the default, or accepts NULL)
   accepts every op. The ONNX reader sets one for the model's opset. */
typedef int (*mgopt_target_fn)(const mgopt_program *p, const mgopt_op *op, void *ud);
MGOPTDEF void mgopt_program_set_target(mgopt_program *p, mgopt_target_fn accepts, void *ud);
MGOPTDEF int mgopt_program_target_accepts(const mgopt_program *p, const mgopt_op *op);

/* ---- types ---- */

/* Tensor type with `rank` dims; dims may be NULL (all unknown). Dims are copied to the arena. */
MGOPTDEF mgopt_status mgopt_type_make(mgopt_program *p, mgopt_type *out, mgopt_dtype dt,
                                      int32_t rank, const mgopt_dim *dims);
/* Tensor type with static shape. */
MGOPTDEF mgopt_status mgopt_type_make_static(mgopt_program *p, mgopt_type *out, mgopt_dtype dt,
                                             int32_t rank, const int64_t *shape);
/* Structural equality (symbols by pointer). */
MGOPTDEF int mgopt_type_equal(const mgopt_type *a, const mgopt_type *b);
/* 1 if every dim is static and the rank known. */
MGOPTDEF int mgopt_type_is_static(const mgopt_type *t);
/* Element count of a static type, -1 if not static or on overflow. */
MGOPTDEF int64_t mgopt_type_numel(const mgopt_type *t);
static inline mgopt_dim mgopt_dim_static(int64_t v) { mgopt_dim d; d.v = v; d.sym = NULL; return d; }
static inline mgopt_dim mgopt_dim_unknown(void) { mgopt_dim d; d.v = -1; d.sym = NULL; return d; }
static inline int mgopt_dim_is_static(mgopt_dim d) { return d.sym == NULL && d.v >= 0; }

/* ---- tensors ---- */

/* New owned tensor, zero-filled, 64-byte aligned. shape may be NULL when rank is 0. */
MGOPTDEF mgopt_tensor *mgopt_tensor_new(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                        const int64_t *shape);
/* New tensor borrowing `data` (nbytes must match); the caller keeps it alive
   as long as the program. */
MGOPTDEF mgopt_tensor *mgopt_tensor_new_borrowed(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                                 const int64_t *shape, const void *data,
                                                 size_t nbytes);
/* Scalar tensors. */
MGOPTDEF mgopt_tensor *mgopt_tensor_new_scalar_f64(mgopt_program *p, mgopt_dtype dt, double v);
MGOPTDEF mgopt_tensor *mgopt_tensor_new_scalar_i64(mgopt_program *p, mgopt_dtype dt, int64_t v);
/* Read-only data, aligned for its element type (up to 8 bytes), so it can be
   read through a typed pointer. Owned data is 64-byte aligned; borrowed data
   stays where it is unless it is misaligned for its type, in which case it is
   copied into the arena once. */
MGOPTDEF const void *mgopt_tensor_data(mgopt_program *p, mgopt_tensor *t);
/* Writable data: copies borrowed data into the arena first. NULL on OOM. */
MGOPTDEF void *mgopt_tensor_data_mut(mgopt_program *p, mgopt_tensor *t);
/* Element i as double / int64 (any dtype but string; sub-byte types unpacked). */
MGOPTDEF double mgopt_tensor_get_f64(const mgopt_tensor *t, int64_t i);
MGOPTDEF int64_t mgopt_tensor_get_i64(const mgopt_tensor *t, int64_t i);
/* Stores element i (converting with round-to-nearest-even for floats). The tensor
   must be owned (not borrowed). */
MGOPTDEF void mgopt_tensor_set_f64(mgopt_tensor *t, int64_t i, double v);
MGOPTDEF void mgopt_tensor_set_i64(mgopt_tensor *t, int64_t i, int64_t v);
/* Same dtype, shape and bytes (bitwise; +0/-0 and NaN payloads are distinct). */
MGOPTDEF int mgopt_tensor_equal(const mgopt_tensor *a, const mgopt_tensor *b);
/* Content hash (dtype, shape, bytes), cached in the tensor. */
MGOPTDEF uint64_t mgopt_tensor_hash(mgopt_tensor *t);
/* Deep copy into p (owned). */
MGOPTDEF mgopt_tensor *mgopt_tensor_clone(mgopt_program *p, const mgopt_tensor *t);
/* 1 if all elements equal v (numerically, by mgopt_tensor_get_f64). */
MGOPTDEF int mgopt_tensor_all_equal_f64(const mgopt_tensor *t, double v);

/* fp16 / bf16 conversions (round to nearest even; NaN stays NaN). */
MGOPTDEF uint16_t mgopt_f32_to_f16(float f);
MGOPTDEF float mgopt_f16_to_f32(uint16_t h);
/* dst[i] = mgopt_f32_to_f16(src[i]) for i < n, vectorized (F16C where the compiler targets it). */
MGOPTDEF void mgopt_f32_to_f16_n(const float *src, uint16_t *dst, int64_t n);
MGOPTDEF uint16_t mgopt_f32_to_bf16(float f);
MGOPTDEF float mgopt_bf16_to_f32(uint16_t h);

/* ---------------------------------------------------------------- op registry */

/* Traits of registered ops. */
#define MGOPT_TRAIT_PURE            (1u << 0)  /* no side effects: removable when dead */
#define MGOPT_TRAIT_UNARY           (1u << 1)  /* elementwise unary: out shape = x shape */
#define MGOPT_TRAIT_BINARY          (1u << 2)  /* elementwise binary with broadcasting (x, y) */
#define MGOPT_TRAIT_COMMUTATIVE     (1u << 3)
#define MGOPT_TRAIT_SHAPE_PRESERVING (1u << 4) /* out shape = first operand's shape */
#define MGOPT_TRAIT_LAYOUT_SENSITIVE (1u << 5) /* depends on axis order (conv, pool, ...) */
#define MGOPT_TRAIT_CONSTEXPR       (1u << 6)  /* constexpr_*: output computable at load time from const operands */
#define MGOPT_TRAIT_COMPARISON      (1u << 7)  /* output dtype bool */
#define MGOPT_TRAIT_CONTROL_FLOW    (1u << 8)  /* owns nested blocks */
#define MGOPT_TRAIT_LOGICAL         (1u << 9)  /* bool in, bool out */
#define MGOPT_TRAIT_STATE           (1u << 10) /* reads or writes a state: never merged with another op or
                                                  moved across another op of the same state */

/* Trait sets named by the rows of MGOPT_OP_TABLE. */
#define MGOPT__OT_P MGOPT_TRAIT_PURE
#define MGOPT__OT_PU (MGOPT_TRAIT_PURE | MGOPT_TRAIT_UNARY)
#define MGOPT__OT_PUL (MGOPT__OT_PU | MGOPT_TRAIT_LOGICAL)
#define MGOPT__OT_PB (MGOPT_TRAIT_PURE | MGOPT_TRAIT_BINARY)
#define MGOPT__OT_PBC (MGOPT__OT_PB | MGOPT_TRAIT_COMMUTATIVE)
#define MGOPT__OT_CMP (MGOPT__OT_PB | MGOPT_TRAIT_COMPARISON)
#define MGOPT__OT_CMPC (MGOPT__OT_CMP | MGOPT_TRAIT_COMMUTATIVE)
#define MGOPT__OT_LOG (MGOPT__OT_PBC | MGOPT_TRAIT_LOGICAL)
#define MGOPT__OT_SP (MGOPT_TRAIT_PURE | MGOPT_TRAIT_SHAPE_PRESERVING)
#define MGOPT__OT_SPL (MGOPT__OT_SP | MGOPT_TRAIT_LAYOUT_SENSITIVE)
#define MGOPT__OT_LS (MGOPT_TRAIT_PURE | MGOPT_TRAIT_LAYOUT_SENSITIVE)
#define MGOPT__OT_CE (MGOPT_TRAIT_PURE | MGOPT_TRAIT_CONSTEXPR)
#define MGOPT__OT_CF (MGOPT_TRAIT_PURE | MGOPT_TRAIT_CONTROL_FLOW)
#define MGOPT__OT_SR (MGOPT_TRAIT_PURE | MGOPT_TRAIT_STATE) /* a state read: removable when dead */
#define MGOPT__OT_SW MGOPT_TRAIT_STATE                      /* a state write: a side effect, never dead */

/* Every registered (canonical, MIL) op: one row each, in the order of the
   enum (new ops go last: kinds are stable numbers). A row is
     X(name, traits, slots, attrs, nouts_min, nouts_max, nblocks, infer, kernel)
   name       the op's name; its kind is MGOPT_OP_<name>
   traits     a trait set above (MGOPT_TRAIT_* bits)
   slots      operand slot set mgopt__rg_s_<slots> in core/registry.c (none: no operands)
   attrs      attribute set mgopt__rg_a_<attrs> in core/registry.c (none: no attributes)
   nouts_min, nouts_max   output count bounds (max -1: any)
   nblocks    nested blocks the op owns
   infer      type inference function mgopt__infer_<infer> (core/infer/)
   kernel     constant-folding kernel (kernels/, in mgopt_passes.h), 0 when the op has none
   Only the name is public: the other columns name private symbols and are
   expanded inside the implementation alone (the kernel column in kernels/fold.c). */
#define MGOPT_OP_TABLE(X)                                                                                                               \
  X(const,                           MGOPT__OT_P,    none,    const,         1, 1, 0,  const,          0)                               \
  X(identity,                        MGOPT__OT_SP,   x,       none,          1, 1, 0,  identity,       mgopt__ke_identity)              \
  X(add,                             MGOPT__OT_PBC,  xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(sub,                             MGOPT__OT_PB,   xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(mul,                             MGOPT__OT_PBC,  xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(real_div,                        MGOPT__OT_PB,   xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(pow,                             MGOPT__OT_PB,   xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(maximum,                         MGOPT__OT_PBC,  xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(minimum,                         MGOPT__OT_PBC,  xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(floor_div,                       MGOPT__OT_PB,   xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(mod,                             MGOPT__OT_PB,   xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(equal,                           MGOPT__OT_CMPC, xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(not_equal,                       MGOPT__OT_CMPC, xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(less,                            MGOPT__OT_CMP,  xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(less_equal,                      MGOPT__OT_CMP,  xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(greater,                         MGOPT__OT_CMP,  xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(greater_equal,                   MGOPT__OT_CMP,  xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(logical_and,                     MGOPT__OT_LOG,  xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(logical_or,                      MGOPT__OT_LOG,  xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(logical_xor,                     MGOPT__OT_LOG,  xy,      none,          1, 1, 0,  binary,         mgopt__ke_binary)                \
  X(logical_not,                     MGOPT__OT_PUL,  x,       none,          1, 1, 0,  unary,          mgopt__ke_logical_not)           \
  X(select,                          MGOPT__OT_P,    select,  none,          1, 1, 0,  select,         mgopt__ke_select)                \
  X(abs,                             MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(exp,                             MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(log,                             MGOPT__OT_PU,   x,       log,           1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(sqrt,                            MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(rsqrt,                           MGOPT__OT_PU,   x,       rsqrt,         1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(inverse,                         MGOPT__OT_PU,   x,       inverse,       1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(square,                          MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(erf,                             MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(tanh,                            MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(sigmoid,                         MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(relu,                            MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(relu6,                           MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(leaky_relu,                      MGOPT__OT_PU,   x,       leaky,         1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(prelu,                           MGOPT__OT_SPL,  prelu,   none,          1, 1, 0,  unary,          mgopt__kn_prelu)                 \
  X(gelu,                            MGOPT__OT_PU,   x,       gelu,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(softmax,                         MGOPT__OT_SPL,  x,       softmax,       1, 1, 0,  softmax,        mgopt__kr_softmax)               \
  X(clip,                            MGOPT__OT_PU,   x,       clip,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(floor,                           MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(ceil,                            MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(round,                           MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(sign,                            MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(sin,                             MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(cos,                             MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(silu,                            MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(softplus,                        MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(elu,                             MGOPT__OT_PU,   x,       elu,           1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(cast,                            MGOPT__OT_SP,   x,       cast,          1, 1, 0,  cast,           mgopt__ke_cast)                  \
  X(reshape,                         MGOPT__OT_P,    reshape, none,          1, 1, 0,  reshape,        mgopt__ks_reshape)               \
  X(transpose,                       MGOPT__OT_P,    x,       perm,          1, 1, 0,  transpose,      mgopt__ks_transpose)             \
  X(expand_dims,                     MGOPT__OT_P,    x,       axes_req,      1, 1, 0,  expand_dims,    mgopt__ks_expand_dims)           \
  X(squeeze,                         MGOPT__OT_P,    x,       axes,          1, 1, 0,  squeeze,        mgopt__ks_squeeze)               \
  X(concat,                          MGOPT__OT_P,    values,  concat,        1, 1, 0,  join,           mgopt__ks_concat)                \
  X(stack,                           MGOPT__OT_P,    values,  stack,         1, 1, 0,  join,           mgopt__ks_stack)                 \
  X(split,                           MGOPT__OT_P,    x,       split,         1, -1, 0, split,          mgopt__ks_split)                 \
  X(slice_by_index,                  MGOPT__OT_P,    sbi,     sbi,           1, 1, 0,  slice_by_index, mgopt__ks_slice_by_index)        \
  X(slice_by_size,                   MGOPT__OT_P,    sbs,     none,          1, 1, 0,  slice_by_size,  mgopt__ks_slice_by_size)         \
  X(gather,                          MGOPT__OT_P,    gather,  gather,        1, 1, 0,  gather,         mgopt__ks_gather)                \
  X(one_hot,                         MGOPT__OT_P,    indices, one_hot,       1, 1, 0,  one_hot,        mgopt__ks_one_hot)               \
  X(pad,                             MGOPT__OT_P,    pad,     pad,           1, 1, 0,  pad,            mgopt__ks_pad)                   \
  X(tile,                            MGOPT__OT_P,    tile,    none,          1, 1, 0,  tile,           mgopt__ks_tile)                  \
  X(matmul,                          MGOPT__OT_P,    xy,      matmul,        1, 1, 0,  matmul,         mgopt__kr_matmul)                \
  X(linear,                          MGOPT__OT_P,    linear,  linear,        1, 1, 0,  linear,         mgopt__kr_linear)                \
  X(conv,                            MGOPT__OT_LS,   linear,  conv,          1, 1, 0,  conv,           mgopt__kn_conv)                  \
  X(conv_transpose,                  MGOPT__OT_LS,   linear,  convt,         1, 1, 0,  conv,           mgopt__kn_conv)                  \
  X(avg_pool,                        MGOPT__OT_LS,   x,       avg_pool,      1, 1, 0,  pool,           mgopt__kn_pool)                  \
  X(max_pool,                        MGOPT__OT_LS,   x,       max_pool,      1, 1, 0,  pool,           mgopt__kn_pool)                  \
  X(batch_norm,                      MGOPT__OT_SPL,  bn,      eps,           1, 1, 0,  unary,          mgopt__kn_batch_norm)            \
  X(instance_norm,                   MGOPT__OT_SPL,  norm,    eps,           1, 1, 0,  unary,          mgopt__kn_norm)                  \
  X(layer_norm,                      MGOPT__OT_SP,   norm,    layer_norm,    1, 1, 0,  unary,          mgopt__kn_norm)                  \
  X(reduce_sum,                      MGOPT__OT_P,    x,       reduce,        1, 1, 0,  reduce,         mgopt__kr_reduce)                \
  X(reduce_mean,                     MGOPT__OT_P,    x,       reduce,        1, 1, 0,  reduce,         mgopt__kr_reduce)                \
  X(reduce_max,                      MGOPT__OT_P,    x,       reduce,        1, 1, 0,  reduce,         mgopt__kr_reduce)                \
  X(reduce_min,                      MGOPT__OT_P,    x,       reduce,        1, 1, 0,  reduce,         mgopt__kr_reduce)                \
  X(reduce_prod,                     MGOPT__OT_P,    x,       reduce,        1, 1, 0,  reduce,         mgopt__kr_reduce)                \
  X(pixel_shuffle,                   MGOPT__OT_LS,   x,       pixel_shuffle, 1, 1, 0,  pixel_shuffle,  mgopt__kn_pixel_shuffle)         \
  X(while_loop,                      MGOPT__OT_CF,   loop,    none,          0, -1, 2, while,          0)                               \
  X(cond,                            MGOPT__OT_CF,   cond,    none,          0, -1, 2, cond,           0)                               \
  X(quantize,                        MGOPT__OT_P,    quant,   quantize,      1, 1, 0,  quantize,       mgopt__kc_quantize)              \
  X(dequantize,                      MGOPT__OT_P,    quant,   axis,          1, 1, 0,  dequant,        mgopt__kc_dequantize)            \
  X(constexpr_affine_dequantize,     MGOPT__OT_CE,   affine,  axis_req,      1, 1, 0,  dequant,        mgopt__kc_affine_dequantize)     \
  X(constexpr_lut_to_dense,          MGOPT__OT_CE,   lut,     lut,           1, 1, 0,  lut,            mgopt__kc_lut_to_dense)          \
  X(constexpr_sparse_to_dense,       MGOPT__OT_CE,   sparse,  shape,         1, 1, 0,  sparse,         mgopt__kc_sparse_to_dense)       \
  X(constexpr_blockwise_shift_scale, MGOPT__OT_CE,   shift,   none,          1, 1, 0,  dequant,        mgopt__kc_blockwise_shift_scale) \
  X(constexpr_cast,                  MGOPT__OT_CE,   ccast,   ccast,         1, 1, 0,  cast,           mgopt__kc_constexpr_cast)        \
  X(space_to_batch,                  MGOPT__OT_LS,   x,       s2b,           1, 1, 0,  space_to_batch, mgopt__kn_space_batch)           \
  X(batch_to_space,                  MGOPT__OT_LS,   x,       b2s,           1, 1, 0,  batch_to_space, mgopt__kn_space_batch)           \
  X(read_state,                      MGOPT__OT_SR,   input,   none,          1, 1, 0,  read_state,     0)                               \
  X(coreml_update_state,             MGOPT__OT_SW,   state,   none,          1, 1, 0,  update_state,   0)                               \
  X(reduce_argmax,                   MGOPT__OT_P,    x,       reduce_arg,    1, 1, 0,  reduce_arg,     mgopt__kx_reduce_arg)            \
  X(reduce_argmin,                   MGOPT__OT_P,    x,       reduce_arg,    1, 1, 0,  reduce_arg,     mgopt__kx_reduce_arg)            \
  X(cumsum,                          MGOPT__OT_SPL,  x,       cumsum,        1, 1, 0,  cumsum,         mgopt__kx_cumsum)                \
  X(gather_along_axis,               MGOPT__OT_P,    gather,  gather_axis,   1, 1, 0,  gather_axis,    mgopt__kx_gather_along_axis)     \
  X(reduce_l1_norm,                  MGOPT__OT_P,    x,       reduce,        1, 1, 0,  reduce,         mgopt__kr_reduce)                \
  X(reduce_l2_norm,                  MGOPT__OT_P,    x,       reduce,        1, 1, 0,  reduce,         mgopt__kr_reduce)                \
  X(reduce_log_sum,                  MGOPT__OT_P,    x,       reduce,        1, 1, 0,  reduce,         mgopt__kr_reduce)                \
  X(reduce_log_sum_exp,              MGOPT__OT_P,    x,       reduce,        1, 1, 0,  reduce,         mgopt__kr_reduce)                \
  X(reduce_sum_square,               MGOPT__OT_P,    x,       reduce,        1, 1, 0,  reduce,         mgopt__kr_reduce)                \
  X(acos,                            MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(asin,                            MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(atan,                            MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(atanh,                           MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(cosh,                            MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(sinh,                            MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(tan,                             MGOPT__OT_PU,   x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(sigmoid_hard,                    MGOPT__OT_PU,  x,       sigmoid_hard,  1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(softsign,                        MGOPT__OT_PU,  x,       none,          1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(thresholded_relu,                MGOPT__OT_PU,  x,       thresholded,   1, 1, 0,  unary,          mgopt__ke_unary)                 \
  X(local_response_norm,             MGOPT__OT_SPL, x,       lrn,           1, 1, 0,  unary,          mgopt__kn_lrn)                   \
  X(scatter_along_axis,              MGOPT__OT_P,    scatter, scatter_axis,  1, 1, 0,  scatter_axis,   mgopt__kt_scatter_along_axis)    \
  X(scatter_nd,                      MGOPT__OT_P,    scatter, scatter_nd,    1, 1, 0,  scatter_nd,     mgopt__kt_scatter_nd)            \
  X(gather_nd,                       MGOPT__OT_P,    gather,  gather_nd,     1, 1, 0,  gather_nd,      mgopt__kt_gather_nd)             \
  X(reverse_sequence,                MGOPT__OT_P,    revseq,  revseq,        1, 1, 0,  reverse_sequence, mgopt__kt_reverse_sequence)    \
  X(depth_to_space,                  MGOPT__OT_LS,   x,       block_size,    1, 1, 0,  depth_space,    mgopt__kt_depth_space)           \
  X(space_to_depth,                  MGOPT__OT_LS,   x,       block_size,    1, 1, 0,  depth_space,    mgopt__kt_depth_space)           \
  X(topk,                            MGOPT__OT_P,    x,       topk,          2, 2, 0,  topk,           mgopt__kt_topk)                  \
  X(range_1d,                        MGOPT__OT_P,    range,   none,          1, 1, 0,  range_1d,       mgopt__kt_range_1d)              \
  X(fill,                            MGOPT__OT_P,    fill,    none,          1, 1, 0,  fill,           mgopt__kt_fill)                  \
  X(upsample_nearest_neighbor,       MGOPT__OT_LS,   x,       upsample_nn,   1, 1, 0,  resample,       mgopt__kn_resample)              \
  X(resize_nearest_neighbor,         MGOPT__OT_LS,   x,       resize_nn,     1, 1, 0,  resample,       mgopt__kn_resample)              \
  X(upsample_bilinear,               MGOPT__OT_LS,   x,       upsample_bl,   1, 1, 0,  resample,       mgopt__kn_resample)              \
  X(resize_bilinear,                 MGOPT__OT_LS,   x,       resize_bl,     1, 1, 0,  resample,       mgopt__kn_resample)              \
  X(einsum,                          MGOPT__OT_P,    values,  einsum,        1, 1, 0,  einsum,         mgopt__kx_einsum)                \
  X(lstm,                            MGOPT__OT_P,    lstm,    lstm,          3, 3, 0,  recurrent,      mgopt__kq_lstm)                  \
  X(gru,                             MGOPT__OT_P,    gru,     gru,           2, 2, 0,  recurrent,      mgopt__kq_gru)                   \
  X(rnn,                             MGOPT__OT_P,    gru,     rnn,           2, 2, 0,  recurrent,      mgopt__kq_rnn)                   \
  X(constexpr_lut_to_sparse,         MGOPT__OT_CE,   lut_sparse, vector_axis, 2, 2, 0, lut_sparse,     mgopt__kc_lut_to_sparse)         \
  X(constexpr_sparse_blockwise_shift_scale, MGOPT__OT_CE, sparse_shift, none, 2, 2, 0, sparse_shift, mgopt__kc_sparse_blockwise_shift_scale) \
  X(bias_add,                        MGOPT__OT_SPL,  bias_add, bias_add,     1, 1, 0,  bias_add,       mgopt__kn_bias_add)              \
  /* a new op is a new row above this line */

typedef enum mgopt_op_kind {
  MGOPT_OP_OPAQUE = 0,
#define MGOPT__OP_ENUM(name, traits, slots, attrs, nouts_min, nouts_max, nblocks, infer, kernel) MGOPT_OP_##name,
  MGOPT_OP_TABLE(MGOPT__OP_ENUM)
#undef MGOPT__OP_ENUM
  MGOPT_OP__COUNT
} mgopt_op_kind;

#define MGOPT_SLOT_OPTIONAL 1u
#define MGOPT_SLOT_VARIADIC 2u
typedef struct mgopt_slot_def {
  const char *name;
  uint32_t flags;
} mgopt_slot_def;

#define MGOPT_ATTR_REQUIRED 1u
typedef struct mgopt_attr_def {
  const char *name;
  uint8_t kind;          /* mgopt_attr_kind */
  uint8_t flags;
  const char *deflt;     /* default as a .mil literal ("false", "1", "\"valid\"", "[1, 1]"); NULL = none */
} mgopt_attr_def;

/* Type inference: writes op->nouts types into `out` (arena dims). Returns
   MGOPT_ERR_TYPE with a message in d when the operands do not fit the op. */
typedef mgopt_status (*mgopt_infer_fn)(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                       mgopt_diag *d);

typedef struct mgopt_op_def {
  const char *name;
  uint32_t traits;
  int32_t nslots;
  const mgopt_slot_def *slots;
  int32_t nattrs;
  const mgopt_attr_def *attrs;
  int32_t nouts_min, nouts_max; /* nouts_max -1 = any */
  int32_t nblocks;              /* nested blocks it owns (-1 = any) */
  mgopt_infer_fn infer;         /* NULL = outputs keep their declared types */
} mgopt_op_def;

/* Registry lookup. NULL for MGOPT_OP_OPAQUE or out of range. */
MGOPTDEF const mgopt_op_def *mgopt_op_def_get(int32_t kind);
/* Op kind by name (length n: a NUL does not end it), MGOPT_OP_OPAQUE when unknown or s is NULL.
   Compares only the registered names of length n. */
MGOPTDEF int32_t mgopt_op_kind_from_name(const char *s, size_t n);
/* Traits of an op (0 for opaque ops). */
MGOPTDEF uint32_t mgopt_op_traits(const mgopt_op *op);

/* ---------------------------------------------------------------- building and mutating */

/* Values and positions. */
MGOPTDEF mgopt_value *mgopt_block_add_arg(mgopt_block *b, const char *name, const mgopt_type *t);
/* Appends an output use of v to block b. */
MGOPTDEF mgopt_status mgopt_block_add_output(mgopt_block *b, mgopt_value *v);
/* Replaces output i of b. */
MGOPTDEF void mgopt_block_set_output(mgopt_block *b, int32_t i, mgopt_value *v);
/* Removes output i of b (later outputs shift down). */
MGOPTDEF void mgopt_block_remove_output(mgopt_block *b, int32_t i);
/* Removes argument i of b, which must have no uses. */
MGOPTDEF void mgopt_block_remove_arg(mgopt_block *b, int32_t i);

/* Creates a detached op of `type` (a registered name or any other: opaque) with
   `nouts` outputs of unknown type and `nblocks` empty nested blocks. Insert it
   with mgopt_op_insert_*; set operands and attributes, then call
   mgopt_op_infer (or set output types directly). NULL on OOM. */
MGOPTDEF mgopt_op *mgopt_op_new(mgopt_program *p, const char *type, int32_t nouts, int32_t nblocks);
MGOPTDEF void mgopt_op_insert_before(mgopt_op *op, mgopt_op *pos);
MGOPTDEF void mgopt_op_insert_after(mgopt_op *op, mgopt_op *pos);
MGOPTDEF void mgopt_op_append(mgopt_op *op, mgopt_block *b);
/* Moves an attached op to just before pos (possibly in another block). */
MGOPTDEF void mgopt_op_move_before(mgopt_op *op, mgopt_op *pos);
MGOPTDEF void mgopt_op_move_to_end(mgopt_op *op, mgopt_block *b);
/* Unlinks op, drops its operand uses and tombstones it (MGOPT_OP_ERASED).
   Its outputs must have no uses left. Nested blocks are erased too. */
MGOPTDEF void mgopt_op_erase(mgopt_op *op);
/* Sets op's (value's) name, copied and interned; NULL clears it.
   MGOPT_ERR_NOMEM (the old name kept, the program's sticky status set). */
MGOPTDEF mgopt_status mgopt_op_set_name(mgopt_op *op, const char *name);
MGOPTDEF mgopt_status mgopt_value_set_name(mgopt_value *v, const char *name);

/* Operand slots. set_operand creates the slot if missing; v == NULL makes it absent. */
MGOPTDEF mgopt_status mgopt_op_set_operand(mgopt_op *op, const char *slot, mgopt_value *v);
MGOPTDEF mgopt_status mgopt_op_set_operand_list(mgopt_op *op, const char *slot,
                                                mgopt_value *const *vs, int32_t n);
/* Replaces element `index` of slot number `slot_index`. */
MGOPTDEF void mgopt_op_set_operand_at(mgopt_op *op, int32_t slot_index, int32_t index, mgopt_value *v);
/* Slot lookup: index or -1. */
MGOPTDEF int32_t mgopt_op_slot_index(const mgopt_op *op, const char *slot);
/* The single value in `slot`, NULL if absent (or a list). */
MGOPTDEF mgopt_value *mgopt_op_operand(const mgopt_op *op, const char *slot);
/* Total operand count (all slots, list elements counted). */
MGOPTDEF int32_t mgopt_op_operand_count(const mgopt_op *op);

/* Attributes (names interned, values copied into the arena). */
MGOPTDEF mgopt_status mgopt_op_set_attr(mgopt_op *op, const mgopt_attr *a);
MGOPTDEF mgopt_status mgopt_op_set_bool(mgopt_op *op, const char *name, int v);
MGOPTDEF mgopt_status mgopt_op_set_int(mgopt_op *op, const char *name, int64_t v);
MGOPTDEF mgopt_status mgopt_op_set_float(mgopt_op *op, const char *name, double v);
MGOPTDEF mgopt_status mgopt_op_set_string(mgopt_op *op, const char *name, const char *v);
MGOPTDEF mgopt_status mgopt_op_set_ints(mgopt_op *op, const char *name, const int64_t *v, int64_t n);
MGOPTDEF mgopt_status mgopt_op_set_floats(mgopt_op *op, const char *name, const double *v, int64_t n);
MGOPTDEF mgopt_status mgopt_op_set_tensor(mgopt_op *op, const char *name, mgopt_tensor *t);
MGOPTDEF void mgopt_op_remove_attr(mgopt_op *op, const char *name);
/* The attribute as stored, NULL if absent (defaults are not materialised). */
MGOPTDEF const mgopt_attr *mgopt_op_attr(const mgopt_op *op, const char *name);
/* Typed getters for an op parameter: the attribute if present, else a constant
   operand in the slot of that name, else the registry default, else `dflt`. */
MGOPTDEF int64_t mgopt_op_get_int(const mgopt_op *op, const char *name, int64_t dflt);
MGOPTDEF double mgopt_op_get_float(const mgopt_op *op, const char *name, double dflt);
MGOPTDEF int mgopt_op_get_bool(const mgopt_op *op, const char *name, int dflt);
/* String value; NULL if absent and no default. *len may be NULL. */
MGOPTDEF const char *mgopt_op_get_string(const mgopt_op *op, const char *name, size_t *len);
/* INTS (or a 1-d integer TENSOR) attribute, or a constant 1-d integer operand
   of that slot name; returns the count, -1 if absent.
   *out points to arena memory valid until the op changes. */
MGOPTDEF int64_t mgopt_op_get_ints(mgopt_program *p, const mgopt_op *op, const char *name,
                                   const int64_t **out);

/* Replaces every use of `from` (operands and block outputs) with `to`. When
   `from` is an output of a function body, `to` takes its name (so graph output
   names survive rewrites) unless `to` is a block argument or already an output. */
MGOPTDEF void mgopt_value_replace_all_uses(mgopt_value *from, mgopt_value *to);
/* Same, but only uses inside blocks where `to` is visible (dominance by scope);
   returns the number of uses left unchanged. */
MGOPTDEF int32_t mgopt_value_replace_uses_in_scope(mgopt_value *from, mgopt_value *to);
/* 1 if v is used as an output of its function's body (or any enclosing block outputs). */
MGOPTDEF int mgopt_value_is_block_output(const mgopt_value *v);
/* Constant tensor of v if its producer is `const` (or a constant ONNX initializer), else NULL. */
MGOPTDEF mgopt_tensor *mgopt_value_const(const mgopt_value *v);

/* Runs the registry's type inference on op and stores the output types.
   For opaque ops or ops without inference, leaves types as they are. */
MGOPTDEF mgopt_status mgopt_op_infer(mgopt_program *p, mgopt_op *op, mgopt_diag *d);

/* Convenience builders: create, insert before `pos` (or append to `b` when pos
   is NULL). Arena constructors: NULL only when memory ran out, which also
   sets the program's sticky status (mgopt_program_status). */
MGOPTDEF mgopt_value *mgopt_build_const(mgopt_program *p, mgopt_block *b, mgopt_op *pos,
                                        const char *name, mgopt_tensor *t);
/* Generic: operands given as slot names + values, attributes set afterwards by the caller
   via the returned op (then call mgopt_op_infer). */
MGOPTDEF mgopt_op *mgopt_build_op(mgopt_program *p, mgopt_block *b, mgopt_op *pos,
                                  const char *type, const char *name, int32_t nslots,
                                  const char *const *slot_names, mgopt_value *const *vals,
                                  int32_t nouts);

/* Fresh name "<base>_<k>" unique among values of p (cheap, counter-based). */
MGOPTDEF const char *mgopt_program_fresh_name(mgopt_program *p, const char *base);

/* ---------------------------------------------------------------- walking */

/* Calls fn for every live op of block b, nested blocks included (pre-order),
   in program order. fn may not erase ops other than the one passed. Stops
   early when fn returns nonzero and returns that value. */
typedef int (*mgopt_op_visit_fn)(mgopt_op *op, void *ud);
MGOPTDEF int mgopt_block_walk(mgopt_block *b, mgopt_op_visit_fn fn, void *ud);
MGOPTDEF int mgopt_program_walk(mgopt_program *p, mgopt_op_visit_fn fn, void *ud);

/* ---------------------------------------------------------------- verifier */

/* Checks every invariant (see the manual above). MGOPT_OK or MGOPT_ERR_VERIFY
   with the op and what is wrong in d. */
MGOPTDEF mgopt_status mgopt_program_verify(mgopt_program *p, mgopt_diag *d);

/* ---------------------------------------------------------------- .mil text */

typedef struct mgopt_print_options {
  int64_t elide_above;  /* tensors with more elements print as [...] (0 = never elide) */
} mgopt_print_options;

/* Appends text to a growable buffer owned by the caller; free with mgopt_buf_free. */
typedef struct mgopt_buf {
  char *data;
  size_t len, cap;
  int oom;
  const mgopt_allocator *alloc;
} mgopt_buf;
MGOPTDEF void mgopt_buf_free(mgopt_buf *b);

/* Prints the program in .mil text. opts may be NULL. */
MGOPTDEF mgopt_status mgopt_mil_print(mgopt_program *p, const mgopt_print_options *opts,
                                      mgopt_buf *out);

typedef struct mgopt_parse_options {
  int max_depth;        /* nesting limit (0 = 64) */
  int64_t max_elements; /* largest tensor literal (0 = 1<<28) */
  const mgopt_allocator *alloc;
} mgopt_parse_options;

/* Parses .mil text (len bytes, need not be NUL-terminated) into a new program
   and stores it in *out (destroy it with mgopt_program_destroy). opts may be
   NULL (every default). On error *out is left as it was and d holds the
   line:col (d->line, d->col, d->offset) and a message: MGOPT_ERR_PARSE,
   MGOPT_ERR_TYPE, MGOPT_ERR_LIMIT, MGOPT_ERR_NOMEM, MGOPT_ERR_INVALID_ARG.
   The program remembers where each op was written: mgopt_program_verify and
   the passes name it in d->line/d->col. */
MGOPTDEF mgopt_status mgopt_mil_parse(const char *text, size_t len, const mgopt_parse_options *opts,
                                      mgopt_program **out, mgopt_diag *d);

/* ---------------------------------------------------------------- rewriter */

typedef struct mgopt_rewriter mgopt_rewriter;

/* A pattern returns nonzero iff it changed the IR, and changes it only through
   the mgopt_rw_* calls below. */
typedef int (*mgopt_pattern_fn)(mgopt_rewriter *rw, mgopt_op *op, void *ud);

typedef struct mgopt_pattern {
  const char *name;
  int32_t root_kind;        /* mgopt_op_kind; MGOPT_OP_OPAQUE with root_type for opaque roots; -1 = any op */
  const char *root_type;    /* for opaque roots (e.g. "onnx::Foo"), else NULL */
  int32_t benefit;          /* higher first */
  mgopt_pattern_fn fn;
  void *ud;
} mgopt_pattern;

/* A folding function: given an op whose operands are all constant, compute its
   output tensors into out[0..nouts). Returns 1 if folded, 0 if it cannot
   (no kernel, unsupported dtype, too large), or -1 on OOM. */
typedef int (*mgopt_fold_fn)(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud);

/* A zeroed config (or NULL) is every default: erase dead ops, no folding. */
typedef struct mgopt_rewrite_config {
  int64_t max_rewrites;       /* cap (0 = 10 * ops + 1000) */
  int keep_dead;              /* 1 = leave dead pure ops alone (0 = erase them) */
  mgopt_fold_fn fold;         /* NULL = no folding */
  void *fold_ud;
  int64_t fold_max_elements;  /* skip folds whose output is larger (0 = no limit) */
  int verify_each;            /* run the verifier after every rewrite (slow; for debugging) */
  uint64_t shuffle_seed;      /* nonzero: pop the worklist in a seeded random order */
} mgopt_rewrite_config;

typedef struct mgopt_rewrite_stats {
  int64_t rewrites, folds, erased, pops;
  int32_t npatterns;
  int64_t *per_pattern;       /* npatterns counters, same order as the patterns given */
} mgopt_rewrite_stats;

/* Runs the greedy worklist driver over function f (nested blocks included).
   stats may be NULL; if given, per_pattern must have npatterns slots or be NULL.
   MGOPT_ERR_NO_FIXPOINT (with the hot patterns named in d) at the cap. */
MGOPTDEF mgopt_status mgopt_rewrite_function(mgopt_program *p, mgopt_function *f,
                                             const mgopt_pattern *patterns, int32_t npatterns,
                                             const mgopt_rewrite_config *cfg,
                                             mgopt_rewrite_stats *stats, mgopt_diag *d);
MGOPTDEF mgopt_status mgopt_rewrite_program(mgopt_program *p, const mgopt_pattern *patterns,
                                            int32_t npatterns, const mgopt_rewrite_config *cfg,
                                            mgopt_rewrite_stats *stats, mgopt_diag *d);

/* Rewriter API for patterns: each call keeps the worklist informed. */
MGOPTDEF mgopt_program *mgopt_rw_program(mgopt_rewriter *rw);
/* Notifies the driver that op was created (queues it). mgopt_build_* do not. */
MGOPTDEF void mgopt_rw_created(mgopt_rewriter *rw, mgopt_op *op);
/* Replace all uses of from by to (queues users of both). */
MGOPTDEF void mgopt_rw_replace_value(mgopt_rewriter *rw, mgopt_value *from, mgopt_value *to);
/* Replace op's outputs by vals[0..nouts) and erase op. */
MGOPTDEF void mgopt_rw_replace_op(mgopt_rewriter *rw, mgopt_op *op, mgopt_value *const *vals);
/* Erase an op whose outputs are unused (queues producers of its operands). */
MGOPTDEF void mgopt_rw_erase(mgopt_rewriter *rw, mgopt_op *op);
/* Sets operand `slot` of op (as mgopt_op_set_operand) and queues op and the old
   operand's producer. MGOPT_ERR_NOMEM when the slot could not be added; the
   driver then stops with that status too. */
MGOPTDEF mgopt_status mgopt_rw_set_operand(mgopt_rewriter *rw, mgopt_op *op, const char *slot, mgopt_value *v);
/* Tells the driver op changed in place (attributes, types): queues it and its users. */
MGOPTDEF void mgopt_rw_modified(mgopt_rewriter *rw, mgopt_op *op);
/* Creates op of `type` before `pos` with the given operands (like mgopt_build_op) and queues it. */
MGOPTDEF mgopt_op *mgopt_rw_create(mgopt_rewriter *rw, mgopt_op *pos, const char *type,
                                   const char *name, int32_t nslots, const char *const *slot_names,
                                   mgopt_value *const *vals, int32_t nouts);
/* Creates a const op before pos holding t, queues it, returns its value. */
MGOPTDEF mgopt_value *mgopt_rw_const(mgopt_rewriter *rw, mgopt_op *pos, const char *name,
                                     mgopt_tensor *t);

/* ---------------------------------------------------------------- passes */

typedef enum mgopt_opt_kind {
  MGOPT_OPT_BOOL,
  MGOPT_OPT_INT,
  MGOPT_OPT_FLOAT,
  MGOPT_OPT_STRING
} mgopt_opt_kind;

/* A pass option: name, kind, default (as text), help. Values reach the pass
   as mgopt_pass_opts (one entry per declared option, defaults filled in). */
typedef struct mgopt_opt_def {
  const char *name;
  uint8_t kind;
  const char *deflt;
  const char *help;
  /* The values allowed, checked when the pipeline is parsed (a bad value is
     MGOPT_ERR_INVALID_ARG at its column, before any pass runs); NULL = any
     value of the kind. Alternatives separated by '|': a literal ("int8",
     "4") or, for INT and FLOAT, an inclusive range "LO..HI" where either end
     may be left out ("0..1", "1.."). E.g. "int8|uint8", "0|1|2|4|8", "-1|0..1". */
  const char *allowed;
} mgopt_opt_def;

typedef struct mgopt_opt_value {
  int64_t i;     /* BOOL, INT */
  double f;      /* FLOAT */
  const char *s; /* STRING (NUL-terminated, valid during the run) */
} mgopt_opt_value;

struct mgopt_compress_config; /* mgopt_passes.h */
struct mgopt_composites;      /* mgopt_passes.h */
struct mgopt_legalize_config;  /* mgopt_passes.h */

typedef struct mgopt_pass_ctx {
  mgopt_program *program;
  const mgopt_opt_value *opts;   /* in the order of the pass's option defs */
  mgopt_diag *diag;
  int64_t rewrites;              /* the pass adds what it changed */
  mgopt_fold_fn fold;            /* the folding kernels in use (may be NULL) */
  void *fold_ud;
  /* per-weight options of the compression passes (mgopt_passes.h), from
     mgopt_pipeline_options; NULL: the pass's options hold for every weight */
  const struct mgopt_compress_config *compress_config;
  /* the caller's composite ops for tflite::fuse_composite_functions
     (mgopt_passes.h), from mgopt_pipeline_options; NULL: the built-in ones */
  const struct mgopt_composites *composites;
  /* the caller's legalizations (relay::legalize), from mgopt_pipeline_options; NULL: none */
  const struct mgopt_legalize_config *legalize_config;
} mgopt_pass_ctx;

typedef mgopt_status (*mgopt_pass_fn)(mgopt_pass_ctx *ctx);

/* A pass is a run function, or (run NULL) a pattern table that the pass
   manager runs over every function with mgopt_rewrite_program: dead ops are
   not erased (a pattern erases what it made dead), ops with constant operands
   are folded through the registry's fold function when fold_constants is set,
   and the pass reports the driver's rewrites plus folds. */
typedef struct mgopt_pass_def {
  const char *name;         /* full name, e.g. "common::dead_code_elimination" */
  const char *family;       /* e.g. "cleanup", "fusion", "onnx" */
  const char *description;  /* one line */
  int32_t nopts;
  const mgopt_opt_def *opts;
  mgopt_pass_fn run;        /* NULL: the pass is its pattern table */
  const mgopt_pattern *patterns;
  int32_t npatterns;
  int fold_constants;
  /* A pattern pass whose patterns can match only where an op of one of these
     kinds is (a conv for a bias fused into a conv): the pass manager skips a
     function whose op index counts none of them, so the pass costs O(1)
     there. NULL / 0: every function is visited. */
  const int32_t *needs;
  int32_t nneeds;
} mgopt_pass_def;

typedef struct mgopt_pipeline_def {
  const char *name;         /* e.g. "default" */
  const char *passes;       /* a pipeline string */
  const char *description;
} mgopt_pipeline_def;

/* A pass registry: a caller-owned view of pass and pipeline tables. */
typedef struct mgopt_registry {
  const mgopt_pass_def *const *passes;
  int32_t npasses;
  const mgopt_pipeline_def *pipelines;
  int32_t npipelines;
  mgopt_fold_fn fold;
  void *fold_ud;
} mgopt_registry;

/* Resolves "common::x" or its short form "x". NULL if unknown. */
MGOPTDEF const mgopt_pass_def *mgopt_registry_find(const mgopt_registry *r, const char *name, size_t n);

typedef struct mgopt_pass_report {
  const char *name;
  double seconds;
  int64_t rewrites;
  int64_t ops_before, ops_after;
  mgopt_status status;      /* MGOPT_OK, or the failure of a pass that was skipped (see mgopt_pipeline_run) */
  const mgopt_diag *diag;   /* a skipped pass's diagnostic, during the after_pass call only (else NULL) */
} mgopt_pass_report;

/* Called after each pass when set (print IR after each pass, stats, ...). */
typedef void (*mgopt_after_pass_fn)(mgopt_program *p, const mgopt_pass_report *r, void *ud);

/* How mgopt_pipeline_run runs. A zeroed struct (or NULL) is every default:
   no verification, no callback, no timing, no reports kept, a failing pass
   skipped. */
typedef struct mgopt_pipeline_options {
  int verify_each;              /* run the verifier after every pass */
  int strict;                   /* 1 = the first failing pass stops the pipeline (0 = it is skipped) */
  mgopt_after_pass_fn after_pass;
  void *after_pass_ud;
  double (*clock)(void);        /* seconds; NULL = no timing (libc has no portable wall clock) */
  mgopt_pass_report *reports;   /* caller's array for one report per pass run (NULL = none) */
  int32_t reports_cap;          /* its length: later passes are not reported */
  int32_t *nreports;            /* when set, receives the number of reports written */
  /* per-weight options for the compression passes (mgopt_compress_config in
     mgopt_passes.h); NULL = none */
  const struct mgopt_compress_config *compress_config;
  /* composite ops for tflite::fuse_composite_functions (mgopt_composites in
     mgopt_passes.h); NULL = the built-in ones only */
  const struct mgopt_composites *composites;
  /* the caller's legalizations for relay::legalize (mgopt_legalize_config in
     mgopt_passes.h); NULL = none */
  const struct mgopt_legalize_config *legalize_config;
} mgopt_pipeline_options;

/* Parses and runs a pipeline string ("p1,p2{opt=v},named_pipeline") on p,
   resolving names in registry r (mgopt_builtin_registry() of mgopt_passes.h,
   or the caller's). "none" or "" runs nothing. opts may be NULL. The whole
   string is checked before any pass runs: an unknown pass or option or a bad
   value is MGOPT_ERR_INVALID_ARG with the column in d->col.
   A pass that fails (MGOPT_ERR_PASS, MGOPT_ERR_NO_FIXPOINT, MGOPT_ERR_LIMIT,
   ...) is skipped by default and the pipeline goes on: its report (and the
   after_pass call) carries the status and, during that call, the diagnostic
   for a warning; the pipeline still returns MGOPT_OK. The program is left as
   the last good pass left it: a pass fails before it changes anything, or,
   for a pattern table stopped by the rewrite cap, between two complete
   rewrites (a valid, equivalent program); the manager also checks that the
   program still verifies, and stops with the pass's error when it does not.
   MGOPT_ERR_NOMEM always stops. With opts->strict the first failure stops
   the pipeline and is returned. A stopping failure (pass or verifier,
   MGOPT_ERR_VERIFY) names the op in d->op and, for a program read from
   .mil, its line:col. */
MGOPTDEF mgopt_status mgopt_pipeline_run(mgopt_program *p, const mgopt_registry *r, const char *pipeline,
                                         const mgopt_pipeline_options *opts, mgopt_diag *d);
/* Only parses and checks a pipeline string. */
MGOPTDEF mgopt_status mgopt_pipeline_check(const mgopt_registry *r, const char *pipeline,
                                           mgopt_diag *d);

#ifdef __cplusplus
}
#endif

#endif /* MGOPT_H_INCLUDED */
