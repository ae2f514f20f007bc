/* src/passes/cleanup/cast_optimization.c — common::cast_optimization: drop same-dtype casts, fuse or cancel cast chains.

   Spec: mil_graph_passes.txt, "cast_optimization" (redundant cast removal and
   fusion of two consecutive casts when range and resolution are preserved);
   reference §3.28.

   Before:
     main(%x: (2, 3, int8)) {
       %a: (2, 3, fp16) = cast(x=%x, dtype="fp16")
       %b: (2, 3, fp32) = cast(x=%a, dtype="fp32")
     } -> (%b)
   After:
     main(%x: (2, 3, int8)) {
       %b: (2, 3, fp32) = cast(x=%x, dtype="fp32")
     } -> (%b)

   Fires on:
   - a cast whose input already has the target dtype: its uses take the
     input (an identity keeps the name when the cast's output is a function
     output and the input is a block argument or another function output);
   - a cast of a cast, x (dtype a) -> cast(b) -> cast(c), when going through
     b loses nothing that going straight from a to c keeps: with range(t)
     the interval of values dtype t holds and res(t) its resolution (1 for
     bool and integers, 1e-3 fp16, 1e-2 bf16, 1e-6 fp32, 1e-15 fp64), the
     chain is fusable iff range(a)∩range(b)∩range(c) == range(a)∩range(c)
     and max(res a, b, c) == max(res a, c), and, when b is a float dtype
     of p significand bits (fp16 11, bf16 8, fp32 24, fp64 53), b holds
     every value of a that c can tell apart: a float a has at most p bits,
     an integer a's range within c's lies in [-2^p, 2^p] (int16 -> fp16 ->
     int16 would turn 2049 into 2048; fp32 -> fp16 -> bool would turn 1e-8
     into false; b == c needs neither). The chain then gives the direct cast's values for every
     x: a == c cancels to x, else
     the pair becomes one cast(x, dtype=c) that keeps the second cast's name.
     The first cast goes too once nothing else uses it.
   Must not fire: fp32 -> fp16 -> fp32 (the range shrinks), fp32 -> bool ->
   fp16 (resolution), int32 -> int8 -> uint8 (the chain caps at [0, 127]),
   int32 -> fp32 -> int32 (2^24 + 1 rounds), fp64 -> fp32 -> int32,
   casts whose dtypes are unknown or outside the table (fp8, complex, string);
   when x's declared type does not suit a reader of the cast's output, or
   differs from it while it is a function output (mgopt__pu_replace_fits). A
   fused cast keeps the declared type of the cast it replaces when that holds
   for x (mgopt__pu_adopt_type).
   Nested blocks included; an inner cast of an outer cast is fused in place.
   Cost: worklist patterns, O(casts) rewrites, each O(1). */
#include "../../passes_internal.h"

typedef struct mgopt__co_range {
  double lo, hi, res;
  int prec; /* significand bits of a float dtype, 0 for the others */
} mgopt__co_range;

static int mgopt__co_range_of(mgopt_dtype t, mgopt__co_range *r) {
  int bits = mgopt_dtype_bits(t);
  r->res = 1;
  r->prec = 0;
  switch (t) {
    case MGOPT_DT_BOOL: r->lo = 0; r->hi = 1; return 1;
    case MGOPT_DT_INT4:
    case MGOPT_DT_INT8:
    case MGOPT_DT_INT16:
    case MGOPT_DT_INT32:
    case MGOPT_DT_INT64:
      r->hi = ldexp(1.0, bits - 1) - 1;
      r->lo = -ldexp(1.0, bits - 1);
      return 1;
    case MGOPT_DT_UINT1:
    case MGOPT_DT_UINT2:
    case MGOPT_DT_UINT3:
    case MGOPT_DT_UINT4:
    case MGOPT_DT_UINT6:
    case MGOPT_DT_UINT8:
    case MGOPT_DT_UINT16:
    case MGOPT_DT_UINT32:
    case MGOPT_DT_UINT64:
      r->lo = 0;
      r->hi = ldexp(1.0, bits) - 1;
      return 1;
    case MGOPT_DT_FP16: r->hi = 65504.0; r->res = 1e-3; r->prec = 11; break;
    case MGOPT_DT_BF16: r->hi = 3.3895313892515355e38; r->res = 1e-2; r->prec = 8; break;
    case MGOPT_DT_FP32: r->hi = 3.4028234663852886e38; r->res = 1e-6; r->prec = 24; break;
    case MGOPT_DT_FP64: r->hi = 1.7976931348623157e308; r->res = 1e-15; r->prec = 53; break;
    default: return 0;
  }
  r->lo = -r->hi;
  return 1;
}

static void mgopt__co_meet(mgopt__co_range *acc, const mgopt__co_range *r) {
  if (r->lo > acc->lo) acc->lo = r->lo;
  if (r->hi < acc->hi) acc->hi = r->hi;
  if (r->res > acc->res) acc->res = r->res;
}

/* 1 if a -> b -> c keeps exactly the range and resolution of a -> c. */
static int mgopt__co_fusable(mgopt_dtype a, mgopt_dtype b, mgopt_dtype c) {
  mgopt__co_range ra, rb, rc, via, direct;
  if (!mgopt__co_range_of(a, &ra) || !mgopt__co_range_of(b, &rb) || !mgopt__co_range_of(c, &rc)) return 0;
  via = ra;
  mgopt__co_meet(&via, &rb);
  mgopt__co_meet(&via, &rc);
  direct = ra;
  mgopt__co_meet(&direct, &rc);
  if (via.lo != direct.lo || via.hi != direct.hi || via.res != direct.res) return 0;
  if (b == c) return 1; /* the second cast changes nothing */
  /* a float b must hold every value a gives that c can tell apart: all of
     a float a's significand, and every integer of a in c's range */
  if (rb.prec > 0 && ra.prec > 0 && rb.prec < ra.prec) return 0;
  if (rb.prec > 0 && ra.prec == 0 && (direct.lo < -ldexp(1.0, rb.prec) || direct.hi > ldexp(1.0, rb.prec))) return 0;
  return 1;
}

static mgopt_dtype mgopt__co_target(const mgopt_op *cast) {
  mgopt_dtype t = mgopt__pu_cast_dtype(cast);
  if (t == MGOPT_DT_UNKNOWN && cast->nouts == 1) t = (mgopt_dtype)cast->outs[0]->type.dtype;
  return t;
}

static int mgopt__co_redundant(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *x = mgopt_op_operand(op, "x");
  mgopt_dtype t = mgopt__co_target(op);
  MGOPT__UNUSED(ud);
  if (!x || op->nouts != 1 || t == MGOPT_DT_UNKNOWN || x->type.kind != MGOPT_TYPE_TENSOR ||
      (mgopt_dtype)x->type.dtype != t)
    return 0;
  if (!mgopt__pu_replace_fits(mgopt_rw_program(rw), op->outs[0], x)) return 0;
  if (!mgopt__pu_replace_keep_io(rw, op->outs[0], x)) return 0;
  mgopt__pu_erase_if_dead(rw, op);
  return 1;
}

static int mgopt__co_chain(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  static const char *const slot[1] = {"x"};
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *mid = mgopt_op_operand(op, "x"), *x, *res;
  mgopt_op *first = mgopt__pu_def_of(mid, MGOPT_OP_cast), *nc;
  mgopt_dtype a, b, c;
  MGOPT__UNUSED(ud);
  if (!first || op->nouts != 1 || first->nouts != 1) return 0;
  x = mgopt_op_operand(first, "x");
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR) return 0;
  a = (mgopt_dtype)x->type.dtype;
  b = mgopt__co_target(first);
  c = mgopt__co_target(op);
  if (!mgopt__co_fusable(a, b, c)) return 0;
  if (a == c) {
    if (!mgopt__pu_replace_fits(p, op->outs[0], x)) return 0;
    res = mgopt__pu_replace_keep_io(rw, op->outs[0], x);
    if (!res) return 0;
  } else {
    nc = mgopt_rw_create(rw, op, "cast", op->outs[0]->name, 1, slot, &x, 1);
    if (!nc || mgopt_op_set_string(nc, "dtype", mgopt_dtype_name(c))) return 0;
    nc->name = op->name;
    if (mgopt_op_infer(p, nc, NULL)) return 0;
    mgopt__pu_fill_type(p, nc, 0, &op->outs[0]->type);
    /* the fused cast keeps the declared type it replaces when that holds for x */
    if (!mgopt__pu_adopt_type(p, nc->outs[0], op->outs[0])) {
      mgopt_rw_erase(rw, nc);
      return 0;
    }
    mgopt_rw_replace_value(rw, op->outs[0], nc->outs[0]);
  }
  mgopt__pu_erase_if_dead(rw, op);
  mgopt__pu_erase_if_dead(rw, first);
  return 1;
}

static const mgopt_pattern mgopt__co_patterns[] = {
    {"cast_redundant", MGOPT_OP_cast, NULL, 2, mgopt__co_redundant, NULL},
    {"cast_chain", MGOPT_OP_cast, NULL, 1, mgopt__co_chain, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, cast_optimization,
                           "remove same-dtype casts; fuse or cancel cast pairs that keep range and resolution",
                           mgopt__co_patterns);
