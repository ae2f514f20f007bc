/* tests/compile/fold_cases.h — folding cases run by both translation units of the
   MGOPT_NO_SIMD test (one built with MGOPT_NO_SIMD, one with the default SIMD
   paths); their outputs must be bit-identical. Sizes are odd so vector loops
   have tails; inputs come from a fixed LCG. Uses the public API only. */
#ifndef MGOPT_TEST_FOLD_CASES_H
#define MGOPT_TEST_FOLD_CASES_H
#include <string.h>

typedef struct fold_case {
  const char *op;
  mgopt_dtype dt;
  int32_t rank_x, rank_y; /* rank_y 0 = unary */
  int64_t shape_x[2], shape_y[2];
  int positive;           /* inputs in (0, 4] instead of [-4, 4] */
} fold_case;

static const fold_case fold_cases[] = {
    {"add", MGOPT_DT_FP32, 1, 1, {257, 0}, {257, 0}, 0},
    {"mul", MGOPT_DT_FP32, 2, 1, {3, 67}, {67, 0}, 0},
    {"sub", MGOPT_DT_FP32, 2, 2, {5, 31}, {5, 31}, 0},
    {"real_div", MGOPT_DT_FP32, 1, 1, {129, 0}, {129, 0}, 1},
    {"maximum", MGOPT_DT_FP32, 1, 1, {257, 0}, {257, 0}, 0},
    {"add", MGOPT_DT_INT32, 1, 1, {257, 0}, {257, 0}, 0},
    {"mul", MGOPT_DT_FP16, 1, 1, {131, 0}, {131, 0}, 0},
    {"relu", MGOPT_DT_FP32, 1, 0, {257, 0}, {0, 0}, 0},
    {"exp", MGOPT_DT_FP32, 1, 0, {257, 0}, {0, 0}, 0},
    {"sqrt", MGOPT_DT_FP32, 1, 0, {257, 0}, {0, 0}, 1},
    {"sigmoid", MGOPT_DT_FP32, 1, 0, {257, 0}, {0, 0}, 0},
    {"tanh", MGOPT_DT_FP32, 1, 0, {257, 0}, {0, 0}, 0},
    {"matmul", MGOPT_DT_FP32, 2, 2, {17, 33}, {33, 19}, 0},
    {"reduce_sum", MGOPT_DT_FP32, 2, 0, {9, 65}, {0, 0}, 0},
    {"softmax", MGOPT_DT_FP32, 2, 0, {5, 37}, {0, 0}, 0},
    {"cast", MGOPT_DT_FP32, 1, 0, {257, 0}, {0, 0}, 0},
};
#define FOLD_CASE_COUNT ((int)(sizeof fold_cases / sizeof fold_cases[0]))

static mgopt_value *fold_case_input(mgopt_program *p, mgopt_block *b, const char *name,
                                    mgopt_dtype dt, int32_t rank, const int64_t *shape,
                                    int positive, uint32_t *seed) {
  mgopt_tensor *t = mgopt_tensor_new(p, dt, rank, shape);
  int64_t i;
  if (!t) return NULL;
  for (i = 0; i < t->numel; i++) {
    double v;
    *seed = *seed * 1664525u + 1013904223u;
    v = (double)(*seed >> 8) / (double)(1u << 24) * 8.0 - 4.0; /* [-4, 4) */
    if (positive) v = v < 0 ? -v + 0.125 : v + 0.125;
    if (dt == MGOPT_DT_INT32) v = (double)(int32_t)(v * 1000.0);
    mgopt_tensor_set_f64(t, i, v);
  }
  return mgopt_build_const(p, b, NULL, name, t);
}

/* Folds case i; copies the first output's bytes to out (cap bytes) and its size
   to *len. Returns the folding function's result (1 folded, 0 not, -1 OOM), or
   -2 when the case could not be built. */
static int fold_case_run(int i, unsigned char *out, size_t cap, size_t *len) {
  const fold_case *c = &fold_cases[i];
  mgopt_program *p = mgopt_program_create(NULL);
  mgopt_function *f;
  mgopt_value *vals[2];
  const char *slots[2];
  mgopt_tensor *res[4];
  mgopt_op *op;
  uint32_t seed = 12345u + (uint32_t)i;
  int r = -2;
  *len = 0;
  if (!p) return -2;
  f = mgopt_function_new(p, "main");
  if (!f) goto done;
  slots[0] = "x";
  slots[1] = "y";
  vals[0] = fold_case_input(p, f->body, "a", c->dt, c->rank_x, c->shape_x, c->positive, &seed);
  vals[1] = c->rank_y ? fold_case_input(p, f->body, "b", c->dt, c->rank_y, c->shape_y,
                                        c->positive, &seed)
                      : NULL;
  if (!vals[0] || (c->rank_y && !vals[1])) goto done;
  op = mgopt_build_op(p, f->body, NULL, c->op, "r", c->rank_y ? 2 : 1, slots, vals, 1);
  if (!op) goto done;
  if (strcmp(c->op, "reduce_sum") == 0) {
    static const int64_t axes[1] = {1};
    mgopt_op_set_ints(op, "axes", axes, 1);
    mgopt_op_set_bool(op, "keep_dims", 0);
  } else if (strcmp(c->op, "softmax") == 0) {
    mgopt_op_set_int(op, "axis", -1);
  } else if (strcmp(c->op, "cast") == 0) {
    mgopt_op_set_string(op, "dtype", "fp16");
  } else if (strcmp(c->op, "matmul") == 0) {
    mgopt_op_set_bool(op, "transpose_x", 0);
    mgopt_op_set_bool(op, "transpose_y", 0);
  }
  if (mgopt_op_infer(p, op, NULL) != MGOPT_OK) goto done;
  memset(res, 0, sizeof res);
  r = mgopt_fold_op(p, op, res, NULL);
  if (r == 1 && res[0]) {
    const void *data = mgopt_tensor_data(p, res[0]);
    if (data && res[0]->nbytes <= cap) {
      memcpy(out, data, res[0]->nbytes);
      *len = res[0]->nbytes;
    } else {
      r = -2;
    }
  }
done:
  mgopt_program_destroy(p);
  return r;
}

#endif
