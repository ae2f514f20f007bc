/* tests/golden/golden.c — the golden test runner: .mil cases with a pipeline and the exact expected output.

   usage: test_golden [--update] [DIR_OR_FILE...]     (default: tests/golden)

   A golden file holds cases separated by a line starting with "# ----". In a case:
     # CASE: a short name
     # RUN: PIPELINE            (if absent: the last RUN seen earlier in the file)
     <input program>
     # EXPECT:                  followed by the exact printed output, or
     # EXPECT: unchanged        the output equals the printed input, or
     # EXPECT-ERROR: L:C        parsing the input fails at line L, column C of the file, or
     # EXPECT-FAIL: STATUS      the pipeline fails with that status (e.g. ERR_PASS).
   For every case the runner checks: the input parses and verifies; print is a
   fixed point of parse (print(parse(print(P))) == print(P)) before and after the
   pipeline; the pipeline runs with the verifier after every pass; the output
   matches (a diff is shown otherwise). --update rewrites the EXPECT bodies of
   failing cases with the actual output, for a person to review. The last line
   is "N passed, N failed". Without arguments it also runs the Before/After
   example in the header comment of every pass file under src/passes. */
#define _POSIX_C_SOURCE 200809L
#include "mgopt.h"
#include "mgopt_passes.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int passed, failed, update;

typedef struct {
  char *d;
  size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t c = b->cap ? b->cap : 1024;
    while (c < b->n + n + 1) c *= 2;
    b->d = (char *)realloc(b->d, c);
    if (!b->d) exit(2);
    b->cap = c;
  }
  memcpy(b->d + b->n, s, n);
  b->n += n;
  b->d[b->n] = 0;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *d;
  long n;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  d = (char *)malloc((size_t)n + 1);
  if (!d || fread(d, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    free(d);
    return NULL;
  }
  d[n] = 0;
  fclose(f);
  *len = (size_t)n;
  return d;
}

/* trims trailing blank lines and trailing spaces of each line */
static char *normalize(const char *s) {
  sbuf b = {0};
  const char *p = s;
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    size_t m = n;
    while (m && (p[m - 1] == ' ' || p[m - 1] == '\r' || p[m - 1] == '\t')) m--;
    sb_put(&b, p, m);
    sb_put(&b, "\n", 1);
    p += n + (nl ? 1 : 0);
  }
  if (!b.d) sb_put(&b, "", 0);
  while (b.n >= 2 && b.d[b.n - 1] == '\n' && b.d[b.n - 2] == '\n') b.d[--b.n] = 0;
  while (b.n && b.d[0] == '\n') memmove(b.d, b.d + 1, b.n--);
  return b.d;
}

static void show_diff(const char *want, const char *got) {
  int line = 1;
  const char *a = want, *b = got;
  while (*a && *b) {
    const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
    size_t na = ea ? (size_t)(ea - a) : strlen(a), nb = eb ? (size_t)(eb - b) : strlen(b);
    if (na != nb || memcmp(a, b, na) != 0) break;
    a += na + (ea ? 1 : 0);
    b += nb + (eb ? 1 : 0);
    line++;
  }
  printf("    first difference at output line %d\n    --- expected\n%s    --- actual\n%s", line, want, got);
}

static char *print_prog(mgopt_program *p) {
  mgopt_buf b;
  char *s;
  memset(&b, 0, sizeof b);
  if (mgopt_mil_print(p, NULL, &b) != MGOPT_OK || b.oom) {
    mgopt_buf_free(&b);
    return NULL;
  }
  s = strdup(b.data ? b.data : "");
  mgopt_buf_free(&b);
  return s;
}

/* print(parse(text)) == text ? */
static int fixed_point(const char *text, const char *where) {
  mgopt_diag d;
  mgopt_program *p = NULL;
  mgopt_mil_parse(text, strlen(text), NULL, &p, &d);
  char *again;
  int ok;
  if (!p) {
    printf("    %s: printed text does not parse: %d:%d: %s\n", where, d.line, d.col, d.msg);
    return 0;
  }
  again = print_prog(p);
  ok = again && strcmp(again, text) == 0;
  if (!ok) {
    printf("    %s: print is not a fixed point of parse\n", where);
    if (again) show_diff(text, again);
  }
  free(again);
  mgopt_program_destroy(p);
  return ok;
}

typedef struct {
  const char *name;
  const char *run;
  int first_line;         /* file line of the input's first line */
  const char *in;
  size_t in_len;
  int kind;               /* 0 text, 1 unchanged, 2 error, 3 fail */
  const char *exp;        /* expected text body */
  size_t exp_len;
  int err_line, err_col;
  char fail_status[64];
  const char *exp_body_start, *exp_body_end; /* for --update */
  char *actual;           /* set when the case failed and an update is possible */
} gcase;

static const char *status_name(mgopt_status s) {
  switch (s) {
#define X(name, str) \
  case MGOPT_##name: return #name;
    MGOPT_STATUS_LIST(X)
#undef X
    default: return "?";
  }
}

static int run_case(const char *file, gcase *c) {
  mgopt_diag d;
  mgopt_program *p;
  char *before = NULL, *after = NULL, *want = NULL, *got = NULL;
  int ok = 0;
  char *input = (char *)malloc(c->in_len + 1);
  memcpy(input, c->in, c->in_len);
  input[c->in_len] = 0;
  mgopt_diag_clear(&d);
  if (mgopt_mil_parse(input, c->in_len, NULL, &p, &d) != MGOPT_OK) p = NULL;
  if (c->kind == 2) {
    int line = d.line + c->first_line - 1;
    if (p) printf("  %s: %s: expected a parse error at %d:%d, it parsed\n", file, c->name, c->err_line, c->err_col);
    else if (line != c->err_line || d.col != c->err_col)
      printf("  %s: %s: expected a parse error at %d:%d, got %d:%d: %s\n", file, c->name, c->err_line,
             c->err_col, line, d.col, d.msg);
    else ok = 1;
    goto done;
  }
  if (!p) {
    printf("  %s: %s: input does not parse: %d:%d: %s\n", file, c->name, d.line + c->first_line - 1, d.col, d.msg);
    goto done;
  }
  if (mgopt_program_verify(p, &d) != MGOPT_OK) {
    printf("  %s: %s: input does not verify: %s\n", file, c->name, d.msg);
    goto done;
  }
  before = print_prog(p);
  if (!before || !fixed_point(before, "input")) {
    printf("  %s: %s: round trip of the input failed\n", file, c->name);
    goto done;
  }
  {
    mgopt_pipeline_options ro;
    mgopt_status s;
    memset(&ro, 0, sizeof ro);
    ro.verify_each = 1;
    ro.strict = 1; /* EXPECT-FAIL cases see the failure */
    s = mgopt_pipeline_run(p, mgopt_builtin_registry(), c->run ? c->run : "none", &ro, &d);
    if (c->kind == 3) {
      if (s == MGOPT_OK) printf("  %s: %s: expected the pipeline to fail with %s, it succeeded\n", file, c->name, c->fail_status);
      else if (strcmp(status_name(s), c->fail_status) != 0)
        printf("  %s: %s: expected %s, got %s: %s\n", file, c->name, c->fail_status, status_name(s), d.msg);
      else ok = 1;
      goto done;
    }
    if (s != MGOPT_OK) {
      printf("  %s: %s: pipeline '%s' failed (%s): %s%s%s\n", file, c->name, c->run ? c->run : "none",
             status_name(s), d.op, d.op[0] ? ": " : "", d.msg);
      goto done;
    }
  }
  after = print_prog(p);
  if (!after || !fixed_point(after, "output")) {
    printf("  %s: %s: round trip of the output failed\n", file, c->name);
    goto done;
  }
  got = normalize(after);
  if (c->kind == 1) want = normalize(before);
  else {
    char *e = (char *)malloc(c->exp_len + 1);
    memcpy(e, c->exp, c->exp_len);
    e[c->exp_len] = 0;
    want = normalize(e);
    free(e);
  }
  if (strcmp(want, got) != 0) {
    printf("  %s: %s: output differs\n", file, c->name);
    show_diff(want, got);
    if (c->kind == 0) c->actual = strdup(got);
    goto done;
  }
  ok = 1;
done:
  free(before);
  free(after);
  free(want);
  free(got);
  free(input);
  mgopt_program_destroy(p);
  return ok;
}

static int starts(const char *line, const char *prefix) { return strncmp(line, prefix, strlen(prefix)) == 0; }

static void run_file(const char *path) {
  size_t len;
  char *text = read_file(path, &len);
  gcase cases[256];
  int ncases = 0, i, any_update = 0, line_no = 1;
  const char *p, *last_run = NULL;
  gcase *c;
  if (!text) {
    printf("  %s: cannot read\n", path);
    failed++;
    return;
  }
  memset(cases, 0, sizeof cases);
  c = &cases[0];
  c->in = NULL;
  /* state: 0 before input, 1 in input, 2 in expected */
  {
    int state = 0;
    for (p = text; *p;) {
      const char *nl = strchr(p, '\n');
      size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
      char line[512];
      size_t ln = n < sizeof line - 1 ? n : sizeof line - 1;
      memcpy(line, p, ln);
      line[ln] = 0;
      if (ln && line[ln - 1] == '\n') line[--ln] = 0;
      if (starts(line, "# ----")) {
        if (state == 2 && c->kind == 0) c->exp_body_end = p;
        if (c->in) {
          if (ncases == 255) break;
          c = &cases[++ncases];
        }
        state = 0;
        c->in = NULL;
      } else if (starts(line, "# CASE:")) {
        char *nm = strdup(line + 7);
        while (*nm == ' ') memmove(nm, nm + 1, strlen(nm));
        c->name = nm;
      } else if (starts(line, "# RUN:")) {
        const char *r = line + 6;
        while (*r == ' ') r++;
        c->run = last_run = strdup(r);
      } else if (starts(line, "# EXPECT-ERROR:")) {
        c->kind = 2;
        sscanf(line + 15, " %d:%d", &c->err_line, &c->err_col);
        state = 2;
      } else if (starts(line, "# EXPECT-FAIL:")) {
        c->kind = 3;
        sscanf(line + 14, " %63s", c->fail_status);
        state = 2;
      } else if (starts(line, "# EXPECT:")) {
        const char *r = line + 9;
        while (*r == ' ') r++;
        c->kind = strcmp(r, "unchanged") == 0 ? 1 : 0;
        c->exp = p + n;
        c->exp_body_start = p + n;
        c->exp_body_end = text + len;
        state = 2;
      } else if (state == 0 && (ln == 0 || line[0] == '#')) {
        /* comments and blank lines before the input */
      } else if (state == 0 || state == 1) {
        if (state == 0) {
          c->in = p;
          c->first_line = line_no;
          if (!c->run) c->run = last_run;
          state = 1;
        }
        c->in_len = (size_t)(p + n - c->in);
      } else if (state == 2 && c->kind == 0) {
        c->exp_len = (size_t)(p + n - c->exp);
      }
      p += n;
      line_no++;
    }
    if (c->in) ncases++;
  }
  for (i = 0; i < ncases; i++) {
    gcase *k = &cases[i];
    char nm[64];
    if (!k->name) {
      snprintf(nm, sizeof nm, "case %d", i + 1);
      k->name = strdup(nm);
    }
    if (run_case(path, k)) passed++;
    else {
      failed++;
      if (k->actual) any_update = 1;
    }
  }
  if (update && any_update) {
    sbuf out = {0};
    const char *at = text;
    FILE *f;
    for (i = 0; i < ncases; i++) {
      gcase *k = &cases[i];
      if (!k->actual) continue;
      sb_put(&out, at, (size_t)(k->exp_body_start - at));
      sb_put(&out, k->actual, strlen(k->actual));
      at = k->exp_body_end;
    }
    sb_put(&out, at, strlen(at));
    f = fopen(path, "wb");
    if (f) {
      fwrite(out.d, 1, out.n, f);
      fclose(f);
      printf("  %s: updated; review the diff\n", path);
    }
    free(out.d);
  }
  for (i = 0; i < ncases; i++) {
    free((void *)cases[i].name);
    free(cases[i].actual);
  }
  free(text);
  /* cases without a RUN share the earlier case's string: free each once */
  {
    const char *freed[256];
    int nf = 0, j;
    for (i = 0; i < ncases; i++) {
      int dup = 0;
      if (!cases[i].run) continue;
      for (j = 0; j < nf; j++)
        if (freed[j] == cases[i].run) dup = 1;
      if (!dup) freed[nf++] = cases[i].run;
    }
    for (j = 0; j < nf; j++) free((void *)freed[j]);
  }
}

static int cmp_str(const void *a, const void *b);

/* A pass file's header comment carries "Before:" and "After:" programs; the
   pass named on its first line ("src/... — common::name: ...") must turn one
   into the other. */
static char *doc_block(const char **pp, const char *label) {
  const char *p = strstr(*pp, label);
  sbuf b = {0};
  int indent = -1;
  if (!p) return NULL;
  p = strchr(p, '\n');
  if (!p) return NULL;
  p++;
  for (;;) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    int k = 0;
    while ((size_t)k < n && p[k] == ' ') k++;
    if ((size_t)k == n || strncmp(p + k, "After:", 6) == 0 || strstr(p, "*/") == p + k) break;
    if (indent < 0) indent = k;
    if (k < indent) break;
    sb_put(&b, p + indent, n - (size_t)indent);
    sb_put(&b, "\n", 1);
    if (!nl) break;
    p = nl + 1;
  }
  *pp = p;
  return b.d;
}

static void run_doc(const char *path) {
  size_t len;
  char *text = read_file(path, &len);
  const char *p, *dash;
  char name[128];
  gcase c;
  char *before, *after;
  size_t n;
  if (!text) return;
  dash = strstr(text, "\xe2\x80\x94 "); /* the em dash after the path */
  p = strstr(text, "Before:");
  if (!dash || !p) {
    free(text);
    return;
  }
  dash += 4;
  n = strcspn(dash, " :\n");
  while (dash[n] == ':' && dash[n + 1] == ':') n += 2 + strcspn(dash + n + 2, " :\n");
  if (n >= sizeof name) n = sizeof name - 1;
  memcpy(name, dash, n);
  name[n] = 0;
  before = doc_block(&p, "Before:");
  after = before ? doc_block(&p, "After:") : NULL;
  if (!before || !after) {
    printf("  %s: Before:/After: example not found\n", path);
    failed++;
  } else {
    memset(&c, 0, sizeof c);
    c.name = "header example";
    c.run = name;
    c.first_line = 1;
    c.in = before;
    c.in_len = strlen(before);
    c.exp = after;
    c.exp_len = strlen(after);
    if (run_case(path, &c)) passed++;
    else failed++;
    free(c.actual);
  }
  free(before);
  free(after);
  free(text);
}

static void run_docs(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char *names[1024];
  int n = 0, i;
  if (!d) return;
  while ((e = readdir(d)) != NULL && n < 1024) {
    if (e->d_name[0] == '.') continue;
    names[n] = (char *)malloc(strlen(dir) + strlen(e->d_name) + 2);
    sprintf(names[n], "%s/%s", dir, e->d_name);
    n++;
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof names[0], cmp_str);
  for (i = 0; i < n; i++) {
    struct stat st;
    size_t l = strlen(names[i]);
    if (stat(names[i], &st) == 0 && S_ISDIR(st.st_mode)) run_docs(names[i]);
    else if (l > 2 && strcmp(names[i] + l - 2, ".c") == 0) run_doc(names[i]);
    free(names[i]);
  }
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void run_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    printf("  %s: not found\n", path);
    failed++;
    return;
  }
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    struct dirent *e;
    char *names[1024];
    int n = 0, i;
    if (!d) return;
    while ((e = readdir(d)) != NULL && n < 1024) {
      if (e->d_name[0] == '.') continue;
      names[n] = (char *)malloc(strlen(path) + strlen(e->d_name) + 2);
      sprintf(names[n], "%s/%s", path, e->d_name);
      n++;
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    for (i = 0; i < n; i++) {
      struct stat s2;
      size_t l = strlen(names[i]);
      if (stat(names[i], &s2) == 0 && (S_ISDIR(s2.st_mode) || (l > 4 && strcmp(names[i] + l - 4, ".mil") == 0)))
        run_path(names[i]);
      free(names[i]);
    }
  } else {
    run_file(path);
  }
}

int main(int argc, char **argv) {
  int i, any = 0;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--update") == 0) update = 1;
    else {
      run_path(argv[i]);
      any = 1;
    }
  }
  if (!any) {
    run_path("tests/golden");
    run_docs("src/passes");
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
