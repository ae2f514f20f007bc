/* src/core/infer/recurrent.c — type inference of MIL's recurrent ops: lstm, gru, rnn. */
#include "infer.h"

/* lstm (3 outputs), gru and rnn (2): x [S, B, I]; weight_ih [G*H, I],
   weight_hh [G*H, H] (G = 4, 3, 1), bidirectional lstm with the _back
   weights too; outputs [S or 1 (output_sequence), B, D*H] then [B, D*H]. */
MGOPT__PRIVATE mgopt_status mgopt__infer_recurrent(mgopt_program *p, const mgopt_op *op, mgopt_type *out,
                                                   mgopt_diag *d) {
  static const char *const acts = "sigmoid|tanh|relu|scaled_tanh|sigmoid_hard|linear";
  int kind = op->kind == MGOPT_OP_lstm ? 2 : op->kind == MGOPT_OP_gru ? 1 : 0;
  int64_t G = kind == 2 ? 4 : kind == 1 ? 3 : 1, D;
  int seq = mgopt_op_get_bool(op, "output_sequence", 0), k;
  mgopt_type x, wi, wh, t;
  mgopt_dim h = {-1, NULL}, dh = {-1, NULL};
  mgopt_status s;
  if ((s = mgopt__ti_in(op, "x", &x, d)) != MGOPT_OK || (s = mgopt__ti_in(op, "initial_h", &t, d)) != MGOPT_OK ||
      (s = mgopt__ti_in(op, "weight_ih", &wi, d)) != MGOPT_OK || (s = mgopt__ti_in(op, "weight_hh", &wh, d)) != MGOPT_OK)
    return s;
  if (kind == 2 && (s = mgopt__ti_in(op, "initial_c", &t, d)) != MGOPT_OK) return s;
  if (op->nouts != (kind == 2 ? 3 : 2)) return mgopt__ti_fail(d, op, "gives %d outputs", kind == 2 ? 3 : 2);
  if (x.dtype != MGOPT_DT_UNKNOWN && x.dtype != MGOPT_DT_FP32 && x.dtype != MGOPT_DT_FP16)
    return mgopt__ti_fail(d, op, "x must be fp32 or fp16");
  if (!mgopt__ti_enum_ok(op, "direction", kind == 2 ? "forward|reverse|bidirectional" : "forward|reverse"))
    return mgopt__ti_fail(d, op, "direction must be forward or reverse%s", kind == 2 ? " or bidirectional" : "");
  if (!mgopt__ti_enum_ok(op, "activation", acts) || !mgopt__ti_enum_ok(op, "recurrent_activation", acts) ||
      !mgopt__ti_enum_ok(op, "cell_activation", acts))
    return mgopt__ti_fail(d, op, "unknown activation");
  {
    size_t n = 0;
    const char *dir = mgopt_op_get_string(op, "direction", &n);
    D = kind == 2 && dir && n == 13 && memcmp(dir, "bidirectional", 13) == 0 ? 2 : 1;
  }
  if (D == 2 && (!mgopt__ti_opt(op, "weight_ih_back", &t) || !mgopt__ti_opt(op, "weight_hh_back", &t)))
    return mgopt__ti_fail(d, op, "bidirectional needs weight_ih_back and weight_hh_back");
  if (x.rank >= 0 && x.rank != 3) return mgopt__ti_fail(d, op, "x must have rank 3");
  if (wi.rank >= 0 && wi.rank != 2) return mgopt__ti_fail(d, op, "weight_ih must have rank 2");
  if (wh.rank >= 0 && wh.rank != 2) return mgopt__ti_fail(d, op, "weight_hh must have rank 2");
  if (wh.rank == 2 && mgopt__ti_st(wh.dims[1])) {
    h = wh.dims[1];
    if (mgopt__ti_st(wh.dims[0]) && wh.dims[0].v != G * h.v)
      return mgopt__ti_fail(d, op, "weight_hh is not [%d*H, H]", (int)G);
    if (wi.rank == 2 && mgopt__ti_st(wi.dims[0]) && wi.dims[0].v != G * h.v)
      return mgopt__ti_fail(d, op, "weight_ih is not [%d*H, I]", (int)G);
    dh = mgopt_dim_static(D * h.v);
  }
  if (x.rank == 3 && wi.rank == 2 && mgopt__ti_st(x.dims[2]) && mgopt__ti_st(wi.dims[1]) && x.dims[2].v != wi.dims[1].v)
    return mgopt__ti_fail(d, op, "weight_ih's input size %lld is not x's %lld", (long long)wi.dims[1].v,
                          (long long)x.dims[2].v);
  if ((s = mgopt__ti_out(p, op, &out[0], x.dtype, 3, d)) != MGOPT_OK) return s;
  out[0].dims[0] = seq ? (x.rank == 3 ? x.dims[0] : out[0].dims[0]) : mgopt_dim_static(1);
  if (x.rank == 3) out[0].dims[1] = x.dims[1];
  out[0].dims[2] = dh;
  for (k = 1; k < op->nouts; k++) {
    if ((s = mgopt__ti_out(p, op, &out[k], x.dtype, 2, d)) != MGOPT_OK) return s;
    out[k].dims[0] = out[0].dims[1];
    out[k].dims[1] = dh;
  }
  return MGOPT_OK;
}
