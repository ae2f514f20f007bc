/* src/core/registry.c — the op registry: operand slots, attributes, traits and type inference per op. */
#include "../internal.h"

/* STUB: being written. */
MGOPTDEF const mgopt_op_def *mgopt_op_def_get(int32_t kind) {
  MGOPT__UNUSED(kind);
  return NULL;
}

MGOPTDEF int32_t mgopt_op_kind_from_name(const char *s, size_t n) {
  static const char *const names[] = {
#define MGOPT__OP_NAME(name) #name,
      MGOPT_OP_LIST(MGOPT__OP_NAME)
#undef MGOPT__OP_NAME
  };
  int32_t i;
  for (i = 0; i < MGOPT__ARRAY_COUNT(names); i++)
    if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0) return i + 1;
  return MGOPT_OP_OPAQUE;
}

MGOPTDEF uint32_t mgopt_op_traits(const mgopt_op *op) {
  const mgopt_op_def *d = mgopt_op_def_get(op->kind);
  return d ? d->traits : 0;
}

MGOPT__PRIVATE const mgopt_attr_def *mgopt__attr_def(int32_t kind, const char *name) {
  const mgopt_op_def *d = mgopt_op_def_get(kind);
  int32_t i;
  if (!d) return NULL;
  for (i = 0; i < d->nattrs; i++)
    if (strcmp(d->attrs[i].name, name) == 0) return &d->attrs[i];
  return NULL;
}
