/* src/kernels/eval.c — mgopt_eval, the reference evaluator: runs a function's blocks with the kernels.

   Walk. The program is verified, then the function body runs op by op in
   block order (ops are topologically ordered within a block). `const` binds
   its tensor in place; `cond` runs the branch its predicate (one element, any
   numeric dtype, nonzero = true) selects; `while_loop` binds the loop vars to
   the condition block's arguments, stops when it gives false, else runs the
   body and carries its outputs into the next iteration, at most
   max_loop_iterations times (an error beyond). The ONNX control flow left
   opaque by the importer runs here too: `onnx::If` as cond, `onnx::Loop`
   with its trip count, condition, carried values and stacked scan outputs
   (see "ONNX control flow" below). A value may hold an ONNX sequence (the
   sequence ops are mgopt_onnx_eval_op's): a kernel never reads one, and a
   function output that is one is unsupported. Every other op runs its
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
#include "../onnx/convert_internal.h" /* the program's opset: Scan before opset 9 has batches */

/* ---------------------------------------------------------------- heap tensors */

/* The block in front of every evaluator tensor; the tensor record follows. */
typedef struct mgopt__evh {
  int64_t refs;
  size_t size;        /* bytes of the whole block */
  int64_t nseq;       /* a sequence: its item count (data holds the item pointers) */
  int32_t elem_dtype; /* a sequence: the dtype of its items */
  int32_t pad;
} mgopt__evh;

/* A sequence is told by its ext_location, this marker (no tensor of a
   program points there), and its dtype MGOPT_DT_UNKNOWN. */
static const char mgopt__ev_seq_mark[] = "sequence";
#define MGOPT__EV_IS_SEQ(t) ((t)->dtype == MGOPT_DT_UNKNOWN && (t)->ext_location == mgopt__ev_seq_mark)

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
  if (--h->refs > 0) return;
  if (MGOPT__EV_IS_SEQ(t)) {
    mgopt_tensor **items = (mgopt_tensor **)t->data;
    int64_t i;
    for (i = 0; i < h->nseq; i++) mgopt__ev_unref(p, items[i]); /* items are never sequences */
  }
  mgopt__heap_free(&p->alloc, h, h->size);
}

MGOPT__PRIVATE mgopt_tensor *mgopt__ev_seq_new(mgopt_program *p, int64_t n, int32_t elem_dtype) {
  mgopt_tensor *t;
  if (n < 0 || n > ((int64_t)1 << 24)) return NULL;
  t = mgopt__ev_tensor_alloc(p, MGOPT_DT_UINT64, 1, &n, 1); /* 8 bytes a slot: room for a pointer */
  if (!t) return NULL;
  t->dtype = (uint8_t)MGOPT_DT_UNKNOWN;
  t->ext_location = mgopt__ev_seq_mark;
  MGOPT__EV_HDR(t)->nseq = n;
  MGOPT__EV_HDR(t)->elem_dtype = elem_dtype;
  return t;
}

MGOPT__PRIVATE mgopt_tensor **mgopt__ev_seq_items(const mgopt_tensor *t, int64_t *n, int32_t *elem_dtype) {
  if (!t || !MGOPT__EV_IS_SEQ(t)) return NULL;
  if (n) *n = MGOPT__EV_HDR(t)->nseq;
  if (elem_dtype) *elem_dtype = MGOPT__EV_HDR(t)->elem_dtype;
  return (mgopt_tensor **)t->data;
}

MGOPT__PRIVATE mgopt_tensor *mgopt__ev_retain(mgopt_tensor *t) {
  if (t) MGOPT__EV_HDR(t)->refs++;
  return t;
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
  int64_t steps, max_steps; /* ops run, and the most that may run (0: no limit) */
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

/* t, a program constant, with its data at its element's alignment (a
   constant read in place from a model's bytes may sit at any address; the
   kernels load whole elements): NULL when t is NULL or memory ran out. */
static mgopt_tensor *mgopt__ev_aligned_const(mgopt__ev *E, mgopt_tensor *t) {
  if (t && t->borrowed && !mgopt_tensor_data(E->p, t)) return NULL;
  return t;
}

static mgopt_tensor *mgopt__ev_lookup(void *env, const mgopt_value *v) {
  mgopt__ev *E = (mgopt__ev *)env;
  if (!v) return NULL;
  if (v->id < E->nids && E->val[v->id]) return E->val[v->id];
  return mgopt__ev_aligned_const(E, mgopt_value_const(v));
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
  if (MGOPT__EV_IS_SEQ(t)) { /* a sequence: a value of a non-tensor type, or of one not known at all */
    if (ty->kind == MGOPT_TYPE_OTHER || (ty->kind == MGOPT_TYPE_TENSOR && ty->dtype == MGOPT_DT_UNKNOWN && ty->rank < 0))
      return 1;
    snprintf(why, nwhy, "it is a sequence");
    return 0;
  }
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

/* Runs branch b of op and binds its results to op's outputs. */
static mgopt_status mgopt__ev_branch(mgopt__ev *E, const mgopt_op *op, const mgopt_block *b) {
  mgopt_tensor **res;
  uint8_t *counted;
  mgopt_status s;
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

static mgopt_status mgopt__ev_cond(mgopt__ev *E, const mgopt_op *op) {
  mgopt_tensor *pred = mgopt__ev_lookup(E, mgopt_op_operand(op, "pred"));
  int truth;
  if (op->nblocks != 2) return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "cond needs two blocks");
  if (!mgopt__ev_truth(E, pred, &truth))
    return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "the predicate is not one numeric element");
  return mgopt__ev_branch(E, op, op->blocks[truth ? 0 : 1]);
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

/* ---------------------------------------------------------------- ONNX control flow

   An opaque onnx::If runs the branch (then_branch, else_branch) its
   condition (in0, one element) selects. An opaque onnx::Loop runs its body
   (args: the iteration number, int64 scalar; the condition, bool scalar;
   the loop-carried values) while the iteration number is below the trip
   count in0 (when given) and the condition (in1 at first, when given; then
   the body's output 0) holds; the carried values (in2, ...) go round; the
   body's outputs after them (scan outputs) are stacked along a new axis 0
   over the iterations. A loop running no iteration cannot give a scan
   output (its shape is unknown): unsupported. */

static const mgopt_block *mgopt__ev_named_block(const mgopt_op *op, const char *name) {
  int32_t i;
  for (i = 0; i < op->nblocks; i++)
    if (op->blocks[i]->name && strcmp(op->blocks[i]->name, name) == 0) return op->blocks[i];
  return NULL;
}

static mgopt_status mgopt__ev_onnx_if(mgopt__ev *E, const mgopt_op *op) {
  const mgopt_block *yes = mgopt__ev_named_block(op, "then_branch"), *no = mgopt__ev_named_block(op, "else_branch");
  mgopt_tensor *pred = mgopt__ev_lookup(E, mgopt_op_operand(op, "in0"));
  int truth;
  if (!yes || !no) return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "If needs then_branch and else_branch");
  if (!pred || pred->dtype != MGOPT_DT_BOOL || !mgopt__ev_truth(E, pred, &truth))
    return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "the condition is not one bool");
  return mgopt__ev_branch(E, op, truth ? yes : no);
}

/* A new evaluator scalar of dtype dt holding v (int64 or bool). */
static mgopt_tensor *mgopt__ev_scalar(mgopt__ev *E, mgopt_dtype dt, int64_t v) {
  mgopt_tensor *t = mgopt__ev_tensor_alloc(E->p, dt, 0, NULL, 0);
  if (!t) return NULL;
  if (dt == MGOPT_DT_BOOL) *(uint8_t *)t->data = (uint8_t)(v != 0);
  else memcpy(t->data, &v, sizeof v);
  return t;
}

/* The tensors parts[0..n) (one shape and dtype) stacked along a new axis
   `axis` (of the result's rank), in reverse order when reverse is set. */
static mgopt_status mgopt__ev_stack(mgopt__ev *E, const mgopt_op *op, mgopt_tensor *const *parts, int64_t n,
                                    int32_t axis, int reverse, mgopt_tensor **out) {
  int64_t shape[MGOPT_MAX_RANK], i, total, outer = 1, o;
  const mgopt_tensor *a = parts[0];
  mgopt_tensor *t;
  size_t inner;
  int32_t r;
  *out = NULL;
  if (a->rank + 1 > MGOPT_MAX_RANK || a->dtype == MGOPT_DT_STRING || MGOPT__EV_IS_SEQ(a) ||
      mgopt_dtype_bits((mgopt_dtype)a->dtype) % 8 != 0 || axis < 0 || axis > a->rank)
    return mgopt__ev_fail(E, op, MGOPT_ERR_UNSUPPORTED, "a scan output of this dtype, rank or axis is not stacked");
  for (i = 1; i < n; i++) {
    const mgopt_tensor *b = parts[i];
    if (b->dtype != a->dtype || b->rank != a->rank || (a->rank && memcmp(b->shape, a->shape, sizeof(int64_t) * (size_t)a->rank)))
      return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "the iterations give scan outputs of different shapes");
  }
  if (!mgopt__mul_i64(a->numel, n, &total) || (E->o && E->o->max_elements > 0 && total > E->o->max_elements))
    return mgopt__ev_fail(E, op, MGOPT_ERR_LIMIT, "a scan output of more elements than the limit");
  for (r = 0; r < a->rank + 1; r++) shape[r] = r < axis ? a->shape[r] : r == axis ? n : a->shape[r - 1];
  for (r = 0; r < axis; r++) outer *= a->shape[r];
  if (!(t = mgopt__ev_tensor_alloc(E->p, (mgopt_dtype)a->dtype, a->rank + 1, shape, 0)))
    return mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
  inner = outer > 0 ? a->nbytes / (size_t)outer : 0;
  for (o = 0; inner && o < outer; o++)
    for (i = 0; i < n; i++)
      memcpy((uint8_t *)t->data + ((size_t)o * (size_t)n + (size_t)i) * inner,
             (const uint8_t *)parts[reverse ? n - 1 - i : i]->data + (size_t)o * inner, inner);
  *out = t;
  return MGOPT_OK;
}

static mgopt_status mgopt__ev_onnx_loop(mgopt__ev *E, const mgopt_op *op) {
  const mgopt_block *b = mgopt__ev_named_block(op, "body");
  mgopt_tensor *mt = mgopt__ev_lookup(E, mgopt_op_operand(op, "in0")), *ct = mgopt__ev_lookup(E, mgopt_op_operand(op, "in1"));
  mgopt_tensor **cur = NULL, **next = NULL, **scans = NULL;
  uint8_t *ccur = NULL, *cnext = NULL;
  int64_t trip = -1, it = 0, nscan_cap = 0, nfilled = 0, i, j;
  int32_t n, k, nargs;
  int truth = 1;
  mgopt_status s = MGOPT_OK;
  char slot[24];
  if (!b || b->nargs < 2 || b->nouts < 1) return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "Loop needs a body of 2 arguments or more");
  n = b->nargs - 2;
  k = b->nouts - 1 - n;
  nargs = b->nargs;
  if (k < 0 || op->nouts != n + k)
    return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "Loop's body and outputs disagree with its %d carried values", (int)n);
  if (mgopt_op_operand(op, "in0")) {
    if (!mt || MGOPT__EV_IS_SEQ(mt) || mt->numel != 1 || (mt->dtype != MGOPT_DT_INT64 && mt->dtype != MGOPT_DT_INT32))
      return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "the trip count is not one integer");
    trip = (int64_t)mgopt_tensor_get_f64(mt, 0);
    if (mt->dtype == MGOPT_DT_INT64) memcpy(&trip, mt->data, sizeof trip);
    if (trip < 0) trip = 0;
  }
  if (mgopt_op_operand(op, "in1") && (!ct || ct->dtype != MGOPT_DT_BOOL || !mgopt__ev_truth(E, ct, &truth)))
    return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "the loop condition is not one bool");
  if (!mgopt__ev_arrays(E, nargs, &cur, &ccur) || !mgopt__ev_arrays(E, b->nouts, &next, &cnext)) {
    if (cur) mgopt__ev_arrays_free(E, nargs, cur);
    return mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
  }
  for (i = 0; i < n && s == MGOPT_OK; i++) {
    const mgopt_value *v;
    snprintf(slot, sizeof slot, "in%d", (int)(i + 2));
    v = mgopt_op_operand(op, slot);
    cur[i + 2] = mgopt__ev_lookup(E, v);
    if (!cur[i + 2]) s = mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "carried value %d has no value", (int)i);
    else if (v->id < E->nids && E->counted[v->id] && E->val[v->id] == cur[i + 2]) {
      MGOPT__EV_HDR(cur[i + 2])->refs++;
      ccur[i + 2] = 1;
    }
  }
  while (s == MGOPT_OK && truth && (trip < 0 || it < trip)) {
    if (it >= E->max_iters) {
      s = mgopt__ev_fail(E, op, MGOPT_ERR_LIMIT, "more than %lld iterations", (long long)E->max_iters);
      break;
    }
    cur[0] = mgopt__ev_scalar(E, MGOPT_DT_INT64, it);
    cur[1] = mgopt__ev_scalar(E, MGOPT_DT_BOOL, 1);
    ccur[0] = ccur[1] = 1;
    if (!cur[0] || !cur[1]) s = mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
    if (s == MGOPT_OK) s = mgopt__ev_enter(E, op, b, cur, ccur, nargs);
    if (s == MGOPT_OK) s = mgopt__ev_block(E, b);
    if (s == MGOPT_OK) s = mgopt__ev_take(E, op, b, next, cnext);
    mgopt__ev_unref(E->p, cur[0]);
    mgopt__ev_unref(E->p, cur[1]);
    cur[0] = cur[1] = NULL;
    ccur[0] = ccur[1] = 0;
    if (s != MGOPT_OK) break;
    it++;
    if (next[0]->dtype != MGOPT_DT_BOOL || !mgopt__ev_truth(E, next[0], &truth))
      s = mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "the loop condition is not one bool");
    if (cnext[0]) mgopt__ev_unref(E->p, next[0]);
    for (i = 0; i < n; i++) {
      if (ccur[i + 2]) mgopt__ev_unref(E->p, cur[i + 2]);
      cur[i + 2] = next[i + 1];
      ccur[i + 2] = cnext[i + 1];
    }
    if (k > 0 && s == MGOPT_OK) {
      void *arr = scans;
      if (!mgopt__grow(&E->p->alloc, &arr, &nscan_cap, it * k, sizeof *scans))
        s = mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
      else
        scans = (mgopt_tensor **)arr;
    }
    for (j = 0; j < k; j++) { /* each scan output, a reference of its own */
      mgopt_tensor *t = next[1 + n + j];
      if (s == MGOPT_OK && MGOPT__EV_IS_SEQ(t)) s = mgopt__ev_fail(E, op, MGOPT_ERR_UNSUPPORTED, "a scan output is a sequence");
      if (s == MGOPT_OK && !cnext[1 + n + j] && !(t = mgopt__ev_copy(E->p, t)))
        s = mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
      if (s == MGOPT_OK) scans[nfilled++] = t;
      else if (cnext[1 + n + j]) mgopt__ev_unref(E->p, next[1 + n + j]);
    }
  }
  if (s == MGOPT_OK && k > 0 && it == 0)
    s = mgopt__ev_fail(E, op, MGOPT_ERR_UNSUPPORTED, "a loop of no iteration gives scan outputs of unknown shape");
  if (s == MGOPT_OK) {
    mgopt_tensor **res = NULL;
    uint8_t *counted = NULL;
    if (!mgopt__ev_arrays(E, op->nouts, &res, &counted)) s = mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
    for (i = 0; s == MGOPT_OK && i < n; i++) {
      res[i] = cur[i + 2];
      counted[i] = ccur[i + 2];
      ccur[i + 2] = 0; /* handed over */
    }
    for (j = 0; s == MGOPT_OK && j < k; j++) {
      mgopt_tensor **parts = (mgopt_tensor **)mgopt__heap_realloc(&E->p->alloc, NULL, 0, sizeof(void *) * (size_t)it);
      if (!parts) s = mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
      for (i = 0; parts && i < it; i++) parts[i] = scans[i * k + j];
      if (parts) {
        s = mgopt__ev_stack(E, op, parts, it, 0, 0, &res[n + j]);
        mgopt__heap_free(&E->p->alloc, parts, sizeof(void *) * (size_t)it);
      }
      counted[n + j] = 1;
    }
    if (s == MGOPT_OK) s = mgopt__ev_give(E, op, res, counted, op->nouts);
    else
      for (i = 0; res && i < op->nouts; i++)
        if (counted[i] && res[i]) mgopt__ev_unref(E->p, res[i]);
    if (res) mgopt__ev_arrays_free(E, op->nouts, res);
  }
  for (i = 2; i < nargs; i++)
    if (ccur[i] && cur[i]) mgopt__ev_unref(E->p, cur[i]);
  for (i = 0; i < nfilled; i++) mgopt__ev_unref(E->p, scans[i]);
  if (scans) mgopt__heap_free(&E->p->alloc, scans, (size_t)nscan_cap * sizeof *scans);
  mgopt__ev_arrays_free(E, nargs, cur);
  mgopt__ev_arrays_free(E, b->nouts, next);
  return s;
}

/* Attribute `name` of op as ints: entry i, or dflt when absent or short. */
static int64_t mgopt__ev_attr_at(mgopt__ev *E, const mgopt_op *op, const char *name, int64_t i, int64_t dflt) {
  const int64_t *v = NULL;
  int64_t n = mgopt_op_get_ints(E->p, op, name, &v);
  return v && i < n ? v[i] : dflt;
}

/* Scan (opset 9 on): inputs in0.. are the N initial states then the M scan
   inputs (num_scan_inputs); iteration t gives the body the states and the
   slice t of each scan input along its axis (scan_input_axes, default 0;
   from the end when its scan_input_directions is 1); the body gives the
   next states and K scan outputs, stacked over the iterations along
   scan_output_axes (reversed when scan_output_directions is 1). */
static mgopt_status mgopt__ev_onnx_scan(mgopt__ev *E, const mgopt_op *op) {
  const mgopt_block *b = mgopt__ev_named_block(op, "body");
  int64_t m = mgopt_op_get_int(op, "num_scan_inputs", -1), len = -1, t, i, j, nfilled = 0;
  int32_t n, k, nargs, ax[64];
  mgopt_tensor **cur = NULL, **next = NULL, **scans = NULL, *ins[64];
  uint8_t *ccur = NULL, *cnext = NULL;
  mgopt_status s = MGOPT_OK;
  char slot[24];
  if (!b || m < 1 || m > 64 || m > b->nargs) return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "Scan needs a body and num_scan_inputs");
  nargs = b->nargs;
  n = nargs - (int32_t)m;
  k = b->nouts - n;
  if (k < 0 || op->nouts != n + k) return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "Scan's body and outputs disagree");
  for (j = 0; j < m; j++) {
    int64_t a;
    snprintf(slot, sizeof slot, "in%d", (int)(n + j));
    ins[j] = mgopt__ev_lookup(E, mgopt_op_operand(op, slot));
    if (!ins[j] || MGOPT__EV_IS_SEQ(ins[j]) || ins[j]->rank < 1 || ins[j]->dtype == MGOPT_DT_STRING ||
        mgopt_dtype_bits((mgopt_dtype)ins[j]->dtype) % 8 != 0)
      return mgopt__ev_fail(E, op, MGOPT_ERR_UNSUPPORTED, "scan input %d is not a tensor of whole bytes", (int)j);
    a = mgopt__ev_attr_at(E, op, "scan_input_axes", j, 0);
    if (a < 0) a += ins[j]->rank;
    if (a < 0 || a >= ins[j]->rank) return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "scan input axis out of range");
    ax[j] = (int32_t)a;
    if (len >= 0 && ins[j]->shape[a] != len) return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "scan inputs of different lengths");
    len = ins[j]->shape[a];
  }
  if (len > E->max_iters) return mgopt__ev_fail(E, op, MGOPT_ERR_LIMIT, "more than %lld iterations", (long long)E->max_iters);
  if (k > 0 && len == 0)
    return mgopt__ev_fail(E, op, MGOPT_ERR_UNSUPPORTED, "a scan of no iteration gives scan outputs of unknown shape");
  if (!mgopt__ev_arrays(E, nargs, &cur, &ccur) || !mgopt__ev_arrays(E, b->nouts, &next, &cnext) ||
      (k > 0 && !(scans = (mgopt_tensor **)mgopt__heap_realloc(&E->p->alloc, NULL, 0, sizeof(void *) * (size_t)(len * k))))) {
    if (cur) mgopt__ev_arrays_free(E, nargs, cur);
    if (next) mgopt__ev_arrays_free(E, b->nouts, next);
    return mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
  }
  for (i = 0; i < n && s == MGOPT_OK; i++) {
    const mgopt_value *v;
    snprintf(slot, sizeof slot, "in%d", (int)i);
    v = mgopt_op_operand(op, slot);
    cur[i] = mgopt__ev_lookup(E, v);
    if (!cur[i]) s = mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "state %d has no value", (int)i);
    else if (v->id < E->nids && E->counted[v->id] && E->val[v->id] == cur[i]) {
      MGOPT__EV_HDR(cur[i])->refs++;
      ccur[i] = 1;
    }
  }
  for (t = 0; t < len && s == MGOPT_OK; t++) {
    for (j = 0; j < m && s == MGOPT_OK; j++) { /* slice t (or len-1-t) of scan input j along its axis */
      const mgopt_tensor *x = ins[j];
      int64_t shape[MGOPT_MAX_RANK], outer = 1, o, idx = mgopt__ev_attr_at(E, op, "scan_input_directions", j, 0) ? len - 1 - t : t;
      int32_t r, rk = 0;
      size_t inner;
      mgopt_tensor *sl;
      for (r = 0; r < x->rank; r++)
        if (r != ax[j]) shape[rk++] = x->shape[r];
      for (r = 0; r < ax[j]; r++) outer *= x->shape[r];
      sl = mgopt__ev_tensor_alloc(E->p, (mgopt_dtype)x->dtype, rk, shape, 0);
      if (!sl) {
        s = mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
        break;
      }
      inner = outer > 0 && len > 0 ? x->nbytes / (size_t)outer / (size_t)len : 0;
      for (o = 0; inner && o < outer; o++)
        memcpy((uint8_t *)sl->data + (size_t)o * inner, (const uint8_t *)x->data + ((size_t)o * (size_t)len + (size_t)idx) * inner, inner);
      cur[n + j] = sl;
      ccur[n + j] = 1;
    }
    if (s == MGOPT_OK) s = mgopt__ev_enter(E, op, b, cur, ccur, nargs);
    if (s == MGOPT_OK) s = mgopt__ev_block(E, b);
    if (s == MGOPT_OK) s = mgopt__ev_take(E, op, b, next, cnext);
    for (j = 0; j < m; j++) {
      if (cur[n + j]) mgopt__ev_unref(E->p, cur[n + j]);
      cur[n + j] = NULL;
      ccur[n + j] = 0;
    }
    if (s != MGOPT_OK) break;
    for (i = 0; i < n; i++) {
      if (ccur[i]) mgopt__ev_unref(E->p, cur[i]);
      cur[i] = next[i];
      ccur[i] = cnext[i];
    }
    for (j = 0; j < k; j++) {
      mgopt_tensor *x = next[n + j];
      if (s == MGOPT_OK && MGOPT__EV_IS_SEQ(x)) s = mgopt__ev_fail(E, op, MGOPT_ERR_UNSUPPORTED, "a scan output is a sequence");
      if (s == MGOPT_OK && !cnext[n + j] && !(x = mgopt__ev_copy(E->p, x))) s = mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
      if (s == MGOPT_OK) scans[nfilled++] = x;
      else if (cnext[n + j]) mgopt__ev_unref(E->p, next[n + j]);
    }
  }
  if (s == MGOPT_OK) {
    mgopt_tensor **res = NULL, **parts = NULL;
    uint8_t *counted = NULL;
    if (!mgopt__ev_arrays(E, op->nouts, &res, &counted) ||
        (k > 0 && !(parts = (mgopt_tensor **)mgopt__heap_realloc(&E->p->alloc, NULL, 0, sizeof(void *) * (size_t)len))))
      s = mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
    for (i = 0; s == MGOPT_OK && i < n; i++) {
      res[i] = cur[i];
      counted[i] = ccur[i];
      ccur[i] = 0; /* handed over */
    }
    for (j = 0; s == MGOPT_OK && j < k; j++) {
      int64_t a = mgopt__ev_attr_at(E, op, "scan_output_axes", j, 0);
      for (t = 0; t < len; t++) parts[t] = scans[t * k + j];
      if (a < 0) a += scans[j]->rank + 1;
      s = mgopt__ev_stack(E, op, parts, len, (int32_t)a, mgopt__ev_attr_at(E, op, "scan_output_directions", j, 0) != 0,
                          &res[n + j]);
      counted[n + j] = 1;
    }
    if (s == MGOPT_OK) s = mgopt__ev_give(E, op, res, counted, op->nouts);
    else
      for (i = 0; res && i < op->nouts; i++)
        if (counted[i] && res[i]) mgopt__ev_unref(E->p, res[i]);
    if (parts) mgopt__heap_free(&E->p->alloc, parts, sizeof(void *) * (size_t)len);
    if (res) mgopt__ev_arrays_free(E, op->nouts, res);
  }
  for (i = 0; i < n; i++)
    if (ccur[i] && cur[i]) mgopt__ev_unref(E->p, cur[i]);
  for (i = 0; i < nfilled; i++) mgopt__ev_unref(E->p, scans[i]);
  if (scans) mgopt__heap_free(&E->p->alloc, scans, sizeof(void *) * (size_t)(len * k));
  mgopt__ev_arrays_free(E, nargs, cur);
  mgopt__ev_arrays_free(E, b->nouts, next);
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
  if (op->nblocks != 0 || op->nouts < 1 || (op->nouts != 1 && !mgopt__k_multi_output(op->kind)))
    return mgopt__ev_fail(E, op, MGOPT_ERR_VERIFY, "unexpected outputs or blocks for %s", op->type);
  for (s = 0; s < op->nslots; s++)
    for (i = 0; i < op->slots[s].n; i++) {
      mgopt_tensor *t = mgopt__ev_lookup(E, op->slots[s].uses[i].value);
      if (t && MGOPT__EV_IS_SEQ(t))
        return mgopt__ev_fail(E, op, MGOPT_ERR_UNSUPPORTED, "operand '%s' is a sequence", op->slots[s].name);
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
    if (t && !mgopt__ev_aligned_const(E, t)) return mgopt__ev_fail(E, op, MGOPT_ERR_NOMEM, "out of memory");
    if (!t || !mgopt__ev_tensor_ok(t)) return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "const without a valid tensor");
    if (!mgopt__ev_fits(t, &op->outs[0]->type, why, sizeof why))
      return mgopt__ev_fail(E, op, MGOPT_ERR_CORRUPT, "the constant does not fit its declared type: %s", why);
    mgopt__ev_bind(E, op->outs[0], t, 0);
    return MGOPT_OK;
  }
  if (E->max_steps && ++E->steps > E->max_steps)
    return mgopt__ev_fail(E, op, MGOPT_ERR_LIMIT, "more than %lld ops run", (long long)E->max_steps);
  if (op->kind == MGOPT_OP_cond) return mgopt__ev_cond(E, op);
  if (op->kind == MGOPT_OP_while_loop) return mgopt__ev_loop(E, op);
  if (op->kind == MGOPT_OP_OPAQUE && op->type && strcmp(op->type, "onnx::If") == 0) return mgopt__ev_onnx_if(E, op);
  if (op->kind == MGOPT_OP_OPAQUE && op->type && strcmp(op->type, "onnx::Loop") == 0) return mgopt__ev_onnx_loop(E, op);
  if (op->kind == MGOPT_OP_OPAQUE && op->type && strcmp(op->type, "onnx::Scan") == 0 && mgopt__onnx_export_opset(E->p, 0) >= 9)
    return mgopt__ev_onnx_scan(E, op);
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

/* ---------------------------------------------------------------- in place */

/* 1 when block b lies inside op x (in one of its blocks, at any depth). */
static int mgopt__ev_inside(const mgopt_block *b, const mgopt_op *x) {
  int depth = 0;
  while (b && b->parent_op && depth++ < 4096) {
    if (b->parent_op == x) return 1;
    b = b->parent_op->parent;
  }
  return 0;
}

typedef struct mgopt__evc {
  mgopt_program *p;
  mgopt__map state;  /* op (key) -> 1 its needs pushed, 2 in order */
  const mgopt_op **order, **stack;
  int32_t n, max, sp, max_sp;
  mgopt_status st;   /* MGOPT_ERR_UNSUPPORTED: a value read is not computable in place */
} mgopt__evc;

/* Pushes the producer of value v, unless v is a constant or its producer is in order. */
static void mgopt__evc_need(mgopt__evc *C, const mgopt_value *v) {
  const mgopt__map_slot *sl;
  if (C->st || !v || mgopt_value_const(v)) return;
  if (!v->def || v->def->kind == MGOPT_OP_const) { /* an argument (or a const without a tensor) */
    C->st = MGOPT_ERR_UNSUPPORTED;
    return;
  }
  sl = mgopt__map_find(&C->state, mgopt__map_ptr_key(v->def));
  if (sl && sl->v.i == 2) return;
  if (C->sp >= C->max_sp) C->st = MGOPT_ERR_LIMIT;
  else C->stack[C->sp++] = v->def;
}

/* The values the ops of block b (nested ones too) read from outside op x. */
static void mgopt__evc_captured(mgopt__evc *C, const mgopt_block *b, const mgopt_op *x, int depth) {
  const mgopt_op *y;
  int32_t s, i;
  if (depth > MGOPT__EV_MAX_DEPTH) {
    C->st = MGOPT_ERR_LIMIT;
    return;
  }
  for (y = b->first; y && !C->st; y = y->next) {
    for (s = 0; s < y->nslots; s++)
      for (i = 0; i < y->slots[s].n; i++) {
        const mgopt_value *v = y->slots[s].uses[i].value;
        if (v && !mgopt__ev_inside(mgopt__ev_home(v), x)) mgopt__evc_need(C, v);
      }
    for (i = 0; i < y->nblocks; i++) mgopt__evc_captured(C, y->blocks[i], x, depth + 1);
  }
  for (i = 0; i < b->nouts && !C->st; i++) {
    const mgopt_value *v = b->outs[i] ? b->outs[i]->value : NULL;
    if (v && !mgopt__ev_inside(mgopt__ev_home(v), x)) mgopt__evc_need(C, v);
  }
}

/* The ops to run before op (its producers, theirs, ...) then op, each after
   what it reads (a depth-first walk: an op goes to order when it is met
   again after its needs were pushed above it). */
static mgopt_status mgopt__evc_order(mgopt__evc *C, const mgopt_op *op) {
  int32_t i, s;
  C->stack[C->sp++] = op;
  while (C->sp > 0 && !C->st) {
    const mgopt_op *x = C->stack[C->sp - 1];
    int added = 0;
    mgopt__map_slot *sl = mgopt__map_get(&C->state, mgopt__map_ptr_key(x), &added);
    if (!sl) {
      C->st = MGOPT_ERR_NOMEM;
      break;
    }
    if (added) sl->v.i = 0;
    if (sl->v.i == 2) { /* met again after it went in order */
      C->sp--;
      continue;
    }
    if (sl->v.i == 1) { /* its needs are in order: x goes */
      C->sp--;
      sl->v.i = 2;
      if (C->n >= C->max) C->st = MGOPT_ERR_LIMIT;
      else C->order[C->n++] = x;
      continue;
    }
    sl->v.i = 1;
    for (s = 0; s < x->nslots; s++)
      for (i = 0; i < x->slots[s].n; i++) mgopt__evc_need(C, x->slots[s].uses[i].value);
    for (i = 0; i < x->nblocks; i++) mgopt__evc_captured(C, x->blocks[i], x, 0);
  }
  return C->st;
}

MGOPT__PRIVATE mgopt_status mgopt__eval_in_place(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out,
                                                 const mgopt_eval_options *o, int32_t max_ops, mgopt_diag *d) {
  mgopt__ev E;
  mgopt__evc C;
  size_t bytes, obytes;
  int32_t i;
  uint32_t id;
  mgopt_status s = MGOPT_OK;
  mgopt_diag_clear(d);
  if (!p || !op || (op->nouts > 0 && !out) || max_ops < 1) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "invalid arguments");
  for (i = 0; i < op->nouts; i++) out[i] = NULL;
  memset(&C, 0, sizeof C);
  C.p = p;
  C.max = max_ops;
  C.max_sp = max_ops * 4;
  obytes = sizeof(mgopt_op *) * (size_t)max_ops * 5;
  C.order = (const mgopt_op **)mgopt__heap_realloc(&p->alloc, NULL, 0, obytes);
  if (!C.order) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  C.stack = C.order + max_ops;
  mgopt__map_init(&C.state, &p->alloc);
  s = mgopt__evc_order(&C, op);
  mgopt__map_free(&C.state);
  if (s != MGOPT_OK) {
    mgopt__heap_free(&p->alloc, C.order, obytes);
    return mgopt_diag_set(d, s, s == MGOPT_ERR_NOMEM       ? "out of memory"
                                : s == MGOPT_ERR_LIMIT     ? "more than %d ops to evaluate first"
                                                           : "it reads a value known only at run time",
                          (int)max_ops);
  }
  memset(&E, 0, sizeof E);
  E.p = p;
  E.o = o;
  E.d = d;
  E.max_iters = o && o->max_loop_iterations > 0 ? o->max_loop_iterations : (int64_t)1 << 24;
  E.max_steps = (int64_t)1 << 16;
  E.nids = p->next_id;
  bytes = (size_t)E.nids * (sizeof(mgopt_tensor *) + sizeof(int32_t) + 1);
  E.val = (mgopt_tensor **)mgopt__heap_realloc(&p->alloc, NULL, 0, bytes ? bytes : 1);
  if (!E.val) {
    mgopt__heap_free(&p->alloc, C.order, obytes);
    return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  }
  memset(E.val, 0, bytes);
  E.left = (int32_t *)(void *)(E.val + E.nids);
  E.counted = (uint8_t *)(E.left + E.nids);
  /* the ops run in order; their results stay bound (no read is counted
     down outside the blocks they run) until all are done */
  for (i = 0; i < C.n && s == MGOPT_OK; i++) s = mgopt__ev_op(&E, C.order[i]);
  for (i = 0; s == MGOPT_OK && i < op->nouts; i++) {
    const mgopt_value *v = op->outs[i];
    mgopt_tensor *t = v->id < E.nids ? E.val[v->id] : NULL;
    if (!t) { /* an output nothing reads is released as soon as it is made */
      if (v->nuses > 0) s = mgopt_diag_set(d, MGOPT_ERR_UNSUPPORTED, "output %d has no value", (int)i);
      continue;
    }
    if (MGOPT__EV_IS_SEQ(t)) continue;
    out[i] = E.counted[v->id] ? mgopt__ev_retain(t) : mgopt__ev_copy(p, t);
    if (!out[i]) s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  }
  if (s != MGOPT_OK)
    for (i = 0; i < op->nouts; i++) {
      mgopt__ev_unref(p, out[i]);
      out[i] = NULL;
    }
  for (id = 0; id < E.nids; id++)
    if (E.counted[id]) mgopt__ev_unref(p, E.val[id]);
  mgopt__heap_free(&p->alloc, E.val, bytes ? bytes : 1);
  mgopt__heap_free(&p->alloc, C.order, obytes);
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
    if (MGOPT__EV_IS_SEQ(res[i]))
      s = mgopt_diag_set(d, MGOPT_ERR_UNSUPPORTED, "output %d is a sequence, not a tensor", (int)i);
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
