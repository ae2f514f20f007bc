/* tests/unit/test_registry.c — the op registry: name table, schemas, defaults and type inference. */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"

#include <stdlib.h>

/* One program and function per test, built through the public API. */
static mgopt_program *P;
static mgopt_function *F;
static int narg;

static void begin(void) {
  P = mgopt_program_create(NULL);
  F = mgopt_function_new(P, "main");
  narg = 0;
}
static void end(void) {
  mgopt_program_destroy(P);
  P = NULL;
}

/* A type from text: "fp32[2,B,?]" (B: symbol, ?: unknown), "fp32[*]" (rank unknown), "fp32[]" (scalar). */
static mgopt_type parse_type(const char *s) {
  mgopt_type t;
  mgopt_dim dims[16];
  int rank = 0;
  const char *br = strchr(s, '[');
  mgopt_dtype dt = mgopt_dtype_from_name(s, (size_t)(br - s));
  const char *c = br + 1;
  if (*c == '*') {
    mgopt_type_make(P, &t, dt, -1, NULL);
    return t;
  }
  while (*c && *c != ']') {
    if (*c == '?') {
      dims[rank++] = mgopt_dim_unknown();
      c++;
    } else if (*c >= '0' && *c <= '9') {
      dims[rank++] = mgopt_dim_static(strtoll(c, (char **)&c, 10));
    } else {
      const char *e = c;
      mgopt_dim dd;
      while (*e && *e != ',' && *e != ']') e++;
      dd.v = -1;
      dd.sym = mgopt_program_intern(P, c, (size_t)(e - c));
      dims[rank++] = dd;
      c = e;
    }
    if (*c == ',') c++;
  }
  mgopt_type_make(P, &t, dt, rank, dims);
  return t;
}

/* Text of a type, the inverse of parse_type. */
static const char *fmt_type(const mgopt_type *t) {
  static char buf[4][256];
  static int k;
  char *b = buf[k++ & 3];
  size_t n;
  int i;
  if (t->kind != MGOPT_TYPE_TENSOR) return "other";
  n = (size_t)snprintf(b, 256, "%s[", mgopt_dtype_name((mgopt_dtype)t->dtype));
  if (t->rank < 0) n += (size_t)snprintf(b + n, 256 - n, "*");
  for (i = 0; i < t->rank && n < 200; i++) {
    const mgopt_dim *d = &t->dims[i];
    if (i) b[n++] = ',';
    if (d->sym) n += (size_t)snprintf(b + n, 256 - n, "%s", d->sym);
    else if (d->v < 0) n += (size_t)snprintf(b + n, 256 - n, "?");
    else n += (size_t)snprintf(b + n, 256 - n, "%lld", (long long)d->v);
  }
  snprintf(b + n, 256 - n, "]");
  return b;
}

static mgopt_value *in(const char *spec) {
  char name[16];
  mgopt_type t = parse_type(spec);
  snprintf(name, sizeof name, "in%d", narg++);
  return mgopt_block_add_arg(F->body, name, &t);
}

/* Integers from text ("2,-1,0") into v; returns the count. */
static int parse_ints(const char *s, int64_t *v) {
  int n = 0;
  char *e;
  while (*s && n < 16) {
    v[n++] = strtoll(s, &e, 10);
    s = *e == ',' ? e + 1 : e;
    if (!*e) break;
  }
  return n;
}

/* A 1-d int32 constant from text (int64 when a value needs it). */
static mgopt_value *INTS(const char *text) {
  int64_t v[16], shape[1];
  mgopt_tensor *t;
  int i, n = parse_ints(text, v), wide = 0;
  for (i = 0; i < n; i++) wide |= v[i] > INT32_MAX || v[i] < INT32_MIN;
  shape[0] = n;
  t = mgopt_tensor_new(P, wide ? MGOPT_DT_INT64 : MGOPT_DT_INT32, 1, shape);
  for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, v[i]);
  return mgopt_build_const(P, F->body, NULL, NULL, t);
}

/* Sets an INTS attribute from text. */
static void SETINTS(mgopt_op *op, const char *name, const char *text) {
  int64_t v[16];
  int n = parse_ints(text, v);
  mgopt_op_set_ints(op, name, v, n);
}

/* An op with up to 4 operands given as "name" / value pairs. */
static mgopt_op *op4(const char *type, int nouts, const char *s0, mgopt_value *v0, const char *s1, mgopt_value *v1,
                     const char *s2, mgopt_value *v2, const char *s3, mgopt_value *v3) {
  const char *names[4];
  mgopt_value *vals[4];
  int n = 0;
  if (s0) names[n] = s0, vals[n++] = v0;
  if (s1) names[n] = s1, vals[n++] = v1;
  if (s2) names[n] = s2, vals[n++] = v2;
  if (s3) names[n] = s3, vals[n++] = v3;
  return mgopt_build_op(P, F->body, NULL, type, NULL, n, names, vals, nouts);
}
#define OP1(t, a, va) op4(t, 1, a, va, NULL, NULL, NULL, NULL, NULL, NULL)
#define OP2(t, a, va, b, vb) op4(t, 1, a, va, b, vb, NULL, NULL, NULL, NULL)
#define OP3(t, a, va, b, vb, c, vc) op4(t, 1, a, va, b, vb, c, vc, NULL, NULL)

static mgopt_diag D;
/* Infers op: its first output's type as text, or "ERR" on a type error. */
static const char *inf(mgopt_op *op) {
  mgopt_status s = mgopt_op_infer(P, op, &D);
  if (s == MGOPT_ERR_TYPE) return "ERR";
  if (s != MGOPT_OK) return "FAILED";
  return fmt_type(&op->outs[0]->type);
}

/* ---------------------------------------------------------------- table */

static void test_name_table(void) {
  int32_t k;
  mgopt_op *o;
  CHECK(mgopt_op_def_get(MGOPT_OP_OPAQUE) == NULL);
  CHECK(mgopt_op_def_get(MGOPT_OP__COUNT) == NULL);
  CHECK(mgopt_op_def_get(-3) == NULL);
  for (k = 1; k < MGOPT_OP__COUNT; k++) {
    const mgopt_op_def *d = mgopt_op_def_get(k);
    int32_t i;
    REQUIRE(d != NULL);
    CHECK_EQ_INT(mgopt_op_kind_from_name(d->name, strlen(d->name)), k);
    CHECK(d->infer != NULL);
    /* every op is pure but the state write, a side effect */
    CHECK(!(d->traits & MGOPT_TRAIT_PURE) == (k == MGOPT_OP_coreml_update_state));
    for (i = 0; i < d->nattrs; i++) {
      const mgopt_attr_def *a = &d->attrs[i];
      CHECK(mgopt__attr_def(k, a->name) == a);
      if (a->deflt && a->kind == MGOPT_ATTR_BOOL) CHECK(!strcmp(a->deflt, "true") || !strcmp(a->deflt, "false"));
      if (a->deflt && a->kind == MGOPT_ATTR_STRING) CHECK(a->deflt[0] == '"');
      if (a->flags & MGOPT_ATTR_REQUIRED) CHECK(a->deflt == NULL);
    }
    for (i = 0; i < d->nslots; i++) CHECK(mgopt__attr_def(k, d->slots[i].name) == NULL);
  }
  /* every row of the table: its name resolves to its kind, whole and only whole */
#define ROW(op, traits, slots, attrs, nouts_min, nouts_max, nblocks, infer, kernel)      \
  CHECK_EQ_STR(mgopt_op_def_get(MGOPT_OP_##op)->name, #op);                              \
  CHECK_EQ_INT(mgopt__rg_len[MGOPT_OP_##op], (int)strlen(#op));                          \
  CHECK_EQ_INT(mgopt_op_kind_from_name(#op, strlen(#op)), MGOPT_OP_##op);                \
  CHECK(mgopt_op_kind_from_name(#op, strlen(#op) - 1) != MGOPT_OP_##op);                 \
  CHECK_EQ_INT(mgopt_op_kind_from_name(#op "_", strlen(#op) + 1), MGOPT_OP_OPAQUE);      \
  CHECK_EQ_INT(mgopt_op_kind_from_name("onnx::" #op, strlen(#op) + 6), MGOPT_OP_OPAQUE);
  MGOPT_OP_TABLE(ROW)
#undef ROW
  CHECK_EQ_INT(mgopt__rg_len[MGOPT_OP_OPAQUE], 0);
  CHECK_EQ_INT(MGOPT__ARRAY_COUNT(mgopt__rg_len), MGOPT_OP__COUNT);
  CHECK_EQ_INT(mgopt_op_kind_from_name(NULL, 3), MGOPT_OP_OPAQUE);
  CHECK_EQ_INT(mgopt_op_kind_from_name("const", 0), MGOPT_OP_OPAQUE);
  CHECK_EQ_INT(mgopt_op_kind_from_name("relu6", 5), MGOPT_OP_relu6);
  CHECK_EQ_INT(mgopt_op_kind_from_name("relu6", 4), MGOPT_OP_relu); /* length, not NUL, ends the name */
  CHECK_EQ_INT(mgopt_op_kind_from_name("rel", 3), MGOPT_OP_OPAQUE);
  CHECK_EQ_INT(mgopt_op_kind_from_name("relu7", 5), MGOPT_OP_OPAQUE);
  CHECK_EQ_INT(mgopt_op_kind_from_name("", 0), MGOPT_OP_OPAQUE);
  CHECK_EQ_INT(mgopt_op_kind_from_name("zzz", 3), MGOPT_OP_OPAQUE);
  CHECK_EQ_INT(mgopt_op_kind_from_name("Relu", 4), MGOPT_OP_OPAQUE);
  CHECK_EQ_INT(mgopt_op_kind_from_name("onnx::Relu", 10), MGOPT_OP_OPAQUE);
  CHECK_EQ_INT(mgopt_op_kind_from_name("abs", 3), MGOPT_OP_abs);
  CHECK_EQ_INT(mgopt_op_kind_from_name("while_loop", 10), MGOPT_OP_while_loop);
  begin();
  o = mgopt_op_new(P, "onnx::NonMaxSuppression", 1, 0);
  CHECK_EQ_INT(o->kind, MGOPT_OP_OPAQUE);
  CHECK_EQ_INT(mgopt_op_traits(o), 0);
  CHECK(mgopt_op_infer(P, o, &D) == MGOPT_OK); /* opaque: left alone */
  o = mgopt_op_new(P, "add", 1, 0);
  CHECK(mgopt_op_traits(o) & MGOPT_TRAIT_COMMUTATIVE);
  CHECK(!(mgopt_op_traits(mgopt_op_new(P, "sub", 1, 0)) & MGOPT_TRAIT_COMMUTATIVE));
  CHECK(mgopt_op_traits(mgopt_op_new(P, "less", 1, 0)) & MGOPT_TRAIT_COMPARISON);
  CHECK(mgopt_op_traits(mgopt_op_new(P, "conv", 1, 0)) & MGOPT_TRAIT_LAYOUT_SENSITIVE);
  CHECK(mgopt_op_traits(mgopt_op_new(P, "constexpr_cast", 1, 0)) & MGOPT_TRAIT_CONSTEXPR);
  CHECK(mgopt_op_traits(mgopt_op_new(P, "cond", 1, 2)) & MGOPT_TRAIT_CONTROL_FLOW);
  CHECK_EQ_INT(mgopt_op_def_get(MGOPT_OP_split)->nouts_max, -1);
  CHECK_EQ_INT(mgopt_op_def_get(MGOPT_OP_while_loop)->nblocks, 2);
  end();
}

/* The folding kernel of every op, as it was when kernels were a (kind, kernel) pair list: the
   kernel column of MGOPT_OP_TABLE gives exactly these, and no kernel to the other ops. */
static void test_fold_kernels(void) {
  static const struct {
    int32_t kind;
    mgopt__kernel_fn fn;
  } want[] = {
      {MGOPT_OP_identity, mgopt__ke_identity}, {MGOPT_OP_add, mgopt__ke_binary}, {MGOPT_OP_sub, mgopt__ke_binary},
      {MGOPT_OP_mul, mgopt__ke_binary}, {MGOPT_OP_real_div, mgopt__ke_binary}, {MGOPT_OP_pow, mgopt__ke_binary},
      {MGOPT_OP_maximum, mgopt__ke_binary}, {MGOPT_OP_minimum, mgopt__ke_binary},
      {MGOPT_OP_floor_div, mgopt__ke_binary}, {MGOPT_OP_mod, mgopt__ke_binary}, {MGOPT_OP_equal, mgopt__ke_binary},
      {MGOPT_OP_not_equal, mgopt__ke_binary}, {MGOPT_OP_less, mgopt__ke_binary},
      {MGOPT_OP_less_equal, mgopt__ke_binary}, {MGOPT_OP_greater, mgopt__ke_binary},
      {MGOPT_OP_greater_equal, mgopt__ke_binary}, {MGOPT_OP_logical_and, mgopt__ke_binary},
      {MGOPT_OP_logical_or, mgopt__ke_binary}, {MGOPT_OP_logical_xor, mgopt__ke_binary},
      {MGOPT_OP_logical_not, mgopt__ke_logical_not}, {MGOPT_OP_select, mgopt__ke_select},
      {MGOPT_OP_abs, mgopt__ke_unary}, {MGOPT_OP_exp, mgopt__ke_unary}, {MGOPT_OP_log, mgopt__ke_unary},
      {MGOPT_OP_sqrt, mgopt__ke_unary}, {MGOPT_OP_rsqrt, mgopt__ke_unary}, {MGOPT_OP_inverse, mgopt__ke_unary},
      {MGOPT_OP_square, mgopt__ke_unary}, {MGOPT_OP_erf, mgopt__ke_unary}, {MGOPT_OP_tanh, mgopt__ke_unary},
      {MGOPT_OP_sigmoid, mgopt__ke_unary}, {MGOPT_OP_relu, mgopt__ke_unary}, {MGOPT_OP_relu6, mgopt__ke_unary},
      {MGOPT_OP_leaky_relu, mgopt__ke_unary}, {MGOPT_OP_gelu, mgopt__ke_unary}, {MGOPT_OP_clip, mgopt__ke_unary},
      {MGOPT_OP_floor, mgopt__ke_unary}, {MGOPT_OP_ceil, mgopt__ke_unary}, {MGOPT_OP_round, mgopt__ke_unary},
      {MGOPT_OP_sign, mgopt__ke_unary}, {MGOPT_OP_sin, mgopt__ke_unary}, {MGOPT_OP_cos, mgopt__ke_unary},
      {MGOPT_OP_silu, mgopt__ke_unary}, {MGOPT_OP_softplus, mgopt__ke_unary}, {MGOPT_OP_elu, mgopt__ke_unary},
      {MGOPT_OP_softmax, mgopt__kr_softmax}, {MGOPT_OP_cast, mgopt__ke_cast},
      {MGOPT_OP_reshape, mgopt__ks_reshape}, {MGOPT_OP_transpose, mgopt__ks_transpose},
      {MGOPT_OP_expand_dims, mgopt__ks_expand_dims}, {MGOPT_OP_squeeze, mgopt__ks_squeeze},
      {MGOPT_OP_concat, mgopt__ks_concat}, {MGOPT_OP_stack, mgopt__ks_stack}, {MGOPT_OP_split, mgopt__ks_split},
      {MGOPT_OP_slice_by_index, mgopt__ks_slice_by_index}, {MGOPT_OP_slice_by_size, mgopt__ks_slice_by_size},
      {MGOPT_OP_gather, mgopt__ks_gather}, {MGOPT_OP_one_hot, mgopt__ks_one_hot}, {MGOPT_OP_pad, mgopt__ks_pad},
      {MGOPT_OP_tile, mgopt__ks_tile}, {MGOPT_OP_matmul, mgopt__kr_matmul}, {MGOPT_OP_linear, mgopt__kr_linear},
      {MGOPT_OP_reduce_sum, mgopt__kr_reduce}, {MGOPT_OP_reduce_mean, mgopt__kr_reduce},
      {MGOPT_OP_reduce_max, mgopt__kr_reduce}, {MGOPT_OP_reduce_min, mgopt__kr_reduce},
      {MGOPT_OP_reduce_prod, mgopt__kr_reduce}, {MGOPT_OP_quantize, mgopt__kc_quantize},
      {MGOPT_OP_dequantize, mgopt__kc_dequantize},
      {MGOPT_OP_constexpr_affine_dequantize, mgopt__kc_affine_dequantize},
      {MGOPT_OP_constexpr_lut_to_dense, mgopt__kc_lut_to_dense},
      {MGOPT_OP_constexpr_sparse_to_dense, mgopt__kc_sparse_to_dense},
      {MGOPT_OP_constexpr_blockwise_shift_scale, mgopt__kc_blockwise_shift_scale},
      {MGOPT_OP_constexpr_cast, mgopt__kc_constexpr_cast},
      {MGOPT_OP_prelu, mgopt__kn_prelu}, {MGOPT_OP_conv, mgopt__kn_conv}, {MGOPT_OP_conv_transpose, mgopt__kn_conv},
      {MGOPT_OP_avg_pool, mgopt__kn_pool}, {MGOPT_OP_max_pool, mgopt__kn_pool},
      {MGOPT_OP_batch_norm, mgopt__kn_batch_norm}, {MGOPT_OP_instance_norm, mgopt__kn_norm},
      {MGOPT_OP_layer_norm, mgopt__kn_norm}, {MGOPT_OP_pixel_shuffle, mgopt__kn_pixel_shuffle},
  };
  int32_t k, i, n = 0;
  /* every kind up to the last of that time (an op added later brings its own test) */
  for (k = -1; k <= MGOPT_OP_constexpr_cast; k++) {
    mgopt__kernel_fn fn = NULL;
    for (i = 0; i < (int32_t)(sizeof want / sizeof want[0]); i++)
      if (want[i].kind == k) fn = want[i].fn;
    CHECK(mgopt__k_kernel(k) == fn);
    n += mgopt__k_kernel(k) != NULL;
  }
  CHECK_EQ_INT(n, (int)(sizeof want / sizeof want[0]));
  CHECK(mgopt__k_kernel(MGOPT_OP__COUNT) == NULL && mgopt__k_kernel(MGOPT_OP__COUNT + 1) == NULL);
}

static void test_defaults(void) {
  mgopt_op *o;
  size_t n = 0;
  const char *s;
  begin();
  o = OP1("leaky_relu", "x", in("fp32[2]"));
  CHECK(mgopt_op_get_float(o, "alpha", 0) == 0.01);
  mgopt_op_set_float(o, "alpha", 0.2);
  CHECK(mgopt_op_get_float(o, "alpha", 0) == 0.2);
  o = OP1("gelu", "x", in("fp32[2]"));
  s = mgopt_op_get_string(o, "mode", &n);
  CHECK(s && n == 5 && !strcmp(s, "EXACT"));
  o = OP2("matmul", "x", in("fp32[2,2]"), "y", in("fp32[2,2]"));
  CHECK_EQ_INT(mgopt_op_get_bool(o, "transpose_x", 1), 0);
  o = OP1("softmax", "x", in("fp32[2]"));
  CHECK_EQ_INT(mgopt_op_get_int(o, "axis", 7), -1);
  o = OP1("conv", "x", in("fp32[1,1,4,4]"));
  s = mgopt_op_get_string(o, "pad_type", &n);
  CHECK(s && !strcmp(s, "valid"));
  CHECK_EQ_INT(mgopt_op_get_int(o, "groups", 0), 1);
  o = OP1("rsqrt", "x", in("fp32[2]"));
  CHECK(mgopt_op_get_float(o, "epsilon", 0) == 1e-12);
  end();
}

/* ---------------------------------------------------------------- elementwise */

static void test_broadcast(void) {
  begin();
  CHECK_EQ_STR(inf(OP2("add", "x", in("fp32[B,1,3]"), "y", in("fp32[4,1]"))), "fp32[B,4,3]");
  CHECK_EQ_STR(inf(OP2("mul", "x", in("fp32[B,3]"), "y", in("fp32[B,3]"))), "fp32[B,3]");
  CHECK_EQ_STR(inf(OP2("mul", "x", in("fp32[B,3]"), "y", in("fp32[C,3]"))), "fp32[?,3]");
  CHECK_EQ_STR(inf(OP2("sub", "x", in("fp32[?,3]"), "y", in("fp32[5,1]"))), "fp32[5,3]");
  CHECK_EQ_STR(inf(OP2("sub", "x", in("fp32[?,3]"), "y", in("fp32[B,3]"))), "fp32[?,3]");
  CHECK_EQ_STR(inf(OP2("sub", "x", in("fp32[1,3]"), "y", in("fp32[B,1]"))), "fp32[B,3]");
  CHECK_EQ_STR(inf(OP2("sub", "x", in("fp32[B,3]"), "y", in("fp32[7,3]"))), "fp32[7,3]");
  CHECK_EQ_STR(inf(OP2("add", "x", in("fp32[]"), "y", in("fp32[2,3]"))), "fp32[2,3]");
  CHECK_EQ_STR(inf(OP2("add", "x", in("fp32[*]"), "y", in("fp32[2,3]"))), "fp32[*]");
  CHECK_EQ_STR(inf(OP2("add", "x", in("fp32[2,3]"), "y", in("fp32[4,3]"))), "ERR");
  CHECK(strstr(D.msg, "broadcast") != NULL);
  CHECK_EQ_STR(inf(OP2("add", "x", in("fp32[2]"), "y", in("fp16[2]"))), "ERR");
  CHECK_EQ_STR(inf(OP2("pow", "x", in("fp32[2]"), "y", in("int32[]"))), "fp32[2]");
  CHECK_EQ_STR(inf(OP2("less", "x", in("int32[B]"), "y", in("int32[1]"))), "bool[B]");
  CHECK_EQ_STR(inf(OP2("logical_and", "x", in("bool[3]"), "y", in("bool[1]"))), "bool[3]");
  CHECK_EQ_STR(inf(OP2("logical_or", "x", in("fp32[3]"), "y", in("fp32[3]"))), "ERR");
  CHECK_EQ_STR(inf(OP1("logical_not", "x", in("int32[3]"))), "ERR");
  CHECK_EQ_STR(inf(OP3("select", "cond", in("bool[B,1]"), "a", in("fp16[1,4]"), "b", in("fp16[]"))), "fp16[B,4]");
  CHECK_EQ_STR(inf(OP3("select", "cond", in("bool[2]"), "a", in("fp16[3]"), "b", in("fp16[3]"))), "ERR");
  CHECK_EQ_STR(inf(OP2("prelu", "x", in("fp32[1,8,B]"), "alpha", in("fp32[8]"))), "fp32[1,8,B]");
  CHECK_EQ_STR(inf(OP1("sigmoid", "x", in("fp16[B,?,3]"))), "fp16[B,?,3]");
  {
    mgopt_op *g = OP1("gelu", "x", in("fp16[3]"));
    CHECK_EQ_STR(inf(g), "fp16[3]");
    mgopt_op_set_string(g, "mode", "TANH_APPROXIMATION");
    CHECK_EQ_STR(inf(g), "fp16[3]");
    mgopt_op_set_string(g, "mode", "TANH");
    CHECK_EQ_STR(inf(g), "ERR");
  }
  end();
}

static void test_unary_cast_identity(void) {
  mgopt_op *o;
  begin();
  o = OP1("cast", "x", in("fp32[B,2]"));
  mgopt_op_set_string(o, "dtype", "int32");
  CHECK_EQ_STR(inf(o), "int32[B,2]");
  mgopt_op_set_string(o, "dtype", "fp16");
  CHECK_EQ_STR(inf(o), "fp16[B,2]");
  mgopt_op_set_string(o, "dtype", "float77");
  CHECK_EQ_STR(inf(o), "ERR");
  mgopt_op_remove_attr(o, "dtype");
  CHECK_EQ_STR(inf(o), "ERR");
  o = OP1("softmax", "x", in("fp32[2,3]"));
  mgopt_op_set_int(o, "axis", 2);
  CHECK_EQ_STR(inf(o), "ERR");
  mgopt_op_set_int(o, "axis", -2);
  CHECK_EQ_STR(inf(o), "fp32[2,3]");
  CHECK_EQ_STR(inf(OP1("identity", "x", in("int8[*]"))), "int8[*]");
  o = OP1("clip", "x", in("fp32[4]"));
  mgopt_op_set_float(o, "alpha", 0);
  mgopt_op_set_float(o, "beta", 6);
  CHECK_EQ_STR(inf(o), "fp32[4]");
  o = OP3("batch_norm", "x", in("fp32[1,4,H,W]"), "mean", in("fp32[4]"), "variance", in("fp32[4]"));
  CHECK_EQ_STR(inf(o), "fp32[1,4,H,W]");
  end();
}

/* ---------------------------------------------------------------- shape ops */

static void test_reshape(void) {
  begin();
  CHECK_EQ_STR(inf(OP2("reshape", "x", in("fp32[2,3,4]"), "shape", INTS("0,-1"))), "fp32[2,12]");
  CHECK_EQ_STR(inf(OP2("reshape", "x", in("fp32[2,3,4]"), "shape", INTS("4,6"))), "fp32[4,6]");
  CHECK_EQ_STR(inf(OP2("reshape", "x", in("fp32[2,3,4]"), "shape", INTS("-1"))), "fp32[24]");
  CHECK_EQ_STR(inf(OP2("reshape", "x", in("fp32[B,3,4]"), "shape", INTS("0,-1"))), "fp32[B,12]");
  CHECK_EQ_STR(inf(OP2("reshape", "x", in("fp32[B,3,4]"), "shape", INTS("-1,4"))), "fp32[?,4]");
  CHECK_EQ_STR(inf(OP2("reshape", "x", in("fp32[B,S,4]"), "shape", INTS("0,0,2,2"))), "fp32[B,S,2,2]");
  CHECK_EQ_STR(inf(OP2("reshape", "x", in("fp32[*]"), "shape", INTS("3,-1"))), "fp32[3,?]");
  CHECK_EQ_STR(inf(OP2("reshape", "x", in("fp32[2,3,4]"), "shape", INTS("5,-1"))), "ERR");
  CHECK_EQ_STR(inf(OP2("reshape", "x", in("fp32[2,3,4]"), "shape", INTS("4,5"))), "ERR");
  CHECK_EQ_STR(inf(OP2("reshape", "x", in("fp32[2,3,4]"), "shape", INTS("-1,-1"))), "ERR");
  CHECK_EQ_STR(inf(OP2("reshape", "x", in("fp32[2,3,4]"), "shape", INTS("-2,12"))), "ERR");
  CHECK_EQ_STR(inf(OP2("reshape", "x", in("fp32[2,3]"), "shape", INTS("2,3,0"))), "ERR");
  CHECK_EQ_STR(inf(OP2("reshape", "x", in("fp32[2,3,0]"), "shape", INTS("0,-1"))), "fp32[2,0]");
  /* shape known at run time only */
  CHECK_EQ_STR(inf(OP2("reshape", "x", in("fp32[2,3,4]"), "shape", in("int32[3]"))), "fp32[?,?,?]");
  CHECK_EQ_STR(inf(OP2("reshape", "x", in("fp32[2,3,4]"), "shape", in("int32[N]"))), "fp32[*]");
  CHECK_EQ_STR(inf(OP1("reshape", "x", in("fp32[2,3,4]"))), "ERR");
  end();
}

static void test_transpose_expand_squeeze(void) {
  mgopt_op *o;
  begin();
  o = OP1("transpose", "x", in("fp32[B,3,4]"));
  SETINTS(o, "perm", "2,0,1");
  CHECK_EQ_STR(inf(o), "fp32[4,B,3]");
  SETINTS(o, "perm", "-1,0,1");
  CHECK_EQ_STR(inf(o), "fp32[4,B,3]");
  SETINTS(o, "perm", "0,0,1");
  CHECK_EQ_STR(inf(o), "ERR");
  SETINTS(o, "perm", "0,1");
  CHECK_EQ_STR(inf(o), "ERR");
  SETINTS(o, "perm", "0,1,3");
  CHECK_EQ_STR(inf(o), "ERR");
  o = OP1("transpose", "x", in("fp32[*]"));
  SETINTS(o, "perm", "1,0");
  CHECK_EQ_STR(inf(o), "fp32[?,?]");

  o = OP1("expand_dims", "x", in("fp32[B,3]"));
  SETINTS(o, "axes", "0,-1");
  CHECK_EQ_STR(inf(o), "fp32[1,B,3,1]");
  SETINTS(o, "axes", "2");
  CHECK_EQ_STR(inf(o), "fp32[B,3,1]");
  SETINTS(o, "axes", "1,1");
  CHECK_EQ_STR(inf(o), "ERR");
  SETINTS(o, "axes", "4");
  CHECK_EQ_STR(inf(o), "ERR");
  mgopt_op_remove_attr(o, "axes");
  CHECK_EQ_STR(inf(o), "ERR");

  o = OP1("squeeze", "x", in("fp32[1,B,1,3,?]"));
  CHECK_EQ_STR(inf(o), "fp32[B,3,?]");
  SETINTS(o, "axes", "-3");
  CHECK_EQ_STR(inf(o), "fp32[1,B,3,?]");
  SETINTS(o, "axes", "3");
  CHECK_EQ_STR(inf(o), "ERR");
  SETINTS(o, "axes", "1");
  CHECK_EQ_STR(inf(o), "ERR");
  SETINTS(o, "axes", "4");
  CHECK_EQ_STR(inf(o), "ERR");
  SETINTS(o, "axes", "5");
  CHECK_EQ_STR(inf(o), "ERR");
  CHECK_EQ_STR(inf(OP1("squeeze", "x", in("fp32[1,1]"))), "fp32[]");
  end();
}

static void test_concat_stack_split(void) {
  mgopt_op *o;
  mgopt_value *vs[3];
  begin();
  vs[0] = in("fp32[B,2,4]");
  vs[1] = in("fp32[B,3,?]");
  vs[2] = in("fp32[?,5,4]");
  o = mgopt_build_op(P, F->body, NULL, "concat", NULL, 0, NULL, NULL, 1);
  mgopt_op_set_operand_list(o, "values", vs, 3);
  mgopt_op_set_int(o, "axis", 1);
  CHECK_EQ_STR(inf(o), "fp32[B,10,4]");
  mgopt_op_set_int(o, "axis", 0);
  CHECK_EQ_STR(inf(o), "ERR"); /* 2 vs 3 off the axis */
  mgopt_op_set_int(o, "axis", 3);
  CHECK_EQ_STR(inf(o), "ERR");
  vs[1] = in("fp32[B,S,4]");
  mgopt_op_set_operand_list(o, "values", vs, 3);
  mgopt_op_set_int(o, "axis", -2);
  CHECK_EQ_STR(inf(o), "fp32[B,?,4]");
  vs[1] = in("fp32[*]");
  mgopt_op_set_operand_list(o, "values", vs, 3);
  CHECK_EQ_STR(inf(o), "fp32[B,?,4]");
  vs[1] = in("fp32[B,4]");
  mgopt_op_set_operand_list(o, "values", vs, 3);
  CHECK_EQ_STR(inf(o), "ERR");
  vs[1] = in("fp16[B,2,4]");
  mgopt_op_set_operand_list(o, "values", vs, 3);
  CHECK_EQ_STR(inf(o), "ERR");
  mgopt_op_set_operand_list(o, "values", vs, 0);
  CHECK_EQ_STR(inf(o), "ERR");

  vs[0] = in("fp32[B,2]");
  vs[1] = in("fp32[?,2]");
  o = mgopt_build_op(P, F->body, NULL, "stack", NULL, 0, NULL, NULL, 1);
  mgopt_op_set_operand_list(o, "values", vs, 2);
  mgopt_op_set_int(o, "axis", 1);
  CHECK_EQ_STR(inf(o), "fp32[B,2,2]");
  mgopt_op_set_int(o, "axis", -1);
  CHECK_EQ_STR(inf(o), "fp32[B,2,2]");
  mgopt_op_set_int(o, "axis", 0);
  CHECK_EQ_STR(inf(o), "fp32[2,B,2]");
  mgopt_op_set_int(o, "axis", 3);
  CHECK_EQ_STR(inf(o), "ERR");

  o = op4("split", 3, "x", in("fp32[B,9]"), NULL, NULL, NULL, NULL, NULL, NULL);
  mgopt_op_set_int(o, "axis", 1);
  CHECK_EQ_STR(inf(o), "fp32[B,3]");
  CHECK_EQ_STR(fmt_type(&o->outs[2]->type), "fp32[B,3]");
  SETINTS(o, "split_sizes", "2,3,4");
  CHECK_EQ_STR(inf(o), "fp32[B,2]");
  CHECK_EQ_STR(fmt_type(&o->outs[1]->type), "fp32[B,3]");
  CHECK_EQ_STR(fmt_type(&o->outs[2]->type), "fp32[B,4]");
  SETINTS(o, "split_sizes", "2,3,5");
  CHECK_EQ_STR(inf(o), "ERR");
  SETINTS(o, "split_sizes", "4,5");
  CHECK_EQ_STR(inf(o), "ERR");
  mgopt_op_remove_attr(o, "split_sizes");
  mgopt_op_set_int(o, "num_splits", 2);
  CHECK_EQ_STR(inf(o), "ERR");
  mgopt_op_set_int(o, "num_splits", 3);
  mgopt_op_set_int(o, "axis", 0);
  CHECK_EQ_STR(inf(o), "fp32[?,9]");
  o = op4("split", 2, "x", in("fp32[7]"), NULL, NULL, NULL, NULL, NULL, NULL);
  mgopt_op_set_int(o, "axis", 0);
  CHECK_EQ_STR(inf(o), "ERR"); /* 7 is not two equal parts */
  end();
}

static void test_slices(void) {
  mgopt_op *o;
  begin();
  o = op4("slice_by_index", 1, "x", in("fp32[10,B,8]"), "begin", INTS("2,0,-3"), "end", INTS("8,0,8"), NULL, NULL);
  SETINTS(o, "begin_mask", "0,1,0");
  SETINTS(o, "end_mask", "0,1,0");
  CHECK_EQ_STR(inf(o), "fp32[6,B,3]");
  SETINTS(o, "squeeze_mask", "0,0,0");
  CHECK_EQ_STR(inf(o), "fp32[6,B,3]");
  mgopt_op_set_operand(o, "stride", INTS("3,1,-1"));
  CHECK_EQ_STR(inf(o), "fp32[2,B,0]");
  mgopt_op_set_operand(o, "stride", INTS("-1,1,1"));
  SETINTS(o, "begin_mask", "1,1,0");
  SETINTS(o, "end_mask", "1,1,0");
  CHECK_EQ_STR(inf(o), "fp32[10,B,3]");
  SETINTS(o, "squeeze_mask", "0,0,1");
  CHECK_EQ_STR(inf(o), "fp32[10,B]");
  mgopt_op_set_operand(o, "stride", INTS("0,1,1"));
  CHECK_EQ_STR(inf(o), "ERR");
  mgopt_op_set_operand(o, "stride", INTS("1,1"));
  CHECK_EQ_STR(inf(o), "ERR");
  /* begin/end known only at run time */
  o = op4("slice_by_index", 1, "x", in("fp32[10,B,8]"), "begin", in("int32[3]"), "end", in("int32[3]"), NULL, NULL);
  SETINTS(o, "squeeze_mask", "1,0,0");
  CHECK_EQ_STR(inf(o), "fp32[?,?]");
  /* out-of-range indices clamp like Python slices */
  o = op4("slice_by_index", 1, "x", in("fp32[5]"), "begin", INTS("-100"), "end", INTS("100"), NULL, NULL);
  CHECK_EQ_STR(inf(o), "fp32[5]");
  o = op4("slice_by_index", 1, "x", in("fp32[5]"), "begin", INTS("4"), "end", INTS("-100"), "stride", INTS("-2"));
  CHECK_EQ_STR(inf(o), "fp32[3]");

  CHECK_EQ_STR(inf(OP3("slice_by_size", "x", in("fp32[10,B,8]"), "begin", INTS("2,0,1"), "size", INTS("3,-1,-1"))),
               "fp32[3,B,7]");
  CHECK_EQ_STR(inf(OP3("slice_by_size", "x", in("fp32[10,8]"), "begin", INTS("8,0"), "size", INTS("3,8"))), "ERR");
  CHECK_EQ_STR(inf(OP3("slice_by_size", "x", in("fp32[10,8]"), "begin", in("int32[2]"), "size", INTS("3,-1"))),
               "fp32[3,?]");
  CHECK_EQ_STR(inf(OP3("slice_by_size", "x", in("fp32[10,8]"), "begin", INTS("0"), "size", INTS("3"))), "ERR");
  end();
}

static void test_gather_one_hot_pad_tile(void) {
  mgopt_op *o;
  begin();
  o = OP2("gather", "x", in("fp32[5,B,7]"), "indices", in("int32[2,3]"));
  CHECK_EQ_STR(inf(o), "fp32[2,3,B,7]");
  mgopt_op_set_int(o, "axis", -1);
  CHECK_EQ_STR(inf(o), "fp32[5,B,2,3]");
  mgopt_op_set_int(o, "axis", 3);
  CHECK_EQ_STR(inf(o), "ERR");
  o = OP2("gather", "x", in("fp32[4,6,7]"), "indices", in("int32[4,2]"));
  mgopt_op_set_int(o, "axis", 1);
  mgopt_op_set_int(o, "batch_dims", 1);
  CHECK_EQ_STR(inf(o), "fp32[4,2,7]");
  mgopt_op_set_int(o, "batch_dims", 2);
  CHECK_EQ_STR(inf(o), "ERR");
  CHECK_EQ_STR(inf(OP2("gather", "x", in("fp32[4]"), "indices", in("fp32[2]"))), "ERR");
  CHECK_EQ_STR(inf(OP2("gather", "x", in("fp32[4]"), "indices", in("int32[]"))), "fp32[]");

  o = OP1("one_hot", "indices", in("int32[B,3]"));
  mgopt_op_set_int(o, "one_hot_vector_size", 10);
  CHECK_EQ_STR(inf(o), "fp32[B,3,10]");
  mgopt_op_set_int(o, "axis", 0);
  CHECK_EQ_STR(inf(o), "fp32[10,B,3]");
  mgopt_op_set_int(o, "axis", 3);
  CHECK_EQ_STR(inf(o), "ERR");

  o = OP2("pad", "x", in("fp32[1,3,H,8]"), "pad", INTS("1,1,2,0"));
  CHECK_EQ_STR(inf(o), "fp32[1,3,?,10]");
  CHECK_EQ_STR(inf(OP2("pad", "x", in("fp32[1,3,H,8]"), "pad", INTS("0,0,0,0"))), "fp32[1,3,H,8]");
  CHECK_EQ_STR(inf(OP2("pad", "x", in("fp32[4]"), "pad", INTS("1,2,3"))), "ERR");
  CHECK_EQ_STR(inf(OP2("pad", "x", in("fp32[4]"), "pad", INTS("1,2,3,4"))), "ERR");
  CHECK_EQ_STR(inf(OP2("pad", "x", in("fp32[4]"), "pad", INTS("-3,-2"))), "ERR");
  CHECK_EQ_STR(inf(OP2("pad", "x", in("fp32[2,4]"), "pad", in("int32[2]"))), "fp32[2,?]");
  o = OP2("pad", "x", in("fp32[2,4]"), "pad", INTS("1,1"));
  mgopt_op_set_string(o, "mode", "reflect");
  CHECK_EQ_STR(inf(o), "fp32[2,6]");
  mgopt_op_set_string(o, "mode", "wrap");
  CHECK_EQ_STR(inf(o), "ERR");

  CHECK_EQ_STR(inf(OP2("tile", "x", in("fp32[B,3,2]"), "reps", INTS("1,2,0"))), "fp32[B,6,0]");
  CHECK_EQ_STR(inf(OP2("tile", "x", in("fp32[B,3]"), "reps", INTS("2,2"))), "fp32[?,6]");
  CHECK_EQ_STR(inf(OP2("tile", "x", in("fp32[3]"), "reps", INTS("2,2"))), "ERR");
  CHECK_EQ_STR(inf(OP2("tile", "x", in("fp32[3]"), "reps", INTS("-1"))), "ERR");
  CHECK_EQ_STR(inf(OP2("tile", "x", in("fp32[3]"), "reps", INTS("4611686018427387903"))), "ERR");
  end();
}

/* ---------------------------------------------------------------- linear algebra */

static void test_matmul_linear(void) {
  mgopt_op *o;
  begin();
  CHECK_EQ_STR(inf(OP2("matmul", "x", in("fp32[B,2,3]"), "y", in("fp32[3,4]"))), "fp32[B,2,4]");
  CHECK_EQ_STR(inf(OP2("matmul", "x", in("fp32[5,1,2,3]"), "y", in("fp32[6,3,4]"))), "fp32[5,6,2,4]");
  CHECK_EQ_STR(inf(OP2("matmul", "x", in("fp32[3]"), "y", in("fp32[B,3,4]"))), "fp32[B,4]");
  CHECK_EQ_STR(inf(OP2("matmul", "x", in("fp32[2,3]"), "y", in("fp32[3]"))), "fp32[2]");
  CHECK_EQ_STR(inf(OP2("matmul", "x", in("fp32[3]"), "y", in("fp32[3]"))), "fp32[]");
  CHECK_EQ_STR(inf(OP2("matmul", "x", in("fp32[2,3]"), "y", in("fp32[4,5]"))), "ERR");
  CHECK_EQ_STR(inf(OP2("matmul", "x", in("fp32[2,2,3]"), "y", in("fp32[3,3,5]"))), "ERR");
  CHECK_EQ_STR(inf(OP2("matmul", "x", in("fp32[]"), "y", in("fp32[3]"))), "ERR");
  CHECK_EQ_STR(inf(OP2("matmul", "x", in("fp32[*]"), "y", in("fp32[3,4]"))), "fp32[*]");
  CHECK_EQ_STR(inf(OP2("matmul", "x", in("fp32[2,K]"), "y", in("fp32[?,4]"))), "fp32[2,4]");
  o = OP2("matmul", "x", in("fp32[3,2]"), "y", in("fp32[4,3]"));
  mgopt_op_set_bool(o, "transpose_x", 1);
  mgopt_op_set_bool(o, "transpose_y", 1);
  CHECK_EQ_STR(inf(o), "fp32[2,4]");
  mgopt_op_set_bool(o, "transpose_y", 0);
  CHECK_EQ_STR(inf(o), "ERR");

  CHECK_EQ_STR(inf(OP2("linear", "x", in("fp32[B,S,16]"), "weight", in("fp32[32,16]"))), "fp32[B,S,32]");
  CHECK_EQ_STR(inf(OP3("linear", "x", in("fp32[B,16]"), "weight", in("fp32[32,16]"), "bias", in("fp32[32]"))),
               "fp32[B,32]");
  CHECK_EQ_STR(inf(OP3("linear", "x", in("fp32[B,16]"), "weight", in("fp32[32,16]"), "bias", in("fp32[31]"))), "ERR");
  CHECK_EQ_STR(inf(OP2("linear", "x", in("fp32[B,15]"), "weight", in("fp32[32,16]"))), "ERR");
  CHECK_EQ_STR(inf(OP2("linear", "x", in("fp32[B,16]"), "weight", in("fp32[32,16,1]"))), "ERR");
  end();
}

static mgopt_op *conv(const char *type, const char *x, const char *w) {
  return OP2(type, "x", in(x), "weight", in(w));
}

static void test_conv(void) {
  mgopt_op *o;
  begin();
  o = conv("conv", "fp32[1,3,32,32]", "fp32[8,3,3,3]");
  CHECK_EQ_STR(inf(o), "fp32[1,8,30,30]");
  SETINTS(o, "strides", "2,2");
  CHECK_EQ_STR(inf(o), "fp32[1,8,15,15]");
  mgopt_op_set_string(o, "pad_type", "same");
  CHECK_EQ_STR(inf(o), "fp32[1,8,16,16]");
  mgopt_op_set_string(o, "pad_type", "same_lower");
  CHECK_EQ_STR(inf(o), "fp32[1,8,16,16]");
  mgopt_op_set_string(o, "pad_type", "custom");
  SETINTS(o, "pad", "1,1,0,2");
  CHECK_EQ_STR(inf(o), "fp32[1,8,16,16]");
  SETINTS(o, "pad", "1,1");
  CHECK_EQ_STR(inf(o), "ERR");
  SETINTS(o, "pad", "1,1,-1,0");
  CHECK_EQ_STR(inf(o), "ERR");
  mgopt_op_set_string(o, "pad_type", "valid");
  SETINTS(o, "strides", "1,1");
  SETINTS(o, "dilations", "2,3");
  CHECK_EQ_STR(inf(o), "fp32[1,8,28,26]");
  SETINTS(o, "dilations", "0,1");
  CHECK_EQ_STR(inf(o), "ERR");
  mgopt_op_remove_attr(o, "dilations");
  mgopt_op_set_string(o, "pad_type", "bogus");
  CHECK_EQ_STR(inf(o), "ERR");
  SETINTS(o, "strides", "1");
  mgopt_op_set_string(o, "pad_type", "valid");
  CHECK_EQ_STR(inf(o), "ERR");
  /* symbolic spatial dims: same with stride 1 keeps them */
  o = conv("conv", "fp32[N,3,H,W]", "fp32[8,3,3,3]");
  mgopt_op_set_string(o, "pad_type", "same");
  CHECK_EQ_STR(inf(o), "fp32[N,8,H,W]");
  mgopt_op_set_string(o, "pad_type", "valid");
  CHECK_EQ_STR(inf(o), "fp32[N,8,?,?]");
  /* 1-d conv, groups, channel checks */
  o = conv("conv", "fp32[1,4,10]", "fp32[8,2,3]");
  mgopt_op_set_int(o, "groups", 2);
  CHECK_EQ_STR(inf(o), "fp32[1,8,8]");
  mgopt_op_set_int(o, "groups", 1);
  CHECK_EQ_STR(inf(o), "ERR");
  mgopt_op_set_int(o, "groups", 0);
  CHECK_EQ_STR(inf(o), "ERR");
  CHECK_EQ_STR(inf(conv("conv", "fp32[1,3,2,2]", "fp32[8,3,3,3]")), "ERR"); /* kernel larger than input */
  CHECK_EQ_STR(inf(conv("conv", "fp32[1,3,8]", "fp32[8,3,3,3]")), "ERR");   /* ranks differ */
  CHECK_EQ_STR(inf(conv("conv", "fp32[1,3]", "fp32[8,3]")), "ERR");
  CHECK_EQ_STR(inf(conv("conv", "fp32[*]", "fp32[8,3,3,3]")), "fp32[?,8,?,?]");
  CHECK_EQ_STR(inf(conv("conv", "fp32[1,3,9,9]", "fp32[*]")), "fp32[1,?,?,?]");
  CHECK_EQ_STR(inf(OP1("conv", "x", in("fp32[1,3,9,9]"))), "ERR");

  o = conv("conv_transpose", "fp32[1,8,16,16]", "fp32[8,4,3,3]");
  SETINTS(o, "strides", "2,2");
  CHECK_EQ_STR(inf(o), "fp32[1,4,33,33]");
  mgopt_op_set_string(o, "pad_type", "custom");
  SETINTS(o, "pad", "1,1,1,0");
  CHECK_EQ_STR(inf(o), "fp32[1,4,31,32]");
  mgopt_op_set_string(o, "pad_type", "same");
  CHECK_EQ_STR(inf(o), "fp32[1,4,32,32]");
  SETINTS(o, "output_shape", "1,4,33,34");
  CHECK_EQ_STR(inf(o), "fp32[1,4,33,34]");
  SETINTS(o, "output_shape", "31,30");
  CHECK_EQ_STR(inf(o), "fp32[1,4,31,30]");
  SETINTS(o, "output_shape", "31,30,1");
  CHECK_EQ_STR(inf(o), "ERR");
  o = conv("conv_transpose", "fp32[1,8,16]", "fp32[8,4,3]");
  mgopt_op_set_int(o, "groups", 2);
  CHECK_EQ_STR(inf(o), "fp32[1,8,18]");
  CHECK_EQ_STR(inf(conv("conv_transpose", "fp32[1,7,16]", "fp32[8,4,3]")), "ERR");
  end();
}

static void test_pool(void) {
  mgopt_op *o;
  begin();
  o = OP1("max_pool", "x", in("fp32[1,3,7,7]"));
  SETINTS(o, "kernel_sizes", "2,2");
  SETINTS(o, "strides", "2,2");
  CHECK_EQ_STR(inf(o), "fp32[1,3,3,3]");
  mgopt_op_set_bool(o, "ceil_mode", 1);
  CHECK_EQ_STR(inf(o), "fp32[1,3,4,4]");
  mgopt_op_set_string(o, "pad_type", "same");
  CHECK_EQ_STR(inf(o), "fp32[1,3,4,4]");
  mgopt_op_set_bool(o, "ceil_mode", 0);
  mgopt_op_set_string(o, "pad_type", "custom");
  SETINTS(o, "pad", "1,1,1,0");
  CHECK_EQ_STR(inf(o), "fp32[1,3,4,4]");
  SETINTS(o, "kernel_sizes", "2");
  CHECK_EQ_STR(inf(o), "ERR");
  mgopt_op_remove_attr(o, "kernel_sizes");
  CHECK_EQ_STR(inf(o), "ERR");
  /* ceil mode: a last window that would start in the trailing padding is dropped */
  o = OP1("avg_pool", "x", in("fp32[1,1,6]"));
  SETINTS(o, "kernel_sizes", "1");
  SETINTS(o, "strides", "2");
  mgopt_op_set_string(o, "pad_type", "custom");
  SETINTS(o, "pad", "1,1");
  CHECK_EQ_STR(inf(o), "fp32[1,1,4]");
  mgopt_op_set_bool(o, "ceil_mode", 1);
  CHECK_EQ_STR(inf(o), "fp32[1,1,4]");
  o = OP1("avg_pool", "x", in("fp32[N,C,H,W]"));
  SETINTS(o, "kernel_sizes", "3,3");
  CHECK_EQ_STR(inf(o), "fp32[N,C,?,?]");
  mgopt_op_set_string(o, "pad_type", "same");
  CHECK_EQ_STR(inf(o), "fp32[N,C,H,W]");
  o = OP1("max_pool", "x", in("fp32[1,3,2,2]"));
  SETINTS(o, "kernel_sizes", "3,3");
  CHECK_EQ_STR(inf(o), "ERR");
  o = OP1("max_pool", "x", in("fp32[*]"));
  SETINTS(o, "kernel_sizes", "3,3");
  CHECK_EQ_STR(inf(o), "fp32[?,?,?,?]");
  end();
}

/* ---------------------------------------------------------------- the rest */

static void test_reduce_pixel_shuffle(void) {
  mgopt_op *o;
  begin();
  o = OP1("reduce_sum", "x", in("fp32[B,3,4]"));
  CHECK_EQ_STR(inf(o), "fp32[]");
  mgopt_op_set_bool(o, "keep_dims", 1);
  CHECK_EQ_STR(inf(o), "fp32[1,1,1]");
  SETINTS(o, "axes", "-1,1");
  CHECK_EQ_STR(inf(o), "fp32[B,1,1]");
  mgopt_op_set_bool(o, "keep_dims", 0);
  CHECK_EQ_STR(inf(o), "fp32[B]");
  SETINTS(o, "axes", "3");
  CHECK_EQ_STR(inf(o), "ERR");
  o = OP1("reduce_mean", "x", in("fp32[*]"));
  CHECK_EQ_STR(inf(o), "fp32[]");
  mgopt_op_set_bool(o, "keep_dims", 1);
  CHECK_EQ_STR(inf(o), "fp32[*]");

  o = OP1("pixel_shuffle", "x", in("fp32[N,12,5,6]"));
  mgopt_op_set_int(o, "upscale_factor", 2);
  CHECK_EQ_STR(inf(o), "fp32[N,3,10,12]");
  mgopt_op_set_int(o, "upscale_factor", 3);
  CHECK_EQ_STR(inf(o), "ERR"); /* 12 channels do not divide by 9 */
  mgopt_op_set_int(o, "upscale_factor", 0);
  CHECK_EQ_STR(inf(o), "ERR");
  o = OP1("pixel_shuffle", "x", in("fp32[1,4,4]"));
  mgopt_op_set_int(o, "upscale_factor", 2);
  CHECK_EQ_STR(inf(o), "ERR");
  end();
}

/* space_to_batch / batch_to_space: the batch grows by the block's product, each padded spatial dim divides by its block; crops undo paddings */
static void test_space_batch(void) {
  mgopt_op *o;
  begin();
  o = OP1("space_to_batch", "x", in("fp32[1,3,10,7]"));
  SETINTS(o, "block_shape", "2,3");
  SETINTS(o, "paddings", "1,1,1,1");
  CHECK_EQ_STR(inf(o), "fp32[6,3,6,3]");
  SETINTS(o, "paddings", "0,1,1,1");
  CHECK_EQ_STR(inf(o), "ERR"); /* 11 does not divide by 2 */
  SETINTS(o, "paddings", "1,1");
  CHECK_EQ_STR(inf(o), "ERR");
  o = OP1("space_to_batch", "x", in("fp32[N,3,8]"));
  SETINTS(o, "block_shape", "2");
  SETINTS(o, "paddings", "0,0");
  CHECK_EQ_STR(inf(o), "fp32[?,3,4]");
  o = OP1("batch_to_space", "x", in("fp32[6,3,5,2]"));
  SETINTS(o, "block_shape", "2,3");
  SETINTS(o, "crops", "0,1,1,1");
  CHECK_EQ_STR(inf(o), "fp32[1,3,9,4]");
  SETINTS(o, "crops", "0,11,0,0");
  CHECK_EQ_STR(inf(o), "ERR");
  o = OP1("batch_to_space", "x", in("fp32[5,3,5,2]"));
  SETINTS(o, "block_shape", "2,3");
  SETINTS(o, "crops", "0,0,0,0");
  CHECK_EQ_STR(inf(o), "ERR"); /* batch 5 does not divide by 6 */
  end();
}

static void test_quantization_constexpr(void) {
  mgopt_op *o;
  begin();
  o = OP2("quantize", "input", in("fp32[B,4]"), "scale", in("fp32[]"));
  mgopt_op_set_string(o, "output_dtype", "uint8");
  CHECK_EQ_STR(inf(o), "uint8[B,4]");
  mgopt_op_set_string(o, "output_dtype", "fp16");
  CHECK_EQ_STR(inf(o), "ERR");
  CHECK_EQ_STR(inf(OP3("dequantize", "input", in("int8[B,4]"), "zero_point", in("int8[]"), "scale", in("fp16[]"))),
               "fp16[B,4]");
  CHECK_EQ_STR(inf(OP2("dequantize", "input", in("int8[4]"), "scale", in("int32[]"))), "fp32[4]");
  o = OP3("constexpr_affine_dequantize", "quantized_data", in("uint8[8,4]"), "zero_point", in("uint8[8]"), "scale",
          in("fp16[8]"));
  mgopt_op_set_int(o, "axis", 0);
  CHECK_EQ_STR(inf(o), "fp16[8,4]");
  /* palettization, iOS16 form: packed indices, explicit shape */
  o = OP2("constexpr_lut_to_dense", "indices", in("uint8[16]"), "lut", in("fp16[16]"));
  SETINTS(o, "shape", "8,8");
  CHECK_EQ_STR(inf(o), "fp16[8,8]");
  /* iOS18 form: lut [groups..., 2^nbits, vector_size] */
  CHECK_EQ_STR(inf(OP2("constexpr_lut_to_dense", "indices", in("uint4[8,8]"), "lut", in("fp16[2,1,16,1]"))),
               "fp16[8,8]");
  CHECK_EQ_STR(inf(OP2("constexpr_lut_to_dense", "indices", in("uint4[8,8]"), "lut", in("fp32[1,1,16,2]"))),
               "fp32[8,16]");
  o = OP2("constexpr_lut_to_dense", "indices", in("uint4[8,8]"), "lut", in("fp32[1,1,16,2]"));
  mgopt_op_set_int(o, "vector_axis", 0);
  CHECK_EQ_STR(inf(o), "fp32[16,8]");
  CHECK_EQ_STR(inf(OP2("constexpr_lut_to_dense", "indices", in("uint4[8,8]"), "lut", in("fp32[16]"))), "ERR");
  o = OP2("constexpr_sparse_to_dense", "nonzero_data", in("fp16[10]"), "mask", in("uint8[4]"));
  SETINTS(o, "shape", "4,8");
  CHECK_EQ_STR(inf(o), "fp16[4,8]");
  CHECK_EQ_STR(inf(OP2("constexpr_sparse_to_dense", "nonzero_data", in("fp16[10]"), "mask", in("uint1[4,8]"))),
               "fp16[4,8]");
  CHECK_EQ_STR(inf(OP2("constexpr_blockwise_shift_scale", "data", in("int4[4,8]"), "scale", in("fp16[4,1]"))),
               "fp16[4,8]");
  o = OP1("constexpr_cast", "source_val", in("fp16[4,8]"));
  mgopt_op_set_string(o, "output_dtype", "fp32");
  CHECK_EQ_STR(inf(o), "fp32[4,8]");
  end();
}

static void test_control_flow(void) {
  mgopt_op *o;
  mgopt_value *vs[2];
  mgopt_type bt;
  begin();
  vs[0] = in("int32[]");
  vs[1] = in("fp32[B,4]");
  o = mgopt_op_new(P, "while_loop", 2, 2);
  mgopt_op_append(o, F->body);
  mgopt_op_set_operand_list(o, "loop_vars", vs, 2);
  CHECK_EQ_STR(inf(o), "int32[]");
  CHECK_EQ_STR(fmt_type(&o->outs[1]->type), "fp32[B,4]");
  mgopt_op_set_operand_list(o, "loop_vars", vs, 1);
  CHECK_EQ_STR(inf(o), "ERR");

  o = mgopt_op_new(P, "cond", 1, 2);
  mgopt_op_append(o, F->body);
  mgopt_op_set_operand(o, "pred", in("bool[]"));
  CHECK_EQ_STR(inf(o), "ERR"); /* the true branch gives no output yet */
  bt = parse_type("fp16[3,S]");
  mgopt_block_add_output(o->blocks[0], mgopt_block_add_arg(o->blocks[0], "t", &bt));
  CHECK_EQ_STR(inf(o), "fp16[3,S]");
  mgopt_op_set_operand(o, "pred", NULL);
  CHECK_EQ_STR(inf(o), "ERR");
  end();
}

/* ---------------------------------------------------------------- bad IR */

/* Every registered op, given no operands, or operands of every odd kind,
   reports MGOPT_OK or MGOPT_ERR_TYPE and never crashes. */
static void test_bad_ir_never_crashes(void) {
  static const char *const specs[] = {"fp32[*]", "fp32[]",   "fp32[1,2,3,4]", "int32[9223372036854775807,3]",
                                      "unknown[B,?]", "bool[0,0,0]", "int8[1]", "fp32[3,3,3,3,3,3,3]"};
  int32_t k;
  int si, bad = 0, errs = 0;
  begin();
  for (k = 1; k < MGOPT_OP__COUNT; k++) {
    const mgopt_op_def *d = mgopt_op_def_get(k);
    mgopt_op *o = mgopt_op_new(P, d->name, 1, d->nblocks > 0 ? d->nblocks : 0);
    mgopt_status s;
    mgopt_op_append(o, F->body);
    s = mgopt_op_infer(P, o, &D);
    if (s != MGOPT_ERR_TYPE) {
      printf("  %s with no operands: status %d\n", d->name, (int)s);
      bad++;
    }
    errs += s == MGOPT_ERR_TYPE && D.msg[0] != 0;
    for (si = 0; si < (int)(sizeof specs / sizeof specs[0]) + 2; si++) {
      int32_t i;
      mgopt_value *v;
      if (si < (int)(sizeof specs / sizeof specs[0])) {
        v = in(specs[si]);
      } else {
        mgopt_type t;
        memset(&t, 0, sizeof t);
        t.kind = si == (int)(sizeof specs / sizeof specs[0]) ? MGOPT_TYPE_OTHER : MGOPT_TYPE_TENSOR;
        t.rank = si == (int)(sizeof specs / sizeof specs[0]) ? 0 : 3; /* rank 3 with dims missing */
        v = in("fp32[]");
        v->type = t;
      }
      o = mgopt_op_new(P, d->name, 2, d->nblocks > 0 ? d->nblocks : 0);
      mgopt_op_append(o, F->body);
      for (i = 0; i < d->nslots; i++) {
        if (d->slots[i].flags & MGOPT_SLOT_VARIADIC) {
          mgopt_value *two[2];
          two[0] = two[1] = v;
          mgopt_op_set_operand_list(o, d->slots[i].name, two, 2);
        } else {
          mgopt_op_set_operand(o, d->slots[i].name, v);
        }
      }
      /* parameters given as (non-constant) operands too */
      for (i = 0; i < d->nattrs; i++)
        if (d->attrs[i].kind != MGOPT_ATTR_TENSOR && si % 2) mgopt_op_set_operand(o, d->attrs[i].name, v);
      s = mgopt_op_infer(P, o, &D);
      if (s != MGOPT_OK && s != MGOPT_ERR_TYPE) {
        printf("  %s on %d: status %d\n", d->name, si, (int)s);
        bad++;
      }
      /* a list where one value is expected */
      if (d->nslots > 0 && !(d->slots[0].flags & MGOPT_SLOT_VARIADIC)) {
        mgopt_value *two[2];
        two[0] = two[1] = v;
        mgopt_op_set_operand_list(o, d->slots[0].name, two, 2);
        s = mgopt_op_infer(P, o, &D);
        if (s != MGOPT_ERR_TYPE) {
          printf("  %s with a list operand: status %d\n", d->name, (int)s);
          bad++;
        }
      }
    }
  }
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(errs, MGOPT_OP__COUNT - 1); /* every error carries a message */
  end();
}

/* Inferred types agree with the verifier: a small network verifies. */
static void test_verifier_agrees(void) {
  mgopt_op *c, *r, *sh, *mm;
  mgopt_diag d;
  begin();
  c = conv("conv", "fp32[N,3,32,32]", "fp32[8,3,3,3]");
  SETINTS(c, "strides", "2,2");
  mgopt_op_set_string(c, "pad_type", "same");
  CHECK_EQ_STR(inf(c), "fp32[N,8,16,16]");
  r = OP1("relu", "x", c->outs[0]);
  CHECK_EQ_STR(inf(r), "fp32[N,8,16,16]");
  sh = OP2("reshape", "x", r->outs[0], "shape", INTS("0,-1"));
  CHECK_EQ_STR(inf(sh), "fp32[N,2048]");
  mm = OP2("matmul", "x", sh->outs[0], "y", in("fp32[2048,10]"));
  CHECK_EQ_STR(inf(mm), "fp32[N,10]");
  mgopt_block_add_output(F->body, mm->outs[0]);
  mgopt_value_set_name(c->outs[0], "c");
  mgopt_value_set_name(r->outs[0], "r");
  mgopt_value_set_name(sh->outs[0], "sh");
  mgopt_value_set_name(mm->outs[0], "mm");
  CHECK(mgopt_program_verify(P, &d) == MGOPT_OK);
  /* a stored type that contradicts inference */
  mm->outs[0]->type.dims[1].v = 11;
  CHECK(mgopt_program_verify(P, &d) == MGOPT_ERR_VERIFY);
  mm->outs[0]->type.dims[1].v = 10;
  /* a required attribute missing */
  {
    mgopt_op *t = OP1("transpose", "x", sh->outs[0]);
    mgopt_value_set_name(t->outs[0], "t");
    CHECK(mgopt_program_verify(P, &d) == MGOPT_ERR_VERIFY);
    SETINTS(t, "perm", "1,0");
    CHECK_EQ_STR(inf(t), "fp32[2048,N]");
    CHECK(mgopt_program_verify(P, &d) == MGOPT_OK);
  }
  end();
}

static const test_case tests[] = {
    TEST(test_name_table),     TEST(test_fold_kernels), TEST(test_defaults),   TEST(test_broadcast),
    TEST(test_unary_cast_identity), TEST(test_reshape), TEST(test_transpose_expand_squeeze),
    TEST(test_concat_stack_split), TEST(test_slices), TEST(test_gather_one_hot_pad_tile),
    TEST(test_matmul_linear),  TEST(test_conv),       TEST(test_pool),
    TEST(test_reduce_pixel_shuffle), TEST(test_space_batch), TEST(test_quantization_constexpr), TEST(test_control_flow),
    TEST(test_bad_ir_never_crashes), TEST(test_verifier_agrees),
};
TEST_MAIN(tests)
