/* tests/difftest/difftest.c — differential tester: every pass and named pipeline on random programs, evaluated before and after. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "gen.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- tolerances
   For each program: out_before = eval(P, inputs), out_after = eval(pass(P),
   inputs); every output must have the same shape, and element by element
   |before - after| <= atol + rtol * |before| (NaN equals NaN, inf equals the
   same inf), compared in double. The tolerance follows the pass's numeric
   contract:

   class   rtol     atol     smooth  passes
   EXACT   0        0        no      structural rewrites: the same arithmetic
                                     on the same values (most cleanup, io and
                                     onnx passes, relu/transpose/reshape
                                     merges, dedup, dead code, ...)
   ULP     2^-20    1e-6     yes     one rounding more or less per element:
                                     x / c -> x * (1 / c) (divide_to_multiply),
                                     mul(x, rsqrt(y)) -> real_div(x, sqrt(y)),
                                     reductions re-ordered (reduce_transposes,
                                     remove_redundant_transpose_reduce),
                                     sum * (1/n) -> mean (fuse_reduce_mean)
   FOLD    1e-5     1e-5     yes     weights refolded in double and rounded
                                     once (fuse_conv_*, fuse_linear_bias,
                                     fuse_matmul_weight_bias, batch_norm
                                     fusions, const_elimination's kernels)
   FP16    5e-2     5e-2     yes     computation moved to fp16 (add_fp16_cast,
                                     default_fp16): fp16 has an 11-bit
                                     significand, 2^-11 per rounding over a
                                     chain of up to ~20 ops; elements whose
                                     reference is beyond fp16's range
                                     (|x| > 32768) are not compared
   PIPE    1e-4     1e-4     yes     the named pipelines without fp16: several
                                     ULP and FOLD passes in a row
   NEAR    1e-2     1e-5     yes     fuse_reduce_mean: real_div(sum, c) counts as
                                     a mean for |c - count| < 1e-2 (the
                                     reference's match tolerance), a relative
                                     change up to 1e-2 / count <= 1e-2

   GELU    1e-5     2e-3     yes     gelu fusions: the pattern's constants match
                                     within 1e-3 (tanh) or 1e-2 (sigmoid's
                                     1.702) of the exact ones; |d/dc x*s(c*x)|
                                     = x^2 s'(c x) <= 0.15 for every x, so the
                                     output moves by at most 1.5e-3

   Every class but EXACT counts roundings in the program's own precision: a
   program that computes anything in fp16 has rtol and atol at least 4e-3
   (a few fp16 roundings, 2^-11 each).

   An op that a pass creates and the evaluator has no kernel for (batch_norm,
   layer_norm, prelu, pixel_shuffle while their kernels are missing) leaves
   the program uncompared: it is not counted, and a "note:" line says how
   many programs of the pass were left so.

   "smooth" programs avoid ops whose output jumps (floor, ceil, sign, a cond
   on a sign): a pass allowed one rounding of difference would otherwise
   show as a jump of 1 after floor, which its contract permits. */

typedef struct tol {
  double rtol, atol;
  int smooth, fp16;
} tol;

static const tol T_EXACT = {0, 0, 0, 0};
static const tol T_ULP = {9.5367431640625e-07, 1e-6, 1, 0};
static const tol T_FOLD = {1e-5, 1e-5, 1, 0};
static const tol T_FP16 = {5e-2, 5e-2, 1, 1};
static const tol T_PIPE = {1e-4, 1e-4, 1, 0};
static const tol T_NEAR = {1e-2, 1e-5, 1, 0};
static const tol T_GELU = {1e-5, 2e-3, 1, 0};

static tol tol_of(const char *name) {
  static const char *const ulp[] = {"divide_to_multiply", "rewrite_mul_rsqrt_as_div", "reduce_transposes",
                                    "remove_redundant_transpose_reduce", NULL};
  static const char *const fold[] = {"const_elimination", "fuse_conv_batchnorm", "fuse_conv_bias", "fuse_conv_scale",
                                     "fuse_linear_bias", "fuse_matmul_weight_bias", "fuse_elementwise_to_batchnorm",
                                     "fuse_layernorm_or_instancenorm",
                                     "expand_dynamic_linear", "merge_affine_dequantize_with_consecutive_ops",
                                     "fuse_onehot_matmul_to_gather", "fuse_pad_conv", "compose_conv1d",
                                     "fuse_dilated_conv", "fuse_leaky_relu", "fuse_prelu", "prelu_to_lrelu", NULL};
  static const char *const fp16[] = {"add_fp16_cast", "default_fp16", NULL};
  static const char *const pipes[] = {"default", "cleanup", "onnx_cleanup", NULL};
  const char *s = strstr(name, "::");
  int i;
  if (s) name = s + 2;
  if (!strcmp(name, "fuse_reduce_mean")) return T_NEAR;
  if (!strncmp(name, "fuse_gelu_", 10)) return T_GELU;
  for (i = 0; ulp[i]; i++)
    if (!strcmp(ulp[i], name)) return T_ULP;
  for (i = 0; fold[i]; i++)
    if (!strcmp(fold[i], name)) return T_FOLD;
  for (i = 0; fp16[i]; i++)
    if (!strcmp(fp16[i], name)) return T_FP16;
  for (i = 0; pipes[i]; i++)
    if (!strcmp(pipes[i], name)) return T_PIPE;
  return T_EXACT;
}

/* ---------------------------------------------------------------- golden cases
   The CASE programs of tests/golden/<family>/<pass>.mil are further
   templates of the pass's pattern (every operand order and legality
   condition its author wrote); the tester runs them on random inputs too. */

typedef struct corpus {
  char **prog;
  int n;
} corpus;

static void corpus_free(corpus *c) {
  int i;
  for (i = 0; i < c->n; i++) free(c->prog[i]);
  free(c->prog);
  c->prog = NULL;
  c->n = 0;
}

static void corpus_load(corpus *c, const char *family, const char *pass) {
  char path[512], line[4096];
  FILE *f;
  dt_text cur = {NULL, 0, 0};
  int in = 0;
  c->prog = NULL;
  c->n = 0;
  snprintf(path, sizeof path, "tests/golden/%s/%s.mil", family, pass);
  f = fopen(path, "r");
  if (!f) return;
  for (;;) {
    char *l = fgets(line, sizeof line, f);
    int starts_case = l && !strncmp(line, "# CASE:", 7);
    int ends = !l || starts_case || !strncmp(line, "# EXPECT", 8) || !strncmp(line, "# ----", 6);
    if (ends && in && cur.len) {
      char **q = (char **)realloc(c->prog, (size_t)(c->n + 1) * sizeof *q);
      if (q) {
        c->prog = q;
        c->prog[c->n++] = cur.data;
        cur.data = NULL;
      }
      free(cur.data);
      cur.data = NULL;
      cur.len = cur.cap = 0;
      in = 0;
    }
    if (!l) break;
    if (starts_case) {
      in = 1;
      continue;
    }
    if (ends) {
      in = 0;
      continue;
    }
    if (in && line[0] != '#') {
      size_t n = strlen(line);
      if (cur.len + n + 1 > cur.cap) {
        size_t nc = (cur.len + n + 1) * 2;
        char *q = (char *)realloc(cur.data, nc);
        if (!q) break;
        cur.data = q;
        cur.cap = nc;
      }
      memcpy(cur.data + cur.len, line, n + 1);
      cur.len += n;
    }
  }
  free(cur.data);
  fclose(f);
}

/* ---------------------------------------------------------------- inputs */

static uint64_t mix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static int64_t sym_size(const char *text, const char *sym) {
  char key[64];
  const char *d = strncmp(text, "# DIMS", 6) ? NULL : text;
  snprintf(key, sizeof key, " %s=", sym);
  if (d) {
    const char *e = strchr(d, '\n'), *k = strstr(d, key);
    if (k && (!e || k < e)) return atoi(k + strlen(key));
  }
  return 2;
}

static double get(const mgopt_tensor *t, int64_t i) {
  switch (t->dtype) {
  case MGOPT_DT_FP32: return ((const float *)t->data)[i];
  case MGOPT_DT_FP16: return mgopt_f16_to_f32(((const uint16_t *)t->data)[i]);
  case MGOPT_DT_FP64: return ((const double *)t->data)[i];
  case MGOPT_DT_INT32: return ((const int32_t *)t->data)[i];
  case MGOPT_DT_INT64: return (double)((const int64_t *)t->data)[i];
  case MGOPT_DT_INT16: return ((const int16_t *)t->data)[i];
  case MGOPT_DT_INT8: return ((const int8_t *)t->data)[i];
  case MGOPT_DT_UINT8: case MGOPT_DT_BOOL: return ((const uint8_t *)t->data)[i];
  default: return NAN;
  }
}

static void set(mgopt_tensor *t, int64_t i, double v) {
  switch (t->dtype) {
  case MGOPT_DT_FP32: ((float *)t->data)[i] = (float)v; break;
  case MGOPT_DT_FP16: ((uint16_t *)t->data)[i] = mgopt_f32_to_f16((float)v); break;
  case MGOPT_DT_FP64: ((double *)t->data)[i] = v; break;
  case MGOPT_DT_INT32: ((int32_t *)t->data)[i] = (int32_t)v; break;
  case MGOPT_DT_INT64: ((int64_t *)t->data)[i] = (int64_t)v; break;
  case MGOPT_DT_INT16: ((int16_t *)t->data)[i] = (int16_t)v; break;
  case MGOPT_DT_INT8: ((int8_t *)t->data)[i] = (int8_t)v; break;
  case MGOPT_DT_UINT8: case MGOPT_DT_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)(v != 0); break;
  default: break;
  }
}

/* Random inputs for fn's arguments; 0 when an argument is not a tensor of known rank. */
static int make_inputs(mgopt_program *p, mgopt_function *fn, const char *text, uint64_t seed, mgopt_tensor **in,
                       int max) {
  int i, k;
  uint64_t s = seed ^ 0x5DEECE66Dull;
  if (fn->body->nargs > max) return 0;
  for (i = 0; i < fn->body->nargs; i++) {
    const mgopt_type *ty = &fn->body->args[i]->type;
    int64_t shape[MGOPT_MAX_RANK];
    int64_t j;
    in[i] = NULL;
    if (ty->kind != MGOPT_TYPE_TENSOR || ty->rank < 0) goto fail;
    for (k = 0; k < ty->rank; k++) {
      if (ty->dims[k].sym) shape[k] = sym_size(text, ty->dims[k].sym);
      else if (ty->dims[k].v < 0) shape[k] = 2;
      else shape[k] = ty->dims[k].v;
    }
    in[i] = mgopt_eval_tensor_new(p, (mgopt_dtype)ty->dtype, ty->rank, shape);
    if (!in[i]) goto fail;
    for (j = 0; j < in[i]->numel; j++) {
      uint64_t r = mix(&s);
      if (mgopt_dtype_is_float((mgopt_dtype)ty->dtype)) set(in[i], j, ((double)(int64_t)(r % 4097) - 2048) / 1024.0);
      else if (ty->dtype == MGOPT_DT_BOOL) set(in[i], j, (double)(r & 1));
      else set(in[i], j, (double)(int64_t)(r % 7) - 3);
    }
  }
  return 1;
fail:
  for (k = 0; k <= i && k < fn->body->nargs; k++) mgopt_eval_tensor_free(p, in[k]);
  return 0;
}

/* The same values in a tensor of another dtype (the pass changed an input's dtype). */
static mgopt_tensor *convert(mgopt_program *p, const mgopt_tensor *t, int dt) {
  mgopt_tensor *r = mgopt_eval_tensor_new(p, (mgopt_dtype)dt, t->rank, t->shape);
  int64_t i;
  if (!r) return NULL;
  for (i = 0; i < t->numel; i++) set(r, i, get(t, i));
  return r;
}

/* ---------------------------------------------------------------- one program */

enum { R_SKIP, R_OK, R_MISMATCH, R_NOKERNEL };

typedef struct result {
  int fired;
  char why[512];
} result;

static int close_enough(double a, double b, const tol *t) {
  if (isnan(a) && isnan(b)) return 1;
  if (isinf(a) || isinf(b)) {
    if (t->fp16 && (fabs(a) > 32768 || fabs(b) > 32768)) return 1;
    return a == b;
  }
  if (t->fp16 && fabs(a) > 32768) return 1;
  return fabs(a - b) <= t->atol + t->rtol * fabs(a);
}

static mgopt_program *parse(const char *text, char *why, size_t n) {
  mgopt_program *p = NULL;
  mgopt_diag d;
  memset(&d, 0, sizeof d);
  if (mgopt_mil_parse(text, strlen(text), NULL, &p, &d) != MGOPT_OK) {
    snprintf(why, n, "parse %d:%d: %s", d.line, d.col, d.msg);
    return NULL;
  }
  return p;
}

#define MAXIO 64

static int run_one(const char *text, const char *pipeline, const tol *t0, uint64_t seed, result *res) {
  tol tl = *t0, *t = &tl;
  mgopt_program *p0 = NULL, *p1 = NULL;
  mgopt_function *f0, *f1;
  mgopt_tensor *in0[MAXIO], *in1[MAXIO], *o0[MAXIO], *o1[MAXIO];
  int nin = 0, nin1 = 0, no0 = 0, no1 = 0, i, k, rc = R_SKIP;
  mgopt_diag d;
  mgopt_pass_report reps[256];
  int32_t nreps = 0;
  mgopt_pipeline_options po;
  const mgopt_registry *reg = mgopt_builtin_registry();
  res->fired = 0;
  res->why[0] = 0;
  if (tl.rtol > 0 && strstr(text, "fp16")) {
    if (tl.rtol < 4e-3) tl.rtol = 4e-3;
    if (tl.atol < 4e-3) tl.atol = 4e-3;
  }
  memset(&d, 0, sizeof d);
  p0 = parse(text, res->why, sizeof res->why);
  if (!p0) goto done;
  f0 = mgopt_program_function(p0, "main");
  if (!f0 && mgopt_program_function_count(p0) == 1) f0 = mgopt_program_function_at(p0, 0);
  if (!f0 || f0->body->nouts > MAXIO) goto done;
  if (!make_inputs(p0, f0, text, seed, in0, MAXIO)) goto done;
  nin = f0->body->nargs;
  {
    mgopt_eval_options eo;
    memset(&eo, 0, sizeof eo);
    eo.max_elements = 1 << 20;
    if (mgopt_eval(p0, mgopt_program_function_count(p0) == 1 ? NULL : "main", in0, nin, o0, f0->body->nouts, &eo,
                   &d) != MGOPT_OK)
      goto done; /* the program itself cannot be evaluated (opaque op, ...): not a test */
  }
  no0 = f0->body->nouts;
  rc = R_MISMATCH;
  p1 = parse(text, res->why, sizeof res->why);
  if (!p1) goto done;
  memset(&po, 0, sizeof po);
  po.verify_each = 1;
  po.reports = reps;
  po.reports_cap = 256;
  po.nreports = &nreps;
  if (mgopt_pipeline_run(p1, reg, pipeline, &po, &d) != MGOPT_OK) {
    snprintf(res->why, sizeof res->why, "pipeline failed: %s: %s", mgopt_status_str(d.status), d.msg);
    goto done;
  }
  for (i = 0; i < nreps; i++)
    if (reps[i].rewrites > 0) res->fired = 1;
  if (mgopt_program_verify(p1, &d) != MGOPT_OK) {
    snprintf(res->why, sizeof res->why, "verify after the pass: %s", d.msg);
    goto done;
  }
  f1 = mgopt_program_function(p1, f0->name);
  if (!f1 && mgopt_program_function_count(p1) == 1) f1 = mgopt_program_function_at(p1, 0);
  if (!f1) {
    snprintf(res->why, sizeof res->why, "function %s gone", f0->name);
    goto done;
  }
  if (f1->body->nouts != no0) {
    snprintf(res->why, sizeof res->why, "%d outputs after, %d before", f1->body->nouts, no0);
    goto done;
  }
  /* inputs: by position when the count is kept, else by name */
  nin1 = f1->body->nargs;
  if (nin1 > MAXIO) goto done;
  for (i = 0; i < nin1; i++) {
    const mgopt_value *a = f1->body->args[i];
    int from = -1;
    in1[i] = NULL;
    if (nin1 == nin) from = i;
    else
      for (k = 0; k < nin; k++)
        if (!strcmp(f0->body->args[k]->name, a->name)) from = k;
    if (from < 0) {
      snprintf(res->why, sizeof res->why, "input %s is new", a->name);
      for (k = 0; k < i; k++) mgopt_eval_tensor_free(p1, in1[k]);
      nin1 = 0;
      goto done;
    }
    in1[i] = convert(p1, in0[from], a->type.dtype);
  }
  {
    mgopt_eval_options eo;
    memset(&eo, 0, sizeof eo);
    eo.max_elements = 1 << 20;
    if (mgopt_eval(p1, mgopt_program_function_count(p1) == 1 ? NULL : "main", in1, nin1, o1, no0, &eo, &d) !=
        MGOPT_OK) {
      if (d.status == MGOPT_ERR_UNSUPPORTED && strstr(d.msg, "no kernel for")) {
        snprintf(res->why, sizeof res->why, "%s", d.msg);
        rc = R_NOKERNEL;
        goto done;
      }
      snprintf(res->why, sizeof res->why, "evaluation after the pass fails: %s: %s", mgopt_status_str(d.status),
               d.msg);
      goto done;
    }
    no1 = no0;
  }
  for (i = 0; i < no0; i++) {
    int64_t j;
    if (o0[i]->rank != o1[i]->rank || o0[i]->numel != o1[i]->numel ||
        (o0[i]->rank > 0 && memcmp(o0[i]->shape, o1[i]->shape, (size_t)o0[i]->rank * sizeof(int64_t)))) {
      snprintf(res->why, sizeof res->why, "output %d: shape differs", i);
      goto done;
    }
    if (o0[i]->dtype == MGOPT_DT_BOOL) {
      /* a different dtype after the pass is a change of meaning, unless the pass is an io/precision one */
    }
    for (j = 0; j < o0[i]->numel; j++) {
      double a = get(o0[i], j), b = get(o1[i], j);
      if (!close_enough(a, b, t)) {
        snprintf(res->why, sizeof res->why, "output %d element %lld: %.9g before, %.9g after", i, (long long)j, a, b);
        goto done;
      }
    }
  }
  rc = R_OK;
done:
  for (i = 0; i < no0; i++) mgopt_eval_tensor_free(p0, o0[i]);
  for (i = 0; i < no1; i++) mgopt_eval_tensor_free(p1, o1[i]);
  if (p0)
    for (i = 0; i < nin; i++) mgopt_eval_tensor_free(p0, in0[i]);
  for (i = 0; i < nin1; i++) mgopt_eval_tensor_free(p1, in1[i]);
  mgopt_program_destroy(p0);
  mgopt_program_destroy(p1);
  return rc;
}

/* ---------------------------------------------------------------- driver */

typedef struct totals {
  long programs, fired, mismatches, failed_passes;
} totals;

static void save_failure(const char *outdir, const char *name, uint64_t seed, const char *text, const char *why) {
  char path[1024], safe[256];
  size_t i;
  FILE *f;
  for (i = 0; name[i] && i + 1 < sizeof safe; i++) safe[i] = (name[i] == ':' || name[i] == '/') ? '_' : name[i];
  safe[i] = 0;
  snprintf(path, sizeof path, "%s/%s.mil", outdir, safe);
  f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "# difftest mismatch: %s, seed %llu: %s\n# RUN: %s\n%s", name, (unsigned long long)seed, why, name,
          text);
  fclose(f);
  printf("difftest: %s: first mismatch (seed %llu): %s; program in %s\n", name, (unsigned long long)seed, why, path);
}

static void test_one(const char *name, const char *family, int n, uint64_t seed0, const char *outdir, totals *tt) {
  tol t = tol_of(name);
  corpus c;
  const char *shortname = strstr(name, "::") ? strstr(name, "::") + 2 : name;
  long programs = 0, fired = 0, mism = 0, nokernel = 0;
  char nokernel_why[512] = "";
  int i, attempts = 0;
  corpus_load(&c, family ? family : "", shortname);
  for (i = 0; programs < n && attempts < 4 * n + 8; attempts++) {
    dt_text text = {NULL, 0, 0};
    uint64_t seed = seed0 * 1000003ull + (uint64_t)attempts;
    result res;
    int rc;
    /* one program in four is a golden case of the pass (when it has some) */
    if (c.n && attempts % 4 == 3) {
      const char *g = c.prog[(attempts / 4) % c.n];
      size_t len = strlen(g);
      text.data = (char *)malloc(len + 1);
      if (!text.data) break;
      memcpy(text.data, g, len + 1);
    } else if (dt_generate(seed, family ? shortname : NULL, t.smooth, &text) < 0) {
      break;
    }
    rc = run_one(text.data, name, &t, seed, &res);
    if (rc == R_NOKERNEL) {
      if (!nokernel++) snprintf(nokernel_why, sizeof nokernel_why, "%s", res.why);
    } else if (rc != R_SKIP) {
      programs++;
      i++;
      if (res.fired) fired++;
      if (rc == R_MISMATCH) {
        if (!mism) save_failure(outdir, name, seed, text.data, res.why);
        mism++;
      }
    }
    dt_text_free(&text);
  }
  corpus_free(&c);
  if (nokernel)
    printf("note: difftest: %s: %ld programs not compared: the pass made an op the evaluator cannot run (%s)\n",
           name, nokernel, nokernel_why);
  printf("difftest: %s: %s: %ld programs, %ld fired, %ld mismatches\n", name, mism ? "FAIL" : "PASS", programs, fired,
         mism);
  fflush(stdout);
  tt->programs += programs;
  tt->fired += fired;
  tt->mismatches += mism;
  if (mism) tt->failed_passes++;
}

static void usage(void) {
  fprintf(stderr, "usage: difftest [-n N] [--seed S] [--pass NAME]... [--out DIR] [--summary]\n"
                  "  -n N          programs per pass and pipeline (default: DIFFTEST_N, else 20)\n"
                  "  --seed S      first seed (default: DIFFTEST_SEED, else 1)\n"
                  "  --pass NAME   only this pass or named pipeline (repeatable)\n"
                  "  --out DIR     where the first mismatch of each pass is written (default .)\n"
                  "  --gen NAME    print one generated program for NAME (or \"random\") and exit\n"
                  "  --summary     end with \"P passed, F failed\" (passes and pipelines) for tests/run.sh\n");
}

int main(int argc, char **argv) {
  const mgopt_registry *reg = mgopt_builtin_registry();
  int n = 20, i, summary = 0, nonly = 0;
  uint64_t seed = 1;
  const char *only[64], *outdir = ".", *gen = NULL;
  totals tt = {0, 0, 0, 0};
  long nunits = 0;
  if (getenv("DIFFTEST_N") && *getenv("DIFFTEST_N")) n = atoi(getenv("DIFFTEST_N"));
  if (getenv("DIFFTEST_SEED") && *getenv("DIFFTEST_SEED")) seed = strtoull(getenv("DIFFTEST_SEED"), NULL, 10);
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-n") && i + 1 < argc) n = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--pass") && i + 1 < argc && nonly < 64) only[nonly++] = argv[++i];
    else if (!strcmp(argv[i], "--out") && i + 1 < argc) outdir = argv[++i];
    else if (!strcmp(argv[i], "--gen") && i + 1 < argc) gen = argv[++i];
    else if (!strcmp(argv[i], "--summary")) summary = 1;
    else {
      usage();
      return 2;
    }
  }
  if (gen) {
    dt_text t = {NULL, 0, 0};
    if (dt_generate(seed, strcmp(gen, "random") ? gen : NULL, tol_of(gen).smooth, &t) < 0) return 1;
    fputs(t.data, stdout);
    dt_text_free(&t);
    return 0;
  }
  for (i = 0; i < reg->npasses; i++) {
    const mgopt_pass_def *pd = reg->passes[i];
    const char *shortname = strstr(pd->name, "::") ? strstr(pd->name, "::") + 2 : pd->name;
    int k, want = nonly == 0;
    for (k = 0; k < nonly; k++)
      if (!strcmp(only[k], pd->name) || !strcmp(only[k], shortname)) want = 1;
    if (!want) continue;
    test_one(pd->name, pd->family, n, seed, outdir, &tt);
    nunits++;
  }
  for (i = 0; i < reg->npipelines; i++) {
    const mgopt_pipeline_def *pl = &reg->pipelines[i];
    int k, want = nonly == 0;
    for (k = 0; k < nonly; k++)
      if (!strcmp(only[k], pl->name)) want = 1;
    if (!want) continue;
    test_one(pl->name, NULL, n, seed, outdir, &tt);
    nunits++;
  }
  printf("difftest: %ld programs, %ld fired, %ld mismatches\n", tt.programs, tt.fired, tt.mismatches);
  if (summary) printf("%ld passed, %ld failed\n", nunits - tt.failed_passes, tt.failed_passes);
  return tt.mismatches ? 1 : 0;
}
