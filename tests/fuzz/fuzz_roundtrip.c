/* tests/fuzz/fuzz_roundtrip.c — libFuzzer harness for ONNX write-back: every model that imports
   must export. The input is read and imported as `mgopt -p none` does (read, import, verify); when
   that succeeds the program is exported and written, and the written bytes must read and import
   again, and export again. Any failure after a successful import is a finding (abort()), whatever
   its message: the rule is that a model that reads writes back. An input that does not read or
   import must say why (a message), as in fuzz_onnx.c.

   Fuzz:    make fuzz-roundtrip       (clang -fsanitize=fuzzer,address,undefined)
   Replay:  build with -DMGOPT_FUZZ_REPLAY; run with files to replay, or with no argument to
            replay every file of tests/fuzz/corpus/onnx/ and tests/fuzz/corpus/roundtrip/.
            Prints "N passed, N failed" (make test runs it). */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Programs above this many ops are not exported (the time limit, not the rule). */
#define FUZZ_RT_MAX_OPS 20000

/* Exports p and writes it into b; 0 with the reason in why on failure. */
static int fuzz_rt_write(mgopt_program *p, mgopt_buf *b, const char *step, char *why, size_t why_len) {
  mgopt_diag d;
  mgopt_onnx_model *out = NULL;
  mgopt_diag_clear(&d);
  if (mgopt_onnx_export(p, NULL, &out, &d) != MGOPT_OK) {
    snprintf(why, why_len, "%s: export failed: %s%s%s", step, d.op, d.op[0] ? ": " : "", d.msg[0] ? d.msg : "(no message)");
    return 0;
  }
  if (mgopt_onnx_write(out, NULL, b, NULL, &d) != MGOPT_OK) {
    snprintf(why, why_len, "%s: write failed: %s", step, d.msg[0] ? d.msg : "(no message)");
    return 0;
  }
  return 1;
}

/* Reads and imports data[0..size) into *m as the tool does; 1 on success,
   0 when it cleanly does not import, -1 when it fails without a message
   or imports into an IR the verifier rejects (why says which). */
static int fuzz_rt_import(const void *data, size_t size, mgopt_onnx_model **m, char *why, size_t why_len) {
  mgopt_diag d;
  *m = NULL;
  mgopt_diag_clear(&d);
  if (mgopt_onnx_read(size ? data : (const void *)"", size, NULL, m, &d) != MGOPT_OK) {
    *m = NULL;
    if (d.msg[0] == 0) {
      snprintf(why, why_len, "read failed without a message");
      return -1;
    }
    return 0;
  }
  if (mgopt_onnx_import(*m, &d) != MGOPT_OK) {
    if (d.msg[0] == 0) {
      snprintf(why, why_len, "import failed without a message");
      return -1;
    }
    return 0;
  }
  if (mgopt_program_verify((*m)->program, &d) != MGOPT_OK) {
    snprintf(why, why_len, "imported IR does not verify: %s%s%s", d.op, d.op[0] ? ": " : "", d.msg);
    return -1;
  }
  return 1;
}

/* 1 if the input behaves: does not import (with a message), or imports,
   exports, writes, and its output imports and exports again. */
static int fuzz_rt_check(const uint8_t *data, size_t size, char *why, size_t why_len) {
  mgopt_onnx_model *m = NULL, *back = NULL;
  mgopt_buf b1, b2;
  int r, ok = 1;
  why[0] = 0;
  r = fuzz_rt_import(data, size, &m, why, why_len);
  if (r <= 0) {
    if (m) mgopt_program_destroy(m->program);
    return r == 0;
  }
  if (mgopt_program_op_count(m->program) > FUZZ_RT_MAX_OPS) {
    mgopt_program_destroy(m->program);
    return 1;
  }
  memset(&b1, 0, sizeof b1);
  memset(&b2, 0, sizeof b2);
  if (!fuzz_rt_write(m->program, &b1, "first", why, why_len)) ok = 0;
  if (ok) {
    r = fuzz_rt_import(b1.data, b1.len, &back, why, why_len);
    if (r == 0) {
      mgopt_diag d;
      mgopt_onnx_model *again = NULL;
      /* say why the output does not import */
      mgopt_diag_clear(&d);
      if (mgopt_onnx_read(b1.data, b1.len, NULL, &again, &d) == MGOPT_OK) {
        mgopt_onnx_import(again, &d);
        mgopt_program_destroy(again->program);
      }
      snprintf(why, why_len, "the written model does not import: %s%s%s", d.op, d.op[0] ? ": " : "", d.msg);
    }
    if (r <= 0) ok = 0;
    else if (!fuzz_rt_write(back->program, &b2, "second", why, why_len)) ok = 0;
    if (back) mgopt_program_destroy(back->program);
  }
  mgopt_buf_free(&b1);
  mgopt_buf_free(&b2);
  mgopt_program_destroy(m->program);
  return ok;
}

#ifndef MGOPT_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char why[768];
  if (!fuzz_rt_check(data, size, why, sizeof why)) {
    fprintf(stderr, "fuzz_roundtrip: %s\n", why);
    abort();
  }
  return 0;
}
#else
#include "replay.h"

int main(int argc, char **argv) {
  static const char *const dirs[] = {"tests/fuzz/corpus/onnx", "tests/fuzz/corpus/roundtrip"};
  return fuzz_replay_main(fuzz_rt_check, argc, argv, dirs, 2, 0);
}
#endif
