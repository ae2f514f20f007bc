/* src/onnx/model.c — the ONNX ModelProto tree: message tables, decoder, encoder, equality, tensor checks. */
#include "model.h"

/* Every message the reader knows is described by a table of its fields (number,
   kind, where it lives in the struct). One generic decoder, encoder, equality
   and walker run over these tables, so a field listed once is read, written,
   compared and visited alike. Fields not in a table are skipped on read and
   so dropped on write. */

enum {
  MGOPT__OF_I64,   /* int64 varint */
  MGOPT__OF_I32,   /* int32 varint (enums too) */
  MGOPT__OF_F32,   /* float, fixed32 */
  MGOPT__OF_STR,   /* string / bytes: mgopt_str */
  MGOPT__OF_MSG,   /* singular message: pointer, NULL when absent */
  MGOPT__OF_RI64,  /* repeated int64: int64_t *, count */
  MGOPT__OF_RI32,  /* repeated int32 */
  MGOPT__OF_RU64,  /* repeated uint64 */
  MGOPT__OF_RF32,  /* repeated float */
  MGOPT__OF_RF64,  /* repeated double */
  MGOPT__OF_RSTR,  /* repeated string: mgopt_str * */
  MGOPT__OF_RMSG,  /* repeated message: array of structs */
  MGOPT__OF_RRAW,  /* repeated message kept as its bytes: mgopt_str * */
  MGOPT__OF_OTHER, /* its presence turns the whole message into raw bytes (TypeProto kinds) */
  MGOPT__OF_REJECT /* its presence is an error (TensorProto.segment) */
};

#define MGOPT__OFL_INTERN 1u /* strings: interned in the program */
#define MGOPT__OFL_PACKED 2u /* repeated scalars: written packed */


typedef struct mgopt__onnx_field {
  uint32_t num;
  uint8_t kind;
  uint8_t flags;
  int8_t has_bit;  /* singular fields: bit in the struct's `has` word, -1 = none */
  uint8_t sub;     /* MSG / RMSG: message id */
  const char *name;
  size_t off;      /* the value, or the array pointer */
  size_t count_off; /* repeated: the int64_t count */
} mgopt__onnx_field;

#define MGOPT__ONONE ((size_t)-1)

typedef struct mgopt__onnx_msg {
  const char *name;
  size_t size;
  size_t has_off;    /* MGOPT__ONONE: no `has` word */
  size_t other_off;  /* MGOPT__ONONE: no raw form */
  const mgopt__onnx_field *fields; /* sorted by field number */
  int32_t nfields;
} mgopt__onnx_msg;

#define MGOPT__OS(num, kind, fl, hb, sub, T, m, nm) \
  { num, MGOPT__OF_##kind, fl, hb, sub, nm, offsetof(T, m), 0 }
#define MGOPT__OR(num, kind, fl, sub, T, m, cnt, nm) \
  { num, MGOPT__OF_##kind, fl, -1, sub, nm, offsetof(T, m), offsetof(T, cnt) }
#define MGOPT__OI MGOPT__OFL_INTERN
#define MGOPT__OP MGOPT__OFL_PACKED

static const mgopt__onnx_field mgopt__onnx_f_strstr[] = {
    MGOPT__OS(1, STR, 0, 0, 0, mgopt_onnx_strstr, key, "key"),
    MGOPT__OS(2, STR, 0, 1, 0, mgopt_onnx_strstr, value, "value")};
static const mgopt__onnx_field mgopt__onnx_f_opset[] = {
    MGOPT__OS(1, STR, MGOPT__OI, 0, 0, mgopt_onnx_opset, domain, "domain"),
    MGOPT__OS(2, I64, 0, 1, 0, mgopt_onnx_opset, version, "version")};
static const mgopt__onnx_field mgopt__onnx_f_dim[] = {
    MGOPT__OS(1, I64, 0, 0, 0, mgopt_onnx_dim, value, "dim_value"),
    MGOPT__OS(2, STR, MGOPT__OI, 1, 0, mgopt_onnx_dim, param, "dim_param"),
    MGOPT__OS(3, STR, 0, 2, 0, mgopt_onnx_dim, denotation, "denotation")};
static const mgopt__onnx_field mgopt__onnx_f_shape[] = {
    MGOPT__OR(1, RMSG, 0, MGOPT__OM_DIM, mgopt_onnx_shape, dims, ndims, "dim")};
static const mgopt__onnx_field mgopt__onnx_f_ttype[] = {
    MGOPT__OS(1, I32, 0, 0, 0, mgopt_onnx_tensor_type, elem_type, "elem_type"),
    MGOPT__OS(2, MSG, 0, -1, MGOPT__OM_SHAPE, mgopt_onnx_tensor_type, shape, "shape")};
static const mgopt__onnx_field mgopt__onnx_f_type[] = {
    MGOPT__OS(1, MSG, 0, -1, MGOPT__OM_TTYPE, mgopt_onnx_type, tensor_type, "tensor_type"),
    MGOPT__OS(4, OTHER, 0, -1, 0, mgopt_onnx_type, other, "sequence_type"),
    MGOPT__OS(5, OTHER, 0, -1, 0, mgopt_onnx_type, other, "map_type"),
    MGOPT__OS(6, STR, 0, -1, 0, mgopt_onnx_type, denotation, "denotation"),
    MGOPT__OS(7, OTHER, 0, -1, 0, mgopt_onnx_type, other, "opaque_type"),
    MGOPT__OS(8, OTHER, 0, -1, 0, mgopt_onnx_type, other, "sparse_tensor_type"),
    MGOPT__OS(9, OTHER, 0, -1, 0, mgopt_onnx_type, other, "optional_type")};
static const mgopt__onnx_field mgopt__onnx_f_value_info[] = {
    MGOPT__OS(1, STR, MGOPT__OI, 0, 0, mgopt_onnx_value_info, name, "name"),
    MGOPT__OS(2, MSG, 0, -1, MGOPT__OM_TYPE, mgopt_onnx_value_info, type, "type"),
    MGOPT__OS(3, STR, 0, 1, 0, mgopt_onnx_value_info, doc_string, "doc_string"),
    MGOPT__OR(4, RMSG, 0, MGOPT__OM_STRSTR, mgopt_onnx_value_info, metadata_props, nmetadata_props,
              "metadata_props")};
static const mgopt__onnx_field mgopt__onnx_f_tensor[] = {
    MGOPT__OR(1, RI64, 0, 0, mgopt_onnx_tensor, dims, ndims, "dims"),
    MGOPT__OS(2, I32, 0, 0, 0, mgopt_onnx_tensor, data_type, "data_type"),
    MGOPT__OS(3, REJECT, 0, -1, 0, mgopt_onnx_tensor, dims, "segment"),
    MGOPT__OR(4, RF32, MGOPT__OP, 0, mgopt_onnx_tensor, float_data, nfloat_data, "float_data"),
    MGOPT__OR(5, RI32, MGOPT__OP, 0, mgopt_onnx_tensor, int32_data, nint32_data, "int32_data"),
    MGOPT__OR(6, RSTR, 0, 0, mgopt_onnx_tensor, string_data, nstring_data, "string_data"),
    MGOPT__OR(7, RI64, MGOPT__OP, 0, mgopt_onnx_tensor, int64_data, nint64_data, "int64_data"),
    MGOPT__OS(8, STR, MGOPT__OI, 2, 0, mgopt_onnx_tensor, name, "name"),
    MGOPT__OS(9, STR, 0, 1, 0, mgopt_onnx_tensor, raw_data, "raw_data"),
    MGOPT__OR(10, RF64, MGOPT__OP, 0, mgopt_onnx_tensor, double_data, ndouble_data, "double_data"),
    MGOPT__OR(11, RU64, MGOPT__OP, 0, mgopt_onnx_tensor, uint64_data, nuint64_data, "uint64_data"),
    MGOPT__OS(12, STR, 0, 3, 0, mgopt_onnx_tensor, doc_string, "doc_string"),
    MGOPT__OR(13, RMSG, 0, MGOPT__OM_STRSTR, mgopt_onnx_tensor, external_data, nexternal_data,
              "external_data"),
    MGOPT__OS(14, I32, 0, 4, 0, mgopt_onnx_tensor, data_location, "data_location"),
    MGOPT__OR(16, RMSG, 0, MGOPT__OM_STRSTR, mgopt_onnx_tensor, metadata_props, nmetadata_props,
              "metadata_props")};
static const mgopt__onnx_field mgopt__onnx_f_sparse[] = {
    MGOPT__OS(1, MSG, 0, -1, MGOPT__OM_TENSOR, mgopt_onnx_sparse_tensor, values, "values"),
    MGOPT__OS(2, MSG, 0, -1, MGOPT__OM_TENSOR, mgopt_onnx_sparse_tensor, indices, "indices"),
    MGOPT__OR(3, RI64, 0, 0, mgopt_onnx_sparse_tensor, dims, ndims, "dims")};
static const mgopt__onnx_field mgopt__onnx_f_attr[] = {
    MGOPT__OS(1, STR, MGOPT__OI, 4, 0, mgopt_onnx_attribute, name, "name"),
    MGOPT__OS(2, F32, 0, 0, 0, mgopt_onnx_attribute, f, "f"),
    MGOPT__OS(3, I64, 0, 1, 0, mgopt_onnx_attribute, i, "i"),
    MGOPT__OS(4, STR, 0, 2, 0, mgopt_onnx_attribute, s, "s"),
    MGOPT__OS(5, MSG, 0, -1, MGOPT__OM_TENSOR, mgopt_onnx_attribute, t, "t"),
    MGOPT__OS(6, MSG, 0, -1, MGOPT__OM_GRAPH, mgopt_onnx_attribute, g, "g"),
    MGOPT__OR(7, RF32, 0, 0, mgopt_onnx_attribute, floats, nfloats, "floats"),
    MGOPT__OR(8, RI64, 0, 0, mgopt_onnx_attribute, ints, nints, "ints"),
    MGOPT__OR(9, RSTR, 0, 0, mgopt_onnx_attribute, strings, nstrings, "strings"),
    MGOPT__OR(10, RMSG, 0, MGOPT__OM_TENSOR, mgopt_onnx_attribute, tensors, ntensors, "tensors"),
    MGOPT__OR(11, RMSG, 0, MGOPT__OM_GRAPH, mgopt_onnx_attribute, graphs, ngraphs, "graphs"),
    MGOPT__OS(13, STR, 0, 5, 0, mgopt_onnx_attribute, doc_string, "doc_string"),
    MGOPT__OS(14, MSG, 0, -1, MGOPT__OM_TYPE, mgopt_onnx_attribute, tp, "tp"),
    MGOPT__OR(15, RMSG, 0, MGOPT__OM_TYPE, mgopt_onnx_attribute, type_protos, ntype_protos,
              "type_protos"),
    MGOPT__OS(20, I32, 0, 3, 0, mgopt_onnx_attribute, type, "type"),
    MGOPT__OS(21, STR, MGOPT__OI, 6, 0, mgopt_onnx_attribute, ref_attr_name, "ref_attr_name"),
    MGOPT__OS(22, MSG, 0, -1, MGOPT__OM_SPARSE, mgopt_onnx_attribute, sparse_tensor, "sparse_tensor"),
    MGOPT__OR(23, RMSG, 0, MGOPT__OM_SPARSE, mgopt_onnx_attribute, sparse_tensors, nsparse_tensors,
              "sparse_tensors")};
static const mgopt__onnx_field mgopt__onnx_f_node[] = {
    MGOPT__OR(1, RSTR, MGOPT__OI, 0, mgopt_onnx_node, inputs, ninputs, "input"),
    MGOPT__OR(2, RSTR, MGOPT__OI, 0, mgopt_onnx_node, outputs, noutputs, "output"),
    MGOPT__OS(3, STR, MGOPT__OI, 0, 0, mgopt_onnx_node, name, "name"),
    MGOPT__OS(4, STR, MGOPT__OI, 1, 0, mgopt_onnx_node, op_type, "op_type"),
    MGOPT__OR(5, RMSG, 0, MGOPT__OM_ATTR, mgopt_onnx_node, attributes, nattributes, "attribute"),
    MGOPT__OS(6, STR, 0, 2, 0, mgopt_onnx_node, doc_string, "doc_string"),
    MGOPT__OS(7, STR, MGOPT__OI, 3, 0, mgopt_onnx_node, domain, "domain"),
    MGOPT__OS(8, STR, MGOPT__OI, 4, 0, mgopt_onnx_node, overload, "overload"),
    MGOPT__OR(9, RMSG, 0, MGOPT__OM_STRSTR, mgopt_onnx_node, metadata_props, nmetadata_props,
              "metadata_props")};
static const mgopt__onnx_field mgopt__onnx_f_graph[] = {
    MGOPT__OR(1, RMSG, 0, MGOPT__OM_NODE, mgopt_onnx_graph, nodes, nnodes, "node"),
    MGOPT__OS(2, STR, MGOPT__OI, 0, 0, mgopt_onnx_graph, name, "name"),
    MGOPT__OR(5, RMSG, 0, MGOPT__OM_TENSOR, mgopt_onnx_graph, initializers, ninitializers,
              "initializer"),
    MGOPT__OS(10, STR, 0, 1, 0, mgopt_onnx_graph, doc_string, "doc_string"),
    MGOPT__OR(11, RMSG, 0, MGOPT__OM_VALUE_INFO, mgopt_onnx_graph, inputs, ninputs, "input"),
    MGOPT__OR(12, RMSG, 0, MGOPT__OM_VALUE_INFO, mgopt_onnx_graph, outputs, noutputs, "output"),
    MGOPT__OR(13, RMSG, 0, MGOPT__OM_VALUE_INFO, mgopt_onnx_graph, value_info, nvalue_info,
              "value_info"),
    MGOPT__OR(14, RRAW, 0, 0, mgopt_onnx_graph, quantization_annotation, nquantization_annotation,
              "quantization_annotation"),
    MGOPT__OR(15, RMSG, 0, MGOPT__OM_SPARSE, mgopt_onnx_graph, sparse_initializers,
              nsparse_initializers, "sparse_initializer"),
    MGOPT__OR(16, RMSG, 0, MGOPT__OM_STRSTR, mgopt_onnx_graph, metadata_props, nmetadata_props,
              "metadata_props")};
static const mgopt__onnx_field mgopt__onnx_f_function[] = {
    MGOPT__OS(1, STR, MGOPT__OI, 0, 0, mgopt_onnx_function, name, "name"),
    MGOPT__OR(4, RSTR, MGOPT__OI, 0, mgopt_onnx_function, inputs, ninputs, "input"),
    MGOPT__OR(5, RSTR, MGOPT__OI, 0, mgopt_onnx_function, outputs, noutputs, "output"),
    MGOPT__OR(6, RSTR, MGOPT__OI, 0, mgopt_onnx_function, attributes, nattributes, "attribute"),
    MGOPT__OR(7, RMSG, 0, MGOPT__OM_NODE, mgopt_onnx_function, nodes, nnodes, "node"),
    MGOPT__OS(8, STR, 0, 1, 0, mgopt_onnx_function, doc_string, "doc_string"),
    MGOPT__OR(9, RMSG, 0, MGOPT__OM_OPSET, mgopt_onnx_function, opset_imports, nopset_imports,
              "opset_import"),
    MGOPT__OS(10, STR, MGOPT__OI, 2, 0, mgopt_onnx_function, domain, "domain"),
    MGOPT__OR(11, RMSG, 0, MGOPT__OM_ATTR, mgopt_onnx_function, attribute_protos, nattribute_protos,
              "attribute_proto"),
    MGOPT__OR(12, RMSG, 0, MGOPT__OM_VALUE_INFO, mgopt_onnx_function, value_info, nvalue_info,
              "value_info"),
    MGOPT__OS(13, STR, MGOPT__OI, 3, 0, mgopt_onnx_function, overload, "overload"),
    MGOPT__OR(14, RMSG, 0, MGOPT__OM_STRSTR, mgopt_onnx_function, metadata_props, nmetadata_props,
              "metadata_props")};
static const mgopt__onnx_field mgopt__onnx_f_model[] = {
    MGOPT__OS(1, I64, 0, 0, 0, mgopt_onnx_model, ir_version, "ir_version"),
    MGOPT__OS(2, STR, 0, 1, 0, mgopt_onnx_model, producer_name, "producer_name"),
    MGOPT__OS(3, STR, 0, 2, 0, mgopt_onnx_model, producer_version, "producer_version"),
    MGOPT__OS(4, STR, 0, 3, 0, mgopt_onnx_model, domain, "domain"),
    MGOPT__OS(5, I64, 0, 4, 0, mgopt_onnx_model, model_version, "model_version"),
    MGOPT__OS(6, STR, 0, 5, 0, mgopt_onnx_model, doc_string, "doc_string"),
    MGOPT__OS(7, MSG, 0, -1, MGOPT__OM_GRAPH, mgopt_onnx_model, graph, "graph"),
    MGOPT__OR(8, RMSG, 0, MGOPT__OM_OPSET, mgopt_onnx_model, opset_imports, nopset_imports,
              "opset_import"),
    MGOPT__OR(14, RMSG, 0, MGOPT__OM_STRSTR, mgopt_onnx_model, metadata_props, nmetadata_props,
              "metadata_props"),
    MGOPT__OR(20, RRAW, 0, 0, mgopt_onnx_model, training_info, ntraining_info, "training_info"),
    MGOPT__OR(25, RMSG, 0, MGOPT__OM_FUNCTION, mgopt_onnx_model, functions, nfunctions, "functions")};

#define MGOPT__OMSG(nm, T, tab, has, other) \
  { nm, sizeof(T), has, other, tab, MGOPT__ARRAY_COUNT(tab) }
#define MGOPT__OHAS(T) offsetof(T, has)

static const mgopt__onnx_msg mgopt__onnx_msgs[MGOPT__OM__COUNT] = {
    MGOPT__OMSG("StringStringEntryProto", mgopt_onnx_strstr, mgopt__onnx_f_strstr,
                MGOPT__OHAS(mgopt_onnx_strstr), MGOPT__ONONE),
    MGOPT__OMSG("OperatorSetIdProto", mgopt_onnx_opset, mgopt__onnx_f_opset,
                MGOPT__OHAS(mgopt_onnx_opset), MGOPT__ONONE),
    MGOPT__OMSG("Dimension", mgopt_onnx_dim, mgopt__onnx_f_dim, MGOPT__OHAS(mgopt_onnx_dim),
                MGOPT__ONONE),
    MGOPT__OMSG("TensorShapeProto", mgopt_onnx_shape, mgopt__onnx_f_shape, MGOPT__ONONE,
                MGOPT__ONONE),
    MGOPT__OMSG("TypeProto.Tensor", mgopt_onnx_tensor_type, mgopt__onnx_f_ttype,
                MGOPT__OHAS(mgopt_onnx_tensor_type), MGOPT__ONONE),
    MGOPT__OMSG("TypeProto", mgopt_onnx_type, mgopt__onnx_f_type, MGOPT__ONONE,
                offsetof(mgopt_onnx_type, other)),
    MGOPT__OMSG("ValueInfoProto", mgopt_onnx_value_info, mgopt__onnx_f_value_info,
                MGOPT__OHAS(mgopt_onnx_value_info), MGOPT__ONONE),
    MGOPT__OMSG("TensorProto", mgopt_onnx_tensor, mgopt__onnx_f_tensor,
                MGOPT__OHAS(mgopt_onnx_tensor), MGOPT__ONONE),
    MGOPT__OMSG("SparseTensorProto", mgopt_onnx_sparse_tensor, mgopt__onnx_f_sparse, MGOPT__ONONE,
                MGOPT__ONONE),
    MGOPT__OMSG("AttributeProto", mgopt_onnx_attribute, mgopt__onnx_f_attr,
                MGOPT__OHAS(mgopt_onnx_attribute), MGOPT__ONONE),
    MGOPT__OMSG("NodeProto", mgopt_onnx_node, mgopt__onnx_f_node, MGOPT__OHAS(mgopt_onnx_node),
                MGOPT__ONONE),
    MGOPT__OMSG("GraphProto", mgopt_onnx_graph, mgopt__onnx_f_graph, MGOPT__OHAS(mgopt_onnx_graph),
                MGOPT__ONONE),
    MGOPT__OMSG("FunctionProto", mgopt_onnx_function, mgopt__onnx_f_function,
                MGOPT__OHAS(mgopt_onnx_function), MGOPT__ONONE),
    MGOPT__OMSG("ModelProto", mgopt_onnx_model, mgopt__onnx_f_model, MGOPT__OHAS(mgopt_onnx_model),
                MGOPT__ONONE)};

#define MGOPT__ONNX_MAX_FIELDS 24
/* Message nesting allowed for a given subgraph depth limit: a graph level
   costs 3 (graph, node, attribute); a value's type adds 5 below a graph. */
#define MGOPT__ONNX_MSG_DEPTH(graph_depth) ((graph_depth) * 3 + 12)
/* The encoder, equality and walker bound their recursion too (trees built by
   hand may be deep or cyclic). */
#define MGOPT__ONNX_TREE_DEPTH 1024 /* message nesting (a subgraph adds 3 levels); bounds the recursion */

/* ---------------------------------------------------------------- data types */

/* Per ONNX data type: bits per element in raw_data (0 = not allowed), the
   typed field that holds it (its field number), values per element in that
   field (2 for complex), and 1 when two elements share one int32_data entry. */
typedef struct mgopt__onnx_dtinfo {
  uint8_t bits, field, per_elem, half;
  uint8_t mg; /* mgopt_dtype */
} mgopt__onnx_dtinfo;

static const mgopt__onnx_dtinfo mgopt__onnx_dt[MGOPT_ONNX_DT__COUNT] = {
    {0, 0, 0, 0, MGOPT_DT_UNKNOWN},        /* UNDEFINED */
    {32, 4, 1, 0, MGOPT_DT_FP32},          /* FLOAT */
    {8, 5, 1, 0, MGOPT_DT_UINT8},          /* UINT8 */
    {8, 5, 1, 0, MGOPT_DT_INT8},           /* INT8 */
    {16, 5, 1, 0, MGOPT_DT_UINT16},        /* UINT16 */
    {16, 5, 1, 0, MGOPT_DT_INT16},         /* INT16 */
    {32, 5, 1, 0, MGOPT_DT_INT32},         /* INT32 */
    {64, 7, 1, 0, MGOPT_DT_INT64},         /* INT64 */
    {0, 6, 1, 0, MGOPT_DT_STRING},         /* STRING */
    {8, 5, 1, 0, MGOPT_DT_BOOL},           /* BOOL */
    {16, 5, 1, 0, MGOPT_DT_FP16},          /* FLOAT16 */
    {64, 10, 1, 0, MGOPT_DT_FP64},         /* DOUBLE */
    {32, 11, 1, 0, MGOPT_DT_UINT32},       /* UINT32 */
    {64, 11, 1, 0, MGOPT_DT_UINT64},       /* UINT64 */
    {64, 4, 2, 0, MGOPT_DT_COMPLEX64},     /* COMPLEX64 */
    {128, 10, 2, 0, MGOPT_DT_COMPLEX128},  /* COMPLEX128 */
    {16, 5, 1, 0, MGOPT_DT_BF16},          /* BFLOAT16 */
    {8, 5, 1, 0, MGOPT_DT_FP8E4M3FN},      /* FLOAT8E4M3FN */
    {8, 5, 1, 0, MGOPT_DT_FP8E4M3FNUZ},    /* FLOAT8E4M3FNUZ */
    {8, 5, 1, 0, MGOPT_DT_FP8E5M2},        /* FLOAT8E5M2 */
    {8, 5, 1, 0, MGOPT_DT_FP8E5M2FNUZ},    /* FLOAT8E5M2FNUZ */
    {4, 5, 1, 1, MGOPT_DT_UINT4X},         /* UINT4 */
    {4, 5, 1, 1, MGOPT_DT_INT4X},          /* INT4 */
    {4, 5, 1, 1, MGOPT_DT_UNKNOWN},        /* FLOAT4E2M1 */
    {8, 5, 1, 0, MGOPT_DT_UNKNOWN}};       /* FLOAT8E8M0 */

MGOPTDEF mgopt_dtype mgopt_onnx_dtype(int32_t t) {
  if (t <= 0 || t >= MGOPT_ONNX_DT__COUNT) return MGOPT_DT_UNKNOWN;
  return (mgopt_dtype)mgopt__onnx_dt[t].mg;
}

MGOPTDEF int64_t mgopt_onnx_raw_nbytes(int32_t t, int64_t numel) {
  int64_t bits;
  if (t <= 0 || t >= MGOPT_ONNX_DT__COUNT || numel < 0) return -1;
  if (!mgopt__onnx_dt[t].bits) return -1;
  if (!mgopt__mul_i64(numel, (int64_t)mgopt__onnx_dt[t].bits, &bits)) return -1;
  return bits / 8 + (bits % 8 ? 1 : 0);
}

/* ---------------------------------------------------------------- paths

   A chain of frames on the C stack names where the decoder (or the equality
   check) is: "ModelProto.graph.node[3].attribute[1]". */
typedef struct mgopt__onnx_frame {
  const struct mgopt__onnx_frame *up;
  const char *name;
  int64_t index; /* -1: not an element of a repeated field */
} mgopt__onnx_frame;

static void mgopt__onnx_path(const mgopt__onnx_frame *fr, char *out, size_t cap) {
  const mgopt__onnx_frame *st[64];
  int n = 0, i, cut = 0;
  size_t len = 0;
  if (!cap) return;
  out[0] = 0;
  for (; fr; fr = fr->up) {
    if (n == 64) {
      cut = 1;
      break;
    }
    st[n++] = fr;
  }
  if (cut) len += (size_t)snprintf(out, cap, "...");
  for (i = n - 1; i >= 0 && len < cap; i--) {
    int k;
    const char *dot = (len == 0) ? "" : ".";
    if (st[i]->index >= 0)
      k = snprintf(out + len, cap - len, "%s%s[%lld]", dot, st[i]->name, (long long)st[i]->index);
    else
      k = snprintf(out + len, cap - len, "%s%s", dot, st[i]->name);
    if (k < 0) break;
    len += (size_t)k;
  }
}

/* ---------------------------------------------------------------- decoder */

typedef struct mgopt__onnxd {
  mgopt_program *p;
  const uint8_t *b;
  size_t len;
  mgopt_diag *d;
  int max_depth, graph_depth, max_msg_depth;
  int64_t max_elements, total_elements;
} mgopt__onnxd;

static mgopt_status mgopt__onnxd_fail(mgopt__onnxd *D, const mgopt__onnx_frame *fr, size_t off,
                                      mgopt_status s, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static mgopt_status mgopt__onnxd_fail(mgopt__onnxd *D, const mgopt__onnx_frame *fr, size_t off,
                                      mgopt_status s, const char *fmt, ...) {
  char path[200], what[200];
  va_list ap;
  if (!D->d) return s;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  mgopt__onnx_path(fr, path, sizeof path);
  D->d->offset = (int64_t)off;
  D->d->line = D->d->col = 0;
  return mgopt_diag_set(D->d, s, "%s: %s", path, what);
}

/* A name (interned: value, node, attribute, op type, domain, dim_param) with a
   NUL byte: the C API sees names up to their first NUL, so "a\0b" would be
   taken for "a" (another value, another op type). Such a file is refused. */
static mgopt_status mgopt__onnxd_nul(mgopt__onnxd *D, const mgopt__onnx_frame *fr, size_t off) {
  return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT, "a NUL byte inside a name");
}

static mgopt_status mgopt__onnxd_pbfail(mgopt__onnxd *D, const mgopt__onnx_frame *fr, size_t off,
                                        int r, const char *what) {
  if (r == MGOPT__PB_PASTEND) {
    /* re-read the declared length to report it */
    uint64_t v = 0;
    size_t p = off;
    mgopt__pb_varint(D->b, &p, D->len, &v);
    return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT,
                             "%s: length %llu past end (%llu bytes left)", what,
                             (unsigned long long)v, (unsigned long long)(D->len - p));
  }
  return mgopt__onnxd_fail(D, fr, off, r == MGOPT__PB_GROUP ? MGOPT_ERR_UNSUPPORTED : MGOPT_ERR_CORRUPT,
                           "%s: %s", what, mgopt__pb_err_str(r));
}

static int mgopt__onnx_find(const mgopt__onnx_msg *M, uint32_t num) {
  int32_t i;
  for (i = 0; i < M->nfields; i++)
    if (M->fields[i].num == num) return (int)i;
  return -1;
}

/* The wire types a field accepts: its own, and LEN for repeated scalars (packed). */
static int mgopt__onnx_wire_ok(int kind, int wt, int *expect) {
  switch (kind) {
  case MGOPT__OF_I64:
  case MGOPT__OF_I32: *expect = MGOPT__PB_VARINT; return wt == MGOPT__PB_VARINT;
  case MGOPT__OF_F32: *expect = MGOPT__PB_FIXED32; return wt == MGOPT__PB_FIXED32;
  case MGOPT__OF_RI64:
  case MGOPT__OF_RI32:
  case MGOPT__OF_RU64: *expect = MGOPT__PB_VARINT; return wt == MGOPT__PB_VARINT || wt == MGOPT__PB_LEN;
  case MGOPT__OF_RF32: *expect = MGOPT__PB_FIXED32; return wt == MGOPT__PB_FIXED32 || wt == MGOPT__PB_LEN;
  case MGOPT__OF_RF64: *expect = MGOPT__PB_FIXED64; return wt == MGOPT__PB_FIXED64 || wt == MGOPT__PB_LEN;
  default: *expect = MGOPT__PB_LEN; return wt == MGOPT__PB_LEN;
  }
}

static size_t mgopt__onnx_elem_size(const mgopt__onnx_field *f) {
  switch (f->kind) {
  case MGOPT__OF_RI64: return sizeof(int64_t);
  case MGOPT__OF_RI32: return sizeof(int32_t);
  case MGOPT__OF_RU64: return sizeof(uint64_t);
  case MGOPT__OF_RF32: return sizeof(float);
  case MGOPT__OF_RF64: return sizeof(double);
  case MGOPT__OF_RSTR:
  case MGOPT__OF_RRAW: return sizeof(mgopt_str);
  case MGOPT__OF_RMSG: return mgopt__onnx_msgs[f->sub].size;
  default: return 0;
  }
}

static int32_t mgopt__onnx_i32(uint64_t v) {
  uint32_t u = (uint32_t)v;
  return u <= 0x7fffffffu ? (int32_t)u : (int32_t)(u - 0x80000000u) - INT32_MAX - 1;
}

#define MGOPT__ONNX_AT(obj, off, T) ((T *)(void *)((char *)(obj) + (off)))
#define MGOPT__ONNX_CAT(obj, off, T) ((const T *)(const void *)((const char *)(obj) + (off)))

static mgopt_status mgopt__onnxd_tensor(mgopt__onnxd *D, mgopt_onnx_tensor *t,
                                        const mgopt__onnx_frame *fr, size_t off);

static mgopt_status mgopt__onnxd_msg(mgopt__onnxd *D, int mid, void *obj, size_t start, size_t end,
                                     const mgopt__onnx_frame *fr, int depth);

/* Stores one scalar element of a repeated field. */
static void mgopt__onnxd_put(const mgopt__onnx_field *f, void *obj, int64_t idx, uint64_t v) {
  void *arr = *MGOPT__ONNX_AT(obj, f->off, void *);
  switch (f->kind) {
  case MGOPT__OF_RI64: ((int64_t *)arr)[idx] = (int64_t)v; break;
  case MGOPT__OF_RI32: ((int32_t *)arr)[idx] = mgopt__onnx_i32(v); break;
  case MGOPT__OF_RU64: ((uint64_t *)arr)[idx] = v; break;
  case MGOPT__OF_RF32: {
    uint32_t u = (uint32_t)v;
    memcpy((float *)arr + idx, &u, 4);
    break;
  }
  case MGOPT__OF_RF64: memcpy((double *)arr + idx, &v, 8); break;
  default: break;
  }
}

static int mgopt__onnxd_scalar(int kind, const uint8_t *b, size_t *pos, size_t end, uint64_t *v) {
  uint32_t u;
  int r;
  switch (kind) {
  case MGOPT__OF_RF32:
    r = mgopt__pb_fixed32(b, pos, end, &u);
    *v = u;
    return r;
  case MGOPT__OF_RF64: return mgopt__pb_fixed64(b, pos, end, v);
  default: return mgopt__pb_varint(b, pos, end, v);
  }
}

static mgopt_status mgopt__onnxd_body(mgopt__onnxd *D, int mid, void *obj, size_t start, size_t end,
                                      const mgopt__onnx_frame *fr, int depth) {
  const mgopt__onnx_msg *M = &mgopt__onnx_msgs[mid];
  const uint8_t *b = D->b;
  int64_t cnt[MGOPT__ONNX_MAX_FIELDS];
  size_t pos, ps, pl;
  int other = 0, r, i;
  uint32_t num = 0;
  int wt = 0;
  mgopt_status st;

  /* pass 1: check the structure of this level, count repeated fields
     (only this message's counters are cleared: most messages have few) */
  for (i = 0; i < M->nfields; i++) cnt[i] = 0;
  pos = start;
  while (pos < end) {
    size_t kpos = pos;
    int fi, expect;
    r = mgopt__pb_key(b, &pos, end, &num, &wt);
    if (r == MGOPT__PB_OK && num == 0)
      return mgopt__onnxd_fail(D, fr, kpos, MGOPT_ERR_CORRUPT, "invalid field number 0");
    if (r == MGOPT__PB_GROUP)
      return mgopt__onnxd_fail(D, fr, kpos, MGOPT_ERR_UNSUPPORTED,
                               "field %u: protobuf groups are not supported", (unsigned)num);
    if (r == MGOPT__PB_BADWIRE)
      return mgopt__onnxd_fail(D, fr, kpos, MGOPT_ERR_CORRUPT, "field %u: invalid wire type %d",
                               (unsigned)num, wt);
    if (r) return mgopt__onnxd_pbfail(D, fr, kpos, r, "field key");
    fi = mgopt__onnx_find(M, num);
    if (fi >= 0) {
      const mgopt__onnx_field *f = &M->fields[fi];
      mgopt__onnx_frame sub;
      sub.up = fr;
      sub.name = f->name;
      sub.index = -1;
      if (!mgopt__onnx_wire_ok(f->kind, wt, &expect))
        return mgopt__onnxd_fail(D, &sub, kpos, MGOPT_ERR_CORRUPT, "wrong wire type %d (expected %d)",
                                 wt, expect);
      if (f->kind == MGOPT__OF_REJECT)
        return mgopt__onnxd_fail(D, &sub, kpos, MGOPT_ERR_UNSUPPORTED,
                                 "segmented tensors are not supported");
      {
        size_t vpos = pos;
        r = mgopt__pb_skip(b, &pos, end, wt, &ps, &pl);
        if (r) return mgopt__onnxd_pbfail(D, &sub, vpos, r, "value");
      }
      switch (f->kind) {
      case MGOPT__OF_OTHER: other = 1; break;
      case MGOPT__OF_MSG:
        if (cnt[fi]++)
          return mgopt__onnxd_fail(D, &sub, kpos, MGOPT_ERR_CORRUPT,
                                   "message field appears twice (merging is not supported)");
        break;
      case MGOPT__OF_RI64:
      case MGOPT__OF_RI32:
      case MGOPT__OF_RU64:
        if (wt == MGOPT__PB_LEN) {
          size_t k;
          for (k = ps; k < ps + pl; k++) cnt[fi] += !(b[k] & 0x80);
        } else {
          cnt[fi]++;
        }
        break;
      case MGOPT__OF_RF32:
      case MGOPT__OF_RF64: {
        size_t w = f->kind == MGOPT__OF_RF32 ? 4 : 8;
        if (wt == MGOPT__PB_LEN) {
          if (pl % w)
            return mgopt__onnxd_fail(D, &sub, ps, MGOPT_ERR_CORRUPT,
                                     "packed length %llu is not a multiple of %d",
                                     (unsigned long long)pl, (int)w);
          cnt[fi] += (int64_t)(pl / w);
        } else {
          cnt[fi]++;
        }
        break;
      }
      case MGOPT__OF_RSTR:
      case MGOPT__OF_RMSG:
      case MGOPT__OF_RRAW: cnt[fi]++; break;
      default: break;
      }
    } else {
      size_t vpos = pos;
      r = mgopt__pb_skip(b, &pos, end, wt, &ps, &pl);
      if (r) {
        char what[48];
        snprintf(what, sizeof what, "unknown field %u", (unsigned)num);
        return mgopt__onnxd_pbfail(D, fr, vpos, r, what);
      }
    }
  }

  if (other && M->other_off != MGOPT__ONONE) {
    mgopt_str *o = MGOPT__ONNX_AT(obj, M->other_off, mgopt_str);
    o->ptr = (const char *)b + start;
    o->len = end - start;
    return MGOPT_OK;
  }

  /* allocate every repeated field at its exact size */
  for (i = 0; i < M->nfields; i++) {
    const mgopt__onnx_field *f = &M->fields[i];
    size_t es = mgopt__onnx_elem_size(f);
    void *arr;
    if (!es || !cnt[i]) continue;
    if ((uint64_t)cnt[i] > (uint64_t)(SIZE_MAX / es))
      return mgopt__onnxd_fail(D, fr, start, MGOPT_ERR_LIMIT, "%s: too many elements", f->name);
    arr = mgopt_program_alloc(D->p, (size_t)cnt[i] * es, 8);
    if (!arr) return mgopt__onnxd_fail(D, fr, start, MGOPT_ERR_NOMEM, "out of memory");
    *MGOPT__ONNX_AT(obj, f->off, void *) = arr;
    *MGOPT__ONNX_AT(obj, f->count_off, int64_t) = 0;
  }

  /* pass 2: decode values (the structure of this level is known good) */
  pos = start;
  while (pos < end) {
    const mgopt__onnx_field *f;
    mgopt__onnx_frame sub;
    uint64_t v = 0;
    int fi;
    size_t vpos;
    mgopt__pb_key(b, &pos, end, &num, &wt);
    vpos = pos;
    mgopt__pb_skip(b, &pos, end, wt, &ps, &pl);
    fi = mgopt__onnx_find(M, num);
    if (fi < 0) continue;
    f = &M->fields[fi];
    sub.up = fr;
    sub.name = f->name;
    sub.index = -1;
    if (f->has_bit >= 0 && M->has_off != MGOPT__ONONE)
      *MGOPT__ONNX_AT(obj, M->has_off, uint32_t) |= 1u << f->has_bit;
    switch (f->kind) {
    case MGOPT__OF_I64:
    case MGOPT__OF_I32: {
      size_t q = vpos;
      r = mgopt__pb_varint(b, &q, end, &v);
      if (r) return mgopt__onnxd_pbfail(D, &sub, vpos, r, "value");
      if (f->kind == MGOPT__OF_I64) *MGOPT__ONNX_AT(obj, f->off, int64_t) = (int64_t)v;
      else *MGOPT__ONNX_AT(obj, f->off, int32_t) = mgopt__onnx_i32(v);
      break;
    }
    case MGOPT__OF_F32: {
      uint32_t u;
      size_t q = vpos;
      mgopt__pb_fixed32(b, &q, end, &u);
      memcpy(MGOPT__ONNX_AT(obj, f->off, float), &u, 4);
      break;
    }
    case MGOPT__OF_STR: {
      mgopt_str *s = MGOPT__ONNX_AT(obj, f->off, mgopt_str);
      if (f->flags & MGOPT__OFL_INTERN) {
        if (pl && memchr(b + ps, 0, pl)) return mgopt__onnxd_nul(D, &sub, ps);
        s->ptr = mgopt_program_intern(D->p, (const char *)b + ps, pl);
        if (!s->ptr) return mgopt__onnxd_fail(D, &sub, ps, MGOPT_ERR_NOMEM, "out of memory");
      } else {
        s->ptr = (const char *)b + ps;
      }
      s->len = pl;
      break;
    }
    case MGOPT__OF_MSG: {
      void *child = mgopt_program_alloc(D->p, mgopt__onnx_msgs[f->sub].size, 8);
      if (!child) return mgopt__onnxd_fail(D, &sub, ps, MGOPT_ERR_NOMEM, "out of memory");
      *MGOPT__ONNX_AT(obj, f->off, void *) = child;
      st = mgopt__onnxd_msg(D, f->sub, child, ps, ps + pl, &sub, depth + 1);
      if (st) return st;
      break;
    }
    case MGOPT__OF_RI64:
    case MGOPT__OF_RI32:
    case MGOPT__OF_RU64:
    case MGOPT__OF_RF32:
    case MGOPT__OF_RF64: {
      int64_t *n = MGOPT__ONNX_AT(obj, f->count_off, int64_t);
      int idx_fi = fi;
      if (wt == MGOPT__PB_LEN) {
        size_t q = ps, e = ps + pl;
        while (q < e) {
          size_t epos = q;
          r = mgopt__onnxd_scalar(f->kind, b, &q, e, &v);
          if (r) return mgopt__onnxd_pbfail(D, &sub, epos, r, "packed element");
          if (*n >= cnt[idx_fi])
            return mgopt__onnxd_fail(D, &sub, epos, MGOPT_ERR_CORRUPT, "packed element count changed");
          mgopt__onnxd_put(f, obj, (*n)++, v);
        }
      } else {
        size_t q = vpos;
        r = mgopt__onnxd_scalar(f->kind, b, &q, end, &v);
        if (r) return mgopt__onnxd_pbfail(D, &sub, vpos, r, "value");
        mgopt__onnxd_put(f, obj, (*n)++, v);
      }
      break;
    }
    case MGOPT__OF_RSTR:
    case MGOPT__OF_RRAW: {
      int64_t *n = MGOPT__ONNX_AT(obj, f->count_off, int64_t);
      mgopt_str *s = *MGOPT__ONNX_AT(obj, f->off, mgopt_str *) + *n;
      if ((f->flags & MGOPT__OFL_INTERN)) {
        if (pl && memchr(b + ps, 0, pl)) return mgopt__onnxd_nul(D, &sub, ps);
        s->ptr = mgopt_program_intern(D->p, (const char *)b + ps, pl);
        if (!s->ptr) return mgopt__onnxd_fail(D, &sub, ps, MGOPT_ERR_NOMEM, "out of memory");
      } else {
        s->ptr = (const char *)b + ps;
      }
      s->len = pl;
      (*n)++;
      break;
    }
    case MGOPT__OF_RMSG: {
      int64_t *n = MGOPT__ONNX_AT(obj, f->count_off, int64_t);
      char *child = *MGOPT__ONNX_AT(obj, f->off, char *) + (size_t)*n * mgopt__onnx_msgs[f->sub].size;
      sub.index = *n;
      (*n)++;
      st = mgopt__onnxd_msg(D, f->sub, child, ps, ps + pl, &sub, depth + 1);
      if (st) return st;
      break;
    }
    default: break;
    }
  }

  if (mid == MGOPT__OM_TENSOR) return mgopt__onnxd_tensor(D, (mgopt_onnx_tensor *)obj, fr, start);
  return MGOPT_OK;
}

static mgopt_status mgopt__onnxd_msg(mgopt__onnxd *D, int mid, void *obj, size_t start, size_t end,
                                     const mgopt__onnx_frame *fr, int depth) {
  mgopt_status st;
  if (depth > D->max_msg_depth)
    return mgopt__onnxd_fail(D, fr, start, MGOPT_ERR_LIMIT, "messages nested more than %d deep",
                             D->max_msg_depth);
  if (mid != MGOPT__OM_GRAPH) return mgopt__onnxd_body(D, mid, obj, start, end, fr, depth);
  if (D->graph_depth >= D->max_depth)
    return mgopt__onnxd_fail(D, fr, start, MGOPT_ERR_LIMIT, "subgraphs nested more than %d deep",
                             D->max_depth);
  D->graph_depth++;
  st = mgopt__onnxd_body(D, mid, obj, start, end, fr, depth);
  D->graph_depth--;
  return st;
}

static const char *const mgopt__onnx_typed_names[12] = {
    "", "", "", "", "float_data", "int32_data", "string_data", "int64_data",
    "", "", "double_data", "uint64_data"};

/* Checks a decoded tensor: known data type, dims, and exactly one data
   source whose element count matches dims. */
static mgopt_status mgopt__onnxd_tensor(mgopt__onnxd *D, mgopt_onnx_tensor *t,
                                        const mgopt__onnx_frame *fr, size_t off) {
  int64_t numel = 1, i, have_n = 0, want;
  int32_t dt = t->data_type;
  const mgopt__onnx_dtinfo *info;
  int nsrc = 0, field = 0;
  for (i = 0; i < t->ndims; i++) {
    if (t->dims[i] < 0)
      return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT, "negative dimension %lld",
                               (long long)t->dims[i]);
    if (!mgopt__mul_i64(numel, t->dims[i], &numel))
      return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_LIMIT, "element count overflows");
  }
  t->numel = numel;
  if (!mgopt__add_i64(D->total_elements, numel, &D->total_elements) ||
      D->total_elements > D->max_elements)
    return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_LIMIT,
                             "declared tensor elements exceed the limit of %lld",
                             (long long)D->max_elements);
  if (dt <= 0 || dt >= MGOPT_ONNX_DT__COUNT)
    return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_UNSUPPORTED, "unknown data type %d", (int)dt);
  info = &mgopt__onnx_dt[dt];
  if (t->data_location == MGOPT_ONNX_LOC_EXTERNAL) return MGOPT_OK; /* checked when loaded */
  if (t->data_location != MGOPT_ONNX_LOC_DEFAULT)
    return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT, "unknown data_location %d",
                             (int)t->data_location);
  if ((t->has & MGOPT_ONNX_TENSOR_HAS_RAW_DATA) || t->raw_data.len) nsrc++, field = 9;
  if (t->nfloat_data) nsrc++, field = 4, have_n = t->nfloat_data;
  if (t->nint32_data) nsrc++, field = 5, have_n = t->nint32_data;
  if (t->nstring_data) nsrc++, field = 6, have_n = t->nstring_data;
  if (t->nint64_data) nsrc++, field = 7, have_n = t->nint64_data;
  if (t->ndouble_data) nsrc++, field = 10, have_n = t->ndouble_data;
  if (t->nuint64_data) nsrc++, field = 11, have_n = t->nuint64_data;
  if (nsrc > 1)
    return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT, "data given in more than one field");
  if (field == 9) {
    int64_t nb = mgopt_onnx_raw_nbytes(dt, numel);
    if (!info->bits)
      return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT, "raw_data given for data type %d",
                               (int)dt);
    if (nb < 0 || (uint64_t)nb != (uint64_t)t->raw_data.len)
      return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT,
                               "raw_data has %llu bytes, dims and data type need %lld",
                               (unsigned long long)t->raw_data.len, (long long)nb);
    return MGOPT_OK;
  }
  if (field == 0) {
    if (numel != 0)
      return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT, "no data for %lld elements",
                               (long long)numel);
    return MGOPT_OK;
  }
  if (field != info->field)
    return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT, "%s given for data type %d",
                             mgopt__onnx_typed_names[field], (int)dt);
  if (info->half) want = numel / 2 + numel % 2;
  else if (!mgopt__mul_i64(numel, (int64_t)info->per_elem, &want))
    return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_LIMIT, "element count overflows");
  if (have_n != want)
    return mgopt__onnxd_fail(D, fr, off, MGOPT_ERR_CORRUPT, "%s has %lld values, dims need %lld",
                             mgopt__onnx_typed_names[field], (long long)have_n, (long long)want);
  return MGOPT_OK;
}

/* Decodes into an existing program (bytes must outlive it). NULL on error. */
/* Decodes into p's arena; *out is set only on success (p is the caller's to destroy either way). */
MGOPT__PRIVATE mgopt_status mgopt__onnx_read_into(mgopt_program *p, const uint8_t *buf, size_t len,
                                                  const mgopt_onnx_read_options *opts, mgopt_onnx_model **out,
                                                  mgopt_diag *d) {
  mgopt__onnxd D;
  mgopt__onnx_frame root;
  mgopt_onnx_model *m;
  mgopt_status s;
  memset(&D, 0, sizeof D);
  D.p = p;
  D.b = buf;
  D.len = len;
  D.d = d;
  D.max_depth = opts && opts->max_depth > 0 ? opts->max_depth : 64;
  if (D.max_depth > 100000) D.max_depth = 100000;
  D.max_msg_depth = MGOPT__ONNX_MSG_DEPTH(D.max_depth);
  D.max_elements = opts && opts->max_elements > 0 ? opts->max_elements : (int64_t)1 << 40;
  root.up = NULL;
  root.name = "ModelProto";
  root.index = -1;
  /* Every writer starts a ModelProto with one of its fields (ir_version
     first): any other first byte is a file of another kind (text, an image,
     another framework's model), said so rather than as a wire error deep in it. */
  if (len > 0) {
    uint8_t b0 = buf[0], b1 = len > 1 ? buf[1] : 0;
    int known = b0 == 0x08 || b0 == 0x12 || b0 == 0x1a || b0 == 0x22 || b0 == 0x28 || b0 == 0x32 ||
                b0 == 0x3a || b0 == 0x42 || b0 == 0x72 || ((b0 == 0xa2 || b0 == 0xca) && b1 == 0x01);
    if (!known) {
      if (d) d->offset = 0;
      return mgopt_diag_set(d, MGOPT_ERR_CORRUPT,
                            "not an ONNX model (byte 0: 0x%02x starts no ModelProto field)", (unsigned)b0);
    }
  }
  m = (mgopt_onnx_model *)mgopt_program_alloc(p, sizeof *m, 8);
  if (!m) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  s = mgopt__onnxd_msg(&D, MGOPT__OM_MODEL, m, 0, len, &root, 0);
  if (s != MGOPT_OK) return s;
  if (mgopt_program_status(p) != MGOPT_OK) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  m->program = p;
  m->constant_inputs = opts && opts->constant_inputs;
  *out = m;
  return MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_onnx_read(const void *buf, size_t len, const mgopt_onnx_read_options *opts,
                                     mgopt_onnx_model **out, mgopt_diag *d) {
  mgopt_program *p;
  mgopt_status s;
  mgopt_diag_clear(d);
  if (!out) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "out is NULL");
  if (!buf && len) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "NULL buffer");
  p = mgopt_program_create(opts ? opts->alloc : NULL);
  if (!p) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  s = mgopt__onnx_read_into(p, (const uint8_t *)buf, len, opts, out, d);
  if (s != MGOPT_OK) mgopt_program_destroy(p);
  return s;
}

/* ---------------------------------------------------------------- walking */

/* Calls fn on every message below obj (obj itself first), in field order.
   parent/field say how it was reached (-1/0 for the root). Stops when fn
   returns nonzero and returns that. */
MGOPT__PRIVATE int mgopt__onnx_walk(int mid, void *obj, int parent, uint32_t field,
                                    mgopt__onnx_visit_fn fn, void *ctx, int depth) {
  const mgopt__onnx_msg *M = &mgopt__onnx_msgs[mid];
  int32_t i;
  int r;
  if (depth > MGOPT__ONNX_TREE_DEPTH) return -1;
  r = fn(ctx, mid, obj, parent, field);
  if (r) return r;
  if (M->other_off != MGOPT__ONONE && MGOPT__ONNX_CAT(obj, M->other_off, mgopt_str)->len) return 0;
  for (i = 0; i < M->nfields; i++) {
    const mgopt__onnx_field *f = &M->fields[i];
    if (f->kind == MGOPT__OF_MSG) {
      void *c = *MGOPT__ONNX_AT(obj, f->off, void *);
      if (c && (r = mgopt__onnx_walk(f->sub, c, mid, f->num, fn, ctx, depth + 1)) != 0) return r;
    } else if (f->kind == MGOPT__OF_RMSG) {
      char *arr = *MGOPT__ONNX_AT(obj, f->off, char *);
      int64_t n = *MGOPT__ONNX_AT(obj, f->count_off, int64_t), k;
      size_t sz = mgopt__onnx_msgs[f->sub].size;
      for (k = 0; k < n; k++)
        if ((r = mgopt__onnx_walk(f->sub, arr + (size_t)k * sz, mid, f->num, fn, ctx, depth + 1)) != 0)
          return r;
    }
  }
  return 0;
}

/* ---------------------------------------------------------------- equality */

typedef struct mgopt__onnxq {
  char *where;
  size_t where_len;
} mgopt__onnxq;

static int mgopt__onnxq_diff(mgopt__onnxq *Q, const mgopt__onnx_frame *fr, const char *what) {
  if (Q->where && Q->where_len) {
    char path[256];
    mgopt__onnx_path(fr, path, sizeof path);
    snprintf(Q->where, Q->where_len, "%s%s%s", path, what[0] ? "." : "", what);
  }
  return 0;
}

static int mgopt__onnx_str_eq(const mgopt_str *a, const mgopt_str *b) {
  return a->len == b->len && (a->len == 0 || memcmp(a->ptr, b->ptr, a->len) == 0);
}

static int mgopt__onnxq_msg(mgopt__onnxq *Q, int mid, const void *a, const void *b,
                            const mgopt__onnx_frame *fr, int depth) {
  const mgopt__onnx_msg *M = &mgopt__onnx_msgs[mid];
  int32_t i;
  if (depth > MGOPT__ONNX_TREE_DEPTH) return mgopt__onnxq_diff(Q, fr, "(too deep)");
  if (M->has_off != MGOPT__ONONE &&
      *MGOPT__ONNX_CAT(a, M->has_off, uint32_t) != *MGOPT__ONNX_CAT(b, M->has_off, uint32_t))
    return mgopt__onnxq_diff(Q, fr, "(presence)");
  if (M->other_off != MGOPT__ONONE) {
    const mgopt_str *oa = MGOPT__ONNX_CAT(a, M->other_off, mgopt_str);
    const mgopt_str *ob = MGOPT__ONNX_CAT(b, M->other_off, mgopt_str);
    if (!mgopt__onnx_str_eq(oa, ob)) return mgopt__onnxq_diff(Q, fr, "(other)");
    if (oa->len) return 1;
  }
  for (i = 0; i < M->nfields; i++) {
    const mgopt__onnx_field *f = &M->fields[i];
    mgopt__onnx_frame sub;
    sub.up = fr;
    sub.name = f->name;
    sub.index = -1;
    switch (f->kind) {
    case MGOPT__OF_I64:
      if (*MGOPT__ONNX_CAT(a, f->off, int64_t) != *MGOPT__ONNX_CAT(b, f->off, int64_t))
        return mgopt__onnxq_diff(Q, &sub, "");
      break;
    case MGOPT__OF_I32:
      if (*MGOPT__ONNX_CAT(a, f->off, int32_t) != *MGOPT__ONNX_CAT(b, f->off, int32_t))
        return mgopt__onnxq_diff(Q, &sub, "");
      break;
    case MGOPT__OF_F32:
      if (memcmp(MGOPT__ONNX_CAT(a, f->off, float), MGOPT__ONNX_CAT(b, f->off, float), 4))
        return mgopt__onnxq_diff(Q, &sub, "");
      break;
    case MGOPT__OF_STR:
      if (!mgopt__onnx_str_eq(MGOPT__ONNX_CAT(a, f->off, mgopt_str), MGOPT__ONNX_CAT(b, f->off, mgopt_str)))
        return mgopt__onnxq_diff(Q, &sub, "");
      break;
    case MGOPT__OF_MSG: {
      const void *ca = *MGOPT__ONNX_CAT(a, f->off, void *), *cb = *MGOPT__ONNX_CAT(b, f->off, void *);
      if (!ca != !cb) return mgopt__onnxq_diff(Q, &sub, "(presence)");
      if (ca && !mgopt__onnxq_msg(Q, f->sub, ca, cb, &sub, depth + 1)) return 0;
      break;
    }
    case MGOPT__OF_RI64:
    case MGOPT__OF_RI32:
    case MGOPT__OF_RU64:
    case MGOPT__OF_RF32:
    case MGOPT__OF_RF64:
    case MGOPT__OF_RSTR:
    case MGOPT__OF_RRAW:
    case MGOPT__OF_RMSG: {
      int64_t na = *MGOPT__ONNX_CAT(a, f->count_off, int64_t);
      int64_t nb = *MGOPT__ONNX_CAT(b, f->count_off, int64_t), k;
      const char *pa = *MGOPT__ONNX_CAT(a, f->off, char *), *pb = *MGOPT__ONNX_CAT(b, f->off, char *);
      size_t es = mgopt__onnx_elem_size(f);
      if (na != nb) return mgopt__onnxq_diff(Q, &sub, "(count)");
      for (k = 0; k < na; k++) {
        const char *ea = pa + (size_t)k * es, *eb = pb + (size_t)k * es;
        sub.index = k;
        if (f->kind == MGOPT__OF_RMSG) {
          if (!mgopt__onnxq_msg(Q, f->sub, ea, eb, &sub, depth + 1)) return 0;
        } else if (f->kind == MGOPT__OF_RSTR || f->kind == MGOPT__OF_RRAW) {
          if (!mgopt__onnx_str_eq((const mgopt_str *)(const void *)ea, (const mgopt_str *)(const void *)eb))
            return mgopt__onnxq_diff(Q, &sub, "");
        } else if (memcmp(ea, eb, es)) {
          return mgopt__onnxq_diff(Q, &sub, "");
        }
      }
      break;
    }
    default: break;
    }
  }
  return 1;
}

MGOPTDEF int mgopt_onnx_model_equal(const mgopt_onnx_model *a, const mgopt_onnx_model *b,
                                    char *where, size_t where_len) {
  mgopt__onnxq Q;
  mgopt__onnx_frame root;
  Q.where = where;
  Q.where_len = where_len;
  if (where && where_len) where[0] = 0;
  root.up = NULL;
  root.name = "ModelProto";
  root.index = -1;
  if (!a || !b) {
    if (a == b) return 1;
    return mgopt__onnxq_diff(&Q, &root, "(null)");
  }
  return mgopt__onnxq_msg(&Q, MGOPT__OM_MODEL, a, b, &root, 0);
}

/* ---------------------------------------------------------------- encoder */

/* Where an initializer moved to the external data. */
typedef struct mgopt__onnx_extent {
  const mgopt_onnx_tensor *t;
  uint64_t offset;
} mgopt__onnx_extent;

typedef struct mgopt__onnxe {
  mgopt__pbw w;
  int bad; /* tree nested too deeply */
  const mgopt__onnx_extent *ext; /* sorted by tensor address */
  int64_t next;
  const char *location;
} mgopt__onnxe;

static const mgopt__onnx_extent *mgopt__onnxe_find(const mgopt__onnxe *E, const void *t) {
  int64_t lo = 0, hi = E->next;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    uintptr_t k = (uintptr_t)E->ext[mid].t;
    if (k == (uintptr_t)t) return &E->ext[mid];
    if (k < (uintptr_t)t) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

static void mgopt__onnxe_msg(mgopt__onnxe *E, int mid, const void *obj, int depth);

/* A tensor moved to external data is written as a copy without its data and
   with entries location / offset / length. */
static void mgopt__onnxe_external(mgopt__onnxe *E, const mgopt_onnx_tensor *t,
                                  const mgopt__onnx_extent *x, int depth) {
  mgopt_onnx_tensor c = *t;
  mgopt_onnx_strstr kv[3];
  char offs[24], lens[24]; /* on the stack: far below the writer's borrow size, so copied */
  int no, nl;
  no = snprintf(offs, sizeof offs, "%llu", (unsigned long long)x->offset);
  nl = snprintf(lens, sizeof lens, "%llu", (unsigned long long)t->raw_data.len);
  memset(kv, 0, sizeof kv);
  kv[0].key.ptr = "location";
  kv[0].key.len = 8;
  kv[0].value.ptr = E->location;
  kv[0].value.len = strlen(E->location);
  kv[1].key.ptr = "offset";
  kv[1].key.len = 6;
  kv[1].value.ptr = offs;
  kv[1].value.len = (size_t)no;
  kv[2].key.ptr = "length";
  kv[2].key.len = 6;
  kv[2].value.ptr = lens;
  kv[2].value.len = (size_t)nl;
  c.raw_data.ptr = NULL;
  c.raw_data.len = 0;
  c.has &= ~MGOPT_ONNX_TENSOR_HAS_RAW_DATA;
  c.external_data = kv;
  c.nexternal_data = 3;
  c.data_location = MGOPT_ONNX_LOC_EXTERNAL;
  mgopt__onnxe_msg(E, MGOPT__OM_TENSOR, &c, depth + 1);
}

static void mgopt__onnxe_scalar(mgopt__pbw *w, int kind, const char *arr, int64_t k) {
  switch (kind) {
  case MGOPT__OF_RI64: mgopt__pbw_varint(w, (uint64_t)((const int64_t *)(const void *)arr)[k]); break;
  case MGOPT__OF_RI32:
    mgopt__pbw_varint(w, (uint64_t)(int64_t)((const int32_t *)(const void *)arr)[k]);
    break;
  case MGOPT__OF_RU64: mgopt__pbw_varint(w, ((const uint64_t *)(const void *)arr)[k]); break;
  case MGOPT__OF_RF32: {
    uint32_t u;
    memcpy(&u, arr + (size_t)k * 4, 4);
    mgopt__pbw_fixed32(w, u);
    break;
  }
  case MGOPT__OF_RF64: {
    uint64_t u;
    memcpy(&u, arr + (size_t)k * 8, 8);
    mgopt__pbw_fixed64(w, u);
    break;
  }
  default: break;
  }
}

static int mgopt__onnx_scalar_wire(int kind) {
  return kind == MGOPT__OF_RF32 ? MGOPT__PB_FIXED32 : kind == MGOPT__OF_RF64 ? MGOPT__PB_FIXED64 : MGOPT__PB_VARINT;
}

/* Writes obj's fields last to first (the writer fills from the back), so the
   output lists them in field-number order. */
static void mgopt__onnxe_msg(mgopt__onnxe *E, int mid, const void *obj, int depth) {
  const mgopt__onnx_msg *M = &mgopt__onnx_msgs[mid];
  mgopt__pbw *w = &E->w;
  uint32_t has = M->has_off != MGOPT__ONONE ? *MGOPT__ONNX_CAT(obj, M->has_off, uint32_t) : 0;
  int32_t i;
  if (depth > MGOPT__ONNX_TREE_DEPTH) {
    E->bad = 1;
    return;
  }
  if (w->oom || E->bad) return;
  if (M->other_off != MGOPT__ONONE) {
    const mgopt_str *o = MGOPT__ONNX_CAT(obj, M->other_off, mgopt_str);
    if (o->len) {
      mgopt__pbw_borrow(w, o->ptr, o->len);
      return;
    }
  }
  if (mid == MGOPT__OM_TENSOR && E->next) {
    const mgopt__onnx_extent *x = mgopt__onnxe_find(E, obj);
    if (x) {
      mgopt__onnxe_external(E, (const mgopt_onnx_tensor *)obj, x, depth);
      return;
    }
  }
  for (i = M->nfields - 1; i >= 0; i--) {
    const mgopt__onnx_field *f = &M->fields[i];
    int present = f->has_bit >= 0 && (has >> f->has_bit & 1u);
    switch (f->kind) {
    case MGOPT__OF_I64: {
      int64_t v = *MGOPT__ONNX_CAT(obj, f->off, int64_t);
      if (v || present) {
        mgopt__pbw_varint(w, (uint64_t)v);
        mgopt__pbw_key(w, f->num, MGOPT__PB_VARINT);
      }
      break;
    }
    case MGOPT__OF_I32: {
      int32_t v = *MGOPT__ONNX_CAT(obj, f->off, int32_t);
      if (v || present) {
        mgopt__pbw_varint(w, (uint64_t)(int64_t)v);
        mgopt__pbw_key(w, f->num, MGOPT__PB_VARINT);
      }
      break;
    }
    case MGOPT__OF_F32: {
      uint32_t u;
      memcpy(&u, MGOPT__ONNX_CAT(obj, f->off, float), 4);
      if (u || present) {
        mgopt__pbw_fixed32(w, u);
        mgopt__pbw_key(w, f->num, MGOPT__PB_FIXED32);
      }
      break;
    }
    case MGOPT__OF_STR: {
      const mgopt_str *s = MGOPT__ONNX_CAT(obj, f->off, mgopt_str);
      if (s->len || present) mgopt__pbw_lenfield(w, f->num, s->ptr, s->len);
      break;
    }
    case MGOPT__OF_MSG: {
      const void *c = *MGOPT__ONNX_CAT(obj, f->off, void *);
      if (c) {
        size_t mark = mgopt__pbw_mark(w);
        mgopt__onnxe_msg(E, f->sub, c, depth + 1);
        mgopt__pbw_close(w, mark, f->num);
      }
      break;
    }
    case MGOPT__OF_RI64:
    case MGOPT__OF_RI32:
    case MGOPT__OF_RU64:
    case MGOPT__OF_RF32:
    case MGOPT__OF_RF64: {
      int64_t n = *MGOPT__ONNX_CAT(obj, f->count_off, int64_t), k;
      const char *arr = *MGOPT__ONNX_CAT(obj, f->off, char *);
      if (n <= 0) break;
      if (f->flags & MGOPT__OFL_PACKED) {
        size_t mark = mgopt__pbw_mark(w);
        for (k = n - 1; k >= 0; k--) mgopt__onnxe_scalar(w, f->kind, arr, k);
        mgopt__pbw_close(w, mark, f->num);
      } else {
        int wt = mgopt__onnx_scalar_wire(f->kind);
        for (k = n - 1; k >= 0; k--) {
          mgopt__onnxe_scalar(w, f->kind, arr, k);
          mgopt__pbw_key(w, f->num, wt);
        }
      }
      break;
    }
    case MGOPT__OF_RSTR:
    case MGOPT__OF_RRAW: {
      int64_t n = *MGOPT__ONNX_CAT(obj, f->count_off, int64_t), k;
      const mgopt_str *arr = *MGOPT__ONNX_CAT(obj, f->off, mgopt_str *);
      for (k = n - 1; k >= 0; k--) mgopt__pbw_lenfield(w, f->num, arr[k].ptr, arr[k].len);
      break;
    }
    case MGOPT__OF_RMSG: {
      int64_t n = *MGOPT__ONNX_CAT(obj, f->count_off, int64_t), k;
      const char *arr = *MGOPT__ONNX_CAT(obj, f->off, char *);
      size_t sz = mgopt__onnx_msgs[f->sub].size;
      for (k = n - 1; k >= 0; k--) {
        size_t mark = mgopt__pbw_mark(w);
        mgopt__onnxe_msg(E, f->sub, arr + (size_t)k * sz, depth + 1);
        mgopt__pbw_close(w, mark, f->num);
      }
      break;
    }
    default: break;
    }
  }
}

/* ---- external data on write */

typedef struct mgopt__onnx_extc {
  int64_t min_bytes;
  mgopt__onnx_extent *ext;
  int64_t n, cap;
  const mgopt_allocator *alloc;
  int oom;
} mgopt__onnx_extc;

static int mgopt__onnx_ext_collect(void *ctx, int mid, void *obj, int parent, uint32_t field) {
  mgopt__onnx_extc *C = (mgopt__onnx_extc *)ctx;
  const mgopt_onnx_tensor *t = (const mgopt_onnx_tensor *)obj;
  if (mid != MGOPT__OM_TENSOR || parent != MGOPT__OM_GRAPH || field != 5) return 0;
  if (t->data_location != MGOPT_ONNX_LOC_DEFAULT || t->raw_data.len == 0) return 0;
  if ((uint64_t)t->raw_data.len < (uint64_t)C->min_bytes) return 0;
  if (!mgopt__grow(C->alloc, (void **)&C->ext, &C->cap, C->n + 1, sizeof *C->ext)) {
    C->oom = 1;
    return 1;
  }
  C->ext[C->n].t = t;
  C->ext[C->n].offset = 0;
  C->n++;
  return 0;
}

static int mgopt__onnx_ext_cmp(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const mgopt__onnx_extent *)a)->t;
  uintptr_t y = (uintptr_t)((const mgopt__onnx_extent *)b)->t;
  return x < y ? -1 : x > y;
}

/* Sums the raw_data bytes that stay inline (tensors not moved to the sink). */
typedef struct mgopt__onnx_inl {
  const mgopt__onnxe *E;
  uint64_t bytes;
  size_t borrow_min;
} mgopt__onnx_inl;

static int mgopt__onnx_inline_bytes(void *ctx, int mid, void *obj, int parent, uint32_t field) {
  mgopt__onnx_inl *S = (mgopt__onnx_inl *)ctx;
  const mgopt_onnx_tensor *t = (const mgopt_onnx_tensor *)obj;
  MGOPT__UNUSED(parent);
  MGOPT__UNUSED(field);
  if (mid != MGOPT__OM_TENSOR || (S->E->next && mgopt__onnxe_find(S->E, obj))) return 0;
  if (S->borrow_min && t->raw_data.len >= S->borrow_min) return 0; /* a span, not buffered */
  S->bytes += (uint64_t)t->raw_data.len;
  return 0;
}

/* The whole writer: moves large initializers to the sink (in model order,
   64-byte aligned), then encodes the model into w. */
MGOPT__PRIVATE mgopt_status mgopt__onnx_encode(const mgopt_onnx_model *m, const mgopt_onnx_write_options *opts,
                                               const char *location, mgopt_write_fn sink,
                                               void *sink_ctx, mgopt__pbw *w, mgopt_diag *d) {
  mgopt__onnxe E;
  mgopt__onnx_extc C;
  mgopt_status st = MGOPT_OK;
  memset(&E, 0, sizeof E);
  memset(&C, 0, sizeof C);
  E.w = *w;
  E.location = location;
  /* Every byte field lives in the model tree (or, for the few the writer
     makes up, is far smaller than this), so large ones can be borrowed. */
  if (!E.w.borrow_min) E.w.borrow_min = MGOPT__PBW_BORROW_MIN;
  C.alloc = w->alloc;
  if (opts && opts->external_min_bytes > 0 && sink) {
    static const uint8_t zeros[64] = {0};
    uint64_t off = 0;
    int64_t k;
    C.min_bytes = opts->external_min_bytes;
    mgopt__onnx_walk(MGOPT__OM_MODEL, (void *)m, -1, 0, mgopt__onnx_ext_collect, &C, 0);
    if (C.oom) {
      st = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
      goto done;
    }
    for (k = 0; k < C.n; k++) {
      size_t pad = (size_t)((64 - off % 64) % 64);
      if (pad && (st = sink(sink_ctx, zeros, pad)) != MGOPT_OK) goto sinkfail;
      off += pad;
      C.ext[k].offset = off;
      if ((st = sink(sink_ctx, C.ext[k].t->raw_data.ptr, C.ext[k].t->raw_data.len)) != MGOPT_OK)
        goto sinkfail;
      off += C.ext[k].t->raw_data.len;
    }
    if (C.n > 1) qsort(C.ext, (size_t)C.n, sizeof *C.ext, mgopt__onnx_ext_cmp);
    E.ext = C.ext;
    E.next = C.n;
  }
  {
    /* Reserve the inline tensor bytes plus slack up front. The writer fills its
       buffer from the back, so capacity it does not use is never touched;
       growing by doubling instead leaves the previous copy resident (up to
       twice the output for a model of raw_data weights). Past 2 GB the
       encoding fails anyway: no reservation then. */
    mgopt__onnx_inl S;
    S.E = &E;
    S.bytes = 0;
    S.borrow_min = E.w.borrow_min;
    mgopt__onnx_walk(MGOPT__OM_MODEL, (void *)m, -1, 0, mgopt__onnx_inline_bytes, &S, 0);
    if (S.bytes > 0 && S.bytes <= 0x7fffffffu) mgopt__pbw_reserve(&E.w, (size_t)S.bytes + ((size_t)1 << 20));
  }
  mgopt__onnxe_msg(&E, MGOPT__OM_MODEL, m, 0);
  if (E.bad) st = mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "model tree nested more than %d deep",
                                 MGOPT__ONNX_TREE_DEPTH);
  else if (E.w.oom) st = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  else if (mgopt__pbw_mark(&E.w) > 0x7fffffffu)
    st = mgopt_diag_set(d, MGOPT_ERR_LIMIT,
                        "the protobuf would be %llu bytes, over 2 GB: store weights as external data",
                        (unsigned long long)mgopt__pbw_mark(&E.w));
  goto done;
sinkfail:
  if (d && d->status == MGOPT_OK) mgopt_diag_set(d, st, "writing external data failed");
done:
  if (C.ext) mgopt__heap_free(C.alloc, C.ext, (size_t)C.cap * sizeof *C.ext);
  *w = E.w;
  return st;
}

static mgopt_status mgopt__onnx_buf_sink(void *ctx, const void *data, size_t n) {
  mgopt_buf *b = (mgopt_buf *)ctx;
  mgopt__buf_putn(b, (const char *)data, n);
  return b->oom ? MGOPT_ERR_NOMEM : MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_onnx_write(const mgopt_onnx_model *m, const mgopt_onnx_write_options *opts,
                                       mgopt_buf *out, mgopt_buf *external, mgopt_diag *d) {
  mgopt__pbw w;
  mgopt_status st;
  const char *loc;
  mgopt_diag_clear(d);
  if (!m || !out) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "NULL model or output");
  if (opts && opts->external_min_bytes > 0 && !external)
    return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "external_min_bytes set but no external buffer");
  loc = opts && opts->external_location ? opts->external_location : "model.onnx.data";
  memset(&w, 0, sizeof w);
  w.alloc = out->alloc;
  st = mgopt__onnx_encode(m, opts, loc, mgopt__onnx_buf_sink, external, &w, d);
  if (st == MGOPT_OK) {
    size_t before = out->len, total = mgopt__pbw_mark(&w);
    if (mgopt__buf_reserve(out, total + 1)) {
      mgopt__pbw_emit(&w, mgopt__onnx_buf_sink, out);
      mgopt__buf_putn(out, "", 0);
    }
    if (out->oom || out->len != before + total) st = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  }
  mgopt__pbw_free(&w);
  return st;
}

MGOPTDEF mgopt_status mgopt_onnx_write_stream(const mgopt_onnx_model *m, const mgopt_onnx_write_options *opts,
                                              mgopt_write_fn model_sink, void *model_ctx,
                                              mgopt_write_fn external_sink, void *external_ctx, mgopt_diag *d) {
  mgopt__pbw w;
  mgopt_status st;
  const char *loc;
  mgopt_diag_clear(d);
  if (!m || !model_sink) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "NULL model or sink");
  if (opts && opts->external_min_bytes > 0 && !external_sink)
    return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "external_min_bytes set but no external sink");
  loc = opts && opts->external_location ? opts->external_location : "model.onnx.data";
  memset(&w, 0, sizeof w);
  w.alloc = m->program ? &m->program->alloc : NULL;
  st = mgopt__onnx_encode(m, opts, loc, external_sink, external_ctx, &w, d);
  if (st == MGOPT_OK && (st = mgopt__pbw_emit(&w, model_sink, model_ctx)) != MGOPT_OK && d &&
      d->status == MGOPT_OK)
    mgopt_diag_set(d, st, "writing the model failed");
  mgopt__pbw_free(&w);
  return st;
}
