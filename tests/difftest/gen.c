/* tests/difftest/gen.c — random well-typed .mil programs and per-pass pattern templates for the differential tester. */
#include "gen.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- text, PRNG */

/* I8 .. U2 appear only in templates' constants and quantized values: random ops never pick them */
enum { F32, F16, I32, BOOL, I8, U8, U1, U2 };
static const char *const dt_names[] = {"fp32", "fp16", "int32", "bool", "int8", "uint8", "uint1", "uint2"};

#define MAXV 1024
#define MAXR 5

/* A value %v<i>: dtype, rank, dims; sym[k] >= 0 names symbolic dim s<sym[k]>
   (then d[k] is its size in this program). */
typedef struct gv {
  int dt, rank;
  int d[MAXR], sym[MAXR];
  int vis; /* visible from the block being written */
  int isconst, used;
} gv;

typedef struct G {
  uint64_t s;
  const uint8_t *in;      /* choices read from these bytes first (a fuzzer's input) */
  size_t nin, pos;
  dt_text *o;
  int oom;
  gv v[MAXV];
  int nv;
  int symsz[2];
  int ind;                /* indentation level */
  int outs[8], nouts;     /* values a template wants as function outputs */
  int loop_inv;           /* while_loop bodies may pass a loop var through */
  int smooth;             /* no op whose output jumps (floor, ceil, sign, cond on a sign);
                             2: nor one defined on part of the line (sqrt, division by a value
                             or by a constant that may be 0) */
  int state_arg, int_arg; /* main's extra arguments a template asked for, else -1 */
  dt_text fns;            /* functions a template defined, written after main */
  int nfn;
  char raw_out[32];       /* an output a template named itself (%"...": odd names), else "" */
} G;

void dt_text_free(dt_text *t) {
  free(t->data);
  t->data = NULL;
  t->len = t->cap = 0;
}

static void out(G *g, const char *fmt, ...) {
  va_list ap;
  int n;
  if (g->oom) return;
  for (;;) {
    size_t room = g->o->cap - g->o->len;
    va_start(ap, fmt);
    n = vsnprintf(g->o->data ? g->o->data + g->o->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n < 0) { g->oom = 1; return; }
    if ((size_t)n < room) { g->o->len += (size_t)n; return; }
    {
      size_t nc = g->o->cap * 2 + (size_t)n + 256;
      char *q = (char *)realloc(g->o->data, nc);
      if (!q) { g->oom = 1; return; }
      g->o->data = q;
      g->o->cap = nc;
    }
  }
}

static uint64_t next(G *g) { /* the input bytes, two per choice; then splitmix64 */
  uint64_t z;
  if (g->pos < g->nin) {
    z = g->in[g->pos++];
    if (g->pos < g->nin) z |= (uint64_t)g->in[g->pos++] << 8;
    return z;
  }
  z = (g->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static int rnd(G *g, int n) { return n <= 1 ? 0 : (int)(next(g) % (uint64_t)n); }
static int chance(G *g, int pct) { return rnd(g, 100) < pct; }

/* ---------------------------------------------------------------- values */

static int numel(const gv *t) {
  int i, n = 1;
  for (i = 0; i < t->rank; i++) n *= t->d[i];
  return n;
}
static int is_static(const gv *t) {
  int i;
  for (i = 0; i < t->rank; i++)
    if (t->sym[i] >= 0) return 0;
  return 1;
}
static int is_float(int dt) { return dt == F32 || dt == F16; }

static void ptype(G *g, const gv *t) {
  int i;
  out(g, "(");
  for (i = 0; i < t->rank; i++) {
    if (t->sym[i] >= 0) out(g, "s%d, ", t->sym[i]);
    else out(g, "%d, ", t->d[i]);
  }
  out(g, "%s)", dt_names[t->dt]);
}

static void indent(G *g) {
  int i;
  for (i = 0; i < g->ind; i++) out(g, "  ");
}

/* Starts a definition line "%vN: TYPE" of a new value of type t; returns N. */
static int def(G *g, const gv *t) {
  int i = g->nv < MAXV - 1 ? g->nv++ : (g->oom = 1, 0);
  g->v[i] = *t;
  g->v[i].vis = 1;
  indent(g);
  out(g, "%%v%d: ", i);
  ptype(g, t);
  return i;
}

static gv mk(int dt, int rank, const int *d) {
  gv t;
  int i;
  memset(&t, 0, sizeof t);
  t.dt = dt;
  t.rank = rank;
  for (i = 0; i < MAXR; i++) t.sym[i] = -1;
  for (i = 0; i < rank; i++) t.d[i] = d ? d[i] : 1;
  return t;
}

/* constant kinds */
enum { C_RAND, C_ZERO, C_ONE, C_MONE, C_SAME, C_POS, C_SMALL01 };

static void pnum(G *g, int dt, int kind, int same) {
  int k;
  if (dt == BOOL) { out(g, "%s", rnd(g, 2) ? "true" : "false"); return; }
  if (dt == U1 || dt == U2) { out(g, "%d", kind == C_ZERO ? 0 : rnd(g, dt == U1 ? 2 : 4)); return; }
  switch (kind) {
  case C_ZERO: k = 0; break;
  case C_ONE: k = 8; break;
  case C_MONE: k = -8; break;
  case C_SAME: k = same; break;
  case C_POS: k = 1 + rnd(g, 24); break;
  case C_SMALL01: k = 1 + rnd(g, 6); break;
  default: k = rnd(g, 33) - 16; break;
  }
  if (dt == I32) out(g, "%d", k / 8 != 0 ? k / 8 : k % 4);
  else if (dt == I8) out(g, "%d", k);
  else if (dt == U8) out(g, "%d", k + 16);
  else out(g, "%g", k / 8.0);
}

/* A const of type t; values of the given kind. */
static int cnst_t(G *g, gv t, int kind) {
  int n = numel(&t), i, k, same = rnd(g, 33) - 16;
  int idx[MAXR];
  int id;
  t.sym[0] = t.sym[1] = t.sym[2] = t.sym[3] = t.sym[4] = -1;
  id = def(g, &t);
  g->v[id].isconst = 1;
  out(g, "* = const(val=");
  if (t.rank == 0) {
    pnum(g, t.dt, kind, same);
    out(g, ")\n");
    return id;
  }
  memset(idx, 0, sizeof idx);
  for (i = 0; i < n; i++) {
    /* opening brackets for every axis whose index is 0 from the right */
    for (k = 0; k < t.rank; k++) {
      int j, allzero = 1;
      for (j = k; j < t.rank; j++)
        if (idx[j]) allzero = 0;
      if (allzero) out(g, "[");
    }
    pnum(g, t.dt, kind, same);
    /* increment, closing brackets */
    for (k = t.rank - 1; k >= 0; k--) {
      if (++idx[k] < t.d[k]) break;
      idx[k] = 0;
      out(g, "]");
    }
    if (i + 1 < n) out(g, ", ");
  }
  out(g, ")\n");
  return id;
}
static int cnst(G *g, int dt, int rank, const int *d, int kind) { return cnst_t(g, mk(dt, rank, d), kind); }
static int cnst_scalar(G *g, int dt, double v) {
  gv t = mk(dt, 0, NULL);
  int id = def(g, &t);
  g->v[id].isconst = 1;
  if (dt == I32) out(g, "* = const(val=%d)\n", (int)v);
  else out(g, "* = const(val=%.9g)\n", v);
  return id;
}
static int cnst_ints(G *g, int n, const int *vals) {
  int d[1], id, i;
  gv t;
  d[0] = n;
  t = mk(I32, 1, d);
  id = def(g, &t);
  g->v[id].isconst = 1;
  out(g, "* = const(val=[");
  for (i = 0; i < n; i++) out(g, "%s%d", i ? ", " : "", vals[i]);
  out(g, "])\n");
  return id;
}

static void pints(G *g, int n, const int *a) {
  int i;
  out(g, "[");
  for (i = 0; i < n; i++) out(g, "%s%d", i ? ", " : "", a[i]);
  out(g, "]");
}

/* A visible value, recent ones preferred; want: -1 any dtype, else that dtype; -2 any float. */
static int pick(G *g, int want) {
  int tries, i;
  for (tries = 0; tries < 64; tries++) {
    i = g->nv - 1 - (chance(g, 70) ? rnd(g, 4) : rnd(g, g->nv));
    if (i < 0 || !g->v[i].vis) continue;
    if (g->v[i].dt > BOOL && want != g->v[i].dt) continue;
    if (want == -2 ? !is_float(g->v[i].dt) : (want >= 0 && g->v[i].dt != want)) continue;
    return i;
  }
  for (i = g->nv - 1; i >= 0; i--)
    if (g->v[i].vis && (g->v[i].dt <= BOOL || want == g->v[i].dt) && (want == -2 ? is_float(g->v[i].dt) : (want < 0 || g->v[i].dt == want))) return i;
  return -1;
}

/* ---------------------------------------------------------------- ops */

static int unary(G *g, const char *op, int x) {
  gv t = g->v[x];
  int id = def(g, &t);
  out(g, " = %s(x=%%v%d)\n", op, x);
  return id;
}

/* Broadcast type of a and b (numpy rules), or -1 when they do not broadcast. */
static int bcast(const gv *a, const gv *b, gv *r) {
  int i, rank = a->rank > b->rank ? a->rank : b->rank;
  *r = mk(a->dt, rank, NULL);
  for (i = 0; i < rank; i++) {
    int ia = i - (rank - a->rank), ib = i - (rank - b->rank);
    int da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
    int sa = ia >= 0 ? a->sym[ia] : -1, sb = ib >= 0 ? b->sym[ib] : -1;
    if (sa >= 0 && sb >= 0) {
      if (sa != sb) return -1;
      r->d[i] = da, r->sym[i] = sa;
    } else if (sa >= 0) {
      if (db != 1) return -1;
      r->d[i] = da, r->sym[i] = sa;
    } else if (sb >= 0) {
      if (da != 1) return -1;
      r->d[i] = db, r->sym[i] = sb;
    } else if (da == db || db == 1) {
      r->d[i] = da;
    } else if (da == 1) {
      r->d[i] = db;
    } else {
      return -1;
    }
  }
  return 0;
}

static int binary(G *g, const char *op, int a, int b) {
  gv t;
  int id;
  if (bcast(&g->v[a], &g->v[b], &t) != 0) return -1;
  if (!strcmp(op, "greater") || !strcmp(op, "less") || !strcmp(op, "equal")) t.dt = BOOL;
  id = def(g, &t);
  out(g, " = %s(x=%%v%d, y=%%v%d)\n", op, a, b);
  return id;
}

/* A const that broadcasts against x without growing it: a suffix of x's dims, some set to 1. */
static int bconst(G *g, int x, int kind) {
  gv t = g->v[x];
  int r = rnd(g, t.rank + 1), i;
  gv c = mk(t.dt, r, NULL);
  for (i = 0; i < r; i++) {
    int k = t.rank - r + i;
    c.d[i] = (t.sym[k] >= 0 || chance(g, 40)) ? 1 : t.d[k];
  }
  return cnst_t(g, c, kind);
}

static void perm_rand(G *g, int r, int *p) {
  int i;
  for (i = 0; i < r; i++) p[i] = i;
  for (i = r - 1; i > 0; i--) {
    int j = rnd(g, i + 1), s = p[i];
    p[i] = p[j];
    p[j] = s;
  }
}

static int transpose(G *g, int x, const int *perm) {
  gv t = g->v[x], r = t;
  int i, id;
  for (i = 0; i < t.rank; i++) r.d[i] = t.d[perm[i]], r.sym[i] = t.sym[perm[i]];
  id = def(g, &r);
  out(g, " = transpose(x=%%v%d, perm=", x);
  pints(g, t.rank, perm);
  out(g, ")\n");
  return id;
}

static int reshape(G *g, int x, int rank, const int *d) {
  int s = cnst_ints(g, rank, d), id;
  gv r = mk(g->v[x].dt, rank, d);
  id = def(g, &r);
  out(g, " = reshape(x=%%v%d, shape=%%v%d)\n", x, s);
  return id;
}

/* A random static shape with the same element count as x (x static). */
static void reshape_dims(G *g, const gv *t, int *rank, int *d) {
  int n = numel(t), r = 0;
  while (n > 1 && r < 4) {
    int f, c[8], nc = 0;
    for (f = 2; f <= n; f++)
      if (n % f == 0 && nc < 8) c[nc++] = f;
    f = chance(g, 30) ? n : c[rnd(g, nc)];
    d[r++] = f;
    n /= f;
  }
  if (n > 1) d[r - 1] *= n;
  if (chance(g, 30) && r < 4) {
    int k = rnd(g, r + 1), i;
    for (i = r; i > k; i--) d[i] = d[i - 1];
    d[k] = 1;
    r++;
  }
  *rank = r;
}

static int reduce(G *g, const char *op, int x, int naxes, const int *axes, int keep) {
  gv t = g->v[x], r = mk(t.dt, 0, NULL);
  int i, j, id;
  for (i = 0; i < t.rank; i++) {
    int red = 0;
    for (j = 0; j < naxes; j++)
      if (axes[j] == i || axes[j] + t.rank == i) red = 1;
    if (red && !keep) continue;
    r.d[r.rank] = red ? 1 : t.d[i];
    r.sym[r.rank] = red ? -1 : t.sym[i];
    r.rank++;
  }
  id = def(g, &r);
  out(g, " = %s(x=%%v%d, axes=", op, x);
  pints(g, naxes, axes);
  out(g, ", keep_dims=%s)\n", keep ? "true" : "false");
  return id;
}

static int expand_dims(G *g, int x, int ax) {
  gv t = g->v[x], r = t;
  int i, id;
  r.rank = t.rank + 1;
  for (i = r.rank - 1; i > ax; i--) r.d[i] = t.d[i - 1], r.sym[i] = t.sym[i - 1];
  r.d[ax] = 1, r.sym[ax] = -1;
  id = def(g, &r);
  out(g, " = expand_dims(x=%%v%d, axes=[%d])\n", x, ax);
  return id;
}

static int squeeze(G *g, int x, int ax) {
  gv t = g->v[x], r = t;
  int i, id;
  r.rank = t.rank - 1;
  for (i = ax; i < r.rank; i++) r.d[i] = t.d[i + 1], r.sym[i] = t.sym[i + 1];
  id = def(g, &r);
  out(g, " = squeeze(x=%%v%d, axes=[%d])\n", x, ax);
  return id;
}

static int cast(G *g, int x, int dt) {
  gv r = g->v[x];
  int id;
  r.dt = dt;
  id = def(g, &r);
  out(g, " = cast(x=%%v%d, dtype=\"%s\")\n", x, dt_names[dt]);
  return id;
}

static int matmul_w(G *g, int x, int n) {
  gv t = g->v[x], r = t;
  int d[2], w, id;
  d[0] = t.d[t.rank - 1];
  d[1] = n;
  w = cnst(g, t.dt, 2, d, C_RAND);
  r.d[t.rank - 1] = n;
  r.sym[t.rank - 1] = -1;
  id = def(g, &r);
  out(g, " = matmul(x=%%v%d, y=%%v%d)\n", x, w);
  return id;
}

/* MIL's lstm, gru or rnn on x [S, B, I]: constant weights and states, a
   random direction, output_sequence and activations; the value that
   carries on is the output or the final state. */
static int recurrent_mil(G *g, int x) {
  static const char *const kinds[] = {"rnn", "gru", "lstm"}, *const dirs[] = {"forward", "reverse", "bidirectional"};
  static const char *const acts[] = {"sigmoid", "tanh", "relu", "scaled_tanh", "sigmoid_hard", "linear"};
  gv t = g->v[x], yt, ht;
  int kind = rnd(g, 3), gates = kind == 2 ? 4 : kind == 1 ? 3 : 1, dir = rnd(g, kind == 2 ? 3 : 2), D = dir == 2 ? 2 : 1;
  int H = 1 + rnd(g, 3), S = t.d[0], B = t.d[1], I = t.d[2], seq = chance(g, 50);
  int w, r, b = -1, h0, c0 = -1, wb = -1, rb = -1, bb = -1, y, yh, d[3], k;
  d[0] = gates * H, d[1] = I;
  w = cnst(g, t.dt, 2, d, C_RAND);
  d[1] = H;
  r = cnst(g, t.dt, 2, d, C_RAND);
  if (chance(g, 60)) b = cnst(g, t.dt, 1, d, C_RAND);
  if (D == 2) {
    d[1] = I;
    wb = cnst(g, t.dt, 2, d, C_RAND);
    d[1] = H;
    rb = cnst(g, t.dt, 2, d, C_RAND);
    if (b >= 0) bb = cnst(g, t.dt, 1, d, C_RAND);
  }
  d[0] = B, d[1] = D * H;
  h0 = cnst(g, t.dt, 2, d, C_RAND);
  if (kind == 2) c0 = cnst(g, t.dt, 2, d, C_RAND);
  d[0] = seq ? S : 1, d[1] = B, d[2] = D * H;
  yt = mk(t.dt, 3, d);
  d[0] = B, d[1] = D * H;
  ht = mk(t.dt, 2, d);
  y = def(g, &yt);
  yh = g->nv;
  for (k = 1; k < (kind == 2 ? 3 : 2); k++) {
    int id = g->nv < MAXV - 1 ? g->nv++ : (g->oom = 1, 0);
    g->v[id] = ht;
    g->v[id].vis = 1;
    out(g, ", %%v%d: ", id);
    ptype(g, &ht);
  }
  out(g, " = %s(x=%%v%d, initial_h=%%v%d", kinds[kind], x, h0);
  if (c0 >= 0) out(g, ", initial_c=%%v%d", c0);
  out(g, ", weight_ih=%%v%d, weight_hh=%%v%d", w, r);
  if (b >= 0) out(g, ", bias=%%v%d", b);
  if (wb >= 0) out(g, ", weight_ih_back=%%v%d, weight_hh_back=%%v%d", wb, rb);
  if (bb >= 0) out(g, ", bias_back=%%v%d", bb);
  if (dir || chance(g, 30)) out(g, ", direction=\"%s\"", dirs[dir]);
  if (seq) out(g, ", output_sequence=true");
  if (chance(g, 40)) out(g, ", activation=\"%s\"", acts[rnd(g, 6)]);
  if (kind > 0 && chance(g, 30)) out(g, ", recurrent_activation=\"%s\"", acts[rnd(g, 6)]);
  if (kind == 2 && chance(g, 20)) out(g, ", clip=%g", (1 + rnd(g, 8)) / 4.0);
  out(g, ")\n");
  return chance(g, 50) ? y : yh;
}

/* An opaque onnx::RNN, GRU or LSTM on x as X (layout 0 [S, B, I] or 1
   [B, S, I]): constant weights, some of the optional inputs and attributes
   (direction, clip, activations, input_forget, linear_before_reset); the
   value that carries on is Y or Y_h. Half the time MIL's op instead. */
static int recurrent(G *g, int x) {
  static const char *const kinds[] = {"RNN", "GRU", "LSTM"}, *const dirs[] = {"forward", "reverse", "bidirectional"};
  gv t = g->v[x], yt, ht;
  int kind = rnd(g, 3), gates = kind == 2 ? 4 : kind == 1 ? 3 : 1, dir = rnd(g, 3), D = dir == 2 ? 2 : 1;
  int H = 1 + rnd(g, 3), layout = chance(g, 25), S = t.d[layout ? 1 : 0], B = t.d[layout ? 0 : 1], I = t.d[2];
  int w, r, b = -1, h0 = -1, c0 = -1, pp = -1, y, yh, d[4], k, nout = kind == 2 ? 3 : 2;
  if (chance(g, 50)) return recurrent_mil(g, x);
  d[0] = D, d[1] = gates * H, d[2] = I;
  w = cnst(g, t.dt, 3, d, C_RAND);
  d[2] = H;
  r = cnst(g, t.dt, 3, d, C_RAND);
  if (chance(g, 60)) {
    d[1] = 2 * gates * H;
    b = cnst(g, t.dt, 2, d, C_RAND);
  }
  d[0] = layout ? B : D, d[1] = layout ? D : B, d[2] = H;
  if (chance(g, 50)) h0 = cnst(g, t.dt, 3, d, C_RAND);
  if (kind == 2 && chance(g, 40)) c0 = cnst(g, t.dt, 3, d, C_RAND);
  if (kind == 2 && chance(g, 30)) {
    d[0] = D, d[1] = 3 * H;
    pp = cnst(g, t.dt, 2, d, C_RAND);
  }
  if (layout) d[0] = B, d[1] = S, d[2] = D, d[3] = H;
  else d[0] = S, d[1] = D, d[2] = B, d[3] = H;
  yt = mk(t.dt, 4, d);
  d[0] = layout ? B : D, d[1] = layout ? D : B, d[2] = H;
  ht = mk(t.dt, 3, d);
  y = def(g, &yt);
  yh = g->nv < MAXV - 2 ? g->nv : (g->oom = 1, 0);
  for (k = 1; k < nout; k++) {
    int id = g->nv < MAXV - 1 ? g->nv++ : (g->oom = 1, 0);
    g->v[id] = ht;
    g->v[id].vis = 1;
    out(g, ", %%v%d: ", id);
    ptype(g, &ht);
  }
  out(g, " = onnx::%s(in0=%%v%d, in1=%%v%d, in2=%%v%d", kinds[kind], x, w, r);
  if (b >= 0) out(g, ", in3=%%v%d", b);
  if (h0 >= 0) out(g, ", in5=%%v%d", h0);
  if (c0 >= 0) out(g, ", in6=%%v%d", c0);
  if (pp >= 0) out(g, ", in7=%%v%d", pp);
  out(g, ", hidden_size=%d", H);
  if (dir || chance(g, 30)) out(g, ", direction=\"%s\"", dirs[dir]);
  if (layout) out(g, ", layout=1");
  if (chance(g, 20)) out(g, ", clip=%g", (1 + rnd(g, 8)) / 4.0);
  if (kind == 1 && chance(g, 50)) out(g, ", linear_before_reset=1");
  if (kind == 2 && chance(g, 20)) out(g, ", input_forget=1");
  if (kind == 0 && chance(g, 30)) out(g, ", activations=[\"%s\"%s]", chance(g, 50) ? "Relu" : "Sigmoid", D == 2 ? ", \"Tanh\"" : "");
  out(g, ")\n");
  return chance(g, 50) ? y : yh;
}

static const char *const unops[] = {"relu", "tanh", "sigmoid", "abs", "exp", "square", "floor", "ceil", "sign",
                                    "sin", "relu6", "erf", "sqrt", "cos", "silu", "softplus"};
static const char *const binops[] = {"add", "sub", "mul", "maximum", "minimum", "real_div"};

static void random_ops(G *g, int n, int depth);

/* cond over x: both branches map x to x's type. */
static int gen_cond(G *g, int x, int depth) {
  int zero, r, all[MAXR], i, pred, id, start;
  gv t = g->v[x];
  for (i = 0; i < t.rank; i++) all[i] = i;
  r = reduce(g, "reduce_sum", x, t.rank, all, 0);
  zero = cnst_scalar(g, t.dt, 0);
  pred = binary(g, "greater", r, zero);
  id = def(g, &t);
  out(g, " = cond(pred=%%v%d)\n", pred);
  g->v[id].vis = 0;
  g->ind++;
  indent(g);
  out(g, "then_branch() {\n");
  g->ind++;
  start = g->nv;
  r = unary(g, unops[rnd(g, 4)], x);
  if (depth < 2 && chance(g, 30)) random_ops(g, 1 + rnd(g, 2), depth + 1);
  r = unary(g, "relu", r);
  for (i = start; i < g->nv; i++) g->v[i].vis = 0;
  g->ind--;
  indent(g);
  out(g, "} -> (%%v%d)\n", r);
  indent(g);
  out(g, "else_branch() {\n");
  g->ind++;
  start = g->nv;
  r = chance(g, 30) ? x : unary(g, unops[rnd(g, 4)], x);
  for (i = start; i < g->nv; i++) g->v[i].vis = 0;
  g->ind--;
  indent(g);
  out(g, "} -> (%%v%d)\n", r);
  g->ind--;
  g->v[id].vis = 1;
  return id;
}

/* while_loop(i = 0, x) with i < trips: x = f(x), i = i + 1 */
static int gen_loop(G *g, int x, int depth) {
  int zero = cnst_scalar(g, I32, 0), trips, one, id0, id1, a0, a1, c, s, y, i, start;
  gv ti = mk(I32, 0, NULL), tx = g->v[x];
  (void)depth;
  id0 = def(g, &ti);
  g->nv++; /* the second output is written by hand */
  id1 = id0 + 1;
  g->v[id1] = tx;
  g->v[id1].vis = 1;
  out(g, ", %%v%d: ", id1);
  ptype(g, &tx);
  out(g, " = while_loop(loop_vars=(%%v%d, %%v%d))\n", zero, x);
  g->v[id0].vis = g->v[id1].vis = 0;
  g->ind++;
  start = g->nv;
  /* loop_cond(%a, %b) */
  a0 = g->nv++;
  g->v[a0] = ti;
  a1 = g->nv++;
  g->v[a1] = tx;
  g->v[a0].vis = g->v[a1].vis = 1;
  indent(g);
  out(g, "loop_cond(%%v%d: ", a0);
  ptype(g, &ti);
  out(g, ", %%v%d: ", a1);
  ptype(g, &tx);
  out(g, ") {\n");
  g->ind++;
  trips = cnst_scalar(g, I32, 1 + rnd(g, 3));
  c = binary(g, "less", a0, trips);
  g->ind--;
  indent(g);
  out(g, "} -> (%%v%d)\n", c);
  for (i = start; i < g->nv; i++) g->v[i].vis = 0;
  start = g->nv;
  a0 = g->nv++;
  g->v[a0] = ti;
  a1 = g->nv++;
  g->v[a1] = tx;
  g->v[a0].vis = g->v[a1].vis = 1;
  indent(g);
  out(g, "loop_body(%%v%d: ", a0);
  ptype(g, &ti);
  out(g, ", %%v%d: ", a1);
  ptype(g, &tx);
  out(g, ") {\n");
  g->ind++;
  one = cnst_scalar(g, I32, 1);
  s = binary(g, "add", a0, one);
  if (g->loop_inv && chance(g, 60)) {
    y = a1;
    if (chance(g, 50)) (void)unary(g, "relu", a1); /* an op that reads the invariant inside */
  } else {
    y = unary(g, unops[rnd(g, 4)], a1);
  }
  if (y != a1 && chance(g, 50)) {
    int k = bconst(g, y, C_RAND);
    int z = binary(g, "mul", y, k);
    if (z >= 0) y = z;
  }
  g->ind--;
  indent(g);
  out(g, "} -> (%%v%d, %%v%d)\n", s, y);
  for (i = start; i < g->nv; i++) g->v[i].vis = 0;
  g->ind--;
  g->v[id0].vis = g->v[id1].vis = 1;
  return id1;
}

/* n random ops on visible values. */
static void random_ops(G *g, int n, int depth) {
  int k;
  for (k = 0; k < n && !g->oom; k++) {
    int x = pick(g, -2), c = rnd(g, 100), r = -1;
    gv t;
    if (x < 0) return;
    t = g->v[x];
    if (c < 25) {
      const char *op = unops[rnd(g, (int)(sizeof unops / sizeof *unops))];
      if (g->smooth && (!strcmp(op, "floor") || !strcmp(op, "ceil") || !strcmp(op, "sign"))) op = "tanh";
      if (g->smooth > 1 && !strcmp(op, "sqrt")) op = "tanh";
      r = unary(g, op, x);
    } else if (c < 50) {
      const char *op = binops[rnd(g, 6)];
      int y = -1, tries;
      if (chance(g, 40) && !(g->smooth > 1 && !strcmp(op, "real_div")))
        for (tries = 0; tries < 8 && y < 0; tries++) {
          int z = pick(g, t.dt);
          gv b;
          if (z >= 0 && bcast(&g->v[x], &g->v[z], &b) == 0) y = z;
        }
      if (y < 0) {
        static const int kinds[] = {C_RAND, C_RAND, C_ZERO, C_ONE, C_MONE, C_SAME, C_POS};
        int kind = kinds[rnd(g, 7)];
        if (!strcmp(op, "real_div") && (kind == C_ZERO || kind == C_RAND || g->smooth > 1)) kind = C_POS;
        y = bconst(g, x, kind);
      }
      r = chance(g, 20) && strcmp(op, "real_div") && strcmp(op, "sub") ? binary(g, op, y, x) : binary(g, op, x, y);
    } else if (c < 58 && t.rank >= 2) {
      int p[MAXR];
      perm_rand(g, t.rank, p);
      r = transpose(g, x, p);
    } else if (c < 64 && is_static(&t) && t.rank >= 1) {
      int d[MAXR], rk;
      reshape_dims(g, &t, &rk, d);
      r = reshape(g, x, rk, d);
    } else if (c < 70 && t.rank >= 1) {
      static const char *const rops[] = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min"};
      int ax[1];
      ax[0] = rnd(g, t.rank) - (chance(g, 30) ? t.rank : 0);
      r = reduce(g, rops[rnd(g, 4)], x, 1, ax, rnd(g, 2));
    } else if (c < 75 && t.rank < 4) {
      r = expand_dims(g, x, rnd(g, t.rank + 1));
    } else if (c < 78 && t.rank >= 1) {
      int i;
      for (i = 0; i < t.rank; i++)
        if (t.sym[i] < 0 && t.d[i] == 1) break;
      if (i < t.rank) r = squeeze(g, x, i);
    } else if (c >= 78 && c < 82 && (t.rank == 2 || t.rank == 3) && is_static(&t) && is_float(t.dt)) {
      r = recurrent(g, t.rank == 2 ? expand_dims(g, x, 0) : x);
    } else if (c < 82) {
      r = cast(g, x, t.dt == F32 ? F16 : F32);
    } else if (c < 87 && t.rank >= 1 && t.sym[t.rank - 1] < 0) {
      r = matmul_w(g, x, 1 + rnd(g, 4));
    } else if (c < 90 && t.rank >= 1) {
      int ax = rnd(g, t.rank), id;
      gv rt = t;
      if (t.sym[ax] >= 0) continue;
      rt.d[ax] *= 2;
      id = def(g, &rt);
      out(g, " = concat(values=(%%v%d, %%v%d), axis=%d, interleave=false)\n", x, x, ax);
      r = id;
    } else if (c < 93 && t.rank >= 1) {
      int id = def(g, &t);
      out(g, " = softmax(x=%%v%d, axis=%d)\n", x, rnd(g, t.rank));
      r = id;
    } else if (c < 97 && depth < 2 && !g->smooth) {
      r = gen_cond(g, x, depth);
    } else if (depth < 2) {
      r = gen_loop(g, x, depth);
    }
    (void)r;
  }
}

/* ---------------------------------------------------------------- templates */

/* Each template writes its pattern on a random float value and returns the
   value that carries on; it may break a legality condition at random. */
typedef int (*tmpl_fn)(G *g, int x);

static void want_out(G *g, int v) {
  if (g->nouts < 8) g->outs[g->nouts++] = v;
}

/* A consumer besides the pattern's: an extra op on v that becomes an output. */
static void extra_use(G *g, int v) { want_out(g, unary(g, "exp", v)); }

static int t_relus(G *g, int x) {
  int n = 2 + rnd(g, 3), i, mid = -1;
  for (i = 0; i < n; i++) {
    x = unary(g, chance(g, 10) ? "relu6" : "relu", x);
    if (i == 0) mid = x;
  }
  if (chance(g, 20)) extra_use(g, mid);
  if (chance(g, 10)) want_out(g, mid);
  return x;
}

static int t_noop(G *g, int x) {
  int c = rnd(g, 7), k;
  gv t = g->v[x];
  if (c == 0 || c == 1 || c == 2 || c == 3) {
    static const char *const ops[] = {"add", "sub", "mul", "real_div"};
    int kind = c < 2 ? C_ZERO : C_ONE;
    if (chance(g, 15)) kind = C_POS;
    static const int grow[MAXR] = {2, 1, 1, 1, 1};
    k = chance(g, 15) && t.rank < MAXR ? cnst(g, t.dt, t.rank + 1, grow, kind) : bconst(g, x, kind);
    if (k < 0) return x;
    return (c == 0 || c == 2) && chance(g, 40) ? binary(g, ops[c], k, x) : binary(g, ops[c], x, k);
  }
  if (c == 4 && t.rank >= 1) {
    int p[MAXR], i;
    for (i = 0; i < t.rank; i++) p[i] = i;
    if (chance(g, 15)) perm_rand(g, t.rank, p);
    return transpose(g, x, p);
  }
  if (c == 5 && is_static(&t) && t.rank >= 1) return reshape(g, x, t.rank, t.d);
  if (c == 6) {
    static const char *const pools[] = {"identity"};
    return unary(g, pools[0], x);
  }
  return unary(g, "relu", x);
}

static int t_div(G *g, int x) {
  int y;
  if (chance(g, 15)) {
    y = unary(g, "exp", pick(g, g->v[x].dt));
    return binary(g, "real_div", x, y) < 0 ? x : g->nv - 1;
  }
  y = bconst(g, x, chance(g, 10) ? C_ZERO : C_POS);
  return binary(g, "real_div", x, y);
}

static int t_transposes(G *g, int x) {
  int n = 2 + rnd(g, 2), i, p[MAXR], first = -1;
  if (g->v[x].rank < 2) x = expand_dims(g, x, 0);
  for (i = 0; i < n; i++) {
    perm_rand(g, g->v[x].rank, p);
    x = transpose(g, x, p);
    if (first < 0) first = x;
  }
  if (chance(g, 15)) extra_use(g, first);
  return x;
}

static int t_inverse_transposes(G *g, int x) {
  int p[MAXR], q[MAXR], i, a;
  if (g->v[x].rank < 2) x = expand_dims(g, x, 0);
  perm_rand(g, g->v[x].rank, p);
  for (i = 0; i < g->v[x].rank; i++) q[p[i]] = i;
  if (chance(g, 15)) perm_rand(g, g->v[x].rank, q);
  a = transpose(g, x, p);
  if (chance(g, 15)) extra_use(g, a);
  return transpose(g, a, q);
}

static int t_reshapes(G *g, int x) {
  int n = 2 + rnd(g, 2), i, d[MAXR], rk, first = -1;
  if (!is_static(&g->v[x])) return unary(g, "relu", x);
  for (i = 0; i < n; i++) {
    reshape_dims(g, &g->v[x], &rk, d);
    x = reshape(g, x, rk, d);
    if (first < 0) first = x;
  }
  if (chance(g, 15)) extra_use(g, first);
  return x;
}

static int t_expand_dims_chain(G *g, int x) {
  int n = 2 + rnd(g, 2), i, first = -1;
  for (i = 0; i < n && g->v[x].rank < 5; i++) {
    x = expand_dims(g, x, rnd(g, g->v[x].rank + 1));
    if (first < 0) first = x;
  }
  if (chance(g, 15)) extra_use(g, first);
  return x;
}

static int t_squeeze_expand(G *g, int x) {
  int ax = rnd(g, g->v[x].rank + 1), a, b;
  a = expand_dims(g, x, ax);
  b = squeeze(g, a, ax);
  if (chance(g, 15)) extra_use(g, b);
  return expand_dims(g, b, chance(g, 85) ? ax : rnd(g, g->v[b].rank + 1));
}

/* rank-0 binary op with a constant, then expand_dims(axes=[0]) */
static int t_rank0(G *g, int x) {
  int all[MAXR], i, r, k, b, e;
  static const char *const ops[] = {"add", "sub", "mul", "real_div"};
  for (i = 0; i < g->v[x].rank; i++) all[i] = i;
  r = g->v[x].rank ? reduce(g, "reduce_sum", x, g->v[x].rank, all, 0) : x;
  k = cnst_scalar(g, g->v[r].dt, (1 + rnd(g, 15)) / 8.0);
  b = chance(g, 50) ? binary(g, ops[rnd(g, 4)], r, k) : binary(g, ops[rnd(g, 3)], k, r);
  if (chance(g, 15)) extra_use(g, b);
  e = expand_dims(g, b, 0);
  return binary(g, "add", x, e) < 0 ? e : g->nv - 1;
}

/* two equal constants of >= 100 elements (const_deduplication's threshold) */
static int t_bigconst(G *g, int x) {
  int d[3], c1, c2, s, all[3] = {0, 1, 2}, r;
  uint64_t st;
  d[0] = 4 + rnd(g, 2), d[1] = 5, d[2] = 5 + rnd(g, 2);
  st = g->s;
  c1 = cnst(g, g->v[x].dt, 3, d, C_RAND);
  if (chance(g, 85)) g->s = st;
  c2 = cnst(g, g->v[x].dt, 3, d, C_RAND);
  s = binary(g, chance(g, 50) ? "add" : "mul", unary(g, "relu", c1), c2);
  r = reduce(g, "reduce_sum", s, 3, all, 0);
  return binary(g, "add", x, r);
}

static int t_redundant(G *g, int x) {
  int a, b;
  const char *op = unops[rnd(g, 6)];
  if (chance(g, 50)) {
    a = unary(g, op, x);
    b = unary(g, chance(g, 85) ? op : "relu6", x);
  } else {
    int k1 = bconst(g, x, C_SAME), k2 = chance(g, 70) ? k1 : bconst(g, x, C_SAME);
    a = binary(g, "mul", x, k1);
    b = binary(g, "mul", x, k2);
  }
  if (chance(g, 20)) want_out(g, b);
  return binary(g, "add", a, b);
}

static int t_consts(G *g, int x) {
  int k1 = bconst(g, x, C_RAND), k2, s;
  gv t = g->v[k1];
  k2 = cnst_t(g, t, chance(g, 50) ? C_SAME : C_RAND);
  s = binary(g, binops[rnd(g, 3)], k1, k2);
  s = unary(g, unops[rnd(g, 6)], s);
  return binary(g, "add", x, s);
}

static int t_dead(G *g, int x) {
  int i;
  for (i = 0; i < 1 + rnd(g, 3); i++) (void)unary(g, unops[rnd(g, 6)], x);
  return unary(g, "relu", x);
}

static int t_casts(G *g, int x) {
  int n = 2 + rnd(g, 2), i, first = -1;
  for (i = 0; i < n; i++) {
    int dt = rnd(g, 3);
    if (dt == I32 && chance(g, 50)) dt = F16;
    x = cast(g, x, dt);
    if (first < 0) first = x;
  }
  if (chance(g, 15)) extra_use(g, first);
  if (g->v[x].dt == I32) x = cast(g, x, F32);
  return x;
}

/* an fp16 -> fp32 cast read by two or three ops */
static int t_shared_upcast(G *g, int x) {
  int h = g->v[x].dt == F16 ? x : cast(g, x, F16), c = cast(g, h, F32), a, b;
  a = unary(g, "relu", c);
  b = binary(g, chance(g, 50) ? "mul" : "add", c, chance(g, 30) ? c : a);
  if (chance(g, 40)) b = binary(g, "sub", b, c);
  return b;
}

/* (x + c) + c' (+ c''): constants broadcastable to x, in either operand slot */
static int t_add_chain(G *g, int x) {
  int n = 2 + rnd(g, 2), i;
  if (!is_float(g->v[x].dt)) x = cast(g, x, F32);
  for (i = 0; i < n; i++) {
    int c = bconst(g, x, C_RAND);
    x = chance(g, 50) ? binary(g, "add", x, c) : binary(g, "add", c, x);
  }
  if (chance(g, 10)) extra_use(g, x);
  return x;
}

static int t_leaky(G *g, int x) {
  int a = cnst_scalar(g, g->v[x].dt, chance(g, 85) ? (1 + rnd(g, 7)) / 8.0 : 1.5), m;
  m = chance(g, 50) ? binary(g, "mul", x, a) : binary(g, "mul", a, x);
  if (chance(g, 15)) extra_use(g, m);
  return chance(g, 50) ? binary(g, "maximum", x, m) : binary(g, "maximum", m, x);
}

static int t_gelu_exact(G *g, int x) {
  int d, e, a, one, h, r, m;
  if (chance(g, 50)) d = binary(g, "real_div", x, cnst_scalar(g, g->v[x].dt, 1.4142135623730951));
  else d = binary(g, "mul", x, cnst_scalar(g, g->v[x].dt, chance(g, 90) ? 0.7071067811865476 : 0.5));
  e = unary(g, "erf", d);
  one = cnst_scalar(g, g->v[x].dt, 1.0);
  a = chance(g, 50) ? binary(g, "add", e, one) : binary(g, "add", one, e);
  h = cnst_scalar(g, g->v[x].dt, 0.5);
  switch (rnd(g, 3)) {
  case 0: m = binary(g, "mul", a, h); r = binary(g, "mul", m, x); break;
  case 1: m = binary(g, "mul", a, x); r = binary(g, "mul", m, h); break;
  default: m = binary(g, "mul", x, h); r = binary(g, "mul", a, m); break;
  }
  if (chance(g, 10)) extra_use(g, m);
  return r;
}

static int t_gelu_tanh(G *g, int x) {
  int p3 = cnst_scalar(g, g->v[x].dt, 3), p, c1, m1, s, c2, m2, t, one, a, h, m, r;
  p = binary(g, "pow", x, p3);
  c1 = cnst_scalar(g, g->v[x].dt, 0.044715);
  m1 = binary(g, "mul", p, c1);
  s = binary(g, "add", x, m1);
  c2 = cnst_scalar(g, g->v[x].dt, chance(g, 90) ? 0.7978845608 : 0.5);
  m2 = binary(g, "mul", s, c2);
  t = unary(g, "tanh", m2);
  one = cnst_scalar(g, g->v[x].dt, 1.0);
  a = binary(g, "add", t, one);
  h = cnst_scalar(g, g->v[x].dt, 0.5);
  if (chance(g, 50)) {
    m = binary(g, "mul", a, h);
    r = binary(g, "mul", m, x);
  } else {
    m = binary(g, "mul", x, h);
    r = binary(g, "mul", m, a);
  }
  if (chance(g, 10)) extra_use(g, m);
  return r;
}

static int t_gelu_sigmoid(G *g, int x) {
  int c = cnst_scalar(g, g->v[x].dt, chance(g, 90) ? 1.702 : 1.5), m, s;
  m = binary(g, "mul", x, c);
  s = unary(g, "sigmoid", m);
  if (chance(g, 10)) extra_use(g, s);
  return chance(g, 50) ? binary(g, "mul", x, s) : binary(g, "mul", s, x);
}

static int t_reduce_mean(G *g, int x) {
  gv t = g->v[x];
  int ax[1], s, n, c;
  if (t.rank < 1) x = expand_dims(g, x, 0), t = g->v[x];
  ax[0] = rnd(g, t.rank);
  s = reduce(g, "reduce_sum", x, 1, ax, rnd(g, 2));
  n = t.d[ax[0]];
  if (t.sym[ax[0]] >= 0) n = 2;
  if (chance(g, 10)) n++;
  if (chance(g, 10)) extra_use(g, s);
  if (chance(g, 50)) {
    c = cnst_scalar(g, t.dt, 1.0 / n);
    return binary(g, "mul", s, c);
  }
  c = cnst_scalar(g, t.dt, n);
  return binary(g, "real_div", s, c);
}

static int t_matmul_bias(G *g, int x) {
  gv t = g->v[x];
  int m, b, d[1];
  if (t.rank < 1 || t.sym[t.rank - 1] >= 0) x = expand_dims(g, x, t.rank), t = g->v[x];
  m = matmul_w(g, x, 1 + rnd(g, 4));
  if (chance(g, 10)) extra_use(g, m);
  d[0] = g->v[m].d[g->v[m].rank - 1];
  b = chance(g, 85) ? cnst(g, t.dt, 1, d, C_RAND) : bconst(g, m, C_RAND);
  return chance(g, 50) ? binary(g, "add", m, b) : binary(g, "add", b, m);
}

static int t_linear_bias(G *g, int x) {
  gv t = g->v[x], r;
  int w, b0, l, b, d[2], id;
  if (t.rank < 1 || t.sym[t.rank - 1] >= 0) x = expand_dims(g, x, t.rank), t = g->v[x];
  d[0] = 1 + rnd(g, 4);
  d[1] = t.d[t.rank - 1];
  w = cnst(g, t.dt, 2, d, C_RAND);
  b0 = cnst(g, t.dt, 1, d, C_RAND);
  r = t;
  r.d[t.rank - 1] = d[0];
  r.sym[t.rank - 1] = -1;
  l = def(g, &r);
  out(g, " = linear(x=%%v%d, weight=%%v%d, bias=%%v%d)\n", x, w, b0);
  (void)id;
  b = chance(g, 85) ? cnst(g, t.dt, 1, d, C_RAND) : bconst(g, l, C_RAND);
  if (chance(g, 10)) extra_use(g, l);
  return chance(g, 50) ? binary(g, "add", l, b) : binary(g, "sub", l, b);
}

/* tflite::fuse_activation: linear (+ bias) or matmul by a constant (+ bias
   add) or a conv, then relu, relu6 or clip(0, 6). */
static int t_fused_act(G *g, int x) {
  static const char *const acts[3] = {"relu", "relu6", "clip"};
  gv t = g->v[x], r;
  int w, b, l, d[2], k = rnd(g, 3), v;
  if (t.rank < 1 || t.sym[t.rank - 1] >= 0) x = expand_dims(g, x, t.rank), t = g->v[x];
  d[1] = t.d[t.rank - 1];
  d[0] = 1 + rnd(g, 4);
  r = t;
  r.d[t.rank - 1] = d[0];
  r.sym[t.rank - 1] = -1;
  if (chance(g, 50)) {
    w = cnst(g, t.dt, 2, d, C_RAND);
    b = cnst(g, t.dt, 1, d, C_RAND);
    l = def(g, &r);
    if (chance(g, 50)) out(g, " = linear(x=%%v%d, weight=%%v%d, bias=%%v%d)\n", x, w, b);
    else out(g, " = linear(x=%%v%d, weight=%%v%d)\n", x, w);
  } else {
    int dm[2];
    dm[0] = d[1];
    dm[1] = d[0];
    w = cnst(g, t.dt, 2, dm, C_RAND);
    l = def(g, &r);
    out(g, " = matmul(x=%%v%d, y=%%v%d)\n", x, w);
    if (chance(g, 60)) l = binary(g, "add", l, cnst(g, t.dt, 1, d, C_RAND));
  }
  if (chance(g, 10)) extra_use(g, l);
  if (k < 2) return unary(g, acts[k], l);
  v = def(g, &r);
  out(g, " = clip(x=%%v%d, alpha=0.0, beta=6.0)\n", l);
  return v;
}

static int t_transpose_matmul(G *g, int x) {
  gv t = g->v[x];
  int p[MAXR], i, tr, w, d[2], id;
  gv r;
  while (t.rank < 2) x = expand_dims(g, x, 0), t = g->v[x];
  for (i = 0; i < t.rank; i++) p[i] = i;
  p[t.rank - 1] = t.rank - 2;
  p[t.rank - 2] = t.rank - 1;
  if (chance(g, 10)) perm_rand(g, t.rank, p);
  tr = transpose(g, x, p);
  t = g->v[tr];
  if (t.sym[t.rank - 1] >= 0) return tr;
  d[0] = t.d[t.rank - 1];
  d[1] = 1 + rnd(g, 3);
  w = cnst(g, t.dt, 2, d, C_RAND);
  r = t;
  r.d[t.rank - 1] = d[1];
  id = def(g, &r);
  out(g, " = matmul(x=%%v%d, y=%%v%d)\n", tr, w);
  if (chance(g, 15)) extra_use(g, tr);
  return id;
}

static int t_select(G *g, int x) {
  gv t = g->v[x], b = t;
  int c, a, y, id, inf = chance(g, 30);
  b.dt = BOOL;
  c = cnst_t(g, b, chance(g, 60) ? (chance(g, 50) ? C_SAME : C_RAND) : C_RAND);
  if (inf) {
    gv s = mk(t.dt, 0, NULL);
    a = def(g, &s);
    out(g, "* = const(val=%s)\n", chance(g, 50) ? "inf" : "-inf");
  } else {
    a = bconst(g, x, C_RAND);
  }
  y = unary(g, "relu", x);
  id = def(g, &t);
  if (chance(g, 50)) out(g, " = select(cond=%%v%d, a=%%v%d, b=%%v%d)\n", c, a, y);
  else out(g, " = select(cond=%%v%d, a=%%v%d, b=%%v%d)\n", c, y, a);
  return id;
}

static int t_mul_rsqrt(G *g, int x) {
  int y = unary(g, "abs", pick(g, g->v[x].dt)), r, sq, one;
  gv t = g->v[y];
  switch (rnd(g, 3)) {
  case 0:
    r = def(g, &t);
    out(g, " = rsqrt(x=%%v%d, epsilon=%s)\n", y, chance(g, 85) ? "0.0" : "0.5");
    break;
  case 1:
    sq = unary(g, "sqrt", y);
    r = def(g, &t);
    out(g, " = inverse(x=%%v%d, epsilon=%s)\n", sq, chance(g, 85) ? "0.0" : "0.5");
    break;
  default:
    sq = unary(g, "sqrt", y);
    one = cnst_scalar(g, t.dt, chance(g, 85) ? 1.0 : 2.0);
    r = binary(g, "real_div", one, sq);
    break;
  }
  if (chance(g, 15)) extra_use(g, r);
  r = chance(g, 50) ? binary(g, "mul", x, r) : binary(g, "mul", r, x);
  return r < 0 ? x : r;
}

static int t_batchnorm(G *g, int x) {
  gv t = g->v[x];
  int d[4], gm, bt, m, C = 2 + rnd(g, 3);
  int s[4];
  if (!(t.rank == 4 && t.sym[1] < 0 && t.d[1] > 1)) {
    /* make a rank-4 value: matmul to C channels then reshape */
    s[0] = 1, s[1] = C, s[2] = 2, s[3] = 1 + rnd(g, 2);
    x = reshape(g, cnst(g, t.dt, 4, s, C_RAND), 4, s);
    x = binary(g, "add", x, cnst_scalar(g, t.dt, 0.5));
    x = binary(g, "mul", x, cnst(g, t.dt, 0, NULL, C_RAND));
    /* make x depend on an input: add a reduced input */
    {
      int src = pick(g, t.dt), all[MAXR], i, r;
      for (i = 0; i < g->v[src].rank; i++) all[i] = i;
      r = reduce(g, "reduce_sum", src, g->v[src].rank, all, 0);
      x = binary(g, "add", x, r);
    }
    t = g->v[x];
  }
  d[0] = 1, d[1] = t.d[1], d[2] = 1, d[3] = 1;
  gm = chance(g, 50) ? cnst(g, t.dt, 4, d, C_RAND) : cnst(g, t.dt, 3, d + 1, C_RAND);
  m = chance(g, 50) ? binary(g, "mul", x, gm) : binary(g, "mul", gm, x);
  if (chance(g, 10)) extra_use(g, m);
  bt = chance(g, 90) ? cnst(g, t.dt, 4, d, C_RAND) : bconst(g, m, C_RAND);
  return chance(g, 50) ? binary(g, "add", m, bt) : binary(g, "add", bt, m);
}

static int t_transpose_reduce(G *g, int x) {
  int p[MAXR], tr, ax[2];
  static const char *const rops[] = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"};
  if (g->v[x].rank < 2) x = expand_dims(g, x, 0);
  perm_rand(g, g->v[x].rank, p);
  tr = transpose(g, x, p);
  ax[0] = rnd(g, g->v[tr].rank);
  if (chance(g, 15)) extra_use(g, tr);
  return reduce(g, rops[rnd(g, 5)], tr, 1, ax, rnd(g, 2));
}

static int t_prelu(G *g, int x) {
  gv t = g->v[x];
  int d[1], a, id;
  if (t.rank < 3 || t.sym[1] >= 0) {
    while (g->v[x].rank < 3) x = expand_dims(g, x, 0);
    t = g->v[x];
    if (t.sym[1] >= 0) return x;
  }
  d[0] = t.d[1];
  a = cnst(g, t.dt, 1, d, chance(g, 70) ? C_SAME : C_RAND);
  id = def(g, &t);
  out(g, " = prelu(x=%%v%d, alpha=%%v%d)\n", x, a);
  return id;
}

static int t_loop_invariant(G *g, int x) {
  int r;
  g->loop_inv = 1;
  r = gen_loop(g, x, 0);
  g->loop_inv = 0;
  return r;
}

/* A static rank-4 value (1, C, H, W) that depends on x. */
static int rank4(G *g, int x, int C) {
  int d[4], all[MAXR], i, r, k;
  d[0] = 1, d[1] = C, d[2] = 1 + rnd(g, 2), d[3] = 1 + rnd(g, 3);
  for (i = 0; i < g->v[x].rank; i++) all[i] = i;
  r = g->v[x].rank ? reduce(g, "reduce_sum", x, g->v[x].rank, all, 0) : x;
  k = cnst(g, g->v[x].dt, 4, d, C_RAND);
  return binary(g, "add", k, r);
}

/* concat on axis 1, reshape (B, n, C, H, W), transpose [0, 2, 1, 3, 4], reshape (B, nC, H, W) */
static int t_concat_interleave(G *g, int x) {
  int v = rank4(g, x, 1 + rnd(g, 3)), n = 2 + rnd(g, 2), parts[4], i, cat, r1, r2, tr, p[5] = {0, 2, 1, 3, 4};
  int d5[5], d4[4];
  gv t = g->v[v], ct;
  for (i = 0; i < n; i++) parts[i] = unary(g, unops[rnd(g, 4)], v);
  ct = t;
  ct.d[1] = n * t.d[1];
  cat = def(g, &ct);
  out(g, " = concat(values=(");
  for (i = 0; i < n; i++) out(g, "%s%%v%d", i ? ", " : "", parts[i]);
  out(g, "), axis=%d, interleave=false)\n", chance(g, 50) ? 1 : -3);
  d5[0] = t.d[0], d5[1] = n, d5[2] = t.d[1], d5[3] = t.d[2], d5[4] = t.d[3];
  if (chance(g, 10)) d5[1] = t.d[1], d5[2] = n;
  r1 = reshape(g, cat, 5, d5);
  if (chance(g, 10)) p[1] = 1, p[2] = 2;
  tr = transpose(g, r1, p);
  if (chance(g, 10)) extra_use(g, tr);
  d4[0] = t.d[0], d4[1] = n * t.d[1], d4[2] = t.d[2], d4[3] = t.d[3];
  r2 = reshape(g, tr, 4, d4);
  return r2;
}

/* stack then reshape merging the stacked axis with its neighbour */
static int t_stack_reshape(G *g, int x) {
  gv t = g->v[x];
  int a, b, ax;
  if (t.rank < 1) x = expand_dims(g, x, 0), t = g->v[x];
  a = unary(g, "relu", x);
  b = unary(g, "tanh", x);
  ax = rnd(g, t.rank);
  if (t.sym[ax] >= 0) return a;
  {
    gv s = t, r;
    int st, i, dd[MAXR];
    s.rank = t.rank + 1;
    for (i = s.rank - 1; i > ax + 1; i--) s.d[i] = t.d[i - 1], s.sym[i] = t.sym[i - 1];
    s.d[ax + 1] = 2, s.sym[ax + 1] = -1;
    st = def(g, &s);
    out(g, " = stack(values=(%%v%d, %%v%d), axis=%d)\n", a, b, ax + 1);
    if (!is_static(&s)) return st;
    r = t;
    r.d[ax] *= 2;
    for (i = 0; i < r.rank; i++) dd[i] = r.d[i];
    return reshape(g, st, r.rank, dd);
  }
}

/* A value whose type is written as given ("(3, int64)", unknown dims): random ops never pick it. */
static int def_raw(G *g, const char *type) {
  int i = g->nv < MAXV - 1 ? g->nv++ : (g->oom = 1, 0);
  g->v[i] = mk(I32, 0, NULL);
  indent(g);
  out(g, "%%v%d: %s", i, type);
  return i;
}

/* t's type with every dim unknown ("(?, ?, fp32)") */
static void ptype_unknown(G *g, const gv *t) {
  int i;
  out(g, "(");
  for (i = 0; i < t->rank; i++) out(g, "?, ");
  out(g, "%s)", dt_names[t->dt]);
}

/* onnx::Dropout in inference: no training_mode, a constant false, or one
   computed from constants (logical_not of true, a cast of 0); a used mask
   sometimes; the output sometimes a function output. */
static int t_dropout(G *g, int x) {
  gv t = g->v[x], mt = t;
  int ratio = -1, tm = -1, d, mask = -1, k;
  char buf[64];
  if (chance(g, 50)) ratio = cnst_scalar(g, t.dt, (1 + rnd(g, 7)) / 8.0);
  switch (rnd(g, 4)) {
  case 0: break;
  case 1: tm = def_raw(g, "(bool)*"); out(g, " = const(val=false)\n"); break;
  case 2:
    k = def_raw(g, "(bool)*");
    out(g, " = const(val=true)\n");
    tm = def_raw(g, "(bool)");
    out(g, " = logical_not(x=%%v%d)\n", k);
    break;
  default:
    k = cnst_scalar(g, I32, 0);
    tm = def_raw(g, "(bool)");
    out(g, " = cast(x=%%v%d, dtype=\"bool\")\n", k);
    break;
  }
  d = def(g, &t);
  if (chance(g, 25)) {
    mt.dt = BOOL;
    mask = g->nv++;
    g->v[mask] = mt;
    g->v[mask].vis = 1;
    out(g, ", %%v%d: ", mask);
    ptype(g, &mt);
    want_out(g, mask);
  }
  out(g, " = onnx::Dropout(in0=%%v%d", x);
  if (ratio >= 0) out(g, ", in1=%%v%d", ratio);
  if (tm >= 0) out(g, ", in2=%%v%d", tm);
  out(g, ")\n");
  (void)buf;
  if (chance(g, 15)) want_out(g, d);
  return unary(g, chance(g, 50) ? "relu" : "tanh", d);
}

/* onnx::Shape of a value (static or not, sometimes from `start`), summed
   into the carried value; onnx::ConstantOfShape of a constant shape. */
static int t_shape_ops(G *g, int x) {
  gv t;
  int s, c, r, len, start = 0, ax[1] = {0};
  char ty[64];
  if (g->v[x].rank < 1) x = expand_dims(g, x, 0);
  t = g->v[x];
  if (chance(g, 30)) start = rnd(g, t.rank);
  len = t.rank - start;
  snprintf(ty, sizeof ty, "(%d, int64)", len);
  s = def_raw(g, ty);
  if (start) out(g, " = onnx::Shape(in0=%%v%d, start=%d)\n", x, start);
  else out(g, " = onnx::Shape(in0=%%v%d)\n", x);
  {
    int d1[1];
    gv ft;
    d1[0] = len;
    ft = mk(t.dt, 1, d1);
    c = def(g, &ft);
    out(g, " = cast(x=%%v%d, dtype=\"%s\")\n", s, dt_names[t.dt]);
  }
  r = reduce(g, "reduce_mean", c, 1, ax, 0);
  x = binary(g, "add", x, r);
  if (chance(g, 40)) {
    int d0 = 1 + rnd(g, 3), d1 = 1 + rnd(g, 3), k, z, all[2] = {0, 1}, dd[2];
    gv zt;
    snprintf(ty, sizeof ty, "(2, int64)*");
    k = def_raw(g, ty);
    out(g, " = const(val=[%d, %d])\n", d0, d1);
    dd[0] = d0, dd[1] = d1;
    zt = mk(F32, 2, dd);
    z = def(g, &zt);
    out(g, " = onnx::ConstantOfShape(in0=%%v%d, value=tensor<(1, fp32)>([%g]))\n", k, (1 + rnd(g, 8)) / 4.0);
    r = reduce(g, "reduce_sum", z, 2, all, 0);
    if (g->v[x].dt != F32) r = cast(g, r, g->v[x].dt);
    x = binary(g, "mul", x, r);
  }
  return x;
}

/* A reshape whose shape is computed from the input's own shape: dims of x
   through onnx::Shape, cast, slice_by_index and concat with constants; the
   static dims after the first come back in reverse order (same rank, so
   that a 0 copying dim k reads the same dim however it is aligned). A
   canonical reshape or an onnx::Reshape (int64 shape). */
static int t_shape_reshape(G *g, int x) {
  gv t, rt;
  int s, c, i, k, piece[MAXR], np = 0, cat, y, onnx = chance(g, 40), stat[MAXR], ns = 0, cur = 0;
  char ty[64];
  while (g->v[x].rank < 2) x = expand_dims(g, x, 0);
  t = g->v[x];
  snprintf(ty, sizeof ty, "(%d, int64)", t.rank);
  s = def_raw(g, ty);
  out(g, " = onnx::Shape(in0=%%v%d)\n", x);
  snprintf(ty, sizeof ty, "(%d, int32)", t.rank);
  c = def_raw(g, ty);
  out(g, " = cast(x=%%v%d, dtype=\"int32\")\n", s);
  for (i = 1; i < t.rank; i++)
    if (t.sym[i] < 0) stat[ns++] = i;
  rt = t;
  for (i = 0; i < t.rank; i++) {
    int from = i;
    if (i >= 1 && t.sym[i] < 0) from = stat[ns - 1 - cur++]; /* static dims reversed */
    rt.d[i] = t.d[from], rt.sym[i] = t.sym[from];
    if (i == 0 || t.sym[i] >= 0 || chance(g, 20)) {
      int b = cnst_ints(g, 1, &from), e, f1 = from + 1;
      e = cnst_ints(g, 1, &f1);
      piece[np] = def_raw(g, "(1, int32)");
      out(g, " = slice_by_index(x=%%v%d, begin=%%v%d, end=%%v%d)\n", c, b, e);
    } else {
      k = t.d[from];
      piece[np] = cnst_ints(g, 1, &k);
    }
    if (onnx) {
      k = piece[np];
      piece[np] = def_raw(g, "(1, int64)");
      out(g, " = cast(x=%%v%d, dtype=\"int64\")\n", k);
    }
    np++;
  }
  snprintf(ty, sizeof ty, "(%d, %s)", t.rank, onnx ? "int64" : "int32");
  cat = def_raw(g, ty);
  out(g, " = concat(values=(");
  for (i = 0; i < np; i++) out(g, "%s%%v%d", i ? ", " : "", piece[i]);
  out(g, "), axis=0)\n");
  y = def(g, &rt);
  if (onnx) out(g, " = onnx::Reshape(in0=%%v%d, in1=%%v%d)\n", x, cat);
  else out(g, " = reshape(x=%%v%d, shape=%%v%d)\n", x, cat);
  return y;
}

/* An opaque onnx::Pad (constant pads, constant mode) or a canonical op whose
   output dims are written unknown; the readers after it too. */
static int t_opaque(G *g, int x) {
  gv t = g->v[x], pt;
  int y, i, z;
  if (t.rank < 1) x = expand_dims(g, x, 0), t = g->v[x];
  pt = t;
  if (chance(g, 60)) {
    int pads[2 * MAXR], p;
    char ty[64];
    for (i = 0; i < 2 * t.rank; i++) pads[i] = chance(g, 60) ? 0 : rnd(g, 3);
    for (i = 0; i < t.rank; i++) pt.d[i] += pads[i] + pads[t.rank + i];
    snprintf(ty, sizeof ty, "(%d, int64)*", 2 * t.rank);
    p = def_raw(g, ty);
    out(g, " = const(val=");
    pints(g, 2 * t.rank, pads);
    out(g, ")\n");
    y = g->nv++;
    g->v[y] = pt;
    g->v[y].vis = 1;
    indent(g);
    out(g, "%%v%d: ", y);
    ptype_unknown(g, &pt);
    out(g, " = onnx::Pad(in0=%%v%d, in1=%%v%d%s)\n", x, p, chance(g, 50) ? ", mode=\"constant\"" : "");
  } else {
    y = g->nv++;
    g->v[y] = pt;
    g->v[y].vis = 1;
    indent(g);
    out(g, "%%v%d: ", y);
    ptype_unknown(g, &pt);
    out(g, " = %s(x=%%v%d)\n", unops[rnd(g, 4)], x);
  }
  z = g->nv++;
  g->v[z] = pt;
  g->v[z].vis = 1;
  indent(g);
  out(g, "%%v%d: ", z);
  if (chance(g, 50)) ptype_unknown(g, &pt);
  else ptype(g, &pt);
  out(g, " = relu(x=%%v%d)\n", y);
  return z;
}

/* read_state -> op -> (other ops) -> coreml_update_state, with readers of
   the written value after the write; main's first input has the state's type. */
static int t_state(G *g, int x) {
  int s = g->state_arg, v0 = 0, r, m, u, a;
  gv t = g->v[0];
  (void)x;
  if (s < 0) return x;
  r = def(g, &t);
  out(g, " = read_state(input=%%v%d)\n", s);
  m = binary(g, binops[rnd(g, 3)], r, v0);
  if (chance(g, 50)) (void)unary(g, "exp", v0);
  if (chance(g, 30)) a = unary(g, "relu", m);
  else a = -1;
  if (chance(g, 15)) {
    int r2 = def(g, &t);
    out(g, " = read_state(input=%%v%d)\n", s);
    want_out(g, r2);
  }
  u = def(g, &t);
  out(g, " = coreml_update_state(state=%%v%d, value=%%v%d)\n", s, m);
  if (chance(g, 30)) want_out(g, u);
  if (a >= 0) want_out(g, a);
  if (chance(g, 20)) want_out(g, m);
  return binary(g, "add", m, v0);
}

/* one_hot of main's int32 input times a constant matrix */
static int t_onehot(G *g, int x) {
  int i = g->int_arg, N = 4 + rnd(g, 3), K = 1 + rnd(g, 3), h, w, y, d[2];
  gv ht, yt, it;
  if (i < 0) return x;
  it = g->v[i];
  ht = mk(F32, it.rank + 1, NULL);
  memcpy(ht.d, it.d, sizeof it.d);
  memcpy(ht.sym, it.sym, sizeof it.sym);
  ht.d[it.rank] = N, ht.sym[it.rank] = -1;
  h = def(g, &ht);
  out(g, " = one_hot(indices=%%v%d, one_hot_vector_size=%d", i, N);
  if (chance(g, 30)) out(g, ", axis=-1");
  if (chance(g, 30)) out(g, ", on_value=%s, off_value=0.0", chance(g, 85) ? "1.0" : "2.0");
  out(g, ")\n");
  d[0] = N, d[1] = K;
  w = cnst(g, F32, 2, d, C_RAND);
  yt = ht;
  yt.d[it.rank] = K;
  y = def(g, &yt);
  out(g, " = matmul(x=%%v%d, y=%%v%d)\n", h, w);
  if (chance(g, 10)) extra_use(g, h);
  return y;
}

/* ops that share one name (name="n"), and ops with the name of a value */
static int t_names(G *g, int x) {
  int n = 2 + rnd(g, 3), i;
  for (i = 0; i < n; i++) {
    gv t = g->v[x];
    int y = def(g, &t);
    out(g, " = %s(x=%%v%d, name=\"%s\")\n", unops[rnd(g, 4)], x, chance(g, 70) ? "n" : "v0");
    x = y;
  }
  return x;
}

/* A static (1, C, H, W) value that depends on x, H and W at least h and w. */
static int image(G *g, int x, int C, int h, int w) {
  int d[4], all[MAXR], i, r, k;
  d[0] = 1, d[1] = C, d[2] = h + rnd(g, 2), d[3] = w + rnd(g, 2);
  for (i = 0; i < g->v[x].rank; i++) all[i] = i;
  r = g->v[x].rank ? reduce(g, "reduce_sum", x, g->v[x].rank, all, 0) : x;
  k = cnst(g, g->v[x].dt, 4, d, C_RAND);
  return binary(g, "add", k, r);
}

/* reshape to rank 6 -> transpose -> reshape to rank 2 */
static int t_high_rank(G *g, int x) {
  int v = image(g, x, 1 + rnd(g, 3), 1, 2), d6[6], p[6], i, j, rk, d[MAXR], r1, tr, a, n;
  gv t = g->v[v];
  char ty[128];
  reshape_dims(g, &t, &rk, d);
  for (i = 0, j = 0; i < 6; i++) d6[i] = (j < rk && (6 - i <= rk - j || chance(g, 50))) ? d[j++] : 1;
  for (; j < rk; j++) d6[5] *= d[j];
  n = numel(&t);
  {
    int s = -1;
    d[0] = 6;
    s = def_raw(g, "(6, int32)*");
    out(g, " = const(val=");
    pints(g, 6, d6);
    out(g, ")\n");
    snprintf(ty, sizeof ty, "(%d, %d, %d, %d, %d, %d, %s)", d6[0], d6[1], d6[2], d6[3], d6[4], d6[5], dt_names[t.dt]);
    r1 = def_raw(g, ty);
    out(g, " = reshape(x=%%v%d, shape=%%v%d)\n", v, s);
  }
  perm_rand(g, 6, p);
  snprintf(ty, sizeof ty, "(%d, %d, %d, %d, %d, %d, %s)", d6[p[0]], d6[p[1]], d6[p[2]], d6[p[3]], d6[p[4]], d6[p[5]],
           dt_names[t.dt]);
  tr = def_raw(g, ty);
  out(g, " = transpose(x=%%v%d, perm=", r1);
  pints(g, 6, p);
  out(g, ")\n");
  if (chance(g, 10)) want_out(g, tr);
  a = d6[p[0]];
  d[0] = a, d[1] = n / a;
  {
    int sh = cnst_ints(g, 2, d);
    gv rt = mk(t.dt, 2, d);
    int y = def(g, &rt);
    out(g, " = reshape(x=%%v%d, shape=%%v%d)\n", tr, sh);
    return y;
  }
}

/* conv_transpose without output_shape, its output type static */
static int t_conv_transpose(G *g, int x) {
  int Ci = 1 + rnd(g, 2), Co = 1 + rnd(g, 2), k = 1 + rnd(g, 3), st = 1 + rnd(g, 2), v, w, d[4], y;
  gv t, ot;
  v = image(g, x, Ci, 1, 1);
  t = g->v[v];
  d[0] = Ci, d[1] = Co, d[2] = k, d[3] = k;
  w = cnst(g, t.dt, 4, d, C_RAND);
  ot = t;
  ot.d[1] = Co;
  ot.d[2] = (t.d[2] - 1) * st + k;
  ot.d[3] = (t.d[3] - 1) * st + k;
  y = def(g, &ot);
  out(g, " = conv_transpose(x=%%v%d, weight=%%v%d, strides=[%d, %d], pad_type=\"valid\"", v, w, st, st);
  if (chance(g, 10)) out(g, ", output_shape=[%d, %d, %d, %d]", ot.d[0], ot.d[1], ot.d[2], ot.d[3]);
  out(g, ")\n");
  return y;
}

/* t's type with some dims unknown */
static void ptype_partial(G *g, const gv *t) {
  int i;
  out(g, "(");
  for (i = 0; i < t->rank; i++) {
    if (chance(g, 60)) out(g, "?, ");
    else if (t->sym[i] >= 0) out(g, "s%d, ", t->sym[i]);
    else out(g, "%d, ", t->d[i]);
  }
  out(g, "%s)", dt_names[t->dt]);
}

/* unary and binary ops whose output dims are (partly) written unknown */
static int t_unknown_types(G *g, int x) {
  int n = 1 + rnd(g, 3), i;
  for (i = 0; i < n; i++) {
    gv t = g->v[x];
    int y, k = -1;
    if (chance(g, 40)) k = bconst(g, x, C_RAND);
    y = g->nv++;
    g->v[y] = t;
    g->v[y].vis = 1;
    indent(g);
    out(g, "%%v%d: ", y);
    ptype_partial(g, &t);
    if (k >= 0) out(g, " = %s(x=%%v%d, y=%%v%d)\n", binops[rnd(g, 3)], x, k);
    else out(g, " = %s(x=%%v%d)\n", unops[rnd(g, 4)], x);
    x = y;
  }
  return x;
}

/* pad -> pad with constant amounts on the last one or two static axes */
static int t_pads(G *g, int x) {
  static const char *const modes[] = {"constant", "reflect", "replicate"};
  int mode = chance(g, 50) ? 0 : 1 + rnd(g, 2), i, k, nax;
  gv t = g->v[x];
  if (t.rank < 1 || t.sym[t.rank - 1] >= 0 || t.d[t.rank - 1] < 2) x = image(g, x, 1 + rnd(g, 2), 2, 2);
  t = g->v[x];
  nax = t.rank >= 2 && t.sym[t.rank - 2] < 0 && t.d[t.rank - 2] >= 2 && chance(g, 50) ? 2 : 1;
  if (mode == 0 && chance(g, 30)) nax = 1;
  for (k = 0; k < 2; k++) {
    int pads[4], id;
    gv r = t;
    for (i = 0; i < nax; i++) {
      int ax = t.rank - nax + i, lim = mode == 1 ? t.d[ax] - 1 : 2;
      pads[2 * i] = chance(g, 40) ? 0 : rnd(g, lim + 1);
      pads[2 * i + 1] = chance(g, 40) ? 0 : rnd(g, lim + 1);
      if (mode && k == 1 && chance(g, 70)) pads[2 * i] = pads[2 * i + 1] = 0; /* leave the axis to the first pad */
      r.d[ax] += pads[2 * i] + pads[2 * i + 1];
    }
    {
      int p = cnst_ints(g, 2 * nax, pads);
      id = def(g, &r);
      out(g, " = pad(x=%%v%d, pad=%%v%d, mode=\"%s\"", x, p, modes[mode]);
      if (mode == 0) out(g, ", constant_val=%s", chance(g, 80) ? "0.5" : "0.0");
      out(g, ")\n");
    }
    if (k == 0 && chance(g, 10)) extra_use(g, id);
    x = id;
    t = g->v[x];
  }
  return x;
}

/* adds of transposes with one perm, transposed back */
static int t_forest(G *g, int x) {
  int p[MAXR], q[MAXR], i, a, b, c = -1, ta, tb, tc, s, r;
  if (g->v[x].rank < 2) x = expand_dims(g, x, 0);
  perm_rand(g, g->v[x].rank, p);
  for (i = 0; i < g->v[x].rank; i++) q[p[i]] = i;
  if (chance(g, 10)) perm_rand(g, g->v[x].rank, q);
  a = x;
  b = unary(g, unops[rnd(g, 4)], x);
  if (chance(g, 50)) c = unary(g, unops[rnd(g, 4)], x);
  ta = transpose(g, a, p);
  tb = transpose(g, b, p);
  s = binary(g, "add", ta, tb);
  if (c >= 0) {
    tc = transpose(g, c, p);
    s = chance(g, 50) ? binary(g, "add", s, tc) : binary(g, "add", tc, s);
  }
  if (chance(g, 10)) want_out(g, s);
  r = transpose(g, s, q);
  return r;
}

/* gather and squeeze on int32 data */
static int t_int16(G *g, int x) {
  gv t;
  int xi, idx[3], n = 1 + rnd(g, 3), i, ic, y, d0;
  if (g->v[x].rank < 1) x = expand_dims(g, x, 0);
  xi = cast(g, x, I32);
  t = g->v[xi];
  d0 = t.sym[0] >= 0 ? 1 : t.d[0];
  for (i = 0; i < n; i++) idx[i] = rnd(g, d0);
  ic = cnst_ints(g, n, idx);
  {
    gv r = t;
    r.d[0] = n, r.sym[0] = -1;
    y = def(g, &r);
    out(g, " = gather(x=%%v%d, indices=%%v%d, axis=0)\n", xi, ic);
  }
  if (n == 1 && chance(g, 50)) y = squeeze(g, y, 0);
  return cast(g, y, g->v[x].dt);
}

/* a value defined again under a taken name; op names shared */
static int t_dup_names(G *g, int x) {
  int n = 1 + rnd(g, 3), i;
  for (i = 0; i < n; i++) {
    gv t = g->v[x];
    int y;
    if (chance(g, 60) && x >= 0 && !g->v[x].isconst) {
      /* %vX again: later readers of the name read the new value */
      indent(g);
      out(g, "%%v%d: ", x);
      ptype(g, &t);
      out(g, " = %s(x=%%v%d%s)\n", unops[rnd(g, 4)], x, chance(g, 30) ? ", name=\"n\"" : "");
      y = x;
    } else {
      y = def(g, &t);
      out(g, " = %s(x=%%v%d, name=\"v%d\")\n", unops[rnd(g, 4)], x, x);
    }
    x = y;
  }
  return x;
}

/* stack -> split into pieces of 1 -> squeeze each */
static int t_stack_split(G *g, int x) {
  gv t = g->v[x], st, pt;
  int a = x, b = unary(g, unops[rnd(g, 4)], x), ax = rnd(g, t.rank + 1), i, s, p0, p1, q0, q1;
  st = t;
  st.rank = t.rank + 1;
  for (i = st.rank - 1; i > ax; i--) st.d[i] = t.d[i - 1], st.sym[i] = t.sym[i - 1];
  st.d[ax] = 2, st.sym[ax] = -1;
  s = def(g, &st);
  out(g, " = stack(values=(%%v%d, %%v%d), axis=%d)\n", a, b, ax);
  pt = st;
  pt.d[ax] = 1;
  p0 = def(g, &pt);
  p1 = g->nv++;
  g->v[p1] = pt;
  g->v[p1].vis = 1;
  out(g, ", %%v%d: ", p1);
  ptype(g, &pt);
  if (chance(g, 50)) out(g, " = split(x=%%v%d, num_splits=2, axis=%d)\n", s, ax);
  else out(g, " = split(x=%%v%d, split_sizes=[1, 1], axis=%d)\n", s, ax);
  q0 = squeeze(g, p0, ax);
  q1 = squeeze(g, p1, ax);
  if (chance(g, 10)) want_out(g, p0);
  return binary(g, chance(g, 50) ? "add" : "sub", q0, q1);
}

/* two interleaved concats on axis 2, then one on axis 3 */
static int t_pixel_shuffle(G *g, int x) {
  int v = image(g, x, 1 + rnd(g, 2), 1, 1), a, b, c, d, h0, h1, o;
  gv t = g->v[v], ht, ot;
  a = v;
  b = unary(g, unops[rnd(g, 4)], v);
  c = unary(g, unops[rnd(g, 4)], v);
  d = unary(g, unops[rnd(g, 4)], v);
  ht = t;
  ht.d[2] *= 2;
  h0 = def(g, &ht);
  out(g, " = concat(values=(%%v%d, %%v%d), axis=%d, interleave=true)\n", a, b, chance(g, 50) ? 2 : -2);
  h1 = def(g, &ht);
  out(g, " = concat(values=(%%v%d, %%v%d), axis=2, interleave=true)\n", c, d);
  if (chance(g, 10)) extra_use(g, h1);
  ot = ht;
  ot.d[3] *= 2;
  o = def(g, &ot);
  out(g, " = concat(values=(%%v%d, %%v%d), axis=%d, interleave=true)\n", h0, h1, chance(g, 50) ? 3 : -1);
  return o;
}

/* batch_norm (constant or run-time variance), instance_norm, layer_norm */
static int t_norms(G *g, int x) {
  int v = image(g, x, 1 + rnd(g, 3), 1 + rnd(g, 2), 1 + rnd(g, 3)), y, k = rnd(g, 4), d[2], gm, bt;
  gv t = g->v[v];
  d[0] = t.d[1];
  if (k <= 1) {
    int m = cnst(g, t.dt, 1, d, C_RAND), var = cnst(g, t.dt, 1, d, C_POS);
    if (k) { /* a run-time variance of C values: a positive constant plus exp of a reduced input */
      int src = pick(g, t.dt), all[MAXR], i, r;
      for (i = 0; i < g->v[src].rank; i++) all[i] = i;
      r = g->v[src].rank ? reduce(g, "reduce_mean", src, g->v[src].rank, all, 0) : src;
      var = binary(g, "add", var, unary(g, "exp", unary(g, "tanh", r)));
    }
    gm = cnst(g, t.dt, 1, d, C_RAND);
    bt = cnst(g, t.dt, 1, d, C_RAND);
    y = def(g, &t);
    out(g, " = batch_norm(x=%%v%d, mean=%%v%d, variance=%%v%d, gamma=%%v%d, beta=%%v%d, epsilon=0.001)\n", v, m, var,
        gm, bt);
  } else if (k == 2) {
    gm = cnst(g, t.dt, 1, d, C_RAND);
    bt = cnst(g, t.dt, 1, d, C_RAND);
    y = def(g, &t);
    out(g, " = instance_norm(x=%%v%d, gamma=%%v%d, beta=%%v%d, epsilon=0.001)\n", v, gm, bt);
  } else {
    int last = chance(g, 50);
    d[0] = last ? t.d[2] : t.d[1];
    d[1] = t.d[3];
    gm = cnst(g, t.dt, last ? 2 : 1, d, C_RAND);
    y = def(g, &t);
    out(g, " = layer_norm(x=%%v%d, axes=%s, gamma=%%v%d, epsilon=0.001)\n", v, last ? "[-2, -1]" : "[1]", gm);
  }
  return y;
}

/* what relay::legalize lowers: a gelu of each mode, a norm, a linear of rank > 2 */
static int t_legalize(G *g, int x) {
  static const char *const modes[3] = {"EXACT", "TANH_APPROXIMATION", "SIGMOID_APPROXIMATION"};
  gv t;
  int y, k = rnd(g, 4);
  if (k == 0) return t_norms(g, x);
  if (!is_float(g->v[x].dt)) x = cast(g, x, F32);
  if (k == 1) {
    while (g->v[x].rank < 3) x = expand_dims(g, x, 0);
    return t_linear_bias(g, x);
  }
  t = g->v[x];
  y = def(g, &t);
  out(g, " = gelu(x=%%v%d, mode=\"%s\")\n", x, modes[rnd(g, 3)]);
  if (chance(g, 10)) extra_use(g, y);
  return y;
}

/* bias_add along a random axis, the bias a constant or a run-time vector (relay::canonicalize_op) */
static int t_bias_add(G *g, int x) {
  gv t;
  int y, axis, d[1], b, i, red[MAXR], n = 0;
  if (!is_float(g->v[x].dt)) x = cast(g, x, F32);
  if (g->v[x].rank < 1) x = expand_dims(g, x, 0);
  t = g->v[x];
  axis = rnd(g, t.rank);
  if (t.sym[axis] >= 0) return x;
  d[0] = t.d[axis];
  if (chance(g, 70)) {
    b = cnst(g, t.dt, 1, d, C_RAND);
  } else {
    for (i = 0; i < t.rank; i++)
      if (i != axis) red[n++] = i;
    b = n ? reduce(g, "reduce_mean", x, n, red, 0) : unary(g, "tanh", x);
  }
  y = def(g, &t);
  if (chance(g, 50)) out(g, " = bias_add(x=%%v%d, bias=%%v%d, axis=%d)\n", x, b, chance(g, 50) ? axis : axis - t.rank);
  else if (axis == 1) out(g, " = bias_add(x=%%v%d, bias=%%v%d)\n", x, b);
  else out(g, " = bias_add(x=%%v%d, bias=%%v%d, axis=%d)\n", x, b, axis);
  if (chance(g, 10)) extra_use(g, y);
  return y;
}

/* space_to_batch -> valid conv -> batch_to_space */
static int t_dilated(G *g, int x) {
  int C = 1 + rnd(g, 2), Co = 1 + rnd(g, 2), k = 1 + rnd(g, 2), v, w, sb, cv, y, pad[4], crop[4], i, d[4];
  gv t, st, ct, yt;
  v = image(g, x, C, 3, 3);
  t = g->v[v];
  for (i = 0; i < 2; i++) {
    int sz = t.d[2 + i];
    pad[2 * i] = rnd(g, 3);
    pad[2 * i + 1] = rnd(g, 2);
    if ((sz + pad[2 * i] + pad[2 * i + 1]) % 2) pad[2 * i + 1]++;
    crop[2 * i] = rnd(g, pad[2 * i] + 1);
    crop[2 * i + 1] = rnd(g, pad[2 * i + 1] + 1);
  }
  st = t;
  st.d[0] = 4;
  st.d[2] = (t.d[2] + pad[0] + pad[1]) / 2;
  st.d[3] = (t.d[3] + pad[2] + pad[3]) / 2;
  if (st.d[2] < k || st.d[3] < k) k = 1;
  sb = def(g, &st);
  out(g, " = space_to_batch(x=%%v%d, block_shape=[2, 2], paddings=", v);
  pints(g, 4, pad);
  out(g, ")\n");
  d[0] = Co, d[1] = C, d[2] = k, d[3] = k;
  w = cnst(g, t.dt, 4, d, C_RAND);
  ct = st;
  ct.d[1] = Co;
  ct.d[2] = st.d[2] - k + 1;
  ct.d[3] = st.d[3] - k + 1;
  cv = def(g, &ct);
  out(g, " = conv(x=%%v%d, weight=%%v%d)\n", sb, w);
  yt = ct;
  yt.d[0] = 1;
  yt.d[2] = 2 * ct.d[2] - crop[0] - crop[1];
  yt.d[3] = 2 * ct.d[3] - crop[2] - crop[3];
  if (yt.d[2] < 1 || yt.d[3] < 1) {
    crop[0] = crop[1] = crop[2] = crop[3] = 0;
    yt.d[2] = 2 * ct.d[2], yt.d[3] = 2 * ct.d[3];
  }
  y = def(g, &yt);
  out(g, " = batch_to_space(x=%%v%d, block_shape=[2, 2], crops=", cv);
  pints(g, 4, crop);
  out(g, ")\n");
  return y;
}

/* conv -> add of a per-channel (or scalar) constant -> mul by one, operands in either order */
static int t_conv_add_mul(G *g, int x) {
  int C = 1 + rnd(g, 2), Co = 1 + rnd(g, 3), v, w, cv, k, sc, a, y, d[4], kd[3];
  gv ct;
  v = image(g, x, C, 2, 2);
  ct = g->v[v];
  ct.d[1] = Co;
  d[0] = Co, d[1] = C, d[2] = 1, d[3] = 1;
  w = cnst(g, ct.dt, 4, d, C_RAND);
  cv = def(g, &ct);
  out(g, " = conv(x=%%v%d, weight=%%v%d)\n", v, w);
  kd[0] = Co, kd[1] = 1, kd[2] = 1;
  k = chance(g, 20) ? cnst(g, ct.dt, 0, kd, C_RAND) : cnst(g, ct.dt, 3, kd, C_RAND);
  if (chance(g, 15)) k = cnst(g, ct.dt, 1, &ct.d[3], C_RAND); /* varies along W: no fold */
  a = chance(g, 50) ? binary(g, "add", cv, k) : binary(g, "add", k, cv);
  kd[0] = Co;
  sc = cnst(g, ct.dt, 3, kd, C_RAND);
  y = chance(g, 50) ? binary(g, "mul", a, sc) : binary(g, "mul", sc, a);
  if (chance(g, 15)) extra_use(g, a);
  return y;
}

/* add(concat(a, b), y) with a, b, y computed from x (channel counts 1..2 each), either operand order */
static int t_concat_add(G *g, int x) {
  int C0 = 1 + rnd(g, 2), C1 = 1 + rnd(g, 2), a, b, y, cat, r, ax = chance(g, 70) ? 1 : -3;
  gv ct;
  a = image(g, x, C0, 2, 2);
  b = unary(g, unops[rnd(g, 4)], image(g, x, C1, 2, 2));
  if (g->v[b].d[2] != g->v[a].d[2] || g->v[b].d[3] != g->v[a].d[3]) b = a, C1 = C0; /* spatial sizes agree */
  ct = g->v[a];
  ct.d[1] = C0 + C1;
  y = image(g, x, C0 + C1, 2, 2);
  if (g->v[y].d[2] != ct.d[2] || g->v[y].d[3] != ct.d[3]) y = -1;
  cat = def(g, &ct);
  out(g, " = concat(values=(%%v%d, %%v%d), axis=%d)\n", a, b, ax);
  if (y < 0) y = unary(g, "exp", cat);
  r = chance(g, 50) ? binary(g, "add", cat, y) : binary(g, "add", y, cat);
  if (chance(g, 15)) extra_use(g, cat);
  return r;
}

/* a concat of a tensor with blocks of one constant value (tf2onnx's channel
   pad), sometimes blocks of two values or of random values (must not fire) */
static int t_concat_pad(G *g, int x) {
  int v = image(g, x, 1 + rnd(g, 3), 2, 2), ax, i, nb = 1 + rnd(g, 2), blk[2], pos = rnd(g, 3), kind, cat, k = 0;
  int vals[3];
  gv t = g->v[v], ct;
  if (!is_float(t.dt)) return v;
  for (i = 0; i < t.rank; i++)
    if (t.sym[i] >= 0) return v;
  ax = rnd(g, t.rank);
  kind = chance(g, 50) ? C_ZERO : chance(g, 50) ? C_ONE : C_MONE;
  ct = t;
  for (i = 0; i < nb; i++) {
    gv b = t;
    b.d[ax] = 1 + rnd(g, 2);
    blk[i] = cnst_t(g, b, i == 1 && chance(g, 20) ? C_RAND : kind);
    ct.d[ax] += b.d[ax];
  }
  if (nb == 1) {
    if (pos == 0) vals[k++] = blk[0], vals[k++] = v;
    else vals[k++] = v, vals[k++] = blk[0];
  } else if (pos == 0) {
    vals[k++] = blk[0], vals[k++] = v, vals[k++] = blk[1];
  } else if (pos == 1) {
    vals[k++] = blk[0], vals[k++] = blk[1], vals[k++] = v;
  } else {
    vals[k++] = v, vals[k++] = blk[0], vals[k++] = blk[1];
  }
  cat = def(g, &ct);
  out(g, " = concat(values=(");
  for (i = 0; i < k; i++) out(g, "%s%%v%d", i ? ", " : "", vals[i]);
  out(g, "), axis=%d, interleave=false)\n", chance(g, 30) ? ax - t.rank : ax);
  if (chance(g, 10)) extra_use(g, blk[0]);
  return cat;
}

/* a per-channel scale before (optionally across a relu) or after a conv or a linear */
static int t_fold_scale(G *g, int x) {
  int C = 1 + rnd(g, 3), Co = 1 + rnd(g, 3), v, w, cv, sc, y, d[4], kd[3], lin = chance(g, 35);
  gv ct;
  v = image(g, x, C, 2, 2);
  kd[0] = C, kd[1] = 1, kd[2] = 1;
  if (lin) kd[0] = g->v[v].d[3], C = kd[0];
  if (chance(g, 60)) {
    sc = lin ? cnst(g, g->v[v].dt, 1, kd, chance(g, 30) ? C_POS : C_RAND)
             : cnst(g, g->v[v].dt, 3, kd, chance(g, 30) ? C_POS : C_RAND);
    v = chance(g, 50) ? binary(g, "mul", v, sc) : binary(g, "mul", sc, v);
    if (chance(g, 30)) v = unary(g, "relu", v);
    if (chance(g, 10)) extra_use(g, v);
  }
  ct = g->v[v];
  if (lin) {
    d[0] = Co, d[1] = C;
    w = cnst(g, ct.dt, 2, d, C_RAND);
    ct.d[3] = Co;
    cv = def(g, &ct);
    out(g, " = linear(x=%%v%d, weight=%%v%d)\n", v, w);
    kd[0] = Co;
    sc = cnst(g, ct.dt, 1, kd, C_RAND);
  } else {
    d[0] = Co, d[1] = C, d[2] = 1, d[3] = 1;
    w = cnst(g, ct.dt, 4, d, C_RAND);
    ct.d[1] = Co;
    cv = def(g, &ct);
    out(g, " = conv(x=%%v%d, weight=%%v%d)\n", v, w);
    kd[0] = Co;
    sc = cnst(g, ct.dt, 3, kd, C_RAND);
  }
  y = chance(g, 50) ? binary(g, "mul", cv, sc) : binary(g, "mul", sc, cv);
  return y;
}

/* 2..4 parallel convs (lin: linear ops) of one input, widths 1..3, then the same relu or a per-channel add each (or not) */
static int t_parallel(G *g, int x, int lin) {
  int C = 1 + rnd(g, 3), n = 2 + rnd(g, 3), v, i, last = -1, tail = rnd(g, 3);
  v = image(g, x, C, 2, 2);
  if (lin) C = g->v[v].d[3];
  for (i = 0; i < n; i++) {
    int Co = 1 + rnd(g, 3), d[4], w, b, cv, kd[3];
    gv ct = g->v[v];
    d[0] = Co, d[1] = C, d[2] = 1, d[3] = 1;
    w = cnst(g, ct.dt, lin ? 2 : 4, d, C_RAND);
    b = chance(g, 60) ? cnst(g, ct.dt, 1, d, C_RAND) : -1;
    ct.d[lin ? 3 : 1] = Co;
    cv = def(g, &ct);
    out(g, " = %s(x=%%v%d, weight=%%v%d", lin ? "linear" : "conv", v, w);
    if (b >= 0) out(g, ", bias=%%v%d", b);
    out(g, ")\n");
    if (tail == 1) cv = unary(g, "relu", cv);
    if (tail == 2) {
      kd[0] = Co, kd[1] = 1, kd[2] = 1;
      cv = binary(g, "add", cv, lin ? cnst(g, ct.dt, 1, kd, C_RAND) : cnst(g, ct.dt, 3, kd, C_RAND));
    }
    if (i < n - 1) want_out(g, cv);
    last = cv;
  }
  return last;
}
static int t_parallel_conv(G *g, int x) { return t_parallel(g, x, 0); }
static int t_parallel_dense(G *g, int x) { return t_parallel(g, x, 1); }

/* ---------------------------------------------------------------- functions

   A template may define functions: their text goes to g->fns (written after
   main, which the parser allows) while main's values are hidden. */

typedef struct fn_def {
  int saved_ind, start;
  dt_text *saved_o;
  unsigned char *vis;
} fn_def;

/* Starts function "f::fN"(args of the types of vals[0..n-1]) with the
   attributes text attrs (NULL: none); args[i] gets each argument's value. */
static int fn_begin(G *g, fn_def *fd, const char *attrs, int n, const int *vals, int *args) {
  int i, id = g->nfn++;
  fd->vis = (unsigned char *)malloc((size_t)g->nv + 1);
  if (!fd->vis) {
    g->oom = 1;
    return id;
  }
  for (i = 0; i < g->nv; i++) {
    fd->vis[i] = (unsigned char)g->v[i].vis;
    g->v[i].vis = 0;
  }
  fd->saved_o = g->o;
  fd->saved_ind = g->ind;
  fd->start = g->nv;
  g->o = &g->fns;
  g->ind = 0;
  out(g, "\"f::f%d\"", id);
  if (attrs) out(g, " attributes(%s)", attrs);
  out(g, "(");
  for (i = 0; i < n; i++) {
    int a = g->nv < MAXV - 1 ? g->nv++ : (g->oom = 1, 0);
    g->v[a] = g->v[vals[i]];
    g->v[a].isconst = 0;
    g->v[a].vis = 1;
    out(g, "%s%%v%d: ", i ? ", " : "", a);
    ptype(g, &g->v[a]);
    args[i] = a;
  }
  out(g, ") {\n");
  g->ind = 1;
  return id;
}

/* Ends the function with outputs outs[0..n-1] (their types go to types). */
static void fn_end(G *g, fn_def *fd, int n, const int *outs, gv *types) {
  int i;
  out(g, "} -> (");
  for (i = 0; i < n; i++) {
    out(g, "%s%%v%d", i ? ", " : "", outs[i]);
    types[i] = g->v[outs[i]];
    types[i].isconst = 0;
  }
  out(g, ")\n");
  for (i = fd->start; i < g->nv; i++) g->v[i].vis = 0;
  if (fd->vis)
    for (i = 0; i < fd->start; i++) g->v[i].vis = fd->vis[i];
  free(fd->vis);
  g->o = fd->saved_o;
  g->ind = fd->saved_ind;
}

/* A call of f::f<id> on vals[0..n-1] in main, extra attributes text attrs;
   its nout outputs of the given types go to res. */
static void fn_call(G *g, int id, int n, const int *vals, int nout, const gv *types, const char *attrs, int *res) {
  int i;
  for (i = 0; i < nout; i++) {
    int v = g->nv < MAXV - 1 ? g->nv++ : (g->oom = 1, 0);
    g->v[v] = types[i];
    g->v[v].vis = 1;
    if (i == 0) indent(g);
    out(g, "%s%%v%d: ", i ? ", " : "", v);
    ptype(g, &types[i]);
    res[i] = v;
  }
  out(g, " = \"f::f%d\"(", id);
  for (i = 0; i < n; i++) out(g, "%sin%d=%%v%d", i ? ", " : "", i, vals[i]);
  if (attrs) out(g, ", %s", attrs);
  out(g, ")\n");
}

static int same_type(const gv *a, const gv *b) {
  int i;
  if (a->dt != b->dt || a->rank != b->rank) return 0;
  for (i = 0; i < a->rank; i++)
    if (a->d[i] != b->d[i] || a->sym[i] != b->sym[i]) return 0;
  return 1;
}

/* Plain functions: one of 1..2 arguments (x and maybe a value of x's type),
   a random body (a cond or a loop inside half the time, sometimes a call
   of an earlier function), 1..2 outputs; called 1..3 times (a call inside
   a cond branch sometimes). */
static int t_functions(G *g, int x) {
  int nfn = 1 + rnd(g, 2), f, last = x, inner = -1;
  gv inner_t[2], inner_in;
  for (f = 0; f < nfn; f++) {
    fn_def fd;
    int vals[2], args[2], outs[2], n = 1 + chance(g, 40), nout = 1 + chance(g, 30), id, ncalls = 1 + rnd(g, 3), c, r;
    gv types[2];
    vals[0] = last;
    if (n == 2) vals[1] = chance(g, 50) ? last : unary(g, "tanh", last);
    id = fn_begin(g, &fd, NULL, n, vals, args);
    r = args[0];
    if (n == 2) r = binary(g, binops[rnd(g, 3)], r, args[1]);
    if (inner >= 0 && chance(g, 60) && same_type(&inner_in, &g->v[r])) {
      int res[2];
      fn_call(g, inner, 1, &r, 1, inner_t, NULL, res);
      r = res[0];
    }
    if (chance(g, 50)) r = !g->smooth && chance(g, 50) ? gen_cond(g, r, 1) : gen_loop(g, r, 1);
    random_ops(g, rnd(g, 3), 1);
    r = unary(g, unops[rnd(g, 4)], r);
    outs[0] = r;
    outs[1] = chance(g, 50) ? args[n - 1] : pick(g, -1);
    if (outs[1] < 0) nout = 1;
    fn_end(g, &fd, nout, outs, types);
    if (nout == 1 && n == 1) {
      inner = id;
      inner_t[0] = types[0];
      inner_in = g->v[vals[0]];
    }
    for (c = 0; c < ncalls; c++) {
      int res[2];
      if (c > 0 && chance(g, 30) && !g->smooth) {
        /* the call inside a cond's then branch */
        int zero = cnst_scalar(g, g->v[vals[0]].dt, 0), all[MAXR], i, s, pred, y, start, br;
        for (i = 0; i < g->v[vals[0]].rank; i++) all[i] = i;
        s = reduce(g, "reduce_sum", vals[0], g->v[vals[0]].rank, all, 0);
        pred = binary(g, "greater", s, zero);
        y = def(g, &types[0]);
        out(g, " = cond(pred=%%v%d)\n", pred);
        g->v[y].vis = 0;
        g->ind++;
        for (br = 0; br < 2; br++) { /* the same call in both branches */
          indent(g);
          out(g, "%s() {\n", br ? "else_branch" : "then_branch");
          g->ind++;
          start = g->nv;
          fn_call(g, id, n, vals, nout, types, NULL, res);
          for (i = start; i < g->nv; i++) g->v[i].vis = 0;
          g->ind--;
          indent(g);
          out(g, "} -> (%%v%d)\n", res[0]);
        }
        g->ind--;
        g->v[y].vis = 1;
        want_out(g, y);
        continue;
      }
      fn_call(g, id, n, vals, nout, types, NULL, res);
      if (nout == 2) want_out(g, res[1]);
      if (c + 1 < ncalls) want_out(g, res[0]);
      last = res[0];
      if (chance(g, 40) && n == 1 && same_type(&types[0], &g->v[vals[0]]))
        vals[0] = last; /* the next call reads this one's result */
    }
  }
  return last;
}

/* A static [d0, d1, d2] value that depends on x. */
static int seq3(G *g, int x, int d0, int d1, int d2) {
  int d[3], all[MAXR], i, r, k;
  d[0] = d0, d[1] = d1, d[2] = d2;
  for (i = 0; i < g->v[x].rank; i++) all[i] = i;
  r = g->v[x].rank ? reduce(g, "reduce_sum", x, g->v[x].rank, all, 0) : x;
  k = cnst(g, g->v[x].dt, 3, d, C_RAND);
  return binary(g, "add", k, r);
}

/* embedding_lookup: f(w [N, D], ids [K] int32) whose body gathers rows (or
   one-hot times w); ids constant in [-N, N) (one-hot: [0, N)); sometimes
   float ids or the implements attribute missing (not fused). */
static int t_embedding(G *g, int x) {
  int N = 2 + rnd(g, 3), D = 1 + rnd(g, 3), K = 1 + rnd(g, 4), onehot = g->v[x].dt == F32 && chance(g, 30), i, vals[2], args[2], r, id;
  int ids[8], d[2], res[1], w, named = !chance(g, 15), fl = chance(g, 10);
  fn_def fd;
  gv types[1];
  for (i = 0; i < K; i++) ids[i] = onehot ? rnd(g, N) : rnd(g, 2 * N) - N;
  if (chance(g, 50)) {
    w = seq3(g, x, 1, N, D);
    w = squeeze(g, w, 0);
  } else {
    d[0] = N, d[1] = D;
    w = cnst(g, g->v[x].dt, 2, d, C_RAND);
  }
  vals[0] = w;
  vals[1] = cnst_ints(g, K, ids);
  if (fl) vals[1] = cast(g, vals[1], g->v[x].dt);
  id = fn_begin(g, &fd, named ? "implements=\"embedding_lookup\"" : NULL, 2, vals, args);
  if (fl) args[1] = cast(g, args[1], I32);
  if (onehot) {
    gv ht = mk(g->v[x].dt, 2, NULL);
    int h;
    ht.d[0] = K, ht.d[1] = N;
    h = def(g, &ht);
    out(g, " = one_hot(indices=%%v%d, one_hot_vector_size=%d, axis=-1, on_value=1.0, off_value=0.0)\n", args[1], N);
    ht.d[1] = D;
    r = def(g, &ht);
    out(g, " = matmul(x=%%v%d, y=%%v%d)\n", h, args[0]);
  } else {
    gv rt = mk(g->v[x].dt, 2, NULL);
    rt.d[0] = K, rt.d[1] = D;
    r = def(g, &rt);
    out(g, " = gather(x=%%v%d, indices=%%v%d, axis=0)\n", args[0], args[1]);
  }
  fn_end(g, &fd, 1, &r, types);
  fn_call(g, id, 2, vals, 1, types, NULL, res);
  if (chance(g, 40)) {
    int res2[1];
    fn_call(g, id, 2, vals, 1, types, NULL, res2);
    want_out(g, res2[0]);
  }
  return res[0];
}

/* The Keras LSTM layer unrolled over T steps in a function body: x [B, T, I]
   (time_major: [T, B, I]), states [B, H], kernel [I, 4H], recurrent kernel
   [H, 4H], bias [4H], gates i, f, c, o; go_backwards reads x from the last
   step and gives the outputs in processing order. outs: last_output,
   outputs, state_h, state_c. */
static void keras_lstm_body(G *g, const int *a, int B, int T, int H, int bw, int tm, int *outs) {
  int s, h = a[1], c = a[2], steps[8], dt = g->v[a[0]].dt;
  gv bh = mk(dt, 2, NULL), b4 = mk(dt, 2, NULL), bi = mk(dt, 2, NULL);
  bh.d[0] = B, bh.d[1] = H;
  b4.d[0] = B, b4.d[1] = 4 * H;
  bi.d[0] = B, bi.d[1] = g->v[a[0]].d[2];
  for (s = 0; s < T; s++) {
    int t = bw ? T - 1 - s : s, idx = cnst_scalar(g, I32, t), xt, xk, hr, z, gi, gf, gc, go, q[4], k;
    xt = def(g, &bi);
    out(g, " = gather(x=%%v%d, indices=%%v%d, axis=%d)\n", a[0], idx, tm ? 0 : 1);
    xk = def(g, &b4);
    out(g, " = matmul(x=%%v%d, y=%%v%d)\n", xt, a[3]);
    hr = def(g, &b4);
    out(g, " = matmul(x=%%v%d, y=%%v%d)\n", h, a[4]);
    z = binary(g, "add", binary(g, "add", xk, hr), a[5]);
    q[0] = def(g, &bh);
    for (k = 1; k < 4; k++) {
      q[k] = g->nv < MAXV - 1 ? g->nv++ : (g->oom = 1, 0);
      g->v[q[k]] = bh;
      g->v[q[k]].vis = 1;
      out(g, ", %%v%d: ", q[k]);
      ptype(g, &bh);
    }
    out(g, " = split(x=%%v%d, num_splits=4, axis=1)\n", z);
    gi = unary(g, "sigmoid", q[0]);
    gf = unary(g, "sigmoid", q[1]);
    gc = unary(g, "tanh", q[2]);
    go = unary(g, "sigmoid", q[3]);
    c = binary(g, "mul", gf, c);
    c = binary(g, "add", c, binary(g, "mul", gi, gc));
    h = binary(g, "mul", go, unary(g, "tanh", c));
    steps[s] = expand_dims(g, h, tm ? 0 : 1);
  }
  {
    gv st = mk(dt, 3, NULL);
    st.d[0] = tm ? T : B, st.d[1] = tm ? B : T, st.d[2] = H;
    outs[1] = def(g, &st);
    out(g, " = concat(values=(");
    for (s = 0; s < T; s++) out(g, "%s%%v%d", s ? ", " : "", steps[s]);
    out(g, "), axis=%d, interleave=false)\n", tm ? 0 : 1);
  }
  outs[0] = h;
  outs[2] = unary(g, "identity", h);
  outs[3] = c;
}

/* keras_lstm: a function implementing the Keras LSTM layer (go_backwards
   and time_major as function or call attributes), constant weights, called
   on a value that depends on x; sometimes a non-constant kernel (not fused). */
static int t_keras_lstm(G *g, int x) {
  int B = 1 + rnd(g, 2), T = 1 + rnd(g, 3), I = 1 + rnd(g, 3), H = 1 + rnd(g, 2), bw = chance(g, 40), tm = chance(g, 25);
  int dt = g->v[x].dt, vals[6], args[6], outs[4], res[4], d[2], id, on_call = chance(g, 50), i;
  fn_def fd;
  gv types[4];
  char attrs[96];
  vals[0] = seq3(g, x, tm ? T : B, tm ? B : T, I);
  d[0] = B, d[1] = H;
  vals[1] = cnst(g, dt, 2, d, C_SMALL01);
  vals[2] = chance(g, 30) ? binary(g, "mul", vals[1], cnst_scalar(g, dt, 0.5)) : cnst(g, dt, 2, d, C_RAND);
  d[0] = I, d[1] = 4 * H;
  vals[3] = cnst(g, dt, 2, d, C_RAND);
  if (chance(g, 8)) vals[3] = binary(g, "add", vals[3], cnst_scalar(g, dt, 0.25)); /* not a constant: not fused */
  d[0] = H;
  vals[4] = cnst(g, dt, 2, d, C_RAND);
  vals[5] = cnst(g, dt, 1, d + 1, C_RAND);
  snprintf(attrs, sizeof attrs, "implements=\"keras_lstm\"%s%s", !on_call && bw ? ", go_backwards=true" : "",
           !on_call && tm ? ", time_major=true" : "");
  id = fn_begin(g, &fd, attrs, 6, vals, args);
  keras_lstm_body(g, args, B, T, H, bw, tm, outs);
  fn_end(g, &fd, 4, outs, types);
  snprintf(attrs, sizeof attrs, "%s%s%s", bw ? "go_backwards=true" : "", bw && tm ? ", " : "", tm ? "time_major=true" : "");
  fn_call(g, id, 6, vals, 4, types, on_call && (bw || tm) ? attrs : NULL, res);
  for (i = 0; i < 4; i++)
    if (i != 1 && chance(g, 50)) want_out(g, res[i]);
  return res[1];
}

/* Keras' Bidirectional(LSTM): a forward and a go_backwards keras_lstm
   function called on one x, the backward sequence reversed along time by a
   slice_by_index, the sequences (and some final states) concatenated on the
   last axis; sometimes another x for the backward call, an extra reader of
   the forward sequence or a different hidden size (not paired). */
static int t_keras_bilstm(G *g, int x) {
  int B = 1 + rnd(g, 2), T = 1 + rnd(g, 3), I = 1 + rnd(g, 2), tm = chance(g, 25), dt = g->v[x].dt, k, dir;
  int H[2], xs[2], res[2][4], d[3], y;
  gv st;
  char attrs[96];
  H[0] = 1 + rnd(g, 2);
  H[1] = chance(g, 10) ? 3 - H[0] : H[0];
  xs[0] = seq3(g, x, tm ? T : B, tm ? B : T, I);
  xs[1] = chance(g, 10) ? seq3(g, x, tm ? T : B, tm ? B : T, I) : xs[0];
  for (dir = 0; dir < 2; dir++) {
    int vals[6], args[6], outs[4], id;
    fn_def fd;
    gv types[4];
    vals[0] = xs[dir];
    d[0] = B, d[1] = H[dir];
    vals[1] = cnst(g, dt, 2, d, C_SMALL01);
    vals[2] = cnst(g, dt, 2, d, C_RAND);
    d[0] = I, d[1] = 4 * H[dir];
    vals[3] = cnst(g, dt, 2, d, C_RAND);
    d[0] = H[dir];
    vals[4] = cnst(g, dt, 2, d, C_RAND);
    vals[5] = cnst(g, dt, 1, d + 1, C_RAND);
    snprintf(attrs, sizeof attrs, "implements=\"keras_lstm\"%s%s", dir ? ", go_backwards=true" : "", tm ? ", time_major=true" : "");
    id = fn_begin(g, &fd, attrs, 6, vals, args);
    keras_lstm_body(g, args, B, T, H[dir], dir, tm, outs);
    fn_end(g, &fd, 4, outs, types);
    fn_call(g, id, 6, vals, 4, types, NULL, res[dir]);
  }
  {
    int b[3], e[3], sd[3], bm, em, ax = tm ? 0 : 1, r;
    gv rt = g->v[res[1][1]];
    for (k = 0; k < 3; k++) b[k] = 0, e[k] = 0, sd[k] = k == ax ? -1 : 1;
    b[ax] = chance(g, 50) ? -1 : T - 1;
    bm = cnst_ints(g, 3, b);
    em = cnst_ints(g, 3, e);
    k = cnst_ints(g, 3, sd);
    r = def(g, &rt);
    out(g, " = slice_by_index(x=%%v%d, begin=%%v%d, end=%%v%d, stride=%%v%d, begin_mask=[%s, %s, %s], end_mask=[true, true, true])\n",
        res[1][1], bm, em, k, ax == 0 ? "false" : "true", ax == 1 ? "false" : "true", "true");
    st = g->v[res[0][1]];
    st.d[2] = H[0] + H[1];
    y = def(g, &st);
    out(g, " = concat(values=(%%v%d, %%v%d), axis=%d, interleave=false)\n", res[0][1], r, chance(g, 50) ? -1 : 2);
    g->v[r].vis = g->v[res[1][1]].vis = 0; /* read by the join only */
  }
  for (k = 0; k < 4; k++) {
    gv ht;
    int c;
    if (k == 1) continue;
    if (chance(g, 60)) { /* unused: hidden, so that it does not become an output of main */
      g->v[res[0][k]].vis = g->v[res[1][k]].vis = 0;
      continue;
    }
    ht = g->v[res[0][k]];
    ht.d[1] = H[0] + H[1];
    c = def(g, &ht);
    out(g, " = concat(values=(%%v%d, %%v%d), axis=-1, interleave=false)\n", res[0][k], res[1][k]);
    want_out(g, c);
  }
  if (chance(g, 10)) extra_use(g, res[0][1]); /* the forward sequence read elsewhere: no pair */
  g->v[res[0][1]].vis = 0;
  return y;
}

/* fuse_composite_functions: an embedding lookup, a Keras LSTM (or a bidirectional pair) or plain functions. */
static int t_composite(G *g, int x) {
  int c = rnd(g, 10);
  return c < 3 ? t_embedding(g, x) : c < 6 ? t_keras_lstm(g, x) : c < 9 ? t_keras_bilstm(g, x) : t_functions(g, x);
}

/* a channel-last region: a pool or conv wrapped in transposes, elementwise ops
   working NHWC between them (constants, a run-time operand, extra readers) */
static int t_layout(G *g, int x) {
  static const int to_last[4] = {0, 2, 3, 1}, to_first[4] = {0, 3, 1, 2};
  int C = 1 + rnd(g, 3), v, n, k, i, p, d[4], steps = 1 + rnd(g, 3);
  gv ct;
  v = image(g, x, C, 2, 2);
  if (chance(g, 60)) {
    ct = g->v[v];
    p = def(g, &ct);
    out(g, " = max_pool(x=%%v%d, kernel_sizes=[1, 1], strides=[1, 1], pad_type=\"valid\")\n", v);
    v = p;
  }
  n = transpose(g, v, to_last);
  for (i = 0; i < steps; i++) {
    if (chance(g, 40)) {
      n = unary(g, unops[rnd(g, 4)], n);
    } else if (chance(g, 15)) {
      ct = g->v[n];
      ct.d[1] = ct.d[2] = 1;
      k = def(g, &ct);
      out(g, " = reduce_mean(x=%%v%d, axes=[1, 2], keep_dims=true)\n", n);
      n = binary(g, "add", n, k);
    } else {
      k = bconst(g, n, C_RAND);
      n = chance(g, 50) ? binary(g, "add", n, k) : binary(g, "mul", k, n);
    }
    if (chance(g, 10)) extra_use(g, n);
  }
  v = transpose(g, n, to_first);
  ct = g->v[v];
  if (chance(g, 50)) {
    d[0] = C, d[1] = C, d[2] = 1, d[3] = 1;
    k = cnst(g, ct.dt, 4, d, C_RAND);
    if (chance(g, 30)) { /* a weight transposing a constant */
      static const int io[4] = {1, 0, 2, 3};
      k = transpose(g, k, io);
    }
    p = def(g, &ct);
    out(g, " = conv(x=%%v%d, weight=%%v%d)\n", v, k);
  } else {
    p = def(g, &ct);
    out(g, " = avg_pool(x=%%v%d, kernel_sizes=[1, 1], strides=[1, 1], pad_type=\"valid\")\n", v);
  }
  n = transpose(g, p, to_last);
  if (chance(g, 50)) n = unary(g, "relu", n);
  return n;
}

/* a channel-wise op after a concat of convs or linears */
static int t_concat_pos(G *g, int x) {
  int lin = chance(g, 30), n = 2 + rnd(g, 2), C = 1 + rnd(g, 3), v, i, cat, ax, tot = 0, k, kd[3], ins[4] = {0, 0, 0, 0};
  gv ct;
  v = image(g, x, C, 2, 2);
  if (lin) C = g->v[v].d[3];
  ax = lin ? 3 : 1;
  for (i = 0; i < n; i++) {
    int Co = 1 + rnd(g, 3), d[4], w;
    ct = g->v[v];
    d[0] = Co, d[1] = C, d[2] = 1, d[3] = 1;
    w = cnst(g, ct.dt, lin ? 2 : 4, d, C_RAND);
    ct.d[ax] = Co;
    ins[i] = def(g, &ct);
    out(g, " = %s(x=%%v%d, weight=%%v%d)\n", lin ? "linear" : "conv", v, w);
    if (chance(g, 5)) want_out(g, ins[i]);
    tot += Co;
  }
  ct = g->v[ins[0]];
  ct.d[ax] = tot;
  cat = def(g, &ct);
  out(g, " = concat(values=(");
  for (i = 0; i < n; i++) out(g, "%s%%v%d", i ? ", " : "", ins[i]);
  out(g, "), axis=%d)\n", ax);
  if (chance(g, 10)) extra_use(g, cat);
  switch (rnd(g, 4)) {
  case 0: return unary(g, chance(g, 50) ? "relu" : "relu6", cat);
  case 1: return unary(g, "sigmoid", cat);
  default:
    kd[0] = tot, kd[1] = 1, kd[2] = 1;
    k = lin ? cnst(g, ct.dt, 1, kd, C_RAND) : cnst(g, ct.dt, 3, kd, C_RAND);
    if (chance(g, 20)) k = cnst_scalar(g, ct.dt, 0.5);
    return chance(g, 50) ? binary(g, chance(g, 50) ? "add" : "sub", cat, k) : binary(g, "mul", k, cat);
  }
}

enum { X_STATE = 1, X_INT = 2 }; /* main's extra arguments a template needs */

/* ---------------------------------------------------------------- conv fusions, norms, prelu, padding */

/* a float value as fp32 */
static int as_f32(G *g, int x) { return g->v[x].dt == F32 ? x : cast(g, x, F32); }

/* A static value of the given dims whose elements depend on x: a constant plus x reduced to a scalar. */
static int dyn(G *g, int x, int rank, const int *d) {
  int all[MAXR], i, r, k;
  for (i = 0; i < g->v[x].rank; i++) all[i] = i;
  r = g->v[x].rank ? reduce(g, "reduce_sum", x, g->v[x].rank, all, 0) : x;
  k = cnst(g, g->v[x].dt, rank, d, C_RAND);
  return binary(g, "add", k, r);
}

/* conv of v (1, C, H, W) with a constant (Co, C, k, k) weight (k <= H, W), a bias at random; pad_type valid */
static int conv_valid(G *g, int v, int Co, int k, int bias) {
  gv t = g->v[v], ct = t;
  int d[4], w, b = -1, id;
  if (k > t.d[2]) k = t.d[2];
  if (k > t.d[3]) k = t.d[3];
  d[0] = Co, d[1] = t.d[1], d[2] = k, d[3] = k;
  w = cnst(g, t.dt, 4, d, C_RAND);
  if (bias) b = cnst(g, t.dt, 1, d, C_RAND);
  ct.d[1] = Co, ct.d[2] = t.d[2] - k + 1, ct.d[3] = t.d[3] - k + 1;
  id = def(g, &ct);
  out(g, " = conv(x=%%v%d, weight=%%v%d", v, w);
  if (b >= 0) out(g, ", bias=%%v%d", b);
  out(g, "%s)\n", chance(g, 50) ? ", pad_type=\"valid\"" : "");
  return id;
}

/* a conv (or a conv_transpose) of an image: what the conv fusions start from */
static int conv_or_transpose(G *g, int x, int Co) {
  int C = 1 + rnd(g, 3), v;
  /* fp32: in an fp16 program a folded weight is rounded to fp16, which moves an
     output by up to 2^-11 of sum |x w|: beyond the checker's fp16 floor (4e-3 of
     |y|) where the sum cancels. fp16 folds are the golden cases' to show. */
  x = as_f32(g, x);
  if (chance(g, 25)) { /* conv_transpose, stride 1, valid: (H - 1) + k */
    int k = 1 + rnd(g, 2), d[4], w, b = -1, y;
    gv t, ot;
    v = image(g, x, C, 1, 1);
    t = g->v[v];
    d[0] = C, d[1] = Co, d[2] = k, d[3] = k;
    w = cnst(g, t.dt, 4, d, C_RAND);
    if (chance(g, 50)) b = cnst(g, t.dt, 1, d + 1, C_RAND);
    ot = t;
    ot.d[1] = Co, ot.d[2] = t.d[2] - 1 + k, ot.d[3] = t.d[3] - 1 + k;
    y = def(g, &ot);
    out(g, " = conv_transpose(x=%%v%d, weight=%%v%d", v, w);
    if (b >= 0) out(g, ", bias=%%v%d", b);
    out(g, ", pad_type=\"valid\")\n");
    return y;
  }
  v = image(g, x, C, 2, 2);
  return conv_valid(g, v, Co, 1 + rnd(g, 2), chance(g, 50));
}

/* conv -> batch_norm of constants (sometimes a run-time variance, or another reader of the conv) */
static int t_conv_bn(G *g, int x) {
  int Co = 1 + rnd(g, 3), cv = conv_or_transpose(g, x, Co), d[1], m, var, gm, bt, y;
  gv t = g->v[cv];
  d[0] = Co;
  m = cnst(g, t.dt, 1, d, C_RAND);
  var = cnst(g, t.dt, 1, d, C_POS);
  if (chance(g, 10)) var = unary(g, "exp", unary(g, "tanh", dyn(g, x, 1, d)));
  gm = cnst(g, t.dt, 1, d, C_RAND);
  bt = cnst(g, t.dt, 1, d, C_RAND);
  if (chance(g, 10)) extra_use(g, cv);
  y = def(g, &t);
  out(g, " = batch_norm(x=%%v%d, mean=%%v%d, variance=%%v%d, gamma=%%v%d, beta=%%v%d, epsilon=%s)\n", cv, m, var, gm,
      bt, chance(g, 50) ? "0.001" : "1e-05");
  return y;
}

/* a per-channel constant for a (1, Co, H, W) value: (Co, 1, 1), (1, Co, 1, 1) or a scalar; sometimes one that varies along W */
static int chan_const(G *g, int cv, int kind) {
  int kd[4];
  gv t = g->v[cv];
  switch (rnd(g, 7)) {
  case 0: return cnst(g, t.dt, 0, NULL, kind);
  case 1: kd[0] = t.d[3]; return cnst(g, t.dt, 1, kd, kind);     /* varies along W: no fold */
  case 2: case 3: kd[0] = 1, kd[1] = t.d[1], kd[2] = 1, kd[3] = 1; return cnst(g, t.dt, 4, kd, kind);
  default: kd[0] = t.d[1], kd[1] = 1, kd[2] = 1; return cnst(g, t.dt, 3, kd, kind);
  }
}

/* conv -> add or sub of a per-channel constant, either operand order */
static int t_conv_bias(G *g, int x) {
  int cv = conv_or_transpose(g, x, 1 + rnd(g, 3)), k = chan_const(g, cv, C_RAND), sub = chance(g, 35);
  if (chance(g, 10)) extra_use(g, cv);
  if (sub) return chance(g, 70) ? binary(g, "sub", cv, k) : binary(g, "sub", k, cv);
  return chance(g, 50) ? binary(g, "add", cv, k) : binary(g, "add", k, cv);
}

/* conv -> mul by (either order) or real_div by a per-channel constant */
static int t_conv_scale(G *g, int x) {
  int cv = conv_or_transpose(g, x, 1 + rnd(g, 3)), div = chance(g, 30), k = chan_const(g, cv, div ? C_POS : C_RAND);
  if (chance(g, 10)) extra_use(g, cv);
  if (div) return chance(g, 85) ? binary(g, "real_div", cv, k) : binary(g, "real_div", k, cv);
  return chance(g, 50) ? binary(g, "mul", cv, k) : binary(g, "mul", k, cv);
}

/* pad (constant 0) of the spatial axes -> conv */
static int t_pad_conv(G *g, int x) {
  int C = 1 + rnd(g, 2), v = image(g, x, C, 1, 1), pads[8], np = chance(g, 50) ? 4 : 8, i, p, a, k;
  gv t = g->v[v], pt;
  for (i = 0; i < 8; i++) pads[i] = 0;
  for (i = np - 4; i < np; i++) pads[i] = rnd(g, 3);
  if (np == 8 && chance(g, 10)) pads[2] = 1; /* pads the channel axis: no fusion */
  pt = t;
  for (i = 0; i < 4; i++) pt.d[i] += np == 8 ? pads[2 * i] + pads[2 * i + 1] : (i >= 2 ? pads[2 * (i - 2)] + pads[2 * (i - 2) + 1] : 0);
  p = cnst_ints(g, np, pads);
  a = def(g, &pt);
  out(g, " = pad(x=%%v%d, pad=%%v%d", v, p);
  if (chance(g, 70)) out(g, ", mode=\"constant\", constant_val=%s", chance(g, 90) ? "0.0" : "0.5");
  out(g, ")\n");
  if (chance(g, 10)) extra_use(g, a);
  k = 1 + rnd(g, 3);
  return conv_valid(g, a, 1 + rnd(g, 2), k, chance(g, 30));
}

/* expand_dims -> conv with a (Co, C, 1, k) weight -> squeeze of the same axis: a conv1d */
static int t_conv1d(G *g, int x) {
  int C = 1 + rnd(g, 2), Co = 1 + rnd(g, 3), v = image(g, x, C, 1, 3), s, e, w, c, d[4], k, neg = chance(g, 50), b = -1;
  gv t, et, ct;
  v = squeeze(g, v, 0); /* (C, H, W) */
  t = g->v[v];
  k = 1 + rnd(g, t.d[2] < 3 ? t.d[2] : 3);
  et = mk(t.dt, 4, NULL);
  et.d[0] = t.d[0], et.d[1] = t.d[1], et.d[2] = 1, et.d[3] = t.d[2];
  /* (C, H, W) read as (N=C, C'=H, W): the batch is the first axis */
  e = def(g, &et);
  out(g, " = expand_dims(x=%%v%d, axes=[%d])\n", v, neg ? -2 : 2);
  d[0] = Co, d[1] = t.d[1], d[2] = 1, d[3] = k;
  w = cnst(g, t.dt, 4, d, C_RAND);
  if (chance(g, 40)) b = cnst(g, t.dt, 1, d, C_RAND);
  ct = et;
  ct.d[1] = Co, ct.d[3] = et.d[3] - k + 1;
  c = def(g, &ct);
  out(g, " = conv(x=%%v%d, weight=%%v%d", e, w);
  if (b >= 0) out(g, ", bias=%%v%d", b);
  out(g, ", pad_type=\"valid\")\n");
  if (chance(g, 10)) extra_use(g, c);
  s = squeeze(g, c, chance(g, 90) ? 2 : 0);
  (void)C;
  return s;
}

/* A static value of dims d that depends on x and stays within [-3, 3]: a constant plus tanh of x
   reduced to a scalar (finite even where x holds an inf or a NaN of its own making). */
static int bounded(G *g, int x, int rank, const int *d) {
  int all[MAXR], i, r, k;
  for (i = 0; i < g->v[x].rank; i++) all[i] = i;
  r = g->v[x].rank ? reduce(g, "reduce_sum", x, g->v[x].rank, all, 0) : x;
  k = cnst(g, g->v[x].dt, rank, d, C_RAND);
  return binary(g, "add", k, unary(g, "tanh", r));
}

/* A static (1, C, H, W) bounded value: a normalization of it is well conditioned (its mean is not
   large against its spread), so fp32 arithmetic of the unfused pattern stays within FOLD's
   tolerance of the exact value. */
static int bounded_image(G *g, int x, int C, int h, int w) {
  int d[4];
  d[0] = 1, d[1] = C, d[2] = h + rnd(g, 2), d[3] = w + rnd(g, 2);
  return bounded(g, x, 4, d);
}

/* the TF BERT layer norm: mean, x - mean, square, mean, + eps, rsqrt, * gamma, x * g - mean * g + beta;
   over the last axis (layer_norm) or the spatial axes of NCHW (instance_norm) */
static int t_layernorm(G *g, int x) {
  /* fp32: an fp16 pattern rounds each of its ten steps to fp16; the fused op rounds once */
  int C = 1 + rnd(g, 3), v = bounded_image(g, as_f32(g, x), C, 1, 2), inst = chance(g, 50), ax[2], nax, m, dd, q, var, e, ve, r, gm, gr, xg,
      mg, bt, bm, d[4], rk;
  gv t = g->v[v];
  if (inst) ax[0] = 2, ax[1] = 3, nax = 2;
  else ax[0] = -1, nax = 1;
  m = reduce(g, "reduce_mean", v, nax, ax, 1);
  dd = binary(g, "sub", v, m);
  q = unary(g, "square", dd);
  var = reduce(g, "reduce_mean", q, nax, ax, 1);
  e = cnst_scalar(g, t.dt, chance(g, 50) ? 0.001 : 0.01);
  ve = binary(g, "add", var, e);
  r = unary(g, "rsqrt", ve);
  if (inst) d[0] = 1, d[1] = C, d[2] = 1, d[3] = 1, rk = 4;
  else d[0] = t.d[3], rk = 1;
  gm = cnst(g, t.dt, rk, d, C_RAND);
  gr = binary(g, "mul", r, gm);
  xg = binary(g, "mul", v, gr);
  mg = binary(g, "mul", gr, m);
  bt = cnst(g, t.dt, rk, d, C_RAND);
  bm = binary(g, "sub", bt, mg);
  if (chance(g, 10)) extra_use(g, m);
  return chance(g, 50) ? binary(g, "add", bm, xg) : binary(g, "add", xg, bm);
}

/* relu(x) + alpha * relu(-x), alpha (C, 1, 1) or (1, C, 1, 1), each mul and add in either order */
static int t_fuse_prelu(G *g, int x) {
  int C = 1 + rnd(g, 3), v = image(g, x, C, 1, 1), m1, n, r1, a, am, r2, d[4];
  gv t = g->v[v];
  m1 = cnst_scalar(g, t.dt, chance(g, 90) ? -1.0 : -2.0);
  n = chance(g, 50) ? binary(g, "mul", v, m1) : binary(g, "mul", m1, v);
  r1 = unary(g, "relu", n);
  if (chance(g, 50)) d[0] = C, d[1] = 1, d[2] = 1, a = cnst(g, t.dt, 3, d, C_RAND);
  else d[0] = 1, d[1] = C, d[2] = 1, d[3] = 1, a = cnst(g, t.dt, 4, d, C_RAND);
  am = chance(g, 50) ? binary(g, "mul", r1, a) : binary(g, "mul", a, r1);
  r2 = unary(g, "relu", v);
  if (chance(g, 10)) extra_use(g, r1);
  return chance(g, 50) ? binary(g, "add", r2, am) : binary(g, "add", am, r2);
}

/* x[..., i:i+1] along one axis */
static int slice1(G *g, int v, int ax, int i) {
  gv t = g->v[v], r = t;
  int b[4], e[4], k, bi, ei, id;
  for (k = 0; k < 4; k++) b[k] = 0, e[k] = t.d[k];
  b[ax] = i, e[ax] = i + 1;
  if (i > 0 && chance(g, 30)) b[ax] = i - t.d[ax], e[ax] = i + 1 - t.d[ax]; /* negative bounds */
  if (e[ax] == 0) e[ax] = t.d[ax];
  bi = cnst_ints(g, 4, b);
  ei = cnst_ints(g, 4, e);
  r.d[ax] = 1;
  id = def(g, &r);
  out(g, " = slice_by_index(x=%%v%d, begin=%%v%d, end=%%v%d)\n", v, bi, ei);
  return id;
}

/* mirrored slices concatenated on both sides of one axis: a reflection padding */
static int t_reflect(G *g, int x) {
  int v = image(g, x, 1 + rnd(g, 2), 3, 3), ax = chance(g, 50) ? 3 : 2, n, p, i, parts[12], np = 0, id;
  gv t = g->v[v], r;
  n = t.d[ax];
  p = 1 + rnd(g, n - 1 < 3 ? n - 1 : 3);
  for (i = p; i >= 1; i--) parts[np++] = slice1(g, v, ax, chance(g, 95) ? i : i - 1);
  parts[np++] = v;
  for (i = 1; i <= p; i++) parts[np++] = slice1(g, v, ax, n - 1 - i);
  r = t;
  r.d[ax] = n + 2 * p;
  id = def(g, &r);
  out(g, " = concat(values=(");
  for (i = 0; i < np; i++) out(g, "%s%%v%d", i ? ", " : "", parts[i]);
  out(g, "), axis=%d)\n", chance(g, 50) ? ax : ax - 4);
  if (chance(g, 10)) extra_use(g, parts[0]);
  return id;
}

/* an output whose name is not an identifier (or is a reserved word) */
static int t_odd_name(G *g, int x) {
  int k = rnd(g, 5), y = unary(g, "relu", x);
  switch (k) {
  case 4: snprintf(g->raw_out, sizeof g->raw_out, "%%\"y_%d\"", y); break; /* quoted, but a plain identifier: kept */
  case 0: snprintf(g->raw_out, sizeof g->raw_out, "%%\"y/%d\"", y); break;
  case 1: snprintf(g->raw_out, sizeof g->raw_out, "%%\"%dout\"", y); break;
  case 2: snprintf(g->raw_out, sizeof g->raw_out, "%%fp16"); break;
  default: snprintf(g->raw_out, sizeof g->raw_out, "%%\"a.b%d\"", y); break;
  }
  indent(g);
  out(g, "%s: ", g->raw_out);
  ptype(g, &g->v[y]);
  out(g, " = tanh(x=%%v%d)\n", y);
  return y;
}

/* gather along an axis of size >= 4 with main's int32 input as indices (values -3..3), or constant indices */
static int t_gather(G *g, int x) {
  int v = image(g, x, 1 + rnd(g, 2), 4, 1), ax = chance(g, 50) ? 2 : 0, idx, id, i, k;
  gv t = g->v[v], it, r;
  if (ax == 0) { /* (H, W, C): transpose the image so axis 0 has the size */
    int p[4] = {2, 3, 1, 0};
    v = transpose(g, v, p);
    t = g->v[v];
  }
  if (g->int_arg >= 0 && chance(g, 80)) {
    idx = g->int_arg;
  } else {
    int vals[4];
    for (i = 0; i < 4; i++) vals[i] = rnd(g, 7) - 3;
    idx = cnst_ints(g, 1 + rnd(g, 4), vals);
  }
  it = g->v[idx];
  r = mk(t.dt, t.rank - 1 + it.rank, NULL);
  for (i = 0, k = 0; i < t.rank; i++) {
    int j;
    if (i == ax)
      for (j = 0; j < it.rank; j++) r.d[k] = it.d[j], r.sym[k] = it.sym[j], k++;
    else
      r.d[k] = t.d[i], r.sym[k] = t.sym[i], k++;
  }
  id = def(g, &r);
  out(g, " = gather(x=%%v%d, indices=%%v%d, axis=%d)\n", v, idx, chance(g, 50) ? ax : ax - t.rank);
  return id;
}

/* linear with a run-time weight (and a run-time, constant, zero or no bias), or a constant weight and a run-time bias */
static int t_dyn_linear(G *g, int x) {
  int M = 1 + rnd(g, 3), K = 1 + rnd(g, 4), N = 1 + rnd(g, 3), d[2], a, w, b = -1, id, kb = rnd(g, 4);
  gv r;
  d[0] = M, d[1] = K;
  a = dyn(g, x, 2, d);
  d[0] = N, d[1] = K;
  w = chance(g, 80) ? dyn(g, x, 2, d) : cnst(g, g->v[x].dt, 2, d, C_RAND);
  if (kb == 1) b = dyn(g, x, 1, d);
  if (kb == 2) b = cnst(g, g->v[x].dt, 1, d, chance(g, 50) ? C_ZERO : C_RAND);
  r = mk(g->v[x].dt, 2, NULL);
  r.d[0] = M, r.d[1] = N;
  id = def(g, &r);
  out(g, " = linear(x=%%v%d, weight=%%v%d", a, w);
  if (b >= 0) out(g, ", bias=%%v%d", b);
  out(g, ")\n");
  return id;
}

/* ---------------------------------------------------------------- quantized weights and activations */


/* a (M, K) fp32 activation that depends on x, finite (inf * a weight set to 0 would be NaN) */
static int act2(G *g, int x, int M, int K) {
  int d[2];
  d[0] = M, d[1] = K;
  return bounded(g, as_f32(g, x), 2, d);
}

/* linear of a (M, K) activation and weight w (N, K) fp32 */
static int linear_of(G *g, int a, int w) {
  gv r = g->v[a];
  int id;
  r.d[1] = g->v[w].d[0];
  id = def(g, &r);
  out(g, " = linear(x=%%v%d, weight=%%v%d)\n", a, w);
  return id;
}

/* a constant weight read by a linear (or a conv): what weight compression takes */
static int t_weights(G *g, int x) {
  /* more than 60 elements (the threshold check.c gives the compression passes), so the
     passes take this weight and few of the program's other constants */
  int K = 8 + rnd(g, 8), N = chance(g, 90) ? 8 + rnd(g, 8) : 1 + rnd(g, 7), d[4], w, y, i, v; /* N * K <= 60: kept */
  if (chance(g, 30)) {
    v = bounded_image(g, as_f32(g, x), 2 + rnd(g, 2), 2, 2);
    i = g->nv;
    y = conv_valid(g, v, 8 + rnd(g, 4), 2, chance(g, 50));
  } else {
    v = act2(g, x, 1 + rnd(g, 3), K);
    d[0] = N, d[1] = K;
    i = g->nv;
    w = cnst(g, F32, 2, d, chance(g, 15) ? C_SMALL01 : C_RAND);
    y = linear_of(g, v, w);
  }
  /* the weights are read by their op only: a random op dividing by a weight the
     pass may set to 0 (prune) would make a quotient the contract does not cover */
  for (; i < y; i++)
    if (g->v[i].isconst) g->v[i].vis = 0;
  return y;
}

/* a per-tensor or per-axis-0 scale (fp32) and zero point for (N, ...) data */
static void qparams(G *g, int N, int dt, int perchan, int *s, int *z, int zkind) {
  static const double sc[] = {0.5, 0.25, 2, 0.125, 0.375, 0.1};
  int d[1];
  d[0] = N;
  if (perchan) {
    gv t = mk(F32, 1, d);
    int i;
    *s = def(g, &t);
    g->v[*s].isconst = 1;
    out(g, "* = const(val=[");
    for (i = 0; i < N; i++) out(g, "%s%g", i ? ", " : "", sc[rnd(g, 6)]);
    out(g, "])\n");
  } else {
    *s = cnst_scalar(g, F32, sc[rnd(g, 6)]);
  }
  *z = -1;
  if (zkind >= 0) *z = perchan ? cnst(g, dt, 1, d, zkind) : cnst(g, dt, 0, d, zkind);
}

static int quantize(G *g, int f, int s, int z, int dt, int axis) {
  gv t = g->v[f];
  int id;
  t.dt = dt;
  id = def(g, &t);
  out(g, " = quantize(input=%%v%d, ", f);
  if (z >= 0) out(g, "zero_point=%%v%d, ", z);
  out(g, "scale=%%v%d, output_dtype=\"%s\"", s, dt_names[dt]);
  if (axis >= 0) out(g, ", axis=%d", axis);
  out(g, ")\n");
  return id;
}

static int dequantize(G *g, int q, int s, int z, int axis) {
  gv t = g->v[q];
  int id;
  t.dt = F32;
  id = def(g, &t);
  out(g, " = dequantize(input=%%v%d, ", q);
  if (z >= 0) out(g, "zero_point=%%v%d, ", z);
  out(g, "scale=%%v%d", s);
  if (axis >= 0) out(g, ", axis=%d", axis);
  out(g, ")\n");
  return id;
}

/* a run-time 8-bit (M, K) activation: the quantized form of a float that depends on x */
static int qact(G *g, int x, int M, int K, int dt, int *s, int *z) {
  int f = act2(g, x, M, K);
  qparams(g, M, dt, 0, s, z, chance(g, 50) ? C_RAND : -1);
  return quantize(g, f, *s, *z, dt, -1);
}

/* quantize -> dequantize -> quantize (the same parameters, or not) -> dequantize */
static int t_dq_q(G *g, int x) {
  int M = 1 + rnd(g, 3), K = 1 + rnd(g, 4), dt = chance(g, 50) ? I8 : U8, s, z, q, d, s2, z2, q2;
  q = qact(g, x, M, K, dt, &s, &z);
  d = dequantize(g, q, s, z, -1);
  if (chance(g, 80)) s2 = s, z2 = z;
  else qparams(g, M, dt, 0, &s2, &z2, z >= 0 ? C_RAND : -1);
  if (chance(g, 10)) extra_use(g, d);
  q2 = quantize(g, d, s2, z2, dt, -1);
  return dequantize(g, q2, s2, z2, -1);
}

/* quantize with a zero point of zeros (int8 -128 / uint8 128 some of the time) -> dequantize */
static int t_nullify_zp(G *g, int x) {
  int M = 1 + rnd(g, 3), K = 1 + rnd(g, 4), dt = chance(g, 50) ? I8 : U8, s, z, z2, f, q, pc = chance(g, 30), c = rnd(g, 3);
  f = act2(g, x, M, K);
  qparams(g, M, dt, pc, &s, &z, C_ZERO);
  if (c == 1) { /* the offset zero point of the other signedness */
    gv zt = g->v[z];
    zt.rank = pc ? 1 : 0;
    z = def(g, &zt);
    g->v[z].isconst = 1;
    out(g, "* = const(val=");
    if (pc) {
      int i;
      out(g, "[");
      for (i = 0; i < M; i++) out(g, "%s%d", i ? ", " : "", dt == I8 ? -128 : 128);
      out(g, "])\n");
    } else {
      out(g, "%d)\n", dt == I8 ? -128 : 128);
    }
  }
  z2 = chance(g, 90) ? z : cnst(g, dt, pc ? 1 : 0, &M, C_ONE);
  if (c == 2) { /* a constant input: the dequantize of stored integers */
    int d[2];
    d[0] = M, d[1] = K;
    q = cnst(g, dt, 2, d, C_RAND);
  } else {
    q = quantize(g, f, s, z, dt, pc ? 0 : -1);
  }
  if (chance(g, 10)) extra_use(g, dequantize(g, q, s, z, pc ? 0 : -1));
  return dequantize(g, q, s, z2, pc ? 0 : -1);
}

/* dequantize -> reshape -> quantize with the same parameters */
static int t_int_op(G *g, int x) {
  int M = 1 + rnd(g, 3), K = 1 + rnd(g, 4), dt = chance(g, 50) ? I8 : U8, s, z, q, d, r, q2, dims[2];
  q = qact(g, x, M, K, dt, &s, &z);
  d = dequantize(g, q, s, z, -1);
  dims[0] = K, dims[1] = M;
  r = chance(g, 50) ? reshape(g, d, 2, dims) : reshape(g, d, 1, (dims[0] = M * K, dims));
  if (chance(g, 10)) extra_use(g, r);
  q2 = quantize(g, r, s, z, dt, -1);
  want_out(g, q2);
  return x;
}

/* dequantize of a constant: a weight */
static int t_dq_const(G *g, int x) {
  int K = 1 + rnd(g, 5), N = 1 + rnd(g, 4), d[2], dt = chance(g, 70) ? I8 : U8, c, s, z, pc = chance(g, 40), w;
  d[0] = N, d[1] = K;
  if (chance(g, 85)) {
    c = cnst(g, dt, 2, d, C_RAND);
  } else { /* a run-time input: stays a dequantize */
    int zz;
    c = qact(g, x, N, K, dt, &s, &zz);
  }
  qparams(g, N, dt, pc, &s, &z, chance(g, 60) ? C_RAND : -1);
  w = dequantize(g, c, s, z, pc ? 0 : -1);
  if (chance(g, 10)) want_out(g, w);
  return linear_of(g, act2(g, x, 1 + rnd(g, 3), K), w);
}

/* add or sub of two dequantized values (an optional relu) quantized again */
static int t_distributive(G *g, int x) {
  int M = 1 + rnd(g, 3), K = 1 + rnd(g, 4), dx = chance(g, 50) ? I8 : U8, dy = chance(g, 50) ? I8 : U8, sx, zx, sy, zy, sz,
      zz, qx, qy, a, b, o, dz = chance(g, 50) ? I8 : U8;
  qx = qact(g, x, M, K, dx, &sx, &zx);
  qy = qact(g, x, M, K, dy, &sy, &zy);
  a = dequantize(g, qx, sx, zx, -1);
  b = dequantize(g, qy, sy, zy, -1);
  o = binary(g, chance(g, 75) ? "add" : chance(g, 70) ? "sub" : "mul", a, b);
  if (chance(g, 30)) o = unary(g, "relu", o);
  if (chance(g, 10)) extra_use(g, o);
  qparams(g, M, dz, 0, &sz, &zz, chance(g, 50) ? C_RAND : -1);
  o = quantize(g, o, sz, zz, dz, -1);
  /* the quantize must not be a block output: an op on the integers reads it (the compared output) */
  want_out(g, chance(g, 90) ? unary(g, "identity", o) : o);
  return x;
}

/* constexpr_lut_to_dense of an 8-bit palette -> constexpr_blockwise_shift_scale (or the other order) */
static int t_lut(G *g, int x) {
  int K = 1 + rnd(g, 4), N = 1 + rnd(g, 3), nb = 1 + rnd(g, 2), dt = chance(g, 60) ? I8 : U8, d[4], idx, lut, dd, s, o = -1,
      w;
  gv t;
  d[0] = N, d[1] = K;
  idx = cnst(g, nb == 1 ? U1 : U2, 2, d, C_RAND);
  d[0] = 1, d[1] = 1, d[2] = 1 << nb, d[3] = 1;
  lut = cnst(g, dt, 4, d, C_RAND);
  t = mk(dt, 2, NULL);
  t.d[0] = N, t.d[1] = K;
  dd = def(g, &t);
  out(g, " = constexpr_lut_to_dense(indices=%%v%d, lut=%%v%d)\n", idx, lut);
  if (chance(g, 70)) d[0] = 1, d[1] = 1;
  else d[0] = N, d[1] = 1;
  s = cnst(g, F32, 2, d, C_POS);
  if (chance(g, 50)) o = cnst(g, dt, 2, d, C_RAND);
  t.dt = F32;
  w = def(g, &t);
  out(g, " = constexpr_blockwise_shift_scale(data=%%v%d, scale=%%v%d", dd, s);
  if (o >= 0) out(g, ", offset=%%v%d", o);
  out(g, ")\n");
  if (chance(g, 10)) want_out(g, dd);
  return linear_of(g, act2(g, x, 1 + rnd(g, 2), K), w);
}

/* a weight stored compressed: affine dequantize, sparse mask, lookup table, shift and scale */
static int t_constexpr(G *g, int x) {
  int K = 1 + rnd(g, 5), N = 1 + rnd(g, 4), d[4], w, c = rnd(g, 4);
  gv t = mk(F32, 2, NULL);
  t.d[0] = N, t.d[1] = K;
  d[0] = N, d[1] = K;
  if (c == 0) {
    int q = cnst(g, I8, 2, d, C_RAND), s, z;
    qparams(g, N, I8, chance(g, 40), &s, &z, C_RAND);
    w = def(g, &t);
    out(g, " = constexpr_affine_dequantize(quantized_data=%%v%d, zero_point=%%v%d, scale=%%v%d, axis=0)\n", q, z, s);
  } else if (c == 1) {
    int m = cnst(g, U1, 2, d, C_RAND), nz, i, j, cnt = 0;
    /* count the mask's ones from its text: the last const line written */
    const char *l = g->o->data + g->o->len;
    while (l > g->o->data && l[-1] != '=') l--;
    for (; *l; l++)
      if (*l == '1' && (l[-1] == '[' || l[-1] == ' ')) cnt++;
    (void)i, (void)j;
    d[0] = cnt ? cnt : 1;
    if (!cnt) return x;
    nz = cnst(g, F32, 1, d, C_RAND);
    w = def(g, &t);
    out(g, " = constexpr_sparse_to_dense(nonzero_data=%%v%d, mask=%%v%d)\n", nz, m);
  } else if (c == 2) {
    int idx = cnst(g, U2, 2, d, C_RAND), lut;
    d[0] = 1, d[1] = 1, d[2] = 4, d[3] = 1;
    lut = cnst(g, F32, 4, d, C_RAND);
    w = def(g, &t);
    out(g, " = constexpr_lut_to_dense(indices=%%v%d, lut=%%v%d)\n", idx, lut);
  } else {
    int q = cnst(g, I8, 2, d, C_RAND), s;
    d[1] = 1;
    s = cnst(g, F32, 2, d, C_POS);
    w = def(g, &t);
    out(g, " = constexpr_blockwise_shift_scale(data=%%v%d, scale=%%v%d)\n", q, s);
  }
  if (chance(g, 10)) want_out(g, w);
  return linear_of(g, act2(g, x, 1 + rnd(g, 2), K), w);
}

/* a 2-d matmul by a dequantized weight (K, N), or (N, K) with transpose_y,
   per-tensor or per-channel on either axis, then add / sub of a bias [N] or
   [1, N] (fuse_matmul_dequantized_weight_bias) */
static int t_matmul_dq_bias(G *g, int x) {
  int K = 1 + rnd(g, 5), N = 1 + rnd(g, 4), M = 1 + rnd(g, 3), ty = chance(g, 30), ax = rnd(g, 2), d[2], q, s, z, w, a, m, b;
  gv t = mk(F32, 2, NULL), r = mk(F32, 2, NULL);
  a = act2(g, x, M, K);
  d[0] = ty ? N : K;
  d[1] = ty ? K : N;
  q = cnst(g, I8, 2, d, C_RAND);
  qparams(g, d[ax], I8, chance(g, 50), &s, &z, C_RAND);
  t.d[0] = d[0], t.d[1] = d[1];
  w = def(g, &t);
  out(g, " = constexpr_affine_dequantize(quantized_data=%%v%d, zero_point=%%v%d, scale=%%v%d, axis=%d)\n", q, z, s, ax);
  if (chance(g, 10)) extra_use(g, w);
  r.d[0] = M, r.d[1] = N;
  m = def(g, &r);
  out(g, " = matmul(x=%%v%d, y=%%v%d, transpose_y=%s)\n", a, w, ty ? "true" : "false");
  if (chance(g, 50)) d[0] = N, b = cnst(g, F32, 1, d, C_RAND);
  else d[0] = 1, d[1] = N, b = cnst(g, F32, 2, d, C_RAND);
  if (chance(g, 20)) return binary(g, "sub", m, b);
  return chance(g, 50) ? binary(g, "add", m, b) : binary(g, "add", b, m);
}

/* constexpr_affine_dequantize -> transpose / reshape / expand_dims / squeeze */
static int t_affine_chain(G *g, int x) {
  int A = 1 + rnd(g, 3), B = 1 + rnd(g, 3), d[3], q, s, z, pc = chance(g, 40), w, n = 1 + rnd(g, 2), i;
  gv t = mk(F32, 2, NULL);
  d[0] = A, d[1] = B;
  q = cnst(g, I8, 2, d, C_RAND);
  qparams(g, A, I8, pc, &s, &z, C_RAND);
  t.d[0] = A, t.d[1] = B;
  w = def(g, &t);
  out(g, " = constexpr_affine_dequantize(quantized_data=%%v%d, zero_point=%%v%d, scale=%%v%d, axis=0)\n", q, z, s);
  for (i = 0; i < n; i++) {
    int c = rnd(g, 4), rk = g->v[w].rank;
    if (c == 0 && rk >= 2) {
      int p[MAXR];
      perm_rand(g, rk, p);
      w = transpose(g, w, p);
    } else if (c == 1 && rk < 4) {
      w = expand_dims(g, w, rnd(g, rk + 1));
    } else if (c == 2) {
      int k;
      for (k = 0; k < rk; k++)
        if (g->v[w].d[k] == 1 && rk > 1) break;
      w = k < rk ? squeeze(g, w, k) : expand_dims(g, w, 0);
    } else {
      int dd[MAXR], r;
      reshape_dims(g, &g->v[w], &r, dd);
      if (r < 1) dd[0] = 1, r = 1;
      w = reshape(g, w, r, dd);
    }
  }
  if (chance(g, 10)) want_out(g, w);
  {
    int all[MAXR], r;
    for (i = 0; i < g->v[w].rank; i++) all[i] = i;
    r = reduce(g, "reduce_sum", w, g->v[w].rank, all, 0);
    if (g->v[x].dt != F32) r = cast(g, r, g->v[x].dt);
    return binary(g, "mul", x, r);
  }
}

/* identity into an output */
static int t_out_identity(G *g, int x) {
  int y = unary(g, "identity", unary(g, unops[rnd(g, 4)], x));
  want_out(g, y);
  return chance(g, 70) ? y : x;
}


typedef struct tmpl {
  const char *pass;
  tmpl_fn fn;
  int extra;
} tmpl;

static const tmpl templates[] = {
    {"merge_consecutive_relus", t_relus, 0},
    {"noop_elimination", t_noop, 0},
    {"divide_to_multiply", t_div, 0},
    {"merge_consecutive_transposes", t_transposes, 0},
    {"remove_redundant_transpose_pairs", t_inverse_transposes, 0},
    {"reduce_transposes", t_inverse_transposes, 0},
    {"merge_consecutive_reshapes", t_reshapes, 0},
    {"remove_redundant_reshape_pairs", t_reshapes, 0},
    {"remove_symbolic_reshape", t_shape_reshape, 0},
    {"merge_consecutive_expand_dims", t_expand_dims_chain, 0},
    {"fuse_squeeze_expand_dims", t_squeeze_expand, 0},
    {"rank0_expand_dims_swap", t_rank0, 0},
    {"remove_redundant_ops", t_redundant, 0},
    {"const_elimination", t_consts, 0},
    {"const_deduplication", t_bigconst, 0},
    {"dead_code_elimination", t_dead, 0},
    {"cast_optimization", t_casts, 0},
    {"fuse_leaky_relu", t_leaky, 0},
    {"fuse_gelu_exact", t_gelu_exact, 0},
    {"fuse_gelu_tanh_approximation", t_gelu_tanh, 0},
    {"fuse_gelu_sigmoid_approximation", t_gelu_sigmoid, 0},
    {"fuse_reduce_mean", t_reduce_mean, 0},
    {"fuse_matmul_weight_bias", t_matmul_bias, 0},
    {"fuse_matmul_dequantized_weight_bias", t_matmul_dq_bias, 0},
    {"fuse_linear_bias", t_linear_bias, 0},
    {"fuse_transpose_matmul", t_transpose_matmul, 0},
    {"select_optimization", t_select, 0},
    {"rewrite_mul_rsqrt_as_div", t_mul_rsqrt, 0},
    {"fuse_elementwise_to_batchnorm", t_batchnorm, 0},
    {"remove_redundant_transpose_reduce", t_transpose_reduce, 0},
    {"prelu_to_lrelu", t_prelu, 0},
    {"loop_invariant_elimination", t_loop_invariant, 0},
    {"detect_concat_interleave", t_concat_interleave, 0},
    {"replace_stack_reshape", t_stack_reshape, 0},
    {"inline_dropout_training_mode_constants", t_dropout, 0},
    {"fold_shape_ops", t_shape_ops, 0},
    {"fold_shape_chains", t_shape_ops, 0},
    {"resolve_reshape_shape", t_shape_reshape, 0},
    {"canonicalize_opaque_ops", t_opaque, 0},
    {"canonicalize_inplace_pattern", t_state, X_STATE},
    {"prefer_state_in_downstream", t_state, X_STATE},
    {"fuse_onehot_matmul_to_gather", t_onehot, X_INT},
    {"name_fix", t_names, 0},
    {"expand_high_rank_reshape_and_transpose", t_high_rank, 0},
    {"add_conv_transpose_output_shape", t_conv_transpose, 0},
    {"propagate_shapes", t_unknown_types, 0},
    {"merge_consecutive_paddings", t_pads, 0},
    {"remove_redundant_transpose_add_forests", t_forest, 0},
    {"add_int16_cast", t_int16, 0},
    {"dedup_op_and_var_names", t_dup_names, 0},
    {"fuse_stack_split", t_stack_split, 0},
    {"concat_to_pixel_shuffle", t_pixel_shuffle, 0},
    {"fuse_dilated_conv", t_dilated, 0},
    {"simplify_inference", t_norms, 0},
    {"canonicalize_cast", t_shared_upcast, 0},
    {"peephole_add_add", t_add_chain, 0},
    {"peephole_dense_to_conv", t_linear_bias, 0},
    {"eliminate_common_subexpr", t_redundant, 0},
    {"peephole_conv_add_mul", t_conv_add_mul, 0},
    {"peephole_concat_add_pad", t_concat_add, 0},
    {"concat_to_pad", t_concat_pad, 0},
    {"fold_scale_axis", t_fold_scale, 0},
    {"combine_parallel_conv2d", t_parallel_conv, 0},
    {"combine_parallel_dense", t_parallel_dense, 0},
    {"fuse_activation", t_fused_act, 0},
    {"legalize", t_legalize, 0},
    {"canonicalize_op", t_bias_add, 0},
    {"inline_functions", t_functions, 0},
    {"fuse_composite_functions", t_composite, 0},
    {"convert_layout", t_layout, 0},
    {"canonicalize_concat_pos", t_concat_pos, 0},
    {"fuse_conv_batchnorm", t_conv_bn, 0},
    {"fuse_conv_bias", t_conv_bias, 0},
    {"fuse_conv_scale", t_conv_scale, 0},
    {"fuse_pad_conv", t_pad_conv, 0},
    {"compose_conv1d", t_conv1d, 0},
    {"fuse_layernorm_or_instancenorm", t_layernorm, 0},
    {"fuse_prelu", t_fuse_prelu, 0},
    {"use_reflection_padding", t_reflect, 0},
    {"sanitize_input_output_names", t_odd_name, 0},
    {"guard_negative_gather_indices", t_gather, X_INT},
    {"expand_dynamic_linear", t_dyn_linear, 0},
    {"merge_affine_dequantize_with_consecutive_ops", t_affine_chain, 0},
    {"eliminate_output_identity", t_out_identity, 0},
    {"linear_quantize_weights", t_weights, 0},
    {"palettize_weights", t_weights, 0},
    {"prune_weights", t_weights, 0},
    {"fp16_weights", t_weights, 0},
    {"decompress_weights", t_constexpr, 0},
    {"dequantize_quantize_pair_elimination", t_dq_q, 0},
    {"nullify_redundant_quantization_zero_point", t_nullify_zp, 0},
    {"int_op_canonicalization", t_int_op, 0},
    {"dequantize_to_constexpr", t_dq_const, 0},
    {"distributive_quantized_binary_op_scale_normalization", t_distributive, 0},
    {"canonicalize_quantized_lut_pattern", t_lut, 0},
};

static const tmpl *find_tmpl(const char *pass) {
  size_t i;
  if (!pass) return NULL;
  if (!strncmp(pass, "common::", 8)) pass += 8;
  if (!strncmp(pass, "onnx::", 6)) pass += 6;
  if (!strncmp(pass, "relay::", 7)) pass += 7;
  if (!strncmp(pass, "tflite::", 8)) pass += 8;
  for (i = 0; i < sizeof templates / sizeof *templates; i++)
    if (!strcmp(templates[i].pass, pass)) return &templates[i];
  return NULL;
}

int dt_has_template(const char *pass) { return find_tmpl(pass) != NULL; }

const char *dt_template_pass(int i) {
  return i >= 0 && (size_t)i < sizeof templates / sizeof *templates ? templates[i].pass : NULL;
}

/* ---------------------------------------------------------------- programs */

static int generate(G *g, const char *pass, int smooth, dt_text *o) {
  const tmpl *tp = find_tmpl(pass);
  int nin, i, k, used = 0, last, nfo;
  g->o = o;
  g->smooth = smooth;
  g->symsz[0] = 1 + rnd(g, 4);
  g->symsz[1] = 2 + rnd(g, 3);
  out(g, "# DIMS s0=%d s1=%d\n", g->symsz[0], g->symsz[1]);
  out(g, "main(");
  nin = 1 + rnd(g, 3);
  {
    int rank0 = rnd(g, 4) + (chance(g, 80) ? 1 : 0), dt0 = chance(g, 85) ? F32 : F16, base[MAXR];
    int sym0 = chance(g, 30);
    for (k = 0; k < MAXR; k++) base[k] = 1 + rnd(g, 3);
    for (i = 0; i < nin; i++) {
      gv t = mk(dt0, rank0, base);
      if (i > 0) {
        /* a broadcast partner: a suffix, some dims 1 */
        int r = rnd(g, rank0 + 1);
        t = mk(dt0, r, NULL);
        for (k = 0; k < r; k++) t.d[k] = chance(g, 30) ? 1 : base[rank0 - r + k];
      }
      if (sym0 && t.rank > 0 && (i == 0 || t.d[0] == base[rank0 - t.rank])) {
        int k0 = 0;
        if (i == 0 || rank0 - t.rank == 0) {
          t.sym[k0] = 0;
          t.d[k0] = g->symsz[0];
        }
      }
      if (i == 0 && sym0 && t.rank > 0) base[0] = g->symsz[0];
      g->v[g->nv] = t;
      g->v[g->nv].vis = 1;
      out(g, "%s%%v%d: ", i ? ", " : "", g->nv);
      ptype(g, &t);
      g->nv++;
    }
  }
  g->state_arg = g->int_arg = -1;
  if (tp && (tp->extra & X_STATE)) {
    g->state_arg = g->nv;
    g->v[g->nv] = g->v[0];
    g->v[g->nv].vis = 0; /* read through read_state only */
    out(g, ", %%v%d: state", g->nv);
    ptype(g, &g->v[g->nv]);
    g->nv++, nin++;
  }
  if (tp && (tp->extra & X_INT)) {
    int d[2];
    d[0] = 1 + rnd(g, 3), d[1] = 1 + rnd(g, 3);
    g->int_arg = g->nv;
    g->v[g->nv] = mk(I32, 1 + rnd(g, 2), d);
    out(g, ", %%v%d: ", g->nv);
    ptype(g, &g->v[g->nv]);
    g->nv++, nin++;
  }
  out(g, ") {\n");
  g->ind = 1;
  random_ops(g, rnd(g, 4), 0);
  if (tp) {
    int x = pick(g, -2);
    int r = tp->fn(g, x);
    used = 1;
    if (r >= 0) want_out(g, r);
    random_ops(g, rnd(g, 3), 0);
  } else {
    random_ops(g, 3 + rnd(g, 8), 0);
  }
  /* uses: every %vN right of a '=' or in a block's "-> (...)" */
  {
    const char *q = o->data;
    while (q && (q = strchr(q, '\n')) != NULL) {
      const char *eol, *r;
      q++;
      eol = strchr(q, '\n');
      if (!eol) break;
      r = strstr(q, " = ");
      if (!r || r > eol) r = strstr(q, "-> (");
      if (!r || r > eol) continue;
      for (; r < eol; r++)
        if (r[0] == '%' && r[1] == 'v') {
          int k2 = atoi(r + 2);
          if (k2 >= 0 && k2 < g->nv) g->v[k2].used = 1;
        }
    }
  }
  last = g->nv - 1;
  while (last >= 0 && (!g->v[last].vis || g->v[last].isconst)) last--;
  out(g, "} -> (");
  nfo = 0;
  if (last >= 0) {
    out(g, "%%v%d", last);
    nfo++;
  }
  for (i = 0; i < g->nouts; i++)
    if (g->outs[i] >= 0 && g->outs[i] != last && g->v[g->outs[i]].vis) out(g, "%s%%v%d", nfo++ ? ", " : "", g->outs[i]);
  for (i = 0; i < g->nv && nfo < 6; i++)
    if (g->v[i].vis && !g->v[i].used && !g->v[i].isconst && i != last && i >= nin && chance(g, 80))
      out(g, "%s%%v%d", nfo++ ? ", " : "", i);
  if (chance(g, 20)) {
    int extra = pick(g, -1);
    if (extra >= 0 && extra != last) out(g, "%s%%v%d", nfo++ ? ", " : "", extra);
  }
  if (g->raw_out[0]) out(g, "%s%s", nfo++ ? ", " : "", g->raw_out);
  if (!nfo) out(g, "%%v0");
  out(g, ")\n");
  if (g->fns.len) out(g, "%s", g->fns.data);
  dt_text_free(&g->fns);
  i = g->oom;
  free(g);
  return i ? -1 : used;
}

int dt_generate(uint64_t seed, const char *pass, int smooth, dt_text *o) {
  G *g = (G *)calloc(1, sizeof(G));
  if (!g) return -1;
  g->s = seed * 0x2545F4914F6CDD1Dull + 0x1234567ull;
  return generate(g, pass, smooth, o);
}

int dt_generate_bytes(const uint8_t *data, size_t n, const char *pass, int smooth, dt_text *o) {
  G *g = (G *)calloc(1, sizeof(G));
  uint64_t h = 0xCBF29CE484222325ull; /* FNV-1a of the bytes seeds the choices past their end */
  size_t i;
  if (!g) return -1;
  for (i = 0; i < n; i++) h = (h ^ data[i]) * 0x100000001B3ull;
  g->s = h;
  g->in = data;
  g->nin = n;
  return generate(g, pass, smooth, o);
}
