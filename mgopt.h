/* mgopt.h — optimizes machine-learning model graphs: IR, text format, ONNX, rewriter, pass manager.
   Generated from src/ by tools/amalgamate — do not edit. Version 0.1.0.
   ===========================================================================
   mgopt — optimize machine-learning model graphs, in C99, in one header pair
   ===========================================================================

   USAGE
     mgopt.h holds the core (IR, .mil text, ONNX, verifier, rewriter, pass
     manager); mgopt_passes.h the passes, folding kernels and named
     pipelines. In exactly one C or C++ file:

         #define MGOPT_IMPLEMENTATION

     and include them without the define everywhere else. Both
     implementations must be in that one file.

   QUICK START
         mgopt_diag d;
         mgopt_program *p = NULL;
         if (mgopt_mil_parse(text, len, NULL, &p, &d) != MGOPT_OK) {
           fprintf(stderr, "model.mil:%d:%d: %s\n", d.line, d.col, d.msg); ...
         }
         if (mgopt_pipeline_run(p, mgopt_builtin_registry(), "default", NULL, &d) != MGOPT_OK) {
           ... d.op, d.line, d.col (where the op was written), d.msg ...
         }
         mgopt_buf out = {0};
         mgopt_mil_print(p, NULL, &out);   ... out.data, out.len ...
         mgopt_buf_free(&out);
         mgopt_program_destroy(p);
     ONNX is the same shape: mgopt_onnx_load_file(path, NULL, &p, &d), the
     pipeline, then mgopt_onnx_export(p, NULL, &model, &d) and
     mgopt_onnx_write_file(model, "out.onnx", NULL, &d) (examples/optimize_onnx.c).

   COMPILE-TIME OPTIONS (define before including)
     MGOPT_IMPLEMENTATION   compile the implementation in this file
     MGOPT_STATIC           make every function static (private copy per file)
     MGOPT_ASSERT(x)        assertion for programmer errors (default: assert)
     MGOPT_MALLOC(sz), MGOPT_REALLOC(p, sz), MGOPT_FREE(p)
                            the default heap (define all three or none)
     MGOPT_NO_STDIO         leave out the functions that open files
     MGOPT_NO_SIMD          scalar kernels only (SIMD paths give identical bits)
     None of these removes a safety check.

   MEMORY AND OWNERSHIP
     A program (mgopt_program) owns one arena: every op, value, block, type,
     attribute and tensor of it lives there and is freed at once by
     mgopt_program_destroy. Nothing is freed one by one: an erased op is
     unlinked and flagged MGOPT_OP_ERASED, so no pointer dangles during a
     rewrite. Heap memory comes from the allocator given to
     mgopt_program_create (a function with a context and the old size) or
     from the MGOPT_MALLOC family. Tensors are made by mgopt_tensor_new*
     only (never declared by the caller). Tensor data is 64-byte aligned; weights
     read from a caller's buffer are borrowed, not copied, until a pass
     writes them (the buffer must outlive the program).

   ERRORS
     Every fallible call returns an mgopt_status (mgopt_status_str names it)
     and fills a caller-owned mgopt_diag: line and column for text, byte
     offset for binary input, the op concerned, and a message. Out-parameters are written only on success. A program parsed
     from .mil remembers where each op was written, so verifier and pass
     errors on it carry that op's line:col in d->line/d->col (0 for ops made
     later). The library never prints, never exits and never aborts on input;
     MGOPT_ASSERT guards programmer errors only. Constructors of arena
     objects (mgopt_op_new, mgopt_tensor_new*, mgopt_build_*, intern, ...)
     return NULL only when memory ran out; that also sets the program's
     sticky status (mgopt_program_status), which the rewriter and the pass
     manager turn into MGOPT_ERR_NOMEM.

   OPTIONS STRUCTS
     Every options or config struct means "every default" when zeroed
     (mgopt_pipeline_options po = {0};), and a NULL pointer means the same
     as a zeroed struct.

   THREAD SAFETY
     No global mutable state. Distinct programs may be used from distinct
     threads at once; one program is used by one thread at a time. The op
     registry, pass registry and status strings are read-only tables.

   UNTRUSTED INPUT AND LIMITS
     The .mil parser and the ONNX reader accept hostile input: every length
     is checked against the bytes left, sizes go through checked arithmetic,
     every recursion has a depth limit, and limits (nesting depth, element
     counts) live in the options structs with safe defaults. Both parsers are
     fuzzed.
     Tensor ranks are bounded by MGOPT_MAX_RANK (32): both parsers refuse a
     type or tensor of higher rank (MGOPT_ERR_LIMIT, with its line:col in
     .mil text), type inference refuses to produce one (MGOPT_ERR_TYPE), and
     passes and constant folding leave such ops unchanged.

   THE IR
     program -> functions (main is the entry) -> a body block -> ops in a
     doubly linked list. An op has a type (an id into the op registry, or
     opaque for ops mgopt does not know, which keep everything they came
     with), named operand slots (one value, absent, or a variadic list),
     attributes (typed literals), outputs (values) and nested blocks
     (while_loop, cond, ONNX If/Loop bodies). A value has a name, a type
     (dtype, rank, dims: static, symbolic or unknown), its producer and an
     exact use list with O(1) insert and remove. The verifier
     (mgopt_program_verify) checks every invariant.

   TEXT FORMAT (.mil)
         main(%x: (2, 4, fp32), %y: (s0, 4, fp32)) {
           %w: (4, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6], [7, 8]])
           %m: (2, 2, fp32) = matmul(x=%x, y=%w, transpose_x=false, transpose_y=false)
         } -> (%m)
     `%ref` arguments are operands, literals are attributes, `#` starts a
     comment. print(parse(print(P))) == print(P) for every program. A
     state (Core ML's mutable model state, read by read_state and written
     by coreml_update_state) is typed like the tensor it holds with `state`
     before it: `%kv: state(1, 64, fp16)`.

   REWRITING AND PASSES
     A pattern (mgopt_pattern) is a root op type, a benefit and a callback
     that edits only through the mgopt_rw_* calls. mgopt_rewrite_function
     runs patterns with a worklist to a fixpoint (or a cap, reported with the
     patterns that kept firing), erasing dead ops and folding constants on
     the way. A pass (mgopt_pass_def) has a name such as
     "common::const_elimination" (the short form also resolves), typed
     options and a run function, or instead of the run function a pattern
     table that the pass manager runs with mgopt_rewrite_program (see
     mgopt_pass_def); mgopt_pipeline_run runs a pipeline string
     such as "const_elimination{skip_const_by_size=1000},dead_code_elimination"
     or a named pipeline ("default", "cleanup", ...) with per-pass timing,
     rewrite counts, op counts and an optional verify after each pass.

   EVALUATION
     mgopt_eval (mgopt_passes.h) runs a function on input tensors with the
     kernels that fold constants: a reference evaluator, exact and checked
     rather than fast, for testing passes and conformance (`mgopt test`).
         mgopt_tensor *in[1], *out[1];
         in[0] = mgopt_eval_tensor_new(p, MGOPT_DT_FP32, 2, shape);
         ... fill in[0]->data ...
         if (mgopt_eval(p, NULL, in, 1, out, 1, NULL, &d) == MGOPT_OK) {
           ... out[0]->dtype, ->rank, ->shape, ->data ...
           mgopt_eval_tensor_free(p, out[0]);
         }
         mgopt_eval_tensor_free(p, in[0]);
     Inputs are checked against the function's declared types; cond and
     while_loop run their blocks (max_loop_iterations bounds a loop); an op
     without a kernel (opaque ops, conv today) goes to the caller's op_fn or
     is an error naming it, and a kernel that cannot compute (an index out
     of range, an integer division by zero, an unsupported dtype) is an
     error with the op's name, type, line:col and the reason, never a
     silent wrong value. Intermediate tensors live on the program's
     allocator, not its arena, and each is freed after its last read, so a
     program can be evaluated any number of times. The numeric contract of
     each op family is in src/kernels/eval.c and the kernel files.
     For a program read from ONNX, op_fn = mgopt_onnx_eval_op evaluates
     the ops the import left opaque: ONNX ops without a MIL op by kernels of
     their own, and ops that stayed opaque because a parameter was not a
     constant at import by the importer's mapping run on the run-time
     operands (see mgopt_passes.h).

   WHAT MGOPT DOES NOT DO
     It does not run models fast (its evaluator is a reference), does not train,
     does not lower to hardware-specific ops, and does not guess: an op it
     does not understand is carried through unchanged.
   ===========================================================================
*/
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
/* src/onnx/onnx_api.h — public declarations for reading and writing ONNX models (the ModelProto tree). */
#ifndef MGOPT_ONNX_H_INCLUDED
#define MGOPT_ONNX_H_INCLUDED
#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- ONNX model tree

   mgopt_onnx_read decodes a serialized ModelProto into this tree, one struct
   per protobuf message, allocated in the arena of a program it creates
   (model->program): the tree lives and dies with that program. Field names
   follow onnx.proto; a repeated field is a pointer and an int64_t count.

   Strings are mgopt_str (pointer + length, may hold any bytes). Names and
   identifiers (node inputs/outputs, op types, domains, value and attribute
   names, dim params) are interned in the program: NUL-terminated, and equal
   names share a pointer (mgopt_onnx_import relies on it: a tree built or
   edited by hand interns its names with mgopt_program_intern). Other strings and bytes (doc strings, attribute s,
   string_data, raw_data) are BORROWED from the input buffer, which must
   outlive the program. An absent string has len 0 (its ptr may be NULL).

   `has` words record which singular fields were present on the wire, so an
   explicit zero (dim_value: 0, i: 0, an empty raw_data) is written back.
   A builder may leave them 0: nonzero values are always written.

   Fields the reader does not know are dropped (a re-encoded model holds only
   the fields listed here). Every listed field survives a read/write round
   trip exactly, and writing is deterministic (fields in field-number order).

   Not decoded but kept as their exact bytes: TypeProto of kinds other than
   tensor (sequence, map, optional, sparse tensor, opaque: type->other),
   ModelProto.training_info and GraphProto.quantization_annotation. */

/* ONNX TensorProto.DataType values. */
#define MGOPT_ONNX_DT_UNDEFINED 0
#define MGOPT_ONNX_DT_FLOAT 1
#define MGOPT_ONNX_DT_UINT8 2
#define MGOPT_ONNX_DT_INT8 3
#define MGOPT_ONNX_DT_UINT16 4
#define MGOPT_ONNX_DT_INT16 5
#define MGOPT_ONNX_DT_INT32 6
#define MGOPT_ONNX_DT_INT64 7
#define MGOPT_ONNX_DT_STRING 8
#define MGOPT_ONNX_DT_BOOL 9
#define MGOPT_ONNX_DT_FLOAT16 10
#define MGOPT_ONNX_DT_DOUBLE 11
#define MGOPT_ONNX_DT_UINT32 12
#define MGOPT_ONNX_DT_UINT64 13
#define MGOPT_ONNX_DT_COMPLEX64 14
#define MGOPT_ONNX_DT_COMPLEX128 15
#define MGOPT_ONNX_DT_BFLOAT16 16
#define MGOPT_ONNX_DT_FLOAT8E4M3FN 17
#define MGOPT_ONNX_DT_FLOAT8E4M3FNUZ 18
#define MGOPT_ONNX_DT_FLOAT8E5M2 19
#define MGOPT_ONNX_DT_FLOAT8E5M2FNUZ 20
#define MGOPT_ONNX_DT_UINT4 21
#define MGOPT_ONNX_DT_INT4 22
#define MGOPT_ONNX_DT_FLOAT4E2M1 23
#define MGOPT_ONNX_DT_FLOAT8E8M0 24
#define MGOPT_ONNX_DT__COUNT 25

/* ONNX AttributeProto.AttributeType values. */
#define MGOPT_ONNX_ATTR_UNDEFINED 0
#define MGOPT_ONNX_ATTR_FLOAT 1
#define MGOPT_ONNX_ATTR_INT 2
#define MGOPT_ONNX_ATTR_STRING 3
#define MGOPT_ONNX_ATTR_TENSOR 4
#define MGOPT_ONNX_ATTR_GRAPH 5
#define MGOPT_ONNX_ATTR_FLOATS 6
#define MGOPT_ONNX_ATTR_INTS 7
#define MGOPT_ONNX_ATTR_STRINGS 8
#define MGOPT_ONNX_ATTR_TENSORS 9
#define MGOPT_ONNX_ATTR_GRAPHS 10
#define MGOPT_ONNX_ATTR_SPARSE_TENSOR 11
#define MGOPT_ONNX_ATTR_SPARSE_TENSORS 12
#define MGOPT_ONNX_ATTR_TYPE_PROTO 13
#define MGOPT_ONNX_ATTR_TYPE_PROTOS 14
/* The tag of an mgopt_attr of kind MGOPT_ATTR_BYTES that stands for an
   attribute reference inside a model-local function body (ONNX
   AttributeProto.ref_attr_name): MGOPT_ONNX_ATTR_REF | the attribute's type,
   the bytes being the name of the function attribute it refers to. */
#define MGOPT_ONNX_ATTR_REF 0x100

/* TensorProto.data_location */
#define MGOPT_ONNX_LOC_DEFAULT 0
#define MGOPT_ONNX_LOC_EXTERNAL 1

/* Presence bits (the `has` words). */
#define MGOPT_ONNX_DIM_HAS_VALUE (1u << 0)
#define MGOPT_ONNX_DIM_HAS_PARAM (1u << 1)
#define MGOPT_ONNX_TTYPE_HAS_ELEM_TYPE (1u << 0)
#define MGOPT_ONNX_ATTR_HAS_F (1u << 0)
#define MGOPT_ONNX_ATTR_HAS_I (1u << 1)
#define MGOPT_ONNX_ATTR_HAS_S (1u << 2)
#define MGOPT_ONNX_ATTR_HAS_TYPE (1u << 3)
#define MGOPT_ONNX_TENSOR_HAS_DATA_TYPE (1u << 0)
#define MGOPT_ONNX_TENSOR_HAS_RAW_DATA (1u << 1)

typedef struct mgopt_onnx_graph mgopt_onnx_graph;
typedef struct mgopt_onnx_type mgopt_onnx_type;

typedef struct mgopt_onnx_strstr { /* StringStringEntryProto */
  uint32_t has;
  mgopt_str key, value;
} mgopt_onnx_strstr;

typedef struct mgopt_onnx_opset { /* OperatorSetIdProto */
  uint32_t has;
  mgopt_str domain; /* "" = the default ONNX domain */
  int64_t version;
} mgopt_onnx_opset;

typedef struct mgopt_onnx_dim { /* TensorShapeProto.Dimension: value, param, or neither (unknown) */
  uint32_t has;                 /* MGOPT_ONNX_DIM_HAS_VALUE / _PARAM */
  int64_t value;
  mgopt_str param;
  mgopt_str denotation;
} mgopt_onnx_dim;

typedef struct mgopt_onnx_shape { /* TensorShapeProto */
  mgopt_onnx_dim *dims;
  int64_t ndims;
} mgopt_onnx_shape;

typedef struct mgopt_onnx_tensor_type { /* TypeProto.Tensor */
  uint32_t has;
  int32_t elem_type;        /* MGOPT_ONNX_DT_* */
  mgopt_onnx_shape *shape;  /* NULL = rank unknown; ndims 0 = scalar */
} mgopt_onnx_tensor_type;

struct mgopt_onnx_type { /* TypeProto */
  mgopt_onnx_tensor_type *tensor_type; /* tensor types, decoded */
  mgopt_str denotation;
  mgopt_str other; /* len > 0: any other kind, the whole encoded TypeProto (the fields above are then unused) */
};

typedef struct mgopt_onnx_value_info { /* ValueInfoProto */
  uint32_t has;
  mgopt_str name;
  mgopt_onnx_type *type; /* NULL if absent */
  mgopt_str doc_string;
  mgopt_onnx_strstr *metadata_props;
  int64_t nmetadata_props;
} mgopt_onnx_value_info;

/* TensorProto. Data lives in exactly one place, chosen by data_type:
   raw_data (little-endian bytes, borrowed from the input buffer, never copied),
   or the typed field of the ONNX storage rules: float_data (FLOAT, COMPLEX64),
   int32_data (INT32, INT16, INT8, UINT16, UINT8, BOOL, FLOAT16 and BFLOAT16 as
   bit patterns, FLOAT8*, and 4-bit types two per entry), string_data (STRING),
   int64_data (INT64), double_data (DOUBLE, COMPLEX128), uint64_data (UINT32,
   UINT64); or outside the model (data_location EXTERNAL, external_data keys
   location / offset / length). The reader checks element counts against dims. */
typedef struct mgopt_onnx_tensor {
  uint32_t has;          /* MGOPT_ONNX_TENSOR_HAS_* */
  int64_t *dims;
  int64_t ndims;
  int32_t data_type;     /* MGOPT_ONNX_DT_* */
  int32_t data_location; /* MGOPT_ONNX_LOC_* */
  mgopt_str name;
  mgopt_str doc_string;
  mgopt_str raw_data;
  float *float_data;
  int64_t nfloat_data;
  int32_t *int32_data;
  int64_t nint32_data;
  mgopt_str *string_data;
  int64_t nstring_data;
  int64_t *int64_data;
  int64_t nint64_data;
  double *double_data;
  int64_t ndouble_data;
  uint64_t *uint64_data;
  int64_t nuint64_data;
  mgopt_onnx_strstr *external_data;
  int64_t nexternal_data;
  mgopt_onnx_strstr *metadata_props;
  int64_t nmetadata_props;
  /* not serialized: set by the reader */
  int64_t numel;              /* product of dims */
  const char *ext_location;   /* after mgopt_onnx_load_external: where raw_data came from */
  int64_t ext_offset;
} mgopt_onnx_tensor;

typedef struct mgopt_onnx_sparse_tensor { /* SparseTensorProto */
  mgopt_onnx_tensor *values;
  mgopt_onnx_tensor *indices;
  int64_t *dims;
  int64_t ndims;
} mgopt_onnx_sparse_tensor;

typedef struct mgopt_onnx_attribute { /* AttributeProto */
  uint32_t has;               /* MGOPT_ONNX_ATTR_HAS_* */
  mgopt_str name;
  mgopt_str ref_attr_name;
  mgopt_str doc_string;
  int32_t type;               /* MGOPT_ONNX_ATTR_* */
  float f;
  int64_t i;
  mgopt_str s;
  mgopt_onnx_tensor *t;
  mgopt_onnx_graph *g;
  mgopt_onnx_sparse_tensor *sparse_tensor;
  mgopt_onnx_type *tp;
  float *floats;
  int64_t nfloats;
  int64_t *ints;
  int64_t nints;
  mgopt_str *strings;
  int64_t nstrings;
  mgopt_onnx_tensor *tensors;
  int64_t ntensors;
  mgopt_onnx_graph *graphs;
  int64_t ngraphs;
  mgopt_onnx_sparse_tensor *sparse_tensors;
  int64_t nsparse_tensors;
  mgopt_onnx_type *type_protos;
  int64_t ntype_protos;
} mgopt_onnx_attribute;

typedef struct mgopt_onnx_node { /* NodeProto */
  uint32_t has;
  mgopt_str *inputs;   /* "" = an omitted optional input */
  int64_t ninputs;
  mgopt_str *outputs;  /* "" = an omitted optional output */
  int64_t noutputs;
  mgopt_str name;
  mgopt_str op_type;
  mgopt_str domain;
  mgopt_str overload;
  mgopt_onnx_attribute *attributes;
  int64_t nattributes;
  mgopt_str doc_string;
  mgopt_onnx_strstr *metadata_props;
  int64_t nmetadata_props;
} mgopt_onnx_node;

struct mgopt_onnx_graph { /* GraphProto */
  uint32_t has;
  mgopt_onnx_node *nodes;
  int64_t nnodes;
  mgopt_str name;
  mgopt_onnx_tensor *initializers;
  int64_t ninitializers;
  mgopt_onnx_sparse_tensor *sparse_initializers;
  int64_t nsparse_initializers;
  mgopt_str doc_string;
  mgopt_onnx_value_info *inputs;
  int64_t ninputs;
  mgopt_onnx_value_info *outputs;
  int64_t noutputs;
  mgopt_onnx_value_info *value_info;
  int64_t nvalue_info;
  mgopt_str *quantization_annotation; /* each an encoded TensorAnnotation */
  int64_t nquantization_annotation;
  mgopt_onnx_strstr *metadata_props;
  int64_t nmetadata_props;
};

typedef struct mgopt_onnx_function { /* FunctionProto */
  uint32_t has;
  mgopt_str name;
  mgopt_str *inputs;
  int64_t ninputs;
  mgopt_str *outputs;
  int64_t noutputs;
  mgopt_str *attributes;             /* attribute names without defaults */
  int64_t nattributes;
  mgopt_onnx_node *nodes;
  int64_t nnodes;
  mgopt_str doc_string;
  mgopt_onnx_opset *opset_imports;
  int64_t nopset_imports;
  mgopt_str domain;
  mgopt_onnx_attribute *attribute_protos; /* attributes with defaults */
  int64_t nattribute_protos;
  mgopt_onnx_value_info *value_info;
  int64_t nvalue_info;
  mgopt_str overload;
  mgopt_onnx_strstr *metadata_props;
  int64_t nmetadata_props;
} mgopt_onnx_function;

typedef struct mgopt_onnx_model { /* ModelProto */
  uint32_t has;
  int64_t ir_version;
  mgopt_str producer_name;
  mgopt_str producer_version;
  mgopt_str domain;
  int64_t model_version;
  mgopt_str doc_string;
  mgopt_onnx_graph *graph;
  mgopt_onnx_opset *opset_imports;
  int64_t nopset_imports;
  mgopt_onnx_strstr *metadata_props;
  int64_t nmetadata_props;
  mgopt_str *training_info;  /* each an encoded TrainingInfoProto */
  int64_t ntraining_info;
  mgopt_onnx_function *functions;
  int64_t nfunctions;
  /* not serialized */
  mgopt_program *program;    /* owns the tree (and the file bytes after read_file) */
  int constant_inputs;       /* mgopt_onnx_import: as mgopt_onnx_read_options (set by the read) */
  const char *dir;           /* directory of the file read ("" = current), NULL for buffers */
} mgopt_onnx_model;

/* ---------------------------------------------------------------- reading */

typedef struct mgopt_onnx_read_options {
  int max_depth;            /* subgraph nesting limit (0 = 64) */
  int64_t max_elements;     /* limit on the sum of declared tensor elements (0 = 1 << 40) */
  const mgopt_allocator *alloc; /* for the program created (NULL = MGOPT_MALLOC family) */
  int keep_external;        /* read_file: 1 = leave external data unloaded */
  int constant_inputs;      /* import: initializers that are also graph inputs (overridable
                               defaults, IR version 4 on) become constants that passes fold,
                               instead of run-time inputs whose defaults export writes back
                               (the model's interface stays). Below IR version 4 every
                               initializer is an input and all are constants, as in ONNX
                               Runtime. */
} mgopt_onnx_read_options;

/* Decodes a serialized ModelProto of len bytes into a new program's arena and
   stores the model in *out (only on success). raw_data and other bytes are
   borrowed: buf must outlive model->program. Free everything with
   mgopt_program_destroy(model->program). opts may be NULL (every default).
   On error, d->offset is the byte offset and d->msg names the
   field path ("ModelProto.graph.node[3].attribute[1]: length past end"):
   MGOPT_ERR_CORRUPT (malformed wire data, counts that disagree with dims),
   MGOPT_ERR_UNSUPPORTED (segmented tensors, protobuf groups, unknown data
   types), MGOPT_ERR_LIMIT (options' limits), MGOPT_ERR_NOMEM. Tensors stored
   externally are left unloaded (see mgopt_onnx_load_external). */
MGOPTDEF mgopt_status mgopt_onnx_read(const void *buf, size_t len, const mgopt_onnx_read_options *opts,
                                     mgopt_onnx_model **out, mgopt_diag *d);

/* ---------------------------------------------------------------- writing */

typedef struct mgopt_onnx_write_options {
  /* > 0: initializers with raw_data of at least this many bytes are written to
     the external data (one side file, each tensor 64-byte aligned) */
  int64_t external_min_bytes;
  /* file name recorded in external_data entries, relative to the model's
     directory; NULL = "<model file name>.data" (write_file) or "model.onnx.data" */
  const char *external_location;
} mgopt_onnx_write_options;

/* Encodes m as a ModelProto appended to out (a zeroed mgopt_buf, or one with
   alloc set; free with mgopt_buf_free). With opts->external_min_bytes > 0,
   the side file's bytes are appended to `external` (required then).
   MGOPT_ERR_LIMIT when the protobuf would reach 2 GB (use external data),
   MGOPT_ERR_INVALID_ARG for a malformed tree (e.g. nested too deeply), NOMEM. */
MGOPTDEF mgopt_status mgopt_onnx_write(const mgopt_onnx_model *m, const mgopt_onnx_write_options *opts,
                                       mgopt_buf *out, mgopt_buf *external, mgopt_diag *d);

/* Receives output bytes in order; returns MGOPT_OK to go on. */
typedef mgopt_status (*mgopt_write_fn)(void *ctx, const void *data, size_t n);

/* Encodes m front to back into model_sink without building the output in
   memory: the writer buffers the model's structure and hands every large byte
   field (raw_data of at least 4 KB) to the sink straight from the model tree.
   So a sink receives two kinds of pieces: bytes in the writer's scratch
   memory, valid only during the call, and pointers into the tensors' own
   raw_data (for a model read from a caller's buffer, pointers into that
   buffer), which a sink may recognize to copy file to file without touching
   the bytes. External data (opts->external_min_bytes > 0) goes to
   external_sink, before any model byte. Sink errors are returned as they are. */
MGOPTDEF mgopt_status mgopt_onnx_write_stream(const mgopt_onnx_model *m, const mgopt_onnx_write_options *opts,
                                              mgopt_write_fn model_sink, void *model_ctx,
                                              mgopt_write_fn external_sink, void *external_ctx, mgopt_diag *d);

/* 1 if a and b hold equal trees field by field (presence bits included; the
   not-serialized fields ignored). Otherwise 0, and when where != NULL the
   path of the first difference is written there ("graph.node[2].op_type"). */
MGOPTDEF int mgopt_onnx_model_equal(const mgopt_onnx_model *a, const mgopt_onnx_model *b,
                                    char *where, size_t where_len);

/* The mgopt dtype of an ONNX data type (MGOPT_DT_UNKNOWN when none). */
MGOPTDEF mgopt_dtype mgopt_onnx_dtype(int32_t onnx_data_type);
/* Bytes of raw data a tensor of this type and element count holds; -1 for
   STRING, unknown types, or overflow. */
MGOPTDEF int64_t mgopt_onnx_raw_nbytes(int32_t onnx_data_type, int64_t numel);

#ifndef MGOPT_NO_STDIO
/* Reads the file at path into *out (only on success): its bytes stay alive in
   model->program; external data is loaded relative to the file's directory
   unless opts->keep_external. MGOPT_ERR_IO when the file cannot be read, and
   every status of mgopt_onnx_read and mgopt_onnx_load_external. */
MGOPTDEF mgopt_status mgopt_onnx_read_file(const char *path, const mgopt_onnx_read_options *opts,
                                          mgopt_onnx_model **out, mgopt_diag *d);
/* Loads every tensor with data_location EXTERNAL (keys location, offset, length;
   location relative to dir, absolute paths and ".." rejected) into the
   program's arena: the tensor then holds raw_data, data_location DEFAULT and
   remembers ext_location / ext_offset. dir NULL = m->dir. */
MGOPTDEF mgopt_status mgopt_onnx_load_external(mgopt_onnx_model *m, const char *dir, mgopt_diag *d);
/* Writes m to path; with opts->external_min_bytes > 0 large initializers go to
   the side file external_location in path's directory (created only if used). */
MGOPTDEF mgopt_status mgopt_onnx_write_file(const mgopt_onnx_model *m, const char *path,
                                            const mgopt_onnx_write_options *opts, mgopt_diag *d);
#endif

#ifdef __cplusplus
}
#endif
#endif /* MGOPT_ONNX_H_INCLUDED */
/* src/onnx/convert_api.h — public declarations for converting between ONNX model trees and the IR. */
#ifndef MGOPT_ONNX_CONVERT_H_INCLUDED
#define MGOPT_ONNX_CONVERT_H_INCLUDED
#ifdef __cplusplus
extern "C" {
#endif

/* Converts the model tree to the canonical IR in the same program
   (m->program): the graph becomes function `main`. Ops with an exactly
   equal canonical form for the model's opset become canonical ops; every
   other op stays opaque (`onnx::OpType`, or `domain::OpType`) with operand
   slots in0, in1, ... and its attributes; If/Loop/Scan bodies become nested
   blocks named after their attributes. Initializers and Constant nodes become
   `const` ops whose raw data stays borrowed; sparse initializers become dense
   `const` ops (as ONNX Runtime densifies them). The tree is kept in the program
   for mgopt_onnx_export. MGOPT_ERR_CORRUPT for undefined or duplicate names,
   MGOPT_ERR_UNSUPPORTED for constructs mgopt cannot hold: external data not
   loaded, data types with no mgopt dtype, and attributes
   of the kinds SPARSE_TENSOR(S), TENSORS, GRAPHS and TYPE_PROTOS (TYPE_PROTO
   is kept, as bytes). MGOPT_ERR_TYPE when a node's operands contradict it.
   The program's target becomes the model's opset (mgopt_onnx_set_target). */
MGOPTDEF mgopt_status mgopt_onnx_import(mgopt_onnx_model *m, mgopt_diag *d);

/* mgopt_onnx_read + mgopt_onnx_import: the program in *out (only on success;
   nothing is left allocated on failure), every status of the two in d.
   buf must outlive the program (weights are borrowed). opts may be NULL. */
MGOPTDEF mgopt_status mgopt_onnx_load(const void *buf, size_t len, const mgopt_onnx_read_options *opts,
                                     mgopt_program **out, mgopt_diag *d);

typedef struct mgopt_onnx_export_options {
  int keep_constant_nodes; /* consts that were Constant nodes stay nodes (default: initializers of
                              the graph they are in, subgraphs included from IR version 4) */
  int64_t opset;           /* default-domain opset to write (0 = the imported model's, else 17) */
} mgopt_onnx_export_options;

/* Builds a model tree from p's function `main` in p's arena: canonical ops
   become the ONNX ops of the target opset, opaque ops go back unchanged,
   consts become initializers of the graph they are in (Constant nodes in
   function bodies, and in subgraphs before IR version 4, where a subgraph
   cannot hold them), each constant the writer makes written once per graph;
   graph input/output names, order and types are kept: a main output's type
   is the one the graph computes, except that the shape the imported model
   declares is written back where it contradicts the graph (see
   mgopt_onnx_output_conflicts); model fields the IR does not hold
   (metadata, local functions, doc strings, subgraph names) come from the
   imported model. producer_name is "mgopt".
   MGOPT_ERR_UNSUPPORTED (with the op named) when an op has no ONNX form. */
MGOPTDEF mgopt_status mgopt_onnx_export(mgopt_program *p, const mgopt_onnx_export_options *opts,
                                        mgopt_onnx_model **out, mgopt_diag *d);

/* A main output whose shape the imported model declares in contradiction
   with the graph: another rank, or another size of a dim that both give
   as a number. The declaration is the model's interface, so
   mgopt_onnx_export writes it back as it was read (ONNX Runtime also keeps
   it, with a warning, and returns what the graph computes); the caller is
   told so it can warn. */
typedef struct mgopt_onnx_output_conflict {
  const char *name;    /* the output's name (interned) */
  mgopt_type declared; /* the type the model declares (in p's arena) */
  mgopt_type computed; /* the type the graph computes: the IR's */
} mgopt_onnx_output_conflict;

/* The outputs of p's main whose declared shape contradicts the graph, in
   output order: fills out[0 .. min(count, cap)) and returns the count, 0
   for a program not imported from ONNX (out may be NULL when cap is 0).
   Outputs the IR names differently from the model, or whose dtype changed,
   are not compared. -1 when memory runs out. */
MGOPTDEF int64_t mgopt_onnx_output_conflicts(mgopt_program *p, mgopt_onnx_output_conflict *out, int64_t cap);

/* Makes p's target (mgopt_program_set_target) the exporter at `opset`: the
   program then accepts an op exactly when mgopt_onnx_export at that opset
   can write it, so fusions build only ops the model can hold (no
   LayerNormalization before opset 17, no Gelu before 20, ...). opset 0 is
   the opset mgopt_onnx_export writes by default (the imported model's, else
   17). mgopt_onnx_import sets the target for the model's opset; call this
   before optimizing when the program will be exported at another opset, or
   when a program from elsewhere will be written as ONNX. The target's state
   lives in p's arena. MGOPT_ERR_INVALID_ARG when p is NULL, MGOPT_ERR_NOMEM. */
MGOPTDEF mgopt_status mgopt_onnx_set_target(mgopt_program *p, int64_t opset);

/* Imports opaque op `op` again: an `onnx::OpType` op (default domain) as
   mgopt_onnx_import leaves a node it cannot map, whose operands may since
   have become constant or typed (a Pad whose pads were computed, folded
   since). The op type's mapping at the program's ONNX opset (the imported
   model's, else 17, as mgopt_onnx_export) runs on the op's operands and
   attributes as on the node. Returns 1 when it built canonical ops: they
   stand before `op`, carry its output names, keep what its output types
   knew, take over its uses, and `op` is erased. Else the op type's output
   type rule fills output types still unknown: 2 when it did, 0 when
   nothing changed (other domains, ops with nested blocks or tensor
   attributes, a mapping that declines). -1 when memory runs out. */
MGOPTDEF int mgopt_onnx_reimport_op(mgopt_program *p, mgopt_op *op);

#ifndef MGOPT_NO_STDIO
/* mgopt_onnx_read_file + mgopt_onnx_import, as mgopt_onnx_load. */
MGOPTDEF mgopt_status mgopt_onnx_load_file(const char *path, const mgopt_onnx_read_options *opts,
                                          mgopt_program **out, mgopt_diag *d);
#endif

#ifdef __cplusplus
}
#endif
#endif /* MGOPT_ONNX_CONVERT_H_INCLUDED */

#ifdef MGOPT_IMPLEMENTATION
#ifndef MGOPT__IMPLEMENTATION_DONE
#define MGOPT__IMPLEMENTATION_DONE
/* src/internal.h — private declarations shared by the files of src/ (static once amalgamated). */
#ifndef MGOPT__INTERNAL_H
#define MGOPT__INTERNAL_H

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
/* src/core/program.c — status strings, diagnostics, heap hooks, the arena, the interner, text buffers. */

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
/* src/core/map.c — the one hash map: 64-bit keys (pointers, interned strings, hashes) to a pointer or an int64. */

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

/* src/core/tensor.c — dtypes, fp16/bf16 conversion, types and constant tensors. */
#if !defined(MGOPT_NO_SIMD) && defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
#define MGOPT__HAVE_F16C 1 /* the compiler targets F16C: use it */
#elif !defined(MGOPT_NO_SIMD) && defined(__x86_64__) && defined(__GNUC__) && __GNUC__ >= 5 && !defined(__clang__)
#include <immintrin.h>
#define MGOPT__F16C_DISPATCH 1 /* an F16C function, taken when the CPU has it */
#endif

/* ---------------------------------------------------------------- dtypes */

static const char *const mgopt__dtype_names[] = {
#define MGOPT__DT_NAME(name, str, bits) str,
    MGOPT_DTYPE_LIST(MGOPT__DT_NAME)
#undef MGOPT__DT_NAME
};
static const unsigned char mgopt__dtype_bits[] = {
#define MGOPT__DT_BITS(name, str, bits) bits,
    MGOPT_DTYPE_LIST(MGOPT__DT_BITS)
#undef MGOPT__DT_BITS
};

MGOPTDEF const char *mgopt_dtype_name(mgopt_dtype t) {
  if ((int)t <= 0 || (int)t >= (int)MGOPT_DT__COUNT) return "unknown";
  return mgopt__dtype_names[t];
}

MGOPTDEF mgopt_dtype mgopt_dtype_from_name(const char *s, size_t n) {
  static const struct {
    const char *alias;
    mgopt_dtype t;
  } aliases[] = {{"i8", MGOPT_DT_INT8},      {"i16", MGOPT_DT_INT16},   {"i32", MGOPT_DT_INT32},
                 {"i64", MGOPT_DT_INT64},    {"u8", MGOPT_DT_UINT8},    {"u16", MGOPT_DT_UINT16},
                 {"u32", MGOPT_DT_UINT32},   {"u64", MGOPT_DT_UINT64},  {"fp8", MGOPT_DT_FP8E4M3FN},
                 {"float16", MGOPT_DT_FP16}, {"float32", MGOPT_DT_FP32}, {"float64", MGOPT_DT_FP64},
                 {"bfloat16", MGOPT_DT_BF16}, {"f16", MGOPT_DT_FP16},   {"f32", MGOPT_DT_FP32},
                 {"f64", MGOPT_DT_FP64},     {"float", MGOPT_DT_FP32},  {"double", MGOPT_DT_FP64},
                 {"int", MGOPT_DT_INT32},    {"str", MGOPT_DT_STRING}};
  int i;
  for (i = 1; i < (int)MGOPT_DT__COUNT; i++)
    if (strlen(mgopt__dtype_names[i]) == n && memcmp(mgopt__dtype_names[i], s, n) == 0)
      return (mgopt_dtype)i;
  for (i = 0; i < MGOPT__ARRAY_COUNT(aliases); i++)
    if (strlen(aliases[i].alias) == n && memcmp(aliases[i].alias, s, n) == 0) return aliases[i].t;
  return MGOPT_DT_UNKNOWN;
}

MGOPTDEF int mgopt_dtype_bits(mgopt_dtype t) {
  if ((int)t <= 0 || (int)t >= (int)MGOPT_DT__COUNT) return 0;
  return mgopt__dtype_bits[t];
}

MGOPTDEF int mgopt_dtype_is_float(mgopt_dtype t) {
  switch (t) {
    case MGOPT_DT_FP16: case MGOPT_DT_BF16: case MGOPT_DT_FP32: case MGOPT_DT_FP64:
    case MGOPT_DT_FP8E4M3FN: case MGOPT_DT_FP8E4M3FNUZ: case MGOPT_DT_FP8E5M2:
    case MGOPT_DT_FP8E5M2FNUZ:
      return 1;
    default:
      return 0;
  }
}

MGOPTDEF int mgopt_dtype_is_signed(mgopt_dtype t) {
  switch (t) {
    case MGOPT_DT_INT4: case MGOPT_DT_INT8: case MGOPT_DT_INT16: case MGOPT_DT_INT32:
    case MGOPT_DT_INT64: case MGOPT_DT_INT4X:
      return 1;
    default:
      return 0;
  }
}

MGOPTDEF int mgopt_dtype_is_int(mgopt_dtype t) {
  switch (t) {
    case MGOPT_DT_UINT1: case MGOPT_DT_UINT2: case MGOPT_DT_UINT3: case MGOPT_DT_UINT4:
    case MGOPT_DT_UINT6: case MGOPT_DT_UINT8: case MGOPT_DT_UINT16: case MGOPT_DT_UINT32:
    case MGOPT_DT_UINT64: case MGOPT_DT_UINT4X:
      return 1;
    default:
      return mgopt_dtype_is_signed(t);
  }
}

MGOPTDEF int64_t mgopt_dtype_nbytes(mgopt_dtype t, int64_t n) {
  int64_t bits;
  if (n < 0) return -1;
  if (t == MGOPT_DT_STRING) {
    if (!mgopt__mul_i64(n, (int64_t)sizeof(mgopt_str), &bits)) return -1;
    return bits;
  }
  if (!mgopt__mul_i64(n, mgopt_dtype_bits(t), &bits)) return -1;
  return (bits + 7) / 8;
}

/* ---------------------------------------------------------------- byte order */

MGOPT__PRIVATE mgopt_dtype mgopt__dtype_lut_index(int nbits) {
  switch (nbits) {
    case 1: return MGOPT_DT_UINT1;
    case 2: return MGOPT_DT_UINT2;
    case 3: return MGOPT_DT_UINT3;
    case 4: return MGOPT_DT_UINT4;
    case 6: return MGOPT_DT_UINT6;
    default: return MGOPT_DT_UINT8;
  }
}

MGOPT__PRIVATE size_t mgopt__dtype_swap_unit(mgopt_dtype dt) {
  int bits = mgopt_dtype_bits(dt);
  if (dt == MGOPT_DT_COMPLEX64 || dt == MGOPT_DT_COMPLEX128) bits /= 2;
  return bits >= 16 ? (size_t)bits / 8 : 1u;
}

MGOPT__PRIVATE void mgopt__le_copy(void *dst, const void *src, size_t n, size_t unit) {
  unsigned char *d = (unsigned char *)dst;
  const unsigned char *s = (const unsigned char *)src;
  size_t i, k;
  if (!n) return;
  if (unit <= 1 || mgopt__host_le()) {
    memcpy(d, s, n);
    return;
  }
  for (i = 0; i + unit <= n; i += unit)
    for (k = 0; k < unit; k++) d[i + k] = s[i + unit - 1 - k];
}

/* ---------------------------------------------------------------- fp16 / bf16 */

static uint32_t mgopt__f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float mgopt__bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* fp32 -> fp16, round to nearest even, branch-free so that loops over it
   vectorize. From the magnitude bits a of x:
   - a > inf: NaN, quiet, keeping the sign and the top 10 payload bits;
   - a >= 65536 (and inf): +-inf;
   - a >= 2^-14 (normal fp16): rebias the exponent, then round the 13 dropped
     mantissa bits to nearest even in integers (a carry into the exponent is
     the correct result, 65520 and up give inf);
   - below: |x| + 0.5f rounds |x| to a multiple of 2^-24 (the fp16 subnormal
     quantum) in the float adder's round-to-nearest-even mode; the low bits of
     the sum are the subnormal (0x400 when it rounds up to the smallest
     normal). Every fp32 value below 2^-25 gives +-0. */
static uint16_t mgopt__f32_to_f16_bits(uint32_t x) {
  uint32_t a = x & 0x7fffffffu, sign = (x >> 16) & 0x8000u;
  uint32_t rb = a - 0x38000000u;
  uint32_t norm = (rb + 0xfffu + ((rb >> 13) & 1u)) >> 13;
  float af = mgopt__bits_f32(a) + 0.5f;
  uint32_t sub = mgopt__f32_bits(af) - 0x3f000000u;
  uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu);
  /* selections as masks: compilers keep them branch-free */
  uint32_t m_sub = 0u - (uint32_t)(a < 0x38800000u), m_inf = 0u - (uint32_t)(a >= 0x47800000u);
  uint32_t m_nan = 0u - (uint32_t)(a > 0x7f800000u);
  uint32_t r = (sub & m_sub) | (norm & ~m_sub);
  r = (0x7c00u & m_inf) | (r & ~m_inf);
  r = (nan & m_nan) | (r & ~m_nan);
  return (uint16_t)(sign | r);
}

MGOPTDEF uint16_t mgopt_f32_to_f16(float f) { return mgopt__f32_to_f16_bits(mgopt__f32_bits(f)); }

/* The bulk conversion: F16C (8 lanes, round to nearest even) when the
   compiler targets it, or (gcc on x86-64) when the CPU has it, else
   the portable loop above, which compilers vectorize. Both give mgopt_f32_to_f16's bits (F16C quiets NaNs the same
   way: sign, 0x7e00, top payload bits). */
#if defined(MGOPT__F16C_DISPATCH)
__attribute__((target("avx,f16c"))) static int64_t mgopt__f32_to_f16_f16c(const float *src, uint16_t *dst,
                                                                           int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(void *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), 0));
  return i;
}
#endif

MGOPTDEF void mgopt_f32_to_f16_n(const float *src, uint16_t *dst, int64_t n) {
  int64_t i = 0;
#if defined(MGOPT__HAVE_F16C)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(void *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), 0));
#elif defined(MGOPT__F16C_DISPATCH)
  if (n >= 64 && __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx"))
    i = mgopt__f32_to_f16_f16c(src, dst, n);
#endif
  for (; i < n; i++) {
    uint32_t x;
    memcpy(&x, src + i, 4);
    dst[i] = mgopt__f32_to_f16_bits(x);
  }
}

MGOPTDEF float mgopt_f16_to_f32(uint16_t h) {
  uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0) {
    if (man == 0) return mgopt__bits_f32(sign);
    /* subnormal: normalise */
    exp = 127 - 15 + 1;
    while (!(man & 0x400u)) {
      man <<= 1;
      exp--;
    }
    man &= 0x3ffu;
    return mgopt__bits_f32(sign | (exp << 23) | (man << 13));
  }
  if (exp == 31) return mgopt__bits_f32(sign | 0x7f800000u | (man << 13));
  return mgopt__bits_f32(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

MGOPTDEF uint16_t mgopt_f32_to_bf16(float f) {
  uint32_t x = mgopt__f32_bits(f);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu)) return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

MGOPTDEF float mgopt_bf16_to_f32(uint16_t h) { return mgopt__bits_f32((uint32_t)h << 16); }

/* ---------------------------------------------------------------- types */

MGOPTDEF mgopt_status mgopt_type_make(mgopt_program *p, mgopt_type *out, mgopt_dtype dt,
                                      int32_t rank, const mgopt_dim *dims) {
  mgopt_type t;
  int32_t i;
  memset(&t, 0, sizeof t);
  t.kind = MGOPT_TYPE_TENSOR;
  t.dtype = (uint8_t)dt;
  t.rank = rank;
  if (rank > 0) {
    t.dims = (mgopt_dim *)mgopt_program_alloc(p, sizeof(mgopt_dim) * (size_t)rank, 8);
    if (!t.dims) return MGOPT_ERR_NOMEM;
    for (i = 0; i < rank; i++) t.dims[i] = dims ? dims[i] : mgopt_dim_unknown();
  }
  *out = t;
  return MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_type_make_static(mgopt_program *p, mgopt_type *out, mgopt_dtype dt,
                                             int32_t rank, const int64_t *shape) {
  mgopt_status s = mgopt_type_make(p, out, dt, rank, NULL);
  int32_t i;
  if (s) return s;
  for (i = 0; i < rank; i++) out->dims[i] = mgopt_dim_static(shape[i]);
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__type_copy(mgopt_program *p, mgopt_type *dst, const mgopt_type *src) {
  mgopt_type t = *src;
  if (src->rank > 0 && src->dims) {
    t.dims = (mgopt_dim *)mgopt__dup(p, src->dims, sizeof(mgopt_dim) * (size_t)src->rank);
    if (!t.dims) return MGOPT_ERR_NOMEM;
  }
  *dst = t;
  return MGOPT_OK;
}

MGOPT__PRIVATE int32_t mgopt__type_clash(const mgopt_type *decl, const mgopt_type *have, int strict_dtype) {
  int32_t j;
  if (decl->kind != have->kind) return MGOPT__CLASH_KIND;
  if (decl->kind == MGOPT_TYPE_OTHER) return 0; /* a state compares as the tensor it holds */
  if (have->dtype != MGOPT_DT_UNKNOWN && (strict_dtype || decl->dtype != MGOPT_DT_UNKNOWN) &&
      decl->dtype != have->dtype)
    return MGOPT__CLASH_DTYPE;
  if (decl->rank < 0 || have->rank < 0) return 0;
  if (decl->rank != have->rank) return MGOPT__CLASH_RANK;
  if (decl->rank > 0 && (!decl->dims || !have->dims)) return MGOPT__CLASH_RANK; /* a rank without dims */
  for (j = 0; j < decl->rank; j++)
    if (mgopt_dim_is_static(decl->dims[j]) && mgopt_dim_is_static(have->dims[j]) && decl->dims[j].v != have->dims[j].v)
      return 1 + j;
  return 0;
}

MGOPTDEF int mgopt_type_equal(const mgopt_type *a, const mgopt_type *b) {
  int32_t i;
  if (a->kind != b->kind) return 0;
  if (a->kind == MGOPT_TYPE_OTHER)
    return a->other_len == b->other_len &&
           (a->other_len == 0 || memcmp(a->other, b->other, a->other_len) == 0);
  if (a->dtype != b->dtype || a->rank != b->rank) return 0;
  for (i = 0; i < a->rank; i++) {
    mgopt_dim x = a->dims[i], y = b->dims[i];
    if (x.sym != y.sym) return 0;
    if (!x.sym && (x.v < 0) != (y.v < 0)) return 0;
    if (!x.sym && x.v >= 0 && x.v != y.v) return 0;
  }
  return 1;
}

MGOPTDEF int mgopt_type_is_static(const mgopt_type *t) {
  int32_t i;
  if (t->kind != MGOPT_TYPE_TENSOR || t->rank < 0) return 0;
  for (i = 0; i < t->rank; i++)
    if (!mgopt_dim_is_static(t->dims[i])) return 0;
  return 1;
}

MGOPTDEF int64_t mgopt_type_numel(const mgopt_type *t) {
  int64_t n = 1;
  int32_t i;
  if (!mgopt_type_is_static(t)) return -1;
  for (i = 0; i < t->rank; i++)
    if (!mgopt__mul_i64(n, t->dims[i].v, &n)) return -1;
  return n;
}

/* ---------------------------------------------------------------- tensors */

/* Every mgopt_tensor is the head of one of these (all come from
   mgopt__tensor_head), so the caches stay out of the public struct. */
typedef struct mgopt__tensor_rec {
  mgopt_tensor t;
  uint64_t hash;      /* content hash, valid when hash_valid */
  uint64_t probe;     /* sampled-content key, valid when probe_valid */
  /* 2-d tensors: bytes that never change (borrowed) whose transpose t's
     bytes are, or NULL; forgotten at t's first write */
  const void *tsrc;
  /* the one op that holds t, for a caller that then may write t in place
     (mgopt__tensor_set_holder), or NULL */
  const void *holder;
  uint8_t hash_valid;
  uint8_t probe_valid;
} mgopt__tensor_rec;

#define MGOPT__TREC(t) ((mgopt__tensor_rec *)(void *)(t))
#define MGOPT__TREC_C(t) ((const mgopt__tensor_rec *)(const void *)(t))

MGOPT__PRIVATE size_t mgopt__tensor_rec_size(void) { return sizeof(mgopt__tensor_rec); }

/* A write may change the bytes: forget what was computed from them. */
static void mgopt__tensor_touch(mgopt_tensor *t) {
  MGOPT__TREC(t)->hash_valid = 0;
  MGOPT__TREC(t)->probe_valid = 0;
  MGOPT__TREC(t)->tsrc = NULL;
}

static mgopt_tensor *mgopt__tensor_head(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                        const int64_t *shape) {
  mgopt_tensor *t;
  int64_t n = 1;
  int64_t nb;
  int32_t i;
  if (rank < 0) return NULL;
  for (i = 0; i < rank; i++)
    if (!mgopt__mul_i64(n, shape[i], &n)) return NULL;
  nb = mgopt_dtype_nbytes(dt, n);
  if (nb < 0 || (uint64_t)nb > (uint64_t)SIZE_MAX / 2) return NULL;
  t = (mgopt_tensor *)mgopt_program_alloc(p, sizeof(mgopt__tensor_rec), 8);
  if (!t) return NULL;
  t->dtype = (uint8_t)dt;
  t->rank = rank;
  t->numel = n;
  t->nbytes = (size_t)nb;
  t->ext_offset = -1;
  if (rank > 0) {
    t->shape = (int64_t *)mgopt__dup(p, shape, sizeof(int64_t) * (size_t)rank);
    if (!t->shape) return NULL;
  }
  return t;
}

/* A tensor with its own 64-byte-aligned data, zeroed or (for a caller that
   writes every byte) not; strings are always zeroed (empty). */
MGOPT__PRIVATE mgopt_tensor *mgopt__tensor_new_data(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                                  const int64_t *shape, int zero) {
  mgopt_tensor *t = mgopt__tensor_head(p, dt, rank, shape);
  if (!t) return NULL;
  t->data = mgopt__arena_alloc(p, t->nbytes ? t->nbytes : 1, 64, zero || dt == MGOPT_DT_STRING);
  if (!t->data) return NULL;
  return t;
}

MGOPTDEF mgopt_tensor *mgopt_tensor_new(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                        const int64_t *shape) {
  return mgopt__tensor_new_data(p, dt, rank, shape, 1);
}

MGOPTDEF mgopt_tensor *mgopt_tensor_new_borrowed(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                                 const int64_t *shape, const void *data,
                                                 size_t nbytes) {
  mgopt_tensor *t = mgopt__tensor_head(p, dt, rank, shape);
  if (!t || t->nbytes != nbytes || dt == MGOPT_DT_STRING) return NULL;
  t->data = (void *)(uintptr_t)data;
  t->borrowed = 1;
  return t;
}

MGOPT__PRIVATE mgopt_tensor *mgopt__tensor_view(mgopt_program *p, mgopt_tensor *t, size_t offset, int32_t rank,
                                              const int64_t *shape) {
  mgopt_tensor *v = mgopt__tensor_head(p, (mgopt_dtype)t->dtype, rank, shape);
  if (!v || t->dtype == MGOPT_DT_STRING || offset > t->nbytes || v->nbytes > t->nbytes - offset) return NULL;
  v->data = offset ? (uint8_t *)t->data + offset : t->data; /* (no arithmetic on a NULL of 0 bytes) */
  v->borrowed = 1;
  t->borrowed = 1;
  return v;
}

MGOPT__PRIVATE void mgopt__tensor_set_holder(mgopt_tensor *t, const void *holder) { MGOPT__TREC(t)->holder = holder; }

MGOPT__PRIVATE int mgopt__tensor_held_only_by(const mgopt_tensor *t, const void *holder) {
  return holder && !t->borrowed && MGOPT__TREC_C(t)->holder == holder;
}

/* dst[j][i] = src[i][j] for src [r, c] of es-byte elements, in 32 x 32 tiles
   so both sides stay in cache; memcpy per element, so src may be unaligned. */
static void mgopt__transpose_bytes(uint8_t *MGOPT_RESTRICT dst, const uint8_t *src, int64_t r, int64_t c, size_t es) {
  int64_t i0, j0, i, j;
  for (i0 = 0; i0 < r; i0 += 32)
    for (j0 = 0; j0 < c; j0 += 32) {
      int64_t ie = i0 + 32 < r ? i0 + 32 : r, je = j0 + 32 < c ? j0 + 32 : c;
      if (es == 4) {
        for (j = j0; j < je; j++)
          for (i = i0; i < ie; i++) memcpy(dst + ((size_t)(j * r + i)) * 4, src + ((size_t)(i * c + j)) * 4, 4);
        continue;
      }
      for (j = j0; j < je; j++)
        for (i = i0; i < ie; i++) memcpy(dst + ((size_t)(j * r + i)) * es, src + ((size_t)(i * c + j)) * es, es);
    }
}

MGOPT__PRIVATE mgopt_tensor *mgopt__tensor_transpose2d(mgopt_program *p, mgopt_tensor *t) {
  int64_t shape[2];
  int bits = mgopt_dtype_bits((mgopt_dtype)t->dtype);
  const void *src = MGOPT__TREC(t)->tsrc;
  mgopt_tensor *nt;
  if (t->rank != 2 || t->dtype == MGOPT_DT_STRING || bits < 8 || bits % 8) return NULL;
  shape[0] = t->shape[1];
  shape[1] = t->shape[0];
  if (src) /* t was made as the transpose of these bytes: they are the answer */
    return mgopt_tensor_new_borrowed(p, (mgopt_dtype)t->dtype, 2, shape, src, t->nbytes);
  nt = mgopt__tensor_new_data(p, (mgopt_dtype)t->dtype, 2, shape, 0); /* all written below */
  if (!nt) return NULL;
  if (t->nbytes) mgopt__transpose_bytes((uint8_t *)nt->data, (const uint8_t *)t->data, t->shape[0], t->shape[1], (size_t)(bits / 8));
  /* t's bytes stay as they are (a later write to t copies first), so the
     transpose of nt is always t's bytes of now */
  t->borrowed = 1;
  MGOPT__TREC(nt)->tsrc = t->data;
  return nt;
}

MGOPTDEF mgopt_tensor *mgopt_tensor_new_scalar_f64(mgopt_program *p, mgopt_dtype dt, double v) {
  mgopt_tensor *t = mgopt_tensor_new(p, dt, 0, NULL);
  if (t) mgopt_tensor_set_f64(t, 0, v);
  return t;
}

MGOPTDEF mgopt_tensor *mgopt_tensor_new_scalar_i64(mgopt_program *p, mgopt_dtype dt, int64_t v) {
  mgopt_tensor *t = mgopt_tensor_new(p, dt, 0, NULL);
  if (t) mgopt_tensor_set_i64(t, 0, v);
  return t;
}

MGOPTDEF const void *mgopt_tensor_data(mgopt_program *p, mgopt_tensor *t) {
  /* the natural alignment of the element: 1, 2, 4 or 8 bytes */
  int bits = mgopt_dtype_bits((mgopt_dtype)t->dtype);
  uintptr_t align = bits >= 64 ? 8u : bits >= 32 ? 4u : bits >= 16 ? 2u : 1u;
  if (t->borrowed && ((uintptr_t)t->data & (align - 1u))) {
    void *d = mgopt__arena_alloc(p, t->nbytes ? t->nbytes : 1, 64, 0); /* every byte copied below */
    if (!d) return NULL;
    memcpy(d, t->data, t->nbytes);
    t->data = d;
    t->borrowed = 0;
  }
  return t->data;
}

MGOPTDEF void *mgopt_tensor_data_mut(mgopt_program *p, mgopt_tensor *t) {
  if (t->borrowed) {
    void *d = mgopt__arena_alloc(p, t->nbytes ? t->nbytes : 1, 64, 0); /* every byte copied below */
    if (!d) return NULL;
    memcpy(d, t->data, t->nbytes);
    t->data = d;
    t->borrowed = 0;
  }
  mgopt__tensor_touch(t);
  return t->data;
}

/* Sub-byte element access: element i occupies bits [i*b, i*b+b) little-endian. */
static uint64_t mgopt__get_bits(const uint8_t *d, int64_t i, int b) {
  uint64_t v = 0;
  int k;
  for (k = 0; k < b; k++) {
    int64_t bit = i * b + k;
    v |= (uint64_t)((d[bit >> 3] >> (bit & 7)) & 1u) << k;
  }
  return v;
}
static void mgopt__set_bits(uint8_t *d, int64_t i, int b, uint64_t v) {
  int k;
  for (k = 0; k < b; k++) {
    int64_t bit = i * b + k;
    if ((v >> k) & 1u) d[bit >> 3] |= (uint8_t)(1u << (bit & 7));
    else d[bit >> 3] &= (uint8_t)~(1u << (bit & 7));
  }
}

MGOPTDEF double mgopt_tensor_get_f64(const mgopt_tensor *t, int64_t i) {
  const uint8_t *d = (const uint8_t *)t->data;
  switch ((mgopt_dtype)t->dtype) {
    case MGOPT_DT_BOOL: return d[i] ? 1.0 : 0.0;
    case MGOPT_DT_INT8: return (double)(int8_t)d[i];
    case MGOPT_DT_UINT8: return (double)d[i];
    case MGOPT_DT_FP8E4M3FN: case MGOPT_DT_FP8E4M3FNUZ: case MGOPT_DT_FP8E5M2:
    case MGOPT_DT_FP8E5M2FNUZ: return (double)d[i];
    case MGOPT_DT_INT16: { int16_t v; memcpy(&v, d + 2 * i, 2); return v; }
    case MGOPT_DT_UINT16: { uint16_t v; memcpy(&v, d + 2 * i, 2); return v; }
    case MGOPT_DT_INT32: { int32_t v; memcpy(&v, d + 4 * i, 4); return v; }
    case MGOPT_DT_UINT32: { uint32_t v; memcpy(&v, d + 4 * i, 4); return v; }
    case MGOPT_DT_INT64: { int64_t v; memcpy(&v, d + 8 * i, 8); return (double)v; }
    case MGOPT_DT_UINT64: { uint64_t v; memcpy(&v, d + 8 * i, 8); return (double)v; }
    case MGOPT_DT_FP16: { uint16_t v; memcpy(&v, d + 2 * i, 2); return mgopt_f16_to_f32(v); }
    case MGOPT_DT_BF16: { uint16_t v; memcpy(&v, d + 2 * i, 2); return mgopt_bf16_to_f32(v); }
    case MGOPT_DT_FP32: { float v; memcpy(&v, d + 4 * i, 4); return v; }
    case MGOPT_DT_FP64: { double v; memcpy(&v, d + 8 * i, 8); return v; }
    case MGOPT_DT_COMPLEX64: { float v; memcpy(&v, d + 8 * i, 4); return v; }
    case MGOPT_DT_COMPLEX128: { double v; memcpy(&v, d + 16 * i, 8); return v; }
    case MGOPT_DT_INT4: case MGOPT_DT_INT4X: {
      int64_t v = (int64_t)mgopt__get_bits(d, i, 4);
      return (double)(v >= 8 ? v - 16 : v);
    }
    case MGOPT_DT_UINT1: case MGOPT_DT_UINT2: case MGOPT_DT_UINT3: case MGOPT_DT_UINT4:
    case MGOPT_DT_UINT6: case MGOPT_DT_UINT4X:
      return (double)mgopt__get_bits(d, i, mgopt_dtype_bits((mgopt_dtype)t->dtype));
    default: return 0.0;
  }
}

MGOPTDEF int64_t mgopt_tensor_get_i64(const mgopt_tensor *t, int64_t i) {
  const uint8_t *d = (const uint8_t *)t->data;
  switch ((mgopt_dtype)t->dtype) {
    case MGOPT_DT_INT64: { int64_t v; memcpy(&v, d + 8 * i, 8); return v; }
    case MGOPT_DT_UINT64: { uint64_t v; memcpy(&v, d + 8 * i, 8); return (int64_t)v; }
    case MGOPT_DT_INT32: { int32_t v; memcpy(&v, d + 4 * i, 4); return v; }
    case MGOPT_DT_UINT32: { uint32_t v; memcpy(&v, d + 4 * i, 4); return v; }
    default: {
      double v = mgopt_tensor_get_f64(t, i);
      if (v != v) return 0;
      if (v >= 9.2233720368547758e18) return INT64_MAX;
      if (v <= -9.2233720368547758e18) return INT64_MIN;
      return (int64_t)v;
    }
  }
}

MGOPTDEF void mgopt_tensor_set_f64(mgopt_tensor *t, int64_t i, double v) {
  uint8_t *d = (uint8_t *)t->data;
  MGOPT_ASSERT(!t->borrowed);
  mgopt__tensor_touch(t);
  switch ((mgopt_dtype)t->dtype) {
    case MGOPT_DT_FP16: { uint16_t h = mgopt_f32_to_f16((float)v); memcpy(d + 2 * i, &h, 2); return; }
    case MGOPT_DT_BF16: { uint16_t h = mgopt_f32_to_bf16((float)v); memcpy(d + 2 * i, &h, 2); return; }
    case MGOPT_DT_FP32: { float f = (float)v; memcpy(d + 4 * i, &f, 4); return; }
    case MGOPT_DT_FP64: memcpy(d + 8 * i, &v, 8); return;
    case MGOPT_DT_BOOL: d[i] = v != 0.0; return;
    default: {
      int64_t x;
      if (v != v) x = 0;
      else if (v >= 9.2233720368547758e18) x = INT64_MAX;
      else if (v <= -9.2233720368547758e18) x = INT64_MIN;
      else x = (int64_t)v;
      mgopt_tensor_set_i64(t, i, x);
    }
  }
}

MGOPTDEF void mgopt_tensor_set_i64(mgopt_tensor *t, int64_t i, int64_t v) {
  uint8_t *d = (uint8_t *)t->data;
  MGOPT_ASSERT(!t->borrowed);
  mgopt__tensor_touch(t);
  switch ((mgopt_dtype)t->dtype) {
    case MGOPT_DT_BOOL: d[i] = v != 0; return;
    case MGOPT_DT_INT8: case MGOPT_DT_UINT8: d[i] = (uint8_t)v; return;
    case MGOPT_DT_INT16: case MGOPT_DT_UINT16: { uint16_t x = (uint16_t)v; memcpy(d + 2 * i, &x, 2); return; }
    case MGOPT_DT_INT32: case MGOPT_DT_UINT32: { uint32_t x = (uint32_t)v; memcpy(d + 4 * i, &x, 4); return; }
    case MGOPT_DT_INT64: case MGOPT_DT_UINT64: memcpy(d + 8 * i, &v, 8); return;
    case MGOPT_DT_FP16: case MGOPT_DT_BF16: case MGOPT_DT_FP32: case MGOPT_DT_FP64:
      mgopt_tensor_set_f64(t, i, (double)v);
      return;
    case MGOPT_DT_INT4: case MGOPT_DT_INT4X: mgopt__set_bits(d, i, 4, (uint64_t)v & 15u); return;
    case MGOPT_DT_UINT1: case MGOPT_DT_UINT2: case MGOPT_DT_UINT3: case MGOPT_DT_UINT4:
    case MGOPT_DT_UINT6: case MGOPT_DT_UINT4X: {
      int b = mgopt_dtype_bits((mgopt_dtype)t->dtype);
      mgopt__set_bits(d, i, b, (uint64_t)v & ((1u << b) - 1u));
      return;
    }
    default: return;
  }
}

MGOPTDEF int mgopt_tensor_equal(const mgopt_tensor *a, const mgopt_tensor *b) {
  int32_t i;
  if (a == b) return 1;
  if (a->dtype != b->dtype || a->rank != b->rank || a->numel != b->numel) return 0;
  for (i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  if (a->dtype == MGOPT_DT_STRING) {
    const mgopt_str *x = (const mgopt_str *)a->data, *y = (const mgopt_str *)b->data;
    int64_t k;
    for (k = 0; k < a->numel; k++)
      if (x[k].len != y[k].len || (x[k].len && memcmp(x[k].ptr, y[k].ptr, x[k].len))) return 0;
    return 1;
  }
  if (MGOPT__TREC_C(a)->hash_valid && MGOPT__TREC_C(b)->hash_valid && MGOPT__TREC_C(a)->hash != MGOPT__TREC_C(b)->hash)
    return 0;
  /* shared bytes (deduplicated weights, views) need no comparing */
  return a->nbytes == b->nbytes && (a->nbytes == 0 || a->data == b->data || memcmp(a->data, b->data, a->nbytes) == 0);
}

MGOPTDEF uint64_t mgopt_tensor_hash(mgopt_tensor *t) {
  uint64_t h;
  if (MGOPT__TREC(t)->hash_valid) return MGOPT__TREC(t)->hash;
  h = mgopt__hash_bytes(&t->dtype, 1, MGOPT__HASH_SEED);
  h = mgopt__hash_bytes(&t->rank, sizeof t->rank, h);
  if (t->rank > 0) h = mgopt__hash_bytes(t->shape, sizeof(int64_t) * (size_t)t->rank, h);
  if (t->dtype == MGOPT_DT_STRING) {
    const mgopt_str *x = (const mgopt_str *)t->data;
    int64_t k;
    for (k = 0; k < t->numel; k++) {
      h = mgopt__hash_bytes(&x[k].len, sizeof x[k].len, h);
      h = mgopt__hash_bytes(x[k].ptr, x[k].len, h);
    }
  } else {
    /* Four independent lanes of 8 bytes: the multiplies overlap, so this runs
       near memory speed instead of one multiply latency per word. The lanes
       differ in their shifts, which keeps compilers from turning them into
       SSE2 code that has no 64-bit multiply. Then words, then the tail. */
    const uint8_t *d = (const uint8_t *)t->data;
    size_t n = t->nbytes, k = 0;
    if (n >= 64) {
      uint64_t a = h, b = h ^ 0x9e3779b97f4a7c15ull, c = h ^ 0xc2b2ae3d27d4eb4full, e = h ^ 0x165667b19e3779f9ull;
      for (; k + 32 <= n; k += 32) {
        uint64_t w0, w1, w2, w3;
        memcpy(&w0, d + k, 8);
        memcpy(&w1, d + k + 8, 8);
        memcpy(&w2, d + k + 16, 8);
        memcpy(&w3, d + k + 24, 8);
        a = (a ^ w0) * 0x9fb21c651e98df25ull;
        a ^= a >> 29;
        b = (b ^ w1) * 0xd6e8feb86659fd93ull;
        b ^= b >> 31;
        c = (c ^ w2) * 0xff51afd7ed558ccdull;
        c ^= c >> 27;
        e = (e ^ w3) * 0xc4ceb9fe1a85ec53ull;
        e ^= e >> 30;
      }
      h = (h ^ a) * 0xff51afd7ed558ccdull;
      h = (h ^ b ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
      h = (h ^ c ^ (h >> 33)) * 0xff51afd7ed558ccdull;
      h = (h ^ e ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
      h ^= h >> 33;
    }
    for (; k + 8 <= n; k += 8) {
      uint64_t w;
      memcpy(&w, d + k, 8);
      h ^= w;
      h *= 0x100000001b3ull;
      h ^= h >> 29;
    }
    h = mgopt__hash_bytes(d + k, n - k, h);
  }
  MGOPT__TREC(t)->hash = h;
  MGOPT__TREC(t)->hash_valid = 1;
  return h;
}

/* A cheap stand-in for mgopt_tensor_hash to sort tensors into likely-equal
   groups: dtype, shape, the first 512 bytes and the last 64 (all of it when
   small). Equal tensors always get equal keys; unequal weights of one shape
   almost always differ in their first bytes, and callers confirm equality
   exactly anyway. Two memory pages at most, however large the tensor (and
   the first is the one an exact comparison reads anyway), so a pass looking
   for equal weights does not read, or fault in from a mapped file, every
   weight of the model. */
MGOPT__PRIVATE uint64_t mgopt__tensor_probe(mgopt_tensor *t) {
  const uint8_t *d = (const uint8_t *)t->data;
  uint64_t h;
  if (t->dtype == MGOPT_DT_STRING || t->nbytes <= 1024) return mgopt_tensor_hash(t);
  if (MGOPT__TREC(t)->probe_valid) return MGOPT__TREC(t)->probe;
  h = mgopt__hash_bytes(&t->dtype, 1, MGOPT__HASH_SEED ^ 0x5bd1e995u);
  h = mgopt__hash_bytes(&t->rank, sizeof t->rank, h);
  if (t->rank > 0) h = mgopt__hash_bytes(t->shape, sizeof(int64_t) * (size_t)t->rank, h);
  h = mgopt__hash_bytes(d, 512, h);
  h = mgopt__hash_bytes(d + t->nbytes - 64, 64, h);
  MGOPT__TREC(t)->probe = h;
  MGOPT__TREC(t)->probe_valid = 1;
  return h;
}

MGOPTDEF mgopt_tensor *mgopt_tensor_clone(mgopt_program *p, const mgopt_tensor *t) {
  mgopt_tensor *c = mgopt_tensor_new(p, (mgopt_dtype)t->dtype, t->rank, t->shape);
  if (!c) return NULL;
  if (t->dtype == MGOPT_DT_STRING) {
    const mgopt_str *x = (const mgopt_str *)t->data;
    mgopt_str *y = (mgopt_str *)c->data;
    int64_t k;
    for (k = 0; k < t->numel; k++) {
      y[k].ptr = (const char *)mgopt__dup(p, x[k].ptr, x[k].len);
      if (!y[k].ptr) return NULL;
      y[k].len = x[k].len;
    }
  } else if (t->nbytes) {
    memcpy(c->data, t->data, t->nbytes);
  }
  return c;
}

MGOPTDEF int mgopt_tensor_all_equal_f64(const mgopt_tensor *t, double v) {
  int64_t i;
  if (t->dtype == MGOPT_DT_STRING) return 0;
  for (i = 0; i < t->numel; i++)
    if (mgopt_tensor_get_f64(t, i) != v) return 0;
  return 1;
}
/* src/core/ir.c — functions, blocks, ops and values: building, use lists, mutation, walking. */

/* ---------------------------------------------------------------- use lists */

MGOPT__PRIVATE void mgopt__use_unlink(mgopt_use *u) {
  mgopt_value *v = u->value;
  if (!v) return;
  if (u->prev) u->prev->next = u->next;
  else v->uses = u->next;
  if (u->next) u->next->prev = u->prev;
  u->prev = u->next = NULL;
  u->value = NULL;
  v->nuses--;
  if (!u->op) v->nblock_uses--;
}

MGOPT__PRIVATE void mgopt__use_link(mgopt_use *u, mgopt_value *v) {
  if (u->value) mgopt__use_unlink(u);
  u->value = v;
  if (!v) return;
  if (u->op && v->nblock_uses) {
    /* block-output uses stay at the head (so finding them costs their
       count, not the value's uses): an op use goes in after them */
    mgopt_use *at = v->uses;
    int32_t k;
    for (k = 1; k < v->nblock_uses; k++) at = at->next;
    u->prev = at;
    u->next = at->next;
    if (at->next) at->next->prev = u;
    at->next = u;
  } else {
    u->prev = NULL;
    u->next = v->uses;
    if (v->uses) v->uses->prev = u;
    v->uses = u;
  }
  v->nuses++;
  if (!u->op) v->nblock_uses++;
}

/* ---------------------------------------------------------------- creation */

MGOPT__PRIVATE mgopt_value *mgopt__value_new(mgopt_program *p, const char *name) {
  mgopt_value *v = (mgopt_value *)mgopt_program_alloc(p, sizeof *v, 8);
  if (!v) return NULL;
  if (name) {
    v->name = mgopt_program_intern_cstr(p, name);
    if (!v->name) return NULL;
  }
  v->type.rank = -1;
  v->id = p->next_id++;
  return v;
}

/* Every mgopt_block is the head of one of these: the array capacities stay
   out of the public struct. */
typedef struct mgopt__block_rec {
  mgopt_block b;
  int32_t args_cap, outs_cap;
} mgopt__block_rec;

MGOPT__PRIVATE mgopt_block *mgopt__block_new(mgopt_program *p, const char *name) {
  mgopt_block *b = (mgopt_block *)mgopt_program_alloc(p, sizeof(mgopt__block_rec), 8);
  if (!b) return NULL;
  b->program = p;
  b->name = mgopt_program_intern_cstr(p, name ? name : "");
  if (!b->name) return NULL;
  return b;
}

static void mgopt__erase_block_contents(mgopt_block *b);

MGOPTDEF int32_t mgopt_program_function_count(const mgopt_program *p) { return p->nfuncs; }

MGOPTDEF mgopt_function *mgopt_program_function_at(const mgopt_program *p, int32_t i) {
  return (i >= 0 && i < p->nfuncs) ? p->funcs[i] : NULL;
}

/* Functions by name: the map is keyed by the interned name, so a name that
   was never interned names no function. */
MGOPTDEF mgopt_function *mgopt_program_function(const mgopt_program *p, const char *name) {
  const char *key;
  const mgopt__map_slot *sl;
  if (!p || !name || !(key = mgopt__intern_lookup(p, name, strlen(name)))) return NULL;
  sl = mgopt__map_find(&p->func_by_name, mgopt__map_ptr_key(key));
  return sl ? (mgopt_function *)sl->v.p : NULL;
}

MGOPTDEF mgopt_function *mgopt_function_new(mgopt_program *p, const char *name) {
  mgopt_function *f;
  mgopt__map_slot *sl;
  if (!name || mgopt_program_function(p, name)) return NULL;
  if (p->nfuncs == p->funcs_cap) {
    int64_t cap = p->funcs_cap;
    void *arr = p->funcs;
    if (!mgopt__grow(&p->alloc, &arr, &cap, p->nfuncs + 1, sizeof(mgopt_function *))) {
      mgopt__oom(p);
      return NULL;
    }
    p->funcs = (mgopt_function **)arr;
    p->funcs_cap = (int32_t)cap;
  }
  f = (mgopt_function *)mgopt_program_alloc(p, sizeof(mgopt__func_rec), 8);
  if (!f) return NULL;
  f->program = p;
  f->name = mgopt_program_intern_cstr(p, name);
  f->body = mgopt__block_new(p, "");
  if (!f->name || !f->body) return NULL;
  f->body->func = f;
  if (!(sl = mgopt__map_get(&p->func_by_name, mgopt__map_ptr_key(f->name), NULL))) {
    mgopt__oom(p);
    return NULL;
  }
  sl->v.p = f;
  p->funcs[p->nfuncs++] = f;
  return f;
}

MGOPT__PRIVATE void mgopt__function_drop(mgopt_function *f) {
  mgopt_program *p = f->program;
  int32_t i, j = 0;
  mgopt__map_slot *sl;
  mgopt__erase_block_contents(f->body);
  mgopt__index_free(f);
  for (i = 0; i < p->nfuncs; i++)
    if (p->funcs[i] != f) p->funcs[j++] = p->funcs[i];
  p->nfuncs = j;
  /* the map has no removal: it is filled again, in the room it has */
  mgopt__map_reset(&p->func_by_name, (size_t)p->nfuncs);
  for (i = 0; i < p->nfuncs; i++)
    if ((sl = mgopt__map_get(&p->func_by_name, mgopt__map_ptr_key(p->funcs[i]->name), NULL)) != NULL)
      sl->v.p = p->funcs[i];
}

MGOPTDEF const mgopt_attr *mgopt_function_attr(const mgopt_function *f, const char *name) {
  int32_t i;
  if (!f || !name) return NULL;
  for (i = 0; i < f->nattrs; i++)
    if (strcmp(f->attrs[i].name, name) == 0) return &f->attrs[i];
  return NULL;
}

MGOPTDEF mgopt_function *mgopt_op_callee(const mgopt_op *op) {
  if (!op || op->kind != MGOPT_OP_OPAQUE || !op->type || !strstr(op->type, "::")) return NULL;
  return mgopt_program_function(op->program, op->type);
}

MGOPTDEF int64_t mgopt_program_op_count(const mgopt_program *p) {
  /* kept up to date by linking, unlinking and erasing: O(1) */
  return p->nlinked;
}

MGOPTDEF void mgopt_program_set_target(mgopt_program *p, mgopt_target_fn accepts, void *ud) {
  p->target = accepts;
  p->target_ud = ud;
}

MGOPTDEF int mgopt_program_target_accepts(const mgopt_program *p, const mgopt_op *op) {
  return !p->target || p->target(p, op, p->target_ud) != 0;
}

/* Grows an arena array of pointers (old contents copied; the old block is
   left in the arena). */
static int mgopt__arena_grow(mgopt_program *p, void **arr, int32_t *cap, int32_t need, size_t elem) {
  int32_t ncap;
  void *na;
  if (need <= *cap) return 1;
  ncap = *cap ? *cap * 2 : 4;
  while (ncap < need) {
    if (ncap > INT32_MAX / 2) return 0;
    ncap *= 2;
  }
  na = mgopt_program_alloc(p, (size_t)ncap * elem, 8);
  if (!na) return 0;
  if (*cap) memcpy(na, *arr, (size_t)*cap * elem);
  *arr = na;
  *cap = ncap;
  return 1;
}

MGOPTDEF mgopt_value *mgopt_block_add_arg(mgopt_block *b, const char *name, const mgopt_type *t) {
  mgopt_program *p = b->program;
  mgopt_value *v;
  void *arr = b->args;
  if (!mgopt__arena_grow(p, &arr, &((mgopt__block_rec *)(void *)b)->args_cap, b->nargs + 1, sizeof(mgopt_value *))) return NULL;
  b->args = (mgopt_value **)arr;
  v = mgopt__value_new(p, name);
  if (!v) return NULL;
  if (t && mgopt__type_copy(p, &v->type, t)) return NULL;
  v->owner = b;
  v->index = b->nargs;
  b->args[b->nargs++] = v;
  return v;
}

MGOPTDEF void mgopt_block_remove_arg(mgopt_block *b, int32_t i) {
  int32_t k;
  MGOPT_ASSERT(i >= 0 && i < b->nargs && b->args[i]->nuses == 0);
  for (k = i; k + 1 < b->nargs; k++) {
    b->args[k] = b->args[k + 1];
    b->args[k]->index = k;
  }
  b->nargs--;
}

MGOPTDEF mgopt_status mgopt_block_add_output(mgopt_block *b, mgopt_value *v) {
  mgopt_program *p = b->program;
  mgopt_use *u;
  void *arr = b->outs;
  if (!mgopt__arena_grow(p, &arr, &((mgopt__block_rec *)(void *)b)->outs_cap, b->nouts + 1, sizeof(mgopt_use *)))
    return MGOPT_ERR_NOMEM;
  b->outs = (mgopt_use **)arr;
  u = (mgopt_use *)mgopt_program_alloc(p, sizeof *u, 8);
  if (!u) return MGOPT_ERR_NOMEM;
  u->block = b;
  u->index = b->nouts;
  u->slot = -1;
  mgopt__use_link(u, v);
  b->outs[b->nouts++] = u;
  return MGOPT_OK;
}

MGOPTDEF void mgopt_block_set_output(mgopt_block *b, int32_t i, mgopt_value *v) {
  MGOPT_ASSERT(i >= 0 && i < b->nouts);
  mgopt__use_link(b->outs[i], v);
}

MGOPTDEF void mgopt_block_remove_output(mgopt_block *b, int32_t i) {
  int32_t k;
  MGOPT_ASSERT(i >= 0 && i < b->nouts);
  mgopt__use_unlink(b->outs[i]);
  for (k = i; k + 1 < b->nouts; k++) {
    b->outs[k] = b->outs[k + 1];
    b->outs[k]->index = k;
  }
  b->nouts--;
}

MGOPTDEF mgopt_op *mgopt_op_new(mgopt_program *p, const char *type, int32_t nouts, int32_t nblocks) {
  mgopt_op *op;
  int32_t i;
  if (nouts < 0 || nblocks < 0) return NULL;
  op = (mgopt_op *)mgopt_program_alloc(p, sizeof(mgopt__op_rec), 8);
  if (!op) return NULL;
  MGOPT__OP_REC(op)->slot = MGOPT__SLOT_OFF;
  op->program = p;
  op->type = mgopt_program_intern_cstr(p, type);
  if (!op->type) return NULL;
  op->kind = mgopt_op_kind_from_name(type, strlen(type));
  op->id = p->next_id++;
  if (nouts) {
    op->outs = (mgopt_value **)mgopt_program_alloc(p, sizeof(mgopt_value *) * (size_t)nouts, 8);
    if (!op->outs) return NULL;
    for (i = 0; i < nouts; i++) {
      mgopt_value *v = mgopt__value_new(p, NULL);
      if (!v) return NULL;
      v->def = op;
      v->index = i;
      op->outs[i] = v;
    }
  }
  op->nouts = nouts;
  if (nblocks) {
    op->blocks = (mgopt_block **)mgopt_program_alloc(p, sizeof(mgopt_block *) * (size_t)nblocks, 8);
    if (!op->blocks) return NULL;
    for (i = 0; i < nblocks; i++) {
      mgopt_block *b = mgopt__block_new(p, "");
      if (!b) return NULL;
      b->parent_op = op;
      op->blocks[i] = b;
    }
  }
  op->nblocks = nblocks;
  return op;
}

static void mgopt__set_func(mgopt_op *op, mgopt_function *f) {
  int32_t i;
  mgopt_op *o;
  for (i = 0; i < op->nblocks; i++) {
    op->blocks[i]->func = f;
    for (o = op->blocks[i]->first; o; o = o->next) mgopt__set_func(o, f);
  }
}

/* ---------------------------------------------------------------- the op index */

/* Labels lie in [1, END); 0 stands for the start of the function. Ops
   appended at the end are GAP apart, so building a program in order never
   relabels. */
#define MGOPT__LABEL_END (1ull << 62)
#define MGOPT__LABEL_GAP (1ull << 32)

static uint64_t mgopt__label(const mgopt_op *op) { return MGOPT__OP_REC(op)->label; }

/* 1 if block b is linked into a function: a function's body, or a block of
   an op that is. */
static int mgopt__block_indexed(const mgopt_block *b) {
  if (b->parent_op) return MGOPT__OP_REC(b->parent_op)->slot != MGOPT__SLOT_OFF;
  return b->func && b->func->body == b;
}

static int32_t mgopt__block_index_in(const mgopt_op *parent, const mgopt_block *b) {
  int32_t i = 0;
  while (i < parent->nblocks && parent->blocks[i] != b) i++;
  return i;
}

/* The last op of op's subtree in pre-order (op itself when its blocks are empty). */
static mgopt_op *mgopt__pre_last(mgopt_op *op) {
  for (;;) {
    int32_t i = op->nblocks - 1;
    while (i >= 0 && !op->blocks[i]->last) i--;
    if (i < 0) return op;
    op = op->blocks[i]->last;
  }
}

/* The op before op in its function's pre-order, or NULL. */
static mgopt_op *mgopt__pre_prev(mgopt_op *op) {
  mgopt_op *up;
  int32_t i;
  if (op->prev) return mgopt__pre_last(op->prev);
  up = op->parent->parent_op;
  if (!up) return NULL;
  for (i = mgopt__block_index_in(up, op->parent) - 1; i >= 0; i--)
    if (up->blocks[i]->last) return mgopt__pre_last(up->blocks[i]->last);
  return up;
}

/* The first op after op and its nested ops in pre-order, or NULL. */
static mgopt_op *mgopt__pre_after(mgopt_op *op) {
  for (;;) {
    mgopt_op *up;
    int32_t i;
    if (op->next) return op->next;
    up = op->parent->parent_op;
    if (!up) return NULL;
    for (i = mgopt__block_index_in(up, op->parent) + 1; i < up->nblocks; i++)
      if (up->blocks[i]->first) return up->blocks[i]->first;
    op = up;
  }
}

static mgopt_op *mgopt__pre_next(mgopt_op *op) {
  int32_t i;
  for (i = 0; i < op->nblocks; i++)
    if (op->blocks[i]->first) return op->blocks[i]->first;
  return mgopt__pre_after(op);
}

/* Makes room for m labels between a and b, neighbours in pre-order (NULL:
   the start or the end of the function): relabels evenly the smallest
   aligned label range around the gap whose ops, with the m new ones, stay
   under a density that falls as the range grows (Bender et al., "Two
   simplified algorithms for maintaining order in a list"), so an insertion
   costs O(log n) amortized. */
static void mgopt__label_open(mgopt_op *a, mgopt_op *b, int64_t m) {
  uint64_t x = a ? mgopt__label(a) : 0, lo = 0, hi = 0, step, lab;
  mgopt_op *lfirst = a, *lcand = a ? mgopt__pre_prev(a) : NULL, *rnext = b, *o;
  int64_t nl = a ? 1 : 0, nr = 0, i;
  double lim = 1.0;
  int k;
  for (k = 1; k <= 62; k++) {
    uint64_t size = 1ull << k;
    lo = x & ~(size - 1);
    hi = lo + size - 1;
    if (hi >= MGOPT__LABEL_END) hi = MGOPT__LABEL_END - 1;
    lim *= 1.5;
    while (lcand && mgopt__label(lcand) >= lo) {
      lfirst = lcand;
      lcand = mgopt__pre_prev(lcand);
      nl++;
    }
    while (rnext && mgopt__label(rnext) <= hi) {
      rnext = mgopt__pre_next(rnext);
      nr++;
    }
    if ((uint64_t)(nl + nr + m) < hi - lo + 1 && ((double)(nl + nr + m) <= lim || k == 62)) break;
  }
  MGOPT_ASSERT(k <= 62); /* 2^62 labels outnumber any program that fits in memory */
  step = (hi - lo + 1) / (uint64_t)(nl + nr + m + 1);
  lab = lo;
  for (o = lfirst, i = 0; i < nl; i++, o = mgopt__pre_next(o)) MGOPT__OP_REC(o)->label = lab += step;
  lab += step * (uint64_t)m;
  for (o = b, i = 0; i < nr; i++, o = mgopt__pre_next(o)) MGOPT__OP_REC(o)->label = lab += step;
}

static int64_t mgopt__subtree_size(const mgopt_op *op) {
  int64_t n = 1;
  int32_t i;
  const mgopt_op *o;
  for (i = 0; i < op->nblocks; i++)
    for (o = op->blocks[i]->first; o; o = o->next) n += mgopt__subtree_size(o);
  return n;
}

static void mgopt__index_add(mgopt__func_rec *fr, mgopt_op *op) {
  mgopt__op_rec *r = MGOPT__OP_REC(op);
  mgopt__kind_list *kl;
  mgopt_program *p = op->program;
  fr->nops++;
  r->slot = MGOPT__SLOT_UNLISTED;
  if (fr->broken) return;
  MGOPT_ASSERT(op->kind >= 0 && op->kind < MGOPT_OP__COUNT);
  if (!fr->kinds) {
    size_t sz = sizeof(mgopt__kind_list) * MGOPT_OP__COUNT;
    fr->kinds = (mgopt__kind_list *)mgopt__heap_realloc(&p->alloc, NULL, 0, sz);
    if (!fr->kinds) {
      fr->broken = 1;
      mgopt__oom(p);
      return;
    }
    memset(fr->kinds, 0, sz);
  }
  kl = &fr->kinds[op->kind];
  if (kl->n == kl->cap) {
    void *arr = kl->ops;
    if (!mgopt__grow(&p->alloc, &arr, &kl->cap, kl->n + 1, sizeof(mgopt_op *))) {
      fr->broken = 1;
      mgopt__oom(p);
      return;
    }
    kl->ops = (mgopt_op **)arr;
  }
  if (kl->n && mgopt__label(kl->ops[kl->n - 1]) > r->label) kl->unsorted = 1;
  r->slot = kl->n;
  kl->ops[kl->n++] = op;
}

/* Labels op's subtree (pre-order, step apart after *lab) and lists it. */
static void mgopt__index_add_tree(mgopt__func_rec *fr, mgopt_op *op, uint64_t *lab, uint64_t step) {
  int32_t i;
  mgopt_op *o;
  MGOPT__OP_REC(op)->label = *lab += step;
  mgopt__index_add(fr, op);
  for (i = 0; i < op->nblocks; i++)
    for (o = op->blocks[i]->first; o; o = o->next) mgopt__index_add_tree(fr, o, lab, step);
}

/* op (with its nested ops) was just linked into a block of fr's function. */
static void mgopt__index_link(mgopt__func_rec *fr, mgopt_op *op) {
  mgopt_op *a = mgopt__pre_prev(op), *b = mgopt__pre_after(op);
  int64_t m = op->nblocks ? mgopt__subtree_size(op) : 1;
  uint64_t lo = a ? mgopt__label(a) : 0, hi = b ? mgopt__label(b) : MGOPT__LABEL_END, step;
  if (hi - lo <= (uint64_t)m) {
    mgopt__label_open(a, b, m);
    lo = a ? mgopt__label(a) : 0;
    hi = b ? mgopt__label(b) : MGOPT__LABEL_END;
  }
  step = (hi - lo) / (uint64_t)(m + 1);
  if (!b && step > MGOPT__LABEL_GAP) step = MGOPT__LABEL_GAP;
  mgopt__index_add_tree(fr, op, &lo, step);
}

/* op (with its nested ops) is about to leave fr's function. */
static void mgopt__index_unlink(mgopt__func_rec *fr, mgopt_op *op) {
  mgopt__op_rec *r = MGOPT__OP_REC(op);
  int32_t i;
  mgopt_op *o;
  if (r->slot >= 0) {
    mgopt__kind_list *kl = &fr->kinds[op->kind];
    kl->ops[r->slot] = NULL;
    if (r->slot == kl->n - 1) {
      kl->n--;
      while (kl->n > 0 && !kl->ops[kl->n - 1]) {
        kl->n--;
        kl->holes--;
      }
    } else
      kl->holes++;
  }
  r->slot = MGOPT__SLOT_OFF;
  fr->nops--;
  for (i = 0; i < op->nblocks; i++)
    for (o = op->blocks[i]->first; o; o = o->next) mgopt__index_unlink(fr, o);
}

static int mgopt__label_cmp(const void *a, const void *b) {
  uint64_t x = mgopt__label(*(mgopt_op *const *)a), y = mgopt__label(*(mgopt_op *const *)b);
  return x < y ? -1 : x > y;
}

/* Drops the holes of a list and sorts it by label. */
static void mgopt__index_tidy(mgopt__kind_list *kl) {
  int64_t i, j = 0;
  if (!kl->holes && !kl->unsorted) return;
  for (i = 0; i < kl->n; i++)
    if (kl->ops[i]) kl->ops[j++] = kl->ops[i];
  kl->n = j;
  kl->holes = 0;
  if (kl->unsorted) qsort(kl->ops, (size_t)kl->n, sizeof(mgopt_op *), mgopt__label_cmp);
  kl->unsorted = 0;
  for (i = 0; i < kl->n; i++) MGOPT__OP_REC(kl->ops[i])->slot = i;
}

MGOPT__PRIVATE int64_t mgopt__index_collect(mgopt_function *f, const int32_t *kinds, int32_t nk,
                                            mgopt_op ***out, int64_t *cap) {
  mgopt__func_rec *fr = MGOPT__FUNC_REC(f);
  mgopt_program *p = f->program;
  int64_t total = 0, pos[8], k;
  int32_t i;
  if (fr->broken) return -1;
  if (!fr->kinds) return 0;
  for (i = 0; i < nk; i++) {
    mgopt__index_tidy(&fr->kinds[kinds[i]]);
    total += fr->kinds[kinds[i]].n;
  }
  if (total > *cap) {
    void *arr = *out;
    if (!mgopt__grow(&p->alloc, &arr, cap, total, sizeof(mgopt_op *))) return -1;
    *out = (mgopt_op **)arr;
  }
  if (nk == 1) {
    if (total) memcpy(*out, fr->kinds[kinds[0]].ops, sizeof(mgopt_op *) * (size_t)total);
    return total;
  }
  /* merge by label, up to 8 lists at a time (each pass merges into the result so far) */
  {
    int64_t have = 0;
    int32_t base;
    for (base = 0; base < nk; base += 7) {
      const mgopt__kind_list *ls[8];
      int32_t nl = 0, j;
      mgopt_op **dst = *out;
      int64_t n0 = have, add = 0;
      /* the result so far moves to the top of the array, so the merge can
         write from the bottom without overtaking it */
      for (j = base; j < nk && j < base + 7; j++) {
        ls[nl] = &fr->kinds[kinds[j]];
        add += ls[nl]->n;
        nl++;
      }
      if (n0) memmove(dst + add, dst, sizeof(mgopt_op *) * (size_t)n0);
      for (j = 0; j < nl; j++) pos[j] = 0;
      pos[nl] = 0;
      for (k = 0; k < n0 + add; k++) {
        int32_t best = -1;
        uint64_t bl = 0;
        for (j = 0; j < nl; j++)
          if (pos[j] < ls[j]->n && (best < 0 || mgopt__label(ls[j]->ops[pos[j]]) < bl)) {
            best = j;
            bl = mgopt__label(ls[j]->ops[pos[j]]);
          }
        if (pos[nl] < n0 && (best < 0 || mgopt__label(dst[add + pos[nl]]) < bl)) best = nl;
        dst[k] = best == nl ? dst[add + pos[nl]] : ls[best]->ops[pos[best]];
        pos[best]++;
      }
      have = n0 + add;
    }
  }
  return total;
}

MGOPT__PRIVATE mgopt_op *const *mgopt__index_list(mgopt_function *f, int32_t kind, int64_t *n) {
  mgopt__func_rec *fr = MGOPT__FUNC_REC(f);
  *n = fr->broken ? -1 : 0;
  if (fr->broken || !fr->kinds) return NULL;
  mgopt__index_tidy(&fr->kinds[kind]);
  *n = fr->kinds[kind].n;
  return fr->kinds[kind].ops;
}

MGOPT__PRIVATE int64_t mgopt__index_kind_count(const mgopt_function *f, int32_t kind) {
  const mgopt__func_rec *fr = MGOPT__FUNC_REC(f);
  if (fr->broken) return -1;
  return fr->kinds ? fr->kinds[kind].n - fr->kinds[kind].holes : 0;
}

MGOPT__PRIVATE int64_t mgopt__index_op_count(const mgopt_function *f) {
  return MGOPT__FUNC_REC(f)->nops;
}

/* how many ops ahead mgopt__index_any prefetches */
#define MGOPT__INDEX_AHEAD 16

MGOPT__PRIVATE int mgopt__index_any(mgopt_function *f, int32_t kind, int (*fn)(const mgopt_op *op, void *ud),
                                    void *ud) {
  const mgopt__func_rec *fr = MGOPT__FUNC_REC(f);
  int32_t k, k0 = kind < 0 ? 0 : kind, k1 = kind < 0 ? MGOPT_OP__COUNT : kind + 1;
  int64_t i;
  if (fr->broken) return -1;
  if (!fr->kinds) return 0;
  for (k = k0; k < k1; k++) {
    mgopt_op *const *ops = fr->kinds[k].ops;
    int64_t n = fr->kinds[k].n;
    for (i = 0; i < n; i++) {
      int r;
      if (i + MGOPT__INDEX_AHEAD < n && ops[i + MGOPT__INDEX_AHEAD]) MGOPT__PREFETCH(ops[i + MGOPT__INDEX_AHEAD]);
      if (!ops[i]) continue;
      r = fn(ops[i], ud);
      if (r) return r;
    }
  }
  return 0;
}

MGOPT__PRIVATE void mgopt__index_free(mgopt_function *f) {
  mgopt__func_rec *fr = MGOPT__FUNC_REC(f);
  int32_t i;
  if (!fr->kinds) return;
  for (i = 0; i < MGOPT_OP__COUNT; i++)
    if (fr->kinds[i].ops)
      mgopt__heap_free(&f->program->alloc, fr->kinds[i].ops, sizeof(mgopt_op *) * (size_t)fr->kinds[i].cap);
  mgopt__heap_free(&f->program->alloc, fr->kinds, sizeof(mgopt__kind_list) * MGOPT_OP__COUNT);
  fr->kinds = NULL;
}

static void mgopt__link_before(mgopt_op *op, mgopt_block *b, mgopt_op *pos) {
  op->parent = b;
  op->next = pos;
  op->prev = pos ? pos->prev : b->last;
  if (op->prev) op->prev->next = op;
  else b->first = op;
  if (pos) pos->prev = op;
  else b->last = op;
  b->nops++;
  b->program->nlinked++;
  if (op->nblocks) mgopt__set_func(op, b->func);
  if (mgopt__block_indexed(b)) mgopt__index_link(MGOPT__FUNC_REC(b->func), op);
}

static void mgopt__unlink(mgopt_op *op) {
  mgopt_block *b = op->parent;
  if (!b) return;
  if (MGOPT__OP_REC(op)->slot != MGOPT__SLOT_OFF) mgopt__index_unlink(MGOPT__FUNC_REC(b->func), op);
  if (op->prev) op->prev->next = op->next;
  else b->first = op->next;
  if (op->next) op->next->prev = op->prev;
  else b->last = op->prev;
  b->nops--;
  b->program->nlinked--;
  op->prev = op->next = NULL;
  op->parent = NULL;
}

MGOPTDEF void mgopt_op_insert_before(mgopt_op *op, mgopt_op *pos) {
  MGOPT_ASSERT(!op->parent && pos && pos->parent);
  mgopt__link_before(op, pos->parent, pos);
}

MGOPTDEF void mgopt_op_insert_after(mgopt_op *op, mgopt_op *pos) {
  MGOPT_ASSERT(!op->parent && pos && pos->parent);
  mgopt__link_before(op, pos->parent, pos->next);
}

MGOPTDEF void mgopt_op_append(mgopt_op *op, mgopt_block *b) {
  MGOPT_ASSERT(!op->parent);
  mgopt__link_before(op, b, NULL);
}

MGOPTDEF void mgopt_op_move_before(mgopt_op *op, mgopt_op *pos) {
  if (op == pos) return;
  mgopt__unlink(op);
  mgopt__link_before(op, pos->parent, pos);
}

MGOPTDEF void mgopt_op_move_to_end(mgopt_op *op, mgopt_block *b) {
  mgopt__unlink(op);
  mgopt__link_before(op, b, NULL);
}

static void mgopt__drop_operands(mgopt_op *op) {
  int32_t s, k;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) mgopt__use_unlink(&op->slots[s].uses[k]);
}

static void mgopt__erase_block_contents(mgopt_block *b) {
  mgopt_op *o, *prev;
  int32_t i;
  for (i = 0; i < b->nouts; i++) mgopt__use_unlink(b->outs[i]);
  /* erase back to front so uses inside the block disappear before their defs */
  for (o = b->last; o; o = prev) {
    int32_t k;
    prev = o->prev;
    mgopt__drop_operands(o);
    for (k = 0; k < o->nblocks; k++) mgopt__erase_block_contents(o->blocks[k]);
    if (!(o->flags & MGOPT_OP_ERASED)) b->program->nlinked--;
    o->flags |= MGOPT_OP_ERASED;
  }
}

MGOPTDEF void mgopt_op_erase(mgopt_op *op) {
  int32_t k;
  for (k = 0; k < op->nblocks; k++) mgopt__erase_block_contents(op->blocks[k]);
  mgopt__drop_operands(op);
  mgopt__unlink(op);
  op->flags |= MGOPT_OP_ERASED;
}

MGOPTDEF mgopt_status mgopt_op_set_name(mgopt_op *op, const char *name) {
  const char *n = name ? mgopt_program_intern_cstr(op->program, name) : NULL;
  if (name && !n) return MGOPT_ERR_NOMEM;
  op->name = n;
  return MGOPT_OK;
}

static mgopt_program *mgopt__value_program(const mgopt_value *v) {
  return v->def ? v->def->program : v->owner->program;
}

MGOPTDEF mgopt_status mgopt_value_set_name(mgopt_value *v, const char *name) {
  const char *n = name ? mgopt_program_intern_cstr(mgopt__value_program(v), name) : NULL;
  if (name && !n) return MGOPT_ERR_NOMEM;
  v->name = n;
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- operands */

MGOPTDEF int32_t mgopt_op_slot_index(const mgopt_op *op, const char *slot) {
  int32_t i;
  for (i = 0; i < op->nslots; i++)
    if (strcmp(op->slots[i].name, slot) == 0) return i;
  return -1;
}

static int32_t mgopt__slot_get_or_add(mgopt_op *op, const char *slot) {
  int32_t i = mgopt_op_slot_index(op, slot);
  mgopt_slot *ns;
  if (i >= 0) return i;
  ns = (mgopt_slot *)mgopt_program_alloc(op->program, sizeof(mgopt_slot) * (size_t)(op->nslots + 1), 8);
  if (!ns) return -1;
  if (op->nslots) {
    /* uses hold their slot index, not pointers to slots, so moving the array is safe */
    memcpy(ns, op->slots, sizeof(mgopt_slot) * (size_t)op->nslots);
  }
  ns[op->nslots].name = mgopt_program_intern_cstr(op->program, slot);
  if (!ns[op->nslots].name) return -1;
  op->slots = ns;
  return op->nslots++;
}

MGOPTDEF mgopt_status mgopt_op_set_operand_list(mgopt_op *op, const char *slot,
                                                mgopt_value *const *vs, int32_t n) {
  int32_t si = mgopt__slot_get_or_add(op, slot), k;
  mgopt_slot *s;
  if (si < 0) return mgopt__oom(op->program);
  s = &op->slots[si];
  for (k = 0; k < s->n; k++) mgopt__use_unlink(&s->uses[k]);
  s->is_list = 1;
  s->n = 0;
  if (n > 0) {
    mgopt_use *u = (mgopt_use *)mgopt_program_alloc(op->program, sizeof(mgopt_use) * (size_t)n, 8);
    if (!u) return mgopt__oom(op->program);
    s->uses = u;
    for (k = 0; k < n; k++) {
      u[k].op = op;
      u[k].slot = si;
      u[k].index = k;
      mgopt__use_link(&u[k], vs[k]);
    }
  }
  s->n = n;
  return MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_op_set_operand(mgopt_op *op, const char *slot, mgopt_value *v) {
  int32_t si = mgopt__slot_get_or_add(op, slot);
  mgopt_slot *s;
  if (si < 0) return mgopt__oom(op->program);
  s = &op->slots[si];
  if (!s->is_list && s->n == 1) {
    if (v) mgopt__use_link(&s->uses[0], v);
    else {
      mgopt__use_unlink(&s->uses[0]);
      s->n = 0;
    }
    return MGOPT_OK;
  }
  {
    int32_t k;
    for (k = 0; k < s->n; k++) mgopt__use_unlink(&s->uses[k]);
  }
  s->is_list = 0;
  s->n = 0;
  if (!v) return MGOPT_OK;
  if (!s->uses) {
    s->uses = (mgopt_use *)mgopt_program_alloc(op->program, sizeof(mgopt_use), 8);
    if (!s->uses) return mgopt__oom(op->program);
  }
  s->uses[0].op = op;
  s->uses[0].slot = si;
  s->uses[0].index = 0;
  s->uses[0].value = NULL;
  mgopt__use_link(&s->uses[0], v);
  s->n = 1;
  return MGOPT_OK;
}

MGOPTDEF void mgopt_op_set_operand_at(mgopt_op *op, int32_t slot_index, int32_t index, mgopt_value *v) {
  MGOPT_ASSERT(slot_index >= 0 && slot_index < op->nslots);
  MGOPT_ASSERT(index >= 0 && index < op->slots[slot_index].n && v);
  mgopt__use_link(&op->slots[slot_index].uses[index], v);
}

MGOPTDEF mgopt_value *mgopt_op_operand(const mgopt_op *op, const char *slot) {
  int32_t i = mgopt_op_slot_index(op, slot);
  if (i < 0 || op->slots[i].is_list || op->slots[i].n != 1) return NULL;
  return op->slots[i].uses[0].value;
}

MGOPTDEF int32_t mgopt_op_operand_count(const mgopt_op *op) {
  int32_t i, n = 0;
  for (i = 0; i < op->nslots; i++) n += op->slots[i].n;
  return n;
}

/* ---------------------------------------------------------------- attributes */

static int32_t mgopt__attr_index(const mgopt_op *op, const char *name) {
  int32_t i;
  for (i = 0; i < op->nattrs; i++)
    if (strcmp(op->attrs[i].name, name) == 0) return i;
  return -1;
}

MGOPTDEF const mgopt_attr *mgopt_op_attr(const mgopt_op *op, const char *name) {
  int32_t i = mgopt__attr_index(op, name);
  return i < 0 ? NULL : &op->attrs[i];
}

MGOPTDEF void mgopt_op_remove_attr(mgopt_op *op, const char *name) {
  int32_t i = mgopt__attr_index(op, name);
  if (i < 0) return;
  memmove(&op->attrs[i], &op->attrs[i + 1], sizeof(mgopt_attr) * (size_t)(op->nattrs - i - 1));
  op->nattrs--;
}

MGOPTDEF mgopt_status mgopt_op_set_attr(mgopt_op *op, const mgopt_attr *a) {
  mgopt_program *p = op->program;
  mgopt_attr c = *a;
  int32_t i;
  c.name = mgopt_program_intern_cstr(p, a->name);
  if (!c.name) return mgopt__oom(p);
  switch ((mgopt_attr_kind)a->kind) {
    case MGOPT_ATTR_STRING:
      c.u.s.ptr = mgopt__dupz(p, a->u.s.ptr, a->u.s.len);
      if (!c.u.s.ptr) return mgopt__oom(p);
      break;
    case MGOPT_ATTR_BOOLS:
    case MGOPT_ATTR_INTS:
      c.u.ints = (int64_t *)mgopt__dup(p, a->u.ints, sizeof(int64_t) * (size_t)a->n);
      if (!c.u.ints) return mgopt__oom(p);
      break;
    case MGOPT_ATTR_FLOATS:
      c.u.floats = (double *)mgopt__dup(p, a->u.floats, sizeof(double) * (size_t)a->n);
      if (!c.u.floats) return mgopt__oom(p);
      break;
    case MGOPT_ATTR_STRINGS: {
      int64_t k;
      c.u.strs = (mgopt_str *)mgopt_program_alloc(p, sizeof(mgopt_str) * (size_t)(a->n ? a->n : 1), 8);
      if (!c.u.strs) return mgopt__oom(p);
      for (k = 0; k < a->n; k++) {
        char *s = mgopt__dupz(p, a->u.strs[k].ptr, a->u.strs[k].len);
        if (!s) return mgopt__oom(p);
        c.u.strs[k].ptr = s;
        c.u.strs[k].len = a->u.strs[k].len;
      }
      break;
    }
    case MGOPT_ATTR_BYTES:
      c.u.bytes = (const uint8_t *)mgopt__dup(p, a->u.bytes, (size_t)a->n);
      if (!c.u.bytes) return mgopt__oom(p);
      break;
    default: /* scalars by value; tensors by reference (they live in the same arena) */
      break;
  }
  i = mgopt__attr_index(op, c.name);
  if (i < 0) {
    mgopt_attr *na = (mgopt_attr *)mgopt_program_alloc(p, sizeof(mgopt_attr) * (size_t)(op->nattrs + 1), 8);
    if (!na) return mgopt__oom(p);
    if (op->nattrs) memcpy(na, op->attrs, sizeof(mgopt_attr) * (size_t)op->nattrs);
    op->attrs = na;
    i = op->nattrs++;
  }
  op->attrs[i] = c;
  return MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_op_set_bool(mgopt_op *op, const char *name, int v) {
  mgopt_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = MGOPT_ATTR_BOOL;
  a.u.i = v != 0;
  return mgopt_op_set_attr(op, &a);
}

MGOPTDEF mgopt_status mgopt_op_set_int(mgopt_op *op, const char *name, int64_t v) {
  mgopt_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = MGOPT_ATTR_INT;
  a.u.i = v;
  return mgopt_op_set_attr(op, &a);
}

MGOPTDEF mgopt_status mgopt_op_set_float(mgopt_op *op, const char *name, double v) {
  mgopt_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = MGOPT_ATTR_FLOAT;
  a.u.f = v;
  return mgopt_op_set_attr(op, &a);
}

MGOPTDEF mgopt_status mgopt_op_set_string(mgopt_op *op, const char *name, const char *v) {
  mgopt_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = MGOPT_ATTR_STRING;
  a.u.s.ptr = v;
  a.u.s.len = strlen(v);
  return mgopt_op_set_attr(op, &a);
}

MGOPTDEF mgopt_status mgopt_op_set_ints(mgopt_op *op, const char *name, const int64_t *v, int64_t n) {
  mgopt_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = MGOPT_ATTR_INTS;
  a.n = n;
  a.u.ints = (int64_t *)(uintptr_t)v;
  return mgopt_op_set_attr(op, &a);
}

MGOPTDEF mgopt_status mgopt_op_set_floats(mgopt_op *op, const char *name, const double *v, int64_t n) {
  mgopt_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = MGOPT_ATTR_FLOATS;
  a.n = n;
  a.u.floats = (double *)(uintptr_t)v;
  return mgopt_op_set_attr(op, &a);
}

MGOPTDEF mgopt_status mgopt_op_set_tensor(mgopt_op *op, const char *name, mgopt_tensor *t) {
  mgopt_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.kind = MGOPT_ATTR_TENSOR;
  a.u.t = t;
  return mgopt_op_set_attr(op, &a);
}

/* A registry default parsed from its literal text: only scalars are needed here. */
static int mgopt__default_scalar(const mgopt_op *op, const char *name, double *f, int64_t *i,
                                 const char **s, size_t *slen) {
  const mgopt_attr_def *ad = mgopt__attr_def(op->kind, name);
  const char *d;
  if (!ad || !ad->deflt) return 0;
  d = ad->deflt;
  if (strcmp(d, "true") == 0) {
    *i = 1;
    *f = 1;
    return 1;
  }
  if (strcmp(d, "false") == 0) {
    *i = 0;
    *f = 0;
    return 1;
  }
  if (d[0] == '"') {
    size_t n = strlen(d);
    if (n < 2) return 0;
    *s = d + 1;
    *slen = n - 2;
    return 2;
  }
  *f = strtod(d, NULL);
  *i = strtoll(d, NULL, 10);
  return 1;
}

/* A parameter given as a constant operand instead of an attribute (MIL lets
   either form appear): the const tensor in slot `name`, else NULL. */
static const mgopt_tensor *mgopt__param_const(const mgopt_op *op, const char *name) {
  mgopt_value *v = mgopt_op_operand(op, name);
  return v ? mgopt_value_const(v) : NULL;
}

MGOPTDEF int64_t mgopt_op_get_int(const mgopt_op *op, const char *name, int64_t dflt) {
  const mgopt_attr *a = mgopt_op_attr(op, name);
  const mgopt_tensor *ct = a ? NULL : mgopt__param_const(op, name);
  double f;
  int64_t i;
  const char *s;
  size_t sl;
  if (a) {
    if (a->kind == MGOPT_ATTR_INT || a->kind == MGOPT_ATTR_BOOL) return a->u.i;
    if (a->kind == MGOPT_ATTR_FLOAT) {
      /* out of range or NaN: the default (a cast would be undefined) */
      if (!(a->u.f > -9.2233720368547758e18 && a->u.f < 9.2233720368547758e18)) return dflt;
      return (int64_t)a->u.f;
    }
    if (a->kind == MGOPT_ATTR_TENSOR && a->u.t->numel == 1 && a->u.t->dtype != MGOPT_DT_STRING)
      return mgopt_tensor_get_i64(a->u.t, 0);
    return dflt;
  }
  if (ct && ct->numel == 1 && ct->dtype != MGOPT_DT_STRING) return mgopt_tensor_get_i64(ct, 0);
  if (mgopt__default_scalar(op, name, &f, &i, &s, &sl) == 1) return i;
  return dflt;
}

MGOPTDEF double mgopt_op_get_float(const mgopt_op *op, const char *name, double dflt) {
  const mgopt_attr *a = mgopt_op_attr(op, name);
  const mgopt_tensor *ct = a ? NULL : mgopt__param_const(op, name);
  double f;
  int64_t i;
  const char *s;
  size_t sl;
  if (a) {
    if (a->kind == MGOPT_ATTR_FLOAT) return a->u.f;
    if (a->kind == MGOPT_ATTR_INT || a->kind == MGOPT_ATTR_BOOL) return (double)a->u.i;
    if (a->kind == MGOPT_ATTR_TENSOR && a->u.t->numel == 1 && a->u.t->dtype != MGOPT_DT_STRING)
      return mgopt_tensor_get_f64(a->u.t, 0);
    return dflt;
  }
  if (ct && ct->numel == 1 && ct->dtype != MGOPT_DT_STRING) return mgopt_tensor_get_f64(ct, 0);
  if (mgopt__default_scalar(op, name, &f, &i, &s, &sl) == 1) return f;
  return dflt;
}

MGOPTDEF int mgopt_op_get_bool(const mgopt_op *op, const char *name, int dflt) {
  return mgopt_op_get_int(op, name, dflt) != 0;
}

MGOPTDEF const char *mgopt_op_get_string(const mgopt_op *op, const char *name, size_t *len) {
  const mgopt_attr *a = mgopt_op_attr(op, name);
  double f;
  int64_t i;
  const char *s = NULL;
  size_t sl = 0;
  const mgopt_tensor *ct = a ? NULL : mgopt__param_const(op, name);
  if (a) {
    if (a->kind != MGOPT_ATTR_STRING) return NULL;
    if (len) *len = a->u.s.len;
    return a->u.s.ptr;
  }
  if (ct && ct->dtype == MGOPT_DT_STRING && ct->numel == 1) {
    const mgopt_str *str = (const mgopt_str *)ct->data;
    const char *c = mgopt_program_intern(op->program, str->ptr, str->len);
    if (c && len) *len = str->len;
    return c;
  }
  if (mgopt__default_scalar(op, name, &f, &i, &s, &sl) == 2) {
    /* defaults live in static tables: intern to get a NUL-terminated copy */
    const char *c = mgopt_program_intern(op->program, s, sl);
    if (c && len) *len = sl;
    return c;
  }
  return NULL;
}

static int64_t mgopt__tensor_ints(mgopt_program *p, const mgopt_tensor *t, const int64_t **out) {
  int64_t k, n = t->numel;
  int64_t *v;
  if (t->rank > 1 || !(mgopt_dtype_is_int((mgopt_dtype)t->dtype) || t->dtype == MGOPT_DT_BOOL)) return -1;
  v = (int64_t *)mgopt_program_alloc(p, sizeof(int64_t) * (size_t)(n ? n : 1), 8);
  if (!v) return -1;
  for (k = 0; k < n; k++) v[k] = mgopt_tensor_get_i64(t, k);
  *out = v;
  return n;
}

MGOPTDEF int64_t mgopt_op_get_ints(mgopt_program *p, const mgopt_op *op, const char *name,
                                   const int64_t **out) {
  const mgopt_attr *a = mgopt_op_attr(op, name);
  if (!a) {
    const mgopt_tensor *ct = mgopt__param_const(op, name);
    return ct ? mgopt__tensor_ints(p, ct, out) : -1;
  }
  if (a->kind == MGOPT_ATTR_INTS || a->kind == MGOPT_ATTR_BOOLS) {
    *out = a->u.ints;
    return a->n;
  }
  if (a->kind == MGOPT_ATTR_INT) {
    *out = &a->u.i;
    return 1;
  }
  if (a->kind == MGOPT_ATTR_TENSOR) return mgopt__tensor_ints(p, a->u.t, out);
  return -1;
}

/* ---------------------------------------------------------------- values */

/* 1 if v is an output of a function body (not of a nested block). */
static int mgopt__is_function_output(const mgopt_value *v) {
  const mgopt_use *u;
  int32_t k;
  for (u = v->uses, k = 0; u && k < v->nblock_uses; u = u->next, k++) /* block outputs lead */
    if (!u->op && u->block && !u->block->parent_op) return 1;
  return 0;
}

MGOPTDEF void mgopt_value_replace_all_uses(mgopt_value *from, mgopt_value *to) {
  if (from == to) return;
  /* a function output keeps its name: the replacement takes it, unless the
     replacement is an input or already another output (its name must stay) */
  if (to->def && mgopt__is_function_output(from) && !mgopt__is_function_output(to)) to->name = from->name;
  while (from->uses) mgopt__use_link(from->uses, to);
}

/* 1 if block `inner` is b or nested inside b. */
static int mgopt__block_within(const mgopt_block *inner, const mgopt_block *b) {
  while (inner) {
    if (inner == b) return 1;
    inner = inner->parent_op ? inner->parent_op->parent : NULL;
  }
  return 0;
}

MGOPTDEF int32_t mgopt_value_replace_uses_in_scope(mgopt_value *from, mgopt_value *to) {
  mgopt_block *scope = to->def ? to->def->parent : to->owner;
  mgopt_use *u = from->uses, *next;
  int32_t left = 0;
  for (; u; u = next) {
    mgopt_block *where = u->op ? u->op->parent : u->block;
    next = u->next;
    if (scope && mgopt__block_within(where, scope)) mgopt__use_link(u, to);
    else left++;
  }
  return left;
}

MGOPTDEF int mgopt_value_is_block_output(const mgopt_value *v) { return v->nblock_uses > 0; }

MGOPTDEF mgopt_tensor *mgopt_value_const(const mgopt_value *v) {
  const mgopt_attr *a;
  if (!v || !v->def || v->def->kind != MGOPT_OP_const) return NULL;
  a = mgopt_op_attr(v->def, "val");
  return (a && a->kind == MGOPT_ATTR_TENSOR) ? a->u.t : NULL;
}

MGOPT__PRIVATE mgopt_status mgopt__op_infer_types(mgopt_program *p, const mgopt_op *op, mgopt_type *tmp, int32_t ntmp,
                                                 mgopt_type **out, mgopt_diag *d) {
  const mgopt_op_def *def = mgopt_op_def_get(op->kind);
  mgopt_type *t = tmp;
  mgopt_status s;
  *out = NULL;
  if (!def || !def->infer || op->nouts == 0) return MGOPT_OK;
  if (op->nouts > ntmp) {
    t = (mgopt_type *)mgopt_program_alloc(p, sizeof(mgopt_type) * (size_t)op->nouts, 8);
    if (!t) return MGOPT_ERR_NOMEM; /* the arena set the program's sticky status */
  }
  memset(t, 0, sizeof(mgopt_type) * (size_t)op->nouts);
  s = def->infer(p, op, t, d);
  if (s) return s;
  *out = t;
  return MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_op_infer(mgopt_program *p, mgopt_op *op, mgopt_diag *d) {
  mgopt_type tmp[16], *outs;
  mgopt_status s = mgopt__op_infer_types(p, op, tmp, 16, &outs, d);
  int32_t i;
  if (s || !outs) return s;
  for (i = 0; i < op->nouts; i++) op->outs[i]->type = outs[i];
  return MGOPT_OK;
}

MGOPTDEF mgopt_op *mgopt_build_op(mgopt_program *p, mgopt_block *b, mgopt_op *pos,
                                  const char *type, const char *name, int32_t nslots,
                                  const char *const *slot_names, mgopt_value *const *vals,
                                  int32_t nouts) {
  mgopt_op *op = mgopt_op_new(p, type, nouts, 0);
  int32_t i;
  if (!op) return NULL;
  if (name) {
    mgopt_op_set_name(op, name);
    if (nouts == 1) mgopt_value_set_name(op->outs[0], name);
  }
  for (i = 0; i < nslots; i++)
    if (mgopt_op_set_operand(op, slot_names[i], vals[i])) return NULL;
  if (pos) mgopt_op_insert_before(op, pos);
  else mgopt_op_append(op, b);
  return op;
}

MGOPTDEF mgopt_value *mgopt_build_const(mgopt_program *p, mgopt_block *b, mgopt_op *pos,
                                        const char *name, mgopt_tensor *t) {
  mgopt_op *op;
  if (!name) name = mgopt_program_fresh_name(p, "const");
  op = mgopt_build_op(p, b, pos, "const", name, 0, NULL, NULL, 1);
  if (!op || mgopt_op_set_tensor(op, "val", t)) return NULL;
  if (mgopt_type_make_static(p, &op->outs[0]->type, (mgopt_dtype)t->dtype, t->rank, t->shape))
    return NULL;
  return op->outs[0];
}

/* ---------------------------------------------------------------- walking */

MGOPTDEF int mgopt_block_walk(mgopt_block *b, mgopt_op_visit_fn fn, void *ud) {
  mgopt_op *op, *next;
  for (op = b->first; op; op = next) {
    int r;
    int32_t i;
    next = op->next;
    r = fn(op, ud);
    if (r) return r;
    if (op->flags & MGOPT_OP_ERASED) continue;
    for (i = 0; i < op->nblocks; i++) {
      r = mgopt_block_walk(op->blocks[i], fn, ud);
      if (r) return r;
    }
  }
  return 0;
}

MGOPTDEF int mgopt_program_walk(mgopt_program *p, mgopt_op_visit_fn fn, void *ud) {
  int32_t i;
  for (i = 0; i < p->nfuncs; i++) {
    int r = mgopt_block_walk(p->funcs[i]->body, fn, ud);
    if (r) return r;
  }
  return 0;
}
/* src/core/infer/infer.h — private declarations shared by the type inference files in src/core/infer/.

   Conventions of every inference function:
   - an operand's type is read through mgopt__ti_in / mgopt__ti_opt, which turn
     a malformed tensor type (rank < -1, dims missing) into "rank unknown";
   - a dim is static (v >= 0, no symbol), symbolic (sym set) or unknown;
   - output dims are allocated in the program arena by mgopt__ti_out and then
     filled in place; every size derived from the IR goes through checked
     arithmetic; every failure is MGOPT_ERR_TYPE with a message, never an assert. */
#ifndef MGOPT__INFER_H
#define MGOPT__INFER_H

/* ---- failures */
/* Sets d to MGOPT_ERR_TYPE with "<op type>: <message>" and the op's name; returns MGOPT_ERR_TYPE. d may be NULL. */
MGOPT__PRIVATE mgopt_status mgopt__ti_fail(mgopt_diag *d, const mgopt_op *op, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
MGOPT__PRIVATE mgopt_status mgopt__ti_nomem(mgopt_diag *d);

/* ---- dims and types */
/* 1 if the dim is static. */
MGOPT__PRIVATE int mgopt__ti_st(mgopt_dim x);
/* t sanitised: a tensor type whose rank cannot be trusted gets rank -1. */
MGOPT__PRIVATE mgopt_type mgopt__ti_view(const mgopt_type *t);
/* Normalises axis `ax` against `rank` (negative counts from the end). 0 if out of range. */
MGOPT__PRIVATE int mgopt__ti_axis(int64_t ax, int64_t rank, int32_t *out);
/* Broadcasts two dims: 0 on two different static non-1 dims. */
MGOPT__PRIVATE int mgopt__ti_bdim(mgopt_dim a, mgopt_dim b, mgopt_dim *o);
/* Two dims that must be equal: the most precise of both (two different symbols: unknown);
   0 on a static conflict. */
MGOPT__PRIVATE int mgopt__ti_unify(mgopt_dim a, mgopt_dim b, mgopt_dim *o);
/* 1 when dtypes a and b are known and differ. */
MGOPT__PRIVATE int mgopt__ti_dt_clash(int a, int b);

/* ---- operands and parameters */
/* The single tensor operand of `slot`, or 0 when absent (a list counts as absent). */
MGOPT__PRIVATE int mgopt__ti_opt(const mgopt_op *op, const char *slot, mgopt_type *t);
/* A required tensor operand. */
MGOPT__PRIVATE mgopt_status mgopt__ti_in(const mgopt_op *op, const char *slot, mgopt_type *t, mgopt_diag *d);
/* The values of variadic slot `slot` (NULL and 0 when absent). */
MGOPT__PRIVATE int32_t mgopt__ti_list(const mgopt_op *op, const char *slot, const mgopt_use **uses);
/* An integer list parameter: count >= 0 (values in *v), -1 absent, -2 given but not constant. */
MGOPT__PRIVATE int64_t mgopt__ti_ints(mgopt_program *p, const mgopt_op *op, const char *name, const int64_t **v);
/* A dtype parameter given by name ("fp32"); MGOPT_DT_UNKNOWN when absent or unknown. */
MGOPT__PRIVATE int mgopt__ti_dtype_param(const mgopt_op *op, const char *name);
/* 1 when string parameter `name` is absent or one of the '|'-separated words in `allowed`. */
MGOPT__PRIVATE int mgopt__ti_enum_ok(const mgopt_op *op, const char *name, const char *allowed);

/* ---- outputs */
/* Output type with `rank` unknown dims (rank -1: unknown rank). */
MGOPT__PRIVATE mgopt_status mgopt__ti_out(mgopt_program *p, const mgopt_op *op, mgopt_type *out, int dt,
                                          int64_t rank, mgopt_diag *d);
/* Output equal to t (sanitised) with dtype dt. */
MGOPT__PRIVATE mgopt_status mgopt__ti_like(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                           const mgopt_type *t, int dt, mgopt_diag *d);
/* Broadcast of n tensor types into out (dtype dt). */
MGOPT__PRIVATE mgopt_status mgopt__ti_broadcast(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                const mgopt_type *ts, int n, int dt, mgopt_diag *d);

/* ---- inference functions named by the rows of MGOPT_OP_TABLE (mgopt_infer_fn), one family per file */
#define MGOPT__TI_FN(name)                                                                  \
  MGOPT__PRIVATE mgopt_status mgopt__infer_##name(mgopt_program *p, const mgopt_op *op, \
                                                  mgopt_type *out, mgopt_diag *d)
/* elementwise.c */
MGOPT__TI_FN(const);
MGOPT__TI_FN(identity);
MGOPT__TI_FN(unary);
MGOPT__TI_FN(bias_add);
MGOPT__TI_FN(binary);
MGOPT__TI_FN(select);
MGOPT__TI_FN(cast);
/* shape.c */
MGOPT__TI_FN(reshape);
MGOPT__TI_FN(transpose);
MGOPT__TI_FN(expand_dims);
MGOPT__TI_FN(squeeze);
MGOPT__TI_FN(join);
MGOPT__TI_FN(split);
MGOPT__TI_FN(slice_by_index);
MGOPT__TI_FN(slice_by_size);
MGOPT__TI_FN(gather);
MGOPT__TI_FN(gather_axis);
MGOPT__TI_FN(one_hot);
MGOPT__TI_FN(pad);
MGOPT__TI_FN(tile);
MGOPT__TI_FN(pixel_shuffle);
MGOPT__TI_FN(space_to_batch);
MGOPT__TI_FN(batch_to_space);
/* struct.c */
MGOPT__TI_FN(scatter_axis);
MGOPT__TI_FN(scatter_nd);
MGOPT__TI_FN(gather_nd);
MGOPT__TI_FN(reverse_sequence);
MGOPT__TI_FN(depth_space);
MGOPT__TI_FN(topk);
MGOPT__TI_FN(range_1d);
MGOPT__TI_FN(fill);
/* reduce.c */
MGOPT__TI_FN(reduce);
MGOPT__TI_FN(softmax);
MGOPT__TI_FN(reduce_arg);
MGOPT__TI_FN(cumsum);
MGOPT__TI_FN(matmul);
MGOPT__TI_FN(linear);
MGOPT__TI_FN(einsum);
/* window.c */
MGOPT__TI_FN(conv);
MGOPT__TI_FN(pool);
MGOPT__TI_FN(resample);
/* control.c */
MGOPT__TI_FN(while);
MGOPT__TI_FN(cond);
/* constexpr.c */
MGOPT__TI_FN(quantize);
MGOPT__TI_FN(dequant);
MGOPT__TI_FN(lut);
MGOPT__TI_FN(sparse);
MGOPT__TI_FN(lut_sparse);
MGOPT__TI_FN(sparse_shift);
/* state.c */
MGOPT__TI_FN(read_state);
MGOPT__TI_FN(update_state);
/* recurrent.c */
MGOPT__TI_FN(recurrent);
#undef MGOPT__TI_FN

#endif /* MGOPT__INFER_H */
/* src/core/infer/common.c — helpers shared by the type inference functions: failures, operands,
   parameters, dim arithmetic, output types and broadcasting. */

MGOPT__PRIVATE mgopt_status mgopt__ti_fail(mgopt_diag *d, const mgopt_op *op, const char *fmt, ...) {
  char buf[MGOPT_DIAG_MSG_MAX];
  va_list ap;
  if (!d) return MGOPT_ERR_TYPE;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  mgopt_diag_set(d, MGOPT_ERR_TYPE, "%s: %s", op->type ? op->type : "?", buf);
  snprintf(d->op, sizeof d->op, "%s", op->name ? op->name : "");
  return MGOPT_ERR_TYPE;
}

MGOPT__PRIVATE mgopt_status mgopt__ti_nomem(mgopt_diag *d) {
  return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "type inference: out of memory");
}

MGOPT__PRIVATE int mgopt__ti_st(mgopt_dim x) { return x.sym == NULL && x.v >= 0; }

/* An operand type above MGOPT_MAX_RANK (or malformed) reads as rank unknown. */
MGOPT__PRIVATE mgopt_type mgopt__ti_view(const mgopt_type *t) {
  mgopt_type v = *t;
  if (v.rank < -1 || (v.rank > 0 && !v.dims) || v.rank > MGOPT_MAX_RANK) {
    v.rank = -1;
    v.dims = NULL;
  }
  if (v.rank < 0) v.dims = NULL;
  return v;
}

MGOPT__PRIVATE int mgopt__ti_opt(const mgopt_op *op, const char *slot, mgopt_type *t) {
  mgopt_value *v = mgopt_op_operand(op, slot);
  if (!v || v->type.kind != MGOPT_TYPE_TENSOR) return 0;
  *t = mgopt__ti_view(&v->type);
  return 1;
}

MGOPT__PRIVATE mgopt_status mgopt__ti_in(const mgopt_op *op, const char *slot, mgopt_type *t, mgopt_diag *d) {
  mgopt_value *v = mgopt_op_operand(op, slot);
  if (!v) return mgopt__ti_fail(d, op, "missing operand '%s'", slot);
  if (v->type.kind != MGOPT_TYPE_TENSOR) return mgopt__ti_fail(d, op, "operand '%s' is not a tensor", slot);
  *t = mgopt__ti_view(&v->type);
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__ti_out(mgopt_program *p, const mgopt_op *op, mgopt_type *out, int dt,
                                          int64_t rank, mgopt_diag *d) {
  if (rank < -1) rank = -1;
  if (rank > MGOPT_MAX_RANK)
    return mgopt__ti_fail(d, op, "output rank %lld is above %d", (long long)rank, MGOPT_MAX_RANK);
  if (mgopt_type_make(p, out, (mgopt_dtype)dt, (int32_t)rank, NULL)) return mgopt__ti_nomem(d);
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__ti_like(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                           const mgopt_type *t, int dt, mgopt_diag *d) {
  mgopt_status s = mgopt__ti_out(p, op, out, dt, t->rank, d);
  if (s) return s;
  if (t->rank > 0) memcpy(out->dims, t->dims, sizeof(mgopt_dim) * (size_t)t->rank);
  return MGOPT_OK;
}

MGOPT__PRIVATE int mgopt__ti_axis(int64_t ax, int64_t rank, int32_t *out) {
  if (ax < 0) ax += rank;
  if (ax < 0 || ax >= rank) return 0;
  *out = (int32_t)ax;
  return 1;
}

MGOPT__PRIVATE int mgopt__ti_bdim(mgopt_dim a, mgopt_dim b, mgopt_dim *o) {
  int sa = mgopt__ti_st(a), sb = mgopt__ti_st(b);
  if (sa && sb) {
    if (a.v == b.v || b.v == 1) *o = a;
    else if (a.v == 1) *o = b;
    else return 0;
  } else if (sa) {
    *o = a.v == 1 ? b : a;
  } else if (sb) {
    *o = b.v == 1 ? a : b;
  } else {
    *o = (a.sym && a.sym == b.sym) ? a : mgopt_dim_unknown();
  }
  return 1;
}

MGOPT__PRIVATE int mgopt__ti_unify(mgopt_dim a, mgopt_dim b, mgopt_dim *o) {
  int sa = mgopt__ti_st(a), sb = mgopt__ti_st(b);
  if (sa && sb && a.v != b.v) return 0;
  if (sa) *o = a;
  else if (sb) *o = b;
  else if (a.sym && (a.sym == b.sym || !b.sym)) *o = a;
  else if (b.sym && !a.sym) *o = b;
  else *o = mgopt_dim_unknown();
  return 1;
}

MGOPT__PRIVATE mgopt_status mgopt__ti_broadcast(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                const mgopt_type *ts, int n, int dt, mgopt_diag *d) {
  int64_t rank = 0;
  int i, k;
  mgopt_status s;
  for (i = 0; i < n; i++) {
    if (ts[i].rank < 0) return mgopt__ti_out(p, op, out, dt, -1, d);
    if (ts[i].rank > rank) rank = ts[i].rank;
  }
  if ((s = mgopt__ti_out(p, op, out, dt, rank, d)) != MGOPT_OK) return s;
  for (k = 0; k < rank; k++) {
    mgopt_dim acc = mgopt_dim_static(1);
    for (i = 0; i < n; i++) {
      int64_t j = ts[i].rank - rank + k;
      if (j < 0) continue;
      if (!mgopt__ti_bdim(acc, ts[i].dims[j], &acc))
        return mgopt__ti_fail(d, op, "shapes do not broadcast (dim %d: %lld vs %lld)", k,
                              (long long)acc.v, (long long)ts[i].dims[j].v);
    }
    out->dims[k] = acc;
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE int64_t mgopt__ti_ints(mgopt_program *p, const mgopt_op *op, const char *name, const int64_t **v) {
  int64_t n = mgopt_op_get_ints(p, op, name, v);
  if (n >= 0) return n;
  if (mgopt_op_attr(op, name)) return -2;
  return mgopt_op_slot_index(op, name) >= 0 ? -2 : -1;
}

MGOPT__PRIVATE int mgopt__ti_dtype_param(const mgopt_op *op, const char *name) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(op, name, &n);
  return s ? (int)mgopt_dtype_from_name(s, n) : (int)MGOPT_DT_UNKNOWN;
}

MGOPT__PRIVATE int mgopt__ti_enum_ok(const mgopt_op *op, const char *name, const char *allowed) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(op, name, &n), *a = allowed;
  if (!s) return 1;
  while (*a) {
    size_t m = strcspn(a, "|");
    if (m == n && memcmp(a, s, n) == 0) return 1;
    a += m + (a[m] == '|');
  }
  return 0;
}

MGOPT__PRIVATE int mgopt__ti_dt_clash(int a, int b) {
  return a != MGOPT_DT_UNKNOWN && b != MGOPT_DT_UNKNOWN && a != b;
}

MGOPT__PRIVATE int32_t mgopt__ti_list(const mgopt_op *op, const char *slot, const mgopt_use **uses) {
  int32_t i = mgopt_op_slot_index(op, slot);
  if (i < 0) {
    *uses = NULL;
    return 0;
  }
  *uses = op->slots[i].uses;
  return op->slots[i].n;
}
/* src/core/infer/elementwise.c — type inference of elementwise ops: const, identity, unary, binary
   with broadcasting, select, cast, bias_add. */

MGOPT__PRIVATE mgopt_status mgopt__infer_const(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                               mgopt_diag *d) {
  const mgopt_attr *a = mgopt_op_attr(op, "val");
  const mgopt_tensor *t;
  int32_t i;
  mgopt_status s;
  if (!a || a->kind != MGOPT_ATTR_TENSOR || !a->u.t) return mgopt__ti_fail(d, op, "missing tensor attribute 'val'");
  t = a->u.t;
  if (t->rank < 0 || (t->rank > 0 && !t->shape)) return mgopt__ti_fail(d, op, "malformed tensor in 'val'");
  if ((s = mgopt__ti_out(p, op, out, t->dtype, t->rank, d)) != MGOPT_OK) return s;
  for (i = 0; i < t->rank; i++) {
    if (t->shape[i] < 0) return mgopt__ti_fail(d, op, "tensor 'val' has a negative dim");
    out->dims[i] = mgopt_dim_static(t->shape[i]);
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_identity(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                  mgopt_diag *d) {
  mgopt_value *v = mgopt_op_operand(op, "x");
  mgopt_type t;
  if (!v) return mgopt__ti_fail(d, op, "missing operand 'x'");
  if (v->type.kind != MGOPT_TYPE_TENSOR) {
    if (mgopt__type_copy(p, out, &v->type)) return mgopt__ti_nomem(d);
    return MGOPT_OK;
  }
  t = mgopt__ti_view(&v->type);
  return mgopt__ti_like(p, op, out, &t, t.dtype, d);
}

/* Elementwise unary (and every op whose output is x's type). */
MGOPT__PRIVATE mgopt_status mgopt__infer_unary(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                               mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  uint32_t tr = mgopt_op_traits(op);
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (op->kind == MGOPT_OP_gelu && !mgopt__ti_enum_ok(op, "mode", "EXACT|TANH_APPROXIMATION|SIGMOID_APPROXIMATION"))
    return mgopt__ti_fail(d, op, "unknown mode");
  if ((tr & MGOPT_TRAIT_LOGICAL) && x.dtype != MGOPT_DT_UNKNOWN && x.dtype != MGOPT_DT_BOOL)
    return mgopt__ti_fail(d, op, "expects bool, got %s", mgopt_dtype_name((mgopt_dtype)x.dtype));
  return mgopt__ti_like(p, op, out, &x, x.dtype, d);
}

/* bias_add: x of any rank plus a 1-d bias along `axis` (negative counts from
   the end); the bias holds x's dim at axis when both are known. */
MGOPT__PRIVATE mgopt_status mgopt__infer_bias_add(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                  mgopt_diag *d) {
  mgopt_type x, b;
  mgopt_status s;
  int64_t axis = mgopt_op_get_int(op, "axis", 1);
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "bias", &b, d)) != MGOPT_OK) return s;
  if (mgopt__ti_dt_clash(x.dtype, b.dtype))
    return mgopt__ti_fail(d, op, "operand dtypes differ (%s vs %s)", mgopt_dtype_name((mgopt_dtype)x.dtype),
                          mgopt_dtype_name((mgopt_dtype)b.dtype));
  if (b.rank >= 0 && b.rank != 1) return mgopt__ti_fail(d, op, "bias of rank %d, expected 1", (int)b.rank);
  if (x.rank >= 0) {
    if (axis < -(int64_t)x.rank || axis >= (int64_t)x.rank)
      return mgopt__ti_fail(d, op, "axis %lld out of range for rank %d", (long long)axis, (int)x.rank);
    if (axis < 0) axis += x.rank;
    if (b.rank == 1 && mgopt_dim_is_static(b.dims[0]) && mgopt_dim_is_static(x.dims[axis]) &&
        b.dims[0].v != x.dims[axis].v)
      return mgopt__ti_fail(d, op, "bias of %lld values for a dim of %lld", (long long)b.dims[0].v,
                            (long long)x.dims[axis].v);
  }
  return mgopt__ti_like(p, op, out, &x, x.dtype != MGOPT_DT_UNKNOWN ? x.dtype : b.dtype, d);
}

MGOPT__PRIVATE mgopt_status mgopt__infer_binary(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                mgopt_diag *d) {
  mgopt_type t[2];
  mgopt_status s;
  uint32_t tr = mgopt_op_traits(op);
  int dt;
  if ((s = mgopt__ti_in(op, "x", &t[0], d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "y", &t[1], d)) != MGOPT_OK) return s;
  /* pow keeps x's dtype (an integer exponent is common in imported models) */
  if (op->kind != MGOPT_OP_pow && mgopt__ti_dt_clash(t[0].dtype, t[1].dtype))
    return mgopt__ti_fail(d, op, "operand dtypes differ (%s vs %s)", mgopt_dtype_name((mgopt_dtype)t[0].dtype),
                          mgopt_dtype_name((mgopt_dtype)t[1].dtype));
  if ((tr & MGOPT_TRAIT_LOGICAL) &&
      ((t[0].dtype != MGOPT_DT_UNKNOWN && t[0].dtype != MGOPT_DT_BOOL) ||
       (t[1].dtype != MGOPT_DT_UNKNOWN && t[1].dtype != MGOPT_DT_BOOL)))
    return mgopt__ti_fail(d, op, "expects bool operands");
  dt = t[0].dtype != MGOPT_DT_UNKNOWN || op->kind == MGOPT_OP_pow ? t[0].dtype : t[1].dtype;
  if (tr & (MGOPT_TRAIT_COMPARISON | MGOPT_TRAIT_LOGICAL)) dt = MGOPT_DT_BOOL;
  return mgopt__ti_broadcast(p, op, out, t, 2, dt, d);
}

MGOPT__PRIVATE mgopt_status mgopt__infer_select(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                mgopt_diag *d) {
  mgopt_type t[3];
  mgopt_status s;
  if ((s = mgopt__ti_in(op, "cond", &t[0], d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "a", &t[1], d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "b", &t[2], d)) != MGOPT_OK) return s;
  if (mgopt__ti_dt_clash(t[1].dtype, t[2].dtype)) return mgopt__ti_fail(d, op, "'a' and 'b' dtypes differ");
  return mgopt__ti_broadcast(p, op, out, t, 3, t[1].dtype != MGOPT_DT_UNKNOWN ? t[1].dtype : t[2].dtype, d);
}

MGOPT__PRIVATE mgopt_status mgopt__infer_cast(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                              mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const char *name = op->kind == MGOPT_OP_cast ? "dtype" : "output_dtype";
  const char *slot = op->kind == MGOPT_OP_cast ? "x" : "source_val";
  int dt = mgopt__ti_dtype_param(op, name);
  if ((s = mgopt__ti_in(op, slot, &x, d)) != MGOPT_OK) return s;
  if (dt == MGOPT_DT_UNKNOWN) return mgopt__ti_fail(d, op, "missing or unknown '%s'", name);
  return mgopt__ti_like(p, op, out, &x, dt, d);
}
/* src/core/infer/shape.c — type inference of ops that move elements: reshape, transpose, expand_dims, squeeze,
   concat, stack, split, slice_by_index, slice_by_size, gather, gather_along_axis, one_hot, pad, tile, pixel_shuffle,
   space_to_batch, batch_to_space. */

MGOPT__PRIVATE mgopt_status mgopt__infer_reshape(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                 mgopt_diag *d) {
  mgopt_type x, sh;
  mgopt_status s;
  const int64_t *v = NULL;
  int64_t n, k, infer_at = -1, rem_in = 1, rem_out = 1;
  int rem_ok = 1;
  uint8_t *copied;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "shape", &sh, d)) != MGOPT_OK) return s;
  n = mgopt__ti_ints(p, op, "shape", &v);
  if (n < 0) {
    /* shape known only at run time: its length gives the rank */
    int64_t r = (sh.rank == 1 && mgopt__ti_st(sh.dims[0])) ? sh.dims[0].v : -1;
    if (sh.rank == 0) r = 0;
    return mgopt__ti_out(p, op, out, x.dtype, r, d);
  }
  if ((s = mgopt__ti_out(p, op, out, x.dtype, n, d)) != MGOPT_OK) return s;
  copied = (uint8_t *)mgopt_program_alloc(p, (size_t)(x.rank > 0 ? x.rank : 1), 1);
  if (!copied) return mgopt__ti_nomem(d);
  for (k = 0; k < n; k++) {
    if (v[k] == -1) {
      if (infer_at >= 0) return mgopt__ti_fail(d, op, "more than one -1 in 'shape'");
      infer_at = k;
    } else if (v[k] == 0) {
      if (x.rank >= 0 && k >= x.rank) return mgopt__ti_fail(d, op, "'shape' copies dim %lld of a rank-%d input", (long long)k, (int)x.rank);
      if (x.rank >= 0) {
        out->dims[k] = x.dims[k];
        copied[k] = 1;
      } else {
        rem_ok = 0;
      }
    } else if (v[k] < 0) {
      return mgopt__ti_fail(d, op, "negative entry %lld in 'shape'", (long long)v[k]);
    } else {
      out->dims[k] = mgopt_dim_static(v[k]);
      if (!mgopt__mul_i64(rem_out, v[k], &rem_out)) return mgopt__ti_fail(d, op, "'shape' overflows");
    }
  }
  /* element counts of the dims not copied through, on both sides: copied dims cancel out */
  if (x.rank < 0) rem_ok = 0;
  for (k = 0; rem_ok && k < x.rank; k++) {
    if (copied[k]) continue;
    if (!mgopt__ti_st(x.dims[k]) || !mgopt__mul_i64(rem_in, x.dims[k].v, &rem_in)) rem_ok = 0;
  }
  if (infer_at >= 0) {
    if (rem_ok) {
      if (rem_out == 0 || rem_in % rem_out != 0)
        return mgopt__ti_fail(d, op, "cannot reshape %lld elements into 'shape'", (long long)rem_in);
      out->dims[infer_at] = mgopt_dim_static(rem_in / rem_out);
    }
  } else if (rem_ok && rem_in != rem_out) {
    return mgopt__ti_fail(d, op, "element count changes (%lld vs %lld)", (long long)rem_in, (long long)rem_out);
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_transpose(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                   mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *perm = NULL;
  int64_t n, k;
  int32_t ax;
  uint8_t *seen;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  n = mgopt__ti_ints(p, op, "perm", &perm);
  if (n == -1) return mgopt__ti_fail(d, op, "missing 'perm'");
  if (n < 0) return mgopt__ti_out(p, op, out, x.dtype, x.rank, d);
  if (x.rank >= 0 && n != x.rank) return mgopt__ti_fail(d, op, "'perm' has %lld entries for rank %d", (long long)n, (int)x.rank);
  if ((s = mgopt__ti_out(p, op, out, x.dtype, n, d)) != MGOPT_OK) return s;
  seen = (uint8_t *)mgopt_program_alloc(p, (size_t)(n ? n : 1), 1);
  if (!seen) return mgopt__ti_nomem(d);
  for (k = 0; k < n; k++) {
    if (!mgopt__ti_axis(perm[k], n, &ax) || seen[ax]) return mgopt__ti_fail(d, op, "'perm' is not a permutation");
    seen[ax] = 1;
    if (x.rank >= 0) out->dims[k] = x.dims[ax];
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_expand_dims(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                     mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *axes = NULL;
  int64_t n, k, r;
  int32_t ax, j = 0;
  uint8_t *ins;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  n = mgopt__ti_ints(p, op, "axes", &axes);
  if (n == -1) return mgopt__ti_fail(d, op, "missing 'axes'");
  if (n < 0 || x.rank < 0) return mgopt__ti_out(p, op, out, x.dtype, n < 0 ? -1 : (x.rank < 0 ? -1 : x.rank + n), d);
  r = x.rank + n;
  if ((s = mgopt__ti_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  ins = (uint8_t *)mgopt_program_alloc(p, (size_t)(r ? r : 1), 1);
  if (!ins) return mgopt__ti_nomem(d);
  for (k = 0; k < n; k++) {
    if (!mgopt__ti_axis(axes[k], r, &ax) || ins[ax]) return mgopt__ti_fail(d, op, "bad or repeated axis %lld", (long long)axes[k]);
    ins[ax] = 1;
  }
  for (k = 0; k < r; k++) out->dims[k] = ins[k] ? mgopt_dim_static(1) : x.dims[j++];
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_squeeze(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                 mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *axes = NULL;
  int64_t n, k, r = 0;
  int32_t ax, j = 0;
  uint8_t *drop;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  n = mgopt__ti_ints(p, op, "axes", &axes);
  if (x.rank < 0 || n == -2) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  drop = (uint8_t *)mgopt_program_alloc(p, (size_t)(x.rank ? x.rank : 1), 1);
  if (!drop) return mgopt__ti_nomem(d);
  if (n < 0) {
    for (k = 0; k < x.rank; k++) drop[k] = mgopt__ti_st(x.dims[k]) && x.dims[k].v == 1;
  } else {
    for (k = 0; k < n; k++) {
      if (!mgopt__ti_axis(axes[k], x.rank, &ax)) return mgopt__ti_fail(d, op, "axis %lld out of range", (long long)axes[k]);
      if (!mgopt__ti_st(x.dims[ax]) || x.dims[ax].v != 1)
        return mgopt__ti_fail(d, op, "dim %d is not 1", (int)ax);
      drop[ax] = 1;
    }
  }
  for (k = 0; k < x.rank; k++) r += !drop[k];
  if ((s = mgopt__ti_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  for (k = 0; k < x.rank; k++)
    if (!drop[k]) out->dims[j++] = x.dims[k];
  return MGOPT_OK;
}

/* concat and stack: every input has the same rank and (off the axis) the same dims. */
MGOPT__PRIVATE mgopt_status mgopt__infer_join(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                              mgopt_diag *d) {
  const mgopt_use *uses;
  int32_t n = mgopt__ti_list(op, "values", &uses), i, ax, k;
  int is_stack = op->kind == MGOPT_OP_stack;
  int64_t rank = -1, sum = 0;
  int dt = MGOPT_DT_UNKNOWN, sum_ok = 1;
  mgopt_type first;
  mgopt_status s;
  mgopt_dim *acc;
  if (n <= 0) return mgopt__ti_fail(d, op, "no 'values'");
  for (i = 0; i < n; i++) {
    const mgopt_value *v = uses[i].value;
    mgopt_type t;
    if (!v || v->type.kind != MGOPT_TYPE_TENSOR) return mgopt__ti_fail(d, op, "value %d is not a tensor", (int)i);
    t = mgopt__ti_view(&v->type);
    if (mgopt__ti_dt_clash(dt, t.dtype)) return mgopt__ti_fail(d, op, "values have different dtypes");
    if (t.dtype != MGOPT_DT_UNKNOWN) dt = t.dtype;
    if (t.rank >= 0) {
      if (rank >= 0 && t.rank != rank) return mgopt__ti_fail(d, op, "values have different ranks");
      rank = t.rank;
      first = t;
    }
  }
  if (rank < 0) return mgopt__ti_out(p, op, out, dt, -1, d);
  if (!mgopt__ti_axis(mgopt_op_get_int(op, "axis", 0), rank + is_stack, &ax))
    return mgopt__ti_fail(d, op, "axis out of range");
  if (!is_stack && rank == 0) return mgopt__ti_fail(d, op, "cannot concatenate scalars");
  acc = (mgopt_dim *)mgopt_program_alloc(p, sizeof(mgopt_dim) * (size_t)(rank ? rank : 1), 8);
  if (!acc) return mgopt__ti_nomem(d);
  if (rank) memcpy(acc, first.dims, sizeof(mgopt_dim) * (size_t)rank);
  for (i = 0; i < n; i++) {
    mgopt_type t = mgopt__ti_view(&uses[i].value->type);
    if (t.rank < 0) {
      sum_ok = 0;
      continue;
    }
    for (k = 0; k < rank; k++) {
      if (!is_stack && k == ax) {
        if (!mgopt__ti_st(t.dims[k]) || !mgopt__add_i64(sum, t.dims[k].v, &sum)) sum_ok = 0;
      } else if (!mgopt__ti_unify(acc[k], t.dims[k], &acc[k])) {
        return mgopt__ti_fail(d, op, "values differ in dim %d", (int)k);
      }
    }
  }
  if ((s = mgopt__ti_out(p, op, out, dt, rank + is_stack, d)) != MGOPT_OK) return s;
  if (is_stack) {
    for (k = 0; k < rank + 1; k++)
      out->dims[k] = k < ax ? acc[k] : k == ax ? mgopt_dim_static(n) : acc[k - 1];
  } else {
    memcpy(out->dims, acc, sizeof(mgopt_dim) * (size_t)rank);
    out->dims[ax] = sum_ok ? mgopt_dim_static(sum) : mgopt_dim_unknown();
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_split(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                               mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *sizes = NULL;
  int64_t n, sum = 0, ns;
  int32_t ax = 0, i;
  mgopt_dim dim;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (x.rank >= 0 && !mgopt__ti_axis(mgopt_op_get_int(op, "axis", 0), x.rank, &ax))
    return mgopt__ti_fail(d, op, "axis out of range");
  n = mgopt__ti_ints(p, op, "split_sizes", &sizes);
  ns = mgopt_op_get_int(op, "num_splits", op->nouts);
  if (n >= 0 && n != op->nouts) return mgopt__ti_fail(d, op, "%lld split sizes for %d outputs", (long long)n, (int)op->nouts);
  if (n == -1 && ns != op->nouts) return mgopt__ti_fail(d, op, "num_splits %lld for %d outputs", (long long)ns, (int)op->nouts);
  for (i = 0; i < n; i++) {
    if (sizes[i] < 0 || !mgopt__add_i64(sum, sizes[i], &sum)) return mgopt__ti_fail(d, op, "bad split size");
  }
  dim = x.rank >= 0 ? x.dims[ax] : mgopt_dim_unknown();
  if (n >= 0 && mgopt__ti_st(dim) && sum != dim.v)
    return mgopt__ti_fail(d, op, "split sizes add up to %lld, dim is %lld", (long long)sum, (long long)dim.v);
  if (n == -1 && mgopt__ti_st(dim) && dim.v % op->nouts != 0)
    return mgopt__ti_fail(d, op, "dim %lld does not split into %d equal parts", (long long)dim.v, (int)op->nouts);
  for (i = 0; i < op->nouts; i++) {
    if ((s = mgopt__ti_like(p, op, &out[i], &x, x.dtype, d)) != MGOPT_OK) return s;
    if (x.rank < 0) continue;
    if (n >= 0) out[i].dims[ax] = mgopt_dim_static(sizes[i]);
    else if (n == -2) out[i].dims[ax] = mgopt_dim_unknown();
    else if (mgopt__ti_st(dim)) out[i].dims[ax] = mgopt_dim_static(dim.v / op->nouts);
    else if (op->nouts != 1) out[i].dims[ax] = mgopt_dim_unknown();
  }
  return MGOPT_OK;
}

/* Length of x[b:e:st] along a dim of static size n, with begin/end masks. */
static int64_t mgopt__ti_slice_len(int64_t n, int64_t b, int64_t e, int64_t st, int bm, int em) {
  if (st > 0) {
    b = bm ? 0 : b;
    e = em ? n : e;
    if (b < 0) b += n;
    if (e < 0) e += n;
    b = b < 0 ? 0 : b > n ? n : b;
    e = e < 0 ? 0 : e > n ? n : e;
    return e > b ? (e - b - 1) / st + 1 : 0;
  } else {
    int64_t as = st == INT64_MIN ? INT64_MAX : -st;
    b = bm ? n - 1 : b;
    if (!bm && b < 0) b += n;
    if (!em && e < 0) e += n;
    if (em) e = -1;
    b = b < -1 ? -1 : b > n - 1 ? n - 1 : b;
    e = e < -1 ? -1 : e > n - 1 ? n - 1 : e;
    return b > e ? (b - e - 1) / as + 1 : 0;
  }
}

static int mgopt__ti_flag(const int64_t *m, int64_t n, int64_t i) { return m && i < n && m[i] != 0; }

MGOPT__PRIVATE mgopt_status mgopt__infer_slice_by_index(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                        mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *bv = NULL, *ev = NULL, *sv = NULL, *bm = NULL, *em = NULL, *sm = NULL;
  int64_t nb, ne, ns, nbm, nem, nsm, rank, k, r = 0;
  int32_t j = 0;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (!mgopt_op_operand(op, "begin") || !mgopt_op_operand(op, "end"))
    return mgopt__ti_fail(d, op, "missing 'begin' or 'end'");
  nb = mgopt__ti_ints(p, op, "begin", &bv);
  ne = mgopt__ti_ints(p, op, "end", &ev);
  ns = mgopt__ti_ints(p, op, "stride", &sv);
  nbm = mgopt__ti_ints(p, op, "begin_mask", &bm);
  nem = mgopt__ti_ints(p, op, "end_mask", &em);
  nsm = mgopt__ti_ints(p, op, "squeeze_mask", &sm);
  rank = x.rank >= 0 ? x.rank : nb >= 0 ? nb : ne;
  if (rank < 0) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  if ((nb >= 0 && nb != rank) || (ne >= 0 && ne != rank) || (ns >= 0 && ns != rank))
    return mgopt__ti_fail(d, op, "begin/end/stride lengths do not match rank %lld", (long long)rank);
  if (nsm == -2) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  for (k = 0; k < rank; k++) r += !mgopt__ti_flag(sm, nsm, k);
  if ((s = mgopt__ti_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  for (k = 0; k < rank; k++) {
    mgopt_dim dim = x.rank >= 0 ? x.dims[k] : mgopt_dim_unknown(), o = mgopt_dim_unknown();
    int b_mask = mgopt__ti_flag(bm, nbm, k), e_mask = mgopt__ti_flag(em, nem, k);
    int known = (b_mask || nb >= 0) && (e_mask || ne >= 0) && ns != -2;
    int64_t st = ns >= 0 ? sv[k] : 1;
    if (ns >= 0 && st == 0) return mgopt__ti_fail(d, op, "stride 0 in dim %lld", (long long)k);
    if (nbm == -2 || nem == -2) known = 0;
    if (mgopt__ti_flag(sm, nsm, k)) continue;
    if (known && b_mask && e_mask && st == 1) o = dim;
    else if (known && mgopt__ti_st(dim))
      o = mgopt_dim_static(mgopt__ti_slice_len(dim.v, b_mask ? 0 : bv[k], e_mask ? 0 : ev[k], st, b_mask, e_mask));
    out->dims[j++] = o;
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_slice_by_size(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                       mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *bv = NULL, *zv = NULL;
  int64_t nb, nz, rank, k;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (!mgopt_op_operand(op, "begin") || !mgopt_op_operand(op, "size"))
    return mgopt__ti_fail(d, op, "missing 'begin' or 'size'");
  nb = mgopt__ti_ints(p, op, "begin", &bv);
  nz = mgopt__ti_ints(p, op, "size", &zv);
  rank = x.rank >= 0 ? x.rank : nb >= 0 ? nb : nz;
  if (rank < 0) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  if ((nb >= 0 && nb != rank) || (nz >= 0 && nz != rank))
    return mgopt__ti_fail(d, op, "begin/size lengths do not match rank %lld", (long long)rank);
  if ((s = mgopt__ti_out(p, op, out, x.dtype, rank, d)) != MGOPT_OK) return s;
  for (k = 0; k < rank; k++) {
    mgopt_dim dim = x.rank >= 0 ? x.dims[k] : mgopt_dim_unknown();
    int64_t b = nb >= 0 ? bv[k] : -1, z = nz >= 0 ? zv[k] : -2;
    if (z < -1) {
      if (nz >= 0) return mgopt__ti_fail(d, op, "bad size %lld", (long long)z);
      continue;
    }
    if (mgopt__ti_st(dim) && nb >= 0) {
      if (b < 0) b += dim.v;
      if (b < 0 || b > dim.v) return mgopt__ti_fail(d, op, "begin %lld out of range in dim %lld", (long long)bv[k], (long long)k);
      if (z == -1) z = dim.v - b;
      if (z > dim.v - b) return mgopt__ti_fail(d, op, "slice past the end of dim %lld", (long long)k);
      out->dims[k] = mgopt_dim_static(z);
    } else if (z >= 0) {
      out->dims[k] = mgopt_dim_static(z);
    } else if (nb >= 0 && b == 0) {
      out->dims[k] = dim;
    }
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_gather(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                mgopt_diag *d) {
  mgopt_type x, ix;
  mgopt_status s;
  int32_t ax, j = 0;
  int64_t bd, k;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "indices", &ix, d)) != MGOPT_OK) return s;
  if (ix.dtype != MGOPT_DT_UNKNOWN && !mgopt_dtype_is_int((mgopt_dtype)ix.dtype))
    return mgopt__ti_fail(d, op, "indices are %s, not integers", mgopt_dtype_name((mgopt_dtype)ix.dtype));
  if (x.rank < 0 || ix.rank < 0) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  if (!mgopt__ti_axis(mgopt_op_get_int(op, "axis", 0), x.rank, &ax)) return mgopt__ti_fail(d, op, "axis out of range");
  bd = mgopt_op_get_int(op, "batch_dims", 0);
  if (bd < 0) bd += ix.rank;
  if (bd < 0 || bd > ix.rank || bd > ax) return mgopt__ti_fail(d, op, "bad batch_dims");
  if ((s = mgopt__ti_out(p, op, out, x.dtype, (int64_t)x.rank - 1 + ix.rank - bd, d)) != MGOPT_OK) return s;
  for (k = 0; k < ax; k++) out->dims[j++] = x.dims[k];
  for (k = bd; k < ix.rank; k++) out->dims[j++] = ix.dims[k];
  for (k = ax + 1; k < x.rank; k++) out->dims[j++] = x.dims[k];
  return MGOPT_OK;
}

/* gather_along_axis: indices' shape with x's dtype; x and indices have one rank
   and the same dims off the axis (MIL's rule: ONNX's smaller ones stay opaque). */
MGOPT__PRIVATE mgopt_status mgopt__infer_gather_axis(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                     mgopt_diag *d) {
  mgopt_type x, ix;
  mgopt_status s;
  int32_t ax, k;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "indices", &ix, d)) != MGOPT_OK) return s;
  if (ix.dtype != MGOPT_DT_UNKNOWN && !mgopt_dtype_is_int((mgopt_dtype)ix.dtype))
    return mgopt__ti_fail(d, op, "indices are %s, not integers", mgopt_dtype_name((mgopt_dtype)ix.dtype));
  if (x.rank < 0 || ix.rank < 0) return mgopt__ti_like(p, op, out, &ix, x.dtype, d);
  if (x.rank != ix.rank) return mgopt__ti_fail(d, op, "x has rank %d, indices rank %d", (int)x.rank, (int)ix.rank);
  if (!mgopt__ti_axis(mgopt_op_get_int(op, "axis", 0), x.rank, &ax)) return mgopt__ti_fail(d, op, "axis out of range");
  if ((s = mgopt__ti_like(p, op, out, &ix, x.dtype, d)) != MGOPT_OK) return s;
  for (k = 0; k < x.rank; k++)
    if (k != ax && !mgopt__ti_unify(x.dims[k], ix.dims[k], &out->dims[k]))
      return mgopt__ti_fail(d, op, "x and indices differ in dim %d", (int)k);
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_one_hot(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                 mgopt_diag *d) {
  mgopt_type ix;
  mgopt_status s;
  int32_t ax, k, j = 0;
  int64_t depth = mgopt_op_get_int(op, "one_hot_vector_size", -1);
  if ((s = mgopt__ti_in(op, "indices", &ix, d)) != MGOPT_OK) return s;
  if (ix.rank < 0) return mgopt__ti_out(p, op, out, MGOPT_DT_FP32, -1, d);
  if (!mgopt__ti_axis(mgopt_op_get_int(op, "axis", -1), (int64_t)ix.rank + 1, &ax))
    return mgopt__ti_fail(d, op, "axis out of range");
  if ((s = mgopt__ti_out(p, op, out, MGOPT_DT_FP32, (int64_t)ix.rank + 1, d)) != MGOPT_OK) return s;
  for (k = 0; k <= ix.rank; k++)
    out->dims[k] = k == ax ? (depth >= 0 ? mgopt_dim_static(depth) : mgopt_dim_unknown()) : ix.dims[j++];
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_pad(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                             mgopt_diag *d) {
  mgopt_type x, pt;
  mgopt_status s;
  const int64_t *pv = NULL;
  int64_t n, k, first;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "pad", &pt, d)) != MGOPT_OK) return s;
  if (!mgopt__ti_enum_ok(op, "mode", "constant|reflect|replicate")) return mgopt__ti_fail(d, op, "unknown mode");
  n = mgopt__ti_ints(p, op, "pad", &pv);
  if ((s = mgopt__ti_like(p, op, out, &x, x.dtype, d)) != MGOPT_OK || x.rank < 0) return s;
  if (n < 0) {
    /* values known at run time only: the last len/2 dims (all when len is unknown) change */
    int64_t len = (pt.rank == 1 && mgopt__ti_st(pt.dims[0])) ? pt.dims[0].v : 2 * (int64_t)x.rank;
    if (len % 2 || len / 2 > x.rank) return mgopt__ti_fail(d, op, "'pad' has %lld entries for rank %d", (long long)len, (int)x.rank);
    for (k = x.rank - len / 2; k < x.rank; k++) out->dims[k] = mgopt_dim_unknown();
    return MGOPT_OK;
  }
  if (n % 2 || n / 2 > x.rank) return mgopt__ti_fail(d, op, "'pad' has %lld entries for rank %d", (long long)n, (int)x.rank);
  first = x.rank - n / 2;
  for (k = first; k < x.rank; k++) {
    int64_t b = pv[2 * (k - first)], e = pv[2 * (k - first) + 1], v;
    if (b == 0 && e == 0) continue;
    if (!mgopt__ti_st(x.dims[k])) {
      out->dims[k] = mgopt_dim_unknown();
      continue;
    }
    if (!mgopt__add_i64(x.dims[k].v, b, &v) || !mgopt__add_i64(v, e, &v) || v < 0)
      return mgopt__ti_fail(d, op, "bad padding for dim %lld", (long long)k);
    out->dims[k] = mgopt_dim_static(v);
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_tile(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                              mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *rv = NULL;
  int64_t n, k, v;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (!mgopt_op_operand(op, "reps")) return mgopt__ti_fail(d, op, "missing operand 'reps'");
  n = mgopt__ti_ints(p, op, "reps", &rv);
  if (n < 0) return mgopt__ti_out(p, op, out, x.dtype, x.rank, d);
  if (x.rank >= 0 && n != x.rank) return mgopt__ti_fail(d, op, "'reps' has %lld entries for rank %d", (long long)n, (int)x.rank);
  if ((s = mgopt__ti_out(p, op, out, x.dtype, n, d)) != MGOPT_OK) return s;
  for (k = 0; k < n; k++) {
    if (rv[k] < 0) return mgopt__ti_fail(d, op, "negative repetition");
    if (x.rank < 0) continue;
    if (rv[k] == 1) out->dims[k] = x.dims[k];
    else if (rv[k] == 0) out->dims[k] = mgopt_dim_static(0);
    else if (mgopt__ti_st(x.dims[k])) {
      if (!mgopt__mul_i64(x.dims[k].v, rv[k], &v)) return mgopt__ti_fail(d, op, "dim overflows");
      out->dims[k] = mgopt_dim_static(v);
    }
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_pixel_shuffle(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                       mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  int64_t f = mgopt_op_get_int(op, "upscale_factor", -1), ff, k, v;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (f < 1 || !mgopt__mul_i64(f, f, &ff)) return mgopt__ti_fail(d, op, "bad upscale_factor %lld", (long long)f);
  if (x.rank >= 0 && x.rank != 4) return mgopt__ti_fail(d, op, "expects rank 4, got %d", (int)x.rank);
  if ((s = mgopt__ti_out(p, op, out, x.dtype, 4, d)) != MGOPT_OK) return s;
  if (x.rank < 0) return MGOPT_OK;
  out->dims[0] = x.dims[0];
  if (mgopt__ti_st(x.dims[1])) {
    if (x.dims[1].v % ff) return mgopt__ti_fail(d, op, "%lld channels do not divide by %lld", (long long)x.dims[1].v, (long long)ff);
    out->dims[1] = mgopt_dim_static(x.dims[1].v / ff);
  } else if (f == 1) {
    out->dims[1] = x.dims[1];
  }
  for (k = 2; k < 4; k++) {
    if (f == 1) out->dims[k] = x.dims[k];
    else if (mgopt__ti_st(x.dims[k])) {
      if (!mgopt__mul_i64(x.dims[k].v, f, &v)) return mgopt__ti_fail(d, op, "dim overflows");
      out->dims[k] = mgopt_dim_static(v);
    }
  }
  return MGOPT_OK;
}

/* space_to_batch and batch_to_space: x [n, C, spatial...] with 1 or 2 spatial dims; block_shape (one
   entry >= 1 per spatial dim) and paddings or crops (begin, end per spatial dim, >= 0), flattened. */
static mgopt_status mgopt__ti_s2b(mgopt_program *p, const mgopt_op *op, mgopt_type *out, mgopt_diag *d, int to_batch) {
  mgopt_type x;
  mgopt_status s;
  const char *pname = to_batch ? "paddings" : "crops";
  const int64_t *bs = NULL, *pd = NULL;
  int64_t nb = mgopt__ti_ints(p, op, "block_shape", &bs), np = mgopt__ti_ints(p, op, pname, &pd), k, prod = 1, v;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (nb < 1 || nb > 2) return mgopt__ti_fail(d, op, "'block_shape' must have 1 or 2 constant entries");
  if (np != 2 * nb) return mgopt__ti_fail(d, op, "'%s' must have %lld constant entries", pname, (long long)(2 * nb));
  for (k = 0; k < nb; k++)
    if (bs[k] < 1 || !mgopt__mul_i64(prod, bs[k], &prod)) return mgopt__ti_fail(d, op, "bad 'block_shape'");
  for (k = 0; k < np; k++)
    if (pd[k] < 0) return mgopt__ti_fail(d, op, "negative '%s'", pname);
  if (x.rank >= 0 && x.rank != nb + 2)
    return mgopt__ti_fail(d, op, "expects rank %lld, got %d", (long long)(nb + 2), (int)x.rank);
  if ((s = mgopt__ti_out(p, op, out, x.dtype, nb + 2, d)) != MGOPT_OK) return s;
  if (x.rank < 0) return MGOPT_OK;
  out->dims[1] = x.dims[1];
  if (mgopt__ti_st(x.dims[0])) {
    if (to_batch) {
      if (!mgopt__mul_i64(x.dims[0].v, prod, &v)) return mgopt__ti_fail(d, op, "dim overflows");
    } else {
      if (x.dims[0].v % prod) return mgopt__ti_fail(d, op, "batch %lld does not divide by %lld", (long long)x.dims[0].v, (long long)prod);
      v = x.dims[0].v / prod;
    }
    out->dims[0] = mgopt_dim_static(v);
  } else if (prod == 1) {
    out->dims[0] = x.dims[0];
  }
  for (k = 0; k < nb; k++) {
    mgopt_dim in = x.dims[2 + k];
    if (!mgopt__ti_st(in)) continue;
    if (to_batch) {
      if (!mgopt__add_i64(in.v, pd[2 * k], &v) || !mgopt__add_i64(v, pd[2 * k + 1], &v))
        return mgopt__ti_fail(d, op, "dim overflows");
      if (v % bs[k]) return mgopt__ti_fail(d, op, "padded dim %lld does not divide by %lld", (long long)v, (long long)bs[k]);
      v /= bs[k];
    } else {
      if (!mgopt__mul_i64(in.v, bs[k], &v)) return mgopt__ti_fail(d, op, "dim overflows");
      v -= pd[2 * k]; /* crops are >= 0 and v >= 0: no overflow */
      if (v >= 0) v -= pd[2 * k + 1];
      if (v < 0) return mgopt__ti_fail(d, op, "crops larger than the dim");
    }
    out->dims[2 + k] = mgopt_dim_static(v);
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_space_to_batch(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                        mgopt_diag *d) {
  return mgopt__ti_s2b(p, op, out, d, 1);
}

MGOPT__PRIVATE mgopt_status mgopt__infer_batch_to_space(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                        mgopt_diag *d) {
  return mgopt__ti_s2b(p, op, out, d, 0);
}
/* src/core/infer/reduce.c — type inference of ops that combine elements: reduce_*, reduce_argmax, reduce_argmin, cumsum, softmax, matmul, linear. */

MGOPT__PRIVATE mgopt_status mgopt__infer_reduce(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *axes = NULL;
  int64_t n, k, r = 0;
  int32_t ax, j = 0;
  int keep = mgopt_op_get_bool(op, "keep_dims", 0);
  uint8_t *red;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  n = mgopt__ti_ints(p, op, "axes", &axes);
  if (x.rank < 0) return mgopt__ti_out(p, op, out, x.dtype, (!keep && n == -1) ? 0 : -1, d);
  if (n == -2) {
    if (!keep) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
    if ((s = mgopt__ti_out(p, op, out, x.dtype, x.rank, d)) != MGOPT_OK) return s;
    for (k = 0; k < x.rank; k++)
      if (mgopt__ti_st(x.dims[k]) && x.dims[k].v == 1) out->dims[k] = x.dims[k];
    return MGOPT_OK;
  }
  red = (uint8_t *)mgopt_program_alloc(p, (size_t)(x.rank ? x.rank : 1), 1);
  if (!red) return mgopt__ti_nomem(d);
  for (k = 0; k < x.rank; k++) red[k] = n == -1;
  for (k = 0; k < n; k++) {
    if (!mgopt__ti_axis(axes[k], x.rank, &ax)) return mgopt__ti_fail(d, op, "axis %lld out of range", (long long)axes[k]);
    red[ax] = 1;
  }
  for (k = 0; k < x.rank; k++) r += keep || !red[k];
  if ((s = mgopt__ti_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  for (k = 0; k < x.rank; k++) {
    if (!red[k]) out->dims[j++] = x.dims[k];
    else if (keep) out->dims[j++] = mgopt_dim_static(1);
  }
  return MGOPT_OK;
}

/* reduce_argmax, reduce_argmin: one axis removed (or kept as 1); the index dtype is
   output_dtype: MIL's int32 or uint16, or int64 (ONNX's ArgMax/ArgMin). */
MGOPT__PRIVATE mgopt_status mgopt__infer_reduce_arg(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                    mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  int32_t ax, k, j = 0;
  int keep = mgopt_op_get_bool(op, "keep_dims", 0), dt;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (!mgopt__ti_enum_ok(op, "output_dtype", "int32|uint16|int64"))
    return mgopt__ti_fail(d, op, "output_dtype is not int32, uint16 or int64");
  dt = mgopt__ti_dtype_param(op, "output_dtype");
  if (dt == MGOPT_DT_UNKNOWN) dt = MGOPT_DT_INT32;
  if (x.dtype == MGOPT_DT_BOOL || x.dtype == MGOPT_DT_STRING)
    return mgopt__ti_fail(d, op, "x is %s, not a number", mgopt_dtype_name((mgopt_dtype)x.dtype));
  if (x.rank < 0) return mgopt__ti_out(p, op, out, dt, -1, d);
  if (!mgopt__ti_axis(mgopt_op_get_int(op, "axis", -1), x.rank, &ax))
    return mgopt__ti_fail(d, op, "axis out of range for rank %d", (int)x.rank);
  if ((s = mgopt__ti_out(p, op, out, dt, keep ? x.rank : x.rank - 1, d)) != MGOPT_OK) return s;
  for (k = 0; k < x.rank; k++) {
    if (k != ax) out->dims[j++] = x.dims[k];
    else if (keep) out->dims[j++] = mgopt_dim_static(1);
  }
  return MGOPT_OK;
}

/* cumsum: x's type; the axis must lie in x's rank. */
MGOPT__PRIVATE mgopt_status mgopt__infer_cumsum(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  int32_t ax;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (x.dtype == MGOPT_DT_BOOL || x.dtype == MGOPT_DT_STRING)
    return mgopt__ti_fail(d, op, "x is %s, not a number", mgopt_dtype_name((mgopt_dtype)x.dtype));
  if (x.rank >= 0 && !mgopt__ti_axis(mgopt_op_get_int(op, "axis", 0), x.rank, &ax))
    return mgopt__ti_fail(d, op, "axis out of range for rank %d", (int)x.rank);
  return mgopt__ti_like(p, op, out, &x, x.dtype, d);
}

MGOPT__PRIVATE mgopt_status mgopt__infer_softmax(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                 mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  int32_t ax;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (x.rank >= 0 && !mgopt__ti_axis(mgopt_op_get_int(op, "axis", -1), x.rank, &ax))
    return mgopt__ti_fail(d, op, "axis out of range for rank %d", (int)x.rank);
  return mgopt__ti_like(p, op, out, &x, x.dtype, d);
}

MGOPT__PRIVATE mgopt_status mgopt__infer_matmul(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                mgopt_diag *d) {
  mgopt_type x, y, bt[2];
  mgopt_status s;
  mgopt_dim m = mgopt_dim_unknown(), kx, ky, n = mgopt_dim_unknown(), kk;
  mgopt_type batch;
  int64_t r, k;
  int j = 0;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "y", &y, d)) != MGOPT_OK) return s;
  if (mgopt__ti_dt_clash(x.dtype, y.dtype)) return mgopt__ti_fail(d, op, "operand dtypes differ");
  if (x.rank < 0 || y.rank < 0) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  if (x.rank == 0 || y.rank == 0) return mgopt__ti_fail(d, op, "scalar operand");
  if (x.rank == 1) {
    kx = x.dims[0];
  } else {
    int t = mgopt_op_get_bool(op, "transpose_x", 0);
    m = x.dims[x.rank - 2 + t];
    kx = x.dims[x.rank - 1 - t];
  }
  if (y.rank == 1) {
    ky = y.dims[0];
  } else {
    int t = mgopt_op_get_bool(op, "transpose_y", 0);
    ky = y.dims[y.rank - 2 + t];
    n = y.dims[y.rank - 1 - t];
  }
  if (!mgopt__ti_unify(kx, ky, &kk))
    return mgopt__ti_fail(d, op, "inner dims differ (%lld vs %lld)", (long long)kx.v, (long long)ky.v);
  /* batch dims broadcast */
  bt[0] = x;
  bt[0].rank = x.rank > 2 ? x.rank - 2 : 0;
  bt[1] = y;
  bt[1].rank = y.rank > 2 ? y.rank - 2 : 0;
  if ((s = mgopt__ti_broadcast(p, op, &batch, bt, 2, x.dtype, d)) != MGOPT_OK) return s;
  r = batch.rank + (x.rank > 1) + (y.rank > 1);
  if ((s = mgopt__ti_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  for (k = 0; k < batch.rank; k++) out->dims[j++] = batch.dims[k];
  if (x.rank > 1) out->dims[j++] = m;
  if (y.rank > 1) out->dims[j++] = n;
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_linear(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                mgopt_diag *d) {
  mgopt_type x, w, b;
  mgopt_status s;
  mgopt_dim od = mgopt_dim_unknown(), tmp;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "weight", &w, d)) != MGOPT_OK) return s;
  if (w.rank >= 0 && w.rank != 2) return mgopt__ti_fail(d, op, "weight has rank %d, not 2", (int)w.rank);
  if (x.rank == 0) return mgopt__ti_fail(d, op, "scalar input");
  if (w.rank == 2) {
    od = w.dims[0];
    if (x.rank > 0 && !mgopt__ti_unify(x.dims[x.rank - 1], w.dims[1], &tmp))
      return mgopt__ti_fail(d, op, "input has %lld features, weight expects %lld", (long long)x.dims[x.rank - 1].v,
                            (long long)w.dims[1].v);
  }
  if (mgopt__ti_opt(op, "bias", &b) && b.rank == 1 && !mgopt__ti_unify(od, b.dims[0], &od))
    return mgopt__ti_fail(d, op, "bias length differs from the output features");
  if ((s = mgopt__ti_like(p, op, out, &x, x.dtype, d)) != MGOPT_OK) return s;
  if (x.rank > 0) out->dims[x.rank - 1] = od;
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- einsum */

/* One operand's term of eq[*i..) up to ',' or '-' or the end: labels into lab (the ellipsis as
   255), its count in *n. 0 on a bad character, a second ellipsis or too many labels. */
static int mgopt__einsum_term(const char *eq, size_t len, size_t *i, uint8_t *lab, int32_t *n, int *ell) {
  *n = 0;
  *ell = 0;
  while (*i < len && eq[*i] != ',' && eq[*i] != '-') {
    char c = eq[*i];
    if (c == ' ') {
      (*i)++;
      continue;
    }
    if (*n >= MGOPT_MAX_RANK) return 0;
    if (c == '.') {
      if (*ell || *i + 2 >= len + 0 || eq[*i + 1] != '.' || eq[*i + 2] != '.') return 0;
      *ell = 1;
      lab[(*n)++] = 255;
      *i += 3;
      continue;
    }
    if (c >= 'a' && c <= 'z') lab[(*n)++] = (uint8_t)(c - 'a');
    else if (c >= 'A' && c <= 'Z') lab[(*n)++] = (uint8_t)(26 + c - 'A');
    else return 0;
    (*i)++;
  }
  return 1;
}

/* Expands a term's ellipsis (at most one) over `er` dims of the `ell` the equation has. */
static int mgopt__einsum_expand(const uint8_t *t, int32_t n, int32_t rank, int32_t ell, uint8_t *out, int32_t *nout) {
  int32_t k, j, m = 0, er = -1;
  for (k = 0; k < n; k++)
    if (t[k] == 255) er = rank - (n - 1);
  if (er < 0 && n != rank) return 0;
  if (er > ell) return 0;
  for (k = 0; k < n; k++) {
    if (t[k] != 255) {
      out[m++] = t[k];
      continue;
    }
    for (j = 0; j < er; j++) out[m++] = (uint8_t)(52 + ell - er + j);
  }
  *nout = m;
  return m <= MGOPT_MAX_RANK;
}

MGOPT__PRIVATE int mgopt__einsum_parse(const char *eq, size_t len, int32_t nops, const int32_t *ranks, mgopt__einsum *e) {
  uint8_t terms[MGOPT__EINSUM_MAX_OPS][MGOPT_MAX_RANK], ot[MGOPT_MAX_RANK];
  int32_t nt[MGOPT__EINSUM_MAX_OPS], k, j, ell = 0, no = 0, count[MGOPT__EINSUM_LABELS];
  int has_ell[MGOPT__EINSUM_MAX_OPS], oell = 0, arrow = 0;
  size_t i = 0;
  if (!eq || nops < 1 || nops > MGOPT__EINSUM_MAX_OPS) return 0;
  memset(e, 0, sizeof *e);
  e->nops = nops;
  for (k = 0; k < nops; k++) {
    if (ranks[k] < 0 || ranks[k] > MGOPT_MAX_RANK) return 0;
    if (!mgopt__einsum_term(eq, len, &i, terms[k], &nt[k], &has_ell[k])) return 0;
    if (k + 1 < nops) {
      if (i >= len || eq[i] != ',') return 0;
      i++;
    }
    if (has_ell[k]) {
      int32_t er = ranks[k] - (nt[k] - 1);
      if (er < 0) return 0;
      if (er > ell) ell = er;
    }
  }
  if (i < len) {
    if (eq[i] != '-' || i + 1 >= len || eq[i + 1] != '>') return 0;
    i += 2;
    arrow = 1;
    if (!mgopt__einsum_term(eq, len, &i, ot, &no, &oell) || i != len) return 0;
  }
  if (ell > MGOPT_MAX_RANK) return 0;
  memset(count, 0, sizeof count);
  for (k = 0; k < nops; k++) {
    if (!mgopt__einsum_expand(terms[k], nt[k], ranks[k], ell, e->lab[k], &e->rank[k]) || e->rank[k] != ranks[k]) return 0;
    for (j = 0; j < e->rank[k]; j++) count[e->lab[k][j]]++;
  }
  if (arrow) {
    int seen[MGOPT__EINSUM_LABELS];
    int32_t on = 0;
    memset(seen, 0, sizeof seen);
    for (j = 0; j < no; j++) {
      if (ot[j] == 255) {
        for (k = 0; k < ell; k++) {
          if (on >= MGOPT_MAX_RANK) return 0;
          e->out[on++] = (uint8_t)(52 + k);
        }
        continue;
      }
      if (!count[ot[j]] || seen[ot[j]]++ || on >= MGOPT_MAX_RANK) return 0;
      e->out[on++] = ot[j];
    }
    if (!oell)
      for (k = 0; k < ell; k++)
        if (count[52 + k]) return 0; /* broadcast dims left out of an explicit output */
    e->out_rank = on;
  } else {
    int32_t on = 0;
    for (k = 0; k < ell; k++) e->out[on++] = (uint8_t)(52 + k);
    for (j = 0; j < 52; j++)
      if (count[j] == 1) {
        if (on >= MGOPT_MAX_RANK) return 0;
        e->out[on++] = (uint8_t)j;
      }
    e->out_rank = on;
  }
  return 1;
}

/* einsum: values (1 to 8 operands, one dtype), equation. A label's size is the
   same in every operand; a dim an ellipsis stands for broadcasts from 1. */
MGOPT__PRIVATE mgopt_status mgopt__infer_einsum(mgopt_program *p, const mgopt_op *op, mgopt_type *out, mgopt_diag *d) {
  mgopt_type ts[MGOPT__EINSUM_MAX_OPS];
  int32_t ranks[MGOPT__EINSUM_MAX_OPS], k, j, n = 0, dt = MGOPT_DT_UNKNOWN;
  mgopt_dim size[MGOPT__EINSUM_LABELS];
  int known[MGOPT__EINSUM_LABELS];
  mgopt__einsum e;
  size_t len = 0;
  const char *eq = mgopt_op_get_string(op, "equation", &len);
  mgopt_status s;
  const mgopt_use *uses;
  int32_t nv = mgopt__ti_list(op, "values", &uses);
  if (nv > MGOPT__EINSUM_MAX_OPS) return mgopt__ti_fail(d, op, "more than %d operands", MGOPT__EINSUM_MAX_OPS);
  for (k = 0; k < nv; k++) {
    const mgopt_value *v = uses[k].value;
    if (!v || v->type.kind != MGOPT_TYPE_TENSOR) return mgopt__ti_fail(d, op, "an operand is not a tensor");
    ts[n] = mgopt__ti_view(&v->type);
    if (dt == MGOPT_DT_UNKNOWN) dt = ts[n].dtype;
    else if (ts[n].dtype != MGOPT_DT_UNKNOWN && ts[n].dtype != dt) return mgopt__ti_fail(d, op, "operands of different dtypes");
    ranks[n] = ts[n].rank;
    n++;
  }
  if (n == 0) return mgopt__ti_fail(d, op, "no operands");
  for (k = 0; k < n; k++)
    if (ranks[k] < 0) return mgopt__ti_out(p, op, out, dt, -1, d);
  if (!eq || !mgopt__einsum_parse(eq, len, n, ranks, &e)) return mgopt__ti_fail(d, op, "bad equation for these operands");
  for (j = 0; j < MGOPT__EINSUM_LABELS; j++) {
    size[j] = mgopt_dim_static(1);
    known[j] = 0;
  }
  for (k = 0; k < n; k++)
    for (j = 0; j < e.rank[k]; j++) {
      int l = e.lab[k][j];
      mgopt_dim dd = ts[k].dims[j];
      if (l >= 52 && mgopt__ti_st(dd) && dd.v == 1) continue; /* broadcasts */
      if (!known[l]) {
        size[l] = dd;
        known[l] = 1;
      } else if (mgopt__ti_st(dd) && mgopt__ti_st(size[l])) {
        if (dd.v != size[l].v) return mgopt__ti_fail(d, op, "label %d has sizes %lld and %lld", l, (long long)size[l].v, (long long)dd.v);
      } else if (!mgopt__ti_st(size[l]) && mgopt__ti_st(dd)) {
        size[l] = dd;
      }
    }
  if ((s = mgopt__ti_out(p, op, out, dt, e.out_rank, d)) != MGOPT_OK) return s;
  for (j = 0; j < e.out_rank; j++) out->dims[j] = size[e.out[j]];
  return MGOPT_OK;
}
/* src/core/infer/window.c — type inference of sliding-window ops: conv, conv_transpose, avg_pool, max_pool. */

enum { MGOPT__TI_VALID, MGOPT__TI_SAME, MGOPT__TI_SAME_LOWER, MGOPT__TI_CUSTOM };

static int mgopt__ti_pad_type(const mgopt_op *op) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(op, "pad_type", &n);
  if (!s) return MGOPT__TI_VALID;
  if (n == 5 && memcmp(s, "valid", 5) == 0) return MGOPT__TI_VALID;
  if (n == 4 && memcmp(s, "same", 4) == 0) return MGOPT__TI_SAME;
  if (n == 10 && memcmp(s, "same_lower", 10) == 0) return MGOPT__TI_SAME_LOWER;
  if (n == 6 && memcmp(s, "custom", 6) == 0) return MGOPT__TI_CUSTOM;
  return -1;
}

/* Output size of a sliding window over `in` (kernel k, stride st, dilation dl,
   pads pb/pe used only by custom). k < 0: kernel unknown. 0 when it does not fit. */
static int mgopt__ti_window(mgopt_dim in, int64_t k, int64_t st, int64_t dl, int64_t pb, int64_t pe, int pt,
                            int ceil_mode, mgopt_dim *o) {
  int64_t eff, num, v;
  *o = mgopt_dim_unknown();
  if (pt == MGOPT__TI_SAME || pt == MGOPT__TI_SAME_LOWER) {
    if (st == 1) *o = in;
    else if (mgopt__ti_st(in)) *o = mgopt_dim_static(in.v / st + (in.v % st != 0));
    return 1;
  }
  if (pt != MGOPT__TI_CUSTOM) pb = pe = 0;
  if (k < 0 || !mgopt__ti_st(in)) return 1;
  if (!mgopt__mul_i64(dl, k - 1, &eff) || !mgopt__add_i64(in.v, pb, &num) || !mgopt__add_i64(num, pe, &num) ||
      num - 1 < eff)
    return 0;
  num -= eff + 1;
  v = num / st + 1;
  if (ceil_mode && num % st != 0) {
    v++;
    /* the last window must start inside the input or its leading padding */
    if ((v - 1) >= (in.v + pb - 1) / st + 1) v--;
  }
  *o = mgopt_dim_static(v);
  return 1;
}

/* One INTS window parameter of `want` entries, each >= lo; *v = dflt when absent. */
static mgopt_status mgopt__ti_wparam(mgopt_program *p, const mgopt_op *op, const char *name, int64_t want,
                                     int64_t lo, const int64_t *dflt, const int64_t **v, mgopt_diag *d) {
  int64_t n = mgopt__ti_ints(p, op, name, v), k;
  if (n == -2) return mgopt__ti_fail(d, op, "'%s' is not constant", name);
  if (n == -1) {
    *v = dflt;
    return MGOPT_OK;
  }
  if (n != want) return mgopt__ti_fail(d, op, "'%s' has %lld entries, expected %lld", name, (long long)n, (long long)want);
  for (k = 0; k < n; k++)
    if ((*v)[k] < lo) return mgopt__ti_fail(d, op, "bad '%s' entry %lld", name, (long long)(*v)[k]);
  return MGOPT_OK;
}

/* Reads pad_type, strides and dilations (sp entries, default 1) and pad (2*sp, default 0). */
static mgopt_status mgopt__ti_window_params(mgopt_program *p, const mgopt_op *op, int64_t sp, const int64_t **st,
                                            const int64_t **dl, const int64_t **pd, int *pt, mgopt_diag *d) {
  int64_t *ones = (int64_t *)mgopt_program_alloc(p, sizeof(int64_t) * (size_t)(sp + 1), 8), k;
  int64_t *zeros = (int64_t *)mgopt_program_alloc(p, sizeof(int64_t) * (size_t)(2 * sp + 1), 8);
  mgopt_status s;
  if (!ones || !zeros) return mgopt__ti_nomem(d);
  for (k = 0; k < sp; k++) ones[k] = 1;
  *pt = mgopt__ti_pad_type(op);
  if (*pt < 0) return mgopt__ti_fail(d, op, "unknown pad_type");
  if ((s = mgopt__ti_wparam(p, op, "strides", sp, 1, ones, st, d)) != MGOPT_OK) return s;
  *dl = ones;
  if (op->kind == MGOPT_OP_conv || op->kind == MGOPT_OP_conv_transpose)
    if ((s = mgopt__ti_wparam(p, op, "dilations", sp, 1, ones, dl, d)) != MGOPT_OK) return s;
  *pd = zeros;
  if (*pt == MGOPT__TI_CUSTOM)
    if ((s = mgopt__ti_wparam(p, op, "pad", 2 * sp, 0, zeros, pd, d)) != MGOPT_OK) return s;
  return MGOPT_OK;
}

/* conv's output channels (*cout) from the weight [cout, cin/groups, ...] or, transposed,
   [cin, cout/groups, ...]; fails when the input's channels do not match the weight. */
static mgopt_status mgopt__ti_conv_channels(const mgopt_op *op, const mgopt_type *x, const mgopt_type *w,
                                            int64_t groups, mgopt_dim *cout, mgopt_diag *d) {
  int tr = op->kind == MGOPT_OP_conv_transpose;
  mgopt_dim cin = w->dims[tr ? 0 : 1];
  *cout = w->dims[tr ? 1 : 0];
  if (tr && mgopt__ti_st(*cout)) {
    int64_t v;
    if (!mgopt__mul_i64(cout->v, groups, &v)) return mgopt__ti_fail(d, op, "channel count overflows");
    *cout = mgopt_dim_static(v);
  } else if (tr && groups != 1) {
    *cout = mgopt_dim_unknown();
  }
  if (x->rank >= 0 && mgopt__ti_st(x->dims[1]) && mgopt__ti_st(cin)) {
    int64_t want = cin.v;
    if (!tr && !mgopt__mul_i64(cin.v, groups, &want)) return mgopt__ti_fail(d, op, "channel count overflows");
    if (x->dims[1].v != want || (tr && x->dims[1].v % groups != 0))
      return mgopt__ti_fail(d, op, "input has %lld channels, weight expects %lld", (long long)x->dims[1].v,
                            (long long)want);
  }
  return MGOPT_OK;
}

/* Output size *o of conv_transpose in spatial dim k (input `in`, kernel kk, -1 when unknown; pd: the
   dim's two pads) when no output_shape gives it. */
static mgopt_status mgopt__ti_convt_dim(const mgopt_op *op, int64_t k, mgopt_dim in, int64_t kk, int64_t st,
                                        int64_t dl, const int64_t *pd, int pt, mgopt_dim *o, mgopt_diag *d) {
  int64_t v, e, pb = pt == MGOPT__TI_CUSTOM ? pd[0] : 0, pe = pt == MGOPT__TI_CUSTOM ? pd[1] : 0;
  *o = mgopt_dim_unknown();
  if (pt == MGOPT__TI_SAME || pt == MGOPT__TI_SAME_LOWER) {
    if (st == 1) *o = in;
    else if (mgopt__ti_st(in)) {
      if (!mgopt__mul_i64(in.v, st, &v)) return mgopt__ti_fail(d, op, "dim overflows");
      *o = mgopt_dim_static(v);
    }
    return MGOPT_OK;
  }
  if (!mgopt__ti_st(in) || kk <= 0) return MGOPT_OK;
  if (in.v < 1 || !mgopt__mul_i64(in.v - 1, st, &v) || !mgopt__mul_i64(dl, kk - 1, &e) || !mgopt__add_i64(v, e, &v) ||
      !mgopt__add_i64(v, 1, &v))
    return mgopt__ti_fail(d, op, "bad spatial dim %lld", (long long)k);
  v -= pb; /* pads are >= 0 and v >= 1: no overflow */
  if (v >= 0) v -= pe;
  if (v < 0) return mgopt__ti_fail(d, op, "padding larger than the output in spatial dim %lld", (long long)k);
  *o = mgopt_dim_static(v);
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_conv(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                              mgopt_diag *d) {
  mgopt_type x, w;
  mgopt_status s;
  const int64_t *st, *dl, *pd, *os = NULL;
  int64_t r, sp, k, groups = mgopt_op_get_int(op, "groups", 1), nos = -1;
  int pt, tr = op->kind == MGOPT_OP_conv_transpose;
  mgopt_dim cout = mgopt_dim_unknown();
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "weight", &w, d)) != MGOPT_OK) return s;
  r = x.rank >= 0 ? x.rank : w.rank;
  if (x.rank >= 0 && w.rank >= 0 && x.rank != w.rank)
    return mgopt__ti_fail(d, op, "input rank %d and weight rank %d differ", (int)x.rank, (int)w.rank);
  if (r >= 0 && r < 3) return mgopt__ti_fail(d, op, "rank %lld is too small", (long long)r);
  if (groups < 1) return mgopt__ti_fail(d, op, "groups must be positive");
  if (r < 0) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  sp = r - 2;
  if ((s = mgopt__ti_window_params(p, op, sp, &st, &dl, &pd, &pt, d)) != MGOPT_OK) return s;
  if (w.rank >= 0 && (s = mgopt__ti_conv_channels(op, &x, &w, groups, &cout, d)) != MGOPT_OK) return s;
  if (tr) {
    nos = mgopt__ti_ints(p, op, "output_shape", &os);
    if (nos >= 0 && nos != r && nos != sp)
      return mgopt__ti_fail(d, op, "'output_shape' has %lld entries", (long long)nos);
  }
  if ((s = mgopt__ti_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  out->dims[0] = x.rank >= 0 ? x.dims[0] : mgopt_dim_unknown();
  out->dims[1] = cout;
  for (k = 0; k < sp; k++) {
    mgopt_dim in = x.rank >= 0 ? x.dims[2 + k] : mgopt_dim_unknown();
    int64_t kk = (w.rank >= 0 && mgopt__ti_st(w.dims[2 + k])) ? w.dims[2 + k].v : -1;
    mgopt_dim o = mgopt_dim_unknown();
    if (w.rank >= 0 && kk == 0) return mgopt__ti_fail(d, op, "empty kernel");
    if (!tr) {
      if (!mgopt__ti_window(in, kk, st[k], dl[k], pd[2 * k], pd[2 * k + 1], pt, 0, &o))
        return mgopt__ti_fail(d, op, "kernel does not fit the input in spatial dim %lld", (long long)k);
    } else if (nos == -2) {
      o = mgopt_dim_unknown();
    } else if (nos >= 0) {
      int64_t v = os[nos == r ? 2 + k : k];
      if (v < 0) return mgopt__ti_fail(d, op, "negative 'output_shape' entry");
      o = mgopt_dim_static(v);
    } else if ((s = mgopt__ti_convt_dim(op, k, in, kk, st[k], dl[k], pd + 2 * k, pt, &o, d)) != MGOPT_OK) {
      return s;
    }
    out->dims[2 + k] = o;
  }
  if (tr && nos == r) {
    if (os[0] < 0 || os[1] < 0) return mgopt__ti_fail(d, op, "negative 'output_shape' entry");
    out->dims[0] = mgopt_dim_static(os[0]);
    out->dims[1] = mgopt_dim_static(os[1]);
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_pool(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                              mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  const int64_t *ks = NULL, *st, *dl, *pd;
  int64_t n, r, k;
  int pt, cm = mgopt_op_get_bool(op, "ceil_mode", 0);
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  n = mgopt__ti_ints(p, op, "kernel_sizes", &ks);
  if (n == -1) return mgopt__ti_fail(d, op, "missing 'kernel_sizes'");
  r = x.rank >= 0 ? x.rank : n >= 0 ? n + 2 : -1;
  if (r < 0) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  if (r < 3) return mgopt__ti_fail(d, op, "rank %lld is too small", (long long)r);
  if (n >= 0 && n != r - 2) return mgopt__ti_fail(d, op, "'kernel_sizes' has %lld entries for rank %lld", (long long)n, (long long)r);
  if ((s = mgopt__ti_window_params(p, op, r - 2, &st, &dl, &pd, &pt, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_out(p, op, out, x.dtype, r, d)) != MGOPT_OK) return s;
  if (x.rank >= 0) {
    out->dims[0] = x.dims[0];
    out->dims[1] = x.dims[1];
  }
  for (k = 0; k < r - 2; k++) {
    mgopt_dim in = x.rank >= 0 ? x.dims[2 + k] : mgopt_dim_unknown();
    int64_t kk = n >= 0 ? ks[k] : -1;
    if (n >= 0 && kk < 1) return mgopt__ti_fail(d, op, "bad kernel size %lld", (long long)kk);
    if (!mgopt__ti_window(in, kk, st[k], 1, pd[2 * k], pd[2 * k + 1], pt, cm, &out->dims[2 + k]))
      return mgopt__ti_fail(d, op, "kernel does not fit the input in spatial dim %lld", (long long)k);
  }
  return MGOPT_OK;
}

/* upsample_nearest_neighbor, upsample_bilinear (scale factors > 0: floor(dim * factor)),
   resize_nearest_neighbor, resize_bilinear (target sizes >= 1): x of rank >= 3, the last two dims
   resampled, the others kept. An output dim must be at least 1. */
MGOPT__PRIVATE mgopt_status mgopt__infer_resample(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                  mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  int up = op->kind == MGOPT_OP_upsample_nearest_neighbor || op->kind == MGOPT_OP_upsample_bilinear, k;
  int64_t j;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (x.rank >= 0 && x.rank < 3) return mgopt__ti_fail(d, op, "expects rank 3 or more, got %d", (int)x.rank);
  if (op->kind == MGOPT_OP_resize_bilinear) {
    const char *m = mgopt_op_get_string(op, "sampling_mode", NULL);
    if (m && strcmp(m, "DEFAULT") != 0 && strcmp(m, "STRICT_ALIGN_CORNERS") != 0 && strcmp(m, "ALIGN_CORNERS") != 0 &&
        strcmp(m, "OFFSET_CORNERS") != 0 && strcmp(m, "UNALIGN_CORNERS") != 0)
      return mgopt__ti_fail(d, op, "unknown sampling_mode \"%s\"", m);
  }
  if ((s = mgopt__ti_out(p, op, out, x.dtype, x.rank, d)) != MGOPT_OK) return s;
  if (x.rank < 0) return MGOPT_OK;
  for (j = 0; j < x.rank - 2; j++) out->dims[j] = x.dims[j];
  for (k = 0; k < 2; k++) {
    mgopt_dim in = x.dims[x.rank - 2 + k];
    mgopt_dim o = mgopt_dim_unknown();
    if (up) {
      double f = mgopt_op_get_float(op, k ? "scale_factor_width" : "scale_factor_height", 1.0), v;
      if (!(f > 0.0) || f > 1e9) return mgopt__ti_fail(d, op, "bad scale factor");
      if (f == 1.0) o = in;
      else if (mgopt__ti_st(in)) {
        v = floor((double)in.v * f);
        if (v < 1.0 || v > 9e15) return mgopt__ti_fail(d, op, "scale factor gives an output dim of %g", v);
        o = mgopt_dim_static((int64_t)v);
      }
    } else {
      int64_t v = mgopt_op_get_int(op, k ? "target_size_width" : "target_size_height", 1);
      if (v < 1) return mgopt__ti_fail(d, op, "target size %lld", (long long)v);
      o = mgopt_dim_static(v);
    }
    out->dims[x.rank - 2 + k] = o;
  }
  return MGOPT_OK;
}
/* src/core/infer/control.c — type inference of control flow: while_loop, cond. */

MGOPT__PRIVATE mgopt_status mgopt__infer_while(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                               mgopt_diag *d) {
  const mgopt_use *uses;
  int32_t n = mgopt__ti_list(op, "loop_vars", &uses), i;
  if (n != op->nouts) return mgopt__ti_fail(d, op, "%d loop vars for %d outputs", (int)n, (int)op->nouts);
  for (i = 0; i < n; i++) {
    if (!uses[i].value) return mgopt__ti_fail(d, op, "loop var %d is missing", (int)i);
    if (mgopt__type_copy(p, &out[i], &uses[i].value->type)) return mgopt__ti_nomem(d);
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_cond(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                              mgopt_diag *d) {
  const mgopt_block *b = op->nblocks > 0 ? op->blocks[0] : NULL;
  int32_t i;
  if (!mgopt_op_operand(op, "pred")) return mgopt__ti_fail(d, op, "missing operand 'pred'");
  if (!b || b->nouts != op->nouts) return mgopt__ti_fail(d, op, "the true branch does not give %d outputs", (int)op->nouts);
  for (i = 0; i < op->nouts; i++) {
    if (!b->outs[i] || !b->outs[i]->value) return mgopt__ti_fail(d, op, "branch output %d is missing", (int)i);
    if (mgopt__type_copy(p, &out[i], &b->outs[i]->value->type)) return mgopt__ti_nomem(d);
  }
  return MGOPT_OK;
}
/* src/core/infer/constexpr.c — type inference of quantization and weight compression: quantize,
   dequantize, constexpr_*. */

MGOPT__PRIVATE mgopt_status mgopt__infer_quantize(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                  mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  int dt = mgopt__ti_dtype_param(op, "output_dtype");
  if ((s = mgopt__ti_in(op, "input", &x, d)) != MGOPT_OK) return s;
  if (!mgopt_op_operand(op, "scale")) return mgopt__ti_fail(d, op, "missing operand 'scale'");
  if (!mgopt_dtype_is_int((mgopt_dtype)dt)) return mgopt__ti_fail(d, op, "missing or bad 'output_dtype'");
  return mgopt__ti_like(p, op, out, &x, dt, d);
}

/* Output shaped like operand `data`, typed like operand `scale`
   (dequantize, constexpr_affine_dequantize, constexpr_blockwise_shift_scale). */
MGOPT__PRIVATE mgopt_status mgopt__infer_dequant(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                 mgopt_diag *d) {
  mgopt_type x, sc;
  mgopt_status s;
  const char *data = op->kind == MGOPT_OP_dequantize ? "input"
                     : op->kind == MGOPT_OP_constexpr_affine_dequantize ? "quantized_data"
                                                                        : "data";
  int dt;
  if ((s = mgopt__ti_in(op, data, &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "scale", &sc, d)) != MGOPT_OK) return s;
  dt = sc.dtype;
  if (op->kind == MGOPT_OP_dequantize && !mgopt_dtype_is_float((mgopt_dtype)dt)) dt = MGOPT_DT_FP32;
  return mgopt__ti_like(p, op, out, &x, dt, d);
}

/* Output with the static shape of INTS parameter `shape`: 1 if given. */
static int mgopt__ti_shape_param(mgopt_program *p, const mgopt_op *op, mgopt_type *out, int dt,
                                 mgopt_status *s, mgopt_diag *d) {
  const int64_t *v = NULL;
  int64_t n = mgopt__ti_ints(p, op, "shape", &v), k;
  if (n == -1) return 0;
  if (n == -2) {
    *s = mgopt__ti_out(p, op, out, dt, -1, d);
    return 1;
  }
  if ((*s = mgopt__ti_out(p, op, out, dt, n, d)) != MGOPT_OK) return 1;
  for (k = 0; k < n; k++) {
    if (v[k] < 0) {
      *s = mgopt__ti_fail(d, op, "negative entry in 'shape'");
      return 1;
    }
    out->dims[k] = mgopt_dim_static(v[k]);
  }
  return 1;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_lut(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                             mgopt_diag *d) {
  mgopt_type ix, lut;
  mgopt_status s = MGOPT_OK;
  int32_t ax;
  mgopt_dim vs;
  if ((s = mgopt__ti_in(op, "indices", &ix, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "lut", &lut, d)) != MGOPT_OK) return s;
  if (mgopt__ti_shape_param(p, op, out, lut.dtype, &s, d)) return s;
  /* per-group palettes: lut [..., 2^nbits, vector_size]; vectors widen one axis of indices */
  if ((s = mgopt__ti_like(p, op, out, &ix, lut.dtype, d)) != MGOPT_OK || ix.rank < 0) return s;
  if (lut.rank >= 0 && lut.rank < 2) return mgopt__ti_fail(d, op, "lut has rank %d", (int)lut.rank);
  if (ix.rank == 0) return MGOPT_OK;
  if (!mgopt__ti_axis(mgopt_op_get_int(op, "vector_axis", -1), ix.rank, &ax))
    return mgopt__ti_fail(d, op, "vector_axis out of range");
  vs = lut.rank >= 0 ? lut.dims[lut.rank - 1] : mgopt_dim_unknown();
  if (mgopt__ti_st(vs) && vs.v == 1) return MGOPT_OK;
  if (mgopt__ti_st(vs) && mgopt__ti_st(ix.dims[ax])) {
    int64_t v;
    if (!mgopt__mul_i64(vs.v, ix.dims[ax].v, &v)) return mgopt__ti_fail(d, op, "dim overflows");
    out->dims[ax] = mgopt_dim_static(v);
  } else {
    out->dims[ax] = mgopt_dim_unknown();
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__infer_sparse(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                mgopt_diag *d) {
  mgopt_type nz, mask;
  mgopt_status s = MGOPT_OK;
  if ((s = mgopt__ti_in(op, "nonzero_data", &nz, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "mask", &mask, d)) != MGOPT_OK) return s;
  if (mgopt__ti_shape_param(p, op, out, nz.dtype, &s, d)) return s;
  return mgopt__ti_like(p, op, out, &mask, nz.dtype, d);
}

/* The vector length of a lut type [..., 2^n, VS] (0: not known) and the
   vector axis of op for indices of rank `rank` (-1 when VS is 1). */
static mgopt_status mgopt__ti_lut_vector(const mgopt_op *op, const mgopt_type *lut, int32_t rank, int64_t *vs,
                                         int32_t *ax, mgopt_diag *d) {
  mgopt_dim v;
  *vs = 0;
  *ax = -1;
  if (lut->rank >= 0 && lut->rank < 2) return mgopt__ti_fail(d, op, "lut has rank %d", (int)lut->rank);
  v = lut->rank >= 0 ? lut->dims[lut->rank - 1] : mgopt_dim_unknown();
  if (mgopt__ti_st(v)) *vs = v.v;
  if (*vs == 1 || rank < 0) return MGOPT_OK;
  if (rank == 0 || !mgopt__ti_axis(mgopt_op_get_int(op, "vector_axis", -1), rank, ax))
    return mgopt__ti_fail(d, op, "vector_axis out of range");
  return MGOPT_OK;
}

/* constexpr_lut_to_sparse: (the mask widened by the vector length along
   vector_axis, uint1; the palettized non-zero values, lut dtype [D * VS]). */
MGOPT__PRIVATE mgopt_status mgopt__infer_lut_sparse(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                    mgopt_diag *d) {
  mgopt_type mask, nz, lut;
  mgopt_status s;
  int64_t vs, v;
  int32_t ax;
  if (op->nouts != 2) return mgopt__ti_fail(d, op, "gives a mask and non-zero data");
  if ((s = mgopt__ti_in(op, "indices_mask", &mask, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "indices_nonzero_data", &nz, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "lut", &lut, d)) != MGOPT_OK) return s;
  if (nz.rank >= 0 && nz.rank != 1) return mgopt__ti_fail(d, op, "indices_nonzero_data must have rank 1");
  if ((s = mgopt__ti_lut_vector(op, &lut, mask.rank, &vs, &ax, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_like(p, op, &out[0], &mask, MGOPT_DT_UINT1, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_out(p, op, &out[1], lut.dtype, 1, d)) != MGOPT_OK) return s;
  if (vs == 1) {
    out[1].dims[0] = nz.rank == 1 ? nz.dims[0] : mgopt_dim_unknown();
    return MGOPT_OK;
  }
  out[1].dims[0] = mgopt_dim_unknown();
  if (vs > 1 && nz.rank == 1 && mgopt__ti_st(nz.dims[0])) {
    if (!mgopt__mul_i64(vs, nz.dims[0].v, &v)) return mgopt__ti_fail(d, op, "dim overflows");
    out[1].dims[0] = mgopt_dim_static(v);
  }
  if (ax >= 0) {
    if (vs > 1 && mgopt__ti_st(out[0].dims[ax])) {
      if (!mgopt__mul_i64(vs, out[0].dims[ax].v, &v)) return mgopt__ti_fail(d, op, "dim overflows");
      out[0].dims[ax] = mgopt_dim_static(v);
    } else {
      out[0].dims[ax] = mgopt_dim_unknown();
    }
  }
  return MGOPT_OK;
}

/* constexpr_sparse_blockwise_shift_scale: (the mask, uint1; the dequantized
   non-zero values, scale dtype [D]). */
MGOPT__PRIVATE mgopt_status mgopt__infer_sparse_shift(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                      mgopt_diag *d) {
  mgopt_type mask, nz, sc;
  mgopt_status s;
  if (op->nouts != 2) return mgopt__ti_fail(d, op, "gives a mask and non-zero data");
  if ((s = mgopt__ti_in(op, "data_mask", &mask, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "nonzero_data", &nz, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "scale", &sc, d)) != MGOPT_OK) return s;
  if (nz.rank >= 0 && nz.rank != 1) return mgopt__ti_fail(d, op, "nonzero_data must have rank 1");
  if (sc.rank >= 0 && mask.rank >= 0 && sc.rank != mask.rank)
    return mgopt__ti_fail(d, op, "scale must have the mask's rank");
  if ((s = mgopt__ti_like(p, op, &out[0], &mask, MGOPT_DT_UINT1, d)) != MGOPT_OK) return s;
  return mgopt__ti_like(p, op, &out[1], &nz, sc.dtype, d);
}
/* src/core/infer/state.c — type inference of the state ops: read_state, coreml_update_state. */

/* The state operand of `slot`: a value of kind MGOPT_TYPE_STATE. */
static mgopt_status mgopt__ti_state_in(const mgopt_op *op, const char *slot, mgopt_type *t, mgopt_diag *d) {
  mgopt_value *v = mgopt_op_operand(op, slot);
  if (!v) return mgopt__ti_fail(d, op, "missing operand '%s'", slot);
  if (v->type.kind != MGOPT_TYPE_STATE) return mgopt__ti_fail(d, op, "operand '%s' is not a state", slot);
  *t = mgopt__ti_view(&v->type);
  t->kind = MGOPT_TYPE_TENSOR;
  return MGOPT_OK;
}

/* read_state(input): a tensor of the state's dtype and shape. */
MGOPT__PRIVATE mgopt_status mgopt__infer_read_state(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                    mgopt_diag *d) {
  mgopt_type st;
  mgopt_status s = mgopt__ti_state_in(op, "input", &st, d);
  if (s) return s;
  return mgopt__ti_like(p, op, out, &st, st.dtype, d);
}

/* coreml_update_state(state, value): writes value into the state and gives
   it back; value's dtype and shape must be the state's. */
MGOPT__PRIVATE mgopt_status mgopt__infer_update_state(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                      mgopt_diag *d) {
  mgopt_type st, vt;
  mgopt_status s = mgopt__ti_state_in(op, "state", &st, d);
  if (s || (s = mgopt__ti_in(op, "value", &vt, d))) return s;
  if (mgopt__type_clash(&st, &vt, 0)) return mgopt__ti_fail(d, op, "the value's type differs from the state's");
  return mgopt__ti_like(p, op, out, &vt, vt.dtype != MGOPT_DT_UNKNOWN ? vt.dtype : st.dtype, d);
}
/* src/core/infer/struct.c — type inference of structural and index ops: scatter_along_axis, scatter_nd, gather_nd,
   reverse_sequence, depth_to_space, space_to_depth, topk, range_1d, fill.

   Shapes that depend on operand values (range_1d's length, fill's dims) are
   static when those operands are constants, and unknown dims of a known rank
   otherwise. */

static mgopt_status mgopt__tis_int_operand(const mgopt_op *op, const mgopt_type *t, const char *what, mgopt_diag *d) {
  if (t->dtype != MGOPT_DT_UNKNOWN && !mgopt_dtype_is_int((mgopt_dtype)t->dtype))
    return mgopt__ti_fail(d, op, "%s are %s, not integers", what, mgopt_dtype_name((mgopt_dtype)t->dtype));
  return MGOPT_OK;
}

/* Dims a and b must agree (static conflict: an error). */
static mgopt_status mgopt__tis_same(const mgopt_op *op, mgopt_dim a, mgopt_dim b, const char *what, int k,
                                    mgopt_diag *d) {
  mgopt_dim o;
  if (!mgopt__ti_unify(a, b, &o)) return mgopt__ti_fail(d, op, "%s differ in dim %d", what, k);
  return MGOPT_OK;
}

/* scatter_along_axis: data's type; indices and updates share a shape that
   matches data off the axis (MIL's rule). */
MGOPT__PRIVATE mgopt_status mgopt__infer_scatter_axis(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                      mgopt_diag *d) {
  mgopt_type x, ix, up;
  mgopt_status s;
  int32_t ax, k;
  if ((s = mgopt__ti_in(op, "data", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "indices", &ix, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "updates", &up, d)) != MGOPT_OK) return s;
  if ((s = mgopt__tis_int_operand(op, &ix, "indices", d)) != MGOPT_OK) return s;
  if (mgopt__ti_dt_clash(x.dtype, up.dtype)) return mgopt__ti_fail(d, op, "data and updates differ in dtype");
  if (!mgopt__ti_enum_ok(op, "mode", "update|add|sub|mul|div|max|min")) return mgopt__ti_fail(d, op, "unknown mode");
  if (x.rank >= 0 && !mgopt__ti_axis(mgopt_op_get_int(op, "axis", 0), x.rank, &ax))
    return mgopt__ti_fail(d, op, "axis out of range");
  if (x.rank >= 0 && ix.rank >= 0 && up.rank >= 0) {
    if (x.rank != ix.rank || ix.rank != up.rank) return mgopt__ti_fail(d, op, "data, indices and updates differ in rank");
    for (k = 0; k < x.rank; k++) {
      if ((s = mgopt__tis_same(op, ix.dims[k], up.dims[k], "indices and updates", k, d)) != MGOPT_OK) return s;
      if (k != ax && (s = mgopt__tis_same(op, x.dims[k], ix.dims[k], "data and indices", k, d)) != MGOPT_OK) return s;
    }
  }
  return mgopt__ti_like(p, op, out, &x, x.dtype, d);
}

/* scatter_nd: data's type; updates = indices.shape[:-1] + data.shape[K:]. */
MGOPT__PRIVATE mgopt_status mgopt__infer_scatter_nd(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                    mgopt_diag *d) {
  mgopt_type x, ix, up;
  mgopt_status s;
  int32_t k;
  if ((s = mgopt__ti_in(op, "data", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "indices", &ix, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "updates", &up, d)) != MGOPT_OK) return s;
  if ((s = mgopt__tis_int_operand(op, &ix, "indices", d)) != MGOPT_OK) return s;
  if (mgopt__ti_dt_clash(x.dtype, up.dtype)) return mgopt__ti_fail(d, op, "data and updates differ in dtype");
  if (!mgopt__ti_enum_ok(op, "mode", "update|add|sub|mul|div|max|min")) return mgopt__ti_fail(d, op, "unknown mode");
  if (ix.rank == 0) return mgopt__ti_fail(d, op, "indices need rank 1 or more");
  if (x.rank >= 0 && ix.rank > 0 && up.rank >= 0 && mgopt__ti_st(ix.dims[ix.rank - 1])) {
    int64_t K = ix.dims[ix.rank - 1].v;
    if (K > x.rank || up.rank != ix.rank - 1 + x.rank - K)
      return mgopt__ti_fail(d, op, "updates of rank %d do not fit data and indices", (int)up.rank);
    for (k = 0; k < ix.rank - 1; k++)
      if ((s = mgopt__tis_same(op, ix.dims[k], up.dims[k], "indices and updates", k, d)) != MGOPT_OK) return s;
    for (k = (int32_t)K; k < x.rank; k++)
      if ((s = mgopt__tis_same(op, x.dims[k], up.dims[ix.rank - 1 + k - K], "data and updates", k, d)) != MGOPT_OK)
        return s;
  }
  return mgopt__ti_like(p, op, out, &x, x.dtype, d);
}

/* gather_nd: indices.shape[:-1] + x.shape[batch_dims + K:], K = indices.shape[-1]. */
MGOPT__PRIVATE mgopt_status mgopt__infer_gather_nd(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                   mgopt_diag *d) {
  mgopt_type x, ix;
  mgopt_status s;
  int64_t bd = mgopt_op_get_int(op, "batch_dims", 0), K;
  int32_t k, at = 0;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "indices", &ix, d)) != MGOPT_OK) return s;
  if ((s = mgopt__tis_int_operand(op, &ix, "indices", d)) != MGOPT_OK) return s;
  if (ix.rank == 0) return mgopt__ti_fail(d, op, "indices need rank 1 or more");
  if (bd < 0 || (ix.rank > 0 && bd >= ix.rank)) return mgopt__ti_fail(d, op, "batch_dims %lld out of range", (long long)bd);
  if (x.rank < 0 || ix.rank < 0 || !mgopt__ti_st(ix.dims[ix.rank - 1])) return mgopt__ti_out(p, op, out, x.dtype, -1, d);
  K = ix.dims[ix.rank - 1].v;
  if (bd + K > x.rank) return mgopt__ti_fail(d, op, "index tuples of %lld do not fit rank %d", (long long)K, (int)x.rank);
  for (k = 0; k < (int32_t)bd; k++)
    if ((s = mgopt__tis_same(op, x.dims[k], ix.dims[k], "x and indices", k, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_out(p, op, out, x.dtype, ix.rank - 1 + x.rank - bd - K, d)) != MGOPT_OK) return s;
  for (k = 0; k < ix.rank - 1; k++) out->dims[at++] = ix.dims[k];
  for (k = (int32_t)(bd + K); k < x.rank; k++) out->dims[at++] = x.dims[k];
  return MGOPT_OK;
}

/* reverse_sequence: x's type; lengths is an integer vector over the batch axis. */
MGOPT__PRIVATE mgopt_status mgopt__infer_reverse_sequence(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                          mgopt_diag *d) {
  mgopt_type x, lt;
  mgopt_status s;
  int32_t sa, ba;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "lengths", &lt, d)) != MGOPT_OK) return s;
  if ((s = mgopt__tis_int_operand(op, &lt, "lengths", d)) != MGOPT_OK) return s;
  if (lt.rank >= 0 && lt.rank != 1) return mgopt__ti_fail(d, op, "lengths must be a vector");
  if (x.rank >= 0) {
    if (!mgopt__ti_axis(mgopt_op_get_int(op, "seq_axis", 0), x.rank, &sa) ||
        !mgopt__ti_axis(mgopt_op_get_int(op, "batch_axis", 0), x.rank, &ba) || sa == ba)
      return mgopt__ti_fail(d, op, "seq_axis and batch_axis must be two different axes");
    if (lt.rank == 1 && (s = mgopt__tis_same(op, x.dims[ba], lt.dims[0], "the batch axis and lengths", 0, d)) != MGOPT_OK)
      return s;
  }
  return mgopt__ti_like(p, op, out, &x, x.dtype, d);
}

/* depth_to_space [n, C, H, W] -> [n, C / b^2, H * b, W * b]; space_to_depth the inverse. */
MGOPT__PRIVATE mgopt_status mgopt__infer_depth_space(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                     mgopt_diag *d) {
  int to_space = op->kind == MGOPT_OP_depth_to_space;
  mgopt_type x;
  mgopt_status s;
  int64_t b = mgopt_op_get_int(op, "block_size", -1), bb;
  int32_t k;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (b < 1 || b > ((int64_t)1 << 30)) return mgopt__ti_fail(d, op, "bad block_size %lld", (long long)b);
  bb = b * b;
  if (x.rank >= 0 && x.rank != 4) return mgopt__ti_fail(d, op, "expects rank 4, got %d", (int)x.rank);
  if ((s = mgopt__ti_out(p, op, out, x.dtype, 4, d)) != MGOPT_OK) return s;
  if (x.rank < 0) return MGOPT_OK;
  out->dims[0] = x.dims[0];
  for (k = 1; k < 4; k++) {
    mgopt_dim in = x.dims[k];
    int64_t div = to_space ? (k == 1 ? bb : 1) : (k == 1 ? 1 : b), mul = to_space ? (k == 1 ? 1 : b) : (k == 1 ? bb : 1), v;
    if (!mgopt__ti_st(in)) {
      if (b == 1) out->dims[k] = in;
      continue;
    }
    if (in.v % div) return mgopt__ti_fail(d, op, "dim %d of %lld does not divide by %lld", (int)k, (long long)in.v, (long long)div);
    if (!mgopt__mul_i64(in.v / div, mul, &v)) return mgopt__ti_fail(d, op, "dim %d overflows", (int)k);
    out->dims[k] = mgopt_dim_static(v);
  }
  return MGOPT_OK;
}

/* topk: values (x's dtype) and indices (output_indices_dtype) with k along the axis. */
MGOPT__PRIVATE mgopt_status mgopt__infer_topk(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                              mgopt_diag *d) {
  mgopt_type x;
  mgopt_status s;
  int64_t kk = mgopt_op_get_int(op, "k", 1);
  int32_t ax, i;
  int idt;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK) return s;
  if (op->nouts != 2) return mgopt__ti_fail(d, op, "gives values and indices");
  if (!mgopt__ti_enum_ok(op, "output_indices_dtype", "int32|uint16|int64"))
    return mgopt__ti_fail(d, op, "output_indices_dtype must be int32, uint16 or int64");
  idt = mgopt__ti_dtype_param(op, "output_indices_dtype");
  if (idt == MGOPT_DT_UNKNOWN) idt = MGOPT_DT_INT32;
  if (kk < 0) return mgopt__ti_fail(d, op, "k is negative");
  if (x.rank == 0) return mgopt__ti_fail(d, op, "x needs rank 1 or more");
  if ((s = mgopt__ti_like(p, op, &out[0], &x, x.dtype, d)) != MGOPT_OK) return s;
  if (x.rank > 0) {
    if (!mgopt__ti_axis(mgopt_op_get_int(op, "axis", -1), x.rank, &ax)) return mgopt__ti_fail(d, op, "axis out of range");
    if (mgopt__ti_st(x.dims[ax]) && kk > x.dims[ax].v)
      return mgopt__ti_fail(d, op, "k %lld is above the axis length %lld", (long long)kk, (long long)x.dims[ax].v);
    out[0].dims[ax] = mgopt_dim_static(kk);
  }
  if ((s = mgopt__ti_out(p, op, &out[1], idt, out[0].rank, d)) != MGOPT_OK) return s;
  for (i = 0; i < out[0].rank; i++) out[1].dims[i] = out[0].dims[i];
  return MGOPT_OK;
}

/* The one element of constant scalar operand `slot` as double, 0 when not a constant. */
static int mgopt__tis_scalar(const mgopt_op *op, const char *slot, double *v, int64_t *iv) {
  mgopt_tensor *t = mgopt_value_const(mgopt_op_operand(op, slot));
  if (!t || t->numel != 1 || t->dtype == MGOPT_DT_STRING) return 0;
  *v = mgopt_tensor_get_f64(t, 0);
  *iv = mgopt_tensor_get_i64(t, 0);
  return 1;
}

/* range_1d: a vector of start's dtype; its length when end, start and step are constants. */
MGOPT__PRIVATE mgopt_status mgopt__infer_range_1d(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                  mgopt_diag *d) {
  mgopt_type e, s0, st;
  mgopt_status s;
  double a, b, c;
  int64_t ia, ib, ic, n = -1;
  if ((s = mgopt__ti_in(op, "end", &e, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "start", &s0, d)) != MGOPT_OK) return s;
  if ((s = mgopt__ti_in(op, "step", &st, d)) != MGOPT_OK) return s;
  if (mgopt__ti_dt_clash(e.dtype, s0.dtype) || mgopt__ti_dt_clash(st.dtype, s0.dtype))
    return mgopt__ti_fail(d, op, "end, start and step differ in dtype");
  if ((e.rank > 0 && !(e.rank == 1 && e.dims[0].v == 1)) || s0.rank > 1 || st.rank > 1)
    return mgopt__ti_fail(d, op, "end, start and step must be scalars");
  if ((s = mgopt__ti_out(p, op, out, s0.dtype, 1, d)) != MGOPT_OK) return s;
  if (mgopt__tis_scalar(op, "start", &a, &ia) && mgopt__tis_scalar(op, "end", &b, &ib) &&
      mgopt__tis_scalar(op, "step", &c, &ic)) {
    if (mgopt_dtype_is_float((mgopt_dtype)s0.dtype)) {
      double q = c != 0 ? ceil((b - a) / c) : 0;
      if (c != 0 && q == q && q < 9.2e18) n = q > 0 ? (int64_t)q : 0;
    } else if (ic != 0 && ((ib >= 0 && ia >= INT64_MIN + ib) || (ib < 0 && ia <= INT64_MAX + ib))) {
      int64_t span = ib - ia;
      n = ((span > 0) != (ic > 0) || span == 0) ? 0 : span / ic + (span % ic != 0);
    }
  }
  if (n >= 0) out->dims[0] = mgopt_dim_static(n);
  return MGOPT_OK;
}

/* fill: value's dtype (fp32 without one), the dims of a constant shape, else len(shape) unknown dims. */
MGOPT__PRIVATE mgopt_status mgopt__infer_fill(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                              mgopt_diag *d) {
  mgopt_type sh, v;
  mgopt_status s;
  const int64_t *dims = NULL;
  int64_t n, k;
  int dt = MGOPT_DT_FP32;
  if ((s = mgopt__ti_in(op, "shape", &sh, d)) != MGOPT_OK) return s;
  if ((s = mgopt__tis_int_operand(op, &sh, "shape", d)) != MGOPT_OK) return s;
  if (sh.rank >= 0 && sh.rank != 1) return mgopt__ti_fail(d, op, "shape must be a vector");
  if (mgopt__ti_opt(op, "value", &v)) {
    if (v.rank > 0 && !(v.rank == 1 && v.dims[0].v == 1)) return mgopt__ti_fail(d, op, "value must be a scalar");
    dt = v.dtype;
  }
  n = mgopt__ti_ints(p, op, "shape", &dims);
  if (n < 0) return mgopt__ti_out(p, op, out, dt, sh.rank == 1 && mgopt__ti_st(sh.dims[0]) ? sh.dims[0].v : -1, d);
  if ((s = mgopt__ti_out(p, op, out, dt, n, d)) != MGOPT_OK) return s;
  for (k = 0; k < n; k++) {
    if (dims[k] < 0) return mgopt__ti_fail(d, op, "negative dim %lld in shape", (long long)dims[k]);
    out->dims[k] = mgopt_dim_static(dims[k]);
  }
  return MGOPT_OK;
}
/* src/core/infer/recurrent.c — type inference of MIL's recurrent ops: lstm, gru, rnn. */

/* lstm (3 outputs), gru and rnn (2): x [S, B, I]; weight_ih [G*H, I],
   weight_hh [G*H, H] (G = 4, 3, 1), bidirectional lstm with the _back
   weights too; outputs [S or 1 (output_sequence), B, D*H] then [B, D*H]. */
MGOPT__PRIVATE mgopt_status mgopt__infer_recurrent(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                   mgopt_diag *d) {
  static const char *const acts = "sigmoid|tanh|relu|scaled_tanh|sigmoid_hard|linear";
  int kind = op->kind == MGOPT_OP_lstm ? 2 : op->kind == MGOPT_OP_gru ? 1 : 0;
  int64_t G = kind == 2 ? 4 : kind == 1 ? 3 : 1, D;
  int seq = mgopt_op_get_bool(op, "output_sequence", 0), k;
  mgopt_type x, wi, wh, t;
  mgopt_dim h = {-1, NULL}, dh = {-1, NULL};
  mgopt_status s;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK || (s = mgopt__ti_in(op, "initial_h", &t, d)) != MGOPT_OK ||
      (s = mgopt__ti_in(op, "weight_ih", &wi, d)) != MGOPT_OK || (s = mgopt__ti_in(op, "weight_hh", &wh, d)) != MGOPT_OK)
    return s;
  if (kind == 2 && (s = mgopt__ti_in(op, "initial_c", &t, d)) != MGOPT_OK) return s;
  if (op->nouts != (kind == 2 ? 3 : 2)) return mgopt__ti_fail(d, op, "gives %d outputs", kind == 2 ? 3 : 2);
  if (x.dtype != MGOPT_DT_UNKNOWN && x.dtype != MGOPT_DT_FP32 && x.dtype != MGOPT_DT_FP16)
    return mgopt__ti_fail(d, op, "x must be fp32 or fp16");
  if (!mgopt__ti_enum_ok(op, "direction", kind == 2 ? "forward|reverse|bidirectional" : "forward|reverse"))
    return mgopt__ti_fail(d, op, "direction must be forward or reverse%s", kind == 2 ? " or bidirectional" : "");
  if (!mgopt__ti_enum_ok(op, "activation", acts) || !mgopt__ti_enum_ok(op, "recurrent_activation", acts) ||
      !mgopt__ti_enum_ok(op, "cell_activation", acts))
    return mgopt__ti_fail(d, op, "unknown activation");
  {
    size_t n = 0;
    const char *dir = mgopt_op_get_string(op, "direction", &n);
    D = kind == 2 && dir && n == 13 && memcmp(dir, "bidirectional", 13) == 0 ? 2 : 1;
  }
  if (D == 2 && (!mgopt__ti_opt(op, "weight_ih_back", &t) || !mgopt__ti_opt(op, "weight_hh_back", &t)))
    return mgopt__ti_fail(d, op, "bidirectional needs weight_ih_back and weight_hh_back");
  if (x.rank >= 0 && x.rank != 3) return mgopt__ti_fail(d, op, "x must have rank 3");
  if (wi.rank >= 0 && wi.rank != 2) return mgopt__ti_fail(d, op, "weight_ih must have rank 2");
  if (wh.rank >= 0 && wh.rank != 2) return mgopt__ti_fail(d, op, "weight_hh must have rank 2");
  if (wh.rank == 2 && mgopt__ti_st(wh.dims[1])) {
    h = wh.dims[1];
    if (mgopt__ti_st(wh.dims[0]) && wh.dims[0].v != G * h.v)
      return mgopt__ti_fail(d, op, "weight_hh is not [%d*H, H]", (int)G);
    if (wi.rank == 2 && mgopt__ti_st(wi.dims[0]) && wi.dims[0].v != G * h.v)
      return mgopt__ti_fail(d, op, "weight_ih is not [%d*H, I]", (int)G);
    dh = mgopt_dim_static(D * h.v);
  }
  if (x.rank == 3 && wi.rank == 2 && mgopt__ti_st(x.dims[2]) && mgopt__ti_st(wi.dims[1]) && x.dims[2].v != wi.dims[1].v)
    return mgopt__ti_fail(d, op, "weight_ih's input size %lld is not x's %lld", (long long)wi.dims[1].v,
                          (long long)x.dims[2].v);
  if ((s = mgopt__ti_out(p, op, &out[0], x.dtype, 3, d)) != MGOPT_OK) return s;
  out[0].dims[0] = seq ? (x.rank == 3 ? x.dims[0] : out[0].dims[0]) : mgopt_dim_static(1);
  if (x.rank == 3) out[0].dims[1] = x.dims[1];
  out[0].dims[2] = dh;
  for (k = 1; k < op->nouts; k++) {
    if ((s = mgopt__ti_out(p, op, &out[k], x.dtype, 2, d)) != MGOPT_OK) return s;
    out[k].dims[0] = out[0].dims[1];
    out[k].dims[1] = dh;
  }
  return MGOPT_OK;
}
/* src/core/registry.c — the op registry: MGOPT_OP_TABLE's rows as op definitions, operand slot and
   attribute sets, lookups by kind and by name. Type inference lives in core/infer/. */

/* ---------------------------------------------------------------- slot and attribute sets */

#define MGOPT__RG_OPT MGOPT_SLOT_OPTIONAL
#define MGOPT__RG_VAR MGOPT_SLOT_VARIADIC
#define MGOPT__RG_REQ MGOPT_ATTR_REQUIRED

/* A set named `name`, shared by the rows that name it: the array mgopt__rg_s_<name> (slots) or
   mgopt__rg_a_<name> (attributes) and its length MGOPT__RG_NS_<name> / MGOPT__RG_NA_<name>. */
#define MGOPT__RG_SLOTS(name, ...)                                    \
  static const mgopt_slot_def mgopt__rg_s_##name[] = {__VA_ARGS__}; \
  enum { MGOPT__RG_NS_##name = MGOPT__ARRAY_COUNT(mgopt__rg_s_##name) }
#define MGOPT__RG_ATTRS(name, ...)                                    \
  static const mgopt_attr_def mgopt__rg_a_##name[] = {__VA_ARGS__}; \
  enum { MGOPT__RG_NA_##name = MGOPT__ARRAY_COUNT(mgopt__rg_a_##name) }

/* The empty set `none`: a placeholder entry that its length 0 leaves unread. */
static const mgopt_slot_def mgopt__rg_s_none[1] = {{NULL, 0}};
static const mgopt_attr_def mgopt__rg_a_none[1] = {{NULL, 0, 0, NULL}};
enum { MGOPT__RG_NS_none = 0, MGOPT__RG_NA_none = 0 };

MGOPT__RG_SLOTS(x, {"x", 0});
MGOPT__RG_SLOTS(xy, {"x", 0}, {"y", 0});
MGOPT__RG_SLOTS(select, {"cond", 0}, {"a", 0}, {"b", 0});
MGOPT__RG_SLOTS(prelu, {"x", 0}, {"alpha", 0});
MGOPT__RG_SLOTS(bias_add, {"x", 0}, {"bias", 0});
MGOPT__RG_SLOTS(reshape, {"x", 0}, {"shape", 0});
MGOPT__RG_SLOTS(values, {"values", MGOPT__RG_VAR});
MGOPT__RG_SLOTS(sbi, {"x", 0}, {"begin", 0}, {"end", 0}, {"stride", MGOPT__RG_OPT});
MGOPT__RG_SLOTS(sbs, {"x", 0}, {"begin", 0}, {"size", 0});
MGOPT__RG_SLOTS(gather, {"x", 0}, {"indices", 0});
MGOPT__RG_SLOTS(indices, {"indices", 0});
MGOPT__RG_SLOTS(pad, {"x", 0}, {"pad", 0});
MGOPT__RG_SLOTS(tile, {"x", 0}, {"reps", 0});
MGOPT__RG_SLOTS(linear, {"x", 0}, {"weight", 0}, {"bias", MGOPT__RG_OPT});
MGOPT__RG_SLOTS(bn, {"x", 0}, {"mean", 0}, {"variance", 0}, {"gamma", MGOPT__RG_OPT}, {"beta", MGOPT__RG_OPT});
MGOPT__RG_SLOTS(norm, {"x", 0}, {"gamma", MGOPT__RG_OPT}, {"beta", MGOPT__RG_OPT});
MGOPT__RG_SLOTS(loop, {"loop_vars", MGOPT__RG_VAR});
MGOPT__RG_SLOTS(cond, {"pred", 0});
MGOPT__RG_SLOTS(quant, {"input", 0}, {"zero_point", MGOPT__RG_OPT}, {"scale", 0});
MGOPT__RG_SLOTS(affine, {"quantized_data", 0}, {"zero_point", 0}, {"scale", 0});
MGOPT__RG_SLOTS(lut, {"indices", 0}, {"lut", 0});
MGOPT__RG_SLOTS(sparse, {"nonzero_data", 0}, {"mask", 0});
MGOPT__RG_SLOTS(shift, {"data", 0}, {"scale", 0}, {"offset", MGOPT__RG_OPT});
MGOPT__RG_SLOTS(ccast, {"source_val", 0});
MGOPT__RG_SLOTS(lut_sparse, {"indices_mask", 0}, {"indices_nonzero_data", 0}, {"lut", 0});
MGOPT__RG_SLOTS(sparse_shift, {"data_mask", 0}, {"nonzero_data", 0}, {"scale", 0}, {"offset", MGOPT__RG_OPT});
MGOPT__RG_SLOTS(input, {"input", 0});
MGOPT__RG_SLOTS(state, {"state", 0}, {"value", 0});
MGOPT__RG_SLOTS(scatter, {"data", 0}, {"indices", 0}, {"updates", 0});
MGOPT__RG_SLOTS(revseq, {"x", 0}, {"lengths", 0});
MGOPT__RG_SLOTS(range, {"end", 0}, {"start", 0}, {"step", 0});
MGOPT__RG_SLOTS(fill, {"shape", 0}, {"value", MGOPT__RG_OPT});
MGOPT__RG_SLOTS(lstm, {"x", 0}, {"initial_h", 0}, {"initial_c", 0}, {"weight_ih", 0}, {"weight_hh", 0},
                {"bias", MGOPT__RG_OPT}, {"peephole", MGOPT__RG_OPT}, {"weight_ih_back", MGOPT__RG_OPT},
                {"weight_hh_back", MGOPT__RG_OPT}, {"bias_back", MGOPT__RG_OPT}, {"peephole_back", MGOPT__RG_OPT});
MGOPT__RG_SLOTS(gru, {"x", 0}, {"initial_h", 0}, {"weight_ih", 0}, {"weight_hh", 0}, {"bias", MGOPT__RG_OPT});

MGOPT__RG_ATTRS(const, {"val", MGOPT_ATTR_TENSOR, MGOPT__RG_REQ, NULL});
MGOPT__RG_ATTRS(log, {"epsilon", MGOPT_ATTR_FLOAT, 0, "1e-45"});
MGOPT__RG_ATTRS(rsqrt, {"epsilon", MGOPT_ATTR_FLOAT, 0, "1e-12"});
MGOPT__RG_ATTRS(inverse, {"epsilon", MGOPT_ATTR_FLOAT, 0, "0.0001"});
MGOPT__RG_ATTRS(leaky, {"alpha", MGOPT_ATTR_FLOAT, 0, "0.01"});
MGOPT__RG_ATTRS(gelu, {"mode", MGOPT_ATTR_STRING, 0, "\"EXACT\""});
MGOPT__RG_ATTRS(softmax, {"axis", MGOPT_ATTR_INT, 0, "-1"});
MGOPT__RG_ATTRS(clip, {"alpha", MGOPT_ATTR_FLOAT, MGOPT__RG_REQ, NULL},
                      {"beta", MGOPT_ATTR_FLOAT, MGOPT__RG_REQ, NULL});
MGOPT__RG_ATTRS(elu, {"alpha", MGOPT_ATTR_FLOAT, 0, "1.0"});
MGOPT__RG_ATTRS(sigmoid_hard, {"alpha", MGOPT_ATTR_FLOAT, 0, "0.2"}, {"beta", MGOPT_ATTR_FLOAT, 0, "0.5"});
MGOPT__RG_ATTRS(thresholded, {"alpha", MGOPT_ATTR_FLOAT, 0, "1.0"});
MGOPT__RG_ATTRS(lrn, {"size", MGOPT_ATTR_INT, MGOPT__RG_REQ, NULL}, {"alpha", MGOPT_ATTR_FLOAT, 0, "0.0001"},
                     {"beta", MGOPT_ATTR_FLOAT, 0, "0.75"}, {"k", MGOPT_ATTR_FLOAT, 0, "1.0"});
MGOPT__RG_ATTRS(cast, {"dtype", MGOPT_ATTR_STRING, MGOPT__RG_REQ, NULL});
MGOPT__RG_ATTRS(perm, {"perm", MGOPT_ATTR_INTS, MGOPT__RG_REQ, NULL});
MGOPT__RG_ATTRS(axes_req, {"axes", MGOPT_ATTR_INTS, MGOPT__RG_REQ, NULL});
MGOPT__RG_ATTRS(axes, {"axes", MGOPT_ATTR_INTS, 0, NULL});
MGOPT__RG_ATTRS(concat, {"axis", MGOPT_ATTR_INT, MGOPT__RG_REQ, NULL}, {"interleave", MGOPT_ATTR_BOOL, 0, "false"});
MGOPT__RG_ATTRS(stack, {"axis", MGOPT_ATTR_INT, MGOPT__RG_REQ, NULL});
MGOPT__RG_ATTRS(split, {"num_splits", MGOPT_ATTR_INT, 0, NULL}, {"split_sizes", MGOPT_ATTR_INTS, 0, NULL},
                       {"axis", MGOPT_ATTR_INT, MGOPT__RG_REQ, NULL});
MGOPT__RG_ATTRS(sbi, {"begin_mask", MGOPT_ATTR_BOOLS, 0, NULL}, {"end_mask", MGOPT_ATTR_BOOLS, 0, NULL},
                     {"squeeze_mask", MGOPT_ATTR_BOOLS, 0, NULL});
MGOPT__RG_ATTRS(gather, {"axis", MGOPT_ATTR_INT, 0, "0"}, {"batch_dims", MGOPT_ATTR_INT, 0, "0"},
                        {"validate_indices", MGOPT_ATTR_BOOL, 0, "false"});
MGOPT__RG_ATTRS(one_hot, {"one_hot_vector_size", MGOPT_ATTR_INT, MGOPT__RG_REQ, NULL},
                         {"axis", MGOPT_ATTR_INT, 0, "-1"}, {"on_value", MGOPT_ATTR_FLOAT, 0, "1.0"},
                         {"off_value", MGOPT_ATTR_FLOAT, 0, "0.0"});
MGOPT__RG_ATTRS(pad, {"mode", MGOPT_ATTR_STRING, 0, "\"constant\""}, {"constant_val", MGOPT_ATTR_FLOAT, 0, "0.0"});
MGOPT__RG_ATTRS(matmul, {"transpose_x", MGOPT_ATTR_BOOL, 0, "false"}, {"transpose_y", MGOPT_ATTR_BOOL, 0, "false"});
/* fused_activation: "none", "relu" or "relu6", applied to the output (a fused kernel's activation) */
MGOPT__RG_ATTRS(conv, {"strides", MGOPT_ATTR_INTS, 0, NULL}, {"pad_type", MGOPT_ATTR_STRING, 0, "\"valid\""},
                      {"pad", MGOPT_ATTR_INTS, 0, NULL}, {"dilations", MGOPT_ATTR_INTS, 0, NULL},
                      {"groups", MGOPT_ATTR_INT, 0, "1"}, {"fused_activation", MGOPT_ATTR_STRING, 0, "\"none\""});
MGOPT__RG_ATTRS(linear, {"fused_activation", MGOPT_ATTR_STRING, 0, "\"none\""});
MGOPT__RG_ATTRS(convt, {"strides", MGOPT_ATTR_INTS, 0, NULL}, {"pad_type", MGOPT_ATTR_STRING, 0, "\"valid\""},
                       {"pad", MGOPT_ATTR_INTS, 0, NULL}, {"dilations", MGOPT_ATTR_INTS, 0, NULL},
                       {"groups", MGOPT_ATTR_INT, 0, "1"}, {"output_shape", MGOPT_ATTR_INTS, 0, NULL});
MGOPT__RG_ATTRS(avg_pool, {"kernel_sizes", MGOPT_ATTR_INTS, MGOPT__RG_REQ, NULL},
                          {"strides", MGOPT_ATTR_INTS, 0, NULL}, {"pad_type", MGOPT_ATTR_STRING, 0, "\"valid\""},
                          {"pad", MGOPT_ATTR_INTS, 0, NULL},
                          {"exclude_padding_from_average", MGOPT_ATTR_BOOL, 0, "false"},
                          {"ceil_mode", MGOPT_ATTR_BOOL, 0, "false"});
MGOPT__RG_ATTRS(max_pool, {"kernel_sizes", MGOPT_ATTR_INTS, MGOPT__RG_REQ, NULL},
                          {"strides", MGOPT_ATTR_INTS, 0, NULL}, {"pad_type", MGOPT_ATTR_STRING, 0, "\"valid\""},
                          {"pad", MGOPT_ATTR_INTS, 0, NULL}, {"ceil_mode", MGOPT_ATTR_BOOL, 0, "false"});
MGOPT__RG_ATTRS(eps, {"epsilon", MGOPT_ATTR_FLOAT, 0, "1e-05"});
MGOPT__RG_ATTRS(layer_norm, {"axes", MGOPT_ATTR_INTS, 0, NULL}, {"epsilon", MGOPT_ATTR_FLOAT, 0, "1e-05"});
MGOPT__RG_ATTRS(reduce, {"axes", MGOPT_ATTR_INTS, 0, NULL}, {"keep_dims", MGOPT_ATTR_BOOL, 0, "false"});
MGOPT__RG_ATTRS(pixel_shuffle, {"upscale_factor", MGOPT_ATTR_INT, MGOPT__RG_REQ, NULL});
MGOPT__RG_ATTRS(s2b, {"block_shape", MGOPT_ATTR_INTS, MGOPT__RG_REQ, NULL},
                     {"paddings", MGOPT_ATTR_INTS, MGOPT__RG_REQ, NULL});
MGOPT__RG_ATTRS(b2s, {"block_shape", MGOPT_ATTR_INTS, MGOPT__RG_REQ, NULL},
                     {"crops", MGOPT_ATTR_INTS, MGOPT__RG_REQ, NULL});
MGOPT__RG_ATTRS(quantize, {"axis", MGOPT_ATTR_INT, 0, NULL},
                          {"output_dtype", MGOPT_ATTR_STRING, MGOPT__RG_REQ, NULL});
MGOPT__RG_ATTRS(axis, {"axis", MGOPT_ATTR_INT, 0, NULL});
MGOPT__RG_ATTRS(bias_add, {"axis", MGOPT_ATTR_INT, 0, "1"});
MGOPT__RG_ATTRS(axis_req, {"axis", MGOPT_ATTR_INT, MGOPT__RG_REQ, NULL});
MGOPT__RG_ATTRS(lut, {"shape", MGOPT_ATTR_INTS, 0, NULL}, {"vector_axis", MGOPT_ATTR_INT, 0, NULL});
MGOPT__RG_ATTRS(shape, {"shape", MGOPT_ATTR_INTS, 0, NULL});
MGOPT__RG_ATTRS(vector_axis, {"vector_axis", MGOPT_ATTR_INT, 0, NULL});
MGOPT__RG_ATTRS(ccast, {"output_dtype", MGOPT_ATTR_STRING, MGOPT__RG_REQ, NULL});
MGOPT__RG_ATTRS(reduce_arg, {"axis", MGOPT_ATTR_INT, 0, "-1"}, {"keep_dims", MGOPT_ATTR_BOOL, 0, "false"},
                            {"output_dtype", MGOPT_ATTR_STRING, 0, "\"int32\""});
MGOPT__RG_ATTRS(scatter_axis, {"axis", MGOPT_ATTR_INT, 0, "0"}, {"mode", MGOPT_ATTR_STRING, 0, "\"add\""},
                              {"validate_indices", MGOPT_ATTR_BOOL, 0, "false"});
MGOPT__RG_ATTRS(scatter_nd, {"mode", MGOPT_ATTR_STRING, 0, "\"add\""}, {"validate_indices", MGOPT_ATTR_BOOL, 0, "false"});
MGOPT__RG_ATTRS(gather_nd, {"batch_dims", MGOPT_ATTR_INT, 0, "0"}, {"validate_indices", MGOPT_ATTR_BOOL, 0, "false"});
MGOPT__RG_ATTRS(revseq, {"seq_axis", MGOPT_ATTR_INT, 0, "0"}, {"batch_axis", MGOPT_ATTR_INT, 0, "0"});
MGOPT__RG_ATTRS(block_size, {"block_size", MGOPT_ATTR_INT, MGOPT__RG_REQ, NULL});
MGOPT__RG_ATTRS(topk, {"k", MGOPT_ATTR_INT, 0, "1"}, {"axis", MGOPT_ATTR_INT, 0, "-1"},
                      {"ascending", MGOPT_ATTR_BOOL, 0, "false"}, {"sort", MGOPT_ATTR_BOOL, 0, "true"},
                      {"output_indices_dtype", MGOPT_ATTR_STRING, 0, "\"int32\""});
MGOPT__RG_ATTRS(gather_axis, {"axis", MGOPT_ATTR_INT, 0, "0"}, {"validate_indices", MGOPT_ATTR_BOOL, 0, "false"});
MGOPT__RG_ATTRS(cumsum, {"axis", MGOPT_ATTR_INT, 0, "0"}, {"exclusive", MGOPT_ATTR_BOOL, 0, "false"},
                        {"reverse", MGOPT_ATTR_BOOL, 0, "false"});
MGOPT__RG_ATTRS(upsample_nn, {"scale_factor_height", MGOPT_ATTR_FLOAT, 0, "1.0"},
                             {"scale_factor_width", MGOPT_ATTR_FLOAT, 0, "1.0"});
MGOPT__RG_ATTRS(resize_nn, {"target_size_height", MGOPT_ATTR_INT, MGOPT__RG_REQ, NULL},
                           {"target_size_width", MGOPT_ATTR_INT, MGOPT__RG_REQ, NULL});
MGOPT__RG_ATTRS(upsample_bl, {"scale_factor_height", MGOPT_ATTR_FLOAT, 0, "1.0"},
                             {"scale_factor_width", MGOPT_ATTR_FLOAT, 0, "1.0"},
                             {"align_corners", MGOPT_ATTR_BOOL, 0, "true"});
MGOPT__RG_ATTRS(resize_bl, {"target_size_height", MGOPT_ATTR_INT, 0, "1"}, {"target_size_width", MGOPT_ATTR_INT, 0, "1"},
                           {"sampling_mode", MGOPT_ATTR_STRING, 0, "\"DEFAULT\""});
MGOPT__RG_ATTRS(einsum, {"equation", MGOPT_ATTR_STRING, MGOPT__RG_REQ, NULL});
MGOPT__RG_ATTRS(lstm, {"direction", MGOPT_ATTR_STRING, 0, "\"forward\""}, {"output_sequence", MGOPT_ATTR_BOOL, 0, "false"},
                      {"recurrent_activation", MGOPT_ATTR_STRING, 0, "\"sigmoid\""},
                      {"cell_activation", MGOPT_ATTR_STRING, 0, "\"tanh\""}, {"activation", MGOPT_ATTR_STRING, 0, "\"tanh\""},
                      {"clip", MGOPT_ATTR_FLOAT, 0, NULL});
MGOPT__RG_ATTRS(gru, {"direction", MGOPT_ATTR_STRING, 0, "\"forward\""}, {"output_sequence", MGOPT_ATTR_BOOL, 0, "false"},
                     {"recurrent_activation", MGOPT_ATTR_STRING, 0, "\"sigmoid\""}, {"activation", MGOPT_ATTR_STRING, 0, "\"tanh\""});
MGOPT__RG_ATTRS(rnn, {"direction", MGOPT_ATTR_STRING, 0, "\"forward\""}, {"output_sequence", MGOPT_ATTR_BOOL, 0, "false"},
                     {"activation", MGOPT_ATTR_STRING, 0, "\"tanh\""});

/* ---------------------------------------------------------------- the table */

/* Entry k describes op kind k + 1 (MGOPT_OP_OPAQUE has none). */
#define MGOPT__RG_DEF(name, traits, slots, attrs, nouts_min, nouts_max, nblocks, infer, kernel)      \
  {#name, traits, MGOPT__RG_NS_##slots, mgopt__rg_s_##slots, MGOPT__RG_NA_##attrs, mgopt__rg_a_##attrs, \
   nouts_min, nouts_max, nblocks, mgopt__infer_##infer},
static const mgopt_op_def mgopt__rg_defs[] = {MGOPT_OP_TABLE(MGOPT__RG_DEF)};
#undef MGOPT__RG_DEF

/* Name lengths by kind (0 for MGOPT_OP_OPAQUE): name lookup compares names of the right length only. */
#define MGOPT__RG_LEN(name, traits, slots, attrs, nouts_min, nouts_max, nblocks, infer, kernel) sizeof(#name) - 1,
static const uint8_t mgopt__rg_len[] = {0, MGOPT_OP_TABLE(MGOPT__RG_LEN)};
#undef MGOPT__RG_LEN

/* ---------------------------------------------------------------- exported */

MGOPTDEF const mgopt_op_def *mgopt_op_def_get(int32_t kind) {
  if (kind <= MGOPT_OP_OPAQUE || kind >= MGOPT_OP__COUNT) return NULL;
  return &mgopt__rg_defs[kind - 1];
}

MGOPTDEF int32_t mgopt_op_kind_from_name(const char *s, size_t n) {
  const uint8_t *l = mgopt__rg_len + 1, *end = mgopt__rg_len + MGOPT__ARRAY_COUNT(mgopt__rg_len);
  if (!s || n == 0 || n > 255) return MGOPT_OP_OPAQUE;
  /* memchr finds the next name of length n; most kinds are skipped without touching their name */
  while ((l = (const uint8_t *)memchr(l, (int)n, (size_t)(end - l))) != NULL) {
    int32_t k = (int32_t)(l - mgopt__rg_len);
    const char *name = mgopt__rg_defs[k - 1].name;
    if (name[0] == s[0] && memcmp(name, s, n) == 0) return k;
    l++;
  }
  return MGOPT_OP_OPAQUE;
}

MGOPTDEF uint32_t mgopt_op_traits(const mgopt_op *op) {
  const mgopt_op_def *d = op ? mgopt_op_def_get(op->kind) : NULL;
  return d ? d->traits : 0;
}

MGOPT__PRIVATE const mgopt_attr_def *mgopt__attr_def(int32_t kind, const char *name) {
  const mgopt_op_def *d = mgopt_op_def_get(kind);
  int32_t i;
  if (!d) return NULL;
  for (i = 0; i < d->nattrs; i++)
    if (strcmp(d->attrs[i].name, name) == 0) return &d->attrs[i];
  return NULL;
}
/* src/core/verify.c — the IR verifier: structure, scopes, exact use lists, op schemas, inferred types. */

/* Invariants checked, per function (nested blocks included):
   - block lists: prev/next links, parent pointers, op counts, no erased op linked;
   - every value has a name; outputs point back to their op, args to their block;
   - operands are defined before use in the op's scope (function inputs, earlier
     ops of the same or an enclosing block, args of the enclosing nested blocks);
   - use lists are exact: each use in a value's list points back at its operand
     or block-output slot, and the list length equals the number of such slots;
   - registered ops: operand slots and attributes known to the schema (a
     parameter may be given as an operand), required ones present, attribute
     kinds compatible, output and nested-block counts in range;
   - output types agree with type inference (no contradicting dtype, rank or
     static dim; a less precise stored dim is accepted);
   - block outputs defined;
   - the op index agrees with the program: every linked op is listed under its
     kind at its slot, labels increase in pre-order, the op count is exact,
     and a list not marked unsorted is label-ascending. */

/* The op's name (or its first output's) and, for an op read from .mil, its
   line:col found by binary search in the parser's table (ids ascend). */
MGOPT__PRIVATE void mgopt__diag_place(mgopt_diag *d, const mgopt_op *op) {
  const mgopt_program *p;
  int64_t lo = 0, hi;
  if (!d) return;
  d->op[0] = 0;
  d->line = d->col = 0;
  d->offset = -1;
  if (!op) return;
  snprintf(d->op, sizeof d->op, "%s",
           op->name ? op->name : (op->nouts > 0 && op->outs[0]->name) ? op->outs[0]->name : "");
  p = op->program;
  hi = p ? p->nplaces : 0;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (p->places[mid].id < op->id) lo = mid + 1;
    else hi = mid;
  }
  if (p && lo < p->nplaces && p->places[lo].id == op->id) {
    d->line = p->places[lo].line;
    d->col = p->places[lo].col;
  }
}

typedef struct mgopt__vfy {
  mgopt_program *p;
  mgopt_diag *d;
  uint8_t *visible;   /* by value id: 1 while in scope */
  int32_t *count;     /* by value id: operand/block-output slots seen */
  mgopt_value **seen; /* every value defined, to check its use list at the end */
  int64_t nseen, seen_cap;
  uint32_t nids;
  int depth;
} mgopt__vfy;

static mgopt_status mgopt__vfy_fail(mgopt__vfy *v, const mgopt_op *op, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static mgopt_status mgopt__vfy_fail(mgopt__vfy *v, const mgopt_op *op, const char *fmt, ...) {
  va_list ap;
  if (!v->d) return MGOPT_ERR_VERIFY;
  v->d->status = MGOPT_ERR_VERIFY;
  mgopt__diag_place(v->d, op);
  va_start(ap, fmt);
  vsnprintf(v->d->msg, sizeof v->d->msg, fmt, ap);
  va_end(ap);
  if (op) {
    mgopt__diag_prefix(v->d, "): ");
    mgopt__diag_prefix(v->d, op->type ? op->type : "?");
    mgopt__diag_prefix(v->d, "' (");
    mgopt__diag_prefix(v->d, v->d->op);
    mgopt__diag_prefix(v->d, "op '");
  }
  return MGOPT_ERR_VERIFY;
}

static int mgopt__vfy_id_ok(mgopt__vfy *v, const mgopt_value *x) { return x->id < v->nids; }

static mgopt_status mgopt__vfy_define(mgopt__vfy *v, mgopt_value *x, const mgopt_op *op) {
  if (!mgopt__vfy_id_ok(v, x)) return mgopt__vfy_fail(v, op, "value with an invalid id");
  if (!x->name && !(x->flags & MGOPT_VALUE_ABSENT))
    return mgopt__vfy_fail(v, op, "a value has no name");
  if (x->type.kind == MGOPT_TYPE_TENSOR && x->type.rank > 0 && !x->type.dims)
    return mgopt__vfy_fail(v, op, "value '%s' has rank %d but no dims", x->name ? x->name : "_",
                           (int)x->type.rank);
  v->visible[x->id] = 1;
  if (v->nseen == v->seen_cap) {
    void *arr = v->seen;
    if (!mgopt__grow(&v->p->alloc, &arr, &v->seen_cap, v->nseen + 1, sizeof(mgopt_value *)))
      return mgopt_diag_set(v->d, MGOPT_ERR_NOMEM, "verifier: out of memory");
    v->seen = (mgopt_value **)arr;
  }
  v->seen[v->nseen++] = x;
  return MGOPT_OK;
}

static int mgopt__vfy_kind_ok(uint8_t want, uint8_t have) {
  if (want == have) return 1;
  switch (want) {
    case MGOPT_ATTR_FLOAT: return have == MGOPT_ATTR_INT || have == MGOPT_ATTR_TENSOR;
    case MGOPT_ATTR_INT: return have == MGOPT_ATTR_BOOL || have == MGOPT_ATTR_TENSOR;
    case MGOPT_ATTR_BOOL: return have == MGOPT_ATTR_INT || have == MGOPT_ATTR_TENSOR;
    case MGOPT_ATTR_INTS: return have == MGOPT_ATTR_INT || have == MGOPT_ATTR_TENSOR || have == MGOPT_ATTR_BOOLS;
    case MGOPT_ATTR_FLOATS: return have == MGOPT_ATTR_INTS || have == MGOPT_ATTR_TENSOR || have == MGOPT_ATTR_FLOAT;
    case MGOPT_ATTR_BOOLS: return have == MGOPT_ATTR_INTS || have == MGOPT_ATTR_TENSOR;
    case MGOPT_ATTR_STRINGS: return have == MGOPT_ATTR_STRING;
    default: return 0;
  }
}

static const char *mgopt__vfy_name(const mgopt_value *x) { return x->name ? x->name : "_"; }

static mgopt_status mgopt__vfy_schema(mgopt__vfy *v, mgopt_op *op) {
  const mgopt_op_def *def = mgopt_op_def_get(op->kind);
  int32_t i, k;
  if (!def) return MGOPT_OK;
  for (i = 0; i < op->nslots; i++) {
    const mgopt_slot *s = &op->slots[i];
    int found = 0;
    if (!s->is_list && s->n == 0) continue; /* an absent operand (set to NULL) */
    for (k = 0; k < def->nslots && !found; k++)
      if (strcmp(def->slots[k].name, s->name) == 0) {
        found = 1;
        if (s->is_list && !(def->slots[k].flags & MGOPT_SLOT_VARIADIC))
          return mgopt__vfy_fail(v, op, "operand '%s' is a list but takes one value", s->name);
        if (!s->is_list && (def->slots[k].flags & MGOPT_SLOT_VARIADIC) && s->n)
          return mgopt__vfy_fail(v, op, "operand '%s' takes a list", s->name);
      }
    for (k = 0; k < def->nattrs && !found; k++)
      if (strcmp(def->attrs[k].name, s->name) == 0) found = 1; /* parameter given as an operand */
    if (!found) return mgopt__vfy_fail(v, op, "unknown operand '%s'", s->name);
  }
  for (k = 0; k < def->nslots; k++) {
    int32_t si;
    if (def->slots[k].flags & MGOPT_SLOT_OPTIONAL) continue;
    si = mgopt_op_slot_index(op, def->slots[k].name);
    if (si < 0 || (!op->slots[si].is_list && op->slots[si].n == 0))
      return mgopt__vfy_fail(v, op, "missing operand '%s'", def->slots[k].name);
  }
  for (i = 0; i < op->nattrs; i++) {
    const mgopt_attr *a = &op->attrs[i];
    const mgopt_attr_def *ad = NULL;
    for (k = 0; k < def->nattrs; k++)
      if (strcmp(def->attrs[k].name, a->name) == 0) ad = &def->attrs[k];
    if (!ad) return mgopt__vfy_fail(v, op, "unknown attribute '%s'", a->name);
    if (!mgopt__vfy_kind_ok(ad->kind, a->kind))
      return mgopt__vfy_fail(v, op, "attribute '%s' has the wrong kind", a->name);
    if (a->kind == MGOPT_ATTR_TENSOR && !a->u.t)
      return mgopt__vfy_fail(v, op, "attribute '%s' has no tensor", a->name);
  }
  for (k = 0; k < def->nattrs; k++) {
    if (!(def->attrs[k].flags & MGOPT_ATTR_REQUIRED)) continue;
    if (!mgopt_op_attr(op, def->attrs[k].name) && mgopt_op_slot_index(op, def->attrs[k].name) < 0)
      return mgopt__vfy_fail(v, op, "missing attribute '%s'", def->attrs[k].name);
  }
  if (op->nouts < def->nouts_min || (def->nouts_max >= 0 && op->nouts > def->nouts_max))
    return mgopt__vfy_fail(v, op, "has %d outputs", (int)op->nouts);
  if (def->nblocks >= 0 && op->nblocks != def->nblocks)
    return mgopt__vfy_fail(v, op, "has %d nested blocks, expected %d", (int)op->nblocks, (int)def->nblocks);
  return MGOPT_OK;
}

static mgopt_status mgopt__vfy_types(mgopt__vfy *v, mgopt_op *op) {
  mgopt_type tmp[8], *inf;
  mgopt_diag d2;
  mgopt_status st;
  int32_t i;
  mgopt_diag_clear(&d2);
  st = mgopt__op_infer_types(v->p, op, tmp, 8, &inf, &d2);
  if (st == MGOPT_ERR_NOMEM && d2.status == MGOPT_OK) /* no memory for the types */
    return mgopt_diag_set(v->d, MGOPT_ERR_NOMEM, "verifier: out of memory");
  if (st) return mgopt__vfy_fail(v, op, "type inference failed: %s", d2.msg);
  if (!inf) return MGOPT_OK;
  for (i = 0; i < op->nouts; i++) {
    const mgopt_type *s = &op->outs[i]->type, *t = &inf[i];
    const char *n = mgopt__vfy_name(op->outs[i]);
    int32_t c = mgopt__type_clash(s, t, 1);
    if (c == MGOPT__CLASH_KIND) return mgopt__vfy_fail(v, op, "output '%s': kind differs from inference", n);
    if (c == MGOPT__CLASH_DTYPE)
      return mgopt__vfy_fail(v, op, "output '%s' is %s, inference gives %s", n,
                             mgopt_dtype_name((mgopt_dtype)s->dtype), mgopt_dtype_name((mgopt_dtype)t->dtype));
    if (c == MGOPT__CLASH_RANK)
      return mgopt__vfy_fail(v, op, "output '%s' has rank %d, inference gives %d", n, (int)s->rank, (int)t->rank);
    if (c > 0)
      return mgopt__vfy_fail(v, op, "output '%s' dim %d is %lld, inference gives %lld", n, (int)(c - 1),
                             (long long)s->dims[c - 1].v, (long long)t->dims[c - 1].v);
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__vfy_block(mgopt__vfy *v, mgopt_block *b, mgopt_function *f);

static mgopt_status mgopt__vfy_op(mgopt__vfy *v, mgopt_op *op, mgopt_block *b, mgopt_function *f) {
  int32_t i, k;
  mgopt_status s;
  if (op->flags & MGOPT_OP_ERASED) return mgopt__vfy_fail(v, op, "erased op still linked");
  if (op->parent != b) return mgopt__vfy_fail(v, op, "wrong parent block");
  if (!op->type) return mgopt__vfy_fail(v, NULL, "op without a type");
  if (op->kind < 0 || op->kind >= MGOPT_OP__COUNT) return mgopt__vfy_fail(v, op, "bad op kind");
  for (i = 0; i < op->nslots; i++) {
    mgopt_slot *sl = &op->slots[i];
    if (!sl->name) return mgopt__vfy_fail(v, op, "unnamed operand slot");
    for (k = 0; k < sl->n; k++) {
      mgopt_use *u = &sl->uses[k];
      mgopt_value *x = u->value;
      if (!x) return mgopt__vfy_fail(v, op, "operand '%s'[%d] is missing", sl->name, (int)k);
      if (u->op != op || u->slot != i || u->index != k || u->block)
        return mgopt__vfy_fail(v, op, "operand '%s'[%d] has a corrupt use record", sl->name, (int)k);
      if (!mgopt__vfy_id_ok(v, x) || !v->visible[x->id])
        return mgopt__vfy_fail(v, op, "operand '%s' uses '%s' outside its scope or before its definition",
                               sl->name, mgopt__vfy_name(x));
      v->count[x->id]++;
    }
  }
  if ((s = mgopt__vfy_schema(v, op)) != MGOPT_OK) return s;
  if (op->kind == MGOPT_OP_while_loop) {
    /* both blocks take the loop vars and the body gives them back: same
       count, no contradicting types; the condition gives one bool */
    int32_t si = mgopt_op_slot_index(op, "loop_vars");
    int32_t nv = si >= 0 ? op->slots[si].n : 0;
    for (i = 0; i < op->nblocks; i++) {
      mgopt_block *nb = op->blocks[i];
      if (nb->nargs != nv)
        return mgopt__vfy_fail(v, op, "block %d takes %d arguments for %d loop vars", (int)i, (int)nb->nargs, (int)nv);
      for (k = 0; k < nv; k++) {
        int32_t j = mgopt__type_clash(&op->slots[si].uses[k].value->type, &nb->args[k]->type, 0);
        if (j == MGOPT__CLASH_KIND || j == MGOPT__CLASH_DTYPE)
          return mgopt__vfy_fail(v, op, "block %d argument %d differs in type from loop var %d", (int)i, (int)k, (int)k);
        if (j == MGOPT__CLASH_RANK)
          return mgopt__vfy_fail(v, op, "block %d argument %d differs in rank from loop var %d", (int)i, (int)k, (int)k);
        if (j > 0)
          return mgopt__vfy_fail(v, op, "block %d argument %d dim %d differs from loop var %d", (int)i, (int)k,
                                 (int)(j - 1), (int)k);
      }
    }
    if (op->nblocks == 2) {
      const mgopt_block *c = op->blocks[0], *body = op->blocks[1];
      const mgopt_value *o = c->nouts == 1 && c->outs[0] ? c->outs[0]->value : NULL;
      int one = o && o->type.kind == MGOPT_TYPE_TENSOR && (!o->type.dtype || o->type.dtype == MGOPT_DT_BOOL);
      for (k = 0; one && k < o->type.rank; k++) /* a scalar, or one element of any rank */
        one = !mgopt_dim_is_static(o->type.dims[k]) || o->type.dims[k].v == 1;
      if (!one) return mgopt__vfy_fail(v, op, "the loop condition must give one bool");
      if (body->nouts != nv)
        return mgopt__vfy_fail(v, op, "the loop body gives %d values for %d loop vars", (int)body->nouts, (int)nv);
      for (k = 0; k < nv; k++) {
        int32_t j;
        if (!body->outs[k] || !body->outs[k]->value) continue; /* reported with the block's outputs */
        j = mgopt__type_clash(&op->slots[si].uses[k].value->type, &body->outs[k]->value->type, 0);
        if (j != 0)
          return mgopt__vfy_fail(v, op, "the loop body's output %d contradicts the type of loop var %d", (int)k,
                                 (int)k);
      }
    }
  }
  /* nested blocks see what is visible here, plus their own args */
  for (i = 0; i < op->nblocks; i++) {
    mgopt_block *nb = op->blocks[i];
    if (nb->parent_op != op) return mgopt__vfy_fail(v, op, "nested block %d has a wrong parent", (int)i);
    if (v->depth > 256) return mgopt__vfy_fail(v, op, "blocks nested too deeply");
    v->depth++;
    s = mgopt__vfy_block(v, nb, f);
    v->depth--;
    if (s) return s;
  }
  for (i = 0; i < op->nouts; i++) {
    mgopt_value *x = op->outs[i];
    if (!x || x->def != op || x->index != i) return mgopt__vfy_fail(v, op, "output %d does not point back at its op", (int)i);
    if ((s = mgopt__vfy_define(v, x, op)) != MGOPT_OK) return s;
  }
  return mgopt__vfy_types(v, op);
}

static mgopt_status mgopt__vfy_block(mgopt__vfy *v, mgopt_block *b, mgopt_function *f) {
  mgopt_op *op, *prev = NULL;
  int32_t i, n = 0;
  mgopt_status s;
  if (b->func != f) return mgopt__vfy_fail(v, NULL, "block '%s' belongs to another function", b->name);
  for (i = 0; i < b->nargs; i++) {
    mgopt_value *x = b->args[i];
    if (x->def || x->owner != b || x->index != i)
      return mgopt__vfy_fail(v, b->parent_op, "block argument %d does not point back at its block", (int)i);
    if ((s = mgopt__vfy_define(v, x, b->parent_op)) != MGOPT_OK) return s;
  }
  for (op = b->first; op; op = op->next) {
    if (op->prev != prev) return mgopt__vfy_fail(v, op, "broken op list links");
    if ((s = mgopt__vfy_op(v, op, b, f)) != MGOPT_OK) return s;
    prev = op;
    n++;
  }
  if (b->last != prev) return mgopt__vfy_fail(v, NULL, "block '%s': last op pointer is stale", b->name);
  if (n != b->nops) return mgopt__vfy_fail(v, NULL, "block '%s': op count %d, found %d", b->name, (int)b->nops, (int)n);
  for (i = 0; i < b->nouts; i++) {
    mgopt_use *u = b->outs[i];
    mgopt_value *x = u->value;
    if (!x) return mgopt__vfy_fail(v, b->parent_op, "block '%s' output %d is missing", b->name, (int)i);
    if (u->block != b || u->op || u->index != i)
      return mgopt__vfy_fail(v, b->parent_op, "block '%s' output %d has a corrupt use record", b->name, (int)i);
    if (!mgopt__vfy_id_ok(v, x) || !v->visible[x->id])
      return mgopt__vfy_fail(v, b->parent_op, "block '%s' output '%s' is not defined in scope", b->name,
                             mgopt__vfy_name(x));
    v->count[x->id]++;
  }
  /* leaving the block: its definitions go out of scope */
  if (b->parent_op) {
    for (i = 0; i < b->nargs; i++) v->visible[b->args[i]->id] = 0;
    for (op = b->first; op; op = op->next)
      for (i = 0; i < op->nouts; i++) v->visible[op->outs[i]->id] = 0;
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__vfy_uses(mgopt__vfy *v) {
  int64_t i;
  for (i = 0; i < v->nseen; i++) {
    mgopt_value *x = v->seen[i];
    const mgopt_use *u, *prev = NULL;
    int32_t n = 0, nb = 0;
    for (u = x->uses; u; u = u->next) {
      if (u->value != x || u->prev != prev)
        return mgopt__vfy_fail(v, x->def, "use list of '%s' is corrupt", mgopt__vfy_name(x));
      if (!u->op && nb++ != n)
        return mgopt__vfy_fail(v, x->def, "use list of '%s' has a block output after an op use",
                               mgopt__vfy_name(x));
      if (u->op) {
        const mgopt_op *o = u->op;
        if ((o->flags & MGOPT_OP_ERASED) || u->slot < 0 || u->slot >= o->nslots ||
            u->index < 0 || u->index >= o->slots[u->slot].n || &o->slots[u->slot].uses[u->index] != u)
          return mgopt__vfy_fail(v, x->def, "use list of '%s' holds a stale use", mgopt__vfy_name(x));
      } else if (!u->block || u->index < 0 || u->index >= u->block->nouts || u->block->outs[u->index] != u) {
        return mgopt__vfy_fail(v, x->def, "use list of '%s' holds a stale block output", mgopt__vfy_name(x));
      }
      prev = u;
      n++;
    }
    if (nb != x->nblock_uses)
      return mgopt__vfy_fail(v, x->def, "use list of '%s' has %d block outputs, count %d", mgopt__vfy_name(x),
                             (int)nb, (int)x->nblock_uses);
    if (n != x->nuses || n != v->count[x->id])
      return mgopt__vfy_fail(v, x->def, "use list of '%s' has %d entries, count %d, found %d uses",
                             mgopt__vfy_name(x), (int)n, (int)x->nuses, (int)v->count[x->id]);
  }
  return MGOPT_OK;
}

/* The ops of block b (nested too) against f's index, in pre-order; *last is
   the label of the op before, *n counts the ops. */
static mgopt_status mgopt__vfy_index_block(mgopt__vfy *v, const mgopt__func_rec *fr, const mgopt_block *b,
                                           uint64_t *last, int64_t *n) {
  const mgopt_op *op;
  for (op = b->first; op; op = op->next) {
    const mgopt__op_rec *r = MGOPT__OP_REC(op);
    int32_t i;
    mgopt_status s;
    if (r->slot == MGOPT__SLOT_OFF) return mgopt__vfy_fail(v, op, "linked op missing from the op index");
    if (!fr->broken && (r->slot < 0 || !fr->kinds || r->slot >= fr->kinds[op->kind].n ||
                        fr->kinds[op->kind].ops[r->slot] != op))
      return mgopt__vfy_fail(v, op, "op index: not at its slot in the list of its kind");
    if (r->label <= *last) return mgopt__vfy_fail(v, op, "op index: label out of program order");
    *last = r->label;
    ++*n;
    for (i = 0; i < op->nblocks; i++)
      if ((s = mgopt__vfy_index_block(v, fr, op->blocks[i], last, n)) != MGOPT_OK) return s;
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__vfy_index(mgopt__vfy *v, mgopt_function *f) {
  const mgopt__func_rec *fr = MGOPT__FUNC_REC(f);
  uint64_t last = 0;
  int64_t n = 0, listed = 0, i;
  int32_t k;
  mgopt_status s = mgopt__vfy_index_block(v, fr, f->body, &last, &n);
  if (s) return s;
  if (n != fr->nops)
    return mgopt__vfy_fail(v, NULL, "op index of '%s' counts %lld ops, the function has %lld", f->name,
                           (long long)fr->nops, (long long)n);
  if (fr->broken || !fr->kinds) return MGOPT_OK;
  for (k = 0; k < MGOPT_OP__COUNT; k++) {
    const mgopt__kind_list *kl = &fr->kinds[k];
    uint64_t prev = 0;
    int64_t holes = 0;
    for (i = 0; i < kl->n; i++) {
      const mgopt_op *op = kl->ops[i];
      if (!op) {
        holes++;
        continue;
      }
      if (op->kind != k || MGOPT__OP_REC(op)->slot != i || (op->flags & MGOPT_OP_ERASED))
        return mgopt__vfy_fail(v, op, "op index: a stale entry in the list of kind %d", (int)k);
      if (!kl->unsorted && MGOPT__OP_REC(op)->label <= prev)
        return mgopt__vfy_fail(v, op, "op index: list of kind %d out of order", (int)k);
      prev = MGOPT__OP_REC(op)->label;
    }
    if (holes != kl->holes || (kl->n && !kl->ops[kl->n - 1]))
      return mgopt__vfy_fail(v, NULL, "op index of '%s': list of kind %d miscounts its holes", f->name, (int)k);
    listed += kl->n - kl->holes;
  }
  if (listed != n)
    return mgopt__vfy_fail(v, NULL, "op index of '%s' lists %lld ops, the function has %lld", f->name,
                           (long long)listed, (long long)n);
  return MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_program_verify(mgopt_program *p, mgopt_diag *d) {
  mgopt__vfy v;
  mgopt_status s = MGOPT_OK;
  int32_t i;
  mgopt_diag_clear(d);
  memset(&v, 0, sizeof v);
  v.p = p;
  v.d = d;
  if (p->status) return mgopt_diag_set(d, p->status, "the program ran out of memory earlier");
  v.nids = p->next_id;
  v.visible = (uint8_t *)mgopt__heap_realloc(&p->alloc, NULL, 0, v.nids);
  v.count = (int32_t *)mgopt__heap_realloc(&p->alloc, NULL, 0, sizeof(int32_t) * v.nids);
  if (!v.visible || !v.count) {
    s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "verifier: out of memory");
    goto done;
  }
  memset(v.visible, 0, v.nids);
  memset(v.count, 0, sizeof(int32_t) * v.nids);
  for (i = 0; i < p->nfuncs && !s; i++) {
    mgopt_function *f = p->funcs[i];
    if (!f->body || f->body->parent_op) {
      s = mgopt__vfy_fail(&v, NULL, "function '%s' has no body", f->name);
      break;
    }
    s = mgopt__vfy_block(&v, f->body, f);
    if (!s) s = mgopt__vfy_index(&v, f);
    /* function scopes are separate */
    if (!s) memset(v.visible, 0, v.nids);
  }
  if (!s) s = mgopt__vfy_uses(&v);
done:
  if (v.visible) mgopt__heap_free(&p->alloc, v.visible, v.nids);
  if (v.count) mgopt__heap_free(&p->alloc, v.count, sizeof(int32_t) * v.nids);
  if (v.seen) mgopt__heap_free(&p->alloc, v.seen, (size_t)v.seen_cap * sizeof(mgopt_value *));
  return s;
}
/* src/core/mil_print.c — prints a program as canonical .mil text (what mgopt_mil_parse reads back exactly). */

/* Canonical form, in short (the manual and core/mil_parse.c have the rest):

       main[CoreML7](%x: (2, 4, fp32), %y: (s0, 4, fp32)) {
         %w: (4, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6], [7, 8]])
         %m: (2, 2, fp32) = matmul(x=%x, y=%w, transpose_x=false)
       } -> (%m)

   Functions are separated by one blank line; every level indents 2 spaces;
   an op's nested blocks follow it 2 spaces deeper. Operand slots print
   first (stored order), then attributes (stored order), then name="..." only
   when it differs from the first output's name. Names print bare when the
   parser's bare-name rule reads them back whole, else quoted with escapes.
   Invariant: for every printable program P, print(parse(print(P))) equals
   print(P) byte for byte. */

/* Deeper IR than this is refused rather than printed with unbounded recursion. */
#define MGOPT__MILW_MAX_DEPTH 1024

typedef struct mgopt__milw {
  mgopt_buf *out;
  int64_t elide_above;
} mgopt__milw;

static int mgopt__milw_name_char(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

/* Value names: [A-Za-z0-9_.] plus ':' when a name character follows. */
static int mgopt__milw_value_name_plain(const char *s) {
  size_t i;
  if (!s[0]) return 0;
  for (i = 0; s[i]; i++) {
    if (mgopt__milw_name_char((unsigned char)s[i])) continue;
    if (s[i] == ':' && mgopt__milw_name_char((unsigned char)s[i + 1])) continue;
    return 0;
  }
  return 1;
}

/* Identifiers (op types, keys, block and function names, opsets): as value
   names, and ':' may also be followed by ':' ("onnx::Foo"). */
static int mgopt__milw_ident_plain(const char *s) {
  size_t i;
  if (!s[0]) return 0;
  for (i = 0; s[i]; i++) {
    if (mgopt__milw_name_char((unsigned char)s[i])) continue;
    if (s[i] == ':' && (s[i + 1] == ':' || mgopt__milw_name_char((unsigned char)s[i + 1]))) continue;
    return 0;
  }
  return 1;
}

/* Symbolic dims: an identifier that cannot be read as a number, '?' or '*'. */
static int mgopt__milw_sym_plain(const char *s) {
  int c = (unsigned char)s[0];
  if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')) return 0;
  return mgopt__milw_ident_plain(s);
}

static void mgopt__milw_quoted(mgopt__milw *w, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  size_t i, run = 0;
  mgopt__buf_putc(w->out, '"');
  for (i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    const char *esc = NULL;
    char xb[4];
    if (c == '"') esc = "\\\"";
    else if (c == '\\') esc = "\\\\";
    else if (c == '\n') esc = "\\n";
    else if (c == '\t') esc = "\\t";
    else if (c == '\r') esc = "\\r";
    else if (c < 0x20 || c == 0x7f) {
      xb[0] = '\\';
      xb[1] = 'x';
      xb[2] = hex[c >> 4];
      xb[3] = hex[c & 15];
      mgopt__buf_putn(w->out, s + run, i - run);
      mgopt__buf_putn(w->out, xb, 4);
      run = i + 1;
      continue;
    }
    if (esc) {
      mgopt__buf_putn(w->out, s + run, i - run);
      mgopt__buf_puts(w->out, esc);
      run = i + 1;
    }
  }
  mgopt__buf_putn(w->out, s + run, n - run);
  mgopt__buf_putc(w->out, '"');
}

static void mgopt__milw_ident(mgopt__milw *w, const char *s) {
  if (!s) s = "";
  if (mgopt__milw_ident_plain(s)) mgopt__buf_puts(w->out, s);
  else mgopt__milw_quoted(w, s, strlen(s));
}

static void mgopt__milw_hex(mgopt__milw *w, const uint8_t *b, size_t n) {
  static const char hex[] = "0123456789abcdef";
  size_t i;
  mgopt__buf_putc(w->out, '"');
  for (i = 0; i < n; i++) {
    char x[2];
    x[0] = hex[b[i] >> 4];
    x[1] = hex[b[i] & 15];
    mgopt__buf_putn(w->out, x, 2);
  }
  mgopt__buf_putc(w->out, '"');
}

/* "%name"; an unnamed value gets a deterministic stand-in from its id. */
static void mgopt__milw_ref(mgopt__milw *w, const mgopt_value *v) {
  if (!v) {
    mgopt__buf_putc(w->out, '_');
    return;
  }
  mgopt__buf_putc(w->out, '%');
  if (!v->name) mgopt__buf_printf(w->out, "__v%lu", (unsigned long)v->id);
  else if (mgopt__milw_value_name_plain(v->name)) mgopt__buf_puts(w->out, v->name);
  else mgopt__milw_quoted(w, v->name, strlen(v->name));
}

static void mgopt__milw_type(mgopt__milw *w, const mgopt_type *t) {
  int32_t i;
  if (t->kind == MGOPT_TYPE_OTHER) {
    mgopt__buf_puts(w->out, "opaque(");
    mgopt__milw_hex(w, t->other, t->other ? t->other_len : 0);
    mgopt__buf_putc(w->out, ')');
    return;
  }
  if (t->kind == MGOPT_TYPE_STATE) mgopt__buf_puts(w->out, "state");
  mgopt__buf_putc(w->out, '(');
  if (t->rank < 0) mgopt__buf_puts(w->out, "*, ");
  for (i = 0; i < t->rank; i++) {
    mgopt_dim dm = t->dims ? t->dims[i] : mgopt_dim_unknown();
    if (dm.sym) {
      if (mgopt__milw_sym_plain(dm.sym)) mgopt__buf_puts(w->out, dm.sym);
      else mgopt__milw_quoted(w, dm.sym, strlen(dm.sym));
    } else if (dm.v >= 0) {
      mgopt__buf_printf(w->out, "%lld", (long long)dm.v);
    } else {
      mgopt__buf_putc(w->out, '?');
    }
    mgopt__buf_puts(w->out, ", ");
  }
  mgopt__buf_puts(w->out, mgopt_dtype_name((mgopt_dtype)t->dtype));
  mgopt__buf_putc(w->out, ')');
}

/* Value declaration: "%name: TYPE" ("_" for an absent output). */
static void mgopt__milw_decl(mgopt__milw *w, const mgopt_value *v, int is_const) {
  if (v->flags & MGOPT_VALUE_ABSENT) {
    mgopt__buf_putc(w->out, '_');
    return;
  }
  mgopt__milw_ref(w, v);
  mgopt__buf_puts(w->out, ": ");
  mgopt__milw_type(w, &v->type);
  if (is_const) mgopt__buf_putc(w->out, '*');
}

static int mgopt__milw_bits_eq(const void *a, const void *b, size_t n) { return memcmp(a, b, n) == 0; }

/* Integral values as integers, others as the shortest %g text that the
   parser's conversion for `dt` maps back to the same bits. No ".0" is
   forced: inside a typed tensor the dtype says float. */
static void mgopt__milw_real(mgopt__milw *w, double v, mgopt_dtype dt) {
  char buf[48];
  int prec;
  if (v != v) {
    mgopt__buf_puts(w->out, "nan");
    return;
  }
  if (v == HUGE_VAL) {
    mgopt__buf_puts(w->out, "inf");
    return;
  }
  if (v == -HUGE_VAL) {
    mgopt__buf_puts(w->out, "-inf");
    return;
  }
  if (v == floor(v) && v > -1e16 && v < 1e16) {
    /* integral values read better as integers than as 1e+06 (and are exact) */
    snprintf(buf, sizeof buf, "%.0f", v);
    mgopt__buf_puts(w->out, buf);
    return;
  }
  for (prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (dt == MGOPT_DT_FP64) {
      double r = strtod(buf, NULL);
      if (mgopt__milw_bits_eq(&r, &v, sizeof r)) break;
    } else {
      float f = strtof(buf, NULL), want = (float)v;
      if (dt == MGOPT_DT_FP16) {
        if (mgopt_f32_to_f16(f) == mgopt_f32_to_f16(want)) break;
      } else if (dt == MGOPT_DT_BF16) {
        if (mgopt_f32_to_bf16(f) == mgopt_f32_to_bf16(want)) break;
      } else if (mgopt__milw_bits_eq(&f, &want, sizeof f)) {
        break;
      }
    }
  }
  mgopt__buf_puts(w->out, buf);
}

/* One element of a tensor. Complex elements print as [re, im]; fp8 elements
   as their raw bit patterns (0..255). */
static void mgopt__milw_elem(mgopt__milw *w, const mgopt_tensor *t, int64_t i) {
  const uint8_t *d = (const uint8_t *)t->data;
  mgopt_dtype dt = (mgopt_dtype)t->dtype;
  switch (dt) {
    case MGOPT_DT_BOOL:
      mgopt__buf_puts(w->out, d[i] ? "true" : "false");
      return;
    case MGOPT_DT_STRING: {
      const mgopt_str *s = (const mgopt_str *)t->data + i;
      mgopt__milw_quoted(w, s->ptr ? s->ptr : "", s->ptr ? s->len : 0);
      return;
    }
    case MGOPT_DT_FP16: case MGOPT_DT_BF16: case MGOPT_DT_FP32: case MGOPT_DT_FP64:
      mgopt__milw_real(w, mgopt_tensor_get_f64(t, i), dt);
      return;
    case MGOPT_DT_COMPLEX64: {
      float re, im;
      memcpy(&re, d + 8 * i, 4);
      memcpy(&im, d + 8 * i + 4, 4);
      mgopt__buf_putc(w->out, '[');
      mgopt__milw_real(w, re, MGOPT_DT_FP32);
      mgopt__buf_puts(w->out, ", ");
      mgopt__milw_real(w, im, MGOPT_DT_FP32);
      mgopt__buf_putc(w->out, ']');
      return;
    }
    case MGOPT_DT_COMPLEX128: {
      double re, im;
      memcpy(&re, d + 16 * i, 8);
      memcpy(&im, d + 16 * i + 8, 8);
      mgopt__buf_putc(w->out, '[');
      mgopt__milw_real(w, re, MGOPT_DT_FP64);
      mgopt__buf_puts(w->out, ", ");
      mgopt__milw_real(w, im, MGOPT_DT_FP64);
      mgopt__buf_putc(w->out, ']');
      return;
    }
    case MGOPT_DT_FP8E4M3FN: case MGOPT_DT_FP8E4M3FNUZ: case MGOPT_DT_FP8E5M2:
    case MGOPT_DT_FP8E5M2FNUZ:
      mgopt__buf_printf(w->out, "%u", (unsigned)d[i]);
      return;
    case MGOPT_DT_UINT64: {
      uint64_t u;
      memcpy(&u, d + 8 * i, 8);
      mgopt__buf_printf(w->out, "%llu", (unsigned long long)u);
      return;
    }
    case MGOPT_DT_UNKNOWN:
      mgopt__buf_putc(w->out, '0');
      return;
    default:
      mgopt__buf_printf(w->out, "%lld", (long long)mgopt_tensor_get_i64(t, i));
      return;
  }
}

/* The nested-list literal of a tensor, shaped by t->shape; iterative, so the
   rank costs no stack. A tensor without elements prints as [] whatever its
   shape (the parser takes the shape from the type). */
static void mgopt__milw_tensor_body(mgopt__milw *w, const mgopt_tensor *t) {
  int32_t L = t->rank, j;
  int64_t k;
  if (w->elide_above > 0 && t->numel > w->elide_above) {
    mgopt__buf_puts(w->out, "[...]");
    return;
  }
  if (t->numel <= 0 || !t->data) {
    mgopt__buf_puts(w->out, "[]");
    return;
  }
  if (L <= 0) {
    mgopt__milw_elem(w, t, 0);
    return;
  }
  for (k = 0; k < t->numel && !w->out->oom; k++) {
    int64_t prod = 1;
    if (k) mgopt__buf_puts(w->out, ", ");
    for (j = L - 1; j >= 0; j--) {
      prod *= t->shape[j];
      if (k % prod) break;
      mgopt__buf_putc(w->out, '[');
    }
    mgopt__milw_elem(w, t, k);
    prod = 1;
    for (j = L - 1; j >= 0; j--) {
      prod *= t->shape[j];
      if ((k + 1) % prod) break;
      mgopt__buf_putc(w->out, ']');
    }
  }
}

static void mgopt__milw_tensor_type(mgopt__milw *w, const mgopt_tensor *t) {
  int32_t i;
  mgopt__buf_putc(w->out, '(');
  for (i = 0; i < t->rank; i++) mgopt__buf_printf(w->out, "%lld, ", (long long)t->shape[i]);
  mgopt__buf_puts(w->out, mgopt_dtype_name((mgopt_dtype)t->dtype));
  mgopt__buf_putc(w->out, ')');
}

/* A const's val prints bare when the declared output type describes the
   tensor exactly (the parser rebuilds it from that type). */
static int mgopt__milw_const_bare(const mgopt_op *op, const mgopt_attr *a) {
  const mgopt_type *ty;
  const mgopt_tensor *t = a->u.t;
  int32_t i;
  if (op->kind != MGOPT_OP_const || strcmp(a->name, "val") != 0 || !t || op->nouts < 1) return 0;
  if (op->outs[0]->flags & MGOPT_VALUE_ABSENT) return 0;
  ty = &op->outs[0]->type;
  if (!mgopt_type_is_static(ty) || ty->dtype != t->dtype || ty->rank != t->rank) return 0;
  if (t->dtype == MGOPT_DT_UNKNOWN) return 0;
  for (i = 0; i < t->rank; i++)
    if (ty->dims[i].v != t->shape[i]) return 0;
  return 1;
}

static void mgopt__milw_attr(mgopt__milw *w, const mgopt_op *op, const mgopt_attr *a) {
  char buf[48];
  int64_t k;
  switch ((mgopt_attr_kind)a->kind) {
    case MGOPT_ATTR_BOOL:
      mgopt__buf_puts(w->out, a->u.i ? "true" : "false");
      return;
    case MGOPT_ATTR_INT:
      mgopt__buf_printf(w->out, "%lld", (long long)a->u.i);
      return;
    case MGOPT_ATTR_FLOAT:
      mgopt__fmt_f64(buf, a->u.f);
      mgopt__buf_puts(w->out, buf);
      return;
    case MGOPT_ATTR_STRING:
      mgopt__milw_quoted(w, a->u.s.ptr ? a->u.s.ptr : "", a->u.s.ptr ? a->u.s.len : 0);
      return;
    case MGOPT_ATTR_BOOLS: case MGOPT_ATTR_INTS: case MGOPT_ATTR_FLOATS: case MGOPT_ATTR_STRINGS:
      if (a->n <= 0) {
        mgopt__buf_puts(w->out, a->kind == MGOPT_ATTR_BOOLS    ? "bools[]"
                                : a->kind == MGOPT_ATTR_FLOATS ? "floats[]"
                                : a->kind == MGOPT_ATTR_STRINGS ? "strings[]"
                                                                : "[]");
        return;
      }
      mgopt__buf_putc(w->out, '[');
      for (k = 0; k < a->n && !w->out->oom; k++) {
        if (k) mgopt__buf_puts(w->out, ", ");
        if (a->kind == MGOPT_ATTR_BOOLS) {
          mgopt__buf_puts(w->out, a->u.ints[k] ? "true" : "false");
        } else if (a->kind == MGOPT_ATTR_INTS) {
          mgopt__buf_printf(w->out, "%lld", (long long)a->u.ints[k]);
        } else if (a->kind == MGOPT_ATTR_FLOATS) {
          mgopt__fmt_f64(buf, a->u.floats[k]);
          mgopt__buf_puts(w->out, buf);
        } else {
          const mgopt_str *s = &a->u.strs[k];
          mgopt__milw_quoted(w, s->ptr ? s->ptr : "", s->ptr ? s->len : 0);
        }
      }
      mgopt__buf_putc(w->out, ']');
      return;
    case MGOPT_ATTR_TENSOR:
      if (!a->u.t) {
        mgopt__buf_puts(w->out, "none");
        return;
      }
      if (mgopt__milw_const_bare(op, a)) {
        mgopt__milw_tensor_body(w, a->u.t);
        return;
      }
      mgopt__buf_puts(w->out, "tensor<");
      mgopt__milw_tensor_type(w, a->u.t);
      mgopt__buf_puts(w->out, ">(");
      mgopt__milw_tensor_body(w, a->u.t);
      mgopt__buf_putc(w->out, ')');
      return;
    case MGOPT_ATTR_BYTES:
      mgopt__buf_printf(w->out, "bytes<%ld>(", (long)a->tag);
      mgopt__milw_hex(w, a->u.bytes, a->u.bytes && a->n > 0 ? (size_t)a->n : 0);
      mgopt__buf_putc(w->out, ')');
      return;
    default:
      mgopt__buf_puts(w->out, "none");
      return;
  }
}

static void mgopt__milw_indent(mgopt__milw *w, int indent) {
  static const char spaces[] = "                                ";
  while (indent > 32) {
    mgopt__buf_putn(w->out, spaces, 32);
    indent -= 32;
  }
  mgopt__buf_putn(w->out, spaces, (size_t)indent);
}

static mgopt_status mgopt__milw_block(mgopt__milw *w, const mgopt_block *b, int indent, int depth,
                                      const char *header_name, const char *opset);

static int mgopt__milw_name_differs(const mgopt_op *op) {
  const mgopt_value *o;
  if (!op->name) return 0;
  if (op->nouts == 0) return 1;
  o = op->outs[0];
  if (o->flags & MGOPT_VALUE_ABSENT) return 1;
  if (!o->name) return 1;
  return strcmp(o->name, op->name) != 0;
}

static mgopt_status mgopt__milw_op(mgopt__milw *w, const mgopt_op *op, int indent, int depth) {
  int32_t i, k;
  int first = 1;
  int is_const = op->kind == MGOPT_OP_const;
  mgopt__milw_indent(w, indent);
  for (i = 0; i < op->nouts; i++) {
    if (i) mgopt__buf_puts(w->out, ", ");
    mgopt__milw_decl(w, op->outs[i], is_const);
  }
  if (op->nouts) mgopt__buf_puts(w->out, " = ");
  mgopt__milw_ident(w, op->type);
  mgopt__buf_putc(w->out, '(');
  for (i = 0; i < op->nslots; i++) {
    const mgopt_slot *s = &op->slots[i];
    if (!s->is_list && s->n == 0) continue;
    if (!first) mgopt__buf_puts(w->out, ", ");
    first = 0;
    mgopt__milw_ident(w, s->name);
    mgopt__buf_putc(w->out, '=');
    if (s->is_list) {
      mgopt__buf_putc(w->out, '(');
      for (k = 0; k < s->n; k++) {
        if (k) mgopt__buf_puts(w->out, ", ");
        mgopt__milw_ref(w, s->uses[k].value);
      }
      mgopt__buf_putc(w->out, ')');
    } else {
      mgopt__milw_ref(w, s->uses[0].value);
    }
  }
  for (i = 0; i < op->nattrs; i++) {
    if (!first) mgopt__buf_puts(w->out, ", ");
    first = 0;
    mgopt__milw_ident(w, op->attrs[i].name);
    mgopt__buf_putc(w->out, '=');
    mgopt__milw_attr(w, op, &op->attrs[i]);
  }
  if (op->flags & MGOPT_OP_HAS_EFFECTS) {
    if (!first) mgopt__buf_puts(w->out, ", ");
    first = 0;
    mgopt__buf_puts(w->out, "has_effects=true");
  }
  if (mgopt__milw_name_differs(op)) {
    if (!first) mgopt__buf_puts(w->out, ", ");
    mgopt__buf_puts(w->out, "name=");
    mgopt__milw_quoted(w, op->name, strlen(op->name));
  }
  mgopt__buf_puts(w->out, ")\n");
  for (i = 0; i < op->nblocks; i++) {
    mgopt_status s = mgopt__milw_block(w, op->blocks[i], indent + 2, depth + 1, NULL, NULL);
    if (s) return s;
  }
  return MGOPT_OK;
}

/* A block: "NAME(%arg: T, ...) {", its ops two spaces deeper, "} -> (...)".
   A function body prints with the function's name and opset as header. */
static mgopt_status mgopt__milw_block(mgopt__milw *w, const mgopt_block *b, int indent, int depth,
                                      const char *header_name, const char *opset) {
  const mgopt_op *op;
  int32_t i;
  if (depth > MGOPT__MILW_MAX_DEPTH) return MGOPT_ERR_LIMIT;
  mgopt__milw_indent(w, indent);
  mgopt__milw_ident(w, header_name ? header_name : b->name);
  if (opset) {
    mgopt__buf_putc(w->out, '[');
    mgopt__milw_ident(w, opset);
    mgopt__buf_putc(w->out, ']');
  }
  if (header_name && b->func && b->func->nattrs > 0) {
    /* the function's own attributes; tensors print in their typed form */
    mgopt_op none;
    memset(&none, 0, sizeof none);
    none.kind = MGOPT_OP_OPAQUE;
    mgopt__buf_puts(w->out, " attributes(");
    for (i = 0; i < b->func->nattrs; i++) {
      if (i) mgopt__buf_puts(w->out, ", ");
      mgopt__milw_ident(w, b->func->attrs[i].name);
      mgopt__buf_putc(w->out, '=');
      mgopt__milw_attr(w, &none, &b->func->attrs[i]);
    }
    mgopt__buf_puts(w->out, ") ");
  }
  mgopt__buf_putc(w->out, '(');
  for (i = 0; i < b->nargs; i++) {
    if (i) mgopt__buf_puts(w->out, ", ");
    mgopt__milw_ref(w, b->args[i]);
    mgopt__buf_puts(w->out, ": ");
    mgopt__milw_type(w, &b->args[i]->type);
  }
  mgopt__buf_puts(w->out, ") {\n");
  for (op = b->first; op && !w->out->oom; op = op->next) {
    mgopt_status s = mgopt__milw_op(w, op, indent + 2, depth);
    if (s) return s;
  }
  mgopt__milw_indent(w, indent);
  mgopt__buf_puts(w->out, "} -> (");
  for (i = 0; i < b->nouts; i++) {
    if (i) mgopt__buf_puts(w->out, ", ");
    mgopt__milw_ref(w, b->outs[i]->value);
  }
  mgopt__buf_puts(w->out, ")\n");
  return MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_mil_print(mgopt_program *p, const mgopt_print_options *opts, mgopt_buf *out) {
  mgopt__milw w;
  int32_t i;
  if (!p || !out) return MGOPT_ERR_INVALID_ARG;
  w.out = out;
  w.elide_above = opts ? opts->elide_above : 0;
  /* an empty program still yields a NUL-terminated (empty) buffer */
  mgopt__buf_putn(out, "", 0);
  for (i = 0; i < p->nfuncs; i++) {
    const mgopt_function *f = p->funcs[i];
    mgopt_status s;
    if (i) mgopt__buf_putc(out, '\n');
    s = mgopt__milw_block(&w, f->body, 0, 0, f->name, f->opset);
    if (s) return s;
  }
  return out->oom ? MGOPT_ERR_NOMEM : MGOPT_OK;
}
/* src/core/mil_parse.c — parses .mil text into a program: recursive descent over bytes, scoped %name resolution, typed literals. */

/* Grammar (whitespace, newlines and '#' comments allowed between any tokens):

     program  := function*
     function := WORD ('[' WORD ']')? fattrs? args '{' (wrapper | body) outputs? '}'?
     fattrs   := 'attributes' '(' WORD '=' literal (',' ...)* ')'   the function's own
               attributes (mgopt_function.attrs), e.g. implements="embedding_lookup"
     wrapper  := WORD '(' ')' '{' body outputs?          (MIL printouts' block0)
     args     := '(' (%name (':' type)? (',' ...)*)? ')'
     body     := op* '}'
     outputs  := '->' '(' (ref | '_') (',' ...)* ')'
     op       := (outdecl (',' outdecl)* '=')? WORD '(' arg (',' arg)* ')' block*
     outdecl  := %name (':' type)? | '_' (':' type)?
     block    := WORD args '{' body outputs?
     arg      := WORD '=' (ref | '(' refs ')' | literal)    name="..." sets the op name
     type     := '(' dims, dtype ')' ('*' | '^')? ('(' Tensor|Scalar|List|State ')')?
               | opaque("HEX")

   WORD is an identifier or a quoted string. A %ref resolves to the most recent
   visible definition (function inputs, earlier ops of the block and of the
   enclosing blocks, the block's own args); later definitions shadow. A
   literal is an attribute; the val of a const is read with the dtype and
   shape of the const's declared output type. Nothing is verified here: the
   declared types are recorded as written. Every error stops the parse, names
   line:col and frees everything. */

#define MGOPT__MILP_NUM_MAX 127 /* longest number literal, in bytes */

typedef struct mgopt__milp_def {
  const char *name;
  mgopt_value *v;
  int64_t prev; /* previous visible definition of the same name, -1 = none */
} mgopt__milp_def;

typedef struct mgopt__milp_out {
  const char *name;
  mgopt_type type;
  int absent;
} mgopt__milp_out;

typedef struct mgopt__milp_slotrec {
  const char *name;
  int32_t is_list;
  int64_t n, first; /* values [first, first + n) of the vals scratch */
} mgopt__milp_slotrec;

typedef struct mgopt__milp_key {
  const char *name;
  size_t pos;
} mgopt__milp_key;

enum { MGOPT__MILP_EL_BOOL = 1, MGOPT__MILP_EL_INT, MGOPT__MILP_EL_FLOAT, MGOPT__MILP_EL_STR };

/* A list element read before the list's kind is known. */
typedef struct mgopt__milp_el {
  int kind;
  int big; /* integer outside int64 */
  int64_t i;
  double f;
  mgopt_str s;
  size_t pos;
} mgopt__milp_el;

typedef struct mgopt__milp_num {
  int is_float, neg, big, special; /* special: inf or nan */
  uint64_t mag;
  size_t start, end;
} mgopt__milp_num;

typedef struct mgopt__milp {
  const char *s;
  size_t n, pos;
  mgopt_program *p;
  mgopt_diag *d;
  const mgopt_allocator *alloc;
  int max_depth;
  int64_t max_elements;
  int failed;
  mgopt_status status; /* of the first error */
  mgopt_function *fn;
  /* where each op starts, by ascending op id; line and column counted up to lc_pos */
  mgopt__srcpos *places;
  int64_t nplaces, places_cap;
  size_t lc_pos, lc_ls;
  int64_t lc_line;
  /* scope: definitions in order, plus name -> latest visible definition */
  mgopt__milp_def *defs;
  int64_t ndefs, defs_cap;
  mgopt__map visible; /* interned name -> 1 + index in defs of its visible definition, 0 = none */
  /* heap scratch, reused; none is live across a nested block */
  char *sbuf;
  int64_t sbuf_cap;
  size_t slen;
  mgopt__milp_out *outs;
  int64_t outs_cap;
  mgopt__milp_slotrec *slots;
  int64_t slots_cap;
  mgopt_value **vals;
  int64_t vals_cap;
  mgopt_attr *attrs;
  int64_t attrs_cap;
  mgopt__milp_key *keys;
  int64_t keys_cap;
  mgopt__milp_el *els;
  int64_t els_cap;
  mgopt_dim *dims;
  int64_t dims_cap;
} mgopt__milp;

/* ---------------------------------------------------------------- errors */

static int mgopt__milp_fail(mgopt__milp *P, size_t pos, mgopt_status st, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Records the first error (later ones are consequences) and returns 0. */
static int mgopt__milp_fail(mgopt__milp *P, size_t pos, mgopt_status st, const char *fmt, ...) {
  va_list ap;
  size_t i, ls = 0;
  int64_t line = 1;
  if (P->failed) return 0;
  P->failed = 1;
  P->status = st;
  if (!P->d) return 0;
  if (pos > P->n) pos = P->n;
  for (i = 0; i < pos; i++)
    if (P->s[i] == '\n') {
      line++;
      ls = i + 1;
    }
  P->d->status = st;
  P->d->line = line > INT_MAX ? INT_MAX : (int)line;
  P->d->col = pos - ls + 1 > (size_t)INT_MAX ? INT_MAX : (int)(pos - ls + 1);
  P->d->offset = (int64_t)pos;
  P->d->op[0] = 0;
  va_start(ap, fmt);
  vsnprintf(P->d->msg, sizeof P->d->msg, fmt, ap);
  va_end(ap);
  return 0;
}

static int mgopt__milp_oom(mgopt__milp *P) {
  mgopt__oom(P->p);
  return mgopt__milp_fail(P, P->pos, MGOPT_ERR_NOMEM, "out of memory");
}

static int mgopt__milp_reserve(mgopt__milp *P, void **arr, int64_t *cap, int64_t need, size_t elem) {
  if (need <= *cap) return 1;
  if (!mgopt__grow(P->alloc, arr, cap, need, elem)) return mgopt__milp_oom(P);
  return 1;
}

/* Describes the byte at pos for "expected X, found Y" messages. */
static const char *mgopt__milp_found(const mgopt__milp *P, size_t pos, char *buf) {
  unsigned char c;
  if (pos >= P->n) return "end of input";
  c = (unsigned char)P->s[pos];
  if (c > 0x20 && c < 0x7f) snprintf(buf, 16, "'%c'", c);
  else snprintf(buf, 16, "byte 0x%02x", c);
  return buf;
}

static int mgopt__milp_expected(mgopt__milp *P, const char *what) {
  char buf[16];
  return mgopt__milp_fail(P, P->pos, MGOPT_ERR_PARSE, "expected %s, found %s", what,
                          mgopt__milp_found(P, P->pos, buf));
}

/* ---------------------------------------------------------------- lexing */

static int mgopt__milp_name_char(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

static int mgopt__milp_digit(int c) { return c >= '0' && c <= '9'; }

static int mgopt__milp_at(const mgopt__milp *P, size_t i) {
  return i < P->n ? (unsigned char)P->s[i] : -1;
}

static size_t mgopt__milp_ws_from(const mgopt__milp *P, size_t i) {
  while (i < P->n) {
    char c = P->s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      i++;
    } else if (c == '#') {
      while (i < P->n && P->s[i] != '\n') i++;
    } else {
      break;
    }
  }
  return i;
}

static void mgopt__milp_ws(mgopt__milp *P) { P->pos = mgopt__milp_ws_from(P, P->pos); }

static int mgopt__milp_peek(mgopt__milp *P) {
  mgopt__milp_ws(P);
  return mgopt__milp_at(P, P->pos);
}

static int mgopt__milp_accept(mgopt__milp *P, int c) {
  if (mgopt__milp_peek(P) != c) return 0;
  P->pos++;
  return 1;
}

static int mgopt__milp_expect(mgopt__milp *P, int c) {
  char what[8];
  if (mgopt__milp_accept(P, c)) return 1;
  snprintf(what, sizeof what, "'%c'", c);
  return mgopt__milp_expected(P, what);
}

/* Identifier length at i: [A-Za-z0-9_.], and ':' followed by ':' or a name character. */
static size_t mgopt__milp_ident_len(const mgopt__milp *P, size_t i) {
  size_t j = i;
  while (j < P->n) {
    int c = (unsigned char)P->s[j];
    int nx = mgopt__milp_at(P, j + 1);
    if (mgopt__milp_name_char(c) || (c == ':' && (nx == ':' || mgopt__milp_name_char(nx)))) j++;
    else break;
  }
  return j - i;
}

/* Value-name length at i: like an identifier, but ':' only before a name character. */
static size_t mgopt__milp_vname_len(const mgopt__milp *P, size_t i) {
  size_t j = i;
  while (j < P->n) {
    int c = (unsigned char)P->s[j];
    if (mgopt__milp_name_char(c) || (c == ':' && mgopt__milp_name_char(mgopt__milp_at(P, j + 1)))) j++;
    else break;
  }
  return j - i;
}

/* 1 if the identifier at pos is exactly `w` (length n). */
static int mgopt__milp_is_word(const mgopt__milp *P, size_t pos, const char *w) {
  size_t n = strlen(w);
  return mgopt__milp_ident_len(P, pos) == n && memcmp(P->s + pos, w, n) == 0;
}

static int mgopt__milp_hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int mgopt__milp_sput(mgopt__milp *P, char c) {
  if (!mgopt__milp_reserve(P, (void **)&P->sbuf, &P->sbuf_cap, (int64_t)P->slen + 2, 1)) return 0;
  P->sbuf[P->slen++] = c;
  return 1;
}

/* A quoted string at pos, decoded into sbuf[0..slen) (NUL-terminated). */
static int mgopt__milp_string(mgopt__milp *P) {
  size_t start = P->pos;
  P->slen = 0;
  P->pos++;
  for (;;) {
    int c = mgopt__milp_at(P, P->pos);
    if (c < 0) return mgopt__milp_fail(P, start, MGOPT_ERR_PARSE, "unterminated string");
    if (c == '"') {
      P->pos++;
      break;
    }
    if (c == '\\') {
      int e = mgopt__milp_at(P, P->pos + 1), ch;
      switch (e) {
        case 'n': ch = '\n'; break;
        case 't': ch = '\t'; break;
        case 'r': ch = '\r'; break;
        case '"': ch = '"'; break;
        case '\\': ch = '\\'; break;
        case '\'': ch = '\''; break;
        case 'x': {
          int h = mgopt__milp_hexval(mgopt__milp_at(P, P->pos + 2));
          int l = mgopt__milp_hexval(mgopt__milp_at(P, P->pos + 3));
          if (h < 0 || l < 0)
            return mgopt__milp_fail(P, P->pos, MGOPT_ERR_PARSE, "\\x needs two hex digits");
          if (!mgopt__milp_sput(P, (char)(h * 16 + l))) return 0;
          P->pos += 4;
          continue;
        }
        case -1: return mgopt__milp_fail(P, start, MGOPT_ERR_PARSE, "unterminated string");
        default: return mgopt__milp_fail(P, P->pos, MGOPT_ERR_PARSE, "unknown escape in string");
      }
      if (!mgopt__milp_sput(P, (char)ch)) return 0;
      P->pos += 2;
      continue;
    }
    if (c < 0x20 || c == 0x7f) {
      if (c == '\n') return mgopt__milp_fail(P, start, MGOPT_ERR_PARSE, "unterminated string");
      return mgopt__milp_fail(P, P->pos, MGOPT_ERR_PARSE,
                              "control byte 0x%02x in a string: write it as an escape", c);
    }
    if (!mgopt__milp_sput(P, (char)c)) return 0;
    P->pos++;
  }
  if (!mgopt__milp_reserve(P, (void **)&P->sbuf, &P->sbuf_cap, (int64_t)P->slen + 1, 1)) return 0;
  P->sbuf[P->slen] = 0;
  return 1;
}

/* Skips a quoted string at i without decoding; returns the index after it,
   or 0 when it is malformed (lookahead only: the real parse reports it). */
static size_t mgopt__milp_skip_string(const mgopt__milp *P, size_t i) {
  for (i++; i < P->n; i++) {
    char c = P->s[i];
    if (c == '"') return i + 1;
    if (c == '\\') i++;
    else if (c == '\n') return 0;
  }
  return 0;
}

/* Interns a name, refusing NUL bytes (names are C strings in the IR). */
static const char *mgopt__milp_intern(mgopt__milp *P, const char *s, size_t n, size_t at) {
  const char *r;
  if (n && memchr(s, 0, n)) {
    mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "NUL byte in a name");
    return NULL;
  }
  r = mgopt_program_intern(P->p, s, n);
  if (!r) mgopt__milp_oom(P);
  return r;
}

/* An identifier or quoted string at pos, interned. NULL (error reported) if
   neither is there; `what` names the expectation. */
static const char *mgopt__milp_word(mgopt__milp *P, const char *what) {
  size_t at, l;
  mgopt__milp_ws(P);
  at = P->pos;
  if (mgopt__milp_at(P, at) == '"') {
    if (!mgopt__milp_string(P)) return NULL;
    return mgopt__milp_intern(P, P->sbuf, P->slen, at);
  }
  l = mgopt__milp_ident_len(P, at);
  if (!l) {
    mgopt__milp_expected(P, what);
    return NULL;
  }
  P->pos += l;
  return mgopt__milp_intern(P, P->s + at, l, at);
}

/* ---- numbers */

static int mgopt__milp_num_start(const mgopt__milp *P, size_t i) {
  int c = mgopt__milp_at(P, i);
  if (c == '-' || c == '+') c = mgopt__milp_at(P, ++i);
  if (mgopt__milp_digit(c)) return 1;
  return mgopt__milp_is_word(P, i, "inf") || mgopt__milp_is_word(P, i, "nan");
}

static int mgopt__milp_number(mgopt__milp *P, mgopt__milp_num *x) {
  size_t i = P->pos;
  memset(x, 0, sizeof *x);
  x->start = i;
  if (mgopt__milp_at(P, i) == '-' || mgopt__milp_at(P, i) == '+') x->neg = P->s[i++] == '-';
  if (mgopt__milp_is_word(P, i, "inf") || mgopt__milp_is_word(P, i, "nan")) {
    x->is_float = x->special = 1;
    i += 3;
  } else {
    if (!mgopt__milp_digit(mgopt__milp_at(P, i)))
      return mgopt__milp_fail(P, x->start, MGOPT_ERR_PARSE, "expected a number");
    while (mgopt__milp_digit(mgopt__milp_at(P, i))) {
      unsigned dg = (unsigned)(P->s[i] - '0');
      if (x->mag > (UINT64_MAX - dg) / 10) x->big = 1;
      else x->mag = x->mag * 10 + dg;
      i++;
    }
    if (mgopt__milp_at(P, i) == '.') {
      x->is_float = 1;
      i++;
      while (mgopt__milp_digit(mgopt__milp_at(P, i))) i++;
    }
    if (mgopt__milp_at(P, i) == 'e' || mgopt__milp_at(P, i) == 'E') {
      size_t j = i + 1;
      if (mgopt__milp_at(P, j) == '+' || mgopt__milp_at(P, j) == '-') j++;
      if (mgopt__milp_digit(mgopt__milp_at(P, j))) {
        x->is_float = 1;
        i = j;
        while (mgopt__milp_digit(mgopt__milp_at(P, i))) i++;
      }
    }
  }
  if (mgopt__milp_name_char(mgopt__milp_at(P, i)))
    return mgopt__milp_fail(P, x->start, MGOPT_ERR_PARSE, "malformed number");
  x->end = i;
  if (i - x->start > MGOPT__MILP_NUM_MAX)
    return mgopt__milp_fail(P, x->start, MGOPT_ERR_LIMIT, "number literal longer than %d bytes",
                            MGOPT__MILP_NUM_MAX);
  P->pos = i;
  return 1;
}

static double mgopt__milp_num_f64(const mgopt__milp *P, const mgopt__milp_num *x) {
  char buf[MGOPT__MILP_NUM_MAX + 1];
  size_t n = x->end - x->start;
  memcpy(buf, P->s + x->start, n);
  buf[n] = 0;
  return strtod(buf, NULL);
}

static float mgopt__milp_num_f32(const mgopt__milp *P, const mgopt__milp_num *x) {
  char buf[MGOPT__MILP_NUM_MAX + 1];
  size_t n = x->end - x->start;
  memcpy(buf, P->s + x->start, n);
  buf[n] = 0;
  return strtof(buf, NULL);
}

/* A finite literal that converted to infinity. */
static int mgopt__milp_overflowed(const mgopt__milp_num *x, double v) {
  return !x->special && (v == HUGE_VAL || v == -HUGE_VAL);
}

/* Integer literal as int64; 0 if out of range. */
static int mgopt__milp_num_i64(const mgopt__milp_num *x, int64_t *out) {
  if (x->is_float || x->big) return 0;
  if (x->neg) {
    if (x->mag > (uint64_t)INT64_MAX + 1u) return 0;
    *out = x->mag == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)x->mag;
  } else {
    if (x->mag > (uint64_t)INT64_MAX) return 0;
    *out = (int64_t)x->mag;
  }
  return 1;
}

/* ---------------------------------------------------------------- scope */

/* The index in defs of name's visible definition, -1 = none. */
static int64_t mgopt__milp_visible(const mgopt__milp *P, const char *name) {
  const mgopt__map_slot *sl = mgopt__map_find(&P->visible, mgopt__map_ptr_key(name));
  return sl ? sl->v.i - 1 : -1;
}

static int mgopt__milp_define(mgopt__milp *P, const char *name, mgopt_value *v) {
  mgopt__map_slot *sl;
  if (!mgopt__milp_reserve(P, (void **)&P->defs, &P->defs_cap, P->ndefs + 1, sizeof *P->defs)) return 0;
  sl = mgopt__map_get(&P->visible, mgopt__map_ptr_key(name), NULL);
  if (!sl) return mgopt__milp_oom(P);
  P->defs[P->ndefs].name = name;
  P->defs[P->ndefs].v = v;
  P->defs[P->ndefs].prev = sl->v.i - 1;
  sl->v.i = ++P->ndefs;
  return 1;
}

static void mgopt__milp_scope_pop(mgopt__milp *P, int64_t mark) {
  while (P->ndefs > mark) {
    mgopt__milp_def *df = &P->defs[--P->ndefs];
    mgopt__map_slot *sl = mgopt__map_find(&P->visible, mgopt__map_ptr_key(df->name));
    if (sl) sl->v.i = df->prev + 1;
  }
}

/* "%name" at pos, interned. */
static const char *mgopt__milp_value_name(mgopt__milp *P) {
  size_t at = P->pos, l;
  P->pos++; /* '%' */
  if (mgopt__milp_at(P, P->pos) == '"') {
    if (!mgopt__milp_string(P)) return NULL;
    return mgopt__milp_intern(P, P->sbuf, P->slen, at);
  }
  l = mgopt__milp_vname_len(P, P->pos);
  if (!l) {
    mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "expected a value name after '%%'");
    return NULL;
  }
  P->pos += l;
  return mgopt__milp_intern(P, P->s + at + 1, l, at);
}

/* A reference "%name" (pos at '%'), resolved in the current scope. */
static int mgopt__milp_ref(mgopt__milp *P, mgopt_value **out) {
  size_t at = P->pos;
  const char *name = mgopt__milp_value_name(P);
  int64_t top;
  if (!name) return 0;
  top = mgopt__milp_visible(P, name);
  if (top < 0)
    return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "undefined value %%%.*s",
                            (int)(strlen(name) > 60 ? 60 : strlen(name)), name);
  *out = P->defs[top].v;
  return 1;
}

/* 1 if a lone '_' (an absent value) is at i, followed by one of `follow`. */
static int mgopt__milp_absent_at(const mgopt__milp *P, size_t i, const char *follow) {
  int c;
  if (mgopt__milp_at(P, i) != '_' || mgopt__milp_ident_len(P, i) != 1) return 0;
  c = mgopt__milp_at(P, mgopt__milp_ws_from(P, i + 1));
  return c > 0 && strchr(follow, c) != NULL;
}

/* ---------------------------------------------------------------- types */

static int mgopt__milp_hexbytes(mgopt__milp *P, size_t at, const uint8_t **out, size_t *nout) {
  size_t k, nb;
  uint8_t *b;
  if (P->slen % 2) return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "odd number of hex digits");
  nb = P->slen / 2;
  b = (uint8_t *)mgopt_program_alloc(P->p, nb, 8);
  if (!b) return mgopt__milp_oom(P);
  for (k = 0; k < nb; k++) {
    int h = mgopt__milp_hexval((unsigned char)P->sbuf[2 * k]);
    int l = mgopt__milp_hexval((unsigned char)P->sbuf[2 * k + 1]);
    if (h < 0 || l < 0) return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "expected hex digits");
    b[k] = (uint8_t)(h * 16 + l);
  }
  *out = b;
  *nout = nb;
  return 1;
}

/* "(d0, d1, ..., dtype)", state(d0, ..., dtype) or opaque("HEX"), without markers. */
static int mgopt__milp_type(mgopt__milp *P, mgopt_type *t) {
  int64_t nd = 0;
  int unknown_rank = 0, state = 0;
  size_t at;
  memset(t, 0, sizeof *t);
  t->rank = -1;
  mgopt__milp_ws(P);
  at = P->pos;
  if (mgopt__milp_is_word(P, at, "state") && mgopt__milp_at(P, at + 5) == '(') {
    P->pos += 5;
    state = 1;
  }
  if (mgopt__milp_is_word(P, at, "opaque")) {
    P->pos += 6;
    if (!mgopt__milp_expect(P, '(')) return 0;
    if (mgopt__milp_peek(P) != '"') return mgopt__milp_expected(P, "a hex string");
    at = P->pos;
    if (!mgopt__milp_string(P)) return 0;
    t->kind = MGOPT_TYPE_OTHER;
    t->rank = 0;
    if (!mgopt__milp_hexbytes(P, at, &t->other, &t->other_len)) return 0;
    return mgopt__milp_expect(P, ')');
  }
  if (!mgopt__milp_accept(P, '(')) return mgopt__milp_expected(P, "a type '('");
  for (;;) {
    int c = mgopt__milp_peek(P);
    size_t it = P->pos;
    mgopt_dim dm = mgopt_dim_unknown();
    if (c == '*' && nd == 0 && !unknown_rank) {
      P->pos++;
      unknown_rank = 1;
      if (!mgopt__milp_expect(P, ',')) return 0;
      continue;
    }
    if (c == '?') {
      P->pos++;
    } else if (mgopt__milp_digit(c) || (c == '-' && mgopt__milp_digit(mgopt__milp_at(P, it + 1)))) {
      mgopt__milp_num x;
      if (!mgopt__milp_number(P, &x)) return 0;
      if (x.is_float) return mgopt__milp_fail(P, it, MGOPT_ERR_PARSE, "a dimension must be an integer");
      if (x.big || x.mag > (uint64_t)INT64_MAX)
        return mgopt__milp_fail(P, it, MGOPT_ERR_PARSE, "dimension out of range");
      if (!x.neg) dm.v = (int64_t)x.mag; /* negative: unknown */
    } else if (c == '"') {
      if (!mgopt__milp_string(P)) return 0;
      dm.sym = mgopt__milp_intern(P, P->sbuf, P->slen, it);
      if (!dm.sym) return 0;
    } else {
      size_t l = mgopt__milp_ident_len(P, it);
      if (!l) return mgopt__milp_expected(P, "a dimension or dtype");
      P->pos += l;
      if (mgopt__milp_peek(P) == ')') { /* the last item: the dtype */
        mgopt_dtype dt = mgopt_dtype_from_name(P->s + it, l);
        if (dt == MGOPT_DT_UNKNOWN && !(l == 7 && memcmp(P->s + it, "unknown", 7) == 0))
          return mgopt__milp_fail(P, it, MGOPT_ERR_TYPE, "unknown dtype '%.*s'", (int)(l > 40 ? 40 : l),
                                  P->s + it);
        P->pos++;
        t->kind = state ? MGOPT_TYPE_STATE : MGOPT_TYPE_TENSOR;
        t->dtype = (uint8_t)dt;
        if (unknown_rank) {
          if (nd) return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "'*' (unknown rank) takes no dims");
          return 1;
        }
        t->rank = (int32_t)nd;
        if (nd) {
          t->dims = (mgopt_dim *)mgopt__dup(P->p, P->dims, sizeof(mgopt_dim) * (size_t)nd);
          if (!t->dims) return mgopt__milp_oom(P);
        }
        return 1;
      }
      dm.sym = mgopt__milp_intern(P, P->s + it, l, it);
      if (!dm.sym) return 0;
    }
    if (nd >= MGOPT_MAX_RANK)
      return mgopt__milp_fail(P, at, MGOPT_ERR_LIMIT, "rank above %d", MGOPT_MAX_RANK);
    if (!mgopt__milp_reserve(P, (void **)&P->dims, &P->dims_cap, nd + 1, sizeof(mgopt_dim))) return 0;
    P->dims[nd++] = dm;
    if (mgopt__milp_peek(P) != ',') return mgopt__milp_expected(P, "',' and the dtype");
    P->pos++;
  }
}

/* Markers MIL printouts carry after a type: '*' / '^' and (Tensor) etc. */
static void mgopt__milp_type_suffix(mgopt__milp *P) {
  static const char *const kinds[] = {"Tensor", "Scalar", "List", "State"};
  int c = mgopt__milp_peek(P), k;
  size_t i;
  if (c == '*' || c == '^') P->pos++;
  if (mgopt__milp_peek(P) != '(') return;
  i = mgopt__milp_ws_from(P, P->pos + 1);
  for (k = 0; k < 4; k++) {
    if (mgopt__milp_is_word(P, i, kinds[k])) {
      size_t j = mgopt__milp_ws_from(P, i + strlen(kinds[k]));
      if (mgopt__milp_at(P, j) == ')') P->pos = j + 1;
      return;
    }
  }
}

/* ---------------------------------------------------------------- literals */

/* A new tensor for a literal of static type t; checks the limits first. */
static mgopt_tensor *mgopt__milp_tensor_for(mgopt__milp *P, const mgopt_type *t, size_t at) {
  int64_t numel = 1, span = 1, *shape = NULL;
  int32_t i;
  mgopt_tensor *x;
  size_t q = mgopt__milp_ws_from(P, P->pos);
  if (mgopt__milp_at(P, q) == '[') {
    q = mgopt__milp_ws_from(P, q + 1);
    if (q + 3 <= P->n && memcmp(P->s + q, "...", 3) == 0) {
      mgopt__milp_fail(P, q, MGOPT_ERR_PARSE,
                       "elided tensor [...] cannot be read back (print without elide_above)");
      return NULL;
    }
  }
  if (t->kind != MGOPT_TYPE_TENSOR || !mgopt_type_is_static(t)) {
    mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "a tensor literal needs a static type");
    return NULL;
  }
  if (t->dtype == MGOPT_DT_UNKNOWN) {
    mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "a tensor literal needs a known dtype");
    return NULL;
  }
  if (t->rank > P->max_depth) {
    mgopt__milp_fail(P, at, MGOPT_ERR_LIMIT, "tensor rank %d above the nesting limit %d",
                     (int)t->rank, P->max_depth);
    return NULL;
  }
  for (i = 0; i < t->rank; i++) {
    int64_t dv = t->dims[i].v;
    if (!mgopt__mul_i64(numel, dv, &numel) || !mgopt__mul_i64(span, dv ? dv : 1, &span) ||
        span > P->max_elements) {
      mgopt__milp_fail(P, at, MGOPT_ERR_LIMIT, "tensor literal larger than %lld elements",
                       (long long)P->max_elements);
      return NULL;
    }
  }
  /* every element takes at least one byte of text: refuse before allocating */
  if ((uint64_t)numel > (uint64_t)(P->n - P->pos)) {
    mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "the literal is shorter than its type's %lld elements",
                     (long long)numel);
    return NULL;
  }
  if (t->rank > 0) {
    shape = (int64_t *)mgopt_program_alloc(P->p, sizeof(int64_t) * (size_t)t->rank, 8);
    if (!shape) {
      mgopt__milp_oom(P);
      return NULL;
    }
    for (i = 0; i < t->rank; i++) shape[i] = t->dims[i].v;
  }
  x = mgopt_tensor_new(P->p, (mgopt_dtype)t->dtype, t->rank, shape);
  if (!x) mgopt__milp_oom(P);
  return x;
}

static int mgopt__milp_is_fp8(mgopt_dtype dt) {
  return dt == MGOPT_DT_FP8E4M3FN || dt == MGOPT_DT_FP8E4M3FNUZ || dt == MGOPT_DT_FP8E5M2 ||
         dt == MGOPT_DT_FP8E5M2FNUZ;
}

/* Does integer literal x fit dtype dt? Stores the value (two's complement for uint64). */
static int mgopt__milp_int_fits(mgopt_dtype dt, const mgopt__milp_num *x, int64_t *out) {
  int bits = mgopt_dtype_bits(dt);
  uint64_t lim;
  if (x->big || x->is_float) return 0;
  if (mgopt__milp_is_fp8(dt)) bits = 8, dt = MGOPT_DT_UINT8;
  if (mgopt_dtype_is_signed(dt)) {
    lim = bits >= 64 ? (uint64_t)1 << 63 : (uint64_t)1 << (bits - 1);
    if (x->neg ? x->mag > lim : x->mag > lim - 1) return 0;
    *out = x->neg ? (x->mag == ((uint64_t)1 << 63) ? INT64_MIN : -(int64_t)x->mag) : (int64_t)x->mag;
    return 1;
  }
  if (x->neg && x->mag) return 0;
  lim = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  if (x->mag > lim) return 0;
  *out = (int64_t)x->mag;
  return 1;
}

/* Leaf k of a typed tensor literal (k counts components for complex dtypes). */
static int mgopt__milp_leaf(mgopt__milp *P, mgopt_tensor *t, int64_t k) {
  mgopt_dtype dt = (mgopt_dtype)t->dtype;
  uint8_t *data = (uint8_t *)t->data;
  size_t at;
  mgopt__milp_num x;
  mgopt__milp_ws(P);
  at = P->pos;
  if (dt == MGOPT_DT_BOOL) {
    if (mgopt__milp_is_word(P, at, "true") || mgopt__milp_is_word(P, at, "True")) data[k] = 1;
    else if (mgopt__milp_is_word(P, at, "false") || mgopt__milp_is_word(P, at, "False")) data[k] = 0;
    else return mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "expected true or false in a bool tensor");
    P->pos += mgopt__milp_ident_len(P, at);
    return 1;
  }
  if (dt == MGOPT_DT_STRING) {
    mgopt_str *s = (mgopt_str *)t->data + k;
    if (mgopt__milp_at(P, at) != '"')
      return mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "expected a string in a string tensor");
    if (!mgopt__milp_string(P)) return 0;
    s->ptr = (const char *)mgopt__dup(P->p, P->sbuf, P->slen + 1);
    if (!s->ptr) return mgopt__milp_oom(P);
    s->len = P->slen;
    return 1;
  }
  if (!mgopt__milp_num_start(P, at))
    return mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "expected a number in a %s tensor",
                            mgopt_dtype_name(dt));
  if (!mgopt__milp_number(P, &x)) return 0;
  if (mgopt_dtype_is_float(dt) && !mgopt__milp_is_fp8(dt)) {
    double v = dt == MGOPT_DT_FP64 ? mgopt__milp_num_f64(P, &x) : (double)mgopt__milp_num_f32(P, &x);
    if (mgopt__milp_overflowed(&x, v)) goto range;
    mgopt_tensor_set_f64(t, k, v);
    if (mgopt__milp_overflowed(&x, mgopt_tensor_get_f64(t, k))) goto range;
    return 1;
  }
  if (dt == MGOPT_DT_COMPLEX64) {
    float f = mgopt__milp_num_f32(P, &x);
    if (mgopt__milp_overflowed(&x, (double)f)) goto range;
    memcpy(data + 8 * (k / 2) + 4 * (k % 2), &f, 4);
    return 1;
  }
  if (dt == MGOPT_DT_COMPLEX128) {
    double f = mgopt__milp_num_f64(P, &x);
    if (mgopt__milp_overflowed(&x, f)) goto range;
    memcpy(data + 16 * (k / 2) + 8 * (k % 2), &f, 8);
    return 1;
  }
  {
    int64_t v;
    if (x.is_float)
      return mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "expected an integer in a %s tensor",
                              mgopt_dtype_name(dt));
    if (!mgopt__milp_int_fits(dt, &x, &v)) goto range;
    if (mgopt__milp_is_fp8(dt)) data[k] = (uint8_t)v;
    else if (dt == MGOPT_DT_UINT64) memcpy(data + 8 * k, &x.mag, 8);
    else mgopt_tensor_set_i64(t, k, v);
    return 1;
  }
range:
  return mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "literal out of range for %s", mgopt_dtype_name(dt));
}

/* The elements of a typed tensor: a scalar, or nested lists read row-major.
   The nesting is only counted (bounded by max_depth); the element count
   must equal the type's. */
static int mgopt__milp_tensor_lit(mgopt__milp *P, mgopt_tensor *t) {
  int64_t want = t->numel, k = 0;
  int depth = 0;
  size_t at;
  if (t->dtype == MGOPT_DT_COMPLEX64 || t->dtype == MGOPT_DT_COMPLEX128) want *= 2;
  mgopt__milp_ws(P);
  at = P->pos;
  for (;;) {
    int c = mgopt__milp_peek(P), closed = 0;
    if (c == '[') {
      if (++depth > P->max_depth)
        return mgopt__milp_fail(P, P->pos, MGOPT_ERR_LIMIT, "lists nested deeper than %d", P->max_depth);
      P->pos++;
      c = mgopt__milp_peek(P);
      if (c == '.' && mgopt__milp_at(P, P->pos + 1) == '.' && mgopt__milp_at(P, P->pos + 2) == '.')
        return mgopt__milp_fail(P, P->pos, MGOPT_ERR_PARSE,
                                "elided tensor [...] cannot be read back (print without elide_above)");
      if (c != ']') continue;
      P->pos++;
      depth--;
      closed = 1;
    }
    if (!closed) {
      if (k >= want)
        return mgopt__milp_fail(P, P->pos, MGOPT_ERR_TYPE, "more elements than the type's %lld",
                                (long long)t->numel);
      if (!mgopt__milp_leaf(P, t, k++)) return 0;
    }
    /* after a value: ',' continues the list, ']' closes it (repeatedly) */
    for (;;) {
      if (depth == 0) goto done;
      c = mgopt__milp_peek(P);
      if (c == ']') {
        P->pos++;
        depth--;
        continue;
      }
      if (c == ',') {
        P->pos++;
        break;
      }
      return mgopt__milp_expected(P, "',' or ']'");
    }
  }
done:
  if (k != want)
    return mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "the literal has %lld elements, its type %lld",
                            (long long)(want == t->numel ? k : k / 2), (long long)t->numel);
  return 1;
}

/* tensor<TYPE>(LITERAL), pos at "tensor". */
static int mgopt__milp_tensor_attr(mgopt__milp *P, mgopt_attr *a) {
  mgopt_type ty;
  size_t at;
  P->pos += 6;
  if (!mgopt__milp_expect(P, '<')) return 0;
  mgopt__milp_ws(P);
  at = P->pos;
  if (!mgopt__milp_type(P, &ty) || !mgopt__milp_expect(P, '>') || !mgopt__milp_expect(P, '('))
    return 0;
  a->u.t = mgopt__milp_tensor_for(P, &ty, at);
  if (!a->u.t || !mgopt__milp_tensor_lit(P, a->u.t)) return 0;
  a->kind = MGOPT_ATTR_TENSOR;
  return mgopt__milp_expect(P, ')');
}

/* bytes<TAG>("HEX"), pos at "bytes". */
static int mgopt__milp_bytes_attr(mgopt__milp *P, mgopt_attr *a) {
  mgopt__milp_num x;
  int64_t tag;
  size_t at, nb;
  P->pos += 5;
  if (!mgopt__milp_expect(P, '<')) return 0;
  mgopt__milp_ws(P);
  at = P->pos;
  if (!mgopt__milp_num_start(P, at)) return mgopt__milp_expected(P, "an integer tag");
  if (!mgopt__milp_number(P, &x)) return 0;
  if (!mgopt__milp_num_i64(&x, &tag) || tag < INT32_MIN || tag > INT32_MAX)
    return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "bytes tag must be a 32-bit integer");
  if (!mgopt__milp_expect(P, '>') || !mgopt__milp_expect(P, '(')) return 0;
  if (mgopt__milp_peek(P) != '"') return mgopt__milp_expected(P, "a hex string");
  at = P->pos;
  if (!mgopt__milp_string(P) || !mgopt__milp_hexbytes(P, at, &a->u.bytes, &nb)) return 0;
  a->kind = MGOPT_ATTR_BYTES;
  a->tag = (int32_t)tag;
  a->n = (int64_t)nb;
  return mgopt__milp_expect(P, ')');
}

/* A flat list [..] or (..) of scalars; want = the attribute kind the prefix
   (ints[ floats[ bools[ strings[) asks for, or 0 to decide from the elements. */
static int mgopt__milp_list_attr(mgopt__milp *P, mgopt_attr *a, int want) {
  size_t at = P->pos;
  char close = P->s[P->pos] == '(' ? ')' : ']';
  int64_t ne = 0, k;
  int nb = 0, ni = 0, nf = 0, ns = 0, kind;
  P->pos++;
  if (mgopt__milp_peek(P) == close) {
    P->pos++;
  } else {
    for (;;) {
      mgopt__milp_el *e;
      int c = mgopt__milp_peek(P);
      size_t eat = P->pos;
      if (c == '.' && mgopt__milp_at(P, eat + 1) == '.' && mgopt__milp_at(P, eat + 2) == '.')
        return mgopt__milp_fail(P, eat, MGOPT_ERR_PARSE,
                                "elided tensor [...] cannot be read back (print without elide_above)");
      if (c == '[' || c == '(')
        return mgopt__milp_fail(P, eat, MGOPT_ERR_TYPE,
                                "nested list in an attribute: write tensor<TYPE>(...)");
      if (ne >= P->max_elements)
        return mgopt__milp_fail(P, eat, MGOPT_ERR_LIMIT, "list longer than %lld elements",
                                (long long)P->max_elements);
      if (!mgopt__milp_reserve(P, (void **)&P->els, &P->els_cap, ne + 1, sizeof *P->els)) return 0;
      e = &P->els[ne++];
      memset(e, 0, sizeof *e);
      e->pos = eat;
      if (c == '"') {
        if (!mgopt__milp_string(P)) return 0;
        e->kind = MGOPT__MILP_EL_STR;
        e->s.ptr = (const char *)mgopt__dup(P->p, P->sbuf, P->slen + 1);
        if (!e->s.ptr) return mgopt__milp_oom(P);
        e->s.len = P->slen;
        ns++;
      } else if (mgopt__milp_is_word(P, eat, "true") || mgopt__milp_is_word(P, eat, "True") ||
                 mgopt__milp_is_word(P, eat, "false") || mgopt__milp_is_word(P, eat, "False")) {
        e->kind = MGOPT__MILP_EL_BOOL;
        e->i = P->s[eat] == 't' || P->s[eat] == 'T';
        P->pos += mgopt__milp_ident_len(P, eat);
        nb++;
      } else if (mgopt__milp_num_start(P, eat)) {
        mgopt__milp_num x;
        if (!mgopt__milp_number(P, &x)) return 0;
        e->f = mgopt__milp_num_f64(P, &x);
        if (mgopt__milp_overflowed(&x, e->f))
          return mgopt__milp_fail(P, eat, MGOPT_ERR_PARSE, "number out of range");
        if (x.is_float) {
          e->kind = MGOPT__MILP_EL_FLOAT;
          nf++;
        } else {
          e->kind = MGOPT__MILP_EL_INT;
          e->big = !mgopt__milp_num_i64(&x, &e->i);
          ni++;
        }
      } else {
        return mgopt__milp_expected(P, "a list element");
      }
      c = mgopt__milp_peek(P);
      if (c == ',') {
        P->pos++;
        continue;
      }
      if (c == close) {
        P->pos++;
        break;
      }
      return mgopt__milp_expected(P, close == ']' ? "',' or ']'" : "',' or ')'");
    }
  }
  if (want) kind = want;
  else if (ne == 0 || ni == ne) kind = MGOPT_ATTR_INTS;
  else if (nb == ne) kind = MGOPT_ATTR_BOOLS;
  else if (ns == ne) kind = MGOPT_ATTR_STRINGS;
  else if (ni + nf == ne) kind = MGOPT_ATTR_FLOATS;
  else return mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "list mixes literal kinds");
  a->kind = (uint8_t)kind;
  a->n = ne;
  if (kind == MGOPT_ATTR_STRINGS) {
    a->u.strs = (mgopt_str *)mgopt_program_alloc(P->p, sizeof(mgopt_str) * (size_t)(ne ? ne : 1), 8);
    if (!a->u.strs) return mgopt__milp_oom(P);
  } else if (kind == MGOPT_ATTR_FLOATS) {
    a->u.floats = (double *)mgopt_program_alloc(P->p, sizeof(double) * (size_t)(ne ? ne : 1), 8);
    if (!a->u.floats) return mgopt__milp_oom(P);
  } else {
    a->u.ints = (int64_t *)mgopt_program_alloc(P->p, sizeof(int64_t) * (size_t)(ne ? ne : 1), 8);
    if (!a->u.ints) return mgopt__milp_oom(P);
  }
  for (k = 0; k < ne; k++) {
    const mgopt__milp_el *e = &P->els[k];
    int ok = kind == MGOPT_ATTR_STRINGS  ? e->kind == MGOPT__MILP_EL_STR
             : kind == MGOPT_ATTR_BOOLS  ? e->kind == MGOPT__MILP_EL_BOOL
             : kind == MGOPT_ATTR_INTS   ? e->kind == MGOPT__MILP_EL_INT
                                         : e->kind == MGOPT__MILP_EL_INT || e->kind == MGOPT__MILP_EL_FLOAT;
    if (!ok) return mgopt__milp_fail(P, e->pos, MGOPT_ERR_TYPE, "wrong literal kind for this list");
    if (kind == MGOPT_ATTR_STRINGS) a->u.strs[k] = e->s;
    else if (kind == MGOPT_ATTR_FLOATS) a->u.floats[k] = e->f;
    else if (kind == MGOPT_ATTR_INTS && e->big)
      return mgopt__milp_fail(P, e->pos, MGOPT_ERR_PARSE, "integer out of the int64 range");
    else a->u.ints[k] = e->i;
  }
  return 1;
}

/* Any attribute literal at pos. */
static int mgopt__milp_literal(mgopt__milp *P, mgopt_attr *a) {
  int c = mgopt__milp_peek(P);
  size_t at = P->pos, l;
  if (c == '"') {
    char *s;
    if (!mgopt__milp_string(P)) return 0;
    s = (char *)mgopt__dup(P->p, P->sbuf, P->slen + 1);
    if (!s) return mgopt__milp_oom(P);
    a->kind = MGOPT_ATTR_STRING;
    a->u.s.ptr = s;
    a->u.s.len = P->slen;
    return 1;
  }
  if (c == '[' || c == '(') return mgopt__milp_list_attr(P, a, 0);
  if (mgopt__milp_num_start(P, at)) {
    mgopt__milp_num x;
    if (!mgopt__milp_number(P, &x)) return 0;
    if (x.is_float) {
      a->kind = MGOPT_ATTR_FLOAT;
      a->u.f = mgopt__milp_num_f64(P, &x);
      if (mgopt__milp_overflowed(&x, a->u.f))
        return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "number out of range");
      return 1;
    }
    a->kind = MGOPT_ATTR_INT;
    if (!mgopt__milp_num_i64(&x, &a->u.i))
      return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "integer out of the int64 range");
    return 1;
  }
  l = mgopt__milp_ident_len(P, at);
  if (mgopt__milp_is_word(P, at, "true") || mgopt__milp_is_word(P, at, "True") ||
      mgopt__milp_is_word(P, at, "false") || mgopt__milp_is_word(P, at, "False")) {
    a->kind = MGOPT_ATTR_BOOL;
    a->u.i = c == 't' || c == 'T';
    P->pos += l;
    return 1;
  }
  if (mgopt__milp_is_word(P, at, "none") || mgopt__milp_is_word(P, at, "None")) {
    a->kind = MGOPT_ATTR_NONE;
    P->pos += l;
    return 1;
  }
  if (l) {
    int nx = mgopt__milp_at(P, mgopt__milp_ws_from(P, at + l));
    if (nx == '<' && mgopt__milp_is_word(P, at, "tensor")) return mgopt__milp_tensor_attr(P, a);
    if (nx == '<' && mgopt__milp_is_word(P, at, "bytes")) return mgopt__milp_bytes_attr(P, a);
    if (nx == '[') {
      int want = mgopt__milp_is_word(P, at, "ints")      ? MGOPT_ATTR_INTS
                 : mgopt__milp_is_word(P, at, "floats")  ? MGOPT_ATTR_FLOATS
                 : mgopt__milp_is_word(P, at, "bools")   ? MGOPT_ATTR_BOOLS
                 : mgopt__milp_is_word(P, at, "strings") ? MGOPT_ATTR_STRINGS
                                                         : 0;
      if (want) {
        P->pos = mgopt__milp_ws_from(P, at + l);
        return mgopt__milp_list_attr(P, a, want);
      }
    }
  }
  return mgopt__milp_expected(P, "a value (%name, a literal or a list)");
}

/* ---------------------------------------------------------------- structure */

static int mgopt__milp_block_rest(mgopt__milp *P, mgopt_block *b, int depth);

/* A block header "WORD(" followed by "%" or ") {" at the next token?
   With args == 0 only the empty "WORD() {" form counts. */
static int mgopt__milp_block_ahead(const mgopt__milp *P, int args) {
  size_t q = mgopt__milp_ws_from(P, P->pos), l;
  if (q >= P->n) return 0;
  if (P->s[q] == '"') {
    q = mgopt__milp_skip_string(P, q);
    if (!q) return 0;
  } else {
    l = mgopt__milp_ident_len(P, q);
    if (!l) return 0;
    q += l;
  }
  q = mgopt__milp_ws_from(P, q);
  if (mgopt__milp_at(P, q) != '(') return 0;
  q = mgopt__milp_ws_from(P, q + 1);
  if (mgopt__milp_at(P, q) == '%') return args;
  if (mgopt__milp_at(P, q) != ')') return 0;
  q = mgopt__milp_ws_from(P, q + 1);
  return mgopt__milp_at(P, q) == '{';
}

/* "( %a (: TYPE)?, ... )": the args of block b, defined in the current scope. */
static int mgopt__milp_args(mgopt__milp *P, mgopt_block *b) {
  if (!mgopt__milp_expect(P, '(')) return 0;
  if (mgopt__milp_accept(P, ')')) return 1;
  for (;;) {
    const char *name;
    mgopt_type t;
    mgopt_value *v;
    if (mgopt__milp_peek(P) != '%') return mgopt__milp_expected(P, "an argument %name");
    name = mgopt__milp_value_name(P);
    if (!name) return 0;
    memset(&t, 0, sizeof t);
    t.rank = -1;
    if (mgopt__milp_accept(P, ':')) {
      if (!mgopt__milp_type(P, &t)) return 0;
      mgopt__milp_type_suffix(P);
    }
    v = mgopt_block_add_arg(b, name, &t);
    if (!v) return mgopt__milp_oom(P);
    if (!mgopt__milp_define(P, name, v)) return 0;
    if (mgopt__milp_accept(P, ',')) continue;
    if (mgopt__milp_accept(P, ')')) return 1;
    return mgopt__milp_expected(P, "',' or ')'");
  }
}

/* Optional "-> (%a, _, ...)": the outputs of block b. */
static int mgopt__milp_outputs(mgopt__milp *P, mgopt_block *b) {
  if (mgopt__milp_peek(P) != '-' || mgopt__milp_at(P, P->pos + 1) != '>') return 1;
  P->pos += 2;
  if (!mgopt__milp_expect(P, '(')) return 0;
  if (mgopt__milp_accept(P, ')')) return 1;
  for (;;) {
    mgopt_value *v = NULL;
    int c = mgopt__milp_peek(P);
    if (c == '%') {
      if (!mgopt__milp_ref(P, &v)) return 0;
    } else if (mgopt__milp_absent_at(P, P->pos, ",)")) {
      P->pos++;
    } else {
      return mgopt__milp_expected(P, "an output %name");
    }
    if (mgopt_block_add_output(b, v)) return mgopt__milp_oom(P);
    if (mgopt__milp_accept(P, ',')) continue;
    if (mgopt__milp_accept(P, ')')) return 1;
    return mgopt__milp_expected(P, "',' or ')'");
  }
}

/* Operand list "(%a, _, %b)", pos at '('; appends to the vals scratch. */
static int mgopt__milp_ref_list(mgopt__milp *P, int64_t *nvals, int64_t *count) {
  P->pos++;
  *count = 0;
  if (mgopt__milp_accept(P, ')')) return 1;
  for (;;) {
    mgopt_value *v = NULL;
    int c = mgopt__milp_peek(P);
    if (c == '%') {
      if (!mgopt__milp_ref(P, &v)) return 0;
    } else if (mgopt__milp_absent_at(P, P->pos, ",)")) {
      P->pos++;
    } else {
      return mgopt__milp_expected(P, "%name in an operand list");
    }
    if (*count >= INT32_MAX) return mgopt__milp_fail(P, P->pos, MGOPT_ERR_LIMIT, "operand list too long");
    if (!mgopt__milp_reserve(P, (void **)&P->vals, &P->vals_cap, *nvals + 1, sizeof *P->vals)) return 0;
    P->vals[(*nvals)++] = v;
    (*count)++;
    if (mgopt__milp_accept(P, ',')) continue;
    if (mgopt__milp_accept(P, ')')) return 1;
    return mgopt__milp_expected(P, "',' or ')'");
  }
}

/* Is the '(' at pos an operand list (of %refs / _) rather than a literal tuple? */
static int mgopt__milp_ref_list_ahead(const mgopt__milp *P) {
  size_t q = mgopt__milp_ws_from(P, P->pos + 1);
  int c = mgopt__milp_at(P, q);
  return c == '%' || c == ')' || mgopt__milp_absent_at(P, q, ",)");
}

static int mgopt__milp_key_cmp(const void *a, const void *b) {
  const mgopt__milp_key *x = (const mgopt__milp_key *)a, *y = (const mgopt__milp_key *)b;
  if (x->name != y->name) return (uintptr_t)x->name < (uintptr_t)y->name ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Duplicate argument names: the first repeated occurrence in the text is reported. */
static int mgopt__milp_check_dups(mgopt__milp *P, int64_t nkeys) {
  int64_t k;
  size_t best = (size_t)-1;
  const char *bname = NULL;
  if (nkeys < 2) return 1;
  qsort(P->keys, (size_t)nkeys, sizeof *P->keys, mgopt__milp_key_cmp);
  for (k = 1; k < nkeys; k++)
    if (P->keys[k].name == P->keys[k - 1].name && P->keys[k].pos < best &&
        (k < 2 || P->keys[k - 2].name != P->keys[k].name)) {
      best = P->keys[k].pos;
      bname = P->keys[k].name;
    }
  if (!bname) return 1;
  return mgopt__milp_fail(P, best, MGOPT_ERR_PARSE, "duplicate argument '%.*s'",
                          (int)(strlen(bname) > 60 ? 60 : strlen(bname)), bname);
}

/* Records that op starts at byte pos (which never decreases from one op to the next). */
static int mgopt__milp_place(mgopt__milp *P, const mgopt_op *op, size_t pos) {
  mgopt__srcpos *sp;
  for (; P->lc_pos < pos; P->lc_pos++)
    if (P->s[P->lc_pos] == '\n') {
      P->lc_line++;
      P->lc_ls = P->lc_pos + 1;
    }
  if (!mgopt__milp_reserve(P, (void **)&P->places, &P->places_cap, P->nplaces + 1, sizeof *P->places)) return 0;
  sp = &P->places[P->nplaces++];
  sp->id = op->id;
  sp->line = P->lc_line > INT32_MAX ? INT32_MAX : (int32_t)P->lc_line;
  sp->col = pos - P->lc_ls + 1 > (size_t)INT32_MAX ? INT32_MAX : (int32_t)(pos - P->lc_ls + 1);
  return 1;
}

/* One op with its nested blocks, appended to b. */
static int mgopt__milp_op(mgopt__milp *P, mgopt_block *b, int depth) {
  int64_t nouts = 0, nslots = 0, nvals = 0, nattrs = 0, nkeys = 0, i;
  const char *type, *opname = NULL;
  mgopt_op *op;
  int is_const, c, effects = 0;
  int32_t nb = 0, bcap = 0;
  mgopt_block **blocks = NULL;
  size_t start;
  /* outputs */
  c = mgopt__milp_peek(P);
  start = P->pos;
  if (c == '%' || mgopt__milp_absent_at(P, P->pos, ",=:")) {
    for (;;) {
      mgopt__milp_out *o;
      if (nouts >= INT32_MAX) return mgopt__milp_fail(P, P->pos, MGOPT_ERR_LIMIT, "too many outputs");
      if (!mgopt__milp_reserve(P, (void **)&P->outs, &P->outs_cap, nouts + 1, sizeof *P->outs)) return 0;
      o = &P->outs[nouts++];
      memset(o, 0, sizeof *o);
      o->type.rank = -1;
      c = mgopt__milp_peek(P);
      if (c == '%') {
        o->name = mgopt__milp_value_name(P);
        if (!o->name) return 0;
      } else if (mgopt__milp_absent_at(P, P->pos, ",=:")) {
        P->pos++;
        o->absent = 1;
      } else {
        return mgopt__milp_expected(P, "an output %name or _");
      }
      if (mgopt__milp_accept(P, ':')) {
        if (!mgopt__milp_type(P, &o->type)) return 0;
        mgopt__milp_type_suffix(P);
      }
      if (mgopt__milp_accept(P, ',')) continue;
      if (mgopt__milp_accept(P, '=')) break;
      return mgopt__milp_expected(P, "',' or '=' after the outputs");
    }
  }
  type = mgopt__milp_word(P, "an op type");
  if (!type) return 0;
  op = mgopt_op_new(P->p, type, (int32_t)nouts, 0);
  if (!op) return mgopt__milp_oom(P);
  if (!mgopt__milp_place(P, op, start)) return 0;
  for (i = 0; i < nouts; i++) {
    mgopt_value *v = op->outs[i];
    v->type = P->outs[i].type;
    if (P->outs[i].absent) v->flags |= MGOPT_VALUE_ABSENT;
    else v->name = P->outs[i].name;
  }
  is_const = strcmp(type, "const") == 0;
  /* arguments: operands and attributes collected, then stored at once */
  if (!mgopt__milp_expect(P, '(')) return 0;
  if (!mgopt__milp_accept(P, ')')) {
    for (;;) {
      const char *key;
      size_t kat;
      mgopt__milp_ws(P);
      kat = P->pos;
      key = mgopt__milp_word(P, "an argument name");
      if (!key) return 0;
      if (!mgopt__milp_reserve(P, (void **)&P->keys, &P->keys_cap, nkeys + 1, sizeof *P->keys)) return 0;
      P->keys[nkeys].name = key;
      P->keys[nkeys++].pos = kat;
      if (!mgopt__milp_expect(P, '=')) return 0;
      c = mgopt__milp_peek(P);
      if (c == '%' || (c == '(' && mgopt__milp_ref_list_ahead(P))) {
        mgopt__milp_slotrec *s;
        if (!mgopt__milp_reserve(P, (void **)&P->slots, &P->slots_cap, nslots + 1, sizeof *P->slots))
          return 0;
        s = &P->slots[nslots++];
        s->name = key;
        s->first = nvals;
        if (c == '%') {
          mgopt_value *v;
          if (!mgopt__milp_ref(P, &v)) return 0;
          if (!mgopt__milp_reserve(P, (void **)&P->vals, &P->vals_cap, nvals + 1, sizeof *P->vals))
            return 0;
          P->vals[nvals++] = v;
          s->is_list = 0;
          s->n = 1;
        } else {
          s->is_list = 1;
          if (!mgopt__milp_ref_list(P, &nvals, &s->n)) return 0;
        }
      } else if (strcmp(key, "has_effects") == 0 && mgopt__milp_is_word(P, P->pos, "true")) {
        P->pos += 4; /* the op's MGOPT_OP_HAS_EFFECTS flag, not an attribute */
        effects = 1;
      } else if (c == '"' && strcmp(key, "name") == 0) {
        size_t at = P->pos;
        if (!mgopt__milp_string(P)) return 0;
        opname = mgopt__milp_intern(P, P->sbuf, P->slen, at);
        if (!opname) return 0;
      } else {
        mgopt_attr *a;
        size_t at = P->pos;
        if (nattrs >= INT32_MAX) return mgopt__milp_fail(P, at, MGOPT_ERR_LIMIT, "too many attributes");
        if (!mgopt__milp_reserve(P, (void **)&P->attrs, &P->attrs_cap, nattrs + 1, sizeof *P->attrs))
          return 0;
        a = &P->attrs[nattrs++];
        memset(a, 0, sizeof *a);
        a->name = key;
        if (is_const && strcmp(key, "val") == 0 && !mgopt__milp_is_word(P, at, "tensor")) {
          /* the bare val of a const: dtype and shape come from the declared output type */
          if (nouts < 1 || P->outs[0].absent)
            return mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "const val needs a declared output type");
          a->u.t = mgopt__milp_tensor_for(P, &op->outs[0]->type, at);
          if (!a->u.t || !mgopt__milp_tensor_lit(P, a->u.t)) return 0;
          a->kind = MGOPT_ATTR_TENSOR;
        } else if (!mgopt__milp_literal(P, a)) {
          return 0;
        }
      }
      if (mgopt__milp_accept(P, ',')) continue;
      if (mgopt__milp_accept(P, ')')) break;
      return mgopt__milp_expected(P, "',' or ')'");
    }
  }
  if (!mgopt__milp_check_dups(P, nkeys)) return 0;
  if (nslots > INT32_MAX) return mgopt__milp_fail(P, P->pos, MGOPT_ERR_LIMIT, "too many operands");
  if (nslots) {
    op->slots = (mgopt_slot *)mgopt_program_alloc(P->p, sizeof(mgopt_slot) * (size_t)nslots, 8);
    if (!op->slots) return mgopt__milp_oom(P);
    for (i = 0; i < nslots; i++) {
      const mgopt__milp_slotrec *r = &P->slots[i];
      mgopt_slot *s = &op->slots[i];
      int64_t k;
      s->name = r->name;
      s->is_list = r->is_list;
      if (r->n) {
        s->uses = (mgopt_use *)mgopt_program_alloc(P->p, sizeof(mgopt_use) * (size_t)r->n, 8);
        if (!s->uses) return mgopt__milp_oom(P);
      }
      for (k = 0; k < r->n; k++) {
        s->uses[k].op = op;
        s->uses[k].slot = (int32_t)i;
        s->uses[k].index = (int32_t)k;
        mgopt__use_link(&s->uses[k], P->vals[r->first + k]);
      }
      s->n = (int32_t)r->n;
    }
    op->nslots = (int32_t)nslots;
  }
  if (nattrs) {
    op->attrs = (mgopt_attr *)mgopt__dup(P->p, P->attrs, sizeof(mgopt_attr) * (size_t)nattrs);
    if (!op->attrs) return mgopt__milp_oom(P);
    op->nattrs = (int32_t)nattrs;
  }
  if (effects) op->flags |= MGOPT_OP_HAS_EFFECTS;
  if (opname) op->name = opname;
  else if (nouts > 0 && !P->outs[0].absent) op->name = P->outs[0].name;
  mgopt_op_append(op, b);
  /* nested blocks see what is visible here, not this op's outputs */
  while (mgopt__milp_block_ahead(P, 1)) {
    mgopt_block *nbk;
    const char *bname;
    if (depth + 1 > P->max_depth)
      return mgopt__milp_fail(P, mgopt__milp_ws_from(P, P->pos), MGOPT_ERR_LIMIT,
                              "blocks nested deeper than %d", P->max_depth);
    bname = mgopt__milp_word(P, "a block name");
    if (!bname) return 0;
    nbk = mgopt__block_new(P->p, bname);
    if (!nbk) return mgopt__milp_oom(P);
    nbk->parent_op = op;
    nbk->func = P->fn;
    if (nb == bcap) {
      int32_t ncap = bcap ? bcap * 2 : 2;
      mgopt_block **na;
      if (bcap > INT32_MAX / 4) return mgopt__milp_fail(P, P->pos, MGOPT_ERR_LIMIT, "too many blocks");
      na = (mgopt_block **)mgopt_program_alloc(P->p, sizeof(mgopt_block *) * (size_t)ncap, 8);
      if (!na) return mgopt__milp_oom(P);
      if (nb) memcpy(na, blocks, sizeof(mgopt_block *) * (size_t)nb);
      blocks = na;
      bcap = ncap;
    }
    blocks[nb++] = nbk;
    op->blocks = blocks;
    op->nblocks = nb;
    if (!mgopt__milp_block_rest(P, nbk, depth + 1)) return 0;
  }
  for (i = 0; i < op->nouts; i++)
    if (op->outs[i]->name && !mgopt__milp_define(P, op->outs[i]->name, op->outs[i])) return 0;
  return 1;
}

/* Ops up to and including the closing '}'. */
static int mgopt__milp_body(mgopt__milp *P, mgopt_block *b, int depth) {
  for (;;) {
    int c = mgopt__milp_peek(P);
    if (c == '}') {
      P->pos++;
      return 1;
    }
    if (c < 0) return mgopt__milp_expected(P, "an op or '}'");
    if (!mgopt__milp_op(P, b, depth)) return 0;
  }
}

/* After a nested block's name: args, body, outputs, in the block's own scope. */
static int mgopt__milp_block_rest(mgopt__milp *P, mgopt_block *b, int depth) {
  int64_t mark = P->ndefs;
  if (!mgopt__milp_args(P, b) || !mgopt__milp_expect(P, '{') || !mgopt__milp_body(P, b, depth) ||
      !mgopt__milp_outputs(P, b))
    return 0;
  mgopt__milp_scope_pop(P, mark);
  return 1;
}

/* "attributes(key=literal, ...)" after a function's name: its own attributes. */
static int mgopt__milp_fn_attrs(mgopt__milp *P, mgopt_function *f) {
  int64_t n = 0;
  if (!mgopt__milp_expect(P, '(')) return 0;
  for (;;) {
    mgopt_attr *a;
    const char *key;
    int64_t k;
    size_t at;
    mgopt__milp_ws(P);
    at = P->pos;
    key = mgopt__milp_word(P, "an attribute name");
    if (!key || !mgopt__milp_expect(P, '=')) return 0;
    for (k = 0; k < n; k++)
      if (P->attrs[k].name == key)
        return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "duplicate attribute '%.*s'",
                                (int)(strlen(key) > 60 ? 60 : strlen(key)), key);
    if (n >= 4096) return mgopt__milp_fail(P, at, MGOPT_ERR_LIMIT, "too many attributes");
    if (!mgopt__milp_reserve(P, (void **)&P->attrs, &P->attrs_cap, n + 1, sizeof *P->attrs)) return 0;
    a = &P->attrs[n++];
    memset(a, 0, sizeof *a);
    a->name = key;
    mgopt__milp_ws(P);
    if (!mgopt__milp_literal(P, a)) return 0;
    if (mgopt__milp_accept(P, ',')) continue;
    if (mgopt__milp_accept(P, ')')) break;
    return mgopt__milp_expected(P, "',' or ')'");
  }
  f->attrs = (mgopt_attr *)mgopt__dup(P->p, P->attrs, sizeof(mgopt_attr) * (size_t)n);
  if (!f->attrs) return mgopt__milp_oom(P);
  f->nattrs = (int32_t)n;
  return 1;
}

static int mgopt__milp_function(mgopt__milp *P) {
  const char *name;
  size_t at;
  mgopt_function *f;
  mgopt__milp_ws(P);
  at = P->pos;
  name = mgopt__milp_word(P, "a function name");
  if (!name) return 0;
  if (mgopt_program_function(P->p, name))
    return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "function '%.*s' defined twice",
                            (int)(strlen(name) > 60 ? 60 : strlen(name)), name);
  f = mgopt_function_new(P->p, name);
  if (!f) return mgopt__milp_oom(P);
  P->fn = f;
  if (mgopt__milp_accept(P, '[')) {
    f->opset = mgopt__milp_word(P, "an opset name");
    if (!f->opset || !mgopt__milp_expect(P, ']')) return 0;
  }
  mgopt__milp_ws(P);
  if (mgopt__milp_is_word(P, P->pos, "attributes")) {
    P->pos += 10;
    if (!mgopt__milp_fn_attrs(P, f)) return 0;
  }
  mgopt__milp_scope_pop(P, 0);
  if (!mgopt__milp_args(P, f->body) || !mgopt__milp_expect(P, '{')) return 0;
  if (mgopt__milp_block_ahead(P, 0)) {
    /* MIL printouts' "block0() { ... } -> (...)" wrapper, then an optional '}' */
    if (!mgopt__milp_word(P, "a block name") || !mgopt__milp_expect(P, '(') ||
        !mgopt__milp_expect(P, ')') || !mgopt__milp_expect(P, '{') || !mgopt__milp_body(P, f->body, 0) ||
        !mgopt__milp_outputs(P, f->body))
      return 0;
    mgopt__milp_accept(P, '}');
  } else if (!mgopt__milp_body(P, f->body, 0) || !mgopt__milp_outputs(P, f->body)) {
    return 0;
  }
  mgopt__milp_scope_pop(P, 0);
  return 1;
}

static void mgopt__milp_free(mgopt__milp *P) {
  const mgopt_allocator *a = P->alloc;
  if (P->places) mgopt__heap_free(a, P->places, (size_t)P->places_cap * sizeof *P->places);
  if (P->defs) mgopt__heap_free(a, P->defs, (size_t)P->defs_cap * sizeof *P->defs);
  mgopt__map_free(&P->visible);
  if (P->sbuf) mgopt__heap_free(a, P->sbuf, (size_t)P->sbuf_cap);
  if (P->outs) mgopt__heap_free(a, P->outs, (size_t)P->outs_cap * sizeof *P->outs);
  if (P->slots) mgopt__heap_free(a, P->slots, (size_t)P->slots_cap * sizeof *P->slots);
  if (P->vals) mgopt__heap_free(a, P->vals, (size_t)P->vals_cap * sizeof *P->vals);
  if (P->attrs) mgopt__heap_free(a, P->attrs, (size_t)P->attrs_cap * sizeof *P->attrs);
  if (P->keys) mgopt__heap_free(a, P->keys, (size_t)P->keys_cap * sizeof *P->keys);
  if (P->els) mgopt__heap_free(a, P->els, (size_t)P->els_cap * sizeof *P->els);
  if (P->dims) mgopt__heap_free(a, P->dims, (size_t)P->dims_cap * sizeof *P->dims);
}

MGOPTDEF mgopt_status mgopt_mil_parse(const char *text, size_t len, const mgopt_parse_options *opts,
                                     mgopt_program **out, mgopt_diag *d) {
  mgopt__milp P;
  mgopt_program *p;
  mgopt_diag_clear(d);
  if (!out) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "out is NULL");
  if (!text && len) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "text is NULL");
  memset(&P, 0, sizeof P);
  P.s = text ? text : "";
  P.n = len;
  P.d = d;
  P.alloc = opts ? opts->alloc : NULL;
  mgopt__map_init(&P.visible, P.alloc);
  P.max_depth = opts && opts->max_depth > 0 ? opts->max_depth : 64;
  P.max_elements = opts && opts->max_elements > 0 ? opts->max_elements : ((int64_t)1 << 28);
  P.lc_line = 1;
  p = mgopt_program_create(P.alloc);
  if (!p) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  P.p = p;
  for (;;) {
    mgopt__milp_ws(&P);
    if (P.pos >= P.n) break;
    if (!mgopt__milp_function(&P)) break;
  }
  if (!P.failed && P.nplaces) {
    p->places = (mgopt__srcpos *)mgopt__dup(p, P.places, sizeof *P.places * (size_t)P.nplaces);
    p->nplaces = P.nplaces;
  }
  if (!P.failed && mgopt_program_status(p) != MGOPT_OK) mgopt__milp_oom(&P);
  mgopt__milp_free(&P);
  if (P.failed) {
    mgopt_program_destroy(p);
    return P.status;
  }
  *out = p;
  return MGOPT_OK;
}
/* src/core/rewrite.c — the greedy worklist driver: dead-op erasure, folding, patterns, fixpoint. */

/* How it works. Every op of the function (nested blocks too) is queued once,
   in program order; when the run neither folds nor erases dead ops (nor
   shuffles) and no pattern takes any op, only the ops of the patterns' root
   kinds, from the op index, in the same order: the others would be popped
   and left as they are. A run in which no op could do anything (no op of a
   root kind, none dead when erasing, none with only constant operands when
   folding: a scan of the index's arrays) queues nothing. Popping an op: skip it if erased; erase it if it is pure
   and its outputs are unused; fold it if every operand is constant and a
   kernel exists; else try the patterns registered for its type, highest
   benefit first (ties by name), and stop at the first that changes the IR.
   Every change goes through the mgopt_rw_* calls, which queue only what may
   match anew: created ops, users of replaced values, producers of erased
   operands, users of modified ops. A queued flag keeps each op in the queue
   at most once. Cost: O(ops + rewrites x neighbourhood). */

#define MGOPT__OP_QUEUED (1u << 8)
/* how many queued ops ahead of the popped one are prefetched */
#define MGOPT__RW_AHEAD 8

struct mgopt_rewriter {
  mgopt_program *p;
  mgopt_op **q;          /* stack of queued ops (popped from the end) */
  int64_t nq, qcap;
  int oom;
  uint64_t rng;
  const mgopt_rewrite_config *cfg;
  mgopt_rewrite_stats *stats;
  mgopt_diag *d;
  /* pattern index: for each op kind, a range into `order` */
  int32_t *order;        /* pattern indices sorted by (root kind, -benefit, name) */
  int32_t *start;        /* MGOPT_OP__COUNT + 1 entries */
  int32_t nany;          /* patterns with root_kind -1 are at order[0..nany) */
  const mgopt_pattern *pats;
  int32_t npats;
  int64_t *hits;         /* per pattern, for the no-fixpoint diagnostic */
};

static void mgopt__rw_push(mgopt_rewriter *rw, mgopt_op *op) {
  if (!op || (op->flags & (MGOPT__OP_QUEUED | MGOPT_OP_ERASED))) return;
  if (rw->nq == rw->qcap) {
    void *arr = rw->q;
    if (!mgopt__grow(&rw->p->alloc, &arr, &rw->qcap, rw->nq + 1, sizeof(mgopt_op *))) {
      rw->oom = 1;
      return;
    }
    rw->q = (mgopt_op **)arr;
  }
  op->flags |= MGOPT__OP_QUEUED;
  rw->q[rw->nq++] = op;
}

static void mgopt__rw_push_users(mgopt_rewriter *rw, mgopt_value *v) {
  mgopt_use *u;
  for (u = v->uses; u; u = u->next) {
    if (u->op) mgopt__rw_push(rw, u->op);
    else if (u->block && u->block->parent_op) mgopt__rw_push(rw, u->block->parent_op);
  }
}

static void mgopt__rw_push_producers(mgopt_rewriter *rw, mgopt_op *op) {
  int32_t s, k;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      mgopt_value *v = op->slots[s].uses[k].value;
      if (v && v->def) mgopt__rw_push(rw, v->def);
    }
}

/* ---------------------------------------------------------------- rewriter API */

MGOPTDEF mgopt_program *mgopt_rw_program(mgopt_rewriter *rw) { return rw->p; }

MGOPTDEF void mgopt_rw_created(mgopt_rewriter *rw, mgopt_op *op) { mgopt__rw_push(rw, op); }

MGOPTDEF void mgopt_rw_replace_value(mgopt_rewriter *rw, mgopt_value *from, mgopt_value *to) {
  mgopt__rw_push_users(rw, from);
  mgopt_value_replace_all_uses(from, to);
  if (to->def) mgopt__rw_push(rw, to->def);
}

MGOPTDEF void mgopt_rw_erase(mgopt_rewriter *rw, mgopt_op *op) {
  int32_t i;
  for (i = 0; i < op->nouts; i++) MGOPT_ASSERT(op->outs[i]->nuses == 0);
  mgopt__rw_push_producers(rw, op);
  mgopt_op_erase(op);
  if (rw->stats) rw->stats->erased++;
}

MGOPTDEF void mgopt_rw_replace_op(mgopt_rewriter *rw, mgopt_op *op, mgopt_value *const *vals) {
  int32_t i;
  for (i = 0; i < op->nouts; i++)
    if (vals[i] && vals[i] != op->outs[i]) mgopt_rw_replace_value(rw, op->outs[i], vals[i]);
  for (i = 0; i < op->nouts; i++)
    if (op->outs[i]->nuses) return; /* an output could not be replaced: keep the op */
  mgopt_rw_erase(rw, op);
}

MGOPTDEF mgopt_status mgopt_rw_set_operand(mgopt_rewriter *rw, mgopt_op *op, const char *slot, mgopt_value *v) {
  mgopt_value *old = mgopt_op_operand(op, slot);
  mgopt_status s = mgopt_op_set_operand(op, slot, v);
  if (s != MGOPT_OK) rw->oom = 1;
  if (old && old->def) mgopt__rw_push(rw, old->def);
  mgopt__rw_push(rw, op);
  return s;
}

MGOPTDEF void mgopt_rw_modified(mgopt_rewriter *rw, mgopt_op *op) {
  int32_t i;
  mgopt__rw_push(rw, op);
  for (i = 0; i < op->nouts; i++) mgopt__rw_push_users(rw, op->outs[i]);
}

MGOPTDEF mgopt_op *mgopt_rw_create(mgopt_rewriter *rw, mgopt_op *pos, const char *type,
                                   const char *name, int32_t nslots, const char *const *slot_names,
                                   mgopt_value *const *vals, int32_t nouts) {
  mgopt_op *op;
  int32_t i;
  if (!name) name = mgopt_program_fresh_name(rw->p, type);
  op = mgopt_build_op(rw->p, pos->parent, pos, type, name, nslots, slot_names, vals, nouts);
  if (!op) {
    rw->oom = 1;
    return NULL;
  }
  for (i = 1; i < nouts; i++) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.40s_%d", name, (int)i);
    if (mgopt_value_set_name(op->outs[i], buf) != MGOPT_OK) rw->oom = 1;
  }
  mgopt__rw_push(rw, op);
  return op;
}

MGOPTDEF mgopt_value *mgopt_rw_const(mgopt_rewriter *rw, mgopt_op *pos, const char *name, mgopt_tensor *t) {
  mgopt_value *v = mgopt_build_const(rw->p, pos->parent, pos, name, t);
  if (!v) {
    rw->oom = 1;
    return NULL;
  }
  mgopt__rw_push(rw, v->def);
  return v;
}

/* ---------------------------------------------------------------- the driver */

MGOPT__PRIVATE int mgopt__op_has_effects(const mgopt_op *op) {
  if (op->flags & MGOPT_OP_HAS_EFFECTS) return 1;
  return op->kind != MGOPT_OP_OPAQUE && !(mgopt_op_traits(op) & MGOPT_TRAIT_PURE);
}

/* 1 when an op in the blocks of op (at any depth) has effects, or they nest
   too deeply to tell. */
static int mgopt__rw_blocks_have_effects(const mgopt_op *op, int depth) {
  int32_t i;
  const mgopt_op *o;
  if (depth > 256) return 1;
  for (i = 0; i < op->nblocks; i++)
    for (o = op->blocks[i]->first; o; o = o->next)
      if (mgopt__op_has_effects(o) || (o->nblocks && mgopt__rw_blocks_have_effects(o, depth + 1))) return 1;
  return 0;
}

MGOPT__PRIVATE int mgopt__op_is_dead(const mgopt_op *op) {
  int32_t i;
  if (op->nouts == 0) return 0;
  for (i = 0; i < op->nouts; i++)
    if (op->outs[i]->nuses) return 0;
  return !mgopt__op_has_effects(op) && !(op->nblocks && mgopt__rw_blocks_have_effects(op, 0));
}

static int mgopt__index_dead_fn(const mgopt_op *op, void *ud) {
  (void)ud;
  return mgopt__op_is_dead(op);
}

MGOPT__PRIVATE int mgopt__index_has_dead(mgopt_function *f) {
  return mgopt__index_any(f, -1, mgopt__index_dead_fn, NULL);
}

/* 0 when mgopt__rw_try_fold surely declines op, whatever the kernel: the op
   kinds and shapes it never folds, and an operand not made by a const op.
   mgopt__rw_try_fold starts with this test. */
static int mgopt__rw_may_fold(const mgopt_op *op) {
  int32_t s, k;
  if (op->kind == MGOPT_OP_const || op->kind == MGOPT_OP_OPAQUE || op->nblocks || op->nouts == 0 || op->nouts > 16)
    return 0;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      const mgopt_value *v = op->slots[s].uses[k].value;
      if (!v || !v->def || v->def->kind != MGOPT_OP_const) return 0;
    }
  return 1;
}

/* 1 folded, 0 not, -1 OOM */
static int mgopt__rw_try_fold(mgopt_rewriter *rw, mgopt_op *op) {
  const mgopt_rewrite_config *cfg = rw->cfg;
  mgopt_tensor *outs[16];
  mgopt_value *vals[16];
  int32_t s, k, i;
  int r;
  if (!cfg->fold || !mgopt__rw_may_fold(op)) return 0;
  /* every operand is a const op's output (mgopt__rw_may_fold): it must also hold its tensor */
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++)
      if (!mgopt_value_const(op->slots[s].uses[k].value)) return 0;
  if (cfg->fold_max_elements > 0)
    for (i = 0; i < op->nouts; i++) {
      int64_t n = mgopt_type_numel(&op->outs[i]->type);
      if (n > cfg->fold_max_elements) return 0;
    }
  memset(outs, 0, sizeof outs);
  r = cfg->fold(rw->p, op, outs, cfg->fold_ud);
  if (r <= 0) return r;
  for (i = 0; i < op->nouts; i++) {
    if (!outs[i]) return 0;
    if (cfg->fold_max_elements > 0 && outs[i]->numel > cfg->fold_max_elements) return 0;
  }
  for (i = 0; i < op->nouts; i++) {
    /* the constant takes the output's name, so graph outputs keep theirs */
    vals[i] = mgopt_build_const(rw->p, op->parent, op, op->outs[i]->name, outs[i]);
    if (!vals[i]) return -1;
    mgopt__rw_push(rw, vals[i]->def);
  }
  for (i = 0; i < op->nouts; i++) mgopt_rw_replace_value(rw, op->outs[i], vals[i]);
  mgopt_rw_erase(rw, op);
  if (rw->stats) rw->stats->folds++;
  return 1;
}

static int mgopt__rw_pat_before(const mgopt_pattern *a, const mgopt_pattern *b) {
  if (a->root_kind != b->root_kind) return a->root_kind < b->root_kind;
  if (a->benefit != b->benefit) return a->benefit > b->benefit;
  return strcmp(a->name ? a->name : "", b->name ? b->name : "") < 0;
}

static mgopt_status mgopt__rw_index(mgopt_rewriter *rw) {
  const mgopt_allocator *al = &rw->p->alloc;
  int32_t i, j, n = rw->npats;
  rw->order = (int32_t *)mgopt__heap_realloc(al, NULL, 0, sizeof(int32_t) * (size_t)(n + 1));
  rw->start = (int32_t *)mgopt__heap_realloc(al, NULL, 0, sizeof(int32_t) * (MGOPT_OP__COUNT + 2));
  rw->hits = (int64_t *)mgopt__heap_realloc(al, NULL, 0, sizeof(int64_t) * (size_t)(n + 1));
  if (!rw->order || !rw->start || !rw->hits) return MGOPT_ERR_NOMEM;
  memset(rw->hits, 0, sizeof(int64_t) * (size_t)(n + 1));
  for (i = 0; i < n; i++) {
    if (rw->pats[i].root_kind < -1 || rw->pats[i].root_kind >= MGOPT_OP__COUNT || !rw->pats[i].fn)
      return MGOPT_ERR_INVALID_ARG;
    rw->order[i] = i;
  }
  /* insertion sort: pattern sets are small */
  for (i = 1; i < n; i++) {
    int32_t x = rw->order[i];
    for (j = i; j > 0 && mgopt__rw_pat_before(&rw->pats[x], &rw->pats[rw->order[j - 1]]); j--)
      rw->order[j] = rw->order[j - 1];
    rw->order[j] = x;
  }
  rw->nany = 0;
  while (rw->nany < n && rw->pats[rw->order[rw->nany]].root_kind == -1) rw->nany++;
  j = rw->nany;
  for (i = 0; i <= MGOPT_OP__COUNT; i++) {
    while (j < n && rw->pats[rw->order[j]].root_kind < i) j++;
    rw->start[i] = j;
  }
  rw->start[MGOPT_OP__COUNT + 1] = n;
  return MGOPT_OK;
}

static int mgopt__rw_collect(mgopt_op *op, void *ud) {
  mgopt__rw_push((mgopt_rewriter *)ud, op);
  return 0;
}

/* Runs pattern `pi` on op; 1 if it changed the IR. */
static int mgopt__rw_apply(mgopt_rewriter *rw, int32_t pi, mgopt_op *op) {
  const mgopt_pattern *pt = &rw->pats[pi];
  if (pt->root_type && strcmp(pt->root_type, op->type) != 0) return 0;
  if (!pt->fn(rw, op, pt->ud)) return 0;
  rw->hits[pi]++;
  if (rw->stats) {
    rw->stats->rewrites++;
    if (rw->stats->per_pattern && pi < rw->stats->npatterns) rw->stats->per_pattern[pi]++;
  }
  return 1;
}

static mgopt_status mgopt__rw_cap_diag(mgopt_rewriter *rw, int64_t cap) {
  char names[MGOPT_DIAG_MSG_MAX];
  size_t len = 0;
  int32_t shown = 0;
  names[0] = 0;
  while (shown < 3) {
    int32_t i, best = -1;
    for (i = 0; i < rw->npats; i++)
      if (rw->hits[i] > 0 && (best < 0 || rw->hits[i] > rw->hits[best])) best = i;
    if (best < 0) break;
    len += (size_t)snprintf(names + len, sizeof names - len, "%s%s (%lld)", shown ? ", " : "",
                            rw->pats[best].name ? rw->pats[best].name : "?", (long long)rw->hits[best]);
    if (len >= sizeof names) len = sizeof names - 1;
    rw->hits[best] = -rw->hits[best];
    shown++;
  }
  return mgopt_diag_set(rw->d, MGOPT_ERR_NO_FIXPOINT,
                        "rewrite cap of %lld reached before a fixpoint; patterns that kept firing: %s",
                        (long long)cap, shown ? names : "(folding and erasure only)");
}

/* Queues the ops of the patterns' root kinds from the index (1), or returns 0
   when every op must be queued (folding, dead-op erasure, a shuffled order,
   a pattern for any op, or an incomplete index). */
static int mgopt__rw_seed_roots(mgopt_rewriter *rw, mgopt_function *f) {
  const mgopt_rewrite_config *cfg = rw->cfg;
  int32_t kinds[MGOPT_OP__COUNT], nk = 0, i;
  int64_t n;
  if (cfg->fold || !cfg->keep_dead || cfg->shuffle_seed || rw->nany) return 0;
  for (i = 0; i < MGOPT_OP__COUNT; i++)
    if (rw->start[i] < rw->start[i + 1]) kinds[nk++] = i;
  n = mgopt__index_collect(f, kinds, nk, &rw->q, &rw->qcap);
  if (n < 0) return 0;
  for (rw->nq = 0; rw->nq < n; rw->nq++) rw->q[rw->nq]->flags |= MGOPT__OP_QUEUED;
  return 1;
}

/* 1 if op may fold and has no operand (so no constant's use list shows it). */
static int mgopt__rw_may_fold_bare_fn(const mgopt_op *op, void *ud) {
  int32_t s;
  (void)ud;
  for (s = 0; s < op->nslots; s++)
    if (op->slots[s].n) return 0;
  return mgopt__rw_may_fold(op);
}

/* 1 if a user of const op c may fold. */
static int mgopt__rw_const_user_may_fold_fn(const mgopt_op *c, void *ud) {
  int32_t i;
  const mgopt_use *u;
  (void)ud;
  for (i = 0; i < c->nouts; i++)
    for (u = c->outs[i]->uses; u; u = u->next)
      if (u->op && mgopt__rw_may_fold(u->op)) return 1;
  return 0;
}

/* 1 when every well-formed op of this kind has an operand: a slot that is
   neither optional nor a list (the verifier requires a value there). Such
   ops are users of their operands, so the const-user walk sees them. */
static int mgopt__rw_kind_has_operand(int32_t kind) {
  const mgopt_op_def *def = mgopt_op_def_get(kind);
  int32_t k;
  for (k = 0; def && k < def->nslots; k++)
    if (!(def->slots[k].flags & (MGOPT_SLOT_OPTIONAL | MGOPT_SLOT_VARIADIC))) return 1;
  return 0;
}

/* 1 when popping every op of f would change nothing: no pattern can start
   anywhere, no op is dead (when erasing) and none may fold (when folding).
   Nothing changes before the first change, so the run would end as it began.
   An op with operands may fold only if they are all constants, so it is a
   user of a const op: the users of const ops, and the ops without operands,
   are all that folding needs looked at (of the kinds that may lack
   operands: an op missing a required one is malformed, and at worst stays
   unfolded). 0 when unsure. */
static int mgopt__rw_idle(mgopt_rewriter *rw, mgopt_function *f) {
  const mgopt_rewrite_config *cfg = rw->cfg;
  int32_t i;
  if (cfg->shuffle_seed || rw->nany) return 0;
  for (i = 0; i < MGOPT_OP__COUNT; i++)
    if (rw->start[i] < rw->start[i + 1] && mgopt__index_kind_count(f, i) != 0) return 0;
  if (!cfg->keep_dead && mgopt__index_has_dead(f) != 0) return 0;
  if (cfg->fold) {
    if (mgopt__index_any(f, MGOPT_OP_const, mgopt__rw_const_user_may_fold_fn, NULL) != 0) return 0;
    for (i = 0; i < MGOPT_OP__COUNT; i++)
      if (i != MGOPT_OP_const && i != MGOPT_OP_OPAQUE && !mgopt__rw_kind_has_operand(i) &&
          mgopt__index_any(f, i, mgopt__rw_may_fold_bare_fn, NULL) != 0)
        return 0;
  }
  return 1;
}

static mgopt_status mgopt__rw_run(mgopt_rewriter *rw, mgopt_function *f) {
  const mgopt_rewrite_config *cfg = rw->cfg;
  int64_t done = 0, cap = cfg->max_rewrites;
  mgopt_diag vd;
  if (mgopt__rw_idle(rw, f)) return MGOPT_OK;
  if (!mgopt__rw_seed_roots(rw, f)) mgopt_block_walk(f->body, mgopt__rw_collect, rw);
  /* the queue is a stack: reverse it so ops pop in program order */
  {
    int64_t i;
    for (i = 0; i < rw->nq / 2; i++) {
      mgopt_op *t = rw->q[i];
      rw->q[i] = rw->q[rw->nq - 1 - i];
      rw->q[rw->nq - 1 - i] = t;
    }
  }
  /* the default cap counts every op of the function, queued or not */
  if (cap <= 0) cap = 10 * (mgopt__index_op_count(f) + 100);
  while (rw->nq > 0) {
    mgopt_op *op;
    int changed = 0;
    if (rw->oom) return mgopt_diag_set(rw->d, MGOPT_ERR_NOMEM, "rewriter: out of memory");
    if (cfg->shuffle_seed && rw->nq > 1) {
      int64_t j;
      mgopt_op *t;
      rw->rng ^= rw->rng << 13;
      rw->rng ^= rw->rng >> 7;
      rw->rng ^= rw->rng << 17;
      j = (int64_t)(rw->rng % (uint64_t)rw->nq);
      t = rw->q[j];
      rw->q[j] = rw->q[rw->nq - 1];
      rw->q[rw->nq - 1] = t;
    }
    op = rw->q[--rw->nq];
    /* the ops popped next, and the operand slots of nearer ones: their loads
       overlap with the work on this one */
    if (rw->nq >= MGOPT__RW_AHEAD) MGOPT__PREFETCH(rw->q[rw->nq - MGOPT__RW_AHEAD]);
    if (rw->nq >= MGOPT__RW_AHEAD / 2) MGOPT__PREFETCH(rw->q[rw->nq - MGOPT__RW_AHEAD / 2]->slots);
    op->flags &= ~MGOPT__OP_QUEUED;
    if (op->flags & MGOPT_OP_ERASED) continue;
    if (rw->stats) rw->stats->pops++;
    if (!cfg->keep_dead && mgopt__op_is_dead(op)) {
      mgopt_rw_erase(rw, op);
      changed = 1;
    } else {
      int r = mgopt__rw_try_fold(rw, op);
      if (r < 0) return mgopt_diag_set(rw->d, MGOPT_ERR_NOMEM, "rewriter: out of memory while folding");
      if (r > 0) changed = 1;
      else {
        int32_t i, lo, hi;
        lo = rw->start[op->kind];
        hi = rw->start[op->kind + 1];
        for (i = lo; i < hi && !changed; i++) changed = mgopt__rw_apply(rw, rw->order[i], op);
        for (i = 0; i < rw->nany && !changed; i++) changed = mgopt__rw_apply(rw, rw->order[i], op);
      }
    }
    if (!changed) continue;
    if (rw->p->status) return mgopt_diag_set(rw->d, MGOPT_ERR_NOMEM, "rewriter: out of memory");
    if (cfg->verify_each) {
      mgopt_diag_clear(&vd);
      if (mgopt_program_verify(rw->p, &vd) != MGOPT_OK) {
        if (rw->d) *rw->d = vd;
        return MGOPT_ERR_VERIFY;
      }
    }
    if (++done >= cap) return mgopt__rw_cap_diag(rw, cap);
  }
  return rw->oom ? mgopt_diag_set(rw->d, MGOPT_ERR_NOMEM, "rewriter: out of memory") : MGOPT_OK;
}

static int mgopt__rw_unmark_group(mgopt_op *op, void *ud) {
  (void)ud;
  op->flags &= ~MGOPT__OP_FOLD_GROUP;
  return 0;
}

MGOPT__PRIVATE void mgopt__fold_groups_end(mgopt_program *p) {
  if (!p->fold_groups) return;
  mgopt_program_walk(p, mgopt__rw_unmark_group, NULL);
  p->fold_groups = 0;
}

MGOPTDEF mgopt_status mgopt_rewrite_function(mgopt_program *p, mgopt_function *f,
                                             const mgopt_pattern *patterns, int32_t npatterns,
                                             const mgopt_rewrite_config *cfg,
                                             mgopt_rewrite_stats *stats, mgopt_diag *d) {
  mgopt_rewriter rw;
  mgopt_rewrite_config dflt;
  mgopt_status s;
  const mgopt_allocator *al = &p->alloc;
  mgopt_diag_clear(d);
  if (!f || npatterns < 0 || (npatterns && !patterns))
    return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "rewrite: bad arguments");
  if (!cfg) {
    memset(&dflt, 0, sizeof dflt);
    cfg = &dflt;
  }
  memset(&rw, 0, sizeof rw);
  rw.p = p;
  rw.cfg = cfg;
  rw.stats = stats;
  rw.d = d;
  rw.pats = patterns;
  rw.npats = npatterns;
  rw.rng = cfg->shuffle_seed ? cfg->shuffle_seed : 1;
  s = mgopt__rw_index(&rw);
  if (s == MGOPT_ERR_INVALID_ARG) mgopt_diag_set(d, s, "rewrite: a pattern has no function or a bad root kind");
  else if (s) mgopt_diag_set(d, s, "rewrite: out of memory");
  else s = mgopt__rw_run(&rw, f);
  /* leave no queued flags behind, nor verdicts of groups of folds */
  while (rw.nq > 0) rw.q[--rw.nq]->flags &= ~MGOPT__OP_QUEUED;
  mgopt__fold_groups_end(p);
  if (rw.q) mgopt__heap_free(al, rw.q, (size_t)rw.qcap * sizeof(mgopt_op *));
  if (rw.order) mgopt__heap_free(al, rw.order, sizeof(int32_t) * (size_t)(npatterns + 1));
  if (rw.start) mgopt__heap_free(al, rw.start, sizeof(int32_t) * (MGOPT_OP__COUNT + 2));
  if (rw.hits) mgopt__heap_free(al, rw.hits, sizeof(int64_t) * (size_t)(npatterns + 1));
  if (stats) stats->npatterns = stats->npatterns ? stats->npatterns : npatterns;
  return s;
}

MGOPTDEF mgopt_status mgopt_rewrite_program(mgopt_program *p, const mgopt_pattern *patterns,
                                            int32_t npatterns, const mgopt_rewrite_config *cfg,
                                            mgopt_rewrite_stats *stats, mgopt_diag *d) {
  int32_t i;
  for (i = 0; i < p->nfuncs; i++) {
    mgopt_status s = mgopt_rewrite_function(p, p->funcs[i], patterns, npatterns, cfg, stats, d);
    if (s) return s;
  }
  return MGOPT_OK;
}
/* src/core/passmgr.c — pass lookup, pipeline strings, typed options, running with instrumentation. */

/* Pipeline grammar (whitespace allowed between tokens):
     pipeline := "" | "none" | item ("," item)*
     item     := NAME [ "{" opt ("," opt)* "}" ]
     opt      := NAME "=" VALUE          VALUE: a bare word or a "quoted string"
   NAME is [A-Za-z0-9_:.]+; it names a pass (full "common::x" or short "x")
   or a named pipeline, expanded in place (nesting limited). */

#define MGOPT__PIPE_MAX_DEPTH 8
#define MGOPT__PIPE_MAX_OPTS 32

static int mgopt__pm_name_eq(const char *full, const char *s, size_t n) {
  const char *c;
  if (strlen(full) == n && memcmp(full, s, n) == 0) return 1;
  /* short form: the part after the last "::" */
  c = strrchr(full, ':');
  if (c && c > full && c[-1] == ':') {
    c++;
    return strlen(c) == n && memcmp(c, s, n) == 0;
  }
  return 0;
}

MGOPTDEF const mgopt_pass_def *mgopt_registry_find(const mgopt_registry *r, const char *name, size_t n) {
  int32_t i;
  if (!r) return NULL;
  for (i = 0; i < r->npasses; i++)
    if (mgopt__pm_name_eq(r->passes[i]->name, name, n)) return r->passes[i];
  return NULL;
}

static const mgopt_pipeline_def *mgopt__pm_find_pipeline(const mgopt_registry *r, const char *s, size_t n) {
  int32_t i;
  for (i = 0; i < r->npipelines; i++)
    if (strlen(r->pipelines[i].name) == n && memcmp(r->pipelines[i].name, s, n) == 0)
      return &r->pipelines[i];
  return NULL;
}

typedef struct mgopt__pm {
  const mgopt_registry *r;
  mgopt_program *p;            /* NULL: check only */
  const mgopt_pipeline_options *ro;
  mgopt_pass_report *reports;
  int32_t cap, nrep;
  mgopt_diag *d;
  const char *top;             /* the caller's pipeline string (for columns) */
  int depth;
} mgopt__pm;

/* What a pass that failed with s leaves to the pipeline (not strict): it
   goes on when s is not NOMEM and the program still verifies (passes fail
   before changing anything, or between complete rewrites). The report and
   the after_pass call carry the failure; d is cleared for the next pass.
   Returns s when the pipeline must stop. */
static mgopt_status mgopt__pm_skip(mgopt__pm *m, mgopt_pass_report *rep, mgopt_status s) {
  mgopt_diag vd;
  if ((m->ro && m->ro->strict) || s == MGOPT_ERR_NOMEM || m->p->status) return s;
  if (mgopt_program_verify(m->p, &vd) != MGOPT_OK) return s;
  rep->status = s;
  rep->ops_after = mgopt_program_op_count(m->p);
  rep->diag = m->d;
  if (m->ro && m->ro->after_pass) m->ro->after_pass(m->p, rep, m->ro->after_pass_ud);
  rep->diag = NULL;
  if (m->reports && m->nrep < m->cap) m->reports[m->nrep] = *rep;
  m->nrep++;
  mgopt_diag_clear(m->d);
  return MGOPT_OK;
}

static int mgopt__pm_namech(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == ':' || c == '.' || c == '-';
}

static const char *mgopt__pm_ws(const char *s) {
  while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
  return s;
}

static mgopt_status mgopt__pm_err(mgopt__pm *m, const char *src, const char *at, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static mgopt_status mgopt__pm_err(mgopt__pm *m, const char *src, const char *at, const char *fmt, ...) {
  va_list ap;
  if (!m->d) return MGOPT_ERR_INVALID_ARG;
  m->d->status = MGOPT_ERR_INVALID_ARG;
  m->d->line = 1;
  m->d->col = src == m->top ? (int)(at - src) + 1 : 0;
  va_start(ap, fmt);
  vsnprintf(m->d->msg, sizeof m->d->msg, fmt, ap);
  va_end(ap);
  return MGOPT_ERR_INVALID_ARG;
}

static int mgopt__pm_parse_value(const mgopt_opt_def *od, const char *v, size_t n, mgopt_opt_value *out,
                                 char *strbuf) {
  char tmp[128];
  char *end;
  if (n >= sizeof tmp) return 0;
  memcpy(tmp, v, n);
  tmp[n] = 0;
  switch ((mgopt_opt_kind)od->kind) {
    case MGOPT_OPT_BOOL:
      if (strcmp(tmp, "true") == 0 || strcmp(tmp, "1") == 0) out->i = 1;
      else if (strcmp(tmp, "false") == 0 || strcmp(tmp, "0") == 0) out->i = 0;
      else return 0;
      return 1;
    case MGOPT_OPT_INT:
      out->i = strtoll(tmp, &end, 10);
      return n > 0 && *end == 0;
    case MGOPT_OPT_FLOAT:
      out->f = strtod(tmp, &end);
      return n > 0 && *end == 0;
    case MGOPT_OPT_STRING:
      memcpy(strbuf, v, n);
      strbuf[n] = 0;
      out->s = strbuf;
      return 1;
  }
  return 0;
}

/* 1 if function f may hold an op of one of the pass's needed kinds (an
   incomplete index counts as yes). */
static int mgopt__pm_has_needed(const mgopt_function *f, const mgopt_pass_def *pd) {
  int32_t i;
  if (!pd->nneeds) return 1;
  for (i = 0; i < pd->nneeds; i++)
    if (mgopt__index_kind_count(f, pd->needs[i]) != 0) return 1;
  return 0;
}

MGOPT__PRIVATE mgopt_status mgopt__pass_run_patterns(mgopt_pass_ctx *ctx, const mgopt_pass_def *pd) {
  mgopt_rewrite_config cfg;
  mgopt_rewrite_stats st;
  mgopt_status s = MGOPT_OK;
  int32_t i;
  memset(&cfg, 0, sizeof cfg);
  memset(&st, 0, sizeof st);
  cfg.keep_dead = 1;
  if (pd->fold_constants) {
    cfg.fold = ctx->fold;
    cfg.fold_ud = ctx->fold_ud;
  }
  for (i = 0; i < ctx->program->nfuncs && !s; i++)
    if (mgopt__pm_has_needed(ctx->program->funcs[i], pd))
      s = mgopt_rewrite_function(ctx->program, ctx->program->funcs[i], pd->patterns, pd->npatterns, &cfg, &st,
                                 ctx->diag);
  ctx->rewrites += st.rewrites + st.folds;
  return s;
}

MGOPT__PRIVATE mgopt_status mgopt__pass_run_pattern(mgopt_pass_ctx *ctx, const char *name, int32_t root_kind,
                                                    mgopt_pattern_fn fn, void *ud) {
  mgopt_pattern pat;
  mgopt_pass_def pd;
  memset(&pat, 0, sizeof pat);
  pat.name = name;
  pat.root_kind = root_kind;
  pat.benefit = 1;
  pat.fn = fn;
  pat.ud = ud;
  memset(&pd, 0, sizeof pd);
  pd.patterns = &pat;
  pd.npatterns = 1;
  return mgopt__pass_run_patterns(ctx, &pd);
}

typedef struct mgopt__pm_find {
  const char *name;
  const mgopt_op *op;
} mgopt__pm_find;

static int mgopt__pm_find_op(mgopt_op *op, void *ud) {
  mgopt__pm_find *f = (mgopt__pm_find *)ud;
  const char *n = op->name ? op->name : (op->nouts > 0 && op->outs[0]->name) ? op->outs[0]->name : NULL;
  if (!n || strcmp(n, f->name) != 0) return 0;
  f->op = op;
  return 1;
}

/* A pass that names an op only by name in d->op: give d the op's .mil place. */
static void mgopt__pm_place(mgopt__pm *m) {
  mgopt__pm_find f;
  char msg[MGOPT_DIAG_MSG_MAX];
  mgopt_status st;
  if (!m->d || !m->d->op[0] || m->d->line || !m->p->nplaces) return;
  f.name = m->d->op;
  f.op = NULL;
  if (!mgopt_program_walk(m->p, mgopt__pm_find_op, &f)) return;
  st = m->d->status;
  memcpy(msg, m->d->msg, sizeof msg);
  mgopt__diag_place(m->d, f.op);
  m->d->status = st;
  memcpy(m->d->msg, msg, sizeof msg);
}

static mgopt_status mgopt__pm_run_pass(mgopt__pm *m, const mgopt_pass_def *pd, mgopt_opt_value *vals) {
  mgopt_pass_ctx ctx;
  mgopt_pass_report rep;
  mgopt_status s;
  double t0 = 0;
  memset(&ctx, 0, sizeof ctx);
  ctx.program = m->p;
  ctx.opts = vals;
  ctx.diag = m->d;
  ctx.fold = m->r->fold;
  ctx.fold_ud = m->r->fold_ud;
  ctx.compress_config = m->ro ? m->ro->compress_config : NULL;
  ctx.composites = m->ro ? m->ro->composites : NULL;
  ctx.legalize_config = m->ro ? m->ro->legalize_config : NULL;
  memset(&rep, 0, sizeof rep);
  rep.name = pd->name;
  rep.ops_before = mgopt_program_op_count(m->p);
  if (m->ro && m->ro->clock) t0 = m->ro->clock();
  s = pd->run ? pd->run(&ctx) : mgopt__pass_run_patterns(&ctx, pd);
  mgopt__fold_groups_end(m->p);
  if (m->ro && m->ro->clock) rep.seconds = m->ro->clock() - t0;
  if (s == MGOPT_OK && m->p->status) s = mgopt_diag_set(m->d, MGOPT_ERR_NOMEM, "%s: out of memory", pd->name);
  if (s) {
    if (m->d && m->d->status == MGOPT_OK) mgopt_diag_set(m->d, s, "%s failed", pd->name);
    if (m->d && strncmp(m->d->msg, pd->name, strlen(pd->name)) != 0) {
      mgopt__diag_prefix(m->d, ": ");
      mgopt__diag_prefix(m->d, pd->name);
    }
    mgopt__pm_place(m);
    rep.rewrites = ctx.rewrites;
    return mgopt__pm_skip(m, &rep, s);
  }
  rep.rewrites = ctx.rewrites;
  rep.ops_after = mgopt_program_op_count(m->p);
  if (m->ro && m->ro->verify_each) {
    s = mgopt_program_verify(m->p, m->d);
    if (s) {
      mgopt__diag_prefix(m->d, ": ");
      mgopt__diag_prefix(m->d, pd->name);
      mgopt__diag_prefix(m->d, "after ");
      return s;
    }
  }
  if (m->reports && m->nrep < m->cap) m->reports[m->nrep] = rep;
  m->nrep++;
  if (m->ro && m->ro->after_pass) m->ro->after_pass(m->p, &rep, m->ro->after_pass_ud);
  return MGOPT_OK;
}

/* After a ',' inside options: does "name =" (the next option) or the end of
   the options follow? Otherwise the ',' belongs to a list value. */
static int mgopt__pm_option_follows(const char *q) {
  const char *n;
  q = mgopt__pm_ws(q);
  if (*q == '}' || *q == 0) return 1;
  n = q;
  while (mgopt__pm_namech(*q)) q++;
  return q > n && *mgopt__pm_ws(q) == '=';
}

static mgopt_status mgopt__pm_walk(mgopt__pm *m, const char *src) {
  const char *s = mgopt__pm_ws(src);
  if (*s == 0) return MGOPT_OK;
  if (strncmp(s, "none", 4) == 0 && *mgopt__pm_ws(s + 4) == 0) return MGOPT_OK;
  for (;;) {
    const char *name, *q;
    size_t nlen;
    const mgopt_pass_def *pd;
    const mgopt_pipeline_def *pl;
    mgopt_opt_value vals[MGOPT__PIPE_MAX_OPTS];
    char strbufs[MGOPT__PIPE_MAX_OPTS][128];
    int32_t i;
    s = mgopt__pm_ws(s);
    name = s;
    while (mgopt__pm_namech(*s)) s++;
    nlen = (size_t)(s - name);
    if (nlen == 0) return mgopt__pm_err(m, src, name, "expected a pass name");
    pd = mgopt_registry_find(m->r, name, nlen);
    pl = pd ? NULL : mgopt__pm_find_pipeline(m->r, name, nlen);
    if (!pd && !pl) return mgopt__pm_err(m, src, name, "unknown pass or pipeline '%.*s'", (int)nlen, name);
    q = mgopt__pm_ws(s);
    if (pl) {
      mgopt_status st;
      if (*q == '{') return mgopt__pm_err(m, src, q, "pipeline '%s' takes no options", pl->name);
      if (m->depth >= MGOPT__PIPE_MAX_DEPTH) return mgopt__pm_err(m, src, name, "pipelines nested too deeply");
      m->depth++;
      st = mgopt__pm_walk(m, pl->passes);
      m->depth--;
      if (st) return st;
    } else {
      if (pd->nopts > MGOPT__PIPE_MAX_OPTS) return mgopt__pm_err(m, src, name, "pass has too many options");
      for (i = 0; i < pd->nopts; i++) {
        const mgopt_opt_def *od = &pd->opts[i];
        memset(&vals[i], 0, sizeof vals[i]);
        vals[i].s = "";
        if (od->deflt && !mgopt__pm_parse_value(od, od->deflt, strlen(od->deflt), &vals[i], strbufs[i]))
          return mgopt__pm_err(m, src, name, "pass '%s': bad default for option '%s'", pd->name, od->name);
      }
      if (*q == '{') {
        q++;
        for (;;) {
          const char *on, *ov;
          size_t onl, ovl;
          const mgopt_opt_def *od = NULL;
          int32_t oi = -1;
          q = mgopt__pm_ws(q);
          on = q;
          while (mgopt__pm_namech(*q)) q++;
          onl = (size_t)(q - on);
          if (!onl) return mgopt__pm_err(m, src, on, "expected an option name");
          for (i = 0; i < pd->nopts; i++)
            if (strlen(pd->opts[i].name) == onl && memcmp(pd->opts[i].name, on, onl) == 0) {
              od = &pd->opts[i];
              oi = i;
            }
          if (!od) return mgopt__pm_err(m, src, on, "pass '%s' has no option '%.*s'", pd->name, (int)onl, on);
          q = mgopt__pm_ws(q);
          if (*q != '=') return mgopt__pm_err(m, src, q, "expected '=' after option '%s'", od->name);
          q = mgopt__pm_ws(q + 1);
          if (*q == '"') {
            ov = ++q;
            while (*q && *q != '"') q++;
            if (!*q) return mgopt__pm_err(m, src, ov - 1, "unterminated string");
            ovl = (size_t)(q - ov);
            q++;
          } else {
            /* a bare value ends at '}', a blank, or a ',' that starts the next
               option (a name and '='); `ops=gelu,layer_norm` is one list value */
            ov = q;
            while (*q && *q != '}' && *q != ' ' && *q != '\t' && !(*q == ',' && mgopt__pm_option_follows(q + 1))) q++;
            ovl = (size_t)(q - ov);
          }
          if (!mgopt__pm_parse_value(od, ov, ovl, &vals[oi], strbufs[oi]))
            return mgopt__pm_err(m, src, ov, "bad value '%.*s' for option '%s' of %s", (int)ovl, ov, od->name,
                                 pd->name);
          q = mgopt__pm_ws(q);
          if (*q == ',') {
            q++;
            continue;
          }
          if (*q == '}') {
            q++;
            break;
          }
          return mgopt__pm_err(m, src, q, "expected ',' or '}' in the options of %s", pd->name);
        }
      }
      if (m->p) {
        mgopt_status st = mgopt__pm_run_pass(m, pd, vals);
        if (st) return st;
      }
    }
    s = mgopt__pm_ws(q);
    if (*s == 0) return MGOPT_OK;
    if (*s != ',') return mgopt__pm_err(m, src, s, "expected ',' between passes");
    s++;
  }
}

MGOPTDEF mgopt_status mgopt_pipeline_check(const mgopt_registry *r, const char *pipeline, mgopt_diag *d) {
  mgopt__pm m;
  mgopt_diag_clear(d);
  memset(&m, 0, sizeof m);
  m.r = r;
  m.d = d;
  m.top = pipeline ? pipeline : "";
  if (!r) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "no pass registry");
  return mgopt__pm_walk(&m, m.top);
}

MGOPTDEF mgopt_status mgopt_pipeline_run(mgopt_program *p, const mgopt_registry *r, const char *pipeline,
                                         const mgopt_pipeline_options *opts, mgopt_diag *d) {
  mgopt__pm m;
  mgopt_status s;
  mgopt_diag_clear(d);
  if (!p || !r) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "pipeline: no program or registry");
  /* check the whole string first: a typo late in it must not leave a half-run program */
  s = mgopt_pipeline_check(r, pipeline, d);
  if (s) return s;
  memset(&m, 0, sizeof m);
  m.r = r;
  m.p = p;
  m.ro = opts;
  m.reports = opts ? opts->reports : NULL;
  m.cap = m.reports && opts->reports_cap > 0 ? opts->reports_cap : 0;
  m.d = d;
  m.top = pipeline ? pipeline : "";
  s = mgopt__pm_walk(&m, m.top);
  if (opts && opts->nreports) *opts->nreports = m.nrep < m.cap ? m.nrep : m.cap;
  return s;
}
/* src/onnx/wire.h — private declarations of the protobuf wire codec (pb.c): wire types, reader results, the back-to-front writer. */
#ifndef MGOPT__ONNX_WIRE_H
#define MGOPT__ONNX_WIRE_H

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
/* src/onnx/pb.c — protobuf wire codec: a bounds-checked reader over (ptr, len) and a back-to-front writer. */

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
/* src/onnx/model.h — private declarations of the ModelProto tree (model.c) shared with the file layer: message ids, the decoder entry, the walker. */
#ifndef MGOPT__ONNX_MODEL_H
#define MGOPT__ONNX_MODEL_H

/* Message ids: index of a message's table in model.c. */
enum {
  MGOPT__OM_STRSTR,
  MGOPT__OM_OPSET,
  MGOPT__OM_DIM,
  MGOPT__OM_SHAPE,
  MGOPT__OM_TTYPE,
  MGOPT__OM_TYPE,
  MGOPT__OM_VALUE_INFO,
  MGOPT__OM_TENSOR,
  MGOPT__OM_SPARSE,
  MGOPT__OM_ATTR,
  MGOPT__OM_NODE,
  MGOPT__OM_GRAPH,
  MGOPT__OM_FUNCTION,
  MGOPT__OM_MODEL,
  MGOPT__OM__COUNT
};

#define MGOPT__ONNX_TENSOR_HAS_LOCATION (1u << 4) /* has bit of TensorProto.data_location */

MGOPT__PRIVATE mgopt_status mgopt__onnx_read_into(mgopt_program *p, const uint8_t *buf, size_t len,
                                                  const mgopt_onnx_read_options *opts, mgopt_onnx_model **out,
                                                  mgopt_diag *d);

/* A visitor of mgopt__onnx_walk: mid is the message's id, parent/field how it
   was reached (-1/0 for the root); nonzero stops the walk. */
typedef int (*mgopt__onnx_visit_fn)(void *ctx, int mid, void *obj, int parent, uint32_t field);
MGOPT__PRIVATE int mgopt__onnx_walk(int mid, void *obj, int parent, uint32_t field,
                                    mgopt__onnx_visit_fn fn, void *ctx, int depth);

#endif
/* src/onnx/model.c — the ONNX ModelProto tree: message tables, decoder, encoder, equality, tensor checks. */

/* Every message the reader knows is described by a table of its fields (number,
   kind, where it lives in the struct). One generic decoder, encoder, equality
   and walker run over these tables, so a field listed once is read, written,
   compared and visited alike. Fields not in a table are skipped on read and
   so dropped on write. */

enum {
  MGOPT__OF_I64,   /* int64 varint */
  MGOPT__OF_I32,   /* int32 varint (enums too) */
  MGOPT__OF_F32,   /* float, fixed32 */
  MGOPT__OF_STR,   /* string / bytes: mgopt_str */
  MGOPT__OF_MSG,   /* singular message: pointer, NULL when absent */
  MGOPT__OF_RI64,  /* repeated int64: int64_t *, count */
  MGOPT__OF_RI32,  /* repeated int32 */
  MGOPT__OF_RU64,  /* repeated uint64 */
  MGOPT__OF_RF32,  /* repeated float */
  MGOPT__OF_RF64,  /* repeated double */
  MGOPT__OF_RSTR,  /* repeated string: mgopt_str * */
  MGOPT__OF_RMSG,  /* repeated message: array of structs */
  MGOPT__OF_RRAW,  /* repeated message kept as its bytes: mgopt_str * */
  MGOPT__OF_OTHER, /* its presence turns the whole message into raw bytes (TypeProto kinds) */
  MGOPT__OF_REJECT /* its presence is an error (TensorProto.segment) */
};

#define MGOPT__OFL_INTERN 1u /* strings: interned in the program */
#define MGOPT__OFL_PACKED 2u /* repeated scalars: written packed */


typedef struct mgopt__onnx_field {
  uint32_t num;
  uint8_t kind;
  uint8_t flags;
  int8_t has_bit;  /* singular fields: bit in the struct's `has` word, -1 = none */
  uint8_t sub;     /* MSG / RMSG: message id */
  const char *name;
  size_t off;      /* the value, or the array pointer */
  size_t count_off; /* repeated: the int64_t count */
} mgopt__onnx_field;

#define MGOPT__ONONE ((size_t)-1)

typedef struct mgopt__onnx_msg {
  const char *name;
  size_t size;
  size_t has_off;    /* MGOPT__ONONE: no `has` word */
  size_t other_off;  /* MGOPT__ONONE: no raw form */
  const mgopt__onnx_field *fields; /* sorted by field number */
  int32_t nfields;
} mgopt__onnx_msg;

#define MGOPT__OS(num, kind, fl, hb, sub, T, m, nm) \
  { num, MGOPT__OF_##kind, fl, hb, sub, nm, offsetof(T, m), 0 }
#define MGOPT__OR(num, kind, fl, sub, T, m, cnt, nm) \
  { num, MGOPT__OF_##kind, fl, -1, sub, nm, offsetof(T, m), offsetof(T, cnt) }
#define MGOPT__OI MGOPT__OFL_INTERN
#define MGOPT__OP MGOPT__OFL_PACKED

static const mgopt__onnx_field mgopt__onnx_f_strstr[] = {
    MGOPT__OS(1, STR, 0, 0, 0, mgopt_onnx_strstr, key, "key"),
    MGOPT__OS(2, STR, 0, 1, 0, mgopt_onnx_strstr, value, "value")};
static const mgopt__onnx_field mgopt__onnx_f_opset[] = {
    MGOPT__OS(1, STR, MGOPT__OI, 0, 0, mgopt_onnx_opset, domain, "domain"),
    MGOPT__OS(2, I64, 0, 1, 0, mgopt_onnx_opset, version, "version")};
static const mgopt__onnx_field mgopt__onnx_f_dim[] = {
    MGOPT__OS(1, I64, 0, 0, 0, mgopt_onnx_dim, value, "dim_value"),
    MGOPT__OS(2, STR, MGOPT__OI, 1, 0, mgopt_onnx_dim, param, "dim_param"),
    MGOPT__OS(3, STR, 0, 2, 0, mgopt_onnx_dim, denotation, "denotation")};
static const mgopt__onnx_field mgopt__onnx_f_shape[] = {
    MGOPT__OR(1, RMSG, 0, MGOPT__OM_DIM, mgopt_onnx_shape, dims, ndims, "dim")};
static const mgopt__onnx_field mgopt__onnx_f_ttype[] = {
    MGOPT__OS(1, I32, 0, 0, 0, mgopt_onnx_tensor_type, elem_type, "elem_type"),
    MGOPT__OS(2, MSG, 0, -1, MGOPT__OM_SHAPE, mgopt_onnx_tensor_type, shape, "shape")};
static const mgopt__onnx_field mgopt__onnx_f_type[] = {
    MGOPT__OS(1, MSG, 0, -1, MGOPT__OM_TTYPE, mgopt_onnx_type, tensor_type, "tensor_type"),
    MGOPT__OS(4, OTHER, 0, -1, 0, mgopt_onnx_type, other, "sequence_type"),
    MGOPT__OS(5, OTHER, 0, -1, 0, mgopt_onnx_type, other, "map_type"),
    MGOPT__OS(6, STR, 0, -1, 0, mgopt_onnx_type, denotation, "denotation"),
    MGOPT__OS(7, OTHER, 0, -1, 0, mgopt_onnx_type, other, "opaque_type"),
    MGOPT__OS(8, OTHER, 0, -1, 0, mgopt_onnx_type, other, "sparse_tensor_type"),
    MGOPT__OS(9, OTHER, 0, -1, 0, mgopt_onnx_type, other, "optional_type")};
static const mgopt__onnx_field mgopt__onnx_f_value_info[] = {
    MGOPT__OS(1, STR, MGOPT__OI, 0, 0, mgopt_onnx_value_info, name, "name"),
    MGOPT__OS(2, MSG, 0, -1, MGOPT__OM_TYPE, mgopt_onnx_value_info, type, "type"),
    MGOPT__OS(3, STR, 0, 1, 0, mgopt_onnx_value_info, doc_string, "doc_string"),
    MGOPT__OR(4, RMSG, 0, MGOPT__OM_STRSTR, mgopt_onnx_value_info, metadata_props, nmetadata_props,
              "metadata_props")};
static const mgopt__onnx_field mgopt__onnx_f_tensor[] = {
    MGOPT__OR(1, RI64, 0, 0, mgopt_onnx_tensor, dims, ndims, "dims"),
    MGOPT__OS(2, I32, 0, 0, 0, mgopt_onnx_tensor, data_type, "data_type"),
    MGOPT__OS(3, REJECT, 0, -1, 0, mgopt_onnx_tensor, dims, "segment"),
    MGOPT__OR(4, RF32, MGOPT__OP, 0, mgopt_onnx_tensor, float_data, nfloat_data, "float_data"),
    MGOPT__OR(5, RI32, MGOPT__OP, 0, mgopt_onnx_tensor, int32_data, nint32_data, "int32_data"),
    MGOPT__OR(6, RSTR, 0, 0, mgopt_onnx_tensor, string_data, nstring_data, "string_data"),
    MGOPT__OR(7, RI64, MGOPT__OP, 0, mgopt_onnx_tensor, int64_data, nint64_data, "int64_data"),
    MGOPT__OS(8, STR, MGOPT__OI, 2, 0, mgopt_onnx_tensor, name, "name"),
    MGOPT__OS(9, STR, 0, 1, 0, mgopt_onnx_tensor, raw_data, "raw_data"),
    MGOPT__OR(10, RF64, MGOPT__OP, 0, mgopt_onnx_tensor, double_data, ndouble_data, "double_data"),
    MGOPT__OR(11, RU64, MGOPT__OP, 0, mgopt_onnx_tensor, uint64_data, nuint64_data, "uint64_data"),
    MGOPT__OS(12, STR, 0, 3, 0, mgopt_onnx_tensor, doc_string, "doc_string"),
    MGOPT__OR(13, RMSG, 0, MGOPT__OM_STRSTR, mgopt_onnx_tensor, external_data, nexternal_data,
              "external_data"),
    MGOPT__OS(14, I32, 0, 4, 0, mgopt_onnx_tensor, data_location, "data_location"),
    MGOPT__OR(16, RMSG, 0, MGOPT__OM_STRSTR, mgopt_onnx_tensor, metadata_props, nmetadata_props,
              "metadata_props")};
static const mgopt__onnx_field mgopt__onnx_f_sparse[] = {
    MGOPT__OS(1, MSG, 0, -1, MGOPT__OM_TENSOR, mgopt_onnx_sparse_tensor, values, "values"),
    MGOPT__OS(2, MSG, 0, -1, MGOPT__OM_TENSOR, mgopt_onnx_sparse_tensor, indices, "indices"),
    MGOPT__OR(3, RI64, 0, 0, mgopt_onnx_sparse_tensor, dims, ndims, "dims")};
static const mgopt__onnx_field mgopt__onnx_f_attr[] = {
    MGOPT__OS(1, STR, MGOPT__OI, 4, 0, mgopt_onnx_attribute, name, "name"),
    MGOPT__OS(2, F32, 0, 0, 0, mgopt_onnx_attribute, f, "f"),
    MGOPT__OS(3, I64, 0, 1, 0, mgopt_onnx_attribute, i, "i"),
    MGOPT__OS(4, STR, 0, 2, 0, mgopt_onnx_attribute, s, "s"),
    MGOPT__OS(5, MSG, 0, -1, MGOPT__OM_TENSOR, mgopt_onnx_attribute, t, "t"),
    MGOPT__OS(6, MSG, 0, -1, MGOPT__OM_GRAPH, mgopt_onnx_attribute, g, "g"),
    MGOPT__OR(7, RF32, 0, 0, mgopt_onnx_attribute, floats, nfloats, "floats"),
    MGOPT__OR(8, RI64, 0, 0, mgopt_onnx_attribute, ints, nints, "ints"),
    MGOPT__OR(9, RSTR, 0, 0, mgopt_onnx_attribute, strings, nstrings, "strings"),
    MGOPT__OR(10, RMSG, 0, MGOPT__OM_TENSOR, mgopt_onnx_attribute, tensors, ntensors, "tensors"),
    MGOPT__OR(11, RMSG, 0, MGOPT__OM_GRAPH, mgopt_onnx_attribute, graphs, ngraphs, "graphs"),
    MGOPT__OS(13, STR, 0, 5, 0, mgopt_onnx_attribute, doc_string, "doc_string"),
    MGOPT__OS(14, MSG, 0, -1, MGOPT__OM_TYPE, mgopt_onnx_attribute, tp, "tp"),
    MGOPT__OR(15, RMSG, 0, MGOPT__OM_TYPE, mgopt_onnx_attribute, type_protos, ntype_protos,
              "type_protos"),
    MGOPT__OS(20, I32, 0, 3, 0, mgopt_onnx_attribute, type, "type"),
    MGOPT__OS(21, STR, MGOPT__OI, 6, 0, mgopt_onnx_attribute, ref_attr_name, "ref_attr_name"),
    MGOPT__OS(22, MSG, 0, -1, MGOPT__OM_SPARSE, mgopt_onnx_attribute, sparse_tensor, "sparse_tensor"),
    MGOPT__OR(23, RMSG, 0, MGOPT__OM_SPARSE, mgopt_onnx_attribute, sparse_tensors, nsparse_tensors,
              "sparse_tensors")};
static const mgopt__onnx_field mgopt__onnx_f_node[] = {
    MGOPT__OR(1, RSTR, MGOPT__OI, 0, mgopt_onnx_node, inputs, ninputs, "input"),
    MGOPT__OR(2, RSTR, MGOPT__OI, 0, mgopt_onnx_node, outputs, noutputs, "output"),
    MGOPT__OS(3, STR, MGOPT__OI, 0, 0, mgopt_onnx_node, name, "name"),
    MGOPT__OS(4, STR, MGOPT__OI, 1, 0, mgopt_onnx_node, op_type, "op_type"),
    MGOPT__OR(5, RMSG, 0, MGOPT__OM_ATTR, mgopt_onnx_node, attributes, nattributes, "attribute"),
    MGOPT__OS(6, STR, 0, 2, 0, mgopt_onnx_node, doc_string, "doc_string"),
    MGOPT__OS(7, STR, MGOPT__OI, 3, 0, mgopt_onnx_node, domain, "domain"),
    MGOPT__OS(8, STR, MGOPT__OI, 4, 0, mgopt_onnx_node, overload, "overload"),
    MGOPT__OR(9, RMSG, 0, MGOPT__OM_STRSTR, mgopt_onnx_node, metadata_props, nmetadata_props,
              "metadata_props")};
static const mgopt__onnx_field mgopt__onnx_f_graph[] = {
    MGOPT__OR(1, RMSG, 0, MGOPT__OM_NODE, mgopt_onnx_graph, nodes, nnodes, "node"),
    MGOPT__OS(2, STR, MGOPT__OI, 0, 0, mgopt_onnx_graph, name, "name"),
    MGOPT__OR(5, RMSG, 0, MGOPT__OM_TENSOR, mgopt_onnx_graph, initializers, ninitializers,
              "initializer"),
    MGOPT__OS(10, STR, 0, 1, 0, mgopt_onnx_graph, doc_string, "doc_string"),
    MGOPT__OR(11, RMSG, 0, MGOPT__OM_VALUE_INFO, mgopt_onnx_graph, inputs, ninputs, "input"),
    MGOPT__OR(12, RMSG, 0, MGOPT__OM_VALUE_INFO, mgopt_onnx_graph, outputs, noutputs, "output"),
    MGOPT__OR(13, RMSG, 0, MGOPT__OM_VALUE_INFO, mgopt_onnx_graph, value_info, nvalue_info,
              "value_info"),
    MGOPT__OR(14, RRAW, 0, 0, mgopt_onnx_graph, quantization_annotation, nquantization_annotation,
              "quantization_annotation"),
    MGOPT__OR(15, RMSG, 0, MGOPT__OM_SPARSE, mgopt_onnx_graph, sparse_initializers,
              nsparse_initializers, "sparse_initializer"),
    MGOPT__OR(16, RMSG, 0, MGOPT__OM_STRSTR, mgopt_onnx_graph, metadata_props, nmetadata_props,
              "metadata_props")};
static const mgopt__onnx_field mgopt__onnx_f_function[] = {
    MGOPT__OS(1, STR, MGOPT__OI, 0, 0, mgopt_onnx_function, name, "name"),
    MGOPT__OR(4, RSTR, MGOPT__OI, 0, mgopt_onnx_function, inputs, ninputs, "input"),
    MGOPT__OR(5, RSTR, MGOPT__OI, 0, mgopt_onnx_function, outputs, noutputs, "output"),
    MGOPT__OR(6, RSTR, MGOPT__OI, 0, mgopt_onnx_function, attributes, nattributes, "attribute"),
    MGOPT__OR(7, RMSG, 0, MGOPT__OM_NODE, mgopt_onnx_function, nodes, nnodes, "node"),
    MGOPT__OS(8, STR, 0, 1, 0, mgopt_onnx_function, doc_string, "doc_string"),
    MGOPT__OR(9, RMSG, 0, MGOPT__OM_OPSET, mgopt_onnx_function, opset_imports, nopset_imports,
              "opset_import"),
    MGOPT__OS(10, STR, MGOPT__OI, 2, 0, mgopt_onnx_function, domain, "domain"),
    MGOPT__OR(11, RMSG, 0, MGOPT__OM_ATTR, mgopt_onnx_function, attribute_protos, nattribute_protos,
              "attribute_proto"),
    MGOPT__OR(12, RMSG, 0, MGOPT__OM_VALUE_INFO, mgopt_onnx_function, value_info, nvalue_info,
              "value_info"),
    MGOPT__OS(13, STR, MGOPT__OI, 3, 0, mgopt_onnx_function, overload, "overload"),
    MGOPT__OR(14, RMSG, 0, MGOPT__OM_STRSTR, mgopt_onnx_function, metadata_props, nmetadata_props,
              "metadata_props")};
static const mgopt__onnx_field mgopt__onnx_f_model[] = {
    MGOPT__OS(1, I64, 0, 0, 0, mgopt_onnx_model, ir_version, "ir_version"),
    MGOPT__OS(2, STR, 0, 1, 0, mgopt_onnx_model, producer_name, "producer_name"),
    MGOPT__OS(3, STR, 0, 2, 0, mgopt_onnx_model, producer_version, "producer_version"),
    MGOPT__OS(4, STR, 0, 3, 0, mgopt_onnx_model, domain, "domain"),
    MGOPT__OS(5, I64, 0, 4, 0, mgopt_onnx_model, model_version, "model_version"),
    MGOPT__OS(6, STR, 0, 5, 0, mgopt_onnx_model, doc_string, "doc_string"),
    MGOPT__OS(7, MSG, 0, -1, MGOPT__OM_GRAPH, mgopt_onnx_model, graph, "graph"),
    MGOPT__OR(8, RMSG, 0, MGOPT__OM_OPSET, mgopt_onnx_model, opset_imports, nopset_imports,
              "opset_import"),
    MGOPT__OR(14, RMSG, 0, MGOPT__OM_STRSTR, mgopt_onnx_model, metadata_props, nmetadata_props,
              "metadata_props"),
    MGOPT__OR(20, RRAW, 0, 0, mgopt_onnx_model, training_info, ntraining_info, "training_info"),
    MGOPT__OR(25, RMSG, 0, MGOPT__OM_FUNCTION, mgopt_onnx_model, functions, nfunctions, "functions")};

#define MGOPT__OMSG(nm, T, tab, has, other) \
  { nm, sizeof(T), has, other, tab, MGOPT__ARRAY_COUNT(tab) }
#define MGOPT__OHAS(T) offsetof(T, has)

static const mgopt__onnx_msg mgopt__onnx_msgs[MGOPT__OM__COUNT] = {
    MGOPT__OMSG("StringStringEntryProto", mgopt_onnx_strstr, mgopt__onnx_f_strstr,
                MGOPT__OHAS(mgopt_onnx_strstr), MGOPT__ONONE),
    MGOPT__OMSG("OperatorSetIdProto", mgopt_onnx_opset, mgopt__onnx_f_opset,
                MGOPT__OHAS(mgopt_onnx_opset), MGOPT__ONONE),
    MGOPT__OMSG("Dimension", mgopt_onnx_dim, mgopt__onnx_f_dim, MGOPT__OHAS(mgopt_onnx_dim),
                MGOPT__ONONE),
    MGOPT__OMSG("TensorShapeProto", mgopt_onnx_shape, mgopt__onnx_f_shape, MGOPT__ONONE,
                MGOPT__ONONE),
    MGOPT__OMSG("TypeProto.Tensor", mgopt_onnx_tensor_type, mgopt__onnx_f_ttype,
                MGOPT__OHAS(mgopt_onnx_tensor_type), MGOPT__ONONE),
    MGOPT__OMSG("TypeProto", mgopt_onnx_type, mgopt__onnx_f_type, MGOPT__ONONE,
                offsetof(mgopt_onnx_type, other)),
    MGOPT__OMSG("ValueInfoProto", mgopt_onnx_value_info, mgopt__onnx_f_value_info,
                MGOPT__OHAS(mgopt_onnx_value_info), MGOPT__ONONE),
    MGOPT__OMSG("TensorProto", mgopt_onnx_tensor, mgopt__onnx_f_tensor,
                MGOPT__OHAS(mgopt_onnx_tensor), MGOPT__ONONE),
    MGOPT__OMSG("SparseTensorProto", mgopt_onnx_sparse_tensor, mgopt__onnx_f_sparse, MGOPT__ONONE,
                MGOPT__ONONE),
    MGOPT__OMSG("AttributeProto", mgopt_onnx_attribute, mgopt__onnx_f_attr,
                MGOPT__OHAS(mgopt_onnx_attribute), MGOPT__ONONE),
    MGOPT__OMSG("NodeProto", mgopt_onnx_node, mgopt__onnx_f_node, MGOPT__OHAS(mgopt_onnx_node),
                MGOPT__ONONE),
    MGOPT__OMSG("GraphProto", mgopt_onnx_graph, mgopt__onnx_f_graph, MGOPT__OHAS(mgopt_onnx_graph),
                MGOPT__ONONE),
    MGOPT__OMSG("FunctionProto", mgopt_onnx_function, mgopt__onnx_f_function,
                MGOPT__OHAS(mgopt_onnx_function), MGOPT__ONONE),
    MGOPT__OMSG("ModelProto", mgopt_onnx_model, mgopt__onnx_f_model, MGOPT__OHAS(mgopt_onnx_model),
                MGOPT__ONONE)};

#define MGOPT__ONNX_MAX_FIELDS 24
/* Message nesting allowed for a given subgraph depth limit: a graph level
   costs 3 (graph, node, attribute); a value's type adds 5 below a graph. */
#define MGOPT__ONNX_MSG_DEPTH(graph_depth) ((graph_depth) * 3 + 12)
/* The encoder, equality and walker bound their recursion too (trees built by
   hand may be deep or cyclic). */
#define MGOPT__ONNX_TREE_DEPTH 1024 /* message nesting (a subgraph adds 3 levels); bounds the recursion */

/* ---------------------------------------------------------------- data types */

/* Per ONNX data type: bits per element in raw_data (0 = not allowed), the
   typed field that holds it (its field number), values per element in that
   field (2 for complex), and 1 when two elements share one int32_data entry. */
typedef struct mgopt__onnx_dtinfo {
  uint8_t bits, field, per_elem, half;
  uint8_t mg; /* mgopt_dtype */
} mgopt__onnx_dtinfo;

static const mgopt__onnx_dtinfo mgopt__onnx_dt[MGOPT_ONNX_DT__COUNT] = {
    {0, 0, 0, 0, MGOPT_DT_UNKNOWN},        /* UNDEFINED */
    {32, 4, 1, 0, MGOPT_DT_FP32},          /* FLOAT */
    {8, 5, 1, 0, MGOPT_DT_UINT8},          /* UINT8 */
    {8, 5, 1, 0, MGOPT_DT_INT8},           /* INT8 */
    {16, 5, 1, 0, MGOPT_DT_UINT16},        /* UINT16 */
    {16, 5, 1, 0, MGOPT_DT_INT16},         /* INT16 */
    {32, 5, 1, 0, MGOPT_DT_INT32},         /* INT32 */
    {64, 7, 1, 0, MGOPT_DT_INT64},         /* INT64 */
    {0, 6, 1, 0, MGOPT_DT_STRING},         /* STRING */
    {8, 5, 1, 0, MGOPT_DT_BOOL},           /* BOOL */
    {16, 5, 1, 0, MGOPT_DT_FP16},          /* FLOAT16 */
    {64, 10, 1, 0, MGOPT_DT_FP64},         /* DOUBLE */
    {32, 11, 1, 0, MGOPT_DT_UINT32},       /* UINT32 */
    {64, 11, 1, 0, MGOPT_DT_UINT64},       /* UINT64 */
    {64, 4, 2, 0, MGOPT_DT_COMPLEX64},     /* COMPLEX64 */
    {128, 10, 2, 0, MGOPT_DT_COMPLEX128},  /* COMPLEX128 */
    {16, 5, 1, 0, MGOPT_DT_BF16},          /* BFLOAT16 */
    {8, 5, 1, 0, MGOPT_DT_FP8E4M3FN},      /* FLOAT8E4M3FN */
    {8, 5, 1, 0, MGOPT_DT_FP8E4M3FNUZ},    /* FLOAT8E4M3FNUZ */
    {8, 5, 1, 0, MGOPT_DT_FP8E5M2},        /* FLOAT8E5M2 */
    {8, 5, 1, 0, MGOPT_DT_FP8E5M2FNUZ},    /* FLOAT8E5M2FNUZ */
    {4, 5, 1, 1, MGOPT_DT_UINT4X},         /* UINT4 */
    {4, 5, 1, 1, MGOPT_DT_INT4X},          /* INT4 */
    {4, 5, 1, 1, MGOPT_DT_UNKNOWN},        /* FLOAT4E2M1 */
    {8, 5, 1, 0, MGOPT_DT_UNKNOWN}};       /* FLOAT8E8M0 */

MGOPTDEF mgopt_dtype mgopt_onnx_dtype(int32_t t) {
  if (t <= 0 || t >= MGOPT_ONNX_DT__COUNT) return MGOPT_DT_UNKNOWN;
  return (mgopt_dtype)mgopt__onnx_dt[t].mg;
}

MGOPTDEF int64_t mgopt_onnx_raw_nbytes(int32_t t, int64_t numel) {
  int64_t bits;
  if (t <= 0 || t >= MGOPT_ONNX_DT__COUNT || numel < 0) return -1;
  if (!mgopt__onnx_dt[t].bits) return -1;
  if (!mgopt__mul_i64(numel, (int64_t)mgopt__onnx_dt[t].bits, &bits)) return -1;
  return bits / 8 + (bits % 8 ? 1 : 0);
}

/* ---------------------------------------------------------------- paths

   A chain of frames on the C stack names where the decoder (or the equality
   check) is: "ModelProto.graph.node[3].attribute[1]". */
typedef struct mgopt__onnx_frame {
  const struct mgopt__onnx_frame *up;
  const char *name;
  int64_t index; /* -1: not an element of a repeated field */
} mgopt__onnx_frame;

static void mgopt__onnx_path(const mgopt__onnx_frame *fr, char *out, size_t cap) {
  const mgopt__onnx_frame *st[64];
  int n = 0, i, cut = 0;
  size_t len = 0;
  if (!cap) return;
  out[0] = 0;
  for (; fr; fr = fr->up) {
    if (n == 64) {
      cut = 1;
      break;
    }
    st[n++] = fr;
  }
  if (cut) len += (size_t)snprintf(out, cap, "...");
  for (i = n - 1; i >= 0 && len < cap; i--) {
    int k;
    const char *dot = (len == 0) ? "" : ".";
    if (st[i]->index >= 0)
      k = snprintf(out + len, cap - len, "%s%s[%lld]", dot, st[i]->name, (long long)st[i]->index);
    else
      k = snprintf(out + len, cap - len, "%s%s", dot, st[i]->name);
    if (k < 0) break;
    len += (size_t)k;
  }
}

/* ---------------------------------------------------------------- decoder */

typedef struct mgopt__onnxd {
  mgopt_program *p;
  const uint8_t *b;
  size_t len;
  mgopt_diag *d;
  int max_depth, graph_depth, max_msg_depth;
  int64_t max_elements, total_elements;
} mgopt__onnxd;

static mgopt_status mgopt__onnxd_fail(mgopt__onnxd *D, const mgopt__onnx_frame *fr, size_t off,
                                      mgopt_status s, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static mgopt_status mgopt__onnxd_fail(mgopt__onnxd *D, const mgopt__onnx_frame *fr, size_t off,
                                      mgopt_status s, const char *fmt, ...) {
  char path[200], what[200];
  va_list ap;
  if (!D->d) return s;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  mgopt__onnx_path(fr, path, sizeof path);
  D->d->offset = (int64_t)off;
  D->d->line = D->d->col = 0;
  return mgopt_diag_set(D->d, s, "%s: %s", path, what);
}

/* A name (interned: value, node, attribute, op type, domain, dim_param) with a
   NUL byte: the C API sees names up to their first NUL, so "a\0b" would be
   taken for "a" (another value, another op type). Such a file is refused. */
static mgopt_status mgopt__onnxd_nul(mgopt__onnxd *D, const mgopt__onnx_frame *fr, size_t off) {
  return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT, "a NUL byte inside a name");
}

static mgopt_status mgopt__onnxd_pbfail(mgopt__onnxd *D, const mgopt__onnx_frame *fr, size_t off,
                                        int r, const char *what) {
  if (r == MGOPT__PB_PASTEND) {
    /* re-read the declared length to report it */
    uint64_t v = 0;
    size_t p = off;
    mgopt__pb_varint(D->b, &p, D->len, &v);
    return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT,
                             "%s: length %llu past end (%llu bytes left)", what,
                             (unsigned long long)v, (unsigned long long)(D->len - p));
  }
  return mgopt__onnxd_fail(D, fr, off, r == MGOPT__PB_GROUP ? MGOPT_ERR_UNSUPPORTED : MGOPT_ERR_CORRUPT,
                           "%s: %s", what, mgopt__pb_err_str(r));
}

static int mgopt__onnx_find(const mgopt__onnx_msg *M, uint32_t num) {
  int32_t i;
  for (i = 0; i < M->nfields; i++)
    if (M->fields[i].num == num) return (int)i;
  return -1;
}

/* The wire types a field accepts: its own, and LEN for repeated scalars (packed). */
static int mgopt__onnx_wire_ok(int kind, int wt, int *expect) {
  switch (kind) {
  case MGOPT__OF_I64:
  case MGOPT__OF_I32: *expect = MGOPT__PB_VARINT; return wt == MGOPT__PB_VARINT;
  case MGOPT__OF_F32: *expect = MGOPT__PB_FIXED32; return wt == MGOPT__PB_FIXED32;
  case MGOPT__OF_RI64:
  case MGOPT__OF_RI32:
  case MGOPT__OF_RU64: *expect = MGOPT__PB_VARINT; return wt == MGOPT__PB_VARINT || wt == MGOPT__PB_LEN;
  case MGOPT__OF_RF32: *expect = MGOPT__PB_FIXED32; return wt == MGOPT__PB_FIXED32 || wt == MGOPT__PB_LEN;
  case MGOPT__OF_RF64: *expect = MGOPT__PB_FIXED64; return wt == MGOPT__PB_FIXED64 || wt == MGOPT__PB_LEN;
  default: *expect = MGOPT__PB_LEN; return wt == MGOPT__PB_LEN;
  }
}

static size_t mgopt__onnx_elem_size(const mgopt__onnx_field *f) {
  switch (f->kind) {
  case MGOPT__OF_RI64: return sizeof(int64_t);
  case MGOPT__OF_RI32: return sizeof(int32_t);
  case MGOPT__OF_RU64: return sizeof(uint64_t);
  case MGOPT__OF_RF32: return sizeof(float);
  case MGOPT__OF_RF64: return sizeof(double);
  case MGOPT__OF_RSTR:
  case MGOPT__OF_RRAW: return sizeof(mgopt_str);
  case MGOPT__OF_RMSG: return mgopt__onnx_msgs[f->sub].size;
  default: return 0;
  }
}

static int32_t mgopt__onnx_i32(uint64_t v) {
  uint32_t u = (uint32_t)v;
  return u <= 0x7fffffffu ? (int32_t)u : (int32_t)(u - 0x80000000u) - INT32_MAX - 1;
}

#define MGOPT__ONNX_AT(obj, off, T) ((T *)(void *)((char *)(obj) + (off)))
#define MGOPT__ONNX_CAT(obj, off, T) ((const T *)(const void *)((const char *)(obj) + (off)))

static mgopt_status mgopt__onnxd_tensor(mgopt__onnxd *D, mgopt_onnx_tensor *t,
                                        const mgopt__onnx_frame *fr, size_t off);

static mgopt_status mgopt__onnxd_msg(mgopt__onnxd *D, int mid, void *obj, size_t start, size_t end,
                                     const mgopt__onnx_frame *fr, int depth);

/* Stores one scalar element of a repeated field. */
static void mgopt__onnxd_put(const mgopt__onnx_field *f, void *obj, int64_t idx, uint64_t v) {
  void *arr = *MGOPT__ONNX_AT(obj, f->off, void *);
  switch (f->kind) {
  case MGOPT__OF_RI64: ((int64_t *)arr)[idx] = (int64_t)v; break;
  case MGOPT__OF_RI32: ((int32_t *)arr)[idx] = mgopt__onnx_i32(v); break;
  case MGOPT__OF_RU64: ((uint64_t *)arr)[idx] = v; break;
  case MGOPT__OF_RF32: {
    uint32_t u = (uint32_t)v;
    memcpy((float *)arr + idx, &u, 4);
    break;
  }
  case MGOPT__OF_RF64: memcpy((double *)arr + idx, &v, 8); break;
  default: break;
  }
}

static int mgopt__onnxd_scalar(int kind, const uint8_t *b, size_t *pos, size_t end, uint64_t *v) {
  uint32_t u;
  int r;
  switch (kind) {
  case MGOPT__OF_RF32:
    r = mgopt__pb_fixed32(b, pos, end, &u);
    *v = u;
    return r;
  case MGOPT__OF_RF64: return mgopt__pb_fixed64(b, pos, end, v);
  default: return mgopt__pb_varint(b, pos, end, v);
  }
}

static mgopt_status mgopt__onnxd_body(mgopt__onnxd *D, int mid, void *obj, size_t start, size_t end,
                                      const mgopt__onnx_frame *fr, int depth) {
  const mgopt__onnx_msg *M = &mgopt__onnx_msgs[mid];
  const uint8_t *b = D->b;
  int64_t cnt[MGOPT__ONNX_MAX_FIELDS];
  size_t pos, ps, pl;
  int other = 0, r, i;
  uint32_t num = 0;
  int wt = 0;
  mgopt_status st;

  /* pass 1: check the structure of this level, count repeated fields
     (only this message's counters are cleared: most messages have few) */
  for (i = 0; i < M->nfields; i++) cnt[i] = 0;
  pos = start;
  while (pos < end) {
    size_t kpos = pos;
    int fi, expect;
    r = mgopt__pb_key(b, &pos, end, &num, &wt);
    if (r == MGOPT__PB_OK && num == 0)
      return mgopt__onnxd_fail(D, fr, kpos, MGOPT_ERR_CORRUPT, "invalid field number 0");
    if (r == MGOPT__PB_GROUP)
      return mgopt__onnxd_fail(D, fr, kpos, MGOPT_ERR_UNSUPPORTED,
                               "field %u: protobuf groups are not supported", (unsigned)num);
    if (r == MGOPT__PB_BADWIRE)
      return mgopt__onnxd_fail(D, fr, kpos, MGOPT_ERR_CORRUPT, "field %u: invalid wire type %d",
                               (unsigned)num, wt);
    if (r) return mgopt__onnxd_pbfail(D, fr, kpos, r, "field key");
    fi = mgopt__onnx_find(M, num);
    if (fi >= 0) {
      const mgopt__onnx_field *f = &M->fields[fi];
      mgopt__onnx_frame sub;
      sub.up = fr;
      sub.name = f->name;
      sub.index = -1;
      if (!mgopt__onnx_wire_ok(f->kind, wt, &expect))
        return mgopt__onnxd_fail(D, &sub, kpos, MGOPT_ERR_CORRUPT, "wrong wire type %d (expected %d)",
                                 wt, expect);
      if (f->kind == MGOPT__OF_REJECT)
        return mgopt__onnxd_fail(D, &sub, kpos, MGOPT_ERR_UNSUPPORTED,
                                 "segmented tensors are not supported");
      {
        size_t vpos = pos;
        r = mgopt__pb_skip(b, &pos, end, wt, &ps, &pl);
        if (r) return mgopt__onnxd_pbfail(D, &sub, vpos, r, "value");
      }
      switch (f->kind) {
      case MGOPT__OF_OTHER: other = 1; break;
      case MGOPT__OF_MSG:
        if (cnt[fi]++)
          return mgopt__onnxd_fail(D, &sub, kpos, MGOPT_ERR_CORRUPT,
                                   "message field appears twice (merging is not supported)");
        break;
      case MGOPT__OF_RI64:
      case MGOPT__OF_RI32:
      case MGOPT__OF_RU64:
        if (wt == MGOPT__PB_LEN) {
          size_t k;
          for (k = ps; k < ps + pl; k++) cnt[fi] += !(b[k] & 0x80);
        } else {
          cnt[fi]++;
        }
        break;
      case MGOPT__OF_RF32:
      case MGOPT__OF_RF64: {
        size_t w = f->kind == MGOPT__OF_RF32 ? 4 : 8;
        if (wt == MGOPT__PB_LEN) {
          if (pl % w)
            return mgopt__onnxd_fail(D, &sub, ps, MGOPT_ERR_CORRUPT,
                                     "packed length %llu is not a multiple of %d",
                                     (unsigned long long)pl, (int)w);
          cnt[fi] += (int64_t)(pl / w);
        } else {
          cnt[fi]++;
        }
        break;
      }
      case MGOPT__OF_RSTR:
      case MGOPT__OF_RMSG:
      case MGOPT__OF_RRAW: cnt[fi]++; break;
      default: break;
      }
    } else {
      size_t vpos = pos;
      r = mgopt__pb_skip(b, &pos, end, wt, &ps, &pl);
      if (r) {
        char what[48];
        snprintf(what, sizeof what, "unknown field %u", (unsigned)num);
        return mgopt__onnxd_pbfail(D, fr, vpos, r, what);
      }
    }
  }

  if (other && M->other_off != MGOPT__ONONE) {
    mgopt_str *o = MGOPT__ONNX_AT(obj, M->other_off, mgopt_str);
    o->ptr = (const char *)b + start;
    o->len = end - start;
    return MGOPT_OK;
  }

  /* allocate every repeated field at its exact size */
  for (i = 0; i < M->nfields; i++) {
    const mgopt__onnx_field *f = &M->fields[i];
    size_t es = mgopt__onnx_elem_size(f);
    void *arr;
    if (!es || !cnt[i]) continue;
    if ((uint64_t)cnt[i] > (uint64_t)(SIZE_MAX / es))
      return mgopt__onnxd_fail(D, fr, start, MGOPT_ERR_LIMIT, "%s: too many elements", f->name);
    arr = mgopt_program_alloc(D->p, (size_t)cnt[i] * es, 8);
    if (!arr) return mgopt__onnxd_fail(D, fr, start, MGOPT_ERR_NOMEM, "out of memory");
    *MGOPT__ONNX_AT(obj, f->off, void *) = arr;
    *MGOPT__ONNX_AT(obj, f->count_off, int64_t) = 0;
  }

  /* pass 2: decode values (the structure of this level is known good) */
  pos = start;
  while (pos < end) {
    const mgopt__onnx_field *f;
    mgopt__onnx_frame sub;
    uint64_t v = 0;
    int fi;
    size_t vpos;
    mgopt__pb_key(b, &pos, end, &num, &wt);
    vpos = pos;
    mgopt__pb_skip(b, &pos, end, wt, &ps, &pl);
    fi = mgopt__onnx_find(M, num);
    if (fi < 0) continue;
    f = &M->fields[fi];
    sub.up = fr;
    sub.name = f->name;
    sub.index = -1;
    if (f->has_bit >= 0 && M->has_off != MGOPT__ONONE)
      *MGOPT__ONNX_AT(obj, M->has_off, uint32_t) |= 1u << f->has_bit;
    switch (f->kind) {
    case MGOPT__OF_I64:
    case MGOPT__OF_I32: {
      size_t q = vpos;
      r = mgopt__pb_varint(b, &q, end, &v);
      if (r) return mgopt__onnxd_pbfail(D, &sub, vpos, r, "value");
      if (f->kind == MGOPT__OF_I64) *MGOPT__ONNX_AT(obj, f->off, int64_t) = (int64_t)v;
      else *MGOPT__ONNX_AT(obj, f->off, int32_t) = mgopt__onnx_i32(v);
      break;
    }
    case MGOPT__OF_F32: {
      uint32_t u;
      size_t q = vpos;
      mgopt__pb_fixed32(b, &q, end, &u);
      memcpy(MGOPT__ONNX_AT(obj, f->off, float), &u, 4);
      break;
    }
    case MGOPT__OF_STR: {
      mgopt_str *s = MGOPT__ONNX_AT(obj, f->off, mgopt_str);
      if (f->flags & MGOPT__OFL_INTERN) {
        if (pl && memchr(b + ps, 0, pl)) return mgopt__onnxd_nul(D, &sub, ps);
        s->ptr = mgopt_program_intern(D->p, (const char *)b + ps, pl);
        if (!s->ptr) return mgopt__onnxd_fail(D, &sub, ps, MGOPT_ERR_NOMEM, "out of memory");
      } else {
        s->ptr = (const char *)b + ps;
      }
      s->len = pl;
      break;
    }
    case MGOPT__OF_MSG: {
      void *child = mgopt_program_alloc(D->p, mgopt__onnx_msgs[f->sub].size, 8);
      if (!child) return mgopt__onnxd_fail(D, &sub, ps, MGOPT_ERR_NOMEM, "out of memory");
      *MGOPT__ONNX_AT(obj, f->off, void *) = child;
      st = mgopt__onnxd_msg(D, f->sub, child, ps, ps + pl, &sub, depth + 1);
      if (st) return st;
      break;
    }
    case MGOPT__OF_RI64:
    case MGOPT__OF_RI32:
    case MGOPT__OF_RU64:
    case MGOPT__OF_RF32:
    case MGOPT__OF_RF64: {
      int64_t *n = MGOPT__ONNX_AT(obj, f->count_off, int64_t);
      int idx_fi = fi;
      if (wt == MGOPT__PB_LEN) {
        size_t q = ps, e = ps + pl;
        while (q < e) {
          size_t epos = q;
          r = mgopt__onnxd_scalar(f->kind, b, &q, e, &v);
          if (r) return mgopt__onnxd_pbfail(D, &sub, epos, r, "packed element");
          if (*n >= cnt[idx_fi])
            return mgopt__onnxd_fail(D, &sub, epos, MGOPT_ERR_CORRUPT, "packed element count changed");
          mgopt__onnxd_put(f, obj, (*n)++, v);
        }
      } else {
        size_t q = vpos;
        r = mgopt__onnxd_scalar(f->kind, b, &q, end, &v);
        if (r) return mgopt__onnxd_pbfail(D, &sub, vpos, r, "value");
        mgopt__onnxd_put(f, obj, (*n)++, v);
      }
      break;
    }
    case MGOPT__OF_RSTR:
    case MGOPT__OF_RRAW: {
      int64_t *n = MGOPT__ONNX_AT(obj, f->count_off, int64_t);
      mgopt_str *s = *MGOPT__ONNX_AT(obj, f->off, mgopt_str *) + *n;
      if ((f->flags & MGOPT__OFL_INTERN)) {
        if (pl && memchr(b + ps, 0, pl)) return mgopt__onnxd_nul(D, &sub, ps);
        s->ptr = mgopt_program_intern(D->p, (const char *)b + ps, pl);
        if (!s->ptr) return mgopt__onnxd_fail(D, &sub, ps, MGOPT_ERR_NOMEM, "out of memory");
      } else {
        s->ptr = (const char *)b + ps;
      }
      s->len = pl;
      (*n)++;
      break;
    }
    case MGOPT__OF_RMSG: {
      int64_t *n = MGOPT__ONNX_AT(obj, f->count_off, int64_t);
      char *child = *MGOPT__ONNX_AT(obj, f->off, char *) + (size_t)*n * mgopt__onnx_msgs[f->sub].size;
      sub.index = *n;
      (*n)++;
      st = mgopt__onnxd_msg(D, f->sub, child, ps, ps + pl, &sub, depth + 1);
      if (st) return st;
      break;
    }
    default: break;
    }
  }

  if (mid == MGOPT__OM_TENSOR) return mgopt__onnxd_tensor(D, (mgopt_onnx_tensor *)obj, fr, start);
  return MGOPT_OK;
}

static mgopt_status mgopt__onnxd_msg(mgopt__onnxd *D, int mid, void *obj, size_t start, size_t end,
                                     const mgopt__onnx_frame *fr, int depth) {
  mgopt_status st;
  if (depth > D->max_msg_depth)
    return mgopt__onnxd_fail(D, fr, start, MGOPT_ERR_LIMIT, "messages nested more than %d deep",
                             D->max_msg_depth);
  if (mid != MGOPT__OM_GRAPH) return mgopt__onnxd_body(D, mid, obj, start, end, fr, depth);
  if (D->graph_depth >= D->max_depth)
    return mgopt__onnxd_fail(D, fr, start, MGOPT_ERR_LIMIT, "subgraphs nested more than %d deep",
                             D->max_depth);
  D->graph_depth++;
  st = mgopt__onnxd_body(D, mid, obj, start, end, fr, depth);
  D->graph_depth--;
  return st;
}

static const char *const mgopt__onnx_typed_names[12] = {
    "", "", "", "", "float_data", "int32_data", "string_data", "int64_data",
    "", "", "double_data", "uint64_data"};

/* Checks a decoded tensor: known data type, dims, and exactly one data
   source whose element count matches dims. */
static mgopt_status mgopt__onnxd_tensor(mgopt__onnxd *D, mgopt_onnx_tensor *t,
                                        const mgopt__onnx_frame *fr, size_t off) {
  int64_t numel = 1, i, have_n = 0, want;
  int32_t dt = t->data_type;
  const mgopt__onnx_dtinfo *info;
  int nsrc = 0, field = 0;
  for (i = 0; i < t->ndims; i++) {
    if (t->dims[i] < 0)
      return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT, "negative dimension %lld",
                               (long long)t->dims[i]);
    if (!mgopt__mul_i64(numel, t->dims[i], &numel))
      return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_LIMIT, "element count overflows");
  }
  t->numel = numel;
  if (!mgopt__add_i64(D->total_elements, numel, &D->total_elements) ||
      D->total_elements > D->max_elements)
    return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_LIMIT,
                             "declared tensor elements exceed the limit of %lld",
                             (long long)D->max_elements);
  if (dt <= 0 || dt >= MGOPT_ONNX_DT__COUNT)
    return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_UNSUPPORTED, "unknown data type %d", (int)dt);
  info = &mgopt__onnx_dt[dt];
  if (t->data_location == MGOPT_ONNX_LOC_EXTERNAL) return MGOPT_OK; /* checked when loaded */
  if (t->data_location != MGOPT_ONNX_LOC_DEFAULT)
    return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT, "unknown data_location %d",
                             (int)t->data_location);
  if ((t->has & MGOPT_ONNX_TENSOR_HAS_RAW_DATA) || t->raw_data.len) nsrc++, field = 9;
  if (t->nfloat_data) nsrc++, field = 4, have_n = t->nfloat_data;
  if (t->nint32_data) nsrc++, field = 5, have_n = t->nint32_data;
  if (t->nstring_data) nsrc++, field = 6, have_n = t->nstring_data;
  if (t->nint64_data) nsrc++, field = 7, have_n = t->nint64_data;
  if (t->ndouble_data) nsrc++, field = 10, have_n = t->ndouble_data;
  if (t->nuint64_data) nsrc++, field = 11, have_n = t->nuint64_data;
  if (nsrc > 1)
    return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT, "data given in more than one field");
  if (field == 9) {
    int64_t nb = mgopt_onnx_raw_nbytes(dt, numel);
    if (!info->bits)
      return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT, "raw_data given for data type %d",
                               (int)dt);
    if (nb < 0 || (uint64_t)nb != (uint64_t)t->raw_data.len)
      return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT,
                               "raw_data has %llu bytes, dims and data type need %lld",
                               (unsigned long long)t->raw_data.len, (long long)nb);
    return MGOPT_OK;
  }
  if (field == 0) {
    if (numel != 0)
      return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT, "no data for %lld elements",
                               (long long)numel);
    return MGOPT_OK;
  }
  if (field != info->field)
    return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT, "%s given for data type %d",
                             mgopt__onnx_typed_names[field], (int)dt);
  if (info->half) want = numel / 2 + numel % 2;
  else if (!mgopt__mul_i64(numel, (int64_t)info->per_elem, &want))
    return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_LIMIT, "element count overflows");
  if (have_n != want)
    return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT, "%s has %lld values, dims need %lld",
                             mgopt__onnx_typed_names[field], (long long)have_n, (long long)want);
  return MGOPT_OK;
}

/* Decodes into an existing program (bytes must outlive it). NULL on error. */
/* Decodes into p's arena; *out is set only on success (p is the caller's to destroy either way). */
MGOPT__PRIVATE mgopt_status mgopt__onnx_read_into(mgopt_program *p, const uint8_t *buf, size_t len,
                                                  const mgopt_onnx_read_options *opts, mgopt_onnx_model **out,
                                                  mgopt_diag *d) {
  mgopt__onnxd D;
  mgopt__onnx_frame root;
  mgopt_onnx_model *m;
  mgopt_status s;
  memset(&D, 0, sizeof D);
  D.p = p;
  D.b = buf;
  D.len = len;
  D.d = d;
  D.max_depth = opts && opts->max_depth > 0 ? opts->max_depth : 64;
  if (D.max_depth > 100000) D.max_depth = 100000;
  D.max_msg_depth = MGOPT__ONNX_MSG_DEPTH(D.max_depth);
  D.max_elements = opts && opts->max_elements > 0 ? opts->max_elements : (int64_t)1 << 40;
  root.up = NULL;
  root.name = "ModelProto";
  root.index = -1;
  m = (mgopt_onnx_model *)mgopt_program_alloc(p, sizeof *m, 8);
  if (!m) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  s = mgopt__onnxd_msg(&D, MGOPT__OM_MODEL, m, 0, len, &root, 0);
  if (s != MGOPT_OK) return s;
  if (mgopt_program_status(p) != MGOPT_OK) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  m->program = p;
  m->constant_inputs = opts && opts->constant_inputs;
  *out = m;
  return MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_onnx_read(const void *buf, size_t len, const mgopt_onnx_read_options *opts,
                                     mgopt_onnx_model **out, mgopt_diag *d) {
  mgopt_program *p;
  mgopt_status s;
  mgopt_diag_clear(d);
  if (!out) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "out is NULL");
  if (!buf && len) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "NULL buffer");
  p = mgopt_program_create(opts ? opts->alloc : NULL);
  if (!p) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  s = mgopt__onnx_read_into(p, (const uint8_t *)buf, len, opts, out, d);
  if (s != MGOPT_OK) mgopt_program_destroy(p);
  return s;
}

/* ---------------------------------------------------------------- walking */

/* Calls fn on every message below obj (obj itself first), in field order.
   parent/field say how it was reached (-1/0 for the root). Stops when fn
   returns nonzero and returns that. */
MGOPT__PRIVATE int mgopt__onnx_walk(int mid, void *obj, int parent, uint32_t field,
                                    mgopt__onnx_visit_fn fn, void *ctx, int depth) {
  const mgopt__onnx_msg *M = &mgopt__onnx_msgs[mid];
  int32_t i;
  int r;
  if (depth > MGOPT__ONNX_TREE_DEPTH) return -1;
  r = fn(ctx, mid, obj, parent, field);
  if (r) return r;
  if (M->other_off != MGOPT__ONONE && MGOPT__ONNX_CAT(obj, M->other_off, mgopt_str)->len) return 0;
  for (i = 0; i < M->nfields; i++) {
    const mgopt__onnx_field *f = &M->fields[i];
    if (f->kind == MGOPT__OF_MSG) {
      void *c = *MGOPT__ONNX_AT(obj, f->off, void *);
      if (c && (r = mgopt__onnx_walk(f->sub, c, mid, f->num, fn, ctx, depth + 1)) != 0) return r;
    } else if (f->kind == MGOPT__OF_RMSG) {
      char *arr = *MGOPT__ONNX_AT(obj, f->off, char *);
      int64_t n = *MGOPT__ONNX_AT(obj, f->count_off, int64_t), k;
      size_t sz = mgopt__onnx_msgs[f->sub].size;
      for (k = 0; k < n; k++)
        if ((r = mgopt__onnx_walk(f->sub, arr + (size_t)k * sz, mid, f->num, fn, ctx, depth + 1)) != 0)
          return r;
    }
  }
  return 0;
}

/* ---------------------------------------------------------------- equality */

typedef struct mgopt__onnxq {
  char *where;
  size_t where_len;
} mgopt__onnxq;

static int mgopt__onnxq_diff(mgopt__onnxq *Q, const mgopt__onnx_frame *fr, const char *what) {
  if (Q->where && Q->where_len) {
    char path[256];
    mgopt__onnx_path(fr, path, sizeof path);
    snprintf(Q->where, Q->where_len, "%s%s%s", path, what[0] ? "." : "", what);
  }
  return 0;
}

static int mgopt__onnx_str_eq(const mgopt_str *a, const mgopt_str *b) {
  return a->len == b->len && (a->len == 0 || memcmp(a->ptr, b->ptr, a->len) == 0);
}

static int mgopt__onnxq_msg(mgopt__onnxq *Q, int mid, const void *a, const void *b,
                            const mgopt__onnx_frame *fr, int depth) {
  const mgopt__onnx_msg *M = &mgopt__onnx_msgs[mid];
  int32_t i;
  if (depth > MGOPT__ONNX_TREE_DEPTH) return mgopt__onnxq_diff(Q, fr, "(too deep)");
  if (M->has_off != MGOPT__ONONE &&
      *MGOPT__ONNX_CAT(a, M->has_off, uint32_t) != *MGOPT__ONNX_CAT(b, M->has_off, uint32_t))
    return mgopt__onnxq_diff(Q, fr, "(presence)");
  if (M->other_off != MGOPT__ONONE) {
    const mgopt_str *oa = MGOPT__ONNX_CAT(a, M->other_off, mgopt_str);
    const mgopt_str *ob = MGOPT__ONNX_CAT(b, M->other_off, mgopt_str);
    if (!mgopt__onnx_str_eq(oa, ob)) return mgopt__onnxq_diff(Q, fr, "(other)");
    if (oa->len) return 1;
  }
  for (i = 0; i < M->nfields; i++) {
    const mgopt__onnx_field *f = &M->fields[i];
    mgopt__onnx_frame sub;
    sub.up = fr;
    sub.name = f->name;
    sub.index = -1;
    switch (f->kind) {
    case MGOPT__OF_I64:
      if (*MGOPT__ONNX_CAT(a, f->off, int64_t) != *MGOPT__ONNX_CAT(b, f->off, int64_t))
        return mgopt__onnxq_diff(Q, &sub, "");
      break;
    case MGOPT__OF_I32:
      if (*MGOPT__ONNX_CAT(a, f->off, int32_t) != *MGOPT__ONNX_CAT(b, f->off, int32_t))
        return mgopt__onnxq_diff(Q, &sub, "");
      break;
    case MGOPT__OF_F32:
      if (memcmp(MGOPT__ONNX_CAT(a, f->off, float), MGOPT__ONNX_CAT(b, f->off, float), 4))
        return mgopt__onnxq_diff(Q, &sub, "");
      break;
    case MGOPT__OF_STR:
      if (!mgopt__onnx_str_eq(MGOPT__ONNX_CAT(a, f->off, mgopt_str), MGOPT__ONNX_CAT(b, f->off, mgopt_str)))
        return mgopt__onnxq_diff(Q, &sub, "");
      break;
    case MGOPT__OF_MSG: {
      const void *ca = *MGOPT__ONNX_CAT(a, f->off, void *), *cb = *MGOPT__ONNX_CAT(b, f->off, void *);
      if (!ca != !cb) return mgopt__onnxq_diff(Q, &sub, "(presence)");
      if (ca && !mgopt__onnxq_msg(Q, f->sub, ca, cb, &sub, depth + 1)) return 0;
      break;
    }
    case MGOPT__OF_RI64:
    case MGOPT__OF_RI32:
    case MGOPT__OF_RU64:
    case MGOPT__OF_RF32:
    case MGOPT__OF_RF64:
    case MGOPT__OF_RSTR:
    case MGOPT__OF_RRAW:
    case MGOPT__OF_RMSG: {
      int64_t na = *MGOPT__ONNX_CAT(a, f->count_off, int64_t);
      int64_t nb = *MGOPT__ONNX_CAT(b, f->count_off, int64_t), k;
      const char *pa = *MGOPT__ONNX_CAT(a, f->off, char *), *pb = *MGOPT__ONNX_CAT(b, f->off, char *);
      size_t es = mgopt__onnx_elem_size(f);
      if (na != nb) return mgopt__onnxq_diff(Q, &sub, "(count)");
      for (k = 0; k < na; k++) {
        const char *ea = pa + (size_t)k * es, *eb = pb + (size_t)k * es;
        sub.index = k;
        if (f->kind == MGOPT__OF_RMSG) {
          if (!mgopt__onnxq_msg(Q, f->sub, ea, eb, &sub, depth + 1)) return 0;
        } else if (f->kind == MGOPT__OF_RSTR || f->kind == MGOPT__OF_RRAW) {
          if (!mgopt__onnx_str_eq((const mgopt_str *)(const void *)ea, (const mgopt_str *)(const void *)eb))
            return mgopt__onnxq_diff(Q, &sub, "");
        } else if (memcmp(ea, eb, es)) {
          return mgopt__onnxq_diff(Q, &sub, "");
        }
      }
      break;
    }
    default: break;
    }
  }
  return 1;
}

MGOPTDEF int mgopt_onnx_model_equal(const mgopt_onnx_model *a, const mgopt_onnx_model *b,
                                    char *where, size_t where_len) {
  mgopt__onnxq Q;
  mgopt__onnx_frame root;
  Q.where = where;
  Q.where_len = where_len;
  if (where && where_len) where[0] = 0;
  root.up = NULL;
  root.name = "ModelProto";
  root.index = -1;
  if (!a || !b) {
    if (a == b) return 1;
    return mgopt__onnxq_diff(&Q, &root, "(null)");
  }
  return mgopt__onnxq_msg(&Q, MGOPT__OM_MODEL, a, b, &root, 0);
}

/* ---------------------------------------------------------------- encoder */

/* Where an initializer moved to the external data. */
typedef struct mgopt__onnx_extent {
  const mgopt_onnx_tensor *t;
  uint64_t offset;
} mgopt__onnx_extent;

typedef struct mgopt__onnxe {
  mgopt__pbw w;
  int bad; /* tree nested too deeply */
  const mgopt__onnx_extent *ext; /* sorted by tensor address */
  int64_t next;
  const char *location;
} mgopt__onnxe;

static const mgopt__onnx_extent *mgopt__onnxe_find(const mgopt__onnxe *E, const void *t) {
  int64_t lo = 0, hi = E->next;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    uintptr_t k = (uintptr_t)E->ext[mid].t;
    if (k == (uintptr_t)t) return &E->ext[mid];
    if (k < (uintptr_t)t) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

static void mgopt__onnxe_msg(mgopt__onnxe *E, int mid, const void *obj, int depth);

/* A tensor moved to external data is written as a copy without its data and
   with entries location / offset / length. */
static void mgopt__onnxe_external(mgopt__onnxe *E, const mgopt_onnx_tensor *t,
                                  const mgopt__onnx_extent *x, int depth) {
  mgopt_onnx_tensor c = *t;
  mgopt_onnx_strstr kv[3];
  char offs[24], lens[24]; /* on the stack: far below the writer's borrow size, so copied */
  int no, nl;
  no = snprintf(offs, sizeof offs, "%llu", (unsigned long long)x->offset);
  nl = snprintf(lens, sizeof lens, "%llu", (unsigned long long)t->raw_data.len);
  memset(kv, 0, sizeof kv);
  kv[0].key.ptr = "location";
  kv[0].key.len = 8;
  kv[0].value.ptr = E->location;
  kv[0].value.len = strlen(E->location);
  kv[1].key.ptr = "offset";
  kv[1].key.len = 6;
  kv[1].value.ptr = offs;
  kv[1].value.len = (size_t)no;
  kv[2].key.ptr = "length";
  kv[2].key.len = 6;
  kv[2].value.ptr = lens;
  kv[2].value.len = (size_t)nl;
  c.raw_data.ptr = NULL;
  c.raw_data.len = 0;
  c.has &= ~MGOPT_ONNX_TENSOR_HAS_RAW_DATA;
  c.external_data = kv;
  c.nexternal_data = 3;
  c.data_location = MGOPT_ONNX_LOC_EXTERNAL;
  mgopt__onnxe_msg(E, MGOPT__OM_TENSOR, &c, depth + 1);
}

static void mgopt__onnxe_scalar(mgopt__pbw *w, int kind, const char *arr, int64_t k) {
  switch (kind) {
  case MGOPT__OF_RI64: mgopt__pbw_varint(w, (uint64_t)((const int64_t *)(const void *)arr)[k]); break;
  case MGOPT__OF_RI32:
    mgopt__pbw_varint(w, (uint64_t)(int64_t)((const int32_t *)(const void *)arr)[k]);
    break;
  case MGOPT__OF_RU64: mgopt__pbw_varint(w, ((const uint64_t *)(const void *)arr)[k]); break;
  case MGOPT__OF_RF32: {
    uint32_t u;
    memcpy(&u, arr + (size_t)k * 4, 4);
    mgopt__pbw_fixed32(w, u);
    break;
  }
  case MGOPT__OF_RF64: {
    uint64_t u;
    memcpy(&u, arr + (size_t)k * 8, 8);
    mgopt__pbw_fixed64(w, u);
    break;
  }
  default: break;
  }
}

static int mgopt__onnx_scalar_wire(int kind) {
  return kind == MGOPT__OF_RF32 ? MGOPT__PB_FIXED32 : kind == MGOPT__OF_RF64 ? MGOPT__PB_FIXED64 : MGOPT__PB_VARINT;
}

/* Writes obj's fields last to first (the writer fills from the back), so the
   output lists them in field-number order. */
static void mgopt__onnxe_msg(mgopt__onnxe *E, int mid, const void *obj, int depth) {
  const mgopt__onnx_msg *M = &mgopt__onnx_msgs[mid];
  mgopt__pbw *w = &E->w;
  uint32_t has = M->has_off != MGOPT__ONONE ? *MGOPT__ONNX_CAT(obj, M->has_off, uint32_t) : 0;
  int32_t i;
  if (depth > MGOPT__ONNX_TREE_DEPTH) {
    E->bad = 1;
    return;
  }
  if (w->oom || E->bad) return;
  if (M->other_off != MGOPT__ONONE) {
    const mgopt_str *o = MGOPT__ONNX_CAT(obj, M->other_off, mgopt_str);
    if (o->len) {
      mgopt__pbw_borrow(w, o->ptr, o->len);
      return;
    }
  }
  if (mid == MGOPT__OM_TENSOR && E->next) {
    const mgopt__onnx_extent *x = mgopt__onnxe_find(E, obj);
    if (x) {
      mgopt__onnxe_external(E, (const mgopt_onnx_tensor *)obj, x, depth);
      return;
    }
  }
  for (i = M->nfields - 1; i >= 0; i--) {
    const mgopt__onnx_field *f = &M->fields[i];
    int present = f->has_bit >= 0 && (has >> f->has_bit & 1u);
    switch (f->kind) {
    case MGOPT__OF_I64: {
      int64_t v = *MGOPT__ONNX_CAT(obj, f->off, int64_t);
      if (v || present) {
        mgopt__pbw_varint(w, (uint64_t)v);
        mgopt__pbw_key(w, f->num, MGOPT__PB_VARINT);
      }
      break;
    }
    case MGOPT__OF_I32: {
      int32_t v = *MGOPT__ONNX_CAT(obj, f->off, int32_t);
      if (v || present) {
        mgopt__pbw_varint(w, (uint64_t)(int64_t)v);
        mgopt__pbw_key(w, f->num, MGOPT__PB_VARINT);
      }
      break;
    }
    case MGOPT__OF_F32: {
      uint32_t u;
      memcpy(&u, MGOPT__ONNX_CAT(obj, f->off, float), 4);
      if (u || present) {
        mgopt__pbw_fixed32(w, u);
        mgopt__pbw_key(w, f->num, MGOPT__PB_FIXED32);
      }
      break;
    }
    case MGOPT__OF_STR: {
      const mgopt_str *s = MGOPT__ONNX_CAT(obj, f->off, mgopt_str);
      if (s->len || present) mgopt__pbw_lenfield(w, f->num, s->ptr, s->len);
      break;
    }
    case MGOPT__OF_MSG: {
      const void *c = *MGOPT__ONNX_CAT(obj, f->off, void *);
      if (c) {
        size_t mark = mgopt__pbw_mark(w);
        mgopt__onnxe_msg(E, f->sub, c, depth + 1);
        mgopt__pbw_close(w, mark, f->num);
      }
      break;
    }
    case MGOPT__OF_RI64:
    case MGOPT__OF_RI32:
    case MGOPT__OF_RU64:
    case MGOPT__OF_RF32:
    case MGOPT__OF_RF64: {
      int64_t n = *MGOPT__ONNX_CAT(obj, f->count_off, int64_t), k;
      const char *arr = *MGOPT__ONNX_CAT(obj, f->off, char *);
      if (n <= 0) break;
      if (f->flags & MGOPT__OFL_PACKED) {
        size_t mark = mgopt__pbw_mark(w);
        for (k = n - 1; k >= 0; k--) mgopt__onnxe_scalar(w, f->kind, arr, k);
        mgopt__pbw_close(w, mark, f->num);
      } else {
        int wt = mgopt__onnx_scalar_wire(f->kind);
        for (k = n - 1; k >= 0; k--) {
          mgopt__onnxe_scalar(w, f->kind, arr, k);
          mgopt__pbw_key(w, f->num, wt);
        }
      }
      break;
    }
    case MGOPT__OF_RSTR:
    case MGOPT__OF_RRAW: {
      int64_t n = *MGOPT__ONNX_CAT(obj, f->count_off, int64_t), k;
      const mgopt_str *arr = *MGOPT__ONNX_CAT(obj, f->off, mgopt_str *);
      for (k = n - 1; k >= 0; k--) mgopt__pbw_lenfield(w, f->num, arr[k].ptr, arr[k].len);
      break;
    }
    case MGOPT__OF_RMSG: {
      int64_t n = *MGOPT__ONNX_CAT(obj, f->count_off, int64_t), k;
      const char *arr = *MGOPT__ONNX_CAT(obj, f->off, char *);
      size_t sz = mgopt__onnx_msgs[f->sub].size;
      for (k = n - 1; k >= 0; k--) {
        size_t mark = mgopt__pbw_mark(w);
        mgopt__onnxe_msg(E, f->sub, arr + (size_t)k * sz, depth + 1);
        mgopt__pbw_close(w, mark, f->num);
      }
      break;
    }
    default: break;
    }
  }
}

/* ---- external data on write */

typedef struct mgopt__onnx_extc {
  int64_t min_bytes;
  mgopt__onnx_extent *ext;
  int64_t n, cap;
  const mgopt_allocator *alloc;
  int oom;
} mgopt__onnx_extc;

static int mgopt__onnx_ext_collect(void *ctx, int mid, void *obj, int parent, uint32_t field) {
  mgopt__onnx_extc *C = (mgopt__onnx_extc *)ctx;
  const mgopt_onnx_tensor *t = (const mgopt_onnx_tensor *)obj;
  if (mid != MGOPT__OM_TENSOR || parent != MGOPT__OM_GRAPH || field != 5) return 0;
  if (t->data_location != MGOPT_ONNX_LOC_DEFAULT || t->raw_data.len == 0) return 0;
  if ((uint64_t)t->raw_data.len < (uint64_t)C->min_bytes) return 0;
  if (!mgopt__grow(C->alloc, (void **)&C->ext, &C->cap, C->n + 1, sizeof *C->ext)) {
    C->oom = 1;
    return 1;
  }
  C->ext[C->n].t = t;
  C->ext[C->n].offset = 0;
  C->n++;
  return 0;
}

static int mgopt__onnx_ext_cmp(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const mgopt__onnx_extent *)a)->t;
  uintptr_t y = (uintptr_t)((const mgopt__onnx_extent *)b)->t;
  return x < y ? -1 : x > y;
}

/* Sums the raw_data bytes that stay inline (tensors not moved to the sink). */
typedef struct mgopt__onnx_inl {
  const mgopt__onnxe *E;
  uint64_t bytes;
  size_t borrow_min;
} mgopt__onnx_inl;

static int mgopt__onnx_inline_bytes(void *ctx, int mid, void *obj, int parent, uint32_t field) {
  mgopt__onnx_inl *S = (mgopt__onnx_inl *)ctx;
  const mgopt_onnx_tensor *t = (const mgopt_onnx_tensor *)obj;
  MGOPT__UNUSED(parent);
  MGOPT__UNUSED(field);
  if (mid != MGOPT__OM_TENSOR || (S->E->next && mgopt__onnxe_find(S->E, obj))) return 0;
  if (S->borrow_min && t->raw_data.len >= S->borrow_min) return 0; /* a span, not buffered */
  S->bytes += (uint64_t)t->raw_data.len;
  return 0;
}

/* The whole writer: moves large initializers to the sink (in model order,
   64-byte aligned), then encodes the model into w. */
MGOPT__PRIVATE mgopt_status mgopt__onnx_encode(const mgopt_onnx_model *m, const mgopt_onnx_write_options *opts,
                                               const char *location, mgopt_write_fn sink,
                                               void *sink_ctx, mgopt__pbw *w, mgopt_diag *d) {
  mgopt__onnxe E;
  mgopt__onnx_extc C;
  mgopt_status st = MGOPT_OK;
  memset(&E, 0, sizeof E);
  memset(&C, 0, sizeof C);
  E.w = *w;
  E.location = location;
  /* Every byte field lives in the model tree (or, for the few the writer
     makes up, is far smaller than this), so large ones can be borrowed. */
  if (!E.w.borrow_min) E.w.borrow_min = MGOPT__PBW_BORROW_MIN;
  C.alloc = w->alloc;
  if (opts && opts->external_min_bytes > 0 && sink) {
    static const uint8_t zeros[64] = {0};
    uint64_t off = 0;
    int64_t k;
    C.min_bytes = opts->external_min_bytes;
    mgopt__onnx_walk(MGOPT__OM_MODEL, (void *)m, -1, 0, mgopt__onnx_ext_collect, &C, 0);
    if (C.oom) {
      st = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
      goto done;
    }
    for (k = 0; k < C.n; k++) {
      size_t pad = (size_t)((64 - off % 64) % 64);
      if (pad && (st = sink(sink_ctx, zeros, pad)) != MGOPT_OK) goto sinkfail;
      off += pad;
      C.ext[k].offset = off;
      if ((st = sink(sink_ctx, C.ext[k].t->raw_data.ptr, C.ext[k].t->raw_data.len)) != MGOPT_OK)
        goto sinkfail;
      off += C.ext[k].t->raw_data.len;
    }
    if (C.n > 1) qsort(C.ext, (size_t)C.n, sizeof *C.ext, mgopt__onnx_ext_cmp);
    E.ext = C.ext;
    E.next = C.n;
  }
  {
    /* Reserve the inline tensor bytes plus slack up front. The writer fills its
       buffer from the back, so capacity it does not use is never touched;
       growing by doubling instead leaves the previous copy resident (up to
       twice the output for a model of raw_data weights). Past 2 GB the
       encoding fails anyway: no reservation then. */
    mgopt__onnx_inl S;
    S.E = &E;
    S.bytes = 0;
    S.borrow_min = E.w.borrow_min;
    mgopt__onnx_walk(MGOPT__OM_MODEL, (void *)m, -1, 0, mgopt__onnx_inline_bytes, &S, 0);
    if (S.bytes > 0 && S.bytes <= 0x7fffffffu) mgopt__pbw_reserve(&E.w, (size_t)S.bytes + ((size_t)1 << 20));
  }
  mgopt__onnxe_msg(&E, MGOPT__OM_MODEL, m, 0);
  if (E.bad) st = mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "model tree nested more than %d deep",
                                 MGOPT__ONNX_TREE_DEPTH);
  else if (E.w.oom) st = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  else if (mgopt__pbw_mark(&E.w) > 0x7fffffffu)
    st = mgopt_diag_set(d, MGOPT_ERR_LIMIT,
                        "the protobuf would be %llu bytes, over 2 GB: store weights as external data",
                        (unsigned long long)mgopt__pbw_mark(&E.w));
  goto done;
sinkfail:
  if (d && d->status == MGOPT_OK) mgopt_diag_set(d, st, "writing external data failed");
done:
  if (C.ext) mgopt__heap_free(C.alloc, C.ext, (size_t)C.cap * sizeof *C.ext);
  *w = E.w;
  return st;
}

static mgopt_status mgopt__onnx_buf_sink(void *ctx, const void *data, size_t n) {
  mgopt_buf *b = (mgopt_buf *)ctx;
  mgopt__buf_putn(b, (const char *)data, n);
  return b->oom ? MGOPT_ERR_NOMEM : MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_onnx_write(const mgopt_onnx_model *m, const mgopt_onnx_write_options *opts,
                                       mgopt_buf *out, mgopt_buf *external, mgopt_diag *d) {
  mgopt__pbw w;
  mgopt_status st;
  const char *loc;
  mgopt_diag_clear(d);
  if (!m || !out) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "NULL model or output");
  if (opts && opts->external_min_bytes > 0 && !external)
    return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "external_min_bytes set but no external buffer");
  loc = opts && opts->external_location ? opts->external_location : "model.onnx.data";
  memset(&w, 0, sizeof w);
  w.alloc = out->alloc;
  st = mgopt__onnx_encode(m, opts, loc, mgopt__onnx_buf_sink, external, &w, d);
  if (st == MGOPT_OK) {
    size_t before = out->len, total = mgopt__pbw_mark(&w);
    if (mgopt__buf_reserve(out, total + 1)) {
      mgopt__pbw_emit(&w, mgopt__onnx_buf_sink, out);
      mgopt__buf_putn(out, "", 0);
    }
    if (out->oom || out->len != before + total) st = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  }
  mgopt__pbw_free(&w);
  return st;
}

MGOPTDEF mgopt_status mgopt_onnx_write_stream(const mgopt_onnx_model *m, const mgopt_onnx_write_options *opts,
                                              mgopt_write_fn model_sink, void *model_ctx,
                                              mgopt_write_fn external_sink, void *external_ctx, mgopt_diag *d) {
  mgopt__pbw w;
  mgopt_status st;
  const char *loc;
  mgopt_diag_clear(d);
  if (!m || !model_sink) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "NULL model or sink");
  if (opts && opts->external_min_bytes > 0 && !external_sink)
    return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "external_min_bytes set but no external sink");
  loc = opts && opts->external_location ? opts->external_location : "model.onnx.data";
  memset(&w, 0, sizeof w);
  w.alloc = m->program ? &m->program->alloc : NULL;
  st = mgopt__onnx_encode(m, opts, loc, external_sink, external_ctx, &w, d);
  if (st == MGOPT_OK && (st = mgopt__pbw_emit(&w, model_sink, model_ctx)) != MGOPT_OK && d &&
      d->status == MGOPT_OK)
    mgopt_diag_set(d, st, "writing the model failed");
  mgopt__pbw_free(&w);
  return st;
}
/* src/onnx/io.c — ONNX files: read_file / write_file and external tensor data (compiled out by MGOPT_NO_STDIO). */

/* A location from an external_data entry or an option must stay inside the
   model's directory: relative, no ".." component, no drive, no NUL. */
MGOPT__PRIVATE int mgopt__onnx_location_ok(const char *s, size_t n) {
  size_t i, start = 0;
  if (n == 0 || memchr(s, 0, n)) return 0;
  if (s[0] == '/' || s[0] == '\\') return 0;
  if (n >= 2 && s[1] == ':') return 0;
  for (i = 0; i <= n; i++) {
    if (i == n || s[i] == '/' || s[i] == '\\') {
      if (i - start == 2 && s[start] == '.' && s[start + 1] == '.') return 0;
      start = i + 1;
    }
  }
  return 1;
}

/* Parses a decimal unsigned value (an external_data offset or length). */
MGOPT__PRIVATE int mgopt__onnx_parse_u63(const char *s, size_t n, int64_t *out) {
  int64_t v = 0;
  size_t i;
  if (n == 0 || n > 19) return 0;
  for (i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return 0;
    if (v > (INT64_MAX - (s[i] - '0')) / 10) return 0;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return 1;
}

#ifndef MGOPT_NO_STDIO

/* Seeks to an absolute 64-bit offset with calls fseek can take (long may be 32 bits). */
static int mgopt__onnx_seek(FILE *f, int64_t off) {
#if defined(_WIN32)
  return _fseeki64(f, off, SEEK_SET) == 0;
#else
  if (fseek(f, 0, SEEK_SET) != 0) return 0;
  while (off > 0) {
    long step = off > (int64_t)LONG_MAX ? LONG_MAX : (long)off;
    if (fseek(f, step, SEEK_CUR) != 0) return 0;
    off -= step;
  }
  return 1;
#endif
}

/* Size of an open file, -1 if unknown. */
static int64_t mgopt__onnx_fsize(FILE *f) {
#if defined(_WIN32)
  if (_fseeki64(f, 0, SEEK_END) != 0) return -1;
  return (int64_t)_ftelli64(f);
#else
  long n;
  if (fseek(f, 0, SEEK_END) != 0) return -1;
  n = ftell(f);
  return n < 0 ? -1 : (int64_t)n;
#endif
}

/* dir + "/" + name, interned (dir "" or NULL = name alone). */
static const char *mgopt__onnx_join(mgopt_program *p, const char *dir, const char *name, size_t nlen) {
  size_t dl = dir ? strlen(dir) : 0, cap;
  char *tmp;
  const char *r;
  if (dl > SIZE_MAX - nlen - 2) return NULL;
  cap = dl + nlen + 2;
  tmp = (char *)mgopt__heap_realloc(&p->alloc, NULL, 0, cap);
  if (!tmp) return NULL;
  if (dl) memcpy(tmp, dir, dl);
  if (dl && dir[dl - 1] != '/' && dir[dl - 1] != '\\') tmp[dl++] = '/';
  memcpy(tmp + dl, name, nlen);
  r = mgopt_program_intern(p, tmp, dl + nlen);
  mgopt__heap_free(&p->alloc, tmp, cap);
  return r;
}

typedef struct mgopt__onnx_loader {
  mgopt_onnx_model *m;
  const char *dir;
  mgopt_diag *d;
  mgopt_status st;
  FILE *f;           /* the last file opened, kept for the next tensor */
  const char *fpath; /* interned path of f */
  int64_t fsize;
} mgopt__onnx_loader;

static int mgopt__onnx_load_fail(mgopt__onnx_loader *L, const mgopt_onnx_tensor *t, mgopt_status s,
                                 const char *what) {
  L->d->offset = -1;
  L->st = mgopt_diag_set(L->d, s, "tensor '%.*s': external data: %s", (int)(t->name.len > 80 ? 80 : t->name.len),
                         t->name.ptr ? t->name.ptr : "", what);
  return 1;
}

static int mgopt__onnx_load_one(void *ctx, int mid, void *obj, int parent, uint32_t field) {
  mgopt__onnx_loader *L = (mgopt__onnx_loader *)ctx;
  mgopt_onnx_tensor *t = (mgopt_onnx_tensor *)obj;
  mgopt_program *p = L->m->program;
  const mgopt_str *loc = NULL;
  int64_t offset = 0, length = -1, nb, k;
  const char *path;
  void *data;
  MGOPT__UNUSED(parent);
  MGOPT__UNUSED(field);
  if (mid != MGOPT__OM_TENSOR || t->data_location != MGOPT_ONNX_LOC_EXTERNAL) return 0;
  for (k = 0; k < t->nexternal_data; k++) {
    const mgopt_onnx_strstr *e = &t->external_data[k];
    if (e->key.len == 8 && memcmp(e->key.ptr, "location", 8) == 0) loc = &e->value;
    else if (e->key.len == 6 && memcmp(e->key.ptr, "offset", 6) == 0) {
      if (!mgopt__onnx_parse_u63(e->value.ptr, e->value.len, &offset))
        return mgopt__onnx_load_fail(L, t, MGOPT_ERR_CORRUPT, "bad offset");
    } else if (e->key.len == 6 && memcmp(e->key.ptr, "length", 6) == 0) {
      if (!mgopt__onnx_parse_u63(e->value.ptr, e->value.len, &length))
        return mgopt__onnx_load_fail(L, t, MGOPT_ERR_CORRUPT, "bad length");
    }
  }
  if (!loc) return mgopt__onnx_load_fail(L, t, MGOPT_ERR_CORRUPT, "no location");
  if (!mgopt__onnx_location_ok(loc->ptr, loc->len))
    return mgopt__onnx_load_fail(L, t, MGOPT_ERR_CORRUPT,
                                 "location must be a relative path without '..'");
  nb = mgopt_onnx_raw_nbytes(t->data_type, t->numel);
  if (nb < 0) return mgopt__onnx_load_fail(L, t, MGOPT_ERR_UNSUPPORTED, "data type cannot be stored externally");
  if (length >= 0 && length != nb)
    return mgopt__onnx_load_fail(L, t, MGOPT_ERR_CORRUPT, "length disagrees with dims and data type");
  path = mgopt__onnx_join(p, L->dir, loc->ptr, loc->len);
  if (!path) return mgopt__onnx_load_fail(L, t, MGOPT_ERR_NOMEM, "out of memory");
  if (path != L->fpath) {
    if (L->f) fclose(L->f);
    L->fpath = path;
    L->f = fopen(path, "rb");
    if (!L->f) {
      L->fpath = NULL;
      return mgopt__onnx_load_fail(L, t, MGOPT_ERR_IO, "cannot open the data file");
    }
    L->fsize = mgopt__onnx_fsize(L->f);
    if (L->fsize < 0) return mgopt__onnx_load_fail(L, t, MGOPT_ERR_IO, "cannot size the data file");
  }
  if (offset > L->fsize || nb > L->fsize - offset)
    return mgopt__onnx_load_fail(L, t, MGOPT_ERR_CORRUPT, "offset and length past the end of the file");
  if ((uint64_t)nb > (uint64_t)SIZE_MAX) return mgopt__onnx_load_fail(L, t, MGOPT_ERR_LIMIT, "too large");
  data = mgopt__arena_alloc(p, (size_t)nb, 64, 0);
  if (!data) return mgopt__onnx_load_fail(L, t, MGOPT_ERR_NOMEM, "out of memory");
  if (nb && (!mgopt__onnx_seek(L->f, offset) || fread(data, 1, (size_t)nb, L->f) != (size_t)nb))
    return mgopt__onnx_load_fail(L, t, MGOPT_ERR_IO, "read failed");
  t->ext_location = mgopt_program_intern(p, loc->ptr, loc->len);
  t->ext_offset = offset;
  t->raw_data.ptr = (const char *)data;
  t->raw_data.len = (size_t)nb;
  t->has |= MGOPT_ONNX_TENSOR_HAS_RAW_DATA;
  t->data_location = MGOPT_ONNX_LOC_DEFAULT;
  t->has &= ~MGOPT__ONNX_TENSOR_HAS_LOCATION; /* written back like any inline tensor */
  t->external_data = NULL;
  t->nexternal_data = 0;
  return 0;
}

MGOPTDEF mgopt_status mgopt_onnx_load_external(mgopt_onnx_model *m, const char *dir, mgopt_diag *d) {
  mgopt__onnx_loader L;
  mgopt_diag tmp;
  if (!d) d = &tmp;
  mgopt_diag_clear(d);
  if (!m || !m->program) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "NULL model");
  memset(&L, 0, sizeof L);
  L.m = m;
  L.dir = dir ? dir : m->dir;
  L.d = d;
  if (mgopt__onnx_walk(MGOPT__OM_MODEL, m, -1, 0, mgopt__onnx_load_one, &L, 0) < 0 && !L.st)
    L.st = mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "model tree nested too deeply");
  if (L.f) fclose(L.f);
  return L.st;
}

/* Length of the directory part of path, separator excluded ("" -> 0). */
static size_t mgopt__onnx_dirlen(const char *path) {
  size_t n = strlen(path);
  while (n > 0 && path[n - 1] != '/' && path[n - 1] != '\\') n--;
  return n > 1 ? n - 1 : n; /* keep "/" for files in the root */
}

MGOPTDEF mgopt_status mgopt_onnx_read_file(const char *path, const mgopt_onnx_read_options *opts,
                                          mgopt_onnx_model **out, mgopt_diag *d) {
  FILE *f;
  int64_t size;
  mgopt_program *p;
  uint8_t *buf;
  mgopt_onnx_model *m = NULL;
  mgopt_status s;
  mgopt_diag_clear(d);
  if (!out) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "out is NULL");
  if (!path) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "NULL path");
  f = fopen(path, "rb");
  if (!f) return mgopt_diag_set(d, MGOPT_ERR_IO, "cannot open %s", path);
  size = mgopt__onnx_fsize(f);
  if (size < 0 || !mgopt__onnx_seek(f, 0) || (uint64_t)size > (uint64_t)SIZE_MAX - 64) {
    fclose(f);
    return mgopt_diag_set(d, MGOPT_ERR_IO, "cannot size %s", path);
  }
  p = mgopt_program_create(opts ? opts->alloc : NULL);
  buf = p ? (uint8_t *)mgopt__arena_alloc(p, (size_t)size, 64, 0) : NULL;
  if (!buf) {
    fclose(f);
    mgopt_program_destroy(p);
    return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory reading %s", path);
  }
  if (size && fread(buf, 1, (size_t)size, f) != (size_t)size) {
    fclose(f);
    mgopt_program_destroy(p);
    return mgopt_diag_set(d, MGOPT_ERR_IO, "cannot read %s", path);
  }
  fclose(f);
  s = mgopt__onnx_read_into(p, buf, (size_t)size, opts, &m, d);
  if (s == MGOPT_OK) {
    m->dir = mgopt_program_intern(p, path, mgopt__onnx_dirlen(path));
    if (!m->dir) s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  }
  if (s == MGOPT_OK && !(opts && opts->keep_external)) s = mgopt_onnx_load_external(m, NULL, d);
  if (s != MGOPT_OK) {
    mgopt_program_destroy(p);
    return s;
  }
  *out = m;
  return MGOPT_OK;
}

typedef struct mgopt__onnx_fsink {
  const char *path;
  FILE *f;
  int failed;
} mgopt__onnx_fsink;

static mgopt_status mgopt__onnx_file_sink(void *ctx, const void *data, size_t n) {
  mgopt__onnx_fsink *s = (mgopt__onnx_fsink *)ctx;
  if (!s->f) {
    s->f = fopen(s->path, "wb");
    if (!s->f) {
      s->failed = 1;
      return MGOPT_ERR_IO;
    }
  }
  if (n && fwrite(data, 1, n, s->f) != n) {
    s->failed = 1;
    return MGOPT_ERR_IO;
  }
  return MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_onnx_write_file(const mgopt_onnx_model *m, const char *path,
                                            const mgopt_onnx_write_options *opts, mgopt_diag *d) {
  mgopt__onnx_fsink sink, out;
  mgopt_status st;
  char *loc = NULL, *side = NULL;
  size_t loc_cap = 0, side_cap = 0;
  const mgopt_allocator *alloc;
  mgopt_onnx_write_options o;
  mgopt_diag_clear(d);
  if (!m || !path) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "NULL model or path");
  alloc = m->program ? &m->program->alloc : NULL;
  memset(&sink, 0, sizeof sink);
  memset(&out, 0, sizeof out);
  memset(&o, 0, sizeof o);
  if (opts) o = *opts;
  if (o.external_min_bytes > 0) {
    /* the location recorded in the model, and the side file's path next to path */
    const char *base = path + strlen(path);
    size_t ll, dl;
    while (base > path && base[-1] != '/' && base[-1] != '\\') base--;
    dl = (size_t)(base - path);
    if (o.external_location) {
      ll = strlen(o.external_location);
      loc_cap = ll + 1;
      loc = (char *)mgopt__heap_realloc(alloc, NULL, 0, loc_cap);
      if (loc) memcpy(loc, o.external_location, ll + 1);
    } else {
      size_t bl = strlen(base);
      ll = bl + 5;
      loc_cap = ll + 1;
      loc = (char *)mgopt__heap_realloc(alloc, NULL, 0, loc_cap);
      if (loc) {
        memcpy(loc, base, bl);
        memcpy(loc + bl, ".data", 6);
      }
    }
    if (!loc) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
    if (!mgopt__onnx_location_ok(loc, ll)) {
      mgopt__heap_free(alloc, loc, loc_cap);
      return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG,
                            "external_location must be a relative path without '..'");
    }
    side_cap = dl + ll + 1;
    side = (char *)mgopt__heap_realloc(alloc, NULL, 0, side_cap);
    if (!side) {
      mgopt__heap_free(alloc, loc, loc_cap);
      return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
    }
    memcpy(side, path, dl);
    memcpy(side + dl, loc, ll + 1);
    sink.path = side;
    o.external_location = loc;
  }
  out.path = path;
  st = mgopt_onnx_write_stream(m, &o, mgopt__onnx_file_sink, &out, mgopt__onnx_file_sink, &sink, d);
  if (st == MGOPT_OK && !out.f) st = mgopt__onnx_file_sink(&out, "", 0); /* an empty model still makes a file */
  if (sink.f && fclose(sink.f) != 0) sink.failed = 1;
  if (out.f && fclose(out.f) != 0) out.failed = 1;
  if (sink.failed || out.failed) st = mgopt_diag_set(d, MGOPT_ERR_IO, "cannot write %s", sink.failed ? side : path);
  if (loc) mgopt__heap_free(alloc, loc, loc_cap);
  if (side) mgopt__heap_free(alloc, side, side_cap);
  return st;
}

#endif /* MGOPT_NO_STDIO */
/* src/onnx/convert_internal.h — private declarations of the ONNX converter: importer and exporter state, the mapping and type-rule tables, and the helpers the mappings share. */
#ifndef MGOPT__ONNX_CONVERT_INTERNAL_H
#define MGOPT__ONNX_CONVERT_INTERNAL_H

/* How the converter is laid out. The importer (import.c) walks a graph and
   its subgraphs and hands each default-domain node to the row of the mapping
   table for its op type and the model's opset; the exporter (export.c) hands
   each canonical op to the row for its kind and the target opset. A row
   names the ONNX op, the opsets it holds for, its import function and its
   export function, which sit side by side in the file of their family
   (map_elementwise.c, map_shape.c, map_nn.c, map_reduce.c). An op that stays
   opaque still gets its output types from the type-rule table
   (opaque_types.c). ops.c lists the families and keeps the lookups. */

#define MGOPT__IMP_MAX_DEPTH 64

/* ---------------------------------------------------------------- scoped name map (scope.c) */

typedef struct mgopt__imap_undo {
  const void *key;
  void *val;
} mgopt__imap_undo;

/* Interned pointer -> pointer, with an undo log so a subgraph's names can be
   popped. Zeroed = empty; al is the allocator (NULL = the default one). */
typedef struct mgopt__imap {
  const mgopt_allocator *al;
  mgopt__map map;
  mgopt__imap_undo *undo;
  int64_t nundo, undo_cap;
  int oom;
} mgopt__imap;

MGOPT__PRIVATE void mgopt__imap_free(mgopt__imap *m);
MGOPT__PRIVATE void *mgopt__imap_get(const mgopt__imap *m, const void *k);
MGOPT__PRIVATE void mgopt__imap_put(mgopt__imap *m, const void *k, void *v);
MGOPT__PRIVATE void mgopt__imap_pop(mgopt__imap *m, int64_t mark);

/* ---------------------------------------------------------------- the tables (ops.c) */

typedef struct mgopt__imp mgopt__imp;
typedef struct mgopt__exp mgopt__exp;
typedef struct mgopt__onnx_map mgopt__onnx_map;
typedef struct mgopt__onnx_rule mgopt__onnx_rule;

/* Builds canonical ops for I->node: 1 when it did, 0 to leave the node opaque
   (nothing it created is read then), -1 on error (d set). */
typedef int (*mgopt__imp_fn)(mgopt__imp *I, const mgopt__onnx_map *m);
/* Writes canonical op `op` as ONNX nodes of the target opset. Runs only on
   an op the row's check accepted, so it fails only when memory runs out. */
typedef mgopt_status (*mgopt__exp_fn)(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m);
/* Why the row cannot write `op` (a short reason), NULL when it can. The one
   test behind both the exporter's refusal and the program's target. */
typedef const char *(*mgopt__exp_check_fn)(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m);
/* Sets the output types of opaque op `op` (made from I->node) that ONNX makes certain. */
typedef mgopt_status (*mgopt__onnx_rule_fn)(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r);

/* One ONNX op of the default domain over a range of opsets, and the canonical op it maps to. */
struct mgopt__onnx_map {
  const char *onnx;      /* ONNX op type */
  int32_t since, until;  /* the opsets this row is for: since..until, until 0 = every later one */
  int32_t kind;          /* the canonical op (mgopt_op_kind) the import makes or the export writes */
  mgopt__imp_fn to_ir;   /* import; NULL: the ONNX op stays opaque */
  mgopt__exp_fn to_onnx; /* export; NULL: another row writes `kind` (at most one row per kind and opset) */
  const char *slots[3];  /* operand slots as ONNX inputs 0, 1, 2 (for the one-to-one mappings) */
  mgopt__exp_check_fn check; /* what to_onnx can write; NULL: every op of the kind */
};

/* The type rule of one ONNX op (default domain) over a range of opsets. */
struct mgopt__onnx_rule {
  const char *onnx;
  int32_t since, until; /* as in mgopt__onnx_map */
  mgopt__onnx_rule_fn fn;
  int32_t arg; /* what the rule function reads it as is said above the function */
};

/* The rows of one family of mappings; *n gets their count. */
typedef const mgopt__onnx_map *(*mgopt__onnx_family_fn)(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_elementwise(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_shape(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_nn(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_reduce(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_struct(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_quant(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_sparse(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_recurrent(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_rule *mgopt__onnx_rules(int32_t *n);

/* Family i's rows (*n of them), NULL past the last family. */
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_family(int32_t i, int32_t *n);
MGOPT__PRIVATE int mgopt__onnx_in_range(int32_t since, int32_t until, int64_t opset);

/* The importer's index of op types for one opset: the mapping row and the
   type rule of each name (open addressing over the name's bytes). */
#define MGOPT__ONNX_INDEX_CAP 512
typedef struct mgopt__onnx_entry {
  const char *name;
  size_t len;
  const mgopt__onnx_map *map;
  const mgopt__onnx_rule *rule;
} mgopt__onnx_entry;

typedef struct mgopt__onnx_index {
  mgopt__onnx_entry slots[MGOPT__ONNX_INDEX_CAP];
  int32_t count;
} mgopt__onnx_index;

MGOPT__PRIVATE void mgopt__onnx_index_build(mgopt__onnx_index *x, int64_t opset);
MGOPT__PRIVATE const mgopt__onnx_entry *mgopt__onnx_index_find(const mgopt__onnx_index *x, mgopt_str op_type);

/* The exporter's index: the row that writes each kind at one opset. */
MGOPT__PRIVATE void mgopt__onnx_kind_index(const mgopt__onnx_map **by_kind, int64_t opset);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_kind_later(int32_t kind, int64_t opset);
MGOPT__PRIVATE int mgopt__onnx_kind_only_later(int32_t kind, int64_t opset);

/* What the exporter can write (export.c). The default-domain opset export
   writes: `requested` when positive, else the imported model's, else 17. */
MGOPT__PRIVATE int64_t mgopt__onnx_export_opset(const mgopt_program *p, int64_t requested);
/* Why `op` cannot be written at `opset` (by_kind: mgopt__onnx_kind_index of
   it): a reason ("" when there is nothing more to say than that), or NULL
   when it can. Reasons that name a dtype or an opset are formatted in buf.
   The exporter refuses an op exactly when this gives a reason, and the ONNX
   target (mgopt_onnx_set_target) accepts one exactly when it gives NULL. */
MGOPT__PRIVATE const char *mgopt__onnx_why_not(mgopt_program *p, const mgopt__onnx_map *const *by_kind, int64_t opset,
                                               const mgopt_op *op, char *buf, size_t cap);

/* ---------------------------------------------------------------- importer state */

/* A model-local function while the importer reads the model (functions.c). */
typedef struct mgopt__imp_func {
  const mgopt_onnx_function *proto;
  const char *name;    /* its IR name (interned); NULL: kept as it came */
  mgopt_type *args;    /* per input, the join of the types its callers pass */
  int64_t ncalls;      /* calls imported so far */
  int64_t pending;     /* calls from functions not decided yet */
  int unseen_callers;  /* a function kept as it came calls it: input types unknown */
  int state;           /* 0 not imported yet, 1 imported, 2 kept as it came, 3 being imported */
  int dirty;           /* imported, but its inputs' types got more general since */
} mgopt__imp_func;

struct mgopt__imp {
  mgopt_program *p;
  mgopt_onnx_model *m;
  mgopt_diag *d;
  mgopt__imap values; /* interned name -> mgopt_value */
  mgopt__imap vinfo;  /* interned name -> mgopt_onnx_type */
  int64_t opset;      /* default-domain opset version */
  int depth;
  mgopt_block *b; /* block being filled */
  const mgopt_onnx_node *node;
  int infer_failed; /* a mapped op's types did not infer (the node then stays opaque) */
  mgopt__onnx_index ops;
  /* model-local functions (functions.c) */
  mgopt__imp_func *fns;
  int64_t nfns;
  mgopt__imap fnames;            /* interned IR name -> 1 + index in fns */
  int in_function;               /* importing a function body: attribute references allowed */
  const mgopt_type *arg_types;   /* the body's argument types */
};

MGOPT__PRIVATE mgopt_status mgopt__imp_fail(mgopt__imp *I, mgopt_status s, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
MGOPT__PRIVATE const char *mgopt__imp_intern(mgopt__imp *I, mgopt_str s);
MGOPT__PRIVATE const char *mgopt__imp_intern_copy(mgopt__imp *I, mgopt_str s);
MGOPT__PRIVATE int mgopt__imp_streq(mgopt_str s, const char *c);
MGOPT__PRIVATE int mgopt__imp_default_domain(mgopt_str domain);

/* model-local functions (functions.c). The opaque op type of a node
   ("onnx::OpType", "domain::OpType", "domain::OpType@overload"), into buf. */
MGOPT__PRIVATE void mgopt__onnx_node_type(char *buf, size_t cap, mgopt_str domain, mgopt_str op_type,
                                          mgopt_str overload);
/* For each of m's functions k: calls[k] the op type of a node calling it,
   names[k] its IR function's name when it is imported (the same string),
   NULL when it is kept as it came. Both interned in p. */
MGOPT__PRIVATE mgopt_status mgopt__onnx_function_names(mgopt_program *p, const mgopt_onnx_model *m, const char **calls,
                                                      const char **names);
/* Sets up I->fns from I->m before any graph is imported. */
MGOPT__PRIVATE mgopt_status mgopt__imp_prepare_functions(mgopt__imp *I);
/* Joins the operand types of opaque op `op` into the function it calls, if any. */
MGOPT__PRIVATE mgopt_status mgopt__imp_note_call(mgopt__imp *I, mgopt_op *op);
/* Imports the functions' bodies, callers first (after `main`). */
MGOPT__PRIVATE mgopt_status mgopt__imp_functions(mgopt__imp *I);
/* Imports graph g as a function body b (import.c): arguments typed I->arg_types. */
MGOPT__PRIVATE mgopt_status mgopt__imp_function_body(mgopt__imp *I, const mgopt_onnx_graph *g, mgopt_block *b);

/* ONNX types and tensors as the IR's (import_values.c) */
MGOPT__PRIVATE mgopt_status mgopt__imp_type(mgopt__imp *I, const mgopt_onnx_type *ot, mgopt_type *out);
MGOPT__PRIVATE mgopt_status mgopt__imp_refine(mgopt__imp *I, mgopt_value *v, const mgopt_onnx_type *ot);
MGOPT__PRIVATE mgopt_tensor *mgopt__imp_tensor(mgopt__imp *I, const mgopt_onnx_tensor *ot);
MGOPT__PRIVATE mgopt_status mgopt__imp_type_bytes(mgopt__imp *I, const mgopt_onnx_type *t, mgopt_str *out);

/* reading the node and building canonical ops (import_build.c) */
MGOPT__PRIVATE const mgopt_onnx_attribute *mgopt__imp_attr(const mgopt_onnx_node *n, const char *name);
MGOPT__PRIVATE int64_t mgopt__imp_aint(const mgopt_onnx_node *n, const char *name, int64_t dflt);
MGOPT__PRIVATE double mgopt__imp_afloat(const mgopt_onnx_node *n, const char *name, double dflt);
MGOPT__PRIVATE int64_t mgopt__imp_aints(const mgopt_onnx_node *n, const char *name, const int64_t **out);
MGOPT__PRIVATE int mgopt__imp_astr(const mgopt_onnx_node *n, const char *name, const char *want);
MGOPT__PRIVATE mgopt_value *mgopt__imp_in(mgopt__imp *I, int64_t k);
MGOPT__PRIVATE int64_t mgopt__imp_nin(const mgopt_onnx_node *n);
MGOPT__PRIVATE int64_t mgopt__imp_nout(const mgopt_onnx_node *n);
MGOPT__PRIVATE int64_t mgopt__imp_const_ints(mgopt__imp *I, mgopt_value *v, int64_t **out);
MGOPT__PRIVATE int64_t mgopt__imp_axes(mgopt__imp *I, int64_t input_k, int attr_form, int64_t **out);
MGOPT__PRIVATE int mgopt__imp_rank(const mgopt_value *v);
MGOPT__PRIVATE int mgopt__imp_is_float(const mgopt_value *v);
MGOPT__PRIVATE int mgopt__imp_known_dtype(const mgopt_value *v);
MGOPT__PRIVATE const char *mgopt__imp_kind_name(int32_t kind);
MGOPT__PRIVATE mgopt_op *mgopt__imp_op(mgopt__imp *I, const char *type, int32_t nouts, int32_t nblocks);
/* A const value holding t (named after the node and `what`), inserted before pos (NULL: at the end). */
MGOPT__PRIVATE mgopt_value *mgopt__imp_const(mgopt__imp *I, mgopt_op *pos, const char *what, mgopt_tensor *t);
MGOPT__PRIVATE mgopt_value *mgopt__imp_const_i32s(mgopt__imp *I, mgopt_op *pos, const char *what, const int64_t *v,
                                                  int64_t n);
MGOPT__PRIVATE mgopt_status mgopt__imp_finish(mgopt__imp *I, mgopt_op *op);
MGOPT__PRIVATE int mgopt__imp_done(mgopt__imp *I, mgopt_op *op);
MGOPT__PRIVATE int mgopt__imp_forwardable(mgopt__imp *I, const mgopt_value *x);
MGOPT__PRIVATE mgopt_status mgopt__imp_forward(mgopt__imp *I, mgopt_value *v);

/* ---------------------------------------------------------------- exporter state */

typedef struct mgopt__exv {
  void *data;
  int64_t n, cap;
} mgopt__exv;

typedef struct mgopt__exg_made { /* a constant the export made: its value and name */
  mgopt_tensor *t;
  const char *name;
} mgopt__exg_made;

typedef struct mgopt__exg { /* a graph being written */
  mgopt__exv nodes, inits, inputs, outputs;
  mgopt__exv sparse; /* sparse_initializers (mgopt_onnx_sparse_tensor) */
  int is_main;
  int inits_ok; /* may hold initializers: main, or a subgraph from IR version 4 (a function body never) */
  /* the constants mgopt__exp_const wrote in this graph, found by content:
     hash -> 1 + index in made (a multimap); made holds mgopt__exg_made */
  mgopt__map by_content;
  mgopt__exv made;
} mgopt__exg;

struct mgopt__exp {
  mgopt_program *p;
  const mgopt_onnx_export_options *o;
  mgopt_diag *d;
  int64_t opset;
  mgopt__exg *g;
  const mgopt_op *op; /* op being written, for messages */
  int depth;
  int sub_inits; /* subgraphs may hold initializers (IR version 4 or later) */
  /* the imported model's nodes by interned name (E itself for a name two
     nodes share), for the names of the subgraphs; built on first need */
  mgopt__map orig_nodes;
  int orig_nodes_built;
  /* names taken in this model (interned pointers): the IR's values, then
     each name the export makes up; with the next suffix per base, so
     exporting one program twice gives the same names */
  mgopt__map names; /* interned name -> 1 */
  mgopt__map fresh; /* interned base -> the next suffix to try */
  const mgopt__onnx_map *by_kind[MGOPT_OP__COUNT]; /* the row that writes each kind at this opset */
  /* writing a model-local function: its body and its output names */
  const mgopt_block *fn_body;
  const char *const *fn_outs;
  mgopt__imap overloads; /* op type of a call to an overloaded function -> 1 */
  /* the first failure that is not memory (mgopt__exp_fail recorded its
     message): a caller that sees only a NULL reports it, not "out of memory" */
  mgopt_status cause;
  mgopt_status status0; /* the program's status when the export began */
};

/* building nodes (export_build.c) */
MGOPT__PRIVATE void *mgopt__exv_push(mgopt__exp *E, mgopt__exv *v, size_t elem);
MGOPT__PRIVATE void mgopt__exv_free(mgopt__exp *E, mgopt__exv *v, size_t elem);
MGOPT__PRIVATE void *mgopt__exv_take(mgopt__exp *E, mgopt__exv *v, size_t elem, int64_t *count);
MGOPT__PRIVATE mgopt_status mgopt__exp_fail(mgopt__exp *E, mgopt_status s, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
MGOPT__PRIVATE mgopt_status mgopt__exp_nomem(mgopt__exp *E);
MGOPT__PRIVATE mgopt_status mgopt__exp_unsupported(mgopt__exp *E, const mgopt_op *op, const char *why);
MGOPT__PRIVATE mgopt_str mgopt__exp_s(const char *c);
MGOPT__PRIVATE int32_t mgopt__exp_dtype(mgopt_dtype t);
MGOPT__PRIVATE mgopt_onnx_type *mgopt__exp_type(mgopt__exp *E, const mgopt_type *t);
MGOPT__PRIVATE const char *mgopt__exp_tensor_why_not(const mgopt_tensor *t, char *buf, size_t cap);
MGOPT__PRIVATE mgopt_status mgopt__exp_tensor(mgopt__exp *E, const mgopt_tensor *t, const char *name,
                                              mgopt_onnx_tensor *ot);
MGOPT__PRIVATE mgopt_onnx_node *mgopt__exp_node(mgopt__exp *E, const char *op_type, const char *domain,
                                                const char *name);
MGOPT__PRIVATE int mgopt__exp_set_io(mgopt__exp *E, mgopt_str **arr, int64_t *cnt, const char *const *names,
                                     int64_t n);
MGOPT__PRIVATE mgopt_onnx_attribute *mgopt__exp_attr(mgopt__exp *E, mgopt_onnx_node *n, const char *name,
                                                     int32_t type);
MGOPT__PRIVATE int mgopt__exp_aint(mgopt__exp *E, mgopt_onnx_node *n, const char *name, int64_t v);
MGOPT__PRIVATE int mgopt__exp_afloat(mgopt__exp *E, mgopt_onnx_node *n, const char *name, double v);
MGOPT__PRIVATE int mgopt__exp_astr(mgopt__exp *E, mgopt_onnx_node *n, const char *name, const char *v);
MGOPT__PRIVATE int mgopt__exp_afloats(mgopt__exp *E, mgopt_onnx_node *n, const char *name, const float *v, int64_t cnt);
MGOPT__PRIVATE int mgopt__exp_aints(mgopt__exp *E, mgopt_onnx_node *n, const char *name, const int64_t *v,
                                    int64_t cnt);
MGOPT__PRIVATE int mgopt__exp_claim(mgopt__exp *E, const char *name);
MGOPT__PRIVATE const char *mgopt__exp_fresh(mgopt__exp *E, const char *base);
MGOPT__PRIVATE const char *mgopt__exp_i64_const(mgopt__exp *E, const char *base, const int64_t *v, int64_t n);
MGOPT__PRIVATE const char *mgopt__exp_const(mgopt__exp *E, const char *base, mgopt_tensor *t);
MGOPT__PRIVATE const char *mgopt__exp_vname(const mgopt_value *v);
/* The operand a mul or real_div is written as Neg or Reciprocal of, or NULL (map_elementwise.c). */
MGOPT__PRIVATE mgopt_value *mgopt__exp_unary_form(const mgopt_op *op, int64_t opset);
MGOPT__PRIVATE const char *mgopt__exp_as_i64(mgopt__exp *E, mgopt_value *v);
MGOPT__PRIVATE mgopt_onnx_node *mgopt__exp_simple(mgopt__exp *E, const mgopt_op *op, const char *op_type,
                                                  const char *const *ins, int64_t nin);
MGOPT__PRIVATE const char *mgopt__exp_in(const mgopt_op *op, const char *slot);
MGOPT__PRIVATE mgopt_status mgopt__exp_done(mgopt__exp *E, const mgopt_onnx_node *n);
/* After op's nodes (from node `first` of the graph being written): its
   fused_activation (relu, relu6) as a Relu or Clip node (map_nn.c). */
MGOPT__PRIVATE mgopt_status mgopt__exp_fused_activation(mgopt__exp *E, const mgopt_op *op, int64_t first);
MGOPT__PRIVATE mgopt_status mgopt__exp_direct(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m);
MGOPT__PRIVATE const char *mgopt__exw_direct(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m);
/* 1 when linear op is written as MatMul with its constant weight's transposed
   copy (map_nn.c): the constant need not be written for that reader. */
MGOPT__PRIVATE int mgopt__exp_linear_folds_weight(const mgopt_op *op);
/* 1 when lstm / gru / rnn `op` writes constant operand v re-laid (map_recurrent.c). */
MGOPT__PRIVATE int mgopt__exp_recurrent_folds(const mgopt_op *op, const mgopt_value *v);
/* 1 when op is the import's squeeze before or expand_dims after a recurrent
   op that writes it itself (map_recurrent.c): the exporter skips it. */
MGOPT__PRIVATE int mgopt__exp_recurrent_absorbs(const mgopt_op *op);
/* 1 when op's writer writes its constant operands itself, each in its own
   encoding (map_quant.c: compressed weights): they need not be written for it. */
MGOPT__PRIVATE int mgopt__exp_writes_consts(const mgopt_op *op);

#endif /* MGOPT__ONNX_CONVERT_INTERNAL_H */
/* src/onnx/scope.c — the importer's scoped name map: interned pointer to pointer, popped when a subgraph ends. */

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
/* src/onnx/import_values.c — ONNX types and tensors as the IR's: value types, declared-type refinement, tensor data, type attributes. */

/* An ONNX type as the IR's: a tensor type (rank -1 without a shape, a dim
   param as a symbol), or any other kind kept as its bytes. */
MGOPT__PRIVATE mgopt_status mgopt__imp_type(mgopt__imp *I, const mgopt_onnx_type *ot, mgopt_type *out) {
  mgopt_type t;
  memset(&t, 0, sizeof t);
  t.rank = -1;
  if (!ot) {
    *out = t;
    return MGOPT_OK;
  }
  if (!ot->tensor_type) {
    if (ot->other.len) {
      t.kind = MGOPT_TYPE_OTHER;
      t.other = (const uint8_t *)ot->other.ptr;
      t.other_len = ot->other.len;
    }
    *out = t;
    return MGOPT_OK;
  }
  t.dtype = (uint8_t)mgopt_onnx_dtype(ot->tensor_type->elem_type);
  if (t.dtype == MGOPT_DT_UNKNOWN && ot->tensor_type->elem_type != 0) {
    /* an element type the IR has no dtype for (FLOAT4E2M1, a newer code):
       the type is kept as its bytes, so it is written back as it came */
    mgopt_str bytes;
    mgopt_status s = mgopt__imp_type_bytes(I, ot, &bytes);
    if (s) return s;
    if (bytes.len) {
      t.kind = MGOPT_TYPE_OTHER;
      t.other = (const uint8_t *)bytes.ptr;
      t.other_len = bytes.len;
    }
    *out = t;
    return MGOPT_OK;
  }
  if (ot->tensor_type->shape) {
    const mgopt_onnx_shape *sh = ot->tensor_type->shape;
    int64_t i;
    if (sh->ndims > MGOPT_MAX_RANK)
      return mgopt__imp_fail(I, MGOPT_ERR_LIMIT, "a type has %lld dims, above %d", (long long)sh->ndims,
                             MGOPT_MAX_RANK);
    if (mgopt_type_make(I->p, &t, (mgopt_dtype)t.dtype, (int32_t)sh->ndims, NULL)) return MGOPT_ERR_NOMEM;
    for (i = 0; i < sh->ndims; i++) {
      const mgopt_onnx_dim *od = &sh->dims[i];
      if ((od->has & MGOPT_ONNX_DIM_HAS_VALUE) && od->value >= 0) t.dims[i] = mgopt_dim_static(od->value);
      else if ((od->has & MGOPT_ONNX_DIM_HAS_PARAM) && od->param.len) {
        t.dims[i].v = -1;
        t.dims[i].sym = mgopt__imp_intern_copy(I, od->param);
        if (!t.dims[i].sym) return MGOPT_ERR_NOMEM;
      }
    }
  }
  *out = t;
  return MGOPT_OK;
}

/* Merges the declared ONNX type into v's inferred type: declared info fills
   what inference left unknown and never contradicts it. */
MGOPT__PRIVATE mgopt_status mgopt__imp_refine(mgopt__imp *I, mgopt_value *v, const mgopt_onnx_type *ot) {
  mgopt_type dt;
  mgopt_type *t = &v->type;
  int32_t i;
  mgopt_status s;
  if (!ot) return MGOPT_OK;
  if ((s = mgopt__imp_type(I, ot, &dt)) != MGOPT_OK) return s;
  if (dt.kind == MGOPT_TYPE_OTHER) {
    /* a sequence or map: only an opaque op (or a graph input) can make one;
       a canonical op makes tensors whatever its output claims */
    if (t->kind == MGOPT_TYPE_TENSOR && t->dtype == MGOPT_DT_UNKNOWN && t->rank < 0 &&
        (!v->def || v->def->kind == MGOPT_OP_OPAQUE))
      *t = dt;
    return MGOPT_OK;
  }
  if (t->kind != MGOPT_TYPE_TENSOR) return MGOPT_OK;
  if (t->dtype == MGOPT_DT_UNKNOWN) t->dtype = dt.dtype;
  if (t->rank < 0) {
    if (dt.rank >= 0) {
      uint8_t known = t->dtype; /* inference's dtype wins over the declared one */
      *t = dt;
      if (known != MGOPT_DT_UNKNOWN) t->dtype = known;
    }
    return MGOPT_OK;
  }
  if (dt.rank != t->rank) return MGOPT_OK;
  for (i = 0; i < t->rank; i++) {
    if (mgopt_dim_is_static(t->dims[i])) continue;
    if (mgopt_dim_is_static(dt.dims[i]) || (!t->dims[i].sym && dt.dims[i].sym)) t->dims[i] = dt.dims[i];
  }
  return MGOPT_OK;
}

/* ONNX tensor -> mgopt tensor; raw_data is borrowed where its little-endian
   bytes are the host's. NULL with d set on error. */
MGOPT__PRIVATE mgopt_tensor *mgopt__imp_tensor(mgopt__imp *I, const mgopt_onnx_tensor *ot) {
  mgopt_dtype dt = mgopt_onnx_dtype(ot->data_type);
  mgopt_tensor *t;
  int64_t i, n;
  if (dt == MGOPT_DT_UNKNOWN) {
    mgopt__imp_fail(I, MGOPT_ERR_UNSUPPORTED, "tensor '%.*s' has data type %d, which mgopt cannot hold",
                    (int)(ot->name.len > 80 ? 80 : ot->name.len), ot->name.ptr ? ot->name.ptr : "", (int)ot->data_type);
    return NULL;
  }
  if (ot->ndims > MGOPT_MAX_RANK || ot->numel < 0) {
    mgopt__imp_fail(I, MGOPT_ERR_LIMIT, "tensor with %lld dims, above %d", (long long)ot->ndims, MGOPT_MAX_RANK);
    return NULL;
  }
  if (ot->data_location == MGOPT_ONNX_LOC_EXTERNAL) {
    mgopt__imp_fail(I, MGOPT_ERR_UNSUPPORTED, "tensor '%.*s' is stored externally and was not loaded",
                    (int)(ot->name.len > 80 ? 80 : ot->name.len), ot->name.ptr ? ot->name.ptr : "");
    return NULL;
  }
  if (dt != MGOPT_DT_STRING && (ot->has & MGOPT_ONNX_TENSOR_HAS_RAW_DATA)) {
    int64_t nb = mgopt_onnx_raw_nbytes(ot->data_type, ot->numel);
    if (nb < 0 || (uint64_t)nb != ot->raw_data.len) {
      mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "tensor '%.*s': raw_data holds %llu bytes, its dims need %lld",
                      (int)(ot->name.len > 80 ? 80 : ot->name.len), ot->name.ptr ? ot->name.ptr : "",
                      (unsigned long long)ot->raw_data.len, (long long)nb);
      return NULL;
    }
    if ((int64_t)mgopt_dtype_nbytes(dt, ot->numel) == nb) {
      size_t unit = mgopt__dtype_swap_unit(dt);
      if (unit == 1 || mgopt__host_le()) {
        t = mgopt_tensor_new_borrowed(I->p, dt, (int32_t)ot->ndims, ot->dims,
                                      ot->raw_data.ptr ? ot->raw_data.ptr : "", (size_t)nb);
      } else { /* a big-endian host: an owned copy in host order */
        t = mgopt__tensor_new_data(I->p, dt, (int32_t)ot->ndims, ot->dims, 0);
        if (!t) {
          mgopt__oom(I->p);
          mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory");
          return NULL;
        }
        mgopt__le_copy(t->data, ot->raw_data.ptr, (size_t)nb, unit);
      }
      if (t) {
        t->ext_location = ot->ext_location;
        t->ext_offset = ot->ext_offset;
      }
      return t;
    }
    /* the layouts differ (sub-byte types): convert element by element below */
  }
  t = mgopt_tensor_new(I->p, dt, (int32_t)ot->ndims, ot->dims);
  if (!t) {
    mgopt__oom(I->p);
    mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  n = t->numel;
  if (dt == MGOPT_DT_STRING) {
    mgopt_str *s = (mgopt_str *)t->data;
    if (ot->nstring_data != n) {
      mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "string tensor with %lld strings for %lld elements",
                      (long long)ot->nstring_data, (long long)n);
      return NULL;
    }
    for (i = 0; i < n; i++) s[i] = ot->string_data[i];
    return t;
  }
  switch (ot->data_type) {
    case MGOPT_ONNX_DT_FLOAT:
    case MGOPT_ONNX_DT_COMPLEX64: { /* complex: real and imaginary parts, two floats per element */
      int64_t per = ot->data_type == MGOPT_ONNX_DT_FLOAT ? 1 : 2;
      if (ot->nfloat_data != n * per) goto count;
      if (n) memcpy(t->data, ot->float_data, (size_t)(n * per) * 4);
      break;
    }
    case MGOPT_ONNX_DT_DOUBLE:
    case MGOPT_ONNX_DT_COMPLEX128: {
      int64_t per = ot->data_type == MGOPT_ONNX_DT_DOUBLE ? 1 : 2;
      if (ot->ndouble_data != n * per) goto count;
      if (n) memcpy(t->data, ot->double_data, (size_t)(n * per) * 8);
      break;
    }
    case MGOPT_ONNX_DT_INT64:
      if (ot->nint64_data != n) goto count;
      if (n) memcpy(t->data, ot->int64_data, (size_t)n * 8);
      break;
    case MGOPT_ONNX_DT_UINT32:
    case MGOPT_ONNX_DT_UINT64:
      if (ot->nuint64_data != n) goto count;
      for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, (int64_t)ot->uint64_data[i]);
      break;
    case MGOPT_ONNX_DT_FLOAT16:
    case MGOPT_ONNX_DT_BFLOAT16:
      if (ot->nint32_data != n) goto count;
      for (i = 0; i < n; i++) {
        uint16_t h = (uint16_t)ot->int32_data[i];
        memcpy((char *)t->data + 2 * i, &h, 2);
      }
      break;
    case MGOPT_ONNX_DT_INT32:
    case MGOPT_ONNX_DT_INT16:
    case MGOPT_ONNX_DT_INT8:
    case MGOPT_ONNX_DT_UINT16:
    case MGOPT_ONNX_DT_UINT8:
    case MGOPT_ONNX_DT_BOOL:
      if (ot->nint32_data != n) goto count;
      for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, ot->int32_data[i]);
      break;
    case MGOPT_ONNX_DT_UINT4:
    case MGOPT_ONNX_DT_INT4:
      if (ot->has & MGOPT_ONNX_TENSOR_HAS_RAW_DATA) {
        const uint8_t *r = (const uint8_t *)ot->raw_data.ptr;
        for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, (r[i >> 1] >> ((i & 1) * 4)) & 15);
      } else {
        if (ot->nint32_data != (n + 1) / 2) goto count;
        for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, (ot->int32_data[i >> 1] >> ((i & 1) * 4)) & 15);
      }
      break;
    default:
      if (ot->nint32_data != n) goto count;
      for (i = 0; i < n; i++) ((uint8_t *)t->data)[i] = (uint8_t)ot->int32_data[i];
      break;
  }
  return t;
count:
  mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "tensor '%.*s': the number of values does not match its dims",
                  (int)(ot->name.len > 80 ? 80 : ot->name.len), ot->name.ptr ? ot->name.ptr : "");
  return NULL;
}

/* Appends a protobuf varint. */
static void mgopt__imp_varint(mgopt_buf *b, uint64_t v) {
  char c[10];
  size_t n = 0;
  do {
    c[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  mgopt__buf_putn(b, c, n);
}

/* The encoded TypeProto of t: its kept bytes, or a tensor type encoded here
   (elem_type, shape dims as value or param, denotation). */
MGOPT__PRIVATE mgopt_status mgopt__imp_type_bytes(mgopt__imp *I, const mgopt_onnx_type *t, mgopt_str *out) {
  mgopt_buf tt, sh, ty;
  int64_t i;
  if (t->other.len) {
    *out = t->other;
    return MGOPT_OK;
  }
  memset(&tt, 0, sizeof tt);
  memset(&sh, 0, sizeof sh);
  memset(&ty, 0, sizeof ty);
  tt.alloc = sh.alloc = ty.alloc = &I->p->alloc;
  if (t->tensor_type) {
    const mgopt_onnx_tensor_type *x = t->tensor_type;
    if (x->has & MGOPT_ONNX_TTYPE_HAS_ELEM_TYPE) {
      mgopt__buf_putc(&tt, 0x08);
      mgopt__imp_varint(&tt, (uint64_t)(uint32_t)x->elem_type);
    }
    if (x->shape) {
      for (i = 0; i < x->shape->ndims; i++) {
        const mgopt_onnx_dim *dm = &x->shape->dims[i];
        mgopt_buf d1;
        memset(&d1, 0, sizeof d1);
        d1.alloc = &I->p->alloc;
        if (dm->has & MGOPT_ONNX_DIM_HAS_VALUE) {
          mgopt__buf_putc(&d1, 0x08);
          mgopt__imp_varint(&d1, (uint64_t)dm->value);
        } else if (dm->has & MGOPT_ONNX_DIM_HAS_PARAM) {
          mgopt__buf_putc(&d1, 0x12);
          mgopt__imp_varint(&d1, dm->param.len);
          mgopt__buf_putn(&d1, dm->param.ptr, dm->param.len);
        }
        mgopt__buf_putc(&sh, 0x0a);
        mgopt__imp_varint(&sh, d1.len);
        if (d1.len) mgopt__buf_putn(&sh, d1.data, d1.len);
        if (d1.oom) sh.oom = 1;
        mgopt_buf_free(&d1);
      }
      mgopt__buf_putc(&tt, 0x12);
      mgopt__imp_varint(&tt, sh.len);
      if (sh.len) mgopt__buf_putn(&tt, sh.data, sh.len);
    }
    mgopt__buf_putc(&ty, 0x0a);
    mgopt__imp_varint(&ty, tt.len);
    if (tt.len) mgopt__buf_putn(&ty, tt.data, tt.len);
  }
  if (t->denotation.len) {
    mgopt__buf_putc(&ty, 0x32);
    mgopt__imp_varint(&ty, t->denotation.len);
    mgopt__buf_putn(&ty, t->denotation.ptr, t->denotation.len);
  }
  out->len = ty.len;
  out->ptr = ty.len ? (const char *)mgopt__dup(I->p, ty.data, ty.len) : "";
  {
    int oom = tt.oom || sh.oom || ty.oom || !out->ptr;
    mgopt_buf_free(&tt);
    mgopt_buf_free(&sh);
    mgopt_buf_free(&ty);
    return oom ? mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory") : MGOPT_OK;
  }
}
/* src/onnx/import_build.c — what the import mappings share: reading a node's attributes and inputs, building canonical ops and binding their outputs. */

/* ---------------------------------------------------------------- names */

/* A value or node name of the tree as the program's interned pointer. The
   tree's names are interned in the program already (see onnx_api.h; trees
   from mgopt_onnx_export too), so the pointer is taken as it is: hashing every name again on every lookup was a sixth of the
   import. A name that breaks the rule cannot match (it is then reported as
   undefined), never a different name. */
MGOPT__PRIVATE const char *mgopt__imp_intern(mgopt__imp *I, mgopt_str s) {
  if (s.ptr && s.len) return s.ptr;
  return mgopt_program_intern(I->p, "", 0);
}

/* Interned for certain (attribute names and dim params: few, and a tree built
   by mgopt_onnx_export spells them with literals). */
MGOPT__PRIVATE const char *mgopt__imp_intern_copy(mgopt__imp *I, mgopt_str s) {
  return mgopt_program_intern(I->p, s.ptr ? s.ptr : "", s.len);
}

MGOPT__PRIVATE int mgopt__imp_streq(mgopt_str s, const char *c) {
  size_t n = strlen(c);
  return s.len == n && (n == 0 || memcmp(s.ptr, c, n) == 0);
}

MGOPT__PRIVATE int mgopt__imp_default_domain(mgopt_str domain) {
  return domain.len == 0 || mgopt__imp_streq(domain, "ai.onnx");
}

/* ---------------------------------------------------------------- reading the node */

MGOPT__PRIVATE const mgopt_onnx_attribute *mgopt__imp_attr(const mgopt_onnx_node *n, const char *name) {
  int64_t i;
  for (i = 0; i < n->nattributes; i++)
    if (mgopt__imp_streq(n->attributes[i].name, name)) return &n->attributes[i];
  return NULL;
}

MGOPT__PRIVATE int64_t mgopt__imp_aint(const mgopt_onnx_node *n, const char *name, int64_t dflt) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(n, name);
  return a && a->type == MGOPT_ONNX_ATTR_INT ? a->i : dflt;
}

MGOPT__PRIVATE double mgopt__imp_afloat(const mgopt_onnx_node *n, const char *name, double dflt) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(n, name);
  return a && a->type == MGOPT_ONNX_ATTR_FLOAT ? (double)a->f : dflt;
}

/* INTS attribute: count, -1 if absent. */
MGOPT__PRIVATE int64_t mgopt__imp_aints(const mgopt_onnx_node *n, const char *name, const int64_t **out) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(n, name);
  if (!a || a->type != MGOPT_ONNX_ATTR_INTS) return -1;
  *out = a->ints;
  return a->nints;
}

MGOPT__PRIVATE int mgopt__imp_astr(const mgopt_onnx_node *n, const char *name, const char *want) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(n, name);
  return a && a->type == MGOPT_ONNX_ATTR_STRING && mgopt__imp_streq(a->s, want);
}

/* Input k of the node: NULL when absent or omitted. */
MGOPT__PRIVATE mgopt_value *mgopt__imp_in(mgopt__imp *I, int64_t k) {
  const mgopt_onnx_node *n = I->node;
  if (k >= n->ninputs || n->inputs[k].len == 0) return NULL;
  return (mgopt_value *)mgopt__imap_get(&I->values, mgopt__imp_intern(I, n->inputs[k]));
}

MGOPT__PRIVATE int64_t mgopt__imp_nin(const mgopt_onnx_node *n) {
  int64_t k = n->ninputs;
  while (k > 0 && n->inputs[k - 1].len == 0) k--;
  return k;
}

MGOPT__PRIVATE int64_t mgopt__imp_nout(const mgopt_onnx_node *n) {
  int64_t k = n->noutputs;
  while (k > 0 && n->outputs[k - 1].len == 0) k--;
  return k;
}


/* Constant integer list from a const value (1-d or scalar integer tensor). */
MGOPT__PRIVATE int64_t mgopt__imp_const_ints(mgopt__imp *I, mgopt_value *v, int64_t **out) {
  mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
  int64_t i, *arr;
  if (!t || t->rank > 1 || !mgopt_dtype_is_int((mgopt_dtype)t->dtype) || t->numel > 4096) return -1;
  arr = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(t->numel + 1), 8);
  if (!arr) return -1;
  mgopt_tensor_data(I->p, t);
  for (i = 0; i < t->numel; i++) arr[i] = mgopt_tensor_get_i64(t, i);
  *out = arr;
  return t->numel;
}

/* Axes from the attribute (attr_form: the opsets before they became an
   input) or from constant input input_k: count, -1 when not usable, -2 when absent. */
MGOPT__PRIVATE int64_t mgopt__imp_axes(mgopt__imp *I, int64_t input_k, int attr_form, int64_t **out) {
  const int64_t *a = NULL;
  int64_t n;
  if (attr_form) {
    n = mgopt__imp_aints(I->node, "axes", &a);
    if (n < 0) return -2;
    /* one spare slot, as callers expect; only n entries are read from the attribute */
    *out = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(n + 1), 8);
    if (*out && n) memcpy(*out, a, sizeof(int64_t) * (size_t)n);
    return *out ? n : -1;
  }
  if (input_k >= I->node->ninputs || I->node->inputs[input_k].len == 0) return -2;
  return mgopt__imp_const_ints(I, mgopt__imp_in(I, input_k), out);
}

MGOPT__PRIVATE int mgopt__imp_rank(const mgopt_value *v) {
  return v && v->type.kind == MGOPT_TYPE_TENSOR ? v->type.rank : -1;
}

MGOPT__PRIVATE int mgopt__imp_is_float(const mgopt_value *v) {
  return v && v->type.kind == MGOPT_TYPE_TENSOR &&
         (v->type.dtype == MGOPT_DT_FP32 || v->type.dtype == MGOPT_DT_FP16 || v->type.dtype == MGOPT_DT_FP64);
}

MGOPT__PRIVATE int mgopt__imp_known_dtype(const mgopt_value *v) {
  return v && v->type.kind == MGOPT_TYPE_TENSOR && v->type.dtype != MGOPT_DT_UNKNOWN;
}


/* ---------------------------------------------------------------- building canonical ops */

MGOPT__PRIVATE const char *mgopt__imp_kind_name(int32_t kind) {
  const mgopt_op_def *def = mgopt_op_def_get(kind);
  return def ? def->name : "";
}

/* A new op of `type` at the end of the current block, outputs named after the
   node's outputs 0..nouts-1 (absent outputs flagged). Not inferred yet. */
MGOPT__PRIVATE mgopt_op *mgopt__imp_op(mgopt__imp *I, const char *type, int32_t nouts, int32_t nblocks) {
  mgopt_op *op = mgopt_op_new(I->p, type, nouts, nblocks);
  int32_t i;
  if (!op) return NULL;
  if (I->node->name.len) op->name = mgopt__imp_intern(I, I->node->name);
  for (i = 0; i < nouts; i++) {
    if (i < I->node->noutputs && I->node->outputs[i].len) {
      op->outs[i]->name = mgopt__imp_intern(I, I->node->outputs[i]);
      if (!op->outs[i]->name) return NULL;
    } else {
      op->outs[i]->flags |= MGOPT_VALUE_ABSENT;
    }
  }
  mgopt_op_append(op, I->b);
  return op;
}

/* A const value (named after the node and `what`) holding t, inserted before `pos`. */
MGOPT__PRIVATE mgopt_value *mgopt__imp_const(mgopt__imp *I, mgopt_op *pos, const char *what, mgopt_tensor *t) {
  char buf[160];
  const char *nm;
  mgopt_value *v;
  snprintf(buf, sizeof buf, "%.100s_%s", I->node->outputs && I->node->noutputs && I->node->outputs[0].len
                                            ? mgopt__imp_intern(I, I->node->outputs[0]) : "const", what);
  nm = mgopt_program_fresh_name(I->p, buf);
  if (!nm || !t) return NULL;
  v = mgopt_build_const(I->p, I->b, pos, nm, t);
  return v;
}

MGOPT__PRIVATE mgopt_value *mgopt__imp_const_i32s(mgopt__imp *I, mgopt_op *pos, const char *what, const int64_t *v, int64_t n) {
  mgopt_tensor *t = mgopt_tensor_new(I->p, MGOPT_DT_INT32, 1, &n);
  int64_t i;
  if (!t) return NULL;
  for (i = 0; i < n; i++) {
    if (v[i] < INT32_MIN || v[i] > INT32_MAX) return NULL;
    mgopt_tensor_set_i64(t, i, v[i]);
  }
  return mgopt__imp_const(I, pos, what, t);
}

/* After a canonical op is built: infer, refine with declared types, and bind the outputs. */
MGOPT__PRIVATE mgopt_status mgopt__imp_finish(mgopt__imp *I, mgopt_op *op) {
  int32_t i;
  mgopt_diag d2;
  mgopt_status s;
  mgopt_diag_clear(&d2);
  if (op->kind != MGOPT_OP_OPAQUE) {
    s = mgopt_op_infer(I->p, op, &d2);
    if (s == MGOPT_ERR_NOMEM) return mgopt__imp_fail(I, s, "out of memory");
    if (s) {
      I->infer_failed = 1;
      return mgopt__imp_fail(I, MGOPT_ERR_TYPE, "%s: %s", op->type, d2.msg);
    }
  }
  for (i = 0; i < op->nouts; i++) {
    mgopt_value *v = op->outs[i];
    if (v->flags & MGOPT_VALUE_ABSENT) continue;
    s = mgopt__imp_refine(I, v, (const mgopt_onnx_type *)mgopt__imap_get(&I->vinfo, v->name));
    if (s) return s;
    mgopt__imap_put(&I->values, v->name, v);
  }
  return I->values.oom ? mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory") : MGOPT_OK;
}

/* The mapping's return value for the status of mgopt__imp_finish(op). */
MGOPT__PRIVATE int mgopt__imp_done(mgopt__imp *I, mgopt_op *op) { return mgopt__imp_finish(I, op) ? -1 : 1; }

/* 1 if an identity can stand for the node: a tensor goes in, and the first
   output is not declared as something else (a sequence, a map): those stay opaque. */
MGOPT__PRIVATE int mgopt__imp_forwardable(mgopt__imp *I, const mgopt_value *x) {
  const mgopt_onnx_type *ot;
  const char *nm;
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR) return 0;
  nm = I->node->noutputs ? mgopt__imp_intern(I, I->node->outputs[0]) : NULL;
  ot = nm ? (const mgopt_onnx_type *)mgopt__imap_get(&I->vinfo, nm) : NULL;
  return !ot || ot->tensor_type || !ot->other.len;
}

/* The node's output k is value v (an existing value): bind the name with an identity.
   Callers check mgopt__imp_forwardable first. */
MGOPT__PRIVATE mgopt_status mgopt__imp_forward(mgopt__imp *I, mgopt_value *v) {
  mgopt_op *op = mgopt__imp_op(I, "identity", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", v)) return MGOPT_ERR_NOMEM;
  return mgopt__imp_finish(I, op);
}
/* src/onnx/export_build.c — what the export mappings share: node and attribute building, fresh names, constants made for ONNX inputs, types and tensors as ONNX's. */

MGOPT__PRIVATE void *mgopt__exv_push(mgopt__exp *E, mgopt__exv *v, size_t elem) {
  char *slot;
  if (!mgopt__grow(&E->p->alloc, &v->data, &v->cap, v->n + 1, elem)) return NULL;
  slot = (char *)v->data + (size_t)v->n * elem;
  memset(slot, 0, elem);
  v->n++;
  return slot;
}

MGOPT__PRIVATE void mgopt__exv_free(mgopt__exp *E, mgopt__exv *v, size_t elem) {
  if (v->data) mgopt__heap_free(&E->p->alloc, v->data, (size_t)v->cap * elem);
  memset(v, 0, sizeof *v);
}

/* Moves a vector's contents into the arena; returns the arena copy. */
MGOPT__PRIVATE void *mgopt__exv_take(mgopt__exp *E, mgopt__exv *v, size_t elem, int64_t *count) {
  void *a = NULL;
  *count = v->n;
  if (v->n) a = mgopt__dup(E->p, v->data, (size_t)v->n * elem);
  mgopt__exv_free(E, v, elem);
  return a;
}

MGOPT__PRIVATE mgopt_status mgopt__exp_fail(mgopt__exp *E, mgopt_status s, const char *fmt, ...) {
  va_list ap;
  if (s != MGOPT_ERR_NOMEM && !E->cause) E->cause = s;
  if (!E->d) return s;
  E->d->status = s;
  E->d->op[0] = 0;
  if (E->op) {
    const char *n = E->op->name ? E->op->name : (E->op->nouts && E->op->outs[0]->name) ? E->op->outs[0]->name : "";
    snprintf(E->d->op, sizeof E->d->op, "%.90s", n);
  }
  va_start(ap, fmt);
  vsnprintf(E->d->msg, sizeof E->d->msg, fmt, ap);
  va_end(ap);
  return s;
}

MGOPT__PRIVATE mgopt_str mgopt__exp_s(const char *c) {
  mgopt_str s;
  s.ptr = c ? c : "";
  s.len = c ? strlen(c) : 0;
  return s;
}

/* ---------------------------------------------------------------- types and tensors */

MGOPT__PRIVATE int32_t mgopt__exp_dtype(mgopt_dtype t) {
  int32_t k;
  for (k = 1; k < MGOPT_ONNX_DT__COUNT; k++)
    if (mgopt_onnx_dtype(k) == t && t != MGOPT_DT_UNKNOWN) return k;
  return 0;
}

/* t as an ONNX type; NULL when out of memory, or when ONNX has no such type
   (a state, a dtype without an ONNX code: mgopt__exp_fail says which). */
MGOPT__PRIVATE mgopt_onnx_type *mgopt__exp_type(mgopt__exp *E, const mgopt_type *t) {
  mgopt_onnx_type *ot;
  mgopt_onnx_tensor_type *tt;
  int32_t i;
  if (t->kind == MGOPT_TYPE_STATE) {
    mgopt__exp_fail(E, MGOPT_ERR_UNSUPPORTED, "a state: ONNX has no state type");
    return NULL;
  }
  if (t->kind == MGOPT_TYPE_TENSOR && t->dtype != MGOPT_DT_UNKNOWN && !mgopt__exp_dtype((mgopt_dtype)t->dtype)) {
    mgopt__exp_fail(E, MGOPT_ERR_UNSUPPORTED, "a %s tensor: ONNX has no such data type",
                    mgopt_dtype_name((mgopt_dtype)t->dtype));
    return NULL;
  }
  ot = (mgopt_onnx_type *)mgopt_program_alloc(E->p, sizeof *ot, 8);
  if (!ot) return NULL;
  if (t->kind == MGOPT_TYPE_OTHER) {
    ot->other.ptr = (const char *)t->other;
    ot->other.len = t->other_len;
    return ot;
  }
  tt = (mgopt_onnx_tensor_type *)mgopt_program_alloc(E->p, sizeof *tt, 8);
  if (!tt) return NULL;
  ot->tensor_type = tt;
  tt->elem_type = mgopt__exp_dtype((mgopt_dtype)t->dtype);
  if (tt->elem_type) tt->has |= MGOPT_ONNX_TTYPE_HAS_ELEM_TYPE;
  if (t->rank >= 0) {
    tt->shape = (mgopt_onnx_shape *)mgopt_program_alloc(E->p, sizeof *tt->shape, 8);
    if (!tt->shape) return NULL;
    tt->shape->ndims = t->rank;
    if (t->rank > 0) {
      tt->shape->dims = (mgopt_onnx_dim *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_dim) * (size_t)t->rank, 8);
      if (!tt->shape->dims) return NULL;
    }
    for (i = 0; i < t->rank; i++) {
      mgopt_onnx_dim *od = &tt->shape->dims[i];
      if (t->dims[i].sym) {
        od->has = MGOPT_ONNX_DIM_HAS_PARAM;
        od->param = mgopt__exp_s(t->dims[i].sym);
      } else if (t->dims[i].v >= 0) {
        od->has = MGOPT_ONNX_DIM_HAS_VALUE;
        od->value = t->dims[i].v;
      }
    }
  }
  return ot;
}

/* Why t cannot be an ONNX tensor (formatted in buf), NULL when it can. */
MGOPT__PRIVATE const char *mgopt__exp_tensor_why_not(const mgopt_tensor *t, char *buf, size_t cap) {
  int32_t dt = mgopt__exp_dtype((mgopt_dtype)t->dtype);
  if (!dt) {
    snprintf(buf, cap, "a %s tensor has no ONNX data type", mgopt_dtype_name((mgopt_dtype)t->dtype));
    return buf;
  }
  if (t->dtype != MGOPT_DT_STRING && mgopt_onnx_raw_nbytes(dt, t->numel) < 0) {
    snprintf(buf, cap, "cannot write a %s tensor", mgopt_dtype_name((mgopt_dtype)t->dtype));
    return buf;
  }
  return NULL;
}

/* Fills ot from t (raw_data borrowed from the tensor's bytes where the layouts
   and byte orders agree). */
MGOPT__PRIVATE mgopt_status mgopt__exp_tensor(mgopt__exp *E, const mgopt_tensor *t, const char *name, mgopt_onnx_tensor *ot) {
  int32_t dt = mgopt__exp_dtype((mgopt_dtype)t->dtype);
  int64_t nb, i;
  char why[96];
  memset(ot, 0, sizeof *ot);
  if (mgopt__exp_tensor_why_not(t, why, sizeof why)) return mgopt__exp_fail(E, MGOPT_ERR_UNSUPPORTED, "%s", why);
  ot->data_type = dt;
  ot->has = MGOPT_ONNX_TENSOR_HAS_DATA_TYPE;
  ot->name = mgopt__exp_s(name);
  ot->ndims = t->rank;
  ot->numel = t->numel;
  if (t->rank > 0) {
    ot->dims = (int64_t *)mgopt__dup(E->p, t->shape, sizeof(int64_t) * (size_t)t->rank);
    if (!ot->dims) return mgopt__exp_nomem(E);
  }
  if (t->dtype == MGOPT_DT_STRING) {
    ot->string_data = (mgopt_str *)t->data;
    ot->nstring_data = t->numel;
    return MGOPT_OK;
  }
  nb = mgopt_onnx_raw_nbytes(dt, t->numel);
  ot->has |= MGOPT_ONNX_TENSOR_HAS_RAW_DATA;
  if ((size_t)nb == t->nbytes) {
    size_t unit = mgopt__dtype_swap_unit((mgopt_dtype)t->dtype);
    ot->raw_data.ptr = (const char *)t->data;
    ot->raw_data.len = t->nbytes;
    if (unit > 1 && !mgopt__host_le()) { /* a big-endian host: a little-endian copy */
      char *r = (char *)mgopt__arena_alloc(E->p, t->nbytes ? t->nbytes : 1, 8, 0); /* written whole */
      if (!r) return mgopt__exp_nomem(E);
      mgopt__le_copy(r, t->data, t->nbytes, unit);
      ot->raw_data.ptr = r;
    }
    return MGOPT_OK;
  }
  {
    /* 4-bit types: two per byte, low nibble first */
    uint8_t *r = (uint8_t *)mgopt_program_alloc(E->p, (size_t)nb + 1, 8);
    if (!r) return mgopt__exp_nomem(E);
    for (i = 0; i < t->numel; i++) r[i >> 1] |= (uint8_t)((mgopt_tensor_get_i64(t, i) & 15) << ((i & 1) * 4));
    ot->raw_data.ptr = (const char *)r;
    ot->raw_data.len = (size_t)nb;
  }
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- nodes */

MGOPT__PRIVATE mgopt_onnx_node *mgopt__exp_node(mgopt__exp *E, const char *op_type, const char *domain, const char *name) {
  mgopt_onnx_node *n = (mgopt_onnx_node *)mgopt__exv_push(E, &E->g->nodes, sizeof(mgopt_onnx_node));
  if (!n) return NULL;
  n->op_type = mgopt__exp_s(op_type);
  n->domain = mgopt__exp_s(domain);
  if (name) n->name = mgopt__exp_s(name);
  return n;
}

MGOPT__PRIVATE int mgopt__exp_set_io(mgopt__exp *E, mgopt_str **arr, int64_t *cnt, const char *const *names, int64_t n) {
  int64_t i;
  *arr = (mgopt_str *)mgopt_program_alloc(E->p, sizeof(mgopt_str) * (size_t)(n ? n : 1), 8);
  if (!*arr) return 0;
  for (i = 0; i < n; i++) (*arr)[i] = mgopt__exp_s(names[i]);
  *cnt = n;
  return 1;
}

MGOPT__PRIVATE mgopt_onnx_attribute *mgopt__exp_attr(mgopt__exp *E, mgopt_onnx_node *n, const char *name, int32_t type) {
  mgopt_onnx_attribute *a = (mgopt_onnx_attribute *)mgopt_program_alloc(
      E->p, sizeof(mgopt_onnx_attribute) * (size_t)(n->nattributes + 1), 8);
  if (!a) return NULL;
  if (n->nattributes) memcpy(a, n->attributes, sizeof(mgopt_onnx_attribute) * (size_t)n->nattributes);
  n->attributes = a;
  a = &a[n->nattributes++];
  a->name = mgopt__exp_s(name);
  a->type = type;
  a->has = MGOPT_ONNX_ATTR_HAS_TYPE;
  return a;
}

MGOPT__PRIVATE int mgopt__exp_aint(mgopt__exp *E, mgopt_onnx_node *n, const char *name, int64_t v) {
  mgopt_onnx_attribute *a = mgopt__exp_attr(E, n, name, MGOPT_ONNX_ATTR_INT);
  if (!a) return 0;
  a->i = v;
  a->has |= MGOPT_ONNX_ATTR_HAS_I;
  return 1;
}

MGOPT__PRIVATE int mgopt__exp_afloat(mgopt__exp *E, mgopt_onnx_node *n, const char *name, double v) {
  mgopt_onnx_attribute *a = mgopt__exp_attr(E, n, name, MGOPT_ONNX_ATTR_FLOAT);
  if (!a) return 0;
  a->f = (float)v;
  a->has |= MGOPT_ONNX_ATTR_HAS_F;
  return 1;
}

MGOPT__PRIVATE int mgopt__exp_astr(mgopt__exp *E, mgopt_onnx_node *n, const char *name, const char *v) {
  mgopt_onnx_attribute *a = mgopt__exp_attr(E, n, name, MGOPT_ONNX_ATTR_STRING);
  if (!a) return 0;
  a->s = mgopt__exp_s(v);
  a->has |= MGOPT_ONNX_ATTR_HAS_S;
  return 1;
}

MGOPT__PRIVATE int mgopt__exp_aints(mgopt__exp *E, mgopt_onnx_node *n, const char *name, const int64_t *v, int64_t cnt) {
  mgopt_onnx_attribute *a = mgopt__exp_attr(E, n, name, MGOPT_ONNX_ATTR_INTS);
  if (!a) return 0;
  a->ints = (int64_t *)mgopt__dup(E->p, v, sizeof(int64_t) * (size_t)(cnt ? cnt : 1));
  a->nints = cnt;
  return a->ints != NULL;
}

MGOPT__PRIVATE int mgopt__exp_afloats(mgopt__exp *E, mgopt_onnx_node *n, const char *name, const float *v, int64_t cnt) {
  mgopt_onnx_attribute *a = mgopt__exp_attr(E, n, name, MGOPT_ONNX_ATTR_FLOATS);
  if (!a) return 0;
  a->floats = (float *)mgopt__dup(E->p, v, sizeof(float) * (size_t)(cnt ? cnt : 1));
  a->nfloats = cnt;
  return a->floats != NULL;
}


/* "<base>_mgopt_<k>" for the smallest k this export has not used and no
   value of the model holds. */
MGOPT__PRIVATE const char *mgopt__exp_fresh(mgopt__exp *E, const char *base) {
  char buf[200];
  const char *b;
  mgopt__map_slot *sl;
  int r;
  snprintf(buf, sizeof buf, "%.120s_mgopt", base ? base : "v");
  b = mgopt_program_intern_cstr(E->p, buf);
  if (!b) return NULL;
  if (!(sl = mgopt__map_get(&E->fresh, mgopt__map_ptr_key(b), NULL))) return NULL;
  for (;;) {
    const char *name;
    snprintf(buf, sizeof buf, "%s_%llu", b, (unsigned long long)sl->v.u++);
    name = mgopt_program_intern_cstr(E->p, buf);
    if (!name) return NULL;
    r = mgopt__exp_claim(E, name);
    if (r < 0) return NULL;
    if (r) return name;
  }
}

/* An int64 1-d initializer (a Constant node in a graph that holds none) named fresh; returns its name. */
MGOPT__PRIVATE const char *mgopt__exp_i64_const(mgopt__exp *E, const char *base, const int64_t *v, int64_t n) {
  mgopt_tensor *t = mgopt_tensor_new(E->p, MGOPT_DT_INT64, 1, &n);
  if (!t) return NULL;
  if (n) memcpy(t->data, v, sizeof(int64_t) * (size_t)n);
  return mgopt__exp_const(E, base, t);
}

/* An initializer (a Constant node in a graph that holds none) holding t,
   named fresh after base; returns its name. One the export made before in
   this graph with the same dtype, shape and bytes is read again instead:
   the bounds, axes and steps that mappings write as inputs are written
   once per graph however many nodes read them. */
MGOPT__PRIVATE const char *mgopt__exp_const(mgopt__exp *E, const char *base, mgopt_tensor *t) {
  mgopt__exg *g = E->g;
  const mgopt__map_slot *sl;
  mgopt__map_slot *added;
  mgopt__exg_made *mk;
  const char *nm;
  uint64_t key;
  mgopt_onnx_tensor *ot;
  if (!t) return NULL;
  key = mgopt__map_hash_key(mgopt_tensor_hash(t));
  if (!g->by_content.alloc) mgopt__map_init_flags(&g->by_content, &E->p->alloc, MGOPT__MAP_HASHED);
  for (sl = mgopt__map_find(&g->by_content, key); sl; sl = mgopt__map_next(&g->by_content, sl)) {
    const mgopt__exg_made *d = (const mgopt__exg_made *)g->made.data + (sl->v.i - 1);
    if (mgopt_tensor_equal(d->t, t)) return d->name;
  }
  if (!(nm = mgopt__exp_fresh(E, base))) return NULL;
  if (g->inits_ok) {
    ot = (mgopt_onnx_tensor *)mgopt__exv_push(E, &g->inits, sizeof(mgopt_onnx_tensor));
    if (!ot || mgopt__exp_tensor(E, t, nm, ot)) return NULL;
  } else {
    mgopt_onnx_node *c = mgopt__exp_node(E, "Constant", "", NULL);
    mgopt_onnx_attribute *a;
    if (!c || !mgopt__exp_set_io(E, &c->outputs, &c->noutputs, &nm, 1)) return NULL;
    a = mgopt__exp_attr(E, c, "value", MGOPT_ONNX_ATTR_TENSOR);
    if (!a || !(a->t = (mgopt_onnx_tensor *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_tensor), 8)) ||
        mgopt__exp_tensor(E, t, "", a->t))
      return NULL;
  }
  mk = (mgopt__exg_made *)mgopt__exv_push(E, &g->made, sizeof(mgopt__exg_made));
  if (!mk || !(added = mgopt__map_add(&g->by_content, key))) return NULL;
  mk->t = t;
  mk->name = nm;
  added->v.i = g->made.n;
  return nm;
}

MGOPT__PRIVATE const char *mgopt__exp_vname(const mgopt_value *v) { return v ? (v->name ? v->name : "") : ""; }

/* Name of an integer list operand as int64: a constant is rewritten as an
   int64 constant, an int64 value used as is, other integers cast. */
MGOPT__PRIVATE const char *mgopt__exp_as_i64(mgopt__exp *E, mgopt_value *v) {
  mgopt_tensor *t = mgopt_value_const(v);
  if (t && mgopt_dtype_is_int((mgopt_dtype)t->dtype) && t->rank <= 1) {
    int64_t i, n = t->numel, *arr;
    if (t->dtype == MGOPT_DT_INT64 && t->rank == 1) return mgopt__exp_vname(v);
    arr = (int64_t *)mgopt_program_alloc(E->p, sizeof(int64_t) * (size_t)(n + 1), 8);
    if (!arr) return NULL;
    mgopt_tensor_data(E->p, t);
    for (i = 0; i < n; i++) arr[i] = mgopt_tensor_get_i64(t, i);
    return mgopt__exp_i64_const(E, mgopt__exp_vname(v), arr, n);
  }
  if (v->type.dtype == MGOPT_DT_INT64) return mgopt__exp_vname(v);
  {
    const char *out = mgopt__exp_fresh(E, mgopt__exp_vname(v));
    const char *in = mgopt__exp_vname(v);
    mgopt_onnx_node *n = mgopt__exp_node(E, "Cast", "", NULL);
    if (!n || !out || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, &in, 1) ||
        !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &out, 1) ||
        !mgopt__exp_aint(E, n, "to", MGOPT_ONNX_DT_INT64))
      return NULL;
    return out;
  }
}

/* Emits op_type with the given inputs and the op's outputs (named). */
MGOPT__PRIVATE mgopt_onnx_node *mgopt__exp_simple(mgopt__exp *E, const mgopt_op *op, const char *op_type,
                                          const char *const *ins, int64_t nin) {
  const char *local[64], **outs = local;
  int32_t i;
  mgopt_onnx_node *n;
  if (op->nouts > 64 && !(outs = (const char **)mgopt_program_alloc(E->p, sizeof(char *) * (size_t)op->nouts, 8))) return NULL;
  for (i = 0; i < op->nouts; i++) outs[i] = (op->outs[i]->flags & MGOPT_VALUE_ABSENT) ? "" : mgopt__exp_vname(op->outs[i]);
  n = mgopt__exp_node(E, op_type, "", op->name);
  if (!n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, ins, nin) ||
      !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, outs, op->nouts))
    return NULL;
  return n;
}

MGOPT__PRIVATE const char *mgopt__exp_in(const mgopt_op *op, const char *slot) {
  mgopt_value *v = mgopt_op_operand(op, slot);
  return v ? mgopt__exp_vname(v) : NULL;
}

/* A builder returned NULL: out of memory, unless a builder recorded another
   cause (a tensor of a dtype ONNX cannot hold, say), which stands. */
MGOPT__PRIVATE mgopt_status mgopt__exp_nomem(mgopt__exp *E) {
  if (E->cause) return E->cause;
  return mgopt__exp_fail(E, MGOPT_ERR_NOMEM, "out of memory");
}

MGOPT__PRIVATE mgopt_status mgopt__exp_unsupported(mgopt__exp *E, const mgopt_op *op, const char *why) {
  return mgopt__exp_fail(E, MGOPT_ERR_UNSUPPORTED, "cannot write op %s to ONNX opset %lld%s%s", op->type,
                         (long long)E->opset, why ? ": " : "", why ? why : "");
}

/* The mapping's status for a node it built (NULL: out of memory). */
MGOPT__PRIVATE mgopt_status mgopt__exp_done(mgopt__exp *E, const mgopt_onnx_node *n) {
  return n ? MGOPT_OK : mgopt__exp_nomem(E);
}

/* One-to-one ops: the row's ONNX op with the operand slots m->slots as its inputs. */
MGOPT__PRIVATE const char *mgopt__exw_direct(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  int k;
  MGOPT__UNUSED(p);
  for (k = 0; k < 3 && m->slots[k]; k++)
    if (!mgopt_op_operand(op, m->slots[k])) return "an operand is missing";
  return NULL;
}

MGOPT__PRIVATE mgopt_status mgopt__exp_direct(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[3];
  int64_t nin = 0;
  while (nin < 3 && m->slots[nin]) {
    ins[nin] = mgopt__exp_in(op, m->slots[nin]);
    nin++;
  }
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, nin));
}

/* 1 if the interned name was free (now claimed), 0 if taken, -1 on OOM. */
MGOPT__PRIVATE int mgopt__exp_claim(mgopt__exp *E, const char *name) {
  int added;
  if (!mgopt__map_get(&E->names, mgopt__map_ptr_key(name), &added)) return -1;
  return added;
}
/* src/onnx/map_elementwise.c — ONNX <-> canonical mappings of elementwise ops: unary math and activations (PRelu, LeakyRelu, Gelu), arithmetic, comparisons, logic, Where, Cast, Clip, Identity, Dropout. */

/* ---------------------------------------------------------------- unary */

/* 1 if v is a tensor of an integer dtype of 8 bits or more (ONNX's integer types). */
static int mgopt__imp_is_int(const mgopt_value *v) {
  int32_t dt = v && v->type.kind == MGOPT_TYPE_TENSOR ? v->type.dtype : (int32_t)MGOPT_DT_UNKNOWN;
  return dt == MGOPT_DT_INT8 || dt == MGOPT_DT_UINT8 || dt == MGOPT_DT_INT16 || dt == MGOPT_DT_UINT16 ||
         dt == MGOPT_DT_INT32 || dt == MGOPT_DT_UINT32 || dt == MGOPT_DT_INT64 || dt == MGOPT_DT_UINT64;
}

/* Unary elementwise on float tensors, to the row's canonical op. */
static int mgopt__imp_unary_float(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || mgopt__imp_nout(I->node) != 1) return 0;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x)) return -1;
  return mgopt__imp_done(I, op);
}

/* Log is log with epsilon 0 set: the canonical log adds its epsilon (1e-45
   by default, the smallest fp32 denormal) before the logarithm, which would
   turn log(0) = -inf into -103.28 and log(-denormal) = NaN into -inf; with
   epsilon 0, x + 0 is x for every x but -0 (+0, whose log is -inf too). */
static int mgopt__imp_log(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || mgopt__imp_nout(I->node) != 1) return 0;
  op = mgopt__imp_op(I, "log", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_float(op, "epsilon", 0.0)) return -1;
  return mgopt__imp_done(I, op);
}

/* log(x, epsilon) writes Log(x) when epsilon is 0 (or rounds to 0 in x's
   dtype), else Log(Add(x, epsilon)) with epsilon as a scalar of x's dtype:
   the value the canonical log computes, x + epsilon rounded to the dtype. */
static mgopt_status mgopt__exp_log(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *xv = mgopt_op_operand(op, "x");
  const char *x = mgopt__exp_vname(xv), *ins[2], *sum;
  mgopt_tensor *eps = mgopt_tensor_new_scalar_f64(E->p, (mgopt_dtype)xv->type.dtype, mgopt_op_get_float(op, "epsilon", 1e-45));
  mgopt_onnx_node *n;
  if (!eps) return mgopt__exp_nomem(E);
  if (mgopt_tensor_get_f64(eps, 0) == 0) return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, &x, 1));
  ins[0] = x;
  ins[1] = mgopt__exp_const(E, "log_epsilon", eps);
  sum = mgopt__exp_fresh(E, x);
  n = ins[1] && sum ? mgopt__exp_node(E, "Add", "", NULL) : NULL;
  if (!n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, ins, 2) ||
      !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &sum, 1))
    return mgopt__exp_nomem(E);
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, &sum, 1));
}

/* The epsilon of a log is added in x's dtype: a float dtype ONNX's Add takes. */
static const char *mgopt__exw_log(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  const char *why = mgopt__exw_direct(p, op, m);
  if (why) return why;
  return mgopt_dtype_is_float((mgopt_dtype)x->type.dtype) && x->type.dtype != MGOPT_DT_UNKNOWN ? NULL
                                                                                              : "log of a non-float";
}

static int mgopt__imp_not(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || x->type.dtype != MGOPT_DT_BOOL) return 0;
  op = mgopt__imp_op(I, "logical_not", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x)) return -1;
  return mgopt__imp_done(I, op);
}

static int mgopt__imp_leaky_relu(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x)) return 0;
  op = mgopt__imp_op(I, "leaky_relu", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) ||
      mgopt_op_set_float(op, "alpha", mgopt__imp_afloat(I->node, "alpha", (double)(float)0.01f)))
    return -1;
  return mgopt__imp_done(I, op);
}

static mgopt_status mgopt__exp_leaky_relu(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_afloat(E, n, "alpha", mgopt_op_get_float(op, "alpha", 0.01))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* prelu scales channel axis 1 by alpha (C,); PRelu broadcasts its slope from
   the trailing dims, so for a rank-r input (r > 2) the slope is written as
   (C, 1, ..., 1): a reshaped initializer for a constant alpha, else a Reshape. */
static const char *mgopt__exw_prelu(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *a = mgopt_op_operand(op, "alpha");
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x || !a) return "an operand is missing";
  if (x->type.rank < 1 || x->type.rank > MGOPT_MAX_RANK) return "an input of unknown rank";
  if (a->type.rank != 1) return "alpha is not 1-d";
  return NULL;
}

static mgopt_status mgopt__exp_prelu(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *a = mgopt_op_operand(op, "alpha");
  int32_t r = x->type.rank, i;
  const char *ins[2];
  ins[0] = mgopt__exp_vname(x);
  ins[1] = mgopt__exp_vname(a);
  if (r > 2) {
    mgopt_tensor *t = mgopt_value_const(a);
    int64_t shape[MGOPT_MAX_RANK];
    shape[0] = t ? t->numel : -1;
    for (i = 1; i < r - 1; i++) shape[i] = 1;
    if (t && t->rank == 1 && mgopt_dtype_is_float((mgopt_dtype)t->dtype)) {
      mgopt_tensor *nt = mgopt_tensor_new(E->p, (mgopt_dtype)t->dtype, r - 1, shape);
      if (!nt) return mgopt__exp_nomem(E);
      if (t->nbytes) memcpy(nt->data, t->data, t->nbytes);
      ins[1] = mgopt__exp_const(E, ins[1], nt);
    } else {
      const char *sh = mgopt__exp_i64_const(E, "prelu_shape", shape, r - 1), *out = mgopt__exp_fresh(E, ins[1]);
      mgopt_onnx_node *n = mgopt__exp_node(E, "Reshape", "", NULL);
      const char *rin[2];
      rin[0] = ins[1];
      rin[1] = sh;
      if (!sh || !out || !n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, rin, 2) ||
          !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &out, 1))
        return mgopt__exp_nomem(E);
      ins[1] = out;
    }
    if (!ins[1]) return mgopt__exp_nomem(E);
  }
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 2));
}

/* bias_add as Add (opset 7 on: multidirectional broadcast): the bias goes
   out with shape [C, 1, ..., 1] of rank r - axis so that it lines up with x's
   axis; a constant bias as a reshaped initializer, a run-time one through a
   Reshape node. */
static const char *mgopt__exw_bias_add(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *b = mgopt_op_operand(op, "bias");
  int64_t axis = mgopt_op_get_int(op, "axis", 1);
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x || !b) return "an operand is missing";
  if (x->type.rank < 1 || x->type.rank > MGOPT_MAX_RANK) return "an input of unknown rank";
  if (axis < -(int64_t)x->type.rank || axis >= (int64_t)x->type.rank) return "axis out of range";
  if (b->type.rank != 1) return "bias is not 1-d";
  return NULL;
}

static mgopt_status mgopt__exp_bias_add(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *b = mgopt_op_operand(op, "bias");
  int32_t r = x->type.rank, i, n;
  int64_t axis = mgopt_op_get_int(op, "axis", 1), shape[MGOPT_MAX_RANK];
  mgopt_tensor *t = mgopt_value_const(b);
  const char *ins[2];
  if (axis < 0) axis += r;
  n = r - (int32_t)axis;
  ins[0] = mgopt__exp_vname(x);
  ins[1] = mgopt__exp_vname(b);
  shape[0] = t ? t->numel : -1;
  for (i = 1; i < n; i++) shape[i] = 1;
  if (n > 1 && t && t->rank == 1 && t->dtype != MGOPT_DT_STRING && mgopt_dtype_bits((mgopt_dtype)t->dtype) % 8 == 0) {
    mgopt_tensor *nt = mgopt_tensor_new(E->p, (mgopt_dtype)t->dtype, n, shape);
    if (!nt) return mgopt__exp_nomem(E);
    if (t->nbytes) memcpy(nt->data, mgopt_tensor_data(E->p, t), t->nbytes);
    ins[1] = mgopt__exp_const(E, ins[1], nt);
  } else if (n > 1) {
    const char *sh = mgopt__exp_i64_const(E, "bias_shape", shape, n), *out = mgopt__exp_fresh(E, ins[1]);
    mgopt_onnx_node *rn = mgopt__exp_node(E, "Reshape", "", NULL);
    const char *rin[2];
    rin[0] = ins[1];
    rin[1] = sh;
    if (!sh || !out || !rn || !mgopt__exp_set_io(E, &rn->inputs, &rn->ninputs, rin, 2) ||
        !mgopt__exp_set_io(E, &rn->outputs, &rn->noutputs, &out, 1))
      return mgopt__exp_nomem(E);
    ins[1] = out;
  }
  if (!ins[1]) return mgopt__exp_nomem(E);
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 2));
}

/* PRelu as prelu: the slope must vary along x's axis 1 alone. From opset 7
   the slope broadcasts from the trailing dims (unidirectionally): exact when,
   right-aligned, each of its dims is 1 but the one over axis 1, which is 1 or
   C. Before opset 7 a slope of one value is shared by every channel, and a
   1-d slope of C values is per channel (what the exporters of that time wrote);
   a 1-d slope that could also mean the last axis (last dim C, rank > 2) stays
   opaque. A constant slope becomes prelu's alpha (C,); a run-time one only
   when it has that shape already. */
static int mgopt__imp_prelu(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *s = mgopt__imp_in(I, 1), *alpha = s;
  int r = mgopt__imp_rank(x), rs = mgopt__imp_rank(s), j;
  mgopt_tensor *t = s ? mgopt_value_const(s) : NULL;
  int64_t C, i;
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || !s || s->type.dtype != x->type.dtype || r < 2 || r > MGOPT_MAX_RANK || rs < 0 || rs > r)
    return 0;
  if (!mgopt_dim_is_static(x->type.dims[1]) || x->type.dims[1].v < 1 || x->type.dims[1].v > ((int64_t)1 << 24)) return 0;
  C = x->type.dims[1].v;
  if (m->since >= 7) {
    for (j = 0; j < rs; j++) {
      mgopt_dim d = s->type.dims[j];
      int axis = r - rs + j;
      if (!mgopt_dim_is_static(d) || (d.v != 1 && (axis != 1 || d.v != C))) return 0;
    }
  } else {
    int64_t n = mgopt_type_numel(&s->type);
    if (n != 1) {
      mgopt_dim last = x->type.dims[r - 1];
      if (rs != 1 || n != C || (r > 2 && (!mgopt_dim_is_static(last) || last.v == C))) return 0;
    }
  }
  if (!(rs == 1 && mgopt_dim_is_static(s->type.dims[0]) && s->type.dims[0].v == C && (r == 2 || m->since < 7))) {
    mgopt_tensor *a;
    char buf[160];
    if (!t || t->numel < 1) return 0;
    a = mgopt_tensor_new(I->p, (mgopt_dtype)x->type.dtype, 1, &C);
    if (!a || !mgopt_tensor_data(I->p, t)) return -1;
    for (i = 0; i < C; i++) mgopt_tensor_set_f64(a, i, mgopt_tensor_get_f64(t, t->numel == 1 ? 0 : i));
    snprintf(buf, sizeof buf, "%.100s_alpha", mgopt__imp_intern(I, I->node->outputs[0]));
    alpha = mgopt_build_const(I->p, I->b, NULL, mgopt_program_fresh_name(I->p, buf), a);
    if (!alpha) return -1;
  }
  op = mgopt__imp_op(I, "prelu", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "alpha", alpha)) return -1;
  return mgopt__imp_done(I, op);
}

/* Before opset 7 the slope is written as prelu's alpha (C,), which that
   PRelu reads per channel where it cannot mean the last axis. */
static const char *mgopt__exw_prelu_v1(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *a = mgopt_op_operand(op, "alpha");
  int32_t r;
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x || !a) return "an operand is missing";
  r = x->type.rank;
  if (r < 2 || r > MGOPT_MAX_RANK || a->type.rank != 1 || !mgopt_dim_is_static(x->type.dims[1])) return "an input of unknown rank";
  if (r > 2 && x->type.dims[1].v != 1 && (!mgopt_dim_is_static(x->type.dims[r - 1]) || x->type.dims[r - 1].v == x->type.dims[1].v))
    return "a per-channel slope that PRelu before opset 7 reads ambiguously";
  return NULL;
}

static mgopt_status mgopt__exp_prelu_v1(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_in(op, "alpha");
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 2));
}

static int mgopt__imp_gelu(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  int tanh_mode = mgopt__imp_astr(I->node, "approximate", "tanh");
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || (!tanh_mode && mgopt__imp_attr(I->node, "approximate") &&
                                  !mgopt__imp_astr(I->node, "approximate", "none")))
    return 0;
  op = mgopt__imp_op(I, "gelu", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) ||
      mgopt_op_set_string(op, "mode", tanh_mode ? "TANH_APPROXIMATION" : "EXACT"))
    return -1;
  return mgopt__imp_done(I, op);
}

/* Gelu holds the exact form and the tanh approximation, not the sigmoid one. */
static const char *mgopt__exw_gelu(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *mode = mgopt_op_get_string(op, "mode", NULL);
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (mode && strcmp(mode, "EXACT") != 0 && strcmp(mode, "TANH_APPROXIMATION") != 0) return "this gelu mode";
  return NULL;
}

static mgopt_status mgopt__exp_gelu(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  size_t len = 0;
  const char *mode = mgopt_op_get_string(op, "mode", &len);
  mgopt_onnx_node *n;
  n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || (mode && strcmp(mode, "TANH_APPROXIMATION") == 0 && !mgopt__exp_astr(E, n, "approximate", "tanh")))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* Sign on floats and on integers of 8 bits or more (ONNX's numeric types). */
static int mgopt__imp_sign(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || mgopt__imp_nout(I->node) != 1 || (!mgopt__imp_is_float(x) && !mgopt__imp_is_int(x))) return 0;
  op = mgopt__imp_op(I, "sign", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x)) return -1;
  return mgopt__imp_done(I, op);
}

/* Elu-6 on: elu(x, alpha), alpha 1 by default in both. */
static int mgopt__imp_elu(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || mgopt__imp_nout(I->node) != 1) return 0;
  op = mgopt__imp_op(I, "elu", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_float(op, "alpha", mgopt__imp_afloat(I->node, "alpha", 1.0)))
    return -1;
  return mgopt__imp_done(I, op);
}

static mgopt_status mgopt__exp_elu(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_afloat(E, n, "alpha", mgopt_op_get_float(op, "alpha", 1.0))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* HardSigmoid-6 on: sigmoid_hard(x, alpha, beta) = min(max(alpha * x + beta, 0), 1), defaults 0.2 and 0.5. */
static int mgopt__imp_hard_sigmoid(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || mgopt__imp_nout(I->node) != 1) return 0;
  op = mgopt__imp_op(I, "sigmoid_hard", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) ||
      mgopt_op_set_float(op, "alpha", mgopt__imp_afloat(I->node, "alpha", (double)(float)0.2f)) ||
      mgopt_op_set_float(op, "beta", mgopt__imp_afloat(I->node, "beta", (double)(float)0.5f)))
    return -1;
  return mgopt__imp_done(I, op);
}

static mgopt_status mgopt__exp_hard_sigmoid(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_afloat(E, n, "alpha", mgopt_op_get_float(op, "alpha", 0.2)) ||
      !mgopt__exp_afloat(E, n, "beta", mgopt_op_get_float(op, "beta", 0.5)))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ThresholdedRelu keeps x where x > alpha, thresholded_relu where x >= alpha:
   on fp32, x > a exactly when x >= the next float above a, so the import
   writes that threshold and the export the float below it. Other dtypes (the
   comparison's dtype is not pinned down) and a NaN or +inf alpha stay opaque. */
static int mgopt__imp_thresholded_relu(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  float a = (float)mgopt__imp_afloat(I->node, "alpha", 1.0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR || x->type.dtype != MGOPT_DT_FP32 || mgopt__imp_nout(I->node) != 1)
    return 0;
  if (a != a || a == HUGE_VALF) return 0;
  op = mgopt__imp_op(I, "thresholded_relu", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_float(op, "alpha", (double)nextafterf(a, HUGE_VALF)))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_thresholded_relu(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  float a = (float)mgopt_op_get_float(op, "alpha", 1.0);
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x) return "an operand is missing";
  if (x->type.dtype != MGOPT_DT_FP32) return "ThresholdedRelu's threshold is exact on fp32 only";
  if (a != a || a == -HUGE_VALF) return "a NaN or -inf alpha";
  return NULL;
}

static mgopt_status mgopt__exp_thresholded_relu(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  float a = (float)mgopt_op_get_float(op, "alpha", 1.0);
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_afloat(E, n, "alpha", (double)nextafterf(a, -HUGE_VALF))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* A scalar constant of dtype dt holding v, for the node being imported. */
static mgopt_value *mgopt__imp_scalar(mgopt__imp *I, const char *what, mgopt_dtype dt, double v) {
  char buf[160];
  const char *nm;
  mgopt_tensor *t = mgopt_tensor_new_scalar_f64(I->p, dt, v);
  snprintf(buf, sizeof buf, "%.100s_%s",
           I->node->noutputs && I->node->outputs[0].len ? mgopt__imp_intern(I, I->node->outputs[0]) : "const", what);
  nm = mgopt_program_fresh_name(I->p, buf);
  return t && nm ? mgopt_build_const(I->p, I->b, NULL, nm, t) : NULL;
}

/* Neg is mul(x, -1): exact for floats (a sign flip, NaN stays NaN) and for
   signed integers (two's complement: -INT_MIN wraps to INT_MIN both ways).
   ONNX defines Neg on floats and signed integers only. */
static int mgopt__imp_neg(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *c;
  mgopt_dtype dt;
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || mgopt__imp_nout(I->node) != 1) return 0;
  dt = (mgopt_dtype)x->type.dtype;
  if (!mgopt__imp_is_float(x) && dt != MGOPT_DT_INT8 && dt != MGOPT_DT_INT16 && dt != MGOPT_DT_INT32 &&
      dt != MGOPT_DT_INT64)
    return 0;
  c = mgopt__imp_scalar(I, "neg", dt, -1.0);
  op = c ? mgopt__imp_op(I, "mul", 1, 0) : NULL;
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "y", c)) return -1;
  return mgopt__imp_done(I, op);
}

/* Reciprocal is real_div(1, x) on floats: one correctly rounded division, as
   ONNX's 1/x (the canonical inverse adds an epsilon, so it is not used). */
static int mgopt__imp_reciprocal(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *c;
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || mgopt__imp_nout(I->node) != 1) return 0;
  c = mgopt__imp_scalar(I, "one", (mgopt_dtype)x->type.dtype, 1.0);
  op = c ? mgopt__imp_op(I, "real_div", 1, 0) : NULL;
  if (!op || mgopt_op_set_operand(op, "x", c) || mgopt_op_set_operand(op, "y", x)) return -1;
  return mgopt__imp_done(I, op);
}

/* ---------------------------------------------------------------- binary */

/* Binary elementwise: same dtypes on both sides, one output. */
static int mgopt__imp_binary_like(mgopt__imp *I, const mgopt__onnx_map *m, int float_only) {
  mgopt_value *x = mgopt__imp_in(I, 0), *y = mgopt__imp_in(I, 1);
  mgopt_op *op;
  if (!x || !y || mgopt__imp_nin(I->node) != 2 || mgopt__imp_nout(I->node) != 1) return 0;
  if (!mgopt__imp_known_dtype(x) || x->type.dtype != y->type.dtype) return 0;
  if (float_only && !mgopt__imp_is_float(x)) return 0;
  if (x->type.dtype == MGOPT_DT_STRING || x->type.dtype == MGOPT_DT_BOOL) return 0;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "y", y)) return -1;
  return mgopt__imp_done(I, op);
}
static int mgopt__imp_binary(mgopt__imp *I, const mgopt__onnx_map *m) { return mgopt__imp_binary_like(I, m, 0); }
/* integer Div truncates, Pow/Max/Min of integers differ in corner cases: float only */
static int mgopt__imp_binary_float(mgopt__imp *I, const mgopt__onnx_map *m) { return mgopt__imp_binary_like(I, m, 1); }

/* Max and Min of two inputs: every numeric dtype from opset 12, floats before. */
static int mgopt__imp_max_min(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  if (I->opset < 12 && !mgopt__imp_is_float(x)) return 0;
  return mgopt__imp_binary_like(I, m, 0);
}

/* Mod with fmod 0 on integers is mod (the remainder takes the divisor's sign,
   as floor division leaves it). fmod 1 (C's fmod, the dividend's sign) and
   floats (which ONNX allows with fmod 1 only) stay opaque. */
static int mgopt__imp_mod(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  if (!mgopt__imp_is_int(x) || mgopt__imp_aint(I->node, "fmod", 0) != 0) return 0;
  return mgopt__imp_binary_like(I, m, 0);
}

/* mod writes Mod on integers only (ONNX's float Mod is fmod). */
static const char *mgopt__exw_mod(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  const char *why = mgopt__exw_direct(p, op, m);
  if (why) return why;
  return mgopt__imp_is_int(x) ? NULL : "mod of floats (ONNX's float Mod is C's fmod)";
}

/* 1 if ONNX's Pow-12 on takes dtype dt for its base (T) or, with exponent set, its exponent (T1). */
static int mgopt__onnx_pow_dtype(int32_t dt, int exponent) {
  if (dt == MGOPT_DT_INT32 || dt == MGOPT_DT_INT64 || dt == MGOPT_DT_FP16 || dt == MGOPT_DT_FP32 ||
      dt == MGOPT_DT_FP64)
    return 1;
  return exponent && (dt == MGOPT_DT_INT8 || dt == MGOPT_DT_INT16 || dt == MGOPT_DT_UINT8 || dt == MGOPT_DT_UINT16 ||
                      dt == MGOPT_DT_UINT32 || dt == MGOPT_DT_UINT64);
}

/* Pow-12 on: pow(x, y) keeps the base's dtype, the exponent may have another. */
static int mgopt__imp_pow(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *y = mgopt__imp_in(I, 1);
  mgopt_op *op;
  if (!x || !y || mgopt__imp_nin(I->node) != 2 || mgopt__imp_nout(I->node) != 1) return 0;
  if (!mgopt__imp_known_dtype(x) || !mgopt__imp_known_dtype(y) || !mgopt__onnx_pow_dtype(x->type.dtype, 0) ||
      !mgopt__onnx_pow_dtype(y->type.dtype, 1))
    return 0;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "y", y)) return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_pow(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y");
  const char *why = mgopt__exw_direct(p, op, m);
  if (why) return why;
  if (m->since < 12 && (x->type.dtype != y->type.dtype || !mgopt__imp_is_float(x)))
    return "Pow before opset 12 takes one float dtype";
  if (!mgopt__onnx_pow_dtype(x->type.dtype, 0) || !mgopt__onnx_pow_dtype(y->type.dtype, 1)) return "these dtypes";
  return NULL;
}

/* Max and Min before opset 12 take floats only. */
static const char *mgopt__exw_max_min(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *why = mgopt__exw_direct(p, op, m);
  if (why) return why;
  return m->since < 12 && !mgopt__imp_is_float(mgopt_op_operand(op, "x")) ? "integer Max / Min before opset 12" : NULL;
}

/* 1 if v is a constant whose every element is `want` and that does not
   broaden `out` when broadcast against `x` (out has x's type). */
static int mgopt__exp_scalar_is(const mgopt_value *v, const mgopt_value *x, const mgopt_value *out, double want) {
  mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
  if (!t || t->numel != 1 || !x || !out || t->rank > x->type.rank || !mgopt_type_equal(&x->type, &out->type)) return 0;
  return mgopt_tensor_get_f64(t, 0) == want;
}

/* 1 if ONNX's Neg and Reciprocal take this dtype (Reciprocal: floats only). */
static int mgopt__exp_neg_dtype(int32_t dt, int floats_only) {
  if (dt == MGOPT_DT_FP16 || dt == MGOPT_DT_FP32 || dt == MGOPT_DT_FP64) return 1;
  return !floats_only && (dt == MGOPT_DT_INT8 || dt == MGOPT_DT_INT16 || dt == MGOPT_DT_INT32 || dt == MGOPT_DT_INT64);
}

/* The operand that mul(x, -1) or real_div(1, x) writes as ONNX Neg or
   Reciprocal, NULL when op is written as Mul or Div. The constant (-1 or 1)
   is then not read by the written node. */
MGOPT__PRIVATE mgopt_value *mgopt__exp_unary_form(const mgopt_op *op, int64_t opset) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y"), *out = op->nouts ? op->outs[0] : NULL;
  if (!x || !y) return NULL;
  if (op->kind == MGOPT_OP_mul && opset >= 6 && mgopt__exp_neg_dtype(x->type.dtype, 0)) {
    if (mgopt__exp_scalar_is(y, x, out, -1.0)) return x;
    if (mgopt__exp_scalar_is(x, y, out, -1.0)) return y;
  }
  if (op->kind == MGOPT_OP_real_div && mgopt__exp_neg_dtype(y->type.dtype, 1) && mgopt__exp_scalar_is(x, y, out, 1.0))
    return y;
  return NULL;
}

/* mul(x, -1) (either order) writes Neg, real_div(1, x) Reciprocal, the rest Mul and Div. */
static mgopt_status mgopt__exp_mul_div(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *v = mgopt__exp_unary_form(op, E->opset);
  const char *in;
  if (!v) return mgopt__exp_direct(E, op, m);
  in = mgopt__exp_vname(v);
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, op->kind == MGOPT_OP_mul ? "Neg" : "Reciprocal", &in, 1));
}

static int mgopt__imp_compare(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *y = mgopt__imp_in(I, 1);
  mgopt_op *op;
  if (!x || !y || mgopt__imp_nout(I->node) != 1 || !mgopt__imp_known_dtype(x) || x->type.dtype != y->type.dtype)
    return 0;
  if (x->type.dtype == MGOPT_DT_STRING) return 0;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "y", y)) return -1;
  return mgopt__imp_done(I, op);
}

static int mgopt__imp_logical(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *y = mgopt__imp_in(I, 1);
  mgopt_op *op;
  if (!x || !y || x->type.dtype != MGOPT_DT_BOOL || y->type.dtype != MGOPT_DT_BOOL) return 0;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "y", y)) return -1;
  return mgopt__imp_done(I, op);
}

static int mgopt__imp_where(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *c = mgopt__imp_in(I, 0), *a = mgopt__imp_in(I, 1), *b = mgopt__imp_in(I, 2);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!c || !a || !b || c->type.dtype != MGOPT_DT_BOOL || !mgopt__imp_known_dtype(a) || a->type.dtype != b->type.dtype)
    return 0;
  op = mgopt__imp_op(I, "select", 1, 0);
  if (!op || mgopt_op_set_operand(op, "cond", c) || mgopt_op_set_operand(op, "a", a) ||
      mgopt_op_set_operand(op, "b", b))
    return -1;
  return mgopt__imp_done(I, op);
}

/* ---------------------------------------------------------------- Identity, Dropout */

static int mgopt__imp_identity(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  MGOPT__UNUSED(m);
  if (!mgopt__imp_forwardable(I, x) || mgopt__imp_nout(I->node) != 1) return 0;
  return mgopt__imp_forward(I, x) ? -1 : 1;
}

/* Dropout at inference: output 0 is the input when training is off and the mask is not asked for. */
static int mgopt__imp_dropout(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *train = mgopt__imp_in(I, 2);
  MGOPT__UNUSED(m);
  if (!mgopt__imp_forwardable(I, x) || mgopt__imp_nout(I->node) != 1) return 0;
  if (train) {
    mgopt_tensor *t = mgopt_value_const(train);
    if (!t || t->numel != 1 || mgopt_tensor_get_i64(t, 0) != 0) return 0;
  }
  return mgopt__imp_forward(I, x) ? -1 : 1;
}

/* Dropout-1 and -6: is_test 0 means training. */
static int mgopt__imp_dropout_v1(mgopt__imp *I, const mgopt__onnx_map *m) {
  return mgopt__imp_aint(I->node, "is_test", 1) == 0 ? 0 : mgopt__imp_dropout(I, m);
}

/* ---------------------------------------------------------------- Clip */

/* clip(x, alpha=lo, beta=hi) when the bounds are in order (min > max, or NaN, is defined differently). */
static int mgopt__imp_clip_to(mgopt__imp *I, mgopt_value *x, double lo, double hi) {
  mgopt_op *op;
  if (!(lo <= hi)) return 0;
  op = mgopt__imp_op(I, "clip", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_float(op, "alpha", lo) ||
      mgopt_op_set_float(op, "beta", hi))
    return -1;
  return mgopt__imp_done(I, op);
}

static int mgopt__imp_clip_float(const mgopt_value *x) {
  return x && (x->type.dtype == MGOPT_DT_FP32 || x->type.dtype == MGOPT_DT_FP16);
}

/* 1 if bound v of an integer clip is written exactly as an element of dtype dt (or is no bound). */
static int mgopt__clip_int_bound(double v, int32_t dt) {
  int64_t lo, hi;
  if (v == HUGE_VAL || v == -HUGE_VAL) return 1;
  if (v != floor(v) || !(fabs(v) <= 9007199254740992.0)) return 0;
  switch (dt) {
    case MGOPT_DT_INT8: lo = -128; hi = 127; break;
    case MGOPT_DT_UINT8: lo = 0; hi = 255; break;
    case MGOPT_DT_INT16: lo = -32768; hi = 32767; break;
    case MGOPT_DT_UINT16: lo = 0; hi = 65535; break;
    case MGOPT_DT_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
    case MGOPT_DT_UINT32: lo = 0; hi = (int64_t)UINT32_MAX; break;
    case MGOPT_DT_UINT64: lo = 0; hi = INT64_MAX; break;
    default: lo = INT64_MIN; hi = INT64_MAX; break;
  }
  return v >= (double)lo && v <= (double)hi;
}

/* Clip takes integers from opset 12 on; an integer clip's bounds must be whole numbers of its dtype. */
static const char *mgopt__exw_clip(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  MGOPT__UNUSED(p);
  if (!x) return "an operand is missing";
  if (!mgopt__imp_is_int(x)) return NULL;
  if (m->since < 12) return "integer Clip before opset 12";
  if (!mgopt__clip_int_bound(mgopt_op_get_float(op, "alpha", -HUGE_VAL), x->type.dtype) ||
      !mgopt__clip_int_bound(mgopt_op_get_float(op, "beta", HUGE_VAL), x->type.dtype))
    return "a bound that is not a value of the dtype";
  return NULL;
}

/* An absent Clip bound is the dtype's lowest / largest finite value (Clip-6:
   the float attribute's default, +-3.402823e+38; from Clip-11: the input
   dtype's numeric_limits lowest() / max()), so Clip(+inf) with no max is the
   largest finite value, not +inf. For integers that bound clamps nothing, as
   clip's -inf / +inf does. */
static double mgopt__clip_limit(int32_t dt, int hi) {
  double v = dt == MGOPT_DT_FP16   ? 65504.0
             : dt == MGOPT_DT_BF16 ? 3.3895313892515355e+38
             : dt == MGOPT_DT_FP32 ? 3.4028234663852886e+38
             : dt == MGOPT_DT_FP64 ? 1.7976931348623157e+308
                                   : HUGE_VAL;
  return hi ? v : -v;
}

/* Clip-6: min and max are attributes, +-3.402823e+38 by default. */
static int mgopt__imp_clip_v6(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  MGOPT__UNUSED(m);
  if (!mgopt__imp_clip_float(x)) return 0;
  return mgopt__imp_clip_to(I, x, mgopt__imp_afloat(I->node, "min", mgopt__clip_limit(MGOPT_DT_FP32, 0)),
                            mgopt__imp_afloat(I->node, "max", mgopt__clip_limit(MGOPT_DT_FP32, 1)));
}

/* A bound is left out where it is the attribute's default; an infinite one is written. */
static mgopt_status mgopt__exp_clip_v6(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  double lo = mgopt_op_get_float(op, "alpha", -HUGE_VAL), hi = mgopt_op_get_float(op, "beta", HUGE_VAL);
  const char *x = mgopt__exp_in(op, "x");
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n) return mgopt__exp_nomem(E);
  if (lo != mgopt__clip_limit(MGOPT_DT_FP32, 0) && !mgopt__exp_afloat(E, n, "min", lo)) return mgopt__exp_nomem(E);
  if (hi != mgopt__clip_limit(MGOPT_DT_FP32, 1) && !mgopt__exp_afloat(E, n, "max", hi)) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* Clip-11 on: min and max are optional constant inputs. */
static int mgopt__imp_clip_v11(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *a = mgopt__imp_in(I, 1), *b = mgopt__imp_in(I, 2);
  mgopt_tensor *ta = a ? mgopt_value_const(a) : NULL, *tb = b ? mgopt_value_const(b) : NULL;
  double lo, hi;
  int is_int = I->opset >= 12 && mgopt__imp_is_int(x);
  MGOPT__UNUSED(m);
  if (!mgopt__imp_clip_float(x) && !is_int) return 0;
  lo = mgopt__clip_limit(x->type.dtype, 0);
  hi = mgopt__clip_limit(x->type.dtype, 1);
  if ((a && (!ta || ta->numel != 1)) || (b && (!tb || tb->numel != 1))) return 0;
  if (ta) lo = mgopt_tensor_get_f64(ta, 0);
  if (tb) hi = mgopt_tensor_get_f64(tb, 0);
  /* integer bounds are held as doubles: exact up to 2^53 */
  if (is_int && ((ta && (double)mgopt_tensor_get_i64(ta, 0) != lo) || (tb && (double)mgopt_tensor_get_i64(tb, 0) != hi) ||
                 !mgopt__clip_int_bound(lo, x->type.dtype) || !mgopt__clip_int_bound(hi, x->type.dtype)))
    return 0;
  return mgopt__imp_clip_to(I, x, lo, hi);
}

static mgopt_status mgopt__exp_clip_v11(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  double lo = mgopt_op_get_float(op, "alpha", -HUGE_VAL), hi = mgopt_op_get_float(op, "beta", HUGE_VAL);
  mgopt_dtype dt = (mgopt_dtype)op->outs[0]->type.dtype;
  const char *ins[3];
  int j;
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = ins[2] = "";
  /* a bound is left out where it is the dtype's limit (what an absent one means); an infinite one is written */
  for (j = 0; j < 2; j++) {
    if ((j ? hi : lo) == mgopt__clip_limit(dt, j)) continue;
    ins[1 + j] = mgopt__exp_const(E, j ? "clip_max" : "clip_min",
                                         mgopt_tensor_new_scalar_f64(E->p, dt, j ? hi : lo));
    if (!ins[1 + j]) return mgopt__exp_nomem(E);
  }
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, *ins[2] ? 3 : *ins[1] ? 2 : 1));
}

/* ---------------------------------------------------------------- Cast */

static int mgopt__imp_cast(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  mgopt_dtype to = mgopt_onnx_dtype((int32_t)mgopt__imp_aint(I->node, "to", 0));
  mgopt_op *op;
  static const mgopt_dtype ok[] = {MGOPT_DT_BOOL,  MGOPT_DT_INT8,   MGOPT_DT_UINT8, MGOPT_DT_INT16,
                                   MGOPT_DT_UINT16, MGOPT_DT_INT32, MGOPT_DT_INT64, MGOPT_DT_FP16,
                                   MGOPT_DT_FP32,  MGOPT_DT_FP64};
  int i, good_to = 0, good_from = 0;
  MGOPT__UNUSED(m);
  if (!x || mgopt__imp_attr(I->node, "saturate")) return 0;
  for (i = 0; i < (int)(sizeof ok / sizeof ok[0]); i++) {
    if (ok[i] == to) good_to = 1;
    if (ok[i] == (mgopt_dtype)x->type.dtype) good_from = 1;
  }
  if (!good_to || !good_from) return 0;
  op = mgopt__imp_op(I, "cast", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_string(op, "dtype", mgopt_dtype_name(to))) return -1;
  return mgopt__imp_done(I, op);
}

static int32_t mgopt__exp_cast_to(const mgopt_op *op) {
  size_t len = 0;
  const char *to = mgopt_op_get_string(op, "dtype", &len);
  return to ? mgopt__exp_dtype(mgopt_dtype_from_name(to, len)) : 0;
}

static const char *mgopt__exw_cast(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt__exp_cast_to(op) ? NULL : "unknown target dtype";
}

static mgopt_status mgopt__exp_cast(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  int32_t dt = mgopt__exp_cast_to(op);
  mgopt_onnx_node *n;
  n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_aint(E, n, "to", dt)) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- the table */

#define MGOPT__MAP_UNARY(onnx, kind) MGOPT__MAP_UNARY_SINCE(onnx, 1, kind)
#define MGOPT__MAP_UNARY_SINCE(onnx, since, kind) \
  {onnx, since, 0, kind, mgopt__imp_unary_float, mgopt__exp_direct, {"x", NULL, NULL}, mgopt__exw_direct}
#define MGOPT__MAP_XY(onnx, kind, imp) {onnx, 1, 0, kind, imp, mgopt__exp_direct, {"x", "y", NULL}, mgopt__exw_direct}

static const mgopt__onnx_map mgopt__onnx_elementwise[] = {
    MGOPT__MAP_UNARY("Abs", MGOPT_OP_abs),
    MGOPT__MAP_UNARY("Ceil", MGOPT_OP_ceil),
    MGOPT__MAP_UNARY("Cos", MGOPT_OP_cos),
    MGOPT__MAP_UNARY("Erf", MGOPT_OP_erf),
    MGOPT__MAP_UNARY("Exp", MGOPT_OP_exp),
    MGOPT__MAP_UNARY("Floor", MGOPT_OP_floor),
    {"Log", 1, 0, MGOPT_OP_log, mgopt__imp_log, mgopt__exp_log, {"x", NULL, NULL}, mgopt__exw_log},
    MGOPT__MAP_UNARY("Relu", MGOPT_OP_relu),
    MGOPT__MAP_UNARY("Sigmoid", MGOPT_OP_sigmoid),
    MGOPT__MAP_UNARY("Sin", MGOPT_OP_sin),
    MGOPT__MAP_UNARY("Sqrt", MGOPT_OP_sqrt),
    MGOPT__MAP_UNARY("Tanh", MGOPT_OP_tanh),
    MGOPT__MAP_UNARY("Softplus", MGOPT_OP_softplus),
    MGOPT__MAP_UNARY_SINCE("Acos", 7, MGOPT_OP_acos),
    MGOPT__MAP_UNARY_SINCE("Asin", 7, MGOPT_OP_asin),
    MGOPT__MAP_UNARY_SINCE("Atan", 7, MGOPT_OP_atan),
    MGOPT__MAP_UNARY_SINCE("Tan", 7, MGOPT_OP_tan),
    MGOPT__MAP_UNARY_SINCE("Atanh", 9, MGOPT_OP_atanh),
    MGOPT__MAP_UNARY_SINCE("Cosh", 9, MGOPT_OP_cosh),
    MGOPT__MAP_UNARY_SINCE("Sinh", 9, MGOPT_OP_sinh),
    MGOPT__MAP_UNARY("Softsign", MGOPT_OP_softsign),
    /* HardSigmoid-1 has the legacy consumed_inputs attribute */
    {"HardSigmoid", 6, 0, MGOPT_OP_sigmoid_hard, mgopt__imp_hard_sigmoid, mgopt__exp_hard_sigmoid, {NULL, NULL, NULL}, NULL},
    {"ThresholdedRelu", 10, 0, MGOPT_OP_thresholded_relu, mgopt__imp_thresholded_relu, mgopt__exp_thresholded_relu,
     {NULL, NULL, NULL}, mgopt__exw_thresholded_relu},
    /* Elu-1 has the legacy consumed_inputs attribute */
    {"Elu", 6, 0, MGOPT_OP_elu, mgopt__imp_elu, mgopt__exp_elu, {NULL, NULL, NULL}, NULL},
    /* decompositions, read only (mul and real_div write Mul and Div); Reciprocal from opset 7, where
       Mul and Div broadcast; Neg from opset 6 (Neg-1 has consumed_inputs), where mul(x, -1) writes Neg */
    {"Neg", 6, 0, MGOPT_OP_mul, mgopt__imp_neg, NULL, {NULL, NULL, NULL}, NULL},
    {"Reciprocal", 7, 0, MGOPT_OP_real_div, mgopt__imp_reciprocal, NULL, {NULL, NULL, NULL}, NULL},
    {"Sign", 1, 0, MGOPT_OP_sign, mgopt__imp_sign, mgopt__exp_direct, {"x", NULL, NULL}, mgopt__exw_direct},
    /* Round (opset 11 on) rounds half to even, as round does */
    MGOPT__MAP_UNARY("Round", MGOPT_OP_round),
    {"Not", 1, 0, MGOPT_OP_logical_not, mgopt__imp_not, mgopt__exp_direct, {"x", NULL, NULL}, mgopt__exw_direct},
    /* PRelu broadcasts its slope from opset 7 on; earlier, a single value or one per channel */
    {"PRelu", 1, 6, MGOPT_OP_prelu, mgopt__imp_prelu, mgopt__exp_prelu_v1, {NULL, NULL, NULL}, mgopt__exw_prelu_v1},
    {"PRelu", 7, 0, MGOPT_OP_prelu, mgopt__imp_prelu, mgopt__exp_prelu, {NULL, NULL, NULL}, mgopt__exw_prelu},
    {"LeakyRelu", 1, 0, MGOPT_OP_leaky_relu, mgopt__imp_leaky_relu, mgopt__exp_leaky_relu, {NULL, NULL, NULL}, NULL},
    /* Gelu is an ONNX op from opset 20; read in any model that has it */
    {"Add", 7, 0, MGOPT_OP_bias_add, NULL, mgopt__exp_bias_add, {NULL, NULL, NULL}, mgopt__exw_bias_add},
    {"Gelu", 1, 19, MGOPT_OP_gelu, mgopt__imp_gelu, NULL, {NULL, NULL, NULL}, NULL},
    {"Gelu", 20, 0, MGOPT_OP_gelu, mgopt__imp_gelu, mgopt__exp_gelu, {NULL, NULL, NULL}, mgopt__exw_gelu},
    MGOPT__MAP_XY("Add", MGOPT_OP_add, mgopt__imp_binary),
    MGOPT__MAP_XY("Sub", MGOPT_OP_sub, mgopt__imp_binary),
    {"Mul", 1, 0, MGOPT_OP_mul, mgopt__imp_binary, mgopt__exp_mul_div, {"x", "y", NULL}, mgopt__exw_direct},
    {"Div", 1, 0, MGOPT_OP_real_div, mgopt__imp_binary_float, mgopt__exp_mul_div, {"x", "y", NULL}, mgopt__exw_direct},
    /* Pow: one float dtype before opset 12; from 12 integer bases and an exponent of any numeric dtype */
    {"Pow", 1, 11, MGOPT_OP_pow, mgopt__imp_binary_float, mgopt__exp_direct, {"x", "y", NULL}, mgopt__exw_pow},
    {"Pow", 12, 0, MGOPT_OP_pow, mgopt__imp_pow, mgopt__exp_direct, {"x", "y", NULL}, mgopt__exw_pow},
    /* Max and Min of two inputs (integers from opset 12); one or three and more inputs stay opaque */
    {"Max", 1, 11, MGOPT_OP_maximum, mgopt__imp_max_min, mgopt__exp_direct, {"x", "y", NULL}, mgopt__exw_max_min},
    {"Max", 12, 0, MGOPT_OP_maximum, mgopt__imp_max_min, mgopt__exp_direct, {"x", "y", NULL}, mgopt__exw_max_min},
    {"Min", 1, 11, MGOPT_OP_minimum, mgopt__imp_max_min, mgopt__exp_direct, {"x", "y", NULL}, mgopt__exw_max_min},
    {"Min", 12, 0, MGOPT_OP_minimum, mgopt__imp_max_min, mgopt__exp_direct, {"x", "y", NULL}, mgopt__exw_max_min},
    {"Mod", 10, 0, MGOPT_OP_mod, mgopt__imp_mod, mgopt__exp_direct, {"x", "y", NULL}, mgopt__exw_mod},
    MGOPT__MAP_XY("Equal", MGOPT_OP_equal, mgopt__imp_compare),
    MGOPT__MAP_XY("Less", MGOPT_OP_less, mgopt__imp_compare),
    MGOPT__MAP_XY("Greater", MGOPT_OP_greater, mgopt__imp_compare),
    MGOPT__MAP_XY("LessOrEqual", MGOPT_OP_less_equal, mgopt__imp_compare),
    MGOPT__MAP_XY("GreaterOrEqual", MGOPT_OP_greater_equal, mgopt__imp_compare),
    MGOPT__MAP_XY("And", MGOPT_OP_logical_and, mgopt__imp_logical),
    MGOPT__MAP_XY("Or", MGOPT_OP_logical_or, mgopt__imp_logical),
    MGOPT__MAP_XY("Xor", MGOPT_OP_logical_xor, mgopt__imp_logical),
    {"Where", 1, 0, MGOPT_OP_select, mgopt__imp_where, mgopt__exp_direct, {"cond", "a", "b"}, mgopt__exw_direct},
    {"Identity", 1, 0, MGOPT_OP_identity, mgopt__imp_identity, mgopt__exp_direct, {"x", NULL, NULL}, mgopt__exw_direct},
    {"Dropout", 1, 6, MGOPT_OP_identity, mgopt__imp_dropout_v1, NULL, {NULL, NULL, NULL}, NULL},
    {"Dropout", 7, 0, MGOPT_OP_identity, mgopt__imp_dropout, NULL, {NULL, NULL, NULL}, NULL},
    {"Clip", 1, 10, MGOPT_OP_clip, mgopt__imp_clip_v6, mgopt__exp_clip_v6, {NULL, NULL, NULL}, mgopt__exw_clip},
    {"Clip", 11, 11, MGOPT_OP_clip, mgopt__imp_clip_v11, mgopt__exp_clip_v11, {NULL, NULL, NULL}, mgopt__exw_clip},
    /* integers from opset 12 */
    {"Clip", 12, 0, MGOPT_OP_clip, mgopt__imp_clip_v11, mgopt__exp_clip_v11, {NULL, NULL, NULL}, mgopt__exw_clip},
    {"Cast", 1, 0, MGOPT_OP_cast, mgopt__imp_cast, mgopt__exp_cast, {NULL, NULL, NULL}, mgopt__exw_cast},
};

#undef MGOPT__MAP_UNARY
#undef MGOPT__MAP_UNARY_SINCE
#undef MGOPT__MAP_XY

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_elementwise(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_elementwise);
  return mgopt__onnx_elementwise;
}
/* src/onnx/map_shape.c — ONNX <-> canonical mappings of data movement: Transpose, Reshape, Flatten, Squeeze, Unsqueeze, Concat, Split, Slice, Gather, GatherElements, Pad, Tile, DepthToSpace, Constant. */

/* ---------------------------------------------------------------- Transpose */

static int mgopt__imp_transpose(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  const int64_t *perm = NULL;
  int64_t n = mgopt__imp_aints(I->node, "perm", &perm), i, *rev = NULL;
  int r = mgopt__imp_rank(x);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || r < 0) return 0;
  if (n < 0) {
    rev = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(r + 1), 8);
    if (!rev) return -1;
    for (i = 0; i < r; i++) rev[i] = r - 1 - i;
    perm = rev;
    n = r;
  }
  if (n != r) return 0;
  op = mgopt__imp_op(I, "transpose", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_ints(op, "perm", perm, n)) return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_transpose(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  const int64_t *v = NULL;
  MGOPT__UNUSED(m);
  return mgopt_op_get_ints(p, op, "perm", &v) < 0 ? "no perm" : NULL;
}

static mgopt_status mgopt__exp_transpose(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  const int64_t *v = NULL;
  int64_t k = mgopt_op_get_ints(E->p, op, "perm", &v);
  mgopt_onnx_node *n;
  n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_aints(E, n, "perm", v, k)) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- Reshape, Flatten */

/* Reshape with a constant shape whose entries are all resolvable without the
   "0 copies the input dim" rule (a 0 is resolved from a static input dim). */
static int mgopt__imp_reshape(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *sv = mgopt__imp_in(I, 1);
  int64_t *shape = NULL, n, i;
  int allowzero = (int)mgopt__imp_aint(I->node, "allowzero", 0);
  mgopt_op *op;
  mgopt_value *c;
  MGOPT__UNUSED(m);
  if (!x || !sv) return 0;
  n = mgopt__imp_const_ints(I, sv, &shape);
  if (n < 0) return 0;
  for (i = 0; i < n; i++) {
    if (shape[i] == 0 && !allowzero) {
      if (x->type.rank <= i || !mgopt_dim_is_static(x->type.dims[i])) return 0;
      shape[i] = x->type.dims[i].v;
      if (shape[i] == 0) return 0;
    } else if (shape[i] == 0 || shape[i] < -1) {
      return 0;
    }
  }
  c = mgopt__imp_const_i32s(I, NULL, "shape", shape, n);
  if (!c) return 0;
  op = mgopt__imp_op(I, "reshape", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "shape", c)) return -1;
  return mgopt__imp_done(I, op);
}

/* MIL copies the input dim for a 0 in the shape; ONNX Reshape does too (allowzero 0). */
static const char *mgopt__exw_reshape(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt_op_operand(op, "shape") ? NULL : "no shape";
}

static mgopt_status mgopt__exp_reshape(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *s = mgopt_op_operand(op, "shape");
  const char *ins[2];
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_as_i64(E, s);
  if (!ins[1]) return mgopt__exp_nomem(E);
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 2));
}

/* Flatten to 2-d: a reshape when the input shape is static. */
static int mgopt__imp_flatten(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *c;
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", 1), shape[2] = {1, 1}, i;
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || r < 0 || !mgopt_type_is_static(&x->type)) return 0;
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) return 0;
  for (i = 0; i < r; i++)
    if (!mgopt__mul_i64(shape[i < axis ? 0 : 1], x->type.dims[i].v, &shape[i < axis ? 0 : 1])) return 0;
  c = mgopt__imp_const_i32s(I, NULL, "shape", shape, 2);
  if (!c) return 0;
  op = mgopt__imp_op(I, "reshape", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "shape", c)) return -1;
  return mgopt__imp_done(I, op);
}

/* ---------------------------------------------------------------- Squeeze, Unsqueeze

   Before opset 13 the axes are an attribute, from 13 on an input. */

static int mgopt__imp_squeeze(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int64_t *axes = NULL, n = mgopt__imp_axes(I, 1, m->since < 13, &axes);
  mgopt_op *op;
  if (!x || n == -1) return 0;
  op = mgopt__imp_op(I, "squeeze", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x)) return -1;
  if (n >= 0 && mgopt_op_set_ints(op, "axes", axes, n)) return -1;
  return mgopt__imp_done(I, op);
}

static int mgopt__imp_unsqueeze(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int64_t *axes = NULL, n = mgopt__imp_axes(I, 1, m->since < 13, &axes);
  mgopt_op *op;
  if (!x || n < 1) return 0;
  op = mgopt__imp_op(I, "expand_dims", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_ints(op, "axes", axes, n)) return -1;
  return mgopt__imp_done(I, op);
}

/* squeeze without axes is Squeeze without axes; expand_dims needs them */
static const char *mgopt__exw_squeeze_like(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  const int64_t *v = NULL;
  MGOPT__UNUSED(m);
  return op->kind == MGOPT_OP_expand_dims && mgopt_op_get_ints(p, op, "axes", &v) < 0 ? "no axes" : NULL;
}

static mgopt_status mgopt__exp_squeeze_like(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  const int64_t *v = NULL;
  int64_t k = mgopt_op_get_ints(E->p, op, "axes", &v);
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  if (k < 0) {
    return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 1));
  }
  if (m->since >= 13) {
    ins[1] = mgopt__exp_i64_const(E, "axes", v, k);
    if (!ins[1]) return mgopt__exp_nomem(E);
    return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 2));
  }
  n = mgopt__exp_simple(E, op, m->onnx, ins, 1);
  if (!n || !mgopt__exp_aints(E, n, "axes", v, k)) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- Concat, Split */

static int mgopt__imp_concat(mgopt__imp *I, const mgopt__onnx_map *m) {
  int64_t n = I->node->ninputs, i, axis = mgopt__imp_aint(I->node, "axis", 1);
  mgopt_value **vals;
  mgopt_op *op;
  int r = -1;
  MGOPT__UNUSED(m);
  if (n < 1 || n > 100000 || !mgopt__imp_attr(I->node, "axis")) return 0;
  vals = (mgopt_value **)mgopt_program_alloc(I->p, sizeof(mgopt_value *) * (size_t)n, 8);
  if (!vals) return -1;
  for (i = 0; i < n; i++) {
    vals[i] = mgopt__imp_in(I, i);
    if (!vals[i]) return 0;
    if (i == 0) r = mgopt__imp_rank(vals[0]);
    if (mgopt__imp_rank(vals[i]) != r || vals[i]->type.dtype != vals[0]->type.dtype) return 0;
  }
  if (r < 1 || axis < -r || axis >= r) return 0;
  op = mgopt__imp_op(I, "concat", 1, 0);
  if (!op || mgopt_op_set_operand_list(op, "values", vals, (int32_t)n) || mgopt_op_set_int(op, "axis", axis) ||
      mgopt_op_set_bool(op, "interleave", 0))
    return -1;
  return mgopt__imp_done(I, op);
}

/* An interleaved concat of n values of one static shape S on axis a, as the
   channel shuffle it stands for: Concat(a) -> Reshape(S[:a] + [n, S[a]] +
   S[a+1:]) -> Transpose(swap a, a+1) -> Reshape(out), the form
   detect_concat_interleave reads. mgopt__exw_concat_n has checked the shapes,
   the axis and the opset (Reshape's shape input: opset 5). */
static mgopt_status mgopt__exp_concat_interleaved(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m,
                                                  const char *const *vals, int32_t nv) {
  int32_t si = mgopt_op_slot_index(op, "values"), i, r;
  const mgopt_value *v0 = nv > 0 ? op->slots[si].uses[0].value : NULL;
  int64_t a, split[MGOPT_MAX_RANK + 1], perm[MGOPT_MAX_RANK + 1], outs[MGOPT_MAX_RANK];
  const char *cat, *rs, *tr, *ins[2];
  mgopt_onnx_node *n;
  MGOPT__UNUSED(m);
  r = v0 ? v0->type.rank : -1;
  a = r > 0 ? mgopt_op_get_int(op, "axis", 0) : -1;
  if (a < 0) a += r;
  for (i = 0; i < r; i++) {
    int64_t dim = v0->type.dims[i].v;
    split[i < a ? i : i + 1] = dim;
    outs[i] = i == a ? dim * nv : dim;
  }
  split[a] = nv;
  for (i = 0; i <= r; i++) perm[i] = i == a ? a + 1 : i == a + 1 ? a : i;
  cat = mgopt__exp_fresh(E, mgopt__exp_vname(op->outs[0]));
  rs = mgopt__exp_fresh(E, mgopt__exp_vname(op->outs[0]));
  tr = mgopt__exp_fresh(E, mgopt__exp_vname(op->outs[0]));
  if (!cat || !rs || !tr) return mgopt__exp_nomem(E);
  n = mgopt__exp_node(E, "Concat", "", NULL);
  if (!n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, vals, nv) ||
      !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &cat, 1) || !mgopt__exp_aint(E, n, "axis", a))
    return mgopt__exp_nomem(E);
  ins[0] = cat;
  ins[1] = mgopt__exp_i64_const(E, "shape", split, r + 1);
  n = mgopt__exp_node(E, "Reshape", "", NULL);
  if (!ins[1] || !n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, ins, 2) ||
      !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &rs, 1))
    return mgopt__exp_nomem(E);
  n = mgopt__exp_node(E, "Transpose", "", NULL);
  if (!n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, &rs, 1) ||
      !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &tr, 1) || !mgopt__exp_aints(E, n, "perm", perm, r + 1))
    return mgopt__exp_nomem(E);
  ins[0] = tr;
  ins[1] = mgopt__exp_i64_const(E, "shape", outs, r);
  if (!ins[1]) return mgopt__exp_nomem(E);
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, "Reshape", ins, 2));
}

/* Concat writes any plain concat; an interleaved one needs Reshape's shape
   input (opset 5: the row below) and n values of one static shape. */
static const char *mgopt__exw_concat_n(const mgopt_op *op, int interleave_ok) {
  int32_t si = mgopt_op_slot_index(op, "values"), i, d, r;
  const mgopt_value *v0;
  int64_t a;
  if (si < 0 || op->slots[si].n < 1) return "no values";
  if (!mgopt_op_get_bool(op, "interleave", 0)) return NULL;
  if (!interleave_ok) return "interleaved concat needs opset 5";
  v0 = op->slots[si].uses[0].value;
  r = v0->type.rank;
  a = mgopt_op_get_int(op, "axis", 0);
  if (a < 0) a += r;
  if (r < 1 || r >= MGOPT_MAX_RANK || a < 0 || a >= r) return "interleaved concat of this rank or axis";
  for (i = 0; i < op->slots[si].n; i++) {
    const mgopt_value *v = op->slots[si].uses[i].value;
    if (v->type.rank != r) return "interleaved concat of unequal ranks";
    for (d = 0; d < r; d++)
      if (!mgopt_dim_is_static(v->type.dims[d]) || v->type.dims[d].v < 1 || v->type.dims[d].v != v0->type.dims[d].v)
        return "interleaved concat of shapes not static and equal";
  }
  return NULL;
}
static const char *mgopt__exw_concat_1(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt__exw_concat_n(op, 0);
}
static const char *mgopt__exw_concat(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt__exw_concat_n(op, 1);
}

static mgopt_status mgopt__exp_concat(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  int32_t si = mgopt_op_slot_index(op, "values"), i;
  const char **vals;
  mgopt_onnx_node *n;
  vals = (const char **)mgopt_program_alloc(E->p, sizeof(char *) * (size_t)(op->slots[si].n + 1), 8);
  if (!vals) return mgopt__exp_nomem(E);
  for (i = 0; i < op->slots[si].n; i++) vals[i] = mgopt__exp_vname(op->slots[si].uses[i].value);
  if (mgopt_op_get_bool(op, "interleave", 0)) return mgopt__exp_concat_interleaved(E, op, m, vals, op->slots[si].n);
  n = mgopt__exp_simple(E, op, m->onnx, vals, op->slots[si].n);
  if (!n || !mgopt__exp_aint(E, n, "axis", mgopt_op_get_int(op, "axis", 0))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* Split with sizes known: explicit split, or an even split of a static dim. */
static int mgopt__imp_split(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", 0), nout = I->node->noutputs, *sizes = NULL, n = -2, i;
  const int64_t *as = NULL;
  mgopt_op *op;
  if (!x || r < 1 || nout < 1 || mgopt__imp_nout(I->node) != nout) return 0;
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return 0;
  if (m->since < 13) { /* sizes: an attribute before opset 13, an input from 13 on */
    n = mgopt__imp_aints(I->node, "split", &as);
    if (n >= 0) {
      sizes = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(n + 1), 8);
      if (sizes && n) memcpy(sizes, as, sizeof(int64_t) * (size_t)n);
    }
  } else if (I->node->ninputs > 1 && I->node->inputs[1].len) {
    n = mgopt__imp_const_ints(I, mgopt__imp_in(I, 1), &sizes);
    if (n < 0) return 0;
  }
  if (n == -2 || !sizes) {
    /* even split of a static dim (opset 18's uneven num_outputs split stays opaque) */
    int64_t dim;
    if (!mgopt_dim_is_static(x->type.dims[axis])) return 0;
    dim = x->type.dims[axis].v;
    if (dim % nout) return 0;
    op = mgopt__imp_op(I, "split", (int32_t)nout, 0);
    if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_int(op, "num_splits", nout) ||
        mgopt_op_set_int(op, "axis", axis))
      return -1;
    return mgopt__imp_done(I, op);
  }
  if (n != nout) return 0;
  for (i = 0; i < n; i++)
    if (sizes[i] < 0) return 0;
  op = mgopt__imp_op(I, "split", (int32_t)nout, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_ints(op, "split_sizes", sizes, n) ||
      mgopt_op_set_int(op, "axis", axis))
    return -1;
  return mgopt__imp_done(I, op);
}

/* An even split without sizes is ONNX's default (num_outputs from opset 18);
   sizes are an attribute before opset 13, an input from 13 on. Without
   num_splits or split_sizes the sizes come from the outputs' static dims. */
static const char *mgopt__exw_split(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  const int64_t *v = NULL;
  int64_t axis = mgopt_op_get_int(op, "axis", 0);
  mgopt_value *x = mgopt_op_operand(op, "x");
  int r = x ? x->type.rank : -1;
  int32_t i;
  MGOPT__UNUSED(m);
  if (mgopt_op_get_ints(p, op, "split_sizes", &v) >= 0 || mgopt_op_attr(op, "num_splits")) return NULL;
  if (axis < 0) axis += r;
  if (r < 0 || axis < 0 || axis >= r) return "unknown split axis";
  for (i = 0; i < op->nouts; i++)
    if (op->outs[i]->type.rank != r || !mgopt_dim_is_static(op->outs[i]->type.dims[axis])) return "split sizes unknown";
  return NULL;
}

static mgopt_status mgopt__exp_split(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  int64_t *sizes, axis = mgopt_op_get_int(op, "axis", 0), k;
  const int64_t *v = NULL;
  mgopt_value *x = mgopt_op_operand(op, "x");
  int r = x ? x->type.rank : -1;
  int32_t i;
  const char *ins[2];
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  k = mgopt_op_get_ints(E->p, op, "split_sizes", &v);
  if (k < 0 && mgopt_op_attr(op, "num_splits")) {
    n = mgopt__exp_simple(E, op, m->onnx, ins, 1);
    if (!n || !mgopt__exp_aint(E, n, "axis", axis)) return mgopt__exp_nomem(E);
    if (m->since >= 18 && !mgopt__exp_aint(E, n, "num_outputs", op->nouts)) return mgopt__exp_nomem(E);
    return MGOPT_OK;
  }
  if (k < 0) {
    /* even split: sizes from the outputs' static dims */
    if (axis < 0) axis += r;
    sizes = (int64_t *)mgopt_program_alloc(E->p, sizeof(int64_t) * (size_t)(op->nouts + 1), 8);
    if (!sizes) return mgopt__exp_nomem(E);
    for (i = 0; i < op->nouts; i++) sizes[i] = op->outs[i]->type.dims[axis].v;
    v = sizes;
    k = op->nouts;
  }
  if (m->since >= 13) {
    ins[1] = mgopt__exp_i64_const(E, "split", v, k);
    if (!ins[1]) return mgopt__exp_nomem(E);
    n = mgopt__exp_simple(E, op, m->onnx, ins, 2);
    if (!n || !mgopt__exp_aint(E, n, "axis", axis)) return mgopt__exp_nomem(E);
    return MGOPT_OK;
  }
  n = mgopt__exp_simple(E, op, m->onnx, ins, 1);
  if (!n || !mgopt__exp_aint(E, n, "axis", axis) || !mgopt__exp_aints(E, n, "split", v, k)) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- Slice

   Before opset 10 starts, ends and axes are attributes (unit steps); from 10
   on they and the steps are inputs. */

/* Slice with constant starts/ends/axes/steps on an input of known rank. */
static int mgopt__imp_slice(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *c[3];
  int r = mgopt__imp_rank(x);
  int64_t *starts = NULL, *ends = NULL, *axes = NULL, *steps = NULL, ns, ne, na = -2, nst = -2, i;
  int64_t *b, *e, *st, *bm, *em;
  mgopt_op *op;
  if (!x || r < 1) return 0;
  if (m->since < 10) {
    const int64_t *a1 = NULL, *a2 = NULL, *a3 = NULL;
    ns = mgopt__imp_aints(I->node, "starts", &a1);
    ne = mgopt__imp_aints(I->node, "ends", &a2);
    na = mgopt__imp_aints(I->node, "axes", &a3);
    starts = (int64_t *)(uintptr_t)a1;
    ends = (int64_t *)(uintptr_t)a2;
    axes = (int64_t *)(uintptr_t)a3;
  } else {
    ns = mgopt__imp_const_ints(I, mgopt__imp_in(I, 1), &starts);
    ne = mgopt__imp_const_ints(I, mgopt__imp_in(I, 2), &ends);
    if (I->node->ninputs > 3 && I->node->inputs[3].len) {
      na = mgopt__imp_const_ints(I, mgopt__imp_in(I, 3), &axes);
      if (na < 0) return 0;
    }
    if (I->node->ninputs > 4 && I->node->inputs[4].len) {
      nst = mgopt__imp_const_ints(I, mgopt__imp_in(I, 4), &steps);
      if (nst < 0) return 0;
    }
  }
  if (ns < 0 || ne != ns || (na >= 0 && na != ns) || (nst >= 0 && nst != ns)) return 0;
  b = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)r * 5, 8);
  if (!b) return -1;
  e = b + r;
  st = e + r;
  bm = st + r;
  em = bm + r;
  for (i = 0; i < r; i++) {
    b[i] = 0;
    e[i] = 0;
    st[i] = 1;
    bm[i] = 1;
    em[i] = 1;
  }
  for (i = 0; i < ns; i++) {
    int64_t ax = na >= 0 ? axes[i] : i, s = nst >= 0 ? steps[i] : 1, dim;
    if (ax < 0) ax += r;
    if (ax < 0 || ax >= r || s == 0 || !bm[ax]) return 0; /* bad or repeated axis */
    {
      int64_t j, aj;
      for (j = 0; j < i; j++) { /* a whole axis below keeps its mask: find a repeat here */
        aj = na >= 0 ? axes[j] : j;
        if (aj < 0) aj += r;
        if (aj == ax) return 0;
      }
    }
    if (!mgopt_dim_is_static(x->type.dims[ax])) {
      /* an unknown dim: only the whole axis forward (start 0 or clamped to 0, end at or past
         any int32 dim) is expressible, as masks */
      if (s < 0 || s > INT32_MAX || starts[i] > 0 || (starts[i] < 0 && starts[i] > -(int64_t)INT32_MAX - 1) ||
          ends[i] < INT32_MAX)
        return 0;
      bm[ax] = 1;
      em[ax] = 1;
      st[ax] = s;
      b[ax] = 0;
      e[ax] = 0;
      continue;
    }
    dim = x->type.dims[ax].v;
    /* clamp as ONNX does, then express with masks where the bound is the end */
    {
      int64_t lo = starts[i], hi = ends[i];
      if (lo < 0) lo += dim;
      if (hi < 0) hi += dim;
      if (s > 0) {
        lo = lo < 0 ? 0 : lo > dim ? dim : lo;
        hi = hi < 0 ? 0 : hi > dim ? dim : hi;
      } else {
        lo = lo < 0 ? -1 : lo > dim - 1 ? dim - 1 : lo;
        hi = hi < -1 ? -1 : hi > dim - 1 ? dim - 1 : hi;
      }
      if (s < 0 && hi == -1) em[ax] = 1, hi = 0;
      else em[ax] = 0;
      if (s < 0 && lo == -1) return 0; /* empty result from the far end: leave it to ONNX */
      bm[ax] = 0;
      b[ax] = lo;
      e[ax] = hi;
      st[ax] = s;
      if (lo > INT32_MAX || hi > INT32_MAX || s > INT32_MAX || s < INT32_MIN) return 0;
    }
  }
  c[0] = mgopt__imp_const_i32s(I, NULL, "begin", b, r);
  c[1] = mgopt__imp_const_i32s(I, NULL, "end", e, r);
  c[2] = mgopt__imp_const_i32s(I, NULL, "stride", st, r);
  if (!c[0] || !c[1] || !c[2]) return -1;
  op = mgopt__imp_op(I, "slice_by_index", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "begin", c[0]) ||
      mgopt_op_set_operand(op, "end", c[1]) || mgopt_op_set_operand(op, "stride", c[2]))
    return -1;
  {
    mgopt_attr a;
    memset(&a, 0, sizeof a);
    a.kind = MGOPT_ATTR_BOOLS;
    a.n = r;
    a.name = "begin_mask";
    a.u.ints = bm;
    if (mgopt_op_set_attr(op, &a)) return -1;
    a.name = "end_mask";
    a.u.ints = em;
    if (mgopt_op_set_attr(op, &a)) return -1;
  }
  return mgopt__imp_done(I, op);
}

/* Constant bounds, no squeezed axis, and unit steps before opset 10. */
static const char *mgopt__exw_slice(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  mgopt_tensor *tb = mgopt_value_const(mgopt_op_operand(op, "begin"));
  mgopt_tensor *te = mgopt_value_const(mgopt_op_operand(op, "end"));
  mgopt_value *sv = mgopt_op_operand(op, "stride");
  mgopt_tensor *ts = sv ? mgopt_value_const(sv) : NULL;
  const int64_t *bm = NULL, *em = NULL, *sm = NULL;
  int64_t nbm, nem, nsm, r, j;
  if (!x || !tb || !te || (sv && !ts)) return "non-constant bounds";
  r = tb->numel;
  if (r > MGOPT_MAX_RANK || te->numel != r || (ts && ts->numel != r)) return "bad bounds";
  nbm = mgopt_op_get_ints(p, op, "begin_mask", &bm);
  nem = mgopt_op_get_ints(p, op, "end_mask", &em);
  nsm = mgopt_op_get_ints(p, op, "squeeze_mask", &sm);
  for (j = 0; j < nsm; j++)
    if (sm[j]) return "squeeze_mask";
  for (j = 0; j < r && m->since < 10; j++) {
    int64_t s = ts ? mgopt_tensor_get_i64(ts, j) : 1;
    if (s != 1 && !(j < nbm && bm[j] && j < nem && em[j] && s == 1)) return "Slice with steps needs opset 10";
  }
  return NULL;
}

static mgopt_status mgopt__exp_slice(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  mgopt_tensor *tb = mgopt_value_const(mgopt_op_operand(op, "begin"));
  mgopt_tensor *te = mgopt_value_const(mgopt_op_operand(op, "end"));
  mgopt_value *sv = mgopt_op_operand(op, "stride");
  mgopt_tensor *ts = sv ? mgopt_value_const(sv) : NULL;
  const int64_t *bm = NULL, *em = NULL;
  int64_t nbm, nem, r, j, cnt = 0;
  int64_t st[MGOPT_MAX_RANK], en[MGOPT_MAX_RANK], ax[MGOPT_MAX_RANK], stp[MGOPT_MAX_RANK];
  const char *ins[5];
  mgopt_onnx_node *n;
  MGOPT__UNUSED(x);
  ins[0] = mgopt__exp_in(op, "x");
  r = tb->numel;
  nbm = mgopt_op_get_ints(E->p, op, "begin_mask", &bm);
  nem = mgopt_op_get_ints(E->p, op, "end_mask", &em);
  for (j = 0; j < r; j++) {
    int64_t s = ts ? mgopt_tensor_get_i64(ts, j) : 1;
    int64_t b = mgopt_tensor_get_i64(tb, j), e = mgopt_tensor_get_i64(te, j);
    int bmask = j < nbm && bm[j], emask = j < nem && em[j];
    if (bmask && emask && s == 1) continue; /* the whole axis */
    st[cnt] = bmask ? (s > 0 ? 0 : INT64_MAX) : b;
    en[cnt] = emask ? (s > 0 ? INT64_MAX : INT64_MIN) : e;
    ax[cnt] = j;
    stp[cnt] = s;
    cnt++;
  }
  if (cnt == 0) return mgopt__exp_done(E, mgopt__exp_simple(E, op, "Identity", &ins[0], 1));
  if (m->since < 10) {
    for (j = 0; j < cnt; j++)
      if (en[j] == INT64_MAX) en[j] = INT32_MAX;
    n = mgopt__exp_simple(E, op, m->onnx, ins, 1);
    if (!n || !mgopt__exp_aints(E, n, "starts", st, cnt) || !mgopt__exp_aints(E, n, "ends", en, cnt) ||
        !mgopt__exp_aints(E, n, "axes", ax, cnt))
      return mgopt__exp_nomem(E);
    return MGOPT_OK;
  }
  {
    /* unit steps are the default, and then axes 0, 1, ... are too */
    int64_t nin = 3;
    for (j = 0; j < cnt; j++) {
      if (stp[j] != 1) nin = 5;
      if (ax[j] != j && nin < 4) nin = 4;
    }
    ins[1] = mgopt__exp_i64_const(E, "starts", st, cnt);
    ins[2] = mgopt__exp_i64_const(E, "ends", en, cnt);
    ins[3] = nin > 3 ? mgopt__exp_i64_const(E, "axes", ax, cnt) : "";
    ins[4] = nin > 4 ? mgopt__exp_i64_const(E, "steps", stp, cnt) : "";
    if (!ins[1] || !ins[2] || !ins[3] || !ins[4]) return mgopt__exp_nomem(E);
    return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, nin));
  }
}

/* ---------------------------------------------------------------- Gather */

static int mgopt__imp_gather(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *idx = mgopt__imp_in(I, 1);
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || !idx || r < 1 || (idx->type.dtype != MGOPT_DT_INT32 && idx->type.dtype != MGOPT_DT_INT64)) return 0;
  if (axis < -r || axis >= r) return 0;
  op = mgopt__imp_op(I, "gather", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "indices", idx) ||
      mgopt_op_set_int(op, "axis", axis))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_gather(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (mgopt_op_get_int(op, "batch_dims", 0) != 0) return "batch_dims";
  return mgopt_op_operand(op, "x") && mgopt_op_operand(op, "indices") ? NULL : "an operand is missing";
}

static mgopt_status mgopt__exp_gather(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_in(op, "indices");
  n = mgopt__exp_simple(E, op, m->onnx, ins, 2);
  if (!n || !mgopt__exp_aint(E, n, "axis", mgopt_op_get_int(op, "axis", 0))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- GatherElements

   gather_along_axis where indices match x off the axis (equal static dims or
   one symbol): ONNX's smaller index dims have no MIL form and stay opaque. */
static int mgopt__imp_gather_elements(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *idx = mgopt__imp_in(I, 1);
  int r = mgopt__imp_rank(x), k;
  int64_t axis = mgopt__imp_aint(I->node, "axis", 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || !idx || r < 1 || mgopt__imp_rank(idx) != r ||
      (idx->type.dtype != MGOPT_DT_INT32 && idx->type.dtype != MGOPT_DT_INT64))
    return 0;
  if (axis < -r || axis >= r) return 0;
  for (k = 0; k < r; k++) {
    mgopt_dim a = x->type.dims[k], b = idx->type.dims[k];
    if (k == axis || k == axis + r) continue;
    if (a.sym ? a.sym != b.sym : (a.v < 0 || b.sym || a.v != b.v)) return 0;
  }
  op = mgopt__imp_op(I, "gather_along_axis", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "indices", idx) ||
      mgopt_op_set_int(op, "axis", axis))
    return -1;
  return mgopt__imp_done(I, op);
}

/* ---------------------------------------------------------------- Pad

   Before opset 11 the pads and the value are attributes; from 11 on, inputs. */

/* Constant pads [b0, b1, ..., e0, e1, ...] over every dim -> MIL's [b0, e0, b1, e1, ...]. */
static int mgopt__imp_pad(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *c;
  int r = mgopt__imp_rank(x);
  int64_t *pads = NULL, n, i, *mp;
  const int64_t *ap = NULL;
  double cval = 0.0;
  const char *mode = "constant";
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || r < 1) return 0;
  if (mgopt__imp_astr(I->node, "mode", "reflect")) mode = "reflect";
  else if (mgopt__imp_astr(I->node, "mode", "edge")) mode = "replicate";
  else if (mgopt__imp_attr(I->node, "mode") && !mgopt__imp_astr(I->node, "mode", "constant")) return 0;
  if (m->since < 11) {
    n = mgopt__imp_aints(I->node, "pads", &ap);
    if (n < 0) n = mgopt__imp_aints(I->node, "paddings", &ap);
    pads = (int64_t *)(uintptr_t)ap;
    cval = mgopt__imp_afloat(I->node, "value", 0.0);
  } else {
    mgopt_value *cv = mgopt__imp_in(I, 2);
    n = mgopt__imp_const_ints(I, mgopt__imp_in(I, 1), &pads);
    if (I->node->ninputs > 3 && I->node->inputs[3].len) return 0; /* axes input */
    if (cv) {
      mgopt_tensor *t = mgopt_value_const(cv);
      if (!t || t->numel != 1) return 0;
      cval = mgopt_tensor_get_f64(t, 0);
    }
  }
  if (n != 2 * r) return 0;
  mp = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(2 * r), 8);
  if (!mp) return -1;
  for (i = 0; i < r; i++) {
    mp[2 * i] = pads[i];
    mp[2 * i + 1] = pads[r + i];
    if (mp[2 * i] < 0 || mp[2 * i + 1] < 0) return 0; /* cropping pads */
    if (strcmp(mode, "constant") != 0 && (mp[2 * i] || mp[2 * i + 1]) && i < r - 2) return 0;
  }
  c = mgopt__imp_const_i32s(I, NULL, "pad", mp, 2 * r);
  if (!c) return 0;
  op = mgopt__imp_op(I, "pad", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "pad", c) ||
      mgopt_op_set_string(op, "mode", mode) || mgopt_op_set_float(op, "constant_val", cval))
    return -1;
  return mgopt__imp_done(I, op);
}

/* Constant pads over the last dims of an input of known rank; MIL's modes
   constant, reflect and replicate are Pad's constant, reflect and edge. */
static const char *mgopt__exw_pad(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_tensor *tp = mgopt_value_const(mgopt_op_operand(op, "pad"));
  mgopt_value *x = mgopt_op_operand(op, "x");
  const char *mode = mgopt_op_get_string(op, "mode", NULL);
  int64_t r = x ? x->type.rank : -1;
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!tp || r < 1 || r > MGOPT_MAX_RANK || tp->numel % 2 || tp->numel / 2 > r) return "non-constant pad";
  if (mode && strcmp(mode, "constant") != 0 && strcmp(mode, "reflect") != 0 && strcmp(mode, "replicate") != 0)
    return "this pad mode";
  return NULL;
}

static mgopt_status mgopt__exp_pad(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_tensor *tp = mgopt_value_const(mgopt_op_operand(op, "pad"));
  mgopt_value *x = mgopt_op_operand(op, "x");
  size_t len = 0;
  const char *mode = mgopt_op_get_string(op, "mode", &len);
  int64_t r = x->type.rank, pads[2 * MGOPT_MAX_RANK], k, j;
  const char *ins[3];
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  k = tp->numel / 2;
  for (j = 0; j < 2 * r; j++) pads[j] = 0;
  for (j = 0; j < k; j++) {
    pads[r - k + j] = mgopt_tensor_get_i64(tp, 2 * j);
    pads[2 * r - k + j] = mgopt_tensor_get_i64(tp, 2 * j + 1);
  }
  if (mode && strcmp(mode, "replicate") == 0) mode = "edge";
  if (m->since >= 11) {
    mgopt_tensor *cv = mgopt_tensor_new_scalar_f64(E->p, (mgopt_dtype)x->type.dtype, mgopt_op_get_float(op, "constant_val", 0.0));
    const char *cn = mgopt__exp_fresh(E, "pad_value");
    mgopt_onnx_tensor *ot;
    ins[1] = mgopt__exp_i64_const(E, "pads", pads, 2 * r);
    if (!ins[1] || !cv || !cn) return mgopt__exp_nomem(E);
    if (E->g->inits_ok) {
      ot = (mgopt_onnx_tensor *)mgopt__exv_push(E, &E->g->inits, sizeof(mgopt_onnx_tensor));
      if (!ot || mgopt__exp_tensor(E, cv, cn, ot)) return mgopt__exp_nomem(E);
      ins[2] = cn;
    } else if (mgopt_op_get_float(op, "constant_val", 0.0) != 0.0) {
      /* a Constant node holds the value; a zero is Pad's default */
      ins[2] = mgopt__exp_const(E, "pad_value", cv);
      if (!ins[2]) return mgopt__exp_nomem(E);
    } else {
      ins[2] = NULL;
    }
    n = mgopt__exp_simple(E, op, m->onnx, ins, ins[2] ? 3 : 2);
  } else {
    n = mgopt__exp_simple(E, op, m->onnx, ins, 1);
    if (n && (!mgopt__exp_aints(E, n, "pads", pads, 2 * r) ||
              !mgopt__exp_afloat(E, n, "value", mgopt_op_get_float(op, "constant_val", 0.0))))
      return mgopt__exp_nomem(E);
  }
  if (!n || !mgopt__exp_astr(E, n, "mode", mode ? mode : "constant")) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- DepthToSpace

   pixel_shuffle moves channel c*r*r + i*r + j to row i, column j of channel
   c: DepthToSpace's CRD mode, which opset 11 added (before it, only DCR). */

static const char *mgopt__exw_pixel_shuffle(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x || x->type.rank != 4) return "DepthToSpace needs a 4-d input";
  return mgopt_op_get_int(op, "upscale_factor", 0) >= 1 ? NULL : "no upscale_factor";
}

static mgopt_status mgopt__exp_pixel_shuffle(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_aint(E, n, "blocksize", mgopt_op_get_int(op, "upscale_factor", 1)) ||
      !mgopt__exp_astr(E, n, "mode", "CRD"))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- Tile, Constant */

static int mgopt__imp_tile(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *reps = mgopt__imp_in(I, 1);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || !reps || !mgopt__imp_known_dtype(x)) return 0;
  op = mgopt__imp_op(I, "tile", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "reps", reps)) return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_tile(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt_op_operand(op, "reps") ? NULL : "no reps";
}

static mgopt_status mgopt__exp_tile(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *reps = mgopt_op_operand(op, "reps");
  const char *ins[2];
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_as_i64(E, reps);
  if (!ins[1]) return mgopt__exp_nomem(E);
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 2));
}

/* Constant node -> const op (remembering it was a node, for export). */
static int mgopt__imp_constant(mgopt__imp *I, const mgopt__onnx_map *m) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(I->node, "value");
  mgopt_tensor *t = NULL;
  mgopt_op *op;
  int64_t one = 1;
  MGOPT__UNUSED(m);
  if (I->node->nattributes != 1 || mgopt__imp_nout(I->node) != 1) return 0;
  if (a && a->type == MGOPT_ONNX_ATTR_TENSOR && a->t) {
    t = mgopt__imp_tensor(I, a->t);
    if (!t) return -1;
  } else if ((a = mgopt__imp_attr(I->node, "value_float")) != NULL && a->type == MGOPT_ONNX_ATTR_FLOAT) {
    t = mgopt_tensor_new_scalar_f64(I->p, MGOPT_DT_FP32, (double)a->f);
  } else if ((a = mgopt__imp_attr(I->node, "value_int")) != NULL && a->type == MGOPT_ONNX_ATTR_INT) {
    t = mgopt_tensor_new_scalar_i64(I->p, MGOPT_DT_INT64, a->i);
  } else if ((a = mgopt__imp_attr(I->node, "value_floats")) != NULL && a->type == MGOPT_ONNX_ATTR_FLOATS) {
    int64_t i;
    one = a->nfloats;
    t = mgopt_tensor_new(I->p, MGOPT_DT_FP32, 1, &one);
    if (t)
      for (i = 0; i < one; i++) mgopt_tensor_set_f64(t, i, (double)a->floats[i]);
  } else if ((a = mgopt__imp_attr(I->node, "value_ints")) != NULL && a->type == MGOPT_ONNX_ATTR_INTS) {
    int64_t i;
    one = a->nints;
    t = mgopt_tensor_new(I->p, MGOPT_DT_INT64, 1, &one);
    if (t)
      for (i = 0; i < one; i++) mgopt_tensor_set_i64(t, i, a->ints[i]);
  } else {
    return 0; /* string and sparse constants stay opaque */
  }
  if (!t) return -1;
  op = mgopt__imp_op(I, "const", 1, 0);
  if (!op || mgopt_op_set_tensor(op, "val", t)) return -1;
  op->flags |= MGOPT_OP_ONNX_CONSTANT_NODE;
  if (mgopt_type_make_static(I->p, &op->outs[0]->type, (mgopt_dtype)t->dtype, t->rank, t->shape)) return -1;
  return mgopt__imp_done(I, op);
}

/* ---------------------------------------------------------------- the table */

static const mgopt__onnx_map mgopt__onnx_shape[] = {
    {"Transpose", 1, 0, MGOPT_OP_transpose, mgopt__imp_transpose, mgopt__exp_transpose, {NULL, NULL, NULL}, mgopt__exw_transpose},
    /* Reshape-1 took the shape as an attribute: read as opaque, written in the later form */
    {"Reshape", 1, 4, MGOPT_OP_reshape, NULL, mgopt__exp_reshape, {NULL, NULL, NULL}, mgopt__exw_reshape},
    {"Reshape", 5, 0, MGOPT_OP_reshape, mgopt__imp_reshape, mgopt__exp_reshape, {NULL, NULL, NULL}, mgopt__exw_reshape},
    {"Flatten", 1, 0, MGOPT_OP_reshape, mgopt__imp_flatten, NULL, {NULL, NULL, NULL}, NULL},
    {"Squeeze", 1, 12, MGOPT_OP_squeeze, mgopt__imp_squeeze, mgopt__exp_squeeze_like, {NULL, NULL, NULL}, mgopt__exw_squeeze_like},
    {"Squeeze", 13, 0, MGOPT_OP_squeeze, mgopt__imp_squeeze, mgopt__exp_squeeze_like, {NULL, NULL, NULL}, mgopt__exw_squeeze_like},
    {"Unsqueeze", 1, 12, MGOPT_OP_expand_dims, mgopt__imp_unsqueeze, mgopt__exp_squeeze_like, {NULL, NULL, NULL}, mgopt__exw_squeeze_like},
    {"Unsqueeze", 13, 0, MGOPT_OP_expand_dims, mgopt__imp_unsqueeze, mgopt__exp_squeeze_like, {NULL, NULL, NULL}, mgopt__exw_squeeze_like},
    {"Concat", 1, 4, MGOPT_OP_concat, mgopt__imp_concat, mgopt__exp_concat, {NULL, NULL, NULL}, mgopt__exw_concat_1},
    {"Concat", 5, 0, MGOPT_OP_concat, mgopt__imp_concat, mgopt__exp_concat, {NULL, NULL, NULL}, mgopt__exw_concat},
    {"Split", 1, 12, MGOPT_OP_split, mgopt__imp_split, mgopt__exp_split, {NULL, NULL, NULL}, mgopt__exw_split},
    {"Split", 13, 17, MGOPT_OP_split, mgopt__imp_split, mgopt__exp_split, {NULL, NULL, NULL}, mgopt__exw_split},
    {"Split", 18, 0, MGOPT_OP_split, mgopt__imp_split, mgopt__exp_split, {NULL, NULL, NULL}, mgopt__exw_split},
    {"Slice", 1, 9, MGOPT_OP_slice_by_index, mgopt__imp_slice, mgopt__exp_slice, {NULL, NULL, NULL}, mgopt__exw_slice},
    {"Slice", 10, 0, MGOPT_OP_slice_by_index, mgopt__imp_slice, mgopt__exp_slice, {NULL, NULL, NULL}, mgopt__exw_slice},
    {"Gather", 1, 0, MGOPT_OP_gather, mgopt__imp_gather, mgopt__exp_gather, {NULL, NULL, NULL}, mgopt__exw_gather},
    {"GatherElements", 11, 0, MGOPT_OP_gather_along_axis, mgopt__imp_gather_elements, mgopt__exp_gather, {NULL, NULL, NULL}, mgopt__exw_gather},
    {"Pad", 1, 10, MGOPT_OP_pad, mgopt__imp_pad, mgopt__exp_pad, {NULL, NULL, NULL}, mgopt__exw_pad},
    {"Pad", 11, 0, MGOPT_OP_pad, mgopt__imp_pad, mgopt__exp_pad, {NULL, NULL, NULL}, mgopt__exw_pad},
    /* DepthToSpace is read in map_struct.c (its CRD mode as pixel_shuffle): this row writes pixel_shuffle */
    {"DepthToSpace", 11, 0, MGOPT_OP_pixel_shuffle, NULL, mgopt__exp_pixel_shuffle, {NULL, NULL, NULL}, mgopt__exw_pixel_shuffle},
    /* Tile-1 took tiles and axis inputs: read as opaque, written in the later form */
    {"Tile", 1, 5, MGOPT_OP_tile, NULL, mgopt__exp_tile, {NULL, NULL, NULL}, mgopt__exw_tile},
    {"Tile", 6, 0, MGOPT_OP_tile, mgopt__imp_tile, mgopt__exp_tile, {NULL, NULL, NULL}, mgopt__exw_tile},
    {"Constant", 1, 0, MGOPT_OP_const, mgopt__imp_constant, NULL, {NULL, NULL, NULL}, NULL},
};

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_shape(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_shape);
  return mgopt__onnx_shape;
}
/* src/onnx/map_nn.c — ONNX <-> canonical mappings of network layers: MatMul, Gemm, Conv, ConvTranspose, pools, normalizations, Softmax, Resize, Upsample, Einsum. */

/* ---------------------------------------------------------------- MatMul, Gemm */

static int mgopt__imp_matmul(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *y = mgopt__imp_in(I, 1);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!x || !y || x->type.dtype != y->type.dtype) return 0;
  /* float, and from opset 9 int32 and int64 (exact; wrapped past the dtype) */
  if (!mgopt__imp_is_float(x) &&
      !(I->opset >= 9 && (x->type.dtype == MGOPT_DT_INT32 || x->type.dtype == MGOPT_DT_INT64)))
    return 0;
  op = mgopt__imp_op(I, "matmul", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "y", y) ||
      mgopt_op_set_bool(op, "transpose_x", 0) || mgopt_op_set_bool(op, "transpose_y", 0))
    return -1;
  return mgopt__imp_done(I, op);
}

/* Transposes of the last two dims become Transpose nodes. */
static const char *mgopt__exw_matmul(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  static const char *const names[2] = {"x", "y"}, *const flags[2] = {"transpose_x", "transpose_y"};
  int j;
  MGOPT__UNUSED(p);
  for (j = 0; j < 2; j++) {
    mgopt_value *v = mgopt_op_operand(op, names[j]);
    if (!v) return "an operand is missing";
    if (!mgopt_dtype_is_float((mgopt_dtype)v->type.dtype) && m->since < 9) return "MatMul of integers needs opset 9";
    if (mgopt_op_get_bool(op, flags[j], 0) && (v->type.rank < 2 || v->type.rank > MGOPT_MAX_RANK))
      return "transposed operand of unknown rank";
  }
  return NULL;
}

static mgopt_status mgopt__exp_matmul(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  ins[0] = mgopt__exp_in(op, "x");
  if (mgopt_op_get_bool(op, "transpose_x", 0) || mgopt_op_get_bool(op, "transpose_y", 0)) {
    int j;
    const char *names[2] = {"x", "y"}, *flags[2] = {"transpose_x", "transpose_y"};
    for (j = 0; j < 2; j++) {
      mgopt_value *xv = mgopt_op_operand(op, names[j]);
      int64_t perm[MGOPT_MAX_RANK], r, q;
      const char *out;
      mgopt_onnx_node *t;
      ins[j] = mgopt__exp_vname(xv);
      if (!mgopt_op_get_bool(op, flags[j], 0)) continue;
      r = xv->type.rank;
      for (q = 0; q < r; q++) perm[q] = q;
      perm[r - 2] = r - 1;
      perm[r - 1] = r - 2;
      out = mgopt__exp_fresh(E, ins[j]);
      t = mgopt__exp_node(E, "Transpose", "", NULL);
      if (!out || !t || !mgopt__exp_set_io(E, &t->inputs, &t->ninputs, &ins[j], 1) ||
          !mgopt__exp_set_io(E, &t->outputs, &t->noutputs, &out, 1) || !mgopt__exp_aints(E, t, "perm", perm, r))
        return mgopt__exp_nomem(E);
      ins[j] = out;
    }
  } else {
    ins[1] = mgopt__exp_in(op, "y");
  }
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 2));
}

/* An intermediate op of the Gemm decomposition: `type` over (a, b) in slots
   (sa, sb), output named after the node's output and `what`, types inferred.
   NULL on error (d set). */
static mgopt_op *mgopt__imp_gemm_step(mgopt__imp *I, const char *type, const char *what, const char *sa, mgopt_value *a,
                                      const char *sb, mgopt_value *b) {
  const char *slots[2];
  mgopt_value *vals[2];
  mgopt_op *op;
  mgopt_diag d2;
  char buf[160];
  snprintf(buf, sizeof buf, "%.100s_%s", I->node->noutputs ? mgopt__imp_intern(I, I->node->outputs[0]) : "gemm", what);
  slots[0] = sa;
  slots[1] = sb;
  vals[0] = a;
  vals[1] = b;
  op = mgopt_build_op(I->p, I->b, NULL, type, mgopt_program_fresh_name(I->p, buf), b ? 2 : 1, slots, vals, 1);
  if (!op) return NULL;
  if (op->kind == MGOPT_OP_matmul && (mgopt_op_set_bool(op, "transpose_x", 0) || mgopt_op_set_bool(op, "transpose_y", 0)))
    return NULL;
  if (op->kind == MGOPT_OP_transpose) {
    static const int64_t perm[2] = {1, 0};
    if (mgopt_op_set_ints(op, "perm", perm, 2)) return NULL;
  }
  mgopt_diag_clear(&d2);
  if (mgopt_op_infer(I->p, op, &d2)) {
    mgopt__imp_fail(I, MGOPT_ERR_TYPE, "Gemm: %s", d2.msg);
    return NULL;
  }
  return op;
}

/* A scalar constant v of x's dtype (rank 0), appended. */
static mgopt_value *mgopt__imp_gemm_scalar(mgopt__imp *I, const mgopt_value *x, const char *what, double v) {
  mgopt_tensor *t = mgopt_tensor_new_scalar_f64(I->p, (mgopt_dtype)x->type.dtype, v);
  char buf[160];
  snprintf(buf, sizeof buf, "%.100s_%s", I->node->noutputs ? mgopt__imp_intern(I, I->node->outputs[0]) : "gemm", what);
  return t ? mgopt_build_const(I->p, I->b, NULL, mgopt_program_fresh_name(I->p, buf), t) : NULL;
}

/* Gemm: Y = alpha * op(A) * op(B) + beta * C, as ops whose export reads back
   as the same ops: a transposed A through transpose, A * B' as linear (no
   bias), A * B as matmul, then mul by alpha when it is not 1 and add of C
   (multiplied by beta first when beta is not 1). alpha = beta = 1, no
   transposed A, a transposed B and a 1-d (or absent) C is one linear. beta
   = 0 drops C, as ONNX's definition does (a NaN in C does not reach Y).
   The constants come first, as initializers do when the model is read back. */
static int mgopt__imp_gemm(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *a = mgopt__imp_in(I, 0), *b = mgopt__imp_in(I, 1), *c = mgopt__imp_in(I, 2), *av = NULL, *bv = NULL;
  int64_t ta = mgopt__imp_aint(I->node, "transA", 0), tb = mgopt__imp_aint(I->node, "transB", 0);
  double alpha = mgopt__imp_afloat(I->node, "alpha", 1.0), beta = mgopt__imp_afloat(I->node, "beta", 1.0);
  mgopt_op *op;
  mgopt_value *y;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(a) || !b || a->type.dtype != b->type.dtype || (c && c->type.dtype != a->type.dtype))
    return 0;
  if (!(alpha == alpha) || !(beta == beta)) return 0;
  if (mgopt__imp_rank(a) != 2 || mgopt__imp_rank(b) != 2 || (c && (mgopt__imp_rank(c) < 0 || mgopt__imp_rank(c) > 2)))
    return 0;
  /* before opset 7, C broadcasts only with broadcast = 1 (else it has Y's shape) */
  if (c && I->opset < 7 && !mgopt__imp_aint(I->node, "broadcast", 0) && mgopt__imp_rank(c) != 2) return 0;
  if (beta == 0.0) c = NULL;
  if (alpha == 1.0 && !ta && tb && (!c || (beta == 1.0 && mgopt__imp_rank(c) == 1))) {
    op = mgopt__imp_op(I, "linear", 1, 0);
    if (!op || mgopt_op_set_operand(op, "x", a) || mgopt_op_set_operand(op, "weight", b)) return -1;
    if (c && mgopt_op_set_operand(op, "bias", c)) return -1;
    return mgopt__imp_done(I, op);
  }
  if (c && beta != 1.0 && !(bv = mgopt__imp_gemm_scalar(I, a, "beta", beta))) return -1;
  if (alpha != 1.0 && !(av = mgopt__imp_gemm_scalar(I, a, "alpha", alpha))) return -1;
  if (ta) {
    mgopt_op *t = mgopt__imp_gemm_step(I, "transpose", "a_t", "x", a, NULL, NULL);
    if (!t) return -1;
    a = t->outs[0];
  }
  if (alpha == 1.0 && !c) {
    op = mgopt__imp_op(I, tb ? "linear" : "matmul", 1, 0);
    if (!op || mgopt_op_set_operand(op, "x", a) || mgopt_op_set_operand(op, tb ? "weight" : "y", b)) return -1;
    if (!tb && (mgopt_op_set_bool(op, "transpose_x", 0) || mgopt_op_set_bool(op, "transpose_y", 0))) return -1;
    return mgopt__imp_done(I, op);
  }
  op = tb ? mgopt__imp_gemm_step(I, "linear", "matmul", "x", a, "weight", b)
          : mgopt__imp_gemm_step(I, "matmul", "matmul", "x", a, "y", b);
  if (!op) return -1;
  y = op->outs[0];
  if (bv) {
    mgopt_op *bc = mgopt__imp_gemm_step(I, "mul", "beta_c", "x", c, "y", bv);
    if (!bc) return -1;
    c = bc->outs[0];
  }
  if (av) {
    if (!c) {
      op = mgopt__imp_op(I, "mul", 1, 0);
      if (!op || mgopt_op_set_operand(op, "x", y) || mgopt_op_set_operand(op, "y", av)) return -1;
      return mgopt__imp_done(I, op);
    }
    op = mgopt__imp_gemm_step(I, "mul", "alpha_ab", "x", y, "y", av);
    if (!op) return -1;
    y = op->outs[0];
  }
  op = mgopt__imp_op(I, "add", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", y) || mgopt_op_set_operand(op, "y", c)) return -1;
  return mgopt__imp_done(I, op);
}

/* linear: Gemm(transB) for a 2-d input, else MatMul + Add; a 2-d weight is
   written transposed (a constant as a transposed initializer, else through a
   Transpose node). */
/* ---------------------------------------------------------------- fused activations

   A conv or linear whose fused_activation is relu or relu6 is written as
   its plain nodes followed by Relu, or Clip(0, 6): the node that wrote the
   op's output writes a fresh name instead and the activation writes the
   output. Nodes [first, end) of the graph being written are the op's. */
static const char *mgopt__exw_fused_act(const mgopt_op *op) {
  const char *a = mgopt_op_get_string(op, "fused_activation", NULL);
  if (!a || strcmp(a, "none") == 0 || strcmp(a, "relu") == 0 || strcmp(a, "relu6") == 0) return NULL;
  return "fused_activation other than none, relu or relu6";
}

MGOPT__PRIVATE mgopt_status mgopt__exp_fused_activation(mgopt__exp *E, const mgopt_op *op, int64_t first) {
  const char *a = mgopt_op_get_string(op, "fused_activation", NULL), *out, *pre, *ins[3];
  mgopt_onnx_node *nodes, *n;
  int64_t k, j, found = 0;
  int relu6;
  if (!a || strcmp(a, "none") == 0 || op->nouts != 1) return MGOPT_OK;
  relu6 = strcmp(a, "relu6") == 0;
  out = mgopt__exp_vname(op->outs[0]);
  pre = mgopt__exp_fresh(E, out);
  if (!pre) return mgopt__exp_nomem(E);
  nodes = (mgopt_onnx_node *)E->g->nodes.data;
  for (k = E->g->nodes.n - 1; k >= first && !found; k--)
    for (j = 0; j < nodes[k].noutputs; j++)
      if (nodes[k].outputs[j].len == strlen(out) && memcmp(nodes[k].outputs[j].ptr, out, strlen(out)) == 0) {
        nodes[k].outputs[j] = mgopt__exp_s(pre);
        found = 1;
        break;
      }
  if (!found) return mgopt__exp_fail(E, MGOPT_ERR_UNSUPPORTED, "fused activation: no node writes '%s'", out);
  ins[0] = pre;
  if (relu6 && E->opset >= 11) {
    mgopt_dtype dt = (mgopt_dtype)op->outs[0]->type.dtype;
    ins[1] = mgopt__exp_const(E, "clip_min", mgopt_tensor_new_scalar_f64(E->p, dt, 0.0));
    ins[2] = mgopt__exp_const(E, "clip_max", mgopt_tensor_new_scalar_f64(E->p, dt, 6.0));
    if (!ins[1] || !ins[2]) return mgopt__exp_nomem(E);
  }
  n = mgopt__exp_node(E, relu6 ? "Clip" : "Relu", "", NULL);
  if (!n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, ins, relu6 && E->opset >= 11 ? 3 : 1) ||
      !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &out, 1))
    return mgopt__exp_nomem(E);
  if (relu6 && E->opset < 11 && (!mgopt__exp_afloat(E, n, "min", 0.0) || !mgopt__exp_afloat(E, n, "max", 6.0)))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

static const char *mgopt__exw_linear(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "weight");
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x || !w) return "an operand is missing";
  if (mgopt__exw_fused_act(op)) return mgopt__exw_fused_act(op);
  return w->type.rank == 2 ? NULL : "weight of rank other than 2";
}

/* The transpose of the 2-d whole-byte constant t (what
   mgopt__exp_linear_folds_weight accepts): when t was made as a transpose
   (fuse_matmul_weight_bias), the bytes it was made from, without copying;
   NULL only when memory ran out. */
static mgopt_tensor *mgopt__exp_transposed(mgopt__exp *E, mgopt_tensor *t) { return mgopt__tensor_transpose2d(E->p, t); }

MGOPT__PRIVATE int mgopt__exp_linear_folds_weight(const mgopt_op *op) {
  const mgopt_value *x = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "weight"), *b = mgopt_op_operand(op, "bias");
  const mgopt_tensor *t = w ? mgopt_value_const(w) : NULL;
  int bits = t ? mgopt_dtype_bits((mgopt_dtype)t->dtype) : 0;
  if (op->kind != MGOPT_OP_linear || !x || (x->type.rank == 2 && (!b || b->type.rank == 1))) return 0;
  return t && t->rank == 2 && bits >= 8 && bits % 8 == 0 && t->dtype != MGOPT_DT_STRING;
}

static mgopt_status mgopt__exp_linear(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "weight"), *b = mgopt_op_operand(op, "bias");
  const char *ins[3];
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_vname(w);
  if (x->type.rank == 2 && (!b || b->type.rank == 1)) {
    ins[2] = b ? mgopt__exp_vname(b) : NULL;
    n = mgopt__exp_simple(E, op, m->onnx, ins, b ? 3 : 2);
    if (!n || !mgopt__exp_aint(E, n, "transB", 1)) return mgopt__exp_nomem(E);
    /* before opset 7 a bias of another shape than Y's needs broadcast = 1 */
    if (b && E->opset < 7 && !mgopt__exp_aint(E, n, "broadcast", 1)) return mgopt__exp_nomem(E);
    return MGOPT_OK;
  }
  {
    /* a constant weight goes out transposed, and alone when nothing else
       reads it (export.c asks mgopt__exp_linear_folds_weight too) */
    int folds = mgopt__exp_linear_folds_weight(op);
    mgopt_tensor *tw = folds ? mgopt__exp_transposed(E, mgopt_value_const(w)) : NULL;
    const char *wt = tw ? mgopt__exp_const(E, ins[1], tw) : folds ? NULL : mgopt__exp_fresh(E, ins[1]);
    const char *mm = b ? mgopt__exp_fresh(E, mgopt__exp_vname(op->outs[0])) : NULL;
    const char *ins2[2];
    mgopt_onnx_node *t;
    if (!wt) return mgopt__exp_nomem(E);
    if (!tw) {
      int64_t perm[2] = {1, 0};
      t = mgopt__exp_node(E, "Transpose", "", NULL);
      if (!t || !mgopt__exp_set_io(E, &t->inputs, &t->ninputs, &ins[1], 1) ||
          !mgopt__exp_set_io(E, &t->outputs, &t->noutputs, &wt, 1) || !mgopt__exp_aints(E, t, "perm", perm, 2))
        return mgopt__exp_nomem(E);
    }
    ins2[0] = ins[0];
    ins2[1] = wt;
    if (!b) return mgopt__exp_done(E, mgopt__exp_simple(E, op, "MatMul", ins2, 2));
    t = mgopt__exp_node(E, "MatMul", "", NULL);
    if (!mm || !t || !mgopt__exp_set_io(E, &t->inputs, &t->ninputs, ins2, 2) ||
        !mgopt__exp_set_io(E, &t->outputs, &t->noutputs, &mm, 1))
      return mgopt__exp_nomem(E);
    ins2[0] = mm;
    ins2[1] = mgopt__exp_vname(b);
    return mgopt__exp_done(E, mgopt__exp_simple(E, op, "Add", ins2, 2));
  }
}

/* ---------------------------------------------------------------- convolutions and pools */

/* Spatial attributes shared by Conv, ConvTranspose and the pools: strides,
   dilations and MIL pad [b0, e0, b1, e1, ...] from ONNX [b0, b1, ..., e0, e1, ...].
   Returns 0 when the auto_pad mode has no exact MIL form. */
static int mgopt__imp_spatial(mgopt__imp *I, mgopt_op *op, int64_t nsp, int with_dil) {
  const int64_t *v = NULL;
  int64_t n, i, *pad;
  const char *pad_type = "custom";
  const mgopt_onnx_attribute *ap = mgopt__imp_attr(I->node, "auto_pad");
  if (ap && !mgopt__imp_streq(ap->s, "NOTSET")) {
    if (mgopt__imp_streq(ap->s, "VALID")) pad_type = "valid";
    else if (mgopt__imp_streq(ap->s, "SAME_UPPER")) pad_type = "same";
    else if (mgopt__imp_streq(ap->s, "SAME_LOWER")) pad_type = "same_lower";
    else return 0;
  }
  n = mgopt__imp_aints(I->node, "strides", &v);
  if (n >= 0 && n != nsp) return 0;
  if (n >= 0 && mgopt_op_set_ints(op, "strides", v, n)) return -1;
  n = mgopt__imp_aints(I->node, "dilations", &v);
  if (n >= 0 && n != nsp) return 0;
  if (n >= 0) {
    if (!with_dil) {
      for (i = 0; i < n; i++)
        if (v[i] != 1) return 0;
    } else if (mgopt_op_set_ints(op, "dilations", v, n)) {
      return -1;
    }
  }
  if (mgopt_op_set_string(op, "pad_type", pad_type)) return -1;
  if (strcmp(pad_type, "custom") == 0) {
    pad = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(2 * nsp + 1), 8);
    if (!pad) return -1;
    n = mgopt__imp_aints(I->node, "pads", &v);
    if (n >= 0 && n != 2 * nsp) return 0;
    for (i = 0; i < nsp; i++) {
      pad[2 * i] = n >= 0 ? v[i] : 0;
      pad[2 * i + 1] = n >= 0 ? v[nsp + i] : 0;
      if (pad[2 * i] < 0 || pad[2 * i + 1] < 0) return 0;
    }
    if (mgopt_op_set_ints(op, "pad", pad, 2 * nsp)) return -1;
  }
  return 1;
}

/* A pad_type ONNX has, with a pad list for custom padding. */
static const char *mgopt__exw_spatial(mgopt_program *p, const mgopt_op *op) {
  const char *pt = mgopt_op_get_string(op, "pad_type", NULL);
  const int64_t *v = NULL;
  int64_t k;
  if (!pt || strcmp(pt, "valid") == 0 || strcmp(pt, "same") == 0 || strcmp(pt, "same_lower") == 0) return NULL;
  if (strcmp(pt, "custom") != 0) return "unknown pad_type";
  k = mgopt_op_get_ints(p, op, "pad", &v);
  return k < 0 || k % 2 || k > 2 * MGOPT_MAX_RANK ? "custom padding without a pad list" : NULL;
}

/* strides, dilations and MIL's pad_type/pad [b0, e0, b1, e1, ...] as ONNX auto_pad/pads [b0, b1, ..., e0, e1, ...] */
static mgopt_status mgopt__exp_spatial(mgopt__exp *E, const mgopt_op *op, mgopt_onnx_node *n, int with_dil) {
  const int64_t *v = NULL;
  int64_t k;
  size_t len = 0;
  const char *pt = mgopt_op_get_string(op, "pad_type", &len);
  if ((k = mgopt_op_get_ints(E->p, op, "strides", &v)) >= 0 && !mgopt__exp_aints(E, n, "strides", v, k))
    return mgopt__exp_nomem(E);
  if (with_dil && (k = mgopt_op_get_ints(E->p, op, "dilations", &v)) >= 0 && !mgopt__exp_aints(E, n, "dilations", v, k))
    return mgopt__exp_nomem(E);
  if (!pt || strcmp(pt, "valid") == 0) {
    if (!mgopt__exp_astr(E, n, "auto_pad", "VALID")) return mgopt__exp_nomem(E);
  } else if (strcmp(pt, "same") == 0) {
    if (!mgopt__exp_astr(E, n, "auto_pad", "SAME_UPPER")) return mgopt__exp_nomem(E);
  } else if (strcmp(pt, "same_lower") == 0) {
    if (!mgopt__exp_astr(E, n, "auto_pad", "SAME_LOWER")) return mgopt__exp_nomem(E);
  } else if (strcmp(pt, "custom") == 0) {
    int64_t i, m, pads[2 * MGOPT_MAX_RANK];
    k = mgopt_op_get_ints(E->p, op, "pad", &v);
    m = k / 2;
    for (i = 0; i < m; i++) {
      pads[i] = v[2 * i];
      pads[m + i] = v[2 * i + 1];
    }
    if (!mgopt__exp_aints(E, n, "pads", pads, k)) return mgopt__exp_nomem(E);
  }
  return MGOPT_OK;
}

/* The canonical op built detached (so a mode without an exact form leaves nothing behind), now named after the node and appended. */
static int mgopt__imp_append(mgopt__imp *I, mgopt_op *op) {
  if (I->node->name.len) op->name = mgopt__imp_intern(I, I->node->name);
  op->outs[0]->name = mgopt__imp_intern(I, I->node->outputs[0]);
  mgopt_op_append(op, I->b);
  return mgopt__imp_done(I, op);
}

/* ConvTranspose's output_padding and output_shape as conv_transpose's pad and
   output_shape (op has the node's spatial attributes already). The output is
   the natural size (in - 1) * stride + (k - 1) * dilation + 1 - pads, and
   output_padding adds that many positions at the end. A given output_shape
   makes the pads: total = natural(no pads) + output_padding - output_shape,
   begin = total - total / 2 and end = total / 2 when total >= 0 (ONNX's rule
   for auto_pad NOTSET), no pads and the output extended at the end when
   total < 0. The positions past the natural size get no input: they hold the
   bias alone. conv_transpose's output_shape holds only an extension by less
   than one stride (its kernel's rule), so a larger one, padding given with
   output_shape, auto_pad other than NOTSET/VALID, or a dim of unknown size
   stays opaque. 1 mapped, 0 opaque, -1 error. */
static int mgopt__imp_convt_shape(mgopt__imp *I, mgopt_op *op, const mgopt_value *x, const mgopt_value *w, int64_t sp) {
  const int64_t *op_pad = NULL, *os = NULL, *st = NULL, *dl = NULL, *pd = NULL;
  int64_t nop = mgopt__imp_aints(I->node, "output_padding", &op_pad), nos = mgopt__imp_aints(I->node, "output_shape", &os);
  int64_t nst = mgopt__imp_aints(I->node, "strides", &st), ndl = mgopt__imp_aints(I->node, "dilations", &dl), i;
  int64_t pad[2 * MGOPT_MAX_RANK], target[MGOPT_MAX_RANK];
  const char *pt = mgopt_op_get_string(op, "pad_type", NULL);
  int extend = 0;
  if (nop < 0 && nos < 0) return 1;
  if (sp < 1 || sp > MGOPT_MAX_RANK || !pt || (strcmp(pt, "custom") != 0 && strcmp(pt, "valid") != 0)) return 0;
  if ((nop >= 0 && nop != sp) || (nos >= 0 && nos != sp && nos != sp + 2)) return 0;
  if (strcmp(pt, "custom") == 0 && mgopt_op_get_ints(I->p, op, "pad", &pd) != 2 * sp) return 0;
  for (i = 0; i < sp; i++) {
    mgopt_dim in = x->type.dims[2 + i], kk = w->type.dims[2 + i];
    int64_t s = nst >= 0 ? st[i] : 1, d = ndl >= 0 ? dl[i] : 1, opd = nop >= 0 ? op_pad[i] : 0, nat0, nat;
    int64_t pb = pd ? pd[2 * i] : 0, pe = pd ? pd[2 * i + 1] : 0;
    if (!mgopt_dim_is_static(in) || !mgopt_dim_is_static(kk) || in.v < 1 || in.v > ((int64_t)1 << 30) || kk.v < 1 ||
        kk.v > ((int64_t)1 << 30) || s < 1 || s > ((int64_t)1 << 30) || d < 1 || d > ((int64_t)1 << 30) || opd < 0 ||
        opd >= s)
      return 0;
    nat0 = (in.v - 1) * s + (kk.v - 1) * d + 1;
    if (nos >= 0) {
      int64_t o = os[nos - sp + i], total;
      if (pb || pe || o < 1 || o > ((int64_t)1 << 40)) return 0;
      total = nat0 + opd - o;
      if (total >= 0) {
        pb = total - total / 2;
        pe = total / 2;
      }
      nat = nat0 - pb - pe;
      if (nat < 1 || o < nat || o - nat >= s) return 0;
      target[i] = o;
    } else {
      nat = nat0 - pb - pe;
      if (nat < 1) return 0;
      target[i] = nat + opd;
    }
    pad[2 * i] = pb;
    pad[2 * i + 1] = pe;
    if (target[i] != nat) extend = 1;
  }
  if (nos >= 0 && nos == sp + 2) {
    mgopt_dim n0 = x->type.dims[0];
    if (!mgopt_dim_is_static(n0) || os[0] != n0.v) return 0;
    if (!mgopt_dim_is_static(w->type.dims[1]) || os[1] != w->type.dims[1].v * mgopt__imp_aint(I->node, "group", 1))
      return 0;
  }
  if (mgopt_op_set_string(op, "pad_type", "custom") || mgopt_op_set_ints(op, "pad", pad, 2 * sp)) return -1;
  if (extend && mgopt_op_set_ints(op, "output_shape", target, sp)) return -1;
  return 1;
}

static int mgopt__imp_conv(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *w = mgopt__imp_in(I, 1), *bias = mgopt__imp_in(I, 2);
  int r = mgopt__imp_rank(x), k;
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || !w || w->type.dtype != x->type.dtype || r < 3 || mgopt__imp_rank(w) != r) return 0;
  if (bias && bias->type.dtype != x->type.dtype) return 0;
  {
    const int64_t *ks = NULL;
    int64_t nk = mgopt__imp_aints(I->node, "kernel_shape", &ks), i;
    if (nk >= 0) {
      if (nk != r - 2) return 0;
      for (i = 0; i < nk; i++)
        if (!mgopt_dim_is_static(w->type.dims[i + 2]) || w->type.dims[i + 2].v != ks[i]) return 0;
    }
  }
  /* build detached first so a mode without an exact form leaves nothing behind */
  op = mgopt_op_new(I->p, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op) return -1;
  k = mgopt__imp_spatial(I, op, r - 2, 1);
  if (k <= 0) return k;
  if (m->kind == MGOPT_OP_conv_transpose && (k = mgopt__imp_convt_shape(I, op, x, w, r - 2)) <= 0) return k;
  if (mgopt_op_set_int(op, "groups", mgopt__imp_aint(I->node, "group", 1))) return -1;
  if (mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "weight", w)) return -1;
  if (bias && mgopt_op_set_operand(op, "bias", bias)) return -1;
  return mgopt__imp_append(I, op);
}

/* conv_transpose's output_shape as ONNX's output_padding: per spatial dim,
   how far output_shape extends the natural size (less than one stride, with
   custom or valid padding and static sizes). The count of spatial dims, 0
   without an extension, -1 when output_shape has no such form. */
static int64_t mgopt__exp_convt_extra(mgopt_program *p, const mgopt_op *op, int64_t *extra) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "weight");
  const int64_t *os = NULL, *st = NULL, *dl = NULL, *pd = NULL;
  int64_t nos, sp, i, nst, ndl, npd = -1, any = 0;
  const char *pt = mgopt_op_get_string(op, "pad_type", NULL);
  if (!mgopt_op_attr(op, "output_shape")) return 0;
  {
    /* output_shape restates the output's static shape; same padding gives that shape alone */
    const mgopt_type *ot = &op->outs[0]->type;
    int64_t k = mgopt_op_get_ints(p, op, "output_shape", &os), q;
    if (k < 0 || !mgopt_type_is_static(ot) || k > ot->rank) return -1;
    for (q = 0; q < k; q++)
      if (os[q] != ot->dims[ot->rank - k + q].v) return -1;
    if (pt && (strcmp(pt, "same") == 0 || strcmp(pt, "same_lower") == 0)) return 0;
  }
  if (!x || !w || x->type.rank < 3 || x->type.rank > MGOPT_MAX_RANK || w->type.rank != x->type.rank) return -1;
  sp = x->type.rank - 2;
  nos = mgopt_op_get_ints(p, op, "output_shape", &os);
  if (nos != sp && nos != sp + 2) return -1;
  if (pt && strcmp(pt, "valid") != 0 && strcmp(pt, "custom") != 0) return -1;
  if (pt && strcmp(pt, "custom") == 0 && (npd = mgopt_op_get_ints(p, op, "pad", &pd)) != 2 * sp) return -1;
  nst = mgopt_op_get_ints(p, op, "strides", &st);
  ndl = mgopt_op_get_ints(p, op, "dilations", &dl);
  if ((nst >= 0 && nst != sp) || (ndl >= 0 && ndl != sp)) return -1;
  if (nos == sp + 2) {
    const mgopt_type *ot = &op->outs[0]->type;
    if (ot->rank != x->type.rank || !mgopt_dim_is_static(ot->dims[0]) || !mgopt_dim_is_static(ot->dims[1]) ||
        os[0] != ot->dims[0].v || os[1] != ot->dims[1].v)
      return -1;
  }
  for (i = 0; i < sp; i++) {
    mgopt_dim in = x->type.dims[2 + i], kk = w->type.dims[2 + i];
    int64_t s = nst >= 0 ? st[i] : 1, d = ndl >= 0 ? dl[i] : 1, nat, o = os[nos - sp + i];
    if (!mgopt_dim_is_static(in) || !mgopt_dim_is_static(kk) || in.v < 1 || in.v > ((int64_t)1 << 30) || kk.v < 1 ||
        kk.v > ((int64_t)1 << 30) || s < 1 || s > ((int64_t)1 << 30) || d < 1 || d > ((int64_t)1 << 30))
      return -1;
    nat = (in.v - 1) * s + (kk.v - 1) * d + 1 - (npd > 0 ? pd[2 * i] + pd[2 * i + 1] : 0);
    if (o < nat || o - nat >= s) return -1;
    extra[i] = o - nat;
    any |= extra[i];
  }
  return any ? sp : 0;
}

/* A bias is Conv's (and ConvTranspose's) third input B. */
static const char *mgopt__exw_conv(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(m);
  if (!mgopt_op_operand(op, "x") || !mgopt_op_operand(op, "weight")) return "an operand is missing";
  if (mgopt__exw_fused_act(op)) return mgopt__exw_fused_act(op);
  if (op->kind == MGOPT_OP_conv_transpose && mgopt_op_attr(op, "output_shape")) {
    /* an output_shape that extends the natural size by less than a stride
       is written as output_padding; one that only restates it is left out */
    int64_t extra[MGOPT_MAX_RANK];
    if (mgopt__exp_convt_extra(p, op, extra) < 0) return "output_shape";
  }
  return mgopt__exw_spatial(p, op);
}

static mgopt_status mgopt__exp_conv(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[3];
  mgopt_onnx_node *n;
  mgopt_status s;
  int64_t extra[MGOPT_MAX_RANK], ne = op->kind == MGOPT_OP_conv_transpose ? mgopt__exp_convt_extra(E->p, op, extra) : 0;
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_in(op, "weight");
  ins[2] = mgopt__exp_in(op, "bias");
  n = mgopt__exp_simple(E, op, m->onnx, ins, ins[2] ? 3 : 2);
  if (!n) return mgopt__exp_nomem(E);
  if ((s = mgopt__exp_spatial(E, op, n, 1)) != MGOPT_OK) return s;
  if (!mgopt__exp_aint(E, n, "group", mgopt_op_get_int(op, "groups", 1))) return mgopt__exp_nomem(E);
  if (ne > 0 && !mgopt__exp_aints(E, n, "output_padding", extra, ne)) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

static int mgopt__imp_pool(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int r = mgopt__imp_rank(x), k;
  const int64_t *ks = NULL;
  int64_t nk = mgopt__imp_aints(I->node, "kernel_shape", &ks);
  mgopt_op *op;
  int is_max = m->kind == MGOPT_OP_max_pool;
  if (!mgopt__imp_is_float(x) || r < 3 || nk != r - 2 || mgopt__imp_nout(I->node) != 1) return 0;
  if (is_max && mgopt__imp_aint(I->node, "storage_order", 0) != 0) return 0;
  op = mgopt_op_new(I->p, is_max ? "max_pool" : "avg_pool", 1, 0);
  if (!op) return -1;
  k = mgopt__imp_spatial(I, op, r - 2, 0);
  if (k <= 0) return k;
  if (mgopt_op_set_ints(op, "kernel_sizes", ks, nk) ||
      mgopt_op_set_bool(op, "ceil_mode", mgopt__imp_aint(I->node, "ceil_mode", 0) != 0))
    return -1;
  if (!is_max && mgopt_op_set_bool(op, "exclude_padding_from_average",
                                   mgopt__imp_aint(I->node, "count_include_pad", 0) == 0))
    return -1;
  if (mgopt_op_set_operand(op, "x", x)) return -1;
  return mgopt__imp_append(I, op);
}

static const char *mgopt__exw_pool(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  const int64_t *v = NULL;
  MGOPT__UNUSED(m);
  if (mgopt_op_get_ints(p, op, "kernel_sizes", &v) < 0) return "no kernel_sizes";
  return mgopt__exw_spatial(p, op);
}

static mgopt_status mgopt__exp_pool(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  const int64_t *v = NULL;
  int64_t k = mgopt_op_get_ints(E->p, op, "kernel_sizes", &v);
  mgopt_onnx_node *n;
  mgopt_status s;
  n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_aints(E, n, "kernel_shape", v, k)) return mgopt__exp_nomem(E);
  if ((s = mgopt__exp_spatial(E, op, n, 0)) != MGOPT_OK) return s;
  if (mgopt_op_get_bool(op, "ceil_mode", 0) && !mgopt__exp_aint(E, n, "ceil_mode", 1)) return mgopt__exp_nomem(E);
  if (op->kind == MGOPT_OP_avg_pool && !mgopt_op_get_bool(op, "exclude_padding_from_average", 0) &&
      !mgopt__exp_aint(E, n, "count_include_pad", 1))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* GlobalAveragePool, GlobalMaxPool: reduce_mean, reduce_max over the spatial dims, kept. */
static int mgopt__imp_global_pool(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int r = mgopt__imp_rank(x);
  int64_t axes[MGOPT_MAX_RANK], i;
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || r < 3 || r > MGOPT_MAX_RANK) return 0;
  for (i = 2; i < r; i++) axes[i - 2] = i;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_ints(op, "axes", axes, r - 2) ||
      mgopt_op_set_bool(op, "keep_dims", 1))
    return -1;
  return mgopt__imp_done(I, op);
}

/* ---------------------------------------------------------------- normalizations */

static int mgopt__imp_batchnorm(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *g = mgopt__imp_in(I, 1), *b = mgopt__imp_in(I, 2), *mean = mgopt__imp_in(I, 3),
              *v = mgopt__imp_in(I, 4);
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || !g || !b || !mean || !v || mgopt__imp_nout(I->node) != 1) return 0;
  if (mgopt__imp_aint(I->node, "training_mode", 0) || (m->since < 7 && mgopt__imp_aint(I->node, "is_test", 0) == 0))
    return 0;
  if (g->type.dtype != x->type.dtype || b->type.dtype != x->type.dtype || mean->type.dtype != x->type.dtype ||
      v->type.dtype != x->type.dtype || mgopt__imp_rank(x) < 2)
    return 0;
  op = mgopt__imp_op(I, "batch_norm", 1, 0);
  /* (double)(float): the fp32 default, rounded even where float constants keep
     double precision (FLT_EVAL_METHOD 1: s390x at -std=c99) */
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "mean", mean) ||
      mgopt_op_set_operand(op, "variance", v) || mgopt_op_set_operand(op, "gamma", g) ||
      mgopt_op_set_operand(op, "beta", b) ||
      mgopt_op_set_float(op, "epsilon", mgopt__imp_afloat(I->node, "epsilon", (double)(float)1e-5f)))
    return -1;
  return mgopt__imp_done(I, op);
}

/* BatchNormalization and InstanceNormalization need their scale and offset:
   a gamma or beta the op leaves out (1 and 0) is written as a constant of
   the channel count, known from x's dim 1 or a 1-d operand. */
static int64_t mgopt__exp_channels(const mgopt_op *op) {
  static const char *const slots[4] = {"mean", "variance", "gamma", "beta"};
  mgopt_value *x = mgopt_op_operand(op, "x");
  int k;
  if (x && x->type.rank >= 2 && mgopt_dim_is_static(x->type.dims[1])) return x->type.dims[1].v;
  for (k = 0; k < 4; k++) {
    mgopt_value *v = mgopt_op_operand(op, slots[k]);
    if (v && v->type.rank == 1 && mgopt_dim_is_static(v->type.dims[0])) return v->type.dims[0].v;
  }
  return -1;
}

static const char *mgopt__exw_scale_offset(const mgopt_op *op) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  if (!x) return "an operand is missing";
  if (x->type.rank >= 0 && x->type.rank < (op->kind == MGOPT_OP_batch_norm ? 2 : 3)) return "an input of too low a rank";
  if ((!mgopt_op_operand(op, "gamma") || !mgopt_op_operand(op, "beta")) &&
      (mgopt__exp_channels(op) < 0 || !mgopt_dtype_is_float((mgopt_dtype)x->type.dtype)))
    return "gamma or beta left out, with an unknown channel count";
  return NULL;
}

/* The operand in `slot`, or a constant of x's dtype and `shape` filled with v in its place. */
static const char *mgopt__exp_or_filled(mgopt__exp *E, const mgopt_op *op, const char *slot, int32_t rank,
                                        const int64_t *shape, double v) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  mgopt_tensor *t;
  int64_t i;
  char base[64];
  if (mgopt_op_operand(op, slot)) return mgopt__exp_in(op, slot);
  t = mgopt_tensor_new(E->p, (mgopt_dtype)x->type.dtype, rank, shape);
  if (!t) return NULL;
  for (i = 0; i < t->numel; i++) mgopt_tensor_set_f64(t, i, v);
  snprintf(base, sizeof base, "%.40s_%s", mgopt__exp_vname(op->outs[0]), slot);
  return mgopt__exp_const(E, base, t);
}

static const char *mgopt__exw_batchnorm(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!mgopt_op_operand(op, "mean") || !mgopt_op_operand(op, "variance")) return "an operand is missing";
  return mgopt__exw_scale_offset(op);
}

static mgopt_status mgopt__exp_batchnorm(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[5];
  int64_t c = mgopt__exp_channels(op);
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_or_filled(E, op, "gamma", 1, &c, 1.0);
  ins[2] = mgopt__exp_or_filled(E, op, "beta", 1, &c, 0.0);
  ins[3] = mgopt__exp_in(op, "mean");
  ins[4] = mgopt__exp_in(op, "variance");
  if (!ins[1] || !ins[2]) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, ins, 5);
  if (!n || !mgopt__exp_afloat(E, n, "epsilon", mgopt_op_get_float(op, "epsilon", 1e-5))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

static int mgopt__imp_instancenorm(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *g = mgopt__imp_in(I, 1), *b = mgopt__imp_in(I, 2);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || !g || !b || mgopt__imp_rank(x) < 3 || g->type.dtype != x->type.dtype) return 0;
  op = mgopt__imp_op(I, "instance_norm", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "gamma", g) ||
      mgopt_op_set_operand(op, "beta", b) ||
      mgopt_op_set_float(op, "epsilon", mgopt__imp_afloat(I->node, "epsilon", (double)(float)1e-5f)))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_instancenorm(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt__exw_scale_offset(op);
}

static mgopt_status mgopt__exp_instancenorm(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[3];
  int64_t c = mgopt__exp_channels(op);
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_or_filled(E, op, "gamma", 1, &c, 1.0);
  ins[2] = mgopt__exp_or_filled(E, op, "beta", 1, &c, 0.0);
  if (!ins[1] || !ins[2]) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, ins, 3);
  if (!n || !mgopt__exp_afloat(E, n, "epsilon", mgopt_op_get_float(op, "epsilon", 1e-5))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

static int mgopt__imp_layernorm(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *g = mgopt__imp_in(I, 1), *b = mgopt__imp_in(I, 2);
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", -1), axes[64], i, n = 0;
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || !g || r < 1 || r > 64 || mgopt__imp_nout(I->node) != 1) return 0;
  if (mgopt__imp_aint(I->node, "stash_type", 1) != 1) return 0;
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return 0;
  for (i = axis; i < r; i++) axes[n++] = i;
  /* gamma and beta must cover exactly the normalised dims (no broadcasting from a lower rank) */
  if (mgopt__imp_rank(g) != n || (b && mgopt__imp_rank(b) != n)) return 0;
  op = mgopt__imp_op(I, "layer_norm", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "gamma", g) ||
      mgopt_op_set_ints(op, "axes", axes, n) ||
      mgopt_op_set_float(op, "epsilon", mgopt__imp_afloat(I->node, "epsilon", (double)(float)1e-5f)))
    return -1;
  if (b && mgopt_op_set_operand(op, "beta", b)) return -1;
  return mgopt__imp_done(I, op);
}

/* LayerNormalization normalizes the dims from `axis` on: layer_norm's axes
   must be the trailing dims, in order (no axes: all of them). Its scale is
   required: a gamma the op leaves out is written as ones over those dims. */
static int64_t mgopt__exp_layernorm_axis(mgopt_program *p, const mgopt_op *op) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  int64_t r = x ? x->type.rank : -1, j, k;
  const int64_t *v = NULL;
  if (r < 1) return -1;
  k = mgopt_op_get_ints(p, op, "axes", &v);
  if (k < 0) return 0;
  if (k < 1 || k > r) return -1;
  for (j = 0; j < k; j++)
    if ((v[j] < 0 ? v[j] + r : v[j]) != r - k + j) return -1;
  return r - k;
}

static const char *mgopt__exw_layernorm(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  int64_t axis = mgopt__exp_layernorm_axis(p, op), j;
  MGOPT__UNUSED(m);
  if (axis < 0) return "axes not the trailing dims";
  if (!mgopt_op_operand(op, "gamma")) {
    if (!mgopt_dtype_is_float((mgopt_dtype)x->type.dtype)) return "gamma left out";
    for (j = axis; j < x->type.rank; j++)
      if (!mgopt_dim_is_static(x->type.dims[j])) return "gamma left out, over dims of unknown size";
  }
  return NULL;
}

static mgopt_status mgopt__exp_layernorm(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  int64_t axis = mgopt__exp_layernorm_axis(E->p, op), shape[MGOPT_MAX_RANK], j;
  const char *ins[3];
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  for (j = axis; j < x->type.rank && j - axis < MGOPT_MAX_RANK; j++) shape[j - axis] = x->type.dims[j].v;
  ins[1] = mgopt__exp_or_filled(E, op, "gamma", (int32_t)(x->type.rank - axis), shape, 1.0);
  ins[2] = mgopt__exp_in(op, "beta");
  if (!ins[1]) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, ins, ins[2] ? 3 : 2);
  if (!n || !mgopt__exp_aint(E, n, "axis", axis) ||
      !mgopt__exp_afloat(E, n, "epsilon", mgopt_op_get_float(op, "epsilon", 1e-5)))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- Softmax

   Before opset 13 the input is coerced to 2-d at axis (default 1): the same
   as MIL's softmax only over the last axis. From 13 on, any axis (default -1). */

static int mgopt__imp_softmax(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", m->since >= 13 ? -1 : 1);
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || r < 1) return 0;
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return 0;
  if (m->since < 13 && axis != r - 1) return 0;
  op = mgopt__imp_op(I, "softmax", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_int(op, "axis", axis)) return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_softmax(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  int64_t axis = mgopt_op_get_int(op, "axis", -1);
  int r = op->outs[0]->type.rank;
  MGOPT__UNUSED(p);
  if (m->since < 13 && !(axis == -1 || (r > 0 && axis == r - 1))) return "softmax over an inner axis before opset 13";
  return NULL;
}

static mgopt_status mgopt__exp_softmax(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  int64_t axis = mgopt_op_get_int(op, "axis", -1);
  mgopt_onnx_node *n;
  n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_aint(E, n, "axis", axis)) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- Resize, Upsample

   MIL's four resampling ops over the last two dims, each the exact form of
   some ONNX modes (kernels/resample.c gives their coordinates):
     scales given, nearest, asymmetric + floor        upsample_nearest_neighbor
       (Upsample 7-9 and Resize 10: scales >= 1, where their nearest is floor)
     scales given, linear, half_pixel / align_corners upsample_bilinear(align_corners)
     sizes given, nearest, asymmetric + floor         resize_nearest_neighbor
     sizes given, linear, asymmetric / half_pixel /   resize_bilinear(DEFAULT /
       align_corners                                    UNALIGN_CORNERS / STRICT_ALIGN_CORNERS)
   pytorch_half_pixel is half_pixel when no resampled output dim is 1.
   Scales must give whole output sizes (in * scale integral): MIL's bilinear
   grid takes its spacing from the sizes, ONNX's from the scale, and these
   agree only then; a nearest resize by sizes must enlarge each dim by a whole
   factor (ONNX computes i / (out / in) in floating point, which is floor(i *
   in / out) for certain only then). The leading dims keep their size
   (scale 1). Everything else stays opaque: cubic, the other coordinate
   modes and nearest modes, antialias, exclude_outside, axes, a
   keep_aspect_ratio_policy other than stretch, scales or sizes known only at
   run time. Export writes the form the op came from: scales for upsample_*,
   sizes for resize_*, with the modes above. */

#define MGOPT__RS_BIG ((int64_t)1 << 30)

/* 1 if in * s is a whole number in [1, 2^30] (*out set). */
static int mgopt__rs_whole(int64_t in, double s, int64_t *out) {
  double v = (double)in * s;
  if (!(v >= 1.0) || v > (double)MGOPT__RS_BIG || v != floor(v)) return 0;
  *out = (int64_t)v;
  return 1;
}

static int mgopt__imp_resize(mgopt__imp *I, const mgopt__onnx_map *m) {
  const mgopt_onnx_node *n = I->node;
  mgopt_value *x = mgopt__imp_in(I, 0), *sv = NULL, *zv = NULL;
  int r = mgopt__imp_rank(x), linear, j, by_sizes = 0;
  double sc[MGOPT_MAX_RANK];
  int64_t out[2], in[2];
  const char *type, *ctm = "asymmetric";
  mgopt_op *op;
  mgopt_tensor *t;
  if (!mgopt__imp_is_float(x) || r < 3 || r > MGOPT_MAX_RANK || mgopt__imp_nout(n) != 1) return 0;
  for (j = 0; j < 2; j++) {
    mgopt_dim d = x->type.dims[r - 2 + j];
    if (!mgopt_dim_is_static(d) || d.v < 1 || d.v > MGOPT__RS_BIG) return 0;
    in[j] = d.v;
  }
  if (mgopt__imp_astr(n, "mode", "nearest") || !mgopt__imp_attr(n, "mode")) linear = 0;
  else if (mgopt__imp_astr(n, "mode", "linear") || (I->opset < 10 && mgopt__imp_astr(n, "mode", "bilinear"))) linear = 1;
  else return 0;
  if (I->opset >= 11) {
    const mgopt_onnx_attribute *a = mgopt__imp_attr(n, "coordinate_transformation_mode");
    if (a && a->type != MGOPT_ONNX_ATTR_STRING) return 0;
    ctm = "half_pixel";
    if (a) {
      static const char *const modes[4] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"};
      int k;
      for (k = 0; k < 4 && !mgopt__imp_streq(a->s, modes[k]); k++) {
      }
      if (k == 4) return 0;
      ctm = modes[k];
    }
    if (!linear && (strcmp(ctm, "asymmetric") != 0 || !mgopt__imp_astr(n, "nearest_mode", "floor"))) return 0;
    if (mgopt__imp_aint(n, "exclude_outside", 0) || mgopt__imp_aint(n, "antialias", 0) || mgopt__imp_attr(n, "axes"))
      return 0;
    if (mgopt__imp_attr(n, "keep_aspect_ratio_policy") && !mgopt__imp_astr(n, "keep_aspect_ratio_policy", "stretch"))
      return 0;
    zv = mgopt__imp_in(I, 3);
    sv = mgopt__imp_in(I, 2);
    if (zv) {
      mgopt_tensor *st = sv ? mgopt_value_const(sv) : NULL;
      if (sv && (!st || st->numel != 0)) return 0; /* scales and sizes both given */
      by_sizes = 1;
    }
  } else if (I->opset >= 9) {
    sv = mgopt__imp_in(I, 1);
  }
  if (linear && I->opset < 11) return 0; /* Upsample and Resize 10 interpolate asymmetrically */
  if (by_sizes) {
    t = mgopt_value_const(zv);
    if (!t || t->numel != r || !mgopt_dtype_is_int((mgopt_dtype)t->dtype) || !mgopt_tensor_data(I->p, t)) return 0;
    for (j = 0; j < r - 2; j++)
      if (!mgopt_dim_is_static(x->type.dims[j]) || mgopt_tensor_get_i64(t, j) != x->type.dims[j].v) return 0;
    for (j = 0; j < 2; j++) {
      out[j] = mgopt_tensor_get_i64(t, r - 2 + j);
      if (out[j] < 1 || out[j] > MGOPT__RS_BIG) return 0;
      if (!linear && out[j] % in[j] != 0) return 0;
    }
  } else {
    if (I->opset < 9) {
      const mgopt_onnx_attribute *a = mgopt__imp_attr(n, "scales");
      if (!a || a->type != MGOPT_ONNX_ATTR_FLOATS || a->nfloats != r) return 0;
      for (j = 0; j < r; j++) sc[j] = (double)a->floats[j];
    } else {
      t = sv ? mgopt_value_const(sv) : NULL;
      if (!t || t->numel != r || !mgopt_dtype_is_float((mgopt_dtype)t->dtype) || !mgopt_tensor_data(I->p, t)) return 0;
      for (j = 0; j < r; j++) sc[j] = mgopt_tensor_get_f64(t, j);
    }
    for (j = 0; j < r - 2; j++)
      if (sc[j] != 1.0) return 0;
    for (j = 0; j < 2; j++) {
      if (!mgopt__rs_whole(in[j], sc[r - 2 + j], &out[j])) return 0;
      if (I->opset < 11 && sc[r - 2 + j] < 1.0) return 0;
    }
  }
  if (strcmp(ctm, "pytorch_half_pixel") == 0)
    for (j = 0; j < 2; j++)
      if (out[j] == 1 && in[j] != 1) return 0;
  if (!linear) type = by_sizes ? "resize_nearest_neighbor" : "upsample_nearest_neighbor";
  else type = by_sizes ? "resize_bilinear" : "upsample_bilinear";
  if (!by_sizes && linear && strcmp(ctm, "asymmetric") == 0) return 0;
  op = mgopt__imp_op(I, type, 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x)) return -1;
  if (by_sizes) {
    if (mgopt_op_set_int(op, "target_size_height", out[0]) || mgopt_op_set_int(op, "target_size_width", out[1])) return -1;
    if (linear && mgopt_op_set_string(op, "sampling_mode", strcmp(ctm, "align_corners") == 0 ? "STRICT_ALIGN_CORNERS"
                                                            : strcmp(ctm, "asymmetric") == 0 ? "DEFAULT"
                                                                                             : "UNALIGN_CORNERS"))
      return -1;
  } else {
    if (mgopt_op_set_float(op, "scale_factor_height", sc[r - 2]) || mgopt_op_set_float(op, "scale_factor_width", sc[r - 1]))
      return -1;
    if (linear && mgopt_op_set_bool(op, "align_corners", strcmp(ctm, "align_corners") == 0)) return -1;
  }
  MGOPT__UNUSED(m);
  return mgopt__imp_done(I, op);
}

/* What the export writes for `op` at m's opset: the ONNX modes, the output
   sizes of the two resampled dims (*out) and their input sizes (*in). A
   reason when no form is exact, NULL when one is. */
static const char *mgopt__exw_resample(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  int r, j, up = op->kind == MGOPT_OP_upsample_nearest_neighbor || op->kind == MGOPT_OP_upsample_bilinear;
  MGOPT__UNUSED(p);
  if (!x) return "an operand is missing";
  r = x->type.rank;
  if (r < 3 || r > MGOPT_MAX_RANK) return "an input of unknown rank";
  if (m->since < 11 && op->kind != MGOPT_OP_upsample_nearest_neighbor) return "Resize before opset 11 interpolates asymmetrically";
  for (j = 0; j < 2; j++) {
    mgopt_dim d = x->type.dims[r - 2 + j];
    int64_t o;
    if (!mgopt_dim_is_static(d) || d.v < 1 || d.v > MGOPT__RS_BIG) return "a resampled dim of unknown size";
    if (up) {
      double s = mgopt_op_get_float(op, j ? "scale_factor_width" : "scale_factor_height", 1.0);
      if ((double)(float)s != s) return "a scale factor that is not a float";
      if (!mgopt__rs_whole(d.v, s, &o)) return "a scale factor that does not give a whole size";
      if (m->since < 11 && s < 1.0) return "a nearest downsampling before opset 11";
    } else {
      o = mgopt_op_get_int(op, j ? "target_size_width" : "target_size_height", 1);
      if (op->kind == MGOPT_OP_resize_nearest_neighbor && o % d.v != 0) return "a nearest resize by a fraction";
      if (op->kind == MGOPT_OP_resize_bilinear && o == 1) {
        const char *sm = mgopt_op_get_string(op, "sampling_mode", NULL);
        if (sm && strcmp(sm, "ALIGN_CORNERS") == 0) return "ALIGN_CORNERS to a size of 1";
      }
    }
  }
  if (!up)
    for (j = 0; j < r - 2; j++)
      if (!mgopt_dim_is_static(x->type.dims[j])) return "a leading dim of unknown size";
  if (op->kind == MGOPT_OP_resize_bilinear) {
    const char *sm = mgopt_op_get_string(op, "sampling_mode", NULL);
    if (sm && strcmp(sm, "OFFSET_CORNERS") == 0) return "OFFSET_CORNERS";
  }
  return NULL;
}

static mgopt_status mgopt__exp_resample(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  int r = x->type.rank, j, up = op->kind == MGOPT_OP_upsample_nearest_neighbor || op->kind == MGOPT_OP_upsample_bilinear;
  int linear = op->kind == MGOPT_OP_upsample_bilinear || op->kind == MGOPT_OP_resize_bilinear;
  const char *ins[4], *base = mgopt__exp_vname(op->outs[0]);
  int64_t nin = 1, shape0 = 0;
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = ins[2] = ins[3] = "";
  if (E->opset >= 11 && E->opset < 13) {
    /* roi and scales are required inputs there: empty when unused */
    mgopt_tensor *e = mgopt_tensor_new(E->p, MGOPT_DT_FP32, 1, &shape0);
    if (!e || !(ins[1] = mgopt__exp_const(E, "resize_roi", e))) return mgopt__exp_nomem(E);
    if (!up && !(ins[2] = mgopt__exp_const(E, "resize_scales", e))) return mgopt__exp_nomem(E);
  }
  if (up) {
    int64_t rr = r;
    mgopt_tensor *t = mgopt_tensor_new(E->p, MGOPT_DT_FP32, 1, &rr);
    char nm[96];
    if (!t) return mgopt__exp_nomem(E);
    for (j = 0; j < r; j++) mgopt_tensor_set_f64(t, j, 1.0);
    mgopt_tensor_set_f64(t, r - 2, mgopt_op_get_float(op, "scale_factor_height", 1.0));
    mgopt_tensor_set_f64(t, r - 1, mgopt_op_get_float(op, "scale_factor_width", 1.0));
    snprintf(nm, sizeof nm, "%.80s_scales", base);
    if (E->opset >= 9) {
      const char *sc = mgopt__exp_const(E, nm, t);
      if (!sc) return mgopt__exp_nomem(E);
      if (E->opset >= 11) ins[2] = sc, nin = 3;
      else ins[1] = sc, nin = 2;
    }
    n = mgopt__exp_simple(E, op, m->onnx, ins, nin);
    if (!n) return mgopt__exp_nomem(E);
    if (E->opset < 9) {
      float f[MGOPT_MAX_RANK];
      for (j = 0; j < r; j++) f[j] = (float)mgopt_tensor_get_f64(t, j);
      if (!mgopt__exp_afloats(E, n, "scales", f, r)) return mgopt__exp_nomem(E);
    }
  } else {
    int64_t sz[MGOPT_MAX_RANK];
    char nm[96];
    for (j = 0; j < r - 2; j++) sz[j] = x->type.dims[j].v;
    sz[r - 2] = mgopt_op_get_int(op, "target_size_height", 1);
    sz[r - 1] = mgopt_op_get_int(op, "target_size_width", 1);
    snprintf(nm, sizeof nm, "%.80s_sizes", base);
    if (!(ins[3] = mgopt__exp_i64_const(E, nm, sz, r))) return mgopt__exp_nomem(E);
    n = mgopt__exp_simple(E, op, m->onnx, ins, 4);
    if (!n) return mgopt__exp_nomem(E);
  }
  if (!mgopt__exp_astr(E, n, "mode", linear ? "linear" : "nearest")) return mgopt__exp_nomem(E);
  if (E->opset >= 11) {
    const char *ctm = "asymmetric";
    if (op->kind == MGOPT_OP_upsample_bilinear) {
      ctm = mgopt_op_get_bool(op, "align_corners", 1) ? "align_corners" : "half_pixel";
    } else if (op->kind == MGOPT_OP_resize_bilinear) {
      const char *sm = mgopt_op_get_string(op, "sampling_mode", NULL);
      ctm = !sm || strcmp(sm, "DEFAULT") == 0 ? "asymmetric" : strcmp(sm, "UNALIGN_CORNERS") == 0 ? "half_pixel" : "align_corners";
    }
    if (!mgopt__exp_astr(E, n, "coordinate_transformation_mode", ctm)) return mgopt__exp_nomem(E);
    if (!linear && !mgopt__exp_astr(E, n, "nearest_mode", "floor")) return mgopt__exp_nomem(E);
  }
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- Einsum

   Einsum (opset 12 on) is einsum with ONNX's equation language as it is
   (core/infer/reduce.c reads it): every operand of one dtype, known ranks,
   numeric dtypes the kernel computes (floats, integers of 8 bits or more). */

static int mgopt__imp_einsum(mgopt__imp *I, const mgopt__onnx_map *m) {
  int64_t n = I->node->ninputs, i;
  const mgopt_onnx_attribute *a = mgopt__imp_attr(I->node, "equation");
  mgopt_value *vals[MGOPT__EINSUM_MAX_OPS];
  int32_t ranks[MGOPT__EINSUM_MAX_OPS];
  mgopt__einsum e;
  mgopt_op *op;
  char eq[256];
  MGOPT__UNUSED(m);
  if (n < 1 || n > MGOPT__EINSUM_MAX_OPS || !a || a->type != MGOPT_ONNX_ATTR_STRING || a->s.len >= sizeof eq ||
      mgopt__imp_nout(I->node) != 1)
    return 0;
  for (i = 0; i < n; i++) {
    vals[i] = mgopt__imp_in(I, i);
    if (!vals[i] || vals[i]->type.kind != MGOPT_TYPE_TENSOR || vals[i]->type.dtype != vals[0]->type.dtype ||
        vals[i]->type.rank < 0)
      return 0;
    ranks[i] = vals[i]->type.rank;
  }
  if (!mgopt__imp_is_float(vals[0]) && !(mgopt_dtype_is_int((mgopt_dtype)vals[0]->type.dtype) &&
                                        mgopt_dtype_bits((mgopt_dtype)vals[0]->type.dtype) >= 8))
    return 0;
  if (a->s.len) memcpy(eq, a->s.ptr, a->s.len);
  eq[a->s.len] = 0;
  if (!mgopt__einsum_parse(eq, a->s.len, (int32_t)n, ranks, &e)) return 0;
  op = mgopt__imp_op(I, "einsum", 1, 0);
  if (!op || mgopt_op_set_operand_list(op, "values", vals, (int32_t)n) || mgopt_op_set_string(op, "equation", eq))
    return -1;
  return mgopt__imp_done(I, op);
}

static mgopt_status mgopt__exp_einsum(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  int32_t si = mgopt_op_slot_index(op, "values"), i;
  const char **vals = (const char **)mgopt_program_alloc(E->p, sizeof(char *) * (size_t)(op->slots[si].n + 1), 8);
  mgopt_onnx_node *n;
  if (!vals) return mgopt__exp_nomem(E);
  for (i = 0; i < op->slots[si].n; i++) vals[i] = mgopt__exp_vname(op->slots[si].uses[i].value);
  n = mgopt__exp_simple(E, op, m->onnx, vals, op->slots[si].n);
  if (!n || !mgopt__exp_astr(E, n, "equation", mgopt_op_get_string(op, "equation", NULL))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- the table */

/* LRN: local_response_norm(x, size, alpha, beta, k = bias), the same formula with alpha / size.
   MIL sums over a symmetric neighbourhood of channels: an even size (ONNX's window is then
   lopsided) and ranks other than 3 and 4 (MIL's) stay opaque. */
static int mgopt__imp_lrn(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int64_t size = mgopt__imp_aint(I->node, "size", 0);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__imp_is_float(x) || mgopt__imp_nout(I->node) != 1 || (x->type.rank != 3 && x->type.rank != 4)) return 0;
  if (size < 1 || size % 2 == 0 || size > INT32_MAX) return 0;
  op = mgopt__imp_op(I, "local_response_norm", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_int(op, "size", size) ||
      mgopt_op_set_float(op, "alpha", mgopt__imp_afloat(I->node, "alpha", (double)(float)1e-4f)) ||
      mgopt_op_set_float(op, "beta", mgopt__imp_afloat(I->node, "beta", (double)(float)0.75f)) ||
      mgopt_op_set_float(op, "k", mgopt__imp_afloat(I->node, "bias", 1.0)))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_lrn(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  int64_t size = mgopt_op_get_int(op, "size", 0);
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!mgopt_op_operand(op, "x")) return "an operand is missing";
  if (size < 1 || size > INT32_MAX) return "a size below 1";
  return NULL;
}

static mgopt_status mgopt__exp_lrn(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_aint(E, n, "size", mgopt_op_get_int(op, "size", 1)) ||
      !mgopt__exp_afloat(E, n, "alpha", mgopt_op_get_float(op, "alpha", 1e-4)) ||
      !mgopt__exp_afloat(E, n, "beta", mgopt_op_get_float(op, "beta", 0.75)) ||
      !mgopt__exp_afloat(E, n, "bias", mgopt_op_get_float(op, "k", 1.0)))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

static const mgopt__onnx_map mgopt__onnx_nn[] = {
    {"MatMul", 1, 8, MGOPT_OP_matmul, mgopt__imp_matmul, mgopt__exp_matmul, {NULL, NULL, NULL}, mgopt__exw_matmul},
    {"MatMul", 9, 0, MGOPT_OP_matmul, mgopt__imp_matmul, mgopt__exp_matmul, {NULL, NULL, NULL}, mgopt__exw_matmul},
    {"Gemm", 1, 0, MGOPT_OP_linear, mgopt__imp_gemm, mgopt__exp_linear, {NULL, NULL, NULL}, mgopt__exw_linear},
    {"Conv", 1, 0, MGOPT_OP_conv, mgopt__imp_conv, mgopt__exp_conv, {NULL, NULL, NULL}, mgopt__exw_conv},
    {"ConvTranspose", 1, 0, MGOPT_OP_conv_transpose, mgopt__imp_conv, mgopt__exp_conv, {NULL, NULL, NULL}, mgopt__exw_conv},
    {"MaxPool", 1, 0, MGOPT_OP_max_pool, mgopt__imp_pool, mgopt__exp_pool, {NULL, NULL, NULL}, mgopt__exw_pool},
    {"AveragePool", 1, 0, MGOPT_OP_avg_pool, mgopt__imp_pool, mgopt__exp_pool, {NULL, NULL, NULL}, mgopt__exw_pool},
    {"GlobalAveragePool", 1, 0, MGOPT_OP_reduce_mean, mgopt__imp_global_pool, NULL, {NULL, NULL, NULL}, NULL},
    {"GlobalMaxPool", 1, 0, MGOPT_OP_reduce_max, mgopt__imp_global_pool, NULL, {NULL, NULL, NULL}, NULL},
    {"BatchNormalization", 1, 6, MGOPT_OP_batch_norm, mgopt__imp_batchnorm, mgopt__exp_batchnorm, {NULL, NULL, NULL}, mgopt__exw_batchnorm},
    {"BatchNormalization", 7, 0, MGOPT_OP_batch_norm, mgopt__imp_batchnorm, mgopt__exp_batchnorm, {NULL, NULL, NULL}, mgopt__exw_batchnorm},
    {"InstanceNormalization", 1, 0, MGOPT_OP_instance_norm, mgopt__imp_instancenorm, mgopt__exp_instancenorm, {NULL, NULL, NULL}, mgopt__exw_instancenorm},
    /* LayerNormalization is an ONNX op from opset 17; read in any model that has it */
    {"LayerNormalization", 1, 16, MGOPT_OP_layer_norm, mgopt__imp_layernorm, NULL, {NULL, NULL, NULL}, NULL},
    {"LayerNormalization", 17, 0, MGOPT_OP_layer_norm, mgopt__imp_layernorm, mgopt__exp_layernorm, {NULL, NULL, NULL}, mgopt__exw_layernorm},
    {"Softmax", 1, 12, MGOPT_OP_softmax, mgopt__imp_softmax, mgopt__exp_softmax, {NULL, NULL, NULL}, mgopt__exw_softmax},
    {"Softmax", 13, 0, MGOPT_OP_softmax, mgopt__imp_softmax, mgopt__exp_softmax, {NULL, NULL, NULL}, mgopt__exw_softmax},
    {"LRN", 1, 0, MGOPT_OP_local_response_norm, mgopt__imp_lrn, mgopt__exp_lrn, {NULL, NULL, NULL}, mgopt__exw_lrn},
    {"Einsum", 12, 0, MGOPT_OP_einsum, mgopt__imp_einsum, mgopt__exp_einsum, {NULL, NULL, NULL}, NULL},
    /* resampling: one importing row per ONNX op and opset; the export-only rows share it (ops.c) */
    {"Upsample", 7, 9, MGOPT_OP_upsample_nearest_neighbor, mgopt__imp_resize, mgopt__exp_resample, {NULL, NULL, NULL}, mgopt__exw_resample},
    {"Resize", 10, 10, MGOPT_OP_upsample_nearest_neighbor, mgopt__imp_resize, mgopt__exp_resample, {NULL, NULL, NULL}, mgopt__exw_resample},
    {"Resize", 11, 0, MGOPT_OP_upsample_nearest_neighbor, mgopt__imp_resize, mgopt__exp_resample, {NULL, NULL, NULL}, mgopt__exw_resample},
    {"Resize", 11, 0, MGOPT_OP_upsample_bilinear, NULL, mgopt__exp_resample, {NULL, NULL, NULL}, mgopt__exw_resample},
    {"Resize", 11, 0, MGOPT_OP_resize_nearest_neighbor, NULL, mgopt__exp_resample, {NULL, NULL, NULL}, mgopt__exw_resample},
    {"Resize", 11, 0, MGOPT_OP_resize_bilinear, NULL, mgopt__exp_resample, {NULL, NULL, NULL}, mgopt__exw_resample},
};

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_nn(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_nn);
  return mgopt__onnx_nn;
}
/* src/onnx/map_reduce.c — ONNX <-> canonical mappings of reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare, ArgMax, ArgMin, CumSum. */

/* The axes of a reduction are an attribute before this opset and an input
   from it on: ReduceSum 13, the others 18. */
static int32_t mgopt__reduce_axes_input(int32_t kind) { return kind == MGOPT_OP_reduce_sum ? 13 : 18; }

static int mgopt__imp_reduce(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int64_t *axes = NULL, n = mgopt__imp_axes(I, 1, m->since < mgopt__reduce_axes_input(m->kind), &axes);
  mgopt_op *op;
  if (!mgopt__imp_is_float(x) || n == -1) return 0;
  if (n == 0 || (n == -2 && mgopt__imp_aint(I->node, "noop_with_empty_axes", 0))) return 0;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  /* axes, then keep_dims: the order GlobalAveragePool's reduce_mean has too */
  if (!op || mgopt_op_set_operand(op, "x", x) || (n > 0 && mgopt_op_set_ints(op, "axes", axes, n)) ||
      mgopt_op_set_bool(op, "keep_dims", mgopt__imp_aint(I->node, "keepdims", 1) != 0))
    return -1;
  return mgopt__imp_done(I, op);
}

/* The ONNX global pool a reduction is, or NULL: reduce_mean / reduce_max
   with keep_dims over exactly the axes 2..r-1 (each once, negative ones
   normalized) of an fp16/fp32 input of known rank r >= 3 is
   GlobalAveragePool / GlobalMaxPool (opset 1 on), the op the importer maps
   them to: same values, same shape (N, C, 1, ..., 1). Not fp64, which the
   ONNX schema allows but ONNX Runtime's CPU kernels of the global pools do
   not take (its ReduceMean / ReduceMax do). */
static const char *mgopt__exp_global_pool(mgopt_program *p, const mgopt_op *op) {
  const mgopt_value *x = mgopt_op_operand(op, "x");
  const int64_t *v = NULL;
  int64_t k = mgopt_op_get_ints(p, op, "axes", &v), i;
  uint32_t seen = 0;
  int32_t r;
  if (op->kind != MGOPT_OP_reduce_mean && op->kind != MGOPT_OP_reduce_max) return NULL;
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR || x->type.rank < 3 || x->type.rank > 32 || k != x->type.rank - 2 ||
      !mgopt_op_get_bool(op, "keep_dims", 0))
    return NULL;
  if (x->type.dtype != MGOPT_DT_FP16 && x->type.dtype != MGOPT_DT_FP32) return NULL;
  r = x->type.rank;
  for (i = 0; i < k; i++) {
    int64_t a = v[i] < 0 ? v[i] + r : v[i];
    if (a < 2 || a >= r || (seen & (1u << a))) return NULL;
    seen |= 1u << a;
  }
  return op->kind == MGOPT_OP_reduce_mean ? "GlobalAveragePool" : "GlobalMaxPool";
}

static mgopt_status mgopt__exp_reduce(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  const int64_t *v = NULL;
  int64_t k = mgopt_op_get_ints(E->p, op, "axes", &v);
  const char *global = mgopt__exp_global_pool(E->p, op);
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  if (global) return mgopt__exp_simple(E, op, global, ins, 1) ? MGOPT_OK : mgopt__exp_nomem(E);
  if (k >= 0 && m->since >= mgopt__reduce_axes_input(m->kind)) {
    ins[1] = mgopt__exp_i64_const(E, "axes", v, k);
    if (!ins[1]) return mgopt__exp_nomem(E);
    n = mgopt__exp_simple(E, op, m->onnx, ins, 2);
  } else {
    n = mgopt__exp_simple(E, op, m->onnx, ins, 1);
    if (n && k >= 0 && !mgopt__exp_aints(E, n, "axes", v, k)) return mgopt__exp_nomem(E);
  }
  if (!n || !mgopt__exp_aint(E, n, "keepdims", mgopt_op_get_bool(op, "keep_dims", 0))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- ArgMax, ArgMin

   reduce_argmax / reduce_argmin with output_dtype int64 (ONNX's index type).
   Opsets 1-10 take a non-negative axis only; 12 added select_last_index, whose
   1 (ties to the highest index) has no MIL form: such a node stays opaque. */
static int mgopt__imp_arg(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", 0);
  mgopt_op *op;
  if (!x || r < 1 || !mgopt__imp_known_dtype(x) || x->type.dtype == MGOPT_DT_BOOL || x->type.dtype == MGOPT_DT_STRING)
    return 0;
  if (axis >= r || axis < (m->since < 11 ? 0 : -(int64_t)r)) return 0;
  if (m->since >= 12 && mgopt__imp_aint(I->node, "select_last_index", 0) != 0) return 0;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_int(op, "axis", axis) ||
      mgopt_op_set_bool(op, "keep_dims", mgopt__imp_aint(I->node, "keepdims", 1) != 0) ||
      mgopt_op_set_string(op, "output_dtype", "int64"))
    return -1;
  return mgopt__imp_done(I, op);
}

/* The axis written for opset m: a negative axis needs opset 11, or x's rank to normalise it. */
static int mgopt__exp_arg_axis(const mgopt_op *op, const mgopt__onnx_map *m, int64_t *axis) {
  const mgopt_value *x = mgopt_op_operand(op, "x");
  *axis = mgopt_op_get_int(op, "axis", -1);
  if (*axis >= 0 || m->since >= 11) return 1;
  if (!x || x->type.rank < 1 || *axis < -(int64_t)x->type.rank) return 0;
  *axis += x->type.rank;
  return 1;
}

static const char *mgopt__exw_arg(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  size_t n = 0;
  const char *dt = mgopt_op_get_string(op, "output_dtype", &n);
  int64_t axis;
  MGOPT__UNUSED(p);
  if (!dt || n != 5 || memcmp(dt, "int64", 5) != 0) return "output_dtype is not int64";
  if (!mgopt_op_operand(op, "x")) return "an operand is missing";
  return mgopt__exp_arg_axis(op, m, &axis) ? NULL : "negative axis of unknown rank before opset 11";
}

static mgopt_status mgopt__exp_arg(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  int64_t axis = 0;
  mgopt_onnx_node *n;
  mgopt__exp_arg_axis(op, m, &axis);
  n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_aint(E, n, "axis", axis) ||
      !mgopt__exp_aint(E, n, "keepdims", mgopt_op_get_bool(op, "keep_dims", 0)))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

#define MGOPT__MAP_ARG(onnx, kind, since, until) {onnx, since, until, kind, mgopt__imp_arg, mgopt__exp_arg, {NULL, NULL, NULL}, mgopt__exw_arg}

/* ---------------------------------------------------------------- CumSum

   cumsum with the axis from CumSum's constant scalar (or one-element) input;
   a run-time axis stays opaque. */
static int mgopt__imp_cumsum(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *av = mgopt__imp_in(I, 1);
  int r = mgopt__imp_rank(x);
  int64_t *axis = NULL;
  mgopt_op *op;
  if (!x || !av || r < 1 || !mgopt__imp_known_dtype(x) || x->type.dtype == MGOPT_DT_BOOL ||
      x->type.dtype == MGOPT_DT_STRING)
    return 0;
  if (mgopt__imp_const_ints(I, av, &axis) != 1 || axis[0] < -(int64_t)r || axis[0] >= r) return 0;
  op = mgopt__imp_op(I, mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_int(op, "axis", axis[0]) ||
      mgopt_op_set_bool(op, "exclusive", mgopt__imp_aint(I->node, "exclusive", 0) != 0) ||
      mgopt_op_set_bool(op, "reverse", mgopt__imp_aint(I->node, "reverse", 0) != 0))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_cumsum(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt_op_operand(op, "x") ? NULL : "an operand is missing";
}

static mgopt_status mgopt__exp_cumsum(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  mgopt_tensor *t = mgopt_tensor_new(E->p, MGOPT_DT_INT64, 0, NULL);
  mgopt_onnx_node *n;
  int64_t axis = mgopt_op_get_int(op, "axis", 0);
  if (!t) return mgopt__exp_nomem(E);
  memcpy(t->data, &axis, sizeof axis);
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_const(E, "axis", t);
  if (!ins[1]) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, ins, 2);
  if (!n) return mgopt__exp_nomem(E);
  /* only the non-default flags, as a converter writes them */
  if ((mgopt_op_get_bool(op, "exclusive", 0) && !mgopt__exp_aint(E, n, "exclusive", 1)) ||
      (mgopt_op_get_bool(op, "reverse", 0) && !mgopt__exp_aint(E, n, "reverse", 1)))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

#define MGOPT__MAP_REDUCE(onnx, kind, since, until) {onnx, since, until, kind, mgopt__imp_reduce, mgopt__exp_reduce, {NULL, NULL, NULL}, NULL}

static const mgopt__onnx_map mgopt__onnx_reduce[] = {
    MGOPT__MAP_REDUCE("ReduceSum", MGOPT_OP_reduce_sum, 1, 12),
    MGOPT__MAP_REDUCE("ReduceSum", MGOPT_OP_reduce_sum, 13, 0),
    MGOPT__MAP_REDUCE("ReduceMean", MGOPT_OP_reduce_mean, 1, 17),
    MGOPT__MAP_REDUCE("ReduceMean", MGOPT_OP_reduce_mean, 18, 0),
    MGOPT__MAP_REDUCE("ReduceMax", MGOPT_OP_reduce_max, 1, 17),
    MGOPT__MAP_REDUCE("ReduceMax", MGOPT_OP_reduce_max, 18, 0),
    MGOPT__MAP_REDUCE("ReduceMin", MGOPT_OP_reduce_min, 1, 17),
    MGOPT__MAP_REDUCE("ReduceMin", MGOPT_OP_reduce_min, 18, 0),
    MGOPT__MAP_REDUCE("ReduceProd", MGOPT_OP_reduce_prod, 1, 17),
    MGOPT__MAP_REDUCE("ReduceProd", MGOPT_OP_reduce_prod, 18, 0),
    MGOPT__MAP_REDUCE("ReduceL1", MGOPT_OP_reduce_l1_norm, 1, 17),
    MGOPT__MAP_REDUCE("ReduceL1", MGOPT_OP_reduce_l1_norm, 18, 0),
    MGOPT__MAP_REDUCE("ReduceL2", MGOPT_OP_reduce_l2_norm, 1, 17),
    MGOPT__MAP_REDUCE("ReduceL2", MGOPT_OP_reduce_l2_norm, 18, 0),
    MGOPT__MAP_REDUCE("ReduceLogSum", MGOPT_OP_reduce_log_sum, 1, 17),
    MGOPT__MAP_REDUCE("ReduceLogSum", MGOPT_OP_reduce_log_sum, 18, 0),
    MGOPT__MAP_REDUCE("ReduceLogSumExp", MGOPT_OP_reduce_log_sum_exp, 1, 17),
    MGOPT__MAP_REDUCE("ReduceLogSumExp", MGOPT_OP_reduce_log_sum_exp, 18, 0),
    MGOPT__MAP_REDUCE("ReduceSumSquare", MGOPT_OP_reduce_sum_square, 1, 17),
    MGOPT__MAP_REDUCE("ReduceSumSquare", MGOPT_OP_reduce_sum_square, 18, 0),
    MGOPT__MAP_ARG("ArgMax", MGOPT_OP_reduce_argmax, 1, 10),
    MGOPT__MAP_ARG("ArgMax", MGOPT_OP_reduce_argmax, 11, 11),
    MGOPT__MAP_ARG("ArgMax", MGOPT_OP_reduce_argmax, 12, 0),
    MGOPT__MAP_ARG("ArgMin", MGOPT_OP_reduce_argmin, 1, 10),
    MGOPT__MAP_ARG("ArgMin", MGOPT_OP_reduce_argmin, 11, 11),
    MGOPT__MAP_ARG("ArgMin", MGOPT_OP_reduce_argmin, 12, 0),
    {"CumSum", 11, 0, MGOPT_OP_cumsum, mgopt__imp_cumsum, mgopt__exp_cumsum, {NULL, NULL, NULL}, mgopt__exw_cumsum},
};

#undef MGOPT__MAP_REDUCE

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_reduce(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_reduce);
  return mgopt__onnx_reduce;
}
/* src/onnx/map_struct.c — ONNX <-> canonical mappings of structural and index ops: ScatterElements, Scatter, ScatterND,
   GatherND, ReverseSequence, DepthToSpace, SpaceToDepth, TopK, Range, ConstantOfShape, OneHot.

   A parameter that is an input in ONNX (TopK's K, Range's bounds,
   ConstantOfShape's shape) must be a constant for the node to become a
   canonical op; a run-time one leaves the node opaque. */

static int mgopt__ims_index_dtype(const mgopt_value *v, int int32_ok) {
  return v && v->type.kind == MGOPT_TYPE_TENSOR &&
         (v->type.dtype == MGOPT_DT_INT64 || (int32_ok && v->type.dtype == MGOPT_DT_INT32));
}

/* 1 when dims a and b are known to be equal (the same static size or the same symbol). */
static int mgopt__ims_same_dim(mgopt_dim a, mgopt_dim b) {
  return a.sym ? a.sym == b.sym : (a.v >= 0 && !b.sym && a.v == b.v);
}

/* A byte-addressable element type the kernels move (not string, not sub-byte). */
static int mgopt__ims_movable(const mgopt_value *v) {
  return mgopt__imp_known_dtype(v) && v->type.dtype != MGOPT_DT_STRING && mgopt_dtype_bits((mgopt_dtype)v->type.dtype) >= 8;
}

static const char *mgopt__ims_mode(const mgopt_op *op) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(op, "mode", &n);
  if (!s) return "add"; /* MIL's default */
  if (n == 6 && memcmp(s, "update", 6) == 0) return "update";
  if (n == 3 && memcmp(s, "add", 3) == 0) return "add";
  if (n == 3 && memcmp(s, "mul", 3) == 0) return "mul";
  if (n == 3 && memcmp(s, "max", 3) == 0) return "max";
  if (n == 3 && memcmp(s, "min", 3) == 0) return "min";
  return "";
}

/* ---------------------------------------------------------------- ScatterElements, Scatter, ScatterND

   ONNX's reduction (none before opset 16; add, mul from 16; max, min from 18)
   is MIL's mode: none is "update". Duplicate indices with reduction none are
   unspecified in ONNX; the kernels write them in order (the last wins). */

/* mode for the node's reduction at opset m->since, or NULL when that opset has no such reduction. */
static const char *mgopt__ims_reduction(mgopt__imp *I, const mgopt__onnx_map *m) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(I->node, "reduction");
  if (!a || m->since < 16 || mgopt__imp_astr(I->node, "reduction", "none")) return "update";
  if (mgopt__imp_astr(I->node, "reduction", "add")) return "add";
  if (mgopt__imp_astr(I->node, "reduction", "mul")) return "mul";
  if (m->since >= 18 && mgopt__imp_astr(I->node, "reduction", "max")) return "max";
  if (m->since >= 18 && mgopt__imp_astr(I->node, "reduction", "min")) return "min";
  return NULL;
}

static int mgopt__imp_scatter_elements(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *idx = mgopt__imp_in(I, 1), *up = mgopt__imp_in(I, 2);
  int r = mgopt__imp_rank(x), k;
  int64_t axis = mgopt__imp_aint(I->node, "axis", 0);
  const char *mode = mgopt__ims_reduction(I, m);
  mgopt_op *op;
  if (!mode || !mgopt__ims_movable(x) || !idx || !up || r < 1 || mgopt__imp_rank(idx) != r || mgopt__imp_rank(up) != r ||
      !mgopt__ims_index_dtype(idx, 1) || up->type.dtype != x->type.dtype)
    return 0;
  if (axis < -r || axis >= r) return 0;
  for (k = 0; k < r; k++) {
    if (!mgopt__ims_same_dim(idx->type.dims[k], up->type.dims[k])) return 0;
    /* ONNX allows index dims smaller than data's off the axis; MIL does not */
    if (k != axis && k != axis + r && !mgopt__ims_same_dim(x->type.dims[k], idx->type.dims[k])) return 0;
  }
  op = mgopt__imp_op(I, "scatter_along_axis", 1, 0);
  if (!op || mgopt_op_set_operand(op, "data", x) || mgopt_op_set_operand(op, "indices", idx) ||
      mgopt_op_set_operand(op, "updates", up) || mgopt_op_set_int(op, "axis", axis) ||
      mgopt_op_set_string(op, "mode", mode))
    return -1;
  return mgopt__imp_done(I, op);
}

/* Why mode cannot be written at opset m->since (NULL: it can). */
static const char *mgopt__ims_mode_why(const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *mode = mgopt__ims_mode(op);
  if (!mode[0]) return "mode sub or div has no ONNX reduction";
  if (strcmp(mode, "update") != 0 && m->since < 16) return "a reducing mode needs opset 16";
  if ((strcmp(mode, "max") == 0 || strcmp(mode, "min") == 0) && m->since < 18) return "mode max or min needs opset 18";
  return NULL;
}

static const char *mgopt__exw_scatter(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  if (!mgopt_op_operand(op, "data") || !mgopt_op_operand(op, "indices") || !mgopt_op_operand(op, "updates"))
    return "an operand is missing";
  return mgopt__ims_mode_why(op, m);
}

static mgopt_status mgopt__exp_scatter(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[3], *mode = mgopt__ims_mode(op);
  mgopt_value *idx = mgopt_op_operand(op, "indices");
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "data");
  /* ScatterElements takes int32 or int64 indices, ScatterND int64 only */
  ins[1] = op->kind == MGOPT_OP_scatter_along_axis && mgopt__ims_index_dtype(idx, 1) ? mgopt__exp_vname(idx)
                                                                                     : mgopt__exp_as_i64(E, idx);
  ins[2] = mgopt__exp_in(op, "updates");
  if (!ins[1]) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, ins, 3);
  if (!n) return mgopt__exp_nomem(E);
  if (op->kind == MGOPT_OP_scatter_along_axis && !mgopt__exp_aint(E, n, "axis", mgopt_op_get_int(op, "axis", 0)))
    return mgopt__exp_nomem(E);
  if (strcmp(mode, "update") != 0 && !mgopt__exp_astr(E, n, "reduction", mode)) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ScatterND: updates = indices.shape[:-1] + data.shape[K:] with K static. */
static int mgopt__imp_scatter_nd(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *idx = mgopt__imp_in(I, 1), *up = mgopt__imp_in(I, 2);
  int r = mgopt__imp_rank(x), q = mgopt__imp_rank(idx), k;
  int64_t K;
  const char *mode = mgopt__ims_reduction(I, m);
  mgopt_op *op;
  if (!mode || !mgopt__ims_movable(x) || !up || r < 1 || q < 1 || !mgopt__ims_index_dtype(idx, 0) ||
      up->type.dtype != x->type.dtype || !mgopt_dim_is_static(idx->type.dims[q - 1]))
    return 0;
  K = idx->type.dims[q - 1].v;
  if (K > r || mgopt__imp_rank(up) != q - 1 + r - K) return 0;
  for (k = 0; k < q - 1; k++)
    if (!mgopt__ims_same_dim(idx->type.dims[k], up->type.dims[k])) return 0;
  for (k = (int)K; k < r; k++)
    if (!mgopt__ims_same_dim(x->type.dims[k], up->type.dims[q - 1 + k - K])) return 0;
  op = mgopt__imp_op(I, "scatter_nd", 1, 0);
  if (!op || mgopt_op_set_operand(op, "data", x) || mgopt_op_set_operand(op, "indices", idx) ||
      mgopt_op_set_operand(op, "updates", up) || mgopt_op_set_string(op, "mode", mode))
    return -1;
  return mgopt__imp_done(I, op);
}

/* ---------------------------------------------------------------- GatherND (batch_dims from opset 12) */

static int mgopt__imp_gather_nd(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *idx = mgopt__imp_in(I, 1);
  int64_t bd = m->since >= 12 ? mgopt__imp_aint(I->node, "batch_dims", 0) : 0;
  int q = mgopt__imp_rank(idx);
  mgopt_op *op;
  if (!mgopt__ims_movable(x) || mgopt__imp_rank(x) < 1 || q < 1 || !mgopt__ims_index_dtype(idx, 0) || bd < 0 || bd >= q)
    return 0;
  op = mgopt__imp_op(I, "gather_nd", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "indices", idx) ||
      (bd && mgopt_op_set_int(op, "batch_dims", bd)))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_gather_nd(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  MGOPT__UNUSED(p);
  if (!mgopt_op_operand(op, "x") || !mgopt_op_operand(op, "indices")) return "an operand is missing";
  return mgopt_op_get_int(op, "batch_dims", 0) != 0 && m->since < 12 ? "batch_dims needs opset 12" : NULL;
}

static mgopt_status mgopt__exp_gather_nd(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  int64_t bd = mgopt_op_get_int(op, "batch_dims", 0);
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_as_i64(E, mgopt_op_operand(op, "indices"));
  if (!ins[1]) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, ins, 2);
  if (!n || (bd && !mgopt__exp_aint(E, n, "batch_dims", bd))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- ReverseSequence

   time_axis (default 0) and batch_axis (default 1) are 0 and 1 in some order. */
static int mgopt__imp_reverse_sequence(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *len = mgopt__imp_in(I, 1);
  int64_t ta = mgopt__imp_aint(I->node, "time_axis", 0), ba = mgopt__imp_aint(I->node, "batch_axis", 1);
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!mgopt__ims_movable(x) || mgopt__imp_rank(x) < 2 || mgopt__imp_rank(len) != 1 || !mgopt__ims_index_dtype(len, 0))
    return 0;
  if (!((ta == 0 && ba == 1) || (ta == 1 && ba == 0))) return 0;
  op = mgopt__imp_op(I, "reverse_sequence", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "lengths", len) ||
      mgopt_op_set_int(op, "seq_axis", ta) || mgopt_op_set_int(op, "batch_axis", ba))
    return -1;
  return mgopt__imp_done(I, op);
}

/* seq_axis and batch_axis normalised; 0 when they are not axes 0 and 1. */
static int mgopt__ims_revseq_axes(const mgopt_op *op, int64_t *ta, int64_t *ba) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  int64_t r = x && x->type.kind == MGOPT_TYPE_TENSOR ? x->type.rank : -1;
  *ta = mgopt_op_get_int(op, "seq_axis", 0);
  *ba = mgopt_op_get_int(op, "batch_axis", 0);
  if (*ta < 0) *ta += r;
  if (*ba < 0) *ba += r;
  return r >= 2 && ((*ta == 0 && *ba == 1) || (*ta == 1 && *ba == 0));
}

static const char *mgopt__exw_reverse_sequence(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  int64_t ta, ba;
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!mgopt_op_operand(op, "x") || !mgopt_op_operand(op, "lengths")) return "an operand is missing";
  return mgopt__ims_revseq_axes(op, &ta, &ba) ? NULL : "the axes are not 0 and 1";
}

static mgopt_status mgopt__exp_reverse_sequence(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  int64_t ta, ba;
  mgopt_onnx_node *n;
  mgopt__ims_revseq_axes(op, &ta, &ba);
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_as_i64(E, mgopt_op_operand(op, "lengths"));
  if (!ins[1]) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, ins, 2);
  if (!n || !mgopt__exp_aint(E, n, "batch_axis", ba) || !mgopt__exp_aint(E, n, "time_axis", ta))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- DepthToSpace, SpaceToDepth

   DepthToSpace's DCR mode (the only one before opset 11, the default after)
   is depth_to_space; CRD is pixel_shuffle (written back by map_shape.c). */
static int mgopt__imp_depth_space(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int64_t b = mgopt__imp_aint(I->node, "blocksize", -1);
  int crd = m->kind == MGOPT_OP_depth_to_space && m->since >= 11 && mgopt__imp_astr(I->node, "mode", "CRD");
  mgopt_op *op;
  if (!mgopt__ims_movable(x) || mgopt__imp_rank(x) != 4 || b < 1 || b > ((int64_t)1 << 30)) return 0;
  if (m->kind == MGOPT_OP_depth_to_space && m->since >= 11 && !crd && mgopt__imp_attr(I->node, "mode") &&
      !mgopt__imp_astr(I->node, "mode", "DCR"))
    return 0;
  op = mgopt__imp_op(I, crd ? "pixel_shuffle" : mgopt__imp_kind_name(m->kind), 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_int(op, crd ? "upscale_factor" : "block_size", b))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_depth_space(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x || x->type.rank != 4) return "needs a 4-d input";
  return mgopt_op_get_int(op, "block_size", 0) >= 1 ? NULL : "no block_size";
}

static mgopt_status mgopt__exp_depth_space(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *x = mgopt__exp_in(op, "x");
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, m->onnx, &x, 1);
  if (!n || !mgopt__exp_aint(E, n, "blocksize", mgopt_op_get_int(op, "block_size", 1))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- TopK

   K is an attribute before opset 10 and a constant [1] input after; largest
   and sorted arrive in opset 11 (before: largest, sorted). Indices are int64. */
static int mgopt__imp_topk(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0);
  int r = mgopt__imp_rank(x);
  int64_t axis = mgopt__imp_aint(I->node, "axis", -1), kk, *kv = NULL;
  int lane_ok;
  mgopt_op *op;
  if (!x || r < 1 || !mgopt__imp_known_dtype(x) || mgopt__imp_nout(I->node) > 2) return 0;
  lane_ok = mgopt_dtype_is_float((mgopt_dtype)x->type.dtype) || mgopt_dtype_is_int((mgopt_dtype)x->type.dtype);
  if (!lane_ok || mgopt_dtype_bits((mgopt_dtype)x->type.dtype) < 16 || axis < -r || axis >= r) return 0;
  if (mgopt_dtype_is_float((mgopt_dtype)x->type.dtype) && x->type.dtype != MGOPT_DT_FP16 &&
      x->type.dtype != MGOPT_DT_BF16 && x->type.dtype != MGOPT_DT_FP32 && x->type.dtype != MGOPT_DT_FP64)
    return 0;
  if (m->since < 10) {
    kk = mgopt__imp_aint(I->node, "k", -1);
  } else {
    if (mgopt__imp_const_ints(I, mgopt__imp_in(I, 1), &kv) != 1) return 0; /* a run-time K stays opaque */
    kk = kv[0];
  }
  if (kk < 0) return 0;
  if (mgopt_dim_is_static(x->type.dims[axis < 0 ? axis + r : axis]) && kk > x->type.dims[axis < 0 ? axis + r : axis].v)
    return 0;
  op = mgopt__imp_op(I, "topk", 2, 0);
  if (!op || mgopt_op_set_operand(op, "x", x) || mgopt_op_set_int(op, "k", kk) || mgopt_op_set_int(op, "axis", axis) ||
      (m->since >= 11 && mgopt__imp_aint(I->node, "largest", 1) == 0 && mgopt_op_set_bool(op, "ascending", 1)) ||
      (m->since >= 11 && mgopt__imp_aint(I->node, "sorted", 1) == 0 && mgopt_op_set_bool(op, "sort", 0)) ||
      mgopt_op_set_string(op, "output_indices_dtype", "int64"))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_topk(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  size_t n = 0;
  const char *dt = mgopt_op_get_string(op, "output_indices_dtype", &n);
  MGOPT__UNUSED(p);
  if (!dt || n != 5 || memcmp(dt, "int64", 5) != 0) return "output_indices_dtype is not int64";
  if (!mgopt_op_operand(op, "x") || op->nouts != 2) return "an operand is missing";
  if (m->since < 11 && mgopt_op_get_bool(op, "ascending", 0)) return "the smallest k need opset 11";
  return NULL;
}

static mgopt_status mgopt__exp_topk(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[2];
  int64_t kk = mgopt_op_get_int(op, "k", 1);
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_in(op, "x");
  if (m->since >= 10) {
    ins[1] = mgopt__exp_i64_const(E, "k", &kk, 1);
    if (!ins[1]) return mgopt__exp_nomem(E);
  }
  n = mgopt__exp_simple(E, op, m->onnx, ins, m->since >= 10 ? 2 : 1);
  if (!n || !mgopt__exp_aint(E, n, "axis", mgopt_op_get_int(op, "axis", -1)) ||
      (m->since < 10 && !mgopt__exp_aint(E, n, "k", kk)) ||
      (m->since >= 11 && mgopt_op_get_bool(op, "ascending", 0) && !mgopt__exp_aint(E, n, "largest", 0)) ||
      (m->since >= 11 && !mgopt_op_get_bool(op, "sort", 1) && !mgopt__exp_aint(E, n, "sorted", 0)))
    return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- Range

   range_1d(end=limit, start, step=delta) when all three are constant
   scalars. ONNX's Range is defined by its function body: ceil(float(limit -
   start) / float(delta)) elements, each the previous one plus delta in the
   dtype (ONNX Runtime accumulates too), where range_1d computes start + i *
   step in double, rounded once. Both agree on integers; on floats only for
   some operands (Range(0.3, 100, 0.1) differs in 985 of 997 elements), so
   a float Range maps (and a float range_1d is written as Range) only when
   both give the same elements; else it stays opaque (mgopt_onnx_eval_op
   folds it). */

/* x rounded to dtype dt (fp32, else fp64 as it is). */
static double mgopt__range_rnd(int32_t dt, double x) { return dt == MGOPT_DT_FP32 ? (double)(float)x : x; }

/* 1 when a float range of constant scalars s, e, st (one dtype) has the
   elements ONNX's Range gives as range_1d computes them: the same count, and
   start + i * step (rounded once) equal to the sum accumulated in the dtype.
   Ranges over 2^24 elements are not checked (0). */
static int mgopt__range_float_same(const mgopt_tensor *s, const mgopt_tensor *e, const mgopt_tensor *st) {
  double a, b, c, q, v;
  float qo;
  int64_t n, i;
  int32_t dt;
  if (!s || !e || !st || s->numel != 1 || e->numel != 1 || st->numel != 1) return 0;
  dt = s->dtype;
  a = mgopt_tensor_get_f64(s, 0);
  b = mgopt_tensor_get_f64(e, 0);
  c = mgopt_tensor_get_f64(st, 0);
  if (c == 0 || c != c) return 0;
  q = ceil((b - a) / c);
  qo = ceilf((float)mgopt__range_rnd(dt, b - a) / (float)c);
  if (!(q == (double)qo) || q > 16777216.0) return 0;
  n = q > 0 ? (int64_t)q : 0;
  for (i = 0, v = a; i < n; i++, v = mgopt__range_rnd(dt, v + c))
    if (v != mgopt__range_rnd(dt, a + (double)i * c)) return 0;
  return 1;
}

static int mgopt__imp_range(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *s = mgopt__imp_in(I, 0), *e = mgopt__imp_in(I, 1), *d = mgopt__imp_in(I, 2);
  mgopt_dtype dt;
  mgopt_op *op;
  MGOPT__UNUSED(m);
  if (!s || !e || !d || !mgopt_value_const(s) || !mgopt_value_const(e) || !mgopt_value_const(d)) return 0;
  dt = (mgopt_dtype)s->type.dtype;
  if (e->type.dtype != dt || d->type.dtype != dt || mgopt_value_const(s)->numel != 1 ||
      mgopt_value_const(e)->numel != 1 || mgopt_value_const(d)->numel != 1 || s->type.rank > 1 || e->type.rank > 1 ||
      d->type.rank > 1)
    return 0;
  if (dt != MGOPT_DT_INT16 && dt != MGOPT_DT_INT32 && dt != MGOPT_DT_INT64 &&
      !((dt == MGOPT_DT_FP32 || dt == MGOPT_DT_FP64) &&
        mgopt__range_float_same(mgopt_value_const(s), mgopt_value_const(e), mgopt_value_const(d))))
    return 0;
  op = mgopt__imp_op(I, "range_1d", 1, 0);
  if (!op || mgopt_op_set_operand(op, "end", e) || mgopt_op_set_operand(op, "start", s) ||
      mgopt_op_set_operand(op, "step", d))
    return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_range(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *s = mgopt_op_operand(op, "start");
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!s || !mgopt_op_operand(op, "end") || !mgopt_op_operand(op, "step")) return "an operand is missing";
  if (s->type.rank != 0 || mgopt_op_operand(op, "end")->type.rank != 0 || mgopt_op_operand(op, "step")->type.rank != 0)
    return "Range takes scalars";
  if (s->type.dtype != MGOPT_DT_FP32 && s->type.dtype != MGOPT_DT_FP64 && s->type.dtype != MGOPT_DT_INT16 &&
      s->type.dtype != MGOPT_DT_INT32 && s->type.dtype != MGOPT_DT_INT64)
    return "Range takes fp32, fp64, int16, int32 and int64";
  if ((s->type.dtype == MGOPT_DT_FP32 || s->type.dtype == MGOPT_DT_FP64) &&
      !mgopt__range_float_same(mgopt_value_const(s), mgopt_value_const(mgopt_op_operand(op, "end")),
                               mgopt_value_const(mgopt_op_operand(op, "step"))))
    return "a float range whose elements ONNX's Range (summed in the dtype) does not give";
  return NULL;
}

static mgopt_status mgopt__exp_range(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[3];
  ins[0] = mgopt__exp_in(op, "start");
  ins[1] = mgopt__exp_in(op, "end");
  ins[2] = mgopt__exp_in(op, "step");
  return mgopt__exp_done(E, mgopt__exp_simple(E, op, m->onnx, ins, 3));
}

/* ---------------------------------------------------------------- ConstantOfShape

   fill(shape, value) with a constant shape; the value attribute (a one-element
   tensor, fp32 0 when absent) becomes a constant operand. */
static int mgopt__imp_constant_of_shape(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *sh = mgopt__imp_in(I, 0), *v = NULL;
  const mgopt_onnx_attribute *a = mgopt__imp_attr(I->node, "value");
  mgopt_tensor *t;
  int64_t *dims = NULL, n;
  mgopt_op *op;
  MGOPT__UNUSED(m);
  n = mgopt__imp_const_ints(I, sh, &dims);
  if (n < 0 || n > MGOPT_MAX_RANK || mgopt__imp_rank(sh) != 1) return 0; /* a run-time shape stays opaque */
  if (a) {
    if (a->type != MGOPT_ONNX_ATTR_TENSOR || !a->t) return 0;
    t = mgopt__imp_tensor(I, a->t);
    if (!t) return -1;
    if (t->numel != 1 || t->dtype == MGOPT_DT_STRING || mgopt_dtype_bits((mgopt_dtype)t->dtype) < 8) return 0;
    v = mgopt__imp_const(I, NULL, "value", t);
    if (!v) return -1;
  }
  op = mgopt__imp_op(I, "fill", 1, 0);
  if (!op || mgopt_op_set_operand(op, "shape", sh) || (v && mgopt_op_set_operand(op, "value", v))) return -1;
  return mgopt__imp_done(I, op);
}

static const char *mgopt__exw_fill(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *v = mgopt_op_operand(op, "value");
  mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!mgopt_op_operand(op, "shape")) return "an operand is missing";
  if (v && (!t || t->numel != 1)) return "value is not a constant";
  return NULL;
}

static mgopt_status mgopt__exp_fill(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *v = mgopt_op_operand(op, "value");
  mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
  const char *sh = mgopt__exp_as_i64(E, mgopt_op_operand(op, "shape"));
  mgopt_onnx_node *n;
  mgopt_onnx_attribute *a;
  if (!sh) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, &sh, 1);
  if (!n) return mgopt__exp_nomem(E);
  if (!t) return MGOPT_OK; /* ONNX's default value is fp32 0, as fill's */
  a = mgopt__exp_attr(E, n, "value", MGOPT_ONNX_ATTR_TENSOR);
  if (!a || !(a->t = (mgopt_onnx_tensor *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_tensor), 8)))
    return mgopt__exp_nomem(E);
  if (t->rank != 1) { /* ONNX's value is a one-element vector */
    int64_t one = 1;
    mgopt_tensor *t1 = mgopt_tensor_new(E->p, (mgopt_dtype)t->dtype, 1, &one);
    const void *src = mgopt_tensor_data(E->p, t);
    if (!t1 || !src) return mgopt__exp_nomem(E);
    memcpy(t1->data, src, (size_t)t->nbytes);
    t = t1;
  }
  return mgopt__exp_tensor(E, t, "", a->t);
}

/* ---------------------------------------------------------------- OneHot

   one_hot(indices, one_hot_vector_size=depth, axis, on_value, off_value) for
   a constant depth and constant fp32 values [off, on] (one_hot's output is
   fp32). Indices must be constant too: ONNX casts float indices to integers
   (whole ones only here: runtimes differ on a fraction) and, from opset 11,
   counts negative ones from the end, while an index outside [0, depth)
   gives an all-off row; the import writes the indices those rules select
   as int32 and declines when one selects no row. */
static int mgopt__imp_one_hot(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *ix = mgopt__imp_in(I, 0), *nv = NULL;
  mgopt_tensor *it = ix ? mgopt_value_const(ix) : NULL, *dt = mgopt_value_const(mgopt__imp_in(I, 1)),
               *vt = mgopt_value_const(mgopt__imp_in(I, 2)), *t;
  int r = mgopt__imp_rank(ix);
  int64_t axis = mgopt__imp_aint(I->node, "axis", -1), depth, i;
  double dd;
  mgopt_op *op;
  if (!it || !dt || !vt || r < 0 || dt->numel != 1 || vt->numel != 2 || vt->dtype != MGOPT_DT_FP32 ||
      it->dtype == MGOPT_DT_STRING || it->dtype == MGOPT_DT_BOOL || dt->dtype == MGOPT_DT_STRING ||
      mgopt_dtype_bits((mgopt_dtype)it->dtype) < 8)
    return 0;
  dd = mgopt_tensor_get_f64(dt, 0);
  if (!(dd >= 1 && dd < 2147483648.0) || axis < -(int64_t)r - 1 || axis > r) return 0;
  depth = (int64_t)dd;
  t = mgopt_tensor_new(I->p, MGOPT_DT_INT32, it->rank, it->shape);
  if (!t || !mgopt_tensor_data(I->p, it)) return -1;
  for (i = 0; i < it->numel; i++) {
    double v = mgopt_tensor_get_f64(it, i);
    int64_t k;
    if (!(v > -2147483648.0 && v < 2147483648.0) || v != (double)(int64_t)v) return 0; /* runtimes round a fraction differently */
    k = mgopt_dtype_is_float((mgopt_dtype)it->dtype) ? (int64_t)v : mgopt_tensor_get_i64(it, i);
    if (k < 0 && m->since >= 11) k += depth;
    if (k < 0 || k >= depth) return 0;
    mgopt_tensor_set_i64(t, i, k);
  }
  nv = mgopt__imp_const(I, NULL, "indices", t);
  op = nv ? mgopt__imp_op(I, "one_hot", 1, 0) : NULL;
  if (!op || mgopt_op_set_operand(op, "indices", nv) || mgopt_op_set_int(op, "one_hot_vector_size", depth) ||
      mgopt_op_set_int(op, "axis", axis) || mgopt_op_set_float(op, "on_value", mgopt_tensor_get_f64(vt, 1)) ||
      mgopt_op_set_float(op, "off_value", mgopt_tensor_get_f64(vt, 0)))
    return -1;
  return mgopt__imp_done(I, op);
}

/* Before opset 11 OneHot gives negative indices an all-off row (one_hot counts
   them from the end): only constant indices in [0, depth) are written there. */
static const char *mgopt__exw_one_hot(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *ix = mgopt_op_operand(op, "indices");
  mgopt_tensor *t = ix ? mgopt_value_const(ix) : NULL;
  int64_t depth = mgopt_op_get_int(op, "one_hot_vector_size", -1), i;
  MGOPT__UNUSED(p);
  if (!ix || depth < 1) return "no indices or no one_hot_vector_size";
  if (!mgopt_dtype_is_int((mgopt_dtype)ix->type.dtype)) return "indices are not integers";
  if (mgopt_op_operand(op, "on_value") || mgopt_op_operand(op, "off_value")) return "on_value or off_value is an operand";
  if (m->since >= 11) return NULL;
  if (!t) return "run-time indices need opset 11";
  for (i = 0; i < t->numel; i++)
    if (mgopt_tensor_get_i64(t, i) < 0 || mgopt_tensor_get_i64(t, i) >= depth) return "an index outside [0, depth) needs opset 11";
  return NULL;
}

static mgopt_status mgopt__exp_one_hot(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *ins[3];
  int64_t depth = mgopt_op_get_int(op, "one_hot_vector_size", 1), two = 2;
  mgopt_tensor *vt = mgopt_tensor_new(E->p, MGOPT_DT_FP32, 1, &two);
  mgopt_onnx_node *n;
  if (!vt) return mgopt__exp_nomem(E);
  mgopt_tensor_set_f64(vt, 0, mgopt_op_get_float(op, "off_value", 0.0));
  mgopt_tensor_set_f64(vt, 1, mgopt_op_get_float(op, "on_value", 1.0));
  ins[0] = mgopt__exp_as_i64(E, mgopt_op_operand(op, "indices")); /* the index type every runtime implements */
  ins[1] = mgopt__exp_i64_const(E, "depth", &depth, 1);
  ins[2] = mgopt__exp_const(E, "values", vt);
  if (!ins[0] || !ins[1] || !ins[2]) return mgopt__exp_nomem(E);
  n = mgopt__exp_simple(E, op, m->onnx, ins, 3);
  if (!n || !mgopt__exp_aint(E, n, "axis", mgopt_op_get_int(op, "axis", -1))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- the table */

static const mgopt__onnx_map mgopt__onnx_struct[] = {
    {"Scatter", 9, 10, MGOPT_OP_scatter_along_axis, mgopt__imp_scatter_elements, mgopt__exp_scatter, {NULL, NULL, NULL}, mgopt__exw_scatter},
    {"ScatterElements", 11, 15, MGOPT_OP_scatter_along_axis, mgopt__imp_scatter_elements, mgopt__exp_scatter, {NULL, NULL, NULL}, mgopt__exw_scatter},
    {"ScatterElements", 16, 17, MGOPT_OP_scatter_along_axis, mgopt__imp_scatter_elements, mgopt__exp_scatter, {NULL, NULL, NULL}, mgopt__exw_scatter},
    {"ScatterElements", 18, 0, MGOPT_OP_scatter_along_axis, mgopt__imp_scatter_elements, mgopt__exp_scatter, {NULL, NULL, NULL}, mgopt__exw_scatter},
    {"ScatterND", 11, 15, MGOPT_OP_scatter_nd, mgopt__imp_scatter_nd, mgopt__exp_scatter, {NULL, NULL, NULL}, mgopt__exw_scatter},
    {"ScatterND", 16, 17, MGOPT_OP_scatter_nd, mgopt__imp_scatter_nd, mgopt__exp_scatter, {NULL, NULL, NULL}, mgopt__exw_scatter},
    {"ScatterND", 18, 0, MGOPT_OP_scatter_nd, mgopt__imp_scatter_nd, mgopt__exp_scatter, {NULL, NULL, NULL}, mgopt__exw_scatter},
    {"GatherND", 11, 11, MGOPT_OP_gather_nd, mgopt__imp_gather_nd, mgopt__exp_gather_nd, {NULL, NULL, NULL}, mgopt__exw_gather_nd},
    {"GatherND", 12, 0, MGOPT_OP_gather_nd, mgopt__imp_gather_nd, mgopt__exp_gather_nd, {NULL, NULL, NULL}, mgopt__exw_gather_nd},
    {"ReverseSequence", 10, 0, MGOPT_OP_reverse_sequence, mgopt__imp_reverse_sequence, mgopt__exp_reverse_sequence, {NULL, NULL, NULL}, mgopt__exw_reverse_sequence},
    {"DepthToSpace", 1, 10, MGOPT_OP_depth_to_space, mgopt__imp_depth_space, mgopt__exp_depth_space, {NULL, NULL, NULL}, mgopt__exw_depth_space},
    {"DepthToSpace", 11, 0, MGOPT_OP_depth_to_space, mgopt__imp_depth_space, mgopt__exp_depth_space, {NULL, NULL, NULL}, mgopt__exw_depth_space},
    {"SpaceToDepth", 1, 0, MGOPT_OP_space_to_depth, mgopt__imp_depth_space, mgopt__exp_depth_space, {NULL, NULL, NULL}, mgopt__exw_depth_space},
    {"TopK", 1, 9, MGOPT_OP_topk, mgopt__imp_topk, mgopt__exp_topk, {NULL, NULL, NULL}, mgopt__exw_topk},
    {"TopK", 10, 10, MGOPT_OP_topk, mgopt__imp_topk, mgopt__exp_topk, {NULL, NULL, NULL}, mgopt__exw_topk},
    {"TopK", 11, 0, MGOPT_OP_topk, mgopt__imp_topk, mgopt__exp_topk, {NULL, NULL, NULL}, mgopt__exw_topk},
    {"Range", 11, 0, MGOPT_OP_range_1d, mgopt__imp_range, mgopt__exp_range, {NULL, NULL, NULL}, mgopt__exw_range},
    {"OneHot", 9, 10, MGOPT_OP_one_hot, mgopt__imp_one_hot, mgopt__exp_one_hot, {NULL, NULL, NULL}, mgopt__exw_one_hot},
    {"OneHot", 11, 0, MGOPT_OP_one_hot, mgopt__imp_one_hot, mgopt__exp_one_hot, {NULL, NULL, NULL}, mgopt__exw_one_hot},
    {"ConstantOfShape", 9, 0, MGOPT_OP_fill, mgopt__imp_constant_of_shape, mgopt__exp_fill, {NULL, NULL, NULL}, mgopt__exw_fill},
};

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_struct(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_struct);
  return mgopt__onnx_struct;
}
/* src/onnx/map_quant.c — ONNX <-> canonical mappings of quantization and compressed weights: QuantizeLinear / DequantizeLinear as quantize / dequantize, constexpr_blockwise_shift_scale and constexpr_affine_dequantize written as an integer initializer with DequantizeLinear (or Cast and Mul), constexpr_lut_to_dense as a table and packed indices decoded by standard ops. */

/* ---------------------------------------------------------------- constexpr_blockwise_shift_scale

   out = scale * (data - offset), data, scale and offset constants of one
   rank. The shape of the scale decides the ONNX form:
   - per tensor (every scale dim 1): DequantizeLinear with a scalar scale
     (opset >= 10; an fp16 scale from opset 19);
   - per axis (one dim of the scale equals the data's, the others are 1):
     DequantizeLinear with a 1-D scale and `axis` (opset >= 13; fp16 scale
     from 19);
   - blocked (one dim of the scale divides the data's into blocks; the others
     1 or the data's): DequantizeLinear with `axis` and `block_size`, the
     scale (and zero point) repeated along the dims where they are 1
     (opset >= 21);
   - 4-bit data (int4 / uint4): opset >= 21 in every form.
   8-bit data per tensor or per axis below those opsets is written as
   Cast(data) [- offset] * scale with the scale in its own shape (it
   broadcasts): the same arithmetic, in the scale's dtype, at any opset. A
   float offset, and forms other than these, are not written (the
   compression passes ask the program's target first and leave the weight
   as it was). The opset is never raised. */

typedef struct mgopt__mq_form {
  mgopt_tensor *q, *s, *z; /* z NULL: no offset */
  int kind;                /* 0 per tensor, 1 per axis, 2 blocked */
  int32_t axis;
  int64_t block;
} mgopt__mq_form;

/* The form of data of shape qs under a scale of shape ss (both of rank r):
   f's kind, axis and block; 0 when DequantizeLinear has none. */
static int mgopt__mq_shapes(int32_t r, const int64_t *qs, const int64_t *ss, mgopt__mq_form *f) {
  int32_t d, na = 0, nb = 0;
  for (d = 0; d < r; d++) {
    int64_t sd = ss[d], qd = qs[d];
    if (sd == 1) continue;
    if (sd <= 0 || qd % sd != 0) return 0;
    if (sd == qd) {
      if (!nb) f->axis = d;
      na++;
    } else {
      f->axis = d;
      f->block = qd / sd;
      nb++;
    }
  }
  if (nb > 1 || (nb == 0 && na > 1)) return 0;
  f->kind = nb ? 2 : na ? 1 : 0;
  return 1;
}

static int mgopt__mq_bss(const mgopt_op *op, mgopt__mq_form *f) {
  int32_t d;
  mgopt_value *zv = mgopt_op_operand(op, "offset");
  memset(f, 0, sizeof *f);
  f->q = mgopt_value_const(mgopt_op_operand(op, "data"));
  f->s = mgopt_value_const(mgopt_op_operand(op, "scale"));
  f->z = zv ? mgopt_value_const(zv) : NULL;
  if (!f->q || !f->s || (zv && !f->z) || f->q->rank != f->s->rank || f->q->rank < 1) return 0;
  if (f->z && (f->z->dtype != f->q->dtype || f->z->rank != f->s->rank)) return 0;
  for (d = 0; f->z && d < f->q->rank; d++)
    if (f->z->shape[d] != f->s->shape[d]) return 0;
  return mgopt__mq_shapes(f->q->rank, f->q->shape, f->s->shape, f);
}

static int mgopt__mq_4bit(mgopt_dtype dt) { return dt == MGOPT_DT_INT4 || dt == MGOPT_DT_UINT4; }

/* 1: DequantizeLinear at the row's opset; 0: Cast and Mul. */
static int mgopt__mq_use_dq(const mgopt__mq_form *f, int64_t opset) {
  int fp16 = f->s->dtype == MGOPT_DT_FP16;
  if (f->s->dtype != MGOPT_DT_FP32 && !fp16) return 0;
  if (mgopt__mq_4bit((mgopt_dtype)f->q->dtype) || f->kind == 2) return opset >= 21;
  if (fp16 && opset < 19) return 0;
  return opset >= (f->kind == 1 ? 13 : 10);
}

/* A float `data` that is not a constant (the output of a palettized
   weight's lookup, say): out = (data - offset) * scale as Sub and Mul, the
   scale (and a float offset) of data's rank broadcasting, all of one float
   dtype. 1 when op is that form. */
static int mgopt__mq_float_data(const mgopt_op *op) {
  mgopt_value *dv = mgopt_op_operand(op, "data"), *zv = mgopt_op_operand(op, "offset");
  mgopt_tensor *s = mgopt_value_const(mgopt_op_operand(op, "scale")), *z = zv ? mgopt_value_const(zv) : NULL;
  if (!dv || mgopt_value_const(dv) || !s || (zv && !z) || dv->type.kind != MGOPT_TYPE_TENSOR) return 0;
  if ((s->dtype != MGOPT_DT_FP32 && s->dtype != MGOPT_DT_FP16) || dv->type.dtype != s->dtype) return 0;
  if (dv->type.rank != s->rank || (z && (z->dtype != s->dtype || z->rank != s->rank))) return 0;
  return 1;
}

static const char *mgopt__exw_bss(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt__mq_form f;
  mgopt_dtype qdt;
  MGOPT__UNUSED(p);
  if (mgopt__mq_float_data(op)) return NULL;
  if (!mgopt__mq_bss(op, &f)) return "a scale or offset that DequantizeLinear cannot express";
  qdt = (mgopt_dtype)f.q->dtype;
  if (qdt != MGOPT_DT_INT8 && qdt != MGOPT_DT_UINT8 && !mgopt__mq_4bit(qdt)) return "data neither 8- nor 4-bit";
  if (f.s->dtype != MGOPT_DT_FP32 && f.s->dtype != MGOPT_DT_FP16) return "a scale neither fp32 nor fp16";
  if ((mgopt__mq_4bit(qdt) || f.kind == 2) && m->since < 21) return "4-bit or blocked DequantizeLinear needs opset 21";
  return NULL;
}

/* A view of t with another dtype tag and shape (same bytes). */
static mgopt_tensor *mgopt__mq_view(mgopt_program *p, mgopt_tensor *t, mgopt_dtype dt, int32_t rank,
                                    const int64_t *shape) {
  const void *data = mgopt_tensor_data(p, t);
  return data ? mgopt_tensor_new_borrowed(p, dt, rank, shape, data, t->nbytes) : NULL;
}

static mgopt_dtype mgopt__mq_onnx_int(mgopt_dtype dt) {
  return dt == MGOPT_DT_INT4 ? MGOPT_DT_INT4X : dt == MGOPT_DT_UINT4 ? MGOPT_DT_UINT4X : dt;
}

/* t (shape of the scale) repeated to the data's shape on every axis but the
   blocked one, as dtype dt (integers: element values; floats: as stored). */
static mgopt_tensor *mgopt__mq_expand(mgopt_program *p, mgopt_tensor *t, const mgopt__mq_form *f, mgopt_dtype dt) {
  int64_t shape[MGOPT_MAX_RANK], i;
  int32_t d, r = f->q->rank;
  mgopt_tensor *o;
  for (d = 0; d < r; d++) shape[d] = d == f->axis ? t->shape[d] : f->q->shape[d];
  o = mgopt_tensor_new(p, dt, r, shape);
  if (!o) return NULL;
  for (i = 0; i < o->numel; i++) {
    int64_t rem = i, src = 0, stride = 1;
    for (d = r - 1; d >= 0; d--) {
      int64_t c = rem % shape[d];
      rem /= shape[d];
      if (t->shape[d] != 1) src += c * stride;
      stride *= t->shape[d];
    }
    if (mgopt_dtype_is_float(dt)) mgopt_tensor_set_f64(o, i, mgopt_tensor_get_f64(t, src));
    else mgopt_tensor_set_i64(o, i, mgopt_tensor_get_i64(t, src));
  }
  return o;
}

/* 1 when every reader of v writes its constants itself (v is never written
   under its own name by the graph's initializer writer). */
static int mgopt__mq_only_ours(const mgopt_value *v) {
  const mgopt_use *u;
  for (u = v->uses; u; u = u->next)
    if (!u->op || !mgopt__exp_writes_consts(u->op)) return 0;
  return v->uses != NULL;
}

static int mgopt__mq_same_init(const mgopt_onnx_tensor *a, const mgopt_onnx_tensor *b) {
  int64_t d;
  if (a->data_type != b->data_type || a->ndims != b->ndims || !a->raw_data.len || a->raw_data.len != b->raw_data.len ||
      a->data_location != b->data_location)
    return 0;
  for (d = 0; d < a->ndims; d++)
    if (a->dims[d] != b->dims[d]) return 0;
  return memcmp(a->raw_data.ptr, b->raw_data.ptr, (size_t)a->raw_data.len) == 0;
}

/* A short name no value of the model holds: "q" and a counter in base 36.
   The writer's intermediate values and tables take these: names repeated
   in every decode node cost bytes (a long exported name ten times per
   weight, say). */
static const char *mgopt__mq_short(mgopt__exp *E) {
  static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  const char *key = mgopt_program_intern_cstr(E->p, "q~");
  mgopt__map_slot *sl = key ? mgopt__map_get(&E->fresh, mgopt__map_ptr_key(key), NULL) : NULL;
  if (!sl) return NULL;
  for (;;) {
    char buf[24], rev[16];
    int n = 0, k = 0, r;
    uint64_t c = sl->v.u++;
    const char *nm;
    do {
      rev[k++] = digits[c % 36];
      c /= 36;
    } while (c);
    buf[n++] = 'q';
    while (k) buf[n++] = rev[--k];
    buf[n] = 0;
    nm = mgopt_program_intern_cstr(E->p, buf);
    if (!nm) return NULL;
    r = mgopt__exp_claim(E, nm);
    if (r < 0) return NULL;
    if (r) return nm;
  }
}

/* An initializer of the main graph holding *enc's bytes already: its name, else NULL. */
static const char *mgopt__mq_find(mgopt__exp *E, const mgopt_onnx_tensor *enc) {
  int64_t i;
  int64_t j;
  for (i = 0; i < E->g->inits.n; i++) {
    const mgopt_onnx_tensor *w = (const mgopt_onnx_tensor *)E->g->inits.data + i;
    int input = 0;
    if (!mgopt__mq_same_init(w, enc)) continue;
    /* an initializer that is also a graph input is a default the caller may replace */
    for (j = 0; j < E->g->inputs.n && !input; j++)
      input = ((const mgopt_onnx_value_info *)E->g->inputs.data)[j].name.ptr == w->name.ptr;
    if (!input) return w->name.ptr; /* names are interned, NUL-terminated */
  }
  return NULL;
}

/* An initializer holding t, named `name` or (NULL) a short name, shared
   with an initializer of the same dtype, shape and bytes written before
   (initializers are immutable: every reader sees the same values). In a
   graph that holds no initializers a Constant node. Returns the name. */
static const char *mgopt__mq_table(mgopt__exp *E, mgopt_tensor *t, const char *name) {
  mgopt_onnx_tensor *ot, tmp;
  const char *found;
  if (!t) return NULL;
  if (!E->g->inits_ok) return mgopt__exp_const(E, name ? name : "q", t);
  memset(&tmp, 0, sizeof tmp);
  if (mgopt__exp_tensor(E, t, "", &tmp)) return NULL;
  if ((found = mgopt__mq_find(E, &tmp)) != NULL) return found;
  if (!name && !(name = mgopt__mq_short(E))) return NULL;
  ot = (mgopt_onnx_tensor *)mgopt__exv_push(E, &E->g->inits, sizeof(mgopt_onnx_tensor));
  if (!ot) return NULL;
  *ot = tmp;
  ot->name.ptr = name;
  ot->name.len = strlen(name);
  return name;
}

/* The int64 vector v[0..n) as a shared initializer (see mgopt__mq_table). */
static const char *mgopt__mq_i64s(mgopt__exp *E, const int64_t *v, int64_t n) {
  mgopt_tensor *t = mgopt_tensor_new(E->p, MGOPT_DT_INT64, 1, &n);
  if (!t) return NULL;
  if (n) memcpy(t->data, v, sizeof(int64_t) * (size_t)n);
  return mgopt__mq_table(E, t, NULL);
}

/* An initializer holding t for operand v: shared when the same bytes were
   written before; else named v's own name when that is short (at most 16
   bytes) and only constant-writing readers read v (the name is v's,
   claimed for it, and not yet written), else a short name. Returns the
   name. */
static const char *mgopt__mq_const(mgopt__exp *E, const mgopt_value *v, mgopt_tensor *t) {
  const char *own = v && v->name && *v->name && strlen(v->name) <= 16 && mgopt_value_const(v) && mgopt__mq_only_ours(v)
                        ? v->name
                        : NULL;
  int64_t i;
  for (i = 0; own && i < E->g->inits.n; i++)
    if (((const mgopt_onnx_tensor *)E->g->inits.data)[i].name.ptr == own) own = NULL; /* taken by another form of v */
  return mgopt__mq_table(E, t, own);
}

/* A node of `type` reading ins, writing one value with a short name; its name. */
static const char *mgopt__mq_node(mgopt__exp *E, const char *type, const char *const *ins, int64_t nin,
                                  mgopt_onnx_node **np) {
  const char *nm = mgopt__mq_short(E);
  mgopt_onnx_node *n = nm ? mgopt__exp_node(E, type, "", NULL) : NULL;
  if (!n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, ins, nin) ||
      !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &nm, 1))
    return NULL;
  if (np) *np = n;
  return nm;
}

/* The last node of a decode, writing op's output: no node name (the value
   keeps its name; the node's would repeat it). */
static mgopt_onnx_node *mgopt__mq_last(mgopt__exp *E, const mgopt_op *op, const char *type, const char *const *ins,
                                       int64_t nin) {
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, type, ins, nin);
  if (n) {
    n->name.ptr = "";
    n->name.len = 0;
  }
  return n;
}

/* Writes out = scale * (data - offset) in form f: data, scale and offset
   written as initializers for the operands dv, sv, zv (mgopt__mq_const). */
static mgopt_status mgopt__mq_write(mgopt__exp *E, const mgopt_op *op, const mgopt__mq_form *f, const mgopt_value *dv,
                                    const mgopt_value *sv, const mgopt_value *zv) {
  mgopt_program *p = E->p;
  const char *ins[3];
  mgopt_dtype qdt = (mgopt_dtype)f->q->dtype, odt = mgopt__mq_onnx_int(qdt);
  mgopt_onnx_node *n;
  ins[0] = mgopt__mq_const(E, dv, mgopt__mq_view(p, f->q, odt, f->q->rank, f->q->shape));
  if (!ins[0]) return mgopt__exp_nomem(E);
  if (mgopt__mq_use_dq(f, E->opset)) {
    int64_t c = f->kind == 1 ? f->s->shape[f->axis] : 1;
    mgopt_tensor *st, *zt = NULL;
    if (f->kind == 2) {
      st = mgopt__mq_expand(p, f->s, f, (mgopt_dtype)f->s->dtype);
      if (f->z) zt = mgopt__mq_expand(p, f->z, f, odt);
    } else {
      st = mgopt__mq_view(p, f->s, (mgopt_dtype)f->s->dtype, f->kind, &c);
      if (f->z) zt = mgopt__mq_view(p, f->z, odt, f->kind, &c);
    }
    ins[1] = mgopt__mq_const(E, sv, st);
    ins[2] = f->z ? mgopt__mq_const(E, zv, zt) : NULL;
    if (!ins[1] || (f->z && !ins[2])) return mgopt__exp_nomem(E);
    n = mgopt__mq_last(E, op, "DequantizeLinear", ins, f->z ? 3 : 2);
    if (!n) return mgopt__exp_nomem(E);
    if (f->kind >= 1 && !mgopt__exp_aint(E, n, "axis", f->axis)) return mgopt__exp_nomem(E);
    if (f->kind == 2 && !mgopt__exp_aint(E, n, "block_size", f->block)) return mgopt__exp_nomem(E);
    return mgopt__exp_done(E, n);
  } else {
    /* Cast(data) [- offset] * scale, in the scale's dtype */
    mgopt_dtype fdt = (mgopt_dtype)f->s->dtype;
    const char *cur, *io[2];
    const char *sname = mgopt__mq_const(E, sv, f->s);
    mgopt_onnx_node *cn = NULL;
    cur = sname ? mgopt__mq_node(E, "Cast", ins, 1, &cn) : NULL;
    if (!cur || !mgopt__exp_aint(E, cn, "to", mgopt__exp_dtype(fdt))) return mgopt__exp_nomem(E);
    if (f->z) {
      mgopt_tensor *zf = mgopt_tensor_new(p, fdt, f->z->rank, f->z->shape);
      int64_t i;
      if (!zf) return mgopt__exp_nomem(E);
      for (i = 0; i < zf->numel; i++) mgopt_tensor_set_f64(zf, i, (double)mgopt_tensor_get_i64(f->z, i));
      io[0] = cur;
      io[1] = mgopt__mq_const(E, zv, zf);
      cur = io[1] ? mgopt__mq_node(E, "Sub", io, 2, NULL) : NULL;
      if (!cur) return mgopt__exp_nomem(E);
    }
    io[0] = cur;
    io[1] = sname;
    n = mgopt__mq_last(E, op, "Mul", io, 2);
    return n ? mgopt__exp_done(E, n) : mgopt__exp_nomem(E);
  }
}

static mgopt_status mgopt__exp_float_data(mgopt__exp *E, const mgopt_op *op) {
  const char *io[2];
  mgopt_onnx_node *n;
  io[0] = mgopt__exp_in(op, "data");
  if (mgopt_op_operand(op, "offset")) {
    io[1] = mgopt__exp_in(op, "offset");
    io[0] = mgopt__mq_node(E, "Sub", io, 2, NULL);
    if (!io[0]) return mgopt__exp_nomem(E);
  }
  io[1] = mgopt__exp_in(op, "scale");
  n = mgopt__mq_last(E, op, "Mul", io, 2);
  return n ? mgopt__exp_done(E, n) : mgopt__exp_nomem(E);
}

static mgopt_status mgopt__exp_bss(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt__mq_form f;
  MGOPT__UNUSED(m);
  if (mgopt__mq_float_data(op)) return mgopt__exp_float_data(E, op);
  mgopt__mq_bss(op, &f);
  return mgopt__mq_write(E, op, &f, mgopt_op_operand(op, "data"), mgopt_op_operand(op, "scale"),
                         mgopt_op_operand(op, "offset"));
}

/* ---------------------------------------------------------------- constexpr_affine_dequantize

   out = scale * (quantized_data - zero_point) with a scalar or a vector
   along `axis`: the per-tensor or per-axis form of
   constexpr_blockwise_shift_scale above, written by the same code (the
   scale and zero point seen with the data's rank). A zero point of all
   zeros is left out (DequantizeLinear's default); a float one is not
   written. */

/* t (rank 0 or a vector along axis) seen with rank r: 1 everywhere but axis. */
static mgopt_tensor *mgopt__mq_at_axis(mgopt_program *p, mgopt_tensor *t, int32_t r, int32_t axis,
                                       mgopt_dtype dt) {
  int64_t shape[MGOPT_MAX_RANK];
  int32_t d;
  for (d = 0; d < r; d++) shape[d] = d == axis ? t->numel : 1;
  return mgopt__mq_view(p, t, dt, r, shape);
}

/* The form of affine op `op`; p NULL only checks (no views are made). */
static int mgopt__mq_affine(mgopt_program *p, const mgopt_op *op, mgopt__mq_form *f) {
  mgopt_tensor *q = mgopt_value_const(mgopt_op_operand(op, "quantized_data"));
  mgopt_tensor *s = mgopt_value_const(mgopt_op_operand(op, "scale"));
  mgopt_tensor *z = mgopt_value_const(mgopt_op_operand(op, "zero_point"));
  int64_t axis = mgopt_op_get_int(op, "axis", 0), n, i, zeros = 1;
  memset(f, 0, sizeof *f);
  if (!q || !s || !z || q->rank < 1 || s->rank > 1 || z->rank > 1) return 0;
  if (q->dtype != MGOPT_DT_INT8 && q->dtype != MGOPT_DT_UINT8) return 0;
  if ((s->dtype != MGOPT_DT_FP32 && s->dtype != MGOPT_DT_FP16) || z->dtype != q->dtype) return 0;
  if (axis < -q->rank || axis >= q->rank) return 0;
  if (axis < 0) axis += q->rank;
  n = s->numel > z->numel ? s->numel : z->numel;
  if ((s->numel != 1 && s->numel != q->shape[axis]) || (z->numel != 1 && z->numel != q->shape[axis])) return 0;
  if (!mgopt_tensor_data(p ? p : op->parent->program, z)) return 0;
  for (i = 0; i < z->numel && zeros; i++) zeros = mgopt_tensor_get_i64(z, i) == 0;
  /* a scalar zero point beside a vector scale would need its own copy per channel */
  if (!zeros && n > 1 && z->numel != s->numel) return 0;
  f->kind = n > 1 ? 1 : 0;
  f->axis = (int32_t)axis;
  if (!p) {
    f->q = q;
    return 1;
  }
  f->q = q;
  f->s = mgopt__mq_at_axis(p, s, q->rank, f->axis, (mgopt_dtype)s->dtype);
  f->z = zeros ? NULL : mgopt__mq_at_axis(p, z, q->rank, f->axis, (mgopt_dtype)z->dtype);
  return f->s && (zeros || f->z);
}

static const char *mgopt__exw_affine(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt__mq_form f;
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt__mq_affine(NULL, op, &f) ? NULL : "a zero point or scale DequantizeLinear cannot express";
}

static mgopt_status mgopt__exp_affine(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt__mq_form f;
  MGOPT__UNUSED(m);
  if (!mgopt__mq_affine(E->p, op, &f)) return mgopt__exp_nomem(E);
  return mgopt__mq_write(E, op, &f, mgopt_op_operand(op, "quantized_data"), mgopt_op_operand(op, "scale"),
                         mgopt_op_operand(op, "zero_point"));
}

/* ---------------------------------------------------------------- QuantizeLinear / DequantizeLinear

   QuantizeLinear(x, scale[, zp]) <-> quantize(input, scale[, zero_point],
   axis?, output_dtype): saturate(round_half_even(x / scale) + zp), and
   DequantizeLinear(x, scale[, zp]) <-> dequantize(input, scale[,
   zero_point], axis?): (x - zp) * scale, at the scale's dtype. The same
   arithmetic (the kernels compute in float and round once); mapped only
   where it is exactly that:
   - integers int8 / uint8 (every opset), int16 / uint16 (from opset 21);
     4-bit integers, int32 and float8 do not (4-bit constants: below);
   - QuantizeLinear: x and scale fp32 (fp16 would divide at fp16 in the
     kernel, in float in ONNX Runtime); DequantizeLinear: scale fp32, or
     fp16 from opset 19;
   - the scale a scalar (per tensor), or from opset 13 a vector along
     `axis` (default 1) as long as the data's dim (the scale's length 1
     needs the dim 1: ONNX Runtime reads a 1-element vector per tensor);
     the zero point of the scale's shape;
   - no block_size (dequantize has no blocks; blocked constants: below), no
     attribute this list does not know (opset 23's output_dtype of
     DequantizeLinear, say).
   Written back in the target opset: per tensor from 10, per axis from 13,
   an fp16 scale (dequantize only) from 19, 16-bit from 21; an output dtype other than uint8 without a
   zero point gets a zero point of zeros (QuantizeLinear's output dtype is
   the zero point's). */

/* ---------------------------------------------------------------- integer forms left opaque

   DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul and
   QLinearConv have no mapping: no composition of canonical ops computes
   the same numbers, so each stays an opaque node (written back as it was
   read) and is evaluated by its own kernel (src/kernels/onnx_quant.c).
   - DynamicQuantizeLinear computes its scale and zero point from the data.
     Its canonical form would be its ONNX function body (reduce_min /
     reduce_max, minimum / maximum with 0, sub, real_div by 255, clip,
     round, cast, quantize). On x = [0, 0] (a ReLU output, say) the body
     gives y_scale = 0 and a zero point of round(0 / 0) = NaN, and quantize
     divides by 0; the operator gives y_scale = 1/255 (ONNX's reference;
     ONNX Runtime gives 1.0) and zero point 0.
   - MatMulInteger / ConvInteger, followed by Cast and Mul by
     a_scale * b_scale (what dynamic quantizers write), against
     dequantize(a) and dequantize(b) into a fp32 matmul / conv: the integer
     form sums exactly (int32) and rounds twice (Cast, Mul); the float form
     rounds every product and every partial sum, in the runtime's order.
     With every scale 1 and zero points 0 (a) and -128 (b), K = 262 terms
     258 * (255 * 255) + 7 * 73 + 255 * 1 = 2^24, then 1 * 1 twice: the
     integer form gives 16777218, an fp32 sum in index order 16777216
     (2^24 + 1 rounds to 2^24, twice). And the int32 accumulator may wrap
     (ONNX allows it; from 33026 terms of 255 * 255), a float sum does not.
     The forms agree only when every dequantized value and partial sum is
     exact in fp32 (power-of-two scales, K * 255 * 255 < 2^24): a dynamic
     scale (range / 255) is data, never known to be one.
   - QLinearMatMul / QLinearConv against dequantize -> matmul / conv ->
     quantize: the operator rounds acc * fp32(fp32(a_scale * b_scale) /
     y_scale) once; the chain rounds the dequantized values, the float sum
     and the division by y_scale. With a_scale = b_scale = y_scale = 0.1
     (fp32), zero points 0, a = [[1]], b = [[5]]: the operator gives
     round(5 * 0.10000000894) = 1, the chain quantize(fp32(0.1 * 0.5)) =
     round(0.5) = 0 (tests/unit/test_onnx_int_ops.c runs both). */

static int mgopt__mq_qint(mgopt_dtype dt, int64_t opset) {
  if (dt == MGOPT_DT_INT8 || dt == MGOPT_DT_UINT8) return 1;
  return opset >= 21 && (dt == MGOPT_DT_INT16 || dt == MGOPT_DT_UINT16);
}

/* The static length of a rank-1 value, -1 when it is not one. */
static int64_t mgopt__mq_len(const mgopt_value *v) {
  if (!v || v->type.kind != MGOPT_TYPE_TENSOR || v->type.rank != 1 || !mgopt_dim_is_static(v->type.dims[0])) return -1;
  return v->type.dims[0].v;
}

/* Reads node I->node's scale and zero point: 1 with *axis (-1: per tensor)
   when they are a form the canonical ops share with ONNX, else 0. */
static int mgopt__imp_qparams(mgopt__imp *I, const mgopt__onnx_map *m, mgopt_value *x, mgopt_value *s,
                              mgopt_value *z, int64_t *axis) {
  static const char *const known[] = {"axis", "saturate", "block_size", "output_dtype"};
  int64_t i, k, r = mgopt__imp_rank(x), n;
  for (i = 0; i < I->node->nattributes; i++) {
    for (k = 0; k < 4; k++)
      if (mgopt__imp_streq(I->node->attributes[i].name, known[k])) break;
    if (k == 4 || (k == 3 && strcmp(m->onnx, "QuantizeLinear") != 0)) return 0;
  }
  if (mgopt__imp_aint(I->node, "block_size", 0) != 0 || r < 0 || mgopt__imp_rank(s) < 0) return 0;
  if (z && (mgopt__imp_rank(z) != mgopt__imp_rank(s) || (s->type.rank == 1 && mgopt__mq_len(z) != mgopt__mq_len(s))))
    return 0;
  *axis = -1;
  if (s->type.rank == 0) return 1;
  if (s->type.rank != 1 || m->since < 13 || r < 1) return 0;
  *axis = mgopt__imp_aint(I->node, "axis", 1);
  if (*axis < -r || *axis >= r) return 0;
  if (*axis < 0) *axis += r;
  n = mgopt__mq_len(s);
  if (n < 0) return 0;
  if (n == 1) return mgopt_dim_is_static(x->type.dims[*axis]) && x->type.dims[*axis].v == 1;
  return 1;
}

/* ---------------------------------------------------------------- blocked and 4-bit DequantizeLinear of constants

   From opset 21 DequantizeLinear takes int4 / uint4 data and blocks: with
   block_size B > 0 the scale (and zero point) has the data's rank, the
   data's dims except on `axis`, where it has ceil(D / B), and element i
   along axis uses entry floor(i / B). Of constant data, scale and zero
   point that is constexpr_blockwise_shift_scale exactly: (data - offset) *
   scale with the scale repeated blockwise, at the scale's dtype (the
   difference of two 4- or 8-bit integers is exact in fp16 and fp32, so the
   product is the one rounding on both sides). Mapped when:
   - the data is int8 / uint8 with B > 0, or int4 / uint4 (B >= 0): per
     tensor (scalar scale), per axis (a vector as long as the data's dim on
     axis) or blocked; 8-bit per tensor and per axis keep the dequantize
     mapping above;
   - the blocks divide the axis (B * ceil(D / B) == D; a short last block
     has no canonical form), and the form the writer reads back from the
     canonical shapes is the same (kind, axis, block): B == D or B == 1,
     and a per-axis vector of length 1, stay as they came;
   - the scale fp32 or fp16; no attribute but axis and block_size.
   The data keeps its bytes (4-bit: ONNX's packing is the IR's, two per
   byte, low nibble first); a per-tensor or per-axis scale and zero point are
   seen with the data's rank. Non-constant data stays opaque: dequantize
   has no blocks and no 4-bit input. */

static mgopt_dtype mgopt__mq_ir_int(mgopt_dtype dt) {
  return dt == MGOPT_DT_INT4X ? MGOPT_DT_INT4 : dt == MGOPT_DT_UINT4X ? MGOPT_DT_UINT4 : dt;
}

/* 1 when nm names an input or output of the main graph. */
static int mgopt__imp_dq_io(const mgopt__imp *I, const char *nm) {
  int64_t i;
  const mgopt_onnx_graph *g = I->m ? I->m->graph : NULL;
  for (i = 0; g && i < g->ninputs; i++)
    if (mgopt__imp_streq(g->inputs[i].name, nm)) return 1;
  for (i = 0; g && i < g->noutputs; i++)
    if (mgopt__imp_streq(g->outputs[i].name, nm)) return 1;
  return !g;
}

/* v's constant as dtype dt and shape (r, shape): v itself when both are
   its own, else a new const holding a view of the same bytes. In the main
   graph the view takes v's name and v a fresh one (unless v's name is an
   input's or output's), so the initializer is written back under its own
   name; later readers of the name still read v. */
static mgopt_value *mgopt__imp_dq_view(mgopt__imp *I, mgopt_value *v, mgopt_dtype dt, int32_t r, const int64_t *shape,
                                       const char *what) {
  mgopt_tensor *t = mgopt_value_const(v);
  mgopt_value *nv;
  int32_t d;
  int same = t->dtype == (uint8_t)dt && t->rank == r;
  for (d = 0; same && d < r; d++) same = t->shape[d] == shape[d];
  if (same) return v;
  nv = mgopt__imp_const(I, NULL, what, mgopt__mq_view(I->p, t, dt, r, shape));
  if (nv && I->depth == 0 && v->name && *v->name && !mgopt__imp_dq_io(I, v->name)) {
    const char *own = v->name;
    v->name = nv->name;
    nv->name = own;
  }
  return nv;
}

/* 1 mapped, 0 not this form, -1 error. */
static int mgopt__imp_dq_const(mgopt__imp *I, mgopt_value *x, mgopt_value *s, mgopt_value *z) {
  mgopt_tensor *qt = mgopt_value_const(x), *st = mgopt_value_const(s), *zt = z ? mgopt_value_const(z) : NULL;
  int64_t block = mgopt__imp_aint(I->node, "block_size", 0), axis = mgopt__imp_aint(I->node, "axis", 1);
  int64_t cs[MGOPT_MAX_RANK];
  int64_t i;
  int32_t d, r;
  int kind;
  mgopt_dtype xdt, qdt;
  mgopt__mq_form f;
  mgopt_value *dv, *sv, *zv = NULL;
  mgopt_op *op;
  if (!qt || !st || (z && !zt) || qt->rank < 1 || !mgopt_tensor_data(I->p, qt)) return 0;
  for (i = 0; i < I->node->nattributes; i++)
    if (!mgopt__imp_streq(I->node->attributes[i].name, "axis") && !mgopt__imp_streq(I->node->attributes[i].name, "block_size"))
      return 0;
  xdt = (mgopt_dtype)qt->dtype;
  qdt = mgopt__mq_ir_int(xdt);
  if (block < 0 || (block == 0 && !mgopt__mq_4bit(qdt))) return 0;
  if (qdt != MGOPT_DT_INT8 && qdt != MGOPT_DT_UINT8 && !mgopt__mq_4bit(qdt)) return 0;
  if (st->dtype != MGOPT_DT_FP32 && st->dtype != MGOPT_DT_FP16) return 0;
  if (zt && (zt->dtype != (uint8_t)xdt || zt->rank != st->rank)) return 0;
  for (d = 0; zt && d < st->rank; d++)
    if (zt->shape[d] != st->shape[d]) return 0;
  r = qt->rank;
  if (st->rank && (axis < -r || axis >= r)) return 0; /* a scalar scale ignores axis */
  if (axis < 0) axis += r;
  for (d = 0; d < r; d++) cs[d] = 1;
  if (block > 0) {
    if (st->rank != r) return 0;
    for (d = 0; d < r; d++) {
      if (d == axis ? st->shape[d] * block != qt->shape[d] : st->shape[d] != qt->shape[d]) return 0;
      cs[d] = st->shape[d];
    }
    kind = 2;
  } else if (st->rank == 0) {
    kind = 0;
  } else {
    if (st->rank != 1 || st->shape[0] != qt->shape[axis]) return 0;
    cs[axis] = st->shape[0];
    kind = 1;
  }
  /* the writer must read the same form back from the canonical shapes */
  memset(&f, 0, sizeof f);
  if (!mgopt__mq_shapes(r, qt->shape, cs, &f) || f.kind != kind || (kind && f.axis != axis) ||
      (kind == 2 && f.block != block))
    return 0;
  dv = mgopt__imp_dq_view(I, x, qdt, r, qt->shape, "data");
  sv = dv ? mgopt__imp_dq_view(I, s, (mgopt_dtype)st->dtype, r, cs, "scale") : NULL;
  if (z && sv) zv = mgopt__imp_dq_view(I, z, qdt, r, cs, "offset");
  if (!sv || (z && !zv)) return -1;
  op = mgopt__imp_op(I, "constexpr_blockwise_shift_scale", 1, 0);
  if (!op || mgopt_op_set_operand(op, "data", dv) || mgopt_op_set_operand(op, "scale", sv) ||
      (zv && mgopt_op_set_operand(op, "offset", zv)))
    return -1;
  return mgopt__imp_done(I, op);
}

static int mgopt__imp_qdq(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *s = mgopt__imp_in(I, 1), *z = mgopt__imp_in(I, 2);
  int quant = m->kind == MGOPT_OP_quantize;
  int64_t axis;
  mgopt_dtype qdt;
  mgopt_op *op;
  if (!x || !s || (mgopt__imp_nin(I->node) > 2 && !z)) return 0;
  if (!quant && m->since >= 21) {
    int r = mgopt__imp_dq_const(I, x, s, z);
    if (r) return r;
  }
  if (!mgopt__imp_qparams(I, m, x, s, z, &axis)) return 0;
  if (quant) {
    int64_t odt = mgopt__imp_aint(I->node, "output_dtype", 0);
    if (x->type.dtype != MGOPT_DT_FP32 || s->type.dtype != MGOPT_DT_FP32) return 0;
    qdt = z ? (mgopt_dtype)z->type.dtype : odt ? mgopt_onnx_dtype((int32_t)(odt > 64 ? 0 : odt)) : MGOPT_DT_UINT8;
    if (odt && z && mgopt_onnx_dtype((int32_t)(odt > 64 ? 0 : odt)) != qdt) return 0;
  } else {
    qdt = (mgopt_dtype)x->type.dtype;
    if (s->type.dtype != MGOPT_DT_FP32 && !(s->type.dtype == MGOPT_DT_FP16 && m->since >= 19)) return 0;
    if (z && z->type.dtype != (uint8_t)qdt) return 0;
  }
  if (!mgopt__mq_qint(qdt, m->since)) return 0;
  op = mgopt__imp_op(I, quant ? "quantize" : "dequantize", 1, 0);
  if (!op || mgopt_op_set_operand(op, "input", x) || mgopt_op_set_operand(op, "scale", s) ||
      (z && mgopt_op_set_operand(op, "zero_point", z)) || (axis >= 0 && mgopt_op_set_int(op, "axis", axis)) ||
      (quant && mgopt_op_set_string(op, "output_dtype", mgopt_dtype_name(qdt))))
    return -1;
  return mgopt__imp_done(I, op);
}

/* The integer dtype of a quantize's result or a dequantize's input. */
static mgopt_dtype mgopt__mq_op_int(const mgopt_op *op) {
  size_t len = 0;
  const char *ods;
  mgopt_value *x;
  if (op->kind == MGOPT_OP_quantize) {
    ods = mgopt_op_get_string(op, "output_dtype", &len);
    return ods ? mgopt_dtype_from_name(ods, len) : MGOPT_DT_UNKNOWN;
  }
  x = mgopt_op_operand(op, "input");
  return x && x->type.kind == MGOPT_TYPE_TENSOR ? (mgopt_dtype)x->type.dtype : MGOPT_DT_UNKNOWN;
}

static const char *mgopt__exw_qdq(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "input"), *s = mgopt_op_operand(op, "scale"), *z = mgopt_op_operand(op, "zero_point");
  mgopt_dtype qdt = mgopt__mq_op_int(op);
  int sr = mgopt__imp_rank(s);
  MGOPT__UNUSED(p);
  if (!x || !s || x->type.kind != MGOPT_TYPE_TENSOR) return "an operand is missing";
  if (!mgopt__mq_qint(qdt, m->since)) return m->since < 21 ? "integers other than int8 / uint8 need opset 21" : "integers other than 8 or 16 bits";
  if (s->type.dtype != MGOPT_DT_FP32 && !(s->type.dtype == MGOPT_DT_FP16 && m->since >= 19))
    return m->since < 19 ? "a scale other than fp32 needs opset 19" : "a scale neither fp32 nor fp16";
  if (op->kind == MGOPT_OP_quantize && (x->type.dtype != MGOPT_DT_FP32 || s->type.dtype != MGOPT_DT_FP32))
    return "a quantize of fp16 (the canonical op divides at fp16, ONNX Runtime in float)";
  if (z && z->type.dtype != (uint8_t)qdt) return "a zero point of another dtype than the integers";
  if (sr == 1 && m->since < 13) return "a per-axis scale needs opset 13";
  if (sr == 1 && !mgopt_op_attr(op, "axis") && !mgopt_op_operand(op, "axis") && x->type.rank != 1) return "a vector scale without axis";
  if (sr != 0 && sr != 1) return "a scale of rank other than 0 or 1";
  if (z && (mgopt__imp_rank(z) != sr || (sr == 1 && mgopt__mq_len(z) != mgopt__mq_len(s))))
    return "a zero point not of the scale's shape";
  if (op->kind == MGOPT_OP_quantize && !z && qdt != MGOPT_DT_UINT8 && sr == 1 && mgopt__mq_len(s) < 0)
    return "no zero point and a scale of unknown length";
  return NULL;
}

static mgopt_status mgopt__exp_qdq(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "input"), *s = mgopt_op_operand(op, "scale");
  const char *ins[3];
  int64_t nin = 2;
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_vname(x);
  ins[1] = mgopt__exp_vname(s);
  ins[2] = mgopt__exp_in(op, "zero_point");
  if (ins[2]) {
    nin = 3;
  } else if (op->kind == MGOPT_OP_quantize && mgopt__mq_op_int(op) != MGOPT_DT_UINT8) {
    /* the output dtype is the zero point's: zeros of the scale's shape */
    int64_t len = mgopt__mq_len(s);
    mgopt_tensor *zt = mgopt_tensor_new(E->p, mgopt__mq_op_int(op), s->type.rank, &len);
    char buf[200];
    int r;
    snprintf(buf, sizeof buf, "%.150s_zero_point", mgopt__exp_vname(op->outs[0]));
    ins[2] = zt ? mgopt_program_intern_cstr(E->p, buf) : NULL;
    r = ins[2] ? mgopt__exp_claim(E, ins[2]) : -1;
    if (r < 0 || (!r && !(ins[2] = mgopt__exp_fresh(E, ins[2])))) return mgopt__exp_nomem(E);
    memset(mgopt_tensor_data_mut(E->p, zt), 0, zt->nbytes);
    ins[2] = mgopt__exp_const(E, ins[2], zt);
    if (!ins[2]) return mgopt__exp_nomem(E);
    nin = 3;
  }
  n = mgopt__exp_simple(E, op, m->onnx, ins, nin);
  if (!n) return mgopt__exp_nomem(E);
  if (mgopt__imp_rank(s) == 1 && !mgopt__exp_aint(E, n, "axis", mgopt_op_get_int(op, "axis", 0))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- constexpr_lut_to_dense

   Palettized weights: the LUT and the packed indices as initializers, the
   indices unpacked and looked up with standard ops (opset >= 7):
     packed: uint8 [M, 1], k = 8 / b indices per byte, LSB first
     Cast(to int32) -> Div by [1, 2^b, .., 2^(b(k-1))] -> Mod 2^b   (b < 8;
       at opset 9, without Mod: MatMul by the int32 [k, k] matrix with 1 on
       the diagonal and -2^b below it, v_i - 2^b v_(i+1), exact; at opsets 7
       and 8, without an int32 MatMul: v - (v / 2^b) * 2^b)
       -> Reshape to the indices' shape (Slice first when M * k > N)
     [Add the offset of each element's palette: (palette number) * 2^b,
      a small int32 tensor broadcasting along the grouped dims]
     Gather(LUT as [palettes * 2^b] or [palettes * 2^b, V], axis 0)
     [vectors of V entries (vector_axis): Transpose and Reshape them in place]
   b is the index width: 1, 2, 4 and 8 as they come (the IR packs indices
   the same way); 3-bit indices are written 4-bit and 6-bit ones 8-bit
   (unpacking across bytes would cost more ops than the bits save).
   From opset 21, 4-bit (and 3-bit) indices are a uint4 initializer in the
   indices' own shape (ONNX packs two per byte, low nibble first: the same
   bytes), decoded by the Cast alone:
     uint4 [indices' shape] -> Cast(to int32) [-> Add] -> Gather
   1- and 2-bit indices keep the packed uint8 form at every opset (as uint4
   they would take two or four times the bytes). Both IR
   forms are written: iOS16 (uint8 bytes, a rank-1 LUT, `shape`) and iOS18
   (uint{n} indices, LUT [palettes per dim.., 2^n, V]). Exact: the same
   table entries land at the same places. The file holds about b/8 bytes
   per weight element plus the tables. */

typedef struct mgopt__ml_form {
  mgopt_tensor *idx, *lut; /* idx: uint{n} of shape ishape (a view for the iOS16 form) */
  int32_t rank, vaxis;     /* rank of the indices; vector_axis (-1: none) */
  int64_t ishape[MGOPT_MAX_RANK], groups[MGOPT_MAX_RANK], ngroups, k, vs;
  int nbits;
} mgopt__ml_form;

static int mgopt__ml_bits(mgopt_dtype dt) {
  switch (dt) {
    case MGOPT_DT_UINT1: return 1;
    case MGOPT_DT_UINT2: return 2;
    case MGOPT_DT_UINT3: return 3;
    case MGOPT_DT_UINT4: return 4;
    case MGOPT_DT_UINT6: return 6;
    case MGOPT_DT_UINT8: return 8;
    default: return 0;
  }
}

/* The form of lut op `op`; p NULL only checks (no view is made). */
static int mgopt__ml_lut(mgopt_program *p, const mgopt_op *op, mgopt__ml_form *f) {
  mgopt_tensor *ix = mgopt_value_const(mgopt_op_operand(op, "indices"));
  const int64_t *sv = NULL;
  int64_t ns, n = 1, d, bits;
  memset(f, 0, sizeof *f);
  f->lut = mgopt_value_const(mgopt_op_operand(op, "lut"));
  f->vaxis = -1;
  if (!ix || !f->lut || !mgopt_dtype_nbytes((mgopt_dtype)f->lut->dtype, 1) || mgopt_dtype_bits((mgopt_dtype)f->lut->dtype) < 8)
    return 0;
  ns = mgopt_op_attr(op, "shape") ? mgopt_op_get_ints(p ? p : op->parent->program, op, "shape", &sv) : -1;
  if (ns >= 0) { /* iOS16: packed bytes, a vector of 2^n entries */
    if (ns < 1 || ns > MGOPT_MAX_RANK || ix->dtype != MGOPT_DT_UINT8 || ix->rank != 1 || f->lut->rank != 1) return 0;
    for (f->nbits = 1; f->nbits <= 8 && ((int64_t)1 << f->nbits) != f->lut->numel; f->nbits++) {
    }
    if (f->nbits > 8 || (f->nbits != 1 && f->nbits != 2 && f->nbits != 3 && f->nbits != 4 && f->nbits != 6 && f->nbits != 8))
      return 0;
    f->rank = (int32_t)ns;
    for (d = 0; d < ns; d++) {
      if (sv[d] < 0 || !mgopt__mul_i64(n, sv[d], &n)) return 0;
      f->ishape[d] = sv[d];
      f->groups[d] = 1;
    }
    if (!mgopt__mul_i64(n, f->nbits, &bits) || (bits + 7) / 8 != ix->numel) return 0;
    f->k = f->lut->numel;
    f->vs = 1;
    f->ngroups = 1;
    f->idx = ix;
    if (p) f->idx = mgopt__mq_view(p, ix, mgopt__dtype_lut_index(f->nbits), f->rank, f->ishape);
    return f->idx != NULL;
  }
  f->nbits = mgopt__ml_bits((mgopt_dtype)ix->dtype);
  f->rank = ix->rank;
  if (!f->nbits || f->rank < 1 || f->lut->rank != f->rank + 2) return 0;
  f->k = f->lut->shape[f->rank];
  f->vs = f->lut->shape[f->rank + 1];
  if (f->k != ((int64_t)1 << f->nbits) || f->vs < 1) return 0;
  f->ngroups = 1;
  for (d = 0; d < f->rank; d++) {
    f->ishape[d] = ix->shape[d];
    f->groups[d] = f->lut->shape[d];
    if (f->groups[d] < 1 || ix->shape[d] % f->groups[d]) return 0;
    f->ngroups *= f->groups[d];
  }
  if (f->vs > 1 || mgopt_op_attr(op, "vector_axis")) {
    int64_t va = mgopt_op_get_int(op, "vector_axis", -1 - f->rank);
    if (va < -f->rank || va >= f->rank) return 0;
    f->vaxis = (int32_t)(va < 0 ? va + f->rank : va);
    if (f->vs == 1) f->vaxis = -1;
  }
  f->idx = ix;
  return ix->numel > 0;
}

static const char *mgopt__exw_lut(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt__ml_form f;
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt__ml_lut(NULL, op, &f) ? NULL : "indices and a table that do not agree";
}

static mgopt_status mgopt__exp_lut(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_program *p = E->p;
  mgopt__ml_form f;
  const char *cur, *io[3];
  int64_t n, i, pshape[2], M, kb, lshape[2];
  int b;
  mgopt_tensor *packed, *lut;
  mgopt_onnx_node *nd;
  uint8_t *dst;
  MGOPT__UNUSED(m);
  if (!mgopt__ml_lut(p, op, &f)) return mgopt__exp_nomem(E);
  n = f.idx->numel;
  b = f.nbits == 3 ? 4 : f.nbits == 6 ? 8 : f.nbits;
  kb = 8 / b;
  M = (n + kb - 1) / kb;
  /* the packed indices: as they are, or widened to b bits */
  pshape[0] = M;
  pshape[1] = 1;
  if (b == 4 && E->opset >= 21) { /* uint4 in the indices' shape: Cast unpacks them */
    if (b == f.nbits) {
      packed = mgopt__mq_view(p, f.idx, MGOPT_DT_UINT4X, f.rank, f.ishape);
    } else {
      packed = mgopt_tensor_new(p, MGOPT_DT_UINT4X, f.rank, f.ishape);
      if (!packed || !mgopt_tensor_data(p, f.idx) || !mgopt_tensor_data_mut(p, packed)) return mgopt__exp_nomem(E);
      memset(packed->data, 0, packed->nbytes);
      for (i = 0; i < n; i++) mgopt_tensor_set_i64(packed, i, mgopt_tensor_get_i64(f.idx, i));
    }
  } else if (b == f.nbits) {
    packed = mgopt__mq_view(p, f.idx, MGOPT_DT_UINT8, b == 8 ? f.rank : 2, b == 8 ? f.ishape : pshape);
  } else {
    packed = mgopt_tensor_new(p, MGOPT_DT_UINT8, b == 8 ? f.rank : 2, b == 8 ? f.ishape : pshape);
    if (!packed || !mgopt_tensor_data(p, f.idx) || !(dst = (uint8_t *)mgopt_tensor_data_mut(p, packed)))
      return mgopt__exp_nomem(E);
    memset(dst, 0, packed->nbytes);
    for (i = 0; i < n; i++) dst[i / kb] |= (uint8_t)(mgopt_tensor_get_i64(f.idx, i) << ((i % kb) * b));
  }
  cur = packed ? mgopt__mq_const(E, mgopt_op_operand(op, "indices"), packed) : NULL;
  if (!cur) return mgopt__exp_nomem(E);
  io[0] = cur;
  cur = mgopt__mq_node(E, "Cast", io, 1, &nd);
  if (!cur || !mgopt__exp_aint(E, nd, "to", mgopt__exp_dtype(MGOPT_DT_INT32))) return mgopt__exp_nomem(E);
  if (b < 8 && !(b == 4 && E->opset >= 21)) {
    int64_t dshape = kb, one = 1;
    mgopt_tensor *dv = mgopt_tensor_new(p, MGOPT_DT_INT32, 1, &dshape), *mv = mgopt_tensor_new(p, MGOPT_DT_INT32, 0, &one);
    const char *shp;
    if (!dv || !mv) return mgopt__exp_nomem(E);
    for (i = 0; i < kb; i++) mgopt_tensor_set_i64(dv, i, (int64_t)1 << (i * b));
    mgopt_tensor_set_i64(mv, 0, (int64_t)1 << b);
    io[0] = cur;
    io[1] = mgopt__mq_table(E, dv, NULL);
    cur = io[1] ? mgopt__mq_node(E, "Div", io, 2, NULL) : NULL;
    io[0] = cur;
    io[1] = cur ? mgopt__mq_table(E, mv, NULL) : NULL;
    if (!io[1]) return mgopt__exp_nomem(E);
    if (E->opset >= 10) {
      cur = mgopt__mq_node(E, "Mod", io, 2, NULL);
    } else if (E->opset < 9) { /* no Mod, no int32 MatMul: v - (v / 2^b) * 2^b */
      const char *v = cur, *mod = io[1];
      cur = mgopt__mq_node(E, "Div", io, 2, NULL);
      io[0] = cur;
      io[1] = mod;
      cur = cur ? mgopt__mq_node(E, "Mul", io, 2, NULL) : NULL;
      io[0] = v;
      io[1] = cur;
      cur = cur ? mgopt__mq_node(E, "Sub", io, 2, NULL) : NULL;
    } else { /* no Mod: with v_i = x / 2^(ib), index i is v_i - 2^b v_(i+1), one int32 MatMul by A */
      int64_t ashape[2];
      mgopt_tensor *a;
      ashape[0] = ashape[1] = kb;
      a = mgopt_tensor_new(p, MGOPT_DT_INT32, 2, ashape);
      if (!a || !mgopt_tensor_data_mut(p, a)) return mgopt__exp_nomem(E);
      memset(a->data, 0, a->nbytes);
      for (i = 0; i < kb; i++) {
        mgopt_tensor_set_i64(a, i * kb + i, 1);
        if (i + 1 < kb) mgopt_tensor_set_i64(a, (i + 1) * kb + i, -((int64_t)1 << b));
      }
      io[1] = mgopt__mq_table(E, a, NULL);
      cur = io[1] ? mgopt__mq_node(E, "MatMul", io, 2, NULL) : NULL;
    }
    if (!cur) return mgopt__exp_nomem(E);
    if (M * kb != n) {
      int64_t flat = -1, zero = 0;
      io[0] = cur;
      io[1] = mgopt__mq_i64s(E, &flat, 1);
      cur = io[1] ? mgopt__mq_node(E, "Reshape", io, 2, NULL) : NULL;
      io[0] = cur;
      if (E->opset >= 10) {
        io[1] = cur ? mgopt__mq_i64s(E, &zero, 1) : NULL;
        io[2] = io[1] ? mgopt__mq_i64s(E, &n, 1) : NULL;
        cur = io[2] ? mgopt__mq_node(E, "Slice", io, 3, NULL) : NULL;
      } else if (cur) {
        cur = mgopt__mq_node(E, "Slice", io, 1, &nd);
        if (cur && (!mgopt__exp_aints(E, nd, "starts", &zero, 1) || !mgopt__exp_aints(E, nd, "ends", &n, 1) ||
                    !mgopt__exp_aints(E, nd, "axes", &zero, 1)))
          cur = NULL;
      }
      if (!cur) return mgopt__exp_nomem(E);
    }
    io[0] = cur;
    shp = mgopt__mq_i64s(E, f.ishape, f.rank);
    io[1] = shp;
    cur = shp ? mgopt__mq_node(E, "Reshape", io, 2, NULL) : NULL;
    if (!cur) return mgopt__exp_nomem(E);
  }
  if (f.ngroups > 1) { /* offsets: palette number * 2^n, varying along the grouped dims */
    int64_t oshape[MGOPT_MAX_RANK], idx[MGOPT_MAX_RANK], on = 1;
    int32_t d;
    mgopt_tensor *ot;
    for (d = 0; d < f.rank; d++) {
      oshape[d] = f.groups[d] > 1 ? f.ishape[d] : 1;
      on *= oshape[d];
    }
    ot = mgopt_tensor_new(p, MGOPT_DT_INT32, f.rank, oshape);
    if (!ot) return mgopt__exp_nomem(E);
    for (i = 0; i < on; i++) {
      int64_t rem = i, g = 0;
      for (d = f.rank - 1; d >= 0; d--) {
        idx[d] = rem % oshape[d];
        rem /= oshape[d];
      }
      for (d = 0; d < f.rank; d++) g = g * f.groups[d] + (f.groups[d] > 1 ? idx[d] / (f.ishape[d] / f.groups[d]) : 0);
      mgopt_tensor_set_i64(ot, i, g * f.k);
    }
    io[0] = cur;
    io[1] = mgopt__mq_table(E, ot, NULL);
    cur = io[1] ? mgopt__mq_node(E, "Add", io, 2, NULL) : NULL;
    if (!cur) return mgopt__exp_nomem(E);
  }
  /* the table: [palettes * 2^n] or [palettes * 2^n, V] */
  lshape[0] = f.ngroups * f.k;
  lshape[1] = f.vs;
  lut = mgopt__mq_view(p, f.lut, (mgopt_dtype)f.lut->dtype, f.vs > 1 ? 2 : 1, lshape);
  io[0] = lut ? mgopt__mq_const(E, mgopt_op_operand(op, "lut"), lut) : NULL;
  io[1] = cur;
  if (!io[0]) return mgopt__exp_nomem(E);
  if (f.vs == 1) { /* Gather's axis is 0 by default */
    nd = mgopt__mq_last(E, op, "Gather", io, 2);
    return nd ? MGOPT_OK : mgopt__exp_nomem(E);
  } else { /* [I.., V] -> V after vector_axis -> the output's shape */
    int64_t perm[MGOPT_MAX_RANK + 1], oshape[MGOPT_MAX_RANK];
    int32_t d, j = 0;
    const char *shp;
    cur = mgopt__mq_node(E, "Gather", io, 2, &nd);
    if (!cur || !mgopt__exp_aint(E, nd, "axis", 0)) return mgopt__exp_nomem(E);
    if (f.vaxis != f.rank - 1) {
      for (d = 0; d < f.rank; d++) {
        perm[j++] = d;
        if (d == f.vaxis) perm[j++] = f.rank;
      }
      io[0] = cur;
      cur = mgopt__mq_node(E, "Transpose", io, 1, &nd);
      if (!cur || !mgopt__exp_aints(E, nd, "perm", perm, f.rank + 1)) return mgopt__exp_nomem(E);
    }
    for (d = 0; d < f.rank; d++) oshape[d] = d == f.vaxis ? f.ishape[d] * f.vs : f.ishape[d];
    shp = mgopt__mq_i64s(E, oshape, f.rank);
    io[0] = cur;
    io[1] = shp;
    nd = shp ? mgopt__mq_last(E, op, "Reshape", io, 2) : NULL;
    return mgopt__exp_done(E, nd);
  }
}

MGOPT__PRIVATE int mgopt__exp_writes_consts(const mgopt_op *op) {
  switch (op->kind) {
    case MGOPT_OP_constexpr_blockwise_shift_scale: return !mgopt__mq_float_data(op);
    case MGOPT_OP_constexpr_affine_dequantize: case MGOPT_OP_constexpr_lut_to_dense: return 1;
    default: return 0;
  }
}

static const mgopt__onnx_map mgopt__onnx_quant[] = {
    {"QuantizeLinear", 10, 12, MGOPT_OP_quantize, mgopt__imp_qdq, mgopt__exp_qdq, {NULL, NULL, NULL}, mgopt__exw_qdq},
    {"QuantizeLinear", 13, 18, MGOPT_OP_quantize, mgopt__imp_qdq, mgopt__exp_qdq, {NULL, NULL, NULL}, mgopt__exw_qdq},
    {"QuantizeLinear", 19, 20, MGOPT_OP_quantize, mgopt__imp_qdq, mgopt__exp_qdq, {NULL, NULL, NULL}, mgopt__exw_qdq},
    {"QuantizeLinear", 21, 0, MGOPT_OP_quantize, mgopt__imp_qdq, mgopt__exp_qdq, {NULL, NULL, NULL}, mgopt__exw_qdq},
    {"DequantizeLinear", 10, 12, MGOPT_OP_dequantize, mgopt__imp_qdq, mgopt__exp_qdq, {NULL, NULL, NULL}, mgopt__exw_qdq},
    {"DequantizeLinear", 13, 18, MGOPT_OP_dequantize, mgopt__imp_qdq, mgopt__exp_qdq, {NULL, NULL, NULL}, mgopt__exw_qdq},
    {"DequantizeLinear", 19, 20, MGOPT_OP_dequantize, mgopt__imp_qdq, mgopt__exp_qdq, {NULL, NULL, NULL}, mgopt__exw_qdq},
    {"DequantizeLinear", 21, 0, MGOPT_OP_dequantize, mgopt__imp_qdq, mgopt__exp_qdq, {NULL, NULL, NULL}, mgopt__exw_qdq},
    /* export only: no DequantizeLinear below opset 10, Cast and Mul */
    {"Cast", 1, 9, MGOPT_OP_constexpr_blockwise_shift_scale, NULL, mgopt__exp_bss, {NULL, NULL, NULL}, mgopt__exw_bss},
    {"DequantizeLinear", 10, 20, MGOPT_OP_constexpr_blockwise_shift_scale, NULL, mgopt__exp_bss, {NULL, NULL, NULL},
     mgopt__exw_bss},
    {"DequantizeLinear", 21, 0, MGOPT_OP_constexpr_blockwise_shift_scale, NULL, mgopt__exp_bss, {NULL, NULL, NULL},
     mgopt__exw_bss},
    {"Gather", 7, 0, MGOPT_OP_constexpr_lut_to_dense, NULL, mgopt__exp_lut, {NULL, NULL, NULL}, mgopt__exw_lut},
    {"Cast", 1, 9, MGOPT_OP_constexpr_affine_dequantize, NULL, mgopt__exp_affine, {NULL, NULL, NULL}, mgopt__exw_affine},
    {"DequantizeLinear", 10, 0, MGOPT_OP_constexpr_affine_dequantize, NULL, mgopt__exp_affine, {NULL, NULL, NULL},
     mgopt__exw_affine},
};

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_quant(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_quant);
  return mgopt__onnx_quant;
}
/* src/onnx/map_sparse.c — ONNX export of pruned and fp16-stored weights: constexpr_sparse_to_dense as a sparse or dense initializer, constexpr_cast as an fp16 initializer and Cast. */

/* ---------------------------------------------------------------- constexpr_sparse_to_dense

   Written as one initializer named like the op's output (every ONNX opset):
   a sparse_initializer (values and int64 linear indices, IR version >= 6)
   when it is smaller than the dense tensor, i.e. when nnz * (element size
   + 8) < numel * element size (past 2/3 sparsity for fp32, 4/5 for fp16),
   else a dense initializer. ONNX Runtime densifies sparse initializers at
   load: the file shrinks, the memory at run time does not. Inside
   subgraphs, or when the output's name is taken, the dense form is written.
   The operands (nonzero_data, mask, shape) are not written. */

/* The dense shape and mask bytes of op, or 0 when it is not one the exporter writes. */
static int mgopt__ms_form(const mgopt_op *op, mgopt_tensor **nz, const uint8_t **mask, int32_t *rank,
                          int64_t *shape) {
  mgopt_tensor *m, *s;
  mgopt_value *sv = mgopt_op_operand(op, "shape");
  int64_t n = 1, i, set = 0;
  int32_t d;
  *nz = mgopt_value_const(mgopt_op_operand(op, "nonzero_data"));
  m = mgopt_value_const(mgopt_op_operand(op, "mask"));
  s = sv ? mgopt_value_const(sv) : NULL;
  if (!*nz || !m || (sv && !s) || (*nz)->rank != 1 || !mgopt_dtype_nbytes((mgopt_dtype)(*nz)->dtype, 1) ||
      mgopt_dtype_bits((mgopt_dtype)(*nz)->dtype) < 8)
    return 0;
  if (s) {
    if (s->rank != 1 || s->numel > MGOPT_MAX_RANK || m->dtype != MGOPT_DT_UINT8 || m->rank != 1) return 0;
    *rank = (int32_t)s->numel;
    for (d = 0; d < *rank; d++) {
      shape[d] = mgopt_tensor_get_i64(s, d);
      if (shape[d] < 0) return 0;
      n *= shape[d];
    }
    if ((n + 7) / 8 != m->numel) return 0;
  } else {
    if (m->dtype != MGOPT_DT_UINT1) return 0;
    *rank = m->rank;
    for (d = 0; d < *rank; d++) shape[d] = m->shape[d];
    n = m->numel;
  }
  *mask = (const uint8_t *)m->data;
  for (i = 0; i < n; i++) set += ((*mask)[i >> 3] >> (i & 7)) & 1;
  return set == (*nz)->numel;
}

static const char *mgopt__exw_sparse(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_tensor *nz;
  const uint8_t *mask;
  int32_t rank;
  int64_t shape[MGOPT_MAX_RANK];
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt__ms_form(op, &nz, &mask, &rank, shape) ? NULL : "a mask or nonzero_data that does not agree";
}

/* 1 when a sparse_initializer (IR version >= 6) is smaller than the dense tensor. */
static int mgopt__ms_sparse_pays(const mgopt__exp *E, int64_t nnz, int64_t n, size_t es) {
  const mgopt_onnx_model *orig = (const mgopt_onnx_model *)E->p->onnx_meta;
  if (orig && orig->ir_version > 0 && orig->ir_version < 6) return 0;
  return (double)nnz * (double)(es + 8) < (double)n * (double)es;
}

/* The sparse_initializer `name`: nz's values at the set bits of mask (dense t's shape). */
static mgopt_status mgopt__ms_write_sparse(mgopt__exp *E, const mgopt_tensor *t, mgopt_tensor *nz, const uint8_t *mask,
                                           const char *name) {
  int64_t d = nz->numel, i, j = 0;
  mgopt_tensor *ix = mgopt_tensor_new(E->p, MGOPT_DT_INT64, 1, &d);
  mgopt_onnx_sparse_tensor *st = (mgopt_onnx_sparse_tensor *)mgopt__exv_push(E, &E->g->sparse, sizeof *st);
  int64_t *iv, *dims;
  int32_t k;
  if (!ix || !st || !(iv = (int64_t *)mgopt_tensor_data_mut(E->p, ix))) return mgopt__exp_nomem(E);
  for (i = 0; i < t->numel; i++)
    if ((mask[i >> 3] >> (i & 7)) & 1) iv[j++] = i;
  st->values = (mgopt_onnx_tensor *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_tensor), 8);
  st->indices = (mgopt_onnx_tensor *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_tensor), 8);
  dims = (int64_t *)mgopt_program_alloc(E->p, sizeof(int64_t) * (size_t)(t->rank ? t->rank : 1), 8);
  if (!st->values || !st->indices || !dims || mgopt__exp_tensor(E, nz, name, st->values) ||
      mgopt__exp_tensor(E, ix, "", st->indices))
    return mgopt__exp_nomem(E);
  for (k = 0; k < t->rank; k++) dims[k] = t->shape[k];
  st->dims = dims;
  st->ndims = t->rank;
  return MGOPT_OK;
}

static mgopt_status mgopt__exp_sparse(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_tensor *nz, *t;
  const uint8_t *mask, *src;
  uint8_t *dst;
  int32_t rank;
  int64_t shape[MGOPT_MAX_RANK], i, j = 0;
  size_t es;
  const char *name = mgopt__exp_vname(op->outs[0]);
  mgopt_onnx_tensor *ot;
  int r;
  MGOPT__UNUSED(m);
  mgopt__ms_form(op, &nz, &mask, &rank, shape);
  es = (size_t)mgopt_dtype_nbytes((mgopt_dtype)nz->dtype, 1);
  t = mgopt_tensor_new(E->p, (mgopt_dtype)nz->dtype, rank, shape);
  src = (const uint8_t *)mgopt_tensor_data(E->p, nz);
  if (!t || !src || !(dst = (uint8_t *)mgopt_tensor_data_mut(E->p, t))) return mgopt__exp_nomem(E);
  memset(dst, 0, t->nbytes);
  for (i = 0; i < t->numel; i++)
    if ((mask[i >> 3] >> (i & 7)) & 1) memcpy(dst + (size_t)i * es, src + (size_t)j++ * es, es);
  r = E->g->inits_ok ? mgopt__exp_claim(E, name) : 0;
  if (r < 0) return mgopt__exp_nomem(E);
  if (E->g->is_main && mgopt__ms_sparse_pays(E, nz->numel, t->numel, es)) {
    /* under the output's name when free, else under a fresh one read through an Identity */
    const char *in = r ? name : mgopt__exp_fresh(E, name);
    mgopt_onnx_node *n;
    if (!in || mgopt__ms_write_sparse(E, t, nz, mask, in)) return mgopt__exp_nomem(E);
    if (r) return MGOPT_OK;
    n = mgopt__exp_simple(E, op, "Identity", &in, 1);
    return n ? mgopt__exp_done(E, n) : mgopt__exp_nomem(E);
  }
  if (r) { /* the output's name is free: the initializer takes it */
    ot = (mgopt_onnx_tensor *)mgopt__exv_push(E, &E->g->inits, sizeof(mgopt_onnx_tensor));
    if (!ot || mgopt__exp_tensor(E, t, name, ot)) return mgopt__exp_nomem(E);
    return MGOPT_OK;
  } else {
    const char *in = mgopt__exp_const(E, name, t);
    mgopt_onnx_node *n = in ? mgopt__exp_simple(E, op, "Identity", &in, 1) : NULL;
    return n ? mgopt__exp_done(E, n) : mgopt__exp_nomem(E);
  }
}

/* ---------------------------------------------------------------- constexpr_cast

   fp16 source written as its own fp16 initializer, widened by Cast(to=FLOAT)
   (every opset): the file holds 2 bytes per weight element. */

static const char *mgopt__exw_ccast(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "source_val");
  size_t len = 0;
  const char *s = mgopt_op_get_string(op, "output_dtype", &len);
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR || x->type.dtype != MGOPT_DT_FP16) return "a source that is not fp16";
  if (!s || mgopt_dtype_from_name(s, len) != MGOPT_DT_FP32) return "an output dtype other than fp32";
  return NULL;
}

static mgopt_status mgopt__exp_ccast(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  const char *in = mgopt__exp_in(op, "source_val");
  mgopt_onnx_node *n;
  MGOPT__UNUSED(m);
  n = mgopt__exp_simple(E, op, "Cast", &in, 1);
  if (!n || !mgopt__exp_aint(E, n, "to", mgopt__exp_dtype(MGOPT_DT_FP32))) return mgopt__exp_nomem(E);
  return mgopt__exp_done(E, n);
}

static const mgopt__onnx_map mgopt__onnx_sparse[] = {
    /* export only */
    {"Identity", 1, 0, MGOPT_OP_constexpr_sparse_to_dense, NULL, mgopt__exp_sparse, {NULL, NULL, NULL},
     mgopt__exw_sparse},
    {"Cast", 1, 0, MGOPT_OP_constexpr_cast, NULL, mgopt__exp_ccast, {NULL, NULL, NULL}, mgopt__exw_ccast},
};

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_sparse(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_sparse);
  return mgopt__onnx_sparse;
}
/* src/onnx/map_recurrent.c — ONNX <-> canonical mappings of the recurrent ops: LSTM <-> lstm, GRU <-> gru, RNN <-> rnn.

   Layouts. ONNX (layout 0): X [S, B, I], W [D, G*H, I], R [D, G*H, H],
   B [D, 2*G*H] (input biases then recurrent biases), P [D, 3*H], states
   [D, B, H], Y [S, D, B, H]. MIL: x [S, B, I], weight_ih [G*H, I] and
   weight_hh [G*H, H] per direction (the reverse half of a bidirectional
   lstm in the _back operands), one bias [G*H] (input + recurrent), states
   [B, D*H] (the forward half first), the first output [S, B, D*H] with
   output_sequence, else the final state [1, B, D*H].

   Gate order. LSTM: ONNX (i, o, f, c), MIL (i, f, o, z); peepholes ONNX
   (i, o, f), MIL (i, f, o). GRU: ONNX (z, r, h), MIL (r, o, z), and MIL's
   gru applies the reset gate before the recurrent product with one bias,
   which is ONNX's linear_before_reset = 0 (the h gate's two biases summed).
   Weights are constants, re-laid once at import and back at export, so an
   import / export round trip writes the original gate order again (the two
   biases come back summed in the input half, the recurrent half zero).

   Import maps exactly only: layout 0, constant W, R (and B, P) of the
   node's own graph, not a control-flow branch, read by no other op (a
   shared weight is not copied: mgopt__rci_sole_reader), no
   sequence_lens, no clip (ONNX clips the gates, MIL's clip the cell
   state), no input_forget, GRU's linear_before_reset 0, activations MIL
   has (Sigmoid, Tanh, Relu; ScaledTanh 1, 1; HardSigmoid 0.2, 0.5; Affine
   1, 0) and the same for both directions, GRU and RNN one direction, and
   no Y from "reverse" (MIL lists a reverse run's outputs in processing
   order, ONNX in time order). Initial states: absent (zeros, when the batch
   is static), constant (re-laid), or squeeze / transpose + reshape ops;
   outputs: expand_dims / reshape + transpose ops after the canonical op.
   Everything else stays an opaque onnx::LSTM / GRU / RNN.

   Export writes the ONNX op at the target opset (7 and later) with the
   Squeeze / Unsqueeze / Transpose / Reshape (and, for a reverse output
   sequence, a Slice with step -1, opset 10) the layouts need; MIL's clip
   has no ONNX form and is refused. */

/* kind index: 0 rnn, 1 gru, 2 lstm */
static int mgopt__rcm_kind(int32_t k) { return k == MGOPT_OP_lstm ? 2 : k == MGOPT_OP_gru ? 1 : 0; }
static int64_t mgopt__rcm_gates(int kind) { return kind == 2 ? 4 : kind == 1 ? 3 : 1; }

/* ONNX gate block q is MIL gate block from[q]; peepholes likewise. */
static const int mgopt__rcm_lstm_from[4] = {0, 2, 1, 3}, mgopt__rcm_gru_from[3] = {2, 0, 1}, mgopt__rcm_rnn_from[1] = {0};
static const int mgopt__rcm_peep_from[3] = {0, 2, 1};

static const int *mgopt__rcm_from(int kind) {
  return kind == 2 ? mgopt__rcm_lstm_from : kind == 1 ? mgopt__rcm_gru_from : mgopt__rcm_rnn_from;
}

/* MIL activation names and their ONNX forms (alpha, beta where ONNX's function takes them). */
static const struct {
  const char *mil, *onnx;
  int has_alpha, has_beta;
  float alpha, beta;
} mgopt__rcm_acts[] = {
    {"sigmoid", "Sigmoid", 0, 0, 0.0f, 0.0f},      {"tanh", "Tanh", 0, 0, 0.0f, 0.0f},
    {"relu", "Relu", 0, 0, 0.0f, 0.0f},            {"scaled_tanh", "ScaledTanh", 1, 1, 1.0f, 1.0f},
    {"sigmoid_hard", "HardSigmoid", 1, 1, 0.2f, 0.5f}, {"linear", "Affine", 1, 1, 1.0f, 0.0f},
};
#define MGOPT__RCM_NACTS 6

static int mgopt__rcm_ieq(mgopt_str s, const char *c) {
  size_t i, n = strlen(c);
  if (s.len != n) return 0;
  for (i = 0; i < n; i++) {
    char a = s.ptr[i], b = c[i];
    if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z') b = (char)(b - 'A' + 'a');
    if (a != b) return 0;
  }
  return 1;
}

/* The MIL activation index of op's attribute `name` (default dflt), -1 for another word. */
static int mgopt__rcm_mil_act(const mgopt_op *op, const char *name, const char *dflt) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(op, name, &n);
  int i;
  if (!s) s = dflt, n = strlen(dflt);
  for (i = 0; i < MGOPT__RCM_NACTS; i++)
    if (strlen(mgopt__rcm_acts[i].mil) == n && memcmp(mgopt__rcm_acts[i].mil, s, n) == 0) return i;
  return -1;
}

/* The activation slots of each kind, ONNX's order: (f), (f, g), (f, g, h). */
static const char *const mgopt__rcm_act_attr[3][3] = {
    {"activation", NULL, NULL},
    {"recurrent_activation", "activation", NULL},
    {"recurrent_activation", "cell_activation", "activation"},
};
static const char *const mgopt__rcm_act_dflt[3][3] = {
    {"tanh", NULL, NULL}, {"sigmoid", "tanh", NULL}, {"sigmoid", "tanh", "tanh"}};

/* MIL's direction: 0 forward, 1 reverse, 2 bidirectional, -1 another word. */
static int mgopt__rcm_dir(const mgopt_op *op) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(op, "direction", &n);
  if (!s || (n == 7 && memcmp(s, "forward", 7) == 0)) return 0;
  if (n == 7 && memcmp(s, "reverse", 7) == 0) return 1;
  if (n == 13 && memcmp(s, "bidirectional", 13) == 0) return 2;
  return -1;
}

static int mgopt__rcm_real(mgopt_dtype t) { return t == MGOPT_DT_FP32 || t == MGOPT_DT_FP16; }

/* 1 when v is read by the program past this op: a use by another op or a block output. */
static int mgopt__rcm_used(const mgopt_value *v) { return v && !(v->flags & MGOPT_VALUE_ABSENT) && v->nuses > 0; }

/* ---------------------------------------------------------------- import */

/* Reads the activations attribute into MIL indices act[per] (one set for
   every direction); 0 when some function has no MIL form or the directions differ. */
static int mgopt__rci_acts(mgopt__imp *I, int kind, int64_t D, int *act) {
  static const char *const dflt_onnx[3][3] = {{"Tanh", NULL, NULL}, {"Sigmoid", "Tanh", NULL}, {"Sigmoid", "Tanh", "Tanh"}};
  const mgopt_onnx_attribute *names = mgopt__imp_attr(I->node, "activations");
  const mgopt_onnx_attribute *al = mgopt__imp_attr(I->node, "activation_alpha");
  const mgopt_onnx_attribute *be = mgopt__imp_attr(I->node, "activation_beta");
  int per = kind + 1, j, k;
  int64_t ai = 0, bi = 0, d;
  if (names && (names->type != MGOPT_ONNX_ATTR_STRINGS || (names->nstrings != per && names->nstrings != per * D)))
    return 0;
  if ((al && al->type != MGOPT_ONNX_ATTR_FLOATS) || (be && be->type != MGOPT_ONNX_ATTR_FLOATS)) return 0;
  for (d = 0; d < D; d++)
    for (j = 0; j < per; j++) {
      mgopt_str s;
      int found = -1;
      if (names) {
        s = names->strings[names->nstrings == per ? j : d * per + j];
      } else {
        s.ptr = dflt_onnx[kind][j];
        s.len = strlen(s.ptr);
      }
      for (k = 0; k < MGOPT__RCM_NACTS && found < 0; k++)
        if (mgopt__rcm_ieq(s, mgopt__rcm_acts[k].onnx)) found = k;
      if (found < 0) return 0;
      if (mgopt__rcm_acts[found].has_alpha) {
        float a = al && ai < al->nfloats ? al->floats[ai] : mgopt__rcm_acts[found].alpha;
        ai++;
        if (a != mgopt__rcm_acts[found].alpha) return 0;
      }
      if (mgopt__rcm_acts[found].has_beta) {
        float b = be && bi < be->nfloats ? be->floats[bi] : mgopt__rcm_acts[found].beta;
        bi++;
        if (b != mgopt__rcm_acts[found].beta) return 0;
      }
      if (d == 0) act[j] = found;
      else if (act[j] != found) return 0;
    }
  return 1;
}

/* A constant holding direction d of ONNX tensor t ([D, G*H, n], or [D, G*H]
   when n is 0) in MIL's gate order; with sum (ONNX's B) the two bias halves added. */
static mgopt_value *mgopt__rci_gates(mgopt__imp *I, const mgopt_tensor *t, int kind, int64_t d, int64_t G, int64_t H,
                                     int64_t n, int peep, int sum, const char *what) {
  const int *from = peep ? mgopt__rcm_peep_from : mgopt__rcm_from(kind);
  int64_t shape[2], q, j, k, cols = n ? n : 1, per = G * H * cols;
  mgopt_tensor *o;
  shape[0] = G * H;
  shape[1] = n;
  o = mgopt_tensor_new(I->p, (mgopt_dtype)t->dtype, n ? 2 : 1, shape);
  if (!o) return NULL;
  for (q = 0; q < G; q++) /* MIL block from[q] is ONNX block q */
    for (j = 0; j < H; j++)
      for (k = 0; k < cols; k++) {
        int64_t src = (sum ? d * 2 * per : d * per) + (q * H + j) * cols + k;
        double v = mgopt_tensor_get_f64(t, src);
        if (sum) v += mgopt_tensor_get_f64(t, src + per);
        mgopt_tensor_set_f64(o, ((int64_t)from[q] * H + j) * cols + k, v);
      }
  return mgopt__imp_const(I, NULL, what, o);
}

/* An intermediate op over x with int attribute list `ints` (perm or axes) or
   a shape constant, output named after the node's output and `what`, typed. */
static mgopt_value *mgopt__rci_step(mgopt__imp *I, const char *type, mgopt_value *x, const char *attr, const int64_t *ints,
                                    int64_t n, const char *what, const char *out_name) {
  char buf[160];
  const char *slots[2] = {"x", "shape"};
  mgopt_value *vals[2];
  mgopt_op *op;
  mgopt_diag d2;
  int reshape = strcmp(type, "reshape") == 0;
  vals[0] = x;
  vals[1] = NULL;
  if (reshape && !(vals[1] = mgopt__imp_const_i32s(I, NULL, what, ints, n))) return NULL;
  snprintf(buf, sizeof buf, "%.100s_%s", I->node->noutputs && I->node->outputs[0].len ? mgopt__imp_intern(I, I->node->outputs[0]) : "rnn", what);
  op = mgopt_build_op(I->p, I->b, NULL, type, out_name ? out_name : mgopt_program_fresh_name(I->p, buf), reshape ? 2 : 1,
                      slots, vals, 1);
  if (!op || (!reshape && mgopt_op_set_ints(op, attr, ints, n))) return NULL;
  mgopt_diag_clear(&d2);
  if (out_name) {
    if (mgopt__imp_finish(I, op)) return NULL;
  } else if (mgopt_op_infer(I->p, op, &d2)) {
    mgopt__imp_fail(I, MGOPT_ERR_TYPE, "%s: %s", type, d2.msg);
    return NULL;
  }
  return op->outs[0];
}

/* MIL's initial state [B, D*H] from ONNX input k ([D, B, H]); NULL on error. */
static mgopt_value *mgopt__rci_state(mgopt__imp *I, int64_t k, mgopt_dtype dt, mgopt_dim batch, int64_t D, int64_t H,
                                     const char *what) {
  mgopt_value *s = mgopt__imp_in(I, k);
  const mgopt_tensor *t = s ? mgopt_value_const(s) : NULL;
  int64_t shape[2], b, d, j;
  mgopt_tensor *o;
  if (!s || t) {
    shape[0] = batch.v;
    shape[1] = D * H;
    o = mgopt_tensor_new(I->p, dt, 2, shape);
    if (!o) return NULL;
    if (t)
      for (d = 0; d < D; d++)
        for (b = 0; b < batch.v; b++)
          for (j = 0; j < H; j++) mgopt_tensor_set_f64(o, b * D * H + d * H + j, mgopt_tensor_get_f64(t, (d * batch.v + b) * H + j));
    return mgopt__imp_const(I, NULL, what, o);
  }
  if (D == 1) {
    static const int64_t ax[1] = {0};
    return mgopt__rci_step(I, "squeeze", s, "axes", ax, 1, what, NULL);
  } else {
    static const int64_t perm[3] = {1, 0, 2};
    int64_t shp[2];
    mgopt_value *tr = mgopt__rci_step(I, "transpose", s, "perm", perm, 3, what, NULL);
    shp[0] = -1;
    shp[1] = D * H;
    return tr ? mgopt__rci_step(I, "reshape", tr, NULL, shp, 2, what, NULL) : NULL;
  }
}

/* 1 when state input k can be made: absent with a static batch, a constant
   [D, B, H] with a static batch, or a value [D, ?, H] (its first dim known). */
static int mgopt__rci_state_ok(mgopt__imp *I, int64_t k, mgopt_dtype dt, mgopt_dim batch, int64_t D, int64_t H) {
  mgopt_value *s = mgopt__imp_in(I, k);
  const mgopt_tensor *t = s ? mgopt_value_const(s) : NULL;
  if (!s || t) {
    if (!mgopt_dim_is_static(batch)) return 0;
    return !t || (t->rank == 3 && t->shape[0] == D && t->shape[1] == batch.v && t->shape[2] == H && t->dtype == (int32_t)dt);
  }
  return s->type.kind == MGOPT_TYPE_TENSOR && s->type.rank == 3 && s->type.dtype == (int32_t)dt &&
         mgopt_dim_is_static(s->type.dims[0]) && s->type.dims[0].v == D &&
         (!mgopt_dim_is_static(s->type.dims[2]) || s->type.dims[2].v == H);
}

/* ONNX output k from MIL output v (seq: the [S, B, D*H] sequence, else a [B, D*H] state). */
static int mgopt__rci_output(mgopt__imp *I, int64_t k, mgopt_value *v, int seq, int64_t D, int64_t H, mgopt_dim S,
                             mgopt_dim B) {
  const char *name;
  if (k >= I->node->noutputs || !I->node->outputs[k].len) return 1;
  name = mgopt__imp_intern(I, I->node->outputs[k]);
  if (!name) return 0;
  if (D == 1) {
    int64_t ax = seq ? 1 : 0;
    return mgopt__rci_step(I, "expand_dims", v, "axes", &ax, 1, "y", name) != NULL;
  }
  if (seq) {
    static const int64_t perm[4] = {0, 2, 1, 3};
    int64_t shp[4];
    mgopt_value *r;
    shp[0] = mgopt_dim_is_static(S) ? S.v : -1;
    shp[1] = mgopt_dim_is_static(S) ? -1 : B.v;
    shp[2] = 2;
    shp[3] = H;
    r = mgopt__rci_step(I, "reshape", v, NULL, shp, 4, "y_shape", NULL);
    return r && mgopt__rci_step(I, "transpose", r, "perm", perm, 4, "y", name) != NULL;
  } else {
    static const int64_t perm[3] = {1, 0, 2};
    int64_t shp[3] = {-1, 2, 0};
    mgopt_value *r;
    shp[2] = H;
    r = mgopt__rci_step(I, "reshape", v, NULL, shp, 3, "y_shape", NULL);
    return r && mgopt__rci_step(I, "transpose", r, "perm", perm, 3, "y", name) != NULL;
  }
}

/* 1 when nothing but the node itself reads v, made in the node's own graph,
   a function body: a weight shared with another reader stays shared (the
   node stays opaque rather than copy it re-laid), and so does one in a
   control-flow branch, whose sibling branches commonly hold equal weights
   that const_deduplication merges across the branches. */
static int mgopt__rci_sole_reader(mgopt__imp *I, const mgopt_value *v) {
  const mgopt_use *u;
  /* one from an enclosing graph may have readers in branches not read yet */
  if (!v->def || v->def->parent != I->b || I->b->parent_op) return 0;
  for (u = v->uses; u; u = u->next) {
    const mgopt_op *o = u->op;
    /* the opaque op being mapped again reads it under the node's name */
    if (o && o->kind == MGOPT_OP_OPAQUE && o->name && I->node->name.len && mgopt__imp_streq(I->node->name, o->name)) continue;
    return 0;
  }
  return 1;
}

static int mgopt__imp_recurrent(mgopt__imp *I, const mgopt__onnx_map *m) {
  static const char *const kinds[3] = {"rnn", "gru", "lstm"};
  static const char *const fw[4] = {"weight_ih", "weight_hh", "bias", "peephole"};
  static const char *const bw[4] = {"weight_ih_back", "weight_hh_back", "bias_back", "peephole_back"};
  int kind = mgopt__rcm_kind(m->kind), act[3] = {0, 0, 0}, dir, seq, j;
  int64_t G = mgopt__rcm_gates(kind), H = mgopt__imp_aint(I->node, "hidden_size", -1), D, d, I_, nout;
  mgopt_value *x = mgopt__imp_in(I, 0), *wv = mgopt__imp_in(I, 1), *rv = mgopt__imp_in(I, 2), *bv = mgopt__imp_in(I, 3);
  mgopt_value *pv = kind == 2 ? mgopt__imp_in(I, 7) : NULL, *h0, *c0 = NULL, *outs[3];
  const mgopt_tensor *W = wv ? mgopt_value_const(wv) : NULL, *R = rv ? mgopt_value_const(rv) : NULL;
  const mgopt_tensor *Bt = bv ? mgopt_value_const(bv) : NULL, *P = pv ? mgopt_value_const(pv) : NULL;
  mgopt_dtype dt;
  mgopt_dim S, B;
  mgopt_op *op;
  char buf[160];
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR || x->type.rank != 3 || !mgopt__rcm_real((mgopt_dtype)x->type.dtype)) return 0;
  dt = (mgopt_dtype)x->type.dtype;
  if (mgopt__imp_aint(I->node, "layout", 0) != 0 || mgopt__imp_attr(I->node, "clip") || mgopt__imp_in(I, 4)) return 0;
  if (kind == 2 && mgopt__imp_aint(I->node, "input_forget", 0) != 0) return 0;
  if (kind == 1 && mgopt__imp_aint(I->node, "linear_before_reset", 0) != 0) return 0;
  if (!mgopt__imp_attr(I->node, "direction") || mgopt__imp_astr(I->node, "direction", "forward")) dir = 0;
  else if (mgopt__imp_astr(I->node, "direction", "reverse")) dir = 1;
  else if (mgopt__imp_astr(I->node, "direction", "bidirectional")) dir = 2;
  else return 0;
  if (dir == 2 && kind != 2) return 0;
  D = dir == 2 ? 2 : 1;
  nout = mgopt__imp_nout(I->node);
  seq = nout >= 1 && I->node->outputs[0].len > 0;
  if (seq && dir == 1) return 0; /* MIL's reverse sequence is in processing order */
  S = x->type.dims[0];
  B = x->type.dims[1];
  if (seq && D == 2 && !mgopt_dim_is_static(S) && !mgopt_dim_is_static(B)) return 0;
  I_ = x->type.dims[2].v;
  if (!W || !R || (bv && !Bt) || (pv && !P) || H < 1 || !mgopt_dim_is_static(x->type.dims[2])) return 0;
  if (W->dtype != (int32_t)dt || R->dtype != (int32_t)dt || (Bt && Bt->dtype != (int32_t)dt) || (P && P->dtype != (int32_t)dt))
    return 0;
  if (W->rank != 3 || W->shape[0] != D || W->shape[1] != G * H || W->shape[2] != I_) return 0;
  if (R->rank != 3 || R->shape[0] != D || R->shape[1] != G * H || R->shape[2] != H) return 0;
  if (Bt && (Bt->rank != 2 || Bt->shape[0] != D || Bt->shape[1] != 2 * G * H)) return 0;
  if (P && (P->rank != 2 || P->shape[0] != D || P->shape[1] != 3 * H)) return 0;
  if (!mgopt__rci_acts(I, kind, D, act)) return 0;
  if (!mgopt__rci_sole_reader(I, wv) || !mgopt__rci_sole_reader(I, rv) || (bv && !mgopt__rci_sole_reader(I, bv)) ||
      (pv && !mgopt__rci_sole_reader(I, pv)))
    return 0;
  if (!mgopt__rci_state_ok(I, 5, dt, B, D, H) || (kind == 2 && !mgopt__rci_state_ok(I, 6, dt, B, D, H))) return 0;
  /* everything checked: build */
  if (!(h0 = mgopt__rci_state(I, 5, dt, B, D, H, "initial_h"))) return -1;
  if (kind == 2 && !(c0 = mgopt__rci_state(I, 6, dt, B, D, H, "initial_c"))) return -1;
  snprintf(buf, sizeof buf, "%.100s", I->node->name.len ? mgopt__imp_intern(I, I->node->name) : kinds[kind]);
  op = mgopt_op_new(I->p, kinds[kind], kind == 2 ? 3 : 2, 0);
  if (!op) return -1;
  if (I->node->name.len) op->name = mgopt__imp_intern(I, I->node->name);
  for (j = 0; j < op->nouts; j++) {
    char ob[180];
    snprintf(ob, sizeof ob, "%.100s_out%d", I->node->noutputs && I->node->outputs[0].len ? mgopt__imp_intern(I, I->node->outputs[0]) : buf, j);
    if (!(op->outs[j]->name = mgopt_program_fresh_name(I->p, ob))) return -1;
  }
  /* one direction without Y: the final-state output [1, B, H] is Y_h itself */
  if (D == 1 && !seq && nout >= 2 && I->node->outputs[1].len && !(op->outs[0]->name = mgopt__imp_intern(I, I->node->outputs[1])))
    return -1;
  if (mgopt_op_set_operand(op, "x", x) || mgopt_op_set_operand(op, "initial_h", h0) ||
      (c0 && mgopt_op_set_operand(op, "initial_c", c0)))
    return -1;
  for (d = 0; d < D; d++) {
    const char *const *nm = d ? bw : fw;
    mgopt_value *a = mgopt__rci_gates(I, W, kind, d, G, H, I_, 0, 0, nm[0]);
    mgopt_value *b = a ? mgopt__rci_gates(I, R, kind, d, G, H, H, 0, 0, nm[1]) : NULL;
    if (!a || !b || mgopt_op_set_operand(op, nm[0], a) || mgopt_op_set_operand(op, nm[1], b)) return -1;
    if (Bt && (!(a = mgopt__rci_gates(I, Bt, kind, d, G, H, 0, 0, 1, nm[2])) || mgopt_op_set_operand(op, nm[2], a))) return -1;
    if (P && (!(a = mgopt__rci_gates(I, P, kind, d, 3, H, 0, 1, 0, nm[3])) || mgopt_op_set_operand(op, nm[3], a))) return -1;
  }
  if (dir && mgopt_op_set_string(op, "direction", dir == 1 ? "reverse" : "bidirectional")) return -1;
  if (seq && mgopt_op_set_bool(op, "output_sequence", 1)) return -1;
  for (j = 0; j <= kind; j++)
    if (strcmp(mgopt__rcm_acts[act[j]].mil, mgopt__rcm_act_dflt[kind][j]) != 0 &&
        mgopt_op_set_string(op, mgopt__rcm_act_attr[kind][j], mgopt__rcm_acts[act[j]].mil))
      return -1;
  mgopt_op_append(op, I->b);
  if (mgopt__imp_finish(I, op)) return -1;
  for (j = 0; j < op->nouts; j++) outs[j] = op->outs[j];
  if (!mgopt__rci_output(I, 0, outs[0], 1, D, H, S, B) ||
      (!(D == 1 && !seq) && !mgopt__rci_output(I, 1, outs[1], 0, D, H, S, B)) ||
      (kind == 2 && !mgopt__rci_output(I, 2, outs[2], 0, D, H, S, B)))
    return -1;
  return 1;
}

/* ---------------------------------------------------------------- export */

/* Why op cannot be written at opset m->since and later (NULL: it can). */
static const char *mgopt__exw_recurrent(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  static const char *const fw[4] = {"weight_ih", "weight_hh", "bias", "peephole"};
  static const char *const bw[4] = {"weight_ih_back", "weight_hh_back", "bias_back", "peephole_back"};
  int kind = mgopt__rcm_kind(op->kind), dir = mgopt__rcm_dir(op), j, d;
  int64_t G = mgopt__rcm_gates(kind), H, I_;
  mgopt_value *x = mgopt_op_operand(op, "x"), *h0 = mgopt_op_operand(op, "initial_h");
  mgopt_value *c0 = kind == 2 ? mgopt_op_operand(op, "initial_c") : NULL;
  const mgopt_tensor *whh = mgopt_op_operand(op, "weight_hh") ? mgopt_value_const(mgopt_op_operand(op, "weight_hh")) : NULL;
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  if (!x || !h0 || (kind == 2 && !c0) || op->nouts != (kind == 2 ? 3 : 2)) return "an operand is missing";
  if (x->type.rank != 3 || !mgopt__rcm_real((mgopt_dtype)x->type.dtype) || !mgopt_dim_is_static(x->type.dims[2]))
    return "x is not [S, B, I] of fp32 or fp16 with a static I";
  if (dir < 0 || (dir == 2 && kind != 2)) return "direction has no ONNX form";
  if (kind == 2 && mgopt_op_attr(op, "clip")) return "lstm's clip bounds the cell state: ONNX's clip bounds the gates";
  for (j = 0; j <= kind; j++)
    if (mgopt__rcm_mil_act(op, mgopt__rcm_act_attr[kind][j], mgopt__rcm_act_dflt[kind][j]) < 0) return "unknown activation";
  if (!whh || whh->rank != 2 || whh->shape[1] < 1 || whh->shape[0] != G * whh->shape[1]) return "weight_hh is not a constant [G*H, H]";
  H = whh->shape[1];
  I_ = x->type.dims[2].v;
  for (d = 0; d < (dir == 2 ? 2 : 1); d++) {
    const char *const *nm = d ? bw : fw;
    for (j = 0; j < (kind == 2 ? 4 : 3); j++) {
      mgopt_value *v = mgopt_op_operand(op, nm[j]);
      const mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
      int64_t rows = j == 3 ? 3 * H : G * H, cols = j == 0 ? I_ : j == 1 ? H : 0;
      if (!v && j >= 2) continue;
      if (!t || t->dtype != x->type.dtype || t->rank != (cols ? 2 : 1) || t->shape[0] != rows || (cols && t->shape[1] != cols))
        return "the weights are not constants of x's dtype and the op's shapes";
    }
  }
  for (j = 0; j < (kind == 2 ? 2 : 1); j++) {
    mgopt_value *s = j ? c0 : h0;
    if (s->type.rank != 2 || s->type.dtype != x->type.dtype) return "an initial state is not [B, D*H] of x's dtype";
  }
  if (dir == 1 && mgopt_op_get_bool(op, "output_sequence", 0) && mgopt__rcm_used(op->outs[0]) && m->since < 10)
    return "a reverse output sequence needs Slice with steps (opset 10)";
  return NULL;
}

/* ONNX's W / R / B / P of the op ([D, G*H, n], [D, 2*G*H], [D, 3*H]) from the MIL constants. */
static mgopt_tensor *mgopt__rce_gates(mgopt__exp *E, const mgopt_op *op, int kind, int64_t D, int j, int64_t H, int64_t n) {
  static const char *const fw[4] = {"weight_ih", "weight_hh", "bias", "peephole"};
  static const char *const bw[4] = {"weight_ih_back", "weight_hh_back", "bias_back", "peephole_back"};
  const int *from = j == 3 ? mgopt__rcm_peep_from : mgopt__rcm_from(kind);
  int64_t G = j == 3 ? 3 : mgopt__rcm_gates(kind), cols = n ? n : 1, shape[3], d, q, r, k;
  int any = 0;
  mgopt_dtype dt = (mgopt_dtype)mgopt_op_operand(op, "x")->type.dtype;
  mgopt_tensor *o;
  shape[0] = D;
  shape[1] = j == 2 ? 2 * G * H : G * H;
  shape[2] = n;
  for (d = 0; d < D; d++) any |= mgopt_op_operand(op, (d ? bw : fw)[j]) != NULL;
  if (!any) return NULL;
  o = mgopt_tensor_new(E->p, dt, n ? 3 : 2, shape);
  if (!o) return NULL;
  memset(o->data, 0, (size_t)o->nbytes);
  for (d = 0; d < D; d++) {
    mgopt_value *v = mgopt_op_operand(op, (d ? bw : fw)[j]);
    const mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
    if (!t) continue;
    for (q = 0; q < G; q++)
      for (r = 0; r < H; r++)
        for (k = 0; k < cols; k++)
          mgopt_tensor_set_f64(o, d * shape[1] * cols + (q * H + r) * cols + k,
                               mgopt_tensor_get_f64(t, ((int64_t)from[q] * H + r) * cols + k));
  }
  return o;
}

/* One node op_type(ins) -> out with an optional int list attribute. */
static int mgopt__rce_node(mgopt__exp *E, const char *op_type, const char *const *ins, int64_t nin, const char *out,
                           const char *attr, const int64_t *v, int64_t n) {
  mgopt_onnx_node *nd = mgopt__exp_node(E, op_type, "", NULL);
  return nd && mgopt__exp_set_io(E, &nd->inputs, &nd->ninputs, ins, nin) &&
         mgopt__exp_set_io(E, &nd->outputs, &nd->noutputs, &out, 1) && (!attr || mgopt__exp_aints(E, nd, attr, v, n));
}

/* Squeeze (or Unsqueeze) of axis, in the opset's form. */
static int mgopt__rce_squeeze(mgopt__exp *E, int unsq, const char *in, const char *out, int64_t axis) {
  const char *ins[2];
  ins[0] = in;
  if (E->opset >= 13) {
    if (!(ins[1] = mgopt__exp_i64_const(E, "axes", &axis, 1))) return 0;
    return mgopt__rce_node(E, unsq ? "Unsqueeze" : "Squeeze", ins, 2, out, NULL, NULL, 0);
  }
  return mgopt__rce_node(E, unsq ? "Unsqueeze" : "Squeeze", ins, 1, out, "axes", &axis, 1);
}

static int mgopt__rce_reshape(mgopt__exp *E, const char *in, const char *out, const int64_t *shape, int64_t n) {
  const char *ins[2];
  ins[0] = in;
  ins[1] = mgopt__exp_i64_const(E, "shape", shape, n);
  return ins[1] && mgopt__rce_node(E, "Reshape", ins, 2, out, NULL, NULL, 0);
}

/* 1 when op (squeeze or expand_dims) has exactly the int list attribute axes = [axis]. */
static int mgopt__rce_axes_is(const mgopt_op *op, int64_t axis) {
  const mgopt_attr *a = mgopt_op_attr(op, "axes");
  int64_t r = op->outs[0]->type.rank + (op->kind == MGOPT_OP_squeeze ? 1 : 0);
  return a && a->kind == MGOPT_ATTR_INTS && a->n == 1 && r > 0 && (a->u.ints[0] == axis || a->u.ints[0] == axis - r);
}

/* The import's squeeze(axes=[0]) before a one-direction op's state: the
   [1, B, H] value it squeezes, written as the ONNX state itself, when the
   squeeze feeds nothing else (NULL otherwise). */
static mgopt_value *mgopt__rce_state_src(const mgopt_op *op, const char *slot) {
  mgopt_value *v = mgopt_op_operand(op, slot);
  const mgopt_op *sq = v ? v->def : NULL;
  if (!sq || sq->kind != MGOPT_OP_squeeze || v->nuses != 1 || v->nblock_uses || mgopt__rcm_dir(op) == 2) return NULL;
  if (mgopt_op_operand(op, "x") == v || !mgopt_op_operand(sq, "x") || mgopt_op_operand(sq, "x")->type.rank != 3 ||
      !mgopt__rce_axes_is(sq, 0))
    return NULL;
  return mgopt_op_operand(sq, "x");
}

/* The import's expand_dims after a one-direction op's output k (axis 1 of a
   forward sequence, axis 0 of a state, forward or reverse): its value,
   written as the ONNX output itself, when output k feeds nothing else (NULL
   otherwise). */
static mgopt_value *mgopt__rce_out_dst(const mgopt_op *op, int k) {
  const mgopt_value *v = op->outs[k];
  const mgopt_op *ex = v->nuses == 1 && !v->nblock_uses && v->uses ? v->uses->op : NULL;
  int seq = mgopt_op_get_bool(op, "output_sequence", 0), dir = mgopt__rcm_dir(op);
  if (!ex || ex->kind != MGOPT_OP_expand_dims || dir == 2 || (dir != 0 && k == 0) || mgopt_op_operand(ex, "x") != v)
    return NULL;
  if (k == 0 && !seq) return NULL;
  return mgopt__rce_axes_is(ex, k == 0 ? 1 : 0) ? ex->outs[0] : NULL;
}

MGOPT__PRIVATE int mgopt__exp_recurrent_absorbs(const mgopt_op *op) {
  int k;
  if (op->kind == MGOPT_OP_squeeze && op->outs[0]->nuses == 1 && op->outs[0]->uses && op->outs[0]->uses->op) {
    const mgopt_op *r = op->outs[0]->uses->op;
    if (r->kind != MGOPT_OP_lstm && r->kind != MGOPT_OP_gru && r->kind != MGOPT_OP_rnn) return 0;
    return (mgopt_op_operand(r, "initial_h") == op->outs[0] && mgopt__rce_state_src(r, "initial_h")) ||
           (mgopt_op_operand(r, "initial_c") == op->outs[0] && mgopt__rce_state_src(r, "initial_c"));
  }
  if (op->kind == MGOPT_OP_expand_dims) {
    const mgopt_value *x = mgopt_op_operand(op, "x");
    const mgopt_op *r = x ? x->def : NULL;
    if (!r || (r->kind != MGOPT_OP_lstm && r->kind != MGOPT_OP_gru && r->kind != MGOPT_OP_rnn)) return 0;
    for (k = 0; k < r->nouts; k++)
      if (r->outs[k] == x && mgopt__rce_out_dst(r, k) == op->outs[0]) return 1;
  }
  return 0;
}

/* ONNX's state [D, B, H] from MIL's [B, D*H]: none for zeros, a re-laid
   constant, Unsqueeze, or Reshape + Transpose. */
static const char *mgopt__rce_state(mgopt__exp *E, mgopt_value *s, const mgopt_value *src, int64_t D, int64_t H) {
  const mgopt_tensor *t = mgopt_value_const(s);
  const char *nm = mgopt__exp_vname(s), *out;
  if (src) return mgopt__exp_vname(src); /* already [1, B, H] */
  if (t && t->rank == 2 && t->shape[1] == D * H && mgopt_tensor_all_equal_f64(t, 0.0)) return ""; /* ONNX's default */
  if (t && t->rank == 2 && t->shape[1] == D * H) {
    int64_t shape[3], b, d, j, NB = t->shape[0];
    mgopt_tensor *o;
    shape[0] = D;
    shape[1] = NB;
    shape[2] = H;
    if (!(o = mgopt_tensor_new(E->p, (mgopt_dtype)t->dtype, 3, shape))) return NULL;
    for (d = 0; d < D; d++)
      for (b = 0; b < NB; b++)
        for (j = 0; j < H; j++) mgopt_tensor_set_f64(o, (d * NB + b) * H + j, mgopt_tensor_get_f64(t, b * D * H + d * H + j));
    return mgopt__exp_const(E, nm, o);
  }
  if (!(out = mgopt__exp_fresh(E, nm))) return NULL;
  if (D == 1) return mgopt__rce_squeeze(E, 1, nm, out, 0) ? out : NULL;
  {
    static const int64_t perm[3] = {1, 0, 2};
    int64_t shape[3] = {0, 2, 0};
    const char *rs = mgopt__exp_fresh(E, nm);
    shape[2] = H;
    if (!rs || !mgopt__rce_reshape(E, nm, rs, shape, 3) || !mgopt__rce_node(E, "Transpose", &rs, 1, out, "perm", perm, 3))
      return NULL;
    return out;
  }
}

static mgopt_status mgopt__exp_recurrent(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  static const char *const onnx_dirs[3] = {"forward", "reverse", "bidirectional"};
  int kind = mgopt__rcm_kind(op->kind), dir = mgopt__rcm_dir(op), seq = mgopt_op_get_bool(op, "output_sequence", 0), j, d;
  int64_t D = dir == 2 ? 2 : 1, H = mgopt_value_const(mgopt_op_operand(op, "weight_hh"))->shape[1];
  int64_t I_ = mgopt_op_operand(op, "x")->type.dims[2].v;
  const char *ins[8], *outs[3] = {"", "", ""}, *y_seq = NULL;
  mgopt_tensor *w, *r, *b, *pp = NULL;
  mgopt_onnx_node *n;
  int any_act = 0, use[3];
  const mgopt_value *dst[3];
  int64_t nin;
  for (j = 0; j < op->nouts; j++) {
    use[j] = mgopt__rcm_used(op->outs[j]);
    dst[j] = mgopt__rce_out_dst(op, j);
  }
  w = mgopt__rce_gates(E, op, kind, D, 0, H, I_);
  r = mgopt__rce_gates(E, op, kind, D, 1, H, H);
  b = mgopt__rce_gates(E, op, kind, D, 2, H, 0);
  if (kind == 2) pp = mgopt__rce_gates(E, op, kind, D, 3, H, 0);
  if (!w || !r) return mgopt__exp_nomem(E);
  ins[0] = mgopt__exp_in(op, "x");
  ins[1] = mgopt__exp_const(E, mgopt__exp_in(op, "weight_ih"), w);
  ins[2] = mgopt__exp_const(E, mgopt__exp_in(op, "weight_hh"), r);
  ins[3] = b ? mgopt__exp_const(E, mgopt__exp_in(op, "bias"), b) : "";
  ins[4] = "";
  ins[5] = mgopt__rce_state(E, mgopt_op_operand(op, "initial_h"), mgopt__rce_state_src(op, "initial_h"), D, H);
  ins[6] = kind == 2 ? mgopt__rce_state(E, mgopt_op_operand(op, "initial_c"), mgopt__rce_state_src(op, "initial_c"), D, H)
                     : NULL;
  ins[7] = pp ? mgopt__exp_const(E, mgopt__exp_in(op, "peephole"), pp) : NULL;
  if (!ins[1] || !ins[2] || !ins[3] || !ins[5] || (kind == 2 && !ins[6]) || (pp && !ins[7])) return mgopt__exp_nomem(E);
  /* ONNX outputs: Y when the sequence is read, Y_h for out1 (and out0
     without output_sequence), Y_c for out2 */
  if (dst[0]) outs[0] = mgopt__exp_vname(dst[0]); /* the import's expand_dims, written by this node */
  else if (seq && use[0] && !(outs[0] = y_seq = mgopt__exp_fresh(E, mgopt__exp_vname(op->outs[0]))))
    return mgopt__exp_nomem(E);
  if (dst[1]) outs[1] = mgopt__exp_vname(dst[1]);
  else if (D == 1 && !seq && use[0]) outs[1] = mgopt__exp_vname(op->outs[0]); /* [1, B, H] both */
  else if ((use[1] || (!seq && use[0])) && !(outs[1] = mgopt__exp_fresh(E, mgopt__exp_vname(op->outs[1]))))
    return mgopt__exp_nomem(E);
  if (kind == 2 && dst[2]) outs[2] = mgopt__exp_vname(dst[2]);
  else if (kind == 2 && use[2] && !(outs[2] = mgopt__exp_fresh(E, mgopt__exp_vname(op->outs[2])))) return mgopt__exp_nomem(E);
  nin = kind == 2 ? (pp ? 8 : 7) : 6;
  while (nin > 3 && !ins[nin - 1][0]) nin--; /* no trailing omitted inputs */
  n = mgopt__exp_node(E, m->onnx, "", op->name);
  if (!n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, ins, nin) ||
      !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, outs, kind == 2 ? 3 : 2) ||
      !mgopt__exp_aint(E, n, "hidden_size", H) || (dir && !mgopt__exp_astr(E, n, "direction", onnx_dirs[dir])))
    return mgopt__exp_nomem(E);
  /* activations, when some differs from ONNX's defaults */
  for (j = 0; j <= kind; j++)
    if (mgopt__rcm_mil_act(op, mgopt__rcm_act_attr[kind][j], mgopt__rcm_act_dflt[kind][j]) !=
        mgopt__rcm_mil_act(op, "", mgopt__rcm_act_dflt[kind][j]))
      any_act = 1;
  if (any_act) {
    mgopt_onnx_attribute *a = mgopt__exp_attr(E, n, "activations", MGOPT_ONNX_ATTR_STRINGS);
    float al[6], be[6];
    int64_t nal = 0, nbe = 0, k = 0;
    if (!a || !(a->strings = (mgopt_str *)mgopt_program_alloc(E->p, sizeof(mgopt_str) * (size_t)(D * (kind + 1)), 8)))
      return mgopt__exp_nomem(E);
    for (d = 0; d < D; d++)
      for (j = 0; j <= kind; j++) {
        int i = mgopt__rcm_mil_act(op, mgopt__rcm_act_attr[kind][j], mgopt__rcm_act_dflt[kind][j]);
        a->strings[k++] = mgopt__exp_s(mgopt__rcm_acts[i].onnx);
        if (mgopt__rcm_acts[i].has_alpha) al[nal++] = mgopt__rcm_acts[i].alpha;
        if (mgopt__rcm_acts[i].has_beta) be[nbe++] = mgopt__rcm_acts[i].beta;
      }
    a->nstrings = k;
    if ((nal && !mgopt__exp_afloats(E, n, "activation_alpha", al, nal)) ||
        (nbe && !mgopt__exp_afloats(E, n, "activation_beta", be, nbe)))
      return mgopt__exp_nomem(E);
  }
  /* MIL's outputs from ONNX's */
  if (y_seq) {
    const char *src = y_seq, *out0 = mgopt__exp_vname(op->outs[0]);
    if (dir == 1) {
      /* time order back to processing order */
      static const int64_t starts = -1, ends = INT64_MIN, axes = 0, steps = -1;
      const char *sl[5], *rv = mgopt__exp_fresh(E, y_seq);
      sl[0] = y_seq;
      sl[1] = mgopt__exp_i64_const(E, "starts", &starts, 1);
      sl[2] = mgopt__exp_i64_const(E, "ends", &ends, 1);
      sl[3] = mgopt__exp_i64_const(E, "axes", &axes, 1);
      sl[4] = mgopt__exp_i64_const(E, "steps", &steps, 1);
      if (!rv || !sl[1] || !sl[2] || !sl[3] || !sl[4] || !mgopt__rce_node(E, "Slice", sl, 5, rv, NULL, NULL, 0))
        return mgopt__exp_nomem(E);
      src = rv;
    }
    if (D == 1) {
      if (!mgopt__rce_squeeze(E, 0, src, out0, 1)) return mgopt__exp_nomem(E);
    } else {
      static const int64_t perm[4] = {0, 2, 1, 3};
      int64_t shape[3] = {0, 0, 0};
      const char *tr = mgopt__exp_fresh(E, y_seq);
      shape[2] = 2 * H;
      if (!tr || !mgopt__rce_node(E, "Transpose", &src, 1, tr, "perm", perm, 4) || !mgopt__rce_reshape(E, tr, out0, shape, 3))
        return mgopt__exp_nomem(E);
    }
  }
  for (j = 1; j < op->nouts; j++) {
    const char *src = outs[j], *flat;
    if (!src[0] || dst[j]) continue;
    flat = use[j] ? mgopt__exp_vname(op->outs[j]) : NULL;
    if (D == 1) {
      /* [1, B, H]: out0 without output_sequence is this state as it is */
      if (flat && !mgopt__rce_squeeze(E, 0, src, flat, 0)) return mgopt__exp_nomem(E);
    } else {
      static const int64_t perm[3] = {1, 0, 2};
      const char *tr = mgopt__exp_fresh(E, src);
      int64_t shape[3] = {0, -1, 0};
      if (!tr || !mgopt__rce_node(E, "Transpose", &src, 1, tr, "perm", perm, 3)) return mgopt__exp_nomem(E);
      if (flat && !mgopt__rce_reshape(E, tr, flat, shape, 2)) return mgopt__exp_nomem(E);
      if (j == 1 && !seq && use[0]) {
        shape[0] = 1;
        shape[1] = -1;
        shape[2] = 2 * H;
        if (!mgopt__rce_reshape(E, tr, mgopt__exp_vname(op->outs[0]), shape, 3)) return mgopt__exp_nomem(E);
      }
    }
  }
  return MGOPT_OK;
}

/* 1 when v, a constant, is written by the op that reads it (re-laid weights
   or states), so nothing else needs it as it is. */
MGOPT__PRIVATE int mgopt__exp_recurrent_folds(const mgopt_op *op, const mgopt_value *v) {
  int32_t k;
  if (!op || (op->kind != MGOPT_OP_lstm && op->kind != MGOPT_OP_gru && op->kind != MGOPT_OP_rnn)) return 0;
  if (mgopt_op_operand(op, "x") == v) return 0;
  for (k = 0; k < op->nslots; k++)
    if (op->slots[k].n == 1 && op->slots[k].uses[0].value == v) return 1;
  return 0;
}

/* ---------------------------------------------------------------- the table */

static const mgopt__onnx_map mgopt__onnx_recurrent[] = {
    {"RNN", 7, 9, MGOPT_OP_rnn, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
    {"RNN", 10, 13, MGOPT_OP_rnn, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
    {"RNN", 14, 0, MGOPT_OP_rnn, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
    {"GRU", 7, 9, MGOPT_OP_gru, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
    {"GRU", 10, 13, MGOPT_OP_gru, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
    {"GRU", 14, 0, MGOPT_OP_gru, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
    {"LSTM", 7, 9, MGOPT_OP_lstm, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
    {"LSTM", 10, 13, MGOPT_OP_lstm, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
    {"LSTM", 14, 0, MGOPT_OP_lstm, mgopt__imp_recurrent, mgopt__exp_recurrent, {NULL, NULL, NULL}, mgopt__exw_recurrent},
};

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_recurrent(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_recurrent);
  return mgopt__onnx_recurrent;
}
/* src/onnx/opaque_types.c — the output types of ONNX ops kept opaque: one rule per op and opset range, as a table. */

/* An op the importer keeps opaque still has outputs whose types ONNX defines
   from its inputs and attributes. Without them every op downstream would see
   unknown types and stay opaque too (one Pad with computed pads made a whole
   network opaque). These rules give what the ONNX spec makes certain (element
   type, rank, the dims that pass through unchanged) and leave the rest
   unknown; declared value infos still refine them afterwards. Default domain
   only; an input of unknown type gives nothing. */

typedef struct mgopt__imp_ty {
  mgopt_dtype dt;
  int32_t rank; /* -1 unknown */
  mgopt_dim dims[MGOPT_MAX_RANK];
} mgopt__imp_ty;

/* The tensor type of input k, or NULL. */
static const mgopt_type *mgopt__imp_tin(mgopt__imp *I, int64_t k) {
  mgopt_value *v = mgopt__imp_in(I, k);
  return v && v->type.kind == MGOPT_TYPE_TENSOR ? &v->type : NULL;
}

static void mgopt__imp_ty_unknown(mgopt__imp_ty *t, mgopt_dtype dt, int32_t rank) {
  int32_t i;
  t->dt = dt;
  t->rank = rank >= 0 && rank <= MGOPT_MAX_RANK ? rank : -1;
  for (i = 0; i < MGOPT_MAX_RANK; i++) t->dims[i] = mgopt_dim_unknown();
}

/* dtype and shape of x (rank -1 when x is unknown or too high). */
static void mgopt__imp_ty_of(mgopt__imp_ty *t, const mgopt_type *x) {
  int32_t i;
  mgopt__imp_ty_unknown(t, x ? (mgopt_dtype)x->dtype : MGOPT_DT_UNKNOWN, x ? x->rank : -1);
  for (i = 0; i < t->rank; i++) t->dims[i] = x->dims[i];
}

/* Multidirectional broadcast of inputs [from, to) into t (dtype left alone):
   per axis, the one size other than 1 (static, or a symbol all agree on). */
static void mgopt__imp_ty_bcast(mgopt__imp *I, mgopt__imp_ty *t, int64_t from, int64_t to) {
  int64_t k;
  int32_t rank = 0, a;
  for (k = from; k < to; k++) {
    const mgopt_type *x = mgopt__imp_tin(I, k);
    if (!x || x->rank < 0) {
      t->rank = -1;
      return;
    }
    if (x->rank > rank) rank = x->rank;
  }
  mgopt__imp_ty_unknown(t, t->dt, rank);
  for (a = 0; a < t->rank; a++) {
    /* a static size other than 1 decides (the others must be 1 or equal to
       it); else a symbol every non-1 size shares; else all 1; else unknown */
    int64_t big = -1;
    const char *sym = NULL;
    int ones = 1, clash = 0, other = 0;
    for (k = from; k < to; k++) {
      const mgopt_type *x = mgopt__imp_tin(I, k);
      int32_t j = a - (rank - x->rank);
      mgopt_dim e;
      if (j < 0) continue;
      e = x->dims[j];
      if (mgopt_dim_is_static(e)) {
        if (e.v == 1) continue;
        if (big >= 0 && big != e.v) clash = 1;
        big = e.v;
      } else if (e.sym && (!sym || sym == e.sym)) {
        sym = e.sym;
      } else {
        other = 1; /* unknown, or a second symbol */
      }
      ones = 0;
    }
    if (clash) continue;
    if (big >= 0) t->dims[a] = mgopt_dim_static(big);
    else if (ones) t->dims[a] = mgopt_dim_static(1);
    else if (sym && !other) {
      t->dims[a].v = -1;
      t->dims[a].sym = sym;
    }
  }
}

/* The length of a 1-d shape-like input whose length is static, else -1. */
static int32_t mgopt__imp_ty_len(const mgopt_type *x) {
  if (!x || x->rank != 1 || !mgopt_dim_is_static(x->dims[0]) || x->dims[0].v > MGOPT_MAX_RANK) return -1;
  return (int32_t)x->dims[0].v;
}

/* ONNX's MatMul shape for a (ra) @ b (rb), both of rank >= 1 (1-d operands promoted and squeezed). */
static void mgopt__imp_ty_matmul(mgopt__imp_ty *t, const mgopt_type *a, const mgopt_type *b) {
  int32_t ra, rb, r, i;
  if (!a || !b || a->rank < 1 || b->rank < 1) {
    t->rank = -1;
    return;
  }
  ra = a->rank;
  rb = b->rank;
  r = (ra > rb ? ra : rb);
  if (ra == 1 && rb == 1) r = 0;
  else if (ra == 1 || rb == 1) r = (ra > rb ? ra : rb) - 1;
  mgopt__imp_ty_unknown(t, t->dt, r);
  if (t->rank < 0) return;
  if (ra >= 2 && rb >= 2) {
    /* batch dims: equal or broadcast from 1 */
    for (i = 0; i < r - 2; i++) {
      int32_t ia = i - (r - ra), ib = i - (r - rb);
      mgopt_dim da = ia >= 0 ? a->dims[ia] : mgopt_dim_static(1), db = ib >= 0 ? b->dims[ib] : mgopt_dim_static(1);
      if (mgopt_dim_is_static(da) && da.v == 1) t->dims[i] = db;
      else if (mgopt_dim_is_static(db) && db.v == 1) t->dims[i] = da;
      else if (da.v == db.v && da.sym == db.sym) t->dims[i] = da;
    }
    t->dims[r - 2] = a->dims[ra - 2];
    t->dims[r - 1] = b->dims[rb - 1];
  } else if (ra >= 2) {
    for (i = 0; i < r; i++) t->dims[i] = a->dims[i];
  } else if (rb >= 2) {
    for (i = 0; i < r - 1; i++) t->dims[i] = b->dims[i];
    t->dims[r - 1] = b->dims[rb - 1];
  }
}

static mgopt_status mgopt__imp_ty_set(mgopt__imp *I, mgopt_op *op, int32_t k, const mgopt__imp_ty *t) {
  mgopt_value *v;
  if (k >= op->nouts) return MGOPT_OK;
  v = op->outs[k];
  if ((v->flags & MGOPT_VALUE_ABSENT) || v->type.kind != MGOPT_TYPE_TENSOR || v->type.dtype != MGOPT_DT_UNKNOWN ||
      v->type.rank >= 0 || t->dt == MGOPT_DT_UNKNOWN)
    return MGOPT_OK;
  if (mgopt_type_make(I->p, &v->type, t->dt, t->rank, t->rank > 0 ? t->dims : NULL))
    return mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory");
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- the rules

   Each reads I->node, whose input 0 is x, and sets the types of op's outputs. */

/* Output 0 is x. */
static mgopt_status mgopt__oty_same(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  mgopt__imp_ty_of(&t, mgopt__imp_tin(I, 0));
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* Output 0 is x, output 1 (the mask) x's shape with dtype arg (MGOPT_DT_UNKNOWN: x's). */
static mgopt_status mgopt__oty_dropout(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  mgopt__imp_ty t;
  mgopt_status s;
  mgopt__imp_ty_of(&t, mgopt__imp_tin(I, 0));
  s = mgopt__imp_ty_set(I, op, 0, &t);
  if (s) return s;
  if (r->arg != MGOPT_DT_UNKNOWN) t.dt = (mgopt_dtype)r->arg;
  return mgopt__imp_ty_set(I, op, 1, &t);
}

/* x's shape, bool. */
static mgopt_status mgopt__oty_to_bool(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  mgopt__imp_ty_of(&t, x);
  t.dt = x ? MGOPT_DT_BOOL : MGOPT_DT_UNKNOWN;
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* The broadcast shape of every input; dtype that of input arg (-1: bool). */
static mgopt_status mgopt__oty_bcast(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  mgopt__imp_ty t;
  mgopt__imp_ty_of(&t, mgopt__imp_tin(I, 0));
  if (r->arg < 0) {
    t.dt = MGOPT_DT_BOOL;
  } else if (r->arg > 0) {
    const mgopt_type *xv = mgopt__imp_tin(I, r->arg);
    t.dt = xv ? (mgopt_dtype)xv->dtype : MGOPT_DT_UNKNOWN;
  }
  if (mgopt__imp_nin(I->node) < 1) return MGOPT_OK;
  mgopt__imp_ty_bcast(I, &t, 0, mgopt__imp_nin(I->node));
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* x's shape; dtype from attribute `to` (arg 0) or input 1's (arg 1: CastLike). */
static mgopt_status mgopt__oty_cast(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  mgopt__imp_ty_of(&t, x);
  if (r->arg == 0) {
    const mgopt_onnx_attribute *a = mgopt__imp_attr(I->node, "to");
    t.dt = a && a->type == MGOPT_ONNX_ATTR_INT && a->i >= 0 && a->i <= 0x7fffffff ? mgopt_onnx_dtype((int32_t)a->i)
                                                                                     : MGOPT_DT_UNKNOWN;
  } else {
    const mgopt_type *like = mgopt__imp_tin(I, 1);
    t.dt = like ? (mgopt_dtype)like->dtype : MGOPT_DT_UNKNOWN;
  }
  return x ? mgopt__imp_ty_set(I, op, 0, &t) : MGOPT_OK;
}

static mgopt_status mgopt__oty_shape(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_onnx_node *n = I->node;
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  int64_t start = mgopt__imp_aint(n, "start", 0), end = mgopt__imp_aint(n, "end", x ? x->rank : 0);
  MGOPT__UNUSED(r);
  if (!x) return MGOPT_OK;
  if (x->rank < 0) { /* 1-d int64 whatever x is */
    mgopt__imp_ty_unknown(&t, MGOPT_DT_INT64, 1);
    return mgopt__imp_ty_set(I, op, 0, &t);
  }
  if (start < 0) start += x->rank;
  if (end < 0) end += x->rank;
  start = start < 0 ? 0 : start > x->rank ? x->rank : start;
  end = end < 0 ? 0 : end > x->rank ? x->rank : end;
  mgopt__imp_ty_unknown(&t, MGOPT_DT_INT64, 1);
  t.dims[0] = mgopt_dim_static(end > start ? end - start : 0);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

static mgopt_status mgopt__oty_size(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  mgopt__imp_ty_unknown(&t, mgopt__imp_tin(I, 0) ? MGOPT_DT_INT64 : MGOPT_DT_UNKNOWN, 0);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

static mgopt_status mgopt__oty_dynamic_quantize(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  mgopt_status s;
  MGOPT__UNUSED(r);
  if (!x) return MGOPT_OK;
  mgopt__imp_ty_of(&t, x);
  t.dt = MGOPT_DT_UINT8;
  s = mgopt__imp_ty_set(I, op, 0, &t);
  mgopt__imp_ty_unknown(&t, MGOPT_DT_FP32, 0);
  if (!s) s = mgopt__imp_ty_set(I, op, 1, &t);
  t.dt = MGOPT_DT_UINT8;
  if (!s) s = mgopt__imp_ty_set(I, op, 2, &t);
  return s;
}

/* x's shape; the zero point's dtype, else output_dtype, else uint8. */
static mgopt_status mgopt__oty_quantize(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0), *zp = mgopt__imp_tin(I, 2);
  int64_t odt = mgopt__imp_aint(I->node, "output_dtype", 0);
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  mgopt__imp_ty_of(&t, x);
  if (zp) t.dt = (mgopt_dtype)zp->dtype;
  else if (mgopt__imp_in(I, 2)) t.dt = MGOPT_DT_UNKNOWN;
  else t.dt = odt > 0 && odt <= 0x7fffffff ? mgopt_onnx_dtype((int32_t)odt) : MGOPT_DT_UINT8;
  return x ? mgopt__imp_ty_set(I, op, 0, &t) : MGOPT_OK;
}

/* x's shape; float (arg 1: the scale's dtype, from opset 19 on). */
static mgopt_status mgopt__oty_dequantize(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0), *sc = mgopt__imp_tin(I, 1);
  mgopt__imp_ty t;
  mgopt__imp_ty_of(&t, x);
  t.dt = !r->arg ? MGOPT_DT_FP32 : sc ? (mgopt_dtype)sc->dtype : MGOPT_DT_UNKNOWN;
  if (mgopt__imp_attr(I->node, "output_dtype")) t.dt = MGOPT_DT_UNKNOWN; /* opset 23's override: not modelled */
  return x ? mgopt__imp_ty_set(I, op, 0, &t) : MGOPT_OK;
}

#define MGOPT__OTY_INT32 1       /* the output is int32 (ConvInteger, MatMulInteger) */
#define MGOPT__OTY_NO_CHANNELS 2 /* W's first dim is not the output's channels (ConvTranspose) */

/* X and W have one rank; the output has it too, X's batch and W's output
   channels. arg: MGOPT__OTY_* flags. */
static mgopt_status mgopt__oty_conv(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0), *w = mgopt__imp_tin(I, 1);
  int32_t rank = x && x->rank >= 0 ? x->rank : w ? w->rank : -1;
  mgopt_dtype dt = (r->arg & MGOPT__OTY_INT32) ? MGOPT_DT_INT32
                   : x && x->dtype != MGOPT_DT_UNKNOWN ? (mgopt_dtype)x->dtype
                   : w ? (mgopt_dtype)w->dtype : MGOPT_DT_UNKNOWN;
  mgopt__imp_ty t;
  if (!x || rank < 3 || (w && w->rank >= 0 && w->rank != rank)) return MGOPT_OK;
  mgopt__imp_ty_unknown(&t, dt, rank);
  if (x->rank >= 0) t.dims[0] = x->dims[0];
  if (w && w->rank >= 1 && !(r->arg & MGOPT__OTY_NO_CHANNELS)) t.dims[1] = w->dims[0];
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* arg: MGOPT__OTY_INT32 or 0 (x's dtype). */
static mgopt_status mgopt__oty_matmul(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  mgopt__imp_ty_of(&t, x);
  if (r->arg & MGOPT__OTY_INT32) t.dt = MGOPT_DT_INT32;
  mgopt__imp_ty_matmul(&t, x, mgopt__imp_tin(I, 1));
  return mgopt__imp_ty_set(I, op, 0, &t);
}

static mgopt_status mgopt__oty_constant_of_shape(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(I->node, "value");
  mgopt_dtype dt = a && a->type == MGOPT_ONNX_ATTR_TENSOR && a->t ? mgopt_onnx_dtype(a->t->data_type) : MGOPT_DT_FP32;
  int64_t *v = NULL, len = mgopt__imp_const_ints(I, mgopt__imp_in(I, 0), &v);
  mgopt__imp_ty t;
  int32_t i;
  MGOPT__UNUSED(r);
  if (len > MGOPT_MAX_RANK) return MGOPT_OK;
  mgopt__imp_ty_unknown(&t, dt, len >= 0 ? (int32_t)len : mgopt__imp_ty_len(mgopt__imp_tin(I, 0)));
  for (i = 0; len >= 0 && i < t.rank; i++)
    if (v[i] >= 0) t.dims[i] = mgopt_dim_static(v[i]);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

static mgopt_status mgopt__oty_gather(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0), *idx = mgopt__imp_tin(I, 1);
  int64_t axis = mgopt__imp_aint(I->node, "axis", 0);
  int32_t rank, i, j = 0;
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  if (!x || !idx || x->rank < 1 || idx->rank < 0) return MGOPT_OK;
  if (axis < 0) axis += x->rank;
  if (axis < 0 || axis >= x->rank) return MGOPT_OK;
  rank = x->rank - 1 + idx->rank;
  mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, rank);
  if (t.rank < 0) return MGOPT_OK;
  for (i = 0; i < x->rank; i++) {
    if (i == axis) {
      int32_t q;
      for (q = 0; q < idx->rank; q++) t.dims[j++] = idx->dims[q];
    } else {
      t.dims[j++] = x->dims[i];
    }
  }
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* The indices' shape, x's dtype. */
static mgopt_status mgopt__oty_gather_elements(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0), *idx = mgopt__imp_tin(I, 1);
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  if (!x || !idx) return MGOPT_OK;
  mgopt__imp_ty_of(&t, idx);
  t.dt = (mgopt_dtype)x->dtype;
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* The rank is the length of the shape input (arg 1: Expand, at least x's rank). */
static mgopt_status mgopt__oty_reshape(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  int32_t len = mgopt__imp_ty_len(mgopt__imp_tin(I, 1));
  mgopt__imp_ty t;
  if (!x || len < 0) return MGOPT_OK;
  if (r->arg) {
    if (x->rank < 0) return MGOPT_OK;
    if (x->rank > len) len = x->rank;
  }
  mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, len);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* Unsqueeze-13: x's rank plus the length of the axes input. */
static mgopt_status mgopt__oty_unsqueeze(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  int32_t len = mgopt__imp_ty_len(mgopt__imp_tin(I, 1));
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  if (!x || x->rank < 0 || len < 0) return MGOPT_OK;
  mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, x->rank + len);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* x without the axes drop[] marks (those dims are 1 at run time, or reduced away). */
static mgopt_status mgopt__oty_drop_axes(mgopt__imp *I, mgopt_op *op, const mgopt_type *x, const int64_t *ax, int64_t na) {
  uint8_t drop[MGOPT_MAX_RANK];
  mgopt__imp_ty t;
  int32_t i, j = 0;
  memset(drop, 0, sizeof drop);
  for (i = 0; i < na; i++) {
    int64_t a = ax[i] < 0 ? ax[i] + x->rank : ax[i];
    if (a < 0 || a >= x->rank || drop[a]) return MGOPT_OK;
    drop[a] = 1;
  }
  mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, x->rank - (int32_t)na);
  for (i = 0; i < x->rank; i++)
    if (!drop[i]) t.dims[j++] = x->dims[i];
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* With its axes known: x without them. arg 1: the axes are an input (from opset 13), 0: an attribute. */
static mgopt_status mgopt__oty_squeeze(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  int64_t *ax = NULL, na = r->arg ? mgopt__imp_const_ints(I, mgopt__imp_in(I, 1), &ax) : -1;
  if (!r->arg) na = mgopt__imp_aints(I->node, "axes", (const int64_t **)&ax);
  if (!x || x->rank < 0 || x->rank > MGOPT_MAX_RANK || na < 1) return MGOPT_OK;
  return mgopt__oty_drop_axes(I, op, x, ax, na);
}

static mgopt_status mgopt__oty_flatten(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  mgopt__imp_ty_unknown(&t, x ? (mgopt_dtype)x->dtype : MGOPT_DT_UNKNOWN, 2);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

#define MGOPT__OTY_BATCH 1   /* dim 0 passes through (pools, depth/space moves) */
#define MGOPT__OTY_ALL_OUTS 2 /* every output has the type (Split) */
#define MGOPT__OTY_INDICES 4 /* output 1 is int64 indices of the same rank (MaxPool) */

/* x's dtype and rank. arg: MGOPT__OTY_BATCH, _ALL_OUTS, _INDICES flags. */
static mgopt_status mgopt__oty_rank(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  mgopt_status s = MGOPT_OK;
  int32_t k;
  if (!x || x->rank < 0) return MGOPT_OK;
  mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, x->rank);
  if ((r->arg & MGOPT__OTY_BATCH) && x->rank >= 1) t.dims[0] = x->dims[0];
  for (k = 0; k < ((r->arg & MGOPT__OTY_ALL_OUTS) ? op->nouts : 1) && !s; k++) s = mgopt__imp_ty_set(I, op, k, &t);
  if (!s && (r->arg & MGOPT__OTY_INDICES)) {
    t.dt = MGOPT_DT_INT64;
    s = mgopt__imp_ty_set(I, op, 1, &t);
  }
  return s;
}

/* Reductions (arg 0) and ArgMax/ArgMin (arg 1): keepdims keeps the rank;
   without it, x without the reduced axes when they are known. */
static mgopt_status mgopt__oty_reduce(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_onnx_node *n = I->node;
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  int arg = r->arg;
  mgopt__imp_ty t;
  int32_t i;
  if (!x || x->rank < 0) return MGOPT_OK;
  if (mgopt__imp_aint(n, "keepdims", 1) != 0) {
    mgopt__imp_ty_unknown(&t, arg ? MGOPT_DT_INT64 : (mgopt_dtype)x->dtype, x->rank);
  } else if (!arg && x->rank <= MGOPT_MAX_RANK) {
    /* keepdims 0 with the axes known (an attribute, or a constant input
       since ReduceSum 13 / the rest 18): x without them */
    const int64_t *ca = NULL;
    int64_t *ia = NULL, na = mgopt__imp_aints(n, "axes", &ca);
    if (na < 0 && (na = mgopt__imp_const_ints(I, mgopt__imp_in(I, 1), &ia)) >= 0) ca = ia;
    if (na < 1) return MGOPT_OK; /* all axes, or none (noop_with_empty_axes): not worth the cases */
    return mgopt__oty_drop_axes(I, op, x, ca, na);
  } else if (arg && x->rank >= 1) {
    int64_t axis = mgopt__imp_aint(n, "axis", 0);
    int32_t j = 0;
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank) return MGOPT_OK;
    mgopt__imp_ty_unknown(&t, MGOPT_DT_INT64, x->rank - 1);
    for (i = 0; i < x->rank; i++)
      if (i != axis) t.dims[j++] = x->dims[i];
  } else {
    return MGOPT_OK;
  }
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* x with every spatial dim 1. */
static mgopt_status mgopt__oty_global_pool(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  int32_t i;
  MGOPT__UNUSED(r);
  if (!x || x->rank < 2) return MGOPT_OK;
  mgopt__imp_ty_of(&t, x);
  for (i = 2; i < t.rank; i++) t.dims[i] = mgopt_dim_static(1);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* LSTM, GRU, RNN: Y and Y_h (arg: the number of outputs, 3 with LSTM's Y_c). */
static mgopt_status mgopt__oty_rnn(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  /* X: [seq, batch, input] (layout 0) or [batch, seq, input] (layout 1) */
  const mgopt_onnx_node *n = I->node;
  const mgopt_type *x = mgopt__imp_tin(I, 0), *w = mgopt__imp_tin(I, 1);
  int64_t hidden = mgopt__imp_aint(n, "hidden_size", -1), layout = mgopt__imp_aint(n, "layout", 0);
  int64_t dirs = mgopt__imp_astr(n, "direction", "bidirectional") ? 2 : 1;
  mgopt_dtype dt = x && x->dtype != MGOPT_DT_UNKNOWN ? (mgopt_dtype)x->dtype : w ? (mgopt_dtype)w->dtype : MGOPT_DT_UNKNOWN;
  mgopt_dim seq = mgopt_dim_unknown(), batch = mgopt_dim_unknown();
  mgopt__imp_ty t;
  mgopt_status s;
  if (!x || (x->rank >= 0 && x->rank != 3) || hidden < 1 || (layout != 0 && layout != 1)) return MGOPT_OK;
  if (x->rank == 3) {
    seq = x->dims[layout ? 1 : 0];
    batch = x->dims[layout ? 0 : 1];
  }
  mgopt__imp_ty_unknown(&t, dt, 4);
  t.dims[0] = layout ? batch : seq;
  t.dims[1] = layout ? seq : mgopt_dim_static(dirs);
  t.dims[2] = layout ? mgopt_dim_static(dirs) : batch;
  t.dims[3] = mgopt_dim_static(hidden);
  s = mgopt__imp_ty_set(I, op, 0, &t);
  mgopt__imp_ty_unknown(&t, dt, 3);
  t.dims[0] = layout ? batch : mgopt_dim_static(dirs);
  t.dims[1] = layout ? mgopt_dim_static(dirs) : batch;
  t.dims[2] = mgopt_dim_static(hidden);
  if (!s) s = mgopt__imp_ty_set(I, op, 1, &t);
  if (!s && r->arg > 2) s = mgopt__imp_ty_set(I, op, 2, &t);
  return s;
}

static mgopt_status mgopt__oty_nonzero(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  if (!x) return MGOPT_OK;
  mgopt__imp_ty_unknown(&t, MGOPT_DT_INT64, 2);
  if (x->rank >= 0) t.dims[0] = mgopt_dim_static(x->rank);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

static mgopt_status mgopt__oty_topk(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  mgopt_status s;
  MGOPT__UNUSED(r);
  if (!x || x->rank < 0) return MGOPT_OK;
  mgopt__imp_ty_unknown(&t, (mgopt_dtype)x->dtype, x->rank);
  s = mgopt__imp_ty_set(I, op, 0, &t);
  t.dt = MGOPT_DT_INT64;
  return s ? s : mgopt__imp_ty_set(I, op, 1, &t);
}

static mgopt_status mgopt__oty_range(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  const mgopt_type *x = mgopt__imp_tin(I, 0);
  mgopt__imp_ty t;
  MGOPT__UNUSED(r);
  mgopt__imp_ty_unknown(&t, x ? (mgopt_dtype)x->dtype : MGOPT_DT_UNKNOWN, 1);
  return mgopt__imp_ty_set(I, op, 0, &t);
}

/* What both branches agree on. */
static mgopt_status mgopt__oty_if(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r) {
  mgopt_block *a, *b;
  mgopt__imp_ty t;
  mgopt_status s = MGOPT_OK;
  int32_t k, i;
  MGOPT__UNUSED(r);
  if (op->nblocks != 2) return MGOPT_OK;
  a = op->blocks[0];
  b = op->blocks[1];
  if (a->nouts != op->nouts || b->nouts != op->nouts) return MGOPT_OK;
  for (k = 0; k < op->nouts && !s; k++) {
    const mgopt_type *ta = &a->outs[k]->value->type, *tb = &b->outs[k]->value->type;
    if (ta->kind != MGOPT_TYPE_TENSOR || tb->kind != MGOPT_TYPE_TENSOR || ta->dtype != tb->dtype) continue;
    mgopt__imp_ty_unknown(&t, (mgopt_dtype)ta->dtype, ta->rank == tb->rank ? ta->rank : -1);
    for (i = 0; i < t.rank; i++)
      if (ta->dims[i].v == tb->dims[i].v && ta->dims[i].sym == tb->dims[i].sym) t.dims[i] = ta->dims[i];
    s = mgopt__imp_ty_set(I, op, k, &t);
  }
  return s;
}

/* ---------------------------------------------------------------- the table */

static const mgopt__onnx_rule mgopt__onnx_rule_table[] = {
    {"Relu", 1, 0, mgopt__oty_same, 0},
    {"LeakyRelu", 1, 0, mgopt__oty_same, 0},
    {"PRelu", 1, 0, mgopt__oty_same, 0},
    {"Sigmoid", 1, 0, mgopt__oty_same, 0},
    {"HardSigmoid", 1, 0, mgopt__oty_same, 0},
    {"HardSwish", 1, 0, mgopt__oty_same, 0},
    {"Tanh", 1, 0, mgopt__oty_same, 0},
    {"Softplus", 1, 0, mgopt__oty_same, 0},
    {"Softsign", 1, 0, mgopt__oty_same, 0},
    {"Selu", 1, 0, mgopt__oty_same, 0},
    {"Elu", 1, 0, mgopt__oty_same, 0},
    {"Celu", 1, 0, mgopt__oty_same, 0},
    {"ThresholdedRelu", 1, 0, mgopt__oty_same, 0},
    {"Mish", 1, 0, mgopt__oty_same, 0},
    {"Gelu", 1, 0, mgopt__oty_same, 0},
    {"Erf", 1, 0, mgopt__oty_same, 0},
    {"Abs", 1, 0, mgopt__oty_same, 0},
    {"Neg", 1, 0, mgopt__oty_same, 0},
    {"Exp", 1, 0, mgopt__oty_same, 0},
    {"Log", 1, 0, mgopt__oty_same, 0},
    {"Sqrt", 1, 0, mgopt__oty_same, 0},
    {"Reciprocal", 1, 0, mgopt__oty_same, 0},
    {"Floor", 1, 0, mgopt__oty_same, 0},
    {"Ceil", 1, 0, mgopt__oty_same, 0},
    {"Round", 1, 0, mgopt__oty_same, 0},
    {"Sign", 1, 0, mgopt__oty_same, 0},
    {"Sin", 1, 0, mgopt__oty_same, 0},
    {"Cos", 1, 0, mgopt__oty_same, 0},
    {"Tan", 1, 0, mgopt__oty_same, 0},
    {"Asin", 1, 0, mgopt__oty_same, 0},
    {"Acos", 1, 0, mgopt__oty_same, 0},
    {"Atan", 1, 0, mgopt__oty_same, 0},
    {"Sinh", 1, 0, mgopt__oty_same, 0},
    {"Cosh", 1, 0, mgopt__oty_same, 0},
    {"Asinh", 1, 0, mgopt__oty_same, 0},
    {"Acosh", 1, 0, mgopt__oty_same, 0},
    {"Atanh", 1, 0, mgopt__oty_same, 0},
    {"Clip", 1, 0, mgopt__oty_same, 0},
    {"Softmax", 1, 0, mgopt__oty_same, 0},
    {"LogSoftmax", 1, 0, mgopt__oty_same, 0},
    {"Hardmax", 1, 0, mgopt__oty_same, 0},
    {"Identity", 1, 0, mgopt__oty_same, 0},
    {"CumSum", 1, 0, mgopt__oty_same, 0},
    {"LRN", 1, 0, mgopt__oty_same, 0},
    {"LpNormalization", 1, 0, mgopt__oty_same, 0},
    {"MeanVarianceNormalization", 1, 0, mgopt__oty_same, 0},
    {"InstanceNormalization", 1, 0, mgopt__oty_same, 0},
    {"BatchNormalization", 1, 0, mgopt__oty_same, 0},
    {"LayerNormalization", 1, 0, mgopt__oty_same, 0},
    {"GroupNormalization", 1, 0, mgopt__oty_same, 0},
    {"Trilu", 1, 0, mgopt__oty_same, 0},
    {"Shrink", 1, 0, mgopt__oty_same, 0},
    {"ScatterND", 1, 0, mgopt__oty_same, 0},
    {"ScatterElements", 1, 0, mgopt__oty_same, 0},
    {"BitwiseNot", 1, 0, mgopt__oty_same, 0},
    {"ReverseSequence", 1, 0, mgopt__oty_same, 0},
    {"Dropout", 1, 9, mgopt__oty_dropout, MGOPT_DT_UNKNOWN},
    {"Dropout", 10, 0, mgopt__oty_dropout, MGOPT_DT_BOOL},
    {"Not", 1, 0, mgopt__oty_to_bool, 0},
    {"IsNaN", 1, 0, mgopt__oty_to_bool, 0},
    {"IsInf", 1, 0, mgopt__oty_to_bool, 0},
    {"Add", 1, 0, mgopt__oty_bcast, 0},
    {"Sub", 1, 0, mgopt__oty_bcast, 0},
    {"Mul", 1, 0, mgopt__oty_bcast, 0},
    {"Div", 1, 0, mgopt__oty_bcast, 0},
    {"Pow", 1, 0, mgopt__oty_bcast, 0},
    {"Mod", 1, 0, mgopt__oty_bcast, 0},
    {"Max", 1, 0, mgopt__oty_bcast, 0},
    {"Min", 1, 0, mgopt__oty_bcast, 0},
    {"Sum", 1, 0, mgopt__oty_bcast, 0},
    {"Mean", 1, 0, mgopt__oty_bcast, 0},
    {"BitwiseAnd", 1, 0, mgopt__oty_bcast, 0},
    {"BitwiseOr", 1, 0, mgopt__oty_bcast, 0},
    {"BitwiseXor", 1, 0, mgopt__oty_bcast, 0},
    {"BitShift", 1, 0, mgopt__oty_bcast, 0},
    {"Equal", 1, 0, mgopt__oty_bcast, -1},
    {"Less", 1, 0, mgopt__oty_bcast, -1},
    {"Greater", 1, 0, mgopt__oty_bcast, -1},
    {"LessOrEqual", 1, 0, mgopt__oty_bcast, -1},
    {"GreaterOrEqual", 1, 0, mgopt__oty_bcast, -1},
    {"And", 1, 0, mgopt__oty_bcast, -1},
    {"Or", 1, 0, mgopt__oty_bcast, -1},
    {"Xor", 1, 0, mgopt__oty_bcast, -1},
    {"Where", 1, 0, mgopt__oty_bcast, 1},
    {"Cast", 1, 0, mgopt__oty_cast, 0},
    {"CastLike", 1, 0, mgopt__oty_cast, 1},
    {"Shape", 1, 0, mgopt__oty_shape, 0},
    {"Size", 1, 0, mgopt__oty_size, 0},
    {"DynamicQuantizeLinear", 1, 0, mgopt__oty_dynamic_quantize, 0},
    {"QuantizeLinear", 1, 0, mgopt__oty_quantize, 0},
    {"DequantizeLinear", 1, 18, mgopt__oty_dequantize, 0},
    {"DequantizeLinear", 19, 0, mgopt__oty_dequantize, 1},
    {"Conv", 1, 0, mgopt__oty_conv, 0},
    {"ConvInteger", 1, 0, mgopt__oty_conv, MGOPT__OTY_INT32},
    {"ConvTranspose", 1, 0, mgopt__oty_conv, MGOPT__OTY_NO_CHANNELS},
    {"MatMul", 1, 0, mgopt__oty_matmul, 0},
    {"MatMulInteger", 1, 0, mgopt__oty_matmul, MGOPT__OTY_INT32},
    {"ConstantOfShape", 1, 0, mgopt__oty_constant_of_shape, 0},
    {"Gather", 1, 0, mgopt__oty_gather, 0},
    {"GatherElements", 1, 0, mgopt__oty_gather_elements, 0},
    {"Reshape", 1, 0, mgopt__oty_reshape, 0},
    {"Expand", 1, 0, mgopt__oty_reshape, 1},
    {"Unsqueeze", 13, 0, mgopt__oty_unsqueeze, 0},
    {"Squeeze", 1, 12, mgopt__oty_squeeze, 0},
    {"Squeeze", 13, 0, mgopt__oty_squeeze, 1},
    {"Flatten", 1, 0, mgopt__oty_flatten, 0},
    {"Pad", 1, 0, mgopt__oty_rank, 0},
    {"Resize", 1, 0, mgopt__oty_rank, 0},
    {"Upsample", 1, 0, mgopt__oty_rank, 0},
    {"Slice", 1, 0, mgopt__oty_rank, 0},
    {"Tile", 1, 0, mgopt__oty_rank, 0},
    {"Transpose", 1, 0, mgopt__oty_rank, 0},
    {"Concat", 1, 0, mgopt__oty_rank, 0},
    {"Split", 1, 0, mgopt__oty_rank, MGOPT__OTY_ALL_OUTS},
    {"MaxPool", 1, 0, mgopt__oty_rank, MGOPT__OTY_BATCH | MGOPT__OTY_INDICES},
    {"AveragePool", 1, 0, mgopt__oty_rank, MGOPT__OTY_BATCH},
    {"LpPool", 1, 0, mgopt__oty_rank, MGOPT__OTY_BATCH},
    {"DepthToSpace", 1, 0, mgopt__oty_rank, MGOPT__OTY_BATCH},
    {"SpaceToDepth", 1, 0, mgopt__oty_rank, MGOPT__OTY_BATCH},
    {"MaxUnpool", 1, 0, mgopt__oty_rank, MGOPT__OTY_BATCH},
    {"ReduceMean", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceSum", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceMax", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceMin", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceProd", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceL1", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceL2", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceLogSum", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceLogSumExp", 1, 0, mgopt__oty_reduce, 0},
    {"ReduceSumSquare", 1, 0, mgopt__oty_reduce, 0},
    {"ArgMax", 1, 0, mgopt__oty_reduce, 1},
    {"ArgMin", 1, 0, mgopt__oty_reduce, 1},
    {"GlobalAveragePool", 1, 0, mgopt__oty_global_pool, 0},
    {"GlobalMaxPool", 1, 0, mgopt__oty_global_pool, 0},
    {"GlobalLpPool", 1, 0, mgopt__oty_global_pool, 0},
    {"LSTM", 1, 0, mgopt__oty_rnn, 3},
    {"GRU", 1, 0, mgopt__oty_rnn, 2},
    {"RNN", 1, 0, mgopt__oty_rnn, 2},
    {"NonZero", 1, 0, mgopt__oty_nonzero, 0},
    {"TopK", 1, 0, mgopt__oty_topk, 0},
    {"Range", 1, 0, mgopt__oty_range, 0},
    {"If", 1, 0, mgopt__oty_if, 0},
};

MGOPT__PRIVATE const mgopt__onnx_rule *mgopt__onnx_rules(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_rule_table);
  return mgopt__onnx_rule_table;
}
/* src/onnx/ops.c — the ONNX op tables: the families of mappings and the lookups by op type (import) and by kind (export). */

/* Every family of mappings; a new family is one more line here. */
static const mgopt__onnx_family_fn mgopt__onnx_families[] = {
    mgopt__onnx_maps_elementwise,
    mgopt__onnx_maps_shape,
    mgopt__onnx_maps_nn,
    mgopt__onnx_maps_reduce,
    mgopt__onnx_maps_struct,
    mgopt__onnx_maps_quant,
    mgopt__onnx_maps_sparse,
    mgopt__onnx_maps_recurrent,
};

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_family(int32_t i, int32_t *n) {
  *n = 0;
  if (i < 0 || i >= MGOPT__ARRAY_COUNT(mgopt__onnx_families)) return NULL;
  return mgopt__onnx_families[i](n);
}

MGOPT__PRIVATE int mgopt__onnx_in_range(int32_t since, int32_t until, int64_t opset) {
  return opset >= since && (until == 0 || opset <= until);
}

/* ---------------------------------------------------------------- the importer's index by op type */

static size_t mgopt__onnx_hash(const char *s, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  size_t i;
  for (i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
  return (size_t)h & (MGOPT__ONNX_INDEX_CAP - 1);
}

/* The slot of name (an empty one when the name is not there yet). */
static size_t mgopt__onnx_slot(const mgopt__onnx_index *x, const char *name, size_t len) {
  size_t h = mgopt__onnx_hash(name, len);
  while (x->slots[h].name && !(x->slots[h].len == len && memcmp(x->slots[h].name, name, len) == 0))
    h = (h + 1) & (MGOPT__ONNX_INDEX_CAP - 1);
  return h;
}

static mgopt__onnx_entry *mgopt__onnx_index_add(mgopt__onnx_index *x, const char *name) {
  size_t len = strlen(name);
  mgopt__onnx_entry *e = &x->slots[mgopt__onnx_slot(x, name, len)];
  if (!e->name) {
    /* the tables hold far fewer names than half the slots (a unit test checks) */
    MGOPT_ASSERT(x->count < MGOPT__ONNX_INDEX_CAP / 2);
    e->name = name;
    e->len = len;
    x->count++;
  }
  return e;
}

/* Indexes the rows that hold for `opset`: at most one importing mapping and
   one type rule per name (a unit test checks that the ranges do not overlap);
   a row that only writes a kind back may share the name, and loses to the
   row that imports it. */
MGOPT__PRIVATE void mgopt__onnx_index_build(mgopt__onnx_index *x, int64_t opset) {
  const mgopt__onnx_map *maps;
  const mgopt__onnx_rule *rules;
  int32_t f, i, n;
  memset(x, 0, sizeof *x);
  for (f = 0; (maps = mgopt__onnx_family(f, &n)) != NULL; f++)
    for (i = 0; i < n; i++)
      if (mgopt__onnx_in_range(maps[i].since, maps[i].until, opset)) {
        mgopt__onnx_entry *e = mgopt__onnx_index_add(x, maps[i].onnx);
        if (!e->map || (maps[i].to_ir && !e->map->to_ir)) e->map = &maps[i];
      }
  rules = mgopt__onnx_rules(&n);
  for (i = 0; i < n; i++)
    if (mgopt__onnx_in_range(rules[i].since, rules[i].until, opset)) mgopt__onnx_index_add(x, rules[i].onnx)->rule = &rules[i];
}

/* The entry of an op type of the default domain, or NULL when no row holds it. */
MGOPT__PRIVATE const mgopt__onnx_entry *mgopt__onnx_index_find(const mgopt__onnx_index *x, mgopt_str op_type) {
  const mgopt__onnx_entry *e;
  if (!op_type.len) return NULL;
  e = &x->slots[mgopt__onnx_slot(x, op_type.ptr, op_type.len)];
  return e->name ? e : NULL;
}

/* ---------------------------------------------------------------- the exporter's index by kind */

/* by_kind[k] = the row that writes kind k at `opset` (NULL: none does). */
MGOPT__PRIVATE void mgopt__onnx_kind_index(const mgopt__onnx_map **by_kind, int64_t opset) {
  const mgopt__onnx_map *maps;
  int32_t f, i, n;
  for (i = 0; i < MGOPT_OP__COUNT; i++) by_kind[i] = NULL;
  for (f = 0; (maps = mgopt__onnx_family(f, &n)) != NULL; f++)
    for (i = 0; i < n; i++)
      if (maps[i].to_onnx && maps[i].kind > 0 && maps[i].kind < MGOPT_OP__COUNT &&
          mgopt__onnx_in_range(maps[i].since, maps[i].until, opset))
        by_kind[maps[i].kind] = &maps[i];
}

/* 1 when `kind` is written at `opset` only by a later opset's row: a node
   the importer would map to it could not be written back at the model's
   opset (Gelu before opset 20), so it stays opaque. */
MGOPT__PRIVATE int mgopt__onnx_kind_only_later(int32_t kind, int64_t opset) {
  const mgopt__onnx_map *maps;
  int32_t f, i, n, later = 0;
  for (f = 0; (maps = mgopt__onnx_family(f, &n)) != NULL; f++)
    for (i = 0; i < n; i++)
      if (maps[i].to_onnx && maps[i].kind == kind) {
        if (mgopt__onnx_in_range(maps[i].since, maps[i].until, opset)) return 0;
        if (maps[i].since > opset) later = 1;
      }
  return later;
}

/* The first row that writes `kind` at an opset after `opset`, or NULL. */
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_kind_later(int32_t kind, int64_t opset) {
  const mgopt__onnx_map *maps, *best = NULL;
  int32_t f, i, n;
  for (f = 0; (maps = mgopt__onnx_family(f, &n)) != NULL; f++)
    for (i = 0; i < n; i++)
      if (maps[i].to_onnx && maps[i].kind == kind && maps[i].since > opset && (!best || maps[i].since < best->since))
        best = &maps[i];
  return best;
}
/* src/onnx/functions.c — ONNX model-local functions as IR functions: their names in the IR, the order and types their bodies are imported with, and their FunctionProto written back. */

/* How it works. A model-local function (ModelProto.functions) becomes an IR
   function named as the opaque op a node calling it becomes: "domain::Name",
   or "domain::Name@overload" for an overloaded one (IR version 10), so a call
   stays an opaque op and mgopt_op_callee finds the function it calls by its
   type. The body is imported as a graph is (the same node mapping) when the
   first call to it is imported, its inputs typed by that call's operands; a
   later call passing other types widens them to the join (equal dtypes stay,
   differing dims become unknown) and the body is imported again, so each
   input ends with a type every caller agrees with. A call's outputs get the
   types of the body's outputs, the body being typed at least as generally
   as the call's operands. An input some caller does not pass, or of a
   function that a function kept as it came calls, has an unknown type;
   functions no imported graph calls are imported last with unknown input
   types. A node whose attribute refers to one of the function's attributes
   (ref_attr_name) stays opaque; the reference is an attribute of kind
   MGOPT_ATTR_BYTES tagged MGOPT_ONNX_ATTR_REF | its type, the bytes being
   the referenced name, and is written back as it came.
   A function is kept as it came (its FunctionProto copied verbatim on
   export, never looked into) when: its domain is the default one; its name
   or overload holds ':' or '@'; its default-domain opset differs from the
   model's (the body would be mapped at another opset than the one passes
   and the exporter target); two functions share its IR name; it calls
   itself through other functions; or its body does not import (an
   attribute kind the importer refuses, say). Export writes each imported
   function from the IR: its body through the same exporter as a subgraph
   (constants as Constant nodes), its input names and count as imported,
   its output names as imported (an Identity node makes an output whose
   value got another name, or that repeats one, carry its own name), and
   its domain, name, overload, attributes with and without defaults,
   opset imports (the default domain at the export opset), doc string and
   metadata as they came; value_info entries are kept for the names the
   written body still defines (export.c, mgopt__exp_function). */

/* The opaque op type of a node of domain/op_type/overload (default domain:
   "onnx::OpType"), into buf (NUL-terminated, parts cut as the importer cuts them). */
MGOPT__PRIVATE void mgopt__onnx_node_type(char *buf, size_t cap, mgopt_str domain, mgopt_str op_type, mgopt_str overload) {
  if (mgopt__imp_default_domain(domain))
    snprintf(buf, cap, "onnx::%.*s", (int)(op_type.len > 200 ? 200 : op_type.len), op_type.ptr ? op_type.ptr : "");
  else if (!overload.len)
    snprintf(buf, cap, "%.*s::%.*s", (int)(domain.len > 100 ? 100 : domain.len), domain.ptr,
             (int)(op_type.len > 120 ? 120 : op_type.len), op_type.ptr ? op_type.ptr : "");
  else
    snprintf(buf, cap, "%.*s::%.*s@%.*s", (int)(domain.len > 100 ? 100 : domain.len), domain.ptr,
             (int)(op_type.len > 120 ? 120 : op_type.len), op_type.ptr ? op_type.ptr : "",
             (int)(overload.len > 100 ? 100 : overload.len), overload.ptr);
}

static int mgopt__fn_has_char(mgopt_str s, char c) { return s.len && memchr(s.ptr, c, s.len) != NULL; }

/* The default-domain opset of function fn (the model's when it lists none). */
static int64_t mgopt__fn_opset(const mgopt_onnx_function *fn, int64_t model_opset) {
  int64_t i;
  for (i = 0; i < fn->nopset_imports; i++)
    if (mgopt__imp_default_domain(fn->opset_imports[i].domain)) return fn->opset_imports[i].version;
  return model_opset;
}

MGOPT__PRIVATE mgopt_status mgopt__onnx_function_names(mgopt_program *p, const mgopt_onnx_model *m, const char **calls,
                                                      const char **names) {
  mgopt__imap seen;
  int64_t k, opset = 1;
  char buf[400];
  for (k = 0; k < m->nopset_imports; k++)
    if (mgopt__imp_default_domain(m->opset_imports[k].domain)) opset = m->opset_imports[k].version;
  memset(&seen, 0, sizeof seen);
  seen.al = &p->alloc;
  for (k = 0; k < m->nfunctions; k++) {
    const mgopt_onnx_function *fn = &m->functions[k];
    mgopt__onnx_node_type(buf, sizeof buf, fn->domain, fn->name, fn->overload);
    calls[k] = mgopt_program_intern_cstr(p, buf);
    names[k] = NULL;
    if (!calls[k]) break;
    mgopt__imap_put(&seen, calls[k], (void *)(uintptr_t)((uintptr_t)mgopt__imap_get(&seen, calls[k]) + 1));
  }
  for (k = 0; k < m->nfunctions && calls[k]; k++) {
    const mgopt_onnx_function *fn = &m->functions[k];
    if (mgopt__imp_default_domain(fn->domain) || !fn->name.len || mgopt__fn_has_char(fn->name, ':') ||
        mgopt__fn_has_char(fn->name, '@') || mgopt__fn_has_char(fn->overload, ':') ||
        mgopt__fn_has_char(fn->overload, '@') || mgopt__fn_has_char(fn->domain, '@') ||
        mgopt__fn_opset(fn, opset) != opset || (uintptr_t)mgopt__imap_get(&seen, calls[k]) != 1)
      continue;
    names[k] = calls[k];
  }
  k = seen.oom || (m->nfunctions && !calls[m->nfunctions - 1]);
  mgopt__imap_free(&seen);
  return k ? MGOPT_ERR_NOMEM : MGOPT_OK;
}

/* ---------------------------------------------------------------- import */

/* acc joined with t: the type both agree on (equal dtypes stay, a dim stays
   where both have it alike, the rank where both have it; anything else
   becomes unknown). first: acc becomes t. Sets *changed when acc changed. */
static mgopt_status mgopt__fn_join(mgopt_program *p, mgopt_type *acc, const mgopt_type *t, int first, int *changed) {
  int32_t i;
  if (first) {
    *changed = 1;
    return mgopt__type_copy(p, acc, t);
  }
  if (acc->kind != t->kind || acc->kind != MGOPT_TYPE_TENSOR) {
    if (acc->kind == t->kind && acc->kind == MGOPT_TYPE_OTHER && acc->other_len == t->other_len &&
        (!acc->other_len || memcmp(acc->other, t->other, acc->other_len) == 0))
      return MGOPT_OK;
    if (acc->kind == MGOPT_TYPE_TENSOR && acc->dtype == MGOPT_DT_UNKNOWN && acc->rank < 0) return MGOPT_OK;
    memset(acc, 0, sizeof *acc);
    acc->rank = -1;
    *changed = 1;
    return MGOPT_OK;
  }
  if (acc->dtype != t->dtype && acc->dtype != MGOPT_DT_UNKNOWN) {
    acc->dtype = MGOPT_DT_UNKNOWN;
    *changed = 1;
  }
  if (acc->rank < 0) return MGOPT_OK;
  if (acc->rank != t->rank) {
    acc->rank = -1;
    acc->dims = NULL;
    *changed = 1;
    return MGOPT_OK;
  }
  for (i = 0; i < acc->rank; i++)
    if ((acc->dims[i].v >= 0 || acc->dims[i].sym) && (acc->dims[i].v != t->dims[i].v || acc->dims[i].sym != t->dims[i].sym)) {
      acc->dims[i].v = -1;
      acc->dims[i].sym = NULL;
      *changed = 1;
    }
  return MGOPT_OK;
}

static mgopt_status mgopt__fn_unseen_calls(mgopt__imp *I, const mgopt_onnx_node *nodes, int64_t n, int depth);

/* Imports function k's body into a new IR function with its inputs typed
   F->args, in place of the one imported before (if any). A body that does
   not import leaves the function as it came. The importer's state for the
   graph it was reading is kept aside meanwhile. */
static mgopt_status mgopt__fn_import(mgopt__imp *I, int64_t k) {
  mgopt__imp_func *F = &I->fns[k];
  const mgopt_onnx_function *fn = F->proto;
  mgopt_onnx_graph g;
  mgopt_function *f;
  mgopt_status s;
  int64_t i;
  mgopt__imap values = I->values, vinfo = I->vinfo;
  mgopt_block *b = I->b;
  const mgopt_onnx_node *node = I->node;
  int depth = I->depth, infer_failed = I->infer_failed, in_function = I->in_function;
  const mgopt_type *arg_types = I->arg_types;
  memset(&g, 0, sizeof g);
  g.name = fn->name;
  g.nodes = fn->nodes;
  g.nnodes = fn->nnodes;
  g.value_info = fn->value_info;
  g.nvalue_info = fn->nvalue_info;
  g.ninputs = fn->ninputs;
  g.noutputs = fn->noutputs;
  g.inputs = (mgopt_onnx_value_info *)mgopt_program_alloc(I->p, sizeof(mgopt_onnx_value_info) * (size_t)(fn->ninputs + 1), 8);
  g.outputs = (mgopt_onnx_value_info *)mgopt_program_alloc(I->p, sizeof(mgopt_onnx_value_info) * (size_t)(fn->noutputs + 1), 8);
  if (!g.inputs || !g.outputs) return MGOPT_ERR_NOMEM;
  for (i = 0; i < fn->ninputs; i++) g.inputs[i].name = fn->inputs[i];
  for (i = 0; i < fn->noutputs; i++) g.outputs[i].name = fn->outputs[i];
  if ((f = mgopt_program_function(I->p, F->name)) != NULL) mgopt__function_drop(f);
  f = mgopt_function_new(I->p, F->name);
  if (!f) return MGOPT_ERR_NOMEM;
  memset(&I->values, 0, sizeof I->values);
  memset(&I->vinfo, 0, sizeof I->vinfo);
  I->values.al = &I->p->alloc;
  I->vinfo.al = &I->p->alloc;
  I->in_function = 1;
  I->arg_types = F->args;
  I->depth++;
  F->state = 3;
  s = mgopt__imp_function_body(I, &g, f->body);
  if (I->values.oom || I->vinfo.oom) s = MGOPT_ERR_NOMEM;
  mgopt__imap_free(&I->values);
  mgopt__imap_free(&I->vinfo);
  I->values = values;
  I->vinfo = vinfo;
  I->b = b;
  I->node = node;
  I->depth = depth;
  I->infer_failed = infer_failed;
  I->in_function = in_function;
  I->arg_types = arg_types;
  F->dirty = 0;
  if (s == MGOPT_ERR_NOMEM || I->p->status) return MGOPT_ERR_NOMEM;
  if (s) {
    /* kept as it came; what it calls may be called with any types now */
    mgopt__function_drop(f);
    F->state = 2;
    if (I->d) mgopt_diag_clear(I->d);
    I->depth++;
    s = mgopt__fn_unseen_calls(I, fn->nodes, fn->nnodes, 0);
    I->depth--;
    return s;
  }
  F->state = 1;
  return MGOPT_OK;
}

/* Function k is called with the given input types (NULL: unknown, as by a
   function kept as it came): joined into its inputs' types, its body
   (re)imported when they changed (later, by mgopt__imp_functions, when
   calls are nested too deeply to do it now). */
static mgopt_status mgopt__fn_called(mgopt__imp *I, int64_t k, const mgopt_type *const *types, int64_t ntypes) {
  mgopt__imp_func *F = &I->fns[k];
  mgopt_type unknown;
  int64_t i;
  int changed = 0;
  if (!F->name || F->state >= 2) return MGOPT_OK;
  memset(&unknown, 0, sizeof unknown);
  unknown.rank = -1;
  for (i = 0; i < F->proto->ninputs; i++)
    if (mgopt__fn_join(I->p, &F->args[i], types && i < ntypes && types[i] ? types[i] : &unknown, F->ncalls == 0, &changed))
      return MGOPT_ERR_NOMEM;
  F->ncalls++;
  if (changed && F->state == 1) F->dirty = 1;
  if ((F->state == 0 || F->dirty) && I->depth < MGOPT__IMP_MAX_DEPTH) return mgopt__fn_import(I, k);
  return MGOPT_OK;
}

/* Every function the nodes (and their subgraphs) call is called with unknown types. */
static mgopt_status mgopt__fn_unseen_calls(mgopt__imp *I, const mgopt_onnx_node *nodes, int64_t n, int depth) {
  int64_t i, k;
  char buf[400];
  mgopt_status s;
  if (depth > MGOPT__IMP_MAX_DEPTH) return MGOPT_OK;
  for (i = 0; i < n; i++) {
    const mgopt_onnx_node *nd = &nodes[i];
    const char *t;
    uintptr_t r;
    for (k = 0; k < nd->nattributes; k++)
      if (nd->attributes[k].g &&
          (s = mgopt__fn_unseen_calls(I, nd->attributes[k].g->nodes, nd->attributes[k].g->nnodes, depth + 1)) != MGOPT_OK)
        return s;
    if (mgopt__imp_default_domain(nd->domain)) continue;
    mgopt__onnx_node_type(buf, sizeof buf, nd->domain, nd->op_type, nd->overload);
    if (!(t = mgopt_program_intern_cstr(I->p, buf))) return MGOPT_ERR_NOMEM;
    r = (uintptr_t)mgopt__imap_get(&I->fnames, t);
    if (r && (s = mgopt__fn_called(I, (int64_t)r - 1, NULL, 0)) != MGOPT_OK) return s;
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__imp_note_call(mgopt__imp *I, mgopt_op *op) {
  uintptr_t r = I->fnames.map.n ? (uintptr_t)mgopt__imap_get(&I->fnames, op->type) : 0;
  const mgopt_type *types[64], **tp = types;
  mgopt__imp_func *F;
  mgopt_function *f;
  mgopt_status s;
  int64_t k;
  int32_t j;
  if (!r) return MGOPT_OK;
  F = &I->fns[r - 1];
  if (F->proto->ninputs > 64) {
    tp = (const mgopt_type **)mgopt_program_alloc(I->p, sizeof(mgopt_type *) * (size_t)F->proto->ninputs, 8);
    if (!tp) return MGOPT_ERR_NOMEM;
  }
  for (k = 0; k < F->proto->ninputs; k++) {
    char slot[24];
    mgopt_value *v;
    snprintf(slot, sizeof slot, "in%d", (int)k);
    v = mgopt_op_operand(op, slot);
    tp[k] = v ? &v->type : NULL;
  }
  if ((s = mgopt__fn_called(I, (int64_t)r - 1, tp, F->proto->ninputs)) != MGOPT_OK) return s;
  /* the call's outputs: what the body, typed at least as generally as this
     call's operands, gives */
  f = F->state == 1 ? mgopt_program_function(I->p, F->name) : NULL;
  for (j = 0; f && j < op->nouts && j < f->body->nouts; j++)
    if (!(op->outs[j]->flags & MGOPT_VALUE_ABSENT) && mgopt__type_copy(I->p, &op->outs[j]->type, &f->body->outs[j]->value->type))
      return MGOPT_ERR_NOMEM;
  return MGOPT_OK;
}

/* Kahn's algorithm over the calls between importable functions: ncall[k]
   counts calls to k from functions not yet ordered. */
static void mgopt__fn_count_calls(mgopt__imp *I, const mgopt_onnx_node *nodes, int64_t n, int depth, int64_t *ncall,
                                  int64_t delta) {
  int64_t i, k;
  char buf[400];
  if (depth > MGOPT__IMP_MAX_DEPTH) return;
  for (i = 0; i < n; i++) {
    const mgopt_onnx_node *nd = &nodes[i];
    const char *t;
    uintptr_t r;
    for (k = 0; k < nd->nattributes; k++)
      if (nd->attributes[k].g) mgopt__fn_count_calls(I, nd->attributes[k].g->nodes, nd->attributes[k].g->nnodes, depth + 1, ncall, delta);
    if (mgopt__imp_default_domain(nd->domain)) continue;
    mgopt__onnx_node_type(buf, sizeof buf, nd->domain, nd->op_type, nd->overload);
    t = mgopt_program_intern_cstr(I->p, buf);
    r = t ? (uintptr_t)mgopt__imap_get(&I->fnames, t) : 0;
    if (r) ncall[r - 1] += delta;
  }
}

MGOPT__PRIVATE mgopt_status mgopt__imp_prepare_functions(mgopt__imp *I) {
  const mgopt_onnx_model *m = I->m;
  const char **calls, **names;
  int64_t k, n = m->nfunctions, *ncall;
  int progress = 1;
  if (!n) return MGOPT_OK;
  calls = (const char **)mgopt_program_alloc(I->p, sizeof(char *) * (size_t)n, 8);
  names = (const char **)mgopt_program_alloc(I->p, sizeof(char *) * (size_t)n, 8);
  ncall = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)n, 8);
  I->fns = (mgopt__imp_func *)mgopt_program_alloc(I->p, sizeof(mgopt__imp_func) * (size_t)n, 8);
  if (!calls || !names || !ncall || !I->fns || mgopt__onnx_function_names(I->p, m, calls, names)) return MGOPT_ERR_NOMEM;
  I->nfns = n;
  I->fnames.al = &I->p->alloc;
  for (k = 0; k < n; k++) {
    mgopt__imp_func *F = &I->fns[k];
    F->proto = &m->functions[k];
    F->name = names[k];
    if (!F->name) continue;
    F->args = (mgopt_type *)mgopt_program_alloc(I->p, sizeof(mgopt_type) * (size_t)(F->proto->ninputs + 1), 8);
    if (!F->args) return MGOPT_ERR_NOMEM;
    mgopt__imap_put(&I->fnames, F->name, (void *)(uintptr_t)(k + 1));
  }
  if (I->fnames.oom || I->p->status) return MGOPT_ERR_NOMEM;
  /* a function that calls itself (through others) is kept as it came, and so
     is every function only such functions reach */
  for (k = 0; k < n; k++)
    if (I->fns[k].name) mgopt__fn_count_calls(I, I->fns[k].proto->nodes, I->fns[k].proto->nnodes, 0, ncall, 1);
  while (progress) {
    progress = 0;
    for (k = 0; k < n; k++)
      if (I->fns[k].name && !I->fns[k].state && ncall[k] == 0) {
        I->fns[k].state = 1; /* ordered (reset below) */
        mgopt__fn_count_calls(I, I->fns[k].proto->nodes, I->fns[k].proto->nnodes, 0, ncall, -1);
        progress = 1;
      }
  }
  for (k = 0; k < n; k++) {
    if (I->fns[k].name && !I->fns[k].state) I->fns[k].name = NULL;
    I->fns[k].state = 0;
  }
  if (I->p->status) return MGOPT_ERR_NOMEM;
  /* what a function kept as it came calls may get any types */
  for (k = 0; k < n; k++) {
    mgopt_status s;
    if (!I->fns[k].name && (s = mgopt__fn_unseen_calls(I, I->fns[k].proto->nodes, I->fns[k].proto->nnodes, 0)) != MGOPT_OK)
      return s;
  }
  return MGOPT_OK;
}

MGOPT__PRIVATE mgopt_status mgopt__imp_functions(mgopt__imp *I) {
  int64_t k, i;
  mgopt_status s;
  int progress = 1;
  /* what is left: functions no graph calls (inputs of unknown types), and
     imports put off by deep nesting; an import may put others off again,
     each time with more general types, so this ends */
  while (progress) {
    progress = 0;
    for (k = 0; k < I->nfns; k++) {
      mgopt__imp_func *F = &I->fns[k];
      if (!F->name || !(F->state == 0 || (F->state == 1 && F->dirty))) continue;
      if (F->ncalls == 0)
        for (i = 0; i < F->proto->ninputs; i++) {
          memset(&F->args[i], 0, sizeof F->args[i]);
          F->args[i].rank = -1;
        }
      if ((s = mgopt__fn_import(I, k)) != MGOPT_OK) return s;
      progress = 1;
    }
  }
  return I->p->status ? MGOPT_ERR_NOMEM : MGOPT_OK;
}
/* src/onnx/import.c — the ONNX importer's driver: graphs and subgraphs, values, initializers, nodes handed to the mapping table or kept opaque. */

/* How it works. The graph becomes function `main`: graph inputs are its
   arguments, also those with an initializer (an overridable default, as
   old exporters list every weight: the interface stays, and export writes
   the default back) unless the model's constant_inputs asks to fold them or
   its IR version is below 4 (where every initializer had to be an input, and
   ONNX Runtime takes them as constants);
   other initializers and Constant nodes become `const` ops (their raw data
   stays borrowed); each default-domain node goes
   to the row of the mapping table for its op type and the model's opset
   (ops.c), which builds canonical ops when the semantics are exactly equal,
   types and attributes included. Otherwise the node becomes an opaque op
   `onnx::OpType` (or `domain::OpType`) whose operand slots in0, in1, ... are
   the node's inputs (an omitted optional input is an absent slot), whose
   attributes are kept, whose GRAPH attributes become nested blocks named
   after the attribute, and whose output types come from the type-rule table
   (opaque_types.c). Output types come from type inference, refined by
   value_info. Subgraphs see the values of enclosing graphs. Model-local
   functions become IR functions after `main` (functions.c). The model tree
   stays in the program (program->onnx_meta) so export can keep everything
   the IR does not hold: opset imports, metadata, functions kept as they
   came, doc strings. An error about a node names its graph and the node:
   "graph 'g', node 12 'Conv_3' (Conv): ...", outer graphs first. */

MGOPT__PRIVATE mgopt_status mgopt__imp_fail(mgopt__imp *I, mgopt_status s, const char *fmt, ...) {
  va_list ap;
  if (!I->d) return s;
  I->d->status = s;
  I->d->op[0] = 0;
  if (I->node && I->node->name.len)
    snprintf(I->d->op, sizeof I->d->op, "%.*s", (int)(I->node->name.len > 90 ? 90 : I->node->name.len),
             I->node->name.ptr);
  va_start(ap, fmt);
  vsnprintf(I->d->msg, sizeof I->d->msg, fmt, ap);
  va_end(ap);
  return s;
}

/* Puts "graph 'g', node k 'name' (OpType): " before the message of an error
   about node k of g (its diag set as by mgopt__imp_fail; one without a
   message gets status s's "out of memory"). An outer graph's place that
   does not fit is left out, so the innermost place and the reason stay whole. */
static void mgopt__imp_locate(mgopt__imp *I, const mgopt_onnx_graph *g, int64_t k, mgopt_status s) {
  const mgopt_onnx_node *n = &g->nodes[k];
  char pre[400];
  if (!I->d) return;
  if (!I->d->status) {
    I->d->status = s;
    snprintf(I->d->msg, sizeof I->d->msg, "%s", s == MGOPT_ERR_NOMEM ? "out of memory" : mgopt_status_str(s));
  }
  if (mgopt__imp_default_domain(n->domain))
    snprintf(pre, sizeof pre, "graph '%.*s', node %lld '%.*s' (%.*s): ", (int)(g->name.len > 80 ? 80 : g->name.len),
             g->name.ptr ? g->name.ptr : "", (long long)k, (int)(n->name.len > 80 ? 80 : n->name.len),
             n->name.ptr ? n->name.ptr : "", (int)(n->op_type.len > 80 ? 80 : n->op_type.len),
             n->op_type.ptr ? n->op_type.ptr : "");
  else
    snprintf(pre, sizeof pre, "graph '%.*s', node %lld '%.*s' (%.*s::%.*s): ", (int)(g->name.len > 80 ? 80 : g->name.len),
             g->name.ptr ? g->name.ptr : "", (long long)k, (int)(n->name.len > 80 ? 80 : n->name.len),
             n->name.ptr ? n->name.ptr : "", (int)(n->domain.len > 60 ? 60 : n->domain.len),
             n->domain.ptr ? n->domain.ptr : "", (int)(n->op_type.len > 80 ? 80 : n->op_type.len),
             n->op_type.ptr ? n->op_type.ptr : "");
  if (strlen(pre) + strlen(I->d->msg) < sizeof I->d->msg) mgopt__diag_prefix(I->d, pre);
}

static mgopt_status mgopt__imp_graph(mgopt__imp *I, const mgopt_onnx_graph *g, mgopt_block *b, int is_main);

/* ---------------------------------------------------------------- opaque ops */

/* The node as an opaque op; e is its entry in the op index (NULL: none), for its type rule. */
static mgopt_status mgopt__imp_opaque(mgopt__imp *I, const mgopt__onnx_entry *e) {
  const mgopt_onnx_node *n = I->node;
  char type[256];
  int64_t i, ngraphs = 0;
  int32_t nouts = (int32_t)n->noutputs, bi = 0;
  mgopt_op *op;
  mgopt_status s;
  int refs = 0;
  mgopt__onnx_node_type(type, sizeof type, n->domain, n->op_type, n->overload);
  for (i = 0; i < n->nattributes; i++) {
    if (n->attributes[i].ref_attr_name.len) refs = 1;
    else if (n->attributes[i].type == MGOPT_ONNX_ATTR_GRAPH) ngraphs++;
  }
  if (nouts > 100000 || n->ninputs > 100000) return mgopt__imp_fail(I, MGOPT_ERR_LIMIT, "node with too many inputs or outputs");
  op = mgopt__imp_op(I, type, nouts, (int32_t)ngraphs);
  if (!op) return MGOPT_ERR_NOMEM;
  for (i = 0; i < n->ninputs; i++) {
    char slot[24];
    mgopt_value *v;
    if (n->inputs[i].len == 0) continue;
    v = mgopt__imp_in(I, i);
    if (!v)
      return mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "input '%.*s' is not defined",
                             (int)(n->inputs[i].len > 80 ? 80 : n->inputs[i].len), n->inputs[i].ptr);
    snprintf(slot, sizeof slot, "in%d", (int)i);
    if (mgopt_op_set_operand(op, slot, v)) return MGOPT_ERR_NOMEM;
  }
  if (mgopt__imp_note_call(I, op)) return MGOPT_ERR_NOMEM;
  for (i = 0; i < n->nattributes; i++) {
    const mgopt_onnx_attribute *a = &n->attributes[i];
    mgopt_attr at;
    memset(&at, 0, sizeof at);
    at.name = mgopt__imp_intern_copy(I, a->name);
    if (!at.name) return MGOPT_ERR_NOMEM;
    if (a->ref_attr_name.len) {
      /* a reference to an attribute of the function whose body holds the node */
      if (!I->in_function)
        return mgopt__imp_fail(I, MGOPT_ERR_UNSUPPORTED, "attribute references belong in functions, not graphs");
      if (a->type < 0 || a->type > 0xff)
        return mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "attribute reference of type %d", (int)a->type);
      at.kind = MGOPT_ATTR_BYTES;
      at.tag = MGOPT_ONNX_ATTR_REF | a->type;
      at.n = (int64_t)a->ref_attr_name.len;
      at.u.bytes = (const uint8_t *)a->ref_attr_name.ptr;
      if (mgopt_op_set_attr(op, &at)) return MGOPT_ERR_NOMEM;
      continue;
    }
    switch (a->type) {
      case MGOPT_ONNX_ATTR_FLOAT: at.kind = MGOPT_ATTR_FLOAT; at.u.f = (double)a->f; break;
      case MGOPT_ONNX_ATTR_INT: at.kind = MGOPT_ATTR_INT; at.u.i = a->i; break;
      case MGOPT_ONNX_ATTR_STRING: at.kind = MGOPT_ATTR_STRING; at.u.s = a->s; if (!at.u.s.ptr) at.u.s.ptr = ""; break;
      case MGOPT_ONNX_ATTR_INTS: at.kind = MGOPT_ATTR_INTS; at.n = a->nints; at.u.ints = a->ints; break;
      case MGOPT_ONNX_ATTR_FLOATS: {
        int64_t k;
        at.kind = MGOPT_ATTR_FLOATS;
        at.n = a->nfloats;
        at.u.floats = (double *)mgopt_program_alloc(I->p, sizeof(double) * (size_t)(a->nfloats + 1), 8);
        if (!at.u.floats) return MGOPT_ERR_NOMEM;
        for (k = 0; k < a->nfloats; k++) at.u.floats[k] = (double)a->floats[k];
        break;
      }
      case MGOPT_ONNX_ATTR_STRINGS: at.kind = MGOPT_ATTR_STRINGS; at.n = a->nstrings; at.u.strs = a->strings; break;
      case MGOPT_ONNX_ATTR_TENSOR:
        if (!a->t) return mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "tensor attribute without a tensor");
        at.kind = MGOPT_ATTR_TENSOR;
        at.u.t = mgopt__imp_tensor(I, a->t);
        if (!at.u.t) return I->d ? I->d->status : MGOPT_ERR_CORRUPT;
        break;
      case MGOPT_ONNX_ATTR_GRAPH: {
        mgopt_block *nb = op->blocks[bi++];
        int64_t mark = I->values.nundo, vmark = I->vinfo.nundo;
        mgopt_block *saved = I->b;
        const mgopt_onnx_node *saved_node = I->node;
        if (!a->g) return mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "graph attribute without a graph");
        nb->name = at.name;
        if (I->depth >= MGOPT__IMP_MAX_DEPTH) return mgopt__imp_fail(I, MGOPT_ERR_LIMIT, "subgraphs nested too deeply");
        I->depth++;
        s = mgopt__imp_graph(I, a->g, nb, 0);
        I->depth--;
        I->b = saved;
        I->node = saved_node;
        mgopt__imap_pop(&I->values, mark);
        mgopt__imap_pop(&I->vinfo, vmark);
        if (s) return s;
        continue;
      }
      case MGOPT_ONNX_ATTR_TYPE_PROTO: {
        mgopt_str bytes;
        if (!a->tp) return mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "type attribute without a type");
        if ((s = mgopt__imp_type_bytes(I, a->tp, &bytes)) != MGOPT_OK) return s;
        at.kind = MGOPT_ATTR_BYTES;
        at.tag = MGOPT_ONNX_ATTR_TYPE_PROTO;
        at.n = (int64_t)bytes.len;
        at.u.bytes = (const uint8_t *)bytes.ptr;
        break;
      }
      default:
        return mgopt__imp_fail(I, MGOPT_ERR_UNSUPPORTED, "attribute '%.*s' of type %d is not supported",
                               (int)(a->name.len > 60 ? 60 : a->name.len), a->name.ptr, (int)a->type);
    }
    if (mgopt_op_set_attr(op, &at)) return MGOPT_ERR_NOMEM;
  }
  /* a type rule reads the attributes: not when one is a reference */
  if (e && e->rule && !refs && (s = e->rule->fn(I, op, e->rule)) != MGOPT_OK) return s;
  return mgopt__imp_finish(I, op);
}

/* ---------------------------------------------------------------- graphs */

static mgopt_status mgopt__imp_node(mgopt__imp *I, const mgopt_onnx_node *n) {
  const mgopt__onnx_entry *e = NULL;
  mgopt__imp_fn fn = NULL;
  int64_t i;
  I->node = n;
  for (i = 0; i < n->ninputs; i++)
    if (n->inputs[i].len && !mgopt__imp_in(I, i))
      return mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "input '%.*s' is not defined before it",
                             (int)(n->inputs[i].len > 80 ? 80 : n->inputs[i].len), n->inputs[i].ptr);
  for (i = 0; i < n->noutputs; i++) {
    const char *nm;
    if (!n->outputs[i].len) continue;
    nm = mgopt__imp_intern(I, n->outputs[i]);
    if (!nm) return MGOPT_ERR_NOMEM;
    if (mgopt__imap_get(&I->values, nm))
      return mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "value '%s' is defined twice", nm);
  }
  if (mgopt__imp_default_domain(n->domain) && (e = mgopt__onnx_index_find(&I->ops, n->op_type)) != NULL && e->map)
    fn = e->map->to_ir;
  /* what imports writes back: a node whose canonical op the exporter writes
     only at a later opset than the model's stays opaque */
  if (fn && mgopt__onnx_kind_only_later(e->map->kind, I->opset)) fn = NULL;
  /* a mapping reads the attributes' values: a node with a reference stays opaque */
  for (i = 0; fn && i < n->nattributes; i++)
    if (n->attributes[i].ref_attr_name.len) fn = NULL;
  /* the mappings read the first output's name: a node without it stays opaque
     (but the recurrent ops' mapping, which names a missing Y itself) */
  if (fn && (n->noutputs < 1 || !n->outputs[0].len) &&
      !(n->noutputs >= 2 && (e->map->kind == MGOPT_OP_lstm || e->map->kind == MGOPT_OP_gru || e->map->kind == MGOPT_OP_rnn)))
    fn = NULL;
  if (fn) {
    mgopt_op *last = I->b->last;
    int64_t mark = I->values.nundo;
    int r;
    I->infer_failed = 0;
    r = fn(I, e->map);
    /* a mapping whose canonical op rejects the types (a squeezed dim not known
       to be 1, say: ONNX checks that at run time) is declined, not an error:
       the names it bound are unbound and the node stays opaque */
    if (r < 0 && I->infer_failed && !I->values.oom) {
      mgopt__imap_pop(&I->values, mark);
      if (I->d) mgopt_diag_clear(I->d);
      r = 0;
    }
    if (r < 0) return I->d && I->d->status ? I->d->status : MGOPT_ERR_NOMEM;
    if (r > 0) return MGOPT_OK;
    /* declined: anything it left behind must go before the opaque fallback */
    while (I->b->last != last && I->b->last) {
      mgopt_op *o = I->b->last;
      int32_t k, used = 0;
      for (k = 0; k < o->nouts; k++) used |= o->outs[k]->nuses != 0;
      if (used) break;
      mgopt_op_erase(o);
    }
  }
  return mgopt__imp_opaque(I, e);
}

/* The order to import g's nodes in: the given order when every node's inputs
   are defined before it (the ONNX rule), else a topological order (Kahn's
   algorithm, ties by original position). *order gets n indices (heap memory,

   caller frees); MGOPT_ERR_CORRUPT on a cycle. */
static mgopt_status mgopt__imp_order(mgopt__imp *I, const mgopt_onnx_graph *g, int64_t **order) {
  const mgopt_allocator *al = &I->p->alloc;
  int64_t n = g->nnodes, i, k, *ord, *indeg, *start, *adj, *heap, nheap = 0, nemit = 0, nedges = 0;
  mgopt__imap prod;
  int sorted = 1;
  mgopt_status s = MGOPT_OK;
  size_t words;
  *order = NULL;
  if (n > ((int64_t)1 << 40)) return mgopt__imp_fail(I, MGOPT_ERR_LIMIT, "too many nodes");
  memset(&prod, 0, sizeof prod);
  prod.al = al;
  for (i = 0; i < n; i++)
    for (k = 0; k < g->nodes[i].noutputs; k++)
      if (g->nodes[i].outputs[k].len) mgopt__imap_put(&prod, mgopt__imp_intern(I, g->nodes[i].outputs[k]), (void *)(uintptr_t)(i + 1));
  for (i = 0; i < n && sorted; i++)
    for (k = 0; k < g->nodes[i].ninputs; k++) {
      uintptr_t j;
      if (!g->nodes[i].inputs[k].len) continue;
      j = (uintptr_t)mgopt__imap_get(&prod, mgopt__imp_intern(I, g->nodes[i].inputs[k]));
      if (j && (int64_t)j - 1 >= i) sorted = 0;
    }
  words = (size_t)(n + 1) * 4;
  ord = (int64_t *)mgopt__heap_realloc(al, NULL, 0, sizeof(int64_t) * words);
  if (!ord || prod.oom) {
    mgopt__imap_free(&prod);
    if (ord) mgopt__heap_free(al, ord, sizeof(int64_t) * words);
    return mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory");
  }
  if (sorted) {
    for (i = 0; i < n; i++) ord[i] = i;
    mgopt__imap_free(&prod);
    *order = ord;
    return MGOPT_OK;
  }
  indeg = ord + (n + 1);
  start = indeg + (n + 1);
  heap = start + (n + 1);
  memset(indeg, 0, sizeof(int64_t) * (size_t)(n + 1) * 3);
  /* edges producer -> consumer, in CSR form */
  for (i = 0; i < n; i++)
    for (k = 0; k < g->nodes[i].ninputs; k++) {
      uintptr_t j = g->nodes[i].inputs[k].len ? (uintptr_t)mgopt__imap_get(&prod, mgopt__imp_intern(I, g->nodes[i].inputs[k])) : 0;
      if (j) {
        indeg[i]++;
        start[j - 1]++;
        nedges++;
      }
    }
  adj = (int64_t *)mgopt__heap_realloc(al, NULL, 0, sizeof(int64_t) * (size_t)(nedges + 1));
  if (!adj) {
    s = mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory");
    goto out;
  }
  {
    int64_t acc = 0;
    for (i = 0; i <= n; i++) {
      int64_t c = start[i];
      start[i] = acc;
      acc += c;
    }
  }
  {
    /* fill: a cursor per producer, reusing heap[] as scratch */
    for (i = 0; i <= n; i++) heap[i] = start[i];
    for (i = 0; i < n; i++)
      for (k = 0; k < g->nodes[i].ninputs; k++) {
        uintptr_t j = g->nodes[i].inputs[k].len ? (uintptr_t)mgopt__imap_get(&prod, mgopt__imp_intern(I, g->nodes[i].inputs[k])) : 0;
        if (j) adj[heap[j - 1]++] = i;
      }
  }
  /* binary min-heap of ready nodes */
  for (i = 0; i < n; i++)
    if (indeg[i] == 0) {
      int64_t c = nheap++;
      heap[c] = i;
      while (c > 0 && heap[(c - 1) / 2] > heap[c]) {
        int64_t t = heap[c];
        heap[c] = heap[(c - 1) / 2];
        heap[(c - 1) / 2] = t;
        c = (c - 1) / 2;
      }
    }
  while (nheap > 0) {
    int64_t top = heap[0], c = 0, e;
    heap[0] = heap[--nheap];
    for (;;) {
      int64_t l = 2 * c + 1, r = l + 1, m = c, t;
      if (l < nheap && heap[l] < heap[m]) m = l;
      if (r < nheap && heap[r] < heap[m]) m = r;
      if (m == c) break;
      t = heap[c];
      heap[c] = heap[m];
      heap[m] = t;
      c = m;
    }
    ord[nemit++] = top;
    for (e = start[top]; e < (top + 1 <= n ? start[top + 1] : nedges); e++) {
      int64_t x = adj[e];
      if (--indeg[x] == 0) {
        int64_t q = nheap++;
        heap[q] = x;
        while (q > 0 && heap[(q - 1) / 2] > heap[q]) {
          int64_t t = heap[q];
          heap[q] = heap[(q - 1) / 2];
          heap[(q - 1) / 2] = t;
          q = (q - 1) / 2;
        }
      }
    }
  }
  if (nemit != n) s = mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "the graph has a cycle: %lld of %lld nodes cannot be ordered",
                                      (long long)(n - nemit), (long long)n);
out:
  if (adj) mgopt__heap_free(al, adj, sizeof(int64_t) * (size_t)(nedges + 1));
  mgopt__imap_free(&prod);
  if (s) mgopt__heap_free(al, ord, sizeof(int64_t) * words);
  else *order = ord;
  return s;
}

/* A sparse initializer densified (ONNX Runtime densifies it at load too):
   values [NNZ] at indices (integers: [NNZ] linear, or [NNZ, rank]
   coordinates) of a tensor of shape dims, zeros elsewhere. NULL with the
   diag set when it is malformed. */
static mgopt_tensor *mgopt__imp_sparse(mgopt__imp *I, const mgopt_onnx_sparse_tensor *st) {
  mgopt_tensor *val, *ind, *t;
  int64_t n = 1, nnz, k, d, es;
  int32_t rank;
  uint8_t *dst;
  const uint8_t *src;
  if (!st->values || !st->indices || st->ndims < 0 || st->ndims > MGOPT_MAX_RANK) {
    mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "a sparse initializer lacks values, indices or a valid shape");
    return NULL;
  }
  rank = (int32_t)st->ndims;
  for (d = 0; d < rank; d++)
    if (st->dims[d] < 0 || !mgopt__mul_i64(n, st->dims[d], &n)) {
      mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "sparse initializer '%.*s': bad dims", (int)st->values->name.len,
                      st->values->name.ptr);
      return NULL;
    }
  val = mgopt__imp_tensor(I, st->values);
  ind = val ? mgopt__imp_tensor(I, st->indices) : NULL;
  if (!val || !ind) return NULL;
  nnz = val->numel;
  es = (int64_t)mgopt_dtype_nbytes((mgopt_dtype)val->dtype, 1);
  if (val->rank != 1 || es <= 0 || mgopt_dtype_bits((mgopt_dtype)val->dtype) < 8 ||
      !mgopt_dtype_is_int((mgopt_dtype)ind->dtype) ||
      !((ind->rank == 1 && ind->numel == nnz) || (ind->rank == 2 && ind->shape[0] == nnz && ind->shape[1] == rank))) {
    mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "sparse initializer '%.*s': values and indices disagree",
                    (int)st->values->name.len, st->values->name.ptr);
    return NULL;
  }
  t = mgopt_tensor_new(I->p, (mgopt_dtype)val->dtype, rank, st->dims);
  src = (const uint8_t *)mgopt_tensor_data(I->p, val);
  if (!t || !src || !(dst = (uint8_t *)mgopt_tensor_data_mut(I->p, t))) {
    mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  memset(dst, 0, t->nbytes);
  for (k = 0; k < nnz; k++) {
    int64_t at = 0;
    if (ind->rank == 1) {
      at = mgopt_tensor_get_i64(ind, k);
    } else {
      for (d = 0; d < rank; d++) {
        int64_t c = mgopt_tensor_get_i64(ind, k * rank + d);
        if (c < 0 || c >= st->dims[d]) at = -1;
        if (at >= 0) at = at * st->dims[d] + c;
      }
    }
    if (at < 0 || at >= n) {
      mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "sparse initializer '%.*s': an index is out of range",
                      (int)st->values->name.len, st->values->name.ptr);
      return NULL;
    }
    memcpy(dst + at * es, src + k * es, (size_t)es);
  }
  return t;
}

/* 1 when init (a value of the initializer map) is one of g's sparse initializers. */
static int mgopt__imp_is_sparse(const mgopt_onnx_graph *g, const void *init) {
  uintptr_t a = (uintptr_t)init, lo = (uintptr_t)g->sparse_initializers;
  return g->nsparse_initializers > 0 && a >= lo &&
         a < lo + sizeof(mgopt_onnx_sparse_tensor) * (size_t)g->nsparse_initializers;
}

/* Imports graph g into block b: inputs become block args (for `main`, also
   the inputs with an initializer, whose default export writes back, unless
   the model's constant_inputs makes them the initializers' constants; for a
   function body, typed I->arg_types),
   initializers const ops, nodes ops, outputs block outputs. is_main: 0 a
   subgraph, 1 the model's graph, 2 a function body. */
static mgopt_status mgopt__imp_graph(mgopt__imp *I, const mgopt_onnx_graph *g, mgopt_block *b, int is_main) {
  int64_t i;
  mgopt_status s;
  mgopt__imap inits;
  memset(&inits, 0, sizeof inits);
  inits.al = &I->p->alloc;
  I->b = b;
  I->node = NULL;
  for (i = 0; i < g->nvalue_info; i++) mgopt__imap_put(&I->vinfo, mgopt__imp_intern(I, g->value_info[i].name), g->value_info[i].type);
  for (i = 0; i < g->noutputs; i++) mgopt__imap_put(&I->vinfo, mgopt__imp_intern(I, g->outputs[i].name), g->outputs[i].type);
  for (i = 0; i < g->ninitializers; i++) mgopt__imap_put(&inits, mgopt__imp_intern(I, g->initializers[i].name), &g->initializers[i]);
  for (i = 0; i < g->nsparse_initializers; i++)
    if (g->sparse_initializers[i].values)
      mgopt__imap_put(&inits, mgopt__imp_intern(I, g->sparse_initializers[i].values->name), &g->sparse_initializers[i]);
  if (inits.oom || I->vinfo.oom) {
    mgopt__imap_free(&inits);
    return mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory");
  }
  for (i = 0; i < g->ninputs; i++) {
    const char *nm = mgopt__imp_intern(I, g->inputs[i].name);
    const void *init;
    mgopt_type t;
    mgopt_value *v;
    if (!nm) return MGOPT_ERR_NOMEM;
    init = is_main == 1 ? mgopt__imap_get(&inits, nm) : NULL;
    /* an input with a default: a run-time input (export writes the default
       back), or the initializer's constant with constant_inputs, before IR
       version 4 (every initializer had to be an input: ONNX Runtime takes
       them as constants) and for a sparse default */
    if (init && (I->m->constant_inputs || (I->m->ir_version > 0 && I->m->ir_version < 4) ||
                 mgopt__imp_is_sparse(g, init)))
      continue;
    if (is_main == 2) t = I->arg_types[i];
    else if ((s = mgopt__imp_type(I, g->inputs[i].type, &t)) != MGOPT_OK) goto out;
    if (init && (t.kind != MGOPT_TYPE_TENSOR || t.rank < 0)) { /* undeclared: the default's type */
      const mgopt_onnx_tensor *it = (const mgopt_onnx_tensor *)init;
      if (mgopt_type_make_static(I->p, &t, mgopt_onnx_dtype(it->data_type), (int32_t)it->ndims, it->dims) != MGOPT_OK) {
        s = MGOPT_ERR_NOMEM;
        goto out;
      }
    }
    v = mgopt_block_add_arg(b, nm, &t);
    if (!v) {
      s = MGOPT_ERR_NOMEM;
      goto out;
    }
    mgopt__imap_put(&I->values, nm, v);
  }
  /* initializers, then sparse ones (read dense): const ops either way */
  for (i = 0; i < g->ninitializers + g->nsparse_initializers; i++) {
    const mgopt_onnx_sparse_tensor *st = i < g->ninitializers ? NULL : &g->sparse_initializers[i - g->ninitializers];
    const mgopt_onnx_tensor *ot = st ? st->values : &g->initializers[i];
    const char *nm = ot ? mgopt__imp_intern(I, ot->name) : NULL;
    mgopt_tensor *t;
    mgopt_value *v;
    if (!nm || !nm[0]) {
      s = mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, st ? "a sparse initializer has no name" : "an initializer has no name");
      goto out;
    }
    if (is_main == 1 && !st && (v = (mgopt_value *)mgopt__imap_get(&I->values, nm)) != NULL && !v->def)
      continue; /* the default of a run-time input */
    t = st ? mgopt__imp_sparse(I, st) : mgopt__imp_tensor(I, ot);
    if (!t) {
      s = I->d && I->d->status ? I->d->status : MGOPT_ERR_NOMEM;
      goto out;
    }
    v = mgopt_build_const(I->p, b, NULL, nm, t);
    if (!v) {
      s = MGOPT_ERR_NOMEM;
      goto out;
    }
    mgopt__imap_put(&I->values, nm, v);
  }
  {
    int64_t *order = NULL;
    if ((s = mgopt__imp_order(I, g, &order)) != MGOPT_OK) goto out;
    for (i = 0; i < g->nnodes; i++) {
      if ((s = mgopt__imp_node(I, &g->nodes[order[i]])) != MGOPT_OK) {
        mgopt__imp_locate(I, g, order[i], s);
        break;
      }
      I->b = b;
    }
    mgopt__heap_free(&I->p->alloc, order, sizeof(int64_t) * (size_t)(g->nnodes + 1) * 4);
    if (s) goto out;
  }
  I->node = NULL;
  for (i = 0; i < g->noutputs; i++) {
    const char *nm = mgopt__imp_intern(I, g->outputs[i].name);
    mgopt_value *v = (mgopt_value *)mgopt__imap_get(&I->values, nm);
    if (!v) {
      s = mgopt__imp_fail(I, MGOPT_ERR_CORRUPT, "graph output '%s' is not produced by any node", nm ? nm : "");
      goto out;
    }
    if (mgopt_block_add_output(b, v)) {
      s = MGOPT_ERR_NOMEM;
      goto out;
    }
  }
  s = I->values.oom || I->vinfo.oom ? mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory") : MGOPT_OK;
  if (!s) {
    /* constants nothing reads (an input a mapping turned into an attribute or
       rewrote in another dtype) go, so a round trip reaches a fixed point */
    mgopt_op *op, *prev;
    for (op = b->last; op; op = prev) {
      prev = op->prev;
      if (op->kind == MGOPT_OP_const && op->outs[0]->nuses == 0) mgopt_op_erase(op);
    }
  }
out:
  mgopt__imap_free(&inits);
  return s;
}

MGOPT__PRIVATE mgopt_status mgopt__imp_function_body(mgopt__imp *I, const mgopt_onnx_graph *g, mgopt_block *b) {
  return mgopt__imp_graph(I, g, b, 2);
}

MGOPTDEF mgopt_status mgopt_onnx_import(mgopt_onnx_model *m, mgopt_diag *d) {
  mgopt__imp I;
  mgopt_function *f;
  mgopt_status s;
  int64_t i;
  if (!m || !m->program || !m->graph) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "import: the model has no graph");
  memset(&I, 0, sizeof I);
  I.p = m->program;
  I.m = m;
  I.d = d;
  I.values.al = &I.p->alloc;
  I.vinfo.al = &I.p->alloc;
  I.opset = 1;
  for (i = 0; i < m->nopset_imports; i++)
    if (mgopt__imp_default_domain(m->opset_imports[i].domain)) I.opset = m->opset_imports[i].version;
  if (mgopt_program_function(I.p, "main"))
    return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "import: the program already has a main function");
  f = mgopt_function_new(I.p, "main");
  if (!f) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  mgopt__onnx_index_build(&I.ops, I.opset);
  s = mgopt__imp_prepare_functions(&I) ? mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory") : MGOPT_OK;
  if (!s) s = mgopt__imp_graph(&I, m->graph, f->body, 1);
  if (!s && mgopt__imp_functions(&I)) s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  mgopt__imap_free(&I.values);
  mgopt__imap_free(&I.vinfo);
  mgopt__imap_free(&I.fnames);
  if (s == MGOPT_OK && I.p->status) s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  if (s == MGOPT_OK) I.p->onnx_meta = m;
  if (s == MGOPT_OK && mgopt_onnx_set_target(I.p, 0) != MGOPT_OK) s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  return s;
}

MGOPTDEF mgopt_status mgopt_onnx_load(const void *buf, size_t len, const mgopt_onnx_read_options *opts,
                                     mgopt_program **out, mgopt_diag *d) {
  mgopt_onnx_model *m = NULL;
  mgopt_status s = out ? mgopt_onnx_read(buf, len, opts, &m, d) : mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "out is NULL");
  if (s != MGOPT_OK) return s;
  if ((s = mgopt_onnx_import(m, d)) != MGOPT_OK) {
    mgopt_program_destroy(m->program);
    return s;
  }
  *out = m->program;
  return MGOPT_OK;
}

#ifndef MGOPT_NO_STDIO
MGOPTDEF mgopt_status mgopt_onnx_load_file(const char *path, const mgopt_onnx_read_options *opts, mgopt_program **out,
                                          mgopt_diag *d) {
  mgopt_onnx_model *m = NULL;
  mgopt_status s = out ? mgopt_onnx_read_file(path, opts, &m, d) : mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "out is NULL");
  if (s != MGOPT_OK) return s;
  if ((s = mgopt_onnx_import(m, d)) != MGOPT_OK) {
    mgopt_program_destroy(m->program);
    return s;
  }
  *out = m->program;
  return MGOPT_OK;
}
#endif

/* ---------------------------------------------------------------- importing an opaque op again */

/* The opaque op's attribute as the node's: 0 when it is of a kind the
   mappings do not read (tensors, graphs, encoded bytes). */
static int mgopt__imp_attr_back(mgopt_program *p, const mgopt_attr *a, mgopt_onnx_attribute *o) {
  int64_t k;
  memset(o, 0, sizeof *o);
  o->name.ptr = a->name;
  o->name.len = strlen(a->name);
  switch (a->kind) {
    case MGOPT_ATTR_INT: o->type = MGOPT_ONNX_ATTR_INT; o->i = a->u.i; return 1;
    case MGOPT_ATTR_FLOAT: o->type = MGOPT_ONNX_ATTR_FLOAT; o->f = (float)a->u.f; return 1;
    case MGOPT_ATTR_STRING: o->type = MGOPT_ONNX_ATTR_STRING; o->s = a->u.s; return 1;
    case MGOPT_ATTR_INTS: o->type = MGOPT_ONNX_ATTR_INTS; o->ints = a->u.ints; o->nints = a->n; return 1;
    case MGOPT_ATTR_STRINGS: o->type = MGOPT_ONNX_ATTR_STRINGS; o->strings = a->u.strs; o->nstrings = a->n; return 1;
    case MGOPT_ATTR_FLOATS:
      o->type = MGOPT_ONNX_ATTR_FLOATS;
      o->nfloats = a->n;
      o->floats = (float *)mgopt_program_alloc(p, sizeof(float) * (size_t)(a->n + 1), 8);
      if (!o->floats) return 0;
      for (k = 0; k < a->n; k++) o->floats[k] = (float)a->u.floats[k];
      return 1;
    default: return 0;
  }
}

/* Fills what `cur` does not know from `old` (the opaque output's type, which
   may hold declared value infos); 0 when the two disagree. */
static int mgopt__imp_keep_known(mgopt_program *p, mgopt_value *v, const mgopt_type *old) {
  mgopt_type t;
  int32_t i;
  if (old->kind != MGOPT_TYPE_TENSOR || v->type.kind != MGOPT_TYPE_TENSOR) return old->kind == v->type.kind;
  if (old->dtype != MGOPT_DT_UNKNOWN && v->type.dtype != MGOPT_DT_UNKNOWN && old->dtype != v->type.dtype) return 0;
  if (old->rank < 0) return 1;
  if (v->type.rank >= 0 && v->type.rank != old->rank) return 0;
  if (v->type.rank < 0) {
    uint8_t dt = v->type.dtype;
    if (mgopt__type_copy(p, &v->type, old)) return 0;
    if (dt != MGOPT_DT_UNKNOWN) v->type.dtype = dt;
    return 1;
  }
  if (mgopt__type_copy(p, &t, &v->type)) return 0;
  if (t.dtype == MGOPT_DT_UNKNOWN) t.dtype = old->dtype;
  for (i = 0; i < t.rank; i++) {
    int known_new = t.dims[i].sym || t.dims[i].v >= 0, known_old = old->dims[i].sym || old->dims[i].v >= 0;
    if (!known_new && known_old) t.dims[i] = old->dims[i];
    else if (known_new && known_old && !old->dims[i].sym && !t.dims[i].sym && old->dims[i].v != t.dims[i].v) return 0;
  }
  v->type = t;
  return 1;
}

MGOPTDEF int mgopt_onnx_reimport_op(mgopt_program *p, mgopt_op *op) {
  mgopt__imp I;
  mgopt_onnx_node n;
  const mgopt__onnx_map *row = NULL, *rows;
  const mgopt__onnx_rule *rule = NULL, *rules;
  mgopt_value *made[64];
  mgopt_str ty;
  mgopt_op *last, *o, *prev;
  int64_t opset, i;
  int32_t k, cnt, fam;
  int r = 0, refined = 0;
  if (!p || !op || op->kind != MGOPT_OP_OPAQUE || !op->parent || op->nblocks || op->nouts < 1 || op->nouts > 64 ||
      strncmp(op->type, "onnx::", 6) != 0)
    return 0;
  /* an attribute reference has no value a mapping or a type rule could read */
  for (k = 0; k < op->nattrs; k++)
    if (op->attrs[k].kind == MGOPT_ATTR_BYTES && (op->attrs[k].tag & MGOPT_ONNX_ATTR_REF)) return 0;
  ty.ptr = op->type + 6;
  ty.len = strlen(ty.ptr);
  opset = mgopt__onnx_export_opset(p, 0);
  for (fam = 0; !row && (rows = mgopt__onnx_family(fam, &cnt)) != NULL; fam++)
    for (k = 0; k < cnt && !row; k++)
      if (rows[k].to_ir && mgopt__imp_streq(ty, rows[k].onnx) && mgopt__onnx_in_range(rows[k].since, rows[k].until, opset))
        row = &rows[k];
  rules = mgopt__onnx_rules(&cnt);
  for (k = 0; k < cnt && !rule; k++)
    if (mgopt__imp_streq(ty, rules[k].onnx) && mgopt__onnx_in_range(rules[k].since, rules[k].until, opset)) rule = &rules[k];
  if (!row && !rule) return 0;
  /* the node the op was made from: inputs in0, in1, ... under their slot
     names, outputs under the op's output names, the attributes as they came */
  memset(&n, 0, sizeof n);
  n.op_type = ty;
  if (op->name) {
    n.name.ptr = op->name;
    n.name.len = strlen(op->name);
  }
  for (k = 0; k < op->nslots; k++) {
    const char *s = op->slots[k].name;
    char *end;
    long j;
    if (s[0] != 'i' || s[1] != 'n' || op->slots[k].is_list || op->slots[k].n != 1) return 0;
    j = strtol(s + 2, &end, 10);
    if (*end || j < 0 || j > 1000) return 0;
    if (j + 1 > n.ninputs) n.ninputs = j + 1;
  }
  n.inputs = (mgopt_str *)mgopt_program_alloc(p, sizeof(mgopt_str) * (size_t)(n.ninputs + 1), 8);
  n.outputs = (mgopt_str *)mgopt_program_alloc(p, sizeof(mgopt_str) * (size_t)op->nouts, 8);
  n.attributes = (mgopt_onnx_attribute *)mgopt_program_alloc(p, sizeof(mgopt_onnx_attribute) * (size_t)(op->nattrs + 1), 8);
  if (!n.inputs || !n.outputs || !n.attributes) return -1;
  memset(n.inputs, 0, sizeof(mgopt_str) * (size_t)(n.ninputs + 1));
  memset(&I, 0, sizeof I);
  I.p = p;
  I.m = (mgopt_onnx_model *)p->onnx_meta;
  I.values.al = &p->alloc;
  I.vinfo.al = &p->alloc;
  I.opset = opset;
  I.b = op->parent;
  I.node = &n;
  for (k = 0; k < op->nslots; k++) {
    long j = strtol(op->slots[k].name + 2, NULL, 10);
    n.inputs[j].ptr = op->slots[k].name;
    n.inputs[j].len = strlen(op->slots[k].name);
    mgopt__imap_put(&I.values, op->slots[k].name, op->slots[k].uses[0].value);
  }
  n.noutputs = op->nouts;
  for (k = 0; k < op->nouts; k++)
    if (!(op->outs[k]->flags & MGOPT_VALUE_ABSENT)) {
      n.outputs[k].ptr = op->outs[k]->name;
      n.outputs[k].len = strlen(op->outs[k]->name);
    }
  for (k = 0; k < op->nattrs; k++)
    if (!mgopt__imp_attr_back(p, &op->attrs[k], &n.attributes[n.nattributes++])) row = NULL;
  last = op->parent->last;
  if (row && n.outputs[0].len && !I.values.oom) {
    r = row->to_ir(&I, row);
    if (r < 0) r = 0; /* a mapping that fails here declines: the op stays as it is */
    for (k = 0; r > 0 && k < op->nouts; k++) {
      mgopt_value *v = op->outs[k];
      made[k] = (v->flags & MGOPT_VALUE_ABSENT) ? NULL : (mgopt_value *)mgopt__imap_get(&I.values, v->name);
      if (!made[k]) {
        if (!(v->flags & MGOPT_VALUE_ABSENT) && v->nuses) r = 0;
        continue;
      }
      /* a block output keeps its name; the declared type stays */
      if (made[k] == v || (made[k]->name != v->name && v->nblock_uses) || !mgopt__imp_keep_known(p, made[k], &v->type))
        r = 0;
    }
  }
  if (r > 0) {
    /* the new ops were appended to the block: they go before op, in order */
    o = last ? last->next : op->parent->first;
    while (o) {
      mgopt_op *nx = o->next;
      mgopt_op_move_before(o, op);
      o = nx;
    }
    for (k = 0; k < op->nouts; k++)
      if (made[k]) mgopt_value_replace_all_uses(op->outs[k], made[k]);
    mgopt_op_erase(op);
  } else {
    for (o = op->parent->last; o && o != last; o = prev) {
      prev = o->prev;
      mgopt_op_erase(o);
    }
    if (rule) {
      mgopt_type before[64];
      for (k = 0; k < op->nouts; k++) before[k] = op->outs[k]->type;
      if (rule->fn(&I, op, rule) != MGOPT_OK) r = -1;
      for (k = 0; k < op->nouts; k++)
        if (!mgopt_type_equal(&before[k], &op->outs[k]->type)) refined = 1;
    }
  }
  i = I.values.oom;
  mgopt__imap_free(&I.values);
  mgopt__imap_free(&I.vinfo);
  if (i || p->status) return -1;
  return r < 0 ? -1 : r > 0 ? 1 : refined ? 2 : 0;
}
/* src/onnx/export.c — the ONNX exporter's driver: the IR back to a model tree for the target opset, canonical ops written through the mapping table. */

/* How it works. Function `main` becomes the graph. Graph inputs follow the
   imported model's order (an input that had an initializer is listed again
   with its constant), then any new arguments. A const becomes an
   initializer of the graph it lives in, subgraphs included (ONNX allows
   them there from IR version 4). It is a Constant node when it was one
   and the option keeps those, in a function body (FunctionProto has no
   initializers), and in the subgraphs of a model before IR version 4
   (whose initializers must also be graph inputs, which a subgraph cannot
   list). A constant no node reads is dropped, in every graph. A main
   output the imported model declared with a shape the graph contradicts
   keeps its declared type (mgopt_onnx_output_conflicts).
   Each canonical op goes to the row of the mapping table that writes its
   kind at the target opset (ops.c), which writes the ONNX ops of that
   opset, with parameters that newer opsets take as inputs written as int64
   initializers; opaque ops go back as they came. Every value name is unique
   in the written model: a clash gets a fresh name, except graph inputs and
   outputs. Nodes are accumulated in heap vectors and copied into the
   program's arena at the end of each graph. Model-local functions imported
   as IR functions are written from the IR after the graph, each with names
   unique in its own body (mgopt__exp_function); the others go back as
   they came. */

static mgopt_status mgopt__exp_block_graph(mgopt__exp *E, mgopt_block *b, mgopt_onnx_graph *g, int kind);
static int64_t mgopt__exp_conflicts(mgopt_program *p, mgopt_onnx_output_conflict *out, int64_t cap,
                                    const mgopt_onnx_type **kept);

/* ---------------------------------------------------------------- what can be written */

/* An opaque op goes back as the node it came from: a domain::OpType name,
   operand slots in0, in1, ... and attributes of the kinds ONNX holds. */
static const char *mgopt__exw_opaque(const mgopt_op *op, char *buf, size_t cap) {
  const char *q, *last = NULL;
  int32_t i;
  for (q = op->type; (q = strstr(q, "::")) != NULL; q += 2) last = q;
  if (!last) return "an opaque op needs a domain::OpType name";
  for (i = 0; i < op->nslots; i++) {
    const mgopt_slot *s = &op->slots[i];
    char *end;
    long k;
    if (s->n == 0 && !s->is_list) continue;
    if (strncmp(s->name, "in", 2) != 0 || s->is_list) return "operand slots must be in0, in1, ...";
    k = strtol(s->name + 2, &end, 10);
    if (*end || k < 0 || k >= INT32_MAX) return "operand slots must be in0, in1, ...";
  }
  for (i = 0; i < op->nattrs; i++) {
    const mgopt_attr *a = &op->attrs[i];
    switch ((mgopt_attr_kind)a->kind) {
      case MGOPT_ATTR_BOOL:
      case MGOPT_ATTR_INT:
      case MGOPT_ATTR_FLOAT:
      case MGOPT_ATTR_STRING:
      case MGOPT_ATTR_BOOLS:
      case MGOPT_ATTR_INTS:
      case MGOPT_ATTR_FLOATS:
      case MGOPT_ATTR_STRINGS:
        break;
      case MGOPT_ATTR_TENSOR: {
        const char *why = mgopt__exp_tensor_why_not(a->u.t, buf, cap);
        if (why) return why;
        break;
      }
      case MGOPT_ATTR_BYTES:
        if ((a->tag & MGOPT_ONNX_ATTR_REF) && a->n > 0 && !(a->tag & ~(MGOPT_ONNX_ATTR_REF | 0xff)) &&
            op->parent && op->parent->func && op->parent->func->body->parent_op == NULL &&
            strcmp(op->parent->func->name, "main") != 0)
          break; /* an attribute reference, inside a function */
        if (a->tag != MGOPT_ONNX_ATTR_TYPE_PROTO || a->n <= 0) return "a bytes attribute that is not an ONNX type";
        break;
      default:
        return "an attribute kind ONNX cannot hold";
    }
  }
  return NULL;
}

MGOPT__PRIVATE const char *mgopt__onnx_why_not(mgopt_program *p, const mgopt__onnx_map *const *by_kind, int64_t opset,
                                               const mgopt_op *op, char *buf, size_t cap) {
  const mgopt__onnx_map *m;
  if (op->kind == MGOPT_OP_const) {
    mgopt_tensor *t = mgopt_value_const(op->outs[0]);
    return t ? mgopt__exp_tensor_why_not(t, buf, cap) : "a const without a value";
  }
  if (op->kind == MGOPT_OP_OPAQUE) return mgopt__exw_opaque(op, buf, cap);
  if (op->nblocks) return "control flow";
  m = op->kind > 0 && op->kind < MGOPT_OP__COUNT ? by_kind[op->kind] : NULL;
  if (!m) {
    const mgopt__onnx_map *later = mgopt__onnx_kind_later(op->kind, opset);
    if (!later) return "";
    snprintf(buf, cap, "%s needs opset %d", later->onnx, (int)later->since);
    return buf;
  }
  return m->check ? m->check(p, op, m) : NULL;
}

/* The requested opset, else an imported model's own: the opset its nodes
   were read at (import.c's rule: the last default-domain entry, 1 when
   there is none), so what was read is written back under the same opset
   list; 17 for a program that was not imported. */
MGOPT__PRIVATE int64_t mgopt__onnx_export_opset(const mgopt_program *p, int64_t requested) {
  const mgopt_onnx_model *orig = (const mgopt_onnx_model *)p->onnx_meta;
  int64_t i, opset = 1;
  if (requested > 0) return requested;
  if (!orig) return 17;
  for (i = 0; i < orig->nopset_imports; i++)
    if (mgopt__imp_default_domain(orig->opset_imports[i].domain)) opset = orig->opset_imports[i].version;
  return opset;
}

/* ---------------------------------------------------------------- opaque ops */

/* Files nd in E->orig_nodes under key (an interned name): E itself when
   another node is there already. 0 on OOM. */
static int mgopt__exp_index_node(mgopt__exp *E, mgopt_str key, const mgopt_onnx_node *nd) {
  const char *nm = mgopt_program_intern(E->p, key.ptr, key.len);
  int added;
  mgopt__map_slot *sl = nm ? mgopt__map_get(&E->orig_nodes, mgopt__map_ptr_key(nm), &added) : NULL;
  if (!sl) return 0;
  if (added || sl->v.p != (const void *)nd) sl->v.p = added ? (void *)nd : (void *)E;
  return 1;
}

/* Indexes nodes[0..n) and the nodes of their subgraphs in E->orig_nodes,
   by node name and by first output. */
static void mgopt__exp_index_nodes(mgopt__exp *E, const mgopt_onnx_node *nodes, int64_t n, int depth) {
  int64_t i, k;
  for (i = 0; i < n && depth < 64; i++) {
    const mgopt_onnx_node *nd = &nodes[i];
    int has_graph = 0;
    for (k = 0; k < nd->nattributes; k++)
      if (nd->attributes[k].g) {
        has_graph = 1;
        mgopt__exp_index_nodes(E, nd->attributes[k].g->nodes, nd->attributes[k].g->nnodes, depth + 1);
      }
    if (!has_graph) continue;
    /* on OOM the subgraphs keep the names of their attributes */
    if (nd->name.len && !mgopt__exp_index_node(E, nd->name, nd)) return;
    if (nd->noutputs && nd->outputs[0].len && !mgopt__exp_index_node(E, nd->outputs[0], nd)) return;
  }
}

/* The name of the graph written for block b of op: the name of the
   subgraph it was imported from (found through op's name or its first
   output's, when they name one node of the imported model), else b's name. */
static mgopt_str mgopt__exp_graph_name(mgopt__exp *E, const mgopt_op *op, const mgopt_block *b) {
  const mgopt_onnx_model *orig = (const mgopt_onnx_model *)E->p->onnx_meta;
  const char *keys[2];
  size_t len = strlen(b->name);
  int64_t k, j;
  if (!orig || !orig->graph) return mgopt__exp_s(b->name);
  if (!E->orig_nodes_built) {
    E->orig_nodes_built = 1;
    mgopt__exp_index_nodes(E, orig->graph->nodes, orig->graph->nnodes, 0);
    for (k = 0; k < orig->nfunctions; k++) mgopt__exp_index_nodes(E, orig->functions[k].nodes, orig->functions[k].nnodes, 0);
  }
  keys[0] = op->name;
  keys[1] = op->nouts ? op->outs[0]->name : NULL;
  for (j = 0; j < 2; j++) {
    const mgopt__map_slot *sl = keys[j] && *keys[j] ? mgopt__map_find(&E->orig_nodes, mgopt__map_ptr_key(keys[j])) : NULL;
    const mgopt_onnx_node *nd = sl && sl->v.p != (void *)E ? (const mgopt_onnx_node *)sl->v.p : NULL;
    for (k = 0; nd && k < nd->nattributes; k++) {
      const mgopt_onnx_attribute *a = &nd->attributes[k];
      if (a->g && a->g->name.len && a->name.len == len && memcmp(a->name.ptr, b->name, len) == 0) return a->g->name;
    }
  }
  return mgopt__exp_s(b->name);
}

/* Runs only on an op mgopt__exw_opaque accepted. */
static mgopt_status mgopt__exp_opaque(mgopt__exp *E, const mgopt_op *op) {
  const char *last = NULL, *q, *domain, **ins;
  int64_t nin = 0, i;
  mgopt_onnx_node *n;
  for (q = op->type; (q = strstr(q, "::")) != NULL; q += 2) last = q;
  domain = mgopt_program_intern(E->p, op->type, (size_t)(last - op->type));
  for (i = 0; i < op->nslots; i++) {
    const mgopt_slot *s = &op->slots[i];
    long k;
    if (s->n == 0 && !s->is_list) continue;
    k = strtol(s->name + 2, NULL, 10);
    if (k + 1 > nin) nin = k + 1;
  }
  ins = (const char **)mgopt_program_alloc(E->p, sizeof(char *) * (size_t)(nin + 1), 8);
  if (!domain || !ins) return mgopt__exp_nomem(E);
  for (i = 0; i < nin; i++) ins[i] = "";
  for (i = 0; i < op->nslots; i++) {
    const mgopt_slot *s = &op->slots[i];
    if (s->n == 0 && !s->is_list) continue;
    ins[strtol(s->name + 2, NULL, 10)] = mgopt__exp_vname(s->uses[0].value);
  }
  if (E->overloads.map.n && mgopt__imap_get(&E->overloads, op->type)) {
    /* a call of an overloaded function: domain::Name@overload */
    const char *at = strchr(last + 2, '@');
    const char *nm = mgopt_program_intern(E->p, last + 2, (size_t)(at - (last + 2)));
    n = nm ? mgopt__exp_simple(E, op, nm, ins, nin) : NULL;
    if (n) n->overload = mgopt__exp_s(mgopt_program_intern_cstr(E->p, at + 1));
    if (n && !n->overload.ptr) n = NULL;
  } else
    n = mgopt__exp_simple(E, op, last + 2, ins, nin);
  if (!n) return mgopt__exp_nomem(E);
  n->domain = mgopt__exp_s(strcmp(domain, "onnx") == 0 ? "" : domain);
  for (i = 0; i < op->nattrs; i++) {
    const mgopt_attr *a = &op->attrs[i];
    mgopt_onnx_attribute *oa;
    int64_t j;
    switch ((mgopt_attr_kind)a->kind) {
      case MGOPT_ATTR_BOOL:
      case MGOPT_ATTR_INT:
        if (!mgopt__exp_aint(E, n, a->name, a->u.i)) return mgopt__exp_nomem(E);
        break;
      case MGOPT_ATTR_FLOAT:
        if (!mgopt__exp_afloat(E, n, a->name, a->u.f)) return mgopt__exp_nomem(E);
        break;
      case MGOPT_ATTR_STRING:
        oa = mgopt__exp_attr(E, n, a->name, MGOPT_ONNX_ATTR_STRING);
        if (!oa) return mgopt__exp_nomem(E);
        oa->s = a->u.s;
        oa->has |= MGOPT_ONNX_ATTR_HAS_S;
        break;
      case MGOPT_ATTR_BOOLS:
      case MGOPT_ATTR_INTS:
        if (!mgopt__exp_aints(E, n, a->name, a->u.ints, a->n)) return mgopt__exp_nomem(E);
        break;
      case MGOPT_ATTR_FLOATS:
        oa = mgopt__exp_attr(E, n, a->name, MGOPT_ONNX_ATTR_FLOATS);
        if (!oa || !(oa->floats = (float *)mgopt_program_alloc(E->p, sizeof(float) * (size_t)(a->n + 1), 8)))
          return mgopt__exp_nomem(E);
        for (j = 0; j < a->n; j++) oa->floats[j] = (float)a->u.floats[j];
        oa->nfloats = a->n;
        break;
      case MGOPT_ATTR_STRINGS:
        oa = mgopt__exp_attr(E, n, a->name, MGOPT_ONNX_ATTR_STRINGS);
        if (!oa) return mgopt__exp_nomem(E);
        oa->strings = a->u.strs;
        oa->nstrings = a->n;
        break;
      case MGOPT_ATTR_TENSOR:
        oa = mgopt__exp_attr(E, n, a->name, MGOPT_ONNX_ATTR_TENSOR);
        if (!oa || !(oa->t = (mgopt_onnx_tensor *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_tensor), 8)))
          return mgopt__exp_nomem(E);
        if (mgopt__exp_tensor(E, a->u.t, "", oa->t)) return E->d ? E->d->status : MGOPT_ERR_UNSUPPORTED;
        break;
      case MGOPT_ATTR_BYTES:
        if (a->tag & MGOPT_ONNX_ATTR_REF) {
          oa = mgopt__exp_attr(E, n, a->name, a->tag & 0xff);
          if (!oa) return mgopt__exp_nomem(E);
          oa->ref_attr_name.ptr = (const char *)a->u.bytes;
          oa->ref_attr_name.len = (size_t)a->n;
          break;
        }
        oa = mgopt__exp_attr(E, n, a->name, MGOPT_ONNX_ATTR_TYPE_PROTO);
        if (!oa || !(oa->tp = (mgopt_onnx_type *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_type), 8)))
          return mgopt__exp_nomem(E);
        oa->tp->other.ptr = (const char *)a->u.bytes;
        oa->tp->other.len = (size_t)a->n;
        break;
      default:
        break; /* refused by mgopt__exw_opaque */
    }
  }
  for (i = 0; i < op->nblocks; i++) {
    mgopt_onnx_attribute *oa = mgopt__exp_attr(E, n, op->blocks[i]->name, MGOPT_ONNX_ATTR_GRAPH);
    mgopt__exg *saved = E->g;
    const mgopt_op *saved_op = E->op;
    mgopt_status s;
    if (!oa || !(oa->g = (mgopt_onnx_graph *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_graph), 8)))
      return mgopt__exp_nomem(E);
    if (E->depth >= 64) return mgopt__exp_unsupported(E, op, "subgraphs nested too deeply");
    oa->g->name = mgopt__exp_graph_name(E, op, op->blocks[i]);
    E->depth++;
    s = mgopt__exp_block_graph(E, op->blocks[i], oa->g, 0);
    E->depth--;
    E->g = saved;
    E->op = saved_op;
    if (s) return s;
  }
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- graphs */

/* A graph input or output named `name` of type t; NULL when out of memory or
   when t has no ONNX form (then the message names the value: E->cause). */
static mgopt_onnx_value_info *mgopt__exp_vi(mgopt__exp *E, mgopt__exv *vec, const char *name, const mgopt_type *t) {
  mgopt_onnx_value_info *vi = (mgopt_onnx_value_info *)mgopt__exv_push(E, vec, sizeof(mgopt_onnx_value_info));
  mgopt_status before = E->cause;
  if (!vi) return NULL;
  vi->name = mgopt__exp_s(name);
  /* an unknown element type is written as no type at all (ONNX rejects type 0) */
  if (t->kind == MGOPT_TYPE_TENSOR && t->dtype == MGOPT_DT_UNKNOWN) return vi;
  vi->type = mgopt__exp_type(E, t);
  if (!vi->type && !before && E->cause && E->d) {
    char why[sizeof E->d->msg];
    snprintf(why, sizeof why, "%s", E->d->msg);
    mgopt__exp_fail(E, E->cause, "value '%.100s': %s", name, why);
  }
  return vi->type ? vi : NULL;
}

/* 1 when some reader needs v written: not only linear ops that write a
   transposed copy of it (mgopt__exp_linear_folds_weight) */
static int mgopt__exp_const_read(const mgopt_value *v, int64_t opset) {
  const mgopt_use *u;
  for (u = v->uses; u; u = u->next) {
    mgopt_value *kept = u->op ? mgopt__exp_unary_form(u->op, opset) : NULL;
    if (u->op && mgopt__exp_writes_consts(u->op)) continue; /* written by map_quant.c */
    if (u->op && u->op->kind == MGOPT_OP_constexpr_sparse_to_dense) continue; /* written dense by map_sparse.c */
    if (kept && kept != v) continue; /* the -1 of a Neg, the 1 of a Reciprocal */
    if (u->op && u->op->kind == MGOPT_OP_fill && mgopt_op_operand(u->op, "value") == v) continue; /* an attribute */
    if (mgopt__exp_recurrent_folds(u->op, v)) continue; /* written re-laid by map_recurrent.c */
    if (!u->op || mgopt_op_operand(u->op, "weight") != v || !mgopt__exp_linear_folds_weight(u->op) ||
        mgopt_op_operand(u->op, "x") == v || mgopt_op_operand(u->op, "bias") == v)
      return 1;
  }
  return 0;
}

static int mgopt__exp_listed_input(const mgopt__exg *g, const char *name) {
  int64_t j;
  for (j = 0; j < g->inputs.n; j++)
    if (((const mgopt_onnx_value_info *)g->inputs.data)[j].name.ptr == name) return 1;
  return 0;
}

/* Writes block b as graph og. kind: 0 a subgraph, 1 the model's graph, 2 a function body. */
static mgopt_status mgopt__exp_block_graph(mgopt__exp *E, mgopt_block *b, mgopt_onnx_graph *og, int kind) {
  mgopt__exg g;
  mgopt_op *op;
  int32_t i;
  mgopt_status s = MGOPT_OK;
  const mgopt_onnx_model *orig = (const mgopt_onnx_model *)E->p->onnx_meta;
  const mgopt_onnx_type **kept = NULL;
  int is_main = kind == 1;
  memset(&g, 0, sizeof g);
  g.is_main = is_main;
  g.inits_ok = is_main || (kind == 0 && E->sub_inits);
  E->g = &g;
  for (i = 0; i < b->nargs; i++)
    if (b->args[i]->type.kind == MGOPT_TYPE_STATE)
      return mgopt__exp_fail(E, MGOPT_ERR_UNSUPPORTED, "input '%s' is a state: ONNX has no state type",
                             mgopt__exp_vname(b->args[i]));
  if (is_main && orig && orig->graph) {
    /* the imported input order; inputs that had initializers are listed
       again, and an input that stayed one (mgopt_onnx_read_options'
       constant_inputs) gets its initializer back: its default */
    int64_t k;
    mgopt__imap defaults;
    memset(&defaults, 0, sizeof defaults);
    defaults.al = &E->p->alloc;
    for (k = 0; k < orig->graph->ninitializers; k++) {
      const mgopt_onnx_tensor *it = &orig->graph->initializers[k];
      const char *nm = mgopt_program_intern(E->p, it->name.ptr ? it->name.ptr : "", it->name.len);
      if (nm) mgopt__imap_put(&defaults, nm, (void *)(uintptr_t)it);
    }
    for (k = 0; k < orig->graph->ninputs && !s; k++) {
      const char *nm = mgopt_program_intern(E->p, orig->graph->inputs[k].name.ptr ? orig->graph->inputs[k].name.ptr : "",
                                            orig->graph->inputs[k].name.len);
      mgopt_value *found = NULL;
      for (i = 0; i < b->nargs; i++)
        if (b->args[i]->name == nm) found = b->args[i];
      if (!found)
        for (op = b->first; op; op = op->next)
          if (op->kind == MGOPT_OP_const && op->outs[0]->name == nm) found = op->outs[0];
      if (found && !mgopt__exp_vi(E, &g.inputs, nm, &found->type)) s = mgopt__exp_nomem(E);
      else if (found && !found->def && defaults.map.n) {
        const mgopt_onnx_tensor *it = (const mgopt_onnx_tensor *)mgopt__imap_get(&defaults, nm);
        mgopt_onnx_tensor *ot = it ? (mgopt_onnx_tensor *)mgopt__exv_push(E, &g.inits, sizeof(mgopt_onnx_tensor)) : NULL;
        if (it && !ot) s = mgopt__exp_nomem(E);
        else if (ot) {
          *ot = *it;
          ot->name = mgopt__exp_s(nm);
        }
      }
    }
    if (defaults.oom && !s) s = mgopt__exp_nomem(E);
    mgopt__imap_free(&defaults);
    for (i = 0; i < b->nargs && !s; i++) {
      int64_t j, seen = 0;
      for (j = 0; j < g.inputs.n; j++)
        if (((mgopt_onnx_value_info *)g.inputs.data)[j].name.ptr == b->args[i]->name) seen = 1;
      if (!seen && !mgopt__exp_vi(E, &g.inputs, mgopt__exp_vname(b->args[i]), &b->args[i]->type)) s = mgopt__exp_nomem(E);
    }
  } else {
    for (i = 0; i < b->nargs && !s; i++)
      if (!mgopt__exp_vi(E, &g.inputs, mgopt__exp_vname(b->args[i]), &b->args[i]->type)) s = mgopt__exp_nomem(E);
  }
  for (op = b->first; op && !s; op = op->next) {
    char buf[160];
    const char *why;
    E->op = op;
    /* a constant nothing reads (one import turned into an attribute, one
       export rewrote as int64, or a linear weight written transposed) is
       not written, unless it is listed among the graph's inputs */
    if (op->kind == MGOPT_OP_const && !mgopt__exp_const_read(op->outs[0], E->opset) &&
        !mgopt__exp_listed_input(&g, op->outs[0]->name))
      continue;
    if (mgopt__exp_recurrent_absorbs(op)) continue; /* written by the lstm / gru / rnn it feeds or reads */
    why = mgopt__onnx_why_not(E->p, E->by_kind, E->opset, op, buf, sizeof buf);
    if (why) {
      s = mgopt__exp_unsupported(E, op, *why ? why : NULL);
      break;
    }
    if (op->kind == MGOPT_OP_const) {
      mgopt_tensor *t = mgopt_value_const(op->outs[0]);
      if (g.inits_ok && !((op->flags & MGOPT_OP_ONNX_CONSTANT_NODE) && E->o && E->o->keep_constant_nodes)) {
        mgopt_onnx_tensor *ot = (mgopt_onnx_tensor *)mgopt__exv_push(E, &g.inits, sizeof(mgopt_onnx_tensor));
        if (!ot) s = mgopt__exp_nomem(E);
        else s = mgopt__exp_tensor(E, t, mgopt__exp_vname(op->outs[0]), ot);
      } else {
        mgopt_onnx_node *n = mgopt__exp_simple(E, op, "Constant", NULL, 0);
        mgopt_onnx_attribute *a = n ? mgopt__exp_attr(E, n, "value", MGOPT_ONNX_ATTR_TENSOR) : NULL;
        if (!a || !(a->t = (mgopt_onnx_tensor *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_tensor), 8))) s = mgopt__exp_nomem(E);
        else s = mgopt__exp_tensor(E, t, "", a->t);
      }
      continue;
    }
    if (op->kind == MGOPT_OP_OPAQUE) {
      s = mgopt__exp_opaque(E, op);
    } else {
      int64_t first = g.nodes.n;
      s = E->by_kind[op->kind]->to_onnx(E, op, E->by_kind[op->kind]);
      E->g = &g;
      if (!s && (op->kind == MGOPT_OP_conv || op->kind == MGOPT_OP_linear)) s = mgopt__exp_fused_activation(E, op, first);
    }
    E->g = &g;
  }
  E->op = NULL;
  if (is_main && !s && b->nouts) {
    /* the declared types of the outputs whose declared shape the graph contradicts */
    kept = (const mgopt_onnx_type **)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_type *) * (size_t)b->nouts, 8);
    if (!kept || mgopt__exp_conflicts(E->p, NULL, 0, kept) < 0) s = mgopt__exp_nomem(E);
  }
  for (i = 0; i < b->nouts && !s; i++) {
    mgopt_value *v = b->outs[i]->value;
    const char *nm = mgopt__exp_vname(v);
    if (kept && kept[i]) {
      mgopt_onnx_value_info *vi = (mgopt_onnx_value_info *)mgopt__exv_push(E, &g.outputs, sizeof(mgopt_onnx_value_info));
      if (!vi) s = mgopt__exp_nomem(E);
      else {
        vi->name = mgopt__exp_s(nm);
        vi->type = (mgopt_onnx_type *)kept[i]; /* the imported model's, shared */
      }
      continue;
    }
    if (b == E->fn_body && nm != E->fn_outs[i]) {
      /* a function output keeps its name: the value under it through an Identity */
      mgopt_onnx_node *n = mgopt__exp_node(E, "Identity", "", NULL);
      if (!n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, &nm, 1) ||
          !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &E->fn_outs[i], 1)) {
        s = mgopt__exp_nomem(E);
        break;
      }
      nm = E->fn_outs[i];
    }
    if (!mgopt__exp_vi(E, &g.outputs, nm, &v->type)) s = mgopt__exp_nomem(E);
  }
  if (!s) {
    og->nodes = (mgopt_onnx_node *)mgopt__exv_take(E, &g.nodes, sizeof(mgopt_onnx_node), &og->nnodes);
    og->initializers = (mgopt_onnx_tensor *)mgopt__exv_take(E, &g.inits, sizeof(mgopt_onnx_tensor), &og->ninitializers);
    og->sparse_initializers = (mgopt_onnx_sparse_tensor *)mgopt__exv_take(E, &g.sparse, sizeof(mgopt_onnx_sparse_tensor),
                                                                         &og->nsparse_initializers);
    og->inputs = (mgopt_onnx_value_info *)mgopt__exv_take(E, &g.inputs, sizeof(mgopt_onnx_value_info), &og->ninputs);
    og->outputs = (mgopt_onnx_value_info *)mgopt__exv_take(E, &g.outputs, sizeof(mgopt_onnx_value_info), &og->noutputs);
    if (E->p->status && E->p->status != E->status0) s = mgopt__exp_nomem(E);
  }
  mgopt__exv_free(E, &g.nodes, sizeof(mgopt_onnx_node));
  mgopt__exv_free(E, &g.inits, sizeof(mgopt_onnx_tensor));
  mgopt__exv_free(E, &g.sparse, sizeof(mgopt_onnx_sparse_tensor));
  mgopt__exv_free(E, &g.inputs, sizeof(mgopt_onnx_value_info));
  mgopt__exv_free(E, &g.outputs, sizeof(mgopt_onnx_value_info));
  mgopt__exv_free(E, &g.made, sizeof(mgopt__exg_made));
  mgopt__map_free(&g.by_content);
  return s;
}

/* Renames values whose name is already taken so every name in the model is
   unique. The function's inputs and outputs are claimed first and keep
   their names. */
typedef struct mgopt__exn {
  mgopt__exp *E;
  int oom;
} mgopt__exn;

/* 1 when the use u of v by body's outputs keeps v's name: every output of
   main; an output of a function only when v carries that output's name
   (else the export writes an Identity to it). */
static int mgopt__exn_keeps(const mgopt__exn *N, const mgopt_value *v, const mgopt_use *u, const mgopt_block *body) {
  if (u->op || u->block != body) return 0;
  return body != N->E->fn_body || v->name == N->E->fn_outs[u->index];
}


static int mgopt__exn_claim(mgopt__exn *N, const char *name) {
  int r = mgopt__exp_claim(N->E, name);
  if (r < 0) N->oom = 1;
  return r != 0;
}

static void mgopt__exn_value(mgopt__exn *N, mgopt_value *v, int is_io) {
  if ((v->flags & MGOPT_VALUE_ABSENT) || !v->name || is_io || N->oom) return;
  /* a name taken before: a fresh one (mgopt__exp_fresh claims it) */
  if (!mgopt__exn_claim(N, v->name) && !N->oom && !(v->name = mgopt__exp_fresh(N->E, v->name))) N->oom = 1;
}

static void mgopt__exn_block(mgopt__exn *N, mgopt_block *b, mgopt_block *body, int depth) {
  mgopt_op *op;
  int32_t i, k;
  for (i = 0; i < b->nargs; i++) mgopt__exn_value(N, b->args[i], b == body);
  for (op = b->first; op; op = op->next) {
    for (k = 0; k < op->nblocks && depth < 64; k++) mgopt__exn_block(N, op->blocks[k], body, depth + 1);
    for (i = 0; i < op->nouts; i++) {
      mgopt_value *v = op->outs[i];
      int io = 0;
      const mgopt_use *u;
      for (u = v->uses; u; u = u->next)
        if (mgopt__exn_keeps(N, v, u, body)) io = 1;
      mgopt__exn_value(N, v, io);
    }
  }
}

static mgopt_status mgopt__exp_unique_names(mgopt__exp *E, mgopt_function *f) {
  mgopt__exn N;
  int32_t i;
  memset(&N, 0, sizeof N);
  N.E = E;
  for (i = 0; i < f->body->nargs; i++)
    if (f->body->args[i]->name) mgopt__exn_claim(&N, f->body->args[i]->name);
  for (i = 0; i < f->body->nouts; i++)
    if (f->body == E->fn_body) mgopt__exn_claim(&N, E->fn_outs[i]);
    else if (f->body->outs[i]->value->name) mgopt__exn_claim(&N, f->body->outs[i]->value->name);
  mgopt__exn_block(&N, f->body, f->body, 0);
  return N.oom ? mgopt__exp_nomem(E) : MGOPT_OK;
}

static void mgopt__exp_free_names(mgopt__exp *E) {
  mgopt__map_free(&E->names);
  mgopt__map_free(&E->fresh);
}

/* ---------------------------------------------------------------- unread initializers */

/* A set of names (by content), for dropping initializers no node reads:
   the names in an array, found by the hash of their bytes. */
typedef struct mgopt__exr {
  mgopt_program *p;
  mgopt__map by_hash; /* hash of a name -> 1 + its index in names (a multimap) */
  mgopt_str *names;
  int64_t count, cap;
  int oom;
} mgopt__exr;

static void mgopt__exr_init(mgopt__exr *r, mgopt_program *p) {
  memset(r, 0, sizeof *r);
  r->p = p;
  mgopt__map_init_flags(&r->by_hash, &p->alloc, MGOPT__MAP_HASHED);
}

static void mgopt__exr_free(mgopt__exr *r) {
  mgopt__map_free(&r->by_hash);
  if (r->names) mgopt__heap_free(&r->p->alloc, r->names, (size_t)r->cap * sizeof(mgopt_str));
  r->names = NULL;
}

static uint64_t mgopt__exr_key(mgopt_str s) {
  return mgopt__map_hash_key(mgopt__hash_bytes(s.ptr ? s.ptr : "", s.len, MGOPT__HASH_SEED));
}

static int mgopt__exr_has(const mgopt__exr *r, mgopt_str s) {
  const mgopt__map_slot *sl;
  for (sl = mgopt__map_find(&r->by_hash, mgopt__exr_key(s)); sl; sl = mgopt__map_next(&r->by_hash, sl)) {
    const mgopt_str *t = &r->names[sl->v.i - 1];
    if (t->len == s.len && memcmp(t->ptr, s.ptr, s.len) == 0) return 1;
  }
  return 0;
}

static void mgopt__exr_add(mgopt__exr *r, mgopt_str s) {
  mgopt__map_slot *sl;
  void *arr = r->names;
  int grown;
  if (r->oom || !s.len || mgopt__exr_has(r, s)) return;
  grown = mgopt__grow(&r->p->alloc, &arr, &r->cap, r->count + 1, sizeof(mgopt_str));
  r->names = (mgopt_str *)arr;
  if (!grown || !(sl = mgopt__map_add(&r->by_hash, mgopt__exr_key(s)))) {
    r->oom = 1;
    return;
  }
  r->names[r->count++] = s;
  sl->v.i = r->count;
}

/* Every name a graph (and its subgraphs) reads. */
static void mgopt__exr_graph(mgopt__exr *r, const mgopt_onnx_graph *g, int depth) {
  int64_t i, k;
  if (depth > 256) return;
  for (i = 0; i < g->nnodes; i++) {
    const mgopt_onnx_node *n = &g->nodes[i];
    for (k = 0; k < n->ninputs; k++) mgopt__exr_add(r, n->inputs[k]);
    for (k = 0; k < n->nattributes; k++)
      if (n->attributes[k].g) mgopt__exr_graph(r, n->attributes[k].g, depth + 1);
  }
  for (i = 0; i < g->noutputs; i++) mgopt__exr_add(r, g->outputs[i].name);
}

/* 1 when n is a Constant node whose output nothing in the model reads. */
static int mgopt__exr_unread_constant(const mgopt__exr *r, const mgopt_onnx_node *n) {
  return n->noutputs == 1 && !n->domain.len && n->op_type.len == 8 && memcmp(n->op_type.ptr, "Constant", 8) == 0 &&
         !mgopt__exr_has(r, n->outputs[0]);
}

/* Drops from g and its subgraphs the initializers and Constant nodes whose
   value r does not hold. */
static void mgopt__exr_drop(const mgopt__exr *r, mgopt_onnx_graph *g, int depth) {
  int64_t i, j, k;
  if (depth > 256) return;
  for (i = j = 0; i < g->ninitializers; i++)
    if (mgopt__exr_has(r, g->initializers[i].name)) g->initializers[j++] = g->initializers[i];
  g->ninitializers = j;
  for (i = j = 0; i < g->nnodes; i++) {
    mgopt_onnx_node *n = &g->nodes[i];
    if (mgopt__exr_unread_constant(r, n)) continue;
    for (k = 0; k < n->nattributes; k++)
      if (n->attributes[k].g) mgopt__exr_drop(r, n->attributes[k].g, depth + 1);
    g->nodes[j++] = *n;
  }
  g->nnodes = j;
}

/* Drops the initializers and Constant nodes that no node reads and that are
   not graph inputs or outputs (an int32 constant the export rewrote as
   int64, bounds a mapping wrote again in its own form), in every graph of
   the model. Written names are unique in the model, so one set of the
   names read anywhere serves every graph. */
static mgopt_status mgopt__exp_drop_unread(mgopt_program *p, mgopt_onnx_graph *g) {
  mgopt__exr r;
  int64_t i;
  mgopt__exr_init(&r, p);
  mgopt__exr_graph(&r, g, 0);
  for (i = 0; i < g->ninputs; i++) mgopt__exr_add(&r, g->inputs[i].name);
  if (!r.oom) mgopt__exr_drop(&r, g, 0);
  mgopt__exr_free(&r);
  return r.oom ? MGOPT_ERR_NOMEM : MGOPT_OK;
}

/* ---------------------------------------------------------------- model-local functions */

/* Writes imported function f as dst, src being the FunctionProto it came
   from (functions.c says what is kept): its body as a subgraph whose
   output names are src's. */
static mgopt_status mgopt__exp_function(mgopt__exp *E, const mgopt_onnx_function *src, mgopt_function *f,
                                                mgopt_onnx_function *dst) {
  mgopt_onnx_graph og;
  const char **outs;
  mgopt_status s;
  int64_t i, j;
  mgopt__exr defined;
  *dst = *src;
  if (f->body->nargs != src->ninputs || f->body->nouts != src->noutputs)
    return mgopt__exp_fail(E, MGOPT_ERR_UNSUPPORTED, "function '%s' has %d inputs and %d outputs, its callers %lld and %lld",
                           f->name, (int)f->body->nargs, (int)f->body->nouts, (long long)src->ninputs,
                           (long long)src->noutputs);
  outs = (const char **)mgopt_program_alloc(E->p, sizeof(char *) * (size_t)(src->noutputs + 1), 8);
  if (!outs) return mgopt__exp_nomem(E);
  for (i = 0; i < src->noutputs; i++)
    if (!(outs[i] = mgopt_program_intern(E->p, src->outputs[i].ptr ? src->outputs[i].ptr : "", src->outputs[i].len)))
      return mgopt__exp_nomem(E);
  memset(&og, 0, sizeof og);
  E->fn_outs = outs;
  E->fn_body = f->body;
  s = mgopt__exp_unique_names(E, f);
  if (!s) s = mgopt__exp_block_graph(E, f->body, &og, 2);
  E->fn_outs = NULL;
  E->fn_body = NULL;
  mgopt__exp_free_names(E);
  if (s) return s;
  dst->nodes = og.nodes;
  dst->nnodes = og.nnodes;
  dst->inputs = (mgopt_str *)mgopt_program_alloc(E->p, sizeof(mgopt_str) * (size_t)(og.ninputs + 1), 8);
  dst->outputs = (mgopt_str *)mgopt_program_alloc(E->p, sizeof(mgopt_str) * (size_t)(og.noutputs + 1), 8);
  if (!dst->inputs || !dst->outputs) return mgopt__exp_nomem(E);
  for (i = 0; i < og.ninputs; i++) dst->inputs[i] = og.inputs[i].name;
  for (i = 0; i < og.noutputs; i++) dst->outputs[i] = og.outputs[i].name;
  dst->ninputs = og.ninputs;
  dst->noutputs = og.noutputs;
  /* the default domain at the export opset */
  {
    mgopt_onnx_opset *os =
        (mgopt_onnx_opset *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_opset) * (size_t)(src->nopset_imports + 1), 8);
    int has = 0;
    if (!os) return mgopt__exp_nomem(E);
    for (i = 0; i < src->nopset_imports; i++) {
      os[i] = src->opset_imports[i];
      if (mgopt__imp_default_domain(os[i].domain)) {
        os[i].version = E->opset;
        has = 1;
      }
    }
    dst->opset_imports = os;
    dst->nopset_imports = src->nopset_imports;
    if (!has && og.nnodes) {
      /* the body may hold default-domain nodes the import mapped: say which opset */
      os[i].domain = mgopt__exp_s("");
      os[i].version = E->opset;
      dst->nopset_imports++;
    }
  }
  /* value_info only for names the body still defines */
  if (src->nvalue_info) {
    mgopt_onnx_value_info *vi;
    mgopt__exr_init(&defined, E->p);
    for (i = 0; i < dst->ninputs; i++) mgopt__exr_add(&defined, dst->inputs[i]);
    for (i = 0; i < dst->nnodes; i++)
      for (j = 0; j < dst->nodes[i].noutputs; j++) mgopt__exr_add(&defined, dst->nodes[i].outputs[j]);
    vi = (mgopt_onnx_value_info *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_value_info) * (size_t)src->nvalue_info, 8);
    if (!vi || defined.oom) s = mgopt__exp_nomem(E);
    for (i = j = 0; !s && i < src->nvalue_info; i++)
      if (mgopt__exr_has(&defined, src->value_info[i].name)) vi[j++] = src->value_info[i];
    dst->value_info = vi;
    dst->nvalue_info = j;
    mgopt__exr_free(&defined);
  }
  return s;
}

/* Which of the model's functions (op types calls[0..n)) something calls. */
typedef struct mgopt__exf_called {
  const char **calls;
  int64_t n;
  uint8_t *called;
} mgopt__exf_called;

static void mgopt__exf_mark(mgopt__exf_called *c, const char *type) {
  int64_t k;
  for (k = 0; k < c->n; k++)
    if (c->calls[k] && strcmp(c->calls[k], type) == 0) c->called[k] = 1;
}

static int mgopt__exf_mark_op(mgopt_op *op, void *ud) {
  if (op->kind == MGOPT_OP_OPAQUE && op->type && strstr(op->type, "::")) mgopt__exf_mark((mgopt__exf_called *)ud, op->type);
  return 0;
}

/* The calls of ONNX nodes (their subgraphs included, at most 64 deep). */
static void mgopt__exf_mark_nodes(mgopt__exf_called *c, const mgopt_onnx_node *nodes, int64_t n, int depth) {
  char buf[400];
  int64_t i, a, g;
  for (i = 0; i < n && depth < 64; i++) {
    mgopt__onnx_node_type(buf, sizeof buf, nodes[i].domain, nodes[i].op_type, nodes[i].overload);
    mgopt__exf_mark(c, buf);
    for (a = 0; a < nodes[i].nattributes; a++) {
      const mgopt_onnx_attribute *at = &nodes[i].attributes[a];
      if (at->g) mgopt__exf_mark_nodes(c, at->g->nodes, at->g->nnodes, depth + 1);
      for (g = 0; g < at->ngraphs; g++) mgopt__exf_mark_nodes(c, at->graphs[g].nodes, at->graphs[g].nnodes, depth + 1);
    }
  }
}

/* The model's functions: each imported one written from the IR, the others
   as they came; but an imported function the program no longer has (every
   call of it fused or inlined) is not written when nothing written calls
   it. Also fills E->overloads (before anything is written). */
static mgopt_status mgopt__exp_functions(mgopt__exp *E, const mgopt_onnx_model *orig, mgopt_onnx_model *m, int write) {
  const char **calls, **names;
  int64_t k;
  mgopt_status s = MGOPT_OK;
  if (!orig || !orig->nfunctions) return MGOPT_OK;
  calls = (const char **)mgopt_program_alloc(E->p, sizeof(char *) * (size_t)orig->nfunctions, 8);
  names = (const char **)mgopt_program_alloc(E->p, sizeof(char *) * (size_t)orig->nfunctions, 8);
  if (!calls || !names || mgopt__onnx_function_names(E->p, orig, calls, names)) return mgopt__exp_nomem(E);
  if (!write) {
    E->overloads.al = &E->p->alloc;
    for (k = 0; k < orig->nfunctions; k++)
      if (orig->functions[k].overload.len) mgopt__imap_put(&E->overloads, calls[k], (void *)(uintptr_t)1);
    return E->overloads.oom ? mgopt__exp_nomem(E) : MGOPT_OK;
  }
  m->functions = (mgopt_onnx_function *)mgopt_program_alloc(E->p, sizeof(mgopt_onnx_function) * (size_t)orig->nfunctions, 8);
  if (!m->functions) return mgopt__exp_nomem(E);
  m->nfunctions = 0;
  {
    /* called: by an op of the program, or by a function written as it came
       (those found until no more are) */
    mgopt__exf_called c;
    uint8_t *verbatim = (uint8_t *)mgopt_program_alloc(E->p, (size_t)orig->nfunctions * 2, 1);
    int more = 1;
    if (!verbatim) return mgopt__exp_nomem(E);
    memset(verbatim, 0, (size_t)orig->nfunctions * 2);
    c.calls = calls;
    c.n = orig->nfunctions;
    c.called = verbatim + orig->nfunctions;
    mgopt_program_walk(E->p, mgopt__exf_mark_op, &c);
    while (more)
      for (more = 0, k = 0; k < orig->nfunctions; k++)
        if (!verbatim[k] && !(names[k] && mgopt_program_function(E->p, names[k])) && (!names[k] || c.called[k])) {
          verbatim[k] = 1;
          more = 1;
          mgopt__exf_mark_nodes(&c, orig->functions[k].nodes, orig->functions[k].nnodes, 0);
        }
    for (k = 0; k < orig->nfunctions && !s; k++) {
      mgopt_function *f = names[k] ? mgopt_program_function(E->p, names[k]) : NULL;
      if (f) s = mgopt__exp_function(E, &orig->functions[k], f, &m->functions[m->nfunctions++]);
      else if (verbatim[k]) m->functions[m->nfunctions++] = orig->functions[k];
    }
  }
  return s;
}

/* ---------------------------------------------------------------- declared output shapes */

/* 1 when the declared type dt and the computed type t disagree about the
   shape: both have a rank and the ranks differ, or a dim both give as a
   number has two sizes. Types of another dtype are not compared (a pass
   that changes an output's dtype means to). */
static int mgopt__exp_shape_contradicts(const mgopt_type *dt, const mgopt_type *t) {
  int32_t i;
  if (dt->kind != MGOPT_TYPE_TENSOR || t->kind != MGOPT_TYPE_TENSOR || dt->dtype != t->dtype || dt->rank < 0 ||
      t->rank < 0)
    return 0;
  if (dt->rank != t->rank) return 1;
  for (i = 0; i < t->rank; i++)
    if (mgopt_dim_is_static(dt->dims[i]) && mgopt_dim_is_static(t->dims[i]) && dt->dims[i].v != t->dims[i].v) return 1;
  return 0;
}

/* mgopt_onnx_output_conflicts; kept (NULL, or one entry per output of
   main) receives the declared ONNX type of each output that contradicts
   the graph, NULL for the others. */
static int64_t mgopt__exp_conflicts(mgopt_program *p, mgopt_onnx_output_conflict *out, int64_t cap,
                                    const mgopt_onnx_type **kept) {
  const mgopt_onnx_model *orig = (const mgopt_onnx_model *)p->onnx_meta;
  mgopt_function *f = mgopt_program_function(p, "main");
  mgopt__imap declared;
  mgopt__imp I;
  int64_t n = 0, k;
  int32_t i;
  if (kept && f)
    for (i = 0; i < f->body->nouts; i++) kept[i] = NULL;
  if (!f || !orig || !orig->graph || !orig->graph->noutputs) return 0;
  memset(&declared, 0, sizeof declared);
  declared.al = &p->alloc;
  for (k = 0; k < orig->graph->noutputs; k++) {
    const mgopt_onnx_value_info *vi = &orig->graph->outputs[k];
    const char *nm = mgopt_program_intern(p, vi->name.ptr ? vi->name.ptr : "", vi->name.len);
    if (!nm) declared.oom = 1;
    if (vi->type && vi->type->tensor_type && vi->type->tensor_type->shape) mgopt__imap_put(&declared, nm, (void *)vi);
  }
  memset(&I, 0, sizeof I);
  I.p = p; /* for mgopt__imp_type only; I.d NULL: no message */
  for (i = 0; i < f->body->nouts && !declared.oom; i++) {
    mgopt_value *v = f->body->outs[i]->value;
    const mgopt_onnx_value_info *vi = v->name ? (const mgopt_onnx_value_info *)mgopt__imap_get(&declared, v->name) : NULL;
    mgopt_type dt;
    mgopt_status s = vi ? mgopt__imp_type(&I, vi->type, &dt) : MGOPT_ERR_LIMIT;
    if (s == MGOPT_ERR_NOMEM) declared.oom = 1;
    if (s || !mgopt__exp_shape_contradicts(&dt, &v->type)) continue;
    if (kept) kept[i] = vi->type;
    if (n < cap) {
      out[n].name = v->name;
      out[n].declared = dt;
      out[n].computed = v->type;
    }
    n++;
  }
  k = declared.oom || p->status ? -1 : n;
  mgopt__imap_free(&declared);
  return k;
}

MGOPTDEF int64_t mgopt_onnx_output_conflicts(mgopt_program *p, mgopt_onnx_output_conflict *out, int64_t cap) {
  if (!p || (cap > 0 && !out)) return 0;
  return mgopt__exp_conflicts(p, out, cap < 0 ? 0 : cap, NULL);
}

/* ---------------------------------------------------------------- the program's target */

/* The exporter at one opset as a program's target; lives in the program's arena. */
typedef struct mgopt__onnx_target {
  mgopt_program *p;
  int64_t opset;
  const mgopt__onnx_map *by_kind[MGOPT_OP__COUNT];
} mgopt__onnx_target;

static int mgopt__onnx_target_accepts(const mgopt_program *p, const mgopt_op *op, void *ud) {
  const mgopt__onnx_target *t = (const mgopt__onnx_target *)ud;
  char buf[160];
  MGOPT__UNUSED(p);
  return mgopt__onnx_why_not(t->p, t->by_kind, t->opset, op, buf, sizeof buf) == NULL;
}

MGOPTDEF mgopt_status mgopt_onnx_set_target(mgopt_program *p, int64_t opset) {
  mgopt__onnx_target *t;
  if (!p) return MGOPT_ERR_INVALID_ARG;
  t = (mgopt__onnx_target *)mgopt_program_alloc(p, sizeof *t, 8);
  if (!t) return MGOPT_ERR_NOMEM;
  t->p = p;
  t->opset = mgopt__onnx_export_opset(p, opset);
  mgopt__onnx_kind_index(t->by_kind, t->opset);
  mgopt_program_set_target(p, mgopt__onnx_target_accepts, t);
  return MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_onnx_export(mgopt_program *p, const mgopt_onnx_export_options *opts,
                                        mgopt_onnx_model **out, mgopt_diag *d) {
  mgopt__exp E;
  mgopt_function *f = p ? mgopt_program_function(p, "main") : NULL;
  const mgopt_onnx_model *orig;
  mgopt_onnx_model *m;
  mgopt_status s;
  int64_t i;
  if (!f) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "export: the program has no main function");
  orig = (const mgopt_onnx_model *)p->onnx_meta;
  memset(&E, 0, sizeof E);
  E.p = p;
  mgopt__map_init(&E.names, &p->alloc);
  mgopt__map_init(&E.fresh, &p->alloc);
  mgopt__map_init(&E.orig_nodes, &p->alloc);
  E.o = opts;
  E.d = d;
  E.opset = mgopt__onnx_export_opset(p, opts ? opts->opset : 0);
  E.status0 = p->status;
  m = (mgopt_onnx_model *)mgopt_program_alloc(p, sizeof *m, 8);
  if (!m) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  m->program = p;
  if (orig) {
    m->ir_version = orig->ir_version;
    m->domain = orig->domain;
    m->model_version = orig->model_version;
    m->doc_string = orig->doc_string;
    m->metadata_props = orig->metadata_props;
    m->nmetadata_props = orig->nmetadata_props;
    m->training_info = orig->training_info;
    m->ntraining_info = orig->ntraining_info;
    m->functions = orig->functions;
    m->nfunctions = orig->nfunctions;
    m->opset_imports = orig->opset_imports;
    m->nopset_imports = orig->nopset_imports;
    m->dir = orig->dir;
  }
  mgopt__onnx_kind_index(E.by_kind, E.opset);
  if (!orig || (opts && opts->opset > 0)) {
    /* a fresh opset list: the default domain at the target version, others kept */
    int64_t n = orig ? orig->nopset_imports : 0, j = 0;
    mgopt_onnx_opset *os = (mgopt_onnx_opset *)mgopt_program_alloc(p, sizeof(mgopt_onnx_opset) * (size_t)(n + 1), 8);
    if (!os) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
    os[j].domain = mgopt__exp_s("");
    os[j++].version = E.opset;
    for (i = 0; i < n; i++)
      if (orig->opset_imports[i].domain.len && !(orig->opset_imports[i].domain.len == 7 &&
                                                  memcmp(orig->opset_imports[i].domain.ptr, "ai.onnx", 7) == 0))
        os[j++] = orig->opset_imports[i];
    m->opset_imports = os;
    m->nopset_imports = j;
  }
  if (!m->ir_version || E.opset > 18) m->ir_version = m->ir_version > 9 ? m->ir_version : 9;
  if (E.opset <= 18 && !orig) m->ir_version = 8;
  E.sub_inits = m->ir_version >= 4;
  m->producer_name = mgopt__exp_s("mgopt");
  m->producer_version = mgopt__exp_s(MGOPT_VERSION_STRING);
  m->graph = (mgopt_onnx_graph *)mgopt_program_alloc(p, sizeof *m->graph, 8);
  if (!m->graph) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  m->graph->name = orig && orig->graph ? orig->graph->name : mgopt__exp_s("main");
  if (orig && orig->graph) {
    m->graph->doc_string = orig->graph->doc_string;
    m->graph->metadata_props = orig->graph->metadata_props;
    m->graph->nmetadata_props = orig->graph->nmetadata_props;
  }
  s = mgopt__exp_functions(&E, orig, m, 0);
  if (!s) s = mgopt__exp_unique_names(&E, f);
  if (!s) s = mgopt__exp_block_graph(&E, f->body, m->graph, 1);
  mgopt__exp_free_names(&E);
  if (!s) s = mgopt__exp_functions(&E, orig, m, 1);
  mgopt__imap_free(&E.overloads);
  mgopt__map_free(&E.orig_nodes);
  if (!s && mgopt__exp_drop_unread(p, m->graph)) s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  if (s) return s;
  if (m->ir_version > 0 && m->ir_version < 4) {
    /* before IR version 4 every initializer must also be a graph input */
    mgopt_onnx_graph *g = m->graph;
    int64_t extra = 0, j, k;
    mgopt_onnx_value_info *vi;
    mgopt__exr listed;
    mgopt__exr_init(&listed, p);
    for (j = 0; j < g->ninputs; j++) mgopt__exr_add(&listed, g->inputs[j].name);
    for (j = 0; j < g->ninitializers; j++)
      if (!mgopt__exr_has(&listed, g->initializers[j].name)) extra++;
    vi = listed.oom ? NULL
                    : (mgopt_onnx_value_info *)mgopt_program_alloc(
                          p, sizeof(mgopt_onnx_value_info) * (size_t)(g->ninputs + extra + 1), 8);
    if (!vi) {
      mgopt__exr_free(&listed);
      return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
    }
    if (g->ninputs) memcpy(vi, g->inputs, sizeof(mgopt_onnx_value_info) * (size_t)g->ninputs);
    for (j = 0, k = g->ninputs; j < g->ninitializers && !s; j++) {
      const mgopt_onnx_tensor *t = &g->initializers[j];
      mgopt_type ty;
      if (mgopt__exr_has(&listed, t->name)) continue;
      mgopt__exr_add(&listed, t->name); /* listed once even if two initializers share a name */
      if (mgopt_type_make_static(p, &ty, mgopt_onnx_dtype(t->data_type), (int32_t)t->ndims, t->dims) || listed.oom) {
        s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
        break;
      }
      if (!(vi[k].type = mgopt__exp_type(&E, &ty))) {
        s = mgopt__exp_nomem(&E);
        break;
      }
      vi[k].name = t->name;
      k++;
    }
    mgopt__exr_free(&listed);
    if (s) return s;
    g->inputs = vi;
    g->ninputs = k;
  }
  *out = m;
  return MGOPT_OK;
}
#endif /* MGOPT__IMPLEMENTATION_DONE */
#endif /* MGOPT_IMPLEMENTATION */
/*
------------------------------------------------------------------------------
This software is available under 2 licenses -- choose whichever you prefer.
------------------------------------------------------------------------------
ALTERNATIVE A - MIT License
Copyright (c) 2026 the mgopt authors
Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:
The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
ALTERNATIVE B - Public Domain (www.unlicense.org)
This is free and unencumbered software released into the public domain.
Anyone is free to copy, modify, publish, use, compile, sell, or distribute this
software, either in source code form or as a compiled binary, for any purpose,
commercial or non-commercial, and by any means.
In jurisdictions that recognize copyright laws, the author or authors of this
software dedicate any and all copyright interest in the software to the public
domain. We make this dedication in the hope that it will be of use to
software's heirs and successors. We intend this dedication to be an overt act of
relinquishment in perpetuity of all present and future rights to this software
under copyright law.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN
ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION
WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
------------------------------------------------------------------------------
*/
