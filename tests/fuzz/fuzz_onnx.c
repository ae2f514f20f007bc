/* tests/fuzz/fuzz_onnx.c — libFuzzer harness for the ONNX reader and importer: read, write, read again,
   compare, write again; then import into the IR, verify, run the default pipeline (verifying after each
   pass), export and write, and read that output back. Every step either succeeds or returns an error
   with a message: never a crash, a leak, or an IR the verifier rejects.

   Fuzz:    make fuzz-onnx            (clang -fsanitize=fuzzer,address,undefined)
   Replay:  build with -DMGOPT_FUZZ_REPLAY; run with files to replay, or with
            no argument to replay every file of tests/fuzz/corpus/onnx/.
            Prints "N passed, N failed" (make test runs it). */
#define MGOPT_IMPLEMENTATION
#include "mgopt.h"
#include "mgopt_passes.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The default pipeline (its `cleanup` spelled out) with every
   const_elimination limited to 4096-element results: a fuzzed shape may ask
   for constants of gigabytes. */
static const char *fuzz_pipeline(void) {
  static char text[8192];
  char both[8192];
  const mgopt_registry *r = mgopt_builtin_registry();
  const char *def = NULL, *clean = NULL, *src, *at;
  size_t n = 0;
  int32_t i;
  if (text[0]) return text;
  for (i = 0; i < r->npipelines; i++) {
    if (strcmp(r->pipelines[i].name, "default") == 0) def = r->pipelines[i].passes;
    if (strcmp(r->pipelines[i].name, "cleanup") == 0) clean = r->pipelines[i].passes;
  }
  if (!def || !clean) return "default";
  /* default ends with the cleanup pipeline by name */
  n = strlen(def);
  if (n < 8 || strcmp(def + n - 8, ",cleanup") != 0) return "default";
  snprintf(both, sizeof both, "%.*s,%s", (int)(n - 8), def, clean);
  for (src = both, n = 0; *src && n + 64 < sizeof text;) {
    at = strstr(src, "const_elimination");
    if (!at) at = src + strlen(src);
    while (src < at && n + 64 < sizeof text) text[n++] = *src++;
    if (*src) {
      n += (size_t)snprintf(text + n, sizeof text - n, "const_elimination{skip_const_by_size=4096}");
      src += strlen("const_elimination");
    }
  }
  text[n] = 0;
  return text;
}

/* Import, verify, the default pipeline, export, write, read back. 1 if each
   step succeeded or failed cleanly (a status and a message). */
static int fuzz_onnx_pipeline(mgopt_onnx_model *m, char *why, size_t why_len) {
  mgopt_diag d;
  mgopt_pipeline_options ro;
  mgopt_onnx_model *out = NULL, *back;
  mgopt_buf b;
  mgopt_status st;
  st = mgopt_onnx_import(m, &d);
  if (st != MGOPT_OK) {
    if (d.msg[0] == 0) {
      snprintf(why, why_len, "import failed without a message");
      return 0;
    }
    return 1;
  }
  if (mgopt_program_verify(m->program, &d) != MGOPT_OK) {
    snprintf(why, why_len, "imported IR does not verify: %s", d.msg);
    return 0;
  }
  if (mgopt_program_op_count(m->program) > 4096) return 1;
  memset(&ro, 0, sizeof ro);
  ro.verify_each = 1;
  st = mgopt_pipeline_run(m->program, mgopt_builtin_registry(), fuzz_pipeline(), &ro, &d);
  if (st == MGOPT_ERR_VERIFY) {
    snprintf(why, why_len, "a pass left an invalid IR: %s%s%s", d.op, d.op[0] ? ": " : "", d.msg);
    return 0;
  }
  if (st != MGOPT_OK) {
    if (d.msg[0] == 0) {
      snprintf(why, why_len, "pipeline failed without a message");
      return 0;
    }
    return 1;
  }
  if (mgopt_onnx_export(m->program, NULL, &out, &d) != MGOPT_OK) {
    if (d.msg[0] == 0) {
      snprintf(why, why_len, "export failed without a message");
      return 0;
    }
    return 1;
  }
  memset(&b, 0, sizeof b);
  if (mgopt_onnx_write(out, NULL, &b, NULL, &d) != MGOPT_OK) {
    mgopt_buf_free(&b);
    return d.msg[0] != 0 || (snprintf(why, why_len, "write failed without a message"), 0);
  }
  if (mgopt_onnx_read(b.data, b.len, NULL, &back, &d) != MGOPT_OK) back = NULL;
  if (!back) {
    snprintf(why, why_len, "mgopt's own output does not read: %s", d.msg);
    mgopt_buf_free(&b);
    return 0;
  }
  mgopt_program_destroy(back->program);
  mgopt_buf_free(&b);
  return 1;
}

/* 1 if the input behaves: rejected with a located diagnostic, or accepted
   and then stable under write -> read (equal trees) and write (equal bytes). */
static int fuzz_onnx_check(const uint8_t *data, size_t size, char *why, size_t why_len) {
  mgopt_diag d;
  mgopt_onnx_model *m, *m2;
  mgopt_buf b1, b2;
  char where[256];
  int ok = 1;
  why[0] = 0;
  if (mgopt_onnx_read(size ? (const void *)data : (const void *)"", size, NULL, &m, &d) != MGOPT_OK) m = NULL;
  if (!m) {
    if (d.status == MGOPT_OK || d.msg[0] == 0) {
      snprintf(why, why_len, "rejected without a diagnostic");
      return 0;
    }
    if (d.status != MGOPT_ERR_NOMEM && (d.offset < 0 || (size_t)d.offset > size)) {
      snprintf(why, why_len, "diagnostic offset %lld outside the input", (long long)d.offset);
      return 0;
    }
    return 1;
  }
  memset(&b1, 0, sizeof b1);
  memset(&b2, 0, sizeof b2);
  if (mgopt_onnx_write(m, NULL, &b1, NULL, &d) != MGOPT_OK) {
    snprintf(why, why_len, "write failed: %s", d.msg);
    ok = 0;
  } else {
    if (mgopt_onnx_read(b1.data, b1.len, NULL, &m2, &d) != MGOPT_OK) m2 = NULL;
    if (!m2) {
      snprintf(why, why_len, "re-read failed: %s", d.msg);
      ok = 0;
    } else {
      if (!mgopt_onnx_model_equal(m, m2, where, sizeof where)) {
        snprintf(why, why_len, "round trip differs at %s", where);
        ok = 0;
      }
      if (mgopt_onnx_write(m2, NULL, &b2, NULL, &d) != MGOPT_OK || b1.len != b2.len ||
          memcmp(b1.data, b2.data, b1.len) != 0) {
        snprintf(why, why_len, "second write differs");
        ok = 0;
      }
      mgopt_program_destroy(m2->program);
    }
  }
  mgopt_buf_free(&b1);
  mgopt_buf_free(&b2);
  if (ok) ok = fuzz_onnx_pipeline(m, why, why_len);
  mgopt_program_destroy(m->program);
  return ok;
}

#ifndef MGOPT_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char why[512];
  if (!fuzz_onnx_check(data, size, why, sizeof why)) {
    fprintf(stderr, "fuzz_onnx: %s\n", why);
    abort();
  }
  return 0;
}
#else
#include "replay.h"

int main(int argc, char **argv) {
  int failed = 0;
  static const char *const dirs[] = {"tests/fuzz/corpus/onnx"};
  mgopt_diag pd;
  /* the harness's pipeline must itself be valid, or every run would fail "cleanly" */
  if (mgopt_pipeline_check(mgopt_builtin_registry(), fuzz_pipeline(), &pd) != MGOPT_OK ||
      strstr(fuzz_pipeline(), "skip_const_by_size") == NULL) {
    printf("fuzz pipeline '%s': %s\n", fuzz_pipeline(), pd.msg);
    failed++;
  }
  return fuzz_replay_main(fuzz_onnx_check, argc, argv, dirs, 1, failed);
}
#endif
