/* src/passes/fusion/fuse_matmul_dequantized_weight_bias.c — common::fuse_matmul_dequantized_weight_bias: a 2-d matmul by a dequantized constant matrix followed by add of a constant becomes linear.

   Spec: ONNX Runtime's basic-level MatMulAddFusion, which writes Gemm for a
   static QDQ model's MatMul whose weight comes from DequantizeLinear, then
   Add of a constant bias. fuse_matmul_weight_bias (MIL's rule) takes only
   a constant weight; this pass takes a weight computed by
   constexpr_affine_dequantize (what dequantize_to_constexpr makes of a
   DequantizeLinear of constant integers), and the ONNX writer then writes
   the linear of a 2-d input as Gemm(x, DequantizeLinear(q'), b, transB=1).

   Before:
     main(%x: (2, 3, fp32)) {
       %q: (3, 2, int8)* = const(val=[[1, 2], [3, 4], [5, 6]])
       %z: (int8)* = const(val=0)
       %s: (2, fp32)* = const(val=[0.5, 0.25])
       %w: (3, 2, fp32) = constexpr_affine_dequantize(quantized_data=%q, zero_point=%z, scale=%s, axis=1)
       %m: (2, 2, fp32) = matmul(x=%x, y=%w, transpose_x=false, transpose_y=false)
       %b: (2, fp32)* = const(val=[10, 20])
       %y: (2, 2, fp32) = add(x=%m, y=%b)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %z: (int8)* = const(val=0)
       %s: (2, fp32)* = const(val=[0.5, 0.25])
       %y_weight_q: (2, 3, int8)* = const(val=[[1, 3, 5], [2, 4, 6]])
       %y_weight: (2, 3, fp32) = constexpr_affine_dequantize(quantized_data=%y_weight_q, zero_point=%z, scale=%s, axis=0)
       %y_bias: (2, fp32)* = const(val=[10, 20])
       %y: (2, 2, fp32) = linear(x=%x, weight=%y_weight, bias=%y_bias)
     } -> (%y)

   Fires on: a matmul with constant transpose flags, transpose_x false, x of
   rank 2, y the output of a constexpr_affine_dequantize of rank 2 that
   nothing else reads and that is not a block output, whose scale and zero
   point are of rank <= 1; the matmul's output is not a block output and
   its one reader is an add (either operand order) or a sub (matmul minus
   constant) of a constant c of the weight's float dtype with N elements
   laid out as [N] or [1, N]. With transpose_y the dequantized matrix is
   already linear's [N, K] weight; without it the quantized data is
   transposed (int8 or uint8 bytes, the same size) and the axis of the
   per-channel parameters becomes the other one, so the new constexpr
   dequantizes to W^T element for element. The bias is c (sub: -c).
   Must not fire: a weight that is a constant (fuse_matmul_weight_bias's),
   computed at run time, or read by another op (transposing it would store
   the weight twice: the file would grow); x of another rank (the ONNX
   writer would need a Transpose for a rank > 2 linear over a computed
   weight); transpose_x; a constant minus the matmul (the weight would be
   negated); a bias of another length or layout, or not constant; a
   target that cannot express the linear.
   Numeric contract: what ONNX Runtime's own fusion does: linear(x, W^T, b)
   is the same products and sums as add(matmul(x, W), b), in one kernel
   (Gemm adds the bias into its accumulator; over a long inner dimension
   the sum may round differently than MatMul then Add). The weight's values
   are the same: only its integers are transposed, the bias only negated.
   Cost: worklist patterns, O(matmuls + weight elements of the fused ones). */
#include "../../passes_internal.h"

/* The constexpr_affine_dequantize reading q transposed: data q^T, the
   same zero point and scale, the axis the other of the two; NULL on failure. */
static mgopt_op *mgopt__fmdw_transposed(mgopt_rewriter *rw, mgopt_op *pos, mgopt_op *ce, const char *name) {
  static const char *const slots[3] = {"quantized_data", "zero_point", "scale"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *q = mgopt_op_operand(ce, "quantized_data"), *vals[3];
  mgopt_tensor *qt = q ? mgopt_value_const(q) : NULL, *nt;
  int64_t axis = mgopt_op_get_int(ce, "axis", 0);
  mgopt_op *made;
  if (!qt || qt->rank != 2 || (qt->dtype != MGOPT_DT_INT8 && qt->dtype != MGOPT_DT_UINT8)) return NULL;
  if (axis < 0) axis += 2;
  if (axis < 0 || axis > 1) return NULL;
  nt = mgopt__tensor_transpose2d(p, qt);
  if (!nt) return NULL;
  vals[0] = mgopt_rw_const(rw, pos, mgopt__pu_name2(p, name, "_q"), nt);
  vals[1] = mgopt_op_operand(ce, "zero_point");
  vals[2] = mgopt_op_operand(ce, "scale");
  if (!vals[0]) return NULL;
  made = vals[1] && vals[2] ? mgopt_rw_create(rw, pos, "constexpr_affine_dequantize", name, 3, slots, vals, 1) : NULL;
  if (!made || mgopt_op_set_int(made, "axis", 1 - axis) != MGOPT_OK) {
    if (made) mgopt_rw_erase(rw, made);
    mgopt__pu_erase_if_dead(rw, vals[0]->def);
    return NULL;
  }
  return made;
}

static int mgopt__fmdw_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const slots[3] = {"x", "weight", "bias"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *w = mgopt_op_operand(op, "y"), *out, *c, *vals[3], *bv;
  mgopt_op *user, *ce, *nce = NULL, *lin, *made[2], *matched[2];
  const mgopt_value *zp, *sc;
  mgopt_tensor *ct, *nb;
  const char *name;
  int64_t n, i;
  int first, ty;
  mgopt_dtype dt;
  MGOPT__UNUSED(ud);
  if (!x || !w || op->nouts != 1 || mgopt_op_operand(op, "transpose_x") || mgopt_op_operand(op, "transpose_y")) return 0;
  if (mgopt_op_get_bool(op, "transpose_x", 0) || x->type.rank != 2 || w->type.rank != 2) return 0;
  ty = mgopt_op_get_bool(op, "transpose_y", 0);
  ce = w->def;
  if (!ce || ce->kind != MGOPT_OP_constexpr_affine_dequantize || ce->nouts != 1 || w->nuses != 1 ||
      mgopt__pu_is_block_output(w))
    return 0;
  zp = mgopt_op_operand(ce, "zero_point");
  sc = mgopt_op_operand(ce, "scale");
  if (!zp || !sc || zp->type.rank > 1 || sc->type.rank > 1) return 0;
  out = op->outs[0];
  if (mgopt__pu_is_block_output(out)) return 0;
  user = mgopt__pu_single_user(out);
  if (!user || (user->kind != MGOPT_OP_add && user->kind != MGOPT_OP_sub) || user->nouts != 1) return 0;
  first = mgopt_op_operand(user, "x") == out;
  if (user->kind == MGOPT_OP_sub && !first) return 0;
  c = mgopt_op_operand(user, first ? "y" : "x");
  if (!c || c == out || !(ct = mgopt_value_const(c))) return 0;
  dt = (mgopt_dtype)w->type.dtype;
  if (!mgopt_dtype_is_float(dt) || ct->dtype != dt || x->type.dtype != dt || out->type.dtype != dt) return 0;
  if (!mgopt_dim_is_static(w->type.dims[ty ? 0 : 1])) return 0;
  n = w->type.dims[ty ? 0 : 1].v;
  if (ct->numel != n || ct->rank < 1 || ct->rank > 2 || ct->shape[ct->rank - 1] != n) return 0;
  name = mgopt__pu_value_name(user->outs[0]);
  nb = mgopt_tensor_new(p, dt, 1, &n);
  if (!nb) return 0;
  for (i = 0; i < n; i++)
    mgopt_tensor_set_f64(nb, i, user->kind == MGOPT_OP_sub ? -mgopt_tensor_get_f64(ct, i) : mgopt_tensor_get_f64(ct, i));
  if (!ty && !(nce = mgopt__fmdw_transposed(rw, user, ce, mgopt__pu_name2(p, name, "_weight")))) return 0;
  bv = mgopt_rw_const(rw, user, mgopt__pu_name2(p, name, "_bias"), nb);
  vals[0] = x;
  vals[1] = nce ? nce->outs[0] : w;
  vals[2] = bv;
  lin = bv ? mgopt_rw_create(rw, user, "linear", name, 3, slots, vals, 1) : NULL;
  if (!lin) {
    if (bv) mgopt__pu_erase_if_dead(rw, bv->def);
    if (nce) mgopt__pu_erase_with_consts(rw, nce);
    return 0;
  }
  n = 0;
  if (nce) made[n++] = nce;
  made[n++] = lin;
  matched[0] = op;
  matched[1] = ce;
  /* with transpose_y the constexpr stays: the linear reads it */
  return mgopt__pu_fuse_finish_named(rw, made, (int32_t)n, user, matched, nce ? 2 : 1);
}

static const mgopt_pattern mgopt__fmdw_patterns[] = {
    {"matmul_dequantized_add", MGOPT_OP_matmul, NULL, 1, mgopt__fmdw_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, fuse_matmul_dequantized_weight_bias,
                           "a 2-d matmul by a dequantized constant matrix followed by add of a constant becomes linear "
                           "(Gemm in ONNX)",
                           mgopt__fmdw_patterns);
