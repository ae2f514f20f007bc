/* src/core/passmgr.c — (being written) */
#include "../internal.h"
