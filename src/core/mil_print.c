/* src/core/mil_print.c — prints a program as .mil text. */
#include "../internal.h"

/* STUB: being written. */
MGOPTDEF mgopt_status mgopt_mil_print(mgopt_program *p, const mgopt_print_options *opts, mgopt_buf *out) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(opts);
  MGOPT__UNUSED(out);
  return MGOPT_ERR_UNSUPPORTED;
}
