/* src/passes_internal.h — private helpers shared by passes (matching, replacing, attributes, shapes, precision) and the macros that define a pass. */
#ifndef MGOPT__PASSES_INTERNAL_H
#define MGOPT__PASSES_INTERNAL_H
#include "internal.h"
#include "passes_api.h"
#include "passes/list.h"

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
/* 1 when op (a conv or linear) applies a fused activation to its output
   (fused_activation other than "none"): a rewrite that folds what follows
   the op into it, or rebuilds it, must leave it alone or keep the attribute. */
MGOPT__PRIVATE int mgopt__pu_fused_act(const mgopt_op *op);
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
/* The pattern of an onnx::Dropout at inference (training_mode absent or
   statically false): its output becomes its input, the op goes when its mask
   is unused (src/passes/onnx/inline_dropout_training_mode_constants.c). */
MGOPT__PRIVATE int mgopt__pu_dropout_inference(mgopt_rewriter *rw, mgopt_op *op, void *ud);
/* The dims [*start, *end) of its input an onnx::Shape op returns (opset 15's
   start/end, negative counted from the end, clamped as ONNX does); 0 when
   the op is not one Shape of a tensor of known rank. */
MGOPT__PRIVATE int mgopt__pu_onnx_shape_range(const mgopt_op *op, int64_t *start, int64_t *end);
/* One element of a shape vector traced by mgopt__pu_shape_trace: a constant
   (a static dim counts as one), dim v of value `of`, or unknown. */
#define MGOPT__SHAPE_ELT_CONST 0
#define MGOPT__SHAPE_ELT_DIM 1
#define MGOPT__SHAPE_ELT_UNKNOWN 2
typedef struct mgopt__shape_elt {
  int kind;              /* MGOPT__SHAPE_ELT_* */
  int64_t v;             /* the constant, or the dim's index */
  const mgopt_value *of; /* _DIM: the value whose dim it is */
} mgopt__shape_elt;
/* The elements of v, a 0-d or 1-d integer value of at most MGOPT_MAX_RANK
   elements, through constants, onnx::Shape, slice_by_index and gather with
   constant parameters, concat on axis 0, integer casts, rank 0/1 reshapes
   and integer add/sub/mul of known elements
   (src/passes/onnx/resolve_reshape_shape.c): their count, or -1 when even
   the length is unknown (elements may be unknown). */
MGOPT__PRIVATE int64_t mgopt__pu_shape_trace(mgopt_program *p, const mgopt_value *v, mgopt__shape_elt *out);
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
/* The same walk up to the first op of any of the nend kinds in end_kinds. */
MGOPT__PRIVATE mgopt_op *mgopt__pu_elementwise_chain_to(mgopt_value *v, const int32_t *end_kinds, int32_t nend,
                                                        mgopt_op **chain, int32_t *n);

/* ---- combining parallel ops (passes/relay/combine_parallel_conv2d.c)
   Runs the parallel-op combiner on the ops of `kind` (conv or linear) with
   ctx's first option as min_num_branches. */
MGOPT__PRIVATE mgopt_status mgopt__cpo_run(mgopt_pass_ctx *ctx, int32_t kind);

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
/* The elementwise ops of relay::simplify_inference standing for a
   batch_norm, layer_norm or instance_norm (passes/relay/simplify_inference.c),
   made just before norm; returns the value standing for its output (the
   output of the last op made), or NULL with nothing made when norm does not
   qualify. norm is left in place. */
MGOPT__PRIVATE mgopt_value *mgopt__si_norm_elementwise(mgopt_rewriter *rw, mgopt_op *norm);
/* pad(x, mode constant, constant_val cval) in front of pos, padding dim
   `axis` by before/after and the dims after it by 0 (the pad vector covers
   dims axis..rank-1); its int32 pad const named pad_name, the op op_name.
   NULL, with nothing left built, when it cannot be made. */
MGOPT__PRIVATE mgopt_op *mgopt__pu_const_pad(mgopt_rewriter *rw, mgopt_op *pos, mgopt_value *x, int32_t rank,
                                             int64_t axis, int64_t before, int64_t after, double cval,
                                             const char *pad_name, const char *op_name);
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
/* a and b compute the same: one type, slots of the same names and lengths
   whose operands value_eq finds equal pairwise, equal attributes (parents
   and outputs are the caller's to compare). */
MGOPT__PRIVATE int mgopt__pu_ops_equal(const mgopt_op *a, const mgopt_op *b,
                                       int (*value_eq)(const mgopt_value *, const mgopt_value *));
/* Sets the integer-list parameter `name` of op to v[0..n): as an attribute,
   unless `like` carries that parameter as an operand, then as a new const
   operand of the same integer dtype. 0 on OOM. */
MGOPT__PRIVATE int mgopt__pu_set_ints_param(mgopt_rewriter *rw, mgopt_op *op, const mgopt_op *like, const char *name,
                                            const int64_t *v, int64_t n);
/* target dtype of a cast op (its `dtype` parameter), MGOPT_DT_UNKNOWN if unreadable. */
MGOPT__PRIVATE mgopt_dtype mgopt__pu_cast_dtype(const mgopt_op *cast);
/* A quantize q with the parameters of dequantize dq: scale constants equal
   element by element (a one-element constant equals a tensor of that value
   everywhere) or the same value, zero points absent on both or equal the
   same way, axes absent on both or equal once normalized, and q's
   output_dtype dq's input dtype: q undoes dq exactly on 8-bit integers. */
MGOPT__PRIVATE int mgopt__pu_quant_params_equal(const mgopt_op *dq, const mgopt_op *q);

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
   that op; its size (weight_threshold) and channel axes are then those of
   the weight the constexpr_* chain ends in (w->final). A pass that sets
   `compressed_ops` is offered the constexpr_blockwise_shift_scale and
   constexpr_lut_to_dense ops instead, judged by their materialized value
   (the folding kernels) like consts. Channel axes, over every reader (all must agree, else -1):
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
  const mgopt_value *final;    /* the weight it gives: the const's output, or through constexpr_* readers
                                  (constexpr_readers) the value the chain ends in */
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
  int constexpr_readers;       /* offer consts read by constexpr_* ops too (joint compression) */
  int compressed_ops;          /* offer constexpr_blockwise_shift_scale and constexpr_lut_to_dense ops
                                  instead of consts: w->op is that op, w->t its materialized value */
  mgopt__cw_fn fn;
  void *ud;
} mgopt__cw_pass;
/* Runs cp over ctx->program; adds the weights compressed to ctx->rewrites.
   MGOPT_ERR_INVALID_ARG (diag set) for a configuration rule whose options
   the pass does not take; MGOPT_ERR_NOMEM. */
MGOPT__PRIVATE mgopt_status mgopt__cw_run(mgopt_pass_ctx *ctx, const mgopt__cw_pass *cp);
/* Every use of w's const reads v instead (v's producer sits before w->op;
   v takes a function output's name), then the const is erased (a
   compressed op with the consts that fed only it). v must have
   the const's dtype and shape. */
MGOPT__PRIVATE void mgopt__cw_replace(const mgopt__cw_weight *w, mgopt_value *v);
/* Erases op and then the consts feeding it that nothing else reads (backing
   out of a replacement built before asking the target). */
MGOPT__PRIVATE void mgopt__cw_unbuild(mgopt_op *op);
/* Ends a replacement by the one op ce built before w->op: ce is inferred,
   must give the const's exact type and be accepted by the program's target;
   then it replaces the const (mgopt__cw_replace) and 1 is returned, else ce
   is unbuilt and 0 is returned. */
MGOPT__PRIVATE int mgopt__cw_finish(mgopt_program *p, const mgopt__cw_weight *w, mgopt_op *ce);

/* ---- joint compression helpers (passes/compress.c) */
/* The elements of src (any dtype; src->numel == mask->numel) at the set bits
   of uint1 mask, in row-major order, as a rank-1 tensor. NULL on OOM. */
MGOPT__PRIVATE mgopt_tensor *mgopt__cw_gather(mgopt_program *p, mgopt_tensor *src, const mgopt_tensor *mask);
/* nonzero data nz (rank 1) scattered to the set bits of uint1 mask, zeros
   elsewhere: mask's shape, nz's dtype. NULL on OOM or a count that disagrees. */
MGOPT__PRIVATE mgopt_tensor *mgopt__cw_densify(mgopt_program *p, mgopt_tensor *nz, const mgopt_tensor *mask);
/* A two-output sparse constexpr op (constexpr_lut_to_sparse,
   constexpr_sparse_blockwise_shift_scale) named name before pos, its outputs
   "<name>_mask" and "<name>_nonzero_data"; not inferred. NULL on OOM. */
MGOPT__PRIVATE mgopt_op *mgopt__cw_build_sparse(mgopt_program *p, mgopt_op *pos, const char *type, const char *name,
                                                int32_t nslots, const char *const *slots, mgopt_value *const *vals);
/* w's const is read once, by an op of `kind` in operand `slot`, and is no block output. */
MGOPT__PRIVATE int mgopt__cw_sole_reader(const mgopt__cw_weight *w, mgopt_op_kind kind, const char *slot);

#endif /* MGOPT__PASSES_INTERNAL_H */
