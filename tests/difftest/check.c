/* tests/difftest/check.c — one differential check: a program evaluated before and after a pass or pipeline, compared within the pass's tolerance. */
#include "check.h"
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- tolerances
   For each program: out_before = eval(P, inputs), out_after = eval(pass(P),
   inputs); every output must have the same shape, and element by element
   |before - after| <= atol + rtol * |before| (NaN equals NaN, inf equals the
   same inf), compared in double. The tolerance follows the pass's numeric
   contract:

   class   rtol     atol     smooth  passes
   EXACT   0        0        no      structural rewrites: the same arithmetic
                                     on the same values (most cleanup, io and
                                     onnx passes, relu/transpose/reshape
                                     merges, dedup, dead code, ...)
   ULP     2^-20    1e-6     yes     one rounding more or less per element:
                                     x / c -> x * (1 / c) (divide_to_multiply
                                     with inexact=true; exact by default),
                                     mul(x, rsqrt(y)) -> real_div(x, sqrt(y)),
                                     reductions re-ordered (reduce_transposes,
                                     remove_redundant_transpose_reduce),
                                     sum * (1/n) -> mean (fuse_reduce_mean)
   FOLD    1e-5     1e-5     yes     weights refolded in double and rounded
                                     once (fuse_conv_*, fuse_linear_bias,
                                     fuse_matmul_weight_bias, batch_norm
                                     fusions, const_elimination's kernels;
                                     relay::legalize's elementwise forms)
   FP16    5e-2     5e-2     yes     computation moved to fp16 (add_fp16_cast,
                                     default_fp16): fp16 has an 11-bit
                                     significand, 2^-11 per rounding over a
                                     chain of up to ~20 ops; elements whose
                                     reference is beyond fp16's range
                                     (|x| > 32768) are not compared
   PIPE    1e-4     1e-4     yes     the named pipelines without fp16: several
                                     ULP and FOLD passes in a row; and
                                     select_optimization's NaN (MASK), and
                                     one integer step on an int8 / uint8
                                     output (QSTEP: fast_math runs
                                     distributive_quantized_binary_op_scale_
                                     normalization)
   MASK    0        0        no      select_optimization: exact, except that
                                     an add of masked infinities gives NaN
                                     where select took the infinity and the
                                     other side is NaN or the opposite
                                     infinity (the pass's stated contract):
                                     NaN after where before is +-inf passes
   NEAR    1e-2     1e-5     yes     fuse_reduce_mean: real_div(sum, c) counts as
                                     a mean for |c - count| < 1e-2 (the
                                     reference's match tolerance), a relative
                                     change up to 1e-2 / count <= 1e-2

   ROUND16 2^-11    6e-8     no      update_output_dtypes: an output cast to
                                     fp16 is rounded once (half an fp16 ulp,
                                     2^-11 relative; 6e-8 is fp16's smallest
                                     subnormal); |x| > 32768 is not compared

   GELU    1e-5     2e-3     yes     gelu fusions: the pattern's constants match
                                     within 1e-3 (tanh) or 1e-2 (sigmoid's
                                     1.702) of the exact ones; |d/dc x*s(c*x)|
                                     = x^2 s'(c x) <= 0.15 for every x, so the
                                     output moves by at most 1.5e-3

   QUANT8  0.25     1        lossy   weights stored in 8 bits (linear_quantize_weights
                                     with its defaults: int8 per channel): each
                                     weight moves by at most half a step,
                                     max|w| / 254 of its channel, so an output
                                     of K products moves by up to K max|x w| / 254,
                                     however small it is (a loose check: the
                                     exact integers are tested in
                                     tests/unit/test_compress_quant.c)

   LOSSY   1e300    1e300    lossy   palettize_weights, prune_weights: the
                                     loss is the options' (1-bit k-means, 90%
                                     sparsity are allowed), so
                                     only a finite output of the same shape
                                     is asked for here (a NaN or an evaluation
                                     error still fails); the exact contract,
                                     the weight read back as lut[index] or
                                     masked, is tested in tests/unit/
                                     test_palettize.c and test_prune.c

   QSTEP   0        1        no      distributive_quantized_binary_op_scale_
                                     normalization: the new scales s_x/s_y and
                                     s_z/s_y carry one rounding each, so a
                                     quantized output may move by one integer
                                     step where it sits at a rounding boundary
                                     (the pass's contract; its outputs are the
                                     quantized integers themselves)

   Every class but EXACT counts roundings in the program's own precision: a
   program that computes anything in fp16 has rtol and atol at least 4e-3
   (a few fp16 roundings, 2^-11 each). A rounding counts relative to the
   terms an op sums, not to its result: where a program cancels (fp16 terms
   near 8 that sum to 0.4, a division by a value near 0 after a subtraction),
   one rounding more or less moves the result by far more than a few ulps
   of it. So every class but EXACT also allows twice the program's own
   rounding noise (precision_noise: the program evaluated once more with
   fp16 written fp32, or fp32 written fp64, before plus after), which is
   tiny where nothing cancels and grows where the program is ill-conditioned.

   An op that a pass creates and the evaluator has no kernel for (batch_norm,
   layer_norm, prelu, pixel_shuffle while their kernels are missing) leaves
   the program uncompared: it is not counted, and a "note:" line says how
   many programs of the pass were left so.

   "smooth" programs avoid ops whose output jumps (floor, ceil, sign, a cond
   on a sign): a pass allowed one rounding of difference would otherwise
   show as a jump of 1 after floor, which its contract permits. "lossy"
   programs (smooth 2) avoid sqrt and division by a computed value too: a
   weight change the contract allows may move a value across 0, out of
   their domain (sqrt of a linear's output near 0 turning NaN). */

static const dt_tol T_EXACT = {0, 0, 0, 0, 0, 0};
static const dt_tol T_ULP = {9.5367431640625e-07, 1e-6, 1, 0, 0, 0};
static const dt_tol T_FOLD = {1e-5, 1e-5, 1, 0, 0, 0};
static const dt_tol T_FP16 = {5e-2, 5e-2, 1, 1, 0, 0};
static const dt_tol T_PIPE = {1e-4, 1e-4, 1, 0, 1, 1};
static const dt_tol T_MASK = {0, 0, 0, 0, 1, 0};
static const dt_tol T_NEAR = {1e-2, 1e-5, 1, 0, 0, 0};
static const dt_tol T_GELU = {1e-5, 2e-3, 1, 0, 0, 0};
static const dt_tol T_ROUND16 = {4.8828125e-4, 6e-8, 0, 1, 0, 0};
static const dt_tol T_QUANT8 = {0.25, 1, 2, 0, 0, 0};
static const dt_tol T_LOSSY = {1e300, 1e300, 2, 0, 0, 0};
static const dt_tol T_QSTEP = {0, 1, 0, 0, 0, 0}; /* finite: inf * 0 would be NaN */

dt_tol dt_tol_of(const char *name) {
  static const char *const ulp[] = {"divide_to_multiply", "rewrite_mul_rsqrt_as_div", "reduce_transposes",
                                    "remove_redundant_transpose_reduce", NULL};
  static const char *const fold[] = {"const_elimination", "fuse_conv_batchnorm", "fuse_conv_bias", "fuse_conv_scale",
                                     "fuse_linear_bias", "fuse_matmul_weight_bias", "fuse_matmul_dequantized_weight_bias",
                                     "fuse_elementwise_to_batchnorm",
                                     "fuse_layernorm_or_instancenorm",
                                     "expand_dynamic_linear", "merge_affine_dequantize_with_consecutive_ops",
                                     "fuse_onehot_matmul_to_gather", "fuse_pad_conv", "compose_conv1d",
                                     "fuse_dilated_conv", "fuse_leaky_relu", "fuse_prelu", "prelu_to_lrelu",
                                     "simplify_inference", "peephole_add_add", "peephole_dense_to_conv", "peephole_conv_add_mul",
                                     "fold_scale_axis", "legalize", "fuse_composite_functions", NULL};
  static const char *const fp16[] = {"add_fp16_cast", "default_fp16", "fp16_weights", "fp16", NULL};
  static const char *const pipes[] = {"default", "fast_math", "cleanup", "onnx_cleanup", "relay_prepare",
                                      "default_palettization", "default_sparsification", NULL};
  const char *s = strstr(name, "::");
  int i;
  if (s) name = s + 2;
  if (!strcmp(name, "fuse_reduce_mean")) return T_NEAR;
  if (!strcmp(name, "select_optimization")) return T_MASK;
  if (!strcmp(name, "linear_quantize_weights") || !strcmp(name, "quantization")) return T_QUANT8;
  if (!strcmp(name, "palettize_weights") || !strcmp(name, "prune_weights")) return T_LOSSY;
  if (!strcmp(name, "distributive_quantized_binary_op_scale_normalization")) return T_QSTEP;
  if (!strncmp(name, "update_output_dtypes", 20)) return T_ROUND16;
  if (!strncmp(name, "fuse_gelu_", 10)) return T_GELU;
  for (i = 0; ulp[i]; i++)
    if (!strcmp(ulp[i], name)) return T_ULP;
  for (i = 0; fold[i]; i++)
    if (!strcmp(fold[i], name)) return T_FOLD;
  for (i = 0; fp16[i]; i++)
    if (!strcmp(fp16[i], name)) return T_FP16;
  for (i = 0; pipes[i]; i++)
    if (!strcmp(pipes[i], name)) return T_PIPE;
  return T_EXACT;
}

/* ---------------------------------------------------------------- inputs */

static uint64_t mix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static int64_t sym_size(const char *text, const char *sym) {
  char key[64];
  const char *d = strncmp(text, "# DIMS", 6) ? NULL : text;
  snprintf(key, sizeof key, " %s=", sym);
  if (d) {
    const char *e = strchr(d, '\n'), *k = strstr(d, key);
    if (k && (!e || k < e)) return atoi(k + strlen(key));
  }
  return 2;
}

static double get(const mgopt_tensor *t, int64_t i) {
  switch (t->dtype) {
  case MGOPT_DT_FP32: return ((const float *)t->data)[i];
  case MGOPT_DT_FP16: return mgopt_f16_to_f32(((const uint16_t *)t->data)[i]);
  case MGOPT_DT_FP64: return ((const double *)t->data)[i];
  case MGOPT_DT_INT32: return ((const int32_t *)t->data)[i];
  case MGOPT_DT_INT64: return (double)((const int64_t *)t->data)[i];
  case MGOPT_DT_INT16: return ((const int16_t *)t->data)[i];
  case MGOPT_DT_INT8: return ((const int8_t *)t->data)[i];
  case MGOPT_DT_UINT8: case MGOPT_DT_BOOL: return ((const uint8_t *)t->data)[i];
  default: return NAN;
  }
}

static void set(mgopt_tensor *t, int64_t i, double v) {
  switch (t->dtype) {
  case MGOPT_DT_FP32: ((float *)t->data)[i] = (float)v; break;
  case MGOPT_DT_FP16: ((uint16_t *)t->data)[i] = mgopt_f32_to_f16((float)v); break;
  case MGOPT_DT_FP64: ((double *)t->data)[i] = v; break;
  case MGOPT_DT_INT32: ((int32_t *)t->data)[i] = (int32_t)v; break;
  case MGOPT_DT_INT64: ((int64_t *)t->data)[i] = (int64_t)v; break;
  case MGOPT_DT_INT16: ((int16_t *)t->data)[i] = (int16_t)v; break;
  case MGOPT_DT_INT8: ((int8_t *)t->data)[i] = (int8_t)v; break;
  case MGOPT_DT_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)(int32_t)v; break; /* -3 -> 253, as a cast wraps */
  case MGOPT_DT_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)(v != 0); break;
  default: break;
  }
}

/* Random inputs for fn's arguments; 0 when an argument is not a tensor of known rank. */
static int make_inputs(mgopt_program *p, mgopt_function *fn, const char *text, uint64_t seed, mgopt_tensor **in,
                       int max) {
  int i, k;
  uint64_t s = seed ^ 0x5DEECE66Dull;
  if (fn->body->nargs > max) return 0;
  for (i = 0; i < fn->body->nargs; i++) {
    const mgopt_type *ty = &fn->body->args[i]->type;
    int64_t shape[MGOPT_MAX_RANK];
    int64_t j;
    in[i] = NULL;
    if (ty->kind != MGOPT_TYPE_TENSOR || ty->rank < 0) goto fail;
    for (k = 0; k < ty->rank; k++) {
      if (ty->dims[k].sym) shape[k] = sym_size(text, ty->dims[k].sym);
      else if (ty->dims[k].v < 0) shape[k] = 2;
      else shape[k] = ty->dims[k].v;
    }
    in[i] = mgopt_eval_tensor_new(p, (mgopt_dtype)ty->dtype, ty->rank, shape);
    if (!in[i]) goto fail;
    for (j = 0; j < in[i]->numel; j++) {
      uint64_t r = mix(&s);
      if (mgopt_dtype_is_float((mgopt_dtype)ty->dtype)) set(in[i], j, ((double)(int64_t)(r % 4097) - 2048) / 1024.0);
      else if (ty->dtype == MGOPT_DT_BOOL) set(in[i], j, (double)(r & 1));
      else set(in[i], j, (double)(int64_t)(r % 7) - 3);
    }
  }
  return 1;
fail:
  for (k = 0; k <= i && k < fn->body->nargs; k++) mgopt_eval_tensor_free(p, in[k]);
  return 0;
}

/* The same values in a tensor of another dtype (the pass changed an input's dtype). */
static mgopt_tensor *convert(mgopt_program *p, const mgopt_tensor *t, int dt) {
  mgopt_tensor *r = mgopt_eval_tensor_new(p, (mgopt_dtype)dt, t->rank, t->shape);
  int64_t i;
  if (!r) return NULL;
  for (i = 0; i < t->numel; i++) set(r, i, get(t, i));
  return r;
}

/* ---------------------------------------------------------------- state

   The evaluator takes tensors only. A program whose main has state
   arguments, read and written at its top level, is evaluated as the
   equivalent stateless program: each state argument becomes a tensor
   argument holding the state's initial contents, read_state reads the last
   value written (the argument before any write), coreml_update_state gives
   its value, and the final contents of each state become extra outputs (so
   a reordered write shows). Returns 0 when a state op sits in a nested block
   or a state is used otherwise (the program is not compared). */

static int nested_state_ops(const mgopt_block *b) {
  const mgopt_op *op;
  int32_t k;
  for (op = b->first; op; op = op->next) {
    if (b->parent_op && (op->kind == MGOPT_OP_read_state || op->kind == MGOPT_OP_coreml_update_state)) return 1;
    for (k = 0; k < op->nblocks; k++)
      if (nested_state_ops(op->blocks[k])) return 1;
  }
  return 0;
}

#define MAXIO 64
/* Generated loops run at most a few trips; a golden case's loop on random
   inputs may never end (a sum that only falls): 4096 trips decide it in
   milliseconds, where the evaluator's default (2^24) takes seconds, minutes
   under ASan. */
#define DT_MAX_LOOP 4096

/* Opaque ONNX ops (onnx::Shape, Dropout, Pad, ...) the generator writes are
   evaluated by the library's callback, mgopt_onnx_eval_op. A call of one of
   the program's functions runs the callee (calls nested at most 16 deep). */
static mgopt_status eval_op(void *ud, mgopt_program *p, const mgopt_op *op, mgopt_tensor *const *operands,
                            int32_t n, mgopt_tensor **out, mgopt_diag *d) {
  const mgopt_function *f = mgopt_op_callee(op);
  int depth = ud ? *(const int *)ud : 0;
  mgopt_eval_options eo;
  if (!f) return mgopt_onnx_eval_op(NULL, p, op, operands, n, out, d);
  if (depth >= 16) return mgopt_diag_set(d, MGOPT_ERR_LIMIT, "calls nested too deep");
  depth++;
  memset(&eo, 0, sizeof eo);
  eo.max_elements = 1 << 20;
  eo.max_loop_iterations = DT_MAX_LOOP;
  eo.op_fn = eval_op;
  eo.op_ud = &depth;
  return mgopt_eval(p, f->name, operands, n, out, op->nouts, &eo, d);
}

static int lower_state(mgopt_function *f) {
  mgopt_block *b = f->body;
  mgopt_value *cur[MAXIO];
  mgopt_op *op, *nx;
  int32_t i, nst = 0;
  if (b->nargs > MAXIO) return 0;
  for (i = 0; i < b->nargs; i++) {
    cur[i] = b->args[i]->type.kind == MGOPT_TYPE_STATE ? b->args[i] : NULL;
    if (cur[i]) nst++;
  }
  if (!nst) return 1;
  if (nested_state_ops(b)) return 0;
  for (op = b->first; op; op = nx) {
    mgopt_value *s, *val;
    int32_t k;
    nx = op->next;
    if (op->kind != MGOPT_OP_read_state && op->kind != MGOPT_OP_coreml_update_state) continue;
    s = mgopt_op_operand(op, op->kind == MGOPT_OP_read_state ? "input" : "state");
    k = s && !s->def && s->owner == b ? s->index : -1;
    if (k < 0 || k >= b->nargs || b->args[k] != s || !cur[k] || op->nouts != 1) return 0;
    val = op->kind == MGOPT_OP_read_state ? cur[k] : mgopt_op_operand(op, "value");
    if (!val) return 0;
    cur[k] = val;
    mgopt_value_replace_all_uses(op->outs[0], val);
    mgopt_op_erase(op);
  }
  for (i = 0; i < b->nargs; i++)
    if (b->args[i]->type.kind == MGOPT_TYPE_STATE) {
      b->args[i]->type.kind = MGOPT_TYPE_TENSOR;
    }
  for (i = 0; i < b->nargs; i++)
    if (cur[i] && mgopt_block_add_output(b, cur[i]) != MGOPT_OK) return 0;
  return 1;
}

/* ---------------------------------------------------------------- options

   A pass that needs options to do anything gets options chosen for the
   program: update_output_dtypes a dtype per output (fp16 or fp32 for a float
   output, kept otherwise), image_input_preprocess some of main's inputs of
   rank >= 3. */

static void with_options(const char *pipeline, const mgopt_function *f, uint64_t seed, char *buf, size_t n) {
  const char *s = strstr(pipeline, "::") ? strstr(pipeline, "::") + 2 : pipeline;
  const mgopt_block *b = f->body;
  uint64_t r = seed ^ 0xA5A5A5A5ull;
  size_t len;
  int32_t i, any = 0;
  snprintf(buf, n, "%s", pipeline);
  if (strchr(pipeline, '{')) return;
  if (!strcmp(s, "update_output_dtypes")) {
    snprintf(buf, n, "%s{dtypes=\"", pipeline);
    for (i = 0; i < b->nouts; i++) {
      const mgopt_type *t = &b->outs[i]->value->type;
      const char *dt = "";
      uint64_t c = mix(&r) % 4;
      if (t->kind == MGOPT_TYPE_TENSOR && mgopt_dtype_is_float((mgopt_dtype)t->dtype) && c)
        dt = c == 3 ? "fp32" : "fp16";
      len = strlen(buf);
      snprintf(buf + len, n - len, "%s%s", i ? "," : "", dt);
    }
    len = strlen(buf);
    snprintf(buf + len, n - len, "\"}");
  } else if (!strcmp(s, "linear_quantize_weights")) {
    /* the default 2048-element threshold would skip every generated weight: 60
       takes the template's weight (more than 60 elements) and few others; the
       other options stay the defaults (8 bits: T_QUANT8's contract) */
    snprintf(buf, n, "%s{weight_threshold=60}", pipeline);
  } else if (!strcmp(s, "palettize_weights")) {
    static const char *const opts[] = {"mode=kmeans,nbits=2", "mode=kmeans,nbits=4", "mode=uniform,nbits=3",
                                       "mode=unique", "mode=uniform,nbits=8,granularity=per_grouped_channel,group_size=1"};
    snprintf(buf, n, "%s{weight_threshold=60,%s}", pipeline, opts[mix(&r) % 5]);
  } else if (!strcmp(s, "prune_weights")) {
    static const char *const opts[] = {"mode=magnitude,target_sparsity=0.5", "threshold=0.3,minimum_sparsity_percentile=0.2",
                                       "mode=magnitude,n_m_ratio=\"1:2\"", "mode=magnitude,target_sparsity=0.25,block_size=2"};
    snprintf(buf, n, "%s{weight_threshold=60,%s}", pipeline, opts[mix(&r) % 4]);
  } else if (!strcmp(s, "image_input_preprocess")) {
    snprintf(buf, n, "%s{nhwc_inputs=\"", pipeline);
    for (i = 0; i < b->nargs; i++) {
      const mgopt_type *t = &b->args[i]->type;
      if (t->kind != MGOPT_TYPE_TENSOR || t->rank < 3 || !b->args[i]->name || (any && mix(&r) % 3 == 0)) continue;
      len = strlen(buf);
      snprintf(buf + len, n - len, "%s%s", any++ ? "," : "", b->args[i]->name);
    }
    len = strlen(buf);
    snprintf(buf + len, n - len, "\"}");
    if (!any) snprintf(buf, n, "%s", pipeline);
  }
}

/* 1 when the input `name` is listed in the pipeline's nhwc_inputs option. */
static int is_nhwc_input(const char *pipeline, const char *name) {
  const char *o = strstr(pipeline, "nhwc_inputs=");
  size_t n = name ? strlen(name) : 0;
  if (!o || !n) return 0;
  o += 12;
  if (*o == '"') o++;
  while (*o && *o != '"' && *o != '}') {
    while (*o == ' ' || *o == ',') o++;
    if (!strncmp(o, name, n) && (o[n] == ',' || o[n] == '"' || o[n] == '}' || o[n] == ' ' || !o[n])) return 1;
    while (*o && *o != ',' && *o != '"' && *o != '}') o++;
  }
  return 0;
}

/* [..., H, W, C] -> [..., C, H, W]: the input of a pass-transposed image argument. */
static mgopt_tensor *to_channel_first(mgopt_program *p, const mgopt_tensor *t, int dt) {
  int64_t shape[MGOPT_MAX_RANK], H, W, C, outer = 1, o, h, w, c;
  int32_t r = t->rank, i;
  mgopt_tensor *q;
  if (r < 3) return NULL;
  for (i = 0; i < r - 3; i++) shape[i] = t->shape[i], outer *= t->shape[i];
  H = t->shape[r - 3], W = t->shape[r - 2], C = t->shape[r - 1];
  shape[r - 3] = C, shape[r - 2] = H, shape[r - 1] = W;
  q = mgopt_eval_tensor_new(p, (mgopt_dtype)dt, r, shape);
  if (!q) return NULL;
  for (o = 0; o < outer; o++)
    for (h = 0; h < H; h++)
      for (w = 0; w < W; w++)
        for (c = 0; c < C; c++) set(q, ((o * C + c) * H + h) * W + w, get(t, ((o * H + h) * W + w) * C + c));
  return q;
}

/* ---------------------------------------------------------------- one program */

static mgopt_status run(mgopt_program *p, mgopt_tensor **in, int nin, mgopt_tensor **out, int nout, mgopt_diag *d) {
  mgopt_eval_options eo;
  memset(&eo, 0, sizeof eo);
  eo.max_elements = 1 << 20;
  eo.max_loop_iterations = DT_MAX_LOOP;
  eo.op_fn = eval_op;
  return mgopt_eval(p, mgopt_program_function_count(p) == 1 ? NULL : "main", in, nin, out, nout, &eo, d);
}

/* The rounding noise of a program: how far its outputs are from those of
   the same program computed in a wider type. The program text is evaluated
   once more with every `from` dtype token written `to` ("fp16" -> "fp32",
   or "fp32" -> "fp64"; names like %fp16 are kept), on the same input
   values; noise[i] is the largest |o0 - wide result| over the elements of
   output i where both are finite. A pass that changes the order or the
   number of roundings moves a result by about as much as the program's own
   rounding does. noise stays 0 where the program cannot be so evaluated. */
static void precision_noise(const char *text, const char *from, const char *to, mgopt_tensor **in0, int nin, mgopt_tensor **o0, int nout, double *noise) {
  size_t n = strlen(text);
  char *w = (char *)malloc(n + 1), *at;
  mgopt_program *p = NULL;
  mgopt_function *f;
  mgopt_tensor *in[MAXIO], *o[MAXIO];
  mgopt_diag d;
  int k, made = 0, got = 0;
  int64_t j;
  for (k = 0; k < nout; k++) noise[k] = 0;
  if (!w) return;
  memcpy(w, text, n + 1);
  for (at = strstr(w, from); at; at = strstr(at + 4, from)) {
    char before = at > w ? at[-1] : ' ', after = at[4];
    int name = before == '%' || (before == '"' && at > w + 1 && at[-2] == '%') || before == '_' ||
               isalnum((unsigned char)before) || after == '_' || isalnum((unsigned char)after);
    if (!name) memcpy(at, to, 4);
  }
  memset(&d, 0, sizeof d);
  if (mgopt_mil_parse(w, n, NULL, &p, &d) != MGOPT_OK) goto done;
  f = mgopt_program_function(p, "main");
  if (!f && mgopt_program_function_count(p) == 1) f = mgopt_program_function_at(p, 0);
  if (!f || !lower_state(f) || f->body->nargs != nin || f->body->nouts != nout) goto done;
  for (made = 0; made < nin; made++) {
    in[made] = convert(p, in0[made], f->body->args[made]->type.dtype);
    if (!in[made]) goto done;
  }
  if (run(p, in, nin, o, nout, &d) != MGOPT_OK) goto done;
  got = nout;
  for (k = 0; k < nout; k++) {
    if (o[k]->numel != o0[k]->numel) continue;
    for (j = 0; j < o[k]->numel; j++) {
      double a = get(o0[k], j), r = get(o[k], j);
      if (isfinite(a) && isfinite(r) && fabs(a - r) > noise[k]) noise[k] = fabs(a - r);
    }
  }
done:
  for (k = 0; k < got; k++) mgopt_eval_tensor_free(p, o[k]);
  for (k = 0; k < made; k++) mgopt_eval_tensor_free(p, in[k]);
  mgopt_program_destroy(p);
  free(w);
}

/* noise: the output's rounding noise, before's plus after's (precision_noise),
   allowed twice over: each of before and after is that far from its wide
   result, and the two wide results differ by the rounding of what the pass
   folded. */
static int close_enough(double a, double b, const dt_tol *t, double noise, int int8) {
  if (isnan(a) && isnan(b)) return 1;
  if (int8 && t->qstep && fabs(a - b) <= 1) return 1;
  if (t->inf_nan && isinf(a) && isnan(b)) return 1;
  if (isinf(a) || isinf(b)) {
    if (t->fp16 && (fabs(a) > 32768 || fabs(b) > 32768)) return 1;
    return a == b;
  }
  if (t->fp16 && fabs(a) > 32768) return 1;
  return fabs(a - b) <= t->atol + t->rtol * fabs(a) + 2 * noise;
}

static mgopt_program *parse(const char *text, char *why, size_t n) {
  mgopt_program *p = NULL;
  mgopt_diag d;
  memset(&d, 0, sizeof d);
  if (mgopt_mil_parse(text, strlen(text), NULL, &p, &d) != MGOPT_OK) {
    snprintf(why, n, "parse %d:%d: %s", d.line, d.col, d.msg);
    return NULL;
  }
  return p;
}

int dt_check(const char *text, const char *pipeline, const dt_tol *t0, uint64_t seed, dt_result *res) {
  dt_tol tl = *t0, *t = &tl;
  mgopt_program *p0 = NULL, *p1 = NULL;
  mgopt_function *f0, *f1;
  mgopt_tensor *in0[MAXIO], *in1[MAXIO], *o0[MAXIO], *o1[MAXIO];
  double noise[MAXIO];
  const char *wide = NULL;
  int nin = 0, nin1 = 0, no0 = 0, no1 = 0, i, k, rc = DT_SKIP;
  mgopt_diag d;
  mgopt_pass_report reps[256];
  int32_t nreps = 0;
  char pl[1024];
  mgopt_pipeline_options po;
  const mgopt_registry *reg = mgopt_builtin_registry();
  res->fired = 0;
  res->why[0] = 0;
  if (tl.rtol > 0 && strstr(text, "fp16")) {
    if (tl.rtol < 4e-3) tl.rtol = 4e-3;
    if (tl.atol < 4e-3) tl.atol = 4e-3;
  }
  memset(&d, 0, sizeof d);
  p0 = parse(text, res->why, sizeof res->why);
  if (!p0) goto done;
  f0 = mgopt_program_function(p0, "main");
  if (!f0 && mgopt_program_function_count(p0) == 1) f0 = mgopt_program_function_at(p0, 0);
  if (!f0 || f0->body->nouts > MAXIO) goto done;
  with_options(pipeline, f0, seed, pl, sizeof pl);
  if (!lower_state(f0) || f0->body->nouts > MAXIO) goto done;
  if (!make_inputs(p0, f0, text, seed, in0, MAXIO)) goto done;
  nin = f0->body->nargs;
  if (run(p0, in0, nin, o0, f0->body->nouts, &d) != MGOPT_OK)
    goto done; /* the program itself cannot be evaluated (opaque op, ...): not a test */
  no0 = f0->body->nouts;
  memset(noise, 0, sizeof noise);
  if (tl.rtol > 0) wide = strstr(text, "fp16") ? "fp32" : strstr(text, "fp32") ? "fp64" : NULL;
  if (wide) precision_noise(text, wide[3] == '2' ? "fp16" : "fp32", wide, in0, nin, o0, no0, noise);
  rc = DT_MISMATCH;
  p1 = parse(text, res->why, sizeof res->why);
  if (!p1) goto done;
  memset(&po, 0, sizeof po);
  po.verify_each = 1;
  po.reports = reps;
  po.reports_cap = 256;
  po.nreports = &nreps;
  if (mgopt_pipeline_run(p1, reg, pl, &po, &d) != MGOPT_OK) {
    snprintf(res->why, sizeof res->why, "pipeline failed: %s: %s", mgopt_status_str(d.status), d.msg);
    goto done;
  }
  for (i = 0; i < nreps; i++)
    if (reps[i].rewrites > 0) res->fired = 1;
  if (mgopt_program_verify(p1, &d) != MGOPT_OK) {
    snprintf(res->why, sizeof res->why, "verify after the pass: %s", d.msg);
    goto done;
  }
  f1 = mgopt_program_function(p1, f0->name);
  if (!f1 && mgopt_program_function_count(p1) == 1) f1 = mgopt_program_function_at(p1, 0);
  if (!f1) {
    snprintf(res->why, sizeof res->why, "function %s gone", f0->name);
    goto done;
  }
  if (!lower_state(f1)) {
    rc = DT_SKIP;
    goto done;
  }
  if (f1->body->nouts != no0) {
    snprintf(res->why, sizeof res->why, "%d outputs after, %d before", f1->body->nouts, no0);
    goto done;
  }
  /* inputs: by position when the count is kept, else by name */
  nin1 = f1->body->nargs;
  if (nin1 > MAXIO) goto done;
  for (i = 0; i < nin1; i++) {
    const mgopt_value *a = f1->body->args[i];
    int from = -1;
    in1[i] = NULL;
    if (nin1 == nin) from = i;
    else
      for (k = 0; k < nin; k++)
        if (!strcmp(f0->body->args[k]->name, a->name)) from = k;
    if (from < 0) {
      snprintf(res->why, sizeof res->why, "input %s is new", a->name);
      for (k = 0; k < i; k++) mgopt_eval_tensor_free(p1, in1[k]);
      nin1 = 0;
      goto done;
    }
    in1[i] = res->fired && in0[from]->rank >= 3 && is_nhwc_input(pl, a->name) ? to_channel_first(p1, in0[from], a->type.dtype)
                                        : convert(p1, in0[from], a->type.dtype);
  }
  {
    if (run(p1, in1, nin1, o1, no0, &d) != MGOPT_OK) {
      /* an op the pass made that the evaluator cannot run (no kernel, or a
         kernel that declines these parameters): not compared, but noted */
      if (d.status == MGOPT_ERR_UNSUPPORTED) {
        snprintf(res->why, sizeof res->why, "%s", d.msg);
        rc = DT_NOKERNEL;
        goto done;
      }
      snprintf(res->why, sizeof res->why, "evaluation after the pass fails: %s: %s", mgopt_status_str(d.status),
               d.msg);
      goto done;
    }
    no1 = no0;
  }
  if (wide) {
    /* the after-program's own noise: a pass that splits one op into several
       (a norm decomposed) computes the same in more roundings */
    mgopt_buf b = {0};
    double after[MAXIO];
    if (mgopt_mil_print(p1, NULL, &b) == MGOPT_OK && b.data) {
      precision_noise(b.data, wide[3] == '2' ? "fp16" : "fp32", wide, in1, nin1, o1, no1, after);
      for (i = 0; i < no1; i++) noise[i] += after[i];
    }
    mgopt_buf_free(&b);
  }
  for (i = 0; i < no0; i++) {
    int64_t j;
    if (o0[i]->rank != o1[i]->rank || o0[i]->numel != o1[i]->numel ||
        (o0[i]->rank > 0 && memcmp(o0[i]->shape, o1[i]->shape, (size_t)o0[i]->rank * sizeof(int64_t)))) {
      snprintf(res->why, sizeof res->why, "output %d: shape differs", i);
      goto done;
    }
    if (o0[i]->dtype == MGOPT_DT_BOOL) {
      /* a different dtype after the pass is a change of meaning, unless the pass is an io/precision one */
    }
    for (j = 0; j < o0[i]->numel; j++) {
      double a = get(o0[i], j), b = get(o1[i], j);
      if (!close_enough(a, b, t, noise[i], o0[i]->dtype == MGOPT_DT_INT8 || o0[i]->dtype == MGOPT_DT_UINT8)) {
        snprintf(res->why, sizeof res->why, "output %d element %lld: %.9g before, %.9g after", i, (long long)j, a, b);
        goto done;
      }
    }
  }
  rc = DT_OK;
done:
  for (i = 0; i < no0; i++) mgopt_eval_tensor_free(p0, o0[i]);
  for (i = 0; i < no1; i++) mgopt_eval_tensor_free(p1, o1[i]);
  if (p0)
    for (i = 0; i < nin; i++) mgopt_eval_tensor_free(p0, in0[i]);
  for (i = 0; i < nin1; i++) mgopt_eval_tensor_free(p1, in1[i]);
  mgopt_program_destroy(p0);
  mgopt_program_destroy(p1);
  return rc;
}

