/* src/onnx/onnx_api.h — public declarations for reading and writing ONNX models (the ModelProto tree). */
#ifndef MGOPT_ONNX_H_INCLUDED
#define MGOPT_ONNX_H_INCLUDED
#include "../api.h"
#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- ONNX model tree

   mgopt_onnx_read decodes a serialized ModelProto into this tree, one struct
   per protobuf message, allocated in the arena of a program it creates
   (model->program): the tree lives and dies with that program. Field names
   follow onnx.proto; a repeated field is a pointer and an int64_t count.

   Strings are mgopt_str (pointer + length, may hold any bytes). Names and
   identifiers (node inputs/outputs, op types, domains, value and attribute
   names, dim params) are interned in the program: NUL-terminated, and equal
   names share a pointer (mgopt_onnx_import relies on it: a tree built or
   edited by hand interns its names with mgopt_program_intern). Other strings and bytes (doc strings, attribute s,
   string_data, raw_data) are BORROWED from the input buffer, which must
   outlive the program. An absent string has len 0 (its ptr may be NULL).

   `has` words record which singular fields were present on the wire, so an
   explicit zero (dim_value: 0, i: 0, an empty raw_data) is written back.
   A builder may leave them 0: nonzero values are always written.

   Fields the reader does not know are dropped (a re-encoded model holds only
   the fields listed here). Every listed field survives a read/write round
   trip exactly, and writing is deterministic (fields in field-number order).

   Not decoded but kept as their exact bytes: TypeProto of kinds other than
   tensor (sequence, map, optional, sparse tensor, opaque: type->other),
   ModelProto.training_info and GraphProto.quantization_annotation. */

/* ONNX TensorProto.DataType values. */
#define MGOPT_ONNX_DT_UNDEFINED 0
#define MGOPT_ONNX_DT_FLOAT 1
#define MGOPT_ONNX_DT_UINT8 2
#define MGOPT_ONNX_DT_INT8 3
#define MGOPT_ONNX_DT_UINT16 4
#define MGOPT_ONNX_DT_INT16 5
#define MGOPT_ONNX_DT_INT32 6
#define MGOPT_ONNX_DT_INT64 7
#define MGOPT_ONNX_DT_STRING 8
#define MGOPT_ONNX_DT_BOOL 9
#define MGOPT_ONNX_DT_FLOAT16 10
#define MGOPT_ONNX_DT_DOUBLE 11
#define MGOPT_ONNX_DT_UINT32 12
#define MGOPT_ONNX_DT_UINT64 13
#define MGOPT_ONNX_DT_COMPLEX64 14
#define MGOPT_ONNX_DT_COMPLEX128 15
#define MGOPT_ONNX_DT_BFLOAT16 16
#define MGOPT_ONNX_DT_FLOAT8E4M3FN 17
#define MGOPT_ONNX_DT_FLOAT8E4M3FNUZ 18
#define MGOPT_ONNX_DT_FLOAT8E5M2 19
#define MGOPT_ONNX_DT_FLOAT8E5M2FNUZ 20
#define MGOPT_ONNX_DT_UINT4 21
#define MGOPT_ONNX_DT_INT4 22
#define MGOPT_ONNX_DT_FLOAT4E2M1 23
#define MGOPT_ONNX_DT_FLOAT8E8M0 24
#define MGOPT_ONNX_DT__COUNT 25

/* ONNX AttributeProto.AttributeType values. */
#define MGOPT_ONNX_ATTR_UNDEFINED 0
#define MGOPT_ONNX_ATTR_FLOAT 1
#define MGOPT_ONNX_ATTR_INT 2
#define MGOPT_ONNX_ATTR_STRING 3
#define MGOPT_ONNX_ATTR_TENSOR 4
#define MGOPT_ONNX_ATTR_GRAPH 5
#define MGOPT_ONNX_ATTR_FLOATS 6
#define MGOPT_ONNX_ATTR_INTS 7
#define MGOPT_ONNX_ATTR_STRINGS 8
#define MGOPT_ONNX_ATTR_TENSORS 9
#define MGOPT_ONNX_ATTR_GRAPHS 10
#define MGOPT_ONNX_ATTR_SPARSE_TENSOR 11
#define MGOPT_ONNX_ATTR_SPARSE_TENSORS 12
#define MGOPT_ONNX_ATTR_TYPE_PROTO 13
#define MGOPT_ONNX_ATTR_TYPE_PROTOS 14
/* The tag of an mgopt_attr of kind MGOPT_ATTR_BYTES that stands for an
   attribute reference inside a model-local function body (ONNX
   AttributeProto.ref_attr_name): MGOPT_ONNX_ATTR_REF | the attribute's type,
   the bytes being the name of the function attribute it refers to. */
#define MGOPT_ONNX_ATTR_REF 0x100

/* TensorProto.data_location */
#define MGOPT_ONNX_LOC_DEFAULT 0
#define MGOPT_ONNX_LOC_EXTERNAL 1

/* Presence bits (the `has` words). */
#define MGOPT_ONNX_DIM_HAS_VALUE (1u << 0)
#define MGOPT_ONNX_DIM_HAS_PARAM (1u << 1)
#define MGOPT_ONNX_TTYPE_HAS_ELEM_TYPE (1u << 0)
#define MGOPT_ONNX_ATTR_HAS_F (1u << 0)
#define MGOPT_ONNX_ATTR_HAS_I (1u << 1)
#define MGOPT_ONNX_ATTR_HAS_S (1u << 2)
#define MGOPT_ONNX_ATTR_HAS_TYPE (1u << 3)
#define MGOPT_ONNX_TENSOR_HAS_DATA_TYPE (1u << 0)
#define MGOPT_ONNX_TENSOR_HAS_RAW_DATA (1u << 1)

typedef struct mgopt_onnx_graph mgopt_onnx_graph;
typedef struct mgopt_onnx_type mgopt_onnx_type;

typedef struct mgopt_onnx_strstr { /* StringStringEntryProto */
  uint32_t has;
  mgopt_str key, value;
} mgopt_onnx_strstr;

typedef struct mgopt_onnx_opset { /* OperatorSetIdProto */
  uint32_t has;
  mgopt_str domain; /* "" = the default ONNX domain */
  int64_t version;
} mgopt_onnx_opset;

typedef struct mgopt_onnx_dim { /* TensorShapeProto.Dimension: value, param, or neither (unknown) */
  uint32_t has;                 /* MGOPT_ONNX_DIM_HAS_VALUE / _PARAM */
  int64_t value;
  mgopt_str param;
  mgopt_str denotation;
} mgopt_onnx_dim;

typedef struct mgopt_onnx_shape { /* TensorShapeProto */
  mgopt_onnx_dim *dims;
  int64_t ndims;
} mgopt_onnx_shape;

typedef struct mgopt_onnx_tensor_type { /* TypeProto.Tensor */
  uint32_t has;
  int32_t elem_type;        /* MGOPT_ONNX_DT_* */
  mgopt_onnx_shape *shape;  /* NULL = rank unknown; ndims 0 = scalar */
} mgopt_onnx_tensor_type;

struct mgopt_onnx_type { /* TypeProto */
  mgopt_onnx_tensor_type *tensor_type; /* tensor types, decoded */
  mgopt_str denotation;
  mgopt_str other; /* len > 0: any other kind, the whole encoded TypeProto (the fields above are then unused) */
};

typedef struct mgopt_onnx_value_info { /* ValueInfoProto */
  uint32_t has;
  mgopt_str name;
  mgopt_onnx_type *type; /* NULL if absent */
  mgopt_str doc_string;
  mgopt_onnx_strstr *metadata_props;
  int64_t nmetadata_props;
} mgopt_onnx_value_info;

/* TensorProto. Data lives in exactly one place, chosen by data_type:
   raw_data (little-endian bytes, borrowed from the input buffer, never copied),
   or the typed field of the ONNX storage rules: float_data (FLOAT, COMPLEX64),
   int32_data (INT32, INT16, INT8, UINT16, UINT8, BOOL, FLOAT16 and BFLOAT16 as
   bit patterns, FLOAT8*, and 4-bit types two per entry), string_data (STRING),
   int64_data (INT64), double_data (DOUBLE, COMPLEX128), uint64_data (UINT32,
   UINT64); or outside the model (data_location EXTERNAL, external_data keys
   location / offset / length). The reader checks element counts against dims. */
typedef struct mgopt_onnx_tensor {
  uint32_t has;          /* MGOPT_ONNX_TENSOR_HAS_* */
  int64_t *dims;
  int64_t ndims;
  int32_t data_type;     /* MGOPT_ONNX_DT_* */
  int32_t data_location; /* MGOPT_ONNX_LOC_* */
  mgopt_str name;
  mgopt_str doc_string;
  mgopt_str raw_data;
  float *float_data;
  int64_t nfloat_data;
  int32_t *int32_data;
  int64_t nint32_data;
  mgopt_str *string_data;
  int64_t nstring_data;
  int64_t *int64_data;
  int64_t nint64_data;
  double *double_data;
  int64_t ndouble_data;
  uint64_t *uint64_data;
  int64_t nuint64_data;
  mgopt_onnx_strstr *external_data;
  int64_t nexternal_data;
  mgopt_onnx_strstr *metadata_props;
  int64_t nmetadata_props;
  /* not serialized: set by the reader */
  int64_t numel;              /* product of dims */
  const char *ext_location;   /* after mgopt_onnx_load_external: where raw_data came from */
  int64_t ext_offset;
} mgopt_onnx_tensor;

typedef struct mgopt_onnx_sparse_tensor { /* SparseTensorProto */
  mgopt_onnx_tensor *values;
  mgopt_onnx_tensor *indices;
  int64_t *dims;
  int64_t ndims;
} mgopt_onnx_sparse_tensor;

typedef struct mgopt_onnx_attribute { /* AttributeProto */
  uint32_t has;               /* MGOPT_ONNX_ATTR_HAS_* */
  mgopt_str name;
  mgopt_str ref_attr_name;
  mgopt_str doc_string;
  int32_t type;               /* MGOPT_ONNX_ATTR_* */
  float f;
  int64_t i;
  mgopt_str s;
  mgopt_onnx_tensor *t;
  mgopt_onnx_graph *g;
  mgopt_onnx_sparse_tensor *sparse_tensor;
  mgopt_onnx_type *tp;
  float *floats;
  int64_t nfloats;
  int64_t *ints;
  int64_t nints;
  mgopt_str *strings;
  int64_t nstrings;
  mgopt_onnx_tensor *tensors;
  int64_t ntensors;
  mgopt_onnx_graph *graphs;
  int64_t ngraphs;
  mgopt_onnx_sparse_tensor *sparse_tensors;
  int64_t nsparse_tensors;
  mgopt_onnx_type *type_protos;
  int64_t ntype_protos;
} mgopt_onnx_attribute;

typedef struct mgopt_onnx_node { /* NodeProto */
  uint32_t has;
  mgopt_str *inputs;   /* "" = an omitted optional input */
  int64_t ninputs;
  mgopt_str *outputs;  /* "" = an omitted optional output */
  int64_t noutputs;
  mgopt_str name;
  mgopt_str op_type;
  mgopt_str domain;
  mgopt_str overload;
  mgopt_onnx_attribute *attributes;
  int64_t nattributes;
  mgopt_str doc_string;
  mgopt_onnx_strstr *metadata_props;
  int64_t nmetadata_props;
} mgopt_onnx_node;

struct mgopt_onnx_graph { /* GraphProto */
  uint32_t has;
  mgopt_onnx_node *nodes;
  int64_t nnodes;
  mgopt_str name;
  mgopt_onnx_tensor *initializers;
  int64_t ninitializers;
  mgopt_onnx_sparse_tensor *sparse_initializers;
  int64_t nsparse_initializers;
  mgopt_str doc_string;
  mgopt_onnx_value_info *inputs;
  int64_t ninputs;
  mgopt_onnx_value_info *outputs;
  int64_t noutputs;
  mgopt_onnx_value_info *value_info;
  int64_t nvalue_info;
  mgopt_str *quantization_annotation; /* each an encoded TensorAnnotation */
  int64_t nquantization_annotation;
  mgopt_onnx_strstr *metadata_props;
  int64_t nmetadata_props;
};

typedef struct mgopt_onnx_function { /* FunctionProto */
  uint32_t has;
  mgopt_str name;
  mgopt_str *inputs;
  int64_t ninputs;
  mgopt_str *outputs;
  int64_t noutputs;
  mgopt_str *attributes;             /* attribute names without defaults */
  int64_t nattributes;
  mgopt_onnx_node *nodes;
  int64_t nnodes;
  mgopt_str doc_string;
  mgopt_onnx_opset *opset_imports;
  int64_t nopset_imports;
  mgopt_str domain;
  mgopt_onnx_attribute *attribute_protos; /* attributes with defaults */
  int64_t nattribute_protos;
  mgopt_onnx_value_info *value_info;
  int64_t nvalue_info;
  mgopt_str overload;
  mgopt_onnx_strstr *metadata_props;
  int64_t nmetadata_props;
} mgopt_onnx_function;

typedef struct mgopt_onnx_model { /* ModelProto */
  uint32_t has;
  int64_t ir_version;
  mgopt_str producer_name;
  mgopt_str producer_version;
  mgopt_str domain;
  int64_t model_version;
  mgopt_str doc_string;
  mgopt_onnx_graph *graph;
  mgopt_onnx_opset *opset_imports;
  int64_t nopset_imports;
  mgopt_onnx_strstr *metadata_props;
  int64_t nmetadata_props;
  mgopt_str *training_info;  /* each an encoded TrainingInfoProto */
  int64_t ntraining_info;
  mgopt_onnx_function *functions;
  int64_t nfunctions;
  /* not serialized */
  mgopt_program *program;    /* owns the tree (and the file bytes after read_file) */
  int constant_inputs;       /* mgopt_onnx_import: as mgopt_onnx_read_options (set by the read) */
  const char *dir;           /* directory of the file read ("" = current), NULL for buffers */
} mgopt_onnx_model;

/* ---------------------------------------------------------------- reading */

typedef struct mgopt_onnx_read_options {
  int max_depth;            /* subgraph nesting limit (0 = 64) */
  int64_t max_elements;     /* limit on the sum of declared tensor elements (0 = 1 << 40) */
  const mgopt_allocator *alloc; /* for the program created (NULL = MGOPT_MALLOC family) */
  int keep_external;        /* read_file: 1 = leave external data unloaded */
  int constant_inputs;      /* import: initializers that are also graph inputs (overridable
                               defaults, IR version 4 on) become constants that passes fold,
                               instead of run-time inputs whose defaults export writes back
                               (the model's interface stays). Below IR version 4 every
                               initializer is an input and all are constants, as in ONNX
                               Runtime. */
} mgopt_onnx_read_options;

/* Decodes a serialized ModelProto of len bytes into a new program's arena and
   stores the model in *out (only on success). raw_data and other bytes are
   borrowed: buf must outlive model->program. Free everything with
   mgopt_program_destroy(model->program). opts may be NULL (every default).
   On error, d->offset is the byte offset and d->msg names the
   field path ("ModelProto.graph.node[3].attribute[1]: length past end"):
   MGOPT_ERR_CORRUPT (malformed wire data, counts that disagree with dims),
   MGOPT_ERR_UNSUPPORTED (segmented tensors, protobuf groups, unknown data
   types), MGOPT_ERR_LIMIT (options' limits), MGOPT_ERR_NOMEM. Tensors stored
   externally are left unloaded (see mgopt_onnx_load_external). */
MGOPTDEF mgopt_status mgopt_onnx_read(const void *buf, size_t len, const mgopt_onnx_read_options *opts,
                                     mgopt_onnx_model **out, mgopt_diag *d);

/* ---------------------------------------------------------------- writing */

typedef struct mgopt_onnx_write_options {
  /* > 0: initializers with raw_data of at least this many bytes are written to
     the external data (one side file, each tensor 64-byte aligned) */
  int64_t external_min_bytes;
  /* file name recorded in external_data entries, relative to the model's
     directory; NULL = "<model file name>.data" (write_file) or "model.onnx.data" */
  const char *external_location;
} mgopt_onnx_write_options;

/* Encodes m as a ModelProto appended to out (a zeroed mgopt_buf, or one with
   alloc set; free with mgopt_buf_free). With opts->external_min_bytes > 0,
   the side file's bytes are appended to `external` (required then).
   MGOPT_ERR_LIMIT when the protobuf would reach 2 GB (use external data),
   MGOPT_ERR_INVALID_ARG for a malformed tree (e.g. nested too deeply), NOMEM. */
MGOPTDEF mgopt_status mgopt_onnx_write(const mgopt_onnx_model *m, const mgopt_onnx_write_options *opts,
                                       mgopt_buf *out, mgopt_buf *external, mgopt_diag *d);

/* Receives output bytes in order; returns MGOPT_OK to go on. */
typedef mgopt_status (*mgopt_write_fn)(void *ctx, const void *data, size_t n);

/* Encodes m front to back into model_sink without building the output in
   memory: the writer buffers the model's structure and hands every large byte
   field (raw_data of at least 4 KB) to the sink straight from the model tree.
   So a sink receives two kinds of pieces: bytes in the writer's scratch
   memory, valid only during the call, and pointers into the tensors' own
   raw_data (for a model read from a caller's buffer, pointers into that
   buffer), which a sink may recognize to copy file to file without touching
   the bytes. External data (opts->external_min_bytes > 0) goes to
   external_sink, before any model byte. Sink errors are returned as they are. */
MGOPTDEF mgopt_status mgopt_onnx_write_stream(const mgopt_onnx_model *m, const mgopt_onnx_write_options *opts,
                                              mgopt_write_fn model_sink, void *model_ctx,
                                              mgopt_write_fn external_sink, void *external_ctx, mgopt_diag *d);

/* 1 if a and b hold equal trees field by field (presence bits included; the
   not-serialized fields ignored). Otherwise 0, and when where != NULL the
   path of the first difference is written there ("graph.node[2].op_type"). */
MGOPTDEF int mgopt_onnx_model_equal(const mgopt_onnx_model *a, const mgopt_onnx_model *b,
                                    char *where, size_t where_len);

/* The mgopt dtype of an ONNX data type (MGOPT_DT_UNKNOWN when none). */
MGOPTDEF mgopt_dtype mgopt_onnx_dtype(int32_t onnx_data_type);
/* Bytes of raw data a tensor of this type and element count holds; -1 for
   STRING, unknown types, or overflow. */
MGOPTDEF int64_t mgopt_onnx_raw_nbytes(int32_t onnx_data_type, int64_t numel);

#ifndef MGOPT_NO_STDIO
/* Reads the file at path into *out (only on success): its bytes stay alive in
   model->program; external data is loaded relative to the file's directory
   unless opts->keep_external. MGOPT_ERR_IO when the file cannot be read, and
   every status of mgopt_onnx_read and mgopt_onnx_load_external. */
MGOPTDEF mgopt_status mgopt_onnx_read_file(const char *path, const mgopt_onnx_read_options *opts,
                                          mgopt_onnx_model **out, mgopt_diag *d);
/* Loads every tensor with data_location EXTERNAL (keys location, offset, length;
   location relative to dir, absolute paths and ".." rejected) into the
   program's arena: the tensor then holds raw_data, data_location DEFAULT and
   remembers ext_location / ext_offset. dir NULL = m->dir. */
MGOPTDEF mgopt_status mgopt_onnx_load_external(mgopt_onnx_model *m, const char *dir, mgopt_diag *d);
/* Writes m to path; with opts->external_min_bytes > 0 large initializers go to
   the side file external_location in path's directory (created only if used). */
MGOPTDEF mgopt_status mgopt_onnx_write_file(const mgopt_onnx_model *m, const char *path,
                                            const mgopt_onnx_write_options *opts, mgopt_diag *d);
#endif

#ifdef __cplusplus
}
#endif
#endif /* MGOPT_ONNX_H_INCLUDED */
