/* src/onnx/onnx_api.h — public declarations for reading and writing ONNX models. */
#ifndef MGOPT_ONNX_H_INCLUDED
#define MGOPT_ONNX_H_INCLUDED
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif /* MGOPT_ONNX_H_INCLUDED */
