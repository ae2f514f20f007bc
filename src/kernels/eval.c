/* src/kernels/eval.c — mgopt_eval, the reference evaluator: runs a function's blocks with the kernels.

   Walk. The program is verified, then the function body runs op by op in
   block order (ops are topologically ordered within a block). `const` binds
   its tensor in place; `cond` runs the branch its predicate (one element, any
   numeric dtype, nonzero = true) selects; `while_loop` binds the loop vars to
   the condition block's arguments, stops when it gives false, else runs the
   body and carries its outputs into the next iteration, at most
   max_loop_iterations times (an error beyond). Every other op runs its
   kernel (the kernel column of MGOPT_OP_TABLE) with outputs on the heap; an
   op without one goes to the caller's op_fn or is the error "no kernel for".
   Scalar parameters that are operands outside the op's registered slots
   (MIL allows `axis=x` at run time) must be constants: kernels read them as
   constants, so a run-time one is an error, never a wrong default.

   Memory. Each tensor the evaluator makes is one heap block (a reference
   count, the tensor record, its shape, 64-byte-aligned data) on the
   program's allocator. A value holds one reference while it has reads left:
   its count starts at its use count and drops when the op that reads it
   (the op of the value's own block that contains the read, so a read inside
   a loop body keeps the value alive for the whole loop) has run, and when its
   block gives it as an output. Constants and the caller's inputs are read in
   place and never counted.

   Numeric contract (per family; details in each kernel file's header):
   - elementwise (elementwise.c): fp16 / bf16 / fp32 compute in float and round
     once to the dtype (nearest even); fp64 in double; integers in int64 and
     wrap around to the dtype on store; NaN and Inf propagate as in IEEE 754
     (comparisons with NaN are false, except not_equal); integer division or
     modulo by zero, INT64_MIN / -1 and negative integer exponents are errors.
   - reductions, softmax, matmul, linear (reduce.c): accumulate in the lane
     type (float for 16-bit floats) in increasing index order; empty max / min
     / mean reductions are errors.
   - shape ops (shape.c): move bytes, never round; out-of-range indices,
     axes and sizes are errors.
   - (de)quantization and constexpr ops (constexpr.c): computed in float,
     rounded once to the output dtype; quantize rounds half to even and
     saturates.
   - cast: float to integer truncates toward zero; a value outside the
     target integer type's range (NaN included) is an error, never wrapped;
     integer to float rounds to nearest even. */
#include "kernels.h"

/* ---------------------------------------------------------------- heap tensors */

/* The block in front of every evaluator tensor; the tensor record follows. */
typedef struct mgopt__evh {
  int64_t refs;
  size_t size;   /* bytes of the whole block */
} mgopt__evh;

#define MGOPT__EVH_BYTES ((sizeof(mgopt__evh) + 15u) & ~(size_t)15u)
#define MGOPT__EV_HDR(t) ((mgopt__evh *)(void *)((uint8_t *)(t) - MGOPT__EVH_BYTES))
#define MGOPT__EV_MAX_DEPTH 64

MGOPT__PRIVATE mgopt_tensor *mgopt__ev_tensor_alloc(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                                    const int64_t *shape, int zero) {
  size_t rec = (mgopt__tensor_rec_size() + 7u) & ~(size_t)7u, head, size;
  int64_t n = 1, nb;
  int32_t i;
  uint8_t *base;
  uintptr_t data;
  mgopt__evh *h;
  mgopt_tensor *t;
  if (rank < 0 || rank > MGOPT_MAX_RANK || (rank > 0 && !shape)) return NULL;
  for (i = 0; i < rank; i++)
    if (shape[i] < 0 || !mgopt__mul_i64(n, shape[i], &n)) return NULL;
  nb = mgopt_dtype_nbytes(dt, n);
  if (nb < 0 || (uint64_t)nb > (uint64_t)SIZE_MAX / 4) return NULL;
  head = MGOPT__EVH_BYTES + rec + sizeof(int64_t) * (size_t)rank;
  size = head + 63u + (nb ? (size_t)nb : 1u);
  base = (uint8_t *)mgopt__heap_realloc(&p->alloc, NULL, 0, size);
  if (!base) return NULL;
  memset(base, 0, head);
  h = (mgopt__evh *)(void *)base;
  h->refs = 1;
  h->size = size;
  t = (mgopt_tensor *)(void *)(base + MGOPT__EVH_BYTES);
  t->dtype = (uint8_t)dt;
  t->rank = rank;
  t->numel = n;
  t->nbytes = (size_t)nb;
  t->ext_offset = -1;
  if (rank > 0) {
    t->shape = (int64_t *)(void *)(base + MGOPT__EVH_BYTES + rec);
    memcpy(t->shape, shape, sizeof(int64_t) * (size_t)rank);
  }
  data = ((uintptr_t)(base + head) + 63u) & ~(uintptr_t)63u;
  t->data = (void *)data;
  if (zero || dt == MGOPT_DT_STRING) memset(t->data, 0, nb ? (size_t)nb : 1u);
  return t;
}

static void mgopt__ev_unref(mgopt_program *p, mgopt_tensor *t) {
  mgopt__evh *h;
  if (!t) return;
  h = MGOPT__EV_HDR(t);
  if (--h->refs <= 0) mgopt__heap_free(&p->alloc, h, h->size);
}

static mgopt_tensor *mgopt__ev_copy(mgopt_program *p, const mgopt_tensor *src) {
  mgopt_tensor *t = mgopt__ev_tensor_alloc(p, (mgopt_dtype)src->dtype, src->rank, src->shape, 0);
  if (t && t->nbytes) {
    if (t->nbytes != src->nbytes || !src->data) {
      mgopt__ev_unref(p, t);
      return NULL;
    }
    memcpy(t->data, src->data, t->nbytes);
  }
  return t;
}

/* ---------------------------------------------------------------- state */

typedef struct mgopt__ev {
  mgopt_program *p;
  const mgopt_eval_options *o;
  mgopt_diag *d;
  int64_t max_iters;
  uint32_t nids;
  mgopt_tensor **val; /* by value id: the tensor the value holds, NULL when none */
  uint8_t *counted;   /* by value id: val holds a reference to release */
  int32_t *left;      /* by value id: reads left before the reference is released */
  int depth;
} mgopt__ev;

static mgopt_status mgopt__ev_fail(mgopt__ev *E, const mgopt_op *op, mgopt_status s, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static mgopt_status mgopt__ev_fail(mgopt__ev *E, const mgopt_op *op, mgopt_status s, const char *fmt, ...) {
  va_list ap;
  if (!E->d) return s;
  E->d->status = s;
  mgopt__diag_place(E->d, op);
  va_start(ap, fmt);
  vsnprintf(E->d->msg, sizeof E->d->msg, fmt, ap);
  va_end(ap);
  if (op) {
    mgopt__diag_prefix(E->d, "): ");
    mgopt__diag_prefix(E->d, op->type ? op->type : "?");
    mgopt__diag_prefix(E->d, "' (");
    mgopt__diag_prefix(E->d, E->d->op);
    mgopt__diag_prefix(E->d, "op '");
  }
  return s;
}

static const mgopt_block *mgopt__ev_home(const mgopt_value *v) { return v->def ? v->def->parent : v->owner; }

static mgopt_tensor *mgopt__ev_lookup(void *env, const mgopt_value *v) {
  mgopt__ev *E = (mgopt__ev *)env;
  if (!v) return NULL;
  if (v->id < E->nids && E->val[v->id]) return E->val[v->id];
  return mgopt_value_const(v);
}

static void mgopt__ev_release(mgopt__ev *E, const mgopt_value *v) {
  if (v->id >= E->nids) return;
  if (E->counted[v->id]) mgopt__ev_unref(E->p, E->val[v->id]);
  E->val[v->id] = NULL;
  E->counted[v->id] = 0;
  E->left[v->id] = 0;
}

/* v holds t (taking over one reference when counted) until its reads are done. */
static void mgopt__ev_bind(mgopt__ev *E, const mgopt_value *v, mgopt_tensor *t, int counted) {
  if (v->id >= E->nids) {
    if (counted) mgopt__ev_unref(E->p, t);
    return;
  }
  mgopt__ev_release(E, v);
  E->val[v->id] = t;
  E->counted[v->id] = (uint8_t)(counted != 0);
  E->left[v->id] = v->nuses;
  if (v->nuses <= 0) mgopt__ev_release(E, v);
}

static void mgopt__ev_read_done(mgopt__ev *E, const mgopt_value *v) {
  if (v->id >= E->nids || !E->val[v->id]) return;
  if (--E->left[v->id] <= 0) mgopt__ev_release(E, v);
}

/* The reads of values of block `home` made by op y (its operands, and every
   read inside its nested blocks) are done. */
static void mgopt__ev_op_done(mgopt__ev *E, const mgopt_op *y, const mgopt_block *home) {
  int32_t s, i;
  for (s = 0; s < y->nslots; s++)
    for (i = 0; i < y->slots[s].n; i++) {
      const mgopt_value *v = y->slots[s].uses[i].value;
      if (v && mgopt__ev_home(v) == home) mgopt__ev_read_done(E, v);
    }
  for (i = 0; i < y->nblocks; i++) {
    const mgopt_block *b = y->blocks[i];
    const mgopt_op *x;
    int32_t j;
    for (x = b->first; x; x = x->next) mgopt__ev_op_done(E, x, home);
    for (j = 0; j < b->nouts; j++) {
      const mgopt_value *v = b->outs[j] ? b->outs[j]->value : NULL;
      if (v && mgopt__ev_home(v) == home) mgopt__ev_read_done(E, v);
    }
  }
}

/* Checks a tensor against a value's declared type. 1 if it fits. */
static int mgopt__ev_fits(const mgopt_tensor *t, const mgopt_type *ty, char *why, size_t nwhy) {
  int32_t i;
  if (ty->kind != MGOPT_TYPE_TENSOR) {
    snprintf(why, nwhy, "its type is not a tensor type");
    return 0;
  }
  if (ty->dtype != MGOPT_DT_UNKNOWN && ty->dtype != t->dtype) {
    snprintf(why, nwhy, "it is %s, declared %s", mgopt_dtype_name((mgopt_dtype)t->dtype),
             mgopt_dtype_name((mgopt_dtype)ty->dtype));
    return 0;
  }
  if (ty->rank >= 0) {
    if (ty->rank != t->rank) {
      snprintf(why, nwhy, "it has rank %d, declared %d", (int)t->rank, (int)ty->rank);
      return 0;
    }
    for (i = 0; i < t->rank && ty->dims; i++)
      if (mgopt_dim_is_static(ty->dims[i]) && ty->dims[i].v != t->shape[i]) {
        snprintf(why, nwhy, "its dim %d is %lld, declared %lld", (int)i, (long long)t->shape[i],
                 (long long)ty->dims[i].v);
        return 0;
      }
  }
  return 1;
}

/* A tensor header is self-consistent (constants of a hand-built program need not be). */
static int mgopt__ev_tensor_ok(const mgopt_tensor *t) {
  int64_t nb;
  if (t->rank < 0 || t->rank > MGOPT_MAX_RANK || (t->rank > 0 && !t->shape)) return 0;
  if (mgopt__k_numel(t->rank, t->shape) != t->numel) return 0;
  nb = mgopt_dtype_nbytes((mgopt_dtype)t->dtype, t->numel);
  return nb >= 0 && (uint64_t)nb == (uint64_t)t->nbytes && (t->data || t->nbytes == 0);
}

/* ---------------------------------------------------------------- running */

static mgopt_status mgopt__ev_block(mgopt__ev *E, const mgopt_block *b);

/* Takes block b's outputs after it ran: res[i] with a reference each when
   counted[i]; then releases what b still holds. */
static mgopt_status mgopt__ev_take(mgopt__ev *E, const mgopt_op *op, const mgopt_block *b, mgopt_tensor **res,
                                   uint8_t *counted) {
  int32_t i;
  const mgopt_op *x;
  mgopt_status s = MGOPT_OK;
  for (i = 0; i < b->nouts; i++) {
    const mgopt_value *v = b->outs[i] ? b->outs[i]->value : NULL;
    mgopt_tensor *t = mgopt__ev_lookup(E, v);
    res[i] = NULL;
    counted[i] = 0;
    if (!t) {
      if (s == MGOPT_OK) s = mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "block output %d has no value", (int)i);
      continue;
    }
    res[i] = t;
    if (v->id < E->nids && E->counted[v->id] && E->val[v->id] == t) {
      MGOPT__EV_HDR(t)->refs++;
      counted[i] = 1;
    }
  }
  for (i = 0; i < b->nouts; i++) {
    const mgopt_value *v = b->outs[i] ? b->outs[i]->value : NULL;
    if (v && mgopt__ev_home(v) == b) mgopt__ev_read_done(E, v);
  }
  for (i = 0; i < b->nargs; i++) mgopt__ev_release(E, b->args[i]);
  for (x = b->first; x; x = x->next)
    for (i = 0; i < x->nouts; i++) mgopt__ev_release(E, x->outs[i]);
  if (s != MGOPT_OK)
    for (i = 0; i < b->nouts; i++)
      if (counted[i]) mgopt__ev_unref(E->p, res[i]);
  return s;
}

/* Binds outputs of op from res (references handed over). */
static mgopt_status mgopt__ev_give(mgopt__ev *E, const mgopt_op *op, mgopt_tensor **res, uint8_t *counted, int32_t n) {
  int32_t i;
  char why[160];
  mgopt_status s = MGOPT_OK;
  for (i = 0; i < n; i++) {
    if (s == MGOPT_OK && !mgopt__ev_fits(res[i], &op->outs[i]->type, why, sizeof why))
      s = mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "output %d does not fit its declared type: %s", (int)i, why);
    if (s != MGOPT_OK) {
      if (counted[i]) mgopt__ev_unref(E->p, res[i]);
      continue;
    }
    mgopt__ev_bind(E, op->outs[i], res[i], counted[i]);
  }
  return s;
}

static int mgopt__ev_truth(mgopt__ev *E, const mgopt_tensor *t, int *out) {
  if (!t || t->numel != 1 || mgopt_dtype_bits((mgopt_dtype)t->dtype) <= 0 || t->dtype == MGOPT_DT_STRING ||
      !t->data)
    return 0;
  (void)E;
  if (t->dtype == MGOPT_DT_BOOL) *out = ((const uint8_t *)t->data)[0] != 0;
  else *out = mgopt_tensor_get_f64(t, 0) != 0.0;
  return 1;
}

/* Heap arrays of n tensors and flags for block results (n >= 1). */
static int mgopt__ev_arrays(mgopt__ev *E, int32_t n, mgopt_tensor ***res, uint8_t **counted) {
  size_t bytes = (size_t)(n > 0 ? n : 1) * (sizeof(mgopt_tensor *) + 1);
  uint8_t *m = (uint8_t *)mgopt__heap_realloc(&E->p->alloc, NULL, 0, bytes);
  if (!m) return 0;
  memset(m, 0, bytes);
  *res = (mgopt_tensor **)(void *)m;
  *counted = m + (size_t)(n > 0 ? n : 1) * sizeof(mgopt_tensor *);
  return 1;
}

static void mgopt__ev_arrays_free(mgopt__ev *E, int32_t n, mgopt_tensor **res) {
  mgopt__heap_free(&E->p->alloc, res, (size_t)(n > 0 ? n : 1) * (sizeof(mgopt_tensor *) + 1));
}

static mgopt_status mgopt__ev_cond(mgopt__ev *E, const mgopt_op *op) {
  mgopt_tensor *pred = mgopt__ev_lookup(E, mgopt_op_operand(op, "pred")), **res;
  uint8_t *counted;
  const mgopt_block *b;
  int truth;
  mgopt_status s;
  if (op->nblocks != 2) return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "cond needs two blocks");
  if (!mgopt__ev_truth(E, pred, &truth))
    return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "the predicate is not one numeric element");
  b = op->blocks[truth ? 0 : 1];
  if (b->nouts != op->nouts)
    return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "the branch gives %d values for %d outputs", (int)b->nouts,
                          (int)op->nouts);
  if ((s = mgopt__ev_block(E, b)) != MGOPT_OK) return s;
  if (!mgopt__ev_arrays(E, op->nouts, &res, &counted)) return mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
  s = mgopt__ev_take(E, op, b, res, counted);
  if (s == MGOPT_OK) s = mgopt__ev_give(E, op, res, counted, op->nouts);
  mgopt__ev_arrays_free(E, op->nouts, res);
  return s;
}

/* Binds block b's arguments to cur (a new reference for each counted one). */
static mgopt_status mgopt__ev_enter(mgopt__ev *E, const mgopt_op *op, const mgopt_block *b, mgopt_tensor **cur,
                                    const uint8_t *counted, int32_t n) {
  int32_t i;
  char why[160];
  if (b->nargs != n)
    return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "a block takes %d arguments for %d loop vars", (int)b->nargs,
                          (int)n);
  for (i = 0; i < n; i++)
    if (!mgopt__ev_fits(cur[i], &b->args[i]->type, why, sizeof why))
      return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "loop var %d does not fit its declared type: %s", (int)i, why);
  for (i = 0; i < n; i++) {
    if (counted[i]) MGOPT__EV_HDR(cur[i])->refs++;
    mgopt__ev_bind(E, b->args[i], cur[i], counted[i]);
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__ev_loop(mgopt__ev *E, const mgopt_op *op) {
  int32_t si = mgopt_op_slot_index(op, "loop_vars"), n, i;
  mgopt_tensor **cur = NULL, **next = NULL, *pred[1];
  uint8_t *ccur = NULL, *cnext = NULL, cpred[1];
  int64_t iter = 0;
  mgopt_status s = MGOPT_OK;
  int truth;
  if (op->nblocks != 2 || si < 0) return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "while_loop needs loop_vars and two blocks");
  n = op->slots[si].n;
  if (op->nouts != n || op->blocks[1]->nouts != n || op->blocks[0]->nouts != 1)
    return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "while_loop's blocks and outputs disagree with its %d loop vars",
                          (int)n);
  if (!mgopt__ev_arrays(E, n, &cur, &ccur) || !mgopt__ev_arrays(E, n, &next, &cnext)) {
    if (cur) mgopt__ev_arrays_free(E, n, cur);
    return mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
  }
  for (i = 0; i < n; i++) {
    const mgopt_value *v = op->slots[si].uses[i].value;
    cur[i] = mgopt__ev_lookup(E, v);
    if (!cur[i]) {
      s = mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "loop var %d has no value", (int)i);
      break;
    }
    if (v->id < E->nids && E->counted[v->id] && E->val[v->id] == cur[i]) {
      MGOPT__EV_HDR(cur[i])->refs++;
      ccur[i] = 1;
    }
  }
  while (s == MGOPT_OK) {
    if ((s = mgopt__ev_enter(E, op, op->blocks[0], cur, ccur, n)) != MGOPT_OK) break;
    if ((s = mgopt__ev_block(E, op->blocks[0])) != MGOPT_OK) break;
    if ((s = mgopt__ev_take(E, op, op->blocks[0], pred, cpred)) != MGOPT_OK) break;
    if (!mgopt__ev_truth(E, pred[0], &truth))
      s = mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "the loop condition is not one numeric element");
    if (cpred[0]) mgopt__ev_unref(E->p, pred[0]);
    if (s != MGOPT_OK || !truth) break;
    if (++iter > E->max_iters) {
      s = mgopt__ev_fail(E, op, MGOPT_ERR_LIMIT, "more than %lld iterations", (long long)E->max_iters);
      break;
    }
    if ((s = mgopt__ev_enter(E, op, op->blocks[1], cur, ccur, n)) != MGOPT_OK) break;
    if ((s = mgopt__ev_block(E, op->blocks[1])) != MGOPT_OK) break;
    if ((s = mgopt__ev_take(E, op, op->blocks[1], next, cnext)) != MGOPT_OK) break;
    for (i = 0; i < n; i++) {
      if (ccur[i]) mgopt__ev_unref(E->p, cur[i]);
      cur[i] = next[i];
      ccur[i] = cnext[i];
    }
  }
  if (s == MGOPT_OK) s = mgopt__ev_give(E, op, cur, ccur, n);
  else
    for (i = 0; i < n; i++)
      if (ccur[i] && cur[i]) mgopt__ev_unref(E->p, cur[i]);
  mgopt__ev_arrays_free(E, n, cur);
  mgopt__ev_arrays_free(E, n, next);
  return s;
}

/* Operands outside the registered slots are parameters the kernels read as constants. */
static mgopt_status mgopt__ev_params(mgopt__ev *E, const mgopt_op *op) {
  const mgopt_op_def *def = mgopt_op_def_get(op->kind);
  int32_t s, j;
  for (s = 0; s < op->nslots; s++) {
    int known = 0;
    for (j = 0; def && j < def->nslots; j++)
      if (def->slots[j].name && strcmp(def->slots[j].name, op->slots[s].name) == 0) known = 1;
    if (known) continue;
    for (j = 0; j < op->slots[s].n; j++)
      if (!mgopt_value_const(op->slots[s].uses[j].value))
        return mgopt__ev_fail(E, op, MGOPT_ERR_UNSUPPORTED, "parameter '%s' is not a constant",
                              op->slots[s].name);
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__ev_callback(mgopt__ev *E, const mgopt_op *op) {
  int32_t n = mgopt_op_operand_count(op), s, i, k = 0;
  mgopt_tensor **args, **res;
  uint8_t *counted;
  size_t abytes = (size_t)(n > 0 ? n : 1) * sizeof(mgopt_tensor *);
  mgopt_diag d2;
  mgopt_status st;
  if (!E->o || !E->o->op_fn)
    return mgopt__ev_fail(E, op, MGOPT_ERR_UNSUPPORTED, "no kernel for %s", op->type ? op->type : "?");
  args = (mgopt_tensor **)mgopt__heap_realloc(&E->p->alloc, NULL, 0, abytes);
  if (!args || !mgopt__ev_arrays(E, op->nouts, &res, &counted)) {
    if (args) mgopt__heap_free(&E->p->alloc, args, abytes);
    return mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
  }
  for (s = 0; s < op->nslots; s++)
    for (i = 0; i < op->slots[s].n; i++) args[k++] = mgopt__ev_lookup(E, op->slots[s].uses[i].value);
  mgopt_diag_clear(&d2);
  st = E->o->op_fn(E->o->op_ud, E->p, op, args, n, res, &d2);
  for (i = 0; i < op->nouts; i++) counted[i] = res[i] != NULL;
  if (st == MGOPT_OK)
    for (i = 0; i < op->nouts; i++)
      if (!res[i]) {
        st = mgopt__ev_fail(E, op, MGOPT_ERR_INVALID_ARG, "the op callback did not set output %d", (int)i);
        break;
      }
  if (st != MGOPT_OK) {
    if (E->d && d2.status != MGOPT_OK && E->d->status == MGOPT_OK)
      mgopt__ev_fail(E, op, st, "%s", d2.msg[0] ? d2.msg : mgopt_status_str(st));
    else if (E->d && E->d->status == MGOPT_OK)
      mgopt__ev_fail(E, op, st, "the op callback failed: %s", mgopt_status_str(st));
    for (i = 0; i < op->nouts; i++)
      if (res[i]) mgopt__ev_unref(E->p, res[i]);
  } else {
    st = mgopt__ev_give(E, op, res, counted, op->nouts);
  }
  mgopt__heap_free(&E->p->alloc, args, abytes);
  mgopt__ev_arrays_free(E, op->nouts, res);
  return st;
}

static mgopt_status mgopt__ev_kernel(mgopt__ev *E, const mgopt_op *op, mgopt__kernel_fn fn) {
  mgopt__kctx k;
  mgopt_tensor **out;
  uint8_t *counted;
  int32_t s, i;
  int r;
  mgopt_status st = MGOPT_OK;
  if (op->nblocks != 0 || op->nouts < 1 ||
      (op->nouts != 1 && op->kind != MGOPT_OP_split && op->kind != MGOPT_OP_topk &&
       op->kind != MGOPT_OP_constexpr_lut_to_sparse && op->kind != MGOPT_OP_constexpr_sparse_blockwise_shift_scale))
    return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "unexpected outputs or blocks for %s", op->type);
  for (s = 0; s < op->nslots; s++)
    for (i = 0; i < op->slots[s].n; i++) {
      mgopt_tensor *t = mgopt__ev_lookup(E, op->slots[s].uses[i].value);
      if (!t || !mgopt__ev_tensor_ok(t))
        return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "operand '%s' %s", op->slots[s].name,
                              t ? "is a malformed tensor" : "has no value");
    }
  if (!mgopt__ev_arrays(E, op->nouts, &out, &counted)) return mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
  memset(&k, 0, sizeof k);
  k.p = E->p;
  k.op = op;
  k.lookup = mgopt__ev_lookup;
  k.env = E;
  k.out = out;
  k.heap = 1;
  k.max_elements = E->o ? E->o->max_elements : 0;
  r = fn(&k);
  for (i = 0; i < k.nscratch; i++) mgopt__heap_free(&E->p->alloc, k.scratch[i], k.scratch_size[i]);
  for (i = 0; i < op->nouts && r == MGOPT__K_OK; i++)
    if (!out[i]) r = mgopt__k_no(&k, "output %d was not computed", (int)i);
  if (r != MGOPT__K_OK) {
    for (i = 0; i < op->nouts; i++)
      if (out[i]) mgopt__ev_unref(E->p, out[i]);
    if (r == MGOPT__K_OOM) st = mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
    else if (k.bad)
      st = mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "%s", k.why);
    else if (k.why[0] && strstr(k.why, "above the limit"))
      st = mgopt__ev_fail(E, op, MGOPT_ERR_LIMIT, "%s", k.why);
    else
      st = mgopt__ev_fail(E, op, MGOPT_ERR_UNSUPPORTED, "cannot evaluate: %s",
                          k.why[0] ? k.why : "the kernel does not support these operands or parameters");
  } else {
    for (i = 0; i < op->nouts; i++) counted[i] = 1;
    st = mgopt__ev_give(E, op, out, counted, op->nouts);
  }
  mgopt__ev_arrays_free(E, op->nouts, out);
  return st;
}

static mgopt_status mgopt__ev_op(mgopt__ev *E, const mgopt_op *op) {
  mgopt__kernel_fn fn;
  mgopt_status s;
  if (op->kind == MGOPT_OP_const) {
    mgopt_tensor *t = op->nouts == 1 ? mgopt_value_const(op->outs[0]) : NULL;
    char why[160];
    if (!t || !mgopt__ev_tensor_ok(t)) return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "const without a valid tensor");
    if (!mgopt__ev_fits(t, &op->outs[0]->type, why, sizeof why))
      return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "the constant does not fit its declared type: %s", why);
    mgopt__ev_bind(E, op->outs[0], t, 0);
    return MGOPT_OK;
  }
  if (op->kind == MGOPT_OP_cond) return mgopt__ev_cond(E, op);
  if (op->kind == MGOPT_OP_while_loop) return mgopt__ev_loop(E, op);
  fn = op->kind > MGOPT_OP_OPAQUE ? mgopt__k_kernel(op->kind) : NULL;
  if (!fn || op->nblocks) return mgopt__ev_callback(E, op);
  if ((s = mgopt__ev_params(E, op)) != MGOPT_OK) return s;
  return mgopt__ev_kernel(E, op, fn);
}

static mgopt_status mgopt__ev_block(mgopt__ev *E, const mgopt_block *b) {
  const mgopt_op *op;
  mgopt_status s = MGOPT_OK;
  if (++E->depth > MGOPT__EV_MAX_DEPTH)
    s = mgopt__ev_fail(E, b->parent_op, MGOPT_ERR_LIMIT, "blocks nested deeper than %d", MGOPT__EV_MAX_DEPTH);
  for (op = b->first; op && s == MGOPT_OK; op = op->next) {
    s = mgopt__ev_op(E, op);
    if (s == MGOPT_OK) mgopt__ev_op_done(E, op, b);
  }
  E->depth--;
  return s;
}

/* ---------------------------------------------------------------- exported */

MGOPTDEF mgopt_tensor *mgopt_eval_tensor_new(mgopt_program *p, mgopt_dtype dt, int32_t rank,
                                             const int64_t *shape) {
  if (!p || (mgopt_dtype_bits(dt) <= 0 && dt != MGOPT_DT_STRING)) return NULL;
  return mgopt__ev_tensor_alloc(p, dt, rank, shape, 1);
}

MGOPTDEF int mgopt_eval_has_kernel(int32_t kind) {
  return kind == MGOPT_OP_const || kind == MGOPT_OP_cond || kind == MGOPT_OP_while_loop ||
         (kind > MGOPT_OP_OPAQUE && mgopt__k_kernel(kind) != NULL);
}

MGOPTDEF void mgopt_eval_tensor_free(mgopt_program *p, mgopt_tensor *t) {
  if (p && t) mgopt__ev_unref(p, t);
}

MGOPTDEF mgopt_status mgopt_eval(mgopt_program *p, const char *fn, mgopt_tensor *const *inputs, int32_t ninputs,
                                 mgopt_tensor **outputs, int32_t noutputs, const mgopt_eval_options *opts,
                                 mgopt_diag *d) {
  mgopt__ev E;
  mgopt_function *f;
  const mgopt_block *body;
  mgopt_tensor **res = NULL;
  uint8_t *counted = NULL;
  size_t bytes;
  int32_t i;
  uint32_t id;
  mgopt_status s;
  char why[160];
  mgopt_diag_clear(d);
  if (!p || (ninputs > 0 && !inputs) || (noutputs > 0 && !outputs) || ninputs < 0 || noutputs < 0)
    return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "invalid arguments");
  f = fn ? mgopt_program_function(p, fn) : mgopt_program_function(p, "main");
  if (!f && !fn && mgopt_program_function_count(p) == 1) f = mgopt_program_function_at(p, 0);
  if (!f) return mgopt_diag_set(d, MGOPT_ERR_NOT_FOUND, "no function '%s'", fn ? fn : "main");
  if ((s = mgopt_program_verify(p, d)) != MGOPT_OK) return s;
  body = f->body;
  if (ninputs != body->nargs)
    return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "function '%s' takes %d inputs, %d given", f->name,
                          (int)body->nargs, (int)ninputs);
  if (noutputs != body->nouts)
    return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "function '%s' gives %d outputs, room for %d", f->name,
                          (int)body->nouts, (int)noutputs);
  for (i = 0; i < ninputs; i++) {
    if (!inputs[i] || !mgopt__ev_tensor_ok(inputs[i]))
      return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "input %d ('%s') is %s", (int)i,
                            body->args[i]->name ? body->args[i]->name : "", inputs[i] ? "malformed" : "NULL");
    if (!mgopt__ev_fits(inputs[i], &body->args[i]->type, why, sizeof why))
      return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "input %d ('%s') does not fit: %s", (int)i,
                            body->args[i]->name ? body->args[i]->name : "", why);
  }
  memset(&E, 0, sizeof E);
  E.p = p;
  E.o = opts;
  E.d = d;
  E.max_iters = opts && opts->max_loop_iterations > 0 ? opts->max_loop_iterations : (int64_t)1 << 24;
  E.nids = p->next_id;
  bytes = (size_t)E.nids * (sizeof(mgopt_tensor *) + sizeof(int32_t) + 1);
  E.val = (mgopt_tensor **)mgopt__heap_realloc(&p->alloc, NULL, 0, bytes ? bytes : 1);
  if (!E.val) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  memset(E.val, 0, bytes);
  E.left = (int32_t *)(void *)(E.val + E.nids);
  E.counted = (uint8_t *)(E.left + E.nids);
  for (i = 0; i < ninputs; i++) mgopt__ev_bind(&E, body->args[i], inputs[i], 0);
  s = mgopt__ev_block(&E, body);
  if (s == MGOPT_OK) {
    if (!mgopt__ev_arrays(&E, noutputs, &res, &counted)) s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
    else s = mgopt__ev_take(&E, NULL, body, res, counted);
  }
  for (i = 0; s == MGOPT_OK && i < noutputs; i++)
    if (!counted[i]) { /* a constant or an input: the caller gets its own copy */
      mgopt_tensor *c = mgopt__ev_copy(p, res[i]);
      if (!c) s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
      else {
        res[i] = c;
        counted[i] = 1;
      }
    }
  if (res) {
    for (i = 0; i < noutputs; i++) {
      if (s == MGOPT_OK) outputs[i] = res[i];
      else if (counted[i]) mgopt__ev_unref(p, res[i]);
    }
    mgopt__ev_arrays_free(&E, noutputs, res);
  }
  for (id = 0; id < E.nids; id++) /* after an error: what the interrupted blocks still hold */
    if (E.counted[id]) mgopt__ev_unref(p, E.val[id]);
  mgopt__heap_free(&p->alloc, E.val, bytes ? bytes : 1);
  return s;
}
