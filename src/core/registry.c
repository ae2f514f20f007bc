/* src/core/registry.c — the op registry: MGOPT_OP_TABLE's rows as op definitions, operand slot and
   attribute sets, lookups by kind and by name. Type inference lives in core/infer/. */
#include "infer/infer.h"

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
