/* tests/compile/static_a.c — one of two translation units that each compile a
   private copy of mgopt with MGOPT_STATIC; linked together they must not clash. */
#define MGOPT_STATIC
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"

typedef const char *(*static_version_fn)(void);

/* This unit's own mgopt_version, for the other unit to compare addresses. */
static_version_fn static_a_version(void);
static_version_fn static_a_version(void) { return mgopt_version; }

/* Builds a one-op program with this unit's copy; returns its op count or -1. */
int64_t static_a_op_count(void);
int64_t static_a_op_count(void) {
  static const int64_t shape[1] = {3};
  const char *slot = "x";
  mgopt_program *p = mgopt_program_create(NULL);
  mgopt_function *f;
  mgopt_type t;
  mgopt_value *x;
  int64_t n = -1;
  if (!p) return -1;
  f = mgopt_function_new(p, "main");
  if (f && mgopt_type_make_static(p, &t, MGOPT_DT_FP32, 1, shape) == MGOPT_OK &&
      (x = mgopt_block_add_arg(f->body, "x", &t)) != NULL) {
    mgopt_op *op = mgopt_build_op(p, f->body, NULL, "sigmoid", "s", 1, &slot, &x, 1);
    if (op && mgopt_block_add_output(f->body, op->outs[0]) == MGOPT_OK) n = mgopt_program_op_count(p);
  }
  mgopt_program_destroy(p);
  return n;
}
