/* tests/difftest/difftest.c — differential tester: every pass and named pipeline on random programs, evaluated before and after. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* opendir: is the golden corpus there */
#endif
#include "mgopt.h"
#include "mgopt_passes.h"
#include "gen.h"
#include "check.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

/* The golden corpus: the build gives its absolute path (the Makefile passes
   $(CURDIR)/tests/golden), so the tester finds it from any directory;
   --corpus DIR overrides it. */
#ifndef MGOPT_DIFFTEST_CORPUS
#define MGOPT_DIFFTEST_CORPUS "tests/golden"
#endif

/* ---------------------------------------------------------------- golden cases
   The CASE programs of <corpus>/<family>/<pass>.mil are further
   templates of the pass's pattern (every operand order and legality
   condition its author wrote); the tester runs them on random inputs too. */

typedef struct corpus {
  char **prog;
  char **run; /* the case's "# RUN:" pipeline when it gives this pass options, else NULL */
  int n;
} corpus;

static void corpus_free(corpus *c) {
  int i;
  for (i = 0; i < c->n; i++) free(c->prog[i]), free(c->run[i]);
  free(c->prog);
  free(c->run);
  c->prog = c->run = NULL;
  c->n = 0;
}

static void corpus_load(corpus *c, const char *dir, const char *family, const char *pass) {
  char path[512], line[4096];
  FILE *f;
  dt_text cur = {NULL, 0, 0};
  int in = 0;
  char run[4096] = "";
  c->prog = c->run = NULL;
  c->n = 0;
  f = NULL;
  if (dir) {
    snprintf(path, sizeof path, "%s/%s/%s.mil", dir, family, pass);
    f = fopen(path, "r");
  }
  if (!f) return;
  for (;;) {
    char *l = fgets(line, sizeof line, f);
    int starts_case = l && !strncmp(line, "# CASE:", 7);
    int ends = !l || starts_case || !strncmp(line, "# EXPECT", 8) || !strncmp(line, "# ----", 6);
    if (ends && in && cur.len) {
      char **q = (char **)realloc(c->prog, (size_t)(c->n + 1) * sizeof *q);
      char **r = q ? (char **)realloc(c->run, (size_t)(c->n + 1) * sizeof *r) : NULL;
      if (q) c->prog = q;
      if (r) {
        c->run = r;
        c->run[c->n] = NULL;
        if (run[0]) {
          c->run[c->n] = (char *)malloc(strlen(run) + 1);
          if (c->run[c->n]) memcpy(c->run[c->n], run, strlen(run) + 1);
        }
        c->prog[c->n++] = cur.data;
        cur.data = NULL;
      }
      free(cur.data);
      cur.data = NULL;
      cur.len = cur.cap = 0;
      in = 0;
    }
    if (!l) break;
    if (l && !strncmp(line, "# RUN: ", 7)) {
      size_t n = strlen(pass);
      run[0] = 0;
      if (!strncmp(line + 7, pass, n) && line[7 + n] == '{') {
        memcpy(run, line + 7, strlen(line + 7) + 1);
        run[strcspn(run, "\r\n")] = 0;
      }
    }
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

/* ---------------------------------------------------------------- driver */

typedef struct totals {
  long programs, fired, mismatches, failed_passes;
} totals;

static void save_failure(const char *outdir, const char *name, const char *run, uint64_t seed, const char *text,
                         const char *why) {
  char path[1024], safe[256];
  size_t i;
  FILE *f;
  for (i = 0; name[i] && i + 1 < sizeof safe; i++) safe[i] = (name[i] == ':' || name[i] == '/') ? '_' : name[i];
  safe[i] = 0;
  snprintf(path, sizeof path, "%s/%s.mil", outdir, safe);
  f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "# difftest mismatch: %s, seed %llu: %s\n# RUN: %s\n%s", name, (unsigned long long)seed, why, run, text);
  fclose(f);
  printf("difftest: %s: first mismatch (seed %llu): %s; program in %s\n", name, (unsigned long long)seed, why, path);
}

static void test_one(const char *name, const char *family, int n, uint64_t seed0, const char *corpus_dir,
                     const char *outdir, totals *tt) {
  dt_tol t = dt_tol_of(name);
  corpus c;
  const char *shortname = strstr(name, "::") ? strstr(name, "::") + 2 : name;
  long programs = 0, fired = 0, mism = 0, nokernel = 0;
  char nokernel_why[512] = "";
  int i, attempts = 0;
  corpus_load(&c, corpus_dir, family ? family : "", shortname);
  for (i = 0; programs < n && attempts < 4 * n + 8; attempts++) {
    dt_text text = {NULL, 0, 0};
    uint64_t seed = seed0 * 1000003ull + (uint64_t)attempts;
    const char *run;
    dt_result res;
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
    run = c.n && attempts % 4 == 3 && c.run[(attempts / 4) % c.n] ? c.run[(attempts / 4) % c.n] : name;
    rc = dt_check(text.data, run, &t, seed, &res);
    if (rc == DT_NOKERNEL) {
      if (!nokernel++) snprintf(nokernel_why, sizeof nokernel_why, "%s", res.why);
    } else if (rc != DT_SKIP) {
      programs++;
      i++;
      if (res.fired) fired++;
      if (rc == DT_MISMATCH) {
        if (!mism) save_failure(outdir, name, run, seed, text.data, res.why);
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

/* --replay: a program saved by save_failure (its first lines name the pass,
   the seed of its inputs and the pipeline), checked again. 1 when it passes.
   tests/difftest/regress/ keeps the programs whose mismatches were fixed. */
static int replay(const char *path) {
  FILE *f = fopen(path, "rb");
  char *text = NULL, *body, name[256], run[1024];
  long len;
  unsigned long long seed;
  dt_result res;
  dt_tol t;
  int rc = DT_SKIP;
  if (!f) {
    printf("difftest: %s: FAIL: cannot open\n", path);
    return 0;
  }
  if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (text = (char *)malloc((size_t)len + 1)) != NULL && fread(text, 1, (size_t)len, f) == (size_t)len) {
    text[len] = 0;
    body = strstr(text, "\n# RUN: ");
    if (sscanf(text, "# difftest mismatch: %255[^,], seed %llu", name, &seed) == 2 && body &&
        sscanf(body + 1, "# RUN: %1023[^\n]", run) == 1 && (body = strchr(body + 1, '\n')) != NULL) {
      t = dt_tol_of(name);
      rc = dt_check(body + 1, run, &t, (uint64_t)seed, &res);
    } else {
      snprintf(res.why, sizeof res.why, "no \"# difftest mismatch: NAME, seed N\" and \"# RUN:\" lines");
    }
  } else {
    snprintf(res.why, sizeof res.why, "cannot read");
  }
  fclose(f);
  free(text);
  if (rc == DT_OK) printf("difftest: %s: PASS\n", path);
  else printf("difftest: %s: FAIL: %s\n", path, rc == DT_SKIP ? "the program cannot be evaluated" : res.why);
  return rc == DT_OK;
}

static void usage(void) {
  fprintf(stderr, "usage: difftest [-n N] [--seed S] [--pass NAME]... [--out DIR] [--corpus DIR] [--summary]\n"
                  "       difftest --replay FILE...\n"
                  "  -n N          programs per pass and pipeline (default: DIFFTEST_N, else 20)\n"
                  "  --seed S      first seed (default: DIFFTEST_SEED, else 1)\n"
                  "  --pass NAME   only this pass or named pipeline (repeatable)\n"
                  "  --out DIR     where the first mismatch of each pass is written (default .)\n"
                  "  --corpus DIR  the golden cases, one program in four (default " MGOPT_DIFFTEST_CORPUS ")\n"
                  "  --gen NAME    print one generated program for NAME (or \"random\") and exit\n"
                  "  --summary     end with \"P passed, F failed\" (passes and pipelines) for tests/run.sh\n"
                  "  --replay FILE...  check again the programs of saved mismatches (the rest of the arguments)\n");
}

int main(int argc, char **argv) {
  const mgopt_registry *reg = mgopt_builtin_registry();
  int n = 20, i, summary = 0, nonly = 0;
  uint64_t seed = 1;
  const char *only[64], *outdir = ".", *gen = NULL, *corpus_dir = MGOPT_DIFFTEST_CORPUS;
  totals tt = {0, 0, 0, 0};
  long nunits = 0;
  if (getenv("DIFFTEST_N") && *getenv("DIFFTEST_N")) n = atoi(getenv("DIFFTEST_N"));
  if (getenv("DIFFTEST_SEED") && *getenv("DIFFTEST_SEED")) seed = strtoull(getenv("DIFFTEST_SEED"), NULL, 10);
  for (i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-n") && i + 1 < argc) n = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--pass") && i + 1 < argc && nonly < 64) only[nonly++] = argv[++i];
    else if (!strcmp(argv[i], "--out") && i + 1 < argc) outdir = argv[++i];
    else if (!strcmp(argv[i], "--corpus") && i + 1 < argc) corpus_dir = argv[++i];
    else if (!strcmp(argv[i], "--gen") && i + 1 < argc) gen = argv[++i];
    else if (!strcmp(argv[i], "--summary")) summary = 1;
    else if (!strcmp(argv[i], "--replay")) {
      int passed = 0, total = argc - i - 1;
      for (i++; i < argc; i++) passed += replay(argv[i]);
      printf("%d passed, %d failed\n", passed, total - passed);
      return passed == total ? 0 : 1;
    } else {
      usage();
      return 2;
    }
  }
  if (gen) {
    dt_text t = {NULL, 0, 0};
    if (dt_generate(seed, strcmp(gen, "random") ? gen : NULL, dt_tol_of(gen).smooth, &t) < 0) return 1;
    fputs(t.data, stdout);
    dt_text_free(&t);
    return 0;
  }
  {
    DIR *d = opendir(corpus_dir);
    if (d) {
      closedir(d);
    } else {
      printf("difftest: no golden corpus at %s: generated programs only\n", corpus_dir);
      corpus_dir = NULL;
    }
  }
  for (i = 0; i < reg->npasses; i++) {
    const mgopt_pass_def *pd = reg->passes[i];
    const char *shortname = strstr(pd->name, "::") ? strstr(pd->name, "::") + 2 : pd->name;
    int k, want = nonly == 0;
    for (k = 0; k < nonly; k++)
      if (!strcmp(only[k], pd->name) || !strcmp(only[k], shortname)) want = 1;
    if (!want) continue;
    test_one(pd->name, pd->family, n, seed, corpus_dir, outdir, &tt);
    nunits++;
  }
  for (i = 0; i < reg->npipelines; i++) {
    const mgopt_pipeline_def *pl = &reg->pipelines[i];
    int k, want = nonly == 0;
    for (k = 0; k < nonly; k++)
      if (!strcmp(only[k], pl->name)) want = 1;
    if (!want) continue;
    test_one(pl->name, NULL, n, seed, corpus_dir, outdir, &tt);
    nunits++;
  }
  printf("difftest: %ld programs, %ld fired, %ld mismatches\n", tt.programs, tt.fired, tt.mismatches);
  if (summary) printf("%ld passed, %ld failed\n", nunits - tt.failed_passes, tt.failed_passes);
  return tt.mismatches ? 1 : 0;
}
