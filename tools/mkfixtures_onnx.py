#!/usr/bin/python3
"""tools/mkfixtures_onnx.py — writes the small ONNX models of tests/fixtures/onnx/.

Dev-time only (the tests need just a C compiler): run with Debian's python3-onnx,
    /usr/bin/python3 tools/mkfixtures_onnx.py [outdir]
and commit the output. Every model is deterministic (no random data) and
passes onnx.checker where the checker applies.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import convert_model_to_external_data

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "onnx")
OPSET = [helper.make_opsetid("", 13)]


def save(model, name, check=True):
    if check:
        onnx.checker.check_model(model)
    path = os.path.join(OUT, name)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    print("wrote", path)


def tiny_graph(name):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    return helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], name, [x], [y])


def sparse(values, indices, dims):
    v = helper.make_tensor("sv", TensorProto.FLOAT, [len(values)], values)
    i = helper.make_tensor("si", TensorProto.INT64, [len(indices)], indices)
    return helper.make_sparse_tensor(v, i, dims)


def attributes():
    """One custom-domain node carrying an attribute of every type."""
    tp = helper.make_tensor_type_proto(TensorProto.FLOAT, [3, "n"])
    seq_tp = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.INT64, None))
    attrs = [
        helper.make_attribute("f", 1.5),
        helper.make_attribute("i", -7),
        helper.make_attribute("s", b"hello"),
        helper.make_attribute("t", helper.make_tensor("tv", TensorProto.INT32, [2], [4, -5])),
        helper.make_attribute("g", tiny_graph("gbody")),
        helper.make_attribute("sp", sparse([1.0, 2.0], [0, 3], [5])),
        helper.make_attribute("floats", [0.5, -0.25, 3.0]),
        helper.make_attribute("ints", [1, -2, 1 << 40]),
        helper.make_attribute("strings", [b"a", b"", b"ccc"]),
        helper.make_attribute("tensors", [helper.make_tensor("t0", TensorProto.FLOAT, [1], [9.0]),
                                          helper.make_tensor("t1", TensorProto.INT64, [], [42])]),
        helper.make_attribute("graphs", [tiny_graph("g0"), tiny_graph("g1")]),
        helper.make_attribute("sps", [sparse([3.0], [1], [2])]),
    ]
    a = onnx.AttributeProto()
    a.name, a.type = "tp", onnx.AttributeProto.TYPE_PROTO
    a.tp.CopyFrom(tp)
    attrs.append(a)
    a = onnx.AttributeProto()
    a.name, a.type = "tps", onnx.AttributeProto.TYPE_PROTOS
    a.type_protos.extend([tp, seq_tp])
    attrs.append(a)
    a = onnx.AttributeProto()
    a.name, a.type, a.i = "zero", onnx.AttributeProto.INT, 0  # explicit zero keeps its presence
    a.doc_string = "an explicit zero"
    attrs.append(a)
    node = helper.make_node("Everything", ["x"], ["y"], domain="test.mgopt", name="every")
    node.attribute.extend(attrs)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    g = helper.make_graph([node], "attributes", [x], [y])
    m = helper.make_model(g, opset_imports=OPSET + [helper.make_opsetid("test.mgopt", 1)])
    save(m, "attributes.onnx", check=False)  # the custom op has no schema


def control_flow():
    """If with two branches and a Loop with a body graph (nested subgraphs)."""
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t_out"])], "then",
                               [], [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e_out"])], "else",
                               [], [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, [2])])
    if_node = helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g, name="if0")
    # Loop body: (iter, cond, acc) -> (cond, acc + x); the body holds an If of its own
    it = helper.make_tensor_value_info("it", TensorProto.INT64, [])
    c_in = helper.make_tensor_value_info("c_in", TensorProto.BOOL, [])
    acc = helper.make_tensor_value_info("acc", TensorProto.FLOAT, [2])
    c_out = helper.make_tensor_value_info("c_out", TensorProto.BOOL, [])
    acc_out = helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2])
    inner_then = helper.make_graph([helper.make_node("Add", ["acc", "x"], ["it_o"])], "inner_then", [],
                                   [helper.make_tensor_value_info("it_o", TensorProto.FLOAT, [2])])
    inner_else = helper.make_graph([helper.make_node("Sub", ["acc", "x"], ["ie_o"])], "inner_else", [],
                                   [helper.make_tensor_value_info("ie_o", TensorProto.FLOAT, [2])])
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("If", ["c_in"], ["acc_out"], then_branch=inner_then, else_branch=inner_else)],
        "body", [it, c_in, acc], [c_out, acc_out])
    trip = numpy_helper.from_array(np.array(3, dtype=np.int64), "trip")
    loop = helper.make_node("Loop", ["trip", "cond", "y"], ["z"], body=body, name="loop0")
    g = helper.make_graph([if_node, loop], "control_flow", [cond, x], [z], initializer=[trip])
    save(helper.make_model(g, opset_imports=OPSET), "control_flow.onnx")


def tensors():
    """Initializers in raw_data and in every typed field, including fp16/bf16 in int32_data."""
    inits = [
        numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "raw_f32"),
        numpy_helper.from_array(np.array([1, -2, 3], dtype=np.int64), "raw_i64"),
        numpy_helper.from_array(np.array([], dtype=np.float32).reshape(0, 4), "empty_f32"),
        helper.make_tensor("typed_f32", TensorProto.FLOAT, [3], [1.0, -2.5, 1e30]),
        helper.make_tensor("typed_i32", TensorProto.INT32, [2], [-1, 2147483647]),
        helper.make_tensor("typed_i8", TensorProto.INT8, [3], [-128, 0, 127]),
        helper.make_tensor("typed_u8", TensorProto.UINT8, [2], [0, 255]),
        helper.make_tensor("typed_i16", TensorProto.INT16, [2], [-32768, 32767]),
        helper.make_tensor("typed_u16", TensorProto.UINT16, [1], [65535]),
        helper.make_tensor("typed_bool", TensorProto.BOOL, [3], [True, False, True]),
        helper.make_tensor("typed_i64", TensorProto.INT64, [2], [-(1 << 62), 5]),
        helper.make_tensor("typed_f64", TensorProto.DOUBLE, [2], [0.1, -1e300]),
        helper.make_tensor("typed_u32", TensorProto.UINT32, [2], [0, 4294967295]),
        helper.make_tensor("typed_u64", TensorProto.UINT64, [1], [18446744073709551615]),
        helper.make_tensor("typed_str", TensorProto.STRING, [3], [b"one", b"", b"three"]),
        helper.make_tensor("scalar_f32", TensorProto.FLOAT, [], [7.0]),
        helper.make_tensor("typed_c64", TensorProto.COMPLEX64, [1], [complex(1.0, -1.0)]),
    ]
    # fp16 / bf16 stored as bit patterns in int32_data
    f16 = np.array([1.0, -2.0, 0.5], dtype=np.float16)
    t = TensorProto()
    t.name, t.data_type = "typed_f16", TensorProto.FLOAT16
    t.dims.extend([3])
    t.int32_data.extend(int(v) for v in f16.view(np.uint16))
    inits.append(t)
    t = TensorProto()
    t.name, t.data_type = "typed_bf16", TensorProto.BFLOAT16
    t.dims.extend([2])
    t.int32_data.extend([0x3F80, 0xC000])  # 1.0, -2.0
    inits.append(t)
    inits.append(numpy_helper.from_array(np.array([1.0, 2.0], dtype=np.float16), "raw_f16"))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    g = helper.make_graph([helper.make_node("Add", ["x", "raw_f32"], ["y"])], "tensors", [x], [y],
                          initializer=inits)
    save(helper.make_model(g, opset_imports=OPSET), "tensors.onnx")


def external():
    """A model whose two large initializers live in a side file."""
    w = numpy_helper.from_array(np.arange(64 * 4, dtype=np.float32).reshape(64, 4), "w")
    b = numpy_helper.from_array(np.arange(300, dtype=np.int64), "b")
    small = numpy_helper.from_array(np.array([3.0], dtype=np.float32), "small")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["m"]),
                           helper.make_node("Mul", ["m", "small"], ["y"])],
                          "external", [x], [y], initializer=[w, b, small])
    m = helper.make_model(g, opset_imports=OPSET)
    data = os.path.join(OUT, "external.onnx.data")
    if os.path.exists(data):
        os.remove(data)  # onnx appends to an existing side file
    convert_model_to_external_data(m, all_tensors_to_one_file=True, location="external.onnx.data",
                                   size_threshold=512)
    onnx.save_model(m, os.path.join(OUT, "external.onnx"))
    print("wrote", os.path.join(OUT, "external.onnx"), "and its .data")


def sequences():
    """Sequence, optional and map types on graph inputs and outputs."""
    seq = helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, [2, "n"])
    opt_tp = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.INT64, [4]))
    opt = helper.make_value_info("opt", opt_tp)
    map_tp = onnx.TypeProto()
    map_tp.map_type.key_type = TensorProto.STRING
    map_tp.map_type.value_type.tensor_type.elem_type = TensorProto.FLOAT
    mp = helper.make_value_info("mp", map_tp)
    out_seq = helper.make_tensor_sequence_value_info("out_seq", TensorProto.FLOAT, None)
    has = helper.make_tensor_value_info("has", TensorProto.BOOL, [])
    g = helper.make_graph([helper.make_node("Identity", ["seq"], ["out_seq"]),
                           helper.make_node("OptionalHasElement", ["opt"], ["has"])],
                          "sequences", [seq, opt, mp], [out_seq, has])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), "sequences.onnx", check=False)


def metadata():
    """Model fields, metadata props, doc strings, dims of every kind, denotations."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, None], doc_string="the input")
    x.type.denotation = "TENSOR"
    x.type.tensor_type.shape.dim[1].denotation = "DATA_CHANNEL"
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3, None])
    unk = helper.make_tensor_value_info("unk", TensorProto.FLOAT, None)  # unknown rank
    s = helper.make_tensor_value_info("s", TensorProto.FLOAT, [])    # scalar
    zero = helper.make_tensor_value_info("zero", TensorProto.FLOAT, [0, 2])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], doc_string="node doc"),
                           helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
                           helper.make_node("ConstantOfShape", ["shp"], ["zero"])],
                          "metadata", [x], [y, s, zero], doc_string="graph doc",
                          initializer=[numpy_helper.from_array(np.array([0, 2], dtype=np.int64), "shp")],
                          value_info=[helper.make_tensor_value_info("mid", TensorProto.FLOAT, ["batch"]), unk])
    m = helper.make_model(g, opset_imports=OPSET, producer_name="mkfixtures", producer_version="1.0",
                          doc_string="model doc", domain="test.mgopt", model_version=7)
    helper.set_model_props(m, {"author": "mgopt", "license": "MIT", "empty": ""})
    save(m, "metadata.onnx")


def function():
    """A model-local function called from the graph."""
    fn = helper.make_function(
        "test.fn", "AddMul", ["a", "b"], ["c"],
        [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Mul", ["s", "b"], ["c"])],
        opset_imports=OPSET, attributes=["unused"], doc_string="(a + b) * b")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    g = helper.make_graph([helper.make_node("AddMul", ["x", "x"], ["y"], domain="test.fn")],
                          "function", [x], [y])
    m = helper.make_model(g, opset_imports=OPSET + [helper.make_opsetid("test.fn", 1)], functions=[fn])
    save(m, "function.onnx")


def _varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def _with_fields(msg, *fields):
    """msg with extra (field number, bytes) entries appended as length-delimited
    fields: FunctionProto fields this onnx version does not know (attribute_proto)."""
    raw = msg.SerializeToString()
    for num, data in fields:
        raw += _varint(num << 3 | 2) + _varint(len(data)) + data
    out = type(msg)()
    out.ParseFromString(raw)
    return out


def function_twice():
    """One function called twice; its body holds an Identity and a constant
    expression (1 + 1) that cleanup passes remove or fold."""
    fn = helper.make_function(
        "test.fn", "AddRelu", ["x", "b"], ["y"],
        [helper.make_node("Identity", ["b"], ["bi"]),
         helper.make_node("Constant", [], ["one"], value=helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])),
         helper.make_node("Add", ["one", "one"], ["two"]),
         helper.make_node("Mul", ["bi", "two"], ["b2"]),
         helper.make_node("Add", ["x", "b2"], ["s"]),
         helper.make_node("Relu", ["s"], ["y"])],
        opset_imports=OPSET, doc_string="relu(x + 2 b)")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])
    g = helper.make_graph([helper.make_node("AddRelu", ["x", "b1"], ["h"], domain="test.fn", name="call1"),
                           helper.make_node("AddRelu", ["h", "b2"], ["z"], domain="test.fn", name="call2")],
                          "function_twice", [x], [z],
                          initializer=[numpy_helper.from_array(np.array([0.5, -1.0, 2.0], dtype=np.float32), "b1"),
                                       numpy_helper.from_array(np.array([-0.25, 1.5, -3.0], dtype=np.float32), "b2")])
    m = helper.make_model(g, opset_imports=OPSET + [helper.make_opsetid("test.fn", 1)], functions=[fn])
    save(m, "function_twice.onnx")


def function_attr_ref():
    """A function whose LeakyRelu takes its alpha from the function's attribute
    (ref_attr_name), with a default (attribute_proto) one call relies on."""
    lrelu = helper.make_node("LeakyRelu", ["x"], ["y"])
    ref = onnx.AttributeProto()
    ref.name = "alpha"
    ref.ref_attr_name = "alpha"
    ref.type = onnx.AttributeProto.FLOAT
    lrelu.attribute.extend([ref])
    fn = helper.make_function("test.fn", "LRelu", ["x"], ["y"],
                              [helper.make_node("Identity", ["x"], ["xi"]), lrelu], opset_imports=OPSET)
    fn.node[1].input[0] = "xi"
    dflt = helper.make_attribute("alpha", 0.1)
    fn = _with_fields(fn, (11, dflt.SerializeToString()))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y1 = helper.make_tensor_value_info("y1", TensorProto.FLOAT, [4])
    y2 = helper.make_tensor_value_info("y2", TensorProto.FLOAT, [4])
    g = helper.make_graph([helper.make_node("LRelu", ["x"], ["y1"], domain="test.fn", alpha=0.5),
                           helper.make_node("LRelu", ["x"], ["y2"], domain="test.fn")],
                          "function_attr_ref", [x], [y1, y2])
    m = helper.make_model(g, opset_imports=OPSET + [helper.make_opsetid("test.fn", 1)], functions=[fn])
    save(m, "function_attr_ref.onnx")


def function_nested():
    """A function calling another twice: Outer(x) = Gelu(Gelu(x) + 1), Gelu
    decomposed with Erf."""
    gelu = helper.make_function(
        "test.fn", "GeluErf", ["x"], ["y"],
        [helper.make_node("Constant", [], ["rs2"], value=helper.make_tensor("rs2", TensorProto.FLOAT, [], [0.70710678])),
         helper.make_node("Constant", [], ["half"], value=helper.make_tensor("half", TensorProto.FLOAT, [], [0.5])),
         helper.make_node("Constant", [], ["one"], value=helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])),
         helper.make_node("Mul", ["x", "rs2"], ["t"]),
         helper.make_node("Erf", ["t"], ["e"]),
         helper.make_node("Add", ["e", "one"], ["e1"]),
         helper.make_node("Mul", ["x", "e1"], ["xe"]),
         helper.make_node("Mul", ["xe", "half"], ["y"])],
        opset_imports=OPSET)
    outer = helper.make_function(
        "test.fn", "Outer", ["x"], ["y"],
        [helper.make_node("GeluErf", ["x"], ["g"], domain="test.fn"),
         helper.make_node("Constant", [], ["one"], value=helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])),
         helper.make_node("Add", ["g", "one"], ["g1"]),
         helper.make_node("GeluErf", ["g1"], ["y"], domain="test.fn")],
        opset_imports=OPSET + [helper.make_opsetid("test.fn", 1)])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    g = helper.make_graph([helper.make_node("Outer", ["x"], ["y"], domain="test.fn")], "function_nested", [x], [y])
    m = helper.make_model(g, opset_imports=OPSET + [helper.make_opsetid("test.fn", 1)], functions=[outer, gelu])
    save(m, "function_nested.onnx")


def function_domain():
    """Functions in a custom domain with their own opset imports: one called
    with float and with int64 inputs (its input types differ between calls),
    one whose output is its input (written back through an Identity)."""
    ops = OPSET + [helper.make_opsetid("com.example.ops", 2)]
    double = helper.make_function("com.example.ops", "Double", ["v"], ["w"],
                                  [helper.make_node("Add", ["v", "v"], ["w"])], opset_imports=ops,
                                  doc_string="v + v, any numeric type")
    passthru = helper.make_function("com.example.ops", "Pass", ["v"], ["w"],
                                    [helper.make_node("Identity", ["v"], ["w"])], opset_imports=ops)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
    n = helper.make_tensor_value_info("n", TensorProto.INT64, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])
    k = helper.make_tensor_value_info("k", TensorProto.INT64, [2])
    g = helper.make_graph([helper.make_node("Double", ["x"], ["x2"], domain="com.example.ops"),
                           helper.make_node("Pass", ["x2"], ["y"], domain="com.example.ops"),
                           helper.make_node("Double", ["n"], ["k"], domain="com.example.ops")],
                          "function_domain", [x, n], [y, k])
    m = helper.make_model(g, opset_imports=ops, functions=[double, passthru])
    save(m, "function_domain.onnx")


def main():
    os.makedirs(OUT, exist_ok=True)
    attributes()
    control_flow()
    tensors()
    external()
    sequences()
    metadata()
    function()
    function_twice()
    function_attr_ref()
    function_nested()
    function_domain()


if __name__ == "__main__":
    main()
