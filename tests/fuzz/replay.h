/* tests/fuzz/replay.h — the corpus replay shared by the ONNX fuzz harnesses.

   Built with -DMGOPT_FUZZ_REPLAY, a harness is a test program instead of a
   libFuzzer target: it runs its check on every file named on the command
   line, or on every file of its corpus directories (run from the repository
   root), and prints "N passed, N failed". A harness includes this file in
   its MGOPT_FUZZ_REPLAY branch and calls fuzz_replay_main from main. */
#ifndef MGOPT_FUZZ_REPLAY_H
#define MGOPT_FUZZ_REPLAY_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__unix__) || defined(__APPLE__)
#include <dirent.h> /* listing the corpus directories */
#define FUZZ_HAVE_DIRENT 1
#endif

/* 1 when the input passes; 0 with the reason in why. */
typedef int (*fuzz_check_fn)(const uint8_t *data, size_t size, char *why, size_t why_len);

/* Runs check on the file's bytes; 0 when the file cannot be opened. */
static int fuzz_replay_file(fuzz_check_fn check, const char *path, int *passed, int *failed) {
  FILE *f = fopen(path, "rb");
  uint8_t *buf = NULL;
  size_t n = 0, cap = 0;
  char why[768];
  if (!f) return 0;
  for (;;) {
    size_t got;
    if (n == cap) {
      uint8_t *nb;
      cap = cap ? cap * 2 : 4096;
      nb = (uint8_t *)realloc(buf, cap);
      if (!nb) break;
      buf = nb;
    }
    got = fread(buf + n, 1, cap - n, f);
    if (got == 0) break;
    n += got;
  }
  fclose(f);
  if (check(buf, n, why, sizeof why)) (*passed)++;
  else {
    printf("%s: %s\n", path, why);
    (*failed)++;
  }
  free(buf);
  return 1;
}

/* The files named in argv, else every file of the ndirs corpus directories;
   failed counts failures found before. Returns main's exit status. */
static int fuzz_replay_main(fuzz_check_fn check, int argc, char **argv, const char *const *dirs, int ndirs,
                            int failed) {
  int i, passed = 0;
  if (argc > 1) {
    for (i = 1; i < argc; i++)
      if (!fuzz_replay_file(check, argv[i], &passed, &failed)) {
        printf("%s: cannot open\n", argv[i]);
        failed++;
      }
  } else {
#ifdef FUZZ_HAVE_DIRENT
    for (i = 0; i < ndirs; i++) {
      DIR *dp = opendir(dirs[i]);
      struct dirent *e;
      if (!dp) {
        printf("%s: cannot open (run from the repository root)\n", dirs[i]);
        failed++;
        continue;
      }
      while ((e = readdir(dp)) != NULL) {
        char path[1024];
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dirs[i], e->d_name);
        fuzz_replay_file(check, path, &passed, &failed);
      }
      closedir(dp);
    }
#else
    (void)dirs;
    (void)ndirs;
    printf("note: give the corpus files as arguments on this platform\n");
#endif
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
#endif
