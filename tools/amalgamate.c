/* tools/amalgamate.c — builds mgopt.h and mgopt_passes.h from src/ and the templates
   src/mgopt.h.in and src/mgopt_passes.h.in.

   usage: amalgamate SRC_DIR OUT_DIR [--check]

   A template line "@include PATH" is replaced by the file SRC_DIR/PATH with its
   local includes (#include "...") removed. A template line "@passes LIST" reads
   the pass list SRC_DIR/LIST (the lines "PASS(family, name) \" of its
   "#define MGOPT__PASS_LIST(PASS)") and includes passes/<family>/<name>.c for
   each, in list order. Every other line is copied. Every .c and .h file under
   SRC_DIR must be included exactly once by the templates (a missing or unlisted
   file is an error, and so is a pass file the pass list does not name). With --check nothing is written and
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

static int is_ident(const char *s, size_t n) {
  size_t i;
  if (!n) return 0;
  for (i = 0; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_')) return 0;
  return 1;
}

static const char *skip_ws(const char *s, const char *end) {
  while (s < end && (*s == ' ' || *s == '\t')) s++;
  return s;
}

/* Parses the identifier at *p up to `stop` (spaces around it allowed). */
static int take_ident(const char **p, const char *end, char stop, char *dst, size_t cap) {
  const char *s = skip_ws(*p, end), *e = s;
  size_t n;
  while (e < end && *e != stop && *e != ' ' && *e != '\t') e++;
  n = (size_t)(e - s);
  if (!is_ident(s, n) || n >= cap) return 0;
  memcpy(dst, s, n);
  dst[n] = 0;
  e = skip_ws(e, end);
  if (e == end || *e != stop) return 0;
  *p = e + 1;
  return 1;
}

/* The pass list named by the template ("@passes LIST"), for the unlisted-file message. */
static char pass_list[1024];

/* "@passes LIST": includes passes/<family>/<name>.c for every "PASS(family, name) \"
   line of LIST's "#define MGOPT__PASS_LIST(PASS) \" block, in that order. The
   block is its continuation lines; each must be one PASS line, except the last
   (the line without a backslash), which must hold no PASS. */
static void include_passes(buf *out, const char *root, const char *list) {
  static const char head[] = "#define MGOPT__PASS_LIST(PASS)";
  char path[4096], lineno[1100];
  char *text, *p, *end;
  size_t len;
  int in_list = 0, npasses = 0, line = 0;
  if (strlen(list) >= sizeof pass_list) die("%s", "pass list path too long");
  strcpy(pass_list, list);
  snprintf(path, sizeof path, "%s/%s", root, list);
  text = read_file(path, &len);
  end = text + len;
  for (p = text; p < end;) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end, *q;
    int cont;
    line++;
    while (le > p && (le[-1] == '\r' || le[-1] == ' ' || le[-1] == '\t')) le--;
    cont = le > p && le[-1] == '\\';
    snprintf(lineno, sizeof lineno, "%s:%d", list, line);
    if (!in_list) {
      if (strncmp(p, head, sizeof head - 1) == 0) {
        if (!cont) die("%s: the pass list must continue on the next line", lineno);
        in_list = 1;
      }
    } else if (!cont) {
      for (q = p; q + 5 <= le; q++)
        if (strncmp(q, "PASS(", 5) == 0) die("%s: the last PASS line needs its backslash", lineno);
      in_list = 2;
      break;
    } else {
      char family[256], name[256], rel[1024];
      int i, found = -1;
      q = skip_ws(p, le);
      if ((size_t)(le - q) < 5 || strncmp(q, "PASS(", 5) != 0) die("%s: expected PASS(family, name) \\", lineno);
      q += 5;
      if (!take_ident(&q, le, ',', family, sizeof family) || !take_ident(&q, le, ')', name, sizeof name) ||
          skip_ws(q, le) != le - 1)
        die("%s: expected PASS(family, name) \\ with lowercase identifiers", lineno);
      snprintf(rel, sizeof rel, "passes/%s/%s.c", family, name);
      for (i = 0; i < nfiles; i++)
        if (strcmp(files[i], rel) == 0) found = i;
      if (found < 0 || used[found]) {
        char msg[3000];
        snprintf(msg, sizeof msg, "%s: PASS(%s, %s): %s %s", lineno, family, name,
                 found < 0 ? "no file" : "listed twice:", rel);
        die("%s", msg);
      }
      include_file(out, root, rel);
      npasses++;
    }
    p = nl ? nl + 1 : end;
  }
  if (in_list != 2 || !npasses) die("%s: no complete \"#define MGOPT__PASS_LIST(PASS)\" block", list);
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
    } else if (n > 8 && strncmp(p, "@passes ", 8) == 0) {
      char rel[1024];
      size_t rl = n - 8;
      if (rl >= sizeof rel) die("%s", "pass list path too long");
      memcpy(rel, p + 8, rl);
      rel[rl] = 0;
      while (rl && (rel[rl - 1] == ' ' || rel[rl - 1] == '\r')) rel[--rl] = 0;
      include_passes(out, root, rel);
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
      /* passes/<family>/<name>.c: a pass file */
      const char *fam = strncmp(files[i], "passes/", 7) == 0 ? files[i] + 7 : NULL;
      if (fam && strchr(fam, '/') && pass_list[0])
        fprintf(stderr, "amalgamate: %s is a pass file that the pass list %s does not name\n", files[i],
                pass_list);
      else
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
