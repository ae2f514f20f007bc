/* tests/difftest/gen.h — random well-typed .mil programs and per-pass pattern templates for the differential tester. */
#ifndef DIFFTEST_GEN_H
#define DIFFTEST_GEN_H
#include <stddef.h>
#include <stdint.h>

/* A seed gives the same text on every host: the generator has its own PRNG
   (splitmix64) and prints numbers it chose exactly (multiples of 1/8). */
typedef struct dt_text {
  char *data;
  size_t len, cap;
} dt_text;

/* Writes one program into out (appended; out->data NUL-terminated). pass: a
   pass's short name ("merge_consecutive_relus"): when the generator has a
   template for it, the program embeds that pattern (sometimes with a
   legality condition broken) in random surroundings; NULL or a pass without
   a template: a plain random program. The first line is a comment giving the
   sizes of the symbolic dims ("# DIMS s0=3 s1=2"). Returns 1 when a template
   was used, 0 otherwise, -1 on OOM. smooth: only ops whose output is a
   continuous function of the inputs (no floor, ceil, sign, no cond on a
   sign), for passes whose contract allows rounding differences; 2: nor
   sqrt or a division by a computed value either, for lossy passes (a value
   the pass may move across 0 would leave their domain). */
int dt_generate(uint64_t seed, const char *pass, int smooth, dt_text *out);
/* The same, with every choice read from data (two bytes a choice, so a
   fuzzer's mutations steer the program choice by choice); past its end the
   choices come from a PRNG seeded with a hash of data. */
int dt_generate_bytes(const uint8_t *data, size_t n, const char *pass, int smooth, dt_text *out);
/* The pass of the i-th template, NULL past the last. */
const char *dt_template_pass(int i);
/* 1 when dt_generate has a template for this pass. */
int dt_has_template(const char *pass);
void dt_text_free(dt_text *t);

#endif
