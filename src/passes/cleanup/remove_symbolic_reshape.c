/* src/passes/cleanup/remove_symbolic_reshape.c — common::remove_symbolic_reshape: a run-time reshape shape becomes a constant.

   Spec: mil_graph_passes.txt, "Convert symbolic shape in reshape to
   integers ... replaces symbols with positive integers if solved from
   volumetric constraint, or -1 ... fails if more than one symbol needs to be
   resolved to -1"; reference §3.9.

   mgopt's tensors hold no symbolic values, so a shape "known symbolically"
   is a `shape` operand computed at run time (e.g. from shape/gather/concat
   of the input's dims) on a reshape whose output type is known: every dim
   static or a symbol. That type is what the shape operand must evaluate to.

   Before:
     main(%x: (s0, 4, fp32), %s: (3, int32)) {
       %r: (s0, s1, 2, fp32) = reshape(x=%x, shape=%s)
     } -> (%r)
   After:
     main(%x: (s0, 4, fp32), %s: (3, int32)) {
       %sx: (3, int32)* = const(val=[-1, 2, 2])
       %r: (s0, 2, 2, fp32) = reshape(x=%x, shape=%sx)
     } -> (%r)

   Fires on: a reshape whose shape operand is not a const and whose output
   rank and dims are all known (static or symbolic). Symbols are solved from
   the volume: symbols common to x and the output cancel; if then exactly
   one symbol occurrence is left, in the output only, and x has no unknown
   dims, it equals (static volume of x) / (static volume of the output).
   Solved symbols become integers (in the new shape and the stored output
   type); one symbol left becomes -1; none left gives a fully static shape.
   The old shape producer goes when unused.
   More than one symbol left: with `strict` (default, as the spec says) the
   pass fails with MGOPT_ERR_PASS naming the reshape; with strict=false the
   reshape is left alone (what MIL's converter does in practice).
   Must not fire: a const shape (nothing to do), unknown dims or rank in the
   output, any zero-sized dim (a 0 in the shape would copy the input's dim).
   Cost: worklist patterns, O(reshapes x rank^2) with rank capped at 64 for
   the symbol matching. */
#include "../../passes_internal.h"

typedef struct mgopt__rsr {
  int strict;
  mgopt_status err;
  mgopt_diag *d;
} mgopt__rsr;

static int mgopt__rsr_fold(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt__rsr *st = (mgopt__rsr *)ud;
  mgopt_program *p = mgopt_rw_program(rw);
  mgopt_value *sv = mgopt_op_operand(op, "shape"), *x = mgopt_op_operand(op, "x"), *c;
  mgopt_type *t;
  mgopt_dim *dims;
  mgopt_tensor *shape;
  int64_t vals[MGOPT_MAX_RANK], in_vol = 1, out_vol = 1, solved = -1;
  uint8_t used_in[MGOPT_MAX_RANK], used_out[MGOPT_MAX_RANK];
  const char *left = NULL, *solved_sym = NULL;
  int32_t i, j, r, nleft = 0, unresolved = 0, in_ok;
  mgopt_dtype dt = MGOPT_DT_INT32;
  char name[200];
  if (st->err || !sv || !x || mgopt_value_const(sv) || op->nouts != 1) return 0;
  t = &op->outs[0]->type;
  r = t->rank;
  if (t->kind != MGOPT_TYPE_TENSOR || r < 0 || r > MGOPT_MAX_RANK) return 0;
  for (i = 0; i < r; i++)
    if (!t->dims[i].sym && t->dims[i].v < 0) return 0;
  /* volume: cancel the symbols x and the output share, then solve one left over */
  in_ok = x->type.kind == MGOPT_TYPE_TENSOR && x->type.rank >= 0 && x->type.rank <= MGOPT_MAX_RANK;
  memset(used_in, 0, sizeof used_in);
  memset(used_out, 0, sizeof used_out);
  for (i = 0; in_ok && i < x->type.rank; i++) {
    mgopt_dim d = x->type.dims[i];
    if (d.sym) {
      for (j = 0; j < r; j++)
        if (!used_out[j] && t->dims[j].sym == d.sym) break;
      if (j < r) used_out[j] = used_in[i] = 1;
      else in_ok = 0; /* a symbol of x the output lacks: no equation for the rest */
    } else if (d.v < 0 || !mgopt__mul_i64(in_vol, d.v, &in_vol)) {
      in_ok = 0;
    }
  }
  for (i = 0; i < r; i++) {
    if (t->dims[i].sym) {
      if (!used_out[i]) {
        nleft++;
        left = t->dims[i].sym;
      }
    } else if (!mgopt__mul_i64(out_vol, t->dims[i].v, &out_vol)) {
      in_ok = 0;
    }
  }
  if (in_ok && nleft == 1 && out_vol > 0 && in_vol % out_vol == 0) {
    solved_sym = left;
    solved = in_vol / out_vol;
  }
  for (i = 0; i < r; i++) {
    if (!t->dims[i].sym) vals[i] = t->dims[i].v;
    else if (t->dims[i].sym == solved_sym) vals[i] = solved;
    else {
      vals[i] = -1;
      unresolved++;
    }
  }
  if (unresolved > 1) {
    if (st->strict) {
      st->err = mgopt_diag_set(st->d, MGOPT_ERR_PASS,
                               "reshape '%s': %d symbolic dims of the output cannot be solved and only one may be -1",
                               op->outs[0]->name ? op->outs[0]->name : "?", (int)unresolved);
      if (st->d && op->name) snprintf(st->d->op, sizeof st->d->op, "%s", op->name);
    }
    return 0;
  }
  /* a 0 in reshape's shape copies the input's dim: a zero-sized dim (static,
     or a symbol solved to 0) cannot be written that way */
  for (i = 0; i < r; i++)
    if (vals[i] == 0) return 0;
  if (mgopt_dtype_is_int((mgopt_dtype)sv->type.dtype)) dt = (mgopt_dtype)sv->type.dtype;
  {
    int64_t len = r;
    shape = mgopt_tensor_new(p, dt, 1, &len);
  }
  if (!shape) return 0;
  for (i = 0; i < r; i++) mgopt_tensor_set_i64(shape, i, vals[i]);
  snprintf(name, sizeof name, "%.190sx", sv->name ? sv->name : "shape");
  c = mgopt_rw_const(rw, op, name, shape);
  if (!c) return 0;
  {
    /* the constant shape must type check against x, and a solved symbol
       against what the users declared; otherwise leave the reshape alone */
    mgopt_type nt = *t, old = *t;
    int ok;
    if (solved_sym) {
      dims = (mgopt_dim *)mgopt_program_alloc(p, sizeof(mgopt_dim) * (size_t)(r ? r : 1), 8);
      if (!dims) return 0;
      for (i = 0; i < r; i++) dims[i] = t->dims[i].sym == solved_sym ? mgopt_dim_static(solved) : t->dims[i];
      nt.dims = dims;
    }
    ok = !solved_sym || mgopt__pu_uses_accept(p, op->outs[0], &nt, NULL);
    if (ok) {
      mgopt_op_set_operand(op, "shape", c);
      *t = nt;
      ok = mgopt__pu_infer_fits(p, op);
      *t = old;
      mgopt_op_set_operand(op, "shape", sv);
    }
    if (!ok) {
      mgopt_rw_erase(rw, c->def);
      return 0;
    }
    *t = nt;
  }
  mgopt_rw_set_operand(rw, op, "shape", c);
  mgopt_rw_modified(rw, op);
  mgopt__pu_erase_if_dead(rw, sv->def);
  return 1;
}

static mgopt_status mgopt__rsr_run(mgopt_pass_ctx *ctx) {
  mgopt__rsr st;
  mgopt_status s;
  st.strict = ctx->opts[0].i != 0;
  st.err = MGOPT_OK;
  st.d = ctx->diag;
  s = mgopt__pass_run_pattern(ctx, "symbolic_reshape", MGOPT_OP_reshape, mgopt__rsr_fold, &st);
  return st.err ? st.err : s;
}

static const mgopt_opt_def mgopt__rsr_opts[] = {
    {"strict", MGOPT_OPT_BOOL, "true",
     "fail when more than one symbolic dim would need -1 (false: leave such reshapes alone)", NULL},
};

MGOPT__DEFINE_PASS_WITH_OPTIONS(cleanup, common, remove_symbolic_reshape,
                                "replace a run-time reshape shape by a constant from the known output type",
                                mgopt__rsr_opts, mgopt__rsr_run);
