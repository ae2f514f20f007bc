/* mgopt_passes.h — mgopt's graph passes, constant-folding kernels and named pipelines.
   Generated from src/ by tools/amalgamate — do not edit. Needs mgopt.h. Version 0.1.0. */
#include "mgopt.h"
/* src/passes_api.h — public declarations of mgopt_passes.h: built-in passes, pipelines, folding. */
#ifndef MGOPT_PASSES_H_INCLUDED
#define MGOPT_PASSES_H_INCLUDED
#ifdef __cplusplus
extern "C" {
#endif

/* The registry of every built-in pass and named pipeline, with the built-in
   folding kernels. A static table: never NULL, never freed. */
MGOPTDEF const mgopt_registry *mgopt_builtin_registry(void);

/* The built-in folding function (see mgopt_fold_fn): evaluates an op whose
   operands are all constant with the kernel table. */
MGOPTDEF int mgopt_fold_op(mgopt_program *p, const mgopt_op *op, mgopt_tensor **out, void *ud);

#ifdef __cplusplus
}
#endif
#endif /* MGOPT_PASSES_H_INCLUDED */

#ifdef MGOPT_IMPLEMENTATION
#ifndef MGOPT__PASSES_IMPLEMENTATION_DONE
#define MGOPT__PASSES_IMPLEMENTATION_DONE
/* src/passes_internal.h — private helpers shared by passes: legality checks, pass declarations. */
#ifndef MGOPT__PASSES_INTERNAL_H
#define MGOPT__PASSES_INTERNAL_H

#endif /* MGOPT__PASSES_INTERNAL_H */
/* src/kernels/fold.c — constant-folding kernel table (being written). */
/* src/passes/common/dead_code_elimination.c — (being written) */
/* src/passes/registry.c — the table of built-in passes and pipelines (being written). */
#endif /* MGOPT__PASSES_IMPLEMENTATION_DONE */
#endif /* MGOPT_IMPLEMENTATION */
/*
------------------------------------------------------------------------------
This software is available under 2 licenses -- choose whichever you prefer.
------------------------------------------------------------------------------
ALTERNATIVE A - MIT License
Copyright (c) 2026 the mgopt authors
Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:
The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
ALTERNATIVE B - Public Domain (www.unlicense.org)
This is free and unencumbered software released into the public domain.
Anyone is free to copy, modify, publish, use, compile, sell, or distribute this
software, either in source code form or as a compiled binary, for any purpose,
commercial or non-commercial, and by any means.
In jurisdictions that recognize copyright laws, the author or authors of this
software dedicate any and all copyright interest in the software to the public
domain. We make this dedication in the hope that it will be of use to
software's heirs and successors. We intend this dedication to be an overt act of
relinquishment in perpetuity of all present and future rights to this software
under copyright law.
THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN
ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION
WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
------------------------------------------------------------------------------
*/
