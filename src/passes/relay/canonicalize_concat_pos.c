/* src/passes/relay/canonicalize_concat_pos.c — relay::canonicalize_concat_pos: a channel-wise single-input op after a concat of convs or linears moves in front of it, one copy per input.

   Spec: tvm_relay_passes.md, "CanonicalizeConcatPos": an op between a
   concatenate and the layers feeding it that is channel-wise and has a
   single input moves before the concatenate, applied to each of its inputs,
   so that it lands next to the layer that can fuse it. The reference moves
   it whenever every concat input is an op output; here it moves only when
   it can fuse into each producer, as the spec's purpose says, and its
   constant is sliced per input (the reference passes the same attributes
   and operands to every copy, wrong for a per-channel constant).

   Before:
     main(%x: (1, 2, 2, 2, fp32)) {
       %w: (1, 2, 1, 1, fp32)* = const(val=[[[[1]], [[2]]]])
       %a: (1, 1, 2, 2, fp32) = conv(x=%x, weight=%w)
       %b: (1, 1, 2, 2, fp32) = conv(x=%x, weight=%w)
       %c: (1, 2, 2, 2, fp32) = concat(values=(%a, %b), axis=1)
       %k: (1, 2, 1, 1, fp32)* = const(val=[[[[0.5]], [[-1]]]])
       %y: (1, 2, 2, 2, fp32) = add(x=%c, y=%k)
     } -> (%y)
   After:
     main(%x: (1, 2, 2, 2, fp32)) {
       %w: (1, 2, 1, 1, fp32)* = const(val=[[[[1]], [[2]]]])
       %a: (1, 1, 2, 2, fp32) = conv(x=%x, weight=%w)
       %b: (1, 1, 2, 2, fp32) = conv(x=%x, weight=%w)
       %k_0: (1, 1, 1, 1, fp32)* = const(val=[[[[0.5]]]])
       %a_add: (1, 1, 2, 2, fp32) = add(x=%a, y=%k_0)
       %k_1: (1, 1, 1, 1, fp32)* = const(val=[[[[-1]]]])
       %b_add: (1, 1, 2, 2, fp32) = add(x=%b, y=%k_1)
       %y: (1, 2, 2, 2, fp32) = concat(values=(%a_add, %b_add), axis=1)
     } -> (%y)

   Channel-wise single-input ops: relu, relu6 and clip (what a conv or
   linear fuses as its activation), and add, sub, mul and real_div with a
   constant that varies at most along the concat axis and does not broadcast
   the data (in the y slot; add and mul also in x). A constant that varies
   is sliced along the axis, each input taking its part; one that does not
   is shared.
   Fires on: F(concat(u_1, .., u_n)) with F such an op, the concat (not
   interleaved, n >= 2) read only by F and not a block output, and every u_i
   the output of a conv, conv_transpose or linear without a fused
   activation in the concat's block, read only by the concat and not a
   block output; a varying constant needs the concat axis to be those ops'
   channel axis (1 for the convs, the last for linear) and static sizes
   along it.
   Must not fire: a concat with another reader, read in a nested block or
   that is a block output; an input that is a block argument, a constant,
   another kind of op, read elsewhere, or made in an outer block (a copy
   there could not fuse into it); an op that is not channel-wise (a
   constant varying along another axis, a run-time operand, softmax); a
   varying constant on a concat axis that is not the channel axis, or over a
   symbolic size.
   Size: n copies of F replace one (and n slices its constant): the program
   grows by n - 1 ops until the fusions it enables (fuse_conv_bias,
   fold_scale_axis, fuse_activation) take them back.
   Numeric contract: no arithmetic; constants are sliced bit for bit and
   each element of the output is computed by the same op on the same values.
   Cost: one pattern per concat, O(n + the constant's bytes). */
#include "../../passes_internal.h"

#define MGOPT__CCP_MAXIN 64

/* F's kind is one the spec's channel-wise single-input ops fuse as. */
static int mgopt__ccp_kind(int32_t kind, int *act) {
  *act = kind == MGOPT_OP_relu || kind == MGOPT_OP_relu6 || kind == MGOPT_OP_clip;
  return *act || kind == MGOPT_OP_add || kind == MGOPT_OP_sub || kind == MGOPT_OP_mul || kind == MGOPT_OP_real_div;
}

/* The channel axis of a producer that fuses what follows it, or -1. */
static int64_t mgopt__ccp_channel_axis(const mgopt_op *op, int32_t rank) {
  if (!op || op->nouts != 1 || mgopt__pu_fused_act(op)) return -1;
  if (op->kind == MGOPT_OP_conv || op->kind == MGOPT_OP_conv_transpose) return rank >= 3 ? 1 : -1;
  if (op->kind == MGOPT_OP_linear) return rank - 1;
  return -1;
}

/* Constant t broadcasts onto data of type d (rank r) without changing it,
   every dim but the concat axis being 1; *varies when it has more than one
   element along the axis. */
static int mgopt__ccp_channelwise(const mgopt_tensor *t, const mgopt_type *d, int64_t axis, int *varies) {
  int32_t i, lead = d->rank - t->rank;
  *varies = 0;
  if (t->rank > d->rank) return 0;
  for (i = 0; i < t->rank; i++) {
    if (t->shape[i] == 1) continue;
    if (lead + i != axis || !mgopt_dim_is_static(d->dims[axis]) || d->dims[axis].v != t->shape[i]) return 0;
    *varies = 1;
  }
  return 1;
}

/* Elements [off, off + n) along the varying axis of channel-wise constant t
   (its only non-unit dim, index ax): a new tensor, bytes copied. */
static mgopt_tensor *mgopt__ccp_slice(mgopt_program *p, mgopt_tensor *t, int32_t ax, int64_t off, int64_t n) {
  int64_t shape[MGOPT_MAX_RANK];
  int bits = mgopt_dtype_bits((mgopt_dtype)t->dtype);
  const unsigned char *src;
  unsigned char *dst;
  mgopt_tensor *nt;
  if (bits < 8 || bits % 8 || t->rank > MGOPT_MAX_RANK) return NULL;
  memcpy(shape, t->shape, sizeof(int64_t) * (size_t)t->rank);
  shape[ax] = n;
  nt = mgopt_tensor_new(p, (mgopt_dtype)t->dtype, t->rank, shape);
  src = nt ? (const unsigned char *)mgopt_tensor_data(p, t) : NULL;
  dst = src ? (unsigned char *)mgopt_tensor_data_mut(p, nt) : NULL;
  if (!dst) return NULL;
  memcpy(dst, src + (size_t)off * (size_t)(bits / 8), (size_t)n * (size_t)(bits / 8));
  return nt;
}

static int mgopt__ccp_rewrite(mgopt_rewriter *rw, mgopt_op *cat, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *o, *vals[MGOPT__CCP_MAXIN];
  mgopt_op *f, *made[MGOPT__CCP_MAXIN + 1];
  mgopt_tensor *t = NULL;
  int64_t axis, off = 0;
  int32_t si, n, i, s, k, rank, cslot = -1, cidx = -1, dslot = -1, nmade = 0, tax = -1;
  int act, varies = 0;
  MGOPT__UNUSED(ud);
  o = cat->nouts == 1 ? cat->outs[0] : NULL;
  si = mgopt_op_slot_index(cat, "values");
  if (!o || si < 0 || mgopt_op_get_bool(cat, "interleave", 0) || o->type.kind != MGOPT_TYPE_TENSOR) return 0;
  n = cat->slots[si].n;
  rank = o->type.rank;
  if (n < 2 || n > MGOPT__CCP_MAXIN || rank < 1 || rank > MGOPT_MAX_RANK) return 0;
  if (mgopt__pu_is_block_output(o) || !(f = mgopt__pu_single_user(o)) || f->parent != cat->parent) return 0;
  if (!mgopt__ccp_kind(f->kind, &act) || f->nouts != 1 || f->nblocks) return 0;
  axis = mgopt__pu_norm_axis(mgopt_op_get_int(cat, "axis", MGOPT_MAX_RANK + 1), rank);
  if (axis < 0 || f->outs[0]->type.rank != rank) return 0;
  /* F's operands: the concat once as its data, constants elsewhere */
  for (s = 0; s < f->nslots; s++)
    for (k = 0; k < f->slots[s].n; k++) {
      mgopt_value *v = f->slots[s].uses[k].value;
      mgopt_tensor *c;
      if (!v) continue;
      if (v == o) {
        if (dslot >= 0 || (s != 0 && f->kind != MGOPT_OP_add && f->kind != MGOPT_OP_mul)) return 0;
        dslot = s;
        continue;
      }
      c = mgopt_value_const(v);
      if (!c) return 0;
      if (act) {
        if (c->numel != 1) return 0;
        continue;
      }
      if (t || !mgopt__ccp_channelwise(c, &o->type, axis, &varies)) return 0;
      t = c;
      cslot = s;
      cidx = k;
    }
  if (dslot < 0 || (!act && !t)) return 0;
  if (varies) tax = (int32_t)(axis - (rank - t->rank));
  /* every input a fusing producer read only here */
  for (i = 0; i < n; i++) {
    mgopt_value *u = cat->slots[si].uses[i].value;
    int64_t ch;
    if (!u || !u->def || u->def->parent != cat->parent || u->nuses != 1 || mgopt__pu_is_block_output(u) ||
        u->type.kind != MGOPT_TYPE_TENSOR || u->type.rank != rank)
      return 0;
    ch = mgopt__ccp_channel_axis(u->def, rank);
    if (ch < 0 || (varies && (ch != axis || !mgopt_dim_is_static(u->type.dims[axis])))) return 0;
  }
  for (i = 0; i < n && nmade == i; i++) {
    mgopt_value *u = cat->slots[si].uses[i].value, *cv = NULL;
    mgopt_op *copy = mgopt__pu_clone_op(p, f);
    const char *name;
    char sfx[64];
    if (!copy) break;
    snprintf(sfx, sizeof sfx, "_%.40s", f->type);
    name = mgopt__pu_name2(p, mgopt__pu_value_name(u), sfx);
    mgopt_op_set_operand_at(copy, dslot, 0, u);
    if (varies) {
      mgopt_tensor *part = mgopt__ccp_slice(p, t, tax, off, u->type.dims[axis].v);
      snprintf(sfx, sizeof sfx, "_%d", (int)i);
      cv = part ? mgopt_rw_const(rw, f, mgopt__pu_name2(p, mgopt__pu_value_name(f->slots[cslot].uses[cidx].value), sfx),
                                 part)
                : NULL;
      if (!cv) {
        mgopt_op_erase(copy);
        break;
      }
      mgopt_op_set_operand_at(copy, cslot, cidx, cv);
      off += u->type.dims[axis].v;
    }
    if (mgopt_op_set_name(copy, name) != MGOPT_OK || mgopt_value_set_name(copy->outs[0], name) != MGOPT_OK) {
      mgopt_op_erase(copy);
      if (cv) mgopt_rw_erase(rw, cv->def);
      break;
    }
    mgopt_op_insert_before(copy, f);
    mgopt_rw_created(rw, copy);
    vals[i] = copy->outs[0];
    made[nmade++] = copy;
  }
  if (nmade == n) {
    mgopt_op *nc = mgopt__pu_clone_op(p, cat);
    if (nc) {
      for (i = 0; i < n; i++) mgopt_op_set_operand_at(nc, si, i, vals[i]);
      if (mgopt_op_set_name(nc, f->outs[0]->name) == MGOPT_OK &&
          mgopt_value_set_name(nc->outs[0], f->outs[0]->name) == MGOPT_OK) {
        mgopt_op_insert_before(nc, f);
        mgopt_rw_created(rw, nc);
        made[nmade++] = nc;
      } else {
        mgopt_op_erase(nc);
      }
    }
  }
  if (nmade != n + 1) {
    while (nmade > 0) mgopt__pu_erase_with_consts(rw, made[--nmade]);
    return 0;
  }
  return mgopt__pu_fuse_finish_named(rw, made, nmade, f, &cat, 1);
}

static const mgopt_pattern mgopt__ccp_patterns[] = {
    {"concat_channelwise", MGOPT_OP_concat, NULL, 1, mgopt__ccp_rewrite, NULL},
};

static const int32_t mgopt__ccp_needs[] = {MGOPT_OP_concat};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(relay, relay, canonicalize_concat_pos,
                                   "a channel-wise op after a concat of convs or linears moves before it, per input",
                                   mgopt__ccp_patterns, mgopt__ccp_needs);
