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

/* ---------------------------------------------------------------- exported */

MGOPTDEF int mgopt_onnx_eval_covers(mgopt_program *p, const mgopt_op *op) {
  int64_t opset;
  if (!p || !op || op->kind != MGOPT_OP_OPAQUE || !op->type || strncmp(op->type, "onnx::", 6) != 0) return 0;
  opset = mgopt__onnx_export_opset(p, 0);
  return mgopt__ox_find(op->type + 6, opset) != NULL || (!op->nblocks && mgopt__ox_has_mapping(op->type + 6, opset));
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
