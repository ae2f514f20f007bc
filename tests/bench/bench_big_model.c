/* tests/bench/bench_big_model.c — peak memory of the tool on models whose weights pass 2 GB.

   usage: bench_big_model [--mgopt PATH] [--weights K] [--mb M] [--small-mb S] [--keep]
          bench_big_model --driver IN.onnx OUT.onnx PIPELINE EXTERNAL_MIN

   Big model (external data): builds main(%x: fp32[n]) with K const weights of
   M MB each (default 5 x 450 MB), each added to %x (one graph output per
   weight), through the IR API; exports it and writes it with every weight in
   big.onnx.data. Then runs `mgopt big.onnx -o out.onnx -p P --external 1048576`
   for P = none and default as child processes and reports, per run, the peak
   RSS (wait4's ru_maxrss of that child), its ratio to the weight bytes and the
   wall time; checks that out.onnx and out.onnx.data exist and that each weight
   read back from out.onnx.data (streamed, by the offset/length recorded in
   out.onnx) hashes to the value computed when it was built.

   Small model (inline raw_data, default 4 x 25 MB): written without external
   data and run through `mgopt m.onnx -o out.onnx -p none`; peak RSS against
   the file size.

   --driver runs load, pipeline, export and write in this process with a
   counting allocator and prints where the bytes are: the arena after each
   step, how many const tensors still borrow their bytes (no copy), the heap
   the writer used. The bench runs it as a child on both models.

   Files go to a fresh directory under $TMPDIR (or /tmp), removed at the end
   unless --keep. Not part of `make test`: `make bench-big`. */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#define MGOPT_IMPLEMENTATION
#include "bench.h"
#include "mgopt.h"
#include "mgopt_passes.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MB ((int64_t)1 << 20)
#define MAXW 64

static int64_t file_size(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return -1;
  return (int64_t)st.st_size;
}

/* ---------------------------------------------------------------- a streaming hash (8-byte words, then the tail) */

typedef struct hasher {
  uint64_t h;
} hasher;

static void hash_init(hasher *s) { s->h = 0xcbf29ce484222325ull; }

/* n must be a multiple of 8 except for the last call on a stream. */
static void hash_add(hasher *s, const unsigned char *d, size_t n) {
  uint64_t h = s->h;
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    uint64_t w;
    memcpy(&w, d + k, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; k < n; k++) h = (h ^ d[k]) * 0x100000001b3ull;
  s->h = h;
}

/* ---------------------------------------------------------------- building the model */

typedef struct weight_info {
  char name[32];
  int64_t nbytes;
  uint64_t hash;
  int found;
} weight_info;

/* Cheap deterministic contents, distinct per weight. */
static void fill(float *w, int64_t n, int i) {
  int64_t k;
  uint32_t salt = (uint32_t)i * 7919u;
  for (k = 0; k < n; k++) w[k] = (float)(int32_t)(((uint32_t)k ^ salt) & 0xffffu) * 0.25f - 4096.0f;
}

/* Writes a model with nw weights of `bytes_each` bytes (rounded down to a
   multiple of 4) to path; external_min > 0 puts them in path.data. Fills
   info[] with names, sizes and hashes. Returns 0 on success. */
static int build_model(const char *path, int nw, int64_t bytes_each, int64_t external_min, weight_info *info,
                       size_t *arena_out) {
  static const char *const slots[2] = {"x", "y"};
  int64_t n = bytes_each / 4;
  mgopt_program *p = mgopt_program_create(NULL);
  mgopt_function *f;
  mgopt_type xt;
  mgopt_value *x;
  mgopt_onnx_model *m = NULL;
  mgopt_onnx_write_options wo;
  mgopt_diag d;
  int i;
  mgopt_diag_clear(&d);
  if (!p || !(f = mgopt_function_new(p, "main"))) goto fail;
  if (mgopt_type_make_static(p, &xt, MGOPT_DT_FP32, 1, &n) != MGOPT_OK) goto fail;
  if (!(x = mgopt_block_add_arg(f->body, "x", &xt))) goto fail;
  for (i = 0; i < nw; i++) {
    mgopt_tensor *t = mgopt_tensor_new(p, MGOPT_DT_FP32, 1, &n);
    mgopt_value *w, *vals[2];
    mgopt_op *op;
    char oname[32];
    hasher hs;
    if (!t) goto fail;
    fill((float *)t->data, n, i);
    hash_init(&hs);
    hash_add(&hs, (const unsigned char *)t->data, t->nbytes);
    snprintf(info[i].name, sizeof info[i].name, "w%d", i);
    info[i].nbytes = (int64_t)t->nbytes;
    info[i].hash = hs.h;
    info[i].found = 0;
    if (!(w = mgopt_build_const(p, f->body, NULL, info[i].name, t))) goto fail;
    vals[0] = x;
    vals[1] = w;
    snprintf(oname, sizeof oname, "y%d", i);
    op = mgopt_build_op(p, f->body, NULL, "add", oname, 2, slots, vals, 1);
    if (!op || mgopt_op_infer(p, op, &d) != MGOPT_OK) goto fail;
    if (mgopt_block_add_output(f->body, op->outs[0]) != MGOPT_OK) goto fail;
  }
  if (mgopt_program_verify(p, &d) != MGOPT_OK) goto fail;
  if (mgopt_onnx_export(p, NULL, &m, &d) != MGOPT_OK) goto fail;
  memset(&wo, 0, sizeof wo);
  wo.external_min_bytes = external_min;
  if (mgopt_onnx_write_file(m, path, &wo, &d) != MGOPT_OK) goto fail;
  if (arena_out) *arena_out = mgopt_program_arena_bytes(p);
  mgopt_program_destroy(p);
  return 0;
fail:
  fprintf(stderr, "bench_big_model: building %s failed: %s\n", path, d.msg[0] ? d.msg : "out of memory");
  mgopt_program_destroy(p);
  return 1;
}

/* ---------------------------------------------------------------- checking the output */

static int str_is(mgopt_str s, const char *c) { return s.len == strlen(c) && memcmp(s.ptr, c, s.len) == 0; }

static int64_t str_i64(mgopt_str s) {
  char tmp[32];
  size_t n = s.len < sizeof tmp - 1 ? s.len : sizeof tmp - 1;
  memcpy(tmp, s.ptr, n);
  tmp[n] = 0;
  return strtoll(tmp, NULL, 10);
}

/* Reads model_path without loading external data, then streams each external
   initializer from its side file and compares its hash with info[]. Returns
   the number of weights verified, -1 on a read error or any mismatch. */
static int verify_output(const char *model_path, const char *dir, weight_info *info, int nw) {
  mgopt_onnx_read_options ro;
  mgopt_onnx_model *m;
  mgopt_diag d;
  int64_t i, k;
  int ok = 0, bad = 0, j;
  unsigned char *buf = (unsigned char *)malloc((size_t)(4 * MB));
  memset(&ro, 0, sizeof ro);
  ro.keep_external = 1;
  mgopt_diag_clear(&d);
  if (!buf) return -1;
  if (mgopt_onnx_read_file(model_path, &ro, &m, &d) != MGOPT_OK) m = NULL;
  if (!m) {
    fprintf(stderr, "  cannot read %s: %s\n", model_path, d.msg);
    free(buf);
    return -1;
  }
  for (j = 0; j < nw; j++) info[j].found = 0;
  for (i = 0; i < m->graph->ninitializers; i++) {
    const mgopt_onnx_tensor *t = &m->graph->initializers[i];
    weight_info *w = NULL;
    char loc[512], path[1024];
    int64_t off = 0, len = -1, left;
    FILE *f;
    hasher hs;
    for (j = 0; j < nw; j++)
      if (str_is(t->name, info[j].name)) w = &info[j];
    if (!w) continue;
    if (t->data_location != MGOPT_ONNX_LOC_EXTERNAL) {
      fprintf(stderr, "  %s: weight %s is not external\n", model_path, w->name);
      bad++;
      continue;
    }
    loc[0] = 0;
    for (k = 0; k < t->nexternal_data; k++) {
      const mgopt_onnx_strstr *e = &t->external_data[k];
      if (str_is(e->key, "location") && e->value.len < sizeof loc) {
        memcpy(loc, e->value.ptr, e->value.len);
        loc[e->value.len] = 0;
      } else if (str_is(e->key, "offset")) off = str_i64(e->value);
      else if (str_is(e->key, "length")) len = str_i64(e->value);
    }
    if (len != w->nbytes || t->data_type != MGOPT_ONNX_DT_FLOAT || t->ndims != 1 || t->dims[0] * 4 != w->nbytes) {
      fprintf(stderr, "  %s: weight %s: wrong length, type or dims\n", model_path, w->name);
      bad++;
      continue;
    }
    snprintf(path, sizeof path, "%s/%s", dir, loc);
    f = fopen(path, "rb");
    if (!f || fseeko(f, (off_t)off, SEEK_SET) != 0) {
      fprintf(stderr, "  cannot open %s at %lld\n", path, (long long)off);
      if (f) fclose(f);
      bad++;
      continue;
    }
    hash_init(&hs);
    for (left = len; left > 0;) {
      size_t want = (size_t)(left < 4 * MB ? left : 4 * MB);
      if (fread(buf, 1, want, f) != want) break;
      hash_add(&hs, buf, want);
      left -= (int64_t)want;
    }
    fclose(f);
    if (left != 0 || hs.h != w->hash) {
      fprintf(stderr, "  %s: weight %s differs from the original\n", model_path, w->name);
      bad++;
      continue;
    }
    w->found = 1;
    ok++;
  }
  mgopt_program_destroy(m->program);
  free(buf);
  for (j = 0; j < nw; j++)
    if (!info[j].found) bad++;
  return bad ? -1 : ok;
}

/* ---------------------------------------------------------------- child processes */

typedef struct run_result {
  int status;     /* exit status, -1 if it did not exit normally */
  long maxrss_kb; /* peak resident set of that child */
  double seconds;
} run_result;

static run_result run_child(char *const *argv) {
  run_result r;
  struct rusage ru;
  int st = 0;
  double t0 = bench_wall();
  pid_t pid;
  memset(&r, 0, sizeof r);
  r.status = -1;
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if (pid < 0) return r;
  if (pid == 0) {
    execv(argv[0], argv);
    fprintf(stderr, "bench_big_model: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  memset(&ru, 0, sizeof ru);
  if (wait4(pid, &st, 0, &ru) != pid) return r;
  r.seconds = bench_wall() - t0;
  r.maxrss_kb = ru.ru_maxrss;
  if (WIFEXITED(st)) r.status = WEXITSTATUS(st);
  return r;
}

/* ---------------------------------------------------------------- --driver: the steps in one process */

typedef struct counting {
  size_t cur, peak;
} counting;

static void *count_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
  counting *c = (counting *)ctx;
  void *q;
  if (new_size == 0) {
    free(ptr);
    c->cur -= old_size;
    return NULL;
  }
  q = realloc(ptr, new_size);
  if (!q) return NULL;
  c->cur = c->cur - old_size + new_size;
  if (c->cur > c->peak) c->peak = c->cur;
  return q;
}

typedef struct const_census {
  int64_t consts, borrowed, owned, misaligned;
  int64_t bytes, borrowed_bytes, owned_bytes;
} const_census;

static int census_visit(mgopt_op *op, void *ud) {
  const_census *c = (const_census *)ud;
  mgopt_tensor *t;
  if (op->kind != MGOPT_OP_const || !(t = mgopt_value_const(op->outs[0]))) return 0;
  c->consts++;
  c->bytes += (int64_t)t->nbytes;
  if (t->borrowed) {
    c->borrowed++;
    c->borrowed_bytes += (int64_t)t->nbytes;
    if ((uintptr_t)t->data & 63u) c->misaligned++; /* mgopt_tensor_data would copy these */
  } else {
    c->owned++;
    c->owned_bytes += (int64_t)t->nbytes;
  }
  return 0;
}

static void census_print(const char *step, mgopt_program *p, const counting *c) {
  const_census cs;
  memset(&cs, 0, sizeof cs);
  mgopt_program_walk(p, census_visit, &cs);
  printf("  driver %-10s arena %11.1f MB  heap %11.1f MB (peak %11.1f)  consts %lld: borrowed %lld (%.1f MB), "
         "owned %lld (%.1f MB); borrowed not 64-aligned %lld\n",
         step, (double)mgopt_program_arena_bytes(p) / (double)MB, (double)c->cur / (double)MB,
         (double)c->peak / (double)MB, (long long)cs.consts, (long long)cs.borrowed,
         (double)cs.borrowed_bytes / (double)MB, (long long)cs.owned, (double)cs.owned_bytes / (double)MB,
         (long long)cs.misaligned);
}

static double self_rss_mb(void) {
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0;
}

static int driver(const char *in, const char *out, const char *pipeline, int64_t external_min) {
  counting c;
  mgopt_allocator a;
  mgopt_onnx_read_options ro;
  mgopt_onnx_write_options wo;
  mgopt_onnx_model *m, *em = NULL;
  mgopt_diag d;
  size_t before_write;
  int64_t fsz = file_size(in);
  memset(&c, 0, sizeof c);
  a.realloc = count_realloc;
  a.ctx = &c;
  memset(&ro, 0, sizeof ro);
  ro.alloc = &a;
  mgopt_diag_clear(&d);
  printf("  driver %s (%.1f MB), pipeline %s, external %lld\n", in, (double)fsz / (double)MB, pipeline,
         (long long)external_min);
  if (mgopt_onnx_read_file(in, &ro, &m, &d) != MGOPT_OK) m = NULL;
  if (!m) {
    fprintf(stderr, "driver: read: %s\n", d.msg);
    return 1;
  }
  printf("  driver %-10s arena %11.1f MB  heap %11.1f MB (peak %11.1f)  rss peak %.1f MB\n", "read_file",
         (double)mgopt_program_arena_bytes(m->program) / (double)MB, (double)c.cur / (double)MB,
         (double)c.peak / (double)MB, self_rss_mb());
  if (mgopt_onnx_import(m, &d) != MGOPT_OK) {
    fprintf(stderr, "driver: import: %s\n", d.msg);
    mgopt_program_destroy(m->program);
    return 1;
  }
  census_print("import", m->program, &c);
  if (mgopt_pipeline_run(m->program, mgopt_builtin_registry(), pipeline, NULL, &d) != MGOPT_OK) {
    fprintf(stderr, "driver: pipeline: %s\n", d.msg);
    mgopt_program_destroy(m->program);
    return 1;
  }
  census_print("pipeline", m->program, &c);
  if (mgopt_onnx_export(m->program, NULL, &em, &d) != MGOPT_OK) {
    fprintf(stderr, "driver: export: %s\n", d.msg);
    mgopt_program_destroy(m->program);
    return 1;
  }
  census_print("export", m->program, &c);
  memset(&wo, 0, sizeof wo);
  wo.external_min_bytes = external_min;
  before_write = c.cur;
  c.peak = c.cur;
  if (mgopt_onnx_write_file(em, out, &wo, &d) != MGOPT_OK) {
    fprintf(stderr, "driver: write: %s\n", d.msg);
    mgopt_program_destroy(m->program);
    return 1;
  }
  printf("  driver %-10s heap used while writing %.1f MB (out %.1f MB)  rss peak %.1f MB\n", "write_file",
         (double)(c.peak - before_write) / (double)MB, (double)file_size(out) / (double)MB, self_rss_mb());
  mgopt_program_destroy(m->program);
  if (c.cur != 0) {
    fprintf(stderr, "driver: %llu bytes not freed\n", (unsigned long long)c.cur);
    return 1;
  }
  return 0;
}

/* ---------------------------------------------------------------- main */

static void remove_files(const char *dir, const char *const *names, int n) {
  char path[1024];
  int i;
  for (i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    remove(path);
  }
}

int main(int argc, char **argv) {
  const char *tool = "build/mgopt";
  int nw = 5, keep = 0, i, failures = 0;
  int64_t mb_each = 450, small_mb = 100;
  const char *tmp = getenv("TMPDIR");
  char dir[512], big[600], small[600], outp[600], self[1024];
  weight_info info[MAXW], sinfo[4];
  int64_t total = 0, big_file, big_data, small_file;
  size_t arena = 0;
  double t0;
  static const char *const pipes[2] = {"none", "default"};
  run_result rr[2], rs;
  static const char *const files[] = {"big.onnx",     "big.onnx.data", "out.onnx", "out.onnx.data",
                                      "small.onnx",   "small_out.onnx", "drv_out.onnx", "drv_out.onnx.data"};
  if (argc >= 2 && strcmp(argv[1], "--driver") == 0) {
    if (argc != 6) {
      fprintf(stderr, "usage: bench_big_model --driver IN OUT PIPELINE EXTERNAL_MIN\n");
      return 2;
    }
    return driver(argv[2], argv[3], argv[4], strtoll(argv[5], NULL, 10));
  }
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--mgopt") == 0 && i + 1 < argc) tool = argv[++i];
    else if (strcmp(argv[i], "--weights") == 0 && i + 1 < argc) nw = atoi(argv[++i]);
    else if (strcmp(argv[i], "--mb") == 0 && i + 1 < argc) mb_each = strtoll(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--small-mb") == 0 && i + 1 < argc) small_mb = strtoll(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--keep") == 0) keep = 1;
    else {
      fprintf(stderr, "usage: bench_big_model [--mgopt PATH] [--weights K] [--mb M] [--small-mb S] [--keep]\n");
      return 2;
    }
  }
  if (nw < 1 || nw > MAXW || mb_each < 1 || small_mb < 4) {
    fprintf(stderr, "bench_big_model: --weights 1..%d, --mb >= 1, --small-mb >= 4\n", MAXW);
    return 2;
  }
  if (access(tool, X_OK) != 0) {
    fprintf(stderr, "bench_big_model: %s is not an executable (build it with make, or pass --mgopt)\n", tool);
    return 2;
  }
  if (!realpath(argv[0], self)) snprintf(self, sizeof self, "%s", argv[0]);
  snprintf(dir, sizeof dir, "%s/mgopt_bench_XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    fprintf(stderr, "bench_big_model: cannot create a directory under %s\n", tmp && tmp[0] ? tmp : "/tmp");
    return 1;
  }
  snprintf(big, sizeof big, "%s/big.onnx", dir);
  snprintf(small, sizeof small, "%s/small.onnx", dir);
  snprintf(outp, sizeof outp, "%s/out.onnx", dir);
  printf("bench_big_model: %d weights x %lld MB in %s\n", nw, (long long)mb_each, dir);

  /* ---- big model, external data */
  t0 = bench_wall();
  if (build_model(big, nw, mb_each * MB, 1024 * 1024, info, &arena)) {
    failures++;
    goto cleanup;
  }
  for (i = 0; i < nw; i++) total += info[i].nbytes;
  snprintf(outp, sizeof outp, "%s/big.onnx.data", dir);
  big_data = file_size(outp);
  big_file = file_size(big);
  printf("built big.onnx (%lld bytes) + big.onnx.data (%lld bytes) in %.1f s; synthesis arena %.1f MB\n",
         (long long)big_file, (long long)big_data, bench_wall() - t0, (double)arena / (double)MB);
  snprintf(outp, sizeof outp, "%s/out.onnx", dir);
  for (i = 0; i < 2; i++) {
    char *args[10];
    int ok;
    args[0] = (char *)tool;
    args[1] = big;
    args[2] = (char *)"-o";
    args[3] = outp;
    args[4] = (char *)"-p";
    args[5] = (char *)pipes[i];
    args[6] = (char *)"--external";
    args[7] = (char *)"1048576";
    args[8] = NULL;
    rr[i] = run_child(args);
    {
      char data[700];
      snprintf(data, sizeof data, "%s.data", outp);
      if (rr[i].status != 0) {
        fprintf(stderr, "mgopt -p %s exited with %d\n", pipes[i], rr[i].status);
        failures++;
      } else if (file_size(outp) < 0 || file_size(data) < 0) {
        fprintf(stderr, "mgopt -p %s: out.onnx or out.onnx.data missing\n", pipes[i]);
        failures++;
      } else {
        ok = verify_output(outp, dir, info, nw);
        printf("mgopt -p %-8s exit %d, out.onnx %lld bytes, out.onnx.data %lld bytes, weights verified %d/%d\n",
               pipes[i], rr[i].status, (long long)file_size(outp), (long long)file_size(data), ok < 0 ? 0 : ok, nw);
        if (ok != nw) failures++;
      }
      remove(outp);
      remove(data);
    }
  }
  {
    char *args[7];
    char drv[600], ext[32];
    snprintf(drv, sizeof drv, "%s/drv_out.onnx", dir);
    snprintf(ext, sizeof ext, "%d", 1048576);
    args[0] = self;
    args[1] = (char *)"--driver";
    args[2] = big;
    args[3] = drv;
    args[4] = (char *)"none";
    args[5] = ext;
    args[6] = NULL;
    rs = run_child(args);
    printf("  driver peak RSS %.1f MB (exit %d)\n", (double)rs.maxrss_kb / 1024.0, rs.status);
    if (rs.status != 0) failures++;
    remove(drv);
    strcat(drv, ".data");
    remove(drv);
  }
  printf("\n%-28s %14s %14s %10s %10s\n", "big model, external data", "weights MB", "peak RSS MB", "peak/wts",
         "wall s");
  for (i = 0; i < 2; i++)
    printf("mgopt -p %-19s %14.1f %14.1f %10.3f %10.2f%s\n", pipes[i], (double)total / (double)MB,
           (double)rr[i].maxrss_kb / 1024.0, (double)rr[i].maxrss_kb * 1024.0 / (double)total, rr[i].seconds,
           (double)rr[i].maxrss_kb * 1024.0 > 1.3 * (double)total ? "  over 1.3x" : "");
  remove_files(dir, files, 2);

  /* ---- small model, inline raw_data */
  {
    char *args[7];
    char sout[600], drv[600];
    int64_t stotal = 0;
    if (build_model(small, 4, small_mb * MB / 4, 0, sinfo, NULL)) {
      failures++;
      goto cleanup;
    }
    for (i = 0; i < 4; i++) stotal += sinfo[i].nbytes;
    small_file = file_size(small);
    snprintf(sout, sizeof sout, "%s/small_out.onnx", dir);
    args[0] = (char *)tool;
    args[1] = small;
    args[2] = (char *)"-o";
    args[3] = sout;
    args[4] = (char *)"-p";
    args[5] = (char *)"none";
    args[6] = NULL;
    rs = run_child(args);
    if (rs.status != 0 || file_size(sout) != small_file) {
      fprintf(stderr, "mgopt on small.onnx: exit %d, output %lld bytes (input %lld)\n", rs.status,
              (long long)file_size(sout), (long long)small_file);
      failures++;
    }
    printf("\n%-28s %14s %14s %10s %10s\n", "small model, raw_data", "file MB", "peak RSS MB", "peak/file", "wall s");
    printf("mgopt -p %-19s %14.1f %14.1f %10.3f %10.2f\n", "none", (double)small_file / (double)MB,
           (double)rs.maxrss_kb / 1024.0, (double)rs.maxrss_kb * 1024.0 / (double)small_file, rs.seconds);
    printf("  (weights %.1f MB)\n", (double)stotal / (double)MB);
    snprintf(drv, sizeof drv, "%s/drv_out.onnx", dir);
    args[0] = self;
    args[1] = (char *)"--driver";
    args[2] = small;
    args[3] = drv;
    args[4] = (char *)"none";
    args[5] = (char *)"0";
    args[6] = NULL;
    rs = run_child(args);
    printf("  driver peak RSS %.1f MB (exit %d)\n", (double)rs.maxrss_kb / 1024.0, rs.status);
    if (rs.status != 0) failures++;
  }

cleanup:
  if (!keep) {
    remove_files(dir, files, (int)(sizeof files / sizeof files[0]));
    if (rmdir(dir) != 0) fprintf(stderr, "bench_big_model: could not remove %s\n", dir);
  } else
    printf("kept %s\n", dir);
  printf("%s\n", failures ? "bench_big_model: FAILED" : "bench_big_model: ok");
  return failures ? 1 : 0;
}
