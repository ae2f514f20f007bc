/* src/kernels/elementwise.c — folding kernels for elementwise ops: binary with broadcasting, unary, select, cast.

   Numerics. fp16 and bf16 compute in float and round once to nearest even when
   stored, which equals numpy at that dtype for every single operation (add,
   sub, mul, div, sqrt, comparisons, min/max, floor/ceil/round, and the libm
   functions that numpy also evaluates in float). Composite ops are rounded as
   numpy rounds them where it matters: `x + epsilon` of log / rsqrt / inverse
   is rounded to the dtype before the function, and rsqrt rounds its square
   root. Other composites (sigmoid, silu, softplus, elu, gelu) are rounded once
   at the end, which can differ from numpy's per-step fp16 rounding by one ulp.
   They keep their small values: sigmoid is exp(x) / (1 + exp(x)) where exp(-x)
   overflows (sigmoid(-100) = 3.7e-44, not 0), softplus is
   log1p(exp(-|x|)) + max(x, 0) (softplus(-20) = 2.1e-9, softplus(100) = 100)
   and elu alpha * expm1(x) (elu(-1e-8) = -1e-8).
   erf and every gelu mode are evaluated in double, then rounded (MIL's value
   inference uses Python's math.erf and float64 constants). acos, asin, atan,
   atanh, cosh, sinh and tan are evaluated in double by the C library and
   rounded once to float (fp16 / bf16: then once more to the dtype, a double
   rounding that can differ from a direct one by one ulp on a tie); NaN
   propagates, a domain error gives NaN (acos / asin outside [-1, 1], atanh
   outside [-1, 1]), atanh(+-1) is +-inf, cosh / sinh overflow to +-inf.
   softsign is x / (1 + |x|) in double, rounded once. sigmoid_hard is
   min(max(alpha * x + beta, 0), 1) in the dtype's arithmetic (each step
   rounded, no fused multiply-add), NaN propagating, as MIL's value inference;
   alpha and beta are first rounded to the dtype. thresholded_relu is
   x >= alpha ? x : 0 (MIL's formula; NaN gives 0), alpha rounded to the dtype. Transcendental
   functions use the C library (expf, logf, ...), whose last-place accuracy may
   differ from numpy's own SIMD routines. Integers wrap around like numpy's
   fixed-width arithmetic; integer division or modulo by zero, INT64_MIN / -1
   and negative integer exponents are not folded. pow whose exponent has
   another dtype than the base is computed in double (see mgopt__ke_pow_mixed).
   clip on integers clamps to whole-number bounds (-inf / +inf: no bound; the
   result equals numpy's clip, min(max(x, alpha), beta)). */
#include "kernels.h"

typedef struct mgopt__ke_par {
  double eps, alpha, beta;
  int mode; /* gelu: 0 exact, 1 tanh, 2 sigmoid */
  mgopt_dtype dt;
} mgopt__ke_par;

/* ---------------------------------------------------------------- float helpers */

/* floor division and remainder as numpy's divmod for floats (Python semantics). */
#define MGOPT__KE_DIVMOD(NAME, T, FMOD, FLOOR, COPYSIGN)                              \
  static T NAME(T a, T b, T *modp) {                                                  \
    T mod, div, fl;                                                                   \
    if (b == (T)0) {                                                                  \
      *modp = FMOD(a, b);                                                             \
      return a / b;                                                                   \
    }                                                                                 \
    mod = FMOD(a, b);                                                                 \
    div = (a - mod) / b;                                                              \
    if (mod != (T)0) {                                                                \
      if ((b < (T)0) != (mod < (T)0)) {                                               \
        mod += b;                                                                     \
        div -= (T)1;                                                                  \
      }                                                                               \
    } else {                                                                          \
      mod = COPYSIGN((T)0, b);                                                        \
    }                                                                                 \
    if (div != (T)0) {                                                                \
      fl = FLOOR(div);                                                                \
      if (div - fl > (T)0.5) fl += (T)1;                                              \
    } else {                                                                          \
      fl = COPYSIGN((T)0, a / b);                                                     \
    }                                                                                 \
    *modp = mod;                                                                      \
    return fl;                                                                        \
  }
MGOPT__KE_DIVMOD(mgopt__ke_divmodf, float, fmodf, floorf, copysignf)
MGOPT__KE_DIVMOD(mgopt__ke_divmod, double, fmod, floor, copysign)

/* numpy's round: half to even, independent of the floating-point environment. */
#define MGOPT__KE_ROUND(NAME, T, FLOOR, FMOD)                                         \
  static T NAME(T a) {                                                                \
    T r = FLOOR(a), diff = a - r;                                                     \
    if (a != a || r == a) return a;                                                   \
    if (diff > (T)0.5 || (diff == (T)0.5 && FMOD(r, (T)2) != (T)0)) r += (T)1;        \
    if (r == (T)0) r = a < (T)0 ? -(T)0 : (T)0;                                       \
    return r;                                                                         \
  }
MGOPT__KE_ROUND(mgopt__ke_roundf, float, floorf, fmodf)
MGOPT__KE_ROUND(mgopt__ke_round, double, floor, fmod)

/* sigmoid as 1 / (1 + exp(-x)); where exp(-x) overflows (x below about -88.7
   in float, -709.8 in double) as exp(x) / (1 + exp(x)), the value's tiny
   (denormal) magnitude instead of 0. */
#define MGOPT__KE_SIGMOID(NAME, T, EXP)                                               \
  static T NAME(T x) {                                                                \
    T e = EXP(-x);                                                                    \
    if (e == (T)HUGE_VAL) {                                                           \
      e = EXP(x);                                                                     \
      return e / ((T)1 + e);                                                          \
    }                                                                                 \
    return (T)1 / ((T)1 + e);                                                         \
  }
MGOPT__KE_SIGMOID(mgopt__ke_sigmoidf, float, expf)
MGOPT__KE_SIGMOID(mgopt__ke_sigmoid, double, exp)

static double mgopt__ke_gelu(double x, int mode) {
  MGOPT__K_NOCONTRACT
  if (mode == 1) {
    double a = sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + tanh(a));
  }
  if (mode == 2) return x * (1.0 / (1.0 + exp(-(1.702 * x))));
  return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
}

/* ---------------------------------------------------------------- binary loops */

/* One function per float lane: FN(x) names the libm function for the lane. */
#define MGOPT__KE_BIN_FLOAT(NAME, T, POW, DIVMOD)                                     \
  static void NAME(int32_t kind, const T *MGOPT_RESTRICT a, const T *MGOPT_RESTRICT b,\
                   T *MGOPT_RESTRICT r, int64_t n) {                                  \
    int64_t i;                                                                        \
    T m;                                                                              \
    switch (kind) {                                                                   \
      case MGOPT_OP_add: for (i = 0; i < n; i++) r[i] = a[i] + b[i]; break;           \
      case MGOPT_OP_sub: for (i = 0; i < n; i++) r[i] = a[i] - b[i]; break;           \
      case MGOPT_OP_mul: for (i = 0; i < n; i++) r[i] = a[i] * b[i]; break;           \
      case MGOPT_OP_real_div: for (i = 0; i < n; i++) r[i] = a[i] / b[i]; break;      \
      case MGOPT_OP_pow: for (i = 0; i < n; i++) r[i] = POW(a[i], b[i]); break;       \
      case MGOPT_OP_maximum:                                                          \
        for (i = 0; i < n; i++) r[i] = (a[i] >= b[i] || a[i] != a[i]) ? a[i] : b[i];  \
        break;                                                                        \
      case MGOPT_OP_minimum:                                                          \
        for (i = 0; i < n; i++) r[i] = (a[i] <= b[i] || a[i] != a[i]) ? a[i] : b[i];  \
        break;                                                                        \
      case MGOPT_OP_floor_div: for (i = 0; i < n; i++) r[i] = DIVMOD(a[i], b[i], &m); break; \
      case MGOPT_OP_mod:                                                              \
        for (i = 0; i < n; i++) {                                                     \
          DIVMOD(a[i], b[i], &m);                                                     \
          r[i] = m;                                                                   \
        }                                                                             \
        break;                                                                        \
      default: break;                                                                 \
    }                                                                                 \
  }
MGOPT__KE_BIN_FLOAT(mgopt__ke_bin_f32, float, powf, mgopt__ke_divmodf)
MGOPT__KE_BIN_FLOAT(mgopt__ke_bin_f64, double, pow, mgopt__ke_divmod)

/* Integer lane: wraps modulo 2^64 (then truncated to the dtype, which equals
   wrapping at the dtype's width). Returns 0 when a value is undefined. */
static int mgopt__ke_bin_i64(int32_t kind, const int64_t *MGOPT_RESTRICT a,
                             const int64_t *MGOPT_RESTRICT b, int64_t *MGOPT_RESTRICT r, int64_t n) {
  int64_t i;
  switch (kind) {
    case MGOPT_OP_add:
      for (i = 0; i < n; i++) r[i] = (int64_t)((uint64_t)a[i] + (uint64_t)b[i]);
      return 1;
    case MGOPT_OP_sub:
      for (i = 0; i < n; i++) r[i] = (int64_t)((uint64_t)a[i] - (uint64_t)b[i]);
      return 1;
    case MGOPT_OP_mul:
      for (i = 0; i < n; i++) r[i] = (int64_t)((uint64_t)a[i] * (uint64_t)b[i]);
      return 1;
    case MGOPT_OP_maximum: for (i = 0; i < n; i++) r[i] = a[i] >= b[i] ? a[i] : b[i]; return 1;
    case MGOPT_OP_minimum: for (i = 0; i < n; i++) r[i] = a[i] <= b[i] ? a[i] : b[i]; return 1;
    case MGOPT_OP_floor_div:
    case MGOPT_OP_mod:
      for (i = 0; i < n; i++) {
        int64_t x = a[i], y = b[i], q, m;
        if (y == 0) return 0;
        if (y == -1) { /* avoids INT64_MIN / -1 */
          if (x == INT64_MIN && kind == MGOPT_OP_floor_div) return 0;
          q = (int64_t)(0 - (uint64_t)x);
          m = 0;
        } else {
          q = x / y;
          m = x % y;
          if (m != 0 && ((m < 0) != (y < 0))) {
            q -= 1;
            m += y;
          }
        }
        r[i] = kind == MGOPT_OP_floor_div ? q : m;
      }
      return 1;
    case MGOPT_OP_pow:
      for (i = 0; i < n; i++) {
        uint64_t base = (uint64_t)a[i], acc = 1;
        int64_t e = b[i];
        if (e < 0) return 0;
        while (e) {
          if (e & 1) acc *= base;
          base *= base;
          e >>= 1;
        }
        r[i] = (int64_t)acc;
      }
      return 1;
    default: return 0;
  }
}

#define MGOPT__KE_CMP(T)                                                              \
  do {                                                                                \
    const T *MGOPT_RESTRICT a = (const T *)va;                                        \
    const T *MGOPT_RESTRICT b = (const T *)vb;                                        \
    switch (kind) {                                                                   \
      case MGOPT_OP_equal: for (i = 0; i < n; i++) r[i] = a[i] == b[i]; break;        \
      case MGOPT_OP_not_equal: for (i = 0; i < n; i++) r[i] = a[i] != b[i]; break;    \
      case MGOPT_OP_less: for (i = 0; i < n; i++) r[i] = a[i] < b[i]; break;          \
      case MGOPT_OP_less_equal: for (i = 0; i < n; i++) r[i] = a[i] <= b[i]; break;   \
      case MGOPT_OP_greater: for (i = 0; i < n; i++) r[i] = a[i] > b[i]; break;       \
      case MGOPT_OP_greater_equal: for (i = 0; i < n; i++) r[i] = a[i] >= b[i]; break;\
      case MGOPT_OP_logical_and: for (i = 0; i < n; i++) r[i] = a[i] & b[i]; break;   \
      case MGOPT_OP_logical_or: for (i = 0; i < n; i++) r[i] = a[i] | b[i]; break;    \
      case MGOPT_OP_logical_xor: for (i = 0; i < n; i++) r[i] = a[i] ^ b[i]; break;   \
      default: break;                                                                 \
    }                                                                                 \
  } while (0)

static void mgopt__ke_cmp(int lane, int32_t kind, const void *va, const void *vb,
                          uint8_t *MGOPT_RESTRICT r, int64_t n) {
  int64_t i;
  if (lane == MGOPT__LANE_F32) {
    const float *MGOPT_RESTRICT a = (const float *)va, *MGOPT_RESTRICT b = (const float *)vb;
    switch (kind) {
      case MGOPT_OP_equal: for (i = 0; i < n; i++) r[i] = a[i] == b[i]; break;
      case MGOPT_OP_not_equal: for (i = 0; i < n; i++) r[i] = a[i] != b[i]; break;
      case MGOPT_OP_less: for (i = 0; i < n; i++) r[i] = a[i] < b[i]; break;
      case MGOPT_OP_less_equal: for (i = 0; i < n; i++) r[i] = a[i] <= b[i]; break;
      case MGOPT_OP_greater: for (i = 0; i < n; i++) r[i] = a[i] > b[i]; break;
      case MGOPT_OP_greater_equal: for (i = 0; i < n; i++) r[i] = a[i] >= b[i]; break;
      default: break;
    }
  } else if (lane == MGOPT__LANE_F64) {
    const double *MGOPT_RESTRICT a = (const double *)va, *MGOPT_RESTRICT b = (const double *)vb;
    switch (kind) {
      case MGOPT_OP_equal: for (i = 0; i < n; i++) r[i] = a[i] == b[i]; break;
      case MGOPT_OP_not_equal: for (i = 0; i < n; i++) r[i] = a[i] != b[i]; break;
      case MGOPT_OP_less: for (i = 0; i < n; i++) r[i] = a[i] < b[i]; break;
      case MGOPT_OP_less_equal: for (i = 0; i < n; i++) r[i] = a[i] <= b[i]; break;
      case MGOPT_OP_greater: for (i = 0; i < n; i++) r[i] = a[i] > b[i]; break;
      case MGOPT_OP_greater_equal: for (i = 0; i < n; i++) r[i] = a[i] >= b[i]; break;
      default: break;
    }
  } else if (lane == MGOPT__LANE_I64) {
    MGOPT__KE_CMP(int64_t);
  } else {
    MGOPT__KE_CMP(uint8_t);
  }
}

static int mgopt__ke_is_cmp(int32_t kind) {
  return kind == MGOPT_OP_equal || kind == MGOPT_OP_not_equal || kind == MGOPT_OP_less ||
         kind == MGOPT_OP_less_equal || kind == MGOPT_OP_greater || kind == MGOPT_OP_greater_equal;
}

static int mgopt__ke_is_logical(int32_t kind) {
  return kind == MGOPT_OP_logical_and || kind == MGOPT_OP_logical_or || kind == MGOPT_OP_logical_xor;
}

/* pow(x, y) whose exponent's dtype differs from the base's: x ** y in double,
   stored in x's dtype (a float rounded once; an integer truncated toward zero,
   NaN or out of range not folded). An integer base with an integer exponent
   uses exact integer powers (wrapping at 64 bits, then at the dtype's width). */
static int mgopt__ke_pow_mixed(mgopt__kctx *k, mgopt_tensor *x, mgopt_tensor *y) {
  int32_t orank;
  int64_t oshape[MGOPT_MAX_RANK], n, i, lo = 0, hi = 0;
  mgopt_dtype dt = (mgopt_dtype)x->dtype;
  int lx = mgopt__k_lane(dt), ly = mgopt__k_lane((mgopt_dtype)y->dtype), r;
  void *a, *b, *od;
  double *res;
  if (lx == MGOPT__LANE_NONE || lx == MGOPT__LANE_BOOL || ly == MGOPT__LANE_NONE || ly == MGOPT__LANE_BOOL)
    return MGOPT__K_NO;
  if (!mgopt__k_bcast_shape(x->rank, x->shape, y->rank, y->shape, &orank, oshape))
    return mgopt__k_no(k, "the operand shapes do not broadcast");
  r = mgopt__k_out(k, 0, dt, orank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  n = k->out[0]->numel;
  if (n == 0) return MGOPT__K_OK;
  if (lx == MGOPT__LANE_I64 && ly == MGOPT__LANE_I64) {
    int64_t *ri = (int64_t *)mgopt__k_scratch(k, n, 8);
    r = mgopt__k_load_bcast(k, x, MGOPT__LANE_I64, orank, oshape, n, &a);
    if (r == MGOPT__K_OK) r = mgopt__k_load_bcast(k, y, MGOPT__LANE_I64, orank, oshape, n, &b);
    if (r != MGOPT__K_OK) return r;
    if (!ri) return MGOPT__K_OOM;
    if (!mgopt__ke_bin_i64(MGOPT_OP_pow, (const int64_t *)a, (const int64_t *)b, ri, n))
      return mgopt__k_no(k, "a negative integer exponent");
    mgopt__k_store(MGOPT__LANE_I64, ri, n, dt, od);
    return MGOPT__K_OK;
  }
  r = mgopt__k_load_bcast(k, x, MGOPT__LANE_F64, orank, oshape, n, &a);
  if (r == MGOPT__K_OK) r = mgopt__k_load_bcast(k, y, MGOPT__LANE_F64, orank, oshape, n, &b);
  if (r != MGOPT__K_OK) return r;
  res = (double *)a;
  for (i = 0; i < n; i++) res[i] = pow(res[i], ((const double *)b)[i]);
  if (lx != MGOPT__LANE_I64) {
    mgopt__k_store(MGOPT__LANE_F64, res, n, dt, od);
    return MGOPT__K_OK;
  }
  mgopt__k_int_range(dt, &lo, &hi);
  for (i = 0; i < n; i++) {
    double t = trunc(res[i]);
    if (!(t >= (double)lo && t < (double)hi + 1.0))
      return mgopt__k_no(k, "element %lld (%g) is out of the range of %s", (long long)i, res[i], mgopt_dtype_name(dt));
    mgopt__k_store_i64_at(dt, od, i, (int64_t)t);
  }
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__ke_binary(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  int32_t kind = op->kind, orank;
  mgopt_tensor *x = mgopt__k_operand(k, "x"), *y = mgopt__k_operand(k, "y");
  int64_t oshape[MGOPT_MAX_RANK], n;
  mgopt_dtype dt, odt;
  int lane, r;
  void *a, *b, *res, *od;
  if (x && y && x->dtype != y->dtype && kind == MGOPT_OP_pow) return mgopt__ke_pow_mixed(k, x, y);
  if (!x || !y || x->dtype != y->dtype)
    return x && y ? mgopt__k_no(k, "operands of dtypes %s and %s", mgopt_dtype_name((mgopt_dtype)x->dtype),
                                mgopt_dtype_name((mgopt_dtype)y->dtype))
                  : MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  lane = mgopt__k_lane(dt);
  if (mgopt__ke_is_logical(kind)) {
    if (lane != MGOPT__LANE_BOOL) return MGOPT__K_NO; /* MIL's logical ops take bool only */
    lane = MGOPT__LANE_BOOL;
    odt = MGOPT_DT_BOOL;
  } else if (mgopt__ke_is_cmp(kind)) {
    if (lane == MGOPT__LANE_NONE) return MGOPT__K_NO;
    odt = MGOPT_DT_BOOL;
    if (lane == MGOPT__LANE_BOOL) lane = MGOPT__LANE_I64;
  } else {
    if (lane == MGOPT__LANE_NONE || lane == MGOPT__LANE_BOOL) return MGOPT__K_NO;
    /* MIL types integer real_div as the integer dtype; its value is ambiguous */
    if (lane == MGOPT__LANE_I64 && kind == MGOPT_OP_real_div)
      return mgopt__k_no(k, "real_div of integers has no exact meaning");
    odt = dt;
  }
  if (!mgopt__k_bcast_shape(x->rank, x->shape, y->rank, y->shape, &orank, oshape))
    return mgopt__k_no(k, "the operand shapes do not broadcast");
  r = mgopt__k_out(k, 0, odt, orank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  n = k->out[0]->numel;
  if (n == 0) return MGOPT__K_OK;
  r = mgopt__k_load_bcast(k, x, lane, orank, oshape, n, &a);
  if (r == MGOPT__K_OK) r = mgopt__k_load_bcast(k, y, lane, orank, oshape, n, &b);
  if (r != MGOPT__K_OK) return r;
  if (odt == MGOPT_DT_BOOL) {
    mgopt__ke_cmp(lane, kind, a, b, (uint8_t *)od, n);
    return MGOPT__K_OK;
  }
  res = mgopt__k_scratch(k, n, mgopt__k_lane_size(lane));
  if (!res) return MGOPT__K_OOM;
  if (lane == MGOPT__LANE_F32) {
    mgopt__ke_bin_f32(kind, (const float *)a, (const float *)b, (float *)res, n);
  } else if (lane == MGOPT__LANE_F64) {
    mgopt__ke_bin_f64(kind, (const double *)a, (const double *)b, (double *)res, n);
  } else {
    if (!mgopt__ke_bin_i64(kind, (const int64_t *)a, (const int64_t *)b, (int64_t *)res, n))
      return mgopt__k_no(k, "integer division or modulo by zero, INT64_MIN / -1 or a negative integer exponent");
  }
  mgopt__k_store(lane, res, n, dt, od);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- unary */

#define MGOPT__KE_UN_FLOAT(NAME, T, S, RND, ROUNDFN, SIGMOID)                         \
  static int NAME(int32_t kind, const mgopt__ke_par *u, const T *MGOPT_RESTRICT a,    \
                  T *MGOPT_RESTRICT r, int64_t n) {                                   \
    MGOPT__K_NOCONTRACT                                                               \
    int64_t i;                                                                        \
    const T eps = (T)u->eps, al = (T)u->alpha, be = (T)u->beta;                       \
    switch (kind) {                                                                   \
      case MGOPT_OP_abs: for (i = 0; i < n; i++) r[i] = fabs##S(a[i]); break;         \
      case MGOPT_OP_exp: for (i = 0; i < n; i++) r[i] = exp##S(a[i]); break;          \
      case MGOPT_OP_sqrt: for (i = 0; i < n; i++) r[i] = sqrt##S(a[i]); break;        \
      case MGOPT_OP_log:                                                              \
        for (i = 0; i < n; i++) r[i] = log##S(RND(a[i] + eps));                       \
        break;                                                                        \
      case MGOPT_OP_rsqrt:                                                            \
        for (i = 0; i < n; i++) r[i] = (T)1 / RND(sqrt##S(RND(a[i] + eps)));          \
        break;                                                                        \
      case MGOPT_OP_inverse: for (i = 0; i < n; i++) r[i] = (T)1 / RND(a[i] + eps); break; \
      case MGOPT_OP_square: for (i = 0; i < n; i++) r[i] = a[i] * a[i]; break;        \
      case MGOPT_OP_erf: for (i = 0; i < n; i++) r[i] = (T)erf((double)a[i]); break;  \
      case MGOPT_OP_tanh: for (i = 0; i < n; i++) r[i] = tanh##S(a[i]); break;        \
      case MGOPT_OP_sigmoid:                                                          \
        for (i = 0; i < n; i++) r[i] = SIGMOID(a[i]);                                 \
        break;                                                                        \
      case MGOPT_OP_silu:                                                             \
        for (i = 0; i < n; i++) r[i] = a[i] * SIGMOID(a[i]);                          \
        break;                                                                        \
      case MGOPT_OP_relu:                                                             \
        for (i = 0; i < n; i++) r[i] = (a[i] >= (T)0 || a[i] != a[i]) ? a[i] : (T)0;  \
        break;                                                                        \
      case MGOPT_OP_relu6:                                                            \
        for (i = 0; i < n; i++) {                                                     \
          T m = (a[i] >= (T)0 || a[i] != a[i]) ? a[i] : (T)0;                         \
          r[i] = (m <= (T)6 || m != m) ? m : (T)6;                                    \
        }                                                                             \
        break;                                                                        \
      case MGOPT_OP_leaky_relu:                                                       \
        for (i = 0; i < n; i++) r[i] = a[i] < (T)0 ? a[i] * al : a[i];                \
        break;                                                                        \
      case MGOPT_OP_elu:                                                              \
        for (i = 0; i < n; i++) r[i] = a[i] < (T)0 ? al * expm1##S(a[i]) : a[i];     \
        break;                                                                        \
      case MGOPT_OP_gelu:                                                             \
        for (i = 0; i < n; i++) r[i] = (T)mgopt__ke_gelu((double)a[i], u->mode);      \
        break;                                                                        \
      case MGOPT_OP_clip:                                                             \
        for (i = 0; i < n; i++) {                                                     \
          T m = (a[i] >= al || a[i] != a[i]) ? a[i] : al;                             \
          r[i] = (m <= be || m != m) ? m : be;                                        \
        }                                                                             \
        break;                                                                        \
      case MGOPT_OP_floor: for (i = 0; i < n; i++) r[i] = floor##S(a[i]); break;      \
      case MGOPT_OP_ceil: for (i = 0; i < n; i++) r[i] = ceil##S(a[i]); break;        \
      case MGOPT_OP_round: for (i = 0; i < n; i++) r[i] = ROUNDFN(a[i]); break;       \
      case MGOPT_OP_sign:                                                             \
        for (i = 0; i < n; i++)                                                       \
          r[i] = a[i] > (T)0 ? (T)1 : a[i] < (T)0 ? (T)-1 : a[i] == (T)0 ? (T)0 : a[i]; \
        break;                                                                        \
      case MGOPT_OP_sin: for (i = 0; i < n; i++) r[i] = sin##S(a[i]); break;          \
      case MGOPT_OP_cos: for (i = 0; i < n; i++) r[i] = cos##S(a[i]); break;          \
      case MGOPT_OP_softplus:                                                         \
        for (i = 0; i < n; i++)                                                       \
          r[i] = log1p##S(exp##S(-fabs##S(a[i]))) + (a[i] > (T)0 ? a[i] : (T)0);      \
        break;                                                                        \
      case MGOPT_OP_acos: for (i = 0; i < n; i++) r[i] = (T)acos((double)a[i]); break; \
      case MGOPT_OP_asin: for (i = 0; i < n; i++) r[i] = (T)asin((double)a[i]); break; \
      case MGOPT_OP_atan: for (i = 0; i < n; i++) r[i] = (T)atan((double)a[i]); break; \
      case MGOPT_OP_atanh: for (i = 0; i < n; i++) r[i] = (T)atanh((double)a[i]); break; \
      case MGOPT_OP_cosh: for (i = 0; i < n; i++) r[i] = (T)cosh((double)a[i]); break; \
      case MGOPT_OP_sinh: for (i = 0; i < n; i++) r[i] = (T)sinh((double)a[i]); break; \
      case MGOPT_OP_tan: for (i = 0; i < n; i++) r[i] = (T)tan((double)a[i]); break;    \
      case MGOPT_OP_sigmoid_hard:                                                     \
        for (i = 0; i < n; i++) {                                                     \
          T t = RND(RND(al * a[i]) + be);                                             \
          t = (t >= (T)0 || t != t) ? t : (T)0;                                       \
          r[i] = (t <= (T)1 || t != t) ? t : (T)1;                                    \
        }                                                                             \
        break;                                                                        \
      case MGOPT_OP_softsign:                                                         \
        for (i = 0; i < n; i++) r[i] = (T)((double)a[i] / (1.0 + fabs((double)a[i]))); \
        break;                                                                        \
      case MGOPT_OP_thresholded_relu:                                                 \
        for (i = 0; i < n; i++) r[i] = a[i] >= al ? a[i] : (T)0;                      \
        break;                                                                        \
      default: return 0;                                                              \
    }                                                                                 \
    return 1;                                                                         \
  }

/* RND rounds an intermediate to the op's dtype (fp16 / bf16), like numpy would. */
#define MGOPT__KE_RND32(v) mgopt__k_rnd(u->dt, (v))
#define MGOPT__KE_RND64(v) (v)
MGOPT__KE_UN_FLOAT(mgopt__ke_un_f32, float, f, MGOPT__KE_RND32, mgopt__ke_roundf, mgopt__ke_sigmoidf)
MGOPT__KE_UN_FLOAT(mgopt__ke_un_f64, double, , MGOPT__KE_RND64, mgopt__ke_round, mgopt__ke_sigmoid)

static int mgopt__ke_un_i64(int32_t kind, const mgopt__ke_par *u, const int64_t *MGOPT_RESTRICT a,
                            int64_t *MGOPT_RESTRICT r, int64_t n) {
  int64_t i, lo, hi;
  switch (kind) {
    case MGOPT_OP_clip:
      /* bounds: whole numbers (not folded otherwise), -inf / +inf for none */
      if (u->alpha != floor(u->alpha) && u->alpha != -HUGE_VAL) return 0;
      if (u->beta != floor(u->beta) && u->beta != HUGE_VAL) return 0;
      lo = u->alpha <= -9223372036854775808.0 ? INT64_MIN : (int64_t)u->alpha;
      hi = u->beta >= 9223372036854775808.0 ? INT64_MAX : (int64_t)u->beta;
      for (i = 0; i < n; i++) {
        int64_t m = a[i] >= lo ? a[i] : lo;
        r[i] = m <= hi ? m : hi;
      }
      return 1;
    case MGOPT_OP_abs:
      for (i = 0; i < n; i++) r[i] = a[i] < 0 ? (int64_t)(0 - (uint64_t)a[i]) : a[i];
      return 1;
    case MGOPT_OP_square:
      for (i = 0; i < n; i++) r[i] = (int64_t)((uint64_t)a[i] * (uint64_t)a[i]);
      return 1;
    case MGOPT_OP_sign: for (i = 0; i < n; i++) r[i] = a[i] > 0 ? 1 : a[i] < 0 ? -1 : 0; return 1;
    default: return 0;
  }
}

/* A float parameter rounded to the dtype (MIL gives them the dtype of x). */
static int mgopt__ke_fparam(const mgopt_op *op, const char *name, double dflt, int required,
                            mgopt_dtype dt, double *out) {
  if (required && !mgopt__k_has_param(op, name)) return 0;
  *out = mgopt_op_get_float(op, name, dflt);
  if (dt == MGOPT_DT_FP32) *out = (float)*out;
  else if (dt == MGOPT_DT_FP16 || dt == MGOPT_DT_BF16) *out = mgopt__k_rnd(dt, (float)*out);
  return 1;
}

MGOPT__PRIVATE int mgopt__ke_unary(mgopt__kctx *k) {
  const mgopt_op *op = k->op;
  int32_t kind = op->kind;
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  mgopt__ke_par u;
  mgopt_dtype dt;
  int lane, r;
  int64_t n;
  void *a, *res, *od;
  if (!x) return MGOPT__K_NO;
  dt = (mgopt_dtype)x->dtype;
  lane = mgopt__k_lane(dt);
  memset(&u, 0, sizeof u);
  u.dt = dt;
  if (lane == MGOPT__LANE_I64) {
    if (kind != MGOPT_OP_abs && kind != MGOPT_OP_square && kind != MGOPT_OP_sign && kind != MGOPT_OP_clip)
      return MGOPT__K_NO;
  } else if (lane != MGOPT__LANE_F32 && lane != MGOPT__LANE_F64) {
    return MGOPT__K_NO;
  }
  switch (kind) {
    case MGOPT_OP_log: if (!mgopt__ke_fparam(op, "epsilon", 1e-45, 0, dt, &u.eps)) return MGOPT__K_NO; break;
    case MGOPT_OP_rsqrt: if (!mgopt__ke_fparam(op, "epsilon", 1e-12, 0, dt, &u.eps)) return MGOPT__K_NO; break;
    case MGOPT_OP_inverse: if (!mgopt__ke_fparam(op, "epsilon", 1e-4, 0, dt, &u.eps)) return MGOPT__K_NO; break;
    case MGOPT_OP_leaky_relu:
    case MGOPT_OP_elu:
      if (!mgopt__ke_fparam(op, "alpha", 0, 1, dt, &u.alpha)) return MGOPT__K_NO;
      break;
    case MGOPT_OP_sigmoid_hard:
      if (!mgopt__ke_fparam(op, "alpha", 0.2, 0, dt, &u.alpha) || !mgopt__ke_fparam(op, "beta", 0.5, 0, dt, &u.beta))
        return MGOPT__K_NO;
      break;
    case MGOPT_OP_thresholded_relu:
      if (!mgopt__ke_fparam(op, "alpha", 1.0, 0, dt, &u.alpha)) return MGOPT__K_NO;
      break;
    case MGOPT_OP_clip:
      if (!mgopt__ke_fparam(op, "alpha", 0, 1, dt, &u.alpha) ||
          !mgopt__ke_fparam(op, "beta", 0, 1, dt, &u.beta))
        return MGOPT__K_NO;
      break;
    case MGOPT_OP_gelu: {
      const char *m = mgopt_op_get_string(op, "mode", NULL);
      if (!m || strcmp(m, "EXACT") == 0) u.mode = 0;
      else if (strcmp(m, "TANH_APPROXIMATION") == 0) u.mode = 1;
      else if (strcmp(m, "SIGMOID_APPROXIMATION") == 0) u.mode = 2;
      else return MGOPT__K_NO;
      break;
    }
    default: break;
  }
  r = mgopt__k_out(k, 0, dt, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  n = x->numel;
  if (n == 0) return MGOPT__K_OK;
  a = mgopt__k_scratch(k, n, mgopt__k_lane_size(lane));
  res = mgopt__k_scratch(k, n, mgopt__k_lane_size(lane));
  if (!a || !res) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, lane, a);
  if (r != MGOPT__K_OK) return r;
  if (lane == MGOPT__LANE_F32) r = mgopt__ke_un_f32(kind, &u, (const float *)a, (float *)res, n);
  else if (lane == MGOPT__LANE_F64) r = mgopt__ke_un_f64(kind, &u, (const double *)a, (double *)res, n);
  else r = mgopt__ke_un_i64(kind, &u, (const int64_t *)a, (int64_t *)res, n);
  if (!r) return MGOPT__K_NO;
  mgopt__k_store(lane, res, n, dt, od);
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__ke_logical_not(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  uint8_t *a, *o;
  void *od;
  int64_t i, n;
  int r;
  if (!x || x->dtype != MGOPT_DT_BOOL) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, MGOPT_DT_BOOL, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  n = x->numel;
  a = (uint8_t *)mgopt__k_scratch(k, n, 1);
  if (!a) return MGOPT__K_OOM;
  r = mgopt__k_load(k, x, MGOPT__LANE_BOOL, a);
  if (r != MGOPT__K_OK) return r;
  o = (uint8_t *)od;
  for (i = 0; i < n; i++) o[i] = (uint8_t)(a[i] ^ 1u);
  return MGOPT__K_OK;
}

MGOPT__PRIVATE int mgopt__ke_identity(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  const void *src;
  void *od;
  int r;
  if (!x) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, (mgopt_dtype)x->dtype, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  src = mgopt__k_data(k, x);
  if (!src) return MGOPT__K_OOM;
  if (k->out[0]->nbytes != x->nbytes) return MGOPT__K_NO;
  if (x->nbytes) memcpy(od, src, x->nbytes); /* strings: the views share the program's arena */
  return MGOPT__K_OK;
}

/* select(cond, a, b): a where cond is true, else b; all three broadcast. */
MGOPT__PRIVATE int mgopt__ke_select(mgopt__kctx *k) {
  mgopt_tensor *c = mgopt__k_operand(k, "cond"), *a = mgopt__k_operand(k, "a"),
               *b = mgopt__k_operand(k, "b");
  int64_t s1[MGOPT_MAX_RANK], oshape[MGOPT_MAX_RANK], n, i;
  int32_t r1, orank;
  size_t es;
  uint8_t *cb, *ab, *bb, *o;
  const void *ad, *bd;
  void *tmp, *od;
  int r;
  if (!c || !a || !b || a->dtype != b->dtype) return MGOPT__K_NO;
  es = mgopt__k_esize((mgopt_dtype)a->dtype);
  if (!es || mgopt__k_lane((mgopt_dtype)c->dtype) == MGOPT__LANE_NONE) return MGOPT__K_NO;
  if (!mgopt__k_bcast_shape(c->rank, c->shape, a->rank, a->shape, &r1, s1) ||
      !mgopt__k_bcast_shape(r1, s1, b->rank, b->shape, &orank, oshape))
    return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, (mgopt_dtype)a->dtype, orank, oshape, &od);
  if (r != MGOPT__K_OK) return r;
  n = k->out[0]->numel;
  if (n == 0) return MGOPT__K_OK;
  r = mgopt__k_load_bcast(k, c, MGOPT__LANE_BOOL, orank, oshape, n, &tmp);
  if (r != MGOPT__K_OK) return r;
  cb = (uint8_t *)tmp;
  ad = mgopt__k_data(k, a);
  bd = mgopt__k_data(k, b);
  ab = (uint8_t *)mgopt__k_scratch(k, n, es);
  bb = (uint8_t *)mgopt__k_scratch(k, n, es);
  if (!ad || !bd || !ab || !bb) return MGOPT__K_OOM;
  mgopt__k_bcast(ab, ad, es, a->rank, a->shape, orank, oshape);
  mgopt__k_bcast(bb, bd, es, b->rank, b->shape, orank, oshape);
  o = (uint8_t *)od;
  for (i = 0; i < n; i++) memcpy(o + (size_t)i * es, (cb[i] ? ab : bb) + (size_t)i * es, es);
  return MGOPT__K_OK;
}

/* ---------------------------------------------------------------- cast */

/* Converts src (any numeric dtype) to dt element by element: floats to
   integers truncate toward zero, a float outside dt's range (or NaN) is not
   folded (ONNX leaves it undefined); an integer outside an integer dtype's
   range keeps its low bits (200 as int8 is -56); float to float rounds to
   nearest even, overflowing to +-inf. */
static int mgopt__ke_convert(mgopt__kctx *k, mgopt_tensor *x, mgopt_dtype dt, void *od) {
  mgopt_dtype sdt = (mgopt_dtype)x->dtype;
  int sl = mgopt__k_lane(sdt), dl = mgopt__k_lane(dt);
  int64_t n = x->numel, i, lo = 0, hi = 0;
  int r;
  if (sl == MGOPT__LANE_NONE || dl == MGOPT__LANE_NONE) return MGOPT__K_NO;
  if (n == 0) return MGOPT__K_OK;
  if (dl == MGOPT__LANE_BOOL) {
    uint8_t *b = (uint8_t *)mgopt__k_scratch(k, n, 1);
    if (!b) return MGOPT__K_OOM;
    r = mgopt__k_load(k, x, MGOPT__LANE_BOOL, b);
    if (r != MGOPT__K_OK) return r;
    memcpy(od, b, (size_t)n);
    return MGOPT__K_OK;
  }
  if (sl == MGOPT__LANE_I64 || sl == MGOPT__LANE_BOOL) {
    int64_t *v = (int64_t *)mgopt__k_scratch(k, n, 8);
    if (!v) return MGOPT__K_OOM;
    r = mgopt__k_load(k, x, MGOPT__LANE_I64, v);
    if (r != MGOPT__K_OK) return r;
    if (dl == MGOPT__LANE_I64) {
      /* out of range: the low bits, two's complement (ONNX's Cast, numpy's astype) */
      mgopt__k_store(MGOPT__LANE_I64, v, n, dt, od);
    } else if (dt == MGOPT_DT_FP32) {
      float *f = (float *)od;
      for (i = 0; i < n; i++) f[i] = (float)v[i]; /* correctly rounded from the integer */
    } else {
      /* |v| <= 2^53 converts to double exactly; larger ones are beyond fp16
         range, and for bf16 the double step cannot land on a bf16 tie */
      for (i = 0; i < n; i++) mgopt__k_store_f64_at(dt, od, i, (double)v[i]);
    }
    return MGOPT__K_OK;
  }
  {
    /* float source: every fp16 / bf16 / fp32 value is exact in double */
    double *v = (double *)mgopt__k_scratch(k, n, 8);
    if (!v) return MGOPT__K_OOM;
    r = mgopt__k_load(k, x, MGOPT__LANE_F64, v);
    if (r != MGOPT__K_OK) return r;
    if (dl == MGOPT__LANE_I64) {
      double dlo, dhi;
      mgopt__k_int_range(dt, &lo, &hi);
      dlo = (double)lo;
      dhi = dt == MGOPT_DT_INT64 || dt == MGOPT_DT_UINT64 ? 9223372036854775808.0 : (double)hi + 1.0;
      for (i = 0; i < n; i++) {
        double t = v[i];
        if (!(t > dlo - 1.0 && t < dhi)) /* NaN fails too */
          return mgopt__k_no(k, "element %lld (%g) is out of the range of %s", (long long)i, t, mgopt_dtype_name(dt));
        mgopt__k_store_i64_at(dt, od, i, (int64_t)t);
      }
    } else {
      for (i = 0; i < n; i++) mgopt__k_store_f64_at(dt, od, i, v[i]);
    }
    return MGOPT__K_OK;
  }
}

MGOPT__PRIVATE int mgopt__ke_cast(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "x");
  size_t len = 0;
  const char *s = mgopt_op_get_string(k->op, "dtype", &len);
  mgopt_dtype dt;
  void *od;
  int r;
  if (!x || !s) return MGOPT__K_NO;
  dt = mgopt_dtype_from_name(s, len);
  if (mgopt__k_lane(dt) == MGOPT__LANE_NONE) return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, dt, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  return mgopt__ke_convert(k, x, dt, od);
}

MGOPT__PRIVATE int mgopt__kc_constexpr_cast(mgopt__kctx *k) {
  mgopt_tensor *x = mgopt__k_operand(k, "source_val");
  size_t len = 0;
  const char *s = mgopt_op_get_string(k->op, "output_dtype", &len);
  mgopt_dtype dt;
  void *od;
  int r;
  if (!x || !s) return MGOPT__K_NO;
  dt = mgopt_dtype_from_name(s, len);
  if (!mgopt_dtype_is_float(dt) || !mgopt_dtype_is_float((mgopt_dtype)x->dtype) ||
      mgopt__k_lane(dt) == MGOPT__LANE_NONE)
    return MGOPT__K_NO;
  r = mgopt__k_out(k, 0, dt, x->rank, x->shape, &od);
  if (r != MGOPT__K_OK) return r;
  return mgopt__ke_convert(k, x, dt, od);
}
