# tests/fuzz/roundtrip_fixtures.py — writes the fixture_* models of tests/fuzz/corpus/roundtrip/:
# small ONNX models of the kinds a write-back must survive (uint8 NHWC inputs into dynamic
# quantization, ai.onnx.ml and com.microsoft ops, unusual and unknown element types, sequence /
# map / optional / sparse types, many-output Splits, wide opaque ops, Gelu before opset 20, no
# default-domain opset). Run with python3 + onnx (1.12 works) from the repository root:
#   python3 tests/fuzz/roundtrip_fixtures.py
# then build/tests/test_fuzz_roundtrip replays them.
import os, tempfile, shutil, glob
OUTDIR = "tests/fuzz/corpus/roundtrip"
TMP = tempfile.mkdtemp()
# ---- part gen
exec(compile(r'''
import onnx, numpy as np
from onnx import helper as h, TensorProto as T, numpy_helper as nh
import os
def make_map_type_proto(k, v):
    t = onnx.TypeProto(); t.map_type.key_type = k; t.map_type.value_type.CopyFrom(v); return t
h.make_map_type_proto = make_map_type_proto

out = TMP
def save(name, nodes, ins, outs, inits=[], vi=[], opsets=[("",17)], ir=8, **kw):
    g = h.make_graph(nodes, name, ins, outs, initializer=inits, value_info=vi)
    m = h.make_model(g, opset_imports=[h.make_opsetid(d,v) for d,v in opsets], **kw)
    m.ir_version = ir
    onnx.save(m, os.path.join(out, name + ".onnx"))

vi = h.make_tensor_value_info
# 1. uint8 NHWC -> Cast -> DynamicQuantizeLinear -> ConvInteger
w = nh.from_array(np.ones((4,3,3,3),np.uint8), "w")
wz = nh.from_array(np.array(0,np.uint8), "wz")
save("dq_conv", [
  h.make_node("Transpose",["x"],["xt"],perm=[0,3,1,2]),
  h.make_node("Cast",["xt"],["xf"],to=T.FLOAT),
  h.make_node("DynamicQuantizeLinear",["xf"],["q","s","z"]),
  h.make_node("ConvInteger",["q","w","z","wz"],["ci"]),
  h.make_node("Cast",["ci"],["cf"],to=T.FLOAT),
  h.make_node("Mul",["s","cf"],["y"])],
  [vi("x",T.UINT8,[1,224,320,3])],[vi("y",T.FLOAT,None)],[w,wz], opsets=[("",17),("ai.onnx.ml",2)])
# 2. MatMulInteger
w2 = nh.from_array(np.ones((8,4),np.int8), "w2")
save("dq_matmul", [
  h.make_node("DynamicQuantizeLinear",["x"],["q","s","z"]),
  h.make_node("MatMulInteger",["q","w2","z"],["mi"]),
  h.make_node("Cast",["mi"],["y"],to=T.FLOAT)],
  [vi("x",T.FLOAT,[2,8])],[vi("y",T.FLOAT,[2,4])],[w2])
# 3. ai.onnx.ml ops
save("ml_ops", [h.make_node("Normalizer",["x"],["y"],domain="ai.onnx.ml",norm="L2")],
  [vi("x",T.FLOAT,[2,8])],[vi("y",T.FLOAT,[2,8])], opsets=[("",17),("ai.onnx.ml",2)])
save("ml_labelenc", [h.make_node("LabelEncoder",["x"],["y"],domain="ai.onnx.ml",keys_strings=["a","b"],values_int64s=[1,2])],
  [vi("x",T.STRING,[3])],[vi("y",T.INT64,[3])], opsets=[("",17),("ai.onnx.ml",2)])
save("ml_zipmap", [h.make_node("ZipMap",["x"],["y"],domain="ai.onnx.ml",classlabels_int64s=[0,1])],
  [vi("x",T.FLOAT,[1,2])],[h.make_value_info("y", h.make_sequence_type_proto(h.make_map_type_proto(T.INT64, h.make_tensor_type_proto(T.FLOAT,[]))))], opsets=[("",17),("ai.onnx.ml",2)])
# 4. no-shape inputs and unusual elem types
for nm, dt in [("u16",T.UINT16),("bf16",T.BFLOAT16),("str",T.STRING),("f64",T.DOUBLE),("c64",T.COMPLEX64),("u32",T.UINT32),("u64",T.UINT64),("f16",T.FLOAT16),("bool",T.BOOL),("i16",T.INT16)]:
    save("in_"+nm, [h.make_node("Identity",["x"],["y"])],[vi("x",dt,None)],[vi("y",dt,None)])
    save("unused_"+nm, [h.make_node("Identity",["a"],["y"])],[vi("x",dt,[2,"N"]),vi("a",T.FLOAT,[1])],[vi("y",T.FLOAT,[1])])
for nm,dt in [("e4m3",17),("e5m2",19),("i4",22),("u4",21)]:
    try:
        save("in_"+nm, [h.make_node("Identity",["x"],["y"])],[vi("x",dt,[2])],[vi("y",dt,[2])], opsets=[("",21)], ir=10)
        save("unused_"+nm, [h.make_node("Identity",["a"],["y"])],[vi("x",dt,[2])],[vi("a",T.FLOAT,[1])] and [vi("a",T.FLOAT,[1])],[vi("y",T.FLOAT,[1])], opsets=[("",21)], ir=10) if False else None
    except Exception as e: print(nm, e)
# elem_type 0 / missing type
x0 = onnx.ValueInfoProto(); x0.name="x"
save("in_notype", [h.make_node("Identity",["x"],["y"])],[x0],[vi("y",T.FLOAT,None)])
x1 = onnx.ValueInfoProto(); x1.name="x"; x1.type.tensor_type.elem_type=0
save("in_elem0", [h.make_node("Identity",["x"],["y"])],[x1],[vi("y",T.FLOAT,None)])
x2 = onnx.ValueInfoProto(); x2.name="x"; x2.type.tensor_type.elem_type=99
save("in_elem99", [h.make_node("Identity",["x"],["y"])],[x2],[vi("y",T.FLOAT,None)])
# symbolic/empty dims
x3 = vi("x",T.FLOAT,[1,None,"h",-1])
save("in_dims", [h.make_node("Identity",["x"],["y"])],[x3],[vi("y",T.FLOAT,None)])
# sequence/map/optional graph inputs
seq = h.make_value_info("x", h.make_sequence_type_proto(h.make_tensor_type_proto(T.FLOAT,None)))
save("in_seq", [h.make_node("SequenceLength",["x"],["y"])],[seq],[vi("y",T.INT64,[])])
opt = h.make_value_info("x", h.make_optional_type_proto(h.make_tensor_type_proto(T.FLOAT,[2])))
save("in_opt", [h.make_node("OptionalHasElement",["x"],["y"])],[opt],[vi("y",T.BOOL,[])], opsets=[("",18)])
mp = h.make_value_info("x", h.make_map_type_proto(T.STRING, h.make_tensor_type_proto(T.FLOAT,[])))
save("in_map", [h.make_node("Identity",["a"],["y"])],[mp, vi("a",T.FLOAT,[1])],[vi("y",T.FLOAT,[1])])
sp = h.make_value_info("x", h.make_sparse_tensor_type_proto(T.FLOAT,[4,4]))
save("in_sparse", [h.make_node("Identity",["a"],["y"])],[sp, vi("a",T.FLOAT,[1])],[vi("y",T.FLOAT,[1])])
# value_info of seq type
save("vi_seq", [h.make_node("SequenceConstruct",["x","x"],["s"]), h.make_node("ConcatFromSequence",["s"],["y"],axis=0)],
  [vi("x",T.FLOAT,[2])],[vi("y",T.FLOAT,[4])], vi=[h.make_value_info("s", h.make_sequence_type_proto(h.make_tensor_type_proto(T.FLOAT,[2])))])
# input used only by a subgraph
then = h.make_graph([h.make_node("Identity",["u"],["t"])],"then",[],[vi("t",T.UINT8,None)])
els = h.make_graph([h.make_node("Identity",["u"],["e"])],"else",[],[vi("e",T.UINT8,None)])
save("sub_only", [h.make_node("If",["c"],["y"],then_branch=then,else_branch=els)],
  [vi("c",T.BOOL,[]), vi("u",T.UINT8,[1,224,320,3])],[vi("y",T.UINT8,None)])
# loop with scan outputs, uint8 carried
body = h.make_graph([h.make_node("Identity",["cin"],["cout"]), h.make_node("Identity",["v"],["vo"]), h.make_node("Identity",["v"],["so"])],"body",
  [vi("i",T.INT64,[]),vi("cin",T.BOOL,[]),vi("v",T.UINT8,None)],[vi("cout",T.BOOL,[]),vi("vo",T.UINT8,None),vi("so",T.UINT8,None)])
save("loop_u8", [h.make_node("Loop",["n","c","x"],["xo","scan"],body=body)],
  [vi("n",T.INT64,[]),vi("c",T.BOOL,[]),vi("x",T.UINT8,[1,224,320,3])],[vi("xo",T.UINT8,None),vi("scan",T.UINT8,None)])
# loop whose body has no types on inputs
b2 = h.make_graph([h.make_node("Identity",["cin"],["cout"]), h.make_node("Add",["v","v"],["vo"])],"body",
  [onnx.ValueInfoProto(name="i"),onnx.ValueInfoProto(name="cin"),onnx.ValueInfoProto(name="v")],[onnx.ValueInfoProto(name="cout"),onnx.ValueInfoProto(name="vo")])
save("loop_notype", [h.make_node("Loop",["n","c","x"],["xo"],body=b2)],
  [vi("n",T.INT64,[]),vi("c",T.BOOL,[]),vi("x",T.FLOAT,[2])],[vi("xo",T.FLOAT,None)])
# initializer that's also a graph input (IR 3)
save("init_input", [h.make_node("Add",["x","b"],["y"])],[vi("x",T.FLOAT,[2]),vi("b",T.FLOAT,[2])],[vi("y",T.FLOAT,[2])],[nh.from_array(np.ones(2,np.float32),"b")], ir=3, opsets=[("",9)])
# initializer listed as input with different dtype u8
save("init_input_u8", [h.make_node("Cast",["b"],["bf"],to=T.FLOAT),h.make_node("Add",["x","bf"],["y"])],[vi("x",T.FLOAT,[2]),vi("b",T.UINT8,[2])],[vi("y",T.FLOAT,[2])],[nh.from_array(np.ones(2,np.uint8),"b")], ir=4)
# unused input unknown kind
# many outputs (>64) Split
save("split70", [h.make_node("Split",["x"],["o%d"%i for i in range(70)],axis=0)],[vi("x",T.FLOAT,[70])],[vi("o%d"%i,T.FLOAT,[1]) for i in range(70)], opsets=[("",13)])
# Constant with uint16 / bf16 / string
for nm, arr in [("u16",np.array([1,2],np.uint16)),("f64",np.array([1.5],np.float64)),("u64",np.array([1],np.uint64))]:
    save("const_"+nm,[h.make_node("Constant",[],["c"],value=nh.from_array(arr,"c")),h.make_node("Identity",["c"],["y"])],[],[vi("y",onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[arr.dtype],None)])
bt = h.make_tensor("c",T.BFLOAT16,[2],[1,2]); 
save("const_bf16",[h.make_node("Constant",[],["c"],value=bt),h.make_node("Identity",["c"],["y"])],[],[vi("y",T.BFLOAT16,None)])
st = h.make_tensor("c",T.STRING,[2],[b"a",b"b"])
save("const_str",[h.make_node("Constant",[],["c"],value=st),h.make_node("Identity",["c"],["y"])],[],[vi("y",T.STRING,None)])
# Reshape with shape from uint8 data / Transpose of uint8 init
save("u8_resize", [h.make_node("Cast",["x"],["xf"],to=T.FLOAT),h.make_node("Resize",["xf","","sc"],["y"],mode="nearest")],
 [vi("x",T.UINT8,[1,3,4,4])],[vi("y",T.FLOAT,None)],[nh.from_array(np.array([1,1,2,2],np.float32),"sc")])
''', 'gen.py', 'exec'), {'TMP': TMP})
# ---- part gen2
exec(compile(r'''
import onnx, numpy as np, os
from onnx import helper as h, TensorProto as T, numpy_helper as nh
vi = h.make_tensor_value_info
def save(name, nodes, ins, outs, inits=[], opsets=[("",17)], ir=8):
    g = h.make_graph(nodes, name, ins, outs, initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid(d,v) for d,v in opsets]); m.ir_version = ir
    onnx.save(m, TMP + "/"+name+".onnx")
# tf2onnx-style Unpack: Split into 300 outputs then Squeeze, named like tf2onnx, on a uint8 NHWC input
n=300
save("split300_u8", [h.make_node("Cast",["x"],["xf"],to=T.FLOAT,name="StatefulPartitionedCall/model/tf.cast/Cast"),
  h.make_node("Split",["xf"],["o%d"%i for i in range(n)],axis=2,name="StatefulPartitionedCall/model/tf.unstack/unstack")]+
  [h.make_node("Squeeze",["o%d"%i,"ax"],["s%d"%i]) for i in range(n)],
  [vi("x",T.UINT8,[1,224,n,3])],[vi("s%d"%i,T.FLOAT,[1,224,3]) for i in range(n)],[nh.from_array(np.array([2],np.int64),"ax")])
# split with 70 outputs at opset 18 (num_outputs) and opset 11 (attribute)
save("split70_op18", [h.make_node("Split",["x"],["o%d"%i for i in range(70)],axis=0,num_outputs=70)],[vi("x",T.FLOAT,[70])],[vi("o%d"%i,T.FLOAT,[1]) for i in range(70)], opsets=[("",18)])
save("split70_op11", [h.make_node("Split",["x"],["o%d"%i for i in range(70)],axis=0)],[vi("x",T.FLOAT,[70])],[vi("o%d"%i,T.FLOAT,[1]) for i in range(70)], opsets=[("",11)])
# an unknown op of another domain with 1100 inputs and 70 outputs, and a 200-character domain
dom = "com.example." + "d"*188
save("opaque_wide", [h.make_node("Wide",["x"]*1100,["y%d"%i for i in range(70)],domain=dom)],
  [vi("x",T.FLOAT,[2])],[vi("y%d"%i,T.FLOAT,None) for i in range(70)], opsets=[("",17),(dom,1)])
# Gelu before opset 20 (read by the importer, not an ONNX op there)
save("gelu_op17", [h.make_node("Gelu",["x"],["y"])],[vi("x",T.FLOAT,[2])],[vi("y",T.FLOAT,[2])])
save("gelu_op17_tanh", [h.make_node("Gelu",["x"],["y"],approximate="tanh")],[vi("x",T.FLOAT,[2])],[vi("y",T.FLOAT,[2])])
# a uint8 NHWC input only transposed and dequantized (onnx.quantize over tf2onnx)
save("u8_nhwc_dql", [h.make_node("Transpose",["x"],["xt"],perm=[0,3,1,2]),
  h.make_node("DequantizeLinear",["xt","s","z"],["y"])],[vi("x",T.UINT8,[1,224,320,3])],[vi("y",T.FLOAT,None)],
  [nh.from_array(np.array(0.02,np.float32),"s"),nh.from_array(np.array(128,np.uint8),"z")], opsets=[("",17),("ai.onnx.ml",2)])
# float4e2m1 / float8e8m0 graph input (no mgopt dtype)
for nm,dt in [("f4",23),("e8m0",24)]:
    x = onnx.ValueInfoProto(); x.name="x"; x.type.tensor_type.elem_type=dt
    d = x.type.tensor_type.shape.dim.add(); d.dim_value=2
    save("in_"+nm, [h.make_node("Identity",["a"],["y"])],[x, vi("a",T.FLOAT,[1])],[vi("y",T.FLOAT,[1])], opsets=[("",23)], ir=11)
''', 'gen2.py', 'exec'), {'TMP': TMP})
# ---- part gen3
exec(compile(r'''
import onnx, numpy as np
from onnx import helper as h, TensorProto as T, numpy_helper as nh
vi = h.make_tensor_value_info
def save(name, nodes, ins, outs, inits=[], opsets=[("",17)], ir=8):
    g = h.make_graph(nodes, name, ins, outs, initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid(d,v) for d,v in opsets]); m.ir_version = ir
    onnx.save(m, TMP + "/"+name+".onnx")
save("noopset_split", [h.make_node("Split",["x"],["a","b"],axis=0,split=[1,3]), h.make_node("Reshape",["a","sh"],["y"])],
  [vi("x",T.FLOAT,[4])],[vi("y",T.FLOAT,None),vi("b",T.FLOAT,None)],[nh.from_array(np.array([1,1],np.int64),"sh")], opsets=[])
save("opset0_split", [h.make_node("Split",["x"],["a","b"],axis=0,split=[1,3]), h.make_node("Squeeze",["a"],["y"],axes=[0])],
  [vi("x",T.FLOAT,[4])],[vi("y",T.FLOAT,None),vi("b",T.FLOAT,None)], opsets=[("",0)])
save("mlonly_split", [h.make_node("Split",["x"],["a","b"],axis=0,split=[1,3]), h.make_node("Squeeze",["a"],["y"],axes=[0])],
  [vi("x",T.FLOAT,[4])],[vi("y",T.FLOAT,None),vi("b",T.FLOAT,None)], opsets=[("ai.onnx.ml",2)])
''', 'gen3.py', 'exec'), {'TMP': TMP})
# ---- part gen4
exec(compile(r'''
import onnx
from onnx import helper as h, TensorProto as T
vi = h.make_tensor_value_info
def save(name, nodes, ins, outs, opsets=[("",23)], ir=11):
    g = h.make_graph(nodes, name, ins, outs)
    m = h.make_model(g, opset_imports=[h.make_opsetid(d,v) for d,v in opsets]); m.ir_version = ir
    onnx.save(m, TMP + "/"+name+".onnx")
for nm,dt in [("f4",23),("e8m0",24),("x99",99)]:
    x = onnx.ValueInfoProto(); x.name="x"; x.type.tensor_type.elem_type=dt
    x.type.tensor_type.shape.dim.add().dim_value=2
    y = onnx.ValueInfoProto(); y.name="y"; y.type.tensor_type.elem_type=dt
    y.type.tensor_type.shape.dim.add().dim_param="N"
    save("id_"+nm, [h.make_node("Identity",["x"],["y"])],[x],[y])
    save("cast_"+nm, [h.make_node("Cast",["x"],["y"],to=T.FLOAT)],[x],[vi("y",T.FLOAT,[2])])
''', 'gen4.py', 'exec'), {'TMP': TMP})
# ---- part gen5
exec(compile(r'''
import onnx, numpy as np
from onnx import helper as h, TensorProto as T, numpy_helper as nh
vi = h.make_tensor_value_info
def save(name, nodes, ins, outs, inits=[], opsets=[("",17)], ir=8, vinfo=[], functions=None, sparse=[]):
    g = h.make_graph(nodes, name, ins, outs, initializer=inits, value_info=vinfo, sparse_initializer=sparse)
    kw = {}
    if functions: kw["functions"] = functions
    m = h.make_model(g, opset_imports=[h.make_opsetid(d,v) for d,v in opsets], **kw); m.ir_version = ir
    onnx.save(m, TMP + "/"+name+".onnx")
ms = [("",17),("com.microsoft",1),("ai.onnx.ml",2)]
# com.microsoft dynamic quant ops
save("ms_dqmatmul", [h.make_node("DynamicQuantizeMatMul",["x","w","s","z"],["y"],domain="com.microsoft")],
  [vi("x",T.FLOAT,[2,4])],[vi("y",T.FLOAT,[2,3])],[nh.from_array(np.ones((4,3),np.int8),"w"),nh.from_array(np.array([0.1],np.float32),"s"),nh.from_array(np.array([0],np.int8),"z")], opsets=ms)
save("ms_qlinearconv", [h.make_node("QLinearConv",["x","xs","xz","w","ws","wz","ys","yz"],["y"])],
  [vi("x",T.UINT8,[1,1,4,4])],[vi("y",T.UINT8,None)],[nh.from_array(np.array(0.1,np.float32),"xs"),nh.from_array(np.array(128,np.uint8),"xz"),nh.from_array(np.ones((2,1,3,3),np.uint8),"w"),nh.from_array(np.array(0.1,np.float32),"ws"),nh.from_array(np.array(0,np.uint8),"wz"),nh.from_array(np.array(0.2,np.float32),"ys"),nh.from_array(np.array(128,np.uint8),"yz")])
# pass-through outputs, duplicated outputs, initializer as output, input as output
save("io_passthrough", [h.make_node("Identity",["x"],["y"])],
  [vi("x",T.UINT8,[1,224,320,3])],[vi("x",T.UINT8,[1,224,320,3]),vi("y",T.UINT8,None),vi("y",T.UINT8,None),vi("c",T.FLOAT,[2])],[nh.from_array(np.ones(2,np.float32),"c")])
# empty optional outputs, DQL with unused scale output
save("dql_unused_outs", [h.make_node("DynamicQuantizeLinear",["x"],["q","",""]), h.make_node("Cast",["q"],["y"],to=T.FLOAT)],
  [vi("x",T.FLOAT,[4])],[vi("y",T.FLOAT,[4])])
# model-local function with uint8
f = h.make_function("local","QCast",["a"],["b"],[h.make_node("Cast",["a"],["b"],to=T.FLOAT)],[h.make_opsetid("",17)])
save("func_u8", [h.make_node("QCast",["x"],["y"],domain="local")],[vi("x",T.UINT8,[1,224,320,3])],[vi("y",T.FLOAT,None)], opsets=[("",17),("local",1)], functions=[f])
# sparse initializer
sp = h.make_sparse_tensor(nh.from_array(np.array([1.0,2.0],np.float32),"sp"), nh.from_array(np.array([0,5],np.int64),"idx"), [2,4])
save("sparse_init", [h.make_node("Add",["x","sp"],["y"])],[vi("x",T.FLOAT,[2,4])],[vi("y",T.FLOAT,[2,4])], sparse=[sp])
# type denotation, symbolic dims, value_info of optional / sequence of maps
x = vi("x",T.UINT8,["N",224,320,3]); x.type.denotation="IMAGE"
save("denotation", [h.make_node("Identity",["x"],["y"])],[x],[vi("y",T.UINT8,None)])
# TreeEnsembleClassifier -> ZipMap (classic sklearn pipeline)
save("ml_tree", [h.make_node("TreeEnsembleClassifier",["x"],["label","prob"],domain="ai.onnx.ml",class_ids=[0,1],class_nodeids=[1,2],class_treeids=[0,0],class_weights=[1.0,1.0],classlabels_int64s=[0,1],nodes_falsenodeids=[2,0,0],nodes_featureids=[0,0,0],nodes_hitrates=[1.0,1.0,1.0],nodes_missing_value_tracks_true=[0,0,0],nodes_modes=["BRANCH_LEQ","LEAF","LEAF"],nodes_nodeids=[0,1,2],nodes_treeids=[0,0,0],nodes_truenodeids=[1,0,0],nodes_values=[0.5,0,0],post_transform="NONE"),
  h.make_node("ZipMap",["prob"],["zm"],domain="ai.onnx.ml",classlabels_int64s=[0,1])],
  [vi("x",T.FLOAT,[None,1])],[vi("label",T.INT64,[None]), h.make_value_info("zm", h.make_sequence_type_proto(onnx.TypeProto(map_type=onnx.TypeProto.Map(key_type=T.INT64, value_type=h.make_tensor_type_proto(T.FLOAT,[])))))], opsets=ms)
# Loop with uint8 scan output and outer-scope uint8 read in body
body = h.make_graph([h.make_node("Identity",["cin"],["cout"]), h.make_node("Cast",["u"],["uf"],to=T.FLOAT), h.make_node("Add",["v","uf"],["vo"]), h.make_node("Identity",["u"],["so"])],"body",
  [vi("i",T.INT64,[]),vi("cin",T.BOOL,[]),vi("v",T.FLOAT,[2])],[vi("cout",T.BOOL,[]),vi("vo",T.FLOAT,[2]),vi("so",T.UINT8,[2])])
save("loop_outer_u8", [h.make_node("Loop",["n","","x"],["xo","scan"],body=body)],
  [vi("n",T.INT64,[]),vi("x",T.FLOAT,[2]),vi("u",T.UINT8,[2])],[vi("xo",T.FLOAT,[2]),vi("scan",T.UINT8,None)])
# If with sequence outputs
t1 = h.make_graph([h.make_node("SequenceEmpty",[],["s"],dtype=T.FLOAT)],"t",[],[h.make_value_info("s",h.make_sequence_type_proto(h.make_tensor_type_proto(T.FLOAT,None)))])
e1 = h.make_graph([h.make_node("SequenceConstruct",["x"],["s2"])],"e",[],[h.make_value_info("s2",h.make_sequence_type_proto(h.make_tensor_type_proto(T.FLOAT,None)))])
save("if_seq", [h.make_node("If",["c"],["s"],then_branch=t1,else_branch=e1), h.make_node("SequenceLength",["s"],["y"])],
  [vi("c",T.BOOL,[]),vi("x",T.FLOAT,[2])],[vi("y",T.INT64,[])])
# Optional ops
save("optional_ops", [h.make_node("Optional",["x"],["o"]), h.make_node("OptionalGetElement",["o"],["y"])],
  [vi("x",T.FLOAT,[2])],[vi("y",T.FLOAT,[2])], opsets=[("",18)])
# string ops
save("string_ops", [h.make_node("StringNormalizer",["x"],["y"],case_change_action="LOWER")],[vi("x",T.STRING,[3])],[vi("y",T.STRING,None)], opsets=[("",17)])
# large int constants of unusual dtypes feeding Cast
save("u16_const_cast", [h.make_node("Cast",["c"],["y"],to=T.FLOAT)],[],[vi("y",T.FLOAT,[2])],[nh.from_array(np.array([1,65535],np.uint16),"c")])
save("bf16_init", [h.make_node("Cast",["c"],["y"],to=T.FLOAT)],[],[vi("y",T.FLOAT,[2])],[h.make_tensor("c",T.BFLOAT16,[2],[1,2])])
save("f8_init", [h.make_node("Cast",["c"],["y"],to=T.FLOAT)],[],[vi("y",T.FLOAT,[2])],[onnx.TensorProto(name="c",data_type=17,dims=[2],raw_data=b"\x38\x40")], opsets=[("",19)], ir=9)
save("i4_init", [h.make_node("Cast",["c"],["y"],to=T.FLOAT)],[],[vi("y",T.FLOAT,[3])],[onnx.TensorProto(name="c",data_type=22,dims=[3],raw_data=b"\x21\x0f")], opsets=[("",21)], ir=10)
save("f4_init", [h.make_node("Identity",["c"],["y"])],[],[vi("y",T.FLOAT,[2])],[onnx.TensorProto(name="c",data_type=23,dims=[2],raw_data=b"\x21")], opsets=[("",23)], ir=11)
''', 'gen5.py', 'exec'), {'TMP': TMP})
for f in sorted(glob.glob(os.path.join(TMP, "*.onnx"))):
    shutil.copyfile(f, os.path.join(OUTDIR, "fixture_" + os.path.basename(f)[:-5]))
shutil.rmtree(TMP)
