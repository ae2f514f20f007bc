/* src/kernels/kernels.h — private declarations shared by the constant-folding kernels in src/kernels/. */
#ifndef MGOPT__KERNELS_H
#define MGOPT__KERNELS_H
#include "../internal.h"
#include "../passes_api.h"

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
  int64_t budget;       /* folding: the bytes the outputs may take together (mgopt__fold_budget), -1 = no limit */
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

/* The fused_activation of a conv or linear: 0 none, 1 relu, 2 relu6, -1 a value mgopt does not know. */
MGOPT__PRIVATE int mgopt__k_fused_act(const mgopt_op *op);
/* Applies activation act (mgopt__k_fused_act) to output 0 in place: exact in
   every float dtype (a clamp to 0 and 6 needs no rounding; NaN stays NaN). */
MGOPT__PRIVATE void mgopt__k_apply_fused_act(mgopt__kctx *k, int act);

/* ---- memory */
/* A reference-counted tensor outside the arena (refs 1), zeroed when zero
   is set (strings always); NULL on OOM or a bad shape. See src/kernels/eval.c. */
MGOPT__PRIVATE mgopt_tensor *mgopt__ev_tensor_alloc(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                                    const int64_t *shape, int zero);
/* Sequences (ONNX's sequence type) at run time: an evaluator tensor whose
   header marks it as a sequence of n element tensors (evaluator tensors,
   one reference each, released with the sequence). elem_dtype is the
   element dtype an empty sequence keeps (MGOPT_DT_UNKNOWN: none). Kernels
   never see one: an op reading a sequence is evaluated only by the
   sequence ops of mgopt_onnx_eval_op and by the control flow of eval.c.
   mgopt__ev_seq_new: NULL items to be filled with references (NULL on OOM);
   mgopt__ev_seq_items: the items, NULL when t is no sequence; retain adds a
   reference to an evaluator tensor (an item of a sequence). */
MGOPT__PRIVATE mgopt_tensor *mgopt__ev_seq_new(mgopt_program *p, int64_t n, int32_t elem_dtype);
MGOPT__PRIVATE mgopt_tensor **mgopt__ev_seq_items(const mgopt_tensor *t, int64_t *n, int32_t *elem_dtype);
MGOPT__PRIVATE mgopt_tensor *mgopt__ev_retain(mgopt_tensor *t);
/* Evaluates op of p in place: its operands and the values its nested blocks
   read from outside it are constants, or results of the ops that make them
   (evaluated first, at most max_ops of them, each in turn reading constants
   or results of such ops: never a block argument). out[0..op->nouts) get
   tensors (mgopt_eval_tensor_free), NULL for an output that is a sequence.
   MGOPT_ERR_UNSUPPORTED when something read is not computable so,
   MGOPT_ERR_LIMIT beyond max_ops or o's limits. */
MGOPT__PRIVATE mgopt_status mgopt__eval_in_place(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out,
                                                 const mgopt_eval_options *o, int32_t max_ops, mgopt_diag *d);
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

/* Folding's growth budget (fold.c): the bytes of op's operand constants
   that die when it folds (every reader is op), and the bytes its outputs may
   take together: that plus allowance, or -1 (no limit) when allowance < 0 or
   op starts a chain of folds that ends within the chain's own budget. */
MGOPT__PRIVATE int64_t mgopt__fold_freed(const mgopt_op *op);
MGOPT__PRIVATE int64_t mgopt__fold_budget(const mgopt_op *op, int64_t allowance);

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
MGOPT__PRIVATE int mgopt__kc_lut_to_sparse(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kc_sparse_blockwise_shift_scale(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kc_constexpr_cast(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kn_conv(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kn_pool(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kn_batch_norm(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kn_norm(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kn_prelu(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kn_bias_add(mgopt__kctx *k);
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

/* ---- weight palettization (palettize.c) */
#define MGOPT__PAL_KMEANS 0
#define MGOPT__PAL_UNIFORM 1
#define MGOPT__PAL_UNIQUE 2
#define MGOPT__PAL_CUSTOM 3

typedef struct mgopt__pal_cfg {
  int mode;                 /* MGOPT__PAL_* */
  int nbits;                /* kmeans, uniform: 1, 2, 3, 4, 6 or 8 */
  int per_grouped_channel;  /* 0: one LUT for the whole weight */
  int64_t group_size;       /* channels per LUT (0: the whole axis) */
  int32_t channel_axis;     /* in [0, rank) */
  int32_t cluster_dim;      /* elements per LUT entry, consecutive along channel_axis */
  int per_channel_scale;    /* divide by max |w| along channel_axis first */
  mgopt_palettize_lut_fn lut_fn; /* custom mode */
  void *lut_ud;
  const char *weight_name;
} mgopt__pal_cfg;

typedef struct mgopt__pal_out {
  int nbits;
  int32_t cluster_dim;
  int64_t groups;  /* LUTs, along channel_axis */
  uint8_t *idx;    /* one per vector, the weight's layout with channel_axis divided by cluster_dim */
  double *lut;     /* [groups][2^nbits][cluster_dim] */
  float *pcs;      /* per_channel_scale: the weight's shape with 1 at channel_axis, else NULL */
} mgopt__pal_out;

/* Packs n b-bit indices little-endian into ceil(n*b/8) bytes (padding bits 0):
   the exact inverse of mgopt__k_bits. */
MGOPT__PRIVATE void mgopt__kp_pack(const uint8_t *idx, int64_t n, int b, uint8_t *out);
/* The smallest of 1, 2, 3, 4, 6, 8 bits that indexes count entries; 0 above 256. */
MGOPT__PRIVATE int mgopt__kp_nbits_for(int64_t count);
/* Clusters x[0..n) into k values (k-means, see palettize.c); lut[k], idx[n]. 1, or -1 on OOM. */
MGOPT__PRIVATE int mgopt__kp_kmeans1d(const float *x, int64_t n, int32_t k, double *lut, uint8_t *idx);
MGOPT__PRIVATE int mgopt__kp_kmeans_vec(const float *x, int64_t n, int32_t cd, int32_t k, double *lut,
                                        uint8_t *idx);
MGOPT__PRIVATE void mgopt__kp_uniform(const float *x, int64_t n, int32_t k, double *lut, uint8_t *idx);
/* The ascending distinct vectors of x (n vectors of cd): their count, -1 above 256, -2 on OOM. */
MGOPT__PRIVATE int32_t mgopt__kp_unique(const float *x, int64_t n, int32_t cd, double *lut, uint8_t *idx);
/* Palettizes a weight (float values, row-major shape). MGOPT__K_OK with *o
   filled (free with mgopt__kp_free), MGOPT__K_NO when the configuration does
   not apply (group size, non-finite values, more than 256 unique values,
   a refusing callback), MGOPT__K_OOM. */
MGOPT__PRIVATE int mgopt__kp_palettize(const mgopt__pal_cfg *cfg, const float *w, int32_t rank,
                                       const int64_t *shape, mgopt__pal_out *o);
MGOPT__PRIVATE void mgopt__kp_free(mgopt__pal_out *o);
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

MGOPT__PRIVATE int mgopt__kq_lstm(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kq_gru(mgopt__kctx *k);
MGOPT__PRIVATE int mgopt__kq_rnn(mgopt__kctx *k);

/* 1 when the kernel of op kind `kind` makes more than one output (split, topk, lstm, gru, rnn, the sparse constexprs). */
MGOPT__PRIVATE int mgopt__k_multi_output(int32_t kind);

/* ---- the recurrent cell loop (recurrent.c), shared by lstm / gru / rnn and ONNX's LSTM / GRU / RNN */
enum {
  MGOPT__RNN_SIGMOID, MGOPT__RNN_TANH, MGOPT__RNN_RELU, MGOPT__RNN_AFFINE, MGOPT__RNN_LEAKY_RELU,
  MGOPT__RNN_THRESHOLDED_RELU, MGOPT__RNN_SCALED_TANH, MGOPT__RNN_HARD_SIGMOID, MGOPT__RNN_ELU,
  MGOPT__RNN_SOFTSIGN, MGOPT__RNN_SOFTPLUS
};
typedef struct mgopt__rnn_act_fn {
  int fn;
  double alpha, beta;
} mgopt__rnn_act_fn;
/* One run, every array double in ONNX's layout and gate order (recurrent.c's header). */
typedef struct mgopt__rnn {
  int kind;                      /* 0 RNN, 1 GRU, 2 LSTM */
  int64_t S, B, I, H, D;         /* steps, batch, input size, hidden size, directions (1 or 2) */
  int rev[2];                    /* direction d runs backwards */
  int linear_before_reset, input_forget, has_gate_clip, has_cell_clip;
  double gate_clip, cell_clip;
  mgopt__rnn_act_fn acts[6];     /* per direction: f (, g (, h)) */
  const double *X;               /* [S, B, I] */
  const double *W, *R;           /* [D, G*H, I], [D, G*H, H] */
  const double *Wb, *Rb, *P;     /* [D, G*H], [D, G*H], [D, 3*H]; NULL: 0 */
  const double *h0, *c0;         /* [D, B, H]; NULL: 0 */
  const int64_t *len;            /* [B] in [0, S]; NULL: every one S */
  double *Y, *Yh, *Yc;           /* [S, D, B, H], [D, B, H], [D, B, H]; NULL: not wanted */
} mgopt__rnn;
/* Bytes of the work space mgopt__rnn_run needs. */
MGOPT__PRIVATE size_t mgopt__rnn_work_size(const mgopt__rnn *r);
MGOPT__PRIVATE void mgopt__rnn_run(const mgopt__rnn *r, double *work);
MGOPT__PRIVATE double mgopt__rnn_act(const mgopt__rnn_act_fn *a, double x);
/* MIL's direction parameter: 0 forward, 1 reverse, 2 bidirectional, -1 another word. */
MGOPT__PRIVATE int mgopt__rnn_mil_direction(const mgopt_op *op);

#endif /* MGOPT__KERNELS_H */
