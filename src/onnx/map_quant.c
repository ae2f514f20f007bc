/* src/onnx/map_quant.c — ONNX <-> canonical mappings of quantized weights: constexpr_blockwise_shift_scale written as an integer initializer with DequantizeLinear (or Cast and Mul). */
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

static int mgopt__mq_bss(const mgopt_op *op, mgopt__mq_form *f) {
  int32_t d, na = 0, nb = 0;
  mgopt_value *zv = mgopt_op_operand(op, "offset");
  memset(f, 0, sizeof *f);
  f->q = mgopt_value_const(mgopt_op_operand(op, "data"));
  f->s = mgopt_value_const(mgopt_op_operand(op, "scale"));
  f->z = zv ? mgopt_value_const(zv) : NULL;
  if (!f->q || !f->s || (zv && !f->z) || f->q->rank != f->s->rank || f->q->rank < 1) return 0;
  if (f->z && (f->z->dtype != f->q->dtype || f->z->rank != f->s->rank)) return 0;
  for (d = 0; d < f->q->rank; d++) {
    int64_t sd = f->s->shape[d], qd = f->q->shape[d];
    if (f->z && f->z->shape[d] != sd) return 0;
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

static int mgopt__mq_4bit(mgopt_dtype dt) { return dt == MGOPT_DT_INT4 || dt == MGOPT_DT_UINT4; }

/* 1: DequantizeLinear at the row's opset; 0: Cast and Mul. */
static int mgopt__mq_use_dq(const mgopt__mq_form *f, int64_t opset) {
  int fp16 = f->s->dtype == MGOPT_DT_FP16;
  if (f->s->dtype != MGOPT_DT_FP32 && !fp16) return 0;
  if (mgopt__mq_4bit((mgopt_dtype)f->q->dtype) || f->kind == 2) return opset >= 21;
  if (fp16 && opset < 19) return 0;
  return opset >= (f->kind == 1 ? 13 : 10);
}

static const char *mgopt__exw_bss(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt__mq_form f;
  mgopt_dtype qdt;
  MGOPT__UNUSED(p);
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

/* An initializer named base when that name is free (the const it stands
   for is not written), else a fresh name; returns the name. */
static const char *mgopt__mq_const(mgopt__exp *E, const char *base, mgopt_tensor *t) {
  int r;
  mgopt_onnx_tensor *ot;
  if (!t) return NULL;
  r = base && *base && E->g->is_main ? mgopt__exp_claim(E, base) : 0;
  if (r < 0) return NULL;
  if (!r) return mgopt__exp_const(E, base, t);
  ot = (mgopt_onnx_tensor *)mgopt__exv_push(E, &E->g->inits, sizeof(mgopt_onnx_tensor));
  if (!ot || mgopt__exp_tensor(E, t, base, ot)) return NULL;
  return base;
}

/* An intermediate value named "<out>_<what>" (or a fresh variant). */
static const char *mgopt__mq_name(mgopt__exp *E, const char *out, const char *what) {
  char buf[200];
  const char *nm;
  int r;
  snprintf(buf, sizeof buf, "%.150s_%s", out, what);
  nm = mgopt_program_intern_cstr(E->p, buf);
  if (!nm) return NULL;
  r = mgopt__exp_claim(E, nm);
  return r < 0 ? NULL : r ? nm : mgopt__exp_fresh(E, nm);
}

static mgopt_status mgopt__exp_bss(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m) {
  mgopt_program *p = E->p;
  mgopt__mq_form f;
  const char *ins[3], *out = mgopt__exp_vname(op->outs[0]);
  const char *dn = mgopt__exp_in(op, "data"), *sn = mgopt__exp_in(op, "scale"), *zn = mgopt__exp_in(op, "offset");
  mgopt_dtype qdt, odt;
  mgopt_onnx_node *n;
  MGOPT__UNUSED(m);
  mgopt__mq_bss(op, &f);
  qdt = (mgopt_dtype)f.q->dtype;
  odt = mgopt__mq_onnx_int(qdt);
  ins[0] = mgopt__mq_const(E, dn, mgopt__mq_view(p, f.q, odt, f.q->rank, f.q->shape));
  if (!ins[0]) return mgopt__exp_nomem(E);
  if (mgopt__mq_use_dq(&f, E->opset)) {
    int64_t c = f.kind == 1 ? f.s->shape[f.axis] : 1;
    mgopt_tensor *st, *zt = NULL;
    if (f.kind == 2) {
      st = mgopt__mq_expand(p, f.s, &f, (mgopt_dtype)f.s->dtype);
      if (f.z) zt = mgopt__mq_expand(p, f.z, &f, odt);
    } else {
      st = mgopt__mq_view(p, f.s, (mgopt_dtype)f.s->dtype, f.kind, &c);
      if (f.z) zt = mgopt__mq_view(p, f.z, odt, f.kind, &c);
    }
    ins[1] = mgopt__mq_const(E, sn, st);
    ins[2] = f.z ? mgopt__mq_const(E, zn, zt) : NULL;
    if (!ins[1] || (f.z && !ins[2])) return mgopt__exp_nomem(E);
    n = mgopt__exp_simple(E, op, "DequantizeLinear", ins, f.z ? 3 : 2);
    if (!n) return mgopt__exp_nomem(E);
    if (f.kind >= 1 && !mgopt__exp_aint(E, n, "axis", f.axis)) return mgopt__exp_nomem(E);
    if (f.kind == 2 && !mgopt__exp_aint(E, n, "block_size", f.block)) return mgopt__exp_nomem(E);
    return mgopt__exp_done(E, n);
  } else {
    /* Cast(data) [- offset] * scale, in the scale's dtype */
    mgopt_dtype fdt = (mgopt_dtype)f.s->dtype;
    const char *cast = mgopt__mq_name(E, out, "cast");
    const char *cur = cast, *io[2];
    const char *sname = mgopt__mq_const(E, sn, f.s);
    n = mgopt__exp_node(E, "Cast", "", NULL);
    if (!cast || !sname || !n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, ins, 1) ||
        !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &cast, 1) ||
        !mgopt__exp_aint(E, n, "to", mgopt__exp_dtype(fdt)))
      return mgopt__exp_nomem(E);
    if (f.z) {
      mgopt_tensor *zf = mgopt_tensor_new(p, fdt, f.z->rank, f.z->shape);
      const char *zname, *sub = mgopt__mq_name(E, out, "shifted");
      int64_t i;
      if (!zf || !sub) return mgopt__exp_nomem(E);
      for (i = 0; i < zf->numel; i++) mgopt_tensor_set_f64(zf, i, (double)mgopt_tensor_get_i64(f.z, i));
      zname = mgopt__mq_const(E, zn, zf);
      n = mgopt__exp_node(E, "Sub", "", NULL);
      io[0] = cur;
      io[1] = zname;
      if (!zname || !n || !mgopt__exp_set_io(E, &n->inputs, &n->ninputs, io, 2) ||
          !mgopt__exp_set_io(E, &n->outputs, &n->noutputs, &sub, 1))
        return mgopt__exp_nomem(E);
      cur = sub;
    }
    io[0] = cur;
    io[1] = sname;
    n = mgopt__exp_simple(E, op, "Mul", io, 2);
    return n ? mgopt__exp_done(E, n) : mgopt__exp_nomem(E);
  }
}

static const mgopt__onnx_map mgopt__onnx_quant[] = {
    /* export only: no DequantizeLinear below opset 10, Cast and Mul */
    {"Cast", 1, 9, MGOPT_OP_constexpr_blockwise_shift_scale, NULL, mgopt__exp_bss, {NULL, NULL, NULL}, mgopt__exw_bss},
    {"DequantizeLinear", 10, 20, MGOPT_OP_constexpr_blockwise_shift_scale, NULL, mgopt__exp_bss, {NULL, NULL, NULL},
     mgopt__exw_bss},
    {"DequantizeLinear", 21, 0, MGOPT_OP_constexpr_blockwise_shift_scale, NULL, mgopt__exp_bss, {NULL, NULL, NULL},
     mgopt__exw_bss},
};

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_quant(int32_t *n) {
  *n = MGOPT__ARRAY_COUNT(mgopt__onnx_quant);
  return mgopt__onnx_quant;
}
