/* src/passes/io/update_output_dtypes.c — common::update_output_dtypes{dtypes=fp16}: cast main's outputs to the requested dtypes.

   Spec: mil_graph_passes.txt, "Update the dtypes of output vars of each
   function block to match the dtypes provided in function.output_types";
   reference mil-passes.md §3.34. This pass changes output dtypes on purpose.

   Before:
     main(%x: (2, 3, fp32)) {
       %y: (2, 3, fp32) = relu(x=%x)
     } -> (%y)
   After:
     main(%x: (2, 3, fp32)) {
       %y_type_fp32: (2, 3, fp32) = relu(x=%x)
       %y: (2, 3, fp16) = cast(x=%y_type_fp32, dtype="fp16")
     } -> (%y)

   Option `dtypes`: the requested dtype of each output of `main`, in order,
   comma-separated ("fp16,int32"); an empty entry keeps that output as it is.
   Empty option: nothing to do. A count that differs from main's output count,
   or an unknown dtype name, is an error (MGOPT_ERR_INVALID_ARG).
   Fires on: each output whose requested dtype differs from its dtype. The
   output value is renamed "<name>_type_<old dtype>" and a cast to the requested
   dtype, appended at the end of main, takes the original name. An output
   listed twice gets one cast per requested dtype (later ones fresh-named).
   Must not fire: an output that is also an input of main (its name and type are
   the input's: left unchanged, as the reference does); non-tensor outputs.
   Cost: O(outputs). */
#include "../../passes_internal.h"

static mgopt_opt_def const mgopt__uod_opts[1] = {
    {"dtypes", MGOPT_OPT_STRING, "", "comma-separated dtype per output of main (empty entry: keep)", NULL}};

static mgopt_status mgopt__uod_run(mgopt_pass_ctx *ctx) {
  mgopt_program *p = ctx->program;
  mgopt_function *f = mgopt_program_function(p, "main");
  const char *spec = ctx->opts[0].s ? ctx->opts[0].s : "", *q;
  mgopt_dtype want[256];
  mgopt_value *orig_v[256];
  const char *orig_name[256];
  int32_t n = 0, i;
  if (!f || !*spec) return MGOPT_OK;
  memset((void *)orig_name, 0, sizeof orig_name);
  for (q = spec;;) {
    size_t len = strcspn(q, ",");
    size_t a = 0, b = len;
    while (a < b && q[a] == ' ') a++;
    while (b > a && q[b - 1] == ' ') b--;
    if (n >= 256) return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "update_output_dtypes: too many dtypes");
    if (a == b) want[n] = MGOPT_DT_UNKNOWN;
    else {
      want[n] = mgopt_dtype_from_name(q + a, b - a);
      if (want[n] == MGOPT_DT_UNKNOWN || want[n] == MGOPT_DT_STRING)
        return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "update_output_dtypes: unknown dtype '%.*s'",
                              (int)(b - a), q + a);
    }
    n++;
    if (!q[len]) break;
    q += len + 1;
  }
  if (n != f->body->nouts)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG,
                          "update_output_dtypes: %d dtypes given, main has %d outputs", (int)n, (int)f->body->nouts);
  for (i = 0; i < n; i++) orig_v[i] = f->body->outs[i]->value;
  for (i = 0; i < n; i++) {
    mgopt_value *v = orig_v[i];
    const char *cname;
    char buf[320];
    mgopt_op *c;
    int32_t k;
    static const char *const slot[1] = {"x"};
    if (want[i] == MGOPT_DT_UNKNOWN || !v || v->type.kind != MGOPT_TYPE_TENSOR || v->type.dtype == want[i]) continue;
    if (!v->def) continue; /* an input returned as an output keeps its name and type */
    orig_name[i] = mgopt__pu_value_name(v);
    cname = orig_name[i];
    for (k = 0; k < i; k++)
      if (orig_v[k] == v && orig_name[k]) cname = NULL; /* renamed already: the new cast gets a fresh name */
    if (cname) {
      snprintf(buf, sizeof buf, "%.200s_type_%s", cname, mgopt_dtype_name((mgopt_dtype)v->type.dtype));
      mgopt__pu_rename(v, mgopt__pu_name2(p, buf, NULL));
    } else {
      for (k = 0; k < i; k++)
        if (orig_v[k] == v && orig_name[k]) break;
      cname = mgopt_program_fresh_name(p, orig_name[k]);
      orig_name[i] = orig_name[k];
    }
    c = mgopt_build_op(p, f->body, NULL, "cast", cname, 1, slot, &v, 1);
    if (!c || mgopt_op_set_string(c, "dtype", mgopt_dtype_name(want[i])))
      return mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "update_output_dtypes: out of memory");
    if (mgopt_op_infer(p, c, ctx->diag)) return ctx->diag ? ctx->diag->status : MGOPT_ERR_TYPE;
    mgopt_block_set_output(f->body, i, c->outs[0]);
    ctx->rewrites++;
  }
  return MGOPT_OK;
}

MGOPT__DEFINE_PASS_WITH_OPTIONS(io, common, update_output_dtypes,
                                "cast main's outputs to the requested dtypes",
                                mgopt__uod_opts, mgopt__uod_run);
