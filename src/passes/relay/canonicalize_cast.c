/* src/passes/relay/canonicalize_cast.c — relay::canonicalize_cast: an up-cast read by several ops is copied, one cast per reader.

   Spec: tvm_relay_passes.md, "CanonicalizeCast": a cast to a wider type
   whose result is shared is duplicated for each consumer so that every
   consumer can fuse its own cast (a fusing runtime reads the narrow value
   and widens it inside the consumer's kernel instead of materializing the
   wide one once for all).

   Before:
     main(%x: (2, fp16)) {
       %c: (2, fp32) = cast(x=%x, dtype="fp32")
       %a: (2, fp32) = relu(x=%c)
       %b: (2, fp32) = exp(x=%c)
       %s: (2, fp32) = add(x=%a, y=%b)
     } -> (%s)
   After:
     main(%x: (2, fp16)) {
       %c: (2, fp32) = cast(x=%x, dtype="fp32")
       %a: (2, fp32) = relu(x=%c)
       %c_0: (2, fp32) = cast(x=%x, dtype="fp32")
       %b: (2, fp32) = exp(x=%c_0)
       %s: (2, fp32) = add(x=%a, y=%b)
     } -> (%s)

   Fires on: a cast whose target dtype has more bits than its input's
   (fp16 -> fp32, int8 -> int32, ...) and whose output is read by more than
   one op: the reader of its oldest use keeps it (the first reader in
   program order for a program read from text), every other reading op
   gets its own copy, placed just before that op (inside its block when the
   reader sits in a nested block). An op reading the value twice gets one
   copy for both.
   The copies are what remove_redundant_ops (common-subexpression
   elimination) merges: a pipeline runs this pass after it.
   Must not fire: a cast to the same or fewer bits; an input or target dtype
   unknown; one reading op (block outputs, which read no copy, do not
   count).
   Cost: worklist patterns, O(casts + their uses). */
#include "../../passes_internal.h"

static int mgopt__cc_upcast(const mgopt_op *cast, const mgopt_value *x) {
  mgopt_dtype to = mgopt__pu_cast_dtype(cast), from = (mgopt_dtype)x->type.dtype;
  if (to == MGOPT_DT_UNKNOWN || from == MGOPT_DT_UNKNOWN) return 0;
  return mgopt_dtype_bits(from) < mgopt_dtype_bits(to);
}

static int mgopt__cc_rewrite(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const slot[1] = {"x"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *out;
  mgopt_op *keep = NULL;
  mgopt_use *u, *next;
  int changed = 0, many = 0;
  MGOPT__UNUSED(ud);
  if (!x || op->nouts != 1 || op->nblocks || !mgopt__cc_upcast(op, x)) return 0;
  out = op->outs[0];
  /* the reader of the oldest use keeps the cast (uses are listed newest
     first: for a program read from text, the first reader in program order) */
  for (u = out->uses; u; u = u->next)
    if (u->op) {
      if (keep && u->op != keep) many = 1;
      keep = u->op;
    }
  if (!many) return 0;
  for (u = out->uses; u; u = next) {
    mgopt_op *reader = u->op, *copy;
    mgopt_use *w;
    int32_t i;
    next = u->next;
    if (!reader || reader == keep) continue;
    copy = mgopt_rw_create(rw, reader, "cast", mgopt_program_fresh_name(p, mgopt__pu_value_name(out)), 1, slot, &x, 1);
    if (!copy) return changed;
    for (i = 0; i < op->nattrs; i++)
      if (mgopt_op_set_attr(copy, &op->attrs[i]) != MGOPT_OK) return changed;
    if (mgopt_op_infer(p, copy, NULL) != MGOPT_OK) {
      mgopt_rw_erase(rw, copy);
      return changed;
    }
    mgopt__pu_fill_type(p, copy, 0, &out->type);
    /* every use of the value by this reader moves to the copy */
    for (w = out->uses; w; w = next) {
      next = w->next;
      if (w->op == reader) mgopt_op_set_operand_at(reader, w->slot, w->index, copy->outs[0]);
    }
    mgopt_rw_modified(rw, reader);
    changed = 1;
    next = out->uses; /* the list changed: start again (done readers no longer appear) */
  }
  return changed;
}

static const mgopt_pattern mgopt__cc_patterns[] = {
    {"shared_upcast", MGOPT_OP_cast, NULL, 1, mgopt__cc_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(relay, relay, canonicalize_cast,
                           "an up-cast read by several ops is copied, one cast per reading op", mgopt__cc_patterns);
