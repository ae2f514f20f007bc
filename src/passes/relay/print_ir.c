/* src/passes/relay/print_ir.c — relay::print_ir: writes the program as .mil text at its place in a pipeline.

   Spec: tvm_relay_passes.md, "PrintIR". The program is not changed.

   Options: `file` — the path to write (created or truncated; required: the
   library never prints on its own, /dev/stderr is a path). `elide_above` — tensors with
   more elements print as [...] (default 16; 0 prints every element, so the
   text parses back).
   Writing the text of a pipeline's midpoint, e.g.
     mgopt m.onnx -o o.onnx -p 'fuse_conv_batchnorm,print_ir{file=mid.mil},default'

   Fails (MGOPT_ERR_INVALID_ARG without a file, MGOPT_ERR_IO with the path
   in the message when the file cannot be written); the pipeline's strict mode decides whether that stops it. With
   MGOPT_NO_STDIO the pass prints nothing and fails with MGOPT_ERR_UNSUPPORTED.
   Cost: O(program text). */
#include "../../passes_internal.h"

static mgopt_opt_def const mgopt__pir_opts[2] = {
    {"file", MGOPT_OPT_STRING, "", "the path the .mil text is written to (required)", NULL},
    {"elide_above", MGOPT_OPT_INT, "16", "tensors with more elements print as [...] (0: all)", NULL}};

static mgopt_status mgopt__pir_run(mgopt_pass_ctx *ctx) {
#ifndef MGOPT_NO_STDIO
  const char *path = ctx->opts[0].s ? ctx->opts[0].s : "";
  mgopt_print_options po;
  mgopt_buf b;
  mgopt_status st;
  FILE *f;
  int bad;
  if (!path[0]) return mgopt_diag_set(ctx->diag, MGOPT_ERR_INVALID_ARG, "no file given (print_ir{file=PATH})");
  memset(&b, 0, sizeof b);
  b.alloc = &ctx->program->alloc;
  po.elide_above = ctx->opts[1].i < 0 ? 0 : ctx->opts[1].i;
  st = mgopt_mil_print(ctx->program, &po, &b);
  if (st != MGOPT_OK) {
    mgopt_buf_free(&b);
    return mgopt_diag_set(ctx->diag, st, "the program could not be printed");
  }
  f = fopen(path, "wb");
  if (!f) {
    mgopt_buf_free(&b);
    return mgopt_diag_set(ctx->diag, MGOPT_ERR_IO, "cannot open '%s' for writing", path);
  }
  bad = b.len && fwrite(b.data, 1, b.len, f) != b.len;
  bad |= fclose(f) != 0;
  mgopt_buf_free(&b);
  if (bad) return mgopt_diag_set(ctx->diag, MGOPT_ERR_IO, "cannot write '%s'", path);
  return MGOPT_OK;
#else
  return mgopt_diag_set(ctx->diag, MGOPT_ERR_UNSUPPORTED, "built without stdio (MGOPT_NO_STDIO)");
#endif
}

MGOPT__DEFINE_PASS_WITH_OPTIONS(relay, relay, print_ir, "write the program as .mil text at this point of a pipeline",
                                mgopt__pir_opts, mgopt__pir_run);
