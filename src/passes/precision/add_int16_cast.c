/* src/passes/precision/add_int16_cast.c — common::add_int16_cast: int32 gather and squeeze compute in int16/uint16, with casts in and out.

   Spec: mil_graph_passes.txt, FP16ComputePrecision's int16 companion; reference
   mil-passes.md §3.35 (add_int16_cast).

   Before:
     main(%x: (4, 3, int32), %i: (2, int32)) {
       %g: (2, 3, int32) = gather(x=%x, indices=%i, axis=0)
     } -> (%g)
   After:
     main(%x: (4, 3, int32), %i: (2, int32)) {
       %x_to_int16: (4, 3, int16) = cast(x=%x, dtype="int16")
       %i_to_int16: (2, int16) = cast(x=%i, dtype="int16")
       %g_cast_int16: (2, 3, int16) = gather(x=%x_to_int16, indices=%i_to_int16, axis=0)
       %g: (2, 3, int32) = cast(x=%g_cast_int16, dtype="int32")
     } -> (%g)

   Fires on: gather and squeeze (the ops of MIL's list that mgopt registers:
   gather_along_axis, gather_nd and topk are not canonical ops here) with int32
   tensor operands. Like the reference, it assumes the int32 data of these ops
   fits int16 (the FP16 compute-precision contract: the pass is opt-in and not
   in any default pipeline). Per operand:
     a const whose values all fit uint16 becomes a uint16 const, else one that
     fits int16 an int16 const ("<c>_to_uint16" / "<c>_to_int16"), else it stays;
     cast(dtype="int32") of a uint16 value is bypassed (the casts cancel);
     any other int32 value goes through cast(dtype="int16"), shared per block;
     gather's indices stay int32 when the gathered axis may exceed 32767
     (static size > 32767, or unknown).
   The op is re-created with outputs "<out>_cast_int16" and each output whose
   dtype changed is cast back to int32. Function outputs keep names and dtypes.
   Must not fire: other ops; non-int32 operands; an op whose inference rejects
   the narrowed operands.
   Cost: one walk, O(ops + operands + constant elements). */
#include "../../passes_internal.h"

static int mgopt__i16_decide(const mgopt_op *op, int32_t s, int32_t k, mgopt_value *v, int32_t *dt, mgopt_value **rep,
                             void *ud) {
  const mgopt_tensor *t;
  MGOPT__UNUSED(k);
  MGOPT__UNUSED(ud);
  if (op->kind != MGOPT_OP_gather && op->kind != MGOPT_OP_squeeze) return -1;
  if (v->type.kind != MGOPT_TYPE_TENSOR || v->type.dtype != MGOPT_DT_INT32) return 0;
  if (op->kind == MGOPT_OP_gather && strcmp(op->slots[s].name, "indices") == 0 && !mgopt_value_const(v)) {
    const mgopt_value *x = mgopt_op_operand(op, "x");
    int64_t axis = mgopt_op_get_int(op, "axis", 0);
    if (!x || x->type.rank <= 0) return 0;
    if (axis < 0) axis += x->type.rank;
    if (axis < 0 || axis >= x->type.rank || !mgopt_dim_is_static(x->type.dims[axis]) || x->type.dims[axis].v > 32767)
      return 0;
  }
  t = mgopt_value_const(v);
  if (t) {
    int64_t i, lo = 0, hi = 0;
    for (i = 0; i < t->numel; i++) {
      int64_t e = mgopt_tensor_get_i64(t, i);
      if (i == 0 || e < lo) lo = e;
      if (i == 0 || e > hi) hi = e;
    }
    if (lo >= 0 && hi <= 65535) *dt = MGOPT_DT_UINT16;
    else if (lo >= -32768 && hi <= 32767) *dt = MGOPT_DT_INT16;
    else return 0;
    return 1;
  }
  if (v->def && v->def->kind == MGOPT_OP_cast) {
    mgopt_value *src = mgopt_op_operand(v->def, "x");
    if (src && src->type.kind == MGOPT_TYPE_TENSOR && src->type.dtype == MGOPT_DT_UINT16) {
      *rep = src;
      *dt = MGOPT_DT_UINT16;
      return 1;
    }
  }
  *dt = MGOPT_DT_INT16;
  return 1;
}

static mgopt_value *mgopt__i16_conv(mgopt_program *p, mgopt_op *pos, mgopt_value *v, int32_t dt, void *ud) {
  const mgopt_tensor *t = mgopt_value_const(v);
  const char *name = mgopt__pu_converted_name(p, v, (mgopt_dtype)dt);
  MGOPT__UNUSED(ud);
  if (t) {
    mgopt_tensor *h = mgopt_tensor_new(p, (mgopt_dtype)dt, t->rank, t->shape);
    int64_t i;
    if (!h) return NULL;
    for (i = 0; i < t->numel; i++) mgopt_tensor_set_i64(h, i, mgopt_tensor_get_i64(t, i));
    return mgopt_build_const(p, pos->parent, pos, name, h);
  }
  return mgopt__pu_cast_value(p, pos, v, (mgopt_dtype)dt, name);
}

static mgopt_status mgopt__i16_run(mgopt_pass_ctx *ctx) {
  return mgopt__pu_precision_run(ctx, "_cast_int16", mgopt__i16_decide, mgopt__i16_conv, NULL);
}

MGOPT__DEFINE_PASS(precision, common, add_int16_cast,
                   "int32 gather and squeeze compute in int16/uint16, with casts in and out", mgopt__i16_run);
