/* src/passes/relay/peephole_dense_to_conv.c — relay::peephole_dense_to_conv: a fully connected layer with at most 2048 inputs becomes a 1x1 conv.

   Spec: tvm_relay_passes.md, "Peephole", PatternTransformer5: for an
   accelerator whose only matrix engine is its convolution, a dense layer
   with no more than 2048 input channels runs as a 1x1 convolution.

   Before:
     main(%x: (2, 2, fp32)) {
       %w: (1, 2, fp32)* = const(val=[[1, 2]])
       %y: (2, 1, fp32) = linear(x=%x, weight=%w)
     } -> (%y)
   After:
     main(%x: (2, 2, fp32)) {
       %y_in_shape_0: (4, int32)* = const(val=[-1, 2, 1, 1])
       %y_nchw_0: (2, 2, 1, 1, fp32) = reshape(x=%x, shape=%y_in_shape_0)
       %y_weight_0: (1, 2, 1, 1, fp32)* = const(val=[[[[1]], [[2]]]])
       %y_conv_0: (2, 1, 1, 1, fp32) = conv(x=%y_nchw_0, weight=%y_weight_0, strides=[1, 1], pad_type="valid", pad=[0, 0, 0, 0], dilations=[1, 1], groups=1)
       %y_out_shape_0: (2, int32)* = const(val=[-1, 1])
       %y: (2, 1, fp32) = reshape(x=%y_conv_0, shape=%y_out_shape_0)
     } -> (%y)

   x (N, K) is read as (N, K, 1, 1); the weight (M, K) as (M, K, 1, 1) (the
   same bytes); the bias goes to the conv; the result (N, M, 1, 1) is read
   back as (N, M). The conv computes the same dot products; a kernel may
   sum them in another order or width (mgopt's own conv and linear kernels
   do): results agree within the rounding of a K-term sum.
   Fires on: linear with x of rank 2 whose K (static) is at most 2048, a
   constant weight of rank 2, a float dtype.
   Must not fire: x of another rank or with K unknown or above 2048; a
   run-time weight; a result the program's target cannot express (the ops
   made are taken back).
   Cost: worklist patterns, O(linears). */
#include "../../passes_internal.h"

#define MGOPT__PDC_MAX_IN 2048

static int mgopt__pdc_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const rslots[2] = {"x", "shape"};
  static const char *const cslots[3] = {"x", "weight", "bias"};
  static const int64_t one2[2] = {1, 1}, zero4[4] = {0, 0, 0, 0};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "weight"), *b = mgopt_op_operand(op, "bias");
  mgopt_value *vals[3];
  mgopt_tensor *wt = w ? mgopt_value_const(w) : NULL, *w4;
  mgopt_op *made[3];
  const char *name;
  int64_t shape[4], k, m;
  mgopt_dtype dt;
  MGOPT__UNUSED(ud);
  if (!x || !wt || op->nouts != 1 || mgopt__pu_fused_act(op) || x->type.kind != MGOPT_TYPE_TENSOR || x->type.rank != 2 || wt->rank != 2) return 0;
  dt = (mgopt_dtype)x->type.dtype;
  if (!mgopt__pw_is_float_weight(dt) || wt->dtype != dt)
    return 0;
  if (!mgopt_dim_is_static(x->type.dims[1])) return 0;
  k = x->type.dims[1].v;
  m = wt->shape[0];
  if (k < 1 || k > MGOPT__PDC_MAX_IN || wt->shape[1] != k) return 0;
  name = mgopt__pu_value_name(op->outs[0]);
  /* x as (N, K, 1, 1) */
  shape[0] = -1, shape[1] = k, shape[2] = 1, shape[3] = 1;
  vals[0] = x;
  vals[1] = mgopt_rw_const(rw, op, mgopt_program_fresh_name(p, mgopt__pu_name2(p, name, "_in_shape")),
                           mgopt__pu_const_i32_1d(p, shape, 4));
  if (!vals[1]) return 0;
  made[0] = mgopt_rw_create(rw, op, "reshape", mgopt_program_fresh_name(p, mgopt__pu_name2(p, name, "_nchw")), 2,
                            rslots, vals, 1);
  if (!made[0]) return 0;
  /* the weight as (M, K, 1, 1): the same bytes */
  shape[0] = m;
  w4 = mgopt_tensor_new_borrowed(p, dt, 4, shape, mgopt_tensor_data(p, wt), wt->nbytes);
  vals[0] = made[0]->outs[0];
  vals[1] = w4 ? mgopt_rw_const(rw, op, mgopt_program_fresh_name(p, mgopt__pu_name2(p, name, "_weight")), w4) : NULL;
  vals[2] = b;
  made[1] = vals[1] ? mgopt_rw_create(rw, op, "conv", mgopt_program_fresh_name(p, mgopt__pu_name2(p, name, "_conv")),
                                      b ? 3 : 2, cslots, vals, 1)
                    : NULL;
  if (!made[1] || mgopt_op_set_ints(made[1], "strides", one2, 2) || mgopt_op_set_string(made[1], "pad_type", "valid") ||
      mgopt_op_set_ints(made[1], "pad", zero4, 4) || mgopt_op_set_ints(made[1], "dilations", one2, 2) ||
      mgopt_op_set_int(made[1], "groups", 1) || mgopt_op_infer(p, made[1], NULL)) {
    if (made[1]) mgopt__pu_erase_with_consts(rw, made[1]);
    mgopt__pu_erase_with_consts(rw, made[0]);
    return 0;
  }
  /* back to (N, M) */
  shape[0] = -1, shape[1] = m;
  vals[0] = made[1]->outs[0];
  vals[1] = mgopt_rw_const(rw, op, mgopt_program_fresh_name(p, mgopt__pu_name2(p, name, "_out_shape")),
                           mgopt__pu_const_i32_1d(p, shape, 2));
  made[2] = vals[1] ? mgopt_rw_create(rw, op, "reshape", op->outs[0]->name, 2, rslots, vals, 1) : NULL;
  if (!made[2]) {
    mgopt__pu_erase_with_consts(rw, made[1]);
    mgopt__pu_erase_with_consts(rw, made[0]);
    return 0;
  }
  return mgopt__pu_fuse_finish_named(rw, made, 3, op, NULL, 0);
}

static const mgopt_pattern mgopt__pdc_patterns[] = {
    {"dense_to_conv", MGOPT_OP_linear, NULL, 1, mgopt__pdc_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(relay, relay, peephole_dense_to_conv,
                           "a fully connected layer with at most 2048 inputs becomes a 1x1 conv", mgopt__pdc_patterns);
