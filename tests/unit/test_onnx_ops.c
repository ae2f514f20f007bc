/* tests/unit/test_onnx_ops.c — one small ONNX model per op and opset form: what the importer makes of it.

   tests/fixtures/onnx/ops/ holds NAME.onnx (made by tools/mkfixtures_onnx_ops.py)
   and NAME.mil, the IR mgopt must import it to (reviewed by hand against the
   ONNX operator specs: canonical where the semantics are exactly equal for that
   opset, opaque otherwise). For each model listed in LIST:
     - read + import + verify, and the printed IR equals NAME.mil;
     - export + write, then read + import that output: the same IR again;
     - export + write twice from one import: the same bytes;
     - the written model keeps the graph's input and output names, in order,
       and their element types.
   The numbers under ONNX Runtime are checked at dev time (the script's notes). */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <stdlib.h>

#define OPS "tests/fixtures/onnx/ops/"

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *b;
  long n;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return NULL;
  }
  b = (char *)malloc((size_t)n + 1);
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  if (b) {
    b[n] = 0;
    *len = (size_t)n;
  }
  return b;
}

/* The printed IR of a program, without the printer's leading comment lines. */
static char *print_ir(mgopt_program *p) {
  mgopt_buf b;
  char *s, *t;
  memset(&b, 0, sizeof b);
  if (mgopt_mil_print(p, NULL, &b) != MGOPT_OK || b.oom || !b.data) {
    mgopt_buf_free(&b);
    return NULL;
  }
  s = b.data;
  while (*s == '#') {
    t = strchr(s, '\n');
    s = t ? t + 1 : s + strlen(s);
  }
  t = (char *)malloc(strlen(s) + 1);
  if (t) memcpy(t, s, strlen(s) + 1);
  mgopt_buf_free(&b);
  return t;
}

/* The expectation file without its comment lines. */
static char *expected_ir(const char *name) {
  char path[512];
  size_t len = 0;
  char *s, *t;
  snprintf(path, sizeof path, OPS "%s.mil", name);
  s = slurp(path, &len);
  if (!s) return NULL;
  t = s;
  while (*t == '#') {
    char *nl = strchr(t, '\n');
    t = nl ? nl + 1 : t + strlen(t);
  }
  memmove(s, t, strlen(t) + 1);
  return s;
}

/* export + write into out; 0 on failure. */
static int write_model(mgopt_program *p, mgopt_buf *out) {
  mgopt_onnx_model *m = NULL;
  mgopt_diag d;
  memset(out, 0, sizeof *out);
  if (mgopt_onnx_export(p, NULL, &m, &d) != MGOPT_OK) {
    printf("  export: %s\n", d.msg);
    return 0;
  }
  if (mgopt_onnx_write(m, NULL, out, NULL, &d) != MGOPT_OK) {
    printf("  write: %s\n", d.msg);
    return 0;
  }
  return 1;
}

static int same_io(const mgopt_onnx_graph *a, const mgopt_onnx_graph *b) {
  int64_t i;
  if (a->ninputs != b->ninputs || a->noutputs != b->noutputs) return 0;
  for (i = 0; i < a->ninputs + a->noutputs; i++) {
    const mgopt_onnx_value_info *x = i < a->ninputs ? &a->inputs[i] : &a->outputs[i - a->ninputs];
    const mgopt_onnx_value_info *y = i < a->ninputs ? &b->inputs[i] : &b->outputs[i - a->ninputs];
    if (x->name.len != y->name.len || memcmp(x->name.ptr, y->name.ptr, x->name.len) != 0) return 0;
    if (x->type && x->type->tensor_type && (!y->type || !y->type->tensor_type ||
                                            x->type->tensor_type->elem_type != y->type->tensor_type->elem_type))
      return 0;
  }
  return 1;
}

/* 1 if the case behaves; prints what went wrong otherwise. */
static int check_case(const char *name, int *opaque) {
  char path[512];
  size_t len = 0;
  char *bytes, *want = NULL, *got = NULL, *again = NULL;
  mgopt_program *p = NULL, *q = NULL;
  mgopt_onnx_model *orig = NULL, *back = NULL;
  mgopt_buf w1, w2;
  mgopt_diag d;
  int ok = 0;
  memset(&w1, 0, sizeof w1);
  memset(&w2, 0, sizeof w2);
  snprintf(path, sizeof path, OPS "%s.onnx", name);
  bytes = slurp(path, &len);
  want = expected_ir(name);
  if (!bytes || !want) {
    printf("  %s: cannot read the model or its .mil\n", name);
    goto out;
  }
  if (mgopt_onnx_load(bytes, len, NULL, &p, &d) != MGOPT_OK) p = NULL;
  if (!p) {
    printf("  %s: load: %s\n", name, d.msg);
    goto out;
  }
  if (mgopt_program_verify(p, &d) != MGOPT_OK) {
    printf("  %s: verify: %s\n", name, d.msg);
    goto out;
  }
  got = print_ir(p);
  if (!got || strcmp(got, want) != 0) {
    printf("  %s: imported IR differs\n--- expected\n%s--- got\n%s", name, want, got ? got : "(none)\n");
    goto out;
  }
  if (strstr(got, "onnx::") || strstr(got, "com.example::")) (*opaque)++;
  if (!write_model(p, &w1) || !write_model(p, &w2)) goto out;
  if (w1.len != w2.len || memcmp(w1.data, w2.data, w1.len) != 0) {
    printf("  %s: two exports differ\n", name);
    goto out;
  }
  if (mgopt_onnx_load(w1.data, w1.len, NULL, &q, &d) != MGOPT_OK) q = NULL;
  if (!q) {
    printf("  %s: reload: %s\n", name, d.msg);
    goto out;
  }
  again = print_ir(q);
  if (!again || strcmp(again, want) != 0) {
    printf("  %s: IR after a round trip differs\n--- expected\n%s--- got\n%s", name, want, again ? again : "(none)\n");
    goto out;
  }
  if (mgopt_onnx_read(bytes, len, NULL, &orig, &d) != MGOPT_OK) orig = NULL;
  if (mgopt_onnx_read(w1.data, w1.len, NULL, &back, &d) != MGOPT_OK) back = NULL;
  if (!orig || !back || !orig->graph || !back->graph || !same_io(orig->graph, back->graph)) {
    printf("  %s: graph inputs/outputs changed\n", name);
    goto out;
  }
  ok = 1;
out:
  if (orig) mgopt_program_destroy(orig->program);
  if (back) mgopt_program_destroy(back->program);
  mgopt_program_destroy(p);
  mgopt_program_destroy(q);
  mgopt_buf_free(&w1);
  mgopt_buf_free(&w2);
  free(bytes);
  free(want);
  free(got);
  free(again);
  return ok;
}

static void test_every_op_fixture(void) {
  size_t len = 0;
  char *list = slurp(OPS "LIST", &len), *line, *next;
  int n = 0, good = 0, opaque = 0;
  REQUIRE(list != NULL);
  for (line = list; *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = 0;
    else next = line + strlen(line);
    if (!*line) continue;
    n++;
    if (check_case(line, &opaque)) good++;
  }
  free(list);
  printf("note: onnx op fixtures: %d models, %d as expected (%d with opaque ops)\n", n, good, opaque);
  CHECK(n >= 100);
  CHECK_EQ_INT(good, n);
  CHECK(opaque > 0 && opaque < n); /* both kinds are covered */
}

/* The fixtures pin the opset-dependent mappings: spot-check a few against
   the text directly, so a regenerated .mil cannot quietly lose them. */
static void test_opset_forms(void) {
  struct {
    const char *name, *needle;
  } k[] = {
      {"squeeze_11", "squeeze(x=%x, axes=[1])"},        /* attribute form */
      {"squeeze_13", "squeeze(x=%x, axes=[1])"},        /* input form, same op */
      {"clip_6", "clip(x=%x, alpha=-1.0, beta=2.0)"},   /* min/max attributes */
      {"clip_13", "clip(x=%x, alpha=-1.0, beta=2.0)"},  /* min/max inputs */
      {"softmax_11", "onnx::Softmax"},                  /* 2-D coercion: not MIL's softmax */
      {"softmax_13", "softmax(x=%x, axis=2)"},          /* per-axis from opset 13 */
      {"div_int_13", "onnx::Div"},                      /* integer Div truncates: opaque */
      {"conv_same_upper_13", "pad_type=\"same\""},
      {"split_even_18", "num_splits=2"},
  };
  size_t i;
  for (i = 0; i < sizeof k / sizeof k[0]; i++) {
    char *s = expected_ir(k[i].name);
    CHECK(s != NULL && strstr(s, k[i].needle) != NULL);
    if (s && !strstr(s, k[i].needle)) printf("  %s: no '%s'\n", k[i].name, k[i].needle);
    free(s);
  }
}

static const test_case tests[] = {
    TEST(test_every_op_fixture),
    TEST(test_opset_forms),
};
TEST_MAIN(tests)
