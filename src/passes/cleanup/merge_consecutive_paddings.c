/* src/passes/cleanup/merge_consecutive_paddings.c — common::merge_consecutive_paddings: pad(pad(x)) -> pad(x).

   Spec: mil_graph_passes.txt, "Identify two consecutive pad layers which
   could be merged into a single pad layer"; reference §3.29.

   Before:
     main(%x: (1, 2, 6, 8, fp32)) {
       %p1: (2, int32)* = const(val=[1, 1])
       %a: (1, 2, 6, 10, fp32) = pad(x=%x, pad=%p1, mode="reflect")
       %p2: (4, int32)* = const(val=[1, 1, 0, 0])
       %b: (1, 2, 8, 10, fp32) = pad(x=%a, pad=%p2, mode="reflect")
     } -> (%b)
   After:
     main(%x: (1, 2, 6, 8, fp32)) {
       %pad_0: (4, int32)* = const(val=[1, 1, 1, 1])
       %b: (1, 2, 8, 10, fp32) = pad(x=%x, pad=%pad_0, mode="reflect")
     } -> (%b)

   Fires on: a pad whose input comes from a pad with the same mode and
   constant pad amounts (a pad vector covers the last len/2 axes; the shorter
   one is extended with leading zeros and the two are added), when
   - mode "constant": both constant_val are equal (padding is then additive,
     even on the same axis);
   - other modes (reflect, replicate): no axis is padded by both (per-axis
     padding in these modes is separable, the same axis is not).
   The outer pad reads the inner pad's input with the summed amounts; the
   inner pad goes once unused, else stays.
   Must not fire: different modes or constant values, non-constant or
   negative or odd-length pad vectors, overlapping axes outside constant mode.
   Cost: worklist patterns, O(pads x rank). */
#include "../../passes_internal.h"

static const char *mgopt__mcp_mode(const mgopt_op *op) {
  const char *m = mgopt_op_get_string(op, "mode", NULL);
  return m ? m : "constant";
}

/* pad amounts into out[0..len) right-aligned (leading zeros); 0 if malformed */
static int mgopt__mcp_amounts(mgopt_program *p, const mgopt_op *op, int64_t len, int64_t *out) {
  const int64_t *v = NULL;
  int64_t n = mgopt_op_get_ints(p, op, "pad", &v), i;
  if (n < 0 || n % 2 || n > len) return 0;
  for (i = 0; i < len; i++) out[i] = 0;
  for (i = 0; i < n; i++) {
    if (v[i] < 0) return 0;
    out[len - n + i] = v[i];
  }
  return 1;
}

static int mgopt__mcp_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *x = mgopt_op_operand(op, "x"), *inner_x;
  mgopt_op *inner = mgopt__pu_def_of(x, MGOPT_OP_pad);
  const int64_t *tmp = NULL;
  int64_t len, n1, n2, i, *a, *b;
  const char *mode;
  int constant;
  MGOPT__UNUSED(ud);
  if (!inner || inner == op || op->nouts != 1) return 0;
  inner_x = mgopt_op_operand(inner, "x");
  if (!inner_x) return 0;
  mode = mgopt__mcp_mode(op);
  if (strcmp(mode, mgopt__mcp_mode(inner)) != 0) return 0;
  constant = strcmp(mode, "constant") == 0;
  if (constant && mgopt_op_get_float(op, "constant_val", 0.0) != mgopt_op_get_float(inner, "constant_val", 0.0))
    return 0;
  n1 = mgopt_op_get_ints(p, inner, "pad", &tmp);
  n2 = mgopt_op_get_ints(p, op, "pad", &tmp);
  if (n1 < 0 || n2 < 0) return 0;
  len = n1 > n2 ? n1 : n2;
  a = (int64_t *)mgopt_program_alloc(p, sizeof(int64_t) * (size_t)(2 * len + 1), 8);
  if (!a) return 0;
  b = a + len;
  if (!mgopt__mcp_amounts(p, inner, len, a) || !mgopt__mcp_amounts(p, op, len, b)) return 0;
  for (i = 0; i < len; i += 2)
    if (!constant && (a[i] || a[i + 1]) && (b[i] || b[i + 1])) return 0;
  for (i = 0; i < len; i++)
    if (!mgopt__add_i64(a[i], b[i], &a[i])) return 0;
  {
    /* the inner pad's output may be declared less precisely than it is (a
       symbolic dim): the outer pad's declared type must hold for the exact one */
    mgopt_type saved = x->type, inf;
    int ok = mgopt__pu_inferred_type(p, inner, 0, &inf);
    if (ok) {
      x->type = inf;
      ok = mgopt__pu_infer_fits(p, op);
      x->type = saved;
    }
    if (!ok) return 0;
  }
  if (!mgopt__pu_set_ints_param(rw, op, op, "pad", a, len)) return 0;
  mgopt_rw_set_operand(rw, op, "x", inner_x);
  mgopt_rw_modified(rw, op);
  mgopt__pu_erase_with_consts(rw, inner);
  return 1;
}

static const mgopt_pattern mgopt__mcp_patterns[] = {
    {"pad_pad", MGOPT_OP_pad, NULL, 1, mgopt__mcp_fold, NULL},
};

MGOPT__DEFINE_PATTERN_PASS(cleanup, common, merge_consecutive_paddings,
                           "merge pad chains with the same mode into one pad", mgopt__mcp_patterns);
