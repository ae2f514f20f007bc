/* src/kernels/fold.c — constant-folding kernel table (being written). */
#include "../passes_internal.h"
