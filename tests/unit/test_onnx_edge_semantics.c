/* tests/unit/test_onnx_edge_semantics.c — every ONNX op that the importer maps onto a canonical op keeps ONNX's
   semantics at its edge values (+-0, +-inf, NaN, denormals, the largest finite float, integer extremes).

   Each case writes a one-node ONNX model (a .mil program with an onnx::Op, exported and read back, so the
   importer maps the node), checks that the node became the expected canonical op, then computes the node on
   the edge values twice: through the evaluator (mgopt_eval, op_fn = mgopt_onnx_eval_op, as `mgopt test -p
   none` runs a model) and through a `default` pipeline constant fold (the same node with its inputs as
   initializers). Both must give ONNX's reference value: the operator spec, and where the spec is silent the
   ONNX reference implementation (numpy at the dtype). Where ONNX Runtime 1.30 (CPU) differs, the spec's
   function is followed:
   - Sigmoid: ORT's approximation gives 0 at -20 and -100; sigmoid(-20) is 2.06e-9, sigmoid(-100) 3.78e-44.
   - Elu: ORT (and the reference implementation) compute alpha * (exp(x) - 1) in fp32, 0 at x = -1e-8;
     the function's value there is -1e-8 (expm1).
   - Clip with no max: ORT agrees with the spec (the dtype's largest finite value, not +inf), the reference
     implementation (np.clip(x, min, None)) keeps +inf.
   - Softplus: ORT agrees (log1p form); the reference implementation's log(exp(x) + 1) overflows from 89 on.
   - MaxPool: a NaN in a window gives NaN here (numpy's max); ORT ignores NaNs (max(1, NaN) is 1).
   - Max / Min: ORT propagates NaN too; of -0 and +0 it returns +0 where numpy's maximum returns its first
     operand, so the sign of a zero result is not checked.
   Signed zeros are checked where numpy's reference defines them. NaN compares as NaN whatever its payload. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <stdlib.h>
#include <math.h>
#include <float.h>

#define ZS 1   /* the sign of a zero result is not checked */
#define KEEP 4 /* the default pipeline keeps the op (a weight's DequantizeLinear): no fold to check */

typedef struct ecase {
  const char *op;     /* ONNX op type */
  int64_t opset;
  const char *attrs;  /* ", name=value" ... appended after the operands */
  const char *pre;    /* extra constant lines (bounds, ...) */
  const char *more;   /* extra operands, ", in1=%lo" ... */
  mgopt_dtype dt, odt;
  int nin;            /* 1 or 2 tensor inputs */
  const char *canon;  /* the canonical op the node must become */
  double (*f1)(double);
  double (*f2)(double, double);
  int64_t (*i1)(int64_t);
  int64_t (*i2)(int64_t, int64_t);
  const double *xv, *yv; /* value sets (NULL: the dtype's edge set) */
  int nx, ny;
  int flags;
  double tol;         /* relative tolerance (libm functions); 0: exact */
} ecase;

/* ---------------------------------------------------------------- value sets */

static const double FV[] = {0.0,     -0.0,     INFINITY, -INFINITY, NAN,  1.40129846e-45, -1.40129846e-45,
                            1.17549435e-38, 3.40282347e+38, -3.40282347e+38, 1.0, -1.0, 0.5, -0.5, 2.5,
                            -2.5,    1.5,     100.0,    -100.0,    89.0, -89.0, 20.0, -20.0, 0.1, 1e-8, -1e-8};
static const double FB[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.40129846e-45, 3.40282347e+38, -3.40282347e+38,
                            1.0, -1.0, 2.5, -0.5, 3.0};
static const double I32[] = {-2147483648.0, -2147483647.0, -7, -1, 0, 1, 7, 2147483647.0};
static const double I32NZ[] = {-2147483648.0, -7, -1, 1, 3, 7, 2147483647.0};
static const double EXPS[] = {0, 1, 2, 3, 31};
static const double CASTI[] = {200, -56, 300, -129, 16777217, 65520, 65519, -2147483648.0, 2147483647.0, 0};
static const double CASTF[] = {0.0, -0.0, 0.9, -0.9, 2.5, -2.5, 127.0, -128.0, 1.40129846e-45, 100.75};
#define N_(a) (int)(sizeof a / sizeof a[0])

static int64_t i64_set[] = {INT64_MIN, INT64_MIN + 1, -7, -1, 0, 1, 7, INT64_MAX};

/* ---------------------------------------------------------------- float references (double, then rounded once) */

static double r_abs(double x) { return fabs(x); }
static double r_ceil(double x) { return ceil(x); }
static double r_floor(double x) { return floor(x); }
static double r_round(double x) { return nearbyint(x); } /* half to even in the default rounding mode */
static double r_cos(double x) { return cos(x); }
static double r_sin(double x) { return sin(x); }
static double r_tan(double x) { return tan(x); }
static double r_acos(double x) { return acos(x); }
static double r_asin(double x) { return asin(x); }
static double r_atan(double x) { return atan(x); }
static double r_atanh(double x) { return atanh(x); }
static double r_cosh(double x) { return cosh(x); }
static double r_sinh(double x) { return sinh(x); }
static double r_erf(double x) { return erf(x); }
static double r_exp(double x) { return exp(x); }
static double r_tanh(double x) { return tanh(x); }
static double r_sqrt(double x) { return sqrt(x); }
static double r_log(double x) { return log(x); } /* log(+-0) = -inf, log(x < 0) = NaN */
static double r_relu(double x) { return x < 0 ? 0.0 : x; } /* np.maximum(x, 0): -0 stays -0, NaN stays NaN */
static double r_sigmoid(double x) { return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x)); }
static double r_softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }
static double r_softsign(double x) { return x / (1.0 + fabs(x)); }
static double r_neg(double x) { return -x; }
static double r_recip(double x) { return 1.0 / x; }
static double r_sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x; } /* np.sign(-0.0) = 0.0 */
/* alpha as the fp32 attribute holds it: the cast to float drops the extra
   precision a float constant may carry where float expressions evaluate in
   double (FLT_EVAL_METHOD 1, s390x at -std=c99) */
static double r_leaky(double x) { return x > 0 ? x : x * (double)(float)0.01f; }
static double r_elu(double x) { return x > 0 ? x : x == 0 ? x : expm1(x); } /* alpha 1; np.where(x > 0, ...) */
static double r_hsig(double x) {
  float t = (float)0.2f * (float)x + (float)0.5f;
  return t != t ? t : t < 0 ? 0.0 : t > 1 ? 1.0 : t;
}
static double r_thrrelu(double x) { return x > 1.0 ? x : 0.0; }
static double r_gelu(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }
static double r_clip(double x) { return x != x ? x : x < -1 ? -1.0 : x > 1 ? 1.0 : x; }
/* Clip with min -1 alone: max is the dtype's largest finite value (spec; ONNX Runtime agrees; the reference
   implementation's np.clip(x, min, None) would keep +inf) */
static double r_clip_lo(double x) { return x != x ? x : x < -1 ? -1.0 : x > 3.4028234663852886e+38 ? 3.4028234663852886e+38 : x; }
static double r_clip_lo_h(double x) { return x != x ? x : x < -1 ? -1.0 : x > 65504.0 ? 65504.0 : x; }
static double r_ident(double x) { return x; }
static double r_cast_i(double x) { return trunc(x); }
static double r_cast_h(double x) { return x; } /* rounded by the check to the output dtype */
static double r_cast_b(double x) { return x != 0 ? 1.0 : 0.0; } /* NaN is nonzero: true */
/* integer to integer out of range: the low bits, two's complement (200 as int8 is -56) */
static int64_t q_to_i8(int64_t x) { return (int64_t)(int8_t)(uint8_t)(uint64_t)x; }
static int64_t q_to_u8(int64_t x) { return (int64_t)(uint8_t)(uint64_t)x; }
static int64_t q_to_i32(int64_t x) { return (int64_t)(int32_t)(uint32_t)(uint64_t)x; }

static double r_add(double a, double b) { return a + b; }
static double r_sub(double a, double b) { return a - b; }
static double r_mul(double a, double b) { return a * b; }
static double r_div(double a, double b) { return a / b; }
static double r_pow(double a, double b) { return pow(a, b); }
/* np.maximum / np.minimum: NaN propagates */
static double r_max(double a, double b) { return a != a || b != b ? NAN : a >= b ? a : b; }
static double r_min(double a, double b) { return a != a || b != b ? NAN : a <= b ? a : b; }
static double r_eq(double a, double b) { return a == b; }
static double r_lt(double a, double b) { return a < b; }
static double r_gt(double a, double b) { return a > b; }
static double r_le(double a, double b) { return a <= b; }
static double r_ge(double a, double b) { return a >= b; }

/* ---------------------------------------------------------------- integer references (wrap at the dtype) */

static int64_t wrap(mgopt_dtype dt, int64_t v) {
  if (dt == MGOPT_DT_INT32) return (int64_t)(int32_t)(uint32_t)(uint64_t)v;
  return v;
}
static int64_t q_neg(int64_t x) { return (int64_t)(0 - (uint64_t)x); }
static int64_t q_sign(int64_t x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }
static int64_t q_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t q_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t q_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static int64_t q_max(int64_t a, int64_t b) { return a >= b ? a : b; }
static int64_t q_min(int64_t a, int64_t b) { return a <= b ? a : b; }
/* Mod, fmod 0: the remainder takes the divisor's sign (np.mod) */
static int64_t q_mod(int64_t a, int64_t b) {
  int64_t m;
  if (b == -1) return 0;
  m = a % b;
  return m != 0 && ((m < 0) != (b < 0)) ? m + b : m;
}
static int64_t q_pow(int64_t a, int64_t e) {
  uint64_t acc = 1, base = (uint64_t)a;
  while (e > 0) {
    if (e & 1) acc *= base;
    base *= base;
    e >>= 1;
  }
  return (int64_t)acc;
}
static int64_t q_clip(int64_t x) { return x < -5 ? -5 : x > 100 ? 100 : x; }

/* ---------------------------------------------------------------- the runner */

static const char *dtname(mgopt_dtype dt) { return mgopt_dtype_name(dt); }

/* Appends value v of dtype dt as a .mil literal. */
static void put_val(char *buf, size_t cap, size_t *at, mgopt_dtype dt, double v, int64_t iv) {
  int n;
  if (!mgopt_dtype_is_float(dt)) n = snprintf(buf + *at, cap - *at, "%lld", (long long)iv);
  else if (v != v) n = snprintf(buf + *at, cap - *at, "nan");
  else if (v == INFINITY) n = snprintf(buf + *at, cap - *at, "inf");
  else if (v == -INFINITY) n = snprintf(buf + *at, cap - *at, "-inf");
  else if (v == 0) n = snprintf(buf + *at, cap - *at, signbit(v) ? "-0.0" : "0.0");
  else n = snprintf(buf + *at, cap - *at, "%.17g", v);
  if (n > 0) *at += (size_t)n;
}

/* v rounded to fp16, to nearest even (11 significant bits, exponent from -14, inf from 65520 on). */
static double round_f16(double v) {
  double a = fabs(v), q;
  int e;
  if (v != v || isinf(v)) return v;
  if (a >= 65520.0) return copysign(INFINITY, v);
  if (a == 0) return v;
  e = (int)floor(log2(a));
  if (e < -14) e = -14;
  q = ldexp(1.0, e - 10);
  return copysign(nearbyint(a / q) * q, v);
}

typedef struct vals {
  int n;
  double f[64];
  int64_t i[64];
} vals;

/* v as an int64; a float edge value no int64 holds (inf, NaN, 1e300) stands for 0. */
static int64_t as_i64(double v) { return v > -9.2e18 && v < 9.2e18 ? (int64_t)v : 0; }

static void fill(vals *v, const ecase *c, const double *set, int n, int use_i64) {
  int j;
  (void)c;
  v->n = n;
  for (j = 0; j < n; j++) {
    v->f[j] = c->dt == MGOPT_DT_FP32 ? (double)(float)set[j] : c->dt == MGOPT_DT_FP16 ? round_f16(set[j]) : set[j];
    v->i[j] = use_i64 ? i64_set[j] : as_i64(set[j]);
  }
}

/* The program: inputs as graph inputs (fold 0) or constants (fold 1). */
static void program_text(char *buf, size_t cap, const ecase *c, const vals *x, const vals *y, int fold) {
  size_t at = 0;
  int j, k;
  const char *xs = c->nin == 2 ? "(%d, 1, %s)" : "(%d, %s)";
  char xt[64], yt[64], ot[64];
  snprintf(xt, sizeof xt, xs, x->n, dtname(c->dt));
  snprintf(yt, sizeof yt, "(1, %d, %s)", y ? y->n : 1, dtname(c->dt));
  if (c->nin == 2) snprintf(ot, sizeof ot, "(%d, %d, %s)", x->n, y->n, dtname(c->odt));
  else snprintf(ot, sizeof ot, "(%d, %s)", x->n, dtname(c->odt));
  if (!fold) {
    at += (size_t)snprintf(buf + at, cap - at, "main(%%x: %s", xt);
    if (c->nin == 2) at += (size_t)snprintf(buf + at, cap - at, ", %%y: %s", yt);
    at += (size_t)snprintf(buf + at, cap - at, ") {\n");
  } else {
    at += (size_t)snprintf(buf + at, cap - at, "main() {\n");
    for (k = 0; k < c->nin; k++) {
      const vals *v = k ? y : x;
      at += (size_t)snprintf(buf + at, cap - at, "  %%%s: %s = const(val=%s", k ? "y" : "x", k ? yt : xt,
                             c->nin == 2 ? (k ? "[[" : "[") : "[");
      for (j = 0; j < v->n; j++) {
        if (j) at += (size_t)snprintf(buf + at, cap - at, c->nin == 2 && !k ? "], [" : ", ");
        else if (c->nin == 2 && !k) at += (size_t)snprintf(buf + at, cap - at, "[");
        put_val(buf, cap, &at, c->dt, v->f[j], v->i[j]);
      }
      at += (size_t)snprintf(buf + at, cap - at, "%s)\n", c->nin == 2 ? "]]" : "]");
    }
  }
  if (c->pre) at += (size_t)snprintf(buf + at, cap - at, "%s", c->pre);
  at += (size_t)snprintf(buf + at, cap - at, "  %%out: %s = onnx::%s(in0=%%x%s%s%s)\n} -> (%%out)\n", ot, c->op,
                         c->nin == 2 ? ", in1=%y" : "", c->more ? c->more : "", c->attrs ? c->attrs : "");
}

/* Writes the program as ONNX at the case's opset and reads it back. */
static mgopt_program *load_onnx(const char *src, int64_t opset, mgopt_buf *buf) {
  mgopt_program *p = NULL, *q = NULL;
  mgopt_diag d;
  mgopt_onnx_export_options eo;
  mgopt_onnx_model *m = NULL;
  memset(buf, 0, sizeof *buf);
  if (mgopt_mil_parse(src, strlen(src), NULL, &p, &d) != MGOPT_OK) {
    printf("  parse error %d:%d: %s\n%s", d.line, d.col, d.msg, src);
    return NULL;
  }
  memset(&eo, 0, sizeof eo);
  eo.opset = opset;
  if (mgopt_onnx_export(p, &eo, &m, &d) != MGOPT_OK || mgopt_onnx_write(m, NULL, buf, NULL, &d) != MGOPT_OK ||
      mgopt_onnx_load(buf->data, buf->len, NULL, &q, &d) != MGOPT_OK) {
    printf("  onnx round trip: %s\n", d.msg);
    q = NULL;
  }
  mgopt_program_destroy(p);
  return q;
}

/* 1 if got equals ONNX's value want (of dtype dt). */
static int same(const ecase *c, mgopt_dtype dt, double got, double want) {
  if (!mgopt_dtype_is_float(dt)) return got == want;
  if (want != want) return got != got;
  if (want == 0) return got == 0 && ((c->flags & ZS) || !signbit(got) == !signbit(want));
  if (isinf(want)) return got == want;
  return fabs(got - want) <= c->tol * fabs(want);
}

/* want for element (a, b) rounded to the output dtype. */
static double want_f(const ecase *c, double a, double b) {
  double w = c->f2 ? c->f2(a, b) : c->f1(a);
  if (c->odt == MGOPT_DT_FP32) return (double)(float)w;
  if (c->odt == MGOPT_DT_FP16) return round_f16((double)(float)w);
  return w;
}

/* Compares an output tensor with the reference; prints the first mismatches. */
static int check_out(const ecase *c, const char *how, const mgopt_tensor *t, const vals *x, const vals *y) {
  int nx = x->n, ny = c->nin == 2 ? y->n : 1, a, b, bad = 0;
  if (!t || t->numel != (int64_t)nx * ny || t->dtype != c->odt) {
    printf("  %s-%lld %s: wrong output (%lld elements, dtype %s)\n", c->op, (long long)c->opset, how,
           t ? (long long)t->numel : -1LL, t ? dtname((mgopt_dtype)t->dtype) : "-");
    return 0;
  }
  for (a = 0; a < nx; a++)
    for (b = 0; b < ny; b++) {
      int64_t k = (int64_t)a * ny + b;
      int ok;
      if (c->i1 || c->i2) {
        int64_t w = wrap(c->odt, c->i2 ? c->i2(x->i[a], y->i[b]) : c->i1(x->i[a]));
        int64_t g = mgopt_tensor_get_i64(t, k);
        ok = g == w;
        if (!ok && bad++ < 4)
          printf("  %s-%lld %s %s(%lld%s%lld): got %lld, want %lld\n", c->op, (long long)c->opset, how, dtname(c->dt),
                 (long long)x->i[a], c->nin == 2 ? ", " : "", c->nin == 2 ? (long long)y->i[b] : 0LL, (long long)g,
                 (long long)w);
      } else {
        double w = want_f(c, x->f[a], c->nin == 2 ? y->f[b] : 0), g = mgopt_tensor_get_f64(t, k);
        ok = same(c, c->odt, g, w);
        if (!ok && bad++ < 4) {
          if (c->nin == 2)
            printf("  %s-%lld %s %s(%.9g, %.9g): got %.9g, want %.9g\n", c->op, (long long)c->opset, how,
                   dtname(c->dt), x->f[a], y->f[b], g, w);
          else
            printf("  %s-%lld %s %s(%.9g): got %.9g, want %.9g\n", c->op, (long long)c->opset, how, dtname(c->dt),
                   x->f[a], g, w);
        }
      }
    }
  return bad == 0;
}

static mgopt_tensor *input(mgopt_program *p, const ecase *c, const vals *v, int second) {
  int64_t shape[2];
  int32_t rank = c->nin == 2 ? 2 : 1;
  mgopt_tensor *t;
  int j;
  if (c->nin == 2) {
    shape[0] = second ? 1 : v->n;
    shape[1] = second ? v->n : 1;
  } else {
    shape[0] = v->n;
  }
  t = mgopt_eval_tensor_new(p, c->dt, rank, shape);
  for (j = 0; t && j < v->n; j++) {
    if (mgopt_dtype_is_float(c->dt)) mgopt_tensor_set_f64(t, j, v->f[j]);
    else mgopt_tensor_set_i64(t, j, v->i[j]);
  }
  return t;
}

/* 1 if the program's main has an op of type `type`. */
static int has_op(mgopt_program *p, const char *type) {
  mgopt_function *f = mgopt_program_function(p, "main");
  mgopt_op *op;
  for (op = f ? f->body->first : NULL; op; op = op->next)
    if (strcmp(op->type, type) == 0) return 1;
  return 0;
}

static int run_case(const ecase *c) {
  static char text[16384];
  vals x, y;
  int use_i64 = c->dt == MGOPT_DT_INT64, ok = 1;
  mgopt_buf buf;
  mgopt_program *p;
  mgopt_diag d;
  fill(&x, c, c->xv ? c->xv : mgopt_dtype_is_float(c->dt) ? (c->nin == 2 ? FB : FV) : I32,
       c->xv ? c->nx : mgopt_dtype_is_float(c->dt) ? (c->nin == 2 ? N_(FB) : N_(FV)) : N_(I32), use_i64 && !c->xv);
  fill(&y, c, c->yv ? c->yv : mgopt_dtype_is_float(c->dt) ? FB : I32,
       c->yv ? c->ny : mgopt_dtype_is_float(c->dt) ? N_(FB) : N_(I32), use_i64 && !c->yv);
  /* the evaluator, after an import with no pipeline */
  program_text(text, sizeof text, c, &x, &y, 0);
  p = load_onnx(text, c->opset, &buf);
  if (!p) return 0;
  if (c->canon && !has_op(p, c->canon)) {
    printf("  %s-%lld: not imported as %s\n", c->op, (long long)c->opset, c->canon);
    ok = 0;
  } else {
    mgopt_tensor *in[2] = {NULL, NULL}, *out[1] = {NULL};
    mgopt_eval_options o;
    memset(&o, 0, sizeof o);
    o.op_fn = mgopt_onnx_eval_op;
    in[0] = input(p, c, &x, 0);
    if (c->nin == 2) in[1] = input(p, c, &y, 1);
    if (mgopt_eval(p, NULL, in, c->nin, out, 1, &o, &d) != MGOPT_OK) {
      printf("  %s-%lld eval: %s\n", c->op, (long long)c->opset, d.msg);
      ok = 0;
    } else {
      ok &= check_out(c, "eval", out[0], &x, &y);
    }
    if (out[0]) mgopt_eval_tensor_free(p, out[0]);
    mgopt_eval_tensor_free(p, in[0]);
    if (in[1]) mgopt_eval_tensor_free(p, in[1]);
  }
  mgopt_program_destroy(p);
  free(buf.data);
  /* the default pipeline's constant fold */
  program_text(text, sizeof text, c, &x, &y, 1);
  p = load_onnx(text, c->opset, &buf);
  if (!p) return 0;
  {
    mgopt_pipeline_options ro;
    mgopt_function *f;
    mgopt_tensor *t;
    memset(&ro, 0, sizeof ro);
    if (mgopt_pipeline_run(p, mgopt_builtin_registry(), "default", &ro, &d) != MGOPT_OK) {
      printf("  %s-%lld default: %s\n", c->op, (long long)c->opset, d.msg);
      ok = 0;
    } else {
      f = mgopt_program_function(p, "main");
      t = f && f->body->nouts == 1 ? mgopt_value_const(f->body->outs[0]->value) : NULL;
      if (!t) {
        printf("  %s-%lld default: not folded\n", c->op, (long long)c->opset);
        ok = 0;
      } else {
        ok &= check_out(c, "fold", t, &x, &y);
      }
    }
  }
  mgopt_program_destroy(p);
  free(buf.data);
  return ok;
}

#define TL 4e-7 /* a few float ulps: libm functions */
#define U(op, set, canon, f, tol) {op, set, NULL, NULL, NULL, MGOPT_DT_FP32, MGOPT_DT_FP32, 1, canon, f, NULL, NULL, NULL, NULL, NULL, 0, 0, 0, tol}
#define UA(op, set, attrs, canon, f) {op, set, attrs, NULL, NULL, MGOPT_DT_FP32, MGOPT_DT_FP32, 1, canon, f, NULL, NULL, NULL, NULL, NULL, 0, 0, 0, 0}
#define B(op, set, canon, f, odt, flags, tol) {op, set, NULL, NULL, NULL, MGOPT_DT_FP32, odt, 2, canon, NULL, f, NULL, NULL, NULL, NULL, 0, 0, flags, tol}

static const ecase float_unary[] = {
    U("Abs", 13, "abs", r_abs, 0),
    U("Ceil", 13, "ceil", r_ceil, 0),
    U("Floor", 13, "floor", r_floor, 0),
    U("Round", 11, "round", r_round, 0),
    U("Cos", 7, "cos", r_cos, TL),
    U("Sin", 7, "sin", r_sin, TL),
    U("Tan", 7, "tan", r_tan, TL),
    U("Acos", 7, "acos", r_acos, TL),
    U("Asin", 7, "asin", r_asin, TL),
    U("Atan", 7, "atan", r_atan, TL),
    U("Atanh", 9, "atanh", r_atanh, TL),
    U("Cosh", 9, "cosh", r_cosh, TL),
    U("Sinh", 9, "sinh", r_sinh, TL),
    U("Erf", 13, "erf", r_erf, TL),
    U("Exp", 13, "exp", r_exp, TL),
    U("Tanh", 13, "tanh", r_tanh, TL),
    U("Sqrt", 13, "sqrt", r_sqrt, 0),
    U("Log", 13, "log", r_log, TL),
    U("Log", 6, "log", r_log, TL),
    U("Relu", 14, "relu", r_relu, 0),
    U("Sigmoid", 13, "sigmoid", r_sigmoid, TL),
    U("Softplus", 1, "softplus", r_softplus, TL),
    U("Softsign", 1, "softsign", r_softsign, 0),
    U("Neg", 13, "mul", r_neg, 0),
    U("Reciprocal", 13, "real_div", r_recip, 0),
    U("Sign", 13, "sign", r_sign, 0),
    U("LeakyRelu", 16, "leaky_relu", r_leaky, 0),
    U("Elu", 6, "elu", r_elu, TL),
    U("HardSigmoid", 6, "sigmoid_hard", r_hsig, 0),
    U("ThresholdedRelu", 10, "thresholded_relu", r_thrrelu, 0),
    U("Gelu", 20, "gelu", r_gelu, TL),
    U("Identity", 16, NULL, r_ident, 0),
    UA("Clip", 6, ", min=-1.0, max=1.0", "clip", r_clip),
    {"Clip", 13, NULL, "  %lo: (fp32) = const(val=-1.0)\n  %hi: (fp32) = const(val=1.0)\n", ", in1=%lo, in2=%hi",
     MGOPT_DT_FP32, MGOPT_DT_FP32, 1, "clip", r_clip, NULL, NULL, NULL, NULL, NULL, 0, 0, 0, 0},
    UA("Clip", 6, ", min=-1.0", "clip", r_clip_lo),
    {"Clip", 13, NULL, "  %lo: (fp32) = const(val=-1.0)\n", ", in1=%lo", MGOPT_DT_FP32, MGOPT_DT_FP32, 1, "clip",
     r_clip_lo, NULL, NULL, NULL, NULL, NULL, 0, 0, 0, 0},
    {"Clip", 13, NULL, "  %lo: (fp16) = const(val=-1.0)\n", ", in1=%lo", MGOPT_DT_FP16, MGOPT_DT_FP16, 1, "clip",
     r_clip_lo_h, NULL, NULL, NULL, NULL, NULL, 0, 0, 0, 0},
    {"Log", 13, NULL, NULL, NULL, MGOPT_DT_FP16, MGOPT_DT_FP16, 1, "log", r_log, NULL, NULL, NULL, NULL, NULL, 0, 0, 0,
     1e-3},
    {"Sigmoid", 13, NULL, NULL, NULL, MGOPT_DT_FP16, MGOPT_DT_FP16, 1, "sigmoid", r_sigmoid, NULL, NULL, NULL, NULL,
     NULL, 0, 0, 0, 1e-3},
    {"Softplus", 1, NULL, NULL, NULL, MGOPT_DT_FP16, MGOPT_DT_FP16, 1, "softplus", r_softplus, NULL, NULL, NULL, NULL,
     NULL, 0, 0, 0, 1e-3},
};

static const ecase float_binary[] = {
    B("Add", 14, "add", r_add, MGOPT_DT_FP32, 0, 0),
    B("Sub", 14, "sub", r_sub, MGOPT_DT_FP32, 0, 0),
    B("Mul", 14, "mul", r_mul, MGOPT_DT_FP32, 0, 0),
    B("Div", 14, "real_div", r_div, MGOPT_DT_FP32, 0, 0),
    B("Pow", 15, "pow", r_pow, MGOPT_DT_FP32, 0, TL),
    B("Pow", 7, "pow", r_pow, MGOPT_DT_FP32, 0, TL),
    /* the sign of max(-0, +0) is numpy's argument order, which ONNX does not state */
    B("Max", 13, "maximum", r_max, MGOPT_DT_FP32, ZS, 0),
    B("Min", 13, "minimum", r_min, MGOPT_DT_FP32, ZS, 0),
    B("Max", 8, "maximum", r_max, MGOPT_DT_FP32, ZS, 0),
    B("Equal", 13, "equal", r_eq, MGOPT_DT_BOOL, 0, 0),
    B("Less", 13, "less", r_lt, MGOPT_DT_BOOL, 0, 0),
    B("Greater", 13, "greater", r_gt, MGOPT_DT_BOOL, 0, 0),
    B("LessOrEqual", 16, "less_equal", r_le, MGOPT_DT_BOOL, 0, 0),
    B("GreaterOrEqual", 16, "greater_equal", r_ge, MGOPT_DT_BOOL, 0, 0),
};

#define IU(op, set, dt, canon, f) {op, set, NULL, NULL, NULL, dt, dt, 1, canon, NULL, NULL, f, NULL, NULL, NULL, 0, 0, 0, 0}
#define IB(op, set, dt, canon, f) {op, set, NULL, NULL, NULL, dt, dt, 2, canon, NULL, NULL, NULL, f, NULL, NULL, 0, 0, 0, 0}

static const ecase int_ops[] = {
    IU("Neg", 13, MGOPT_DT_INT32, "mul", q_neg),
    IU("Neg", 13, MGOPT_DT_INT64, "mul", q_neg),
    IU("Sign", 13, MGOPT_DT_INT32, "sign", q_sign),
    IU("Sign", 13, MGOPT_DT_INT64, "sign", q_sign),
    IB("Add", 14, MGOPT_DT_INT32, "add", q_add),
    IB("Add", 14, MGOPT_DT_INT64, "add", q_add),
    IB("Sub", 14, MGOPT_DT_INT32, "sub", q_sub),
    IB("Sub", 14, MGOPT_DT_INT64, "sub", q_sub),
    IB("Mul", 14, MGOPT_DT_INT32, "mul", q_mul),
    IB("Mul", 14, MGOPT_DT_INT64, "mul", q_mul),
    IB("Max", 13, MGOPT_DT_INT32, "maximum", q_max),
    IB("Min", 13, MGOPT_DT_INT64, "minimum", q_min),
    /* division by zero is undefined: the divisors are nonzero */
    {"Mod", 13, NULL, NULL, NULL, MGOPT_DT_INT32, MGOPT_DT_INT32, 2, "mod", NULL, NULL, NULL, q_mod, I32, I32NZ,
     N_(I32), N_(I32NZ), 0, 0},
    /* a negative integer exponent is undefined (numpy raises): the exponents are >= 0 */
    {"Pow", 15, NULL, NULL, NULL, MGOPT_DT_INT32, MGOPT_DT_INT32, 2, "pow", NULL, NULL, NULL, q_pow, I32, EXPS, N_(I32),
     N_(EXPS), 0, 0},
    {"Clip", 13, NULL, "  %lo: (int32) = const(val=-5)\n  %hi: (int32) = const(val=100)\n", ", in1=%lo, in2=%hi",
     MGOPT_DT_INT32, MGOPT_DT_INT32, 1, "clip", NULL, NULL, q_clip, NULL, NULL, NULL, 0, 0, 0, 0},
};

static const ecase cast_ops[] = {
    /* float to int truncates toward zero; out of range and NaN are undefined (not in the set) */
    {"Cast", 13, ", to=6", NULL, NULL, MGOPT_DT_FP32, MGOPT_DT_INT32, 1, "cast", r_cast_i, NULL, NULL, NULL, CASTF, NULL,
     N_(CASTF), 0, ZS, 0},
    {"Cast", 13, ", to=3", NULL, NULL, MGOPT_DT_FP32, MGOPT_DT_INT8, 1, "cast", r_cast_i, NULL, NULL, NULL, CASTF, NULL,
     N_(CASTF), 0, ZS, 0},
    /* to fp16: round to nearest even, overflow to inf, NaN stays NaN, fp32 denormals to +-0 */
    {"Cast", 13, ", to=10", NULL, NULL, MGOPT_DT_FP32, MGOPT_DT_FP16, 1, "cast", r_cast_h, NULL, NULL, NULL, NULL, NULL,
     0, 0, 0, 0},
    {"Cast", 13, ", to=9", NULL, NULL, MGOPT_DT_FP32, MGOPT_DT_BOOL, 1, "cast", r_cast_b, NULL, NULL, NULL, NULL, NULL,
     0, 0, 0, 0},
    {"Cast", 13, ", to=3", NULL, NULL, MGOPT_DT_INT32, MGOPT_DT_INT8, 1, "cast", NULL, NULL, q_to_i8, NULL, CASTI,
     NULL, N_(CASTI), 0, 0, 0},
    {"Cast", 13, ", to=2", NULL, NULL, MGOPT_DT_INT32, MGOPT_DT_UINT8, 1, "cast", NULL, NULL, q_to_u8, NULL, CASTI,
     NULL, N_(CASTI), 0, 0, 0},
    {"Cast", 13, ", to=6", NULL, NULL, MGOPT_DT_INT64, MGOPT_DT_INT32, 1, "cast", NULL, NULL, q_to_i32, NULL, NULL,
     NULL, 0, 0, 0, 0},
    /* integer to float: rounded to nearest even (2^24 + 1 -> 2^24), to fp16 +-inf out of range */
    {"Cast", 13, ", to=1", NULL, NULL, MGOPT_DT_INT32, MGOPT_DT_FP32, 1, "cast", r_cast_h, NULL, NULL, NULL, CASTI,
     NULL, N_(CASTI), 0, 0, 0},
    {"Cast", 13, ", to=10", NULL, NULL, MGOPT_DT_INT32, MGOPT_DT_FP16, 1, "cast", r_cast_h, NULL, NULL, NULL, CASTI,
     NULL, N_(CASTI), 0, 0, 0},
};

static void run_table(const ecase *t, int n) {
  int i;
  for (i = 0; i < n; i++) CHECK(run_case(&t[i]));
}

static void test_float_unary(void) { run_table(float_unary, N_(float_unary)); }
static void test_float_binary(void) { run_table(float_binary, N_(float_binary)); }
static void test_int_ops(void) { run_table(int_ops, N_(int_ops)); }
static void test_cast(void) { run_table(cast_ops, N_(cast_ops)); }

/* ---------------------------------------------------------------- whole-tensor ops, expected values written out

   One input %x of type `xt` holding xv (row-major), the node `node` (reading %x, and constants from `pre`), one
   output of type `ot` whose elements must equal want (NaN as NaN, signed zeros unless ZS). */
typedef struct xcase {
  const char *name;
  int64_t opset;
  const char *xt;
  const double *xv;
  int nx;
  const char *pre;
  const char *node;
  const char *ot;
  const char *canon;
  const double *want;
  int nwant;
  int flags;
  double tol;
  mgopt_dtype xdt; /* the input's dtype; 0: fp32 */
} xcase;

static int check_x(const xcase *c, const char *how, const mgopt_tensor *t) {
  int j, bad = 0;
  ecase e;
  memset(&e, 0, sizeof e);
  e.flags = c->flags;
  e.tol = c->tol;
  if (!t || t->numel != c->nwant) {
    printf("  %s %s: %lld elements, want %d\n", c->name, how, t ? (long long)t->numel : -1LL, c->nwant);
    return 0;
  }
  for (j = 0; j < c->nwant; j++) {
    double g = mgopt_tensor_get_f64(t, j), w = c->want[j];
    mgopt_dtype dt = (mgopt_dtype)t->dtype;
    if (dt == MGOPT_DT_FP32) w = (double)(float)w;
    if (!same(&e, dt, g, w) && bad++ < 4) printf("  %s %s: element %d: got %.9g, want %.9g\n", c->name, how, j, g, w);
  }
  return bad == 0;
}

static int run_x(const xcase *c) {
  static char text[8192];
  size_t at = 0;
  int j, ok = 1;
  mgopt_buf buf;
  mgopt_program *p;
  mgopt_diag d;
  int fold;
  for (fold = 0; fold < ((c->flags & KEEP) ? 1 : 2); fold++) {
    at = 0;
    if (fold) {
      at += (size_t)snprintf(text + at, sizeof text - at, "main() {\n  %%x: %s = const(val=[", c->xt);
      for (j = 0; j < c->nx; j++) {
        if (j) at += (size_t)snprintf(text + at, sizeof text - at, ", ");
        put_val(text, sizeof text, &at, c->xdt ? c->xdt : MGOPT_DT_FP32, (double)(float)c->xv[j], as_i64(c->xv[j]));
      }
      /* a flat literal reshaped by the parser is not assumed: the constant is given flat and reshaped */
      at += (size_t)snprintf(text + at, sizeof text - at, "])\n");
    } else {
      at += (size_t)snprintf(text + at, sizeof text - at, "main(%%x: %s) {\n", c->xt);
    }
    at += (size_t)snprintf(text + at, sizeof text - at, "%s  %%out: %s = %s\n} -> (%%out)\n", c->pre ? c->pre : "",
                           c->ot, c->node);
    p = load_onnx(text, c->opset, &buf);
    if (!p) return 0;
    if (!fold) {
      mgopt_function *f = mgopt_program_function(p, "main");
      mgopt_tensor *in[1], *out[1] = {NULL};
      mgopt_eval_options o;
      int64_t shape[MGOPT_MAX_RANK];
      int32_t r;
      if (c->canon && !has_op(p, c->canon)) {
        printf("  %s: not imported as %s\n", c->name, c->canon);
        ok = 0;
      }
      r = f->body->args[0]->type.rank;
      for (j = 0; j < r; j++) shape[j] = f->body->args[0]->type.dims[j].v;
      in[0] = mgopt_eval_tensor_new(p, c->xdt ? c->xdt : MGOPT_DT_FP32, r, shape);
      for (j = 0; j < c->nx; j++) mgopt_tensor_set_f64(in[0], j, c->xv[j]);
      memset(&o, 0, sizeof o);
      o.op_fn = mgopt_onnx_eval_op;
      if (mgopt_eval(p, NULL, in, 1, out, 1, &o, &d) != MGOPT_OK) {
        printf("  %s eval: %s\n", c->name, d.msg);
        ok = 0;
      } else {
        ok &= check_x(c, "eval", out[0]);
      }
      if (out[0]) mgopt_eval_tensor_free(p, out[0]);
      mgopt_eval_tensor_free(p, in[0]);
    } else {
      mgopt_pipeline_options ro;
      mgopt_function *f;
      mgopt_tensor *t;
      memset(&ro, 0, sizeof ro);
      if (mgopt_pipeline_run(p, mgopt_builtin_registry(), "default", &ro, &d) != MGOPT_OK) {
        printf("  %s default: %s\n", c->name, d.msg);
        ok = 0;
      } else {
        f = mgopt_program_function(p, "main");
        t = f && f->body->nouts == 1 ? mgopt_value_const(f->body->outs[0]->value) : NULL;
        if (!t) {
          printf("  %s default: not folded\n", c->name);
          ok = 0;
        } else {
          ok &= check_x(c, "fold", t);
        }
      }
    }
    mgopt_program_destroy(p);
    free(buf.data);
  }
  return ok;
}

#define NaN_ NAN
#define INF_ INFINITY
static const double RX[] = {1, NAN, 3, -0.0, 0.0, -0.0, INFINITY, -INFINITY, 2, -INFINITY, -INFINITY, -INFINITY};
/* per row of 3 (rows: [1 NaN 3], [-0 0 -0], [inf -inf 2], [-inf -inf -inf]) */
static const double W_MAX[] = {NAN, 0.0, INFINITY, -INFINITY};
static const double W_MIN[] = {NAN, -0.0, -INFINITY, -INFINITY};
static const double W_SUM[] = {NAN, 0.0, NAN, -INFINITY};
static const double W_MEAN[] = {NAN, 0.0, NAN, -INFINITY};
static const double W_PROD[] = {NAN, 0.0, -INFINITY, -INFINITY};
static const double W_L1[] = {NAN, 0.0, INFINITY, INFINITY};
static const double W_L2[] = {NAN, 0.0, INFINITY, INFINITY};
static const double W_SSQ[] = {NAN, 0.0, INFINITY, INFINITY};
/* log(sum(exp(x))) as a function: +inf in a slice gives +inf (the reference's max-shifted form would give NaN) */
static const double W_LSE[] = {NAN, 1.0986122886681098, INFINITY, -INFINITY};
static const double LX[] = {0.0, -0.0, 0.0, 1, 2, 3, -1, -1, 1, 1.40129846e-45, 0, 0};
static const double W_LS[] = {-INFINITY, 1.791759469228055, NAN, -103.27892990343184}; /* log(sum) per row */
static const double AX[] = {1, NAN, 3, 5, 5, 2, -INFINITY, -INFINITY, -INFINITY, 0.0, -0.0, 0.0};
static const double W_AMAX[] = {1, 0, 0, 0};  /* numpy argmax: the first NaN is the max; ties: the first */
static const double W_AMIN[] = {1, 2, 0, 0};
static const double SX[] = {1, 2, 3, INFINITY, 0, 0, -INFINITY, -INFINITY, 0, -INFINITY, -INFINITY, -INFINITY,
                            NAN, 0, 0};
static const double W_SOFTMAX[] = {0.09003057317038046, 0.24472847105479767, 0.6652409557748219, NAN, NAN, NAN,
                                   0, 0, 1, NAN, NAN, NAN, NAN, NAN, NAN};
static const double PX[] = {1, NAN, 3, -INFINITY, -INFINITY, -INFINITY, -0.0, 0.0, 5, 6, 7, 8};
/* a NaN in the window gives NaN (numpy's max; ONNX Runtime ignores NaNs) */
static const double W_MAXPOOL[] = {NAN, 3, 6, 8};
static const double W_GMAXPOOL[] = {NAN, 8};
static const double BX[] = {0, 1, -1, INFINITY, NAN, 1e-3};
static const double W_BN[] = {0, 316.22776601683796, -316.22776601683796, INFINITY, NAN, 0.31622776601683794};

static const double QX[] = {0.0, -0.0, 0.25, 0.75, -0.25, -0.75, 63.75, 64, -64, -64.25, INFINITY, -INFINITY,
                            1.40129846e-45, 3.40282347e+38};
/* round(x / 0.5) half to even, + 128, saturated to [0, 255]; +-inf saturate */
static const double W_Q[] = {128, 128, 128, 130, 128, 126, 255, 255, 0, 0, 255, 0, 128, 255};
static const double DQX[] = {-128, 127, 0, -1};
static const double W_DQ[] = {0.0, 25.5, 12.8, 12.7}; /* (x + 128) * 0.1f in float */
static const double CX[] = {1, INFINITY, -INFINITY, 2, NAN, 3};
static const double W_CUMSUM[] = {1, INFINITY, NAN, NAN, NAN, NAN};
static const double W_CUMSUM_EXCL_REV[] = {NAN, NAN, NAN, NAN, 3, 0};
static const double IX[] = {0, 1e-3, -1e-3, INFINITY, 0, 0, 0, 0};
/* per instance of 4: the mean of [0, 1e-3, -1e-3, inf] is inf, its variance NaN: NaN throughout; a constant
   instance is 0 / sqrt(0 + 1e-5) = 0 */
static const double W_IN[] = {NAN, NAN, NAN, NAN, 0, 0, 0, 0};
static const double LNX[] = {0, 0, 0, 0, 1, 1, 1, 1e-3};
/* (x - mean) / sqrt(var + 1e-5), epsilon ONNX's default */
static const double W_LN[] = {0, 0, 0, 0, 0.5773348212242126, 0.5773348212242126, 0.5773348212242126,
                              -1.7320045232772827};

/* an RNN step with W = 1, R = 0: the activation of x itself */
static const double RNX[] = {-40, 800, -1e-8, NAN};
static const double W_RNN_SOFTPLUS[] = {4.248354255291589e-18, 800, 0.6931471755599453, NAN};
static const double W_RNN_THRESHOLDED[] = {0, 800, 0, 0}; /* alpha 1: x > 1 ? x : 0, NaN gives 0 */

/* ops left opaque (no canonical form with these semantics), evaluated and folded by ONNX's kernels */
static const double DIVX[] = {7, -7, 7, -7, 2147483647.0, -2147483648.0};
static const double W_DIV[] = {3, -3, -3, 3, -1073741823, 1073741824}; /* toward zero */
static const double W_FMOD_I[] = {1, -1, 1, -1, 1, 0};                  /* fmod=1: the dividend's sign */
static const double FMX[] = {5.5, -5.5, 5.5, -5.5, INFINITY, 1, -0.0, 3};
static const double W_FMOD_F[] = {1.5, -1.5, 1.5, -1.5, NAN, NAN, -0.0, 3}; /* C's fmod */

static const xcase xcases[] = {
    {"Div-14 int32", 14, "(6, int32)", DIVX, 6, "  %y: (6, int32) = const(val=[2, 2, -2, -2, -2, -2])\n",
     "onnx::Div(in0=%x, in1=%y)", "(6, int32)", NULL, W_DIV, 6, 0, 0, MGOPT_DT_INT32},
    {"Mod-13 fmod=1 int32", 13, "(6, int32)", DIVX, 6, "  %y: (6, int32) = const(val=[3, 3, -3, -3, 2, 2])\n",
     "onnx::Mod(in0=%x, in1=%y, fmod=1)", "(6, int32)", NULL, W_FMOD_I, 6, 0, 0, MGOPT_DT_INT32},
    {"Mod-13 fmod=1 fp32", 13, "(8, fp32)", FMX, 8,
     "  %y: (8, fp32) = const(val=[2.0, 2.0, -2.0, -2.0, 2.0, 0.0, 2.0, inf])\n", "onnx::Mod(in0=%x, in1=%y, fmod=1)",
     "(8, fp32)", NULL, W_FMOD_F, 8, 0, 0, MGOPT_DT_FP32},
    {"RNN-14 Softplus", 14, "(4, 1, 1, fp32)", RNX, 4,
     "  %w: (1, 1, 1, fp32) = const(val=[[[1.0]]])\n  %r: (1, 1, 1, fp32) = const(val=[[[0.0]]])\n",
     "onnx::RNN(in0=%x, in1=%w, in2=%r, hidden_size=1, activations=[\"Softplus\"])", "(4, 1, 1, 1, fp32)", NULL,
     W_RNN_SOFTPLUS, 4, 0, 4e-7, MGOPT_DT_FP32},
    {"RNN-14 ThresholdedRelu", 14, "(4, 1, 1, fp32)", RNX, 4,
     "  %w: (1, 1, 1, fp32) = const(val=[[[1.0]]])\n  %r: (1, 1, 1, fp32) = const(val=[[[0.0]]])\n",
     "onnx::RNN(in0=%x, in1=%w, in2=%r, hidden_size=1, activations=[\"ThresholdedRelu\"], activation_alpha=[1.0])",
     "(4, 1, 1, 1, fp32)", NULL, W_RNN_THRESHOLDED, 4, ZS, 0, MGOPT_DT_FP32},
    {"QuantizeLinear-13", 13, "(14, fp32)", QX, 14,
     "  %s: (fp32) = const(val=0.5)\n  %z: (uint8) = const(val=128)\n",
     "onnx::QuantizeLinear(in0=%x, in1=%s, in2=%z)", "(14, uint8)", "quantize", W_Q, 14, 0, 0, MGOPT_DT_FP32},
    {"DequantizeLinear-13", 13, "(4, int8)", DQX, 4,
     "  %s: (fp32) = const(val=0.1)\n  %z: (int8) = const(val=-128)\n",
     "onnx::DequantizeLinear(in0=%x, in1=%s, in2=%z)", "(4, fp32)", "dequantize", W_DQ, 4, KEEP, 1e-7, MGOPT_DT_INT8},
    {"CumSum-14", 14, "(6, fp32)", CX, 6, "  %ax: (int64) = const(val=0)\n", "onnx::CumSum(in0=%x, in1=%ax)",
     "(6, fp32)", "cumsum", W_CUMSUM, 6, 0, 0, MGOPT_DT_FP32},
    {"CumSum-14 exclusive reverse", 14, "(6, fp32)", CX, 6, "  %ax: (int64) = const(val=0)\n",
     "onnx::CumSum(in0=%x, in1=%ax, exclusive=1, reverse=1)", "(6, fp32)", "cumsum", W_CUMSUM_EXCL_REV, 6, 0, 0,
     MGOPT_DT_FP32},
    {"ReduceMax-13", 13, "(4, 3, fp32)", RX, 12, NULL, "onnx::ReduceMax(in0=%x, axes=[1], keepdims=0)", "(4, fp32)",
     "reduce_max", W_MAX, 4, ZS, 0, MGOPT_DT_FP32},
    {"ReduceMax-18", 18, "(4, 3, fp32)", RX, 12, "  %ax: (1, int64) = const(val=[1])\n",
     "onnx::ReduceMax(in0=%x, in1=%ax, keepdims=0)", "(4, fp32)", "reduce_max", W_MAX, 4, ZS, 0, MGOPT_DT_FP32},
    {"ReduceMin-13", 13, "(4, 3, fp32)", RX, 12, NULL, "onnx::ReduceMin(in0=%x, axes=[1], keepdims=0)", "(4, fp32)",
     "reduce_min", W_MIN, 4, ZS, 0, MGOPT_DT_FP32},
    {"ReduceSum-13", 13, "(4, 3, fp32)", RX, 12, "  %ax: (1, int64) = const(val=[1])\n",
     "onnx::ReduceSum(in0=%x, in1=%ax, keepdims=0)", "(4, fp32)", "reduce_sum", W_SUM, 4, ZS, 0, MGOPT_DT_FP32},
    {"ReduceMean-13", 13, "(4, 3, fp32)", RX, 12, NULL, "onnx::ReduceMean(in0=%x, axes=[1], keepdims=0)", "(4, fp32)",
     "reduce_mean", W_MEAN, 4, ZS, 0, MGOPT_DT_FP32},
    {"ReduceProd-13", 13, "(4, 3, fp32)", RX, 12, NULL, "onnx::ReduceProd(in0=%x, axes=[1], keepdims=0)", "(4, fp32)",
     "reduce_prod", W_PROD, 4, ZS, 0, MGOPT_DT_FP32},
    {"ReduceL1-13", 13, "(4, 3, fp32)", RX, 12, NULL, "onnx::ReduceL1(in0=%x, axes=[1], keepdims=0)", "(4, fp32)",
     "reduce_l1_norm", W_L1, 4, 0, 0, MGOPT_DT_FP32},
    {"ReduceL2-13", 13, "(4, 3, fp32)", RX, 12, NULL, "onnx::ReduceL2(in0=%x, axes=[1], keepdims=0)", "(4, fp32)",
     "reduce_l2_norm", W_L2, 4, 0, 0, MGOPT_DT_FP32},
    {"ReduceSumSquare-13", 13, "(4, 3, fp32)", RX, 12, NULL, "onnx::ReduceSumSquare(in0=%x, axes=[1], keepdims=0)",
     "(4, fp32)", "reduce_sum_square", W_SSQ, 4, 0, 0, MGOPT_DT_FP32},
    {"ReduceLogSumExp-13", 13, "(4, 3, fp32)", RX, 12, NULL, "onnx::ReduceLogSumExp(in0=%x, axes=[1], keepdims=0)",
     "(4, fp32)", "reduce_log_sum_exp", W_LSE, 4, 0, 4e-7, MGOPT_DT_FP32},
    {"ReduceLogSum-13", 13, "(4, 3, fp32)", LX, 12, NULL, "onnx::ReduceLogSum(in0=%x, axes=[1], keepdims=0)",
     "(4, fp32)", "reduce_log_sum", W_LS, 4, 0, 4e-7, MGOPT_DT_FP32},
    {"ArgMax-13", 13, "(4, 3, fp32)", AX, 12, NULL, "onnx::ArgMax(in0=%x, axis=1, keepdims=0)", "(4, int64)",
     "reduce_argmax", W_AMAX, 4, 0, 0, MGOPT_DT_FP32},
    {"ArgMin-13", 13, "(4, 3, fp32)", AX, 12, NULL, "onnx::ArgMin(in0=%x, axis=1, keepdims=0)", "(4, int64)",
     "reduce_argmin", W_AMIN, 4, 0, 0, MGOPT_DT_FP32},
    {"Softmax-13", 13, "(5, 3, fp32)", SX, 15, NULL, "onnx::Softmax(in0=%x, axis=1)", "(5, 3, fp32)", "softmax",
     W_SOFTMAX, 15, ZS, 4e-7, MGOPT_DT_FP32},
    {"MaxPool-12", 12, "(1, 1, 3, 4, fp32)", PX, 12, NULL,
     "onnx::MaxPool(in0=%x, kernel_shape=[2, 2], strides=[1, 2])", "(1, 1, 2, 2, fp32)", "max_pool", W_MAXPOOL, 4,
     ZS, 0, MGOPT_DT_FP32},
    {"GlobalMaxPool-1", 13, "(1, 2, 2, 3, fp32)", PX, 12, NULL, "onnx::GlobalMaxPool(in0=%x)",
     "(1, 2, 1, 1, fp32)", NULL, W_GMAXPOOL, 2, ZS, 0, MGOPT_DT_FP32},
    /* epsilon's default 1e-5 (ONNX's), not the canonical op's: x / sqrt(0 + 1e-5) */
    {"BatchNormalization-15", 15, "(1, 6, fp32)", BX, 6,
     "  %s: (6, fp32) = const(val=[1, 1, 1, 1, 1, 1])\n  %b: (6, fp32) = const(val=[0, 0, 0, 0, 0, 0])\n"
     "  %m: (6, fp32) = const(val=[0, 0, 0, 0, 0, 0])\n  %v: (6, fp32) = const(val=[0, 0, 0, 0, 0, 0])\n",
     "onnx::BatchNormalization(in0=%x, in1=%s, in2=%b, in3=%m, in4=%v)", "(1, 6, fp32)", "batch_norm", W_BN, 6, 0,
     4e-7, MGOPT_DT_FP32},
    {"InstanceNormalization-6", 13, "(1, 2, 4, fp32)", IX, 8,
     "  %s: (2, fp32) = const(val=[1, 1])\n  %b: (2, fp32) = const(val=[0, 0])\n",
     "onnx::InstanceNormalization(in0=%x, in1=%s, in2=%b)", "(1, 2, 4, fp32)", "instance_norm", W_IN, 8, 0, 0,
     MGOPT_DT_FP32},
    {"LayerNormalization-17", 17, "(2, 4, fp32)", LNX, 8,
     "  %s: (4, fp32) = const(val=[1, 1, 1, 1])\n  %b: (4, fp32) = const(val=[0, 0, 0, 0])\n",
     "onnx::LayerNormalization(in0=%x, in1=%s, in2=%b)", "(2, 4, fp32)", "layer_norm", W_LN, 8, 0, 1e-6,
     MGOPT_DT_FP32},
};

static void test_whole_tensor_ops(void) {
  int i;
  for (i = 0; i < N_(xcases); i++) CHECK(run_x(&xcases[i]));
}

/* ---------------------------------------------------------------- export: the written op keeps the canonical op's value */

/* Evaluates main of p on x (n fp32 values) and compares with want. */
static int eval_vec(mgopt_program *p, const double *x, const double *want, int n, const char *what) {
  int64_t shape[1];
  mgopt_tensor *in[1], *out[1] = {NULL};
  mgopt_eval_options o;
  mgopt_diag d;
  xcase c;
  int j, ok;
  shape[0] = n;
  in[0] = mgopt_eval_tensor_new(p, MGOPT_DT_FP32, 1, shape);
  for (j = 0; j < n; j++) mgopt_tensor_set_f64(in[0], j, x[j]);
  memset(&o, 0, sizeof o);
  o.op_fn = mgopt_onnx_eval_op;
  memset(&c, 0, sizeof c);
  c.name = what;
  c.want = want;
  c.nwant = n;
  ok = mgopt_eval(p, NULL, in, 1, out, 1, &o, &d) == MGOPT_OK;
  if (!ok) printf("  %s: %s\n", what, d.msg);
  else ok = check_x(&c, "eval", out[0]);
  if (out[0]) mgopt_eval_tensor_free(p, out[0]);
  mgopt_eval_tensor_free(p, in[0]);
  return ok;
}

static void test_export_keeps_values(void) {
  static const double x[4] = {0.0, -0.0, 1.40129846e-45, INFINITY};
  /* the canonical log adds its epsilon (1e-45 by default, the smallest fp32 denormal): written as Log(Add) */
  static const double w_eps[4] = {-103.27892990343184, -103.27892990343184, -102.58578272287189, INFINITY};
  static const double w_log[4] = {-INFINITY, -INFINITY, -103.27892990343184, INFINITY};
  static const double w_clip_inf[4] = {0.0, -0.0, 1.40129846e-45, INFINITY};
  static const double w_clip_max[4] = {0.0, -0.0, 1.40129846e-45, 3.4028234663852886e+38};
  mgopt_buf buf;
  mgopt_program *p;
  p = load_onnx("main(%x: (4, fp32)) {\n  %y: (4, fp32) = log(x=%x)\n} -> (%y)\n", 13, &buf);
  REQUIRE(p);
  CHECK(has_op(p, "add") && has_op(p, "log"));
  CHECK(eval_vec(p, x, w_eps, 4, "log(epsilon 1e-45) via ONNX"));
  mgopt_program_destroy(p);
  free(buf.data);
  p = load_onnx("main(%x: (4, fp32)) {\n  %y: (4, fp32) = log(x=%x, epsilon=0.0)\n} -> (%y)\n", 13, &buf);
  REQUIRE(p);
  CHECK(!has_op(p, "add") && has_op(p, "log"));
  CHECK(eval_vec(p, x, w_log, 4, "log(epsilon 0) via ONNX"));
  mgopt_program_destroy(p);
  free(buf.data);
  /* clip to +inf is written with its bound (an absent max would clamp +inf to the largest float) */
  p = load_onnx("main(%x: (4, fp32)) {\n  %y: (4, fp32) = clip(x=%x, alpha=0.0, beta=inf)\n} -> (%y)\n", 13, &buf);
  REQUIRE(p);
  CHECK(eval_vec(p, x, w_clip_inf, 4, "clip(0, inf) via ONNX-13"));
  mgopt_program_destroy(p);
  free(buf.data);
  p = load_onnx("main(%x: (4, fp32)) {\n  %y: (4, fp32) = clip(x=%x, alpha=0.0, beta=inf)\n} -> (%y)\n", 9, &buf);
  REQUIRE(p);
  CHECK(eval_vec(p, x, w_clip_inf, 4, "clip(0, inf) via ONNX-9"));
  mgopt_program_destroy(p);
  free(buf.data);
  p = load_onnx("main(%x: (4, fp32)) {\n  %y: (4, fp32) = clip(x=%x, alpha=0.0, beta=3.4028234663852886e+38)\n} -> (%y)\n",
                13, &buf);
  REQUIRE(p);
  CHECK(eval_vec(p, x, w_clip_max, 4, "clip(0, FLT_MAX) via ONNX-13"));
  mgopt_program_destroy(p);
  free(buf.data);
}

/* ---------------------------------------------------------------- Range: summed in the dtype */

static void test_range(void) {
  static double want[64];
  static const double x[1] = {0.3};
  xcase c;
  float v = 0.3f;
  int i, n = (int)ceilf((3.0f - 0.3f) / 0.1f);
  mgopt_buf buf;
  mgopt_program *p;
  mgopt_onnx_export_options eo;
  mgopt_onnx_model *m = NULL;
  mgopt_diag d;
  REQUIRE(n == 27);
  /* ONNX's function body: each element the previous one plus delta, in fp32 (19 of these 27 differ from
     start + i * delta rounded once) */
  for (i = 0; i < n; i++, v += 0.1f) want[i] = v;
  memset(&c, 0, sizeof c);
  c.name = "Range-11 fp32";
  c.opset = 13;
  c.xt = "(fp32)";
  c.xv = x;
  c.nx = 1;
  c.pre = "  %l: (fp32) = const(val=3.0)\n  %dl: (fp32) = const(val=0.1)\n";
  c.node = "onnx::Range(in0=%x, in1=%l, in2=%dl)";
  c.ot = "(27, fp32)";
  c.want = want;
  c.nwant = n;
  CHECK(run_x(&c));
  /* a float range_1d is written as Range only when Range gives its elements */
  {
    static const char *src = "main() {\n  %s: (fp32) = const(val=0.3)\n  %e: (fp32) = const(val=3.0)\n"
                             "  %st: (fp32) = const(val=0.1)\n  %r: (27, fp32) = range_1d(end=%e, start=%s, step=%st)\n"
                             "} -> (%r)\n";
    p = NULL;
    REQUIRE(mgopt_mil_parse(src, strlen(src), NULL, &p, &d) == MGOPT_OK);
    memset(&eo, 0, sizeof eo);
    eo.opset = 13;
    CHECK(mgopt_onnx_export(p, &eo, &m, &d) == MGOPT_ERR_UNSUPPORTED);
    CHECK(strstr(d.msg, "range") != NULL);
    mgopt_program_destroy(p);
  }
  p = load_onnx("main() {\n  %s: (fp32) = const(val=0.5)\n  %e: (fp32) = const(val=3.0)\n"
                "  %st: (fp32) = const(val=0.25)\n  %r: (10, fp32) = range_1d(end=%e, start=%s, step=%st)\n} -> (%r)\n",
                13, &buf);
  CHECK(p != NULL && has_op(p, "range_1d")); /* exact either way: written as Range and read back as range_1d */
  if (p) mgopt_program_destroy(p);
  free(buf.data);
}

static const test_case tests[] = {
    TEST(test_float_unary),
    TEST(test_float_binary),
    TEST(test_int_ops),
    TEST(test_cast),
    TEST(test_whole_tensor_ops),
    TEST(test_export_keeps_values),
    TEST(test_range),
};
TEST_MAIN(tests)
