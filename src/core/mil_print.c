/* src/core/mil_print.c — prints a program as canonical .mil text (what mgopt_mil_parse reads back exactly). */
#include "../internal.h"

/* Canonical form, in short (the manual and core/mil_parse.c have the rest):

       main[CoreML7](%x: (2, 4, fp32), %y: (s0, 4, fp32)) {
         %w: (4, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6], [7, 8]])
         %m: (2, 2, fp32) = matmul(x=%x, y=%w, transpose_x=false)
       } -> (%m)

   Functions are separated by one blank line; every level indents 2 spaces;
   an op's nested blocks follow it 2 spaces deeper. Operand slots print
   first (stored order), then attributes (stored order), then name="..." only
   when it differs from the first output's name. Names print bare when the
   parser's bare-name rule reads them back whole, else quoted with escapes.
   Invariant: for every printable program P, print(parse(print(P))) equals
   print(P) byte for byte. */

/* Deeper IR than this is refused rather than printed with unbounded recursion. */
#define MGOPT__MILW_MAX_DEPTH 1024

typedef struct mgopt__milw {
  mgopt_buf *out;
  int64_t elide_above;
} mgopt__milw;

static int mgopt__milw_name_char(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

/* Value names: [A-Za-z0-9_.] plus ':' when a name character follows. */
static int mgopt__milw_value_name_plain(const char *s) {
  size_t i;
  if (!s[0]) return 0;
  for (i = 0; s[i]; i++) {
    if (mgopt__milw_name_char((unsigned char)s[i])) continue;
    if (s[i] == ':' && mgopt__milw_name_char((unsigned char)s[i + 1])) continue;
    return 0;
  }
  return 1;
}

/* Identifiers (op types, keys, block and function names, opsets): as value
   names, and ':' may also be followed by ':' ("onnx::Foo"). */
static int mgopt__milw_ident_plain(const char *s) {
  size_t i;
  if (!s[0]) return 0;
  for (i = 0; s[i]; i++) {
    if (mgopt__milw_name_char((unsigned char)s[i])) continue;
    if (s[i] == ':' && (s[i + 1] == ':' || mgopt__milw_name_char((unsigned char)s[i + 1]))) continue;
    return 0;
  }
  return 1;
}

/* Symbolic dims: an identifier that cannot be read as a number, '?' or '*'. */
static int mgopt__milw_sym_plain(const char *s) {
  int c = (unsigned char)s[0];
  if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')) return 0;
  return mgopt__milw_ident_plain(s);
}

static void mgopt__milw_quoted(mgopt__milw *w, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  size_t i, run = 0;
  mgopt__buf_putc(w->out, '"');
  for (i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    const char *esc = NULL;
    char xb[4];
    if (c == '"') esc = "\\\"";
    else if (c == '\\') esc = "\\\\";
    else if (c == '\n') esc = "\\n";
    else if (c == '\t') esc = "\\t";
    else if (c == '\r') esc = "\\r";
    else if (c < 0x20 || c == 0x7f) {
      xb[0] = '\\';
      xb[1] = 'x';
      xb[2] = hex[c >> 4];
      xb[3] = hex[c & 15];
      mgopt__buf_putn(w->out, s + run, i - run);
      mgopt__buf_putn(w->out, xb, 4);
      run = i + 1;
      continue;
    }
    if (esc) {
      mgopt__buf_putn(w->out, s + run, i - run);
      mgopt__buf_puts(w->out, esc);
      run = i + 1;
    }
  }
  mgopt__buf_putn(w->out, s + run, n - run);
  mgopt__buf_putc(w->out, '"');
}

static void mgopt__milw_ident(mgopt__milw *w, const char *s) {
  if (!s) s = "";
  if (mgopt__milw_ident_plain(s)) mgopt__buf_puts(w->out, s);
  else mgopt__milw_quoted(w, s, strlen(s));
}

static void mgopt__milw_hex(mgopt__milw *w, const uint8_t *b, size_t n) {
  static const char hex[] = "0123456789abcdef";
  size_t i;
  mgopt__buf_putc(w->out, '"');
  for (i = 0; i < n; i++) {
    char x[2];
    x[0] = hex[b[i] >> 4];
    x[1] = hex[b[i] & 15];
    mgopt__buf_putn(w->out, x, 2);
  }
  mgopt__buf_putc(w->out, '"');
}

/* "%name"; an unnamed value gets a deterministic stand-in from its id. */
static void mgopt__milw_ref(mgopt__milw *w, const mgopt_value *v) {
  if (!v) {
    mgopt__buf_putc(w->out, '_');
    return;
  }
  mgopt__buf_putc(w->out, '%');
  if (!v->name) mgopt__buf_printf(w->out, "__v%lu", (unsigned long)v->id);
  else if (mgopt__milw_value_name_plain(v->name)) mgopt__buf_puts(w->out, v->name);
  else mgopt__milw_quoted(w, v->name, strlen(v->name));
}

static void mgopt__milw_type(mgopt__milw *w, const mgopt_type *t) {
  int32_t i;
  if (t->kind == MGOPT_TYPE_OTHER) {
    mgopt__buf_puts(w->out, "opaque(");
    mgopt__milw_hex(w, t->other, t->other ? t->other_len : 0);
    mgopt__buf_putc(w->out, ')');
    return;
  }
  if (t->kind == MGOPT_TYPE_STATE) mgopt__buf_puts(w->out, "state");
  mgopt__buf_putc(w->out, '(');
  if (t->rank < 0) mgopt__buf_puts(w->out, "*, ");
  for (i = 0; i < t->rank; i++) {
    mgopt_dim dm = t->dims ? t->dims[i] : mgopt_dim_unknown();
    if (dm.sym) {
      if (mgopt__milw_sym_plain(dm.sym)) mgopt__buf_puts(w->out, dm.sym);
      else mgopt__milw_quoted(w, dm.sym, strlen(dm.sym));
    } else if (dm.v >= 0) {
      mgopt__buf_printf(w->out, "%lld", (long long)dm.v);
    } else {
      mgopt__buf_putc(w->out, '?');
    }
    mgopt__buf_puts(w->out, ", ");
  }
  mgopt__buf_puts(w->out, mgopt_dtype_name((mgopt_dtype)t->dtype));
  mgopt__buf_putc(w->out, ')');
}

/* Value declaration: "%name: TYPE" ("_" for an absent output). */
static void mgopt__milw_decl(mgopt__milw *w, const mgopt_value *v, int is_const) {
  if (v->flags & MGOPT_VALUE_ABSENT) {
    mgopt__buf_putc(w->out, '_');
    return;
  }
  mgopt__milw_ref(w, v);
  mgopt__buf_puts(w->out, ": ");
  mgopt__milw_type(w, &v->type);
  if (is_const) mgopt__buf_putc(w->out, '*');
}

static int mgopt__milw_bits_eq(const void *a, const void *b, size_t n) { return memcmp(a, b, n) == 0; }

/* Integral values as integers, others as the shortest %g text that the
   parser's conversion for `dt` maps back to the same bits. No ".0" is
   forced: inside a typed tensor the dtype says float. */
static void mgopt__milw_real(mgopt__milw *w, double v, mgopt_dtype dt) {
  char buf[48];
  int prec;
  if (v != v) {
    mgopt__buf_puts(w->out, "nan");
    return;
  }
  if (v == HUGE_VAL) {
    mgopt__buf_puts(w->out, "inf");
    return;
  }
  if (v == -HUGE_VAL) {
    mgopt__buf_puts(w->out, "-inf");
    return;
  }
  if (v == floor(v) && v > -1e16 && v < 1e16) {
    /* integral values read better as integers than as 1e+06 (and are exact) */
    snprintf(buf, sizeof buf, "%.0f", v);
    mgopt__buf_puts(w->out, buf);
    return;
  }
  for (prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (dt == MGOPT_DT_FP64) {
      double r = strtod(buf, NULL);
      if (mgopt__milw_bits_eq(&r, &v, sizeof r)) break;
    } else {
      float f = strtof(buf, NULL), want = (float)v;
      if (dt == MGOPT_DT_FP16) {
        if (mgopt_f32_to_f16(f) == mgopt_f32_to_f16(want)) break;
      } else if (dt == MGOPT_DT_BF16) {
        if (mgopt_f32_to_bf16(f) == mgopt_f32_to_bf16(want)) break;
      } else if (mgopt__milw_bits_eq(&f, &want, sizeof f)) {
        break;
      }
    }
  }
  mgopt__buf_puts(w->out, buf);
}

/* One element of a tensor. Complex elements print as [re, im]; fp8 elements
   as their raw bit patterns (0..255). */
static void mgopt__milw_elem(mgopt__milw *w, const mgopt_tensor *t, int64_t i) {
  const uint8_t *d = (const uint8_t *)t->data;
  mgopt_dtype dt = (mgopt_dtype)t->dtype;
  switch (dt) {
    case MGOPT_DT_BOOL:
      mgopt__buf_puts(w->out, d[i] ? "true" : "false");
      return;
    case MGOPT_DT_STRING: {
      const mgopt_str *s = (const mgopt_str *)t->data + i;
      mgopt__milw_quoted(w, s->ptr ? s->ptr : "", s->ptr ? s->len : 0);
      return;
    }
    case MGOPT_DT_FP16: case MGOPT_DT_BF16: case MGOPT_DT_FP32: case MGOPT_DT_FP64:
      mgopt__milw_real(w, mgopt_tensor_get_f64(t, i), dt);
      return;
    case MGOPT_DT_COMPLEX64: {
      float re, im;
      memcpy(&re, d + 8 * i, 4);
      memcpy(&im, d + 8 * i + 4, 4);
      mgopt__buf_putc(w->out, '[');
      mgopt__milw_real(w, re, MGOPT_DT_FP32);
      mgopt__buf_puts(w->out, ", ");
      mgopt__milw_real(w, im, MGOPT_DT_FP32);
      mgopt__buf_putc(w->out, ']');
      return;
    }
    case MGOPT_DT_COMPLEX128: {
      double re, im;
      memcpy(&re, d + 16 * i, 8);
      memcpy(&im, d + 16 * i + 8, 8);
      mgopt__buf_putc(w->out, '[');
      mgopt__milw_real(w, re, MGOPT_DT_FP64);
      mgopt__buf_puts(w->out, ", ");
      mgopt__milw_real(w, im, MGOPT_DT_FP64);
      mgopt__buf_putc(w->out, ']');
      return;
    }
    case MGOPT_DT_FP8E4M3FN: case MGOPT_DT_FP8E4M3FNUZ: case MGOPT_DT_FP8E5M2:
    case MGOPT_DT_FP8E5M2FNUZ:
      mgopt__buf_printf(w->out, "%u", (unsigned)d[i]);
      return;
    case MGOPT_DT_UINT64: {
      uint64_t u;
      memcpy(&u, d + 8 * i, 8);
      mgopt__buf_printf(w->out, "%llu", (unsigned long long)u);
      return;
    }
    case MGOPT_DT_UNKNOWN:
      mgopt__buf_putc(w->out, '0');
      return;
    default:
      mgopt__buf_printf(w->out, "%lld", (long long)mgopt_tensor_get_i64(t, i));
      return;
  }
}

/* The nested-list literal of a tensor, shaped by t->shape; iterative, so the
   rank costs no stack. A tensor without elements prints as [] whatever its
   shape (the parser takes the shape from the type). */
static void mgopt__milw_tensor_body(mgopt__milw *w, const mgopt_tensor *t) {
  int32_t L = t->rank, j;
  int64_t k;
  if (w->elide_above > 0 && t->numel > w->elide_above) {
    mgopt__buf_puts(w->out, "[...]");
    return;
  }
  if (t->numel <= 0 || !t->data) {
    mgopt__buf_puts(w->out, "[]");
    return;
  }
  if (L <= 0) {
    mgopt__milw_elem(w, t, 0);
    return;
  }
  for (k = 0; k < t->numel && !w->out->oom; k++) {
    int64_t prod = 1;
    if (k) mgopt__buf_puts(w->out, ", ");
    for (j = L - 1; j >= 0; j--) {
      prod *= t->shape[j];
      if (k % prod) break;
      mgopt__buf_putc(w->out, '[');
    }
    mgopt__milw_elem(w, t, k);
    prod = 1;
    for (j = L - 1; j >= 0; j--) {
      prod *= t->shape[j];
      if ((k + 1) % prod) break;
      mgopt__buf_putc(w->out, ']');
    }
  }
}

static void mgopt__milw_tensor_type(mgopt__milw *w, const mgopt_tensor *t) {
  int32_t i;
  mgopt__buf_putc(w->out, '(');
  for (i = 0; i < t->rank; i++) mgopt__buf_printf(w->out, "%lld, ", (long long)t->shape[i]);
  mgopt__buf_puts(w->out, mgopt_dtype_name((mgopt_dtype)t->dtype));
  mgopt__buf_putc(w->out, ')');
}

/* A const's val prints bare when the declared output type describes the
   tensor exactly (the parser rebuilds it from that type). */
static int mgopt__milw_const_bare(const mgopt_op *op, const mgopt_attr *a) {
  const mgopt_type *ty;
  const mgopt_tensor *t = a->u.t;
  int32_t i;
  if (op->kind != MGOPT_OP_const || strcmp(a->name, "val") != 0 || !t || op->nouts < 1) return 0;
  if (op->outs[0]->flags & MGOPT_VALUE_ABSENT) return 0;
  ty = &op->outs[0]->type;
  if (!mgopt_type_is_static(ty) || ty->dtype != t->dtype || ty->rank != t->rank) return 0;
  if (t->dtype == MGOPT_DT_UNKNOWN) return 0;
  for (i = 0; i < t->rank; i++)
    if (ty->dims[i].v != t->shape[i]) return 0;
  return 1;
}

static void mgopt__milw_attr(mgopt__milw *w, const mgopt_op *op, const mgopt_attr *a) {
  char buf[48];
  int64_t k;
  switch ((mgopt_attr_kind)a->kind) {
    case MGOPT_ATTR_BOOL:
      mgopt__buf_puts(w->out, a->u.i ? "true" : "false");
      return;
    case MGOPT_ATTR_INT:
      mgopt__buf_printf(w->out, "%lld", (long long)a->u.i);
      return;
    case MGOPT_ATTR_FLOAT:
      mgopt__fmt_f64(buf, a->u.f);
      mgopt__buf_puts(w->out, buf);
      return;
    case MGOPT_ATTR_STRING:
      mgopt__milw_quoted(w, a->u.s.ptr ? a->u.s.ptr : "", a->u.s.ptr ? a->u.s.len : 0);
      return;
    case MGOPT_ATTR_BOOLS: case MGOPT_ATTR_INTS: case MGOPT_ATTR_FLOATS: case MGOPT_ATTR_STRINGS:
      if (a->n <= 0) {
        mgopt__buf_puts(w->out, a->kind == MGOPT_ATTR_BOOLS    ? "bools[]"
                                : a->kind == MGOPT_ATTR_FLOATS ? "floats[]"
                                : a->kind == MGOPT_ATTR_STRINGS ? "strings[]"
                                                                : "[]");
        return;
      }
      mgopt__buf_putc(w->out, '[');
      for (k = 0; k < a->n && !w->out->oom; k++) {
        if (k) mgopt__buf_puts(w->out, ", ");
        if (a->kind == MGOPT_ATTR_BOOLS) {
          mgopt__buf_puts(w->out, a->u.ints[k] ? "true" : "false");
        } else if (a->kind == MGOPT_ATTR_INTS) {
          mgopt__buf_printf(w->out, "%lld", (long long)a->u.ints[k]);
        } else if (a->kind == MGOPT_ATTR_FLOATS) {
          mgopt__fmt_f64(buf, a->u.floats[k]);
          mgopt__buf_puts(w->out, buf);
        } else {
          const mgopt_str *s = &a->u.strs[k];
          mgopt__milw_quoted(w, s->ptr ? s->ptr : "", s->ptr ? s->len : 0);
        }
      }
      mgopt__buf_putc(w->out, ']');
      return;
    case MGOPT_ATTR_TENSOR:
      if (!a->u.t) {
        mgopt__buf_puts(w->out, "none");
        return;
      }
      if (mgopt__milw_const_bare(op, a)) {
        mgopt__milw_tensor_body(w, a->u.t);
        return;
      }
      mgopt__buf_puts(w->out, "tensor<");
      mgopt__milw_tensor_type(w, a->u.t);
      mgopt__buf_puts(w->out, ">(");
      mgopt__milw_tensor_body(w, a->u.t);
      mgopt__buf_putc(w->out, ')');
      return;
    case MGOPT_ATTR_BYTES:
      mgopt__buf_printf(w->out, "bytes<%ld>(", (long)a->tag);
      mgopt__milw_hex(w, a->u.bytes, a->u.bytes && a->n > 0 ? (size_t)a->n : 0);
      mgopt__buf_putc(w->out, ')');
      return;
    default:
      mgopt__buf_puts(w->out, "none");
      return;
  }
}

static void mgopt__milw_indent(mgopt__milw *w, int indent) {
  static const char spaces[] = "                                ";
  while (indent > 32) {
    mgopt__buf_putn(w->out, spaces, 32);
    indent -= 32;
  }
  mgopt__buf_putn(w->out, spaces, (size_t)indent);
}

static mgopt_status mgopt__milw_block(mgopt__milw *w, const mgopt_block *b, int indent, int depth,
                                      const char *header_name, const char *opset);

static int mgopt__milw_name_differs(const mgopt_op *op) {
  const mgopt_value *o;
  if (!op->name) return 0;
  if (op->nouts == 0) return 1;
  o = op->outs[0];
  if (o->flags & MGOPT_VALUE_ABSENT) return 1;
  if (!o->name) return 1;
  return strcmp(o->name, op->name) != 0;
}

static mgopt_status mgopt__milw_op(mgopt__milw *w, const mgopt_op *op, int indent, int depth) {
  int32_t i, k;
  int first = 1;
  int is_const = op->kind == MGOPT_OP_const;
  mgopt__milw_indent(w, indent);
  for (i = 0; i < op->nouts; i++) {
    if (i) mgopt__buf_puts(w->out, ", ");
    mgopt__milw_decl(w, op->outs[i], is_const);
  }
  if (op->nouts) mgopt__buf_puts(w->out, " = ");
  mgopt__milw_ident(w, op->type);
  mgopt__buf_putc(w->out, '(');
  for (i = 0; i < op->nslots; i++) {
    const mgopt_slot *s = &op->slots[i];
    if (!s->is_list && s->n == 0) continue;
    if (!first) mgopt__buf_puts(w->out, ", ");
    first = 0;
    mgopt__milw_ident(w, s->name);
    mgopt__buf_putc(w->out, '=');
    if (s->is_list) {
      mgopt__buf_putc(w->out, '(');
      for (k = 0; k < s->n; k++) {
        if (k) mgopt__buf_puts(w->out, ", ");
        mgopt__milw_ref(w, s->uses[k].value);
      }
      mgopt__buf_putc(w->out, ')');
    } else {
      mgopt__milw_ref(w, s->uses[0].value);
    }
  }
  for (i = 0; i < op->nattrs; i++) {
    if (!first) mgopt__buf_puts(w->out, ", ");
    first = 0;
    mgopt__milw_ident(w, op->attrs[i].name);
    mgopt__buf_putc(w->out, '=');
    mgopt__milw_attr(w, op, &op->attrs[i]);
  }
  if (op->flags & MGOPT_OP_HAS_EFFECTS) {
    if (!first) mgopt__buf_puts(w->out, ", ");
    first = 0;
    mgopt__buf_puts(w->out, "has_effects=true");
  }
  if (mgopt__milw_name_differs(op)) {
    if (!first) mgopt__buf_puts(w->out, ", ");
    mgopt__buf_puts(w->out, "name=");
    mgopt__milw_quoted(w, op->name, strlen(op->name));
  }
  mgopt__buf_puts(w->out, ")\n");
  for (i = 0; i < op->nblocks; i++) {
    mgopt_status s = mgopt__milw_block(w, op->blocks[i], indent + 2, depth + 1, NULL, NULL);
    if (s) return s;
  }
  return MGOPT_OK;
}

/* A block: "NAME(%arg: T, ...) {", its ops two spaces deeper, "} -> (...)".
   A function body prints with the function's name and opset as header. */
static mgopt_status mgopt__milw_block(mgopt__milw *w, const mgopt_block *b, int indent, int depth,
                                      const char *header_name, const char *opset) {
  const mgopt_op *op;
  int32_t i;
  if (depth > MGOPT__MILW_MAX_DEPTH) return MGOPT_ERR_LIMIT;
  mgopt__milw_indent(w, indent);
  mgopt__milw_ident(w, header_name ? header_name : b->name);
  if (opset) {
    mgopt__buf_putc(w->out, '[');
    mgopt__milw_ident(w, opset);
    mgopt__buf_putc(w->out, ']');
  }
  if (header_name && b->func && b->func->nattrs > 0) {
    /* the function's own attributes; tensors print in their typed form */
    mgopt_op none;
    memset(&none, 0, sizeof none);
    none.kind = MGOPT_OP_OPAQUE;
    mgopt__buf_puts(w->out, " attributes(");
    for (i = 0; i < b->func->nattrs; i++) {
      if (i) mgopt__buf_puts(w->out, ", ");
      mgopt__milw_ident(w, b->func->attrs[i].name);
      mgopt__buf_putc(w->out, '=');
      mgopt__milw_attr(w, &none, &b->func->attrs[i]);
    }
    mgopt__buf_puts(w->out, ") ");
  }
  mgopt__buf_putc(w->out, '(');
  for (i = 0; i < b->nargs; i++) {
    if (i) mgopt__buf_puts(w->out, ", ");
    mgopt__milw_ref(w, b->args[i]);
    mgopt__buf_puts(w->out, ": ");
    mgopt__milw_type(w, &b->args[i]->type);
  }
  mgopt__buf_puts(w->out, ") {\n");
  for (op = b->first; op && !w->out->oom; op = op->next) {
    mgopt_status s = mgopt__milw_op(w, op, indent + 2, depth);
    if (s) return s;
  }
  mgopt__milw_indent(w, indent);
  mgopt__buf_puts(w->out, "} -> (");
  for (i = 0; i < b->nouts; i++) {
    if (i) mgopt__buf_puts(w->out, ", ");
    mgopt__milw_ref(w, b->outs[i]->value);
  }
  mgopt__buf_puts(w->out, ")\n");
  return MGOPT_OK;
}

MGOPTDEF mgopt_status mgopt_mil_print(mgopt_program *p, const mgopt_print_options *opts, mgopt_buf *out) {
  mgopt__milw w;
  int32_t i;
  if (!p || !out) return MGOPT_ERR_INVALID_ARG;
  w.out = out;
  w.elide_above = opts ? opts->elide_above : 0;
  /* an empty program still yields a NUL-terminated (empty) buffer */
  mgopt__buf_putn(out, "", 0);
  for (i = 0; i < p->nfuncs; i++) {
    const mgopt_function *f = p->funcs[i];
    mgopt_status s;
    if (i) mgopt__buf_putc(out, '\n');
    s = mgopt__milw_block(&w, f->body, 0, 0, f->name, f->opset);
    if (s) return s;
  }
  return out->oom ? MGOPT_ERR_NOMEM : MGOPT_OK;
}
