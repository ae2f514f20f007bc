/* src/passes/util.c — legality checks and small rewrite helpers shared by the passes. */
#include "../passes_internal.h"

MGOPT__PRIVATE int mgopt__pu_is_func_output(const mgopt_value *v) {
  const mgopt_use *u;
  int32_t k;
  /* the block-output uses lead the list */
  for (u = v->uses, k = 0; u && k < v->nblock_uses; u = u->next, k++)
    if (!u->op && u->block && !u->block->parent_op) return 1;
  return 0;
}

MGOPT__PRIVATE int mgopt__pu_is_block_output(const mgopt_value *v) { return mgopt_value_is_block_output(v); }

MGOPT__PRIVATE int mgopt__pu_single_use(const mgopt_value *v) {
  return v->nuses == 1 && v->uses->op != NULL;
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_single_user(const mgopt_value *v) {
  return mgopt__pu_single_use(v) ? v->uses->op : NULL;
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_def_of(const mgopt_value *v, int32_t kind) {
  return (v && v->def && v->def->kind == kind) ? v->def : NULL;
}

MGOPT__PRIVATE int mgopt__pu_const_scalar(const mgopt_value *v, double *out) {
  const mgopt_tensor *t = mgopt_value_const(v);
  if (!t || t->numel != 1 || t->dtype == MGOPT_DT_STRING) return 0;
  *out = mgopt_tensor_get_f64(t, 0);
  return 1;
}

MGOPT__PRIVATE int mgopt__pu_const_all(const mgopt_value *v, double x) {
  const mgopt_tensor *t = mgopt_value_const(v);
  return t && t->numel > 0 && mgopt_tensor_all_equal_f64(t, x);
}

MGOPT__PRIVATE int mgopt__pu_types_equal(const mgopt_value *a, const mgopt_value *b) {
  return mgopt_type_equal(&a->type, &b->type);
}

MGOPT__PRIVATE int mgopt__pu_is_dead(const mgopt_op *op) {
  int32_t i;
  if (op->nouts == 0) return 0;
  for (i = 0; i < op->nouts; i++)
    if (op->outs[i]->nuses) return 0;
  return 1;
}

MGOPT__PRIVATE void mgopt__pu_erase_if_dead(mgopt_rewriter *rw, mgopt_op *op) {
  if (op && !(op->flags & MGOPT_OP_ERASED) && mgopt__pu_is_dead(op)) mgopt_rw_erase(rw, op);
}

MGOPT__PRIVATE mgopt_status mgopt__pu_run_patterns(mgopt_pass_ctx *ctx, const mgopt_pattern *pats, int32_t n,
                                                   int fold) {
  mgopt_rewrite_config cfg;
  mgopt_rewrite_stats st;
  mgopt_status s;
  memset(&cfg, 0, sizeof cfg);
  memset(&st, 0, sizeof st);
  cfg.keep_dead = 1;
  if (fold) {
    cfg.fold = ctx->fold;
    cfg.fold_ud = ctx->fold_ud;
  }
  s = mgopt_rewrite_program(ctx->program, pats, n, &cfg, &st, ctx->diag);
  ctx->rewrites += st.rewrites + st.folds;
  return s;
}

/* ---- group B (cleanup, I/O, precision and ONNX IR passes) */

MGOPT__PRIVATE const char *mgopt__pu_name2(mgopt_program *p, const char *a, const char *b) {
  char buf[240];
  size_t la = a ? strlen(a) : 0, lb = b ? strlen(b) : 0;
  if (la > 160) la = 160;
  if (lb > 60) lb = 60;
  if (la) memcpy(buf, a, la);
  if (lb) memcpy(buf + la, b, lb);
  buf[la + lb] = 0;
  if (!la && !lb) return mgopt_program_fresh_name(p, "v");
  if (!mgopt__intern_has(p, buf, la + lb)) return mgopt_program_intern(p, buf, la + lb);
  return mgopt_program_fresh_name(p, buf);
}

MGOPT__PRIVATE const char *mgopt__pu_value_name(const mgopt_value *v) {
  return (v && v->name) ? v->name : "v";
}

MGOPT__PRIVATE int mgopt__pu_static_shape(const mgopt_type *t, int64_t *shape, int32_t cap) {
  int32_t i;
  if (t->kind != MGOPT_TYPE_TENSOR || t->rank < 0 || t->rank > cap) return 0;
  for (i = 0; i < t->rank; i++) {
    if (!mgopt_dim_is_static(t->dims[i])) return 0;
    shape[i] = t->dims[i].v;
  }
  return 1;
}

MGOPT__PRIVATE int mgopt__pu_broadcast(const int64_t *a, int32_t ra, const int64_t *b, int32_t rb, int64_t *out,
                                       int32_t *rout) {
  int32_t r = ra > rb ? ra : rb, i;
  if (r > MGOPT__PU_MAX_RANK) return 0;
  for (i = 0; i < r; i++) {
    int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
    int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
    if (da != db && da != 1 && db != 1) return 0;
    out[i] = da == 1 ? db : da;
  }
  *rout = r;
  return 1;
}

MGOPT__PRIVATE int64_t mgopt__pu_bcast_index(const int64_t *out, int32_t rout, const int64_t *in, int32_t rin,
                                             int64_t flat) {
  int64_t idx = 0, stride = 1;
  int32_t i;
  for (i = rout - 1; i >= 0; i--) {
    int64_t c = flat % out[i];
    int32_t k = i - (rout - rin);
    flat /= out[i];
    if (k < 0) continue;
    if (in[k] != 1) idx += c * stride;
    stride *= in[k];
  }
  return idx;
}

MGOPT__PRIVATE mgopt_tensor *mgopt__pu_const_i32_1d(mgopt_program *p, const int64_t *v, int32_t n) {
  int64_t shape[1];
  mgopt_tensor *t;
  int32_t i;
  shape[0] = n;
  t = mgopt_tensor_new(p, MGOPT_DT_INT32, 1, shape);
  if (!t) return NULL;
  for (i = 0; i < n; i++) mgopt_tensor_set_i64(t, i, v[i]);
  return t;
}

MGOPT__PRIVATE int mgopt__pu_elementwise_hop(const mgopt_op *op, mgopt_value **data) {
  uint32_t tr;
  int32_t s, nvar = 0;
  mgopt_value *var = NULL;
  if (op->kind == MGOPT_OP_OPAQUE || op->nouts != 1 || op->nblocks) return 0;
  tr = mgopt_op_traits(op);
  if (!(tr & MGOPT_TRAIT_PURE) || !(tr & (MGOPT_TRAIT_UNARY | MGOPT_TRAIT_BINARY))) return 0;
  if (tr & MGOPT_TRAIT_LAYOUT_SENSITIVE) return 0;
  for (s = 0; s < op->nslots; s++) {
    int32_t k;
    for (k = 0; k < op->slots[s].n; k++) {
      mgopt_value *v = op->slots[s].uses[k].value;
      const mgopt_tensor *t;
      if (!v) continue;
      t = mgopt_value_const(v);
      if (t && t->numel == 1 && t->rank <= 1 && (tr & MGOPT_TRAIT_BINARY)) continue;
      if (t && (tr & MGOPT_TRAIT_UNARY) && s > 0) continue;
      var = v;
      nvar++;
    }
  }
  if (nvar != 1) return 0;
  if (!mgopt_type_equal(&var->type, &op->outs[0]->type) &&
      (var->type.rank != op->outs[0]->type.rank || var->type.rank < 0))
    return 0;
  *data = var;
  return 1;
}

/* Precision rewriting shared by add_fp16_cast and add_int16_cast. A cache maps
   (block, value, dtype) to the converted value, so consumers in one block
   share one conversion. */
typedef struct mgopt__pu_ckey {
  const mgopt_block *b;
  const mgopt_value *v;
  int32_t dt;
  mgopt_value *cast;
} mgopt__pu_ckey;

typedef struct mgopt__pu_prec {
  mgopt_pass_ctx *ctx;
  mgopt__pu_ckey *tab;
  size_t cap, n;
  const char *suffix;
  mgopt__pu_prec_fn decide;
  mgopt__pu_conv_fn conv;
  void *ud;
  int oom;
} mgopt__pu_prec;

static size_t mgopt__pu_ckey_slot(const mgopt__pu_prec *pr, const mgopt_block *b, const mgopt_value *v, int32_t dt) {
  uint64_t h = ((uint64_t)(uintptr_t)b * 31u) ^ ((uint64_t)(uintptr_t)v * 11400714819323198485ull) ^ (uint64_t)dt;
  size_t i = (size_t)(h ^ (h >> 29)) & (pr->cap - 1);
  while (pr->tab[i].v && !(pr->tab[i].b == b && pr->tab[i].v == v && pr->tab[i].dt == dt)) i = (i + 1) & (pr->cap - 1);
  return i;
}

static mgopt_value *mgopt__pu_cache_get(const mgopt__pu_prec *pr, const mgopt_block *b, const mgopt_value *v,
                                        int32_t dt) {
  size_t i;
  if (!pr->cap) return NULL;
  i = mgopt__pu_ckey_slot(pr, b, v, dt);
  return pr->tab[i].v ? pr->tab[i].cast : NULL;
}

static void mgopt__pu_cache_put(mgopt__pu_prec *pr, const mgopt_block *b, const mgopt_value *v, int32_t dt,
                                mgopt_value *cast) {
  size_t i;
  const mgopt_allocator *al = &pr->ctx->program->alloc;
  if ((pr->n + 1) * 2 > pr->cap) {
    size_t nc = pr->cap ? pr->cap * 2 : 64, k, oc = pr->cap;
    mgopt__pu_ckey *old = pr->tab;
    pr->tab = (mgopt__pu_ckey *)mgopt__heap_realloc(al, NULL, 0, nc * sizeof(mgopt__pu_ckey));
    if (!pr->tab) {
      pr->tab = old;
      pr->oom = 1;
      return;
    }
    memset(pr->tab, 0, nc * sizeof(mgopt__pu_ckey));
    pr->cap = nc;
    for (k = 0; k < oc; k++)
      if (old[k].v) pr->tab[mgopt__pu_ckey_slot(pr, old[k].b, old[k].v, old[k].dt)] = old[k];
    if (old) mgopt__heap_free(al, old, oc * sizeof(mgopt__pu_ckey));
  }
  i = mgopt__pu_ckey_slot(pr, b, v, dt);
  if (!pr->tab[i].v) pr->n++;
  pr->tab[i].b = b;
  pr->tab[i].v = v;
  pr->tab[i].dt = dt;
  pr->tab[i].cast = cast;
}

/* Forgets an entry: it stays in the probe chain but never matches again. */
static void mgopt__pu_cache_drop(mgopt__pu_prec *pr, const mgopt_block *b, const mgopt_value *v, int32_t dt) {
  size_t i;
  if (!pr->cap) return;
  i = mgopt__pu_ckey_slot(pr, b, v, dt);
  if (pr->tab[i].v) {
    pr->tab[i].b = NULL;
    pr->tab[i].dt = -1;
  }
}

MGOPT__PRIVATE mgopt_value *mgopt__pu_cast_value(mgopt_program *p, mgopt_op *pos, mgopt_value *v, mgopt_dtype dt,
                                                 const char *name) {
  static const char *const slot[1] = {"x"};
  mgopt_op *c = mgopt_build_op(p, pos->parent, pos, "cast", name, 1, slot, &v, 1);
  if (!c || mgopt_op_set_string(c, "dtype", mgopt_dtype_name(dt))) return NULL;
  if (mgopt_op_infer(p, c, NULL) != MGOPT_OK || c->outs[0]->type.dtype != dt) {
    /* no inference for cast: the type is x's with the new dtype */
    if (mgopt__type_copy(p, &c->outs[0]->type, &v->type)) return NULL;
    c->outs[0]->type.dtype = (uint8_t)dt;
  }
  return c->outs[0];
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_clone_op(mgopt_program *p, const mgopt_op *op) {
  mgopt_op *n = mgopt_op_new(p, op->type, op->nouts, 0);
  int32_t s, i;
  if (!n) return NULL;
  for (s = 0; s < op->nslots; s++) {
    const mgopt_slot *sl = &op->slots[s];
    mgopt_value *vals[MGOPT__PU_PREC_MAXIN];
    int32_t k;
    if (sl->n > MGOPT__PU_PREC_MAXIN) return NULL;
    for (k = 0; k < sl->n; k++) vals[k] = sl->uses[k].value;
    if (sl->is_list) {
      if (mgopt_op_set_operand_list(n, sl->name, vals, sl->n)) return NULL;
    } else if (mgopt_op_set_operand(n, sl->name, sl->n ? vals[0] : NULL)) {
      return NULL;
    }
  }
  for (i = 0; i < op->nattrs; i++)
    if (mgopt_op_set_attr(n, &op->attrs[i])) return NULL;
  return n;
}

/* Rewrites one op; 1 changed, 0 not, -1 out of memory. */
static int mgopt__pu_prec_op(mgopt__pu_prec *pr, mgopt_op *op) {
  mgopt_program *p = pr->ctx->program;
  mgopt_block *b = op->parent;
  mgopt_op *nop;
  mgopt_value *newv[MGOPT__PU_PREC_MAXIN], *created[MGOPT__PU_PREC_MAXIN], *cval[MGOPT__PU_PREC_MAXIN];
  int32_t cdt[MGOPT__PU_PREC_MAXIN];
  int32_t s, k, i, n = 0, ncreated = 0, nchanged = 0;
  if (mgopt_op_operand_count(op) > MGOPT__PU_PREC_MAXIN || op->nouts < 1) return 0;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      mgopt_value *v = op->slots[s].uses[k].value, *rep = NULL;
      int32_t dt = MGOPT_DT_UNKNOWN;
      int r = v ? pr->decide(op, s, k, v, &dt, &rep, pr->ud) : 0;
      if (r < 0) {
        nchanged = 0;
        goto revert; /* the op must stay as it is */
      }
      newv[n] = v;
      if (r > 0) {
        mgopt_value *c = rep ? rep : mgopt__pu_cache_get(pr, b, v, dt);
        if (!c) {
          c = pr->conv(p, op, v, dt, pr->ud);
          if (!c) return -1;
          mgopt__pu_cache_put(pr, b, v, dt, c);
          cdt[ncreated] = dt;
          cval[ncreated] = v;
          created[ncreated++] = c;
        }
        newv[n] = c;
        nchanged++;
      }
      n++;
    }
  if (!nchanged) return 0;
  nop = mgopt__pu_clone_op(p, op);
  if (!nop) return -1;
  n = 0;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++, n++)
      if (newv[n] != op->slots[s].uses[k].value) mgopt_op_set_operand_at(nop, s, k, newv[n]);
  for (i = 0; i < op->nouts; i++) {
    char buf[300];
    snprintf(buf, sizeof buf, "%.200s%s", mgopt__pu_value_name(op->outs[i]), pr->suffix);
    mgopt_value_set_name(nop->outs[i], mgopt__pu_name2(p, buf, NULL));
  }
  if (op->name) {
    char buf[300];
    snprintf(buf, sizeof buf, "%.200s%s", op->name, pr->suffix);
    mgopt_op_set_name(nop, nop->nouts == 1 ? nop->outs[0]->name : buf);
  }
  mgopt_op_insert_before(nop, op);
  if (mgopt_op_infer(p, nop, NULL) != MGOPT_OK) {
    mgopt_op_erase(nop);
    goto revert;
  }
  /* what replaces each output (nv, or nv cast back) keeps the output's
     declared type, which must hold for the inferred one up to the dtype */
  for (i = 0; i < op->nouts; i++) {
    mgopt_type t = nop->outs[i]->type;
    t.dtype = op->outs[i]->type.dtype;
    if (!mgopt__pu_type_fits(&op->outs[i]->type, &t)) {
      mgopt_op_erase(nop);
      goto revert;
    }
  }
  for (i = 0; i < op->nouts; i++) {
    mgopt_value *ov = op->outs[i], *nv = nop->outs[i], *rep = nv;
    if (nv->type.dtype != ov->type.dtype) {
      char buf[300];
      snprintf(buf, sizeof buf, "%.200s_to_%s", mgopt__pu_value_name(nv), mgopt_dtype_name((mgopt_dtype)ov->type.dtype));
      rep = mgopt__pu_cast_value(p, op, nv, (mgopt_dtype)ov->type.dtype, mgopt__pu_name2(p, buf, NULL));
      if (!rep) return -1;
    }
    if (mgopt__type_copy(p, &rep->type, &ov->type)) return -1;
    mgopt_value_replace_all_uses(ov, rep);
    mgopt__pu_sync_op_name(rep->def);
  }
  mgopt_op_erase(op);
  pr->ctx->rewrites++;
  return 1;
revert:
  for (i = ncreated - 1; i >= 0; i--) {
    mgopt__pu_cache_drop(pr, b, cval[i], cdt[i]);
    if (created[i]->def && created[i]->nuses == 0) mgopt_op_erase(created[i]->def);
  }
  return 0;
}

static int mgopt__pu_prec_block(mgopt__pu_prec *pr, mgopt_block *b, int depth) {
  mgopt_op *op, *next;
  if (depth > 256) {
    mgopt_diag_set(pr->ctx->diag, MGOPT_ERR_LIMIT, "blocks nested too deeply");
    return -1;
  }
  for (op = b->first; op; op = next) {
    int32_t i;
    next = op->next;
    for (i = 0; i < op->nblocks; i++)
      if (mgopt__pu_prec_block(pr, op->blocks[i], depth + 1) < 0) return -1;
    if (op->nblocks || op->kind == MGOPT_OP_OPAQUE || op->kind == MGOPT_OP_const) continue;
    if (mgopt__pu_prec_op(pr, op) < 0 || pr->oom || pr->ctx->program->status) {
      mgopt_diag_set(pr->ctx->diag, MGOPT_ERR_NOMEM, "out of memory");
      return -1;
    }
  }
  return 0;
}

MGOPT__PRIVATE mgopt_status mgopt__pu_precision_run(mgopt_pass_ctx *ctx, const char *suffix, mgopt__pu_prec_fn decide,
                                                    mgopt__pu_conv_fn conv, void *ud) {
  mgopt__pu_prec pr;
  int32_t i;
  int r = 0;
  memset(&pr, 0, sizeof pr);
  pr.ctx = ctx;
  pr.suffix = suffix;
  pr.decide = decide;
  pr.conv = conv;
  pr.ud = ud;
  for (i = 0; i < mgopt_program_function_count(ctx->program) && r == 0; i++)
    r = mgopt__pu_prec_block(&pr, mgopt_program_function_at(ctx->program, i)->body, 0);
  if (pr.tab) mgopt__heap_free(&ctx->program->alloc, pr.tab, pr.cap * sizeof(mgopt__pu_ckey));
  return r < 0 ? (ctx->diag && ctx->diag->status ? ctx->diag->status : MGOPT_ERR_NOMEM) : MGOPT_OK;
}

MGOPT__PRIVATE void mgopt__pu_rename(mgopt_value *v, const char *name) {
  const char *old = v->name;
  mgopt_value_set_name(v, name);
  if (v->def && v->def->nouts == 1 && (!v->def->name || v->def->name == old)) v->def->name = v->name;
}

MGOPT__PRIVATE void mgopt__pu_sync_op_name(mgopt_op *op) {
  if (op && op->nouts == 1 && op->outs[0]->name && mgopt__pu_is_func_output(op->outs[0])) op->name = op->outs[0]->name;
}

/* ---------------------------------------------------------------- group A: cleanup passes */

MGOPT__PRIVATE int64_t mgopt__pu_norm_axis(int64_t axis, int64_t rank) {
  if (rank < 0) return -1;
  if (axis < 0) axis += rank;
  return (axis >= 0 && axis < rank) ? axis : -1;
}

MGOPT__PRIVATE int mgopt__pu_same_known_shape(const mgopt_value *a, const mgopt_value *b) {
  const mgopt_type *s = &a->type, *t = &b->type;
  int32_t i;
  if (s->kind != MGOPT_TYPE_TENSOR || t->kind != MGOPT_TYPE_TENSOR) return 0;
  if (s->dtype == MGOPT_DT_UNKNOWN || s->dtype != t->dtype) return 0;
  if (s->rank < 0 || s->rank != t->rank) return 0;
  for (i = 0; i < s->rank; i++) {
    mgopt_dim x = s->dims[i], y = t->dims[i];
    if (x.sym || y.sym) {
      if (x.sym != y.sym) return 0;
    } else if (x.v < 0 || x.v != y.v) {
      return 0;
    }
  }
  return 1;
}

MGOPT__PRIVATE void mgopt__pu_fill_type(mgopt_program *p, mgopt_op *op, int32_t i, const mgopt_type *t) {
  mgopt_type *o = &op->outs[i]->type;
  if (o->kind == MGOPT_TYPE_TENSOR && o->dtype == MGOPT_DT_UNKNOWN && o->rank < 0)
    (void)mgopt__type_copy(p, o, t);
}

MGOPT__PRIVATE void mgopt__pu_replace_value(mgopt_rewriter *rw, mgopt_value *from, mgopt_value *to) {
  const char *old = to->name;
  mgopt_rw_replace_value(rw, from, to);
  if (to->def && to->name != old && to->def->name == old && to->def->nouts == 1) to->def->name = to->name;
}

MGOPT__PRIVATE mgopt_value *mgopt__pu_replace_keep_io(mgopt_rewriter *rw, mgopt_value *from, mgopt_value *to) {
  mgopt_program *p = mgopt_rw_program(rw);
  if (from == to) return to;
  if (mgopt__pu_is_func_output(from) && (!to->def || mgopt__pu_is_func_output(to))) {
    static const char *const slot[1] = {"x"};
    mgopt_op *id = mgopt_rw_create(rw, from->def, "identity", from->name, 1, slot, &to, 1);
    if (!id) return NULL;
    if (mgopt_op_infer(p, id, NULL)) return NULL;
    mgopt__pu_fill_type(p, id, 0, &from->type);
    to = id->outs[0];
  }
  mgopt__pu_replace_value(rw, from, to);
  return to;
}

MGOPT__PRIVATE int mgopt__pu_set_ints_param(mgopt_rewriter *rw, mgopt_op *op, const mgopt_op *like, const char *name,
                                            const int64_t *v, int64_t n) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *old = like ? mgopt_op_operand(like, name) : NULL;
  mgopt_tensor *t;
  mgopt_value *c;
  mgopt_dtype dt = MGOPT_DT_INT32;
  int64_t k;
  if (!old) {
    if (mgopt_op_slot_index(op, name) >= 0) mgopt_rw_set_operand(rw, op, name, NULL);
    return mgopt_op_set_ints(op, name, v, n) == MGOPT_OK;
  }
  if (mgopt_dtype_is_int((mgopt_dtype)old->type.dtype)) dt = (mgopt_dtype)old->type.dtype;
  t = mgopt_tensor_new(p, dt, 1, &n);
  if (!t) return 0;
  for (k = 0; k < n; k++) mgopt_tensor_set_i64(t, k, v[k]);
  c = mgopt_rw_const(rw, op, mgopt_program_fresh_name(p, name), t);
  if (!c) return 0;
  mgopt_op_remove_attr(op, name);
  old = mgopt_op_operand(op, name);
  mgopt_rw_set_operand(rw, op, name, c);
  if (old) mgopt__pu_erase_if_dead(rw, old->def);
  return 1;
}

MGOPT__PRIVATE void mgopt__pu_op_remove_output(mgopt_op *op, int32_t i) {
  int32_t k;
  MGOPT_ASSERT(i >= 0 && i < op->nouts && op->outs[i]->nuses == 0);
  for (k = i; k + 1 < op->nouts; k++) {
    op->outs[k] = op->outs[k + 1];
    op->outs[k]->index = k;
  }
  op->nouts--;
}

MGOPT__PRIVATE mgopt_op *mgopt__pu_ancestor_in(mgopt_op *op, const mgopt_block *b) {
  int guard = 0;
  while (op && op->parent != b) {
    if (!op->parent || !op->parent->parent_op || ++guard > 4096) return NULL;
    op = op->parent->parent_op;
  }
  return op;
}

MGOPT__PRIVATE mgopt_dtype mgopt__pu_cast_dtype(const mgopt_op *cast) {
  size_t n = 0;
  const char *s = mgopt_op_get_string(cast, "dtype", &n);
  if (!s) return MGOPT_DT_UNKNOWN;
  return mgopt_dtype_from_name(s, n);
}

MGOPT__PRIVATE void mgopt__pu_erase_with_consts(mgopt_rewriter *rw, mgopt_op *op) {
  mgopt_op *consts[8];
  int32_t s, k, n = 0;
  if (!op || (op->flags & MGOPT_OP_ERASED) || !mgopt__pu_is_dead(op)) return;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n && n < 8; k++) {
      mgopt_value *v = op->slots[s].uses[k].value;
      if (v && v->def && v->def->kind == MGOPT_OP_const) consts[n++] = v->def;
    }
  mgopt_rw_erase(rw, op);
  for (k = 0; k < n; k++) mgopt__pu_erase_if_dead(rw, consts[k]);
}

/* ---- attribute identity (const_deduplication, remove_redundant_ops) */

MGOPT__PRIVATE uint64_t mgopt__pu_mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

/* Content hash of an attribute, name included. */
MGOPT__PRIVATE uint64_t mgopt__pu_attr_hash(const mgopt_attr *a) {
  uint64_t h = mgopt__hash_bytes(a->name, strlen(a->name), MGOPT__HASH_SEED);
  int64_t k;
  h = mgopt__pu_mix(h, a->kind);
  switch ((mgopt_attr_kind)a->kind) {
    case MGOPT_ATTR_BOOL:
    case MGOPT_ATTR_INT: return mgopt__pu_mix(h, (uint64_t)a->u.i);
    case MGOPT_ATTR_FLOAT: return mgopt__hash_bytes(&a->u.f, sizeof a->u.f, h);
    case MGOPT_ATTR_STRING: return mgopt__hash_bytes(a->u.s.ptr, a->u.s.len, h);
    case MGOPT_ATTR_BOOLS:
    case MGOPT_ATTR_INTS: return mgopt__hash_bytes(a->u.ints, sizeof(int64_t) * (size_t)a->n, h);
    case MGOPT_ATTR_FLOATS: return mgopt__hash_bytes(a->u.floats, sizeof(double) * (size_t)a->n, h);
    case MGOPT_ATTR_STRINGS:
      for (k = 0; k < a->n; k++) h = mgopt__hash_bytes(a->u.strs[k].ptr, a->u.strs[k].len, mgopt__pu_mix(h, 1));
      return h;
    case MGOPT_ATTR_TENSOR: return a->u.t ? mgopt__pu_mix(h, mgopt_tensor_hash(a->u.t)) : h;
    case MGOPT_ATTR_BYTES: return mgopt__hash_bytes(a->u.bytes, (size_t)a->n, mgopt__pu_mix(h, (uint64_t)a->tag));
    default: return h;
  }
}

/* Same kind and value (floats bitwise); names are not compared. */
MGOPT__PRIVATE int mgopt__pu_attr_equal(const mgopt_attr *a, const mgopt_attr *b) {
  int64_t k;
  if (a->kind != b->kind || a->n != b->n) return 0;
  switch ((mgopt_attr_kind)a->kind) {
    case MGOPT_ATTR_BOOL:
    case MGOPT_ATTR_INT: return a->u.i == b->u.i;
    case MGOPT_ATTR_FLOAT: return memcmp(&a->u.f, &b->u.f, sizeof a->u.f) == 0;
    case MGOPT_ATTR_STRING: return a->u.s.len == b->u.s.len && memcmp(a->u.s.ptr, b->u.s.ptr, a->u.s.len) == 0;
    case MGOPT_ATTR_BOOLS:
    case MGOPT_ATTR_INTS: return a->n == 0 || memcmp(a->u.ints, b->u.ints, sizeof(int64_t) * (size_t)a->n) == 0;
    case MGOPT_ATTR_FLOATS: return a->n == 0 || memcmp(a->u.floats, b->u.floats, sizeof(double) * (size_t)a->n) == 0;
    case MGOPT_ATTR_STRINGS:
      for (k = 0; k < a->n; k++)
        if (a->u.strs[k].len != b->u.strs[k].len ||
            memcmp(a->u.strs[k].ptr, b->u.strs[k].ptr, a->u.strs[k].len) != 0)
          return 0;
      return 1;
    case MGOPT_ATTR_TENSOR: return a->u.t && b->u.t && mgopt_tensor_equal(a->u.t, b->u.t);
    case MGOPT_ATTR_BYTES: return a->tag == b->tag && (a->n == 0 || memcmp(a->u.bytes, b->u.bytes, (size_t)a->n) == 0);
    default: return 1;
  }
}

/* An op's attributes as a set: a hash that ignores their order, and equality
   (same count, each of a's present in b with an equal value). */
MGOPT__PRIVATE uint64_t mgopt__pu_attrs_hash(const mgopt_op *op) {
  uint64_t sum = 0;
  int32_t i;
  for (i = 0; i < op->nattrs; i++) sum += mgopt__pu_attr_hash(&op->attrs[i]);
  return sum;
}

MGOPT__PRIVATE int mgopt__pu_attrs_equal(const mgopt_op *a, const mgopt_op *b) {
  int32_t i;
  if (a->nattrs != b->nattrs) return 0;
  for (i = 0; i < a->nattrs; i++) {
    const mgopt_attr *o = mgopt_op_attr(b, a->attrs[i].name);
    if (!o || !mgopt__pu_attr_equal(&a->attrs[i], o)) return 0;
  }
  return 1;
}

/* ---------------------------------------------------------------- robustness group: typed replacements */

/* Kind, rank and static dims agree; dtypes too unless one side (`either`) or
   the inferred side (!either) does not know its own. */
static int mgopt__pu_fits(const mgopt_type *a, const mgopt_type *b, int either) {
  int32_t k;
  if (a->kind != b->kind) return 0;
  if (a->kind != MGOPT_TYPE_TENSOR) return 1;
  if (b->dtype != MGOPT_DT_UNKNOWN && (!either || a->dtype != MGOPT_DT_UNKNOWN) && a->dtype != b->dtype) return 0;
  if (a->rank >= 0 && b->rank >= 0) {
    if (a->rank != b->rank) return 0;
    if (!a->dims || !b->dims) return a->rank == 0;
    for (k = 0; k < a->rank; k++)
      if (mgopt_dim_is_static(a->dims[k]) && mgopt_dim_is_static(b->dims[k]) && a->dims[k].v != b->dims[k].v)
        return 0;
  }
  return 1;
}

MGOPT__PRIVATE int mgopt__pu_type_fits(const mgopt_type *stored, const mgopt_type *inferred) {
  return mgopt__pu_fits(stored, inferred, 0);
}

MGOPT__PRIVATE int mgopt__pu_types_compatible(const mgopt_type *decl, const mgopt_type *have) {
  return mgopt__pu_fits(decl, have, 1);
}

MGOPT__PRIVATE int mgopt__pu_loop_args_fit(const mgopt_op *op) {
  int32_t si = mgopt_op_slot_index(op, "loop_vars"), nv, i, k;
  if (op->kind != MGOPT_OP_while_loop) return 1;
  nv = si >= 0 ? op->slots[si].n : 0;
  for (i = 0; i < op->nblocks; i++)
    for (k = 0; k < nv && k < op->blocks[i]->nargs; k++)
      if (op->slots[si].uses[k].value &&
          !mgopt__pu_types_compatible(&op->blocks[i]->args[k]->type, &op->slots[si].uses[k].value->type))
        return 0;
  return 1;
}

MGOPT__PRIVATE mgopt_type *mgopt__pu_infer_outputs(mgopt_program *p, const mgopt_op *op, mgopt_type *tmp,
                                                   mgopt_status *st) {
  const mgopt_op_def *def = mgopt_op_def_get(op->kind);
  mgopt_type *inf = tmp;
  mgopt_diag d;
  *st = MGOPT_OK;
  if (!def || !def->infer || op->nouts == 0) return NULL;
  if (op->nouts > 8) {
    inf = (mgopt_type *)mgopt_program_alloc(p, sizeof(mgopt_type) * (size_t)op->nouts, 8);
    if (!inf) {
      *st = MGOPT_ERR_NOMEM;
      return NULL;
    }
  }
  memset(inf, 0, sizeof(mgopt_type) * (size_t)op->nouts);
  mgopt_diag_clear(&d);
  if (def->infer(p, op, inf, &d) != MGOPT_OK) {
    *st = d.status == MGOPT_ERR_NOMEM ? MGOPT_ERR_NOMEM : MGOPT_ERR_TYPE;
    return NULL;
  }
  return inf;
}

MGOPT__PRIVATE int mgopt__pu_infer_fits(mgopt_program *p, const mgopt_op *op) {
  mgopt_type tmp[8], *inf;
  mgopt_status st;
  int32_t i;
  if (!mgopt__pu_loop_args_fit(op)) return 0;
  inf = mgopt__pu_infer_outputs(p, op, tmp, &st);
  if (!inf) return st == MGOPT_OK; /* no inference: nothing to contradict */
  for (i = 0; i < op->nouts; i++)
    if (!mgopt__pu_type_fits(&op->outs[i]->type, &inf[i])) return 0;
  return 1;
}

MGOPT__PRIVATE int mgopt__pu_inferred_type(mgopt_program *p, const mgopt_op *op, int32_t i, mgopt_type *out) {
  mgopt_type tmp[8], *inf;
  mgopt_status st;
  if (i < 0 || i >= op->nouts) return 0;
  inf = mgopt__pu_infer_outputs(p, op, tmp, &st);
  if (!inf) return 0;
  *out = inf[i];
  return 1;
}

/* Every op reading `from` (or owning a nested block that outputs it: cond
   and while_loop infer from their blocks), except `skip`, type checks with
   `from` typed `t`; with `forgive`, a reader that does not type check as it
   is does not count (the retyping did not break it). */
static int mgopt__pu_readers_accept(mgopt_program *p, mgopt_value *from, const mgopt_type *t, const mgopt_op *skip,
                                    int forgive) {
  mgopt_type saved = from->type;
  const mgopt_use *u;
  int ok = 1;
  for (u = from->uses; u && ok; u = u->next) {
    const mgopt_op *user = u->op ? u->op : (u->block ? u->block->parent_op : NULL);
    if (!user || user == skip) continue;
    from->type = *t;
    ok = mgopt__pu_infer_fits(p, user);
    from->type = saved;
    if (!ok && forgive) ok = !mgopt__pu_infer_fits(p, user);
  }
  return ok;
}

MGOPT__PRIVATE int mgopt__pu_uses_accept(mgopt_program *p, mgopt_value *from, const mgopt_type *t, const mgopt_op *skip) {
  return mgopt_type_equal(&from->type, t) || mgopt__pu_readers_accept(p, from, t, skip, 0);
}

/* The one rule for every replacement of `from` (see passes_internal.h). A
   function body's outputs are its signature (main's are the model's declared
   outputs, a called function's are what `call` sites infer from), so there
   only equal types pass, or any type where nothing was declared (dtype and
   rank unknown: a program built through the API without inference). Anywhere
   else the verifier is the arbiter: each reader must still type check with
   `from` typed `t`. Readers' own outputs keep their declared types, so
   nothing further downstream can change. A reader that does not type check
   as it is (a program built through the API without inference) is not held
   against the replacement: it did not break it. `skip` is an op that will
   not read the replacement (the op that produces it). */
static int mgopt__pu_replace_fits_as(mgopt_program *p, mgopt_value *from, const mgopt_type *t, const mgopt_op *skip) {
  const mgopt_type *d = &from->type;
  if (mgopt_type_equal(d, t)) return 1;
  if (mgopt__pu_is_func_output(from) && !(d->kind == MGOPT_TYPE_TENSOR && d->dtype == MGOPT_DT_UNKNOWN && d->rank < 0))
    return 0;
  return mgopt__pu_readers_accept(p, from, t, skip, 1);
}

MGOPT__PRIVATE int mgopt__pu_replace_fits(mgopt_program *p, mgopt_value *from, const mgopt_value *to) {
  if (from == to) return 1;
  return mgopt__pu_replace_fits_as(p, from, &to->type, to->def);
}

MGOPT__PRIVATE int mgopt__pu_replace_static_fits(mgopt_program *p, mgopt_value *from, mgopt_dtype dt, int32_t rank,
                                                const int64_t *shape) {
  mgopt_dim dims[MGOPT__K_MAX_RANK];
  mgopt_type t;
  int32_t k;
  if (rank < 0 || rank > MGOPT__K_MAX_RANK) return 0;
  memset(&t, 0, sizeof t);
  t.kind = MGOPT_TYPE_TENSOR;
  t.dtype = (uint8_t)dt;
  t.rank = rank;
  t.dims = rank ? dims : NULL;
  for (k = 0; k < rank; k++) dims[k] = mgopt_dim_static(shape[k]);
  return mgopt__pu_replace_fits_as(p, from, &t, NULL);
}

MGOPT__PRIVATE int mgopt__pu_adopt_type(mgopt_program *p, mgopt_value *to, mgopt_value *from) {
  if (mgopt_type_equal(&to->type, &from->type)) return 1;
  if (to->type.kind == from->type.kind &&
      (from->type.kind != MGOPT_TYPE_TENSOR || from->type.dtype != MGOPT_DT_UNKNOWN || to->type.dtype == MGOPT_DT_UNKNOWN) &&
      mgopt__pu_type_fits(&from->type, &to->type))
    return mgopt__type_copy(p, &to->type, &from->type) == MGOPT_OK;
  return mgopt__pu_replace_fits(p, from, to);
}

MGOPT__PRIVATE int mgopt__pu_rebase_chain(mgopt_rewriter *rw, mgopt_op *const *chain, int32_t n, mgopt_value *in,
                                          mgopt_value *x, mgopt_value *from) {
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_type saved[MGOPT__PU_MAX_CHAIN];
  const char *slot = NULL;
  int32_t s, k;
  int ok = 1;
  if (n == 0) return mgopt__pu_replace_fits(p, from, x);
  if (n > MGOPT__PU_MAX_CHAIN) return 0;
  for (s = 0; s < chain[0]->nslots && !slot; s++)
    if (chain[0]->slots[s].n == 1 && chain[0]->slots[s].uses[0].value == in) slot = chain[0]->slots[s].name;
  if (!slot) return 0;
  /* a trial behind the rewriter's back: undone without a trace when it fails
     (queueing ops for a change that did not happen would run the pattern
     again and again); made again through the rewriter when it holds */
  for (k = 0; k < n; k++) saved[k] = chain[k]->outs[0]->type;
  if (mgopt_op_set_operand(chain[0], slot, x) != MGOPT_OK) return 0;
  for (k = 0; k < n && ok; k++) ok = mgopt_op_infer(p, chain[k], NULL) == MGOPT_OK;
  if (ok) ok = mgopt__pu_adopt_type(p, chain[n - 1]->outs[0], from);
  (void)mgopt_op_set_operand(chain[0], slot, in);
  if (!ok) {
    for (k = 0; k < n; k++) chain[k]->outs[0]->type = saved[k];
    return 0;
  }
  mgopt_rw_set_operand(rw, chain[0], slot, x);
  for (k = 0; k < n; k++) mgopt_rw_modified(rw, chain[k]);
  return 1;
}

/* ---------------------------------------------------------------- layout of constant data */

MGOPT__PRIVATE mgopt_tensor *mgopt__pu_transpose_data(mgopt_program *p, mgopt_tensor *t, const int64_t *in_shape,
                                                      int32_t rank, const int64_t *perm) {
  int64_t shape[MGOPT__K_MAX_RANK], stride[MGOPT__K_MAX_RANK], st[MGOPT__K_MAX_RANK], acc = 1;
  int bits = mgopt_dtype_bits((mgopt_dtype)t->dtype);
  int32_t i;
  mgopt_tensor *nt;
  const void *src;
  if (rank < 0 || rank > MGOPT__K_MAX_RANK || t->dtype == MGOPT_DT_STRING || bits < 8 || bits % 8)
    return NULL;
  for (i = rank - 1; i >= 0; i--) {
    st[i] = acc;
    acc *= in_shape[i];
  }
  for (i = 0; i < rank; i++) {
    shape[i] = in_shape[perm[i]];
    stride[i] = st[perm[i]];
  }
  src = mgopt_tensor_data(p, t);
  nt = src ? mgopt_tensor_new(p, (mgopt_dtype)t->dtype, rank, shape) : NULL;
  if (!nt) return NULL;
  mgopt__k_strided(nt->data, src, (size_t)(bits / 8), rank, shape, stride, 0);
  return nt;
}
