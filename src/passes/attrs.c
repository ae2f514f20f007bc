/* src/passes/attrs.c — attributes and parameters: identity of attribute sets, integer-list parameters, a cast's target dtype, equal ops, equal quantization parameters. */
#include "../passes_internal.h"

/* ---------------------------------------------------------------- attribute identity */

MGOPT__PRIVATE uint64_t mgopt__pu_mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

/* Content hash of an attribute, name included. */
MGOPT__PRIVATE uint64_t mgopt__pu_attr_hash(const mgopt_attr *a) {
  uint64_t h = mgopt__hash_bytes(a->name, strlen(a->name), MGOPT__HASH_SEED);
  int64_t k;
  h = mgopt__pu_mix(h, a->kind);
  switch ((mgopt_attr_kind)a->kind) {
    case MGOPT_ATTR_BOOL:
    case MGOPT_ATTR_INT: return mgopt__pu_mix(h, (uint64_t)a->u.i);
    case MGOPT_ATTR_FLOAT: return mgopt__hash_bytes(&a->u.f, sizeof a->u.f, h);
    case MGOPT_ATTR_STRING: return mgopt__hash_bytes(a->u.s.ptr, a->u.s.len, h);
    case MGOPT_ATTR_BOOLS:
    case MGOPT_ATTR_INTS: return mgopt__hash_bytes(a->u.ints, sizeof(int64_t) * (size_t)a->n, h);
    case MGOPT_ATTR_FLOATS: return mgopt__hash_bytes(a->u.floats, sizeof(double) * (size_t)a->n, h);
    case MGOPT_ATTR_STRINGS:
      for (k = 0; k < a->n; k++) h = mgopt__hash_bytes(a->u.strs[k].ptr, a->u.strs[k].len, mgopt__pu_mix(h, 1));
      return h;
    case MGOPT_ATTR_TENSOR: return a->u.t ? mgopt__pu_mix(h, mgopt_tensor_hash(a->u.t)) : h;
    case MGOPT_ATTR_BYTES: return mgopt__hash_bytes(a->u.bytes, (size_t)a->n, mgopt__pu_mix(h, (uint64_t)a->tag));
    default: return h;
  }
}

/* Same kind and value (floats bitwise); names are not compared. */
MGOPT__PRIVATE int mgopt__pu_attr_equal(const mgopt_attr *a, const mgopt_attr *b) {
  int64_t k;
  if (a->kind != b->kind || a->n != b->n) return 0;
  switch ((mgopt_attr_kind)a->kind) {
    case MGOPT_ATTR_BOOL:
    case MGOPT_ATTR_INT: return a->u.i == b->u.i;
    case MGOPT_ATTR_FLOAT: return memcmp(&a->u.f, &b->u.f, sizeof a->u.f) == 0;
    case MGOPT_ATTR_STRING: return a->u.s.len == b->u.s.len && memcmp(a->u.s.ptr, b->u.s.ptr, a->u.s.len) == 0;
    case MGOPT_ATTR_BOOLS:
    case MGOPT_ATTR_INTS: return a->n == 0 || memcmp(a->u.ints, b->u.ints, sizeof(int64_t) * (size_t)a->n) == 0;
    case MGOPT_ATTR_FLOATS: return a->n == 0 || memcmp(a->u.floats, b->u.floats, sizeof(double) * (size_t)a->n) == 0;
    case MGOPT_ATTR_STRINGS:
      for (k = 0; k < a->n; k++)
        if (a->u.strs[k].len != b->u.strs[k].len ||
            memcmp(a->u.strs[k].ptr, b->u.strs[k].ptr, a->u.strs[k].len) != 0)
          return 0;
      return 1;
    case MGOPT_ATTR_TENSOR: return a->u.t && b->u.t && mgopt_tensor_equal(a->u.t, b->u.t);
    case MGOPT_ATTR_BYTES: return a->tag == b->tag && (a->n == 0 || memcmp(a->u.bytes, b->u.bytes, (size_t)a->n) == 0);
    default: return 1;
  }
}

/* An op's attributes as a set: a hash that ignores their order, and equality
   (same count, each of a's present in b with an equal value). */
MGOPT__PRIVATE uint64_t mgopt__pu_attrs_hash(const mgopt_op *op) {
  uint64_t sum = 0;
  int32_t i;
  for (i = 0; i < op->nattrs; i++) sum += mgopt__pu_attr_hash(&op->attrs[i]);
  return sum;
}

MGOPT__PRIVATE int mgopt__pu_attrs_equal(const mgopt_op *a, const mgopt_op *b) {
  int32_t i;
  if (a->nattrs != b->nattrs) return 0;
  for (i = 0; i < a->nattrs; i++) {
    const mgopt_attr *o = mgopt_op_attr(b, a->attrs[i].name);
    if (!o || !mgopt__pu_attr_equal(&a->attrs[i], o)) return 0;
  }
  return 1;
}

/* ---------------------------------------------------------------- parameters */

MGOPT__PRIVATE int mgopt__pu_set_ints_param(mgopt_rewriter *rw, mgopt_op *op, const mgopt_op *like, const char *name,
                                            const int64_t *v, int64_t n) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *old = like ? mgopt_op_operand(like, name) : NULL;
  mgopt_tensor *t;
  mgopt_value *c;
  mgopt_dtype dt = MGOPT_DT_INT32;
  int64_t k;
  if (!old) {
    if (mgopt_op_slot_index(op, name) >= 0) mgopt_rw_set_operand(rw, op, name, NULL);
    return mgopt_op_set_ints(op, name, v, n) == MGOPT_OK;
  }
  if (mgopt_dtype_is_int((mgopt_dtype)old->type.dtype)) dt = (mgopt_dtype)old->type.dtype;
  t = mgopt_tensor_new(p, dt, 1, &n);
  if (!t) return 0;
  for (k = 0; k < n; k++) mgopt_tensor_set_i64(t, k, v[k]);
  c = mgopt_rw_const(rw, op, mgopt_program_fresh_name(p, name), t);
  if (!c) return 0;
  mgopt_op_remove_attr(op, name);
  old = mgopt_op_operand(op, name);
  mgopt_rw_set_operand(rw, op, name, c);
  if (old) mgopt__pu_erase_if_dead(rw, old->def);
  return 1;
}

MGOPT__PRIVATE mgopt_dtype mgopt__pu_cast_dtype(const mgopt_op *cast) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(cast, "dtype", &n);
  if (!s) return MGOPT_DT_UNKNOWN;
  return mgopt_dtype_from_name(s, n);
}

MGOPT__PRIVATE int mgopt__pu_ops_equal(const mgopt_op *a, const mgopt_op *b,
                                       int (*value_eq)(const mgopt_value *, const mgopt_value *)) {
  int32_t s, k;
  if (a->type != b->type || a->nslots != b->nslots || a->nattrs != b->nattrs) return 0;
  for (s = 0; s < a->nslots; s++) {
    const mgopt_slot *sa = &a->slots[s];
    int32_t j = mgopt_op_slot_index(b, sa->name);
    const mgopt_slot *sb;
    if (j < 0) return 0;
    sb = &b->slots[j];
    if (sa->n != sb->n || sa->is_list != sb->is_list) return 0;
    for (k = 0; k < sa->n; k++)
      if (!value_eq(sa->uses[k].value, sb->uses[k].value)) return 0;
  }
  return mgopt__pu_attrs_equal(a, b);
}

/* a and b hold the same numbers: the same value, or both constant with equal
   elements (one side may be a single element standing for all of the other's). */
static int mgopt__pu_same_numbers(const mgopt_value *a, const mgopt_value *b) {
  mgopt_tensor *ta, *tb;
  int64_t i, n;
  if (a == b) return 1;
  ta = a ? mgopt_value_const(a) : NULL;
  tb = b ? mgopt_value_const(b) : NULL;
  if (!ta || !tb || ta->dtype == MGOPT_DT_STRING || tb->dtype == MGOPT_DT_STRING) return 0;
  if (ta->numel != tb->numel && ta->numel != 1 && tb->numel != 1) return 0;
  if (ta->numel == tb->numel && ta->rank != tb->rank && ta->numel != 1) return 0;
  n = ta->numel > tb->numel ? ta->numel : tb->numel;
  for (i = 0; i < n; i++)
    if (mgopt_tensor_get_f64(ta, ta->numel == 1 ? 0 : i) != mgopt_tensor_get_f64(tb, tb->numel == 1 ? 0 : i))
      return 0;
  return 1;
}

MGOPT__PRIVATE int mgopt__pu_quant_params_equal(const mgopt_op *dq, const mgopt_op *q) {
  const mgopt_value *in = mgopt_op_operand(dq, "input");
  const mgopt_value *zd = mgopt_op_operand(dq, "zero_point"), *zq = mgopt_op_operand(q, "zero_point");
  const mgopt_attr *ad = mgopt_op_attr(dq, "axis"), *aq = mgopt_op_attr(q, "axis");
  size_t len = 0;
  const char *ods = mgopt_op_get_string(q, "output_dtype", &len);
  if (!in || !ods || mgopt_dtype_from_name(ods, len) != (mgopt_dtype)in->type.dtype) return 0;
  if (!mgopt__pu_same_numbers(mgopt_op_operand(dq, "scale"), mgopt_op_operand(q, "scale"))) return 0;
  if ((zd != NULL) != (zq != NULL) || (zd && !mgopt__pu_same_numbers(zd, zq))) return 0;
  if ((ad != NULL) != (aq != NULL)) return 0;
  if (ad) {
    int64_t a = mgopt_op_get_int(dq, "axis", 0), b = mgopt_op_get_int(q, "axis", 0);
    if (in->type.rank >= 0) {
      a = mgopt__pu_norm_axis(a, in->type.rank);
      b = mgopt__pu_norm_axis(b, in->type.rank);
      if (a < 0) return 0;
    }
    if (a != b) return 0;
  }
  return 1;
}
