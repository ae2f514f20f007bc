/* src/passes/fusion/concat_to_pixel_shuffle.c — common::concat_to_pixel_shuffle: nested interleaved concats (H, then W) become a channel concat and pixel_shuffle(2).

   Spec: mil_graph_passes.txt, "Identify nested, interleaved concat ops which
   can be replaced by a single concat and a pixel shuffle layer"; reference
   §3.30.

   Before:
     main(%a: (1, 2, 3, 3, fp32), %b: (1, 2, 3, 3, fp32), %c: (1, 2, 3, 3, fp32), %d: (1, 2, 3, 3, fp32)) {
       %h0: (1, 2, 6, 3, fp32) = concat(values=(%a, %b), axis=2, interleave=true)
       %h1: (1, 2, 6, 3, fp32) = concat(values=(%c, %d), axis=2, interleave=true)
       %o: (1, 2, 6, 6, fp32) = concat(values=(%h0, %h1), axis=3, interleave=true)
     } -> (%o)
   After:
     main(%a: (1, 2, 3, 3, fp32), %b: (1, 2, 3, 3, fp32), %c: (1, 2, 3, 3, fp32), %d: (1, 2, 3, 3, fp32)) {
       %o_channels: (1, 8, 3, 3, fp32) = concat(values=(%a, %c, %b, %d), axis=1, interleave=true)
       %o: (1, 2, 6, 6, fp32) = pixel_shuffle(x=%o_channels, upscale_factor=2)
     } -> (%o)

   Fires on: concat(h0, h1, axis=3 or -1, interleave=true) of rank 4 where
   h0 = concat(a, b) and h1 = concat(c, d), both on axis 2 (or -2) with
   interleave=true. Then o[n, k, 2y+i, 2x+j] is a, b, c, d at (i, j) =
   (0, 0), (1, 0), (0, 1), (1, 1); pixel_shuffle(2) reads channel
   4k + 2i + j, so the channel concat is (a, c, b, d).
   Must not fire: h0 or h1 with another user or a block output (the
   reference does not check: it would keep them and grow the program); not
   exactly two values in each concat; another axis or interleave=false; ops
   in different blocks; a rank that is not 4; the target cannot write
   pixel_shuffle or the interleaved concat (mgopt_program_target_accepts).
   Cost: worklist patterns, O(concats). */
#include "../../passes_internal.h"

/* The two values of concat op if it interleaves 2 rank-4 values on `axis` (normalized), else 0. */
static int mgopt__cps_pair(const mgopt_op *op, int64_t axis, mgopt_value **v) {
  int32_t si = mgopt_op_slot_index(op, "values"), i;
  if (si < 0 || op->slots[si].n != 2 || op->nouts != 1 || !mgopt_op_get_bool(op, "interleave", 0) ||
      mgopt__pu_norm_axis(mgopt_op_get_int(op, "axis", 0), 4) != axis)
    return 0;
  for (i = 0; i < 2; i++) {
    v[i] = op->slots[si].uses[i].value;
    if (!v[i] || v[i]->type.kind != MGOPT_TYPE_TENSOR || v[i]->type.rank != 4) return 0;
  }
  return 1;
}

/* h's producer if it is a single-use interleaving concat on axis 2 in block b, with its values in v. */
static mgopt_op *mgopt__cps_rows(mgopt_value *h, const mgopt_block *b, mgopt_value **v) {
  mgopt_op *c = mgopt__pu_def_of(h, MGOPT_OP_concat);
  if (!c || c->parent != b || !mgopt__pu_single_use(h) || mgopt__pu_is_block_output(h) || !mgopt__cps_pair(c, 2, v))
    return NULL;
  return c;
}

static int mgopt__cps_fuse(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const x_slot[1] = {"x"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *h[2], *ab[2], *cd[2], *vals[4], *out;
  mgopt_op *c0, *c1, *cc, *ps, *made[2], *matched[2];
  MGOPT__UNUSED(ud);
  if (!mgopt__cps_pair(op, 3, h) || h[0] == h[1]) return 0;
  c0 = mgopt__cps_rows(h[0], op->parent, ab);
  c1 = mgopt__cps_rows(h[1], op->parent, cd);
  if (!c0 || !c1) return 0;
  out = op->outs[0];
  vals[0] = ab[0], vals[1] = cd[0], vals[2] = ab[1], vals[3] = cd[1];
  cc = mgopt_rw_create(rw, op, "concat", mgopt__pu_name2(p, mgopt__pu_value_name(out), "_channels"), 0, NULL, NULL, 1);
  if (!cc) return 0;
  made[0] = cc;
  made[1] = ps = mgopt_rw_create(rw, op, "pixel_shuffle", mgopt__pu_value_name(out), 1, x_slot, cc->outs, 1);
  if (!ps || mgopt_op_set_operand_list(cc, "values", vals, 4) != MGOPT_OK ||
      mgopt_op_set_int(cc, "axis", 1) != MGOPT_OK || mgopt_op_set_bool(cc, "interleave", 1) != MGOPT_OK ||
      mgopt_op_set_int(ps, "upscale_factor", 2) != MGOPT_OK) {
    if (ps) mgopt_rw_erase(rw, ps);
    mgopt_rw_erase(rw, cc);
    return 0;
  }
  matched[0] = c0;
  matched[1] = c1;
  return mgopt__pu_fuse_finish(rw, made, 2, op, matched, 2);
}

static const mgopt_pattern mgopt__cps_patterns[] = {
    {"interleaved_concats", MGOPT_OP_concat, NULL, 1, mgopt__cps_fuse, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(fusion, common, concat_to_pixel_shuffle,
                           "nested interleaved concats on H then W become a channel concat and pixel_shuffle(2)",
                           mgopt__cps_patterns);
