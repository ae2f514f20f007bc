/* src/passes/io/shorten_names.c — common::shorten_names: every value inside a function gets a short name and ops lose theirs, for the smallest file.

   Not in any pipeline: it changes the names users see inside the model (a
   debugger's or a profiler's view), though nothing the model computes, nor
   its interface. Converters name values after their source framework's
   scopes ("StatefulPartitionedCall/functional_1/conv2d_3/Conv2D__41:0"):
   in a small compressed model those names are a tenth of the file and more.

   Before:
     main(%image: (1, 4, fp32)) {
       %"model/dense/MatMul:0": (1, 4, fp32) = relu(x=%image)
       %"model/dense/BiasAdd:0": (1, 4, fp32) = sigmoid(x=%"model/dense/MatMul:0")
       %scores: (1, 4, fp32) = exp(x=%"model/dense/BiasAdd:0")
     } -> (%scores)
   After:
     main(%image: (1, 4, fp32)) {
       %a: (1, 4, fp32) = relu(x=%image)
       %b: (1, 4, fp32) = sigmoid(x=%a)
       %scores: (1, 4, fp32) = exp(x=%b)
     } -> (%scores)

   What it does, per function: the function's inputs and outputs keep their
   names (its signature, and in ONNX the graph's inputs and outputs). Every
   other value, in program order (a nested block's arguments, then for each
   op its nested blocks, then its outputs), takes the next name of the
   sequence a..z A..Z, then two characters and more (a letter, then letters
   and digits): 52 names of one character, 3224 of two. A name that one of
   the kept names already holds is skipped, so names stay unique within the
   function and nested blocks shadow nothing. Every op's own name is
   dropped (a MIL op is then named by its first output; an ONNX node is
   written without a name, which the format allows). Constants are values
   like the others: an ONNX initializer takes its short name. Absent
   optional outputs stay unnamed.
   Fires on: every function with a value to rename or an op name to drop;
   counts one rewrite per value renamed and per op name dropped.
   Cost: O(values + ops) per function, with one hash set of the kept names. */
#include "../../passes_internal.h"

typedef struct mgopt__sn {
  mgopt_program *p;
  mgopt__map keep; /* interned names of the function's inputs and outputs */
  uint64_t next;   /* the sequence number of the next name */
  int64_t rewrites;
  int oom;
} mgopt__sn;

/* Name number k: a letter, then letters and digits (bijective base 62
   after a base-52 first character). */
static size_t mgopt__sn_name(uint64_t k, char *buf) {
  static const char al[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  size_t n = 1;
  buf[0] = al[k % 52];
  k /= 52;
  while (k) {
    k--;
    buf[n++] = al[k % 62];
    k /= 62;
  }
  buf[n] = 0;
  return n;
}

static void mgopt__sn_value(mgopt__sn *S, mgopt_value *v) {
  char buf[24];
  const char *nn;
  if (S->oom || (v->flags & MGOPT_VALUE_ABSENT)) return;
  if (v->name && mgopt__map_find(&S->keep, mgopt__map_ptr_key(v->name))) return;
  do {
    size_t n = mgopt__sn_name(S->next++, buf);
    nn = mgopt_program_intern(S->p, buf, n);
    if (!nn) {
      S->oom = 1;
      return;
    }
  } while (mgopt__map_find(&S->keep, mgopt__map_ptr_key(nn)));
  if (v->name != nn) {
    mgopt__pu_rename(v, nn);
    S->rewrites++;
  }
}

static void mgopt__sn_block(mgopt__sn *S, mgopt_block *b) {
  mgopt_op *op;
  int32_t i;
  for (i = 0; i < b->nargs; i++) mgopt__sn_value(S, b->args[i]);
  for (op = b->first; op && !S->oom; op = op->next) {
    for (i = 0; i < op->nblocks; i++) mgopt__sn_block(S, op->blocks[i]);
    for (i = 0; i < op->nouts; i++) mgopt__sn_value(S, op->outs[i]);
    if (op->name) {
      mgopt_op_set_name(op, NULL);
      S->rewrites++;
    }
  }
}

static mgopt_status mgopt__sn_run(mgopt_pass_ctx *ctx) {
  mgopt__sn S;
  int32_t fi, i;
  memset(&S, 0, sizeof S);
  S.p = ctx->program;
  for (fi = 0; fi < mgopt_program_function_count(S.p) && !S.oom; fi++) {
    mgopt_block *body = mgopt_program_function_at(S.p, fi)->body;
    mgopt__map_init(&S.keep, &S.p->alloc);
    S.next = 0;
    for (i = 0; i < body->nargs + body->nouts && !S.oom; i++) {
      const mgopt_value *v = i < body->nargs ? body->args[i] : body->outs[i - body->nargs]->value;
      if (v->name && !mgopt__map_get(&S.keep, mgopt__map_ptr_key(v->name), NULL)) S.oom = 1;
    }
    if (!S.oom) mgopt__sn_block(&S, body); /* its arguments are kept names */
    mgopt__map_free(&S.keep);
  }
  ctx->rewrites += S.rewrites;
  return S.oom ? mgopt_diag_set(ctx->diag, MGOPT_ERR_NOMEM, "shorten_names: out of memory") : MGOPT_OK;
}

MGOPT__DEFINE_PASS(io, common, shorten_names,
                   "every value inside a function gets a short name (a, b, .., aa, ..) and ops lose theirs; the "
                   "function's inputs and outputs keep their names",
                   mgopt__sn_run);
