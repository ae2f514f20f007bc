/* tests/unit/test_onnx_subgraph.c — what the ONNX writer keeps of subgraphs and of main's declared outputs: initializers of If/Loop bodies stay initializers of their body (Constant nodes before IR version 4), each tensor written once, subgraph names kept, no growth on a read/write round trip; a declared output shape the graph contradicts is written back and reported.

   Fixtures: tests/fixtures/subgraph/ (made by make_fixtures.py there). */
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"
#include <stdlib.h>

#define FIX "tests/fixtures/subgraph/"

/* ---------------------------------------------------------------- helpers */

static mgopt_onnx_model *read_model(const char *path) {
  mgopt_onnx_model *m = NULL;
  mgopt_diag d;
  mgopt_diag_clear(&d);
  if (mgopt_onnx_read_file(path, NULL, &m, &d) != MGOPT_OK) {
    printf("  %s: %s\n", path, d.msg);
    return NULL;
  }
  return m;
}

/* The imported program of m (destroyed on failure). */
static mgopt_program *import(mgopt_onnx_model *m) {
  mgopt_diag d;
  mgopt_diag_clear(&d);
  if (!m) return NULL;
  if (mgopt_onnx_import(m, &d) != MGOPT_OK) {
    printf("  import: %s\n", d.msg);
    mgopt_program_destroy(m->program);
    return NULL;
  }
  return m->program;
}

static int run(mgopt_program *p, const char *pipeline) {
  mgopt_pipeline_options o;
  mgopt_diag d;
  memset(&o, 0, sizeof o);
  o.verify_each = 1;
  o.strict = 1;
  mgopt_diag_clear(&d);
  if (mgopt_pipeline_run(p, mgopt_builtin_registry(), pipeline, &o, &d) != MGOPT_OK) {
    printf("  %s: %s\n", pipeline, d.msg);
    return 0;
  }
  return 1;
}

/* p exported (keep: keep_constant_nodes) and encoded into out (zeroed by the caller); 0 on failure. */
static int to_bytes(mgopt_program *p, int keep, mgopt_buf *out) {
  mgopt_onnx_export_options eo;
  mgopt_onnx_model *e = NULL;
  mgopt_diag d;
  memset(&eo, 0, sizeof eo);
  eo.keep_constant_nodes = keep;
  mgopt_diag_clear(&d);
  if (mgopt_onnx_export(p, &eo, &e, &d) != MGOPT_OK || mgopt_onnx_write(e, NULL, out, NULL, &d) != MGOPT_OK) {
    printf("  export: %s\n", d.msg);
    return 0;
  }
  return 1;
}

/* The model tree of bytes b (which must outlive it), NULL on failure. */
static mgopt_onnx_model *from_bytes(const mgopt_buf *b) {
  mgopt_onnx_model *m = NULL;
  mgopt_diag d;
  mgopt_diag_clear(&d);
  if (mgopt_onnx_read(b->data, b->len, NULL, &m, &d) != MGOPT_OK) {
    printf("  read back: %s\n", d.msg);
    return NULL;
  }
  return m;
}

static long file_size(const char *path) {
  FILE *f = fopen(path, "rb");
  long n;
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fclose(f);
  return n;
}

static int str_is(mgopt_str s, const char *c) { return s.len == strlen(c) && (!s.len || memcmp(s.ptr, c, s.len) == 0); }

/* The graph attribute `attr` of g's node whose first output is `out`. */
static const mgopt_onnx_graph *subgraph(const mgopt_onnx_graph *g, const char *out, const char *attr) {
  int64_t i, k;
  for (i = 0; g && i < g->nnodes; i++)
    if (g->nodes[i].noutputs && str_is(g->nodes[i].outputs[0], out))
      for (k = 0; k < g->nodes[i].nattributes; k++)
        if (str_is(g->nodes[i].attributes[k].name, attr)) return g->nodes[i].attributes[k].g;
  return NULL;
}

static int count_op(const mgopt_onnx_graph *g, const char *type) {
  int64_t i;
  int n = 0;
  for (i = 0; i < g->nnodes; i++) n += str_is(g->nodes[i].op_type, type);
  return n;
}

static int has_init(const mgopt_onnx_graph *g, const char *name) {
  int64_t i;
  for (i = 0; i < g->ninitializers; i++)
    if (str_is(g->initializers[i].name, name)) return 1;
  return 0;
}

/* 1 when no two initializers of g hold the same dtype, dims and bytes, and
   no name is defined twice (initializers, node outputs). */
static int written_once(const mgopt_onnx_graph *g) {
  int64_t i, j, a, b;
  for (i = 0; i < g->ninitializers; i++)
    for (j = i + 1; j < g->ninitializers; j++) {
      const mgopt_onnx_tensor *x = &g->initializers[i], *y = &g->initializers[j];
      if (str_is(x->name, "") || (x->name.len == y->name.len && !memcmp(x->name.ptr, y->name.ptr, x->name.len))) return 0;
      if (x->data_type == y->data_type && x->ndims == y->ndims &&
          (!x->ndims || !memcmp(x->dims, y->dims, sizeof(int64_t) * (size_t)x->ndims)) &&
          x->raw_data.len == y->raw_data.len && x->raw_data.len && !memcmp(x->raw_data.ptr, y->raw_data.ptr, x->raw_data.len))
        return 0;
    }
  for (i = 0; i < g->nnodes; i++)
    for (a = 0; a < g->nodes[i].noutputs; a++) {
      mgopt_str o = g->nodes[i].outputs[a];
      for (j = 0; j < g->ninitializers; j++)
        if (o.len == g->initializers[j].name.len && !memcmp(o.ptr, g->initializers[j].name.ptr, o.len)) return 0;
      for (j = i + 1; j < g->nnodes; j++)
        for (b = 0; b < g->nodes[j].noutputs; b++)
          if (o.len && o.len == g->nodes[j].outputs[b].len && !memcmp(o.ptr, g->nodes[j].outputs[b].ptr, o.len)) return 0;
    }
  return 1;
}

/* ---------------------------------------------------------------- subgraph initializers */

/* -p none: every initializer of the branches and of the loop body stays in
   its subgraph, under its name; the Constant node becomes an initializer as
   in main; the bounds both Slices read are written once; the graphs keep
   their names; the file does not grow. */
static void test_subgraph_inits_stay(void) {
  mgopt_onnx_model *m = read_model(FIX "subgraph_inits.onnx");
  mgopt_program *p = import(m);
  const mgopt_onnx_graph *then_g, *else_g, *body_g;
  mgopt_onnx_model *w;
  mgopt_buf b;
  long in_size = file_size(FIX "subgraph_inits.onnx");
  int i;
  char nm[32];
  memset(&b, 0, sizeof b);
  REQUIRE(p);
  REQUIRE(to_bytes(p, 0, &b));
  REQUIRE((w = from_bytes(&b)) != NULL);
  CHECK(in_size > 0 && (long)b.len <= in_size);
  then_g = subgraph(w->graph, "y", "then_branch");
  else_g = subgraph(w->graph, "y", "else_branch");
  body_g = subgraph(w->graph, "z", "body");
  REQUIRE(then_g && else_g && body_g);
  CHECK(str_is(then_g->name, "then_g"));
  CHECK(str_is(else_g->name, "else_g"));
  CHECK(str_is(body_g->name, "body_g")); /* an unnamed node: found by its output */
  for (i = 0; i < 8; i++) {
    snprintf(nm, sizeof nm, "bthen%d", i);
    CHECK(has_init(then_g, nm));
    snprintf(nm, sizeof nm, "belse%d", i);
    CHECK(has_init(else_g, nm));
  }
  CHECK(has_init(then_g, "onethen"));
  CHECK(has_init(else_g, "oneelse"));
  CHECK(has_init(then_g, "kthen")); /* the Constant node, an initializer as in main */
  CHECK(has_init(body_g, "w"));
  CHECK(!has_init(w->graph, "w") && !has_init(w->graph, "onethen"));
  CHECK_EQ_INT(count_op(then_g, "Constant"), 0);
  CHECK_EQ_INT(count_op(else_g, "Constant"), 0);
  CHECK_EQ_INT(count_op(body_g, "Constant"), 0);
  /* 8 biases, one, the Slice bounds [0] and [2] (also the Squeeze axes), and kthen */
  CHECK_EQ_INT(then_g->ninitializers, 12);
  CHECK_EQ_INT(else_g->ninitializers, 11);
  CHECK(written_once(then_g));
  CHECK(written_once(else_g));
  CHECK(written_once(w->graph));
  mgopt_program_destroy(w->program);
  mgopt_buf_free(&b);
  mgopt_program_destroy(p);
}

/* keep_constant_nodes: the Constant node stays a node, in a subgraph as in main. */
static void test_subgraph_constant_node_kept(void) {
  mgopt_program *p = import(read_model(FIX "subgraph_inits.onnx"));
  const mgopt_onnx_graph *then_g;
  mgopt_onnx_model *w;
  mgopt_buf b;
  int64_t i;
  int found = 0;
  memset(&b, 0, sizeof b);
  REQUIRE(p);
  REQUIRE(to_bytes(p, 1, &b));
  REQUIRE((w = from_bytes(&b)) != NULL);
  then_g = subgraph(w->graph, "y", "then_branch");
  REQUIRE(then_g);
  for (i = 0; i < then_g->nnodes; i++)
    if (str_is(then_g->nodes[i].op_type, "Constant") && str_is(then_g->nodes[i].outputs[0], "kthen")) found = 1;
  CHECK(found);
  CHECK(!has_init(then_g, "kthen"));
  CHECK(has_init(then_g, "bthen0"));
  mgopt_program_destroy(w->program);
  mgopt_buf_free(&b);
  mgopt_program_destroy(p);
}

/* Before IR version 4 an initializer must also be an input of its graph,
   which a subgraph cannot list: the branches' constants are Constant nodes,
   each written once, none unread. */
static void test_subgraph_ir3_constant_nodes(void) {
  mgopt_onnx_model *m = read_model(FIX "subgraph_inits.onnx");
  mgopt_program *p;
  const mgopt_onnx_graph *then_g, *else_g, *body_g;
  mgopt_onnx_model *w;
  mgopt_buf b;
  memset(&b, 0, sizeof b);
  REQUIRE(m);
  m->ir_version = 3;
  REQUIRE((p = import(m)) != NULL);
  REQUIRE(to_bytes(p, 0, &b));
  REQUIRE((w = from_bytes(&b)) != NULL);
  CHECK_EQ_INT(w->ir_version, 3);
  then_g = subgraph(w->graph, "y", "then_branch");
  else_g = subgraph(w->graph, "y", "else_branch");
  body_g = subgraph(w->graph, "z", "body");
  REQUIRE(then_g && else_g && body_g);
  CHECK_EQ_INT(then_g->ninitializers, 0);
  CHECK_EQ_INT(else_g->ninitializers, 0);
  CHECK_EQ_INT(body_g->ninitializers, 0);
  CHECK_EQ_INT(count_op(then_g, "Constant"), 12);
  CHECK_EQ_INT(count_op(else_g, "Constant"), 11);
  CHECK_EQ_INT(count_op(body_g, "Constant"), 1);
  CHECK(written_once(then_g));
  CHECK(written_once(else_g));
  mgopt_program_destroy(w->program);
  mgopt_buf_free(&b);
  mgopt_program_destroy(p);
}

/* Read back and written again, the model reaches a fixed point (the
   second and third writes are the same bytes: the first may order a
   branch's initializers differently, a Constant node having become one),
   and the default pipeline keeps the branch initializers in their branches. */
static void test_subgraph_fixed_point_and_default(void) {
  mgopt_program *p = import(read_model(FIX "subgraph_inits.onnx")), *q = NULL, *r = NULL;
  mgopt_onnx_model *w;
  mgopt_buf b1, b2, b3;
  const mgopt_onnx_graph *then_g;
  memset(&b1, 0, sizeof b1);
  memset(&b2, 0, sizeof b2);
  memset(&b3, 0, sizeof b3);
  REQUIRE(p);
  REQUIRE(to_bytes(p, 0, &b1));
  REQUIRE((q = import(from_bytes(&b1))) != NULL);
  REQUIRE(to_bytes(q, 0, &b2));
  REQUIRE((r = import(from_bytes(&b2))) != NULL);
  REQUIRE(to_bytes(r, 0, &b3));
  CHECK(b1.len == b2.len);
  CHECK(b2.len == b3.len && !memcmp(b2.data, b3.data, b2.len));
  mgopt_program_destroy(q);
  mgopt_program_destroy(r);
  mgopt_buf_free(&b2);
  memset(&b2, 0, sizeof b2);
  REQUIRE(run(p, "default"));
  REQUIRE(to_bytes(p, 0, &b2));
  REQUIRE((w = from_bytes(&b2)) != NULL);
  CHECK((long)b2.len <= file_size(FIX "subgraph_inits.onnx"));
  then_g = subgraph(w->graph, "y", "then_branch");
  REQUIRE(then_g);
  CHECK(then_g->ninitializers > 0);
  CHECK_EQ_INT(count_op(then_g, "Constant"), 0);
  CHECK(written_once(then_g));
  mgopt_program_destroy(w->program);
  mgopt_buf_free(&b1);
  mgopt_buf_free(&b2);
  mgopt_buf_free(&b3);
  mgopt_program_destroy(p);
}

/* ---------------------------------------------------------------- declared output shapes */

/* 1 when t has `rank` dims as spec says: comma-separated, each a number, a
   symbol, or ? (unknown). */
static int dims_are(const mgopt_type *t, int32_t rank, const char *spec) {
  const char *q = spec;
  int32_t i;
  if (t->rank != rank) return 0;
  for (i = 0; i < rank; i++) {
    size_t n = strcspn(q, ",");
    if (!n) return 0;
    if (q[0] >= '0' && q[0] <= '9') {
      if (t->dims[i].v != strtoll(q, NULL, 10)) return 0;
    } else if (q[0] == '?') {
      if (t->dims[i].v >= 0 || t->dims[i].sym) return 0;
    } else if (!t->dims[i].sym || strlen(t->dims[i].sym) != n || strncmp(t->dims[i].sym, q, n) != 0)
      return 0;
    q += n;
    if (*q == ',') q++;
  }
  return *q == 0;
}

static const mgopt_onnx_value_info *output_named(const mgopt_onnx_graph *g, const char *name) {
  int64_t i;
  for (i = 0; i < g->noutputs; i++)
    if (str_is(g->outputs[i].name, name)) return &g->outputs[i];
  return NULL;
}

/* 1 when vi's shape is dims (an int, or a dim_param when param is set at that index). */
static int onnx_shape_is(const mgopt_onnx_value_info *vi, int64_t n, const int64_t *v, const char *const *param) {
  const mgopt_onnx_shape *s = vi && vi->type && vi->type->tensor_type ? vi->type->tensor_type->shape : NULL;
  int64_t i;
  if (!s || s->ndims != n) return 0;
  for (i = 0; i < n; i++) {
    const mgopt_onnx_dim *d = &s->dims[i];
    if (param[i] ? !((d->has & MGOPT_ONNX_DIM_HAS_PARAM) && str_is(d->param, param[i]))
                 : !((d->has & MGOPT_ONNX_DIM_HAS_VALUE) && d->value == v[i]))
      return 0;
  }
  return 1;
}

/* y is declared [1,seqlen] (rank 2) and computed [1,1,?]; z declared
   [1,7,n] and computed [1,6,n]: both reported, both written as declared.
   w declared [1,6,len] agrees with the graph's [1,6,n]: not reported,
   written as the graph computes it. The same after the default pipeline. */
static void test_declared_output_contradicted(void) {
  mgopt_program *p = import(read_model(FIX "declared_output.onnx"));
  mgopt_onnx_output_conflict c[4];
  mgopt_onnx_model *w;
  mgopt_buf b;
  static const int64_t y_dims[2] = {1, 0}, z_dims[3] = {1, 7, 0}, w_dims[3] = {1, 6, 0};
  static const char *const y_par[2] = {NULL, "seqlen"}, *const z_par[3] = {NULL, NULL, "n"},
                           *const w_par[3] = {NULL, NULL, "n"};
  int pass;
  REQUIRE(p);
  for (pass = 0; pass < 2; pass++) {
    if (pass == 1) REQUIRE(run(p, "default"));
    memset(c, 0, sizeof c);
    REQUIRE(mgopt_onnx_output_conflicts(p, c, 4) == 2);
    CHECK_EQ_STR(c[0].name, "y");
    CHECK(dims_are(&c[0].declared, 2, "1,seqlen"));
    CHECK(dims_are(&c[0].computed, 3, "1,1,?"));
    CHECK_EQ_INT(c[0].declared.dtype, MGOPT_DT_FP32);
    CHECK_EQ_STR(c[1].name, "z");
    CHECK(dims_are(&c[1].declared, 3, "1,7,n"));
    CHECK(dims_are(&c[1].computed, 3, "1,6,n"));
    CHECK_EQ_INT(mgopt_onnx_output_conflicts(p, NULL, 0), 2); /* counted without room */
    CHECK_EQ_INT(mgopt_onnx_output_conflicts(p, c, 1), 2);
    memset(&b, 0, sizeof b);
    REQUIRE(to_bytes(p, 0, &b));
    REQUIRE((w = from_bytes(&b)) != NULL);
    CHECK(onnx_shape_is(output_named(w->graph, "y"), 2, y_dims, y_par));
    CHECK(onnx_shape_is(output_named(w->graph, "z"), 3, z_dims, z_par));
    CHECK(onnx_shape_is(output_named(w->graph, "w"), 3, w_dims, w_par));
    mgopt_program_destroy(w->program);
    mgopt_buf_free(&b);
  }
  mgopt_program_destroy(p);
}

/* A program not read from ONNX has no declarations to contradict. */
static void test_declared_output_none_from_mil(void) {
  static const char src[] = "main(%x: (2, fp32)) {\n  %y: (2, fp32) = relu(x=%x)\n} -> (%y)\n";
  mgopt_program *p = NULL;
  mgopt_onnx_output_conflict c[1];
  mgopt_diag d;
  mgopt_diag_clear(&d);
  REQUIRE(mgopt_mil_parse(src, sizeof src - 1, NULL, &p, &d) == MGOPT_OK);
  CHECK_EQ_INT(mgopt_onnx_output_conflicts(p, c, 1), 0);
  CHECK_EQ_INT(mgopt_onnx_output_conflicts(NULL, c, 1), 0);
  mgopt_program_destroy(p);
}

static const test_case tests[] = {
    TEST(test_subgraph_inits_stay),
    TEST(test_subgraph_constant_node_kept),
    TEST(test_subgraph_ir3_constant_nodes),
    TEST(test_subgraph_fixed_point_and_default),
    TEST(test_declared_output_contradicted),
    TEST(test_declared_output_none_from_mil),
};

TEST_MAIN(tests)
