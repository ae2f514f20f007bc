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

    # torch dynamo's as_strided (x [4, 6] viewed as size [2, 3, 4], stride [2, 1, 3],
    # offset 1): a Loop over constant shapes carrying a sequence, an If per
    # iteration, ConcatFromSequence, CastLike; all of it folds to the indices
    C = lambda name, arr: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(arr), name))
    then_g = helper.make_graph([helper.make_node("Identity", ["sdj"], ["shp_t"])], "then", [], [vi("shp_t", I64, None)])
    else_g = helper.make_graph(
        [helper.make_node("ConcatFromSequence", ["seq_in"], ["ones"], axis=0),
         helper.make_node("Cast", ["sdj"], ["sdjf"], to=F),
         helper.make_node("Concat", ["sdjf", "ones"], ["shpf"], axis=0),
         helper.make_node("Cast", ["shpf"], ["shp_e"], to=I64)], "else", [], [vi("shp_e", I64, None)])
    body = helper.make_graph(
        [C("one", np.array(1, np.int64)), C("zero", np.array(0, np.int64)), C("neg1", np.array([-1], np.int64)),
         helper.make_node("Sub", ["rank", "i"], ["t0"]), helper.make_node("Sub", ["t0", "one"], ["j"]),
         helper.make_node("Reshape", ["j", "neg1"], ["jt"]),
         helper.make_node("Gather", ["size", "jt"], ["sdj"], axis=0),
         helper.make_node("Slice", ["size", "jt", "rankt"], ["saj"]),
         helper.make_node("Gather", ["stride", "jt"], ["stj"], axis=0),
         helper.make_node("Expand", ["ind_in", "saj"], ["ind_e"]),
         helper.make_node("Squeeze", ["sdj"], ["sdj_s"]),
         helper.make_node("Range", ["zero", "sdj_s", "one"], ["rg"]),
         helper.make_node("Mul", ["rg", "stj"], ["addv"]),
         helper.make_node("Equal", ["i", "zero"], ["first"]),
         helper.make_node("If", ["first"], ["shp"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Reshape", ["addv", "shp"], ["addr"]),
         helper.make_node("Add", ["ind_e", "addr"], ["ind_out"]),
         C("onef", np.array([1.0], np.float32)),
         helper.make_node("SequenceInsert", ["seq_in", "onef"], ["seq_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [vi("i", I64, []), vi("cond_in", TensorProto.BOOL, []), vi("ind_in", I64, None),
         helper.make_tensor_sequence_value_info("seq_in", F, None)],
        [vi("cond_out", TensorProto.BOOL, []), vi("ind_out", I64, None),
         helper.make_tensor_sequence_value_info("seq_out", F, None)])
    g = helper.make_graph(
        [C("rank", np.array(3, np.int64)), C("rankt", np.array([3], np.int64)), C("neg1o", np.array([-1], np.int64)),
         C("ind0", np.array(0, np.int64)), helper.make_node("SequenceEmpty", [], ["seq0"], dtype=F),
         helper.make_node("Loop", ["rank", "", "ind0", "seq0"], ["ind", "seqf"], body=body),
         C("offset", np.array(1, np.int64)), helper.make_node("CastLike", ["offset", "ind"], ["offl"]),
         helper.make_node("Add", ["ind", "offl"], ["indo"]), helper.make_node("Reshape", ["x", "neg1o"], ["xf"]),
         helper.make_node("Gather", ["xf", "indo"], ["y"], axis=0)],
        "as_strided", [vi("x", F, [4, 6])], [vi("y", F, [2, 3, 4])],
        [numpy_helper.from_array(np.array([2, 3, 4], np.int64), "size"),
         numpy_helper.from_array(np.array([2, 1, 3], np.int64), "stride")])
    x = rng.standard_normal((4, 6)).astype(np.float32)
    y = np.lib.stride_tricks.as_strided(x.reshape(-1)[1:], (2, 3, 4), (8, 4, 12)).copy()
    save(os.path.join(OUT, "pass", "test_as_strided_loop"), g, 17, [([("x", x)], [("y", y)])])

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

    # an initializer that is also a graph input (an overridable default): the
    # data set feeds only the input without one, as ONNX's test data does
    w = np.array([0.5, -2.0, 3.0], np.float32)
    g = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["y"])], "initializer_input",
                          [vi("x", F, [2, 3]), vi("w", F, [3])], [vi("y", F, [2, 3])],
                          [numpy_helper.from_array(w, "w")])
    x = np.array([[1, 2, 3], [-4, 5, -6]], np.float32)
    save(os.path.join(OUT, "pass", "test_initializer_input"), g, 13, [([("x", x)], [("y", x * w)])])


if __name__ == "__main__":
    main()
