/* src/passes/fusion/use_reflection_padding.c — common::use_reflection_padding: a concat of mirrored one-wide slices around x becomes pad(mode="reflect").

   Spec: mil_graph_passes.txt, "Identify a reflection padding layer composed
   out of slices and concats"; reference §3.33 (use_reflection_padding).

   Before:
     main(%x: (1, 2, 6, 8, fp32)) {
       %b0: (4, int32)* = const(val=[0, 0, 0, 1])
       %e0: (4, int32)* = const(val=[0, 0, 0, 2])
       %l: (1, 2, 6, 1, fp32) = slice_by_index(x=%x, begin=%b0, end=%e0, begin_mask=[true, true, true, false], end_mask=[true, true, true, false])
       %b1: (4, int32)* = const(val=[0, 0, 0, -2])
       %e1: (4, int32)* = const(val=[0, 0, 0, -1])
       %r: (1, 2, 6, 1, fp32) = slice_by_index(x=%x, begin=%b1, end=%e1, begin_mask=[true, true, true, false], end_mask=[true, true, true, false])
       %o: (1, 2, 6, 10, fp32) = concat(values=(%l, %x, %r), axis=3)
     } -> (%o)
   After:
     main(%x: (1, 2, 6, 8, fp32)) {
       %o_pad: (2, int32)* = const(val=[1, 1])
       %o: (1, 2, 6, 10, fp32) = pad(x=%x, pad=%o_pad, mode="reflect")
     } -> (%o)

   Fires on: concat(s_0, ..., s_k-1, x, t_0, ..., t_k-1, axis=a), k >= 1,
   non-interleaved, where every s_i and t_j is a slice_by_index of x that is
   full on every axis but a (begin 0 or masked, end masked or past the
   dim, stride 1, no squeeze) and one wide on a: s_i picks index k - i and
   t_j index D - 2 - j (D = x's static dim on a; negative bounds count from
   the end). That is reflection padding of k on both sides: pad(x,
   mode="reflect") with pad [k, k] when a is the last axis and [k, k, 0, 0]
   when it is the one before (the axes pad's reflect mode covers). Slices
   that lose their last user go with their bound consts.
   Must not fire: a slice that is a block output, reads another tensor or
   picks another index; an even count of values or fewer than 3; the middle
   value is not what the slices read; a on another axis; D unknown or
   k > D - 1; interleave; a non-float x; ops in different blocks; the target
   cannot write the pad (mgopt_program_target_accepts).
   Cost: worklist patterns, O(concats x values x rank). */
#include "../../passes_internal.h"

#define MGOPT__URP_END_SENTINEL 2147483647 /* an end at least this large means "to the end" of any dim */

/* 1 when slice op of x is full on every axis but `axis`, where it picks exactly index `want`. */
static int mgopt__urp_picks(mgopt_program *p, const mgopt_op *op, const mgopt_value *x, int32_t axis, int64_t want) {
  const int64_t *b = NULL, *e = NULL, *s = NULL, *bm = NULL, *em = NULL, *sm = NULL;
  int64_t nb, ne, ns, nbm, nem, nsm, r = x->type.rank;
  int32_t d;
  nb = mgopt_op_get_ints(p, op, "begin", &b);
  ne = mgopt_op_get_ints(p, op, "end", &e);
  ns = mgopt_op_get_ints(p, op, "stride", &s);
  nbm = mgopt_op_get_ints(p, op, "begin_mask", &bm);
  nem = mgopt_op_get_ints(p, op, "end_mask", &em);
  nsm = mgopt_op_get_ints(p, op, "squeeze_mask", &sm);
  if (nb != r || ne != r || (mgopt_op_operand(op, "stride") && ns != r)) return 0;
  if ((nbm >= 0 && nbm != r) || (nem >= 0 && nem != r) || (nsm >= 0 && nsm != r)) return 0;
  for (d = 0; d < r; d++) {
    int bmask = nbm > 0 && bm[d], emask = nem > 0 && em[d];
    if ((ns > 0 && s[d] != 1) || (nsm > 0 && sm[d])) return 0;
    if (d != axis) {
      int64_t dim = mgopt_dim_is_static(x->type.dims[d]) ? x->type.dims[d].v : -1;
      if (!bmask && b[d] != 0) return 0;
      if (!emask && e[d] < MGOPT__URP_END_SENTINEL && (dim < 0 || e[d] < dim)) return 0;
    } else {
      int64_t dim = x->type.dims[d].v, lo = bmask ? 0 : b[d], hi = emask ? dim : e[d];
      if (lo < 0) lo += dim;
      if (hi < 0) hi += dim;
      if (hi > dim) hi = dim;
      if (lo != want || hi != want + 1) return 0;
    }
  }
  return 1;
}

static int mgopt__urp_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const slots[2] = {"x", "pad"};
  mgopt_program *p = mgopt_rw_program(rw);
  int32_t si = mgopt_op_slot_index(op, "values"), n, k, i, axis, rank;
  mgopt_value *x, *out, *ins[2];
  mgopt_tensor *pt;
  mgopt_op *pad;
  int64_t dim, pads[4] = {0, 0, 0, 0};
  MGOPT__UNUSED(ud);
  if (si < 0 || op->nouts != 1 || mgopt_op_get_bool(op, "interleave", 0)) return 0;
  n = op->slots[si].n;
  if (n < 3 || n % 2 == 0) return 0;
  k = n / 2;
  x = op->slots[si].uses[k].value;
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR || !mgopt_dtype_is_float((mgopt_dtype)x->type.dtype)) return 0;
  rank = x->type.rank;
  axis = (int32_t)mgopt__pu_norm_axis(mgopt_op_get_int(op, "axis", 0), rank);
  if (rank < 1 || axis < 0 || axis < rank - 2 || !mgopt_dim_is_static(x->type.dims[axis])) return 0;
  dim = x->type.dims[axis].v;
  if (k > dim - 1) return 0;
  for (i = 0; i < n; i++) {
    mgopt_value *v = op->slots[si].uses[i].value;
    mgopt_op *sl;
    if (i == k) continue;
    sl = mgopt__pu_def_of(v, MGOPT_OP_slice_by_index);
    if (!sl || sl->parent != op->parent || mgopt__pu_is_block_output(v) || mgopt_op_operand(sl, "x") != x ||
        !mgopt__urp_picks(p, sl, x, axis, i < k ? k - i : dim - 2 - (i - k - 1)))
      return 0;
  }
  out = op->outs[0];
  pads[0] = pads[1] = k;
  pt = mgopt__pu_const_i32_1d(p, pads, axis == rank - 1 ? 2 : 4);
  if (!pt) return 0;
  ins[0] = x;
  ins[1] = mgopt_rw_const(rw, op, mgopt__pu_name2(p, mgopt__pu_value_name(out), "_pad"), pt);
  if (!ins[1]) return 0;
  pad = mgopt_rw_create(rw, op, "pad", mgopt__pu_value_name(out), 2, slots, ins, 1);
  if (!pad || mgopt_op_set_string(pad, "mode", "reflect") != MGOPT_OK) {
    if (pad) mgopt_rw_erase(rw, pad);
    mgopt_rw_erase(rw, ins[1]->def);
    return 0;
  }
  {
    /* the slices, each once (a slice may stand on both sides) */
    mgopt_op *sl[64];
    int32_t ns = 0, j;
    for (i = 0; i < n && ns < 64; i++) {
      mgopt_op *s = i == k ? NULL : op->slots[si].uses[i].value->def;
      for (j = 0; s && j < ns; j++)
        if (sl[j] == s) s = NULL;
      if (s) sl[ns++] = s;
    }
    return mgopt__pu_fuse_finish(rw, &pad, 1, op, sl, ns);
  }
}

static const mgopt_pattern mgopt__urp_patterns[] = {
    {"mirrored_slices_concat", MGOPT_OP_concat, NULL, 1, mgopt__urp_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, use_reflection_padding,
                           "a concat of mirrored one-wide slices around x becomes pad(mode=\"reflect\")",
                           mgopt__urp_patterns);
