/* tests/unit/test_onnx_roundtrip.c — ONNX models through the IR and back: import, export, write, re-import.

   For each model: B1 = write(export(import(original))); IR2 = import(read(B1));
   B2 = write(export(IR2)); IR3 = import(read(B2)). The IR is stable when
   print(IR2) == print(IR3) (.mil text), and export is deterministic when B2
   equals the same computation repeated from a fresh read of B1. The sweep
   covers the repository's fixtures and, when installed, every model.onnx
   under /usr/share/libonnx-testdata/data. */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <stdlib.h>
#if defined(__unix__) || defined(__APPLE__)
#include <dirent.h>
#define HAVE_DIRENT 1
#endif

#define FIX "tests/fixtures/onnx/"
#define TESTDATA "/usr/share/libonnx-testdata/data"

/* ---------------------------------------------------------------- counts */

typedef struct rt_counts {
  int models;        /* model files found */
  int unreadable;    /* the codec refused the original (not this test's subject) */
  int import_failed; /* read, but import failed */
  int unsupported;   /* import refused a construct the API documents as unsupported */
  int export_failed; /* export or write failed at some step */
  int reload_failed; /* our own output did not read or import */
  int stable;        /* print(IR2) == print(IR3) */
  int deterministic; /* B2 == B1' */
  int byte_stable;   /* B2 == B3 (informational: a byte-level fixed point) */
} rt_counts;

/* ---------------------------------------------------------------- helpers */

static int buf_equal(const mgopt_buf *a, const mgopt_buf *b) {
  return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

/* Prints the first line where two texts differ. */
static void print_first_diff_line(const char *path, const mgopt_buf *a, const mgopt_buf *b) {
  size_t i = 0, line_start = 0;
  int line = 1;
  size_t n = a->len < b->len ? a->len : b->len;
  size_t ea, eb;
  while (i < n && a->data[i] == b->data[i]) {
    if (a->data[i] == '\n') {
      line++;
      line_start = i + 1;
    }
    i++;
  }
  ea = line_start;
  while (ea < a->len && a->data[ea] != '\n') ea++;
  eb = line_start;
  while (eb < b->len && b->data[eb] != '\n') eb++;
  printf("  %s: IR not stable, first difference at line %d:\n    IR2: %.*s\n    IR3: %.*s\n", path, line,
         (int)(ea - line_start), a->data + line_start, (int)(eb - line_start), b->data + line_start);
}

/* Prints the first byte offset where two encodings differ. */
static void print_first_diff_byte(const char *path, const char *what, const mgopt_buf *a, const mgopt_buf *b) {
  size_t i = 0, n = a->len < b->len ? a->len : b->len;
  while (i < n && a->data[i] == b->data[i]) i++;
  printf("  %s: %s: sizes %lu and %lu, first difference at byte %lu\n", path, what, (unsigned long)a->len,
         (unsigned long)b->len, (unsigned long)i);
}

/* export + write of p's main into out (zeroed by the caller). */
static int to_bytes(const char *path, const char *step, mgopt_program *p, mgopt_buf *out) {
  mgopt_diag d;
  mgopt_onnx_model *e = NULL;
  memset(&d, 0, sizeof d);
  if (mgopt_onnx_export(p, NULL, &e, &d) != MGOPT_OK || !e) {
    printf("  %s: %s: export failed: %s\n", path, step, d.msg);
    return 0;
  }
  if (mgopt_onnx_write(e, NULL, out, NULL, &d) != MGOPT_OK) {
    printf("  %s: %s: write failed: %s\n", path, step, d.msg);
    return 0;
  }
  return 1;
}

/* read + import of bytes we wrote; NULL (reported) on failure. b must outlive the program. */
static mgopt_program *from_bytes(const char *path, const char *step, const mgopt_buf *b) {
  mgopt_diag d;
  mgopt_onnx_model *m;
  memset(&d, 0, sizeof d);
  if (mgopt_onnx_read(b->data, b->len, NULL, &m, &d) != MGOPT_OK) m = NULL;
  if (!m) {
    printf("  %s: %s: our output does not read back: %s (offset %lld)\n", path, step, d.msg, (long long)d.offset);
    return NULL;
  }
  if (mgopt_onnx_import(m, &d) != MGOPT_OK) {
    printf("  %s: %s: our output does not import: %s\n", path, step, d.msg);
    mgopt_program_destroy(m->program);
    return NULL;
  }
  return m->program;
}

static int print_ir(const char *path, const char *step, mgopt_program *p, mgopt_buf *out) {
  if (mgopt_mil_print(p, NULL, out) != MGOPT_OK || out->oom) {
    printf("  %s: %s: mgopt_mil_print failed\n", path, step);
    return 0;
  }
  return 1;
}

/* The whole round trip of one model file; updates c. */
static void roundtrip_one(const char *path, rt_counts *c) {
  mgopt_diag d;
  mgopt_onnx_model *m;
  mgopt_program *ir2 = NULL, *ir3 = NULL, *ir2b = NULL;
  mgopt_buf b1, b2, b3, b1again, t2, t3;
  memset(&b1, 0, sizeof b1);
  memset(&b2, 0, sizeof b2);
  memset(&b3, 0, sizeof b3);
  memset(&b1again, 0, sizeof b1again);
  memset(&t2, 0, sizeof t2);
  memset(&t3, 0, sizeof t3);
  memset(&d, 0, sizeof d);
  c->models++;

  if (mgopt_onnx_read_file(path, NULL, &m, &d) != MGOPT_OK) m = NULL;
  if (!m) {
    printf("  %s: not readable: %s (offset %lld)\n", path, d.msg, (long long)d.offset);
    c->unreadable++;
    return;
  }
  if (mgopt_onnx_import(m, &d) != MGOPT_OK) {
    if (d.status == MGOPT_ERR_UNSUPPORTED) {
      /* documented limits (convert_api.h): sparse tensors, TENSORS/GRAPHS attributes, ... */
      printf("  %s: unsupported (documented): %s\n", path, d.msg);
      c->unsupported++;
      c->models--;
    } else {
      printf("  %s: import failed: %s\n", path, d.msg);
      c->import_failed++;
    }
    mgopt_program_destroy(m->program);
    return;
  }
  if (!to_bytes(path, "B1", m->program, &b1)) {
    c->export_failed++;
    mgopt_program_destroy(m->program);
    goto out;
  }
  mgopt_program_destroy(m->program);

  ir2 = from_bytes(path, "IR2", &b1);
  if (!ir2) {
    c->reload_failed++;
    goto out;
  }
  if (!print_ir(path, "IR2", ir2, &t2)) {
    c->export_failed++;
    goto out;
  }
  if (!to_bytes(path, "B2", ir2, &b2)) {
    c->export_failed++;
    goto out;
  }
  ir3 = from_bytes(path, "IR3", &b2);
  if (!ir3) {
    c->reload_failed++;
    goto out;
  }
  if (!print_ir(path, "IR3", ir3, &t3)) {
    c->export_failed++;
    goto out;
  }
  if (buf_equal(&t2, &t3))
    c->stable++;
  else
    print_first_diff_line(path, &t2, &t3);

  /* determinism: the B1 -> B2 step again, from a fresh read of B1 */
  ir2b = from_bytes(path, "IR2 again", &b1);
  if (!ir2b) {
    c->reload_failed++;
    goto out;
  }
  if (!to_bytes(path, "B1'", ir2b, &b1again)) {
    c->export_failed++;
    goto out;
  }
  if (buf_equal(&b2, &b1again))
    c->deterministic++;
  else
    print_first_diff_byte(path, "export not deterministic (B2 vs B1')", &b2, &b1again);

  /* informational: one more round reaches the same bytes */
  if (to_bytes(path, "B3", ir3, &b3) && buf_equal(&b2, &b3)) c->byte_stable++;

out:
  /* programs first: they borrow from the byte buffers */
  if (ir2) mgopt_program_destroy(ir2);
  if (ir3) mgopt_program_destroy(ir3);
  if (ir2b) mgopt_program_destroy(ir2b);
  mgopt_buf_free(&b1);
  mgopt_buf_free(&b2);
  mgopt_buf_free(&b3);
  mgopt_buf_free(&b1again);
  mgopt_buf_free(&t2);
  mgopt_buf_free(&t3);
}

/* Every failure category fails the test; unreadable originals are the codec's
   business (test_onnx_pb) but still fail here, since nothing else was checked. */
static void check_counts(const rt_counts *c) {
  CHECK_EQ_INT(c->unreadable, 0);
  CHECK_EQ_INT(c->import_failed, 0);
  CHECK_EQ_INT(c->export_failed, 0);
  CHECK_EQ_INT(c->reload_failed, 0);
  CHECK_EQ_INT(c->stable, c->models);
  CHECK_EQ_INT(c->deterministic, c->models);
}

/* ---------------------------------------------------------------- the repository's fixtures */

static void test_fixtures_roundtrip(void) {
  static const char *const files[] = {
      FIX "attributes.onnx", FIX "control_flow.onnx", FIX "external.onnx", FIX "function.onnx",
      FIX "metadata.onnx",   FIX "sequences.onnx",    FIX "tensors.onnx",
      FIX "function_twice.onnx", FIX "function_attr_ref.onnx", FIX "function_nested.onnx",
      FIX "function_domain.onnx",
  };
  rt_counts c;
  size_t i;
  memset(&c, 0, sizeof c);
  for (i = 0; i < sizeof files / sizeof files[0]; i++) roundtrip_one(files[i], &c);
  /* attributes.onnx carries a sparse tensor attribute: refused, as documented */
  CHECK_EQ_INT(c.unsupported, 1);
  CHECK_EQ_INT(c.models, (int)(sizeof files / sizeof files[0]) - 1);
  check_counts(&c);
}

/* ---------------------------------------------------------------- ONNX's own test models */

#ifdef HAVE_DIRENT
typedef struct path_list {
  char **v;
  size_t n, cap;
  int oom;
} path_list;

static void path_list_add(path_list *l, const char *s) {
  size_t len = strlen(s);
  char *copy;
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 256;
    char **v = (char **)realloc(l->v, cap * sizeof(char *));
    if (!v) {
      l->oom = 1;
      return;
    }
    l->v = v;
    l->cap = cap;
  }
  copy = (char *)malloc(len + 1);
  if (!copy) {
    l->oom = 1;
    return;
  }
  memcpy(copy, s, len + 1);
  l->v[l->n++] = copy;
}

/* Every model.onnx below dir (depth-limited; symbolic loops end there). */
static void find_models(const char *dir, int depth, path_list *out) {
  DIR *D;
  struct dirent *e;
  if (depth > 8) return;
  D = opendir(dir);
  if (!D) return;
  while ((e = readdir(D)) != NULL) {
    char path[2048];
    DIR *sub;
    if (e->d_name[0] == '.') continue;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) continue;
    sub = opendir(path);
    if (sub) {
      closedir(sub);
      find_models(path, depth + 1, out);
    } else if (strcmp(e->d_name, "model.onnx") == 0) {
      path_list_add(out, path);
    }
  }
  closedir(D);
}

static int cmp_paths(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}
#endif

static void test_libonnx_testdata_roundtrip(void) {
#ifdef HAVE_DIRENT
  path_list l;
  rt_counts c;
  size_t i;
  DIR *top = opendir(TESTDATA);
  if (!top) {
    printf("note: libonnx-testdata is not installed (%s): round trip test skipped\n", TESTDATA);
    return;
  }
  closedir(top);
  memset(&l, 0, sizeof l);
  memset(&c, 0, sizeof c);
  find_models(TESTDATA, 0, &l);
  CHECK(!l.oom);
  CHECK(l.n > 0);
  if (l.n) qsort(l.v, l.n, sizeof(char *), cmp_paths);
  for (i = 0; i < l.n; i++) roundtrip_one(l.v[i], &c);
  printf("note: libonnx-testdata round trip: %d models, %d stable, %d deterministic, %d byte-stable "
         "(%d unreadable, %d import failures, %d export failures, %d reload failures, 0 skipped)\n",
         c.models, c.stable, c.deterministic, c.byte_stable, c.unreadable, c.import_failed, c.export_failed,
         c.reload_failed);
  check_counts(&c);
  for (i = 0; i < l.n; i++) free(l.v[i]);
  free(l.v);
#else
  printf("note: no directory listing on this platform: libonnx-testdata round trip test skipped\n");
#endif
}

/* An export that fails for a reason other than memory says that reason and
   where (the value), never "out of memory". */
static void export_fails_with(const char *mil, const char *value, const char *why) {
  mgopt_program *p = NULL;
  mgopt_onnx_model *e = NULL;
  mgopt_diag d;
  memset(&d, 0, sizeof d);
  CHECK(mgopt_mil_parse(mil, strlen(mil), NULL, &p, &d) == MGOPT_OK);
  if (!p) return;
  CHECK(mgopt_onnx_export(p, NULL, &e, &d) == MGOPT_ERR_UNSUPPORTED);
  CHECK(strstr(d.msg, "out of memory") == NULL);
  CHECK(strstr(d.msg, value) != NULL || strstr(d.op, value) != NULL);
  CHECK(strstr(d.msg, why) != NULL);
  if (strstr(d.msg, why) == NULL) printf("  message: %s: %s\n", d.op, d.msg);
  mgopt_program_destroy(p);
}

static void test_export_failure_says_why(void) {
  /* a main input, a main output, an op output of a dtype ONNX has no code for */
  export_fails_with("main(%x: (4, uint2)) {\n} -> (%x)\n", "'x'", "uint2 tensor: ONNX has no such data type");
  export_fails_with("main(%x: (4, fp32)) {\n  %y: (4, uint3) = cast(x=%x, dtype=\"uint3\")\n} -> (%y)\n", "y",
                    "dtype");
  /* a constant ONNX cannot hold */
  export_fails_with("main(%x: (2, fp32)) {\n  %c: (2, uint6)* = const(val=[1, 2])\n  %y: (2, fp32) = cast(x=%c, "
                    "dtype=\"fp32\")\n  %z: (2, fp32) = add(x=%x, y=%y)\n} -> (%z)\n",
                    "c", "uint6");
}

static const test_case tests[] = {
    TEST(test_fixtures_roundtrip),
    TEST(test_libonnx_testdata_roundtrip),
    TEST(test_export_failure_says_why),
};
TEST_MAIN(tests)
