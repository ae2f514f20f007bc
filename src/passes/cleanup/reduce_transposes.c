/* src/passes/cleanup/reduce_transposes.c — common::reduce_transposes: cancel transposes across layout-agnostic ops.

   Spec: mil_graph_passes.txt, "reduce_transposes"; reference §3.23.

   Before:
     main(%x: (1, 2, 3, 4, fp32)) {
       %t: (1, 4, 2, 3, fp32) = transpose(x=%x, perm=[0, 3, 1, 2])
       %r: (1, 4, 2, 3, fp32) = relu(x=%t)
       %l: (1, 4, 2, 3, fp32) = log(x=%r)
       %u: (1, 2, 3, 4, fp32) = transpose(x=%l, perm=[0, 2, 3, 1])
       %y: (1, 2, 3, 4, fp32) = relu(x=%u)
     } -> (%y)
   After:
     main(%x: (1, 2, 3, 4, fp32)) {
       %r: (1, 2, 3, 4, fp32) = relu(x=%x)
       %l: (1, 2, 3, 4, fp32) = log(x=%r)
       %y: (1, 2, 3, 4, fp32) = relu(x=%l)
     } -> (%y)

   How: one walk in program order gives every value a "hypothetical" layout:
   either its own, or lazily transposed by perm P (it equals transpose(w, P)
   for data w that would exist if the transposes that started the chain were
   removed). A transpose of a value in its own layout starts a chain. Ops that
   do not care about layout pass the lazy state on: unary ops (their other
   operands scalars), add/sub/mul/real_div/maximum/minimum (both operands lazy
   with one perm, or the other a scalar, a constant of rank at most the
   data's, which is transposed to match, or a run-time value of static shape
   whose non-unit axes keep their order, which a reshape moves), concat (every
   non-constant input lazy, constants transposed; axis -> P[axis]), split
   (axis -> P[axis]), pad (a constant pad moved to the new axes; reflect and
   replicate only while they pad the last two axes) and reduce_* with
   keep_dims (axes -> P[axes]). A transpose whose perm undoes P
   is a cancelling transpose. Any other use of a lazy value, and a lazy block
   output, needs the transpose back: a materialization.
   Starting transposes linked by an op they both reach form one group (a
   union-find over the walk); a group is changed only if it removes
   transposes: materializations < starting + cancelling transposes. Then the
   starting and cancelling transposes go (their users read their input), the
   axis parameters and constants above are rewritten, a transpose is inserted
   on each materialized edge (just before its user, or at the block end for an
   output, which keeps its name), and every op of the block is inferred again
   (a declared type that holds for the new inference is kept).
   Must not fire: when a group would not get smaller; on a starting transpose
   that is itself a block output; in a block with nested blocks (the whole
   block is skipped); on ops whose extra operands are tensors (pow with a
   tensor exponent, a run-time broadcast operand whose axes would reorder), on
   parameters given as run-time operands (axes, a pad). Cost: one walk, union-find,
   then a rewrite of the changed ops: O(ops + operands x rank); nothing for a
   function without transposes (the op index counts them). */
#include "../../passes_internal.h"

#define MGOPT__RT_MAXR 16

typedef struct mgopt__rt_lazy { /* a value transposed lazily */
  int32_t rank;
  int32_t comp;          /* union-find node of a starting transpose */
  int32_t changed;       /* its group was rewritten: the value's layout changed */
  int64_t perm[MGOPT__RT_MAXR];
} mgopt__rt_lazy;

typedef struct mgopt__rt_mat { /* an edge that needs the transpose back */
  mgopt_op *op;          /* NULL: block output `index` */
  int32_t slot, index;
  int32_t lazy;          /* the lazy record of the value on that edge */
} mgopt__rt_mat;

typedef struct mgopt__rt_upd { /* an op whose axes or constants change */
  mgopt_op *op;
  int32_t lazy;          /* record of its lazy input */
} mgopt__rt_upd;

typedef struct mgopt__rt_tr { /* a starting or cancelling transpose */
  mgopt_op *op;
  int32_t comp;
} mgopt__rt_tr;

typedef struct mgopt__rt {
  mgopt_program *p;
  int32_t *lz;            /* per value id: lazy record, -1 = own layout */
  uint32_t nids;
  mgopt__rt_lazy *L;
  int64_t nL, capL;
  int32_t *uf;            /* union-find parents over starting transposes */
  int64_t *nstart, *ncancel, *nmat; /* per component root */
  int64_t nuf, capuf;
  mgopt__rt_mat *M;
  int64_t nM, capM;
  mgopt__rt_upd *U;
  int64_t nU, capU;
  mgopt__rt_tr *S, *C;    /* starting, cancelling */
  int64_t nS, capS, nC, capC;
  int oom;
} mgopt__rt;

static int mgopt__rt_grow(mgopt__rt *r, void **arr, int64_t *cap, int64_t need, size_t elem) {
  if (!mgopt__grow(&r->p->alloc, arr, cap, need, elem)) r->oom = 1;
  return !r->oom;
}

static int32_t mgopt__rt_find(mgopt__rt *r, int32_t a) {
  while (r->uf[a] != a) {
    r->uf[a] = r->uf[r->uf[a]];
    a = r->uf[a];
  }
  return a;
}

static void mgopt__rt_union(mgopt__rt *r, int32_t a, int32_t b) {
  a = mgopt__rt_find(r, a);
  b = mgopt__rt_find(r, b);
  if (a != b) r->uf[b] = a;
}

static int32_t mgopt__rt_lazy_of(const mgopt__rt *r, const mgopt_value *v) {
  return v && v->id < r->nids ? r->lz[v->id] : -1;
}

static void mgopt__rt_set(mgopt__rt *r, const mgopt_value *v, int32_t lazy) {
  if (v->id < r->nids) r->lz[v->id] = lazy;
}

/* A new lazy record like `like` (or a fresh one with perm and a new component). */
static int32_t mgopt__rt_new_lazy(mgopt__rt *r, int32_t rank, const int64_t *perm, int32_t comp) {
  mgopt__rt_lazy *l;
  if (!mgopt__rt_grow(r, (void **)&r->L, &r->capL, r->nL + 1, sizeof *r->L)) return -1;
  l = &r->L[r->nL];
  l->rank = rank;
  l->comp = comp;
  memcpy(l->perm, perm, sizeof(int64_t) * (size_t)rank);
  return (int32_t)r->nL++;
}

static int32_t mgopt__rt_new_comp(mgopt__rt *r) {
  int64_t n = r->nuf;
  if (!mgopt__rt_grow(r, (void **)&r->uf, &r->capuf, n + 1, sizeof *r->uf)) return -1;
  r->uf[n] = (int32_t)n;
  r->nuf++;
  return (int32_t)n;
}

static void mgopt__rt_add_mat(mgopt__rt *r, mgopt_op *op, int32_t slot, int32_t index, int32_t lazy) {
  if (!mgopt__rt_grow(r, (void **)&r->M, &r->capM, r->nM + 1, sizeof *r->M)) return;
  r->M[r->nM].op = op;
  r->M[r->nM].slot = slot;
  r->M[r->nM].index = index;
  r->M[r->nM].lazy = lazy;
  r->nM++;
}

static void mgopt__rt_add_upd(mgopt__rt *r, mgopt_op *op, int32_t lazy) {
  if (!mgopt__rt_grow(r, (void **)&r->U, &r->capU, r->nU + 1, sizeof *r->U)) return;
  r->U[r->nU].op = op;
  r->U[r->nU].lazy = lazy;
  r->nU++;
}

static void mgopt__rt_add_tr(mgopt__rt *r, int cancel, mgopt_op *op, int32_t comp) {
  mgopt__rt_tr **arr = cancel ? &r->C : &r->S;
  int64_t *n = cancel ? &r->nC : &r->nS, *cap = cancel ? &r->capC : &r->capS;
  if (!mgopt__rt_grow(r, (void **)arr, cap, *n + 1, sizeof **arr)) return;
  (*arr)[*n].op = op;
  (*arr)[*n].comp = comp;
  (*n)++;
}

/* Reads a transpose's perm (normalized, a permutation of 0..rank-1); 0 if not constant or malformed. */
static int mgopt__rt_perm(mgopt_program *p, const mgopt_op *t, int32_t rank, int64_t *perm) {
  const int64_t *v = NULL;
  uint8_t seen[MGOPT__RT_MAXR];
  int32_t i;
  if (rank < 1 || rank > MGOPT__RT_MAXR || mgopt_op_operand(t, "perm") ||
      mgopt_op_get_ints(p, t, "perm", &v) != rank)
    return 0;
  memset(seen, 0, sizeof seen);
  for (i = 0; i < rank; i++) {
    int64_t a = mgopt__pu_norm_axis(v[i], rank);
    if (a < 0 || seen[a]) return 0;
    seen[a] = 1;
    perm[i] = a;
  }
  return 1;
}

static int mgopt__rt_is_unary(int32_t kind) {
  switch (kind) {
    case MGOPT_OP_identity: case MGOPT_OP_abs: case MGOPT_OP_exp: case MGOPT_OP_log: case MGOPT_OP_sqrt:
    case MGOPT_OP_rsqrt: case MGOPT_OP_square: case MGOPT_OP_erf: case MGOPT_OP_tanh: case MGOPT_OP_sigmoid:
    case MGOPT_OP_relu: case MGOPT_OP_relu6: case MGOPT_OP_leaky_relu: case MGOPT_OP_gelu: case MGOPT_OP_clip:
    case MGOPT_OP_floor: case MGOPT_OP_ceil: case MGOPT_OP_round: case MGOPT_OP_sign: case MGOPT_OP_sin:
    case MGOPT_OP_cos: case MGOPT_OP_softplus: case MGOPT_OP_elu: case MGOPT_OP_logical_not: case MGOPT_OP_pow:
      return 1;
    default: return 0;
  }
}

static int mgopt__rt_is_binary(int32_t kind) {
  return kind == MGOPT_OP_add || kind == MGOPT_OP_sub || kind == MGOPT_OP_mul || kind == MGOPT_OP_real_div ||
         kind == MGOPT_OP_maximum || kind == MGOPT_OP_minimum;
}

static int mgopt__rt_is_reduce(int32_t kind) {
  return kind == MGOPT_OP_reduce_sum || kind == MGOPT_OP_reduce_mean || kind == MGOPT_OP_reduce_max ||
         kind == MGOPT_OP_reduce_min || kind == MGOPT_OP_reduce_prod;
}

/* 1 if a run-time operand of static shape (rank <= r) beside lazy data of
   rank r keeps its element order when moved to the data's own layout: its
   non-unit axes, left-padded to rank r, stay in order under perm. A reshape
   then does the job of a transpose. */
static int mgopt__rt_reshapeable(const mgopt_value *v, const int64_t *perm, int32_t r) {
  int64_t shape[MGOPT__RT_MAXR], last = -1;
  int32_t i, lead;
  if (v->type.kind != MGOPT_TYPE_TENSOR || v->type.rank < 0 || v->type.rank > r ||
      !mgopt__pu_static_shape(&v->type, shape, MGOPT__RT_MAXR))
    return 0;
  lead = r - v->type.rank;
  for (i = lead; i < r; i++)
    if (shape[i - lead] != 1) {
      if (perm[i] < last) return 0;
      last = perm[i];
    }
  return 1;
}

/* What can stand beside lazy data l in an elementwise op: 2 = a rank-0
   value, left as it is; 1 = a constant, transposed back; 3 = a run-time
   value that a reshape moves to the data's layout; 0 = nothing (materialize). */
static int mgopt__rt_side(const mgopt_value *v, const mgopt__rt_lazy *l) {
  const mgopt_tensor *t;
  int bits;
  if (v->type.kind == MGOPT_TYPE_TENSOR && v->type.rank == 0) return 2;
  t = mgopt_value_const(v);
  if (!t) return mgopt__rt_reshapeable(v, l->perm, l->rank) ? 3 : 0;
  if (t->rank > l->rank || t->dtype == MGOPT_DT_STRING) return 0;
  bits = mgopt_dtype_bits((mgopt_dtype)t->dtype);
  return bits >= 8 && bits % 8 == 0 && bits <= 64 ? 1 : 0;
}

/* Every operand of op other than `keep` is a rank-0 value. */
static int mgopt__rt_rest_scalar(const mgopt_op *op, const mgopt_value *keep) {
  int32_t s, k;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      const mgopt_value *v = op->slots[s].uses[k].value;
      if (v != keep && !(v->type.kind == MGOPT_TYPE_TENSOR && v->type.rank == 0)) return 0;
    }
  return 1;
}

/* Materializes every lazy operand of op (a use that needs the layout back). */
static void mgopt__rt_materialize_op(mgopt__rt *r, mgopt_op *op) {
  int32_t s, k;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      int32_t l = mgopt__rt_lazy_of(r, op->slots[s].uses[k].value);
      if (l >= 0) mgopt__rt_add_mat(r, op, s, k, l);
    }
}

/* The op's single lazy input slot value and record for ops taking one data operand. */
static int mgopt__rt_lazy_in(mgopt__rt *r, const mgopt_op *op, const char *slot, mgopt_value **v) {
  *v = mgopt_op_operand(op, slot);
  return *v ? mgopt__rt_lazy_of(r, *v) : -1;
}

static int mgopt__rt_same_perm(const mgopt__rt_lazy *a, const mgopt__rt_lazy *b) {
  return a->rank == b->rank && memcmp(a->perm, b->perm, sizeof(int64_t) * (size_t)a->rank) == 0;
}

/* The pad of a pad op over lazy data, moved to the data's own layout:
   new rows (begin, end per axis, all axes) with new[perm[i]] = old[i];
   returns how many leading entries of out to drop (so the pad covers only
   the last axes that change), or -1 when the op cannot move: the pad is not
   a constant, or a reflect/replicate pad would touch more than the last two
   axes. */
static int32_t mgopt__rt_pad(mgopt__rt *r, const mgopt_op *op, const mgopt__rt_lazy *l, int64_t *out) {
  const int64_t *pv = NULL;
  const mgopt_value *pad = mgopt_op_operand(op, "pad");
  int64_t n, full[2 * MGOPT__RT_MAXR];
  int32_t rank = l->rank, i, first = rank;
  const char *mode = mgopt_op_get_string(op, "mode", NULL);
  int constant = !mode || strcmp(mode, "constant") == 0;
  if (rank < 2 || !pad || !mgopt_value_const(pad) || mgopt_op_operand(op, "mode")) return -1;
  n = mgopt_op_get_ints(r->p, op, "pad", &pv);
  if (n < 0 || n % 2 || n / 2 > rank) return -1;
  memset(full, 0, sizeof full);
  for (i = 0; i < n / 2; i++) {
    full[2 * (rank - n / 2 + i)] = pv[2 * i];
    full[2 * (rank - n / 2 + i) + 1] = pv[2 * i + 1];
  }
  for (i = 0; i < rank; i++) {
    out[2 * l->perm[i]] = full[2 * i];
    out[2 * l->perm[i] + 1] = full[2 * i + 1];
  }
  for (i = 0; i < rank; i++)
    if (out[2 * i] || out[2 * i + 1]) {
      first = i;
      break;
    }
  if (!constant && first < rank - 2) return -1;
  if (first > rank - 1) first = rank - 1; /* keep one row: an empty pad is not valid */
  return first;
}

/* Phase 1 for one op. Returns nothing; records go into r. */
static void mgopt__rt_visit(mgopt__rt *r, mgopt_op *op) {
  mgopt_program *p = r->p;
  int32_t kind = op->kind, i;
  mgopt_value *x;
  int32_t lx;
  if (kind == MGOPT_OP_const) return;
  if (kind == MGOPT_OP_transpose && op->nouts == 1) {
    int64_t perm[MGOPT__RT_MAXR];
    lx = mgopt__rt_lazy_in(r, op, "x", &x);
    if (x && x->type.rank >= 1 && mgopt__rt_perm(p, op, x->type.rank, perm)) {
      if (lx < 0) {
        int32_t c;
        if (mgopt__pu_is_block_output(op->outs[0])) return; /* stays as it is */
        c = mgopt__rt_new_comp(r);
        if (c < 0) return;
        mgopt__rt_add_tr(r, 0, op, c);
        mgopt__rt_set(r, op->outs[0], mgopt__rt_new_lazy(r, x->type.rank, perm, c));
        return;
      } else {
        const mgopt__rt_lazy *l = &r->L[lx];
        int cancel = l->rank == x->type.rank;
        for (i = 0; cancel && i < l->rank; i++)
          if (l->perm[perm[i]] != i) cancel = 0;
        if (cancel) {
          mgopt__rt_add_tr(r, 1, op, l->comp);
          return; /* the output is in its own layout again */
        }
      }
    }
    mgopt__rt_materialize_op(r, op);
    return;
  }
  if (op->nouts == 1 && mgopt__rt_is_unary(kind)) {
    lx = mgopt__rt_lazy_in(r, op, "x", &x);
    if (lx >= 0 && mgopt__rt_rest_scalar(op, x)) {
      mgopt__rt_set(r, op->outs[0], lx);
      return;
    }
  } else if (op->nouts == 1 && mgopt__rt_is_binary(kind)) {
    mgopt_value *a = mgopt_op_operand(op, "x"), *b = mgopt_op_operand(op, "y");
    int32_t la = mgopt__rt_lazy_of(r, a), lb = mgopt__rt_lazy_of(r, b);
    if (a && b && (la >= 0 || lb >= 0)) {
      if (la >= 0 && lb >= 0) {
        if (mgopt__rt_same_perm(&r->L[la], &r->L[lb])) {
          mgopt__rt_union(r, r->L[la].comp, r->L[lb].comp);
          mgopt__rt_set(r, op->outs[0], la);
          return;
        }
      } else {
        int32_t l = la >= 0 ? la : lb;
        int side = mgopt__rt_side(la >= 0 ? b : a, &r->L[l]);
        if (side) {
          if (side == 1 || side == 3) mgopt__rt_add_upd(r, op, l);
          mgopt__rt_set(r, op->outs[0], l);
          return;
        }
      }
    }
  } else if (kind == MGOPT_OP_concat && op->nouts == 1 && !mgopt_op_operand(op, "axis") &&
             mgopt_op_attr(op, "axis")) {
    int32_t s = mgopt_op_slot_index(op, "values"), first = -1, k, ok = 1;
    for (k = 0; s >= 0 && k < op->slots[s].n && first < 0; k++) first = mgopt__rt_lazy_of(r, op->slots[s].uses[k].value);
    if (first >= 0) {
      /* every other input lazy with the same perm, or a constant of the same rank */
      for (k = 0; k < op->slots[s].n && ok; k++) {
        mgopt_value *v = op->slots[s].uses[k].value;
        int32_t l = mgopt__rt_lazy_of(r, v);
        if (l < 0) ok = mgopt_value_const(v) && v->type.rank == r->L[first].rank &&
                        mgopt__rt_side(v, &r->L[first]) == 1;
        else ok = mgopt__rt_same_perm(&r->L[first], &r->L[l]);
      }
      if (ok) {
        for (k = 0; k < op->slots[s].n; k++) {
          int32_t l = mgopt__rt_lazy_of(r, op->slots[s].uses[k].value);
          if (l >= 0) mgopt__rt_union(r, r->L[first].comp, r->L[l].comp);
        }
        mgopt__rt_add_upd(r, op, first);
        mgopt__rt_set(r, op->outs[0], first);
        return;
      }
    }
  } else if (kind == MGOPT_OP_split && !mgopt_op_operand(op, "axis") && mgopt_op_attr(op, "axis")) {
    lx = mgopt__rt_lazy_in(r, op, "x", &x);
    if (lx >= 0 && mgopt__rt_rest_scalar(op, x)) {
      mgopt__rt_add_upd(r, op, lx);
      for (i = 0; i < op->nouts; i++) mgopt__rt_set(r, op->outs[i], lx);
      return;
    }
  } else if (kind == MGOPT_OP_pad && op->nouts == 1) {
    int64_t np[2 * MGOPT__RT_MAXR];
    lx = mgopt__rt_lazy_in(r, op, "x", &x);
    if (lx >= 0 && mgopt__rt_pad(r, op, &r->L[lx], np) >= 0) {
      mgopt__rt_add_upd(r, op, lx);
      mgopt__rt_set(r, op->outs[0], lx);
      return;
    }
  } else if (op->nouts == 1 && mgopt__rt_is_reduce(kind) && !mgopt_op_operand(op, "axes") &&
             !mgopt_op_operand(op, "keep_dims") && mgopt_op_attr(op, "axes") &&
             mgopt_op_get_bool(op, "keep_dims", 0)) {
    lx = mgopt__rt_lazy_in(r, op, "x", &x);
    if (lx >= 0 && mgopt__rt_rest_scalar(op, x)) {
      mgopt__rt_add_upd(r, op, lx);
      mgopt__rt_set(r, op->outs[0], lx);
      return;
    }
  }
  mgopt__rt_materialize_op(r, op);
}

/* t transposed by the inverse of perm after its shape is left-padded with 1s to rank. */
static mgopt_tensor *mgopt__rt_untranspose(mgopt_program *p, mgopt_tensor *t, const int64_t *perm, int32_t rank) {
  int64_t pad[MGOPT__RT_MAXR], inv[MGOPT__RT_MAXR];
  int32_t i, lead = rank - t->rank;
  for (i = 0; i < rank; i++) {
    pad[i] = i < lead ? 1 : t->shape[i - lead];
    inv[perm[i]] = i;
  }
  return mgopt__pu_transpose_data(p, t, pad, rank, inv);
}

/* Replaces constant operand (slot s, element k) of op by its un-transposed form. */
static int mgopt__rt_fix_const(mgopt__rt *r, mgopt_op *op, int32_t s, int32_t k, const mgopt__rt_lazy *l) {
  mgopt_value *v = op->slots[s].uses[k].value, *nv;
  mgopt_tensor *t = mgopt_value_const(v), *nt;
  mgopt_op *old = v->def;
  if (!t) return 1;
  nt = mgopt__rt_untranspose(r->p, t, l->perm, l->rank);
  nv = nt ? mgopt_build_const(r->p, op->parent, op, mgopt__pu_name2(r->p, mgopt__pu_value_name(v), "_transposed"), nt)
          : NULL;
  if (!nv) return 0;
  mgopt_op_set_operand_at(op, s, k, nv);
  if (old && mgopt__op_is_dead(old)) mgopt_op_erase(old);
  return 1;
}

/* Moves run-time operand (slot s, element k) of op to the data's layout by
   a reshape to its un-transposed static shape (mgopt__rt_reshapeable held). */
static int mgopt__rt_reshape(mgopt__rt *r, mgopt_op *op, int32_t s, int32_t k, const mgopt__rt_lazy *l) {
  static const char *const slots[2] = {"x", "shape"};
  mgopt_value *v = op->slots[s].uses[k].value, *ins[2];
  int64_t shape[MGOPT__RT_MAXR], target[MGOPT__RT_MAXR], rank = l->rank;
  int32_t i, lead = l->rank - v->type.rank;
  mgopt_tensor *t;
  mgopt_op *rs;
  if (!mgopt__pu_static_shape(&v->type, shape, MGOPT__RT_MAXR)) return 1;
  for (i = 0; i < l->rank; i++) target[l->perm[i]] = i < lead ? 1 : shape[i - lead];
  t = mgopt_tensor_new(r->p, MGOPT_DT_INT32, 1, &rank);
  if (!t) return 0;
  for (i = 0; i < l->rank; i++) mgopt_tensor_set_i64(t, i, target[i]);
  ins[0] = v;
  ins[1] = mgopt_build_const(r->p, op->parent, op, mgopt__pu_name2(r->p, mgopt__pu_value_name(v), "_shape"), t);
  if (!ins[1]) return 0;
  rs = mgopt_build_op(r->p, op->parent, op, "reshape", mgopt__pu_name2(r->p, mgopt__pu_value_name(v), "_reshaped"),
                      2, slots, ins, 1);
  if (!rs || mgopt_op_infer(r->p, rs, NULL) != MGOPT_OK) return 0;
  mgopt_op_set_operand_at(op, s, k, rs->outs[0]);
  return 1;
}

/* Phase 3 for one axis-update op. */
static int mgopt__rt_update(mgopt__rt *r, mgopt_op *op, const mgopt__rt_lazy *l) {
  int32_t kind = op->kind, s, k;
  if (mgopt__rt_is_binary(kind)) {
    for (s = 0; s < op->nslots; s++)
      for (k = 0; k < op->slots[s].n; k++) {
        mgopt_value *v = op->slots[s].uses[k].value;
        if (mgopt__rt_lazy_of(r, v) >= 0 || v->type.rank <= 0) continue;
        if (mgopt_value_const(v) ? !mgopt__rt_fix_const(r, op, s, k, l) : !mgopt__rt_reshape(r, op, s, k, l))
          return 0;
      }
    return 1;
  }
  if (kind == MGOPT_OP_pad) {
    int64_t np[2 * MGOPT__RT_MAXR], cnt;
    int32_t first = mgopt__rt_pad(r, op, l, np);
    mgopt_value *old = mgopt_op_operand(op, "pad"), *nv;
    mgopt_tensor *t;
    mgopt_dtype dt = old && mgopt_dtype_is_int((mgopt_dtype)old->type.dtype) ? (mgopt_dtype)old->type.dtype
                                                                          : MGOPT_DT_INT32;
    if (first < 0) return 1; /* decided in phase 1; cannot happen */
    cnt = 2 * (int64_t)(l->rank - first);
    t = mgopt_tensor_new(r->p, dt, 1, &cnt);
    if (!t) return 0;
    for (k = 0; k < cnt; k++) mgopt_tensor_set_i64(t, k, np[2 * first + k]);
    nv = mgopt_build_const(r->p, op->parent, op, mgopt__pu_name2(r->p, mgopt__pu_value_name(old), "_transposed"), t);
    if (!nv || mgopt_op_set_operand(op, "pad", nv) != MGOPT_OK) return 0;
    if (old->def && mgopt__op_is_dead(old->def)) mgopt_op_erase(old->def);
    return 1;
  }
  if (kind == MGOPT_OP_concat || kind == MGOPT_OP_split) {
    int64_t axis = mgopt__pu_norm_axis(mgopt_op_get_int(op, "axis", 0), l->rank);
    if (axis < 0) return 1; /* malformed: inference reports it */
    if (mgopt_op_set_int(op, "axis", l->perm[axis]) != MGOPT_OK) return 0;
    if (kind == MGOPT_OP_concat) {
      s = mgopt_op_slot_index(op, "values");
      for (k = 0; s >= 0 && k < op->slots[s].n; k++)
        if (mgopt__rt_lazy_of(r, op->slots[s].uses[k].value) < 0 && !mgopt__rt_fix_const(r, op, s, k, l)) return 0;
    }
    return 1;
  }
  if (mgopt__rt_is_reduce(kind)) {
    const int64_t *axes = NULL;
    int64_t n = mgopt_op_get_ints(r->p, op, "axes", &axes), i, na[MGOPT__RT_MAXR];
    if (n < 0 || n > MGOPT__RT_MAXR) return 1;
    for (i = 0; i < n; i++) {
      int64_t a = mgopt__pu_norm_axis(axes[i], l->rank);
      na[i] = a < 0 ? axes[i] : l->perm[a];
    }
    return mgopt_op_set_ints(op, "axes", na, n) == MGOPT_OK;
  }
  return 1;
}

/* Uses of t's output read its input instead; a function output keeps its name. */
static int mgopt__rt_bypass(mgopt__rt *r, mgopt_op *t) {
  mgopt_value *out = t->outs[0], *in = mgopt_op_operand(t, "x");
  if (mgopt__pu_is_func_output(out) && (!in->def || mgopt__pu_is_func_output(in))) {
    static const char *const slot[1] = {"x"};
    mgopt_op *id = mgopt_build_op(r->p, t->parent, t, "identity", out->name, 1, slot, &in, 1);
    if (!id || mgopt_op_infer(r->p, id, NULL) != MGOPT_OK) return 0;
    in = id->outs[0];
  }
  mgopt_value_replace_all_uses(out, in);
  if (in->def && in->def->nouts == 1) in->def->name = in->name;
  return 1;
}

/* Inserts transpose(perm) on edge m. */
static int mgopt__rt_materialize(mgopt__rt *r, mgopt_block *b, const mgopt__rt_mat *m) {
  static const char *const slot[1] = {"x"};
  const mgopt__rt_lazy *l = &r->L[m->lazy];
  mgopt_value *v = m->op ? m->op->slots[m->slot].uses[m->index].value : b->outs[m->index]->value;
  mgopt_op *t;
  if (m->op) {
    t = mgopt_build_op(r->p, b, m->op, "transpose", mgopt__pu_name2(r->p, mgopt__pu_value_name(v), "_transposed"),
                       1, slot, &v, 1);
    if (!t || mgopt_op_set_ints(t, "perm", l->perm, l->rank) != MGOPT_OK) return 0;
    mgopt_op_set_operand_at(m->op, m->slot, m->index, t->outs[0]);
  } else {
    /* a block output: the transpose takes the output's name, the value gets a new one */
    const char *name = v->def ? v->name : NULL; /* (a block argument keeps its name; never lazy here) */
    if (name) mgopt__pu_rename(v, mgopt__pu_name2(r->p, mgopt__pu_value_name(v), "_before_transpose"));
    else name = mgopt__pu_name2(r->p, mgopt__pu_value_name(v), "_transposed");
    t = mgopt_build_op(r->p, b, NULL, "transpose", name, 1, slot, &v, 1);
    if (!t || mgopt_op_set_ints(t, "perm", l->perm, l->rank) != MGOPT_OK) return 0;
    mgopt_block_set_output(b, m->index, t->outs[0]);
  }
  return 1;
}

static mgopt_status mgopt__rt_block1(mgopt_pass_ctx *ctx, mgopt__rt *r, mgopt_block *b) {
  mgopt_program *p = ctx->program;
  mgopt_op *op;
  int32_t i;
  int64_t k;
  uint8_t *keep;
  r->nL = r->nuf = r->nM = r->nU = r->nS = r->nC = 0;
  for (op = b->first; op; op = op->next)
    if (op->nblocks) return MGOPT_OK; /* the reference leaves such blocks alone */
  if (r->nids < p->next_id) {
    /* entries start at -1 and are reset after each block (its op outputs) */
    int32_t *nl = (int32_t *)mgopt__heap_realloc(&p->alloc, r->lz, sizeof(int32_t) * r->nids,
                                                 sizeof(int32_t) * p->next_id);
    if (!nl) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "reduce_transposes: out of memory");
    for (k = r->nids; k < (int64_t)p->next_id; k++) nl[k] = -1;
    r->lz = nl;
    r->nids = p->next_id;
  }
  /* phase 1 */
  for (op = b->first; op && !r->oom; op = op->next) mgopt__rt_visit(r, op);
  for (i = 0; i < b->nouts && !r->oom; i++) {
    int32_t l = mgopt__rt_lazy_of(r, b->outs[i]->value);
    if (l >= 0) mgopt__rt_add_mat(r, NULL, -1, i, l);
  }
  if (r->oom) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "reduce_transposes: out of memory");
  if (r->nS == 0) return MGOPT_OK;
  /* phase 2: count per component */
  keep = (uint8_t *)mgopt__heap_realloc(&p->alloc, NULL, 0, (size_t)r->nuf * (3 * sizeof(int64_t) + 1));
  if (!keep) return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "reduce_transposes: out of memory");
  r->nstart = (int64_t *)(void *)keep;
  r->ncancel = r->nstart + r->nuf;
  r->nmat = r->ncancel + r->nuf;
  keep = (uint8_t *)(r->nmat + r->nuf);
  memset(r->nstart, 0, (size_t)r->nuf * (3 * sizeof(int64_t) + 1));
  for (k = 0; k < r->nS; k++) r->nstart[mgopt__rt_find(r, r->S[k].comp)]++;
  for (k = 0; k < r->nC; k++) r->ncancel[mgopt__rt_find(r, r->C[k].comp)]++;
  for (k = 0; k < r->nM; k++) r->nmat[mgopt__rt_find(r, r->L[r->M[k].lazy].comp)]++;
  for (k = 0; k < r->nuf; k++)
    if (mgopt__rt_find(r, (int32_t)k) == k) keep[k] = r->nmat[k] < r->nstart[k] + r->ncancel[k];
  /* phase 3: constants and axes, bypasses, then materializations */
  {
    mgopt_status st = MGOPT_OK;
    int64_t changed = 0;
#define MGOPT__RT_KEEP(comp) keep[mgopt__rt_find(r, (comp))]
    for (k = 0; k < r->nU && !st; k++)
      if (MGOPT__RT_KEEP(r->L[r->U[k].lazy].comp) && !mgopt__rt_update(r, r->U[k].op, &r->L[r->U[k].lazy]))
        st = MGOPT_ERR_NOMEM;
    for (k = 0; k < r->nS && !st; k++)
      if (MGOPT__RT_KEEP(r->S[k].comp)) {
        if (!mgopt__rt_bypass(r, r->S[k].op)) st = MGOPT_ERR_NOMEM;
        changed++;
      }
    for (k = 0; k < r->nC && !st; k++)
      if (MGOPT__RT_KEEP(r->C[k].comp)) {
        if (!mgopt__rt_bypass(r, r->C[k].op)) st = MGOPT_ERR_NOMEM;
        changed++;
      }
    for (k = 0; k < r->nM && !st; k++)
      if (MGOPT__RT_KEEP(r->L[r->M[k].lazy].comp) && !mgopt__rt_materialize(r, b, &r->M[k])) st = MGOPT_ERR_NOMEM;
    for (k = 0; k < r->nS; k++)
      if (MGOPT__RT_KEEP(r->S[k].comp) && mgopt__op_is_dead(r->S[k].op)) mgopt_op_erase(r->S[k].op);
    for (k = 0; k < r->nC; k++)
      if (MGOPT__RT_KEEP(r->C[k].comp) && mgopt__op_is_dead(r->C[k].op)) mgopt_op_erase(r->C[k].op);
    for (k = 0; k < r->nL; k++) r->L[k].changed = MGOPT__RT_KEEP(r->L[k].comp);
#undef MGOPT__RT_KEEP
    mgopt__heap_free(&p->alloc, r->nstart, (size_t)r->nuf * (3 * sizeof(int64_t) + 1));
    r->nstart = r->ncancel = r->nmat = NULL;
    if (st) return mgopt_diag_set(ctx->diag, st, "reduce_transposes: out of memory");
    if (!changed) return MGOPT_OK;
    ctx->rewrites += changed;
    /* the layouts changed along the chains: infer every op again, in order;
       a declared type that still holds for the new inference stays (so main's
       outputs and the importer's exact types keep what they declared), except
       on a value whose layout changed: its declared dims are in the old order,
       and with symbolic dims they need not clash with the new ones ((s0, 1)
       against (1, s0)) */
    for (op = b->first; op; op = op->next) {
      mgopt_diag d;
      mgopt_type kept[16];
      int32_t i, nk = op->nouts <= 16 ? op->nouts : 0;
      if (op->kind == MGOPT_OP_const) continue;
      for (i = 0; i < nk; i++) kept[i] = op->outs[i]->type;
      if (mgopt_op_infer(p, op, &d) != MGOPT_OK)
        return mgopt_diag_set(ctx->diag, MGOPT_ERR_PASS, "reduce_transposes: op '%s' no longer infers: %s",
                              op->name ? op->name : op->type, d.msg);
      for (i = 0; i < nk; i++) {
        int32_t l = mgopt__rt_lazy_of(r, op->outs[i]);
        if ((l < 0 || !r->L[l].changed) && !mgopt__type_clash(&kept[i], &op->outs[i]->type, 1))
          op->outs[i]->type = kept[i];
      }
    }
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__rt_block(mgopt_pass_ctx *ctx, mgopt__rt *r, mgopt_block *b) {
  mgopt_status s = mgopt__rt_block1(ctx, r, b);
  mgopt_op *op;
  int32_t i;
  for (op = b->first; op && r->lz; op = op->next)
    for (i = 0; i < op->nouts; i++) mgopt__rt_set(r, op->outs[i], -1);
  return s;
}

static mgopt_status mgopt__rt_run(mgopt_pass_ctx *ctx) {
  mgopt__rt r;
  mgopt_status s = MGOPT_OK;
  int32_t f;
  memset(&r, 0, sizeof r);
  r.p = ctx->program;
  for (f = 0; f < mgopt_program_function_count(ctx->program) && !s; f++) {
    mgopt_function *fn = mgopt_program_function_at(ctx->program, f);
    /* every chain starts at a transpose: without one, nothing can change */
    if (mgopt__index_kind_count(fn, MGOPT_OP_transpose)) s = mgopt__rt_block(ctx, &r, fn->body);
  }
  if (r.lz) mgopt__heap_free(&r.p->alloc, r.lz, sizeof(int32_t) * r.nids);
  if (r.L) mgopt__heap_free(&r.p->alloc, r.L, (size_t)r.capL * sizeof *r.L);
  if (r.uf) mgopt__heap_free(&r.p->alloc, r.uf, (size_t)r.capuf * sizeof *r.uf);
  if (r.M) mgopt__heap_free(&r.p->alloc, r.M, (size_t)r.capM * sizeof *r.M);
  if (r.U) mgopt__heap_free(&r.p->alloc, r.U, (size_t)r.capU * sizeof *r.U);
  if (r.S) mgopt__heap_free(&r.p->alloc, r.S, (size_t)r.capS * sizeof *r.S);
  if (r.C) mgopt__heap_free(&r.p->alloc, r.C, (size_t)r.capC * sizeof *r.C);
  return s;
}

MGOPT__DEFINE_PASS(cleanup, common, reduce_transposes,
                   "cancel transposes across layout-agnostic ops, keeping a transpose only where the layout is needed",
                   mgopt__rt_run);
