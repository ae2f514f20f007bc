/* src/passes/registry.c — the table of built-in passes and pipelines (being written). */
#include "../passes_internal.h"
