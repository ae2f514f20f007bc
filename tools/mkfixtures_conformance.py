#!/usr/bin/python3
"""tools/mkfixtures_conformance.py — writes small ONNX conformance-style folders into tests/fixtures/conformance/.

Dev-time only (the tests need just a C compiler): run with Debian's python3-onnx,
    /usr/bin/python3 tools/mkfixtures_conformance.py [outdir]
and commit the result. Each folder holds model.onnx and test_data_set_N/input_K.pb,
output_K.pb (TensorProto files), the layout of ONNX's backend test data, with
outputs computed here in numpy. `pass/` must all pass under `mgopt test`; `fail/`
holds one folder whose stored output is wrong on purpose, so the comparison is
shown to fail; `skip/` holds a model with an op mgopt cannot evaluate.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "tests", "fixtures", "conformance")


def save(folder, graph, opset, sets):
    os.makedirs(folder, exist_ok=True)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="mkfixtures")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for n, (ins, outs) in enumerate(sets):
        d = os.path.join(folder, "test_data_set_%d" % n)
        os.makedirs(d, exist_ok=True)
        for k, (name, a) in enumerate(ins):
            with open(os.path.join(d, "input_%d.pb" % k), "wb") as f:
                f.write(numpy_helper.from_array(a, name).SerializeToString())
        for k, (name, a) in enumerate(outs):
            with open(os.path.join(d, "output_%d.pb" % k), "wb") as f:
                f.write(numpy_helper.from_array(a, name).SerializeToString())


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


def main():
    rng = np.random.default_rng(12)
    F, I64 = TensorProto.FLOAT, TensorProto.INT64

    # add + relu with broadcasting, two data sets
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "y"], ["s"]), helper.make_node("Relu", ["s"], ["z"])],
        "add_relu", [vi("x", F, [2, 3]), vi("y", F, [3])], [vi("z", F, [2, 3])])
    sets = []
    for _ in range(2):
        x = rng.standard_normal((2, 3)).astype(np.float32)
        y = rng.standard_normal(3).astype(np.float32)
        sets.append(([("x", x), ("y", y)], [("z", np.maximum(x + y, 0))]))
    save(os.path.join(OUT, "pass", "test_add_relu"), g, 13, sets)

    # matmul, then a reduction along an axis; two outputs
    g = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["m"]),
         helper.make_node("ReduceSum", ["m", "axes"], ["r"], keepdims=0)],
        "matmul_reduce", [vi("a", F, [2, 4]), vi("b", F, [4, 3])], [vi("m", F, [2, 3]), vi("r", F, [2])],
        [numpy_helper.from_array(np.array([1], np.int64), "axes")])
    a = rng.standard_normal((2, 4)).astype(np.float32)
    b = rng.standard_normal((4, 3)).astype(np.float32)
    m = a @ b
    save(os.path.join(OUT, "pass", "test_matmul_reduce"), g, 13, [([("a", a), ("b", b)], [("m", m), ("r", m.sum(1))])])

    # integers: exact comparison (transpose and cast)
    g = helper.make_graph(
        [helper.make_node("Transpose", ["i"], ["t"], perm=[1, 0]),
         helper.make_node("Cast", ["t"], ["c"], to=TensorProto.INT32)],
        "int_transpose", [vi("i", I64, [2, 3])], [vi("c", TensorProto.INT32, [3, 2])])
    i = np.arange(6, dtype=np.int64).reshape(2, 3) - 2
    save(os.path.join(OUT, "pass", "test_int_transpose"), g, 13, [([("i", i)], [("c", i.T.astype(np.int32))])])

    # a wrong stored output: the comparison must fail
    g = helper.make_graph([helper.make_node("Exp", ["x"], ["y"])], "exp_wrong", [vi("x", F, [3])], [vi("y", F, [3])])
    x = np.array([0, 1, 2], np.float32)
    y = np.exp(x)
    y[2] += 0.5
    save(os.path.join(OUT, "fail", "test_exp_wrong_output"), g, 13, [([("x", x)], [("y", y)])])

    # an op the evaluator does not cover: skipped, named
    g = helper.make_graph([helper.make_node("Det", ["x"], ["y"])], "det", [vi("x", F, [2, 2])], [vi("y", F, [])])
    x = np.array([[1, 2], [3, 4]], np.float32)
    save(os.path.join(OUT, "skip", "test_det"), g, 13, [([("x", x)], [("y", np.array(np.linalg.det(x), np.float32))])])


if __name__ == "__main__":
    main()
