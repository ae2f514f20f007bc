/* tests/unit/test_onnx_pb.c — the protobuf wire codec and the ONNX model tree: primitives, malformed input, round trips. */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <stdlib.h>
#include <errno.h>
#if defined(__unix__) || defined(__APPLE__)
#include <dirent.h> /* walking /usr/share/libonnx-testdata */
#include <unistd.h> /* getpid for temporary file names */
#define HAVE_DIRENT 1
#endif

/* A temporary path for files the tests write. */
static void tmp_path(char *out, size_t cap, const char *name) {
  const char *dir = getenv("TMPDIR");
#ifdef HAVE_DIRENT
  snprintf(out, cap, "%s/mgopt_%d_%s", dir && dir[0] ? dir : "/tmp", (int)getpid(), name);
#else
  snprintf(out, cap, "%s%s", dir && dir[0] ? dir : "", name);
#endif
}

#define FIX "tests/fixtures/onnx/"

/* ---------------------------------------------------------------- helpers */

/* A forward protobuf builder for hand-made (often malformed) inputs. */
typedef struct bb {
  uint8_t b[8192];
  size_t n;
} bb;

static void bb_raw(bb *o, const void *p, size_t n) {
  if (o->n + n > sizeof o->b) return;
  memcpy(o->b + o->n, p, n);
  o->n += n;
}
static void bb_byte(bb *o, int c) {
  uint8_t x = (uint8_t)c;
  bb_raw(o, &x, 1);
}
static void bb_varint(bb *o, uint64_t v) {
  do {
    uint8_t c = (uint8_t)(v & 0x7f);
    v >>= 7;
    bb_byte(o, c | (v ? 0x80 : 0));
  } while (v);
}
static void bb_key(bb *o, unsigned field, int wt) { bb_varint(o, (uint64_t)field << 3 | (unsigned)wt); }
static void bb_len(bb *o, unsigned field, const void *p, size_t n) {
  bb_key(o, field, 2);
  bb_varint(o, n);
  bb_raw(o, p, n);
}
static void bb_msg(bb *o, unsigned field, const bb *in) { bb_len(o, field, in->b, in->n); }
static void bb_str(bb *o, unsigned field, const char *s) { bb_len(o, field, s, strlen(s)); }
static void bb_int(bb *o, unsigned field, uint64_t v) {
  bb_key(o, field, 0);
  bb_varint(o, v);
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *buf;
  long n;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = (char *)malloc(n > 0 ? (size_t)n : 1);
  if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *len = (size_t)(n > 0 ? n : 0);
  return buf;
}

/* An allocator that refuses any single block above a cap and records the largest request. */
typedef struct capped {
  size_t cap, largest;
} capped;
static void *capped_realloc(void *ctx, void *ptr, size_t old, size_t n) {
  capped *c = (capped *)ctx;
  (void)old;
  if (n == 0) {
    free(ptr);
    return NULL;
  }
  if (n > c->largest) c->largest = n;
  if (n > c->cap) return NULL;
  return realloc(ptr, n);
}

/* Reads buf, expecting failure with status st; returns the diag. */
static mgopt_diag expect_fail(const void *buf, size_t n, const mgopt_onnx_read_options *o, mgopt_status st) {
  mgopt_diag d;
  mgopt_onnx_model *m = NULL;
  mgopt_onnx_read(buf, n, o, &m, &d);
  CHECK(m == NULL);
  if (m) mgopt_program_destroy(m->program);
  CHECK_EQ_INT(d.status, st);
  return d;
}

/* write(m) -> read -> equal, and a second write gives the same bytes. */
static int roundtrip_ok(const mgopt_onnx_model *m, const char *orig, size_t orig_len, int want_identical) {
  mgopt_buf b1, b2;
  mgopt_diag d;
  mgopt_onnx_model *m2;
  char where[256];
  int ok = 1;
  memset(&b1, 0, sizeof b1);
  memset(&b2, 0, sizeof b2);
  if (mgopt_onnx_write(m, NULL, &b1, NULL, &d) != MGOPT_OK) return 0;
  if (mgopt_onnx_read(b1.data, b1.len, NULL, &m2, &d) != MGOPT_OK) m2 = NULL;
  if (!m2) {
    printf("  reread failed: %s\n", d.msg);
    mgopt_buf_free(&b1);
    return 0;
  }
  if (!mgopt_onnx_model_equal(m, m2, where, sizeof where)) {
    printf("  differs at %s\n", where);
    ok = 0;
  }
  if (mgopt_onnx_write(m2, NULL, &b2, NULL, &d) != MGOPT_OK || b1.len != b2.len ||
      memcmp(b1.data, b2.data, b1.len) != 0) {
    printf("  second encode differs\n");
    ok = 0;
  }
  if (want_identical && (b1.len != orig_len || memcmp(b1.data, orig, orig_len) != 0)) {
    printf("  re-encoded bytes differ from the original\n");
    ok = 0;
  }
  mgopt_program_destroy(m2->program);
  mgopt_buf_free(&b1);
  mgopt_buf_free(&b2);
  return ok;
}

static const mgopt_onnx_attribute *find_attr(const mgopt_onnx_node *n, const char *name) {
  int64_t i;
  for (i = 0; i < n->nattributes; i++)
    if (n->attributes[i].name.len == strlen(name) && memcmp(n->attributes[i].name.ptr, name, strlen(name)) == 0)
      return &n->attributes[i];
  return NULL;
}

static const mgopt_onnx_tensor *find_init(const mgopt_onnx_graph *g, const char *name) {
  int64_t i;
  for (i = 0; i < g->ninitializers; i++)
    if (strcmp(g->initializers[i].name.ptr, name) == 0) return &g->initializers[i];
  return NULL;
}

/* ---------------------------------------------------------------- wire primitives */

static void test_varint(void) {
  static const uint8_t one[] = {0x01}, two[] = {0xac, 0x02}, nonmin[] = {0x80, 0x80, 0x00};
  static const uint8_t max[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  static const uint8_t over[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
  static const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
  static const uint8_t trunc[] = {0x80, 0x80};
  uint64_t v = 0;
  size_t pos;
  pos = 0;
  CHECK_EQ_INT(mgopt__pb_varint(one, &pos, 1, &v), MGOPT__PB_OK);
  CHECK_EQ_INT(v, 1);
  CHECK_EQ_INT(pos, 1);
  pos = 0;
  CHECK_EQ_INT(mgopt__pb_varint(two, &pos, 2, &v), MGOPT__PB_OK);
  CHECK_EQ_INT(v, 300);
  pos = 0;
  CHECK_EQ_INT(mgopt__pb_varint(nonmin, &pos, 3, &v), MGOPT__PB_OK);
  CHECK_EQ_INT(v, 0);
  CHECK_EQ_INT(pos, 3);
  pos = 0;
  CHECK_EQ_INT(mgopt__pb_varint(max, &pos, 10, &v), MGOPT__PB_OK);
  CHECK(v == UINT64_MAX);
  pos = 0;
  CHECK_EQ_INT(mgopt__pb_varint(over, &pos, 10, &v), MGOPT__PB_OVERFLOW);
  CHECK_EQ_INT(pos, 0); /* not advanced on error */
  pos = 0;
  CHECK_EQ_INT(mgopt__pb_varint(eleven, &pos, 11, &v), MGOPT__PB_OVERFLOW);
  pos = 0;
  CHECK_EQ_INT(mgopt__pb_varint(trunc, &pos, 2, &v), MGOPT__PB_TRUNCATED);
  pos = 0;
  CHECK_EQ_INT(mgopt__pb_varint(one, &pos, 0, &v), MGOPT__PB_TRUNCATED);
}

static void test_zigzag_fixed(void) {
  static const int64_t vals[] = {0, -1, 1, -2, 2147483647, -2147483647 - 1, INT64_MAX, INT64_MIN};
  static const uint8_t f32[] = {0x78, 0x56, 0x34, 0x12}, f64[] = {1, 2, 3, 4, 5, 6, 7, 8};
  int i;
  uint32_t u = 0;
  uint64_t w = 0;
  size_t pos;
  CHECK(mgopt__pb_zigzag(-1) == 1);
  CHECK(mgopt__pb_zigzag(1) == 2);
  CHECK(mgopt__pb_zigzag(INT64_MIN) == UINT64_MAX);
  for (i = 0; i < 8; i++) CHECK(mgopt__pb_unzigzag(mgopt__pb_zigzag(vals[i])) == vals[i]);
  pos = 0;
  CHECK_EQ_INT(mgopt__pb_fixed32(f32, &pos, 4, &u), MGOPT__PB_OK);
  CHECK(u == 0x12345678u);
  pos = 0;
  CHECK_EQ_INT(mgopt__pb_fixed64(f64, &pos, 8, &w), MGOPT__PB_OK);
  CHECK(w == 0x0807060504030201ull);
  pos = 0;
  CHECK_EQ_INT(mgopt__pb_fixed64(f64, &pos, 7, &w), MGOPT__PB_TRUNCATED);
  pos = 0;
  CHECK_EQ_INT(mgopt__pb_fixed32(f32, &pos, 3, &u), MGOPT__PB_TRUNCATED);
}

static void test_key_skip(void) {
  static const uint8_t group[] = {0x0b}, bad6[] = {0x0e}, past[] = {0x0a, 0x05, 0x01};
  static const uint8_t f64[] = {0x09, 1, 2, 3, 4, 5, 6, 7, 8};
  uint32_t field = 0;
  int wt = 0;
  size_t pos, s, l;
  pos = 0;
  CHECK_EQ_INT(mgopt__pb_key(group, &pos, 1, &field, &wt), MGOPT__PB_GROUP);
  pos = 0;
  CHECK_EQ_INT(mgopt__pb_key(bad6, &pos, 1, &field, &wt), MGOPT__PB_BADWIRE);
  pos = 0;
  CHECK_EQ_INT(mgopt__pb_key(past, &pos, 3, &field, &wt), MGOPT__PB_OK);
  CHECK_EQ_INT(field, 1);
  CHECK_EQ_INT(wt, 2);
  CHECK_EQ_INT(mgopt__pb_skip(past, &pos, 3, wt, &s, &l), MGOPT__PB_PASTEND);
  pos = 0;
  mgopt__pb_key(f64, &pos, 9, &field, &wt);
  CHECK_EQ_INT(mgopt__pb_skip(f64, &pos, 9, wt, &s, &l), MGOPT__PB_OK);
  CHECK_EQ_INT(pos, 9);
}

static void test_writer(void) {
  mgopt__pbw w;
  size_t mark, i;
  static const uint8_t expect[] = {0x0a, 0x10, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
                                   0x15, 0x00, 0x00, 0x80, 0x3f};
  float one = 1.0f;
  uint32_t bits;
  memset(&w, 0, sizeof w);
  /* message field 1 { field 1: int32 -1 (10 bytes), field 2: fixed32 1.0f }, built back to front */
  mark = w.len;
  memcpy(&bits, &one, 4);
  mgopt__pbw_fixed32(&w, bits);
  mgopt__pbw_key(&w, 2, MGOPT__PB_FIXED32);
  mgopt__pbw_varint(&w, (uint64_t)(int64_t)-1);
  mgopt__pbw_key(&w, 1, MGOPT__PB_VARINT);
  mgopt__pbw_close(&w, mark, 1);
  REQUIRE(w.len == sizeof expect);
  CHECK(memcmp(mgopt__pbw_data(&w), expect, sizeof expect) == 0);
  /* growth past the first block keeps earlier bytes at the end */
  for (i = 0; i < 10000; i++) mgopt__pbw_varint(&w, 300);
  CHECK_EQ_INT(w.len, sizeof expect + 20000);
  CHECK(memcmp(mgopt__pbw_data(&w) + 20000, expect, sizeof expect) == 0);
  CHECK(mgopt__pbw_data(&w)[0] == 0xac && mgopt__pbw_data(&w)[1] == 0x02);
  mgopt__pbw_free(&w);
}

/* ---------------------------------------------------------------- decoding rules */

static void test_unknown_fields_skipped(void) {
  bb m, g, n;
  mgopt_diag d;
  mgopt_onnx_model *mo;
  memset(&m, 0, sizeof m);
  memset(&g, 0, sizeof g);
  memset(&n, 0, sizeof n);
  bb_str(&n, 4, "Relu");
  bb_int(&n, 90, 5);                   /* unknown varint */
  bb_key(&n, 91, 1);                   /* unknown fixed64 */
  bb_raw(&n, "12345678", 8);
  bb_key(&n, 92, 5);                   /* unknown fixed32 */
  bb_raw(&n, "1234", 4);
  bb_str(&n, 93, "unknown bytes");     /* unknown length-delimited */
  bb_msg(&g, 1, &n);
  bb_int(&m, 1, 8);
  bb_int(&m, 99, 123456789);
  bb_msg(&m, 7, &g);
  if (mgopt_onnx_read(m.b, m.n, NULL, &mo, &d) != MGOPT_OK) mo = NULL;
  REQUIRE(mo != NULL);
  CHECK_EQ_INT(mo->ir_version, 8);
  REQUIRE(mo->graph && mo->graph->nnodes == 1);
  CHECK_EQ_STR(mo->graph->nodes[0].op_type.ptr, "Relu");
  CHECK(roundtrip_ok(mo, NULL, 0, 0));
  mgopt_program_destroy(mo->program);
}

/* A tensor message for graph.initializer with the given extra bytes. */
static void model_with_tensor(bb *out, const bb *t) {
  bb g;
  memset(&g, 0, sizeof g);
  memset(out, 0, sizeof *out);
  bb_msg(&g, 5, t);
  bb_int(out, 1, 8);
  bb_msg(out, 7, &g);
}

static void test_packed_and_unpacked(void) {
  bb t1, t2, m1, m2;
  mgopt_diag d;
  mgopt_onnx_model *a, *b;
  static const float fv[3] = {1.0f, -2.0f, 0.5f};
  unsigned char f[12]; /* the floats as the wire holds them: little-endian */
  int i;
  char where[128];
  for (i = 0; i < 3; i++) harness_put_le_f32(f + 4 * i, fv[i]);
  memset(&t1, 0, sizeof t1);
  memset(&t2, 0, sizeof t2);
  /* t1: dims unpacked, float_data packed; t2: dims packed, float_data unpacked */
  bb_int(&t1, 1, 3);
  bb_int(&t1, 2, 1);
  bb_len(&t1, 4, f, 12);
  bb_str(&t1, 8, "w");
  bb_key(&t2, 1, 2);
  bb_varint(&t2, 1);
  bb_varint(&t2, 3);
  bb_int(&t2, 2, 1);
  for (i = 0; i < 3; i++) {
    bb_key(&t2, 4, 5);
    bb_raw(&t2, f + 4 * i, 4);
  }
  bb_str(&t2, 8, "w");
  model_with_tensor(&m1, &t1);
  model_with_tensor(&m2, &t2);
  if (mgopt_onnx_read(m1.b, m1.n, NULL, &a, &d) != MGOPT_OK) a = NULL;
  if (mgopt_onnx_read(m2.b, m2.n, NULL, &b, &d) != MGOPT_OK) b = NULL;
  REQUIRE(a && b);
  CHECK(mgopt_onnx_model_equal(a, b, where, sizeof where));
  REQUIRE(b->graph->initializers[0].nfloat_data == 3);
  CHECK(b->graph->initializers[0].float_data[1] == -2.0f);
  CHECK_EQ_INT(b->graph->initializers[0].numel, 3);
  /* the writer uses onnx.proto's layout: t1's bytes come back unchanged */
  CHECK(roundtrip_ok(b, (const char *)m1.b, m1.n, 1));
  mgopt_program_destroy(a->program);
  mgopt_program_destroy(b->program);
}

/* ONNX stores tensors little-endian. Known byte patterns (raw_data of fp32,
   fp16, bf16, int64, int32, uint16, fp64, complex64, int8, bool; and packed
   float_data / double_data) decode to the right values on a host of either
   byte order, and export writes the same bytes back. raw_data is borrowed
   where the host order allows: 1-byte types always, wider ones only on a
   little-endian host (else the program holds a host-order copy). */
typedef struct le_case {
  const char *name;
  int dt;       /* ONNX data type */
  int64_t n;    /* elements */
  const char *bytes;
  size_t len;
  double want[3]; /* element values (complex64: the parts of element 0) */
} le_case;

static void test_byte_order(void) {
  static const le_case cases[] = {
      {"f32", 1, 3, "\x00\x00\x80\x3f\x00\x00\x00\xc0\x00\x00\x20\x41", 12, {1.0, -2.0, 10.0}},
      {"f16", 10, 3, "\x00\x3c\x00\xc0\x01\x00", 6, {1.0, -2.0, 5.9604644775390625e-08}},
      {"bf16", 16, 2, "\x80\x3f\x00\xc0", 4, {1.0, -2.0, 0}},
      {"i64", 7, 2, "\x2b\x01\x00\x00\x00\x00\x00\x00\xfe\xff\xff\xff\xff\xff\xff\xff", 16, {299, -2, 0}},
      {"i32", 6, 2, "\x01\x02\x03\x04\xff\xff\xff\x7f", 8, {67305985, 2147483647, 0}},
      {"u16", 4, 2, "\x34\x12\xff\xff", 4, {0x1234, 65535, 0}},
      {"f64", 11, 1, "\x00\x00\x00\x00\x00\x00\xf0\xbf", 8, {-1.0, 0, 0}},
      {"c64", 14, 1, "\x00\x00\x80\x3f\x00\x00\x00\xc0", 8, {1.0, -2.0, 0}},
      {"i8", 3, 3, "\x01\xff\x80", 3, {1, -1, -128}},
      {"bool", 9, 2, "\x01\x00", 2, {1, 0, 0}},
  };
  const int ncase = (int)(sizeof cases / sizeof cases[0]);
  bb g, m;
  mgopt_diag d;
  mgopt_program *p = NULL;
  mgopt_function *f;
  mgopt_onnx_model *out = NULL;
  mgopt_onnx_export_options eo;
  int c, k;
  memset(&g, 0, sizeof g);
  memset(&m, 0, sizeof m);
  for (c = 0; c < ncase; c++) {
    bb t, vi, ty, tt, sh, dim;
    memset(&t, 0, sizeof t);
    bb_int(&t, 1, (uint64_t)cases[c].n);
    bb_int(&t, 2, (uint64_t)cases[c].dt);
    bb_str(&t, 8, cases[c].name);
    bb_len(&t, 9, cases[c].bytes, cases[c].len);
    bb_msg(&g, 5, &t);
    /* graph output `name`: tensor_type{elem_type, shape{dim{dim_value n}}} */
    memset(&dim, 0, sizeof dim);
    bb_int(&dim, 1, (uint64_t)cases[c].n);
    memset(&sh, 0, sizeof sh);
    bb_msg(&sh, 1, &dim);
    memset(&tt, 0, sizeof tt);
    bb_int(&tt, 1, (uint64_t)cases[c].dt);
    bb_msg(&tt, 2, &sh);
    memset(&ty, 0, sizeof ty);
    bb_msg(&ty, 1, &tt);
    memset(&vi, 0, sizeof vi);
    bb_str(&vi, 1, cases[c].name);
    bb_msg(&vi, 2, &ty);
    bb_msg(&g, 12, &vi);
  }
  {
    /* packed float_data and double_data: fixed32 / fixed64, little-endian */
    bb t;
    memset(&t, 0, sizeof t);
    bb_int(&t, 1, 2);
    bb_int(&t, 2, 1);
    bb_str(&t, 8, "packed_f32");
    bb_len(&t, 4, "\x00\x00\xc0\x3f\x00\x00\x80\xbf", 8);
    bb_msg(&g, 5, &t);
    memset(&t, 0, sizeof t);
    bb_int(&t, 1, 1);
    bb_int(&t, 2, 11);
    bb_str(&t, 8, "packed_f64");
    bb_len(&t, 10, "\x00\x00\x00\x00\x00\x00\x04\x40", 8);
    bb_msg(&g, 5, &t);
  }
  {
    bb op;
    memset(&op, 0, sizeof op);
    bb_int(&op, 2, 17);
    bb_int(&m, 1, 8);
    bb_msg(&m, 8, &op);
    bb_msg(&m, 7, &g);
  }
  REQUIRE(mgopt_onnx_load(m.b, m.n, NULL, &p, &d) == MGOPT_OK);
  f = mgopt_program_function(p, "main");
  REQUIRE(f != NULL && f->body->nouts == ncase);
  for (c = 0; c < ncase; c++) {
    mgopt_tensor *t = mgopt_value_const(f->body->outs[c]->value);
    int wide = cases[c].len / (size_t)cases[c].n > 1;
    REQUIRE(t != NULL);
    CHECK_EQ_INT(t->numel, cases[c].n);
    if (cases[c].dt == 14) { /* complex64: the two parts of element 0 */
      float re, im;
      memcpy(&re, t->data, 4);
      memcpy(&im, (const char *)t->data + 4, 4);
      CHECK(re == 1.0f && im == -2.0f);
    } else {
      for (k = 0; k < (int)cases[c].n; k++) {
        if (mgopt_tensor_get_f64(t, k) != cases[c].want[k])
          printf("  %s[%d]: %.17g, want %.17g\n", cases[c].name, k, mgopt_tensor_get_f64(t, k), cases[c].want[k]);
        CHECK(mgopt_tensor_get_f64(t, k) == cases[c].want[k]);
      }
    }
    /* zero-copy exactly where the host's order is the file's */
    {
      const char *at = (const char *)t->data;
      int inside = at >= (const char *)m.b && at < (const char *)m.b + m.n;
      int host_le = 1;
      {
        const union {
          uint32_t u;
          unsigned char b[4];
        } probe = {1u};
        host_le = probe.b[0] == 1;
      }
      CHECK(inside == (!wide || host_le));
    }
  }
  /* packed fields: the tree holds host values */
  {
    mgopt_onnx_model *mo = NULL;
    const mgopt_onnx_graph *og;
    REQUIRE(mgopt_onnx_read(m.b, m.n, NULL, &mo, &d) == MGOPT_OK);
    og = mo->graph;
    REQUIRE(og->ninitializers == ncase + 2);
    CHECK(og->initializers[ncase].nfloat_data == 2 && og->initializers[ncase].float_data[0] == 1.5f &&
          og->initializers[ncase].float_data[1] == -1.0f);
    CHECK(og->initializers[ncase + 1].ndouble_data == 1 && og->initializers[ncase + 1].double_data[0] == 2.5);
    mgopt_program_destroy(mo->program);
  }
  /* export writes the same little-endian bytes */
  memset(&eo, 0, sizeof eo);
  REQUIRE(mgopt_onnx_export(p, &eo, &out, &d) == MGOPT_OK);
  for (c = 0; c < ncase; c++) {
    const mgopt_onnx_tensor *ot = NULL;
    for (k = 0; k < (int)out->graph->ninitializers; k++)
      if (out->graph->initializers[k].name.len == strlen(cases[c].name) &&
          memcmp(out->graph->initializers[k].name.ptr, cases[c].name, strlen(cases[c].name)) == 0)
        ot = &out->graph->initializers[k];
    REQUIRE(ot != NULL);
    CHECK(ot->raw_data.len == cases[c].len && memcmp(ot->raw_data.ptr, cases[c].bytes, cases[c].len) == 0);
  }
  mgopt_program_destroy(p);
}

static void test_malformed_wire(void) {
  bb m, g, n, a;
  mgopt_diag d;
  static const uint8_t bad_varint[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  static const uint8_t trunc_varint[] = {0x08, 0x80};
  static const uint8_t wrong_wire[] = {0x0a, 0x01, 0x00};          /* ir_version as bytes */
  static const uint8_t past_end[] = {0x3a, 0x64, 0x0a, 0x00};       /* graph: 100 bytes, 2 left */
  static const uint8_t petabyte[] = {0x3a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}; /* 2^49 */
  static const uint8_t group[] = {0x08, 0x01, 0x0b, 0x0c};          /* field 1 start group */
  static const uint8_t field0[] = {0x00, 0x01};
  static const uint8_t wire7[] = {0x0f};
  d = expect_fail(bad_varint, sizeof bad_varint, NULL, MGOPT_ERR_CORRUPT);
  CHECK_EQ_INT(d.offset, 1);
  d = expect_fail(trunc_varint, sizeof trunc_varint, NULL, MGOPT_ERR_CORRUPT);
  CHECK_EQ_INT(d.offset, 1);
  d = expect_fail(wrong_wire, sizeof wrong_wire, NULL, MGOPT_ERR_CORRUPT);
  CHECK_EQ_INT(d.offset, 0);
  d = expect_fail(past_end, sizeof past_end, NULL, MGOPT_ERR_CORRUPT);
  CHECK_EQ_INT(d.offset, 1);
  d = expect_fail(petabyte, sizeof petabyte, NULL, MGOPT_ERR_CORRUPT);
  CHECK_EQ_INT(d.offset, 1);
  d = expect_fail(group, sizeof group, NULL, MGOPT_ERR_UNSUPPORTED);
  CHECK_EQ_INT(d.offset, 2);
  d = expect_fail(field0, sizeof field0, NULL, MGOPT_ERR_CORRUPT);
  CHECK_EQ_INT(d.offset, 0);
  d = expect_fail(wire7, sizeof wire7, NULL, MGOPT_ERR_CORRUPT);
  CHECK_EQ_INT(d.offset, 0);

  /* an error deep inside names its path: graph.node[1].attribute[0] */
  memset(&m, 0, sizeof m);
  memset(&g, 0, sizeof g);
  memset(&n, 0, sizeof n);
  memset(&a, 0, sizeof a);
  bb_str(&a, 1, "axis");
  bb_key(&a, 3, 2); /* i with a length-delimited wire type */
  bb_varint(&a, 0);
  bb_str(&n, 4, "Softmax");
  bb_msg(&n, 5, &a);
  bb_msg(&g, 1, &n); /* node[0] */
  bb_msg(&g, 1, &n); /* node[1] */
  bb_msg(&m, 7, &g);
  d = expect_fail(m.b, m.n, NULL, MGOPT_ERR_CORRUPT);
  CHECK(strstr(d.msg, "graph.node[0].attribute[0].i") != NULL);
  CHECK(d.offset > 0 && (size_t)d.offset < m.n);
}

/* A NUL byte inside a name (op type, value name) is refused where it is: the
   C API would see "MatMul\0Integer" as "MatMul" and "a\0b" as "a". */
static void test_nul_in_names(void) {
  static const char *const fields[2] = {"op_type", "input"};
  int k;
  for (k = 0; k < 2; k++) {
    bb m, g, n;
    mgopt_diag d;
    memset(&m, 0, sizeof m);
    memset(&g, 0, sizeof g);
    memset(&n, 0, sizeof n);
    if (k == 0) {
      bb_str(&n, 1, "a");
      bb_len(&n, 4, "MatMul\0Integer", 14);
    } else {
      bb_len(&n, 1, "a\0b", 3);
      bb_str(&n, 4, "Relu");
    }
    bb_str(&n, 2, "y");
    bb_msg(&g, 1, &n);
    bb_msg(&m, 7, &g);
    d = expect_fail(m.b, m.n, NULL, MGOPT_ERR_CORRUPT);
    CHECK(strstr(d.msg, "NUL byte inside a name") != NULL);
    CHECK(strstr(d.msg, fields[k]) != NULL);
  }
}

static void test_malformed_tensors(void) {
  bb t, m;
  mgopt_diag d;
  float f[2] = {1, 2};
  capped cap;
  mgopt_allocator al;
  mgopt_onnx_read_options o;
  /* element count of a typed field disagrees with dims */
  memset(&t, 0, sizeof t);
  bb_int(&t, 1, 3);
  bb_int(&t, 2, 1);
  bb_len(&t, 4, f, 8);
  model_with_tensor(&m, &t);
  d = expect_fail(m.b, m.n, NULL, MGOPT_ERR_CORRUPT);
  CHECK_EQ_INT(d.offset, 6); /* the tensor message starts after model key, graph key+len, tensor key+len */
  /* raw_data size disagrees */
  memset(&t, 0, sizeof t);
  bb_int(&t, 1, 3);
  bb_int(&t, 2, 1);
  bb_len(&t, 9, f, 8);
  model_with_tensor(&m, &t);
  expect_fail(m.b, m.n, NULL, MGOPT_ERR_CORRUPT);
  /* the wrong typed field for the data type */
  memset(&t, 0, sizeof t);
  bb_int(&t, 1, 2);
  bb_int(&t, 2, 7); /* INT64 */
  bb_len(&t, 4, f, 8);
  model_with_tensor(&m, &t);
  expect_fail(m.b, m.n, NULL, MGOPT_ERR_CORRUPT);
  /* unknown data type */
  memset(&t, 0, sizeof t);
  bb_int(&t, 2, 99);
  model_with_tensor(&m, &t);
  expect_fail(m.b, m.n, NULL, MGOPT_ERR_UNSUPPORTED);
  /* segment */
  memset(&t, 0, sizeof t);
  bb_int(&t, 2, 1);
  bb_len(&t, 3, "\x08\x00", 2);
  model_with_tensor(&m, &t);
  expect_fail(m.b, m.n, NULL, MGOPT_ERR_UNSUPPORTED);
  /* negative dim */
  memset(&t, 0, sizeof t);
  bb_int(&t, 1, (uint64_t)(int64_t)-4);
  bb_int(&t, 2, 1);
  model_with_tensor(&m, &t);
  expect_fail(m.b, m.n, NULL, MGOPT_ERR_CORRUPT);
  /* declared petabytes of elements with 8 bytes of data: a limit, not an allocation */
  memset(&t, 0, sizeof t);
  bb_int(&t, 1, (uint64_t)1 << 25);
  bb_int(&t, 1, (uint64_t)1 << 25);
  bb_int(&t, 1, (uint64_t)1 << 2);
  bb_int(&t, 2, 1);
  bb_len(&t, 9, f, 8);
  model_with_tensor(&m, &t);
  cap.cap = (size_t)64 << 20;
  cap.largest = 0;
  al.realloc = capped_realloc;
  al.ctx = &cap;
  memset(&o, 0, sizeof o);
  o.alloc = &al;
  expect_fail(m.b, m.n, &o, MGOPT_ERR_LIMIT);
  /* the same dims under a raised limit: counts disagree, still no big allocation */
  o.max_elements = INT64_MAX;
  expect_fail(m.b, m.n, &o, MGOPT_ERR_CORRUPT);
  /* a packed field declaring 2^40 floats */
  memset(&t, 0, sizeof t);
  bb_int(&t, 2, 1);
  bb_key(&t, 4, 2);
  bb_varint(&t, (uint64_t)1 << 42);
  model_with_tensor(&m, &t);
  expect_fail(m.b, m.n, &o, MGOPT_ERR_CORRUPT);
  /* packed fixed32 payload not a multiple of 4 */
  memset(&t, 0, sizeof t);
  bb_int(&t, 2, 1);
  bb_len(&t, 4, f, 7);
  model_with_tensor(&m, &t);
  expect_fail(m.b, m.n, &o, MGOPT_ERR_CORRUPT);
  /* packed varint field ending inside a varint */
  memset(&t, 0, sizeof t);
  bb_int(&t, 2, 7);
  bb_len(&t, 7, "\x01\x80", 2);
  model_with_tensor(&m, &t);
  expect_fail(m.b, m.n, &o, MGOPT_ERR_CORRUPT);
  CHECK(cap.largest < ((size_t)1 << 20));
}

/* Graphs nested `depth` deep through If.then_branch attributes, built as a tree and written. */
static mgopt_onnx_model *nested_model(int depth) {
  mgopt_program *p = mgopt_program_create(NULL);
  mgopt_onnx_model *m = (mgopt_onnx_model *)mgopt_program_alloc(p, sizeof *m, 8);
  mgopt_onnx_graph *g;
  int i;
  m->program = p;
  m->ir_version = 8;
  g = m->graph = (mgopt_onnx_graph *)mgopt_program_alloc(p, sizeof *g, 8);
  for (i = 1; i < depth; i++) {
    mgopt_onnx_node *n = (mgopt_onnx_node *)mgopt_program_alloc(p, sizeof *n, 8);
    mgopt_onnx_attribute *a = (mgopt_onnx_attribute *)mgopt_program_alloc(p, sizeof *a, 8);
    n->op_type.ptr = "If";
    n->op_type.len = 2;
    n->attributes = a;
    n->nattributes = 1;
    a->name.ptr = "then_branch";
    a->name.len = 11;
    a->type = MGOPT_ONNX_ATTR_GRAPH;
    a->g = (mgopt_onnx_graph *)mgopt_program_alloc(p, sizeof *a->g, 8);
    g->nodes = n;
    g->nnodes = 1;
    g = a->g;
  }
  return m;
}

static void test_depth_limit(void) {
  mgopt_onnx_model *deep = nested_model(200), *ok = nested_model(64), *r;
  mgopt_buf b;
  mgopt_diag d;
  mgopt_onnx_read_options o;
  memset(&b, 0, sizeof b);
  REQUIRE(mgopt_onnx_write(deep, NULL, &b, NULL, &d) == MGOPT_OK);
  d = expect_fail(b.data, b.len, NULL, MGOPT_ERR_LIMIT);
  CHECK(d.offset > 0);
  memset(&o, 0, sizeof o);
  o.max_depth = 250;
  if (mgopt_onnx_read(b.data, b.len, &o, &r, &d) != MGOPT_OK) r = NULL;
  CHECK(r != NULL);
  if (r) {
    const mgopt_onnx_graph *g = r->graph;
    int levels = 0;
    while (g) {
      levels++;
      g = g->nnodes ? g->nodes[0].attributes[0].g : NULL;
    }
    CHECK_EQ_INT(levels, 200);
    mgopt_program_destroy(r->program);
  }
  mgopt_buf_free(&b);
  REQUIRE(mgopt_onnx_write(ok, NULL, &b, NULL, &d) == MGOPT_OK);
  if (mgopt_onnx_read(b.data, b.len, NULL, &r, &d) != MGOPT_OK) r = NULL;
  CHECK(r != NULL);
  if (r) mgopt_program_destroy(r->program);
  mgopt_buf_free(&b);
  mgopt_program_destroy(deep->program);
  mgopt_program_destroy(ok->program);
}

static void test_truncation_never_crashes(void) {
  size_t len, cut;
  char *buf = slurp(FIX "control_flow.onnx", &len);
  int failed = 0;
  REQUIRE(buf != NULL);
  for (cut = 0; cut < len; cut++) {
    mgopt_diag d;
    char *copy = (char *)malloc(cut ? cut : 1);
    mgopt_onnx_model *m;
    memcpy(copy, buf, cut);
    if (mgopt_onnx_read(copy, cut, NULL, &m, &d) != MGOPT_OK) m = NULL;
    if (m) mgopt_program_destroy(m->program);
    else {
      failed++;
      CHECK(d.offset >= 0 && (size_t)d.offset <= cut);
      CHECK(d.status == MGOPT_ERR_CORRUPT);
    }
    free(copy);
  }
  /* cutting inside the graph (the last field, most of the file) always fails */
  CHECK(failed > (int)len / 2);
  free(buf);
}

static void test_empty_input(void) {
  mgopt_diag d;
  mgopt_onnx_model *m = NULL;
  mgopt_onnx_read("", 0, NULL, &m, &d);
  REQUIRE(m != NULL);
  CHECK(m->graph == NULL);
  CHECK(roundtrip_ok(m, "", 0, 1));
  mgopt_program_destroy(m->program);
}

/* ---------------------------------------------------------------- fixtures */

static mgopt_onnx_model *read_fixture(const char *name, char **bytes, size_t *len) {
  char path[256];
  mgopt_diag d;
  mgopt_onnx_model *m;
  snprintf(path, sizeof path, FIX "%s", name);
  *bytes = slurp(path, len);
  if (mgopt_onnx_read_file(path, NULL, &m, &d) != MGOPT_OK) m = NULL;
  if (!m) printf("  %s: %s (offset %lld)\n", name, d.msg, (long long)d.offset);
  return m;
}

static void test_fixture_attributes(void) {
  char *bytes;
  size_t len;
  mgopt_onnx_model *m = read_fixture("attributes.onnx", &bytes, &len);
  const mgopt_onnx_node *n;
  const mgopt_onnx_attribute *a;
  REQUIRE(m && m->graph && m->graph->nnodes == 1);
  n = &m->graph->nodes[0];
  CHECK_EQ_STR(n->domain.ptr, "test.mgopt");
  CHECK_EQ_INT(n->nattributes, 15);
  a = find_attr(n, "f");
  CHECK(a && a->type == MGOPT_ONNX_ATTR_FLOAT && a->f == 1.5f);
  a = find_attr(n, "i");
  CHECK(a && a->type == MGOPT_ONNX_ATTR_INT && a->i == -7);
  a = find_attr(n, "s");
  CHECK(a && a->s.len == 5 && memcmp(a->s.ptr, "hello", 5) == 0);
  a = find_attr(n, "t");
  CHECK(a && a->t && a->t->nint32_data == 2 && a->t->int32_data[1] == -5);
  a = find_attr(n, "g");
  CHECK(a && a->type == MGOPT_ONNX_ATTR_GRAPH && a->g && a->g->nnodes == 1);
  a = find_attr(n, "sp");
  CHECK(a && a->sparse_tensor && a->sparse_tensor->ndims == 1 && a->sparse_tensor->dims[0] == 5 &&
        a->sparse_tensor->indices && a->sparse_tensor->indices->nint64_data == 2);
  a = find_attr(n, "floats");
  CHECK(a && a->nfloats == 3 && a->floats[1] == -0.25f);
  a = find_attr(n, "ints");
  CHECK(a && a->nints == 3 && a->ints[1] == -2 && a->ints[2] == (int64_t)1 << 40);
  a = find_attr(n, "strings");
  CHECK(a && a->nstrings == 3 && a->strings[1].len == 0 && a->strings[2].len == 3);
  a = find_attr(n, "tensors");
  CHECK(a && a->ntensors == 2 && a->tensors[1].ndims == 0 && a->tensors[1].int64_data[0] == 42);
  a = find_attr(n, "graphs");
  CHECK(a && a->ngraphs == 2 && a->graphs[1].name.len == 2);
  a = find_attr(n, "sps");
  CHECK(a && a->nsparse_tensors == 1);
  a = find_attr(n, "tp");
  CHECK(a && a->tp && a->tp->tensor_type && a->tp->tensor_type->elem_type == MGOPT_ONNX_DT_FLOAT &&
        a->tp->tensor_type->shape && a->tp->tensor_type->shape->ndims == 2 &&
        a->tp->tensor_type->shape->dims[1].has == MGOPT_ONNX_DIM_HAS_PARAM);
  a = find_attr(n, "tps");
  CHECK(a && a->ntype_protos == 2 && a->type_protos[0].other.len == 0 && a->type_protos[1].other.len > 0);
  a = find_attr(n, "zero");
  CHECK(a && a->i == 0 && (a->has & MGOPT_ONNX_ATTR_HAS_I));
  CHECK(roundtrip_ok(m, bytes, len, 1));
  mgopt_program_destroy(m->program);
  free(bytes);
}

static void test_fixture_control_flow(void) {
  char *bytes;
  size_t len;
  mgopt_onnx_model *m = read_fixture("control_flow.onnx", &bytes, &len);
  const mgopt_onnx_attribute *body;
  REQUIRE(m && m->graph && m->graph->nnodes == 2);
  CHECK_EQ_INT(m->graph->nodes[0].nattributes, 2);
  body = find_attr(&m->graph->nodes[1], "body");
  REQUIRE(body && body->g && body->g->nnodes == 2);
  CHECK_EQ_STR(body->g->nodes[1].op_type.ptr, "If");
  CHECK_EQ_INT(body->g->ninputs, 3);
  /* names are interned: the loop's output and the graph output share a pointer */
  CHECK(m->graph->nodes[1].outputs[0].ptr == m->graph->outputs[0].name.ptr);
  CHECK(roundtrip_ok(m, bytes, len, 1));
  mgopt_program_destroy(m->program);
  free(bytes);
}

static void test_fixture_tensors(void) {
  char *bytes;
  size_t len;
  mgopt_onnx_model *m = read_fixture("tensors.onnx", &bytes, &len);
  const mgopt_onnx_tensor *t;
  const mgopt_onnx_graph *g;
  float v;
  REQUIRE(m && m->graph);
  g = m->graph;
  t = find_init(g, "raw_f32");
  REQUIRE(t);
  CHECK(t->raw_data.len == 24 && t->numel == 6 && t->data_type == MGOPT_ONNX_DT_FLOAT);
  v = harness_le_f32(t->raw_data.ptr + 20); /* raw_data: the file's little-endian bytes */
  CHECK(v == 5.0f);
  t = find_init(g, "empty_f32");
  CHECK(t && t->numel == 0 && (t->has & MGOPT_ONNX_TENSOR_HAS_RAW_DATA) && t->raw_data.len == 0);
  t = find_init(g, "typed_f16");
  CHECK(t && t->nint32_data == 3 && t->int32_data[0] == 0x3c00 && t->int32_data[1] == 0xc000 &&
        t->int32_data[2] == 0x3800);
  CHECK(t && mgopt_onnx_dtype(t->data_type) == MGOPT_DT_FP16);
  t = find_init(g, "typed_bf16");
  CHECK(t && t->nint32_data == 2 && t->int32_data[1] == 0xc000 && mgopt_onnx_dtype(t->data_type) == MGOPT_DT_BF16);
  t = find_init(g, "typed_i8");
  CHECK(t && t->nint32_data == 3 && t->int32_data[0] == -128);
  t = find_init(g, "typed_u64");
  CHECK(t && t->nuint64_data == 1 && t->uint64_data[0] == UINT64_MAX);
  t = find_init(g, "typed_u32");
  CHECK(t && t->nuint64_data == 2 && t->uint64_data[1] == 4294967295u);
  t = find_init(g, "typed_f64");
  CHECK(t && t->ndouble_data == 2 && t->double_data[1] == -1e300);
  t = find_init(g, "typed_i64");
  CHECK(t && t->nint64_data == 2 && t->int64_data[0] == -((int64_t)1 << 62));
  t = find_init(g, "typed_str");
  CHECK(t && t->nstring_data == 3 && t->string_data[2].len == 5 && t->string_data[1].len == 0);
  t = find_init(g, "typed_c64");
  CHECK(t && t->nfloat_data == 2 && t->float_data[1] == -1.0f);
  t = find_init(g, "scalar_f32");
  CHECK(t && t->ndims == 0 && t->numel == 1);
  CHECK(roundtrip_ok(m, bytes, len, 1));
  mgopt_program_destroy(m->program);
  free(bytes);
}

static void test_fixture_sequences_metadata_function(void) {
  char *bytes;
  size_t len;
  mgopt_onnx_model *m = read_fixture("sequences.onnx", &bytes, &len);
  const mgopt_onnx_graph *g;
  REQUIRE(m && m->graph && m->graph->ninputs == 3);
  CHECK(m->graph->inputs[0].type && m->graph->inputs[0].type->other.len > 0 &&
        m->graph->inputs[0].type->tensor_type == NULL);
  CHECK(m->graph->inputs[1].type->other.len > 0 && m->graph->inputs[2].type->other.len > 0);
  CHECK(roundtrip_ok(m, bytes, len, 1));
  mgopt_program_destroy(m->program);
  free(bytes);

  m = read_fixture("metadata.onnx", &bytes, &len);
  REQUIRE(m && m->graph);
  g = m->graph;
  CHECK_EQ_INT(m->model_version, 7);
  CHECK(m->producer_name.len == 10 && memcmp(m->producer_name.ptr, "mkfixtures", 10) == 0);
  CHECK_EQ_INT(m->nmetadata_props, 3);
  CHECK(g->doc_string.len == 9);
  REQUIRE(g->inputs[0].type && g->inputs[0].type->tensor_type && g->inputs[0].type->tensor_type->shape);
  {
    const mgopt_onnx_shape *s = g->inputs[0].type->tensor_type->shape;
    CHECK(s->ndims == 3);
    CHECK((s->dims[0].has & 3u) == MGOPT_ONNX_DIM_HAS_PARAM && strcmp(s->dims[0].param.ptr, "batch") == 0);
    CHECK((s->dims[1].has & 3u) == MGOPT_ONNX_DIM_HAS_VALUE && s->dims[1].value == 3 && s->dims[1].denotation.len == 12);
    CHECK(s->dims[2].has == 0);
    CHECK(g->inputs[0].type->denotation.len == 6);
  }
  CHECK(g->nvalue_info == 2 && g->value_info[1].type->tensor_type->shape == NULL);
  CHECK(g->outputs[1].type->tensor_type->shape && g->outputs[1].type->tensor_type->shape->ndims == 0);
  CHECK(g->outputs[2].type->tensor_type->shape->dims[0].has == MGOPT_ONNX_DIM_HAS_VALUE &&
        g->outputs[2].type->tensor_type->shape->dims[0].value == 0);
  /* the dim param is interned in the program */
  CHECK(g->inputs[0].type->tensor_type->shape->dims[0].param.ptr == mgopt_program_intern_cstr(m->program, "batch"));
  CHECK(roundtrip_ok(m, bytes, len, 1));
  mgopt_program_destroy(m->program);
  free(bytes);

  m = read_fixture("function.onnx", &bytes, &len);
  REQUIRE(m && m->nfunctions == 1);
  CHECK_EQ_INT(m->functions[0].nnodes, 2);
  CHECK_EQ_INT(m->functions[0].ninputs, 2);
  CHECK_EQ_INT(m->functions[0].nattributes, 1);
  CHECK_EQ_STR(m->functions[0].domain.ptr, "test.fn");
  CHECK(roundtrip_ok(m, bytes, len, 1));
  mgopt_program_destroy(m->program);
  free(bytes);
}

static void test_fixture_external(void) {
  char *bytes;
  size_t len;
  mgopt_diag d;
  mgopt_onnx_read_options o;
  mgopt_onnx_model *m = read_fixture("external.onnx", &bytes, &len), *k, *b;
  const mgopt_onnx_tensor *w, *bias;
  float f;
  int64_t i64;
  REQUIRE(m && m->graph);
  w = find_init(m->graph, "w");
  bias = find_init(m->graph, "b");
  REQUIRE(w && bias);
  CHECK(w->data_location == MGOPT_ONNX_LOC_DEFAULT && w->raw_data.len == 1024);
  CHECK_EQ_STR(w->ext_location, "external.onnx.data");
  f = harness_le_f32(w->raw_data.ptr + 4 * 255); /* raw_data: the file's little-endian bytes */
  CHECK(f == 255.0f);
  CHECK(bias->raw_data.len == 2400 && bias->ext_offset == 1024);
  i64 = (int64_t)harness_le(bias->raw_data.ptr + 8 * 299, 8);
  CHECK(i64 == 299);
  CHECK(((uintptr_t)w->raw_data.ptr & 63) == 0);
  /* kept external: the tree is the file's, byte for byte */
  memset(&o, 0, sizeof o);
  o.keep_external = 1;
  if (mgopt_onnx_read_file(FIX "external.onnx", &o, &k, &d) != MGOPT_OK) k = NULL;
  REQUIRE(k != NULL);
  CHECK(find_init(k->graph, "w")->data_location == MGOPT_ONNX_LOC_EXTERNAL);
  CHECK(roundtrip_ok(k, bytes, len, 1));
  /* from a buffer nothing is loaded until asked, then from the given directory */
  if (mgopt_onnx_read(bytes, len, NULL, &b, &d) != MGOPT_OK) b = NULL;
  REQUIRE(b != NULL);
  CHECK(find_init(b->graph, "w")->data_location == MGOPT_ONNX_LOC_EXTERNAL);
  CHECK_EQ_INT(mgopt_onnx_load_external(b, FIX, &d), MGOPT_OK);
  CHECK(find_init(b->graph, "w")->raw_data.len == 1024);
  CHECK(mgopt_onnx_model_equal(b, m, NULL, 0));
  mgopt_program_destroy(b->program);
  mgopt_program_destroy(k->program);
  mgopt_program_destroy(m->program);
  free(bytes);
}

/* An external_data location is relative to the model and stays below it. */
static void test_external_paths_rejected(void) {
  static const char *const bad[] = {"../secret", "/etc/passwd", "a/../../b", "C:\\x", "a/..", ""};
  int i;
  for (i = 0; i < 6; i++) {
    bb t, m, e;
    mgopt_diag d;
    mgopt_onnx_model *mo;
    memset(&t, 0, sizeof t);
    memset(&e, 0, sizeof e);
    bb_int(&t, 1, 1);
    bb_int(&t, 2, 1);
    bb_str(&t, 8, "w");
    bb_str(&e, 1, "location");
    bb_str(&e, 2, bad[i]);
    bb_msg(&t, 13, &e);
    bb_int(&t, 14, 1);
    model_with_tensor(&m, &t);
    if (mgopt_onnx_read(m.b, m.n, NULL, &mo, &d) != MGOPT_OK) mo = NULL;
    REQUIRE(mo != NULL);
    CHECK_EQ_INT(mgopt_onnx_load_external(mo, FIX, &d), MGOPT_ERR_CORRUPT);
    mgopt_program_destroy(mo->program);
  }
  CHECK(mgopt__onnx_location_ok("sub/dir/w.bin", 13));
  CHECK(mgopt__onnx_location_ok("..x", 3));
}

/* A tree built by hand with one initializer of n raw bytes. */
static mgopt_onnx_model *raw_model(size_t n, const char *data) {
  mgopt_program *p = mgopt_program_create(NULL);
  mgopt_onnx_model *m = (mgopt_onnx_model *)mgopt_program_alloc(p, sizeof *m, 8);
  mgopt_onnx_tensor *t;
  m->program = p;
  m->ir_version = 8;
  m->graph = (mgopt_onnx_graph *)mgopt_program_alloc(p, sizeof *m->graph, 8);
  t = (mgopt_onnx_tensor *)mgopt_program_alloc(p, sizeof(mgopt_onnx_tensor) * 2, 8);
  m->graph->initializers = t;
  m->graph->ninitializers = 2;
  t[0].name.ptr = "big";
  t[0].name.len = 3;
  t[0].data_type = MGOPT_ONNX_DT_UINT8;
  t[0].dims = (int64_t *)mgopt_program_alloc(p, 8, 8);
  t[0].dims[0] = (int64_t)n;
  t[0].ndims = 1;
  t[0].raw_data.ptr = data;
  t[0].raw_data.len = n;
  t[1] = t[0];
  t[1].name.ptr = "small";
  t[1].name.len = 5;
  t[1].dims = (int64_t *)mgopt_program_alloc(p, 8, 8);
  t[1].dims[0] = 3;
  t[1].raw_data.len = 3;
  return m;
}

static void test_zero_copy(void) {
  size_t n = (size_t)8 << 20, i;
  char *data = (char *)malloc(n);
  mgopt_onnx_model *src, *m;
  mgopt_buf b;
  mgopt_diag d;
  const mgopt_onnx_tensor *t;
  REQUIRE(data != NULL);
  for (i = 0; i < n; i++) data[i] = (char)(i * 7);
  src = raw_model(n, data);
  memset(&b, 0, sizeof b);
  REQUIRE(mgopt_onnx_write(src, NULL, &b, NULL, &d) == MGOPT_OK);
  if (mgopt_onnx_read(b.data, b.len, NULL, &m, &d) != MGOPT_OK) m = NULL;
  REQUIRE(m != NULL);
  t = find_init(m->graph, "big");
  REQUIRE(t != NULL);
  /* the weights point into the caller's buffer: nothing was copied */
  CHECK(t->raw_data.ptr >= b.data && t->raw_data.ptr + t->raw_data.len <= b.data + b.len);
  CHECK(t->raw_data.len == n && memcmp(t->raw_data.ptr, data, n) == 0);
  CHECK(mgopt_program_arena_bytes(m->program) < n / 8);
  mgopt_program_destroy(m->program);
  mgopt_program_destroy(src->program);
  mgopt_buf_free(&b);
  free(data);
}

/* The streaming writer's pieces, collected: bytes copied out, and how many
   pieces pointed into one given buffer (the caller's weights). */
typedef struct stream_rec {
  mgopt_buf out;
  const char *lo, *hi;
  int inside, pieces, fail_at;
} stream_rec;

static mgopt_status stream_collect(void *ctx, const void *data, size_t n) {
  stream_rec *r = (stream_rec *)ctx;
  const char *c = (const char *)data;
  if (r->pieces++ == r->fail_at) return MGOPT_ERR_IO;
  if (r->lo && c >= r->lo && c + n <= r->hi) r->inside++;
  if (n) {
    size_t at = r->out.len;
    char *nd = (char *)realloc(r->out.data, at + n + 1);
    if (!nd) return MGOPT_ERR_NOMEM;
    memcpy(nd + at, c, n);
    r->out.data = nd;
    r->out.len = at + n;
    r->out.cap = at + n + 1;
  }
  return MGOPT_OK;
}

static void test_write_stream(void) {
  size_t n = (size_t)1 << 20, i;
  char *data = (char *)malloc(n);
  mgopt_onnx_model *src, *m;
  mgopt_buf b, b2;
  mgopt_diag d;
  stream_rec r;
  REQUIRE(data != NULL);
  for (i = 0; i < n; i++) data[i] = (char)(i * 11 + 5);
  src = raw_model(n, data);
  memset(&b, 0, sizeof b);
  REQUIRE(mgopt_onnx_write(src, NULL, &b, NULL, &d) == MGOPT_OK);
  /* re-encode a model read from b: its big tensor is borrowed from b, and the
     stream hands that very memory to the sink instead of a copy */
  if (mgopt_onnx_read(b.data, b.len, NULL, &m, &d) != MGOPT_OK) m = NULL;
  REQUIRE(m != NULL);
  memset(&r, 0, sizeof r);
  r.lo = b.data;
  r.hi = b.data + b.len;
  r.fail_at = -1;
  CHECK(mgopt_onnx_write_stream(m, NULL, stream_collect, &r, NULL, NULL, &d) == MGOPT_OK);
  CHECK_EQ_INT(r.inside, 1);          /* the 1 MB raw_data, from the caller's buffer */
  CHECK(r.pieces >= 3);               /* structure before it, the tensor, structure after */
  CHECK_EQ_INT(r.out.len, b.len);     /* the same bytes as the one-buffer writer */
  CHECK(r.out.data && memcmp(r.out.data, b.data, b.len) == 0);
  /* and the one-buffer writer agrees with itself on the re-read model */
  memset(&b2, 0, sizeof b2);
  CHECK(mgopt_onnx_write(m, NULL, &b2, NULL, &d) == MGOPT_OK);
  CHECK(b2.len == b.len && memcmp(b2.data, b.data, b.len) == 0);
  mgopt_buf_free(&b2);
  free(r.out.data);
  /* a failing sink stops the writer and its status comes back */
  memset(&r, 0, sizeof r);
  r.fail_at = 1;
  CHECK(mgopt_onnx_write_stream(m, NULL, stream_collect, &r, NULL, NULL, &d) == MGOPT_ERR_IO);
  CHECK_EQ_INT(r.pieces, 2);
  CHECK(d.status == MGOPT_ERR_IO);
  free(r.out.data);
  /* external data needs its sink; no model sink is an argument error */
  {
    mgopt_onnx_write_options wo;
    memset(&wo, 0, sizeof wo);
    wo.external_min_bytes = 100;
    memset(&r, 0, sizeof r);
    r.fail_at = -1;
    CHECK(mgopt_onnx_write_stream(m, &wo, stream_collect, &r, NULL, NULL, &d) == MGOPT_ERR_INVALID_ARG);
    CHECK(mgopt_onnx_write_stream(m, NULL, NULL, NULL, NULL, NULL, &d) == MGOPT_ERR_INVALID_ARG);
    free(r.out.data);
  }
  mgopt_program_destroy(m->program);
  mgopt_program_destroy(src->program);
  mgopt_buf_free(&b);
  free(data);
}

static void test_external_write(void) {
  size_t n = 1000, i;
  char *data = (char *)malloc(n);
  mgopt_onnx_model *src, *m, *f;
  mgopt_buf b, ext;
  mgopt_diag d;
  mgopt_onnx_write_options wo;
  const mgopt_onnx_tensor *big, *small;
  char path[512], side[512];
  REQUIRE(data != NULL);
  for (i = 0; i < n; i++) data[i] = (char)(i * 13 + 1);
  src = raw_model(n, data);
  memset(&b, 0, sizeof b);
  memset(&ext, 0, sizeof ext);
  memset(&wo, 0, sizeof wo);
  wo.external_min_bytes = 100;
  CHECK_EQ_INT(mgopt_onnx_write(src, &wo, &b, NULL, &d), MGOPT_ERR_INVALID_ARG);
  REQUIRE(mgopt_onnx_write(src, &wo, &b, &ext, &d) == MGOPT_OK);
  CHECK(ext.len == n);
  CHECK(memcmp(ext.data, data, n) == 0);
  if (mgopt_onnx_read(b.data, b.len, NULL, &m, &d) != MGOPT_OK) m = NULL;
  REQUIRE(m != NULL);
  big = find_init(m->graph, "big");
  small = find_init(m->graph, "small");
  REQUIRE(big && small);
  CHECK(big->data_location == MGOPT_ONNX_LOC_EXTERNAL && big->raw_data.len == 0 && big->nexternal_data == 3);
  CHECK(big->nexternal_data == 3 && big->external_data[0].value.len == 15 &&
        memcmp(big->external_data[0].value.ptr, "model.onnx.data", 15) == 0);
  CHECK(small->data_location == MGOPT_ONNX_LOC_DEFAULT && small->raw_data.len == 3);
  mgopt_program_destroy(m->program);
  mgopt_buf_free(&b);
  mgopt_buf_free(&ext);

  /* through files: two large tensors, each 64-byte aligned in the side file */
  src->graph->initializers[1].raw_data.len = 300;
  src->graph->initializers[1].dims[0] = 300;
  wo.external_min_bytes = 200;
  wo.external_location = NULL;
  tmp_path(path, sizeof path, "ext.onnx");
  tmp_path(side, sizeof side, "ext.onnx.data");
  REQUIRE(mgopt_onnx_write_file(src, path, &wo, &d) == MGOPT_OK);
  if (mgopt_onnx_read_file(path, NULL, &f, &d) != MGOPT_OK) f = NULL;
  REQUIRE(f != NULL);
  big = find_init(f->graph, "big");
  small = find_init(f->graph, "small");
  REQUIRE(big && small);
  CHECK(strstr(big->ext_location, "ext.onnx.data") != NULL && strchr(big->ext_location, '/') == NULL);
  CHECK(big->ext_offset == 0 && small->ext_offset == 1024);
  CHECK(big->raw_data.len == n && memcmp(big->raw_data.ptr, data, n) == 0);
  CHECK(small->raw_data.len == 300 && memcmp(small->raw_data.ptr, data, 300) == 0);
  /* written back inline, the bytes equal the source's */
  {
    mgopt_buf b2, b3;
    memset(&b2, 0, sizeof b2);
    memset(&b3, 0, sizeof b3);
    CHECK(mgopt_onnx_write(f, NULL, &b2, NULL, &d) == MGOPT_OK);
    CHECK(mgopt_onnx_write(src, NULL, &b3, NULL, &d) == MGOPT_OK);
    CHECK(b2.len == b3.len && memcmp(b2.data, b3.data, b2.len) == 0);
    mgopt_buf_free(&b2);
    mgopt_buf_free(&b3);
  }
  /* an unsafe location is refused before anything is written */
  wo.external_location = "../escape.data";
  CHECK_EQ_INT(mgopt_onnx_write_file(src, path, &wo, &d), MGOPT_ERR_INVALID_ARG);
  mgopt_program_destroy(f->program);
  mgopt_program_destroy(src->program);
  remove(path);
  remove(side);
  free(data);
}

/* write_file replaces the target whole (through a temporary next to it) and
   names the path and the system's reason when it cannot; read_file says what
   a path it cannot read is */
static void test_write_file_safe(void) {
  char data[64], path[512], bad[512];
  mgopt_onnx_model *src, *f = NULL;
  mgopt_diag d;
  FILE *old;
  memset(data, 7, sizeof data);
  src = raw_model(sizeof data, data);
  tmp_path(path, sizeof path, "safe.onnx");
  old = fopen(path, "wb");
  REQUIRE(old != NULL);
  fputs("an old file, longer than the model that replaces it ..........................................", old);
  fclose(old);
  REQUIRE(mgopt_onnx_write_file(src, path, NULL, &d) == MGOPT_OK);
  if (mgopt_onnx_read_file(path, NULL, &f, &d) != MGOPT_OK) f = NULL;
  CHECK(f != NULL);
  if (f) mgopt_program_destroy(f->program);
  tmp_path(bad, sizeof bad, "no_such_dir/x.onnx");
  CHECK_EQ_INT(mgopt_onnx_write_file(src, bad, NULL, &d), MGOPT_ERR_IO);
  CHECK(strstr(d.msg, "cannot open") && strstr(d.msg, bad) && strstr(d.msg, strerror(ENOENT)));
  f = NULL;
  CHECK_EQ_INT(mgopt_onnx_read_file(bad, NULL, &f, &d), MGOPT_ERR_IO);
  CHECK(f == NULL && strstr(d.msg, bad) && strstr(d.msg, strerror(ENOENT)));
#ifdef HAVE_DIRENT
  CHECK_EQ_INT(mgopt_onnx_read_file("tests", NULL, &f, &d), MGOPT_ERR_IO);
  CHECK(f == NULL && strstr(d.msg, "cannot read tests: ") && strstr(d.msg, strerror(EISDIR)));
#endif
  CHECK_EQ_INT(mgopt_onnx_read("hello", 5, NULL, &f, &d), MGOPT_ERR_CORRUPT);
  CHECK(f == NULL && strncmp(d.msg, "not an ONNX model (byte 0: ", 27) == 0);
  mgopt_program_destroy(src->program);
  remove(path);
}

static void test_write_too_deep_tree(void) {
  mgopt_onnx_model *m = nested_model(MGOPT__ONNX_TREE_DEPTH);
  mgopt_buf b;
  mgopt_diag d;
  memset(&b, 0, sizeof b);
  CHECK_EQ_INT(mgopt_onnx_write(m, NULL, &b, NULL, &d), MGOPT_ERR_INVALID_ARG);
  mgopt_buf_free(&b);
  mgopt_program_destroy(m->program);
}

/* ---------------------------------------------------------------- ONNX's own test models */

static int testdata_one(const char *path, int *identical) {
  size_t len;
  char *bytes = slurp(path, &len);
  mgopt_diag d;
  mgopt_onnx_model *m;
  int ok;
  if (!bytes) return 0;
  if (mgopt_onnx_read(bytes, len, NULL, &m, &d) != MGOPT_OK) m = NULL;
  if (!m) {
    printf("  %s: %s (offset %lld)\n", path, d.msg, (long long)d.offset);
    free(bytes);
    return 0;
  }
  ok = roundtrip_ok(m, bytes, len, 0);
  if (!ok) printf("  %s: round trip failed\n", path);
  {
    mgopt_buf b;
    memset(&b, 0, sizeof b);
    if (mgopt_onnx_write(m, NULL, &b, NULL, &d) == MGOPT_OK && b.len == len && memcmp(b.data, bytes, len) == 0)
      (*identical)++;
    mgopt_buf_free(&b);
  }
  mgopt_program_destroy(m->program);
  free(bytes);
  return ok;
}

static void test_libonnx_testdata(void) {
#ifdef HAVE_DIRENT
  const char *root = "/usr/share/libonnx-testdata/data";
  DIR *top = opendir(root);
  struct dirent *e1, *e2;
  int total = 0, ok = 0, identical = 0;
  if (!top) {
    printf("note: libonnx-testdata is not installed (%s): test skipped\n", root);
    return;
  }
  while ((e1 = readdir(top)) != NULL) {
    char sub[512];
    DIR *s;
    if (e1->d_name[0] == '.') continue;
    snprintf(sub, sizeof sub, "%s/%s", root, e1->d_name);
    s = opendir(sub);
    if (!s) continue;
    while ((e2 = readdir(s)) != NULL) {
      char path[1024];
      FILE *f;
      if (e2->d_name[0] == '.') continue;
      snprintf(path, sizeof path, "%s/%s/model.onnx", sub, e2->d_name);
      f = fopen(path, "rb");
      if (!f) continue;
      fclose(f);
      total++;
      ok += testdata_one(path, &identical);
    }
    closedir(s);
  }
  closedir(top);
  printf("note: libonnx-testdata: %d models, %d round-trip, %d re-encode byte-identical\n", total, ok,
         identical);
  CHECK_EQ_INT(ok, total);
#else
  printf("note: no directory listing on this platform: libonnx-testdata test skipped\n");
#endif
}

static void test_dtype_helpers(void) {
  CHECK_EQ_INT(mgopt_onnx_dtype(MGOPT_ONNX_DT_FLOAT), MGOPT_DT_FP32);
  CHECK_EQ_INT(mgopt_onnx_dtype(MGOPT_ONNX_DT_BFLOAT16), MGOPT_DT_BF16);
  CHECK_EQ_INT(mgopt_onnx_dtype(99), MGOPT_DT_UNKNOWN);
  CHECK_EQ_INT(mgopt_onnx_raw_nbytes(MGOPT_ONNX_DT_INT4, 3), 2);
  CHECK_EQ_INT(mgopt_onnx_raw_nbytes(MGOPT_ONNX_DT_COMPLEX128, 2), 32);
  CHECK_EQ_INT(mgopt_onnx_raw_nbytes(MGOPT_ONNX_DT_STRING, 2), -1);
  CHECK_EQ_INT(mgopt_onnx_raw_nbytes(MGOPT_ONNX_DT_DOUBLE, INT64_MAX / 4), -1);
}

/* Every table lists its fields by increasing number (the writer's output order). */
static void test_tables_sorted(void) {
  int i, j;
  for (i = 0; i < MGOPT__OM__COUNT; i++) {
    const mgopt__onnx_msg *M = &mgopt__onnx_msgs[i];
    CHECK(M->nfields <= MGOPT__ONNX_MAX_FIELDS);
    for (j = 1; j < M->nfields; j++) CHECK(M->fields[j - 1].num < M->fields[j].num);
  }
}

static const test_case tests[] = {
    TEST(test_varint),
    TEST(test_zigzag_fixed),
    TEST(test_key_skip),
    TEST(test_writer),
    TEST(test_tables_sorted),
    TEST(test_dtype_helpers),
    TEST(test_unknown_fields_skipped),
    TEST(test_packed_and_unpacked),
    TEST(test_byte_order),
    TEST(test_malformed_wire),
    TEST(test_nul_in_names),
    TEST(test_malformed_tensors),
    TEST(test_depth_limit),
    TEST(test_truncation_never_crashes),
    TEST(test_empty_input),
    TEST(test_fixture_attributes),
    TEST(test_fixture_control_flow),
    TEST(test_fixture_tensors),
    TEST(test_fixture_sequences_metadata_function),
    TEST(test_fixture_external),
    TEST(test_external_paths_rejected),
    TEST(test_zero_copy),
    TEST(test_write_stream),
    TEST(test_external_write),
    TEST(test_write_file_safe),
    TEST(test_write_too_deep_tree),
    TEST(test_libonnx_testdata),
};
TEST_MAIN(tests)
