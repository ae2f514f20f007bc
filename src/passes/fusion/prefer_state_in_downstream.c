/* src/passes/fusion/prefer_state_in_downstream.c — common::prefer_state_in_downstream: readers after a state write read the write's output.

   Spec: reference mil-passes.md §1.1 (entry 75) and §2.2; coremltools'
   optimize_state.py. After coreml_update_state(state, value), a later
   reader of `value` may read the write's output instead (the same tensor,
   now held by the state), so the functional value need not stay alive.
   canonicalize_inplace_pattern runs first and puts the write right after
   the op computing the value, so every later reader is reached.

   Before:
     main(%x: (2, fp16), %s: state(2, fp16)) {
       %r: (2, fp16) = read_state(input=%s)
       %m: (2, fp16) = mul(x=%r, y=%x)
       %u: (2, fp16) = coreml_update_state(state=%s, value=%m)
       %a: (2, fp16) = add(x=%m, y=%x)
     } -> (%a)
   After:
     main(%x: (2, fp16), %s: state(2, fp16)) {
       %r: (2, fp16) = read_state(input=%s)
       %m: (2, fp16) = mul(x=%r, y=%x)
       %u: (2, fp16) = coreml_update_state(state=%s, value=%m)
       %a: (2, fp16) = add(x=%u, y=%x)
     } -> (%a)

   Fires on: every coreml_update_state U whose value V has another reader
   that is not a coreml_update_state. Every use of V after U in U's block
   (operands of later ops, nested blocks of later ops included, and the
   block's outputs) then reads U's output. When V is an output of a function
   body, U's output takes its place and its name, and V takes U's old name
   (a function's output names survive).
   Must not fire: when V has no other reader, or only other state writes;
   when V is both an argument and an output of U's block; on uses before U
   or outside U's block; on a function output when U's output is already one
   (then only the op uses move); when the declared types of V and U's output
   differ.
   Cost: the writes come from the op index; each walks V's use list (label
   comparisons): O(writes x uses of their values). */
#include "../../passes_internal.h"

/* 1 when the use k of v lies after u in u's block (its op, or the op owning
   the block it is an output of, is u's block's op after u or nested in one). */
static int mgopt__psd_after(const mgopt_use *k, const mgopt_op *u) {
  mgopt_op *at = k->op ? k->op : k->block->parent_op;
  mgopt_op *a;
  if (!at) return 0; /* an output of a function body */
  a = mgopt__pu_ancestor_in(at, u->parent);
  return a && a != u && MGOPT__OP_PRECEDES(u, a);
}

static int mgopt__psd_is_arg(const mgopt_value *v, const mgopt_block *b) { return !v->def && v->owner == b; }

static int mgopt__psd_try(mgopt_op *u) {
  mgopt_value *v = mgopt_op_operand(u, "value"), *out = u->outs[0];
  mgopt_block *b = u->parent;
  mgopt_use *k, *next;
  int others = 0, nonwrite = 0, out_is_func = mgopt__pu_is_func_output(out), moved = 0, renamed = 0;
  if (!v || !mgopt_type_equal(&v->type, &out->type)) return 0;
  for (k = v->uses; k; k = k->next) {
    if (!k->op) {
      if (k->block == b && mgopt__psd_is_arg(v, b)) return 0;
      continue;
    }
    if (k->op == u) continue;
    others = 1;
    if (k->op->kind != MGOPT_OP_coreml_update_state) nonwrite = 1;
  }
  if (!others || !nonwrite) return 0;
  for (k = v->uses; k; k = next) {
    next = k->next;
    if (k->op && k->op != u && mgopt__psd_after(k, u)) {
      mgopt_op_set_operand_at(k->op, k->slot, k->index, out);
      moved = 1;
    } else if (!k->op && (k->block == b ? !(b->parent_op == NULL && out_is_func) : mgopt__psd_after(k, u))) {
      if (k->block == b && b->parent_op == NULL && !renamed) { /* a function output: its name goes along */
        const char *vn = v->name, *on = out->name;
        renamed = 1;
        mgopt__pu_rename(out, vn);
        mgopt__pu_rename(v, on);
      }
      mgopt_block_set_output(k->block, k->index, out);
      moved = 1;
    }
  }
  return moved;
}

static int mgopt__psd_visit(mgopt_op *u, void *ud) {
  MGOPT__UNUSED(ud);
  return mgopt__psd_try(u);
}

static mgopt_status mgopt__psd_run(mgopt_pass_ctx *ctx) { return mgopt__pu_each_state_write(ctx, NULL, mgopt__psd_visit, NULL); }

MGOPT__DEFINE_PASS(fusion, common, prefer_state_in_downstream,
                   "later readers of a value written to a state read the write's output", mgopt__psd_run);
