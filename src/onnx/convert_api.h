/* src/onnx/convert_api.h — public declarations for converting between ONNX model trees and the IR. */
#ifndef MGOPT_ONNX_CONVERT_H_INCLUDED
#define MGOPT_ONNX_CONVERT_H_INCLUDED
#include "../api.h"
#include "onnx_api.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Converts the model tree to the canonical IR in the same program
   (m->program): the graph becomes function `main`. Ops with an exactly
   equal canonical form for the model's opset become canonical ops; every
   other op stays opaque (`onnx::OpType`, or `domain::OpType`) with operand
   slots in0, in1, ... and its attributes; If/Loop/Scan bodies become nested
   blocks named after their attributes. Initializers and Constant nodes become
   `const` ops whose raw data stays borrowed; sparse initializers become dense
   `const` ops (as ONNX Runtime densifies them). The tree is kept in the program
   for mgopt_onnx_export. MGOPT_ERR_CORRUPT for undefined or duplicate names,
   MGOPT_ERR_UNSUPPORTED for constructs mgopt cannot hold: external data not
   loaded, data types with no mgopt dtype, and attributes
   of the kinds SPARSE_TENSOR(S), TENSORS, GRAPHS and TYPE_PROTOS (TYPE_PROTO
   is kept, as bytes). MGOPT_ERR_TYPE when a node's operands contradict it.
   The program's target becomes the model's opset (mgopt_onnx_set_target). */
MGOPTDEF mgopt_status mgopt_onnx_import(mgopt_onnx_model *m, mgopt_diag *d);

/* mgopt_onnx_read + mgopt_onnx_import: the program in *out (only on success;
   nothing is left allocated on failure), every status of the two in d.
   buf must outlive the program (weights are borrowed). opts may be NULL. */
MGOPTDEF mgopt_status mgopt_onnx_load(const void *buf, size_t len, const mgopt_onnx_read_options *opts,
                                     mgopt_program **out, mgopt_diag *d);

typedef struct mgopt_onnx_export_options {
  int keep_constant_nodes; /* consts that were Constant nodes stay nodes (default: initializers of
                              the graph they are in, subgraphs included from IR version 4) */
  int64_t opset;           /* default-domain opset to write (0 = the imported model's, else 17) */
} mgopt_onnx_export_options;

/* Builds a model tree from p's function `main` in p's arena: canonical ops
   become the ONNX ops of the target opset, opaque ops go back unchanged,
   consts become initializers of the graph they are in (Constant nodes in
   function bodies, and in subgraphs before IR version 4, where a subgraph
   cannot hold them), each constant the writer makes written once per graph;
   graph input/output names, order and types are kept: a main output's type
   is the one the graph computes, except that the shape the imported model
   declares is written back where it contradicts the graph (see
   mgopt_onnx_output_conflicts); model fields the IR does not hold
   (metadata, local functions, doc strings, subgraph names) come from the
   imported model. producer_name is "mgopt".
   MGOPT_ERR_UNSUPPORTED (with the op named) when an op has no ONNX form. */
MGOPTDEF mgopt_status mgopt_onnx_export(mgopt_program *p, const mgopt_onnx_export_options *opts,
                                        mgopt_onnx_model **out, mgopt_diag *d);

/* A main output whose shape the imported model declares in contradiction
   with the graph: another rank, or another size of a dim that both give
   as a number. The declaration is the model's interface, so
   mgopt_onnx_export writes it back as it was read (ONNX Runtime also keeps
   it, with a warning, and returns what the graph computes); the caller is
   told so it can warn. */
typedef struct mgopt_onnx_output_conflict {
  const char *name;    /* the output's name (interned) */
  mgopt_type declared; /* the type the model declares (in p's arena) */
  mgopt_type computed; /* the type the graph computes: the IR's */
} mgopt_onnx_output_conflict;

/* The outputs of p's main whose declared shape contradicts the graph, in
   output order: fills out[0 .. min(count, cap)) and returns the count, 0
   for a program not imported from ONNX (out may be NULL when cap is 0).
   Outputs the IR names differently from the model, or whose dtype changed,
   are not compared. -1 when memory runs out. */
MGOPTDEF int64_t mgopt_onnx_output_conflicts(mgopt_program *p, mgopt_onnx_output_conflict *out, int64_t cap);

/* Makes p's target (mgopt_program_set_target) the exporter at `opset`: the
   program then accepts an op exactly when mgopt_onnx_export at that opset
   can write it, so fusions build only ops the model can hold (no
   LayerNormalization before opset 17, no Gelu before 20, ...). opset 0 is
   the opset mgopt_onnx_export writes by default (the imported model's, else
   17). mgopt_onnx_import sets the target for the model's opset; call this
   before optimizing when the program will be exported at another opset, or
   when a program from elsewhere will be written as ONNX. The target's state
   lives in p's arena. MGOPT_ERR_INVALID_ARG when p is NULL, MGOPT_ERR_NOMEM. */
MGOPTDEF mgopt_status mgopt_onnx_set_target(mgopt_program *p, int64_t opset);

/* Imports opaque op `op` again: an `onnx::OpType` op (default domain) as
   mgopt_onnx_import leaves a node it cannot map, whose operands may since
   have become constant or typed (a Pad whose pads were computed, folded
   since). The op type's mapping at the program's ONNX opset (the imported
   model's, else 17, as mgopt_onnx_export) runs on the op's operands and
   attributes as on the node. Returns 1 when it built canonical ops: they
   stand before `op`, carry its output names, keep what its output types
   knew, take over its uses, and `op` is erased. Else the op type's output
   type rule fills output types still unknown: 2 when it did, 0 when
   nothing changed (other domains, ops with nested blocks or tensor
   attributes, a mapping that declines). -1 when memory runs out. */
MGOPTDEF int mgopt_onnx_reimport_op(mgopt_program *p, mgopt_op *op);

#ifndef MGOPT_NO_STDIO
/* mgopt_onnx_read_file + mgopt_onnx_import, as mgopt_onnx_load. */
MGOPTDEF mgopt_status mgopt_onnx_load_file(const char *path, const mgopt_onnx_read_options *opts,
                                          mgopt_program **out, mgopt_diag *d);
#endif

#ifdef __cplusplus
}
#endif
#endif /* MGOPT_ONNX_CONVERT_H_INCLUDED */
