/* tools/amalgamate.c — builds mgopt.h and mgopt_passes.h from src/ and the templates
   src/mgopt.h.in and src/mgopt_passes.h.in.

   usage: amalgamate SRC_DIR OUT_DIR [--check]

   A template line "@include PATH" is replaced by the file SRC_DIR/PATH with its
   local includes (#include "...") removed; every other line is copied. Every .c
   and .h file under SRC_DIR must be included exactly once by the templates (a
   missing or unlisted file is an error). With --check nothing is written and
   the exit status says whether the headers in OUT_DIR are fresh. The output is
   deterministic: no dates, no absolute paths, LF line ends. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
  char *data;
  size_t len, cap;
} buf;

static void die(const char *fmt, const char *arg) {
  fprintf(stderr, "amalgamate: ");
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  exit(1);
}

static void put(buf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t nc = b->cap ? b->cap : 1 << 16;
    while (nc < b->len + n + 1) nc *= 2;
    b->data = (char *)realloc(b->data, nc);
    if (!b->data) die("%s", "out of memory");
    b->cap = nc;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *d;
  long n;
  if (!f) die("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  d = (char *)malloc((size_t)n + 1);
  if (!d || fread(d, 1, (size_t)n, f) != (size_t)n) die("cannot read %s", path);
  d[n] = 0;
  fclose(f);
  *len = (size_t)n;
  return d;
}

/* the set of source files found under src/, and how often each was included */
static char *files[1024];
static int used[1024];
static int nfiles;

static void scan(const char *root, const char *rel) {
  char path[8192];
  DIR *d;
  struct dirent *e;
  char *names[512];
  int n = 0, i;
  snprintf(path, sizeof path, "%s/%s", root, rel);
  d = opendir(path);
  if (!d) die("cannot list %s", path);
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if (n == 512) die("%s", "too many files in one folder");
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  for (i = 0; i < n; i++) {
    char sub[2048];
    struct stat st;
    size_t l = strlen(names[i]);
    snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", names[i]);
    snprintf(path, sizeof path, "%s/%s", root, sub);
    if (stat(path, &st) != 0) die("cannot stat %s", path);
    if (S_ISDIR(st.st_mode)) scan(root, sub);
    else if (l > 2 && (strcmp(names[i] + l - 2, ".c") == 0 || strcmp(names[i] + l - 2, ".h") == 0)) {
      if (nfiles == 1024) die("%s", "too many source files");
      files[nfiles++] = strdup(sub);
    }
    free(names[i]);
  }
}

static void include_file(buf *out, const char *root, const char *rel) {
  char path[4096];
  char *text, *p, *end;
  size_t len;
  int i, found = -1;
  for (i = 0; i < nfiles; i++)
    if (strcmp(files[i], rel) == 0) found = i;
  /* non-source files (the manual, the license) are not tracked, only read */
  if (found >= 0 && used[found]++) die("file included twice: %s", rel);
  snprintf(path, sizeof path, "%s/%s", root, rel);
  text = read_file(path, &len);
  p = text;
  end = text + len;
  while (p < end) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    const char *q = p;
    while (q < p + n && (*q == ' ' || *q == '\t')) q++;
    if (n && p[n - 1] == '\r') n--;
    if (!(strncmp(q, "#include \"", 10) == 0)) {
      put(out, p, n);
      put(out, "\n", 1);
    }
    p += (nl ? (size_t)(nl - p) + 1 : n);
    if (!nl) break;
  }
  free(text);
}

static void expand(buf *out, const char *root, const char *tmpl) {
  char path[4096];
  char *text, *p;
  size_t len;
  snprintf(path, sizeof path, "%s/%s", root, tmpl);
  text = read_file(path, &len);
  p = text;
  while (*p) {
    char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    if (n > 9 && strncmp(p, "@include ", 9) == 0) {
      char rel[1024];
      size_t rl = n - 9;
      if (rl >= sizeof rel) die("%s", "include path too long");
      memcpy(rel, p + 9, rl);
      rel[rl] = 0;
      while (rl && (rel[rl - 1] == ' ' || rel[rl - 1] == '\r')) rel[--rl] = 0;
      include_file(out, root, rel);
    } else {
      put(out, p, n);
      put(out, "\n", 1);
    }
    p += n + (nl ? 1 : 0);
  }
  free(text);
}

static int write_or_check(const char *path, const buf *b, int check) {
  if (check) {
    size_t len;
    FILE *f = fopen(path, "rb");
    char *old;
    int same;
    if (!f) {
      fprintf(stderr, "amalgamate: %s is missing\n", path);
      return 1;
    }
    fclose(f);
    old = read_file(path, &len);
    same = len == b->len && memcmp(old, b->data, len) == 0;
    free(old);
    if (!same) fprintf(stderr, "amalgamate: %s is stale: run make amalgamate and commit it\n", path);
    return !same;
  } else {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b->data, 1, b->len, f) != b->len || fclose(f) != 0) die("cannot write %s", path);
    return 0;
  }
}

int main(int argc, char **argv) {
  buf core = {0}, passes = {0};
  char path[4096];
  int i, check = argc > 3 && strcmp(argv[3], "--check") == 0, bad = 0;
  if (argc < 3) {
    fprintf(stderr, "usage: amalgamate SRC_DIR OUT_DIR [--check]\n");
    return 2;
  }
  scan(argv[1], "");
  expand(&core, argv[1], "mgopt.h.in");
  expand(&passes, argv[1], "mgopt_passes.h.in");
  for (i = 0; i < nfiles; i++)
    if (!used[i]) {
      fprintf(stderr, "amalgamate: %s is not included by any template\n", files[i]);
      bad = 1;
    }
  if (bad) return 1;
  snprintf(path, sizeof path, "%s/mgopt.h", argv[2]);
  bad |= write_or_check(path, &core, check);
  snprintf(path, sizeof path, "%s/mgopt_passes.h", argv[2]);
  bad |= write_or_check(path, &passes, check);
  for (i = 0; i < nfiles; i++) free(files[i]);
  free(core.data);
  free(passes.data);
  return bad;
}
