/* src/kernels/onnx_ops.h — private declarations of the evaluator of opaque ONNX ops: the run state, the kernel table, the helpers its kernels share. */
#ifndef MGOPT__ONNX_OPS_H
#define MGOPT__ONNX_OPS_H
#include "kernels.h"

/* How an opaque `onnx::X` op is evaluated (onnx_eval.c): the row of the
   table below for X at the program's opset runs first; a kernel that does
   not handle these attributes or operands declines, and then the importer's
   own mapping row for X runs on the run-time operands as constants (late
   mapping), its canonical ops evaluated with the canonical kernels. */

/* Kernel results. */
#define MGOPT__OX_ERR (-1) /* failed: the diag is set */
#define MGOPT__OX_NO 0     /* declined: why says why; the late mapping may still evaluate the op */
#define MGOPT__OX_OK 1     /* every present output was made */

/* The run of one op. */
typedef struct mgopt__ox {
  mgopt_program *p;
  const mgopt_op *op;
  const char *name;     /* the ONNX op type (after "onnx::") */
  int64_t opset;        /* the default-domain opset of the program */
  mgopt_tensor **in;    /* by ONNX input index; NULL: absent */
  int32_t nin;
  mgopt_tensor **out;   /* op->nouts; the kernel makes them with mgopt__ox_out */
  int32_t nout;
  int64_t max_elements; /* per output, 0 = no limit */
  mgopt_diag *d;        /* may be NULL */
  mgopt_status status;  /* of the last failure */
  char why[160];        /* why the kernel declined */
} mgopt__ox;

typedef int (*mgopt__ox_fn)(mgopt__ox *c);

/* One ONNX op of the default domain over a range of opsets and its kernel. */
typedef struct mgopt__ox_row {
  const char *onnx;
  int32_t since, until; /* until 0 = every later opset */
  mgopt__ox_fn fn;
} mgopt__ox_row;

/* The table (onnx_ops.c): *n rows. */
MGOPT__PRIVATE const mgopt__ox_row *mgopt__ox_rows(int32_t *n);

/* ---- helpers (onnx_ops.c) */
MGOPT__PRIVATE int mgopt__ox_fail(mgopt__ox *c, mgopt_status s, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
MGOPT__PRIVATE int mgopt__ox_no(mgopt__ox *c, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Input i, or NULL when absent or past the inputs. */
MGOPT__PRIVATE mgopt_tensor *mgopt__ox_in(mgopt__ox *c, int32_t i);
/* Input i, which must be present: NULL after failing with MGOPT_ERR_INVALID_ARG. */
MGOPT__PRIVATE mgopt_tensor *mgopt__ox_need(mgopt__ox *c, int32_t i);
/* Makes output i (zero-filled): MGOPT__OX_OK, or MGOPT__OX_ERR (limit, memory, bad shape). */
MGOPT__PRIVATE int mgopt__ox_out(mgopt__ox *c, int32_t i, mgopt_dtype dt, int32_t rank, const int64_t *shape);
/* 1 when output i is wanted (present and not an omitted optional output). */
MGOPT__PRIVATE int mgopt__ox_wants(const mgopt__ox *c, int32_t i);
/* Axis a of a tensor of `rank` into [0, rank): MGOPT__OX_OK or a failure. */
MGOPT__PRIVATE int mgopt__ox_axis(mgopt__ox *c, int64_t a, int32_t rank, int32_t *out);
/* Integer attribute (the default when absent). */
MGOPT__PRIVATE int64_t mgopt__ox_int(const mgopt__ox *c, const char *name, int64_t dflt);
MGOPT__PRIVATE double mgopt__ox_float(const mgopt__ox *c, const char *name, double dflt);
/* 1 when string attribute `name` equals want (or is absent and dflt is set). */
MGOPT__PRIVATE int mgopt__ox_str_is(const mgopt__ox *c, const char *name, const char *want, int dflt);
/* 1 when dt computes in double here: fp16, bf16, fp32, fp64. */
MGOPT__PRIVATE int mgopt__ox_is_real(mgopt_dtype dt);
/* Element i of a real tensor as double; of an integer or bool one as int64. */
MGOPT__PRIVATE double mgopt__ox_getf(const mgopt_tensor *t, int64_t i);
MGOPT__PRIVATE int64_t mgopt__ox_geti(const mgopt_tensor *t, int64_t i);
/* Stores v rounded once to t's real dtype (nearest even). */
MGOPT__PRIVATE void mgopt__ox_setf(mgopt_tensor *t, int64_t i, double v);
/* Stores v wrapped to t's integer dtype (bool: v != 0). */
MGOPT__PRIVATE void mgopt__ox_seti(mgopt_tensor *t, int64_t i, int64_t v);
/* The scalar integer in input i (one element): MGOPT__OX_OK or a failure. */
MGOPT__PRIVATE int mgopt__ox_scalar_int(mgopt__ox *c, int32_t i, int64_t *v);

/* ---- kernels of onnx_nn.c */
MGOPT__PRIVATE int mgopt__ox_softmax(mgopt__ox *c);
MGOPT__PRIVATE int mgopt__ox_nll_loss(mgopt__ox *c);
MGOPT__PRIVATE int mgopt__ox_sce_loss(mgopt__ox *c);
MGOPT__PRIVATE int mgopt__ox_arg_extreme(mgopt__ox *c);
MGOPT__PRIVATE int mgopt__ox_global_max_pool(mgopt__ox *c);
MGOPT__PRIVATE int mgopt__ox_layer_norm(mgopt__ox *c);

/* ---- kernels of onnx_rnn.c */
MGOPT__PRIVATE int mgopt__ox_rnn(mgopt__ox *c);
MGOPT__PRIVATE int mgopt__ox_gru(mgopt__ox *c);
MGOPT__PRIVATE int mgopt__ox_lstm(mgopt__ox *c);

/* ---- kernels of onnx_quant.c: DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv */
MGOPT__PRIVATE int mgopt__ox_quant(mgopt__ox *c);

#endif /* MGOPT__ONNX_OPS_H */
