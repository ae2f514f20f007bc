/* src/passes/common/dead_code_elimination.c — (being written) */
#include "../../passes_internal.h"
