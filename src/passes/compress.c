/* src/passes/compress.c — the weight compression driver: which consts are weights, their per-weight options and channel axes. */
#include "../passes_internal.h"

/* Reference: mil-passes.md §4.1 (AbstractCompressionPass, OptimizationConfig,
   select_input_output_channel_axis). The walk first collects the weights of
   every block, then offers them one by one, so a callback may build and
   erase freely. Options of a rule are parsed per weight into arena memory
   (a few bytes per weight). */

#define MGOPT__CW_MAX_OPTS 16

static int mgopt__cw_is_constexpr(const mgopt_op *op) {
  return op && (mgopt_op_traits(op) & MGOPT_TRAIT_CONSTEXPR) != 0;
}

static int mgopt__cw_weight_dtype(mgopt_dtype dt) {
  return dt == MGOPT_DT_FP16 || dt == MGOPT_DT_BF16 || dt == MGOPT_DT_FP32 || dt == MGOPT_DT_INT8 ||
         dt == MGOPT_DT_UINT8;
}

/* ---------------------------------------------------------------- channel axes */

/* Axes (not normalized) of the operand in slot `slot` of reader op. */
static void mgopt__cw_reader_axes(const mgopt_op *op, int32_t slot, int64_t *out, int64_t *in) {
  const char *sn = slot >= 0 && slot < op->nslots ? op->slots[slot].name : "";
  *out = 0;
  *in = 1;
  if (op->kind == MGOPT_OP_conv_transpose) {
    *out = 1;
    *in = 0;
  } else if (op->kind == MGOPT_OP_matmul && strcmp(sn, "y") == 0) {
    int t = mgopt_op_get_bool(op, "transpose_y", 0);
    *out = t ? -2 : -1;
    *in = t ? -1 : -2;
  } else if (op->kind == MGOPT_OP_matmul && strcmp(sn, "x") == 0) {
    int t = mgopt_op_get_bool(op, "transpose_x", 0);
    *out = t ? -1 : -2;
    *in = t ? -2 : -1;
  }
}

/* Folds the axes every reader of v gives into *out / *in (normalized for
   `rank`; -2 = nothing seen yet, -1 = disagreement). Depth-limited through
   constexpr_* readers. */
static void mgopt__cw_axes_of(const mgopt_value *v, int32_t rank, int32_t *out, int32_t *in, int depth) {
  const mgopt_use *u;
  for (u = v->uses; u; u = u->next) {
    int64_t o, i;
    if (!u->op) continue;
    if (mgopt__cw_is_constexpr(u->op) && depth < 8) {
      int32_t k;
      for (k = 0; k < u->op->nouts; k++) mgopt__cw_axes_of(u->op->outs[k], rank, out, in, depth + 1);
      continue;
    }
    mgopt__cw_reader_axes(u->op, u->slot, &o, &i);
    o = mgopt__pu_norm_axis(o, rank);
    i = mgopt__pu_norm_axis(i, rank);
    if (*out == -2) {
      *out = (int32_t)o;
      *in = (int32_t)i;
    } else if (*out != (int32_t)o || *in != (int32_t)i) {
      *out = *in = -1;
    }
  }
}

/* The weight a const finally gives through a chain of constexpr_* ops (the
   reference's _get_weight_to_compress_size): from the op, the first output
   that is read; its first reader, when constexpr_*, continues the chain;
   otherwise the op's first output is the weight. Depth-limited. */
static const mgopt_value *mgopt__cw_final(const mgopt_op *op) {
  int depth;
  for (depth = 0; depth < 8; depth++) {
    const mgopt_op *next = NULL;
    int32_t k;
    for (k = 0; k < op->nouts && !next; k++) {
      const mgopt_use *u;
      for (u = op->outs[k]->uses; u && !u->op; u = u->next) {
      }
      if (!u) continue;
      if (!mgopt__cw_is_constexpr(u->op)) return op->outs[0];
      next = u->op;
    }
    if (!next) return op->outs[0];
    op = next;
  }
  return op->outs[0];
}

/* ---------------------------------------------------------------- configuration */

static int mgopt__cw_rule_for_pass(const mgopt_compress_rule *r, const char *pass) {
  return !r->pass || !r->pass[0] || strcmp(r->pass, pass) == 0 ||
         (strncmp(r->pass, "common::", 8) == 0 && strcmp(r->pass + 8, pass) == 0);
}

/* The last rule for the pass of this scope and key (key NULL: GLOBAL), or NULL. */
static const mgopt_compress_rule *mgopt__cw_find(const mgopt_compress_config *c, const char *pass, int32_t scope,
                                                 const char *key) {
  const mgopt_compress_rule *hit = NULL;
  int32_t i;
  for (i = 0; i < c->nrules; i++) {
    const mgopt_compress_rule *r = &c->rules[i];
    if (r->scope != scope || !mgopt__cw_rule_for_pass(r, pass)) continue;
    if (scope != MGOPT_COMPRESS_GLOBAL && (!key || !r->key || strcmp(r->key, key) != 0)) continue;
    hit = r;
  }
  return hit;
}

/* The rule of one reading op (name, type, global), NULL when none. */
static const mgopt_compress_rule *mgopt__cw_op_rule(const mgopt_compress_config *c, const char *pass,
                                                    const mgopt_op *op) {
  const mgopt_compress_rule *r = op->name ? mgopt__cw_find(c, pass, MGOPT_COMPRESS_OP_NAME, op->name) : NULL;
  if (!r) r = mgopt__cw_find(c, pass, MGOPT_COMPRESS_OP_TYPE, op->type);
  if (!r) r = mgopt__cw_find(c, pass, MGOPT_COMPRESS_GLOBAL, NULL);
  return r;
}

static const char *mgopt__cw_rule_text(const mgopt_compress_rule *r) {
  return r && r->options && strcmp(r->options, "skip") != 0 ? r->options : NULL;
}

/* The ops whose configuration decides for const value v: its readers, or,
   when every reader is constexpr_*, the readers of the first one. */
static const mgopt_value *mgopt__cw_deciding_value(const mgopt_value *v) {
  int depth;
  for (depth = 0; depth < 8; depth++) {
    const mgopt_use *u;
    const mgopt_op *first = NULL;
    int all = 1;
    for (u = v->uses; u; u = u->next) {
      if (!u->op) continue;
      if (!first) first = u->op;
      if (!mgopt__cw_is_constexpr(u->op)) all = 0;
    }
    if (!first || !all || first->nouts < 1) return v;
    v = first->outs[first->nouts - 1];
  }
  return v;
}

/* Resolves the options text of weight value v: 1 and *text (NULL: no rule,
   the pass's own options) when it is to be compressed, 0 when it is left alone. */
static int mgopt__cw_resolve(const mgopt_compress_config *c, const char *pass, const mgopt_value *v,
                             const char **text) {
  const mgopt_compress_rule *r;
  const mgopt_value *dv;
  const mgopt_use *u;
  int32_t i, any = 0, seen = 0;
  *text = NULL;
  if (!c || c->nrules <= 0) return 1;
  for (i = 0; i < c->nrules; i++)
    if (mgopt__cw_rule_for_pass(&c->rules[i], pass)) any = 1;
  if (!any) return 1;
  r = v->name ? mgopt__cw_find(c, pass, MGOPT_COMPRESS_OP_NAME, v->name) : NULL;
  if (!r && v->def && v->def->name) r = mgopt__cw_find(c, pass, MGOPT_COMPRESS_OP_NAME, v->def->name);
  if (r) {
    *text = mgopt__cw_rule_text(r);
    return *text != NULL;
  }
  dv = mgopt__cw_deciding_value(v);
  for (u = dv->uses; u; u = u->next) {
    const char *t;
    if (!u->op) continue;
    r = mgopt__cw_op_rule(c, pass, u->op);
    t = mgopt__cw_rule_text(r);
    if (!t) return 0; /* no rule, or skip: not compressed (and a disagreement with any other) */
    if (seen && strcmp(t, *text) != 0) return 0;
    *text = t;
    seen = 1;
  }
  return seen;
}

/* Parses "name=value, ..." over vals (the pass's option order). 1 ok, 0 bad
   text (diag set), -1 OOM. */
static int mgopt__cw_parse(mgopt_pass_ctx *ctx, const mgopt__cw_pass *cp, const char *text, mgopt_opt_value *vals) {
  const char *q = text;
  for (;;) {
    const char *on, *ov;
    size_t onl, ovl;
    int32_t i, oi = -1;
    char tmp[128], *end;
    while (*q == ' ' || *q == '\t') q++;
    if (!*q) return 1;
    on = q;
    while (*q && *q != '=' && *q != ' ' && *q != '\t' && *q != ',') q++;
    onl = (size_t)(q - on);
    for (i = 0; i < cp->nopts; i++)
      if (strlen(cp->opts[i].name) == onl && memcmp(cp->opts[i].name, on, onl) == 0) oi = i;
    while (*q == ' ' || *q == '\t') q++;
    if (oi < 0 || *q != '=') {
      mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "%s: compression config: no option '%.*s' in \"%s\"",
                     cp->name, (int)onl, on, text);
      return 0;
    }
    q++;
    while (*q == ' ' || *q == '\t') q++;
    if (*q == '"') {
      ov = ++q;
      while (*q && *q != '"') q++;
      ovl = (size_t)(q - ov);
      if (*q) q++;
    } else {
      ov = q;
      while (*q && *q != ',' && *q != ' ' && *q != '\t') q++;
      ovl = (size_t)(q - ov);
    }
    if (ovl >= sizeof tmp) ovl = sizeof tmp - 1;
    memcpy(tmp, ov, ovl);
    tmp[ovl] = 0;
    switch ((mgopt_opt_kind)cp->opts[oi].kind) {
      case MGOPT_OPT_BOOL:
        if (strcmp(tmp, "true") == 0 || strcmp(tmp, "1") == 0) vals[oi].i = 1;
        else if (strcmp(tmp, "false") == 0 || strcmp(tmp, "0") == 0) vals[oi].i = 0;
        else ovl = 0;
        break;
      case MGOPT_OPT_INT:
        vals[oi].i = strtoll(tmp, &end, 10);
        if (*end) ovl = 0;
        break;
      case MGOPT_OPT_FLOAT:
        vals[oi].f = strtod(tmp, &end);
        if (*end) ovl = 0;
        break;
      case MGOPT_OPT_STRING:
        vals[oi].s = mgopt__dupz(ctx->program, tmp, strlen(tmp));
        if (!vals[oi].s) return -1;
        break;
    }
    if (!ovl) {
      mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "%s: compression config: bad value for '%s' in \"%s\"",
                     cp->name, cp->opts[oi].name, text);
      return 0;
    }
    if (!mgopt__pm_allowed(&cp->opts[oi], &vals[oi])) {
      char at[160];
      mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG,
                     "%s: compression config: bad value '%s' for '%s' in \"%s\" (allowed: %s)", cp->name, tmp,
                     cp->opts[oi].name, text, mgopt__pm_allowed_text(&cp->opts[oi], at, sizeof at));
      return 0;
    }
    while (*q == ' ' || *q == '\t') q++;
    if (*q == ',') q++;
  }
}

/* ---------------------------------------------------------------- the walk */

typedef struct mgopt__cw_list {
  mgopt_op **ops;
  int64_t n, cap;
} mgopt__cw_list;

typedef struct mgopt__cw_walk {
  mgopt__cw_list *l;
  int compressed; /* collect constexpr_blockwise_shift_scale / constexpr_lut_to_dense, not consts */
} mgopt__cw_walk;

static int mgopt__cw_collect(mgopt_op *op, void *ud) {
  mgopt__cw_list *l = ((mgopt__cw_walk *)ud)->l;
  if (((mgopt__cw_walk *)ud)->compressed ? op->kind != MGOPT_OP_constexpr_blockwise_shift_scale &&
                                               op->kind != MGOPT_OP_constexpr_lut_to_dense
                                         : op->kind != MGOPT_OP_const)
    return 0;
  if (l->ops && l->n < l->cap) l->ops[l->n] = op;
  l->n++;
  return 0;
}

MGOPT__PRIVATE void mgopt__cw_unbuild(mgopt_op *op);

MGOPT__PRIVATE void mgopt__cw_replace(const mgopt__cw_weight *w, mgopt_value *v) {
  mgopt_value_replace_all_uses(w->op->outs[0], v);
  mgopt__cw_unbuild(w->op);
}

MGOPT__PRIVATE void mgopt__cw_unbuild(mgopt_op *op) {
  mgopt_op *feed[8];
  int32_t nf = 0, s, k;
  for (s = 0; s < op->nslots; s++)
    for (k = 0; k < op->slots[s].n; k++) {
      mgopt_value *v = op->slots[s].uses[k].value;
      if (v && v->def && v->def->kind == MGOPT_OP_const && nf < 8) feed[nf++] = v->def;
    }
  mgopt_op_erase(op);
  for (k = 0; k < nf; k++)
    if (!(feed[k]->flags & MGOPT_OP_ERASED) && feed[k]->outs[0]->nuses == 0) mgopt_op_erase(feed[k]);
}

MGOPT__PRIVATE int mgopt__cw_finish(mgopt_program *p, const mgopt__cw_weight *w, mgopt_op *ce) {
  if (mgopt_op_infer(p, ce, NULL) != MGOPT_OK || !mgopt_type_equal(&ce->outs[0]->type, &w->op->outs[0]->type) ||
      !mgopt_program_target_accepts(p, ce)) {
    mgopt__cw_unbuild(ce);
    return 0;
  }
  mgopt__cw_replace(w, ce->outs[0]);
  return 1;
}

MGOPT__PRIVATE mgopt_status mgopt__cw_run(mgopt_pass_ctx *ctx, const mgopt__cw_pass *cp) {
  mgopt_program *p = ctx->program;
  mgopt__cw_list l;
  mgopt__cw_walk wk;
  mgopt_opt_value vals[MGOPT__CW_MAX_OPTS];
  int32_t thr = -1, i;
  int64_t k;
  MGOPT_ASSERT(cp->nopts <= MGOPT__CW_MAX_OPTS);
  for (i = 0; i < cp->nopts; i++)
    if (strcmp(cp->opts[i].name, "weight_threshold") == 0) thr = i;
  memset(&l, 0, sizeof l);
  wk.l = &l;
  wk.compressed = cp->compressed_ops;
  mgopt_program_walk(p, mgopt__cw_collect, &wk);
  if (l.n == 0) return MGOPT_OK;
  l.cap = l.n;
  l.ops = (mgopt_op **)mgopt_program_alloc(p, (size_t)l.n * sizeof(mgopt_op *), 8);
  if (!l.ops) return MGOPT_ERR_NOMEM;
  l.n = 0;
  mgopt_program_walk(p, mgopt__cw_collect, &wk);
  for (k = 0; k < l.n; k++) {
    mgopt_op *op = l.ops[k];
    mgopt_value *v = op->outs[0];
    mgopt_tensor *t = op->kind == MGOPT_OP_const ? mgopt_value_const(v) : NULL;
    const mgopt_value *fv = v;
    const mgopt_use *u;
    mgopt__cw_weight w;
    const char *text;
    int64_t fn;
    int r;
    if (op->kind != MGOPT_OP_const) {
      /* a compressed weight: its materialized value (one output) */
      mgopt_tensor *out[1] = {NULL};
      if (op->nouts != 1 || (op->flags & MGOPT_OP_ERASED)) continue;
      r = ctx->fold ? ctx->fold(p, op, out, ctx->fold_ud) : mgopt_fold_op(p, op, out, NULL);
      if (r < 0) return MGOPT_ERR_NOMEM;
      if (r != 1) continue;
      t = out[0];
    }
    if (!t || !mgopt__cw_weight_dtype((mgopt_dtype)t->dtype) || t->numel < 10) continue;
    memset(&w, 0, sizeof w);
    for (u = v->uses; u; u = u->next)
      if (u->op) {
        w.reader = u->op;
        break;
      }
    if (!w.reader) continue; /* only a block output */
    if (t->rank < 2 && !mgopt__cw_is_constexpr(w.reader)) continue;
    if (!cp->constexpr_readers) {
      int ce = 0;
      for (u = v->uses; u; u = u->next)
        if (u->op && mgopt__cw_is_constexpr(u->op)) ce = 1;
      if (ce) continue;
    }
    if (!mgopt__cw_resolve(ctx->compress_config, cp->name, v, &text)) continue;
    memcpy(vals, ctx->opts, (size_t)cp->nopts * sizeof vals[0]);
    if (text) {
      r = mgopt__cw_parse(ctx, cp, text, vals);
      if (r < 0) return MGOPT_ERR_NOMEM;
      if (r == 0) return MGOPT_ERR_INVALID_ARG;
    }
    /* through constexpr_* readers the size and axes are the final weight's */
    fn = t->numel;
    if (cp->constexpr_readers && mgopt__cw_is_constexpr(w.reader)) {
      fv = mgopt__cw_final(op);
      fn = mgopt_type_numel(&fv->type);
      if (fn < 0) continue;
    }
    if (thr >= 0 && !(fn > vals[thr].i)) continue;
    w.op = op;
    w.t = t;
    w.opts = vals;
    w.numel = t->numel;
    w.final = fv;
    w.out_axis = w.in_axis = -2;
    if (fv->type.rank >= 2) mgopt__cw_axes_of(v, fv->type.rank, &w.out_axis, &w.in_axis, 0);
    if (w.out_axis < 0 || w.in_axis < 0) w.out_axis = w.in_axis = -1;
    r = cp->fn(ctx, &w, cp->ud);
    if (r == -2) return MGOPT_ERR_INVALID_ARG;
    if (r < 0 || p->status) return MGOPT_ERR_NOMEM;
    ctx->rewrites += r;
  }
  return MGOPT_OK;
}

/* ---------------------------------------------------------------- joint compression */

MGOPT__PRIVATE mgopt_tensor *mgopt__cw_gather(mgopt_program *p, mgopt_tensor *src, const mgopt_tensor *mask) {
  int64_t n = mask->numel, d = 0, i, j;
  const uint8_t *mv = (const uint8_t *)mask->data;
  int fl = mgopt_dtype_is_float((mgopt_dtype)src->dtype);
  mgopt_tensor *t;
  if (src->numel != n || !mgopt_tensor_data(p, src)) return NULL;
  for (i = 0; i < n; i++) d += (mv[i >> 3] >> (i & 7)) & 1;
  t = mgopt_tensor_new(p, (mgopt_dtype)src->dtype, 1, &d);
  if (!t || !mgopt_tensor_data_mut(p, t)) return NULL;
  for (i = j = 0; i < n; i++) {
    if (!((mv[i >> 3] >> (i & 7)) & 1)) continue;
    if (fl) mgopt_tensor_set_f64(t, j++, mgopt_tensor_get_f64(src, i));
    else mgopt_tensor_set_i64(t, j++, mgopt_tensor_get_i64(src, i));
  }
  return t;
}

MGOPT__PRIVATE mgopt_tensor *mgopt__cw_densify(mgopt_program *p, mgopt_tensor *nz, const mgopt_tensor *mask) {
  int64_t n = mask->numel, i, j;
  const uint8_t *mv = (const uint8_t *)mask->data;
  int fl = mgopt_dtype_is_float((mgopt_dtype)nz->dtype);
  mgopt_tensor *t;
  if (nz->rank != 1 || !mgopt_tensor_data(p, nz)) return NULL;
  t = mgopt_tensor_new(p, (mgopt_dtype)nz->dtype, mask->rank, mask->shape);
  if (!t || !mgopt_tensor_data_mut(p, t)) return NULL;
  memset(t->data, 0, t->nbytes);
  for (i = j = 0; i < n; i++) {
    if (!((mv[i >> 3] >> (i & 7)) & 1)) continue;
    if (j >= nz->numel) return NULL;
    if (fl) mgopt_tensor_set_f64(t, i, mgopt_tensor_get_f64(nz, j++));
    else mgopt_tensor_set_i64(t, i, mgopt_tensor_get_i64(nz, j++));
  }
  return j == nz->numel ? t : NULL;
}

MGOPT__PRIVATE mgopt_op *mgopt__cw_build_sparse(mgopt_program *p, mgopt_op *pos, const char *type, const char *name,
                                                int32_t nslots, const char *const *slots, mgopt_value *const *vals) {
  mgopt_op *op = mgopt_build_op(p, pos->parent, pos, type, name, nslots, slots, vals, 2);
  if (!op) return NULL;
  mgopt_value_set_name(op->outs[0], mgopt__pu_name2(p, name, "_mask"));
  mgopt_value_set_name(op->outs[1], mgopt__pu_name2(p, name, "_nonzero_data"));
  if (!op->outs[0]->name || !op->outs[1]->name) return NULL;
  return op;
}

MGOPT__PRIVATE int mgopt__cw_sole_reader(const mgopt__cw_weight *w, mgopt_op_kind kind, const char *slot) {
  const mgopt_value *v = w->op->outs[0];
  return v->nuses == 1 && w->reader && w->reader->kind == (int32_t)kind && mgopt_op_operand(w->reader, slot) == v &&
         !mgopt_value_is_block_output(v);
}
