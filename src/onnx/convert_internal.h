/* src/onnx/convert_internal.h — private declarations of the ONNX converter: importer and exporter state, the mapping and type-rule tables, and the helpers the mappings share. */
#ifndef MGOPT__ONNX_CONVERT_INTERNAL_H
#define MGOPT__ONNX_CONVERT_INTERNAL_H
#include "../internal.h"
#include "onnx_api.h"
#include "convert_api.h"

/* How the converter is laid out. The importer (import.c) walks a graph and
   its subgraphs and hands each default-domain node to the row of the mapping
   table for its op type and the model's opset; the exporter (export.c) hands
   each canonical op to the row for its kind and the target opset. A row
   names the ONNX op, the opsets it holds for, its import function and its
   export function, which sit side by side in the file of their family
   (map_elementwise.c, map_shape.c, map_nn.c, map_reduce.c). An op that stays
   opaque still gets its output types from the type-rule table
   (opaque_types.c). ops.c lists the families and keeps the lookups. */

#define MGOPT__IMP_MAX_DEPTH 64

/* ---------------------------------------------------------------- scoped name map (scope.c) */

typedef struct mgopt__imap_undo {
  const void *key;
  void *val;
} mgopt__imap_undo;

/* Interned pointer -> pointer, with an undo log so a subgraph's names can be
   popped. Zeroed = empty; al is the allocator (NULL = the default one). */
typedef struct mgopt__imap {
  const mgopt_allocator *al;
  mgopt__map map;
  mgopt__imap_undo *undo;
  int64_t nundo, undo_cap;
  int oom;
} mgopt__imap;

MGOPT__PRIVATE void mgopt__imap_free(mgopt__imap *m);
MGOPT__PRIVATE void *mgopt__imap_get(const mgopt__imap *m, const void *k);
MGOPT__PRIVATE void mgopt__imap_put(mgopt__imap *m, const void *k, void *v);
MGOPT__PRIVATE void mgopt__imap_pop(mgopt__imap *m, int64_t mark);

/* ---------------------------------------------------------------- the tables (ops.c) */

typedef struct mgopt__imp mgopt__imp;
typedef struct mgopt__exp mgopt__exp;
typedef struct mgopt__onnx_map mgopt__onnx_map;
typedef struct mgopt__onnx_rule mgopt__onnx_rule;

/* Builds canonical ops for I->node: 1 when it did, 0 to leave the node opaque
   (nothing it created is read then), -1 on error (d set). */
typedef int (*mgopt__imp_fn)(mgopt__imp *I, const mgopt__onnx_map *m);
/* Writes canonical op `op` as ONNX nodes of the target opset. Runs only on
   an op the row's check accepted, so it fails only when memory runs out. */
typedef mgopt_status (*mgopt__exp_fn)(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m);
/* Why the row cannot write `op` (a short reason), NULL when it can. The one
   test behind both the exporter's refusal and the program's target. */
typedef const char *(*mgopt__exp_check_fn)(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m);
/* Sets the output types of opaque op `op` (made from I->node) that ONNX makes certain. */
typedef mgopt_status (*mgopt__onnx_rule_fn)(mgopt__imp *I, mgopt_op *op, const mgopt__onnx_rule *r);

/* One ONNX op of the default domain over a range of opsets, and the canonical op it maps to. */
struct mgopt__onnx_map {
  const char *onnx;      /* ONNX op type */
  int32_t since, until;  /* the opsets this row is for: since..until, until 0 = every later one */
  int32_t kind;          /* the canonical op (mgopt_op_kind) the import makes or the export writes */
  mgopt__imp_fn to_ir;   /* import; NULL: the ONNX op stays opaque */
  mgopt__exp_fn to_onnx; /* export; NULL: another row writes `kind` (at most one row per kind and opset) */
  const char *slots[3];  /* operand slots as ONNX inputs 0, 1, 2 (for the one-to-one mappings) */
  mgopt__exp_check_fn check; /* what to_onnx can write; NULL: every op of the kind */
};

/* The type rule of one ONNX op (default domain) over a range of opsets. */
struct mgopt__onnx_rule {
  const char *onnx;
  int32_t since, until; /* as in mgopt__onnx_map */
  mgopt__onnx_rule_fn fn;
  int32_t arg; /* what the rule function reads it as is said above the function */
};

/* The rows of one family of mappings; *n gets their count. */
typedef const mgopt__onnx_map *(*mgopt__onnx_family_fn)(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_elementwise(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_shape(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_nn(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_reduce(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_struct(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_quant(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_sparse(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_maps_recurrent(int32_t *n);
MGOPT__PRIVATE const mgopt__onnx_rule *mgopt__onnx_rules(int32_t *n);

/* Family i's rows (*n of them), NULL past the last family. */
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_family(int32_t i, int32_t *n);
MGOPT__PRIVATE int mgopt__onnx_in_range(int32_t since, int32_t until, int64_t opset);

/* The importer's index of op types for one opset: the mapping row and the
   type rule of each name (open addressing over the name's bytes). */
#define MGOPT__ONNX_INDEX_CAP 512
typedef struct mgopt__onnx_entry {
  const char *name;
  size_t len;
  const mgopt__onnx_map *map;
  const mgopt__onnx_rule *rule;
} mgopt__onnx_entry;

typedef struct mgopt__onnx_index {
  mgopt__onnx_entry slots[MGOPT__ONNX_INDEX_CAP];
  int32_t count;
} mgopt__onnx_index;

MGOPT__PRIVATE void mgopt__onnx_index_build(mgopt__onnx_index *x, int64_t opset);
MGOPT__PRIVATE const mgopt__onnx_entry *mgopt__onnx_index_find(const mgopt__onnx_index *x, mgopt_str op_type);

/* The exporter's index: the row that writes each kind at one opset. */
MGOPT__PRIVATE void mgopt__onnx_kind_index(const mgopt__onnx_map **by_kind, int64_t opset);
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_kind_later(int32_t kind, int64_t opset);
MGOPT__PRIVATE int mgopt__onnx_kind_only_later(int32_t kind, int64_t opset);

/* What the exporter can write (export.c). The default-domain opset export
   writes: `requested` when positive, else the imported model's, else 17. */
MGOPT__PRIVATE int64_t mgopt__onnx_export_opset(const mgopt_program *p, int64_t requested);
/* Why `op` cannot be written at `opset` (by_kind: mgopt__onnx_kind_index of
   it): a reason ("" when there is nothing more to say than that), or NULL
   when it can. Reasons that name a dtype or an opset are formatted in buf.
   The exporter refuses an op exactly when this gives a reason, and the ONNX
   target (mgopt_onnx_set_target) accepts one exactly when it gives NULL. */
MGOPT__PRIVATE const char *mgopt__onnx_why_not(mgopt_program *p, const mgopt__onnx_map *const *by_kind, int64_t opset,
                                               const mgopt_op *op, char *buf, size_t cap);

/* ---------------------------------------------------------------- importer state */

/* A model-local function while the importer reads the model (functions.c). */
typedef struct mgopt__imp_func {
  const mgopt_onnx_function *proto;
  const char *name;    /* its IR name (interned); NULL: kept as it came */
  mgopt_type *args;    /* per input, the join of the types its callers pass */
  int64_t ncalls;      /* calls imported so far */
  int64_t pending;     /* calls from functions not decided yet */
  int unseen_callers;  /* a function kept as it came calls it: input types unknown */
  int state;           /* 0 not imported yet, 1 imported, 2 kept as it came, 3 being imported */
  int dirty;           /* imported, but its inputs' types got more general since */
} mgopt__imp_func;

struct mgopt__imp {
  mgopt_program *p;
  mgopt_onnx_model *m;
  mgopt_diag *d;
  mgopt__imap values; /* interned name -> mgopt_value */
  mgopt__imap vinfo;  /* interned name -> mgopt_onnx_type */
  int64_t opset;      /* default-domain opset version */
  int depth;
  mgopt_block *b; /* block being filled */
  const mgopt_onnx_node *node;
  int infer_failed; /* a mapped op's types did not infer (the node then stays opaque) */
  mgopt__onnx_index ops;
  /* model-local functions (functions.c) */
  mgopt__imp_func *fns;
  int64_t nfns;
  mgopt__imap fnames;            /* interned IR name -> 1 + index in fns */
  int in_function;               /* importing a function body: attribute references allowed */
  const mgopt_type *arg_types;   /* the body's argument types */
};

MGOPT__PRIVATE mgopt_status mgopt__imp_fail(mgopt__imp *I, mgopt_status s, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
MGOPT__PRIVATE const char *mgopt__imp_intern(mgopt__imp *I, mgopt_str s);
MGOPT__PRIVATE const char *mgopt__imp_intern_copy(mgopt__imp *I, mgopt_str s);
MGOPT__PRIVATE int mgopt__imp_streq(mgopt_str s, const char *c);
MGOPT__PRIVATE int mgopt__imp_default_domain(mgopt_str domain);

/* model-local functions (functions.c). The opaque op type of a node
   ("onnx::OpType", "domain::OpType", "domain::OpType@overload"), into buf. */
MGOPT__PRIVATE void mgopt__onnx_node_type(char *buf, size_t cap, mgopt_str domain, mgopt_str op_type,
                                          mgopt_str overload);
/* For each of m's functions k: calls[k] the op type of a node calling it,
   names[k] its IR function's name when it is imported (the same string),
   NULL when it is kept as it came. Both interned in p. */
MGOPT__PRIVATE mgopt_status mgopt__onnx_function_names(mgopt_program *p, const mgopt_onnx_model *m, const char **calls,
                                                      const char **names);
/* Sets up I->fns from I->m before any graph is imported. */
MGOPT__PRIVATE mgopt_status mgopt__imp_prepare_functions(mgopt__imp *I);
/* Joins the operand types of opaque op `op` into the function it calls, if any. */
MGOPT__PRIVATE mgopt_status mgopt__imp_note_call(mgopt__imp *I, mgopt_op *op);
/* Imports the functions' bodies, callers first (after `main`). */
MGOPT__PRIVATE mgopt_status mgopt__imp_functions(mgopt__imp *I);
/* Imports graph g as a function body b (import.c): arguments typed I->arg_types. */
MGOPT__PRIVATE mgopt_status mgopt__imp_function_body(mgopt__imp *I, const mgopt_onnx_graph *g, mgopt_block *b);

/* ONNX types and tensors as the IR's (import_values.c) */
MGOPT__PRIVATE mgopt_status mgopt__imp_type(mgopt__imp *I, const mgopt_onnx_type *ot, mgopt_type *out);
MGOPT__PRIVATE mgopt_status mgopt__imp_refine(mgopt__imp *I, mgopt_value *v, const mgopt_onnx_type *ot);
MGOPT__PRIVATE mgopt_tensor *mgopt__imp_tensor(mgopt__imp *I, const mgopt_onnx_tensor *ot);
MGOPT__PRIVATE mgopt_status mgopt__imp_type_bytes(mgopt__imp *I, const mgopt_onnx_type *t, mgopt_str *out);

/* reading the node and building canonical ops (import_build.c) */
MGOPT__PRIVATE const mgopt_onnx_attribute *mgopt__imp_attr(const mgopt_onnx_node *n, const char *name);
MGOPT__PRIVATE int64_t mgopt__imp_aint(const mgopt_onnx_node *n, const char *name, int64_t dflt);
MGOPT__PRIVATE double mgopt__imp_afloat(const mgopt_onnx_node *n, const char *name, double dflt);
MGOPT__PRIVATE int64_t mgopt__imp_aints(const mgopt_onnx_node *n, const char *name, const int64_t **out);
MGOPT__PRIVATE int mgopt__imp_astr(const mgopt_onnx_node *n, const char *name, const char *want);
MGOPT__PRIVATE mgopt_value *mgopt__imp_in(mgopt__imp *I, int64_t k);
MGOPT__PRIVATE int64_t mgopt__imp_nin(const mgopt_onnx_node *n);
MGOPT__PRIVATE int64_t mgopt__imp_nout(const mgopt_onnx_node *n);
MGOPT__PRIVATE int64_t mgopt__imp_const_ints(mgopt__imp *I, mgopt_value *v, int64_t **out);
MGOPT__PRIVATE int64_t mgopt__imp_axes(mgopt__imp *I, int64_t input_k, int attr_form, int64_t **out);
MGOPT__PRIVATE int mgopt__imp_rank(const mgopt_value *v);
MGOPT__PRIVATE int mgopt__imp_is_float(const mgopt_value *v);
MGOPT__PRIVATE int mgopt__imp_known_dtype(const mgopt_value *v);
MGOPT__PRIVATE const char *mgopt__imp_kind_name(int32_t kind);
MGOPT__PRIVATE mgopt_op *mgopt__imp_op(mgopt__imp *I, const char *type, int32_t nouts, int32_t nblocks);
/* A const value holding t (named after the node and `what`), inserted before pos (NULL: at the end). */
MGOPT__PRIVATE mgopt_value *mgopt__imp_const(mgopt__imp *I, mgopt_op *pos, const char *what, mgopt_tensor *t);
MGOPT__PRIVATE mgopt_value *mgopt__imp_const_i32s(mgopt__imp *I, mgopt_op *pos, const char *what, const int64_t *v,
                                                  int64_t n);
MGOPT__PRIVATE mgopt_status mgopt__imp_finish(mgopt__imp *I, mgopt_op *op);
MGOPT__PRIVATE int mgopt__imp_done(mgopt__imp *I, mgopt_op *op);
MGOPT__PRIVATE int mgopt__imp_forwardable(mgopt__imp *I, const mgopt_value *x);
MGOPT__PRIVATE mgopt_status mgopt__imp_forward(mgopt__imp *I, mgopt_value *v);

/* ---------------------------------------------------------------- exporter state */

typedef struct mgopt__exv {
  void *data;
  int64_t n, cap;
} mgopt__exv;

typedef struct mgopt__exg_made { /* a constant the export made: its value and name */
  mgopt_tensor *t;
  const char *name;
} mgopt__exg_made;

typedef struct mgopt__exg { /* a graph being written */
  mgopt__exv nodes, inits, inputs, outputs;
  mgopt__exv sparse; /* sparse_initializers (mgopt_onnx_sparse_tensor) */
  int is_main;
  int inits_ok; /* may hold initializers: main, or a subgraph from IR version 4 (a function body never) */
  /* the constants mgopt__exp_const wrote in this graph, found by content:
     hash -> 1 + index in made (a multimap); made holds mgopt__exg_made */
  mgopt__map by_content;
  mgopt__exv made;
} mgopt__exg;

struct mgopt__exp {
  mgopt_program *p;
  const mgopt_onnx_export_options *o;
  mgopt_diag *d;
  int64_t opset;
  mgopt__exg *g;
  const mgopt_op *op; /* op being written, for messages */
  int depth;
  int sub_inits; /* subgraphs may hold initializers (IR version 4 or later) */
  /* the imported model's nodes by interned name (E itself for a name two
     nodes share), for the names of the subgraphs; built on first need */
  mgopt__map orig_nodes;
  int orig_nodes_built;
  /* names taken in this model (interned pointers): the IR's values, then
     each name the export makes up; with the next suffix per base, so
     exporting one program twice gives the same names */
  mgopt__map names; /* interned name -> 1 */
  mgopt__map fresh; /* interned base -> the next suffix to try */
  const mgopt__onnx_map *by_kind[MGOPT_OP__COUNT]; /* the row that writes each kind at this opset */
  /* writing a model-local function: its body and its output names */
  const mgopt_block *fn_body;
  const char *const *fn_outs;
  mgopt__imap overloads; /* op type of a call to an overloaded function -> 1 */
  /* the first failure that is not memory (mgopt__exp_fail recorded its
     message): a caller that sees only a NULL reports it, not "out of memory" */
  mgopt_status cause;
  mgopt_status status0; /* the program's status when the export began */
};

/* building nodes (export_build.c) */
MGOPT__PRIVATE void *mgopt__exv_push(mgopt__exp *E, mgopt__exv *v, size_t elem);
MGOPT__PRIVATE void mgopt__exv_free(mgopt__exp *E, mgopt__exv *v, size_t elem);
MGOPT__PRIVATE void *mgopt__exv_take(mgopt__exp *E, mgopt__exv *v, size_t elem, int64_t *count);
MGOPT__PRIVATE mgopt_status mgopt__exp_fail(mgopt__exp *E, mgopt_status s, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
MGOPT__PRIVATE mgopt_status mgopt__exp_nomem(mgopt__exp *E);
MGOPT__PRIVATE mgopt_status mgopt__exp_unsupported(mgopt__exp *E, const mgopt_op *op, const char *why);
MGOPT__PRIVATE mgopt_str mgopt__exp_s(const char *c);
MGOPT__PRIVATE int32_t mgopt__exp_dtype(mgopt_dtype t);
MGOPT__PRIVATE mgopt_onnx_type *mgopt__exp_type(mgopt__exp *E, const mgopt_type *t);
MGOPT__PRIVATE const char *mgopt__exp_tensor_why_not(const mgopt_tensor *t, char *buf, size_t cap);
MGOPT__PRIVATE mgopt_status mgopt__exp_tensor(mgopt__exp *E, const mgopt_tensor *t, const char *name,
                                              mgopt_onnx_tensor *ot);
MGOPT__PRIVATE mgopt_onnx_node *mgopt__exp_node(mgopt__exp *E, const char *op_type, const char *domain,
                                                const char *name);
MGOPT__PRIVATE int mgopt__exp_set_io(mgopt__exp *E, mgopt_str **arr, int64_t *cnt, const char *const *names,
                                     int64_t n);
MGOPT__PRIVATE mgopt_onnx_attribute *mgopt__exp_attr(mgopt__exp *E, mgopt_onnx_node *n, const char *name,
                                                     int32_t type);
MGOPT__PRIVATE int mgopt__exp_aint(mgopt__exp *E, mgopt_onnx_node *n, const char *name, int64_t v);
MGOPT__PRIVATE int mgopt__exp_afloat(mgopt__exp *E, mgopt_onnx_node *n, const char *name, double v);
MGOPT__PRIVATE int mgopt__exp_astr(mgopt__exp *E, mgopt_onnx_node *n, const char *name, const char *v);
MGOPT__PRIVATE int mgopt__exp_afloats(mgopt__exp *E, mgopt_onnx_node *n, const char *name, const float *v, int64_t cnt);
MGOPT__PRIVATE int mgopt__exp_aints(mgopt__exp *E, mgopt_onnx_node *n, const char *name, const int64_t *v,
                                    int64_t cnt);
MGOPT__PRIVATE int mgopt__exp_claim(mgopt__exp *E, const char *name);
MGOPT__PRIVATE const char *mgopt__exp_fresh(mgopt__exp *E, const char *base);
MGOPT__PRIVATE const char *mgopt__exp_i64_const(mgopt__exp *E, const char *base, const int64_t *v, int64_t n);
MGOPT__PRIVATE const char *mgopt__exp_const(mgopt__exp *E, const char *base, mgopt_tensor *t);
MGOPT__PRIVATE const char *mgopt__exp_vname(const mgopt_value *v);
/* The operand a mul or real_div is written as Neg or Reciprocal of, or NULL (map_elementwise.c). */
MGOPT__PRIVATE mgopt_value *mgopt__exp_unary_form(const mgopt_op *op, int64_t opset);
MGOPT__PRIVATE const char *mgopt__exp_as_i64(mgopt__exp *E, mgopt_value *v);
MGOPT__PRIVATE mgopt_onnx_node *mgopt__exp_simple(mgopt__exp *E, const mgopt_op *op, const char *op_type,
                                                  const char *const *ins, int64_t nin);
MGOPT__PRIVATE const char *mgopt__exp_in(const mgopt_op *op, const char *slot);
MGOPT__PRIVATE mgopt_status mgopt__exp_done(mgopt__exp *E, const mgopt_onnx_node *n);
/* After op's nodes (from node `first` of the graph being written): its
   fused_activation (relu, relu6) as a Relu or Clip node (map_nn.c). */
MGOPT__PRIVATE mgopt_status mgopt__exp_fused_activation(mgopt__exp *E, const mgopt_op *op, int64_t first);
MGOPT__PRIVATE mgopt_status mgopt__exp_direct(mgopt__exp *E, const mgopt_op *op, const mgopt__onnx_map *m);
MGOPT__PRIVATE const char *mgopt__exw_direct(mgopt_program *p, const mgopt_op *op, const mgopt__onnx_map *m);
/* 1 when linear op is written as MatMul with its constant weight's transposed
   copy (map_nn.c): the constant need not be written for that reader. */
MGOPT__PRIVATE int mgopt__exp_linear_folds_weight(const mgopt_op *op);
/* 1 when lstm / gru / rnn `op` writes constant operand v re-laid (map_recurrent.c). */
MGOPT__PRIVATE int mgopt__exp_recurrent_folds(const mgopt_op *op, const mgopt_value *v);
/* 1 when op is the import's squeeze before or expand_dims after a recurrent
   op that writes it itself (map_recurrent.c): the exporter skips it. */
MGOPT__PRIVATE int mgopt__exp_recurrent_absorbs(const mgopt_op *op);
/* 1 when op's writer writes its constant operands itself, each in its own
   encoding (map_quant.c: compressed weights): they need not be written for it. */
MGOPT__PRIVATE int mgopt__exp_writes_consts(const mgopt_op *op);

#endif /* MGOPT__ONNX_CONVERT_INTERNAL_H */
