/* tools/mgopt.c — the command-line tool: read a model (.onnx or .mil), run a pipeline, write it (.onnx or .mil). */
#if defined(__linux__)
#define _GNU_SOURCE /* copy_file_range */
#else
#define _POSIX_C_SOURCE 200809L /* clock_gettime, mmap, mkstemp */
#endif
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>
#include <errno.h>
#include <signal.h>

#include "keep_memory.h" /* freed memory stays for the next job (--repeat, test) */

/* Fast file I/O where the OS has it: the input is mapped rather than read, so
   the weights are never copied into memory, and the output's large tensors,
   which the writer hands over as pointers into that mapping, go from the input
   file to the output file inside the kernel (copy_file_range). Elsewhere, and
   whenever a call fails, plain stdio does the same job. */
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#define TOOL_POSIX 1
#if defined(__linux__) && defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 27))
#define TOOL_COPY_FILE_RANGE 1
#endif
#endif

static const char usage[] =
    "usage: mgopt IN -o OUT [-p PIPELINE] [--stats] [--timing] [--verify-each] [--strict] [--print-after-all]\n"
    "       IN and OUT are .onnx or .mil files, in any mix\n"
    "       mgopt test DIR... [-p PIPELINE] [--no-onnx-eval]\n"
    "       runs ONNX conformance folders (model.onnx, test_data_set_N/input_K.pb, output_K.pb;\n"
    "       a folder of such folders is searched): reads, runs the pipeline (default 'none'),\n"
    "       evaluates each data set and compares with the stored outputs; ops left opaque\n"
    "       are evaluated by mgopt_onnx_eval_op unless --no-onnx-eval is given\n"
    "       mgopt --list-passes\n"
    "       mgopt --print-interface IN [--constant-inputs]\n"
    "       prints main's inputs and outputs: name, dtype, dims, one a line\n"
    "       mgopt --version\n"
    "\n"
    "  -p PIPELINE        passes to run, e.g. 'const_elimination{skip_const_by_size=1000},dead_code_elimination'\n"
    "                     or a named pipeline; 'none' only reads and writes (default: 'default')\n"
    "  --stats            print op counts before and after, node count, parameter bytes, model size\n"
    "                     and time per pass\n"
    "  --external N       write initializers of at least N bytes to OUT.data (ONNX output)\n"
    "  --keep-constant-nodes  consts that were Constant nodes stay nodes (ONNX output)\n"
    "  --constant-inputs  initializers that are also graph inputs (overridable defaults) are\n"
    "                     constants that passes fold (default: they stay inputs)\n"
    "  --timing           print wall time, rewrites and op counts per pass (stderr)\n"
    "  --repeat N         do the whole job N times in this process and print the median wall\n"
    "                     time (stderr): the figure to compare with in-process optimizers\n"
    "  --verify-each      run the verifier after every pass\n"
    "  --strict           a failing pass stops the run (default: it is skipped with a warning)\n"
    "  --print-after-all  print the program after every pass (stderr)\n"
    "  --compress-config FILE  per-weight options of the compression passes (linear_quantize_weights,\n"
    "                     ...): lines 'global|op_type TYPE|op_name NAME OPTIONS|skip' under [PASS]\n";

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int read_all_errno; /* errno of read_all's last failure, 0 if unknown */

static char *read_all(const char *path, size_t *len) {
  FILE *f;
  char *buf = NULL;
  size_t cap = 0, n = 0;
  errno = 0;
  f = fopen(path, "rb");
  read_all_errno = errno;
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
    read_all_errno = errno;
    free(buf);
    fclose(f);
    return NULL;
  }
  fclose(f);
  buf[n] = 0;
  *len = n;
  return buf;
}

/* ---- .onnx input: mapped when possible */
typedef struct infile {
  const unsigned char *data; /* the mapping, NULL when not mapped */
  size_t len;
  int fd;
  void *map;
} infile;

/* Maps path read-only; 0 (nothing held) when the OS cannot or the file is not
   a regular non-empty file: the caller then reads the file instead. The output
   may be the same file: it is written to a temporary renamed over it, and the
   mapping keeps the old file alive until it is closed. */
static int infile_map(infile *f, const char *path) {
  f->data = NULL;
  f->map = NULL;
  f->len = 0;
  f->fd = -1;
#ifdef TOOL_POSIX
  {
    struct stat st;
    void *map;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (unsigned long long)st.st_size > (unsigned long long)((size_t)-1 / 2)) {
      close(fd);
      return 0;
    }
    map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      close(fd);
      return 0;
    }
    f->map = map;
    f->data = (const unsigned char *)map;
    f->len = (size_t)st.st_size;
    f->fd = fd;
    return 1;
  }
#else
  (void)path;
  return 0;
#endif
}

static void infile_close(infile *f) {
#ifdef TOOL_POSIX
  if (f->map) munmap(f->map, f->len);
  if (f->fd >= 0) close(f->fd);
#endif
  f->data = NULL;
  f->map = NULL;
  f->fd = -1;
}

static int cmp_ptr(const void *a, const void *b) {
  const void *x = *(const void *const *)a, *y = *(const void *const *)b;
  return x < y ? -1 : x > y;
}

/* How many initializers of the main graph are also its inputs, from IR
   version 4 on (before, every initializer is one, and a constant); names of
   a tree the reader built share a pointer. -1 when memory runs out. */
static long long input_defaults(const mgopt_onnx_model *m) {
  const mgopt_onnx_graph *g = m->graph;
  const char **names;
  long long n = 0;
  int64_t i;
  if (!g || !g->ninitializers || !g->ninputs || (m->ir_version > 0 && m->ir_version < 4)) return 0;
  names = (const char **)malloc(sizeof *names * (size_t)g->ninitializers);
  if (!names) return -1;
  for (i = 0; i < g->ninitializers; i++) names[i] = g->initializers[i].name.ptr;
  qsort(names, (size_t)g->ninitializers, sizeof *names, cmp_ptr);
  for (i = 0; i < g->ninputs; i++) {
    const char *k = g->inputs[i].name.ptr;
    n += k && bsearch(&k, names, (size_t)g->ninitializers, sizeof *names, cmp_ptr) != NULL;
  }
  free(names);
  return n;
}

/* Reads and imports a mapped .onnx file (ro: the read options); external
   data is read relative to its directory. *ndefaults: input_defaults. */
static mgopt_status load_mapped(const infile *f, const char *path, const mgopt_onnx_read_options *ro,
                                mgopt_program **out, long long *ndefaults, mgopt_diag *d) {
  mgopt_onnx_model *m = NULL;
  mgopt_status s = mgopt_onnx_read(f->data, f->len, ro, &m, d);
  const char *slash = strrchr(path, '/');
  char *dir;
  size_t dl = slash ? (size_t)(slash - path) + (slash == path) : 0;
  if (s != MGOPT_OK) return s;
  dir = (char *)malloc(dl + 1);
  if (!dir) {
    mgopt_program_destroy(m->program);
    return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  }
  memcpy(dir, path, dl);
  dir[dl] = 0;
  *ndefaults = input_defaults(m);
  if ((s = mgopt_onnx_load_external(m, dir, d)) != MGOPT_OK || (s = mgopt_onnx_import(m, d)) != MGOPT_OK) {
    free(dir);
    mgopt_program_destroy(m->program);
    return s;
  }
  free(dir);
  *out = m->program;
  return MGOPT_OK;
}

/* ---- .onnx output: the writer's pieces, buffered, and large ones straight through */
#ifdef TOOL_POSIX
typedef struct outfile {
  int fd, failed, no_copy_range;
  int err; /* errno of the first failed write */
  const infile *in;
  unsigned long long written; /* bytes handed to the file so far */
  size_t n;
  unsigned char buf[1 << 16];
} outfile;

static int out_raw(outfile *o, const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  while (n > 0) {
    ssize_t w = write(o->fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (!o->err) o->err = w < 0 ? errno : EIO;
      return 0;
    }
    p += w;
    n -= (size_t)w;
    o->written += (unsigned long long)w;
  }
  return 1;
}

static int out_flush(outfile *o) {
  int ok = out_raw(o, o->buf, o->n);
  o->n = 0;
  return ok;
}

static mgopt_status out_sink(void *ctx, const void *data, size_t n) {
  outfile *o = (outfile *)ctx;
  const unsigned char *p = (const unsigned char *)data;
  if (o->failed) return MGOPT_ERR_IO;
  if (n <= sizeof o->buf - o->n) {
    memcpy(o->buf + o->n, p, n);
    o->n += n;
    return MGOPT_OK;
  }
  if (!out_flush(o)) goto fail;
#ifdef TOOL_COPY_FILE_RANGE
  /* bytes of the mapped input: let the kernel copy them file to file */
  if (!o->no_copy_range && o->in->data && p >= o->in->data && n <= o->in->len &&
      (size_t)(p - o->in->data) <= o->in->len - n) {
    loff_t off = (loff_t)(p - o->in->data);
    while (n > 0) {
      ssize_t c = copy_file_range(o->in->fd, &off, o->fd, NULL, n, 0);
      if (c < 0 && errno == EINTR) continue;
      if (c <= 0) { /* not on this file system, or nothing copied: write the rest */
        o->no_copy_range = 1;
        break;
      }
      p += c;
      n -= (size_t)c;
      o->written += (unsigned long long)c;
    }
    if (n == 0) return MGOPT_OK;
  }
#endif
  if (n < sizeof o->buf) {
    memcpy(o->buf, p, n);
    o->n = n;
    return MGOPT_OK;
  }
  if (out_raw(o, p, n)) return MGOPT_OK;
fail:
  o->failed = 1;
  return MGOPT_ERR_IO;
}

/* ---- safe output: every file is written to a temporary in the target's
   directory, flushed (to the device when it overwrites the input), and renamed over the target only when all
   of it is written; on failure the temporary is removed and the target (and
   an existing .data file) stays as it was. A replaced file keeps its mode; a
   new one gets the umask's. Devices and pipes (-o /dev/null) are written as
   they are. */
typedef struct outtmp {
  const char *path;
  char *tmp; /* NULL when writing the target directly */
  int fd;
  int replacing; /* the target is the input file itself: synced before the rename */
} outtmp;

/* The input being read, for outtmp_open: writing over it in place is the
   one write whose loss in a crash right after the rename would cost the
   user's data, so only that one is fsync'ed; a new file, or an earlier
   output made from an input that is still there, is not (as cp, sed -i). */
static struct stat outtmp_input;
static int outtmp_input_known;

/* The temporary being written, removed if SIGINT, SIGTERM or SIGHUP ends the tool. */
static char *volatile outtmp_live;

static void outtmp_on_signal(int sig) {
  char *t = outtmp_live;
  if (t) unlink(t);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Opens a temporary ".NAME.XXXXXX" next to t->path; -1 with errno set on failure. */
static int outtmp_open(outtmp *t, const char *path) {
  struct stat st;
  size_t n = strlen(path), dl = n;
  int have = stat(path, &st) == 0;
  t->path = path;
  t->tmp = NULL;
  t->fd = -1;
  t->replacing = have && S_ISREG(st.st_mode) && outtmp_input_known && st.st_dev == outtmp_input.st_dev &&
                 st.st_ino == outtmp_input.st_ino;
  if (have && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    t->fd = open(path, O_WRONLY);
    return t->fd;
  }
  while (dl > 0 && path[dl - 1] != '/') dl--;
  t->tmp = (char *)malloc(n + 10);
  if (!t->tmp) {
    errno = ENOMEM;
    return -1;
  }
  sprintf(t->tmp, "%.*s.%s.XXXXXX", (int)dl, path, path + dl);
  t->fd = mkstemp(t->tmp);
  if (t->fd >= 0) outtmp_live = t->tmp;
  if (t->fd < 0) {
    int e = errno;
    free(t->tmp);
    t->tmp = NULL;
    errno = e;
    return -1;
  }
  /* mkstemp makes 0600: the mode of the file replaced, or what the umask gives a new one */
  if (have && S_ISREG(st.st_mode)) (void)fchmod(t->fd, st.st_mode & 07777);
  else {
    mode_t um = umask(0);
    umask(um);
    (void)fchmod(t->fd, 0666 & ~um);
  }
  return t->fd;
}

/* Syncs and closes; renames the temporary over the target when ok, removes it
   otherwise. 0 with errno set when anything fails. */
static int outtmp_close(outtmp *t, int ok) {
  int e = 0;
  if (t->fd >= 0) {
    if (ok && t->tmp && t->replacing && fsync(t->fd) != 0) e = errno;
    if (close(t->fd) != 0 && !e) e = errno;
    t->fd = -1;
  }
  if (ok && !e && t->tmp && rename(t->tmp, t->path) != 0) e = errno;
  if (t->tmp && (!ok || e)) unlink(t->tmp);
  outtmp_live = NULL;
  free(t->tmp);
  t->tmp = NULL;
  if (!ok || e) {
    errno = e;
    return 0;
  }
  return 1;
}

/* Writes m to path through out_sink; 0 with d set on failure. */
static int write_onnx_fast(const mgopt_onnx_model *m, const char *path, const infile *in, mgopt_diag *d) {
  outfile *o = (outfile *)malloc(sizeof *o);
  outtmp t;
  mgopt_status st;
  if (!o) {
    mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
    return 0;
  }
  memset(o, 0, sizeof *o);
  o->in = in;
  o->fd = outtmp_open(&t, path);
  if (o->fd < 0) {
    free(o);
    mgopt_diag_set(d, MGOPT_ERR_IO, "cannot open %s for writing: %s", path, strerror(errno));
    return 0;
  }
  st = mgopt_onnx_write_stream(m, NULL, out_sink, o, NULL, NULL, d);
  if (st == MGOPT_OK && !out_flush(o)) o->failed = 1;
  if (st == MGOPT_OK && !o->failed) {
    if (!outtmp_close(&t, 1)) st = mgopt_diag_set(d, MGOPT_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  } else {
    outtmp_close(&t, 0);
    if (o->failed) st = mgopt_diag_set(d, MGOPT_ERR_IO, "cannot write %s: %s", path, strerror(o->err ? o->err : EIO));
  }
  free(o);
  return st == MGOPT_OK;
}
#endif

/* Writes len bytes to path (through a temporary where POSIX); 0 with errno set on failure. */
static int write_all(const char *path, const char *data, size_t len) {
#ifdef TOOL_POSIX
  outtmp t;
  size_t done = 0;
  if (outtmp_open(&t, path) < 0) return 0;
  while (done < len) {
    ssize_t w = write(t.fd, data + done, len - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int e = w < 0 ? errno : EIO;
      outtmp_close(&t, 0);
      errno = e;
      return 0;
    }
    done += (size_t)w;
  }
  return outtmp_close(&t, 1);
#else
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  if (fwrite(data, 1, len, f) != len) {
    fclose(f);
    return 0;
  }
  return fclose(f) == 0;
#endif
}

typedef struct tool_opts {
  int timing, print_after_all, stats, strict;
  int constant_inputs; /* --constant-inputs */
  mgopt_pass_report reps[256];
  int nrep;
  const mgopt_compress_config *compress; /* --compress-config, or NULL */
} tool_opts;

/* ---- --compress-config FILE: per-weight options of the compression passes

   One rule a line; '#' starts a comment; blank lines are skipped.
     [PASS]                     the rules below configure pass PASS
                                (before any section: every compression pass)
     global OPTIONS             every weight
     op_type TYPE OPTIONS       weights read by ops of type TYPE (conv, linear, matmul, ...)
     op_name NAME OPTIONS       the const named NAME, or weights read by the op named NAME
   OPTIONS are the pass's options as in a pipeline string (name=value,
   separated by commas or spaces), or `skip`. NAME may be written in double
   quotes. See mgopt_compress_config in mgopt_passes.h for how a weight's
   rule is chosen. */
typedef struct tool_ccfg {
  mgopt_compress_config cfg;
  mgopt_compress_rule *rules;
  char *text; /* the file, cut into NUL-terminated words in place */
} tool_ccfg;

static int ccfg_fail(const char *path, int line, const char *why) {
  fprintf(stderr, "mgopt: %s:%d: %s\n", path, line, why);
  return 0;
}

/* Cuts the next word (or "quoted word") off *pp; NULL at the end of the line. */
static char *ccfg_word(char **pp) {
  char *p = *pp, *w;
  while (*p == ' ' || *p == '\t') p++;
  if (!*p) return NULL;
  if (*p == '"') {
    w = ++p;
    while (*p && *p != '"') p++;
  } else {
    w = p;
    while (*p && *p != ' ' && *p != '\t') p++;
  }
  if (*p) *p++ = 0;
  *pp = p;
  return w;
}

/* Checks a rule's options against pass's declared options (names, types,
   allowed values) through the pipeline parser, as "PASS{OPTIONS}" with the
   blanks that separate options turned into commas; col is the options'
   column in the line. 0 with a message "path:line:col: ..." when bad. */
static int ccfg_check(const char *path, int line, const char *pass, const char *opts, int col) {
  size_t pl = strlen(pass), ol = strlen(opts), i, j;
  char *buf = (char *)malloc(pl + ol + 3);
  int inq = 0, ok;
  mgopt_diag d;
  if (!buf) return ccfg_fail(path, line, "out of memory");
  memcpy(buf, pass, pl);
  buf[pl] = '{';
  memcpy(buf + pl + 1, opts, ol + 1);
  for (i = pl + 1; buf[i]; i++) {
    if (buf[i] == '"') inq = !inq;
    if (inq || (buf[i] != ' ' && buf[i] != '\t')) continue;
    for (j = i; buf[j] == ' ' || buf[j] == '\t'; j++) {
    }
    if (buf[i - 1] != ',' && buf[i - 1] != '=' && buf[i - 1] != '{' && buf[j] && buf[j] != ',' && buf[j] != '=')
      buf[j - 1] = ',';
    i = j - 1;
  }
  strcat(buf, "}");
  ok = mgopt_pipeline_check(mgopt_builtin_registry(), buf, &d) == MGOPT_OK;
  if (!ok) {
    if (d.col > (int)pl + 1) fprintf(stderr, "mgopt: %s:%d:%d: %s\n", path, line, col + d.col - (int)pl - 2, d.msg);
    else fprintf(stderr, "mgopt: %s:%d: %s\n", path, line, d.msg);
  }
  free(buf);
  return ok;
}

static int ccfg_read(const char *path, tool_ccfg *c) {
  size_t len = 0;
  char *p, *pass = NULL;
  int line = 0, cap = 0;
  memset(c, 0, sizeof *c);
  c->text = read_all(path, &len);
  if (!c->text) {
    fprintf(stderr, "mgopt: cannot read %s: %s\n", path, read_all_errno ? strerror(read_all_errno) : "I/O error");
    return 0;
  }
  for (p = c->text; *p;) {
    char *nl = strchr(p, '\n'), *hash, *w, *key = NULL, *ls = p;
    int32_t scope;
    mgopt_compress_rule *r;
    line++;
    if (nl) *nl = 0;
    if ((hash = strchr(p, '#')) != NULL) *hash = 0;
    w = ccfg_word(&p);
    if (!w) goto next;
    if (w[0] == '[') {
      char *e = strchr(w, ']');
      if (!e || e[1]) return ccfg_fail(path, line, "a section is [PASS]");
      *e = 0;
      pass = w + 1;
      goto next;
    }
    if (strcmp(w, "global") == 0) scope = MGOPT_COMPRESS_GLOBAL;
    else if (strcmp(w, "op_type") == 0) scope = MGOPT_COMPRESS_OP_TYPE;
    else if (strcmp(w, "op_name") == 0) scope = MGOPT_COMPRESS_OP_NAME;
    else return ccfg_fail(path, line, "a rule starts with global, op_type or op_name");
    if (scope != MGOPT_COMPRESS_GLOBAL && !(key = ccfg_word(&p))) return ccfg_fail(path, line, "missing the op type or name");
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) return ccfg_fail(path, line, "missing the options (or skip)");
    if (c->cfg.nrules == cap) {
      mgopt_compress_rule *nr;
      cap = cap ? cap * 2 : 16;
      nr = (mgopt_compress_rule *)realloc(c->rules, sizeof *nr * (size_t)cap);
      if (!nr) return ccfg_fail(path, line, "out of memory");
      c->rules = nr;
    }
    r = &c->rules[c->cfg.nrules++];
    r->pass = pass;
    r->scope = scope;
    r->key = key;
    r->options = p;
    {
      char *e = p + strlen(p);
      while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) *--e = 0;
    }
    if (pass && strcmp(p, "skip") != 0 && !ccfg_check(path, line, pass, p, (int)(p - ls) + 1)) return 0;
  next:
    if (!nl) break;
    p = nl + 1;
  }
  c->cfg.rules = c->rules;
  return 1;
}

/* ---- --stats: op histogram, node count, parameter bytes */
typedef struct op_stats {
  const char *types[512];
  long counts[512];
  int ntypes;
  long nodes;
  long long param_bytes;
  long consts;
} op_stats;

static int stats_visit(mgopt_op *op, void *ud) {
  op_stats *st = (op_stats *)ud;
  int i;
  if (op->kind == MGOPT_OP_const) {
    mgopt_tensor *t = mgopt_value_const(op->outs[0]);
    st->consts++;
    if (t) st->param_bytes += (long long)t->nbytes;
    return 0;
  }
  st->nodes++;
  for (i = 0; i < st->ntypes; i++)
    if (st->types[i] == op->type) {
      st->counts[i]++;
      return 0;
    }
  if (st->ntypes < 512) {
    st->types[st->ntypes] = op->type;
    st->counts[st->ntypes++] = 1;
  }
  return 0;
}

static void stats_collect(mgopt_program *p, op_stats *st) {
  memset(st, 0, sizeof *st);
  mgopt_program_walk(p, stats_visit, st);
}

static long stats_count(const op_stats *st, const char *type) {
  int i;
  for (i = 0; i < st->ntypes; i++)
    if (strcmp(st->types[i], type) == 0) return st->counts[i];
  return 0;
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static void stats_print(const op_stats *a, const op_stats *b, long in_size, long out_size, const tool_opts *o) {
  const char *all[1024];
  int n = 0, i, j;
  for (i = 0; i < a->ntypes; i++) all[n++] = a->types[i];
  for (i = 0; i < b->ntypes; i++) {
    int seen = 0;
    for (j = 0; j < a->ntypes; j++)
      if (strcmp(a->types[j], b->types[i]) == 0) seen = 1;
    if (!seen && n < 1024) all[n++] = b->types[i];
  }
  qsort(all, (size_t)n, sizeof all[0], cmp_cstr);
  printf("%-36s %12s %12s\n", "", "before", "after");
  for (i = 0; i < n; i++) {
    long x = stats_count(a, all[i]), y = stats_count(b, all[i]);
    printf("%-36s %12ld %12ld%s\n", all[i], x, y, x != y ? "  *" : "");
  }
  printf("%-36s %12ld %12ld\n", "nodes", a->nodes, b->nodes);
  printf("%-36s %12ld %12ld\n", "constants", a->consts, b->consts);
  printf("%-36s %12lld %12lld\n", "parameter bytes", a->param_bytes, b->param_bytes);
  printf("%-36s %12ld %12ld\n", "model size (bytes)", in_size, out_size);
  for (i = 0; i < o->nrep && i < 256; i++)
    printf("  pass %-54s %9.3f ms  rewrites %lld\n", o->reps[i].name, o->reps[i].seconds * 1e3,
           (long long)o->reps[i].rewrites);
}

static void after_pass(mgopt_program *p, const mgopt_pass_report *r, void *ud) {
  tool_opts *o = (tool_opts *)ud;
  if (r->status != MGOPT_OK)
    fprintf(stderr, "mgopt: warning: %s failed and was skipped: %s\n", r->name,
            r->diag && r->diag->msg[0] ? r->diag->msg : mgopt_status_str(r->status));
  if (o->nrep < 256) o->reps[o->nrep++] = *r;
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

/* "[1,seqlen]": a shape for a message (unknown dims '?', no shape "[*]"). */
static void fmt_shape(char *buf, size_t cap, const mgopt_type *t) {
  size_t n = 0;
  int32_t i;
  if (t->rank < 0) {
    snprintf(buf, cap, "[*]");
    return;
  }
  n += (size_t)snprintf(buf + n, cap - n, "[");
  for (i = 0; i < t->rank && n < cap; i++) {
    const mgopt_dim *d = &t->dims[i];
    if (d->v >= 0) n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "", (long long)d->v);
    else n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? "," : "", d->sym ? d->sym : "?");
  }
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

/* Warns about the outputs whose declared shape the graph contradicts (the
   ONNX writer keeps the declaration). */
static void warn_output_conflicts(mgopt_program *p) {
  mgopt_onnx_output_conflict c[16];
  int64_t n = mgopt_onnx_output_conflicts(p, c, 16), i;
  char a[256], b[256];
  for (i = 0; i < n && i < 16; i++) {
    fmt_shape(a, sizeof a, &c[i].declared);
    fmt_shape(b, sizeof b, &c[i].computed);
    fprintf(stderr, "mgopt: warning: output '%s' is declared %s %s but the graph computes %s; the declaration is kept\n",
            c[i].name, mgopt_dtype_name((mgopt_dtype)c[i].declared.dtype), a, b);
  }
  if (n > 16) fprintf(stderr, "mgopt: warning: %lld more outputs whose declared shape the graph contradicts\n", (long long)(n - 16));
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

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median_of(const double *sorted, int n) {
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

/* ---- an output larger than its input: the warning names the constants
   folded from ops that take the most bytes (a fold's constant keeps the
   name of the op's output, so the op is found by that name) */
typedef struct grow_ref {
  const char *name; /* interned: equal names are equal pointers */
  const char *type;
} grow_ref;

typedef struct grow_map {
  grow_ref *refs;
  size_t n, cap;
  int oom;
} grow_map;

static int grow_collect(mgopt_op *op, void *ud) {
  grow_map *g = (grow_map *)ud;
  int32_t i;
  if (op->kind == MGOPT_OP_const) return 0;
  for (i = 0; i < op->nouts && !g->oom; i++) {
    if (!op->outs[i]->name) continue;
    if (g->n == g->cap) {
      size_t c = g->cap ? g->cap * 2 : 256;
      grow_ref *r = (grow_ref *)realloc(g->refs, c * sizeof *r);
      if (!r) {
        g->oom = 1;
        break;
      }
      g->refs = r;
      g->cap = c;
    }
    g->refs[g->n].name = op->outs[i]->name;
    g->refs[g->n++].type = op->type;
  }
  return 0;
}

static int grow_cmp(const void *a, const void *b) {
  const char *x = ((const grow_ref *)a)->name, *y = ((const grow_ref *)b)->name;
  return x < y ? -1 : x > y;
}

typedef struct grow_top {
  const grow_map *g;
  const char *name[3], *type[3];
  long long bytes[3];
} grow_top;

static int grow_rank(mgopt_op *op, void *ud) {
  grow_top *t = (grow_top *)ud;
  const mgopt_tensor *c = op->kind == MGOPT_OP_const ? mgopt_value_const(op->outs[0]) : NULL;
  grow_ref key, *hit;
  int k, j;
  if (!c || !op->outs[0]->name) return 0;
  key.name = op->outs[0]->name;
  hit = (grow_ref *)bsearch(&key, t->g->refs, t->g->n, sizeof key, grow_cmp);
  if (!hit) return 0;
  for (k = 0; k < 3 && t->name[k] && t->bytes[k] >= (long long)c->nbytes; k++) {
  }
  if (k == 3) return 0;
  for (j = 2; j > k; j--) {
    t->name[j] = t->name[j - 1];
    t->type[j] = t->type[j - 1];
    t->bytes[j] = t->bytes[j - 1];
  }
  t->name[k] = hit->name;
  t->type[k] = hit->type;
  t->bytes[k] = (long long)c->nbytes;
  return 0;
}

static long file_size(const char *path) {
  FILE *f = fopen(path, "rb");
  long n = -1;
  if (f) {
    if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    fclose(f);
  }
  return n;
}

static void grow_warn(mgopt_program *p, grow_map *g, const char *in, const char *out, long in_size, long out_size) {
  grow_top t;
  int k;
  memset(&t, 0, sizeof t);
  t.g = g;
  if (!g->oom) {
    qsort(g->refs, g->n, sizeof *g->refs, grow_cmp);
    mgopt_program_walk(p, grow_rank, &t);
  }
  fprintf(stderr, "mgopt: warning: %s is %ld bytes larger than %s (", out, out_size - in_size, in);
  if (!t.name[0]) fprintf(stderr, "no constant folded from an op explains it");
  for (k = 0; k < 3 && t.name[k]; k++)
    fprintf(stderr, "%s%s %s folded to %lld bytes", k ? ", " : "largest folds: ", t.type[k], t.name[k], t.bytes[k]);
  fprintf(stderr, ")\n");
}

/* One whole job: read IN, run the pipeline, write OUT. 0 on success; prints
   its own diagnostics. The --stats table is printed when `report` is set.
   phase[] receives the seconds spent reading (and importing), in the
   pipeline, and exporting and writing. */
static int run_once(const char *in, const char *out, const char *pipeline, int verify_each,
                    int keep_constant_nodes, long long external, tool_opts *to, int report, double phase[3]) {
  const mgopt_registry *reg = mgopt_builtin_registry();
  op_stats before, after;
  long in_size = 0, out_size = 0;
  mgopt_program *p = NULL;
  mgopt_diag d;
  char *text = NULL;
  size_t len = 0;
  int rc = 1;
  infile inmap;
  grow_map grow;
  long in_file = file_size(in); /* before OUT, which may be IN, is written */
#ifdef TOOL_POSIX
  outtmp_input_known = stat(in, &outtmp_input) == 0;
#endif
  memset(&grow, 0, sizeof grow);
  memset(&inmap, 0, sizeof inmap);
  inmap.fd = -1;
  double t0 = now_seconds(), t1 = t0, t2 = t0;
  mgopt_diag_clear(&d);
  if (ends_with(in, ".onnx")) {
    mgopt_onnx_read_options ro;
    mgopt_onnx_model *m = NULL;
    long long ndefaults = 0;
    mgopt_status s;
    memset(&ro, 0, sizeof ro);
    ro.constant_inputs = to->constant_inputs;
    if (infile_map(&inmap, in)) s = load_mapped(&inmap, in, &ro, &p, &ndefaults, &d);
    else if ((s = mgopt_onnx_read_file(in, &ro, &m, &d)) == MGOPT_OK) {
      ndefaults = input_defaults(m);
      if ((s = mgopt_onnx_import(m, &d)) != MGOPT_OK) mgopt_program_destroy(m->program);
      else p = m->program;
    }
    if (s == MGOPT_OK && ndefaults > 0 && report)
      fprintf(stderr,
              to->constant_inputs ? "mgopt: note: %lld initializers are also graph inputs (overridable); "
                                    "--constant-inputs folds them as constants\n"
                                  : "mgopt: note: %lld initializers are also graph inputs (overridable); they stay "
                                    "inputs; --constant-inputs folds them\n",
              ndefaults);
    if (s != MGOPT_OK) {
      if (s == MGOPT_ERR_IO) fprintf(stderr, "mgopt: %s\n", d.msg); /* the message names the path */
      else if (d.offset >= 0 && strncmp(d.msg, "not an ONNX model (byte ", 24) != 0)
        fprintf(stderr, "%s: byte %lld: %s\n", in, (long long)d.offset, d.msg);
      else fprintf(stderr, "%s: %s%s%s\n", in, d.op[0] ? d.op : "", d.op[0] ? ": " : "", d.msg);
      goto done;
    }
    if (to->stats && report) {
      FILE *f = fopen(in, "rb");
      if (f) {
        fseek(f, 0, SEEK_END);
        in_size = ftell(f);
        fclose(f);
      }
    }
  } else {
    text = read_all(in, &len);
    if (!text) {
      fprintf(stderr, "mgopt: cannot read %s: %s\n", in, read_all_errno ? strerror(read_all_errno) : "I/O error");
      return 1;
    }
    in_size = (long)len;
    if (mgopt_mil_parse(text, len, NULL, &p, &d) != MGOPT_OK) {
      fprintf(stderr, "%s:%d:%d: %s\n", in, d.line, d.col, d.msg);
      goto done;
    }
  }
  if (mgopt_program_verify(p, &d) != MGOPT_OK) {
    if (d.line > 0) fprintf(stderr, "%s:%d:%d: invalid program: %s\n", in, d.line, d.col, d.msg);
    else fprintf(stderr, "%s: invalid program: %s\n", in, d.msg);
    goto done;
  }
  t1 = now_seconds();
  /* the output's writer is the target: fusions build only ops it can hold
     (an ONNX model's own opset was set when it was imported) */
  if (!ends_with(out, ".onnx")) mgopt_program_set_target(p, NULL, NULL);
  else if (!ends_with(in, ".onnx") && mgopt_onnx_set_target(p, 0) != MGOPT_OK) {
    fprintf(stderr, "mgopt: out of memory\n");
    goto done;
  }
  {
    mgopt_pipeline_options ro;
    memset(&ro, 0, sizeof ro);
    ro.verify_each = verify_each;
    ro.strict = to->strict;
    ro.after_pass = after_pass;
    ro.after_pass_ud = to;
    ro.clock = now_seconds;
    ro.compress_config = to->compress;
    if (to->timing) fprintf(stderr, "mgopt: %s, %lld ops\n", in, (long long)mgopt_program_op_count(p));
    if (to->stats && report) stats_collect(p, &before);
    if (report && ends_with(in, ".onnx") == ends_with(out, ".onnx") && !external) mgopt_program_walk(p, grow_collect, &grow);
    if (mgopt_pipeline_run(p, reg, pipeline, &ro, &d) != MGOPT_OK) {
      if (d.line > 0) fprintf(stderr, "%s:%d:%d: %s\n", in, d.line, d.col, d.msg);
      else fprintf(stderr, "mgopt: %s%s%s\n", d.op[0] ? d.op : "", d.op[0] ? ": " : "", d.msg);
      goto done;
    }
  }
  if (to->stats && report) stats_collect(p, &after);
  t2 = now_seconds();
  if (ends_with(out, ".onnx")) {
    mgopt_onnx_export_options eo;
    mgopt_onnx_write_options wo;
    mgopt_onnx_model *m = NULL;
    memset(&eo, 0, sizeof eo);
    memset(&wo, 0, sizeof wo);
    eo.keep_constant_nodes = keep_constant_nodes;
    wo.external_min_bytes = external;
    if (mgopt_onnx_export(p, &eo, &m, &d) != MGOPT_OK) {
      fprintf(stderr, "mgopt: cannot write ONNX: %s%s%s\n", d.op[0] ? d.op : "", d.op[0] ? ": " : "", d.msg);
      goto done;
    }
    if (report) warn_output_conflicts(p);
#ifdef TOOL_POSIX
    if (!external ? !write_onnx_fast(m, out, &inmap, &d) : mgopt_onnx_write_file(m, out, &wo, &d) != MGOPT_OK) {
#else
    if (mgopt_onnx_write_file(m, out, &wo, &d) != MGOPT_OK) {
#endif
      fprintf(stderr, "mgopt: %s\n", d.msg);
      goto done;
    }
    if (to->stats && report) {
      FILE *f = fopen(out, "rb");
      if (f) {
        fseek(f, 0, SEEK_END);
        out_size = ftell(f);
        fclose(f);
      }
    }
  } else {
    mgopt_buf b;
    memset(&b, 0, sizeof b);
    if (mgopt_mil_print(p, NULL, &b) != MGOPT_OK || b.oom) {
      fprintf(stderr, "mgopt: cannot print the program\n");
      mgopt_buf_free(&b);
      goto done;
    }
    errno = 0;
    if (!write_all(out, b.data ? b.data : "", b.len)) {
      fprintf(stderr, "mgopt: cannot write %s: %s\n", out, errno ? strerror(errno) : "I/O error");
      mgopt_buf_free(&b);
      goto done;
    }
    out_size = (long)b.len;
    mgopt_buf_free(&b);
  }
  if (to->stats && report) stats_print(&before, &after, in_size, out_size, to);
  if (report && ends_with(in, ".onnx") == ends_with(out, ".onnx") && !external && in_file > 0 &&
      file_size(out) > in_file)
    grow_warn(p, &grow, in, out, in_file, file_size(out));
  phase[0] = t1 - t0;
  phase[1] = t2 - t1;
  phase[2] = now_seconds() - t2;
  rc = 0;
done:
  mgopt_program_destroy(p);
  infile_close(&inmap);
  free(text);
  free(grow.refs);
  return rc;
}

/* ---------------------------------------------------------------- mgopt test: ONNX conformance folders */

#ifdef TOOL_POSIX
typedef struct conf_run {
  const char *pipeline;
  int onnx_eval; /* opaque ONNX ops go to mgopt_onnx_eval_op */
  long passed, failed, skipped;
} conf_run;

/* A bare TensorProto decoded by the ONNX reader itself: it is wrapped as the
   only initializer (and output) of a graph, read and imported, so its data
   is decoded exactly as a model's weights are. The name field is appended
   last (protobuf: the last value of a singular field wins) so that an unnamed
   tensor still has one. *tp holds the program that owns *out. */
static int conf_read_tensor(const char *path, mgopt_program **tp, mgopt_tensor **out, char *why, size_t nwhy) {
  static const char name[] = "conf_tensor";
  size_t len = 0, tlen, glen, n = 0;
  char *raw = read_all(path, &len);
  unsigned char *buf, *q;
  mgopt_diag d;
  mgopt_function *f;
  mgopt_tensor *t;
  int ok = 0;
  if (!raw) {
    snprintf(why, nwhy, "cannot read %s", path);
    return 0;
  }
  buf = (unsigned char *)malloc(len + 96);
  if (!buf) {
    free(raw);
    snprintf(why, nwhy, "out of memory");
    return 0;
  }
  tlen = len + 2 + (sizeof name - 1);
  /* GraphProto: initializer (5) = tensor, output (12) = {name (1)} */
  glen = 1 + 10 + tlen + 2 + 2 + (sizeof name - 1);
  q = buf;
#define CONF_VARINT(v)                                 \
  do {                                                 \
    size_t v_ = (v);                                   \
    while (v_ >= 0x80) { *q++ = (unsigned char)(v_ | 0x80); v_ >>= 7; } \
    *q++ = (unsigned char)v_;                          \
  } while (0)
  *q++ = 0x08; *q++ = 8;                               /* ir_version 8 */
  *q++ = 0x42; *q++ = 2; *q++ = 0x10; *q++ = 13;        /* opset_import { version 13 } */
  {
    unsigned char g[16], *gq = g;
    size_t v = tlen, glen2;
    while (v >= 0x80) { *gq++ = (unsigned char)(v | 0x80); v >>= 7; }
    *gq++ = (unsigned char)v;
    glen2 = 1 + (size_t)(gq - g) + tlen + 2 + 2 + (sizeof name - 1);
    (void)glen;
    *q++ = 0x3a;
    CONF_VARINT(glen2);
    *q++ = 0x2a;
    memcpy(q, g, (size_t)(gq - g));
    q += gq - g;
    memcpy(q, raw, len);
    q += len;
    *q++ = 0x42; *q++ = (unsigned char)(sizeof name - 1);   /* TensorProto.name */
    memcpy(q, name, sizeof name - 1);
    q += sizeof name - 1;
    *q++ = 0x62; *q++ = (unsigned char)(2 + sizeof name - 1); /* output { name } */
    *q++ = 0x0a; *q++ = (unsigned char)(sizeof name - 1);
    memcpy(q, name, sizeof name - 1);
    q += sizeof name - 1;
  }
#undef CONF_VARINT
  n = (size_t)(q - buf);
  free(raw);
  *tp = NULL;
  if (mgopt_onnx_load(buf, n, NULL, tp, &d) != MGOPT_OK) {
    snprintf(why, nwhy, "%s: %s", path, d.msg);
  } else if ((f = mgopt_program_function_at(*tp, 0)) == NULL || f->body->nouts != 1 ||
             (t = mgopt_value_const(f->body->outs[0]->value)) == NULL) {
    snprintf(why, nwhy, "%s: not a tensor", path);
  } else {
    /* the program borrows buf: keep both alive together by copying the tensor out */
    mgopt_tensor *c = mgopt_tensor_clone(*tp, t);
    if (!c) snprintf(why, nwhy, "out of memory");
    else {
      *out = c;
      ok = 1;
    }
  }
  free(buf);
  if (!ok) {
    mgopt_program_destroy(*tp);
    *tp = NULL;
  }
  return ok;
}

static int conf_is_float(mgopt_dtype dt) {
  return dt == MGOPT_DT_FP16 || dt == MGOPT_DT_BF16 || dt == MGOPT_DT_FP32 || dt == MGOPT_DT_FP64;
}

/* 1 if got matches ref: dtype, shape, then |ref - got| <= 1e-5 + 1e-3 |ref| for
   floats (NaN matches NaN, infinities match exactly), exact otherwise. */
static int conf_compare(const mgopt_tensor *ref, const mgopt_tensor *got, char *why, size_t nwhy) {
  int32_t i;
  int64_t k;
  if (ref->dtype != got->dtype) {
    snprintf(why, nwhy, "dtype %s, expected %s", mgopt_dtype_name((mgopt_dtype)got->dtype),
             mgopt_dtype_name((mgopt_dtype)ref->dtype));
    return 0;
  }
  if (ref->rank != got->rank) {
    snprintf(why, nwhy, "rank %d, expected %d", (int)got->rank, (int)ref->rank);
    return 0;
  }
  for (i = 0; i < ref->rank; i++)
    if (ref->shape[i] != got->shape[i]) {
      snprintf(why, nwhy, "dim %d is %lld, expected %lld", (int)i, (long long)got->shape[i],
               (long long)ref->shape[i]);
      return 0;
    }
  if (ref->dtype == MGOPT_DT_STRING) {
    const mgopt_str *a = (const mgopt_str *)ref->data, *b = (const mgopt_str *)got->data;
    for (k = 0; k < ref->numel; k++)
      if (a[k].len != b[k].len || (a[k].len && memcmp(a[k].ptr, b[k].ptr, a[k].len) != 0)) {
        snprintf(why, nwhy, "element %lld: strings differ", (long long)k);
        return 0;
      }
    return 1;
  }
  if (!conf_is_float((mgopt_dtype)ref->dtype)) {
    if (ref->nbytes != got->nbytes || (ref->nbytes && memcmp(ref->data, got->data, ref->nbytes) != 0)) {
      for (k = 0; k < ref->numel; k++)
        if (mgopt_tensor_get_i64(ref, k) != mgopt_tensor_get_i64(got, k)) break;
      snprintf(why, nwhy, "element %lld: got %lld, expected %lld", (long long)k,
               (long long)(k < ref->numel ? mgopt_tensor_get_i64(got, k) : 0),
               (long long)(k < ref->numel ? mgopt_tensor_get_i64(ref, k) : 0));
      return 0;
    }
    return 1;
  }
  for (k = 0; k < ref->numel; k++) {
    double r = mgopt_tensor_get_f64(ref, k), g = mgopt_tensor_get_f64(got, k);
    int ok;
    if (r != r || g != g) ok = (r != r) && (g != g);
    else if (r - r != 0.0 || g - g != 0.0) ok = r == g; /* an infinity */
    else ok = fabs(r - g) <= 1e-5 + 1e-3 * fabs(r);
    if (!ok) {
      snprintf(why, nwhy, "element %lld: got %.9g, expected %.9g", (long long)k, g, r);
      return 0;
    }
  }
  return 1;
}

static int cmp_cstr_ptr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The names in dir that start with prefix, sorted (free with list_free). */
static char **conf_list(const char *dir, const char *prefix, int *n) {
  DIR *dp = opendir(dir);
  struct dirent *e;
  char **v = NULL;
  int cap = 0;
  *n = 0;
  if (!dp) return NULL;
  while ((e = readdir(dp)) != NULL) {
    if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)) != 0) continue;
    if (*n == cap) {
      char **nv = (char **)realloc(v, sizeof(char *) * (size_t)(cap = cap ? 2 * cap : 16));
      if (!nv) break;
      v = nv;
    }
    v[*n] = (char *)malloc(strlen(e->d_name) + 1);
    if (!v[*n]) break;
    strcpy(v[*n], e->d_name);
    (*n)++;
  }
  closedir(dp);
  if (v) qsort(v, (size_t)*n, sizeof(char *), cmp_cstr_ptr);
  return v;
}

static void conf_list_free(char **v, int n) {
  int i;
  for (i = 0; i < n; i++) free(v[i]);
  free(v);
}

static int conf_is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int conf_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

typedef struct conf_kinds {
  mgopt_program *p;
  int onnx_eval;
  const char *names[8];
  int n, more;
} conf_kinds;

/* Collects the op types mgopt_eval has no kernel for (nor mgopt_onnx_eval_op, when used). */
static int conf_kind_visit(mgopt_op *op, void *ud) {
  conf_kinds *k = (conf_kinds *)ud;
  int i;
  if (mgopt_eval_has_kernel(op->kind) || (k->onnx_eval && mgopt_onnx_eval_covers(k->p, op))) return 0;
  for (i = 0; i < k->n; i++)
    if (strcmp(k->names[i], op->type) == 0) return 0;
  if (k->n < 8) k->names[k->n++] = op->type;
  else k->more = 1;
  return 0;
}

/* ONNX's test data holds bfloat16 tensors as their uint16 bits: such a
   tensor where bf16 is expected is read as bf16. */
static void conf_bf16_bits(mgopt_tensor *t, uint8_t expected) {
  if (t->dtype == MGOPT_DT_UINT16 && expected == MGOPT_DT_BF16) t->dtype = MGOPT_DT_BF16;
}

/* 1 when t has the dtype, rank and static dims of a tensor type. */
static int conf_fits(const mgopt_tensor *t, const mgopt_type *ty) {
  int32_t i;
  if (ty->kind != MGOPT_TYPE_TENSOR || (ty->dtype != MGOPT_DT_UNKNOWN && ty->dtype != t->dtype)) return 0;
  if (ty->rank < 0) return 1;
  if (ty->rank != t->rank) return 0;
  for (i = 0; i < t->rank && ty->dims; i++)
    if (mgopt_dim_is_static(ty->dims[i]) && ty->dims[i].v != t->shape[i]) return 0;
  return 1;
}

/* One data set: 1 passed, 0 failed, -1 skipped: an input that contradicts
   the model, or an opaque ONNX op that mgopt_onnx_eval_op does not cover
   with these operands (why set). */
static int conf_data_set(mgopt_program *p, const char *dir, int onnx_eval, char *why, size_t nwhy) {
  mgopt_function *f = mgopt_program_function(p, "main");
  const mgopt_block *body;
  mgopt_tensor **in = NULL, **out = NULL;
  mgopt_program **keep = NULL;
  char path[4200];
  int32_t nin, nout, i, nkeep = 0;
  int ok = 0;
  mgopt_diag d;
  mgopt_eval_options eo;
  memset(&eo, 0, sizeof eo);
  if (onnx_eval) eo.op_fn = mgopt_onnx_eval_op;
  if (!f && mgopt_program_function_count(p) == 1) f = mgopt_program_function_at(p, 0);
  if (!f) {
    snprintf(why, nwhy, "no main function");
    return 0;
  }
  body = f->body;
  nin = body->nargs;
  nout = body->nouts;
  in = (mgopt_tensor **)calloc((size_t)nin + 1, sizeof *in);
  out = (mgopt_tensor **)calloc((size_t)nout + 1, sizeof *out);
  keep = (mgopt_program **)calloc((size_t)(nin + nout) + 1, sizeof *keep);
  if (!in || !out || !keep) {
    snprintf(why, nwhy, "out of memory");
    goto done;
  }
  for (i = 0; i < nin; i++) {
    mgopt_tensor *t;
    snprintf(path, sizeof path, "%s/input_%d.pb", dir, (int)i);
    if (!conf_read_tensor(path, &keep[nkeep], &t, why, nwhy)) goto done;
    nkeep++;
    conf_bf16_bits(t, body->args[i]->type.dtype);
    if (!conf_fits(t, &body->args[i]->type)) {
      /* a few of ONNX's data sets contradict their model (castlike_*_BFLOAT16_*: a 1-element 'like') */
      snprintf(why, nwhy, "input %d ('%s') does not fit the model's declared type", (int)i,
               body->args[i]->name ? body->args[i]->name : "");
      ok = -1;
      goto done;
    }
    in[i] = mgopt_eval_tensor_new(p, (mgopt_dtype)t->dtype, t->rank, t->shape);
    if (!in[i]) {
      snprintf(why, nwhy, "out of memory");
      goto done;
    }
    if (t->nbytes) memcpy(in[i]->data, t->data, t->nbytes);
  }
  snprintf(path, sizeof path, "%s/input_%d.pb", dir, (int)nin);
  if (conf_exists(path)) {
    snprintf(why, nwhy, "the data set has more inputs than the model's %d", (int)nin);
    goto done;
  }
  if (mgopt_eval(p, NULL, in, nin, out, nout, &eo, &d) != MGOPT_OK) {
    if (d.line > 0) snprintf(why, nwhy, "%d:%d: %s", d.line, d.col, d.msg);
    else snprintf(why, nwhy, "%s", d.msg);
    memset(out, 0, sizeof *out * (size_t)nout);
    /* mgopt_onnx_eval_op's way of saying an op is not covered */
    if (d.status == MGOPT_ERR_UNSUPPORTED && strstr(d.msg, "cannot evaluate onnx::")) ok = -1;
    goto done;
  }
  for (i = 0; i < nout; i++) {
    mgopt_tensor *ref;
    char w[256];
    snprintf(path, sizeof path, "%s/output_%d.pb", dir, (int)i);
    if (!conf_read_tensor(path, &keep[nkeep], &ref, why, nwhy)) goto done;
    nkeep++;
    conf_bf16_bits(ref, out[i]->dtype);
    if (!conf_compare(ref, out[i], w, sizeof w)) {
      const char *nm = body->outs[i] && body->outs[i]->value->name ? body->outs[i]->value->name : "";
      snprintf(why, nwhy, "output %d ('%s'): %s", (int)i, nm, w);
      goto done;
    }
  }
  ok = 1;
done:
  for (i = 0; in && i < nin; i++) mgopt_eval_tensor_free(p, in[i]);
  for (i = 0; out && i < nout; i++) mgopt_eval_tensor_free(p, out[i]);
  for (i = 0; keep && i < nkeep; i++) mgopt_program_destroy(keep[i]);
  free(in);
  free(out);
  free(keep);
  return ok;
}

/* One conformance folder: prints its line and counts it. */
static void conf_test(conf_run *R, const char *dir, const char *name) {
  const mgopt_registry *reg = mgopt_builtin_registry();
  char path[4096], why[1024];
  mgopt_program *p = NULL;
  mgopt_onnx_read_options rdo;
  mgopt_diag d;
  mgopt_function *f;
  char **sets;
  int nsets = 0, i, skip = 0, fail = 0;
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  why[0] = 0;
  /* ONNX's test data feeds the inputs that have no initializer, in order:
     an initializer that is also an input keeps its default, as a constant */
  memset(&rdo, 0, sizeof rdo);
  rdo.constant_inputs = 1;
  if (mgopt_onnx_load_file(path, &rdo, &p, &d) != MGOPT_OK) {
    snprintf(why, sizeof why, "cannot read the model: %s%s%s", d.op[0] ? d.op : "", d.op[0] ? ": " : "", d.msg);
    if (d.status == MGOPT_ERR_UNSUPPORTED) skip = 1;
    else fail = 1;
    goto report;
  }
  f = mgopt_program_function(p, "main");
  if (!f && mgopt_program_function_count(p) == 1) f = mgopt_program_function_at(p, 0);
  for (i = 0; f && i < f->body->nargs; i++)
    if (f->body->args[i]->type.kind != MGOPT_TYPE_TENSOR) {
      snprintf(why, sizeof why, "input '%s' is not a tensor (sequence/map/optional)",
               f->body->args[i]->name ? f->body->args[i]->name : "");
      skip = 1;
      goto report;
    }
  for (i = 0; f && i < f->body->nouts; i++)
    if (f->body->outs[i]->value->type.kind != MGOPT_TYPE_TENSOR) {
      snprintf(why, sizeof why, "output %d is not a tensor (sequence/map/optional)", (int)i);
      skip = 1;
      goto report;
    }
  {
    mgopt_pipeline_options ro;
    memset(&ro, 0, sizeof ro);
    if (mgopt_pipeline_run(p, reg, R->pipeline, &ro, &d) != MGOPT_OK) {
      snprintf(why, sizeof why, "pipeline: %s%s%s", d.op[0] ? d.op : "", d.op[0] ? ": " : "", d.msg);
      fail = 1;
      goto report;
    }
  }
  {
    conf_kinds k;
    memset(&k, 0, sizeof k);
    k.p = p;
    k.onnx_eval = R->onnx_eval;
    mgopt_program_walk(p, conf_kind_visit, &k);
    if (k.n) {
      size_t at = (size_t)snprintf(why, sizeof why, "no kernel for");
      for (i = 0; i < k.n && at < sizeof why; i++)
        at += (size_t)snprintf(why + at, sizeof why - at, "%s %s", i ? "," : "", k.names[i]);
      if (k.more && at < sizeof why) snprintf(why + at, sizeof why - at, ", ...");
      skip = 1;
      goto report;
    }
  }
  sets = conf_list(dir, "test_data_set_", &nsets);
  if (!nsets) {
    snprintf(why, sizeof why, "no test_data_set_* folder");
    fail = 1;
  }
  for (i = 0; i < nsets && !fail && !skip; i++) {
    char w[900];
    int r;
    snprintf(path, sizeof path, "%s/%s", dir, sets[i]);
    if ((r = conf_data_set(p, path, R->onnx_eval, w, sizeof w)) <= 0) {
      snprintf(why, sizeof why, "%s: %s", sets[i], w);
      if (r < 0) skip = 1;
      else fail = 1;
    }
  }
  conf_list_free(sets, nsets);
report:
  if (skip) {
    printf("SKIP %s: %s\n", name, why);
    R->skipped++;
  } else if (fail) {
    printf("FAIL %s: %s\n", name, why);
    R->failed++;
  } else {
    printf("PASS %s\n", name);
    R->passed++;
  }
  fflush(stdout);
  mgopt_program_destroy(p);
}

/* A conformance folder, or a folder of them (searched depth first, sorted). */
static void conf_walk(conf_run *R, const char *dir, int depth) {
  char path[4096];
  char **names;
  int n = 0, i;
  const char *base = strrchr(dir, '/');
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  if (conf_exists(path)) {
    conf_test(R, dir, base && base[1] ? base + 1 : dir);
    return;
  }
  if (depth > 16) return;
  names = conf_list(dir, "", &n);
  for (i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    if (conf_is_dir(path)) conf_walk(R, path, depth + 1);
  }
  conf_list_free(names, n);
}
#endif

static int test_main(int argc, char **argv) {
  const char *pipeline = "none";
  int i, ndirs = 0, onnx_eval = 1;
  mgopt_diag d;
  for (i = 2; i < argc; i++) {
    if (strcmp(argv[i], "-p") == 0 && i + 1 < argc) pipeline = argv[++i];
    else if (strcmp(argv[i], "--no-onnx-eval") == 0) onnx_eval = 0;
    else if (argv[i][0] == '-') {
      fprintf(stderr, "mgopt: unknown or incomplete option '%s'\n%s", argv[i], usage);
      return 2;
    } else ndirs++;
  }
  if (!ndirs) {
    fprintf(stderr, "mgopt: test: no folder given\n%s", usage);
    return 2;
  }
  if (mgopt_pipeline_check(mgopt_builtin_registry(), pipeline, &d) != MGOPT_OK) {
    fprintf(stderr, "mgopt: pipeline '%s': column %d: %s\n", pipeline, d.col, d.msg);
    return 2;
  }
#ifdef TOOL_POSIX
  {
    conf_run R;
    memset(&R, 0, sizeof R);
    R.pipeline = pipeline;
    R.onnx_eval = onnx_eval;
    for (i = 2; i < argc; i++) {
      if (strcmp(argv[i], "-p") == 0) {
        i++;
        continue;
      }
      if (strcmp(argv[i], "--no-onnx-eval") == 0) continue;
      if (!conf_is_dir(argv[i])) {
        fprintf(stderr, "mgopt: test: '%s' is not a folder\n", argv[i]);
        return 2;
      }
      conf_walk(&R, argv[i], 0);
    }
    printf("test: %ld passed, %ld failed, %ld skipped\n", R.passed, R.failed, R.skipped);
    return R.failed ? 1 : 0;
  }
#else
  (void)onnx_eval;
  fprintf(stderr, "mgopt: test: listing folders needs a POSIX system\n");
  return 2;
#endif
}

/* ---- --print-interface: main's inputs and outputs, one a line:
   "input NAME DTYPE [DIMS]" / "output NAME DTYPE [DIMS]", a symbolic dim by
   its name, an unknown one as ?, an unknown rank as [*] */
static void print_value(const char *what, const mgopt_value *v) {
  const mgopt_type *t = &v->type;
  int32_t k;
  printf("%s %s ", what, v->name ? v->name : "");
  if (t->kind != MGOPT_TYPE_TENSOR) {
    printf("%s\n", t->kind == MGOPT_TYPE_STATE ? "state" : "other");
    return;
  }
  printf("%s [", mgopt_dtype_name((mgopt_dtype)t->dtype));
  if (t->rank < 0) printf("*");
  for (k = 0; k < t->rank; k++) {
    if (k) printf(", ");
    if (t->dims[k].sym) printf("%s", t->dims[k].sym);
    else if (t->dims[k].v >= 0) printf("%lld", (long long)t->dims[k].v);
    else printf("?");
  }
  printf("]\n");
}

static int print_interface(const char *in, int constant_inputs) {
  mgopt_program *p = NULL;
  mgopt_function *f;
  mgopt_diag d;
  int32_t i;
  mgopt_diag_clear(&d);
  if (ends_with(in, ".onnx")) {
    mgopt_onnx_read_options ro;
    memset(&ro, 0, sizeof ro);
    ro.constant_inputs = constant_inputs;
    if (mgopt_onnx_load_file(in, &ro, &p, &d) != MGOPT_OK) {
      fprintf(stderr, "%s: %s\n", in, d.msg);
      return 1;
    }
  } else {
    size_t len = 0;
    char *text = read_all(in, &len);
    if (!text) {
      fprintf(stderr, "mgopt: cannot read '%s'\n", in);
      return 1;
    }
    if (mgopt_mil_parse(text, len, NULL, &p, &d) != MGOPT_OK) {
      fprintf(stderr, "%s:%d:%d: %s\n", in, d.line, d.col, d.msg);
      free(text);
      return 1;
    }
    free(text);
  }
  f = mgopt_program_function(p, "main");
  for (i = 0; f && i < f->body->nargs; i++) print_value("input", f->body->args[i]);
  for (i = 0; f && i < f->body->nouts; i++) print_value("output", f->body->outs[i]->value);
  mgopt_program_destroy(p);
  return f ? 0 : 1;
}

static int tool_main(int argc, char **argv, tool_ccfg *ccfg) {
  const char *in = NULL, *out = NULL, *pipeline = "default";
  int verify_each = 0, i, rc = 1, keep_constant_nodes = 0, repeat = 1, print_iface = 0;
  long long external = 0;
  tool_opts to;
  const mgopt_registry *reg = mgopt_builtin_registry();
  mgopt_diag d;
  memset(&to, 0, sizeof to);
  mgopt_diag_clear(&d);
  if (argc > 1 && strcmp(argv[1], "test") == 0) return test_main(argc, argv);
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-o") == 0 && i + 1 < argc) out = argv[++i];
    else if (strcmp(a, "-p") == 0 && i + 1 < argc) pipeline = argv[++i];
    else if (strcmp(a, "--timing") == 0) to.timing = 1;
    else if (strcmp(a, "--stats") == 0) to.stats = 1;
    else if (strcmp(a, "--keep-constant-nodes") == 0) keep_constant_nodes = 1;
    else if (strcmp(a, "--external") == 0 && i + 1 < argc) {
      char *end;
      external = strtoll(argv[++i], &end, 10);
      if (*end || external <= 0) {
        fprintf(stderr, "mgopt: --external needs a positive byte count\n");
        return 2;
      }
    }
    else if (strcmp(a, "--repeat") == 0 && i + 1 < argc) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > 100000) {
        fprintf(stderr, "mgopt: --repeat needs a count from 1 to 100000\n");
        return 2;
      }
      repeat = (int)v;
    }
    else if (strcmp(a, "--compress-config") == 0 && i + 1 < argc) {
      if (to.compress) {
        fprintf(stderr, "mgopt: --compress-config given twice\n");
        return 2;
      }
      if (!ccfg_read(argv[++i], ccfg)) return 2;
      to.compress = &ccfg->cfg;
    }
    else if (strcmp(a, "--verify-each") == 0) verify_each = 1;
    else if (strcmp(a, "--strict") == 0) to.strict = 1;
    else if (strcmp(a, "--constant-inputs") == 0) to.constant_inputs = 1;
    else if (strcmp(a, "--print-interface") == 0) print_iface = 1;
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
  if (print_iface && in) return print_interface(in, to.constant_inputs);
  if (!in || !out) {
    fprintf(stderr, "mgopt: %s\n%s", !in ? "no input file" : "no output file (-o)", usage);
    return 2;
  }
  if (mgopt_pipeline_check(reg, pipeline, &d) != MGOPT_OK) {
    fprintf(stderr, "mgopt: pipeline '%s': column %d: %s\n", pipeline, d.col, d.msg);
    return 2;
  }
  if (!(ends_with(in, ".mil") || ends_with(in, ".onnx")) || !(ends_with(out, ".mil") || ends_with(out, ".onnx"))) {
    fprintf(stderr, "mgopt: files must end in .onnx or .mil ('%s', '%s')\n", in, out);
    return 2;
  }
  {
    /* times[r], then the three phases of every run */
    double *times = (double *)malloc(sizeof(double) * 4 * (size_t)repeat), *ph[3];
    int r, k;
    if (!times) {
      fprintf(stderr, "mgopt: out of memory\n");
      return 1;
    }
    for (k = 0; k < 3; k++) ph[k] = times + (size_t)(k + 1) * (size_t)repeat;
    for (r = 0; r < repeat; r++) {
      double t0 = now_seconds(), phase[3];
      to.nrep = 0;
      rc = run_once(in, out, pipeline, verify_each, keep_constant_nodes, external, &to, r == repeat - 1, phase);
      times[r] = now_seconds() - t0;
      if (rc) {
        free(times);
        return rc;
      }
      for (k = 0; k < 3; k++) ph[k][r] = phase[k];
    }
    if (repeat > 1) {
      qsort(times, (size_t)repeat, sizeof times[0], cmp_double);
      for (k = 0; k < 3; k++) qsort(ph[k], (size_t)repeat, sizeof ph[k][0], cmp_double);
      fprintf(stderr,
              "mgopt: %d runs in this process: median %.6f s, min %.6f s, max %.6f s"
              " (medians: read %.6f s, passes %.6f s, write %.6f s)\n",
              repeat, median_of(times, repeat), times[0], times[repeat - 1], median_of(ph[0], repeat),
              median_of(ph[1], repeat), median_of(ph[2], repeat));
    }
    free(times);
  }
  return 0;
}

int main(int argc, char **argv) {
  tool_ccfg ccfg;
  int rc;
  memset(&ccfg, 0, sizeof ccfg);
  mgopt_keep_freed_memory();
#ifdef SIGXFSZ
  /* past a file-size limit a write fails with EFBIG and is reported, instead
     of the signal killing the tool with a temporary left behind */
  signal(SIGXFSZ, SIG_IGN);
#endif
#ifdef TOOL_POSIX
  signal(SIGINT, outtmp_on_signal);
  signal(SIGTERM, outtmp_on_signal);
  signal(SIGHUP, outtmp_on_signal);
#endif
  rc = tool_main(argc, argv, &ccfg);
  free(ccfg.rules);
  free(ccfg.text);
  return rc;
}
