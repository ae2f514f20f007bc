/* tools/mgopt.c — the command-line tool (being written). */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include <stdio.h>

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  printf("mgopt %s\n", mgopt_version());
  return 0;
}
