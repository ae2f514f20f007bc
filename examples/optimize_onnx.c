/* examples/optimize_onnx.c — optimize an ONNX model: read it, run the `default`
   pipeline, write it back, print what changed.

     optimize_onnx [in.onnx [out.onnx]]

   Without arguments it reads examples/demo.onnx (run it from the repository
   root) and keeps the output in memory. Every fallible call returns an
   mgopt_status, fills its out-parameter only on success and explains a
   failure in a caller-owned mgopt_diag. Exits 0 only if the optimized model
   has fewer ops and reads back.

   Build: cc -std=c99 -I. examples/optimize_onnx.c -lm */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include <stdio.h>

/* Prints a failed call's diagnostic: status, place (byte offset or op), message. */
static int fail(const char *what, const mgopt_diag *d) {
  printf("%s failed: %s", what, mgopt_status_str(d->status));
  if (d->offset >= 0) printf(" at byte %lld", (long long)d->offset);
  if (d->op[0]) printf(" (op '%s')", d->op);
  printf(": %s\n", d->msg);
  return 1;
}

int main(int argc, char **argv) {
  const char *in = argc > 1 ? argv[1] : "examples/demo.onnx";
  const char *out = argc > 2 ? argv[2] : NULL;
  mgopt_program *p = NULL, *back = NULL;
  mgopt_onnx_model *m = NULL;
  mgopt_pass_report rep[64];
  int32_t nrep = 0, i;
  mgopt_pipeline_options po = {0}; /* zeroed: every default */
  mgopt_buf bytes = {0};
  mgopt_diag d;
  int64_t before, after;
  int rc = 1;

  /* read and import: a NULL options pointer means every default */
  if (mgopt_onnx_load_file(in, NULL, &p, &d) != MGOPT_OK) {
    if (argc < 2 && d.status == MGOPT_ERR_IO) {
      printf("cannot open %s: run this example from the repository root\n", in);
      return 77;
    }
    return fail("reading the model", &d);
  }
  before = mgopt_program_op_count(p);

  /* optimize, keeping one report per pass */
  po.reports = rep;
  po.reports_cap = 64;
  po.nreports = &nrep;
  if (mgopt_pipeline_run(p, mgopt_builtin_registry(), "default", &po, &d) != MGOPT_OK) {
    fail("the default pipeline", &d);
    goto done;
  }
  after = mgopt_program_op_count(p);

  /* back to an ONNX model tree in p's arena, then to bytes */
  if (mgopt_onnx_export(p, NULL, &m, &d) != MGOPT_OK) {
    fail("exporting", &d);
    goto done;
  }
  if (out ? mgopt_onnx_write_file(m, out, NULL, &d) : mgopt_onnx_write(m, NULL, &bytes, NULL, &d)) {
    fail("writing", &d);
    goto done;
  }

  printf("%s: %lld ops -> %lld ops\n", in, (long long)before, (long long)after);
  for (i = 0; i < nrep && i < 64; i++)
    if (rep[i].rewrites)
      printf("  %-45s %4lld rewrites\n", rep[i].name, (long long)rep[i].rewrites);
  if (out) {
    printf("wrote %s\n", out);
    rc = after < before ? 0 : 1;
  } else {
    /* the bytes read back: the optimized model is well formed */
    printf("%lu bytes of ONNX\n", (unsigned long)bytes.len);
    if (mgopt_onnx_load(bytes.data, bytes.len, NULL, &back, &d) != MGOPT_OK) {
      fail("reading the output back", &d);
      goto done;
    }
    rc = after < before && mgopt_program_op_count(back) == after ? 0 : 1;
  }
  if (rc) printf("FAILED: expected fewer ops after `default`\n");

done:
  mgopt_program_destroy(back); /* NULL is ignored */
  mgopt_buf_free(&bytes);
  mgopt_program_destroy(p);
  return rc;
}
