#!/usr/bin/python3
"""tools/mkfixtures_parity.py — small ONNX models of the patterns ONNX Runtime's
basic level rewrites (issue 27, deliverable 5), in tests/fixtures/onnx/parity/.

Dev-time only: /usr/bin/python3 tools/mkfixtures_parity.py [outdir], then commit.
Each model is deterministic and passes onnx.checker. Compare with
    build/mgopt M.onnx -o out.onnx -p default
    node ortopt.mjs M.onnx ort.onnx --level basic
    node equiv.mjs M.onnx out.onnx
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "tests", "fixtures", "onnx", "parity")
F, I64, U8 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.UINT8


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def weights(shape, seed):
    n = int(np.prod(shape))
    return ((np.arange(n, dtype=np.float64) * 0.6180339 + seed) % 1.0 - 0.5).astype(np.float32).reshape(shape)


def save(name, nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="mkfixtures_parity")
    m.ir_version = 7
    onnx.checker.check_model(m)
    path = os.path.join(OUT, name + ".onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    print("wrote", path)


def cse_multi_output():
    """onnx.quantize's dynamic ConvInteger: Mul(x_scale, w_scale) twice, x_scale
    being output 1 of DynamicQuantizeLinear; plus a Split whose outputs 1 feed
    two identical Relus. Random ops with equal inputs must stay two."""
    w = (np.arange(8 * 3 * 3 * 3) % 7 - 3).astype(np.int8).reshape(8, 3, 3, 3)
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        helper.make_node("ConvInteger", ["xq", "w", "xz"], ["ci"], pads=[1, 1, 1, 1]),
        helper.make_node("Cast", ["ci"], ["cf"], to=F),
        helper.make_node("Mul", ["xs", "ws"], ["s1"]),
        helper.make_node("Mul", ["cf", "s1"], ["y1"]),
        helper.make_node("Mul", ["xs", "ws"], ["s2"]),
        helper.make_node("Mul", ["cf", "s2"], ["y2"]),
        helper.make_node("Add", ["y1", "y2"], ["y"]),
        helper.make_node("Split", ["y"], ["p0", "p1"], axis=1),
        helper.make_node("Relu", ["p1"], ["r1"]),
        helper.make_node("Relu", ["p1"], ["r2"]),
        helper.make_node("Sub", ["r1", "r2"], ["d"]),
        helper.make_node("RandomUniformLike", ["p0"], ["u1"], seed=1.0),
        helper.make_node("RandomUniformLike", ["p0"], ["u2"], seed=1.0),
        helper.make_node("Sub", ["u1", "u2"], ["e"]),
        helper.make_node("Relu", ["p0"], ["o1"]),
        helper.make_node("Relu", ["p0"], ["o2"]),
    ]
    save("cse_multi_output", nodes, [vi("x", F, [1, 3, 8, 8])],
         [vi("d", F, [1, 4, 8, 8]), vi("e", F, [1, 4, 8, 8]), vi("o1", F, [1, 4, 8, 8]), vi("o2", F, [1, 4, 8, 8])],
         [init("w", w), init("ws", np.array(0.02, np.float32))])


def reshape_one_symbolic():
    """CNN+BiLSTM head: NCHW with a symbolic width; Transpose to (N, W, C, H)
    then Reshape to (N, W, C*H) with the shape computed from Shape/Gather."""
    nodes = [
        helper.make_node("Conv", ["x", "cw"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[0, 3, 1, 2]),
        helper.make_node("Shape", ["t"], ["s"]),
        helper.make_node("Gather", ["s", "i0"], ["g0"], axis=0),
        helper.make_node("Gather", ["s", "i1"], ["g1"], axis=0),
        helper.make_node("Gather", ["s", "i2"], ["g2"], axis=0),
        helper.make_node("Gather", ["s", "i3"], ["g3"], axis=0),
        helper.make_node("Mul", ["g2", "g3"], ["ch"]),
        helper.make_node("Unsqueeze", ["g0", "ax0"], ["u0"]),
        helper.make_node("Unsqueeze", ["g1", "ax0"], ["u1"]),
        helper.make_node("Unsqueeze", ["ch", "ax0"], ["u2"]),
        helper.make_node("Concat", ["u0", "u1", "u2"], ["shp"], axis=0),
        helper.make_node("Reshape", ["t", "shp"], ["y"]),
    ]
    inits = [init("cw", weights((4, 3, 3, 3), 0.1)), init("i0", np.array(0, np.int64)),
             init("i1", np.array(1, np.int64)), init("i2", np.array(2, np.int64)),
             init("i3", np.array(3, np.int64)), init("ax0", np.array([0], np.int64))]
    save("reshape_one_symbolic", nodes, [vi("x", F, [1, 3, 8, "W"])], [vi("y", F, [1, "W", 32])], inits)


def reshape_two_symbolic():
    """Negative: batch and width both symbolic; the reshape keeps its computed shape
    unless one of them can be a 0 (copy) and the other -1."""
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[0, 3, 1, 2]),
        helper.make_node("Shape", ["t"], ["s"]),
        helper.make_node("Gather", ["s", "i0"], ["g0"], axis=0),
        helper.make_node("Gather", ["s", "i1"], ["g1"], axis=0),
        helper.make_node("Gather", ["s", "i2"], ["g2"], axis=0),
        helper.make_node("Gather", ["s", "i3"], ["g3"], axis=0),
        helper.make_node("Mul", ["g2", "g3"], ["ch"]),
        helper.make_node("Unsqueeze", ["g0", "ax0"], ["u0"]),
        helper.make_node("Unsqueeze", ["g1", "ax0"], ["u1"]),
        helper.make_node("Unsqueeze", ["ch", "ax0"], ["u2"]),
        helper.make_node("Concat", ["u1", "u0", "u2"], ["shp"], axis=0),
        helper.make_node("Reshape", ["t", "shp"], ["y"]),
    ]
    inits = [init("i0", np.array(0, np.int64)), init("i1", np.array(1, np.int64)),
             init("i2", np.array(2, np.int64)), init("i3", np.array(3, np.int64)),
             init("ax0", np.array([0], np.int64))]
    save("reshape_two_symbolic", nodes, [vi("x", F, ["N", 3, 8, "W"])], [vi("y", F, ["W", "N", 24])], inits)


def pad_pool():
    """Keras CNN: zero Pad (spatial only) before MaxPool on a Relu output (foldable),
    before MaxPool on a raw input (not: MaxPool pads with -inf), before
    AveragePool count_include_pad=1 (foldable) and =0 (not)."""
    pads = init("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Pad", ["r", "pads"], ["pr"]),
        helper.make_node("MaxPool", ["pr"], ["m1"], kernel_shape=[3, 3], strides=[2, 2]),
        helper.make_node("Pad", ["x", "pads"], ["px"]),
        helper.make_node("MaxPool", ["px"], ["m2"], kernel_shape=[3, 3], strides=[2, 2]),
        helper.make_node("AveragePool", ["px"], ["a1"], kernel_shape=[3, 3], count_include_pad=1),
        helper.make_node("AveragePool", ["px"], ["a2"], kernel_shape=[3, 3]),
        helper.make_node("Pad", ["x", "pads", "pv"], ["pv1"]),
        helper.make_node("AveragePool", ["pv1"], ["a3"], kernel_shape=[3, 3], count_include_pad=1),
        helper.make_node("Clip", ["x", "lo", "hi"], ["cl"]),
        helper.make_node("Pad", ["cl", "pads"], ["pc"]),
        helper.make_node("MaxPool", ["pc"], ["m3"], kernel_shape=[3, 3], pads=[1, 0, 0, 1]),
        helper.make_node("Pad", ["x", "pads", "ninf"], ["pn"]),
        helper.make_node("MaxPool", ["pn"], ["m4"], kernel_shape=[3, 3]),
    ]
    o = [1, 4, 4, 4]
    save("pad_pool", nodes, [vi("x", F, [1, 4, 8, 8])],
         [vi("m1", F, o), vi("m2", F, o), vi("a1", F, [1, 4, 8, 8]), vi("a2", F, [1, 4, 8, 8]),
          vi("a3", F, [1, 4, 8, 8]), vi("m3", F, [1, 4, 9, 9]), vi("m4", F, [1, 4, 8, 8])],
         [pads, init("pv", np.array(0.5, np.float32)), init("lo", np.array(0.0, np.float32)),
          init("hi", np.array(6.0, np.float32)), init("ninf", np.array(-np.inf, np.float32))])


def pad_pool_limit():
    """Negative: the pad plus the pool's own pads would reach the kernel size,
    which ONNX Runtime refuses (its basic level makes such a model anyway)."""
    pads = init("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Pad", ["r", "pads"], ["pr"]),
        helper.make_node("MaxPool", ["pr"], ["m"], kernel_shape=[2, 2], pads=[1, 0, 0, 1]),
    ]
    save("pad_pool_limit", nodes, [vi("x", F, [1, 4, 8, 8])], [vi("m", F, [1, 4, 10, 10])], [pads])


def global_pools():
    nodes = [
        helper.make_node("Conv", ["x", "cw"], ["c"]),
        helper.make_node("GlobalAveragePool", ["c"], ["ga"]),
        helper.make_node("GlobalMaxPool", ["c"], ["gm"]),
        helper.make_node("ReduceMean", ["c"], ["rm"], axes=[2], keepdims=1),
        helper.make_node("ReduceMean", ["c"], ["rn"], axes=[2, 3], keepdims=0),
    ]
    save("global_pools", nodes, [vi("x", F, [1, 3, 6, 6])],
         [vi("ga", F, [1, 4, 1, 1]), vi("gm", F, [1, 4, 1, 1]), vi("rm", F, [1, 4, 1, 6]), vi("rn", F, [1, 4])],
         [init("cw", weights((4, 3, 3, 3), 0.3))])


def qdq_gemm():
    """Static QDQ classifier head: MatMul with a DequantizeLinear weight (per
    output channel, axis 1), then Add of a constant bias (Gemm); the same on a
    rank-3 input (stays MatMul+Add); a dequantized weight shared by two 2-d
    MatMuls (stays: transposing it for one would store it twice)."""
    wq = (np.arange(16 * 10) % 11 - 5).astype(np.int8).reshape(16, 10)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["wq", "wsv", "wz"], ["wd"], axis=1),
        helper.make_node("MatMul", ["xd", "wd"], ["mm"]),
        helper.make_node("Add", ["mm", "b"], ["y"]),
        helper.make_node("DequantizeLinear", ["wq3", "ws"], ["wd3"]),
        helper.make_node("MatMul", ["x3", "wd3"], ["mm3"]),
        helper.make_node("Add", ["mm3", "b"], ["y3"]),
        helper.make_node("DequantizeLinear", ["wqs", "ws"], ["wds"]),
        helper.make_node("MatMul", ["x", "wds"], ["ms1"]),
        helper.make_node("Add", ["ms1", "b"], ["s1"]),
        helper.make_node("MatMul", ["xd", "wds"], ["ms2"]),
        helper.make_node("Add", ["b", "ms2"], ["s2"]),
    ]
    inits = [init("wq", wq), init("wsv", (np.arange(10, dtype=np.float32) + 1) * 0.01),
             init("wz", np.zeros(10, np.int8)), init("ws", np.array(0.05, np.float32)),
             init("wq3", wq[::-1].copy()), init("wqs", (wq * 3 // 4).astype(np.int8)),
             init("xs", np.array(0.01, np.float32)), init("xz", np.array(0, np.int8)), init("b", weights((10,), 0.7))]
    save("qdq_gemm", nodes, [vi("x", F, [2, 16]), vi("x3", F, [2, 3, 16])],
         [vi("y", F, [2, 10]), vi("y3", F, [2, 3, 10]), vi("s1", F, [2, 10]), vi("s2", F, [2, 10])], inits)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    cse_multi_output()
    reshape_one_symbolic()
    reshape_two_symbolic()
    pad_pool()
    pad_pool_limit()
    global_pools()
    qdq_gemm()
