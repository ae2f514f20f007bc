/* tests/install/consumer_main.c — a consumer of the installed mgopt: parses a small
   program, runs the default pipeline and prints the result. The implementation comes
   from consumer_impl.c, compiled once and linked. */
#include <mgopt.h>
#include <mgopt_passes.h>
#include <stdio.h>
#include <string.h>

static const char program_text[] =
    "main(%x: (2, fp32)) {\n"
    "  %one: (fp32)* = const(val=1)\n"
    "  %y: (2, fp32) = mul(x=%x, y=%one)\n"
    "  %z: (2, fp32) = relu(x=%y)\n"
    "} -> (%z)\n";

int main(void) {
  mgopt_program *p = NULL;
  mgopt_buf out = {0};
  mgopt_diag d;
  int ok;
  if (mgopt_mil_parse(program_text, strlen(program_text), NULL, &p, &d) != MGOPT_OK) {
    printf("parse error %d:%d: %s\n", d.line, d.col, d.msg);
    return 1;
  }
  if (mgopt_pipeline_run(p, mgopt_builtin_registry(), "default", NULL, &d) != MGOPT_OK ||
      mgopt_mil_print(p, NULL, &out) != MGOPT_OK) {
    printf("failed: %s\n", d.msg);
    mgopt_program_destroy(p);
    return 1;
  }
  /* the multiplication by one is gone, the relu stays */
  ok = strstr(out.data, "relu(") != NULL && strstr(out.data, "mul(") == NULL;
  printf("mgopt %s: %s\n", MGOPT_VERSION_STRING, ok ? "optimized" : "NOT optimized");
  if (!ok) printf("%.*s", (int)out.len, out.data);
  mgopt_buf_free(&out);
  mgopt_program_destroy(p);
  return ok ? 0 : 1;
}
