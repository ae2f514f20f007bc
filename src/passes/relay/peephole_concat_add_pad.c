/* src/passes/relay/peephole_concat_add_pad.c — relay::peephole_concat_add_pad: an add of a two-input concat and a run-time tensor becomes two zero pads and two adds.

   Spec: tvm_relay_passes.md, "Peephole", PatternTransformer3: for an
   accelerator that adds in place but has no concat, add(concat(t0, t1),
   y) becomes add(pad(t1, before c0), add(pad(t0, after c1), y)), c0 and
   c1 the two inputs' sizes on the concat axis. The reference asserts the
   concat is on axis 1 and has two inputs; here another axis is padded
   the same way and any other concat is left alone.

   Before:
     main(%a: (1, 1, 2, fp32), %b: (1, 2, 2, fp32), %y: (1, 3, 2, fp32)) {
       %c: (1, 3, 2, fp32) = concat(values=(%a, %b), axis=1)
       %s: (1, 3, 2, fp32) = add(x=%c, y=%y)
     } -> (%s)
   After:
     main(%a: (1, 1, 2, fp32), %b: (1, 2, 2, fp32), %y: (1, 3, 2, fp32)) {
       %s_pads0_0: (4, int32)* = const(val=[0, 2, 0, 0])
       %s_pad0_0: (1, 3, 2, fp32) = pad(x=%a, pad=%s_pads0_0, mode="constant", constant_val=0.0)
       %s_add_0: (1, 3, 2, fp32) = add(x=%s_pad0_0, y=%y)
       %s_pads1_0: (4, int32)* = const(val=[1, 0, 0, 0])
       %s_pad1_0: (1, 3, 2, fp32) = pad(x=%b, pad=%s_pads1_0, mode="constant", constant_val=0.0)
       %s: (1, 3, 2, fp32) = add(x=%s_pad1_0, y=%s_add_0)
     } -> (%s)

   Exact: each element is t0 + y + 0 or 0 + y + t1 (adding a zero
   changes no value but the sign of a zero).
   Fires on: add(concat(t0, t1), y) or add(y, concat(t0, t1)), y not a
   constant (the spec's "element-wise add": neither operand constant),
   the concat of exactly two non-constant values with interleave false,
   its axis in range and both sizes on it static, read only by the add and
   not a block output; the add keeps its name.
   Must not fire: a constant operand (that is a bias add); a concat of one
   or three or more values, or interleaved; a concat with another reader or
   that is a block output; a symbolic size on the concat axis; ops the
   program's target cannot express (taken back).
   Cost: worklist patterns, O(adds). The program grows by two ops (the
   concat and one add become two pads and two adds): the rewrite serves a
   runtime without concat, it is no fusion. */
#include "../../passes_internal.h"

/* pad(x, pads on `axis` of a rank-`rank` value: before, after), named after base */
static mgopt_op *mgopt__pcap_pad(mgopt_rewriter *rw, mgopt_op *pos, mgopt_value *x, int32_t rank, int64_t axis,
                                 int64_t before, int64_t after, const char *base, const char *cname,
                                 const char *oname) {
  mgopt_program *p = mgopt_rw_program(rw);
  const char *pad_name = mgopt_program_fresh_name(p, mgopt__pu_name2(p, base, cname));
  return mgopt__pu_const_pad(rw, pos, x, rank, axis, before, after, 0.0, pad_name,
                             mgopt_program_fresh_name(p, mgopt__pu_name2(p, base, oname)));
}

static int mgopt__pcap_rewrite(mgopt_rewriter *rw, mgopt_op *add, void *ud) {
  static const char *const slots[2] = {"x", "y"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(add, "x"), *yv = mgopt_op_operand(add, "y"), *cv = NULL, *other = NULL, *t[2],
              *vals[2];
  mgopt_op *cat, *made[4];
  const char *base;
  int64_t axis, c0, c1;
  int32_t rank, k, nmade = 0, si;
  MGOPT__UNUSED(ud);
  if (!x || !yv || add->nouts != 1 || mgopt_value_const(x) || mgopt_value_const(yv)) return 0;
  for (k = 0; k < 2 && !cv; k++) {
    mgopt_value *v = k ? yv : x;
    if (v->def && v->def->kind == MGOPT_OP_concat && v->def->nouts == 1 && v->nuses == 1 &&
        !mgopt__pu_is_block_output(v)) {
      cv = v;
      other = k ? x : yv;
    }
  }
  if (!cv) return 0;
  cat = cv->def;
  si = mgopt_op_slot_index(cat, "values");
  if (si < 0 || cat->slots[si].n != 2 || mgopt_op_get_bool(cat, "interleave", 0)) return 0;
  t[0] = cat->slots[si].uses[0].value;
  t[1] = cat->slots[si].uses[1].value;
  if (!t[0] || !t[1] || mgopt_value_const(t[0]) || mgopt_value_const(t[1])) return 0;
  if (cv->type.kind != MGOPT_TYPE_TENSOR || cv->type.rank < 1 || cv->type.rank > MGOPT_MAX_RANK) return 0;
  rank = cv->type.rank;
  if (t[0]->type.kind != MGOPT_TYPE_TENSOR || t[1]->type.kind != MGOPT_TYPE_TENSOR || t[0]->type.rank != rank ||
      t[1]->type.rank != rank)
    return 0;
  axis = mgopt__pu_norm_axis(mgopt_op_get_int(cat, "axis", MGOPT_MAX_RANK + 1), rank);
  if (axis < 0 || !mgopt_dim_is_static(t[0]->type.dims[axis]) || !mgopt_dim_is_static(t[1]->type.dims[axis])) return 0;
  c0 = t[0]->type.dims[axis].v;
  c1 = t[1]->type.dims[axis].v;
  base = mgopt__pu_value_name(add->outs[0]);
  made[nmade] = mgopt__pcap_pad(rw, add, t[0], rank, axis, 0, c1, base, "_pads0", "_pad0");
  if (!made[nmade]) return 0;
  nmade++;
  vals[0] = made[0]->outs[0];
  vals[1] = other;
  made[nmade] = mgopt_rw_create(rw, add, "add", mgopt_program_fresh_name(p, mgopt__pu_name2(p, base, "_add")), 2, slots,
                                vals, 1);
  if (made[nmade]) made[++nmade] = mgopt__pcap_pad(rw, add, t[1], rank, axis, c0, 0, base, "_pads1", "_pad1");
  if (made[nmade]) {
    nmade++;
    vals[0] = made[2]->outs[0];
    vals[1] = made[1]->outs[0];
    made[nmade] = mgopt_rw_create(rw, add, "add", add->outs[0]->name, 2, slots, vals, 1);
  }
  if (!made[nmade]) {
    while (nmade > 0) mgopt__pu_erase_with_consts(rw, made[--nmade]);
    return 0;
  }
  nmade++;
  return mgopt__pu_fuse_finish_named(rw, made, nmade, add, &cat, 1);
}

static const mgopt_pattern mgopt__pcap_patterns[] = {
    {"concat_add_pad", MGOPT_OP_add, NULL, 1, mgopt__pcap_rewrite, NULL},
};

/* the pattern matches only where one of these is */
static const int32_t mgopt__pcap_needs[] = {MGOPT_OP_concat};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(relay, relay, peephole_concat_add_pad,
                                   "an add of a two-input concat and a tensor becomes two zero pads and two adds",
                                   mgopt__pcap_patterns, mgopt__pcap_needs);
