/* tests/unit/test_onnx_map.c — the ONNX mapping and type-rule tables (one row per op type and opset, one writer per kind and opset, every index fits) and where import errors point. */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include "harness.h"

#define MAX_OPSET 30 /* beyond every opset ONNX has: the open ranges are checked past the last */

static int ranges_overlap(int32_t s1, int32_t u1, int32_t s2, int32_t u2) {
  int64_t o;
  for (o = 1; o <= MAX_OPSET; o++)
    if (mgopt__onnx_in_range(s1, u1, o) && mgopt__onnx_in_range(s2, u2, o)) return 1;
  return 0;
}

/* Every row well formed; two importing rows of one op type never hold for the same opset
   (a row that only writes a kind back may share the name). */
static void test_map_rows(void) {
  const mgopt__onnx_map *a, *b;
  int32_t fa, fb, ia, ib, na, nb, rows = 0;
  for (fa = 0; (a = mgopt__onnx_family(fa, &na)) != NULL; fa++)
    for (ia = 0; ia < na; ia++) {
      rows++;
      CHECK(a[ia].onnx && a[ia].onnx[0]);
      CHECK(a[ia].since >= 1 && (a[ia].until == 0 || a[ia].until >= a[ia].since));
      CHECK(a[ia].to_ir || a[ia].to_onnx);
      CHECK(mgopt_op_def_get(a[ia].kind) != NULL);
      for (fb = 0; (b = mgopt__onnx_family(fb, &nb)) != NULL; fb++)
        for (ib = 0; ib < nb; ib++) {
          if (&b[ib] <= &a[ia] && fb == fa) continue;
          if (!a[ia].to_ir || !b[ib].to_ir) continue;
          if (strcmp(a[ia].onnx, b[ib].onnx) == 0 && ranges_overlap(a[ia].since, a[ia].until, b[ib].since, b[ib].until)) {
            printf("  %s: two mapping rows for one opset\n", a[ia].onnx);
            CHECK(0);
          }
        }
    }
  CHECK(rows > 50);
}

/* At each opset, at most one row writes a kind. */
static void test_one_writer_per_kind(void) {
  int64_t o;
  for (o = 1; o <= MAX_OPSET; o++) {
    int32_t count[MGOPT_OP__COUNT], f, i, n;
    const mgopt__onnx_map *m;
    memset(count, 0, sizeof count);
    for (f = 0; (m = mgopt__onnx_family(f, &n)) != NULL; f++)
      for (i = 0; i < n; i++)
        if (m[i].to_onnx && mgopt__onnx_in_range(m[i].since, m[i].until, o)) count[m[i].kind]++;
    for (i = 0; i < MGOPT_OP__COUNT; i++)
      if (count[i] > 1) {
        printf("  opset %lld: %d rows write %s\n", (long long)o, (int)count[i], mgopt_op_def_get(i)->name);
        CHECK(0);
      }
  }
}

static void test_rule_rows(void) {
  int32_t n, i, j;
  const mgopt__onnx_rule *r = mgopt__onnx_rules(&n);
  CHECK(n > 100);
  for (i = 0; i < n; i++) {
    CHECK(r[i].onnx && r[i].onnx[0] && r[i].fn);
    CHECK(r[i].since >= 1 && (r[i].until == 0 || r[i].until >= r[i].since));
    for (j = i + 1; j < n; j++)
      if (strcmp(r[i].onnx, r[j].onnx) == 0 && ranges_overlap(r[i].since, r[i].until, r[j].since, r[j].until)) {
        printf("  %s: two type rules for one opset\n", r[i].onnx);
        CHECK(0);
      }
  }
}

/* The index of every opset stays under half full, and finds what the tables hold. */
static void test_index(void) {
  static mgopt__onnx_index x; /* 16 KB: not on the stack */
  int64_t o;
  mgopt_str s;
  const mgopt__onnx_entry *e;
  for (o = 1; o <= MAX_OPSET; o++) {
    mgopt__onnx_index_build(&x, o);
    CHECK(x.count > 0 && x.count < MGOPT__ONNX_INDEX_CAP / 2);
  }
  mgopt__onnx_index_build(&x, 13);
  s.ptr = "Squeeze";
  s.len = 7;
  e = mgopt__onnx_index_find(&x, s);
  REQUIRE(e != NULL && e->map != NULL && e->rule != NULL);
  CHECK(e->map->since == 13 && e->rule->since == 13);
  s.len = 3; /* "Squ": a prefix is another name */
  CHECK(mgopt__onnx_index_find(&x, s) == NULL);
  s.ptr = "LSTM";
  s.len = 4;
  e = mgopt__onnx_index_find(&x, s);
  CHECK(e != NULL && e->map != NULL && e->map->kind == MGOPT_OP_lstm && e->rule != NULL);
  mgopt__onnx_index_build(&x, 11);
  s.ptr = "Unsqueeze";
  s.len = 9;
  e = mgopt__onnx_index_find(&x, s);
  CHECK(e != NULL && e->map != NULL && e->rule == NULL); /* the type rule is for the input form, opset 13 on */
}

/* ---------------------------------------------------------------- where import errors point */

static mgopt_str S(mgopt_program *p, const char *s) {
  mgopt_str r;
  r.ptr = mgopt_program_intern_cstr(p, s);
  r.len = strlen(s);
  return r;
}

/* One node: op_type(input) -> output, named `name`. */
static void make_node(mgopt_program *p, mgopt_onnx_node *n, const char *name, const char *op_type, const char *input,
                      const char *output) {
  memset(n, 0, sizeof *n);
  n->name = S(p, name);
  n->op_type = S(p, op_type);
  n->inputs = (mgopt_str *)mgopt_program_alloc(p, sizeof(mgopt_str), 8);
  n->outputs = (mgopt_str *)mgopt_program_alloc(p, sizeof(mgopt_str), 8);
  n->inputs[0] = S(p, input);
  n->outputs[0] = S(p, output);
  n->ninputs = n->noutputs = 1;
}

/* graph `name`: input x (float, unknown shape), the given nodes, output `out`. */
static mgopt_onnx_graph *make_graph(mgopt_program *p, const char *name, mgopt_onnx_node *nodes, int64_t n,
                                    const char *out, int with_input) {
  mgopt_onnx_graph *g = (mgopt_onnx_graph *)mgopt_program_alloc(p, sizeof *g, 8);
  memset(g, 0, sizeof *g);
  g->name = S(p, name);
  g->nodes = nodes;
  g->nnodes = n;
  if (with_input) {
    g->inputs = (mgopt_onnx_value_info *)mgopt_program_alloc(p, sizeof(mgopt_onnx_value_info), 8);
    memset(g->inputs, 0, sizeof *g->inputs);
    g->inputs[0].name = S(p, "x");
    g->ninputs = 1;
  }
  g->outputs = (mgopt_onnx_value_info *)mgopt_program_alloc(p, sizeof(mgopt_onnx_value_info), 8);
  memset(g->outputs, 0, sizeof *g->outputs);
  g->outputs[0].name = S(p, out);
  g->noutputs = 1;
  return g;
}

static mgopt_onnx_model *make_model(mgopt_program *p, mgopt_onnx_graph *g) {
  mgopt_onnx_model *m = (mgopt_onnx_model *)mgopt_program_alloc(p, sizeof *m, 8);
  memset(m, 0, sizeof *m);
  m->program = p;
  m->graph = g;
  m->opset_imports = (mgopt_onnx_opset *)mgopt_program_alloc(p, sizeof(mgopt_onnx_opset), 8);
  memset(m->opset_imports, 0, sizeof *m->opset_imports);
  m->opset_imports[0].domain = S(p, "");
  m->opset_imports[0].version = 17;
  m->nopset_imports = 1;
  return m;
}

static int starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* Node 1 of graph 'g' reads a value nothing defines: the diag names the node
   (op field) and its place (the location before the message). */
static void test_error_names_graph_and_node(void) {
  mgopt_program *p = mgopt_program_create(NULL);
  mgopt_onnx_node *nodes;
  mgopt_diag d;
  REQUIRE(p != NULL);
  nodes = (mgopt_onnx_node *)mgopt_program_alloc(p, 2 * sizeof(mgopt_onnx_node), 8);
  make_node(p, &nodes[0], "first", "Relu", "x", "y");
  make_node(p, &nodes[1], "bad", "Relu", "nowhere", "z");
  memset(&d, 0, sizeof d);
  CHECK_EQ_INT(mgopt_onnx_import(make_model(p, make_graph(p, "g", nodes, 2, "z", 1)), &d), MGOPT_ERR_CORRUPT);
  CHECK_EQ_INT(d.status, MGOPT_ERR_CORRUPT);
  CHECK_EQ_STR(d.op, "bad");
  CHECK(starts_with(d.msg, "graph 'g', node 1 'bad' (Relu): "));
  if (!starts_with(d.msg, "graph 'g', node 1 'bad' (Relu): ")) printf("  got: %s\n", d.msg);
  mgopt_program_destroy(p);
}

/* An error inside a subgraph names the outer node, then the inner one. */
static void test_error_in_subgraph_names_both(void) {
  mgopt_program *p = mgopt_program_create(NULL);
  mgopt_onnx_node *outer, *inner;
  mgopt_onnx_attribute *a;
  mgopt_diag d;
  static const char *const want = "graph 'main', node 0 'branch' (If): graph 'then', node 0 'bad' (Relu): ";
  REQUIRE(p != NULL);
  inner = (mgopt_onnx_node *)mgopt_program_alloc(p, sizeof(mgopt_onnx_node), 8);
  make_node(p, inner, "bad", "Relu", "nowhere", "t");
  outer = (mgopt_onnx_node *)mgopt_program_alloc(p, sizeof(mgopt_onnx_node), 8);
  make_node(p, outer, "branch", "If", "x", "y");
  a = (mgopt_onnx_attribute *)mgopt_program_alloc(p, sizeof(mgopt_onnx_attribute), 8);
  memset(a, 0, sizeof *a);
  a->name = S(p, "then_branch");
  a->type = MGOPT_ONNX_ATTR_GRAPH;
  a->g = make_graph(p, "then", inner, 1, "t", 0);
  outer->attributes = a;
  outer->nattributes = 1;
  memset(&d, 0, sizeof d);
  CHECK_EQ_INT(mgopt_onnx_import(make_model(p, make_graph(p, "main", outer, 1, "y", 1)), &d), MGOPT_ERR_CORRUPT);
  CHECK_EQ_STR(d.op, "bad");
  CHECK(starts_with(d.msg, want));
  if (!starts_with(d.msg, want)) printf("  got: %s\n", d.msg);
  mgopt_program_destroy(p);
}

/* Nested deeper than the message holds: the innermost place is kept whole. */
static void test_error_deep_keeps_innermost(void) {
  mgopt_program *p = mgopt_program_create(NULL);
  mgopt_onnx_node *node;
  mgopt_onnx_graph *g;
  mgopt_diag d;
  char name[32];
  int level;
  REQUIRE(p != NULL);
  node = (mgopt_onnx_node *)mgopt_program_alloc(p, sizeof(mgopt_onnx_node), 8);
  make_node(p, node, "bad", "Relu", "nowhere", "t");
  g = make_graph(p, "inner", node, 1, "t", 0);
  for (level = 0; level < 12; level++) { /* each level: an If whose then_branch is the graph below */
    mgopt_onnx_attribute *a = (mgopt_onnx_attribute *)mgopt_program_alloc(p, sizeof(mgopt_onnx_attribute), 8);
    node = (mgopt_onnx_node *)mgopt_program_alloc(p, sizeof(mgopt_onnx_node), 8);
    snprintf(name, sizeof name, "if_%d", level);
    make_node(p, node, name, "If", "x", "t");
    memset(a, 0, sizeof *a);
    a->name = S(p, "then_branch");
    a->type = MGOPT_ONNX_ATTR_GRAPH;
    a->g = g;
    node->attributes = a;
    node->nattributes = 1;
    snprintf(name, sizeof name, "level_%d", level);
    g = make_graph(p, name, node, 1, "t", level == 11);
  }
  memset(&d, 0, sizeof d);
  CHECK_EQ_INT(mgopt_onnx_import(make_model(p, g), &d), MGOPT_ERR_CORRUPT);
  CHECK_EQ_STR(d.op, "bad");
  CHECK(strstr(d.msg, "graph 'inner', node 0 'bad' (Relu): ") != NULL);
  mgopt_program_destroy(p);
}

/* A graph input declared with rank MGOPT_MAX_RANK is imported; one more dim
   is refused as over a limit. */
static void test_declared_rank_limit(void) {
  int extra;
  for (extra = 0; extra < 2; extra++) {
    mgopt_program *p = mgopt_program_create(NULL);
    mgopt_onnx_node *node;
    mgopt_onnx_graph *g;
    mgopt_onnx_type *ty;
    mgopt_onnx_shape *sh;
    mgopt_diag d;
    int64_t i, n = MGOPT_MAX_RANK + extra;
    REQUIRE(p != NULL);
    node = (mgopt_onnx_node *)mgopt_program_alloc(p, sizeof(mgopt_onnx_node), 8);
    make_node(p, node, "r", "Relu", "x", "y");
    g = make_graph(p, "g", node, 1, "y", 1);
    ty = (mgopt_onnx_type *)mgopt_program_alloc(p, sizeof *ty, 8);
    ty->tensor_type = (mgopt_onnx_tensor_type *)mgopt_program_alloc(p, sizeof *ty->tensor_type, 8);
    sh = (mgopt_onnx_shape *)mgopt_program_alloc(p, sizeof *sh, 8);
    sh->dims = (mgopt_onnx_dim *)mgopt_program_alloc(p, (size_t)n * sizeof *sh->dims, 8);
    for (i = 0; i < n; i++) {
      sh->dims[i].has = MGOPT_ONNX_DIM_HAS_VALUE;
      sh->dims[i].value = 1;
    }
    sh->ndims = n;
    ty->tensor_type->elem_type = MGOPT_ONNX_DT_FLOAT;
    ty->tensor_type->shape = sh;
    g->inputs[0].type = ty;
    memset(&d, 0, sizeof d);
    CHECK_EQ_INT(mgopt_onnx_import(make_model(p, g), &d), extra ? MGOPT_ERR_LIMIT : MGOPT_OK);
    if (!extra)
      CHECK_EQ_INT(mgopt_program_function(p, "main")->body->first->outs[0]->type.rank, MGOPT_MAX_RANK);
    mgopt_program_destroy(p);
  }
}

static const test_case tests[] = {
    TEST(test_map_rows),
    TEST(test_one_writer_per_kind),
    TEST(test_rule_rows),
    TEST(test_index),
    TEST(test_error_names_graph_and_node),
    TEST(test_error_in_subgraph_names_both),
    TEST(test_error_deep_keeps_innermost),
    TEST(test_declared_rank_limit),
};
TEST_MAIN(tests)
