/* src/passes/io/sanitize_input_output_names.c — common::sanitize_input_output_names: main's inputs and outputs get valid, unique identifiers.

   Spec: mil_graph_passes.txt, "Sanitize the names of model input and output
   vars ..."; reference mil-passes.md §3.34. This pass changes names on purpose.

   Before:
     main(%"x/0": (2, fp32), %"1st": (2, fp32)) {
       %"out/1": (2, fp32) = add(x=%"x/0", y=%"1st")
       %fp16: (2, fp32) = relu(x=%"out/1")
     } -> (%"out/1", %fp16)
   After:
     main(%x_0: (2, fp32), %var_1st: (2, fp32)) {
       %out_1: (2, fp32) = add(x=%x_0, y=%var_1st)
       %fp16_workaround: (2, fp32) = relu(x=%out_1)
     } -> (%out_1, %fp16_workaround)

   Fires on: inputs (first) and then outputs of function `main` whose names are
   not of the form [A-Za-z_][A-Za-z0-9_]* or are reserved words of the MIL
   text format. Each character outside [A-Za-z0-9_] becomes '_'; a name that
   does not start with a letter or '_' gets the prefix "var_"; reserved words
   (any bool program func tensor list dict tuple true false string bf16 fp16
   fp32 fp64 int8 int16 int32 int64 uint8 uint16 uint32 uint64 state) get the
   suffix "_workaround". A changed name that collides with any value name of
   main gets "_0", then "_1", ... appended cumulatively until it is free.
   Must not fire: valid names; other functions (their signatures stay).
   Cost: O(inputs + outputs) when every name is valid; at the first rename,
   O(values of main) once for the set of names in use. */
#include "../../passes_internal.h"

static const char *const mgopt__sio_reserved[] = {
    "any",   "bool",  "program", "func",  "tensor", "list",   "dict",   "tuple",  "true",
    "false", "string", "bf16",   "fp16",  "fp32",   "fp64",   "int8",   "int16",  "int32",
    "int64", "uint8", "uint16",  "uint32", "uint64", "state"};

/* a set of interned name pointers */
typedef struct mgopt__sio_set {
  mgopt__map map;
  mgopt_block *body; /* its names are collected at the first rename (none when every io name is valid) */
  int oom;
} mgopt__sio_set;

static void mgopt__sio_add(mgopt__sio_set *s, const char *k) {
  if (!k || s->oom) return;
  if (!mgopt__map_get(&s->map, mgopt__map_ptr_key(k), NULL)) s->oom = 1;
}

static int mgopt__sio_has(const mgopt__sio_set *s, const char *k) {
  return mgopt__map_find(&s->map, mgopt__map_ptr_key(k)) != NULL;
}

static void mgopt__sio_collect(mgopt__sio_set *s, mgopt_block *b, int depth) {
  mgopt_op *op;
  int32_t i;
  if (depth > 256) return;
  for (i = 0; i < b->nargs; i++) mgopt__sio_add(s, b->args[i]->name);
  for (op = b->first; op; op = op->next) {
    for (i = 0; i < op->nouts; i++) mgopt__sio_add(s, op->outs[i]->name);
    for (i = 0; i < op->nblocks; i++) mgopt__sio_collect(s, op->blocks[i], depth + 1);
  }
}

static int mgopt__sio_ok_char(char c, int first) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') return 1;
  return !first && c >= '0' && c <= '9';
}

/* renames v if needed; 1 if renamed, -1 on OOM */
static int mgopt__sio_fix(mgopt_program *p, mgopt__sio_set *names, mgopt_value *v) {
  char buf[512];
  const char *name = v->name ? v->name : "";
  size_t n = strlen(name), len = 0, i;
  const char *nn;
  int changed = 0;
  if (n > 400) n = 400;
  if (n == 0 || !mgopt__sio_ok_char(name[0], 1)) {
    memcpy(buf, "var_", 4);
    len = 4;
    changed = 1;
  }
  for (i = 0; i < n; i++) {
    char c = name[i];
    if (!mgopt__sio_ok_char(c, 0)) {
      c = '_';
      changed = 1;
    }
    buf[len++] = c;
  }
  if (n < strlen(name)) changed = 1;
  buf[len] = 0;
  for (i = 0; i < sizeof mgopt__sio_reserved / sizeof mgopt__sio_reserved[0]; i++)
    if (strcmp(buf, mgopt__sio_reserved[i]) == 0) {
      memcpy(buf + len, "_workaround", 12);
      len += 11;
      changed = 1;
      break;
    }
  if (!changed) return 0;
  if (names->body) {
    mgopt__sio_collect(names, names->body, 0);
    names->body = NULL;
  }
  nn = mgopt_program_intern(p, buf, len);
  {
    unsigned k = 0;
    while (nn && mgopt__sio_has(names, nn) && len < sizeof buf - 24) {
      len += (size_t)snprintf(buf + len, sizeof buf - len, "_%u", k++);
      nn = mgopt_program_intern(p, buf, len);
    }
  }
  if (!nn) return -1;
  mgopt__pu_rename(v, nn);
  mgopt__sio_add(names, nn);
  return names->oom ? -1 : 1;
}

static mgopt_status mgopt__sio_run(mgopt_pass_ctx *ctx) {
  mgopt_program *p = ctx->program;
  mgopt_function *f = mgopt_program_function(p, "main");
  mgopt__sio_set names;
  mgopt_status s = MGOPT_OK;
  int32_t i;
  if (!f) return MGOPT_OK;
  memset(&names, 0, sizeof names);
  mgopt__map_init(&names.map, &p->alloc);
  names.body = f->body;
  for (i = 0; i < f->body->nargs + f->body->nouts && !s; i++) {
    mgopt_value *v = i < f->body->nargs ? f->body->args[i] : f->body->outs[i - f->body->nargs]->value;
    int r = names.oom ? -1 : mgopt__sio_fix(p, &names, v);
    if (r < 0) s = mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "sanitize_input_output_names: out of memory");
    else ctx->rewrites += r;
  }
  mgopt__map_free(&names.map);
  return s;
}

MGOPT__DEFINE_PASS(io, common, sanitize_input_output_names,
                   "main's input and output names become valid, unique identifiers", mgopt__sio_run);
