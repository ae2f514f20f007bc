/* src/passes/onnx/remove_redundant_transpose_add_forests.c — onnx::remove_redundant_transpose_add_forests: a forest of adds between a transpose and its inverse runs in the untransposed layout.

   Spec: onnx_ir_optimizer_passes.txt, "remove_redundant_transpose_add_forests"
   (collapse broadcast-add forests introduced by layout conversions when every
   branch can be safely rewired); the match follows the ONNX IR optimizer's.

   Before:
     main(%a: (1, 3, 4, 5, fp32), %b: (1, 3, 4, 5, fp32), %c: (1, 3, 4, 5, fp32)) {
       %ta: (1, 4, 5, 3, fp32) = transpose(x=%a, perm=[0, 2, 3, 1])
       %tb: (1, 4, 5, 3, fp32) = transpose(x=%b, perm=[0, 2, 3, 1])
       %tc: (1, 4, 5, 3, fp32) = transpose(x=%c, perm=[0, 2, 3, 1])
       %s: (1, 4, 5, 3, fp32) = add(x=%ta, y=%tb)
       %u: (1, 4, 5, 3, fp32) = add(x=%s, y=%tc)
       %y: (1, 3, 4, 5, fp32) = transpose(x=%u, perm=[0, 3, 1, 2])
     } -> (%y)
   After:
     main(%a: (1, 3, 4, 5, fp32), %b: (1, 3, 4, 5, fp32), %c: (1, 3, 4, 5, fp32)) {
       %s: (1, 3, 4, 5, fp32) = add(x=%a, y=%b)
       %y: (1, 3, 4, 5, fp32) = add(x=%s, y=%c)
     } -> (%y)

   Fires on: a root add whose operands are all transposes with one perm P;
   from it, forward, the adds reached through their results (each such add
   reads at least one add already collected, and otherwise only transposes
   with perm P), whose results are read only by adds of the forest and by
   transposes with one perm Q, the inverse of P (at least one). Every add
   then reads the transposes' inputs, its type is re-inferred in that layout,
   the readers of each Q transpose read the add, the Q transposes are erased
   and the P transposes too when nothing else reads them. Broadcasting adds
   are fine: every operand is permuted alike.
   Must not fire: an add reading anything but forest adds and P transposes;
   a root reading an add; an add read by anything but forest adds and Q
   transposes; two different perms on either side; Q not the inverse of P;
   no Q transpose; exact where the reference is not: an add whose result is
   a block output (its layout would change: the reference rewrites it); a
   replacement whose type does not suit a reader (mgopt__pu_adopt_type);
   forests of more than 256 adds.
   Cost: worklist patterns; each root collects its forest once (a scan of the
   forest per membership test: O(forest^2), forests are small). */
#include "../../passes_internal.h"

#define MGOPT__RTAF_MAX 256

typedef struct mgopt__rtaf {
  mgopt_program *p;
  mgopt_op *adds[MGOPT__RTAF_MAX], *queue[MGOPT__RTAF_MAX], *outs[MGOPT__RTAF_MAX];
  int32_t nadds, nqueue, nouts;
  int64_t pf[MGOPT_MAX_RANK], pi[MGOPT_MAX_RANK];
  int64_t rank; /* 0 until the first perm */
  int have_inv;
} mgopt__rtaf;

static int mgopt__rtaf_has(mgopt_op *const *v, int32_t n, const mgopt_op *op) {
  int32_t i;
  for (i = 0; i < n; i++)
    if (v[i] == op) return 1;
  return 0;
}

/* op's perm, normalized, equal to (or set as) *into of length f->rank. */
static int mgopt__rtaf_perm(mgopt__rtaf *f, const mgopt_op *t, int64_t *into, int *set) {
  const int64_t *v;
  int64_t n = mgopt_op_get_ints(f->p, t, "perm", &v), i, q[MGOPT_MAX_RANK];
  uint32_t seen[MGOPT_MAX_RANK];
  if (n <= 0 || n > MGOPT_MAX_RANK || (f->rank && n != f->rank) || t->nouts != 1 || !mgopt_op_operand(t, "x")) return 0;
  memset(seen, 0, sizeof seen);
  for (i = 0; i < n; i++) {
    q[i] = v[i] < 0 ? v[i] + n : v[i];
    if (q[i] < 0 || q[i] >= n || seen[q[i]]) return 0;
    seen[q[i]] = 1;
  }
  f->rank = n;
  if (!*set) {
    memcpy(into, q, sizeof(int64_t) * (size_t)n);
    *set = 1;
    return 1;
  }
  return memcmp(into, q, sizeof(int64_t) * (size_t)n) == 0;
}

static int mgopt__rtaf_collect(mgopt__rtaf *f, mgopt_op *root) {
  int have_fwd = 0;
  int32_t qi = 0;
  f->queue[f->nqueue++] = root;
  while (qi < f->nqueue) {
    mgopt_op *a = f->queue[qi++];
    int32_t s, n_add = 0, n_tr = 0;
    const mgopt_use *u;
    if (mgopt__rtaf_has(f->adds, f->nadds, a)) continue;
    if (a->kind != MGOPT_OP_add || a->nouts != 1 || f->nadds == MGOPT__RTAF_MAX) return 0;
    for (s = 0; s < a->nslots; s++) {
      mgopt_value *v = a->slots[s].n == 1 && !a->slots[s].is_list ? a->slots[s].uses[0].value : NULL;
      if (!v) return 0;
      if (v->def && v->def->kind == MGOPT_OP_add) {
        if (!mgopt__rtaf_has(f->adds, f->nadds, v->def)) return 0; /* strictly forward from the root */
        n_add++;
      } else if (v->def && v->def->kind == MGOPT_OP_transpose && mgopt__rtaf_perm(f, v->def, f->pf, &have_fwd)) {
        n_tr++;
      } else {
        return 0;
      }
    }
    if (a == root ? (n_add || !n_tr) : !n_add) return 0;
    if (mgopt__pu_is_block_output(a->outs[0])) return 0;
    for (u = a->outs[0]->uses; u; u = u->next) {
      mgopt_op *c = u->op;
      if (c->kind == MGOPT_OP_add) {
        if (!mgopt__rtaf_has(f->adds, f->nadds, c)) {
          if (f->nqueue == MGOPT__RTAF_MAX) return 0;
          f->queue[f->nqueue++] = c;
        }
      } else if (c->kind == MGOPT_OP_transpose && mgopt__rtaf_perm(f, c, f->pi, &f->have_inv)) {
        if (!mgopt__rtaf_has(f->outs, f->nouts, c)) {
          if (f->nouts == MGOPT__RTAF_MAX) return 0;
          f->outs[f->nouts++] = c;
        }
      } else {
        return 0;
      }
    }
    f->adds[f->nadds++] = a;
  }
  if (!have_fwd || !f->have_inv || !f->nouts) return 0;
  {
    int64_t i;
    for (i = 0; i < f->rank; i++)
      if (f->pf[f->pi[i]] != i) return 0;
  }
  return 1;
}

/* Puts every add back on its transposes' outputs (and its type back). */
static void mgopt__rtaf_undo(mgopt__rtaf *f, mgopt_value *const *saved, const mgopt_type *types) {
  int32_t i, s, k = 0;
  for (i = 0; i < f->nadds; i++) {
    mgopt_op *a = f->adds[i];
    for (s = 0; s < a->nslots; s++, k++)
      if (a->slots[s].uses[0].value != saved[k]) mgopt_op_set_operand_at(a, s, 0, saved[k]);
    a->outs[0]->type = types[i];
  }
}

static int mgopt__rtaf_rewrite(mgopt_rewriter *rw, mgopt_op *root, void *ud) {
  mgopt__rtaf f;
  mgopt_value *saved[2 * MGOPT__RTAF_MAX];
  mgopt_type types[MGOPT__RTAF_MAX];
  mgopt_op *ins[2 * MGOPT__RTAF_MAX];
  int32_t i, s, k = 0, nins = 0;
  MGOPT__UNUSED(ud);
  memset(&f, 0, sizeof f);
  f.p = mgopt_rw_program(rw);
  if (!mgopt__rtaf_collect(&f, root)) return 0;
  for (i = 0; i < f.nadds; i++) {
    mgopt_op *a = f.adds[i];
    if (a->nslots > 2) return 0;
    types[i] = a->outs[0]->type;
    for (s = 0; s < a->nslots; s++) saved[k++] = a->slots[s].uses[0].value;
  }
  /* every add reads the untransposed inputs, re-inferred in order (producers first) */
  for (i = 0; i < f.nadds; i++) {
    mgopt_op *a = f.adds[i];
    for (s = 0; s < a->nslots; s++) {
      mgopt_value *v = a->slots[s].uses[0].value;
      if (v->def && v->def->kind == MGOPT_OP_transpose) {
        if (!mgopt__rtaf_has(ins, nins, v->def)) ins[nins++] = v->def;
        mgopt_op_set_operand_at(a, s, 0, mgopt_op_operand(v->def, "x"));
      }
    }
    if (mgopt_op_infer(f.p, a, NULL) != MGOPT_OK) {
      mgopt__rtaf_undo(&f, saved, types);
      return 0;
    }
  }
  for (i = 0; i < f.nouts; i++) {
    mgopt_value *from = f.outs[i]->outs[0], *to = mgopt_op_operand(f.outs[i], "x");
    if (!mgopt__pu_adopt_type(f.p, to, from) ||
        (mgopt__pu_is_func_output(from) && mgopt__pu_is_func_output(to))) {
      mgopt__rtaf_undo(&f, saved, types);
      return 0;
    }
  }
  for (i = 0; i < f.nadds; i++) mgopt_rw_modified(rw, f.adds[i]);
  for (i = 0; i < f.nouts; i++) {
    mgopt_value *to = mgopt_op_operand(f.outs[i], "x");
    if (!mgopt__pu_replace_keep_io(rw, f.outs[i]->outs[0], to)) return 1;
    mgopt_rw_erase(rw, f.outs[i]);
  }
  for (i = 0; i < nins; i++) mgopt__pu_erase_if_dead(rw, ins[i]);
  return 1;
}

static const mgopt_pattern mgopt__rtaf_patterns[] = {
    MGOPT__PATTERN("transpose_add_forest", MGOPT_OP_add, 1, mgopt__rtaf_rewrite),
};

/* the patterns match only where one of these is */
static const int32_t mgopt__rtaf_needs[] = {MGOPT_OP_transpose};

MGOPT__DEFINE_PATTERN_PASS_NEEDING(onnx, onnx, remove_redundant_transpose_add_forests,
                                   "run a forest of adds between a transpose and its inverse in the untransposed layout",
                                   mgopt__rtaf_patterns, mgopt__rtaf_needs);
