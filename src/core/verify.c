/* src/core/verify.c — (being written) */
#include "../internal.h"
