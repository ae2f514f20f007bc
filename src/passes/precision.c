/* src/passes/precision.c — the precision engine of add_fp16_cast and add_int16_cast: converts operands, re-creates ops, casts results back. */
#include "../passes_internal.h"

/* Precision rewriting shared by add_fp16_cast and add_int16_cast. A cache maps
   (block, value, dtype) to the converted value, so consumers in one block
   share one conversion; a const of an enclosing block is keyed by its own
   block and converted beside it, so nested blocks share that one too. */
typedef struct mgopt__pu_ckey {
  const mgopt_block *b;
  const mgopt_value *v;
  int32_t dt;
  mgopt_value *cast;
} mgopt__pu_ckey;

typedef struct mgopt__pu_prec {
  mgopt_pass_ctx *ctx;
  mgopt__map cache;      /* hash of (block, value, dtype) -> 1 + index in keys (a multimap) */
  mgopt__pu_ckey *keys;
  int64_t nkeys, keys_cap;
  const char *suffix;
  mgopt__pu_prec_fn decide;
  mgopt__pu_conv_fn conv;
  void *ud;
  int oom;
} mgopt__pu_prec;

static uint64_t mgopt__pu_ckey_hash(const mgopt_block *b, const mgopt_value *v, int32_t dt) {
  uintptr_t k[3];
  k[0] = (uintptr_t)b;
  k[1] = (uintptr_t)v;
  k[2] = (uintptr_t)(uint32_t)dt;
  return mgopt__map_hash_key(mgopt__hash_bytes(k, sizeof k, MGOPT__HASH_SEED));
}

/* The cache entry of (b, v, dt), or NULL. */
static mgopt__pu_ckey *mgopt__pu_cache_find(const mgopt__pu_prec *pr, const mgopt_block *b, const mgopt_value *v,
                                            int32_t dt) {
  const mgopt__map_slot *sl;
  for (sl = mgopt__map_find(&pr->cache, mgopt__pu_ckey_hash(b, v, dt)); sl; sl = mgopt__map_next(&pr->cache, sl)) {
    mgopt__pu_ckey *e = &pr->keys[sl->v.i - 1];
    if (e->b == b && e->v == v && e->dt == dt) return e;
  }
  return NULL;
}

static mgopt_value *mgopt__pu_cache_get(const mgopt__pu_prec *pr, const mgopt_block *b, const mgopt_value *v,
                                        int32_t dt) {
  const mgopt__pu_ckey *e = mgopt__pu_cache_find(pr, b, v, dt);
  return e ? e->cast : NULL;
}

static void mgopt__pu_cache_put(mgopt__pu_prec *pr, const mgopt_block *b, const mgopt_value *v, int32_t dt,
                                mgopt_value *cast) {
  mgopt__pu_ckey *e = mgopt__pu_cache_find(pr, b, v, dt);
  mgopt__map_slot *sl;
  void *arr = pr->keys;
  if (!e) {
    if (!mgopt__grow(&pr->ctx->program->alloc, &arr, &pr->keys_cap, pr->nkeys + 1, sizeof *pr->keys) ||
        !(sl = mgopt__map_add(&pr->cache, mgopt__pu_ckey_hash(b, v, dt)))) {
      pr->keys = (mgopt__pu_ckey *)arr;
      pr->oom = 1;
      return;
    }
    pr->keys = (mgopt__pu_ckey *)arr;
    e = &pr->keys[pr->nkeys++];
    sl->v.i = pr->nkeys;
    e->b = b;
    e->v = v;
    e->dt = dt;
  }
  e->cast = cast;
}

/* Forgets an entry: it stays in the map but never matches again. */
static void mgopt__pu_cache_drop(mgopt__pu_prec *pr, const mgopt_block *b, const mgopt_value *v, int32_t dt) {
  mgopt__pu_ckey *e = mgopt__pu_cache_find(pr, b, v, dt);
  if (e) {
    e->b = NULL;
    e->dt = -1;
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

MGOPT__PRIVATE const char *mgopt__pu_converted_name(mgopt_program *p, const mgopt_value *v, mgopt_dtype dt) {
  char buf[300];
  snprintf(buf, sizeof buf, "%.200s_to_%s", mgopt__pu_value_name(v), mgopt_dtype_name(dt));
  return mgopt__pu_name2(p, buf, NULL);
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
  mgopt_block *cblk[MGOPT__PU_PREC_MAXIN];
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
        /* a const of an enclosing block is converted once, beside it, for
           every block that reads it (a copy per branch would multiply the
           weight); other values are converted in the reader's block */
        int outer = v->def && v->def->kind == MGOPT_OP_const && v->def->parent != b;
        mgopt_block *kb = outer ? v->def->parent : b;
        mgopt_value *c = rep ? rep : mgopt__pu_cache_get(pr, kb, v, dt);
        if (!c) {
          c = pr->conv(p, outer ? v->def : op, v, dt, pr->ud);
          if (!c) return -1;
          mgopt__pu_cache_put(pr, kb, v, dt, c);
          cdt[ncreated] = dt;
          cval[ncreated] = v;
          cblk[ncreated] = kb;
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
  /* the op's new operand dtypes must be ones the program's writer can
     express (a dequantize with an fp16 scale needs ONNX opset 19) */
  if (mgopt_op_infer(p, nop, NULL) != MGOPT_OK || !mgopt_program_target_accepts(p, nop)) {
    mgopt_op_erase(nop);
    goto revert;
  }
  /* what replaces each output (nv, or nv cast back) keeps the output's
     declared type, which must hold for the inferred one up to the dtype */
  for (i = 0; i < op->nouts; i++) {
    mgopt_type t = nop->outs[i]->type;
    t.dtype = op->outs[i]->type.dtype;
    if (mgopt__type_clash(&op->outs[i]->type, &t, 1)) {
      mgopt_op_erase(nop);
      goto revert;
    }
  }
  for (i = 0; i < op->nouts; i++) {
    mgopt_value *ov = op->outs[i], *nv = nop->outs[i], *rep = nv;
    if (nv->type.dtype != ov->type.dtype) {
      rep = mgopt__pu_cast_value(p, op, nv, (mgopt_dtype)ov->type.dtype,
                                 mgopt__pu_converted_name(p, nv, (mgopt_dtype)ov->type.dtype));
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
    mgopt__pu_cache_drop(pr, cblk[i], cval[i], cdt[i]);
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
  mgopt__map_init_flags(&pr.cache, &ctx->program->alloc, MGOPT__MAP_HASHED);
  pr.suffix = suffix;
  pr.decide = decide;
  pr.conv = conv;
  pr.ud = ud;
  for (i = 0; i < mgopt_program_function_count(ctx->program) && r == 0; i++)
    r = mgopt__pu_prec_block(&pr, mgopt_program_function_at(ctx->program, i)->body, 0);
  mgopt__map_free(&pr.cache);
  if (pr.keys) mgopt__heap_free(&ctx->program->alloc, pr.keys, (size_t)pr.keys_cap * sizeof *pr.keys);
  return r < 0 ? (ctx->diag && ctx->diag->status ? ctx->diag->status : MGOPT_ERR_NOMEM) : MGOPT_OK;
}
