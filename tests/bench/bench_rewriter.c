/* tests/bench/bench_rewriter.c — the rewriter's cost on synthetic chains of 10^5 and 10^6 ops.

   usage: bench_rewriter [N...]     (default: 100000 1000000)

   For each N it builds main(%x) with a chain of N unary ops alternating relu
   and identity-like pairs, then times (wall clock, best of 3):
     build    constructing the chain through the API,
     verify   the verifier,
     sweep    the worklist driver with a pattern that never matches (pops only),
     collapse the driver with relu(relu(x)) -> relu(x), which fires N-1 times,
     dce      dead_code_elimination after cutting the output to the input,
     cleanup  the whole `cleanup` pipeline (16 passes) on a chain that
              alternates relu and add of a small constant (consts repeat, so
              const_deduplication and remove_redundant_ops have work).
   and prints ns per op, which stays flat when the cost grows linearly. */
#define _POSIX_C_SOURCE 199309L
#define MGOPT_IMPLEMENTATION
#include "bench.h"
#include "mgopt.h"
#include "mgopt_passes.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static mgopt_program *build(long n, mgopt_function **fo) {
  static const char *const slot[1] = {"x"};
  static const int64_t shape[2] = {1, 8};
  mgopt_program *p = mgopt_program_create(NULL);
  mgopt_function *f = mgopt_function_new(p, "main");
  mgopt_type t;
  mgopt_value *v;
  long i;
  mgopt_type_make_static(p, &t, MGOPT_DT_FP32, 2, shape);
  v = mgopt_block_add_arg(f->body, "x", &t);
  for (i = 0; i < n; i++) {
    char nm[32];
    mgopt_op *op;
    snprintf(nm, sizeof nm, "r%ld", i);
    op = mgopt_build_op(p, f->body, NULL, "relu", nm, 1, slot, &v, 1);
    op->outs[0]->type = t;
    v = op->outs[0];
  }
  mgopt_block_add_output(f->body, v);
  *fo = f;
  return p;
}

static mgopt_program *build_mixed(long n, mgopt_function **fo) {
  static const char *const slot[1] = {"x"}, *const slot2[2] = {"x", "y"};
  static const int64_t shape[2] = {1, 8};
  mgopt_program *p = mgopt_program_create(NULL);
  mgopt_function *f = mgopt_function_new(p, "main");
  mgopt_type t;
  mgopt_value *v;
  long i;
  mgopt_type_make_static(p, &t, MGOPT_DT_FP32, 2, shape);
  v = mgopt_block_add_arg(f->body, "x", &t);
  for (i = 0; i < n; i++) {
    char nm[32];
    mgopt_op *op;
    snprintf(nm, sizeof nm, "v%ld", i);
    if (i % 2) {
      mgopt_tensor *c = mgopt_tensor_new_scalar_f64(p, MGOPT_DT_FP32, (double)(i % 7));
      mgopt_value *vals[2];
      char cn[32];
      snprintf(cn, sizeof cn, "c%ld", i);
      vals[0] = v;
      vals[1] = mgopt_build_const(p, f->body, NULL, cn, c);
      op = mgopt_build_op(p, f->body, NULL, "add", nm, 2, slot2, vals, 1);
    } else {
      op = mgopt_build_op(p, f->body, NULL, "relu", nm, 1, slot, &v, 1);
    }
    op->outs[0]->type = t;
    v = op->outs[0];
  }
  mgopt_block_add_output(f->body, v);
  *fo = f;
  return p;
}

static int never(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  (void)rw;
  (void)op;
  (void)ud;
  return 0;
}

static int relu_relu(mgopt_rewriter *rw, mgopt_op *op, void *ud) {
  mgopt_value *in = mgopt_op_operand(op, "x");
  (void)ud;
  if (!in || !in->def || in->def->kind != MGOPT_OP_relu) return 0;
  mgopt_rw_replace_value(rw, op->outs[0], in);
  mgopt_rw_erase(rw, op);
  return 1;
}

int main(int argc, char **argv) {
  long sizes[8] = {100000, 1000000};
  int nsizes = 2, i;
  if (argc > 1) {
    nsizes = 0;
    for (i = 1; i < argc && nsizes < 8; i++) sizes[nsizes++] = atol(argv[i]);
  }
  printf("%10s %12s %12s %12s %12s %12s %12s   (ns per op, best of 3)\n", "ops", "build", "verify", "sweep",
         "collapse", "dce", "cleanup");
  for (i = 0; i < nsizes; i++) {
    long n = sizes[i];
    double best[6] = {1e30, 1e30, 1e30, 1e30, 1e30, 1e30};
    int rep, k;
    for (rep = 0; rep < 3; rep++) {
      mgopt_function *f;
      mgopt_program *p;
      mgopt_pattern pat;
      mgopt_rewrite_config cfg;
      mgopt_diag d;
      double t0 = bench_wall(), t[6];
      p = build(n, &f);
      t[0] = bench_wall() - t0;
      t0 = bench_wall();
      if (mgopt_program_verify(p, &d) != MGOPT_OK) {
        printf("verify failed: %s\n", d.msg);
        return 1;
      }
      t[1] = bench_wall() - t0;
      memset(&pat, 0, sizeof pat);
      memset(&cfg, 0, sizeof cfg);
      pat.name = "never";
      pat.root_kind = MGOPT_OP_relu;
      pat.fn = never;
      t0 = bench_wall();
      mgopt_rewrite_function(p, f, &pat, 1, &cfg, NULL, &d);
      t[2] = bench_wall() - t0;
      pat.name = "relu_relu";
      pat.fn = relu_relu;
      t0 = bench_wall();
      if (mgopt_rewrite_function(p, f, &pat, 1, &cfg, NULL, &d) != MGOPT_OK || f->body->nops != 1) {
        printf("collapse failed: %s (%d ops left)\n", d.msg, (int)f->body->nops);
        return 1;
      }
      t[3] = bench_wall() - t0;
      mgopt_program_destroy(p);
      /* dce over a fully dead chain */
      p = build(n, &f);
      mgopt_block_set_output(f->body, 0, f->body->args[0]);
      t0 = bench_wall();
      if (mgopt_pipeline_run(p, mgopt_builtin_registry(), "dead_code_elimination", NULL, &d) ||
          f->body->nops != 0) {
        printf("dce failed\n");
        return 1;
      }
      t[4] = bench_wall() - t0;
      mgopt_program_destroy(p);
      p = build_mixed(n, &f);
      t0 = bench_wall();
      if (mgopt_pipeline_run(p, mgopt_builtin_registry(), "cleanup", NULL, &d)) {
        printf("cleanup failed: %s\n", d.msg);
        return 1;
      }
      t[5] = bench_wall() - t0;
      mgopt_program_destroy(p);
      for (k = 0; k < 6; k++)
        if (t[k] < best[k]) best[k] = t[k];
    }
    printf("%10ld", n);
    for (k = 0; k < 6; k++) printf(" %12.1f", best[k] * 1e9 / (double)n);
    printf("\n");
  }
  return 0;
}
