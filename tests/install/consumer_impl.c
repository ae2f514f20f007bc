/* tests/install/consumer_impl.c — a consumer's implementation file: mgopt compiled once,
   in a translation unit of its own, against the installed headers. */
#define MGOPT_IMPLEMENTATION
#include <mgopt.h>
#include <mgopt_passes.h>
