/* src/onnx/model.h — private declarations of the ModelProto tree (model.c) shared with the file layer: message ids, the decoder entry, the walker. */
#ifndef MGOPT__ONNX_MODEL_H
#define MGOPT__ONNX_MODEL_H
#include "wire.h"

/* Message ids: index of a message's table in model.c. */
enum {
  MGOPT__OM_STRSTR,
  MGOPT__OM_OPSET,
  MGOPT__OM_DIM,
  MGOPT__OM_SHAPE,
  MGOPT__OM_TTYPE,
  MGOPT__OM_TYPE,
  MGOPT__OM_VALUE_INFO,
  MGOPT__OM_TENSOR,
  MGOPT__OM_SPARSE,
  MGOPT__OM_ATTR,
  MGOPT__OM_NODE,
  MGOPT__OM_GRAPH,
  MGOPT__OM_FUNCTION,
  MGOPT__OM_MODEL,
  MGOPT__OM__COUNT
};

#define MGOPT__ONNX_TENSOR_HAS_LOCATION (1u << 4) /* has bit of TensorProto.data_location */

MGOPT__PRIVATE mgopt_status mgopt__onnx_read_into(mgopt_program *p, const uint8_t *buf, size_t len,
                                                  const mgopt_onnx_read_options *opts, mgopt_onnx_model **out,
                                                  mgopt_diag *d);

/* A visitor of mgopt__onnx_walk: mid is the message's id, parent/field how it
   was reached (-1/0 for the root); nonzero stops the walk. */
typedef int (*mgopt__onnx_visit_fn)(void *ctx, int mid, void *obj, int parent, uint32_t field);
MGOPT__PRIVATE int mgopt__onnx_walk(int mid, void *obj, int parent, uint32_t field,
                                    mgopt__onnx_visit_fn fn, void *ctx, int depth);

#endif
