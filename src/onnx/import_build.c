/* src/onnx/import_build.c — what the import mappings share: reading a node's attributes and inputs, building canonical ops and binding their outputs. */
#include "convert_internal.h"

/* ---------------------------------------------------------------- names */

/* A value or node name of the tree as the program's interned pointer. The
   tree's names are interned in the program already (see onnx_api.h; trees
   from mgopt_onnx_export too), so the pointer is taken as it is: hashing every name again on every lookup was a sixth of the
   import. A name that breaks the rule cannot match (it is then reported as
   undefined), never a different name. */
MGOPT__PRIVATE const char *mgopt__imp_intern(mgopt__imp *I, mgopt_str s) {
  if (s.ptr && s.len) return s.ptr;
  return mgopt_program_intern(I->p, "", 0);
}

/* Interned for certain (attribute names and dim params: few, and a tree built
   by mgopt_onnx_export spells them with literals). */
MGOPT__PRIVATE const char *mgopt__imp_intern_copy(mgopt__imp *I, mgopt_str s) {
  return mgopt_program_intern(I->p, s.ptr ? s.ptr : "", s.len);
}

MGOPT__PRIVATE int mgopt__imp_streq(mgopt_str s, const char *c) {
  size_t n = strlen(c);
  return s.len == n && (n == 0 || memcmp(s.ptr, c, n) == 0);
}

MGOPT__PRIVATE int mgopt__imp_default_domain(mgopt_str domain) {
  return domain.len == 0 || mgopt__imp_streq(domain, "ai.onnx");
}

/* ---------------------------------------------------------------- reading the node */

MGOPT__PRIVATE const mgopt_onnx_attribute *mgopt__imp_attr(const mgopt_onnx_node *n, const char *name) {
  int64_t i;
  for (i = 0; i < n->nattributes; i++)
    if (mgopt__imp_streq(n->attributes[i].name, name)) return &n->attributes[i];
  return NULL;
}

MGOPT__PRIVATE int64_t mgopt__imp_aint(const mgopt_onnx_node *n, const char *name, int64_t dflt) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(n, name);
  return a && a->type == MGOPT_ONNX_ATTR_INT ? a->i : dflt;
}

MGOPT__PRIVATE double mgopt__imp_afloat(const mgopt_onnx_node *n, const char *name, double dflt) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(n, name);
  return a && a->type == MGOPT_ONNX_ATTR_FLOAT ? (double)a->f : dflt;
}

/* INTS attribute: count, -1 if absent. */
MGOPT__PRIVATE int64_t mgopt__imp_aints(const mgopt_onnx_node *n, const char *name, const int64_t **out) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(n, name);
  if (!a || a->type != MGOPT_ONNX_ATTR_INTS) return -1;
  *out = a->ints;
  return a->nints;
}

MGOPT__PRIVATE int mgopt__imp_astr(const mgopt_onnx_node *n, const char *name, const char *want) {
  const mgopt_onnx_attribute *a = mgopt__imp_attr(n, name);
  return a && a->type == MGOPT_ONNX_ATTR_STRING && mgopt__imp_streq(a->s, want);
}

/* Input k of the node: NULL when absent or omitted. */
MGOPT__PRIVATE mgopt_value *mgopt__imp_in(mgopt__imp *I, int64_t k) {
  const mgopt_onnx_node *n = I->node;
  if (k >= n->ninputs || n->inputs[k].len == 0) return NULL;
  return (mgopt_value *)mgopt__imap_get(&I->values, mgopt__imp_intern(I, n->inputs[k]));
}

MGOPT__PRIVATE int64_t mgopt__imp_nin(const mgopt_onnx_node *n) {
  int64_t k = n->ninputs;
  while (k > 0 && n->inputs[k - 1].len == 0) k--;
  return k;
}

MGOPT__PRIVATE int64_t mgopt__imp_nout(const mgopt_onnx_node *n) {
  int64_t k = n->noutputs;
  while (k > 0 && n->outputs[k - 1].len == 0) k--;
  return k;
}


/* Constant integer list from a const value (1-d or scalar integer tensor). */
MGOPT__PRIVATE int64_t mgopt__imp_const_ints(mgopt__imp *I, mgopt_value *v, int64_t **out) {
  mgopt_tensor *t = v ? mgopt_value_const(v) : NULL;
  int64_t i, *arr;
  if (!t || t->rank > 1 || !mgopt_dtype_is_int((mgopt_dtype)t->dtype) || t->numel > 4096) return -1;
  arr = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(t->numel + 1), 8);
  if (!arr) return -1;
  mgopt_tensor_data(I->p, t);
  for (i = 0; i < t->numel; i++) arr[i] = mgopt_tensor_get_i64(t, i);
  *out = arr;
  return t->numel;
}

/* Axes from the attribute (attr_form: the opsets before they became an
   input) or from constant input input_k: count, -1 when not usable, -2 when absent. */
MGOPT__PRIVATE int64_t mgopt__imp_axes(mgopt__imp *I, int64_t input_k, int attr_form, int64_t **out) {
  const int64_t *a = NULL;
  int64_t n;
  if (attr_form) {
    n = mgopt__imp_aints(I->node, "axes", &a);
    if (n < 0) return -2;
    /* one spare slot, as callers expect; only n entries are read from the attribute */
    *out = (int64_t *)mgopt_program_alloc(I->p, sizeof(int64_t) * (size_t)(n + 1), 8);
    if (*out && n) memcpy(*out, a, sizeof(int64_t) * (size_t)n);
    return *out ? n : -1;
  }
  if (input_k >= I->node->ninputs || I->node->inputs[input_k].len == 0) return -2;
  return mgopt__imp_const_ints(I, mgopt__imp_in(I, input_k), out);
}

MGOPT__PRIVATE int mgopt__imp_rank(const mgopt_value *v) {
  return v && v->type.kind == MGOPT_TYPE_TENSOR ? v->type.rank : -1;
}

MGOPT__PRIVATE int mgopt__imp_is_float(const mgopt_value *v) {
  return v && v->type.kind == MGOPT_TYPE_TENSOR &&
         (v->type.dtype == MGOPT_DT_FP32 || v->type.dtype == MGOPT_DT_FP16 || v->type.dtype == MGOPT_DT_FP64);
}

MGOPT__PRIVATE int mgopt__imp_known_dtype(const mgopt_value *v) {
  return v && v->type.kind == MGOPT_TYPE_TENSOR && v->type.dtype != MGOPT_DT_UNKNOWN;
}


/* ---------------------------------------------------------------- building canonical ops */

MGOPT__PRIVATE const char *mgopt__imp_kind_name(int32_t kind) {
  const mgopt_op_def *def = mgopt_op_def_get(kind);
  return def ? def->name : "";
}

/* A new op of `type` at the end of the current block, outputs named after the
   node's outputs 0..nouts-1 (absent outputs flagged). Not inferred yet. */
MGOPT__PRIVATE mgopt_op *mgopt__imp_op(mgopt__imp *I, const char *type, int32_t nouts, int32_t nblocks) {
  mgopt_op *op = mgopt_op_new(I->p, type, nouts, nblocks);
  int32_t i;
  if (!op) return NULL;
  if (I->node->name.len) op->name = mgopt__imp_intern(I, I->node->name);
  for (i = 0; i < nouts; i++) {
    if (i < I->node->noutputs && I->node->outputs[i].len) {
      op->outs[i]->name = mgopt__imp_intern(I, I->node->outputs[i]);
      if (!op->outs[i]->name) return NULL;
    } else {
      op->outs[i]->flags |= MGOPT_VALUE_ABSENT;
    }
  }
  mgopt_op_append(op, I->b);
  return op;
}

/* A const value (named after the node and `what`) holding t, inserted before `pos`. */
MGOPT__PRIVATE mgopt_value *mgopt__imp_const(mgopt__imp *I, mgopt_op *pos, const char *what, mgopt_tensor *t) {
  char buf[160];
  const char *nm;
  mgopt_value *v;
  snprintf(buf, sizeof buf, "%.100s_%s", I->node->outputs && I->node->noutputs && I->node->outputs[0].len
                                            ? mgopt__imp_intern(I, I->node->outputs[0]) : "const", what);
  nm = mgopt_program_fresh_name(I->p, buf);
  if (!nm || !t) return NULL;
  v = mgopt_build_const(I->p, I->b, pos, nm, t);
  return v;
}

MGOPT__PRIVATE mgopt_value *mgopt__imp_const_i32s(mgopt__imp *I, mgopt_op *pos, const char *what, const int64_t *v, int64_t n) {
  mgopt_tensor *t = mgopt_tensor_new(I->p, MGOPT_DT_INT32, 1, &n);
  int64_t i;
  if (!t) return NULL;
  for (i = 0; i < n; i++) {
    if (v[i] < INT32_MIN || v[i] > INT32_MAX) return NULL;
    mgopt_tensor_set_i64(t, i, v[i]);
  }
  return mgopt__imp_const(I, pos, what, t);
}

/* After a canonical op is built: infer, refine with declared types, and bind the outputs. */
MGOPT__PRIVATE mgopt_status mgopt__imp_finish(mgopt__imp *I, mgopt_op *op) {
  int32_t i;
  mgopt_diag d2;
  mgopt_status s;
  mgopt_diag_clear(&d2);
  if (op->kind != MGOPT_OP_OPAQUE) {
    s = mgopt_op_infer(I->p, op, &d2);
    if (s == MGOPT_ERR_NOMEM) return mgopt__imp_fail(I, s, "out of memory");
    if (s) {
      I->infer_failed = 1;
      return mgopt__imp_fail(I, MGOPT_ERR_TYPE, "%s: %s", op->type, d2.msg);
    }
  }
  for (i = 0; i < op->nouts; i++) {
    mgopt_value *v = op->outs[i];
    if (v->flags & MGOPT_VALUE_ABSENT) continue;
    s = mgopt__imp_refine(I, v, (const mgopt_onnx_type *)mgopt__imap_get(&I->vinfo, v->name));
    if (s) return s;
    mgopt__imap_put(&I->values, v->name, v);
  }
  return I->values.oom ? mgopt__imp_fail(I, MGOPT_ERR_NOMEM, "out of memory") : MGOPT_OK;
}

/* The mapping's return value for the status of mgopt__imp_finish(op). */
MGOPT__PRIVATE int mgopt__imp_done(mgopt__imp *I, mgopt_op *op) { return mgopt__imp_finish(I, op) ? -1 : 1; }

/* 1 if an identity can stand for the node: a tensor goes in, and the first
   output is not declared as something else (a sequence, a map): those stay opaque. */
MGOPT__PRIVATE int mgopt__imp_forwardable(mgopt__imp *I, const mgopt_value *x) {
  const mgopt_onnx_type *ot;
  const char *nm;
  if (!x || x->type.kind != MGOPT_TYPE_TENSOR) return 0;
  nm = I->node->noutputs ? mgopt__imp_intern(I, I->node->outputs[0]) : NULL;
  ot = nm ? (const mgopt_onnx_type *)mgopt__imap_get(&I->vinfo, nm) : NULL;
  return !ot || ot->tensor_type || !ot->other.len;
}

/* The node's output k is value v (an existing value): bind the name with an identity.
   Callers check mgopt__imp_forwardable first. */
MGOPT__PRIVATE mgopt_status mgopt__imp_forward(mgopt__imp *I, mgopt_value *v) {
  mgopt_op *op = mgopt__imp_op(I, "identity", 1, 0);
  if (!op || mgopt_op_set_operand(op, "x", v)) return MGOPT_ERR_NOMEM;
  return mgopt__imp_finish(I, op);
}
