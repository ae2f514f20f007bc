/* src/onnx/io.c — ONNX files: read_file / write_file and external tensor data (compiled out by MGOPT_NO_STDIO). */
#include "model.h"

/* A location from an external_data entry or an option must stay inside the
   model's directory: relative, no ".." component, no drive, no NUL. */
MGOPT__PRIVATE int mgopt__onnx_location_ok(const char *s, size_t n) {
  size_t i, start = 0;
  if (n == 0 || memchr(s, 0, n)) return 0;
  if (s[0] == '/' || s[0] == '\\') return 0;
  if (n >= 2 && s[1] == ':') return 0;
  for (i = 0; i <= n; i++) {
    if (i == n || s[i] == '/' || s[i] == '\\') {
      if (i - start == 2 && s[start] == '.' && s[start + 1] == '.') return 0;
      start = i + 1;
    }
  }
  return 1;
}

/* Parses a decimal unsigned value (an external_data offset or length). */
MGOPT__PRIVATE int mgopt__onnx_parse_u63(const char *s, size_t n, int64_t *out) {
  int64_t v = 0;
  size_t i;
  if (n == 0 || n > 19) return 0;
  for (i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return 0;
    if (v > (INT64_MAX - (s[i] - '0')) / 10) return 0;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return 1;
}

#ifndef MGOPT_NO_STDIO
#include <errno.h> /* a failed open, read or write is reported with strerror */
#include <time.h>  /* time(): a seed for temporary file names */

/* Writes go to a temporary file that then replaces the target. With POSIX
   (the translation unit asked for it: _POSIX_C_SOURCE, _GNU_SOURCE, ... or
   the platform's default) the temporary is created with O_EXCL, takes an
   existing target's mode, and is fsync'ed before the rename when it
   replaces a file (a new file is not: nothing that existed is at risk); with C99 stdio
   alone the name is probed with fopen and the data only fflush'ed. */
#if !defined(MGOPT_NO_POSIX) && (defined(__unix__) || defined(__APPLE__)) &&                              \
    (defined(_POSIX_C_SOURCE) || defined(_XOPEN_SOURCE) || defined(_DEFAULT_SOURCE) || defined(_GNU_SOURCE) || \
     defined(_BSD_SOURCE) || defined(__APPLE__))
#define MGOPT__ONNX_POSIX_IO 1
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

/* Seeks to an absolute 64-bit offset with calls fseek can take (long may be 32 bits). */
static int mgopt__onnx_seek(FILE *f, int64_t off) {
#if defined(_WIN32)
  return _fseeki64(f, off, SEEK_SET) == 0;
#else
  if (fseek(f, 0, SEEK_SET) != 0) return 0;
  while (off > 0) {
    long step = off > (int64_t)LONG_MAX ? LONG_MAX : (long)off;
    if (fseek(f, step, SEEK_CUR) != 0) return 0;
    off -= step;
  }
  return 1;
#endif
}

/* Size of an open file, -1 if unknown. */
static int64_t mgopt__onnx_fsize(FILE *f) {
#if defined(_WIN32)
  if (_fseeki64(f, 0, SEEK_END) != 0) return -1;
  return (int64_t)_ftelli64(f);
#else
  long n;
  if (fseek(f, 0, SEEK_END) != 0) return -1;
  n = ftell(f);
  return n < 0 ? -1 : (int64_t)n;
#endif
}

/* dir + "/" + name, interned (dir "" or NULL = name alone). */
static const char *mgopt__onnx_join(mgopt_program *p, const char *dir, const char *name, size_t nlen) {
  size_t dl = dir ? strlen(dir) : 0, cap;
  char *tmp;
  const char *r;
  if (dl > SIZE_MAX - nlen - 2) return NULL;
  cap = dl + nlen + 2;
  tmp = (char *)mgopt__heap_realloc(&p->alloc, NULL, 0, cap);
  if (!tmp) return NULL;
  if (dl) memcpy(tmp, dir, dl);
  if (dl && dir[dl - 1] != '/' && dir[dl - 1] != '\\') tmp[dl++] = '/';
  memcpy(tmp + dl, name, nlen);
  r = mgopt_program_intern(p, tmp, dl + nlen);
  mgopt__heap_free(&p->alloc, tmp, cap);
  return r;
}

typedef struct mgopt__onnx_loader {
  mgopt_onnx_model *m;
  const char *dir;
  mgopt_diag *d;
  mgopt_status st;
  FILE *f;           /* the last file opened, kept for the next tensor */
  const char *fpath; /* interned path of f */
  int64_t fsize;
} mgopt__onnx_loader;

static int mgopt__onnx_load_fail(mgopt__onnx_loader *L, const mgopt_onnx_tensor *t, mgopt_status s,
                                 const char *what) {
  L->d->offset = -1;
  L->st = mgopt_diag_set(L->d, s, "tensor '%.*s': external data: %s", (int)(t->name.len > 80 ? 80 : t->name.len),
                         t->name.ptr ? t->name.ptr : "", what);
  return 1;
}

static int mgopt__onnx_load_one(void *ctx, int mid, void *obj, int parent, uint32_t field) {
  mgopt__onnx_loader *L = (mgopt__onnx_loader *)ctx;
  mgopt_onnx_tensor *t = (mgopt_onnx_tensor *)obj;
  mgopt_program *p = L->m->program;
  const mgopt_str *loc = NULL;
  int64_t offset = 0, length = -1, nb, k;
  const char *path;
  void *data;
  MGOPT__UNUSED(parent);
  MGOPT__UNUSED(field);
  if (mid != MGOPT__OM_TENSOR || t->data_location != MGOPT_ONNX_LOC_EXTERNAL) return 0;
  for (k = 0; k < t->nexternal_data; k++) {
    const mgopt_onnx_strstr *e = &t->external_data[k];
    if (e->key.len == 8 && memcmp(e->key.ptr, "location", 8) == 0) loc = &e->value;
    else if (e->key.len == 6 && memcmp(e->key.ptr, "offset", 6) == 0) {
      if (!mgopt__onnx_parse_u63(e->value.ptr, e->value.len, &offset))
        return mgopt__onnx_load_fail(L, t, MGOPT_ERR_CORRUPT, "bad offset");
    } else if (e->key.len == 6 && memcmp(e->key.ptr, "length", 6) == 0) {
      if (!mgopt__onnx_parse_u63(e->value.ptr, e->value.len, &length))
        return mgopt__onnx_load_fail(L, t, MGOPT_ERR_CORRUPT, "bad length");
    }
  }
  if (!loc) return mgopt__onnx_load_fail(L, t, MGOPT_ERR_CORRUPT, "no location");
  if (!mgopt__onnx_location_ok(loc->ptr, loc->len))
    return mgopt__onnx_load_fail(L, t, MGOPT_ERR_CORRUPT,
                                 "location must be a relative path without '..'");
  nb = mgopt_onnx_raw_nbytes(t->data_type, t->numel);
  if (nb < 0) return mgopt__onnx_load_fail(L, t, MGOPT_ERR_UNSUPPORTED, "data type cannot be stored externally");
  if (length >= 0 && length != nb)
    return mgopt__onnx_load_fail(L, t, MGOPT_ERR_CORRUPT, "length disagrees with dims and data type");
  path = mgopt__onnx_join(p, L->dir, loc->ptr, loc->len);
  if (!path) return mgopt__onnx_load_fail(L, t, MGOPT_ERR_NOMEM, "out of memory");
  if (path != L->fpath) {
    if (L->f) fclose(L->f);
    L->fpath = path;
    errno = 0;
    L->f = fopen(path, "rb");
    if (!L->f) {
      int e = errno;
      L->fpath = NULL;
      L->d->offset = -1;
      L->st = mgopt_diag_set(L->d, MGOPT_ERR_IO, "tensor '%.*s': cannot open its external data %s: %s",
                             (int)(t->name.len > 80 ? 80 : t->name.len), t->name.ptr ? t->name.ptr : "", path,
                             e ? strerror(e) : "fopen failed");
      return 1;
    }
    L->fsize = mgopt__onnx_fsize(L->f);
    if (L->fsize < 0) return mgopt__onnx_load_fail(L, t, MGOPT_ERR_IO, "cannot size the data file");
  }
  if (offset > L->fsize || nb > L->fsize - offset)
    return mgopt__onnx_load_fail(L, t, MGOPT_ERR_CORRUPT, "offset and length past the end of the file");
  if ((uint64_t)nb > (uint64_t)SIZE_MAX) return mgopt__onnx_load_fail(L, t, MGOPT_ERR_LIMIT, "too large");
  data = mgopt__arena_alloc(p, (size_t)nb, 64, 0);
  if (!data) return mgopt__onnx_load_fail(L, t, MGOPT_ERR_NOMEM, "out of memory");
  if (nb && (!mgopt__onnx_seek(L->f, offset) || fread(data, 1, (size_t)nb, L->f) != (size_t)nb))
    return mgopt__onnx_load_fail(L, t, MGOPT_ERR_IO, "read failed");
  t->ext_location = mgopt_program_intern(p, loc->ptr, loc->len);
  t->ext_offset = offset;
  t->raw_data.ptr = (const char *)data;
  t->raw_data.len = (size_t)nb;
  t->has |= MGOPT_ONNX_TENSOR_HAS_RAW_DATA;
  t->data_location = MGOPT_ONNX_LOC_DEFAULT;
  t->has &= ~MGOPT__ONNX_TENSOR_HAS_LOCATION; /* written back like any inline tensor */
  t->external_data = NULL;
  t->nexternal_data = 0;
  return 0;
}

MGOPTDEF mgopt_status mgopt_onnx_load_external(mgopt_onnx_model *m, const char *dir, mgopt_diag *d) {
  mgopt__onnx_loader L;
  mgopt_diag tmp;
  if (!d) d = &tmp;
  mgopt_diag_clear(d);
  if (!m || !m->program) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "NULL model");
  memset(&L, 0, sizeof L);
  L.m = m;
  L.dir = dir ? dir : m->dir;
  L.d = d;
  if (mgopt__onnx_walk(MGOPT__OM_MODEL, m, -1, 0, mgopt__onnx_load_one, &L, 0) < 0 && !L.st)
    L.st = mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "model tree nested too deeply");
  if (L.f) fclose(L.f);
  return L.st;
}

/* Length of the directory part of path, separator excluded ("" -> 0). */
static size_t mgopt__onnx_dirlen(const char *path) {
  size_t n = strlen(path);
  while (n > 0 && path[n - 1] != '/' && path[n - 1] != '\\') n--;
  return n > 1 ? n - 1 : n; /* keep "/" for files in the root */
}

MGOPTDEF mgopt_status mgopt_onnx_read_file(const char *path, const mgopt_onnx_read_options *opts,
                                          mgopt_onnx_model **out, mgopt_diag *d) {
  FILE *f;
  int64_t size;
  mgopt_program *p;
  uint8_t *buf;
  mgopt_onnx_model *m = NULL;
  mgopt_status s;
  mgopt_diag_clear(d);
  if (!out) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "out is NULL");
  if (!path) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "NULL path");
  errno = 0;
  f = fopen(path, "rb");
  if (!f) return mgopt_diag_set(d, MGOPT_ERR_IO, "cannot open %s: %s", path, errno ? strerror(errno) : "fopen failed");
  {
    /* one byte first: a directory opens but does not read (EISDIR) */
    int c;
    errno = 0;
    c = getc(f);
    if (c == EOF && ferror(f)) {
      int e = errno;
      fclose(f);
      return mgopt_diag_set(d, MGOPT_ERR_IO, "cannot read %s: %s", path, e ? strerror(e) : "read error");
    }
  }
  size = mgopt__onnx_fsize(f);
  if (size < 0 || !mgopt__onnx_seek(f, 0) || (uint64_t)size > (uint64_t)SIZE_MAX - 64) {
    fclose(f);
    return mgopt_diag_set(d, MGOPT_ERR_IO, "cannot size %s", path);
  }
  p = mgopt_program_create(opts ? opts->alloc : NULL);
  buf = p ? (uint8_t *)mgopt__arena_alloc(p, (size_t)size, 64, 0) : NULL;
  if (!buf) {
    fclose(f);
    mgopt_program_destroy(p);
    return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory reading %s", path);
  }
  errno = 0;
  if (size && fread(buf, 1, (size_t)size, f) != (size_t)size) {
    int e = errno;
    fclose(f);
    mgopt_program_destroy(p);
    return mgopt_diag_set(d, MGOPT_ERR_IO, "cannot read %s: %s", path, e ? strerror(e) : "short read");
  }
  fclose(f);
  s = mgopt__onnx_read_into(p, buf, (size_t)size, opts, &m, d);
  if (s == MGOPT_OK) {
    m->dir = mgopt_program_intern(p, path, mgopt__onnx_dirlen(path));
    if (!m->dir) s = mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  }
  if (s == MGOPT_OK && !(opts && opts->keep_external)) s = mgopt_onnx_load_external(m, NULL, d);
  if (s != MGOPT_OK) {
    mgopt_program_destroy(p);
    return s;
  }
  *out = m;
  return MGOPT_OK;
}

/* A file being written: the temporary next to the target, renamed over it
   when everything is written. */
typedef struct mgopt__onnx_fsink {
  const char *path; /* the target */
  const mgopt_allocator *alloc;
  char *tmp; /* the temporary's path, NULL until opened */
  size_t tmp_cap;
  FILE *f;
  int failed; /* 0, or what failed: 1 create, 2 write, 3 replace */
  int err;    /* errno of the failure, 0 if unknown */
  int direct; /* the target is a device or pipe: written as it is, no temporary */
  int replacing; /* the target is an existing file: synced before the rename */
} mgopt__onnx_fsink;

static void mgopt__onnx_fsink_fail(mgopt__onnx_fsink *s, int what, int err) {
  if (s->failed) return;
  s->failed = what;
  s->err = err;
}

/* Creates ".NAME.XXXXXXXX" in the target's directory. */
static int mgopt__onnx_tmp_open(mgopt__onnx_fsink *s) {
  static unsigned long counter;
  size_t n = strlen(s->path), dl = n;
  unsigned long seed;
  int tries;
  while (dl > 0 && s->path[dl - 1] != '/' && s->path[dl - 1] != '\\') dl--;
  s->tmp_cap = n + 12;
  s->tmp = (char *)mgopt__heap_realloc(s->alloc, NULL, 0, s->tmp_cap);
  if (!s->tmp) {
    mgopt__onnx_fsink_fail(s, 1, ENOMEM);
    return 0;
  }
#ifdef MGOPT__ONNX_POSIX_IO
  {
    struct stat st;
    if (stat(s->path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
      mgopt__heap_free(s->alloc, s->tmp, s->tmp_cap);
      s->tmp = NULL;
      errno = 0;
      s->f = fopen(s->path, "wb");
      if (!s->f) mgopt__onnx_fsink_fail(s, 1, errno);
      s->direct = 1;
      return s->f != NULL;
    }
  }
#endif
  seed = (unsigned long)time(NULL) ^ ((unsigned long)(size_t)s >> 4) ^ (++counter * 0x9e3779b9UL);
#ifdef MGOPT__ONNX_POSIX_IO
  seed ^= (unsigned long)getpid() << 16;
#endif
  for (tries = 0; tries < 100; tries++) {
    unsigned long v = (seed + (unsigned long)tries * 0x2545f491UL) & 0xffffffffUL;
    sprintf(s->tmp, "%.*s.%s.%08lx", (int)dl, s->path, s->path + dl, v);
#ifdef MGOPT__ONNX_POSIX_IO
    {
      struct stat st;
      int fd = open(s->tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
      if (fd < 0 && errno == EEXIST) continue;
      if (fd < 0) break;
      /* replacing a file keeps its mode; a new file gets the umask's */
      s->replacing = stat(s->path, &st) == 0 && S_ISREG(st.st_mode);
      if (s->replacing) (void)fchmod(fd, st.st_mode & 07777);
      s->f = fdopen(fd, "wb");
      if (!s->f) {
        int e = errno;
        close(fd);
        remove(s->tmp);
        errno = e;
        break;
      }
      return 1;
    }
#else
    {
      FILE *probe = fopen(s->tmp, "rb");
      if (probe) {
        fclose(probe);
        continue;
      }
      errno = 0;
      s->f = fopen(s->tmp, "wb");
      if (!s->f) break;
      return 1;
    }
#endif
  }
  mgopt__onnx_fsink_fail(s, 1, tries == 100 ? EEXIST : errno);
  mgopt__heap_free(s->alloc, s->tmp, s->tmp_cap);
  s->tmp = NULL;
  return 0;
}

/* Flushes the data and closes the temporary. It goes to the device first
   when it replaces a file: the old file is what a crash between the rename
   and the write-back could lose (a model optimized in place). A new file is
   not synced, as cp does not: a crash loses nothing that existed. */
static void mgopt__onnx_tmp_close(mgopt__onnx_fsink *s) {
  if (!s->f) return;
  errno = 0;
  if (fflush(s->f) != 0) mgopt__onnx_fsink_fail(s, 2, errno);
#ifdef MGOPT__ONNX_POSIX_IO
  if (!s->failed && !s->direct && s->replacing && fsync(fileno(s->f)) != 0) mgopt__onnx_fsink_fail(s, 2, errno);
#endif
  errno = 0;
  if (fclose(s->f) != 0) mgopt__onnx_fsink_fail(s, 2, errno);
  s->f = NULL;
}

/* Renames the temporary over the target. */
static void mgopt__onnx_tmp_commit(mgopt__onnx_fsink *s) {
  if (!s->tmp || s->failed) return;
  errno = 0;
  if (rename(s->tmp, s->path) != 0) {
#if defined(_WIN32)
    /* Windows' rename does not replace: remove the target first (not atomic) */
    if (remove(s->path) == 0 && rename(s->tmp, s->path) == 0) goto done;
#endif
    mgopt__onnx_fsink_fail(s, 3, errno);
    return;
  }
#if defined(_WIN32)
done:
#endif
  mgopt__heap_free(s->alloc, s->tmp, s->tmp_cap);
  s->tmp = NULL;
}

/* Closes and removes what is left of the temporary. */
static void mgopt__onnx_tmp_discard(mgopt__onnx_fsink *s) {
  if (s->f) fclose(s->f);
  s->f = NULL;
  if (s->tmp) {
    remove(s->tmp);
    mgopt__heap_free(s->alloc, s->tmp, s->tmp_cap);
    s->tmp = NULL;
  }
}

static mgopt_status mgopt__onnx_file_sink(void *ctx, const void *data, size_t n) {
  mgopt__onnx_fsink *s = (mgopt__onnx_fsink *)ctx;
  if (s->failed) return MGOPT_ERR_IO;
  if (!s->f && !mgopt__onnx_tmp_open(s)) return MGOPT_ERR_IO;
  errno = 0;
  if (n && fwrite(data, 1, n, s->f) != n) {
    mgopt__onnx_fsink_fail(s, 2, errno);
    return MGOPT_ERR_IO;
  }
  return MGOPT_OK;
}

static mgopt_status mgopt__onnx_fsink_diag(const mgopt__onnx_fsink *s, mgopt_diag *d) {
  static const char *const what[] = {"", "cannot open %s for writing: %s", "cannot write %s: %s",
                                     "cannot replace %s: %s"};
  return mgopt_diag_set(d, MGOPT_ERR_IO, what[s->failed], s->path, s->err ? strerror(s->err) : "I/O error");
}

MGOPTDEF mgopt_status mgopt_onnx_write_file(const mgopt_onnx_model *m, const char *path,
                                            const mgopt_onnx_write_options *opts, mgopt_diag *d) {
  mgopt__onnx_fsink sink, out;
  mgopt_status st;
  char *loc = NULL, *side = NULL;
  size_t loc_cap = 0, side_cap = 0;
  const mgopt_allocator *alloc;
  mgopt_onnx_write_options o;
  mgopt_diag_clear(d);
  if (!m || !path) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "NULL model or path");
  alloc = m->program ? &m->program->alloc : NULL;
  memset(&sink, 0, sizeof sink);
  memset(&out, 0, sizeof out);
  memset(&o, 0, sizeof o);
  if (opts) o = *opts;
  if (o.external_min_bytes > 0) {
    /* the location recorded in the model, and the side file's path next to path */
    const char *base = path + strlen(path);
    size_t ll, dl;
    while (base > path && base[-1] != '/' && base[-1] != '\\') base--;
    dl = (size_t)(base - path);
    if (o.external_location) {
      ll = strlen(o.external_location);
      loc_cap = ll + 1;
      loc = (char *)mgopt__heap_realloc(alloc, NULL, 0, loc_cap);
      if (loc) memcpy(loc, o.external_location, ll + 1);
    } else {
      size_t bl = strlen(base);
      ll = bl + 5;
      loc_cap = ll + 1;
      loc = (char *)mgopt__heap_realloc(alloc, NULL, 0, loc_cap);
      if (loc) {
        memcpy(loc, base, bl);
        memcpy(loc + bl, ".data", 6);
      }
    }
    if (!loc) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
    if (!mgopt__onnx_location_ok(loc, ll)) {
      mgopt__heap_free(alloc, loc, loc_cap);
      return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG,
                            "external_location must be a relative path without '..'");
    }
    side_cap = dl + ll + 1;
    side = (char *)mgopt__heap_realloc(alloc, NULL, 0, side_cap);
    if (!side) {
      mgopt__heap_free(alloc, loc, loc_cap);
      return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
    }
    memcpy(side, path, dl);
    memcpy(side + dl, loc, ll + 1);
    sink.path = side;
    o.external_location = loc;
  }
  out.path = path;
  out.alloc = sink.alloc = alloc;
  /* both files go to temporaries; the data file replaces its target first,
     then the model: a failure before that leaves both targets as they were */
  st = mgopt_onnx_write_stream(m, &o, mgopt__onnx_file_sink, &out, mgopt__onnx_file_sink, &sink, d);
  if (st == MGOPT_OK && !out.f) st = mgopt__onnx_file_sink(&out, "", 0); /* an empty model still makes a file */
  mgopt__onnx_tmp_close(&sink);
  mgopt__onnx_tmp_close(&out);
  if (st == MGOPT_OK && !sink.failed && !out.failed) {
    mgopt__onnx_tmp_commit(&sink);
    if (!sink.failed) mgopt__onnx_tmp_commit(&out);
  }
  if (sink.failed || out.failed) st = mgopt__onnx_fsink_diag(sink.failed ? &sink : &out, d);
  mgopt__onnx_tmp_discard(&sink);
  mgopt__onnx_tmp_discard(&out);
  if (loc) mgopt__heap_free(alloc, loc, loc_cap);
  if (side) mgopt__heap_free(alloc, side, side_cap);
  return st;
}

#endif /* MGOPT_NO_STDIO */
