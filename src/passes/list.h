/* src/passes/list.h — the built-in passes: one line per pass, in registry order.

   PASS(family, name): the file src/passes/<family>/<name>.c defines the pass
   `mgopt__pass_<name>` with its family string "<family>"; its golden cases are
   tests/golden/<family>/<name>.mil. The family is the folder and nothing else.
   The registered name's prefix is the reference namespace, kept from the
   implementation the pass follows: `common::` for Core ML MIL's graph passes
   (whatever their family: cleanup, io, precision, fusion, compression),
   `onnx::` for the ONNX IR optimizer's, `relay::` for TVM Relay's,
   `tflite::` for the TFLite converter's.

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
  PASS(io, shorten_names) \
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
  PASS(fusion, fuse_matmul_dequantized_weight_bias) \
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
  PASS(relay, simplify_inference) \
  PASS(relay, print_ir) \
  PASS(relay, canonicalize_cast) \
  PASS(relay, peephole_add_add) \
  PASS(relay, peephole_dense_to_conv) \
  PASS(compression, linear_quantize_weights) \
  PASS(compression, palettize_weights) \
  PASS(compression, dequantize_quantize_pair_elimination) \
  PASS(compression, nullify_redundant_quantization_zero_point) \
  PASS(compression, int_op_canonicalization) \
  PASS(compression, dequantize_to_constexpr) \
  PASS(compression, distributive_quantized_binary_op_scale_normalization) \
  PASS(compression, canonicalize_quantized_lut_pattern) \
  PASS(compression, prune_weights) \
  PASS(compression, decompress_weights) \
  PASS(compression, fp16_weights) \
  PASS(relay, eliminate_common_subexpr) \
  PASS(relay, peephole_conv_add_mul) \
  PASS(relay, peephole_concat_add_pad) \
  PASS(relay, fold_scale_axis) \
  PASS(relay, combine_parallel_conv2d) \
  PASS(relay, combine_parallel_dense) \
  PASS(tflite, fuse_composite_functions) \
  PASS(tflite, inline_functions) \
  PASS(tflite, fuse_activation) \
  PASS(relay, legalize) \
  PASS(relay, canonicalize_op) \
  PASS(relay, convert_layout) \
  PASS(relay, canonicalize_concat_pos) \
  PASS(cleanup, concat_to_pad) \
  /* end of the list */

#endif /* MGOPT__PASS_LIST_H */
