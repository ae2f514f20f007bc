/* src/kernels/fold.c — constant-folding kernel table (being written). */
#include "../passes_internal.h"

MGOPTDEF int mgopt_fold_op(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud) {
  MGOPT__UNUSED(p);
  MGOPT__UNUSED(op);
  MGOPT__UNUSED(out);
  MGOPT__UNUSED(ud);
  return 0;
}
