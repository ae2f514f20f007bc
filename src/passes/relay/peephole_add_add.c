/* src/passes/relay/peephole_add_add.c — relay::peephole_add_add: (x + c) + c' becomes x + c'' with c'' = c + c' folded.

   Spec: tvm_relay_passes.md, "Peephole", PatternTransformer2: two
   consecutive additions of constants ("bias adds") merge into one. The
   reference's version is unfinished and returns x + c', dropping c; here the
   constants are summed.

   Before:
     main(%x: (2, 3, fp32)) {
       %c: (3, fp32)* = const(val=[1, 2, 3])
       %d: (2, 1, fp32)* = const(val=[[10], [20]])
       %a: (2, 3, fp32) = add(x=%x, y=%c)
       %b: (2, 3, fp32) = add(x=%a, y=%d)
     } -> (%b)
   After:
     main(%x: (2, 3, fp32)) {
       %b_bias_0: (2, 3, fp32)* = const(val=[[11, 12, 13], [21, 22, 23]])
       %b: (2, 3, fp32) = add(x=%x, y=%b_bias_0)
     } -> (%b)

   Numeric contract: c'' is computed in double (c and c' broadcast against
   each other) and rounded once to the dtype; x + c'' then rounds once where
   (x + c) + c' rounded twice, so results may differ by the reassociation:
   within one rounding of |x| + |c| + |c'|.

   Fires on: add(add(x, c), c') with c, c' constants (in either operand
   slot) of one float dtype (fp16, bf16, fp32, fp64), the inner add read
   only by the outer one and not a block output, the folded constant's
   broadcast shape static. The outer add keeps its name.
   Must not fire: integer or mixed dtypes; an inner add with another
   reader or that is a block output; a non-constant second operand;
   constants whose shapes do not broadcast; a merged constant with more
   elements than the output (it would hold more than both did).
   Cost: worklist patterns, O(adds + the elements of the merged constant). */
#include "../../passes_internal.h"

/* add's constant operand and the other one; NULL when it has none */
static mgopt_tensor *mgopt__paa_split(const mgopt_op *add, mgopt_value **other) {
  mgopt_value *x = mgopt_op_operand(add, "x"), *y = mgopt_op_operand(add, "y");
  mgopt_tensor *t;
  if (!x || !y) return NULL;
  if ((t = mgopt_value_const(y)) != NULL && !mgopt_value_const(x)) {
    *other = x;
    return t;
  }
  if ((t = mgopt_value_const(x)) != NULL && !mgopt_value_const(y)) {
    *other = y;
    return t;
  }
  return NULL;
}

static int mgopt__paa_rewrite(mgopt_rewriter *rw, mgopt_op *outer, void *ud) {
  static const char *const slots[2] = {"x", "y"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *a = NULL, *x = NULL, *vals[2];
  mgopt_tensor *c1, *c2, *cs;
  mgopt_op *inner, *made[2]; /* the new add; the inner add, erased with the outer */
  int64_t shape[MGOPT_MAX_RANK], i, n = 1, outn;
  int32_t rank;
  mgopt_dtype dt;
  MGOPT__UNUSED(ud);
  c2 = mgopt__paa_split(outer, &a);
  if (!c2 || outer->nouts != 1 || !a->def || a->def->kind != MGOPT_OP_add || a->def->nouts != 1) return 0;
  inner = a->def;
  if (mgopt__pu_single_user(a) != outer || a->nuses != 1 || mgopt__pu_is_block_output(a)) return 0;
  c1 = mgopt__paa_split(inner, &x);
  if (!c1) return 0;
  dt = (mgopt_dtype)c1->dtype;
  if (!mgopt__pw_is_float_weight(dt) || c2->dtype != dt || x->type.dtype != dt || outer->outs[0]->type.dtype != dt) return 0;
  if (!mgopt__pu_broadcast(c1->shape, c1->rank, c2->shape, c2->rank, shape, &rank)) return 0;
  for (i = 0; i < rank; i++) n *= shape[i];
  outn = mgopt_type_numel(&outer->outs[0]->type);
  if (outn < 0 || n > outn) return 0;
  cs = mgopt_tensor_new(p, dt, rank, shape);
  if (!cs) return 0;
  for (i = 0; i < n; i++) {
    double v = mgopt_tensor_get_f64(c1, mgopt__pu_bcast_index(shape, rank, c1->shape, c1->rank, i)) +
               mgopt_tensor_get_f64(c2, mgopt__pu_bcast_index(shape, rank, c2->shape, c2->rank, i));
    if (!mgopt__pw_store(cs, i, v)) return 0; /* an infinite sum: left as it was */
  }
  vals[0] = x;
  vals[1] = mgopt_rw_const(rw, outer, mgopt_program_fresh_name(p, mgopt__pu_name2(p, mgopt__pu_value_name(outer->outs[0]), "_bias")), cs);
  if (!vals[1]) return 0;
  made[0] = mgopt_rw_create(rw, outer, "add", outer->outs[0]->name, 2, slots, vals, 1);
  if (!made[0]) {
    mgopt_rw_erase(rw, vals[1]->def);
    return 0;
  }
  made[1] = inner;
  return mgopt__pu_fuse_finish_named(rw, made, 1, outer, made + 1, 1);
}

static const mgopt_pattern mgopt__paa_patterns[] = {
    {"add_add", MGOPT_OP_add, NULL, 1, mgopt__paa_rewrite, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(relay, relay, peephole_add_add, "(x + c) + c' becomes x + c'' with the constants summed",
                           mgopt__paa_patterns);
