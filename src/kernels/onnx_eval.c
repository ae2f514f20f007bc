/* src/kernels/onnx_eval.c — mgopt_onnx_eval_op, mgopt_eval's callback for opaque ONNX ops: the ONNX kernel table, then late mapping through the importer's rows.

   An op `onnx::X` (default domain; inputs in slots in0, in1, ...; its ONNX
   attributes kept) is evaluated in two steps:
   1. the row of the ONNX kernel table (onnx_ops.c) for X at the program's
      opset, for ops without a MIL op (losses, LogSoftmax, Trilu, ...); a
      kernel may decline attributes or operands it does not handle;
   2. late mapping: a node stays opaque at import when a parameter the
      mapping needs is not a constant (Reshape's shape, Slice's starts, a
      CumSum axis) or when a type is not known. At run time every operand is
      known, so the node is built again in a scratch program, every operand a
      constant borrowing the run-time tensor, and the importer's own mapping
      row for X runs on it (mgopt_onnx_reimport_op). The canonical ops it
      builds are evaluated with the canonical kernels (mgopt_eval) and their
      results become the op's outputs. Any op a mapping row covers is
      covered, with no table of its own here.
   An op neither step evaluates is MGOPT_ERR_UNSUPPORTED, "cannot evaluate
   onnx::X: why". The numeric contract is the kernel's: onnx_ops.c,
   onnx_nn.c, onnx_rnn.c and onnx_quant.c (the integer and quantized ops)
   for the table, the canonical kernels' for a late mapping. */
#include "onnx_ops.h"
#include "../onnx/convert_internal.h" /* the mapping rows and the program's opset */

#define MGOPT__OX_MAX_INPUTS 4096

/* The row of the ONNX kernel table for name at opset, NULL when none. */
static const mgopt__ox_row *mgopt__ox_find(const char *name, int64_t opset) {
  int32_t n, i;
  const mgopt__ox_row *rows = mgopt__ox_rows(&n);
  for (i = 0; i < n; i++)
    if (strcmp(rows[i].onnx, name) == 0 && mgopt__onnx_in_range(rows[i].since, rows[i].until, opset)) return &rows[i];
  return NULL;
}

/* 1 when an importer mapping row holds name at opset. */
static int mgopt__ox_has_mapping(const char *name, int64_t opset) {
  const mgopt__onnx_map *rows;
  int32_t f, i, n;
  for (f = 0; (rows = mgopt__onnx_family(f, &n)) != NULL; f++)
    for (i = 0; i < n; i++)
      if (rows[i].to_ir && strcmp(rows[i].onnx, name) == 0 && mgopt__onnx_in_range(rows[i].since, rows[i].until, opset))
        return 1;
  return 0;
}

/* The ONNX input index of an operand slot named "in<k>", -1 otherwise. */
static int32_t mgopt__ox_slot_input(const mgopt_slot *s) {
  const char *q = s->name;
  int32_t k = 0;
  if (!q || q[0] != 'i' || q[1] != 'n' || !q[2] || s->is_list) return -1;
  for (q += 2; *q; q++) {
    if (*q < '0' || *q > '9' || k >= MGOPT__OX_MAX_INPUTS) return -1;
    k = k * 10 + (*q - '0');
  }
  return k < MGOPT__OX_MAX_INPUTS ? k : -1;
}

/* ---------------------------------------------------------------- late mapping */

/* Builds op again in scratch program s: a const for each operand (borrowing
   its tensor; strings are copied), the opaque op, and a sink op reading its
   outputs. Returns the sink, NULL on OOM. */
static mgopt_op *mgopt__ox_rebuild(mgopt_program *s, const mgopt_op *op, mgopt_tensor *const *operands, mgopt_op **copy) {
  mgopt_function *f = mgopt_function_new(s, "main");
  mgopt_op *x, *sink;
  int32_t k, j, at = 0;
  if (!f) return NULL;
  x = mgopt_op_new(s, op->type, op->nouts, 0);
  sink = mgopt_op_new(s, "mgopt::outputs", 0, 0);
  if (!x || !sink) return NULL;
  for (k = 0; k < op->nslots; k++)
    for (j = 0; j < op->slots[k].n; j++) {
      const mgopt_tensor *t = operands[at++];
      mgopt_tensor *b = t->dtype == MGOPT_DT_STRING
                            ? mgopt_tensor_clone(s, t)
                            : mgopt_tensor_new_borrowed(s, (mgopt_dtype)t->dtype, t->rank, t->shape, t->data, t->nbytes);
      mgopt_value *v = b ? mgopt_build_const(s, f->body, NULL, op->slots[k].name, b) : NULL;
      if (!v || mgopt_op_set_operand(x, op->slots[k].name, v)) return NULL;
    }
  for (k = 0; k < op->nattrs; k++)
    if (mgopt_op_set_attr(x, &op->attrs[k])) return NULL;
  if (op->name && mgopt_op_set_name(x, op->name)) return NULL;
  for (k = 0; k < op->nouts; k++) {
    char slot[24];
    if (op->outs[k]->flags & MGOPT_VALUE_ABSENT) {
      x->outs[k]->flags |= MGOPT_VALUE_ABSENT;
      continue;
    }
    if (mgopt_value_set_name(x->outs[k], op->outs[k]->name ? op->outs[k]->name : "out")) return NULL;
    snprintf(slot, sizeof slot, "o%d", (int)k);
    if (mgopt_op_set_operand(sink, slot, x->outs[k])) return NULL;
  }
  mgopt_op_append(x, f->body);
  mgopt_op_append(sink, f->body);
  *copy = x;
  return mgopt_program_status(s) == MGOPT_OK ? sink : NULL;
}

/* Evaluates op through its mapping row: MGOPT__OX_OK (out set), MGOPT__OX_NO
   (the mapping declines: c->why), MGOPT__OX_ERR. */
static int mgopt__ox_late(mgopt__ox *c, mgopt_tensor *const *operands, int32_t noperands) {
  mgopt_program *s;
  mgopt_op *sink, *x = NULL;
  mgopt_value *outs[64];
  mgopt_tensor *res[64];
  int32_t k, n = 0;
  int r, st = MGOPT__OX_OK;
  mgopt_eval_options eo;
  mgopt_diag d2;
  (void)noperands;
  if (!mgopt__ox_has_mapping(c->name, c->opset)) return mgopt__ox_no(c, "no kernel and no mapping at opset %lld", (long long)c->opset);
  if (c->op->nouts > 64 || c->op->nblocks) return mgopt__ox_no(c, "the op has nested blocks or too many outputs");
  s = mgopt_program_create(&c->p->alloc);
  if (!s) return mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
  /* the mapping rows read the opset from the imported model (borrowed, never written) */
  s->onnx_meta = c->p->onnx_meta;
  sink = mgopt__ox_rebuild(s, c->op, operands, &x);
  if (!sink) {
    st = mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
    goto done;
  }
  r = mgopt_onnx_reimport_op(s, x);
  if (r < 0) {
    st = mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
    goto done;
  }
  if (r != 1) {
    st = mgopt__ox_no(c, "its mapping declines these operands and attributes");
    goto done;
  }
  /* the values the mapping made, in output order, become main's outputs */
  for (k = 0; k < sink->nslots; k++)
    if (sink->slots[k].n == 1) outs[n++] = sink->slots[k].uses[0].value;
  mgopt_op_erase(sink);
  for (k = 0; k < n; k++)
    if (mgopt_block_add_output(mgopt_program_function(s, "main")->body, outs[k])) {
      st = mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
      goto done;
    }
  memset(&eo, 0, sizeof eo);
  eo.max_elements = c->max_elements;
  if (mgopt_eval(s, "main", NULL, 0, res, n, &eo, &d2) != MGOPT_OK) {
    if (d2.status == MGOPT_ERR_UNSUPPORTED) st = mgopt__ox_no(c, "its mapping: %s", d2.msg);
    else st = mgopt__ox_fail(c, d2.status, "%s", d2.msg);
    goto done;
  }
  /* the results live on the same allocator as p's evaluator tensors */
  for (k = 0, n = 0; k < c->nout; k++)
    if (!(c->op->outs[k]->flags & MGOPT_VALUE_ABSENT)) c->out[k] = res[n++];
done:
  s->onnx_meta = NULL;
  mgopt_program_destroy(s);
  return st;
}

/* ---------------------------------------------------------------- sequences

   ONNX's sequence ops on the evaluator's run-time sequences (eval.c): a
   sequence holds tensors of one dtype (an empty one keeps the dtype it was
   made for). SequenceEmpty (attribute dtype, default float),
   SequenceConstruct (its inputs), SequenceInsert (a tensor at position,
   default the end), SequenceErase (at position, default the last),
   SequenceAt, SequenceLength (int64 scalar), ConcatFromSequence (axis,
   new_axis: the items joined along axis, or stacked along a new one; an
   empty sequence is an error, as in ONNX Runtime), SplitToSequence (split
   absent: pieces of 1 along axis, squeezed unless keepdims=0; a scalar: pieces
   of that size, the last one shorter; a 1-D tensor: the sizes). Positions
   may be negative (counted from the end); out of range is an error. Items
   are copies of the operands, shared by reference between sequences. */

static int mgopt__ox_is_seq_op(const char *name) {
  return strncmp(name, "Sequence", 8) == 0 || strcmp(name, "ConcatFromSequence") == 0 ||
         strcmp(name, "SplitToSequence") == 0;
}

/* A sequence of n NULL items for output 0. */
static int mgopt__ox_seq_out(mgopt__ox *c, int64_t n, int32_t elem_dtype, mgopt_tensor ***items) {
  if (!(c->out[0] = mgopt__ev_seq_new(c->p, n, elem_dtype))) return mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
  *items = mgopt__ev_seq_items(c->out[0], NULL, NULL);
  return MGOPT__OX_OK;
}

/* A copy of tensor t on the evaluator's heap (an item of a sequence). */
static mgopt_tensor *mgopt__ox_item(mgopt__ox *c, const mgopt_tensor *t) {
  mgopt_tensor *x;
  if (t->dtype == MGOPT_DT_STRING || mgopt_dtype_bits((mgopt_dtype)t->dtype) <= 0) return NULL;
  x = mgopt_eval_tensor_new(c->p, (mgopt_dtype)t->dtype, t->rank, t->shape);
  if (x && t->nbytes) memcpy(x->data, t->data, t->nbytes);
  return x;
}

/* Position operand i (absent: dflt) into [0, n] (or [0, n) unless insert). */
static int mgopt__ox_seq_pos(mgopt__ox *c, int32_t i, int64_t n, int64_t dflt, int insert, int64_t *pos) {
  const mgopt_tensor *t = mgopt__ox_in(c, i);
  int64_t q = dflt;
  if (t) {
    if (mgopt__ev_seq_items(t, NULL, NULL) || t->numel != 1 || (t->dtype != MGOPT_DT_INT64 && t->dtype != MGOPT_DT_INT32))
      return mgopt__ox_fail(c, MGOPT_ERR_CORRUPT, "the position is not one integer");
    q = mgopt__ox_geti(t, 0);
    if (q < 0) q += n;
  }
  if (q < 0 || q > n || (!insert && q == n))
    return mgopt__ox_fail(c, MGOPT_ERR_CORRUPT, "position %lld out of range for a sequence of %lld", (long long)q, (long long)n);
  *pos = q;
  return MGOPT__OX_OK;
}

static int mgopt__ox_seq_concat(mgopt__ox *c, mgopt_tensor *const *items, int64_t n) {
  int64_t axis = mgopt__ox_int(c, "axis", 0), new_axis = mgopt__ox_int(c, "new_axis", 0), shape[MGOPT_MAX_RANK];
  int64_t outer = 1, esz, off = 0, i, o;
  int32_t rank, a = 0, r; /* a: set by mgopt__ox_axis */
  const mgopt_tensor *f;
  uint8_t *dst;
  if (n < 1) return mgopt__ox_fail(c, MGOPT_ERR_CORRUPT, "ConcatFromSequence of an empty sequence");
  f = items[0];
  rank = f->rank + (new_axis ? 1 : 0);
  if (rank < 1 || rank > MGOPT_MAX_RANK || mgopt_dtype_bits((mgopt_dtype)f->dtype) % 8 != 0)
    return mgopt__ox_no(c, "items of rank %d or dtype %s", (int)f->rank, mgopt_dtype_name((mgopt_dtype)f->dtype));
  if (mgopt__ox_axis(c, axis, rank, &a) != MGOPT__OX_OK) return MGOPT__OX_ERR;
  esz = mgopt_dtype_bits((mgopt_dtype)f->dtype) / 8;
  /* the output's shape: items agree on every dim but the axis (new_axis: on all) */
  for (r = 0; r < rank; r++) shape[r] = new_axis ? (r < a ? f->shape[r] : r == a ? n : f->shape[r - 1]) : f->shape[r];
  if (!new_axis) shape[a] = 0;
  for (i = 0; i < n; i++) {
    const mgopt_tensor *t = items[i];
    if (t->dtype != f->dtype || t->rank != f->rank) return mgopt__ox_fail(c, MGOPT_ERR_CORRUPT, "items of different dtypes or ranks");
    for (r = 0; r < f->rank; r++)
      if ((new_axis || r != a) && t->shape[r] != f->shape[r])
        return mgopt__ox_fail(c, MGOPT_ERR_CORRUPT, "items of different shapes");
    if (!new_axis) shape[a] += t->shape[a];
  }
  if (mgopt__ox_out(c, 0, (mgopt_dtype)f->dtype, rank, shape) != MGOPT__OX_OK) return MGOPT__OX_ERR;
  for (r = 0; r < a; r++) outer *= shape[r];
  dst = (uint8_t *)c->out[0]->data;
  /* per outer index, each item's slab in turn */
  for (o = 0; outer > 0 && o < outer; o++)
    for (i = 0; i < n; i++) {
      int64_t slab = items[i]->numel / outer * esz;
      if (slab) memcpy(dst + off, (const uint8_t *)items[i]->data + o * slab, (size_t)slab);
      off += slab;
    }
  return MGOPT__OX_OK;
}

static int mgopt__ox_seq_split(mgopt__ox *c) {
  mgopt_tensor *x = mgopt__ox_need(c, 0), *sp = mgopt__ox_in(c, 1), **items;
  int64_t axis = mgopt__ox_int(c, "axis", 0), keep = mgopt__ox_int(c, "keepdims", 1), n = 0, len, i, outer = 1,
          inner = 1, esz, start = 0, o;
  int32_t a = 0, r; /* a: set by mgopt__ox_axis */
  int st = MGOPT__OX_OK;
  if (!x) return MGOPT__OX_ERR;
  if (mgopt__ev_seq_items(x, NULL, NULL) || x->rank < 1 || mgopt_dtype_bits((mgopt_dtype)x->dtype) % 8 != 0 ||
      x->dtype == MGOPT_DT_STRING)
    return mgopt__ox_no(c, "SplitToSequence of this input");
  if (mgopt__ox_axis(c, axis, x->rank, &a) != MGOPT__OX_OK) return MGOPT__OX_ERR;
  len = x->shape[a];
  if (sp && (mgopt__ev_seq_items(sp, NULL, NULL) || sp->rank > 1 || (sp->dtype != MGOPT_DT_INT64 && sp->dtype != MGOPT_DT_INT32)))
    return mgopt__ox_fail(c, MGOPT_ERR_CORRUPT, "split is not an integer scalar or 1-D tensor");
  if (!sp) n = len;
  else if (sp->rank == 0) {
    int64_t k = mgopt__ox_geti(sp, 0);
    if (k <= 0) return mgopt__ox_fail(c, MGOPT_ERR_CORRUPT, "split %lld", (long long)k);
    n = len / k + (len % k != 0);
  } else {
    int64_t sum = 0;
    n = sp->numel;
    for (i = 0; i < n; i++) {
      int64_t k = mgopt__ox_geti(sp, i);
      if (k < 0 || !mgopt__add_i64(sum, k, &sum)) return mgopt__ox_fail(c, MGOPT_ERR_CORRUPT, "a negative split");
    }
    if (sum != len) return mgopt__ox_fail(c, MGOPT_ERR_CORRUPT, "splits of %lld for a dim of %lld", (long long)sum, (long long)len);
  }
  if (n > ((int64_t)1 << 20)) return mgopt__ox_no(c, "too many pieces");
  for (r = 0; r < a; r++) outer *= x->shape[r];
  for (r = a + 1; r < x->rank; r++) inner *= x->shape[r];
  esz = mgopt_dtype_bits((mgopt_dtype)x->dtype) / 8;
  if (mgopt__ox_seq_out(c, n, x->dtype, &items) != MGOPT__OX_OK) return MGOPT__OX_ERR;
  for (i = 0; i < n && st == MGOPT__OX_OK; i++) {
    int64_t k = !sp ? 1 : sp->rank == 0 ? mgopt__ox_geti(sp, 0) : mgopt__ox_geti(sp, i), shape[MGOPT_MAX_RANK];
    int32_t rk = 0;
    if (start + k > len) k = len - start;
    for (r = 0; r < x->rank; r++) {
      if (r == a && !sp && !keep) continue;
      shape[rk++] = r == a ? k : x->shape[r];
    }
    if (c->max_elements > 0 && outer * k * inner > c->max_elements) st = mgopt__ox_fail(c, MGOPT_ERR_LIMIT, "a piece above the limit");
    else if (!(items[i] = mgopt_eval_tensor_new(c->p, (mgopt_dtype)x->dtype, rk, shape)))
      st = mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
    for (o = 0; st == MGOPT__OX_OK && o < outer; o++)
      if (k > 0 && inner > 0)
        memcpy((uint8_t *)items[i]->data + o * k * inner * esz,
               (const uint8_t *)x->data + (o * len + start) * inner * esz, (size_t)(k * inner * esz));
    start += k;
  }
  return st;
}

static int mgopt__ox_seq(mgopt__ox *c) {
  mgopt_tensor *s0 = c->nin > 0 ? c->in[0] : NULL, **items = NULL, **from = NULL;
  int64_t n = 0, i, pos;
  int32_t edt = MGOPT_DT_UNKNOWN;
  if (strcmp(c->name, "SequenceEmpty") == 0) {
    mgopt_dtype dt = mgopt_onnx_dtype((int32_t)mgopt__ox_int(c, "dtype", 1));
    return mgopt__ox_seq_out(c, 0, dt, &items);
  }
  if (strcmp(c->name, "SplitToSequence") == 0) return mgopt__ox_seq_split(c);
  if (strcmp(c->name, "SequenceConstruct") == 0) {
    if (c->nin < 1) return mgopt__ox_fail(c, MGOPT_ERR_CORRUPT, "SequenceConstruct of no input");
    for (i = 0; i < c->nin; i++)
      if (!c->in[i] || mgopt__ev_seq_items(c->in[i], NULL, NULL) || c->in[i]->dtype != c->in[0]->dtype)
        return mgopt__ox_no(c, "inputs that are not tensors of one dtype");
    if (mgopt__ox_seq_out(c, c->nin, c->in[0]->dtype, &items) != MGOPT__OX_OK) return MGOPT__OX_ERR;
    for (i = 0; i < c->nin; i++)
      if (!(items[i] = mgopt__ox_item(c, c->in[i]))) return mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
    return MGOPT__OX_OK;
  }
  if (!s0 || !(from = mgopt__ev_seq_items(s0, &n, &edt))) return mgopt__ox_no(c, "input 0 is not a sequence");
  if (strcmp(c->name, "SequenceLength") == 0) {
    if (mgopt__ox_out(c, 0, MGOPT_DT_INT64, 0, NULL) != MGOPT__OX_OK) return MGOPT__OX_ERR;
    memcpy(c->out[0]->data, &n, sizeof n);
    return MGOPT__OX_OK;
  }
  if (strcmp(c->name, "SequenceAt") == 0) {
    if (mgopt__ox_seq_pos(c, 1, n, 0, 0, &pos) != MGOPT__OX_OK || !mgopt__ox_in(c, 1)) return MGOPT__OX_ERR;
    if (!(c->out[0] = mgopt__ox_item(c, from[pos]))) return mgopt__ox_fail(c, MGOPT_ERR_NOMEM, "out of memory");
    return MGOPT__OX_OK;
  }
  if (strcmp(c->name, "ConcatFromSequence") == 0) return mgopt__ox_seq_concat(c, from, n);
  if (strcmp(c->name, "SequenceInsert") == 0) {
    mgopt_tensor *t = mgopt__ox_need(c, 1), *x;
    if (!t) return MGOPT__OX_ERR;
    if (mgopt__ev_seq_items(t, NULL, NULL) || (edt != MGOPT_DT_UNKNOWN && t->dtype != edt))
      return mgopt__ox_fail(c, MGOPT_ERR_CORRUPT, "a tensor of %s into a sequence of %s", mgopt_dtype_name((mgopt_dtype)t->dtype),
                            mgopt_dtype_name((mgopt_dtype)edt));
    if (mgopt__ox_seq_pos(c, 2, n, n, 1, &pos) != MGOPT__OX_OK) return MGOPT__OX_ERR;
    if (!(x = mgopt__ox_item(c, t))) return mgopt__ox_no(c, "an item of dtype %s", mgopt_dtype_name((mgopt_dtype)t->dtype));
    if (mgopt__ox_seq_out(c, n + 1, t->dtype, &items) != MGOPT__OX_OK) {
      mgopt_eval_tensor_free(c->p, x);
      return MGOPT__OX_ERR;
    }
    for (i = 0; i < n; i++) items[i < pos ? i : i + 1] = mgopt__ev_retain(from[i]);
    items[pos] = x;
    return MGOPT__OX_OK;
  }
  if (strcmp(c->name, "SequenceErase") == 0) {
    if (mgopt__ox_seq_pos(c, 1, n, n - 1, 0, &pos) != MGOPT__OX_OK) return MGOPT__OX_ERR;
    if (mgopt__ox_seq_out(c, n - 1, edt, &items) != MGOPT__OX_OK) return MGOPT__OX_ERR;
    for (i = 0; i < n; i++)
      if (i != pos) items[i < pos ? i : i - 1] = mgopt__ev_retain(from[i]);
    return MGOPT__OX_OK;
  }
  return mgopt__ox_no(c, "no kernel for this sequence op");
}

/* ---------------------------------------------------------------- exported */

MGOPTDEF int mgopt_onnx_eval_covers(mgopt_program *p, const mgopt_op *op) {
  int64_t opset;
  if (!p || !op || op->kind != MGOPT_OP_OPAQUE || !op->type || strncmp(op->type, "onnx::", 6) != 0) return 0;
  opset = mgopt__onnx_export_opset(p, 0);
  /* If, Loop and Scan (opset 9 on) run in mgopt_eval itself (eval.c) */
  if (strcmp(op->type, "onnx::If") == 0 || strcmp(op->type, "onnx::Loop") == 0) return 1;
  if (strcmp(op->type, "onnx::Scan") == 0) return opset >= 9;
  return mgopt__ox_find(op->type + 6, opset) != NULL || mgopt__ox_is_seq_op(op->type + 6) ||
         (!op->nblocks && mgopt__ox_has_mapping(op->type + 6, opset));
}

MGOPTDEF mgopt_status mgopt_onnx_eval_op(void *ud, mgopt_program *p, const mgopt_op *op, mgopt_tensor *const *operands,
                                         int32_t noperands, mgopt_tensor **out, mgopt_diag *d) {
  const mgopt_onnx_eval_options *o = (const mgopt_onnx_eval_options *)ud;
  const mgopt__ox_row *row;
  mgopt__ox c;
  size_t bytes;
  int32_t k, j, at = 0, nin = 0;
  int r = MGOPT__OX_NO;
  mgopt_diag_clear(d);
  if (!p || !op || (noperands > 0 && !operands) || (op->nouts > 0 && !out))
    return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "invalid arguments");
  for (k = 0; k < op->nouts; k++) out[k] = NULL;
  if (op->kind != MGOPT_OP_OPAQUE || !op->type || strncmp(op->type, "onnx::", 6) != 0)
    return mgopt_diag_set(d, MGOPT_ERR_UNSUPPORTED, "cannot evaluate %s: not an op of the ONNX default domain",
                          op->type ? op->type : "?");
  if (noperands != mgopt_op_operand_count(op)) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "operand count mismatch");
  for (k = 0; k < op->nslots; k++) {
    int32_t i = mgopt__ox_slot_input(&op->slots[k]);
    if (op->slots[k].n == 0) continue;
    if (i < 0) return mgopt_diag_set(d, MGOPT_ERR_UNSUPPORTED, "cannot evaluate %s: operand slot '%s' is not an ONNX input",
                                     op->type, op->slots[k].name);
    if (i + 1 > nin) nin = i + 1;
  }
  memset(&c, 0, sizeof c);
  c.p = p;
  c.op = op;
  c.name = op->type + 6;
  c.opset = mgopt__onnx_export_opset(p, 0);
  c.out = out;
  c.nout = op->nouts;
  c.max_elements = o ? o->max_elements : 0;
  c.d = d;
  c.nin = nin;
  bytes = sizeof(mgopt_tensor *) * (size_t)(nin + 1);
  c.in = (mgopt_tensor **)mgopt__heap_realloc(&p->alloc, NULL, 0, bytes);
  if (!c.in) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  memset(c.in, 0, bytes);
  for (k = 0; k < op->nslots; k++)
    for (j = 0; j < op->slots[k].n; j++) {
      mgopt_tensor *t = operands[at++];
      if (!t) {
        r = mgopt__ox_fail(&c, MGOPT_ERR_INVALID_ARG, "operand '%s' has no tensor", op->slots[k].name);
        goto done;
      }
      c.in[mgopt__ox_slot_input(&op->slots[k])] = t;
    }
  if (mgopt__ox_is_seq_op(c.name)) {
    r = op->nouts == 1 ? mgopt__ox_seq(&c) : mgopt__ox_fail(&c, MGOPT_ERR_CORRUPT, "a sequence op of %d outputs", (int)op->nouts);
    if (r == MGOPT__OX_NO) r = mgopt__ox_fail(&c, MGOPT_ERR_UNSUPPORTED, "cannot evaluate %s: %s", op->type, c.why);
    goto done;
  }
  for (k = 0; k < nin; k++)
    if (c.in[k] && mgopt__ev_seq_items(c.in[k], NULL, NULL)) {
      r = mgopt__ox_fail(&c, MGOPT_ERR_UNSUPPORTED, "cannot evaluate %s: input %d is a sequence", op->type, (int)k);
      goto done;
    }
  row = op->nblocks ? NULL : mgopt__ox_find(c.name, c.opset);
  if (row) r = row->fn(&c);
  if (r == MGOPT__OX_NO) {
    char why[sizeof c.why];
    memcpy(why, c.why, sizeof why);
    for (k = 0; k < op->nouts; k++)
      if (out[k]) {
        mgopt_eval_tensor_free(p, out[k]);
        out[k] = NULL;
      }
    r = mgopt__ox_late(&c, operands, noperands);
    if (r == MGOPT__OX_NO && row && why[0]) memcpy(c.why, why, sizeof why);
  }
  if (r == MGOPT__OX_NO) r = mgopt__ox_fail(&c, MGOPT_ERR_UNSUPPORTED, "cannot evaluate %s: %s", op->type, c.why);
  /* an omitted optional output gets an empty tensor; every other one must be made */
  for (k = 0; r == MGOPT__OX_OK && k < op->nouts; k++)
    if (!out[k]) {
      int64_t zero = 0;
      if (!(op->outs[k]->flags & MGOPT_VALUE_ABSENT))
        r = mgopt__ox_fail(&c, MGOPT_ERR_UNSUPPORTED, "cannot evaluate %s: output %d is not computed", op->type, (int)k);
      else if (!(out[k] = mgopt_eval_tensor_new(p, op->outs[k]->type.dtype != MGOPT_DT_UNKNOWN
                                                       ? (mgopt_dtype)op->outs[k]->type.dtype
                                                       : MGOPT_DT_FP32,
                                                   1, &zero)))
        r = mgopt__ox_fail(&c, MGOPT_ERR_NOMEM, "out of memory");
    }
done:
  if (r != MGOPT__OX_OK)
    for (k = 0; k < op->nouts; k++)
      if (out[k]) {
        mgopt_eval_tensor_free(p, out[k]);
        out[k] = NULL;
      }
  mgopt__heap_free(&p->alloc, c.in, bytes);
  if (r == MGOPT__OX_OK) return MGOPT_OK;
  return c.status != MGOPT_OK ? c.status : MGOPT_ERR_UNSUPPORTED;
}
