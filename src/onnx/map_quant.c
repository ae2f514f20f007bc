/* src/onnx/map_quant.c — ONNX <-> canonical mappings of quantization and compressed weights: QuantizeLinear / DequantizeLinear as quantize / dequantize, constexpr_blockwise_shift_scale and constexpr_affine_dequantize written as an integer initializer with DequantizeLinear (or Cast and Mul), constexpr_lut_to_dense as a table and packed indices decoded by standard ops. */
#include "convert_internal.h"

/* ---------------------------------------------------------------- constexpr_blockwise_shift_scale

   out = scale * (data - offset), data, scale and offset constants of one
   rank. The shape of the scale decides the ONNX form:
   - per tensor (every scale dim 1): DequantizeLinear with a scalar scale
     (opset >= 10; an fp16 scale from opset 19);
   - per axis (one dim of the scale equals the data's, the others are 1):
     DequantizeLinear with a 1-D scale and `axis` (opset >= 13; fp16 scale
     from 19);
   - blocked (one dim of the scale divides the data's into blocks; the others
     1 or the data's): DequantizeLinear with `axis` and `block_size`, the
     scale (and zero point) repeated along the dims where they are 1
     (opset >= 21);
   - 4-bit data (int4 / uint4): opset >= 21 in every form.
   8-bit data per tensor or per axis below those opsets is written as
   Cast(data) [- offset] * scale with the scale in its own shape (it
   broadcasts): the same arithmetic, in the scale's dtype, at any opset. A
   float offset, and forms other than these, are not written (the
   compression passes ask the program's target first and leave the weight
   as it was). The opset is never raised. */

typedef struct mgopt__mq_form {
  mgopt_tensor *q, *s, *z; /* z NULL: no offset */
  int kind;                /* 0 per tensor, 1 per axis, 2 blocked */
  int32_t axis;
  int64_t block;
} mgopt__mq_form;

/* The form of data of shape qs under a scale of shape ss (both of rank r):
   f's kind, axis and block; 0 when DequantizeLinear has none. */
static int mgopt__mq_shapes(int32_t r, const int64_t *qs, const int64_t *ss, mgopt__mq_form *f) {
  int32_t d, na = 0, nb = 0;
  for (d = 0; d < r; d++) {
    int64_t sd = ss[d], qd = qs[d];
    if (sd == 1) continue;
    if (sd <= 0 || qd % sd != 0) return 0;
    if (sd == qd) {
      if (!nb) f->axis = d;
      na++;
    } else {
      f->axis = d;
      f->block = qd / sd;
      nb++;
    }
  }
  if (nb > 1 || (nb == 0 && na > 1)) return 0;
  f->kind = nb ? 2 : na ? 1 : 0;
  return 1;
}

static int mgopt__mq_bss(const mgopt_op *op, mgopt__mq_form *f) {
  int32_t d;
  mgopt_value *zv = mgopt_op_operand(op, "offset");
  memset(f, 0, sizeof *f);
  f->q = mgopt_value_const(mgopt_op_operand(op, "data"));
  f->s = mgopt_value_const(mgopt_op_operand(op, "scale"));
  f->z = zv ? mgopt_value_const(zv) : NULL;
  if (!f->q || !f->s || (zv && !f->z) || f->q->rank != f->s->rank || f->q->rank < 1) return 0;
  if (f->z && (f->z->dtype != f->q->dtype || f->z->rank != f->s->rank)) return 0;
  for (d = 0; f->z && d < f->q->rank; d++)
    if (f->z->shape[d] != f->s->shape[d]) return 0;
  return mgopt__mq_shapes(f->q->rank, f->q->shape, f->s->shape, f);
}

static int mgopt__mq_4bit(mgopt_dtype dt) { return dt == MGOPT_DT_INT4 || dt == MGOPT_DT_UINT4; }

/* 1: DequantizeLinear at the row's opset; 0: Cast and Mul. */
static int mgopt__mq_use_dq(const mgopt__mq_form *f, int64_t opset) {
  int fp16 = f->s->dtype == MGOPT_DT_FP16;
  if (f->s->dtype != MGOPT_DT_FP32 && !fp16) return 0;
  if (mgopt__mq_4bit((mgopt_dtype)f->q->dtype) || f->kind == 2) return opset >= 21;
  if (fp16 && opset < 19) return 0;
  return opset >= (f->kind == 1 ? 13 : 10);
}

/* A float `data` that is not a constant (the output of a palettized
   weight's lookup, say): out = (data - offset) * scale as Sub and Mul, the
   scale (and a float offset) of data's rank broadcasting, all of one float
   dtype. 1 when op is that form. */
static int mgopt__mq_float_data(const mgopt_op *op) {
  mgopt_value *dv = mgopt_op_operand(op, "data"), *zv = mgopt_op_operand(op, "offset");
  mgopt_tensor *s = mgopt_value_const(mgopt_op_operand(op, "scale")), *z = zv ? mgopt_value_const(zv) : NULL;
  if (!dv || mgopt_value_const(dv) || !s || (zv && !z) || dv->type.kind != MGOPT_TYPE_TENSOR) return 0;
  if ((s->dtype != MGOPT_DT_FP32 && s->dtype != MGOPT_DT_FP16) || dv->type.dtype != s->dtype) return 0;
  if (dv->type.rank != s->rank || (z && (z->dtype != s->dtype || z->rank != s->rank))) return 0;
  return 1;
}

static const char *mgopt__exw_bss(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt__mq_form f;
  mgopt_dtype qdt;
  MGOPT__UNUSED(p);
  if (mgopt__mq_float_data(op)) return NULL;
  if (!mgopt__mq_bss(op, &f)) return "a scale or offset that DequantizeLinear cannot express";
  qdt = (mgopt_dtype)f.q->dtype;
  if (qdt != MGOPT_DT_INT8 && qdt != MGOPT_DT_UINT8 && !mgopt__mq_4bit(qdt)) return "data neither 8- nor 4-bit";
  if (f.s->dtype != MGOPT_DT_FP32 && f.s->dtype != MGOPT_DT_FP16) return "a scale neither fp32 nor fp16";
  if ((mgopt__mq_4bit(qdt) || f.kind == 2) && m->since < 21) return "4-bit or blocked DequantizeLinear needs opset 21";
  return NULL;
}

/* A view of t with another dtype tag and shape (same bytes). */
static mgopt_tensor *mgopt__mq_view(mgopt_program *p, mgopt_tensor *t, mgopt_dtype dt, int32_t rank,
                                    const int64_t *shape) {
  const void *data = mgopt_tensor_data(p, t);
  return data ? mgopt_tensor_new_borrowed(p, dt, rank, shape, data, t->nbytes) : NULL;
}

static mgopt_dtype mgopt__mq_onnx_int(mgopt_dtype dt) {
  return dt == MGOPT_DT_INT4 ? MGOPT_DT_INT4X : dt == MGOPT_DT_UINT4 ? MGOPT_DT_UINT4X : dt;
}

/* t (shape of the scale) repeated to the data's shape on every axis but the
   blocked one, as dtype dt (integers: element values; floats: as stored). */
static mgopt_tensor *mgopt__mq_expand(mgopt_program *p, mgopt_tensor *t, const mgopt__mq_form *f, mgopt_dtype dt) {
  int64_t shape[MGOPT_MAX_RANK], i;
  int32_t d, r = f->q->rank;
  mgopt_tensor *o;
  for (d = 0; d < r; d++) shape[d] = d == f->axis ? t->shape[d] : f->q->shape[d];
  o = mgopt_tensor_new(p, dt, r, shape);
  if (!o) return NULL;
  for (i = 0; i < o->numel; i++) {
    int64_t rem = i, src = 0, stride = 1;
    for (d = r - 1; d >= 0; d--) {
      int64_t c = rem % shape[d];
      rem /= shape[d];
      if (t->shape[d] != 1) src += c * stride;
      stride *= t->shape[d];
    }
    if (mgopt_dtype_is_float(dt)) mgopt_tensor_set_f64(o, i, mgopt_tensor_get_f64(t, src));
    else mgopt_tensor_set_i64(o, i, mgopt_tensor_get_i64(t, src));
  }
  return o;
}

/* 1 when every reader of v writes its constants itself (v is never written
   under its own name by the graph's initializer writer). */
static int mgopt__mq_only_ours(const mgopt_value *v) {
  const mgopt_use *u;
  for (u = v->uses; u; u = u->next)
    if (!u->op || !mgopt__exp_writes_consts(u->op)) return 0;
  return v->uses != NULL;
}

static int mgopt__mq_same_init(const mgopt_onnx_tensor *a, const mgopt_onnx_tensor *b) {
  int64_t d;
  if (a->data_type != b->data_type || a->ndims != b->ndims || !a->raw_data.len || a->raw_data.len != b->raw_data.len ||
      a->data_location != b->data_location)
    return 0;
  for (d = 0; d < a->ndims; d++)
    if (a->dims[d] != b->dims[d]) return 0;
  return memcmp(a->raw_data.ptr, b->raw_data.ptr, (size_t)a->raw_data.len) == 0;
}

/* A short name no value of the model holds: "q" and a counter in base 36.
   The writer's intermediate values and tables take these: names repeated
   in every decode node cost bytes (a long exported name ten times per
   weight, say). */
static const char *mgopt__mq_short(mgopt__exp *E) {
  static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  const char *key = mgopt_program_intern_cstr(E->p, "q~");
  mgopt__map_slot *sl = key ? mgopt__map_get(&E->fresh, mgopt__map_ptr_key(key), NULL) : NULL;
  if (!sl) return NULL;
  for (;;) {
    char buf[24], rev[16];
    int n = 0, k = 0, r;
    uint64_t c = sl->v.u++;
    const char *nm;
    do {
      rev[k++] = digits[c % 36];
      c /= 36;
    } while (c);
    buf[n++] = 'q';
    while (k) buf[n++] = rev[--k];
    buf[n] = 0;
    nm = mgopt_program_intern_cstr(E->p, buf);
    if (!nm) return NULL;
    r = mgopt__exp_claim(E, nm);
    if (r < 0) return NULL;
    if (r) return nm;
  }
}

/* An initializer of the main graph holding *enc's bytes already: its name, else NULL. */
static const char *mgopt__mq_find(mgopt__exp *E, const mgopt_onnx_tensor *enc) {
  int64_t i;
  int64_t j;
  for (i = 0; i < E->g->inits.n; i++) {
    const mgopt_onnx_tensor *w = (const mgopt_onnx_tensor *)E->g->inits.data + i;
    int input = 0;
    if (!mgopt__mq_same_init(w, enc)) continue;
    /* an initializer that is also a graph input is a default the caller may replace */
    for (j = 0; j < E->g->inputs.n && !input; j++)
      input = ((const mgopt_onnx_value_info *)E->g->inputs.data)[j].name.ptr == w->name.ptr;
    if (!input) return w->name.ptr; /* names are interned, NUL-terminated */
  }
  return NULL;
}

/* An initializer holding t, named `name` or (NULL) a short name, shared
   with an initializer of the same dtype, shape and bytes written before
   (initializers are immutable: every reader sees the same values). In a
   graph that holds no initializers a Constant node. Returns the name. */
static const char *mgopt__mq_table(mgopt__exp *E, mgopt_tensor *t, const char *name) {
  mgopt_onnx_tensor *ot, tmp;
  const char *found;
  if (!t) return NULL;
  if (!E->g->inits_ok) return mgopt__exp_const(E, name ? name : "q", t);
  memset(&tmp, 0, sizeof tmp);
  if (mgopt__exp_tensor(E, t, "", &tmp)) return NULL;
  if ((found = mgopt__mq_find(E, &tmp)) != NULL) return found;
  if (!name && !(name = mgopt__mq_short(E))) return NULL;
  ot = (mgopt_onnx_tensor *)mgopt__exv_push(E, &E->g->inits, sizeof(mgopt_onnx_tensor));
  if (!ot) return NULL;
  *ot = tmp;
  ot->name.ptr = name;
  ot->name.len = strlen(name);
  return name;
}

/* The int64 vector v[0..n) as a shared initializer (see mgopt__mq_table). */
static const char *mgopt__mq_i64s(mgopt__exp *E, const int64_t *v, int64_t n) {
  mgopt_tensor *t = mgopt_tensor_new(E->p, MGOPT_DT_INT64, 1, &n);
  if (!t) return NULL;
  if (n) memcpy(t->data, v, sizeof(int64_t) * (size_t)n);
  return mgopt__mq_table(E, t, NULL);
}

/* An initializer holding t for operand v: shared when the same bytes were
   written before; else named v's own name when that is short (at most 16
   bytes) and only constant-writing readers read v (the name is v's,
   claimed for it, and not yet written), else a short name. Returns the
   name. */
static const char *mgopt__mq_const(mgopt__exp *E, const mgopt_value *v, mgopt_tensor *t) {
  const char *own = v && v->name && *v->name && strlen(v->name) <= 16 && mgopt_value_const(v) && mgopt__mq_only_ours(v)
                        ? v->name
                        : NULL;
  int64_t i;
  for (i = 0; own && i < E->g->inits.n; i++)
    if (((const mgopt_onnx_tensor *)E->g->inits.data)[i].name.ptr == own) own = NULL; /* taken by another form of v */
  return mgopt__mq_table(E, t, own);
}

/* A node of `type` reading ins, writing one value with a short name; its name. */
static const char *mgopt__mq_node(mgopt__exp *E, const char *type, const char *const *ins, int64_t nin,
                                  mgopt_onnx_node **np) {
  const char *nm = mgopt__mq_short(E);
  mgopt_onnx_node *n = nm ? mgopt__exp_node(E, type, "", NULL) : NULL;
  if (!n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, ins, nin) ||
      !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &nm, 1))
    return NULL;
  if (np) *np = n;
  return nm;
}

/* The last node of a decode, writing op's output: no node name (the value
   keeps its name; the node's would repeat it). */
static mgopt_onnx_node *mgopt__mq_last(mgopt__exp *E, const mgopt_op *op, const char *type, const char *const *ins,
                                       int64_t nin) {
  mgopt_onnx_node *n = mgopt__exp_simple(E, op, type, ins, nin);
  if (n) {
    n->name.ptr = "";
    n->name.len = 0;
  }
  return n;
}

/* Writes out = scale * (data - offset) in form f: data, scale and offset
   written as initializers for the operands dv, sv, zv (mgopt__mq_const). */
static mgopt_status mgopt__mq_write(mgopt__exp *E, const mgopt_op *op, const mgopt__mq_form *f, const mgopt_value *dv,
                                    const mgopt_value *sv, const mgopt_value *zv) {
  mgopt_program *p = E->p;
  const char *ins[3];
  mgopt_dtype qdt = (mgopt_dtype)f->q->dtype, odt = mgopt__mq_onnx_int(qdt);
  mgopt_onnx_node *n;
  ins[0] = mgopt__mq_const(E, dv, mgopt__mq_view(p, f->q, odt, f->q->rank, f->q->shape));
  if (!ins[0]) return mgopt__exp_nomem(E);
  if (mgopt__mq_use_dq(f, E->opset)) {
    int64_t c = f->kind == 1 ? f->s->shape[f->axis] : 1;
    mgopt_tensor *st, *zt = NULL;
    if (f->kind == 2) {
      st = mgopt__mq_expand(p, f->s, f, (mgopt_dtype)f->s->dtype);
      if (f->z) zt = mgopt__mq_expand(p, f->z, f, odt);
    } else {
      st = mgopt__mq_view(p, f->s, (mgopt_dtype)f->s->dtype, f->kind, &c);
      if (f->z) zt = mgopt__mq_view(p, f->z, odt, f->kind, &c);
    }
    ins[1] = mgopt__mq_const(E, sv, st);
    ins[2] = f->z ? mgopt__mq_const(E, zv, zt) : NULL;
    if (!ins[1] || (f->z && !ins[2])) return mgopt__exp_nomem(E);
    n = mgopt__mq_last(E, op, "DequantizeLinear", ins, f->z ? 3 : 2);
    if (!n) return mgopt__exp_nomem(E);
    if (f->kind >= 1 && !mgopt__exp_aint(E, n, "axis", f->axis)) return mgopt__exp_nomem(E);
    if (f->kind == 2 && !mgopt__exp_aint(E, n, "block_size", f->block)) return mgopt__exp_nomem(E);
    return mgopt__exp_done(E, n);
  } else {
    /* Cast(data) [- offset] * scale, in the scale's dtype */
    mgopt_dtype fdt = (mgopt_dtype)f->s->dtype;
    const char *cur, *io[2];
    const char *sname = mgopt__mq_const(E, sv, f->s);
    mgopt_onnx_node *cn = NULL;
    cur = sname ? mgopt__mq_node(E, "Cast", ins, 1, &cn) : NULL;
    if (!cur || !mgopt__exp_aint(E, cn, "to", mgopt__exp_dtype(fdt))) return mgopt__exp_nomem(E);
    if (f->z) {
      mgopt_tensor *zf = mgopt_tensor_new(p, fdt, f->z->rank, f->z->shape);
      int64_t i;
      if (!zf) return mgopt__exp_nomem(E);
      for (i = 0; i < zf->numel; i++) mgopt_tensor_set_f64(zf, i, (double)mgopt_tensor_get_i64(f->z, i));
      io[0] = cur;
      io[1] = mgopt__mq_const(E, zv, zf);
      cur = io[1] ? mgopt__mq_node(E, "Sub", io, 2, NULL) : NULL;
      if (!cur) return mgopt__exp_nomem(E);
    }
    io[0] = cur;
    io[1] = sname;
    n = mgopt__mq_last(E, op, "Mul", io, 2);
    return n ? mgopt__exp_done(E, n) : mgopt__exp_nomem(E);
  }
}

static mgopt_status mgopt__exp_float_data(mgopt__exp *E, const mgopt_op *op) {
  const char *io[2];
  mgopt_onnx_node *n;
  io[0] = mgopt__exp_in(op, "data");
  if (mgopt_op_operand(op, "offset")) {
    io[1] = mgopt__exp_in(op, "offset");
    io[0] = mgopt__mq_node(E, "Sub", io, 2, NULL);
    if (!io[0]) return mgopt__exp_nomem(E);
  }
  io[1] = mgopt__exp_in(op, "scale");
  n = mgopt__mq_last(E, op, "Mul", io, 2);
  return n ? mgopt__exp_done(E, n) : mgopt__exp_nomem(E);
}

static mgopt_status mgopt__exp_bss(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt__mq_form f;
  MGOPT__UNUSED(m);
  if (mgopt__mq_float_data(op)) return mgopt__exp_float_data(E, op);
  mgopt__mq_bss(op, &f);
  return mgopt__mq_write(E, op, &f, mgopt_op_operand(op, "data"), mgopt_op_operand(op, "scale"),
                         mgopt_op_operand(op, "offset"));
}

/* ---------------------------------------------------------------- constexpr_affine_dequantize

   out = scale * (quantized_data - zero_point) with a scalar or a vector
   along `axis`: the per-tensor or per-axis form of
   constexpr_blockwise_shift_scale above, written by the same code (the
   scale and zero point seen with the data's rank). A zero point of all
   zeros is left out (DequantizeLinear's default); a float one is not
   written. */

/* t (rank 0 or a vector along axis) seen with rank r: 1 everywhere but axis. */
static mgopt_tensor *mgopt__mq_at_axis(mgopt_program *p, mgopt_tensor *t, int32_t r, int32_t axis,
                                       mgopt_dtype dt) {
  int64_t shape[MGOPT_MAX_RANK];
  int32_t d;
  for (d = 0; d < r; d++) shape[d] = d == axis ? t->numel : 1;
  return mgopt__mq_view(p, t, dt, r, shape);
}

/* The form of affine op `op`; p NULL only checks (no views are made). */
static int mgopt__mq_affine(mgopt_program *p, const mgopt_op *op, mgopt__mq_form *f) {
  mgopt_tensor *q = mgopt_value_const(mgopt_op_operand(op, "quantized_data"));
  mgopt_tensor *s = mgopt_value_const(mgopt_op_operand(op, "scale"));
  mgopt_tensor *z = mgopt_value_const(mgopt_op_operand(op, "zero_point"));
  int64_t axis = mgopt_op_get_int(op, "axis", 0), n, i, zeros = 1;
  memset(f, 0, sizeof *f);
  if (!q || !s || !z || q->rank < 1 || s->rank > 1 || z->rank > 1) return 0;
  if (q->dtype != MGOPT_DT_INT8 && q->dtype != MGOPT_DT_UINT8) return 0;
  if ((s->dtype != MGOPT_DT_FP32 && s->dtype != MGOPT_DT_FP16) || z->dtype != q->dtype) return 0;
  if (axis < -q->rank || axis >= q->rank) return 0;
  if (axis < 0) axis += q->rank;
  n = s->numel > z->numel ? s->numel : z->numel;
  if ((s->numel != 1 && s->numel != q->shape[axis]) || (z->numel != 1 && z->numel != q->shape[axis])) return 0;
  if (!mgopt_tensor_data(p ? p : op->parent->program, z)) return 0;
  for (i = 0; i < z->numel && zeros; i++) zeros = mgopt_tensor_get_i64(z, i) == 0;
  /* a scalar zero point beside a vector scale would need its own copy per channel */
  if (!zeros && n > 1 && z->numel != s->numel) return 0;
  f->kind = n > 1 ? 1 : 0;
  f->axis = (int32_t)axis;
  if (!p) {
    f->q = q;
    return 1;
  }
  f->q = q;
  f->s = mgopt__mq_at_axis(p, s, q->rank, f->axis, (mgopt_dtype)s->dtype);
  f->z = zeros ? NULL : mgopt__mq_at_axis(p, z, q->rank, f->axis, (mgopt_dtype)z->dtype);
  return f->s && (zeros || f->z);
}

static const char *mgopt__exw_affine(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt__mq_form f;
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt__mq_affine(NULL, op, &f) ? NULL : "a zero point or scale DequantizeLinear cannot express";
}

static mgopt_status mgopt__exp_affine(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt__mq_form f;
  MGOPT__UNUSED(m);
  if (!mgopt__mq_affine(E->p, op, &f)) return mgopt__exp_nomem(E);
  return mgopt__mq_write(E, op, &f, mgopt_op_operand(op, "quantized_data"), mgopt_op_operand(op, "scale"),
                         mgopt_op_operand(op, "zero_point"));
}

/* ---------------------------------------------------------------- QuantizeLinear / DequantizeLinear

   QuantizeLinear(x, scale[, zp]) <-> quantize(input, scale[, zero_point],
   axis?, output_dtype): saturate(round_half_even(x / scale) + zp), and
   DequantizeLinear(x, scale[, zp]) <-> dequantize(input, scale[,
   zero_point], axis?): (x - zp) * scale, at the scale's dtype. The same
   arithmetic (the kernels compute in float and round once); mapped only
   where it is exactly that:
   - integers int8 / uint8 (every opset), int16 / uint16 (from opset 21);
     4-bit integers, int32 and float8 do not (4-bit constants: below);
   - QuantizeLinear: x and scale fp32 (fp16 would divide at fp16 in the
     kernel, in float in ONNX Runtime); DequantizeLinear: scale fp32, or
     fp16 from opset 19;
   - the scale a scalar (per tensor), or from opset 13 a vector along
     `axis` (default 1) as long as the data's dim (the scale's length 1
     needs the dim 1: ONNX Runtime reads a 1-element vector per tensor);
     the zero point of the scale's shape;
   - no block_size (dequantize has no blocks; blocked constants: below), no
     attribute this list does not know (opset 23's output_dtype of
     DequantizeLinear, say).
   Written back in the target opset: per tensor from 10, per axis from 13,
   an fp16 scale (dequantize only) from 19, 16-bit from 21; an output dtype other than uint8 without a
   zero point gets a zero point of zeros (QuantizeLinear's output dtype is
   the zero point's). */

/* ---------------------------------------------------------------- integer forms left opaque

   DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul and
   QLinearConv have no mapping: no composition of canonical ops computes
   the same numbers, so each stays an opaque node (written back as it was
   read) and is evaluated by its own kernel (src/kernels/onnx_quant.c).
   - DynamicQuantizeLinear computes its scale and zero point from the data.
     Its canonical form would be its ONNX function body (reduce_min /
     reduce_max, minimum / maximum with 0, sub, real_div by 255, clip,
     round, cast, quantize). On x = [0, 0] (a ReLU output, say) the body
     gives y_scale = 0 and a zero point of round(0 / 0) = NaN, and quantize
     divides by 0; the operator gives y_scale = 1/255 (ONNX's reference;
     ONNX Runtime gives 1.0) and zero point 0.
   - MatMulInteger / ConvInteger, followed by Cast and Mul by
     a_scale * b_scale (what dynamic quantizers write), against
     dequantize(a) and dequantize(b) into a fp32 matmul / conv: the integer
     form sums exactly (int32) and rounds twice (Cast, Mul); the float form
     rounds every product and every partial sum, in the runtime's order.
     With every scale 1 and zero points 0 (a) and -128 (b), K = 262 terms
     258 * (255 * 255) + 7 * 73 + 255 * 1 = 2^24, then 1 * 1 twice: the
     integer form gives 16777218, an fp32 sum in index order 16777216
     (2^24 + 1 rounds to 2^24, twice). And the int32 accumulator may wrap
     (ONNX allows it; from 33026 terms of 255 * 255), a float sum does not.
     The forms agree only when every dequantized value and partial sum is
     exact in fp32 (power-of-two scales, K * 255 * 255 < 2^24): a dynamic
     scale (range / 255) is data, never known to be one.
   - QLinearMatMul / QLinearConv against dequantize -> matmul / conv ->
     quantize: the operator rounds acc * fp32(fp32(a_scale * b_scale) /
     y_scale) once; the chain rounds the dequantized values, the float sum
     and the division by y_scale. With a_scale = b_scale = y_scale = 0.1
     (fp32), zero points 0, a = [[1]], b = [[5]]: the operator gives
     round(5 * 0.10000000894) = 1, the chain quantize(fp32(0.1 * 0.5)) =
     round(0.5) = 0 (tests/unit/test_onnx_int_ops.c runs both). */

static int mgopt__mq_qint(mgopt_dtype dt, int64_t opset) {
  if (dt == MGOPT_DT_INT8 || dt == MGOPT_DT_UINT8) return 1;
  return opset >= 21 && (dt == MGOPT_DT_INT16 || dt == MGOPT_DT_UINT16);
}

/* The static length of a rank-1 value, -1 when it is not one. */
static int64_t mgopt__mq_len(const mgopt_value *v) {
  if (!v || v->type.kind != MGOPT_TYPE_TENSOR || v->type.rank != 1 || !mgopt_dim_is_static(v->type.dims[0])) return -1;
  return v->type.dims[0].v;
}

/* Reads node I->node's scale and zero point: 1 with *axis (-1: per tensor)
   when they are a form the canonical ops share with ONNX, else 0. */
static int mgopt__imp_qparams(mgopt__imp *I, const mgopt__onnx_map *m, mgopt_value *x, mgopt_value *s,
                              mgopt_value *z, int64_t *axis) {
  static const char *const known[] = {"axis", "saturate", "block_size", "output_dtype"};
  int64_t i, k, r = mgopt__imp_rank(x), n;
  for (i = 0; i < I->node->nattributes; i++) {
    for (k = 0; k < 4; k++)
      if (mgopt__imp_streq(I->node->attributes[i].name, known[k])) break;
    if (k == 4 || (k == 3 && strcmp(m->onnx, "QuantizeLinear") != 0)) return 0;
  }
  if (mgopt__imp_aint(I->node, "block_size", 0) != 0 || r < 0 || mgopt__imp_rank(s) < 0) return 0;
  if (z && (mgopt__imp_rank(z) != mgopt__imp_rank(s) || (s->type.rank == 1 && mgopt__mq_len(z) != mgopt__mq_len(s))))
    return 0;
  *axis = -1;
  if (s->type.rank == 0) return 1;
  if (s->type.rank != 1 || m->since < 13 || r < 1) return 0;
  *axis = mgopt__imp_aint(I->node, "axis", 1);
  if (*axis < -r || *axis >= r) return 0;
  if (*axis < 0) *axis += r;
  n = mgopt__mq_len(s);
  if (n < 0) return 0;
  if (n == 1) return mgopt_dim_is_static(x->type.dims[*axis]) && x->type.dims[*axis].v == 1;
  return 1;
}

/* ---------------------------------------------------------------- blocked and 4-bit DequantizeLinear of constants

   From opset 21 DequantizeLinear takes int4 / uint4 data and blocks: with
   block_size B > 0 the scale (and zero point) has the data's rank, the
   data's dims except on `axis`, where it has ceil(D / B), and element i
   along axis uses entry floor(i / B). Of constant data, scale and zero
   point that is constexpr_blockwise_shift_scale exactly: (data - offset) *
   scale with the scale repeated blockwise, at the scale's dtype (the
   difference of two 4- or 8-bit integers is exact in fp16 and fp32, so the
   product is the one rounding on both sides). Mapped when:
   - the data is int8 / uint8 with B > 0, or int4 / uint4 (B >= 0): per
     tensor (scalar scale), per axis (a vector as long as the data's dim on
     axis) or blocked; 8-bit per tensor and per axis keep the dequantize
     mapping above;
   - the blocks divide the axis (B * ceil(D / B) == D; a short last block
     has no canonical form), and the form the writer reads back from the
     canonical shapes is the same (kind, axis, block): B == D or B == 1,
     and a per-axis vector of length 1, stay as they came;
   - the scale fp32 or fp16; no attribute but axis and block_size.
   The data keeps its bytes (4-bit: ONNX's packing is the IR's, two per
   byte, low nibble first); a per-tensor or per-axis scale and zero point are
   seen with the data's rank. Non-constant data stays opaque: dequantize
   has no blocks and no 4-bit input. */

static mgopt_dtype mgopt__mq_ir_int(mgopt_dtype dt) {
  return dt == MGOPT_DT_INT4X ? MGOPT_DT_INT4 : dt == MGOPT_DT_UINT4X ? MGOPT_DT_UINT4 : dt;
}

/* 1 when nm names an input or output of the main graph. */
static int mgopt__imp_dq_io(const mgopt__imp *I, const char *nm) {
  int64_t i;
  const mgopt_onnx_graph *g = I->m ? I->m->graph : NULL;
  for (i = 0; g && i < g->ninputs; i++)
    if (mgopt__imp_streq(g->inputs[i].name, nm)) return 1;
  for (i = 0; g && i < g->noutputs; i++)
    if (mgopt__imp_streq(g->outputs[i].name, nm)) return 1;
  return !g;
}

/* v's constant as dtype dt and shape (r, shape): v itself when both are
   its own, else a new const holding a view of the same bytes. In the main
   graph the view takes v's name and v a fresh one (unless v's name is an
   input's or output's), so the initializer is written back under its own
   name; later readers of the name still read v. */
static mgopt_value *mgopt__imp_dq_view(mgopt__imp *I, mgopt_value *v, mgopt_dtype dt, int32_t r, const int64_t *shape,
                                       const char *what) {
  mgopt_tensor *t = mgopt_value_const(v);
  mgopt_value *nv;
  int32_t d;
  int same = t->dtype == (uint8_t)dt && t->rank == r;
  for (d = 0; same && d < r; d++) same = t->shape[d] == shape[d];
  if (same) return v;
  nv = mgopt__imp_const(I, NULL, what, mgopt__mq_view(I->p, t, dt, r, shape));
  if (nv && I->depth == 0 && v->name && *v->name && !mgopt__imp_dq_io(I, v->name)) {
    const char *own = v->name;
    v->name = nv->name;
    nv->name = own;
  }
  return nv;
}

/* 1 mapped, 0 not this form, -1 error. */
static int mgopt__imp_dq_const(mgopt__imp *I, mgopt_value *x, mgopt_value *s, mgopt_value *z) {
  mgopt_tensor *qt = mgopt_value_const(x), *st = mgopt_value_const(s), *zt = z ? mgopt_value_const(z) : NULL;
  int64_t block = mgopt__imp_aint(I->node, "block_size", 0), axis = mgopt__imp_aint(I->node, "axis", 1);
  int64_t cs[MGOPT_MAX_RANK];
  int64_t i;
  int32_t d, r;
  int kind;
  mgopt_dtype xdt, qdt;
  mgopt__mq_form f;
  mgopt_value *dv, *sv, *zv = NULL;
  mgopt_op *op;
  if (!qt || !st || (z && !zt) || qt->rank < 1 || !mgopt_tensor_data(I->p, qt)) return 0;
  for (i = 0; i < I->node->nattributes; i++)
    if (!mgopt__imp_streq(I->node->attributes[i].name, "axis") && !mgopt__imp_streq(I->node->attributes[i].name, "block_size"))
      return 0;
  xdt = (mgopt_dtype)qt->dtype;
  qdt = mgopt__mq_ir_int(xdt);
  if (block < 0 || (block == 0 && !mgopt__mq_4bit(qdt))) return 0;
  if (qdt != MGOPT_DT_INT8 && qdt != MGOPT_DT_UINT8 && !mgopt__mq_4bit(qdt)) return 0;
  if (st->dtype != MGOPT_DT_FP32 && st->dtype != MGOPT_DT_FP16) return 0;
  if (zt && (zt->dtype != (uint8_t)xdt || zt->rank != st->rank)) return 0;
  for (d = 0; zt && d < st->rank; d++)
    if (zt->shape[d] != st->shape[d]) return 0;
  r = qt->rank;
  if (st->rank && (axis < -r || axis >= r)) return 0; /* a scalar scale ignores axis */
  if (axis < 0) axis += r;
  for (d = 0; d < r; d++) cs[d] = 1;
  if (block > 0) {
    if (st->rank != r) return 0;
    for (d = 0; d < r; d++) {
      if (d == axis ? st->shape[d] * block != qt->shape[d] : st->shape[d] != qt->shape[d]) return 0;
      cs[d] = st->shape[d];
    }
    kind = 2;
  } else if (st->rank == 0) {
    kind = 0;
  } else {
    if (st->rank != 1 || st->shape[0] != qt->shape[axis]) return 0;
    cs[axis] = st->shape[0];
    kind = 1;
  }
  /* the writer must read the same form back from the canonical shapes */
  memset(&f, 0, sizeof f);
  if (!mgopt__mq_shapes(r, qt->shape, cs, &f) || f.kind != kind || (kind && f.axis != axis) ||
      (kind == 2 && f.block != block))
    return 0;
  dv = mgopt__imp_dq_view(I, x, qdt, r, qt->shape, "data");
  sv = dv ? mgopt__imp_dq_view(I, s, (mgopt_dtype)st->dtype, r, cs, "scale") : NULL;
  if (z && sv) zv = mgopt__imp_dq_view(I, z, qdt, r, cs, "offset");
  if (!sv || (z && !zv)) return -1;
  op = mgopt__imp_op(I, "constexpr_blockwise_shift_scale", 1, 0);
  if (!op || mgopt_op_set_operand(op, "data", dv) || mgopt_op_set_operand(op, "scale", sv) ||
      (zv && mgopt_op_set_operand(op, "offset", zv)))
    return -1;
  return mgopt__imp_done(I, op);
}

static int mgopt__imp_qdq(mgopt__imp *I, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt__imp_in(I, 0), *s = mgopt__imp_in(I, 1), *z = mgopt__imp_in(I, 2);
  int quant = m->kind == MGOPT_OP_quantize;
  int64_t axis;
  mgopt_dtype qdt;
  mgopt_op *op;
  if (!x || !s || (mgopt__imp_nin(I->node) > 2 && !z)) return 0;
  if (!quant && m->since >= 21) {
    int r = mgopt__imp_dq_const(I, x, s, z);
    if (r) return r;
  }
  if (!mgopt__imp_qparams(I, m, x, s, z, &axis)) return 0;
  if (quant) {
    int64_t odt = mgopt__imp_aint(I->node, "output_dtype", 0);
    if (x->type.dtype != MGOPT_DT_FP32 || s->type.dtype != MGOPT_DT_FP32) return 0;
    qdt = z ? (mgopt_dtype)z->type.dtype : odt ? mgopt_onnx_dtype((int32_t)(odt > 64 ? 0 : odt)) : MGOPT_DT_UINT8;
    if (odt && z && mgopt_onnx_dtype((int32_t)(odt > 64 ? 0 : odt)) != qdt) return 0;
  } else {
    qdt = (mgopt_dtype)x->type.dtype;
    if (s->type.dtype != MGOPT_DT_FP32 && !(s->type.dtype == MGOPT_DT_FP16 && m->since >= 19)) return 0;
    if (z && z->type.dtype != (uint8_t)qdt) return 0;
  }
  if (!mgopt__mq_qint(qdt, m->since)) return 0;
  op = mgopt__imp_op(I, quant ? "quantize" : "dequantize", 1, 0);
  if (!op || mgopt_op_set_operand(op, "input", x) || mgopt_op_set_operand(op, "scale", s) ||
      (z && mgopt_op_set_operand(op, "zero_point", z)) || (axis >= 0 && mgopt_op_set_int(op, "axis", axis)) ||
      (quant && mgopt_op_set_string(op, "output_dtype", mgopt_dtype_name(qdt))))
    return -1;
  return mgopt__imp_done(I, op);
}

/* The integer dtype of a quantize's result or a dequantize's input. */
static mgopt_dtype mgopt__mq_op_int(const mgopt_op *op) {
  size_t len = 0;
  const char *ods;
  mgopt_value *x;
  if (op->kind == MGOPT_OP_quantize) {
    ods = mgopt_op_get_string(op, "output_dtype", &len);
    return ods ? mgopt_dtype_from_name(ods, len) : MGOPT_DT_UNKNOWN;
  }
  x = mgopt_op_operand(op, "input");
  return x && x->type.kind == MGOPT_TYPE_TENSOR ? (mgopt_dtype)x->type.dtype : MGOPT_DT_UNKNOWN;
}

static const char *mgopt__exw_qdq(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "input"), *s = mgopt_op_operand(op, "scale"), *z = mgopt_op_operand(op, "zero_point");
  mgopt_dtype qdt = mgopt__mq_op_int(op);
  int sr = mgopt__imp_rank(s);
  MGOPT__UNUSED(p);
  if (!x || !s || x->type.kind != MGOPT_TYPE_TENSOR) return "an operand is missing";
  if (!mgopt__mq_qint(qdt, m->since)) return m->since < 21 ? "integers other than int8 / uint8 need opset 21" : "integers other than 8 or 16 bits";
  if (s->type.dtype != MGOPT_DT_FP32 && !(s->type.dtype == MGOPT_DT_FP16 && m->since >= 19))
    return m->since < 19 ? "a scale other than fp32 needs opset 19" : "a scale neither fp32 nor fp16";
  if (op->kind == MGOPT_OP_quantize && (x->type.dtype != MGOPT_DT_FP32 || s->type.dtype != MGOPT_DT_FP32))
    return "a quantize of fp16 (the canonical op divides at fp16, ONNX Runtime in float)";
  if (z && z->type.dtype != (uint8_t)qdt) return "a zero point of another dtype than the integers";
  if (sr == 1 && m->since < 13) return "a per-axis scale needs opset 13";
  if (sr == 1 && !mgopt_op_attr(op, "axis") && !mgopt_op_operand(op, "axis") && x->type.rank != 1) return "a vector scale without axis";
  if (sr != 0 && sr != 1) return "a scale of rank other than 0 or 1";
  if (z && (mgopt__imp_rank(z) != sr || (sr == 1 && mgopt__mq_len(z) != mgopt__mq_len(s))))
    return "a zero point not of the scale's shape";
  if (op->kind == MGOPT_OP_quantize && !z && qdt != MGOPT_DT_UINT8 && sr == 1 && mgopt__mq_len(s) < 0)
    return "no zero point and a scale of unknown length";
  return NULL;
}

static mgopt_status mgopt__exp_qdq(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_value *x = mgopt_op_operand(op, "input"), *s = mgopt_op_operand(op, "scale");
  const char *ins[3];
  int64_t nin = 2;
  mgopt_onnx_node *n;
  ins[0] = mgopt__exp_vname(x);
  ins[1] = mgopt__exp_vname(s);
  ins[2] = mgopt__exp_in(op, "zero_point");
  if (ins[2]) {
    nin = 3;
  } else if (op->kind == MGOPT_OP_quantize && mgopt__mq_op_int(op) != MGOPT_DT_UINT8) {
    /* the output dtype is the zero point's: zeros of the scale's shape */
    int64_t len = mgopt__mq_len(s);
    mgopt_tensor *zt = mgopt_tensor_new(E->p, mgopt__mq_op_int(op), s->type.rank, &len);
    char buf[200];
    int r;
    snprintf(buf, sizeof buf, "%.150s_zero_point", mgopt__exp_vname(op->outs[0]));
    ins[2] = zt ? mgopt_program_intern_cstr(E->p, buf) : NULL;
    r = ins[2] ? mgopt__exp_claim(E, ins[2]) : -1;
    if (r < 0 || (!r && !(ins[2] = mgopt__exp_fresh(E, ins[2])))) return mgopt__exp_nomem(E);
    memset(mgopt_tensor_data_mut(E->p, zt), 0, zt->nbytes);
    ins[2] = mgopt__exp_const(E, ins[2], zt);
    if (!ins[2]) return mgopt__exp_nomem(E);
    nin = 3;
  }
  n = mgopt__exp_simple(E, op, m->onnx, ins, nin);
  if (!n) return mgopt__exp_nomem(E);
  if (mgopt__imp_rank(s) == 1 && !mgopt__exp_aint(E, n, "axis", mgopt_op_get_int(op, "axis", 0))) return mgopt__exp_nomem(E);
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- constexpr_lut_to_dense

   Palettized weights: the LUT and the packed indices as initializers, the
   indices unpacked and looked up with standard ops (opset >= 7):
     packed: uint8 [M, 1], k = 8 / b indices per byte, LSB first
     Cast(to int32) -> Div by [1, 2^b, .., 2^(b(k-1))] -> Mod 2^b   (b < 8;
       at opset 9, without Mod: MatMul by the int32 [k, k] matrix with 1 on
       the diagonal and -2^b below it, v_i - 2^b v_(i+1), exact; at opsets 7
       and 8, without an int32 MatMul: v - (v / 2^b) * 2^b)
       -> Reshape to the indices' shape (Slice first when M * k > N)
     [Add the offset of each element's palette: (palette number) * 2^b,
      a small int32 tensor broadcasting along the grouped dims]
     Gather(LUT as [palettes * 2^b] or [palettes * 2^b, V], axis 0)
     [vectors of V entries (vector_axis): Transpose and Reshape them in place]
   b is the index width: 1, 2, 4 and 8 as they come (the IR packs indices
   the same way); 3-bit indices are written 4-bit and 6-bit ones 8-bit
   (unpacking across bytes would cost more ops than the bits save).
   From opset 21, 4-bit (and 3-bit) indices are a uint4 initializer in the
   indices' own shape (ONNX packs two per byte, low nibble first: the same
   bytes), decoded by the Cast alone:
     uint4 [indices' shape] -> Cast(to int32) [-> Add] -> Gather
   1- and 2-bit indices keep the packed uint8 form at every opset (as uint4
   they would take two or four times the bytes). Both IR
   forms are written: iOS16 (uint8 bytes, a rank-1 LUT, `shape`) and iOS18
   (uint{n} indices, LUT [palettes per dim.., 2^n, V]). Exact: the same
   table entries land at the same places. The file holds about b/8 bytes
   per weight element plus the tables. */

typedef struct mgopt__ml_form {
  mgopt_tensor *idx, *lut; /* idx: uint{n} of shape ishape (a view for the iOS16 form) */
  int32_t rank, vaxis;     /* rank of the indices; vector_axis (-1: none) */
  int64_t ishape[MGOPT_MAX_RANK], groups[MGOPT_MAX_RANK], ngroups, k, vs;
  int nbits;
} mgopt__ml_form;

static int mgopt__ml_bits(mgopt_dtype dt) {
  switch (dt) {
    case MGOPT_DT_UINT1: return 1;
    case MGOPT_DT_UINT2: return 2;
    case MGOPT_DT_UINT3: return 3;
    case MGOPT_DT_UINT4: return 4;
    case MGOPT_DT_UINT6: return 6;
    case MGOPT_DT_UINT8: return 8;
    default: return 0;
  }
}

/* The form of lut op `op`; p NULL only checks (no view is made). */
static int mgopt__ml_lut(mgopt_program *p, const mgopt_op *op, mgopt__ml_form *f) {
  mgopt_tensor *ix = mgopt_value_const(mgopt_op_operand(op, "indices"));
  const int64_t *sv = NULL;
  int64_t ns, n = 1, d, bits;
  memset(f, 0, sizeof *f);
  f->lut = mgopt_value_const(mgopt_op_operand(op, "lut"));
  f->vaxis = -1;
  if (!ix || !f->lut || !mgopt_dtype_nbytes((mgopt_dtype)f->lut->dtype, 1) || mgopt_dtype_bits((mgopt_dtype)f->lut->dtype) < 8)
    return 0;
  ns = mgopt_op_attr(op, "shape") ? mgopt_op_get_ints(p ? p : op->parent->program, op, "shape", &sv) : -1;
  if (ns >= 0) { /* iOS16: packed bytes, a vector of 2^n entries */
    if (ns < 1 || ns > MGOPT_MAX_RANK || ix->dtype != MGOPT_DT_UINT8 || ix->rank != 1 || f->lut->rank != 1) return 0;
    for (f->nbits = 1; f->nbits <= 8 && ((int64_t)1 << f->nbits) != f->lut->numel; f->nbits++) {
    }
    if (f->nbits > 8 || (f->nbits != 1 && f->nbits != 2 && f->nbits != 3 && f->nbits != 4 && f->nbits != 6 && f->nbits != 8))
      return 0;
    f->rank = (int32_t)ns;
    for (d = 0; d < ns; d++) {
      if (sv[d] < 0 || !mgopt__mul_i64(n, sv[d], &n)) return 0;
      f->ishape[d] = sv[d];
      f->groups[d] = 1;
    }
    if (!mgopt__mul_i64(n, f->nbits, &bits) || (bits + 7) / 8 != ix->numel) return 0;
    f->k = f->lut->numel;
    f->vs = 1;
    f->ngroups = 1;
    f->idx = ix;
    if (p) f->idx = mgopt__mq_view(p, ix, mgopt__dtype_lut_index(f->nbits), f->rank, f->ishape);
    return f->idx != NULL;
  }
  f->nbits = mgopt__ml_bits((mgopt_dtype)ix->dtype);
  f->rank = ix->rank;
  if (!f->nbits || f->rank < 1 || f->lut->rank != f->rank + 2) return 0;
  f->k = f->lut->shape[f->rank];
  f->vs = f->lut->shape[f->rank + 1];
  if (f->k != ((int64_t)1 << f->nbits) || f->vs < 1) return 0;
  f->ngroups = 1;
  for (d = 0; d < f->rank; d++) {
    f->ishape[d] = ix->shape[d];
    f->groups[d] = f->lut->shape[d];
    if (f->groups[d] < 1 || ix->shape[d] % f->groups[d]) return 0;
    f->ngroups *= f->groups[d];
  }
  if (f->vs > 1 || mgopt_op_attr(op, "vector_axis")) {
    int64_t va = mgopt_op_get_int(op, "vector_axis", -1 - f->rank);
    if (va < -f->rank || va >= f->rank) return 0;
    f->vaxis = (int32_t)(va < 0 ? va + f->rank : va);
    if (f->vs == 1) f->vaxis = -1;
  }
  f->idx = ix;
  return ix->numel > 0;
}

static const char *mgopt__exw_lut(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt__ml_form f;
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(m);
  return mgopt__ml_lut(NULL, op, &f) ? NULL : "indices and a table that do not agree";
}

static mgopt_status mgopt__exp_lut(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_program *p = E->p;
  mgopt__ml_form f;
  const char *cur, *io[3];
  int64_t n, i, pshape[2], M, kb, lshape[2];
  int b;
  mgopt_tensor *packed, *lut;
  mgopt_onnx_node *nd;
  uint8_t *dst;
  MGOPT__UNUSED(m);
  if (!mgopt__ml_lut(p, op, &f)) return mgopt__exp_nomem(E);
  n = f.idx->numel;
  b = f.nbits == 3 ? 4 : f.nbits == 6 ? 8 : f.nbits;
  kb = 8 / b;
  M = (n + kb - 1) / kb;
  /* the packed indices: as they are, or widened to b bits */
  pshape[0] = M;
  pshape[1] = 1;
  if (b == 4 && E->opset >= 21) { /* uint4 in the indices' shape: Cast unpacks them */
    if (b == f.nbits) {
      packed = mgopt__mq_view(p, f.idx, MGOPT_DT_UINT4X, f.rank, f.ishape);
    } else {
      packed = mgopt_tensor_new(p, MGOPT_DT_UINT4X, f.rank, f.ishape);
      if (!packed || !mgopt_tensor_data(p, f.idx) || !mgopt_tensor_data_mut(p, packed)) return mgopt__exp_nomem(E);
      memset(packed->data, 0, packed->nbytes);
      for (i = 0; i < n; i++) mgopt_tensor_set_i64(packed, i, mgopt_tensor_get_i64(f.idx, i));
    }
  } else if (b == f.nbits) {
    packed = mgopt__mq_view(p, f.idx, MGOPT_DT_UINT8, b == 8 ? f.rank : 2, b == 8 ? f.ishape : pshape);
  } else {
    packed = mgopt_tensor_new(p, MGOPT_DT_UINT8, b == 8 ? f.rank : 2, b == 8 ? f.ishape : pshape);
    if (!packed || !mgopt_tensor_data(p, f.idx) || !(dst = (uint8_t *)mgopt_tensor_data_mut(p, packed)))
      return mgopt__exp_nomem(E);
    memset(dst, 0, packed->nbytes);
    for (i = 0; i < n; i++) dst[i / kb] |= (uint8_t)(mgopt_tensor_get_i64(f.idx, i) << ((i % kb) * b));
  }
  cur = packed ? mgopt__mq_const(E, mgopt_op_operand(op, "indices"), packed) : NULL;
  if (!cur) return mgopt__exp_nomem(E);
  io[0] = cur;
  cur = mgopt__mq_node(E, "Cast", io, 1, &nd);
  if (!cur || !mgopt__exp_aint(E, nd, "to", mgopt__exp_dtype(MGOPT_DT_INT32))) return mgopt__exp_nomem(E);
  if (b < 8 && !(b == 4 && E->opset >= 21)) {
    int64_t dshape = kb, one = 1;
    mgopt_tensor *dv = mgopt_tensor_new(p, MGOPT_DT_INT32, 1, &dshape), *mv = mgopt_tensor_new(p, MGOPT_DT_INT32, 0, &one);
    const char *shp;
    if (!dv || !mv) return mgopt__exp_nomem(E);
    for (i = 0; i < kb; i++) mgopt_tensor_set_i64(dv, i, (int64_t)1 << (i * b));
    mgopt_tensor_set_i64(mv, 0, (int64_t)1 << b);
    io[0] = cur;
    io[1] = mgopt__mq_table(E, dv, NULL);
    cur = io[1] ? mgopt__mq_node(E, "Div", io, 2, NULL) : NULL;
    io[0] = cur;
    io[1] = cur ? mgopt__mq_table(E, mv, NULL) : NULL;
    if (!io[1]) return mgopt__exp_nomem(E);
    if (E->opset >= 10) {
      cur = mgopt__mq_node(E, "Mod", io, 2, NULL);
    } else if (E->opset < 9) { /* no Mod, no int32 MatMul: v - (v / 2^b) * 2^b */
      const char *v = cur, *mod = io[1];
      cur = mgopt__mq_node(E, "Div", io, 2, NULL);
      io[0] = cur;
      io[1] = mod;
      cur = cur ? mgopt__mq_node(E, "Mul", io, 2, NULL) : NULL;
      io[0] = v;
      io[1] = cur;
      cur = cur ? mgopt__mq_node(E, "Sub", io, 2, NULL) : NULL;
    } else { /* no Mod: with v_i = x / 2^(ib), index i is v_i - 2^b v_(i+1), one int32 MatMul by A */
      int64_t ashape[2];
      mgopt_tensor *a;
      ashape[0] = ashape[1] = kb;
      a = mgopt_tensor_new(p, MGOPT_DT_INT32, 2, ashape);
      if (!a || !mgopt_tensor_data_mut(p, a)) return mgopt__exp_nomem(E);
      memset(a->data, 0, a->nbytes);
      for (i = 0; i < kb; i++) {
        mgopt_tensor_set_i64(a, i * kb + i, 1);
        if (i + 1 < kb) mgopt_tensor_set_i64(a, (i + 1) * kb + i, -((int64_t)1 << b));
      }
      io[1] = mgopt__mq_table(E, a, NULL);
      cur = io[1] ? mgopt__mq_node(E, "MatMul", io, 2, NULL) : NULL;
    }
    if (!cur) return mgopt__exp_nomem(E);
    if (M * kb != n) {
      int64_t flat = -1, zero = 0;
      io[0] = cur;
      io[1] = mgopt__mq_i64s(E, &flat, 1);
      cur = io[1] ? mgopt__mq_node(E, "Reshape", io, 2, NULL) : NULL;
      io[0] = cur;
      if (E->opset >= 10) {
        io[1] = cur ? mgopt__mq_i64s(E, &zero, 1) : NULL;
        io[2] = io[1] ? mgopt__mq_i64s(E, &n, 1) : NULL;
        cur = io[2] ? mgopt__mq_node(E, "Slice", io, 3, NULL) : NULL;
      } else if (cur) {
        cur = mgopt__mq_node(E, "Slice", io, 1, &nd);
        if (cur && (!mgopt__exp_aints(E, nd, "starts", &zero, 1) || !mgopt__exp_aints(E, nd, "ends", &n, 1) ||
                    !mgopt__exp_aints(E, nd, "axes", &zero, 1)))
          cur = NULL;
      }
      if (!cur) return mgopt__exp_nomem(E);
    }
    io[0] = cur;
    shp = mgopt__mq_i64s(E, f.ishape, f.rank);
    io[1] = shp;
    cur = shp ? mgopt__mq_node(E, "Reshape", io, 2, NULL) : NULL;
    if (!cur) return mgopt__exp_nomem(E);
  }
  if (f.ngroups > 1) { /* offsets: palette number * 2^n, varying along the grouped dims */
    int64_t oshape[MGOPT_MAX_RANK], idx[MGOPT_MAX_RANK], on = 1;
    int32_t d;
    mgopt_tensor *ot;
    for (d = 0; d < f.rank; d++) {
      oshape[d] = f.groups[d] > 1 ? f.ishape[d] : 1;
      on *= oshape[d];
    }
    ot = mgopt_tensor_new(p, MGOPT_DT_INT32, f.rank, oshape);
    if (!ot) return mgopt__exp_nomem(E);
    for (i = 0; i < on; i++) {
      int64_t rem = i, g = 0;
      for (d = f.rank - 1; d >= 0; d--) {
        idx[d] = rem % oshape[d];
        rem /= oshape[d];
      }
      for (d = 0; d < f.rank; d++) g = g * f.groups[d] + (f.groups[d] > 1 ? idx[d] / (f.ishape[d] / f.groups[d]) : 0);
      mgopt_tensor_set_i64(ot, i, g * f.k);
    }
    io[0] = cur;
    io[1] = mgopt__mq_table(E, ot, NULL);
    cur = io[1] ? mgopt__mq_node(E, "Add", io, 2, NULL) : NULL;
    if (!cur) return mgopt__exp_nomem(E);
  }
  /* the table: [palettes * 2^n] or [palettes * 2^n, V] */
  lshape[0] = f.ngroups * f.k;
  lshape[1] = f.vs;
  lut = mgopt__mq_view(p, f.lut, (mgopt_dtype)f.lut->dtype, f.vs > 1 ? 2 : 1, lshape);
  io[0] = lut ? mgopt__mq_const(E, mgopt_op_operand(op, "lut"), lut) : NULL;
  io[1] = cur;
  if (!io[0]) return mgopt__exp_nomem(E);
  if (f.vs == 1) { /* Gather's axis is 0 by default */
    nd = mgopt__mq_last(E, op, "Gather", io, 2);
    return nd ? MGOPT_OK : mgopt__exp_nomem(E);
  } else { /* [I.., V] -> V after vector_axis -> the output's shape */
    int64_t perm[MGOPT_MAX_RANK + 1], oshape[MGOPT_MAX_RANK];
    int32_t d, j = 0;
    const char *shp;
    cur = mgopt__mq_node(E, "Gather", io, 2, &nd);
    if (!cur || !mgopt__exp_aint(E, nd, "axis", 0)) return mgopt__exp_nomem(E);
    if (f.vaxis != f.rank - 1) {
      for (d = 0; d < f.rank; d++) {
        perm[j++] = d;
        if (d == f.vaxis) perm[j++] = f.rank;
      }
      io[0] = cur;
      cur = mgopt__mq_node(E, "Transpose", io, 1, &nd);
      if (!cur || !mgopt__exp_aints(E, nd, "perm", perm, f.rank + 1)) return mgopt__exp_nomem(E);
    }
    for (d = 0; d < f.rank; d++) oshape[d] = d == f.vaxis ? f.ishape[d] * f.vs : f.ishape[d];
    shp = mgopt__mq_i64s(E, oshape, f.rank);
    io[0] = cur;
    io[1] = shp;
    nd = shp ? mgopt__mq_last(E, op, "Reshape", io, 2) : NULL;
    return mgopt__exp_done(E, nd);
  }
}

MGOPT__PRIVATE int mgopt__exp_writes_consts(const mgopt_op *op) {
  switch (op->kind) {
    case MGOPT_OP_constexpr_blockwise_shift_scale: return !mgopt__mq_float_data(op);
    case MGOPT_OP_constexpr_affine_dequantize: case MGOPT_OP_constexpr_lut_to_dense: return 1;
    default: return 0;
  }
}

static const mgopt__onnx_map mgopt__onnx_quant[] = {
    {"QuantizeLinear", 10, 12, MGOPT_OP_quantize, mgopt__imp_qdq, mgopt__exp_qdq, {NULL, NULL, NULL}, mgopt__exw_qdq},
    {"QuantizeLinear", 13, 18, MGOPT_OP_quantize, mgopt__imp_qdq, mgopt__exp_qdq, {NULL, NULL, NULL}, mgopt__exw_qdq},
    {"QuantizeLinear", 19, 20, MGOPT_OP_quantize, mgopt__imp_qdq, mgopt__exp_qdq, {NULL, NULL, NULL}, mgopt__exw_qdq},
    {"QuantizeLinear", 21, 0, MGOPT_OP_quantize, mgopt__imp_qdq, mgopt__exp_qdq, {NULL, NULL, NULL}, mgopt__exw_qdq},
    {"DequantizeLinear", 10, 12, MGOPT_OP_dequantize, mgopt__imp_qdq, mgopt__exp_qdq, {NULL, NULL, NULL}, mgopt__exw_qdq},
    {"DequantizeLinear", 13, 18, MGOPT_OP_dequantize, mgopt__imp_qdq, mgopt__exp_qdq, {NULL, NULL, NULL}, mgopt__exw_qdq},
    {"DequantizeLinear", 19, 20, MGOPT_OP_dequantize, mgopt__imp_qdq, mgopt__exp_qdq, {NULL, NULL, NULL}, mgopt__exw_qdq},
    {"DequantizeLinear", 21, 0, MGOPT_OP_dequantize, mgopt__imp_qdq, mgopt__exp_qdq, {NULL, NULL, NULL}, mgopt__exw_qdq},
    /* export only: no DequantizeLinear below opset 10, Cast and Mul */
    {"Cast", 1, 9, MGOPT_OP_constexpr_blockwise_shift_scale, NULL, mgopt__exp_bss, {NULL, NULL, NULL}, mgopt__exw_bss},
    {"DequantizeLinear", 10, 20, MGOPT_OP_constexpr_blockwise_shift_scale, NULL, mgopt__exp_bss, {NULL, NULL, NULL},
     mgopt__exw_bss},
    {"DequantizeLinear", 21, 0, MGOPT_OP_constexpr_blockwise_shift_scale, NULL, mgopt__exp_bss, {NULL, NULL, NULL},
     mgopt__exw_bss},
    {"Gather", 7, 0, MGOPT_OP_constexpr_lut_to_dense, NULL, mgopt__exp_lut, {NULL, NULL, NULL}, mgopt__exw_lut},
    {"Cast", 1, 9, MGOPT_OP_constexpr_affine_dequantize, NULL, mgopt__exp_affine, {NULL, NULL, NULL}, mgopt__exw_affine},
    {"DequantizeLinear", 10, 0, MGOPT_OP_constexpr_affine_dequantize, NULL, mgopt__exp_affine, {NULL, NULL, NULL},
     mgopt__exw_affine},
};

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_quant(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_quant);
  return mgopt__onnx_quant;
}
