/* tests/bench/bench_passes.c — every registered pass, alone, on synthetic programs of two sizes.

   usage: bench_passes [N1 N2 [FILTER]]   (default: 2000 20000 motifs of ~103 ops; FILTER:
                                          only passes whose name contains it)

   The program repeats a motif in which most passes find work: transposes
   that cancel or swap matmul operands, reshape and relu chains, cast chains,
   division by a constant, equal constants, a dead op, an unused function
   input per motif, a select with a constant condition, a quantized weight
   behind a transpose, and the fusion patterns (gelu, leaky relu, matmul
   with a bias, a mean as a scaled sum, conv with batch_norm, a channel-last
   region between convs, a relu after a concat of convs), and the relay and
   tflite patterns (a shared up-cast, (x + c) + c', small dense layers with
   a relu or a per-channel scale after them, three linears and three convs
   of one input, conv -> add -> mul, a concat of two plus a tensor, a
   bias_add, a call of a function implementing embedding_lookup).
   relay::print_ir writes to /dev/null. For each pass it parses the program
   afresh, runs the pass alone (verification off), and prints the CPU time
   per op at both sizes (best of 3) and their ratio: a pass that is linear
   in the program's size keeps the ratio near 1, a quadratic one shows a
   ratio near N2 / N1.
   Then combine_parallel_conv2d / _dense on one input read by N1 / 10 and
   N2 / 10 convs (linear ops) that stay below min_num_branches.
   A measurement, never a test: run it with `make bench-passes`. */
#define _POSIX_C_SOURCE 199309L
#define MGOPT_IMPLEMENTATION
#include "bench.h"
#include "mgopt.h"
#include "mgopt_passes.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <time.h>

/* The process's CPU time: on a machine shared with other work, wall time
   measures the neighbours; the work of a pass is its CPU time (page faults
   included). */
typedef struct text {
  char *s;
  size_t n, cap;
} text;

static void put(text *t, const char *fmt, ...) {
  va_list ap;
  int k;
  for (;;) {
    size_t room = t->cap - t->n;
    va_start(ap, fmt);
    k = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? room : 0, fmt, ap);
    va_end(ap);
    if (k < 0) exit(1);
    if ((size_t)k < room && t->s) {
      t->n += (size_t)k;
      return;
    }
    t->cap = t->cap ? t->cap * 2 : 1 << 16;
    while (t->cap - t->n <= (size_t)k) t->cap *= 2;
    t->s = (char *)realloc(t->s, t->cap);
    if (!t->s) exit(1);
  }
}

/* The program with n motifs, chained through %p<i>. */
static char *make_program(long n, size_t *len) {
  text t;
  long i;
  memset(&t, 0, sizeof t);
  put(&t, "\"b::lookup\" attributes(implements=\"embedding_lookup\") (%%w: (4, 4, fp32), %%ids: (4, int32)) {\n");
  put(&t, "  %%oh: (4, 4, fp32) = one_hot(indices=%%ids, one_hot_vector_size=4, axis=-1, on_value=1.0, off_value=0.0)\n");
  put(&t, "  %%r: (4, 4, fp32) = matmul(x=%%oh, y=%%w)\n");
  put(&t, "} -> (%%r)\n");
  put(&t, "main(%%x: (4, 4, fp32)");
  for (i = 0; i < n; i++) put(&t, ", %%in%ld: (4, 4, fp32)", i);
  put(&t, ") {\n");
  put(&t, "  %%p0: (4, 4, fp32) = identity(x=%%x)\n");
  for (i = 0; i < n; i++) {
    put(&t, "  %%c%ld: (4, 4, fp32)* = const(val=[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, %ld]])\n",
        i, i % 7);
    put(&t, "  %%cc%ld: (4, 4, fp32)* = const(val=[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, %ld]])\n",
        i, i % 7);
    put(&t, "  %%two%ld: (fp32)* = const(val=2)\n", i);
    put(&t, "  %%flat%ld: (1, int32)* = const(val=[16])\n", i);
    put(&t, "  %%sq%ld: (2, int32)* = const(val=[4, 4])\n", i);
    put(&t, "  %%t%ld: (4, 4, fp32) = transpose(x=%%p%ld, perm=[1, 0])\n", i, i);
    put(&t, "  %%u%ld: (4, 4, fp32) = transpose(x=%%t%ld, perm=[1, 0])\n", i, i);
    put(&t, "  %%r%ld: (4, 4, fp32) = relu(x=%%u%ld)\n", i, i);
    put(&t, "  %%rr%ld: (4, 4, fp32) = relu(x=%%r%ld)\n", i, i);
    put(&t, "  %%k%ld: (4, 4, fp16) = cast(x=%%rr%ld, dtype=\"fp16\")\n", i, i);
    put(&t, "  %%kk%ld: (4, 4, fp32) = cast(x=%%k%ld, dtype=\"fp32\")\n", i, i);
    put(&t, "  %%d%ld: (4, 4, fp32) = real_div(x=%%kk%ld, y=%%two%ld)\n", i, i, i);
    put(&t, "  %%ct%ld: (4, 4, fp32) = transpose(x=%%c%ld, perm=[1, 0])\n", i, i);
    put(&t, "  %%w%ld: (4, 4, fp32) = transpose(x=%%in%ld, perm=[1, 0])\n", i, i % 3 == 0 ? i : 0);
    put(&t, "  %%m%ld: (4, 4, fp32) = matmul(x=%%d%ld, y=%%w%ld, transpose_x=false, transpose_y=false)\n", i, i, i);
    put(&t, "  %%s%ld: (16, fp32) = reshape(x=%%m%ld, shape=%%flat%ld)\n", i, i, i);
    put(&t, "  %%s2%ld: (4, 4, fp32) = reshape(x=%%s%ld, shape=%%sq%ld)\n", i, i, i);
    put(&t, "  %%a%ld: (4, 4, fp32) = add(x=%%s2%ld, y=%%ct%ld)\n", i, i, i);
    put(&t, "  %%b%ld: (4, 4, fp32) = add(x=%%a%ld, y=%%cc%ld)\n", i, i, i);
    put(&t, "  %%dead%ld: (4, 4, fp32) = sigmoid(x=%%b%ld)\n", i, i);
    put(&t, "  %%e%ld: (1, 4, 4, fp32) = expand_dims(x=%%b%ld, axes=[0])\n", i, i);
    put(&t, "  %%q%ld: (4, 4, fp32) = squeeze(x=%%e%ld, axes=[0])\n", i, i);
    put(&t, "  %%qd%ld: (4, 4, int8)* = const(val=[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]])\n", i);
    put(&t, "  %%qs%ld: (fp32)* = const(val=0.5)\n", i);
    put(&t, "  %%qz%ld: (int8)* = const(val=0)\n", i);
    put(&t, "  %%qw%ld: (4, 4, fp32) = constexpr_affine_dequantize(quantized_data=%%qd%ld, zero_point=%%qz%ld, "
            "scale=%%qs%ld, axis=0)\n", i, i, i, i);
    put(&t, "  %%qt%ld: (4, 4, fp32) = transpose(x=%%qw%ld, perm=[1, 0])\n", i, i);
    /* fusion patterns: gelu (erf form), leaky relu, matmul + bias, a mean
       written as sum times 1/n, conv + batch_norm */
    put(&t, "  %%gs%ld: (fp32)* = const(val=1.4142135)\n", i);
    put(&t, "  %%g1%ld: (fp32)* = const(val=1)\n", i);
    put(&t, "  %%gh%ld: (fp32)* = const(val=0.5)\n", i);
    put(&t, "  %%gd%ld: (4, 4, fp32) = real_div(x=%%q%ld, y=%%gs%ld)\n", i, i, i);
    put(&t, "  %%ge%ld: (4, 4, fp32) = erf(x=%%gd%ld)\n", i, i);
    put(&t, "  %%ga%ld: (4, 4, fp32) = add(x=%%ge%ld, y=%%g1%ld)\n", i, i, i);
    put(&t, "  %%gm%ld: (4, 4, fp32) = mul(x=%%q%ld, y=%%ga%ld)\n", i, i, i);
    put(&t, "  %%gg%ld: (4, 4, fp32) = mul(x=%%gm%ld, y=%%gh%ld)\n", i, i, i);
    put(&t, "  %%la%ld: (fp32)* = const(val=0.125)\n", i);
    put(&t, "  %%lm%ld: (4, 4, fp32) = mul(x=%%gg%ld, y=%%la%ld)\n", i, i, i);
    put(&t, "  %%lr%ld: (4, 4, fp32) = maximum(x=%%gg%ld, y=%%lm%ld)\n", i, i, i);
    put(&t, "  %%mw%ld: (4, 4, fp32)* = const(val=[[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, %ld]])\n", i,
        i % 5);
    put(&t, "  %%mc%ld: (4, fp32)* = const(val=[1, 2, 3, 4])\n", i);
    put(&t, "  %%mm%ld: (4, 4, fp32) = matmul(x=%%lr%ld, y=%%mw%ld, transpose_x=false, transpose_y=false)\n", i, i, i);
    put(&t, "  %%mb%ld: (4, 4, fp32) = add(x=%%mm%ld, y=%%mc%ld)\n", i, i, i);
    put(&t, "  %%rq%ld: (fp32)* = const(val=0.25)\n", i);
    put(&t, "  %%rs%ld: (4, 1, fp32) = reduce_sum(x=%%mb%ld, axes=[1], keep_dims=true)\n", i, i);
    put(&t, "  %%rm%ld: (4, 1, fp32) = mul(x=%%rs%ld, y=%%rq%ld)\n", i, i, i);
    put(&t, "  %%ra%ld: (4, 4, fp32) = sub(x=%%mb%ld, y=%%rm%ld)\n", i, i, i);
    put(&t, "  %%x4%ld: (4, int32)* = const(val=[1, 4, 2, 2])\n", i);
    put(&t, "  %%xr%ld: (1, 4, 2, 2, fp32) = reshape(x=%%ra%ld, shape=%%x4%ld)\n", i, i, i);
    put(&t, "  %%cw%ld: (4, 4, 1, 1, fp32)* = const(val=[[[[1]], [[0]], [[0]], [[0]]], [[[0]], [[1]], [[0]], [[0]]], "
            "[[[0]], [[0]], [[1]], [[0]]], [[[0]], [[0]], [[0]], [[%ld]]]])\n", i, i % 3 + 1);
    put(&t, "  %%cv%ld: (1, 4, 2, 2, fp32) = conv(x=%%xr%ld, weight=%%cw%ld, strides=[1, 1], pad_type=\"valid\", "
            "dilations=[1, 1], groups=1)\n", i, i, i);
    put(&t, "  %%bm%ld: (4, fp32)* = const(val=[0.1, 0.2, 0.3, 0.4])\n", i);
    put(&t, "  %%bv%ld: (4, fp32)* = const(val=[1, 0.5, 2, 0.25])\n", i);
    put(&t, "  %%bn%ld: (1, 4, 2, 2, fp32) = batch_norm(x=%%cv%ld, mean=%%bm%ld, variance=%%bv%ld, epsilon=1e-05)\n", i, i,
        i, i);
    /* a channel-last region (transposes around an add) and a relu after a concat of convs */
    put(&t, "  %%lt%ld: (1, 2, 2, 4, fp32) = transpose(x=%%bn%ld, perm=[0, 2, 3, 1])\n", i, i);
    put(&t, "  %%lb%ld: (4, fp32)* = const(val=[1, -1, 2, -2])\n", i);
    put(&t, "  %%la%ld: (1, 2, 2, 4, fp32) = add(x=%%lt%ld, y=%%lb%ld)\n", i, i, i);
    put(&t, "  %%lu%ld: (1, 4, 2, 2, fp32) = transpose(x=%%la%ld, perm=[0, 3, 1, 2])\n", i, i);
    put(&t, "  %%lw%ld: (2, 4, 1, 1, fp32)* = const(val=[[[[1]], [[0]], [[0]], [[1]]], [[[0]], [[1]], [[1]], [[0]]]])\n", i);
    put(&t, "  %%l1%ld: (1, 2, 2, 2, fp32) = conv(x=%%lu%ld, weight=%%lw%ld)\n", i, i, i);
    put(&t, "  %%l2%ld: (1, 2, 2, 2, fp32) = conv(x=%%lu%ld, weight=%%lw%ld)\n", i, i, i);
    put(&t, "  %%lk%ld: (1, 4, 2, 2, fp32) = concat(values=(%%l1%ld, %%l2%ld), axis=1)\n", i, i, i);
    put(&t, "  %%lq%ld: (1, 4, 2, 2, fp32) = relu(x=%%lk%ld)\n", i, i);
    put(&t, "  %%f%ld: (4, 4, fp32) = reshape(x=%%lq%ld, shape=%%sq%ld)\n", i, i, i);
    /* the relay and tflite patterns: an up-cast read twice, (x + c) + c', a
       small dense layer and a relu after it, a per-channel scale after a
       dense layer, conv -> add -> mul per channel, a concat of two plus a
       tensor, a bias_add, and a call of a function implementing
       embedding_lookup */
    put(&t, "  %%zh%ld: (4, 4, fp16) = cast(x=%%f%ld, dtype=\"fp16\")\n", i, i);
    put(&t, "  %%zc%ld: (4, 4, fp32) = cast(x=%%zh%ld, dtype=\"fp32\")\n", i, i);
    put(&t, "  %%za%ld: (4, 4, fp32) = relu(x=%%zc%ld)\n", i, i);
    put(&t, "  %%zb%ld: (4, 4, fp32) = sigmoid(x=%%zc%ld)\n", i, i);
    put(&t, "  %%zk%ld: (4, fp32)* = const(val=[0.5, 0.5, 0.5, %ld])\n", i, i % 3);
    put(&t, "  %%zp%ld: (4, 4, fp32) = add(x=%%za%ld, y=%%mc%ld)\n", i, i, i);
    put(&t, "  %%zq%ld: (4, 4, fp32) = add(x=%%zp%ld, y=%%zk%ld)\n", i, i, i);
    put(&t, "  %%zw%ld: (4, 4, fp32)* = const(val=[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, %ld]])\n", i,
        i % 4 + 1);
    put(&t, "  %%zl%ld: (4, 4, fp32) = linear(x=%%zq%ld, weight=%%zw%ld, bias=%%mc%ld)\n", i, i, i, i);
    put(&t, "  %%zr%ld: (4, 4, fp32) = relu(x=%%zl%ld)\n", i, i);
    put(&t, "  %%zv%ld: (4, 4, fp32)* = const(val=[[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, %ld]])\n", i,
        i % 2);
    put(&t, "  %%zn%ld: (4, 4, fp32) = linear(x=%%zb%ld, weight=%%zv%ld)\n", i, i, i);
    put(&t, "  %%zs%ld: (4, fp32)* = const(val=[1, 2, 0.5, 0.25])\n", i);
    put(&t, "  %%zm%ld: (4, 4, fp32) = mul(x=%%zn%ld, y=%%zs%ld)\n", i, i, i);
    put(&t, "  %%zx%ld: (4, 4, fp32) = add(x=%%zr%ld, y=%%zm%ld)\n", i, i, i);
    put(&t, "  %%zn2%ld: (4, 4, fp32) = linear(x=%%zb%ld, weight=%%zw%ld)\n", i, i, i);
    put(&t, "  %%zn3%ld: (4, 4, fp32) = linear(x=%%zb%ld, weight=%%mw%ld)\n", i, i, i);
    put(&t, "  %%zx2%ld: (4, 4, fp32) = add(x=%%zx%ld, y=%%zn2%ld)\n", i, i, i);
    put(&t, "  %%zx3%ld: (4, 4, fp32) = add(x=%%zx2%ld, y=%%zn3%ld)\n", i, i, i);
    put(&t, "  %%zy%ld: (1, 4, 2, 2, fp32) = reshape(x=%%zx3%ld, shape=%%x4%ld)\n", i, i, i);
    put(&t, "  %%zo2%ld: (1, 4, 2, 2, fp32) = conv(x=%%zy%ld, weight=%%cw%ld)\n", i, i, i);
    put(&t, "  %%zo3%ld: (1, 2, 2, 2, fp32) = conv(x=%%zy%ld, weight=%%lw%ld)\n", i, i, i);
    put(&t, "  %%zo%ld: (1, 4, 2, 2, fp32) = conv(x=%%zy%ld, weight=%%cw%ld)\n", i, i, i);
    put(&t, "  %%zca%ld: (1, 4, 1, 1, fp32)* = const(val=[[[[1]], [[2]], [[3]], [[%ld]]]])\n", i, i % 5);
    put(&t, "  %%zad%ld: (1, 4, 2, 2, fp32) = add(x=%%zo%ld, y=%%zca%ld)\n", i, i, i);
    put(&t, "  %%zcs%ld: (1, 4, 1, 1, fp32)* = const(val=[[[[2]], [[0.5]], [[1]], [[-1]]]])\n", i);
    put(&t, "  %%zmu%ld: (1, 4, 2, 2, fp32) = mul(x=%%zad%ld, y=%%zcs%ld)\n", i, i, i);
    put(&t, "  %%zd1%ld: (1, 2, 2, 2, fp32) = conv(x=%%zmu%ld, weight=%%lw%ld)\n", i, i, i);
    put(&t, "  %%zd2%ld: (1, 4, 2, 2, fp32) = sigmoid(x=%%zmu%ld)\n", i, i);
    put(&t, "  %%zd3%ld: (1, 2, 2, 2, fp32) = conv(x=%%zd2%ld, weight=%%lw%ld)\n", i, i, i);
    put(&t, "  %%zct%ld: (1, 4, 2, 2, fp32) = concat(values=(%%zd1%ld, %%zd3%ld), axis=1)\n", i, i, i);
    put(&t, "  %%zsum%ld: (1, 4, 2, 2, fp32) = add(x=%%zct%ld, y=%%zmu%ld)\n", i, i, i);
    put(&t, "  %%zs2%ld: (1, 4, 2, 2, fp32) = add(x=%%zsum%ld, y=%%zo2%ld)\n", i, i, i);
    put(&t, "  %%zs3%ld: (1, 4, 2, 2, fp32) = concat(values=(%%zo3%ld, %%zo3%ld), axis=1)\n", i, i, i);
    put(&t, "  %%zs4%ld: (1, 4, 2, 2, fp32) = mul(x=%%zs2%ld, y=%%zs3%ld)\n", i, i, i);
    put(&t, "  %%zba%ld: (1, 4, 2, 2, fp32) = bias_add(x=%%zs4%ld, bias=%%lb%ld, axis=1)\n", i, i, i);
    put(&t, "  %%zf%ld: (4, 4, fp32) = reshape(x=%%zba%ld, shape=%%sq%ld)\n", i, i, i);
    put(&t, "  %%zi%ld: (4, int32)* = const(val=[%ld, 1, 2, 3])\n", i, i % 4);
    put(&t, "  %%ze%ld: (4, 4, fp32) = \"b::lookup\"(in0=%%zf%ld, in1=%%zi%ld)\n", i, i, i);
    put(&t, "  %%p%ld: (4, 4, fp32) = add(x=%%ze%ld, y=%%qt%ld)\n", i + 1, i, i);
  }
  put(&t, "} -> (%%p%ld)\n", n);
  *len = t.n;
  return t.s;
}

/* One input read by n pairs of 1x1 convs (lin: n linear ops): each pair is
   a class of its own (its dilation differs), below combine_parallel_conv2d's
   min_num_branches of 3; the linear ops are all alike, and the dense run asks
   for more branches than there are. A pass that scans the input's readers
   per reader is quadratic here. */
static char *make_parallel_program(long n, int lin, size_t *len) {
  text t;
  long i;
  memset(&t, 0, sizeof t);
  put(&t, lin ? "main(%%x: (2, 4, fp32)) {\n" : "main(%%x: (1, 4, 2, 2, fp32)) {\n");
  put(&t, lin ? "  %%w: (2, 4, fp32)* = const(val=[[1, 2, 3, 4], [5, 6, 7, 8]])\n"
              : "  %%w: (2, 4, 1, 1, fp32)* = const(val=[[[[1]], [[2]], [[3]], [[4]]], [[[5]], [[6]], [[7]], [[8]]]])\n");
  put(&t, lin ? "  %%s0: (2, 2, fp32) = identity(x=%%x)\n" : "  %%s0: (1, 2, 2, 2, fp32) = identity(x=%%x)\n");
  for (i = 0; i < n; i++) {
    if (lin) {
      put(&t, "  %%a%ld: (2, 2, fp32) = linear(x=%%x, weight=%%w)\n", i);
      put(&t, "  %%s%ld: (2, 2, fp32) = add(x=%%s%ld, y=%%a%ld)\n", i + 1, i, i);
      continue;
    }
    put(&t, "  %%a%ld: (1, 2, 2, 2, fp32) = conv(x=%%x, weight=%%w, dilations=[1, %ld])\n", i, i + 1);
    put(&t, "  %%b%ld: (1, 2, 2, 2, fp32) = conv(x=%%x, weight=%%w, dilations=[1, %ld])\n", i, i + 1);
    put(&t, "  %%c%ld: (1, 2, 2, 2, fp32) = add(x=%%a%ld, y=%%b%ld)\n", i, i, i);
    put(&t, "  %%s%ld: (1, 2, 2, 2, fp32) = add(x=%%s%ld, y=%%c%ld)\n", i + 1, i, i);
  }
  put(&t, "} -> (%%s%ld)\n", n);
  *len = t.n;
  return t.s;
}

/* Best of 3 CPU times of pass `name` alone; -1 on error (printed). */
static double time_pass(const mgopt_registry *reg, const char *src, size_t len, const char *name, long *ops) {
  double best = -1;
  int r;
  for (r = 0; r < 3; r++) {
    mgopt_diag d;
    mgopt_program *p = NULL;
    mgopt_mil_parse(src, len, NULL, &p, &d);
    double t0, t;
    if (!p) {
      fprintf(stderr, "parse failed: line %d: %s\n", d.line, d.msg);
      exit(1);
    }
    *ops = (long)mgopt_program_op_count(p);
    t0 = bench_cpu();
    if (mgopt_pipeline_run(p, reg, name, NULL, &d) != MGOPT_OK) {
      printf("  %-50s error: %s\n", name, d.msg);
      mgopt_program_destroy(p);
      return -1;
    }
    t = bench_cpu() - t0;
    if (best < 0 || t < best) best = t;
    mgopt_program_destroy(p);
  }
  return best;
}

int main(int argc, char **argv) {
  long n1 = argc > 2 ? atol(argv[1]) : 2000, n2 = argc > 2 ? atol(argv[2]) : 20000;
  const mgopt_registry *reg = mgopt_builtin_registry();
  size_t l1, l2;
  char *s1 = make_program(n1, &l1), *s2 = make_program(n2, &l2);
  int32_t i;
  long ops1 = 0, ops2 = 0;
  printf("%-52s %14s %14s %8s\n", "pass", "ns/op small", "ns/op large", "ratio");
  for (i = 0; i < reg->npasses; i++) {
    const char *name = reg->passes[i]->name, *run = name;
    double a, b;
    if (argc > 3 && !strstr(name, argv[3])) continue;
    if (!strcmp(name, "relay::print_ir")) run = "relay::print_ir{file=/dev/null}"; /* its file is required */
    a = time_pass(reg, s1, l1, run, &ops1);
    if (a < 0) continue;
    b = time_pass(reg, s2, l2, run, &ops2);
    if (b < 0) continue;
    printf("%-52s %14.1f %14.1f %8.2f\n", name, a * 1e9 / (double)ops1, b * 1e9 / (double)ops2,
           (b / (double)ops2) / (a / (double)ops1));
  }
  printf("(%ld and %ld ops; ratio = per-op cost at the large size over the small one: ~1 is linear)\n", ops1,
         ops2);
  /* one input read by many convs (linear ops) that stay below min_num_branches */
  for (i = 0; i < 2; i++) {
    static const char *const runs[2] = {"relay::combine_parallel_conv2d",
                                        "relay::combine_parallel_dense{min_num_branches=1000000000}"};
    size_t m1, m2;
    char *p1 = make_parallel_program(n1 / 10, i, &m1), *p2 = make_parallel_program(n2 / 10, i, &m2);
    double a, b;
    if (argc > 3 && !strstr(runs[i], argv[3])) {
      free(p1);
      free(p2);
      continue;
    }
    a = time_pass(reg, p1, m1, runs[i], &ops1);
    b = a < 0 ? -1 : time_pass(reg, p2, m2, runs[i], &ops2);
    if (b >= 0)
      printf("%-52s %14.1f %14.1f %8.2f  (one input, %ld and %ld readers)\n", i ? "combine_parallel_dense, one input" : "combine_parallel_conv2d, one input",
             a * 1e9 / (double)ops1, b * 1e9 / (double)ops2, (b / (double)ops2) / (a / (double)ops1), (i ? 1 : 2) * (n1 / 10),
             (i ? 1 : 2) * (n2 / 10));
    free(p1);
    free(p2);
  }
  free(s1);
  free(s2);
  return 0;
}
