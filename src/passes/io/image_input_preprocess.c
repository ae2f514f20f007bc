/* src/passes/io/image_input_preprocess.c — common::image_input_preprocess{nhwc_inputs=img}: NHWC image inputs of main become NCHW, with a transpose back.

   Spec: mil_graph_passes.txt, "Plug in to transpose image input in NHWC format
   to NCHW format"; reference mil-passes.md §3.34. This pass changes input
   types on purpose.

   Before:
     main(%img: (1, 4, 6, 3, fp32)) {
       %y: (1, 4, 6, 3, fp32) = relu(x=%img)
     } -> (%y)
   After:
     main(%img: (1, 3, 4, 6, fp32)) {
       %img__transpose_from_nchw__: (1, 4, 6, 3, fp32) = transpose(x=%img, perm=[0, 2, 3, 1])
       %y: (1, 4, 6, 3, fp32) = relu(x=%img__transpose_from_nchw__)
     } -> (%y)

   Option `nhwc_inputs`: the names of main's inputs that are channel-last
   images, comma-separated. Empty: nothing to do. A name that is not an input
   of main, or an input of rank < 3, is an error (MGOPT_ERR_INVALID_ARG).
   Fires on: each listed input: its type [..., H, W, C] becomes [..., C, H, W]
   (symbolic dims move with their axis) and
   transpose(perm = [0 .. r-4, r-2, r-1, r-3]) named "<in>__transpose_from_nchw__"
   is inserted at the top of main; every former use reads the transpose (an
   output of main that was the input itself now returns the transposed value,
   so its values keep their layout).
   Must not fire: inputs not listed; functions other than main.
   Cost: O(inputs + uses of the listed inputs). */
#include "../../passes_internal.h"

static mgopt_opt_def const mgopt__iip_opts[1] = {
    {"nhwc_inputs", MGOPT_OPT_STRING, "", "comma-separated names of main's NHWC image inputs", NULL}};

static mgopt_status mgopt__iip_one(mgopt_pass_ctx *ctx, mgopt_function *f, mgopt_value *x) {
  mgopt_program *p = ctx->program;
  int32_t r = x->type.rank, i;
  int64_t perm[MGOPT_MAX_RANK];
  mgopt_dim dims[MGOPT_MAX_RANK], c;
  mgopt_op *t;
  mgopt_use *u, *next;
  char buf[320];
  if (x->type.kind != MGOPT_TYPE_TENSOR || r < 3 || r > MGOPT_MAX_RANK)
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG,
                          "image_input_preprocess: input '%s' is not an image tensor of rank >= 3", x->name);
  for (i = 0; i < r; i++) {
    perm[i] = i;
    dims[i] = x->type.dims[i];
  }
  perm[r - 3] = r - 2;
  perm[r - 2] = r - 1;
  perm[r - 1] = r - 3;
  snprintf(buf, sizeof buf, "%.280s__transpose_from_nchw__", x->name);
  t = mgopt_op_new(p, "transpose", 1, 0);
  if (!t) return mgopt__oom(p);
  mgopt_op_set_name(t, buf);
  mgopt_value_set_name(t->outs[0], buf);
  if (mgopt__type_copy(p, &t->outs[0]->type, &x->type)) return mgopt__oom(p);
  /* rewire every use of x before the transpose reads it */
  for (u = x->uses; u; u = next) {
    next = u->next;
    mgopt__use_link(u, t->outs[0]);
  }
  if (mgopt_op_set_operand(t, "x", x) || mgopt_op_set_ints(t, "perm", perm, r)) return mgopt__oom(p);
  if (f->body->first) mgopt_op_insert_before(t, f->body->first);
  else mgopt_op_append(t, f->body);
  /* NCHW input type: [..., C, H, W] */
  c = dims[r - 1];
  dims[r - 1] = dims[r - 2];
  dims[r - 2] = dims[r - 3];
  dims[r - 3] = c;
  if (mgopt_type_make(p, &x->type, (mgopt_dtype)x->type.dtype, r, dims)) return mgopt__oom(p);
  if (mgopt_op_infer(p, t, ctx->diag)) return ctx->diag ? ctx->diag->status : MGOPT_ERR_TYPE;
  ctx->rewrites++;
  return MGOPT_OK;
}

static mgopt_status mgopt__iip_run(mgopt_pass_ctx *ctx) {
  mgopt_program *p = ctx->program;
  mgopt_function *f = mgopt_program_function(p, "main");
  const char *q = ctx->opts[0].s ? ctx->opts[0].s : "";
  if (!*q) return MGOPT_OK;
  if (!f) return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "image_input_preprocess: no function main");
  for (;;) {
    size_t len = strcspn(q, ","), a = 0, b = len;
    int32_t i;
    mgopt_value *x = NULL;
    mgopt_status s;
    while (a < b && q[a] == ' ') a++;
    while (b > a && q[b - 1] == ' ') b--;
    if (a < b) {
      for (i = 0; i < f->body->nargs; i++) {
        const char *nm = f->body->args[i]->name;
        if (nm && strlen(nm) == b - a && memcmp(nm, q + a, b - a) == 0) x = f->body->args[i];
      }
      if (!x)
        return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "image_input_preprocess: main has no input '%.*s'",
                              (int)(b - a), q + a);
      s = mgopt__iip_one(ctx, f, x);
      if (s) return s;
    }
    if (!q[len]) break;
    q += len + 1;
  }
  return MGOPT_OK;
}

MGOPT__DEFINE_PASS_WITH_OPTIONS(io, common, image_input_preprocess,
                                "NHWC image inputs of main become NCHW, followed by a transpose back",
                                mgopt__iip_opts, mgopt__iip_run);
