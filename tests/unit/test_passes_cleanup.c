/* tests/unit/test_passes_cleanup.c — passes: the pass list against the registry, the pass files and the golden folders; passes given as pattern tables; and what golden text cannot show (shared weight data, API-built name clashes, scratch hygiene). */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include "pass_harness.h"
#if defined(__unix__) || defined(__APPLE__)
#include <dirent.h> /* listing tests/golden/<family>/ and src/passes/<family>/ */
#define HAVE_DIRENT 1
#endif

/* Runs pipeline with registry r, verifying after each pass, strict (a failing
   pass stops it and its status is returned); the first pass's report goes to
   rep when given. */
static mgopt_status run_with(const mgopt_registry *r, mgopt_program *p, const char *pipeline, mgopt_diag *d,
                             mgopt_pass_report *rep) {
  mgopt_pipeline_options ro;
  memset(&ro, 0, sizeof ro);
  ro.verify_each = 1;
  ro.strict = 1;
  ro.reports = rep;
  ro.reports_cap = rep ? 1 : 0;
  return mgopt_pipeline_run(p, r, pipeline, &ro, d);
}

static mgopt_status run_diag(mgopt_program *p, const char *pipeline, mgopt_diag *d) {
  return run_with(mgopt_builtin_registry(), p, pipeline, d, NULL);
}

static mgopt_tensor *first_const(mgopt_program *p, int32_t func) {
  mgopt_op *op = mgopt_program_function_at(p, func)->body->first;
  return op ? mgopt_value_const(op->outs[0]) : NULL;
}

/* A pattern pass that needs a kind is not run in a function without an op
   of that kind: merge_consecutive_relus made to need a conv fires only in
   the function that has one, and its pattern is never tried in the other. */
static void test_pattern_pass_needs(void) {
  static const char *text = "main(%x: (1, 1, 4, 4, fp32)) {\n"
                            "  %r1: (1, 1, 4, 4, fp32) = relu(x=%x)\n"
                            "  %r2: (1, 1, 4, 4, fp32) = relu(x=%r1)\n"
                            "} -> (%r2)\n"
                            "with_conv(%x: (1, 1, 4, 4, fp32)) {\n"
                            "  %w: (1, 1, 1, 1, fp32) = const(val=[[[[2]]]])\n"
                            "  %c: (1, 1, 4, 4, fp32) = conv(x=%x, weight=%w)\n"
                            "  %r1: (1, 1, 4, 4, fp32) = relu(x=%c)\n"
                            "  %r2: (1, 1, 4, 4, fp32) = relu(x=%r1)\n"
                            "} -> (%r2)\n";
  static const int32_t needs[] = {MGOPT_OP_conv};
  mgopt_pass_def def = mgopt__pass_merge_consecutive_relus;
  const mgopt_pass_def *passes[1];
  mgopt_registry r;
  mgopt_program *p = parse(text);
  mgopt_pass_report rep;
  mgopt_diag d;
  int32_t f;
  REQUIRE(p != NULL);
  def.name = "test::relus";
  def.needs = needs;
  def.nneeds = 1;
  passes[0] = &def;
  memset(&r, 0, sizeof r);
  r.passes = passes;
  r.npasses = 1;
  memset(&rep, 0, sizeof rep);
  CHECK_EQ_INT(run_with(&r, p, "relus", &d, &rep), MGOPT_OK);
  CHECK_EQ_INT(rep.rewrites, 1);
  for (f = 0; f < 2; f++) {
    mgopt_function *fn = mgopt_program_function_at(p, f);
    mgopt_op *op;
    int relus = 0;
    for (op = fn->body->first; op; op = op->next) relus += strcmp(op->type, "relu") == 0;
    CHECK_EQ_INT(relus, strcmp(fn->name, "with_conv") == 0 ? 1 : 2);
  }
  mgopt_program_destroy(p);
}

/* fold_shape_chains folds with the caller's kernels: with a registry whose
   fold function is NULL nothing folds, with the built-in one the add does
   (the program has an opaque op: without one the pass has nothing to do). */
static void test_fold_shape_chains_uses_callers_kernels(void) {
  static const char text[] = "main(%x: (2, fp32)) {\n"
                             "  %a: (2, fp32) = const(val=[1, 2])\n"
                             "  %b: (2, fp32) = add(x=%a, y=%a)\n"
                             "  %y: (2, fp32) = mul(x=%x, y=%b)\n"
                             "  %z: (2, fp32) = custom::Op(in0=%y)\n"
                             "} -> (%z)\n";
  int kernels;
  for (kernels = 0; kernels < 2; kernels++) {
    mgopt_registry r = *mgopt_builtin_registry();
    mgopt_program *p = parse(text);
    mgopt_diag d;
    mgopt_op *op;
    int adds = 0;
    REQUIRE(p != NULL);
    if (!kernels) r.fold = NULL;
    CHECK_EQ_INT(run_with(&r, p, "fold_shape_chains", &d, NULL), MGOPT_OK);
    for (op = mgopt_program_function_at(p, 0)->body->first; op; op = op->next) adds += strcmp(op->type, "add") == 0;
    CHECK_EQ_INT(adds, 1 - kernels);
    mgopt_program_destroy(p);
  }
}

/* Equal consts in two functions cannot be merged into one op; they share one
   data buffer, copy-on-write through mgopt_tensor_data_mut. */
static void test_const_dedup_shares_across_functions(void) {
  static const char *text =
      "main(%x: (3, fp32)) {\n"
      "  %a: (3, fp32)* = const(val=[1.5, 2.5, 3.5])\n"
      "  %s: (3, fp32) = add(x=%a, y=%x)\n"
      "} -> (%s)\n"
      "\n"
      "other(%x: (3, fp32)) {\n"
      "  %a: (3, fp32)* = const(val=[1.5, 2.5, 3.5])\n"
      "  %b: (3, fp32)* = const(val=[1.5, 2.5, 4.5])\n"
      "  %s: (3, fp32) = mul(x=%a, y=%x)\n"
      "  %t: (3, fp32) = mul(x=%b, y=%s)\n"
      "} -> (%t)\n";
  mgopt_diag d;
  mgopt_program *p = parse(text);
  mgopt_tensor *t0, *t1, *t2;
  float *w;
  REQUIRE(p != NULL);
  t0 = first_const(p, 0);
  t1 = first_const(p, 1);
  REQUIRE(t0 && t1 && t0 != t1);
  t2 = mgopt_value_const(mgopt_program_function_at(p, 1)->body->first->next->outs[0]);
  REQUIRE(t2 != NULL);
  CHECK(t0->data != t1->data);
  CHECK_EQ_INT(run_diag(p, "const_deduplication{const_threshold=3}", &d), MGOPT_OK);
  CHECK_EQ_INT(mgopt_program_op_count(p), 6); /* no op removed */
  CHECK(t0->data == t1->data);
  CHECK(t0->borrowed && t1->borrowed);
  CHECK(t2->data != t0->data); /* different contents stay apart */
  /* writing through one copies it first; the other keeps its values */
  w = (float *)mgopt_tensor_data_mut(p, t1);
  REQUIRE(w != NULL);
  w[0] = 9.0f;
  CHECK(t0->data != t1->data);
  CHECK(mgopt_tensor_get_f64(t0, 0) == 1.5);
  CHECK(mgopt_tensor_get_f64(t1, 0) == 9.0);
  /* under the threshold nothing is shared */
  mgopt_program_destroy(p);
  p = parse(text);
  REQUIRE(p != NULL);
  CHECK_EQ_INT(run_diag(p, "const_deduplication", &d), MGOPT_OK);
  CHECK(first_const(p, 0)->data != first_const(p, 1)->data);
  mgopt_program_destroy(p);
}

/* Large consts of one shape are keyed by their first and last bytes: look-alikes
   that differ only between them must stay apart, and each must still absorb
   its exact copies. 300 fp32 = 1200 bytes; elements 200 and 201 lie between
   the first 512 bytes and the last 64. */
static void test_const_dedup_lookalikes(void) {
  static const int diff[7][2] = {{-1, -1}, {200, -1}, {-1, -1}, {200, -1}, {201, -1}, {201, -1}, {200, 201}};
  static const int want_src[7] = {0, 1, 0, 1, 4, 4, 6}; /* the const each add reads afterwards */
  mgopt_buf b;
  mgopt_diag d;
  mgopt_program *p;
  mgopt_op *op;
  mgopt_tensor *kept[7];
  int i, k, nconst = 0, nadd = 0;
  memset(&b, 0, sizeof b);
  mgopt__buf_puts(&b, "main(%x: (300, fp32)) {\n");
  for (i = 0; i < 7; i++) {
    mgopt__buf_printf(&b, "  %%c%d: (300, fp32)* = const(val=[", i);
    for (k = 0; k < 300; k++) {
      int v = k % 37;
      if (k == diff[i][0]) v = 999;
      if (k == diff[i][1]) v = 777;
      mgopt__buf_printf(&b, "%s%d", k ? ", " : "", v);
    }
    mgopt__buf_puts(&b, "])\n");
  }
  for (i = 0; i < 7; i++) mgopt__buf_printf(&b, "  %%s%d: (300, fp32) = add(x=%%x, y=%%c%d)\n", i, i);
  mgopt__buf_puts(&b, "} -> (%s0, %s1, %s2, %s3, %s4, %s5, %s6)\n");
  REQUIRE(!b.oom);
  if (mgopt_mil_parse(b.data, b.len, NULL, &p, &d) != MGOPT_OK) p = NULL;
  mgopt_buf_free(&b);
  REQUIRE(p != NULL);
  for (i = 0, op = mgopt_program_function_at(p, 0)->body->first; i < 7; i++, op = op->next)
    kept[i] = mgopt_value_const(op->outs[0]);
  CHECK_EQ_INT(run_diag(p, "const_deduplication", &d), MGOPT_OK);
  for (op = mgopt_program_function_at(p, 0)->body->first; op; op = op->next) {
    if (op->kind == MGOPT_OP_const) {
      nconst++;
      continue;
    }
    {
      mgopt_tensor *y = mgopt_value_const(mgopt_op_operand(op, "y"));
      REQUIRE(y != NULL && nadd < 7);
      CHECK(y == kept[want_src[nadd]]);
      for (k = 200; k <= 201; k++) {
        const int *dd = diff[want_src[nadd]];
        CHECK(mgopt_tensor_get_f64(y, k) == (k == dd[0] ? 999.0 : k == dd[1] ? 777.0 : (double)(k % 37)));
      }
      nadd++;
    }
  }
  CHECK_EQ_INT(nconst, 4);
  CHECK_EQ_INT(nadd, 7);
  mgopt_program_destroy(p);
}

typedef struct named_find {
  const char *name;
  mgopt_tensor *t;
} named_find;

static int find_named_const(mgopt_op *op, void *ud) {
  named_find *f = (named_find *)ud;
  if (op->kind == MGOPT_OP_const && op->outs[0]->name && strcmp(op->outs[0]->name, f->name) == 0)
    f->t = mgopt_value_const(op->outs[0]);
  return 0;
}

static mgopt_tensor *named_const(mgopt_program *p, const char *name) {
  named_find f;
  f.name = name;
  f.t = NULL;
  mgopt_program_walk(p, find_named_const, &f);
  return f.t;
}

/* const_elimination folds a computation repeated in two branches once: the
   second result is a view of the first (same bytes, held once); an op with a
   different attribute, or one reading other bytes, is computed anew. The
   transposes make 16 x 16 fp32 = 1 KB, the least the memo keeps. */
static void test_const_elim_repeated_fold(void) {
  mgopt_buf b;
  mgopt_diag d;
  mgopt_program *p;
  mgopt_tensor *a, *bb, *c, *e;
  int k, i, j, ok = 1;
  memset(&b, 0, sizeof b);
  mgopt__buf_puts(&b, "main(%x: (16, 16, fp32), %p: (bool)) {\n  %w: (16, 16, fp32)* = const(val=[");
  for (k = 0; k < 256; k++) mgopt__buf_printf(&b, "%s%d.5", k % 16 ? ", " : k ? "], [" : "[", k);
  mgopt__buf_puts(&b, "]])\n  %v: (16, 16, fp32)* = const(val=[");
  for (k = 0; k < 256; k++) mgopt__buf_printf(&b, "%s%d.5", k % 16 ? ", " : k ? "], [" : "[", k);
  mgopt__buf_puts(&b,
                  "]])\n"
                  "  %o: (16, 16, fp32) = cond(pred=%p)\n"
                  "    then_branch() {\n"
                  "      %a: (16, 16, fp32) = transpose(x=%w, perm=[1, 0])\n"
                  "      %s: (16, 16, fp32) = add(x=%a, y=%x)\n"
                  "    } -> (%s)\n"
                  "    else_branch() {\n"
                  "      %b: (16, 16, fp32) = transpose(x=%w, perm=[1, 0])\n"
                  "      %t: (16, 16, fp32) = mul(x=%b, y=%x)\n"
                  "    } -> (%t)\n"
                  "  %c: (16, 16, fp32) = transpose(x=%w, perm=[0, 1])\n"
                  "  %e: (16, 16, fp32) = transpose(x=%v, perm=[1, 0])\n"
                  "  %u: (16, 16, fp32) = add(x=%c, y=%o)\n"
                  "  %z: (16, 16, fp32) = add(x=%e, y=%u)\n"
                  "} -> (%z)\n");
  REQUIRE(!b.oom);
  if (mgopt_mil_parse(b.data, b.len, NULL, &p, &d) != MGOPT_OK) p = NULL;
  if (!p) printf("parse error %d:%d: %s\n", d.line, d.col, d.msg);
  mgopt_buf_free(&b);
  REQUIRE(p != NULL);
  CHECK_EQ_INT(run_diag(p, "const_elimination", &d), MGOPT_OK);
  a = named_const(p, "a");
  bb = named_const(p, "b");
  c = named_const(p, "c");
  e = named_const(p, "e");
  REQUIRE(a && bb && c && e);
  CHECK(a != bb && a->data == bb->data); /* one computation, held once */
  CHECK(a->borrowed && bb->borrowed);    /* a write through either copies first */
  CHECK(c->data != a->data);             /* other perm: computed anew */
  CHECK(e->data != a->data);             /* same values, other bytes: computed anew */
  for (i = 0; i < 16; i++)
    for (j = 0; j < 16; j++) {
      double want = (double)(j * 16 + i) + 0.5;
      ok &= mgopt_tensor_get_f64(a, i * 16 + j) == want && mgopt_tensor_get_f64(bb, i * 16 + j) == want &&
            mgopt_tensor_get_f64(e, i * 16 + j) == want &&
            mgopt_tensor_get_f64(c, i * 16 + j) == (double)(i * 16 + j) + 0.5;
    }
  CHECK(ok);
  mgopt_program_destroy(p);
}

/* Two different function outputs with one name: the text format cannot say
   it (a name resolves to its latest definition), the API can. */
static void test_dedup_names_output_clash_fails(void) {
  static const char *text =
      "main(%x: (3, fp32)) {\n"
      "  %a: (3, fp32) = relu(x=%x)\n"
      "  %b: (3, fp32) = exp(x=%x)\n"
      "} -> (%a, %b)\n";
  mgopt_diag d;
  mgopt_program *p = parse(text);
  mgopt_block *body;
  REQUIRE(p != NULL);
  body = mgopt_program_function_at(p, 0)->body;
  mgopt_value_set_name(body->outs[1]->value, "a");
  CHECK_EQ_INT(run_diag(p, "dedup_op_and_var_names", &d), MGOPT_ERR_PASS);
  CHECK_EQ_INT(d.status, MGOPT_ERR_PASS);
  /* nothing was renamed */
  CHECK_EQ_STR(body->outs[0]->value->name, "a");
  CHECK_EQ_STR(body->outs[1]->value->name, "a");
  mgopt_program_destroy(p);
}

static int scratch_clear(mgopt_op *op, void *ud) {
  if (op->scratch) (*(int *)ud)++;
  return 0;
}

/* A long chain of casts and transposes, each used far below: every one moves,
   the result verifies, and no op keeps pass scratch. */
static void test_topological_reorder_long_chain(void) {
  mgopt_buf b;
  mgopt_diag d;
  mgopt_program *p;
  int i, dirty = 0;
  const int n = 2000;
  memset(&b, 0, sizeof b);
  mgopt__buf_puts(&b, "main(%x: (2, 3, fp32)) {\n");
  for (i = 0; i < n; i++) mgopt__buf_printf(&b, "  %%c%d: (2, 3, fp16) = cast(x=%%x, dtype=\"fp16\")\n", i);
  for (i = 0; i < n; i++) mgopt__buf_printf(&b, "  %%r%d: (2, 3, fp32) = relu(x=%%x)\n", i);
  mgopt__buf_puts(&b, "  %s0: (2, 3, fp16) = exp(x=%c0)\n");
  for (i = 1; i < n; i++) mgopt__buf_printf(&b, "  %%s%d: (2, 3, fp16) = add(x=%%s%d, y=%%c%d)\n", i, i - 1, i);
  mgopt__buf_printf(&b, "} -> (%%s%d)\n", n - 1);
  REQUIRE(!b.oom);
  if (mgopt_mil_parse(b.data, b.len, NULL, &p, &d) != MGOPT_OK) p = NULL;
  mgopt_buf_free(&b);
  REQUIRE(p != NULL);
  CHECK_EQ_INT(run_diag(p, "topological_reorder", &d), MGOPT_OK);
  mgopt_program_walk(p, scratch_clear, &dirty);
  CHECK_EQ_INT(dirty, 0);
  /* the first op is now relu r0; each cast sits right before its add */
  {
    mgopt_op *op = mgopt_program_function_at(p, 0)->body->first;
    CHECK_EQ_STR(op->type, "relu");
    for (i = 0; i < n && op; i++) op = op->next;
    REQUIRE(op != NULL);
    CHECK_EQ_STR(op->type, "cast");
    CHECK_EQ_STR(op->next->type, "exp");
  }
  mgopt_program_destroy(p);
}


/* ---- the pass list (src/passes/list.h) */

typedef struct listed_pass {
  const char *family, *name;
  const mgopt_pass_def *def;
} listed_pass;

#define LISTED_PASS(family, name) {#family, #name, &mgopt__pass_##name},
static const listed_pass listed[] = {MGOPT__PASS_LIST(LISTED_PASS)};
#define NLISTED ((int)(sizeof listed / sizeof listed[0]))

static int file_exists(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

/* The list is the registry, in order; each pass is named "<ns>::<name>" with
   ns its reference namespace, carries its folder as its family, and has its
   file (whose first line names its path and the pass) and its golden file. */
static void test_pass_list_is_the_registry(void) {
  const mgopt_registry *r = mgopt_builtin_registry();
  char path[256], line[512], want[512];
  int i;
  CHECK_EQ_INT(r->npasses, NLISTED);
  for (i = 0; i < NLISTED && i < r->npasses; i++) {
    const listed_pass *lp = &listed[i];
    const mgopt_pass_def *pd = r->passes[i];
    const char *sep = strstr(pd->name, "::");
    FILE *f;
    CHECK(pd == lp->def);
    CHECK_EQ_STR(pd->family, lp->family);
    REQUIRE(sep != NULL);
    CHECK_EQ_STR(sep + 2, lp->name);
    /* the reference namespaces: Core ML MIL, the ONNX IR optimizer, TVM Relay, TFLite */
    CHECK((sep - pd->name == 6 && strncmp(pd->name, "common", 6) == 0) ||
          (sep - pd->name == 4 && strncmp(pd->name, "onnx", 4) == 0) ||
          (sep - pd->name == 5 && strncmp(pd->name, "relay", 5) == 0) ||
          (sep - pd->name == 6 && strncmp(pd->name, "tflite", 6) == 0));
    CHECK(pd->run != NULL || (pd->patterns != NULL && pd->npatterns > 0));
    CHECK(pd->run == NULL || pd->npatterns == 0);
    snprintf(path, sizeof path, "tests/golden/%s/%s.mil", lp->family, lp->name);
    if (!file_exists(path)) printf("  no golden file %s\n", path);
    CHECK(file_exists(path));
    snprintf(path, sizeof path, "src/passes/%s/%s.c", lp->family, lp->name);
    f = fopen(path, "rb");
    if (!f) printf("  no pass file %s\n", path);
    REQUIRE(f != NULL);
    if (!fgets(line, sizeof line, f)) line[0] = 0;
    fclose(f);
    snprintf(want, sizeof want, "/* %s \xe2\x80\x94 %s", path, pd->name);
    if (strncmp(line, want, strlen(want)) != 0) printf("  %s: first line does not start with \"%s\"\n", path, want);
    CHECK(strncmp(line, want, strlen(want)) == 0);
  }
}

#ifdef HAVE_DIRENT
/* Calls fn(family, file name) for every regular entry of root/<family>/. */
static void for_each_family_file(const char *root, void (*fn)(const char *, const char *, const char *)) {
  DIR *d = opendir(root), *sub;
  struct dirent *e, *e2;
  char path[512];
  REQUIRE(d != NULL);
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", root, e->d_name);
    sub = opendir(path);
    if (!sub) continue; /* a file beside the family folders */
    while ((e2 = readdir(sub)) != NULL)
      if (e2->d_name[0] != '.') fn(root, e->d_name, e2->d_name);
    closedir(sub);
  }
  closedir(d);
}

/* file is "<name><ext>" for a listed pass of this family. */
static int listed_as(const char *family, const char *file, const char *ext) {
  size_t n = strlen(file), le = strlen(ext);
  int i;
  if (n <= le || strcmp(file + n - le, ext) != 0) return 0;
  for (i = 0; i < NLISTED; i++)
    if (strcmp(listed[i].family, family) == 0 && strlen(listed[i].name) == n - le &&
        strncmp(listed[i].name, file, n - le) == 0)
      return 1;
  return 0;
}

static void check_listed(const char *root, const char *family, const char *file) {
  const char *ext = strcmp(root, "tests/golden") == 0 ? ".mil" : ".c";
  if (!listed_as(family, file, ext)) {
    printf("  %s/%s/%s: not a pass of family %s in src/passes/list.h\n", root, family, file, family);
    CHECK(0);
  }
}

/* tests/golden/<family>/ mirrors src/passes/<family>/: every golden file and
   every pass file belongs to a listed pass of that family. */
static void test_golden_folders_mirror_pass_folders(void) {
  for_each_family_file("tests/golden", check_listed);
  for_each_family_file("src/passes", check_listed);
}
#endif

/* A pass given as a pattern table runs like mgopt__pu_run_patterns: dead ops
   stay, constants fold only when fold_constants is set, and the report counts
   pattern rewrites plus folds. */
static void test_pattern_table_pass(void) {
  static const char *text =
      "main(%x: (2, fp32)) {\n"
      "  %c: (2, fp32) = const(val=[1, 2])\n"
      "  %d: (2, fp32) = add(x=%c, y=%c)\n"
      "  %r1: (2, fp32) = relu(x=%x)\n"
      "  %r2: (2, fp32) = relu(x=%r1)\n"
      "  %s: (2, fp32) = add(x=%r2, y=%d)\n"
      "} -> (%s)\n";
  mgopt_pass_def def = mgopt__pass_merge_consecutive_relus;
  const mgopt_pass_def *passes[1];
  mgopt_registry r;
  int fold;
  REQUIRE(def.run == NULL && def.npatterns == 1 && !def.fold_constants);
  def.name = "test::relus";
  passes[0] = &def;
  memset(&r, 0, sizeof r);
  r.passes = passes;
  r.npasses = 1;
  r.fold = mgopt_fold_op;
  for (fold = 0; fold <= 1; fold++) {
    mgopt_program *p = parse(text);
    mgopt_pass_report rep;
    mgopt_diag d;
    mgopt_op *op;
    int adds = 0, relus = 0, consts = 0;
    REQUIRE(p != NULL);
    def.fold_constants = fold;
    memset(&rep, 0, sizeof rep);
    CHECK_EQ_INT(run_with(&r, p, "relus", &d, &rep), MGOPT_OK);
    CHECK_EQ_INT(rep.rewrites, 1 + fold);
    for (op = mgopt_program_function_at(p, 0)->body->first; op; op = op->next) {
      adds += strcmp(op->type, "add") == 0;
      relus += strcmp(op->type, "relu") == 0;
      consts += strcmp(op->type, "const") == 0;
    }
    CHECK_EQ_INT(relus, 1);
    CHECK_EQ_INT(adds, 2 - fold);
    CHECK_EQ_INT(consts, 1 + fold); /* the folded add's operand stays: no dead-op erasure */
    mgopt_program_destroy(p);
  }
}

static const test_case tests[] = {
    TEST(test_pass_list_is_the_registry),
#ifdef HAVE_DIRENT
    TEST(test_golden_folders_mirror_pass_folders),
#endif
    TEST(test_pattern_table_pass),
    TEST(test_const_dedup_shares_across_functions),
    TEST(test_const_dedup_lookalikes),
    TEST(test_const_elim_repeated_fold),
    TEST(test_fold_shape_chains_uses_callers_kernels),
    TEST(test_pattern_pass_needs),
    TEST(test_dedup_names_output_clash_fails),
    TEST(test_topological_reorder_long_chain),
};

TEST_MAIN(tests)
