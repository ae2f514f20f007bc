/* tools/mgopt.c — the command-line tool: read a model (.mil), run a pipeline, write it back. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "usage: mgopt IN.mil -o OUT.mil [-p PIPELINE] [--timing] [--verify-each] [--print-after-all]\n"
    "       mgopt --list-passes\n"
    "       mgopt --version\n"
    "\n"
    "  -p PIPELINE        passes to run, e.g. 'const_elimination{skip_const_by_size=1000},dead_code_elimination'\n"
    "                     or a named pipeline; 'none' only reads and writes (default: 'default')\n"
    "  --timing           print wall time, rewrites and op counts per pass (stderr)\n"
    "  --verify-each      run the verifier after every pass\n"
    "  --print-after-all  print the program after every pass (stderr)\n";

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t cap = 0, n = 0;
  if (!f) return NULL;
  for (;;) {
    size_t got;
    if (n + 65536 + 1 > cap) {
      size_t ncap = cap ? cap * 2 : 1 << 16;
      char *nb;
      while (ncap < n + 65536 + 1) ncap *= 2;
      nb = (char *)realloc(buf, ncap);
      if (!nb) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = nb;
      cap = ncap;
    }
    got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    free(buf);
    fclose(f);
    return NULL;
  }
  fclose(f);
  buf[n] = 0;
  *len = n;
  return buf;
}

static int write_all(const char *path, const char *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  if (fwrite(data, 1, len, f) != len) {
    fclose(f);
    return 0;
  }
  return fclose(f) == 0;
}

typedef struct tool_opts {
  int timing, print_after_all;
} tool_opts;

static void after_pass(mgopt_program *p, const mgopt_pass_report *r, void *ud) {
  tool_opts *o = (tool_opts *)ud;
  if (o->timing)
    fprintf(stderr, "  %-45s %9.3f ms  rewrites %-8lld ops %lld -> %lld\n", r->name, r->seconds * 1e3,
            (long long)r->rewrites, (long long)r->ops_before, (long long)r->ops_after);
  if (o->print_after_all) {
    mgopt_buf b;
    memset(&b, 0, sizeof b);
    fprintf(stderr, "# IR after %s\n", r->name);
    if (mgopt_mil_print(p, NULL, &b) == MGOPT_OK && b.data) fputs(b.data, stderr);
    mgopt_buf_free(&b);
  }
}

static void list_passes(const mgopt_registry *r) {
  int32_t i, k;
  printf("passes:\n");
  for (i = 0; i < r->npasses; i++) {
    const mgopt_pass_def *pd = r->passes[i];
    printf("  %-45s [%s] %s\n", pd->name, pd->family, pd->description);
    for (k = 0; k < pd->nopts; k++) {
      static const char *const kinds[] = {"bool", "int", "float", "string"};
      const mgopt_opt_def *od = &pd->opts[k];
      printf("      %s: %s = %s  %s\n", od->name, od->kind < 4 ? kinds[od->kind] : "?",
             od->deflt ? od->deflt : "", od->help ? od->help : "");
    }
  }
  printf("pipelines:\n");
  for (i = 0; i < r->npipelines; i++)
    printf("  %-20s %s\n      %s\n", r->pipelines[i].name, r->pipelines[i].description, r->pipelines[i].passes);
}

int main(int argc, char **argv) {
  const char *in = NULL, *out = NULL, *pipeline = "default";
  int verify_each = 0, i, rc = 1;
  tool_opts to;
  const mgopt_registry *reg = mgopt_builtin_registry();
  mgopt_program *p = NULL;
  mgopt_diag d;
  char *text = NULL;
  size_t len = 0;
  memset(&to, 0, sizeof to);
  mgopt_diag_clear(&d);
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-o") == 0 && i + 1 < argc) out = argv[++i];
    else if (strcmp(a, "-p") == 0 && i + 1 < argc) pipeline = argv[++i];
    else if (strcmp(a, "--timing") == 0) to.timing = 1;
    else if (strcmp(a, "--verify-each") == 0) verify_each = 1;
    else if (strcmp(a, "--print-after-all") == 0) to.print_after_all = 1;
    else if (strcmp(a, "--list-passes") == 0) {
      list_passes(reg);
      return 0;
    } else if (strcmp(a, "--version") == 0) {
      printf("mgopt %s\n", mgopt_version());
      return 0;
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(usage, stdout);
      return 0;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "mgopt: unknown or incomplete option '%s'\n%s", a, usage);
      return 2;
    } else if (!in) in = a;
    else {
      fprintf(stderr, "mgopt: more than one input ('%s' and '%s')\n", in, a);
      return 2;
    }
  }
  if (!in || !out) {
    fprintf(stderr, "mgopt: %s\n%s", !in ? "no input file" : "no output file (-o)", usage);
    return 2;
  }
  if (mgopt_pipeline_check(reg, pipeline, &d) != MGOPT_OK) {
    fprintf(stderr, "mgopt: pipeline '%s': column %d: %s\n", pipeline, d.col, d.msg);
    return 2;
  }
  if (!ends_with(in, ".mil") || !ends_with(out, ".mil")) {
    fprintf(stderr, "mgopt: only .mil input and output are supported by this build\n");
    return 2;
  }
  text = read_all(in, &len);
  if (!text) {
    fprintf(stderr, "mgopt: cannot read '%s'\n", in);
    return 1;
  }
  p = mgopt_mil_parse(text, len, NULL, &d);
  if (!p) {
    fprintf(stderr, "%s:%d:%d: %s\n", in, d.line, d.col, d.msg);
    goto done;
  }
  if (mgopt_program_verify(p, &d) != MGOPT_OK) {
    fprintf(stderr, "%s: invalid program: %s\n", in, d.msg);
    goto done;
  }
  {
    mgopt_run_options ro;
    memset(&ro, 0, sizeof ro);
    ro.verify_each = verify_each;
    ro.after_pass = after_pass;
    ro.after_pass_ud = &to;
    ro.clock = now_seconds;
    if (to.timing) fprintf(stderr, "mgopt: %s, %lld ops\n", in, (long long)mgopt_program_op_count(p));
    if (mgopt_pipeline_run(p, reg, pipeline, &ro, NULL, 0, NULL, &d) != MGOPT_OK) {
      fprintf(stderr, "mgopt: %s%s%s\n", d.op[0] ? d.op : "", d.op[0] ? ": " : "", d.msg);
      goto done;
    }
  }
  {
    mgopt_buf b;
    memset(&b, 0, sizeof b);
    if (mgopt_mil_print(p, NULL, &b) != MGOPT_OK || b.oom) {
      fprintf(stderr, "mgopt: cannot print the program\n");
      mgopt_buf_free(&b);
      goto done;
    }
    if (!write_all(out, b.data ? b.data : "", b.len)) {
      fprintf(stderr, "mgopt: cannot write '%s'\n", out);
      mgopt_buf_free(&b);
      goto done;
    }
    mgopt_buf_free(&b);
  }
  rc = 0;
done:
  mgopt_program_destroy(p);
  free(text);
  return rc;
}
