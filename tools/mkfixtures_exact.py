#!/usr/bin/python3
"""tools/mkfixtures_exact.py — writes tests/fixtures/onnx/gelu_div_sqrt2.onnx.

Dev-time only (the tests need just a C compiler):
    /usr/bin/python3 tools/mkfixtures_exact.py [outdir]
and commit the output. Deterministic (no random data); passes onnx.checker.

The model is the shape of a dynamically quantized transformer's feed-forward
input: GELU decomposed as 0.5 * x * (1 + Erf(x / 1.4142135)), opset 17 (no
Gelu op to fuse into), then DynamicQuantizeLinear -> MatMulInteger with a
uint8 weight, dequantized by Cast and the product of the two scales; the
GELU's value g is an output too. A third output divides x by 4, a power of two. x / 1.4142135 and x * 0.70710677
differ by an ulp for some x, and the quantization turns that ulp into a
different integer: the default pipeline must keep that Div (tests/unit/
test_exact.c), while the Div by 4 becomes an exact Mul by 0.25.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "onnx")


def main():
    k, n = 16, 8
    w = ((np.arange(k * n).reshape(k, n) * 37) % 251).astype(np.uint8)
    inits = [
        numpy_helper.from_array(np.array(1.4142135, dtype=np.float32), "sqrt2"),
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
        numpy_helper.from_array(np.array(0.5, dtype=np.float32), "half"),
        numpy_helper.from_array(np.array(4.0, dtype=np.float32), "four"),
        numpy_helper.from_array(w, "w"),
        numpy_helper.from_array(np.array(131, dtype=np.uint8), "w_zp"),
        numpy_helper.from_array(np.array(0.0078125, dtype=np.float32), "w_scale"),
    ]
    nodes = [
        helper.make_node("Div", ["x", "sqrt2"], ["d"], name="gelu_div"),
        helper.make_node("Erf", ["d"], ["e"], name="gelu_erf"),
        helper.make_node("Add", ["e", "one"], ["a"], name="gelu_add"),
        helper.make_node("Mul", ["x", "a"], ["xa"], name="gelu_mul"),
        helper.make_node("Mul", ["xa", "half"], ["g"], name="gelu_half"),
        helper.make_node("DynamicQuantizeLinear", ["g"], ["q", "q_scale", "q_zp"], name="dql"),
        helper.make_node("MatMulInteger", ["q", "w", "q_zp", "w_zp"], ["mi"], name="mmi"),
        helper.make_node("Cast", ["mi"], ["mf"], name="cast", to=TensorProto.FLOAT),
        helper.make_node("Mul", ["q_scale", "w_scale"], ["s"], name="scale"),
        helper.make_node("Mul", ["mf", "s"], ["y"], name="dequant"),
        helper.make_node("Div", ["x", "four"], ["quarter"], name="div4"),
    ]
    graph = helper.make_graph(
        nodes,
        "gelu_div_sqrt2",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, k])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, n]),
            helper.make_tensor_value_info("g", TensorProto.FLOAT, [4, k]),
            helper.make_tensor_value_info("quarter", TensorProto.FLOAT, [4, k]),
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="mkfixtures_exact")
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = os.path.join(OUT, "gelu_div_sqrt2.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    print("wrote", path)


if __name__ == "__main__":
    main()
