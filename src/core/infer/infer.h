/* src/core/infer/infer.h — private declarations shared by the type inference files in src/core/infer/.

   Conventions of every inference function:
   - an operand's type is read through mgopt__ti_in / mgopt__ti_opt, which turn
     a malformed tensor type (rank < -1, dims missing) into "rank unknown";
   - a dim is static (v >= 0, no symbol), symbolic (sym set) or unknown;
   - output dims are allocated in the program arena by mgopt__ti_out and then
     filled in place; every size derived from the IR goes through checked
     arithmetic; every failure is MGOPT_ERR_TYPE with a message, never an assert. */
#ifndef MGOPT__INFER_H
#define MGOPT__INFER_H
#include "../../internal.h"

/* ---- failures */
/* Sets d to MGOPT_ERR_TYPE with "<op type>: <message>" and the op's name; returns MGOPT_ERR_TYPE. d may be NULL. */
MGOPT__PRIVATE mgopt_status mgopt__ti_fail(mgopt_diag *d, const mgopt_op *op, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
MGOPT__PRIVATE mgopt_status mgopt__ti_nomem(mgopt_diag *d);

/* ---- dims and types */
/* 1 if the dim is static. */
MGOPT__PRIVATE int mgopt__ti_st(mgopt_dim x);
/* t sanitised: a tensor type whose rank cannot be trusted gets rank -1. */
MGOPT__PRIVATE mgopt_type mgopt__ti_view(const mgopt_type *t);
/* Normalises axis `ax` against `rank` (negative counts from the end). 0 if out of range. */
MGOPT__PRIVATE int mgopt__ti_axis(int64_t ax, int64_t rank, int32_t *out);
/* Broadcasts two dims: 0 on two different static non-1 dims. */
MGOPT__PRIVATE int mgopt__ti_bdim(mgopt_dim a, mgopt_dim b, mgopt_dim *o);
/* Two dims that must be equal: the most precise of both (two different symbols: unknown);
   0 on a static conflict. */
MGOPT__PRIVATE int mgopt__ti_unify(mgopt_dim a, mgopt_dim b, mgopt_dim *o);
/* 1 when dtypes a and b are known and differ. */
MGOPT__PRIVATE int mgopt__ti_dt_clash(int a, int b);

/* ---- operands and parameters */
/* The single tensor operand of `slot`, or 0 when absent (a list counts as absent). */
MGOPT__PRIVATE int mgopt__ti_opt(const mgopt_op *op, const char *slot, mgopt_type *t);
/* A required tensor operand. */
MGOPT__PRIVATE mgopt_status mgopt__ti_in(const mgopt_op *op, const char *slot, mgopt_type *t, mgopt_diag *d);
/* The values of variadic slot `slot` (NULL and 0 when absent). */
MGOPT__PRIVATE int32_t mgopt__ti_list(const mgopt_op *op, const char *slot, const mgopt_use **uses);
/* An integer list parameter: count >= 0 (values in *v), -1 absent, -2 given but not constant. */
MGOPT__PRIVATE int64_t mgopt__ti_ints(mgopt_program *p, const mgopt_op *op, const char *name, const int64_t **v);
/* A dtype parameter given by name ("fp32"); MGOPT_DT_UNKNOWN when absent or unknown. */
MGOPT__PRIVATE int mgopt__ti_dtype_param(const mgopt_op *op, const char *name);
/* 1 when string parameter `name` is absent or one of the '|'-separated words in `allowed`. */
MGOPT__PRIVATE int mgopt__ti_enum_ok(const mgopt_op *op, const char *name, const char *allowed);

/* ---- outputs */
/* Output type with `rank` unknown dims (rank -1: unknown rank). */
MGOPT__PRIVATE mgopt_status mgopt__ti_out(mgopt_program *p, const mgopt_op *op, mgopt_type *out, int dt,
                                          int64_t rank, mgopt_diag *d);
/* Output equal to t (sanitised) with dtype dt. */
MGOPT__PRIVATE mgopt_status mgopt__ti_like(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                           const mgopt_type *t, int dt, mgopt_diag *d);
/* Broadcast of n tensor types into out (dtype dt). */
MGOPT__PRIVATE mgopt_status mgopt__ti_broadcast(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                const mgopt_type *ts, int n, int dt, mgopt_diag *d);

/* ---- inference functions named by the rows of MGOPT_OP_TABLE (mgopt_infer_fn), one family per file */
#define MGOPT__TI_FN(name)                                                                  \
  MGOPT__PRIVATE mgopt_status mgopt__infer_##name(mgopt_program *p, const mgopt_op *op, \
                                                  mgopt_type *out, mgopt_diag *d)
/* elementwise.c */
MGOPT__TI_FN(const);
MGOPT__TI_FN(identity);
MGOPT__TI_FN(unary);
MGOPT__TI_FN(bias_add);
MGOPT__TI_FN(binary);
MGOPT__TI_FN(select);
MGOPT__TI_FN(cast);
/* shape.c */
MGOPT__TI_FN(reshape);
MGOPT__TI_FN(transpose);
MGOPT__TI_FN(expand_dims);
MGOPT__TI_FN(squeeze);
MGOPT__TI_FN(join);
MGOPT__TI_FN(split);
MGOPT__TI_FN(slice_by_index);
MGOPT__TI_FN(slice_by_size);
MGOPT__TI_FN(gather);
MGOPT__TI_FN(gather_axis);
MGOPT__TI_FN(one_hot);
MGOPT__TI_FN(pad);
MGOPT__TI_FN(tile);
MGOPT__TI_FN(pixel_shuffle);
MGOPT__TI_FN(space_to_batch);
MGOPT__TI_FN(batch_to_space);
/* struct.c */
MGOPT__TI_FN(scatter_axis);
MGOPT__TI_FN(scatter_nd);
MGOPT__TI_FN(gather_nd);
MGOPT__TI_FN(reverse_sequence);
MGOPT__TI_FN(depth_space);
MGOPT__TI_FN(topk);
MGOPT__TI_FN(range_1d);
MGOPT__TI_FN(fill);
/* reduce.c */
MGOPT__TI_FN(reduce);
MGOPT__TI_FN(softmax);
MGOPT__TI_FN(reduce_arg);
MGOPT__TI_FN(cumsum);
MGOPT__TI_FN(matmul);
MGOPT__TI_FN(linear);
MGOPT__TI_FN(einsum);
/* window.c */
MGOPT__TI_FN(conv);
MGOPT__TI_FN(pool);
MGOPT__TI_FN(resample);
/* control.c */
MGOPT__TI_FN(while);
MGOPT__TI_FN(cond);
/* constexpr.c */
MGOPT__TI_FN(quantize);
MGOPT__TI_FN(dequant);
MGOPT__TI_FN(lut);
MGOPT__TI_FN(sparse);
MGOPT__TI_FN(lut_sparse);
MGOPT__TI_FN(sparse_shift);
/* state.c */
MGOPT__TI_FN(read_state);
MGOPT__TI_FN(update_state);
/* recurrent.c */
MGOPT__TI_FN(recurrent);
#undef MGOPT__TI_FN

#endif /* MGOPT__INFER_H */
