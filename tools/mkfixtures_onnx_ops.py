#!/usr/bin/python3
"""tools/mkfixtures_onnx_ops.py — writes one small ONNX model per op and opset form into tests/fixtures/onnx/ops/.

Dev-time only (the tests need just a C compiler): run with Debian's python3-onnx,
    /usr/bin/python3 tools/mkfixtures_onnx_ops.py [outdir]
then regenerate the expected IR with `tools/mkfixtures_onnx_ops.py --mil` (runs
build/mgopt on each model; review the diff by hand) and commit both. Every model
has static shapes, deterministic constants, and passes onnx.checker with full
shape inference. The cases cover each op the importer maps (in both forms where
an opset moved an attribute to an input, or changed a default), and ops that stay
opaque on purpose.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fixtures", "onnx", "ops")
F = TensorProto.FLOAT
I64 = TensorProto.INT64
B = TensorProto.BOOL


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def const_arr(shape, dtype=np.float32, start=0.5):
    n = int(np.prod(shape)) if shape else 1
    return (np.arange(n, dtype=np.float64) * 0.25 + start).astype(dtype).reshape(shape)


CASES = []


def case(name, opset, nodes, inputs, outputs, inits=(), extra_opsets=()):
    CASES.append((name, opset, nodes, inputs, outputs, list(inits), list(extra_opsets)))


def unary(op, opset=13, shape=(2, 3), dt=F, **attrs):
    case(f"{op.lower()}_{opset}", opset, [helper.make_node(op, ["x"], ["y"], **attrs)],
         [vi("x", dt, shape)], [vi("y", dt, shape)])


def binary(op, opset=13, a=(2, 3), b=(3,), out=(2, 3), dt=F, odt=None, suffix=""):
    case(f"{op.lower()}{suffix}_{opset}", opset, [helper.make_node(op, ["a", "b"], ["y"])],
         [vi("a", dt, a), vi("b", dt, b)], [vi("y", odt or dt, out)])


def build():
    # element-wise, unary
    for op in ["Abs", "Ceil", "Cos", "Erf", "Exp", "Floor", "Identity", "Log", "Relu", "Sigmoid", "Sin",
               "Sqrt", "Tanh", "Neg", "Reciprocal"]:
        unary(op)
    case("neg_int32_13", 13, [helper.make_node("Neg", ["x"], ["y"])], [vi("x", TensorProto.INT32, (2, 3))],
         [vi("y", TensorProto.INT32, (2, 3))])
    unary("Reciprocal", opset=6)
    # trigonometric and hyperbolic (MIL's acos .. tan), Softplus, Round (half to even), Sign (also integers)
    for op in ["Acos", "Asin", "Atan", "Atanh", "Cosh", "Sinh", "Tan", "Softplus", "Round", "Sign"]:
        unary(op)
    unary("Tan", opset=7)
    unary("Sign", dt=TensorProto.INT32)
    CASES[-1] = ("sign_int32_13",) + CASES[-1][1:]
    unary("Neg", opset=6)
    unary("Elu", alpha=0.5)
    unary("Elu", opset=6)
    unary("Elu", opset=1)  # Elu-1 (consumed_inputs) stays opaque
    # activations: sigmoid_hard, softsign, thresholded_relu (x > a is x >= the next float above a), LRN
    unary("HardSigmoid", alpha=0.3, beta=0.4)
    unary("HardSigmoid", opset=6)
    unary("Softsign")
    unary("ThresholdedRelu", opset=10, alpha=0.5)
    unary("ThresholdedRelu", opset=10, dt=TensorProto.FLOAT16)  # fp16 stays opaque
    CASES[-1] = ("thresholdedrelu_fp16_10",) + CASES[-1][1:]
    unary("LRN", shape=(1, 5, 2, 2), size=3, alpha=1e-3, beta=0.6, bias=1.5)
    unary("LRN", opset=1, shape=(1, 5, 3, 1), size=5)
    unary("LRN", shape=(1, 5, 2, 2), size=4)  # an even size (a lopsided window) stays opaque
    CASES[-1] = ("lrn_even_13",) + CASES[-1][1:]
    unary("LeakyRelu", alpha=0.2)
    unary("Gelu", opset=20)
    case("gelu_tanh_20", 20, [helper.make_node("Gelu", ["x"], ["y"], approximate="tanh")],
         [vi("x", F, (2, 3))], [vi("y", F, (2, 3))])
    unary("Not", dt=B)
    case("prelu_13", 13, [helper.make_node("PRelu", ["x", "s"], ["y"])], [vi("x", F, (2, 3))],
         [vi("y", F, (2, 3))], [init("s", const_arr((3,)))])
    # Clip: attributes (opset 6) then inputs (opset 11+)
    unary("Clip", opset=6, min=-1.0, max=2.0)
    case("clip_13", 13, [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], [vi("x", F, (2, 3))],
         [vi("y", F, (2, 3))], [init("lo", np.float32(-1)), init("hi", np.float32(2))])
    case("clip_min_only_13", 13, [helper.make_node("Clip", ["x", "lo"], ["y"])], [vi("x", F, (2, 3))],
         [vi("y", F, (2, 3))], [init("lo", np.float32(0))])
    I8 = TensorProto.INT8
    case("clip_int8_13", 13, [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], [vi("x", I8, (2, 3))],
         [vi("y", I8, (2, 3))], [init("lo", np.int8(-3)), init("hi", np.int8(5))])
    case("clip_int8_nobounds_13", 13, [helper.make_node("Clip", ["x"], ["y"])], [vi("x", I8, (2, 3))], [vi("y", I8, (2, 3))])
    case("clip_runtime_min_13", 13, [helper.make_node("Clip", ["x", "lo"], ["y"])],  # a bound known at run time only
         [vi("x", F, (2, 3)), vi("lo", F, ())], [vi("y", F, (2, 3))])
    # element-wise, binary (broadcasting), comparisons, logic
    for op in ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"]:
        binary(op)
    case("div_int_13", 13, [helper.make_node("Div", ["a", "b"], ["y"])], [vi("a", I64, (2, 3))], [vi("y", I64, (2, 3))],
         [init("b", np.array([2, -3, 5], dtype=np.int64))])  # truncates toward zero: -7 / 2 = -3
    binary("Add", a=(2, 1, 3), b=(4, 1), out=(2, 4, 3), suffix="_bcast")
    # integer Max / Min (opset 12 on), Mod with fmod 0 (floor modulo), Pow with integer or mixed dtypes
    binary("Max", dt=TensorProto.INT32, suffix="_int32")
    binary("Min", opset=12, dt=TensorProto.UINT8, suffix="_uint8")
    case("mod_10", 10, [helper.make_node("Mod", ["a", "b"], ["y"])], [vi("a", TensorProto.INT32, (2, 3))],
         [vi("y", TensorProto.INT32, (2, 3))], [init("b", np.array([3, -4, 7], dtype=np.int32))])
    case("mod_uint64_13", 13, [helper.make_node("Mod", ["a", "b"], ["y"])], [vi("a", TensorProto.UINT64, (2, 3))],
         [vi("y", TensorProto.UINT64, (2, 3))], [init("b", np.array([3, 4, 7], dtype=np.uint64))])
    case("mod_fmod_13", 13, [helper.make_node("Mod", ["a", "b"], ["y"], fmod=1)],  # C's fmod stays opaque
         [vi("a", TensorProto.INT32, (2, 3))], [vi("y", TensorProto.INT32, (2, 3))],
         [init("b", np.array([3, -4, 7], dtype=np.int32))])
    binary("Pow", dt=I64, suffix="_int64")
    case("pow_float_int32_13", 13, [helper.make_node("Pow", ["a", "b"], ["y"])],
         [vi("a", F, (2, 3)), vi("b", TensorProto.INT32, (3,))], [vi("y", F, (2, 3))])
    case("pow_int32_float_15", 15, [helper.make_node("Pow", ["a", "b"], ["y"])],
         [vi("a", TensorProto.INT32, (2, 3)), vi("b", F, (3,))], [vi("y", TensorProto.INT32, (2, 3))])
    for op in ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"]:
        binary(op, odt=B)
    for op in ["And", "Or", "Xor"]:
        binary(op, dt=B)
    case("max_3inputs_13", 13, [helper.make_node("Max", ["a", "b", "c"], ["y"])],
         [vi("a", F, (2, 3)), vi("b", F, (2, 3)), vi("c", F, (2, 3))], [vi("y", F, (2, 3))])
    case("where_13", 13, [helper.make_node("Where", ["c", "a", "b"], ["y"])],
         [vi("c", B, (2, 3)), vi("a", F, (2, 3)), vi("b", F, (3,))], [vi("y", F, (2, 3))])
    case("cast_13", 13, [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT16)], [vi("x", F, (2, 3))],
         [vi("y", TensorProto.FLOAT16, (2, 3))])
    # Softmax: axis default 1 and 2-D coercion before 13, -1 per axis from 13
    unary("Softmax", opset=11, shape=(2, 3, 4))
    unary("Softmax", opset=11, shape=(2, 3), axis=1)
    CASES[-1] = ("softmax_2d_11",) + CASES[-1][1:]
    unary("Softmax", opset=13, shape=(2, 3, 4))
    unary("Softmax", opset=13, shape=(2, 3, 4), axis=1)
    CASES[-1] = ("softmax_axis1_13",) + CASES[-1][1:]
    # matrix ops
    case("matmul_13", 13, [helper.make_node("MatMul", ["a", "b"], ["y"])],
         [vi("a", F, (2, 3, 4))], [vi("y", F, (2, 3, 5))], [init("b", const_arr((4, 5)))])
    case("gemm_13", 13, [helper.make_node("Gemm", ["a", "b", "c"], ["y"])],
         [vi("a", F, (2, 4))], [vi("y", F, (2, 5))], [init("b", const_arr((4, 5))), init("c", const_arr((5,)))])
    case("gemm_transb_alpha_beta_13", 13,
         [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)],
         [vi("a", F, (2, 4))], [vi("y", F, (2, 5))], [init("b", const_arr((5, 4))), init("c", const_arr((1, 5)))])
    case("gemm_transa_noc_13", 13, [helper.make_node("Gemm", ["a", "b"], ["y"], transA=1)],
         [vi("a", F, (4, 2))], [vi("y", F, (2, 5))], [init("b", const_arr((4, 5)))])
    # convolution and pooling
    w = const_arr((4, 3, 3, 3), start=-1.0)
    case("conv_13", 13, [helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2])],
         [vi("x", F, (1, 3, 8, 8))], [vi("y", F, (1, 4, 4, 4))], [init("w", w), init("b", const_arr((4,)))])
    case("conv_same_upper_13", 13, [helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", strides=[2, 2])],
         [vi("x", F, (1, 3, 7, 7))], [vi("y", F, (1, 4, 4, 4))], [init("w", w)])
    case("conv_valid_dilated_13", 13,
         [helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="VALID", dilations=[2, 2])],
         [vi("x", F, (1, 3, 8, 8))], [vi("y", F, (1, 4, 4, 4))], [init("w", w)])
    case("conv_group_13", 13, [helper.make_node("Conv", ["x", "w"], ["y"], group=2)],
         [vi("x", F, (1, 4, 5, 5))], [vi("y", F, (1, 4, 3, 3))], [init("w", const_arr((4, 2, 3, 3)))])
    case("conv_transpose_13", 13, [helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2])],
         [vi("x", F, (1, 4, 3, 3))], [vi("y", F, (1, 2, 7, 7))], [init("w", const_arr((4, 2, 3, 3)))])
    # ConvTranspose: output_padding and output_shape as conv_transpose's pad and output_shape;
    # output_shape with explicit pads stays opaque
    case("conv_transpose_output_padding_11", 11,
         [helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[3, 2], pads=[1, 0, 1, 0], output_padding=[1, 1])],
         [vi("x", F, (1, 1, 3, 3))], [vi("y", F, (1, 2, 8, 8))], [init("w", const_arr((1, 2, 3, 3)))])
    case("conv_transpose_output_shape_11", 11,
         [helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[3, 2], output_shape=[10, 6])],
         [vi("x", F, (1, 1, 3, 3))], [vi("y", F, (1, 2, 10, 6))], [init("w", const_arr((1, 2, 3, 3)))])
    case("conv_transpose_output_shape_pads_11", 11,
         [helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[3, 2], pads=[1, 1, 1, 1], output_shape=[10, 8])],
         [vi("x", F, (1, 1, 3, 3))], [vi("y", F, (1, 2, 10, 8))], [init("w", const_arr((1, 2, 3, 3)))])
    # Gemm: transA, alpha and beta as matmul, mul and add; beta 0 drops C
    case("gemm_all_attributes_13", 13,
         [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, transB=1, alpha=0.25, beta=0.35)],
         [vi("a", F, (4, 3))], [vi("y", F, (3, 5))], [init("b", const_arr((5, 4))), init("c", const_arr((1, 5)))])
    case("gemm_beta0_13", 13, [helper.make_node("Gemm", ["a", "b", "c"], ["y"], beta=0.0)],
         [vi("a", F, (2, 4))], [vi("y", F, (2, 5))], [init("b", const_arr((4, 5))), init("c", const_arr((5,)))])
    # GlobalMaxPool: reduce_max over the spatial dims
    case("globalmaxpool_1", 1, [helper.make_node("GlobalMaxPool", ["x"], ["y"])],
         [vi("x", F, (1, 3, 4, 5))], [vi("y", F, (1, 3, 1, 1))])
    # PRelu: a slope over axis 1 alone becomes prelu's alpha; one over the last axis stays opaque
    case("prelu_channel_16", 16, [helper.make_node("PRelu", ["x", "s"], ["y"])], [vi("x", F, (2, 3, 4))],
         [vi("y", F, (2, 3, 4))], [init("s", const_arr((3, 1)))])
    case("prelu_last_axis_16", 16, [helper.make_node("PRelu", ["x", "s"], ["y"])], [vi("x", F, (2, 3, 4))],
         [vi("y", F, (2, 3, 4))], [init("s", const_arr((4,)))])
    case("prelu_6", 6, [helper.make_node("PRelu", ["x", "s"], ["y"])], [vi("x", F, (2, 3, 4))],
         [vi("y", F, (2, 3, 4))], [init("s", const_arr((3,)))])
    case("prelu_ambiguous_6", 6, [helper.make_node("PRelu", ["x", "s"], ["y"])], [vi("x", F, (2, 3, 3))],
         [vi("y", F, (2, 3, 3))], [init("s", const_arr((3,)))])
    # Resize / Upsample: the four MIL resampling ops; cubic, default half_pixel nearest and run-time
    # scales stay opaque
    xs = (1, 2, 3, 4)
    case("upsample_nearest_9", 9, [helper.make_node("Upsample", ["x", "s"], ["y"], mode="nearest")],
         [vi("x", F, xs)], [vi("y", F, (1, 2, 6, 8))], [init("s", np.array([1, 1, 2, 2], dtype=np.float32))])
    case("upsample_nearest_7", 7, [helper.make_node("Upsample", ["x"], ["y"], mode="nearest", scales=[1.0, 1.0, 3.0, 2.0])],
         [vi("x", F, xs)], [vi("y", F, (1, 2, 9, 8))])
    case("resize_nearest_scales_13", 13,
         [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest", coordinate_transformation_mode="asymmetric",
                           nearest_mode="floor")],
         [vi("x", F, xs)], [vi("y", F, (1, 2, 6, 2))], [init("s", np.array([1, 1, 2, 0.5], dtype=np.float32))])
    case("resize_nearest_sizes_11", 11,
         [helper.make_node("Resize", ["x", "roi", "s", "z"], ["y"], mode="nearest",
                           coordinate_transformation_mode="asymmetric", nearest_mode="floor")],
         [vi("x", F, xs)], [vi("y", F, (1, 2, 6, 12))],
         [init("roi", np.zeros((0,), np.float32)), init("s", np.zeros((0,), np.float32)),
          init("z", np.array([1, 2, 6, 12], dtype=np.int64))])
    case("resize_linear_scales_13", 13, [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear")],
         [vi("x", F, xs)], [vi("y", F, (1, 2, 6, 8))], [init("s", np.array([1, 1, 2, 2], dtype=np.float32))])
    case("resize_linear_align_scales_13", 13,
         [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear", coordinate_transformation_mode="align_corners")],
         [vi("x", F, xs)], [vi("y", F, (1, 2, 6, 2))], [init("s", np.array([1, 1, 2, 0.5], dtype=np.float32))])
    case("resize_linear_sizes_13", 13,
         [helper.make_node("Resize", ["x", "", "", "z"], ["y"], mode="linear", coordinate_transformation_mode="asymmetric")],
         [vi("x", F, xs)], [vi("y", F, (1, 2, 5, 7))], [init("z", np.array([1, 2, 5, 7], dtype=np.int64))])
    case("resize_linear_sizes_half_pixel_18", 18,
         [helper.make_node("Resize", ["x", "", "", "z"], ["y"], mode="linear")],
         [vi("x", F, xs)], [vi("y", F, (1, 2, 2, 3))], [init("z", np.array([1, 2, 2, 3], dtype=np.int64))])
    case("resize_linear_fractional_scales_13", 13, [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear")],
         [vi("x", F, xs)], [vi("y", F, (1, 2, 1, 2))], [init("s", np.array([1, 1, 0.6, 0.6], dtype=np.float32))])
    case("resize_nearest_default_13", 13, [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest")],
         [vi("x", F, xs)], [vi("y", F, (1, 2, 6, 8))], [init("s", np.array([1, 1, 2, 2], dtype=np.float32))])
    case("resize_cubic_13", 13, [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="cubic")],
         [vi("x", F, xs)], [vi("y", F, (1, 2, 6, 8))], [init("s", np.array([1, 1, 2, 2], dtype=np.float32))])
    case("resize_runtime_scales_13", 13,
         [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest", coordinate_transformation_mode="asymmetric",
                           nearest_mode="floor")],
         [vi("x", F, xs), vi("s", F, (4,))], [vi("y", F, ("n", "c", "h", "w"))])
    # Einsum: einsum with ONNX's equation language (ellipsis, diagonals, implicit output)
    case("einsum_batch_matmul_12", 12, [helper.make_node("Einsum", ["a", "b"], ["y"], equation="bij,bjk->bik")],
         [vi("a", F, (2, 3, 4)), vi("b", F, (2, 4, 5))], [vi("y", F, (2, 3, 5))])
    case("einsum_diagonal_12", 12, [helper.make_node("Einsum", ["a"], ["y"], equation="...ii->...i")],
         [vi("a", F, (2, 3, 3))], [vi("y", F, (2, 3))])
    case("einsum_implicit_12", 12, [helper.make_node("Einsum", ["a", "b"], ["y"], equation="ij,jk")],
         [vi("a", F, (2, 3)), vi("b", F, (3, 4))], [vi("y", F, (2, 4))])
    case("einsum_bad_equation_12", 12, [helper.make_node("Einsum", ["a", "b"], ["y"], equation="ij,jk->iq")],
         [vi("a", F, (2, 3)), vi("b", F, (3, 4))], [vi("y", F, ("m", "n"))])
    case("batchnorm_15", 15, [helper.make_node("BatchNormalization", ["x", "g", "b", "m", "v"], ["y"], epsilon=1e-3)],
         [vi("x", F, (1, 3, 2, 2))], [vi("y", F, (1, 3, 2, 2))],
         [init("g", const_arr((3,))), init("b", const_arr((3,))), init("m", const_arr((3,), start=0.1)),
          init("v", const_arr((3,), start=1.0))])
    case("instancenorm_13", 13, [helper.make_node("InstanceNormalization", ["x", "g", "b"], ["y"])],
         [vi("x", F, (1, 3, 2, 2))], [vi("y", F, (1, 3, 2, 2))], [init("g", const_arr((3,))), init("b", const_arr((3,)))])
    case("layernorm_17", 17, [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1)],
         [vi("x", F, (2, 3, 4))], [vi("y", F, (2, 3, 4))], [init("g", const_arr((4,))), init("b", const_arr((4,)))])
    case("maxpool_13", 13, [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
         [vi("x", F, (1, 2, 4, 4))], [vi("y", F, (1, 2, 2, 2))])
    case("averagepool_pads_13", 13,
         [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)],
         [vi("x", F, (1, 2, 4, 4))], [vi("y", F, (1, 2, 4, 4))])
    case("globalaveragepool_13", 13, [helper.make_node("GlobalAveragePool", ["x"], ["y"])],
         [vi("x", F, (1, 2, 4, 4))], [vi("y", F, (1, 2, 1, 1))])
    # shape ops
    case("reshape_13", 13, [helper.make_node("Reshape", ["x", "s"], ["y"])], [vi("x", F, (2, 3, 4))],
         [vi("y", F, (6, 4))], [init("s", np.array([-1, 4], dtype=np.int64))])
    case("reshape_zero_13", 13, [helper.make_node("Reshape", ["x", "s"], ["y"])], [vi("x", F, (2, 3, 4))],
         [vi("y", F, (2, 12))], [init("s", np.array([0, -1], dtype=np.int64))])
    case("transpose_13", 13, [helper.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 1])], [vi("x", F, (2, 3, 4))],
         [vi("y", F, (4, 2, 3))])
    case("transpose_default_13", 13, [helper.make_node("Transpose", ["x"], ["y"])], [vi("x", F, (2, 3, 4))],
         [vi("y", F, (4, 3, 2))])
    case("flatten_13", 13, [helper.make_node("Flatten", ["x"], ["y"], axis=2)], [vi("x", F, (2, 3, 4))],
         [vi("y", F, (6, 4))])
    case("squeeze_11", 11, [helper.make_node("Squeeze", ["x"], ["y"], axes=[1])], [vi("x", F, (2, 1, 3))],
         [vi("y", F, (2, 3))])
    case("squeeze_13", 13, [helper.make_node("Squeeze", ["x", "a"], ["y"])], [vi("x", F, (2, 1, 3))],
         [vi("y", F, (2, 3))], [init("a", np.array([1], dtype=np.int64))])
    case("unsqueeze_11", 11, [helper.make_node("Unsqueeze", ["x"], ["y"], axes=[0, 3])], [vi("x", F, (2, 3))],
         [vi("y", F, (1, 2, 3, 1))])
    case("unsqueeze_13", 13, [helper.make_node("Unsqueeze", ["x", "a"], ["y"])], [vi("x", F, (2, 3))],
         [vi("y", F, (1, 2, 3, 1))], [init("a", np.array([0, -1], dtype=np.int64))])
    case("concat_13", 13, [helper.make_node("Concat", ["a", "b"], ["y"], axis=-1)],
         [vi("a", F, (2, 3)), vi("b", F, (2, 2))], [vi("y", F, (2, 5))])
    case("split_11", 11, [helper.make_node("Split", ["x"], ["y0", "y1"], axis=1, split=[1, 3])],
         [vi("x", F, (2, 4))], [vi("y0", F, (2, 1)), vi("y1", F, (2, 3))])
    case("split_13", 13, [helper.make_node("Split", ["x", "s"], ["y0", "y1"], axis=1)], [vi("x", F, (2, 4))],
         [vi("y0", F, (2, 1)), vi("y1", F, (2, 3))], [init("s", np.array([1, 3], dtype=np.int64))])
    case("split_even_18", 18, [helper.make_node("Split", ["x"], ["y0", "y1"], axis=1, num_outputs=2)],
         [vi("x", F, (2, 4))], [vi("y0", F, (2, 2)), vi("y1", F, (2, 2))])
    case("slice_9", 9, [helper.make_node("Slice", ["x"], ["y"], starts=[1], ends=[3], axes=[1])],
         [vi("x", F, (2, 4))], [vi("y", F, (2, 2))])
    case("slice_13", 13, [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])], [vi("x", F, (2, 6))],
         [vi("y", F, (2, 2))], [init("st", np.array([1], dtype=np.int64)), init("en", np.array([5], dtype=np.int64)),
                                init("ax", np.array([1], dtype=np.int64)), init("sp", np.array([2], dtype=np.int64))])
    case("slice_negative_13", 13, [helper.make_node("Slice", ["x", "st", "en"], ["y"])], [vi("x", F, (2, 6))],
         [vi("y", F, (1, 3))], [init("st", np.array([-1, -4], dtype=np.int64)),
                                init("en", np.array([1000, -1], dtype=np.int64))])
    # an unknown dim sliced whole (start 0, end INT64_MAX) maps to masks; any other bound on it stays opaque
    case("slice_whole_dynamic_13", 13, [helper.make_node("Slice", ["x", "st", "en", "ax"], ["y"])],
         [vi("x", F, ("n", 6))], [vi("y", F, ("n", 2))],
         [init("st", np.array([0, 1], dtype=np.int64)),
          init("en", np.array([np.iinfo(np.int64).max, 3], dtype=np.int64)),
          init("ax", np.array([0, 1], dtype=np.int64))])
    case("slice_part_dynamic_13", 13, [helper.make_node("Slice", ["x", "st", "en", "ax"], ["y"])],
         [vi("x", F, ("n", 6))], [vi("y", F, (None, 6))],
         [init("st", np.array([0], dtype=np.int64)), init("en", np.array([5], dtype=np.int64)),
          init("ax", np.array([0], dtype=np.int64))])
    case("gather_13", 13, [helper.make_node("Gather", ["x", "i"], ["y"], axis=1)], [vi("x", F, (2, 4))],
         [vi("y", F, (2, 3))], [init("i", np.array([0, 3, 1], dtype=np.int64))])
    case("gather_negative_13", 13, [helper.make_node("Gather", ["x", "i"], ["y"])], [vi("x", F, (4, 2))],
         [vi("y", F, (2, 2))], [init("i", np.array([-1, 0], dtype=np.int64))])
    case("gatherelements_13", 13, [helper.make_node("GatherElements", ["x", "i"], ["y"], axis=-1)],
         [vi("x", F, (2, 4))], [vi("y", F, (2, 3))], [init("i", np.array([[0, 3, -1], [-4, 2, 1]], dtype=np.int64))])
    # index dims smaller than x's off the axis: allowed by ONNX, not by MIL: stays opaque
    case("gatherelements_smaller_13", 13, [helper.make_node("GatherElements", ["x", "i"], ["y"], axis=0)],
         [vi("x", F, (3, 4))], [vi("y", F, (2, 2))], [init("i", np.array([[0, 2], [1, 0]], dtype=np.int64))])
    case("pad_2", 2, [helper.make_node("Pad", ["x"], ["y"], pads=[0, 1, 0, 2], value=1.5)], [vi("x", F, (2, 3))],
         [vi("y", F, (2, 6))])
    case("pad_13", 13, [helper.make_node("Pad", ["x", "p", "v"], ["y"], mode="constant")], [vi("x", F, (2, 3))],
         [vi("y", F, (2, 6))], [init("p", np.array([0, 1, 0, 2], dtype=np.int64)), init("v", np.float32(1.5))])
    case("pad_reflect_13", 13, [helper.make_node("Pad", ["x", "p"], ["y"], mode="reflect")], [vi("x", F, (2, 4))],
         [vi("y", F, (2, 6))], [init("p", np.array([0, 1, 0, 1], dtype=np.int64))])
    case("tile_13", 13, [helper.make_node("Tile", ["x", "r"], ["y"])], [vi("x", F, (2, 3))], [vi("y", F, (4, 3))],
         [init("r", np.array([2, 1], dtype=np.int64))])
    case("expand_13", 13, [helper.make_node("Expand", ["x", "s"], ["y"])], [vi("x", F, (3, 1))], [vi("y", F, (2, 3, 4))],
         [init("s", np.array([2, 1, 4], dtype=np.int64))])
    # ArgMax/ArgMin: reduce_argmax/argmin with int64 indices; select_last_index 1 stays opaque
    case("argmax_1", 1, [helper.make_node("ArgMax", ["x"], ["y"], axis=1)], [vi("x", F, (2, 3, 4))],
         [vi("y", I64, (2, 1, 4))])
    case("argmax_13", 13, [helper.make_node("ArgMax", ["x"], ["y"], axis=-1, keepdims=0)], [vi("x", F, (2, 3, 4))],
         [vi("y", I64, (2, 3))])
    case("argmin_11", 11, [helper.make_node("ArgMin", ["x"], ["y"])], [vi("x", I64, (3, 2))], [vi("y", I64, (1, 2))])
    case("argmax_last_index_13", 13, [helper.make_node("ArgMax", ["x"], ["y"], axis=0, select_last_index=1)],
         [vi("x", F, (3, 2))], [vi("y", I64, (1, 2))])
    # CumSum with a constant axis; a run-time axis stays opaque
    case("cumsum_14", 14, [helper.make_node("CumSum", ["x", "a"], ["y"], exclusive=1, reverse=1)],
         [vi("x", F, (2, 3))], [vi("y", F, (2, 3))], [init("a", np.array(-1, dtype=np.int64))])
    case("cumsum_11", 11, [helper.make_node("CumSum", ["x", "a"], ["y"])],
         [vi("x", I64, (2, 3))], [vi("y", I64, (2, 3))], [init("a", np.array([0], dtype=np.int32))])
    case("cumsum_dynamic_axis_14", 14, [helper.make_node("CumSum", ["x", "a"], ["y"])],
         [vi("x", F, (2, 3)), vi("a", I64, ())], [vi("y", F, (2, 3))])
    # reductions: axes attribute (<13, <18 for most) then input
    case("reducemean_13", 13, [helper.make_node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=1)],
         [vi("x", F, (2, 3, 4))], [vi("y", F, (2, 1, 4))])
    case("reducemean_18", 18, [helper.make_node("ReduceMean", ["x", "a"], ["y"], keepdims=0)],
         [vi("x", F, (2, 3, 4))], [vi("y", F, (2, 4))], [init("a", np.array([1], dtype=np.int64))])
    case("reducesum_11", 11, [helper.make_node("ReduceSum", ["x"], ["y"], axes=[-1])], [vi("x", F, (2, 3, 4))],
         [vi("y", F, (2, 3, 1))])
    case("reducesum_13", 13, [helper.make_node("ReduceSum", ["x", "a"], ["y"], keepdims=0)], [vi("x", F, (2, 3, 4))],
         [vi("y", F, (3,))], [init("a", np.array([0, 2], dtype=np.int64))])
    case("reducesum_all_13", 13, [helper.make_node("ReduceSum", ["x"], ["y"], keepdims=0)], [vi("x", F, (2, 3))],
         [vi("y", F, ())])
    case("reducemax_13", 13, [helper.make_node("ReduceMax", ["x"], ["y"], axes=[0], keepdims=0)],
         [vi("x", F, (2, 3))], [vi("y", F, (3,))])
    case("reducemin_18", 18, [helper.make_node("ReduceMin", ["x", "a"], ["y"])], [vi("x", F, (2, 3))],
         [vi("y", F, (2, 1))], [init("a", np.array([1], dtype=np.int64))])
    case("reduceprod_13", 13, [helper.make_node("ReduceProd", ["x"], ["y"], axes=[1])], [vi("x", F, (2, 3))],
         [vi("y", F, (2, 1))])
    # ReduceL1/L2/LogSum/LogSumExp/SumSquare: MIL's reduce_l1_norm .. reduce_sum_square, same axes forms
    case("reducel1_13", 13, [helper.make_node("ReduceL1", ["x"], ["y"], axes=[-1], keepdims=0)],
         [vi("x", F, (2, 3))], [vi("y", F, (2,))])
    case("reducel2_18", 18, [helper.make_node("ReduceL2", ["x", "a"], ["y"])], [vi("x", F, (2, 3, 4))],
         [vi("y", F, (2, 1, 1))], [init("a", np.array([1, 2], dtype=np.int64))])
    case("reducelogsum_11", 11, [helper.make_node("ReduceLogSum", ["x"], ["y"], keepdims=0)], [vi("x", F, (2, 3))],
         [vi("y", F, ())])
    case("reducelogsumexp_18", 18, [helper.make_node("ReduceLogSumExp", ["x", "a"], ["y"], keepdims=0)],
         [vi("x", F, (2, 3))], [vi("y", F, (3,))], [init("a", np.array([0], dtype=np.int64))])
    case("reducesumsquare_13", 13, [helper.make_node("ReduceSumSquare", ["x"], ["y"], axes=[0, 1])],
         [vi("x", F, (2, 3, 4))], [vi("y", F, (1, 1, 4))])
    case("reducesumsquare_noop_18", 18,
         [helper.make_node("ReduceSumSquare", ["x"], ["y"], noop_with_empty_axes=1)], [vi("x", F, (2, 3))],
         [vi("y", F, (2, 3))])
    # constants and shape producers
    case("constant_13", 13, [helper.make_node("Constant", [], ["c"], value=init("cv", const_arr((3,)))),
                             helper.make_node("Add", ["x", "c"], ["y"])], [vi("x", F, (2, 3))], [vi("y", F, (2, 3))])
    case("shape_13", 13, [helper.make_node("Shape", ["x"], ["y"])], [vi("x", F, (2, 3))], [vi("y", I64, (2,))])
    case("constantofshape_13", 13,
         [helper.make_node("ConstantOfShape", ["s"], ["c"], value=init("v", np.array([2.5], dtype=np.float32))),
          helper.make_node("Add", ["x", "c"], ["y"])],
         [vi("x", F, (2, 3))], [vi("y", F, (2, 3))], [init("s", np.array([2, 3], dtype=np.int64))])
    case("range_13", 13, [helper.make_node("Range", ["a", "b", "d"], ["y"])], [], [vi("y", F, (4,))],
         [init("a", np.float32(0)), init("b", np.float32(2)), init("d", np.float32(0.5))])
    # structural and index ops: canonical where MIL has the exact op, opaque on purpose otherwise
    I32 = TensorProto.INT32
    case("range_int_dynamic_13", 13, [helper.make_node("Range", ["a", "b", "d"], ["y"])],
         [vi("b", I64, ())], [vi("y", I64, (None,))], [init("a", np.int64(10)), init("d", np.int64(-3))])
    case("constantofshape_int_9", 9, [helper.make_node("ConstantOfShape", ["s"], ["y"],
                                                         value=init("v", np.array([7], dtype=np.int64)))],
         [], [vi("y", I64, (3, 0, 2))], [init("s", np.array([3, 0, 2], dtype=np.int64))])
    case("constantofshape_dynamic_13", 13, [helper.make_node("ConstantOfShape", ["s"], ["y"])],
         [vi("s", I64, (2,))], [vi("y", F, (None, None))])
    case("scatter_9", 9, [helper.make_node("Scatter", ["x", "i", "u"], ["y"], axis=1)],
         [vi("x", F, (2, 3)), vi("u", F, (2, 2))], [vi("y", F, (2, 3))],
         [init("i", np.array([[2, 0], [1, 1]], dtype=np.int64))])
    case("scatterelements_13", 13, [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=-1)],
         [vi("x", F, (2, 3)), vi("i", I32, (2, 2)), vi("u", F, (2, 2))], [vi("y", F, (2, 3))])
    case("scatterelements_add_16", 16, [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], reduction="add")],
         [vi("x", F, (3, 2)), vi("u", F, (2, 2))], [vi("y", F, (3, 2))],
         [init("i", np.array([[1, 0], [1, 2]], dtype=np.int64))])
    case("scatterelements_max_18", 18, [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], reduction="max")],
         [vi("x", I64, (3,)), vi("u", I64, (2,))], [vi("y", I64, (3,))], [init("i", np.array([0, 0], dtype=np.int64))])
    # index dims smaller than data's off the axis: allowed by ONNX, not by MIL: stays opaque
    case("scatterelements_smaller_13", 13, [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=0)],
         [vi("x", F, (3, 4)), vi("u", F, (1, 2))], [vi("y", F, (3, 4))], [init("i", np.array([[2, 0]], dtype=np.int64))])
    case("scatternd_13", 13, [helper.make_node("ScatterND", ["x", "i", "u"], ["y"])],
         [vi("x", F, (4, 3)), vi("u", F, (2, 3))], [vi("y", F, (4, 3))], [init("i", np.array([[3], [-4]], dtype=np.int64))])
    case("scatternd_mul_16", 16, [helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction="mul")],
         [vi("x", F, (2, 3)), vi("u", F, (2,))], [vi("y", F, (2, 3))],
         [init("i", np.array([[0, 1], [1, 2]], dtype=np.int64))])
    case("gathernd_11", 11, [helper.make_node("GatherND", ["x", "i"], ["y"])], [vi("x", F, (2, 3, 4))],
         [vi("y", F, (2, 4))], [init("i", np.array([[1, 2], [0, -1]], dtype=np.int64))])
    case("gathernd_batch_13", 13, [helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=1)],
         [vi("x", I32, (2, 3, 4)), vi("i", I64, (2, 1))], [vi("y", I32, (2, 4))])
    case("reversesequence_10", 10, [helper.make_node("ReverseSequence", ["x", "l"], ["y"], time_axis=1, batch_axis=0)],
         [vi("x", F, (3, 4, 2)), vi("l", I64, (3,))], [vi("y", F, (3, 4, 2))])
    case("depthtospace_1", 1, [helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2)], [vi("x", F, (1, 8, 2, 3))],
         [vi("y", F, (1, 2, 4, 6))])
    case("depthtospace_dcr_13", 13, [helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=3, mode="DCR")],
         [vi("x", F, (2, 9, 1, 2))], [vi("y", F, (2, 1, 3, 6))])
    case("depthtospace_crd_13", 13, [helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, mode="CRD")],
         [vi("x", F, (1, 8, 2, 3))], [vi("y", F, (1, 2, 4, 6))])
    case("spacetodepth_13", 13, [helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2)], [vi("x", F, (1, 3, 4, 6))],
         [vi("y", F, (1, 12, 2, 3))])
    case("topk_1", 1, [helper.make_node("TopK", ["x"], ["v", "i"], k=2, axis=0)], [vi("x", F, (3, 4))],
         [vi("v", F, (2, 4)), vi("i", I64, (2, 4))])
    case("topk_smallest_11", 11, [helper.make_node("TopK", ["x", "k"], ["v", "i"], largest=0, sorted=0)],
         [vi("x", I32, (3, 4))], [vi("v", I32, (3, 3)), vi("i", I64, (3, 3))], [init("k", np.array([3], dtype=np.int64))])
    # OneHot: constant indices (ONNX's float and negative ones resolved at import), depth and fp32 values;
    # run-time indices and non-fp32 values stay opaque
    case("onehot_11", 11, [helper.make_node("OneHot", ["i", "d", "v"], ["y"], axis=0)], [], [vi("y", F, (4, 3))],
         [init("i", np.array([0.0, -1.0, 2.0], dtype=np.float32)), init("d", np.array(4.0, dtype=np.float32)),
          init("v", np.array([-1.0, 2.0], dtype=np.float32))])
    case("onehot_dynamic_11", 11, [helper.make_node("OneHot", ["i", "d", "v"], ["y"])], [vi("i", I64, (3,))],
         [vi("y", F, (3, 4))], [init("d", np.array([4], dtype=np.int64)), init("v", np.array([0.0, 1.0], dtype=np.float32))])
    case("onehot_int_values_11", 11, [helper.make_node("OneHot", ["i", "d", "v"], ["y"])], [], [vi("y", I64, (2, 4))],
         [init("i", np.array([1, 3], dtype=np.int64)), init("d", np.array(4, dtype=np.int64)),
          init("v", np.array([0, 5], dtype=np.int64))])
    # K a graph input: a run-time parameter: stays opaque
    case("topk_dynamic_k_11", 11, [helper.make_node("TopK", ["x", "k"], ["v", "i"])],
         [vi("x", F, (3, 4)), vi("k", I64, (1,))], [vi("v", F, (3, None)), vi("i", I64, (3, None))])
    case("dropout_13", 13, [helper.make_node("Dropout", ["x"], ["y"])], [vi("x", F, (2, 3))], [vi("y", F, (2, 3))])
    case("dropout_training_false_13", 13, [helper.make_node("Dropout", ["x", "r", "t"], ["y"])], [vi("x", F, (2, 3))],
         [vi("y", F, (2, 3))], [init("r", np.float32(0.5)), init("t", np.array(False))])
    # quantization
    case("quantizelinear_13", 13, [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])], [vi("x", F, (2, 3))],
         [vi("y", TensorProto.UINT8, (2, 3))], [init("s", np.float32(0.1)), init("z", np.uint8(128))])
    case("dequantizelinear_13", 13, [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"])],
         [vi("x", TensorProto.INT8, (2, 3))], [vi("y", F, (2, 3))], [init("s", np.float32(0.1)), init("z", np.int8(-3))])
    # control flow: If and Loop keep their bodies as nested blocks
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [], [vi("t", F, (2, 3))])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", F, (2, 3))])
    case("if_13", 13, [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
         [vi("c", B, ()), vi("x", F, (2, 3))], [vi("y", F, (2, 3))])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Add", ["acc_in", "x"], ["acc_out"])],
        "body", [vi("i", I64, ()), vi("cond_in", B, ()), vi("acc_in", F, (2, 3))],
        [vi("cond_out", B, ()), vi("acc_out", F, (2, 3))])
    case("loop_13", 13, [helper.make_node("Loop", ["n", "", "a0"], ["y"], body=body)],
         [vi("x", F, (2, 3)), vi("a0", F, (2, 3))], [vi("y", F, (2, 3))], [init("n", np.array(3, dtype=np.int64))])
    # opaque ops whose output types the importer infers, so the ops after them map
    U8 = TensorProto.UINT8
    case("infer_pad_runtime_13", 13, [helper.make_node("Pad", ["x", "p"], ["t"]), helper.make_node("Relu", ["t"], ["y"])],
         [vi("x", F, (1, 2, 4, 4)), vi("p", I64, (8,))], [vi("y", F, ("n", "c", "h", "w"))])
    case("infer_resize_runtime_13", 13,
         [helper.make_node("Resize", ["x", "", "", "sz"], ["t"], mode="nearest"), helper.make_node("Sigmoid", ["t"], ["y"])],
         [vi("x", F, (1, 1, 2, 2)), vi("sz", I64, (4,))], [vi("y", F, ("n", "c", "h", "w"))])
    case("infer_dql_convinteger_13", 13,
         [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
          helper.make_node("ConvInteger", ["xq", "w", "xz"], ["acc"]),
          helper.make_node("Cast", ["acc"], ["accf"], to=F),
          helper.make_node("Mul", ["accf", "xs"], ["y"])],
         [vi("x", F, (1, 2, 4, 4))], [vi("y", F, (1, 3, 4, 4))],
         [init("w", (np.arange(6) % 5).astype(np.uint8).reshape(3, 2, 1, 1))])
    case("infer_matmulinteger_13", 13,
         [helper.make_node("MatMulInteger", ["a", "b"], ["acc"]), helper.make_node("Cast", ["acc"], ["f"], to=F),
          helper.make_node("Relu", ["f"], ["y"])],
         [vi("a", U8, (2, 3))], [vi("y", F, (2, 4))], [init("b", (np.arange(12) % 7).astype(np.uint8).reshape(3, 4))])
    case("infer_lstm_14", 14,
         [helper.make_node("LSTM", ["x", "W", "R"], ["Y", "Yh", "Yc"], hidden_size=4),
          helper.make_node("Squeeze", ["Y", "ax"], ["s"]), helper.make_node("Tanh", ["s"], ["y"]),
          helper.make_node("Relu", ["Yc"], ["c"])],
         [vi("x", F, (5, 1, 3))], [vi("y", F, (5, 1, 4)), vi("c", F, (1, 1, 4))],
         [init("W", const_arr((1, 16, 3), start=-1.0) * 0.1), init("R", const_arr((1, 16, 4), start=-1.5) * 0.1),
          init("ax", np.array([1], dtype=np.int64))])
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["a"])], "then", [], [vi("a", F, (2, 3))])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["b"])], "else", [], [vi("b", F, (2, 3))])
    case("infer_if_13", 13,
         [helper.make_node("If", ["c"], ["t"], then_branch=then_g, else_branch=else_g),
          helper.make_node("Sigmoid", ["t"], ["y"])],
         [vi("c", B, ()), vi("x", F, (2, 3))], [vi("y", F, (2, 3))])
    # squeezing a dim known only at run time: declined by the canonical squeeze, kept opaque, typed
    case("squeeze_symbolic_13", 13, [helper.make_node("Squeeze", ["x", "ax"], ["t"]), helper.make_node("Relu", ["t"], ["y"])],
         [vi("x", F, ("n", 3))], [vi("y", F, (3,))], [init("ax", np.array([0], dtype=np.int64))])
    # another domain: stays opaque, domain-qualified
    case("custom_domain_13", 13, [helper.make_node("FusedThing", ["x"], ["y"], domain="com.example", k=3)],
         [vi("x", F, (2, 3))], [vi("y", F, (2, 3))], extra_opsets=[helper.make_opsetid("com.example", 1)])


def write_models():
    os.makedirs(OUT, exist_ok=True)
    for name, opset, nodes, inputs, outputs, inits, extra in CASES:
        g = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)] + extra, producer_name="mkfixtures")
        m.ir_version = 8
        if not extra and opset <= onnx.defs.onnx_opset_version():  # newer opsets: checked by ONNX Runtime
            onnx.checker.check_model(m, full_check=True)
        with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
            f.write(m.SerializeToString())
    with open(os.path.join(OUT, "LIST"), "w") as f:  # what the C test reads
        f.write("".join(sorted(c[0] + "\n" for c in CASES)))
    print(f"wrote {len(CASES)} models to {OUT}")


def write_mil():
    tool = os.path.join(HERE, "..", "build", "mgopt")
    for f in sorted(os.listdir(OUT)):
        if f.endswith(".onnx"):
            src = os.path.join(OUT, f)
            subprocess.run([tool, src, "-o", src[:-5] + ".mil", "-p", "none"], check=True)
    print("wrote the .mil expectations: review them")


if __name__ == "__main__":
    if "--mil" in sys.argv:
        write_mil()
    else:
        build()
        write_models()
