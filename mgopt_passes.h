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

#ifdef __cplusplus
}
#endif
#endif /* MGOPT_PASSES_H_INCLUDED */

#ifdef MGOPT_IMPLEMENTATION
#ifndef MGOPT__PASSES_IMPLEMENTATION_DONE
#define MGOPT__PASSES_IMPLEMENTATION_DONE
/* src/passes_internal.h — private helpers shared by passes: legality checks, pass declarations. */
#ifndef MGOPT__PASSES_INTERNAL_H
#define MGOPT__PASSES_INTERNAL_H

/* 1 if mgopt_fold_op has a kernel for ops of this kind (kernels/fold.c). */
MGOPT__PRIVATE int mgopt__fold_has_kernel(int32_t kind);

/* Each pass file defines one `MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_<name>`;
   passes/registry.c (amalgamated last) lists them. */

/* ---- shared legality checks and helpers (passes/util.c) */
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
/* v is a constant with one element; its value in *out. */
MGOPT__PRIVATE int mgopt__pu_const_scalar(const mgopt_value *v, double *out);
/* v is a non-empty constant whose elements all equal x. */
MGOPT__PRIVATE int mgopt__pu_const_all(const mgopt_value *v, double x);
MGOPT__PRIVATE int mgopt__pu_types_equal(const mgopt_value *a, const mgopt_value *b);
/* every output unused (and at least one output). */
MGOPT__PRIVATE int mgopt__pu_is_dead(const mgopt_op *op);
MGOPT__PRIVATE void mgopt__pu_erase_if_dead(mgopt_rewriter *rw, mgopt_op *op);
/* Runs patterns over every function with the worklist driver. Dead ops are
   NOT erased by the driver (a pass removes only what it made dead); with
   fold != 0 constant operands are folded through ctx->fold. Adds the rewrite
   count to ctx->rewrites. */
MGOPT__PRIVATE mgopt_status mgopt__pu_run_patterns(mgopt_pass_ctx *ctx, const mgopt_pattern *pats, int32_t n,
                                                   int fold);

#endif /* MGOPT__PASSES_INTERNAL_H */
/* src/kernels/kernels.h — private declarations shared by the constant-folding kernels in src/kernels/. */
#ifndef MGOPT__KERNELS_H
#define MGOPT__KERNELS_H

/* Kernel results (the values mgopt_fold_op returns). */
#define MGOPT__K_NO 0   /* cannot fold: no kernel, bad IR, unsupported dtype, over a limit */
#define MGOPT__K_OK 1
#define MGOPT__K_OOM (-1)

/* Ranks above this are not folded: index arrays are fixed-size on the stack. */
#define MGOPT__K_MAX_RANK 32
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

/* The state of one fold: the op, its outputs, scratch memory freed at the end. */
typedef struct mgopt__kctx {
  mgopt_program *p;
  const mgopt_op *op;
  mgopt_tensor **out;
  int64_t max_elements; /* 0 = no limit */
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
/* The constant tensor in single-value slot `slot`, NULL if absent or not constant. */
MGOPT__PRIVATE mgopt_tensor *mgopt__k_operand(const mgopt_op *op, const char *slot);
/* 1 if parameter `name` is given (attribute, operand) or has a registry default. */
MGOPT__PRIVATE int mgopt__k_has_param(const mgopt_op *op, const char *name);
/* Integer list parameter (attribute or constant operand): its length, -1 when
   absent, -2 when present but unreadable (not an integer list, too long). */
MGOPT__PRIVATE int64_t mgopt__k_ints(mgopt__kctx *k, const char *name, const int64_t **v);
/* Normalises axis a into [0, rank); 0 if out of range. */
MGOPT__PRIVATE int mgopt__k_axis(int64_t a, int64_t rank, int32_t *out);
/* Data pointer of an input (NULL only on OOM). */
MGOPT__PRIVATE const void *mgopt__k_data(mgopt__kctx *k, mgopt_tensor *t);

/* ---- memory */
/* n elements of esz bytes of heap scratch, freed after the kernel. NULL on OOM. */
MGOPT__PRIVATE void *mgopt__k_scratch(mgopt__kctx *k, int64_t n, size_t esz);
/* Validates output i (limit, stored type) without allocating: MGOPT__K_OK or MGOPT__K_NO. */
MGOPT__PRIVATE int mgopt__k_out_check(mgopt__kctx *k, int32_t i, mgopt_dtype dt, int32_t rank,
                                      const int64_t *shape);
/* Checks, then allocates output i (zero-filled); *data receives its bytes. */
MGOPT__PRIVATE int mgopt__k_out(mgopt__kctx *k, int32_t i, mgopt_dtype dt, int32_t rank,
                                const int64_t *shape, void **data);

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
/* dst[out index] = src[base + sum(index[d] * stride[d])] over shape (rank <= 2*MAX_RANK).
   Strides may be 0 (broadcast) or negative; they are in elements. */
MGOPT__PRIVATE void mgopt__k_strided(void *dst, const void *src, size_t esz, int32_t rank,
                                     const int64_t *shape, const int64_t *stride, int64_t base);
/* Broadcasts src (srank, sshape) to (orank, oshape). */
MGOPT__PRIVATE void mgopt__k_bcast(void *dst, const void *src, size_t esz, int32_t srank,
                                   const int64_t *sshape, int32_t orank, const int64_t *oshape);

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
MGOPT__PRIVATE int mgopt__kc_affine_dequantize(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kc_dequantize(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kc_quantize(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kc_lut_to_dense(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kc_sparse_to_dense(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kc_blockwise_shift_scale(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kc_constexpr_cast(mgopt__kctx *k);

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

MGOPT__PRIVATE mgopt_tensor *mgopt__k_operand(const mgopt_op *op, const char *slot) {
  return mgopt_value_const(mgopt_op_operand(op, slot));
}

MGOPT__PRIVATE int mgopt__k_has_param(const mgopt_op *op, const char *name) {
  const mgopt_attr_def *d;
  if (mgopt_op_attr(op, name) || mgopt_op_operand(op, name)) return 1;
  d = mgopt__attr_def(op->kind, name);
  return d && d->deflt;
}

MGOPT__PRIVATE int64_t mgopt__k_ints(mgopt__kctx *k, const char *name, const int64_t **v) {
  int64_t n = mgopt_op_get_ints(k->p, k->op, name, v);
  if (n < 0) return (mgopt_op_attr(k->op, name) || mgopt_op_operand(k->op, name)) ? -2 : -1;
  return n > 2 * MGOPT__K_MAX_RANK ? -2 : n;
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

MGOPT__PRIVATE int mgopt__k_out_check(mgopt__kctx *k, int32_t i, mgopt_dtype dt, int32_t rank,
                                      const int64_t *shape) {
  const mgopt_type *st;
  int64_t n = mgopt__k_numel(rank, shape);
  int32_t d;
  if (i < 0 || i >= k->op->nouts || n < 0 || rank < 0 || rank > MGOPT__K_MAX_RANK) return MGOPT__K_NO;
  if (k->max_elements > 0 && n > k->max_elements) return MGOPT__K_NO;
  if (mgopt_dtype_nbytes(dt, n) < 0) return MGOPT__K_NO;
  st = &k->op->outs[i]->type;
  if (st->kind != MGOPT_TYPE_TENSOR) return MGOPT__K_NO;
  if (st->dtype != MGOPT_DT_UNKNOWN && st->dtype != (uint8_t)dt) return MGOPT__K_NO;
  if (st->rank >= 0) {
    if (st->rank != rank) return MGOPT__K_NO;
    for (d = 0; d < rank; d++)
      if (st->dims && mgopt_dim_is_static(st->dims[d]) && st->dims[d].v != shape[d]) return MGOPT__K_NO;
  }
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__k_out(mgopt__kctx *k, int32_t i, mgopt_dtype dt, int32_t rank,
                                const int64_t *shape, void **data) {
  mgopt_tensor *t;
  int r = mgopt__k_out_check(k, i, dt, rank, shape);
  if (r != MGOPT__K_OK) return r;
  t = mgopt_tensor_new(k->p, dt, rank, shape);
  if (!t) return MGOPT__K_OOM;
  k->out[i] = t;
  if (data) *data = t->data;
  return MGOPT__K_OK;
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
  return ok ? MGOPT__K_OK : MGOPT__K_NO;
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
  if (r > MGOPT__K_MAX_RANK) return 0;
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
  int64_t idx[2 * MGOPT__K_MAX_RANK];
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
  int64_t sst[MGOPT__K_MAX_RANK], st[MGOPT__K_MAX_RANK];
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
   inference uses Python's math.erf and float64 constants). Transcendental
   functions use the C library (expf, logf, ...), whose last-place accuracy may
   differ from numpy's own SIMD routines. Integers wrap around like numpy's
   fixed-width arithmetic; integer division or modulo by zero, INT64_MIN / -1
   and negative integer exponents are not folded. */

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

MGOPT__PRIVATE int mgopt__ke_binary(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  int32_t kind = op->kind, orank;
  mgopt_tensor *x = mgopt__k_operand(op, "x"), *y = mgopt__k_operand(op, "y");
  int64_t oshape[MGOPT__K_MAX_RANK], n;
  mgopt_dtype dt, odt;
  int lane, r;
  void *a, *b, *res, *od;
  if (!x || !y || x->dtype != y->dtype) return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  lane = mgopt__k_lane(dt);
  if (mgopt__ke_is_logical(kind)) {
    if (lane == MGOPT__LANE_NONE) return MGOPT__K_NO;
    lane = MGOPT__LANE_BOOL;
    odt = MGOPT_DT_BOOL;
  } else if (mgopt__ke_is_cmp(kind)) {
    if (lane == MGOPT__LANE_NONE) return MGOPT__K_NO;
    odt = MGOPT_DT_BOOL;
    if (lane == MGOPT__LANE_BOOL) lane = MGOPT__LANE_I64;
  } else {
    if (lane == MGOPT__LANE_NONE || lane == MGOPT__LANE_BOOL) return MGOPT__K_NO;
    /* MIL types integer real_div as the integer dtype; its value is ambiguous */
    if (lane == MGOPT__LANE_I64 && kind == MGOPT_OP_real_div) return MGOPT__K_NO;
    odt = dt;
  }
  if (!mgopt__k_bcast_shape(x->rank, x->shape, y->rank, y->shape, &orank, oshape)) return MGOPT__K_NO;
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
      return MGOPT__K_NO;
  }
  mgopt__k_store(lane, res, n, dt, od);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- unary */

#define MGOPT__KE_UN_FLOAT(NAME, T, S, RND, ROUNDFN)                                  \
  static int NAME(int32_t kind, const mgopt__ke_par *u, const T *MGOPT_RESTRICT a,    \
                  T *MGOPT_RESTRICT r, int64_t n) {                                   \
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
      default: return 0;                                                              \
    }                                                                                 \
    return 1;                                                                         \
  }

/* RND rounds an intermediate to the op's dtype (fp16 / bf16), like numpy would. */
#define MGOPT__KE_RND32(v) mgopt__k_rnd(u->dt, (v))
#define MGOPT__KE_RND64(v) (v)
MGOPT__KE_UN_FLOAT(mgopt__ke_un_f32, float, f, MGOPT__KE_RND32, mgopt__ke_roundf)
MGOPT__KE_UN_FLOAT(mgopt__ke_un_f64, double, , MGOPT__KE_RND64, mgopt__ke_round)

static int mgopt__ke_un_i64(int32_t kind, const int64_t *MGOPT_RESTRICT a, int64_t *MGOPT_RESTRICT r,
                            int64_t n) {
  int64_t i;
  switch (kind) {
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
  mgopt_tensor *x = mgopt__k_operand(op, "x");
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
    if (kind != MGOPT_OP_abs && kind != MGOPT_OP_square && kind != MGOPT_OP_sign) return MGOPT__K_NO;
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
  else r = mgopt__ke_un_i64(kind, (const int64_t *)a, (int64_t *)res, n);
  if (!r) return MGOPT__K_NO;
  mgopt__k_store(lane, res, n, dt, od);
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__ke_logical_not(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k->op, "x");
  uint8_t *a, *o;
  void *od;
  int64_t i, n;
  int r;
  if (!x || mgopt__k_lane((mgopt_dtype)x->dtype) == MGOPT__LANE_NONE) return MGOPT__K_NO;
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
  mgopt_tensor *x = mgopt__k_operand(k->op, "x");
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
  const mgopt_op *op = k->op;
  mgopt_tensor *c = mgopt__k_operand(op, "cond"), *a = mgopt__k_operand(op, "a"),
               *b = mgopt__k_operand(op, "b");
  int64_t s1[MGOPT__K_MAX_RANK], oshape[MGOPT__K_MAX_RANK], n, i;
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
        if (v[i] < lo || v[i] > hi) return MGOPT__K_NO;
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
        if (!(t > dlo - 1.0 && t < dhi)) return MGOPT__K_NO; /* NaN fails too */
        mgopt__k_store_i64_at(dt, od, i, (int64_t)t);
      }
    } else {
      for (i = 0; i < n; i++) mgopt__k_store_f64_at(dt, od, i, v[i]);
    }
    return MGOPT__K_OK;
  }
}

MGOPT__PRIVATE int mgopt__ke_cast(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k->op, "x");
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
  mgopt_tensor *x = mgopt__k_operand(k->op, "source_val");
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
static int mgopt__ks_copy_out(mgopt__kctx *k, mgopt_tensor *x, int32_t rank, const int64_t *shape) {
  const void *src;
  void *od;
  int r;
  if (mgopt__k_numel(rank, shape) != x->numel) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, (mgopt_dtype)x->dtype, rank, shape, &od);
  if (r != MGOPT__K_OK) return r;
  if (k->out[0]->nbytes != x->nbytes) return MGOPT__K_NO;
  src = mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  if (x->nbytes) memcpy(od, src, x->nbytes);
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__ks_reshape(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k->op, "x");
  const int64_t *v;
  int64_t n, shape[MGOPT__K_MAX_RANK], known = 1;
  int32_t i, neg = -1;
  if (!x) return MGOPT__K_NO;
  n = mgopt__k_ints(k, "shape", &v);
  if (n < 0 || n > MGOPT__K_MAX_RANK) return MGOPT__K_NO;
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
  mgopt_tensor *x = mgopt__k_operand(k->op, "x");
  const int64_t *v;
  int64_t n, shape[MGOPT__K_MAX_RANK];
  uint8_t mark[MGOPT__K_MAX_RANK];
  int32_t i, j, orank, a;
  if (!x) return MGOPT__K_NO;
  n = mgopt__k_ints(k, "axes", &v);
  if (n < 0 || x->rank + n > MGOPT__K_MAX_RANK) return MGOPT__K_NO;
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
  mgopt_tensor *x = mgopt__k_operand(k->op, "x");
  const int64_t *v;
  int64_t n, shape[MGOPT__K_MAX_RANK];
  uint8_t mark[MGOPT__K_MAX_RANK];
  int32_t i, orank = 0, a;
  if (!x) return MGOPT__K_NO;
  n = mgopt__k_ints(k, "axes", &v);
  memset(mark, 0, sizeof mark);
  if (n == -2) return MGOPT__K_NO;
  if (n < 0) {
    for (i = 0; i < x->rank; i++) mark[i] = x->shape[i] == 1;
  } else {
    /* only size-1 dims are removed; other listed dims stay (MIL follows PyTorch) */
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
  mgopt_tensor *x = mgopt__k_operand(k->op, "x");
  const int64_t *v;
  int64_t n, shape[MGOPT__K_MAX_RANK], st[MGOPT__K_MAX_RANK], ist[MGOPT__K_MAX_RANK];
  uint8_t seen[MGOPT__K_MAX_RANK];
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
    t[i] = mgopt_value_const(s->uses[i].value);
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
  for (i = 0; i < nv; i++) {
    src[i] = (const uint8_t *)mgopt__k_data(k, vals[i]);
    if (!src[i]) return MGOPT__K_OOM;
  }
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
  int64_t shape[MGOPT__K_MAX_RANK], outer = 1, inner = 1, *chunk;
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
  r = mgopt__k_out(k, 0, (mgopt_dtype)v[0]->dtype, rank, shape, &od);
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
  int64_t shape[MGOPT__K_MAX_RANK], outer = 1, *chunk;
  void *od;
  int r = mgopt__ks_values(k, &v, &nv);
  if (r != MGOPT__K_OK) return r;
  rank = v[0]->rank;
  if (rank + 1 > MGOPT__K_MAX_RANK || !mgopt__k_has_param(k->op, "axis") ||
      !mgopt__k_axis(mgopt_op_get_int(k->op, "axis", 0), rank + 1, &axis))
    return MGOPT__K_NO;
  for (i = 0; i < nv; i++)
    for (d = 0; d < rank; d++)
      if (v[i]->shape[d] != v[0]->shape[d]) return MGOPT__K_NO;
  for (d = 0, i = 0; d < rank + 1; d++) shape[d] = d == axis ? nv : v[0]->shape[i++];
  for (d = 0; d < axis; d++) outer *= shape[d];
  r = mgopt__k_out(k, 0, (mgopt_dtype)v[0]->dtype, rank + 1, shape, &od);
  if (r != MGOPT__K_OK) return r;
  chunk = (int64_t *)mgopt__k_scratch(k, nv, sizeof(int64_t));
  if (!chunk) return MGOPT__K_OOM;
  for (i = 0; i < nv; i++) chunk[i] = outer ? v[0]->numel / outer : 0;
  return mgopt__ks_join(k, v, nv, outer, chunk, mgopt__k_esize((mgopt_dtype)v[0]->dtype),
                        (uint8_t *)od);
}

MGOPT__PRIVATE int mgopt__ks_split(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  mgopt_tensor *x = mgopt__k_operand(op, "x");
  const int64_t *sz;
  int64_t ns, *sizes, shape[MGOPT__K_MAX_RANK], outer = 1, inner = 1, dim, sum = 0, off, o;
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
  r = mgopt__k_out(k, 0, (mgopt_dtype)x->dtype, orank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  src = mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  mgopt__k_strided(od, src, es, rank, shape, st, base);
  return MGOPT__K_OK;
}

static int mgopt__ks_mask(const int64_t *m, int64_t n, int32_t i) { return n > 0 && m[i] != 0; }

MGOPT__PRIVATE int mgopt__ks_slice_by_index(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k->op, "x");
  const int64_t *b, *e, *s = NULL, *bm = NULL, *em = NULL, *sm = NULL;
  int64_t nb, ne, ns, nbm, nem, nsm, shape[MGOPT__K_MAX_RANK], st[MGOPT__K_MAX_RANK],
      ist[MGOPT__K_MAX_RANK], oshape[MGOPT__K_MAX_RANK], base = 0;
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
  mgopt_tensor *x = mgopt__k_operand(k->op, "x");
  const int64_t *b, *sz;
  int64_t nb, ns, shape[MGOPT__K_MAX_RANK], ist[MGOPT__K_MAX_RANK], base = 0;
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
  mgopt_tensor *x = mgopt__k_operand(op, "x"), *ind = mgopt__k_operand(op, "indices");
  int64_t shape[MGOPT__K_MAX_RANK], B = 1, O = 1, I = 1, inner = 1, D, bd, bb, o, i, *idx;
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
  if ((int64_t)x->rank - 1 + ind->rank - bd > MGOPT__K_MAX_RANK) return MGOPT__K_NO;
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
    if (idx[i] < -D || idx[i] >= D) return MGOPT__K_NO;
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
  mgopt_tensor *x = mgopt__k_operand(k->op, "x");
  const int64_t *reps;
  int64_t n, shape[MGOPT__K_MAX_RANK], s2[2 * MGOPT__K_MAX_RANK], st2[2 * MGOPT__K_MAX_RANK],
      ist[MGOPT__K_MAX_RANK];
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
  if (!(fv >= (double)lo && fv <= (double)hi) || fv != floor(fv)) return 0;
  mgopt__k_store_i64_at(dt, out, 0, (int64_t)fv);
  return 1;
}

MGOPT__PRIVATE int mgopt__ks_pad(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k->op, "x");
  const int64_t *pad;
  const char *mode;
  int64_t np, shape[MGOPT__K_MAX_RANK], ist[MGOPT__K_MAX_RANK], idx[MGOPT__K_MAX_RANK], total = 0,
      *maps, *map[MGOPT__K_MAX_RANK], n, done, j;
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
   the attribute (float -> fp32, int -> int32, bool), else dflt. */
static mgopt_dtype mgopt__ks_param_dtype(const mgopt_op *op, const char *name, mgopt_dtype dflt) {
  const mgopt_attr *a = mgopt_op_attr(op, name);
  mgopt_tensor *t;
  if (a) {
    switch (a->kind) {
      case MGOPT_ATTR_FLOAT: return MGOPT_DT_FP32;
      case MGOPT_ATTR_INT: return MGOPT_DT_INT32;
      case MGOPT_ATTR_BOOL: return MGOPT_DT_BOOL;
      case MGOPT_ATTR_TENSOR: return (mgopt_dtype)a->u.t->dtype;
      default: return MGOPT_DT_UNKNOWN;
    }
  }
  t = mgopt__k_operand(op, name);
  if (t) return (mgopt_dtype)t->dtype;
  return mgopt_op_operand(op, name) ? MGOPT_DT_UNKNOWN : dflt;
}

MGOPT__PRIVATE int mgopt__ks_one_hot(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  mgopt_tensor *ind = mgopt__k_operand(op, "indices");
  mgopt_dtype dt, offdt;
  int64_t depth, shape[MGOPT__K_MAX_RANK], outer = 1, inner = 1, o, dpos, i, *idx;
  int32_t axis, d, j;
  uint8_t on[16], off[16], *dst;
  size_t es;
  void *od;
  int r;
  if (!ind || ind->rank + 1 > MGOPT__K_MAX_RANK || mgopt__k_lane((mgopt_dtype)ind->dtype) != MGOPT__LANE_I64 ||
      !mgopt__k_has_param(op, "one_hot_vector_size"))
    return MGOPT__K_NO;
  depth = mgopt_op_get_int(op, "one_hot_vector_size", -1);
  if (depth < 0 || !mgopt__k_axis(mgopt_op_get_int(op, "axis", -1), ind->rank + 1, &axis)) return MGOPT__K_NO;
  dt = mgopt__ks_param_dtype(op, "on_value", MGOPT_DT_INT32);
  offdt = mgopt__ks_param_dtype(op, "off_value", dt);
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
   per the dtype. Empty max / min / mean reductions are not folded. */

/* Which dims are reduced; returns the output shape. 0 on bad axes. */
static int mgopt__kr_axes(mgopt__kctx *k, const mgopt_tensor *x, uint8_t *red, int32_t *orank,
                          int64_t *oshape, int keep) {
  const int64_t *ax;
  int64_t n = mgopt__k_ints(k, "axes", &ax);
  int32_t i, a;
  memset(red, 0, MGOPT__K_MAX_RANK);
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
  mgopt_tensor *x = mgopt__k_operand(op, "x");
  uint8_t red[MGOPT__K_MAX_RANK];
  int64_t oshape[MGOPT__K_MAX_RANK], shape[MGOPT__K_MAX_RANK], ost[MGOPT__K_MAX_RANK],
      idx[MGOPT__K_MAX_RANK], full[MGOPT__K_MAX_RANK], on, xn, count = 1;
  mgopt_dtype dt;
  int lane, r, keep;
  void *in, *acc, *od;
  if (!x) return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  lane = mgopt__k_lane(dt);
  if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64 && lane != MGOPT__LANE_I64) return MGOPT__K_NO;
  if (lane == MGOPT__LANE_I64 && kind == MGOPT_OP_reduce_mean) return MGOPT__K_NO;
  keep = mgopt_op_get_bool(op, "keep_dims", 0);
  if (!mgopt__kr_axes(k, x, red, &orank, oshape, keep)) return MGOPT__K_NO;
  rank = x->rank;
  for (d = 0; d < rank; d++) {
    shape[d] = x->shape[d];
    full[d] = red[d] ? 1 : x->shape[d];
    if (red[d]) count *= x->shape[d];
  }
  if (count == 0 && kind != MGOPT_OP_reduce_sum && kind != MGOPT_OP_reduce_prod) return MGOPT__K_NO;
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
      default: return MGOPT__K_NO;
    }
    if (kind == MGOPT_OP_reduce_mean) {
      double *a = (double *)acc, c = (double)count;
      int64_t i;
      for (i = 0; i < on; i++) a[i] = a[i] / c;
    }
  } else {
    switch (kind) {
      case MGOPT_OP_reduce_sum: MGOPT__KR_ACC(int64_t, 0, (int64_t)((uint64_t)a_ + (uint64_t)v_)); break;
      case MGOPT_OP_reduce_prod: MGOPT__KR_ACC(int64_t, 1, (int64_t)((uint64_t)a_ * (uint64_t)v_)); break;
      case MGOPT_OP_reduce_max: MGOPT__KR_ACC(int64_t, INT64_MIN, a_ >= v_ ? a_ : v_); break;
      case MGOPT_OP_reduce_min: MGOPT__KR_ACC(int64_t, INT64_MAX, a_ <= v_ ? a_ : v_); break;
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
  mgopt_tensor *x = mgopt__k_operand(k->op, "x");
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
  int64_t xs[MGOPT__K_MAX_RANK], ys[MGOPT__K_MAX_RANK], bshape[MGOPT__K_MAX_RANK],
      xst[MGOPT__K_MAX_RANK], yst[MGOPT__K_MAX_RANK], bx[MGOPT__K_MAX_RANK], by[MGOPT__K_MAX_RANK],
      idx[MGOPT__K_MAX_RANK], M, K, N, K2, nb = 1, b, xo = 0, yo = 0;
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
  mgopt_tensor *x = mgopt__k_operand(k->op, "x"), *y = mgopt__k_operand(k->op, "y");
  int64_t oshape[MGOPT__K_MAX_RANK + 2], n;
  int32_t orank;
  int tx, ty, lane, r;
  mgopt_dtype dt;
  void *res, *od;
  if (!x || !y || x->dtype != y->dtype || x->rank > MGOPT__K_MAX_RANK || y->rank > MGOPT__K_MAX_RANK)
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
  mgopt_tensor *x = mgopt__k_operand(op, "x"), *w = mgopt__k_operand(op, "weight"),
               *bias = mgopt__k_operand(op, "bias");
  int64_t oshape[MGOPT__K_MAX_RANK + 2], n, i, N;
  int32_t orank;
  int lane, r;
  mgopt_dtype dt;
  void *res, *bv = NULL, *od;
  if (!x || !w || x->dtype != w->dtype || w->rank != 2 || x->rank > MGOPT__K_MAX_RANK) return MGOPT__K_NO;
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
  int64_t vshape[MGOPT__K_MAX_RANK];
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
  mgopt_tensor *q = mgopt__k_operand(op, data_slot), *s = mgopt__k_operand(op, "scale"),
               *zp = mgopt__k_operand(op, "zero_point");
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
  if (!mgopt__k_operand(k->op, "zero_point")) return MGOPT__K_NO;
  return mgopt__kc_deq(k, "quantized_data", 1);
}

MGOPT__PRIVATE int mgopt__kc_dequantize(mgopt__kctx *k) { return mgopt__kc_deq(k, "input", 0); }

/* clip(round_half_even(input / scale) + zero_point) into int8 / uint8. */
MGOPT__PRIVATE int mgopt__kc_quantize(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  mgopt_tensor *x = mgopt__k_operand(op, "input"), *s = mgopt__k_operand(op, "scale"),
               *zp = mgopt__k_operand(op, "zero_point");
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
  int64_t shape[MGOPT__K_MAX_RANK], n, bits, i;
  int nb = mgopt__kc_log2(lut->numel);
  size_t es = mgopt__k_esize((mgopt_dtype)lut->dtype);
  const uint8_t *idx, *lv;
  uint8_t *dst;
  void *od;
  int32_t d;
  int r;
  if (ind->dtype != MGOPT_DT_UINT8 || ind->rank != 1 || lut->rank != 1 || !nb || !es ||
      ns > MGOPT__K_MAX_RANK)
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
  int64_t shape[MGOPT__K_MAX_RANK], blk[MGOPT__K_MAX_RANK], lst[MGOPT__K_MAX_RANK + 2],
      ost[MGOPT__K_MAX_RANK], idx[MGOPT__K_MAX_RANK], vs, i, v;
  const uint8_t *iv, *lv;
  uint8_t *dst;
  void *od;
  int r;
  if (!nb || !es || rank < 1 || rank + 2 > MGOPT__K_MAX_RANK || lut->rank != rank + 2) return MGOPT__K_NO;
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
  mgopt_tensor *ind = mgopt__k_operand(k->op, "indices"), *lut = mgopt__k_operand(k->op, "lut");
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
  mgopt_tensor *nz = mgopt__k_operand(k->op, "nonzero_data"), *mask = mgopt__k_operand(k->op, "mask");
  const int64_t *sv;
  int64_t ns, shape[MGOPT__K_MAX_RANK], n, i, j = 0, set = 0, *vals = NULL;
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
    if (ns > MGOPT__K_MAX_RANK || mask->dtype != MGOPT_DT_UINT8 || mask->rank != 1) return MGOPT__K_NO;
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
  int64_t s2[2 * MGOPT__K_MAX_RANK], st2[2 * MGOPT__K_MAX_RANK], pst[MGOPT__K_MAX_RANK];
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
  mgopt_tensor *x = mgopt__k_operand(op, "data"), *s = mgopt__k_operand(op, "scale"),
               *off = mgopt__k_operand(op, "offset");
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
/* src/kernels/fold.c — the constant-folding kernel table and mgopt_fold_op, the evaluator of one op.

   mgopt_fold_op evaluates an op whose operands are all constant with MIL's
   semantics and returns new owned tensors. It never trusts the IR: ranks,
   axes, indices, element counts and the stored output types are checked, and
   anything doubtful is "not folded" (0) rather than guessed. The kernels are
   the seed of a reference evaluator: each takes the op and writes its outputs. */

typedef struct mgopt__kentry {
  int32_t kind;
  mgopt__kernel_fn fn;
} mgopt__kentry;

/* Every op with a kernel. A pair list rather than a positional array so that
   adding ops to MGOPT_OP_LIST never shifts it; mgopt__k_kernel indexes it. */
static const mgopt__kentry mgopt__k_entries[] = {
    {MGOPT_OP_identity, mgopt__ke_identity},
    {MGOPT_OP_add, mgopt__ke_binary}, {MGOPT_OP_sub, mgopt__ke_binary},
    {MGOPT_OP_mul, mgopt__ke_binary}, {MGOPT_OP_real_div, mgopt__ke_binary},
    {MGOPT_OP_pow, mgopt__ke_binary}, {MGOPT_OP_maximum, mgopt__ke_binary},
    {MGOPT_OP_minimum, mgopt__ke_binary}, {MGOPT_OP_floor_div, mgopt__ke_binary},
    {MGOPT_OP_mod, mgopt__ke_binary}, {MGOPT_OP_equal, mgopt__ke_binary},
    {MGOPT_OP_not_equal, mgopt__ke_binary}, {MGOPT_OP_less, mgopt__ke_binary},
    {MGOPT_OP_less_equal, mgopt__ke_binary}, {MGOPT_OP_greater, mgopt__ke_binary},
    {MGOPT_OP_greater_equal, mgopt__ke_binary}, {MGOPT_OP_logical_and, mgopt__ke_binary},
    {MGOPT_OP_logical_or, mgopt__ke_binary}, {MGOPT_OP_logical_xor, mgopt__ke_binary},
    {MGOPT_OP_logical_not, mgopt__ke_logical_not}, {MGOPT_OP_select, mgopt__ke_select},
    {MGOPT_OP_abs, mgopt__ke_unary}, {MGOPT_OP_exp, mgopt__ke_unary},
    {MGOPT_OP_log, mgopt__ke_unary}, {MGOPT_OP_sqrt, mgopt__ke_unary},
    {MGOPT_OP_rsqrt, mgopt__ke_unary}, {MGOPT_OP_inverse, mgopt__ke_unary},
    {MGOPT_OP_square, mgopt__ke_unary}, {MGOPT_OP_erf, mgopt__ke_unary},
    {MGOPT_OP_tanh, mgopt__ke_unary}, {MGOPT_OP_sigmoid, mgopt__ke_unary},
    {MGOPT_OP_relu, mgopt__ke_unary}, {MGOPT_OP_relu6, mgopt__ke_unary},
    {MGOPT_OP_leaky_relu, mgopt__ke_unary}, {MGOPT_OP_gelu, mgopt__ke_unary},
    {MGOPT_OP_clip, mgopt__ke_unary}, {MGOPT_OP_floor, mgopt__ke_unary},
    {MGOPT_OP_ceil, mgopt__ke_unary}, {MGOPT_OP_round, mgopt__ke_unary},
    {MGOPT_OP_sign, mgopt__ke_unary}, {MGOPT_OP_sin, mgopt__ke_unary},
    {MGOPT_OP_cos, mgopt__ke_unary}, {MGOPT_OP_silu, mgopt__ke_unary},
    {MGOPT_OP_softplus, mgopt__ke_unary}, {MGOPT_OP_elu, mgopt__ke_unary},
    {MGOPT_OP_softmax, mgopt__kr_softmax}, {MGOPT_OP_cast, mgopt__ke_cast},
    {MGOPT_OP_reshape, mgopt__ks_reshape}, {MGOPT_OP_transpose, mgopt__ks_transpose},
    {MGOPT_OP_expand_dims, mgopt__ks_expand_dims}, {MGOPT_OP_squeeze, mgopt__ks_squeeze},
    {MGOPT_OP_concat, mgopt__ks_concat}, {MGOPT_OP_stack, mgopt__ks_stack},
    {MGOPT_OP_split, mgopt__ks_split}, {MGOPT_OP_slice_by_index, mgopt__ks_slice_by_index},
    {MGOPT_OP_slice_by_size, mgopt__ks_slice_by_size}, {MGOPT_OP_gather, mgopt__ks_gather},
    {MGOPT_OP_one_hot, mgopt__ks_one_hot}, {MGOPT_OP_pad, mgopt__ks_pad},
    {MGOPT_OP_tile, mgopt__ks_tile}, {MGOPT_OP_matmul, mgopt__kr_matmul},
    {MGOPT_OP_linear, mgopt__kr_linear}, {MGOPT_OP_reduce_sum, mgopt__kr_reduce},
    {MGOPT_OP_reduce_mean, mgopt__kr_reduce}, {MGOPT_OP_reduce_max, mgopt__kr_reduce},
    {MGOPT_OP_reduce_min, mgopt__kr_reduce}, {MGOPT_OP_reduce_prod, mgopt__kr_reduce},
    {MGOPT_OP_quantize, mgopt__kc_quantize}, {MGOPT_OP_dequantize, mgopt__kc_dequantize},
    {MGOPT_OP_constexpr_affine_dequantize, mgopt__kc_affine_dequantize},
    {MGOPT_OP_constexpr_lut_to_dense, mgopt__kc_lut_to_dense},
    {MGOPT_OP_constexpr_sparse_to_dense, mgopt__kc_sparse_to_dense},
    {MGOPT_OP_constexpr_blockwise_shift_scale, mgopt__kc_blockwise_shift_scale},
    {MGOPT_OP_constexpr_cast, mgopt__kc_constexpr_cast},
};

static mgopt__kernel_fn mgopt__k_kernel(int32_t kind) {
  int32_t i;
  for (i = 0; i < MGOPT__ARRAY_COUNT(mgopt__k_entries); i++)
    if (mgopt__k_entries[i].kind == kind) return mgopt__k_entries[i].fn;
  return NULL;
}

MGOPT__PRIVATE int mgopt__fold_has_kernel(int32_t kind) { return mgopt__k_kernel(kind) != NULL; }

/* A constant tensor is usable when its header is self-consistent. */
static int mgopt__k_tensor_ok(const mgopt_tensor *t) {
  int64_t nb;
  if (t->rank < 0 || t->rank > MGOPT__K_MAX_RANK || (t->rank > 0 && !t->shape)) return 0;
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
  if (!fn) return MGOPT__K_NO;
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
  if (r != MGOPT__K_OK)
    for (i = 0; i < op->nouts; i++) out[i] = NULL;
  return r;
}
/* src/passes/util.c — legality checks and small rewrite helpers shared by the passes. */

MGOPT__PRIVATE int mgopt__pu_is_func_output(const mgopt_value *v) {
  const mgopt_use *u;
  for (u = v->uses; u; u = u->next)
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

MGOPT__PRIVATE int mgopt__pu_const_scalar(const mgopt_value *v, double *out) {
  const mgopt_tensor *t = mgopt_value_const(v);
  if (!t || t->numel != 1 || t->dtype == MGOPT_DT_STRING) return 0;
  *out = mgopt_tensor_get_f64(t, 0);
  return 1;
}

MGOPT__PRIVATE int mgopt__pu_const_all(const mgopt_value *v, double x) {
  const mgopt_tensor *t = mgopt_value_const(v);
  return t && t->numel > 0 && mgopt_tensor_all_equal_f64(t, x);
}

MGOPT__PRIVATE int mgopt__pu_types_equal(const mgopt_value *a, const mgopt_value *b) {
  return mgopt_type_equal(&a->type, &b->type);
}

MGOPT__PRIVATE int mgopt__pu_is_dead(const mgopt_op *op) {
  int32_t i;
  if (op->nouts == 0) return 0;
  for (i = 0; i < op->nouts; i++)
    if (op->outs[i]->nuses) return 0;
  return 1;
}

MGOPT__PRIVATE void mgopt__pu_erase_if_dead(mgopt_rewriter *rw, mgopt_op *op) {
  if (op && !(op->flags & MGOPT_OP_ERASED) && mgopt__pu_is_dead(op)) mgopt_rw_erase(rw, op);
}

MGOPT__PRIVATE mgopt_status mgopt__pu_run_patterns(mgopt_pass_ctx *ctx, const mgopt_pattern *pats, int32_t n,
                                                   int fold) {
  mgopt_rewrite_config cfg;
  mgopt_rewrite_stats st;
  mgopt_status s;
  memset(&cfg, 0, sizeof cfg);
  memset(&st, 0, sizeof st);
  cfg.erase_dead = 0;
  if (fold) {
    cfg.fold = ctx->fold;
    cfg.fold_ud = ctx->fold_ud;
  }
  s = mgopt_rewrite_program(ctx->program, pats, n, &cfg, &st, ctx->diag);
  ctx->rewrites += st.rewrites + st.folds;
  return s;
}
/* src/passes/common/dead_code_elimination.c — common::dead_code_elimination: erase ops whose results reach no output.

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

   Fires on: every op with at least one output, none of them used, that is
   pure (registered ops with the pure trait, and opaque ops: model graphs
   have no side effects), in every block, nested blocks included (a nested
   block's outputs keep what feeds them alive). Ops without outputs are kept.
   Cost: one backward sweep per block, O(ops): erasing an op drops its
   operand uses, so producers earlier in the block are seen dead in the
   same sweep. */

static int mgopt__dce_removable(const mgopt_op *op) {
  int32_t i;
  if (op->nouts == 0) return 0;
  for (i = 0; i < op->nouts; i++)
    if (op->outs[i]->nuses) return 0;
  return op->kind == MGOPT_OP_OPAQUE || (mgopt_op_traits(op) & MGOPT_TRAIT_PURE);
}

static int64_t mgopt__dce_block(mgopt_block *b) {
  mgopt_op *op, *prev;
  int64_t n = 0;
  for (op = b->last; op; op = prev) {
    int32_t i;
    prev = op->prev;
    if (mgopt__dce_removable(op)) {
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
  for (i = 0; i < mgopt_program_function_count(ctx->program); i++)
    ctx->rewrites += mgopt__dce_block(mgopt_program_function_at(ctx->program, i)->body);
  return MGOPT_OK;
}

MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_dead_code_elimination = {
    "common::dead_code_elimination", "cleanup", "erase ops whose results reach no output", 0, NULL,
    mgopt__dce_run};
/* src/passes/common/noop_elimination.c — common::noop_elimination: remove ops that have no effect.

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
     slice_by_index                                   same type, no negative const stride
     transpose                                        perm is the identity
     linear_activation                                alpha == 1 and beta == 0
   The last group's unregistered ops (upsample_*, resize_bilinear, crop,
   linear_activation) are matched by name with their MIL operand `x`.
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

static int mgopt__noop_slice_by_index(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  const int64_t *stride = NULL;
  int64_t n, i;
  MGOPT__UNUSED(ud);
  n = mgopt_op_get_ints(mgopt_rw_program(rw), op, "stride", &stride);
  for (i = 0; i < n; i++)
    if (stride[i] < 0) return 0;
  if (n < 0 && mgopt_op_operand(op, "stride")) return 0; /* a stride not known at compile time */
  return mgopt__noop_forward(rw, op, mgopt_op_operand(op, "x"));
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
    {"noop_upsample_nearest_neighbor", MGOPT_OP_OPAQUE, "upsample_nearest_neighbor", 1, mgopt__noop_same_shape, NULL},
    {"noop_upsample_bilinear", MGOPT_OP_OPAQUE, "upsample_bilinear", 1, mgopt__noop_same_shape, NULL},
    {"noop_resize_bilinear", MGOPT_OP_OPAQUE, "resize_bilinear", 1, mgopt__noop_same_shape, NULL},
    {"noop_crop", MGOPT_OP_OPAQUE, "crop", 1, mgopt__noop_same_shape, NULL},
    {"noop_slice_by_index", MGOPT_OP_slice_by_index, NULL, 1, mgopt__noop_slice_by_index, NULL},
    {"noop_transpose", MGOPT_OP_transpose, NULL, 1, mgopt__noop_transpose, NULL},
    {"noop_linear_activation", MGOPT_OP_OPAQUE, "linear_activation", 1, mgopt__noop_linear_activation, NULL},
};

static mgopt_status mgopt__noop_run(mgopt_pass_ctx *ctx) {
  return mgopt__pu_run_patterns(ctx, mgopt__noop_patterns, MGOPT__ARRAY_COUNT(mgopt__noop_patterns), 0);
}

MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_noop_elimination = {
    "common::noop_elimination", "cleanup", "remove ops that have no effect (identity reshape, add 0, mul 1, ...)",
    0, NULL, mgopt__noop_run};
/* src/passes/common/remove_redundant_ops.c — common::remove_redundant_ops: keep one of several identical ops.

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
   more than one output, whose output is a block output, with nested blocks,
   or that draw random numbers. Cost: one sweep in program order with a hash
   table keyed on (block, type, operands, attributes): O(ops); a removal lets
   later users match in the same sweep. */

#define MGOPT__RRO_BIG 100

static int mgopt__rro_eligible(const mgopt_op *op) {
  int32_t s, k;
  int parent = 0;
  if (op->nouts != 1 || op->nblocks || op->kind == MGOPT_OP_const) return 0;
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

static uint64_t mgopt__rro_mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

static uint64_t mgopt__rro_hash_value(const mgopt_value *v) {
  mgopt_tensor *t = mgopt_value_const(v);
  if (t && t->numel < MGOPT__RRO_BIG) return mgopt_tensor_hash(t);
  return (uint64_t)v->id * 0x100000001b3ull;
}

static uint64_t mgopt__rro_hash_attr(const mgopt_attr *a) {
  uint64_t h = mgopt__rro_mix((uint64_t)(uintptr_t)a->name, a->kind);
  switch ((mgopt_attr_kind)a->kind) {
    case MGOPT_ATTR_BOOL:
    case MGOPT_ATTR_INT: return mgopt__rro_mix(h, (uint64_t)a->u.i);
    case MGOPT_ATTR_FLOAT: return mgopt__hash_bytes(&a->u.f, sizeof a->u.f, h);
    case MGOPT_ATTR_STRING: return mgopt__hash_bytes(a->u.s.ptr, a->u.s.len, h);
    case MGOPT_ATTR_BOOLS:
    case MGOPT_ATTR_INTS: return mgopt__hash_bytes(a->u.ints, sizeof(int64_t) * (size_t)a->n, h);
    case MGOPT_ATTR_FLOATS: return mgopt__hash_bytes(a->u.floats, sizeof(double) * (size_t)a->n, h);
    case MGOPT_ATTR_TENSOR: return mgopt__rro_mix(h, mgopt_tensor_hash(a->u.t));
    default: return mgopt__rro_mix(h, (uint64_t)a->n);
  }
}

static uint64_t mgopt__rro_hash(const mgopt_op *op) {
  uint64_t h = mgopt__rro_mix((uint64_t)(uintptr_t)op->parent, (uint64_t)(uintptr_t)op->type);
  int32_t s, k;
  for (s = 0; s < op->nslots; s++) {
    h = mgopt__rro_mix(h, (uint64_t)(uintptr_t)op->slots[s].name);
    for (k = 0; k < op->slots[s].n; k++) h = mgopt__rro_mix(h, mgopt__rro_hash_value(op->slots[s].uses[k].value));
  }
  /* attributes in any order: combine commutatively */
  {
    uint64_t ah = 0;
    for (s = 0; s < op->nattrs; s++) ah += mgopt__rro_hash_attr(&op->attrs[s]);
    h = mgopt__rro_mix(h, ah);
  }
  return h;
}

static int mgopt__rro_value_eq(const mgopt_value *a, const mgopt_value *b) {
  const mgopt_tensor *x, *y;
  if (a == b) return 1;
  x = mgopt_value_const(a);
  y = mgopt_value_const(b);
  if (!x || !y || x->numel >= MGOPT__RRO_BIG || y->numel >= MGOPT__RRO_BIG) return 0;
  return mgopt_tensor_equal(x, y);
}

static int mgopt__rro_attr_eq(const mgopt_attr *a, const mgopt_attr *b) {
  int64_t i;
  if (a->kind != b->kind || a->n != b->n || a->tag != b->tag) return 0;
  switch ((mgopt_attr_kind)a->kind) {
    case MGOPT_ATTR_BOOL:
    case MGOPT_ATTR_INT: return a->u.i == b->u.i;
    case MGOPT_ATTR_FLOAT: return memcmp(&a->u.f, &b->u.f, sizeof a->u.f) == 0;
    case MGOPT_ATTR_STRING: return a->u.s.len == b->u.s.len && memcmp(a->u.s.ptr, b->u.s.ptr, a->u.s.len) == 0;
    case MGOPT_ATTR_BOOLS:
    case MGOPT_ATTR_INTS: return a->n == 0 || memcmp(a->u.ints, b->u.ints, sizeof(int64_t) * (size_t)a->n) == 0;
    case MGOPT_ATTR_FLOATS: return a->n == 0 || memcmp(a->u.floats, b->u.floats, sizeof(double) * (size_t)a->n) == 0;
    case MGOPT_ATTR_STRINGS:
      for (i = 0; i < a->n; i++)
        if (a->u.strs[i].len != b->u.strs[i].len || memcmp(a->u.strs[i].ptr, b->u.strs[i].ptr, a->u.strs[i].len))
          return 0;
      return 1;
    case MGOPT_ATTR_TENSOR: return mgopt_tensor_equal(a->u.t, b->u.t);
    case MGOPT_ATTR_BYTES: return a->n == 0 || memcmp(a->u.bytes, b->u.bytes, (size_t)a->n) == 0;
    default: return 1;
  }
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
  for (s = 0; s < a->nattrs; s++) {
    const mgopt_attr *o = mgopt_op_attr(b, a->attrs[s].name);
    if (!o || !mgopt__rro_attr_eq(&a->attrs[s], o)) return 0;
  }
  return 1;
}

typedef struct mgopt__rro {
  mgopt_program *p;
  mgopt_op **tab;
  uint64_t *hashes;
  size_t cap, count;
  int64_t removed;
  int oom;
} mgopt__rro;

static void mgopt__rro_grow(mgopt__rro *r) {
  size_t ncap = r->cap ? r->cap * 2 : 1024, i;
  mgopt_op **nt = (mgopt_op **)mgopt__heap_realloc(&r->p->alloc, NULL, 0, ncap * sizeof(mgopt_op *));
  uint64_t *nh = (uint64_t *)mgopt__heap_realloc(&r->p->alloc, NULL, 0, ncap * sizeof(uint64_t));
  if (!nt || !nh) {
    if (nt) mgopt__heap_free(&r->p->alloc, nt, ncap * sizeof(mgopt_op *));
    if (nh) mgopt__heap_free(&r->p->alloc, nh, ncap * sizeof(uint64_t));
    r->oom = 1;
    return;
  }
  memset(nt, 0, ncap * sizeof(mgopt_op *));
  for (i = 0; i < r->cap; i++)
    if (r->tab[i]) {
      size_t j = (size_t)r->hashes[i] & (ncap - 1);
      while (nt[j]) j = (j + 1) & (ncap - 1);
      nt[j] = r->tab[i];
      nh[j] = r->hashes[i];
    }
  if (r->tab) mgopt__heap_free(&r->p->alloc, r->tab, r->cap * sizeof(mgopt_op *));
  if (r->hashes) mgopt__heap_free(&r->p->alloc, r->hashes, r->cap * sizeof(uint64_t));
  r->tab = nt;
  r->hashes = nh;
  r->cap = ncap;
}

static void mgopt__rro_block(mgopt__rro *r, mgopt_block *b, int depth) {
  mgopt_op *op, *next;
  for (op = b->first; op && !r->oom; op = next) {
    int32_t i;
    uint64_t h;
    size_t j;
    next = op->next;
    if (depth < 256)
      for (i = 0; i < op->nblocks; i++) mgopt__rro_block(r, op->blocks[i], depth + 1);
    if (!mgopt__rro_eligible(op)) continue;
    if ((r->count + 1) * 2 > r->cap) {
      mgopt__rro_grow(r);
      if (r->oom) return;
    }
    h = mgopt__rro_hash(op);
    j = (size_t)h & (r->cap - 1);
    while (r->tab[j]) {
      mgopt_op *first = r->tab[j];
      if (r->hashes[j] == h && mgopt__rro_equal(first, op)) break;
      j = (j + 1) & (r->cap - 1);
    }
    if (r->tab[j]) {
      if (mgopt__pu_is_block_output(op->outs[0])) continue;
      mgopt_value_replace_all_uses(op->outs[0], r->tab[j]->outs[0]);
      mgopt_op_erase(op);
      r->removed++;
      continue;
    }
    r->tab[j] = op;
    r->hashes[j] = h;
    r->count++;
  }
}

static mgopt_status mgopt__rro_run(mgopt_pass_ctx *ctx) {
  mgopt__rro r;
  int32_t i;
  memset(&r, 0, sizeof r);
  r.p = ctx->program;
  for (i = 0; i < mgopt_program_function_count(ctx->program) && !r.oom; i++)
    mgopt__rro_block(&r, mgopt_program_function_at(ctx->program, i)->body, 0);
  if (r.tab) mgopt__heap_free(&r.p->alloc, r.tab, r.cap * sizeof(mgopt_op *));
  if (r.hashes) mgopt__heap_free(&r.p->alloc, r.hashes, r.cap * sizeof(uint64_t));
  ctx->rewrites += r.removed;
  if (r.oom) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "remove_redundant_ops: out of memory");
  return MGOPT_OK;
}

MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_remove_redundant_ops = {
    "common::remove_redundant_ops", "cleanup", "keep one of several ops with identical inputs", 0, NULL,
    mgopt__rro_run};
/* src/passes/common/const_elimination.c — common::const_elimination: replace ops whose operands are all constant by constants.

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
   skip_const_by_size (scalars always fold).
   Cost: one worklist run, O(ops) plus the kernels' work on folded values. */

typedef struct mgopt__ce_state {
  mgopt_fold_fn fold;
  void *ud;
  double skip_by_size; /* < 0: no limit */
} mgopt__ce_state;

static int mgopt__ce_too_big(const mgopt__ce_state *st, int32_t rank, int64_t numel) {
  return st->skip_by_size >= 0 && rank > 0 && (double)numel > st->skip_by_size;
}

static int mgopt__ce_fold(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud) {
  const mgopt__ce_state *st = (const mgopt__ce_state *)ud;
  int32_t i;
  int r;
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
  r = st->fold(p, op, out, st->ud);
  if (r != 1) return r;
  for (i = 0; i < op->nouts; i++)
    if (!out[i] || mgopt__ce_too_big(st, out[i]->rank, out[i]->numel)) return 0;
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
  memset(&cfg, 0, sizeof cfg);
  memset(&stats, 0, sizeof stats);
  cfg.erase_dead = 0;
  cfg.fold = mgopt__ce_fold;
  cfg.fold_ud = &st;
  s = mgopt_rewrite_program(ctx->program, NULL, 0, &cfg, &stats, ctx->diag);
  ctx->rewrites += stats.folds;
  return s;
}

static const mgopt_opt_def mgopt__ce_opts[] = {
    {"skip_const_by_size", MGOPT_OPT_FLOAT, "-1",
     "do not fold outputs of rank > 0 with more elements than this (-1: no limit)"},
};

MGOPT__PRIVATE const mgopt_pass_def mgopt__pass_const_elimination = {
    "common::const_elimination", "cleanup", "replace ops whose operands are all constant by constants",
    1, mgopt__ce_opts, mgopt__ce_run};
/* src/passes/registry.c — the table of built-in passes and named pipelines. */

static const mgopt_pass_def *const mgopt__builtin_passes[] = {
    /* issue 2: the first passes */
    &mgopt__pass_dead_code_elimination,
    &mgopt__pass_noop_elimination,
    &mgopt__pass_remove_redundant_ops,
    /* folding kernels (kernels/) */
    &mgopt__pass_const_elimination,
};

static const mgopt_pipeline_def mgopt__builtin_pipelines[] = {
    {"default", "noop_elimination,remove_redundant_ops,dead_code_elimination", "the default optimization pipeline"},
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
