/* src/onnx/pb.c — protobuf wire codec for ONNX ModelProto. */
#include "../internal.h"
