/* mgopt_passes.h — mgopt's graph passes, constant-folding kernels and named pipelines.
   Generated from src/ by tools/amalgamate — do not edit. Needs mgopt.h. Version 0.1.0. */
#include "mgopt.h"
/* src/passes_api.h — public declarations of mgopt_passes.h: built-in passes, pipelines, folding. */
#ifndef MGOPT_PASSES_H_INCLUDED
#define MGOPT_PASSES_H_INCLUDED
#ifdef __cplusplus
extern "C" {
#endif

/* The registry of every built-in pass and named pipeline, with the built-in
   folding kernels. A static table: never NULL, never freed. */
MGOPTDEF const mgopt_registry *mgopt_builtin_registry(void);

/* Options for mgopt_fold_op, passed as its `ud` (NULL = every default).
   A zeroed struct means no limit. */
typedef struct mgopt_fold_options {
  int64_t max_elements;  /* do not fold when an output has more elements (0 = no limit) */
} mgopt_fold_options;

/* The built-in folding function (see mgopt_fold_fn): evaluates an op whose
   operands are all constant with the kernel table, following MIL semantics.
   On 1, out[0..op->nouts) are new tensors owned by p. Returns 0 (out set to
   NULL) when it cannot fold: no kernel, an operand not constant, an
   unsupported dtype, invalid parameters or indices, integer division by zero,
   a stored output type that disagrees with the computed one, or an output
   over opts->max_elements. -1 when memory ran out. ud: a mgopt_fold_options
   or NULL. */
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
  int64_t max_loop_iterations;           /* per while_loop run, 0 = 1 << 24 */
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
   evaluating what it builds with the canonical kernels. The numeric
   contracts are stated in src/kernels/onnx_ops.c and onnx_nn.c. Typical
   use: eval_options.op_fn = mgopt_onnx_eval_op; eval_options.op_ud = NULL
   (or a mgopt_onnx_eval_options). */

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

/* 1 when mgopt_onnx_eval_op has a way to evaluate op: an `onnx::X` op with
   a kernel or a mapping row for X at p's opset (a mapping may still
   decline the run-time operands). 0 otherwise, NULL included. */
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

typedef struct mgopt_compress_config {
  const mgopt_compress_rule *rules;
  int32_t nrules;
} mgopt_compress_config;

#ifdef __cplusplus
}
#endif
#endif /* MGOPT_PASSES_H_INCLUDED */

#ifdef MGOPT_IMPLEMENTATION
#ifndef MGOPT__PASSES_IMPLEMENTATION_DONE
#define MGOPT__PASSES_IMPLEMENTATION_DONE
/* src/passes/list.h — the built-in passes: one line per pass, in registry order.

   PASS(family, name): the file src/passes/<family>/<name>.c defines the pass
   `mgopt__pass_<name>` with its family string "<family>"; its golden cases are
   tests/golden/<family>/<name>.mil. The family is the folder and nothing else.
   The registered name's prefix is the reference namespace, kept from the
   implementation the pass follows: `common::` for Core ML MIL's graph passes
   (whatever their family: cleanup, io, precision), `onnx::` for the ONNX IR
   optimizer's.

   This order is the order of the registry (`mgopt --list-passes`) and of the
   passes in mgopt_passes.h: tools/amalgamate reads the PASS lines below and
   includes each pass file, and fails on a missing file or a pass file that is
   not listed. Adding a pass = its file, its golden file, one line here. */
#ifndef MGOPT__PASS_LIST_H
#define MGOPT__PASS_LIST_H

#define MGOPT__PASS_LIST(PASS) \
  PASS(cleanup, dead_code_elimination) \
  PASS(cleanup, noop_elimination) \
  PASS(cleanup, remove_redundant_ops) \
  PASS(cleanup, const_elimination) \
  PASS(cleanup, divide_to_multiply) \
  PASS(cleanup, select_optimization) \
  PASS(cleanup, rank0_expand_dims_swap) \
  PASS(cleanup, expand_high_rank_reshape_and_transpose) \
  PASS(cleanup, add_conv_transpose_output_shape) \
  PASS(io, sanitize_input_output_names) \
  PASS(io, update_output_dtypes) \
  PASS(io, image_input_preprocess) \
  PASS(precision, add_fp16_cast) \
  PASS(precision, add_int16_cast) \
  PASS(cleanup, guard_negative_gather_indices) \
  PASS(onnx, remove_redundant_transpose_pairs) \
  PASS(onnx, remove_redundant_reshape_pairs) \
  PASS(onnx, remove_redundant_transpose_reduce) \
  PASS(onnx, rewrite_mul_rsqrt_as_div) \
  PASS(onnx, inline_dropout_training_mode_constants) \
  PASS(onnx, propagate_shapes) \
  PASS(onnx, prune_unused_graph_inputs) \
  PASS(cleanup, const_deduplication) \
  PASS(cleanup, dedup_op_and_var_names) \
  PASS(cleanup, expand_dynamic_linear) \
  PASS(cleanup, loop_invariant_elimination) \
  PASS(cleanup, remove_symbolic_reshape) \
  PASS(cleanup, topological_reorder) \
  PASS(cleanup, cast_optimization) \
  PASS(cleanup, merge_consecutive_paddings) \
  PASS(cleanup, merge_consecutive_relus) \
  PASS(cleanup, merge_consecutive_reshapes) \
  PASS(cleanup, merge_consecutive_transposes) \
  PASS(cleanup, fuse_squeeze_expand_dims) \
  PASS(cleanup, fuse_stack_split) \
  PASS(cleanup, fuse_transpose_matmul) \
  PASS(cleanup, merge_affine_dequantize_with_consecutive_ops) \
  PASS(cleanup, reduce_transposes) \
  PASS(fusion, replace_stack_reshape) \
  PASS(fusion, detect_concat_interleave) \
  PASS(fusion, concat_to_pixel_shuffle) \
  PASS(fusion, use_reflection_padding) \
  PASS(fusion, fuse_onehot_matmul_to_gather) \
  PASS(fusion, fuse_linear_bias) \
  PASS(fusion, fuse_matmul_weight_bias) \
  PASS(fusion, fuse_elementwise_to_batchnorm) \
  PASS(fusion, fuse_gelu_exact) \
  PASS(fusion, fuse_gelu_tanh_approximation) \
  PASS(fusion, fuse_gelu_sigmoid_approximation) \
  PASS(fusion, fuse_leaky_relu) \
  PASS(fusion, fuse_prelu) \
  PASS(fusion, prelu_to_lrelu) \
  PASS(fusion, fuse_reduce_mean) \
  PASS(fusion, fuse_conv_batchnorm) \
  PASS(fusion, fuse_conv_bias) \
  PASS(fusion, fuse_conv_scale) \
  PASS(fusion, fuse_pad_conv) \
  PASS(fusion, compose_conv1d) \
  PASS(fusion, fuse_dilated_conv) \
  PASS(fusion, fuse_layernorm_or_instancenorm) \
  PASS(onnx, fold_shape_ops) \
  PASS(onnx, merge_consecutive_expand_dims) \
  PASS(fusion, canonicalize_inplace_pattern) \
  PASS(fusion, prefer_state_in_downstream) \
  PASS(onnx, name_fix) \
  PASS(onnx, remove_redundant_transpose_add_forests) \
  PASS(onnx, canonicalize_opaque_ops) \
  PASS(onnx, eliminate_output_identity) \
  PASS(onnx, resolve_reshape_shape) \
  PASS(onnx, fold_shape_chains) \
  PASS(compression, linear_quantize_weights) \
  PASS(compression, prune_weights) \
  PASS(compression, decompress_weights) \
  PASS(compression, fp16_weights) \
  /* end of the list */

#endif /* MGOPT__PASS_LIST_H */
/* src/passes_internal.h — private helpers shared by passes (matching, replacing, attributes, shapes, precision) and the macros that define a pass. */
#ifndef MGOPT__PASSES_INTERNAL_H
#define MGOPT__PASSES_INTERNAL_H

/* ---- pass definitions
   Each pass in the list (passes/list.h) is defined by its file
   passes/<family>/<name>.c, last, with one of the MGOPT__DEFINE_*PASS macros:
   `ns` is the registered name's namespace (common or onnx, see the list),
   `family` the folder. passes/registry.c puts the passes in list order. */

/* A pass with a run function and no options. */
#define MGOPT__DEFINE_PASS(family, ns, name, description, run) \
  MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_##name = {   \
      #ns "::" #name, #family, description, 0, NULL, run, NULL, 0, 0, NULL, 0}
/* A pass with a run function and options (a static array of mgopt_opt_def). */
#define MGOPT__DEFINE_PASS_WITH_OPTIONS(family, ns, name, description, opts, run) \
  MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_##name = {                     \
      #ns "::" #name, #family, description, MGOPT__ARRAY_COUNT(opts), opts, run, NULL, 0, 0, NULL, 0}
/* A pass that is its pattern table (a static array of mgopt_pattern): the pass
   manager runs it as mgopt_pass_def says, without folding. */
#define MGOPT__DEFINE_PATTERN_PASS(family, ns, name, description, patterns) \
  MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_##name = {               \
      #ns "::" #name, #family, description, 0, NULL, NULL, patterns, MGOPT__ARRAY_COUNT(patterns), 0, NULL, 0}
/* The same for patterns that can match only where an op of one of the kinds
   in `needs` (a static int32_t array) is: functions without one are skipped. */
#define MGOPT__DEFINE_PATTERN_PASS_NEEDING(family, ns, name, description, patterns, needs)  \
  MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_##name = {                              \
      #ns "::" #name, #family, description, 0, NULL, NULL, patterns, MGOPT__ARRAY_COUNT(patterns), 0, \
      needs, MGOPT__ARRAY_COUNT(needs)}
/* Rows of a pattern table: a pattern rooted at ops of one kind, or at opaque
   ops of one type name (e.g. "onnx::Dropout"). */
#define MGOPT__PATTERN(name, kind, benefit, fn) {name, kind, NULL, benefit, fn, NULL}
#define MGOPT__OPAQUE_PATTERN(name, type, benefit, fn) {name, MGOPT_OP_OPAQUE, type, benefit, fn, NULL}

/* ---- matching (passes/util.c) */
/* v is an output of a function body (its name and type must survive). */
MGOPT__PRIVATE int mgopt__pu_is_func_output(const mgopt_value *v);
/* v is an output of any block (function body or nested). */
MGOPT__PRIVATE int mgopt__pu_is_block_output(const mgopt_value *v);
/* exactly one use, by an op (not a block output). */
MGOPT__PRIVATE int mgopt__pu_single_use(const mgopt_value *v);
/* that single user op, or NULL. */
MGOPT__PRIVATE mgopt_op *mgopt__pu_single_user(const mgopt_value *v);
/* the producer of v if it is an op of `kind`, else NULL. */
MGOPT__PRIVATE mgopt_op *mgopt__pu_def_of(const mgopt_value *v, int32_t kind);
/* op itself or the enclosing op that sits directly in block b; NULL if none. */
MGOPT__PRIVATE mgopt_op *mgopt__pu_ancestor_in(mgopt_op *op, const mgopt_block *b);
/* v is a non-empty constant whose elements all equal x. */
MGOPT__PRIVATE int mgopt__pu_const_all(const mgopt_value *v, double x);
/* Scalar constants of fusion patterns. v is a constant of one element (any
   rank), integer or float, whose value c is within tol of want (|c - want| <
   tol, absolute) or equals want rounded to v's dtype (an fp16, bf16 or fp32
   constant that holds want as closely as its dtype can). The value in *c
   (may be NULL). */
MGOPT__PRIVATE int mgopt__pu_scalar_near(const mgopt_value *v, double want, double tol, double *c);
/* The operand of binary op that is a one-element constant not broadcasting
   the other operand (its rank is 0, or at most the other's known rank): in
   slot y, or, when op is commutative, in either slot (y tried first). The
   other operand goes to *other. NULL when there is none. */
MGOPT__PRIVATE mgopt_value *mgopt__pu_scalar_operand(const mgopt_op *op, mgopt_value **other);
/* "x op c" with c near want (mgopt__pu_scalar_near) in either operand order
   for a commutative op, else as op(x, c): op is of `kind` with one output;
   returns x, else NULL. */
MGOPT__PRIVATE mgopt_value *mgopt__pu_with_scalar(const mgopt_op *op, int32_t kind, double want, double tol);
/* Ends a fusion: made[0..nmade) are the ops the fusion created before `last`
   (each reading only earlier ones or existing values), made[nmade-1] the one
   whose single output stands for last's. Each is inferred and must be
   accepted by the program's target (mgopt_program_target_accepts), and the
   result must fit last's declared type (mgopt__pu_adopt_type); otherwise the
   made ops are erased (with constants made for them) and 0 is returned.
   Then last's output is replaced, and last and matched[0..nmatched)
   (consumers before producers) are erased with the constants that fed only
   them. */
MGOPT__PRIVATE int mgopt__pu_fuse_finish(mgopt_rewriter *rw, mgopt_op *const *made, int32_t nmade, mgopt_op *last,
                                         mgopt_op *const *matched, int32_t nmatched);
/* The same, and the op standing for last's takes last's op name (its
   output's name when last has none) before its function-output sync. */
MGOPT__PRIVATE int mgopt__pu_fuse_finish_named(mgopt_rewriter *rw, mgopt_op *const *made, int32_t nmade,
                                               mgopt_op *last, mgopt_op *const *matched, int32_t nmatched);
/* The dims [*start, *end) of its input an onnx::Shape op returns (opset 15's
   start/end, negative counted from the end, clamped as ONNX does); 0 when
   the op is not one Shape of a tensor of known rank. */
MGOPT__PRIVATE int mgopt__pu_onnx_shape_range(const mgopt_op *op, int64_t *start, int64_t *end);
/* For each function holding a coreml_update_state: prepare(fn, ud) when
   given (0: out of memory), then visit(write, ud) on each of its writes in
   program order, adding visit's results to ctx->rewrites. */
MGOPT__PRIVATE mgopt_status mgopt__pu_each_state_write(mgopt_pass_ctx *ctx, int (*prepare)(mgopt_function *, void *),
                                                      int (*visit)(mgopt_op *, void *), void *ud);
/* Walks from v through ops that each are the single consumer of the previous
   value (v first), none of those values a block output, and are pure
   registered elementwise ops keeping rank (unary, or binary whose other
   operand is a one-element constant of rank <= 1), up to the first op of kind
   end_kind, which must read the last value as its "x". The elementwise ops go
   to chain[0..*n) (at most MGOPT__PU_MAX_CHAIN). The end op, or NULL when the
   walk breaks anywhere else. */
#define MGOPT__PU_MAX_CHAIN 256
MGOPT__PRIVATE mgopt_op *mgopt__pu_elementwise_chain(mgopt_value *v, int32_t end_kind, mgopt_op **chain, int32_t *n);

/* ---- replacing values (passes/replace.c) */
/* gives output i of op the type t when inference left it unknown. */
MGOPT__PRIVATE void mgopt__pu_fill_type(mgopt_program *p, mgopt_op *op, int32_t i, const mgopt_type *t);
/* mgopt_rw_replace_value, and when `to` takes the name of a function output
   its op's name follows (if it was the old value name). */
MGOPT__PRIVATE void mgopt__pu_replace_value(mgopt_rewriter *rw, mgopt_value *from, mgopt_value *to);
/* Replaces every use of op output `from` by `to` and returns what now stands
   in its place. When `from` is a function output whose name cannot move to
   `to` (a block argument, or already a function output), an identity named
   like `from` is created first so the function keeps its output name.
   The caller checks mgopt__pu_replace_fits(from, to) first. NULL on OOM. */
MGOPT__PRIVATE mgopt_value *mgopt__pu_replace_keep_io(mgopt_rewriter *rw, mgopt_value *from, mgopt_value *to);
/* Typed replacements. A program may declare a value less precisely than
   inference would (a symbolic or unknown dim): its users' declared types were
   checked against that. A replacement typed more precisely can contradict
   them, so a pass that replaces a value checks first. The comparison of two
   types is core's (mgopt__type_clash). */
/* 1 unless op is a while_loop whose block arguments no longer fit its loop vars. */
MGOPT__PRIVATE int mgopt__pu_loop_args_fit(const mgopt_op *op);
/* Runs op's inference into tmp (8 slots; arena memory for more outputs) and
   returns the types, or NULL with *st MGOPT_OK (no inference), MGOPT_ERR_TYPE
   (inference refuses) or MGOPT_ERR_NOMEM. */
MGOPT__PRIVATE mgopt_type *mgopt__pu_infer_outputs(mgopt_program *p, const mgopt_op *op, mgopt_type *tmp,
                                                   mgopt_status *st);
/* 1 when op's inference succeeds and every declared output type fits it (and a
   while_loop's block arguments fit its loop vars); 1 for ops without inference. */
MGOPT__PRIVATE int mgopt__pu_infer_fits(mgopt_program *p, const mgopt_op *op);
/* Output i's type as inference gives it now, in *out (arena dims); 0 when the
   op has no inference or it fails. */
MGOPT__PRIVATE int mgopt__pu_inferred_type(mgopt_program *p, const mgopt_op *op, int32_t i, mgopt_type *out);
/* 1 when every op reading `from` (or owning a block that outputs it), except
   `skip`, would still type check with `from` typed `t`. The type is restored. */
MGOPT__PRIVATE int mgopt__pu_uses_accept(mgopt_program *p, mgopt_value *from, const mgopt_type *t,
                                         const mgopt_op *skip);
/* 1 when `to` may replace every use of `from` (a replacement must suit every
   reader's declared type): their declared types are equal; or `from` is not
   an output of a function body (those types are the function's signature:
   main's declared outputs must not change), unless nothing was declared for
   it (dtype and rank unknown), and every op that reads `from`, or owns a
   nested block that outputs it, except to's producer, still type checks
   with `from` typed like `to` if it did before (mgopt__pu_infer_fits). Every pass
   that replaces a value by an existing one asks this before changing
   anything, and declines when it says 0. */
MGOPT__PRIVATE int mgopt__pu_replace_fits(mgopt_program *p, mgopt_value *from, const mgopt_value *to);
/* The same for a replacement not built yet whose type will be static:
   dtype dt, shape[0..rank) (a folded constant, a dequantize of new data). */
MGOPT__PRIVATE int mgopt__pu_replace_static_fits(mgopt_program *p, mgopt_value *from, mgopt_dtype dt, int32_t rank,
                                                const int64_t *shape);
/* Before `to` (a new op's output, just inferred) replaces `from`: gives `to`
   from's declared type when that fits to's inferred one (so nothing
   downstream sees a change, main's outputs included), else keeps to's type
   if mgopt__pu_replace_fits allows. 0: the replacement would break a
   declared type (do not make it). */
MGOPT__PRIVATE int mgopt__pu_adopt_type(mgopt_program *p, mgopt_value *to, mgopt_value *from);
/* For pair cancellations around a chain of single-output ops chain[0..n)
   (each reading the previous one's output; chain[0] reads `in` in a
   one-value slot): chain[0] reads `x` instead, the chain's types are
   re-inferred in order and the last output adopts from's declared type
   (mgopt__pu_adopt_type), so that it may replace `from`. With n == 0 it only
   asks whether x may replace `from` (mgopt__pu_replace_fits). 1 done; 0:
   nothing changed (operand and types restored), do not replace. At most
   MGOPT__PU_MAX_CHAIN ops. */
MGOPT__PRIVATE int mgopt__pu_rebase_chain(mgopt_rewriter *rw, mgopt_op *const *chain, int32_t n, mgopt_value *in,
                                          mgopt_value *x, mgopt_value *from);
/* Cancels a pair first/end around chain[0..n) (mgopt__pu_elementwise_chain;
   x is first's operand): the chain reads x instead of first's output
   (mgopt__pu_rebase_chain), end's readers read the chain's last value (or x),
   end is erased, and first too when dead. 0, nothing changed, when end's
   output is a function output whose name cannot move to that value (an input
   or already an output), or the types do not allow it. */
MGOPT__PRIVATE int mgopt__pu_cancel_pair(mgopt_rewriter *rw, mgopt_op *first, mgopt_value *x, mgopt_op *const *chain,
                                         int32_t n, mgopt_op *end);
/* Names. */
/* The interned name a+b when no value took it yet, else a fresh "<a+b>_<k>". */
MGOPT__PRIVATE const char *mgopt__pu_name2(mgopt_program *p, const char *a, const char *b);
/* v's name, or "v" when it has none. */
MGOPT__PRIVATE const char *mgopt__pu_value_name(const mgopt_value *v);
/* Renames v; its producer takes the new name too when it was named after v. */
MGOPT__PRIVATE void mgopt__pu_rename(mgopt_value *v, const char *name);
/* A single-output op whose output is a function output takes that name (a
   replaced function output moves its name onto the replacement value only). */
MGOPT__PRIVATE void mgopt__pu_sync_op_name(mgopt_op *op);
/* Erasing what a rewrite left dead (mgopt__op_is_dead). */
MGOPT__PRIVATE void mgopt__pu_erase_if_dead(mgopt_rewriter *rw, mgopt_op *op);
/* erases op if all its outputs are unused, then the const ops (up to 8)
   that fed it and are now unused. */
MGOPT__PRIVATE void mgopt__pu_erase_with_consts(mgopt_rewriter *rw, mgopt_op *op);
/* Removes output i of op, which must be unused (later outputs shift down). */
MGOPT__PRIVATE void mgopt__pu_op_remove_output(mgopt_op *op, int32_t i);

/* ---- attributes and parameters (passes/attrs.c) */
MGOPT__PRIVATE uint64_t mgopt__pu_mix(uint64_t h, uint64_t x);
MGOPT__PRIVATE uint64_t mgopt__pu_attr_hash(const mgopt_attr *a);
MGOPT__PRIVATE int mgopt__pu_attr_equal(const mgopt_attr *a, const mgopt_attr *b);
/* all of an op's attributes: order-insensitive hash; same set with equal values */
MGOPT__PRIVATE uint64_t mgopt__pu_attrs_hash(const mgopt_op *op);
MGOPT__PRIVATE int mgopt__pu_attrs_equal(const mgopt_op *a, const mgopt_op *b);
/* Sets the integer-list parameter `name` of op to v[0..n): as an attribute,
   unless `like` carries that parameter as an operand, then as a new const
   operand of the same integer dtype. 0 on OOM. */
MGOPT__PRIVATE int mgopt__pu_set_ints_param(mgopt_rewriter *rw, mgopt_op *op, const mgopt_op *like, const char *name,
                                            const int64_t *v, int64_t n);
/* target dtype of a cast op (its `dtype` parameter), MGOPT_DT_UNKNOWN if unreadable. */
MGOPT__PRIVATE mgopt_dtype mgopt__pu_cast_dtype(const mgopt_op *cast);

/* ---- shapes, broadcasting and constant data (passes/shapes.c) */
MGOPT__PRIVATE int mgopt__pu_type_unknown(const mgopt_type *t);
MGOPT__PRIVATE int mgopt__pu_type_refine(mgopt_program *p, mgopt_type *cur, const mgopt_type *inf);
/* Copies t's dims into shape when t is a tensor type of known rank <= cap with
   every dim static; 0 otherwise. */
MGOPT__PRIVATE int mgopt__pu_static_shape(const mgopt_type *t, int64_t *shape, int32_t cap);
/* same known dtype and rank, every dim static and equal or the same symbol
   (unknown dims never compare equal). */
MGOPT__PRIVATE int mgopt__pu_same_known_shape(const mgopt_value *a, const mgopt_value *b);
/* axis normalized into [0, rank), or -1 when out of range. */
MGOPT__PRIVATE int64_t mgopt__pu_norm_axis(int64_t axis, int64_t rank);
/* Numpy broadcast of two static shapes; 0 if they do not broadcast (or rank > MGOPT_MAX_RANK). */
MGOPT__PRIVATE int mgopt__pu_broadcast(const int64_t *a, int32_t ra, const int64_t *b, int32_t rb, int64_t *out,
                                       int32_t *rout);
/* Flat index into a tensor of shape `in` (broadcast to `out`) for flat output index `flat`. */
MGOPT__PRIVATE int64_t mgopt__pu_bcast_index(const int64_t *out, int32_t rout, const int64_t *in, int32_t rin,
                                             int64_t flat);
/* A new rank-1 int32 tensor holding v[0..n). NULL on OOM. */
MGOPT__PRIVATE mgopt_tensor *mgopt__pu_const_i32_1d(mgopt_program *p, const int64_t *v, int32_t n);
/* t's data (of shape in_shape, rank entries; t->numel elements) transposed by
   perm (normalized): out.shape[i] = in_shape[perm[i]]. A new owned tensor, or
   NULL for strings and sub-byte dtypes, or on OOM. */
MGOPT__PRIVATE mgopt_tensor *mgopt__pu_transpose_data(mgopt_program *p, mgopt_tensor *t, const int64_t *in_shape,
                                                      int32_t rank, const int64_t *perm);

/* ---- folding into weights (passes/weights.c)
   The numeric contract of every pass that folds constants into a weight or a
   bias through these: each result element is computed in double from the
   operands' exact values and rounded once, to nearest even, to the weight's
   dtype (fp16 stays fp16, bf16 stays bf16). A result that is not finite makes
   the helper fail, and the pass then leaves the op alone. */
/* v rounded once to dt (fp16, bf16, fp32; any other dtype: v itself). */
MGOPT__PRIVATE double mgopt__pw_round(mgopt_dtype dt, double v);
/* Stores v rounded once into element i of owned tensor t; 0 when the stored value is not finite. */
MGOPT__PRIVATE int mgopt__pw_store(mgopt_tensor *t, int64_t i, double v);
/* fp16, bf16, fp32 or fp64: the weight dtypes the helpers fold into. */
MGOPT__PRIVATE int mgopt__pw_is_float_weight(mgopt_dtype dt);
/* Output channels of weight w (rank >= 2): axis 0, shape[0] ([Cout, Cin/g, ...]:
   conv, linear); axis 1, shape[1] * groups ([Cin, Cout/g, ...]: conv_transpose,
   whose shape[0] groups must divide; a matmul weight [Din, Dout] is axis 1 with
   one group). -1 when the layout does not fit. */
MGOPT__PRIVATE int64_t mgopt__pw_out_channels(const mgopt_tensor *w, int32_t axis, int64_t groups);
/* A new tensor: w with every element of output channel o multiplied by
   scale[o] (mgopt__pw_out_channels entries). For axis 1 with g groups, the
   element [i, j, ...] belongs to output channel (i / (shape[0]/g)) * shape[1] + j.
   NULL when w is not a float weight, a result is not finite, or on OOM. */
MGOPT__PRIVATE mgopt_tensor *mgopt__pw_scale_channels(mgopt_program *p, mgopt_tensor *w, int32_t axis,
                                                       int64_t groups, const double *scale);
/* A new rank-1 tensor of dtype dt holding v[0..n), each rounded once; NULL when one is not finite, or on OOM. */
MGOPT__PRIVATE mgopt_tensor *mgopt__pw_vector(mgopt_program *p, mgopt_dtype dt, int64_t n, const double *v);
/* Reads constant t as n per-channel values into out: one element broadcast,
   or n elements in order (the caller checks the shape). 0 for other sizes,
   non-numeric dtypes or a value that is not finite. */
MGOPT__PRIVATE int mgopt__pw_read_channels(mgopt_program *p, mgopt_tensor *t, int64_t n, double *out);
/* The constant weights of a conv or conv_transpose: weight const, float, of
   rank >= 3 equal to x's and the output's; bias absent or a const of Cout
   elements, rank 1. axis: the weight's output-channel axis (0 conv, 1
   conv_transpose), for mgopt__pw_scale_channels. */
typedef struct mgopt__pw_conv {
  mgopt_tensor *w, *b; /* b NULL when the conv has no bias */
  int32_t axis;
  int w_sole; /* the weight const has this conv as its one reader and holds w alone (mgopt__pw_conv_set made it) */
  int64_t groups, cout;
} mgopt__pw_conv;
/* 1 when op is such a conv (c filled), else 0. */
MGOPT__PRIVATE int mgopt__pw_conv_get(mgopt_program *p, const mgopt_op *op, mgopt__pw_conv *c);
/* c's bias as cout doubles (arena; zeros when absent), NULL on OOM or a bias that is not finite. */
MGOPT__PRIVATE double *mgopt__pw_conv_bias(mgopt_program *p, const mgopt__pw_conv *c);
/* v is a const that broadcasts onto a tensor of `rank` without changing its
   shape and varies at most along `axis` (n channels): each dim, right-aligned,
   is 1 except the one over axis, which is 1 or n. Its n per-channel values go
   to out. 0 otherwise (mgopt__pw_read_channels). */
MGOPT__PRIVATE int mgopt__pw_channel_const(mgopt_program *p, const mgopt_value *v, int32_t rank, int32_t axis,
                                           int64_t n, double *out);
/* c's weight scaled per output channel like mgopt__pw_scale_channels: in
   place when c->w_sole (then c->w itself, written only once every result is
   known finite), else a new tensor. NULL when a result is not finite or on
   OOM, c->w then unchanged. The caller hands it to mgopt__pw_conv_set and
   must not fail after this call but for OOM. */
MGOPT__PRIVATE mgopt_tensor *mgopt__pw_conv_scale(mgopt_program *p, const mgopt__pw_conv *c, const double *scale);
/* conv reads new consts holding w and b (either NULL: kept), created just
   before it and named after its output; the old consts go when dead. 0 on OOM. */
MGOPT__PRIVATE int mgopt__pw_conv_set(mgopt_rewriter *rw, mgopt_op *conv, mgopt_tensor *w, mgopt_tensor *b);

/* ---- precision rewriting for add_fp16_cast and add_int16_cast (passes/precision.c) */
/* For operand k of slot s of op (value v), decide returns 0 to keep it, 1 to
   convert it to dtype *dt (or to use *rep when it sets one), -1 when the op
   must stay unchanged. conv creates the converted value of v before pos (a
   cast, or a converted const). Every registered, non-const op without nested
   blocks is offered (nested blocks are walked); an op with a converted operand is re-created with
   outputs named "<out><suffix>", its type inferred (an op that does not
   infer stays as it was), and each output whose dtype changed is cast back
   ("<new out>_to_<dtype>"); function outputs keep their names. Conversions
   are shared per block. */
#define MGOPT__PU_PREC_MAXIN 64
typedef int (*mgopt__pu_prec_fn)(const mgopt_op *op, int32_t s, int32_t k, mgopt_value *v, int32_t *dt,
                                 mgopt_value **rep, void *ud);
typedef mgopt_value *(*mgopt__pu_conv_fn)(mgopt_program *p, mgopt_op *pos, mgopt_value *v, int32_t dt, void *ud);
MGOPT__PRIVATE mgopt_status mgopt__pu_precision_run(mgopt_pass_ctx *ctx, const char *suffix, mgopt__pu_prec_fn decide,
                                                    mgopt__pu_conv_fn conv, void *ud);
/* cast(v, dtype=dt) named `name` before pos (type inferred, else v's type with dt). NULL on OOM. */
MGOPT__PRIVATE mgopt_value *mgopt__pu_cast_value(mgopt_program *p, mgopt_op *pos, mgopt_value *v, mgopt_dtype dt,
                                                 const char *name);
/* The name of v converted to dt: "<v>_to_<dtype>" (a fresh variant when taken). */
MGOPT__PRIVATE const char *mgopt__pu_converted_name(mgopt_program *p, const mgopt_value *v, mgopt_dtype dt);
/* A detached copy of op: same type, operands, attributes and output count (no nested blocks). */
MGOPT__PRIVATE mgopt_op *mgopt__pu_clone_op(mgopt_program *p, const mgopt_op *op);

/* ---- weight compression driver (passes/compress.c)
   The common walk of linear_quantize_weights, palettize_weights and
   prune_weights. mgopt__cw_run collects, in program order over every block
   (nested ones included), the consts that are weights, then offers each to
   the pass's callback with its own options and its channel axes.
   A weight: a const op of dtype fp16, bf16, fp32, int8 or uint8; of rank >= 2,
   or of any rank when its first reader is a constexpr_* op; at least 10
   elements and more than its weight_threshold option (strictly); read by at
   least one op (a const that is only a block output stays); its options
   resolved through the mgopt_compress_config (see passes_api.h), all its
   readers agreeing. A const read by a constexpr_* op is offered only to a
   pass that sets `constexpr_readers` (joint compression), with `reader`
   that op. Channel axes, over every reader (all must agree, else -1):
   conv, linear and any other op: out 0, in 1; conv_transpose: out 1, in 0;
   matmul y: out -1, in -2 (transpose_y: out -2, in -1); matmul x: out -2,
   in -1 (transpose_x: out -1, in -2); a constexpr_* reader: the axes of the
   ops reading its output. Axes are normalized into [0, rank); rank < 2 gives
   -1 for both. */
typedef struct mgopt__cw_weight {
  mgopt_op *op;                /* the const op */
  mgopt_tensor *t;             /* its value */
  const mgopt_opt_value *opts; /* this weight's options, in the pass's option order */
  int32_t out_axis, in_axis;   /* channel axes in [0, rank), -1 unknown */
  mgopt_op *reader;            /* the first op reading the const */
  int64_t numel;               /* t->numel */
} mgopt__cw_weight;
/* Compresses one weight: builds the replacement before w->op and hands it
   to mgopt__cw_replace. Returns 1 when it did, 0 to leave the weight as it
   is (nothing built is left behind), -1 when memory ran out, -2 for an
   option value the pass does not take (diag set; the pass then fails with
   MGOPT_ERR_INVALID_ARG). */
typedef int (*mgopt__cw_fn)(mgopt_pass_ctx *ctx, const mgopt__cw_weight *w, void *ud);
typedef struct mgopt__cw_pass {
  const char *name;            /* short name, as in mgopt_compress_rule.pass */
  const mgopt_opt_def *opts;   /* the pass's option defs (one must be weight_threshold) */
  int32_t nopts;
  int constexpr_readers;       /* offer consts read by constexpr_* ops too */
  mgopt__cw_fn fn;
  void *ud;
} mgopt__cw_pass;
/* Runs cp over ctx->program; adds the weights compressed to ctx->rewrites.
   MGOPT_ERR_INVALID_ARG (diag set) for a configuration rule whose options
   the pass does not take; MGOPT_ERR_NOMEM. */
MGOPT__PRIVATE mgopt_status mgopt__cw_run(mgopt_pass_ctx *ctx, const mgopt__cw_pass *cp);
/* Every use of w's const reads v instead (v's producer sits before w->op;
   v takes a function output's name), then the const is erased. v must have
   the const's dtype and shape. */
MGOPT__PRIVATE void mgopt__cw_replace(const mgopt__cw_weight *w, mgopt_value *v);
/* Erases op and then the consts feeding it that nothing else reads (backing
   out of a replacement built before asking the target). */
MGOPT__PRIVATE void mgopt__cw_unbuild(mgopt_op *op);

#endif /* MGOPT__PASSES_INTERNAL_H */
/* src/kernels/kernels.h — private declarations shared by the constant-folding kernels in src/kernels/. */
#ifndef MGOPT__KERNELS_H
#define MGOPT__KERNELS_H

/* Kernel results (the values mgopt_fold_op returns). */
#define MGOPT__K_NO 0   /* cannot fold: no kernel, bad IR, unsupported dtype, over a limit */
#define MGOPT__K_OK 1
#define MGOPT__K_OOM (-1)

/* Scratch buffers one kernel may hold at once. */
#define MGOPT__K_MAX_SCRATCH 12

/* Compute lanes: every element type computes in one of these. */
#define MGOPT__LANE_NONE 0 /* not computable (string, sub-byte, complex, fp8) */
#define MGOPT__LANE_F32 1  /* fp16, bf16, fp32: computed in float, rounded once to the dtype */
#define MGOPT__LANE_F64 2  /* fp64 */
#define MGOPT__LANE_I64 3  /* every integer type of 8 bits or more: int64 with wrap-around */
#define MGOPT__LANE_BOOL 4

/* Under clang, `a * b + c` may be contracted to a fused multiply-add by default
   (-ffp-contract=on), which changes results; kernels that multiply and add
   open their body with this. GCC contracts only in GNU modes (-std=gnuXX) on
   FMA targets: build with -std=c99 or -ffp-contract=off for bit-exact folds. */
#if defined(__clang__)
#define MGOPT__K_NOCONTRACT _Pragma("clang fp contract(off)")
#else
#define MGOPT__K_NOCONTRACT
#endif

/* The tensor a value holds during evaluation (NULL: not known); folding reads
   the values' constants instead. */
typedef mgopt_tensor *(*mgopt__k_lookup_fn)(void *env, const mgopt_value *v);

/* The state of one kernel run: the op, its outputs, scratch memory freed at the end. */
typedef struct mgopt__kctx {
  mgopt_program *p;
  const mgopt_op *op;
  mgopt__k_lookup_fn lookup; /* NULL when folding: operands are constants */
  void *env;
  mgopt_tensor **out;
  int64_t max_elements; /* 0 = no limit */
  int heap;             /* evaluating: outputs go on the heap (mgopt__ev_tensor_alloc), never the arena */
  char why[128];        /* why the kernel returned MGOPT__K_NO, when it says (mgopt__k_no) */
  int bad;              /* the operands break the op's contract (an index out of range): an error when evaluating */
  int32_t nscratch;
  void *scratch[MGOPT__K_MAX_SCRATCH];
  size_t scratch_size[MGOPT__K_MAX_SCRATCH];
} mgopt__kctx;

typedef int (*mgopt__kernel_fn)(mgopt__kctx *k);

/* ---- dtypes */
MGOPT__PRIVATE int mgopt__k_lane(mgopt_dtype dt);
/* Bytes per element for byte-addressable dtypes (moved by shape ops), 0 otherwise. */
MGOPT__PRIVATE size_t mgopt__k_esize(mgopt_dtype dt);
/* Rounds v to the precision of dt (fp16, bf16; identity for fp32). */
MGOPT__PRIVATE float mgopt__k_rnd(mgopt_dtype dt, float v);
MGOPT__PRIVATE void mgopt__k_round_f32(mgopt_dtype dt, float *x, int64_t n);
/* Element range of an integer dtype (bool: 0..1). Returns 0 for others. */
MGOPT__PRIVATE int mgopt__k_int_range(mgopt_dtype dt, int64_t *lo, int64_t *hi);
/* Unpacks element i of a little-endian bit-packed array of b-bit fields. */
MGOPT__PRIVATE uint64_t mgopt__k_bits(const uint8_t *d, int64_t i, int b);

/* ---- operands and parameters */
/* The tensor value v holds: its constant when folding, the evaluator's tensor
   when evaluating. NULL if not known. */
MGOPT__PRIVATE mgopt_tensor *mgopt__k_value(mgopt__kctx *k, const mgopt_value *v);
/* The tensor in single-value slot `slot` of the op (mgopt__k_value), NULL if absent or unknown. */
MGOPT__PRIVATE mgopt_tensor *mgopt__k_operand(mgopt__kctx *k, const char *slot);
/* 1 if parameter `name` is given (attribute, operand) or has a registry default. */
MGOPT__PRIVATE int mgopt__k_has_param(const mgopt_op *op, const char *name);
/* Integer list parameter (attribute or constant operand): its length, -1 when
   absent, -2 when present but unreadable (not an integer list, too long). */
MGOPT__PRIVATE int64_t mgopt__k_ints(mgopt__kctx *k, const char *name, const int64_t **v);
/* Normalises axis a into [0, rank); 0 if out of range. */
MGOPT__PRIVATE int mgopt__k_axis(int64_t a, int64_t rank, int32_t *out);
/* Data pointer of an input (NULL only on OOM). */
MGOPT__PRIVATE const void *mgopt__k_data(mgopt__kctx *k, mgopt_tensor *t);

/* Records why the kernel cannot compute (the first reason given wins) and
   returns MGOPT__K_NO. Folding ignores it; evaluation reports it. */
MGOPT__PRIVATE int mgopt__k_no(mgopt__kctx *k, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- memory */
/* A reference-counted tensor outside the arena (refs 1), zeroed when zero
   is set (strings always); NULL on OOM or a bad shape. See src/kernels/eval.c. */
MGOPT__PRIVATE mgopt_tensor *mgopt__ev_tensor_alloc(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                                    const int64_t *shape, int zero);
/* n elements of esz bytes of heap scratch, freed after the kernel. NULL on OOM. */
MGOPT__PRIVATE void *mgopt__k_scratch(mgopt__kctx *k, int64_t n, size_t esz);
/* Validates output i (limit, stored type) without allocating: MGOPT__K_OK or MGOPT__K_NO. */
MGOPT__PRIVATE int mgopt__k_out_check(mgopt__kctx *k, int32_t i, mgopt_dtype dt, int32_t rank,
                                      const int64_t *shape);
/* Checks, then allocates output i (zero-filled); *data receives its bytes. */
MGOPT__PRIVATE int mgopt__k_out(mgopt__kctx *k, int32_t i, mgopt_dtype dt, int32_t rank,
                                const int64_t *shape, void **data);
/* mgopt__k_out for a kernel that writes every byte of the output: not zeroed. */
MGOPT__PRIVATE int mgopt__k_out_full(mgopt__kctx *k, int32_t i, mgopt_dtype dt, int32_t rank,
                                     const int64_t *shape, void **data);

/* Output i = the bytes of x from byte offset under (rank, shape): a view of
   x when folding (see mgopt__tensor_view), a copy when evaluating. */
MGOPT__PRIVATE int mgopt__k_out_view(mgopt__kctx *k, int32_t i, mgopt_tensor *x, size_t offset, int32_t rank,
                                     const int64_t *shape);

/* ---- loading and storing in lanes */
/* Converts all of t into dst (lane element type). MGOPT__K_NO when t's dtype
   cannot be represented (e.g. uint64 above INT64_MAX, floats into the I64 lane). */
MGOPT__PRIVATE int mgopt__k_load(mgopt__kctx *k, mgopt_tensor *t, int lane, void *dst);
/* Loads t into a lane buffer broadcast to shape (orank, oshape) of n elements. */
MGOPT__PRIVATE int mgopt__k_load_bcast(mgopt__kctx *k, mgopt_tensor *t, int lane, int32_t orank,
                                       const int64_t *oshape, int64_t n, void **out);
/* Stores a lane buffer into dst of dtype dt (rounding to nearest even, ints truncated). */
MGOPT__PRIVATE void mgopt__k_store(int lane, const void *src, int64_t n, mgopt_dtype dt, void *dst);
MGOPT__PRIVATE size_t mgopt__k_lane_size(int lane);
/* Correctly rounded double -> dtype of one element at dst[i]. */
MGOPT__PRIVATE void mgopt__k_store_f64_at(mgopt_dtype dt, void *dst, int64_t i, double v);
MGOPT__PRIVATE void mgopt__k_store_i64_at(mgopt_dtype dt, void *dst, int64_t i, int64_t v);

/* ---- shapes and index iteration */
/* numpy broadcast of two shapes; 0 if incompatible. */
MGOPT__PRIVATE int mgopt__k_bcast_shape(int32_t ra, const int64_t *a, int32_t rb, const int64_t *b,
                                        int32_t *ro, int64_t *o);
/* Element count of a shape with overflow check; -1 on overflow or a negative dim. */
MGOPT__PRIVATE int64_t mgopt__k_numel(int32_t rank, const int64_t *shape);
/* Row-major strides (in elements) of a shape. */
MGOPT__PRIVATE void mgopt__k_strides(int32_t rank, const int64_t *shape, int64_t *strides);
/* dst[out index] = src[base + sum(index[d] * stride[d])] over shape (rank <= 2 * MGOPT_MAX_RANK).
   Strides may be 0 (broadcast) or negative; they are in elements. */
MGOPT__PRIVATE void mgopt__k_strided(void *dst, const void *src, size_t esz, int32_t rank,
                                     const int64_t *shape, const int64_t *stride, int64_t base);
/* Broadcasts src (srank, sshape) to (orank, oshape). */
MGOPT__PRIVATE void mgopt__k_bcast(void *dst, const void *src, size_t esz, int32_t srank,
                                   const int64_t *sshape, int32_t orank, const int64_t *oshape);

/* The kernel of an op kind (fold.c), NULL when it has none. */
MGOPT__PRIVATE mgopt__kernel_fn mgopt__k_kernel(int32_t kind);

/* ---- kernels (one per family file) */
MGOPT__PRIVATE int mgopt__ke_binary(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ke_unary(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ke_logical_not(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ke_identity(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ke_select(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ke_cast(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ks_reshape(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ks_transpose(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ks_expand_dims(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ks_squeeze(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ks_concat(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ks_stack(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ks_split(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ks_slice_by_index(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ks_slice_by_size(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ks_gather(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ks_tile(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ks_pad(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__ks_one_hot(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kr_reduce(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kr_softmax(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kr_matmul(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kr_linear(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kx_reduce_arg(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kx_cumsum(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kx_gather_along_axis(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kc_affine_dequantize(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kc_dequantize(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kc_quantize(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kc_lut_to_dense(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kc_sparse_to_dense(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kc_blockwise_shift_scale(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kc_constexpr_cast(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kn_conv(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kn_pool(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kn_batch_norm(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kn_norm(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kn_prelu(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kn_pixel_shuffle(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kn_space_batch(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kn_lrn(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kt_scatter_along_axis(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kt_scatter_nd(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kt_gather_nd(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kt_reverse_sequence(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kt_depth_space(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kt_topk(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kt_range_1d(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kt_fill(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kn_resample(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kx_einsum(mgopt__kctx *k);

/* ---- weight pruning (kernels/prune.c; numeric contract there). Tensors are
   read in place: their data must be loaded (mgopt_tensor_data). */
/* numpy.percentile(v[0..n), q) with its default linear method; v is
   reordered. NaN when n == 0 or v holds a NaN. */
MGOPT__PRIVATE double mgopt__kp_percentile(double *v, int64_t n, double q);
/* The dtypes pruning reads: fp16, bf16, fp32, fp64, int8, uint8. */
MGOPT__PRIVATE int mgopt__kp_weight_dtype(mgopt_dtype dt);
/* mag[i] = |w[i]| for i < numel. */
MGOPT__PRIVATE void mgopt__kp_magnitude(const mgopt_tensor *w, double *mag);
/* Block magnitude: each element gets the L2 norm of its block of b
   consecutive entries along axis dim (0 or 1; the last block may be short,
   as if zero-padded). 0 (nothing written) when rank is not 2..5, b <= 1 or
   b > shape[dim] / 2. */
MGOPT__PRIVATE int mgopt__kp_block_magnitude(const mgopt_tensor *w, int32_t dim, int64_t b, double *mag);
/* keep[i] = !(mag[i] <= threshold). */
MGOPT__PRIVATE void mgopt__kp_threshold_mask(const double *mag, int64_t n, double threshold, uint8_t *keep);
/* Magnitude pruning to target_sparsity s in [0, 1]: s == 1 prunes all, s == 0
   none, else keep[i] = !(mag[i] <= percentile(mag, 100 s)). scratch: n doubles. */
MGOPT__PRIVATE void mgopt__kp_magnitude_mask(const double *mag, int64_t n, double target_sparsity, double *scratch,
                                             uint8_t *keep);
/* n:m pruning along axis dim: in each group of m consecutive entries (the
   last zero-padded), the n smallest magnitudes are pruned. 0 (nothing
   written) when rank is not 2..5, n > m, or m > shape[dim] / 2. */
MGOPT__PRIVATE int mgopt__kp_nm_mask(const mgopt_tensor *w, const double *mag, int64_t n, int64_t m, int32_t dim,
                                     uint8_t *keep);
/* Elements kept and non-zero: the length of constexpr_sparse_to_dense's nonzero_data. */
MGOPT__PRIVATE int64_t mgopt__kp_nonzero_count(const mgopt_tensor *w, const uint8_t *keep);
/* constexpr_sparse_to_dense's operands for w pruned by keep: the kept
   non-zero elements in row-major order into nonzero (w's dtype, a
   byte-addressable one), their positions as bits of mask (ceil(numel / 8)
   bytes, element i at bit i % 8 of byte i / 8, padding bits clear: the
   iOS16 uint8 mask and the iOS18 uint1 tensor alike). */
MGOPT__PRIVATE void mgopt__kp_encode(const mgopt_tensor *w, const uint8_t *keep, void *nonzero, uint8_t *mask);

#endif /* MGOPT__KERNELS_H */
/* src/kernels/common.c — folding kernel machinery: dtype lanes, scratch, outputs, broadcasting, strided copies. */

/* ---------------------------------------------------------------- dtypes */

MGOPT__PRIVATE int mgopt__k_lane(mgopt_dtype dt) {
  switch (dt) {
    case MGOPT_DT_FP16: case MGOPT_DT_BF16: case MGOPT_DT_FP32: return MGOPT__LANE_F32;
    case MGOPT_DT_FP64: return MGOPT__LANE_F64;
    case MGOPT_DT_INT8: case MGOPT_DT_UINT8: case MGOPT_DT_INT16: case MGOPT_DT_UINT16:
    case MGOPT_DT_INT32: case MGOPT_DT_UINT32: case MGOPT_DT_INT64: case MGOPT_DT_UINT64:
      return MGOPT__LANE_I64;
    case MGOPT_DT_BOOL: return MGOPT__LANE_BOOL;
    default: return MGOPT__LANE_NONE;
  }
}

MGOPT__PRIVATE size_t mgopt__k_esize(mgopt_dtype dt) {
  int b = mgopt_dtype_bits(dt);
  if (dt == MGOPT_DT_STRING || b <= 0 || (b & 7)) return 0;
  return (size_t)(b / 8);
}

MGOPT__PRIVATE size_t mgopt__k_lane_size(int lane) {
  return lane == MGOPT__LANE_F32 ? 4 : lane == MGOPT__LANE_BOOL ? 1 : 8;
}

MGOPT__PRIVATE float mgopt__k_rnd(mgopt_dtype dt, float v) {
  if (dt == MGOPT_DT_FP16) return mgopt_f16_to_f32(mgopt_f32_to_f16(v));
  if (dt == MGOPT_DT_BF16) return mgopt_bf16_to_f32(mgopt_f32_to_bf16(v));
  return v;
}

MGOPT__PRIVATE void mgopt__k_round_f32(mgopt_dtype dt, float *x, int64_t n) {
  int64_t i;
  if (dt != MGOPT_DT_FP16 && dt != MGOPT_DT_BF16) return;
  for (i = 0; i < n; i++) x[i] = mgopt__k_rnd(dt, x[i]);
}

MGOPT__PRIVATE int mgopt__k_int_range(mgopt_dtype dt, int64_t *lo, int64_t *hi) {
  switch (dt) {
    case MGOPT_DT_BOOL: *lo = 0; *hi = 1; return 1;
    case MGOPT_DT_INT8: *lo = -128; *hi = 127; return 1;
    case MGOPT_DT_UINT8: *lo = 0; *hi = 255; return 1;
    case MGOPT_DT_INT16: *lo = -32768; *hi = 32767; return 1;
    case MGOPT_DT_UINT16: *lo = 0; *hi = 65535; return 1;
    case MGOPT_DT_INT32: *lo = INT32_MIN; *hi = INT32_MAX; return 1;
    case MGOPT_DT_UINT32: *lo = 0; *hi = (int64_t)UINT32_MAX; return 1;
    case MGOPT_DT_INT64: *lo = INT64_MIN; *hi = INT64_MAX; return 1;
    /* uint64 values above INT64_MAX never reach the I64 lane */
    case MGOPT_DT_UINT64: *lo = 0; *hi = INT64_MAX; return 1;
    case MGOPT_DT_INT4: *lo = -8; *hi = 7; return 1;
    case MGOPT_DT_UINT1: case MGOPT_DT_UINT2: case MGOPT_DT_UINT3: case MGOPT_DT_UINT4:
    case MGOPT_DT_UINT6:
      *lo = 0;
      *hi = ((int64_t)1 << mgopt_dtype_bits(dt)) - 1;
      return 1;
    default: return 0;
  }
}

MGOPT__PRIVATE uint64_t mgopt__k_bits(const uint8_t *d, int64_t i, int b) {
  uint64_t v = 0;
  int64_t bit = i * b;
  int got = 0;
  if (b == 8) return d[i];
  while (got < b) {
    int off = (int)(bit & 7), take = 8 - off;
    if (take > b - got) take = b - got;
    v |= (uint64_t)((d[bit >> 3] >> off) & ((1u << take) - 1u)) << got;
    got += take;
    bit += take;
  }
  return v;
}

static void mgopt__k_put_bits(uint8_t *d, int64_t i, int b, uint64_t v) {
  int k;
  for (k = 0; k < b; k++) {
    int64_t bit = i * b + k;
    if ((v >> k) & 1u) d[bit >> 3] |= (uint8_t)(1u << (bit & 7));
    else d[bit >> 3] &= (uint8_t)~(1u << (bit & 7));
  }
}

/* ---------------------------------------------------------------- operands and parameters */

MGOPT__PRIVATE mgopt_tensor *mgopt__k_value(mgopt__kctx *k, const mgopt_value *v) {
  if (!v) return NULL;
  return k->lookup ? k->lookup(k->env, v) : mgopt_value_const(v);
}

MGOPT__PRIVATE mgopt_tensor *mgopt__k_operand(mgopt__kctx *k, const char *slot) {
  return mgopt__k_value(k, mgopt_op_operand(k->op, slot));
}

MGOPT__PRIVATE int mgopt__k_has_param(const mgopt_op *op, const char *name) {
  const mgopt_attr_def *d;
  if (mgopt_op_attr(op, name) || mgopt_op_operand(op, name)) return 1;
  d = mgopt__attr_def(op->kind, name);
  return d && d->deflt;
}

MGOPT__PRIVATE int64_t mgopt__k_ints(mgopt__kctx *k, const char *name, const int64_t **v) {
  int64_t n;
  const mgopt_value *pv = k->lookup && !mgopt_op_attr(k->op, name) ? mgopt_op_operand(k->op, name) : NULL;
  if (pv) { /* evaluating: the operand's tensor, into scratch (the arena is not for per-run data) */
    mgopt_tensor *t = k->lookup(k->env, pv);
    int64_t i, *w;
    if (!t || t->rank > 1 || !(mgopt_dtype_is_int((mgopt_dtype)t->dtype) || t->dtype == MGOPT_DT_BOOL) ||
        t->numel > 2 * MGOPT_MAX_RANK)
      return -2;
    w = (int64_t *)mgopt__k_scratch(k, t->numel, sizeof(int64_t));
    if (!w) return -2;
    for (i = 0; i < t->numel; i++) w[i] = mgopt_tensor_get_i64(t, i);
    *v = w;
    return t->numel;
  }
  n = mgopt_op_get_ints(k->p, k->op, name, v);
  if (n < 0) return (mgopt_op_attr(k->op, name) || mgopt_op_operand(k->op, name)) ? -2 : -1;
  return n > 2 * MGOPT_MAX_RANK ? -2 : n;
}

MGOPT__PRIVATE int mgopt__k_axis(int64_t a, int64_t rank, int32_t *out) {
  if (a < -rank || a >= rank) return 0;
  *out = (int32_t)(a < 0 ? a + rank : a);
  return 1;
}

MGOPT__PRIVATE const void *mgopt__k_data(mgopt__kctx *k, mgopt_tensor *t) {
  return mgopt_tensor_data(k->p, t);
}

/* ---------------------------------------------------------------- memory and outputs */

MGOPT__PRIVATE void *mgopt__k_scratch(mgopt__kctx *k, int64_t n, size_t esz) {
  int64_t bytes;
  void *m;
  if (k->nscratch >= MGOPT__K_MAX_SCRATCH) return NULL;
  if (!mgopt__mul_i64(n < 1 ? 1 : n, (int64_t)esz, &bytes) || (uint64_t)bytes > (uint64_t)SIZE_MAX / 2)
    return NULL;
  m = mgopt__heap_realloc(&k->p->alloc, NULL, 0, (size_t)bytes);
  if (!m) return NULL;
  k->scratch[k->nscratch] = m;
  k->scratch_size[k->nscratch] = (size_t)bytes;
  k->nscratch++;
  return m;
}

MGOPT__PRIVATE int mgopt__k_no(mgopt__kctx *k, const char *fmt, ...) {
  va_list ap;
  if (k->why[0]) return MGOPT__K_NO;
  va_start(ap, fmt);
  vsnprintf(k->why, sizeof k->why, fmt, ap);
  va_end(ap);
  return MGOPT__K_NO;
}

MGOPT__PRIVATE int mgopt__k_out_check(mgopt__kctx *k, int32_t i, mgopt_dtype dt, int32_t rank,
                                      const int64_t *shape) {
  const mgopt_type *st;
  int64_t n = mgopt__k_numel(rank, shape);
  int32_t d;
  if (i < 0 || i >= k->op->nouts || n < 0 || rank < 0 || rank > MGOPT_MAX_RANK)
    return mgopt__k_no(k, "output %d has an invalid shape", (int)i);
  if (k->max_elements > 0 && n > k->max_elements)
    return mgopt__k_no(k, "output %d has %lld elements, above the limit of %lld", (int)i, (long long)n,
                       (long long)k->max_elements);
  if (mgopt_dtype_nbytes(dt, n) < 0) return mgopt__k_no(k, "output %d is too large", (int)i);
  st = &k->op->outs[i]->type;
  if (st->kind != MGOPT_TYPE_TENSOR) return mgopt__k_no(k, "output %d is not declared a tensor", (int)i);
  if (st->dtype != MGOPT_DT_UNKNOWN && st->dtype != (uint8_t)dt)
    return mgopt__k_no(k, "output %d is %s, declared %s", (int)i, mgopt_dtype_name(dt),
                       mgopt_dtype_name((mgopt_dtype)st->dtype));
  if (st->rank >= 0) {
    if (st->rank != rank)
      return mgopt__k_no(k, "output %d has rank %d, declared %d", (int)i, (int)rank, (int)st->rank);
    for (d = 0; d < rank; d++)
      if (st->dims && mgopt_dim_is_static(st->dims[d]) && st->dims[d].v != shape[d])
        return mgopt__k_no(k, "output %d dim %d is %lld, declared %lld", (int)i, (int)d, (long long)shape[d],
                           (long long)st->dims[d].v);
  }
  return MGOPT__K_OK;
}

static int mgopt__k_out_alloc(mgopt__kctx *k, int32_t i, mgopt_dtype dt, int32_t rank,
                              const int64_t *shape, void **data, int zero) {
  mgopt_tensor *t;
  int r = mgopt__k_out_check(k, i, dt, rank, shape);
  if (r != MGOPT__K_OK) return r;
  t = k->heap ? mgopt__ev_tensor_alloc(k->p, dt, rank, shape, zero) : mgopt__tensor_new_data(k->p, dt, rank, shape, zero);
  if (!t) return MGOPT__K_OOM;
  k->out[i] = t;
  if (data) *data = t->data;
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__k_out_view(mgopt__kctx *k, int32_t i, mgopt_tensor *x, size_t offset, int32_t rank,
                                     const int64_t *shape) {
  mgopt_tensor *t;
  const uint8_t *src;
  int r = mgopt__k_out_check(k, i, (mgopt_dtype)x->dtype, rank, shape);
  if (r != MGOPT__K_OK) return r;
  if (!k->heap) {
    t = mgopt__tensor_view(k->p, x, offset, rank, shape);
    if (!t) return MGOPT__K_OOM;
    k->out[i] = t;
    return MGOPT__K_OK;
  }
  src = (const uint8_t *)mgopt__k_data(k, x);
  t = mgopt__ev_tensor_alloc(k->p, (mgopt_dtype)x->dtype, rank, shape, 0);
  if (!src || !t || offset > x->nbytes || t->nbytes > x->nbytes - offset) {
    k->out[i] = t; /* freed by the caller with the other outputs */
    return t && src ? mgopt__k_no(k, "output %d does not fit in its operand", (int)i) : MGOPT__K_OOM;
  }
  k->out[i] = t;
  if (t->nbytes) memcpy(t->data, src + offset, t->nbytes);
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__k_out(mgopt__kctx *k, int32_t i, mgopt_dtype dt, int32_t rank,
                                const int64_t *shape, void **data) {
  return mgopt__k_out_alloc(k, i, dt, rank, shape, data, 1);
}

MGOPT__PRIVATE int mgopt__k_out_full(mgopt__kctx *k, int32_t i, mgopt_dtype dt, int32_t rank,
                                     const int64_t *shape, void **data) {
  return mgopt__k_out_alloc(k, i, dt, rank, shape, data, 0);
}

/* ---------------------------------------------------------------- loading */

/* Typed widening loops: one per source layout, vectorizable. */
#define MGOPT__K_WIDEN(SRC_T, DST_T)                                                  \
  do {                                                                                \
    const SRC_T *MGOPT_RESTRICT s_ = (const SRC_T *)src;                              \
    DST_T *MGOPT_RESTRICT d_ = (DST_T *)dst;                                          \
    for (i = 0; i < n; i++) d_[i] = (DST_T)s_[i];                                     \
  } while (0)

static int mgopt__k_load_f32(mgopt_dtype dt, const void *src, int64_t n, float *dst) {
  int64_t i;
  switch (dt) {
    case MGOPT_DT_FP32: memcpy(dst, src, (size_t)n * 4); return 1;
    case MGOPT_DT_FP16: {
      const uint16_t *s = (const uint16_t *)src;
      for (i = 0; i < n; i++) dst[i] = mgopt_f16_to_f32(s[i]);
      return 1;
    }
    case MGOPT_DT_BF16: {
      const uint16_t *s = (const uint16_t *)src;
      for (i = 0; i < n; i++) dst[i] = mgopt_bf16_to_f32(s[i]);
      return 1;
    }
    case MGOPT_DT_FP64: MGOPT__K_WIDEN(double, float); return 1;
    case MGOPT_DT_BOOL: case MGOPT_DT_UINT8: MGOPT__K_WIDEN(uint8_t, float); return 1;
    case MGOPT_DT_INT8: MGOPT__K_WIDEN(int8_t, float); return 1;
    case MGOPT_DT_INT16: MGOPT__K_WIDEN(int16_t, float); return 1;
    case MGOPT_DT_UINT16: MGOPT__K_WIDEN(uint16_t, float); return 1;
    case MGOPT_DT_INT32: MGOPT__K_WIDEN(int32_t, float); return 1;
    case MGOPT_DT_UINT32: MGOPT__K_WIDEN(uint32_t, float); return 1;
    case MGOPT_DT_INT64: MGOPT__K_WIDEN(int64_t, float); return 1;
    case MGOPT_DT_UINT64: MGOPT__K_WIDEN(uint64_t, float); return 1;
    case MGOPT_DT_INT4: {
      const uint8_t *s = (const uint8_t *)src;
      for (i = 0; i < n; i++) {
        int v = (int)mgopt__k_bits(s, i, 4);
        dst[i] = (float)(v >= 8 ? v - 16 : v);
      }
      return 1;
    }
    case MGOPT_DT_UINT1: case MGOPT_DT_UINT2: case MGOPT_DT_UINT3: case MGOPT_DT_UINT4:
    case MGOPT_DT_UINT6: {
      const uint8_t *s = (const uint8_t *)src;
      int b = mgopt_dtype_bits(dt);
      for (i = 0; i < n; i++) dst[i] = (float)mgopt__k_bits(s, i, b);
      return 1;
    }
    default: return 0;
  }
}

static int mgopt__k_load_f64(mgopt_dtype dt, const void *src, int64_t n, double *dst) {
  int64_t i;
  switch (dt) {
    case MGOPT_DT_FP64: memcpy(dst, src, (size_t)n * 8); return 1;
    case MGOPT_DT_FP32: MGOPT__K_WIDEN(float, double); return 1;
    case MGOPT_DT_FP16: {
      const uint16_t *s = (const uint16_t *)src;
      for (i = 0; i < n; i++) dst[i] = mgopt_f16_to_f32(s[i]);
      return 1;
    }
    case MGOPT_DT_BF16: {
      const uint16_t *s = (const uint16_t *)src;
      for (i = 0; i < n; i++) dst[i] = mgopt_bf16_to_f32(s[i]);
      return 1;
    }
    case MGOPT_DT_BOOL: case MGOPT_DT_UINT8: MGOPT__K_WIDEN(uint8_t, double); return 1;
    case MGOPT_DT_INT8: MGOPT__K_WIDEN(int8_t, double); return 1;
    case MGOPT_DT_INT16: MGOPT__K_WIDEN(int16_t, double); return 1;
    case MGOPT_DT_UINT16: MGOPT__K_WIDEN(uint16_t, double); return 1;
    case MGOPT_DT_INT32: MGOPT__K_WIDEN(int32_t, double); return 1;
    case MGOPT_DT_UINT32: MGOPT__K_WIDEN(uint32_t, double); return 1;
    case MGOPT_DT_INT64: MGOPT__K_WIDEN(int64_t, double); return 1;
    case MGOPT_DT_UINT64: MGOPT__K_WIDEN(uint64_t, double); return 1;
    default: return 0;
  }
}

/* Integers (sub-byte ones included) and bool only: floats never silently truncate. */
static int mgopt__k_load_i64(mgopt_dtype dt, const void *src, int64_t n, int64_t *dst) {
  int64_t i;
  switch (dt) {
    case MGOPT_DT_INT64: memcpy(dst, src, (size_t)n * 8); return 1;
    case MGOPT_DT_BOOL: case MGOPT_DT_UINT8: MGOPT__K_WIDEN(uint8_t, int64_t); return 1;
    case MGOPT_DT_INT8: MGOPT__K_WIDEN(int8_t, int64_t); return 1;
    case MGOPT_DT_INT16: MGOPT__K_WIDEN(int16_t, int64_t); return 1;
    case MGOPT_DT_UINT16: MGOPT__K_WIDEN(uint16_t, int64_t); return 1;
    case MGOPT_DT_INT32: MGOPT__K_WIDEN(int32_t, int64_t); return 1;
    case MGOPT_DT_UINT32: MGOPT__K_WIDEN(uint32_t, int64_t); return 1;
    case MGOPT_DT_UINT64: {
      const uint64_t *s = (const uint64_t *)src;
      for (i = 0; i < n; i++) {
        if (s[i] > (uint64_t)INT64_MAX) return 0;
        dst[i] = (int64_t)s[i];
      }
      return 1;
    }
    case MGOPT_DT_INT4: {
      const uint8_t *s = (const uint8_t *)src;
      for (i = 0; i < n; i++) {
        int64_t v = (int64_t)mgopt__k_bits(s, i, 4);
        dst[i] = v >= 8 ? v - 16 : v;
      }
      return 1;
    }
    case MGOPT_DT_UINT1: case MGOPT_DT_UINT2: case MGOPT_DT_UINT3: case MGOPT_DT_UINT4:
    case MGOPT_DT_UINT6: {
      const uint8_t *s = (const uint8_t *)src;
      int b = mgopt_dtype_bits(dt);
      for (i = 0; i < n; i++) dst[i] = (int64_t)mgopt__k_bits(s, i, b);
      return 1;
    }
    default: return 0;
  }
}

/* Truth values of any numeric dtype (NaN is true, as in numpy). */
static int mgopt__k_load_bool(mgopt_dtype dt, const void *src, int64_t n, uint8_t *dst) {
  int64_t i;
  size_t es = mgopt__k_esize(dt);
  const uint8_t *s = (const uint8_t *)src;
  if (dt == MGOPT_DT_BOOL) {
    for (i = 0; i < n; i++) dst[i] = s[i] != 0;
    return 1;
  }
  if (dt == MGOPT_DT_FP16 || dt == MGOPT_DT_BF16) {
    /* +0 and -0 are the only false values */
    const uint16_t *h = (const uint16_t *)src;
    for (i = 0; i < n; i++) dst[i] = (h[i] & 0x7fffu) != 0;
    return 1;
  }
  if (dt == MGOPT_DT_FP32) {
    const float *f = (const float *)src;
    for (i = 0; i < n; i++) dst[i] = f[i] != 0.0f;
    return 1;
  }
  if (dt == MGOPT_DT_FP64) {
    const double *f = (const double *)src;
    for (i = 0; i < n; i++) dst[i] = f[i] != 0.0;
    return 1;
  }
  if (mgopt__k_lane(dt) != MGOPT__LANE_I64 || !es) return 0;
  for (i = 0; i < n; i++) {
    size_t b;
    uint8_t any = 0;
    for (b = 0; b < es; b++) any |= s[(size_t)i * es + b];
    dst[i] = any != 0;
  }
  return 1;
}

MGOPT__PRIVATE int mgopt__k_load(mgopt__kctx *k, mgopt_tensor *t, int lane, void *dst) {
  const void *src = mgopt__k_data(k, t);
  mgopt_dtype dt = (mgopt_dtype)t->dtype;
  int ok;
  if (!src) return MGOPT__K_OOM;
  switch (lane) {
    case MGOPT__LANE_F32: ok = mgopt__k_load_f32(dt, src, t->numel, (float *)dst); break;
    case MGOPT__LANE_F64: ok = mgopt__k_load_f64(dt, src, t->numel, (double *)dst); break;
    case MGOPT__LANE_I64: ok = mgopt__k_load_i64(dt, src, t->numel, (int64_t *)dst); break;
    case MGOPT__LANE_BOOL: ok = mgopt__k_load_bool(dt, src, t->numel, (uint8_t *)dst); break;
    default: ok = 0;
  }
  if (!ok)
    return mgopt__k_no(k, "a %s operand cannot be computed in the %s lane", mgopt_dtype_name(dt),
                       lane == MGOPT__LANE_F32 ? "fp32" : lane == MGOPT__LANE_F64 ? "fp64"
                       : lane == MGOPT__LANE_I64 ? "integer" : lane == MGOPT__LANE_BOOL ? "bool" : "no");
  return MGOPT__K_OK;
}

static int mgopt__k_same_shape(int32_t ra, const int64_t *a, int32_t rb, const int64_t *b) {
  int32_t i;
  if (ra != rb) return 0;
  for (i = 0; i < ra; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

MGOPT__PRIVATE int mgopt__k_load_bcast(mgopt__kctx *k, mgopt_tensor *t, int lane, int32_t orank,
                                       const int64_t *oshape, int64_t n, void **out) {
  size_t es = mgopt__k_lane_size(lane);
  void *tmp = mgopt__k_scratch(k, t->numel, es), *full;
  int r;
  if (!tmp) return MGOPT__K_OOM;
  r = mgopt__k_load(k, t, lane, tmp);
  if (r != MGOPT__K_OK) return r;
  if (mgopt__k_same_shape(t->rank, t->shape, orank, oshape)) {
    *out = tmp;
    return MGOPT__K_OK;
  }
  full = mgopt__k_scratch(k, n, es);
  if (!full) return MGOPT__K_OOM;
  mgopt__k_bcast(full, tmp, es, t->rank, t->shape, orank, oshape);
  *out = full;
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- storing */

/* Rounds d to float keeping a sticky bit in the last place (round to odd), so
   that a second rounding to fp16 / bf16 is correctly rounded from d. */
static float mgopt__k_f32_odd(double d) {
  float f = (float)d;
  uint32_t u;
  if (f != f || (double)f == d || f - f != 0.0f) return f; /* NaN, exact or infinite */
  if (fabs((double)f) > fabs(d)) {
    memcpy(&u, &f, 4);
    u -= 1; /* one step toward zero (f != 0 here since d != 0 rounds to it inexactly) */
    memcpy(&f, &u, 4);
  }
  memcpy(&u, &f, 4);
  u |= 1u;
  memcpy(&f, &u, 4);
  return f;
}

MGOPT__PRIVATE void mgopt__k_store_f64_at(mgopt_dtype dt, void *dst, int64_t i, double v) {
  uint8_t *d = (uint8_t *)dst;
  switch (dt) {
    case MGOPT_DT_FP64: memcpy(d + 8 * i, &v, 8); return;
    case MGOPT_DT_FP32: { float f = (float)v; memcpy(d + 4 * i, &f, 4); return; }
    case MGOPT_DT_FP16: { uint16_t h = mgopt_f32_to_f16(mgopt__k_f32_odd(v)); memcpy(d + 2 * i, &h, 2); return; }
    case MGOPT_DT_BF16: { uint16_t h = mgopt_f32_to_bf16(mgopt__k_f32_odd(v)); memcpy(d + 2 * i, &h, 2); return; }
    default: return;
  }
}

MGOPT__PRIVATE void mgopt__k_store_i64_at(mgopt_dtype dt, void *dst, int64_t i, int64_t v) {
  uint8_t *d = (uint8_t *)dst;
  switch (dt) {
    case MGOPT_DT_BOOL: d[i] = v != 0; return;
    case MGOPT_DT_INT8: case MGOPT_DT_UINT8: d[i] = (uint8_t)(uint64_t)v; return;
    case MGOPT_DT_INT16: case MGOPT_DT_UINT16: { uint16_t x = (uint16_t)(uint64_t)v; memcpy(d + 2 * i, &x, 2); return; }
    case MGOPT_DT_INT32: case MGOPT_DT_UINT32: { uint32_t x = (uint32_t)(uint64_t)v; memcpy(d + 4 * i, &x, 4); return; }
    case MGOPT_DT_INT64: case MGOPT_DT_UINT64: memcpy(d + 8 * i, &v, 8); return;
    case MGOPT_DT_INT4: case MGOPT_DT_UINT1: case MGOPT_DT_UINT2: case MGOPT_DT_UINT3:
    case MGOPT_DT_UINT4: case MGOPT_DT_UINT6: {
      int b = mgopt_dtype_bits(dt);
      mgopt__k_put_bits(d, i, b, (uint64_t)v & ((1u << b) - 1u));
      return;
    }
    default: return;
  }
}

#define MGOPT__K_NARROW(SRC_T, DST_T)                                                 \
  do {                                                                                \
    const SRC_T *MGOPT_RESTRICT s_ = (const SRC_T *)src;                              \
    DST_T *MGOPT_RESTRICT d_ = (DST_T *)dst;                                          \
    for (i = 0; i < n; i++) d_[i] = (DST_T)s_[i];                                     \
  } while (0)

MGOPT__PRIVATE void mgopt__k_store(int lane, const void *src, int64_t n, mgopt_dtype dt, void *dst) {
  int64_t i;
  if (lane == MGOPT__LANE_F32) {
    const float *s = (const float *)src;
    switch (dt) {
      case MGOPT_DT_FP32: memcpy(dst, src, (size_t)n * 4); return;
      case MGOPT_DT_FP16: {
        uint16_t *d = (uint16_t *)dst;
        for (i = 0; i < n; i++) d[i] = mgopt_f32_to_f16(s[i]);
        return;
      }
      case MGOPT_DT_BF16: {
        uint16_t *d = (uint16_t *)dst;
        for (i = 0; i < n; i++) d[i] = mgopt_f32_to_bf16(s[i]);
        return;
      }
      case MGOPT_DT_FP64: MGOPT__K_NARROW(float, double); return;
      default: return;
    }
  }
  if (lane == MGOPT__LANE_F64) {
    const double *s = (const double *)src;
    if (dt == MGOPT_DT_FP64) {
      memcpy(dst, src, (size_t)n * 8);
      return;
    }
    for (i = 0; i < n; i++) mgopt__k_store_f64_at(dt, dst, i, s[i]);
    return;
  }
  if (lane == MGOPT__LANE_BOOL) {
    const uint8_t *s = (const uint8_t *)src;
    if (dt == MGOPT_DT_BOOL) {
      memcpy(dst, src, (size_t)n);
      return;
    }
    for (i = 0; i < n; i++) mgopt__k_store_i64_at(dt, dst, i, s[i]);
    return;
  }
  if (lane == MGOPT__LANE_I64) {
    const int64_t *s = (const int64_t *)src;
    switch (dt) {
      case MGOPT_DT_INT64: case MGOPT_DT_UINT64: memcpy(dst, src, (size_t)n * 8); return;
      case MGOPT_DT_INT32: case MGOPT_DT_UINT32: {
        uint32_t *d = (uint32_t *)dst;
        for (i = 0; i < n; i++) d[i] = (uint32_t)(uint64_t)s[i];
        return;
      }
      case MGOPT_DT_INT16: case MGOPT_DT_UINT16: {
        uint16_t *d = (uint16_t *)dst;
        for (i = 0; i < n; i++) d[i] = (uint16_t)(uint64_t)s[i];
        return;
      }
      case MGOPT_DT_INT8: case MGOPT_DT_UINT8: {
        uint8_t *d = (uint8_t *)dst;
        for (i = 0; i < n; i++) d[i] = (uint8_t)(uint64_t)s[i];
        return;
      }
      default:
        for (i = 0; i < n; i++) mgopt__k_store_i64_at(dt, dst, i, s[i]);
        return;
    }
  }
}

/* ---------------------------------------------------------------- shapes and iteration */

MGOPT__PRIVATE int64_t mgopt__k_numel(int32_t rank, const int64_t *shape) {
  int64_t n = 1;
  int32_t i;
  for (i = 0; i < rank; i++)
    if (shape[i] < 0 || !mgopt__mul_i64(n, shape[i], &n)) return -1;
  return n;
}

MGOPT__PRIVATE void mgopt__k_strides(int32_t rank, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  int32_t i;
  for (i = rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i];
  }
}

MGOPT__PRIVATE int mgopt__k_bcast_shape(int32_t ra, const int64_t *a, int32_t rb, const int64_t *b,
                                        int32_t *ro, int64_t *o) {
  int32_t r = ra > rb ? ra : rb, i;
  if (r > MGOPT_MAX_RANK) return 0;
  for (i = 0; i < r; i++) {
    int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
    int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
    if (da == db || db == 1) o[i] = da;
    else if (da == 1) o[i] = db;
    else return 0;
  }
  *ro = r;
  return 1;
}

/* The inner loop of a strided copy, by element size so that it compiles to
   plain loads and stores. */
#define MGOPT__K_COPY_ROW(T)                                                          \
  do {                                                                                \
    T *MGOPT_RESTRICT d_ = (T *)dst + done;                                           \
    const T *s_ = (const T *)src + off;                                               \
    if (st == 1) for (j = 0; j < len; j++) d_[j] = s_[j];                             \
    else if (st == 0) { T v_ = s_[0]; for (j = 0; j < len; j++) d_[j] = v_; }         \
    else for (j = 0; j < len; j++) d_[j] = s_[j * st];                                \
  } while (0)

MGOPT__PRIVATE void mgopt__k_strided(void *dst, const void *src, size_t esz, int32_t rank,
                                     const int64_t *shape, const int64_t *stride, int64_t base) {
  int64_t idx[2 * MGOPT_MAX_RANK];
  int64_t n = 1, done = 0, len, st, off = base, j;
  int32_t d;
  for (d = 0; d < rank; d++) n *= shape[d];
  if (n == 0) return;
  if (rank == 0) {
    memcpy(dst, (const uint8_t *)src + (size_t)base * esz, esz);
    return;
  }
  len = shape[rank - 1];
  st = stride[rank - 1];
  for (d = 0; d < rank; d++) idx[d] = 0;
  while (done < n) {
    switch (esz) {
      case 1: MGOPT__K_COPY_ROW(uint8_t); break;
      case 2: MGOPT__K_COPY_ROW(uint16_t); break;
      case 4: MGOPT__K_COPY_ROW(uint32_t); break;
      case 8: MGOPT__K_COPY_ROW(uint64_t); break;
      default:
        for (j = 0; j < len; j++)
          memcpy((uint8_t *)dst + (size_t)(done + j) * esz,
                 (const uint8_t *)src + (size_t)(off + j * st) * esz, esz);
    }
    done += len;
    /* odometer over the outer dimensions */
    for (d = rank - 2; d >= 0; d--) {
      off += stride[d];
      if (++idx[d] < shape[d]) break;
      off -= stride[d] * shape[d];
      idx[d] = 0;
    }
  }
}

MGOPT__PRIVATE void mgopt__k_bcast(void *dst, const void *src, size_t esz, int32_t srank,
                                   const int64_t *sshape, int32_t orank, const int64_t *oshape) {
  int64_t sst[MGOPT_MAX_RANK], st[MGOPT_MAX_RANK];
  int32_t i, lead = orank - srank;
  mgopt__k_strides(srank, sshape, sst);
  for (i = 0; i < orank; i++) {
    if (i < lead) st[i] = 0;
    else st[i] = (sshape[i - lead] == 1 && oshape[i] != 1) ? 0 : sst[i - lead];
  }
  mgopt__k_strided(dst, src, esz, orank, oshape, st, 0);
}
/* src/kernels/elementwise.c — folding kernels for elementwise ops: binary with broadcasting, unary, select, cast.

   Numerics. fp16 and bf16 compute in float and round once to nearest even when
   stored, which equals numpy at that dtype for every single operation (add,
   sub, mul, div, sqrt, comparisons, min/max, floor/ceil/round, and the libm
   functions that numpy also evaluates in float). Composite ops are rounded as
   numpy rounds them where it matters: `x + epsilon` of log / rsqrt / inverse
   is rounded to the dtype before the function, and rsqrt rounds its square
   root. Other composites (sigmoid, silu, softplus, elu, gelu) are rounded once
   at the end, which can differ from numpy's per-step fp16 rounding by one ulp.
   erf and every gelu mode are evaluated in double, then rounded (MIL's value
   inference uses Python's math.erf and float64 constants). acos, asin, atan,
   atanh, cosh, sinh and tan are evaluated in double by the C library and
   rounded once to float (fp16 / bf16: then once more to the dtype, a double
   rounding that can differ from a direct one by one ulp on a tie); NaN
   propagates, a domain error gives NaN (acos / asin outside [-1, 1], atanh
   outside [-1, 1]), atanh(+-1) is +-inf, cosh / sinh overflow to +-inf.
   softsign is x / (1 + |x|) in double, rounded once. sigmoid_hard is
   min(max(alpha * x + beta, 0), 1) in the dtype's arithmetic (each step
   rounded, no fused multiply-add), NaN propagating, as MIL's value inference;
   alpha and beta are first rounded to the dtype. thresholded_relu is
   x >= alpha ? x : 0 (MIL's formula; NaN gives 0), alpha rounded to the dtype. Transcendental
   functions use the C library (expf, logf, ...), whose last-place accuracy may
   differ from numpy's own SIMD routines. Integers wrap around like numpy's
   fixed-width arithmetic; integer division or modulo by zero, INT64_MIN / -1
   and negative integer exponents are not folded. pow whose exponent has
   another dtype than the base is computed in double (see mgopt__ke_pow_mixed).
   clip on integers clamps to whole-number bounds (-inf / +inf: no bound; the
   result equals numpy's clip, min(max(x, alpha), beta)). */

typedef struct mgopt__ke_par {
  double eps, alpha, beta;
  int mode; /* gelu: 0 exact, 1 tanh, 2 sigmoid */
  mgopt_dtype dt;
} mgopt__ke_par;

/* ---------------------------------------------------------------- float helpers */

/* floor division and remainder as numpy's divmod for floats (Python semantics). */
#define MGOPT__KE_DIVMOD(NAME, T, FMOD, FLOOR, COPYSIGN)                              \
  static T NAME(T a, T b, T *modp) {                                                  \
    T mod, div, fl;                                                                   \
    if (b == (T)0) {                                                                  \
      *modp = FMOD(a, b);                                                             \
      return a / b;                                                                   \
    }                                                                                 \
    mod = FMOD(a, b);                                                                 \
    div = (a - mod) / b;                                                              \
    if (mod != (T)0) {                                                                \
      if ((b < (T)0) != (mod < (T)0)) {                                               \
        mod += b;                                                                     \
        div -= (T)1;                                                                  \
      }                                                                               \
    } else {                                                                          \
      mod = COPYSIGN((T)0, b);                                                        \
    }                                                                                 \
    if (div != (T)0) {                                                                \
      fl = FLOOR(div);                                                                \
      if (div - fl > (T)0.5) fl += (T)1;                                              \
    } else {                                                                          \
      fl = COPYSIGN((T)0, a / b);                                                     \
    }                                                                                 \
    *modp = mod;                                                                      \
    return fl;                                                                        \
  }
MGOPT__KE_DIVMOD(mgopt__ke_divmodf, float, fmodf, floorf, copysignf)
MGOPT__KE_DIVMOD(mgopt__ke_divmod, double, fmod, floor, copysign)

/* numpy's round: half to even, independent of the floating-point environment. */
#define MGOPT__KE_ROUND(NAME, T, FLOOR, FMOD)                                         \
  static T NAME(T a) {                                                                \
    T r = FLOOR(a), diff = a - r;                                                     \
    if (a != a || r == a) return a;                                                   \
    if (diff > (T)0.5 || (diff == (T)0.5 && FMOD(r, (T)2) != (T)0)) r += (T)1;        \
    if (r == (T)0) r = a < (T)0 ? -(T)0 : (T)0;                                       \
    return r;                                                                         \
  }
MGOPT__KE_ROUND(mgopt__ke_roundf, float, floorf, fmodf)
MGOPT__KE_ROUND(mgopt__ke_round, double, floor, fmod)

static double mgopt__ke_gelu(double x, int mode) {
  MGOPT__K_NOCONTRACT
  if (mode == 1) {
    double a = sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + tanh(a));
  }
  if (mode == 2) return x * (1.0 / (1.0 + exp(-(1.702 * x))));
  return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
}

/* ---------------------------------------------------------------- binary loops */

/* One function per float lane: FN(x) names the libm function for the lane. */
#define MGOPT__KE_BIN_FLOAT(NAME, T, POW, DIVMOD)                                     \
  static void NAME(int32_t kind, const T *MGOPT_RESTRICT a, const T *MGOPT_RESTRICT b,\
                   T *MGOPT_RESTRICT r, int64_t n) {                                  \
    int64_t i;                                                                        \
    T m;                                                                              \
    switch (kind) {                                                                   \
      case MGOPT_OP_add: for (i = 0; i < n; i++) r[i] = a[i] + b[i]; break;           \
      case MGOPT_OP_sub: for (i = 0; i < n; i++) r[i] = a[i] - b[i]; break;           \
      case MGOPT_OP_mul: for (i = 0; i < n; i++) r[i] = a[i] * b[i]; break;           \
      case MGOPT_OP_real_div: for (i = 0; i < n; i++) r[i] = a[i] / b[i]; break;      \
      case MGOPT_OP_pow: for (i = 0; i < n; i++) r[i] = POW(a[i], b[i]); break;       \
      case MGOPT_OP_maximum:                                                          \
        for (i = 0; i < n; i++) r[i] = (a[i] >= b[i] || a[i] != a[i]) ? a[i] : b[i];  \
        break;                                                                        \
      case MGOPT_OP_minimum:                                                          \
        for (i = 0; i < n; i++) r[i] = (a[i] <= b[i] || a[i] != a[i]) ? a[i] : b[i];  \
        break;                                                                        \
      case MGOPT_OP_floor_div: for (i = 0; i < n; i++) r[i] = DIVMOD(a[i], b[i], &m); break; \
      case MGOPT_OP_mod:                                                              \
        for (i = 0; i < n; i++) {                                                     \
          DIVMOD(a[i], b[i], &m);                                                     \
          r[i] = m;                                                                   \
        }                                                                             \
        break;                                                                        \
      default: break;                                                                 \
    }                                                                                 \
  }
MGOPT__KE_BIN_FLOAT(mgopt__ke_bin_f32, float, powf, mgopt__ke_divmodf)
MGOPT__KE_BIN_FLOAT(mgopt__ke_bin_f64, double, pow, mgopt__ke_divmod)

/* Integer lane: wraps modulo 2^64 (then truncated to the dtype, which equals
   wrapping at the dtype's width). Returns 0 when a value is undefined. */
static int mgopt__ke_bin_i64(int32_t kind, const int64_t *MGOPT_RESTRICT a,
                             const int64_t *MGOPT_RESTRICT b, int64_t *MGOPT_RESTRICT r, int64_t n) {
  int64_t i;
  switch (kind) {
    case MGOPT_OP_add:
      for (i = 0; i < n; i++) r[i] = (int64_t)((uint64_t)a[i] + (uint64_t)b[i]);
      return 1;
    case MGOPT_OP_sub:
      for (i = 0; i < n; i++) r[i] = (int64_t)((uint64_t)a[i] - (uint64_t)b[i]);
      return 1;
    case MGOPT_OP_mul:
      for (i = 0; i < n; i++) r[i] = (int64_t)((uint64_t)a[i] * (uint64_t)b[i]);
      return 1;
    case MGOPT_OP_maximum: for (i = 0; i < n; i++) r[i] = a[i] >= b[i] ? a[i] : b[i]; return 1;
    case MGOPT_OP_minimum: for (i = 0; i < n; i++) r[i] = a[i] <= b[i] ? a[i] : b[i]; return 1;
    case MGOPT_OP_floor_div:
    case MGOPT_OP_mod:
      for (i = 0; i < n; i++) {
        int64_t x = a[i], y = b[i], q, m;
        if (y == 0) return 0;
        if (y == -1) { /* avoids INT64_MIN / -1 */
          if (x == INT64_MIN && kind == MGOPT_OP_floor_div) return 0;
          q = (int64_t)(0 - (uint64_t)x);
          m = 0;
        } else {
          q = x / y;
          m = x % y;
          if (m != 0 && ((m < 0) != (y < 0))) {
            q -= 1;
            m += y;
          }
        }
        r[i] = kind == MGOPT_OP_floor_div ? q : m;
      }
      return 1;
    case MGOPT_OP_pow:
      for (i = 0; i < n; i++) {
        uint64_t base = (uint64_t)a[i], acc = 1;
        int64_t e = b[i];
        if (e < 0) return 0;
        while (e) {
          if (e & 1) acc *= base;
          base *= base;
          e >>= 1;
        }
        r[i] = (int64_t)acc;
      }
      return 1;
    default: return 0;
  }
}

#define MGOPT__KE_CMP(T)                                                              \
  do {                                                                                \
    const T *MGOPT_RESTRICT a = (const T *)va;                                        \
    const T *MGOPT_RESTRICT b = (const T *)vb;                                        \
    switch (kind) {                                                                   \
      case MGOPT_OP_equal: for (i = 0; i < n; i++) r[i] = a[i] == b[i]; break;        \
      case MGOPT_OP_not_equal: for (i = 0; i < n; i++) r[i] = a[i] != b[i]; break;    \
      case MGOPT_OP_less: for (i = 0; i < n; i++) r[i] = a[i] < b[i]; break;          \
      case MGOPT_OP_less_equal: for (i = 0; i < n; i++) r[i] = a[i] <= b[i]; break;   \
      case MGOPT_OP_greater: for (i = 0; i < n; i++) r[i] = a[i] > b[i]; break;       \
      case MGOPT_OP_greater_equal: for (i = 0; i < n; i++) r[i] = a[i] >= b[i]; break;\
      case MGOPT_OP_logical_and: for (i = 0; i < n; i++) r[i] = a[i] & b[i]; break;   \
      case MGOPT_OP_logical_or: for (i = 0; i < n; i++) r[i] = a[i] | b[i]; break;    \
      case MGOPT_OP_logical_xor: for (i = 0; i < n; i++) r[i] = a[i] ^ b[i]; break;   \
      default: break;                                                                 \
    }                                                                                 \
  } while (0)

static void mgopt__ke_cmp(int lane, int32_t kind, const void *va, const void *vb,
                          uint8_t *MGOPT_RESTRICT r, int64_t n) {
  int64_t i;
  if (lane == MGOPT__LANE_F32) {
    const float *MGOPT_RESTRICT a = (const float *)va, *MGOPT_RESTRICT b = (const float *)vb;
    switch (kind) {
      case MGOPT_OP_equal: for (i = 0; i < n; i++) r[i] = a[i] == b[i]; break;
      case MGOPT_OP_not_equal: for (i = 0; i < n; i++) r[i] = a[i] != b[i]; break;
      case MGOPT_OP_less: for (i = 0; i < n; i++) r[i] = a[i] < b[i]; break;
      case MGOPT_OP_less_equal: for (i = 0; i < n; i++) r[i] = a[i] <= b[i]; break;
      case MGOPT_OP_greater: for (i = 0; i < n; i++) r[i] = a[i] > b[i]; break;
      case MGOPT_OP_greater_equal: for (i = 0; i < n; i++) r[i] = a[i] >= b[i]; break;
      default: break;
    }
  } else if (lane == MGOPT__LANE_F64) {
    const double *MGOPT_RESTRICT a = (const double *)va, *MGOPT_RESTRICT b = (const double *)vb;
    switch (kind) {
      case MGOPT_OP_equal: for (i = 0; i < n; i++) r[i] = a[i] == b[i]; break;
      case MGOPT_OP_not_equal: for (i = 0; i < n; i++) r[i] = a[i] != b[i]; break;
      case MGOPT_OP_less: for (i = 0; i < n; i++) r[i] = a[i] < b[i]; break;
      case MGOPT_OP_less_equal: for (i = 0; i < n; i++) r[i] = a[i] <= b[i]; break;
      case MGOPT_OP_greater: for (i = 0; i < n; i++) r[i] = a[i] > b[i]; break;
      case MGOPT_OP_greater_equal: for (i = 0; i < n; i++) r[i] = a[i] >= b[i]; break;
      default: break;
    }
  } else if (lane == MGOPT__LANE_I64) {
    MGOPT__KE_CMP(int64_t);
  } else {
    MGOPT__KE_CMP(uint8_t);
  }
}

static int mgopt__ke_is_cmp(int32_t kind) {
  return kind == MGOPT_OP_equal || kind == MGOPT_OP_not_equal || kind == MGOPT_OP_less ||
         kind == MGOPT_OP_less_equal || kind == MGOPT_OP_greater || kind == MGOPT_OP_greater_equal;
}

static int mgopt__ke_is_logical(int32_t kind) {
  return kind == MGOPT_OP_logical_and || kind == MGOPT_OP_logical_or || kind == MGOPT_OP_logical_xor;
}

/* pow(x, y) whose exponent's dtype differs from the base's: x ** y in double,
   stored in x's dtype (a float rounded once; an integer truncated toward zero,
   NaN or out of range not folded). An integer base with an integer exponent
   uses exact integer powers (wrapping at 64 bits, then at the dtype's width). */
static int mgopt__ke_pow_mixed(mgopt__kctx *k, mgopt_tensor *x, mgopt_tensor *y) {
  int32_t orank;
  int64_t oshape[MGOPT_MAX_RANK], n, i, lo = 0, hi = 0;
  mgopt_dtype dt = (mgopt_dtype)x->dtype;
  int lx = mgopt__k_lane(dt), ly = mgopt__k_lane((mgopt_dtype)y->dtype), r;
  void *a, *b, *od;
  double *res;
  if (lx == MGOPT__LANE_NONE || lx == MGOPT__LANE_BOOL || ly == MGOPT__LANE_NONE || ly == MGOPT__LANE_BOOL)
    return MGOPT__K_NO;
  if (!mgopt__k_bcast_shape(x->rank, x->shape, y->rank, y->shape, &orank, oshape))
    return mgopt__k_no(k, "the operand shapes do not broadcast");
  r = mgopt__k_out(k, 0, dt, orank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  n = k->out[0]->numel;
  if (n == 0) return MGOPT__K_OK;
  if (lx == MGOPT__LANE_I64 && ly == MGOPT__LANE_I64) {
    int64_t *ri = (int64_t *)mgopt__k_scratch(k, n, 8);
    r = mgopt__k_load_bcast(k, x, MGOPT__LANE_I64, orank, oshape, n, &a);
    if (r == MGOPT__K_OK) r = mgopt__k_load_bcast(k, y, MGOPT__LANE_I64, orank, oshape, n, &b);
    if (r != MGOPT__K_OK) return r;
    if (!ri) return MGOPT__K_OOM;
    if (!mgopt__ke_bin_i64(MGOPT_OP_pow, (const int64_t *)a, (const int64_t *)b, ri, n))
      return mgopt__k_no(k, "a negative integer exponent");
    mgopt__k_store(MGOPT__LANE_I64, ri, n, dt, od);
    return MGOPT__K_OK;
  }
  r = mgopt__k_load_bcast(k, x, MGOPT__LANE_F64, orank, oshape, n, &a);
  if (r == MGOPT__K_OK) r = mgopt__k_load_bcast(k, y, MGOPT__LANE_F64, orank, oshape, n, &b);
  if (r != MGOPT__K_OK) return r;
  res = (double *)a;
  for (i = 0; i < n; i++) res[i] = pow(res[i], ((const double *)b)[i]);
  if (lx != MGOPT__LANE_I64) {
    mgopt__k_store(MGOPT__LANE_F64, res, n, dt, od);
    return MGOPT__K_OK;
  }
  mgopt__k_int_range(dt, &lo, &hi);
  for (i = 0; i < n; i++) {
    double t = trunc(res[i]);
    if (!(t >= (double)lo && t < (double)hi + 1.0))
      return mgopt__k_no(k, "element %lld (%g) is out of the range of %s", (long long)i, res[i], mgopt_dtype_name(dt));
    mgopt__k_store_i64_at(dt, od, i, (int64_t)t);
  }
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__ke_binary(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  int32_t kind = op->kind, orank;
  mgopt_tensor *x = mgopt__k_operand(k, "x"), *y = mgopt__k_operand(k, "y");
  int64_t oshape[MGOPT_MAX_RANK], n;
  mgopt_dtype dt, odt;
  int lane, r;
  void *a, *b, *res, *od;
  if (x && y && x->dtype != y->dtype && kind == MGOPT_OP_pow) return mgopt__ke_pow_mixed(k, x, y);
  if (!x || !y || x->dtype != y->dtype)
    return x && y ? mgopt__k_no(k, "operands of dtypes %s and %s", mgopt_dtype_name((mgopt_dtype)x->dtype),
                                mgopt_dtype_name((mgopt_dtype)y->dtype))
                  : MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  lane = mgopt__k_lane(dt);
  if (mgopt__ke_is_logical(kind)) {
    if (lane != MGOPT__LANE_BOOL) return MGOPT__K_NO; /* MIL's logical ops take bool only */
    lane = MGOPT__LANE_BOOL;
    odt = MGOPT_DT_BOOL;
  } else if (mgopt__ke_is_cmp(kind)) {
    if (lane == MGOPT__LANE_NONE) return MGOPT__K_NO;
    odt = MGOPT_DT_BOOL;
    if (lane == MGOPT__LANE_BOOL) lane = MGOPT__LANE_I64;
  } else {
    if (lane == MGOPT__LANE_NONE || lane == MGOPT__LANE_BOOL) return MGOPT__K_NO;
    /* MIL types integer real_div as the integer dtype; its value is ambiguous */
    if (lane == MGOPT__LANE_I64 && kind == MGOPT_OP_real_div)
      return mgopt__k_no(k, "real_div of integers has no exact meaning");
    odt = dt;
  }
  if (!mgopt__k_bcast_shape(x->rank, x->shape, y->rank, y->shape, &orank, oshape))
    return mgopt__k_no(k, "the operand shapes do not broadcast");
  r = mgopt__k_out(k, 0, odt, orank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  n = k->out[0]->numel;
  if (n == 0) return MGOPT__K_OK;
  r = mgopt__k_load_bcast(k, x, lane, orank, oshape, n, &a);
  if (r == MGOPT__K_OK) r = mgopt__k_load_bcast(k, y, lane, orank, oshape, n, &b);
  if (r != MGOPT__K_OK) return r;
  if (odt == MGOPT_DT_BOOL) {
    mgopt__ke_cmp(lane, kind, a, b, (uint8_t *)od, n);
    return MGOPT__K_OK;
  }
  res = mgopt__k_scratch(k, n, mgopt__k_lane_size(lane));
  if (!res) return MGOPT__K_OOM;
  if (lane == MGOPT__LANE_F32) {
    mgopt__ke_bin_f32(kind, (const float *)a, (const float *)b, (float *)res, n);
  } else if (lane == MGOPT__LANE_F64) {
    mgopt__ke_bin_f64(kind, (const double *)a, (const double *)b, (double *)res, n);
  } else {
    if (!mgopt__ke_bin_i64(kind, (const int64_t *)a, (const int64_t *)b, (int64_t *)res, n))
      return mgopt__k_no(k, "integer division or modulo by zero, INT64_MIN / -1 or a negative integer exponent");
  }
  mgopt__k_store(lane, res, n, dt, od);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- unary */

#define MGOPT__KE_UN_FLOAT(NAME, T, S, RND, ROUNDFN)                                  \
  static int NAME(int32_t kind, const mgopt__ke_par *u, const T *MGOPT_RESTRICT a,    \
                  T *MGOPT_RESTRICT r, int64_t n) {                                   \
    MGOPT__K_NOCONTRACT                                                               \
    int64_t i;                                                                        \
    const T eps = (T)u->eps, al = (T)u->alpha, be = (T)u->beta;                       \
    switch (kind) {                                                                   \
      case MGOPT_OP_abs: for (i = 0; i < n; i++) r[i] = fabs##S(a[i]); break;         \
      case MGOPT_OP_exp: for (i = 0; i < n; i++) r[i] = exp##S(a[i]); break;          \
      case MGOPT_OP_sqrt: for (i = 0; i < n; i++) r[i] = sqrt##S(a[i]); break;        \
      case MGOPT_OP_log:                                                              \
        for (i = 0; i < n; i++) r[i] = log##S(RND(a[i] + eps));                       \
        break;                                                                        \
      case MGOPT_OP_rsqrt:                                                            \
        for (i = 0; i < n; i++) r[i] = (T)1 / RND(sqrt##S(RND(a[i] + eps)));          \
        break;                                                                        \
      case MGOPT_OP_inverse: for (i = 0; i < n; i++) r[i] = (T)1 / RND(a[i] + eps); break; \
      case MGOPT_OP_square: for (i = 0; i < n; i++) r[i] = a[i] * a[i]; break;        \
      case MGOPT_OP_erf: for (i = 0; i < n; i++) r[i] = (T)erf((double)a[i]); break;  \
      case MGOPT_OP_tanh: for (i = 0; i < n; i++) r[i] = tanh##S(a[i]); break;        \
      case MGOPT_OP_sigmoid:                                                          \
        for (i = 0; i < n; i++) r[i] = (T)1 / ((T)1 + exp##S(-a[i]));                 \
        break;                                                                        \
      case MGOPT_OP_silu:                                                             \
        for (i = 0; i < n; i++) r[i] = a[i] * ((T)1 / ((T)1 + exp##S(-a[i])));        \
        break;                                                                        \
      case MGOPT_OP_relu:                                                             \
        for (i = 0; i < n; i++) r[i] = (a[i] >= (T)0 || a[i] != a[i]) ? a[i] : (T)0;  \
        break;                                                                        \
      case MGOPT_OP_relu6:                                                            \
        for (i = 0; i < n; i++) {                                                     \
          T m = (a[i] >= (T)0 || a[i] != a[i]) ? a[i] : (T)0;                         \
          r[i] = (m <= (T)6 || m != m) ? m : (T)6;                                    \
        }                                                                             \
        break;                                                                        \
      case MGOPT_OP_leaky_relu:                                                       \
        for (i = 0; i < n; i++) r[i] = a[i] < (T)0 ? a[i] * al : a[i];                \
        break;                                                                        \
      case MGOPT_OP_elu:                                                              \
        for (i = 0; i < n; i++) r[i] = a[i] < (T)0 ? al * (exp##S(a[i]) - (T)1) : a[i]; \
        break;                                                                        \
      case MGOPT_OP_gelu:                                                             \
        for (i = 0; i < n; i++) r[i] = (T)mgopt__ke_gelu((double)a[i], u->mode);      \
        break;                                                                        \
      case MGOPT_OP_clip:                                                             \
        for (i = 0; i < n; i++) {                                                     \
          T m = (a[i] >= al || a[i] != a[i]) ? a[i] : al;                             \
          r[i] = (m <= be || m != m) ? m : be;                                        \
        }                                                                             \
        break;                                                                        \
      case MGOPT_OP_floor: for (i = 0; i < n; i++) r[i] = floor##S(a[i]); break;      \
      case MGOPT_OP_ceil: for (i = 0; i < n; i++) r[i] = ceil##S(a[i]); break;        \
      case MGOPT_OP_round: for (i = 0; i < n; i++) r[i] = ROUNDFN(a[i]); break;       \
      case MGOPT_OP_sign:                                                             \
        for (i = 0; i < n; i++)                                                       \
          r[i] = a[i] > (T)0 ? (T)1 : a[i] < (T)0 ? (T)-1 : a[i] == (T)0 ? (T)0 : a[i]; \
        break;                                                                        \
      case MGOPT_OP_sin: for (i = 0; i < n; i++) r[i] = sin##S(a[i]); break;          \
      case MGOPT_OP_cos: for (i = 0; i < n; i++) r[i] = cos##S(a[i]); break;          \
      case MGOPT_OP_softplus:                                                         \
        for (i = 0; i < n; i++)                                                       \
          r[i] = log##S((T)1 + exp##S(-fabs##S(a[i]))) + (a[i] > (T)0 ? a[i] : (T)0); \
        break;                                                                        \
      case MGOPT_OP_acos: for (i = 0; i < n; i++) r[i] = (T)acos((double)a[i]); break; \
      case MGOPT_OP_asin: for (i = 0; i < n; i++) r[i] = (T)asin((double)a[i]); break; \
      case MGOPT_OP_atan: for (i = 0; i < n; i++) r[i] = (T)atan((double)a[i]); break; \
      case MGOPT_OP_atanh: for (i = 0; i < n; i++) r[i] = (T)atanh((double)a[i]); break; \
      case MGOPT_OP_cosh: for (i = 0; i < n; i++) r[i] = (T)cosh((double)a[i]); break; \
      case MGOPT_OP_sinh: for (i = 0; i < n; i++) r[i] = (T)sinh((double)a[i]); break; \
      case MGOPT_OP_tan: for (i = 0; i < n; i++) r[i] = (T)tan((double)a[i]); break;    \
      case MGOPT_OP_sigmoid_hard:                                                     \
        for (i = 0; i < n; i++) {                                                     \
          T t = RND(RND(al * a[i]) + be);                                             \
          t = (t >= (T)0 || t != t) ? t : (T)0;                                       \
          r[i] = (t <= (T)1 || t != t) ? t : (T)1;                                    \
        }                                                                             \
        break;                                                                        \
      case MGOPT_OP_softsign:                                                         \
        for (i = 0; i < n; i++) r[i] = (T)((double)a[i] / (1.0 + fabs((double)a[i]))); \
        break;                                                                        \
      case MGOPT_OP_thresholded_relu:                                                 \
        for (i = 0; i < n; i++) r[i] = a[i] >= al ? a[i] : (T)0;                      \
        break;                                                                        \
      default: return 0;                                                              \
    }                                                                                 \
    return 1;                                                                         \
  }

/* RND rounds an intermediate to the op's dtype (fp16 / bf16), like numpy would. */
#define MGOPT__KE_RND32(v) mgopt__k_rnd(u->dt, (v))
#define MGOPT__KE_RND64(v) (v)
MGOPT__KE_UN_FLOAT(mgopt__ke_un_f32, float, f, MGOPT__KE_RND32, mgopt__ke_roundf)
MGOPT__KE_UN_FLOAT(mgopt__ke_un_f64, double, , MGOPT__KE_RND64, mgopt__ke_round)

static int mgopt__ke_un_i64(int32_t kind, const mgopt__ke_par *u, const int64_t *MGOPT_RESTRICT a,
                            int64_t *MGOPT_RESTRICT r, int64_t n) {
  int64_t i, lo, hi;
  switch (kind) {
    case MGOPT_OP_clip:
      /* bounds: whole numbers (not folded otherwise), -inf / +inf for none */
      if (u->alpha != floor(u->alpha) && u->alpha != -HUGE_VAL) return 0;
      if (u->beta != floor(u->beta) && u->beta != HUGE_VAL) return 0;
      lo = u->alpha <= -9223372036854775808.0 ? INT64_MIN : (int64_t)u->alpha;
      hi = u->beta >= 9223372036854775808.0 ? INT64_MAX : (int64_t)u->beta;
      for (i = 0; i < n; i++) {
        int64_t m = a[i] >= lo ? a[i] : lo;
        r[i] = m <= hi ? m : hi;
      }
      return 1;
    case MGOPT_OP_abs:
      for (i = 0; i < n; i++) r[i] = a[i] < 0 ? (int64_t)(0 - (uint64_t)a[i]) : a[i];
      return 1;
    case MGOPT_OP_square:
      for (i = 0; i < n; i++) r[i] = (int64_t)((uint64_t)a[i] * (uint64_t)a[i]);
      return 1;
    case MGOPT_OP_sign: for (i = 0; i < n; i++) r[i] = a[i] > 0 ? 1 : a[i] < 0 ? -1 : 0; return 1;
    default: return 0;
  }
}

/* A float parameter rounded to the dtype (MIL gives them the dtype of x). */
static int mgopt__ke_fparam(const mgopt_op *op, const char *name, double dflt, int required,
                            mgopt_dtype dt, double *out) {
  if (required && !mgopt__k_has_param(op, name)) return 0;
  *out = mgopt_op_get_float(op, name, dflt);
  if (dt == MGOPT_DT_FP32) *out = (float)*out;
  else if (dt == MGOPT_DT_FP16 || dt == MGOPT_DT_BF16) *out = mgopt__k_rnd(dt, (float)*out);
  return 1;
}

MGOPT__PRIVATE int mgopt__ke_unary(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  int32_t kind = op->kind;
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  mgopt__ke_par u;
  mgopt_dtype dt;
  int lane, r;
  int64_t n;
  void *a, *res, *od;
  if (!x) return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  lane = mgopt__k_lane(dt);
  memset(&u, 0, sizeof u);
  u.dt = dt;
  if (lane == MGOPT__LANE_I64) {
    if (kind != MGOPT_OP_abs && kind != MGOPT_OP_square && kind != MGOPT_OP_sign && kind != MGOPT_OP_clip)
      return MGOPT__K_NO;
  } else if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64) {
    return MGOPT__K_NO;
  }
  switch (kind) {
    case MGOPT_OP_log: if (!mgopt__ke_fparam(op, "epsilon", 1e-45, 0, dt, &u.eps)) return MGOPT__K_NO; break;
    case MGOPT_OP_rsqrt: if (!mgopt__ke_fparam(op, "epsilon", 1e-12, 0, dt, &u.eps)) return MGOPT__K_NO; break;
    case MGOPT_OP_inverse: if (!mgopt__ke_fparam(op, "epsilon", 1e-4, 0, dt, &u.eps)) return MGOPT__K_NO; break;
    case MGOPT_OP_leaky_relu:
    case MGOPT_OP_elu:
      if (!mgopt__ke_fparam(op, "alpha", 0, 1, dt, &u.alpha)) return MGOPT__K_NO;
      break;
    case MGOPT_OP_sigmoid_hard:
      if (!mgopt__ke_fparam(op, "alpha", 0.2, 0, dt, &u.alpha) || !mgopt__ke_fparam(op, "beta", 0.5, 0, dt, &u.beta))
        return MGOPT__K_NO;
      break;
    case MGOPT_OP_thresholded_relu:
      if (!mgopt__ke_fparam(op, "alpha", 1.0, 0, dt, &u.alpha)) return MGOPT__K_NO;
      break;
    case MGOPT_OP_clip:
      if (!mgopt__ke_fparam(op, "alpha", 0, 1, dt, &u.alpha) ||
          !mgopt__ke_fparam(op, "beta", 0, 1, dt, &u.beta))
        return MGOPT__K_NO;
      break;
    case MGOPT_OP_gelu: {
      const char *m = mgopt_op_get_string(op, "mode", NULL);
      if (!m || strcmp(m, "EXACT") == 0) u.mode = 0;
      else if (strcmp(m, "TANH_APPROXIMATION") == 0) u.mode = 1;
      else if (strcmp(m, "SIGMOID_APPROXIMATION") == 0) u.mode = 2;
      else return MGOPT__K_NO;
      break;
    }
    default: break;
  }
  r = mgopt__k_out(k, 0, dt, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  n = x->numel;
  if (n == 0) return MGOPT__K_OK;
  a = mgopt__k_scratch(k, n, mgopt__k_lane_size(lane));
  res = mgopt__k_scratch(k, n, mgopt__k_lane_size(lane));
  if (!a || !res) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, lane, a);
  if (r != MGOPT__K_OK) return r;
  if (lane == MGOPT__LANE_F32) r = mgopt__ke_un_f32(kind, &u, (const float *)a, (float *)res, n);
  else if (lane == MGOPT__LANE_F64) r = mgopt__ke_un_f64(kind, &u, (const double *)a, (double *)res, n);
  else r = mgopt__ke_un_i64(kind, &u, (const int64_t *)a, (int64_t *)res, n);
  if (!r) return MGOPT__K_NO;
  mgopt__k_store(lane, res, n, dt, od);
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__ke_logical_not(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  uint8_t *a, *o;
  void *od;
  int64_t i, n;
  int r;
  if (!x || x->dtype != MGOPT_DT_BOOL) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, MGOPT_DT_BOOL, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  n = x->numel;
  a = (uint8_t *)mgopt__k_scratch(k, n, 1);
  if (!a) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, MGOPT__LANE_BOOL, a);
  if (r != MGOPT__K_OK) return r;
  o = (uint8_t *)od;
  for (i = 0; i < n; i++) o[i] = (uint8_t)(a[i] ^ 1u);
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__ke_identity(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const void *src;
  void *od;
  int r;
  if (!x) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, (mgopt_dtype)x->dtype, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  src = mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  if (k->out[0]->nbytes != x->nbytes) return MGOPT__K_NO;
  if (x->nbytes) memcpy(od, src, x->nbytes); /* strings: the views share the program's arena */
  return MGOPT__K_OK;
}

/* select(cond, a, b): a where cond is true, else b; all three broadcast. */
MGOPT__PRIVATE int mgopt__ke_select(mgopt__kctx *k) {
  mgopt_tensor *c = mgopt__k_operand(k, "cond"), *a = mgopt__k_operand(k, "a"),
               *b = mgopt__k_operand(k, "b");
  int64_t s1[MGOPT_MAX_RANK], oshape[MGOPT_MAX_RANK], n, i;
  int32_t r1, orank;
  size_t es;
  uint8_t *cb, *ab, *bb, *o;
  const void *ad, *bd;
  void *tmp, *od;
  int r;
  if (!c || !a || !b || a->dtype != b->dtype) return MGOPT__K_NO;
  es = mgopt__k_esize((mgopt_dtype)a->dtype);
  if (!es || mgopt__k_lane((mgopt_dtype)c->dtype) == MGOPT__LANE_NONE) return MGOPT__K_NO;
  if (!mgopt__k_bcast_shape(c->rank, c->shape, a->rank, a->shape, &r1, s1) ||
      !mgopt__k_bcast_shape(r1, s1, b->rank, b->shape, &orank, oshape))
    return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, (mgopt_dtype)a->dtype, orank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  n = k->out[0]->numel;
  if (n == 0) return MGOPT__K_OK;
  r = mgopt__k_load_bcast(k, c, MGOPT__LANE_BOOL, orank, oshape, n, &tmp);
  if (r != MGOPT__K_OK) return r;
  cb = (uint8_t *)tmp;
  ad = mgopt__k_data(k, a);
  bd = mgopt__k_data(k, b);
  ab = (uint8_t *)mgopt__k_scratch(k, n, es);
  bb = (uint8_t *)mgopt__k_scratch(k, n, es);
  if (!ad || !bd || !ab || !bb) return MGOPT__K_OOM;
  mgopt__k_bcast(ab, ad, es, a->rank, a->shape, orank, oshape);
  mgopt__k_bcast(bb, bd, es, b->rank, b->shape, orank, oshape);
  o = (uint8_t *)od;
  for (i = 0; i < n; i++) memcpy(o + (size_t)i * es, (cb[i] ? ab : bb) + (size_t)i * es, es);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- cast */

/* Converts src (any numeric dtype) to dt element by element: floats to
   integers truncate toward zero; a value outside dt's range (or NaN into an
   integer) is not folded. Float to float rounds to nearest even. */
static int mgopt__ke_convert(mgopt__kctx *k, mgopt_tensor *x, mgopt_dtype dt, void *od) {
  mgopt_dtype sdt = (mgopt_dtype)x->dtype;
  int sl = mgopt__k_lane(sdt), dl = mgopt__k_lane(dt);
  int64_t n = x->numel, i, lo = 0, hi = 0;
  int r;
  if (sl == MGOPT__LANE_NONE || dl == MGOPT__LANE_NONE) return MGOPT__K_NO;
  if (n == 0) return MGOPT__K_OK;
  if (dl == MGOPT__LANE_BOOL) {
    uint8_t *b = (uint8_t *)mgopt__k_scratch(k, n, 1);
    if (!b) return MGOPT__K_OOM;
    r = mgopt__k_load(k, x, MGOPT__LANE_BOOL, b);
    if (r != MGOPT__K_OK) return r;
    memcpy(od, b, (size_t)n);
    return MGOPT__K_OK;
  }
  if (sl == MGOPT__LANE_I64 || sl == MGOPT__LANE_BOOL) {
    int64_t *v = (int64_t *)mgopt__k_scratch(k, n, 8);
    if (!v) return MGOPT__K_OOM;
    r = mgopt__k_load(k, x, MGOPT__LANE_I64, v);
    if (r != MGOPT__K_OK) return r;
    if (dl == MGOPT__LANE_I64) {
      mgopt__k_int_range(dt, &lo, &hi);
      for (i = 0; i < n; i++)
        if (v[i] < lo || v[i] > hi)
          return mgopt__k_no(k, "element %lld (%lld) is out of the range of %s", (long long)i, (long long)v[i],
                             mgopt_dtype_name(dt));
      mgopt__k_store(MGOPT__LANE_I64, v, n, dt, od);
    } else if (dt == MGOPT_DT_FP32) {
      float *f = (float *)od;
      for (i = 0; i < n; i++) f[i] = (float)v[i]; /* correctly rounded from the integer */
    } else {
      /* |v| <= 2^53 converts to double exactly; larger ones are beyond fp16
         range, and for bf16 the double step cannot land on a bf16 tie */
      for (i = 0; i < n; i++) mgopt__k_store_f64_at(dt, od, i, (double)v[i]);
    }
    return MGOPT__K_OK;
  }
  {
    /* float source: every fp16 / bf16 / fp32 value is exact in double */
    double *v = (double *)mgopt__k_scratch(k, n, 8);
    if (!v) return MGOPT__K_OOM;
    r = mgopt__k_load(k, x, MGOPT__LANE_F64, v);
    if (r != MGOPT__K_OK) return r;
    if (dl == MGOPT__LANE_I64) {
      double dlo, dhi;
      mgopt__k_int_range(dt, &lo, &hi);
      dlo = (double)lo;
      dhi = dt == MGOPT_DT_INT64 || dt == MGOPT_DT_UINT64 ? 9223372036854775808.0 : (double)hi + 1.0;
      for (i = 0; i < n; i++) {
        double t = v[i];
        if (!(t > dlo - 1.0 && t < dhi)) /* NaN fails too */
          return mgopt__k_no(k, "element %lld (%g) is out of the range of %s", (long long)i, t, mgopt_dtype_name(dt));
        mgopt__k_store_i64_at(dt, od, i, (int64_t)t);
      }
    } else {
      for (i = 0; i < n; i++) mgopt__k_store_f64_at(dt, od, i, v[i]);
    }
    return MGOPT__K_OK;
  }
}

MGOPT__PRIVATE int mgopt__ke_cast(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  size_t len = 0;
  const char *s = mgopt_op_get_string(k->op, "dtype", &len);
  mgopt_dtype dt;
  void *od;
  int r;
  if (!x || !s) return MGOPT__K_NO;
  dt = mgopt_dtype_from_name(s, len);
  if (mgopt__k_lane(dt) == MGOPT__LANE_NONE) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, dt, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  return mgopt__ke_convert(k, x, dt, od);
}

MGOPT__PRIVATE int mgopt__kc_constexpr_cast(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "source_val");
  size_t len = 0;
  const char *s = mgopt_op_get_string(k->op, "output_dtype", &len);
  mgopt_dtype dt;
  void *od;
  int r;
  if (!x || !s) return MGOPT__K_NO;
  dt = mgopt_dtype_from_name(s, len);
  if (!mgopt_dtype_is_float(dt) || !mgopt_dtype_is_float((mgopt_dtype)x->dtype) ||
      mgopt__k_lane(dt) == MGOPT__LANE_NONE)
    return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, dt, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  return mgopt__ke_convert(k, x, dt, od);
}
/* src/kernels/shape.c — folding kernels that move elements: reshape, transpose, expand_dims, squeeze,
   concat, stack, split, slice_by_index, slice_by_size, gather, tile, pad, one_hot.

   These copy bytes and never round. Every axis, permutation, index and size is
   validated; anything MIL's type inference would reject is not folded. */

/* Output 0 = the bytes of x under a new shape (reshape-like ops; any dtype). */
/* reshape, expand_dims, squeeze: the same bytes under a new shape. The result
   is a view of x's data, not a copy; both are marked borrowed, so a later
   write through either copies first and never changes the other (the rule
   const_deduplication follows for shared buffers). Strings are copied. */
static int mgopt__ks_copy_out(mgopt__kctx *k, mgopt_tensor *x, int32_t rank, const int64_t *shape) {
  const void *src;
  void *od;
  int r;
  if (mgopt__k_numel(rank, shape) != x->numel) return MGOPT__K_NO;
  if (x->dtype != MGOPT_DT_STRING) return mgopt__k_out_view(k, 0, x, 0, rank, shape);
  r = mgopt__k_out(k, 0, (mgopt_dtype)x->dtype, rank, shape, &od);
  if (r != MGOPT__K_OK) return r;
  if (k->out[0]->nbytes != x->nbytes) return MGOPT__K_NO;
  src = mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  if (x->nbytes) memcpy(od, src, x->nbytes);
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__ks_reshape(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *v;
  int64_t n, shape[MGOPT_MAX_RANK], known = 1;
  int32_t i, neg = -1;
  if (!x) return MGOPT__K_NO;
  n = mgopt__k_ints(k, "shape", &v);
  if (n < 0 || n > MGOPT_MAX_RANK) return MGOPT__K_NO;
  for (i = 0; i < (int32_t)n; i++) {
    int64_t s = v[i];
    if (s == -1) {
      if (neg >= 0) return MGOPT__K_NO;
      neg = i;
      continue;
    }
    if (s == 0) {
      /* 0 copies the input dim aligned from the right; none there means 1 */
      int64_t j = (int64_t)x->rank - (n - i);
      s = j >= 0 ? x->shape[j] : 1;
    } else if (s < 0) {
      return MGOPT__K_NO;
    }
    shape[i] = s;
    if (!mgopt__mul_i64(known, s, &known)) return MGOPT__K_NO;
  }
  if (neg >= 0) {
    if (known == 0 || x->numel % known) return MGOPT__K_NO;
    shape[neg] = x->numel / known;
  }
  return mgopt__ks_copy_out(k, x, (int32_t)n, shape);
}

MGOPT__PRIVATE int mgopt__ks_expand_dims(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *v;
  int64_t n, shape[MGOPT_MAX_RANK];
  uint8_t mark[MGOPT_MAX_RANK];
  int32_t i, j, orank, a;
  if (!x) return MGOPT__K_NO;
  n = mgopt__k_ints(k, "axes", &v);
  if (n < 0 || x->rank + n > MGOPT_MAX_RANK) return MGOPT__K_NO;
  orank = x->rank + (int32_t)n;
  memset(mark, 0, sizeof mark);
  for (i = 0; i < (int32_t)n; i++) {
    if (!mgopt__k_axis(v[i], orank, &a) || mark[a]) return MGOPT__K_NO;
    mark[a] = 1;
  }
  for (i = 0, j = 0; i < orank; i++) shape[i] = mark[i] ? 1 : x->shape[j++];
  return mgopt__ks_copy_out(k, x, orank, shape);
}

MGOPT__PRIVATE int mgopt__ks_squeeze(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *v;
  int64_t n, shape[MGOPT_MAX_RANK];
  uint8_t mark[MGOPT_MAX_RANK];
  int32_t i, orank = 0, a;
  if (!x) return MGOPT__K_NO;
  n = mgopt__k_ints(k, "axes", &v);
  memset(mark, 0, sizeof mark);
  if (n == -2) return MGOPT__K_NO;
  if (n < 0) {
    for (i = 0; i < x->rank; i++) mark[i] = x->shape[i] == 1;
  } else {
    /* only size-1 dims are removed; other listed dims stay (MIL's semantics) */
    for (i = 0; i < (int32_t)n; i++) {
      if (!mgopt__k_axis(v[i], x->rank, &a) || mark[a] & 2) return MGOPT__K_NO;
      mark[a] = (uint8_t)(2 | (x->shape[a] == 1));
    }
  }
  for (i = 0; i < x->rank; i++)
    if (!(mark[i] & 1)) shape[orank++] = x->shape[i];
  return mgopt__ks_copy_out(k, x, orank, shape);
}

MGOPT__PRIVATE int mgopt__ks_transpose(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *v;
  int64_t n, shape[MGOPT_MAX_RANK], st[MGOPT_MAX_RANK], ist[MGOPT_MAX_RANK];
  uint8_t seen[MGOPT_MAX_RANK];
  int32_t i, a;
  size_t es;
  const void *src;
  void *od;
  int r;
  if (!x) return MGOPT__K_NO;
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  n = mgopt__k_ints(k, "perm", &v);
  if (!es || n != x->rank) return MGOPT__K_NO;
  memset(seen, 0, sizeof seen);
  mgopt__k_strides(x->rank, x->shape, ist);
  for (i = 0; i < x->rank; i++) {
    if (!mgopt__k_axis(v[i], x->rank, &a) || seen[a]) return MGOPT__K_NO;
    seen[a] = 1;
    shape[i] = x->shape[a];
    st[i] = ist[a];
  }
  r = mgopt__k_out(k, 0, (mgopt_dtype)x->dtype, x->rank, shape, &od);
  if (r != MGOPT__K_OK) return r;
  src = mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  mgopt__k_strided(od, src, es, x->rank, shape, st, 0);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- concat, stack, split */

/* The constant tensors of the variadic slot `values` (at least one). */
static int mgopt__ks_values(mgopt__kctx *k, mgopt_tensor ***vals, int32_t *nv) {
  int32_t si = mgopt_op_slot_index(k->op, "values"), i;
  const mgopt_slot *s;
  mgopt_tensor **t;
  if (si < 0) return MGOPT__K_NO;
  s = &k->op->slots[si];
  if (s->n < 1) return MGOPT__K_NO;
  t = (mgopt_tensor **)mgopt__k_scratch(k, s->n, sizeof(mgopt_tensor *));
  if (!t) return MGOPT__K_OOM;
  for (i = 0; i < s->n; i++) {
    t[i] = mgopt__k_value(k, s->uses[i].value);
    if (!t[i] || t[i]->dtype != t[0]->dtype || t[i]->rank != t[0]->rank) return MGOPT__K_NO;
  }
  if (!mgopt__k_esize((mgopt_dtype)t[0]->dtype)) return MGOPT__K_NO;
  *vals = t;
  *nv = s->n;
  return MGOPT__K_OK;
}

/* dst = for each of `outer` rows, chunk[i] elements of each input i in turn. */
static int mgopt__ks_join(mgopt__kctx *k, mgopt_tensor **vals, int32_t nv, int64_t outer,
                          const int64_t *chunk, size_t es, uint8_t *dst) {
  int64_t o;
  int32_t i;
  const uint8_t **src = (const uint8_t **)mgopt__k_scratch(k, nv, sizeof(uint8_t *));
  if (!src) return MGOPT__K_OOM;
  /* byte copies: the inputs need no alignment, so none is copied to get it */
  for (i = 0; i < nv; i++) src[i] = (const uint8_t *)vals[i]->data;
  for (o = 0; o < outer; o++)
    for (i = 0; i < nv; i++) {
      size_t bytes = (size_t)chunk[i] * es;
      if (bytes) memcpy(dst, src[i] + (size_t)o * bytes, bytes);
      dst += bytes;
    }
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__ks_concat(mgopt__kctx *k) {
  mgopt_tensor **v;
  int32_t nv, rank, axis, i, d;
  int64_t shape[MGOPT_MAX_RANK], outer = 1, inner = 1, *chunk;
  int interleave;
  void *od;
  int r = mgopt__ks_values(k, &v, &nv);
  if (r != MGOPT__K_OK) return r;
  rank = v[0]->rank;
  if (rank < 1 || !mgopt__k_has_param(k->op, "axis") ||
      !mgopt__k_axis(mgopt_op_get_int(k->op, "axis", 0), rank, &axis))
    return MGOPT__K_NO;
  interleave = mgopt_op_get_bool(k->op, "interleave", 0);
  for (d = 0; d < rank; d++) shape[d] = v[0]->shape[d];
  shape[axis] = 0;
  for (i = 0; i < nv; i++) {
    for (d = 0; d < rank; d++)
      if ((d != axis || interleave) && v[i]->shape[d] != v[0]->shape[d]) return MGOPT__K_NO;
    if (!mgopt__add_i64(shape[axis], v[i]->shape[axis], &shape[axis])) return MGOPT__K_NO;
  }
  for (d = 0; d < axis; d++) outer *= shape[d];
  for (d = axis + 1; d < rank; d++) inner *= shape[d];
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)v[0]->dtype, rank, shape, &od);
  if (r != MGOPT__K_OK) return r;
  chunk = (int64_t *)mgopt__k_scratch(k, nv, sizeof(int64_t));
  if (!chunk) return MGOPT__K_OOM;
  /* interleaving takes one axis slice of each input in turn */
  if (interleave) outer *= v[0]->shape[axis];
  for (i = 0; i < nv; i++) chunk[i] = interleave ? inner : v[i]->shape[axis] * inner;
  return mgopt__ks_join(k, v, nv, outer, chunk, mgopt__k_esize((mgopt_dtype)v[0]->dtype),
                        (uint8_t *)od);
}

MGOPT__PRIVATE int mgopt__ks_stack(mgopt__kctx *k) {
  mgopt_tensor **v;
  int32_t nv, rank, axis, i, d;
  int64_t shape[MGOPT_MAX_RANK], outer = 1, *chunk;
  void *od;
  int r = mgopt__ks_values(k, &v, &nv);
  if (r != MGOPT__K_OK) return r;
  rank = v[0]->rank;
  if (rank + 1 > MGOPT_MAX_RANK || !mgopt__k_has_param(k->op, "axis") ||
      !mgopt__k_axis(mgopt_op_get_int(k->op, "axis", 0), rank + 1, &axis))
    return MGOPT__K_NO;
  for (i = 0; i < nv; i++)
    for (d = 0; d < rank; d++)
      if (v[i]->shape[d] != v[0]->shape[d]) return MGOPT__K_NO;
  for (d = 0, i = 0; d < rank + 1; d++) shape[d] = d == axis ? nv : v[0]->shape[i++];
  for (d = 0; d < axis; d++) outer *= shape[d];
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)v[0]->dtype, rank + 1, shape, &od);
  if (r != MGOPT__K_OK) return r;
  chunk = (int64_t *)mgopt__k_scratch(k, nv, sizeof(int64_t));
  if (!chunk) return MGOPT__K_OOM;
  for (i = 0; i < nv; i++) chunk[i] = outer ? v[0]->numel / outer : 0;
  return mgopt__ks_join(k, v, nv, outer, chunk, mgopt__k_esize((mgopt_dtype)v[0]->dtype),
                        (uint8_t *)od);
}

MGOPT__PRIVATE int mgopt__ks_split(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *sz;
  int64_t ns, *sizes, shape[MGOPT_MAX_RANK], outer = 1, inner = 1, dim, sum = 0, off, o;
  int32_t axis, i, d, nouts = op->nouts;
  size_t es;
  const uint8_t *src;
  int r;
  if (!x || x->rank < 1 || nouts < 1 || !mgopt__k_has_param(op, "axis") ||
      !mgopt__k_axis(mgopt_op_get_int(op, "axis", 0), x->rank, &axis))
    return MGOPT__K_NO;
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  if (!es) return MGOPT__K_NO;
  dim = x->shape[axis];
  sizes = (int64_t *)mgopt__k_scratch(k, nouts, sizeof(int64_t));
  if (!sizes) return MGOPT__K_OOM;
  ns = mgopt__k_ints(k, "split_sizes", &sz);
  if (ns == -2) return MGOPT__K_NO;
  if (ns >= 0) {
    if (ns != nouts) return MGOPT__K_NO;
    for (i = 0; i < nouts; i++) {
      if (sz[i] < 0 || !mgopt__add_i64(sum, sz[i], &sum)) return MGOPT__K_NO;
      sizes[i] = sz[i];
    }
    if (sum != dim) return MGOPT__K_NO;
  } else {
    ns = mgopt_op_get_int(op, "num_splits", -1);
    if (ns != nouts || dim % ns) return MGOPT__K_NO;
    for (i = 0; i < nouts; i++) sizes[i] = dim / ns;
  }
  for (d = 0; d < x->rank; d++) shape[d] = x->shape[d];
  for (i = 0; i < nouts; i++) {
    shape[axis] = sizes[i];
    r = mgopt__k_out_check(k, i, (mgopt_dtype)x->dtype, x->rank, shape);
    if (r != MGOPT__K_OK) return r;
  }
  for (d = 0; d < axis; d++) outer *= x->shape[d];
  for (d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
  src = (const uint8_t *)mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  for (i = 0, off = 0; i < nouts; i++) {
    void *od;
    size_t bytes = (size_t)(sizes[i] * inner) * es;
    shape[axis] = sizes[i];
    r = mgopt__k_out(k, i, (mgopt_dtype)x->dtype, x->rank, shape, &od);
    if (r != MGOPT__K_OK) return r;
    for (o = 0; o < outer && bytes; o++)
      memcpy((uint8_t *)od + (size_t)o * bytes, src + ((size_t)(o * dim + off) * (size_t)inner) * es,
             bytes);
    off += sizes[i];
  }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- slices */

/* One dimension of a Python slice begin:end:step over len elements:
   first index and count. Returns 0 for a zero step. */
static int mgopt__ks_pyslice(int64_t len, int64_t b, int has_b, int64_t e, int has_e, int64_t step,
                             int64_t *first, int64_t *count) {
  if (step == 0 || step == INT64_MIN) return 0;
  if (step > 0) {
    if (!has_b) b = 0;
    else if (b < 0) b = b + len < 0 ? 0 : b + len;
    else if (b > len) b = len;
    if (!has_e) e = len;
    else if (e < 0) e = e + len < 0 ? 0 : e + len;
    else if (e > len) e = len;
    *count = e > b ? (e - b - 1) / step + 1 : 0;
  } else {
    if (!has_b) b = len - 1;
    else if (b < 0) b = b + len < 0 ? -1 : b + len;
    else if (b >= len) b = len - 1;
    if (!has_e) e = -1;
    else if (e < 0) e = e + len < 0 ? -1 : e + len;
    else if (e >= len) e = len - 1;
    *count = b > e ? (b - e - 1) / (-step) + 1 : 0;
  }
  *first = b;
  return 1;
}

/* Output 0 = x sampled at base + sum(i_d * st_d) over shape (rank dims). */
static int mgopt__ks_gather_strided(mgopt__kctx *k, mgopt_tensor *x, int32_t rank, const int64_t *shape,
                                    const int64_t *st, int64_t base, int32_t orank, const int64_t *oshape) {
  const void *src;
  void *od;
  size_t es = mgopt__k_esize((mgopt_dtype)x->dtype);
  int r;
  if (!es) return MGOPT__K_NO;
  /* elements that lie in one run of x (rows of a matrix, a leading-axis
     slice): the result is a view of x, like reshape's, not a copy */
  if (mgopt__k_numel(orank, oshape) > 0) {
    int64_t dense = 1;
    int32_t d;
    for (d = rank - 1; d >= 0 && dense > 0; d--) {
      if (shape[d] == 1) continue;
      if (st[d] != dense) dense = 0;
      else dense *= shape[d];
    }
    if (dense > 0) return mgopt__k_out_view(k, 0, x, (size_t)base * es, orank, oshape);
  }
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, orank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  src = mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  mgopt__k_strided(od, src, es, rank, shape, st, base);
  return MGOPT__K_OK;
}

static int mgopt__ks_mask(const int64_t *m, int64_t n, int32_t i) { return n > 0 && m[i] != 0; }

MGOPT__PRIVATE int mgopt__ks_slice_by_index(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *b, *e, *s = NULL, *bm = NULL, *em = NULL, *sm = NULL;
  int64_t nb, ne, ns, nbm, nem, nsm, shape[MGOPT_MAX_RANK], st[MGOPT_MAX_RANK],
      ist[MGOPT_MAX_RANK], oshape[MGOPT_MAX_RANK], base = 0;
  int32_t d, orank = 0;
  if (!x) return MGOPT__K_NO;
  nb = mgopt__k_ints(k, "begin", &b);
  ne = mgopt__k_ints(k, "end", &e);
  ns = mgopt__k_ints(k, "stride", &s);
  nbm = mgopt__k_ints(k, "begin_mask", &bm);
  nem = mgopt__k_ints(k, "end_mask", &em);
  nsm = mgopt__k_ints(k, "squeeze_mask", &sm);
  if (nb != x->rank || ne != x->rank) return MGOPT__K_NO;
  if (ns == -2 || nbm == -2 || nem == -2 || nsm == -2) return MGOPT__K_NO;
  if ((ns >= 0 && ns != x->rank) || (nbm >= 0 && nbm != x->rank) || (nem >= 0 && nem != x->rank) ||
      (nsm >= 0 && nsm != x->rank))
    return MGOPT__K_NO;
  mgopt__k_strides(x->rank, x->shape, ist);
  for (d = 0; d < x->rank; d++) {
    int64_t len = x->shape[d], step = ns > 0 ? s[d] : 1, first, count;
    if (mgopt__ks_mask(sm, nsm, d)) {
      /* a pure index at begin (begin_mask makes it 0) */
      int64_t i = mgopt__ks_mask(bm, nbm, d) ? 0 : b[d];
      if (i < 0) i += len;
      if (i < 0 || i >= len) return MGOPT__K_NO;
      shape[d] = 1;
      st[d] = 0;
      base += i * ist[d];
      continue;
    }
    if (!mgopt__ks_pyslice(len, b[d], !mgopt__ks_mask(bm, nbm, d), e[d], !mgopt__ks_mask(em, nem, d),
                           step, &first, &count))
      return MGOPT__K_NO;
    shape[d] = count;
    st[d] = count > 1 ? step * ist[d] : 0;
    if (count > 0) base += first * ist[d];
    oshape[orank++] = count;
  }
  return mgopt__ks_gather_strided(k, x, x->rank, shape, st, base, orank, oshape);
}

MGOPT__PRIVATE int mgopt__ks_slice_by_size(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *b, *sz;
  int64_t nb, ns, shape[MGOPT_MAX_RANK], ist[MGOPT_MAX_RANK], base = 0;
  int32_t d;
  if (!x) return MGOPT__K_NO;
  nb = mgopt__k_ints(k, "begin", &b);
  ns = mgopt__k_ints(k, "size", &sz);
  if (nb != x->rank || ns != x->rank) return MGOPT__K_NO;
  mgopt__k_strides(x->rank, x->shape, ist);
  for (d = 0; d < x->rank; d++) {
    int64_t len = x->shape[d], begin = b[d], size = sz[d];
    if (begin < 0) begin += len;
    if (begin < 0 || begin > len) return MGOPT__K_NO;
    if (size == -1) size = len - begin;
    /* size 0 is ambiguous in MIL (empty by type, "to the end" by value) */
    else if (size < 1 || size > len - begin) return MGOPT__K_NO;
    shape[d] = size;
    if (size > 0) base += begin * ist[d];
  }
  return mgopt__ks_gather_strided(k, x, x->rank, shape, ist, base, x->rank, shape);
}

/* ---------------------------------------------------------------- gather */

MGOPT__PRIVATE int mgopt__ks_gather(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  mgopt_tensor *x = mgopt__k_operand(k, "x"), *ind = mgopt__k_operand(k, "indices");
  int64_t shape[MGOPT_MAX_RANK], B = 1, O = 1, I = 1, inner = 1, D, bd, bb, o, i, *idx;
  int32_t axis, d, orank = 0;
  size_t es;
  const uint8_t *src;
  uint8_t *dst;
  void *od;
  int r;
  if (!x || !ind || x->rank < 1) return MGOPT__K_NO;
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  if (!es || mgopt__k_lane((mgopt_dtype)ind->dtype) != MGOPT__LANE_I64) return MGOPT__K_NO;
  if (!mgopt__k_axis(mgopt_op_get_int(op, "axis", 0), x->rank, &axis)) return MGOPT__K_NO;
  bd = mgopt_op_get_int(op, "batch_dims", 0);
  if (bd < 0) bd += ind->rank;
  if (bd < 0 || bd > ind->rank || bd > axis) return MGOPT__K_NO;
  if ((int64_t)x->rank - 1 + ind->rank - bd > MGOPT_MAX_RANK) return MGOPT__K_NO;
  for (d = 0; d < (int32_t)bd; d++) {
    if (x->shape[d] != ind->shape[d]) return MGOPT__K_NO;
    B *= x->shape[d];
  }
  for (d = 0; d < axis; d++) shape[orank++] = x->shape[d];
  for (d = (int32_t)bd; d < axis; d++) O *= x->shape[d];
  for (d = (int32_t)bd; d < ind->rank; d++) {
    shape[orank++] = ind->shape[d];
    I *= ind->shape[d];
  }
  for (d = axis + 1; d < x->rank; d++) {
    shape[orank++] = x->shape[d];
    inner *= x->shape[d];
  }
  D = x->shape[axis];
  idx = (int64_t *)mgopt__k_scratch(k, ind->numel, 8);
  if (!idx) return MGOPT__K_OOM;
  r = mgopt__k_load(k, ind, MGOPT__LANE_I64, idx);
  if (r != MGOPT__K_OK) return r;
  for (i = 0; i < ind->numel; i++) {
    if (idx[i] < -D || idx[i] >= D)
      return mgopt__k_no(k, "index %lld out of range for a dim of %lld", (long long)idx[i], (long long)D);
    if (idx[i] < 0) idx[i] += D;
  }
  r = mgopt__k_out(k, 0, (mgopt_dtype)x->dtype, orank, shape, &od);
  if (r != MGOPT__K_OK) return r;
  src = (const uint8_t *)mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  dst = (uint8_t *)od;
  if (inner == 0) return MGOPT__K_OK;
  for (bb = 0; bb < B; bb++)
    for (o = 0; o < O; o++)
      for (i = 0; i < I; i++) {
        size_t n = (size_t)inner * es;
        memcpy(dst, src + (size_t)(((bb * O + o) * D + idx[bb * I + i]) * inner) * es, n);
        dst += n;
      }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- tile, pad */

MGOPT__PRIVATE int mgopt__ks_tile(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *reps;
  int64_t n, shape[MGOPT_MAX_RANK], s2[2 * MGOPT_MAX_RANK], st2[2 * MGOPT_MAX_RANK],
      ist[MGOPT_MAX_RANK];
  int32_t d;
  if (!x) return MGOPT__K_NO;
  n = mgopt__k_ints(k, "reps", &reps);
  if (n != x->rank) return MGOPT__K_NO;
  mgopt__k_strides(x->rank, x->shape, ist);
  /* out viewed as [r0, d0, r1, d1, ...] reading x with stride 0 over each r */
  for (d = 0; d < x->rank; d++) {
    if (reps[d] < 0 || !mgopt__mul_i64(reps[d], x->shape[d], &shape[d])) return MGOPT__K_NO;
    s2[2 * d] = reps[d];
    s2[2 * d + 1] = x->shape[d];
    st2[2 * d] = 0;
    st2[2 * d + 1] = ist[d];
  }
  return mgopt__ks_gather_strided(k, x, 2 * x->rank, s2, st2, 0, x->rank, shape);
}

/* The element bytes of a scalar parameter value in dtype dt. */
static int mgopt__ks_scalar(mgopt_dtype dt, double fv, uint8_t *out) {
  int64_t lo, hi;
  int lane = mgopt__k_lane(dt);
  if (lane == MGOPT__LANE_F32 || lane == MGOPT__LANE_F64) {
    mgopt__k_store_f64_at(dt, out, 0, fv);
    return 1;
  }
  if (lane == MGOPT__LANE_BOOL) {
    out[0] = fv != 0.0;
    return 1;
  }
  if (lane != MGOPT__LANE_I64 || !mgopt__k_int_range(dt, &lo, &hi)) return 0;
  /* hi + 1 is exact in double for every range (2^63 for int64) */
  if (!(fv >= (double)lo && fv < (double)hi + 1.0) || fv != floor(fv)) return 0;
  mgopt__k_store_i64_at(dt, out, 0, (int64_t)fv);
  return 1;
}

MGOPT__PRIVATE int mgopt__ks_pad(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *pad;
  const char *mode;
  int64_t np, shape[MGOPT_MAX_RANK], ist[MGOPT_MAX_RANK], idx[MGOPT_MAX_RANK], total = 0,
      *maps, *map[MGOPT_MAX_RANK], n, done, j;
  int32_t d, first, rank, m;
  uint8_t cval[16];
  size_t es;
  const uint8_t *src;
  uint8_t *dst;
  void *od;
  int r;
  if (!x) return MGOPT__K_NO;
  rank = x->rank;
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  np = mgopt__k_ints(k, "pad", &pad);
  if (!es || np < 0 || np % 2 || np / 2 > rank) return MGOPT__K_NO;
  mode = mgopt_op_get_string(k->op, "mode", NULL);
  if (!mode || strcmp(mode, "constant") == 0) m = 0;
  else if (strcmp(mode, "reflect") == 0) m = 1;
  else if (strcmp(mode, "replicate") == 0) m = 2;
  else return MGOPT__K_NO;
  memset(cval, 0, sizeof cval);
  if (m == 0 && !mgopt__ks_scalar((mgopt_dtype)x->dtype, mgopt_op_get_float(k->op, "constant_val", 0.0), cval))
    return MGOPT__K_NO;
  first = rank - (int32_t)(np / 2); /* pads apply to the last np/2 dims */
  for (d = 0; d < rank; d++) {
    int64_t before = d >= first ? pad[2 * (d - first)] : 0, after = d >= first ? pad[2 * (d - first) + 1] : 0;
    int64_t len = x->shape[d];
    if (before < 0 || after < 0) return MGOPT__K_NO;
    if (m == 1 && (before > len - 1 || after > len - 1) && (before || after)) return MGOPT__K_NO;
    if (m == 2 && len == 0 && (before || after)) return MGOPT__K_NO;
    if (!mgopt__add_i64(len, before, &shape[d]) || !mgopt__add_i64(shape[d], after, &shape[d]) ||
        !mgopt__add_i64(total, shape[d], &total))
      return MGOPT__K_NO;
  }
  r = mgopt__k_out(k, 0, (mgopt_dtype)x->dtype, rank, shape, &od);
  if (r != MGOPT__K_OK) return r;
  n = k->out[0]->numel;
  src = (const uint8_t *)mgopt__k_data(k, x);
  maps = (int64_t *)mgopt__k_scratch(k, total, 8);
  if (!src || !maps) return MGOPT__K_OOM;
  /* per dim: output coordinate -> input coordinate, or -1 for the constant */
  for (d = 0; d < rank; d++) {
    int64_t before = d >= first ? pad[2 * (d - first)] : 0, len = x->shape[d], o;
    map[d] = maps;
    maps += shape[d];
    for (o = 0; o < shape[d]; o++) {
      int64_t i = o - before;
      if (m == 0) i = (i >= 0 && i < len) ? i : -1;
      else if (m == 1) i = i < 0 ? -i : (i >= len ? 2 * (len - 1) - i : i);
      else i = i < 0 ? 0 : (i >= len ? len - 1 : i);
      map[d][o] = i;
    }
  }
  mgopt__k_strides(rank, x->shape, ist);
  dst = (uint8_t *)od;
  if (n == 0) return MGOPT__K_OK;
  if (rank == 0) {
    memcpy(dst, src, es);
    return MGOPT__K_OK;
  }
  for (d = 0; d < rank; d++) idx[d] = 0;
  for (done = 0; done < n; done += shape[rank - 1]) {
    int64_t base = 0;
    int konst = 0;
    for (d = 0; d < rank - 1; d++) {
      if (map[d][idx[d]] < 0) konst = 1;
      else base += map[d][idx[d]] * ist[d];
    }
    for (j = 0; j < shape[rank - 1]; j++, dst += es) {
      int64_t i = map[rank - 1][j];
      if (konst || i < 0) memcpy(dst, cval, es);
      else memcpy(dst, src + (size_t)(base + i) * es, es);
    }
    for (d = rank - 2; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- one_hot */

/* The dtype a scalar parameter carries: a constant operand's, or the kind of
   the attribute or of its registry default (float -> fp32, int -> int32,
   bool), else dflt. */
static mgopt_dtype mgopt__ks_param_dtype(mgopt__kctx *k, const char *name, mgopt_dtype dflt) {
  const mgopt_op *op = k->op;
  const mgopt_attr *a = mgopt_op_attr(op, name);
  const mgopt_attr_def *ad;
  mgopt_tensor *t;
  if (!a && !mgopt_op_operand(op, name) && (ad = mgopt__attr_def(op->kind, name)) != NULL && ad->deflt) {
    switch (ad->kind) {
      case MGOPT_ATTR_FLOAT: return MGOPT_DT_FP32;
      case MGOPT_ATTR_INT: return MGOPT_DT_INT32;
      case MGOPT_ATTR_BOOL: return MGOPT_DT_BOOL;
      default: return MGOPT_DT_UNKNOWN;
    }
  }
  if (a) {
    switch (a->kind) {
      case MGOPT_ATTR_FLOAT: return MGOPT_DT_FP32;
      case MGOPT_ATTR_INT: return MGOPT_DT_INT32;
      case MGOPT_ATTR_BOOL: return MGOPT_DT_BOOL;
      case MGOPT_ATTR_TENSOR: return (mgopt_dtype)a->u.t->dtype;
      default: return MGOPT_DT_UNKNOWN;
    }
  }
  t = mgopt__k_operand(k, name);
  if (t) return (mgopt_dtype)t->dtype;
  return mgopt_op_operand(op, name) ? MGOPT_DT_UNKNOWN : dflt;
}

MGOPT__PRIVATE int mgopt__ks_one_hot(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  mgopt_tensor *ind = mgopt__k_operand(k, "indices");
  mgopt_dtype dt, offdt;
  int64_t depth, shape[MGOPT_MAX_RANK], outer = 1, inner = 1, o, dpos, i, *idx;
  int32_t axis, d, j;
  uint8_t on[16], off[16], *dst;
  size_t es;
  void *od;
  int r;
  if (!ind || ind->rank + 1 > MGOPT_MAX_RANK || mgopt__k_lane((mgopt_dtype)ind->dtype) != MGOPT__LANE_I64 ||
      !mgopt__k_has_param(op, "one_hot_vector_size"))
    return MGOPT__K_NO;
  depth = mgopt_op_get_int(op, "one_hot_vector_size", -1);
  if (depth < 0 || !mgopt__k_axis(mgopt_op_get_int(op, "axis", -1), ind->rank + 1, &axis)) return MGOPT__K_NO;
  dt = mgopt__ks_param_dtype(k, "on_value", MGOPT_DT_INT32);
  offdt = mgopt__ks_param_dtype(k, "off_value", dt);
  if (offdt != dt && mgopt_op_attr(op, "off_value") && mgopt_op_attr(op, "on_value")) return MGOPT__K_NO;
  es = mgopt__k_esize(dt);
  memset(on, 0, sizeof on);
  memset(off, 0, sizeof off);
  if (!es || !mgopt__ks_scalar(dt, mgopt_op_get_float(op, "on_value", 1.0), on) ||
      !mgopt__ks_scalar(dt, mgopt_op_get_float(op, "off_value", 0.0), off))
    return MGOPT__K_NO;
  for (d = 0, j = 0; d < ind->rank + 1; d++) shape[d] = d == axis ? depth : ind->shape[j++];
  for (d = 0; d < axis; d++) outer *= ind->shape[d];
  for (d = axis; d < ind->rank; d++) inner *= ind->shape[d];
  idx = (int64_t *)mgopt__k_scratch(k, ind->numel, 8);
  if (!idx) return MGOPT__K_OOM;
  r = mgopt__k_load(k, ind, MGOPT__LANE_I64, idx);
  if (r != MGOPT__K_OK) return r;
  for (i = 0; i < ind->numel; i++)
    if (idx[i] < 0 || idx[i] >= depth) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, dt, ind->rank + 1, shape, &od);
  if (r != MGOPT__K_OK) return r;
  dst = (uint8_t *)od;
  for (o = 0; o < outer; o++)
    for (dpos = 0; dpos < depth; dpos++)
      for (i = 0; i < inner; i++, dst += es) memcpy(dst, idx[o * inner + i] == dpos ? on : off, es);
  return MGOPT__K_OK;
}
/* src/kernels/reduce.c — folding kernels that combine elements: reduce_*, softmax, matmul, linear.

   Summation order. Sums and products accumulate in the lane type (float for
   fp16 / bf16 / fp32, as numpy does for fp16) strictly in increasing index
   order, and matmul / linear accumulate over k in increasing order starting
   from 0. numpy's pairwise summation (innermost-axis float sums longer than
   8 elements) and BLAS kernels group additions differently, so long float
   sums may differ from numpy in the last places; everything else is exact
   per the dtype. Empty max / min / mean reductions are not folded.

   reduce_l1_norm, reduce_l2_norm, reduce_log_sum, reduce_log_sum_exp and
   reduce_sum_square widen every float dtype to double, accumulate in
   increasing index order in double and round once to the dtype (sqrt / log
   applied in double). log_sum_exp subtracts the slice's finite max first, so
   it neither overflows nor loses large equal inputs; a NaN input gives NaN,
   +inf gives +inf. An empty slice folds to 0 (l1, l2, sum_square) or -inf
   (log_sum, log_sum_exp). Integer l1 / sum_square wrap around in int64 and
   then in the dtype; integer l2 / log_sum / log_sum_exp are not folded. */

/* Which dims are reduced; returns the output shape. 0 on bad axes. */
static int mgopt__kr_axes(mgopt__kctx *k, const mgopt_tensor *x, uint8_t *red, int32_t *orank,
                          int64_t *oshape, int keep) {
  const int64_t *ax;
  int64_t n = mgopt__k_ints(k, "axes", &ax);
  int32_t i, a;
  memset(red, 0, MGOPT_MAX_RANK);
  if (n == -2) return 0;
  if (n < 0) {
    for (i = 0; i < x->rank; i++) red[i] = 1;
  } else {
    for (i = 0; i < (int32_t)n; i++) {
      if (!mgopt__k_axis(ax[i], x->rank, &a) || red[a]) return 0;
      red[a] = 1;
    }
  }
  *orank = 0;
  for (i = 0; i < x->rank; i++) {
    if (!red[i]) oshape[(*orank)++] = x->shape[i];
    else if (keep) oshape[(*orank)++] = 1;
  }
  return 1;
}

/* Accumulates the input (lane T) into out (one slot per output element) in
   input order: the output offset of an input element follows the input index
   with stride 0 along reduced dims. */
#define MGOPT__KR_ACC(T, INIT, STEP)                                                  \
  do {                                                                                \
    const T *MGOPT_RESTRICT in_ = (const T *)in;                                      \
    T *MGOPT_RESTRICT acc_ = (T *)acc;                                                \
    int64_t i_, o_ = 0, j_;                                                           \
    int32_t d_;                                                                       \
    for (i_ = 0; i_ < on; i_++) acc_[i_] = (INIT);                                    \
    for (d_ = 0; d_ < rank; d_++) idx[d_] = 0;                                        \
    for (i_ = 0; i_ < xn;) {                                                          \
      int64_t len_ = rank ? shape[rank - 1] : 1, s_ = rank ? ost[rank - 1] : 0;       \
      for (j_ = 0; j_ < len_; j_++) {                                                 \
        T a_ = acc_[o_ + j_ * s_], v_ = in_[i_ + j_];                                 \
        acc_[o_ + j_ * s_] = (STEP);                                                  \
      }                                                                               \
      i_ += len_;                                                                     \
      for (d_ = rank - 2; d_ >= 0; d_--) {                                            \
        o_ += ost[d_];                                                                \
        if (++idx[d_] < shape[d_]) break;                                             \
        o_ -= ost[d_] * shape[d_];                                                    \
        idx[d_] = 0;                                                                  \
      }                                                                               \
    }                                                                                 \
  } while (0)

MGOPT__PRIVATE int mgopt__kr_reduce(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  int32_t kind = op->kind, orank, rank, d;
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  uint8_t red[MGOPT_MAX_RANK];
  int64_t oshape[MGOPT_MAX_RANK], shape[MGOPT_MAX_RANK], ost[MGOPT_MAX_RANK],
      idx[MGOPT_MAX_RANK], full[MGOPT_MAX_RANK], on, xn, count = 1;
  mgopt_dtype dt;
  int lane, r, keep, wide;
  void *in, *acc, *od;
  if (!x) return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  lane = mgopt__k_lane(dt);
  if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64 && lane != MGOPT__LANE_I64) return MGOPT__K_NO;
  if (lane == MGOPT__LANE_I64 && kind != MGOPT_OP_reduce_sum && kind != MGOPT_OP_reduce_prod &&
      kind != MGOPT_OP_reduce_max && kind != MGOPT_OP_reduce_min && kind != MGOPT_OP_reduce_l1_norm &&
      kind != MGOPT_OP_reduce_sum_square)
    return MGOPT__K_NO;
  wide = kind == MGOPT_OP_reduce_l1_norm || kind == MGOPT_OP_reduce_l2_norm || kind == MGOPT_OP_reduce_log_sum ||
         kind == MGOPT_OP_reduce_log_sum_exp || kind == MGOPT_OP_reduce_sum_square;
  if (wide && lane == MGOPT__LANE_F32) lane = MGOPT__LANE_F64;
  keep = mgopt_op_get_bool(op, "keep_dims", 0);
  if (!mgopt__kr_axes(k, x, red, &orank, oshape, keep)) return MGOPT__K_NO;
  rank = x->rank;
  for (d = 0; d < rank; d++) {
    shape[d] = x->shape[d];
    full[d] = red[d] ? 1 : x->shape[d];
    if (red[d]) count *= x->shape[d];
  }
  if (count == 0 && !wide && kind != MGOPT_OP_reduce_sum && kind != MGOPT_OP_reduce_prod) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, dt, orank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  on = k->out[0]->numel;
  xn = x->numel;
  if (on == 0) return MGOPT__K_OK;
  mgopt__k_strides(rank, full, ost);
  for (d = 0; d < rank; d++)
    if (red[d]) ost[d] = 0;
  in = mgopt__k_scratch(k, xn, mgopt__k_lane_size(lane));
  acc = mgopt__k_scratch(k, on, mgopt__k_lane_size(lane));
  if (!in || !acc) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, lane, in);
  if (r != MGOPT__K_OK) return r;
  if (lane == MGOPT__LANE_F32) {
    switch (kind) {
      /* -0 is the additive identity that keeps the sign of an all -0 sum */
      case MGOPT_OP_reduce_sum: case MGOPT_OP_reduce_mean: MGOPT__KR_ACC(float, count ? -0.0f : 0.0f, a_ + v_); break;
      case MGOPT_OP_reduce_prod: MGOPT__KR_ACC(float, 1.0f, a_ * v_); break;
      case MGOPT_OP_reduce_max: MGOPT__KR_ACC(float, -HUGE_VALF, (a_ >= v_ || a_ != a_) ? a_ : v_); break;
      case MGOPT_OP_reduce_min: MGOPT__KR_ACC(float, HUGE_VALF, (a_ <= v_ || a_ != a_) ? a_ : v_); break;
      default: return MGOPT__K_NO;
    }
    if (kind == MGOPT_OP_reduce_mean) {
      float *a = (float *)acc, c = (float)count;
      int64_t i;
      for (i = 0; i < on; i++) a[i] = a[i] / c;
    }
  } else if (lane == MGOPT__LANE_F64) {
    switch (kind) {
      case MGOPT_OP_reduce_sum: case MGOPT_OP_reduce_mean: MGOPT__KR_ACC(double, count ? -0.0 : 0.0, a_ + v_); break;
      case MGOPT_OP_reduce_prod: MGOPT__KR_ACC(double, 1.0, a_ * v_); break;
      case MGOPT_OP_reduce_max: MGOPT__KR_ACC(double, -HUGE_VAL, (a_ >= v_ || a_ != a_) ? a_ : v_); break;
      case MGOPT_OP_reduce_min: MGOPT__KR_ACC(double, HUGE_VAL, (a_ <= v_ || a_ != a_) ? a_ : v_); break;
      case MGOPT_OP_reduce_l1_norm: MGOPT__KR_ACC(double, 0.0, a_ + fabs(v_)); break;
      case MGOPT_OP_reduce_l2_norm: case MGOPT_OP_reduce_sum_square: MGOPT__KR_ACC(double, 0.0, a_ + v_ * v_); break;
      case MGOPT_OP_reduce_log_sum: MGOPT__KR_ACC(double, 0.0, a_ + v_); break;
      case MGOPT_OP_reduce_log_sum_exp: {
        double *mx = (double *)mgopt__k_scratch(k, on, sizeof(double));
        double *a = (double *)acc;
        int64_t i;
        if (!mx) return MGOPT__K_OOM;
        MGOPT__KR_ACC(double, -HUGE_VAL, (a_ >= v_ || a_ != a_) ? a_ : v_);
        for (i = 0; i < on; i++) mx[i] = (a[i] - a[i] == 0.0) ? a[i] : 0.0; /* finite max, else 0 */
        MGOPT__KR_ACC(double, 0.0, a_ + exp(v_ - mx[o_ + j_ * s_]));
        for (i = 0; i < on; i++) a[i] = mx[i] + log(a[i]);
        break;
      }
      default: return MGOPT__K_NO;
    }
    if (kind == MGOPT_OP_reduce_mean || kind == MGOPT_OP_reduce_l2_norm || kind == MGOPT_OP_reduce_log_sum) {
      double *a = (double *)acc, c = (double)count;
      int64_t i;
      for (i = 0; i < on; i++)
        a[i] = kind == MGOPT_OP_reduce_mean ? a[i] / c : kind == MGOPT_OP_reduce_l2_norm ? sqrt(a[i]) : log(a[i]);
    }
  } else {
    switch (kind) {
      case MGOPT_OP_reduce_sum: MGOPT__KR_ACC(int64_t, 0, (int64_t)((uint64_t)a_ + (uint64_t)v_)); break;
      case MGOPT_OP_reduce_prod: MGOPT__KR_ACC(int64_t, 1, (int64_t)((uint64_t)a_ * (uint64_t)v_)); break;
      case MGOPT_OP_reduce_max: MGOPT__KR_ACC(int64_t, INT64_MIN, a_ >= v_ ? a_ : v_); break;
      case MGOPT_OP_reduce_min: MGOPT__KR_ACC(int64_t, INT64_MAX, a_ <= v_ ? a_ : v_); break;
      case MGOPT_OP_reduce_l1_norm:
        MGOPT__KR_ACC(int64_t, 0, (int64_t)((uint64_t)a_ + (v_ < 0 ? 0u - (uint64_t)v_ : (uint64_t)v_)));
        break;
      case MGOPT_OP_reduce_sum_square: MGOPT__KR_ACC(int64_t, 0, (int64_t)((uint64_t)a_ + (uint64_t)v_ * (uint64_t)v_)); break;
      default: return MGOPT__K_NO;
    }
  }
  mgopt__k_store(lane, acc, on, dt, od);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- softmax */

/* softmax along one axis: e = exp(x - max), e / sum(e). For fp16 / bf16 the
   difference and the exponential are rounded to the dtype, as numpy does. */
#define MGOPT__KR_SOFTMAX(T, EXP, RND)                                                \
  do {                                                                                \
    T *MGOPT_RESTRICT v_ = (T *)buf;                                                  \
    int64_t o_, i_, a_;                                                               \
    for (o_ = 0; o_ < outer; o_++)                                                    \
      for (i_ = 0; i_ < inner; i_++) {                                                \
        T *p_ = v_ + o_ * len * inner + i_;                                           \
        T mx_ = p_[0], s_ = (T)0;                                                     \
        for (a_ = 1; a_ < len; a_++) {                                                \
          T y_ = p_[a_ * inner];                                                      \
          mx_ = (mx_ >= y_ || mx_ != mx_) ? mx_ : y_;                                 \
        }                                                                             \
        for (a_ = 0; a_ < len; a_++) {                                                \
          T e_ = RND(EXP(RND(p_[a_ * inner] - mx_)));                                 \
          p_[a_ * inner] = e_;                                                        \
          s_ += e_;                                                                   \
        }                                                                             \
        s_ = RND(s_);                                                                 \
        for (a_ = 0; a_ < len; a_++) p_[a_ * inner] = p_[a_ * inner] / s_;            \
      }                                                                               \
  } while (0)

MGOPT__PRIVATE int mgopt__kr_softmax(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  int64_t outer = 1, inner = 1, len;
  int32_t axis, d;
  mgopt_dtype dt;
  int lane, r;
  void *buf, *od;
  if (!x || x->rank < 1) return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  lane = mgopt__k_lane(dt);
  if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64) return MGOPT__K_NO;
  if (!mgopt__k_axis(mgopt_op_get_int(k->op, "axis", -1), x->rank, &axis)) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, dt, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  if (x->numel == 0) return MGOPT__K_OK;
  for (d = 0; d < axis; d++) outer *= x->shape[d];
  for (d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
  len = x->shape[axis];
  buf = mgopt__k_scratch(k, x->numel, mgopt__k_lane_size(lane));
  if (!buf) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, lane, buf);
  if (r != MGOPT__K_OK) return r;
  if (lane == MGOPT__LANE_F32) {
#define MGOPT__KR_RND32(v) mgopt__k_rnd(dt, (v))
    MGOPT__KR_SOFTMAX(float, expf, MGOPT__KR_RND32);
  } else {
#define MGOPT__KR_RND64(v) (v)
    MGOPT__KR_SOFTMAX(double, exp, MGOPT__KR_RND64);
  }
  mgopt__k_store(lane, buf, x->numel, dt, od);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- matmul, linear */

/* C[m, n] = sum_k A[m, k] * B[k, n] for one matrix pair, A and B addressed
   through (row, col) strides so transposes need no copy. The products of a
   row go through `prod` before being added, keeping a*b+c unfused. */
#define MGOPT__KR_GEMM(NAME, T)                                                       \
  static void NAME(const T *a, int64_t ars, int64_t acs, const T *b, int64_t brs,     \
                   int64_t bcs, T *MGOPT_RESTRICT c, T *MGOPT_RESTRICT prod,          \
                   int64_t M, int64_t K, int64_t N) {                                 \
    int64_t m, kk, n;                                                                 \
    for (m = 0; m < M; m++) {                                                         \
      T *MGOPT_RESTRICT crow = c + m * N;                                             \
      for (n = 0; n < N; n++) crow[n] = (T)0;                                         \
      for (kk = 0; kk < K; kk++) {                                                    \
        const T av = a[m * ars + kk * acs];                                           \
        const T *brow = b + kk * brs;                                                 \
        if (bcs == 1) for (n = 0; n < N; n++) prod[n] = av * brow[n];                 \
        else for (n = 0; n < N; n++) prod[n] = av * brow[n * bcs];                    \
        for (n = 0; n < N; n++) crow[n] = crow[n] + prod[n];                          \
      }                                                                               \
    }                                                                                 \
  }
MGOPT__KR_GEMM(mgopt__kr_gemm_f32, float)
MGOPT__KR_GEMM(mgopt__kr_gemm_f64, double)

/* Batched matmul with numpy broadcasting of the batch dims. x is [..., M, K]
   (or [..., K, M] when tx), y is [..., K, N] (or [..., N, K] when ty). */
static int mgopt__kr_bmm(mgopt__kctx *k, mgopt_tensor *x, mgopt_tensor *y, int tx, int ty, int lane,
                         void *res, int32_t *orank_out, int64_t *oshape_out) {
  int64_t xs[MGOPT_MAX_RANK], ys[MGOPT_MAX_RANK], bshape[MGOPT_MAX_RANK],
      xst[MGOPT_MAX_RANK], yst[MGOPT_MAX_RANK], bx[MGOPT_MAX_RANK], by[MGOPT_MAX_RANK],
      idx[MGOPT_MAX_RANK], M, K, N, K2, nb = 1, b, xo = 0, yo = 0;
  int32_t xr = x->rank, yr = y->rank, br, d, orank = 0;
  size_t es = mgopt__k_lane_size(lane);
  void *xa, *ya, *prod;
  int r;
  if (xr < 1 || yr < 1 || (xr == 1 && tx) || (yr == 1 && ty)) return MGOPT__K_NO;
  /* promote rank-1 operands as numpy does */
  if (xr == 1) { xs[0] = 1; xs[1] = x->shape[0]; xr = 2; }
  else for (d = 0; d < xr; d++) xs[d] = x->shape[d];
  if (yr == 1) { ys[0] = y->shape[0]; ys[1] = 1; yr = 2; }
  else for (d = 0; d < yr; d++) ys[d] = y->shape[d];
  M = tx ? xs[xr - 1] : xs[xr - 2];
  K = tx ? xs[xr - 2] : xs[xr - 1];
  K2 = ty ? ys[yr - 1] : ys[yr - 2];
  N = ty ? ys[yr - 2] : ys[yr - 1];
  if (K != K2) return MGOPT__K_NO;
  if (!mgopt__k_bcast_shape(xr - 2, xs, yr - 2, ys, &br, bshape)) return MGOPT__K_NO;
  for (d = 0; d < br; d++) {
    oshape_out[orank++] = bshape[d];
    if (!mgopt__mul_i64(nb, bshape[d], &nb)) return MGOPT__K_NO;
  }
  if (x->rank > 1) oshape_out[orank++] = M;
  if (y->rank > 1) oshape_out[orank++] = N;
  *orank_out = orank;
  if (!res) return MGOPT__K_OK; /* shape only */
  /* batch strides (in matrices), 0 where broadcast */
  mgopt__k_strides(xr - 2, xs, xst);
  mgopt__k_strides(yr - 2, ys, yst);
  for (d = 0; d < br; d++) {
    int32_t dx = d - (br - (xr - 2)), dy = d - (br - (yr - 2));
    bx[d] = (dx < 0 || xs[dx] == 1) ? 0 : xst[dx] * M * K;
    by[d] = (dy < 0 || ys[dy] == 1) ? 0 : yst[dy] * K * N;
    idx[d] = 0;
  }
  xa = mgopt__k_scratch(k, x->numel, es);
  ya = mgopt__k_scratch(k, y->numel, es);
  prod = mgopt__k_scratch(k, N, es);
  if (!xa || !ya || !prod) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, lane, xa);
  if (r == MGOPT__K_OK) r = mgopt__k_load(k, y, lane, ya);
  if (r != MGOPT__K_OK) return r;
  for (b = 0; b < nb; b++) {
    int64_t ars = tx ? 1 : K, acs = tx ? M : 1, brs = ty ? 1 : N, bcs = ty ? K : 1;
    if (lane == MGOPT__LANE_F32)
      mgopt__kr_gemm_f32((const float *)xa + xo, ars, acs, (const float *)ya + yo, brs, bcs,
                         (float *)res + b * M * N, (float *)prod, M, K, N);
    else
      mgopt__kr_gemm_f64((const double *)xa + xo, ars, acs, (const double *)ya + yo, brs, bcs,
                         (double *)res + b * M * N, (double *)prod, M, K, N);
    for (d = br - 1; d >= 0; d--) {
      xo += bx[d];
      yo += by[d];
      if (++idx[d] < bshape[d]) break;
      xo -= bx[d] * bshape[d];
      yo -= by[d] * bshape[d];
      idx[d] = 0;
    }
  }
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__kr_matmul(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x"), *y = mgopt__k_operand(k, "y");
  int64_t oshape[MGOPT_MAX_RANK + 2], n;
  int32_t orank;
  int tx, ty, lane, r;
  mgopt_dtype dt;
  void *res, *od;
  if (!x || !y || x->dtype != y->dtype || x->rank > MGOPT_MAX_RANK || y->rank > MGOPT_MAX_RANK)
    return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  lane = mgopt__k_lane(dt);
  if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64) return MGOPT__K_NO;
  tx = mgopt_op_get_bool(k->op, "transpose_x", 0);
  ty = mgopt_op_get_bool(k->op, "transpose_y", 0);
  r = mgopt__kr_bmm(k, x, y, tx, ty, lane, NULL, &orank, oshape);
  if (r != MGOPT__K_OK) return r;
  r = mgopt__k_out(k, 0, dt, orank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  n = k->out[0]->numel;
  if (n == 0) return MGOPT__K_OK;
  res = mgopt__k_scratch(k, n, mgopt__k_lane_size(lane));
  if (!res) return MGOPT__K_OOM;
  r = mgopt__kr_bmm(k, x, y, tx, ty, lane, res, &orank, oshape);
  if (r != MGOPT__K_OK) return r;
  mgopt__k_store(lane, res, n, dt, od);
  return MGOPT__K_OK;
}

/* linear(x, weight, bias) = matmul(x, weight^T) + bias; the matmul result is
   rounded to the dtype before the bias is added (two numpy operations). */
MGOPT__PRIVATE int mgopt__kr_linear(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  mgopt_tensor *x = mgopt__k_operand(k, "x"), *w = mgopt__k_operand(k, "weight"),
               *bias = mgopt__k_operand(k, "bias");
  int64_t oshape[MGOPT_MAX_RANK + 2], n, i, N;
  int32_t orank;
  int lane, r;
  mgopt_dtype dt;
  void *res, *bv = NULL, *od;
  if (!x || !w || x->dtype != w->dtype || w->rank != 2 || x->rank > MGOPT_MAX_RANK) return MGOPT__K_NO;
  if (mgopt_op_operand(op, "bias") && !bias) return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  lane = mgopt__k_lane(dt);
  if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64) return MGOPT__K_NO;
  N = w->shape[0];
  if (bias && (bias->dtype != x->dtype || bias->rank != 1 || bias->shape[0] != N)) return MGOPT__K_NO;
  r = mgopt__kr_bmm(k, x, w, 0, 1, lane, NULL, &orank, oshape);
  if (r != MGOPT__K_OK) return r;
  r = mgopt__k_out(k, 0, dt, orank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  n = k->out[0]->numel;
  if (n == 0) return MGOPT__K_OK;
  res = mgopt__k_scratch(k, n, mgopt__k_lane_size(lane));
  if (!res) return MGOPT__K_OOM;
  r = mgopt__kr_bmm(k, x, w, 0, 1, lane, res, &orank, oshape);
  if (r != MGOPT__K_OK) return r;
  if (bias && N > 0) {
    bv = mgopt__k_scratch(k, N, mgopt__k_lane_size(lane));
    if (!bv) return MGOPT__K_OOM;
    r = mgopt__k_load(k, bias, lane, bv);
    if (r != MGOPT__K_OK) return r;
    if (lane == MGOPT__LANE_F32) {
      float *a = (float *)res;
      const float *b = (const float *)bv;
      for (i = 0; i < n; i++) a[i] = mgopt__k_rnd(dt, a[i]) + b[i % N];
    } else {
      double *a = (double *)res;
      const double *b = (const double *)bv;
      for (i = 0; i < n; i++) a[i] = a[i] + b[i % N];
    }
  }
  mgopt__k_store(lane, res, n, dt, od);
  return MGOPT__K_OK;
}
/* src/kernels/index.c — kernels of ops that compute indices or scan along an axis: reduce_argmax, reduce_argmin, cumsum,
   gather_along_axis.

   Numeric contract of reduce_argmax / reduce_argmin: x is read exactly in its
   compute lane (fp16, bf16 and fp32 widen exactly to float, fp64 stays double,
   integers of up to 64 bits are int64; uint64 above INT64_MAX is not folded),
   so every comparison is exact. Ties give the lowest index (numpy, ONNX with
   select_last_index 0). A NaN counts as larger than and smaller than every
   number: the first NaN along the axis wins (numpy's rule). An empty axis has
   no answer and is not folded; an index that output_dtype cannot hold (uint16
   over 65535, int32 over INT32_MAX) is not folded either.

   Numeric contract of cumsum: the running sum is added in order along the axis
   (from the end when reverse), one addition per element as a sequential
   runtime does: fp32 sums in float, fp64 in double, fp16 and bf16 sum in float
   and each output is rounded once to the dtype (a runtime summing in fp16
   rounds every partial sum: up to one fp16 ulp per step apart). Integers sum in
   int64 with two's complement wrap-around and are stored truncated to the
   dtype, as ONNX Runtime's fixed-width sums. exclusive shifts by one: the
   first output of each run is 0. NaN and Inf propagate as in IEEE addition. */

/* ---------------------------------------------------------------- reduce_argmax, reduce_argmin */

/* The index of the extreme of row (len elements, stride `inner`) of a lane
   buffer; `want_max` picks the comparison. NaN-first as the contract says. */
#define MGOPT__KX_ARG_ROW(T, ISNAN)                                                        \
  static int64_t mgopt__kx_arg_row_##T(const T *v, int64_t len, int64_t inner, int want_max) { \
    int64_t i, best = 0;                                                                   \
    T bv = v[0];                                                                           \
    if (ISNAN(bv)) return 0;                                                               \
    for (i = 1; i < len; i++) {                                                            \
      T c = v[i * inner];                                                                  \
      if (ISNAN(c)) return i;                                                              \
      if (want_max ? c > bv : c < bv) {                                                    \
        bv = c;                                                                            \
        best = i;                                                                          \
      }                                                                                    \
    }                                                                                      \
    return best;                                                                           \
  }
#define MGOPT__KX_ISNAN_F(v) ((v) != (v))
#define MGOPT__KX_ISNAN_I(v) ((void)(v), 0)
typedef float mgopt__kx_f32;
typedef double mgopt__kx_f64;
typedef int64_t mgopt__kx_i64;
MGOPT__KX_ARG_ROW(mgopt__kx_f32, MGOPT__KX_ISNAN_F)
MGOPT__KX_ARG_ROW(mgopt__kx_f64, MGOPT__KX_ISNAN_F)
MGOPT__KX_ARG_ROW(mgopt__kx_i64, MGOPT__KX_ISNAN_I)

MGOPT__PRIVATE int mgopt__kx_reduce_arg(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  int64_t shape[MGOPT_MAX_RANK], outer = 1, inner = 1, len, o, i, lo, hi;
  int32_t axis, d, orank = 0;
  int keep = mgopt_op_get_bool(k->op, "keep_dims", 0), want_max = k->op->kind == MGOPT_OP_reduce_argmax, lane, r;
  size_t n = 0;
  const char *ods = mgopt_op_get_string(k->op, "output_dtype", &n);
  mgopt_dtype odt = ods ? mgopt_dtype_from_name(ods, n) : MGOPT_DT_INT32;
  void *buf, *od;
  if (!x || x->rank < 1) return MGOPT__K_NO;
  if (odt != MGOPT_DT_INT32 && odt != MGOPT_DT_UINT16 && odt != MGOPT_DT_INT64) return MGOPT__K_NO;
  lane = mgopt__k_lane((mgopt_dtype)x->dtype);
  if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64 && lane != MGOPT__LANE_I64) return MGOPT__K_NO;
  if (!mgopt__k_axis(mgopt_op_get_int(k->op, "axis", -1), x->rank, &axis)) return MGOPT__K_NO;
  len = x->shape[axis];
  if (len < 1 || !mgopt__k_int_range(odt, &lo, &hi) || len - 1 > hi) return MGOPT__K_NO;
  for (d = 0; d < x->rank; d++) {
    if (d < axis) outer *= x->shape[d];
    if (d > axis) inner *= x->shape[d];
    if (d != axis) shape[orank++] = x->shape[d];
    else if (keep) shape[orank++] = 1;
  }
  r = mgopt__k_out_full(k, 0, odt, orank, shape, &od);
  if (r != MGOPT__K_OK || x->numel == 0) return r;
  buf = mgopt__k_scratch(k, x->numel, mgopt__k_lane_size(lane));
  if (!buf) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, lane, buf);
  if (r != MGOPT__K_OK) return r;
  for (o = 0; o < outer; o++)
    for (i = 0; i < inner; i++) {
      int64_t at = o * len * inner + i, best;
      if (lane == MGOPT__LANE_F32) best = mgopt__kx_arg_row_mgopt__kx_f32((const float *)buf + at, len, inner, want_max);
      else if (lane == MGOPT__LANE_F64) best = mgopt__kx_arg_row_mgopt__kx_f64((const double *)buf + at, len, inner, want_max);
      else best = mgopt__kx_arg_row_mgopt__kx_i64((const int64_t *)buf + at, len, inner, want_max);
      mgopt__k_store_i64_at(odt, od, o * inner + i, best);
    }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- cumsum */

#define MGOPT__KX_CUMSUM(T, ADD)                                                                       \
  static void mgopt__kx_cumsum_##T(T *v, int64_t outer, int64_t len, int64_t inner, int excl, int rev) { \
    int64_t o, i, j;                                                                                   \
    for (o = 0; o < outer; o++)                                                                        \
      for (i = 0; i < inner; i++) {                                                                    \
        T *row = v + o * len * inner + i, acc = (T)0;                                                  \
        for (j = 0; j < len; j++) {                                                                    \
          T *e = row + (rev ? len - 1 - j : j) * inner, c = *e;                                        \
          if (!excl) acc = ADD(acc, c);                                                                \
          *e = acc;                                                                                    \
          if (excl) acc = ADD(acc, c);                                                                 \
        }                                                                                              \
      }                                                                                                \
  }
#define MGOPT__KX_ADD_F(a, b) ((a) + (b))
#define MGOPT__KX_ADD_I(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
MGOPT__KX_CUMSUM(mgopt__kx_f32, MGOPT__KX_ADD_F)
MGOPT__KX_CUMSUM(mgopt__kx_f64, MGOPT__KX_ADD_F)
MGOPT__KX_CUMSUM(mgopt__kx_i64, MGOPT__KX_ADD_I)

MGOPT__PRIVATE int mgopt__kx_cumsum(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  int64_t outer = 1, inner = 1, len;
  int32_t axis, d;
  int excl = mgopt_op_get_bool(k->op, "exclusive", 0), rev = mgopt_op_get_bool(k->op, "reverse", 0), lane, r;
  mgopt_dtype dt;
  void *buf, *od;
  if (!x || x->rank < 1) return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  lane = mgopt__k_lane(dt);
  if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64 && lane != MGOPT__LANE_I64) return MGOPT__K_NO;
  if (!mgopt__k_axis(mgopt_op_get_int(k->op, "axis", 0), x->rank, &axis)) return MGOPT__K_NO;
  len = x->shape[axis];
  for (d = 0; d < axis; d++) outer *= x->shape[d];
  for (d = axis + 1; d < x->rank; d++) inner *= x->shape[d];
  r = mgopt__k_out_full(k, 0, dt, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK || x->numel == 0) return r;
  buf = mgopt__k_scratch(k, x->numel, mgopt__k_lane_size(lane));
  if (!buf) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, lane, buf);
  if (r != MGOPT__K_OK) return r;
  if (lane == MGOPT__LANE_F32) mgopt__kx_cumsum_mgopt__kx_f32((float *)buf, outer, len, inner, excl, rev);
  else if (lane == MGOPT__LANE_F64) mgopt__kx_cumsum_mgopt__kx_f64((double *)buf, outer, len, inner, excl, rev);
  else mgopt__kx_cumsum_mgopt__kx_i64((int64_t *)buf, outer, len, inner, excl, rev);
  mgopt__k_store(lane, buf, x->numel, dt, od);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- gather_along_axis

   out[i0..ik..] = x[i0..indices[i0..ik..]..] along the axis; a negative index
   counts from the end; an index out of [-len, len) is not folded. Elements
   are copied bit for bit. */
MGOPT__PRIVATE int mgopt__kx_gather_along_axis(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x"), *ind = mgopt__k_operand(k, "indices");
  int64_t outer = 1, inner = 1, len, ilen, o, i, j, *idx;
  int32_t axis, d;
  size_t es;
  const uint8_t *src;
  uint8_t *dst;
  void *od;
  int r;
  if (!x || !ind || x->rank < 1 || x->rank != ind->rank) return MGOPT__K_NO;
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  if (!es || mgopt__k_lane((mgopt_dtype)ind->dtype) != MGOPT__LANE_I64) return MGOPT__K_NO;
  if (!mgopt__k_axis(mgopt_op_get_int(k->op, "axis", 0), x->rank, &axis)) return MGOPT__K_NO;
  for (d = 0; d < x->rank; d++) {
    if (d != axis && x->shape[d] != ind->shape[d]) return MGOPT__K_NO;
    if (d < axis) outer *= x->shape[d];
    if (d > axis) inner *= x->shape[d];
  }
  len = x->shape[axis];
  ilen = ind->shape[axis];
  idx = (int64_t *)mgopt__k_scratch(k, ind->numel, 8);
  if (!idx && ind->numel) return MGOPT__K_OOM;
  if (ind->numel) {
    r = mgopt__k_load(k, ind, MGOPT__LANE_I64, idx);
    if (r != MGOPT__K_OK) return r;
  }
  for (i = 0; i < ind->numel; i++) {
    if (idx[i] < -len || idx[i] >= len) return MGOPT__K_NO;
    if (idx[i] < 0) idx[i] += len;
  }
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, ind->rank, ind->shape, &od);
  if (r != MGOPT__K_OK || ind->numel == 0) return r;
  src = (const uint8_t *)mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  dst = (uint8_t *)od;
  for (o = 0; o < outer; o++)
    for (j = 0; j < ilen; j++)
      for (i = 0; i < inner; i++) {
        int64_t at = (o * ilen + j) * inner + i;
        memcpy(dst + (size_t)at * es, src + (size_t)((o * len + idx[at]) * inner + i) * es, es);
      }
  return MGOPT__K_OK;
}
/* src/kernels/constexpr.c — folding kernels for weight compression: constexpr_affine_dequantize,
   constexpr_lut_to_dense (iOS16 packed and iOS18 forms), constexpr_sparse_to_dense (iOS16 bit mask
   and iOS18 uint1 mask), constexpr_blockwise_shift_scale, dequantize, quantize.

   Sub-byte data is packed little-endian: element i occupies bits [i*b, i*b+b)
   counted from the least significant bit of byte 0. (De)quantization computes
   in float like MIL's reference (numpy float32) and rounds once to the output
   dtype; blockwise_shift_scale computes at the scale's dtype step by step. */

/* A scale / zero-point parameter loaded in the F32 lane and broadcast to x:
   a scalar, a vector along `axis`, or a tensor of x's rank that broadcasts. */
static int mgopt__kc_param(mgopt__kctx *k, mgopt_tensor *t, int has_axis, int32_t axis,
                           const mgopt_tensor *x, float **out) {
  mgopt_tensor view;
  int64_t vshape[MGOPT_MAX_RANK];
  int32_t d;
  void *buf;
  int r;
  if (!mgopt__k_data(k, t)) return MGOPT__K_OOM; /* aligns t itself before the view copies it */
  view = *t;
  if (t->rank == 0) {
    view.rank = 0;
  } else if (t->rank == 1 && has_axis && x->rank >= 1) {
    if (t->shape[0] != x->shape[axis]) return MGOPT__K_NO;
    for (d = 0; d < x->rank; d++) vshape[d] = d == axis ? t->shape[0] : 1;
    view.rank = x->rank;
    view.shape = vshape;
  } else if (t->rank == x->rank) {
    for (d = 0; d < x->rank; d++)
      if (t->shape[d] != 1 && t->shape[d] != x->shape[d]) return MGOPT__K_NO;
  } else {
    return MGOPT__K_NO;
  }
  r = mgopt__k_load_bcast(k, &view, MGOPT__LANE_F32, x->rank, x->shape, x->numel, &buf);
  if (r == MGOPT__K_OK) *out = (float *)buf;
  return r;
}

/* scale * (data - zero_point) in float, stored at the scale's dtype. */
static int mgopt__kc_deq(mgopt__kctx *k, const char *data_slot, int axis_required) {
  const mgopt_op *op = k->op;
  mgopt_tensor *q = mgopt__k_operand(k, data_slot), *s = mgopt__k_operand(k, "scale"),
               *zp = mgopt__k_operand(k, "zero_point");
  int has_axis = mgopt__k_has_param(op, "axis");
  int32_t axis = 0;
  float *qv, *sv, *zv = NULL;
  int64_t i, n;
  mgopt_dtype dt;
  void *od;
  int r;
  if (!q || !s || (mgopt_op_operand(op, "zero_point") && !zp)) return MGOPT__K_NO;
  if (axis_required && !has_axis) return MGOPT__K_NO;
  dt = (mgopt_dtype)s->dtype;
  if (mgopt__k_lane(dt) != MGOPT__LANE_F32 || mgopt__k_lane((mgopt_dtype)q->dtype) != MGOPT__LANE_I64)
    return MGOPT__K_NO;
  if (has_axis && q->rank > 0 && !mgopt__k_axis(mgopt_op_get_int(op, "axis", 0), q->rank, &axis))
    return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, dt, q->rank, q->shape, &od);
  if (r != MGOPT__K_OK) return r;
  n = q->numel;
  if (n == 0) return MGOPT__K_OK;
  qv = (float *)mgopt__k_scratch(k, n, 4);
  if (!qv) return MGOPT__K_OOM;
  r = mgopt__k_load(k, q, MGOPT__LANE_F32, qv);
  if (r == MGOPT__K_OK) r = mgopt__kc_param(k, s, has_axis, axis, q, &sv);
  if (r == MGOPT__K_OK && zp) r = mgopt__kc_param(k, zp, has_axis, axis, q, &zv);
  if (r != MGOPT__K_OK) return r;
  if (zv)
    for (i = 0; i < n; i++) qv[i] = qv[i] - zv[i];
  for (i = 0; i < n; i++) qv[i] = qv[i] * sv[i];
  mgopt__k_store(MGOPT__LANE_F32, qv, n, dt, od);
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__kc_affine_dequantize(mgopt__kctx *k) {
  if (!mgopt__k_operand(k, "zero_point")) return MGOPT__K_NO;
  return mgopt__kc_deq(k, "quantized_data", 1);
}

MGOPT__PRIVATE int mgopt__kc_dequantize(mgopt__kctx *k) { return mgopt__kc_deq(k, "input", 0); }

/* clip(round_half_even(input / scale) + zero_point) into int8 / uint8. */
MGOPT__PRIVATE int mgopt__kc_quantize(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  mgopt_tensor *x = mgopt__k_operand(k, "input"), *s = mgopt__k_operand(k, "scale"),
               *zp = mgopt__k_operand(k, "zero_point");
  int has_axis = mgopt__k_has_param(op, "axis");
  int32_t axis = 0;
  size_t len = 0;
  const char *ods = mgopt_op_get_string(op, "output_dtype", &len);
  mgopt_dtype dt, xdt;
  float *xv, *sv, *zv = NULL;
  int64_t i, n, lo, hi;
  void *od;
  int r;
  if (!x || !s || !ods || (mgopt_op_operand(op, "zero_point") && !zp)) return MGOPT__K_NO;
  dt = mgopt_dtype_from_name(ods, len);
  xdt = (mgopt_dtype)x->dtype;
  if ((dt != MGOPT_DT_INT8 && dt != MGOPT_DT_UINT8) || (zp && zp->dtype != (uint8_t)dt)) return MGOPT__K_NO;
  if (mgopt__k_lane(xdt) != MGOPT__LANE_F32 || s->dtype != x->dtype) return MGOPT__K_NO;
  if (has_axis && x->rank > 0 && !mgopt__k_axis(mgopt_op_get_int(op, "axis", 0), x->rank, &axis))
    return MGOPT__K_NO;
  mgopt__k_int_range(dt, &lo, &hi);
  r = mgopt__k_out(k, 0, dt, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  n = x->numel;
  if (n == 0) return MGOPT__K_OK;
  xv = (float *)mgopt__k_scratch(k, n, 4);
  if (!xv) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, MGOPT__LANE_F32, xv);
  if (r == MGOPT__K_OK) r = mgopt__kc_param(k, s, has_axis, axis, x, &sv);
  if (r == MGOPT__K_OK && zp) r = mgopt__kc_param(k, zp, has_axis, axis, x, &zv);
  if (r != MGOPT__K_OK) return r;
  for (i = 0; i < n; i++) {
    float q = mgopt__k_rnd(xdt, xv[i] / sv[i]), f = floorf(q), diff = q - f;
    if (q != q) return MGOPT__K_NO;
    if (diff > 0.5f || (diff == 0.5f && fmodf(f, 2.0f) != 0.0f)) f += 1.0f;
    if (zv) f = mgopt__k_rnd(xdt, f + zv[i]);
    if (f < (float)lo) f = (float)lo;
    if (f > (float)hi) f = (float)hi;
    mgopt__k_store_i64_at(dt, od, i, (int64_t)f);
  }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- lut_to_dense */

/* Number of bits b with 2^b == n (1 <= b <= 8), else 0. */
static int mgopt__kc_log2(int64_t n) {
  int b;
  for (b = 1; b <= 8; b++)
    if (n == ((int64_t)1 << b)) return b;
  return 0;
}

static int mgopt__kc_index_bits(mgopt_dtype dt) {
  switch (dt) {
    case MGOPT_DT_UINT1: case MGOPT_DT_UINT2: case MGOPT_DT_UINT3: case MGOPT_DT_UINT4:
    case MGOPT_DT_UINT6: case MGOPT_DT_UINT8:
      return mgopt_dtype_bits(dt);
    default: return 0;
  }
}

/* iOS16: indices are uint8 bytes holding packed nbits fields, lut is a vector
   of 2^nbits entries, shape gives the output shape. */
static int mgopt__kc_lut16(mgopt__kctx *k, mgopt_tensor *ind, mgopt_tensor *lut, const int64_t *sv,
                           int64_t ns) {
  int64_t shape[MGOPT_MAX_RANK], n, bits, i;
  int nb = mgopt__kc_log2(lut->numel);
  size_t es = mgopt__k_esize((mgopt_dtype)lut->dtype);
  const uint8_t *idx, *lv;
  uint8_t *dst;
  void *od;
  int32_t d;
  int r;
  if (ind->dtype != MGOPT_DT_UINT8 || ind->rank != 1 || lut->rank != 1 || !nb || !es ||
      ns > MGOPT_MAX_RANK)
    return MGOPT__K_NO;
  for (d = 0; d < (int32_t)ns; d++) {
    if (sv[d] < 0) return MGOPT__K_NO;
    shape[d] = sv[d];
  }
  n = mgopt__k_numel((int32_t)ns, shape);
  if (n < 0 || !mgopt__mul_i64(n, nb, &bits) || (bits + 7) / 8 != ind->numel) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, (mgopt_dtype)lut->dtype, (int32_t)ns, shape, &od);
  if (r != MGOPT__K_OK) return r;
  idx = (const uint8_t *)mgopt__k_data(k, ind);
  lv = (const uint8_t *)mgopt__k_data(k, lut);
  if (!idx || !lv) return MGOPT__K_OOM;
  dst = (uint8_t *)od;
  for (i = 0; i < n; i++) memcpy(dst + (size_t)i * es, lv + (size_t)mgopt__k_bits(idx, i, nb) * es, es);
  return MGOPT__K_OK;
}

/* iOS18: indices is a uintN tensor; lut is [g0..g(r-1), 2^N, VS] with one
   palette per block of indices, and vectors of VS values laid along vector_axis. */
static int mgopt__kc_lut18(mgopt__kctx *k, mgopt_tensor *ind, mgopt_tensor *lut) {
  int32_t rank = ind->rank, d, va = 0;
  int nb = mgopt__kc_index_bits((mgopt_dtype)ind->dtype);
  size_t es = mgopt__k_esize((mgopt_dtype)lut->dtype);
  int64_t shape[MGOPT_MAX_RANK], blk[MGOPT_MAX_RANK], lst[MGOPT_MAX_RANK + 2],
      ost[MGOPT_MAX_RANK], idx[MGOPT_MAX_RANK], vs, i, v;
  const uint8_t *iv, *lv;
  uint8_t *dst;
  void *od;
  int r;
  if (!nb || !es || rank < 1 || rank + 2 > MGOPT_MAX_RANK || lut->rank != rank + 2) return MGOPT__K_NO;
  if (lut->shape[rank] != ((int64_t)1 << nb)) return MGOPT__K_NO;
  vs = lut->shape[rank + 1];
  if (vs < 1) return MGOPT__K_NO;
  if (vs > 1 || mgopt__k_has_param(k->op, "vector_axis")) {
    if (!mgopt__k_has_param(k->op, "vector_axis") ||
        !mgopt__k_axis(mgopt_op_get_int(k->op, "vector_axis", 0), rank, &va))
      return MGOPT__K_NO;
  }
  for (d = 0; d < rank; d++) {
    if (lut->shape[d] < 1 || ind->shape[d] % lut->shape[d]) return MGOPT__K_NO;
    blk[d] = ind->shape[d] / lut->shape[d];
    shape[d] = ind->shape[d];
  }
  if (!mgopt__mul_i64(shape[va], vs, &shape[va])) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, (mgopt_dtype)lut->dtype, rank, shape, &od);
  if (r != MGOPT__K_OK) return r;
  if (ind->numel == 0) return MGOPT__K_OK;
  iv = (const uint8_t *)mgopt__k_data(k, ind);
  lv = (const uint8_t *)mgopt__k_data(k, lut);
  if (!iv || !lv) return MGOPT__K_OOM;
  mgopt__k_strides(rank + 2, lut->shape, lst);
  mgopt__k_strides(rank, shape, ost);
  dst = (uint8_t *)od;
  for (d = 0; d < rank; d++) idx[d] = 0;
  for (i = 0; i < ind->numel; i++) {
    int64_t lo = (int64_t)mgopt__k_bits(iv, i, nb) * vs, oo = 0;
    for (d = 0; d < rank; d++) {
      lo += (idx[d] / blk[d]) * lst[d];
      oo += (d == va ? idx[d] * vs : idx[d]) * ost[d];
    }
    for (v = 0; v < vs; v++)
      memcpy(dst + (size_t)(oo + v * ost[va]) * es, lv + (size_t)(lo + v) * es, es);
    for (d = rank - 1; d >= 0; d--) {
      if (++idx[d] < ind->shape[d]) break;
      idx[d] = 0;
    }
  }
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__kc_lut_to_dense(mgopt__kctx *k) {
  mgopt_tensor *ind = mgopt__k_operand(k, "indices"), *lut = mgopt__k_operand(k, "lut");
  const int64_t *sv;
  int64_t ns;
  if (!ind || !lut) return MGOPT__K_NO;
  ns = mgopt__k_ints(k, "shape", &sv);
  if (ns == -2) return MGOPT__K_NO;
  if (ns >= 0) return mgopt__kc_lut16(k, ind, lut, sv, ns);
  return mgopt__kc_lut18(k, ind, lut);
}

/* ---------------------------------------------------------------- sparse_to_dense */

/* Scatters nonzero_data in order into the positions whose mask bit is set. */
MGOPT__PRIVATE int mgopt__kc_sparse_to_dense(mgopt__kctx *k) {
  mgopt_tensor *nz = mgopt__k_operand(k, "nonzero_data"), *mask = mgopt__k_operand(k, "mask");
  const int64_t *sv;
  int64_t ns, shape[MGOPT_MAX_RANK], n, i, j = 0, set = 0, *vals = NULL;
  int32_t rank, d;
  mgopt_dtype dt;
  size_t es;
  const uint8_t *mv, *src;
  uint8_t *dst;
  void *od;
  int r;
  if (!nz || !mask || nz->rank != 1) return MGOPT__K_NO;
  dt = (mgopt_dtype)nz->dtype;
  es = mgopt__k_esize(dt);
  if (!es && dt != MGOPT_DT_INT4 && dt != MGOPT_DT_UINT4) return MGOPT__K_NO;
  ns = mgopt__k_ints(k, "shape", &sv);
  if (ns == -2) return MGOPT__K_NO;
  if (ns >= 0) {
    /* iOS16: a uint8 vector of ceil(numel / 8) mask bytes */
    if (ns > MGOPT_MAX_RANK || mask->dtype != MGOPT_DT_UINT8 || mask->rank != 1) return MGOPT__K_NO;
    rank = (int32_t)ns;
    for (d = 0; d < rank; d++) shape[d] = sv[d];
    n = mgopt__k_numel(rank, shape);
    if (n < 0 || (n + 7) / 8 != mask->numel) return MGOPT__K_NO;
  } else {
    if (mask->dtype != MGOPT_DT_UINT1) return MGOPT__K_NO;
    rank = mask->rank;
    for (d = 0; d < rank; d++) shape[d] = mask->shape[d];
    n = mask->numel;
  }
  mv = (const uint8_t *)mgopt__k_data(k, mask);
  if (!mv) return MGOPT__K_OOM;
  for (i = 0; i < n; i++) set += (int64_t)mgopt__k_bits(mv, i, 1);
  if (set != nz->numel) return MGOPT__K_NO;
  if (ns >= 0)
    for (i = n; i < mask->numel * 8; i++)
      if (mgopt__k_bits(mv, i, 1)) return MGOPT__K_NO; /* padding bits must be clear */
  r = mgopt__k_out(k, 0, dt, rank, shape, &od);
  if (r != MGOPT__K_OK) return r;
  src = (const uint8_t *)mgopt__k_data(k, nz);
  if (!src) return MGOPT__K_OOM;
  if (!es) {
    vals = (int64_t *)mgopt__k_scratch(k, nz->numel, 8);
    if (!vals) return MGOPT__K_OOM;
    r = mgopt__k_load(k, nz, MGOPT__LANE_I64, vals);
    if (r != MGOPT__K_OK) return r;
  }
  dst = (uint8_t *)od;
  for (i = 0; i < n; i++) {
    if (!mgopt__k_bits(mv, i, 1)) continue;
    if (es) memcpy(dst + (size_t)i * es, src + (size_t)j * es, es);
    else mgopt__k_store_i64_at(dt, dst, i, vals[j]);
    j++;
  }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- blockwise_shift_scale */

/* p (shape s, in the F32 lane) repeated blockwise to data's shape:
   out[i] = p[i / block] per dim, via a strided view [s0, b0, s1, b1, ...]. */
static void mgopt__kc_expand_blocks(const float *p, const mgopt_tensor *pt, const mgopt_tensor *x,
                                    float *out) {
  int64_t s2[2 * MGOPT_MAX_RANK], st2[2 * MGOPT_MAX_RANK], pst[MGOPT_MAX_RANK];
  int32_t d;
  mgopt__k_strides(pt->rank, pt->shape, pst);
  for (d = 0; d < x->rank; d++) {
    s2[2 * d] = pt->shape[d];
    s2[2 * d + 1] = x->shape[d] / pt->shape[d];
    st2[2 * d] = pst[d];
    st2[2 * d + 1] = 0;
  }
  mgopt__k_strided(out, p, 4, 2 * x->rank, s2, st2, 0);
}

MGOPT__PRIVATE int mgopt__kc_blockwise_shift_scale(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  mgopt_tensor *x = mgopt__k_operand(k, "data"), *s = mgopt__k_operand(k, "scale"),
               *off = mgopt__k_operand(k, "offset");
  mgopt_dtype dt, xdt;
  int64_t n, i;
  int32_t d;
  float *xv, *sp, *sv, *op_ = NULL, *ov = NULL;
  int round_diff;
  void *od;
  int r;
  if (!x || !s || (mgopt_op_operand(op, "offset") && !off)) return MGOPT__K_NO;
  dt = (mgopt_dtype)s->dtype;
  xdt = (mgopt_dtype)x->dtype;
  if (mgopt__k_lane(dt) != MGOPT__LANE_F32 || x->rank < 1 || s->rank != x->rank) return MGOPT__K_NO;
  if (mgopt__k_lane(xdt) != MGOPT__LANE_F32 && mgopt__k_lane(xdt) != MGOPT__LANE_I64 &&
      xdt != MGOPT_DT_INT4 && xdt != MGOPT_DT_UINT4)
    return MGOPT__K_NO;
  for (d = 0; d < x->rank; d++) {
    if (s->shape[d] < 1 || x->shape[d] % s->shape[d]) return MGOPT__K_NO;
    if (off && off->shape[d] != s->shape[d]) return MGOPT__K_NO;
  }
  if (off && off->rank != s->rank) return MGOPT__K_NO;
  /* numpy promotes data - offset to fp32 when the offset is fp32 and the scale fp16 */
  round_diff = !off || !mgopt_dtype_is_float((mgopt_dtype)off->dtype) || off->dtype == s->dtype;
  r = mgopt__k_out(k, 0, dt, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  n = x->numel;
  if (n == 0) return MGOPT__K_OK;
  xv = (float *)mgopt__k_scratch(k, n, 4);
  sp = (float *)mgopt__k_scratch(k, s->numel, 4);
  sv = (float *)mgopt__k_scratch(k, n, 4);
  if (off) {
    op_ = (float *)mgopt__k_scratch(k, off->numel, 4);
    ov = (float *)mgopt__k_scratch(k, n, 4);
  }
  if (!xv || !sp || !sv || (off && (!op_ || !ov))) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, MGOPT__LANE_F32, xv);
  if (r == MGOPT__K_OK) r = mgopt__k_load(k, s, MGOPT__LANE_F32, sp);
  if (r == MGOPT__K_OK && off) r = mgopt__k_load(k, off, MGOPT__LANE_F32, op_);
  if (r != MGOPT__K_OK) return r;
  mgopt__kc_expand_blocks(sp, s, x, sv);
  if (off) mgopt__kc_expand_blocks(op_, off, x, ov);
  mgopt__k_round_f32(dt, xv, n); /* data.astype(scale dtype) */
  if (off) {
    for (i = 0; i < n; i++) xv[i] = xv[i] - ov[i];
    if (round_diff) mgopt__k_round_f32(dt, xv, n);
  }
  for (i = 0; i < n; i++) xv[i] = sv[i] * xv[i];
  mgopt__k_store(MGOPT__LANE_F32, xv, n, dt, od);
  return MGOPT__K_OK;
}
/* src/kernels/prune.c — weight pruning: magnitudes, numpy's percentile, threshold / magnitude / block / n:m masks, and the constexpr_sparse_to_dense encoding.

   Numeric contract. Magnitudes are computed in double from the weight's
   exact values: |w| for element pruning, the L2 norm of the block (sum of
   squares in double, one sqrt) for block pruning. The percentile is numpy's
   default ("linear") method evaluated in double: virtual index
   (n - 1) * (q / 100), then numpy's lerp (a + (b - a) * t, or b - (b - a) *
   (1 - t) when t >= 0.5). A magnitude is pruned when it is <= the
   percentile (or <= the threshold); a NaN magnitude is never pruned, and a
   NaN among the magnitudes makes the percentile NaN (nothing pruned), as in
   numpy. n:m ranks the magnitudes of a group ascending with ties broken by
   position (numpy's argsort on the short rows it sorts by insertion), NaN
   last. Pruning only writes zeros; the kept values are never changed. */

/* ---------------------------------------------------------------- percentile */

static void mgopt__kp_swap(double *v, int64_t i, int64_t j) {
  double t = v[i];
  v[i] = v[j];
  v[j] = t;
}

/* Reorders v[0..n) (no NaN) so that v[k] is the value a sort would put there,
   everything before it <= and everything after it >=. Quickselect with a
   median-of-three pivot; ranges of 16 or fewer finish by insertion. */
static void mgopt__kp_select(double *v, int64_t n, int64_t k) {
  int64_t lo = 0, hi = n - 1;
  while (hi - lo > 16) {
    int64_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
    double piv;
    if (v[mid] < v[lo]) mgopt__kp_swap(v, mid, lo);
    if (v[hi] < v[lo]) mgopt__kp_swap(v, hi, lo);
    if (v[hi] < v[mid]) mgopt__kp_swap(v, hi, mid);
    piv = v[mid];
    while (i <= j) {
      while (v[i] < piv) i++;
      while (v[j] > piv) j--;
      if (i <= j) {
        mgopt__kp_swap(v, i, j);
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return; /* lo..hi between j and i all equal the pivot */
  }
  {
    int64_t i, j;
    for (i = lo + 1; i <= hi; i++) {
      double x = v[i];
      for (j = i; j > lo && v[j - 1] > x; j--) v[j] = v[j - 1];
      v[j] = x;
    }
  }
}

MGOPT__PRIVATE double mgopt__kp_percentile(double *v, int64_t n, double q) {
  double vi, t, a, b, d, r;
  int64_t lo, i;
  if (n <= 0) return NAN;
  for (i = 0; i < n; i++)
    if (isnan(v[i])) return NAN;
  vi = (double)(n - 1) * (q / 100.0);
  if (!(vi > 0.0)) vi = 0.0;
  if (vi >= (double)(n - 1)) {
    mgopt__kp_select(v, n, n - 1);
    return v[n - 1];
  }
  lo = (int64_t)floor(vi);
  t = vi - (double)lo;
  mgopt__kp_select(v, n, lo);
  a = v[lo];
  b = v[lo + 1];
  for (i = lo + 2; i < n; i++)
    if (v[i] < b) b = v[i];
  d = b - a;
  r = a + d * t;
  if (t >= 0.5) r = b - d * (1.0 - t);
  return r;
}

/* ---------------------------------------------------------------- magnitudes */

MGOPT__PRIVATE int mgopt__kp_weight_dtype(mgopt_dtype dt) {
  return dt == MGOPT_DT_FP16 || dt == MGOPT_DT_BF16 || dt == MGOPT_DT_FP32 || dt == MGOPT_DT_FP64 ||
         dt == MGOPT_DT_INT8 || dt == MGOPT_DT_UINT8;
}

MGOPT__PRIVATE void mgopt__kp_magnitude(const mgopt_tensor *w, double *mag) {
  int64_t i;
  for (i = 0; i < w->numel; i++) mag[i] = fabs(mgopt_tensor_get_f64(w, i));
}

/* The extent of w around axis `dim`: outer * shape[dim] * inner elements. */
static void mgopt__kp_split(const mgopt_tensor *w, int32_t dim, int64_t *outer, int64_t *inner) {
  int32_t d;
  *outer = 1;
  *inner = 1;
  for (d = 0; d < dim; d++) *outer *= w->shape[d];
  for (d = dim + 1; d < w->rank; d++) *inner *= w->shape[d];
}

MGOPT__PRIVATE int mgopt__kp_block_magnitude(const mgopt_tensor *w, int32_t dim, int64_t b, double *mag) {
  int64_t outer, inner, c, o, cb, in, k;
  if (w->rank < 2 || w->rank > 5 || dim < 0 || dim > 1 || b <= 1) return 0;
  c = w->shape[dim];
  if (b > c / 2) return 0;
  mgopt__kp_split(w, dim, &outer, &inner);
  for (o = 0; o < outer; o++)
    for (cb = 0; cb < c; cb += b) {
      int64_t end = cb + b < c ? cb + b : c;
      for (in = 0; in < inner; in++) {
        double s = 0.0, nrm;
        for (k = cb; k < end; k++) {
          double x = mgopt_tensor_get_f64(w, (o * c + k) * inner + in);
          s += x * x;
        }
        nrm = sqrt(s);
        for (k = cb; k < end; k++) mag[(o * c + k) * inner + in] = nrm;
      }
    }
  return 1;
}

/* ---------------------------------------------------------------- masks */

MGOPT__PRIVATE void mgopt__kp_threshold_mask(const double *mag, int64_t n, double threshold, uint8_t *keep) {
  int64_t i;
  for (i = 0; i < n; i++) keep[i] = (uint8_t)!(mag[i] <= threshold);
}

MGOPT__PRIVATE void mgopt__kp_magnitude_mask(const double *mag, int64_t n, double target_sparsity, double *scratch,
                                             uint8_t *keep) {
  double q = target_sparsity * 100.0, pct;
  int64_t i;
  if (q == 100.0) {
    memset(keep, 0, (size_t)n);
    return;
  }
  if (q == 0.0 || n == 0) {
    memset(keep, 1, (size_t)n);
    return;
  }
  memcpy(scratch, mag, (size_t)n * sizeof(double));
  pct = mgopt__kp_percentile(scratch, n, q);
  for (i = 0; i < n; i++) keep[i] = (uint8_t)!(mag[i] <= pct);
}

/* a (at position ia) sorts before b (at ib): ascending, NaN last, ties by position. */
static int mgopt__kp_before(double a, int64_t ia, double b, int64_t ib) {
  int an = isnan(a) != 0, bn = isnan(b) != 0;
  if (an != bn) return bn;
  if (!an && a != b) return a < b;
  return ia < ib;
}

MGOPT__PRIVATE int mgopt__kp_nm_mask(const mgopt_tensor *w, const double *mag, int64_t n, int64_t m, int32_t dim,
                                     uint8_t *keep) {
  int64_t outer, inner, c, o, gb, in, k, j;
  if (w->rank < 2 || w->rank > 5 || dim < 0 || dim >= w->rank || n < 0 || m <= 0 || n > m) return 0;
  c = w->shape[dim];
  if (m > c / 2) return 0;
  mgopt__kp_split(w, dim, &outer, &inner);
  memset(keep, 1, (size_t)w->numel);
  for (o = 0; o < outer; o++)
    for (gb = 0; gb < c; gb += m) {
      int64_t end = gb + m < c ? gb + m : c, pad = gb + m - end;
      for (in = 0; in < inner; in++)
        for (k = gb; k < end; k++) {
          /* rank of k in its group; the zero padding past the end ranks after
             the group's zeros and before everything larger */
          int64_t at = (o * c + k) * inner + in, rank = 0;
          double x = mag[at];
          for (j = gb; j < end; j++)
            if (j != k && mgopt__kp_before(mag[(o * c + j) * inner + in], j, x, k)) rank++;
          if (x > 0.0 || isnan(x)) rank += pad;
          if (rank < n) keep[at] = 0;
        }
    }
  return 1;
}

/* ---------------------------------------------------------------- sparse encoding */

MGOPT__PRIVATE int64_t mgopt__kp_nonzero_count(const mgopt_tensor *w, const uint8_t *keep) {
  int64_t i, d = 0;
  for (i = 0; i < w->numel; i++) d += keep[i] && mgopt_tensor_get_f64(w, i) != 0.0;
  return d;
}

MGOPT__PRIVATE void mgopt__kp_encode(const mgopt_tensor *w, const uint8_t *keep, void *nonzero, uint8_t *mask) {
  size_t es = mgopt__k_esize((mgopt_dtype)w->dtype);
  const uint8_t *src = (const uint8_t *)w->data;
  uint8_t *dst = (uint8_t *)nonzero;
  int64_t i, j = 0;
  memset(mask, 0, (size_t)((w->numel + 7) / 8));
  for (i = 0; i < w->numel; i++) {
    if (!keep[i] || mgopt_tensor_get_f64(w, i) == 0.0) continue;
    mask[i >> 3] = (uint8_t)(mask[i >> 3] | (1u << (i & 7)));
    memcpy(dst + (size_t)j * es, src + (size_t)i * es, es);
    j++;
  }
}
/* src/kernels/nn.c — folding kernels of the neural-network ops: conv, conv_transpose, avg_pool, max_pool,
   batch_norm, instance_norm, layer_norm, prelu, pixel_shuffle, space_to_batch, batch_to_space.

   Numeric contract. Every float op here takes fp16, bf16, fp32 or fp64 and
   writes the input's dtype; integer, bool and sub-byte dtypes are not folded
   (MIL defines these ops on floats only). Inputs are widened to double, each
   output element is computed in double and rounded once to the output dtype
   (round to nearest even). Sums run in a fixed order:
     conv            bias + sum over (input channel, kernel position) in increasing
                     row-major order; the sum starts at 0 and the bias is added last.
     conv_transpose  the same order over the (input channel, kernel position, input
                     position) terms that reach an output element.
     avg_pool        the window's valid elements in row-major order, divided by the
                     count (exclude_padding_from_average) or by the kernel size.
     batch_norm      (x - mean) / sqrt(variance + epsilon) * gamma + beta.
     instance_norm,  mean = sum / n, variance = sum((x - mean)^2) / n (population),
     layer_norm      then (x - mean) / sqrt(variance + epsilon) * gamma + beta.
     prelu           x > 0 ? x : alpha * x (ONNX PRelu's form; -0 stays -0 for alpha > 0).
     local_response_norm  x / (k + alpha / size * s)^beta, s the sum of x^2 over the
                     channels c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2) that exist
                     (ONNX LRN's window; centred for an odd size), in increasing channel
                     order; alpha, beta and k are first rounded to the dtype; pow in double.
   For fp32 inputs a product is exact in double, so a result differs from the
   exact value by at most the double-precision sum error plus the final rounding.
   NaN and Inf propagate as in IEEE arithmetic; in max_pool a NaN in the window
   wins (the first NaN met is the result). pixel_shuffle, space_to_batch and
   batch_to_space move elements and take any byte-addressable dtype.

   Geometry follows mgopt's type inference (core/infer/window.c) exactly:
   pad_type valid, custom (pad = [begin0, end0, begin1, end1, ...]), same (the
   odd padding unit at the end) and same_lower (at the beginning); ceil_mode
   windows must start inside the input or its leading padding. Not folded
   (doubtful or hostile): spatial ranks other than 1..3, any dim, stride,
   dilation, kernel size or pad above 2^30, more than 2^32 multiply-adds, an
   avg_pool window that counts padding and reaches past the end padding
   (ceil_mode), a pool window with no input element, conv_transpose with
   same / same_lower padding of a negative total, and an output_shape
   other than the natural size plus less than one stride at the end (the
   extra outputs, as ONNX's output_padding, hold the bias alone). */

#define MGOPT__KN_SP 3                      /* spatial dims the loops run over (unit dims in front) */
#define MGOPT__KN_BIG ((int64_t)1 << 30)    /* largest dim, stride, dilation, kernel size, pad */
#define MGOPT__KN_WORK ((int64_t)1 << 32)   /* most multiply-adds one fold may take */

enum { MGOPT__KN_VALID, MGOPT__KN_SAME, MGOPT__KN_SAME_LOWER, MGOPT__KN_CUSTOM };

/* The sliding-window geometry of one op over MGOPT__KN_SP spatial dims. */
typedef struct mgopt__kn_win {
  int64_t in[MGOPT__KN_SP], k[MGOPT__KN_SP], st[MGOPT__KN_SP], dl[MGOPT__KN_SP];
  int64_t pb[MGOPT__KN_SP], pe[MGOPT__KN_SP], out[MGOPT__KN_SP];
  int pt;
} mgopt__kn_win;

static int mgopt__kn_float(mgopt_dtype dt) {
  int lane = mgopt__k_lane(dt);
  return lane == MGOPT__LANE_F32 || lane == MGOPT__LANE_F64;
}

/* t widened to double in scratch. */
static int mgopt__kn_load(mgopt__kctx *k, mgopt_tensor *t, double **out) {
  double *b = (double *)mgopt__k_scratch(k, t->numel, sizeof(double));
  if (!b) return MGOPT__K_OOM;
  *out = b;
  return mgopt__k_load(k, t, MGOPT__LANE_F64, b);
}

/* An optional per-channel operand: absent (*out NULL), or a float vector of c entries. */
static int mgopt__kn_vec(mgopt__kctx *k, const char *slot, int64_t c, double **out) {
  mgopt_tensor *t = mgopt__k_operand(k, slot);
  *out = NULL;
  if (!mgopt_op_operand(k->op, slot)) return MGOPT__K_OK;
  if (!t || !mgopt__kn_float((mgopt_dtype)t->dtype) || t->rank != 1 || t->shape[0] != c) return MGOPT__K_NO;
  return mgopt__kn_load(k, t, out);
}

static int64_t mgopt__kn_floordiv(int64_t a, int64_t b) { /* b > 0 */
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* The n integers of parameter `name` into v[MGOPT__KN_SP - n + i], each in [lo, 2^30];
   absent: dflt. 0 when unreadable or out of range. */
static int mgopt__kn_param(mgopt__kctx *k, const char *name, int64_t n, int64_t lo, int64_t dflt, int64_t *v,
                           int64_t stride) {
  const int64_t *p;
  int64_t m = mgopt__k_ints(k, name, &p), i;
  if (m == -2 || (m >= 0 && m != n * stride)) return 0;
  for (i = 0; i < n * stride; i++) {
    int64_t x = m < 0 ? dflt : p[i];
    if (x < lo || x > MGOPT__KN_BIG) return 0;
    v[(MGOPT__KN_SP - n) * stride + i] = x;
  }
  return 1;
}

/* Reads pad_type, strides, dilations (conv ops only) and custom pads of an op over the
   spatial dims of x (rank 2 + sp) into w, with unit dims in front. 0: not foldable. */
static int mgopt__kn_window(mgopt__kctx *k, const mgopt_tensor *x, int dil, mgopt__kn_win *w) {
  int64_t sp = x->rank - 2, pad[2 * MGOPT__KN_SP], i;
  size_t n = 0;
  const char *s = mgopt_op_get_string(k->op, "pad_type", &n);
  if (sp < 1 || sp > MGOPT__KN_SP) return 0;
  if (!s || (n == 5 && memcmp(s, "valid", 5) == 0)) w->pt = MGOPT__KN_VALID;
  else if (n == 4 && memcmp(s, "same", 4) == 0) w->pt = MGOPT__KN_SAME;
  else if (n == 10 && memcmp(s, "same_lower", 10) == 0) w->pt = MGOPT__KN_SAME_LOWER;
  else if (n == 6 && memcmp(s, "custom", 6) == 0) w->pt = MGOPT__KN_CUSTOM;
  else return 0;
  for (i = 0; i < MGOPT__KN_SP; i++) {
    w->in[i] = w->k[i] = w->st[i] = w->dl[i] = w->out[i] = 1;
    w->pb[i] = w->pe[i] = 0;
    pad[2 * i] = pad[2 * i + 1] = 0;
  }
  for (i = 0; i < sp; i++) {
    w->in[MGOPT__KN_SP - sp + i] = x->shape[2 + i];
    if (x->shape[2 + i] < 1 || x->shape[2 + i] > MGOPT__KN_BIG) return 0;
  }
  if (!mgopt__kn_param(k, "strides", sp, 1, 1, w->st, 1)) return 0;
  if (dil ? !mgopt__kn_param(k, "dilations", sp, 1, 1, w->dl, 1) : mgopt__k_has_param(k->op, "dilations"))
    return 0;
  if (w->pt == MGOPT__KN_CUSTOM) {
    if (!mgopt__kn_param(k, "pad", sp, 0, 0, pad, 2)) return 0;
    for (i = 0; i < MGOPT__KN_SP; i++) {
      w->pb[i] = pad[2 * i];
      w->pe[i] = pad[2 * i + 1];
    }
  }
  return 1;
}

/* Output sizes and pads of a forward window (conv, pools) once w->k is set. */
static int mgopt__kn_forward(mgopt__kn_win *w, int ceil_mode) {
  int i;
  for (i = 0; i < MGOPT__KN_SP; i++) {
    int64_t in = w->in[i], st = w->st[i], eff, num, v;
    if (w->k[i] < 1 || w->k[i] > MGOPT__KN_BIG) return 0;
    eff = w->dl[i] * (w->k[i] - 1) + 1;
    if (w->pt == MGOPT__KN_SAME || w->pt == MGOPT__KN_SAME_LOWER) {
      int64_t total;
      v = in / st + (in % st != 0);
      total = (v - 1) * st + eff - in;
      if (total < 0) total = 0;
      w->pb[i] = w->pt == MGOPT__KN_SAME ? total / 2 : total - total / 2;
      w->pe[i] = total - w->pb[i];
    } else {
      num = in + w->pb[i] + w->pe[i];
      if (num < eff) return 0;
      num -= eff;
      v = num / st + 1;
      if (ceil_mode && num % st != 0) {
        v++;
        if (v - 1 >= (in + w->pb[i] - 1) / st + 1) v--;
      }
    }
    w->out[i] = v;
  }
  return 1;
}

/* [*lo, *hi): the positions o in [0, n) with 0 <= o * st + off < lim. */
static void mgopt__kn_range(int64_t n, int64_t st, int64_t off, int64_t lim, int64_t *lo, int64_t *hi) {
  /* smallest o with o * st + off >= 0 */
  int64_t a = -mgopt__kn_floordiv(off, st);
  if (a * st + off < 0) a++;
  if (a < 0) a = 0;
  *lo = a;
  *hi = mgopt__kn_floordiv(lim - 1 - off, st) + 1;
  if (*hi > n) *hi = n;
  if (*hi < *lo) *hi = *lo;
}

/* Product of the three sizes, -1 above 2^62. */
static int64_t mgopt__kn_prod(const int64_t *v) {
  int64_t p = 1;
  int i;
  for (i = 0; i < MGOPT__KN_SP; i++)
    if (v[i] < 0 || !mgopt__mul_i64(p, v[i], &p) || p > ((int64_t)1 << 62)) return -1;
  return p;
}

/* Output shape [a, b, spatial...] for an input of rank r. */
static void mgopt__kn_shape(int64_t a, int64_t b, const mgopt__kn_win *w, int32_t r, int64_t *shape) {
  int32_t i;
  shape[0] = a;
  shape[1] = b;
  for (i = 2; i < r; i++) shape[i] = w->out[MGOPT__KN_SP - (r - 2) + (i - 2)];
}

/* ---------------------------------------------------------------- conv, conv_transpose */

MGOPT__PRIVATE int mgopt__kn_conv(mgopt__kctx *k) {
  MGOPT__K_NOCONTRACT
  const mgopt_op *op = k->op;
  int tr = op->kind == MGOPT_OP_conv_transpose;
  mgopt_tensor *x = mgopt__k_operand(k, "x"), *wt = mgopt__k_operand(k, "weight");
  int64_t groups = mgopt_op_get_int(op, "groups", 1), N, C, Cout, Cin_g, Cout_g, i, oshape[2 + MGOPT__KN_SP],
          ISP, OSP, KSP, work, n, g, ocl, icl, kd, kh, kw;
  int64_t hi[MGOPT__KN_SP];
  mgopt__kn_win w;
  mgopt_dtype dt;
  double *xd, *wd, *bd, *res;
  void *od;
  int r, d;
  if (!x || !wt || x->rank != wt->rank || x->rank < 3 || x->rank > 2 + MGOPT__KN_SP) return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  if (!mgopt__kn_float(dt) || wt->dtype != x->dtype) return MGOPT__K_NO;
  if (!mgopt__kn_window(k, x, 1, &w)) return MGOPT__K_NO;
  for (d = 0; d < x->rank - 2; d++) w.k[MGOPT__KN_SP - (x->rank - 2) + d] = wt->shape[2 + d];
  N = x->shape[0];
  C = x->shape[1];
  if (groups < 1 || groups > MGOPT__KN_BIG || C % groups != 0 || C > MGOPT__KN_BIG) return MGOPT__K_NO;
  if (!tr) {
    Cout = wt->shape[0];
    Cin_g = C / groups;
    if (wt->shape[1] != Cin_g || Cout % groups != 0) return MGOPT__K_NO;
    Cout_g = Cout / groups;
    if (!mgopt__kn_forward(&w, 0)) return MGOPT__K_NO;
  } else {
    const int64_t *os;
    int64_t nos = mgopt__k_ints(k, "output_shape", &os), sp = x->rank - 2;
    Cin_g = C / groups;
    Cout_g = wt->shape[1];
    if (wt->shape[0] != C || Cout_g > MGOPT__KN_BIG) return MGOPT__K_NO;
    Cout = Cout_g * groups;
    for (i = 0; i < MGOPT__KN_SP; i++) {
      int64_t eff, nat;
      if (w.k[i] < 1 || w.k[i] > MGOPT__KN_BIG) return MGOPT__K_NO;
      eff = w.dl[i] * (w.k[i] - 1) + 1;
      if (w.pt == MGOPT__KN_SAME || w.pt == MGOPT__KN_SAME_LOWER) {
        int64_t total = eff - w.st[i]; /* the full output cropped to in * stride */
        if (total < 0) return MGOPT__K_NO;
        w.pb[i] = w.pt == MGOPT__KN_SAME ? total / 2 : total - total / 2; /* odd unit: end / beginning */
        w.pe[i] = total - w.pb[i];
      }
      nat = (w.in[i] - 1) * w.st[i] + eff - w.pb[i] - w.pe[i];
      if (nat < 1) return MGOPT__K_NO;
      w.out[i] = nat;
    }
    if (nos == -2 || (nos >= 0 && nos != sp && nos != x->rank)) return MGOPT__K_NO;
    if (nos == x->rank && (os[0] != N || os[1] != Cout)) return MGOPT__K_NO;
    for (i = 0; nos >= 0 && i < sp; i++) {
      int64_t v = os[nos - sp + i], *o = &w.out[MGOPT__KN_SP - sp + i], s = w.st[MGOPT__KN_SP - sp + i];
      if (v == *o) continue;
      if (w.pt == MGOPT__KN_SAME || w.pt == MGOPT__KN_SAME_LOWER || v < *o || v - *o >= s) return MGOPT__K_NO;
      *o = v;
    }
  }
  ISP = mgopt__kn_prod(w.in);
  OSP = mgopt__kn_prod(w.out);
  KSP = mgopt__kn_prod(w.k);
  if (ISP < 0 || OSP < 0 || KSP < 0) return MGOPT__K_NO;
  for (i = 0; i < MGOPT__KN_SP; i++)
    if (w.out[i] > MGOPT__KN_BIG) return MGOPT__K_NO;
  /* work = N * Cout * Cin_g * KSP * (OSP or ISP), each factor below 2^62 / the others */
  work = N;
  if (!mgopt__mul_i64(work, Cout, &work) || !mgopt__mul_i64(work, Cin_g, &work) ||
      !mgopt__mul_i64(work, KSP, &work) || !mgopt__mul_i64(work, tr ? ISP : OSP, &work) ||
      work > MGOPT__KN_WORK)
    return MGOPT__K_NO;
  mgopt__kn_shape(N, Cout, &w, x->rank, oshape);
  if (mgopt_op_operand(op, "bias") && !mgopt__k_operand(k, "bias")) return MGOPT__K_NO;
  {
    mgopt_tensor *b = mgopt__k_operand(k, "bias");
    if (b && b->dtype != x->dtype) return MGOPT__K_NO;
  }
  r = mgopt__k_out_full(k, 0, dt, x->rank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  if (k->out[0]->numel == 0) return MGOPT__K_OK;
  r = mgopt__kn_vec(k, "bias", Cout, &bd);
  if (r == MGOPT__K_OK) r = mgopt__kn_load(k, x, &xd);
  if (r == MGOPT__K_OK) r = mgopt__kn_load(k, wt, &wd);
  if (r != MGOPT__K_OK) return r;
  res = (double *)mgopt__k_scratch(k, k->out[0]->numel, sizeof(double));
  if (!res) return MGOPT__K_OOM;
  for (n = 0; n < N; n++)
    for (g = 0; g < groups; g++)
      for (ocl = 0; ocl < Cout_g; ocl++) {
        int64_t oc = g * Cout_g + ocl;
        double *acc = res + (n * Cout + oc) * OSP;
        for (i = 0; i < OSP; i++) acc[i] = 0.0;
        for (icl = 0; icl < Cin_g; icl++) {
          int64_t ic = g * Cin_g + icl;
          const double *xin = xd + (n * C + ic) * ISP;
          const double *wk = wd + (tr ? (ic * Cout_g + ocl) : (oc * Cin_g + icl)) * KSP;
          for (kd = 0; kd < w.k[0]; kd++)
            for (kh = 0; kh < w.k[1]; kh++)
              for (kw = 0; kw < w.k[2]; kw++) {
                const double wv = wk[(kd * w.k[1] + kh) * w.k[2] + kw];
                int64_t off[MGOPT__KN_SP], a, b, c, lo0, lo1, lo2;
                off[0] = kd * w.dl[0] - w.pb[0];
                off[1] = kh * w.dl[1] - w.pb[1];
                off[2] = kw * w.dl[2] - w.pb[2];
                if (!tr) {
                  /* out o reads in o * st + off */
                  mgopt__kn_range(w.out[0], w.st[0], off[0], w.in[0], &lo0, &hi[0]);
                  mgopt__kn_range(w.out[1], w.st[1], off[1], w.in[1], &lo1, &hi[1]);
                  mgopt__kn_range(w.out[2], w.st[2], off[2], w.in[2], &lo2, &hi[2]);
                  for (a = lo0; a < hi[0]; a++)
                    for (b = lo1; b < hi[1]; b++) {
                      double *MGOPT_RESTRICT arow = acc + (a * w.out[1] + b) * w.out[2];
                      const double *xrow =
                          xin + ((a * w.st[0] + off[0]) * w.in[1] + (b * w.st[1] + off[1])) * w.in[2];
                      if (w.st[2] == 1) {
                        const double *xr = xrow + off[2];
                        for (c = lo2; c < hi[2]; c++) arow[c] += wv * xr[c];
                      } else {
                        for (c = lo2; c < hi[2]; c++) arow[c] += wv * xrow[c * w.st[2] + off[2]];
                      }
                    }
                } else {
                  /* in i writes out i * st + off */
                  mgopt__kn_range(w.in[0], w.st[0], off[0], w.out[0], &lo0, &hi[0]);
                  mgopt__kn_range(w.in[1], w.st[1], off[1], w.out[1], &lo1, &hi[1]);
                  mgopt__kn_range(w.in[2], w.st[2], off[2], w.out[2], &lo2, &hi[2]);
                  for (a = lo0; a < hi[0]; a++)
                    for (b = lo1; b < hi[1]; b++) {
                      const double *MGOPT_RESTRICT xrow = xin + (a * w.in[1] + b) * w.in[2];
                      double *arow =
                          acc + ((a * w.st[0] + off[0]) * w.out[1] + (b * w.st[1] + off[1])) * w.out[2];
                      for (c = lo2; c < hi[2]; c++) arow[c * w.st[2] + off[2]] += wv * xrow[c];
                    }
                }
              }
        }
        if (bd)
          for (i = 0; i < OSP; i++) acc[i] += bd[oc];
      }
  mgopt__k_store(MGOPT__LANE_F64, res, k->out[0]->numel, dt, od);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- avg_pool, max_pool */

MGOPT__PRIVATE int mgopt__kn_pool(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  int is_max = op->kind == MGOPT_OP_max_pool;
  int excl = !is_max && mgopt_op_get_bool(op, "exclude_padding_from_average", 0);
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  int64_t oshape[2 + MGOPT__KN_SP], ISP, OSP, KSP, work, pl, sp, o0, o1, o2;
  mgopt__kn_win w;
  mgopt_dtype dt;
  double *xd, *res;
  void *od;
  int r;
  if (!x || x->rank < 3 || x->rank > 2 + MGOPT__KN_SP) return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  sp = x->rank - 2;
  if (!mgopt__kn_float(dt) || !mgopt__kn_window(k, x, 0, &w)) return MGOPT__K_NO;
  if (!mgopt__k_has_param(op, "kernel_sizes") || !mgopt__kn_param(k, "kernel_sizes", sp, 1, 1, w.k, 1))
    return MGOPT__K_NO;
  if (!mgopt__kn_forward(&w, mgopt_op_get_bool(op, "ceil_mode", 0))) return MGOPT__K_NO;
  ISP = mgopt__kn_prod(w.in);
  OSP = mgopt__kn_prod(w.out);
  KSP = mgopt__kn_prod(w.k);
  if (ISP < 0 || OSP < 0 || KSP < 0) return MGOPT__K_NO;
  work = x->shape[0];
  if (!mgopt__mul_i64(work, x->shape[1], &work) || !mgopt__mul_i64(work, OSP, &work) ||
      !mgopt__mul_i64(work, KSP, &work) || work > MGOPT__KN_WORK)
    return MGOPT__K_NO;
  mgopt__kn_shape(x->shape[0], x->shape[1], &w, x->rank, oshape);
  {
    int i;
    for (i = 0; i < MGOPT__KN_SP; i++) {
      /* the first and the last window hold an input element (windows move monotonically) */
      if (w.k[i] <= w.pb[i] || (w.out[i] - 1) * w.st[i] - w.pb[i] >= w.in[i]) return MGOPT__K_NO;
      /* a window counting padding lies inside the padded input */
      if (!is_max && !excl && (w.out[i] - 1) * w.st[i] + w.k[i] > w.in[i] + w.pb[i] + w.pe[i]) return MGOPT__K_NO;
    }
  }
  r = mgopt__k_out_full(k, 0, dt, x->rank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  if (k->out[0]->numel == 0) return MGOPT__K_OK;
  r = mgopt__kn_load(k, x, &xd);
  if (r != MGOPT__K_OK) return r;
  res = (double *)mgopt__k_scratch(k, k->out[0]->numel, sizeof(double));
  if (!res) return MGOPT__K_OOM;
  for (pl = 0; pl < x->shape[0] * x->shape[1]; pl++) {
    const double *xin = xd + pl * ISP;
    double *out = res + pl * OSP;
    for (o0 = 0; o0 < w.out[0]; o0++)
      for (o1 = 0; o1 < w.out[1]; o1++)
        for (o2 = 0; o2 < w.out[2]; o2++) {
          int64_t s[MGOPT__KN_SP], e[MGOPT__KN_SP], i, a, b, c, cnt;
          double acc = 0.0;
          s[0] = o0 * w.st[0] - w.pb[0];
          s[1] = o1 * w.st[1] - w.pb[1];
          s[2] = o2 * w.st[2] - w.pb[2];
          for (i = 0; i < MGOPT__KN_SP; i++) {
            e[i] = s[i] + w.k[i];
            if (e[i] > w.in[i]) e[i] = w.in[i];
            if (s[i] < 0) s[i] = 0;
            if (e[i] <= s[i]) return MGOPT__K_NO; /* a window of padding alone */
          }
          cnt = (e[0] - s[0]) * (e[1] - s[1]) * (e[2] - s[2]);
          if (is_max) acc = xin[(s[0] * w.in[1] + s[1]) * w.in[2] + s[2]];
          for (a = s[0]; a < e[0]; a++)
            for (b = s[1]; b < e[1]; b++) {
              const double *row = xin + (a * w.in[1] + b) * w.in[2];
              if (is_max) {
                for (c = s[2]; c < e[2]; c++)
                  if (row[c] > acc || (row[c] != row[c] && acc == acc)) acc = row[c];
              } else {
                for (c = s[2]; c < e[2]; c++) acc += row[c];
              }
            }
          if (!is_max) acc = acc / (double)(excl ? cnt : KSP);
          out[(o0 * w.out[1] + o1) * w.out[2] + o2] = acc;
        }
  }
  mgopt__k_store(MGOPT__LANE_F64, res, k->out[0]->numel, dt, od);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- normalizations */

/* Normalizes x over the dims marked in red: for every position of the other
   dims, y = (x - mean) / sqrt(var + eps), written to res (double, x's layout).
   Then y * gamma[gi] + beta[gi], with gi the element's channel (chan >= 0: dim
   chan's index) or its row-major index over the reduced dims (chan < 0). */
static int mgopt__kn_normalize(mgopt__kctx *k, mgopt_tensor *x, const uint8_t *red, int chan, double eps,
                               const double *gamma, const double *beta, double *res) {
  int64_t st[MGOPT_MAX_RANK], inner_n = 1, outer_n = 1, *inner, *outer, i, j, idx[MGOPT_MAX_RANK];
  int32_t d, r = x->rank;
  double *xd;
  int rc = mgopt__kn_load(k, x, &xd);
  if (rc != MGOPT__K_OK) return rc;
  mgopt__k_strides(r, x->shape, st);
  for (d = 0; d < r; d++) {
    if (red[d]) inner_n *= x->shape[d];
    else outer_n *= x->shape[d];
  }
  inner = (int64_t *)mgopt__k_scratch(k, inner_n, sizeof(int64_t));
  outer = (int64_t *)mgopt__k_scratch(k, outer_n, sizeof(int64_t));
  if (!inner || !outer) return MGOPT__K_OOM;
  /* element offsets of the reduced and of the kept positions, row-major */
  {
    int pass;
    for (pass = 0; pass < 2; pass++) {
      int64_t *list = pass ? outer : inner, cnt = pass ? outer_n : inner_n, off = 0;
      for (d = 0; d < r; d++) idx[d] = 0;
      for (i = 0; i < cnt; i++) {
        list[i] = off;
        for (d = r - 1; d >= 0; d--) {
          if ((red[d] != 0) == (pass != 0)) continue;
          off += st[d];
          if (++idx[d] < x->shape[d]) break;
          off -= st[d] * x->shape[d];
          idx[d] = 0;
        }
      }
    }
  }
  for (i = 0; i < outer_n; i++) {
    const double *xo = xd + outer[i];
    double *ro = res + outer[i], mean = 0.0, var = 0.0, den;
    for (j = 0; j < inner_n; j++) mean += xo[inner[j]];
    mean /= (double)inner_n;
    for (j = 0; j < inner_n; j++) {
      double t = xo[inner[j]] - mean;
      var += t * t;
    }
    var /= (double)inner_n;
    den = sqrt(var + eps);
    for (j = 0; j < inner_n; j++) {
      double y = (xo[inner[j]] - mean) / den;
      int64_t gi = chan >= 0 ? (outer[i] / st[chan]) % x->shape[chan] : j;
      if (gamma) y = y * gamma[gi];
      if (beta) y = y + beta[gi];
      ro[inner[j]] = y;
    }
  }
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__kn_norm(mgopt__kctx *k) {
  MGOPT__K_NOCONTRACT
  const mgopt_op *op = k->op;
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  double eps = mgopt_op_get_float(op, "epsilon", 1e-5), *gamma = NULL, *beta = NULL, *res;
  uint8_t red[MGOPT_MAX_RANK];
  int32_t d, a;
  int r;
  void *od;
  if (!x || x->rank < 1 || !mgopt__kn_float((mgopt_dtype)x->dtype) || !(eps >= 0.0)) return MGOPT__K_NO;
  memset(red, 0, sizeof red);
  if (op->kind == MGOPT_OP_instance_norm) {
    if (x->rank < 3) return MGOPT__K_NO;
    for (d = 2; d < x->rank; d++) red[d] = 1;
    r = mgopt__kn_vec(k, "gamma", x->shape[1], &gamma);
    if (r == MGOPT__K_OK) r = mgopt__kn_vec(k, "beta", x->shape[1], &beta);
    if (r != MGOPT__K_OK) return r;
  } else {
    const int64_t *ax;
    int64_t n = mgopt__k_ints(k, "axes", &ax), cnt = 0, inner = 1;
    static const char *const slots[2] = {"gamma", "beta"};
    int s;
    if (n == -2 || n == 0) return MGOPT__K_NO;
    if (n < 0) {
      for (d = 0; d < x->rank; d++) red[d] = 1;
    } else {
      for (d = 0; d < (int32_t)n; d++) {
        if (!mgopt__k_axis(ax[d], x->rank, &a) || red[a]) return MGOPT__K_NO;
        red[a] = 1;
      }
    }
    for (d = 0; d < x->rank; d++)
      if (red[d]) {
        cnt++;
        inner *= x->shape[d];
      }
    /* gamma, beta: x's shape over the normalized dims, in dim order */
    for (s = 0; s < 2; s++) {
      mgopt_tensor *t = mgopt__k_operand(k, slots[s]);
      int32_t q = 0;
      if (!mgopt_op_operand(op, slots[s])) continue;
      if (!t || !mgopt__kn_float((mgopt_dtype)t->dtype) || t->rank != cnt || t->numel != inner) return MGOPT__K_NO;
      for (d = 0; d < x->rank; d++)
        if (red[d] && t->shape[q++] != x->shape[d]) return MGOPT__K_NO;
      r = mgopt__kn_load(k, t, s ? &beta : &gamma);
      if (r != MGOPT__K_OK) return r;
    }
  }
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  if (x->numel == 0) return MGOPT__K_OK;
  res = (double *)mgopt__k_scratch(k, x->numel, sizeof(double));
  if (!res) return MGOPT__K_OOM;
  r = mgopt__kn_normalize(k, x, red, op->kind == MGOPT_OP_instance_norm ? 1 : -1, eps, gamma, beta, res);
  if (r != MGOPT__K_OK) return r;
  mgopt__k_store(MGOPT__LANE_F64, res, x->numel, (mgopt_dtype)x->dtype, od);
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__kn_batch_norm(mgopt__kctx *k) {
  MGOPT__K_NOCONTRACT
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  double eps = mgopt_op_get_float(k->op, "epsilon", 1e-5), *mean, *var, *gamma, *beta, *xd;
  int64_t C, inner = 1, i, n;
  int32_t d;
  int r;
  void *od;
  if (!x || x->rank < 2 || !mgopt__kn_float((mgopt_dtype)x->dtype) || !(eps >= 0.0)) return MGOPT__K_NO;
  C = x->shape[1];
  if (!mgopt_op_operand(k->op, "mean") || !mgopt_op_operand(k->op, "variance")) return MGOPT__K_NO;
  r = mgopt__kn_vec(k, "mean", C, &mean);
  if (r == MGOPT__K_OK) r = mgopt__kn_vec(k, "variance", C, &var);
  if (r == MGOPT__K_OK) r = mgopt__kn_vec(k, "gamma", C, &gamma);
  if (r == MGOPT__K_OK) r = mgopt__kn_vec(k, "beta", C, &beta);
  if (r != MGOPT__K_OK) return r;
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  if (x->numel == 0) return MGOPT__K_OK;
  r = mgopt__kn_load(k, x, &xd);
  if (r != MGOPT__K_OK) return r;
  for (d = 2; d < x->rank; d++) inner *= x->shape[d];
  n = x->numel;
  for (i = 0; i < n; i++) {
    int64_t c = (i / inner) % C;
    double y = (xd[i] - mean[c]) / sqrt(var[c] + eps);
    if (gamma) y = y * gamma[c];
    if (beta) y = y + beta[c];
    xd[i] = y;
  }
  mgopt__k_store(MGOPT__LANE_F64, xd, n, (mgopt_dtype)x->dtype, od);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- prelu, pixel_shuffle */

MGOPT__PRIVATE int mgopt__kn_prelu(mgopt__kctx *k) {
  MGOPT__K_NOCONTRACT
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  double *alpha, *xd;
  int64_t inner = 1, i;
  int32_t d;
  int r;
  void *od;
  if (!x || x->rank < 2 || !mgopt__kn_float((mgopt_dtype)x->dtype) || !mgopt_op_operand(k->op, "alpha"))
    return MGOPT__K_NO;
  r = mgopt__kn_vec(k, "alpha", x->shape[1], &alpha);
  if (r != MGOPT__K_OK) return r;
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  if (x->numel == 0) return MGOPT__K_OK;
  r = mgopt__kn_load(k, x, &xd);
  if (r != MGOPT__K_OK) return r;
  for (d = 2; d < x->rank; d++) inner *= x->shape[d];
  for (i = 0; i < x->numel; i++)
    if (!(xd[i] > 0.0)) xd[i] = alpha[(i / inner) % x->shape[1]] * xd[i];
  mgopt__k_store(MGOPT__LANE_F64, xd, x->numel, (mgopt_dtype)x->dtype, od);
  return MGOPT__K_OK;
}

/* out[n, c, h * f + i, w * f + j] = x[n, c * f * f + i * f + j, h, w] */
MGOPT__PRIVATE int mgopt__kn_pixel_shuffle(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  int64_t f = mgopt_op_get_int(k->op, "upscale_factor", -1), ff, N, Co, H, W, oshape[4], shape[6], stride[6];
  size_t es;
  const void *src;
  void *od;
  int r;
  if (!x || x->rank != 4 || f < 1 || f > MGOPT__KN_BIG || !mgopt__k_has_param(k->op, "upscale_factor"))
    return MGOPT__K_NO;
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  if (es == 0 || x->dtype == MGOPT_DT_STRING) return MGOPT__K_NO;
  ff = f * f;
  N = x->shape[0];
  H = x->shape[2];
  W = x->shape[3];
  if (x->shape[1] % ff != 0 || H > MGOPT__KN_BIG || W > MGOPT__KN_BIG) return MGOPT__K_NO;
  Co = x->shape[1] / ff;
  oshape[0] = N;
  oshape[1] = Co;
  oshape[2] = H * f;
  oshape[3] = W * f;
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, 4, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  if (x->numel == 0) return MGOPT__K_OK;
  src = mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  /* the output read as [N, Co, H, f, W, f] from the input as [N, Co, f, f, H, W] */
  shape[0] = N; stride[0] = Co * ff * H * W;
  shape[1] = Co; stride[1] = ff * H * W;
  shape[2] = H; stride[2] = W;
  shape[3] = f; stride[3] = f * H * W;
  shape[4] = W; stride[4] = 1;
  shape[5] = f; stride[5] = H * W;
  mgopt__k_strided(od, src, es, 6, shape, stride, 0);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- space_to_batch, batch_to_space */

/* space_to_batch: x [n, C, s1(, s2)] zero-padded by paddings, then each block offset (i1, i2) of
   block_shape becomes a batch: out[(i1 * b2 + i2) * n + b, c, o1, o2] = padded x[b, c, o1 * b1 + i1,
   o2 * b2 + i2] (TensorFlow's order, channel-first). batch_to_space is its inverse with crops.
   Elements are moved, never rounded: any byte-addressable dtype. */
MGOPT__PRIVATE int mgopt__kn_space_batch(mgopt__kctx *k) {
  int to_batch = k->op->kind == MGOPT_OP_space_to_batch;
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const int64_t *bs, *pd;
  int64_t nb, np, b[2] = {1, 1}, pb[2] = {0, 0}, in[2] = {1, 1}, sm[2], oshape[4], B, N, C, i, o;
  int32_t d;
  size_t es;
  const uint8_t *src;
  uint8_t *dst;
  void *od;
  int r;
  if (!x || x->rank < 3 || x->rank > 4) return MGOPT__K_NO;
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  if (es == 0 || x->dtype == MGOPT_DT_STRING) return MGOPT__K_NO;
  nb = mgopt__k_ints(k, "block_shape", &bs);
  np = mgopt__k_ints(k, to_batch ? "paddings" : "crops", &pd);
  if (nb != x->rank - 2 || np != 2 * nb) return MGOPT__K_NO;
  B = 1;
  for (d = 0; d < nb; d++) {
    int64_t e = pd[2 * d + 1];
    b[2 - nb + d] = bs[d];
    pb[2 - nb + d] = pd[2 * d];
    in[2 - nb + d] = x->shape[2 + d];
    if (bs[d] < 1 || bs[d] > MGOPT__KN_BIG || pd[2 * d] < 0 || pd[2 * d] > MGOPT__KN_BIG || e < 0 ||
        e > MGOPT__KN_BIG || x->shape[2 + d] > MGOPT__KN_BIG)
      return MGOPT__K_NO;
    B *= bs[d];
    if (to_batch) {
      int64_t t = x->shape[2 + d] + pd[2 * d] + e;
      if (t % bs[d] != 0) return MGOPT__K_NO;
      sm[2 - nb + d] = t / bs[d]; /* output spatial size */
    } else {
      int64_t t = x->shape[2 + d] * bs[d] - pd[2 * d] - e;
      if (t < 0) return MGOPT__K_NO;
      sm[2 - nb + d] = t;
    }
  }
  if (nb == 1) sm[0] = 1;
  C = x->shape[1];
  if (to_batch) {
    N = x->shape[0];
    if (!mgopt__mul_i64(N, B, &oshape[0])) return MGOPT__K_NO;
  } else {
    if (x->shape[0] % B != 0) return MGOPT__K_NO;
    N = x->shape[0] / B;
    oshape[0] = N;
  }
  oshape[1] = C;
  for (d = 0; d < nb; d++) oshape[2 + d] = sm[2 - nb + d];
  r = mgopt__k_out(k, 0, (mgopt_dtype)x->dtype, x->rank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  if (k->out[0]->numel == 0) return MGOPT__K_OK;
  src = (const uint8_t *)mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  dst = (uint8_t *)od;
  /* one loop over the batch-side tensor [N * B, C, q1, q2]: (q1, q2) are its spatial sizes */
  {
    int64_t q[2], total, e;
    q[0] = to_batch ? sm[0] : in[0];
    q[1] = to_batch ? sm[1] : in[1];
    total = to_batch ? k->out[0]->numel : x->numel;
    for (e = 0; e < total; e++) {
      int64_t j2 = e % q[1], j1 = (e / q[1]) % q[0], c = (e / (q[0] * q[1])) % C, bb = e / (q[0] * q[1] * C);
      int64_t blk = bb / N, n = bb % N, i1 = blk / b[1], i2 = blk % b[1];
      /* position in the padded (or uncropped) space */
      int64_t h = j1 * b[0] + i1 - pb[0], w = j2 * b[1] + i2 - pb[1];
      int64_t sh = to_batch ? in[0] : sm[0], sw = to_batch ? in[1] : sm[1];
      if (h < 0 || h >= sh || w < 0 || w >= sw) continue; /* padding (zero-filled) or cropped */
      i = ((n * C + c) * sh + h) * sw + w;
      o = e;
      if (to_batch) memcpy(dst + (size_t)o * es, src + (size_t)i * es, es);
      else memcpy(dst + (size_t)i * es, src + (size_t)o * es, es);
    }
  }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- local_response_norm */

/* A float parameter rounded to dtype dt (MIL types it as x). */
static double mgopt__kn_fparam(const mgopt_op *op, const char *name, double dflt, mgopt_dtype dt) {
  double v = mgopt_op_get_float(op, name, dflt);
  if (dt == MGOPT_DT_FP64) return v;
  return dt == MGOPT_DT_FP32 ? (double)(float)v : (double)mgopt__k_rnd(dt, (float)v);
}

MGOPT__PRIVATE int mgopt__kn_lrn(mgopt__kctx *k) {
  MGOPT__K_NOCONTRACT
  const mgopt_op *op = k->op;
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  mgopt_dtype dt;
  int64_t size = mgopt_op_get_int(op, "size", 0), C, inner = 1, lo, hi, i, c, j, s, o, outer;
  double alpha, beta, kk, *xd, *res;
  int32_t d;
  int r;
  void *od;
  if (!x || x->rank < 2 || !mgopt__kn_float((mgopt_dtype)x->dtype) || !mgopt__k_has_param(op, "size") || size < 1 ||
      size > MGOPT__KN_BIG)
    return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  if (x->numel > 0 && size > MGOPT__KN_WORK / x->numel) return mgopt__k_no(k, "too much work");
  alpha = mgopt__kn_fparam(op, "alpha", 1e-4, dt);
  beta = mgopt__kn_fparam(op, "beta", 0.75, dt);
  kk = mgopt__kn_fparam(op, "k", 1.0, dt);
  r = mgopt__k_out_full(k, 0, dt, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  if (x->numel == 0) return MGOPT__K_OK;
  r = mgopt__kn_load(k, x, &xd);
  if (r != MGOPT__K_OK) return r;
  res = (double *)mgopt__k_scratch(k, x->numel, sizeof(double));
  if (!res) return MGOPT__K_OOM;
  C = x->shape[1];
  for (d = 2; d < x->rank; d++) inner *= x->shape[d];
  outer = x->shape[0];
  lo = (size - 1) / 2;
  hi = size - 1 - lo;
  for (o = 0; o < outer; o++)
    for (c = 0; c < C; c++)
      for (s = 0; s < inner; s++) {
        double sum = 0.0;
        int64_t j0 = c - lo < 0 ? 0 : c - lo, j1 = c + hi > C - 1 ? C - 1 : c + hi;
        for (j = j0; j <= j1; j++) {
          double v = xd[(o * C + j) * inner + s];
          sum += v * v;
        }
        i = (o * C + c) * inner + s;
        res[i] = xd[i] / pow(kk + alpha / (double)size * sum, beta);
      }
  mgopt__k_store(MGOPT__LANE_F64, res, x->numel, dt, od);
  return MGOPT__K_OK;
}
/* src/kernels/struct.c — kernels of structural and index ops: scatter_along_axis, scatter_nd, gather_nd,
   reverse_sequence, depth_to_space, space_to_depth, topk, range_1d, fill.

   Indices. Every index operand is an integer tensor read as int64; a negative
   index counts from the end of its dim. An index outside [-len, len), a
   sequence length outside [0, len], a range step of 0 and a topk k above the
   axis length break the op's contract: the op is not folded, and evaluation
   reports MGOPT_ERR_CORRUPT with the offending value, never reads or writes
   out of bounds.

   Moving ops (gather_nd, reverse_sequence, depth_to_space, space_to_depth,
   fill, topk's values, scatter mode "update") copy elements bit for bit and
   take any byte-addressable dtype.

   Numeric contract of scatter_along_axis and scatter_nd. The output starts as
   a copy of data; the updates are applied one at a time in row-major order of
   the updates tensor (so of indices). Duplicate indices: mode "update" keeps
   the last update written to an element; the other modes accumulate, each
   step reading the element as the previous step left it. Each step is
   computed in double for floats (operands widen exactly) and rounded at once
   to the data dtype (nearest even), so fp32 and fp16 results equal a runtime
   that computes each step in the dtype; integers compute in int64 with two's
   complement wrap-around and are stored truncated to the dtype (modes add,
   sub, mul wrap; max, min are exact). mode "div" is computed for floats only
   (IEEE: x/0 is +-Inf or NaN); an integer div is not folded. max and min
   propagate NaN: a NaN on either side gives NaN. bool data takes mode
   "update" only.

   topk: values compare exactly (floats widened to double, integers as int64);
   a NaN counts as larger than every number (it comes first when largest,
   last when ascending); equal values keep increasing index order (a stable
   sort: ONNX's tie rule). sort false still gives sorted output, one of the
   orders it allows. Indices are written as output_indices_dtype (int32,
   int64; uint16 when the axis fits).

   range_1d: n = ceil((end - start) / step) elements (0 when negative), element
   i = start + i * step: floats computed in double and rounded once to the
   dtype, integers in int64 (a length or value that int64 cannot hold is not
   folded). fill writes value (its dtype) into every element of the shape. */

/* The operands break the op's contract (an index out of range): not folded;
   evaluation reports MGOPT_ERR_CORRUPT with this reason. */
static int mgopt__kt_bad(mgopt__kctx *k, const char *what, int64_t v, int64_t lo, int64_t hi) {
  if (!k->why[0] && lo <= hi)
    snprintf(k->why, sizeof k->why, "%s %lld is outside [%lld, %lld]", what, (long long)v, (long long)lo, (long long)hi);
  else if (!k->why[0])
    snprintf(k->why, sizeof k->why, "%s %lld is invalid", what, (long long)v);
  k->bad = 1;
  return MGOPT__K_NO;
}

/* An integer operand as int64 scratch (NULL *out for an empty one). */
static int mgopt__kt_ints(mgopt__kctx *k, mgopt_tensor *t, int64_t **out) {
  int64_t *v;
  *out = NULL;
  if (mgopt__k_lane((mgopt_dtype)t->dtype) != MGOPT__LANE_I64) return mgopt__k_no(k, "indices are not integers");
  if (t->numel == 0) return MGOPT__K_OK;
  v = (int64_t *)mgopt__k_scratch(k, t->numel, sizeof(int64_t));
  if (!v) return MGOPT__K_OOM;
  *out = v;
  return mgopt__k_load(k, t, MGOPT__LANE_I64, v);
}

static int64_t mgopt__kt_prod(const int64_t *shape, int32_t from, int32_t to) {
  int64_t n = 1;
  int32_t d;
  for (d = from; d < to; d++) n *= shape[d];
  return n;
}

/* ---------------------------------------------------------------- scatter */

enum { MGOPT__KT_UPDATE, MGOPT__KT_ADD, MGOPT__KT_SUB, MGOPT__KT_MUL, MGOPT__KT_DIV, MGOPT__KT_MAX, MGOPT__KT_MIN };

static int mgopt__kt_mode(const mgopt_op *op) {
  static const char *const names[] = {"update", "add", "sub", "mul", "div", "max", "min"};
  size_t n = 0, i;
  const char *s = mgopt_op_get_string(op, "mode", &n);
  if (!s) return MGOPT__KT_ADD; /* MIL's default */
  for (i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0) return (int)i;
  return -1;
}

/* v rounded to dtype dt (a float dtype). */
static double mgopt__kt_round(mgopt_dtype dt, double v) {
  float f;
  switch (dt) {
    case MGOPT_DT_FP64: return v;
    case MGOPT_DT_FP32: return (double)(float)v;
    case MGOPT_DT_FP16: {
      uint16_t h;
      mgopt__k_store_f64_at(dt, &h, 0, v);
      f = mgopt_f16_to_f32(h);
      return (double)f;
    }
    case MGOPT_DT_BF16: {
      uint16_t h;
      mgopt__k_store_f64_at(dt, &h, 0, v);
      f = mgopt_bf16_to_f32(h);
      return (double)f;
    }
    default: return v;
  }
}

static double mgopt__kt_fstep(int mode, double a, double b) {
  switch (mode) {
    case MGOPT__KT_ADD: return a + b;
    case MGOPT__KT_SUB: return a - b;
    case MGOPT__KT_MUL: return a * b;
    case MGOPT__KT_DIV: return a / b;
    case MGOPT__KT_MAX: return (a != a || b != b) ? a + b : (a > b ? a : b);
    case MGOPT__KT_MIN: return (a != a || b != b) ? a + b : (a < b ? a : b);
    default: return b;
  }
}

static int64_t mgopt__kt_istep(int mode, int64_t a, int64_t b) {
  switch (mode) {
    case MGOPT__KT_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case MGOPT__KT_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case MGOPT__KT_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case MGOPT__KT_MAX: return a > b ? a : b;
    case MGOPT__KT_MIN: return a < b ? a : b;
    default: return b;
  }
}

/* Output 0 = data with update element i applied at data element pos[i], in order. */
static int mgopt__kt_scatter(mgopt__kctx *k, mgopt_tensor *data, mgopt_tensor *upd, const int64_t *pos, int mode) {
  mgopt_dtype dt = (mgopt_dtype)data->dtype;
  size_t es = mgopt__k_esize(dt);
  int lane = mgopt__k_lane(dt), r;
  int64_t i;
  void *od;
  if (mode < 0) return mgopt__k_no(k, "unknown mode");
  if (!es || dt == MGOPT_DT_STRING || upd->dtype != data->dtype) return mgopt__k_no(k, "data and updates differ in dtype");
  if (mode != MGOPT__KT_UPDATE && (lane == MGOPT__LANE_BOOL || lane == MGOPT__LANE_NONE))
    return mgopt__k_no(k, "mode needs numbers, data is %s", mgopt_dtype_name(dt));
  if (mode == MGOPT__KT_DIV && lane == MGOPT__LANE_I64) return mgopt__k_no(k, "integer div is not computed");
  r = mgopt__k_out_full(k, 0, dt, data->rank, data->shape, &od);
  if (r != MGOPT__K_OK || data->numel == 0) return r;
  if (mode == MGOPT__KT_UPDATE) {
    const uint8_t *s = (const uint8_t *)mgopt__k_data(k, data), *u = (const uint8_t *)mgopt__k_data(k, upd);
    if (!s || (!u && upd->numel)) return MGOPT__K_OOM;
    memcpy(od, s, (size_t)data->numel * es);
    for (i = 0; i < upd->numel; i++) memcpy((uint8_t *)od + (size_t)pos[i] * es, u + (size_t)i * es, es);
    return MGOPT__K_OK;
  }
  if (lane == MGOPT__LANE_I64) {
    int64_t *a = (int64_t *)mgopt__k_scratch(k, data->numel, 8), *b = (int64_t *)mgopt__k_scratch(k, upd->numel, 8);
    if (!a || !b) return MGOPT__K_OOM;
    if ((r = mgopt__k_load(k, data, lane, a)) != MGOPT__K_OK) return r;
    if (upd->numel && (r = mgopt__k_load(k, upd, lane, b)) != MGOPT__K_OK) return r;
    for (i = 0; i < upd->numel; i++) a[pos[i]] = mgopt__kt_istep(mode, a[pos[i]], b[i]);
    mgopt__k_store(lane, a, data->numel, dt, od);
  } else {
    double *a = (double *)mgopt__k_scratch(k, data->numel, 8), *b = (double *)mgopt__k_scratch(k, upd->numel, 8);
    if (!a || !b) return MGOPT__K_OOM;
    if ((r = mgopt__k_load(k, data, MGOPT__LANE_F64, a)) != MGOPT__K_OK) return r;
    if (upd->numel && (r = mgopt__k_load(k, upd, MGOPT__LANE_F64, b)) != MGOPT__K_OK) return r;
    for (i = 0; i < upd->numel; i++) a[pos[i]] = mgopt__kt_round(dt, mgopt__kt_fstep(mode, a[pos[i]], b[i]));
    for (i = 0; i < data->numel; i++) mgopt__k_store_f64_at(dt, od, i, a[i]);
  }
  return MGOPT__K_OK;
}

/* data[.., indices[p], ..] (op) updates[p] along the axis, p over indices' elements. */
MGOPT__PRIVATE int mgopt__kt_scatter_along_axis(mgopt__kctx *k) {
  mgopt_tensor *data = mgopt__k_operand(k, "data"), *ind = mgopt__k_operand(k, "indices"),
               *upd = mgopt__k_operand(k, "updates");
  int64_t outer, inner, len, ilen, o, j, i, *idx, *pos;
  int32_t axis, d;
  int r;
  if (!data || !ind || !upd || data->rank < 1 || ind->rank != data->rank || upd->rank != ind->rank)
    return mgopt__k_no(k, "data, indices and updates differ in rank");
  if (!mgopt__k_axis(mgopt_op_get_int(k->op, "axis", 0), data->rank, &axis)) return mgopt__k_no(k, "axis out of range");
  for (d = 0; d < data->rank; d++)
    if (upd->shape[d] != ind->shape[d] || (d != axis && data->shape[d] != ind->shape[d]))
      return mgopt__k_no(k, "indices, updates and data differ in shape");
  if ((r = mgopt__kt_ints(k, ind, &idx)) != MGOPT__K_OK) return r;
  outer = mgopt__kt_prod(data->shape, 0, axis);
  inner = mgopt__kt_prod(data->shape, axis + 1, data->rank);
  len = data->shape[axis];
  ilen = ind->shape[axis];
  pos = (int64_t *)mgopt__k_scratch(k, ind->numel, 8);
  if (!pos) return MGOPT__K_OOM;
  for (o = 0; o < outer; o++)
    for (j = 0; j < ilen; j++)
      for (i = 0; i < inner; i++) {
        int64_t at = (o * ilen + j) * inner + i, v = idx[at];
        if (v < -len || v >= len) return mgopt__kt_bad(k, "index", v, -len, len - 1);
        if (v < 0) v += len;
        pos[at] = (o * len + v) * inner + i;
      }
  return mgopt__kt_scatter(k, data, upd, pos, mgopt__kt_mode(k->op));
}

/* The flat offset (in units of the trailing slice) of index tuple t (K entries) into dims. */
static int mgopt__kt_tuple(mgopt__kctx *k, const int64_t *t, int64_t K, const int64_t *dims, int64_t *off) {
  int64_t j, o = 0;
  for (j = 0; j < K; j++) {
    int64_t v = t[j];
    if (v < -dims[j] || v >= dims[j]) return mgopt__kt_bad(k, "index", v, -dims[j], dims[j] - 1);
    if (v < 0) v += dims[j];
    o = o * dims[j] + v;
  }
  *off = o;
  return MGOPT__K_OK;
}

/* data[indices[n, :]] (op) updates[n, ...], n over indices' leading dims. */
MGOPT__PRIVATE int mgopt__kt_scatter_nd(mgopt__kctx *k) {
  mgopt_tensor *data = mgopt__k_operand(k, "data"), *ind = mgopt__k_operand(k, "indices"),
               *upd = mgopt__k_operand(k, "updates");
  int64_t K, N, inner, n, i, off, *idx, *pos;
  int32_t d, q;
  int r;
  if (!data || !ind || !upd || ind->rank < 1) return mgopt__k_no(k, "indices need rank 1 or more");
  q = ind->rank;
  K = ind->shape[q - 1];
  if (K > data->rank || upd->rank != q - 1 + data->rank - K) return mgopt__k_no(k, "updates do not fit data and indices");
  for (d = 0; d < q - 1; d++)
    if (upd->shape[d] != ind->shape[d]) return mgopt__k_no(k, "updates do not fit indices");
  for (d = (int32_t)K; d < data->rank; d++)
    if (upd->shape[q - 1 + d - K] != data->shape[d]) return mgopt__k_no(k, "updates do not fit data");
  if ((r = mgopt__kt_ints(k, ind, &idx)) != MGOPT__K_OK) return r;
  N = mgopt__kt_prod(ind->shape, 0, q - 1);
  inner = mgopt__kt_prod(data->shape, (int32_t)K, data->rank);
  pos = (int64_t *)mgopt__k_scratch(k, upd->numel, 8);
  if (!pos) return MGOPT__K_OOM;
  for (n = 0; n < N; n++) {
    if ((r = mgopt__kt_tuple(k, idx ? idx + n * K : NULL, K, data->shape, &off)) != MGOPT__K_OK) return r;
    for (i = 0; i < inner; i++) pos[n * inner + i] = off * inner + i;
  }
  return mgopt__kt_scatter(k, data, upd, pos, mgopt__kt_mode(k->op));
}

/* ---------------------------------------------------------------- gather_nd */

/* out[b.., n..] = x[b.., indices[b.., n.., :], ...] with batch_dims leading dims shared. */
MGOPT__PRIVATE int mgopt__kt_gather_nd(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x"), *ind = mgopt__k_operand(k, "indices");
  int64_t bd = mgopt_op_get_int(k->op, "batch_dims", 0), shape[MGOPT_MAX_RANK], K, B, N, inner, xb, b, n, off, *idx;
  int32_t q, d, orank = 0;
  size_t es;
  const uint8_t *src;
  uint8_t *dst;
  void *od;
  int r;
  if (!x || !ind || ind->rank < 1) return mgopt__k_no(k, "indices need rank 1 or more");
  q = ind->rank;
  K = ind->shape[q - 1];
  if (bd < 0 || bd >= q || bd + K > x->rank) return mgopt__k_no(k, "batch_dims or the index length do not fit x");
  for (d = 0; d < (int32_t)bd; d++)
    if (x->shape[d] != ind->shape[d]) return mgopt__k_no(k, "x and indices differ in batch dim %d", (int)d);
  if (q - 1 + x->rank - bd - K > MGOPT_MAX_RANK) return mgopt__k_no(k, "the output rank is too high");
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  if (!es || x->dtype == MGOPT_DT_STRING) return mgopt__k_no(k, "x's dtype is not byte-addressable");
  for (d = 0; d < q - 1; d++) shape[orank++] = ind->shape[d];
  for (d = (int32_t)(bd + K); d < x->rank; d++) shape[orank++] = x->shape[d];
  if ((r = mgopt__kt_ints(k, ind, &idx)) != MGOPT__K_OK) return r;
  B = mgopt__kt_prod(ind->shape, 0, (int32_t)bd);
  N = mgopt__kt_prod(ind->shape, (int32_t)bd, q - 1);
  inner = mgopt__kt_prod(x->shape, (int32_t)(bd + K), x->rank);
  xb = mgopt__kt_prod(x->shape, (int32_t)bd, x->rank);
  for (b = 0; b < B && K > 0; b++)
    for (n = 0; n < N; n++)
      if ((r = mgopt__kt_tuple(k, idx + (b * N + n) * K, K, x->shape + bd, &off)) != MGOPT__K_OK) return r;
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, orank, shape, &od);
  if (r != MGOPT__K_OK || B * N * inner == 0) return r;
  src = (const uint8_t *)mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  dst = (uint8_t *)od;
  for (b = 0; b < B; b++)
    for (n = 0; n < N; n++) {
      off = 0;
      if (K > 0) mgopt__kt_tuple(k, idx + (b * N + n) * K, K, x->shape + bd, &off);
      memcpy(dst, src + (size_t)(b * xb + off * inner) * es, (size_t)inner * es);
      dst += (size_t)inner * es;
    }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- reverse_sequence */

/* The first lengths[b] elements along seq_axis of each slice b along batch_axis, reversed. */
MGOPT__PRIVATE int mgopt__kt_reverse_sequence(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x"), *lt = mgopt__k_operand(k, "lengths");
  int64_t idx[MGOPT_MAX_RANK], st[MGOPT_MAX_RANK], *len, i, S, NB;
  int32_t sa, ba, d;
  size_t es;
  const uint8_t *src;
  uint8_t *dst;
  void *od;
  int r;
  if (!x || !lt || x->rank < 2) return mgopt__k_no(k, "x needs rank 2 or more");
  if (!mgopt__k_axis(mgopt_op_get_int(k->op, "seq_axis", 0), x->rank, &sa) ||
      !mgopt__k_axis(mgopt_op_get_int(k->op, "batch_axis", 0), x->rank, &ba) || sa == ba)
    return mgopt__k_no(k, "seq_axis and batch_axis must be two different axes");
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  if (!es || x->dtype == MGOPT_DT_STRING) return mgopt__k_no(k, "x's dtype is not byte-addressable");
  S = x->shape[sa];
  NB = x->shape[ba];
  if (lt->rank != 1 || lt->shape[0] != NB) return mgopt__k_no(k, "lengths does not match the batch axis");
  if ((r = mgopt__kt_ints(k, lt, &len)) != MGOPT__K_OK) return r;
  for (i = 0; i < NB; i++)
    if (len[i] < 0 || len[i] > S) return mgopt__kt_bad(k, "sequence length", len[i], 0, S);
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK || x->numel == 0) return r;
  src = (const uint8_t *)mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  dst = (uint8_t *)od;
  mgopt__k_strides(x->rank, x->shape, st);
  for (d = 0; d < x->rank; d++) idx[d] = 0;
  for (i = 0; i < x->numel; i++) {
    int64_t s = idx[sa], l = len[idx[ba]], from = i;
    if (s < l) from = i + (l - 1 - 2 * s) * st[sa];
    memcpy(dst + (size_t)i * es, src + (size_t)from * es, es);
    for (d = x->rank - 1; d >= 0; d--) {
      if (++idx[d] < x->shape[d]) break;
      idx[d] = 0;
    }
  }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- depth_to_space, space_to_depth

   depth_to_space (DCR order, MIL's and TensorFlow's):
     out[n, c, h * b + i, w * b + j] = x[n, (i * b + j) * C' + c, h, w], C' = C / b^2
   space_to_depth is its inverse:
     out[n, (i * b + j) * C + c, h, w] = x[n, c, h * b + i, w * b + j] */
MGOPT__PRIVATE int mgopt__kt_depth_space(mgopt__kctx *k) {
  int to_space = k->op->kind == MGOPT_OP_depth_to_space;
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  int64_t b = mgopt_op_get_int(k->op, "block_size", -1), N, C, H, W, oshape[4], shape[6], stride[6];
  size_t es;
  const void *src;
  void *od;
  int r;
  if (!x || x->rank != 4 || b < 1 || b > ((int64_t)1 << 30)) return mgopt__k_no(k, "needs rank 4 and a block_size");
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  if (!es || x->dtype == MGOPT_DT_STRING) return mgopt__k_no(k, "x's dtype is not byte-addressable");
  N = x->shape[0];
  C = x->shape[1];
  H = x->shape[2];
  W = x->shape[3];
  if (to_space) {
    if (C % (b * b) != 0) return mgopt__k_no(k, "channels do not divide by block_size^2");
    oshape[0] = N; oshape[1] = C / (b * b); oshape[2] = H * b; oshape[3] = W * b;
    /* output as [N, C', H, b(i), W, b(j)] */
    shape[0] = N; stride[0] = C * H * W;
    shape[1] = C / (b * b); stride[1] = H * W;
    shape[2] = H; stride[2] = W;
    shape[3] = b; stride[3] = b * (C / (b * b)) * H * W;
    shape[4] = W; stride[4] = 1;
    shape[5] = b; stride[5] = (C / (b * b)) * H * W;
  } else {
    if (H % b != 0 || W % b != 0) return mgopt__k_no(k, "height or width do not divide by block_size");
    oshape[0] = N; oshape[1] = C * b * b; oshape[2] = H / b; oshape[3] = W / b;
    /* output as [N, b(i), b(j), C, H', W'] */
    shape[0] = N; stride[0] = C * H * W;
    shape[1] = b; stride[1] = W;
    shape[2] = b; stride[2] = 1;
    shape[3] = C; stride[3] = H * W;
    shape[4] = H / b; stride[4] = b * W;
    shape[5] = W / b; stride[5] = b;
  }
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, 4, oshape, &od);
  if (r != MGOPT__K_OK || x->numel == 0) return r;
  src = mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  mgopt__k_strided(od, src, es, 6, shape, stride, 0);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- topk */

/* a before b in topk's order: the contract's comparison (NaN largest), ties by index. */
static int mgopt__kt_before(const double *fv, const int64_t *iv, int64_t a, int64_t b, int asc) {
  if (fv) {
    double x = fv[a], y = fv[b];
    int xn = x != x, yn = y != y;
    if (xn || yn) {
      if (xn && yn) return a < b;
      return asc ? yn : xn;
    }
    if (x != y) return asc ? x < y : x > y;
  } else if (iv[a] != iv[b]) {
    return asc ? iv[a] < iv[b] : iv[a] > iv[b];
  }
  return a < b;
}

/* Stable merge sort of ord[0..n) (positions into the line) with tmp scratch. */
static void mgopt__kt_sort(int64_t *ord, int64_t *tmp, int64_t n, const double *fv, const int64_t *iv, int asc) {
  int64_t w, lo;
  for (w = 1; w < n; w *= 2) {
    for (lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, a = lo, b = mid, t = lo;
      while (a < mid && b < hi) tmp[t++] = mgopt__kt_before(fv, iv, ord[b], ord[a], asc) ? ord[b++] : ord[a++];
      while (a < mid) tmp[t++] = ord[a++];
      while (b < hi) tmp[t++] = ord[b++];
    }
    memcpy(ord, tmp, (size_t)n * sizeof *ord);
  }
}

/* values and indices of the k largest (smallest when ascending) along the axis. */
MGOPT__PRIVATE int mgopt__kt_topk(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  int64_t K = mgopt_op_get_int(k->op, "k", 1), shape[MGOPT_MAX_RANK], outer, inner, len, o, i, j, *ord, *tmp;
  int64_t *iv = NULL, *line_i = NULL;
  double *fv = NULL, *line_f = NULL;
  int asc = mgopt_op_get_bool(k->op, "ascending", 0), lane, r;
  int32_t axis, d;
  size_t es, n = 0;
  const char *ods = mgopt_op_get_string(k->op, "output_indices_dtype", &n);
  mgopt_dtype idt = ods ? mgopt_dtype_from_name(ods, n) : MGOPT_DT_INT32;
  const uint8_t *src;
  void *ov, *oi;
  if (!x || x->rank < 1) return mgopt__k_no(k, "x needs rank 1 or more");
  if (k->op->nouts != 2) return mgopt__k_no(k, "topk gives values and indices");
  if (!mgopt__k_axis(mgopt_op_get_int(k->op, "axis", -1), x->rank, &axis)) return mgopt__k_no(k, "axis out of range");
  if (idt != MGOPT_DT_INT32 && idt != MGOPT_DT_INT64 && idt != MGOPT_DT_UINT16)
    return mgopt__k_no(k, "output_indices_dtype is not int32, int64 or uint16");
  es = mgopt__k_esize((mgopt_dtype)x->dtype);
  lane = mgopt__k_lane((mgopt_dtype)x->dtype);
  if (!es || (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64 && lane != MGOPT__LANE_I64))
    return mgopt__k_no(k, "x is not numeric");
  len = x->shape[axis];
  if (K < 0 || K > len) return mgopt__kt_bad(k, "k", K, 0, len);
  if (idt == MGOPT_DT_UINT16 && len > 65536) return mgopt__k_no(k, "uint16 cannot hold the indices");
  if (idt == MGOPT_DT_INT32 && len > ((int64_t)1 << 31)) return mgopt__k_no(k, "int32 cannot hold the indices");
  for (d = 0; d < x->rank; d++) shape[d] = d == axis ? K : x->shape[d];
  r = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, x->rank, shape, &ov);
  if (r == MGOPT__K_OK) r = mgopt__k_out_full(k, 1, idt, x->rank, shape, &oi);
  if (r != MGOPT__K_OK || x->numel == 0 || K == 0) return r;
  src = (const uint8_t *)mgopt__k_data(k, x);
  ord = (int64_t *)mgopt__k_scratch(k, len, 8);
  tmp = (int64_t *)mgopt__k_scratch(k, len, 8);
  if (lane == MGOPT__LANE_I64) {
    iv = (int64_t *)mgopt__k_scratch(k, x->numel, 8);
    line_i = (int64_t *)mgopt__k_scratch(k, len, 8);
    if (!iv || !line_i) return MGOPT__K_OOM;
    r = mgopt__k_load(k, x, lane, iv);
  } else {
    fv = (double *)mgopt__k_scratch(k, x->numel, 8);
    line_f = (double *)mgopt__k_scratch(k, len, 8);
    if (!fv || !line_f) return MGOPT__K_OOM;
    r = mgopt__k_load(k, x, MGOPT__LANE_F64, fv);
  }
  if (r != MGOPT__K_OK) return r;
  if (!src || !ord || !tmp) return MGOPT__K_OOM;
  outer = mgopt__kt_prod(x->shape, 0, axis);
  inner = mgopt__kt_prod(x->shape, axis + 1, x->rank);
  for (o = 0; o < outer; o++)
    for (i = 0; i < inner; i++) {
      for (j = 0; j < len; j++) {
        int64_t at = (o * len + j) * inner + i;
        if (fv) line_f[j] = fv[at];
        else line_i[j] = iv[at];
        ord[j] = j;
      }
      mgopt__kt_sort(ord, tmp, len, line_f, line_i, asc);
      for (j = 0; j < K; j++) {
        int64_t to = (o * K + j) * inner + i;
        memcpy((uint8_t *)ov + (size_t)to * es, src + (size_t)((o * len + ord[j]) * inner + i) * es, es);
        mgopt__k_store_i64_at(idt, oi, to, ord[j]);
      }
    }
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- range_1d, fill */

MGOPT__PRIVATE int mgopt__kt_range_1d(mgopt__kctx *k) {
  mgopt_tensor *e = mgopt__k_operand(k, "end"), *s = mgopt__k_operand(k, "start"), *st = mgopt__k_operand(k, "step");
  mgopt_dtype dt;
  int64_t n, i;
  void *od;
  int r;
  if (!e || !s || !st || e->numel != 1 || s->numel != 1 || st->numel != 1 || e->rank > 1 || s->rank > 1 || st->rank > 1)
    return mgopt__k_no(k, "end, start and step must be scalars");
  dt = (mgopt_dtype)s->dtype;
  if (e->dtype != s->dtype || st->dtype != s->dtype) return mgopt__k_no(k, "end, start and step differ in dtype");
  if (mgopt__k_lane(dt) == MGOPT__LANE_F32 || mgopt__k_lane(dt) == MGOPT__LANE_F64) {
    double a = mgopt_tensor_get_f64(s, 0), b = mgopt_tensor_get_f64(e, 0), c = mgopt_tensor_get_f64(st, 0), q;
    if (c == 0 || c != c) return mgopt__kt_bad(k, "step", 0, 1, 0);
    q = ceil((b - a) / c);
    if (q != q) return mgopt__k_no(k, "the length is not a number");
    if (q > 9.2e18) return mgopt__k_no(k, "the length is too large");
    n = q > 0 ? (int64_t)q : 0;
    if ((r = mgopt__k_out_full(k, 0, dt, 1, &n, &od)) != MGOPT__K_OK) return r;
    for (i = 0; i < n; i++) mgopt__k_store_f64_at(dt, od, i, a + (double)i * c);
  } else if (mgopt__k_lane(dt) == MGOPT__LANE_I64 && dt != MGOPT_DT_UINT64) {
    int64_t a = mgopt_tensor_get_i64(s, 0), b = mgopt_tensor_get_i64(e, 0), c = mgopt_tensor_get_i64(st, 0), span;
    if (c == 0) return mgopt__kt_bad(k, "step", 0, 1, 0);
    if ((b > 0 && a < INT64_MIN + b) || (b < 0 && a > INT64_MAX + b)) return mgopt__k_no(k, "the span overflows");
    span = b - a;
    if ((span > 0) != (c > 0) || span == 0) n = 0;
    else n = span / c + (span % c != 0);
    if ((r = mgopt__k_out_full(k, 0, dt, 1, &n, &od)) != MGOPT__K_OK) return r;
    for (i = 0; i < n; i++) mgopt__k_store_i64_at(dt, od, i, a + i * c); /* |i * c| < |span|: no overflow */
  } else {
    return mgopt__k_no(k, "range_1d needs numbers");
  }
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__kt_fill(mgopt__kctx *k) {
  mgopt_tensor *sh = mgopt__k_operand(k, "shape"), *v = mgopt__k_operand(k, "value");
  int64_t shape[MGOPT_MAX_RANK], i, *dims;
  mgopt_dtype dt = v ? (mgopt_dtype)v->dtype : MGOPT_DT_FP32;
  size_t es = mgopt__k_esize(dt);
  float zero = 0;
  const uint8_t *val = (const uint8_t *)&zero;
  uint8_t *dst;
  void *od;
  int r;
  if (!sh || sh->rank != 1 || sh->numel > MGOPT_MAX_RANK) return mgopt__k_no(k, "shape must be a vector of at most 32 dims");
  if (v && (v->numel != 1 || !es || dt == MGOPT_DT_STRING)) return mgopt__k_no(k, "value must be one element");
  if (mgopt_op_operand(k->op, "value") && !v) return mgopt__k_no(k, "value is not known");
  if ((r = mgopt__kt_ints(k, sh, &dims)) != MGOPT__K_OK) return r;
  for (i = 0; i < sh->numel; i++) {
    if (dims[i] < 0) return mgopt__kt_bad(k, "dim", dims[i], 1, 0);
    shape[i] = dims[i];
  }
  if (v && !(val = (const uint8_t *)mgopt__k_data(k, v))) return MGOPT__K_OOM;
  r = mgopt__k_out_full(k, 0, dt, (int32_t)sh->numel, shape, &od);
  if (r != MGOPT__K_OK) return r;
  dst = (uint8_t *)od;
  for (i = 0; i < k->out[0]->numel; i++) memcpy(dst + (size_t)i * es, val, es);
  return MGOPT__K_OK;
}
/* src/kernels/resample.c — folding kernels of the resampling ops: upsample_nearest_neighbor,
   resize_nearest_neighbor, upsample_bilinear, resize_bilinear (MIL's iOS15 forms).

   Each op resamples the last two dims of x (rank >= 3); the other dims are
   kept. Output sizes: upsample_* floor(H * scale_factor_height) and
   floor(W * scale_factor_width) (factors finite and > 0, results >= 1);
   resize_* target_size_height and target_size_width (>= 1).

   Source coordinates, per resampled dim of input size n and output size m:
     nearest (both nearest ops)   src(i) = floor(i * n / m), computed exactly in
                                  integers (ONNX Resize's asymmetric + floor).
     bilinear grid points g(i), clamped to [0, n - 1]:
       upsample_bilinear align_corners=true, resize_bilinear STRICT_ALIGN_CORNERS:
                                  i * (n - 1) / (m - 1); 0 when m = 1
       resize_bilinear ALIGN_CORNERS: the same, but (n - 1) / 2 when m = 1
       upsample_bilinear align_corners=false, resize_bilinear UNALIGN_CORNERS:
                                  (i + 0.5) * n / m - 0.5 (ONNX's half_pixel)
       resize_bilinear DEFAULT:   i * n / m (ONNX's asymmetric)
       resize_bilinear OFFSET_CORNERS: d = max(1, n - 1) / m, g(i) = 0.5 * d + i * d
     A grid point g gives the neighbours i0 = floor(g), i1 = min(i0 + 1, n - 1)
     and the weight f = g - i0; the value is
       (1 - fh) * ((1 - fw) * x[h0, w0] + fw * x[h0, w1]) + fh * ((1 - fw) * x[h1, w0] + fw * x[h1, w1]).
   Numeric contract: fp16, bf16, fp32 and fp64 (nearest: any byte-addressable
   dtype, elements are copied). Grid points and the interpolation are computed
   in double (each grid point rounded once per operation in the order written
   above) and the result rounded once to x's dtype (round to nearest even).
   NaN and Inf propagate as in IEEE arithmetic: a NaN or Inf neighbour reaches
   every output that reads it, even with weight 0 (0 * Inf = NaN). Not
   folded: ranks below 3, a scale or size that gives an output dim of 0 or
   above 2^30, an unknown sampling_mode, non-float dtypes for the bilinear ops. */

#define MGOPT__KRS_BIG ((int64_t)1 << 30)

/* The output size of resampled dim `which` (0: height, 1: width) of input size n; -1 when not foldable. */
static int64_t mgopt__krs_size(const mgopt_op *op, int which, int64_t n) {
  if (op->kind == MGOPT_OP_upsample_nearest_neighbor || op->kind == MGOPT_OP_upsample_bilinear) {
    double s = mgopt_op_get_float(op, which ? "scale_factor_width" : "scale_factor_height", 1.0), v;
    if (!(s > 0.0) || s > (double)MGOPT__KRS_BIG) return -1;
    v = floor((double)n * s);
    return v >= 1.0 && v <= (double)MGOPT__KRS_BIG ? (int64_t)v : -1;
  } else {
    int64_t v = mgopt_op_get_int(op, which ? "target_size_width" : "target_size_height", -1);
    if (!mgopt__k_has_param(op, which ? "target_size_width" : "target_size_height")) return -1;
    return v >= 1 && v <= MGOPT__KRS_BIG ? v : -1;
  }
}

enum { MGOPT__KRS_STRICT, MGOPT__KRS_ALIGN, MGOPT__KRS_HALF, MGOPT__KRS_ASYM, MGOPT__KRS_OFFSET };

/* The grid mode of a bilinear op, -1 when unknown. */
static int mgopt__krs_mode(const mgopt_op *op) {
  const char *s;
  if (op->kind == MGOPT_OP_upsample_bilinear)
    return mgopt_op_get_bool(op, "align_corners", 1) ? MGOPT__KRS_STRICT : MGOPT__KRS_HALF;
  s = mgopt_op_get_string(op, "sampling_mode", NULL);
  if (!s || strcmp(s, "DEFAULT") == 0) return MGOPT__KRS_ASYM;
  if (strcmp(s, "STRICT_ALIGN_CORNERS") == 0) return MGOPT__KRS_STRICT;
  if (strcmp(s, "ALIGN_CORNERS") == 0) return MGOPT__KRS_ALIGN;
  if (strcmp(s, "UNALIGN_CORNERS") == 0) return MGOPT__KRS_HALF;
  if (strcmp(s, "OFFSET_CORNERS") == 0) return MGOPT__KRS_OFFSET;
  return -1;
}

/* Neighbours and weight of output position i of m over an input of n. */
static void mgopt__krs_grid(int mode, int64_t i, int64_t n, int64_t m, int64_t *i0, int64_t *i1, double *f) {
  double g;
  switch (mode) {
  case MGOPT__KRS_STRICT:
  case MGOPT__KRS_ALIGN:
    if (m == 1) g = mode == MGOPT__KRS_ALIGN ? (double)(n - 1) / 2.0 : 0.0;
    else g = (double)i * (double)(n - 1) / (double)(m - 1);
    break;
  case MGOPT__KRS_HALF: g = ((double)i + 0.5) * (double)n / (double)m - 0.5; break;
  case MGOPT__KRS_ASYM: g = (double)i * (double)n / (double)m; break;
  default: {
    double d = (double)(n > 2 ? n - 1 : 1) / (double)m;
    g = 0.5 * d + (double)i * d;
  }
  }
  if (g < 0.0) g = 0.0;
  if (g > (double)(n - 1)) g = (double)(n - 1);
  *i0 = (int64_t)floor(g);
  *i1 = *i0 + 1 < n ? *i0 + 1 : n - 1;
  *f = g - (double)*i0;
}

MGOPT__PRIVATE int mgopt__kn_resample(mgopt__kctx *k) {
  MGOPT__K_NOCONTRACT
  const mgopt_op *op = k->op;
  int nearest = op->kind == MGOPT_OP_upsample_nearest_neighbor || op->kind == MGOPT_OP_resize_nearest_neighbor;
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  int64_t shape[MGOPT_MAX_RANK], H, W, Ho, Wo, planes = 1, pl, a, b, work;
  int32_t r, d;
  int rc, mode = nearest ? 0 : mgopt__krs_mode(op);
  void *od;
  if (!x || x->rank < 3 || x->rank > MGOPT_MAX_RANK || mode < 0) return MGOPT__K_NO;
  r = x->rank;
  H = x->shape[r - 2];
  W = x->shape[r - 1];
  if (H < 1 || W < 1 || H > MGOPT__KRS_BIG || W > MGOPT__KRS_BIG) return MGOPT__K_NO;
  Ho = mgopt__krs_size(op, 0, H);
  Wo = mgopt__krs_size(op, 1, W);
  if (Ho < 0 || Wo < 0) return MGOPT__K_NO;
  for (d = 0; d < r - 2; d++) {
    shape[d] = x->shape[d];
    planes *= x->shape[d];
  }
  shape[r - 2] = Ho;
  shape[r - 1] = Wo;
  if (!mgopt__mul_i64(planes, Ho, &work) || !mgopt__mul_i64(work, Wo, &work)) return MGOPT__K_NO;
  if (nearest) {
    size_t es = mgopt__k_esize((mgopt_dtype)x->dtype);
    const uint8_t *src;
    uint8_t *dst;
    if (es == 0 || x->dtype == MGOPT_DT_STRING) return MGOPT__K_NO;
    rc = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, r, shape, &od);
    if (rc != MGOPT__K_OK) return rc;
    if (k->out[0]->numel == 0) return MGOPT__K_OK;
    src = (const uint8_t *)mgopt__k_data(k, x);
    if (!src) return MGOPT__K_OOM;
    dst = (uint8_t *)od;
    for (pl = 0; pl < planes; pl++)
      for (a = 0; a < Ho; a++) {
        int64_t sa = a * H / Ho; /* a < Ho <= 2^30 and H <= 2^30: no overflow */
        for (b = 0; b < Wo; b++) {
          int64_t sb = b * W / Wo;
          memcpy(dst + (size_t)((pl * Ho + a) * Wo + b) * es, src + (size_t)((pl * H + sa) * W + sb) * es, es);
        }
      }
    return MGOPT__K_OK;
  }
  {
    int lane = mgopt__k_lane((mgopt_dtype)x->dtype);
    double *xd, *res;
    if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64) return MGOPT__K_NO;
    rc = mgopt__k_out_full(k, 0, (mgopt_dtype)x->dtype, r, shape, &od);
    if (rc != MGOPT__K_OK) return rc;
    if (k->out[0]->numel == 0) return MGOPT__K_OK;
    xd = (double *)mgopt__k_scratch(k, x->numel, sizeof(double));
    res = (double *)mgopt__k_scratch(k, k->out[0]->numel, sizeof(double));
    if (!xd || !res) return MGOPT__K_OOM;
    rc = mgopt__k_load(k, x, MGOPT__LANE_F64, xd);
    if (rc != MGOPT__K_OK) return rc;
    for (pl = 0; pl < planes; pl++) {
      const double *xp = xd + pl * H * W;
      double *op_ = res + pl * Ho * Wo;
      for (a = 0; a < Ho; a++) {
        int64_t h0, h1, w0, w1;
        double fh, fw;
        mgopt__krs_grid(mode, a, H, Ho, &h0, &h1, &fh);
        for (b = 0; b < Wo; b++) {
          double top, bot;
          mgopt__krs_grid(mode, b, W, Wo, &w0, &w1, &fw);
          top = (1.0 - fw) * xp[h0 * W + w0] + fw * xp[h0 * W + w1];
          bot = (1.0 - fw) * xp[h1 * W + w0] + fw * xp[h1 * W + w1];
          op_[a * Wo + b] = (1.0 - fh) * top + fh * bot;
        }
      }
    }
    mgopt__k_store(MGOPT__LANE_F64, res, k->out[0]->numel, (mgopt_dtype)x->dtype, od);
  }
  return MGOPT__K_OK;
}
/* src/kernels/einsum.c — the folding kernel of einsum, for any equation (core/infer/reduce.c reads it).

   MIL's einsum takes two operands and the equations "nchw,nwhu->nchu" and
   "chw,whr->chr" (with any letters); mgopt's einsum takes the ONNX Einsum
   language as a whole (1 to 8 operands, repeated labels for diagonals,
   ellipsis broadcasting, implicit output), of which those are a part, so
   the kernel is general: out[o] = sum over the labels not in the output of
   the product of the operands' elements at those labels.

   Numeric contract. fp16, bf16, fp32, fp64: each product and sum in double,
   products formed left to right over the operands, the terms summed in
   row-major order of the summed labels (in the order they first appear in
   the equation), the result rounded once to the dtype (nearest even); an
   empty sum is 0. Integers of 8 bits or more: int64 arithmetic with
   wrap-around, stored by truncation to the dtype. NaN and Inf propagate as
   in IEEE arithmetic. Not folded: bool, sub-byte and other dtypes, more
   than 2^24 terms in all. */

#define MGOPT__KEI_WORK ((int64_t)1 << 24)

MGOPT__PRIVATE int mgopt__kx_einsum(mgopt__kctx *k) {
  MGOPT__K_NOCONTRACT
  int32_t si = mgopt_op_slot_index(k->op, "values"), n, i, j, r[MGOPT__EINSUM_MAX_OPS], nl = 0, lane, q;
  mgopt_tensor *t[MGOPT__EINSUM_MAX_OPS];
  mgopt__einsum e;
  int64_t size[MGOPT__EINSUM_LABELS], stride[MGOPT__EINSUM_MAX_OPS][MGOPT__EINSUM_LABELS], oshape[MGOPT_MAX_RANK];
  int64_t onumel = 1, inner = 1, work, o, idx[MGOPT__EINSUM_LABELS];
  uint8_t order[MGOPT__EINSUM_LABELS], used[MGOPT__EINSUM_LABELS];
  void *lanes[MGOPT__EINSUM_MAX_OPS], *od;
  size_t len = 0;
  const char *eq = mgopt_op_get_string(k->op, "equation", &len);
  mgopt_dtype dt;
  int rc;
  if (si < 0 || !eq) return MGOPT__K_NO;
  n = k->op->slots[si].n;
  if (n < 1 || n > MGOPT__EINSUM_MAX_OPS) return MGOPT__K_NO;
  for (i = 0; i < n; i++) {
    t[i] = mgopt__k_value(k, k->op->slots[si].uses[i].value);
    if (!t[i] || t[i]->dtype != t[0]->dtype) return MGOPT__K_NO;
    r[i] = t[i]->rank;
  }
  dt = (mgopt_dtype)t[0]->dtype;
  lane = mgopt__k_lane(dt);
  if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64 && lane != MGOPT__LANE_I64) return MGOPT__K_NO;
  if (lane == MGOPT__LANE_F32) lane = MGOPT__LANE_F64;
  if (!mgopt__einsum_parse(eq, len, n, r, &e)) return mgopt__k_no(k, "einsum: bad equation");
  memset(used, 0, sizeof used);
  for (j = 0; j < MGOPT__EINSUM_LABELS; j++) size[j] = -1;
  /* label sizes; a broadcast dim (ellipsis, size 1) takes the others' size */
  for (i = 0; i < n; i++)
    for (j = 0; j < r[i]; j++) {
      int l = e.lab[i][j];
      int64_t s = t[i]->shape[j];
      if (l >= 52 && s == 1) continue;
      if (size[l] >= 0 && size[l] != s) return mgopt__k_no(k, "einsum: label sizes differ");
      size[l] = s;
    }
  for (i = 0; i < n; i++)
    for (j = 0; j < r[i]; j++)
      if (size[e.lab[i][j]] < 0) size[e.lab[i][j]] = 1;
  /* the labels in loop order: the output's, then the summed ones as met */
  for (j = 0; j < e.out_rank; j++) {
    order[nl++] = e.out[j];
    used[e.out[j]] = 1;
    oshape[j] = size[e.out[j]];
    if (!mgopt__mul_i64(onumel, oshape[j], &onumel)) return MGOPT__K_NO;
  }
  for (i = 0; i < n; i++)
    for (j = 0; j < r[i]; j++)
      if (!used[e.lab[i][j]]) {
        used[e.lab[i][j]] = 1;
        order[nl++] = e.lab[i][j];
        if (!mgopt__mul_i64(inner, size[e.lab[i][j]], &inner)) return MGOPT__K_NO;
      }
  if (!mgopt__mul_i64(onumel, inner, &work) || !mgopt__mul_i64(work, n, &work) || work > MGOPT__KEI_WORK)
    return mgopt__k_no(k, "einsum: more than 2^24 terms");
  /* element strides per label (summed over repeated labels: a diagonal; 0 where a dim broadcasts) */
  for (i = 0; i < n; i++) {
    int64_t st[MGOPT_MAX_RANK];
    for (j = 0; j < MGOPT__EINSUM_LABELS; j++) stride[i][j] = 0;
    mgopt__k_strides(r[i], t[i]->shape, st);
    for (j = 0; j < r[i]; j++)
      if (!(e.lab[i][j] >= 52 && t[i]->shape[j] == 1)) stride[i][e.lab[i][j]] += st[j];
  }
  rc = mgopt__k_out_full(k, 0, dt, e.out_rank, oshape, &od);
  if (rc != MGOPT__K_OK) return rc;
  if (onumel == 0) return MGOPT__K_OK;
  for (i = 0; i < n; i++) {
    lanes[i] = mgopt__k_scratch(k, t[i]->numel ? t[i]->numel : 1, mgopt__k_lane_size(lane));
    if (!lanes[i]) return MGOPT__K_OOM;
    rc = mgopt__k_load(k, t[i], lane, lanes[i]);
    if (rc != MGOPT__K_OK) return rc;
  }
  {
    double *rd = lane == MGOPT__LANE_F64 ? (double *)mgopt__k_scratch(k, onumel, sizeof(double)) : NULL;
    int64_t *ri = lane == MGOPT__LANE_I64 ? (int64_t *)mgopt__k_scratch(k, onumel, sizeof(int64_t)) : NULL;
    if (!rd && !ri) return MGOPT__K_OOM;
    for (j = 0; j < nl; j++) idx[j] = 0;
    for (o = 0; o < onumel; o++) {
      double accd = 0.0;
      int64_t acci = 0, m;
      for (j = e.out_rank; j < nl; j++) idx[j] = 0;
      for (m = 0; m < inner; m++) {
        double pd = 1.0;
        uint64_t pi = 1;
        for (i = 0; i < n; i++) {
          int64_t off = 0;
          for (q = 0; q < nl; q++) off += idx[q] * stride[i][order[q]];
          if (rd) pd = i == 0 ? ((const double *)lanes[i])[off] : pd * ((const double *)lanes[i])[off];
          else pi *= (uint64_t)((const int64_t *)lanes[i])[off];
        }
        if (rd) accd = m == 0 ? pd : accd + pd;
        else acci = (int64_t)((uint64_t)acci + pi);
        /* next summed position */
        for (q = nl - 1; q >= e.out_rank; q--) {
          if (++idx[q] < size[order[q]]) break;
          idx[q] = 0;
        }
      }
      if (rd) rd[o] = inner ? accd : 0.0;
      else ri[o] = acci;
      /* next output position */
      for (q = e.out_rank - 1; q >= 0; q--) {
        if (++idx[q] < size[order[q]]) break;
        idx[q] = 0;
      }
    }
    if (rd) mgopt__k_store(MGOPT__LANE_F64, rd, onumel, dt, od);
    else mgopt__k_store(MGOPT__LANE_I64, ri, onumel, dt, od);
  }
  return MGOPT__K_OK;
}
/* src/kernels/fold.c — the kernel column of MGOPT_OP_TABLE and mgopt_fold_op, the evaluator of one op.

   mgopt_fold_op evaluates an op whose operands are all constant with MIL's
   semantics and returns new owned tensors. It never trusts the IR: ranks,
   axes, indices, element counts and the stored output types are checked, and
   anything doubtful is "not folded" (0) rather than guessed. The kernels are
   the seed of a reference evaluator: each takes the op and writes its outputs. */

/* The kernel column of MGOPT_OP_TABLE, by kind (NULL: the op has no kernel, as MGOPT_OP_OPAQUE). */
#define MGOPT__K_ROW(name, traits, slots, attrs, nouts_min, nouts_max, nblocks, infer, kernel) kernel,
static const mgopt__kernel_fn mgopt__k_kernels[] = {NULL, MGOPT_OP_TABLE(MGOPT__K_ROW)};
#undef MGOPT__K_ROW

MGOPT__PRIVATE mgopt__kernel_fn mgopt__k_kernel(int32_t kind) {
  return kind > MGOPT_OP_OPAQUE && kind < MGOPT_OP__COUNT ? mgopt__k_kernels[kind] : NULL;
}

/* A constant tensor is usable when its header is self-consistent. */
static int mgopt__k_tensor_ok(const mgopt_tensor *t) {
  int64_t nb;
  if (t->rank < 0 || t->rank > MGOPT_MAX_RANK || (t->rank > 0 && !t->shape)) return 0;
  if (mgopt__k_numel(t->rank, t->shape) != t->numel) return 0;
  nb = mgopt_dtype_nbytes((mgopt_dtype)t->dtype, t->numel);
  return nb >= 0 && (uint64_t)nb == (uint64_t)t->nbytes && (t->data || t->nbytes == 0);
}

MGOPTDEF int mgopt_fold_op(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud) {
  const mgopt_fold_options *opts = (const mgopt_fold_options *)ud;
  mgopt__kernel_fn fn;
  mgopt__kctx k;
  int32_t s, i;
  int r;
  if (!p || !op || !out || (op->flags & MGOPT_OP_ERASED) || op->nblocks != 0 || op->nouts < 1)
    return MGOPT__K_NO;
  fn = mgopt__k_kernel(op->kind);
  if (!fn || (op->nouts != 1 && op->kind != MGOPT_OP_split && op->kind != MGOPT_OP_topk)) return MGOPT__K_NO;
  for (s = 0; s < op->nslots; s++)
    for (i = 0; i < op->slots[s].n; i++) {
      mgopt_tensor *t = mgopt_value_const(op->slots[s].uses[i].value);
      if (!t || !mgopt__k_tensor_ok(t)) return MGOPT__K_NO;
    }
  memset(&k, 0, sizeof k);
  k.p = p;
  k.op = op;
  k.out = out;
  k.max_elements = opts ? opts->max_elements : 0;
  for (i = 0; i < op->nouts; i++) out[i] = NULL;
  r = fn(&k);
  for (i = 0; i < k.nscratch; i++) mgopt__heap_free(&p->alloc, k.scratch[i], k.scratch_size[i]);
  for (i = 0; i < op->nouts && r == MGOPT__K_OK; i++)
    if (!out[i]) r = MGOPT__K_NO; /* every output is computed, or the op is not folded */
  if (r != MGOPT__K_OK)
    for (i = 0; i < op->nouts; i++) out[i] = NULL;
  return r;
}
/* src/kernels/eval.c — mgopt_eval, the reference evaluator: runs a function's blocks with the kernels.

   Walk. The program is verified, then the function body runs op by op in
   block order (ops are topologically ordered within a block). `const` binds
   its tensor in place; `cond` runs the branch its predicate (one element, any
   numeric dtype, nonzero = true) selects; `while_loop` binds the loop vars to
   the condition block's arguments, stops when it gives false, else runs the
   body and carries its outputs into the next iteration, at most
   max_loop_iterations times (an error beyond). Every other op runs its
   kernel (the kernel column of MGOPT_OP_TABLE) with outputs on the heap; an
   op without one goes to the caller's op_fn or is the error "no kernel for".
   Scalar parameters that are operands outside the op's registered slots
   (MIL allows `axis=x` at run time) must be constants: kernels read them as
   constants, so a run-time one is an error, never a wrong default.

   Memory. Each tensor the evaluator makes is one heap block (a reference
   count, the tensor record, its shape, 64-byte-aligned data) on the
   program's allocator. A value holds one reference while it has reads left:
   its count starts at its use count and drops when the op that reads it
   (the op of the value's own block that contains the read, so a read inside
   a loop body keeps the value alive for the whole loop) has run, and when its
   block gives it as an output. Constants and the caller's inputs are read in
   place and never counted.

   Numeric contract (per family; details in each kernel file's header):
   - elementwise (elementwise.c): fp16 / bf16 / fp32 compute in float and round
     once to the dtype (nearest even); fp64 in double; integers in int64 and
     wrap around to the dtype on store; NaN and Inf propagate as in IEEE 754
     (comparisons with NaN are false, except not_equal); integer division or
     modulo by zero, INT64_MIN / -1 and negative integer exponents are errors.
   - reductions, softmax, matmul, linear (reduce.c): accumulate in the lane
     type (float for 16-bit floats) in increasing index order; empty max / min
     / mean reductions are errors.
   - shape ops (shape.c): move bytes, never round; out-of-range indices,
     axes and sizes are errors.
   - (de)quantization and constexpr ops (constexpr.c): computed in float,
     rounded once to the output dtype; quantize rounds half to even and
     saturates.
   - cast: float to integer truncates toward zero; a value outside the
     target integer type's range (NaN included) is an error, never wrapped;
     integer to float rounds to nearest even. */

/* ---------------------------------------------------------------- heap tensors */

/* The block in front of every evaluator tensor; the tensor record follows. */
typedef struct mgopt__evh {
  int64_t refs;
  size_t size;   /* bytes of the whole block */
} mgopt__evh;

#define MGOPT__EVH_BYTES ((sizeof(mgopt__evh) + 15u) & ~(size_t)15u)
#define MGOPT__EV_HDR(t) ((mgopt__evh *)(void *)((uint8_t *)(t) - MGOPT__EVH_BYTES))
#define MGOPT__EV_MAX_DEPTH 64

MGOPT__PRIVATE mgopt_tensor *mgopt__ev_tensor_alloc(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                                    const int64_t *shape, int zero) {
  size_t rec = (mgopt__tensor_rec_size() + 7u) & ~(size_t)7u, head, size;
  int64_t n = 1, nb;
  int32_t i;
  uint8_t *base;
  uintptr_t data;
  mgopt__evh *h;
  mgopt_tensor *t;
  if (rank < 0 || rank > MGOPT_MAX_RANK || (rank > 0 && !shape)) return NULL;
  for (i = 0; i < rank; i++)
    if (shape[i] < 0 || !mgopt__mul_i64(n, shape[i], &n)) return NULL;
  nb = mgopt_dtype_nbytes(dt, n);
  if (nb < 0 || (uint64_t)nb > (uint64_t)SIZE_MAX / 4) return NULL;
  head = MGOPT__EVH_BYTES + rec + sizeof(int64_t) * (size_t)rank;
  size = head + 63u + (nb ? (size_t)nb : 1u);
  base = (uint8_t *)mgopt__heap_realloc(&p->alloc, NULL, 0, size);
  if (!base) return NULL;
  memset(base, 0, head);
  h = (mgopt__evh *)(void *)base;
  h->refs = 1;
  h->size = size;
  t = (mgopt_tensor *)(void *)(base + MGOPT__EVH_BYTES);
  t->dtype = (uint8_t)dt;
  t->rank = rank;
  t->numel = n;
  t->nbytes = (size_t)nb;
  t->ext_offset = -1;
  if (rank > 0) {
    t->shape = (int64_t *)(void *)(base + MGOPT__EVH_BYTES + rec);
    memcpy(t->shape, shape, sizeof(int64_t) * (size_t)rank);
  }
  data = ((uintptr_t)(base + head) + 63u) & ~(uintptr_t)63u;
  t->data = (void *)data;
  if (zero || dt == MGOPT_DT_STRING) memset(t->data, 0, nb ? (size_t)nb : 1u);
  return t;
}

static void mgopt__ev_unref(mgopt_program *p, mgopt_tensor *t) {
  mgopt__evh *h;
  if (!t) return;
  h = MGOPT__EV_HDR(t);
  if (--h->refs <= 0) mgopt__heap_free(&p->alloc, h, h->size);
}

static mgopt_tensor *mgopt__ev_copy(mgopt_program *p, const mgopt_tensor *src) {
  mgopt_tensor *t = mgopt__ev_tensor_alloc(p, (mgopt_dtype)src->dtype, src->rank, src->shape, 0);
  if (t && t->nbytes) {
    if (t->nbytes != src->nbytes || !src->data) {
      mgopt__ev_unref(p, t);
      return NULL;
    }
    memcpy(t->data, src->data, t->nbytes);
  }
  return t;
}

/* ---------------------------------------------------------------- state */

typedef struct mgopt__ev {
  mgopt_program *p;
  const mgopt_eval_options *o;
  mgopt_diag *d;
  int64_t max_iters;
  uint32_t nids;
  mgopt_tensor **val; /* by value id: the tensor the value holds, NULL when none */
  uint8_t *counted;   /* by value id: val holds a reference to release */
  int32_t *left;      /* by value id: reads left before the reference is released */
  int depth;
} mgopt__ev;

static mgopt_status mgopt__ev_fail(mgopt__ev *E, const mgopt_op *op, mgopt_status s, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static mgopt_status mgopt__ev_fail(mgopt__ev *E, const mgopt_op *op, mgopt_status s, const char *fmt, ...) {
  va_list ap;
  if (!E->d) return s;
  E->d->status = s;
  mgopt__diag_place(E->d, op);
  va_start(ap, fmt);
  vsnprintf(E->d->msg, sizeof E->d->msg, fmt, ap);
  va_end(ap);
  if (op) {
    mgopt__diag_prefix(E->d, "): ");
    mgopt__diag_prefix(E->d, op->type ? op->type : "?");
    mgopt__diag_prefix(E->d, "' (");
    mgopt__diag_prefix(E->d, E->d->op);
    mgopt__diag_prefix(E->d, "op '");
  }
  return s;
}

static const mgopt_block *mgopt__ev_home(const mgopt_value *v) { return v->def ? v->def->parent : v->owner; }

static mgopt_tensor *mgopt__ev_lookup(void *env, const mgopt_value *v) {
  mgopt__ev *E = (mgopt__ev *)env;
  if (!v) return NULL;
  if (v->id < E->nids && E->val[v->id]) return E->val[v->id];
  return mgopt_value_const(v);
}

static void mgopt__ev_release(mgopt__ev *E, const mgopt_value *v) {
  if (v->id >= E->nids) return;
  if (E->counted[v->id]) mgopt__ev_unref(E->p, E->val[v->id]);
  E->val[v->id] = NULL;
  E->counted[v->id] = 0;
  E->left[v->id] = 0;
}

/* v holds t (taking over one reference when counted) until its reads are done. */
static void mgopt__ev_bind(mgopt__ev *E, const mgopt_value *v, mgopt_tensor *t, int counted) {
  if (v->id >= E->nids) {
    if (counted) mgopt__ev_unref(E->p, t);
    return;
  }
  mgopt__ev_release(E, v);
  E->val[v->id] = t;
  E->counted[v->id] = (uint8_t)(counted != 0);
  E->left[v->id] = v->nuses;
  if (v->nuses <= 0) mgopt__ev_release(E, v);
}

static void mgopt__ev_read_done(mgopt__ev *E, const mgopt_value *v) {
  if (v->id >= E->nids || !E->val[v->id]) return;
  if (--E->left[v->id] <= 0) mgopt__ev_release(E, v);
}

/* The reads of values of block `home` made by op y (its operands, and every
   read inside its nested blocks) are done. */
static void mgopt__ev_op_done(mgopt__ev *E, const mgopt_op *y, const mgopt_block *home) {
  int32_t s, i;
  for (s = 0; s < y->nslots; s++)
    for (i = 0; i < y->slots[s].n; i++) {
      const mgopt_value *v = y->slots[s].uses[i].value;
      if (v && mgopt__ev_home(v) == home) mgopt__ev_read_done(E, v);
    }
  for (i = 0; i < y->nblocks; i++) {
    const mgopt_block *b = y->blocks[i];
    const mgopt_op *x;
    int32_t j;
    for (x = b->first; x; x = x->next) mgopt__ev_op_done(E, x, home);
    for (j = 0; j < b->nouts; j++) {
      const mgopt_value *v = b->outs[j] ? b->outs[j]->value : NULL;
      if (v && mgopt__ev_home(v) == home) mgopt__ev_read_done(E, v);
    }
  }
}

/* Checks a tensor against a value's declared type. 1 if it fits. */
static int mgopt__ev_fits(const mgopt_tensor *t, const mgopt_type *ty, char *why, size_t nwhy) {
  int32_t i;
  if (ty->kind != MGOPT_TYPE_TENSOR) {
    snprintf(why, nwhy, "its type is not a tensor type");
    return 0;
  }
  if (ty->dtype != MGOPT_DT_UNKNOWN && ty->dtype != t->dtype) {
    snprintf(why, nwhy, "it is %s, declared %s", mgopt_dtype_name((mgopt_dtype)t->dtype),
             mgopt_dtype_name((mgopt_dtype)ty->dtype));
    return 0;
  }
  if (ty->rank >= 0) {
    if (ty->rank != t->rank) {
      snprintf(why, nwhy, "it has rank %d, declared %d", (int)t->rank, (int)ty->rank);
      return 0;
    }
    for (i = 0; i < t->rank && ty->dims; i++)
      if (mgopt_dim_is_static(ty->dims[i]) && ty->dims[i].v != t->shape[i]) {
        snprintf(why, nwhy, "its dim %d is %lld, declared %lld", (int)i, (long long)t->shape[i],
                 (long long)ty->dims[i].v);
        return 0;
      }
  }
  return 1;
}

/* A tensor header is self-consistent (constants of a hand-built program need not be). */
static int mgopt__ev_tensor_ok(const mgopt_tensor *t) {
  int64_t nb;
  if (t->rank < 0 || t->rank > MGOPT_MAX_RANK || (t->rank > 0 && !t->shape)) return 0;
  if (mgopt__k_numel(t->rank, t->shape) != t->numel) return 0;
  nb = mgopt_dtype_nbytes((mgopt_dtype)t->dtype, t->numel);
  return nb >= 0 && (uint64_t)nb == (uint64_t)t->nbytes && (t->data || t->nbytes == 0);
}

/* ---------------------------------------------------------------- running */

static mgopt_status mgopt__ev_block(mgopt__ev *E, const mgopt_block *b);

/* Takes block b's outputs after it ran: res[i] with a reference each when
   counted[i]; then releases what b still holds. */
static mgopt_status mgopt__ev_take(mgopt__ev *E, const mgopt_op *op, const mgopt_block *b, mgopt_tensor **res,
                                   uint8_t *counted) {
  int32_t i;
  const mgopt_op *x;
  mgopt_status s = MGOPT_OK;
  for (i = 0; i < b->nouts; i++) {
    const mgopt_value *v = b->outs[i] ? b->outs[i]->value : NULL;
    mgopt_tensor *t = mgopt__ev_lookup(E, v);
    res[i] = NULL;
    counted[i] = 0;
    if (!t) {
      if (s == MGOPT_OK) s = mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "block output %d has no value", (int)i);
      continue;
    }
    res[i] = t;
    if (v->id < E->nids && E->counted[v->id] && E->val[v->id] == t) {
      MGOPT__EV_HDR(t)->refs++;
      counted[i] = 1;
    }
  }
  for (i = 0; i < b->nouts; i++) {
    const mgopt_value *v = b->outs[i] ? b->outs[i]->value : NULL;
    if (v && mgopt__ev_home(v) == b) mgopt__ev_read_done(E, v);
  }
  for (i = 0; i < b->nargs; i++) mgopt__ev_release(E, b->args[i]);
  for (x = b->first; x; x = x->next)
    for (i = 0; i < x->nouts; i++) mgopt__ev_release(E, x->outs[i]);
  if (s != MGOPT_OK)
    for (i = 0; i < b->nouts; i++)
      if (counted[i]) mgopt__ev_unref(E->p, res[i]);
  return s;
}

/* Binds outputs of op from res (references handed over). */
static mgopt_status mgopt__ev_give(mgopt__ev *E, const mgopt_op *op, mgopt_tensor **res, uint8_t *counted, int32_t n) {
  int32_t i;
  char why[160];
  mgopt_status s = MGOPT_OK;
  for (i = 0; i < n; i++) {
    if (s == MGOPT_OK && !mgopt__ev_fits(res[i], &op->outs[i]->type, why, sizeof why))
      s = mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "output %d does not fit its declared type: %s", (int)i, why);
    if (s != MGOPT_OK) {
      if (counted[i]) mgopt__ev_unref(E->p, res[i]);
      continue;
    }
    mgopt__ev_bind(E, op->outs[i], res[i], counted[i]);
  }
  return s;
}

static int mgopt__ev_truth(mgopt__ev *E, const mgopt_tensor *t, int *out) {
  if (!t || t->numel != 1 || mgopt_dtype_bits((mgopt_dtype)t->dtype) <= 0 || t->dtype == MGOPT_DT_STRING ||
      !t->data)
    return 0;
  (void)E;
  if (t->dtype == MGOPT_DT_BOOL) *out = ((const uint8_t *)t->data)[0] != 0;
  else *out = mgopt_tensor_get_f64(t, 0) != 0.0;
  return 1;
}

/* Heap arrays of n tensors and flags for block results (n >= 1). */
static int mgopt__ev_arrays(mgopt__ev *E, int32_t n, mgopt_tensor ***res, uint8_t **counted) {
  size_t bytes = (size_t)(n > 0 ? n : 1) * (sizeof(mgopt_tensor *) + 1);
  uint8_t *m = (uint8_t *)mgopt__heap_realloc(&E->p->alloc, NULL, 0, bytes);
  if (!m) return 0;
  memset(m, 0, bytes);
  *res = (mgopt_tensor **)(void *)m;
  *counted = m + (size_t)(n > 0 ? n : 1) * sizeof(mgopt_tensor *);
  return 1;
}

static void mgopt__ev_arrays_free(mgopt__ev *E, int32_t n, mgopt_tensor **res) {
  mgopt__heap_free(&E->p->alloc, res, (size_t)(n > 0 ? n : 1) * (sizeof(mgopt_tensor *) + 1));
}

static mgopt_status mgopt__ev_cond(mgopt__ev *E, const mgopt_op *op) {
  mgopt_tensor *pred = mgopt__ev_lookup(E, mgopt_op_operand(op, "pred")), **res;
  uint8_t *counted;
  const mgopt_block *b;
  int truth;
  mgopt_status s;
  if (op->nblocks != 2) return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "cond needs two blocks");
  if (!mgopt__ev_truth(E, pred, &truth))
    return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "the predicate is not one numeric element");
  b = op->blocks[truth ? 0 : 1];
  if (b->nouts != op->nouts)
    return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "the branch gives %d values for %d outputs", (int)b->nouts,
                          (int)op->nouts);
  if ((s = mgopt__ev_block(E, b)) != MGOPT_OK) return s;
  if (!mgopt__ev_arrays(E, op->nouts, &res, &counted)) return mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
  s = mgopt__ev_take(E, op, b, res, counted);
  if (s == MGOPT_OK) s = mgopt__ev_give(E, op, res, counted, op->nouts);
  mgopt__ev_arrays_free(E, op->nouts, res);
  return s;
}

/* Binds block b's arguments to cur (a new reference for each counted one). */
static mgopt_status mgopt__ev_enter(mgopt__ev *E, const mgopt_op *op, const mgopt_block *b, mgopt_tensor **cur,
                                    const uint8_t *counted, int32_t n) {
  int32_t i;
  char why[160];
  if (b->nargs != n)
    return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "a block takes %d arguments for %d loop vars", (int)b->nargs,
                          (int)n);
  for (i = 0; i < n; i++)
    if (!mgopt__ev_fits(cur[i], &b->args[i]->type, why, sizeof why))
      return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "loop var %d does not fit its declared type: %s", (int)i, why);
  for (i = 0; i < n; i++) {
    if (counted[i]) MGOPT__EV_HDR(cur[i])->refs++;
    mgopt__ev_bind(E, b->args[i], cur[i], counted[i]);
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__ev_loop(mgopt__ev *E, const mgopt_op *op) {
  int32_t si = mgopt_op_slot_index(op, "loop_vars"), n, i;
  mgopt_tensor **cur = NULL, **next = NULL, *pred[1];
  uint8_t *ccur = NULL, *cnext = NULL, cpred[1];
  int64_t iter = 0;
  mgopt_status s = MGOPT_OK;
  int truth;
  if (op->nblocks != 2 || si < 0) return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "while_loop needs loop_vars and two blocks");
  n = op->slots[si].n;
  if (op->nouts != n || op->blocks[1]->nouts != n || op->blocks[0]->nouts != 1)
    return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "while_loop's blocks and outputs disagree with its %d loop vars",
                          (int)n);
  if (!mgopt__ev_arrays(E, n, &cur, &ccur) || !mgopt__ev_arrays(E, n, &next, &cnext)) {
    if (cur) mgopt__ev_arrays_free(E, n, cur);
    return mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
  }
  for (i = 0; i < n; i++) {
    const mgopt_value *v = op->slots[si].uses[i].value;
    cur[i] = mgopt__ev_lookup(E, v);
    if (!cur[i]) {
      s = mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "loop var %d has no value", (int)i);
      break;
    }
    if (v->id < E->nids && E->counted[v->id] && E->val[v->id] == cur[i]) {
      MGOPT__EV_HDR(cur[i])->refs++;
      ccur[i] = 1;
    }
  }
  while (s == MGOPT_OK) {
    if ((s = mgopt__ev_enter(E, op, op->blocks[0], cur, ccur, n)) != MGOPT_OK) break;
    if ((s = mgopt__ev_block(E, op->blocks[0])) != MGOPT_OK) break;
    if ((s = mgopt__ev_take(E, op, op->blocks[0], pred, cpred)) != MGOPT_OK) break;
    if (!mgopt__ev_truth(E, pred[0], &truth))
      s = mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "the loop condition is not one numeric element");
    if (cpred[0]) mgopt__ev_unref(E->p, pred[0]);
    if (s != MGOPT_OK || !truth) break;
    if (++iter > E->max_iters) {
      s = mgopt__ev_fail(E, op, MGOPT_ERR_LIMIT, "more than %lld iterations", (long long)E->max_iters);
      break;
    }
    if ((s = mgopt__ev_enter(E, op, op->blocks[1], cur, ccur, n)) != MGOPT_OK) break;
    if ((s = mgopt__ev_block(E, op->blocks[1])) != MGOPT_OK) break;
    if ((s = mgopt__ev_take(E, op, op->blocks[1], next, cnext)) != MGOPT_OK) break;
    for (i = 0; i < n; i++) {
      if (ccur[i]) mgopt__ev_unref(E->p, cur[i]);
      cur[i] = next[i];
      ccur[i] = cnext[i];
    }
  }
  if (s == MGOPT_OK) s = mgopt__ev_give(E, op, cur, ccur, n);
  else
    for (i = 0; i < n; i++)
      if (ccur[i] && cur[i]) mgopt__ev_unref(E->p, cur[i]);
  mgopt__ev_arrays_free(E, n, cur);
  mgopt__ev_arrays_free(E, n, next);
  return s;
}

/* Operands outside the registered slots are parameters the kernels read as constants. */
static mgopt_status mgopt__ev_params(mgopt__ev *E, const mgopt_op *op) {
  const mgopt_op_def *def = mgopt_op_def_get(op->kind);
  int32_t s, j;
  for (s = 0; s < op->nslots; s++) {
    int known = 0;
    for (j = 0; def && j < def->nslots; j++)
      if (def->slots[j].name && strcmp(def->slots[j].name, op->slots[s].name) == 0) known = 1;
    if (known) continue;
    for (j = 0; j < op->slots[s].n; j++)
      if (!mgopt_value_const(op->slots[s].uses[j].value))
        return mgopt__ev_fail(E, op, MGOPT_ERR_UNSUPPORTED, "parameter '%s' is not a constant",
                              op->slots[s].name);
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__ev_callback(mgopt__ev *E, const mgopt_op *op) {
  int32_t n = mgopt_op_operand_count(op), s, i, k = 0;
  mgopt_tensor **args, **res;
  uint8_t *counted;
  size_t abytes = (size_t)(n > 0 ? n : 1) * sizeof(mgopt_tensor *);
  mgopt_diag d2;
  mgopt_status st;
  if (!E->o || !E->o->op_fn)
    return mgopt__ev_fail(E, op, MGOPT_ERR_UNSUPPORTED, "no kernel for %s", op->type ? op->type : "?");
  args = (mgopt_tensor **)mgopt__heap_realloc(&E->p->alloc, NULL, 0, abytes);
  if (!args || !mgopt__ev_arrays(E, op->nouts, &res, &counted)) {
    if (args) mgopt__heap_free(&E->p->alloc, args, abytes);
    return mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
  }
  for (s = 0; s < op->nslots; s++)
    for (i = 0; i < op->slots[s].n; i++) args[k++] = mgopt__ev_lookup(E, op->slots[s].uses[i].value);
  mgopt_diag_clear(&d2);
  st = E->o->op_fn(E->o->op_ud, E->p, op, args, n, res, &d2);
  for (i = 0; i < op->nouts; i++) counted[i] = res[i] != NULL;
  if (st == MGOPT_OK)
    for (i = 0; i < op->nouts; i++)
      if (!res[i]) {
        st = mgopt__ev_fail(E, op, MGOPT_ERR_INVALID_ARG, "the op callback did not set output %d", (int)i);
        break;
      }
  if (st != MGOPT_OK) {
    if (E->d && d2.status != MGOPT_OK && E->d->status == MGOPT_OK)
      mgopt__ev_fail(E, op, st, "%s", d2.msg[0] ? d2.msg : mgopt_status_str(st));
    else if (E->d && E->d->status == MGOPT_OK)
      mgopt__ev_fail(E, op, st, "the op callback failed: %s", mgopt_status_str(st));
    for (i = 0; i < op->nouts; i++)
      if (res[i]) mgopt__ev_unref(E->p, res[i]);
  } else {
    st = mgopt__ev_give(E, op, res, counted, op->nouts);
  }
  mgopt__heap_free(&E->p->alloc, args, abytes);
  mgopt__ev_arrays_free(E, op->nouts, res);
  return st;
}

static mgopt_status mgopt__ev_kernel(mgopt__ev *E, const mgopt_op *op, mgopt__kernel_fn fn) {
  mgopt__kctx k;
  mgopt_tensor **out;
  uint8_t *counted;
  int32_t s, i;
  int r;
  mgopt_status st = MGOPT_OK;
  if (op->nblocks != 0 || op->nouts < 1 || (op->nouts != 1 && op->kind != MGOPT_OP_split && op->kind != MGOPT_OP_topk))
    return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "unexpected outputs or blocks for %s", op->type);
  for (s = 0; s < op->nslots; s++)
    for (i = 0; i < op->slots[s].n; i++) {
      mgopt_tensor *t = mgopt__ev_lookup(E, op->slots[s].uses[i].value);
      if (!t || !mgopt__ev_tensor_ok(t))
        return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "operand '%s' %s", op->slots[s].name,
                              t ? "is a malformed tensor" : "has no value");
    }
  if (!mgopt__ev_arrays(E, op->nouts, &out, &counted)) return mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
  memset(&k, 0, sizeof k);
  k.p = E->p;
  k.op = op;
  k.lookup = mgopt__ev_lookup;
  k.env = E;
  k.out = out;
  k.heap = 1;
  k.max_elements = E->o ? E->o->max_elements : 0;
  r = fn(&k);
  for (i = 0; i < k.nscratch; i++) mgopt__heap_free(&E->p->alloc, k.scratch[i], k.scratch_size[i]);
  for (i = 0; i < op->nouts && r == MGOPT__K_OK; i++)
    if (!out[i]) r = mgopt__k_no(&k, "output %d was not computed", (int)i);
  if (r != MGOPT__K_OK) {
    for (i = 0; i < op->nouts; i++)
      if (out[i]) mgopt__ev_unref(E->p, out[i]);
    if (r == MGOPT__K_OOM) st = mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
    else if (k.bad)
      st = mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "%s", k.why);
    else if (k.why[0] && strstr(k.why, "above the limit"))
      st = mgopt__ev_fail(E, op, MGOPT_ERR_LIMIT, "%s", k.why);
    else
      st = mgopt__ev_fail(E, op, MGOPT_ERR_UNSUPPORTED, "cannot evaluate: %s",
                          k.why[0] ? k.why : "the kernel does not support these operands or parameters");
  } else {
    for (i = 0; i < op->nouts; i++) counted[i] = 1;
    st = mgopt__ev_give(E, op, out, counted, op->nouts);
  }
  mgopt__ev_arrays_free(E, op->nouts, out);
  return st;
}

static mgopt_status mgopt__ev_op(mgopt__ev *E, const mgopt_op *op) {
  mgopt__kernel_fn fn;
  mgopt_status s;
  if (op->kind == MGOPT_OP_const) {
    mgopt_tensor *t = op->nouts == 1 ? mgopt_value_const(op->outs[0]) : NULL;
    char why[160];
    if (!t || !mgopt__ev_tensor_ok(t)) return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "const without a valid tensor");
    if (!mgopt__ev_fits(t, &op->outs[0]->type, why, sizeof why))
      return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "the constant does not fit its declared type: %s", why);
    mgopt__ev_bind(E, op->outs[0], t, 0);
    return MGOPT_OK;
  }
  if (op->kind == MGOPT_OP_cond) return mgopt__ev_cond(E, op);
  if (op->kind == MGOPT_OP_while_loop) return mgopt__ev_loop(E, op);
  fn = op->kind > MGOPT_OP_OPAQUE ? mgopt__k_kernel(op->kind) : NULL;
  if (!fn || op->nblocks) return mgopt__ev_callback(E, op);
  if ((s = mgopt__ev_params(E, op)) != MGOPT_OK) return s;
  return mgopt__ev_kernel(E, op, fn);
}

static mgopt_status mgopt__ev_block(mgopt__ev *E, const mgopt_block *b) {
  const mgopt_op *op;
  mgopt_status s = MGOPT_OK;
  if (++E->depth > MGOPT__EV_MAX_DEPTH)
    s = mgopt__ev_fail(E, b->parent_op, MGOPT_ERR_LIMIT, "blocks nested deeper than %d", MGOPT__EV_MAX_DEPTH);
  for (op = b->first; op && s == MGOPT_OK; op = op->next) {
    s = mgopt__ev_op(E, op);
    if (s == MGOPT_OK) mgopt__ev_op_done(E, op, b);
  }
  E->depth--;
  return s;
}

/* ---------------------------------------------------------------- exported */

MGOPTDEF mgopt_tensor *mgopt_eval_tensor_new(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                             const int64_t *shape) {
  if (!p || (mgopt_dtype_bits(dt) <= 0 && dt != MGOPT_DT_STRING)) return NULL;
  return mgopt__ev_tensor_alloc(p, dt, rank, shape, 1);
}

MGOPTDEF int mgopt_eval_has_kernel(int32_t kind) {
  return kind == MGOPT_OP_const || kind == MGOPT_OP_cond || kind == MGOPT_OP_while_loop ||
         (kind > MGOPT_OP_OPAQUE && mgopt__k_kernel(kind) != NULL);
}

MGOPTDEF void mgopt_eval_tensor_free(mgopt_program *p, mgopt_tensor *t) {
  if (p && t) mgopt__ev_unref(p, t);
}

MGOPTDEF mgopt_status mgopt_eval(mgopt_program *p, const char *fn, mgopt_tensor *const *inputs, int32_t ninputs,
                                 mgopt_tensor **outputs, int32_t noutputs, const mgopt_eval_options *opts,
                                 mgopt_diag *d) {
  mgopt__ev E;
  mgopt_function *f;
  const mgopt_block *body;
  mgopt_tensor **res = NULL;
  uint8_t *counted = NULL;
  size_t bytes;
  int32_t i;
  uint32_t id;
  mgopt_status s;
  char why[160];
  mgopt_diag_clear(d);
  if (!p || (ninputs > 0 && !inputs) || (noutputs > 0 && !outputs) || ninputs < 0 || noutputs < 0)
    return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "invalid arguments");
  f = fn ? mgopt_program_function(p, fn) : mgopt_program_function(p, "main");
  if (!f && !fn && mgopt_program_function_count(p) == 1) f = mgopt_program_function_at(p, 0);
  if (!f) return mgopt_diag_set(d, MGOPT_ERR_NOT_FOUND, "no function '%s'", fn ? fn : "main");
  if ((s = mgopt_program_verify(p, d)) != MGOPT_OK) return s;
  body = f->body;
  if (ninputs != body->nargs)
    return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "function '%s' takes %d inputs, %d given", f->name,
                          (int)body->nargs, (int)ninputs);
  if (noutputs != body->nouts)
    return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "function '%s' gives %d outputs, room for %d", f->name,
                          (int)body->nouts, (int)noutputs);
  for (i = 0; i < ninputs; i++) {
    if (!inputs[i] || !mgopt__ev_tensor_ok(inputs[i]))
      return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "input %d ('%s') is %s", (int)i,
                            body->args[i]->name ? body->args[i]->name : "", inputs[i] ? "malformed" : "NULL");
    if (!mgopt__ev_fits(inputs[i], &body->args[i]->type, why, sizeof why))
      return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "input %d ('%s') does not fit: %s", (int)i,
                            body->args[i]->name ? body->args[i]->name : "", why);
  }
  memset(&E, 0, sizeof E);
  E.p = p;
  E.o = opts;
  E.d = d;
  E.max_iters = opts && opts->max_loop_iterations > 0 ? opts->max_loop_iterations : (int64_t)1 << 24;
  E.nids = p->next_id;
  bytes = (size_t)E.nids * (sizeof(mgopt_tensor *) + sizeof(int32_t) + 1);
  E.val = (mgopt_tensor **)mgopt__heap_realloc(&p->alloc, NULL, 0, bytes ? bytes : 1);
  if (!E.val) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  memset(E.val, 0, bytes);
  E.left = (int32_t *)(void *)(E.val + E.nids);
  E.counted = (uint8_t *)(E.left + E.nids);
  for (i = 0; i < ninputs; i++) mgopt__ev_bind(&E, body->args[i], inputs[i], 0);
  s = mgopt__ev_block(&E, body);
  if (s == MGOPT_OK) {
    if (!mgopt__ev_arrays(&E, noutputs, &res, &counted)) s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
    else s = mgopt__ev_take(&E, NULL, body, res, counted);
  }
  for (i = 0; s == MGOPT_OK && i < noutputs; i++)
    if (!counted[i]) { /* a constant or an input: the caller gets its own copy */
      mgopt_tensor *c = mgopt__ev_copy(p, res[i]);
      if (!c) s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
      else {
        res[i] = c;
        counted[i] = 1;
      }
    }
  if (res) {
    for (i = 0; i < noutputs; i++) {
      if (s == MGOPT_OK) outputs[i] = res[i];
      else if (counted[i]) mgopt__ev_unref(p, res[i]);
    }
    mgopt__ev_arrays_free(&E, noutputs, res);
  }
  for (id = 0; id < E.nids; id++) /* after an error: what the interrupted blocks still hold */
    if (E.counted[id]) mgopt__ev_unref(p, E.val[id]);
  mgopt__heap_free(&p->alloc, E.val, bytes ? bytes : 1);
  return s;
}
/* src/kernels/onnx_ops.h — private declarations of the evaluator of opaque ONNX ops: the run state, the kernel table, the helpers its kernels share. */
#ifndef MGOPT__ONNX_OPS_H
#define MGOPT__ONNX_OPS_H

/* How an opaque `onnx::X` op is evaluated (onnx_eval.c): the row of the
   table below for X at the program's opset runs first; a kernel that does
   not handle these attributes or operands declines, and then the importer's
   own mapping row for X runs on the run-time operands as constants (late
   mapping), its canonical ops evaluated with the canonical kernels. */

/* Kernel results. */
#define MGOPT__OX_ERR (-1) /* failed: the diag is set */
#define MGOPT__OX_NO 0     /* declined: why says why; the late mapping may still evaluate the op */
#define MGOPT__OX_OK 1     /* every present output was made */

/* The run of one op. */
typedef struct mgopt__ox {
  mgopt_program *p;
  const mgopt_op *op;
  const char *name;     /* the ONNX op type (after "onnx::") */
  int64_t opset;        /* the default-domain opset of the program */
  mgopt_tensor **in;    /* by ONNX input index; NULL: absent */
  int32_t nin;
  mgopt_tensor **out;   /* op->nouts; the kernel makes them with mgopt__ox_out */
  int32_t nout;
  int64_t max_elements; /* per output, 0 = no limit */
  mgopt_diag *d;        /* may be NULL */
  mgopt_status status;  /* of the last failure */
  char why[160];        /* why the kernel declined */
} mgopt__ox;

typedef int (*mgopt__ox_fn)(mgopt__ox *c);

/* One ONNX op of the default domain over a range of opsets and its kernel. */
typedef struct mgopt__ox_row {
  const char *onnx;
  int32_t since, until; /* until 0 = every later opset */
  mgopt__ox_fn fn;
} mgopt__ox_row;

/* The table (onnx_ops.c): *n rows. */
MGOPT__PRIVATE const mgopt__ox_row *mgopt__ox_rows(int32_t *n);

/* ---- helpers (onnx_ops.c) */
MGOPT__PRIVATE int mgopt__ox_fail(mgopt__ox *c, mgopt_status s, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
MGOPT__PRIVATE int mgopt__ox_no(mgopt__ox *c, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Input i, or NULL when absent or past the inputs. */
MGOPT__PRIVATE mgopt_tensor *mgopt__ox_in(mgopt__ox *c, int32_t i);
/* Input i, which must be present: NULL after failing with MGOPT_ERR_INVALID_ARG. */
MGOPT__PRIVATE mgopt_tensor *mgopt__ox_need(mgopt__ox *c, int32_t i);
/* Makes output i (zero-filled): MGOPT__OX_OK, or MGOPT__OX_ERR (limit, memory, bad shape). */
MGOPT__PRIVATE int mgopt__ox_out(mgopt__ox *c, int32_t i, mgopt_dtype dt, int32_t rank, const int64_t *shape);
/* 1 when output i is wanted (present and not an omitted optional output). */
MGOPT__PRIVATE int mgopt__ox_wants(const mgopt__ox *c, int32_t i);
/* Axis a of a tensor of `rank` into [0, rank): MGOPT__OX_OK or a failure. */
MGOPT__PRIVATE int mgopt__ox_axis(mgopt__ox *c, int64_t a, int32_t rank, int32_t *out);
/* Integer attribute (the default when absent). */
MGOPT__PRIVATE int64_t mgopt__ox_int(const mgopt__ox *c, const char *name, int64_t dflt);
MGOPT__PRIVATE double mgopt__ox_float(const mgopt__ox *c, const char *name, double dflt);
/* 1 when string attribute `name` equals want (or is absent and dflt is set). */
MGOPT__PRIVATE int mgopt__ox_str_is(const mgopt__ox *c, const char *name, const char *want, int dflt);
/* 1 when dt computes in double here: fp16, bf16, fp32, fp64. */
MGOPT__PRIVATE int mgopt__ox_is_real(mgopt_dtype dt);
/* Element i of a real tensor as double; of an integer or bool one as int64. */
MGOPT__PRIVATE double mgopt__ox_getf(const mgopt_tensor *t, int64_t i);
MGOPT__PRIVATE int64_t mgopt__ox_geti(const mgopt_tensor *t, int64_t i);
/* Stores v rounded once to t's real dtype (nearest even). */
MGOPT__PRIVATE void mgopt__ox_setf(mgopt_tensor *t, int64_t i, double v);
/* Stores v wrapped to t's integer dtype (bool: v != 0). */
MGOPT__PRIVATE void mgopt__ox_seti(mgopt_tensor *t, int64_t i, int64_t v);
/* The scalar integer in input i (one element): MGOPT__OX_OK or a failure. */
MGOPT__PRIVATE int mgopt__ox_scalar_int(mgopt__ox *c, int32_t i, int64_t *v);

/* ---- kernels of onnx_nn.c */
MGOPT__PRIVATE int mgopt__ox_softmax(mgopt__ox *c);
MGOPT__PRIVATE int mgopt__ox_nll_loss(mgopt__ox *c);
MGOPT__PRIVATE int mgopt__ox_sce_loss(mgopt__ox *c);
MGOPT__PRIVATE int mgopt__ox_arg_extreme(mgopt__ox *c);
MGOPT__PRIVATE int mgopt__ox_global_max_pool(mgopt__ox *c);
MGOPT__PRIVATE int mgopt__ox_layer_norm(mgopt__ox *c);

#endif /* MGOPT__ONNX_OPS_H */
/* src/kernels/onnx_ops.c — the table of kernels for ONNX ops without a MIL op, the helpers they share, and the elementwise and shape kernels.

   Numeric contract (each kernel of this file; onnx_nn.c states its own).
   Real dtypes (fp16, bf16, fp32, fp64) are read into double, computed in
   double and rounded once to the output dtype (nearest even); NaN and Inf
   propagate as in IEEE 754. Integer dtypes compute in int64 (uint64 as its
   bits) and wrap around to the output dtype on store. Shape-moving kernels
   copy elements and never round. */

/* ---------------------------------------------------------------- helpers */

MGOPT__PRIVATE int mgopt__ox_fail(mgopt__ox *c, mgopt_status s, const char *fmt, ...) {
  va_list ap;
  c->status = s;
  if (!c->d) return MGOPT__OX_ERR;
  c->d->status = s;
  va_start(ap, fmt);
  vsnprintf(c->d->msg, sizeof c->d->msg, fmt, ap);
  va_end(ap);
  return MGOPT__OX_ERR;
}

MGOPT__PRIVATE int mgopt__ox_no(mgopt__ox *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->why, sizeof c->why, fmt, ap);
  va_end(ap);
  return MGOPT__OX_NO;
}

MGOPT__PRIVATE mgopt_tensor *mgopt__ox_in(mgopt__ox *c, int32_t i) { return i >= 0 && i < c->nin ? c->in[i] : NULL; }

MGOPT__PRIVATE mgopt_tensor *mgopt__ox_need(mgopt__ox *c, int32_t i) {
  mgopt_tensor *t = mgopt__ox_in(c, i);
  if (!t) mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "input %d is missing", (int)i);
  return t;
}

MGOPT__PRIVATE int mgopt__ox_wants(const mgopt__ox *c, int32_t i) {
  return i >= 0 && i < c->nout && !(c->op->outs[i]->flags & MGOPT_VALUE_ABSENT);
}

MGOPT__PRIVATE int mgopt__ox_out(mgopt__ox *c, int32_t i, mgopt_dtype dt, int32_t rank, const int64_t *shape) {
  int64_t n = mgopt__k_numel(rank, shape);
  if (i < 0 || i >= c->nout) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "output %d of %d", (int)i, (int)c->nout);
  if (n < 0) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "output %d has an invalid shape", (int)i);
  if (c->max_elements > 0 && n > c->max_elements)
    return mgopt__ox_fail(c, MGOPT_ERR_LIMIT, "output %d has %lld elements, above the limit %lld", (int)i,
                          (long long)n, (long long)c->max_elements);
  if (c->out[i]) mgopt_eval_tensor_free(c->p, c->out[i]);
  c->out[i] = mgopt_eval_tensor_new(c->p, dt, rank, shape);
  return c->out[i] ? MGOPT__OX_OK : mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
}

MGOPT__PRIVATE int mgopt__ox_axis(mgopt__ox *c, int64_t a, int32_t rank, int32_t *out) {
  if (a < -(int64_t)rank || a >= rank)
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "axis %lld is outside [%d, %d)", (long long)a, -(int)rank, (int)rank);
  *out = (int32_t)(a < 0 ? a + rank : a);
  return MGOPT__OX_OK;
}

MGOPT__PRIVATE int64_t mgopt__ox_int(const mgopt__ox *c, const char *name, int64_t dflt) {
  const mgopt_attr *a = mgopt_op_attr(c->op, name);
  return a && (a->kind == MGOPT_ATTR_INT || a->kind == MGOPT_ATTR_BOOL) ? a->u.i : dflt;
}

MGOPT__PRIVATE double mgopt__ox_float(const mgopt__ox *c, const char *name, double dflt) {
  const mgopt_attr *a = mgopt_op_attr(c->op, name);
  if (a && a->kind == MGOPT_ATTR_FLOAT) return a->u.f;
  if (a && a->kind == MGOPT_ATTR_INT) return (double)a->u.i;
  return dflt;
}

MGOPT__PRIVATE int mgopt__ox_str_is(const mgopt__ox *c, const char *name, const char *want, int dflt) {
  const mgopt_attr *a = mgopt_op_attr(c->op, name);
  if (!a) return dflt;
  return a->kind == MGOPT_ATTR_STRING && a->u.s.len == strlen(want) && memcmp(a->u.s.ptr, want, a->u.s.len) == 0;
}

MGOPT__PRIVATE int mgopt__ox_is_real(mgopt_dtype dt) {
  return dt == MGOPT_DT_FP16 || dt == MGOPT_DT_BF16 || dt == MGOPT_DT_FP32 || dt == MGOPT_DT_FP64;
}

MGOPT__PRIVATE double mgopt__ox_getf(const mgopt_tensor *t, int64_t i) { return mgopt_tensor_get_f64(t, i); }

MGOPT__PRIVATE int64_t mgopt__ox_geti(const mgopt_tensor *t, int64_t i) {
  if (t->dtype == MGOPT_DT_BOOL) return ((const uint8_t *)t->data)[i] != 0;
  return mgopt_tensor_get_i64(t, i);
}

MGOPT__PRIVATE void mgopt__ox_setf(mgopt_tensor *t, int64_t i, double v) {
  mgopt__k_store_f64_at((mgopt_dtype)t->dtype, t->data, i, v);
}

MGOPT__PRIVATE void mgopt__ox_seti(mgopt_tensor *t, int64_t i, int64_t v) {
  mgopt__k_store_i64_at((mgopt_dtype)t->dtype, t->data, i, v);
}

MGOPT__PRIVATE int mgopt__ox_scalar_int(mgopt__ox *c, int32_t i, int64_t *v) {
  mgopt_tensor *t = mgopt__ox_need(c, i);
  if (!t) return MGOPT__OX_ERR;
  if (t->numel != 1 || !(mgopt_dtype_is_int((mgopt_dtype)t->dtype)))
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "input %d is not one integer", (int)i);
  *v = mgopt__ox_geti(t, 0);
  return MGOPT__OX_OK;
}

/* ---------------------------------------------------------------- broadcasting */

/* The numpy broadcast of the shapes of the present inputs first..last. */
static int mgopt__oxo_bshape(mgopt__ox *c, int32_t first, int32_t last, int32_t *rank, int64_t *shape) {
  int32_t i, r2;
  int64_t tmp[MGOPT_MAX_RANK];
  *rank = 0;
  for (i = first; i <= last; i++) {
    const mgopt_tensor *t = mgopt__ox_in(c, i);
    if (!t) continue;
    if (!mgopt__k_bcast_shape(*rank, shape, t->rank, t->shape, &r2, tmp))
      return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "input %d does not broadcast with the inputs before it", (int)i);
    *rank = r2;
    memcpy(shape, tmp, sizeof(int64_t) * (size_t)r2);
  }
  return MGOPT__OX_OK;
}

/* The flat index in t of output index idx (rank orank) under broadcasting. */
static int64_t mgopt__oxo_src(const mgopt_tensor *t, int32_t orank, const int64_t *idx) {
  int64_t off = 0, stride = 1;
  int32_t d;
  for (d = t->rank - 1; d >= 0; d--) {
    if (t->shape[d] != 1) off += idx[d + orank - t->rank] * stride;
    stride *= t->shape[d];
  }
  return off;
}

/* Steps a row-major index over shape. */
static void mgopt__oxo_next(int32_t rank, const int64_t *shape, int64_t *idx) {
  int32_t d;
  for (d = rank - 1; d >= 0; d--) {
    if (++idx[d] < shape[d]) return;
    idx[d] = 0;
  }
}

/* The inputs first..last present all have the dtype of the first. */
static int mgopt__oxo_same_dtype(mgopt__ox *c, int32_t first, int32_t last, mgopt_dtype *dt) {
  int32_t i;
  int seen = 0;
  for (i = first; i <= last; i++) {
    const mgopt_tensor *t = mgopt__ox_in(c, i);
    if (!t) continue;
    if (!seen) *dt = (mgopt_dtype)t->dtype;
    else if (t->dtype != *dt)
      return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "input %d is %s, input %d %s", (int)i,
                            mgopt_dtype_name((mgopt_dtype)t->dtype), (int)first, mgopt_dtype_name(*dt));
    seen = 1;
  }
  return seen ? MGOPT__OX_OK : mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "no input");
}

/* 1 for the dtypes integer kernels compute: bool and the 8..64-bit integers. */
static int mgopt__oxo_is_intlike(mgopt_dtype dt) {
  return dt == MGOPT_DT_BOOL || (mgopt_dtype_is_int(dt) && mgopt_dtype_bits(dt) >= 8);
}

/* ---------------------------------------------------------------- n-ary and binary elementwise */

/* Sum, Mean, Max, Min of any number of inputs, broadcast. Reals: double,
   rounded once; Max/Min propagate NaN. Integers: int64 wrapping to the
   dtype (uint64 compared unsigned); Mean of integers is declined. */
static int mgopt__oxo_nary(mgopt__ox *c) {
  int mode = strcmp(c->name, "Sum") == 0 ? 0 : strcmp(c->name, "Mean") == 0 ? 1 : strcmp(c->name, "Max") == 0 ? 2 : 3;
  int32_t rank, i, n = 0;
  int64_t shape[MGOPT_MAX_RANK], idx[MGOPT_MAX_RANK], e;
  mgopt_dtype dt = MGOPT_DT_FP32;
  mgopt_tensor *y;
  int st, real;
  if ((st = mgopt__oxo_same_dtype(c, 0, c->nin - 1, &dt)) != MGOPT__OX_OK) return st;
  real = mgopt__ox_is_real(dt);
  if (!real && (!mgopt__oxo_is_intlike(dt) || mode == 1 || dt == MGOPT_DT_BOOL))
    return mgopt__ox_no(c, "%s of %s", c->name, mgopt_dtype_name(dt));
  if ((st = mgopt__oxo_bshape(c, 0, c->nin - 1, &rank, shape)) != MGOPT__OX_OK) return st;
  if ((st = mgopt__ox_out(c, 0, dt, rank, shape)) != MGOPT__OX_OK) return st;
  y = c->out[0];
  for (i = 0; i < c->nin; i++) n += c->in[i] != NULL;
  memset(idx, 0, sizeof idx);
  for (e = 0; e < y->numel; e++, mgopt__oxo_next(rank, shape, idx)) {
    double acc = 0.0;
    int64_t iacc = 0;
    int first = 1;
    for (i = 0; i < c->nin; i++) {
      const mgopt_tensor *t = c->in[i];
      int64_t at;
      if (!t) continue;
      at = mgopt__oxo_src(t, rank, idx);
      if (real) {
        double v = mgopt__ox_getf(t, at);
        if (first || mode < 2) acc = first ? v : acc + v;
        else if (v != v || acc != acc) acc = v != v ? v : acc;
        else if (mode == 2 ? v > acc : v < acc) acc = v;
      } else {
        int64_t v = mgopt__ox_geti(t, at);
        if (first) iacc = v;
        else if (mode == 0) iacc = (int64_t)((uint64_t)iacc + (uint64_t)v);
        else if (dt == MGOPT_DT_UINT64 ? (mode == 2 ? (uint64_t)v > (uint64_t)iacc : (uint64_t)v < (uint64_t)iacc)
                                       : (mode == 2 ? v > iacc : v < iacc))
          iacc = v;
      }
      first = 0;
    }
    if (real) mgopt__ox_setf(y, e, mode == 1 ? acc / n : acc);
    else mgopt__ox_seti(y, e, iacc);
  }
  return MGOPT__OX_OK;
}

/* Mod, BitShift and integer Div, broadcast. Mod: fmod=1 is C's fmod /
   truncated remainder (the sign of the dividend); fmod=0 (integers only)
   takes the sign of the divisor. Div of integers truncates toward zero.
   A zero integer divisor is an error. BitShift: unsigned, a shift of the
   type's width or more gives 0. */
static int mgopt__oxo_binary(mgopt__ox *c) {
  int mode = strcmp(c->name, "Mod") == 0 ? 0 : strcmp(c->name, "BitShift") == 0 ? 1 : 2;
  int32_t rank;
  int64_t shape[MGOPT_MAX_RANK], idx[MGOPT_MAX_RANK], e;
  mgopt_dtype dt = MGOPT_DT_FP32;
  mgopt_tensor *a = mgopt__ox_need(c, 0), *b = a ? mgopt__ox_need(c, 1) : NULL, *y;
  int st, real, fmodv = (int)mgopt__ox_int(c, "fmod", 0), left = 0, bits;
  if (!b) return MGOPT__OX_ERR;
  if ((st = mgopt__oxo_same_dtype(c, 0, 1, &dt)) != MGOPT__OX_OK) return st;
  real = mgopt__ox_is_real(dt);
  bits = mgopt_dtype_bits(dt);
  if (mode == 1) {
    if (dt != MGOPT_DT_UINT8 && dt != MGOPT_DT_UINT16 && dt != MGOPT_DT_UINT32 && dt != MGOPT_DT_UINT64)
      return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "BitShift of %s", mgopt_dtype_name(dt));
    if (mgopt__ox_str_is(c, "direction", "LEFT", 0)) left = 1;
    else if (!mgopt__ox_str_is(c, "direction", "RIGHT", 0))
      return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "direction is not LEFT or RIGHT");
  } else if (real ? (mode == 0 && !fmodv) : !mgopt__oxo_is_intlike(dt) || dt == MGOPT_DT_BOOL) {
    return mgopt__ox_no(c, "%s of %s%s", c->name, mgopt_dtype_name(dt), real ? " with fmod=0" : "");
  } else if (mode == 2 && real) {
    return mgopt__ox_no(c, "the mapping divides reals");
  }
  if ((st = mgopt__oxo_bshape(c, 0, 1, &rank, shape)) != MGOPT__OX_OK) return st;
  if ((st = mgopt__ox_out(c, 0, dt, rank, shape)) != MGOPT__OX_OK) return st;
  y = c->out[0];
  memset(idx, 0, sizeof idx);
  for (e = 0; e < y->numel; e++, mgopt__oxo_next(rank, shape, idx)) {
    int64_t ia = mgopt__oxo_src(a, rank, idx), ib = mgopt__oxo_src(b, rank, idx), x, z, r;
    if (real) {
      mgopt__ox_setf(y, e, fmod(mgopt__ox_getf(a, ia), mgopt__ox_getf(b, ib)));
      continue;
    }
    x = mgopt__ox_geti(a, ia);
    z = mgopt__ox_geti(b, ib);
    if (mode == 1) {
      uint64_t ux = (uint64_t)x, uz = (uint64_t)z;
      mgopt__ox_seti(y, e, uz >= (uint64_t)bits ? 0 : (int64_t)(left ? ux << uz : ux >> uz));
      continue;
    }
    if (z == 0) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "integer %s by zero", mode == 0 ? "modulo" : "division");
    if (dt == MGOPT_DT_UINT64) {
      uint64_t ux = (uint64_t)x, uz = (uint64_t)z;
      mgopt__ox_seti(y, e, (int64_t)(mode == 0 ? ux % uz : ux / uz));
      continue;
    }
    if (z == -1) r = mode == 0 ? 0 : (int64_t)(0 - (uint64_t)x); /* no INT64_MIN / -1 trap */
    else r = mode == 0 ? x % z : x / z;
    if (mode == 0 && !fmodv && r != 0 && (r < 0) != (z < 0)) r += z;
    mgopt__ox_seti(y, e, r);
  }
  return MGOPT__OX_OK;
}

/* ---------------------------------------------------------------- unary */

/* The unary kernels of reals: Selu, Celu, Shrink, HardSwish, Asinh, Acosh,
   Round (half to even); Neg and Sign of every numeric dtype (integers wrap);
   IsNaN and IsInf give bool. */
static double mgopt__oxo_round_even(double x) {
  double r = floor(x), d = x - r;
  if (d > 0.5 || (d == 0.5 && fmod(r, 2.0) != 0.0)) r += 1.0;
  return x != x || x - x != 0.0 ? x : r;
}

static int mgopt__oxo_unary(mgopt__ox *c) {
  const char *nm = c->name;
  mgopt_tensor *x = mgopt__ox_need(c, 0), *y;
  int64_t i;
  int st, test = strcmp(nm, "IsNaN") == 0 || strcmp(nm, "IsInf") == 0;
  int any = strcmp(nm, "Neg") == 0 || strcmp(nm, "Sign") == 0;
  double alpha, gamma, lambd, bias;
  if (!x) return MGOPT__OX_ERR;
  if (!mgopt__ox_is_real((mgopt_dtype)x->dtype) && !(any && mgopt__oxo_is_intlike((mgopt_dtype)x->dtype) &&
                                                     x->dtype != MGOPT_DT_BOOL))
    return mgopt__ox_no(c, "%s of %s", nm, mgopt_dtype_name((mgopt_dtype)x->dtype));
  if ((st = mgopt__ox_out(c, 0, test ? MGOPT_DT_BOOL : (mgopt_dtype)x->dtype, x->rank, x->shape)) != MGOPT__OX_OK)
    return st;
  y = c->out[0];
  if (!mgopt__ox_is_real((mgopt_dtype)x->dtype)) {
    for (i = 0; i < x->numel; i++) {
      int64_t v = mgopt__ox_geti(x, i);
      if (nm[0] == 'N') mgopt__ox_seti(y, i, (int64_t)(0 - (uint64_t)v));
      else mgopt__ox_seti(y, i, v > 0 ? 1 : v < 0 ? -1 : 0);
    }
    return MGOPT__OX_OK;
  }
  alpha = mgopt__ox_float(c, "alpha", strcmp(nm, "Selu") == 0 ? 1.67326319217681884765625 : 1.0);
  gamma = mgopt__ox_float(c, "gamma", 1.05070102214813232421875);
  lambd = mgopt__ox_float(c, "lambd", 0.5);
  bias = mgopt__ox_float(c, "bias", 0.0);
  for (i = 0; i < x->numel; i++) {
    double v = mgopt__ox_getf(x, i), r;
    if (strcmp(nm, "IsNaN") == 0) r = v != v;
    else if (strcmp(nm, "IsInf") == 0)
      r = (v == HUGE_VAL && mgopt__ox_int(c, "detect_positive", 1)) || (v == -HUGE_VAL && mgopt__ox_int(c, "detect_negative", 1));
    else if (strcmp(nm, "Selu") == 0) r = v > 0 ? gamma * v : gamma * (alpha * exp(v) - alpha);
    else if (strcmp(nm, "Celu") == 0) r = (v > 0 ? v : 0.0) + (v < 0 ? alpha * (exp(v / alpha) - 1.0) : 0.0);
    else if (strcmp(nm, "Shrink") == 0) r = v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;
    else if (strcmp(nm, "HardSwish") == 0) {
      double h = v / 6.0 + 0.5;
      r = v * (h < 0 ? 0.0 : h > 1 ? 1.0 : h);
    } else if (strcmp(nm, "Asinh") == 0) r = asinh(v);
    else if (strcmp(nm, "Acosh") == 0) r = acosh(v);
    else if (strcmp(nm, "Round") == 0) r = mgopt__oxo_round_even(v);
    else if (strcmp(nm, "Neg") == 0) r = -v;
    else r = v > 0 ? 1.0 : v < 0 ? -1.0 : v; /* Sign: 0 and NaN stay */
    if (test) mgopt__ox_seti(y, i, r != 0.0);
    else mgopt__ox_setf(y, i, r);
  }
  return MGOPT__OX_OK;
}

/* ---------------------------------------------------------------- casts */

/* CastLike (to input 1's dtype) and Cast (to attribute `to`) between
   numeric dtypes: reals round once to the target (nearest even; fp32 and
   fp64 to bf16 are declined, see below); a real
   to an integer truncates toward zero, saturating at int64's range, then
   wraps to the target; integers wrap; to bool is v != 0 (NaN is true). */
static int mgopt__oxo_cast(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *y, *like = NULL;
  mgopt_dtype to;
  int64_t i;
  int st;
  if (!x) return MGOPT__OX_ERR;
  if (strcmp(c->name, "CastLike") == 0) {
    if (!(like = mgopt__ox_need(c, 1))) return MGOPT__OX_ERR;
    to = (mgopt_dtype)like->dtype;
  } else {
    to = mgopt_onnx_dtype((int32_t)mgopt__ox_int(c, "to", 0));
  }
  if (!(mgopt__ox_is_real(to) || mgopt__oxo_is_intlike(to)) ||
      !(mgopt__ox_is_real((mgopt_dtype)x->dtype) || mgopt__oxo_is_intlike((mgopt_dtype)x->dtype)))
    return mgopt__ox_no(c, "a cast from %s to %s", mgopt_dtype_name((mgopt_dtype)x->dtype), mgopt_dtype_name(to));
  /* ONNX's reference data truncated float to bfloat16 before it rounded: no one answer */
  if (to == MGOPT_DT_BF16 && (x->dtype == MGOPT_DT_FP32 || x->dtype == MGOPT_DT_FP64))
    return mgopt__ox_no(c, "a cast from %s to bf16 (truncated or rounded, by ONNX version)",
                        mgopt_dtype_name((mgopt_dtype)x->dtype));
  if ((st = mgopt__ox_out(c, 0, to, x->rank, x->shape)) != MGOPT__OX_OK) return st;
  y = c->out[0];
  for (i = 0; i < x->numel; i++) {
    if (mgopt__ox_is_real((mgopt_dtype)x->dtype)) {
      double v = mgopt__ox_getf(x, i);
      if (mgopt__ox_is_real(to)) mgopt__ox_setf(y, i, v);
      else if (to == MGOPT_DT_BOOL) mgopt__ox_seti(y, i, v != 0.0);
      else mgopt__ox_seti(y, i, mgopt_tensor_get_i64(x, i));
    } else if (mgopt__ox_is_real(to)) {
      mgopt__ox_setf(y, i, mgopt__ox_getf(x, i));
    } else {
      mgopt__ox_seti(y, i, mgopt__ox_geti(x, i));
    }
  }
  return MGOPT__OX_OK;
}

/* ---------------------------------------------------------------- shapes and data movement */

/* Size: the element count, int64. Shape: the dims start..end (opset 15's
   attributes: negative counts from the end, clamped to [0, rank]). */
static int mgopt__oxo_shape(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0);
  int64_t start, end, n, i;
  int st;
  if (!x) return MGOPT__OX_ERR;
  if (strcmp(c->name, "Size") == 0) {
    if ((st = mgopt__ox_out(c, 0, MGOPT_DT_INT64, 0, NULL)) != MGOPT__OX_OK) return st;
    mgopt__ox_seti(c->out[0], 0, x->numel);
    return MGOPT__OX_OK;
  }
  start = mgopt__ox_int(c, "start", 0);
  end = mgopt__ox_int(c, "end", x->rank);
  if (start < 0) start += x->rank;
  if (end < 0) end += x->rank;
  start = start < 0 ? 0 : start > x->rank ? x->rank : start;
  end = end < 0 ? 0 : end > x->rank ? x->rank : end;
  n = end > start ? end - start : 0;
  if ((st = mgopt__ox_out(c, 0, MGOPT_DT_INT64, 1, &n)) != MGOPT__OX_OK) return st;
  for (i = 0; i < n; i++) mgopt__ox_seti(c->out[0], i, x->shape[start + i]);
  return MGOPT__OX_OK;
}

/* Bytes per element of a dtype these kernels move (not strings or sub-byte types). */
static int mgopt__oxo_movable(mgopt__ox *c, const mgopt_tensor *t, size_t *esz) {
  *esz = mgopt__k_esize((mgopt_dtype)t->dtype);
  if (!*esz || t->dtype == MGOPT_DT_STRING)
    return mgopt__ox_no(c, "%s of %s", c->name, mgopt_dtype_name((mgopt_dtype)t->dtype));
  return MGOPT__OX_OK;
}

/* Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the
   last two dims; the rest is zero. */
static int mgopt__oxo_trilu(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0);
  int64_t k = 0, rows, cols, m, i, j, nmat;
  int upper = (int)mgopt__ox_int(c, "upper", 1), st;
  size_t esz;
  if (!x) return MGOPT__OX_ERR;
  if (mgopt__ox_in(c, 1) && (st = mgopt__ox_scalar_int(c, 1, &k)) != MGOPT__OX_OK) return st;
  if (x->rank < 2) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "Trilu of rank %d", (int)x->rank);
  if ((st = mgopt__oxo_movable(c, x, &esz)) != MGOPT__OX_OK) return st;
  if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, x->rank, x->shape)) != MGOPT__OX_OK) return st;
  rows = x->shape[x->rank - 2];
  cols = x->shape[x->rank - 1];
  nmat = rows * cols != 0 ? x->numel / (rows * cols) : 0;
  for (m = 0; m < nmat; m++)
    for (i = 0; i < rows; i++)
      for (j = 0; j < cols; j++)
        if (upper ? j - i >= k : j - i <= k) {
          size_t at = (size_t)((m * rows + i) * cols + j) * esz;
          memcpy((uint8_t *)c->out[0]->data + at, (const uint8_t *)x->data + at, esz);
        }
  return MGOPT__OX_OK;
}

/* EyeLike: ones on the diagonal j - i == k of a 2-D shape, of attribute
   `dtype` (the input's when absent). */
static int mgopt__oxo_eye_like(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0);
  mgopt_dtype dt;
  int64_t k = mgopt__ox_int(c, "k", 0), i;
  int st;
  if (!x) return MGOPT__OX_ERR;
  dt = mgopt_op_attr(c->op, "dtype") ? mgopt_onnx_dtype((int32_t)mgopt__ox_int(c, "dtype", 0)) : (mgopt_dtype)x->dtype;
  if (x->rank != 2) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "EyeLike of rank %d", (int)x->rank);
  if (!mgopt__ox_is_real(dt) && !mgopt__oxo_is_intlike(dt)) return mgopt__ox_no(c, "EyeLike of %s", mgopt_dtype_name(dt));
  if ((st = mgopt__ox_out(c, 0, dt, 2, x->shape)) != MGOPT__OX_OK) return st;
  for (i = 0; i < x->shape[0]; i++)
    if (i + k >= 0 && i + k < x->shape[1]) {
      if (mgopt__ox_is_real(dt)) mgopt__ox_setf(c->out[0], i * x->shape[1] + i + k, 1.0);
      else mgopt__ox_seti(c->out[0], i * x->shape[1] + i + k, 1);
    }
  return MGOPT__OX_OK;
}

/* Compress: the slices along `axis` (the flattened input when absent) whose
   condition element is nonzero; the condition may be shorter than the axis. */
static int mgopt__oxo_compress(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *cond = x ? mgopt__ox_need(c, 1) : NULL;
  int64_t shape[MGOPT_MAX_RANK], outer = 1, inner = 1, len, kept = 0, o, i, w = 0;
  int32_t a = 0, d, rank;
  int st, has_axis = mgopt_op_attr(c->op, "axis") != NULL;
  size_t esz;
  if (!cond) return MGOPT__OX_ERR;
  if ((st = mgopt__oxo_movable(c, x, &esz)) != MGOPT__OX_OK) return st;
  if (cond->rank != 1) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the condition is not 1-D");
  if (has_axis && (st = mgopt__ox_axis(c, mgopt__ox_int(c, "axis", 0), x->rank, &a)) != MGOPT__OX_OK) return st;
  if (has_axis) {
    rank = x->rank;
    memcpy(shape, x->shape, sizeof(int64_t) * (size_t)rank);
    for (d = 0; d < a; d++) outer *= x->shape[d];
    for (d = a + 1; d < rank; d++) inner *= x->shape[d];
    len = x->shape[a];
  } else {
    rank = 1;
    len = x->numel;
  }
  if (cond->numel > len) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the condition is longer than the axis");
  for (i = 0; i < cond->numel; i++) kept += mgopt__ox_getf(cond, i) != 0.0;
  shape[has_axis ? a : 0] = kept;
  if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, rank, shape)) != MGOPT__OX_OK) return st;
  for (o = 0; o < outer; o++)
    for (i = 0; i < cond->numel; i++)
      if (mgopt__ox_getf(cond, i) != 0.0) {
        memcpy((uint8_t *)c->out[0]->data + (size_t)(w * inner) * esz,
               (const uint8_t *)x->data + (size_t)((o * len + i) * inner) * esz, (size_t)inner * esz);
        w++;
      }
  return MGOPT__OX_OK;
}

/* Expand: the input broadcast with the shape in input 1 (both ways). */
static int mgopt__oxo_expand(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *s = x ? mgopt__ox_need(c, 1) : NULL;
  int64_t want[MGOPT_MAX_RANK], shape[MGOPT_MAX_RANK], i;
  int32_t rank;
  size_t esz;
  int st;
  if (!s) return MGOPT__OX_ERR;
  if ((st = mgopt__oxo_movable(c, x, &esz)) != MGOPT__OX_OK) return st;
  if (s->rank != 1 || s->numel > MGOPT_MAX_RANK || !mgopt_dtype_is_int((mgopt_dtype)s->dtype))
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the shape is not a 1-D integer tensor of at most %d dims", MGOPT_MAX_RANK);
  for (i = 0; i < s->numel; i++) {
    want[i] = mgopt__ox_geti(s, i);
    if (want[i] < 0) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "negative dim %lld", (long long)want[i]);
  }
  if (!mgopt__k_bcast_shape(x->rank, x->shape, (int32_t)s->numel, want, &rank, shape))
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the input does not broadcast to the shape");
  if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, rank, shape)) != MGOPT__OX_OK) return st;
  if (c->out[0]->numel) mgopt__k_bcast(c->out[0]->data, x->data, esz, x->rank, x->shape, rank, shape);
  return MGOPT__OX_OK;
}

/* Dropout where it is deterministic: inference (training_mode absent or
   false) or a ratio of 0. The output is the input; the mask is all true.
   A random dropout is declined. */
static int mgopt__oxo_dropout(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *r = mgopt__ox_in(c, 1), *tm = mgopt__ox_in(c, 2);
  double ratio = r && r->numel == 1 ? mgopt__ox_getf(r, 0) : mgopt__ox_float(c, "ratio", 0.5);
  int training = c->opset < 7 ? !mgopt__ox_int(c, "is_test", 0) : tm && tm->numel == 1 && mgopt__ox_getf(tm, 0) != 0.0;
  size_t esz;
  int st;
  if (!x) return MGOPT__OX_ERR;
  if (training && ratio != 0.0) return mgopt__ox_no(c, "a random dropout (training with ratio %g)", ratio);
  if ((st = mgopt__oxo_movable(c, x, &esz)) != MGOPT__OX_OK) return st;
  if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, x->rank, x->shape)) != MGOPT__OX_OK) return st;
  if (x->nbytes) memcpy(c->out[0]->data, x->data, x->nbytes);
  if (mgopt__ox_wants(c, 1)) {
    mgopt_dtype mdt = (mgopt_dtype)c->op->outs[1]->type.dtype;
    int64_t i;
    if (mdt == MGOPT_DT_UNKNOWN) mdt = c->opset >= 10 ? MGOPT_DT_BOOL : (mgopt_dtype)x->dtype;
    if (!mgopt__ox_is_real(mdt) && !mgopt__oxo_is_intlike(mdt)) return mgopt__ox_no(c, "a mask of %s", mgopt_dtype_name(mdt));
    if ((st = mgopt__ox_out(c, 1, mdt, x->rank, x->shape)) != MGOPT__OX_OK) return st;
    for (i = 0; i < x->numel; i++) {
      if (mgopt__ox_is_real(mdt)) mgopt__ox_setf(c->out[1], i, 1.0);
      else mgopt__ox_seti(c->out[1], i, 1);
    }
  }
  return MGOPT__OX_OK;
}


/* ---------------------------------------------------------------- reductions */

/* ReduceSum over the axes of input 1 (attribute `axes` before opset 13);
   no axes means every axis, or the input unchanged with
   noop_with_empty_axes=1; keepdims (default 1). Reals sum in double in
   increasing index order, rounded once; integers in int64, wrapping. An
   empty reduction is 0. */
static int mgopt__oxo_reduce_sum(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *ax = mgopt__ox_in(c, 1), *y;
  int64_t shape[MGOPT_MAX_RANK], idx[MGOPT_MAX_RANK], e, naxes = 0;
  const mgopt_attr *aa = mgopt_op_attr(c->op, "axes");
  uint8_t red[MGOPT_MAX_RANK];
  int32_t d, rank = 0, a = 0;
  int st, real, keep = (int)mgopt__ox_int(c, "keepdims", 1);
  if (!x) return MGOPT__OX_ERR;
  real = mgopt__ox_is_real((mgopt_dtype)x->dtype);
  if (!real && (!mgopt__oxo_is_intlike((mgopt_dtype)x->dtype) || x->dtype == MGOPT_DT_BOOL))
    return mgopt__ox_no(c, "ReduceSum of %s", mgopt_dtype_name((mgopt_dtype)x->dtype));
  memset(red, 0, sizeof red);
  if (ax) {
    if (ax->rank > 1 || !mgopt_dtype_is_int((mgopt_dtype)ax->dtype))
      return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the axes are not a 1-D integer tensor");
    naxes = ax->numel;
  } else if (aa && aa->kind == MGOPT_ATTR_INTS) {
    naxes = aa->n;
  }
  for (e = 0; e < naxes; e++) {
    if ((st = mgopt__ox_axis(c, ax ? mgopt__ox_geti(ax, e) : aa->u.ints[e], x->rank, &a)) != MGOPT__OX_OK) return st;
    red[a] = 1;
  }
  if (naxes == 0 && mgopt__ox_int(c, "noop_with_empty_axes", 0)) {
    if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, x->rank, x->shape)) != MGOPT__OX_OK) return st;
    if (x->nbytes) memcpy(c->out[0]->data, x->data, x->nbytes);
    return MGOPT__OX_OK;
  }
  for (d = 0; d < x->rank; d++) {
    if (naxes == 0) red[d] = 1;
    if (!red[d]) shape[rank++] = x->shape[d];
    else if (keep) shape[rank++] = 1;
  }
  if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, rank, shape)) != MGOPT__OX_OK) return st;
  y = c->out[0];
  {
    /* sums in double / int64 scratch by output element, inputs in increasing order */
    size_t bytes = sizeof(double) * (size_t)(y->numel ? y->numel : 1);
    double *acc = (double *)mgopt__heap_realloc(&c->p->alloc, NULL, 0, bytes);
    int64_t *iacc = (int64_t *)(void *)acc;
    if (!acc) return mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
    memset(acc, 0, bytes);
    memset(idx, 0, sizeof idx);
    for (e = 0; e < x->numel; e++, mgopt__oxo_next(x->rank, x->shape, idx)) {
      int64_t o = 0;
      for (d = 0; d < x->rank; d++)
        if (!red[d]) o = o * x->shape[d] + idx[d];
      if (real) acc[o] += mgopt__ox_getf(x, e);
      else iacc[o] = (int64_t)((uint64_t)iacc[o] + (uint64_t)mgopt__ox_geti(x, e));
    }
    for (e = 0; e < y->numel; e++) {
      if (real) mgopt__ox_setf(y, e, acc[e]);
      else mgopt__ox_seti(y, e, iacc[e]);
    }
    mgopt__heap_free(&c->p->alloc, acc, bytes);
  }
  return MGOPT__OX_OK;
}

/* ---------------------------------------------------------------- the table */

static const mgopt__ox_row mgopt__ox_table[] = {
    {"Softmax", 1, 0, mgopt__ox_softmax},
    {"LogSoftmax", 1, 0, mgopt__ox_softmax},
    {"Hardmax", 1, 0, mgopt__ox_softmax},
    {"NegativeLogLikelihoodLoss", 12, 0, mgopt__ox_nll_loss},
    {"SoftmaxCrossEntropyLoss", 12, 0, mgopt__ox_sce_loss},
    {"LayerNormalization", 17, 0, mgopt__ox_layer_norm},
    {"ArgMax", 1, 0, mgopt__ox_arg_extreme},
    {"ArgMin", 1, 0, mgopt__ox_arg_extreme},
    {"GlobalMaxPool", 1, 0, mgopt__ox_global_max_pool},
    {"Cast", 1, 0, mgopt__oxo_cast},
    {"CastLike", 15, 0, mgopt__oxo_cast},
    {"Sum", 1, 0, mgopt__oxo_nary},
    {"Mean", 1, 0, mgopt__oxo_nary},
    {"Max", 1, 0, mgopt__oxo_nary},
    {"Min", 1, 0, mgopt__oxo_nary},
    {"Mod", 10, 0, mgopt__oxo_binary},
    {"BitShift", 11, 0, mgopt__oxo_binary},
    {"Div", 1, 0, mgopt__oxo_binary},
    {"Selu", 1, 0, mgopt__oxo_unary},
    {"Celu", 12, 0, mgopt__oxo_unary},
    {"Shrink", 9, 0, mgopt__oxo_unary},
    {"HardSwish", 14, 0, mgopt__oxo_unary},
    {"Asinh", 9, 0, mgopt__oxo_unary},
    {"Acosh", 9, 0, mgopt__oxo_unary},
    {"IsInf", 10, 0, mgopt__oxo_unary},
    {"IsNaN", 9, 0, mgopt__oxo_unary},
    {"Round", 11, 0, mgopt__oxo_unary},
    {"Neg", 1, 0, mgopt__oxo_unary},
    {"Sign", 9, 0, mgopt__oxo_unary},
    {"Size", 1, 0, mgopt__oxo_shape},
    {"Shape", 1, 0, mgopt__oxo_shape},
    {"Trilu", 14, 0, mgopt__oxo_trilu},
    {"EyeLike", 9, 0, mgopt__oxo_eye_like},
    {"Compress", 9, 0, mgopt__oxo_compress},
    {"Expand", 8, 0, mgopt__oxo_expand},
    {"Dropout", 1, 0, mgopt__oxo_dropout},
    {"ReduceSum", 1, 0, mgopt__oxo_reduce_sum},
};

MGOPT__PRIVATE const mgopt__ox_row *mgopt__ox_rows(int32_t *n) {
  *n = (int32_t)MGOPT__ARRAY_COUNT(mgopt__ox_table);
  return mgopt__ox_table;
}
/* src/kernels/onnx_nn.c — kernels of ONNX ops without a MIL op, neural-network family: Softmax / LogSoftmax / Hardmax across opsets, NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, ArgMax / ArgMin, GlobalMaxPool, LayerNormalization.

   Numeric contract. Every real dtype (fp16, bf16, fp32, fp64) is read into
   double, computed in double in increasing index order and rounded once to
   the output dtype (nearest even). Softmax subtracts the row's maximum
   before exp; LogSoftmax is x - max - log(sum(exp(x - max))). NaN and Inf
   propagate as in IEEE 754 (a row holding NaN is NaN; a row of -Inf is NaN,
   as x - max is -Inf - -Inf). Hardmax puts its 1 at the first maximum, a NaN
   counting as the maximum (numpy's argmax). Losses: loss = -w * x[n,
   target, d] with w = weight[target] (1 without weights) and w = 0 where
   target == ignore_index; "mean" is sum(w * loss) / sum(w), NaN when every
   weight is 0 or there is nothing to reduce (numpy's 0/0); a target outside
   [0, C) that is not ignored is an error. ArgMax / ArgMin, GlobalMaxPool
   and LayerNormalization state their rules above each kernel (the same
   double computation, NaN counted as the extreme). */

/* ---------------------------------------------------------------- softmax family */

/* The rows a softmax-like op works on: `outer` blocks, each of `inner`
   rows of n elements at stride `inner`. Before opset 13 the input is seen
   as 2-D, [prod(dims before axis), prod(dims from axis)]: one row per block. */
static int mgopt__oxn_rows(mgopt__ox *c, const mgopt_tensor *x, int64_t *outer, int64_t *n, int64_t *inner) {
  int64_t axis = mgopt__ox_int(c, "axis", c->opset < 13 ? 1 : -1);
  int32_t a = 0, i;
  int r;
  if (x->rank == 0) {
    /* a scalar: one row of one element */
    *outer = *n = *inner = 1;
    return axis == 0 || axis == -1 ? MGOPT__OX_OK
                                   : mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "axis %lld of a scalar", (long long)axis);
  }
  if ((r = mgopt__ox_axis(c, axis, x->rank, &a)) != MGOPT__OX_OK) return r;
  *outer = *n = *inner = 1;
  for (i = 0; i < a; i++) *outer *= x->shape[i];
  if (c->opset < 13) {
    for (i = a; i < x->rank; i++) *n *= x->shape[i];
    return MGOPT__OX_OK;
  }
  *n = x->shape[a];
  for (i = a + 1; i < x->rank; i++) *inner *= x->shape[i];
  return MGOPT__OX_OK;
}

/* Softmax (mode 0), LogSoftmax (1), Hardmax (2). */
static int mgopt__oxn_softmax_mode(mgopt__ox *c, int mode) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *y;
  int64_t outer, n, inner, o, r, j;
  int st;
  if (!x) return MGOPT__OX_ERR;
  if (!mgopt__ox_is_real((mgopt_dtype)x->dtype))
    return mgopt__ox_fail(c, MGOPT_ERR_UNSUPPORTED, "%s of %s", c->name, mgopt_dtype_name((mgopt_dtype)x->dtype));
  if ((st = mgopt__oxn_rows(c, x, &outer, &n, &inner)) != MGOPT__OX_OK) return st;
  if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, x->rank, x->shape)) != MGOPT__OX_OK) return st;
  y = c->out[0];
  if (x->numel == 0) return MGOPT__OX_OK;
  for (o = 0; o < outer; o++)
    for (r = 0; r < inner; r++) {
      int64_t base = o * n * inner + r, best = 0;
      double mx = mgopt__ox_getf(x, base), sum = 0.0;
      for (j = 1; j < n; j++) {
        double v = mgopt__ox_getf(x, base + j * inner);
        if (mx != mx) break;
        if (v != v || v > mx) {
          mx = v;
          best = j;
        }
      }
      if (mode == 2) {
        mgopt__ox_setf(y, base + best * inner, 1.0);
        continue;
      }
      for (j = 0; j < n; j++) sum += exp(mgopt__ox_getf(x, base + j * inner) - mx);
      for (j = 0; j < n; j++) {
        double v = mgopt__ox_getf(x, base + j * inner) - mx;
        mgopt__ox_setf(y, base + j * inner, mode == 1 ? v - log(sum) : exp(v) / sum);
      }
    }
  return MGOPT__OX_OK;
}

MGOPT__PRIVATE int mgopt__ox_softmax(mgopt__ox *c) {
  int mode = strcmp(c->name, "LogSoftmax") == 0 ? 1 : strcmp(c->name, "Hardmax") == 0 ? 2 : 0;
  return mgopt__oxn_softmax_mode(c, mode);
}

/* ---------------------------------------------------------------- losses */

/* The loss of log-probabilities lp (N, C, d1..dk) against target (N, d1..dk)
   with optional weight (C) into output 0: reduction "none", "sum" or
   "mean"; the loss has dtype dt (lp's, or the scores' when lp holds their
   log_softmax in fp64). */
static int mgopt__oxn_nll(mgopt__ox *c, const mgopt_tensor *lp, mgopt_dtype dt, const mgopt_tensor *target,
                          const mgopt_tensor *weight, const char *reduction_default) {
  int64_t N, C, D = 1, n, d, ignore = 0;
  int has_ignore = mgopt_op_attr(c->op, "ignore_index") != NULL, reduce, st;
  int32_t i;
  double total = 0.0, wsum = 0.0;
  mgopt_tensor *y;
  if (mgopt__ox_str_is(c, "reduction", "none", strcmp(reduction_default, "none") == 0)) reduce = 0;
  else if (mgopt__ox_str_is(c, "reduction", "sum", strcmp(reduction_default, "sum") == 0)) reduce = 1;
  else if (mgopt__ox_str_is(c, "reduction", "mean", strcmp(reduction_default, "mean") == 0)) reduce = 2;
  else return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "unknown reduction");
  if (has_ignore) ignore = mgopt__ox_int(c, "ignore_index", 0);
  if (!mgopt__ox_is_real((mgopt_dtype)lp->dtype))
    return mgopt__ox_fail(c, MGOPT_ERR_UNSUPPORTED, "%s of %s", c->name, mgopt_dtype_name((mgopt_dtype)lp->dtype));
  if (target->dtype != MGOPT_DT_INT32 && target->dtype != MGOPT_DT_INT64)
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the target is %s, not an int32 or int64 tensor",
                          mgopt_dtype_name((mgopt_dtype)target->dtype));
  if (lp->rank < 2 || target->rank != lp->rank - 1 || target->shape[0] != lp->shape[0])
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the input (rank %d) and the target (rank %d) disagree",
                          (int)lp->rank, (int)target->rank);
  for (i = 2; i < lp->rank; i++) {
    if (target->shape[i - 1] != lp->shape[i])
      return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "target dim %d is %lld, input dim %d is %lld", (int)(i - 1),
                            (long long)target->shape[i - 1], (int)i, (long long)lp->shape[i]);
    D *= lp->shape[i];
  }
  N = lp->shape[0];
  C = lp->shape[1];
  if (weight && (weight->rank != 1 || weight->shape[0] != C || weight->dtype != dt))
    return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the weight is not a 1-D tensor of C = %lld elements of the input's dtype",
                          (long long)C);
  if (reduce == 0) st = mgopt__ox_out(c, 0, dt, target->rank, target->shape);
  else st = mgopt__ox_out(c, 0, dt, 0, NULL);
  if (st != MGOPT__OX_OK) return st;
  y = c->out[0];
  for (n = 0; n < N; n++)
    for (d = 0; d < D; d++) {
      int64_t t = mgopt__ox_geti(target, n * D + d);
      double w, l;
      if (has_ignore && t == ignore) continue; /* loss 0, weight 0 */
      if (t < 0 || t >= C)
        return mgopt__ox_fail(c, MGOPT_ERR_CORRUPT, "target %lld at %lld is outside [0, %lld)", (long long)t,
                              (long long)(n * D + d), (long long)C);
      w = weight ? mgopt__ox_getf(weight, t) : 1.0;
      l = -mgopt__ox_getf(lp, (n * C + t) * D + d) * w;
      if (reduce == 0) mgopt__ox_setf(y, n * D + d, l);
      total += l;
      wsum += w;
    }
  if (reduce == 1) mgopt__ox_setf(y, 0, total);
  else if (reduce == 2) mgopt__ox_setf(y, 0, total / wsum);
  return MGOPT__OX_OK;
}

MGOPT__PRIVATE int mgopt__ox_nll_loss(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *t = x ? mgopt__ox_need(c, 1) : NULL;
  if (!t) return MGOPT__OX_ERR;
  return mgopt__oxn_nll(c, x, (mgopt_dtype)x->dtype, t, mgopt__ox_in(c, 2), "mean");
}

/* log_softmax over axis 1 into lp (the scores' shape and dtype). */
static void mgopt__oxn_log_softmax_c(const mgopt_tensor *x, mgopt_tensor *lp) {
  int64_t N = x->shape[0], C = x->shape[1], D = x->numel / (N * C), n, d, j;
  for (n = 0; n < N; n++)
    for (d = 0; d < D; d++) {
      int64_t base = n * C * D + d;
      double mx = mgopt__ox_getf(x, base), sum = 0.0;
      for (j = 1; j < C; j++) {
        double v = mgopt__ox_getf(x, base + j * D);
        if (mx != mx) break;
        if (v != v || v > mx) mx = v;
      }
      for (j = 0; j < C; j++) sum += exp(mgopt__ox_getf(x, base + j * D) - mx);
      for (j = 0; j < C; j++) mgopt__ox_setf(lp, base + j * D, mgopt__ox_getf(x, base + j * D) - mx - log(sum));
    }
}

/* SoftmaxCrossEntropyLoss: the NLL loss of log_softmax(scores, axis 1);
   output 1 (optional) is that log_softmax. The loss reads the log
   probabilities in double before they are rounded to the output dtype. */
MGOPT__PRIVATE int mgopt__ox_sce_loss(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *t = x ? mgopt__ox_need(c, 1) : NULL, *lp;
  int st;
  if (!t) return MGOPT__OX_ERR;
  if (!mgopt__ox_is_real((mgopt_dtype)x->dtype))
    return mgopt__ox_fail(c, MGOPT_ERR_UNSUPPORTED, "%s of %s", c->name, mgopt_dtype_name((mgopt_dtype)x->dtype));
  if (x->rank < 2) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "the scores have rank %d, below 2", (int)x->rank);
  /* the log probabilities in fp64 (freed below), then rounded once into output 1 */
  lp = mgopt_eval_tensor_new(c->p, MGOPT_DT_FP64, x->rank, x->shape);
  if (!lp) return mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
  if (x->numel) mgopt__oxn_log_softmax_c(x, lp);
  st = mgopt__oxn_nll(c, lp, (mgopt_dtype)x->dtype, t, mgopt__ox_in(c, 2), "mean");
  if (st == MGOPT__OX_OK && mgopt__ox_wants(c, 1)) {
    int64_t i;
    st = mgopt__ox_out(c, 1, (mgopt_dtype)x->dtype, x->rank, x->shape);
    for (i = 0; st == MGOPT__OX_OK && i < x->numel; i++) mgopt__ox_setf(c->out[1], i, mgopt__ox_getf(lp, i));
  }
  mgopt_eval_tensor_free(c->p, lp);
  return st;
}

/* ---------------------------------------------------------------- arg max / min, global max pool */

/* ArgMax / ArgMin along `axis` (default 0), int64 out, keepdims (default 1),
   select_last_index (default 0) picks the last of equal extremes. Reals
   compare in double, a NaN counting as the extreme (numpy); integers in
   int64 (uint64 unsigned). */
MGOPT__PRIVATE int mgopt__ox_arg_extreme(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0);
  int want_max = strcmp(c->name, "ArgMax") == 0, last = (int)mgopt__ox_int(c, "select_last_index", 0), st, real;
  int64_t shape[MGOPT_MAX_RANK], outer = 1, n, inner = 1, o, r, j;
  int32_t a = 0, d, rank = 0;
  if (!x) return MGOPT__OX_ERR;
  real = mgopt__ox_is_real((mgopt_dtype)x->dtype);
  if (!real && !(mgopt_dtype_is_int((mgopt_dtype)x->dtype) && mgopt_dtype_bits((mgopt_dtype)x->dtype) >= 8))
    return mgopt__ox_no(c, "%s of %s", c->name, mgopt_dtype_name((mgopt_dtype)x->dtype));
  if (x->rank == 0) return mgopt__ox_no(c, "%s of a scalar", c->name);
  if ((st = mgopt__ox_axis(c, mgopt__ox_int(c, "axis", 0), x->rank, &a)) != MGOPT__OX_OK) return st;
  n = x->shape[a];
  if (n == 0) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "%s over an empty axis", c->name);
  for (d = 0; d < x->rank; d++) {
    if (d < a) outer *= x->shape[d];
    if (d > a) inner *= x->shape[d];
    if (d != a) shape[rank++] = x->shape[d];
    else if (mgopt__ox_int(c, "keepdims", 1)) shape[rank++] = 1;
  }
  if ((st = mgopt__ox_out(c, 0, MGOPT_DT_INT64, rank, shape)) != MGOPT__OX_OK) return st;
  for (o = 0; o < outer; o++)
    for (r = 0; r < inner; r++) {
      int64_t base = o * n * inner + r, best = 0;
      for (j = 1; j < n; j++) {
        int better, equal;
        if (real) {
          double v = mgopt__ox_getf(x, base + j * inner), b = mgopt__ox_getf(x, base + best * inner);
          if (b != b) break;
          better = v != v || (want_max ? v > b : v < b);
          equal = v == b;
        } else {
          int64_t v = mgopt__ox_geti(x, base + j * inner), b = mgopt__ox_geti(x, base + best * inner);
          if (x->dtype == MGOPT_DT_UINT64) better = want_max ? (uint64_t)v > (uint64_t)b : (uint64_t)v < (uint64_t)b;
          else better = want_max ? v > b : v < b;
          equal = v == b;
        }
        if (better || (last && equal)) best = j;
      }
      mgopt__ox_seti(c->out[0], o * inner + r, best);
    }
  return MGOPT__OX_OK;
}

/* GlobalMaxPool: the maximum over every dim after the first two (kept as 1). */
MGOPT__PRIVATE int mgopt__ox_global_max_pool(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0);
  int64_t shape[MGOPT_MAX_RANK], rows, n, r, j;
  int32_t d;
  int st;
  if (!x) return MGOPT__OX_ERR;
  if (!mgopt__ox_is_real((mgopt_dtype)x->dtype) || x->rank < 3)
    return mgopt__ox_no(c, "GlobalMaxPool of %s rank %d", mgopt_dtype_name((mgopt_dtype)x->dtype), (int)x->rank);
  for (d = 0; d < x->rank; d++) shape[d] = d < 2 ? x->shape[d] : 1;
  rows = x->shape[0] * x->shape[1];
  n = rows ? x->numel / rows : 0;
  if (n == 0 && rows) return mgopt__ox_fail(c, MGOPT_ERR_INVALID_ARG, "GlobalMaxPool over no element");
  if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, x->rank, shape)) != MGOPT__OX_OK) return st;
  for (r = 0; r < rows; r++) {
    double m = mgopt__ox_getf(x, r * n);
    for (j = 1; j < n && m == m; j++) {
      double v = mgopt__ox_getf(x, r * n + j);
      if (v != v || v > m) m = v;
    }
    mgopt__ox_setf(c->out[0], r, m);
  }
  return MGOPT__OX_OK;
}

/* ---------------------------------------------------------------- layer normalization */

/* LayerNormalization over the dims from `axis` (default -1): mean, then
   the variance of (x - mean) (two passes, in double), y = (x - mean) /
   sqrt(var + epsilon) * scale + bias; outputs 1 and 2 (optional) are the
   mean and 1 / sqrt(var + epsilon) with the normalized dims kept as 1, of
   their declared dtype (fp32, the stash type, when not declared). Scale and
   bias hold the normalized dims' elements (or one). */
MGOPT__PRIVATE int mgopt__ox_layer_norm(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *s = x ? mgopt__ox_need(c, 1) : NULL, *b = mgopt__ox_in(c, 2);
  double eps = mgopt__ox_float(c, "epsilon", 1e-5);
  int64_t shape[MGOPT_MAX_RANK], outer = 1, n = 1, o, j;
  int32_t a = 0, d, k;
  int st;
  if (!s) return MGOPT__OX_ERR;
  if (!mgopt__ox_is_real((mgopt_dtype)x->dtype) || x->rank == 0)
    return mgopt__ox_no(c, "LayerNormalization of %s rank %d", mgopt_dtype_name((mgopt_dtype)x->dtype), (int)x->rank);
  if ((st = mgopt__ox_axis(c, mgopt__ox_int(c, "axis", -1), x->rank, &a)) != MGOPT__OX_OK) return st;
  for (d = 0; d < x->rank; d++) {
    if (d < a) outer *= x->shape[d];
    else n *= x->shape[d];
    shape[d] = d < a ? x->shape[d] : 1;
  }
  if ((s->numel != n && s->numel != 1) || (b && b->numel != n && b->numel != 1))
    return mgopt__ox_no(c, "a scale or bias that is not of the normalized shape");
  if ((st = mgopt__ox_out(c, 0, (mgopt_dtype)x->dtype, x->rank, x->shape)) != MGOPT__OX_OK) return st;
  for (k = 1; k <= 2; k++)
    if (mgopt__ox_wants(c, k)) {
      mgopt_dtype dt = (mgopt_dtype)c->op->outs[k]->type.dtype;
      if (!mgopt__ox_is_real(dt)) dt = MGOPT_DT_FP32;
      if ((st = mgopt__ox_out(c, k, dt, x->rank, shape)) != MGOPT__OX_OK) return st;
    }
  if (n == 0) return MGOPT__OX_OK;
  for (o = 0; o < outer; o++) {
    double mean = 0.0, var = 0.0, inv;
    for (j = 0; j < n; j++) mean += mgopt__ox_getf(x, o * n + j);
    mean /= (double)n;
    for (j = 0; j < n; j++) {
      double v = mgopt__ox_getf(x, o * n + j) - mean;
      var += v * v;
    }
    var /= (double)n;
    inv = 1.0 / sqrt(var + eps);
    for (j = 0; j < n; j++) {
      double v = (mgopt__ox_getf(x, o * n + j) - mean) * inv * mgopt__ox_getf(s, s->numel == 1 ? 0 : j);
      if (b) v += mgopt__ox_getf(b, b->numel == 1 ? 0 : j);
      mgopt__ox_setf(c->out[0], o * n + j, v);
    }
    if (c->nout > 1 && c->out[1]) mgopt__ox_setf(c->out[1], o, mean);
    if (c->nout > 2 && c->out[2]) mgopt__ox_setf(c->out[2], o, inv);
  }
  return MGOPT__OX_OK;
}
/* src/kernels/onnx_eval.c — mgopt_onnx_eval_op, mgopt_eval's callback for opaque ONNX ops: the ONNX kernel table, then late mapping through the importer's rows.

   An op `onnx::X` (default domain; inputs in slots in0, in1, ...; its ONNX
   attributes kept) is evaluated in two steps:
   1. the row of the ONNX kernel table (onnx_ops.c) for X at the program's
      opset, for ops without a MIL op (losses, LogSoftmax, Trilu, ...); a
      kernel may decline attributes or operands it does not handle;
   2. late mapping: a node stays opaque at import when a parameter the
      mapping needs is not a constant (Reshape's shape, Slice's starts, a
      CumSum axis) or when a type is not known. At run time every operand is
      known, so the node is built again in a scratch program, every operand a
      constant borrowing the run-time tensor, and the importer's own mapping
      row for X runs on it (mgopt_onnx_reimport_op). The canonical ops it
      builds are evaluated with the canonical kernels (mgopt_eval) and their
      results become the op's outputs. Any op a mapping row covers is
      covered, with no table of its own here.
   An op neither step evaluates is MGOPT_ERR_UNSUPPORTED, "cannot evaluate
   onnx::X: why". The numeric contract is the kernel's: onnx_ops.c and
   onnx_nn.c for the table, the canonical kernels' for a late mapping. */

#define MGOPT__OX_MAX_INPUTS 4096

/* The row of the ONNX kernel table for name at opset, NULL when none. */
static const mgopt__ox_row *mgopt__ox_find(const char *name, int64_t opset) {
  int32_t n, i;
  const mgopt__ox_row *rows = mgopt__ox_rows(&n);
  for (i = 0; i < n; i++)
    if (strcmp(rows[i].onnx, name) == 0 && mgopt__onnx_in_range(rows[i].since, rows[i].until, opset)) return &rows[i];
  return NULL;
}

/* 1 when an importer mapping row holds name at opset. */
static int mgopt__ox_has_mapping(const char *name, int64_t opset) {
  const mgopt__onnx_map *rows;
  int32_t f, i, n;
  for (f = 0; (rows = mgopt__onnx_family(f, &n)) != NULL; f++)
    for (i = 0; i < n; i++)
      if (rows[i].to_ir && strcmp(rows[i].onnx, name) == 0 && mgopt__onnx_in_range(rows[i].since, rows[i].until, opset))
        return 1;
  return 0;
}

/* The ONNX input index of an operand slot named "in<k>", -1 otherwise. */
static int32_t mgopt__ox_slot_input(const mgopt_slot *s) {
  const char *q = s->name;
  int32_t k = 0;
  if (!q || q[0] != 'i' || q[1] != 'n' || !q[2] || s->is_list) return -1;
  for (q += 2; *q; q++) {
    if (*q < '0' || *q > '9' || k >= MGOPT__OX_MAX_INPUTS) return -1;
    k = k * 10 + (*q - '0');
  }
  return k < MGOPT__OX_MAX_INPUTS ? k : -1;
}

/* ---------------------------------------------------------------- late mapping */

/* Builds op again in scratch program s: a const for each operand (borrowing
   its tensor; strings are copied), the opaque op, and a sink op reading its
   outputs. Returns the sink, NULL on OOM. */
static mgopt_op *mgopt__ox_rebuild(mgopt_program *s, const mgopt_op *op, mgopt_tensor *const *operands, mgopt_op **copy) {
  mgopt_function *f = mgopt_function_new(s, "main");
  mgopt_op *x, *sink;
  int32_t k, j, at = 0;
  if (!f) return NULL;
  x = mgopt_op_new(s, op->type, op->nouts, 0);
  sink = mgopt_op_new(s, "mgopt::outputs", 0, 0);
  if (!x || !sink) return NULL;
  for (k = 0; k < op->nslots; k++)
    for (j = 0; j < op->slots[k].n; j++) {
      const mgopt_tensor *t = operands[at++];
      mgopt_tensor *b = t->dtype == MGOPT_DT_STRING
                            ? mgopt_tensor_clone(s, t)
                            : mgopt_tensor_new_borrowed(s, (mgopt_dtype)t->dtype, t->rank, t->shape, t->data, t->nbytes);
      mgopt_value *v = b ? mgopt_build_const(s, f->body, NULL, op->slots[k].name, b) : NULL;
      if (!v || mgopt_op_set_operand(x, op->slots[k].name, v)) return NULL;
    }
  for (k = 0; k < op->nattrs; k++)
    if (mgopt_op_set_attr(x, &op->attrs[k])) return NULL;
  if (op->name && mgopt_op_set_name(x, op->name)) return NULL;
  for (k = 0; k < op->nouts; k++) {
    char slot[24];
    if (op->outs[k]->flags & MGOPT_VALUE_ABSENT) {
      x->outs[k]->flags |= MGOPT_VALUE_ABSENT;
      continue;
    }
    if (mgopt_value_set_name(x->outs[k], op->outs[k]->name ? op->outs[k]->name : "out")) return NULL;
    snprintf(slot, sizeof slot, "o%d", (int)k);
    if (mgopt_op_set_operand(sink, slot, x->outs[k])) return NULL;
  }
  mgopt_op_append(x, f->body);
  mgopt_op_append(sink, f->body);
  *copy = x;
  return mgopt_program_status(s) == MGOPT_OK ? sink : NULL;
}

/* Evaluates op through its mapping row: MGOPT__OX_OK (out set), MGOPT__OX_NO
   (the mapping declines: c->why), MGOPT__OX_ERR. */
static int mgopt__ox_late(mgopt__ox *c, mgopt_tensor *const *operands, int32_t noperands) {
  mgopt_program *s;
  mgopt_op *sink, *x = NULL;
  mgopt_value *outs[64];
  mgopt_tensor *res[64];
  int32_t k, n = 0;
  int r, st = MGOPT__OX_OK;
  mgopt_eval_options eo;
  mgopt_diag d2;
  (void)noperands;
  if (!mgopt__ox_has_mapping(c->name, c->opset)) return mgopt__ox_no(c, "no kernel and no mapping at opset %lld", (long long)c->opset);
  if (c->op->nouts > 64 || c->op->nblocks) return mgopt__ox_no(c, "the op has nested blocks or too many outputs");
  s = mgopt_program_create(&c->p->alloc);
  if (!s) return mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
  /* the mapping rows read the opset from the imported model (borrowed, never written) */
  s->onnx_meta = c->p->onnx_meta;
  sink = mgopt__ox_rebuild(s, c->op, operands, &x);
  if (!sink) {
    st = mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
    goto done;
  }
  r = mgopt_onnx_reimport_op(s, x);
  if (r < 0) {
    st = mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
    goto done;
  }
  if (r != 1) {
    st = mgopt__ox_no(c, "its mapping declines these operands and attributes");
    goto done;
  }
  /* the values the mapping made, in output order, become main's outputs */
  for (k = 0; k < sink->nslots; k++)
    if (sink->slots[k].n == 1) outs[n++] = sink->slots[k].uses[0].value;
  mgopt_op_erase(sink);
  for (k = 0; k < n; k++)
    if (mgopt_block_add_output(mgopt_program_function(s, "main")->body, outs[k])) {
      st = mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
      goto done;
    }
  memset(&eo, 0, sizeof eo);
  eo.max_elements = c->max_elements;
  if (mgopt_eval(s, "main", NULL, 0, res, n, &eo, &d2) != MGOPT_OK) {
    if (d2.status == MGOPT_ERR_UNSUPPORTED) st = mgopt__ox_no(c, "its mapping: %s", d2.msg);
    else st = mgopt__ox_fail(c, d2.status, "%s", d2.msg);
    goto done;
  }
  /* the results live on the same allocator as p's evaluator tensors */
  for (k = 0, n = 0; k < c->nout; k++)
    if (!(c->op->outs[k]->flags & MGOPT_VALUE_ABSENT)) c->out[k] = res[n++];
done:
  s->onnx_meta = NULL;
  mgopt_program_destroy(s);
  return st;
}

/* ---------------------------------------------------------------- exported */

MGOPTDEF int mgopt_onnx_eval_covers(mgopt_program *p, const mgopt_op *op) {
  int64_t opset;
  if (!p || !op || op->kind != MGOPT_OP_OPAQUE || !op->type || strncmp(op->type, "onnx::", 6) != 0) return 0;
  opset = mgopt__onnx_export_opset(p, 0);
  return mgopt__ox_find(op->type + 6, opset) != NULL || (!op->nblocks && mgopt__ox_has_mapping(op->type + 6, opset));
}

MGOPTDEF mgopt_status mgopt_onnx_eval_op(void *ud, mgopt_program *p, const mgopt_op *op, mgopt_tensor *const *operands,
                                         int32_t noperands, mgopt_tensor **out, mgopt_diag *d) {
  const mgopt_onnx_eval_options *o = (const mgopt_onnx_eval_options *)ud;
  const mgopt__ox_row *row;
  mgopt__ox c;
  size_t bytes;
  int32_t k, j, at = 0, nin = 0;
  int r = MGOPT__OX_NO;
  mgopt_diag_clear(d);
  if (!p || !op || (noperands > 0 && !operands) || (op->nouts > 0 && !out))
    return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "invalid arguments");
  for (k = 0; k < op->nouts; k++) out[k] = NULL;
  if (op->kind != MGOPT_OP_OPAQUE || !op->type || strncmp(op->type, "onnx::", 6) != 0)
    return mgopt_diag_set(d, MGOPT_ERR_UNSUPPORTED, "cannot evaluate %s: not an op of the ONNX default domain",
                          op->type ? op->type : "?");
  if (noperands != mgopt_op_operand_count(op)) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "operand count mismatch");
  for (k = 0; k < op->nslots; k++) {
    int32_t i = mgopt__ox_slot_input(&op->slots[k]);
    if (op->slots[k].n == 0) continue;
    if (i < 0) return mgopt_diag_set(d, MGOPT_ERR_UNSUPPORTED, "cannot evaluate %s: operand slot '%s' is not an ONNX input",
                                     op->type, op->slots[k].name);
    if (i + 1 > nin) nin = i + 1;
  }
  memset(&c, 0, sizeof c);
  c.p = p;
  c.op = op;
  c.name = op->type + 6;
  c.opset = mgopt__onnx_export_opset(p, 0);
  c.out = out;
  c.nout = op->nouts;
  c.max_elements = o ? o->max_elements : 0;
  c.d = d;
  c.nin = nin;
  bytes = sizeof(mgopt_tensor *) * (size_t)(nin + 1);
  c.in = (mgopt_tensor **)mgopt__heap_realloc(&p->alloc, NULL, 0, bytes);
  if (!c.in) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  memset(c.in, 0, bytes);
  for (k = 0; k < op->nslots; k++)
    for (j = 0; j < op->slots[k].n; j++) {
      mgopt_tensor *t = operands[at++];
      if (!t) {
        r = mgopt__ox_fail(&c, MGOPT_ERR_INVALID_ARG, "operand '%s' has no tensor", op->slots[k].name);
        goto done;
      }
      c.in[mgopt__ox_slot_input(&op->slots[k])] = t;
    }
  row = op->nblocks ? NULL : mgopt__ox_find(c.name, c.opset);
  if (row) r = row->fn(&c);
  if (r == MGOPT__OX_NO) {
    char why[sizeof c.why];
    memcpy(why, c.why, sizeof why);
    for (k = 0; k < op->nouts; k++)
      if (out[k]) {
        mgopt_eval_tensor_free(p, out[k]);
        out[k] = NULL;
      }
    r = mgopt__ox_late(&c, operands, noperands);
    if (r == MGOPT__OX_NO && row && why[0]) memcpy(c.why, why, sizeof why);
  }
  if (r == MGOPT__OX_NO) r = mgopt__ox_fail(&c, MGOPT_ERR_UNSUPPORTED, "cannot evaluate %s: %s", op->type, c.why);
  /* an omitted optional output gets an empty tensor; every other one must be made */
  for (k = 0; r == MGOPT__OX_OK && k < op->nouts; k++)
    if (!out[k]) {
      int64_t zero = 0;
      if (!(op->outs[k]->flags & MGOPT_VALUE_ABSENT))
        r = mgopt__ox_fail(&c, MGOPT_ERR_UNSUPPORTED, "cannot evaluate %s: output %d is not computed", op->type, (int)k);
      else if (!(out[k] = mgopt_eval_tensor_new(p, op->outs[k]->type.dtype != MGOPT_DT_UNKNOWN
                                                       ? (mgopt_dtype)op->outs[k]->type.dtype
                                                       : MGOPT_DT_FP32,
                                                   1, &zero)))
        r = mgopt__ox_fail(&c, MGOPT_ERR_NOMEM, "out of memory");
    }
done:
  if (r != MGOPT__OX_OK)
    for (k = 0; k < op->nouts; k++)
      if (out[k]) {
        mgopt_eval_tensor_free(p, out[k]);
        out[k] = NULL;
      }
  mgopt__heap_free(&p->alloc, c.in, bytes);
  if (r == MGOPT__OX_OK) return MGOPT_OK;
  return c.status != MGOPT_OK ? c.status : MGOPT_ERR_UNSUPPORTED;
}
/* src/passes/util.c — matching: where a value comes from and goes to, constant operands, scalar operands of fusion patterns, ending a fusion, elementwise chains. */

/* ---------------------------------------------------------------- uses and producers */

MGOPT__PRIVATE int mgopt__pu_is_func_output(const mgopt_value *v) {
  const mgopt_use *u;
  int32_t k;
  /* the block-output uses lead the list */
  for (u = v->uses, k = 0; u && k < v->nblock_uses; u = u->next, k++)
    if (!u->op && u->block && !u->block->parent_op) return 1;
  return 0;
}

MGOPT__PRIVATE int mgopt__pu_is_block_output(const mgopt_value *v) { return mgopt_value_is_block_output(v); }

MGOPT__PRIVATE int mgopt__pu_single_use(const mgopt_value *v) {
  return v->nuses == 1 && v->uses->op != NULL;
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_single_user(const mgopt_value *v) {
  return mgopt__pu_single_use(v) ? v->uses->op : NULL;
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_def_of(const mgopt_value *v, int32_t kind) {
  return (v && v->def && v->def->kind == kind) ? v->def : NULL;
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_ancestor_in(mgopt_op *op, const mgopt_block *b) {
  int guard = 0;
  while (op && op->parent != b) {
    if (!op->parent || !op->parent->parent_op || ++guard > 4096) return NULL;
    op = op->parent->parent_op;
  }
  return op;
}

/* ---------------------------------------------------------------- constant operands */

MGOPT__PRIVATE int mgopt__pu_const_all(const mgopt_value *v, double x) {
  const mgopt_tensor *t = mgopt_value_const(v);
  return t && t->numel > 0 && mgopt_tensor_all_equal_f64(t, x);
}

/* want as a one-element tensor of dtype dt holds it (round to nearest even);
   want itself for the other dtypes (tolerance alone decides). */
static double mgopt__pu_round_to(double want, mgopt_dtype dt) {
  switch (dt) {
  case MGOPT_DT_FP16: return (double)mgopt_f16_to_f32(mgopt_f32_to_f16((float)want));
  case MGOPT_DT_BF16: return (double)mgopt_bf16_to_f32(mgopt_f32_to_bf16((float)want));
  case MGOPT_DT_FP32: return (double)(float)want;
  default: return want;
  }
}

MGOPT__PRIVATE int mgopt__pu_scalar_near(const mgopt_value *v, double want, double tol, double *c) {
  const mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
  double x;
  if (!t || t->numel != 1) return 0;
  if (!mgopt_dtype_is_float((mgopt_dtype)t->dtype) && !mgopt_dtype_is_int((mgopt_dtype)t->dtype)) return 0;
  x = mgopt_tensor_get_f64(t, 0);
  if (c) *c = x;
  return fabs(x - want) < tol || x == mgopt__pu_round_to(want, (mgopt_dtype)t->dtype);
}

/* t (one element) broadcast against `other` leaves other's shape as it is */
static int mgopt__pu_keeps_shape(const mgopt_tensor *t, const mgopt_value *other) {
  return t->rank == 0 || (other->type.rank >= 0 && t->rank <= other->type.rank);
}

MGOPT__PRIVATE mgopt_value *mgopt__pu_scalar_operand(const mgopt_op *op, mgopt_value **other) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y");
  int side;
  if (!x || !y) return NULL;
  for (side = 0; side < 2; side++) {
    mgopt_value *c = side ? x : y, *o = side ? y : x;
    const mgopt_tensor *t = mgopt_value_const(c);
    if (side && !(mgopt_op_traits(op) & MGOPT_TRAIT_COMMUTATIVE)) break;
    if (t && t->numel == 1 && mgopt__pu_keeps_shape(t, o)) {
      *other = o;
      return c;
    }
  }
  return NULL;
}

MGOPT__PRIVATE mgopt_value *mgopt__pu_with_scalar(const mgopt_op *op, int32_t kind, double want, double tol) {
  mgopt_value *x, *y;
  int side;
  if (!op || op->kind != kind || op->nouts != 1) return NULL;
  x = mgopt_op_operand(op, "x");
  y = mgopt_op_operand(op, "y");
  if (!x || !y) return NULL;
  for (side = 0; side < 2; side++) {
    mgopt_value *c = side ? x : y, *o = side ? y : x;
    const mgopt_tensor *t = mgopt_value_const(c);
    if (side && !(mgopt_op_traits(op) & MGOPT_TRAIT_COMMUTATIVE)) break;
    if (t && mgopt__pu_keeps_shape(t, o) && mgopt__pu_scalar_near(c, want, tol, NULL)) return o;
  }
  return NULL;
}

static int mgopt__pu_fuse_end(mgopt_rewriter *rw, mgopt_op *const *made, int32_t nmade, mgopt_op *last,
                              mgopt_op *const *matched, int32_t nmatched, int keep_name) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_op *top = made[nmade - 1];
  int32_t i;
  int ok = top->nouts == 1 && last->nouts == 1;
  for (i = 0; i < nmade && ok; i++)
    ok = mgopt_op_infer(p, made[i], NULL) == MGOPT_OK && mgopt_program_target_accepts(p, made[i]);
  if (ok) ok = mgopt__pu_adopt_type(p, top->outs[0], last->outs[0]);
  if (!ok) {
    for (i = nmade - 1; i >= 0; i--) mgopt__pu_erase_with_consts(rw, made[i]);
    return 0;
  }
  if (keep_name) top->name = last->name ? last->name : top->outs[0]->name;
  mgopt__pu_replace_value(rw, last->outs[0], top->outs[0]);
  mgopt__pu_sync_op_name(top);
  mgopt__pu_erase_with_consts(rw, last);
  for (i = 0; i < nmatched; i++) mgopt__pu_erase_with_consts(rw, matched[i]);
  return 1;
}

MGOPT__PRIVATE int mgopt__pu_fuse_finish(mgopt_rewriter *rw, mgopt_op *const *made, int32_t nmade, mgopt_op *last,
                                         mgopt_op *const *matched, int32_t nmatched) {
  return mgopt__pu_fuse_end(rw, made, nmade, last, matched, nmatched, 0);
}

MGOPT__PRIVATE int mgopt__pu_fuse_finish_named(mgopt_rewriter *rw, mgopt_op *const *made, int32_t nmade,
                                               mgopt_op *last, mgopt_op *const *matched, int32_t nmatched) {
  return mgopt__pu_fuse_end(rw, made, nmade, last, matched, nmatched, 1);
}

/* ---------------------------------------------------------------- elementwise chains */

/* op is a pure registered elementwise op (unary, or binary whose other operand
   is a one-element constant of rank <= 1) that does not reorder elements or
   change rank: its one non-constant operand goes to *data. Such ops commute
   with transposes and reshapes of that operand. */
static int mgopt__pu_elementwise_hop(const mgopt_op *op, mgopt_value **data) {
  uint32_t tr;
  int32_t s, nvar = 0;
  mgopt_value *var = NULL;
  if (op->kind == MGOPT_OP_OPAQUE || op->nouts != 1 || op->nblocks) return 0;
  tr = mgopt_op_traits(op);
  if (!(tr & MGOPT_TRAIT_PURE) || !(tr & (MGOPT_TRAIT_UNARY | MGOPT_TRAIT_BINARY))) return 0;
  if (tr & MGOPT_TRAIT_LAYOUT_SENSITIVE) return 0;
  for (s = 0; s < op->nslots; s++) {
    int32_t k;
    for (k = 0; k < op->slots[s].n; k++) {
      mgopt_value *v = op->slots[s].uses[k].value;
      const mgopt_tensor *t;
      if (!v) continue;
      t = mgopt_value_const(v);
      if (t && t->numel == 1 && t->rank <= 1 && (tr & MGOPT_TRAIT_BINARY)) continue;
      if (t && (tr & MGOPT_TRAIT_UNARY) && s > 0) continue;
      var = v;
      nvar++;
    }
  }
  if (nvar != 1) return 0;
  if (!mgopt_type_equal(&var->type, &op->outs[0]->type) &&
      (var->type.rank != op->outs[0]->type.rank || var->type.rank < 0))
    return 0;
  *data = var;
  return 1;
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_elementwise_chain(mgopt_value *v, int32_t end_kind, mgopt_op **chain, int32_t *n) {
  *n = 0;
  for (;;) {
    mgopt_value *data;
    mgopt_op *cur;
    if (mgopt__pu_is_block_output(v)) return NULL;
    cur = mgopt__pu_single_user(v);
    if (!cur) return NULL;
    if (cur->kind == end_kind) return mgopt_op_operand(cur, "x") == v ? cur : NULL;
    if (*n >= MGOPT__PU_MAX_CHAIN || !mgopt__pu_elementwise_hop(cur, &data) || data != v) return NULL;
    chain[(*n)++] = cur;
    v = cur->outs[0];
  }
}

MGOPT__PRIVATE mgopt_status mgopt__pu_each_state_write(mgopt_pass_ctx *ctx, int (*prepare)(mgopt_function *, void *),
                                                      int (*visit)(mgopt_op *, void *), void *ud) {
  mgopt_program *p = ctx->program;
  mgopt_op **ups = NULL;
  int64_t cap = 0, n, i;
  int32_t f, kind = MGOPT_OP_coreml_update_state;
  mgopt_status st = MGOPT_OK;
  for (f = 0; f < mgopt_program_function_count(p) && !st; f++) {
    mgopt_function *fn = mgopt_program_function_at(p, f);
    if (mgopt__index_kind_count(fn, kind) == 0) continue;
    n = mgopt__index_collect(fn, &kind, 1, &ups, &cap);
    if (n < 0 || (prepare && !prepare(fn, ud))) {
      st = mgopt__oom(p);
      break;
    }
    for (i = 0; i < n; i++) ctx->rewrites += visit(ups[i], ud);
  }
  if (ups) mgopt__heap_free(&p->alloc, ups, sizeof *ups * (size_t)cap);
  return st;
}

MGOPT__PRIVATE int mgopt__pu_onnx_shape_range(const mgopt_op *op, int64_t *start, int64_t *end) {
  const mgopt_value *x = mgopt_op_operand(op, "in0");
  const mgopt_attr *as = mgopt_op_attr(op, "start"), *ae = mgopt_op_attr(op, "end");
  int64_t r, b, e;
  if (!x || op->nouts != 1 || op->nblocks || mgopt_op_operand_count(op) != 1 || x->type.kind != MGOPT_TYPE_TENSOR ||
      x->type.rank < 0)
    return 0;
  if ((as && as->kind != MGOPT_ATTR_INT) || (ae && ae->kind != MGOPT_ATTR_INT)) return 0;
  r = x->type.rank;
  b = as ? as->u.i : 0;
  e = ae ? ae->u.i : r;
  if (b < 0) b += r;
  if (e < 0) e += r;
  *start = b < 0 ? 0 : b > r ? r : b;
  *end = e < 0 ? 0 : e > r ? r : e;
  if (*end < *start) *end = *start;
  return 1;
}
/* src/passes/replace.c — replacing values: the typed replacement rule, pair cancellation around a chain, names that must survive, erasing what a rewrite left dead. */

/* ---------------------------------------------------------------- replacing a value */

MGOPT__PRIVATE void mgopt__pu_fill_type(mgopt_program *p, mgopt_op *op, int32_t i, const mgopt_type *t) {
  mgopt_type *o = &op->outs[i]->type;
  if (o->kind == MGOPT_TYPE_TENSOR && o->dtype == MGOPT_DT_UNKNOWN && o->rank < 0)
    (void)mgopt__type_copy(p, o, t);
}

MGOPT__PRIVATE void mgopt__pu_replace_value(mgopt_rewriter *rw, mgopt_value *from, mgopt_value *to) {
  const char *old = to->name;
  mgopt_rw_replace_value(rw, from, to);
  if (to->def && to->name != old && to->def->name == old && to->def->nouts == 1) to->def->name = to->name;
}

MGOPT__PRIVATE mgopt_value *mgopt__pu_replace_keep_io(mgopt_rewriter *rw, mgopt_value *from, mgopt_value *to) {
  mgopt_program *p = mgopt_rw_program(rw);
  if (from == to) return to;
  if (mgopt__pu_is_func_output(from) && (!to->def || mgopt__pu_is_func_output(to))) {
    static const char *const slot[1] = {"x"};
    mgopt_op *id = mgopt_rw_create(rw, from->def, "identity", from->name, 1, slot, &to, 1);
    if (!id) return NULL;
    if (mgopt_op_infer(p, id, NULL)) return NULL;
    mgopt__pu_fill_type(p, id, 0, &from->type);
    to = id->outs[0];
  }
  mgopt__pu_replace_value(rw, from, to);
  return to;
}

/* ---------------------------------------------------------------- typed replacements */

MGOPT__PRIVATE int mgopt__pu_loop_args_fit(const mgopt_op *op) {
  int32_t si = mgopt_op_slot_index(op, "loop_vars"), nv, i, k;
  if (op->kind != MGOPT_OP_while_loop) return 1;
  nv = si >= 0 ? op->slots[si].n : 0;
  for (i = 0; i < op->nblocks; i++)
    for (k = 0; k < nv && k < op->blocks[i]->nargs; k++)
      if (op->slots[si].uses[k].value &&
          mgopt__type_clash(&op->blocks[i]->args[k]->type, &op->slots[si].uses[k].value->type, 0))
        return 0;
  return 1;
}

MGOPT__PRIVATE mgopt_type *mgopt__pu_infer_outputs(mgopt_program *p, const mgopt_op *op, mgopt_type *tmp,
                                                   mgopt_status *st) {
  mgopt_type *inf;
  mgopt_diag d;
  mgopt_diag_clear(&d);
  *st = mgopt__op_infer_types(p, op, tmp, 8, &inf, &d);
  if (*st) {
    /* no memory for the types (d untouched), or the inference's own failure */
    *st = (*st == MGOPT_ERR_NOMEM && d.status == MGOPT_OK) || d.status == MGOPT_ERR_NOMEM ? MGOPT_ERR_NOMEM
                                                                                        : MGOPT_ERR_TYPE;
    return NULL;
  }
  return inf;
}

MGOPT__PRIVATE int mgopt__pu_infer_fits(mgopt_program *p, const mgopt_op *op) {
  mgopt_type tmp[8], *inf;
  mgopt_status st;
  int32_t i;
  if (!mgopt__pu_loop_args_fit(op)) return 0;
  inf = mgopt__pu_infer_outputs(p, op, tmp, &st);
  if (!inf) return st == MGOPT_OK; /* no inference: nothing to contradict */
  for (i = 0; i < op->nouts; i++)
    if (mgopt__type_clash(&op->outs[i]->type, &inf[i], 1)) return 0;
  return 1;
}

MGOPT__PRIVATE int mgopt__pu_inferred_type(mgopt_program *p, const mgopt_op *op, int32_t i, mgopt_type *out) {
  mgopt_type tmp[8], *inf;
  mgopt_status st;
  if (i < 0 || i >= op->nouts) return 0;
  inf = mgopt__pu_infer_outputs(p, op, tmp, &st);
  if (!inf) return 0;
  *out = inf[i];
  return 1;
}

/* Every op reading `from` (or owning a nested block that outputs it: cond
   and while_loop infer from their blocks), except `skip`, type checks with
   `from` typed `t`; with `forgive`, a reader that does not type check as it
   is does not count (the retyping did not break it). */
static int mgopt__pu_readers_accept(mgopt_program *p, mgopt_value *from, const mgopt_type *t, const mgopt_op *skip,
                                    int forgive) {
  mgopt_type saved = from->type;
  const mgopt_use *u;
  int ok = 1;
  for (u = from->uses; u && ok; u = u->next) {
    const mgopt_op *user = u->op ? u->op : (u->block ? u->block->parent_op : NULL);
    if (!user || user == skip) continue;
    from->type = *t;
    ok = mgopt__pu_infer_fits(p, user);
    from->type = saved;
    if (!ok && forgive) ok = !mgopt__pu_infer_fits(p, user);
  }
  return ok;
}

MGOPT__PRIVATE int mgopt__pu_uses_accept(mgopt_program *p, mgopt_value *from, const mgopt_type *t, const mgopt_op *skip) {
  return mgopt_type_equal(&from->type, t) || mgopt__pu_readers_accept(p, from, t, skip, 0);
}

/* The one rule for every replacement of `from` (see passes_internal.h). A
   function body's outputs are its signature (main's are the model's declared
   outputs, a called function's are what `call` sites infer from), so there
   only equal types pass, or any type where nothing was declared (dtype and
   rank unknown: a program built through the API without inference). Anywhere
   else the verifier is the arbiter: each reader must still type check with
   `from` typed `t`. Readers' own outputs keep their declared types, so
   nothing further downstream can change. A reader that does not type check
   as it is (a program built through the API without inference) is not held
   against the replacement: it did not break it. `skip` is an op that will
   not read the replacement (the op that produces it). */
static int mgopt__pu_replace_fits_as(mgopt_program *p, mgopt_value *from, const mgopt_type *t, const mgopt_op *skip) {
  const mgopt_type *d = &from->type;
  if (mgopt_type_equal(d, t)) return 1;
  if (mgopt__pu_is_func_output(from) && !(d->kind == MGOPT_TYPE_TENSOR && d->dtype == MGOPT_DT_UNKNOWN && d->rank < 0))
    return 0;
  return mgopt__pu_readers_accept(p, from, t, skip, 1);
}

MGOPT__PRIVATE int mgopt__pu_replace_fits(mgopt_program *p, mgopt_value *from, const mgopt_value *to) {
  if (from == to) return 1;
  return mgopt__pu_replace_fits_as(p, from, &to->type, to->def);
}

MGOPT__PRIVATE int mgopt__pu_replace_static_fits(mgopt_program *p, mgopt_value *from, mgopt_dtype dt, int32_t rank,
                                                const int64_t *shape) {
  mgopt_dim dims[MGOPT_MAX_RANK];
  mgopt_type t;
  int32_t k;
  if (rank < 0 || rank > MGOPT_MAX_RANK) return 0;
  memset(&t, 0, sizeof t);
  t.kind = MGOPT_TYPE_TENSOR;
  t.dtype = (uint8_t)dt;
  t.rank = rank;
  t.dims = rank ? dims : NULL;
  for (k = 0; k < rank; k++) dims[k] = mgopt_dim_static(shape[k]);
  return mgopt__pu_replace_fits_as(p, from, &t, NULL);
}

MGOPT__PRIVATE int mgopt__pu_adopt_type(mgopt_program *p, mgopt_value *to, mgopt_value *from) {
  if (mgopt_type_equal(&to->type, &from->type)) return 1;
  if (to->type.kind == from->type.kind &&
      (from->type.kind != MGOPT_TYPE_TENSOR || from->type.dtype != MGOPT_DT_UNKNOWN || to->type.dtype == MGOPT_DT_UNKNOWN) &&
      !mgopt__type_clash(&from->type, &to->type, 1))
    return mgopt__type_copy(p, &to->type, &from->type) == MGOPT_OK;
  return mgopt__pu_replace_fits(p, from, to);
}

MGOPT__PRIVATE int mgopt__pu_rebase_chain(mgopt_rewriter *rw, mgopt_op *const *chain, int32_t n, mgopt_value *in,
                                          mgopt_value *x, mgopt_value *from) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_type saved[MGOPT__PU_MAX_CHAIN];
  const char *slot = NULL;
  int32_t s, k;
  int ok = 1;
  if (n == 0) return mgopt__pu_replace_fits(p, from, x);
  if (n > MGOPT__PU_MAX_CHAIN) return 0;
  for (s = 0; s < chain[0]->nslots && !slot; s++)
    if (chain[0]->slots[s].n == 1 && chain[0]->slots[s].uses[0].value == in) slot = chain[0]->slots[s].name;
  if (!slot) return 0;
  /* a trial behind the rewriter's back: undone without a trace when it fails
     (queueing ops for a change that did not happen would run the pattern
     again and again); made again through the rewriter when it holds */
  for (k = 0; k < n; k++) saved[k] = chain[k]->outs[0]->type;
  if (mgopt_op_set_operand(chain[0], slot, x) != MGOPT_OK) return 0;
  for (k = 0; k < n && ok; k++) ok = mgopt_op_infer(p, chain[k], NULL) == MGOPT_OK;
  if (ok) ok = mgopt__pu_adopt_type(p, chain[n - 1]->outs[0], from);
  (void)mgopt_op_set_operand(chain[0], slot, in);
  if (!ok) {
    for (k = 0; k < n; k++) chain[k]->outs[0]->type = saved[k];
    return 0;
  }
  mgopt_rw_set_operand(rw, chain[0], slot, x);
  for (k = 0; k < n; k++) mgopt_rw_modified(rw, chain[k]);
  return 1;
}

MGOPT__PRIVATE int mgopt__pu_cancel_pair(mgopt_rewriter *rw, mgopt_op *first, mgopt_value *x, mgopt_op *const *chain,
                                         int32_t n, mgopt_op *end) {
  mgopt_value *last = n ? chain[n - 1]->outs[0] : x;
  if (mgopt__pu_is_func_output(end->outs[0]) && (!last->def || mgopt__pu_is_func_output(last))) return 0;
  /* the chain reads x; its last op keeps end's declared type when it holds */
  if (!mgopt__pu_rebase_chain(rw, chain, n, first->outs[0], x, end->outs[0])) return 0;
  mgopt_rw_replace_value(rw, end->outs[0], last);
  if (n) mgopt__pu_sync_op_name(chain[n - 1]);
  mgopt_rw_erase(rw, end);
  mgopt__pu_erase_if_dead(rw, first);
  return 1;
}

/* ---------------------------------------------------------------- names */

MGOPT__PRIVATE const char *mgopt__pu_name2(mgopt_program *p, const char *a, const char *b) {
  char buf[240];
  size_t la = a ? strlen(a) : 0, lb = b ? strlen(b) : 0;
  if (la > 160) la = 160;
  if (lb > 60) lb = 60;
  if (la) memcpy(buf, a, la);
  if (lb) memcpy(buf + la, b, lb);
  buf[la + lb] = 0;
  if (!la && !lb) return mgopt_program_fresh_name(p, "v");
  if (!mgopt__intern_lookup(p, buf, la + lb)) return mgopt_program_intern(p, buf, la + lb);
  return mgopt_program_fresh_name(p, buf);
}

MGOPT__PRIVATE const char *mgopt__pu_value_name(const mgopt_value *v) {
  return (v && v->name) ? v->name : "v";
}

MGOPT__PRIVATE void mgopt__pu_rename(mgopt_value *v, const char *name) {
  const char *old = v->name;
  mgopt_value_set_name(v, name);
  if (v->def && v->def->nouts == 1 && (!v->def->name || v->def->name == old)) v->def->name = v->name;
}

MGOPT__PRIVATE void mgopt__pu_sync_op_name(mgopt_op *op) {
  if (op && op->nouts == 1 && op->outs[0]->name && mgopt__pu_is_func_output(op->outs[0])) op->name = op->outs[0]->name;
}

/* ---------------------------------------------------------------- erasing */

MGOPT__PRIVATE void mgopt__pu_erase_if_dead(mgopt_rewriter *rw, mgopt_op *op) {
  if (op && !(op->flags & MGOPT_OP_ERASED) && mgopt__op_is_dead(op)) mgopt_rw_erase(rw, op);
}

MGOPT__PRIVATE void mgopt__pu_erase_with_consts(mgopt_rewriter *rw, mgopt_op *op) {
  mgopt_op *consts[8];
  int32_t s, k, n = 0;
  if (!op || (op->flags & MGOPT_OP_ERASED) || !mgopt__op_is_dead(op)) return;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n && n < 8; k++) {
      mgopt_value *v = op->slots[s].uses[k].value;
      if (v && v->def && v->def->kind == MGOPT_OP_const) consts[n++] = v->def;
    }
  mgopt_rw_erase(rw, op);
  for (k = 0; k < n; k++) mgopt__pu_erase_if_dead(rw, consts[k]);
}

MGOPT__PRIVATE void mgopt__pu_op_remove_output(mgopt_op *op, int32_t i) {
  int32_t k;
  MGOPT_ASSERT(i >= 0 && i < op->nouts && op->outs[i]->nuses == 0);
  for (k = i; k + 1 < op->nouts; k++) {
    op->outs[k] = op->outs[k + 1];
    op->outs[k]->index = k;
  }
  op->nouts--;
}
/* src/passes/attrs.c — attributes and parameters: identity of attribute sets, integer-list parameters, a cast's target dtype. */

/* ---------------------------------------------------------------- attribute identity */

MGOPT__PRIVATE uint64_t mgopt__pu_mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

/* Content hash of an attribute, name included. */
MGOPT__PRIVATE uint64_t mgopt__pu_attr_hash(const mgopt_attr *a) {
  uint64_t h = mgopt__hash_bytes(a->name, strlen(a->name), MGOPT__HASH_SEED);
  int64_t k;
  h = mgopt__pu_mix(h, a->kind);
  switch ((mgopt_attr_kind)a->kind) {
    case MGOPT_ATTR_BOOL:
    case MGOPT_ATTR_INT: return mgopt__pu_mix(h, (uint64_t)a->u.i);
    case MGOPT_ATTR_FLOAT: return mgopt__hash_bytes(&a->u.f, sizeof a->u.f, h);
    case MGOPT_ATTR_STRING: return mgopt__hash_bytes(a->u.s.ptr, a->u.s.len, h);
    case MGOPT_ATTR_BOOLS:
    case MGOPT_ATTR_INTS: return mgopt__hash_bytes(a->u.ints, sizeof(int64_t) * (size_t)a->n, h);
    case MGOPT_ATTR_FLOATS: return mgopt__hash_bytes(a->u.floats, sizeof(double) * (size_t)a->n, h);
    case MGOPT_ATTR_STRINGS:
      for (k = 0; k < a->n; k++) h = mgopt__hash_bytes(a->u.strs[k].ptr, a->u.strs[k].len, mgopt__pu_mix(h, 1));
      return h;
    case MGOPT_ATTR_TENSOR: return a->u.t ? mgopt__pu_mix(h, mgopt_tensor_hash(a->u.t)) : h;
    case MGOPT_ATTR_BYTES: return mgopt__hash_bytes(a->u.bytes, (size_t)a->n, mgopt__pu_mix(h, (uint64_t)a->tag));
    default: return h;
  }
}

/* Same kind and value (floats bitwise); names are not compared. */
MGOPT__PRIVATE int mgopt__pu_attr_equal(const mgopt_attr *a, const mgopt_attr *b) {
  int64_t k;
  if (a->kind != b->kind || a->n != b->n) return 0;
  switch ((mgopt_attr_kind)a->kind) {
    case MGOPT_ATTR_BOOL:
    case MGOPT_ATTR_INT: return a->u.i == b->u.i;
    case MGOPT_ATTR_FLOAT: return memcmp(&a->u.f, &b->u.f, sizeof a->u.f) == 0;
    case MGOPT_ATTR_STRING: return a->u.s.len == b->u.s.len && memcmp(a->u.s.ptr, b->u.s.ptr, a->u.s.len) == 0;
    case MGOPT_ATTR_BOOLS:
    case MGOPT_ATTR_INTS: return a->n == 0 || memcmp(a->u.ints, b->u.ints, sizeof(int64_t) * (size_t)a->n) == 0;
    case MGOPT_ATTR_FLOATS: return a->n == 0 || memcmp(a->u.floats, b->u.floats, sizeof(double) * (size_t)a->n) == 0;
    case MGOPT_ATTR_STRINGS:
      for (k = 0; k < a->n; k++)
        if (a->u.strs[k].len != b->u.strs[k].len ||
            memcmp(a->u.strs[k].ptr, b->u.strs[k].ptr, a->u.strs[k].len) != 0)
          return 0;
      return 1;
    case MGOPT_ATTR_TENSOR: return a->u.t && b->u.t && mgopt_tensor_equal(a->u.t, b->u.t);
    case MGOPT_ATTR_BYTES: return a->tag == b->tag && (a->n == 0 || memcmp(a->u.bytes, b->u.bytes, (size_t)a->n) == 0);
    default: return 1;
  }
}

/* An op's attributes as a set: a hash that ignores their order, and equality
   (same count, each of a's present in b with an equal value). */
MGOPT__PRIVATE uint64_t mgopt__pu_attrs_hash(const mgopt_op *op) {
  uint64_t sum = 0;
  int32_t i;
  for (i = 0; i < op->nattrs; i++) sum += mgopt__pu_attr_hash(&op->attrs[i]);
  return sum;
}

MGOPT__PRIVATE int mgopt__pu_attrs_equal(const mgopt_op *a, const mgopt_op *b) {
  int32_t i;
  if (a->nattrs != b->nattrs) return 0;
  for (i = 0; i < a->nattrs; i++) {
    const mgopt_attr *o = mgopt_op_attr(b, a->attrs[i].name);
    if (!o || !mgopt__pu_attr_equal(&a->attrs[i], o)) return 0;
  }
  return 1;
}

/* ---------------------------------------------------------------- parameters */

MGOPT__PRIVATE int mgopt__pu_set_ints_param(mgopt_rewriter *rw, mgopt_op *op, const mgopt_op *like, const char *name,
                                            const int64_t *v, int64_t n) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *old = like ? mgopt_op_operand(like, name) : NULL;
  mgopt_tensor *t;
  mgopt_value *c;
  mgopt_dtype dt = MGOPT_DT_INT32;
  int64_t k;
  if (!old) {
    if (mgopt_op_slot_index(op, name) >= 0) mgopt_rw_set_operand(rw, op, name, NULL);
    return mgopt_op_set_ints(op, name, v, n) == MGOPT_OK;
  }
  if (mgopt_dtype_is_int((mgopt_dtype)old->type.dtype)) dt = (mgopt_dtype)old->type.dtype;
  t = mgopt_tensor_new(p, dt, 1, &n);
  if (!t) return 0;
  for (k = 0; k < n; k++) mgopt_tensor_set_i64(t, k, v[k]);
  c = mgopt_rw_const(rw, op, mgopt_program_fresh_name(p, name), t);
  if (!c) return 0;
  mgopt_op_remove_attr(op, name);
  old = mgopt_op_operand(op, name);
  mgopt_rw_set_operand(rw, op, name, c);
  if (old) mgopt__pu_erase_if_dead(rw, old->def);
  return 1;
}

MGOPT__PRIVATE mgopt_dtype mgopt__pu_cast_dtype(const mgopt_op *cast) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(cast, "dtype", &n);
  if (!s) return MGOPT_DT_UNKNOWN;
  return mgopt_dtype_from_name(s, n);
}
/* src/passes/shapes.c — shapes and broadcasting, axes, and the layout of constant data. */

/* ---------------------------------------------------------------- shapes and broadcasting */

MGOPT__PRIVATE int mgopt__pu_static_shape(const mgopt_type *t, int64_t *shape, int32_t cap) {
  int32_t i;
  if (t->kind != MGOPT_TYPE_TENSOR || t->rank < 0 || t->rank > cap) return 0;
  for (i = 0; i < t->rank; i++) {
    if (!mgopt_dim_is_static(t->dims[i])) return 0;
    shape[i] = t->dims[i].v;
  }
  return 1;
}

MGOPT__PRIVATE int mgopt__pu_same_known_shape(const mgopt_value *a, const mgopt_value *b) {
  const mgopt_type *s = &a->type, *t = &b->type;
  int32_t i;
  if (s->kind != MGOPT_TYPE_TENSOR || t->kind != MGOPT_TYPE_TENSOR) return 0;
  if (s->dtype == MGOPT_DT_UNKNOWN || s->dtype != t->dtype) return 0;
  if (s->rank < 0 || s->rank != t->rank) return 0;
  for (i = 0; i < s->rank; i++) {
    mgopt_dim x = s->dims[i], y = t->dims[i];
    if (x.sym || y.sym) {
      if (x.sym != y.sym) return 0;
    } else if (x.v < 0 || x.v != y.v) {
      return 0;
    }
  }
  return 1;
}

MGOPT__PRIVATE int64_t mgopt__pu_norm_axis(int64_t axis, int64_t rank) {
  if (rank < 0) return -1;
  if (axis < 0) axis += rank;
  return (axis >= 0 && axis < rank) ? axis : -1;
}

MGOPT__PRIVATE int mgopt__pu_broadcast(const int64_t *a, int32_t ra, const int64_t *b, int32_t rb, int64_t *out,
                                       int32_t *rout) {
  int32_t r = ra > rb ? ra : rb, i;
  if (r > MGOPT_MAX_RANK) return 0;
  for (i = 0; i < r; i++) {
    int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
    int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
    if (da != db && da != 1 && db != 1) return 0;
    out[i] = da == 1 ? db : da;
  }
  *rout = r;
  return 1;
}

MGOPT__PRIVATE int64_t mgopt__pu_bcast_index(const int64_t *out, int32_t rout, const int64_t *in, int32_t rin,
                                             int64_t flat) {
  int64_t idx = 0, stride = 1;
  int32_t i;
  for (i = rout - 1; i >= 0; i--) {
    int64_t c = flat % out[i];
    int32_t k = i - (rout - rin);
    flat /= out[i];
    if (k < 0) continue;
    if (in[k] != 1) idx += c * stride;
    stride *= in[k];
  }
  return idx;
}

/* ---------------------------------------------------------------- constant data */

MGOPT__PRIVATE mgopt_tensor *mgopt__pu_const_i32_1d(mgopt_program *p, const int64_t *v, int32_t n) {
  int64_t shape[1];
  mgopt_tensor *t;
  int32_t i;
  shape[0] = n;
  t = mgopt_tensor_new(p, MGOPT_DT_INT32, 1, shape);
  if (!t) return NULL;
  for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, v[i]);
  return t;
}

MGOPT__PRIVATE mgopt_tensor *mgopt__pu_transpose_data(mgopt_program *p, mgopt_tensor *t, const int64_t *in_shape,
                                                      int32_t rank, const int64_t *perm) {
  int64_t shape[MGOPT_MAX_RANK], stride[MGOPT_MAX_RANK], st[MGOPT_MAX_RANK], acc = 1;
  int bits = mgopt_dtype_bits((mgopt_dtype)t->dtype);
  int32_t i;
  mgopt_tensor *nt;
  const void *src;
  if (rank < 0 || rank > MGOPT_MAX_RANK || t->dtype == MGOPT_DT_STRING || bits < 8 || bits % 8)
    return NULL;
  for (i = rank - 1; i >= 0; i--) {
    st[i] = acc;
    acc *= in_shape[i];
  }
  for (i = 0; i < rank; i++) {
    shape[i] = in_shape[perm[i]];
    stride[i] = st[perm[i]];
  }
  src = mgopt_tensor_data(p, t);
  nt = src ? mgopt__tensor_new_data(p, (mgopt_dtype)t->dtype, rank, shape, 0) : NULL; /* all written below */
  if (!nt) return NULL;
  mgopt__k_strided(nt->data, src, (size_t)(bits / 8), rank, shape, stride, 0);
  return nt;
}

/* 1 when tensor type t has an unknown dtype, rank or dim (a symbol counts as known). */
MGOPT__PRIVATE int mgopt__pu_type_unknown(const mgopt_type *t) {
  int32_t i;
  if (t->kind != MGOPT_TYPE_TENSOR) return 0;
  if (t->dtype == MGOPT_DT_UNKNOWN || t->rank < 0) return 1;
  for (i = 0; i < t->rank; i++)
    if (!t->dims[i].sym && t->dims[i].v < 0) return 1;
  return 0;
}

/* Fills the unknown parts of cur (dtype, rank, dims) from inf; 1 when it
   changed something. cur's dims must be its own copy (mgopt__type_copy). */
MGOPT__PRIVATE int mgopt__pu_type_refine(mgopt_program *p, mgopt_type *cur, const mgopt_type *inf) {
  int32_t i;
  int changed = 0;
  if (inf->kind != MGOPT_TYPE_TENSOR) return 0;
  if (cur->dtype == MGOPT_DT_UNKNOWN && inf->dtype != MGOPT_DT_UNKNOWN) {
    cur->dtype = inf->dtype;
    changed = 1;
  }
  if (cur->rank < 0) {
    if (inf->rank >= 0) {
      uint8_t dt = cur->dtype;
      if (mgopt__type_copy(p, cur, inf)) return 0;
      cur->dtype = dt;
      changed = 1;
    }
    return changed;
  }
  if (inf->rank != cur->rank) return changed;
  for (i = 0; i < cur->rank; i++)
    if (!cur->dims[i].sym && cur->dims[i].v < 0 && (inf->dims[i].sym || inf->dims[i].v >= 0)) {
      cur->dims[i] = inf->dims[i];
      changed = 1;
    }
  return changed;
}
/* src/passes/precision.c — the precision engine of add_fp16_cast and add_int16_cast: converts operands, re-creates ops, casts results back. */

/* Precision rewriting shared by add_fp16_cast and add_int16_cast. A cache maps
   (block, value, dtype) to the converted value, so consumers in one block
   share one conversion. */
typedef struct mgopt__pu_ckey {
  const mgopt_block *b;
  const mgopt_value *v;
  int32_t dt;
  mgopt_value *cast;
} mgopt__pu_ckey;

typedef struct mgopt__pu_prec {
  mgopt_pass_ctx *ctx;
  mgopt__map cache;      /* hash of (block, value, dtype) -> 1 + index in keys (a multimap) */
  mgopt__pu_ckey *keys;
  int64_t nkeys, keys_cap;
  const char *suffix;
  mgopt__pu_prec_fn decide;
  mgopt__pu_conv_fn conv;
  void *ud;
  int oom;
} mgopt__pu_prec;

static uint64_t mgopt__pu_ckey_hash(const mgopt_block *b, const mgopt_value *v, int32_t dt) {
  uintptr_t k[3];
  k[0] = (uintptr_t)b;
  k[1] = (uintptr_t)v;
  k[2] = (uintptr_t)(uint32_t)dt;
  return mgopt__map_hash_key(mgopt__hash_bytes(k, sizeof k, MGOPT__HASH_SEED));
}

/* The cache entry of (b, v, dt), or NULL. */
static mgopt__pu_ckey *mgopt__pu_cache_find(const mgopt__pu_prec *pr, const mgopt_block *b, const mgopt_value *v,
                                            int32_t dt) {
  const mgopt__map_slot *sl;
  for (sl = mgopt__map_find(&pr->cache, mgopt__pu_ckey_hash(b, v, dt)); sl; sl = mgopt__map_next(&pr->cache, sl)) {
    mgopt__pu_ckey *e = &pr->keys[sl->v.i - 1];
    if (e->b == b && e->v == v && e->dt == dt) return e;
  }
  return NULL;
}

static mgopt_value *mgopt__pu_cache_get(const mgopt__pu_prec *pr, const mgopt_block *b, const mgopt_value *v,
                                        int32_t dt) {
  const mgopt__pu_ckey *e = mgopt__pu_cache_find(pr, b, v, dt);
  return e ? e->cast : NULL;
}

static void mgopt__pu_cache_put(mgopt__pu_prec *pr, const mgopt_block *b, const mgopt_value *v, int32_t dt,
                                mgopt_value *cast) {
  mgopt__pu_ckey *e = mgopt__pu_cache_find(pr, b, v, dt);
  mgopt__map_slot *sl;
  void *arr = pr->keys;
  if (!e) {
    if (!mgopt__grow(&pr->ctx->program->alloc, &arr, &pr->keys_cap, pr->nkeys + 1, sizeof *pr->keys) ||
        !(sl = mgopt__map_add(&pr->cache, mgopt__pu_ckey_hash(b, v, dt)))) {
      pr->keys = (mgopt__pu_ckey *)arr;
      pr->oom = 1;
      return;
    }
    pr->keys = (mgopt__pu_ckey *)arr;
    e = &pr->keys[pr->nkeys++];
    sl->v.i = pr->nkeys;
    e->b = b;
    e->v = v;
    e->dt = dt;
  }
  e->cast = cast;
}

/* Forgets an entry: it stays in the map but never matches again. */
static void mgopt__pu_cache_drop(mgopt__pu_prec *pr, const mgopt_block *b, const mgopt_value *v, int32_t dt) {
  mgopt__pu_ckey *e = mgopt__pu_cache_find(pr, b, v, dt);
  if (e) {
    e->b = NULL;
    e->dt = -1;
  }
}

MGOPT__PRIVATE mgopt_value *mgopt__pu_cast_value(mgopt_program *p, mgopt_op *pos, mgopt_value *v, mgopt_dtype dt,
                                                 const char *name) {
  static const char *const slot[1] = {"x"};
  mgopt_op *c = mgopt_build_op(p, pos->parent, pos, "cast", name, 1, slot, &v, 1);
  if (!c || mgopt_op_set_string(c, "dtype", mgopt_dtype_name(dt))) return NULL;
  if (mgopt_op_infer(p, c, NULL) != MGOPT_OK || c->outs[0]->type.dtype != dt) {
    /* no inference for cast: the type is x's with the new dtype */
    if (mgopt__type_copy(p, &c->outs[0]->type, &v->type)) return NULL;
    c->outs[0]->type.dtype = (uint8_t)dt;
  }
  return c->outs[0];
}

MGOPT__PRIVATE const char *mgopt__pu_converted_name(mgopt_program *p, const mgopt_value *v, mgopt_dtype dt) {
  char buf[300];
  snprintf(buf, sizeof buf, "%.200s_to_%s", mgopt__pu_value_name(v), mgopt_dtype_name(dt));
  return mgopt__pu_name2(p, buf, NULL);
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_clone_op(mgopt_program *p, const mgopt_op *op) {
  mgopt_op *n = mgopt_op_new(p, op->type, op->nouts, 0);
  int32_t s, i;
  if (!n) return NULL;
  for (s = 0; s < op->nslots; s++) {
    const mgopt_slot *sl = &op->slots[s];
    mgopt_value *vals[MGOPT__PU_PREC_MAXIN];
    int32_t k;
    if (sl->n > MGOPT__PU_PREC_MAXIN) return NULL;
    for (k = 0; k < sl->n; k++) vals[k] = sl->uses[k].value;
    if (sl->is_list) {
      if (mgopt_op_set_operand_list(n, sl->name, vals, sl->n)) return NULL;
    } else if (mgopt_op_set_operand(n, sl->name, sl->n ? vals[0] : NULL)) {
      return NULL;
    }
  }
  for (i = 0; i < op->nattrs; i++)
    if (mgopt_op_set_attr(n, &op->attrs[i])) return NULL;
  return n;
}

/* Rewrites one op; 1 changed, 0 not, -1 out of memory. */
static int mgopt__pu_prec_op(mgopt__pu_prec *pr, mgopt_op *op) {
  mgopt_program *p = pr->ctx->program;
  mgopt_block *b = op->parent;
  mgopt_op *nop;
  mgopt_value *newv[MGOPT__PU_PREC_MAXIN], *created[MGOPT__PU_PREC_MAXIN], *cval[MGOPT__PU_PREC_MAXIN];
  int32_t cdt[MGOPT__PU_PREC_MAXIN];
  int32_t s, k, i, n = 0, ncreated = 0, nchanged = 0;
  if (mgopt_op_operand_count(op) > MGOPT__PU_PREC_MAXIN || op->nouts < 1) return 0;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      mgopt_value *v = op->slots[s].uses[k].value, *rep = NULL;
      int32_t dt = MGOPT_DT_UNKNOWN;
      int r = v ? pr->decide(op, s, k, v, &dt, &rep, pr->ud) : 0;
      if (r < 0) {
        nchanged = 0;
        goto revert; /* the op must stay as it is */
      }
      newv[n] = v;
      if (r > 0) {
        mgopt_value *c = rep ? rep : mgopt__pu_cache_get(pr, b, v, dt);
        if (!c) {
          c = pr->conv(p, op, v, dt, pr->ud);
          if (!c) return -1;
          mgopt__pu_cache_put(pr, b, v, dt, c);
          cdt[ncreated] = dt;
          cval[ncreated] = v;
          created[ncreated++] = c;
        }
        newv[n] = c;
        nchanged++;
      }
      n++;
    }
  if (!nchanged) return 0;
  nop = mgopt__pu_clone_op(p, op);
  if (!nop) return -1;
  n = 0;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++, n++)
      if (newv[n] != op->slots[s].uses[k].value) mgopt_op_set_operand_at(nop, s, k, newv[n]);
  for (i = 0; i < op->nouts; i++) {
    char buf[300];
    snprintf(buf, sizeof buf, "%.200s%s", mgopt__pu_value_name(op->outs[i]), pr->suffix);
    mgopt_value_set_name(nop->outs[i], mgopt__pu_name2(p, buf, NULL));
  }
  if (op->name) {
    char buf[300];
    snprintf(buf, sizeof buf, "%.200s%s", op->name, pr->suffix);
    mgopt_op_set_name(nop, nop->nouts == 1 ? nop->outs[0]->name : buf);
  }
  mgopt_op_insert_before(nop, op);
  if (mgopt_op_infer(p, nop, NULL) != MGOPT_OK) {
    mgopt_op_erase(nop);
    goto revert;
  }
  /* what replaces each output (nv, or nv cast back) keeps the output's
     declared type, which must hold for the inferred one up to the dtype */
  for (i = 0; i < op->nouts; i++) {
    mgopt_type t = nop->outs[i]->type;
    t.dtype = op->outs[i]->type.dtype;
    if (mgopt__type_clash(&op->outs[i]->type, &t, 1)) {
      mgopt_op_erase(nop);
      goto revert;
    }
  }
  for (i = 0; i < op->nouts; i++) {
    mgopt_value *ov = op->outs[i], *nv = nop->outs[i], *rep = nv;
    if (nv->type.dtype != ov->type.dtype) {
      rep = mgopt__pu_cast_value(p, op, nv, (mgopt_dtype)ov->type.dtype,
                                 mgopt__pu_converted_name(p, nv, (mgopt_dtype)ov->type.dtype));
      if (!rep) return -1;
    }
    if (mgopt__type_copy(p, &rep->type, &ov->type)) return -1;
    mgopt_value_replace_all_uses(ov, rep);
    mgopt__pu_sync_op_name(rep->def);
  }
  mgopt_op_erase(op);
  pr->ctx->rewrites++;
  return 1;
revert:
  for (i = ncreated - 1; i >= 0; i--) {
    mgopt__pu_cache_drop(pr, b, cval[i], cdt[i]);
    if (created[i]->def && created[i]->nuses == 0) mgopt_op_erase(created[i]->def);
  }
  return 0;
}

static int mgopt__pu_prec_block(mgopt__pu_prec *pr, mgopt_block *b, int depth) {
  mgopt_op *op, *next;
  if (depth > 256) {
    mgopt_diag_set(pr->ctx->diag, MGOPT_ERR_LIMIT, "blocks nested too deeply");
    return -1;
  }
  for (op = b->first; op; op = next) {
    int32_t i;
    next = op->next;
    for (i = 0; i < op->nblocks; i++)
      if (mgopt__pu_prec_block(pr, op->blocks[i], depth + 1) < 0) return -1;
    if (op->nblocks || op->kind == MGOPT_OP_OPAQUE || op->kind == MGOPT_OP_const) continue;
    if (mgopt__pu_prec_op(pr, op) < 0 || pr->oom || pr->ctx->program->status) {
      mgopt_diag_set(pr->ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
      return -1;
    }
  }
  return 0;
}

MGOPT__PRIVATE mgopt_status mgopt__pu_precision_run(mgopt_pass_ctx *ctx, const char *suffix, mgopt__pu_prec_fn decide,
                                                    mgopt__pu_conv_fn conv, void *ud) {
  mgopt__pu_prec pr;
  int32_t i;
  int r = 0;
  memset(&pr, 0, sizeof pr);
  pr.ctx = ctx;
  mgopt__map_init_flags(&pr.cache, &ctx->program->alloc, MGOPT__MAP_HASHED);
  pr.suffix = suffix;
  pr.decide = decide;
  pr.conv = conv;
  pr.ud = ud;
  for (i = 0; i < mgopt_program_function_count(ctx->program) && r == 0; i++)
    r = mgopt__pu_prec_block(&pr, mgopt_program_function_at(ctx->program, i)->body, 0);
  mgopt__map_free(&pr.cache);
  if (pr.keys) mgopt__heap_free(&ctx->program->alloc, pr.keys, (size_t)pr.keys_cap * sizeof *pr.keys);
  return r < 0 ? (ctx->diag && ctx->diag->status ? ctx->diag->status : MGOPT_ERR_NOMEM) : MGOPT_OK;
}
/* src/passes/weights.c — folding into weights: per-output-channel scaling of a weight, computed in double and rounded once to its dtype. */

/* v rounded once (to nearest, ties to even) to a binary float format with
   `mant` fraction bits and normal exponents emin..emax; +-inf past the
   largest finite value. v is finite. Every step is exact in double but the
   one rounding: a * 2^k, x - 1 and the integer rounding of a value below 2^53. */
static double mgopt__pw_round_format(double v, int mant, int emin, int emax) {
  double a = fabs(v), q, fl, r, scale;
  int e;
  if (a == 0.0) return v;
  (void)frexp(a, &e);
  e -= 1; /* a = 1.f * 2^e */
  if (e < emin) e = emin; /* subnormal: the quantum is 2^(emin - mant) */
  if (e > emax) return v < 0 ? -HUGE_VAL : HUGE_VAL;
  scale = ldexp(1.0, mant - e);
  q = a * scale; /* the quantum of the target is 1 here */
  fl = floor(q);
  r = q - fl;
  if (r > 0.5 || (r == 0.5 && fmod(fl, 2.0) != 0.0)) fl += 1.0;
  a = ldexp(fl, e - mant);
  if (a >= ldexp(2.0, emax)) return v < 0 ? -HUGE_VAL : HUGE_VAL;
  return v < 0 ? -a : a;
}

MGOPT__PRIVATE double mgopt__pw_round(mgopt_dtype dt, double v) {
  if (!isfinite(v)) return v;
  switch (dt) {
    case MGOPT_DT_FP16: return mgopt__pw_round_format(v, 10, -14, 15);
    case MGOPT_DT_BF16: return mgopt__pw_round_format(v, 7, -126, 127);
    case MGOPT_DT_FP32: return (double)(float)v; /* one IEEE conversion, to nearest */
    default: return v;
  }
}

MGOPT__PRIVATE int mgopt__pw_store(mgopt_tensor *t, int64_t i, double v) {
  double r = mgopt__pw_round((mgopt_dtype)t->dtype, v);
  /* r is representable in t's dtype (and in fp32 for fp16/bf16): storing it does not round again */
  mgopt_tensor_set_f64(t, i, r);
  return isfinite(r);
}

MGOPT__PRIVATE int mgopt__pw_is_float_weight(mgopt_dtype dt) {
  return dt == MGOPT_DT_FP16 || dt == MGOPT_DT_BF16 || dt == MGOPT_DT_FP32 || dt == MGOPT_DT_FP64;
}

MGOPT__PRIVATE int64_t mgopt__pw_out_channels(const mgopt_tensor *w, int32_t axis, int64_t groups) {
  int64_t c;
  if (!w || w->rank < 2 || (axis != 0 && axis != 1) || groups < 1) return -1;
  if (axis == 0) return w->shape[0];
  if (w->shape[0] % groups != 0 || !mgopt__mul_i64(w->shape[1], groups, &c)) return -1;
  return c;
}

/* out = w scaled per output channel (the layout of mgopt__pw_scale_channels);
   out may be w's own bytes. check: only tell whether every result is finite,
   storing nothing. 0 when one is not. */
static int mgopt__pw_scale_run(mgopt_tensor *out, const mgopt_tensor *w, int32_t axis, int64_t groups,
                               const double *scale, int check) {
  int64_t inner = 1, d0 = w->shape[0], d1 = w->shape[1], rows_per_group, i, j, k, f = 0;
  int32_t a;
  for (a = 2; a < w->rank; a++) inner *= w->shape[a]; /* numel fits: the product of all dims does */
  rows_per_group = axis == 1 ? d0 / groups : 1;
  for (i = 0; i < d0; i++)
    for (j = 0; j < d1; j++, f += inner) {
      /* axis 0: channel i. axis 1 (grouped, [Cin, Cout/g, ...]): row i lies in
         group i / (Cin/g), whose output channels start at that group times Cout/g */
      double s = scale[axis == 0 ? i : (i / rows_per_group) * d1 + j];
      if (w->dtype == MGOPT_DT_FP32) {
        /* the common case without the per-element dtype switch: the double
           product rounded once by the conversion to float */
        const unsigned char *src = (const unsigned char *)w->data + (size_t)f * 4;
        unsigned char *dst = (unsigned char *)out->data + (size_t)f * 4;
        int bad = 0;
        for (k = 0; k < inner; k++) {
          float x, y;
          memcpy(&x, src + 4 * k, 4);
          y = (float)((double)x * s);
          bad |= !isfinite(y);
          if (!check) memcpy(dst + 4 * k, &y, 4);
        }
        if (bad) return 0;
        continue;
      }
      for (k = 0; k < inner; k++) {
        double v = mgopt_tensor_get_f64(w, f + k) * s;
        if (check ? !isfinite(mgopt__pw_round((mgopt_dtype)w->dtype, v)) : !mgopt__pw_store(out, f + k, v)) return 0;
      }
    }
  return 1;
}

MGOPT__PRIVATE mgopt_tensor *mgopt__pw_scale_channels(mgopt_program *p, mgopt_tensor *w, int32_t axis,
                                                       int64_t groups, const double *scale) {
  mgopt_tensor *r;
  if (mgopt__pw_out_channels(w, axis, groups) < 0 || !mgopt__pw_is_float_weight((mgopt_dtype)w->dtype)) return NULL;
  /* w's bytes are read in place (element reads copy, so a borrowed,
     unaligned view needs no aligned copy); r's are all written */
  if (!w->data && w->nbytes) return NULL;
  r = mgopt__tensor_new_data(p, (mgopt_dtype)w->dtype, w->rank, w->shape, 0);
  if (!r || !mgopt__pw_scale_run(r, w, axis, groups, scale, 0)) return NULL;
  return r;
}

MGOPT__PRIVATE mgopt_tensor *mgopt__pw_conv_scale(mgopt_program *p, const mgopt__pw_conv *c, const double *scale) {
  mgopt_tensor *w = c->w;
  /* a weight this conv alone reads, whose bytes no one else holds: scaled
     where it is once every result is known finite, so a failure leaves it
     whole (its first write copies nothing: it is not borrowed) */
  if (c->w_sole) {
    if (!mgopt__pw_scale_run(w, w, c->axis, c->groups, scale, 1) || !mgopt_tensor_data_mut(p, w)) return NULL;
    return mgopt__pw_scale_run(w, w, c->axis, c->groups, scale, 0) ? w : NULL;
  }
  return mgopt__pw_scale_channels(p, w, c->axis, c->groups, scale);
}

MGOPT__PRIVATE mgopt_tensor *mgopt__pw_vector(mgopt_program *p, mgopt_dtype dt, int64_t n, const double *v) {
  mgopt_tensor *t = mgopt_tensor_new(p, dt, 1, &n);
  int64_t i;
  if (!t) return NULL;
  for (i = 0; i < n; i++)
    if (!mgopt__pw_store(t, i, v[i])) return NULL;
  return t;
}

MGOPT__PRIVATE int mgopt__pw_read_channels(mgopt_program *p, mgopt_tensor *t, int64_t n, double *out) {
  int64_t i;
  if (!t || t->dtype == MGOPT_DT_STRING || mgopt_dtype_bits((mgopt_dtype)t->dtype) < 8 ||
      (t->numel != 1 && t->numel != n))
    return 0;
  if (!mgopt_tensor_data(p, t)) return 0;
  for (i = 0; i < n; i++) {
    out[i] = mgopt_tensor_get_f64(t, t->numel == 1 ? 0 : i);
    if (!isfinite(out[i])) return 0;
  }
  return 1;
}

/* ---------------------------------------------------------------- conv weights */

MGOPT__PRIVATE int mgopt__pw_conv_get(mgopt_program *p, const mgopt_op *op, mgopt__pw_conv *c) {
  mgopt_value *x, *w, *b;
  MGOPT__UNUSED(p);
  memset(c, 0, sizeof *c);
  if (!op || (op->kind != MGOPT_OP_conv && op->kind != MGOPT_OP_conv_transpose) || op->nouts != 1) return 0;
  x = mgopt_op_operand(op, "x");
  w = mgopt_op_operand(op, "weight");
  b = mgopt_op_operand(op, "bias");
  if (!x || !w) return 0;
  if (!mgopt__pu_def_of(w, MGOPT_OP_const) || (b && !mgopt__pu_def_of(b, MGOPT_OP_const))) return 0;
  c->w = mgopt_value_const(w);
  c->w_sole = c->w && w->nuses == 1 && !mgopt__pu_is_block_output(w) && mgopt__tensor_held_only_by(c->w, w->def);
  c->b = b ? mgopt_value_const(b) : NULL;
  c->axis = op->kind == MGOPT_OP_conv_transpose ? 1 : 0;
  c->groups = mgopt_op_get_int(op, "groups", 1);
  if (!c->w || (b && !c->b) || c->w->rank < 3 || c->w->rank > MGOPT_MAX_RANK || c->w->numel < 1 ||
      !mgopt__pw_is_float_weight((mgopt_dtype)c->w->dtype))
    return 0;
  if (x->type.rank != c->w->rank || op->outs[0]->type.rank != c->w->rank) return 0;
  c->cout = mgopt__pw_out_channels(c->w, c->axis, c->groups);
  if (c->cout < 1 || (c->axis == 0 && c->w->shape[0] % c->groups != 0)) return 0;
  if (c->b && (c->b->rank != 1 || c->b->numel != c->cout)) return 0;
  return 1;
}

MGOPT__PRIVATE double *mgopt__pw_conv_bias(mgopt_program *p, const mgopt__pw_conv *c) {
  double *b = (double *)mgopt_program_alloc(p, sizeof(double) * (size_t)c->cout, 8);
  if (!b || (c->b && !mgopt__pw_read_channels(p, c->b, c->cout, b))) return NULL;
  return b; /* zeros when the conv has no bias */
}

MGOPT__PRIVATE int mgopt__pw_channel_const(mgopt_program *p, const mgopt_value *v, int32_t rank, int32_t axis,
                                           int64_t n, double *out) {
  mgopt_tensor *t = mgopt__pu_def_of(v, MGOPT_OP_const) ? mgopt_value_const(v) : NULL;
  int32_t i;
  if (!t || t->rank > rank || (t->numel != 1 && t->numel != n)) return 0;
  /* right-aligned against the output's rank: every dim 1 but the one over `axis` */
  for (i = 0; i < t->rank; i++) {
    int32_t at = rank - t->rank + i;
    if (t->shape[i] != 1 && (at != axis || t->shape[i] != n)) return 0;
  }
  return mgopt__pw_read_channels(p, t, n, out);
}

MGOPT__PRIVATE int mgopt__pw_conv_set(mgopt_rewriter *rw, mgopt_op *conv, mgopt_tensor *w, mgopt_tensor *b) {
  mgopt_program *p = mgopt_rw_program(rw);
  const char *base = mgopt__pu_value_name(conv->outs[0]);
  static const char *const slot[2] = {"weight", "bias"};
  mgopt_tensor *t[2];
  int32_t k;
  t[0] = w;
  t[1] = b;
  for (k = 0; k < 2; k++) {
    mgopt_value *old = mgopt_op_operand(conv, slot[k]), *nv;
    if (!t[k]) continue;
    nv = mgopt_rw_const(rw, conv, mgopt__pu_name2(p, base, k ? "_bias" : "_weight"), t[k]);
    if (!nv || mgopt_rw_set_operand(rw, conv, slot[k], nv) != MGOPT_OK) return 0;
    if (old) mgopt__pu_erase_if_dead(rw, old->def);
    /* the new const alone holds t[k] (a weight scaled in place moved to it
       from the old const, erased just now) */
    mgopt__tensor_set_holder(t[k], nv->def);
  }
  mgopt_rw_modified(rw, conv);
  return 1;
}
/* src/passes/compress.c — the weight compression driver: which consts are weights, their per-weight options and channel axes. */

/* Reference: mil-passes.md §4.1 (AbstractCompressionPass, OptimizationConfig,
   select_input_output_channel_axis). The walk first collects the weights of
   every block, then offers them one by one, so a callback may build and
   erase freely. Options of a rule are parsed per weight into arena memory
   (a few bytes per weight). */

#define MGOPT__CW_MAX_OPTS 16

static int mgopt__cw_is_constexpr(const mgopt_op *op) {
  return op && (mgopt_op_traits(op) & MGOPT_TRAIT_CONSTEXPR) != 0;
}

static int mgopt__cw_weight_dtype(mgopt_dtype dt) {
  return dt == MGOPT_DT_FP16 || dt == MGOPT_DT_BF16 || dt == MGOPT_DT_FP32 || dt == MGOPT_DT_INT8 ||
         dt == MGOPT_DT_UINT8;
}

/* ---------------------------------------------------------------- channel axes */

/* Axes (not normalized) of the operand in slot `slot` of reader op. */
static void mgopt__cw_reader_axes(const mgopt_op *op, int32_t slot, int64_t *out, int64_t *in) {
  const char *sn = slot >= 0 && slot < op->nslots ? op->slots[slot].name : "";
  *out = 0;
  *in = 1;
  if (op->kind == MGOPT_OP_conv_transpose) {
    *out = 1;
    *in = 0;
  } else if (op->kind == MGOPT_OP_matmul && strcmp(sn, "y") == 0) {
    int t = mgopt_op_get_bool(op, "transpose_y", 0);
    *out = t ? -2 : -1;
    *in = t ? -1 : -2;
  } else if (op->kind == MGOPT_OP_matmul && strcmp(sn, "x") == 0) {
    int t = mgopt_op_get_bool(op, "transpose_x", 0);
    *out = t ? -1 : -2;
    *in = t ? -2 : -1;
  }
}

/* Folds the axes every reader of v gives into *out / *in (normalized for
   `rank`; -2 = nothing seen yet, -1 = disagreement). Depth-limited through
   constexpr_* readers. */
static void mgopt__cw_axes_of(const mgopt_value *v, int32_t rank, int32_t *out, int32_t *in, int depth) {
  const mgopt_use *u;
  for (u = v->uses; u; u = u->next) {
    int64_t o, i;
    if (!u->op) continue;
    if (mgopt__cw_is_constexpr(u->op) && depth < 8) {
      int32_t k;
      for (k = 0; k < u->op->nouts; k++) mgopt__cw_axes_of(u->op->outs[k], rank, out, in, depth + 1);
      continue;
    }
    mgopt__cw_reader_axes(u->op, u->slot, &o, &i);
    o = mgopt__pu_norm_axis(o, rank);
    i = mgopt__pu_norm_axis(i, rank);
    if (*out == -2) {
      *out = (int32_t)o;
      *in = (int32_t)i;
    } else if (*out != (int32_t)o || *in != (int32_t)i) {
      *out = *in = -1;
    }
  }
}

/* ---------------------------------------------------------------- configuration */

static int mgopt__cw_rule_for_pass(const mgopt_compress_rule *r, const char *pass) {
  return !r->pass || !r->pass[0] || strcmp(r->pass, pass) == 0 ||
         (strncmp(r->pass, "common::", 8) == 0 && strcmp(r->pass + 8, pass) == 0);
}

/* The last rule for the pass of this scope and key (key NULL: GLOBAL), or NULL. */
static const mgopt_compress_rule *mgopt__cw_find(const mgopt_compress_config *c, const char *pass, int32_t scope,
                                                 const char *key) {
  const mgopt_compress_rule *hit = NULL;
  int32_t i;
  for (i = 0; i < c->nrules; i++) {
    const mgopt_compress_rule *r = &c->rules[i];
    if (r->scope != scope || !mgopt__cw_rule_for_pass(r, pass)) continue;
    if (scope != MGOPT_COMPRESS_GLOBAL && (!key || !r->key || strcmp(r->key, key) != 0)) continue;
    hit = r;
  }
  return hit;
}

/* The rule of one reading op (name, type, global), NULL when none. */
static const mgopt_compress_rule *mgopt__cw_op_rule(const mgopt_compress_config *c, const char *pass,
                                                    const mgopt_op *op) {
  const mgopt_compress_rule *r = op->name ? mgopt__cw_find(c, pass, MGOPT_COMPRESS_OP_NAME, op->name) : NULL;
  if (!r) r = mgopt__cw_find(c, pass, MGOPT_COMPRESS_OP_TYPE, op->type);
  if (!r) r = mgopt__cw_find(c, pass, MGOPT_COMPRESS_GLOBAL, NULL);
  return r;
}

static const char *mgopt__cw_rule_text(const mgopt_compress_rule *r) {
  return r && r->options && strcmp(r->options, "skip") != 0 ? r->options : NULL;
}

/* The ops whose configuration decides for const value v: its readers, or,
   when every reader is constexpr_*, the readers of the first one. */
static const mgopt_value *mgopt__cw_deciding_value(const mgopt_value *v) {
  int depth;
  for (depth = 0; depth < 8; depth++) {
    const mgopt_use *u;
    const mgopt_op *first = NULL;
    int all = 1;
    for (u = v->uses; u; u = u->next) {
      if (!u->op) continue;
      if (!first) first = u->op;
      if (!mgopt__cw_is_constexpr(u->op)) all = 0;
    }
    if (!first || !all || first->nouts < 1) return v;
    v = first->outs[first->nouts - 1];
  }
  return v;
}

/* Resolves the options text of weight value v: 1 and *text (NULL: no rule,
   the pass's own options) when it is to be compressed, 0 when it is left alone. */
static int mgopt__cw_resolve(const mgopt_compress_config *c, const char *pass, const mgopt_value *v,
                             const char **text) {
  const mgopt_compress_rule *r;
  const mgopt_value *dv;
  const mgopt_use *u;
  int32_t i, any = 0, seen = 0;
  *text = NULL;
  if (!c || c->nrules <= 0) return 1;
  for (i = 0; i < c->nrules; i++)
    if (mgopt__cw_rule_for_pass(&c->rules[i], pass)) any = 1;
  if (!any) return 1;
  r = v->name ? mgopt__cw_find(c, pass, MGOPT_COMPRESS_OP_NAME, v->name) : NULL;
  if (!r && v->def && v->def->name) r = mgopt__cw_find(c, pass, MGOPT_COMPRESS_OP_NAME, v->def->name);
  if (r) {
    *text = mgopt__cw_rule_text(r);
    return *text != NULL;
  }
  dv = mgopt__cw_deciding_value(v);
  for (u = dv->uses; u; u = u->next) {
    const char *t;
    if (!u->op) continue;
    r = mgopt__cw_op_rule(c, pass, u->op);
    t = mgopt__cw_rule_text(r);
    if (!t) return 0; /* no rule, or skip: not compressed (and a disagreement with any other) */
    if (seen && strcmp(t, *text) != 0) return 0;
    *text = t;
    seen = 1;
  }
  return seen;
}

/* Parses "name=value, ..." over vals (the pass's option order). 1 ok, 0 bad
   text (diag set), -1 OOM. */
static int mgopt__cw_parse(mgopt_pass_ctx *ctx, const mgopt__cw_pass *cp, const char *text, mgopt_opt_value *vals) {
  const char *q = text;
  for (;;) {
    const char *on, *ov;
    size_t onl, ovl;
    int32_t i, oi = -1;
    char tmp[128], *end;
    while (*q == ' ' || *q == '\t') q++;
    if (!*q) return 1;
    on = q;
    while (*q && *q != '=' && *q != ' ' && *q != '\t' && *q != ',') q++;
    onl = (size_t)(q - on);
    for (i = 0; i < cp->nopts; i++)
      if (strlen(cp->opts[i].name) == onl && memcmp(cp->opts[i].name, on, onl) == 0) oi = i;
    while (*q == ' ' || *q == '\t') q++;
    if (oi < 0 || *q != '=') {
      mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "%s: compression config: no option '%.*s' in \"%s\"",
                     cp->name, (int)onl, on, text);
      return 0;
    }
    q++;
    while (*q == ' ' || *q == '\t') q++;
    if (*q == '"') {
      ov = ++q;
      while (*q && *q != '"') q++;
      ovl = (size_t)(q - ov);
      if (*q) q++;
    } else {
      ov = q;
      while (*q && *q != ',' && *q != ' ' && *q != '\t') q++;
      ovl = (size_t)(q - ov);
    }
    if (ovl >= sizeof tmp) ovl = sizeof tmp - 1;
    memcpy(tmp, ov, ovl);
    tmp[ovl] = 0;
    switch ((mgopt_opt_kind)cp->opts[oi].kind) {
      case MGOPT_OPT_BOOL:
        if (strcmp(tmp, "true") == 0 || strcmp(tmp, "1") == 0) vals[oi].i = 1;
        else if (strcmp(tmp, "false") == 0 || strcmp(tmp, "0") == 0) vals[oi].i = 0;
        else ovl = 0;
        break;
      case MGOPT_OPT_INT:
        vals[oi].i = strtoll(tmp, &end, 10);
        if (*end) ovl = 0;
        break;
      case MGOPT_OPT_FLOAT:
        vals[oi].f = strtod(tmp, &end);
        if (*end) ovl = 0;
        break;
      case MGOPT_OPT_STRING:
        vals[oi].s = mgopt__dupz(ctx->program, tmp, strlen(tmp));
        if (!vals[oi].s) return -1;
        break;
    }
    if (!ovl) {
      mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "%s: compression config: bad value for '%s' in \"%s\"",
                     cp->name, cp->opts[oi].name, text);
      return 0;
    }
    while (*q == ' ' || *q == '\t') q++;
    if (*q == ',') q++;
  }
}

/* ---------------------------------------------------------------- the walk */

typedef struct mgopt__cw_list {
  mgopt_op **ops;
  int64_t n, cap;
} mgopt__cw_list;

static int mgopt__cw_collect(mgopt_op *op, void *ud) {
  mgopt__cw_list *l = (mgopt__cw_list *)ud;
  if (op->kind != MGOPT_OP_const) return 0;
  if (l->ops && l->n < l->cap) l->ops[l->n] = op;
  l->n++;
  return 0;
}

MGOPT__PRIVATE void mgopt__cw_replace(const mgopt__cw_weight *w, mgopt_value *v) {
  mgopt_value_replace_all_uses(w->op->outs[0], v);
  mgopt_op_erase(w->op);
}

MGOPT__PRIVATE void mgopt__cw_unbuild(mgopt_op *op) {
  mgopt_op *feed[8];
  int32_t nf = 0, s, k;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      mgopt_value *v = op->slots[s].uses[k].value;
      if (v && v->def && v->def->kind == MGOPT_OP_const && nf < 8) feed[nf++] = v->def;
    }
  mgopt_op_erase(op);
  for (k = 0; k < nf; k++)
    if (!(feed[k]->flags & MGOPT_OP_ERASED) && feed[k]->outs[0]->nuses == 0) mgopt_op_erase(feed[k]);
}

MGOPT__PRIVATE mgopt_status mgopt__cw_run(mgopt_pass_ctx *ctx, const mgopt__cw_pass *cp) {
  mgopt_program *p = ctx->program;
  mgopt__cw_list l;
  mgopt_opt_value vals[MGOPT__CW_MAX_OPTS];
  int32_t thr = -1, i;
  int64_t k;
  MGOPT_ASSERT(cp->nopts <= MGOPT__CW_MAX_OPTS);
  for (i = 0; i < cp->nopts; i++)
    if (strcmp(cp->opts[i].name, "weight_threshold") == 0) thr = i;
  memset(&l, 0, sizeof l);
  mgopt_program_walk(p, mgopt__cw_collect, &l);
  if (l.n == 0) return MGOPT_OK;
  l.cap = l.n;
  l.ops = (mgopt_op **)mgopt_program_alloc(p, (size_t)l.n * sizeof(mgopt_op *), 8);
  if (!l.ops) return MGOPT_ERR_NOMEM;
  l.n = 0;
  mgopt_program_walk(p, mgopt__cw_collect, &l);
  for (k = 0; k < l.n; k++) {
    mgopt_op *op = l.ops[k];
    mgopt_value *v = op->outs[0];
    mgopt_tensor *t = mgopt_value_const(v);
    const mgopt_use *u;
    mgopt__cw_weight w;
    const char *text;
    int r;
    if (!t || !mgopt__cw_weight_dtype((mgopt_dtype)t->dtype) || t->numel < 10) continue;
    memset(&w, 0, sizeof w);
    for (u = v->uses; u; u = u->next)
      if (u->op) {
        w.reader = u->op;
        break;
      }
    if (!w.reader) continue; /* only a block output */
    if (t->rank < 2 && !mgopt__cw_is_constexpr(w.reader)) continue;
    if (!cp->constexpr_readers) {
      int ce = 0;
      for (u = v->uses; u; u = u->next)
        if (u->op && mgopt__cw_is_constexpr(u->op)) ce = 1;
      if (ce) continue;
    }
    if (!mgopt__cw_resolve(ctx->compress_config, cp->name, v, &text)) continue;
    memcpy(vals, ctx->opts, (size_t)cp->nopts * sizeof vals[0]);
    if (text) {
      r = mgopt__cw_parse(ctx, cp, text, vals);
      if (r < 0) return MGOPT_ERR_NOMEM;
      if (r == 0) return MGOPT_ERR_INVALID_ARG;
    }
    if (thr >= 0 && !(t->numel > vals[thr].i)) continue;
    w.op = op;
    w.t = t;
    w.opts = vals;
    w.numel = t->numel;
    w.out_axis = w.in_axis = -2;
    if (t->rank >= 2) mgopt__cw_axes_of(v, t->rank, &w.out_axis, &w.in_axis, 0);
    if (w.out_axis < 0 || w.in_axis < 0) w.out_axis = w.in_axis = -1;
    r = cp->fn(ctx, &w, cp->ud);
    if (r == -2) return MGOPT_ERR_INVALID_ARG;
    if (r < 0 || p->status) return MGOPT_ERR_NOMEM;
    ctx->rewrites += r;
  }
  return MGOPT_OK;
}
/* src/passes/cleanup/dead_code_elimination.c — common::dead_code_elimination: erase ops whose results reach no output.

   Spec: mil_graph_passes.txt, "Eliminate unused ops in program".

   Before:
     main(%x: (2, 4, fp32)) {
       %w: (4, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6], [7, 8]])
       %v: (2, 4, fp32)* = const(val=[[1, 2, 3, 4], [5, 6, 7, 8]])
       %b: (2, fp32)* = const(val=[1, 2])
       %m: (2, 2, fp32) = matmul(x=%x, y=%w)
       %l: (2, 2, fp32) = linear(x=%x, weight=%v, bias=%b)
     } -> (%l)
   After:
     main(%x: (2, 4, fp32)) {
       %v: (2, 4, fp32)* = const(val=[[1, 2, 3, 4], [5, 6, 7, 8]])
       %b: (2, fp32)* = const(val=[1, 2])
       %l: (2, 2, fp32) = linear(x=%x, weight=%v, bias=%b)
     } -> (%l)

   Fires on: every op with at least one output, none of them used, without
   side effects (mgopt__op_is_dead: registered ops with the pure trait, and
   opaque ops not flagged MGOPT_OP_HAS_EFFECTS: model graphs have no side
   effects), in every block, nested blocks included (a nested block's
   outputs keep what feeds them alive).
   Must not fire: on ops without outputs; on a state write
   (coreml_update_state: the reference keeps every state write's outputs
   alive), an opaque op marked `has_effects=true`, or a control-flow op
   with such an op in its blocks; their operands stay alive with them.
   Cost: a scan of the op index for a dead op (the arrays of op pointers, no
   list walk), then, if one is found, one backward sweep per block, O(ops): erasing an op drops its
   operand uses, so producers earlier in the block are seen dead in the
   same sweep. */

static int64_t mgopt__dce_block(mgopt_block *b) {
  mgopt_op *op, *prev;
  int64_t n = 0;
  for (op = b->last; op; op = prev) {
    int32_t i;
    prev = op->prev;
    if (mgopt__op_is_dead(op)) {
      mgopt_op_erase(op);
      n++;
      continue;
    }
    for (i = 0; i < op->nblocks; i++) n += mgopt__dce_block(op->blocks[i]);
  }
  return n;
}

static mgopt_status mgopt__dce_run(mgopt_pass_ctx *ctx) {
  int32_t i;
  for (i = 0; i < mgopt_program_function_count(ctx->program); i++) {
    mgopt_function *f = mgopt_program_function_at(ctx->program, i);
    /* no dead op: the sweep would erase nothing */
    if (mgopt__index_has_dead(f) == 0) continue;
    ctx->rewrites += mgopt__dce_block(f->body);
  }
  return MGOPT_OK;
}

MGOPT__DEFINE_PASS(cleanup, common, dead_code_elimination, "erase ops whose results reach no output",
                   mgopt__dce_run);
/* src/passes/cleanup/noop_elimination.c — common::noop_elimination: remove ops that have no effect.

   Spec: mil_graph_passes.txt, "Remove ops that have no effect"; reference mil-passes.md §3.6.

   Before:
     main(%x: (1, 96, 128, 64, fp32)) {
       %s: (4, int32)* = const(val=[1, 96, 128, 64])
       %r: (1, 96, 128, 64, fp32) = reshape(x=%x, shape=%s)
       %c: (fp32)* = const(val=2)
       %y: (1, 96, 128, 64, fp32) = add(x=%r, y=%c)
     } -> (%y)
   After:
     main(%x: (1, 96, 128, 64, fp32)) {
       %s: (4, int32)* = const(val=[1, 96, 128, 64])
       %c: (fp32)* = const(val=2)
       %y: (1, 96, 128, 64, fp32) = add(x=%x, y=%c)
     } -> (%y)

   Fires on (the 19 op types MIL defines), for single-output ops whose output
   is not a block output, when the kept input has provably the same type as
   the output (same dtype, rank and dims, no unknown dim — so no broadcasting
   is lost):
     identity                                         always
     add (either side all 0), mul (either side all 1)
     sub (y all 0), real_div and pow (y all 1)
     floor_div (y all 1, integer dtypes only: for floats it is floor(x))
     reshape, split, slice_by_size, pad, tile, upsample_nearest_neighbor,
     upsample_bilinear, resize_bilinear, crop         same type in and out
     slice_by_index                                   same type, no negative const stride;
                                                      or every axis whole (both masks, stride
                                                      1, no squeeze), unknown dims allowed
     transpose                                        perm is the identity
     linear_activation                                alpha == 1 and beta == 0
   The last group's unregistered ops (crop, linear_activation) are matched
   by name with their MIL operand `x`.
   Must not fire: when the output is a block output; when the kept input's
   type differs or is not fully known; floor_div on floats.
   Cost: one worklist run, O(ops). The removed op's constant operands stay
   for dead_code_elimination. */

static int mgopt__noop_same_type(const mgopt_value *in, const mgopt_value *out) {
  const mgopt_type *a = &in->type, *b = &out->type;
  int32_t i;
  if (!mgopt_type_equal(a, b) || a->kind != MGOPT_TYPE_TENSOR || a->rank < 0) return 0;
  for (i = 0; i < a->rank; i++)
    if (!a->dims[i].sym && a->dims[i].v < 0) return 0;
  return 1;
}

/* Replaces op's only output by `keep` if the checks hold. */
static int mgopt__noop_forward(mgopt_rewriter *rw, mgopt_op *op, mgopt_value *keep) {
  mgopt_value *out;
  if (!keep || op->nouts != 1) return 0;
  out = op->outs[0];
  if (mgopt__pu_is_block_output(out) || !mgopt__noop_same_type(keep, out)) return 0;
  if (!mgopt__pu_replace_fits(mgopt_rw_program(rw), out, keep)) return 0; /* equal types: always */
  mgopt_rw_replace_value(rw, out, keep);
  mgopt_rw_erase(rw, op);
  return 1;
}

static int mgopt__noop_identity(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  MGOPT__UNUSED(ud);
  return mgopt__noop_forward(rw, op, mgopt_op_operand(op, "x"));
}

/* add / mul: either side the neutral element; sub / real_div / pow / floor_div: y only. */
static int mgopt__noop_binary(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y");
  double neutral = (op->kind == MGOPT_OP_add || op->kind == MGOPT_OP_sub) ? 0.0 : 1.0;
  MGOPT__UNUSED(ud);
  if (!x || !y || op->nouts != 1) return 0;
  if (op->kind == MGOPT_OP_floor_div && !mgopt_dtype_is_int((mgopt_dtype)x->type.dtype)) return 0;
  if (mgopt__pu_const_all(y, neutral) && mgopt__noop_forward(rw, op, x)) return 1;
  if ((op->kind == MGOPT_OP_add || op->kind == MGOPT_OP_mul) && mgopt__pu_const_all(x, neutral))
    return mgopt__noop_forward(rw, op, y);
  return 0;
}

static int mgopt__noop_same_shape(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  MGOPT__UNUSED(ud);
  return mgopt__noop_forward(rw, op, mgopt_op_operand(op, "x"));
}

/* 1 when attribute `name` is BOOLS of length rank, every entry equal to want (absent: all 0). */
static int mgopt__noop_bools_all(const mgopt_op *op, const char *name, int32_t rank, int want) {
  const mgopt_attr *a = mgopt_op_attr(op, name);
  int32_t i;
  if (!a) return !want;
  if (a->kind != MGOPT_ATTR_BOOLS || a->n != rank) return 0;
  for (i = 0; i < rank; i++)
    if ((a->u.ints[i] != 0) != want) return 0;
  return 1;
}

/* Every axis whole (both masks set, stride 1, nothing squeezed): the identity
   whatever the dims, so unknown dims do not block it; dtype and rank must agree
   and the replacement must fit every reader. */
static int mgopt__noop_whole_slice(mgopt_rewriter *rw, mgopt_op *op, int64_t n, const int64_t *stride) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *out;
  int32_t r, i;
  if (!x || op->nouts != 1) return 0;
  out = op->outs[0];
  r = x->type.rank;
  if (x->type.kind != MGOPT_TYPE_TENSOR || r < 1 || out->type.rank != r || out->type.dtype != x->type.dtype ||
      n != r || mgopt__pu_is_block_output(out))
    return 0;
  for (i = 0; i < r; i++)
    if (stride[i] != 1) return 0;
  if (!mgopt__noop_bools_all(op, "begin_mask", r, 1) || !mgopt__noop_bools_all(op, "end_mask", r, 1) ||
      !mgopt__noop_bools_all(op, "squeeze_mask", r, 0))
    return 0;
  if (!mgopt__pu_replace_fits(mgopt_rw_program(rw), out, x)) return 0;
  mgopt_rw_replace_value(rw, out, x);
  mgopt_rw_erase(rw, op);
  return 1;
}

static int mgopt__noop_slice_by_index(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  const int64_t *stride = NULL;
  int64_t n, i;
  MGOPT__UNUSED(ud);
  n = mgopt_op_get_ints(mgopt_rw_program(rw), op, "stride", &stride);
  for (i = 0; i < n; i++)
    if (stride[i] < 0) return 0;
  if (n < 0 && mgopt_op_operand(op, "stride")) return 0; /* a stride not known at compile time */
  if (mgopt__noop_forward(rw, op, mgopt_op_operand(op, "x"))) return 1;
  return mgopt__noop_whole_slice(rw, op, n, stride);
}

static int mgopt__noop_transpose(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  const int64_t *perm = NULL;
  int64_t n, i;
  MGOPT__UNUSED(ud);
  n = mgopt_op_get_ints(mgopt_rw_program(rw), op, "perm", &perm);
  if (!x || n < 0 || x->type.rank != n) return 0;
  for (i = 0; i < n; i++)
    if ((perm[i] < 0 ? perm[i] + n : perm[i]) != i) return 0;
  return mgopt__noop_forward(rw, op, x);
}

static int mgopt__noop_linear_activation(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  MGOPT__UNUSED(ud);
  if (mgopt_op_get_float(op, "alpha", 0.0) != 1.0 || mgopt_op_get_float(op, "beta", 0.0) != 0.0) return 0;
  return mgopt__noop_forward(rw, op, mgopt_op_operand(op, "x"));
}

static const mgopt_pattern mgopt__noop_patterns[] = {
    {"noop_identity", MGOPT_OP_identity, NULL, 1, mgopt__noop_identity, NULL},
    {"noop_add", MGOPT_OP_add, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_mul", MGOPT_OP_mul, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_sub", MGOPT_OP_sub, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_real_div", MGOPT_OP_real_div, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_pow", MGOPT_OP_pow, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_floor_div", MGOPT_OP_floor_div, NULL, 1, mgopt__noop_binary, NULL},
    {"noop_reshape", MGOPT_OP_reshape, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_split", MGOPT_OP_split, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_slice_by_size", MGOPT_OP_slice_by_size, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_pad", MGOPT_OP_pad, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_tile", MGOPT_OP_tile, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_upsample_nearest_neighbor", MGOPT_OP_upsample_nearest_neighbor, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_upsample_bilinear", MGOPT_OP_upsample_bilinear, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_resize_bilinear", MGOPT_OP_resize_bilinear, NULL, 1, mgopt__noop_same_shape, NULL},
    {"noop_crop", MGOPT_OP_OPAQUE, "crop", 1, mgopt__noop_same_shape, NULL},
    {"noop_slice_by_index", MGOPT_OP_slice_by_index, NULL, 1, mgopt__noop_slice_by_index, NULL},
    {"noop_transpose", MGOPT_OP_transpose, NULL, 1, mgopt__noop_transpose, NULL},
    {"noop_linear_activation", MGOPT_OP_OPAQUE, "linear_activation", 1, mgopt__noop_linear_activation, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, noop_elimination,
                           "remove ops that have no effect (identity reshape, add 0, mul 1, ...)",
                           mgopt__noop_patterns);
/* src/passes/cleanup/remove_redundant_ops.c — common::remove_redundant_ops: keep one of several identical ops.

   Spec: mil_graph_passes.txt, "If there are multiple ops with identical inputs"; reference §3.7.

   Before:
     main(%x: (2, fp32)) {
       %a: (fp32)* = const(val=4.5)
       %b: (fp32)* = const(val=4.5)
       %m: (2, fp32) = mul(x=%x, y=%a)
       %n: (2, fp32) = mul(x=%x, y=%b)
       %s: (2, fp32) = add(x=%m, y=%n)
     } -> (%s)
   After:
     main(%x: (2, fp32)) {
       %a: (fp32)* = const(val=4.5)
       %b: (fp32)* = const(val=4.5)
       %m: (2, fp32) = mul(x=%x, y=%a)
       %s: (2, fp32) = add(x=%m, y=%m)
     } -> (%s)

   Two ops are identical when they have the same type, the same operand slot
   names, equal attributes, and operand by operand either the same value or
   two constants of equal dtype, shape and content (constants of 100 or more
   elements only when they are the same value: deduplicating big constants is
   const_deduplication's job). They must share a "parent": an operand that is
   a block argument or output 0 of a non-const op (MIL's candidate rule), sit
   in the same block, and the later one is removed. Must not fire: on ops with
   more than one output, on state ops (a write may come between two reads)
   and ops with side effects,
   when either op's output is a block output (the
   removed one must not be; the kept one is not given more consumers, which
   keeps fp16 models bit-identical under ONNX Runtime), with nested blocks,
   or that draw random numbers. Cost: one sweep in program order with a hash
   table keyed on (block, type, operands, attributes): O(ops); a removal lets
   later users match in the same sweep. */

#define MGOPT__RRO_BIG 100

static int mgopt__rro_eligible(const mgopt_op *op) {
  int32_t s, k;
  int parent = 0;
  if (op->nouts != 1 || op->nblocks || op->kind == MGOPT_OP_const || (mgopt_op_traits(op) & MGOPT_TRAIT_STATE) ||
      mgopt__op_has_effects(op))
    return 0;
  if (op->kind == MGOPT_OP_OPAQUE && (strstr(op->type, "andom") || strstr(op->type, "Bernoulli") ||
                                      strstr(op->type, "Multinomial")))
    return 0;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      const mgopt_value *v = op->slots[s].uses[k].value;
      if (!v->def || (v->index == 0 && v->def->kind != MGOPT_OP_const)) parent = 1;
    }
  return parent;
}

static uint64_t mgopt__rro_hash_value(const mgopt_value *v) {
  mgopt_tensor *t = mgopt_value_const(v);
  if (t && t->numel < MGOPT__RRO_BIG) return mgopt_tensor_hash(t);
  return (uint64_t)v->id * 0x100000001b3ull;
}

static uint64_t mgopt__rro_hash(const mgopt_op *op) {
  uint64_t h = mgopt__pu_mix((uint64_t)(uintptr_t)op->parent, (uint64_t)(uintptr_t)op->type);
  int32_t s, k;
  for (s = 0; s < op->nslots; s++) {
    h = mgopt__pu_mix(h, (uint64_t)(uintptr_t)op->slots[s].name);
    for (k = 0; k < op->slots[s].n; k++) h = mgopt__pu_mix(h, mgopt__rro_hash_value(op->slots[s].uses[k].value));
  }
  /* attributes in any order: combine commutatively */
  return mgopt__pu_mix(h, mgopt__pu_attrs_hash(op));
}

static int mgopt__rro_value_eq(const mgopt_value *a, const mgopt_value *b) {
  const mgopt_tensor *x, *y;
  if (a == b) return 1;
  x = mgopt_value_const(a);
  y = mgopt_value_const(b);
  if (!x || !y || x->numel >= MGOPT__RRO_BIG || y->numel >= MGOPT__RRO_BIG) return 0;
  return mgopt_tensor_equal(x, y);
}

static int mgopt__rro_equal(const mgopt_op *a, const mgopt_op *b) {
  int32_t s, k;
  if (a->type != b->type || a->parent != b->parent || a->nslots != b->nslots || a->nattrs != b->nattrs) return 0;
  for (s = 0; s < a->nslots; s++) {
    const mgopt_slot *sa = &a->slots[s];
    int32_t j = mgopt_op_slot_index(b, sa->name);
    const mgopt_slot *sb;
    if (j < 0) return 0;
    sb = &b->slots[j];
    if (sa->n != sb->n || sa->is_list != sb->is_list) return 0;
    for (k = 0; k < sa->n; k++)
      if (!mgopt__rro_value_eq(sa->uses[k].value, sb->uses[k].value)) return 0;
  }
  return mgopt__pu_attrs_equal(a, b);
}

typedef struct mgopt__rro {
  mgopt_program *p;
  mgopt__map kept; /* the ops kept so far, by hash (distinct ops may share one) */
  int64_t removed;
  int oom;
} mgopt__rro;

static void mgopt__rro_block(mgopt__rro *r, mgopt_block *b, int depth) {
  mgopt_op *op, *next;
  for (op = b->first; op && !r->oom; op = next) {
    int32_t i;
    uint64_t h;
    mgopt__map_slot *sl;
    mgopt_op *first = NULL;
    next = op->next;
    if (depth < 256)
      for (i = 0; i < op->nblocks; i++) mgopt__rro_block(r, op->blocks[i], depth + 1);
    if (!mgopt__rro_eligible(op)) continue;
    h = mgopt__map_hash_key(mgopt__rro_hash(op));
    for (sl = mgopt__map_find(&r->kept, h); sl && !first; sl = mgopt__map_next(&r->kept, sl))
      if (mgopt__rro_equal((mgopt_op *)sl->v.p, op)) first = (mgopt_op *)sl->v.p;
    if (first) {
      /* the kept op must not be a block output either: feeding an output of
         the model to more consumers changes how runtimes schedule fp16 casts
         around it (ONNX Runtime's CPU provider rounds differently then) */
      if (mgopt__pu_is_block_output(op->outs[0]) || mgopt__pu_is_block_output(first->outs[0])) continue;
      /* the two may be declared differently (opaque ops keep what they came
         with; a dim may be symbolic in one): op's users must accept the kept type */
      if (!mgopt__pu_replace_fits(r->p, op->outs[0], first->outs[0])) continue;
      mgopt_value_replace_all_uses(op->outs[0], first->outs[0]);
      mgopt_op_erase(op);
      r->removed++;
      continue;
    }
    if (!(sl = mgopt__map_add(&r->kept, h))) {
      r->oom = 1;
      return;
    }
    sl->v.p = op;
  }
}

static mgopt_status mgopt__rro_run(mgopt_pass_ctx *ctx) {
  mgopt__rro r;
  int32_t i;
  memset(&r, 0, sizeof r);
  r.p = ctx->program;
  mgopt__map_init_flags(&r.kept, &r.p->alloc, MGOPT__MAP_HASHED);
  for (i = 0; i < mgopt_program_function_count(ctx->program) && !r.oom; i++)
    mgopt__rro_block(&r, mgopt_program_function_at(ctx->program, i)->body, 0);
  mgopt__map_free(&r.kept);
  ctx->rewrites += r.removed;
  if (r.oom) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "remove_redundant_ops: out of memory");
  return MGOPT_OK;
}

MGOPT__DEFINE_PASS(cleanup, common, remove_redundant_ops, "keep one of several ops with identical inputs",
                   mgopt__rro_run);
/* src/passes/cleanup/const_elimination.c — common::const_elimination: replace ops whose operands are all constant by constants.

   Spec: mil_graph_passes.txt, "Replace non-const ops that have const Var"; reference mil-passes.md §3.2.

   Before:
     main(%x: (2, fp32)) {
       %a: (2, fp32)* = const(val=[1, 2])
       %b: (2, fp32)* = const(val=[3, 4])
       %c: (2, fp32) = add(x=%a, y=%b)
       %y: (2, fp32) = mul(x=%x, y=%c)
     } -> (%y)
   After:
     main(%x: (2, fp32)) {
       %a: (2, fp32)* = const(val=[1, 2])
       %b: (2, fp32)* = const(val=[3, 4])
       %c: (2, fp32)* = const(val=[4, 6])
       %y: (2, fp32) = mul(x=%x, y=%c)
     } -> (%y)

   Fires on: every op (nested blocks included) whose operands are all
   constant and for which the folding function in use (the built-in kernels of
   mgopt_fold_op unless the caller gave others) computes every output; folds
   cascade through the worklist. The constant takes the output's name, so
   function outputs keep theirs. The operands left unused stay for
   dead_code_elimination, as in MIL.
   Must not fire: on constexpr_* ops and dequantize (the compressed form of
   weights is kept; their outputs are not constants, so nothing below them
   folds either); on ops owning blocks; when the kernel refuses (see
   mgopt_fold_op: bad parameters, integer division by zero, a stored type that
   disagrees); when an output of rank > 0 has more elements than
   skip_const_by_size (scalars always fold); when the constant's static type
   does not suit a reader of the output, or differs from the declared type of
   a function output (mgopt__pu_replace_static_fits: a symbolic dim may hide a
   contradiction, and main's declared outputs keep their types).
   Repeated work: an op of the same type, attributes and declared result
   types as one folded before, whose operands are the same bytes (the same
   data pointer, dtype and shape: a weight, or views of it), takes that op's
   results as views instead of computing them again (the checks above still
   apply to it). A model that repeats a weight transform in each branch of a
   conditional (gates reordered by slice + concat before every LSTM, say) so
   folds each once and holds it once; const_deduplication then keeps one
   const. Only results of at least 1 KB are remembered. This assumes the
   folding function is a function of those inputs, as the built-in kernels are.
   Cost: one worklist run, O(ops) plus the kernels' work on folded values;
   the memo costs one hash of the operands' metadata per folded op. */

/* A folded op, found again by what its results were computed from. */
typedef struct mgopt__ce_memo {
  const mgopt_op *op; /* erased once folded; its attributes and result types stay readable */
  uint64_t *key;      /* mgopt__ce_key of its operands */
  int32_t nkey;
  mgopt_tensor **out; /* op->nouts results */
} mgopt__ce_memo;

#define MGOPT__CE_KEY_CAP 256
#define MGOPT__CE_MEMO_MIN_BYTES 1024

typedef struct mgopt__ce_state {
  mgopt_fold_fn fold;
  void *ud;
  double skip_by_size; /* < 0: no limit */
  mgopt__map memo; /* hash of what an op was folded from -> its mgopt__ce_memo (a multimap) */
  int oom;
} mgopt__ce_state;

static int mgopt__ce_too_big(const mgopt__ce_state *st, int32_t rank, int64_t numel) {
  return st->skip_by_size >= 0 && rank > 0 && (double)numel > st->skip_by_size;
}

/* The operands' layout and identity: per slot its length, per operand the
   data pointer, dtype, rank and shape. Equal keys mean equal operand bytes.
   Returns the key's length, or -1 when it does not fit. */
static int32_t mgopt__ce_key(const mgopt_op *op, uint64_t *key) {
  int32_t n = 0, s, k, d;
  key[n++] = (uint64_t)op->nslots;
  for (s = 0; s < op->nslots; s++) {
    if (n >= MGOPT__CE_KEY_CAP) return -1;
    key[n++] = (uint64_t)op->slots[s].n;
    for (k = 0; k < op->slots[s].n; k++) {
      const mgopt_tensor *t = mgopt_value_const(op->slots[s].uses[k].value);
      if (!t || n + 2 + t->rank > MGOPT__CE_KEY_CAP) return -1;
      key[n++] = (uint64_t)(uintptr_t)t->data;
      key[n++] = (uint64_t)t->dtype | (uint64_t)(uint32_t)t->rank << 8;
      for (d = 0; d < t->rank; d++) key[n++] = (uint64_t)t->shape[d];
    }
  }
  return n;
}

static uint64_t mgopt__ce_hash(const mgopt_op *op, const uint64_t *key, int32_t nkey) {
  uint64_t h = mgopt__hash_bytes(key, sizeof(uint64_t) * (size_t)nkey, (uint64_t)(uintptr_t)op->type);
  uint64_t attrs = mgopt__pu_attrs_hash(op);
  return mgopt__hash_bytes(&attrs, sizeof attrs, h);
}

static int mgopt__ce_same(const mgopt__ce_memo *m, const mgopt_op *op, const uint64_t *key, int32_t nkey) {
  const mgopt_op *a = m->op;
  int32_t i;
  if (a->type != op->type || a->nouts != op->nouts || m->nkey != nkey ||
      memcmp(m->key, key, sizeof(uint64_t) * (size_t)nkey) != 0)
    return 0;
  for (i = 0; i < op->nouts; i++)
    if (!mgopt_type_equal(&a->outs[i]->type, &op->outs[i]->type)) return 0;
  return mgopt__pu_attrs_equal(op, a);
}

static mgopt__ce_memo *mgopt__ce_lookup(const mgopt__ce_state *st, const mgopt_op *op, uint64_t h,
                                        const uint64_t *key, int32_t nkey) {
  const mgopt__map_slot *sl;
  for (sl = mgopt__map_find(&st->memo, mgopt__map_hash_key(h)); sl; sl = mgopt__map_next(&st->memo, sl))
    if (mgopt__ce_same((const mgopt__ce_memo *)sl->v.p, op, key, nkey)) return (mgopt__ce_memo *)sl->v.p;
  return NULL;
}

static void mgopt__ce_remember(mgopt_program *p, mgopt__ce_state *st, const mgopt_op *op, mgopt_tensor **out) {
  uint64_t key[MGOPT__CE_KEY_CAP];
  int32_t nkey = mgopt__ce_key(op, key), i;
  size_t bytes = 0;
  mgopt__ce_memo *m;
  mgopt__map_slot *sl;
  for (i = 0; i < op->nouts; i++) bytes += out[i]->nbytes;
  if (nkey < 0 || bytes < MGOPT__CE_MEMO_MIN_BYTES || st->oom) return;
  m = (mgopt__ce_memo *)mgopt_program_alloc(p, sizeof *m, 8);
  if (m) m->key = (uint64_t *)mgopt_program_alloc(p, sizeof(uint64_t) * (size_t)nkey, 8);
  if (m && m->key) m->out = (mgopt_tensor **)mgopt_program_alloc(p, sizeof(mgopt_tensor *) * (size_t)op->nouts, 8);
  sl = NULL;
  if (m && m->key && m->out) sl = mgopt__map_add(&st->memo, mgopt__map_hash_key(mgopt__ce_hash(op, key, nkey)));
  if (!sl) {
    st->oom = 1; /* the memo only saves work: folding goes on without it */
    return;
  }
  memcpy(m->key, key, sizeof(uint64_t) * (size_t)nkey);
  m->nkey = nkey;
  m->op = op;
  for (i = 0; i < op->nouts; i++) m->out[i] = out[i];
  sl->v.p = m;
}

static int mgopt__ce_fold(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud) {
  mgopt__ce_state *st = (mgopt__ce_state *)ud;
  int32_t i;
  int r, hit = 0;
  switch (op->kind) {
    case MGOPT_OP_constexpr_affine_dequantize: case MGOPT_OP_constexpr_lut_to_dense:
    case MGOPT_OP_constexpr_sparse_to_dense: case MGOPT_OP_constexpr_blockwise_shift_scale:
    case MGOPT_OP_constexpr_cast: case MGOPT_OP_dequantize:
      return 0;
    default: break;
  }
  if (op->kind == MGOPT_OP_OPAQUE && strncmp(op->type, "constexpr_", 10) == 0) return 0;
  /* a stored static type over the limit needs no evaluation */
  for (i = 0; i < op->nouts; i++) {
    int64_t n = mgopt_type_numel(&op->outs[i]->type);
    if (n >= 0 && mgopt__ce_too_big(st, op->outs[i]->type.rank, n)) return 0;
  }
  if (st->memo.n) {
    uint64_t key[MGOPT__CE_KEY_CAP];
    int32_t nkey = mgopt__ce_key(op, key);
    mgopt__ce_memo *m = nkey < 0 ? NULL : mgopt__ce_lookup(st, op, mgopt__ce_hash(op, key, nkey), key, nkey);
    if (m) {
      for (i = 0; i < op->nouts; i++) {
        out[i] = mgopt__tensor_view(p, m->out[i], 0, m->out[i]->rank, m->out[i]->shape);
        if (!out[i]) break;
      }
      hit = i == op->nouts;
    }
  }
  if (!hit && (r = st->fold(p, op, out, st->ud)) != 1) return r;
  for (i = 0; i < op->nouts; i++)
    if (!out[i] || mgopt__ce_too_big(st, out[i]->rank, out[i]->numel) ||
        !mgopt__pu_replace_static_fits(p, op->outs[i], (mgopt_dtype)out[i]->dtype, out[i]->rank, out[i]->shape))
      return 0;
  /* keyed after folding: a kernel may have moved a misaligned operand's bytes */
  if (!hit) mgopt__ce_remember(p, st, op, out);
  return 1;
}

static mgopt_status mgopt__ce_run(mgopt_pass_ctx *ctx) {
  mgopt_rewrite_config cfg;
  mgopt_rewrite_stats stats;
  mgopt__ce_state st;
  mgopt_status s;
  if (!ctx->fold) return MGOPT_OK; /* no kernels: nothing can fold */
  st.fold = ctx->fold;
  st.ud = ctx->fold_ud;
  st.skip_by_size = ctx->opts[0].f;
  mgopt__map_init_flags(&st.memo, &ctx->program->alloc, MGOPT__MAP_HASHED);
  st.oom = 0;
  memset(&cfg, 0, sizeof cfg);
  memset(&stats, 0, sizeof stats);
  cfg.keep_dead = 1;
  cfg.fold = mgopt__ce_fold;
  cfg.fold_ud = &st;
  s = mgopt_rewrite_program(ctx->program, NULL, 0, &cfg, &stats, ctx->diag);
  mgopt__map_free(&st.memo);
  ctx->rewrites += stats.folds;
  return s;
}

static const mgopt_opt_def mgopt__ce_opts[] = {
    {"skip_const_by_size", MGOPT_OPT_FLOAT, "-1",
     "do not fold outputs of rank > 0 with more elements than this (-1: no limit)"},
};

MGOPT__DEFINE_PASS_WITH_OPTIONS(cleanup, common, const_elimination,
                                "replace ops whose operands are all constant by constants",
                                mgopt__ce_opts, mgopt__ce_run);
/* src/passes/cleanup/divide_to_multiply.c — common::divide_to_multiply: real_div by a constant becomes mul by its reciprocal.

   Spec: mil_graph_passes.txt, "Convert divide into multiply if the divisor is
   const"; reference mil-passes.md §3.26.

   Before:
     main(%x: (2, 3, fp32)) {
       %c: (3, fp32)* = const(val=[2.0, 4.0, 0.5])
       %y: (2, 3, fp32) = real_div(x=%x, y=%c)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %c: (3, fp32)* = const(val=[2, 4, 0.5])
       %_inversed_y_y: (3, fp32)* = const(val=[0.5, 0.25, 2])
       %y: (2, 3, fp32) = mul(x=%x, y=%_inversed_y_y)
     } -> (%y)

   Fires on: real_div whose y is produced by a `const` op (a value that is only
   computable is left for const_elimination first) and whose x and y have a
   float dtype. The reciprocal 1/y is computed element by element and rounded
   once to y's dtype (the double quotient rounds to fp16/fp32 exactly as a
   division in that dtype would). The mul is named "_inversed_<op>" (the op's
   name, else its output's); a function output keeps its name.
   Must not fire: integer dtypes (real_div on ints is not a multiply); when any
   reciprocal is not finite (a zero divisor, or a subnormal whose reciprocal
   overflows) — the division then stays as written.
   Cost: one worklist run; O(ops + constant elements). The old divisor stays for
   dead_code_elimination. */

static int mgopt__d2m_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y"), *inv, *ins[2];
  mgopt_tensor *t, *r;
  const char *base, *name;
  static const char *const slots[2] = {"x", "y"};
  mgopt_op *mul;
  int64_t i;
  MGOPT__UNUSED(ud);
  if (!x || !y || op->nouts != 1 || !mgopt__pu_def_of(y, MGOPT_OP_const)) return 0;
  t = mgopt_value_const(y);
  if (!t || t->numel < 1 || !mgopt_dtype_is_float((mgopt_dtype)x->type.dtype) ||
      !mgopt_dtype_is_float((mgopt_dtype)t->dtype))
    return 0;
  r = mgopt_tensor_new(p, (mgopt_dtype)t->dtype, t->rank, t->shape);
  if (!r) return 0;
  for (i = 0; i < t->numel; i++) {
    double v = 1.0 / mgopt_tensor_get_f64(t, i);
    mgopt_tensor_set_f64(r, i, v);
    if (!isfinite(v) || !isfinite(mgopt_tensor_get_f64(r, i))) return 0;
  }
  base = op->name ? op->name : mgopt__pu_value_name(op->outs[0]);
  name = mgopt__pu_name2(p, "_inversed_", base);
  inv = mgopt_rw_const(rw, op, mgopt__pu_name2(p, name, "_y"), r);
  if (!inv || !name) return 0;
  ins[0] = x;
  ins[1] = inv;
  mul = mgopt_rw_create(rw, op, "mul", name, 2, slots, ins, 1);
  if (!mul) return 0;
  /* the mul keeps the real_div's declared type: a more precise one could
     contradict what its users declared */
  if (mgopt_op_infer(p, mul, NULL) != MGOPT_OK || !mgopt__pu_adopt_type(p, mul->outs[0], op->outs[0])) {
    mgopt_rw_erase(rw, mul);
    mgopt_rw_erase(rw, inv->def);
    return 0;
  }
  mgopt_rw_replace_op(rw, op, mul->outs);
  mgopt__pu_sync_op_name(mul);
  return 1;
}

static const mgopt_pattern mgopt__d2m_patterns[] = {
    {"divide_to_multiply", MGOPT_OP_real_div, NULL, 1, mgopt__d2m_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, divide_to_multiply,
                           "real_div by a float constant becomes mul by its reciprocal", mgopt__d2m_patterns);
/* src/passes/cleanup/select_optimization.c — common::select_optimization: select with a constant condition becomes its input, or an add of masked ±inf.

   Spec: mil_graph_passes.txt, "For select(cond, a, b), there are 2 cases ...";
   reference mil-passes.md §3.27.

   Before:
     main(%b: (2, 2, fp32)) {
       %c: (2, 2, bool)* = const(val=[[true, false], [false, true]])
       %a: (fp32)* = const(val=-inf)
       %y: (2, 2, fp32) = select(cond=%c, a=%a, b=%b)
     } -> (%y)
   After:
     main(%b: (2, 2, fp32)) {
       %c: (2, 2, bool)* = const(val=[[true, false], [false, true]])
       %a: (fp32)* = const(val=-inf)
       %y_masked: (2, 2, fp32)* = const(val=[[-inf, 0], [0, -inf]])
       %y: (2, 2, fp32) = add(x=%y_masked, y=%b)
     } -> (%y)

   Fires on: select whose cond is produced by a const op (when a and b are
   both const too, nothing: const_elimination folds it).
     1. every element of cond true: the output is a; all false: b. Only when
        that input's type equals the output type (no broadcasting is lost).
        The chosen input replaces the output; an `identity` carries the name
        when the output is a function output fed by an input or another output.
     2. otherwise, a is a const whose every element is +inf or -inf (or b is,
        with cond negated): a is broadcast to cond's shape with the masked-out
        places set to 0, and select becomes add(masked, b) named after the
        select's output (inf + b = inf, -inf + b = -inf, 0 + b = b).
   Must not fire: a non-const cond; case 1 with broadcasting; case 2 with a
   finite or NaN element in the infinite side, a non-float dtype, or shapes that
   are not static.
   Cost: one worklist run; O(ops + constant elements). */

static int mgopt__selo_case1(mgopt_rewriter *rw, mgopt_op *op, mgopt_value *keep) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *out = op->outs[0];
  static const char *const slot[1] = {"x"};
  if (!mgopt_type_equal(&keep->type, &out->type) || !mgopt__pu_replace_fits(p, out, keep)) return 0;
  if (mgopt__pu_is_func_output(out) && (!keep->def || mgopt__pu_is_func_output(keep))) {
    mgopt_op *id = mgopt_rw_create(rw, op, "identity", mgopt__pu_name2(p, mgopt__pu_value_name(out), "_id"), 1,
                                   slot, &keep, 1);
    if (!id) return 0;
    if (mgopt_op_infer(p, id, NULL) != MGOPT_OK) {
      mgopt_rw_erase(rw, id);
      return 0;
    }
    keep = id->outs[0];
  }
  mgopt_rw_replace_op(rw, op, &keep);
  if (keep->def) mgopt__pu_sync_op_name(keep->def);
  return 1;
}

static int mgopt__selo_all_inf(const mgopt_tensor *t) {
  int64_t i;
  if (!t || t->numel < 1 || !mgopt_dtype_is_float((mgopt_dtype)t->dtype)) return 0;
  for (i = 0; i < t->numel; i++)
    if (!isinf(mgopt_tensor_get_f64(t, i))) return 0;
  return 1;
}

static int mgopt__selo_case2(mgopt_rewriter *rw, mgopt_op *op, const mgopt_tensor *cond, mgopt_value *inf_side,
                             mgopt_value *other, int negate) {
  mgopt_program *p = mgopt_rw_program(rw);
  const mgopt_tensor *a = mgopt_value_const(inf_side);
  int64_t shape[MGOPT_MAX_RANK] = {0};
  int32_t rank, i;
  int64_t k, n = 1;
  mgopt_tensor *m;
  mgopt_value *mv, *ins[2];
  mgopt_op *add;
  const char *oname = mgopt__pu_value_name(op->outs[0]);
  static const char *const slots[2] = {"x", "y"};
  if (!mgopt__selo_all_inf(a) || a->dtype != other->type.dtype) return 0;
  if (!mgopt__pu_broadcast(cond->shape, cond->rank, a->shape, a->rank, shape, &rank)) return 0;
  for (i = 0; i < rank; i++)
    if (!mgopt__mul_i64(n, shape[i], &n)) return 0;
  m = mgopt_tensor_new(p, (mgopt_dtype)a->dtype, rank, shape);
  if (!m) return 0;
  for (k = 0; k < n; k++) {
    int c = mgopt_tensor_get_f64(cond, mgopt__pu_bcast_index(shape, rank, cond->shape, cond->rank, k)) != 0.0;
    double v = mgopt_tensor_get_f64(a, mgopt__pu_bcast_index(shape, rank, a->shape, a->rank, k));
    mgopt_tensor_set_f64(m, k, (c != negate) ? v : 0.0);
  }
  mv = mgopt_rw_const(rw, op, mgopt__pu_name2(p, oname, "_masked"), m);
  if (!mv) return 0;
  ins[0] = mv;
  ins[1] = other;
  add = mgopt_rw_create(rw, op, "add", oname, 2, slots, ins, 1);
  if (!add || mgopt_op_infer(p, add, NULL) != MGOPT_OK || !mgopt_type_equal(&add->outs[0]->type, &op->outs[0]->type)) {
    if (add) mgopt_rw_erase(rw, add);
    mgopt_rw_erase(rw, mv->def);
    return 0;
  }
  mgopt_rw_replace_op(rw, op, add->outs);
  return 1;
}

static int mgopt__selo_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *c = mgopt_op_operand(op, "cond"), *a = mgopt_op_operand(op, "a"), *b = mgopt_op_operand(op, "b");
  const mgopt_tensor *ct;
  int64_t i, ntrue = 0;
  MGOPT__UNUSED(ud);
  if (!c || !a || !b || op->nouts != 1 || !mgopt__pu_def_of(c, MGOPT_OP_const)) return 0;
  ct = mgopt_value_const(c);
  if (!ct || ct->numel < 1 || ct->dtype == MGOPT_DT_STRING) return 0;
  if (mgopt_value_const(a) && mgopt_value_const(b)) return 0;
  for (i = 0; i < ct->numel; i++)
    if (mgopt_tensor_get_f64(ct, i) != 0.0) ntrue++;
  if (ntrue == ct->numel && mgopt__selo_case1(rw, op, a)) return 1;
  if (ntrue == 0 && mgopt__selo_case1(rw, op, b)) return 1;
  if (mgopt__selo_all_inf(mgopt_value_const(a))) return mgopt__selo_case2(rw, op, ct, a, b, 0);
  if (mgopt__selo_all_inf(mgopt_value_const(b))) return mgopt__selo_case2(rw, op, ct, b, a, 1);
  return 0;
}

static const mgopt_pattern mgopt__selo_patterns[] = {
    {"select_optimization", MGOPT_OP_select, NULL, 1, mgopt__selo_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, select_optimization,
                           "select with a constant condition becomes one of its inputs, or an add of masked infinities",
                           mgopt__selo_patterns);
/* src/passes/cleanup/rank0_expand_dims_swap.c — common::rank0_expand_dims_swap: a rank-0 binary op followed by expand_dims([0]) runs on rank-1 operands instead.

   Spec: mil_graph_passes.txt, "Identify the pattern of a rank-0 binary
   elementwise operation followed by an expand_dims op"; reference
   mil-passes.md §3.33.

   Before:
     main(%x: (fp32)) {
       %c: (fp32)* = const(val=1.5)
       %s: (fp32) = sub(x=%x, y=%c)
       %e: (1, fp32) = expand_dims(x=%s, axes=[0])
       %r: (fp32) = relu(x=%s)
     } -> (%e, %r)
   After:
     main(%x: (fp32)) {
       %c: (fp32)* = const(val=1.5)
       %x_expanded: (1, fp32) = expand_dims(x=%x, axes=[0])
       %c_expanded: (1, fp32) = expand_dims(x=%c, axes=[0])
       %e: (1, fp32) = sub(x=%x_expanded, y=%c_expanded)
       %s: (fp32) = squeeze(x=%e, axes=[0])
       %r: (fp32) = relu(x=%s)
     } -> (%e, %r)

   Fires on: add, sub, mul, real_div or floor_div whose x and y are both rank 0
   with exactly one of them produced by a const op, whose output is not a block
   output and has exactly one expand_dims(axes=[0]) consumer (other consumers
   are allowed: they read squeeze(new, axes=[0]), which takes the old name).
   The new op is named after the expand_dims output. Expanding the constant
   is left for const_elimination.
   Must not fire: two or zero constant operands, a rank other than 0, a block
   output, no or several expand_dims([0]) consumers, other axes.
   Cost: one worklist run; O(ops + uses). */

static int mgopt__r0s_is_expand0(const mgopt_op *op) {
  const int64_t *ax;
  int64_t n;
  if (op->kind != MGOPT_OP_expand_dims || op->nouts != 1) return 0;
  n = mgopt_op_get_ints(op->program, op, "axes", &ax);
  return n == 1 && ax[0] == 0;
}

static int mgopt__r0s_rank0(const mgopt_value *v) {
  return v->type.kind == MGOPT_TYPE_TENSOR && v->type.rank == 0;
}

static mgopt_op *mgopt__r0s_expand(mgopt_rewriter *rw, mgopt_op *pos, mgopt_value *v) {
  mgopt_program *p = mgopt_rw_program(rw);
  static const char *const slot[1] = {"x"};
  int64_t zero = 0;
  mgopt_op *e = mgopt_rw_create(rw, pos, "expand_dims", mgopt__pu_name2(p, mgopt__pu_value_name(v), "_expanded"),
                                1, slot, &v, 1);
  if (!e) return NULL;
  if (mgopt_op_set_ints(e, "axes", &zero, 1) || mgopt_op_infer(p, e, NULL)) {
    mgopt_rw_erase(rw, e);
    return NULL;
  }
  return e;
}

static int mgopt__r0s_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y"), *out, *ins[2];
  mgopt_op *exp_op = NULL, *ex, *ey, *nop, *sq = NULL;
  mgopt_use *u;
  int32_t nexp = 0, nother = 0;
  static const char *const slots[2] = {"x", "y"};
  MGOPT__UNUSED(ud);
  if (!x || !y || op->nouts != 1 || op->nslots != 2) return 0;
  if (!mgopt__r0s_rank0(x) || !mgopt__r0s_rank0(y)) return 0;
  if ((mgopt__pu_def_of(x, MGOPT_OP_const) != NULL) == (mgopt__pu_def_of(y, MGOPT_OP_const) != NULL)) return 0;
  out = op->outs[0];
  if (mgopt__pu_is_block_output(out)) return 0;
  for (u = out->uses; u; u = u->next) {
    if (mgopt__r0s_is_expand0(u->op)) {
      exp_op = u->op;
      nexp++;
    } else {
      nother++;
    }
  }
  if (nexp != 1) return 0;
  ex = mgopt__r0s_expand(rw, op, x);
  if (!ex) return 0;
  ey = mgopt__r0s_expand(rw, op, y);
  if (!ey) {
    mgopt_rw_erase(rw, ex);
    return 0;
  }
  ins[0] = ex->outs[0];
  ins[1] = ey->outs[0];
  nop = mgopt_rw_create(rw, op, op->type, mgopt__pu_value_name(exp_op->outs[0]), 2, slots, ins, 1);
  if (!nop || mgopt_op_infer(p, nop, NULL) || !mgopt_type_equal(&nop->outs[0]->type, &exp_op->outs[0]->type)) {
    if (nop) mgopt_rw_erase(rw, nop);
    mgopt_rw_erase(rw, ey);
    mgopt_rw_erase(rw, ex);
    return 0;
  }
  if (nother) {
    static const char *const slot[1] = {"x"};
    int64_t zero = 0;
    sq = mgopt_rw_create(rw, op, "squeeze", mgopt__pu_value_name(out), 1, slot, &nop->outs[0], 1);
    if (!sq) return 1; /* OOM: the rewriter reports it */
    mgopt_op_set_ints(sq, "axes", &zero, 1);
    mgopt_op_infer(p, sq, NULL);
  }
  mgopt_rw_replace_op(rw, exp_op, nop->outs);
  if (sq) mgopt_rw_replace_op(rw, op, sq->outs);
  else mgopt_rw_erase(rw, op);
  return 1;
}

static const mgopt_pattern mgopt__r0s_patterns[] = {
    {"rank0_expand_dims_swap", MGOPT_OP_add, NULL, 1, mgopt__r0s_rewrite, NULL},
    {"rank0_expand_dims_swap", MGOPT_OP_sub, NULL, 1, mgopt__r0s_rewrite, NULL},
    {"rank0_expand_dims_swap", MGOPT_OP_mul, NULL, 1, mgopt__r0s_rewrite, NULL},
    {"rank0_expand_dims_swap", MGOPT_OP_real_div, NULL, 1, mgopt__r0s_rewrite, NULL},
    {"rank0_expand_dims_swap", MGOPT_OP_floor_div, NULL, 1, mgopt__r0s_rewrite, NULL},
};

/* the patterns match only where one of these is */
static const int32_t mgopt__r0s_needs[] = {MGOPT_OP_expand_dims};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(cleanup, common, rank0_expand_dims_swap,
                                   "a rank-0 binary op followed by expand_dims([0]) computes on expanded operands instead",
                                   mgopt__r0s_patterns, mgopt__r0s_needs);
/* src/passes/cleanup/expand_high_rank_reshape_and_transpose.c — common::expand_high_rank_reshape_and_transpose: a rank >= 6 reshape/transpose/reshape becomes a chain of rank <= 5 ops.

   Spec: mil_graph_passes.txt, "Detect the pattern reshape_1 --> transpose -->
   reshape_2 ..."; reference mil-passes.md §3.32.

   Before:
     main(%x: (1, 2, 3, 4, 5, fp32)) {
       %s1: (6, int32)* = const(val=[1, 2, 3, 2, 2, 5])
       %r1: (1, 2, 3, 2, 2, 5, fp32) = reshape(x=%x, shape=%s1)
       %t: (2, 5, 2, 3, 1, 2, fp32) = transpose(x=%r1, perm=[4, 5, 3, 2, 0, 1])
       %s2: (2, int32)* = const(val=[5, 24])
       %y: (5, 24, fp32) = reshape(x=%t, shape=%s2)
     } -> (%y)
   After:
     main(%x: (1, 2, 3, 4, 5, fp32)) {
       %s1: (6, int32)* = const(val=[1, 2, 3, 2, 2, 5])
       %r1_shape: (4, int32)* = const(val=[2, 3, 2, 10])
       %r1_reshaped: (2, 3, 2, 10, fp32) = reshape(x=%x, shape=%r1_shape)
       %t_transposed: (10, 2, 3, 2, fp32) = transpose(x=%r1_reshaped, perm=[3, 2, 1, 0])
       %s2: (2, int32)* = const(val=[5, 24])
       %y: (5, 24, fp32) = reshape(x=%t_transposed, shape=%s2)
     } -> (%y)

   Fires on: reshape with a static output of rank >= 6 (not a block output)
   whose single consumer is a transpose (not a block output) whose single
   consumer is a reshape with an output rank <= 5. Runs of consecutive axes
   in perm are merged first (their sizes multiply). When that leaves rank < 6:
   reshape(merged shape) -> transpose(merged perm) -> the last reshape. Else
   each axis is moved into place by reshape([lead, before, axis, after]) ->
   transpose([0, 2, 1, 3]) in turn, then the last reshape.
   Must not fire: a non-static or rank < 6 first output; a block output or a
   second consumer in the chain; a last rank above 5; an empty tensor; when
   the last reshape's declared type does not hold for the new chain's static
   type (the transpose's declared type had symbolic dims hiding that).
   Cost: one worklist run; O(ops + rank^2) per match. The first reshape and
   transpose become dead and are erased. */

#define MGOPT__EHR_MAX 64

/* The ops a rewrite has built so far, erased again if it cannot finish. */
typedef struct mgopt__ehr_made {
  mgopt_op *op[3 * MGOPT__EHR_MAX];
  int32_t n;
} mgopt__ehr_made;

static mgopt_value *mgopt__ehr_reshape(mgopt_rewriter *rw, mgopt_op *pos, mgopt_value *x, const int64_t *shape,
                                       int32_t n, const char *base, mgopt__ehr_made *made) {
  mgopt_program *p = mgopt_rw_program(rw);
  static const char *const slots[2] = {"x", "shape"};
  mgopt_value *ins[2];
  mgopt_tensor *t = mgopt__pu_const_i32_1d(p, shape, n);
  mgopt_op *r;
  if (!t) return NULL;
  ins[0] = x;
  ins[1] = mgopt_rw_const(rw, pos, mgopt__pu_name2(p, base, "_shape"), t);
  if (!ins[1]) return NULL;
  made->op[made->n++] = ins[1]->def;
  r = mgopt_rw_create(rw, pos, "reshape", mgopt__pu_name2(p, base, "_reshaped"), 2, slots, ins, 1);
  if (!r) return NULL;
  made->op[made->n++] = r;
  return mgopt_op_infer(p, r, NULL) ? NULL : r->outs[0];
}

static mgopt_value *mgopt__ehr_transpose(mgopt_rewriter *rw, mgopt_op *pos, mgopt_value *x, const int64_t *perm,
                                         int32_t n, const char *base, mgopt__ehr_made *made) {
  mgopt_program *p = mgopt_rw_program(rw);
  static const char *const slot[1] = {"x"};
  mgopt_op *t = mgopt_rw_create(rw, pos, "transpose", mgopt__pu_name2(p, base, "_transposed"), 1, slot, &x, 1);
  if (!t) return NULL;
  made->op[made->n++] = t;
  if (mgopt_op_set_ints(t, "perm", perm, n) || mgopt_op_infer(p, t, NULL)) return NULL;
  return t->outs[0];
}

static int mgopt__ehr_rewrite(mgopt_rewriter *rw, mgopt_op *r1, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  int64_t shape[MGOPT__EHR_MAX], nshape[MGOPT__EHR_MAX], nperm[MGOPT__EHR_MAX], gstart[MGOPT__EHR_MAX],
      gend[MGOPT__EHR_MAX], order[MGOPT__EHR_MAX];
  const int64_t *perm;
  int32_t rank, ng = 0, i, j;
  mgopt_op *tr, *r2;
  mgopt_value *cur;
  const char *b1, *bt;
  mgopt__ehr_made made;
  MGOPT__UNUSED(ud);
  made.n = 0;
  if (r1->nouts != 1 || mgopt__pu_is_block_output(r1->outs[0])) return 0;
  if (!mgopt__pu_static_shape(&r1->outs[0]->type, shape, MGOPT__EHR_MAX)) return 0;
  rank = r1->outs[0]->type.rank;
  if (rank < 6) return 0;
  tr = mgopt__pu_single_user(r1->outs[0]);
  if (!tr || tr->kind != MGOPT_OP_transpose || tr->nouts != 1 || mgopt__pu_is_block_output(tr->outs[0])) return 0;
  if (mgopt_op_operand(tr, "x") != r1->outs[0]) return 0;
  r2 = mgopt__pu_single_user(tr->outs[0]);
  if (!r2 || r2->kind != MGOPT_OP_reshape || mgopt_op_operand(r2, "x") != tr->outs[0]) return 0;
  if (r2->outs[0]->type.rank < 0 || r2->outs[0]->type.rank > 5) return 0;
  if (mgopt_op_get_ints(p, tr, "perm", &perm) != rank) return 0;
  {
    /* r1's declared shape must hold as many elements as its input, or the
       new reshapes do not type check (r1's own shape may be computed at run
       time); an empty tensor is left alone (a 0 in a reshape's shape is not
       a size) */
    int64_t in = mgopt_type_numel(&mgopt_op_operand(r1, "x")->type), vol = 1;
    for (i = 0; i < rank; i++)
      if (!mgopt__mul_i64(vol, shape[i], &vol)) return 0;
    if ((in >= 0 && in != vol) || vol == 0) return 0;
  }
  for (i = 0; i < rank; i++) {
    int64_t a = perm[i] < 0 ? perm[i] + rank : perm[i];
    if (a < 0 || a >= rank) return 0;
    if (ng > 0 && gend[ng - 1] + 1 == a) gend[ng - 1] = a;
    else {
      gstart[ng] = a;
      gend[ng] = a;
      ng++;
    }
  }
  /* groups sorted by start axis give the merged shape; perm indexes into that order */
  for (i = 0; i < ng; i++) order[i] = i;
  for (i = 1; i < ng; i++) {
    int64_t x = order[i];
    for (j = i; j > 0 && gstart[order[j - 1]] > gstart[x]; j--) order[j] = order[j - 1];
    order[j] = x;
  }
  for (i = 0; i < ng; i++) {
    int64_t g = order[i], k, prod = 1;
    for (k = gstart[g]; k <= gend[g]; k++) prod *= shape[k];
    nshape[i] = prod;
    nperm[g] = i; /* group g (in perm order) sits at merged axis i */
  }
  b1 = mgopt__pu_value_name(r1->outs[0]);
  bt = mgopt__pu_value_name(tr->outs[0]);
  if (ng < 6) {
    cur = mgopt__ehr_reshape(rw, r1, mgopt_op_operand(r1, "x"), nshape, ng, b1, &made);
    if (cur) cur = mgopt__ehr_transpose(rw, r1, cur, nperm, ng, bt, &made);
  } else {
    int64_t lead = 1;
    uint8_t memo[MGOPT__EHR_MAX];
    static const int64_t swap[4] = {0, 2, 1, 3};
    memset(memo, 0, sizeof memo);
    cur = mgopt_op_operand(r1, "x");
    for (i = 0; i < ng && cur; i++) {
      int64_t ax = nperm[i], before = 1, after = 1, s4[4];
      for (j = 0; j < ng; j++) {
        if (memo[j] || j == ax) continue;
        if (j < ax) before *= nshape[j];
        else after *= nshape[j];
      }
      s4[0] = lead;
      s4[1] = before;
      s4[2] = nshape[ax];
      s4[3] = after;
      cur = mgopt__ehr_reshape(rw, r1, cur, s4, 4, b1, &made);
      if (cur) cur = mgopt__ehr_transpose(rw, r1, cur, swap, 4, bt, &made);
      lead *= nshape[ax];
      memo[ax] = 1;
    }
  }
  /* the last reshape must still type check reading the new chain's static
     type (the transpose's declared one may have hidden a contradiction) */
  if (cur && !mgopt__pu_uses_accept(p, tr->outs[0], &cur->type, NULL)) cur = NULL;
  if (!cur) { /* out of memory, or a type the ops refuse: take the new ops back, change nothing */
    while (made.n > 0) mgopt_rw_erase(rw, made.op[--made.n]);
    return 0;
  }
  mgopt_rw_set_operand(rw, r2, "x", cur);
  mgopt__pu_erase_if_dead(rw, tr);
  mgopt__pu_erase_if_dead(rw, r1);
  return 1;
}

static const mgopt_pattern mgopt__ehr_patterns[] = {
    {"expand_high_rank_reshape_and_transpose", MGOPT_OP_reshape, NULL, 1, mgopt__ehr_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, expand_high_rank_reshape_and_transpose,
                           "a rank >= 6 reshape/transpose/reshape becomes a chain of rank <= 5 reshapes and transposes",
                           mgopt__ehr_patterns);
/* src/passes/cleanup/add_conv_transpose_output_shape.c — common::add_conv_transpose_output_shape: give conv_transpose an explicit output_shape when its output shape is static.

   Spec: mil_graph_passes.txt, "The conv_transpose input output_shape is an
   optional input ..."; reference mil-passes.md §3.33.

   Before:
     main(%x: (1, 5, 10, fp32)) {
       %w: (5, 5, 3, fp32)* = const(val=[[[1, 0, 1], [0, 1, 0], [1, 1, 1], [0, 0, 0], [1, 0, 0]], [[0, 1, 0], [1, 0, 1], [0, 0, 1], [1, 1, 0], [0, 1, 1]], [[1, 1, 0], [0, 1, 1], [1, 0, 0], [0, 0, 1], [1, 0, 1]], [[0, 0, 1], [1, 0, 0], [0, 1, 1], [1, 1, 1], [0, 1, 0]], [[1, 0, 0], [0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 1]]])
       %y: (1, 5, 21, fp32) = conv_transpose(x=%x, weight=%w, strides=[2], pad_type="valid")
     } -> (%y)
   After:
     main(%x: (1, 5, 10, fp32)) {
       %w: (5, 5, 3, fp32)* = const(val=[[[1, 0, 1], [0, 1, 0], [1, 1, 1], [0, 0, 0], [1, 0, 0]], [[0, 1, 0], [1, 0, 1], [0, 0, 1], [1, 1, 0], [0, 1, 1]], [[1, 1, 0], [0, 1, 1], [1, 0, 0], [0, 0, 1], [1, 0, 1]], [[0, 0, 1], [1, 0, 0], [0, 1, 1], [1, 1, 1], [0, 1, 0]], [[1, 0, 0], [0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 1]]])
       %y: (1, 5, 21, fp32) = conv_transpose(x=%x, weight=%w, strides=[2], pad_type="valid", output_shape=[1, 5, 21])
     } -> (%y)

   Fires on: conv_transpose with no output_shape (neither attribute nor
   operand) whose output type is static: output_shape (a parameter MIL declares
   const, so an attribute) is set to that shape, in place.
   Must not fire: an output shape with a symbolic or unknown dim; an op that
   already has output_shape.
   Cost: one worklist run, O(ops). */

static int mgopt__acts_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  int64_t shape[MGOPT_MAX_RANK];
  MGOPT__UNUSED(ud);
  if (op->nouts != 1 || mgopt_op_attr(op, "output_shape") || mgopt_op_slot_index(op, "output_shape") >= 0) return 0;
  if (!mgopt__pu_static_shape(&op->outs[0]->type, shape, MGOPT_MAX_RANK)) return 0;
  if (mgopt_op_set_ints(op, "output_shape", shape, op->outs[0]->type.rank)) return 0;
  mgopt_rw_modified(rw, op);
  return 1;
}

static const mgopt_pattern mgopt__acts_patterns[] = {
    {"add_conv_transpose_output_shape", MGOPT_OP_conv_transpose, NULL, 1, mgopt__acts_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, add_conv_transpose_output_shape,
                           "give conv_transpose an explicit output_shape when its output shape is static",
                           mgopt__acts_patterns);
/* src/passes/io/sanitize_input_output_names.c — common::sanitize_input_output_names: main's inputs and outputs get valid, unique identifiers.

   Spec: mil_graph_passes.txt, "Sanitize the names of model input and output
   vars ..."; reference mil-passes.md §3.34. This pass changes names on purpose.

   Before:
     main(%"x/0": (2, fp32), %"1st": (2, fp32)) {
       %"out/1": (2, fp32) = add(x=%"x/0", y=%"1st")
       %fp16: (2, fp32) = relu(x=%"out/1")
     } -> (%"out/1", %fp16)
   After:
     main(%x_0: (2, fp32), %var_1st: (2, fp32)) {
       %out_1: (2, fp32) = add(x=%x_0, y=%var_1st)
       %fp16_workaround: (2, fp32) = relu(x=%out_1)
     } -> (%out_1, %fp16_workaround)

   Fires on: inputs (first) and then outputs of function `main` whose names are
   not of the form [A-Za-z_][A-Za-z0-9_]* or are reserved words of the MIL
   text format. Each character outside [A-Za-z0-9_] becomes '_'; a name that
   does not start with a letter or '_' gets the prefix "var_"; reserved words
   (any bool program func tensor list dict tuple true false string bf16 fp16
   fp32 fp64 int8 int16 int32 int64 uint8 uint16 uint32 uint64 state) get the
   suffix "_workaround". A changed name that collides with any value name of
   main gets "_0", then "_1", ... appended cumulatively until it is free.
   Must not fire: valid names; other functions (their signatures stay).
   Cost: O(inputs + outputs) when every name is valid; at the first rename,
   O(values of main) once for the set of names in use. */

static const char *const mgopt__sio_reserved[] = {
    "any",   "bool",  "program", "func",  "tensor", "list",   "dict",   "tuple",  "true",
    "false", "string", "bf16",   "fp16",  "fp32",   "fp64",   "int8",   "int16",  "int32",
    "int64", "uint8", "uint16",  "uint32", "uint64", "state"};

/* a set of interned name pointers */
typedef struct mgopt__sio_set {
  mgopt__map map;
  mgopt_block *body; /* its names are collected at the first rename (none when every io name is valid) */
  int oom;
} mgopt__sio_set;

static void mgopt__sio_add(mgopt__sio_set *s, const char *k) {
  if (!k || s->oom) return;
  if (!mgopt__map_get(&s->map, mgopt__map_ptr_key(k), NULL)) s->oom = 1;
}

static int mgopt__sio_has(const mgopt__sio_set *s, const char *k) {
  return mgopt__map_find(&s->map, mgopt__map_ptr_key(k)) != NULL;
}

static void mgopt__sio_collect(mgopt__sio_set *s, mgopt_block *b, int depth) {
  mgopt_op *op;
  int32_t i;
  if (depth > 256) return;
  for (i = 0; i < b->nargs; i++) mgopt__sio_add(s, b->args[i]->name);
  for (op = b->first; op; op = op->next) {
    for (i = 0; i < op->nouts; i++) mgopt__sio_add(s, op->outs[i]->name);
    for (i = 0; i < op->nblocks; i++) mgopt__sio_collect(s, op->blocks[i], depth + 1);
  }
}

static int mgopt__sio_ok_char(char c, int first) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') return 1;
  return !first && c >= '0' && c <= '9';
}

/* renames v if needed; 1 if renamed, -1 on OOM */
static int mgopt__sio_fix(mgopt_program *p, mgopt__sio_set *names, mgopt_value *v) {
  char buf[512];
  const char *name = v->name ? v->name : "";
  size_t n = strlen(name), len = 0, i;
  const char *nn;
  int changed = 0;
  if (n > 400) n = 400;
  if (n == 0 || !mgopt__sio_ok_char(name[0], 1)) {
    memcpy(buf, "var_", 4);
    len = 4;
    changed = 1;
  }
  for (i = 0; i < n; i++) {
    char c = name[i];
    if (!mgopt__sio_ok_char(c, 0)) {
      c = '_';
      changed = 1;
    }
    buf[len++] = c;
  }
  if (n < strlen(name)) changed = 1;
  buf[len] = 0;
  for (i = 0; i < sizeof mgopt__sio_reserved / sizeof mgopt__sio_reserved[0]; i++)
    if (strcmp(buf, mgopt__sio_reserved[i]) == 0) {
      memcpy(buf + len, "_workaround", 12);
      len += 11;
      changed = 1;
      break;
    }
  if (!changed) return 0;
  if (names->body) {
    mgopt__sio_collect(names, names->body, 0);
    names->body = NULL;
  }
  nn = mgopt_program_intern(p, buf, len);
  {
    unsigned k = 0;
    while (nn && mgopt__sio_has(names, nn) && len < sizeof buf - 24) {
      len += (size_t)snprintf(buf + len, sizeof buf - len, "_%u", k++);
      nn = mgopt_program_intern(p, buf, len);
    }
  }
  if (!nn) return -1;
  mgopt__pu_rename(v, nn);
  mgopt__sio_add(names, nn);
  return names->oom ? -1 : 1;
}

static mgopt_status mgopt__sio_run(mgopt_pass_ctx *ctx) {
  mgopt_program *p = ctx->program;
  mgopt_function *f = mgopt_program_function(p, "main");
  mgopt__sio_set names;
  mgopt_status s = MGOPT_OK;
  int32_t i;
  if (!f) return MGOPT_OK;
  memset(&names, 0, sizeof names);
  mgopt__map_init(&names.map, &p->alloc);
  names.body = f->body;
  for (i = 0; i < f->body->nargs + f->body->nouts && !s; i++) {
    mgopt_value *v = i < f->body->nargs ? f->body->args[i] : f->body->outs[i - f->body->nargs]->value;
    int r = names.oom ? -1 : mgopt__sio_fix(p, &names, v);
    if (r < 0) s = mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "sanitize_input_output_names: out of memory");
    else ctx->rewrites += r;
  }
  mgopt__map_free(&names.map);
  return s;
}

MGOPT__DEFINE_PASS(io, common, sanitize_input_output_names,
                   "main's input and output names become valid, unique identifiers", mgopt__sio_run);
/* src/passes/io/update_output_dtypes.c — common::update_output_dtypes{dtypes=fp16}: cast main's outputs to the requested dtypes.

   Spec: mil_graph_passes.txt, "Update the dtypes of output vars of each
   function block to match the dtypes provided in function.output_types";
   reference mil-passes.md §3.34. This pass changes output dtypes on purpose.

   Before:
     main(%x: (2, 3, fp32)) {
       %y: (2, 3, fp32) = relu(x=%x)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %y_type_fp32: (2, 3, fp32) = relu(x=%x)
       %y: (2, 3, fp16) = cast(x=%y_type_fp32, dtype="fp16")
     } -> (%y)

   Option `dtypes`: the requested dtype of each output of `main`, in order,
   comma-separated ("fp16,int32"); an empty entry keeps that output as it is.
   Empty option: nothing to do. A count that differs from main's output count,
   or an unknown dtype name, is an error (MGOPT_ERR_INVALID_ARG).
   Fires on: each output whose requested dtype differs from its dtype. The
   output value is renamed "<name>_type_<old dtype>" and a cast to the requested
   dtype, appended at the end of main, takes the original name. An output
   listed twice gets one cast per requested dtype (later ones fresh-named).
   Must not fire: an output that is also an input of main (its name and type are
   the input's: left unchanged, as the reference does); non-tensor outputs.
   Cost: O(outputs). */

static mgopt_opt_def const mgopt__uod_opts[1] = {
    {"dtypes", MGOPT_OPT_STRING, "", "comma-separated dtype per output of main (empty entry: keep)"}};

static mgopt_status mgopt__uod_run(mgopt_pass_ctx *ctx) {
  mgopt_program *p = ctx->program;
  mgopt_function *f = mgopt_program_function(p, "main");
  const char *spec = ctx->opts[0].s ? ctx->opts[0].s : "", *q;
  mgopt_dtype want[256];
  mgopt_value *orig_v[256];
  const char *orig_name[256];
  int32_t n = 0, i;
  if (!f || !*spec) return MGOPT_OK;
  memset((void *)orig_name, 0, sizeof orig_name);
  for (q = spec;;) {
    size_t len = strcspn(q, ",");
    size_t a = 0, b = len;
    while (a < b && q[a] == ' ') a++;
    while (b > a && q[b - 1] == ' ') b--;
    if (n >= 256) return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "update_output_dtypes: too many dtypes");
    if (a == b) want[n] = MGOPT_DT_UNKNOWN;
    else {
      want[n] = mgopt_dtype_from_name(q + a, b - a);
      if (want[n] == MGOPT_DT_UNKNOWN || want[n] == MGOPT_DT_STRING)
        return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "update_output_dtypes: unknown dtype '%.*s'",
                              (int)(b - a), q + a);
    }
    n++;
    if (!q[len]) break;
    q += len + 1;
  }
  if (n != f->body->nouts)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG,
                          "update_output_dtypes: %d dtypes given, main has %d outputs", (int)n, (int)f->body->nouts);
  for (i = 0; i < n; i++) orig_v[i] = f->body->outs[i]->value;
  for (i = 0; i < n; i++) {
    mgopt_value *v = orig_v[i];
    const char *cname;
    char buf[320];
    mgopt_op *c;
    int32_t k;
    static const char *const slot[1] = {"x"};
    if (want[i] == MGOPT_DT_UNKNOWN || !v || v->type.kind != MGOPT_TYPE_TENSOR || v->type.dtype == want[i]) continue;
    if (!v->def) continue; /* an input returned as an output keeps its name and type */
    orig_name[i] = mgopt__pu_value_name(v);
    cname = orig_name[i];
    for (k = 0; k < i; k++)
      if (orig_v[k] == v && orig_name[k]) cname = NULL; /* renamed already: the new cast gets a fresh name */
    if (cname) {
      snprintf(buf, sizeof buf, "%.200s_type_%s", cname, mgopt_dtype_name((mgopt_dtype)v->type.dtype));
      mgopt__pu_rename(v, mgopt__pu_name2(p, buf, NULL));
    } else {
      for (k = 0; k < i; k++)
        if (orig_v[k] == v && orig_name[k]) break;
      cname = mgopt_program_fresh_name(p, orig_name[k]);
      orig_name[i] = orig_name[k];
    }
    c = mgopt_build_op(p, f->body, NULL, "cast", cname, 1, slot, &v, 1);
    if (!c || mgopt_op_set_string(c, "dtype", mgopt_dtype_name(want[i])))
      return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "update_output_dtypes: out of memory");
    if (mgopt_op_infer(p, c, ctx->diag)) return ctx->diag ? ctx->diag->status : MGOPT_ERR_TYPE;
    mgopt_block_set_output(f->body, i, c->outs[0]);
    ctx->rewrites++;
  }
  return MGOPT_OK;
}

MGOPT__DEFINE_PASS_WITH_OPTIONS(io, common, update_output_dtypes,
                                "cast main's outputs to the requested dtypes",
                                mgopt__uod_opts, mgopt__uod_run);
/* src/passes/io/image_input_preprocess.c — common::image_input_preprocess{nhwc_inputs=img}: NHWC image inputs of main become NCHW, with a transpose back.

   Spec: mil_graph_passes.txt, "Plug in to transpose image input in NHWC format
   to NCHW format"; reference mil-passes.md §3.34. This pass changes input
   types on purpose.

   Before:
     main(%img: (1, 4, 6, 3, fp32)) {
       %y: (1, 4, 6, 3, fp32) = relu(x=%img)
     } -> (%y)
   After:
     main(%img: (1, 3, 4, 6, fp32)) {
       %img__transpose_from_nchw__: (1, 4, 6, 3, fp32) = transpose(x=%img, perm=[0, 2, 3, 1])
       %y: (1, 4, 6, 3, fp32) = relu(x=%img__transpose_from_nchw__)
     } -> (%y)

   Option `nhwc_inputs`: the names of main's inputs that are channel-last
   images, comma-separated. Empty: nothing to do. A name that is not an input
   of main, or an input of rank < 3, is an error (MGOPT_ERR_INVALID_ARG).
   Fires on: each listed input: its type [..., H, W, C] becomes [..., C, H, W]
   (symbolic dims move with their axis) and
   transpose(perm = [0 .. r-4, r-2, r-1, r-3]) named "<in>__transpose_from_nchw__"
   is inserted at the top of main; every former use reads the transpose (an
   output of main that was the input itself now returns the transposed value,
   so its values keep their layout).
   Must not fire: inputs not listed; functions other than main.
   Cost: O(inputs + uses of the listed inputs). */

static mgopt_opt_def const mgopt__iip_opts[1] = {
    {"nhwc_inputs", MGOPT_OPT_STRING, "", "comma-separated names of main's NHWC image inputs"}};

static mgopt_status mgopt__iip_one(mgopt_pass_ctx *ctx, mgopt_function *f, mgopt_value *x) {
  mgopt_program *p = ctx->program;
  int32_t r = x->type.rank, i;
  int64_t perm[MGOPT_MAX_RANK];
  mgopt_dim dims[MGOPT_MAX_RANK], c;
  mgopt_op *t;
  mgopt_use *u, *next;
  char buf[320];
  if (x->type.kind != MGOPT_TYPE_TENSOR || r < 3 || r > MGOPT_MAX_RANK)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG,
                          "image_input_preprocess: input '%s' is not an image tensor of rank >= 3", x->name);
  for (i = 0; i < r; i++) {
    perm[i] = i;
    dims[i] = x->type.dims[i];
  }
  perm[r - 3] = r - 2;
  perm[r - 2] = r - 1;
  perm[r - 1] = r - 3;
  snprintf(buf, sizeof buf, "%.280s__transpose_from_nchw__", x->name);
  t = mgopt_op_new(p, "transpose", 1, 0);
  if (!t) return mgopt__oom(p);
  mgopt_op_set_name(t, buf);
  mgopt_value_set_name(t->outs[0], buf);
  if (mgopt__type_copy(p, &t->outs[0]->type, &x->type)) return mgopt__oom(p);
  /* rewire every use of x before the transpose reads it */
  for (u = x->uses; u; u = next) {
    next = u->next;
    mgopt__use_link(u, t->outs[0]);
  }
  if (mgopt_op_set_operand(t, "x", x) || mgopt_op_set_ints(t, "perm", perm, r)) return mgopt__oom(p);
  if (f->body->first) mgopt_op_insert_before(t, f->body->first);
  else mgopt_op_append(t, f->body);
  /* NCHW input type: [..., C, H, W] */
  c = dims[r - 1];
  dims[r - 1] = dims[r - 2];
  dims[r - 2] = dims[r - 3];
  dims[r - 3] = c;
  if (mgopt_type_make(p, &x->type, (mgopt_dtype)x->type.dtype, r, dims)) return mgopt__oom(p);
  if (mgopt_op_infer(p, t, ctx->diag)) return ctx->diag ? ctx->diag->status : MGOPT_ERR_TYPE;
  ctx->rewrites++;
  return MGOPT_OK;
}

static mgopt_status mgopt__iip_run(mgopt_pass_ctx *ctx) {
  mgopt_program *p = ctx->program;
  mgopt_function *f = mgopt_program_function(p, "main");
  const char *q = ctx->opts[0].s ? ctx->opts[0].s : "";
  if (!*q) return MGOPT_OK;
  if (!f) return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "image_input_preprocess: no function main");
  for (;;) {
    size_t len = strcspn(q, ","), a = 0, b = len;
    int32_t i;
    mgopt_value *x = NULL;
    mgopt_status s;
    while (a < b && q[a] == ' ') a++;
    while (b > a && q[b - 1] == ' ') b--;
    if (a < b) {
      for (i = 0; i < f->body->nargs; i++) {
        const char *nm = f->body->args[i]->name;
        if (nm && strlen(nm) == b - a && memcmp(nm, q + a, b - a) == 0) x = f->body->args[i];
      }
      if (!x)
        return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "image_input_preprocess: main has no input '%.*s'",
                              (int)(b - a), q + a);
      s = mgopt__iip_one(ctx, f, x);
      if (s) return s;
    }
    if (!q[len]) break;
    q += len + 1;
  }
  return MGOPT_OK;
}

MGOPT__DEFINE_PASS_WITH_OPTIONS(io, common, image_input_preprocess,
                                "NHWC image inputs of main become NCHW, followed by a transpose back",
                                mgopt__iip_opts, mgopt__iip_run);
/* src/passes/precision/add_fp16_cast.c — common::add_fp16_cast: fp32 ops compute in fp16, with casts in and out.

   Spec: mil_graph_passes.txt, "For each input of dtype float32, inject a cast op
   to change it to float16 dtype ..." (FP16ComputePrecision); reference
   mil-passes.md §3.35.

   Before:
     main(%x: (2, 3, fp32)) {
       %a: (2, 3, fp32) = square(x=%x)
       %b: (2, 3, fp32) = relu(x=%x)
       %c: (2, 3, fp32) = add(x=%a, y=%b)
     } -> (%c)
   After:
     main(%x: (2, 3, fp32)) {
       %x_to_fp16: (2, 3, fp16) = cast(x=%x, dtype="fp16")
       %a_cast_fp16: (2, 3, fp16) = square(x=%x_to_fp16)
       %a_cast_fp16_to_fp32: (2, 3, fp32) = cast(x=%a_cast_fp16, dtype="fp32")
       %b_cast_fp16: (2, 3, fp16) = relu(x=%x_to_fp16)
       %b_cast_fp16_to_fp32: (2, 3, fp32) = cast(x=%b_cast_fp16, dtype="fp32")
       %a_cast_fp16_to_fp32_to_fp16: (2, 3, fp16) = cast(x=%a_cast_fp16_to_fp32, dtype="fp16")
       %b_cast_fp16_to_fp32_to_fp16: (2, 3, fp16) = cast(x=%b_cast_fp16_to_fp32, dtype="fp16")
       %c_cast_fp16: (2, 3, fp16) = add(x=%a_cast_fp16_to_fp32_to_fp16, y=%b_cast_fp16_to_fp32_to_fp16)
       %c: (2, 3, fp32) = cast(x=%c_cast_fp16, dtype="fp32")
     } -> (%c)
   (cast_optimization then cancels each fp16 -> fp32 -> fp16 pair.)

   Option `skip_ops_by_type`: op types left in fp32, comma-separated ("add,mul").
   Fires on: every registered op, in every block, with an fp32 tensor operand,
   except cast, const, constexpr_* ops, ops owning blocks (while_loop, cond:
   their bodies are converted op by op) and opaque ops. Each fp32 operand
   becomes fp16: a computed value through cast(x, dtype="fp16") named
   "<x>_to_fp16", shared by the consumers in one block; a const through a new
   fp16 const of the same name, where a finite value that would round to
   +-inf becomes +-65504 and (for constants of fewer than 400 elements) a
   non-zero value that would round to 0 becomes the smallest fp16 subnormal
   of its sign. The op is re-created with outputs "<out>_cast_fp16"; each
   output that became fp16 is cast back ("<out>_cast_fp16_to_fp32"). Function
   outputs keep their names and fp32 dtype.
   Stays fp32 (as on iOS17+, mixed precision): alpha of elu, leaky_relu,
   prelu, thresholded_relu; alpha and beta of clamped_relu,
   linear_activation, scaled_tanh, sigmoid_hard, softplus_parametric; epsilon
   of inverse, log, rsqrt — when given as operands.
   Must not fire: an op with an fp32 const operand holding a finite value
   with 65504 < |v| < 1e38 (fp16 would overflow it); an op whose type
   inference rejects fp16 operands; ops listed in skip_ops_by_type.
   Cost: one walk, O(ops + operands + constant elements); the cast cache is a
   hash table. */

static mgopt_opt_def const mgopt__f16_opts[1] = {
    {"skip_ops_by_type", MGOPT_OPT_STRING, "", "op types kept in fp32, comma-separated"}};

static int mgopt__f16_listed(const char *list, const char *type) {
  size_t n = strlen(type);
  const char *q = list;
  if (!list) return 0;
  for (;;) {
    size_t len = strcspn(q, ","), a = 0, b = len;
    while (a < b && q[a] == ' ') a++;
    while (b > a && q[b - 1] == ' ') b--;
    if (b - a == n && memcmp(q + a, type, n) == 0) return 1;
    if (!q[len]) return 0;
    q += len + 1;
  }
}

static int mgopt__f16_keeps_param(const char *type, const char *slot) {
  static const char *const alpha_only[] = {"elu", "leaky_relu", "prelu", "thresholded_relu"};
  static const char *const alpha_beta[] = {"clamped_relu", "linear_activation", "scaled_tanh", "sigmoid_hard",
                                           "softplus_parametric"};
  static const char *const eps[] = {"inverse", "log", "rsqrt"};
  size_t i;
  if (strcmp(slot, "alpha") == 0 || strcmp(slot, "beta") == 0) {
    for (i = 0; i < sizeof alpha_beta / sizeof alpha_beta[0]; i++)
      if (strcmp(type, alpha_beta[i]) == 0) return 1;
    if (strcmp(slot, "alpha") == 0)
      for (i = 0; i < sizeof alpha_only / sizeof alpha_only[0]; i++)
        if (strcmp(type, alpha_only[i]) == 0) return 1;
  }
  if (strcmp(slot, "epsilon") == 0)
    for (i = 0; i < sizeof eps / sizeof eps[0]; i++)
      if (strcmp(type, eps[i]) == 0) return 1;
  return 0;
}

static int mgopt__f16_decide(const mgopt_op *op, int32_t s, int32_t k, mgopt_value *v, int32_t *dt, mgopt_value **rep,
                             void *ud) {
  const char *skip = (const char *)ud;
  const mgopt_tensor *t;
  MGOPT__UNUSED(k);
  MGOPT__UNUSED(rep);
  if (op->kind == MGOPT_OP_cast || (mgopt_op_traits(op) & MGOPT_TRAIT_CONSTEXPR) ||
      strncmp(op->type, "constexpr_", 10) == 0 || mgopt__f16_listed(skip, op->type))
    return -1;
  if (v->type.kind != MGOPT_TYPE_TENSOR || v->type.dtype != MGOPT_DT_FP32) return 0;
  if (mgopt__f16_keeps_param(op->type, op->slots[s].name)) return 0;
  t = mgopt_value_const(v);
  if (t && t->dtype == MGOPT_DT_FP32) {
    int64_t i;
    for (i = 0; i < t->numel; i++) {
      double a = fabs(mgopt_tensor_get_f64(t, i));
      if (isfinite(a) && a > 65504.0 && a < 1e38) return -1;
    }
  }
  *dt = MGOPT_DT_FP16;
  return 1;
}

static mgopt_value *mgopt__f16_conv(mgopt_program *p, mgopt_op *pos, mgopt_value *v, int32_t dt, void *ud) {
  const mgopt_tensor *t = mgopt_value_const(v);
  const char *name = mgopt__pu_converted_name(p, v, MGOPT_DT_FP16);
  MGOPT__UNUSED(ud);
  if (t && t->dtype == MGOPT_DT_FP32) {
    mgopt_tensor *h = mgopt_tensor_new(p, MGOPT_DT_FP16, t->rank, t->shape);
    int64_t i;
    if (!h) return NULL;
    for (i = 0; i < t->numel; i++) {
      double x = mgopt_tensor_get_f64(t, i), y;
      mgopt_tensor_set_f64(h, i, x);
      y = mgopt_tensor_get_f64(h, i);
      if (isfinite(x) && isinf(y)) mgopt_tensor_set_f64(h, i, x > 0 ? 65504.0 : -65504.0);
      else if (t->numel < 400 && x != 0.0 && y == 0.0 && !isnan(x))
        mgopt_tensor_set_f64(h, i, x > 0 ? 5.9604644775390625e-08 : -5.9604644775390625e-08);
    }
    return mgopt_build_const(p, pos->parent, pos, name, h);
  }
  return mgopt__pu_cast_value(p, pos, v, (mgopt_dtype)dt, name);
}

static mgopt_status mgopt__f16_run(mgopt_pass_ctx *ctx) {
  return mgopt__pu_precision_run(ctx, "_cast_fp16", mgopt__f16_decide, mgopt__f16_conv, (void *)ctx->opts[0].s);
}

MGOPT__DEFINE_PASS_WITH_OPTIONS(precision, common, add_fp16_cast,
                                "fp32 ops compute in fp16, with casts in and out",
                                mgopt__f16_opts, mgopt__f16_run);
/* src/passes/precision/add_int16_cast.c — common::add_int16_cast: int32 gather and squeeze compute in int16/uint16, with casts in and out.

   Spec: mil_graph_passes.txt, FP16ComputePrecision's int16 companion; reference
   mil-passes.md §3.35 (add_int16_cast).

   Before:
     main(%x: (4, 3, int32), %i: (2, int32)) {
       %g: (2, 3, int32) = gather(x=%x, indices=%i, axis=0)
     } -> (%g)
   After:
     main(%x: (4, 3, int32), %i: (2, int32)) {
       %x_to_int16: (4, 3, int16) = cast(x=%x, dtype="int16")
       %i_to_int16: (2, int16) = cast(x=%i, dtype="int16")
       %g_cast_int16: (2, 3, int16) = gather(x=%x_to_int16, indices=%i_to_int16, axis=0)
       %g: (2, 3, int32) = cast(x=%g_cast_int16, dtype="int32")
     } -> (%g)

   Fires on: gather and squeeze (the ops of MIL's list that mgopt registers:
   gather_along_axis, gather_nd and topk are not canonical ops here) with int32
   tensor operands. Like the reference, it assumes the int32 data of these ops
   fits int16 (the FP16 compute-precision contract: the pass is opt-in and not
   in any default pipeline). Per operand:
     a const whose values all fit uint16 becomes a uint16 const, else one that
     fits int16 an int16 const ("<c>_to_uint16" / "<c>_to_int16"), else it stays;
     cast(dtype="int32") of a uint16 value is bypassed (the casts cancel);
     any other int32 value goes through cast(dtype="int16"), shared per block;
     gather's indices stay int32 when the gathered axis may exceed 32767
     (static size > 32767, or unknown).
   The op is re-created with outputs "<out>_cast_int16" and each output whose
   dtype changed is cast back to int32. Function outputs keep names and dtypes.
   Must not fire: other ops; non-int32 operands; an op whose inference rejects
   the narrowed operands.
   Cost: one walk, O(ops + operands + constant elements). */

static int mgopt__i16_decide(const mgopt_op *op, int32_t s, int32_t k, mgopt_value *v, int32_t *dt, mgopt_value **rep,
                             void *ud) {
  const mgopt_tensor *t;
  MGOPT__UNUSED(k);
  MGOPT__UNUSED(ud);
  if (op->kind != MGOPT_OP_gather && op->kind != MGOPT_OP_squeeze) return -1;
  if (v->type.kind != MGOPT_TYPE_TENSOR || v->type.dtype != MGOPT_DT_INT32) return 0;
  if (op->kind == MGOPT_OP_gather && strcmp(op->slots[s].name, "indices") == 0 && !mgopt_value_const(v)) {
    const mgopt_value *x = mgopt_op_operand(op, "x");
    int64_t axis = mgopt_op_get_int(op, "axis", 0);
    if (!x || x->type.rank <= 0) return 0;
    if (axis < 0) axis += x->type.rank;
    if (axis < 0 || axis >= x->type.rank || !mgopt_dim_is_static(x->type.dims[axis]) || x->type.dims[axis].v > 32767)
      return 0;
  }
  t = mgopt_value_const(v);
  if (t) {
    int64_t i, lo = 0, hi = 0;
    for (i = 0; i < t->numel; i++) {
      int64_t e = mgopt_tensor_get_i64(t, i);
      if (i == 0 || e < lo) lo = e;
      if (i == 0 || e > hi) hi = e;
    }
    if (lo >= 0 && hi <= 65535) *dt = MGOPT_DT_UINT16;
    else if (lo >= -32768 && hi <= 32767) *dt = MGOPT_DT_INT16;
    else return 0;
    return 1;
  }
  if (v->def && v->def->kind == MGOPT_OP_cast) {
    mgopt_value *src = mgopt_op_operand(v->def, "x");
    if (src && src->type.kind == MGOPT_TYPE_TENSOR && src->type.dtype == MGOPT_DT_UINT16) {
      *rep = src;
      *dt = MGOPT_DT_UINT16;
      return 1;
    }
  }
  *dt = MGOPT_DT_INT16;
  return 1;
}

static mgopt_value *mgopt__i16_conv(mgopt_program *p, mgopt_op *pos, mgopt_value *v, int32_t dt, void *ud) {
  const mgopt_tensor *t = mgopt_value_const(v);
  const char *name = mgopt__pu_converted_name(p, v, (mgopt_dtype)dt);
  MGOPT__UNUSED(ud);
  if (t) {
    mgopt_tensor *h = mgopt_tensor_new(p, (mgopt_dtype)dt, t->rank, t->shape);
    int64_t i;
    if (!h) return NULL;
    for (i = 0; i < t->numel; i++) mgopt_tensor_set_i64(h, i, mgopt_tensor_get_i64(t, i));
    return mgopt_build_const(p, pos->parent, pos, name, h);
  }
  return mgopt__pu_cast_value(p, pos, v, (mgopt_dtype)dt, name);
}

static mgopt_status mgopt__i16_run(mgopt_pass_ctx *ctx) {
  return mgopt__pu_precision_run(ctx, "_cast_int16", mgopt__i16_decide, mgopt__i16_conv, NULL);
}

MGOPT__DEFINE_PASS(precision, common, add_int16_cast,
                   "int32 gather and squeeze compute in int16/uint16, with casts in and out", mgopt__i16_run);
/* src/passes/cleanup/guard_negative_gather_indices.c — common::guard_negative_gather_indices: negative gather indices wrap explicitly (idx < 0 becomes idx + dim).

   Spec: reference mil-passes.md §3.33 (guard_negative_gather_indices).

   Before:
     main(%x: (5, 3, fp32), %i: (2, int32)) {
       %g: (2, 3, fp32) = gather(x=%x, indices=%i, axis=0)
     } -> (%g)
   After:
     main(%x: (5, 3, fp32), %i: (2, int32)) {
       %i_zero: (int32)* = const(val=0)
       %i_nonneg: (2, bool) = greater_equal(x=%i, y=%i_zero)
       %i_dim: (int32)* = const(val=5)
       %i_wrapped: (2, int32) = add(x=%i, y=%i_dim)
       %i_guarded: (2, int32) = select(cond=%i_nonneg, a=%i, b=%i_wrapped)
       %g: (2, 3, fp32) = gather(x=%x, indices=%i_guarded, axis=0)
     } -> (%g)

   Fires on: gather whose indices have a signed integer dtype and whose
   gathered axis of x has a static size. Computed indices get
   select(greater_equal(idx, 0), idx, add(idx, dim)) (named "<idx>_nonneg",
   "<idx>_wrapped", "<idx>_guarded"), one guard per gather; constant indices
   with a negative entry are replaced by a wrapped constant "<idx>_wrapped".
   Must not fire: unsigned indices; constant indices that are all >= 0;
   indices already produced by this guard; a gathered axis of symbolic or
   unknown size (wrapping needs shape(x), which has no canonical op here); a
   size that does not fit the indices' dtype. Indices keep their dtype (the
   reference casts to int32 for a Core ML runtime limit; mgopt does not).
   Cost: one walk over the ops, O(ops + constant elements). */

static int mgopt__gng_is_guard(const mgopt_value *idx) {
  const mgopt_op *sel = idx->def, *ge;
  const mgopt_value *c;
  if (!sel || sel->kind != MGOPT_OP_select) return 0;
  c = mgopt_op_operand(sel, "cond");
  ge = c ? c->def : NULL;
  return ge && ge->kind == MGOPT_OP_greater_equal && mgopt_op_operand(ge, "x") == mgopt_op_operand(sel, "a") &&
         mgopt__pu_const_all(mgopt_op_operand(ge, "y"), 0.0);
}

static int64_t mgopt__gng_dtype_max(mgopt_dtype dt) {
  switch (dt) {
    case MGOPT_DT_INT8: return 127;
    case MGOPT_DT_INT16: return 32767;
    case MGOPT_DT_INT32: return 2147483647;
    case MGOPT_DT_INT64: return INT64_MAX;
    default: return -1;
  }
}

static mgopt_op *mgopt__gng_op(mgopt_program *p, mgopt_op *pos, const char *type, const char *name, int32_t n,
                               const char *const *slots, mgopt_value *const *vals) {
  mgopt_op *op = mgopt_build_op(p, pos->parent, pos, type, name, n, slots, vals, 1);
  if (!op) return NULL;
  if (mgopt_op_infer(p, op, NULL) != MGOPT_OK) return NULL;
  return op;
}

/* 1 rewritten, 0 not, -1 OOM */
static int mgopt__gng_one(mgopt_pass_ctx *ctx, mgopt_op *g) {
  mgopt_program *p = ctx->program;
  mgopt_value *x = mgopt_op_operand(g, "x"), *idx = mgopt_op_operand(g, "indices"), *ins[3], *guarded;
  const mgopt_tensor *ct;
  mgopt_dtype dt;
  int64_t axis, dim, i;
  const char *base;
  static const char *const xy[2] = {"x", "y"};
  static const char *const cab[3] = {"cond", "a", "b"};
  mgopt_op *ge, *add, *sel;
  if (!x || !idx || x->type.kind != MGOPT_TYPE_TENSOR || x->type.rank <= 0 || idx->type.kind != MGOPT_TYPE_TENSOR)
    return 0;
  dt = (mgopt_dtype)idx->type.dtype;
  if (!mgopt_dtype_is_int(dt) || !mgopt_dtype_is_signed(dt) || mgopt__gng_dtype_max(dt) < 0) return 0;
  axis = mgopt_op_get_int(g, "axis", 0);
  if (axis < 0) axis += x->type.rank;
  if (axis < 0 || axis >= x->type.rank || !mgopt_dim_is_static(x->type.dims[axis])) return 0;
  dim = x->type.dims[axis].v;
  if (dim > mgopt__gng_dtype_max(dt) || mgopt__gng_is_guard(idx)) return 0;
  base = mgopt__pu_value_name(idx);
  ct = mgopt_value_const(idx);
  if (ct) {
    mgopt_tensor *w;
    int neg = 0;
    for (i = 0; i < ct->numel; i++)
      if (mgopt_tensor_get_i64(ct, i) < 0) neg = 1;
    if (!neg) return 0;
    w = mgopt_tensor_new(p, dt, ct->rank, ct->shape);
    if (!w) return -1;
    for (i = 0; i < ct->numel; i++) {
      int64_t e = mgopt_tensor_get_i64(ct, i);
      mgopt_tensor_set_i64(w, i, e < 0 ? e + dim : e);
    }
    guarded = mgopt_build_const(p, g->parent, g, mgopt__pu_name2(p, base, "_wrapped"), w);
    if (!guarded) return -1;
  } else {
    mgopt_tensor *zt = mgopt_tensor_new_scalar_i64(p, dt, 0), *dimt = mgopt_tensor_new_scalar_i64(p, dt, dim);
    if (!zt || !dimt) return -1;
    ins[0] = idx;
    ins[1] = mgopt_build_const(p, g->parent, g, mgopt__pu_name2(p, base, "_zero"), zt);
    if (!ins[1]) return -1;
    ge = mgopt__gng_op(p, g, "greater_equal", mgopt__pu_name2(p, base, "_nonneg"), 2, xy, ins);
    if (!ge) return -1;
    ins[1] = mgopt_build_const(p, g->parent, g, mgopt__pu_name2(p, base, "_dim"), dimt);
    if (!ins[1]) return -1;
    add = mgopt__gng_op(p, g, "add", mgopt__pu_name2(p, base, "_wrapped"), 2, xy, ins);
    if (!add) return -1;
    ins[0] = ge->outs[0];
    ins[1] = idx;
    ins[2] = add->outs[0];
    sel = mgopt__gng_op(p, g, "select", mgopt__pu_name2(p, base, "_guarded"), 3, cab, ins);
    if (!sel) return -1;
    guarded = sel->outs[0];
  }
  mgopt_op_set_operand(g, "indices", guarded);
  ctx->rewrites++;
  return 1;
}

static int mgopt__gng_block(mgopt_pass_ctx *ctx, mgopt_block *b, int depth) {
  mgopt_op *op, *next;
  if (depth > 256) return -2;
  for (op = b->first; op; op = next) {
    int32_t i;
    next = op->next;
    for (i = 0; i < op->nblocks; i++) {
      int r = mgopt__gng_block(ctx, op->blocks[i], depth + 1);
      if (r < 0) return r;
    }
    if (op->kind == MGOPT_OP_gather && mgopt__gng_one(ctx, op) < 0) return -1;
  }
  return 0;
}

static mgopt_status mgopt__gng_run(mgopt_pass_ctx *ctx) {
  int32_t i;
  for (i = 0; i < mgopt_program_function_count(ctx->program); i++) {
    int r = mgopt__gng_block(ctx, mgopt_program_function_at(ctx->program, i)->body, 0);
    if (r == -2) return mgopt_diag_set(ctx->diag, MGOPT_ERR_LIMIT, "guard_negative_gather_indices: blocks nested too deeply");
    if (r < 0) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "guard_negative_gather_indices: out of memory");
  }
  return MGOPT_OK;
}

MGOPT__DEFINE_PASS(cleanup, common, guard_negative_gather_indices,
                   "negative gather indices wrap explicitly: idx < 0 becomes idx + dim", mgopt__gng_run);
/* src/passes/onnx/remove_redundant_transpose_pairs.c — onnx::remove_redundant_transpose_pairs: inverse transposes around a chain of elementwise ops cancel.

   Spec: onnx_ir_optimizer_passes.txt, "Transpose Pair Folding".

   Before:
     main(%x: (1, 3, 4, 5, fp32)) {
       %t1: (1, 4, 5, 3, fp32) = transpose(x=%x, perm=[0, 2, 3, 1])
       %r: (1, 4, 5, 3, fp32) = relu(x=%t1)
       %s: (1, 4, 5, 3, fp32) = sigmoid(x=%r)
       %t2: (1, 3, 4, 5, fp32) = transpose(x=%s, perm=[0, 3, 1, 2])
     } -> (%t2)
   After:
     main(%x: (1, 3, 4, 5, fp32)) {
       %r: (1, 3, 4, 5, fp32) = relu(x=%x)
       %t2: (1, 3, 4, 5, fp32) = sigmoid(x=%r)
     } -> (%t2)

   Fires on: transpose(x, p1) -> [elementwise]* -> transpose(y, p2) with
   p1[p2[i]] == i for every i, where every hop has a single consumer (the next
   op of the chain) and no intermediate value is a block output. The middle
   ops are pure registered elementwise ops that keep their operand's rank:
   unary ops, or binary ops whose other operand is a one-element constant of
   rank <= 1 (mgopt__pu_elementwise_chain). The first middle op reads x, the
   middle ops' types are re-inferred in x's layout, and the consumers of the
   second transpose read the last middle op (or x). Both transposes are erased.
   Must not fire: a composed perm that is not the identity; a hop with two
   consumers; a layout-sensitive, opaque or broadcasting middle op; a second
   transpose whose output is a function output while the replacement is an
   input or already an output (the output name must survive); a replacement
   whose type does not suit the second transpose's readers, or differs from
   its declared type while it is a function output (the last middle op keeps
   that declared type when it holds for the re-inferred one; with no middle
   op, x's type must fit: mgopt__pu_cancel_pair).
   Cost: one worklist run; each match walks its chain once, O(ops) overall. */

static int mgopt__rtp_rewrite(mgopt_rewriter *rw, mgopt_op *t1, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_op *chain[MGOPT__PU_MAX_CHAIN], *t2;
  mgopt_value *x = mgopt_op_operand(t1, "x");
  const int64_t *p1, *p2;
  int64_t n1, n2, i;
  int32_t n = 0;
  MGOPT__UNUSED(ud);
  if (!x || t1->nouts != 1) return 0;
  n1 = mgopt_op_get_ints(p, t1, "perm", &p1);
  if (n1 < 0) return 0;
  t2 = mgopt__pu_elementwise_chain(t1->outs[0], MGOPT_OP_transpose, chain, &n);
  if (!t2) return 0;
  n2 = mgopt_op_get_ints(p, t2, "perm", &p2);
  if (n2 != n1 || t2->nouts != 1) return 0;
  /* perms may be read from a shared arena copy: compare before changing anything */
  for (i = 0; i < n1; i++) {
    int64_t a = p2[i] < 0 ? p2[i] + n1 : p2[i], b;
    if (a < 0 || a >= n1) return 0;
    b = p1[a] < 0 ? p1[a] + n1 : p1[a];
    if (b != i) return 0;
  }
  return mgopt__pu_cancel_pair(rw, t1, x, chain, n, t2);
}

static const mgopt_pattern mgopt__rtp_patterns[] = {
    {"remove_redundant_transpose_pairs", MGOPT_OP_transpose, NULL, 1, mgopt__rtp_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, remove_redundant_transpose_pairs,
                           "inverse transposes around a chain of elementwise ops cancel",
                           mgopt__rtp_patterns);
/* src/passes/onnx/remove_redundant_reshape_pairs.c — onnx::remove_redundant_reshape_pairs: a reshape and a reshape back around a chain of elementwise ops cancel.

   Spec: onnx_ir_optimizer_passes.txt, "Reshape Pair Folding".

   Before:
     main(%x: (2, 3, 4, fp32)) {
       %s1: (2, int32)* = const(val=[6, 4])
       %r1: (6, 4, fp32) = reshape(x=%x, shape=%s1)
       %g: (6, 4, fp32) = tanh(x=%r1)
       %s2: (3, int32)* = const(val=[2, 3, 4])
       %r2: (2, 3, 4, fp32) = reshape(x=%g, shape=%s2)
     } -> (%r2)
   After:
     main(%x: (2, 3, 4, fp32)) {
       %s1: (2, int32)* = const(val=[6, 4])
       %r2: (2, 3, 4, fp32) = tanh(x=%x)
       %s2: (3, int32)* = const(val=[2, 3, 4])
     } -> (%r2)

   Fires on: reshape(A) -> [elementwise]* -> reshape(B) where A's type is
   fully static and equal (dims) to the second reshape's output, every hop
   has a single consumer (the next op) and no intermediate value is a block
   output. Middle ops as in remove_redundant_transpose_pairs (unary, or binary
   with a one-element constant of rank <= 1). The first middle op reads A, the
   middle types are re-inferred, consumers of the second reshape read the last
   middle op (or A); both reshapes are erased (their shape constants are left
   for dead_code_elimination).
   Must not fire: symbolic or unknown dims; a shape that does not come back;
   a hop with two consumers; a broadcasting middle op; a second reshape whose
   output is a function output while the replacement is an input or already
   an output; a replacement whose type does not suit the second reshape's
   readers, or differs from its declared type while it is a function output
   (mgopt__pu_cancel_pair, as in remove_redundant_transpose_pairs).
   Cost: one worklist run; each match walks its chain once, O(ops) overall. */

static int mgopt__rrp_rewrite(mgopt_rewriter *rw, mgopt_op *r1, void *ud) {
  mgopt_op *chain[MGOPT__PU_MAX_CHAIN], *r2;
  mgopt_value *a = mgopt_op_operand(r1, "x");
  int64_t sa[MGOPT_MAX_RANK], sb[MGOPT_MAX_RANK];
  int32_t n = 0, k;
  MGOPT__UNUSED(ud);
  if (!a || r1->nouts != 1) return 0;
  if (!mgopt__pu_static_shape(&a->type, sa, MGOPT_MAX_RANK)) return 0;
  r2 = mgopt__pu_elementwise_chain(r1->outs[0], MGOPT_OP_reshape, chain, &n);
  if (!r2) return 0;
  if (r2->nouts != 1 || !mgopt__pu_static_shape(&r2->outs[0]->type, sb, MGOPT_MAX_RANK)) return 0;
  if (r2->outs[0]->type.rank != a->type.rank) return 0;
  for (k = 0; k < a->type.rank; k++)
    if (sa[k] != sb[k]) return 0;
  return mgopt__pu_cancel_pair(rw, r1, a, chain, n, r2);
}

static const mgopt_pattern mgopt__rrp_patterns[] = {
    {"remove_redundant_reshape_pairs", MGOPT_OP_reshape, NULL, 1, mgopt__rrp_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, remove_redundant_reshape_pairs,
                           "a reshape and a reshape back around a chain of elementwise ops cancel",
                           mgopt__rrp_patterns);
/* src/passes/onnx/remove_redundant_transpose_reduce.c — onnx::remove_redundant_transpose_reduce: a reduction reads the untransposed tensor when the transpose cannot change its result.

   Spec: onnx_ir_optimizer_passes.txt, "remove_redundant_transpose_reduce".

   Before:
     main(%x: (2, 4, 5, 3, fp32)) {
       %t: (2, 3, 4, 5, fp32) = transpose(x=%x, perm=[0, 3, 1, 2])
       %m: (2, 3, fp32) = reduce_mean(x=%t, axes=[2, 3], keep_dims=false)
     } -> (%m)
   After:
     main(%x: (2, 4, 5, 3, fp32)) {
       %m: (2, 3, fp32) = reduce_mean(x=%x, axes=[1, 2], keep_dims=false)
     } -> (%m)

   Fires on: reduce_sum, reduce_mean, reduce_max, reduce_min or reduce_prod of
   transpose(x, perm) when the axes that survive the reduction keep their
   relative order (perm restricted to the kept axes is increasing), so the
   reduction over perm[axes] of x yields the same elements in the same order;
   with keep_dims the resulting shape (x's dims, 1 at the new axes) must also
   equal the old output's dims. The
   axes become the sorted perm[axes]; no axes (reduce everything) stay none.
   The transpose is erased when nothing else reads it.
   Must not fire: kept axes reordered by the transpose; keep_dims with a
   different resulting shape; axes that are not constant.
   Cost: one worklist run, O(ops x rank). */

static int mgopt__rtr_rewrite(mgopt_rewriter *rw, mgopt_op *red, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *tv = mgopt_op_operand(red, "x"), *x;
  mgopt_op *t;
  const int64_t *perm, *axes = NULL;
  int64_t n, na = -1, i, newax[MGOPT_MAX_RANK], last = -1;
  int32_t nn = 0;
  uint8_t red_ax[MGOPT_MAX_RANK], in_ax[MGOPT_MAX_RANK];
  int has_axes = mgopt_op_attr(red, "axes") != NULL || mgopt_op_slot_index(red, "axes") >= 0;
  MGOPT__UNUSED(ud);
  t = tv ? mgopt__pu_def_of(tv, MGOPT_OP_transpose) : NULL;
  if (!t || red->nouts != 1 || !(x = mgopt_op_operand(t, "x"))) return 0;
  n = mgopt_op_get_ints(p, t, "perm", &perm);
  if (n <= 0 || n > MGOPT_MAX_RANK) return 0;
  if (has_axes) {
    na = mgopt_op_get_ints(p, red, "axes", &axes);
    if (na < 0 || na > n) return 0;
  }
  memset(red_ax, 0, sizeof red_ax);
  for (i = 0; i < (has_axes ? na : n); i++) {
    int64_t a = has_axes ? axes[i] : i;
    if (a < 0) a += n;
    if (a < 0 || a >= n || red_ax[a]) return 0;
    red_ax[a] = 1;
  }
  for (i = 0; i < n; i++) {
    int64_t src = perm[i] < 0 ? perm[i] + n : perm[i];
    if (src < 0 || src >= n) return 0;
    if (red_ax[i]) continue;
    if (src < last) return 0; /* kept axes reordered */
    last = src;
  }
  memset(in_ax, 0, sizeof in_ax);
  for (i = 0; i < n; i++)
    if (red_ax[i]) in_ax[perm[i] < 0 ? perm[i] + n : perm[i]] = 1;
  for (i = 0; i < n; i++)
    if (in_ax[i]) newax[nn++] = i;
  if (mgopt_op_get_bool(red, "keep_dims", 0)) {
    /* the kept-dims shape must come out the same: x's dims with 1 at the new axes */
    const mgopt_type *ot = &red->outs[0]->type;
    if (x->type.rank != n || ot->rank != n) return 0;
    for (i = 0; i < n; i++) {
      mgopt_dim d = in_ax[i] ? mgopt_dim_static(1) : x->type.dims[i], o = ot->dims[i];
      if (d.sym != o.sym || (!d.sym && (d.v < 0 || d.v != o.v))) return 0;
    }
  }
  mgopt_rw_set_operand(rw, red, "x", x);
  if (has_axes) {
    if (mgopt_op_slot_index(red, "axes") >= 0) mgopt_op_set_operand(red, "axes", NULL);
    mgopt_op_set_ints(red, "axes", newax, nn);
  }
  mgopt_op_infer(p, red, NULL);
  mgopt_rw_modified(rw, red);
  mgopt__pu_erase_if_dead(rw, t);
  return 1;
}

static const mgopt_pattern mgopt__rtr_patterns[] = {
    {"remove_redundant_transpose_reduce", MGOPT_OP_reduce_sum, NULL, 1, mgopt__rtr_rewrite, NULL},
    {"remove_redundant_transpose_reduce", MGOPT_OP_reduce_mean, NULL, 1, mgopt__rtr_rewrite, NULL},
    {"remove_redundant_transpose_reduce", MGOPT_OP_reduce_max, NULL, 1, mgopt__rtr_rewrite, NULL},
    {"remove_redundant_transpose_reduce", MGOPT_OP_reduce_min, NULL, 1, mgopt__rtr_rewrite, NULL},
    {"remove_redundant_transpose_reduce", MGOPT_OP_reduce_prod, NULL, 1, mgopt__rtr_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, remove_redundant_transpose_reduce,
                           "a reduction reads the untransposed tensor when the transpose cannot change its result",
                           mgopt__rtr_patterns);
/* src/passes/onnx/rewrite_mul_rsqrt_as_div.c — onnx::rewrite_mul_rsqrt_as_div: x times the reciprocal of sqrt(y) becomes x / sqrt(y).

   Spec: onnx_ir_optimizer_passes.txt, "rewrite_mul_rsqrt_as_div".

   Before:
     main(%x: (2, 3, fp32), %y: (2, 3, fp32)) {
       %s: (2, 3, fp32) = sqrt(x=%y)
       %r: (2, 3, fp32) = inverse(x=%s, epsilon=0.0)
       %m: (2, 3, fp32) = mul(x=%x, y=%r)
     } -> (%m)
   After:
     main(%x: (2, 3, fp32), %y: (2, 3, fp32)) {
       %s: (2, 3, fp32) = sqrt(x=%y)
       %m: (2, 3, fp32) = real_div(x=%x, y=%s)
     } -> (%m)

   Fires on: mul (either operand) of r where r is
     inverse(sqrt(y)) with epsilon exactly 0 (ONNX Reciprocal),
     real_div(1, sqrt(y)) with a constant numerator whose elements are all 1
       and whose type does not broadcast the quotient, or
     rsqrt(y) with epsilon exactly 0,
   r is float, has a single consumer (the mul) and is not a block output. The
   mul becomes real_div(x, sqrt(y)) (a new sqrt for the rsqrt form), named
   after the mul's output; the reciprocal (and an unused sqrt) are erased.
   Must not fire: a nonzero epsilon (MIL's inverse and rsqrt add it, so the
   chain is not exactly 1/sqrt); a reciprocal with other consumers; a
   numerator other than 1; a quotient whose type differs from the mul's.
   Cost: one worklist run, O(ops). */

/* the y of sqrt(y) when r is exactly 1/sqrt(y); *s the sqrt value (NULL for the rsqrt form) */
static mgopt_value *mgopt__mrd_match(mgopt_value *r, mgopt_value **s) {
  mgopt_op *d = r->def;
  mgopt_value *sv;
  *s = NULL;
  if (!d || !mgopt_dtype_is_float((mgopt_dtype)r->type.dtype)) return NULL;
  if (d->kind == MGOPT_OP_rsqrt) {
    if (mgopt_op_get_float(d, "epsilon", 1.0) != 0.0) return NULL;
    return mgopt_op_operand(d, "x");
  }
  if (d->kind == MGOPT_OP_inverse) {
    if (mgopt_op_get_float(d, "epsilon", 1.0) != 0.0) return NULL;
    sv = mgopt_op_operand(d, "x");
  } else if (d->kind == MGOPT_OP_real_div) {
    mgopt_value *num = mgopt_op_operand(d, "x");
    sv = mgopt_op_operand(d, "y");
    if (!num || !sv || !mgopt__pu_const_all(num, 1.0) || !mgopt_type_equal(&sv->type, &r->type)) return NULL;
  } else {
    return NULL;
  }
  if (!sv || !mgopt__pu_def_of(sv, MGOPT_OP_sqrt)) return NULL;
  *s = sv;
  return mgopt_op_operand(sv->def, "x");
}

static int mgopt__mrd_rewrite(mgopt_rewriter *rw, mgopt_op *mul, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *a = mgopt_op_operand(mul, "x"), *b = mgopt_op_operand(mul, "y"), *x, *r, *y, *s, *ins[2];
  mgopt_op *div, *rop, *sq = NULL;
  static const char *const xy[2] = {"x", "y"};
  static const char *const xs[1] = {"x"};
  int side;
  MGOPT__UNUSED(ud);
  if (!a || !b || mul->nouts != 1) return 0;
  for (side = 0; side < 2; side++) {
    x = side ? b : a;
    r = side ? a : b;
    if (!mgopt__pu_single_use(r) || mgopt__pu_is_block_output(r)) continue;
    y = mgopt__mrd_match(r, &s);
    if (y) break;
  }
  if (side == 2) return 0;
  rop = r->def;
  if (!s) {
    sq = mgopt_rw_create(rw, mul, "sqrt", mgopt__pu_name2(p, mgopt__pu_value_name(y), "_sqrt"), 1, xs, &y, 1);
    if (!sq) return 0;
    if (mgopt_op_infer(p, sq, NULL) != MGOPT_OK) {
      mgopt_rw_erase(rw, sq);
      return 0;
    }
    s = sq->outs[0];
  }
  ins[0] = x;
  ins[1] = s;
  div = mgopt_rw_create(rw, mul, "real_div", mgopt__pu_value_name(mul->outs[0]), 2, xy, ins, 1);
  if (!div || mgopt_op_infer(p, div, NULL) != MGOPT_OK || !mgopt_type_equal(&div->outs[0]->type, &mul->outs[0]->type)) {
    if (div) mgopt_rw_erase(rw, div);
    if (sq) mgopt_rw_erase(rw, sq);
    return 0;
  }
  mgopt_rw_replace_op(rw, mul, div->outs);
  mgopt__pu_sync_op_name(div);
  mgopt__pu_erase_if_dead(rw, rop);
  return 1;
}

static const mgopt_pattern mgopt__mrd_patterns[] = {
    {"rewrite_mul_rsqrt_as_div", MGOPT_OP_mul, NULL, 1, mgopt__mrd_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, rewrite_mul_rsqrt_as_div,
                           "x times the reciprocal of sqrt(y) becomes x / sqrt(y)", mgopt__mrd_patterns);
/* src/passes/onnx/inline_dropout_training_mode_constants.c — onnx::inline_dropout_training_mode_constants: a Dropout whose training_mode is statically false becomes its input.

   Spec: onnx_ir_optimizer_passes.txt, "inline_dropout_training_mode_constants".
   ONNX Dropout has no canonical op: it stays opaque as onnx::Dropout with the
   positional operands in0 (data), in1 (ratio), in2 (training_mode) and the
   outputs output and (optional) mask.

   Before:
     main(%x: (2, 3, fp32)) {
       %r: (fp32)* = const(val=0.5)
       %t: (bool)* = const(val=true)
       %f: (bool) = logical_not(x=%t)
       %d: (2, 3, fp32) = onnx::Dropout(in0=%x, in1=%r, in2=%f)
       %y: (2, 3, fp32) = relu(x=%d)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %r: (fp32)* = const(val=0.5)
       %t: (bool)* = const(val=true)
       %y: (2, 3, fp32) = relu(x=%x)
     } -> (%y)

   Fires on: onnx::Dropout whose training_mode is absent or statically false:
   a constant false, or a chain of logical_not / identity / cast ops over a
   constant that evaluates to false. Then Dropout is the identity on in0: its
   output is replaced by in0 and, when the mask output is unused or absent,
   the op is erased. With a used mask, the training_mode operand is inlined
   instead (dropped, which ONNX reads as false) and the op stays.
   Must not fire: training_mode true or computed at run time; an output that
   is a function output while in0 is an input or already an output (the name
   must survive); in0's declared type does not suit a reader of the output,
   or differs from it while it is a function output (mgopt__pu_replace_fits).
   In those cases a constant training_mode is still inlined.
   Cost: one worklist run, O(ops); the static evaluation follows at most 16
   producers. */

/* 1 false, 0 true, -1 not static */
static int mgopt__idt_is_false(const mgopt_value *v) {
  int negate = 0, depth;
  for (depth = 0; depth < 16 && v; depth++) {
    const mgopt_tensor *t = mgopt_value_const(v);
    const mgopt_op *d = v->def;
    if (t) {
      int64_t i;
      int any = 0;
      if (t->numel != 1 || t->dtype == MGOPT_DT_STRING) return -1;
      for (i = 0; i < t->numel; i++)
        if (mgopt_tensor_get_f64(t, i) != 0.0) any = 1;
      return (any == negate) ? 1 : 0;
    }
    if (!d) return -1;
    if (d->kind == MGOPT_OP_logical_not) negate = !negate;
    else if (d->kind != MGOPT_OP_identity && !(d->kind == MGOPT_OP_cast && v->type.dtype == MGOPT_DT_BOOL))
      return -1;
    v = mgopt_op_operand(d, "x");
  }
  return -1;
}

static int mgopt__idt_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *data = mgopt_op_operand(op, "in0"), *tm = mgopt_op_operand(op, "in2"), *out;
  int mask_used, changed = 0;
  MGOPT__UNUSED(ud);
  if (!data || op->nouts < 1 || op->nouts > 2 || op->nblocks) return 0;
  if (tm && mgopt__idt_is_false(tm) != 1) return 0;
  out = op->outs[0];
  mask_used = op->nouts == 2 && !(op->outs[1]->flags & MGOPT_VALUE_ABSENT) && op->outs[1]->nuses > 0;
  if (out->nuses && !(mgopt__pu_is_func_output(out) && (!data->def || mgopt__pu_is_func_output(data))) &&
      mgopt__pu_replace_fits(mgopt_rw_program(rw), out, data)) {
    mgopt_rw_replace_value(rw, out, data);
    changed = 1;
  }
  if (changed && !mask_used && out->nuses == 0) {
    mgopt_op *tdef = tm ? tm->def : NULL;
    mgopt_rw_erase(rw, op);
    /* the training_mode chain fed only this op: it goes too (constants stay for dead_code_elimination) */
    while (tdef && tdef->kind != MGOPT_OP_const && mgopt__op_is_dead(tdef)) {
      mgopt_value *in = mgopt_op_operand(tdef, "x");
      mgopt_rw_erase(rw, tdef);
      tdef = in ? in->def : NULL;
    }
    return 1;
  }
  if (tm && (mask_used || out->nuses)) {
    mgopt_rw_set_operand(rw, op, "in2", NULL);
    changed = 1;
  }
  return changed;
}

static const mgopt_pattern mgopt__idt_patterns[] = {
    {"inline_dropout_training_mode_constants", MGOPT_OP_OPAQUE, "onnx::Dropout", 1, mgopt__idt_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, inline_dropout_training_mode_constants,
                           "a Dropout whose training_mode is statically false becomes its input",
                           mgopt__idt_patterns);
/* src/passes/onnx/propagate_shapes.c — onnx::propagate_shapes: fill unknown dtypes and dims through elementwise and unary ops.

   Spec: onnx_ir_optimizer_passes.txt, "propagate_elementwise_shapes" and
   "propagate_unary_shapes" (one pass here: both walk the same ops).

   Before:
     main(%x: (2, 3, fp32)) {
       %r: (?, ?, fp32) = relu(x=%x)
       %e: (?, 3, fp32) = exp(x=%r)
     } -> (%e)
   After:
     main(%x: (2, 3, fp32)) {
       %r: (2, 3, fp32) = relu(x=%x)
       %e: (2, 3, fp32) = exp(x=%r)
     } -> (%e)

   Fires on: registered ops with the unary, binary (broadcasting) or
   shape-preserving trait whose output types have an unknown dtype, rank or
   dim, in program order (so a chain fills in one sweep), nested blocks
   included. The registry's type inference computes the output types; only
   unknown parts are filled (a known dim or dtype is never changed, a
   contradicting inference is ignored).
   Must not fire: fully typed outputs (a no-op on fully typed graphs); opaque
   ops; other ops; an inference that fails.
   Cost: one walk, O(ops x rank). */

static int64_t mgopt__psh_block(mgopt_program *p, mgopt_block *b, int depth) {
  mgopt_op *op;
  int64_t n = 0;
  if (depth > 256) return 0;
  for (op = b->first; op; op = op->next) {
    const mgopt_op_def *def = mgopt_op_def_get(op->kind);
    int32_t i, any = 0;
    for (i = 0; i < op->nblocks; i++) n += mgopt__psh_block(p, op->blocks[i], depth + 1);
    if (!def || !def->infer || op->nouts < 1 || op->nouts > 16) continue;
    if (!(def->traits & (MGOPT_TRAIT_UNARY | MGOPT_TRAIT_BINARY | MGOPT_TRAIT_SHAPE_PRESERVING))) continue;
    for (i = 0; i < op->nouts; i++) any |= mgopt__pu_type_unknown(&op->outs[i]->type);
    if (!any) continue;
    {
      mgopt_type inf[16];
      memset(inf, 0, sizeof inf);
      if (def->infer(p, op, inf, NULL) != MGOPT_OK) continue;
      for (i = 0; i < op->nouts; i++) {
        mgopt_type cur = op->outs[i]->type;
        /* dims are shared arena memory: refine a private copy */
        if (mgopt__type_copy(p, &cur, &op->outs[i]->type)) return n;
        if (mgopt__pu_type_refine(p, &cur, &inf[i])) {
          op->outs[i]->type = cur;
          n++;
        }
      }
    }
  }
  return n;
}

static mgopt_status mgopt__psh_run(mgopt_pass_ctx *ctx) {
  int32_t i;
  for (i = 0; i < mgopt_program_function_count(ctx->program); i++)
    ctx->rewrites += mgopt__psh_block(ctx->program, mgopt_program_function_at(ctx->program, i)->body, 0);
  return MGOPT_OK;
}

MGOPT__DEFINE_PASS(onnx, onnx, propagate_shapes,
                   "fill unknown dtypes and dims through elementwise and unary ops", mgopt__psh_run);
/* src/passes/onnx/prune_unused_graph_inputs.c — onnx::prune_unused_graph_inputs: inputs of main that nothing reads are removed.

   Spec: onnx_ir_optimizer_passes.txt, "prune_unused_graph_inputs" (graph only:
   function signatures stay). This pass changes main's inputs on purpose.

   Before:
     main(%x: (2, fp32), %unused: (3, fp32)) {
       %y: (2, fp32) = relu(x=%x)
     } -> (%y)
   After:
     main(%x: (2, fp32)) {
       %y: (2, fp32) = relu(x=%x)
     } -> (%y)

   Fires on: inputs of the function `main` with no use (no operand, no output).
   Must not fire: inputs of any other function (ONNX local functions and other
   entry points keep their signatures); inputs read only inside nested blocks
   (those are uses).
   Cost: O(inputs of main): one sweep keeps the used inputs in order and
   renumbers them (removing them one by one would shift the rest each time:
   quadratic in the number of unused inputs). */

static mgopt_status mgopt__pui_run(mgopt_pass_ctx *ctx) {
  mgopt_function *f = mgopt_program_function(ctx->program, "main");
  mgopt_block *b;
  int32_t i, kept = 0;
  if (!f) return MGOPT_OK;
  b = f->body;
  for (i = 0; i < b->nargs; i++) {
    mgopt_value *x = b->args[i];
    if (x->nuses == 0) continue; /* dropped: nothing refers to it */
    x->index = kept;
    b->args[kept++] = x;
  }
  ctx->rewrites += b->nargs - kept;
  b->nargs = kept;
  return MGOPT_OK;
}

MGOPT__DEFINE_PASS(onnx, onnx, prune_unused_graph_inputs, "inputs of main that nothing reads are removed",
                   mgopt__pui_run);
/* src/passes/cleanup/const_deduplication.c — common::const_deduplication: merge equal consts and identical constexpr_* ops.

   Spec: mil_graph_passes.txt, "Remove duplicated large constants (tensor with
   100+ elements)"; reference §3.1.

   Before:
     main(%q: (2, 10, fp32), %k: (2, 10, fp32)) {
       %wq: (10, 10, fp32)* = const(val=[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [10, 11, 12, 13, 14, 15, 16, 17, 18, 19], [20, 21, 22, 23, 24, 25, 26, 27, 28, 29], [30, 31, 32, 33, 34, 35, 36, 37, 38, 39], [40, 41, 42, 43, 44, 45, 46, 47, 48, 49], [50, 51, 52, 53, 54, 55, 56, 57, 58, 59], [60, 61, 62, 63, 64, 65, 66, 67, 68, 69], [70, 71, 72, 73, 74, 75, 76, 77, 78, 79], [80, 81, 82, 83, 84, 85, 86, 87, 88, 89], [90, 91, 92, 93, 94, 95, 96, 97, 98, 99]])
       %wk: (10, 10, fp32)* = const(val=[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [10, 11, 12, 13, 14, 15, 16, 17, 18, 19], [20, 21, 22, 23, 24, 25, 26, 27, 28, 29], [30, 31, 32, 33, 34, 35, 36, 37, 38, 39], [40, 41, 42, 43, 44, 45, 46, 47, 48, 49], [50, 51, 52, 53, 54, 55, 56, 57, 58, 59], [60, 61, 62, 63, 64, 65, 66, 67, 68, 69], [70, 71, 72, 73, 74, 75, 76, 77, 78, 79], [80, 81, 82, 83, 84, 85, 86, 87, 88, 89], [90, 91, 92, 93, 94, 95, 96, 97, 98, 99]])
       %eq: (2, 10, fp32) = linear(x=%q, weight=%wq)
       %ek: (2, 10, fp32) = linear(x=%k, weight=%wk)
     } -> (%eq, %ek)
   After:
     main(%q: (2, 10, fp32), %k: (2, 10, fp32)) {
       %wq: (10, 10, fp32)* = const(val=[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [10, 11, 12, 13, 14, 15, 16, 17, 18, 19], [20, 21, 22, 23, 24, 25, 26, 27, 28, 29], [30, 31, 32, 33, 34, 35, 36, 37, 38, 39], [40, 41, 42, 43, 44, 45, 46, 47, 48, 49], [50, 51, 52, 53, 54, 55, 56, 57, 58, 59], [60, 61, 62, 63, 64, 65, 66, 67, 68, 69], [70, 71, 72, 73, 74, 75, 76, 77, 78, 79], [80, 81, 82, 83, 84, 85, 86, 87, 88, 89], [90, 91, 92, 93, 94, 95, 96, 97, 98, 99]])
       %eq: (2, 10, fp32) = linear(x=%q, weight=%wq)
       %ek: (2, 10, fp32) = linear(x=%k, weight=%wq)
     } -> (%eq, %ek)

   Fires on, in program order (nested blocks included):
   - a const with at least `const_threshold` elements (default 100; a scalar
     counts 1) whose dtype, shape and bytes equal an earlier const visible
     from it (same block, or an enclosing block before the nested op): its
     uses take the earlier one and it is erased;
   - a constexpr_* op (no threshold) with the same type, attributes and
     operands as an earlier visible one, operands compared after they were
     deduplicated (same value, or constants with equal contents).
   The earlier op is kept. Consts are keyed by dtype and shape, probed
   (mgopt__tensor_probe: the first and last bytes) only when shapes meet, hashed
   in full only when probes meet, and compared exactly (mgopt_tensor_equal: bitwise, so -0.0 != 0.0), unlike
   MIL's hash of the first 100 elements plus a tolerance.
   Must not fire: a duplicate that is a function output (both names must
   survive: it stays), consts under the threshold, a duplicate constexpr op
   whose declared output types the kept one's do not suit
   (mgopt__pu_replace_fits).
   Sibling scopes (two branches of a cond, a loop's cond and body, nested
   blocks of different ops): neither const can see the other, so the earlier
   one moves up to the innermost block enclosing both, just before the op of
   that block that holds it, and the later one is erased: a model whose
   branches fold the same weights is written with them once (mgopt goes
   further than MIL here; a const has no operands, so moving it outwards keeps
   every use in its scope). Not when either const is a block's output (the
   block would then return an outer value).
   Across functions: an op in one function cannot use a value of another, so
   no op is removed there. Instead equal consts over the threshold that
   remain share one data buffer, both marked borrowed so the first write
   through either copies it (mgopt_tensor_data_mut) and never alters the
   other: memory is held once and writers can detect the sharing by pointer,
   as MIL's shared weight ids do for multifunction models.
   Cost: one walk, a scoped hash table (entries popped when their block
   ends, sized by the candidates the op index counts), O(ops) lookups, and
   nothing at all when the index counts no candidate; a const whose shape
   meets another's is probed, one whose probe meets another's is hashed in
   full, and each match is compared exactly: a weight with a shape of its own
   is never read. */

typedef struct mgopt__cdd_entry {
  mgopt_op *op;
  uint64_t hash;
  int64_t next; /* the entry filed before it under the same hash, -1 = none */
} mgopt__cdd_entry;

typedef struct mgopt__cdd {
  mgopt_pass_ctx *ctx;
  mgopt_program *p;
  int64_t threshold;
  mgopt__map by_hash; /* hash -> 1 + index in e of the latest entry filed under it, 0 = none */
  mgopt__cdd_entry *e;
  int64_t ne, ecap;
  mgopt_op **hoist; /* pairs (duplicate, earlier const) in sibling scopes */
  int64_t nhoist, hcap;
} mgopt__cdd;

static uint64_t mgopt__cdd_mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

static int mgopt__cdd_is_constexpr(const mgopt_op *op) {
  return strncmp(op->type, "constexpr_", 10) == 0 && op->nblocks == 0 && op->nouts > 0;
}

static mgopt_tensor *mgopt__cdd_const(const mgopt_op *op) {
  return op->kind == MGOPT_OP_const && op->nouts == 1 ? mgopt_value_const(op->outs[0]) : NULL;
}

static uint64_t mgopt__cdd_value_hash(const mgopt_value *v) {
  mgopt_tensor *t = mgopt_value_const(v);
  return t ? mgopt__cdd_mix(1, mgopt_tensor_hash(t)) : mgopt__cdd_mix(2, v->id);
}

static int mgopt__cdd_value_equal(const mgopt_value *a, const mgopt_value *b) {
  const mgopt_tensor *x, *y;
  if (a == b) return 1;
  x = mgopt_value_const(a);
  y = mgopt_value_const(b);
  return x && y && mgopt_tensor_equal(x, y) && mgopt_type_equal(&a->type, &b->type);
}

/* Order-insensitive over slots and attributes (they may be stored in any order). */
static uint64_t mgopt__cdd_op_hash(const mgopt_op *op) {
  uint64_t h = mgopt__hash_bytes(op->type, strlen(op->type), MGOPT__HASH_SEED), sum;
  int32_t i, k;
  mgopt_tensor *t = mgopt__cdd_const(op);
  if (t) { /* dtype and shape only: the bytes are looked at when another const has them too */
    h = mgopt__hash_bytes(&t->dtype, 1, h);
    h = mgopt__hash_bytes(&t->rank, sizeof t->rank, h);
    return t->rank > 0 ? mgopt__hash_bytes(t->shape, sizeof(int64_t) * (size_t)t->rank, h) : h;
  }
  sum = mgopt__pu_attrs_hash(op);
  for (i = 0; i < op->nslots; i++) {
    uint64_t s;
    if (op->slots[i].n == 0) continue;
    s = mgopt__hash_bytes(op->slots[i].name, strlen(op->slots[i].name), 7);
    for (k = 0; k < op->slots[i].n; k++) s = mgopt__cdd_mix(s, mgopt__cdd_value_hash(op->slots[i].uses[k].value));
    sum += s;
  }
  return mgopt__cdd_mix(mgopt__cdd_mix(h, sum), (uint64_t)op->nouts);
}

static int32_t mgopt__cdd_nonempty_slots(const mgopt_op *op) {
  int32_t i, n = 0;
  for (i = 0; i < op->nslots; i++) n += op->slots[i].n > 0;
  return n;
}

static int mgopt__cdd_op_equal(const mgopt_op *a, const mgopt_op *b) {
  int32_t i, k;
  mgopt_tensor *x, *y;
  if (a->type != b->type || a->nouts != b->nouts || a->nattrs != b->nattrs) return 0;
  for (i = 0; i < a->nouts; i++)
    if (!mgopt_type_equal(&a->outs[i]->type, &b->outs[i]->type)) return 0;
  x = mgopt__cdd_const(a);
  y = mgopt__cdd_const(b);
  if (x || y) return x && y && mgopt_tensor_equal(x, y);
  if (!mgopt__pu_attrs_equal(a, b)) return 0;
  if (mgopt__cdd_nonempty_slots(a) != mgopt__cdd_nonempty_slots(b)) return 0;
  for (i = 0; i < a->nslots; i++) {
    const mgopt_slot *s = &a->slots[i], *o;
    int32_t j;
    if (s->n == 0) continue;
    j = mgopt_op_slot_index(b, s->name);
    if (j < 0) return 0;
    o = &b->slots[j];
    if (o->n != s->n || o->is_list != s->is_list) return 0;
    for (k = 0; k < s->n; k++)
      if (!mgopt__cdd_value_equal(s->uses[k].value, o->uses[k].value)) return 0;
  }
  return 1;
}

static int mgopt__cdd_is_candidate(const mgopt__cdd *c, const mgopt_op *op) {
  mgopt_tensor *t = mgopt__cdd_const(op);
  if (t) return t->numel >= c->threshold;
  return mgopt__cdd_is_constexpr(op);
}

static int mgopt__cdd_any_func_output(const mgopt_op *op) {
  int32_t i;
  for (i = 0; i < op->nouts; i++)
    if (mgopt__pu_is_func_output(op->outs[i])) return 1;
  return 0;
}

/* every output of rep may replace op's (equal tensors; a constexpr op's
   declared output types may still differ) */
static int mgopt__cdd_fits(mgopt__cdd *c, mgopt_op *op, const mgopt_op *rep) {
  int32_t i;
  for (i = 0; i < op->nouts; i++)
    if (!mgopt__pu_replace_fits(c->p, op->outs[i], rep->outs[i])) return 0;
  return 1;
}

static int mgopt__cdd_push(mgopt__cdd *c, mgopt_op *op, uint64_t h) {
  mgopt__cdd_entry *e;
  mgopt__map_slot *sl = mgopt__map_get(&c->by_hash, mgopt__map_hash_key(h), NULL);
  if (!sl) return 0;
  if (c->ne == c->ecap) {
    void *arr = c->e;
    if (!mgopt__grow(&c->p->alloc, &arr, &c->ecap, c->ne + 1, sizeof(mgopt__cdd_entry))) return 0;
    c->e = (mgopt__cdd_entry *)arr;
  }
  e = &c->e[c->ne];
  e->op = op;
  e->hash = h;
  e->next = sl->v.i - 1;
  sl->v.i = ++c->ne;
  return 1;
}

/* Entries are popped in reverse order, so each is the latest under its hash. */
static void mgopt__cdd_pop_to(mgopt__cdd *c, int64_t mark) {
  while (c->ne > mark) {
    mgopt__cdd_entry *e = &c->e[--c->ne];
    mgopt__map_slot *sl = mgopt__map_find(&c->by_hash, mgopt__map_hash_key(e->hash));
    if (sl) sl->v.i = e->next + 1;
  }
}

/* The earlier visible op equal to op, or NULL; *key is what op is filed under
   when it stays. A const is keyed by its dtype and shape first: the bytes of a
   weight whose shape no other const has are never read (in a mapped model
   file, never even paged in). When op meets an unequal const under that key,
   it is filed under a probe of its bytes too (mgopt__tensor_probe: its first and
   last bytes), and when it meets one there, under the full hash as
   well; its equals are looked for at each level on the way. An equal const
   met the same ones, so it is filed at the level op reaches. Look-alikes
   cost one probe or one full hash each, never a comparison with every other. */
static mgopt_op *mgopt__cdd_find(const mgopt__cdd *c, mgopt_op *op, uint64_t *key) {
  uint64_t h = mgopt__cdd_op_hash(op);
  mgopt_tensor *t = mgopt__cdd_const(op);
  int level;
  for (level = 0;; level++) {
    const mgopt__map_slot *sl = mgopt__map_find(&c->by_hash, mgopt__map_hash_key(h));
    int64_t i;
    int met = 0;
    for (i = sl ? sl->v.i - 1 : -1; i >= 0; i = c->e[i].next) {
      if (c->e[i].hash != h) continue; /* hashes 0 and 1 share a key */
      if (mgopt__cdd_op_equal(c->e[i].op, op)) {
        *key = h;
        return c->e[i].op;
      }
      met = 1;
    }
    if (level == 2 || !t || !met) break;
    h = mgopt__cdd_mix(h, level == 0 ? mgopt__tensor_probe(t) : mgopt_tensor_hash(t));
  }
  *key = h;
  return NULL;
}

static mgopt_status mgopt__cdd_block(mgopt__cdd *c, mgopt_block *b, int depth) {
  int64_t mark = c->ne;
  mgopt_op *op, *next;
  if (depth > 256) return mgopt_diag_set(c->ctx->diag, MGOPT_ERR_LIMIT, "blocks nested too deeply");
  for (op = b->first; op; op = next) {
    int32_t i;
    next = op->next;
    if (mgopt__cdd_is_candidate(c, op)) {
      uint64_t h;
      mgopt_op *rep = mgopt__cdd_find(c, op, &h);
      if (rep && !mgopt__cdd_any_func_output(op) && mgopt__cdd_fits(c, op, rep)) {
        for (i = 0; i < op->nouts; i++) mgopt_value_replace_all_uses(op->outs[i], rep->outs[i]);
        mgopt_op_erase(op);
        c->ctx->rewrites++;
        continue;
      }
      if (!rep && !mgopt__cdd_push(c, op, h)) return mgopt_diag_set(c->ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
    }
    for (i = 0; i < op->nblocks; i++) {
      mgopt_status s = mgopt__cdd_block(c, op->blocks[i], depth + 1);
      if (s) return s;
    }
  }
  mgopt__cdd_pop_to(c, mark);
  return MGOPT_OK;
}

/* The innermost block enclosing blocks a and b (either may be it), or NULL
   when they lie in different functions. */
static mgopt_block *mgopt__cdd_common_block(mgopt_block *a, mgopt_block *b) {
  int32_t da = 0, db = 0;
  const mgopt_block *x;
  for (x = a; x->parent_op; x = x->parent_op->parent) da++;
  for (x = b; x->parent_op; x = x->parent_op->parent) db++;
  for (; da > db; da--) a = a->parent_op->parent;
  for (; db > da; db--) b = b->parent_op->parent;
  while (a != b && a->parent_op && b->parent_op) {
    a = a->parent_op->parent;
    b = b->parent_op->parent;
  }
  return a == b ? a : NULL;
}

/* Const ops over the threshold anywhere in the program: a duplicate in a
   sibling scope is filed for hoisting, one in another function shares data. */
static int mgopt__cdd_share_visit(mgopt_op *op, void *ud) {
  mgopt__cdd *c = (mgopt__cdd *)ud;
  mgopt_tensor *t = mgopt__cdd_const(op);
  mgopt_op *rep;
  uint64_t h;
  if (!t || t->numel < c->threshold || t->dtype == MGOPT_DT_STRING || t->nbytes == 0) return 0;
  rep = mgopt__cdd_find(c, op, &h);
  if (!rep) return mgopt__cdd_push(c, op, h) ? 0 : 1;
  if (!mgopt__pu_is_func_output(op->outs[0]) && !mgopt_value_is_block_output(op->outs[0]) &&
      !mgopt_value_is_block_output(rep->outs[0]) && mgopt__cdd_common_block(op->parent, rep->parent)) {
    void *arr = c->hoist;
    if (c->nhoist + 2 > c->hcap && !mgopt__grow(&c->p->alloc, &arr, &c->hcap, c->nhoist + 2, sizeof(mgopt_op *)))
      return 1;
    c->hoist = (mgopt_op **)arr;
    c->hoist[c->nhoist++] = op;
    c->hoist[c->nhoist++] = rep;
    return 0;
  }
  {
    mgopt_tensor *r = mgopt__cdd_const(rep);
    if (r->data != t->data) {
      t->data = r->data;
      t->borrowed = 1;
      r->borrowed = 1;
      c->ctx->rewrites++;
    }
  }
  return 0;
}

/* Moves each filed earlier const up to the block enclosing its duplicate,
   before the op there that holds it (the walk saw it first, so that op comes
   first), and erases the duplicate. */
static void mgopt__cdd_hoist(mgopt__cdd *c) {
  int64_t i;
  for (i = 0; i < c->nhoist; i += 2) {
    mgopt_op *dup = c->hoist[i], *rep = c->hoist[i + 1], *at = rep;
    mgopt_block *b = mgopt__cdd_common_block(dup->parent, rep->parent);
    while (at->parent != b) at = at->parent->parent_op;
    if (at != rep) mgopt_op_move_before(rep, at);
    mgopt_value_replace_all_uses(dup->outs[0], rep->outs[0]);
    mgopt_op_erase(dup);
    c->ctx->rewrites++;
  }
}

static int mgopt__cdd_count(mgopt_op *op, void *ud) {
  MGOPT__UNUSED(op);
  (*(int64_t *)ud)++;
  return 0;
}

/* At least as many as the candidate ops of the program (consts over the
   threshold, constexpr_* ops), from the op index: each function's consts,
   registered constexpr_* ops and opaque ops. A function whose index is
   incomplete counts all its ops. */
static int64_t mgopt__cdd_candidates(mgopt__cdd *c) {
  int64_t total = 0, n, i;
  int32_t f, k;
  for (f = 0; f < mgopt_program_function_count(c->p); f++) {
    mgopt_function *fn = mgopt_program_function_at(c->p, f);
    mgopt_op *const *ops = mgopt__index_list(fn, MGOPT_OP_const, &n);
    if (n < 0) {
      n = 0;
      mgopt_block_walk(fn->body, mgopt__cdd_count, &n);
      total += n;
      continue;
    }
    for (i = 0; i < n; i++)
      if (mgopt__cdd_is_candidate(c, ops[i])) total++;
    for (k = 0; k < MGOPT_OP__COUNT; k++) {
      const mgopt_op_def *def = mgopt_op_def_get(k);
      if (k == MGOPT_OP_OPAQUE || (def && strncmp(def->name, "constexpr_", 10) == 0))
        total += mgopt__index_kind_count(fn, k);
    }
  }
  return total;
}

static mgopt_status mgopt__cdd_run(mgopt_pass_ctx *ctx) {
  mgopt__cdd c;
  mgopt_status s = MGOPT_OK;
  int64_t nops = 0;
  int32_t f;
  memset(&c, 0, sizeof c);
  c.ctx = ctx;
  c.p = ctx->program;
  c.threshold = ctx->opts[0].i < 0 ? 0 : ctx->opts[0].i;
  nops = mgopt__cdd_candidates(&c);
  if (nops == 0) return MGOPT_OK; /* nothing to merge, nothing to share */
  mgopt__map_init_flags(&c.by_hash, &c.p->alloc, MGOPT__MAP_HASHED | MGOPT__MAP_SPARSE);
  if (!mgopt__map_reset(&c.by_hash, (size_t)nops)) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
  for (f = 0; f < mgopt_program_function_count(c.p) && !s; f++)
    s = mgopt__cdd_block(&c, mgopt_program_function_at(c.p, f)->body, 0);
  if (!s) {
    mgopt__cdd_pop_to(&c, 0);
    if (mgopt_program_walk(c.p, mgopt__cdd_share_visit, &c))
      s = mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
    else
      mgopt__cdd_hoist(&c);
  }
  mgopt__map_free(&c.by_hash);
  if (c.e) mgopt__heap_free(&c.p->alloc, c.e, sizeof(mgopt__cdd_entry) * (size_t)c.ecap);
  if (c.hoist) mgopt__heap_free(&c.p->alloc, c.hoist, sizeof(mgopt_op *) * (size_t)c.hcap);
  return s;
}

static const mgopt_opt_def mgopt__cdd_opts[] = {
    {"const_threshold", MGOPT_OPT_INT, "100", "consts with fewer elements are left alone"},
};

MGOPT__DEFINE_PASS_WITH_OPTIONS(cleanup, common, const_deduplication,
                                "merge equal consts and identical constexpr ops",
                                mgopt__cdd_opts, mgopt__cdd_run);
/* src/passes/cleanup/dedup_op_and_var_names.c — common::dedup_op_and_var_names: unique op names and value names per function.

   Spec: mil_graph_passes.txt, "For each function, this pass renames ops and
   variables with the same name as any preceding ops/variables across all
   scopes"; reference §3.4.

   Before:
     main(%x: (2, 3, fp32)) {
       %castop: (2, 3, fp16) = cast(x=%x, dtype="fp16")
       %castop: (2, 3, fp32) = cast(x=%castop, dtype="fp32")
       %square_last: (2, 3, fp32) = square(x=%castop)
     } -> (%square_last)
   (the second cast reads the first: the text format resolves a name to its
   latest definition)
   After:
     main(%x: (2, 3, fp32)) {
       %castop: (2, 3, fp16) = cast(x=%x, dtype="fp16")
       %castop_1: (2, 3, fp32) = cast(x=%castop, dtype="fp32")
       %square_last: (2, 3, fp32) = square(x=%castop_1)
     } -> (%square_last)

   What it does, per function: the function's inputs and outputs keep their
   names and claim them first (with the op names of the ops producing those
   outputs, where equal). Then, in program order, each nested block's
   arguments, then for each op its nested blocks (first), its outputs, and
   its op name: a name already claimed by something else becomes
   `<name>_1`, `<name>_2`, ... — the first suffix that is neither claimed
   nor any name present in the function, so a later `%a_1` keeps its own.
   An op named like its first output follows that output's new name when
   that name is free among op names (so the text stays free of name="...").
   Op names and value names are separate namespaces.
   Fails (MGOPT_ERR_PASS) when two different inputs/outputs of a function
   share a name (an input and an output, or two outputs): no renaming can
   keep both. The same value listed twice, or an input returned as an
   output, is fine.
   Cost: per function one walk claiming names in one core map keyed by
   interned name pointers (sized from the op index's count up front) when no
   name clashes; else two more walks with one map per namespace and a
   per-name next-suffix counter: O(names) plus the suffix probes. */

/* A name's entry in a map keyed by the interned name: the owner (id + 1 of
   the value or op that claimed it; 0 = unclaimed) in bits 0..31, whether the
   name appears somewhere in the function in bit 32, the next suffix to try
   for it as a base name in bits 33..63. */
#define MGOPT__DN_OWNER(x) ((x)->id + 1u)
#define MGOPT__DN_PRESENT ((uint64_t)1 << 32)
#define mgopt__dn_owner(s) ((uint32_t)((s)->v.u & 0xffffffffu))
#define mgopt__dn_next_k(s) ((uint32_t)((s)->v.u >> 33))

static void mgopt__dn_set_owner(mgopt__map_slot *s, uint32_t owner) {
  s->v.u = (s->v.u & ~(uint64_t)0xffffffffu) | owner;
}

typedef struct mgopt__dn {
  mgopt_pass_ctx *ctx;
  mgopt_program *p;
  mgopt_function *f;
  mgopt__map vals, ops;
  char *buf;
  size_t bufcap;
  int oom;
  int clashed;               /* the first try met a name claimed by another owner */
} mgopt__dn;

/* The entry of key, added (unclaimed, unmarked) if absent. NULL on OOM. */
static mgopt__map_slot *mgopt__dn_get(mgopt__dn *d, mgopt__map *t, const char *key) {
  mgopt__map_slot *s = mgopt__map_get(t, mgopt__map_ptr_key(key), NULL);
  if (!s) d->oom = 1;
  return s;
}

/* Returns the name `owner` (a value or an op) gets for `name` and claims it:
   the name itself if unclaimed or already claimed by owner, else the first
   free suffixed name. NULL on OOM. */
static const char *mgopt__dn_claim(mgopt__dn *d, mgopt__map *t, const char *name, uint32_t owner) {
  mgopt__map_slot *s = mgopt__dn_get(d, t, name);
  size_t len;
  uint32_t k;
  if (!s) return NULL;
  if (!mgopt__dn_owner(s) || mgopt__dn_owner(s) == owner) {
    mgopt__dn_set_owner(s, owner);
    return name;
  }
  len = strlen(name);
  if (len + 16 > d->bufcap) {
    size_t ncap = len + 64;
    char *nb = (char *)mgopt__heap_realloc(&d->p->alloc, d->buf, d->bufcap, ncap);
    if (!nb) {
      d->oom = 1;
      return NULL;
    }
    d->buf = nb;
    d->bufcap = ncap;
  }
  for (k = mgopt__dn_next_k(s) ? mgopt__dn_next_k(s) : 1;; k++) {
    const char *cand;
    int n = snprintf(d->buf, d->bufcap, "%s_%u", name, (unsigned)k);
    mgopt__map_slot *c;
    if (n < 0) return NULL;
    cand = mgopt_program_intern(d->p, d->buf, (size_t)n);
    if (!cand) {
      d->oom = 1;
      return NULL;
    }
    if (mgopt__map_find(t, mgopt__map_ptr_key(cand))) continue;
    s = mgopt__dn_get(d, t, name); /* the table may have moved */
    if (!s) return NULL;
    s->v.u = (s->v.u & ~(~(uint64_t)0 << 33)) | (uint64_t)((k + 1) & 0x7fffffffu) << 33;
    c = mgopt__dn_get(d, t, cand);
    if (!c) return NULL;
    c->v.u |= MGOPT__DN_PRESENT;
    mgopt__dn_set_owner(c, owner);
    return cand;
  }
}

static int mgopt__dn_mark(mgopt__dn *d, mgopt_block *b, int depth) {
  mgopt_op *op;
  int32_t i;
  if (depth > 256) return 0;
  for (i = 0; i < b->nargs; i++)
    if (b->args[i]->name) {
      mgopt__map_slot *s = mgopt__dn_get(d, &d->vals, b->args[i]->name);
      if (!s) return 0;
      s->v.u |= MGOPT__DN_PRESENT;
    }
  for (op = b->first; op; op = op->next) {
    mgopt__map_slot *s;
    if (op->name) {
      s = mgopt__dn_get(d, &d->ops, op->name);
      if (!s) return 0;
      s->v.u |= MGOPT__DN_PRESENT;
    }
    for (i = 0; i < op->nouts; i++)
      if (op->outs[i]->name) {
        s = mgopt__dn_get(d, &d->vals, op->outs[i]->name);
        if (!s) return 0;
        s->v.u |= MGOPT__DN_PRESENT;
      }
    for (i = 0; i < op->nblocks; i++)
      if (!mgopt__dn_mark(d, op->blocks[i], depth + 1)) return 0;
  }
  return 1;
}

static int mgopt__dn_rename_value(mgopt__dn *d, mgopt_value *v) {
  const char *n;
  if (!v->name) return 1;
  n = mgopt__dn_claim(d, &d->vals, v->name, MGOPT__DN_OWNER(v));
  if (!n) return 0;
  if (n != v->name) {
    v->name = n;
    d->ctx->rewrites++;
  }
  return 1;
}

static int mgopt__dn_block(mgopt__dn *d, mgopt_block *b, int depth) {
  mgopt_op *op;
  const char *old0;
  int32_t i;
  if (depth > 256) return 0;
  if (b->parent_op)
    for (i = 0; i < b->nargs; i++)
      if (!mgopt__dn_rename_value(d, b->args[i])) return 0;
  for (op = b->first; op; op = op->next) {
    for (i = 0; i < op->nblocks; i++)
      if (!mgopt__dn_block(d, op->blocks[i], depth + 1)) return 0;
    old0 = op->nouts ? op->outs[0]->name : NULL;
    for (i = 0; i < op->nouts; i++)
      if (!mgopt__dn_rename_value(d, op->outs[i])) return 0;
    if (op->name) {
      /* an op named like its first output follows that output's new name when it can */
      const mgopt__map_slot *f = NULL;
      const char *n;
      if (op->name == old0 && op->outs[0]->name != old0) f = mgopt__map_find(&d->ops, mgopt__map_ptr_key(op->outs[0]->name));
      if (op->name == old0 && op->outs[0]->name != old0 && (!f || !mgopt__dn_owner(f)))
        n = mgopt__dn_claim(d, &d->ops, op->outs[0]->name, MGOPT__DN_OWNER(op));
      else
        n = mgopt__dn_claim(d, &d->ops, op->name, MGOPT__DN_OWNER(op));
      if (!n) return 0;
      if (n != op->name) {
        op->name = n;
        d->ctx->rewrites++;
      }
    }
  }
  return 1;
}

/* Claims the io names; MGOPT_ERR_PASS when two different io values share one. */
static mgopt_status mgopt__dn_claim_io(mgopt__dn *d, mgopt_value *v) {
  mgopt__map_slot *s;
  if (!v || !v->name) return MGOPT_OK;
  s = mgopt__dn_get(d, &d->vals, v->name);
  if (!s) return mgopt_diag_set(d->ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
  if (mgopt__dn_owner(s) && mgopt__dn_owner(s) != MGOPT__DN_OWNER(v))
    return mgopt_diag_set(d->ctx->diag, MGOPT_ERR_PASS,
                          "function '%s': the name '%s' is used by two different inputs/outputs; "
                          "it cannot be made unique without renaming one of them",
                          d->f->name, v->name);
  s->v.u |= MGOPT__DN_PRESENT;
  mgopt__dn_set_owner(s, MGOPT__DN_OWNER(v));
  /* the op of a function output, named like it, keeps that name too */
  if (v->def && v->def->name == v->name && v->index == 0) {
    s = mgopt__dn_get(d, &d->ops, v->name);
    if (!s) return mgopt_diag_set(d->ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
    if (!mgopt__dn_owner(s)) {
      s->v.u |= MGOPT__DN_PRESENT;
      mgopt__dn_set_owner(s, MGOPT__DN_OWNER(v->def));
    }
  }
  return MGOPT_OK;
}

/* ---- the first try: one map for both namespaces, value owner in bits
   0..31 of a name's entry, op owner in bits 32..63 (an op is mostly named
   like its first output: one lookup claims both), no presence marks, stop at
   the first clash. Order does not matter here: nothing is renamed, and a
   clash exists in any order or in none. */

/* Claims name for owner in the value (shift 0) or op (shift 32) half; 0 on a clash or OOM. */
static int mgopt__dn_try(mgopt__dn *d, const char *name, int shift, uint32_t owner) {
  mgopt__map_slot *s = mgopt__dn_get(d, &d->vals, name);
  uint32_t cur;
  if (!s) return 0;
  cur = (uint32_t)(s->v.u >> shift);
  if (cur && cur != owner) {
    d->clashed = 1;
    return 0;
  }
  s->v.u |= (uint64_t)owner << shift;
  return 1;
}

static int mgopt__dn_try_block(mgopt__dn *d, mgopt_block *b, int depth) {
  mgopt_op *op;
  int32_t i;
  if (depth > 256) return 0;
  if (b->parent_op)
    for (i = 0; i < b->nargs; i++)
      if (b->args[i]->name && !mgopt__dn_try(d, b->args[i]->name, 0, MGOPT__DN_OWNER(b->args[i]))) return 0;
  for (op = b->first; op; op = op->next) {
    for (i = 0; i < op->nblocks; i++)
      if (!mgopt__dn_try_block(d, op->blocks[i], depth + 1)) return 0;
    for (i = 0; i < op->nouts; i++)
      if (op->outs[i]->name && !mgopt__dn_try(d, op->outs[i]->name, 0, MGOPT__DN_OWNER(op->outs[i]))) return 0;
    if (op->name && !mgopt__dn_try(d, op->name, 32, MGOPT__DN_OWNER(op))) return 0;
  }
  return 1;
}

/* mgopt__dn_claim_io for the first try. */
static mgopt_status mgopt__dn_try_io(mgopt__dn *d, mgopt_value *v) {
  mgopt__map_slot *s;
  uint32_t cur;
  if (!v || !v->name) return MGOPT_OK;
  s = mgopt__dn_get(d, &d->vals, v->name);
  if (!s) return mgopt_diag_set(d->ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
  cur = (uint32_t)(s->v.u & 0xffffffffu);
  if (cur && cur != MGOPT__DN_OWNER(v))
    return mgopt_diag_set(d->ctx->diag, MGOPT_ERR_PASS,
                          "function '%s': the name '%s' is used by two different inputs/outputs; "
                          "it cannot be made unique without renaming one of them",
                          d->f->name, v->name);
  s->v.u = (s->v.u & ~(uint64_t)0xffffffffu) | MGOPT__DN_OWNER(v);
  /* the op of a function output, named like it, keeps that name too */
  if (v->def && v->def->name == v->name && v->index == 0 && !(s->v.u >> 32))
    s->v.u |= (uint64_t)MGOPT__DN_OWNER(v->def) << 32;
  return MGOPT_OK;
}

/* Claims f's io names, then renames what clashes. The first try (above)
   claims names without marking which are present (the marks matter only to
   choose a suffix): when nothing clashes, nothing is renamed and that one
   walk is the whole pass; at the first clash (nothing renamed yet) it starts
   over with the marks and a map per namespace. */
static mgopt_status mgopt__dn_function(mgopt__dn *d) {
  mgopt_block *body = d->f->body;
  size_t nops = (size_t)mgopt__index_op_count(d->f);
  mgopt_status s = MGOPT_OK;
  int32_t i;
  d->clashed = 0;
  if (!mgopt__map_reset(&d->vals, nops + (size_t)body->nargs))
    return mgopt_diag_set(d->ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
  for (i = 0; i < body->nargs && !s; i++) s = mgopt__dn_try_io(d, body->args[i]);
  for (i = 0; i < body->nouts && !s; i++) s = mgopt__dn_try_io(d, body->outs[i]->value);
  if (s) return s;
  if (mgopt__dn_try_block(d, body, 0)) return MGOPT_OK;
  if (d->clashed) {
    if (!mgopt__map_reset(&d->vals, nops + (size_t)body->nargs) || !mgopt__map_reset(&d->ops, nops))
      return mgopt_diag_set(d->ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
    for (i = 0; i < body->nargs && !s; i++) s = mgopt__dn_claim_io(d, body->args[i]);
    for (i = 0; i < body->nouts && !s; i++) s = mgopt__dn_claim_io(d, body->outs[i]->value);
    if (s) return s;
    if (mgopt__dn_mark(d, body, 0) && mgopt__dn_block(d, body, 0)) return MGOPT_OK;
  }
  return d->oom ? mgopt_diag_set(d->ctx->diag, MGOPT_ERR_NOMEM, "out of memory")
                : mgopt_diag_set(d->ctx->diag, MGOPT_ERR_LIMIT, "blocks nested too deeply");
}

static mgopt_status mgopt__dn_run(mgopt_pass_ctx *ctx) {
  mgopt__dn d;
  mgopt_status s = MGOPT_OK;
  int32_t fi;
  memset(&d, 0, sizeof d);
  d.ctx = ctx;
  d.p = ctx->program;
  mgopt__map_init(&d.vals, &d.p->alloc);
  mgopt__map_init(&d.ops, &d.p->alloc);
  for (fi = 0; fi < mgopt_program_function_count(d.p) && !s; fi++) {
    d.f = mgopt_program_function_at(d.p, fi);
    s = mgopt__dn_function(&d);
  }
  mgopt__map_free(&d.vals);
  mgopt__map_free(&d.ops);
  if (d.buf) mgopt__heap_free(&d.p->alloc, d.buf, d.bufcap);
  return s;
}

MGOPT__DEFINE_PASS(cleanup, common, dedup_op_and_var_names,
                   "make op names and value names unique within each function", mgopt__dn_run);
/* src/passes/cleanup/expand_dynamic_linear.c — common::expand_dynamic_linear: a linear with a run-time weight or bias becomes matmul (+ add).

   Spec: mil_graph_passes.txt, "Translate to linear when the operand is a
   descendant of const ... this pass would clean up the too-ambitious linear
   ops by replacing them with matmul ops"; reference §3.5.

   Before:
     main(%x: (2, 4, fp32), %w: (3, 4, fp32), %b: (3, fp32)) {
       %y: (2, 3, fp32) = linear(x=%x, weight=%w, bias=%b)
     } -> (%y)
   After:
     main(%x: (2, 4, fp32), %w: (3, 4, fp32), %b: (3, fp32)) {
       %y_matmul_0: (2, 3, fp32) = matmul(x=%x, y=%w, transpose_x=false, transpose_y=true)
       %y: (2, 3, fp32) = add(x=%y_matmul_0, y=%b)
     } -> (%y)

   An operand is static when absent or produced by const or constexpr_*.
   Fires on a linear (weight is [out, in], so matmul takes transpose_y=true):
   - weight not static: matmul(x, weight, transpose_y=true), then add(bias)
     unless the bias is absent or a constant of zeros;
   - weight static, bias not static: linear(x, weight) with no bias, then
     add(bias).
   The last new op takes the linear's output name and op name, and its
   declared type when that holds for the inferred one (mgopt__pu_adopt_type:
   main's output types stay).
   Must not fire: weight and bias both static; x and a run-time weight or a
   bias of different dtypes (linear does not check them, matmul and add do);
   a new type that contradicts a reader of the linear's output.
   Cost: worklist patterns, O(linears). */

static int mgopt__edl_static(const mgopt_value *v) {
  if (!v) return 1;
  if (!v->def) return 0;
  return v->def->kind == MGOPT_OP_const || strncmp(v->def->type, "constexpr_", 10) == 0;
}

/* dtypes that matmul / add accept together (an unknown one is left to inference) */
static int mgopt__edl_same_dtype(const mgopt_value *a, const mgopt_value *b) {
  return !a || !b || a->type.dtype == MGOPT_DT_UNKNOWN || b->type.dtype == MGOPT_DT_UNKNOWN ||
         a->type.dtype == b->type.dtype;
}

static int mgopt__edl_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const slots[2] = {"x", "y"};
  static const char *const lslots[2] = {"x", "weight"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "weight");
  mgopt_value *b = mgopt_op_operand(op, "bias"), *out, *vals[2];
  mgopt_op *mm, *add;
  char base[160];
  int wstatic = mgopt__edl_static(w), bstatic = mgopt__edl_static(b), ok = 0;
  MGOPT__UNUSED(ud);
  if (!x || !w || op->nouts != 1 || (wstatic && bstatic)) return 0;
  /* linear's inference does not compare dtypes; the matmul and add do */
  if (!mgopt__edl_same_dtype(x, b) || (!wstatic && !mgopt__edl_same_dtype(x, w))) return 0;
  out = op->outs[0];
  vals[0] = x;
  vals[1] = w;
  if (!wstatic) {
    snprintf(base, sizeof base, "%.120s_matmul", out->name ? out->name : "linear");
    mm = mgopt_rw_create(rw, op, "matmul", mgopt_program_fresh_name(p, base), 2, slots, vals, 1);
    if (!mm || mgopt_op_set_bool(mm, "transpose_x", 0) || mgopt_op_set_bool(mm, "transpose_y", 1)) return 0;
  } else {
    snprintf(base, sizeof base, "%.120s_linear", out->name ? out->name : "linear");
    mm = mgopt_rw_create(rw, op, "linear", mgopt_program_fresh_name(p, base), 2, lslots, vals, 1);
    if (!mm) return 0;
  }
  if (mgopt_op_infer(p, mm, NULL)) {
    mgopt_rw_erase(rw, mm); /* cannot be typed: leave the linear as it was */
    return 0;
  }
  mgopt__pu_fill_type(p, mm, 0, &out->type);
  if (!b || mgopt__pu_const_all(b, 0.0)) {
    if (!mgopt__pu_adopt_type(p, mm->outs[0], out)) {
      mgopt_rw_erase(rw, mm);
      return 0;
    }
    mm->name = op->name;
    mm->outs[0]->name = out->name;
    mgopt_rw_replace_value(rw, out, mm->outs[0]);
  } else {
    vals[0] = mm->outs[0];
    vals[1] = b;
    add = mgopt_rw_create(rw, op, "add", out->name, 2, slots, vals, 1);
    if (!add) return 0;
    add->name = op->name;
    if (mgopt_op_infer(p, add, NULL) == MGOPT_OK) {
      mgopt__pu_fill_type(p, add, 0, &out->type);
      ok = mgopt__pu_adopt_type(p, add->outs[0], out);
    }
    if (!ok) {
      mgopt_rw_erase(rw, add);
      mgopt_rw_erase(rw, mm);
      return 0;
    }
    mgopt_rw_replace_value(rw, out, add->outs[0]);
  }
  mgopt__pu_erase_with_consts(rw, op);
  return 1;
}

static const mgopt_pattern mgopt__edl_patterns[] = {
    {"dynamic_linear", MGOPT_OP_linear, NULL, 1, mgopt__edl_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, expand_dynamic_linear,
                           "turn a linear with a run-time weight or bias into matmul and add",
                           mgopt__edl_patterns);
/* src/passes/cleanup/loop_invariant_elimination.c — common::loop_invariant_elimination: drop while_loop vars the body passes through.

   Spec: mil_graph_passes.txt, "When a block does not modify a block input
   var, eliminate that block input var and use the corresponding var in the
   outer scope"; reference §3.8.

   Before:
     main(%a: (1, 2, fp32), %b: (1, 2, fp32)) {
       %l0: (1, 2, fp32), %l1: (1, 2, fp32) = while_loop(loop_vars=(%a, %b))
         loop_cond(%a_x: (1, 2, fp32), %b_x: (1, 2, fp32)) {
           %ra: (fp32) = reduce_sum(x=%a_x, axes=[0, 1], keep_dims=false)
           %rb: (fp32) = reduce_sum(x=%b_x, axes=[0, 1], keep_dims=false)
           %c: (bool) = less(x=%ra, y=%rb)
         } -> (%c)
         loop_body(%a_x: (1, 2, fp32), %b_x: (1, 2, fp32)) {
           %s: (1, 2, fp32) = add(x=%a_x, y=%b_x)
         } -> (%s, %b_x)
     } -> (%l0, %l1)
   After:
     main(%a: (1, 2, fp32), %b: (1, 2, fp32)) {
       %l1: (1, 2, fp32) = identity(x=%b)
       %l0: (1, 2, fp32) = while_loop(loop_vars=(%a))
         loop_cond(%a_x: (1, 2, fp32)) {
           %ra: (fp32) = reduce_sum(x=%a_x, axes=[0, 1], keep_dims=false)
           %rb: (fp32) = reduce_sum(x=%b, axes=[0, 1], keep_dims=false)
           %c: (bool) = less(x=%ra, y=%rb)
         } -> (%c)
         loop_body(%a_x: (1, 2, fp32)) {
           %s: (1, 2, fp32) = add(x=%a_x, y=%b)
         } -> (%s)
     } -> (%l0, %l1)

   Loop var k is invariant when body output k is body argument k itself, or
   is loop_vars[k] (the outer value, returned unchanged). Then inside both
   blocks argument k is replaced by loop_vars[k], the argument, body output
   k, loop_vars[k] and loop output k are removed, and uses of loop output k
   read loop_vars[k]; where loop output k is a function output an identity
   of loop_vars[k] named like it keeps the output's name and type (the
   spec's example). At least one loop var is always kept.
   Types: a block argument (or the loop output) may be declared less
   precisely than the outer value that replaces it (a symbolic or unknown
   dim, an unknown dtype or rank, which the verifier accepts for loop vars).
   Every op that reads a replaced value, and transitively every op whose
   output type must change, is re-inferred with the outer value's type
   first: an output whose dtype was unknown takes the inferred one; an
   inference that fails or contradicts a declared type (dtype, rank, static
   dim; a nested loop's block arguments) means the declared types cannot
   hold for the outer value, and var k is left alone. So is a change that
   would reach a function output's type.
   Must not fire: a body that returns some other outer value for slot k
   (MIL's reference treats any outer value as invariant, which is wrong from
   the second iteration on), or a computed value.
   Inner loops first (nested blocks before their op). Cost: O(ops + loop
   vars + uses of the removed values, and of the values whose type they
   refine); nothing for a function without loops (the op index counts them). */

/* A type change under trial: the value and its type before the change. */
typedef struct mgopt__lie_undo {
  mgopt_value *v;
  mgopt_type old;
} mgopt__lie_undo;

typedef struct mgopt__lie {
  mgopt_pass_ctx *ctx;
  mgopt_program *p;
  mgopt__lie_undo *undo; /* changes made by the current trial */
  int64_t nundo, undo_cap;
  mgopt_value **work;    /* values whose type changed, their users to recheck */
  int64_t nwork, work_cap;
} mgopt__lie;

/* Sets v's type to t (the old one logged) and queues v's users. 0 on OOM. */
static int mgopt__lie_set_type(mgopt__lie *L, mgopt_value *v, const mgopt_type *t) {
  void *arr;
  arr = L->undo;
  if (!mgopt__grow(&L->p->alloc, &arr, &L->undo_cap, L->nundo + 1, sizeof(mgopt__lie_undo))) return 0;
  L->undo = (mgopt__lie_undo *)arr;
  arr = L->work;
  if (!mgopt__grow(&L->p->alloc, &arr, &L->work_cap, L->nwork + 1, sizeof(mgopt_value *))) return 0;
  L->work = (mgopt_value **)arr;
  L->undo[L->nundo].v = v;
  L->undo[L->nundo].old = v->type;
  L->nundo++;
  v->type = *t;
  L->work[L->nwork++] = v;
  return 1;
}

/* Re-infers op after an operand (or a nested block output) changed type.
   1: its declared output types still hold (outputs with an unknown dtype
   take the inferred one and are queued); 0: they cannot; -1: OOM. */
static int mgopt__lie_recheck(mgopt__lie *L, mgopt_op *op) {
  mgopt_type tmp[8], *inf;
  mgopt_status st;
  int32_t i;
  /* a loop's blocks keep their argument types: they must still fit the loop vars */
  if (!mgopt__pu_loop_args_fit(op)) return 0;
  inf = mgopt__pu_infer_outputs(L->p, op, tmp, &st);
  if (!inf) return st == MGOPT_OK ? 1 : st == MGOPT_ERR_NOMEM ? -1 : 0; /* no inference: types kept */
  for (i = 0; i < op->nouts; i++) {
    mgopt_value *o = op->outs[i];
    if (mgopt__type_clash(&o->type, &inf[i], 0)) return 0;
    if (o->type.kind == MGOPT_TYPE_TENSOR && o->type.dtype == MGOPT_DT_UNKNOWN && inf[i].dtype != MGOPT_DT_UNKNOWN) {
      mgopt_type t = o->type;
      if (mgopt__pu_is_func_output(o)) return 0; /* main's outputs keep their types */
      t.dtype = inf[i].dtype;
      if (!mgopt__lie_set_type(L, o, &t)) return -1;
    }
  }
  return 1;
}

/* Gives vals[i] the type types[i] and rechecks everything that depends on
   it. 1: the program types check (changes kept); 0: they do not (every
   change undone); -1: OOM (every change undone). */
static int mgopt__lie_retype(mgopt__lie *L, mgopt_value *const *vals, const mgopt_type *types, int32_t n) {
  int32_t i;
  int r = 1;
  L->nundo = 0;
  L->nwork = 0;
  for (i = 0; i < n && r == 1; i++)
    if (!mgopt_type_equal(&vals[i]->type, &types[i]) && !mgopt__lie_set_type(L, vals[i], &types[i])) r = -1;
  while (r == 1 && L->nwork > 0) {
    mgopt_value *v = L->work[--L->nwork];
    const mgopt_use *u;
    for (u = v->uses; u && r == 1; u = u->next) {
      mgopt_op *user = u->op;
      if (!user) {
        /* a block output: the op owning the block may infer from it (cond);
           a function output's type must not change */
        if (!u->block || !u->block->parent_op) {
          r = 0;
          break;
        }
        user = u->block->parent_op;
      }
      r = mgopt__lie_recheck(L, user);
    }
  }
  if (r != 1)
    while (L->nundo > 0) {
      L->nundo--;
      L->undo[L->nundo].v->type = L->undo[L->nundo].old;
    }
  return r;
}

static int mgopt__lie_invariant(const mgopt_op *op, int32_t k) {
  mgopt_block *body = op->blocks[1];
  mgopt_value *out = body->outs[k]->value;
  int32_t li = mgopt_op_slot_index(op, "loop_vars");
  mgopt_value *outer = op->slots[li].uses[k].value;
  return out == body->args[k] || out == outer;
}

static mgopt_status mgopt__lie_loop(mgopt__lie *L, mgopt_op *op) {
  static const char *const slot[1] = {"x"};
  mgopt_pass_ctx *ctx = L->ctx;
  mgopt_program *p = L->p;
  mgopt_block *cond, *body;
  int32_t li, n, k, kept;
  mgopt_value **vars;
  li = mgopt_op_slot_index(op, "loop_vars");
  if (op->nblocks != 2 || li < 0) return MGOPT_OK;
  cond = op->blocks[0];
  body = op->blocks[1];
  n = op->slots[li].n;
  if (n < 2 || op->nouts != n || body->nargs != n || cond->nargs != n || body->nouts != n) return MGOPT_OK;
  vars = (mgopt_value **)mgopt_program_alloc(p, sizeof(mgopt_value *) * (size_t)n, 8);
  if (!vars) return mgopt__oom(p);
  for (k = 0; k < n; k++) {
    vars[k] = op->slots[li].uses[k].value;
    if (!vars[k]) return MGOPT_OK;
  }
  kept = n;
  for (k = n - 1; k >= 0; k--) {
    mgopt_value *outer = vars[k], *res = op->outs[k];
    mgopt_value *tv[3];
    mgopt_type tt[3];
    int32_t j, nt = 0;
    int r, res_out;
    if (kept == 1) break;
    if (!mgopt__lie_invariant(op, k)) continue;
    /* the values outer replaces take its type first: what reads them must still type check */
    res_out = mgopt__pu_is_func_output(res);
    tv[nt] = cond->args[k];
    tt[nt++] = outer->type;
    tv[nt] = body->args[k];
    tt[nt++] = outer->type;
    if (!res_out) {
      tv[nt] = res;
      tt[nt++] = outer->type;
    }
    r = mgopt__lie_retype(L, tv, tt, nt);
    if (r < 0) return mgopt_diag_set(ctx->diag, mgopt__oom(p), "out of memory");
    if (r == 0) continue;
    if (res_out) {
      mgopt_op *id = mgopt_build_op(p, op->parent, op, "identity", res->name, 1, slot, &outer, 1);
      mgopt_status s;
      if (!id) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
      if ((s = mgopt_op_infer(p, id, ctx->diag)) != MGOPT_OK) return s;
      /* the function output keeps its declared type, which fits the outer value's */
      if (mgopt__type_copy(p, &id->outs[0]->type, &res->type))
        return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
      mgopt_value_replace_all_uses(res, id->outs[0]);
    } else {
      mgopt_value_replace_all_uses(res, outer);
    }
    mgopt_value_replace_all_uses(cond->args[k], outer);
    mgopt_value_replace_all_uses(body->args[k], outer);
    mgopt_block_remove_output(body, k);
    mgopt_block_remove_arg(cond, k);
    mgopt_block_remove_arg(body, k);
    mgopt__pu_op_remove_output(op, k);
    for (j = k; j + 1 < kept; j++) vars[j] = vars[j + 1];
    kept--;
    ctx->rewrites++;
  }
  if (kept != n && mgopt_op_set_operand_list(op, "loop_vars", vars, kept))
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
  return MGOPT_OK;
}

static mgopt_status mgopt__lie_block(mgopt__lie *L, mgopt_block *b, int depth) {
  mgopt_op *op;
  int32_t i;
  mgopt_status s;
  if (depth > 256) return mgopt_diag_set(L->ctx->diag, MGOPT_ERR_LIMIT, "blocks nested too deeply");
  for (op = b->first; op; op = op->next) {
    for (i = 0; i < op->nblocks; i++)
      if ((s = mgopt__lie_block(L, op->blocks[i], depth + 1)) != MGOPT_OK) return s;
    if (op->kind == MGOPT_OP_while_loop && (s = mgopt__lie_loop(L, op)) != MGOPT_OK) return s;
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__lie_run(mgopt_pass_ctx *ctx) {
  mgopt__lie L;
  mgopt_status s = MGOPT_OK;
  int32_t f;
  memset(&L, 0, sizeof L);
  L.ctx = ctx;
  L.p = ctx->program;
  for (f = 0; f < mgopt_program_function_count(ctx->program) && !s; f++) {
    mgopt_function *fn = mgopt_program_function_at(ctx->program, f);
    if (mgopt__index_kind_count(fn, MGOPT_OP_while_loop)) s = mgopt__lie_block(&L, fn->body, 0);
  }
  if (L.undo) mgopt__heap_free(&L.p->alloc, L.undo, (size_t)L.undo_cap * sizeof(mgopt__lie_undo));
  if (L.work) mgopt__heap_free(&L.p->alloc, L.work, (size_t)L.work_cap * sizeof(mgopt_value *));
  return s;
}

MGOPT__DEFINE_PASS(cleanup, common, loop_invariant_elimination,
                   "drop while_loop vars that the body passes through unchanged", mgopt__lie_run);
/* src/passes/cleanup/remove_symbolic_reshape.c — common::remove_symbolic_reshape: a run-time reshape shape becomes a constant.

   Spec: mil_graph_passes.txt, "Convert symbolic shape in reshape to
   integers ... replaces symbols with positive integers if solved from
   volumetric constraint, or -1 ... fails if more than one symbol needs to be
   resolved to -1"; reference §3.9.

   mgopt's tensors hold no symbolic values, so a shape "known symbolically"
   is a `shape` operand computed at run time (e.g. from shape/gather/concat
   of the input's dims) on a reshape whose output type is known: every dim
   static or a symbol. That type is what the shape operand must evaluate to.

   Before:
     main(%x: (s0, 4, fp32), %s: (3, int32)) {
       %r: (s0, s1, 2, fp32) = reshape(x=%x, shape=%s)
     } -> (%r)
   After:
     main(%x: (s0, 4, fp32), %s: (3, int32)) {
       %sx: (3, int32)* = const(val=[-1, 2, 2])
       %r: (s0, 2, 2, fp32) = reshape(x=%x, shape=%sx)
     } -> (%r)

   Fires on: a reshape whose shape operand is not a const and whose output
   rank and dims are all known (static or symbolic). Symbols are solved from
   the volume: symbols common to x and the output cancel; if then exactly
   one symbol occurrence is left, in the output only, and x has no unknown
   dims, it equals (static volume of x) / (static volume of the output).
   Solved symbols become integers (in the new shape and the stored output
   type); one symbol left becomes -1; none left gives a fully static shape.
   The old shape producer goes when unused.
   More than one symbol left: with `strict` (default, as the spec says) the
   pass fails with MGOPT_ERR_PASS naming the reshape; with strict=false the
   reshape is left alone (what MIL's converter does in practice).
   Must not fire: a const shape (nothing to do), unknown dims or rank in the
   output, any zero-sized dim (a 0 in the shape would copy the input's dim).
   Cost: worklist patterns, O(reshapes x rank^2) with rank capped at 64 for
   the symbol matching. */

typedef struct mgopt__rsr {
  int strict;
  mgopt_status err;
  mgopt_diag *d;
} mgopt__rsr;

static int mgopt__rsr_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt__rsr *st = (mgopt__rsr *)ud;
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *sv = mgopt_op_operand(op, "shape"), *x = mgopt_op_operand(op, "x"), *c;
  mgopt_type *t;
  mgopt_dim *dims;
  mgopt_tensor *shape;
  int64_t vals[MGOPT_MAX_RANK], in_vol = 1, out_vol = 1, solved = -1;
  uint8_t used_in[MGOPT_MAX_RANK], used_out[MGOPT_MAX_RANK];
  const char *left = NULL, *solved_sym = NULL;
  int32_t i, j, r, nleft = 0, unresolved = 0, in_ok;
  mgopt_dtype dt = MGOPT_DT_INT32;
  char name[200];
  if (st->err || !sv || !x || mgopt_value_const(sv) || op->nouts != 1) return 0;
  t = &op->outs[0]->type;
  r = t->rank;
  if (t->kind != MGOPT_TYPE_TENSOR || r < 0 || r > MGOPT_MAX_RANK) return 0;
  for (i = 0; i < r; i++)
    if (!t->dims[i].sym && t->dims[i].v < 0) return 0;
  /* volume: cancel the symbols x and the output share, then solve one left over */
  in_ok = x->type.kind == MGOPT_TYPE_TENSOR && x->type.rank >= 0 && x->type.rank <= MGOPT_MAX_RANK;
  memset(used_in, 0, sizeof used_in);
  memset(used_out, 0, sizeof used_out);
  for (i = 0; in_ok && i < x->type.rank; i++) {
    mgopt_dim d = x->type.dims[i];
    if (d.sym) {
      for (j = 0; j < r; j++)
        if (!used_out[j] && t->dims[j].sym == d.sym) break;
      if (j < r) used_out[j] = used_in[i] = 1;
      else in_ok = 0; /* a symbol of x the output lacks: no equation for the rest */
    } else if (d.v < 0 || !mgopt__mul_i64(in_vol, d.v, &in_vol)) {
      in_ok = 0;
    }
  }
  for (i = 0; i < r; i++) {
    if (t->dims[i].sym) {
      if (!used_out[i]) {
        nleft++;
        left = t->dims[i].sym;
      }
    } else if (!mgopt__mul_i64(out_vol, t->dims[i].v, &out_vol)) {
      in_ok = 0;
    }
  }
  if (in_ok && nleft == 1 && out_vol > 0 && in_vol % out_vol == 0) {
    solved_sym = left;
    solved = in_vol / out_vol;
  }
  for (i = 0; i < r; i++) {
    if (!t->dims[i].sym) vals[i] = t->dims[i].v;
    else if (t->dims[i].sym == solved_sym) vals[i] = solved;
    else {
      vals[i] = -1;
      unresolved++;
    }
  }
  if (unresolved > 1) {
    if (st->strict) {
      st->err = mgopt_diag_set(st->d, MGOPT_ERR_PASS,
                               "reshape '%s': %d symbolic dims of the output cannot be solved and only one may be -1",
                               op->outs[0]->name ? op->outs[0]->name : "?", (int)unresolved);
      if (st->d && op->name) snprintf(st->d->op, sizeof st->d->op, "%s", op->name);
    }
    return 0;
  }
  /* a 0 in reshape's shape copies the input's dim: a zero-sized dim (static,
     or a symbol solved to 0) cannot be written that way */
  for (i = 0; i < r; i++)
    if (vals[i] == 0) return 0;
  if (mgopt_dtype_is_int((mgopt_dtype)sv->type.dtype)) dt = (mgopt_dtype)sv->type.dtype;
  {
    int64_t len = r;
    shape = mgopt_tensor_new(p, dt, 1, &len);
  }
  if (!shape) return 0;
  for (i = 0; i < r; i++) mgopt_tensor_set_i64(shape, i, vals[i]);
  snprintf(name, sizeof name, "%.190sx", sv->name ? sv->name : "shape");
  c = mgopt_rw_const(rw, op, name, shape);
  if (!c) return 0;
  {
    /* the constant shape must type check against x, and a solved symbol
       against what the users declared; otherwise leave the reshape alone */
    mgopt_type nt = *t, old = *t;
    int ok;
    if (solved_sym) {
      dims = (mgopt_dim *)mgopt_program_alloc(p, sizeof(mgopt_dim) * (size_t)(r ? r : 1), 8);
      if (!dims) return 0;
      for (i = 0; i < r; i++) dims[i] = t->dims[i].sym == solved_sym ? mgopt_dim_static(solved) : t->dims[i];
      nt.dims = dims;
    }
    ok = !solved_sym || mgopt__pu_uses_accept(p, op->outs[0], &nt, NULL);
    if (ok) {
      mgopt_op_set_operand(op, "shape", c);
      *t = nt;
      ok = mgopt__pu_infer_fits(p, op);
      *t = old;
      mgopt_op_set_operand(op, "shape", sv);
    }
    if (!ok) {
      mgopt_rw_erase(rw, c->def);
      return 0;
    }
    *t = nt;
  }
  mgopt_rw_set_operand(rw, op, "shape", c);
  mgopt_rw_modified(rw, op);
  mgopt__pu_erase_if_dead(rw, sv->def);
  return 1;
}

static mgopt_status mgopt__rsr_run(mgopt_pass_ctx *ctx) {
  mgopt_pattern pat;
  mgopt_pass_def pd;
  mgopt__rsr st;
  mgopt_status s;
  st.strict = ctx->opts[0].i != 0;
  st.err = MGOPT_OK;
  st.d = ctx->diag;
  memset(&pat, 0, sizeof pat);
  pat.name = "symbolic_reshape";
  pat.root_kind = MGOPT_OP_reshape;
  pat.benefit = 1;
  pat.fn = mgopt__rsr_fold;
  pat.ud = &st;
  memset(&pd, 0, sizeof pd);
  pd.patterns = &pat;
  pd.npatterns = 1;
  s = mgopt__pass_run_patterns(ctx, &pd);
  return st.err ? st.err : s;
}

static const mgopt_opt_def mgopt__rsr_opts[] = {
    {"strict", MGOPT_OPT_BOOL, "true",
     "fail when more than one symbolic dim would need -1 (false: leave such reshapes alone)"},
};

MGOPT__DEFINE_PASS_WITH_OPTIONS(cleanup, common, remove_symbolic_reshape,
                                "replace a run-time reshape shape by a constant from the known output type",
                                mgopt__rsr_opts, mgopt__rsr_run);
/* src/passes/cleanup/topological_reorder.c — common::topological_reorder: move casts, then transposes, next to their first use.

   Spec: mil_graph_passes.txt, "Topologically re-orders the list of
   operations ... places each operation closer to its first use, or at the
   end if it's not consumed"; reference §3.10.

   Before:
     main(%x: (2, 4, fp32)) {
       %c: (2, 4, fp16) = cast(x=%x, dtype="fp16")
       %r: (2, 4, fp32) = relu(x=%x)
       %s: (2, 4, fp16) = square(x=%c)
       %t: (4, 2, fp32) = transpose(x=%r, perm=[1, 0])
     } -> (%s, %t)
   (the cast moves down to its user; the transpose, used by nothing in the
   block, is already at the end)
   After:
     main(%x: (2, 4, fp32)) {
       %r: (2, 4, fp32) = relu(x=%x)
       %c: (2, 4, fp16) = cast(x=%x, dtype="fp16")
       %s: (2, 4, fp16) = square(x=%c)
       %t: (4, 2, fp32) = transpose(x=%r, perm=[1, 0])
     } -> (%s, %t)

   Two stages per block, first every cast, then every transpose. Within a
   stage the moved ops are taken from last to first; each goes immediately
   before its earliest user in the current order (a use inside a nested
   block counts as a use by the op owning that block), or to the end of the
   block when nothing in the block uses it (block outputs are not ops). This
   is the order the spec's example shows: two unused casts end up at the
   end, the later one first. Ops keep their names; other ops keep their
   relative order. Nested blocks are reordered too.
   Cost per block and stage: O(ops + uses); nothing for a function without
   casts or transposes (the op index counts them). Finding the earliest of
   several moved users compares positions through the chain of moved ops
   placed before one another (usually of length 0 or 1), no rescans of the
   block. */

typedef struct mgopt__tr {
  mgopt_op **ops;
  int32_t *parent;  /* moved op placed right before this moved op; -1 = before its anchor */
  int32_t *depth;
  int32_t *anchor;  /* index of the unmoved op it precedes; n = block end */
  int32_t n, cap;
} mgopt__tr;

#define MGOPT__TR_IDX(op) ((int32_t)(uintptr_t)(op)->scratch - 1)

/* 1 if moved op u comes before moved op v (same anchor) in the current order. */
static int mgopt__tr_before(const mgopt__tr *t, int32_t u, int32_t v) {
  int guard = 0;
  while (t->depth[u] > t->depth[v]) {
    u = t->parent[u];
    if (u == v) return 1;
  }
  while (t->depth[v] > t->depth[u]) {
    v = t->parent[v];
    if (u == v) return 0;
  }
  while (t->parent[u] != t->parent[v] && ++guard < 1 << 30) {
    u = t->parent[u];
    v = t->parent[v];
  }
  /* siblings: the one placed first (the later one in the old order) comes first */
  return u > v;
}

static void mgopt__tr_stage(mgopt__tr *t, mgopt_block *b, int32_t kind, int64_t *moved) {
  mgopt_op *op;
  int32_t i, n = 0;
  for (op = b->first; op; op = op->next) {
    op->scratch = (void *)(uintptr_t)(n + 1);
    t->ops[n++] = op;
  }
  t->n = n;
  for (i = n - 1; i >= 0; i--) {
    int32_t k, best_anchor = n, best_node = -1;
    mgopt_op *dest;
    op = t->ops[i];
    t->parent[i] = -1;
    t->depth[i] = 0;
    t->anchor[i] = i;
    if (op->kind != kind) continue;
    for (k = 0; k < op->nouts; k++) {
      mgopt_use *u;
      for (u = op->outs[k]->uses; u; u = u->next) {
        mgopt_op *c = u->op ? mgopt__pu_ancestor_in(u->op, b)
                            : (u->block != b && u->block->parent_op ? mgopt__pu_ancestor_in(u->block->parent_op, b) : NULL);
        int32_t ci, ca, cn;
        if (!c || c == op) continue;
        ci = MGOPT__TR_IDX(c);
        ca = t->anchor[ci];
        cn = t->ops[ci]->kind == kind ? ci : -1;
        if (ca < best_anchor || (ca == best_anchor && cn >= 0 &&
                                 (best_node < 0 || mgopt__tr_before(t, cn, best_node)))) {
          best_anchor = ca;
          best_node = cn;
        }
      }
    }
    t->anchor[i] = best_anchor;
    if (best_node >= 0) {
      t->parent[i] = best_node;
      t->depth[i] = t->depth[best_node] + 1;
      dest = t->ops[best_node];
    } else {
      dest = best_anchor < n ? t->ops[best_anchor] : NULL;
    }
    if (dest) {
      if (op->next != dest) {
        mgopt_op_move_before(op, dest);
        (*moved)++;
      }
    } else if (op != b->last) {
      mgopt_op_move_to_end(op, b);
      (*moved)++;
    }
  }
  for (op = b->first; op; op = op->next) op->scratch = NULL;
}

static mgopt_status mgopt__tr_block(mgopt_pass_ctx *ctx, mgopt__tr *t, mgopt_block *b, int depth) {
  mgopt_program *p = ctx->program;
  mgopt_op *op;
  int32_t i;
  if (depth > 256) return mgopt_diag_set(ctx->diag, MGOPT_ERR_LIMIT, "blocks nested too deeply");
  for (op = b->first; op; op = op->next)
    for (i = 0; i < op->nblocks; i++) {
      mgopt_status s = mgopt__tr_block(ctx, t, op->blocks[i], depth + 1);
      if (s) return s;
    }
  if (b->nops > t->cap) {
    size_t per = sizeof(mgopt_op *) + 3 * sizeof(int32_t);
    void *m = mgopt__heap_realloc(&p->alloc, t->ops, per * (size_t)t->cap, per * (size_t)b->nops);
    if (!m) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
    t->cap = b->nops;
    t->ops = (mgopt_op **)m;
    t->parent = (int32_t *)(void *)(t->ops + t->cap);
    t->depth = t->parent + t->cap;
    t->anchor = t->depth + t->cap;
  }
  if (b->nops > 1) {
    /* a stage moves only ops of its kind: none in the function, nothing to do */
    if (mgopt__index_kind_count(b->func, MGOPT_OP_cast)) mgopt__tr_stage(t, b, MGOPT_OP_cast, &ctx->rewrites);
    if (mgopt__index_kind_count(b->func, MGOPT_OP_transpose))
      mgopt__tr_stage(t, b, MGOPT_OP_transpose, &ctx->rewrites);
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__tr_run(mgopt_pass_ctx *ctx) {
  mgopt__tr t;
  mgopt_status s = MGOPT_OK;
  int32_t f;
  memset(&t, 0, sizeof t);
  for (f = 0; f < mgopt_program_function_count(ctx->program) && !s; f++) {
    mgopt_function *fn = mgopt_program_function_at(ctx->program, f);
    if (mgopt__index_kind_count(fn, MGOPT_OP_cast) || mgopt__index_kind_count(fn, MGOPT_OP_transpose))
      s = mgopt__tr_block(ctx, &t, fn->body, 0);
  }
  if (t.ops) mgopt__heap_free(&ctx->program->alloc, t.ops, (sizeof(mgopt_op *) + 3 * sizeof(int32_t)) * (size_t)t.cap);
  return s;
}

MGOPT__DEFINE_PASS(cleanup, common, topological_reorder,
                   "move casts, then transposes, to just before their first use", mgopt__tr_run);
/* src/passes/cleanup/cast_optimization.c — common::cast_optimization: drop same-dtype casts, fuse or cancel cast chains.

   Spec: mil_graph_passes.txt, "cast_optimization" (redundant cast removal and
   fusion of two consecutive casts when range and resolution are preserved);
   reference §3.28.

   Before:
     main(%x: (2, 3, int8)) {
       %a: (2, 3, fp16) = cast(x=%x, dtype="fp16")
       %b: (2, 3, fp32) = cast(x=%a, dtype="fp32")
     } -> (%b)
   After:
     main(%x: (2, 3, int8)) {
       %b: (2, 3, fp32) = cast(x=%x, dtype="fp32")
     } -> (%b)

   Fires on:
   - a cast whose input already has the target dtype: its uses take the
     input (an identity keeps the name when the cast's output is a function
     output and the input is a block argument or another function output);
   - a cast of a cast, x (dtype a) -> cast(b) -> cast(c), when going through
     b loses nothing that going straight from a to c keeps: with range(t)
     the interval of values dtype t holds and res(t) its resolution (1 for
     bool and integers, 1e-3 fp16, 1e-2 bf16, 1e-6 fp32, 1e-15 fp64), the
     chain is fusable iff range(a)∩range(b)∩range(c) == range(a)∩range(c)
     and max(res a, b, c) == max(res a, c). Then a == c cancels to x, else
     the pair becomes one cast(x, dtype=c) that keeps the second cast's name.
     The first cast goes too once nothing else uses it.
   Must not fire: fp32 -> fp16 -> fp32 (the range shrinks), fp32 -> bool ->
   fp16 (resolution), int32 -> int8 -> uint8 (the chain caps at [0, 127]),
   casts whose dtypes are unknown or outside the table (fp8, complex, string);
   when x's declared type does not suit a reader of the cast's output, or
   differs from it while it is a function output (mgopt__pu_replace_fits). A
   fused cast keeps the declared type of the cast it replaces when that holds
   for x (mgopt__pu_adopt_type).
   Nested blocks included; an inner cast of an outer cast is fused in place.
   Cost: worklist patterns, O(casts) rewrites, each O(1). */

typedef struct mgopt__co_range {
  double lo, hi, res;
} mgopt__co_range;

static int mgopt__co_range_of(mgopt_dtype t, mgopt__co_range *r) {
  int bits = mgopt_dtype_bits(t);
  r->res = 1;
  switch (t) {
    case MGOPT_DT_BOOL: r->lo = 0; r->hi = 1; return 1;
    case MGOPT_DT_INT4:
    case MGOPT_DT_INT8:
    case MGOPT_DT_INT16:
    case MGOPT_DT_INT32:
    case MGOPT_DT_INT64:
      r->hi = ldexp(1.0, bits - 1) - 1;
      r->lo = -ldexp(1.0, bits - 1);
      return 1;
    case MGOPT_DT_UINT1:
    case MGOPT_DT_UINT2:
    case MGOPT_DT_UINT3:
    case MGOPT_DT_UINT4:
    case MGOPT_DT_UINT6:
    case MGOPT_DT_UINT8:
    case MGOPT_DT_UINT16:
    case MGOPT_DT_UINT32:
    case MGOPT_DT_UINT64:
      r->lo = 0;
      r->hi = ldexp(1.0, bits) - 1;
      return 1;
    case MGOPT_DT_FP16: r->hi = 65504.0; r->res = 1e-3; break;
    case MGOPT_DT_BF16: r->hi = 3.3895313892515355e38; r->res = 1e-2; break;
    case MGOPT_DT_FP32: r->hi = 3.4028234663852886e38; r->res = 1e-6; break;
    case MGOPT_DT_FP64: r->hi = 1.7976931348623157e308; r->res = 1e-15; break;
    default: return 0;
  }
  r->lo = -r->hi;
  return 1;
}

static void mgopt__co_meet(mgopt__co_range *acc, const mgopt__co_range *r) {
  if (r->lo > acc->lo) acc->lo = r->lo;
  if (r->hi < acc->hi) acc->hi = r->hi;
  if (r->res > acc->res) acc->res = r->res;
}

/* 1 if a -> b -> c keeps exactly the range and resolution of a -> c. */
static int mgopt__co_fusable(mgopt_dtype a, mgopt_dtype b, mgopt_dtype c) {
  mgopt__co_range ra, rb, rc, via, direct;
  if (!mgopt__co_range_of(a, &ra) || !mgopt__co_range_of(b, &rb) || !mgopt__co_range_of(c, &rc)) return 0;
  via = ra;
  mgopt__co_meet(&via, &rb);
  mgopt__co_meet(&via, &rc);
  direct = ra;
  mgopt__co_meet(&direct, &rc);
  return via.lo == direct.lo && via.hi == direct.hi && via.res == direct.res;
}

static mgopt_dtype mgopt__co_target(const mgopt_op *cast) {
  mgopt_dtype t = mgopt__pu_cast_dtype(cast);
  if (t == MGOPT_DT_UNKNOWN && cast->nouts == 1) t = (mgopt_dtype)cast->outs[0]->type.dtype;
  return t;
}

static int mgopt__co_redundant(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  mgopt_dtype t = mgopt__co_target(op);
  MGOPT__UNUSED(ud);
  if (!x || op->nouts != 1 || t == MGOPT_DT_UNKNOWN || x->type.kind != MGOPT_TYPE_TENSOR ||
      (mgopt_dtype)x->type.dtype != t)
    return 0;
  if (!mgopt__pu_replace_fits(mgopt_rw_program(rw), op->outs[0], x)) return 0;
  if (!mgopt__pu_replace_keep_io(rw, op->outs[0], x)) return 0;
  mgopt__pu_erase_if_dead(rw, op);
  return 1;
}

static int mgopt__co_chain(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const slot[1] = {"x"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *mid = mgopt_op_operand(op, "x"), *x, *res;
  mgopt_op *first = mgopt__pu_def_of(mid, MGOPT_OP_cast), *nc;
  mgopt_dtype a, b, c;
  MGOPT__UNUSED(ud);
  if (!first || op->nouts != 1 || first->nouts != 1) return 0;
  x = mgopt_op_operand(first, "x");
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR) return 0;
  a = (mgopt_dtype)x->type.dtype;
  b = mgopt__co_target(first);
  c = mgopt__co_target(op);
  if (!mgopt__co_fusable(a, b, c)) return 0;
  if (a == c) {
    if (!mgopt__pu_replace_fits(p, op->outs[0], x)) return 0;
    res = mgopt__pu_replace_keep_io(rw, op->outs[0], x);
    if (!res) return 0;
  } else {
    nc = mgopt_rw_create(rw, op, "cast", op->outs[0]->name, 1, slot, &x, 1);
    if (!nc || mgopt_op_set_string(nc, "dtype", mgopt_dtype_name(c))) return 0;
    nc->name = op->name;
    if (mgopt_op_infer(p, nc, NULL)) return 0;
    mgopt__pu_fill_type(p, nc, 0, &op->outs[0]->type);
    /* the fused cast keeps the declared type it replaces when that holds for x */
    if (!mgopt__pu_adopt_type(p, nc->outs[0], op->outs[0])) {
      mgopt_rw_erase(rw, nc);
      return 0;
    }
    mgopt_rw_replace_value(rw, op->outs[0], nc->outs[0]);
  }
  mgopt__pu_erase_if_dead(rw, op);
  mgopt__pu_erase_if_dead(rw, first);
  return 1;
}

static const mgopt_pattern mgopt__co_patterns[] = {
    {"cast_redundant", MGOPT_OP_cast, NULL, 2, mgopt__co_redundant, NULL},
    {"cast_chain", MGOPT_OP_cast, NULL, 1, mgopt__co_chain, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, cast_optimization,
                           "remove same-dtype casts; fuse or cancel cast pairs that keep range and resolution",
                           mgopt__co_patterns);
/* src/passes/cleanup/merge_consecutive_paddings.c — common::merge_consecutive_paddings: pad(pad(x)) -> pad(x).

   Spec: mil_graph_passes.txt, "Identify two consecutive pad layers which
   could be merged into a single pad layer"; reference §3.29.

   Before:
     main(%x: (1, 2, 6, 8, fp32)) {
       %p1: (2, int32)* = const(val=[1, 1])
       %a: (1, 2, 6, 10, fp32) = pad(x=%x, pad=%p1, mode="reflect")
       %p2: (4, int32)* = const(val=[1, 1, 0, 0])
       %b: (1, 2, 8, 10, fp32) = pad(x=%a, pad=%p2, mode="reflect")
     } -> (%b)
   After:
     main(%x: (1, 2, 6, 8, fp32)) {
       %pad_0: (4, int32)* = const(val=[1, 1, 1, 1])
       %b: (1, 2, 8, 10, fp32) = pad(x=%x, pad=%pad_0, mode="reflect")
     } -> (%b)

   Fires on: a pad whose input comes from a pad with the same mode and
   constant pad amounts (a pad vector covers the last len/2 axes; the shorter
   one is extended with leading zeros and the two are added), when
   - mode "constant": both constant_val are equal (padding is then additive,
     even on the same axis);
   - other modes (reflect, replicate): no axis is padded by both (per-axis
     padding in these modes is separable, the same axis is not).
   The outer pad reads the inner pad's input with the summed amounts; the
   inner pad goes once unused, else stays.
   Must not fire: different modes or constant values, non-constant or
   negative or odd-length pad vectors, overlapping axes outside constant mode.
   Cost: worklist patterns, O(pads x rank). */

static const char *mgopt__mcp_mode(const mgopt_op *op) {
  const char *m = mgopt_op_get_string(op, "mode", NULL);
  return m ? m : "constant";
}

/* pad amounts into out[0..len) right-aligned (leading zeros); 0 if malformed */
static int mgopt__mcp_amounts(mgopt_program *p, const mgopt_op *op, int64_t len, int64_t *out) {
  const int64_t *v = NULL;
  int64_t n = mgopt_op_get_ints(p, op, "pad", &v), i;
  if (n < 0 || n % 2 || n > len) return 0;
  for (i = 0; i < len; i++) out[i] = 0;
  for (i = 0; i < n; i++) {
    if (v[i] < 0) return 0;
    out[len - n + i] = v[i];
  }
  return 1;
}

static int mgopt__mcp_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *inner_x;
  mgopt_op *inner = mgopt__pu_def_of(x, MGOPT_OP_pad);
  const int64_t *tmp = NULL;
  int64_t len, n1, n2, i, *a, *b;
  const char *mode;
  int constant;
  MGOPT__UNUSED(ud);
  if (!inner || inner == op || op->nouts != 1) return 0;
  inner_x = mgopt_op_operand(inner, "x");
  if (!inner_x) return 0;
  mode = mgopt__mcp_mode(op);
  if (strcmp(mode, mgopt__mcp_mode(inner)) != 0) return 0;
  constant = strcmp(mode, "constant") == 0;
  if (constant && mgopt_op_get_float(op, "constant_val", 0.0) != mgopt_op_get_float(inner, "constant_val", 0.0))
    return 0;
  n1 = mgopt_op_get_ints(p, inner, "pad", &tmp);
  n2 = mgopt_op_get_ints(p, op, "pad", &tmp);
  if (n1 < 0 || n2 < 0) return 0;
  len = n1 > n2 ? n1 : n2;
  a = (int64_t *)mgopt_program_alloc(p, sizeof(int64_t) * (size_t)(2 * len + 1), 8);
  if (!a) return 0;
  b = a + len;
  if (!mgopt__mcp_amounts(p, inner, len, a) || !mgopt__mcp_amounts(p, op, len, b)) return 0;
  for (i = 0; i < len; i += 2)
    if (!constant && (a[i] || a[i + 1]) && (b[i] || b[i + 1])) return 0;
  for (i = 0; i < len; i++)
    if (!mgopt__add_i64(a[i], b[i], &a[i])) return 0;
  {
    /* the inner pad's output may be declared less precisely than it is (a
       symbolic dim): the outer pad's declared type must hold for the exact one */
    mgopt_type saved = x->type, inf;
    int ok = mgopt__pu_inferred_type(p, inner, 0, &inf);
    if (ok) {
      x->type = inf;
      ok = mgopt__pu_infer_fits(p, op);
      x->type = saved;
    }
    if (!ok) return 0;
  }
  if (!mgopt__pu_set_ints_param(rw, op, op, "pad", a, len)) return 0;
  mgopt_rw_set_operand(rw, op, "x", inner_x);
  mgopt_rw_modified(rw, op);
  mgopt__pu_erase_with_consts(rw, inner);
  return 1;
}

static const mgopt_pattern mgopt__mcp_patterns[] = {
    {"pad_pad", MGOPT_OP_pad, NULL, 1, mgopt__mcp_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, merge_consecutive_paddings,
                           "merge pad chains with the same mode into one pad", mgopt__mcp_patterns);
/* src/passes/cleanup/merge_consecutive_relus.c — common::merge_consecutive_relus: relu(relu(x)) -> relu(x).

   Spec: mil_graph_passes.txt, "Identify consecutive relu layers which could
   be merged into a single relu layer"; reference §3.29.

   Before:
     main(%x: (2, 3, fp32)) {
       %r1: (2, 3, fp32) = relu(x=%x)
       %r2: (2, 3, fp32) = relu(x=%r1)
       %r3: (2, 3, fp32) = relu(x=%r2)
     } -> (%r3)
   After:
     main(%x: (2, 3, fp32)) {
       %r3: (2, 3, fp32) = relu(x=%x)
     } -> (%r3)

   Fires on: a relu whose input is produced by a relu, in any block; the
   outer relu's uses take the inner relu's output (which takes the outer
   name when the outer output is a function output). relu is idempotent, so
   the inner relu may have other users: it then simply stays.
   Must not fire: when both outputs are function outputs (two names must
   survive); when the inner relu's declared type does not suit a reader of
   the outer one, or differs from it while the outer one is a function
   output (mgopt__pu_replace_fits); relu fed by anything else.
   Cost: worklist patterns, O(relus). */

static int mgopt__mcr_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  mgopt_op *inner = mgopt__pu_def_of(x, MGOPT_OP_relu);
  MGOPT__UNUSED(ud);
  if (!inner || op->nouts != 1 || inner == op) return 0;
  if (mgopt__pu_is_func_output(op->outs[0]) && mgopt__pu_is_func_output(x)) return 0;
  if (!mgopt__pu_replace_fits(mgopt_rw_program(rw), op->outs[0], x)) return 0;
  mgopt__pu_replace_value(rw, op->outs[0], x);
  mgopt_rw_erase(rw, op);
  return 1;
}

static const mgopt_pattern mgopt__mcr_patterns[] = {
    {"relu_relu", MGOPT_OP_relu, NULL, 1, mgopt__mcr_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, merge_consecutive_relus, "collapse relu chains into one relu",
                           mgopt__mcr_patterns);
/* src/passes/cleanup/merge_consecutive_reshapes.c — common::merge_consecutive_reshapes: reshape(reshape(x)) -> reshape(x).

   Spec: mil_graph_passes.txt, "Identify consecutive reshape ops which could
   be merged into a single reshape"; reference §3.29.

   Before:
     main(%x: (2, 6, fp32)) {
       %s1: (3, int32)* = const(val=[3, 2, 2])
       %a: (3, 2, 2, fp32) = reshape(x=%x, shape=%s1)
       %s2: (2, int32)* = const(val=[4, 3])
       %b: (4, 3, fp32) = reshape(x=%a, shape=%s2)
     } -> (%b)
   After:
     main(%x: (2, 6, fp32)) {
       %s2: (2, int32)* = const(val=[4, 3])
       %b: (4, 3, fp32) = reshape(x=%x, shape=%s2)
     } -> (%b)

   Fires on: a reshape whose input comes from a reshape: it reads the inner
   reshape's input instead (the element order of a reshape is row-major, so
   only the last target shape matters). Chains collapse one link at a time.
   The inner reshape is erased once unused (with a shape const that only it
   used); if it has other users or is a block output it stays.
   Must not fire: when the outer shape is not a constant or holds a 0 (a 0
   may mean "copy the input's dim", which would read a different input).
   Cost: worklist patterns, O(reshapes). */

static int mgopt__mcrs_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *inner_x;
  mgopt_op *inner = mgopt__pu_def_of(x, MGOPT_OP_reshape);
  const int64_t *shape = NULL;
  int64_t n, i;
  MGOPT__UNUSED(ud);
  if (!inner || inner == op) return 0;
  inner_x = mgopt_op_operand(inner, "x");
  if (!inner_x) return 0;
  n = mgopt_op_get_ints(p, op, "shape", &shape);
  if (n < 0) return 0;
  for (i = 0; i < n; i++)
    if (shape[i] == 0) return 0;
  {
    /* the inner reshape's declared type may hide an element count that does
       not match (its shape computed at run time): the merged reshape must type check */
    int ok;
    mgopt_op_set_operand(op, "x", inner_x);
    ok = mgopt__pu_infer_fits(p, op);
    mgopt_op_set_operand(op, "x", x);
    if (!ok) return 0;
  }
  mgopt_rw_set_operand(rw, op, "x", inner_x);
  mgopt__pu_erase_with_consts(rw, inner);
  return 1;
}

static const mgopt_pattern mgopt__mcrs_patterns[] = {
    {"reshape_reshape", MGOPT_OP_reshape, NULL, 1, mgopt__mcrs_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, merge_consecutive_reshapes,
                           "collapse reshape chains into one reshape", mgopt__mcrs_patterns);
/* src/passes/cleanup/merge_consecutive_transposes.c — common::merge_consecutive_transposes: compose transpose chains.

   Spec: mil_graph_passes.txt, "Identify consecutive 'transpose' layers which
   could be merged into a single 'transpose' layer"; reference §3.29.

   Before:
     main(%x: (1, 2, 3, fp32)) {
       %a: (2, 3, 1, fp32) = transpose(x=%x, perm=[1, 2, 0])
       %b: (3, 2, 1, fp32) = transpose(x=%a, perm=[1, 0, 2])
     } -> (%b)
   After:
     main(%x: (1, 2, 3, fp32)) {
       %b: (3, 2, 1, fp32) = transpose(x=%x, perm=[2, 1, 0])
     } -> (%b)

   Fires on: a transpose whose input comes from a transpose with a perm of
   the same length: it reads the inner input with perm[i] = inner[outer[i]]
   (negative entries normalized first). When that perm is the identity the
   outer transpose goes and its uses read x (an identity op keeps a function
   output's name when x cannot take it). The inner transpose is erased once
   unused; with other users it stays.
   Must not fire: non-constant or malformed perms (wrong length, repeated or
   out-of-range axes); when the outer transpose's declared type would not
   hold for x (a symbolic dim in the middle may hide a contradiction), or, for
   the identity, x's type does not suit a reader of the outer output or
   differs from it while it is a function output (mgopt__pu_replace_fits).
   Cost: worklist patterns, O(transposes x rank). */

/* Reads a permutation of length rank into out (normalized); 0 if malformed.
   seen: rank bytes of scratch. */
static int mgopt__mct_perm(mgopt_program *p, const mgopt_op *op, int64_t rank, int64_t *out, uint8_t *seen) {
  const int64_t *v = NULL;
  int64_t n = mgopt_op_get_ints(p, op, "perm", &v), i;
  if (n != rank) return 0;
  memset(seen, 0, (size_t)rank);
  for (i = 0; i < n; i++) {
    out[i] = mgopt__pu_norm_axis(v[i], rank);
    if (out[i] < 0 || seen[out[i]]) return 0;
    seen[out[i]] = 1;
  }
  return 1;
}

static int mgopt__mct_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *inner_x;
  mgopt_op *inner = mgopt__pu_def_of(x, MGOPT_OP_transpose);
  int64_t rank, i, *p1, *p2, *pc;
  const int64_t *tmp = NULL;
  mgopt_type composed;
  uint8_t *seen;
  int ident = 1;
  MGOPT__UNUSED(ud);
  if (!inner || inner == op || op->nouts != 1) return 0;
  inner_x = mgopt_op_operand(inner, "x");
  rank = x->type.rank;
  if (!inner_x || rank < 0 || inner_x->type.rank != rank) return 0;
  if (mgopt_op_get_ints(p, inner, "perm", &tmp) != rank || mgopt_op_get_ints(p, op, "perm", &tmp) != rank) return 0;
  p1 = (int64_t *)mgopt_program_alloc(p, (3 * sizeof(int64_t) + sizeof(mgopt_dim) + 1) * (size_t)rank + 8, 8);
  if (!p1) return 0;
  p2 = p1 + rank;
  pc = p2 + rank;
  composed = inner_x->type;
  composed.dims = (mgopt_dim *)(pc + rank);
  seen = (uint8_t *)(composed.dims + rank);
  if (!mgopt__mct_perm(p, inner, rank, p1, seen) || !mgopt__mct_perm(p, op, rank, p2, seen)) return 0;
  for (i = 0; i < rank; i++) {
    pc[i] = p1[p2[i]];
    if (pc[i] != i) ident = 0;
  }
  /* the outer transpose then reads x: its declared type must hold for x permuted by pc */
  for (i = 0; i < rank; i++)
    composed.dims[i] = inner_x->type.dims ? inner_x->type.dims[pc[i]] : mgopt_dim_unknown();
  if (mgopt__type_clash(&op->outs[0]->type, &composed, 1)) return 0;
  if (ident) {
    if (!mgopt__pu_replace_fits(p, op->outs[0], inner_x) || !mgopt__pu_replace_keep_io(rw, op->outs[0], inner_x))
      return 0;
    mgopt__pu_erase_with_consts(rw, op);
  } else {
    if (!mgopt__pu_set_ints_param(rw, op, op, "perm", pc, rank)) return 0;
    mgopt_rw_set_operand(rw, op, "x", inner_x);
    mgopt_rw_modified(rw, op);
  }
  mgopt__pu_erase_with_consts(rw, inner);
  return 1;
}

static const mgopt_pattern mgopt__mct_patterns[] = {
    {"transpose_transpose", MGOPT_OP_transpose, NULL, 1, mgopt__mct_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, merge_consecutive_transposes,
                           "compose transpose chains into one transpose", mgopt__mct_patterns);
/* src/passes/cleanup/fuse_squeeze_expand_dims.c — common::fuse_squeeze_expand_dims: expand_dims(squeeze(x)) -> x when shapes match.

   Spec: reference §3.33 ("squeeze then expand_dims that cancel"); the MIL
   spec names the pass in its pipeline only.

   Before:
     main(%x: (2, 1, 3, fp32)) {
       %s: (2, 3, fp32) = squeeze(x=%x, axes=[1])
       %e: (2, 1, 3, fp32) = expand_dims(x=%s, axes=[1])
       %r: (2, 1, 3, fp32) = relu(x=%e)
     } -> (%r)
   After:
     main(%x: (2, 1, 3, fp32)) {
       %r: (2, 1, 3, fp32) = relu(x=%x)
     } -> (%r)

   Fires on: an expand_dims of a squeeze whose output type equals the
   squeeze's input type, every dim known (static, or the same symbol): both
   ops only drop and insert unit dims and keep the row-major element order,
   so equal shapes mean equal tensors. Uses of the expand_dims read x
   directly (MIL emits an identity; here one appears only when a function
   output would otherwise lose its name). The squeeze goes once unused.
   Must not fire: shapes that differ or hold unknown dims (e.g. squeezing
   axis 1 then expanding axis 0); expand_dims fed by anything else.
   Cost: worklist patterns, O(expand_dims x rank). */

static int mgopt__fsed_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *s = mgopt_op_operand(op, "x"), *x;
  mgopt_op *sq = mgopt__pu_def_of(s, MGOPT_OP_squeeze);
  MGOPT__UNUSED(ud);
  if (!sq || op->nouts != 1) return 0;
  x = mgopt_op_operand(sq, "x");
  if (!x || !mgopt__pu_same_known_shape(x, op->outs[0])) return 0;
  if (!mgopt__pu_replace_fits(mgopt_rw_program(rw), op->outs[0], x)) return 0; /* equal types: always */
  if (!mgopt__pu_replace_keep_io(rw, op->outs[0], x)) return 0;
  mgopt__pu_erase_with_consts(rw, op);
  mgopt__pu_erase_with_consts(rw, sq);
  return 1;
}

static const mgopt_pattern mgopt__fsed_patterns[] = {
    {"squeeze_expand_dims", MGOPT_OP_expand_dims, NULL, 1, mgopt__fsed_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, fuse_squeeze_expand_dims,
                           "remove a squeeze followed by an expand_dims that restores its shape",
                           mgopt__fsed_patterns);
/* src/passes/cleanup/fuse_stack_split.c — common::fuse_stack_split: squeeze(split(stack(v))[k]) -> v[k].

   Spec: reference §3.33 (stack, then split along the same axis into unit
   pieces, then squeeze of that axis); the MIL spec names the pass in its
   pipeline only.

   Before:
     main(%a: (2, 3, fp32), %b: (2, 3, fp32)) {
       %s: (2, 2, 3, fp32) = stack(values=(%a, %b), axis=1)
       %p0: (2, 1, 3, fp32), %p1: (2, 1, 3, fp32) = split(x=%s, num_splits=2, axis=1)
       %q0: (2, 3, fp32) = squeeze(x=%p0, axes=[1])
       %q1: (2, 3, fp32) = squeeze(x=%p1, axes=[1])
       %r: (2, 3, fp32) = add(x=%q0, y=%q1)
     } -> (%r)
   After:
     main(%a: (2, 3, fp32), %b: (2, 3, fp32)) {
       %r: (2, 3, fp32) = add(x=%a, y=%b)
     } -> (%r)

   Fires on: a squeeze of output k of a split of a stack of n values, when
   the split cuts the stack axis into n pieces of size 1 (num_splits = n, or
   split_sizes all 1) and the squeeze removes exactly that axis (axes = the
   axis, or its output has values[k]'s known shape). Each squeeze fires on
   its own, so pieces with other users are fine; the split and the stack go
   once unused. MIL emits identities; here an identity appears only when a
   function output would otherwise lose its name.
   Must not fire: a split along another axis, uneven or non-unit pieces, a
   squeeze of other axes, a split not fed by a stack.
   Cost: worklist patterns, O(squeezes x rank). */

static int mgopt__fss_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *piece = mgopt_op_operand(op, "x"), *sx, *v;
  mgopt_op *split = mgopt__pu_def_of(piece, MGOPT_OP_split), *stack;
  const int64_t *ax = NULL, *sizes = NULL;
  int64_t n, rank, axis, saxis, nax, i;
  int32_t vi;
  MGOPT__UNUSED(ud);
  if (!split || op->nouts != 1) return 0;
  sx = mgopt_op_operand(split, "x");
  stack = mgopt__pu_def_of(sx, MGOPT_OP_stack);
  vi = mgopt_op_slot_index(stack ? stack : split, "values");
  if (!stack || vi < 0 || !stack->slots[vi].is_list) return 0;
  n = stack->slots[vi].n;
  rank = sx->type.rank;
  if (n < 1 || split->nouts != n || rank < 1) return 0;
  axis = mgopt__pu_norm_axis(mgopt_op_get_int(stack, "axis", 0), rank);
  saxis = mgopt__pu_norm_axis(mgopt_op_get_int(split, "axis", 0), rank);
  if (axis < 0 || axis != saxis) return 0;
  i = mgopt_op_get_ints(p, split, "split_sizes", &sizes);
  if (i >= 0) {
    if (i != n) return 0;
    for (i = 0; i < n; i++)
      if (sizes[i] != 1) return 0;
  } else if (mgopt_op_get_int(split, "num_splits", -1) != n) {
    return 0;
  }
  v = stack->slots[vi].uses[piece->index].value;
  nax = mgopt_op_get_ints(p, op, "axes", &ax);
  if (!(nax == 1 && mgopt__pu_norm_axis(ax[0], rank) == axis) && !mgopt__pu_same_known_shape(v, op->outs[0]))
    return 0;
  if (!mgopt__pu_replace_fits(p, op->outs[0], v) || !mgopt__pu_replace_keep_io(rw, op->outs[0], v)) return 0;
  mgopt__pu_erase_with_consts(rw, op);
  mgopt__pu_erase_with_consts(rw, split);
  mgopt__pu_erase_with_consts(rw, stack);
  return 1;
}

static const mgopt_pattern mgopt__fss_patterns[] = {
    {"stack_split_squeeze", MGOPT_OP_squeeze, NULL, 1, mgopt__fss_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, fuse_stack_split, "remove a stack that a split and squeezes undo",
                           mgopt__fss_patterns);
/* src/passes/cleanup/fuse_transpose_matmul.c — common::fuse_transpose_matmul: fold last-two-axes transposes into matmul.

   Spec: mil_graph_passes.txt, "fuse_transpose_matmul"; reference §3.22.

   Before:
     main(%x: (2, 4, 3, fp32), %y: (2, 5, 4, fp32)) {
       %xt: (2, 3, 4, fp32) = transpose(x=%x, perm=[0, 2, 1])
       %yt: (2, 4, 5, fp32) = transpose(x=%y, perm=[0, -1, -2])
       %z: (2, 3, 5, fp32) = matmul(x=%xt, y=%yt, transpose_x=false, transpose_y=false)
     } -> (%z)
   After:
     main(%x: (2, 4, 3, fp32), %y: (2, 5, 4, fp32)) {
       %z: (2, 3, 5, fp32) = matmul(x=%x, y=%y, transpose_x=true, transpose_y=true)
     } -> (%z)

   Fires on: a matmul operand made by a transpose of rank >= 2 whose perm,
   normalized, swaps exactly the last two axes and keeps every other axis in
   place ([0, 1, ..., r-1, r-2]). The matmul reads the transpose's input and
   its transpose_x / transpose_y flips (a constant operand for the flag is
   replaced by the attribute). The transpose stays while something else reads
   it, and is erased once unused.
   Must not fire: any other perm ((0, 2, 1, 3) moves a batch axis), rank 1,
   a perm that is not constant, or a transpose_x / transpose_y that is not
   constant (its value is unknown). Cost: worklist patterns, O(matmuls x rank). */

/* 1 if transpose t swaps exactly the last two axes of its input. */
static int mgopt__ftm_swaps_last_two(mgopt_program *p, const mgopt_op *t) {
  const mgopt_value *x = mgopt_op_operand(t, "x");
  const int64_t *perm = NULL;
  int64_t r, n, i;
  if (!x || t->nouts != 1) return 0;
  r = x->type.rank;
  n = mgopt_op_get_ints(p, t, "perm", &perm);
  if (r < 2 || n != r) return 0;
  for (i = 0; i < r; i++) {
    int64_t want = i < r - 2 ? i : i == r - 2 ? r - 1 : r - 2;
    if (mgopt__pu_norm_axis(perm[i], r) != want) return 0;
  }
  return 1;
}

/* The value of the bool flag `name` of op, or -1 when it is a non-constant operand. */
static int mgopt__ftm_flag(const mgopt_op *op, const char *name) {
  const mgopt_value *v = mgopt_op_operand(op, name);
  if (v && !mgopt_value_const(v)) return -1;
  return mgopt_op_get_bool(op, name, 0) ? 1 : 0;
}

static int mgopt__ftm_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const slots[2] = {"x", "y"};
  static const char *const flags[2] = {"transpose_x", "transpose_y"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_op *tr[2];
  int f[2], s, any = 0;
  MGOPT__UNUSED(ud);
  for (s = 0; s < 2; s++) {
    tr[s] = mgopt__pu_def_of(mgopt_op_operand(op, slots[s]), MGOPT_OP_transpose);
    f[s] = mgopt__ftm_flag(op, flags[s]);
    if (f[s] < 0 || !tr[s] || !mgopt__ftm_swaps_last_two(p, tr[s])) tr[s] = NULL;
    if (tr[s]) any = 1;
  }
  if (!any) return 0;
  {
    /* the matmul will see the transposes' inputs, typed as inference gives
       them: a transpose output declared less precisely (a symbolic dim) may
       hide that the matmul's declared type contradicts them */
    mgopt_type saved[2], inf;
    int ok = 1;
    for (s = 0; s < 2; s++) {
      if (!tr[s]) continue;
      saved[s] = tr[s]->outs[0]->type;
      if (mgopt__pu_inferred_type(p, tr[s], 0, &inf)) tr[s]->outs[0]->type = inf;
      else ok = 0;
    }
    if (ok) ok = mgopt__pu_infer_fits(p, op);
    for (s = 1; s >= 0; s--)
      if (tr[s]) tr[s]->outs[0]->type = saved[s];
    if (!ok) return 0;
  }
  for (s = 0; s < 2; s++) {
    mgopt_value *old;
    if (!tr[s]) continue;
    old = mgopt_op_operand(op, flags[s]);
    if (old) mgopt_rw_set_operand(rw, op, flags[s], NULL);
    if (mgopt_op_set_bool(op, flags[s], !f[s]) != MGOPT_OK) return 0;
    if (old) mgopt__pu_erase_if_dead(rw, old->def);
    mgopt_rw_set_operand(rw, op, slots[s], mgopt_op_operand(tr[s], "x"));
  }
  mgopt_rw_modified(rw, op);
  for (s = 0; s < 2; s++)
    if (tr[s] && (s == 0 || tr[1] != tr[0])) mgopt__pu_erase_with_consts(rw, tr[s]);
  return 1;
}

static const mgopt_pattern mgopt__ftm_patterns[] = {
    {"transpose_matmul", MGOPT_OP_matmul, NULL, 1, mgopt__ftm_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, fuse_transpose_matmul,
                           "fold transposes of the last two axes into matmul's transpose_x / transpose_y",
                           mgopt__ftm_patterns);
/* src/passes/cleanup/merge_affine_dequantize_with_consecutive_ops.c — common::merge_affine_dequantize_with_consecutive_ops: layout ops into quantized data.

   Spec: mil_graph_passes.txt, "const folding to a chain of supported ops starts
   with a constexpr_affine_dequantize op"; reference §3 (passes listed elsewhere),
   merge_affine_dequantize_with_consecutive_ops.

   Before:
     main() {
       %d: (2, 3, int8)* = const(val=[[1, 2, 3], [4, 5, 6]])
       %s: (fp32)* = const(val=0.5)
       %z: (int8)* = const(val=0)
       %w: (2, 3, fp32) = constexpr_affine_dequantize(quantized_data=%d, zero_point=%z, scale=%s, axis=0)
       %t: (3, 2, fp32) = transpose(x=%w, perm=[1, 0])
       %e: (1, 3, 2, fp32) = expand_dims(x=%t, axes=[0])
     } -> (%e)
   After:
     main() {
       %s: (fp32)* = const(val=0.5)
       %z: (int8)* = const(val=0)
       %e_data: (1, 3, 2, int8)* = const(val=[[[1, 4], [2, 5], [3, 6]]])
       %e: (1, 3, 2, fp32) = constexpr_affine_dequantize(quantized_data=%e_data, zero_point=%z, scale=%s, axis=0)
     } -> (%e)

   Fires on: a constexpr_affine_dequantize whose quantized_data is a const read
   by it alone and whose output has exactly one use, not a block output, by a
   transpose, reshape, expand_dims or squeeze (constant parameters, static
   output shape). The op moves onto the integer data: the const becomes the
   data transformed the same way (a transpose permutes it; the others keep
   its bytes under a new shape, as a view), the dequantize takes the user's
   place and name, and the user goes. Repeated by the worklist, a whole chain
   folds into one dequantize. Per-tensor quantization (scale and zero_point
   of rank 0) takes all four ops; per-channel takes only transpose, and its
   axis becomes the position of the old axis in the perm.
   Must not fire: quantized data shared with another op (the spec's two
   dequantizes of one const), a dequantize with two users or that is a block
   output, per-channel data followed by reshape / expand_dims / squeeze,
   a transpose of sub-byte data (int4 and narrower), dynamic shapes, a
   layout op whose parameters (shape, perm, axes) are not constants, a
   result of rank 0 (the op needs data of rank >= 1: a squeeze to a scalar
   stays), a result whose static type does not suit a reader of the layout
   op's output or differs from it while it is a function output
   (mgopt__pu_replace_static_fits).
   Cost: worklist patterns; each step copies the quantized data once for a
   transpose and never for the others. */

/* 1 if every operand of u other than x is a constant: the layout op's
   parameters (shape, perm, axes) must be known, not only its output type. */
static int mgopt__mad_params_const(const mgopt_op *u) {
  int32_t i, j;
  for (i = 0; i < u->nslots; i++) {
    const mgopt_slot *sl = &u->slots[i];
    if (sl->name && strcmp(sl->name, "x") == 0) continue;
    for (j = 0; j < sl->n; j++)
      if (sl->uses[j].value && !mgopt_value_const(sl->uses[j].value)) return 0;
  }
  return 1;
}

/* The transformed integer data for user u of the dequantize; NULL if it
   cannot be computed. *axis is remapped for a transpose. */
static mgopt_tensor *mgopt__mad_data(mgopt_program *p, const mgopt_op *u, mgopt_tensor *t, int64_t *axis) {
  int64_t shape[MGOPT_MAX_RANK], perm[MGOPT_MAX_RANK], n = 1, new_axis = *axis;
  const mgopt_type *ot = &u->outs[0]->type;
  const int64_t *pv = NULL;
  int32_t r = ot->rank, i;
  /* the op's data has rank >= 1 (its axis must lie in [-rank, rank)) */
  if (r < 1 || !mgopt__pu_static_shape(ot, shape, MGOPT_MAX_RANK)) return NULL;
  for (i = 0; i < r; i++) n *= shape[i];
  if (n != t->numel) return NULL;
  /* same bytes, new shape: a view (mgopt__tensor_view keeps writers apart) */
  if (u->kind != MGOPT_OP_transpose) return mgopt__tensor_view(p, t, 0, r, shape);
  if (r != t->rank || mgopt_op_get_ints(p, u, "perm", &pv) != r) return NULL;
  for (i = 0; i < r; i++) {
    perm[i] = mgopt__pu_norm_axis(pv[i], r);
    if (perm[i] < 0 || t->shape[perm[i]] != shape[i]) return NULL;
    if (*axis == perm[i]) new_axis = i;
  }
  *axis = new_axis;
  return mgopt__pu_transpose_data(p, t, t->shape, r, perm); /* NULL for sub-byte data */
}

static int mgopt__mad_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *qd = mgopt_op_operand(op, "quantized_data"), *sc = mgopt_op_operand(op, "scale");
  mgopt_value *zp = mgopt_op_operand(op, "zero_point"), *out, *nd;
  mgopt_tensor *t = qd ? mgopt_value_const(qd) : NULL, *nt;
  mgopt_op *u;
  const char *name;
  int64_t axis, old_axis;
  int per_tensor;
  MGOPT__UNUSED(ud);
  if (!t || !sc || !zp || op->nouts != 1 || qd->nuses != 1) return 0;
  if (!mgopt_value_const(sc) || !mgopt_value_const(zp)) return 0;
  out = op->outs[0];
  if (out->nuses != 1 || mgopt__pu_is_block_output(out)) return 0;
  u = mgopt__pu_single_user(out);
  if (!u || u->nouts != 1 || mgopt_op_operand(u, "x") != out) return 0;
  if (u->kind != MGOPT_OP_transpose && u->kind != MGOPT_OP_reshape && u->kind != MGOPT_OP_expand_dims &&
      u->kind != MGOPT_OP_squeeze)
    return 0;
  if (!mgopt__mad_params_const(u)) return 0;
  per_tensor = sc->type.rank == 0 && zp->type.rank == 0;
  if (!per_tensor && u->kind != MGOPT_OP_transpose) return 0;
  old_axis = mgopt_op_get_int(op, "axis", 0);
  axis = mgopt__pu_norm_axis(old_axis, t->rank);
  if (axis < 0) axis = old_axis; /* per-tensor: the axis is not used */
  nt = mgopt__mad_data(p, u, t, &axis);
  /* the dequantize's output will be nt's shape at the dtype it has now */
  if (!nt || !mgopt__pu_replace_static_fits(p, u->outs[0], (mgopt_dtype)op->outs[0]->type.dtype, nt->rank, nt->shape))
    return 0;
  if (per_tensor) axis = old_axis; /* not used: left as it was, unless out of range below */
  if (per_tensor && (axis < -nt->rank || axis >= nt->rank)) axis = 0; /* unused, kept in range */
  nd = mgopt_rw_const(rw, op, mgopt__pu_name2(p, mgopt__pu_value_name(u->outs[0]), "_data"), nt);
  if (!nd) return 0;
  mgopt_rw_set_operand(rw, op, "quantized_data", nd);
  if (axis != old_axis && mgopt_op_set_int(op, "axis", axis) != MGOPT_OK) return 0;
  if (mgopt_op_infer(p, op, NULL) != MGOPT_OK) return 0;
  mgopt_rw_modified(rw, op);
  /* the dequantize takes the user's place, and its name once the user is gone */
  name = u->outs[0]->name;
  out = mgopt__pu_replace_keep_io(rw, u->outs[0], op->outs[0]);
  if (!out) return 0;
  mgopt__pu_erase_with_consts(rw, u);
  if (name && out == op->outs[0] && !mgopt__pu_is_func_output(out)) mgopt__pu_rename(out, name);
  mgopt__pu_erase_if_dead(rw, qd->def);
  return 1;
}

static const mgopt_pattern mgopt__mad_patterns[] = {
    {"affine_dequantize_then_layout", MGOPT_OP_constexpr_affine_dequantize, NULL, 1, mgopt__mad_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, merge_affine_dequantize_with_consecutive_ops,
                           "fold transpose/reshape/expand_dims/squeeze after a constexpr_affine_dequantize into its data",
                           mgopt__mad_patterns);
/* src/passes/cleanup/reduce_transposes.c — common::reduce_transposes: cancel transposes across layout-agnostic ops.

   Spec: mil_graph_passes.txt, "reduce_transposes"; reference §3.23.

   Before:
     main(%x: (1, 2, 3, 4, fp32)) {
       %t: (1, 4, 2, 3, fp32) = transpose(x=%x, perm=[0, 3, 1, 2])
       %r: (1, 4, 2, 3, fp32) = relu(x=%t)
       %l: (1, 4, 2, 3, fp32) = log(x=%r)
       %u: (1, 2, 3, 4, fp32) = transpose(x=%l, perm=[0, 2, 3, 1])
       %y: (1, 2, 3, 4, fp32) = relu(x=%u)
     } -> (%y)
   After:
     main(%x: (1, 2, 3, 4, fp32)) {
       %r: (1, 2, 3, 4, fp32) = relu(x=%x)
       %l: (1, 2, 3, 4, fp32) = log(x=%r)
       %y: (1, 2, 3, 4, fp32) = relu(x=%l)
     } -> (%y)

   How: one walk in program order gives every value a "hypothetical" layout:
   either its own, or lazily transposed by perm P (it equals transpose(w, P)
   for data w that would exist if the transposes that started the chain were
   removed). A transpose of a value in its own layout starts a chain. Ops that
   do not care about layout pass the lazy state on: unary ops (their other
   operands scalars), add/sub/mul/real_div/maximum/minimum (both operands lazy
   with one perm, or the other a scalar, a constant of rank at most the
   data's, which is transposed to match, or a run-time value of static shape
   whose non-unit axes keep their order, which a reshape moves), concat (every
   non-constant input lazy, constants transposed; axis -> P[axis]), split
   (axis -> P[axis]), pad (a constant pad moved to the new axes; reflect and
   replicate only while they pad the last two axes) and reduce_* with
   keep_dims (axes -> P[axes]). A transpose whose perm undoes P
   is a cancelling transpose. Any other use of a lazy value, and a lazy block
   output, needs the transpose back: a materialization.
   Starting transposes linked by an op they both reach form one group (a
   union-find over the walk); a group is changed only if it removes
   transposes: materializations < starting + cancelling transposes. Then the
   starting and cancelling transposes go (their users read their input), the
   axis parameters and constants above are rewritten, a transpose is inserted
   on each materialized edge (just before its user, or at the block end for an
   output, which keeps its name), and every op of the block is inferred again
   (a declared type that holds for the new inference is kept).
   Must not fire: when a group would not get smaller; on a starting transpose
   that is itself a block output; in a block with nested blocks (the whole
   block is skipped); on ops whose extra operands are tensors (pow with a
   tensor exponent, a run-time broadcast operand whose axes would reorder), on
   parameters given as run-time operands (axes, a pad). Cost: one walk, union-find,
   then a rewrite of the changed ops: O(ops + operands x rank); nothing for a
   function without transposes (the op index counts them). */

#define MGOPT__RT_MAXR 16

typedef struct mgopt__rt_lazy { /* a value transposed lazily */
  int32_t rank;
  int32_t comp;          /* union-find node of a starting transpose */
  int64_t perm[MGOPT__RT_MAXR];
} mgopt__rt_lazy;

typedef struct mgopt__rt_mat { /* an edge that needs the transpose back */
  mgopt_op *op;          /* NULL: block output `index` */
  int32_t slot, index;
  int32_t lazy;          /* the lazy record of the value on that edge */
} mgopt__rt_mat;

typedef struct mgopt__rt_upd { /* an op whose axes or constants change */
  mgopt_op *op;
  int32_t lazy;          /* record of its lazy input */
} mgopt__rt_upd;

typedef struct mgopt__rt_tr { /* a starting or cancelling transpose */
  mgopt_op *op;
  int32_t comp;
} mgopt__rt_tr;

typedef struct mgopt__rt {
  mgopt_program *p;
  int32_t *lz;            /* per value id: lazy record, -1 = own layout */
  uint32_t nids;
  mgopt__rt_lazy *L;
  int64_t nL, capL;
  int32_t *uf;            /* union-find parents over starting transposes */
  int64_t *nstart, *ncancel, *nmat; /* per component root */
  int64_t nuf, capuf;
  mgopt__rt_mat *M;
  int64_t nM, capM;
  mgopt__rt_upd *U;
  int64_t nU, capU;
  mgopt__rt_tr *S, *C;    /* starting, cancelling */
  int64_t nS, capS, nC, capC;
  int oom;
} mgopt__rt;

static int mgopt__rt_grow(mgopt__rt *r, void **arr, int64_t *cap, int64_t need, size_t elem) {
  if (!mgopt__grow(&r->p->alloc, arr, cap, need, elem)) r->oom = 1;
  return !r->oom;
}

static int32_t mgopt__rt_find(mgopt__rt *r, int32_t a) {
  while (r->uf[a] != a) {
    r->uf[a] = r->uf[r->uf[a]];
    a = r->uf[a];
  }
  return a;
}

static void mgopt__rt_union(mgopt__rt *r, int32_t a, int32_t b) {
  a = mgopt__rt_find(r, a);
  b = mgopt__rt_find(r, b);
  if (a != b) r->uf[b] = a;
}

static int32_t mgopt__rt_lazy_of(const mgopt__rt *r, const mgopt_value *v) {
  return v && v->id < r->nids ? r->lz[v->id] : -1;
}

static void mgopt__rt_set(mgopt__rt *r, const mgopt_value *v, int32_t lazy) {
  if (v->id < r->nids) r->lz[v->id] = lazy;
}

/* A new lazy record like `like` (or a fresh one with perm and a new component). */
static int32_t mgopt__rt_new_lazy(mgopt__rt *r, int32_t rank, const int64_t *perm, int32_t comp) {
  mgopt__rt_lazy *l;
  if (!mgopt__rt_grow(r, (void **)&r->L, &r->capL, r->nL + 1, sizeof *r->L)) return -1;
  l = &r->L[r->nL];
  l->rank = rank;
  l->comp = comp;
  memcpy(l->perm, perm, sizeof(int64_t) * (size_t)rank);
  return (int32_t)r->nL++;
}

static int32_t mgopt__rt_new_comp(mgopt__rt *r) {
  int64_t n = r->nuf;
  if (!mgopt__rt_grow(r, (void **)&r->uf, &r->capuf, n + 1, sizeof *r->uf)) return -1;
  r->uf[n] = (int32_t)n;
  r->nuf++;
  return (int32_t)n;
}

static void mgopt__rt_add_mat(mgopt__rt *r, mgopt_op *op, int32_t slot, int32_t index, int32_t lazy) {
  if (!mgopt__rt_grow(r, (void **)&r->M, &r->capM, r->nM + 1, sizeof *r->M)) return;
  r->M[r->nM].op = op;
  r->M[r->nM].slot = slot;
  r->M[r->nM].index = index;
  r->M[r->nM].lazy = lazy;
  r->nM++;
}

static void mgopt__rt_add_upd(mgopt__rt *r, mgopt_op *op, int32_t lazy) {
  if (!mgopt__rt_grow(r, (void **)&r->U, &r->capU, r->nU + 1, sizeof *r->U)) return;
  r->U[r->nU].op = op;
  r->U[r->nU].lazy = lazy;
  r->nU++;
}

static void mgopt__rt_add_tr(mgopt__rt *r, int cancel, mgopt_op *op, int32_t comp) {
  mgopt__rt_tr **arr = cancel ? &r->C : &r->S;
  int64_t *n = cancel ? &r->nC : &r->nS, *cap = cancel ? &r->capC : &r->capS;
  if (!mgopt__rt_grow(r, (void **)arr, cap, *n + 1, sizeof **arr)) return;
  (*arr)[*n].op = op;
  (*arr)[*n].comp = comp;
  (*n)++;
}

/* Reads a transpose's perm (normalized, a permutation of 0..rank-1); 0 if not constant or malformed. */
static int mgopt__rt_perm(mgopt_program *p, const mgopt_op *t, int32_t rank, int64_t *perm) {
  const int64_t *v = NULL;
  uint8_t seen[MGOPT__RT_MAXR];
  int32_t i;
  if (rank < 1 || rank > MGOPT__RT_MAXR || mgopt_op_operand(t, "perm") ||
      mgopt_op_get_ints(p, t, "perm", &v) != rank)
    return 0;
  memset(seen, 0, sizeof seen);
  for (i = 0; i < rank; i++) {
    int64_t a = mgopt__pu_norm_axis(v[i], rank);
    if (a < 0 || seen[a]) return 0;
    seen[a] = 1;
    perm[i] = a;
  }
  return 1;
}

static int mgopt__rt_is_unary(int32_t kind) {
  switch (kind) {
    case MGOPT_OP_identity: case MGOPT_OP_abs: case MGOPT_OP_exp: case MGOPT_OP_log: case MGOPT_OP_sqrt:
    case MGOPT_OP_rsqrt: case MGOPT_OP_square: case MGOPT_OP_erf: case MGOPT_OP_tanh: case MGOPT_OP_sigmoid:
    case MGOPT_OP_relu: case MGOPT_OP_relu6: case MGOPT_OP_leaky_relu: case MGOPT_OP_gelu: case MGOPT_OP_clip:
    case MGOPT_OP_floor: case MGOPT_OP_ceil: case MGOPT_OP_round: case MGOPT_OP_sign: case MGOPT_OP_sin:
    case MGOPT_OP_cos: case MGOPT_OP_softplus: case MGOPT_OP_elu: case MGOPT_OP_logical_not: case MGOPT_OP_pow:
      return 1;
    default: return 0;
  }
}

static int mgopt__rt_is_binary(int32_t kind) {
  return kind == MGOPT_OP_add || kind == MGOPT_OP_sub || kind == MGOPT_OP_mul || kind == MGOPT_OP_real_div ||
         kind == MGOPT_OP_maximum || kind == MGOPT_OP_minimum;
}

static int mgopt__rt_is_reduce(int32_t kind) {
  return kind == MGOPT_OP_reduce_sum || kind == MGOPT_OP_reduce_mean || kind == MGOPT_OP_reduce_max ||
         kind == MGOPT_OP_reduce_min || kind == MGOPT_OP_reduce_prod;
}

/* 1 if a run-time operand of static shape (rank <= r) beside lazy data of
   rank r keeps its element order when moved to the data's own layout: its
   non-unit axes, left-padded to rank r, stay in order under perm. A reshape
   then does the job of a transpose. */
static int mgopt__rt_reshapeable(const mgopt_value *v, const int64_t *perm, int32_t r) {
  int64_t shape[MGOPT__RT_MAXR], last = -1;
  int32_t i, lead;
  if (v->type.kind != MGOPT_TYPE_TENSOR || v->type.rank < 0 || v->type.rank > r ||
      !mgopt__pu_static_shape(&v->type, shape, MGOPT__RT_MAXR))
    return 0;
  lead = r - v->type.rank;
  for (i = lead; i < r; i++)
    if (shape[i - lead] != 1) {
      if (perm[i] < last) return 0;
      last = perm[i];
    }
  return 1;
}

/* What can stand beside lazy data l in an elementwise op: 2 = a rank-0
   value, left as it is; 1 = a constant, transposed back; 3 = a run-time
   value that a reshape moves to the data's layout; 0 = nothing (materialize). */
static int mgopt__rt_side(const mgopt_value *v, const mgopt__rt_lazy *l) {
  const mgopt_tensor *t;
  int bits;
  if (v->type.kind == MGOPT_TYPE_TENSOR && v->type.rank == 0) return 2;
  t = mgopt_value_const(v);
  if (!t) return mgopt__rt_reshapeable(v, l->perm, l->rank) ? 3 : 0;
  if (t->rank > l->rank || t->dtype == MGOPT_DT_STRING) return 0;
  bits = mgopt_dtype_bits((mgopt_dtype)t->dtype);
  return bits >= 8 && bits % 8 == 0 && bits <= 64 ? 1 : 0;
}

/* Every operand of op other than `keep` is a rank-0 value. */
static int mgopt__rt_rest_scalar(const mgopt_op *op, const mgopt_value *keep) {
  int32_t s, k;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      const mgopt_value *v = op->slots[s].uses[k].value;
      if (v != keep && !(v->type.kind == MGOPT_TYPE_TENSOR && v->type.rank == 0)) return 0;
    }
  return 1;
}

/* Materializes every lazy operand of op (a use that needs the layout back). */
static void mgopt__rt_materialize_op(mgopt__rt *r, mgopt_op *op) {
  int32_t s, k;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      int32_t l = mgopt__rt_lazy_of(r, op->slots[s].uses[k].value);
      if (l >= 0) mgopt__rt_add_mat(r, op, s, k, l);
    }
}

/* The op's single lazy input slot value and record for ops taking one data operand. */
static int mgopt__rt_lazy_in(mgopt__rt *r, const mgopt_op *op, const char *slot, mgopt_value **v) {
  *v = mgopt_op_operand(op, slot);
  return *v ? mgopt__rt_lazy_of(r, *v) : -1;
}

static int mgopt__rt_same_perm(const mgopt__rt_lazy *a, const mgopt__rt_lazy *b) {
  return a->rank == b->rank && memcmp(a->perm, b->perm, sizeof(int64_t) * (size_t)a->rank) == 0;
}

/* The pad of a pad op over lazy data, moved to the data's own layout:
   new rows (begin, end per axis, all axes) with new[perm[i]] = old[i];
   returns how many leading entries of out to drop (so the pad covers only
   the last axes that change), or -1 when the op cannot move: the pad is not
   a constant, or a reflect/replicate pad would touch more than the last two
   axes. */
static int32_t mgopt__rt_pad(mgopt__rt *r, const mgopt_op *op, const mgopt__rt_lazy *l, int64_t *out) {
  const int64_t *pv = NULL;
  const mgopt_value *pad = mgopt_op_operand(op, "pad");
  int64_t n, full[2 * MGOPT__RT_MAXR];
  int32_t rank = l->rank, i, first = rank;
  const char *mode = mgopt_op_get_string(op, "mode", NULL);
  int constant = !mode || strcmp(mode, "constant") == 0;
  if (rank < 2 || !pad || !mgopt_value_const(pad) || mgopt_op_operand(op, "mode")) return -1;
  n = mgopt_op_get_ints(r->p, op, "pad", &pv);
  if (n < 0 || n % 2 || n / 2 > rank) return -1;
  memset(full, 0, sizeof full);
  for (i = 0; i < n / 2; i++) {
    full[2 * (rank - n / 2 + i)] = pv[2 * i];
    full[2 * (rank - n / 2 + i) + 1] = pv[2 * i + 1];
  }
  for (i = 0; i < rank; i++) {
    out[2 * l->perm[i]] = full[2 * i];
    out[2 * l->perm[i] + 1] = full[2 * i + 1];
  }
  for (i = 0; i < rank; i++)
    if (out[2 * i] || out[2 * i + 1]) {
      first = i;
      break;
    }
  if (!constant && first < rank - 2) return -1;
  if (first > rank - 1) first = rank - 1; /* keep one row: an empty pad is not valid */
  return first;
}

/* Phase 1 for one op. Returns nothing; records go into r. */
static void mgopt__rt_visit(mgopt__rt *r, mgopt_op *op) {
  mgopt_program *p = r->p;
  int32_t kind = op->kind, i;
  mgopt_value *x;
  int32_t lx;
  if (kind == MGOPT_OP_const) return;
  if (kind == MGOPT_OP_transpose && op->nouts == 1) {
    int64_t perm[MGOPT__RT_MAXR];
    lx = mgopt__rt_lazy_in(r, op, "x", &x);
    if (x && x->type.rank >= 1 && mgopt__rt_perm(p, op, x->type.rank, perm)) {
      if (lx < 0) {
        int32_t c;
        if (mgopt__pu_is_block_output(op->outs[0])) return; /* stays as it is */
        c = mgopt__rt_new_comp(r);
        if (c < 0) return;
        mgopt__rt_add_tr(r, 0, op, c);
        mgopt__rt_set(r, op->outs[0], mgopt__rt_new_lazy(r, x->type.rank, perm, c));
        return;
      } else {
        const mgopt__rt_lazy *l = &r->L[lx];
        int cancel = l->rank == x->type.rank;
        for (i = 0; cancel && i < l->rank; i++)
          if (l->perm[perm[i]] != i) cancel = 0;
        if (cancel) {
          mgopt__rt_add_tr(r, 1, op, l->comp);
          return; /* the output is in its own layout again */
        }
      }
    }
    mgopt__rt_materialize_op(r, op);
    return;
  }
  if (op->nouts == 1 && mgopt__rt_is_unary(kind)) {
    lx = mgopt__rt_lazy_in(r, op, "x", &x);
    if (lx >= 0 && mgopt__rt_rest_scalar(op, x)) {
      mgopt__rt_set(r, op->outs[0], lx);
      return;
    }
  } else if (op->nouts == 1 && mgopt__rt_is_binary(kind)) {
    mgopt_value *a = mgopt_op_operand(op, "x"), *b = mgopt_op_operand(op, "y");
    int32_t la = mgopt__rt_lazy_of(r, a), lb = mgopt__rt_lazy_of(r, b);
    if (a && b && (la >= 0 || lb >= 0)) {
      if (la >= 0 && lb >= 0) {
        if (mgopt__rt_same_perm(&r->L[la], &r->L[lb])) {
          mgopt__rt_union(r, r->L[la].comp, r->L[lb].comp);
          mgopt__rt_set(r, op->outs[0], la);
          return;
        }
      } else {
        int32_t l = la >= 0 ? la : lb;
        int side = mgopt__rt_side(la >= 0 ? b : a, &r->L[l]);
        if (side) {
          if (side == 1 || side == 3) mgopt__rt_add_upd(r, op, l);
          mgopt__rt_set(r, op->outs[0], l);
          return;
        }
      }
    }
  } else if (kind == MGOPT_OP_concat && op->nouts == 1 && !mgopt_op_operand(op, "axis") &&
             mgopt_op_attr(op, "axis")) {
    int32_t s = mgopt_op_slot_index(op, "values"), first = -1, k, ok = 1;
    for (k = 0; s >= 0 && k < op->slots[s].n && first < 0; k++) first = mgopt__rt_lazy_of(r, op->slots[s].uses[k].value);
    if (first >= 0) {
      /* every other input lazy with the same perm, or a constant of the same rank */
      for (k = 0; k < op->slots[s].n && ok; k++) {
        mgopt_value *v = op->slots[s].uses[k].value;
        int32_t l = mgopt__rt_lazy_of(r, v);
        if (l < 0) ok = mgopt_value_const(v) && v->type.rank == r->L[first].rank &&
                        mgopt__rt_side(v, &r->L[first]) == 1;
        else ok = mgopt__rt_same_perm(&r->L[first], &r->L[l]);
      }
      if (ok) {
        for (k = 0; k < op->slots[s].n; k++) {
          int32_t l = mgopt__rt_lazy_of(r, op->slots[s].uses[k].value);
          if (l >= 0) mgopt__rt_union(r, r->L[first].comp, r->L[l].comp);
        }
        mgopt__rt_add_upd(r, op, first);
        mgopt__rt_set(r, op->outs[0], first);
        return;
      }
    }
  } else if (kind == MGOPT_OP_split && !mgopt_op_operand(op, "axis") && mgopt_op_attr(op, "axis")) {
    lx = mgopt__rt_lazy_in(r, op, "x", &x);
    if (lx >= 0 && mgopt__rt_rest_scalar(op, x)) {
      mgopt__rt_add_upd(r, op, lx);
      for (i = 0; i < op->nouts; i++) mgopt__rt_set(r, op->outs[i], lx);
      return;
    }
  } else if (kind == MGOPT_OP_pad && op->nouts == 1) {
    int64_t np[2 * MGOPT__RT_MAXR];
    lx = mgopt__rt_lazy_in(r, op, "x", &x);
    if (lx >= 0 && mgopt__rt_pad(r, op, &r->L[lx], np) >= 0) {
      mgopt__rt_add_upd(r, op, lx);
      mgopt__rt_set(r, op->outs[0], lx);
      return;
    }
  } else if (op->nouts == 1 && mgopt__rt_is_reduce(kind) && !mgopt_op_operand(op, "axes") &&
             !mgopt_op_operand(op, "keep_dims") && mgopt_op_attr(op, "axes") &&
             mgopt_op_get_bool(op, "keep_dims", 0)) {
    lx = mgopt__rt_lazy_in(r, op, "x", &x);
    if (lx >= 0 && mgopt__rt_rest_scalar(op, x)) {
      mgopt__rt_add_upd(r, op, lx);
      mgopt__rt_set(r, op->outs[0], lx);
      return;
    }
  }
  mgopt__rt_materialize_op(r, op);
}

/* t transposed by the inverse of perm after its shape is left-padded with 1s to rank. */
static mgopt_tensor *mgopt__rt_untranspose(mgopt_program *p, mgopt_tensor *t, const int64_t *perm, int32_t rank) {
  int64_t pad[MGOPT__RT_MAXR], inv[MGOPT__RT_MAXR];
  int32_t i, lead = rank - t->rank;
  for (i = 0; i < rank; i++) {
    pad[i] = i < lead ? 1 : t->shape[i - lead];
    inv[perm[i]] = i;
  }
  return mgopt__pu_transpose_data(p, t, pad, rank, inv);
}

/* Replaces constant operand (slot s, element k) of op by its un-transposed form. */
static int mgopt__rt_fix_const(mgopt__rt *r, mgopt_op *op, int32_t s, int32_t k, const mgopt__rt_lazy *l) {
  mgopt_value *v = op->slots[s].uses[k].value, *nv;
  mgopt_tensor *t = mgopt_value_const(v), *nt;
  mgopt_op *old = v->def;
  if (!t) return 1;
  nt = mgopt__rt_untranspose(r->p, t, l->perm, l->rank);
  nv = nt ? mgopt_build_const(r->p, op->parent, op, mgopt__pu_name2(r->p, mgopt__pu_value_name(v), "_transposed"), nt)
          : NULL;
  if (!nv) return 0;
  mgopt_op_set_operand_at(op, s, k, nv);
  if (old && mgopt__op_is_dead(old)) mgopt_op_erase(old);
  return 1;
}

/* Moves run-time operand (slot s, element k) of op to the data's layout by
   a reshape to its un-transposed static shape (mgopt__rt_reshapeable held). */
static int mgopt__rt_reshape(mgopt__rt *r, mgopt_op *op, int32_t s, int32_t k, const mgopt__rt_lazy *l) {
  static const char *const slots[2] = {"x", "shape"};
  mgopt_value *v = op->slots[s].uses[k].value, *ins[2];
  int64_t shape[MGOPT__RT_MAXR], target[MGOPT__RT_MAXR], rank = l->rank;
  int32_t i, lead = l->rank - v->type.rank;
  mgopt_tensor *t;
  mgopt_op *rs;
  if (!mgopt__pu_static_shape(&v->type, shape, MGOPT__RT_MAXR)) return 1;
  for (i = 0; i < l->rank; i++) target[l->perm[i]] = i < lead ? 1 : shape[i - lead];
  t = mgopt_tensor_new(r->p, MGOPT_DT_INT32, 1, &rank);
  if (!t) return 0;
  for (i = 0; i < l->rank; i++) mgopt_tensor_set_i64(t, i, target[i]);
  ins[0] = v;
  ins[1] = mgopt_build_const(r->p, op->parent, op, mgopt__pu_name2(r->p, mgopt__pu_value_name(v), "_shape"), t);
  if (!ins[1]) return 0;
  rs = mgopt_build_op(r->p, op->parent, op, "reshape", mgopt__pu_name2(r->p, mgopt__pu_value_name(v), "_reshaped"),
                      2, slots, ins, 1);
  if (!rs || mgopt_op_infer(r->p, rs, NULL) != MGOPT_OK) return 0;
  mgopt_op_set_operand_at(op, s, k, rs->outs[0]);
  return 1;
}

/* Phase 3 for one axis-update op. */
static int mgopt__rt_update(mgopt__rt *r, mgopt_op *op, const mgopt__rt_lazy *l) {
  int32_t kind = op->kind, s, k;
  if (mgopt__rt_is_binary(kind)) {
    for (s = 0; s < op->nslots; s++)
      for (k = 0; k < op->slots[s].n; k++) {
        mgopt_value *v = op->slots[s].uses[k].value;
        if (mgopt__rt_lazy_of(r, v) >= 0 || v->type.rank <= 0) continue;
        if (mgopt_value_const(v) ? !mgopt__rt_fix_const(r, op, s, k, l) : !mgopt__rt_reshape(r, op, s, k, l))
          return 0;
      }
    return 1;
  }
  if (kind == MGOPT_OP_pad) {
    int64_t np[2 * MGOPT__RT_MAXR], cnt;
    int32_t first = mgopt__rt_pad(r, op, l, np);
    mgopt_value *old = mgopt_op_operand(op, "pad"), *nv;
    mgopt_tensor *t;
    mgopt_dtype dt = old && mgopt_dtype_is_int((mgopt_dtype)old->type.dtype) ? (mgopt_dtype)old->type.dtype
                                                                          : MGOPT_DT_INT32;
    if (first < 0) return 1; /* decided in phase 1; cannot happen */
    cnt = 2 * (int64_t)(l->rank - first);
    t = mgopt_tensor_new(r->p, dt, 1, &cnt);
    if (!t) return 0;
    for (k = 0; k < cnt; k++) mgopt_tensor_set_i64(t, k, np[2 * first + k]);
    nv = mgopt_build_const(r->p, op->parent, op, mgopt__pu_name2(r->p, mgopt__pu_value_name(old), "_transposed"), t);
    if (!nv || mgopt_op_set_operand(op, "pad", nv) != MGOPT_OK) return 0;
    if (old->def && mgopt__op_is_dead(old->def)) mgopt_op_erase(old->def);
    return 1;
  }
  if (kind == MGOPT_OP_concat || kind == MGOPT_OP_split) {
    int64_t axis = mgopt__pu_norm_axis(mgopt_op_get_int(op, "axis", 0), l->rank);
    if (axis < 0) return 1; /* malformed: inference reports it */
    if (mgopt_op_set_int(op, "axis", l->perm[axis]) != MGOPT_OK) return 0;
    if (kind == MGOPT_OP_concat) {
      s = mgopt_op_slot_index(op, "values");
      for (k = 0; s >= 0 && k < op->slots[s].n; k++)
        if (mgopt__rt_lazy_of(r, op->slots[s].uses[k].value) < 0 && !mgopt__rt_fix_const(r, op, s, k, l)) return 0;
    }
    return 1;
  }
  if (mgopt__rt_is_reduce(kind)) {
    const int64_t *axes = NULL;
    int64_t n = mgopt_op_get_ints(r->p, op, "axes", &axes), i, na[MGOPT__RT_MAXR];
    if (n < 0 || n > MGOPT__RT_MAXR) return 1;
    for (i = 0; i < n; i++) {
      int64_t a = mgopt__pu_norm_axis(axes[i], l->rank);
      na[i] = a < 0 ? axes[i] : l->perm[a];
    }
    return mgopt_op_set_ints(op, "axes", na, n) == MGOPT_OK;
  }
  return 1;
}

/* Uses of t's output read its input instead; a function output keeps its name. */
static int mgopt__rt_bypass(mgopt__rt *r, mgopt_op *t) {
  mgopt_value *out = t->outs[0], *in = mgopt_op_operand(t, "x");
  if (mgopt__pu_is_func_output(out) && (!in->def || mgopt__pu_is_func_output(in))) {
    static const char *const slot[1] = {"x"};
    mgopt_op *id = mgopt_build_op(r->p, t->parent, t, "identity", out->name, 1, slot, &in, 1);
    if (!id || mgopt_op_infer(r->p, id, NULL) != MGOPT_OK) return 0;
    in = id->outs[0];
  }
  mgopt_value_replace_all_uses(out, in);
  if (in->def && in->def->nouts == 1) in->def->name = in->name;
  return 1;
}

/* Inserts transpose(perm) on edge m. */
static int mgopt__rt_materialize(mgopt__rt *r, mgopt_block *b, const mgopt__rt_mat *m) {
  static const char *const slot[1] = {"x"};
  const mgopt__rt_lazy *l = &r->L[m->lazy];
  mgopt_value *v = m->op ? m->op->slots[m->slot].uses[m->index].value : b->outs[m->index]->value;
  mgopt_op *t;
  if (m->op) {
    t = mgopt_build_op(r->p, b, m->op, "transpose", mgopt__pu_name2(r->p, mgopt__pu_value_name(v), "_transposed"),
                       1, slot, &v, 1);
    if (!t || mgopt_op_set_ints(t, "perm", l->perm, l->rank) != MGOPT_OK) return 0;
    mgopt_op_set_operand_at(m->op, m->slot, m->index, t->outs[0]);
  } else {
    /* a block output: the transpose takes the output's name, the value gets a new one */
    const char *name = v->def ? v->name : NULL; /* (a block argument keeps its name; never lazy here) */
    if (name) mgopt__pu_rename(v, mgopt__pu_name2(r->p, mgopt__pu_value_name(v), "_before_transpose"));
    else name = mgopt__pu_name2(r->p, mgopt__pu_value_name(v), "_transposed");
    t = mgopt_build_op(r->p, b, NULL, "transpose", name, 1, slot, &v, 1);
    if (!t || mgopt_op_set_ints(t, "perm", l->perm, l->rank) != MGOPT_OK) return 0;
    mgopt_block_set_output(b, m->index, t->outs[0]);
  }
  return 1;
}

static mgopt_status mgopt__rt_block1(mgopt_pass_ctx *ctx, mgopt__rt *r, mgopt_block *b) {
  mgopt_program *p = ctx->program;
  mgopt_op *op;
  int32_t i;
  int64_t k;
  uint8_t *keep;
  r->nL = r->nuf = r->nM = r->nU = r->nS = r->nC = 0;
  for (op = b->first; op; op = op->next)
    if (op->nblocks) return MGOPT_OK; /* the reference leaves such blocks alone */
  if (r->nids < p->next_id) {
    /* entries start at -1 and are reset after each block (its op outputs) */
    int32_t *nl = (int32_t *)mgopt__heap_realloc(&p->alloc, r->lz, sizeof(int32_t) * r->nids,
                                                 sizeof(int32_t) * p->next_id);
    if (!nl) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "reduce_transposes: out of memory");
    for (k = r->nids; k < (int64_t)p->next_id; k++) nl[k] = -1;
    r->lz = nl;
    r->nids = p->next_id;
  }
  /* phase 1 */
  for (op = b->first; op && !r->oom; op = op->next) mgopt__rt_visit(r, op);
  for (i = 0; i < b->nouts && !r->oom; i++) {
    int32_t l = mgopt__rt_lazy_of(r, b->outs[i]->value);
    if (l >= 0) mgopt__rt_add_mat(r, NULL, -1, i, l);
  }
  if (r->oom) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "reduce_transposes: out of memory");
  if (r->nS == 0) return MGOPT_OK;
  /* phase 2: count per component */
  keep = (uint8_t *)mgopt__heap_realloc(&p->alloc, NULL, 0, (size_t)r->nuf * (3 * sizeof(int64_t) + 1));
  if (!keep) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "reduce_transposes: out of memory");
  r->nstart = (int64_t *)(void *)keep;
  r->ncancel = r->nstart + r->nuf;
  r->nmat = r->ncancel + r->nuf;
  keep = (uint8_t *)(r->nmat + r->nuf);
  memset(r->nstart, 0, (size_t)r->nuf * (3 * sizeof(int64_t) + 1));
  for (k = 0; k < r->nS; k++) r->nstart[mgopt__rt_find(r, r->S[k].comp)]++;
  for (k = 0; k < r->nC; k++) r->ncancel[mgopt__rt_find(r, r->C[k].comp)]++;
  for (k = 0; k < r->nM; k++) r->nmat[mgopt__rt_find(r, r->L[r->M[k].lazy].comp)]++;
  for (k = 0; k < r->nuf; k++)
    if (mgopt__rt_find(r, (int32_t)k) == k) keep[k] = r->nmat[k] < r->nstart[k] + r->ncancel[k];
  /* phase 3: constants and axes, bypasses, then materializations */
  {
    mgopt_status st = MGOPT_OK;
    int64_t changed = 0;
#define MGOPT__RT_KEEP(comp) keep[mgopt__rt_find(r, (comp))]
    for (k = 0; k < r->nU && !st; k++)
      if (MGOPT__RT_KEEP(r->L[r->U[k].lazy].comp) && !mgopt__rt_update(r, r->U[k].op, &r->L[r->U[k].lazy]))
        st = MGOPT_ERR_NOMEM;
    for (k = 0; k < r->nS && !st; k++)
      if (MGOPT__RT_KEEP(r->S[k].comp)) {
        if (!mgopt__rt_bypass(r, r->S[k].op)) st = MGOPT_ERR_NOMEM;
        changed++;
      }
    for (k = 0; k < r->nC && !st; k++)
      if (MGOPT__RT_KEEP(r->C[k].comp)) {
        if (!mgopt__rt_bypass(r, r->C[k].op)) st = MGOPT_ERR_NOMEM;
        changed++;
      }
    for (k = 0; k < r->nM && !st; k++)
      if (MGOPT__RT_KEEP(r->L[r->M[k].lazy].comp) && !mgopt__rt_materialize(r, b, &r->M[k])) st = MGOPT_ERR_NOMEM;
    for (k = 0; k < r->nS; k++)
      if (MGOPT__RT_KEEP(r->S[k].comp) && mgopt__op_is_dead(r->S[k].op)) mgopt_op_erase(r->S[k].op);
    for (k = 0; k < r->nC; k++)
      if (MGOPT__RT_KEEP(r->C[k].comp) && mgopt__op_is_dead(r->C[k].op)) mgopt_op_erase(r->C[k].op);
#undef MGOPT__RT_KEEP
    mgopt__heap_free(&p->alloc, r->nstart, (size_t)r->nuf * (3 * sizeof(int64_t) + 1));
    r->nstart = r->ncancel = r->nmat = NULL;
    if (st) return mgopt_diag_set(ctx->diag, st, "reduce_transposes: out of memory");
    if (!changed) return MGOPT_OK;
    ctx->rewrites += changed;
    /* the layouts changed along the chains: infer every op again, in order;
       a declared type that still holds for the new inference stays (so main's
       outputs and the importer's exact types keep what they declared) */
    for (op = b->first; op; op = op->next) {
      mgopt_diag d;
      mgopt_type kept[16];
      int32_t i, nk = op->nouts <= 16 ? op->nouts : 0;
      if (op->kind == MGOPT_OP_const) continue;
      for (i = 0; i < nk; i++) kept[i] = op->outs[i]->type;
      if (mgopt_op_infer(p, op, &d) != MGOPT_OK)
        return mgopt_diag_set(ctx->diag, MGOPT_ERR_PASS, "reduce_transposes: op '%s' no longer infers: %s",
                              op->name ? op->name : op->type, d.msg);
      for (i = 0; i < nk; i++)
        if (!mgopt__type_clash(&kept[i], &op->outs[i]->type, 1)) op->outs[i]->type = kept[i];
    }
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__rt_block(mgopt_pass_ctx *ctx, mgopt__rt *r, mgopt_block *b) {
  mgopt_status s = mgopt__rt_block1(ctx, r, b);
  mgopt_op *op;
  int32_t i;
  for (op = b->first; op && r->lz; op = op->next)
    for (i = 0; i < op->nouts; i++) mgopt__rt_set(r, op->outs[i], -1);
  return s;
}

static mgopt_status mgopt__rt_run(mgopt_pass_ctx *ctx) {
  mgopt__rt r;
  mgopt_status s = MGOPT_OK;
  int32_t f;
  memset(&r, 0, sizeof r);
  r.p = ctx->program;
  for (f = 0; f < mgopt_program_function_count(ctx->program) && !s; f++) {
    mgopt_function *fn = mgopt_program_function_at(ctx->program, f);
    /* every chain starts at a transpose: without one, nothing can change */
    if (mgopt__index_kind_count(fn, MGOPT_OP_transpose)) s = mgopt__rt_block(ctx, &r, fn->body);
  }
  if (r.lz) mgopt__heap_free(&r.p->alloc, r.lz, sizeof(int32_t) * r.nids);
  if (r.L) mgopt__heap_free(&r.p->alloc, r.L, (size_t)r.capL * sizeof *r.L);
  if (r.uf) mgopt__heap_free(&r.p->alloc, r.uf, (size_t)r.capuf * sizeof *r.uf);
  if (r.M) mgopt__heap_free(&r.p->alloc, r.M, (size_t)r.capM * sizeof *r.M);
  if (r.U) mgopt__heap_free(&r.p->alloc, r.U, (size_t)r.capU * sizeof *r.U);
  if (r.S) mgopt__heap_free(&r.p->alloc, r.S, (size_t)r.capS * sizeof *r.S);
  if (r.C) mgopt__heap_free(&r.p->alloc, r.C, (size_t)r.capC * sizeof *r.C);
  return s;
}

MGOPT__DEFINE_PASS(cleanup, common, reduce_transposes,
                   "cancel transposes across layout-agnostic ops, keeping a transpose only where the layout is needed",
                   mgopt__rt_run);
/* src/passes/fusion/replace_stack_reshape.c — common::replace_stack_reshape: a stack whose new axis a reshape merges into a neighbour becomes a concat.

   Spec: mil_graph_passes.txt, "A stack followed by a reshape layer can be
   replaced by a concat"; reference §3.33 (replace_stack_reshape).

   Before:
     main(%a: (1, 5, 3, 4, fp32), %b: (1, 5, 3, 4, fp32)) {
       %s: (1, 5, 2, 3, 4, fp32) = stack(values=(%a, %b), axis=2)
       %shape: (4, int32)* = const(val=[1, 10, 3, 4])
       %r: (1, 10, 3, 4, fp32) = reshape(x=%s, shape=%shape)
     } -> (%r)
   After:
     main(%a: (1, 5, 3, 4, fp32), %b: (1, 5, 3, 4, fp32)) {
       %r: (1, 10, 3, 4, fp32) = concat(values=(%a, %b), axis=1, interleave=true)
     } -> (%r)

   Fires on: reshape(stack(v0..vn-1, axis=a)) where every vi has the same
   static shape S (rank R), the reshape's output has rank R, all static, and
   differs from S in exactly one dim c with out[c] = n * S[c]. Row-major
   order makes that a merge of the stack axis with a neighbour: c == a (the
   new axis is the outer factor) is concat(axis=c); c == a - 1 (the new axis
   is the inner factor) is concat(axis=c, interleave=true). The concat takes
   the reshape's output name; the stack and the shape const go.
   Any n >= 2 (the reference hard-codes a doubling, so only n == 2 works
   there).
   Must not fire: the stack has another user or is a block output; the
   stack and the reshape sit in different blocks; a dim that is symbolic or
   unknown; out differs from S in another place or by another factor (c not
   next to the new axis: not a merge); the target cannot write the concat
   (mgopt_program_target_accepts).
   Cost: worklist patterns, O(reshapes x rank). */

/* S, the common static shape of the stack's n >= 2 values, into shape; 0 otherwise. */
static int mgopt__rsr_values_shape(const mgopt_op *st, int64_t *shape, int32_t *rank, int32_t *n) {
  int32_t si = mgopt_op_slot_index(st, "values"), i, d;
  int64_t other[MGOPT_MAX_RANK];
  if (si < 0 || st->slots[si].n < 2) return 0;
  *n = st->slots[si].n;
  for (i = 0; i < *n; i++) {
    const mgopt_value *v = st->slots[si].uses[i].value;
    if (!v || v->type.kind != MGOPT_TYPE_TENSOR || v->type.rank < 0) return 0;
    if (i == 0) {
      if (!mgopt__pu_static_shape(&v->type, shape, MGOPT_MAX_RANK)) return 0;
      *rank = v->type.rank;
      continue;
    }
    if (v->type.rank != *rank || !mgopt__pu_static_shape(&v->type, other, MGOPT_MAX_RANK)) return 0;
    for (d = 0; d < *rank; d++)
      if (other[d] != shape[d]) return 0;
  }
  return 1;
}

static int mgopt__rsr_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *out, **vals;
  mgopt_op *st = mgopt__pu_def_of(x, MGOPT_OP_stack), *cc;
  int64_t s[MGOPT_MAX_RANK], o[MGOPT_MAX_RANK], a;
  int32_t rank = 0, n = 0, d, c = -1, si, i;
  MGOPT__UNUSED(ud);
  if (!st || op->nouts != 1 || st->parent != op->parent || !mgopt__pu_single_use(x) ||
      mgopt__pu_is_block_output(x))
    return 0;
  out = op->outs[0];
  if (!mgopt__rsr_values_shape(st, s, &rank, &n)) return 0;
  if (out->type.rank != rank || !mgopt__pu_static_shape(&out->type, o, MGOPT_MAX_RANK)) return 0;
  a = mgopt__pu_norm_axis(mgopt_op_get_int(st, "axis", 0), (int64_t)rank + 1);
  if (a < 0) return 0;
  for (d = 0; d < rank; d++) {
    if (o[d] == s[d]) continue;
    if (c >= 0 || s[d] <= 0 || o[d] != s[d] * n) return 0;
    c = d;
  }
  if (c < 0 || (c != a && c != a - 1)) return 0;
  si = mgopt_op_slot_index(st, "values");
  vals = (mgopt_value **)mgopt_program_alloc(p, sizeof(mgopt_value *) * (size_t)n, 8);
  if (!vals) return 0;
  for (i = 0; i < n; i++) vals[i] = st->slots[si].uses[i].value;
  cc = mgopt_rw_create(rw, op, "concat", mgopt__pu_value_name(out), 0, NULL, NULL, 1);
  if (!cc) return 0;
  if (mgopt_op_set_operand_list(cc, "values", vals, n) != MGOPT_OK || mgopt_op_set_int(cc, "axis", c) != MGOPT_OK ||
      mgopt_op_set_bool(cc, "interleave", c == a - 1) != MGOPT_OK) {
    mgopt_rw_erase(rw, cc);
    return 0;
  }
  return mgopt__pu_fuse_finish(rw, &cc, 1, op, &st, 1);
}

static const mgopt_pattern mgopt__rsr_patterns[] = {
    {"stack_reshape", MGOPT_OP_reshape, NULL, 1, mgopt__rsr_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, replace_stack_reshape,
                           "a stack whose new axis a reshape merges into a neighbour becomes a concat",
                           mgopt__rsr_patterns);
/* src/passes/fusion/detect_concat_interleave.c — common::detect_concat_interleave: a channel concat shuffled by reshape/transpose/reshape becomes an interleaved concat.

   Spec: mil_graph_passes.txt, "Detect the pattern concat-->reshape--->
   transpose--->reshape"; reference §3.31.

   Before:
     main(%a: (1, 2, 3, 3, fp32), %b: (1, 2, 3, 3, fp32)) {
       %c: (1, 4, 3, 3, fp32) = concat(values=(%a, %b), axis=-3)
       %s1: (5, int32)* = const(val=[1, 2, 2, 3, 3])
       %r1: (1, 2, 2, 3, 3, fp32) = reshape(x=%c, shape=%s1)
       %t: (1, 2, 2, 3, 3, fp32) = transpose(x=%r1, perm=[0, 2, 1, 3, 4])
       %s2: (4, int32)* = const(val=[1, 4, 3, 3])
       %r2: (1, 4, 3, 3, fp32) = reshape(x=%t, shape=%s2)
     } -> (%r2)
   After:
     main(%a: (1, 2, 3, 3, fp32), %b: (1, 2, 3, 3, fp32)) {
       %r2: (1, 4, 3, 3, fp32) = concat(values=(%a, %b), axis=-3, interleave=true)
     } -> (%r2)

   Fires on: a non-interleaved concat on axis -3 (1) of n rank-4 values, all
   of one static shape (B, C, H, W), whose only user is a reshape to
   (B, n, C, H, W), whose only user is transpose(perm=[0, 2, 1, 3, 4]),
   whose only user is a reshape to (B, n*C, H, W) (every type static). The
   chain computes out[b, c*n + i] = values[i][b, c]: interleave. The last
   reshape's output takes the new concat; the chain and its shape consts go.
   Must not fire: another user or a block output anywhere before the last
   reshape; ops in different blocks; a concat that already interleaves,
   another axis or rank; values of different shapes; symbolic or unknown
   dims; another perm or other reshape shapes; the target cannot write an
   interleaved concat (mgopt_program_target_accepts).
   Cost: worklist patterns, O(concats x inputs). */

/* The single user of v, of kind `kind`, in block b, reading v in its "x"; v is no block output. */
static mgopt_op *mgopt__dci_next(const mgopt_value *v, int32_t kind, const mgopt_block *b) {
  mgopt_op *u = mgopt__pu_single_user(v);
  if (!u || u->kind != kind || u->parent != b || u->nouts != 1 || mgopt__pu_is_block_output(v) ||
      mgopt_op_operand(u, "x") != v)
    return NULL;
  return u;
}

/* 1 when v's type is static with exactly the dims want[0..rank). */
static int mgopt__dci_shape_is(const mgopt_value *v, const int64_t *want, int32_t rank) {
  int64_t s[MGOPT_MAX_RANK];
  int32_t d;
  if (v->type.kind != MGOPT_TYPE_TENSOR || v->type.rank != rank || !mgopt__pu_static_shape(&v->type, s, MGOPT_MAX_RANK))
    return 0;
  for (d = 0; d < rank; d++)
    if (s[d] != want[d]) return 0;
  return 1;
}

static int mgopt__dci_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const int64_t want_perm[5] = {0, 2, 1, 3, 4};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_op *r1, *tr, *r2, *cc, *matched[3];
  mgopt_value *out, **vals;
  const int64_t *perm = NULL;
  int64_t s[MGOPT_MAX_RANK], w[5];
  int32_t si = mgopt_op_slot_index(op, "values"), n, i;
  MGOPT__UNUSED(ud);
  if (si < 0 || op->nouts != 1 || mgopt_op_get_bool(op, "interleave", 0)) return 0;
  n = op->slots[si].n;
  if (n < 1 || mgopt__pu_norm_axis(mgopt_op_get_int(op, "axis", 0), 4) != 1) return 0;
  for (i = 0; i < n; i++) {
    const mgopt_value *v = op->slots[si].uses[i].value;
    if (!v || v->type.kind != MGOPT_TYPE_TENSOR || v->type.rank != 4) return 0;
    if (i == 0 && !mgopt__pu_static_shape(&v->type, s, MGOPT_MAX_RANK)) return 0;
    if (!mgopt__dci_shape_is(v, s, 4)) return 0;
  }
  r1 = mgopt__dci_next(op->outs[0], MGOPT_OP_reshape, op->parent);
  w[0] = s[0], w[1] = n, w[2] = s[1], w[3] = s[2], w[4] = s[3];
  if (!r1 || !mgopt__dci_shape_is(r1->outs[0], w, 5)) return 0;
  tr = mgopt__dci_next(r1->outs[0], MGOPT_OP_transpose, op->parent);
  if (!tr || mgopt_op_get_ints(p, tr, "perm", &perm) != 5) return 0;
  for (i = 0; i < 5; i++)
    if (mgopt__pu_norm_axis(perm[i], 5) != want_perm[i]) return 0;
  r2 = mgopt__dci_next(tr->outs[0], MGOPT_OP_reshape, op->parent);
  w[1] = s[1] * n, w[2] = s[2], w[3] = s[3];
  if (!r2 || !mgopt__dci_shape_is(r2->outs[0], w, 4)) return 0;
  out = r2->outs[0];
  vals = (mgopt_value **)mgopt_program_alloc(p, sizeof(mgopt_value *) * (size_t)n, 8);
  if (!vals) return 0;
  for (i = 0; i < n; i++) vals[i] = op->slots[si].uses[i].value;
  cc = mgopt_rw_create(rw, r2, "concat", mgopt__pu_value_name(out), 0, NULL, NULL, 1);
  if (!cc) return 0;
  if (mgopt_op_set_operand_list(cc, "values", vals, n) != MGOPT_OK ||
      mgopt_op_set_int(cc, "axis", mgopt_op_get_int(op, "axis", 0)) != MGOPT_OK ||
      mgopt_op_set_bool(cc, "interleave", 1) != MGOPT_OK) {
    mgopt_rw_erase(rw, cc);
    return 0;
  }
  matched[0] = tr;
  matched[1] = r1;
  matched[2] = op;
  return mgopt__pu_fuse_finish(rw, &cc, 1, r2, matched, 3);
}

static const mgopt_pattern mgopt__dci_patterns[] = {
    {"concat_reshape_transpose_reshape", MGOPT_OP_concat, NULL, 1, mgopt__dci_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, detect_concat_interleave,
                           "a channel concat shuffled by reshape, transpose, reshape becomes an interleaved concat",
                           mgopt__dci_patterns);
/* src/passes/fusion/concat_to_pixel_shuffle.c — common::concat_to_pixel_shuffle: nested interleaved concats (H, then W) become a channel concat and pixel_shuffle(2).

   Spec: mil_graph_passes.txt, "Identify nested, interleaved concat ops which
   can be replaced by a single concat and a pixel shuffle layer"; reference
   §3.30.

   Before:
     main(%a: (1, 2, 3, 3, fp32), %b: (1, 2, 3, 3, fp32), %c: (1, 2, 3, 3, fp32), %d: (1, 2, 3, 3, fp32)) {
       %h0: (1, 2, 6, 3, fp32) = concat(values=(%a, %b), axis=2, interleave=true)
       %h1: (1, 2, 6, 3, fp32) = concat(values=(%c, %d), axis=2, interleave=true)
       %o: (1, 2, 6, 6, fp32) = concat(values=(%h0, %h1), axis=3, interleave=true)
     } -> (%o)
   After:
     main(%a: (1, 2, 3, 3, fp32), %b: (1, 2, 3, 3, fp32), %c: (1, 2, 3, 3, fp32), %d: (1, 2, 3, 3, fp32)) {
       %o_channels: (1, 8, 3, 3, fp32) = concat(values=(%a, %c, %b, %d), axis=1, interleave=true)
       %o: (1, 2, 6, 6, fp32) = pixel_shuffle(x=%o_channels, upscale_factor=2)
     } -> (%o)

   Fires on: concat(h0, h1, axis=3 or -1, interleave=true) of rank 4 where
   h0 = concat(a, b) and h1 = concat(c, d), both on axis 2 (or -2) with
   interleave=true. Then o[n, k, 2y+i, 2x+j] is a, b, c, d at (i, j) =
   (0, 0), (1, 0), (0, 1), (1, 1); pixel_shuffle(2) reads channel
   4k + 2i + j, so the channel concat is (a, c, b, d).
   Must not fire: h0 or h1 with another user or a block output (the
   reference does not check: it would keep them and grow the program); not
   exactly two values in each concat; another axis or interleave=false; ops
   in different blocks; a rank that is not 4; the target cannot write
   pixel_shuffle or the interleaved concat (mgopt_program_target_accepts).
   Cost: worklist patterns, O(concats). */

/* The two values of concat op if it interleaves 2 rank-4 values on `axis` (normalized), else 0. */
static int mgopt__cps_pair(const mgopt_op *op, int64_t axis, mgopt_value **v) {
  int32_t si = mgopt_op_slot_index(op, "values"), i;
  if (si < 0 || op->slots[si].n != 2 || op->nouts != 1 || !mgopt_op_get_bool(op, "interleave", 0) ||
      mgopt__pu_norm_axis(mgopt_op_get_int(op, "axis", 0), 4) != axis)
    return 0;
  for (i = 0; i < 2; i++) {
    v[i] = op->slots[si].uses[i].value;
    if (!v[i] || v[i]->type.kind != MGOPT_TYPE_TENSOR || v[i]->type.rank != 4) return 0;
  }
  return 1;
}

/* h's producer if it is a single-use interleaving concat on axis 2 in block b, with its values in v. */
static mgopt_op *mgopt__cps_rows(mgopt_value *h, const mgopt_block *b, mgopt_value **v) {
  mgopt_op *c = mgopt__pu_def_of(h, MGOPT_OP_concat);
  if (!c || c->parent != b || !mgopt__pu_single_use(h) || mgopt__pu_is_block_output(h) || !mgopt__cps_pair(c, 2, v))
    return NULL;
  return c;
}

static int mgopt__cps_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const x_slot[1] = {"x"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *h[2], *ab[2], *cd[2], *vals[4], *out;
  mgopt_op *c0, *c1, *cc, *ps, *made[2], *matched[2];
  MGOPT__UNUSED(ud);
  if (!mgopt__cps_pair(op, 3, h) || h[0] == h[1]) return 0;
  c0 = mgopt__cps_rows(h[0], op->parent, ab);
  c1 = mgopt__cps_rows(h[1], op->parent, cd);
  if (!c0 || !c1) return 0;
  out = op->outs[0];
  vals[0] = ab[0], vals[1] = cd[0], vals[2] = ab[1], vals[3] = cd[1];
  cc = mgopt_rw_create(rw, op, "concat", mgopt__pu_name2(p, mgopt__pu_value_name(out), "_channels"), 0, NULL, NULL, 1);
  if (!cc) return 0;
  made[0] = cc;
  made[1] = ps = mgopt_rw_create(rw, op, "pixel_shuffle", mgopt__pu_value_name(out), 1, x_slot, cc->outs, 1);
  if (!ps || mgopt_op_set_operand_list(cc, "values", vals, 4) != MGOPT_OK ||
      mgopt_op_set_int(cc, "axis", 1) != MGOPT_OK || mgopt_op_set_bool(cc, "interleave", 1) != MGOPT_OK ||
      mgopt_op_set_int(ps, "upscale_factor", 2) != MGOPT_OK) {
    if (ps) mgopt_rw_erase(rw, ps);
    mgopt_rw_erase(rw, cc);
    return 0;
  }
  matched[0] = c0;
  matched[1] = c1;
  return mgopt__pu_fuse_finish(rw, made, 2, op, matched, 2);
}

static const mgopt_pattern mgopt__cps_patterns[] = {
    {"interleaved_concats", MGOPT_OP_concat, NULL, 1, mgopt__cps_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, concat_to_pixel_shuffle,
                           "nested interleaved concats on H then W become a channel concat and pixel_shuffle(2)",
                           mgopt__cps_patterns);
/* src/passes/fusion/use_reflection_padding.c — common::use_reflection_padding: a concat of mirrored one-wide slices around x becomes pad(mode="reflect").

   Spec: mil_graph_passes.txt, "Identify a reflection padding layer composed
   out of slices and concats"; reference §3.33 (use_reflection_padding).

   Before:
     main(%x: (1, 2, 6, 8, fp32)) {
       %b0: (4, int32)* = const(val=[0, 0, 0, 1])
       %e0: (4, int32)* = const(val=[0, 0, 0, 2])
       %l: (1, 2, 6, 1, fp32) = slice_by_index(x=%x, begin=%b0, end=%e0, begin_mask=[true, true, true, false], end_mask=[true, true, true, false])
       %b1: (4, int32)* = const(val=[0, 0, 0, -2])
       %e1: (4, int32)* = const(val=[0, 0, 0, -1])
       %r: (1, 2, 6, 1, fp32) = slice_by_index(x=%x, begin=%b1, end=%e1, begin_mask=[true, true, true, false], end_mask=[true, true, true, false])
       %o: (1, 2, 6, 10, fp32) = concat(values=(%l, %x, %r), axis=3)
     } -> (%o)
   After:
     main(%x: (1, 2, 6, 8, fp32)) {
       %o_pad: (2, int32)* = const(val=[1, 1])
       %o: (1, 2, 6, 10, fp32) = pad(x=%x, pad=%o_pad, mode="reflect")
     } -> (%o)

   Fires on: concat(s_0, ..., s_k-1, x, t_0, ..., t_k-1, axis=a), k >= 1,
   non-interleaved, where every s_i and t_j is a slice_by_index of x that is
   full on every axis but a (begin 0 or masked, end masked or past the
   dim, stride 1, no squeeze) and one wide on a: s_i picks index k - i and
   t_j index D - 2 - j (D = x's static dim on a; negative bounds count from
   the end). That is reflection padding of k on both sides: pad(x,
   mode="reflect") with pad [k, k] when a is the last axis and [k, k, 0, 0]
   when it is the one before (the axes pad's reflect mode covers). Slices
   that lose their last user go with their bound consts.
   Must not fire: a slice that is a block output, reads another tensor or
   picks another index; an even count of values or fewer than 3; the middle
   value is not what the slices read; a on another axis; D unknown or
   k > D - 1; interleave; a non-float x; ops in different blocks; the target
   cannot write the pad (mgopt_program_target_accepts).
   Cost: worklist patterns, O(concats x values x rank). */

#define MGOPT__URP_END_SENTINEL 2147483647 /* an end at least this large means "to the end" of any dim */

/* 1 when slice op of x is full on every axis but `axis`, where it picks exactly index `want`. */
static int mgopt__urp_picks(mgopt_program *p, const mgopt_op *op, const mgopt_value *x, int32_t axis, int64_t want) {
  const int64_t *b = NULL, *e = NULL, *s = NULL, *bm = NULL, *em = NULL, *sm = NULL;
  int64_t nb, ne, ns, nbm, nem, nsm, r = x->type.rank;
  int32_t d;
  nb = mgopt_op_get_ints(p, op, "begin", &b);
  ne = mgopt_op_get_ints(p, op, "end", &e);
  ns = mgopt_op_get_ints(p, op, "stride", &s);
  nbm = mgopt_op_get_ints(p, op, "begin_mask", &bm);
  nem = mgopt_op_get_ints(p, op, "end_mask", &em);
  nsm = mgopt_op_get_ints(p, op, "squeeze_mask", &sm);
  if (nb != r || ne != r || (mgopt_op_operand(op, "stride") && ns != r)) return 0;
  if ((nbm >= 0 && nbm != r) || (nem >= 0 && nem != r) || (nsm >= 0 && nsm != r)) return 0;
  for (d = 0; d < r; d++) {
    int bmask = nbm > 0 && bm[d], emask = nem > 0 && em[d];
    if ((ns > 0 && s[d] != 1) || (nsm > 0 && sm[d])) return 0;
    if (d != axis) {
      int64_t dim = mgopt_dim_is_static(x->type.dims[d]) ? x->type.dims[d].v : -1;
      if (!bmask && b[d] != 0) return 0;
      if (!emask && e[d] < MGOPT__URP_END_SENTINEL && (dim < 0 || e[d] < dim)) return 0;
    } else {
      int64_t dim = x->type.dims[d].v, lo = bmask ? 0 : b[d], hi = emask ? dim : e[d];
      if (lo < 0) lo += dim;
      if (hi < 0) hi += dim;
      if (hi > dim) hi = dim;
      if (lo != want || hi != want + 1) return 0;
    }
  }
  return 1;
}

static int mgopt__urp_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const slots[2] = {"x", "pad"};
  mgopt_program *p = mgopt_rw_program(rw);
  int32_t si = mgopt_op_slot_index(op, "values"), n, k, i, axis, rank;
  mgopt_value *x, *out, *ins[2];
  mgopt_tensor *pt;
  mgopt_op *pad;
  int64_t dim, pads[4] = {0, 0, 0, 0};
  MGOPT__UNUSED(ud);
  if (si < 0 || op->nouts != 1 || mgopt_op_get_bool(op, "interleave", 0)) return 0;
  n = op->slots[si].n;
  if (n < 3 || n % 2 == 0) return 0;
  k = n / 2;
  x = op->slots[si].uses[k].value;
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR || !mgopt_dtype_is_float((mgopt_dtype)x->type.dtype)) return 0;
  rank = x->type.rank;
  axis = (int32_t)mgopt__pu_norm_axis(mgopt_op_get_int(op, "axis", 0), rank);
  if (rank < 1 || axis < 0 || axis < rank - 2 || !mgopt_dim_is_static(x->type.dims[axis])) return 0;
  dim = x->type.dims[axis].v;
  if (k > dim - 1) return 0;
  for (i = 0; i < n; i++) {
    mgopt_value *v = op->slots[si].uses[i].value;
    mgopt_op *sl;
    if (i == k) continue;
    sl = mgopt__pu_def_of(v, MGOPT_OP_slice_by_index);
    if (!sl || sl->parent != op->parent || mgopt__pu_is_block_output(v) || mgopt_op_operand(sl, "x") != x ||
        !mgopt__urp_picks(p, sl, x, axis, i < k ? k - i : dim - 2 - (i - k - 1)))
      return 0;
  }
  out = op->outs[0];
  pads[0] = pads[1] = k;
  pt = mgopt__pu_const_i32_1d(p, pads, axis == rank - 1 ? 2 : 4);
  if (!pt) return 0;
  ins[0] = x;
  ins[1] = mgopt_rw_const(rw, op, mgopt__pu_name2(p, mgopt__pu_value_name(out), "_pad"), pt);
  if (!ins[1]) return 0;
  pad = mgopt_rw_create(rw, op, "pad", mgopt__pu_value_name(out), 2, slots, ins, 1);
  if (!pad || mgopt_op_set_string(pad, "mode", "reflect") != MGOPT_OK) {
    if (pad) mgopt_rw_erase(rw, pad);
    mgopt_rw_erase(rw, ins[1]->def);
    return 0;
  }
  {
    /* the slices, each once (a slice may stand on both sides) */
    mgopt_op *sl[64];
    int32_t ns = 0, j;
    for (i = 0; i < n && ns < 64; i++) {
      mgopt_op *s = i == k ? NULL : op->slots[si].uses[i].value->def;
      for (j = 0; s && j < ns; j++)
        if (sl[j] == s) s = NULL;
      if (s) sl[ns++] = s;
    }
    return mgopt__pu_fuse_finish(rw, &pad, 1, op, sl, ns);
  }
}

static const mgopt_pattern mgopt__urp_patterns[] = {
    {"mirrored_slices_concat", MGOPT_OP_concat, NULL, 1, mgopt__urp_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, use_reflection_padding,
                           "a concat of mirrored one-wide slices around x becomes pad(mode=\"reflect\")",
                           mgopt__urp_patterns);
/* src/passes/fusion/fuse_onehot_matmul_to_gather.c — common::fuse_onehot_matmul_to_gather: one_hot(i) times a constant matrix W becomes gather(W, i).

   Spec: mil_graph_passes.txt, "Detect if onehot (axis=-1, on_value=1,
   off_value=0) is followed by a matmul op (no bias)"; reference §3.33
   (fuse_onehot_matmul_to_gather).

   Before:
     main(%i: (2, int32)) {
       %h: (2, 3, fp32) = one_hot(indices=%i, one_hot_vector_size=3)
       %w: (3, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6]])
       %y: (2, 2, fp32) = matmul(x=%h, y=%w)
     } -> (%y)
   After:
     main(%i: (2, int32)) {
       %w: (3, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6]])
       %y: (2, 2, fp32) = gather(x=%w, indices=%i, axis=0)
     } -> (%y)

   Fires on: one_hot(indices, one_hot_vector_size=N, axis=-1, on_value=1,
   off_value=0) (exactly 1 and 0) whose only user is matmul(x=one_hot,
   y=W) without transposes, W a constant (N, K) matrix whose every element
   is finite; the gather takes the matmul's output name.
   Indices: one_hot marks index i in [-N, N) at i mod N (ONNX OneHot; the
   reference's guard wraps the same way), and gather's index i in [-N, N)
   reads row i mod N: the results agree for every such index, negative
   ones included, with no guard ops (the reference's select(i >= 0, i,
   i + N) is what guard_negative_gather_indices adds later in the pipeline
   for a runtime whose gather takes no negative index; N is static, so no
   run-time shape is needed). Constant indices must all lie in [-N, N)
   (outside, one_hot gives a zero row that gather cannot). Run-time indices
   outside [-N, N) are outside gather's domain: the one case the rewrite
   does not preserve, as in the reference. Results are bitwise equal but
   for the sign of a zero (1 * -0 + 0 * w is +0).
   Must not fire: the one_hot is a block output or has another user; another
   axis; on/off values not exactly 1 and 0, or not constant; transpose_x or
   transpose_y set (or not constant); W not constant, not rank 2, or holding
   an infinity or NaN (0 * inf would make the matmul's column NaN); the
   one_hot and the matmul in different blocks; the target cannot write the
   gather (mgopt_program_target_accepts).
   Cost: worklist patterns, O(matmuls + W elements). */

/* The value of parameter `name` of op when it is constant (attribute, default or constant operand). */
static int mgopt__fog_const_param(const mgopt_op *op, const char *name, double *v) {
  const mgopt_value *u = mgopt_op_operand(op, name);
  if (u && !mgopt_value_const(u)) return 0;
  *v = mgopt_op_get_float(op, name, 0.0);
  return 1;
}

/* 1 when every element of t is finite. */
static int mgopt__fog_finite(const mgopt_tensor *t) {
  int64_t i;
  for (i = 0; i < t->numel; i++) {
    double v = mgopt_tensor_get_f64(t, i);
    if (v != v || v - v != 0.0) return 0;
  }
  return 1;
}

static int mgopt__fog_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const slots[2] = {"x", "indices"};
  mgopt_value *h = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "y"), *idx, *out, *ins[2];
  mgopt_op *oh = mgopt__pu_def_of(h, MGOPT_OP_one_hot), *g;
  const mgopt_tensor *wt, *it;
  double on, off, tx, ty;
  int64_t depth, i;
  MGOPT__UNUSED(ud);
  if (!oh || op->nouts != 1 || oh->parent != op->parent || !mgopt__pu_single_use(h) || mgopt__pu_is_block_output(h))
    return 0;
  idx = mgopt_op_operand(oh, "indices");
  if (!idx || idx->type.kind != MGOPT_TYPE_TENSOR || idx->type.rank < 0 ||
      !mgopt_dtype_is_int((mgopt_dtype)idx->type.dtype))
    return 0;
  if (mgopt_op_operand(oh, "axis") && !mgopt_value_const(mgopt_op_operand(oh, "axis"))) return 0;
  if (mgopt__pu_norm_axis(mgopt_op_get_int(oh, "axis", -1), (int64_t)idx->type.rank + 1) != idx->type.rank) return 0;
  if (!mgopt__fog_const_param(oh, "on_value", &on) || !mgopt__fog_const_param(oh, "off_value", &off) ||
      on != 1.0 || off != 0.0)
    return 0;
  if (!mgopt__fog_const_param(op, "transpose_x", &tx) || !mgopt__fog_const_param(op, "transpose_y", &ty) ||
      mgopt_op_get_bool(op, "transpose_x", 0) || mgopt_op_get_bool(op, "transpose_y", 0))
    return 0;
  depth = mgopt_op_get_int(oh, "one_hot_vector_size", -1);
  wt = mgopt_value_const(w);
  if (!wt || wt->rank != 2 || wt->shape[0] != depth || depth < 1 || !mgopt__fog_finite(wt)) return 0;
  it = mgopt_value_const(idx);
  for (i = 0; it && i < it->numel; i++) {
    int64_t v = mgopt_tensor_get_i64(it, i);
    if (v < -depth || v >= depth) return 0;
  }
  out = op->outs[0];
  ins[0] = w;
  ins[1] = idx;
  g = mgopt_rw_create(rw, op, "gather", mgopt__pu_value_name(out), 2, slots, ins, 1);
  if (!g) return 0;
  if (mgopt_op_set_int(g, "axis", 0) != MGOPT_OK) {
    mgopt_rw_erase(rw, g);
    return 0;
  }
  return mgopt__pu_fuse_finish(rw, &g, 1, op, &oh, 1);
}

static const mgopt_pattern mgopt__fog_patterns[] = {
    {"one_hot_matmul", MGOPT_OP_matmul, NULL, 1, mgopt__fog_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_onehot_matmul_to_gather,
                           "one_hot(i) times a constant matrix W becomes gather(W, i)", mgopt__fog_patterns);
/* src/passes/fusion/fuse_linear_bias.c — common::fuse_linear_bias: linear followed by add / sub of a constant becomes one linear.

   Spec: mil_graph_passes.txt, "Convert linear + add/sub to a single linear by
   updating the weight and bias of the linear layer"; reference §3.21.

   Before:
     main(%x: (2, 2, fp32)) {
       %w: (3, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6]])
       %b: (3, fp32)* = const(val=[1, 2, 3])
       %l: (2, 3, fp32) = linear(x=%x, weight=%w, bias=%b)
       %c: (1, 3, fp32)* = const(val=[[10, 20, 30]])
       %y: (2, 3, fp32) = sub(x=%c, y=%l)
     } -> (%y)
   After:
     main(%x: (2, 2, fp32)) {
       %y_weight: (3, 2, fp32)* = const(val=[[-1, -2], [-3, -4], [-5, -6]])
       %y_bias: (3, fp32)* = const(val=[9, 18, 27])
       %y: (2, 3, fp32) = linear(x=%x, weight=%y_weight, bias=%y_bias)
     } -> (%y)

   Fires on: a linear with a constant weight [Dout, Din] and a constant bias
   (Dout) or none (zeros), whose output is not a block output and has exactly
   one reader, an add or sub whose other operand is a constant c of Dout
   elements with last dim Dout and rank at most the linear's output rank (so
   the sum keeps the linear's shape). The result is linear(x, W', b') named
   after the add / sub output:
     add(linear, c), add(c, linear): W' = W,  b' = b + c
     sub(linear, c):                 W' = W,  b' = b - c
     sub(c, linear):                 W' = -W, b' = c - b
   (c - linear negates the weight as well as the bias: c - (xW^T + b) =
   x(-W)^T + (c - b)). The old linear, the add / sub and the constants only
   they read are erased.
   Must not fire: a run-time weight, bias or c; c of another element count,
   last dim or a higher rank (it would broadcast the output); dtypes that
   differ or are not float; a linear output that is a block output or has
   another reader; add(linear, linear); a target that cannot express the new
   linear (mgopt_program_target_accepts).
   Numeric contract: b' is computed in double from the stored values and
   rounded once to the weight's dtype (fp16 stays fp16); -W is exact.
   Cost: worklist patterns, O(linears + weight elements of the fused ones). */

/* the float dtype shared by every value given (NULLs skipped), else UNKNOWN */
static mgopt_dtype mgopt__flb_common_float(const mgopt_value *const *v, int32_t n) {
  mgopt_dtype dt = MGOPT_DT_UNKNOWN;
  int32_t i;
  for (i = 0; i < n; i++) {
    if (!v[i]) continue;
    if (dt == MGOPT_DT_UNKNOWN) dt = (mgopt_dtype)v[i]->type.dtype;
    if ((mgopt_dtype)v[i]->type.dtype != dt) return MGOPT_DT_UNKNOWN;
  }
  return mgopt_dtype_is_float(dt) ? dt : MGOPT_DT_UNKNOWN;
}

static int mgopt__flb_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const slots[3] = {"x", "weight", "bias"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "weight"), *b = mgopt_op_operand(op, "bias");
  mgopt_value *out, *c, *vals[3];
  const mgopt_value *chk[5];
  mgopt_tensor *wt, *bt = NULL, *ct, *nb, *nw = NULL;
  mgopt_op *user, *lin;
  mgopt_dtype dt;
  const char *name;
  int64_t dout, i;
  int first, neg_w, sub;
  MGOPT__UNUSED(ud);
  if (!x || !w || op->nouts != 1) return 0;
  out = op->outs[0];
  if (mgopt__pu_is_block_output(out)) return 0;
  user = mgopt__pu_single_user(out);
  if (!user || (user->kind != MGOPT_OP_add && user->kind != MGOPT_OP_sub) || user->nouts != 1) return 0;
  first = mgopt_op_operand(user, "x") == out;
  c = mgopt_op_operand(user, first ? "y" : "x");
  if (!c || c == out) return 0;
  wt = mgopt_value_const(w);
  ct = mgopt_value_const(c);
  if (b) bt = mgopt_value_const(b);
  if (!wt || !ct || (b && !bt)) return 0;
  chk[0] = x, chk[1] = w, chk[2] = b, chk[3] = c, chk[4] = out;
  dt = mgopt__flb_common_float(chk, 5);
  if (dt == MGOPT_DT_UNKNOWN || wt->dtype != dt || ct->dtype != dt || (bt && bt->dtype != dt)) return 0;
  if (wt->rank != 2) return 0;
  dout = wt->shape[0];
  if (bt && (bt->rank != 1 || bt->shape[0] != dout)) return 0;
  if (ct->numel != dout || ct->rank < 1 || ct->shape[ct->rank - 1] != dout || out->type.rank < ct->rank) return 0;
  sub = user->kind == MGOPT_OP_sub;
  neg_w = sub && !first;
  nb = mgopt_tensor_new(p, dt, 1, &dout);
  if (!nb) return 0;
  for (i = 0; i < dout; i++) {
    double bv = bt ? mgopt_tensor_get_f64(bt, i) : 0.0, cv = mgopt_tensor_get_f64(ct, i);
    mgopt_tensor_set_f64(nb, i, !sub ? bv + cv : first ? bv - cv : cv - bv);
  }
  if (neg_w) {
    nw = mgopt_tensor_new(p, dt, 2, wt->shape);
    if (!nw) return 0;
    for (i = 0; i < wt->numel; i++) mgopt_tensor_set_f64(nw, i, -mgopt_tensor_get_f64(wt, i));
  }
  name = mgopt__pu_value_name(user->outs[0]);
  vals[0] = x;
  vals[1] = nw ? mgopt_rw_const(rw, user, mgopt__pu_name2(p, name, "_weight"), nw) : w;
  vals[2] = mgopt_rw_const(rw, user, mgopt__pu_name2(p, name, "_bias"), nb);
  if (!vals[1] || !vals[2]) return 0;
  lin = mgopt_rw_create(rw, user, "linear", name, 3, slots, vals, 1);
  if (!lin) {
    mgopt__pu_erase_if_dead(rw, vals[2]->def);
    if (nw) mgopt__pu_erase_if_dead(rw, vals[1]->def);
    return 0;
  }
  return mgopt__pu_fuse_finish_named(rw, &lin, 1, user, &op, 1);
}

static const mgopt_pattern mgopt__flb_patterns[] = {
    {"linear_add_sub", MGOPT_OP_linear, NULL, 1, mgopt__flb_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_linear_bias,
                           "fold an add / sub of a constant after a constant linear into its weight and bias",
                           mgopt__flb_patterns);
/* src/passes/fusion/fuse_matmul_weight_bias.c — common::fuse_matmul_weight_bias: matmul by a constant matrix followed by add / sub of a constant becomes linear.

   Spec: mil_graph_passes.txt, "Convert matmul + add/sub to linear whenever
   possible"; reference §3.21.

   Before:
     main(%x: (2, 3, fp32)) {
       %w: (3, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6]])
       %m: (2, 2, fp32) = matmul(x=%x, y=%w, transpose_x=false, transpose_y=false)
       %c: (2, fp32)* = const(val=[10, 20])
       %y: (2, 2, fp32) = sub(x=%c, y=%m)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %y_weight: (2, 3, fp32)* = const(val=[[-1, -3, -5], [-2, -4, -6]])
       %y_bias: (2, fp32)* = const(val=[10, 20])
       %y: (2, 2, fp32) = linear(x=%x, weight=%y_weight, bias=%y_bias)
     } -> (%y)

   Fires on: a matmul with exactly one constant operand W of rank 2 that
   nothing else reads, constant transpose_x / transpose_y, the other operand
   of rank >= 2, and an output that is not a block output with one reader, an
   add or sub whose other operand is a constant c. linear(x, A, b) computes
   x A^T + b, so:
   - W is y: out = x' W' with W' = W^T if transpose_y else W, of shape
     [K, N]; c must have N elements along the last axis (leading dims 1, rank
     at most the output's). The result is linear(x', A, b) with A = W'^T
     ([N, K]: W itself when transpose_y, its transposed data otherwise) and
     x' = transpose(x) over the last two axes when transpose_x.
   - W is x: out = W' y' with W' = W^T if transpose_x else W, of shape
     [M, K], and out^T = y'^T W'^T = linear(y'^T, W', b) with the bias along
     the rows: c must have shape [..., M, 1] (leading dims 1). Only when
     transpose_y is set (y'^T is y itself), so the result,
     transpose(linear(y, W', b)), has no more ops than the matmul and add.
   The sign: add(mm, c) and add(c, mm): A, b = c; sub(mm, c): A, b = -c;
   sub(c, mm): -A, b = c (c - xW = x(-W) + c: the weight is negated, never
   the bias alone). The matmul, the add / sub and the constants only they read
   are erased; the last new op takes the add / sub output's name.
   Must not fire: two constant or two run-time operands; a weight of another
   rank, read by another op too, or another dtype; an operand of rank < 2; a
   transpose flag that is not constant; a bias of another length or layout,
   or of higher rank than the output (it would broadcast it), or not constant;
   W as x without transpose_y (two transposes would be added); a matmul
   output that is a block output or has another reader; a target that cannot
   express the linear (mgopt_program_target_accepts).
   Numeric contract: exact. The weight and bias are only transposed and
   negated, in their own dtype (fp16 stays fp16); no value is rounded.
   Cost: worklist patterns, O(matmuls + weight elements of the fused ones).
   A transposed weight remembers the bytes it came from
   (mgopt__tensor_transpose2d), so ONNX export, which writes a linear over a
   rank > 2 input as MatMul by the weight's transpose, writes those bytes
   without transposing again. */

/* the value of bool flag `name` of op, or -1 when it is a run-time operand */
static int mgopt__fmw_flag(const mgopt_op *op, const char *name) {
  const mgopt_value *v = mgopt_op_operand(op, name);
  if (v && !mgopt_value_const(v)) return -1;
  return mgopt_op_get_bool(op, name, 0) ? 1 : 0;
}

/* 1 when c has n elements laid out as [1, ..., 1, n] (col 0) or
   [1, ..., 1, n, 1] (col 1), rank at most max_rank. */
static int mgopt__fmw_bias_layout(const mgopt_tensor *c, int64_t n, int col, int32_t max_rank) {
  int32_t lead = c->rank - 1 - col;
  if (c->numel != n || lead < 0 || c->rank > max_rank) return 0;
  return c->shape[lead] == n && (!col || c->shape[c->rank - 1] == 1);
}

/* transpose of v's last two axes before pos, named `name`; NULL on failure */
static mgopt_op *mgopt__fmw_transpose(mgopt_rewriter *rw, mgopt_op *pos, mgopt_value *v, const char *name) {
  static const char *const slot[1] = {"x"};
  int64_t perm[MGOPT_MAX_RANK], r = v->type.rank, i;
  mgopt_op *t;
  if (r < 2 || r > MGOPT_MAX_RANK) return NULL;
  for (i = 0; i < r; i++) perm[i] = i;
  perm[r - 2] = r - 1;
  perm[r - 1] = r - 2;
  t = mgopt_rw_create(rw, pos, "transpose", name, 1, slot, &v, 1);
  if (!t) return NULL;
  if (mgopt_op_set_ints(t, "perm", perm, r) != MGOPT_OK || mgopt_op_infer(mgopt_rw_program(rw), t, NULL) != MGOPT_OK) {
    mgopt_rw_erase(rw, t);
    return NULL;
  }
  return t;
}

static int mgopt__fmw_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const slots[3] = {"x", "weight", "bias"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *mx = mgopt_op_operand(op, "x"), *my = mgopt_op_operand(op, "y"), *out, *c, *w, *other, *vals[3];
  mgopt_tensor *wt, *ct, *nw = NULL, *nb;
  mgopt_op *user, *pre = NULL, *lin, *post = NULL, *made[3];
  mgopt_value *wv = NULL, *bv = NULL;
  const char *name;
  int64_t n, i;
  int tx = mgopt__fmw_flag(op, "transpose_x"), ty = mgopt__fmw_flag(op, "transpose_y");
  int w_is_x, first, sub, neg_w, transpose_w;
  int32_t nmade = 0;
  mgopt_dtype dt;
  MGOPT__UNUSED(ud);
  if (!mx || !my || op->nouts != 1 || tx < 0 || ty < 0) return 0;
  out = op->outs[0];
  if (mgopt__pu_is_block_output(out)) return 0;
  user = mgopt__pu_single_user(out);
  if (!user || (user->kind != MGOPT_OP_add && user->kind != MGOPT_OP_sub) || user->nouts != 1) return 0;
  first = mgopt_op_operand(user, "x") == out;
  c = mgopt_op_operand(user, first ? "y" : "x");
  if (!c || c == out || !(ct = mgopt_value_const(c))) return 0;
  if ((mgopt_value_const(mx) != NULL) == (mgopt_value_const(my) != NULL)) return 0;
  w_is_x = mgopt_value_const(mx) != NULL;
  w = w_is_x ? mx : my;
  other = w_is_x ? my : mx;
  wt = mgopt_value_const(w);
  dt = (mgopt_dtype)w->type.dtype;
  if (!mgopt_dtype_is_float(dt) || wt->dtype != dt || ct->dtype != dt || other->type.dtype != dt ||
      out->type.dtype != dt || c->type.dtype != dt)
    return 0;
  if (wt->rank != 2 || other->type.rank < 2 || w->nuses != 1 || mgopt__pu_is_block_output(w)) return 0;
  if (w_is_x && !ty) return 0;
  /* A: the linear's weight before the sign. W as y: A = W'^T, which is W when
     transpose_y. W as x: A = W', which is W unless transpose_x. */
  transpose_w = w_is_x ? tx : !ty;
  n = transpose_w ? wt->shape[1] : wt->shape[0];
  if (!mgopt__fmw_bias_layout(ct, n, w_is_x, out->type.rank)) return 0;
  sub = user->kind == MGOPT_OP_sub;
  neg_w = sub && !first;
  name = mgopt__pu_value_name(user->outs[0]);
  if (transpose_w || neg_w) {
    nw = transpose_w ? mgopt__tensor_transpose2d(p, wt) : mgopt_tensor_clone(p, wt);
    if (!nw) return 0;
    if (neg_w)
      for (i = 0; i < nw->numel; i++) mgopt_tensor_set_f64(nw, i, -mgopt_tensor_get_f64(nw, i));
  }
  nb = mgopt_tensor_new(p, dt, 1, &n);
  if (!nb) return 0;
  for (i = 0; i < n; i++) mgopt_tensor_set_f64(nb, i, sub && first ? -mgopt_tensor_get_f64(ct, i) : mgopt_tensor_get_f64(ct, i));
  if (!w_is_x && tx) {
    pre = mgopt__fmw_transpose(rw, user, other, mgopt__pu_name2(p, name, "_x_transposed"));
    if (!pre) return 0;
  }
  wv = nw ? mgopt_rw_const(rw, user, mgopt__pu_name2(p, name, "_weight"), nw) : w;
  bv = mgopt_rw_const(rw, user, mgopt__pu_name2(p, name, "_bias"), nb);
  vals[0] = pre ? pre->outs[0] : other;
  vals[1] = wv;
  vals[2] = bv;
  lin = wv && bv ? mgopt_rw_create(rw, user, "linear", w_is_x ? mgopt__pu_name2(p, name, "_linear") : name, 3, slots,
                                   vals, 1)
                 : NULL;
  /* W as x: a transpose after the linear, made once the linear's rank is known */
  if (lin && w_is_x && mgopt_op_infer(p, lin, NULL) == MGOPT_OK) post = mgopt__fmw_transpose(rw, user, lin->outs[0], name);
  if (!lin || (w_is_x && !post)) {
    if (lin) mgopt_rw_erase(rw, lin);
    if (pre) mgopt_rw_erase(rw, pre);
    if (bv) mgopt__pu_erase_if_dead(rw, bv->def);
    if (nw && wv) mgopt__pu_erase_if_dead(rw, wv->def);
    return 0;
  }
  if (pre) made[nmade++] = pre;
  made[nmade++] = lin;
  if (post) made[nmade++] = post;
  return mgopt__pu_fuse_finish_named(rw, made, nmade, user, &op, 1);
}

static const mgopt_pattern mgopt__fmw_patterns[] = {
    {"matmul_add_sub", MGOPT_OP_matmul, NULL, 1, mgopt__fmw_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_matmul_weight_bias,
                           "matmul by a constant matrix followed by add / sub of a constant becomes linear",
                           mgopt__fmw_patterns);
/* src/passes/fusion/fuse_elementwise_to_batchnorm.c — common::fuse_elementwise_to_batchnorm: a per-channel mul then add of constants on a rank-4 tensor becomes batch_norm.

   Spec: mil_graph_passes.txt, "Fold mul + add into a batchnorm if the const
   feeding into the mul/add is of shape (1,C,1,1) or (C,1,1) and input to mul
   is of rank 4"; reference §3.25.

   Before:
     main(%x: (1, 2, 3, 3, fp32)) {
       %g: (1, 2, 1, 1, fp32)* = const(val=[[[[2]], [[3]]]])
       %m: (1, 2, 3, 3, fp32) = mul(x=%x, y=%g)
       %b: (2, 1, 1, fp32)* = const(val=[[[1]], [[-1]]])
       %y: (1, 2, 3, 3, fp32) = add(x=%m, y=%b)
     } -> (%y)
   After:
     main(%x: (1, 2, 3, 3, fp32)) {
       %y_mean: (2, fp32)* = const(val=[0, 0])
       %y_variance: (2, fp32)* = const(val=[1, 1])
       %y_gamma: (2, fp32)* = const(val=[2, 3])
       %y_beta: (2, fp32)* = const(val=[1, -1])
       %y: (1, 2, 3, 3, fp32) = batch_norm(x=%x, mean=%y_mean, variance=%y_variance, gamma=%y_gamma, beta=%y_beta, epsilon=0.0)
     } -> (%y)

   Fires on: mul(x, g) (either operand order) with x of rank 4 whose channel
   dim (axis 1) is static C != 1, g a constant of shape (1, C, 1, 1) or
   (C, 1, 1), the mul's output not a block output with one reader, an add
   (either order) whose other operand is a constant b of one of those shapes.
   The result is batch_norm(x, mean = 0, variance = 1, gamma = g, beta = b,
   epsilon = 0) named after the add's output: (x - 0) / sqrt(1 + 0) * g + b
   is g x + b exactly (the reference keeps batch_norm's default epsilon 1e-5,
   which scales every output by 1 / sqrt(1 + 1e-5)). The mul, the add and the
   constants only they read are erased.
   Must not fire: x of another rank or a channel dim that is 1, symbolic or
   unknown; a constant of another shape (per-element or per-row, C = 1); a
   run-time g or b; dtypes that differ or are not float; a mul output that is
   a block output or has another reader; a target that cannot express
   batch_norm (mgopt_program_target_accepts).
   Numeric contract: exact. g and b are copied in their own dtype (fp16
   stays fp16); mean, variance and epsilon are 0, 1 and 0, so batch_norm
   computes g x + b.
   Cost: worklist patterns, O(muls + C for the fused ones). */

/* 1 when t has shape (1, c, 1, 1) or (c, 1, 1) */
static int mgopt__feb_per_channel(const mgopt_tensor *t, int64_t c) {
  if (t->rank == 4) return t->shape[0] == 1 && t->shape[1] == c && t->shape[2] == 1 && t->shape[3] == 1;
  if (t->rank == 3) return t->shape[0] == c && t->shape[1] == 1 && t->shape[2] == 1;
  return 0;
}

/* The operand of binary op that is not v; NULL when both are v. */
static mgopt_value *mgopt__feb_other(const mgopt_op *op, const mgopt_value *v) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y");
  if (x == v) return y == v ? NULL : y;
  return y == v ? x : NULL;
}

/* a new const (c) of dtype dt, filled from src (NULL: all `fill`), before pos */
static mgopt_value *mgopt__feb_vec(mgopt_rewriter *rw, mgopt_op *pos, const char *name, mgopt_dtype dt, int64_t c,
                                    const mgopt_tensor *src, double fill) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_tensor *t = mgopt_tensor_new(p, dt, 1, &c);
  int64_t i;
  if (!t) return NULL;
  for (i = 0; i < c; i++) mgopt_tensor_set_f64(t, i, src ? mgopt_tensor_get_f64(src, i) : fill);
  return mgopt_rw_const(rw, pos, name, t);
}

static int mgopt__feb_fuse(mgopt_rewriter *rw, mgopt_op *mul, void *ud) {
  static const char *const slots[5] = {"x", "mean", "variance", "gamma", "beta"};
  static const char *const suffix[4] = {"_mean", "_variance", "_gamma", "_beta"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *a = mgopt_op_operand(mul, "x"), *bv = mgopt_op_operand(mul, "y"), *x, *g, *out, *beta, *vals[5];
  mgopt_tensor *gt, *bt;
  mgopt_op *add, *bn;
  mgopt_dtype dt;
  const char *name;
  int64_t c;
  int k;
  MGOPT__UNUSED(ud);
  if (!a || !bv || mul->nouts != 1) return 0;
  if (mgopt_value_const(bv)) x = a, g = bv;
  else x = bv, g = a;
  gt = mgopt_value_const(g);
  if (!gt || mgopt_value_const(x) || x->type.rank != 4 || !mgopt_dim_is_static(x->type.dims[1])) return 0;
  c = x->type.dims[1].v;
  out = mul->outs[0];
  if (c == 1 || mgopt__pu_is_block_output(out)) return 0;
  add = mgopt__pu_single_user(out);
  if (!add || add->kind != MGOPT_OP_add || add->nouts != 1) return 0;
  beta = mgopt__feb_other(add, out);
  if (!beta || !(bt = mgopt_value_const(beta))) return 0;
  dt = (mgopt_dtype)x->type.dtype;
  if (!mgopt_dtype_is_float(dt) || gt->dtype != dt || bt->dtype != dt || out->type.dtype != dt ||
      add->outs[0]->type.dtype != dt)
    return 0;
  if (!mgopt__feb_per_channel(gt, c) || !mgopt__feb_per_channel(bt, c)) return 0;
  name = mgopt__pu_value_name(add->outs[0]);
  vals[0] = x;
  vals[1] = mgopt__feb_vec(rw, add, mgopt__pu_name2(p, name, suffix[0]), dt, c, NULL, 0.0);
  vals[2] = mgopt__feb_vec(rw, add, mgopt__pu_name2(p, name, suffix[1]), dt, c, NULL, 1.0);
  vals[3] = mgopt__feb_vec(rw, add, mgopt__pu_name2(p, name, suffix[2]), dt, c, gt, 0.0);
  vals[4] = mgopt__feb_vec(rw, add, mgopt__pu_name2(p, name, suffix[3]), dt, c, bt, 0.0);
  bn = NULL;
  if (vals[1] && vals[2] && vals[3] && vals[4]) bn = mgopt_rw_create(rw, add, "batch_norm", name, 5, slots, vals, 1);
  if (!bn || mgopt_op_set_float(bn, "epsilon", 0.0) != MGOPT_OK) {
    if (bn) mgopt_rw_erase(rw, bn);
    for (k = 1; k < 5; k++)
      if (vals[k]) mgopt__pu_erase_if_dead(rw, vals[k]->def);
    return 0;
  }
  return mgopt__pu_fuse_finish_named(rw, &bn, 1, add, &mul, 1);
}

static const mgopt_pattern mgopt__feb_patterns[] = {
    {"mul_add_batch_norm", MGOPT_OP_mul, NULL, 1, mgopt__feb_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_elementwise_to_batchnorm,
                           "a per-channel mul then add of constants on a rank-4 tensor becomes batch_norm (epsilon 0)",
                           mgopt__feb_patterns);
/* src/passes/fusion/fuse_gelu_exact.c — common::fuse_gelu_exact: 0.5 * x * (1 + erf(x / sqrt(2))) becomes gelu(x, mode=EXACT).

   Spec: mil_graph_passes.txt, "the exact version of gelu"; reference §3.11.

   Before:
     main(%x: (2, 3, fp32)) {
       %s: (fp32)* = const(val=1.4142135)
       %d: (2, 3, fp32) = real_div(x=%x, y=%s)
       %e: (2, 3, fp32) = erf(x=%d)
       %one: (fp32)* = const(val=1.0)
       %a: (2, 3, fp32) = add(x=%e, y=%one)
       %h: (fp32)* = const(val=0.5)
       %m: (2, 3, fp32) = mul(x=%a, y=%h)
       %y: (2, 3, fp32) = mul(x=%m, y=%x)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %y: (2, 3, fp32) = gelu(x=%x, mode="EXACT")
     } -> (%y)

   Fires on: d = real_div(x, c) with c ~ sqrt(2), or mul(x, c) with c ~ 2^-0.5
   (either operand order), then e = erf(d), a = add(e, 1) (either order), and
   one of the three arrangements of the last two muls (each in either operand
   order):
     1. mul(mul(a, 0.5), x)
     2. mul(mul(a, x), 0.5)
     3. mul(a, mul(x, 0.5))
   Every intermediate value has exactly one use, by the next op of the
   pattern (so none is a block output; in arrangement 3 this includes
   mul(x, 0.5), which the reference does not check and then fails to
   remove); x is float. The last mul's output is replaced by gelu(x,
   mode="EXACT") named after it, built in its place; the matched ops are
   erased with the constants only they read. Constants are one-element
   tensors (any rank not above the other operand's, so none broadcasts),
   equal to the wanted value within 1e-3 (absolute, as the reference) or
   equal to it rounded to their dtype (fp16 / bf16 constants).
   Must not fire: an intermediate with another use or that is a block
   output; a constant off by 1e-3 or more; a constant that is not a scalar
   or would broadcast x; a non-float x; a gelu the program's target refuses
   (mgopt_program_target_accepts), or whose type does not fit the replaced
   value's declared type.
   Cost: worklist patterns rooted at mul, O(muls). */

#define MGOPT__FGE_TOL 1e-3

/* a = add(erf(x / sqrt(2)), 1) with single-use intermediates: x, and the
   matched ops in ops[0..3) (add, erf, div), else NULL. */
static mgopt_value *mgopt__fge_erf_part(mgopt_value *a, mgopt_op **ops) {
  mgopt_op *add = mgopt__pu_single_use(a) ? mgopt__pu_def_of(a, MGOPT_OP_add) : NULL, *erf, *div;
  mgopt_value *e, *d, *x;
  if (!add || !(e = mgopt__pu_with_scalar(add, MGOPT_OP_add, 1.0, MGOPT__FGE_TOL))) return NULL;
  if (!mgopt__pu_single_use(e) || !(erf = mgopt__pu_def_of(e, MGOPT_OP_erf))) return NULL;
  d = mgopt_op_operand(erf, "x");
  if (!d || !mgopt__pu_single_use(d) || !d->def) return NULL;
  div = d->def;
  x = mgopt__pu_with_scalar(div, MGOPT_OP_real_div, sqrt(2.0), MGOPT__FGE_TOL);
  if (!x) x = mgopt__pu_with_scalar(div, MGOPT_OP_mul, sqrt(0.5), MGOPT__FGE_TOL);
  if (!x || !mgopt_dtype_is_float((mgopt_dtype)x->type.dtype)) return NULL;
  ops[0] = add;
  ops[1] = erf;
  ops[2] = div;
  return x;
}

/* The operand of m other than v (v must be one of them), or NULL. */
static mgopt_value *mgopt__fge_other(const mgopt_op *m, const mgopt_value *v) {
  mgopt_value *a = mgopt_op_operand(m, "x"), *b = mgopt_op_operand(m, "y");
  if (!a || !b) return NULL;
  return a == v ? b : b == v ? a : NULL;
}

/* last = mul(p, q) in one of the three arrangements: x, with ops[0] the
   other mul and ops[1..4) the erf part, else NULL. */
static mgopt_value *mgopt__fge_match(mgopt_op *last, mgopt_value *p, mgopt_value *q, mgopt_op **ops) {
  mgopt_op *m = mgopt__pu_single_use(p) ? mgopt__pu_def_of(p, MGOPT_OP_mul) : NULL;
  mgopt_value *a, *x;
  int k;
  if (m) {
    /* 1. mul(mul(a, 0.5), x) */
    a = mgopt__pu_with_scalar(m, MGOPT_OP_mul, 0.5, MGOPT__FGE_TOL);
    if (a && (x = mgopt__fge_erf_part(a, ops + 1)) != NULL && x == q) {
      ops[0] = m;
      return x;
    }
    /* 2. mul(mul(a, x), 0.5) */
    if (mgopt__pu_with_scalar(last, MGOPT_OP_mul, 0.5, MGOPT__FGE_TOL) == p)
      for (k = 0; k < 2; k++) {
        a = mgopt_op_operand(m, k ? "y" : "x");
        if (a && (x = mgopt__fge_erf_part(a, ops + 1)) != NULL && mgopt__fge_other(m, a) == x) {
          ops[0] = m;
          return x;
        }
      }
  }
  /* 3. mul(a, mul(x, 0.5)) */
  m = mgopt__pu_single_use(q) ? mgopt__pu_def_of(q, MGOPT_OP_mul) : NULL;
  if (m && (x = mgopt__fge_erf_part(p, ops + 1)) != NULL &&
      mgopt__pu_with_scalar(m, MGOPT_OP_mul, 0.5, MGOPT__FGE_TOL) == x) {
    ops[0] = m;
    return x;
  }
  return NULL;
}

static int mgopt__fge_fuse(mgopt_rewriter *rw, mgopt_op *last, void *ud) {
  static const char *const xs[1] = {"x"};
  mgopt_op *ops[4], *gelu;
  mgopt_value *a = mgopt_op_operand(last, "x"), *b = mgopt_op_operand(last, "y"), *x;
  MGOPT__UNUSED(ud);
  if (last->nouts != 1 || !a || !b) return 0;
  x = mgopt__fge_match(last, a, b, ops);
  if (!x) x = mgopt__fge_match(last, b, a, ops);
  if (!x) return 0;
  gelu = mgopt_rw_create(rw, last, "gelu", mgopt__pu_value_name(last->outs[0]), 1, xs, &x, 1);
  if (!gelu) return 0;
  if (mgopt_op_set_string(gelu, "mode", "EXACT") != MGOPT_OK) {
    mgopt_rw_erase(rw, gelu);
    return 0;
  }
  return mgopt__pu_fuse_finish(rw, &gelu, 1, last, ops, 4);
}

static const mgopt_pattern mgopt__fge_patterns[] = {
    {"gelu_exact", MGOPT_OP_mul, NULL, 1, mgopt__fge_fuse, NULL},
};

/* the patterns match only where one of these is */
static const int32_t mgopt__fge_needs[] = {MGOPT_OP_erf};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(fusion, common, fuse_gelu_exact,
                                   "0.5 * x * (1 + erf(x / sqrt(2))) in any of its three arrangements becomes gelu (EXACT)",
                                   mgopt__fge_patterns, mgopt__fge_needs);
/* src/passes/fusion/fuse_gelu_tanh_approximation.c — common::fuse_gelu_tanh_approximation: the tanh form of gelu becomes gelu(x, mode=TANH_APPROXIMATION).

   Spec: mil_graph_passes.txt, "the tanh approximate version of gelu"
   (get_gelu_pattern1, get_gelu_pattern2); reference §3.12.

   Before:
     main(%x: (2, 3, fp32)) {
       %three: (fp32)* = const(val=3.0)
       %p: (2, 3, fp32) = pow(x=%x, y=%three)
       %k: (fp32)* = const(val=0.044715)
       %m1: (2, 3, fp32) = mul(x=%k, y=%p)
       %s: (2, 3, fp32) = add(x=%x, y=%m1)
       %r: (fp32)* = const(val=0.7978846)
       %m2: (2, 3, fp32) = mul(x=%r, y=%s)
       %t: (2, 3, fp32) = tanh(x=%m2)
       %one: (fp32)* = const(val=1.0)
       %a: (2, 3, fp32) = add(x=%one, y=%t)
       %h: (fp32)* = const(val=0.5)
       %m: (2, 3, fp32) = mul(x=%h, y=%a)
       %y: (2, 3, fp32) = mul(x=%m, y=%x)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %y: (2, 3, fp32) = gelu(x=%x, mode="TANH_APPROXIMATION")
     } -> (%y)

   Fires on: a = add(tanh(mul(add(x, mul(pow(x, 3), 0.044715)), 0.79788)), 1)
   and then either
     1. mul(mul(a, 0.5), x), or
     2. mul(mul(x, 0.5), a),
   every add and mul in either operand order (pow(x, 3) has its exponent in
   y). Every intermediate value has exactly one use, by the next op of the
   pattern (so none is a block output); the three reads of x are the same
   value, which may have other users (the reference's matcher asks x for
   exactly the pattern's three users; only the pattern's dataflow matters
   here, and it is checked edge by edge, where the reference's matcher
   checks child counts and op kinds); x is float. The last mul's output is
   replaced by gelu(x, mode="TANH_APPROXIMATION") named after it; the
   matched ops are erased with the constants only they read. Constants are
   one-element tensors not broadcasting the other operand, within 1e-3
   (absolute, as the reference) of 0.5, 3, 0.044715, 0.79788 (sqrt(2/pi))
   and 1, or equal to the value rounded to their dtype (fp16 / bf16).
   Must not fire: an intermediate with another use or that is a block
   output; a constant off by 1e-3 or more, not a scalar, or broadcasting x;
   a pattern whose reads of x are different values; a non-float x; a gelu
   the program's target refuses (mgopt_program_target_accepts), or whose
   type does not fit the replaced value's declared type.
   Cost: worklist patterns rooted at mul, O(muls). */

#define MGOPT__FGT_TOL 1e-3

/* the def of v when it is of `kind` and v has a single use, else NULL */
static mgopt_op *mgopt__fgt_def1(mgopt_value *v, int32_t kind) {
  return v && mgopt__pu_single_use(v) ? mgopt__pu_def_of(v, kind) : NULL;
}

/* s = add(x, mul(pow(x, 3), 0.044715)): x, with the add, mul and pow in ops[0..3). */
static mgopt_value *mgopt__fgt_cubic(mgopt_value *s, mgopt_op **ops) {
  mgopt_op *add = mgopt__fgt_def1(s, MGOPT_OP_add);
  int side;
  if (!add) return NULL;
  for (side = 0; side < 2; side++) {
    mgopt_value *x = mgopt_op_operand(add, side ? "y" : "x"), *m1v = mgopt_op_operand(add, side ? "x" : "y");
    mgopt_op *m1 = mgopt__fgt_def1(m1v, MGOPT_OP_mul), *pw;
    mgopt_value *pv;
    if (!x || !m1 || !(pv = mgopt__pu_with_scalar(m1, MGOPT_OP_mul, 0.044715, MGOPT__FGT_TOL))) continue;
    pw = mgopt__fgt_def1(pv, MGOPT_OP_pow);
    if (!pw || mgopt__pu_with_scalar(pw, MGOPT_OP_pow, 3.0, MGOPT__FGT_TOL) != x) continue;
    ops[0] = add;
    ops[1] = m1;
    ops[2] = pw;
    return x;
  }
  return NULL;
}

/* a = add(tanh(mul(s, 0.79788)), 1) with s the cubic part: x, with the
   six matched ops in ops[0..6) (consumers first). */
static mgopt_value *mgopt__fgt_tanh_part(mgopt_value *a, mgopt_op **ops) {
  mgopt_op *add1 = mgopt__fgt_def1(a, MGOPT_OP_add), *th, *m2;
  mgopt_value *t, *s, *x;
  if (!add1 || !(t = mgopt__pu_with_scalar(add1, MGOPT_OP_add, 1.0, MGOPT__FGT_TOL))) return NULL;
  if (!(th = mgopt__fgt_def1(t, MGOPT_OP_tanh))) return NULL;
  if (!(m2 = mgopt__fgt_def1(mgopt_op_operand(th, "x"), MGOPT_OP_mul))) return NULL;
  if (!(s = mgopt__pu_with_scalar(m2, MGOPT_OP_mul, sqrt(2.0 / 3.14159265358979323846), MGOPT__FGT_TOL)))
    return NULL;
  if (!(x = mgopt__fgt_cubic(s, ops + 3)) || !mgopt_dtype_is_float((mgopt_dtype)x->type.dtype)) return NULL;
  ops[0] = add1;
  ops[1] = th;
  ops[2] = m2;
  return x;
}

/* last = mul(p, q) in pattern 1 or 2: x, with the seven matched ops other
   than last in ops[0..7) (consumers first). */
static mgopt_value *mgopt__fgt_match(mgopt_value *p, mgopt_value *q, mgopt_op **ops) {
  mgopt_op *m = mgopt__fgt_def1(p, MGOPT_OP_mul);
  mgopt_value *a, *x;
  if (!m || !(a = mgopt__pu_with_scalar(m, MGOPT_OP_mul, 0.5, MGOPT__FGT_TOL))) return NULL;
  ops[0] = m;
  /* 1. mul(mul(a, 0.5), x) */
  if ((x = mgopt__fgt_tanh_part(a, ops + 1)) != NULL && x == q) return x;
  /* 2. mul(mul(x, 0.5), a) */
  if ((x = mgopt__fgt_tanh_part(q, ops + 1)) != NULL && x == a) return x;
  return NULL;
}

static int mgopt__fgt_fuse(mgopt_rewriter *rw, mgopt_op *last, void *ud) {
  static const char *const xs[1] = {"x"};
  mgopt_op *ops[7], *gelu;
  mgopt_value *a = mgopt_op_operand(last, "x"), *b = mgopt_op_operand(last, "y"), *x;
  MGOPT__UNUSED(ud);
  if (last->nouts != 1 || !a || !b) return 0;
  x = mgopt__fgt_match(a, b, ops);
  if (!x) x = mgopt__fgt_match(b, a, ops);
  if (!x) return 0;
  gelu = mgopt_rw_create(rw, last, "gelu", mgopt__pu_value_name(last->outs[0]), 1, xs, &x, 1);
  if (!gelu) return 0;
  if (mgopt_op_set_string(gelu, "mode", "TANH_APPROXIMATION") != MGOPT_OK) {
    mgopt_rw_erase(rw, gelu);
    return 0;
  }
  return mgopt__pu_fuse_finish(rw, &gelu, 1, last, ops, 7);
}

static const mgopt_pattern mgopt__fgt_patterns[] = {
    {"gelu_tanh_approximation", MGOPT_OP_mul, NULL, 1, mgopt__fgt_fuse, NULL},
};

/* the patterns match only where one of these is */
static const int32_t mgopt__fgt_needs[] = {MGOPT_OP_tanh};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(fusion, common, fuse_gelu_tanh_approximation,
                                   "the tanh approximation of gelu, in both arrangements, becomes gelu (TANH_APPROXIMATION)",
                                   mgopt__fgt_patterns, mgopt__fgt_needs);
/* src/passes/fusion/fuse_gelu_sigmoid_approximation.c — common::fuse_gelu_sigmoid_approximation: x * sigmoid(1.702 * x) becomes gelu(x, mode=SIGMOID_APPROXIMATION).

   Spec: reference §3.13 (coremltools' optimize_gelu_sigmoid).

   Before:
     main(%x: (2, 3, fp32)) {
       %k: (fp32)* = const(val=1.702)
       %s: (2, 3, fp32) = mul(x=%x, y=%k)
       %g: (2, 3, fp32) = sigmoid(x=%s)
       %y: (2, 3, fp32) = mul(x=%x, y=%g)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %y: (2, 3, fp32) = gelu(x=%x, mode="SIGMOID_APPROXIMATION")
     } -> (%y)

   Fires on: mul(x, sigmoid(mul(x, c))), each mul in either operand order,
   with c a one-element constant not broadcasting x and within 0.01 of 1.702
   (absolute, as the reference) or equal to 1.702 rounded to its dtype; the
   sigmoid's output and the inner mul's output each have exactly one use,
   by the next op of the pattern (the reference checks only that they are
   not block outputs, and then fails to remove them when something else
   reads them); x is float and may have other users. The outer mul's output
   is replaced by gelu(x, mode="SIGMOID_APPROXIMATION") named after it; the
   sigmoid and inner mul are erased with the constant only they read.
   Must not fire: the sigmoid or the inner mul with another use or that is
   a block output; the outer mul's other operand not the inner mul's x; a
   constant off by 0.01 or more, not a scalar, or broadcasting x; a
   non-float x; a gelu the program's target refuses
   (mgopt_program_target_accepts), or whose type does not fit the replaced
   value's declared type.
   Cost: worklist patterns rooted at mul, O(muls). */

static int mgopt__fgs_fuse(mgopt_rewriter *rw, mgopt_op *last, void *ud) {
  static const char *const xs[1] = {"x"};
  mgopt_op *ops[2], *gelu;
  mgopt_value *x = NULL;
  int side;
  MGOPT__UNUSED(ud);
  if (last->nouts != 1) return 0;
  for (side = 0; side < 2 && !x; side++) {
    mgopt_value *g = mgopt_op_operand(last, side ? "y" : "x"), *r = mgopt_op_operand(last, side ? "x" : "y");
    mgopt_op *sig = g && mgopt__pu_single_use(g) ? mgopt__pu_def_of(g, MGOPT_OP_sigmoid) : NULL;
    mgopt_value *s = sig ? mgopt_op_operand(sig, "x") : NULL;
    mgopt_op *m = s && mgopt__pu_single_use(s) ? mgopt__pu_def_of(s, MGOPT_OP_mul) : NULL;
    if (!m || !r || mgopt__pu_with_scalar(m, MGOPT_OP_mul, 1.702, 0.01) != r) continue;
    if (!mgopt_dtype_is_float((mgopt_dtype)r->type.dtype)) continue;
    ops[0] = sig;
    ops[1] = m;
    x = r;
  }
  if (!x) return 0;
  gelu = mgopt_rw_create(rw, last, "gelu", mgopt__pu_value_name(last->outs[0]), 1, xs, &x, 1);
  if (!gelu) return 0;
  if (mgopt_op_set_string(gelu, "mode", "SIGMOID_APPROXIMATION") != MGOPT_OK) {
    mgopt_rw_erase(rw, gelu);
    return 0;
  }
  return mgopt__pu_fuse_finish(rw, &gelu, 1, last, ops, 2);
}

static const mgopt_pattern mgopt__fgs_patterns[] = {
    {"gelu_sigmoid_approximation", MGOPT_OP_mul, NULL, 1, mgopt__fgs_fuse, NULL},
};

/* the patterns match only where one of these is */
static const int32_t mgopt__fgs_needs[] = {MGOPT_OP_sigmoid};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(fusion, common, fuse_gelu_sigmoid_approximation,
                                   "x * sigmoid(1.702 * x) becomes gelu (SIGMOID_APPROXIMATION)", mgopt__fgs_patterns, mgopt__fgs_needs);
/* src/passes/fusion/fuse_leaky_relu.c — common::fuse_leaky_relu: maximum(x, alpha * x) with 0 <= alpha <= 1 becomes leaky_relu(x, alpha).

   Spec: mil_graph_passes.txt, "Detect the mul —> max pattern than can be
   mapped to leaky_relu"; reference §3.14.

   Before:
     main(%x: (2, 3, fp32)) {
       %a: (fp32)* = const(val=0.25)
       %m: (2, 3, fp32) = mul(x=%x, y=%a)
       %y: (2, 3, fp32) = maximum(x=%m, y=%x)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %y: (2, 3, fp32) = leaky_relu(x=%x, alpha=0.25)
     } -> (%y)

   Fires on: maximum(mul(x, alpha), x), the maximum and the mul each in
   either operand order, where alpha is a one-element constant (any rank not
   above x's, so it does not broadcast x) with 0 <= alpha <= 1 (inclusive, as
   the reference; for such alpha, max(x, alpha * x) is x for x >= 0 and
   alpha * x below), the mul's output has exactly one use (the maximum), and
   x is float and may have other users. The maximum's output is replaced by
   leaky_relu(x, alpha) named after it, alpha the constant's value exactly;
   the mul is erased with the constant if only it read it.
   Must not fire: alpha outside [0, 1] (1.3, -0.1) or NaN; alpha not a
   constant, not one element, or broadcasting x; the mul with another use or
   that is a block output; the maximum's other operand not the mul's x; a
   non-float x; a leaky_relu the program's target refuses
   (mgopt_program_target_accepts), or whose type does not fit the replaced
   value's declared type.
   Cost: worklist patterns rooted at maximum, O(maximums). */

static int mgopt__flr_fuse(mgopt_rewriter *rw, mgopt_op *mx, void *ud) {
  static const char *const xs[1] = {"x"};
  mgopt_op *mul = NULL, *lr;
  mgopt_value *x = NULL;
  double alpha = 0;
  int side;
  MGOPT__UNUSED(ud);
  if (mx->nouts != 1) return 0;
  for (side = 0; side < 2 && !x; side++) {
    mgopt_value *m = mgopt_op_operand(mx, side ? "y" : "x"), *r = mgopt_op_operand(mx, side ? "x" : "y"), *o, *c;
    mul = m && mgopt__pu_single_use(m) ? mgopt__pu_def_of(m, MGOPT_OP_mul) : NULL;
    if (!mul || mul->nouts != 1 || !(c = mgopt__pu_scalar_operand(mul, &o)) || o != r) continue;
    if (!mgopt_dtype_is_float((mgopt_dtype)r->type.dtype)) continue;
    alpha = mgopt_tensor_get_f64(mgopt_value_const(c), 0);
    if (alpha >= 0.0 && alpha <= 1.0) x = r;
  }
  if (!x) return 0;
  lr = mgopt_rw_create(rw, mx, "leaky_relu", mgopt__pu_value_name(mx->outs[0]), 1, xs, &x, 1);
  if (!lr) return 0;
  if (mgopt_op_set_float(lr, "alpha", alpha) != MGOPT_OK) {
    mgopt_rw_erase(rw, lr);
    return 0;
  }
  return mgopt__pu_fuse_finish(rw, &lr, 1, mx, &mul, 1);
}

static const mgopt_pattern mgopt__flr_patterns[] = {
    {"leaky_relu", MGOPT_OP_maximum, NULL, 1, mgopt__flr_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_leaky_relu,
                           "maximum(x, alpha * x) with 0 <= alpha <= 1 becomes leaky_relu", mgopt__flr_patterns);
/* src/passes/fusion/fuse_prelu.c — common::fuse_prelu: relu(x) + a * relu(-x) becomes prelu(x, alpha=-a), also behind an NCHW-to-NHWC transpose.

   Spec: mil_graph_passes.txt, "Detect the following patterns that can be
   mapped to a prelu op" (Pattern 1, Pattern 2); reference §3.15.

   Before:
     main(%x: (1, 3, 4, 4, fp32)) {
       %m1: (fp32)* = const(val=-1.0)
       %n: (1, 3, 4, 4, fp32) = mul(x=%x, y=%m1)
       %r1: (1, 3, 4, 4, fp32) = relu(x=%n)
       %a: (3, 1, 1, fp32)* = const(val=[[[0.5]], [[0.25]], [[-1.0]]])
       %am: (1, 3, 4, 4, fp32) = mul(x=%r1, y=%a)
       %r2: (1, 3, 4, 4, fp32) = relu(x=%x)
       %y: (1, 3, 4, 4, fp32) = add(x=%r2, y=%am)
     } -> (%y)
   After:
     main(%x: (1, 3, 4, 4, fp32)) {
       %y_alpha: (3, fp32)* = const(val=[-0.5, -0.25, 1])
       %y: (1, 3, 4, 4, fp32) = prelu(x=%x, alpha=%y_alpha)
     } -> (%y)

   Fires on: add(relu(x), mul(relu(mul(x, -1)), a)), every add and mul in
   either operand order, where the neg constant is one element within 1e-3
   of -1 (absolute, as the reference, or -1 in its dtype) not broadcasting
   x, a is a constant of finite values, x is float, and the two relus, the
   neg mul and the alpha mul each have exactly one use (the next op of the
   pattern); x may have other users. For x < 0 the sum is (-a) * x, for
   x >= 0 it is x: prelu with alpha = -a.
     1. x of rank 4 (N, C, H, W) with C static, a of rank 3 or 4 holding its
        elements along axis -3 ((C, 1, 1) or (1, C, 1, 1)): prelu(x,
        alpha=-a flattened), named after the add's output.
     2. x = transpose(x0, perm=[0, 2, 3, 1]) (NCHW to NHWC), x0 with C
        static, a of rank 1 to 4 holding its elements along axis -1 ((C,),
        (1, C), (1, 1, C), (1, 1, 1, C)): prelu(x0, alpha=-a flattened) then
        transpose(perm=[0, 2, 3, 1]) named after the add's output; the
        original transpose goes when nothing else reads it.
   Pattern 1 is tried first (it holds for any rank-4 x). a may hold C
   elements, or one (it then broadcasts over every channel: alpha is that
   value C times). alpha keeps a's dtype (fp16 stays fp16); negation is
   exact. The matched ops are erased with the constants only they read.
   Must not fire: a relu, neg or alpha mul with another use or that is a
   block output; a neg constant other than -1; a non-constant a, or one
   with non-finite values, or with a number of elements other than C or 1,
   or laid out along another axis; x of another rank; a symbolic channel
   count; a transpose with another perm; a non-float x; a prelu the
   program's target refuses (mgopt_program_target_accepts), or a result
   whose type does not fit the add's declared type.
   Cost: worklist patterns rooted at add, O(adds + alpha elements). */

/* the def of v when it is of `kind` and v has a single use, else NULL */
static mgopt_op *mgopt__fpr_def1(mgopt_value *v, int32_t kind) {
  return v && mgopt__pu_single_use(v) ? mgopt__pu_def_of(v, kind) : NULL;
}

/* The pattern's parts, from the add. */
typedef struct mgopt__fpr_match {
  mgopt_value *x;      /* the relus' common input */
  mgopt_value *a;      /* the alpha constant */
  mgopt_op *ops[5];    /* alpha mul, relu(-x), neg mul, relu(x), [the transpose]: consumers first */
} mgopt__fpr_match;

static int mgopt__fpr_find(mgopt_op *add, mgopt__fpr_match *m) {
  int side, k;
  for (side = 0; side < 2; side++) {
    mgopt_op *r2 = mgopt__fpr_def1(mgopt_op_operand(add, side ? "y" : "x"), MGOPT_OP_relu);
    mgopt_op *am = mgopt__fpr_def1(mgopt_op_operand(add, side ? "x" : "y"), MGOPT_OP_mul);
    if (!r2 || !am || am->nouts != 1) continue;
    for (k = 0; k < 2; k++) {
      mgopt_value *a = mgopt_op_operand(am, k ? "x" : "y");
      mgopt_op *r1 = mgopt__fpr_def1(mgopt_op_operand(am, k ? "y" : "x"), MGOPT_OP_relu), *neg;
      mgopt_value *x;
      if (!a || !mgopt_value_const(a) || !r1) continue;
      neg = mgopt__fpr_def1(mgopt_op_operand(r1, "x"), MGOPT_OP_mul);
      x = neg ? mgopt__pu_with_scalar(neg, MGOPT_OP_mul, -1.0, 1e-3) : NULL;
      if (!x || x != mgopt_op_operand(r2, "x") || !mgopt_dtype_is_float((mgopt_dtype)x->type.dtype)) continue;
      m->x = x;
      m->a = a;
      m->ops[0] = am;
      m->ops[1] = r1;
      m->ops[2] = neg;
      m->ops[3] = r2;
      return 1;
    }
  }
  return 0;
}

/* The static channel count dims[axis] of a rank-4 value, or -1. */
static int64_t mgopt__fpr_channels(const mgopt_value *v, int32_t axis) {
  if (v->type.kind != MGOPT_TYPE_TENSOR || v->type.rank != 4) return -1;
  if (v->type.dims[axis].sym || v->type.dims[axis].v < 0) return -1;
  return v->type.dims[axis].v;
}

/* 1 when the rank-4 transpose t moves NCHW to NHWC (perm [0, 2, 3, 1]). */
static int mgopt__fpr_to_nhwc(mgopt_program *p, const mgopt_op *t) {
  static const int64_t want[4] = {0, 2, 3, 1};
  const int64_t *perm = NULL;
  int32_t i;
  if (mgopt_op_get_ints(p, t, "perm", &perm) != 4) return 0;
  for (i = 0; i < 4; i++)
    if (mgopt__pu_norm_axis(perm[i], 4) != want[i]) return 0;
  return 1;
}

/* alpha = -a flattened to c elements (a holds c elements or one), in a's
   dtype; NULL when a has a non-finite value or on OOM. */
static mgopt_tensor *mgopt__fpr_alpha(mgopt_program *p, const mgopt_tensor *a, int64_t c) {
  mgopt_tensor *t = mgopt_tensor_new(p, (mgopt_dtype)a->dtype, 1, &c);
  int64_t i;
  if (!t) return NULL;
  for (i = 0; i < c; i++) {
    double v = mgopt_tensor_get_f64(a, a->numel == 1 ? 0 : i);
    if (!isfinite(v)) return NULL;
    mgopt_tensor_set_f64(t, i, -v);
  }
  return t;
}

static int mgopt__fpr_fuse(mgopt_rewriter *rw, mgopt_op *add, void *ud) {
  static const char *const slots[2] = {"x", "alpha"};
  static const int64_t perm[4] = {0, 2, 3, 1};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt__fpr_match m;
  const mgopt_tensor *a;
  mgopt_op *tr = NULL, *made[2];
  mgopt_value *ins[2];
  mgopt_tensor *alpha;
  const char *name, *pname;
  int64_t c = -1;
  int32_t nmatched = 4;
  MGOPT__UNUSED(ud);
  if (add->nouts != 1 || !mgopt__fpr_find(add, &m)) return 0;
  a = mgopt_value_const(m.a);
  /* 1. NCHW: a laid out along axis -3 */
  if ((a->rank == 3 || a->rank == 4) && a->numel == a->shape[a->rank - 3]) c = mgopt__fpr_channels(m.x, 1);
  if (c < 0 || (a->numel != c && a->numel != 1)) {
    /* 2. NHWC behind transpose(perm=[0, 2, 3, 1]): a laid out along axis -1 */
    tr = mgopt__pu_def_of(m.x, MGOPT_OP_transpose);
    c = -1;
    if (tr && tr->nouts == 1 && a->rank >= 1 && a->rank <= 4 && a->numel == a->shape[a->rank - 1] &&
        mgopt_op_operand(tr, "x") && mgopt__fpr_to_nhwc(p, tr))
      c = mgopt__fpr_channels(mgopt_op_operand(tr, "x"), 1);
    if (c < 0 || (a->numel != c && a->numel != 1)) return 0;
    m.x = mgopt_op_operand(tr, "x");
  }
  if (!(alpha = mgopt__fpr_alpha(p, a, c))) return 0;
  name = mgopt__pu_value_name(add->outs[0]);
  pname = tr ? mgopt__pu_name2(p, name, "_prelu") : name;
  ins[0] = m.x;
  ins[1] = mgopt_rw_const(rw, add, mgopt__pu_name2(p, pname, "_alpha"), alpha);
  if (!ins[1]) return 0;
  made[0] = mgopt_rw_create(rw, add, "prelu", pname, 2, slots, ins, 1);
  if (!made[0]) {
    mgopt__pu_erase_if_dead(rw, ins[1]->def);
    return 0;
  }
  if (tr) {
    made[1] = mgopt_rw_create(rw, add, "transpose", name, 1, slots, made[0]->outs, 1);
    if (!made[1] || mgopt_op_set_ints(made[1], "perm", perm, 4) != MGOPT_OK) {
      if (made[1]) mgopt_rw_erase(rw, made[1]);
      mgopt__pu_erase_with_consts(rw, made[0]);
      return 0;
    }
    m.ops[nmatched++] = tr;
  }
  return mgopt__pu_fuse_finish(rw, made, tr ? 2 : 1, add, m.ops, nmatched);
}

static const mgopt_pattern mgopt__fpr_patterns[] = {
    {"prelu", MGOPT_OP_add, NULL, 1, mgopt__fpr_fuse, NULL},
};

/* the patterns match only where one of these is */
static const int32_t mgopt__fpr_needs[] = {MGOPT_OP_relu};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(fusion, common, fuse_prelu,
                                   "relu(x) + a * relu(-x) becomes prelu(x, -a), also behind an NCHW-to-NHWC transpose",
                                   mgopt__fpr_patterns, mgopt__fpr_needs);
/* src/passes/fusion/prelu_to_lrelu.c — common::prelu_to_lrelu: a prelu whose alpha values are all equal becomes leaky_relu.

   Spec: mil_graph_passes.txt, "If prelu has the same leakage factor across
   all channels, it will be converted to leaky_relu"; reference §3.15.

   Before:
     main(%x: (1, 3, 4, 4, fp32)) {
       %al: (3, fp32)* = const(val=[0.25, 0.25, 0.25])
       %y: (1, 3, 4, 4, fp32) = prelu(x=%x, alpha=%al)
     } -> (%y)
   After:
     main(%x: (1, 3, 4, 4, fp32)) {
       %y: (1, 3, 4, 4, fp32) = leaky_relu(x=%x, alpha=0.25)
     } -> (%y)

   Fires on: prelu whose alpha is a constant of at least one element, all
   equal (compared by value: -0 equals 0, a NaN equals nothing). The prelu's
   output is replaced by leaky_relu(x, alpha=alpha[0]) named after it
   (alpha[0]'s exact value: an fp16 alpha keeps its fp16 value); the prelu is
   erased, with its alpha constant when only it read it.
   Must not fire: alpha values that differ; a NaN alpha; alpha not a
   constant; a leaky_relu the program's target refuses
   (mgopt_program_target_accepts).
   Cost: worklist patterns rooted at prelu, O(prelus + alpha elements). */

static int mgopt__p2l_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const xs[1] = {"x"};
  mgopt_value *x = mgopt_op_operand(op, "x"), *av = mgopt_op_operand(op, "alpha");
  const mgopt_tensor *a = av ? mgopt_value_const(av) : NULL;
  mgopt_op *lr;
  double a0;
  int64_t i;
  MGOPT__UNUSED(ud);
  if (!x || !a || a->numel < 1 || op->nouts != 1) return 0;
  if (!mgopt_dtype_is_float((mgopt_dtype)a->dtype)) return 0;
  a0 = mgopt_tensor_get_f64(a, 0);
  for (i = 0; i < a->numel; i++)
    if (!(mgopt_tensor_get_f64(a, i) == a0)) return 0;
  lr = mgopt_rw_create(rw, op, "leaky_relu", mgopt__pu_value_name(op->outs[0]), 1, xs, &x, 1);
  if (!lr) return 0;
  if (mgopt_op_set_float(lr, "alpha", a0) != MGOPT_OK) {
    mgopt_rw_erase(rw, lr);
    return 0;
  }
  return mgopt__pu_fuse_finish(rw, &lr, 1, op, NULL, 0);
}

static const mgopt_pattern mgopt__p2l_patterns[] = {
    {"prelu_to_lrelu", MGOPT_OP_prelu, NULL, 1, mgopt__p2l_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, prelu_to_lrelu, "a prelu whose alpha values are all equal becomes leaky_relu",
                           mgopt__p2l_patterns);
/* src/passes/fusion/fuse_reduce_mean.c — common::fuse_reduce_mean: reduce_sum times 1/count (or divided by count) becomes reduce_mean.

   Spec: mil_graph_passes.txt, "Detect the reduce_sum —> mul/real_div
   pattern than can be mapped to reduce_mean"; reference §3.16.

   Before:
     main(%x: (3, 5, 6, fp32)) {
       %s: (3, fp32) = reduce_sum(x=%x, axes=[1, -1], keep_dims=false)
       %c: (fp32)* = const(val=0.033333335)
       %y: (3, fp32) = mul(x=%s, y=%c)
     } -> (%y)
   After:
     main(%x: (3, 5, 6, fp32)) {
       %y: (3, fp32) = reduce_mean(x=%x, axes=[1, -1], keep_dims=false)
     } -> (%y)

   Fires on: s = reduce_sum(x, axes) with axes constant, non-empty, each in
   range and none repeated, every reduced dim of x static and count, their
   product, nonzero; s has exactly one use, either
     mul(s, c) in either operand order with c ~ 1/count (|c - 1/count| <
       1e-6, the reference's tolerance), or
     real_div(s, c) with c ~ count (|c - count| < 1e-2, the reference's),
   c a one-element constant not broadcasting s (its rank at most s's), or
   equal to 1/count (count) rounded to its dtype (an fp16 1/49 is 1.5e-5
   off 1/49 yet is the fp16 value of it). x is float. The mul/real_div's
   output is replaced by reduce_mean with the reduce_sum's parameters as
   written (axes, keep_dims), named after it; the reduce_sum and the
   constant only they read are erased.
   Must not fire: no axes, empty axes, repeated axes; a symbolic, unknown or
   zero reduced dim; a reduce_sum with another use or that is a block
   output; a constant off (the reference's tests: 5.0 and 31.0 for a count
   of 30), not a constant, or broadcasting; real_div(c, s); a non-float x;
   a reduce_mean the program's target refuses (mgopt_program_target_accepts),
   or whose type does not fit the replaced value's declared type.
   Cost: worklist patterns rooted at reduce_sum, O(reduce_sums x rank). */

/* The number of elements each output of reduce_sum op sums, or 0 when it
   is not known statically (or the axes are not usable). */
static double mgopt__frm_count(mgopt_program *p, const mgopt_op *op, const mgopt_value *x) {
  const int64_t *axes = NULL;
  int64_t n = mgopt_op_get_ints(p, op, "axes", &axes), i, j, r = x->type.rank;
  double count = 1;
  if (n <= 0 || r < 0 || (mgopt_op_operand(op, "axes") && !mgopt_value_const(mgopt_op_operand(op, "axes")))) return 0;
  for (i = 0; i < n; i++) {
    int64_t a = mgopt__pu_norm_axis(axes[i], r);
    const mgopt_dim *d;
    if (a < 0) return 0;
    for (j = 0; j < i; j++)
      if (mgopt__pu_norm_axis(axes[j], r) == a) return 0;
    d = &x->type.dims[a];
    if (d->sym || d->v <= 0) return 0;
    count *= (double)d->v;
  }
  return count;
}

static int mgopt__frm_fuse(mgopt_rewriter *rw, mgopt_op *sum, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(sum, "x"), *s, *kd, *vals[4];
  const char *names[4];
  mgopt_op *child, *mean;
  double count;
  int32_t i, n = 0;
  MGOPT__UNUSED(ud);
  if (!x || sum->nouts != 1 || !mgopt_dtype_is_float((mgopt_dtype)x->type.dtype)) return 0;
  s = sum->outs[0];
  if (!(child = mgopt__pu_single_user(s)) || child->nouts != 1) return 0;
  kd = mgopt_op_operand(sum, "keep_dims");
  if ((kd && !mgopt_value_const(kd)) || !(count = mgopt__frm_count(p, sum, x))) return 0;
  if (child->kind == MGOPT_OP_mul) {
    if (mgopt__pu_with_scalar(child, MGOPT_OP_mul, 1.0 / count, 1e-6) != s) return 0;
  } else if (child->kind == MGOPT_OP_real_div) {
    if (mgopt__pu_with_scalar(child, MGOPT_OP_real_div, count, 1e-2) != s) return 0;
  } else {
    return 0;
  }
  /* the reduce_sum's operands and attributes, as written */
  for (i = 0; i < sum->nslots; i++) {
    const mgopt_slot *sl = &sum->slots[i];
    if (sl->n == 0) continue;
    if (sl->is_list || sl->n != 1 || n == 4) return 0;
    names[n] = sl->name;
    vals[n++] = sl->uses[0].value;
  }
  mean = mgopt_rw_create(rw, child, "reduce_mean", mgopt__pu_value_name(child->outs[0]), n, names, vals, 1);
  if (!mean) return 0;
  for (i = 0; i < sum->nattrs; i++)
    if (mgopt_op_set_attr(mean, &sum->attrs[i]) != MGOPT_OK) {
      mgopt_rw_erase(rw, mean);
      return 0;
    }
  return mgopt__pu_fuse_finish(rw, &mean, 1, child, &sum, 1);
}

static const mgopt_pattern mgopt__frm_patterns[] = {
    {"reduce_mean", MGOPT_OP_reduce_sum, NULL, 1, mgopt__frm_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_reduce_mean,
                           "reduce_sum times 1/count, or divided by count, becomes reduce_mean", mgopt__frm_patterns);
/* src/passes/fusion/fuse_conv_batchnorm.c — common::fuse_conv_batchnorm: a batch_norm after a conv folds into its weight and bias.

   Spec: mil_graph_passes.txt, "Fuse the following batch_norm layer into conv
   and conv_transpose"; reference mil-passes.md §3.17 and §7.

   Before:
     main(%x: (1, 2, 3, fp32)) {
       %w: (2, 2, 1, fp32)* = const(val=[[[1], [2]], [[3], [4]]])
       %c: (1, 2, 3, fp32) = conv(x=%x, weight=%w)
       %m: (2, fp32)* = const(val=[1, 2])
       %v: (2, fp32)* = const(val=[4, 16])
       %g: (2, fp32)* = const(val=[2, 8])
       %be: (2, fp32)* = const(val=[0.5, 1])
       %y: (1, 2, 3, fp32) = batch_norm(x=%c, mean=%m, variance=%v, gamma=%g, beta=%be, epsilon=0.0)
     } -> (%y)
   After:
     main(%x: (1, 2, 3, fp32)) {
       %c_weight: (2, 2, 1, fp32)* = const(val=[[[1], [2]], [[6], [8]]])
       %c_bias: (2, fp32)* = const(val=[-0.5, -3])
       %y: (1, 2, 3, fp32) = conv(x=%x, weight=%c_weight, bias=%c_bias)
     } -> (%y)

   Fires on: a batch_norm whose x is the output of a conv or conv_transpose
   (mgopt__pw_conv_get: const float weight of rank >= 3, bias absent or a
   const of Cout elements) that has no other use and is not a block output;
   mean, variance and the gamma and beta present are consts of Cout elements
   (rank 1; gamma absent is 1, beta absent is 0). Per output channel o:
   s = gamma[o] / sqrt(variance[o] + epsilon), W'[o] = s·W[o],
   b'[o] = s·(b[o] − mean[o]) + beta[o]. Output channel o of a grouped
   conv_transpose (weight [Cin, Cout/g, ...]) is k·Cout/g + j for the slice
   W[k·Cin/g : (k+1)·Cin/g, j]: the reference pairs them wrongly when
   Cin/g > 1 and Cout/g > 1, this pass does not. The conv keeps its name and
   reads the new consts; the batch_norm and consts left unused are erased.
   Numeric contract: every W' and b' element is computed in double from the
   exact constant values and rounded once, to nearest even, to the weight's
   dtype (fp16 weights stay fp16, the bias takes the weight's dtype).
   Must not fire: the conv output has another use or is a block output; a
   weight, bias or batch_norm parameter that is not a const, a weight that is
   not float; a parameter of another size; a result that is not finite; the
   batch_norm's declared type does not suit its readers with the conv's
   (mgopt__pu_replace_fits).
   Cost: worklist patterns, O(batch_norms + weight elements). A weight an
   earlier fold made, read by this conv alone, is scaled in place
   (mgopt__pw_conv_scale): no new memory. */

static int mgopt__fcb_param(mgopt_program *p, const mgopt_op *bn, const char *slot, int64_t n, double dflt,
                            double *out) {
  mgopt_value *v = mgopt_op_operand(bn, slot);
  mgopt_tensor *t;
  int64_t i;
  if (!v) {
    for (i = 0; i < n; i++) out[i] = dflt;
    return 1;
  }
  t = mgopt__pu_def_of(v, MGOPT_OP_const) ? mgopt_value_const(v) : NULL;
  if (!t || t->rank != 1 || t->numel != n) return 0;
  return mgopt__pw_read_channels(p, t, n, out);
}

static int mgopt__fcb_fuse(mgopt_rewriter *rw, mgopt_op *bn, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(bn, "x");
  mgopt_op *conv = x ? x->def : NULL;
  mgopt__pw_conv c;
  double *mean, *var, *gamma, *beta, *b, eps = mgopt_op_get_float(bn, "epsilon", 1e-5);
  mgopt_tensor *nw, *nb;
  int64_t o, n;
  MGOPT__UNUSED(ud);
  if (!conv || bn->nouts != 1 || !mgopt__pu_single_use(x) || !mgopt__pw_conv_get(p, conv, &c)) return 0;
  if (mgopt__pu_is_block_output(x) || !mgopt__pu_replace_fits(p, bn->outs[0], x)) return 0;
  n = c.cout;
  mean = (double *)mgopt_program_alloc(p, sizeof(double) * 4 * (size_t)n, 8);
  if (!mean) return 0;
  var = mean + n;
  gamma = var + n;
  beta = gamma + n;
  if (!mgopt__fcb_param(p, bn, "mean", n, 0, mean) || !mgopt__fcb_param(p, bn, "variance", n, 0, var) ||
      !mgopt__fcb_param(p, bn, "gamma", n, 1, gamma) || !mgopt__fcb_param(p, bn, "beta", n, 0, beta) ||
      !mgopt_op_operand(bn, "mean") || !mgopt_op_operand(bn, "variance"))
    return 0;
  if (!(b = mgopt__pw_conv_bias(p, &c))) return 0;
  for (o = 0; o < n; o++) {
    double s = gamma[o] / sqrt(var[o] + eps);
    b[o] = s * (b[o] - mean[o]) + beta[o];
    gamma[o] = s; /* the scale, in place */
  }
  nb = mgopt__pw_vector(p, (mgopt_dtype)c.w->dtype, n, b);
  nw = nb ? mgopt__pw_conv_scale(p, &c, gamma) : NULL; /* last: it may scale in place */
  if (!nw || !mgopt__pw_conv_set(rw, conv, nw, nb)) return 0;
  mgopt__pu_replace_value(rw, bn->outs[0], x);
  mgopt__pu_erase_with_consts(rw, bn);
  return 1;
}

static const mgopt_pattern mgopt__fcb_patterns[] = {
    {"conv_batchnorm", MGOPT_OP_batch_norm, NULL, 1, mgopt__fcb_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_conv_batchnorm,
                           "fold a batch_norm after a conv or conv_transpose into its weight and bias",
                           mgopt__fcb_patterns);
/* src/passes/fusion/fuse_conv_bias.c — common::fuse_conv_bias: an add or sub of a constant after a conv (or its transpose) folds into its bias.

   Spec: mil_graph_passes.txt, "Fold add/sub into bias of conv and
   conv_transpose"; reference mil-passes.md §3.18.

   Before:
     main(%x: (1, 2, 3, fp32)) {
       %w: (2, 2, 1, fp32)* = const(val=[[[1], [2]], [[3], [4]]])
       %c: (1, 2, 3, fp32) = conv(x=%x, weight=%w)
       %k: (2, 1, fp32)* = const(val=[[0.5], [-1]])
       %y: (1, 2, 3, fp32) = add(x=%c, y=%k)
     } -> (%y)
   After:
     main(%x: (1, 2, 3, fp32)) {
       %w: (2, 2, 1, fp32)* = const(val=[[[1], [2]], [[3], [4]]])
       %c_bias: (2, fp32)* = const(val=[0.5, -1])
       %y: (1, 2, 3, fp32) = conv(x=%x, weight=%w, bias=%c_bias)
     } -> (%y)

   Fires on (pattern 1): add(conv, k), add(k, conv), sub(conv, k) and
   sub(k, conv), where conv is a conv or conv_transpose (mgopt__pw_conv_get:
   const float weight, bias absent or const) whose output has no other use
   and is not a block output, and k is a const that is a scalar or varies
   only along the channel axis without changing the output's shape
   (mgopt__pw_channel_const: (1, C, 1) or (C, 1) for a 1-D conv, (1, C, 1, 1)
   or (C, 1, 1) for 2-D, ...). b' = b + k, b' = b − k; for k − conv the
   weight is negated too: W' = −W, b' = k − b (the reference matches k − conv
   only after a transpose). Pattern 2: the same through a transpose,
   conv → transpose(perm) → add/sub, the transpose's output single-use and
   not a block output, k varying only along the axis the channels moved to
   (perm's position of 1); the transpose then reads the new conv. An absent
   bias is zeros(Cout). The conv keeps its name; the add or sub and its
   unused consts are erased.
   Numeric contract: each element of b' is computed in double from the exact
   constant values and rounded once, to nearest even, to the weight's dtype
   (fp16 stays fp16); −W is exact.
   Must not fire: k of another shape (varying along a spatial axis, or
   broadcasting the output to a higher rank); a run-time k, weight or bias;
   a conv (or transpose) output with another use or that is a block output;
   a result that is not finite; declared types that do not allow the
   replacement (mgopt__pu_replace_fits).
   Cost: worklist patterns, O(adds and subs + bias elements; weight elements
   for k − conv, negated in place when an earlier fold made the weight and
   this conv alone reads it). */

/* v's producer is a conv (then *tr NULL) or a transpose of a conv (*tr the
   transpose), each output single-use and not a block output; *axis is where
   the channels are in v. The conv, or NULL. */
static mgopt_op *mgopt__fcbias_conv(mgopt_program *p, mgopt_value *v, mgopt__pw_conv *c, mgopt_op **tr,
                                    int32_t *axis) {
  mgopt_op *d = v ? v->def : NULL;
  *tr = NULL;
  *axis = 1;
  if (d && d->kind == MGOPT_OP_transpose && d->nouts == 1) {
    mgopt_value *tx = mgopt_op_operand(d, "x");
    const int64_t *perm = NULL;
    int64_t n = mgopt_op_get_ints(p, d, "perm", &perm), i;
    if (!tx || !mgopt__pu_single_use(v) || mgopt__pu_is_block_output(v) || n != tx->type.rank || n < 2) return NULL;
    *axis = -1;
    for (i = 0; i < n; i++)
      if (mgopt__pu_norm_axis(perm[i], n) == 1) *axis = (int32_t)i;
    if (*axis < 0) return NULL;
    *tr = d;
    v = tx;
    d = v->def;
  }
  if (!d || !mgopt__pw_conv_get(p, d, c) || !mgopt__pu_single_use(v) || mgopt__pu_is_block_output(v)) return NULL;
  if ((*tr) && (*tr)->outs[0]->type.rank != c->w->rank) return NULL;
  return d;
}

static int mgopt__fcbias_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y"), *kv = NULL, *res;
  mgopt_op *conv = NULL, *tr = NULL;
  mgopt__pw_conv c;
  mgopt_tensor *nw = NULL, *nb;
  double *k, *b, *neg;
  int32_t axis = 1, side;
  int64_t o;
  MGOPT__UNUSED(ud);
  if (!x || !y || op->nouts != 1) return 0;
  for (side = 0; side < 2 && !conv; side++) {
    conv = mgopt__fcbias_conv(p, side ? y : x, &c, &tr, &axis);
    kv = side ? x : y;
  }
  side--; /* 0: conv ± k, 1: k ± conv */
  if (!conv) return 0;
  k = (double *)mgopt_program_alloc(p, sizeof(double) * (size_t)c.cout, 8);
  if (!k || !mgopt__pw_channel_const(p, kv, c.w->rank, axis, c.cout, k)) return 0;
  res = tr ? tr->outs[0] : conv->outs[0];
  if (!mgopt__pu_replace_fits(p, op->outs[0], res) || !(b = mgopt__pw_conv_bias(p, &c))) return 0;
  for (o = 0; o < c.cout; o++) {
    if (op->kind == MGOPT_OP_add) b[o] += k[o];
    else if (side == 0) b[o] -= k[o];
    else b[o] = k[o] - b[o];
  }
  if (!(nb = mgopt__pw_vector(p, (mgopt_dtype)c.w->dtype, c.cout, b))) return 0;
  if (op->kind == MGOPT_OP_sub && side == 1) {
    neg = (double *)mgopt_program_alloc(p, sizeof(double) * (size_t)c.cout, 8);
    if (!neg) return 0;
    for (o = 0; o < c.cout; o++) neg[o] = -1.0;
    if (!(nw = mgopt__pw_conv_scale(p, &c, neg))) return 0; /* last: it may negate in place */
  }
  if (!mgopt__pw_conv_set(rw, conv, nw, nb)) return 0;
  mgopt__pu_replace_value(rw, op->outs[0], res);
  mgopt__pu_erase_with_consts(rw, op);
  return 1;
}

static const mgopt_pattern mgopt__fcbias_patterns[] = {
    {"conv_add", MGOPT_OP_add, NULL, 1, mgopt__fcbias_fuse, NULL},
    {"conv_sub", MGOPT_OP_sub, NULL, 1, mgopt__fcbias_fuse, NULL},
};

/* the patterns match only where one of these is */
static const int32_t mgopt__fcbias_needs[] = {MGOPT_OP_conv, MGOPT_OP_conv_transpose};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(fusion, common, fuse_conv_bias,
                                   "fold an add or sub of a constant after a conv (or its transpose) into its bias",
                                   mgopt__fcbias_patterns, mgopt__fcbias_needs);
/* src/passes/fusion/fuse_conv_scale.c — common::fuse_conv_scale: a mul or real_div of a conv by a constant folds into its weight and bias.

   Spec: mil_graph_passes.txt, "Fold mul/div into conv/conv_transpose by
   updating the weight/bias of the convolution layers"; reference
   mil-passes.md §3.19 and §7.

   Before:
     main(%x: (1, 2, 3, fp32)) {
       %w: (2, 2, 1, fp32)* = const(val=[[[1], [2]], [[3], [4]]])
       %b: (2, fp32)* = const(val=[1, -1])
       %c: (1, 2, 3, fp32) = conv(x=%x, weight=%w, bias=%b)
       %s: (1, 2, 1, fp32)* = const(val=[[[2], [0.5]]])
       %y: (1, 2, 3, fp32) = mul(x=%c, y=%s)
     } -> (%y)
   After:
     main(%x: (1, 2, 3, fp32)) {
       %c_weight: (2, 2, 1, fp32)* = const(val=[[[2], [4]], [[1.5], [2]]])
       %c_bias: (2, fp32)* = const(val=[2, -0.5])
       %y: (1, 2, 3, fp32) = conv(x=%x, weight=%c_weight, bias=%c_bias)
     } -> (%y)

   Fires on: mul(conv, s) or mul(s, conv), and real_div(conv, s) (scale 1/s),
   where conv is a conv or conv_transpose (mgopt__pw_conv_get: const float
   weight, bias absent or const) whose output has no other use and is not a
   block output, and s is a const that is a scalar or varies only along the
   channel axis without changing the output's shape (mgopt__pw_channel_const:
   (), (1), (Cout, 1, 1), (1, Cout, 1, 1), ... for a 2-D conv). Per output
   channel o: W'[o] = s[o]·W[o], b'[o] = s[o]·b[o] (an absent bias stays
   absent). A grouped conv_transpose maps its channels as in
   fuse_conv_batchnorm (k·Cout/g + j scales W[k·Cin/g : (k+1)·Cin/g, j]),
   in 1-D, 2-D and 3-D alike. The conv keeps its name and reads the new
   consts; the mul or real_div and its unused consts are erased.
   Numeric contract: each element of W' and b' is computed in double (for
   real_div, the scale 1/s[o] in double first) from the exact constant values
   and rounded once, to nearest even, to the weight's dtype (fp16 stays fp16).
   Must not fire: real_div(s, conv) (s / conv is no scale; the reference
   fuses it); a scale of another shape (one that varies along a spatial axis
   or would broadcast the output to a higher rank); a run-time scale, weight
   or bias; a conv output with another use or that is a block output; a
   result that is not finite; declared types that do not allow the
   replacement (mgopt__pu_replace_fits).
   Cost: worklist patterns, O(muls and real_divs + weight elements). A
   weight an earlier fold made, read by this conv alone, is scaled in place
   (mgopt__pw_conv_scale): no new memory. */

static int mgopt__fcs_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *cv = NULL, *sv = NULL, *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y");
  mgopt__pw_conv c;
  mgopt_tensor *nw, *nb = NULL;
  double *s, *b;
  int64_t o;
  int k;
  MGOPT__UNUSED(ud);
  if (!x || !y || op->nouts != 1) return 0;
  for (k = 0; k < (op->kind == MGOPT_OP_mul ? 2 : 1) && !cv; k++) {
    mgopt_value *a = k ? y : x, *other = k ? x : y;
    if (a->def && mgopt__pw_conv_get(p, a->def, &c)) {
      cv = a;
      sv = other;
    }
  }
  if (!cv || !mgopt__pu_single_use(cv) || mgopt__pu_is_block_output(cv)) return 0;
  s = (double *)mgopt_program_alloc(p, sizeof(double) * (size_t)c.cout, 8);
  if (!s || !mgopt__pw_channel_const(p, sv, c.w->rank, 1, c.cout, s)) return 0;
  if (!mgopt__pu_replace_fits(p, op->outs[0], cv)) return 0;
  if (op->kind == MGOPT_OP_real_div)
    for (o = 0; o < c.cout; o++) {
      s[o] = 1.0 / s[o];
      if (!isfinite(s[o])) return 0;
    }
  if (c.b) {
    if (!(b = mgopt__pw_conv_bias(p, &c))) return 0;
    for (o = 0; o < c.cout; o++) b[o] *= s[o];
    if (!(nb = mgopt__pw_vector(p, (mgopt_dtype)c.w->dtype, c.cout, b))) return 0;
  }
  nw = mgopt__pw_conv_scale(p, &c, s); /* last: it may scale in place */
  if (!nw || !mgopt__pw_conv_set(rw, cv->def, nw, nb)) return 0;
  mgopt__pu_replace_value(rw, op->outs[0], cv);
  mgopt__pu_erase_with_consts(rw, op);
  return 1;
}

static const mgopt_pattern mgopt__fcs_patterns[] = {
    {"conv_mul", MGOPT_OP_mul, NULL, 1, mgopt__fcs_fuse, NULL},
    {"conv_real_div", MGOPT_OP_real_div, NULL, 1, mgopt__fcs_fuse, NULL},
};

/* the patterns match only where one of these is */
static const int32_t mgopt__fcs_needs[] = {MGOPT_OP_conv, MGOPT_OP_conv_transpose};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(fusion, common, fuse_conv_scale,
                                   "fold a mul or real_div of a conv by a constant into its weight and bias",
                                   mgopt__fcs_patterns, mgopt__fcs_needs);
/* src/passes/fusion/fuse_pad_conv.c — common::fuse_pad_conv: a constant-zero pad melds into the conv that reads it; a pad before a transpose into a conv moves next to it.

   Spec: mil_graph_passes.txt, "When we observe pad -> transpose -> conv, we
   move the pad to be next to conv. This allows us to meld pad + conv if
   possible"; reference mil-passes.md §3.20. ONNX Runtime's basic level does
   the meld (a constant-zero Pad into Conv's pads).

   Before:
     main(%x: (1, 2, 4, 4, fp32)) {
       %p: (8, int32)* = const(val=[0, 0, 0, 0, 1, 1, 2, 0])
       %a: (1, 2, 6, 6, fp32) = pad(x=%x, pad=%p, mode="constant", constant_val=0.0)
       %w: (3, 2, 3, 3, fp32)* = const(val=[[[[1, 1, 1], [1, 1, 1], [1, 1, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]], [[[1, 1, 1], [1, 1, 1], [1, 1, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]], [[[1, 1, 1], [1, 1, 1], [1, 1, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]]])
       %y: (1, 3, 4, 4, fp32) = conv(x=%a, weight=%w, pad_type="valid")
     } -> (%y)
   After:
     main(%x: (1, 2, 4, 4, fp32)) {
       %w: (3, 2, 3, 3, fp32)* = const(val=[[[[1, 1, 1], [1, 1, 1], [1, 1, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]], [[[1, 1, 1], [1, 1, 1], [1, 1, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]], [[[1, 1, 1], [1, 1, 1], [1, 1, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]]])
       %y: (1, 3, 4, 4, fp32) = conv(x=%x, weight=%w, pad_type="custom", pad=[1, 1, 2, 0])
     } -> (%y)

   Fires on (meld): a conv whose x is a pad in "constant" mode with
   constant_val 0, const non-negative amounts that leave the batch and
   channel axes alone, and the conv's rank; the conv's pad_type is "valid"
   or "custom" (its amounts add up). The conv reads the pad's input with
   pad_type "custom"; the pad stays while something else reads it.
   Fires on (move, the reference's rewrite): a pad, not a block output, whose
   only reader is a transpose that has a conv or conv_transpose among its
   readers: transpose(pad(x)) becomes pad(transpose(x)) with the amounts
   permuted (per axis, amounts[perm[i]] for output axis i), any mode and
   constant_val kept. The meld then applies when it can. Both layouts the
   reference meets are covered: NCHW (pad → conv) and channel-last
   (pad → transpose → conv).
   Must not fire: a pad in reflect or replicate mode, or with a nonzero
   constant_val, into a conv (meld); run-time or negative amounts; padding
   on the batch or channel axis; a conv with pad_type "same" or
   "same_lower"; a conv_transpose (its pad crops the output); a pad read by
   several ops before a transpose (moving it would copy it: the program
   would grow); declared types that do not allow the replacement.
   Cost: worklist patterns, O(convs + pads). */

/* The pad's amounts per axis of its rank-r input: rows[2i], rows[2i+1]. 0 when not const or malformed. */
static int mgopt__fpc_rows(mgopt_program *p, const mgopt_op *pad, int32_t r, int64_t *rows) {
  const int64_t *v = NULL;
  int64_t n = mgopt_op_get_ints(p, pad, "pad", &v), first, k;
  if (n < 0 || n % 2 || n / 2 > r || r < 1 || r > MGOPT_MAX_RANK) return 0;
  first = r - n / 2;
  for (k = 0; k < r; k++) {
    rows[2 * k] = k < first ? 0 : v[2 * (k - first)];
    rows[2 * k + 1] = k < first ? 0 : v[2 * (k - first) + 1];
  }
  return 1;
}

static int mgopt__fpc_is_mode(const mgopt_op *pad, const char *mode) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(pad, "mode", &n);
  if (!s) s = "constant", n = 8;
  return n == strlen(mode) && memcmp(s, mode, n) == 0;
}

/* Restores attribute `name` of op to *saved (absent when had is 0). */
static void mgopt__fpc_restore(mgopt_op *op, const char *name, int had, const mgopt_attr *saved) {
  if (had) (void)mgopt_op_set_attr(op, saved);
  else mgopt_op_remove_attr(op, name);
}

/* 1 when conv, reading x with pad_type "custom" and pad np[0..n), still has
   the output type it declares; the conv is left as it was. */
static int mgopt__fpc_try(mgopt_program *p, mgopt_op *conv, mgopt_value *a, mgopt_value *x, const int64_t *np,
                          int64_t n) {
  const mgopt_attr *pa = mgopt_op_attr(conv, "pad_type"), *pp = mgopt_op_attr(conv, "pad");
  mgopt_attr spt, spad;
  int ok;
  memset(&spt, 0, sizeof spt);
  memset(&spad, 0, sizeof spad);
  if (pa) spt = *pa;
  if (pp) spad = *pp;
  ok = mgopt_op_set_string(conv, "pad_type", "custom") == MGOPT_OK && mgopt_op_set_ints(conv, "pad", np, n) == MGOPT_OK &&
       mgopt_op_set_operand(conv, "x", x) == MGOPT_OK;
  ok = ok && mgopt__pu_infer_fits(p, conv);
  (void)mgopt_op_set_operand(conv, "x", a);
  mgopt__fpc_restore(conv, "pad_type", pa != NULL, &spt);
  mgopt__fpc_restore(conv, "pad", pp != NULL, &spad);
  return ok;
}

static int mgopt__fpc_meld(mgopt_rewriter *rw, mgopt_op *conv, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *a = mgopt_op_operand(conv, "x"), *x;
  mgopt_op *pad = mgopt__pu_def_of(a, MGOPT_OP_pad);
  int64_t rows[2 * MGOPT_MAX_RANK], np[2 * MGOPT_MAX_RANK], k;
  const int64_t *cp = NULL;
  int32_t r, sp;
  size_t ptn = 0;
  const char *pt = mgopt_op_get_string(conv, "pad_type", &ptn);
  int custom;
  MGOPT__UNUSED(ud);
  if (!pad || conv->nouts != 1 || !(x = mgopt_op_operand(pad, "x"))) return 0;
  r = x->type.rank;
  if (r < 3 || r != a->type.rank || !mgopt__fpc_is_mode(pad, "constant") ||
      mgopt_op_get_float(pad, "constant_val", 0.0) != 0.0 || !mgopt__fpc_rows(p, pad, r, rows))
    return 0;
  if (!pt) pt = "valid", ptn = 5;
  custom = ptn == 6 && memcmp(pt, "custom", 6) == 0;
  if (!custom && !(ptn == 5 && memcmp(pt, "valid", 5) == 0)) return 0;
  sp = r - 2;
  if (rows[0] || rows[1] || rows[2] || rows[3]) return 0;
  if (custom) {
    int64_t n = mgopt_op_get_ints(p, conv, "pad", &cp);
    if (n >= 0 && n != 2 * sp) return 0;
    if (n < 0) cp = NULL;
  }
  for (k = 0; k < 2 * sp; k++) {
    if (rows[4 + k] < 0) return 0;
    np[k] = rows[4 + k] + (cp ? cp[k] : 0);
    if (np[k] < rows[4 + k]) return 0; /* overflow */
  }
  if (!mgopt__fpc_try(p, conv, a, x, np, 2 * sp)) return 0;
  if (mgopt_op_set_string(conv, "pad_type", "custom") != MGOPT_OK || mgopt_op_set_ints(conv, "pad", np, 2 * sp) != MGOPT_OK)
    return 0;
  mgopt_rw_set_operand(rw, conv, "x", x);
  mgopt_rw_modified(rw, conv);
  mgopt__pu_erase_with_consts(rw, pad);
  return 1;
}

static int mgopt__fpc_move(mgopt_rewriter *rw, mgopt_op *pad, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(pad, "x"), *po = pad->nouts == 1 ? pad->outs[0] : NULL, *tx[1];
  mgopt_op *t = po ? mgopt__pu_single_user(po) : NULL, *t2, *p2;
  int64_t rows[2 * MGOPT_MAX_RANK], nrows[2 * MGOPT_MAX_RANK], k, n, first = 0;
  const int64_t *perm = NULL;
  const mgopt_use *u;
  const char *tname;
  int32_t r;
  int any_conv = 0;
  static const char *const xs[1] = {"x"};
  MGOPT__UNUSED(ud);
  if (!t || t->kind != MGOPT_OP_transpose || t->nouts != 1 || mgopt__pu_is_block_output(po) || !x) return 0;
  r = x->type.rank;
  n = mgopt_op_get_ints(p, t, "perm", &perm);
  if (r < 1 || n != r || !mgopt__fpc_rows(p, pad, r, rows)) return 0;
  for (u = t->outs[0]->uses; u; u = u->next)
    if (u->op && (u->op->kind == MGOPT_OP_conv || u->op->kind == MGOPT_OP_conv_transpose)) any_conv = 1;
  if (!any_conv) return 0;
  for (k = 0; k < r; k++) {
    int64_t a = mgopt__pu_norm_axis(perm[k], r);
    if (a < 0) return 0;
    nrows[2 * k] = rows[2 * a];
    nrows[2 * k + 1] = rows[2 * a + 1];
  }
  while (first < r && nrows[2 * first] == 0 && nrows[2 * first + 1] == 0) first++;
  if (first == r) return 0; /* no padding: noop_elimination's */
  tname = mgopt__pu_value_name(t->outs[0]);
  tx[0] = x;
  t2 = mgopt_rw_create(rw, t, "transpose", mgopt__pu_name2(p, tname, "_unpadded"), 1, xs, tx, 1);
  if (!t2 || mgopt_op_set_ints(t2, "perm", perm, n) != MGOPT_OK || mgopt_op_infer(p, t2, NULL) != MGOPT_OK) {
    if (t2) mgopt_rw_erase(rw, t2);
    return 0;
  }
  tx[0] = t2->outs[0];
  p2 = mgopt_rw_create(rw, t, "pad", mgopt__pu_name2(p, tname, "_padded"), 1, xs, tx, 1);
  if (!p2) return 0;
  for (k = 0; k < pad->nattrs; k++)
    if (mgopt_op_set_attr(p2, &pad->attrs[k]) != MGOPT_OK) return 0;
  if (!mgopt__pu_set_ints_param(rw, p2, pad, "pad", nrows + 2 * first, 2 * (r - first)) ||
      mgopt_op_infer(p, p2, NULL) != MGOPT_OK || !mgopt__pu_adopt_type(p, p2->outs[0], t->outs[0])) {
    mgopt__pu_erase_with_consts(rw, p2);
    mgopt_rw_erase(rw, t2);
    return 0;
  }
  mgopt__pu_replace_value(rw, t->outs[0], p2->outs[0]);
  mgopt__pu_sync_op_name(p2);
  mgopt_rw_erase(rw, t);
  mgopt__pu_erase_with_consts(rw, pad);
  return 1;
}

static const mgopt_pattern mgopt__fpc_patterns[] = {
    {"pad_conv", MGOPT_OP_conv, NULL, 1, mgopt__fpc_meld, NULL},
    {"pad_transpose_conv", MGOPT_OP_pad, NULL, 1, mgopt__fpc_move, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_pad_conv,
                           "meld a constant-zero pad into the conv that reads it; move a pad before a "
                           "transpose into a conv next to the conv",
                           mgopt__fpc_patterns);
/* src/passes/fusion/compose_conv1d.c — common::compose_conv1d: expand_dims → 2-D conv → squeeze becomes a 1-D conv.

   Spec: mil_graph_passes.txt, "In TensorFlow, tf.keras.layers.Conv1D is a
   composite op ... we should recompose the fragments back to MIL conv";
   reference mil-passes.md §3.33 (compose_conv1d).

   Before:
     main(%x: (1, 2, 5, fp32)) {
       %e: (1, 2, 1, 5, fp32) = expand_dims(x=%x, axes=[-2])
       %w: (3, 2, 1, 2, fp32)* = const(val=[[[[1, 2]], [[3, 4]]], [[[5, 6]], [[7, 8]]], [[[9, 10]], [[11, 12]]]])
       %c: (1, 3, 1, 3, fp32) = conv(x=%e, weight=%w, strides=[1, 2], pad_type="custom", pad=[0, 0, 1, 0], dilations=[1, 1])
       %y: (1, 3, 3, fp32) = squeeze(x=%c, axes=[-2])
     } -> (%y)
   After:
     main(%x: (1, 2, 5, fp32)) {
       %y_weight: (3, 2, 2, fp32)* = const(val=[[[1, 2], [3, 4]], [[5, 6], [7, 8]], [[9, 10], [11, 12]]])
       %y: (1, 3, 3, fp32) = conv(x=%x, weight=%y_weight, strides=[2], pad_type="custom", pad=[1, 0], dilations=[1])
     } -> (%y)

   Fires on (pattern 1, channel-first): squeeze(axes=[2] or [-2]) of a 2-D
   conv of expand_dims(x, axes=[2] or [-2]) with x of rank 3; (pattern 2,
   channel-last): squeeze(axes=[1] or [-3]) of transpose(perm=[0, 2, 3, 1])
   of a 2-D conv of transpose(perm=[0, 3, 1, 2]) of expand_dims(x, axes=[1]
   or [-3]), which becomes transpose(x, [0, 2, 1]) → 1-D conv →
   transpose([0, 2, 1]). Every value between the first and the last op has
   that one reader and is not a block output. The conv's kernel is 1 high
   (weight [Cout, Cin/g, 1, K]) and pads nothing along the height (custom
   pads 0 there); the 1-D conv takes the width's stride, dilation and pads,
   the same pad_type, groups and bias, and a weight [Cout, Cin/g, K]: a
   const weight becomes a const sharing its bytes, a run-time one a
   squeeze(axes=[2]). The new conv is named after the squeeze's output.
   Must not fire: a kernel taller than 1 or padding along the height; an
   expand_dims or squeeze on another axis, or x not of rank 3; other
   transpose perms; an intermediate value with another reader or that is a
   block output; declared types that do not allow the replacement.
   Cost: worklist patterns, O(squeezes). */

/* The single axis of op's `axes`, normalized against rank r; -1 otherwise. */
static int64_t mgopt__cc1_axis(mgopt_program *p, const mgopt_op *op, int64_t r) {
  const int64_t *a = NULL;
  int64_t n = mgopt_op_get_ints(p, op, "axes", &a);
  return n == 1 ? mgopt__pu_norm_axis(a[0], r) : -1;
}

/* v is produced by a transpose of rank 4 with perm want, single-use and not a block output: that transpose. */
static mgopt_op *mgopt__cc1_transpose(mgopt_program *p, mgopt_value *v, const int64_t *want) {
  mgopt_op *t = mgopt__pu_def_of(v, MGOPT_OP_transpose);
  const int64_t *perm = NULL;
  int64_t k;
  if (!t || !mgopt__pu_single_use(v) || mgopt__pu_is_block_output(v) || mgopt_op_get_ints(p, t, "perm", &perm) != 4)
    return NULL;
  for (k = 0; k < 4; k++)
    if (mgopt__pu_norm_axis(perm[k], 4) != want[k]) return NULL;
  return t;
}

/* An INTS parameter of conv of `want` entries into out (left as it is when absent); 0 when malformed. */
static int mgopt__cc1_param(mgopt_program *p, const mgopt_op *conv, const char *name, int64_t want, int64_t *out) {
  const int64_t *v = NULL;
  int64_t n = mgopt_op_get_ints(p, conv, name, &v), k;
  if (n < 0) return 1;
  if (n != want) return 0;
  for (k = 0; k < n; k++) out[k] = v[k];
  return 1;
}

static mgopt_op *mgopt__cc1_build(mgopt_rewriter *rw, mgopt_op *conv, mgopt_op *pos, mgopt_value *x,
                                  const char *name) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *w = mgopt_op_operand(conv, "weight"), *b = mgopt_op_operand(conv, "bias"), *w1, *ins[3];
  mgopt_tensor *wt = mgopt__pu_def_of(w, MGOPT_OP_const) ? mgopt_value_const(w) : NULL;
  static const char *const slots[3] = {"x", "weight", "bias"};
  int64_t st[2] = {1, 1}, dl[2] = {1, 1}, pd[4] = {0, 0, 0, 0}, shape[3];
  size_t ptn = 0;
  const char *pt = mgopt_op_get_string(conv, "pad_type", &ptn);
  mgopt_op *n;
  int32_t k;
  if (w->type.rank != 4 || !mgopt_dim_is_static(w->type.dims[2]) || w->type.dims[2].v != 1) return NULL;
  if (!mgopt__cc1_param(p, conv, "strides", 2, st) || !mgopt__cc1_param(p, conv, "dilations", 2, dl) ||
      !mgopt__cc1_param(p, conv, "pad", 4, pd))
    return NULL;
  if (pt && ptn == 6 && memcmp(pt, "custom", 6) == 0 && (pd[0] || pd[1])) return NULL;
  if (wt) {
    for (k = 0; k < 3; k++) shape[k] = wt->shape[k < 2 ? k : 3];
    wt = mgopt__tensor_view(p, wt, 0, 3, shape);
    w1 = wt ? mgopt_rw_const(rw, pos, mgopt__pu_name2(p, name, "_weight"), wt) : NULL;
  } else {
    int64_t two = 2;
    mgopt_op *sq = mgopt_rw_create(rw, pos, "squeeze", mgopt__pu_name2(p, name, "_weight"), 1, slots, &w, 1);
    if (!sq) return NULL;
    if (mgopt_op_set_ints(sq, "axes", &two, 1) != MGOPT_OK || mgopt_op_infer(p, sq, NULL) != MGOPT_OK) {
      mgopt_rw_erase(rw, sq);
      return NULL;
    }
    w1 = sq->outs[0];
  }
  if (!w1) return NULL;
  ins[0] = x;
  ins[1] = w1;
  ins[2] = b;
  n = mgopt_rw_create(rw, pos, "conv", name, b ? 3 : 2, slots, ins, 1);
  if (!n) return NULL;
  /* the conv's attributes in its order, strides, pad and dilations cut to the width */
  for (k = 0; k < conv->nattrs; k++) {
    const mgopt_attr *a = &conv->attrs[k];
    mgopt_status s;
    if (!strcmp(a->name, "strides")) s = mgopt_op_set_ints(n, "strides", st + 1, 1);
    else if (!strcmp(a->name, "dilations")) s = mgopt_op_set_ints(n, "dilations", dl + 1, 1);
    else if (!strcmp(a->name, "pad")) s = mgopt_op_set_ints(n, "pad", pd + 2, 2);
    else s = mgopt_op_set_attr(n, a);
    if (s != MGOPT_OK) return NULL;
  }
  if (mgopt_op_infer(p, n, NULL) != MGOPT_OK) {
    mgopt_rw_erase(rw, n);
    mgopt__pu_erase_with_consts(rw, w1->def);
    return NULL;
  }
  return n;
}

static int mgopt__cc1_fuse(mgopt_rewriter *rw, mgopt_op *sq, void *ud) {
  static const int64_t to_nchw[4] = {0, 3, 1, 2}, to_nhwc[4] = {0, 2, 3, 1};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *v = mgopt_op_operand(sq, "x"), *x, *ins[1];
  mgopt_op *t2 = NULL, *t1 = NULL, *conv, *ed, *n, *tin = NULL, *tout = NULL;
  int64_t sax, perm[3] = {0, 2, 1};
  int last;
  const char *name;
  static const char *const xs[1] = {"x"};
  MGOPT__UNUSED(ud);
  if (!v || sq->nouts != 1 || v->type.rank != 4) return 0;
  sax = mgopt__cc1_axis(p, sq, 4);
  if (sax != 1 && sax != 2) return 0;
  last = sax == 1;
  if (last) {
    if (!(t2 = mgopt__cc1_transpose(p, v, to_nhwc))) return 0;
    v = mgopt_op_operand(t2, "x");
  } else if (!mgopt__pu_single_use(v) || mgopt__pu_is_block_output(v)) {
    return 0;
  }
  conv = mgopt__pu_def_of(v, MGOPT_OP_conv);
  if (!conv || conv->nouts != 1 || (last && (!mgopt__pu_single_use(v) || mgopt__pu_is_block_output(v)))) return 0;
  v = mgopt_op_operand(conv, "x");
  if (last) {
    if (!(t1 = mgopt__cc1_transpose(p, v, to_nchw))) return 0;
    v = mgopt_op_operand(t1, "x");
  } else if (!mgopt__pu_single_use(v) || mgopt__pu_is_block_output(v)) {
    return 0;
  }
  ed = mgopt__pu_def_of(v, MGOPT_OP_expand_dims);
  if (!ed || (last && (!mgopt__pu_single_use(v) || mgopt__pu_is_block_output(v)))) return 0;
  x = mgopt_op_operand(ed, "x");
  if (!x || x->type.rank != 3 || mgopt__cc1_axis(p, ed, 4) != sax) return 0;
  name = mgopt__pu_value_name(sq->outs[0]);
  if (last) {
    ins[0] = x;
    tin = mgopt_rw_create(rw, sq, "transpose", mgopt__pu_name2(p, name, "_in"), 1, xs, ins, 1);
    if (!tin || mgopt_op_set_ints(tin, "perm", perm, 3) != MGOPT_OK || mgopt_op_infer(p, tin, NULL) != MGOPT_OK) {
      if (tin) mgopt_rw_erase(rw, tin);
      return 0;
    }
    x = tin->outs[0];
  }
  n = mgopt__cc1_build(rw, conv, sq, x, last ? mgopt__pu_name2(p, name, "_conv") : name);
  if (n && last) {
    ins[0] = n->outs[0];
    tout = mgopt_rw_create(rw, sq, "transpose", name, 1, xs, ins, 1);
    if (tout && (mgopt_op_set_ints(tout, "perm", perm, 3) != MGOPT_OK || mgopt_op_infer(p, tout, NULL) != MGOPT_OK)) {
      mgopt_rw_erase(rw, tout);
      tout = NULL;
    }
  }
  if (!n || (last && !tout) || !mgopt__pu_adopt_type(p, last ? tout->outs[0] : n->outs[0], sq->outs[0])) {
    if (tout) mgopt_rw_erase(rw, tout);
    if (n) {
      mgopt_value *w = mgopt_op_operand(n, "weight");
      mgopt_rw_erase(rw, n);
      if (w) mgopt__pu_erase_with_consts(rw, w->def);
    }
    if (tin) mgopt_rw_erase(rw, tin);
    return 0;
  }
  mgopt__pu_replace_value(rw, sq->outs[0], last ? tout->outs[0] : n->outs[0]);
  mgopt__pu_sync_op_name(last ? tout : n);
  mgopt_rw_erase(rw, sq);
  if (t2) mgopt_rw_erase(rw, t2);
  mgopt__pu_erase_with_consts(rw, conv);
  if (t1) mgopt_rw_erase(rw, t1);
  mgopt__pu_erase_with_consts(rw, ed);
  return 1;
}

static const mgopt_pattern mgopt__cc1_patterns[] = {
    {"expand_conv_squeeze", MGOPT_OP_squeeze, NULL, 1, mgopt__cc1_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, compose_conv1d,
                           "expand_dims, a 2-D conv and squeeze (also channel-last) become a 1-D conv",
                           mgopt__cc1_patterns);
/* src/passes/fusion/fuse_dilated_conv.c — common::fuse_dilated_conv: space_to_batch → conv → batch_to_space becomes one dilated conv.

   Spec: mil_graph_passes.txt (the TensorFlow atrous-convolution idiom);
   reference mil-passes.md §3.33 (fuse_dilated_conv).

   Before:
     main(%x: (1, 1, 5, 5, fp32)) {
       %s: (4, 1, 5, 5, fp32) = space_to_batch(x=%x, block_shape=[2, 2], paddings=[2, 3, 2, 3])
       %w: (1, 1, 3, 3, fp32)* = const(val=[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]]])
       %c: (4, 1, 3, 3, fp32) = conv(x=%s, weight=%w)
       %y: (1, 1, 5, 5, fp32) = batch_to_space(x=%c, block_shape=[2, 2], crops=[0, 1, 0, 1])
     } -> (%y)
   After:
     main(%x: (1, 1, 5, 5, fp32)) {
       %w: (1, 1, 3, 3, fp32)* = const(val=[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]]])
       %y: (1, 1, 5, 5, fp32) = conv(x=%x, weight=%w, dilations=[2, 2], pad_type="custom", pad=[2, 2, 2, 2])
     } -> (%y)

   Fires on: batch_to_space(conv(space_to_batch(x))) with equal block_shape
   d (one entry per spatial dim of the conv), the intermediate values
   single-use and not block outputs, and the conv not strided, not dilated,
   and not padded (pad_type "valid", or "custom" with zeros). The phases of
   the space_to_batch each see a valid conv of the padded input, and
   batch_to_space interleaves them back: that is the padded input's conv
   dilated by d, cropped. So the result is conv(x, dilations=d) with pads
   (paddings_begin − crops_begin, paddings_end − crops_end) per spatial dim
   (pad_type "custom", or "valid" when they are all 0), its other inputs and
   attributes kept, named after the batch_to_space's output. This holds for
   any paddings the crops do not exceed: TensorFlow's "same" padding with
   its end extra and crop [0, extra] (the only nonzero padding the reference
   takes, as pad_type "same") is one case; its "valid" padding another.
   Must not fire: different block shapes; a crop larger than the padding on
   its side; a strided, dilated or padded inner conv (pad_type "same"
   included); an intermediate value with another reader or that is a
   block output; declared types that do not allow the replacement.
   Cost: worklist patterns, O(batch_to_spaces). */

/* 1 when INTS parameter `name` of op is absent or all ones. */
static int mgopt__fdc_ones(mgopt_program *p, const mgopt_op *op, const char *name) {
  const int64_t *v = NULL;
  int64_t n = mgopt_op_get_ints(p, op, name, &v), k;
  for (k = 0; k < n; k++)
    if (v[k] != 1) return 0;
  return 1;
}

/* 1 when conv pads nothing. */
static int mgopt__fdc_unpadded(mgopt_program *p, const mgopt_op *conv) {
  size_t n = 0;
  const char *pt = mgopt_op_get_string(conv, "pad_type", &n);
  const int64_t *v = NULL;
  int64_t np, k;
  if (!pt || (n == 5 && memcmp(pt, "valid", 5) == 0)) return 1;
  if (n != 6 || memcmp(pt, "custom", 6) != 0) return 0;
  np = mgopt_op_get_ints(p, conv, "pad", &v);
  for (k = 0; k < np; k++)
    if (v[k] != 0) return 0;
  return 1;
}

static int mgopt__fdc_fuse(mgopt_rewriter *rw, mgopt_op *b2s, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *cv = mgopt_op_operand(b2s, "x"), *sv, *x;
  mgopt_op *conv = mgopt__pu_def_of(cv, MGOPT_OP_conv), *s2b, *n;
  const int64_t *bs1 = NULL, *bs2 = NULL, *pd = NULL, *cr = NULL;
  int64_t nb, k, pads[4], any = 0;
  const char *name;
  MGOPT__UNUSED(ud);
  if (!conv || b2s->nouts != 1 || !mgopt__pu_single_use(cv) || mgopt__pu_is_block_output(cv)) return 0;
  sv = mgopt_op_operand(conv, "x");
  s2b = mgopt__pu_def_of(sv, MGOPT_OP_space_to_batch);
  if (!s2b || !mgopt__pu_single_use(sv) || mgopt__pu_is_block_output(sv) || !(x = mgopt_op_operand(s2b, "x"))) return 0;
  nb = mgopt_op_get_ints(p, s2b, "block_shape", &bs1);
  if (nb < 1 || nb > 2 || mgopt_op_get_ints(p, b2s, "block_shape", &bs2) != nb || x->type.rank != nb + 2 ||
      mgopt_op_get_ints(p, s2b, "paddings", &pd) != 2 * nb || mgopt_op_get_ints(p, b2s, "crops", &cr) != 2 * nb)
    return 0;
  for (k = 0; k < nb; k++)
    if (bs1[k] != bs2[k]) return 0;
  for (k = 0; k < 2 * nb; k++) {
    pads[k] = pd[k] - cr[k];
    if (pads[k] < 0) return 0;
    any |= pads[k];
  }
  if (!mgopt__fdc_ones(p, conv, "strides") || !mgopt__fdc_ones(p, conv, "dilations") || !mgopt__fdc_unpadded(p, conv))
    return 0;
  n = mgopt__pu_clone_op(p, conv);
  if (!n) return 0;
  name = mgopt__pu_value_name(b2s->outs[0]);
  if (mgopt_op_set_operand(n, "x", x) != MGOPT_OK || mgopt_op_set_ints(n, "dilations", bs1, nb) != MGOPT_OK ||
      mgopt_op_set_string(n, "pad_type", any ? "custom" : "valid") != MGOPT_OK ||
      mgopt_op_set_name(n, name) != MGOPT_OK || mgopt_value_set_name(n->outs[0], name) != MGOPT_OK)
    return 0;
  if (any) {
    if (mgopt_op_set_ints(n, "pad", pads, 2 * nb) != MGOPT_OK) return 0;
  } else {
    mgopt_op_remove_attr(n, "pad");
  }
  mgopt_op_insert_before(n, b2s);
  mgopt_rw_created(rw, n);
  if (mgopt_op_infer(p, n, NULL) != MGOPT_OK || !mgopt__pu_adopt_type(p, n->outs[0], b2s->outs[0])) {
    mgopt_rw_erase(rw, n);
    return 0;
  }
  mgopt__pu_replace_value(rw, b2s->outs[0], n->outs[0]);
  mgopt__pu_sync_op_name(n);
  mgopt_rw_erase(rw, b2s);
  mgopt__pu_erase_with_consts(rw, conv);
  mgopt_rw_erase(rw, s2b);
  return 1;
}

static const mgopt_pattern mgopt__fdc_patterns[] = {
    {"space_to_batch_conv", MGOPT_OP_batch_to_space, NULL, 1, mgopt__fdc_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_dilated_conv,
                           "space_to_batch, conv and batch_to_space become one dilated conv", mgopt__fdc_patterns);
/* src/passes/fusion/fuse_layernorm_or_instancenorm.c — common::fuse_layernorm_or_instancenorm: five decomposed normalization patterns become layer_norm or instance_norm.

   Spec: mil_graph_passes.txt, "detect and fuse several variants of
   layer_norm or instance_norm"; reference §3.24.

   Before:
     main(%x: (2, 4, fp32)) {
       %m: (2, 1, fp32) = reduce_mean(x=%x, axes=[-1], keep_dims=true)
       %d: (2, 4, fp32) = sub(x=%x, y=%m)
       %two: (fp32)* = const(val=2)
       %q: (2, 4, fp32) = pow(x=%d, y=%two)
       %v: (2, 1, fp32) = reduce_mean(x=%q, axes=[-1], keep_dims=true)
       %e: (fp32)* = const(val=1e-05)
       %ve: (2, 1, fp32) = add(x=%v, y=%e)
       %s: (2, 1, fp32) = sqrt(x=%ve)
       %n: (2, 4, fp32) = real_div(x=%d, y=%s)
       %g: (4, fp32)* = const(val=[1, 2, 3, 4])
       %ng: (2, 4, fp32) = mul(x=%n, y=%g)
       %b: (4, fp32)* = const(val=[0, 1, 0, 1])
       %y: (2, 4, fp32) = add(x=%ng, y=%b)
     } -> (%y)
   After:
     main(%x: (2, 4, fp32)) {
       %g: (4, fp32)* = const(val=[1, 2, 3, 4])
       %b: (4, fp32)* = const(val=[0, 1, 0, 1])
       %y: (2, 4, fp32) = layer_norm(x=%x, gamma=%g, beta=%b, axes=[-1], epsilon=9.999999747378752e-06)
     } -> (%y)

   In the patterns, mean = reduce_mean(x, axes A, keep_dims=true) and
   d = sub(x, mean); "square" is square(d), mul(d, d) or pow(d, 2); "var" is
   reduce_mean(square, the same axes A, keep_dims=true); eps, gamma and beta
   are constants; binary ops take their operands in either order unless a
   sub says otherwise.
   1. x*[g*rsqrt(var+eps)] + (beta - mean*[g*rsqrt(var+eps)])  (TF BERT).
   2. d / pow(var+eps, 0.5) * gamma + beta, also with sqrt for the pow and
      one sub d read by both the square and the real_div (as ONNX exporters
      write it) instead of two equal subs.
   3. x*rsqrt(var+eps) + (mean*rsqrt(var+eps))*(-1)  (TF-Addons; no gamma or
      beta: instance_norm with gamma 1 and beta 0).
   4. the sum form: mean = reduce_sum(x)*k, var = reduce_sum(x*x)*k - mean*mean,
      then as 1, with k exactly 1/N (N the reduced element count).
   5. d*rsqrt(var+eps) on axes [1] of a rank-4 x (ml-ane-transformers BC1S),
      optionally followed by add(beta) then mul(gamma):
      layer_norm(axes=[1], gamma, beta*gamma).
   Each pattern's ops but the last must have no reader outside the pattern
   and not be a block output; x may have other readers. The result, named
   after the last op's output, is (patterns 1, 2, 4, checked in this order):
   - instance_norm(x, gamma, beta) when x has rank 4, A is {-2, -1} (NCHW)
     or {-3, -2} (NHWC, between transpose(x, [0, 3, 1, 2]) and a transpose
     back [0, 2, 3, 1]), and gamma and beta are constant along every axis
     but the channel's, which is static (they become (C) constants);
   - else layer_norm(x, axes A, gamma, beta) when A is the last |A| axes and
     gamma and beta have exactly the shape of those dims of x.
   epsilon is eps (the value its constant holds, e.g. fp32 1e-05 is
   9.999999747378752e-06) plus the rsqrt's own epsilon (rsqrt(v) is
   1/sqrt(v + e)).
   Must not fire: keep_dims false or run-time axes; variance axes that differ
   from the mean's; an eps of more than one element or run-time; pow
   exponents other than exactly 2 and 0.5; a -1 that is not -1; k not 1/N or
   a dynamic reduced dim; an intermediate with another reader or that is a
   block output; gamma or beta of other layouts (for instance, per element
   of a normalized axis for instance_norm, or broadcast for layer_norm);
   dtypes that differ or are not float; a target that cannot express the new
   op (mgopt_program_target_accepts).
   Numeric contract: gamma and beta are copied in their own dtype (fp16 stays
   fp16); pattern 5's beta*gamma is computed in double and rounded once to
   that dtype; epsilon is summed in double.
   Cost: worklist patterns rooted at reduce_mean / reduce_sum, each match
   O(pattern size + gamma/beta elements). */

#define MGOPT__FLN_MAXOPS 32
#define MGOPT__FLN_MAXUSE 8

typedef struct mgopt__fln_match {
  mgopt_op *ops[MGOPT__FLN_MAXOPS]; /* matched ops, the last one included */
  int32_t n;
  mgopt_value *x;
  mgopt_op *red;            /* the first reduction (its axes are A) */
  mgopt_value *gamma, *beta; /* constants, NULL when the pattern has none */
  double eps;
  mgopt_op *end;
  int pattern;
} mgopt__fln_match;

static void mgopt__fln_add(mgopt__fln_match *m, mgopt_op *op) {
  int32_t k;
  for (k = 0; k < m->n; k++)
    if (m->ops[k] == op) return;
  if (m->n < MGOPT__FLN_MAXOPS) m->ops[m->n++] = op;
}

/* the distinct ops reading v into us; -1 when v is a block output or has more than cap readers */
static int32_t mgopt__fln_users(const mgopt_value *v, mgopt_op **us, int32_t cap) {
  const mgopt_use *u;
  int32_t n = 0, k;
  if (!v || v->nblock_uses) return -1;
  for (u = v->uses; u; u = u->next) {
    if (!u->op) return -1;
    for (k = 0; k < n && us[k] != u->op; k++) {
    }
    if (k < n) continue;
    if (n == cap) return -1;
    us[n++] = u->op;
  }
  return n;
}

/* the only (distinct) reader of v when it is of `kind`, else NULL */
static mgopt_op *mgopt__fln_only(const mgopt_value *v, int32_t kind) {
  mgopt_op *us[MGOPT__FLN_MAXUSE];
  if (mgopt__fln_users(v, us, MGOPT__FLN_MAXUSE) != 1 || us[0]->kind != kind || us[0]->nouts != 1) return NULL;
  return us[0];
}

/* the operand of binary op that is not v (v itself for op(v, v)); NULL when v is not an operand */
static mgopt_value *mgopt__fln_other(const mgopt_op *op, const mgopt_value *v) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *y = mgopt_op_operand(op, "y");
  if (x == v) return y;
  return y == v ? x : NULL;
}

/* v is a one-element float constant; its value in *val */
static int mgopt__fln_scalar(const mgopt_value *v, double *val) {
  const mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
  if (!t || t->numel != 1 || !mgopt_dtype_is_float((mgopt_dtype)t->dtype)) return 0;
  *val = mgopt_tensor_get_f64(t, 0);
  return 1;
}

/* op is square(d), mul(d, d) or pow(d, 2) */
static int mgopt__fln_is_square(const mgopt_op *op, const mgopt_value *d) {
  double e;
  if (!op || op->nouts != 1) return 0;
  if (op->kind == MGOPT_OP_square) return mgopt_op_operand(op, "x") == d;
  if (op->kind == MGOPT_OP_mul) return mgopt_op_operand(op, "x") == d && mgopt_op_operand(op, "y") == d;
  if (op->kind == MGOPT_OP_pow)
    return mgopt_op_operand(op, "x") == d && mgopt__fln_scalar(mgopt_op_operand(op, "y"), &e) && e == 2.0;
  return 0;
}

/* normalized, sorted axes of a reduction with constant axes and keep_dims
   true over x of known rank; the count, or -1 */
static int32_t mgopt__fln_axes(mgopt_program *p, const mgopt_op *red, int64_t *ax) {
  const mgopt_value *x = mgopt_op_operand(red, "x"), *kd = mgopt_op_operand(red, "keep_dims");
  const int64_t *v = NULL;
  int64_t n, i, j, r;
  if (!x || red->nouts != 1 || (kd && !mgopt_value_const(kd)) || !mgopt_op_get_bool(red, "keep_dims", 0)) return -1;
  r = x->type.rank;
  n = mgopt_op_get_ints(p, red, "axes", &v);
  if (r < 1 || r > MGOPT_MAX_RANK || n < 1 || n > r) return -1;
  for (i = 0; i < n; i++) {
    int64_t a = mgopt__pu_norm_axis(v[i], r);
    if (a < 0) return -1;
    for (j = i; j > 0 && ax[j - 1] > a; j--) ax[j] = ax[j - 1];
    ax[j] = a;
  }
  for (i = 0; i + 1 < n; i++)
    if (ax[i] == ax[i + 1]) return -1;
  return (int32_t)n;
}

/* red2 is a reduction of `kind` over the same axes as m->red */
static int mgopt__fln_same_axes(mgopt_program *p, const mgopt__fln_match *m, const mgopt_op *red2, int32_t kind) {
  int64_t a[MGOPT_MAX_RANK], b[MGOPT_MAX_RANK];
  int32_t na, nb, i;
  if (!red2 || red2->kind != kind) return 0;
  na = mgopt__fln_axes(p, m->red, a);
  nb = mgopt__fln_axes(p, red2, b);
  if (na < 0 || na != nb) return 0;
  for (i = 0; i < na; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

/* from var (a reduce output): add(var, eps) then rsqrt; the rsqrt, with eps
   summed into m->eps; NULL when absent */
static mgopt_op *mgopt__fln_add_eps(mgopt__fln_match *m, mgopt_value *var, int32_t next_kind) {
  mgopt_op *ae = mgopt__fln_only(var, MGOPT_OP_add), *nx;
  double e;
  if (!ae || !mgopt__fln_scalar(mgopt__fln_other(ae, var), &e) || mgopt__fln_other(ae, var) == var) return NULL;
  if (mgopt_value_const(mgopt__fln_other(ae, var))->rank > var->type.rank) return NULL;
  m->eps = e;
  mgopt__fln_add(m, ae);
  nx = mgopt__fln_only(ae->outs[0], next_kind);
  if (!nx || mgopt_op_operand(nx, "x") != ae->outs[0]) return NULL;
  if (next_kind == MGOPT_OP_rsqrt) m->eps += mgopt_op_get_float(nx, "epsilon", 1e-12);
  mgopt__fln_add(m, nx);
  return nx;
}

/* d -> square -> reduce_mean (A); the variance op, NULL when absent */
static mgopt_op *mgopt__fln_variance(mgopt_program *p, mgopt__fln_match *m, mgopt_op *sq) {
  mgopt_op *var;
  if (!sq) return NULL;
  var = mgopt__fln_only(sq->outs[0], MGOPT_OP_reduce_mean);
  if (!var || !mgopt__fln_same_axes(p, m, var, MGOPT_OP_reduce_mean)) return NULL;
  mgopt__fln_add(m, sq);
  mgopt__fln_add(m, var);
  return var;
}

/* the square-like reader of d among us[0..n), or NULL */
static mgopt_op *mgopt__fln_find_square(mgopt_op *const *us, int32_t n, const mgopt_value *d) {
  int32_t k;
  for (k = 0; k < n; k++)
    if (mgopt__fln_is_square(us[k], d)) return us[k];
  return NULL;
}

/* the tail shared by patterns 1 and 4: r -> mul(r, gamma) read by mul(x, .)
   and mul(mean, .); the latter -> sub(beta, .) -> add with the former */
static int mgopt__fln_affine_tail(mgopt__fln_match *m, mgopt_op *r, mgopt_value *mean) {
  mgopt_op *gm = mgopt__fln_only(r->outs[0], MGOPT_OP_mul), *us[MGOPT__FLN_MAXUSE], *mx = NULL, *mm = NULL, *sb, *fin;
  mgopt_value *g, *gv;
  int32_t k;
  if (!gm) return 0;
  g = mgopt__fln_other(gm, r->outs[0]);
  if (!g || !mgopt_value_const(g)) return 0;
  gv = gm->outs[0];
  if (mgopt__fln_users(gv, us, MGOPT__FLN_MAXUSE) != 2) return 0;
  for (k = 0; k < 2; k++) {
    mgopt_value *o = us[k]->kind == MGOPT_OP_mul && us[k]->nouts == 1 ? mgopt__fln_other(us[k], gv) : NULL;
    if (o == m->x && !mx) mx = us[k];
    else if (o == mean && !mm) mm = us[k];
  }
  if (!mx || !mm) return 0;
  sb = mgopt__fln_only(mm->outs[0], MGOPT_OP_sub);
  if (!sb || mgopt_op_operand(sb, "y") != mm->outs[0] || !mgopt_value_const(mgopt_op_operand(sb, "x"))) return 0;
  fin = mgopt__fln_only(sb->outs[0], MGOPT_OP_add);
  if (!fin || mgopt__fln_other(fin, sb->outs[0]) != mx->outs[0]) return 0;
  if (mgopt__fln_only(mx->outs[0], MGOPT_OP_add) != fin) return 0;
  m->gamma = g;
  m->beta = mgopt_op_operand(sb, "x");
  mgopt__fln_add(m, gm);
  mgopt__fln_add(m, mx);
  mgopt__fln_add(m, mm);
  mgopt__fln_add(m, sb);
  mgopt__fln_add(m, fin);
  m->end = fin;
  return 1;
}

/* the sub(x, mean) readers of mean among us[0..n): count, into subs */
static int32_t mgopt__fln_subs(mgopt_op *const *us, int32_t n, const mgopt_value *x, const mgopt_value *mean,
                               mgopt_op **subs) {
  int32_t k, c = 0;
  for (k = 0; k < n; k++)
    if (us[k]->kind == MGOPT_OP_sub && us[k]->nouts == 1 && mgopt_op_operand(us[k], "x") == x &&
        mgopt_op_operand(us[k], "y") == mean)
      subs[c++] = us[k];
  return c;
}

/* 1: x*[g*rsqrt(var+eps)] + (beta - mean*[g*rsqrt(var+eps)]) */
static int mgopt__fln_p1(mgopt_program *p, mgopt__fln_match *m) {
  mgopt_value *mean = m->red->outs[0];
  mgopt_op *us[MGOPT__FLN_MAXUSE], *subs[MGOPT__FLN_MAXUSE], *sub, *var, *r, *dus[MGOPT__FLN_MAXUSE];
  if (mgopt__fln_users(mean, us, MGOPT__FLN_MAXUSE) != 2 || mgopt__fln_subs(us, 2, m->x, mean, subs) != 1) return 0;
  sub = subs[0];
  mgopt__fln_add(m, sub);
  if (mgopt__fln_users(sub->outs[0], dus, MGOPT__FLN_MAXUSE) != 1) return 0;
  var = mgopt__fln_variance(p, m, mgopt__fln_find_square(dus, 1, sub->outs[0]));
  r = var ? mgopt__fln_add_eps(m, var->outs[0], MGOPT_OP_rsqrt) : NULL;
  return r && mgopt__fln_affine_tail(m, r, mean);
}

/* 2: (x - mean) / pow(var + eps, 0.5) * gamma + beta (or sqrt; one or two subs) */
static int mgopt__fln_p2(mgopt_program *p, mgopt__fln_match *m) {
  mgopt_value *mean = m->red->outs[0], *g, *b;
  mgopt_op *us[MGOPT__FLN_MAXUSE], *subs[MGOPT__FLN_MAXUSE], *s0 = NULL, *s1 = NULL, *var, *pw, *dv, *gm, *ab;
  mgopt_op *dus[MGOPT__FLN_MAXUSE];
  int32_t nu = mgopt__fln_users(mean, us, MGOPT__FLN_MAXUSE), ns, k, nd;
  double e;
  if (nu < 1 || nu > 2 || (ns = mgopt__fln_subs(us, nu, m->x, mean, subs)) != nu) return 0;
  for (k = 0; k < ns; k++) {
    nd = mgopt__fln_users(subs[k]->outs[0], dus, MGOPT__FLN_MAXUSE);
    if (nd < 1 || nd > 2 || (ns == 2 && nd != 1)) return 0;
    if (!s0 && mgopt__fln_find_square(dus, nd, subs[k]->outs[0])) s0 = subs[k];
    else s1 = subs[k];
  }
  if (!s0) return 0;
  if (ns == 1) s1 = s0;
  if (!s1) return 0;
  mgopt__fln_add(m, s0);
  mgopt__fln_add(m, s1);
  nd = mgopt__fln_users(s0->outs[0], dus, MGOPT__FLN_MAXUSE);
  var = mgopt__fln_variance(p, m, mgopt__fln_find_square(dus, nd, s0->outs[0]));
  if (!var) return 0;
  {
    mgopt_op *ae = mgopt__fln_only(var->outs[0], MGOPT_OP_add);
    mgopt_op *aus[MGOPT__FLN_MAXUSE];
    if (!ae || mgopt__fln_users(ae->outs[0], aus, MGOPT__FLN_MAXUSE) != 1) return 0;
    pw = aus[0];
    if (pw->kind == MGOPT_OP_pow) {
      if (!mgopt__fln_scalar(mgopt_op_operand(pw, "y"), &e) || e != 0.5) return 0;
      pw = mgopt__fln_add_eps(m, var->outs[0], MGOPT_OP_pow);
    } else {
      pw = mgopt__fln_add_eps(m, var->outs[0], MGOPT_OP_sqrt);
    }
  }
  if (!pw) return 0;
  dv = mgopt__fln_only(pw->outs[0], MGOPT_OP_real_div);
  if (!dv || mgopt_op_operand(dv, "x") != s1->outs[0] || mgopt_op_operand(dv, "y") != pw->outs[0]) return 0;
  /* with one sub, its readers are exactly the square and this real_div */
  if (ns == 1 && (nd != 2 || (dus[0] != dv && dus[1] != dv))) return 0;
  gm = mgopt__fln_only(dv->outs[0], MGOPT_OP_mul);
  g = gm ? mgopt__fln_other(gm, dv->outs[0]) : NULL;
  if (!g || g == dv->outs[0] || !mgopt_value_const(g)) return 0;
  ab = mgopt__fln_only(gm->outs[0], MGOPT_OP_add);
  b = ab ? mgopt__fln_other(ab, gm->outs[0]) : NULL;
  if (!b || b == gm->outs[0] || !mgopt_value_const(b)) return 0;
  mgopt__fln_add(m, dv);
  mgopt__fln_add(m, gm);
  mgopt__fln_add(m, ab);
  m->gamma = g;
  m->beta = b;
  m->end = ab;
  return 1;
}

/* 3: x*rsqrt(var+eps) + (mean*rsqrt(var+eps))*(-1), no gamma or beta */
static int mgopt__fln_p3(mgopt_program *p, mgopt__fln_match *m) {
  mgopt_value *mean = m->red->outs[0], *rv;
  mgopt_op *us[MGOPT__FLN_MAXUSE], *subs[MGOPT__FLN_MAXUSE], *sub, *var, *r, *dus[MGOPT__FLN_MAXUSE], *m1 = NULL,
      *m2 = NULL, *neg, *fin;
  int32_t k;
  double e;
  if (mgopt__fln_users(mean, us, MGOPT__FLN_MAXUSE) != 2 || mgopt__fln_subs(us, 2, m->x, mean, subs) != 1) return 0;
  sub = subs[0];
  mgopt__fln_add(m, sub);
  if (mgopt__fln_users(sub->outs[0], dus, MGOPT__FLN_MAXUSE) != 1) return 0;
  var = mgopt__fln_variance(p, m, mgopt__fln_find_square(dus, 1, sub->outs[0]));
  r = var ? mgopt__fln_add_eps(m, var->outs[0], MGOPT_OP_rsqrt) : NULL;
  if (!r) return 0;
  rv = r->outs[0];
  if (mgopt__fln_users(rv, us, MGOPT__FLN_MAXUSE) != 2) return 0;
  for (k = 0; k < 2; k++) {
    mgopt_value *o = us[k]->kind == MGOPT_OP_mul && us[k]->nouts == 1 ? mgopt__fln_other(us[k], rv) : NULL;
    if (o == m->x && !m1) m1 = us[k];
    else if (o == mean && !m2) m2 = us[k];
  }
  if (!m1 || !m2) return 0;
  neg = mgopt__fln_only(m2->outs[0], MGOPT_OP_mul);
  if (!neg || !mgopt__fln_scalar(mgopt__fln_other(neg, m2->outs[0]), &e) || e != -1.0) return 0;
  fin = mgopt__fln_only(neg->outs[0], MGOPT_OP_add);
  if (!fin || mgopt__fln_other(fin, neg->outs[0]) != m1->outs[0] || mgopt__fln_only(m1->outs[0], MGOPT_OP_add) != fin)
    return 0;
  mgopt__fln_add(m, m1);
  mgopt__fln_add(m, m2);
  mgopt__fln_add(m, neg);
  mgopt__fln_add(m, fin);
  m->end = fin;
  return 1;
}

/* v is mul(s, k) with k exactly 1/n in its dtype; the mul */
static mgopt_op *mgopt__fln_mean_of_sum(mgopt_program *p, const mgopt_value *s, int64_t n) {
  mgopt_op *mm = mgopt__fln_only(s, MGOPT_OP_mul);
  mgopt_value *k = mm ? mgopt__fln_other(mm, s) : NULL;
  mgopt_tensor *kt = k && k != s ? mgopt_value_const(k) : NULL, *want;
  if (!kt || kt->numel != 1 || !mgopt_dtype_is_float((mgopt_dtype)kt->dtype) || kt->rank > s->type.rank) return NULL;
  want = mgopt_tensor_new(p, (mgopt_dtype)kt->dtype, 0, NULL);
  if (!want) return NULL;
  mgopt_tensor_set_f64(want, 0, 1.0 / (double)n);
  return mgopt_tensor_get_f64(kt, 0) == mgopt_tensor_get_f64(want, 0) ? mm : NULL;
}

/* 4: the sum form, rooted at reduce_sum(x) */
static int mgopt__fln_p4(mgopt_program *p, mgopt__fln_match *m) {
  int64_t ax[MGOPT_MAX_RANK], n = 1;
  int32_t na = mgopt__fln_axes(p, m->red, ax), k, nu;
  mgopt_value *mean;
  mgopt_op *mm, *us[MGOPT__FLN_MAXUSE], *msq = NULL, *xsq = NULL, *s2, *mm2, *sv, *r;
  const mgopt_use *u;
  if (na < 0) return 0;
  for (k = 0; k < na; k++) {
    mgopt_dim d = m->x->type.dims[ax[k]];
    if (!mgopt_dim_is_static(d) || d.v < 1) return 0;
    n *= d.v;
  }
  mm = mgopt__fln_mean_of_sum(p, m->red->outs[0], n);
  if (!mm) return 0;
  mgopt__fln_add(m, mm);
  mean = mm->outs[0];
  nu = mgopt__fln_users(mean, us, MGOPT__FLN_MAXUSE);
  if (nu != 2) return 0;
  for (k = 0; k < 2; k++)
    if (mgopt__fln_is_square(us[k], mean)) msq = us[k];
  if (!msq) return 0;
  for (u = m->x->uses; u && !xsq; u = u->next)
    if (u->op && u->op != m->red && mgopt__fln_is_square(u->op, m->x) &&
        mgopt__fln_same_axes(p, m, mgopt__fln_only(u->op->outs[0], MGOPT_OP_reduce_sum), MGOPT_OP_reduce_sum))
      xsq = u->op;
  if (!xsq) return 0;
  s2 = mgopt__fln_only(xsq->outs[0], MGOPT_OP_reduce_sum);
  mm2 = mgopt__fln_mean_of_sum(p, s2->outs[0], n);
  if (!mm2) return 0;
  sv = mgopt__fln_only(mm2->outs[0], MGOPT_OP_sub);
  if (!sv || mgopt_op_operand(sv, "x") != mm2->outs[0] || mgopt_op_operand(sv, "y") != msq->outs[0] ||
      mgopt__fln_only(msq->outs[0], MGOPT_OP_sub) != sv)
    return 0;
  mgopt__fln_add(m, msq);
  mgopt__fln_add(m, xsq);
  mgopt__fln_add(m, s2);
  mgopt__fln_add(m, mm2);
  mgopt__fln_add(m, sv);
  r = mgopt__fln_add_eps(m, sv->outs[0], MGOPT_OP_rsqrt);
  return r && mgopt__fln_affine_tail(m, r, mean);
}

/* 5: d*rsqrt(var+eps) over axes [1] of a rank-4 x, then optionally add(beta), mul(gamma) */
static int mgopt__fln_p5(mgopt_program *p, mgopt__fln_match *m) {
  mgopt_value *mean = m->red->outs[0], *d, *rv;
  mgopt_op *sub, *dus[MGOPT__FLN_MAXUSE], *var, *r, *mn, *ab, *mg;
  const int64_t *axv = NULL;
  int32_t nd;
  if (m->x->type.rank != 4 || mgopt_op_get_ints(p, m->red, "axes", &axv) != 1 || axv[0] != 1) return 0;
  sub = mgopt__fln_only(mean, MGOPT_OP_sub);
  if (!sub || mgopt_op_operand(sub, "x") != m->x || mgopt_op_operand(sub, "y") != mean) return 0;
  mgopt__fln_add(m, sub);
  d = sub->outs[0];
  nd = mgopt__fln_users(d, dus, MGOPT__FLN_MAXUSE);
  if (nd != 2) return 0;
  var = mgopt__fln_variance(p, m, mgopt__fln_find_square(dus, 2, d));
  r = var ? mgopt__fln_add_eps(m, var->outs[0], MGOPT_OP_rsqrt) : NULL;
  if (!r) return 0;
  rv = r->outs[0];
  mn = mgopt__fln_only(rv, MGOPT_OP_mul);
  if (!mn || mgopt__fln_other(mn, rv) != d || (dus[0] != mn && dus[1] != mn)) return 0;
  mgopt__fln_add(m, mn);
  m->end = mn;
  ab = mgopt__fln_only(mn->outs[0], MGOPT_OP_add);
  mg = ab ? mgopt__fln_only(ab->outs[0], MGOPT_OP_mul) : NULL;
  if (ab && mg) {
    mgopt_value *b = mgopt__fln_other(ab, mn->outs[0]), *g = mgopt__fln_other(mg, ab->outs[0]);
    if (b && b != mn->outs[0] && mgopt_value_const(b) && g && g != ab->outs[0] && mgopt_value_const(g)) {
      m->beta = b;
      m->gamma = g;
      mgopt__fln_add(m, ab);
      mgopt__fln_add(m, mg);
      m->end = mg;
    }
  }
  return 1;
}

/* 1 when t (rank <= 4, right-aligned against a rank-4 x) is constant along
   every axis but ch, where it has c entries or 1 */
static int mgopt__fln_per_channel(const mgopt_tensor *t, int32_t ch, int64_t c) {
  int32_t i;
  if (t->rank > 4) return 0;
  for (i = 0; i < t->rank; i++) {
    int32_t j = 4 - t->rank + i;
    if (t->shape[i] != 1 && (j != ch || t->shape[i] != c)) return 0;
  }
  return 1;
}

/* a (c) constant: t's per-channel values (t NULL: `fill`), times f's when given */
static mgopt_value *mgopt__fln_channel_const(mgopt_rewriter *rw, mgopt_op *pos, const char *name, mgopt_dtype dt,
                                             int64_t c, const mgopt_tensor *t, double fill, const mgopt_tensor *f) {
  mgopt_tensor *nt = mgopt_tensor_new(mgopt_rw_program(rw), dt, 1, &c);
  int64_t i;
  if (!nt) return NULL;
  for (i = 0; i < c; i++) {
    double v = t ? mgopt_tensor_get_f64(t, t->numel == 1 ? 0 : i) : fill;
    if (f) v *= mgopt_tensor_get_f64(f, f->numel == 1 ? 0 : i);
    mgopt_tensor_set_f64(nt, i, v);
  }
  return mgopt_rw_const(rw, pos, name, nt);
}

/* every matched op but the end is read only by matched ops */
static int mgopt__fln_closed(const mgopt__fln_match *m) {
  int32_t i, k, o;
  for (i = 0; i < m->n; i++) {
    if (m->ops[i] == m->end) continue;
    for (o = 0; o < m->ops[i]->nouts; o++) {
      const mgopt_use *u;
      const mgopt_value *v = m->ops[i]->outs[o];
      if (v->nblock_uses) return 0;
      for (u = v->uses; u; u = u->next) {
        for (k = 0; k < m->n && m->ops[k] != u->op; k++) {
        }
        if (k == m->n) return 0;
      }
    }
  }
  return 1;
}

/* builds the normalization for match m; 1 when it replaced the end op */
static int mgopt__fln_apply(mgopt_rewriter *rw, mgopt__fln_match *m) {
  static const char *const slots[3] = {"x", "gamma", "beta"};
  mgopt_program *p = mgopt_rw_program(rw);
  int64_t ax[MGOPT_MAX_RANK], axes[MGOPT_MAX_RANK], c = 0;
  int32_t na = mgopt__fln_axes(p, m->red, ax), r = m->x->type.rank, i, ch = -1, built = 0;
  mgopt_tensor *gt = m->gamma ? mgopt_value_const(m->gamma) : NULL, *bt = m->beta ? mgopt_value_const(m->beta) : NULL;
  mgopt_dtype dt = (mgopt_dtype)m->x->type.dtype;
  mgopt_value *vals[3], *out = m->end->outs[0], *cur;
  mgopt_op *made[4], *norm = NULL;
  const char *name = mgopt__pu_value_name(out);
  const int64_t *axv = NULL;
  int instance = 0, nhwc = 0;
  if (na < 0 || m->n >= MGOPT__FLN_MAXOPS || !mgopt__fln_closed(m)) return 0;
  if (!mgopt_dtype_is_float(dt) || out->type.dtype != dt || (gt && gt->dtype != dt) || (bt && bt->dtype != dt)) return 0;
  if (r == 4 && na == 2 && ((ax[0] == 2 && ax[1] == 3) || (ax[0] == 1 && ax[1] == 2)) && m->pattern != 5) {
    nhwc = ax[0] == 1;
    ch = nhwc ? 3 : 1;
    if (mgopt_dim_is_static(m->x->type.dims[ch])) {
      c = m->x->type.dims[ch].v;
      instance = m->pattern == 3 || (gt && bt && mgopt__fln_per_channel(gt, ch, c) && mgopt__fln_per_channel(bt, ch, c));
    }
  }
  vals[0] = m->x;
  vals[1] = vals[2] = NULL;
  if (m->pattern == 5) {
    /* layer_norm over axis 1 with (C) constants; beta applied before gamma */
    if (!mgopt_dim_is_static(m->x->type.dims[1])) return 0;
    c = m->x->type.dims[1].v;
    if (gt && (!mgopt__fln_per_channel(gt, 1, c) || !mgopt__fln_per_channel(bt, 1, c))) return 0;
    if (gt) {
      vals[1] = mgopt__fln_channel_const(rw, m->end, mgopt__pu_name2(p, name, "_gamma"), dt, c, gt, 0.0, NULL);
      vals[2] = mgopt__fln_channel_const(rw, m->end, mgopt__pu_name2(p, name, "_beta"), dt, c, bt, 0.0, gt);
      if (!vals[1] || !vals[2]) goto undo;
    }
  } else if (instance) {
    vals[1] = mgopt__fln_channel_const(rw, m->end, mgopt__pu_name2(p, name, "_gamma"), dt, c, gt, 1.0, NULL);
    vals[2] = mgopt__fln_channel_const(rw, m->end, mgopt__pu_name2(p, name, "_beta"), dt, c, bt, 0.0, NULL);
    if (!vals[1] || !vals[2]) goto undo;
  } else {
    /* layer_norm: trailing axes, gamma and beta shaped like those dims */
    if (!gt || !bt || gt->rank != na || bt->rank != na) return 0;
    for (i = 0; i < na; i++) {
      mgopt_dim d = m->x->type.dims[r - na + i];
      if (ax[i] != r - na + i || !mgopt_dim_is_static(d) || gt->shape[i] != d.v || bt->shape[i] != d.v) return 0;
    }
    vals[1] = m->gamma;
    vals[2] = m->beta;
  }
  cur = m->x;
  if (instance && nhwc) {
    static const int64_t to_nchw[4] = {0, 3, 1, 2};
    made[built] = mgopt_rw_create(rw, m->end, "transpose", mgopt__pu_name2(p, name, "_transpose_nhwc_nchw"), 1, slots,
                                  &cur, 1);
    if (!made[built]) goto undo;
    built++;
    if (mgopt_op_set_ints(made[built - 1], "perm", to_nchw, 4) || mgopt_op_infer(p, made[built - 1], NULL)) goto undo;
    cur = made[built - 1]->outs[0];
  }
  vals[0] = cur;
  norm = mgopt_rw_create(rw, m->end, instance ? "instance_norm" : "layer_norm",
                         instance && nhwc ? mgopt__pu_name2(p, name, "_instancenorm") : name, vals[1] ? 3 : 1, slots,
                         vals, 1);
  if (!norm) goto undo;
  made[built++] = norm;
  if (!instance) {
    if (m->pattern == 5) {
      axes[0] = 1;
      na = 1;
    } else {
      /* the reduction's own axes (their signs kept), in ascending order */
      int64_t n = mgopt_op_get_ints(p, m->red, "axes", &axv), j;
      for (j = 0; j < n; j++)
        for (i = 0; i < na; i++)
          if (mgopt__pu_norm_axis(axv[j], r) == ax[i]) axes[i] = axv[j];
    }
    if (mgopt_op_set_ints(norm, "axes", axes, na)) goto undo;
  }
  if (mgopt_op_set_float(norm, "epsilon", m->eps) || mgopt_op_infer(p, norm, NULL) ||
      !mgopt_program_target_accepts(p, norm))
    goto undo;
  cur = norm->outs[0];
  if (instance && nhwc) {
    static const int64_t to_nhwc[4] = {0, 2, 3, 1};
    made[built] = mgopt_rw_create(rw, m->end, "transpose", name, 1, slots, &cur, 1);
    if (!made[built]) goto undo;
    built++;
    if (mgopt_op_set_ints(made[built - 1], "perm", to_nhwc, 4) || mgopt_op_infer(p, made[built - 1], NULL)) goto undo;
    cur = made[built - 1]->outs[0];
  }
  if (!mgopt__pu_adopt_type(p, cur, out)) goto undo;
  cur->def->name = m->end->name ? m->end->name : cur->name;
  mgopt__pu_replace_value(rw, out, cur);
  mgopt__pu_sync_op_name(cur->def);
  {
    /* erase the matched ops, readers first, then the constants they read */
    mgopt_op *consts[2 * MGOPT__FLN_MAXOPS];
    int32_t nc = 0, s, k, left = m->n, progress = 1;
    for (i = 0; i < m->n; i++)
      for (s = 0; s < m->ops[i]->nslots; s++)
        for (k = 0; k < m->ops[i]->slots[s].n && nc < 2 * MGOPT__FLN_MAXOPS; k++) {
          mgopt_value *v = m->ops[i]->slots[s].uses[k].value;
          if (v && v->def && v->def->kind == MGOPT_OP_const) consts[nc++] = v->def;
        }
    while (left && progress) {
      progress = 0;
      for (i = 0; i < m->n; i++) {
        mgopt_op *op = m->ops[i];
        if (op->flags & MGOPT_OP_ERASED || !mgopt__op_is_dead(op)) continue;
        mgopt_rw_erase(rw, op);
        left--;
        progress = 1;
      }
    }
    for (k = 0; k < nc; k++) mgopt__pu_erase_if_dead(rw, consts[k]);
  }
  return 1;
undo:
  while (built > 0) mgopt_rw_erase(rw, made[--built]);
  for (i = 1; i < 3; i++)
    if (vals[i] && vals[i] != m->gamma && vals[i] != m->beta) mgopt__pu_erase_if_dead(rw, vals[i]->def);
  return 0;
}

static void mgopt__fln_start(mgopt__fln_match *m, mgopt_op *red, int pattern) {
  memset(m, 0, sizeof *m);
  m->red = red;
  m->x = mgopt_op_operand(red, "x");
  m->pattern = pattern;
  mgopt__fln_add(m, red);
}

static int mgopt__fln_mean(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  int64_t ax[MGOPT_MAX_RANK];
  mgopt__fln_match m;
  MGOPT__UNUSED(ud);
  if (mgopt__fln_axes(p, op, ax) < 0) return 0;
  mgopt__fln_start(&m, op, 1);
  if (mgopt__fln_p1(p, &m) && mgopt__fln_apply(rw, &m)) return 1;
  mgopt__fln_start(&m, op, 2);
  if (mgopt__fln_p2(p, &m) && mgopt__fln_apply(rw, &m)) return 1;
  mgopt__fln_start(&m, op, 3);
  if (mgopt__fln_p3(p, &m) && mgopt__fln_apply(rw, &m)) return 1;
  mgopt__fln_start(&m, op, 5);
  return mgopt__fln_p5(p, &m) && mgopt__fln_apply(rw, &m);
}

static int mgopt__fln_sum(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  int64_t ax[MGOPT_MAX_RANK];
  mgopt__fln_match m;
  MGOPT__UNUSED(ud);
  if (mgopt__fln_axes(p, op, ax) < 0) return 0;
  mgopt__fln_start(&m, op, 4);
  return mgopt__fln_p4(p, &m) && mgopt__fln_apply(rw, &m);
}

static const mgopt_pattern mgopt__fln_patterns[] = {
    {"normalization_mean", MGOPT_OP_reduce_mean, NULL, 1, mgopt__fln_mean, NULL},
    {"normalization_sum", MGOPT_OP_reduce_sum, NULL, 1, mgopt__fln_sum, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_layernorm_or_instancenorm,
                           "decomposed layer or instance normalizations (five patterns) become layer_norm or instance_norm",
                           mgopt__fln_patterns);
/* src/passes/onnx/fold_shape_ops.c — onnx::fold_shape_ops: a Shape of a statically shaped tensor, and a ConstantOfShape of a constant shape, become constants.

   Spec: ONNX Runtime's basic-level constant folding, for the two ONNX ops
   that have no canonical form (they stay opaque as onnx::Shape and
   onnx::ConstantOfShape) and so no folding kernel: Shape needs only its
   input's static dims, ConstantOfShape only its constant shape. The
   constants then fold on through const_elimination (the slice and concat
   of a shape computation), and a Pad or Resize whose sizes were computed
   from a shape reads constants.

   Before:
     main(%x: (1, 3, 8, 8, fp32)) {
       %s: (4, int64) = onnx::Shape(in0=%x)
       %h: (2, int64) = onnx::Shape(in0=%x, start=2)
       %c: (2, int64)* = const(val=[2, 3])
       %z: (2, 3, fp32) = onnx::ConstantOfShape(in0=%c, value=tensor<(1, fp32)>([0.5]))
     } -> (%s, %h, %z)
   After:
     main(%x: (1, 3, 8, 8, fp32)) {
       %s: (4, int64)* = const(val=[1, 3, 8, 8])
       %h: (2, int64)* = const(val=[8, 8])
       %c: (2, int64)* = const(val=[2, 3])
       %z: (2, 3, fp32)* = const(val=[[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]])
     } -> (%s, %h, %z)

   Fires on: onnx::Shape with one input of known rank whose dims in
   [start, end) (opset 15's attributes, negative counted from the end,
   clamped as ONNX does) are all static; onnx::ConstantOfShape whose shape
   is a constant 1-d integer tensor of positive dims with at most 2^20
   elements in all, and whose value (default: fp32 0) is one element of a
   whole-byte dtype. The constant takes the output's name (function outputs
   keep theirs); operands left unused stay for dead_code_elimination.
   Must not fire: a symbolic or unknown dim in the range; an input of
   unknown rank or a non-tensor; a shape computed at run time, a zero or
   negative dim, more elements than the limit (the model would carry the
   whole tensor); a value that is not one element; when the constant's
   static type does not suit a reader of the output
   (mgopt__pu_replace_static_fits).
   Cost: one worklist run, O(ops); a ConstantOfShape writes its elements
   once. */

#define MGOPT__FSO_MAX_ELEMENTS ((int64_t)1 << 20)

/* Replaces op's only output by constant t. */
static int mgopt__fso_replace(mgopt_rewriter *rw, mgopt_op *op, mgopt_tensor *t) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *c;
  if (!t || !mgopt__pu_replace_static_fits(p, op->outs[0], (mgopt_dtype)t->dtype, t->rank, t->shape)) return 0;
  c = mgopt_rw_const(rw, op, op->outs[0]->name, t);
  if (!c) return 0;
  mgopt_rw_replace_op(rw, op, &c);
  return 1;
}

static int mgopt__fso_shape(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "in0");
  int64_t start, end, n, i;
  mgopt_tensor *t;
  MGOPT__UNUSED(ud);
  if (!mgopt__pu_onnx_shape_range(op, &start, &end)) return 0;
  n = end - start;
  for (i = start; i < end; i++)
    if (!mgopt_dim_is_static(x->type.dims[i])) return 0;
  t = mgopt_tensor_new(mgopt_rw_program(rw), MGOPT_DT_INT64, 1, &n);
  if (!t) return 0;
  for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, x->type.dims[start + i].v);
  return mgopt__fso_replace(rw, op, t);
}

static int mgopt__fso_constant_of_shape(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *sv = mgopt_op_operand(op, "in0");
  mgopt_tensor *st = sv ? mgopt_value_const(sv) : NULL, *t;
  const mgopt_attr *va = mgopt_op_attr(op, "value");
  const mgopt_tensor *v = va && va->kind == MGOPT_ATTR_TENSOR ? va->u.t : NULL;
  int64_t shape[MGOPT_MAX_RANK], numel = 1, i;
  size_t es;
  const uint8_t *src;
  uint8_t *dst;
  float zero = 0.0f;
  MGOPT__UNUSED(ud);
  if (!st || op->nouts != 1 || op->nblocks || mgopt_op_operand_count(op) != 1 || st->rank != 1 ||
      !mgopt_dtype_is_int((mgopt_dtype)st->dtype) || st->numel > MGOPT_MAX_RANK)
    return 0;
  if (va && (!v || v->numel != 1 || v->dtype == MGOPT_DT_STRING || mgopt_dtype_bits((mgopt_dtype)v->dtype) % 8 ||
             v->nbytes * 8 != (size_t)mgopt_dtype_bits((mgopt_dtype)v->dtype)))
    return 0;
  for (i = 0; i < st->numel; i++) {
    shape[i] = mgopt_tensor_get_i64(st, i);
    if (shape[i] <= 0 || !mgopt__mul_i64(numel, shape[i], &numel) || numel > MGOPT__FSO_MAX_ELEMENTS) return 0;
  }
  t = mgopt_tensor_new(p, v ? (mgopt_dtype)v->dtype : MGOPT_DT_FP32, (int32_t)st->numel, shape);
  if (!t) return 0;
  es = v ? v->nbytes : sizeof zero;
  src = v ? (const uint8_t *)v->data : (const uint8_t *)&zero;
  dst = (uint8_t *)t->data;
  for (i = 0; i < numel; i++) memcpy(dst + (size_t)i * es, src, es);
  return mgopt__fso_replace(rw, op, t);
}

static const mgopt_pattern mgopt__fso_patterns[] = {
    MGOPT__OPAQUE_PATTERN("fold_shape", "onnx::Shape", 1, mgopt__fso_shape),
    MGOPT__OPAQUE_PATTERN("fold_constant_of_shape", "onnx::ConstantOfShape", 1, mgopt__fso_constant_of_shape),
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, fold_shape_ops,
                           "a Shape of a statically shaped tensor, and a ConstantOfShape of a constant shape, become constants",
                           mgopt__fso_patterns);
/* src/passes/onnx/merge_consecutive_expand_dims.c — onnx::merge_consecutive_expand_dims: expand_dims(expand_dims(x)) -> one expand_dims.

   Spec: ONNX Runtime's basic level leaves one Unsqueeze where a model has a
   chain of them (Unsqueeze and Reshape chains); merge_consecutive_reshapes
   covers reshapes, and fuse_squeeze_expand_dims only a squeeze followed by
   an expand_dims. ONNX Unsqueeze is imported as expand_dims.

   Before:
     main(%x: (2, 3, fp32)) {
       %a: (1, 2, 3, fp32) = expand_dims(x=%x, axes=[0])
       %b: (1, 2, 3, 1, fp32) = expand_dims(x=%a, axes=[-1])
     } -> (%b)
   After:
     main(%x: (2, 3, fp32)) {
       %b: (1, 2, 3, 1, fp32) = expand_dims(x=%x, axes=[0, 3])
     } -> (%b)

   Fires on: an expand_dims whose input is made by an expand_dims that has
   no other use and is not a block output, in any block, when the inner
   input's rank is known. Axes count in the output's dims (negative from
   its end, as ONNX Unsqueeze and MIL's expand_dims read them): the outer
   op's axes stay where they are, and each inner axis moves to the output
   position that the outer op leaves for that dim. The outer op keeps its
   output (name and type); the inner one is erased.
   Must not fire: an inner expand_dims with another use or that is a block
   output (both would then stay: no gain); an input of unknown rank; axes
   out of range or repeated (left to the verifier's complaint).
   Cost: worklist patterns, O(ops x rank). */

/* Normalizes n axes of an output of rank r into sorted, checked positions; 0 when out of range or repeated. */
static int mgopt__mce_axes(const int64_t *v, int64_t n, int64_t r, int64_t *out) {
  int64_t i, j;
  if (n < 1 || n > r || r > MGOPT_MAX_RANK) return 0;
  for (i = 0; i < n; i++) {
    int64_t a = v[i] < 0 ? v[i] + r : v[i];
    if (a < 0 || a >= r) return 0;
    for (j = i; j > 0 && out[j - 1] > a; j--) out[j] = out[j - 1];
    out[j] = a;
  }
  for (i = 1; i < n; i++)
    if (out[i] == out[i - 1]) return 0;
  return 1;
}

static int mgopt__mce_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *mid = mgopt_op_operand(op, "x"), *x;
  mgopt_op *inner = mgopt__pu_def_of(mid, MGOPT_OP_expand_dims);
  const int64_t *va = NULL, *vb = NULL;
  int64_t na, nb, r0, r1, r2, a[MGOPT_MAX_RANK], b[MGOPT_MAX_RANK], pos[MGOPT_MAX_RANK], all[MGOPT_MAX_RANK];
  int64_t merged[MGOPT_MAX_RANK];
  int64_t i, k, n;
  MGOPT__UNUSED(ud);
  if (!inner || inner == op || op->nouts != 1 || !mgopt__pu_single_use(mid) || mgopt__pu_is_block_output(mid)) return 0;
  x = mgopt_op_operand(inner, "x");
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR || x->type.rank < 0) return 0;
  na = mgopt_op_get_ints(p, inner, "axes", &va);
  nb = mgopt_op_get_ints(p, op, "axes", &vb);
  r0 = x->type.rank;
  r1 = r0 + na;
  r2 = r1 + nb;
  if (na < 1 || nb < 1 || !mgopt__mce_axes(va, na, r1, a) || !mgopt__mce_axes(vb, nb, r2, b)) return 0;
  /* pos[j]: where dim j of the inner output lands in the outer output */
  for (i = 0, k = 0, n = 0; i < r2; i++) {
    if (k < nb && b[k] == i) {
      k++;
      continue;
    }
    pos[n++] = i;
  }
  for (i = 0; i < nb; i++) all[i] = b[i];
  for (i = 0; i < na; i++) all[nb + i] = pos[a[i]];
  if (!mgopt__mce_axes(all, na + nb, r2, merged)) return 0;
  if (mgopt_rw_set_operand(rw, op, "x", x) != MGOPT_OK || mgopt_op_set_ints(op, "axes", merged, na + nb) != MGOPT_OK)
    return 0;
  mgopt_rw_modified(rw, op);
  if (mid->nuses == 0) mgopt_rw_erase(rw, inner);
  return 1;
}

static const mgopt_pattern mgopt__mce_patterns[] = {
    {"expand_dims_expand_dims", MGOPT_OP_expand_dims, NULL, 1, mgopt__mce_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, merge_consecutive_expand_dims,
                           "collapse a chain of expand_dims (ONNX Unsqueeze) into one", mgopt__mce_patterns);
/* src/passes/fusion/canonicalize_inplace_pattern.c — common::canonicalize_inplace_pattern: a state write right after the op computing its value.

   Spec: reference mil-passes.md §1.1 (entry 74) and §2.2; coremltools'
   optimize_state.py. An in-place update reads as read_state -> op ->
   coreml_update_state; the write may sit anywhere after the op, and the
   canonical order puts it immediately after (prefer_state_in_downstream
   relies on it).

   Before:
     main(%x: (2, fp16), %s: state(2, fp16)) {
       %r: (2, fp16) = read_state(input=%s)
       %m: (2, fp16) = mul(x=%r, y=%x)
       %a: (2, fp16) = add(x=%m, y=%x)
       %u: (2, fp16) = coreml_update_state(state=%s, value=%m)
     } -> (%a, %u)
   After:
     main(%x: (2, fp16), %s: state(2, fp16)) {
       %r: (2, fp16) = read_state(input=%s)
       %m: (2, fp16) = mul(x=%r, y=%x)
       %u: (2, fp16) = coreml_update_state(state=%s, value=%m)
       %a: (2, fp16) = add(x=%m, y=%x)
     } -> (%a, %u)

   Fires on: a coreml_update_state whose value is made by an op X of the same
   block that is not itself a state op; the write moves to just after X (after
   the writes of X's outputs already there, in their order). It keeps its
   name and its uses (they all come after its old place).
   Must not fire: when the write already follows X that way; when X sits in
   another block (a write inside a branch or loop body stays there); when an
   op between X and the write reads or writes the same state (a read_state
   there must still see the old contents: the reference moves the write
   regardless, mgopt does not), or has side effects (mgopt__op_has_effects);
   when the state value is made after X.
   Cost: the writes come from the op index; each checks the uses of its state
   (label comparisons) and the effectful ops of the function (a binary search
   in their labels): O(ops + writes x uses of their state). */

/* 1 when some op other than u reading state s lies strictly between x and u
   (ops nested in x or in an op between count). */
static int mgopt__cip_state_touched(const mgopt_value *s, const mgopt_op *x, const mgopt_op *u) {
  const mgopt_use *k;
  for (k = s->uses; k; k = k->next)
    if (k->op && k->op != u && MGOPT__OP_PRECEDES(x, k->op) && MGOPT__OP_PRECEDES(k->op, u)) return 1;
  return 0;
}

/* 1 when one of the effectful ops eff[0..n) (in program order) lies strictly between x and u. */
static int mgopt__cip_effect_between(mgopt_op *const *eff, int64_t n, const mgopt_op *x, const mgopt_op *u) {
  int64_t lo = 0, hi = n;
  while (lo < hi) { /* the first effectful op after x */
    int64_t mid = lo + (hi - lo) / 2;
    if (MGOPT__OP_PRECEDES(eff[mid], x) || eff[mid] == x) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && MGOPT__OP_PRECEDES(eff[lo], u);
}

typedef struct mgopt__cip_walk {
  mgopt_program *p;
  mgopt_op **eff;
  int64_t n, cap;
  int oom;
} mgopt__cip_walk;

static int mgopt__cip_collect(mgopt_op *op, void *ud) {
  mgopt__cip_walk *w = (mgopt__cip_walk *)ud;
  if (op->kind == MGOPT_OP_coreml_update_state || !mgopt__op_has_effects(op)) return 0;
  if (!mgopt__grow(&w->p->alloc, (void **)&w->eff, &w->cap, w->n + 1, sizeof *w->eff)) {
    w->oom = 1;
    return 1;
  }
  w->eff[w->n++] = op;
  return 0;
}

/* Moves u after its value's producer when that is legal; 1 if it moved. */
static int mgopt__cip_try(mgopt_op *u, void *ud) {
  const mgopt__cip_walk *w = (const mgopt__cip_walk *)ud;
  mgopt_value *v = mgopt_op_operand(u, "value"), *s = mgopt_op_operand(u, "state");
  mgopt_op *x, *pos, *a;
  if (!v || !s || !v->def) return 0;
  x = v->def;
  if (x->parent != u->parent || (mgopt_op_traits(x) & MGOPT_TRAIT_STATE)) return 0;
  for (pos = x->next; pos && pos != u && pos->kind == MGOPT_OP_coreml_update_state; pos = pos->next) {
    mgopt_value *pv = mgopt_op_operand(pos, "value");
    if (!pv || pv->def != x) break;
  }
  if (!pos || pos == u) return 0;
  a = s->def ? mgopt__pu_ancestor_in(s->def, u->parent) : NULL;
  if (a && a != x && !MGOPT__OP_PRECEDES(a, x)) return 0;
  if (mgopt__cip_state_touched(s, x, u)) return 0;
  if (mgopt__cip_effect_between(w->eff, w->n, x, u)) return 0;
  mgopt_op_move_before(u, pos);
  return 1;
}

/* The effectful ops of fn, in program order. */
static int mgopt__cip_prepare(mgopt_function *fn, void *ud) {
  mgopt__cip_walk *w = (mgopt__cip_walk *)ud;
  w->n = 0;
  mgopt_block_walk(fn->body, mgopt__cip_collect, w);
  return !w->oom;
}

static mgopt_status mgopt__cip_run(mgopt_pass_ctx *ctx) {
  mgopt__cip_walk w;
  mgopt_status st;
  memset(&w, 0, sizeof w);
  w.p = ctx->program;
  st = mgopt__pu_each_state_write(ctx, mgopt__cip_prepare, mgopt__cip_try, &w);
  if (w.eff) mgopt__heap_free(&w.p->alloc, w.eff, sizeof *w.eff * (size_t)w.cap);
  return st;
}

MGOPT__DEFINE_PASS(fusion, common, canonicalize_inplace_pattern,
                   "move each state write right after the op that computes its value", mgopt__cip_run);
/* src/passes/fusion/prefer_state_in_downstream.c — common::prefer_state_in_downstream: readers after a state write read the write's output.

   Spec: reference mil-passes.md §1.1 (entry 75) and §2.2; coremltools'
   optimize_state.py. After coreml_update_state(state, value), a later
   reader of `value` may read the write's output instead (the same tensor,
   now held by the state), so the functional value need not stay alive.
   canonicalize_inplace_pattern runs first and puts the write right after
   the op computing the value, so every later reader is reached.

   Before:
     main(%x: (2, fp16), %s: state(2, fp16)) {
       %r: (2, fp16) = read_state(input=%s)
       %m: (2, fp16) = mul(x=%r, y=%x)
       %u: (2, fp16) = coreml_update_state(state=%s, value=%m)
       %a: (2, fp16) = add(x=%m, y=%x)
     } -> (%a)
   After:
     main(%x: (2, fp16), %s: state(2, fp16)) {
       %r: (2, fp16) = read_state(input=%s)
       %m: (2, fp16) = mul(x=%r, y=%x)
       %u: (2, fp16) = coreml_update_state(state=%s, value=%m)
       %a: (2, fp16) = add(x=%u, y=%x)
     } -> (%a)

   Fires on: every coreml_update_state U whose value V has another reader
   that is not a coreml_update_state. Every use of V after U in U's block
   (operands of later ops, nested blocks of later ops included, and the
   block's outputs) then reads U's output. When V is an output of a function
   body, U's output takes its place and its name, and V takes U's old name
   (a function's output names survive).
   Must not fire: when V has no other reader, or only other state writes;
   when V is both an argument and an output of U's block; on uses before U
   or outside U's block; on a function output when U's output is already one
   (then only the op uses move); when the declared types of V and U's output
   differ.
   Cost: the writes come from the op index; each walks V's use list (label
   comparisons): O(writes x uses of their values). */

/* 1 when the use k of v lies after u in u's block (its op, or the op owning
   the block it is an output of, is u's block's op after u or nested in one). */
static int mgopt__psd_after(const mgopt_use *k, const mgopt_op *u) {
  mgopt_op *at = k->op ? k->op : k->block->parent_op;
  mgopt_op *a;
  if (!at) return 0; /* an output of a function body */
  a = mgopt__pu_ancestor_in(at, u->parent);
  return a && a != u && MGOPT__OP_PRECEDES(u, a);
}

static int mgopt__psd_is_arg(const mgopt_value *v, const mgopt_block *b) { return !v->def && v->owner == b; }

static int mgopt__psd_try(mgopt_op *u) {
  mgopt_value *v = mgopt_op_operand(u, "value"), *out = u->outs[0];
  mgopt_block *b = u->parent;
  mgopt_use *k, *next;
  int others = 0, nonwrite = 0, out_is_func = mgopt__pu_is_func_output(out), moved = 0, renamed = 0;
  if (!v || !mgopt_type_equal(&v->type, &out->type)) return 0;
  for (k = v->uses; k; k = k->next) {
    if (!k->op) {
      if (k->block == b && mgopt__psd_is_arg(v, b)) return 0;
      continue;
    }
    if (k->op == u) continue;
    others = 1;
    if (k->op->kind != MGOPT_OP_coreml_update_state) nonwrite = 1;
  }
  if (!others || !nonwrite) return 0;
  for (k = v->uses; k; k = next) {
    next = k->next;
    if (k->op && k->op != u && mgopt__psd_after(k, u)) {
      mgopt_op_set_operand_at(k->op, k->slot, k->index, out);
      moved = 1;
    } else if (!k->op && (k->block == b ? !(b->parent_op == NULL && out_is_func) : mgopt__psd_after(k, u))) {
      if (k->block == b && b->parent_op == NULL && !renamed) { /* a function output: its name goes along */
        const char *vn = v->name, *on = out->name;
        renamed = 1;
        mgopt__pu_rename(out, vn);
        mgopt__pu_rename(v, on);
      }
      mgopt_block_set_output(k->block, k->index, out);
      moved = 1;
    }
  }
  return moved;
}

static int mgopt__psd_visit(mgopt_op *u, void *ud) {
  MGOPT__UNUSED(ud);
  return mgopt__psd_try(u);
}

static mgopt_status mgopt__psd_run(mgopt_pass_ctx *ctx) { return mgopt__pu_each_state_write(ctx, NULL, mgopt__psd_visit, NULL); }

MGOPT__DEFINE_PASS(fusion, common, prefer_state_in_downstream,
                   "later readers of a value written to a state read the write's output", mgopt__psd_run);
/* src/passes/onnx/name_fix.c — onnx::name_fix: every value and op gets a name, unique in its scope.

   Spec: onnx_ir_optimizer_passes.txt, "name_fix" (model scope: the ONNX
   Script name-fix pass). In every function, in this order: the body's
   inputs, its outputs, the constants that stand for initializers (consts not
   read from a Constant node), then each op in program order: its name, its
   operands, its outputs, then its nested blocks the same way (arguments,
   outputs, ops). A value without a name is named "v", an op without one
   "node"; a name already taken becomes "<name>_<k>" with the first k (from a
   counter per base name, separate for values and ops) that is free. Value
   names are unique within a block and the blocks around it; op names within
   a block.

   Before:
     main(%x: (2, fp32)) {
       %a: (2, fp32) = relu(x=%x, name="n")
       %b: (2, fp32) = exp(x=%a, name="n")
       %c: (2, fp32) = onnx::Celu(in0=%b, name="n")
     } -> (%c)
   After:
     main(%x: (2, fp32)) {
       %a: (2, fp32) = relu(x=%x, name="n")
       %b: (2, fp32) = exp(x=%a, name="n_1")
       %c: (2, fp32) = onnx::Celu(in0=%b, name="n_2")
     } -> (%c)

   Fires on: ops and values without a name or with a name taken before them.
   Must not fire: on the inputs and outputs of a function (a model's
   interface keeps its names: they are taken first, so only a clash between
   two of them could rename one, and it is left as it is); on the op names
   of initializer constants (no ONNX node); on absent optional outputs.
   Cost: one walk, hash maps of names (a nested block's names are undone on
   leaving it): O(ops + values). */

typedef struct mgopt__nf_undo {
  mgopt__map *m;
  uint64_t key;
  int64_t prev;
} mgopt__nf_undo;

typedef struct mgopt__nf {
  mgopt_program *p;
  mgopt__map vals;      /* value name -> 1 + level that took it (0: free) */
  mgopt__map ops;       /* op name -> 1 + level that took it (taken only at that level) */
  mgopt__map vcount;    /* base name -> last suffix tried, for values */
  mgopt__map ocount;    /* the same for ops */
  mgopt__map seen;      /* values already named */
  mgopt__nf_undo *undo;
  int64_t nundo, cap;
  int32_t level;
  mgopt_buf buf;
  int oom;
  int64_t renamed;
} mgopt__nf;

static int mgopt__nf_taken(const mgopt__nf *s, int is_op, const char *name) {
  const mgopt__map_slot *sl = mgopt__map_find(is_op ? &s->ops : &s->vals, mgopt__map_ptr_key(name));
  if (!sl) return 0;
  return is_op ? sl->v.i == s->level + 1 : sl->v.i > 0;
}

static void mgopt__nf_take(mgopt__nf *s, int is_op, const char *name) {
  mgopt__map *m = is_op ? &s->ops : &s->vals;
  mgopt__map_slot *sl = mgopt__map_get(m, mgopt__map_ptr_key(name), NULL);
  if (!sl || !mgopt__grow(&s->p->alloc, (void **)&s->undo, &s->cap, s->nundo + 1, sizeof *s->undo)) {
    s->oom = 1;
    return;
  }
  s->undo[s->nundo].m = m;
  s->undo[s->nundo].key = mgopt__map_ptr_key(name);
  s->undo[s->nundo++].prev = sl->v.i;
  sl->v.i = s->level + 1;
}

/* The first free name of base, base_1, base_2, ... (counting on from the last
   suffix tried for base), taken. NULL on OOM. */
static const char *mgopt__nf_fresh(mgopt__nf *s, int is_op, const char *base) {
  const char *name = base;
  mgopt__map_slot *c;
  while (name && mgopt__nf_taken(s, is_op, name)) {
    c = mgopt__map_get(is_op ? &s->ocount : &s->vcount, mgopt__map_ptr_key(base), NULL);
    if (!c) break;
    c->v.i++;
    s->buf.len = 0;
    mgopt__buf_printf(&s->buf, "%s_%lld", base, (long long)c->v.i);
    name = s->buf.oom ? NULL : mgopt_program_intern(s->p, s->buf.data, s->buf.len);
  }
  if (!name || (name == base && mgopt__nf_taken(s, is_op, name))) {
    s->oom = 1;
    return NULL;
  }
  mgopt__nf_take(s, is_op, name);
  return name;
}

static void mgopt__nf_value(mgopt__nf *s, mgopt_value *v, int keep) {
  int added = 0;
  mgopt__map_slot *sl;
  const char *name;
  if (!v || (v->flags & MGOPT_VALUE_ABSENT)) return;
  sl = mgopt__map_get(&s->seen, mgopt__map_ptr_key(v), &added);
  if (!sl) {
    s->oom = 1;
    return;
  }
  if (!added) return;
  if (v->name && (keep || !mgopt__nf_taken(s, 0, v->name))) {
    mgopt__nf_take(s, 0, v->name);
    return;
  }
  name = mgopt__nf_fresh(s, 0, v->name ? v->name : mgopt_program_intern_cstr(s->p, "v"));
  if (name && mgopt_value_set_name(v, name) == MGOPT_OK) s->renamed++;
}

static void mgopt__nf_block(mgopt__nf *s, mgopt_block *b, int depth);

static void mgopt__nf_op(mgopt__nf *s, mgopt_op *op, int depth) {
  int32_t i, k;
  int init = !op->parent->parent_op && op->kind == MGOPT_OP_const && !(op->flags & MGOPT_OP_ONNX_CONSTANT_NODE);
  if (!init) {
    if (op->name && !mgopt__nf_taken(s, 1, op->name)) {
      mgopt__nf_take(s, 1, op->name);
    } else {
      const char *name = mgopt__nf_fresh(s, 1, op->name ? op->name : mgopt_program_intern_cstr(s->p, "node"));
      if (name && mgopt_op_set_name(op, name) == MGOPT_OK) s->renamed++;
    }
  }
  for (i = 0; i < op->nslots; i++)
    for (k = 0; k < op->slots[i].n; k++) mgopt__nf_value(s, op->slots[i].uses[k].value, 0);
  for (i = 0; i < op->nouts; i++) mgopt__nf_value(s, op->outs[i], 0);
  for (i = 0; i < op->nblocks && !s->oom; i++) mgopt__nf_block(s, op->blocks[i], depth + 1);
}

/* A block in a new scope: value names seen around it stay taken, op names
   start afresh; what it takes is given back on leaving. */
static void mgopt__nf_block(mgopt__nf *s, mgopt_block *b, int depth) {
  int64_t mark = s->nundo;
  int fbody = b->parent_op == NULL;
  mgopt_op *op;
  int32_t i;
  if (depth > 256) { /* deeper than any reader builds: leave the names alone */
    return;
  }
  s->level++;
  for (i = 0; i < b->nargs; i++) mgopt__nf_value(s, b->args[i], fbody);
  for (i = 0; i < b->nouts; i++) mgopt__nf_value(s, b->outs[i]->value, fbody);
  if (fbody)
    for (op = b->first; op; op = op->next)
      if (op->kind == MGOPT_OP_const && !(op->flags & MGOPT_OP_ONNX_CONSTANT_NODE)) mgopt__nf_value(s, op->outs[0], 0);
  for (op = b->first; op && !s->oom; op = op->next) mgopt__nf_op(s, op, depth);
  while (s->nundo > mark) {
    const mgopt__nf_undo *u = &s->undo[--s->nundo];
    mgopt__map_slot *sl = mgopt__map_find(u->m, u->key);
    if (sl) sl->v.i = u->prev;
  }
  s->level--;
}

static mgopt_status mgopt__nf_run(mgopt_pass_ctx *ctx) {
  mgopt__nf s;
  int32_t f;
  memset(&s, 0, sizeof s);
  s.p = ctx->program;
  s.buf.alloc = &s.p->alloc;
  mgopt__map_init(&s.vals, &s.p->alloc);
  mgopt__map_init(&s.ops, &s.p->alloc);
  mgopt__map_init(&s.vcount, &s.p->alloc);
  mgopt__map_init(&s.ocount, &s.p->alloc);
  mgopt__map_init(&s.seen, &s.p->alloc);
  for (f = 0; f < mgopt_program_function_count(s.p) && !s.oom; f++) {
    /* names are unique per function; the counters start afresh too */
    mgopt__map_free(&s.vcount);
    mgopt__map_free(&s.ocount);
    mgopt__nf_block(&s, mgopt_program_function_at(s.p, f)->body, 0);
  }
  ctx->rewrites += s.renamed;
  mgopt__map_free(&s.vals);
  mgopt__map_free(&s.ops);
  mgopt__map_free(&s.vcount);
  mgopt__map_free(&s.ocount);
  mgopt__map_free(&s.seen);
  if (s.undo) mgopt__heap_free(&s.p->alloc, s.undo, sizeof *s.undo * (size_t)s.cap);
  mgopt_buf_free(&s.buf);
  return s.oom ? mgopt_diag_set(ctx->diag, mgopt__oom(s.p), "name_fix: out of memory") : MGOPT_OK;
}

MGOPT__DEFINE_PASS(onnx, onnx, name_fix, "give every value and op a name unique in its scope", mgopt__nf_run);
/* src/passes/onnx/remove_redundant_transpose_add_forests.c — onnx::remove_redundant_transpose_add_forests: a forest of adds between a transpose and its inverse runs in the untransposed layout.

   Spec: onnx_ir_optimizer_passes.txt, "remove_redundant_transpose_add_forests"
   (collapse broadcast-add forests introduced by layout conversions when every
   branch can be safely rewired); the match follows the ONNX IR optimizer's.

   Before:
     main(%a: (1, 3, 4, 5, fp32), %b: (1, 3, 4, 5, fp32), %c: (1, 3, 4, 5, fp32)) {
       %ta: (1, 4, 5, 3, fp32) = transpose(x=%a, perm=[0, 2, 3, 1])
       %tb: (1, 4, 5, 3, fp32) = transpose(x=%b, perm=[0, 2, 3, 1])
       %tc: (1, 4, 5, 3, fp32) = transpose(x=%c, perm=[0, 2, 3, 1])
       %s: (1, 4, 5, 3, fp32) = add(x=%ta, y=%tb)
       %u: (1, 4, 5, 3, fp32) = add(x=%s, y=%tc)
       %y: (1, 3, 4, 5, fp32) = transpose(x=%u, perm=[0, 3, 1, 2])
     } -> (%y)
   After:
     main(%a: (1, 3, 4, 5, fp32), %b: (1, 3, 4, 5, fp32), %c: (1, 3, 4, 5, fp32)) {
       %s: (1, 3, 4, 5, fp32) = add(x=%a, y=%b)
       %y: (1, 3, 4, 5, fp32) = add(x=%s, y=%c)
     } -> (%y)

   Fires on: a root add whose operands are all transposes with one perm P;
   from it, forward, the adds reached through their results (each such add
   reads at least one add already collected, and otherwise only transposes
   with perm P), whose results are read only by adds of the forest and by
   transposes with one perm Q, the inverse of P (at least one). Every add
   then reads the transposes' inputs, its type is re-inferred in that layout,
   the readers of each Q transpose read the add, the Q transposes are erased
   and the P transposes too when nothing else reads them. Broadcasting adds
   are fine: every operand is permuted alike.
   Must not fire: an add reading anything but forest adds and P transposes;
   a root reading an add; an add read by anything but forest adds and Q
   transposes; two different perms on either side; Q not the inverse of P;
   no Q transpose; exact where the reference is not: an add whose result is
   a block output (its layout would change: the reference rewrites it); a
   replacement whose type does not suit a reader (mgopt__pu_adopt_type);
   forests of more than 256 adds.
   Cost: worklist patterns; each root collects its forest once (a scan of the
   forest per membership test: O(forest^2), forests are small). */

#define MGOPT__RTAF_MAX 256

typedef struct mgopt__rtaf {
  mgopt_program *p;
  mgopt_op *adds[MGOPT__RTAF_MAX], *queue[MGOPT__RTAF_MAX], *outs[MGOPT__RTAF_MAX];
  int32_t nadds, nqueue, nouts;
  int64_t pf[MGOPT_MAX_RANK], pi[MGOPT_MAX_RANK];
  int64_t rank; /* 0 until the first perm */
  int have_inv;
} mgopt__rtaf;

static int mgopt__rtaf_has(mgopt_op *const *v, int32_t n, const mgopt_op *op) {
  int32_t i;
  for (i = 0; i < n; i++)
    if (v[i] == op) return 1;
  return 0;
}

/* op's perm, normalized, equal to (or set as) *into of length f->rank. */
static int mgopt__rtaf_perm(mgopt__rtaf *f, const mgopt_op *t, int64_t *into, int *set) {
  const int64_t *v;
  int64_t n = mgopt_op_get_ints(f->p, t, "perm", &v), i, q[MGOPT_MAX_RANK];
  uint32_t seen[MGOPT_MAX_RANK];
  if (n <= 0 || n > MGOPT_MAX_RANK || (f->rank && n != f->rank) || t->nouts != 1 || !mgopt_op_operand(t, "x")) return 0;
  memset(seen, 0, sizeof seen);
  for (i = 0; i < n; i++) {
    q[i] = v[i] < 0 ? v[i] + n : v[i];
    if (q[i] < 0 || q[i] >= n || seen[q[i]]) return 0;
    seen[q[i]] = 1;
  }
  f->rank = n;
  if (!*set) {
    memcpy(into, q, sizeof(int64_t) * (size_t)n);
    *set = 1;
    return 1;
  }
  return memcmp(into, q, sizeof(int64_t) * (size_t)n) == 0;
}

static int mgopt__rtaf_collect(mgopt__rtaf *f, mgopt_op *root) {
  int have_fwd = 0;
  int32_t qi = 0;
  f->queue[f->nqueue++] = root;
  while (qi < f->nqueue) {
    mgopt_op *a = f->queue[qi++];
    int32_t s, n_add = 0, n_tr = 0;
    const mgopt_use *u;
    if (mgopt__rtaf_has(f->adds, f->nadds, a)) continue;
    if (a->kind != MGOPT_OP_add || a->nouts != 1 || f->nadds == MGOPT__RTAF_MAX) return 0;
    for (s = 0; s < a->nslots; s++) {
      mgopt_value *v = a->slots[s].n == 1 && !a->slots[s].is_list ? a->slots[s].uses[0].value : NULL;
      if (!v) return 0;
      if (v->def && v->def->kind == MGOPT_OP_add) {
        if (!mgopt__rtaf_has(f->adds, f->nadds, v->def)) return 0; /* strictly forward from the root */
        n_add++;
      } else if (v->def && v->def->kind == MGOPT_OP_transpose && mgopt__rtaf_perm(f, v->def, f->pf, &have_fwd)) {
        n_tr++;
      } else {
        return 0;
      }
    }
    if (a == root ? (n_add || !n_tr) : !n_add) return 0;
    if (mgopt__pu_is_block_output(a->outs[0])) return 0;
    for (u = a->outs[0]->uses; u; u = u->next) {
      mgopt_op *c = u->op;
      if (c->kind == MGOPT_OP_add) {
        if (!mgopt__rtaf_has(f->adds, f->nadds, c)) {
          if (f->nqueue == MGOPT__RTAF_MAX) return 0;
          f->queue[f->nqueue++] = c;
        }
      } else if (c->kind == MGOPT_OP_transpose && mgopt__rtaf_perm(f, c, f->pi, &f->have_inv)) {
        if (!mgopt__rtaf_has(f->outs, f->nouts, c)) {
          if (f->nouts == MGOPT__RTAF_MAX) return 0;
          f->outs[f->nouts++] = c;
        }
      } else {
        return 0;
      }
    }
    f->adds[f->nadds++] = a;
  }
  if (!have_fwd || !f->have_inv || !f->nouts) return 0;
  {
    int64_t i;
    for (i = 0; i < f->rank; i++)
      if (f->pf[f->pi[i]] != i) return 0;
  }
  return 1;
}

/* Puts every add back on its transposes' outputs (and its type back). */
static void mgopt__rtaf_undo(mgopt__rtaf *f, mgopt_value *const *saved, const mgopt_type *types) {
  int32_t i, s, k = 0;
  for (i = 0; i < f->nadds; i++) {
    mgopt_op *a = f->adds[i];
    for (s = 0; s < a->nslots; s++, k++)
      if (a->slots[s].uses[0].value != saved[k]) mgopt_op_set_operand_at(a, s, 0, saved[k]);
    a->outs[0]->type = types[i];
  }
}

static int mgopt__rtaf_rewrite(mgopt_rewriter *rw, mgopt_op *root, void *ud) {
  mgopt__rtaf f;
  mgopt_value *saved[2 * MGOPT__RTAF_MAX];
  mgopt_type types[MGOPT__RTAF_MAX];
  mgopt_op *ins[2 * MGOPT__RTAF_MAX];
  int32_t i, s, k = 0, nins = 0;
  MGOPT__UNUSED(ud);
  memset(&f, 0, sizeof f);
  f.p = mgopt_rw_program(rw);
  if (!mgopt__rtaf_collect(&f, root)) return 0;
  for (i = 0; i < f.nadds; i++) {
    mgopt_op *a = f.adds[i];
    if (a->nslots > 2) return 0;
    types[i] = a->outs[0]->type;
    for (s = 0; s < a->nslots; s++) saved[k++] = a->slots[s].uses[0].value;
  }
  /* every add reads the untransposed inputs, re-inferred in order (producers first) */
  for (i = 0; i < f.nadds; i++) {
    mgopt_op *a = f.adds[i];
    for (s = 0; s < a->nslots; s++) {
      mgopt_value *v = a->slots[s].uses[0].value;
      if (v->def && v->def->kind == MGOPT_OP_transpose) {
        if (!mgopt__rtaf_has(ins, nins, v->def)) ins[nins++] = v->def;
        mgopt_op_set_operand_at(a, s, 0, mgopt_op_operand(v->def, "x"));
      }
    }
    if (mgopt_op_infer(f.p, a, NULL) != MGOPT_OK) {
      mgopt__rtaf_undo(&f, saved, types);
      return 0;
    }
  }
  for (i = 0; i < f.nouts; i++) {
    mgopt_value *from = f.outs[i]->outs[0], *to = mgopt_op_operand(f.outs[i], "x");
    if (!mgopt__pu_adopt_type(f.p, to, from) ||
        (mgopt__pu_is_func_output(from) && mgopt__pu_is_func_output(to))) {
      mgopt__rtaf_undo(&f, saved, types);
      return 0;
    }
  }
  for (i = 0; i < f.nadds; i++) mgopt_rw_modified(rw, f.adds[i]);
  for (i = 0; i < f.nouts; i++) {
    mgopt_value *to = mgopt_op_operand(f.outs[i], "x");
    if (!mgopt__pu_replace_keep_io(rw, f.outs[i]->outs[0], to)) return 1;
    mgopt_rw_erase(rw, f.outs[i]);
  }
  for (i = 0; i < nins; i++) mgopt__pu_erase_if_dead(rw, ins[i]);
  return 1;
}

static const mgopt_pattern mgopt__rtaf_patterns[] = {
    MGOPT__PATTERN("transpose_add_forest", MGOPT_OP_add, 1, mgopt__rtaf_rewrite),
};

/* the patterns match only where one of these is */
static const int32_t mgopt__rtaf_needs[] = {MGOPT_OP_transpose};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(onnx, onnx, remove_redundant_transpose_add_forests,
                                   "run a forest of adds between a transpose and its inverse in the untransposed layout",
                                   mgopt__rtaf_patterns, mgopt__rtaf_needs);
/* src/passes/onnx/canonicalize_opaque_ops.c — onnx::canonicalize_opaque_ops: an ONNX op left opaque becomes canonical once its operands are constant or typed, and types downstream are inferred again.

   Spec: ONNX Runtime's basic level folds constants and then sees every op
   with the shapes they give; the importer maps a node to canonical ops only
   from what it knows at import (a Pad whose pads come from a Split and a
   Concat of constants stays onnx::Pad, its output type unknown). After
   const_elimination the same node can map: this pass imports each opaque
   ONNX op again (mgopt_onnx_reimport_op, the importer's mapping row for the
   op type at the program's opset) and, in the same program-order sweep,
   fills unknown output types of registered ops from their type inference
   and of opaque ONNX ops from their type rules, so the readers of a value
   that became typed map or fold in turn (a Shape of it, for fold_shape_ops).

   Before:
     main(%x: (1, 2, 4, 4, fp32)) {
       %p: (8, int64)* = const(val=[0, 0, 0, 0, 0, 0, 1, 1])
       %y: (?, ?, ?, ?, fp32) = onnx::Pad(in0=%x, in1=%p, mode="constant")
       %r: (?, ?, ?, ?, fp32) = relu(x=%y)
     } -> (%r)
   After:
     main(%x: (1, 2, 4, 4, fp32)) {
       %p: (8, int64)* = const(val=[0, 0, 0, 0, 0, 0, 1, 1])
       %y_pad_0: (8, int32)* = const(val=[0, 0, 0, 0, 0, 1, 0, 1])
       %y: (1, 2, 5, 5, fp32) = pad(x=%x, pad=%y_pad_0, mode="constant", constant_val=0.0)
       %r: (1, 2, 5, 5, fp32) = relu(x=%y)
     } -> (%r)

   Fires on: an opaque op `onnx::T` (default domain, no nested blocks) whose
   mapping now builds canonical ops (same conditions as at import); an
   opaque ONNX op whose unknown output types its type rule now gives; a
   registered op whose output types have an unknown dtype, rank or dim that
   its type inference knows (only unknown parts are filled). Nested blocks
   are walked too.
   Must not fire: other domains; an op the mapping still declines (a
   non-constant pads input, an input of unknown rank); an output of the
   function whose name the mapping would change; a canonical type that
   contradicts what the opaque output's declared type said; known types
   (never changed).
   Cost: one sweep, O(ops x rank) plus one mapping-table lookup per opaque
   op; the operands left unused stay for dead_code_elimination. */

/* 1 if op's declared outputs agree with its type inference (as the verifier
   asks), or it has none. */
static int mgopt__coo_agrees(mgopt_program *p, const mgopt_op *op) {
  mgopt_type tmp[8], *inf;
  mgopt_diag d;
  int32_t i;
  mgopt_diag_clear(&d);
  if (!op || mgopt__op_infer_types(p, op, tmp, 8, &inf, &d) != MGOPT_OK) return op == NULL;
  for (i = 0; inf && i < op->nouts; i++)
    if (mgopt__type_clash(&op->outs[i]->type, &inf[i], 1) != 0) return 0;
  return 1;
}

/* Refines v's type from inf (mgopt__pu_type_refine on a private copy of its
   dims); 1 when it changed. A program read with an unknown dim may declare a
   reader's output that only the unknown let pass (%r: (?, fp32) read by an
   op declared (8, fp32) whose input is really 4): such a refinement is not
   made, so the program stays one the verifier accepts. */
static int mgopt__coo_merge(mgopt_program *p, mgopt_value *v, const mgopt_type *inf) {
  mgopt_type cur, old = v->type;
  const mgopt_use *u;
  if (inf->kind != MGOPT_TYPE_TENSOR || v->type.kind != MGOPT_TYPE_TENSOR) return 0;
  if (mgopt__type_copy(p, &cur, &v->type) || !mgopt__pu_type_refine(p, &cur, inf)) return 0;
  v->type = cur;
  for (u = v->uses; u; u = u->next)
    if (!mgopt__coo_agrees(p, u->op ? u->op : u->block ? u->block->parent_op : NULL)) {
      v->type = old;
      return 0;
    }
  return 1;
}

static int64_t mgopt__coo_block(mgopt_program *p, mgopt_block *b, int depth, mgopt_status *st) {
  mgopt_op *op, *next;
  int64_t n = 0;
  if (depth > 256) return 0;
  for (op = b->first; op && !*st; op = next) {
    const mgopt_op_def *def;
    int32_t i, any = 0;
    next = op->next;
    for (i = 0; i < op->nblocks; i++) n += mgopt__coo_block(p, op->blocks[i], depth + 1, st);
    if (op->kind == MGOPT_OP_OPAQUE) {
      int r = strncmp(op->type, "onnx::", 6) == 0 ? mgopt_onnx_reimport_op(p, op) : 0;
      if (r < 0) *st = MGOPT_ERR_NOMEM;
      else if (r > 0) n++;
      continue;
    }
    def = mgopt_op_def_get(op->kind);
    if (!def || !def->infer || op->kind == MGOPT_OP_const || op->nouts < 1 || op->nouts > 16) continue;
    for (i = 0; i < op->nouts; i++) any |= mgopt__pu_type_unknown(&op->outs[i]->type);
    if (!any) continue;
    {
      mgopt_type inf[16];
      int changed = 0;
      memset(inf, 0, sizeof inf);
      if (def->infer(p, op, inf, NULL) != MGOPT_OK) continue;
      for (i = 0; i < op->nouts; i++) changed |= mgopt__coo_merge(p, op->outs[i], &inf[i]);
      n += changed;
    }
  }
  return n;
}

static mgopt_status mgopt__coo_run(mgopt_pass_ctx *ctx) {
  mgopt_status st = MGOPT_OK;
  int32_t i;
  for (i = 0; i < mgopt_program_function_count(ctx->program) && !st; i++)
    ctx->rewrites += mgopt__coo_block(ctx->program, mgopt_program_function_at(ctx->program, i)->body, 0, &st);
  return st;
}

MGOPT__DEFINE_PASS(onnx, onnx, canonicalize_opaque_ops,
                   "an ONNX op left opaque becomes canonical once its operands are constant or typed; unknown types "
                   "downstream are inferred again",
                   mgopt__coo_run);
/* src/passes/onnx/eliminate_output_identity.c — onnx::eliminate_output_identity: an identity that only renames a value into a block output goes.

   Spec: onnx_ir_optimizer_passes.txt, "Identity Elimination" (ONNX Runtime's
   basic level removes these too: the producer's output takes the graph output).
   noop_elimination keeps every block output (MIL's rule); in ONNX a block output
   is just a name, so the identity in front of it can go when its input is made
   by an op of the same block.

   Before:
     main(%x: (2, fp32)) {
       %a: (2, fp32) = relu(x=%x)
       %y: (2, fp32) = identity(x=%a)
     } -> (%y)
   After:
     main(%x: (2, fp32)) {
       %y: (2, fp32) = relu(x=%x, name="a")
     } -> (%y)
   The same inside an if / loop body, where the output is matched by position.

   Fires on: identity(x) whose output is a block output (of a function body or
   a nested block), where x is made by a non-const op of the same block, x is
   not already an output of that block, and x's type fits every use of the
   identity's output (for a function output: equal declared types). Other
   readers of the identity's output read x.
   Must not fire: x a block argument (a graph input or a loop-carried value:
   its name cannot change), x from an enclosing block (ONNX wants a subgraph
   output made inside it), x a const (it would become an initializer output),
   x already an output of the block (the name would repeat), a type mismatch.
   Cost: one worklist run, O(ops + block outputs). */

static int mgopt__eoi_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "x"), *out;
  mgopt_block *b = op->parent;
  MGOPT__UNUSED(ud);
  if (!x || !b || op->nouts != 1) return 0;
  out = op->outs[0];
  if (!mgopt__pu_is_block_output(out) || mgopt__pu_is_block_output(x)) return 0;
  if (!x->def || x->def->parent != b || x->def->kind == MGOPT_OP_const) return 0;
  if (!mgopt__pu_replace_fits(mgopt_rw_program(rw), out, x)) return 0;
  mgopt_rw_replace_value(rw, out, x);
  mgopt_rw_erase(rw, op);
  return 1;
}

static const mgopt_pattern mgopt__eoi_patterns[] = {
    {"eliminate_output_identity", MGOPT_OP_identity, NULL, 1, mgopt__eoi_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, eliminate_output_identity,
                           "an identity that only renames a value into a block output goes",
                           mgopt__eoi_patterns);
/* src/passes/onnx/resolve_reshape_shape.c — onnx::resolve_reshape_shape: a reshape whose target shape is computed from its own input's shape gets a constant shape.

   Spec: ONNX Runtime's basic-level reshape fusion. A target shape built at
   run time (Concat of Shape(x)[i] pieces and constants, through Cast,
   Slice, Gather, Unsqueeze) often only says "keep dim i of x" and "these
   constants": each such element becomes 0, which Reshape (allowzero 0) and
   the canonical reshape both read as "copy the input's dim at this
   position"; a dim known statically becomes its value. The Shape, Slice,
   Cast and Concat that computed it are left without readers.

   Before:
     main(%x: (N, 200, 1, 1, fp32)) {
       %s: (4, int64) = onnx::Shape(in0=%x)
       %c: (4, int32) = cast(x=%s, dtype="int32")
       %b: (1, int32)* = const(val=[0])
       %e: (1, int32)* = const(val=[1])
       %n: (1, int32) = slice_by_index(x=%c, begin=%b, end=%e)
       %m: (1, int64) = cast(x=%n, dtype="int64")
       %k: (1, int64)* = const(val=[200])
       %t: (2, int64) = concat(values=(%m, %k), axis=0)
       %y: (N, 200, fp32) = onnx::Reshape(in0=%x, in1=%t)
     } -> (%y)
   After:
     main(%x: (N, 200, 1, 1, fp32)) {
       %s: (4, int64) = onnx::Shape(in0=%x)
       %c: (4, int32) = cast(x=%s, dtype="int32")
       %b: (1, int32)* = const(val=[0])
       %e: (1, int32)* = const(val=[1])
       %n: (1, int32) = slice_by_index(x=%c, begin=%b, end=%e)
       %m: (1, int64) = cast(x=%n, dtype="int64")
       %k: (1, int64)* = const(val=[200])
       %t: (2, int64) = concat(values=(%m, %k), axis=0)
       %y_shape: (2, int32)* = const(val=[0, 200])
       %y: (N, 200, fp32) = reshape(x=%x, shape=%y_shape)
     } -> (%y)
   The shape computation is left to dead_code_elimination.

   Fires on: a canonical reshape whose shape is not constant, and an
   onnx::Reshape (allowzero 0 or absent) whose shape input is not constant,
   when every element of the shape is known through a chain of constants,
   onnx::Shape (start/end as ONNX clamps them), int32/int64 casts of
   integers, slice_by_index and gather with constant parameters, concat on
   axis 0 and expand_dims/squeeze/reshape between 0-d and 1-d: an element
   is a constant, or dim k of some value (its static value when static).
   Dim i of the reshape's own input at position i becomes 0. One element
   that is neither (any other run-time value) becomes -1 when every other
   element is a positive constant, so that -1 is exactly that element. The
   op becomes a canonical reshape with an int32 constant shape, its output
   type inferred (and checked against the declared one).
   Must not fire: allowzero 1; a shape element that is a run-time value
   other than one such -1 (two of them, a -1 already there, another
   element that is a copied symbolic dim or a 0); a dim of another value or
   of x at another position when it is symbolic; a constant below -1; an
   element beyond int32; a shape of more than MGOPT_MAX_RANK elements or of
   unknown length; when the target cannot express a reshape or the inferred
   type contradicts the declared one. Casts to int32 assume dims below 2^31,
   as every tensor the IR can hold.
   Cost: one worklist run; each reshape walks its shape's producers at most
   16 deep, with at most MGOPT_MAX_RANK elements at each: O(ops). */

#define MGOPT__RRS_DEPTH 16

/* One element of a traced shape vector. */
typedef struct mgopt__rrs_elt {
  int kind;              /* MGOPT__RRS_CONST, _DIM or _UNKNOWN */
  int64_t v;             /* the constant, or the dim's index */
  const mgopt_value *of; /* _DIM: the value whose dim it is */
} mgopt__rrs_elt;

#define MGOPT__RRS_CONST 0
#define MGOPT__RRS_DIM 1
#define MGOPT__RRS_UNKNOWN 2

/* The static length of a 0-d or 1-d integer value (1 for 0-d), or -1. */
static int64_t mgopt__rrs_len(const mgopt_value *v) {
  const mgopt_type *t = &v->type;
  if (t->kind != MGOPT_TYPE_TENSOR || !mgopt_dtype_is_int((mgopt_dtype)t->dtype)) return -1;
  if (t->rank == 0) return 1;
  if (t->rank != 1 || !mgopt_dim_is_static(t->dims[0]) || t->dims[0].v > MGOPT_MAX_RANK) return -1;
  return t->dims[0].v;
}

/* The constant integers of v (rank <= 1) into out[0..cap); their count or -1. */
static int64_t mgopt__rrs_ints(const mgopt_value *v, int64_t *out, int64_t cap) {
  mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
  int64_t i;
  if (!t || t->rank > 1 || !mgopt_dtype_is_int((mgopt_dtype)t->dtype) || t->numel > cap) return -1;
  for (i = 0; i < t->numel; i++) out[i] = mgopt_tensor_get_i64(t, i);
  return t->numel;
}

static int64_t mgopt__rrs_trace(mgopt_program *p, const mgopt_value *v, mgopt__rrs_elt *out, int depth);

/* onnx::Shape(x, start, end): dims [start, end) of x. */
static int64_t mgopt__rrs_shape(const mgopt_op *op, mgopt__rrs_elt *out) {
  const mgopt_value *x = mgopt_op_operand(op, "in0");
  int64_t start, end, i;
  if (!mgopt__pu_onnx_shape_range(op, &start, &end)) return -1;
  for (i = start; i < end; i++) {
    mgopt__rrs_elt *e = &out[i - start];
    e->of = x;
    if (mgopt_dim_is_static(x->type.dims[i])) {
      e->kind = MGOPT__RRS_CONST;
      e->v = x->type.dims[i].v;
    } else {
      e->kind = MGOPT__RRS_DIM;
      e->v = i;
    }
  }
  return end - start;
}

/* One entry of ints parameter `name` of a 1-d op (dflt when absent), or -1 in *ok. */
static int64_t mgopt__rrs_param(mgopt_program *p, const mgopt_op *op, const char *name, int64_t dflt, int *ok) {
  const int64_t *v = NULL;
  int64_t n = mgopt_op_get_ints(p, op, name, &v);
  if (n < 0 && !mgopt_op_attr(op, name) && !mgopt_op_operand(op, name)) return dflt;
  if (n != 1) *ok = 0;
  return n == 1 ? v[0] : dflt;
}

/* slice_by_index of a 1-d value with constant parameters (a squeezed axis gives 0-d). */
static int64_t mgopt__rrs_slice(mgopt_program *p, const mgopt_op *op, mgopt__rrs_elt *out, int depth) {
  mgopt__rrs_elt in[MGOPT_MAX_RANK];
  const mgopt_value *x = mgopt_op_operand(op, "x");
  int64_t b, e, s, n, i, cnt, bm, em, sm;
  int ok = 1;
  if (!x || x->type.rank != 1) return -1;
  n = mgopt__rrs_trace(p, x, in, depth + 1);
  b = mgopt__rrs_param(p, op, "begin", 0, &ok);
  e = mgopt__rrs_param(p, op, "end", 0, &ok);
  s = mgopt__rrs_param(p, op, "stride", 1, &ok);
  bm = mgopt__rrs_param(p, op, "begin_mask", 0, &ok);
  em = mgopt__rrs_param(p, op, "end_mask", 0, &ok);
  sm = mgopt__rrs_param(p, op, "squeeze_mask", 0, &ok);
  if (n < 0 || !ok || !mgopt_op_operand(op, "begin") || !mgopt_op_operand(op, "end") || s == 0 || s == INT64_MIN)
    return -1;
  if (sm) {
    i = bm ? 0 : b;
    if (i < 0) i += n;
    if (i < 0 || i >= n) return -1;
    out[0] = in[i];
    return 1;
  }
  if (s > 0) {
    if (bm) b = 0;
    else if (b < 0) b = b + n < 0 ? 0 : b + n;
    else if (b > n) b = n;
    if (em) e = n;
    else if (e < 0) e = e + n < 0 ? 0 : e + n;
    else if (e > n) e = n;
    cnt = e > b ? (e - b - 1) / s + 1 : 0;
  } else {
    if (bm) b = n - 1;
    else if (b < 0) b = b + n < 0 ? -1 : b + n;
    else if (b >= n) b = n - 1;
    if (em) e = -1;
    else if (e < 0) e = e + n < 0 ? -1 : e + n;
    else if (e >= n) e = n - 1;
    cnt = b > e ? (b - e - 1) / (-s) + 1 : 0;
  }
  for (i = 0; i < cnt; i++) out[i] = in[b + i * s];
  return cnt;
}

/* gather on axis 0 of a 1-d value with constant indices. */
static int64_t mgopt__rrs_gather(mgopt_program *p, const mgopt_op *op, mgopt__rrs_elt *out, int depth) {
  mgopt__rrs_elt in[MGOPT_MAX_RANK];
  const mgopt_value *x = mgopt_op_operand(op, "x");
  int64_t idx[MGOPT_MAX_RANK], n, k, i;
  if (mgopt_op_get_int(op, "axis", 0) != 0 && mgopt_op_get_int(op, "axis", 0) != -1) return -1;
  if (mgopt_op_get_int(op, "batch_dims", 0) != 0) return -1;
  if (!x || x->type.rank != 1) return -1;
  n = mgopt__rrs_trace(p, x, in, depth + 1);
  k = mgopt__rrs_ints(mgopt_op_operand(op, "indices"), idx, MGOPT_MAX_RANK);
  if (n < 0 || k < 0) return -1;
  for (i = 0; i < k; i++) {
    int64_t j = idx[i] < 0 ? idx[i] + n : idx[i];
    if (j < 0 || j >= n) return -1;
    out[i] = in[j];
  }
  return k;
}

/* concat on axis 0 of 1-d values. */
static int64_t mgopt__rrs_concat(mgopt_program *p, const mgopt_op *op, mgopt__rrs_elt *out, int depth) {
  int32_t si = mgopt_op_slot_index(op, "values"), i;
  int64_t n = 0, k;
  mgopt__rrs_elt part[MGOPT_MAX_RANK];
  if (si < 0 || (mgopt_op_get_int(op, "axis", 1) != 0 && mgopt_op_get_int(op, "axis", 1) != -1)) return -1;
  if (mgopt_op_get_bool(op, "interleave", 0)) return -1;
  for (i = 0; i < op->slots[si].n; i++) {
    const mgopt_value *v = op->slots[si].uses[i].value;
    if (!v || v->type.rank != 1) return -1;
    k = mgopt__rrs_trace(p, v, part, depth + 1);
    if (k < 0 || n + k > MGOPT_MAX_RANK) return -1;
    memcpy(out + n, part, sizeof(mgopt__rrs_elt) * (size_t)k);
    n += k;
  }
  return n;
}

/* The elements of v, a 0-d or 1-d integer value (at most MGOPT_MAX_RANK of
   them): their count, or -1 when even the length is unknown. */
static int64_t mgopt__rrs_trace(mgopt_program *p, const mgopt_value *v, mgopt__rrs_elt *out, int depth) {
  int64_t len, n = -1, i, c[MGOPT_MAX_RANK];
  const mgopt_op *d;
  if (!v) return -1;
  len = mgopt__rrs_len(v);
  if (len < 0) return -1;
  if (mgopt__rrs_ints(v, c, MGOPT_MAX_RANK) == len) {
    for (i = 0; i < len; i++) {
      out[i].kind = MGOPT__RRS_CONST;
      out[i].v = c[i];
      out[i].of = NULL;
    }
    return len;
  }
  d = v->def;
  if (d && depth < MGOPT__RRS_DEPTH && d->nouts == 1 && !d->nblocks) {
    const mgopt_value *x = mgopt_op_operand(d, "x");
    if (d->kind == MGOPT_OP_OPAQUE && strcmp(d->type, "onnx::Shape") == 0) n = mgopt__rrs_shape(d, out);
    else if (d->kind == MGOPT_OP_slice_by_index) n = mgopt__rrs_slice(p, d, out, depth);
    else if (d->kind == MGOPT_OP_gather) n = mgopt__rrs_gather(p, d, out, depth);
    else if (d->kind == MGOPT_OP_concat) n = mgopt__rrs_concat(p, d, out, depth);
    else if (d->kind == MGOPT_OP_cast && x && mgopt_dtype_is_int((mgopt_dtype)x->type.dtype) &&
             (v->type.dtype == MGOPT_DT_INT32 || v->type.dtype == MGOPT_DT_INT64))
      n = mgopt__rrs_trace(p, x, out, depth + 1);
    else if ((d->kind == MGOPT_OP_expand_dims || d->kind == MGOPT_OP_squeeze || d->kind == MGOPT_OP_reshape) && x &&
             x->type.rank >= 0 && x->type.rank <= 1)
      n = mgopt__rrs_trace(p, x, out, depth + 1);
  }
  if (n == len) return n;
  for (i = 0; i < len; i++) {
    out[i].kind = MGOPT__RRS_UNKNOWN;
    out[i].v = 0;
    out[i].of = NULL;
  }
  return len;
}

static int mgopt__rrs_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  int opaque = op->kind == MGOPT_OP_OPAQUE;
  mgopt_value *x = mgopt_op_operand(op, opaque ? "in0" : "x"), *s = mgopt_op_operand(op, opaque ? "in1" : "shape");
  mgopt__rrs_elt el[MGOPT_MAX_RANK];
  int64_t shape[MGOPT_MAX_RANK], n, i, unknown = -1;
  int32_t nunknown = 0, ninfer = 0, nvague = 0;
  mgopt_value *c, *ins[2];
  mgopt_op *made;
  static const char *const slots[2] = {"x", "shape"};
  MGOPT__UNUSED(ud);
  if (!x || !s || op->nouts != 1 || op->nblocks || mgopt_value_const(s)) return 0;
  if (opaque && (mgopt_op_operand_count(op) != 2 || mgopt_op_get_int(op, "allowzero", 0) != 0)) return 0;
  if (s->type.rank != 1) return 0;
  n = mgopt__rrs_trace(p, s, el, 0);
  if (n < 0) return 0;
  for (i = 0; i < n; i++) {
    mgopt__rrs_elt *e = &el[i];
    if (e->kind == MGOPT__RRS_CONST) {
      shape[i] = e->v;
      if (e->v < -1 || e->v > INT32_MAX) return 0;
      if (e->v == -1) ninfer++;
      /* a 0 copies x's dim i: known only when that dim is static */
      if (e->v == 0 && !(x->type.rank > i && mgopt_dim_is_static(x->type.dims[i]) && x->type.dims[i].v > 0)) nvague++;
    } else if (e->kind == MGOPT__RRS_DIM && e->of == x && e->v == i) {
      shape[i] = 0;
      nvague++;
    } else {
      unknown = i;
      nunknown++;
    }
  }
  /* one run-time element becomes -1 only when every other is a positive constant */
  if (nunknown > 1 || (nunknown == 1 && (ninfer || nvague))) return 0;
  if (nunknown == 1) shape[unknown] = -1;
  {
    mgopt_tensor *t = mgopt_tensor_new(p, MGOPT_DT_INT32, 1, &n);
    if (!t) return 0;
    for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, shape[i]);
    c = mgopt_rw_const(rw, op, mgopt__pu_name2(p, mgopt__pu_value_name(op->outs[0]), "_shape"), t);
  }
  if (!c) return 0;
  ins[0] = x;
  ins[1] = c;
  made = mgopt_rw_create(rw, op, "reshape", mgopt__pu_value_name(op->outs[0]), 2, slots, ins, 1);
  if (!made) {
    mgopt__pu_erase_with_consts(rw, c->def);
    return 0;
  }
  return mgopt__pu_fuse_finish(rw, &made, 1, op, NULL, 0);
}

static const mgopt_pattern mgopt__rrs_patterns[] = {
    MGOPT__PATTERN("resolve_reshape_shape", MGOPT_OP_reshape, 1, mgopt__rrs_rewrite),
    MGOPT__OPAQUE_PATTERN("resolve_onnx_reshape_shape", "onnx::Reshape", 1, mgopt__rrs_rewrite),
};

MGOPT__DEFINE_PATTERN_PASS(onnx, onnx, resolve_reshape_shape,
                           "a reshape whose target shape is computed from its own input's shape gets a constant shape",
                           mgopt__rrs_patterns);
/* src/passes/onnx/fold_shape_chains.c — onnx::fold_shape_chains: constant folding, opaque-op mapping and shape folding repeated until a shape computation stops changing.

   Spec: ONNX Runtime's basic level runs its transformers, constant folding
   among them, over and over until the graph stops changing, so a chain of
   shape arithmetic that alternates between ops mgopt folds
   (const_elimination), ops it maps once their operands are constant
   (canonicalize_opaque_ops: a Slice with a "through the first element"
   end) and ops only their static shape folds (fold_shape_ops: Shape,
   ConstantOfShape) ends as one constant however long the chain is. Each
   of those passes runs in program order, or over a worklist that does not
   cross the others' ops, so one run of each settles one alternation; this
   pass repeats the three until a round changes nothing.

   Before:
     main(%x: (2, 3, fp32)) {
       %s: (2, int64) = onnx::Shape(in0=%x)
       %one: (2, int64)* = const(val=[1, 1])
       %a: (2, int64) = sub(x=%s, y=%one)
       %st: (1, int64)* = const(val=[-1])
       %en: (1, int64)* = const(val=[-9223372036854775807])
       %ax: (1, int64)* = const(val=[0])
       %v: (?, int64) = onnx::Slice(in0=%a, in1=%st, in2=%en, in3=%ax, in4=%st)
     } -> (%v)
   After:
     main(%x: (2, 3, fp32)) {
       %s: (2, int64)* = const(val=[2, 3])
       %one: (2, int64)* = const(val=[1, 1])
       %a: (2, int64)* = const(val=[1, 2])
       %st: (1, int64)* = const(val=[-1])
       %en: (1, int64)* = const(val=[-9223372036854775807])
       %ax: (1, int64)* = const(val=[0])
       %v_begin_0: (1, int32)* = const(val=[1])
       %v_end_0: (1, int32)* = const(val=[0])
       %v_stride_0: (1, int32)* = const(val=[-1])
       %v: (2, int64)* = const(val=[2, 1])
     } -> (%v)
   (the first round folds the Shape, the second the sub and maps the Slice,
   the third folds that, the fourth finds nothing to do)

   Fires on: whatever const_elimination (its defaults), canonicalize_opaque_ops
   and fold_shape_ops fire on, with the caller's folding kernels.
   Must not fire: in a program without opaque ops (a shape chain alternates
   through opaque ONNX ops: Shape, an unmapped Slice; without one there is
   nothing to settle, and const_elimination alone folds what can fold);
   where none of the three does; a failing inner pass stops the
   rounds and fails this pass (the program stays as the last good round
   left it).
   Cost: O(functions) without an opaque op (the op index counts them); else
   at most MGOPT__FSC_MAX_ROUNDS rounds of three linear passes, the last of
   which changes nothing: O(ops). A chain with more alternations than rounds
   is left partly folded. */

#define MGOPT__FSC_MAX_ROUNDS 8

static mgopt_status mgopt__fsc_run(mgopt_pass_ctx *ctx) {
  mgopt_pass_report rep[3];
  mgopt_pipeline_options o;
  mgopt_diag d;
  mgopt_registry reg = *mgopt_builtin_registry();
  int32_t nrep = 0, round, i;
  reg.fold = ctx->fold; /* the caller's kernels, as const_elimination alone would use */
  reg.fold_ud = ctx->fold_ud;
  for (i = 0; i < mgopt_program_function_count(ctx->program); i++)
    if (mgopt__index_kind_count(mgopt_program_function_at(ctx->program, i), MGOPT_OP_OPAQUE) != 0) break;
  if (i == mgopt_program_function_count(ctx->program)) return MGOPT_OK; /* no opaque op: no shape chain */
  for (round = 0; round < MGOPT__FSC_MAX_ROUNDS; round++) {
    int64_t changed = 0;
    mgopt_status s;
    memset(&o, 0, sizeof o);
    o.strict = 1;
    o.reports = rep;
    o.reports_cap = 3;
    o.nreports = &nrep;
    s = mgopt_pipeline_run(ctx->program, &reg, "const_elimination,canonicalize_opaque_ops,fold_shape_ops", &o, &d);
    if (s) return mgopt_diag_set(ctx->diag, s, "%s", d.msg);
    for (i = 0; i < nrep; i++) changed += rep[i].rewrites;
    ctx->rewrites += changed;
    if (!changed) break;
  }
  return MGOPT_OK;
}

MGOPT__DEFINE_PASS(onnx, onnx, fold_shape_chains,
                   "constant folding, opaque-op mapping and shape folding, repeated until shape computations settle",
                   mgopt__fsc_run);
/* src/passes/compression/linear_quantize_weights.c — common::linear_quantize_weights: float weights stored as 8- or 4-bit integers with a scale (and zero point) per tensor, channel or block.

   Spec: mil_graph_passes.txt, compression::linear_quantize_weights; reference mil-passes.md §2.5, §4.1, §4.2, §4.5.

   Before (12 elements: at most weight_threshold, 2048 by default, so the
   weight stays):
     main(%x: (1, 4, fp32)) {
       %w: (3, 4, fp32)* = const(val=[[-2, -10, 6, -3], [0, 0, 0, 0], [1, 2, 3, 4]])
       %y: (1, 3, fp32) = linear(x=%x, weight=%w)
     } -> (%y)
   After:
     main(%x: (1, 4, fp32)) {
       %w: (3, 4, fp32)* = const(val=[[-2, -10, 6, -3], [0, 0, 0, 0], [1, 2, 3, 4]])
       %y: (1, 3, fp32) = linear(x=%x, weight=%w)
     } -> (%y)
   With {mode=linear, dtype=int4, granularity=per_tensor, weight_threshold=0}
   the weight becomes the reference's example [-2, -10, 6, -3] -> [-1, -8, 7, -2]:
       %w_quantized_data: (3, 4, int4)* = const(val=[[-1, -8, 7, -2], [1, 1, 1, 1], [2, 3, 4, 5]])
       %w_quantized_scale: (1, 1, fp32)* = const(val=[[1.0666667]])
       %w_quantized_offset: (1, 1, int4)* = const(val=[[1]])
       %w_quantized: (3, 4, fp32) = constexpr_blockwise_shift_scale(data=%w_quantized_data,
                                      scale=%w_quantized_scale, offset=%w_quantized_offset)
       %y: (1, 3, fp32) = linear(x=%x, weight=%w_quantized)

   Options (defaults as the reference): mode linear_symmetric | linear;
   dtype int8 | uint8 | int4 | uint4; granularity per_tensor | per_channel |
   per_block; block_size 32 (per_block: blocks of that many elements along
   the input axis, one per output channel); weight_threshold 2048 (a weight
   is compressed when it has MORE elements). Per-weight options come from
   the compression configuration (mgopt_compress_config).

   Fires on: every weight the compression driver offers (passes/compress.c:
   fp32 or fp16 const of rank >= 2, more than weight_threshold elements,
   read by an op) whose values are all finite. The op emitted is the
   reference's iOS18 form, constexpr_blockwise_shift_scale: it expresses
   every granularity and dtype here. The reference emits
   constexpr_affine_dequantize before iOS18 (8-bit, per tensor or channel
   only); mgopt has no deployment target, and an ONNX writer takes both
   (DequantizeLinear), so the one form is kept.
   Must not fire: on integer, bf16 (the op's output dtype is fp16 or fp32)
   or non-finite weights; per_channel / per_block when the readers do not
   agree on the channel axes or the axis is unknown (an op the driver does
   not know gives out 0, in 1); per_block when the input axis is not a
   multiple of block_size; on consts read by constexpr_* ops; when the
   program's target refuses the op (an ONNX opset below 13 for per-axis
   scales, below 21 for blocks and 4-bit data).

   Numeric contract (the reference's numpy float arithmetic, in the weight's
   dtype): per block, lo/hi = min/max; linear_symmetric: R = max(|lo|, |hi|),
   vmin = -R, vmax = R; linear: vmin = min(0, lo), vmax = max(0, hi); integer
   range [qmin, qmax] of the dtype, with qmin = -(2^(n-1) - 1) for signed
   and qmax = 2^n - 2 for unsigned in linear_symmetric. scale = (vmax -
   vmin) / (qmax - qmin), each operation rounded to the weight's dtype (fp32:
   float; fp16: to nearest even fp16). q = round_half_even(w / scale) (the
   quotient rounded to the weight's dtype), then zero point added and
   clipped: q = clip(q + zp, qmin, qmax). zp: none for signed
   linear_symmetric; qmax / 2 (127, 7) for unsigned linear_symmetric;
   linear: clip(round_half_even((qmin*vmax - qmax*vmin) / (vmax - vmin)),
   qmin, qmax). A block of zeros (vmax == vmin == 0, where the reference
   divides by zero) gets scale 1 and q = zp (zp = qmin in linear mode), so it
   decompresses to zeros. A scale that underflows to 0 for a nonzero block
   leaves the weight alone. scale is stored in the weight's dtype with the
   weight's rank (1 on every axis not blocked); the zero point, when there
   is one, as `offset` of the data's dtype and the scale's shape.
   Decompression: scale * (q - zp), at the scale's dtype.

   Cost: two passes over each weight (min/max, then quantize), contiguous
   runs with vectorizable inner loops for fp32; O(numel). */

static mgopt_opt_def const mgopt__lq_opts[5] = {
    {"mode", MGOPT_OPT_STRING, "linear_symmetric", "linear_symmetric or linear"},
    {"dtype", MGOPT_OPT_STRING, "int8", "int8, uint8, int4 or uint4"},
    {"granularity", MGOPT_OPT_STRING, "per_channel", "per_tensor, per_channel or per_block"},
    {"block_size", MGOPT_OPT_INT, "32", "per_block: elements per block along the input axis"},
    {"weight_threshold", MGOPT_OPT_INT, "2048", "compress weights with more elements than this"}};

enum { MGOPT__LQ_MODE, MGOPT__LQ_DTYPE, MGOPT__LQ_GRAN, MGOPT__LQ_BLOCK, MGOPT__LQ_THRESHOLD };

typedef struct mgopt__lq_cfg {
  int linear;        /* mode linear (else linear_symmetric) */
  mgopt_dtype qdt;   /* int8, uint8, int4, uint4 */
  int gran;          /* 0 per_tensor, 1 per_channel, 2 per_block */
  int64_t block;
  int64_t qmin, qmax;
  int has_zp;
} mgopt__lq_cfg;

/* Reads the options; 0 with diag set when one is not valid. */
static int mgopt__lq_config(mgopt_pass_ctx *ctx, const mgopt_opt_value *o, mgopt__lq_cfg *c) {
  const char *mode = o[MGOPT__LQ_MODE].s, *dt = o[MGOPT__LQ_DTYPE].s, *g = o[MGOPT__LQ_GRAN].s;
  int bits, sgn;
  memset(c, 0, sizeof *c);
  if (strcmp(mode, "linear_symmetric") == 0) c->linear = 0;
  else if (strcmp(mode, "linear") == 0) c->linear = 1;
  else return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "linear_quantize_weights: unknown mode '%s'", mode), 0;
  if (strcmp(dt, "int8") == 0) c->qdt = MGOPT_DT_INT8;
  else if (strcmp(dt, "uint8") == 0) c->qdt = MGOPT_DT_UINT8;
  else if (strcmp(dt, "int4") == 0) c->qdt = MGOPT_DT_INT4;
  else if (strcmp(dt, "uint4") == 0) c->qdt = MGOPT_DT_UINT4;
  else return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "linear_quantize_weights: unknown dtype '%s'", dt), 0;
  if (strcmp(g, "per_tensor") == 0) c->gran = 0;
  else if (strcmp(g, "per_channel") == 0) c->gran = 1;
  else if (strcmp(g, "per_block") == 0) c->gran = 2;
  else
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "linear_quantize_weights: unknown granularity '%s'", g), 0;
  c->block = o[MGOPT__LQ_BLOCK].i;
  if (c->gran == 2 && c->block <= 0)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "linear_quantize_weights: block_size must be > 0"), 0;
  if (o[MGOPT__LQ_THRESHOLD].i < 0)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "linear_quantize_weights: weight_threshold must be >= 0"), 0;
  bits = c->qdt == MGOPT_DT_INT4 || c->qdt == MGOPT_DT_UINT4 ? 4 : 8;
  sgn = c->qdt == MGOPT_DT_INT4 || c->qdt == MGOPT_DT_INT8;
  if (sgn) {
    c->qmin = -((int64_t)1 << (bits - 1));
    c->qmax = ((int64_t)1 << (bits - 1)) - 1;
    if (!c->linear) c->qmin = -c->qmax;
  } else {
    c->qmin = 0;
    c->qmax = ((int64_t)1 << bits) - 1;
    if (!c->linear) c->qmax -= 1;
  }
  c->has_zp = c->linear || !sgn;
  return 1;
}

/* x rounded to the weight's dtype (fp32 or fp16). */
static double mgopt__lq_rnd(mgopt_dtype dt, double x) {
  return dt == MGOPT_DT_FP32 ? (double)(float)x : mgopt__pw_round(dt, x);
}

static double mgopt__lq_rne(double x) {
  double f = floor(x), d = x - f;
  if (d > 0.5 || (d == 0.5 && fmod(f, 2.0) != 0.0)) f += 1.0;
  return f;
}

/* The hot loops work on 8 lanes at a time, written out so that compilers
   vectorize them at -O2 (straight-line lane code, no reduction across lanes
   inside the loop), with a scalar tail. */
#define MGOPT__LQ_LANES 8

/* fp32 quotients to integers, rounding half to even, clipped. */
static float mgopt__lq_q1(float x, float s, float zp, float lo, float hi) {
  float y = x / s;
  float r = (y + 12582912.0f) - 12582912.0f; /* round half to even for |y| < 2^22 */
  r += zp;
  r = r < lo ? lo : r;
  return r > hi ? hi : r;
}

static void mgopt__lq_run_f32(const float *x, int64_t n, float s, float zp, float lo, float hi, uint8_t *q) {
  int64_t i = 0;
  int k;
  for (; i + MGOPT__LQ_LANES <= n; i += MGOPT__LQ_LANES) {
    int32_t v[MGOPT__LQ_LANES];
    for (k = 0; k < MGOPT__LQ_LANES; k++) v[k] = (int32_t)mgopt__lq_q1(x[i + k], s, zp, lo, hi);
    for (k = 0; k < MGOPT__LQ_LANES; k++) q[i + k] = (uint8_t)v[k]; /* two's complement byte for signed dtypes */
  }
  for (; i < n; i++) q[i] = (uint8_t)(int32_t)mgopt__lq_q1(x[i], s, zp, lo, hi);
}

static void mgopt__lq_minmax_f32(const float *x, int64_t n, float *mn, float *mx, int *bad) {
  float a[MGOPT__LQ_LANES], b[MGOPT__LQ_LANES];
  int32_t nan[MGOPT__LQ_LANES];
  int64_t i = 0;
  int k;
  for (k = 0; k < MGOPT__LQ_LANES; k++) {
    a[k] = *mn;
    b[k] = *mx;
    nan[k] = 0;
  }
  for (; i + MGOPT__LQ_LANES <= n; i += MGOPT__LQ_LANES)
    for (k = 0; k < MGOPT__LQ_LANES; k++) {
      float v = x[i + k];
      a[k] = v < a[k] ? v : a[k];
      b[k] = v > b[k] ? v : b[k];
      nan[k] |= v != v;
    }
  for (; i < n; i++) {
    float v = x[i];
    a[0] = v < a[0] ? v : a[0];
    b[0] = v > b[0] ? v : b[0];
    nan[0] |= v != v;
  }
  for (k = 0; k < MGOPT__LQ_LANES; k++) {
    *mn = a[k] < *mn ? a[k] : *mn;
    *mx = b[k] > *mx ? b[k] : *mx;
    *bad |= nan[k];
  }
}

static int mgopt__lq_fn(mgopt_pass_ctx *ctx, const mgopt__cw_weight *w, void *ud) {
  mgopt_program *p = ctx->program;
  mgopt_tensor *t = w->t, *qt, *st, *zt = NULL;
  mgopt_dtype wdt = (mgopt_dtype)t->dtype;
  mgopt__lq_cfg c;
  int64_t bs[MGOPT_MAX_RANK], sshape[MGOPT_MAX_RANK], sstride[MGOPT_MAX_RANK], m[MGOPT_MAX_RANK];
  int64_t nblk = 1, run, nruns, inner = 1, r, k, i, n = t->numel;
  int32_t rank = t->rank, d, last = -1;
  int64_t *bidx;
  float *mn, *mx, *sc, *zp, *buf = NULL;
  uint8_t *q;
  const float *xf;
  int bad = 0;
  const char *base = mgopt__pu_value_name(w->op->outs[0]);
  mgopt_value *vals[3];
  const char *slots[3] = {"data", "scale", "offset"};
  mgopt_op *ce;
  (void)ud;
  if (wdt != MGOPT_DT_FP32 && wdt != MGOPT_DT_FP16) return 0;
  if (!mgopt__lq_config(ctx, w->opts, &c)) return -2;
  for (d = 0; d < rank; d++) bs[d] = 0;
  if (c.gran >= 1) {
    if (w->out_axis < 0) return 0;
    bs[w->out_axis] = 1;
  }
  if (c.gran == 2) {
    if (w->in_axis < 0 || t->shape[w->in_axis] % c.block != 0) return 0;
    bs[w->in_axis] = c.block;
  }
  for (d = 0; d < rank; d++) {
    sshape[d] = bs[d] > 0 ? t->shape[d] / bs[d] : 1;
    nblk *= sshape[d];
    if (bs[d] > 0) last = d;
  }
  for (d = rank - 1, k = 1; d >= 0; d--) {
    sstride[d] = k;
    k *= sshape[d];
  }
  for (d = last + 1; d < rank; d++) inner *= t->shape[d];
  run = last >= 0 ? bs[last] * inner : n;
  nruns = run > 0 ? n / run : 0;
  if (n == 0 || nruns == 0) return 0;
  /* the block of each run: an odometer over axes [0, last] (axis last in steps of its block) */
  bidx = (int64_t *)mgopt_program_alloc(p, (size_t)nruns * sizeof(int64_t), 8);
  mn = (float *)mgopt_program_alloc(p, (size_t)nblk * 4 * sizeof(float), 8);
  qt = mgopt__tensor_new_data(p, c.qdt, rank, t->shape, 0);
  q = c.qdt == MGOPT_DT_INT8 || c.qdt == MGOPT_DT_UINT8 ? (uint8_t *)(qt ? qt->data : NULL)
                                                        : (uint8_t *)mgopt_program_alloc(p, (size_t)n, 64);
  if (!bidx || !mn || !qt || !q) return -1;
  mx = mn + nblk;
  sc = mx + nblk;
  zp = sc + nblk;
  for (d = 0; d <= last; d++) m[d] = 0;
  for (r = 0; r < nruns; r++) {
    int64_t b = 0;
    for (d = 0; d <= last; d++)
      if (bs[d] > 0) b += (d == last ? m[d] : m[d] / bs[d]) * sstride[d];
    bidx[r] = b;
    for (d = last; d >= 0; d--) {
      int64_t lim = d == last ? t->shape[d] / bs[d] : t->shape[d];
      if (++m[d] < lim) break;
      m[d] = 0;
    }
  }
  if (wdt == MGOPT_DT_FP32) {
    xf = (const float *)mgopt_tensor_data(p, t);
  } else {
    const uint16_t *h = (const uint16_t *)mgopt_tensor_data(p, t);
    buf = (float *)mgopt_program_alloc(p, (size_t)n * sizeof(float), 64);
    if (!buf || !h) return -1;
    for (i = 0; i < n; i++) buf[i] = mgopt_f16_to_f32(h[i]);
    xf = buf;
  }
  if (!xf) return -1;
  for (k = 0; k < nblk; k++) {
    mn[k] = HUGE_VALF;
    mx[k] = -HUGE_VALF;
  }
  for (r = 0; r < nruns; r++) mgopt__lq_minmax_f32(xf + r * run, run, &mn[bidx[r]], &mx[bidx[r]], &bad);
  if (bad) return 0;
  for (k = 0; k < nblk; k++) {
    double lo = mn[k], hi = mx[k], vmin, vmax, s;
    if (lo == -HUGE_VAL || hi == HUGE_VAL) return 0; /* an infinite weight */
    if (c.linear) {
      vmin = lo < 0 ? lo : 0;
      vmax = hi > 0 ? hi : 0;
    } else {
      double R = fabs(lo) > fabs(hi) ? fabs(lo) : fabs(hi);
      vmin = -R;
      vmax = R;
    }
    if (vmax == vmin) { /* a block of zeros */
      sc[k] = 1.0f;
      zp[k] = (float)(c.linear ? c.qmin : c.has_zp ? c.qmax / 2 : 0);
      continue;
    }
    s = mgopt__lq_rnd(wdt, mgopt__lq_rnd(wdt, vmax - vmin) / (double)(c.qmax - c.qmin));
    if (!(s > 0) || s == HUGE_VAL) return 0;
    sc[k] = (float)s;
    if (c.linear) {
      double num = mgopt__lq_rnd(wdt, mgopt__lq_rnd(wdt, (double)c.qmin * vmax) - mgopt__lq_rnd(wdt, (double)c.qmax * vmin));
      double z = mgopt__lq_rne(mgopt__lq_rnd(wdt, num / mgopt__lq_rnd(wdt, vmax - vmin)));
      zp[k] = (float)(z < (double)c.qmin ? (double)c.qmin : z > (double)c.qmax ? (double)c.qmax : z);
    } else {
      zp[k] = (float)(c.has_zp ? c.qmax / 2 : 0);
    }
  }
  for (r = 0; r < nruns; r++) {
    int64_t b = bidx[r];
    const float *x = xf + r * run;
    uint8_t *o = q + r * run;
    if (wdt == MGOPT_DT_FP32) {
      mgopt__lq_run_f32(x, run, sc[b], zp[b], (float)c.qmin, (float)c.qmax, o);
    } else {
      for (i = 0; i < run; i++) {
        double y = mgopt__lq_rne(mgopt__lq_rnd(wdt, (double)x[i] / (double)sc[b])) + zp[b];
        o[i] = (uint8_t)(y < (double)c.qmin ? c.qmin : y > (double)c.qmax ? c.qmax : (int64_t)y);
      }
    }
  }
  /* the tensors */
  st = mgopt_tensor_new(p, wdt, rank, sshape);
  if (c.has_zp) zt = mgopt_tensor_new(p, c.qdt, rank, sshape);
  if (!st || (c.has_zp && !zt)) return -1;
  if (c.qdt != MGOPT_DT_INT8 && c.qdt != MGOPT_DT_UINT8) {
    uint8_t *o = (uint8_t *)qt->data;
    for (i = 0; i + 1 < n; i += 2) o[i / 2] = (uint8_t)((q[i] & 15u) | ((q[i + 1] & 15u) << 4));
    if (n & 1) o[n / 2] = (uint8_t)(q[n - 1] & 15u);
  }
  for (k = 0; k < nblk; k++) {
    mgopt_tensor_set_f64(st, k, (double)sc[k]);
    if (zt) mgopt_tensor_set_i64(zt, k, (int64_t)zp[k]);
  }
  vals[0] = mgopt_build_const(p, w->op->parent, w->op, mgopt__pu_name2(p, base, "_quantized_data"), qt);
  vals[1] = mgopt_build_const(p, w->op->parent, w->op, mgopt__pu_name2(p, base, "_quantized_scale"), st);
  vals[2] = zt ? mgopt_build_const(p, w->op->parent, w->op, mgopt__pu_name2(p, base, "_quantized_offset"), zt) : NULL;
  if (!vals[0] || !vals[1] || (zt && !vals[2])) return -1;
  ce = mgopt_build_op(p, w->op->parent, w->op, "constexpr_blockwise_shift_scale",
                      mgopt__pu_name2(p, base, "_quantized"), zt ? 3 : 2, slots, vals, 1);
  if (!ce) return -1;
  if (mgopt_op_infer(p, ce, NULL) != MGOPT_OK || !mgopt_type_equal(&ce->outs[0]->type, &w->op->outs[0]->type) ||
      !mgopt_program_target_accepts(p, ce)) {
    mgopt__cw_unbuild(ce);
    return 0;
  }
  mgopt__cw_replace(w, ce->outs[0]);
  return 1;
}

static mgopt_status mgopt__lq_run(mgopt_pass_ctx *ctx) {
  mgopt__lq_cfg c;
  mgopt__cw_pass cp;
  if (!mgopt__lq_config(ctx, ctx->opts, &c)) return MGOPT_ERR_INVALID_ARG;
  memset(&cp, 0, sizeof cp);
  cp.name = "linear_quantize_weights";
  cp.opts = mgopt__lq_opts;
  cp.nopts = MGOPT__ARRAY_COUNT(mgopt__lq_opts);
  cp.fn = mgopt__lq_fn;
  return mgopt__cw_run(ctx, &cp);
}

MGOPT__DEFINE_PASS_WITH_OPTIONS(compression, common, linear_quantize_weights,
                                "float weights stored as int8/uint8/int4/uint4 with scales (constexpr_blockwise_shift_scale)",
                                mgopt__lq_opts, mgopt__lq_run);
/* src/passes/compression/prune_weights.c — common::prune_weights: weights with their small values zeroed, stored as the non-zero values and a bit mask.

   Spec: mil_graph_passes.txt, compression::prune_weights; reference mil-passes.md §2.5, §4.1, §4.4, §4.5.

   Before (weight_threshold=0, threshold=0.5, minimum_sparsity_percentile=0.3):
     main(%x: (1, 5, fp32)) {
       %w: (2, 5, fp32)* = const(val=[[0.1, 2, -0.5, 3, 0], [-4, 0.2, 5, 0.4, 6]])
       %y: (1, 2, fp32) = linear(x=%x, weight=%w)
     } -> (%y)
   After:
     main(%x: (1, 5, fp32)) {
       %w_sparsified_nonzero_data: (5, fp32)* = const(val=[2, 3, -4, 5, 6])
       %w_sparsified_mask: (2, 5, uint1)* = const(val=[[0, 1, 0, 1, 0], [1, 0, 1, 0, 1]])
       %w_sparsified: (2, 5, fp32) = constexpr_sparse_to_dense(nonzero_data=%w_sparsified_nonzero_data,
                                                               mask=%w_sparsified_mask)
       %y: (1, 2, fp32) = linear(x=%x, weight=%w_sparsified)
     } -> (%y)

   Options (defaults as the reference's OpThresholdPrunerConfig /
   OpMagnitudePrunerConfig):
   - mode: threshold (default) or magnitude.
   - threshold (1e-12, >= 0): threshold mode zeroes |w| <= threshold.
   - minimum_sparsity_percentile (0.5, in [0, 1]): threshold mode leaves a
     weight alone when the fraction of zeros after pruning is below it.
   - target_sparsity (in [0, 1]): magnitude mode zeroes |w| <= the
     100*target_sparsity percentile of the magnitudes (numpy's linear
     method); 1 zeroes everything, 0 nothing.
   - block_size (> 1): magnitude mode on blocks of block_size consecutive
     entries along axis `dim` (0 by default), ranked by their L2 norm (the
     last block may be short); skipped when block_size > shape[dim] / 2.
   - n_m_ratio ("n:m", n <= m): magnitude mode zeroes the n smallest |w| of
     every m consecutive entries along axis `dim` (1 by default; the last
     group zero-padded); skipped when m > shape[dim] / 2. Exclusive with
     target_sparsity and block_size.
   - dim (0 or 1): the axis of block_size and n_m_ratio.
   - weight_threshold (2048): a weight is pruned when it has MORE elements.
   Per-weight options come from the compression configuration
   (mgopt_compress_config).

   Fires on: every weight the compression driver offers (passes/compress.c:
   fp16, bf16, fp32, int8 or uint8 const of rank >= 2, more than
   weight_threshold elements, read by an op). The op emitted is the
   reference's iOS18 form: nonzero_data (the weight's dtype, the kept
   non-zero values in row-major order) and mask (uint1, the weight's shape,
   1 where a value is kept), named <const>_sparsified. Values that were zero
   before are dropped like pruned ones (the mask is w != 0), so -0.0 comes
   back as +0.0.
   Must not fire: threshold mode below minimum_sparsity_percentile; block
   and n:m pruning of a weight read by anything but conv.weight or
   linear.weight, of rank outside 2..5, or too small along `dim` (see
   above); on consts read by constexpr_* ops; when the program's target
   refuses the op.

   Numeric contract (src/kernels/prune.c): magnitudes in double from the
   weight's exact values; the percentile is numpy's default linear method in
   double (numpy 2 compares float32 magnitudes with the float64 percentile:
   so does this); block norms are a sum of squares in double and one sqrt
   (numpy computes them in the weight's dtype: a magnitude within an ulp of
   the percentile may be decided differently); n:m breaks ties by position.
   Kept values are copied bit for bit.

   Cost: O(numel) per weight for threshold and n:m (times m), a quickselect
   (expected O(numel)) for the percentile; numel doubles and numel bytes of
   scratch. */

static mgopt_opt_def const mgopt__pr_opts[8] = {
    {"mode", MGOPT_OPT_STRING, "threshold", "threshold or magnitude"},
    {"threshold", MGOPT_OPT_FLOAT, "1e-12", "threshold mode: zero |w| <= threshold"},
    {"minimum_sparsity_percentile", MGOPT_OPT_FLOAT, "0.5",
     "threshold mode: skip a weight whose fraction of zeros stays below this"},
    {"target_sparsity", MGOPT_OPT_FLOAT, "-1", "magnitude mode: fraction of the weight zeroed (0..1)"},
    {"block_size", MGOPT_OPT_INT, "1", "magnitude mode: prune blocks of this many entries along dim (> 1)"},
    {"n_m_ratio", MGOPT_OPT_STRING, "", "magnitude mode: \"n:m\", zero n of every m entries along dim"},
    {"dim", MGOPT_OPT_INT, "-1", "axis of block_size (default 0) and n_m_ratio (default 1)"},
    {"weight_threshold", MGOPT_OPT_INT, "2048", "prune weights with more elements than this"}};

enum {
  MGOPT__PR_MODE,
  MGOPT__PR_THRESHOLD,
  MGOPT__PR_MIN_SPARSITY,
  MGOPT__PR_TARGET,
  MGOPT__PR_BLOCK,
  MGOPT__PR_NM,
  MGOPT__PR_DIM,
  MGOPT__PR_WEIGHT_THRESHOLD
};

typedef struct mgopt__pr_cfg {
  int magnitude;
  double threshold, min_sparsity, target;
  int64_t block, n, m;
  int32_t dim;
} mgopt__pr_cfg;

/* Reads one weight's options; 0 with diag set when they are not valid. */
static int mgopt__pr_config(mgopt_pass_ctx *ctx, const mgopt_opt_value *o, mgopt__pr_cfg *c) {
  const char *mode = o[MGOPT__PR_MODE].s ? o[MGOPT__PR_MODE].s : "threshold";
  const char *nm = o[MGOPT__PR_NM].s ? o[MGOPT__PR_NM].s : "";
  memset(c, 0, sizeof *c);
  if (strcmp(mode, "threshold") == 0) c->magnitude = 0;
  else if (strcmp(mode, "magnitude") == 0) c->magnitude = 1;
  else return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "prune_weights: unknown mode '%s'", mode), 0;
  c->threshold = o[MGOPT__PR_THRESHOLD].f;
  c->min_sparsity = o[MGOPT__PR_MIN_SPARSITY].f;
  c->target = o[MGOPT__PR_TARGET].f;
  c->block = o[MGOPT__PR_BLOCK].i;
  c->dim = (int32_t)o[MGOPT__PR_DIM].i;
  if (!(c->threshold >= 0.0))
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "prune_weights: threshold must be >= 0"), 0;
  if (!(c->min_sparsity >= 0.0 && c->min_sparsity <= 1.0))
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG,
                          "prune_weights: minimum_sparsity_percentile must be in [0, 1]"),
           0;
  if (o[MGOPT__PR_WEIGHT_THRESHOLD].i < 0)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "prune_weights: weight_threshold must be >= 0"), 0;
  if (nm[0]) {
    char *end = NULL;
    long long n = strtoll(nm, &end, 10), m;
    if (!end || *end != ':')
      return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "prune_weights: n_m_ratio must be \"n:m\""), 0;
    m = strtoll(end + 1, &end, 10);
    if (*end || n < 0 || m <= 0 || n > m)
      return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG,
                            "prune_weights: n_m_ratio must be \"n:m\" with 0 <= n <= m, m > 0"),
             0;
    c->n = n;
    c->m = m;
  }
  if (!c->magnitude) {
    if (c->m || c->block != 1 || c->target != -1.0)
      return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG,
                            "prune_weights: target_sparsity, block_size and n_m_ratio need mode=magnitude"),
             0;
    return 1;
  }
  if ((c->target != -1.0) == (c->m != 0))
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG,
                          "prune_weights: magnitude mode takes exactly one of target_sparsity and n_m_ratio"),
           0;
  if (c->m && c->block != 1)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG,
                          "prune_weights: block_size and n_m_ratio exclude each other"),
           0;
  if (!c->m && !(c->target >= 0.0 && c->target <= 1.0))
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "prune_weights: target_sparsity must be in [0, 1]"), 0;
  if (c->block < 1)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "prune_weights: block_size must be >= 1"), 0;
  if (c->dim == -1) c->dim = c->m ? 1 : 0;
  if (c->dim != 0 && c->dim != 1)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "prune_weights: dim must be 0 or 1"), 0;
  return 1;
}

/* Every reader of v reads it as the weight of a conv or linear. */
static int mgopt__pr_conv_linear_only(const mgopt_value *v) {
  const mgopt_use *u;
  for (u = v->uses; u; u = u->next) {
    const mgopt_op *op = u->op;
    if (!op || (op->kind != MGOPT_OP_conv && op->kind != MGOPT_OP_linear)) return 0;
    if (u->slot < 0 || u->slot >= op->nslots || strcmp(op->slots[u->slot].name, "weight") != 0) return 0;
  }
  return 1;
}

/* keep[] for w under c: 1 done, 0 the weight is left alone. */
static int mgopt__pr_mask(const mgopt__pr_cfg *c, const mgopt_tensor *t, double *mag, double *scratch,
                          uint8_t *keep) {
  int64_t n = t->numel, i, zeros = 0;
  if (!c->magnitude) {
    mgopt__kp_magnitude(t, mag);
    mgopt__kp_threshold_mask(mag, n, c->threshold, keep);
    for (i = 0; i < n; i++) zeros += !keep[i] || mag[i] == 0.0;
    return !((double)zeros / (double)n < c->min_sparsity);
  }
  if (c->m) {
    mgopt__kp_magnitude(t, mag);
    return mgopt__kp_nm_mask(t, mag, c->n, c->m, c->dim, keep);
  }
  if (c->block > 1) {
    if (!mgopt__kp_block_magnitude(t, c->dim, c->block, mag)) return 0;
  } else {
    mgopt__kp_magnitude(t, mag);
  }
  mgopt__kp_magnitude_mask(mag, n, c->target, scratch, keep);
  return 1;
}

static int mgopt__pr_fn(mgopt_pass_ctx *ctx, const mgopt__cw_weight *w, void *ud) {
  mgopt_program *p = ctx->program;
  mgopt__pr_cfg c;
  mgopt_tensor *t = w->t, *nzt, *mt;
  int64_t n = t->numel, d;
  double *mag = NULL;
  uint8_t *keep;
  const char *base = mgopt__pu_value_name(w->op->outs[0]);
  static const char *const slots[2] = {"nonzero_data", "mask"};
  mgopt_value *vals[2];
  mgopt_op *ce;
  void *nzd;
  int ok;
  MGOPT__UNUSED(ud);
  if (!mgopt__pr_config(ctx, w->opts, &c)) return -2;
  if (!mgopt__kp_weight_dtype((mgopt_dtype)t->dtype) || n <= 0) return 0;
  if (c.magnitude && (c.m || c.block > 1) && !mgopt__pr_conv_linear_only(w->op->outs[0])) return 0;
  if (!mgopt_tensor_data(p, t)) return -1;
  mag = (double *)mgopt__heap_realloc(&p->alloc, NULL, 0, (size_t)n * (2 * sizeof(double) + 1));
  if (!mag) return -1;
  keep = (uint8_t *)(mag + 2 * n);
  ok = mgopt__pr_mask(&c, t, mag, mag + n, keep);
  nzt = mt = NULL;
  nzd = NULL;
  if (ok) {
    d = mgopt__kp_nonzero_count(t, keep);
    nzt = mgopt_tensor_new(p, (mgopt_dtype)t->dtype, 1, &d);
    mt = mgopt_tensor_new(p, MGOPT_DT_UINT1, t->rank, t->shape);
    if (nzt && mt && (nzd = mgopt_tensor_data_mut(p, nzt)) != NULL && mgopt_tensor_data_mut(p, mt))
      mgopt__kp_encode(t, keep, nzd, (uint8_t *)mt->data);
    else
      ok = -1;
  }
  mgopt__heap_free(&p->alloc, mag, (size_t)n * (2 * sizeof(double) + 1));
  if (ok != 1) return ok;
  vals[0] = mgopt_build_const(p, w->op->parent, w->op, mgopt__pu_name2(p, base, "_sparsified_nonzero_data"), nzt);
  vals[1] = mgopt_build_const(p, w->op->parent, w->op, mgopt__pu_name2(p, base, "_sparsified_mask"), mt);
  if (!vals[0] || !vals[1]) return -1;
  ce = mgopt_build_op(p, w->op->parent, w->op, "constexpr_sparse_to_dense", mgopt__pu_name2(p, base, "_sparsified"), 2,
                      slots, vals, 1);
  if (!ce) return -1;
  if (mgopt_op_infer(p, ce, NULL) != MGOPT_OK || !mgopt_type_equal(&ce->outs[0]->type, &w->op->outs[0]->type) ||
      !mgopt_program_target_accepts(p, ce)) {
    mgopt__cw_unbuild(ce);
    return 0;
  }
  mgopt__cw_replace(w, ce->outs[0]);
  return 1;
}

static mgopt_status mgopt__pr_run(mgopt_pass_ctx *ctx) {
  mgopt__pr_cfg c;
  mgopt__cw_pass cp;
  if (!mgopt__pr_config(ctx, ctx->opts, &c)) return MGOPT_ERR_INVALID_ARG;
  memset(&cp, 0, sizeof cp);
  cp.name = "prune_weights";
  cp.opts = mgopt__pr_opts;
  cp.nopts = MGOPT__ARRAY_COUNT(mgopt__pr_opts);
  cp.fn = mgopt__pr_fn;
  return mgopt__cw_run(ctx, &cp);
}

MGOPT__DEFINE_PASS_WITH_OPTIONS(compression, common, prune_weights,
                                "weights with small values zeroed, stored sparse (constexpr_sparse_to_dense)",
                                mgopt__pr_opts, mgopt__pr_run);
/* src/passes/compression/decompress_weights.c — common::decompress_weights: every constexpr_* weight becomes a plain const.

   Spec: mil_graph_passes.txt, compression (WeightDecompressor); reference mil-passes.md §2.5, §4.5.

   Before:
     main(%x: (1, 5, fp32)) {
       %d: (5, fp32)* = const(val=[2, 3, -4, 5, 6])
       %m: (2, 5, uint1)* = const(val=[[0, 1, 0, 1, 0], [1, 0, 1, 0, 1]])
       %w: (2, 5, fp32) = constexpr_sparse_to_dense(nonzero_data=%d, mask=%m)
       %y: (1, 2, fp32) = linear(x=%x, weight=%w)
     } -> (%y)
   After:
     main(%x: (1, 5, fp32)) {
       %w: (2, 5, fp32)* = const(val=[[0, 2, 0, 3, 0], [-4, 0, 5, 0, 6]])
       %y: (1, 2, fp32) = linear(x=%x, weight=%w)
     } -> (%y)

   Fires on: every registered constexpr_* op (affine_dequantize,
   lut_to_dense, sparse_to_dense, blockwise_shift_scale, cast, and any other
   op of the constexpr trait), in every block, whose operands are constants
   and whose kernel computes it; chains (a constexpr reading another's
   output) fold in order. The const takes the output's name; the constants
   that fed only folded ops are erased.
   Must not fire: opaque constexpr ops (no kernel); an op the kernel refuses
   (a malformed mask, a shape that disagrees); when the result's static type
   does not suit a reader of the output.
   Numeric contract: the constexpr kernels' (src/kernels/constexpr.c,
   src/kernels/elementwise.c for constexpr_cast), the same values an
   evaluator or a runtime materializes.
   Cost: one worklist run over the program, plus each kernel's O(numel). */

typedef struct mgopt__dw_state {
  mgopt_fold_fn fold;
  void *ud;
  mgopt_op **fed; /* const ops that fed a folded op */
  int64_t nfed, cap;
  const mgopt_allocator *al;
  int oom;
} mgopt__dw_state;

static int mgopt__dw_fold(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud) {
  mgopt__dw_state *st = (mgopt__dw_state *)ud;
  int32_t s, k, i;
  int r;
  if (op->kind == MGOPT_OP_OPAQUE || !(mgopt_op_traits(op) & MGOPT_TRAIT_CONSTEXPR)) return 0;
  r = st->fold(p, op, out, st->ud);
  if (r != 1) return r;
  for (i = 0; i < op->nouts; i++)
    if (!mgopt__pu_replace_static_fits(p, op->outs[i], (mgopt_dtype)out[i]->dtype, out[i]->rank, out[i]->shape))
      return 0;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      mgopt_value *v = op->slots[s].uses[k].value;
      if (!v || !v->def) continue;
      if (st->nfed == st->cap) {
        int64_t nc = st->cap ? 2 * st->cap : 64;
        mgopt_op **q = (mgopt_op **)mgopt__heap_realloc(st->al, st->fed, (size_t)st->cap * sizeof(mgopt_op *),
                                                        (size_t)nc * sizeof(mgopt_op *));
        if (!q) return -1;
        st->fed = q;
        st->cap = nc;
      }
      st->fed[st->nfed++] = v->def;
    }
  return 1;
}

static int mgopt__dw_cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (mgopt_op *const *)a, y = (uintptr_t) * (mgopt_op *const *)b;
  return x < y ? -1 : x > y;
}

static mgopt_status mgopt__dw_run(mgopt_pass_ctx *ctx) {
  mgopt_rewrite_config cfg;
  mgopt_rewrite_stats stats;
  mgopt__dw_state st;
  mgopt_status s;
  int64_t i;
  memset(&st, 0, sizeof st);
  st.fold = ctx->fold ? ctx->fold : mgopt_fold_op;
  st.ud = ctx->fold ? ctx->fold_ud : NULL;
  st.al = &ctx->program->alloc;
  memset(&cfg, 0, sizeof cfg);
  memset(&stats, 0, sizeof stats);
  cfg.keep_dead = 1;
  cfg.fold = mgopt__dw_fold;
  cfg.fold_ud = &st;
  s = mgopt_rewrite_program(ctx->program, NULL, 0, &cfg, &stats, ctx->diag);
  /* the constants read only by folded ops go; each op once (a const may
     have fed several), and none was erased while the driver ran */
  if (st.nfed) qsort(st.fed, (size_t)st.nfed, sizeof(mgopt_op *), mgopt__dw_cmp_ptr);
  for (i = 0; i < st.nfed; i++) {
    if (i > 0 && st.fed[i] == st.fed[i - 1]) continue;
    if (st.fed[i]->kind == MGOPT_OP_const && mgopt__op_is_dead(st.fed[i])) mgopt_op_erase(st.fed[i]);
  }
  mgopt__heap_free(st.al, st.fed, (size_t)st.cap * sizeof(mgopt_op *));
  ctx->rewrites += stats.folds;
  return s;
}

MGOPT__DEFINE_PASS(compression, common, decompress_weights, "every constexpr_* weight becomes a plain const",
                   mgopt__dw_run);
/* src/passes/compression/fp16_weights.c — common::fp16_weights: fp32 weights stored as fp16, read back through constexpr_cast.

   Spec: coreml_compression_conversion.md (fp16 weight storage); reference mil-passes.md §4.1 (which consts
   are weights), §4.5 (constexpr_cast).

   Before (weight_threshold=0):
     main(%x: (1, 5, fp32)) {
       %w: (2, 5, fp32)* = const(val=[[0.1, 2, -0.5, 3, 0], [-4, 0.2, 5, 0.4, 6]])
       %y: (1, 2, fp32) = linear(x=%x, weight=%w)
     } -> (%y)
   After:
     main(%x: (1, 5, fp32)) {
       %w_fp16: (2, 5, fp16)* = const(val=[[0.1, 2, -0.5, 3, 0], [-4, 0.2, 5, 0.4, 6]])
       %w_fp32: (2, 5, fp32) = constexpr_cast(source_val=%w_fp16, output_dtype="fp32")
       %y: (1, 2, fp32) = linear(x=%x, weight=%w_fp32)
     } -> (%y)

   Options: weight_threshold (0): a weight is stored as fp16 when it has
   MORE elements. Per-weight options come from the compression
   configuration (mgopt_compress_config).
   Fires on: every fp32 weight the compression driver offers
   (passes/compress.c: rank >= 2, at least 10 elements, read by an op).
   The computation stays fp32: only the stored bytes halve.
   Must not fire: on a weight with a finite value that fp16 cannot hold
   (|v| >= 65520 rounds to inf); on fp16, bf16 and integer weights; on
   consts read by constexpr_* ops; when the program's target refuses
   constexpr_cast.
   Numeric contract: each value rounded once to nearest even fp16
   (mgopt_f32_to_f16_n; subnormals kept, values below 2^-25 become zero of
   their sign, NaN stays NaN, inf stays inf); constexpr_cast widens it back
   exactly.
   Cost: one scan and one vectorized conversion per weight, O(numel). */

static mgopt_opt_def const mgopt__fw_opts[1] = {
    {"weight_threshold", MGOPT_OPT_INT, "0", "store weights with more elements than this as fp16"}};

static int mgopt__fw_fn(mgopt_pass_ctx *ctx, const mgopt__cw_weight *w, void *ud) {
  mgopt_program *p = ctx->program;
  mgopt_tensor *t = w->t, *h;
  const float *src;
  const char *base = mgopt__pu_value_name(w->op->outs[0]);
  static const char *const slots[1] = {"source_val"};
  mgopt_value *v;
  mgopt_op *ce;
  int64_t i;
  MGOPT__UNUSED(ud);
  if (w->opts[0].i < 0)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "fp16_weights: weight_threshold must be >= 0"), -2;
  if (t->dtype != MGOPT_DT_FP32) return 0;
  src = (const float *)mgopt_tensor_data(p, t);
  if (!src) return -1;
  for (i = 0; i < t->numel; i++) {
    float a = fabsf(src[i]);
    if (a >= 65520.0f && a < (float)HUGE_VAL) return 0; /* finite, and inf in fp16 */
  }
  h = mgopt_tensor_new(p, MGOPT_DT_FP16, t->rank, t->shape);
  if (!h || !mgopt_tensor_data_mut(p, h)) return -1;
  mgopt_f32_to_f16_n(src, (uint16_t *)h->data, t->numel);
  v = mgopt_build_const(p, w->op->parent, w->op, mgopt__pu_name2(p, base, "_fp16"), h);
  if (!v) return -1;
  ce = mgopt_build_op(p, w->op->parent, w->op, "constexpr_cast", mgopt__pu_name2(p, base, "_fp32"), 1, slots, &v, 1);
  if (!ce || mgopt_op_set_string(ce, "output_dtype", "fp32") != MGOPT_OK) return -1;
  if (mgopt_op_infer(p, ce, NULL) != MGOPT_OK || !mgopt_type_equal(&ce->outs[0]->type, &w->op->outs[0]->type) ||
      !mgopt_program_target_accepts(p, ce)) {
    mgopt__cw_unbuild(ce);
    return 0;
  }
  mgopt__cw_replace(w, ce->outs[0]);
  return 1;
}

static mgopt_status mgopt__fw_run(mgopt_pass_ctx *ctx) {
  mgopt__cw_pass cp;
  if (ctx->opts[0].i < 0)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "fp16_weights: weight_threshold must be >= 0");
  memset(&cp, 0, sizeof cp);
  cp.name = "fp16_weights";
  cp.opts = mgopt__fw_opts;
  cp.nopts = MGOPT__ARRAY_COUNT(mgopt__fw_opts);
  cp.fn = mgopt__fw_fn;
  return mgopt__cw_run(ctx, &cp);
}

MGOPT__DEFINE_PASS_WITH_OPTIONS(compression, common, fp16_weights,
                                "fp32 weights stored as fp16, widened by constexpr_cast", mgopt__fw_opts,
                                mgopt__fw_run);
/* src/passes/registry.c — the built-in registry: the passes of passes/list.h in its order, and the named pipelines. */

/* Every pass's def, declared for compiling this file alone. C++ cannot declare
   an internal object ahead of its definition; it needs no declaration, since
   the amalgamation defines every pass before this file. */
#ifndef __cplusplus
#define MGOPT__PASS_DECLARE(family, name) MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_##name;
MGOPT__PASS_LIST(MGOPT__PASS_DECLARE)
#undef MGOPT__PASS_DECLARE
#endif

/* The passes in list order (passes/list.h). */
#define MGOPT__PASS_ADDRESS(family, name) &mgopt__pass_##name,
static const mgopt_pass_def *const mgopt__builtin_passes[] = {MGOPT__PASS_LIST(MGOPT__PASS_ADDRESS)};
#undef MGOPT__PASS_ADDRESS

/* MIL's default order (_COMMON_PASSES, reference mil-passes.md §1.1), one
   entry per line with its number there; `cleanup` (entries 78-96) follows.
   Left out on purpose: sanitize_input_output_names (it renames the model's
   interface) and guard_negative_gather_indices (a Core ML backend workaround
   that adds ops). update_output_dtypes and image_input_preprocess do nothing
   without their options. add_fp16_cast and add_int16_cast (60, 61, 68) run
   only in default_fp16. remove_symbolic_reshape skips what it cannot resolve
   instead of failing. mgopt's own entries say why in their comment:
   canonicalize_opaque_ops and fold_shape_ops after entries 11 and 16 (an
   ONNX op left opaque for want of constant operands maps once they are
   constant, and shapes known by then fold; the second time catches what
   the first one's folds made constant; resolve_reshape_shape then gives a
   reshape to its own input's dims a constant shape, and fold_shape_chains
   repeats the three until a shape computation stops changing),
   eliminate_output_identity after entry 20 (an identity whose only job is
   to name a block output), dead_code_elimination
   after it (the fusions that follow fire only when the value they fold has
   no other reader, and a reader nobody uses must not hold them back). Passes mgopt
   does not have yet are named where they belong; each joins its place when
   it exists (an unknown pass is an error). */
#define MGOPT__DEFAULT_HEAD \
  /*  1 lower_complex_dialect_ops: not written yet */ \
  "update_output_dtypes," /* 2 */ \
  "cast_optimization," /* 3 */ \
  "noop_elimination," /* 4 */ \
  /*  5 int_op_canonicalization: not written yet */ \
  /*  6 nullify_redundant_quantization_zero_point: not written yet */ \
  /*  7 dequantize_quantize_pair_elimination: not written yet */ \
  /*  8 distributive_quantized_binary_op_scale_normalization: not written yet */ \
  /*  9 dequantize_to_constexpr: not written yet */ \
  /* 10 canonicalize_quantized_lut_pattern: not written yet */ \
  "const_elimination," /* 11 */ \
  "canonicalize_opaque_ops," /* mgopt: an ONNX op opaque for want of constants maps now */ \
  "fold_shape_ops," /* mgopt: a Shape of what is now typed folds */ \
  /* 12 sanitize_input_output_names: left out, renames the model's inputs and outputs */ \
  "divide_to_multiply," /* 13 */ \
  "select_optimization," /* 14 */ \
  "add_conv_transpose_output_shape," /* 15 */ \
  "const_elimination," /* 16 */ \
  "canonicalize_opaque_ops," /* mgopt: ops whose operands entries 11-16 made constant map now */ \
  "fold_shape_ops," /* mgopt: and the shapes they now type fold */ \
  "resolve_reshape_shape," /* mgopt: a reshape to its own input's dims gets a constant shape */ \
  "fold_shape_chains," /* mgopt: the three above again until shape computations settle */ \
  "const_deduplication," /* 17 */ \
  "loop_invariant_elimination," /* 18 */ \
  "remove_symbolic_reshape{strict=false}," /* 19 */ \
  "noop_elimination," /* 20 */ \
  "eliminate_output_identity," /* mgopt: an identity that only names a block output goes */ \
  "dead_code_elimination," /* mgopt: a dead reader must not block the fusions */ \
  "fuse_matmul_weight_bias," /* 21 */ \
  "fuse_linear_bias," /* 22 */ \
  "fuse_gelu_tanh_approximation," /* 23 */ \
  "fuse_gelu_exact," /* 24 */ \
  "fuse_gelu_sigmoid_approximation," /* 25 */ \
  "fuse_leaky_relu," /* 26 */ \
  "rank0_expand_dims_swap," /* 27 */ \
  "fuse_squeeze_expand_dims," /* 28 */ \
  "compose_conv1d," /* 29 */ \
  "use_reflection_padding," /* 30 */ \
  "merge_consecutive_paddings," /* 31 */ \
  "fuse_pad_conv," /* 32 */ \
  "image_input_preprocess," /* 33 */ \
  "replace_stack_reshape," /* 34 */ \
  "reduce_transposes," /* 35 */ \
  "fuse_dilated_conv," /* 36 */ \
  "fuse_conv_scale," /* 37 */ \
  "fuse_conv_bias," /* 38 */ \
  "fuse_onehot_matmul_to_gather," /* 39 */ \
  "fuse_layernorm_or_instancenorm," /* 40 */ \
  "fuse_elementwise_to_batchnorm," /* 41 */ \
  "fuse_reduce_mean," /* 42 */ \
  "fuse_conv_batchnorm," /* 43 */ \
  "fuse_conv_scale," /* 44 */ \
  "fuse_conv_bias," /* 45 */ \
  "fuse_conv_batchnorm," /* 46 */ \
  "detect_concat_interleave," /* 47 */ \
  "concat_to_pixel_shuffle," /* 48 */ \
  "fuse_prelu," /* 49 */ \
  "prelu_to_lrelu," /* 50 */ \
  "merge_consecutive_relus," /* 51 */ \
  "merge_consecutive_reshapes," /* 52 */ \
  "merge_consecutive_transposes," /* 53 */ \
  "fuse_transpose_matmul," /* 54 */ \
  "expand_high_rank_reshape_and_transpose," /* 55 */ \
  "fuse_stack_split," /* 56 */ \
  "reduce_transposes," /* 57 */ \
  "remove_redundant_ops," /* 58 */ \
  "dedup_op_and_var_names," /* 59 */ \
  ""
#define MGOPT__DEFAULT_MID \
  "update_output_dtypes," /* 62 */ \
  /* 63 guard_negative_gather_indices: left out, a Core ML backend workaround that adds ops */ \
  "const_elimination," /* 64 */ \
  "dead_code_elimination," /* 65 */ \
  "cast_optimization," /* 66 */ \
  "dead_code_elimination," /* 67 */ \
  ""
#define MGOPT__DEFAULT_TAIL \
  "const_elimination," /* 69 */ \
  "dead_code_elimination," /* 70 */ \
  "cast_optimization," /* 71 */ \
  "dead_code_elimination," /* 72 */ \
  "const_elimination," /* 73 */ \
  "canonicalize_inplace_pattern," /* 74 */ \
  "prefer_state_in_downstream," /* 75 */ \
  "const_elimination," /* 76 */ \
  "dead_code_elimination," /* 77 */ \
  ""

static const mgopt_pipeline_def mgopt__builtin_pipelines[] = {
    {"default", MGOPT__DEFAULT_HEAD MGOPT__DEFAULT_MID MGOPT__DEFAULT_TAIL "cleanup",
     "the default optimization pipeline: MIL's common passes, then cleanup"},
    {"default_fp16",
     MGOPT__DEFAULT_HEAD "add_fp16_cast,add_int16_cast," MGOPT__DEFAULT_MID "add_int16_cast," MGOPT__DEFAULT_TAIL
     "cleanup",
     "default with fp16 compute: casts fp32 ops to fp16 (add_fp16_cast, add_int16_cast) at MIL's places"},
    /* MIL's _CLEANUP_PASSES (reference mil-passes.md §1.1, entries 78-96) in
       their exact order. Passes mgopt does not have yet are named where they
       belong; each joins the string when it exists (an unknown pass is an error). */
    {"cleanup",
     "dead_code_elimination," /* 78 */
     "const_elimination," /* 79 */
     "cast_optimization," /* 80 */
     "dead_code_elimination," /* 81 */
     "const_elimination," /* 82 */
     "const_deduplication," /* 83 */
     "dead_code_elimination," /* 84 */
     "merge_affine_dequantize_with_consecutive_ops," /* 85 */
     "expand_dynamic_linear," /* 86 */
     "fuse_transpose_matmul," /* 87 */
     "dead_code_elimination," /* 88 */
     "const_deduplication," /* 89 */
     "loop_invariant_elimination," /* 90 */
     "noop_elimination," /* 91 */
     "dedup_op_and_var_names," /* 92 */
     "reduce_transposes," /* 93 */
     "remove_redundant_ops," /* 94 */
     "topological_reorder," /* 95 */
     "dead_code_elimination", /* 96 */
     "MIL's cleanup passes (_CLEANUP_PASSES order)"},
    /* The ONNX IR optimizer order (spec onnx_ir_optimizer_passes.txt, "Current
       order"); a MIL twin stands in where it does the same job. */
    {"onnx_cleanup",
     "name_fix," /* 1 */
     "cast_optimization," /* 2 remove_redundant_casts (twin) */
     "remove_redundant_transpose_reduce," /* 3 */
     "remove_redundant_transpose_add_forests," /* 4 */
     "remove_redundant_transpose_pairs," /* 5 */
     "remove_redundant_reshape_pairs," /* 6 */
     "noop_elimination," /* 7 remove_identity_reshapes (twin; also drops other no-ops) */
     "remove_redundant_ops," /* 8 common_subexpression_elimination (twin) */
     /* 9 lift_constants_to_initializers (an export concern: the ONNX writer) */
     "rewrite_mul_rsqrt_as_div," /* 10 */
     "inline_dropout_training_mode_constants," /* 11 */
     "propagate_shapes," /* 12-13 propagate_elementwise_shapes, propagate_unary_shapes */
     "cast_optimization," /* 14 remove_redundant_casts_after_propagation (twin) */
     "dead_code_elimination," /* 15 remove_dead_nodes; 16 remove_orphan_transposes */
     "prune_unused_graph_inputs", /* 17 */
     "the ONNX IR optimizer passes in their reference order"},
};

static const mgopt_registry mgopt__builtin_registry = {
    mgopt__builtin_passes, MGOPT__ARRAY_COUNT(mgopt__builtin_passes),
    mgopt__builtin_pipelines, MGOPT__ARRAY_COUNT(mgopt__builtin_pipelines),
    mgopt_fold_op, NULL};

MGOPTDEF const mgopt_registry *mgopt_builtin_registry(void) { return &mgopt__builtin_registry; }
#endif /* MGOPT__PASSES_IMPLEMENTATION_DONE */
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
