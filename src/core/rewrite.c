/* src/core/rewrite.c — (being written) */
#include "../internal.h"
