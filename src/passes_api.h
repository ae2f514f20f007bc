/* src/passes_api.h — public declarations of mgopt_passes.h: built-in passes, pipelines, folding. */
#ifndef MGOPT_PASSES_H_INCLUDED
#define MGOPT_PASSES_H_INCLUDED
#include "api.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The registry of every built-in pass and named pipeline, with the built-in
   folding kernels. A static table: never NULL, never freed. */
MGOPTDEF const mgopt_registry *mgopt_builtin_registry(void);

/* Options for mgopt_fold_op, passed as its `ud` (NULL = every default, as
   a zeroed struct). Folding never makes an output of more than
   MGOPT_FOLD_MAX_ELEMENTS elements unless asked (a negative max_elements):
   a constant of a few bytes (ConstantOfShape of [1 << 30]) must not become
   gigabytes, in memory or in the model. Nor does it grow the model: a fold
   whose outputs take more bytes than it frees (the operand constants whose
   every reader is the op) plus MGOPT_FOLD_MAX_GROWTH_BYTES is left to be
   computed at run time unless asked (a negative max_growth_bytes), whatever
   the op: a fill, a tile, a broadcast, a cast to a wider dtype, and a
   transpose, reshape or slice of a constant another op also reads (a table
   that an embedding Gather and, transposed, the logits' MatMul share). A
   chain of folds that grows and shrinks again is judged whole (see
   src/kernels/fold.c). Constexpr ops, whose point is to expand, are not
   limited. */
#define MGOPT_FOLD_MAX_ELEMENTS ((int64_t)1 << 28) /* the largest .mil tensor literal too */
#define MGOPT_FOLD_MAX_GROWTH_BYTES ((int64_t)1024)
typedef struct mgopt_fold_options {
  int64_t max_elements;      /* do not fold when an output has more elements (0 = the default above, < 0 = no limit) */
  int64_t max_growth_bytes;  /* do not fold when the outputs take more bytes than this beyond what the fold frees
                                (0 = MGOPT_FOLD_MAX_GROWTH_BYTES, < 0 = no limit) */
} mgopt_fold_options;

/* The built-in folding function (see mgopt_fold_fn): evaluates an op whose
   operands are all constant with the kernel table, following MIL semantics.
   On 1, out[0..op->nouts) are new tensors owned by p. Returns 0 (out set to
   NULL) when it cannot fold: no kernel, an operand not constant, an
   unsupported dtype, invalid parameters or indices, integer division by zero,
   a stored output type that disagrees with the computed one, an output
   over opts->max_elements, or outputs over the growth budget above. -1 when
   memory ran out. ud: a mgopt_fold_options or NULL. */
MGOPTDEF int mgopt_fold_op(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud);

/* ---------------------------------------------------------------- evaluation

   mgopt_eval runs a function of a program on input tensors with the folding
   kernels (the same code const_elimination folds with), following MIL
   semantics. It is a reference evaluator: exact and checked rather than
   fast. Intermediate tensors live on the program's allocator (never its
   arena), each freed after its last read, so a program can be evaluated any
   number of times in bounded memory; constants are read in place. The
   numeric contract of each op family is stated in src/kernels/eval.c. */

typedef struct mgopt_eval_options {      /* zeroed = every default */
  int64_t max_elements;                  /* per tensor, 0 = no limit */
  int64_t max_loop_iterations;           /* per while_loop (or onnx::Loop) run, 0 = 1 << 24 */
  /* Called for an op without a kernel (an opaque op, an op whose kernel is
     not written): operands[0..noperands) are the op's operands slot by slot,
     list elements in order (an absent optional slot contributes nothing).
     It fills out[0..op->nouts) with tensors from mgopt_eval_tensor_new (the
     evaluator takes them over) and returns MGOPT_OK, or an error with d set.
     NULL: such an op is the error "cannot evaluate". */
  mgopt_status (*op_fn)(void *ud, mgopt_program *p, const mgopt_op *op, mgopt_tensor *const *operands,
                        int32_t noperands, mgopt_tensor **out, mgopt_diag *d);
  void *op_ud;
} mgopt_eval_options;

/* A tensor for mgopt_eval (an input, or an op_fn output): zero-filled,
   64-byte aligned, on p's allocator outside its arena. Free it with
   mgopt_eval_tensor_free. NULL on OOM or an invalid shape (rank < 0 or above
   MGOPT_MAX_RANK, a negative dim, a size overflow). */
MGOPTDEF mgopt_tensor *mgopt_eval_tensor_new(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                             const int64_t *shape);
/* Frees a tensor made by mgopt_eval_tensor_new or returned by mgopt_eval.
   NULL is ignored. Never pass another tensor (an arena one). */
MGOPTDEF void mgopt_eval_tensor_free(mgopt_program *p, mgopt_tensor *t);

/* 1 if mgopt_eval computes ops of this kind itself (a kernel, const, cond,
   while_loop); 0 for MGOPT_OP_OPAQUE and kinds without a kernel, which go to
   op_fn. */
MGOPTDEF int mgopt_eval_has_kernel(int32_t kind);

/* Evaluates function `fn` (NULL = "main", or the only function) of p on
   inputs[0..ninputs), given in the function's input order: each input's
   dtype, rank and static dims must match its declaration (symbolic dims take
   any size). The program is verified first (a bad program is an error,
   never a crash) and not changed, except that misaligned borrowed constants
   may be copied into its arena once.
   On MGOPT_OK outputs[0..noutputs) (noutputs = the function's output count)
   are new tensors the caller frees with mgopt_eval_tensor_free, one per
   output even when two outputs are the same value. On error no output is
   set and d names the op (name, type, line:col for a program read from .mil)
   and why: MGOPT_ERR_INVALID_ARG (bad arguments or inputs),
   MGOPT_ERR_VERIFY, MGOPT_ERR_UNSUPPORTED (no kernel for an op, a kernel
   that cannot evaluate these operands, a run-time parameter),
   MGOPT_ERR_CORRUPT (an index out of range, a shape that disagrees with the
   declared type), MGOPT_ERR_LIMIT (max_elements, max_loop_iterations),
   MGOPT_ERR_NOMEM, or op_fn's status. opts may be NULL (every default). */
MGOPTDEF mgopt_status mgopt_eval(mgopt_program *p, const char *fn, mgopt_tensor *const *inputs, int32_t ninputs,
                                 mgopt_tensor **outputs, int32_t noutputs, const mgopt_eval_options *opts,
                                 mgopt_diag *d);

/* ---------------------------------------------------------------- opaque ONNX ops

   mgopt_onnx_eval_op is an op_fn for mgopt_eval that evaluates the ops an
   ONNX import leaves opaque (`onnx::X`, the default domain): ops without a
   MIL op by a kernel of its own (LogSoftmax and Softmax/Hardmax of every
   opset, NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, ...), and every
   op the importer maps to canonical ops but left opaque because a parameter
   was not a constant (a Reshape's shape, a CumSum's axis, Slice's starts...)
   by running the importer's mapping row on the run-time operands and
   evaluating what it builds with the canonical kernels; and ONNX's
   sequence ops (SequenceEmpty, SequenceConstruct, SequenceInsert,
   SequenceErase, SequenceAt, SequenceLength, ConcatFromSequence,
   SplitToSequence) on the evaluator's run-time sequences (a sequence is
   never an output of mgopt_eval: the tensors read from it are). onnx::If
   and onnx::Loop run in mgopt_eval itself. The numeric
   contracts are stated in src/kernels/onnx_ops.c, onnx_nn.c, onnx_quant.c
   and onnx_rnn.c. Typical use: eval_options.op_fn = mgopt_onnx_eval_op;
   eval_options.op_ud = NULL (or a mgopt_onnx_eval_options). */

typedef struct mgopt_onnx_eval_options { /* zeroed = every default */
  int64_t max_elements;                  /* per output, 0 = no limit */
} mgopt_onnx_eval_options;

/* Evaluates opaque op `op` of p (see mgopt_eval_options.op_fn for operands
   and out). ud: a mgopt_onnx_eval_options or NULL. MGOPT_ERR_UNSUPPORTED
   with the message "cannot evaluate onnx::X: why" for an op it does not
   cover (another domain, no kernel and no mapping row at the program's
   opset, a mapping that declines these operands, a random op);
   MGOPT_ERR_INVALID_ARG / MGOPT_ERR_CORRUPT for operands ONNX rejects (an
   index out of range), MGOPT_ERR_LIMIT, MGOPT_ERR_NOMEM. On error no output
   is left set. The program's opset is the imported model's (17 for a
   program from elsewhere). */
MGOPTDEF mgopt_status mgopt_onnx_eval_op(void *ud, mgopt_program *p, const mgopt_op *op, mgopt_tensor *const *operands,
                                         int32_t noperands, mgopt_tensor **out, mgopt_diag *d);

/* 1 when mgopt_onnx_eval_op (or mgopt_eval, for If and Loop) has a way to
   evaluate op: an `onnx::X` op with a kernel, a sequence op, or a mapping
   row for X at p's opset (a mapping may still decline the run-time
   operands). 0 otherwise, NULL included. */
MGOPTDEF int mgopt_onnx_eval_covers(mgopt_program *p, const mgopt_op *op);

/* ---------------------------------------------------------------- weight compression configuration

   Which options each weight gets from a compression pass
   (linear_quantize_weights, palettize_weights, prune_weights), like
   coremltools' OptimizationConfig. Give it to mgopt_pipeline_run through
   mgopt_pipeline_options.compress_config; the tool reads it from a text
   file (mgopt --compress-config FILE, see the README).

   A weight is a const the pass may compress (the pass's header says which).
   Its rule, among the rules whose `pass` names the running pass (or is NULL
   or ""), the last one that matches winning:
     1. an OP_NAME rule whose key is the const's name;
     2. else, for each op reading the const (through constexpr_* ops when it
        feeds only those: the ops reading the first one), an OP_NAME rule
        for that op's name, else an OP_TYPE rule for its type ("conv",
        "linear", "matmul", "onnx::Gemm", ...), else the GLOBAL rule; every
        reader must come to the same options text, else the weight is left
        alone (a shared weight whose readers disagree).
   The weight's options are then the pass's options from the pipeline string
   (or their defaults) with the rule's options laid over them. A rule whose
   options are NULL or "skip" leaves the weight alone. When no rule names
   the pass at all the pipeline string's options are the global
   configuration; when some do, a weight no rule matches is left alone (as
   an OptimizationConfig without a global config). */
typedef enum mgopt_compress_scope {
  MGOPT_COMPRESS_GLOBAL = 0, /* every weight (key unused) */
  MGOPT_COMPRESS_OP_TYPE,    /* weights read by ops of type key */
  MGOPT_COMPRESS_OP_NAME     /* the const named key, or the weights read by the op named key */
} mgopt_compress_scope;

typedef struct mgopt_compress_rule {
  const char *pass;    /* short pass name ("linear_quantize_weights"); NULL or "": every compression pass */
  int32_t scope;       /* mgopt_compress_scope */
  const char *key;     /* op type or name */
  const char *options; /* "dtype=int4,granularity=per_block": the pass's option syntax without
                          braces (a value may be quoted); NULL or "skip": leave these weights alone */
} mgopt_compress_rule;

/* A custom palettization LUT (palettize_weights with mode=custom): called once
   per channel group of each selected weight. values holds the group's n
   vectors of cluster_dim floats (a vector is cluster_dim consecutive
   elements along the channel axis; cluster_dim is 1 unless vector
   palettization is asked for), in row-major order of the weight with the
   channel axis restricted to the group. The function writes at most 256
   entries of cluster_dim floats to lut and one entry number per vector to
   indices, and returns the number of entries (1..256; the index width is
   the smallest of 1, 2, 3, 4, 6, 8 bits that holds it), or 0 to leave the
   weight uncompressed. weight_name: the const's name. */
typedef int32_t (*mgopt_palettize_lut_fn)(void *ud, const char *weight_name, int64_t group, const float *values,
                                          int64_t n, int32_t cluster_dim, float *lut, uint8_t *indices);

typedef struct mgopt_compress_config {
  const mgopt_compress_rule *rules;
  int32_t nrules;
  mgopt_palettize_lut_fn palettize_lut; /* palettize_weights mode=custom (NULL: such weights stay) */
  void *palettize_lut_ud;
} mgopt_compress_config;

/* ---------------------------------------------------------------- composite ops

   tflite::fuse_composite_functions replaces each call of a function that
   implements a composite op (a function standing for one fused op, as a
   tf.function with experimental_implements does) by that op. A function
   implements composite NAME when
     - it carries the attribute implements="NAME" (in .mil:
       `f attributes(implements="NAME") (%a: ...) { ... }`), or
     - its IR name is the `function` of a binding naming NAME (an ONNX
       model-local function is named "domain::Name"), or
     - (default_onnx_names, on unless the config says no_default_names) its
       name is "domain::NAME" for any domain: an ONNX local function
       named after the composite.
   A call is an opaque op whose type is the function's name (mgopt_op_callee);
   its operand slot "in<i>" is the function's input i.

   Composites are looked up by NAME in the caller's table first, then in the
   built-in ones (unless no_builtins):
     embedding_lookup  (embeddings [V, D...], ids integer) -> gather(axis=0)
     keras_lstm        the Keras LSTM layer -> one lstm op (see the pass's
                       header for the signature it checks); a forward and
                       a go_backwards call joined as Keras' Bidirectional
                       layer joins them -> one bidirectional lstm
   A composite's fuse function is called with build = 0 to ask whether the
   call can be fused (it must not change anything then) and with build = 1
   to fuse it: it creates its ops before `call` (mgopt_build_op with pos =
   call) and stores in outs[i] the value that replaces the call's output i,
   for every output. It returns 1 (fusable / fused), 0 (the function does not
   look like the composite: nothing is changed; `why` may receive a
   NUL-terminated reason of at most why_cap bytes) or -1 (out of memory).
   A fuse function may leave ops it built when it returns 0 with build = 1:
   the pass erases everything built before the call since it was called. */
typedef int (*mgopt_composite_fn)(mgopt_program *p, mgopt_op *call, mgopt_function *callee, int build,
                                  mgopt_value **outs, char *why, size_t why_cap, void *ud);

typedef struct mgopt_composite {
  const char *implements; /* the composite's name, e.g. "embedding_lookup" */
  mgopt_composite_fn fuse;
  void *ud;
} mgopt_composite;

/* A function matched by its IR name ("domain::Name" for an ONNX local function). */
typedef struct mgopt_composite_binding {
  const char *function;
  const char *implements;
} mgopt_composite_binding;

/* Called for each function that names a composite but is left alone (an
   unknown composite, a signature that does not match, a fused op the target
   refuses): `call` is one of its calls (NULL when it has none). */
typedef void (*mgopt_composite_report_fn)(void *ud, const mgopt_function *f, const mgopt_op *call,
                                          const char *implements, const char *why);

/* The caller's composite registry; give it to mgopt_pipeline_run through
   mgopt_pipeline_options.composites. A zeroed struct is the built-in
   composites with the default ONNX names. */
typedef struct mgopt_composites {
  const mgopt_composite *composites; /* searched before the built-in ones */
  int32_t ncomposites;
  const mgopt_composite_binding *bindings;
  int32_t nbindings;
  int no_builtins;        /* 1: only the caller's composites */
  int no_default_names;   /* 1: "domain::NAME" functions match only through a binding or attribute */
  mgopt_composite_report_fn report;
  void *report_ud;
} mgopt_composites;

/* ---------------------------------------------------------------- legalization

   relay::legalize replaces each op a target runtime lacks by an equivalent
   subgraph of ops it has. A legalization is a C function registered for one
   op type: the caller's reach the pass through
   mgopt_pipeline_options.legalize_config; mgopt's own (gelu, layer_norm,
   linear of rank > 2: the README lists them) are chosen by name with the
   pass's `ops` option, e.g. relay::legalize{ops=gelu,layer_norm} or
   ops=all.

   The function is called with the rewriter and an op of its type that has
   one output (again for the same op when the ops around it changed). It builds the replacement with mgopt_rw_create(rw, op, ...)
   (new ops go just before op; give them fresh names, e.g. from
   mgopt_program_fresh_name) and returns the value standing for op's output,
   which must be the output of the last op it created. It returns NULL to
   decline (for these operands, this target): the ops it created are then
   erased by the pass. On a result, the pass infers every created op, checks
   that the program's target accepts each (mgopt_program_target_accepts) and
   that the result has op's type; it then gives op's output name to the
   result and erases op, or, when a check fails, erases the created ops and
   leaves op as it was. target: the pass's `target` option ("" by default).
   A legalization must not make an op of the type it legalizes (the pass
   would not reach a fixed point). */
typedef mgopt_value *(*mgopt_legalize_fn)(void *ud, mgopt_rewriter *rw, mgopt_op *op, const char *target);

typedef struct mgopt_legalization {
  const char *op_type; /* the op type it applies to: "gelu", "linear", or an opaque type ("onnx::Foo") */
  const char *name;    /* the name `ops` selects it by; NULL or "": it always applies */
  mgopt_legalize_fn fn;
  void *ud;
} mgopt_legalization;

/* The caller's legalizations, tried in order before mgopt's own; for each
   op the first that does not decline replaces it. */
typedef struct mgopt_legalize_config {
  const mgopt_legalization *rules;
  int32_t nrules;
} mgopt_legalize_config;

#ifdef __cplusplus
}
#endif
#endif /* MGOPT_PASSES_H_INCLUDED */
