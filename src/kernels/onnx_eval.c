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
   onnx::X: why". The numeric contract is the kernel's: onnx_ops.c and
   onnx_nn.c for the table, the canonical kernels' for a late mapping. */
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

/* ---------------------------------------------------------------- exported */

MGOPTDEF int mgopt_onnx_eval_covers(mgopt_program *p, const mgopt_op *op) {
  int64_t opset;
  if (!p || !op || op->kind != MGOPT_OP_OPAQUE || !op->type || strncmp(op->type, "onnx::", 6) != 0) return 0;
  opset = mgopt__onnx_export_opset(p, 0);
  return mgopt__ox_find(op->type + 6, opset) != NULL;
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
  if (r == MGOPT__OX_NO && !row) mgopt__ox_no(&c, "no kernel at opset %lld", (long long)c.opset);
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
