/* src/onnx/ops.c — the ONNX op tables: the families of mappings and the lookups by op type (import) and by kind (export). */
#include "convert_internal.h"

/* Every family of mappings; a new family is one more line here. */
static const mgopt__onnx_family_fn mgopt__onnx_families[] = {
    mgopt__onnx_maps_elementwise,
    mgopt__onnx_maps_shape,
    mgopt__onnx_maps_nn,
    mgopt__onnx_maps_reduce,
    mgopt__onnx_maps_struct,
    mgopt__onnx_maps_quant,
    mgopt__onnx_maps_sparse,
    mgopt__onnx_maps_recurrent,
};

MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_family(int32_t i, int32_t *n) {
  *n = 0;
  if (i < 0 || i >= MGOPT__ARRAY_COUNT(mgopt__onnx_families)) return NULL;
  return mgopt__onnx_families[i](n);
}

MGOPT__PRIVATE int mgopt__onnx_in_range(int32_t since, int32_t until, int64_t opset) {
  return opset >= since && (until == 0 || opset <= until);
}

/* ---------------------------------------------------------------- the importer's index by op type */

static size_t mgopt__onnx_hash(const char *s, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  size_t i;
  for (i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
  return (size_t)h & (MGOPT__ONNX_INDEX_CAP - 1);
}

/* The slot of name (an empty one when the name is not there yet). */
static size_t mgopt__onnx_slot(const mgopt__onnx_index *x, const char *name, size_t len) {
  size_t h = mgopt__onnx_hash(name, len);
  while (x->slots[h].name && !(x->slots[h].len == len && memcmp(x->slots[h].name, name, len) == 0))
    h = (h + 1) & (MGOPT__ONNX_INDEX_CAP - 1);
  return h;
}

static mgopt__onnx_entry *mgopt__onnx_index_add(mgopt__onnx_index *x, const char *name) {
  size_t len = strlen(name);
  mgopt__onnx_entry *e = &x->slots[mgopt__onnx_slot(x, name, len)];
  if (!e->name) {
    /* the tables hold far fewer names than half the slots (a unit test checks) */
    MGOPT_ASSERT(x->count < MGOPT__ONNX_INDEX_CAP / 2);
    e->name = name;
    e->len = len;
    x->count++;
  }
  return e;
}

/* Indexes the rows that hold for `opset`: at most one importing mapping and
   one type rule per name (a unit test checks that the ranges do not overlap);
   a row that only writes a kind back may share the name, and loses to the
   row that imports it. */
MGOPT__PRIVATE void mgopt__onnx_index_build(mgopt__onnx_index *x, int64_t opset) {
  const mgopt__onnx_map *maps;
  const mgopt__onnx_rule *rules;
  int32_t f, i, n;
  memset(x, 0, sizeof *x);
  for (f = 0; (maps = mgopt__onnx_family(f, &n)) != NULL; f++)
    for (i = 0; i < n; i++)
      if (mgopt__onnx_in_range(maps[i].since, maps[i].until, opset)) {
        mgopt__onnx_entry *e = mgopt__onnx_index_add(x, maps[i].onnx);
        if (!e->map || (maps[i].to_ir && !e->map->to_ir)) e->map = &maps[i];
      }
  rules = mgopt__onnx_rules(&n);
  for (i = 0; i < n; i++)
    if (mgopt__onnx_in_range(rules[i].since, rules[i].until, opset)) mgopt__onnx_index_add(x, rules[i].onnx)->rule = &rules[i];
}

/* The entry of an op type of the default domain, or NULL when no row holds it. */
MGOPT__PRIVATE const mgopt__onnx_entry *mgopt__onnx_index_find(const mgopt__onnx_index *x, mgopt_str op_type) {
  const mgopt__onnx_entry *e;
  if (!op_type.len) return NULL;
  e = &x->slots[mgopt__onnx_slot(x, op_type.ptr, op_type.len)];
  return e->name ? e : NULL;
}

/* ---------------------------------------------------------------- the exporter's index by kind */

/* by_kind[k] = the row that writes kind k at `opset` (NULL: none does). */
MGOPT__PRIVATE void mgopt__onnx_kind_index(const mgopt__onnx_map **by_kind, int64_t opset) {
  const mgopt__onnx_map *maps;
  int32_t f, i, n;
  for (i = 0; i < MGOPT_OP__COUNT; i++) by_kind[i] = NULL;
  for (f = 0; (maps = mgopt__onnx_family(f, &n)) != NULL; f++)
    for (i = 0; i < n; i++)
      if (maps[i].to_onnx && maps[i].kind > 0 && maps[i].kind < MGOPT_OP__COUNT &&
          mgopt__onnx_in_range(maps[i].since, maps[i].until, opset))
        by_kind[maps[i].kind] = &maps[i];
}

/* 1 when `kind` is written at `opset` only by a later opset's row: a node
   the importer would map to it could not be written back at the model's
   opset (Gelu before opset 20), so it stays opaque. */
MGOPT__PRIVATE int mgopt__onnx_kind_only_later(int32_t kind, int64_t opset) {
  const mgopt__onnx_map *maps;
  int32_t f, i, n, later = 0;
  for (f = 0; (maps = mgopt__onnx_family(f, &n)) != NULL; f++)
    for (i = 0; i < n; i++)
      if (maps[i].to_onnx && maps[i].kind == kind) {
        if (mgopt__onnx_in_range(maps[i].since, maps[i].until, opset)) return 0;
        if (maps[i].since > opset) later = 1;
      }
  return later;
}

/* The first row that writes `kind` at an opset after `opset`, or NULL. */
MGOPT__PRIVATE const mgopt__onnx_map *mgopt__onnx_kind_later(int32_t kind, int64_t opset) {
  const mgopt__onnx_map *maps, *best = NULL;
  int32_t f, i, n;
  for (f = 0; (maps = mgopt__onnx_family(f, &n)) != NULL; f++)
    for (i = 0; i < n; i++)
      if (maps[i].to_onnx && maps[i].kind == kind && maps[i].since > opset && (!best || maps[i].since < best->since))
        best = &maps[i];
  return best;
}
