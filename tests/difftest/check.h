/* tests/difftest/check.h — one differential check: a program evaluated before and after a pass or pipeline, compared within the pass's tolerance. */
#ifndef DIFFTEST_CHECK_H
#define DIFFTEST_CHECK_H
#include "mgopt.h"
#include "mgopt_passes.h"
#include <stdint.h>

/* How close the outputs before and after must be (see check.c's table). */
typedef struct dt_tol {
  double rtol, atol;
  int smooth, fp16;
  int inf_nan; /* NaN after where before was +-inf is allowed (select_optimization's contract) */
  int qstep;   /* an int8 / uint8 output may move by 1 (a requantization's rounding; QSTEP) */
} dt_tol;

/* The tolerance class of a pass or named pipeline ("common::x", "x" or "default"). */
dt_tol dt_tol_of(const char *name);

enum { DT_SKIP, DT_OK, DT_MISMATCH, DT_NOKERNEL };

typedef struct dt_result {
  int fired;
  char why[512];
} dt_result;

/* Parses text, evaluates it on random inputs (from seed), runs `pipeline`
   (a pass or pipeline name, options in braces allowed; a pass that needs
   options and has none gets options chosen for the program) with the
   verifier after each pass, evaluates again and compares. DT_SKIP: the
   program itself cannot be evaluated (not a test); DT_NOKERNEL: the pass made
   an op without a kernel; DT_MISMATCH: res->why says what differed. */
int dt_check(const char *text, const char *pipeline, const dt_tol *t, uint64_t seed, dt_result *res);

/* The evaluator's op callback for the opaque ONNX ops the generator writes
   (onnx::Identity, onnx::Shape, onnx::Dropout in inference mode, onnx::Pad in
   constant mode, onnx::Reshape, onnx::ConstantOfShape): small reference
   kernels, with the signature of mgopt_eval_options.op_fn. */
mgopt_status dt_onnx_op(void *ud, mgopt_program *p, const mgopt_op *op, mgopt_tensor *const *operands,
                        int32_t noperands, mgopt_tensor **out, mgopt_diag *d);

#endif
