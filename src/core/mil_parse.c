/* src/core/mil_parse.c — parses .mil text into a program. */
#include "../internal.h"

/* STUB: being written. */
MGOPTDEF mgopt_program *mgopt_mil_parse(const char *text, size_t len, const mgopt_parse_options *opts,
                                        mgopt_diag *d) {
  MGOPT__UNUSED(text);
  MGOPT__UNUSED(len);
  MGOPT__UNUSED(opts);
  mgopt_diag_set(d, MGOPT_ERR_UNSUPPORTED, "not yet");
  return NULL;
}
