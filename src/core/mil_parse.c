/* src/core/mil_parse.c — parses .mil text into a program: recursive descent over bytes, scoped %name resolution, typed literals. */
#include "../internal.h"

/* Grammar (whitespace, newlines and '#' comments allowed between any tokens):

     program  := function*
     function := WORD ('[' WORD ']')? fattrs? args '{' (wrapper | body) outputs? '}'?
     fattrs   := 'attributes' '(' WORD '=' literal (',' ...)* ')'   the function's own
               attributes (mgopt_function.attrs), e.g. implements="embedding_lookup"
     wrapper  := WORD '(' ')' '{' body outputs?          (MIL printouts' block0)
     args     := '(' (%name (':' type)? (',' ...)*)? ')'
     body     := op* '}'
     outputs  := '->' '(' (ref | '_') (',' ...)* ')'
     op       := (outdecl (',' outdecl)* '=')? WORD '(' arg (',' arg)* ')' block*
     outdecl  := %name (':' type)? | '_' (':' type)?
     block    := WORD args '{' body outputs?
     arg      := WORD '=' (ref | '(' refs ')' | literal)    name="..." sets the op name
     type     := '(' dims, dtype ')' ('*' | '^')? ('(' Tensor|Scalar|List|State ')')?
               | opaque("HEX")

   WORD is an identifier or a quoted string. A %ref resolves to the most recent
   visible definition (function inputs, earlier ops of the block and of the
   enclosing blocks, the block's own args); later definitions shadow. A
   literal is an attribute; the val of a const is read with the dtype and
   shape of the const's declared output type. Nothing is verified here: the
   declared types are recorded as written. Every error stops the parse, names
   line:col and frees everything. */

#define MGOPT__MILP_NUM_MAX 127 /* longest number literal, in bytes */

typedef struct mgopt__milp_def {
  const char *name;
  mgopt_value *v;
  int64_t prev; /* previous visible definition of the same name, -1 = none */
} mgopt__milp_def;

typedef struct mgopt__milp_out {
  const char *name;
  mgopt_type type;
  int absent;
} mgopt__milp_out;

typedef struct mgopt__milp_slotrec {
  const char *name;
  int32_t is_list;
  int64_t n, first; /* values [first, first + n) of the vals scratch */
} mgopt__milp_slotrec;

typedef struct mgopt__milp_key {
  const char *name;
  size_t pos;
} mgopt__milp_key;

enum { MGOPT__MILP_EL_BOOL = 1, MGOPT__MILP_EL_INT, MGOPT__MILP_EL_FLOAT, MGOPT__MILP_EL_STR };

/* A list element read before the list's kind is known. */
typedef struct mgopt__milp_el {
  int kind;
  int big; /* integer outside int64 */
  int64_t i;
  double f;
  mgopt_str s;
  size_t pos;
} mgopt__milp_el;

typedef struct mgopt__milp_num {
  int is_float, neg, big, special; /* special: inf or nan */
  uint64_t mag;
  size_t start, end;
} mgopt__milp_num;

typedef struct mgopt__milp {
  const char *s;
  size_t n, pos;
  mgopt_program *p;
  mgopt_diag *d;
  const mgopt_allocator *alloc;
  int max_depth;
  int64_t max_elements;
  int failed;
  mgopt_status status; /* of the first error */
  mgopt_function *fn;
  /* where each op starts, by ascending op id; line and column counted up to lc_pos */
  mgopt__srcpos *places;
  int64_t nplaces, places_cap;
  size_t lc_pos, lc_ls;
  int64_t lc_line;
  /* scope: definitions in order, plus name -> latest visible definition */
  mgopt__milp_def *defs;
  int64_t ndefs, defs_cap;
  mgopt__map visible; /* interned name -> 1 + index in defs of its visible definition, 0 = none */
  /* heap scratch, reused; none is live across a nested block */
  char *sbuf;
  int64_t sbuf_cap;
  size_t slen;
  mgopt__milp_out *outs;
  int64_t outs_cap;
  mgopt__milp_slotrec *slots;
  int64_t slots_cap;
  mgopt_value **vals;
  int64_t vals_cap;
  mgopt_attr *attrs;
  int64_t attrs_cap;
  mgopt__milp_key *keys;
  int64_t keys_cap;
  mgopt__milp_el *els;
  int64_t els_cap;
  mgopt_dim *dims;
  int64_t dims_cap;
} mgopt__milp;

/* ---------------------------------------------------------------- errors */

static int mgopt__milp_fail(mgopt__milp *P, size_t pos, mgopt_status st, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Records the first error (later ones are consequences) and returns 0. */
static int mgopt__milp_fail(mgopt__milp *P, size_t pos, mgopt_status st, const char *fmt, ...) {
  va_list ap;
  size_t i, ls = 0;
  int64_t line = 1;
  if (P->failed) return 0;
  P->failed = 1;
  P->status = st;
  if (!P->d) return 0;
  if (pos > P->n) pos = P->n;
  for (i = 0; i < pos; i++)
    if (P->s[i] == '\n') {
      line++;
      ls = i + 1;
    }
  P->d->status = st;
  P->d->line = line > INT_MAX ? INT_MAX : (int)line;
  P->d->col = pos - ls + 1 > (size_t)INT_MAX ? INT_MAX : (int)(pos - ls + 1);
  P->d->offset = (int64_t)pos;
  P->d->op[0] = 0;
  va_start(ap, fmt);
  vsnprintf(P->d->msg, sizeof P->d->msg, fmt, ap);
  va_end(ap);
  return 0;
}

static int mgopt__milp_oom(mgopt__milp *P) {
  mgopt__oom(P->p);
  return mgopt__milp_fail(P, P->pos, MGOPT_ERR_NOMEM, "out of memory");
}

static int mgopt__milp_reserve(mgopt__milp *P, void **arr, int64_t *cap, int64_t need, size_t elem) {
  if (need <= *cap) return 1;
  if (!mgopt__grow(P->alloc, arr, cap, need, elem)) return mgopt__milp_oom(P);
  return 1;
}

/* Describes the byte at pos for "expected X, found Y" messages. */
static const char *mgopt__milp_found(const mgopt__milp *P, size_t pos, char *buf) {
  unsigned char c;
  if (pos >= P->n) return "end of input";
  c = (unsigned char)P->s[pos];
  if (c > 0x20 && c < 0x7f) snprintf(buf, 16, "'%c'", c);
  else snprintf(buf, 16, "byte 0x%02x", c);
  return buf;
}

static int mgopt__milp_expected(mgopt__milp *P, const char *what) {
  char buf[16];
  return mgopt__milp_fail(P, P->pos, MGOPT_ERR_PARSE, "expected %s, found %s", what,
                          mgopt__milp_found(P, P->pos, buf));
}

/* ---------------------------------------------------------------- lexing */

static int mgopt__milp_name_char(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

static int mgopt__milp_digit(int c) { return c >= '0' && c <= '9'; }

static int mgopt__milp_at(const mgopt__milp *P, size_t i) {
  return i < P->n ? (unsigned char)P->s[i] : -1;
}

static size_t mgopt__milp_ws_from(const mgopt__milp *P, size_t i) {
  while (i < P->n) {
    char c = P->s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      i++;
    } else if (c == '#') {
      while (i < P->n && P->s[i] != '\n') i++;
    } else {
      break;
    }
  }
  return i;
}

static void mgopt__milp_ws(mgopt__milp *P) { P->pos = mgopt__milp_ws_from(P, P->pos); }

static int mgopt__milp_peek(mgopt__milp *P) {
  mgopt__milp_ws(P);
  return mgopt__milp_at(P, P->pos);
}

static int mgopt__milp_accept(mgopt__milp *P, int c) {
  if (mgopt__milp_peek(P) != c) return 0;
  P->pos++;
  return 1;
}

static int mgopt__milp_expect(mgopt__milp *P, int c) {
  char what[8];
  if (mgopt__milp_accept(P, c)) return 1;
  snprintf(what, sizeof what, "'%c'", c);
  return mgopt__milp_expected(P, what);
}

/* Identifier length at i: [A-Za-z0-9_.], and ':' followed by ':' or a name character. */
static size_t mgopt__milp_ident_len(const mgopt__milp *P, size_t i) {
  size_t j = i;
  while (j < P->n) {
    int c = (unsigned char)P->s[j];
    int nx = mgopt__milp_at(P, j + 1);
    if (mgopt__milp_name_char(c) || (c == ':' && (nx == ':' || mgopt__milp_name_char(nx)))) j++;
    else break;
  }
  return j - i;
}

/* Value-name length at i: like an identifier, but ':' only before a name character. */
static size_t mgopt__milp_vname_len(const mgopt__milp *P, size_t i) {
  size_t j = i;
  while (j < P->n) {
    int c = (unsigned char)P->s[j];
    if (mgopt__milp_name_char(c) || (c == ':' && mgopt__milp_name_char(mgopt__milp_at(P, j + 1)))) j++;
    else break;
  }
  return j - i;
}

/* 1 if the identifier at pos is exactly `w` (length n). */
static int mgopt__milp_is_word(const mgopt__milp *P, size_t pos, const char *w) {
  size_t n = strlen(w);
  return mgopt__milp_ident_len(P, pos) == n && memcmp(P->s + pos, w, n) == 0;
}

static int mgopt__milp_hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int mgopt__milp_sput(mgopt__milp *P, char c) {
  if (!mgopt__milp_reserve(P, (void **)&P->sbuf, &P->sbuf_cap, (int64_t)P->slen + 2, 1)) return 0;
  P->sbuf[P->slen++] = c;
  return 1;
}

/* A quoted string at pos, decoded into sbuf[0..slen) (NUL-terminated). */
static int mgopt__milp_string(mgopt__milp *P) {
  size_t start = P->pos;
  P->slen = 0;
  P->pos++;
  for (;;) {
    int c = mgopt__milp_at(P, P->pos);
    if (c < 0) return mgopt__milp_fail(P, start, MGOPT_ERR_PARSE, "unterminated string");
    if (c == '"') {
      P->pos++;
      break;
    }
    if (c == '\\') {
      int e = mgopt__milp_at(P, P->pos + 1), ch;
      switch (e) {
        case 'n': ch = '\n'; break;
        case 't': ch = '\t'; break;
        case 'r': ch = '\r'; break;
        case '"': ch = '"'; break;
        case '\\': ch = '\\'; break;
        case '\'': ch = '\''; break;
        case 'x': {
          int h = mgopt__milp_hexval(mgopt__milp_at(P, P->pos + 2));
          int l = mgopt__milp_hexval(mgopt__milp_at(P, P->pos + 3));
          if (h < 0 || l < 0)
            return mgopt__milp_fail(P, P->pos, MGOPT_ERR_PARSE, "\\x needs two hex digits");
          if (!mgopt__milp_sput(P, (char)(h * 16 + l))) return 0;
          P->pos += 4;
          continue;
        }
        case -1: return mgopt__milp_fail(P, start, MGOPT_ERR_PARSE, "unterminated string");
        default: return mgopt__milp_fail(P, P->pos, MGOPT_ERR_PARSE, "unknown escape in string");
      }
      if (!mgopt__milp_sput(P, (char)ch)) return 0;
      P->pos += 2;
      continue;
    }
    if (c < 0x20 || c == 0x7f) {
      if (c == '\n') return mgopt__milp_fail(P, start, MGOPT_ERR_PARSE, "unterminated string");
      return mgopt__milp_fail(P, P->pos, MGOPT_ERR_PARSE,
                              "control byte 0x%02x in a string: write it as an escape", c);
    }
    if (!mgopt__milp_sput(P, (char)c)) return 0;
    P->pos++;
  }
  if (!mgopt__milp_reserve(P, (void **)&P->sbuf, &P->sbuf_cap, (int64_t)P->slen + 1, 1)) return 0;
  P->sbuf[P->slen] = 0;
  return 1;
}

/* Skips a quoted string at i without decoding; returns the index after it,
   or 0 when it is malformed (lookahead only: the real parse reports it). */
static size_t mgopt__milp_skip_string(const mgopt__milp *P, size_t i) {
  for (i++; i < P->n; i++) {
    char c = P->s[i];
    if (c == '"') return i + 1;
    if (c == '\\') i++;
    else if (c == '\n') return 0;
  }
  return 0;
}

/* Interns a name, refusing NUL bytes (names are C strings in the IR). */
static const char *mgopt__milp_intern(mgopt__milp *P, const char *s, size_t n, size_t at) {
  const char *r;
  if (n && memchr(s, 0, n)) {
    mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "NUL byte in a name");
    return NULL;
  }
  r = mgopt_program_intern(P->p, s, n);
  if (!r) mgopt__milp_oom(P);
  return r;
}

/* An identifier or quoted string at pos, interned. NULL (error reported) if
   neither is there; `what` names the expectation. */
static const char *mgopt__milp_word(mgopt__milp *P, const char *what) {
  size_t at, l;
  mgopt__milp_ws(P);
  at = P->pos;
  if (mgopt__milp_at(P, at) == '"') {
    if (!mgopt__milp_string(P)) return NULL;
    return mgopt__milp_intern(P, P->sbuf, P->slen, at);
  }
  l = mgopt__milp_ident_len(P, at);
  if (!l) {
    mgopt__milp_expected(P, what);
    return NULL;
  }
  P->pos += l;
  return mgopt__milp_intern(P, P->s + at, l, at);
}

/* ---- numbers */

static int mgopt__milp_num_start(const mgopt__milp *P, size_t i) {
  int c = mgopt__milp_at(P, i);
  if (c == '-' || c == '+') c = mgopt__milp_at(P, ++i);
  if (mgopt__milp_digit(c)) return 1;
  return mgopt__milp_is_word(P, i, "inf") || mgopt__milp_is_word(P, i, "nan");
}

static int mgopt__milp_number(mgopt__milp *P, mgopt__milp_num *x) {
  size_t i = P->pos;
  memset(x, 0, sizeof *x);
  x->start = i;
  if (mgopt__milp_at(P, i) == '-' || mgopt__milp_at(P, i) == '+') x->neg = P->s[i++] == '-';
  if (mgopt__milp_is_word(P, i, "inf") || mgopt__milp_is_word(P, i, "nan")) {
    x->is_float = x->special = 1;
    i += 3;
  } else {
    if (!mgopt__milp_digit(mgopt__milp_at(P, i)))
      return mgopt__milp_fail(P, x->start, MGOPT_ERR_PARSE, "expected a number");
    while (mgopt__milp_digit(mgopt__milp_at(P, i))) {
      unsigned dg = (unsigned)(P->s[i] - '0');
      if (x->mag > (UINT64_MAX - dg) / 10) x->big = 1;
      else x->mag = x->mag * 10 + dg;
      i++;
    }
    if (mgopt__milp_at(P, i) == '.') {
      x->is_float = 1;
      i++;
      while (mgopt__milp_digit(mgopt__milp_at(P, i))) i++;
    }
    if (mgopt__milp_at(P, i) == 'e' || mgopt__milp_at(P, i) == 'E') {
      size_t j = i + 1;
      if (mgopt__milp_at(P, j) == '+' || mgopt__milp_at(P, j) == '-') j++;
      if (mgopt__milp_digit(mgopt__milp_at(P, j))) {
        x->is_float = 1;
        i = j;
        while (mgopt__milp_digit(mgopt__milp_at(P, i))) i++;
      }
    }
  }
  if (mgopt__milp_name_char(mgopt__milp_at(P, i)))
    return mgopt__milp_fail(P, x->start, MGOPT_ERR_PARSE, "malformed number");
  x->end = i;
  if (i - x->start > MGOPT__MILP_NUM_MAX)
    return mgopt__milp_fail(P, x->start, MGOPT_ERR_LIMIT, "number literal longer than %d bytes",
                            MGOPT__MILP_NUM_MAX);
  P->pos = i;
  return 1;
}

static double mgopt__milp_num_f64(const mgopt__milp *P, const mgopt__milp_num *x) {
  char buf[MGOPT__MILP_NUM_MAX + 1];
  size_t n = x->end - x->start;
  memcpy(buf, P->s + x->start, n);
  buf[n] = 0;
  return strtod(buf, NULL);
}

static float mgopt__milp_num_f32(const mgopt__milp *P, const mgopt__milp_num *x) {
  char buf[MGOPT__MILP_NUM_MAX + 1];
  size_t n = x->end - x->start;
  memcpy(buf, P->s + x->start, n);
  buf[n] = 0;
  return strtof(buf, NULL);
}

/* A finite literal that converted to infinity. */
static int mgopt__milp_overflowed(const mgopt__milp_num *x, double v) {
  return !x->special && (v == HUGE_VAL || v == -HUGE_VAL);
}

/* Integer literal as int64; 0 if out of range. */
static int mgopt__milp_num_i64(const mgopt__milp_num *x, int64_t *out) {
  if (x->is_float || x->big) return 0;
  if (x->neg) {
    if (x->mag > (uint64_t)INT64_MAX + 1u) return 0;
    *out = x->mag == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)x->mag;
  } else {
    if (x->mag > (uint64_t)INT64_MAX) return 0;
    *out = (int64_t)x->mag;
  }
  return 1;
}

/* ---------------------------------------------------------------- scope */

/* The index in defs of name's visible definition, -1 = none. */
static int64_t mgopt__milp_visible(const mgopt__milp *P, const char *name) {
  const mgopt__map_slot *sl = mgopt__map_find(&P->visible, mgopt__map_ptr_key(name));
  return sl ? sl->v.i - 1 : -1;
}

static int mgopt__milp_define(mgopt__milp *P, const char *name, mgopt_value *v) {
  mgopt__map_slot *sl;
  if (!mgopt__milp_reserve(P, (void **)&P->defs, &P->defs_cap, P->ndefs + 1, sizeof *P->defs)) return 0;
  sl = mgopt__map_get(&P->visible, mgopt__map_ptr_key(name), NULL);
  if (!sl) return mgopt__milp_oom(P);
  P->defs[P->ndefs].name = name;
  P->defs[P->ndefs].v = v;
  P->defs[P->ndefs].prev = sl->v.i - 1;
  sl->v.i = ++P->ndefs;
  return 1;
}

static void mgopt__milp_scope_pop(mgopt__milp *P, int64_t mark) {
  while (P->ndefs > mark) {
    mgopt__milp_def *df = &P->defs[--P->ndefs];
    mgopt__map_slot *sl = mgopt__map_find(&P->visible, mgopt__map_ptr_key(df->name));
    if (sl) sl->v.i = df->prev + 1;
  }
}

/* "%name" at pos, interned. */
static const char *mgopt__milp_value_name(mgopt__milp *P) {
  size_t at = P->pos, l;
  P->pos++; /* '%' */
  if (mgopt__milp_at(P, P->pos) == '"') {
    if (!mgopt__milp_string(P)) return NULL;
    return mgopt__milp_intern(P, P->sbuf, P->slen, at);
  }
  l = mgopt__milp_vname_len(P, P->pos);
  if (!l) {
    mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "expected a value name after '%%'");
    return NULL;
  }
  P->pos += l;
  return mgopt__milp_intern(P, P->s + at + 1, l, at);
}

/* A reference "%name" (pos at '%'), resolved in the current scope. */
static int mgopt__milp_ref(mgopt__milp *P, mgopt_value **out) {
  size_t at = P->pos;
  const char *name = mgopt__milp_value_name(P);
  int64_t top;
  if (!name) return 0;
  top = mgopt__milp_visible(P, name);
  if (top < 0)
    return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "undefined value %%%.*s",
                            (int)(strlen(name) > 60 ? 60 : strlen(name)), name);
  *out = P->defs[top].v;
  return 1;
}

/* 1 if a lone '_' (an absent value) is at i, followed by one of `follow`. */
static int mgopt__milp_absent_at(const mgopt__milp *P, size_t i, const char *follow) {
  int c;
  if (mgopt__milp_at(P, i) != '_' || mgopt__milp_ident_len(P, i) != 1) return 0;
  c = mgopt__milp_at(P, mgopt__milp_ws_from(P, i + 1));
  return c > 0 && strchr(follow, c) != NULL;
}

/* ---------------------------------------------------------------- types */

static int mgopt__milp_hexbytes(mgopt__milp *P, size_t at, const uint8_t **out, size_t *nout) {
  size_t k, nb;
  uint8_t *b;
  if (P->slen % 2) return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "odd number of hex digits");
  nb = P->slen / 2;
  b = (uint8_t *)mgopt_program_alloc(P->p, nb, 8);
  if (!b) return mgopt__milp_oom(P);
  for (k = 0; k < nb; k++) {
    int h = mgopt__milp_hexval((unsigned char)P->sbuf[2 * k]);
    int l = mgopt__milp_hexval((unsigned char)P->sbuf[2 * k + 1]);
    if (h < 0 || l < 0) return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "expected hex digits");
    b[k] = (uint8_t)(h * 16 + l);
  }
  *out = b;
  *nout = nb;
  return 1;
}

/* "(d0, d1, ..., dtype)", state(d0, ..., dtype) or opaque("HEX"), without markers. */
static int mgopt__milp_type(mgopt__milp *P, mgopt_type *t) {
  int64_t nd = 0;
  int unknown_rank = 0, state = 0;
  size_t at;
  memset(t, 0, sizeof *t);
  t->rank = -1;
  mgopt__milp_ws(P);
  at = P->pos;
  if (mgopt__milp_is_word(P, at, "state") && mgopt__milp_at(P, at + 5) == '(') {
    P->pos += 5;
    state = 1;
  }
  if (mgopt__milp_is_word(P, at, "opaque")) {
    P->pos += 6;
    if (!mgopt__milp_expect(P, '(')) return 0;
    if (mgopt__milp_peek(P) != '"') return mgopt__milp_expected(P, "a hex string");
    at = P->pos;
    if (!mgopt__milp_string(P)) return 0;
    t->kind = MGOPT_TYPE_OTHER;
    t->rank = 0;
    if (!mgopt__milp_hexbytes(P, at, &t->other, &t->other_len)) return 0;
    return mgopt__milp_expect(P, ')');
  }
  if (!mgopt__milp_accept(P, '(')) return mgopt__milp_expected(P, "a type '('");
  for (;;) {
    int c = mgopt__milp_peek(P);
    size_t it = P->pos;
    mgopt_dim dm = mgopt_dim_unknown();
    if (c == '*' && nd == 0 && !unknown_rank) {
      P->pos++;
      unknown_rank = 1;
      if (!mgopt__milp_expect(P, ',')) return 0;
      continue;
    }
    if (c == '?') {
      P->pos++;
    } else if (mgopt__milp_digit(c) || (c == '-' && mgopt__milp_digit(mgopt__milp_at(P, it + 1)))) {
      mgopt__milp_num x;
      if (!mgopt__milp_number(P, &x)) return 0;
      if (x.is_float) return mgopt__milp_fail(P, it, MGOPT_ERR_PARSE, "a dimension must be an integer");
      if (x.big || x.mag > (uint64_t)INT64_MAX)
        return mgopt__milp_fail(P, it, MGOPT_ERR_PARSE, "dimension out of range");
      if (!x.neg) dm.v = (int64_t)x.mag; /* negative: unknown */
    } else if (c == '"') {
      if (!mgopt__milp_string(P)) return 0;
      dm.sym = mgopt__milp_intern(P, P->sbuf, P->slen, it);
      if (!dm.sym) return 0;
    } else {
      size_t l = mgopt__milp_ident_len(P, it);
      if (!l) return mgopt__milp_expected(P, "a dimension or dtype");
      P->pos += l;
      if (mgopt__milp_peek(P) == ')') { /* the last item: the dtype */
        mgopt_dtype dt = mgopt_dtype_from_name(P->s + it, l);
        if (dt == MGOPT_DT_UNKNOWN && !(l == 7 && memcmp(P->s + it, "unknown", 7) == 0))
          return mgopt__milp_fail(P, it, MGOPT_ERR_TYPE, "unknown dtype '%.*s'", (int)(l > 40 ? 40 : l),
                                  P->s + it);
        P->pos++;
        t->kind = state ? MGOPT_TYPE_STATE : MGOPT_TYPE_TENSOR;
        t->dtype = (uint8_t)dt;
        if (unknown_rank) {
          if (nd) return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "'*' (unknown rank) takes no dims");
          return 1;
        }
        t->rank = (int32_t)nd;
        if (nd) {
          t->dims = (mgopt_dim *)mgopt__dup(P->p, P->dims, sizeof(mgopt_dim) * (size_t)nd);
          if (!t->dims) return mgopt__milp_oom(P);
        }
        return 1;
      }
      dm.sym = mgopt__milp_intern(P, P->s + it, l, it);
      if (!dm.sym) return 0;
    }
    if (nd >= MGOPT_MAX_RANK)
      return mgopt__milp_fail(P, at, MGOPT_ERR_LIMIT, "rank above %d", MGOPT_MAX_RANK);
    if (!mgopt__milp_reserve(P, (void **)&P->dims, &P->dims_cap, nd + 1, sizeof(mgopt_dim))) return 0;
    P->dims[nd++] = dm;
    if (mgopt__milp_peek(P) != ',') return mgopt__milp_expected(P, "',' and the dtype");
    P->pos++;
  }
}

/* Markers MIL printouts carry after a type: '*' / '^' and (Tensor) etc. */
static void mgopt__milp_type_suffix(mgopt__milp *P) {
  static const char *const kinds[] = {"Tensor", "Scalar", "List", "State"};
  int c = mgopt__milp_peek(P), k;
  size_t i;
  if (c == '*' || c == '^') P->pos++;
  if (mgopt__milp_peek(P) != '(') return;
  i = mgopt__milp_ws_from(P, P->pos + 1);
  for (k = 0; k < 4; k++) {
    if (mgopt__milp_is_word(P, i, kinds[k])) {
      size_t j = mgopt__milp_ws_from(P, i + strlen(kinds[k]));
      if (mgopt__milp_at(P, j) == ')') P->pos = j + 1;
      return;
    }
  }
}

/* ---------------------------------------------------------------- literals */

/* A new tensor for a literal of static type t; checks the limits first. */
static mgopt_tensor *mgopt__milp_tensor_for(mgopt__milp *P, const mgopt_type *t, size_t at) {
  int64_t numel = 1, span = 1, *shape = NULL;
  int32_t i;
  mgopt_tensor *x;
  size_t q = mgopt__milp_ws_from(P, P->pos);
  if (mgopt__milp_at(P, q) == '[') {
    q = mgopt__milp_ws_from(P, q + 1);
    if (q + 3 <= P->n && memcmp(P->s + q, "...", 3) == 0) {
      mgopt__milp_fail(P, q, MGOPT_ERR_PARSE,
                       "elided tensor [...] cannot be read back (print without elide_above)");
      return NULL;
    }
  }
  if (t->kind != MGOPT_TYPE_TENSOR || !mgopt_type_is_static(t)) {
    mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "a tensor literal needs a static type");
    return NULL;
  }
  if (t->dtype == MGOPT_DT_UNKNOWN) {
    mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "a tensor literal needs a known dtype");
    return NULL;
  }
  if (t->rank > P->max_depth) {
    mgopt__milp_fail(P, at, MGOPT_ERR_LIMIT, "tensor rank %d above the nesting limit %d",
                     (int)t->rank, P->max_depth);
    return NULL;
  }
  for (i = 0; i < t->rank; i++) {
    int64_t dv = t->dims[i].v;
    if (!mgopt__mul_i64(numel, dv, &numel) || !mgopt__mul_i64(span, dv ? dv : 1, &span) ||
        span > P->max_elements) {
      mgopt__milp_fail(P, at, MGOPT_ERR_LIMIT, "tensor literal larger than %lld elements",
                       (long long)P->max_elements);
      return NULL;
    }
  }
  /* every element takes at least one byte of text: refuse before allocating */
  if ((uint64_t)numel > (uint64_t)(P->n - P->pos)) {
    mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "the literal is shorter than its type's %lld elements",
                     (long long)numel);
    return NULL;
  }
  if (t->rank > 0) {
    shape = (int64_t *)mgopt_program_alloc(P->p, sizeof(int64_t) * (size_t)t->rank, 8);
    if (!shape) {
      mgopt__milp_oom(P);
      return NULL;
    }
    for (i = 0; i < t->rank; i++) shape[i] = t->dims[i].v;
  }
  x = mgopt_tensor_new(P->p, (mgopt_dtype)t->dtype, t->rank, shape);
  if (!x) mgopt__milp_oom(P);
  return x;
}

static int mgopt__milp_is_fp8(mgopt_dtype dt) {
  return dt == MGOPT_DT_FP8E4M3FN || dt == MGOPT_DT_FP8E4M3FNUZ || dt == MGOPT_DT_FP8E5M2 ||
         dt == MGOPT_DT_FP8E5M2FNUZ;
}

/* Does integer literal x fit dtype dt? Stores the value (two's complement for uint64). */
static int mgopt__milp_int_fits(mgopt_dtype dt, const mgopt__milp_num *x, int64_t *out) {
  int bits = mgopt_dtype_bits(dt);
  uint64_t lim;
  if (x->big || x->is_float) return 0;
  if (mgopt__milp_is_fp8(dt)) bits = 8, dt = MGOPT_DT_UINT8;
  if (mgopt_dtype_is_signed(dt)) {
    lim = bits >= 64 ? (uint64_t)1 << 63 : (uint64_t)1 << (bits - 1);
    if (x->neg ? x->mag > lim : x->mag > lim - 1) return 0;
    *out = x->neg ? (x->mag == ((uint64_t)1 << 63) ? INT64_MIN : -(int64_t)x->mag) : (int64_t)x->mag;
    return 1;
  }
  if (x->neg && x->mag) return 0;
  lim = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  if (x->mag > lim) return 0;
  *out = (int64_t)x->mag;
  return 1;
}

/* Leaf k of a typed tensor literal (k counts components for complex dtypes). */
static int mgopt__milp_leaf(mgopt__milp *P, mgopt_tensor *t, int64_t k) {
  mgopt_dtype dt = (mgopt_dtype)t->dtype;
  uint8_t *data = (uint8_t *)t->data;
  size_t at;
  mgopt__milp_num x;
  mgopt__milp_ws(P);
  at = P->pos;
  if (dt == MGOPT_DT_BOOL) {
    if (mgopt__milp_is_word(P, at, "true") || mgopt__milp_is_word(P, at, "True")) data[k] = 1;
    else if (mgopt__milp_is_word(P, at, "false") || mgopt__milp_is_word(P, at, "False")) data[k] = 0;
    else return mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "expected true or false in a bool tensor");
    P->pos += mgopt__milp_ident_len(P, at);
    return 1;
  }
  if (dt == MGOPT_DT_STRING) {
    mgopt_str *s = (mgopt_str *)t->data + k;
    if (mgopt__milp_at(P, at) != '"')
      return mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "expected a string in a string tensor");
    if (!mgopt__milp_string(P)) return 0;
    s->ptr = (const char *)mgopt__dup(P->p, P->sbuf, P->slen + 1);
    if (!s->ptr) return mgopt__milp_oom(P);
    s->len = P->slen;
    return 1;
  }
  if (!mgopt__milp_num_start(P, at))
    return mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "expected a number in a %s tensor",
                            mgopt_dtype_name(dt));
  if (!mgopt__milp_number(P, &x)) return 0;
  if (mgopt_dtype_is_float(dt) && !mgopt__milp_is_fp8(dt)) {
    double v = dt == MGOPT_DT_FP64 ? mgopt__milp_num_f64(P, &x) : (double)mgopt__milp_num_f32(P, &x);
    if (mgopt__milp_overflowed(&x, v)) goto range;
    mgopt_tensor_set_f64(t, k, v);
    if (mgopt__milp_overflowed(&x, mgopt_tensor_get_f64(t, k))) goto range;
    return 1;
  }
  if (dt == MGOPT_DT_COMPLEX64) {
    float f = mgopt__milp_num_f32(P, &x);
    if (mgopt__milp_overflowed(&x, (double)f)) goto range;
    memcpy(data + 8 * (k / 2) + 4 * (k % 2), &f, 4);
    return 1;
  }
  if (dt == MGOPT_DT_COMPLEX128) {
    double f = mgopt__milp_num_f64(P, &x);
    if (mgopt__milp_overflowed(&x, f)) goto range;
    memcpy(data + 16 * (k / 2) + 8 * (k % 2), &f, 8);
    return 1;
  }
  {
    int64_t v;
    if (x.is_float)
      return mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "expected an integer in a %s tensor",
                              mgopt_dtype_name(dt));
    if (!mgopt__milp_int_fits(dt, &x, &v)) goto range;
    if (mgopt__milp_is_fp8(dt)) data[k] = (uint8_t)v;
    else if (dt == MGOPT_DT_UINT64) memcpy(data + 8 * k, &x.mag, 8);
    else mgopt_tensor_set_i64(t, k, v);
    return 1;
  }
range:
  return mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "literal out of range for %s", mgopt_dtype_name(dt));
}

/* The elements of a typed tensor: a scalar, or nested lists read row-major.
   The nesting is only counted (bounded by max_depth); the element count
   must equal the type's. */
static int mgopt__milp_tensor_lit(mgopt__milp *P, mgopt_tensor *t) {
  int64_t want = t->numel, k = 0;
  int depth = 0;
  size_t at;
  if (t->dtype == MGOPT_DT_COMPLEX64 || t->dtype == MGOPT_DT_COMPLEX128) want *= 2;
  mgopt__milp_ws(P);
  at = P->pos;
  for (;;) {
    int c = mgopt__milp_peek(P), closed = 0;
    if (c == '[') {
      if (++depth > P->max_depth)
        return mgopt__milp_fail(P, P->pos, MGOPT_ERR_LIMIT, "lists nested deeper than %d", P->max_depth);
      P->pos++;
      c = mgopt__milp_peek(P);
      if (c == '.' && mgopt__milp_at(P, P->pos + 1) == '.' && mgopt__milp_at(P, P->pos + 2) == '.')
        return mgopt__milp_fail(P, P->pos, MGOPT_ERR_PARSE,
                                "elided tensor [...] cannot be read back (print without elide_above)");
      if (c != ']') continue;
      P->pos++;
      depth--;
      closed = 1;
    }
    if (!closed) {
      if (k >= want)
        return mgopt__milp_fail(P, P->pos, MGOPT_ERR_TYPE, "more elements than the type's %lld",
                                (long long)t->numel);
      if (!mgopt__milp_leaf(P, t, k++)) return 0;
    }
    /* after a value: ',' continues the list, ']' closes it (repeatedly) */
    for (;;) {
      if (depth == 0) goto done;
      c = mgopt__milp_peek(P);
      if (c == ']') {
        P->pos++;
        depth--;
        continue;
      }
      if (c == ',') {
        P->pos++;
        break;
      }
      return mgopt__milp_expected(P, "',' or ']'");
    }
  }
done:
  if (k != want)
    return mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "the literal has %lld elements, its type %lld",
                            (long long)(want == t->numel ? k : k / 2), (long long)t->numel);
  return 1;
}

/* tensor<TYPE>(LITERAL), pos at "tensor". */
static int mgopt__milp_tensor_attr(mgopt__milp *P, mgopt_attr *a) {
  mgopt_type ty;
  size_t at;
  P->pos += 6;
  if (!mgopt__milp_expect(P, '<')) return 0;
  mgopt__milp_ws(P);
  at = P->pos;
  if (!mgopt__milp_type(P, &ty) || !mgopt__milp_expect(P, '>') || !mgopt__milp_expect(P, '('))
    return 0;
  a->u.t = mgopt__milp_tensor_for(P, &ty, at);
  if (!a->u.t || !mgopt__milp_tensor_lit(P, a->u.t)) return 0;
  a->kind = MGOPT_ATTR_TENSOR;
  return mgopt__milp_expect(P, ')');
}

/* bytes<TAG>("HEX"), pos at "bytes". */
static int mgopt__milp_bytes_attr(mgopt__milp *P, mgopt_attr *a) {
  mgopt__milp_num x;
  int64_t tag;
  size_t at, nb;
  P->pos += 5;
  if (!mgopt__milp_expect(P, '<')) return 0;
  mgopt__milp_ws(P);
  at = P->pos;
  if (!mgopt__milp_num_start(P, at)) return mgopt__milp_expected(P, "an integer tag");
  if (!mgopt__milp_number(P, &x)) return 0;
  if (!mgopt__milp_num_i64(&x, &tag) || tag < INT32_MIN || tag > INT32_MAX)
    return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "bytes tag must be a 32-bit integer");
  if (!mgopt__milp_expect(P, '>') || !mgopt__milp_expect(P, '(')) return 0;
  if (mgopt__milp_peek(P) != '"') return mgopt__milp_expected(P, "a hex string");
  at = P->pos;
  if (!mgopt__milp_string(P) || !mgopt__milp_hexbytes(P, at, &a->u.bytes, &nb)) return 0;
  a->kind = MGOPT_ATTR_BYTES;
  a->tag = (int32_t)tag;
  a->n = (int64_t)nb;
  return mgopt__milp_expect(P, ')');
}

/* A flat list [..] or (..) of scalars; want = the attribute kind the prefix
   (ints[ floats[ bools[ strings[) asks for, or 0 to decide from the elements. */
static int mgopt__milp_list_attr(mgopt__milp *P, mgopt_attr *a, int want) {
  size_t at = P->pos;
  char close = P->s[P->pos] == '(' ? ')' : ']';
  int64_t ne = 0, k;
  int nb = 0, ni = 0, nf = 0, ns = 0, kind;
  P->pos++;
  if (mgopt__milp_peek(P) == close) {
    P->pos++;
  } else {
    for (;;) {
      mgopt__milp_el *e;
      int c = mgopt__milp_peek(P);
      size_t eat = P->pos;
      if (c == '.' && mgopt__milp_at(P, eat + 1) == '.' && mgopt__milp_at(P, eat + 2) == '.')
        return mgopt__milp_fail(P, eat, MGOPT_ERR_PARSE,
                                "elided tensor [...] cannot be read back (print without elide_above)");
      if (c == '[' || c == '(')
        return mgopt__milp_fail(P, eat, MGOPT_ERR_TYPE,
                                "nested list in an attribute: write tensor<TYPE>(...)");
      if (ne >= P->max_elements)
        return mgopt__milp_fail(P, eat, MGOPT_ERR_LIMIT, "list longer than %lld elements",
                                (long long)P->max_elements);
      if (!mgopt__milp_reserve(P, (void **)&P->els, &P->els_cap, ne + 1, sizeof *P->els)) return 0;
      e = &P->els[ne++];
      memset(e, 0, sizeof *e);
      e->pos = eat;
      if (c == '"') {
        if (!mgopt__milp_string(P)) return 0;
        e->kind = MGOPT__MILP_EL_STR;
        e->s.ptr = (const char *)mgopt__dup(P->p, P->sbuf, P->slen + 1);
        if (!e->s.ptr) return mgopt__milp_oom(P);
        e->s.len = P->slen;
        ns++;
      } else if (mgopt__milp_is_word(P, eat, "true") || mgopt__milp_is_word(P, eat, "True") ||
                 mgopt__milp_is_word(P, eat, "false") || mgopt__milp_is_word(P, eat, "False")) {
        e->kind = MGOPT__MILP_EL_BOOL;
        e->i = P->s[eat] == 't' || P->s[eat] == 'T';
        P->pos += mgopt__milp_ident_len(P, eat);
        nb++;
      } else if (mgopt__milp_num_start(P, eat)) {
        mgopt__milp_num x;
        if (!mgopt__milp_number(P, &x)) return 0;
        e->f = mgopt__milp_num_f64(P, &x);
        if (mgopt__milp_overflowed(&x, e->f))
          return mgopt__milp_fail(P, eat, MGOPT_ERR_PARSE, "number out of range");
        if (x.is_float) {
          e->kind = MGOPT__MILP_EL_FLOAT;
          nf++;
        } else {
          e->kind = MGOPT__MILP_EL_INT;
          e->big = !mgopt__milp_num_i64(&x, &e->i);
          ni++;
        }
      } else {
        return mgopt__milp_expected(P, "a list element");
      }
      c = mgopt__milp_peek(P);
      if (c == ',') {
        P->pos++;
        continue;
      }
      if (c == close) {
        P->pos++;
        break;
      }
      return mgopt__milp_expected(P, close == ']' ? "',' or ']'" : "',' or ')'");
    }
  }
  if (want) kind = want;
  else if (ne == 0 || ni == ne) kind = MGOPT_ATTR_INTS;
  else if (nb == ne) kind = MGOPT_ATTR_BOOLS;
  else if (ns == ne) kind = MGOPT_ATTR_STRINGS;
  else if (ni + nf == ne) kind = MGOPT_ATTR_FLOATS;
  else return mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "list mixes literal kinds");
  a->kind = (uint8_t)kind;
  a->n = ne;
  if (kind == MGOPT_ATTR_STRINGS) {
    a->u.strs = (mgopt_str *)mgopt_program_alloc(P->p, sizeof(mgopt_str) * (size_t)(ne ? ne : 1), 8);
    if (!a->u.strs) return mgopt__milp_oom(P);
  } else if (kind == MGOPT_ATTR_FLOATS) {
    a->u.floats = (double *)mgopt_program_alloc(P->p, sizeof(double) * (size_t)(ne ? ne : 1), 8);
    if (!a->u.floats) return mgopt__milp_oom(P);
  } else {
    a->u.ints = (int64_t *)mgopt_program_alloc(P->p, sizeof(int64_t) * (size_t)(ne ? ne : 1), 8);
    if (!a->u.ints) return mgopt__milp_oom(P);
  }
  for (k = 0; k < ne; k++) {
    const mgopt__milp_el *e = &P->els[k];
    int ok = kind == MGOPT_ATTR_STRINGS  ? e->kind == MGOPT__MILP_EL_STR
             : kind == MGOPT_ATTR_BOOLS  ? e->kind == MGOPT__MILP_EL_BOOL
             : kind == MGOPT_ATTR_INTS   ? e->kind == MGOPT__MILP_EL_INT
                                         : e->kind == MGOPT__MILP_EL_INT || e->kind == MGOPT__MILP_EL_FLOAT;
    if (!ok) return mgopt__milp_fail(P, e->pos, MGOPT_ERR_TYPE, "wrong literal kind for this list");
    if (kind == MGOPT_ATTR_STRINGS) a->u.strs[k] = e->s;
    else if (kind == MGOPT_ATTR_FLOATS) a->u.floats[k] = e->f;
    else if (kind == MGOPT_ATTR_INTS && e->big)
      return mgopt__milp_fail(P, e->pos, MGOPT_ERR_PARSE, "integer out of the int64 range");
    else a->u.ints[k] = e->i;
  }
  return 1;
}

/* Any attribute literal at pos. */
static int mgopt__milp_literal(mgopt__milp *P, mgopt_attr *a) {
  int c = mgopt__milp_peek(P);
  size_t at = P->pos, l;
  if (c == '"') {
    char *s;
    if (!mgopt__milp_string(P)) return 0;
    s = (char *)mgopt__dup(P->p, P->sbuf, P->slen + 1);
    if (!s) return mgopt__milp_oom(P);
    a->kind = MGOPT_ATTR_STRING;
    a->u.s.ptr = s;
    a->u.s.len = P->slen;
    return 1;
  }
  if (c == '[' || c == '(') return mgopt__milp_list_attr(P, a, 0);
  if (mgopt__milp_num_start(P, at)) {
    mgopt__milp_num x;
    if (!mgopt__milp_number(P, &x)) return 0;
    if (x.is_float) {
      a->kind = MGOPT_ATTR_FLOAT;
      a->u.f = mgopt__milp_num_f64(P, &x);
      if (mgopt__milp_overflowed(&x, a->u.f))
        return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "number out of range");
      return 1;
    }
    a->kind = MGOPT_ATTR_INT;
    if (!mgopt__milp_num_i64(&x, &a->u.i))
      return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "integer out of the int64 range");
    return 1;
  }
  l = mgopt__milp_ident_len(P, at);
  if (mgopt__milp_is_word(P, at, "true") || mgopt__milp_is_word(P, at, "True") ||
      mgopt__milp_is_word(P, at, "false") || mgopt__milp_is_word(P, at, "False")) {
    a->kind = MGOPT_ATTR_BOOL;
    a->u.i = c == 't' || c == 'T';
    P->pos += l;
    return 1;
  }
  if (mgopt__milp_is_word(P, at, "none") || mgopt__milp_is_word(P, at, "None")) {
    a->kind = MGOPT_ATTR_NONE;
    P->pos += l;
    return 1;
  }
  if (l) {
    int nx = mgopt__milp_at(P, mgopt__milp_ws_from(P, at + l));
    if (nx == '<' && mgopt__milp_is_word(P, at, "tensor")) return mgopt__milp_tensor_attr(P, a);
    if (nx == '<' && mgopt__milp_is_word(P, at, "bytes")) return mgopt__milp_bytes_attr(P, a);
    if (nx == '[') {
      int want = mgopt__milp_is_word(P, at, "ints")      ? MGOPT_ATTR_INTS
                 : mgopt__milp_is_word(P, at, "floats")  ? MGOPT_ATTR_FLOATS
                 : mgopt__milp_is_word(P, at, "bools")   ? MGOPT_ATTR_BOOLS
                 : mgopt__milp_is_word(P, at, "strings") ? MGOPT_ATTR_STRINGS
                                                         : 0;
      if (want) {
        P->pos = mgopt__milp_ws_from(P, at + l);
        return mgopt__milp_list_attr(P, a, want);
      }
    }
  }
  return mgopt__milp_expected(P, "a value (%name, a literal or a list)");
}

/* ---------------------------------------------------------------- structure */

static int mgopt__milp_block_rest(mgopt__milp *P, mgopt_block *b, int depth);

/* A block header "WORD(" followed by "%" or ") {" at the next token?
   With args == 0 only the empty "WORD() {" form counts. */
static int mgopt__milp_block_ahead(const mgopt__milp *P, int args) {
  size_t q = mgopt__milp_ws_from(P, P->pos), l;
  if (q >= P->n) return 0;
  if (P->s[q] == '"') {
    q = mgopt__milp_skip_string(P, q);
    if (!q) return 0;
  } else {
    l = mgopt__milp_ident_len(P, q);
    if (!l) return 0;
    q += l;
  }
  q = mgopt__milp_ws_from(P, q);
  if (mgopt__milp_at(P, q) != '(') return 0;
  q = mgopt__milp_ws_from(P, q + 1);
  if (mgopt__milp_at(P, q) == '%') return args;
  if (mgopt__milp_at(P, q) != ')') return 0;
  q = mgopt__milp_ws_from(P, q + 1);
  return mgopt__milp_at(P, q) == '{';
}

/* "( %a (: TYPE)?, ... )": the args of block b, defined in the current scope. */
static int mgopt__milp_args(mgopt__milp *P, mgopt_block *b) {
  if (!mgopt__milp_expect(P, '(')) return 0;
  if (mgopt__milp_accept(P, ')')) return 1;
  for (;;) {
    const char *name;
    mgopt_type t;
    mgopt_value *v;
    if (mgopt__milp_peek(P) != '%') return mgopt__milp_expected(P, "an argument %name");
    name = mgopt__milp_value_name(P);
    if (!name) return 0;
    memset(&t, 0, sizeof t);
    t.rank = -1;
    if (mgopt__milp_accept(P, ':')) {
      if (!mgopt__milp_type(P, &t)) return 0;
      mgopt__milp_type_suffix(P);
    }
    v = mgopt_block_add_arg(b, name, &t);
    if (!v) return mgopt__milp_oom(P);
    if (!mgopt__milp_define(P, name, v)) return 0;
    if (mgopt__milp_accept(P, ',')) continue;
    if (mgopt__milp_accept(P, ')')) return 1;
    return mgopt__milp_expected(P, "',' or ')'");
  }
}

/* Optional "-> (%a, _, ...)": the outputs of block b. */
static int mgopt__milp_outputs(mgopt__milp *P, mgopt_block *b) {
  if (mgopt__milp_peek(P) != '-' || mgopt__milp_at(P, P->pos + 1) != '>') return 1;
  P->pos += 2;
  if (!mgopt__milp_expect(P, '(')) return 0;
  if (mgopt__milp_accept(P, ')')) return 1;
  for (;;) {
    mgopt_value *v = NULL;
    int c = mgopt__milp_peek(P);
    if (c == '%') {
      if (!mgopt__milp_ref(P, &v)) return 0;
    } else if (mgopt__milp_absent_at(P, P->pos, ",)")) {
      P->pos++;
    } else {
      return mgopt__milp_expected(P, "an output %name");
    }
    if (mgopt_block_add_output(b, v)) return mgopt__milp_oom(P);
    if (mgopt__milp_accept(P, ',')) continue;
    if (mgopt__milp_accept(P, ')')) return 1;
    return mgopt__milp_expected(P, "',' or ')'");
  }
}

/* Operand list "(%a, _, %b)", pos at '('; appends to the vals scratch. */
static int mgopt__milp_ref_list(mgopt__milp *P, int64_t *nvals, int64_t *count) {
  P->pos++;
  *count = 0;
  if (mgopt__milp_accept(P, ')')) return 1;
  for (;;) {
    mgopt_value *v = NULL;
    int c = mgopt__milp_peek(P);
    if (c == '%') {
      if (!mgopt__milp_ref(P, &v)) return 0;
    } else if (mgopt__milp_absent_at(P, P->pos, ",)")) {
      P->pos++;
    } else {
      return mgopt__milp_expected(P, "%name in an operand list");
    }
    if (*count >= INT32_MAX) return mgopt__milp_fail(P, P->pos, MGOPT_ERR_LIMIT, "operand list too long");
    if (!mgopt__milp_reserve(P, (void **)&P->vals, &P->vals_cap, *nvals + 1, sizeof *P->vals)) return 0;
    P->vals[(*nvals)++] = v;
    (*count)++;
    if (mgopt__milp_accept(P, ',')) continue;
    if (mgopt__milp_accept(P, ')')) return 1;
    return mgopt__milp_expected(P, "',' or ')'");
  }
}

/* Is the '(' at pos an operand list (of %refs / _) rather than a literal tuple? */
static int mgopt__milp_ref_list_ahead(const mgopt__milp *P) {
  size_t q = mgopt__milp_ws_from(P, P->pos + 1);
  int c = mgopt__milp_at(P, q);
  return c == '%' || c == ')' || mgopt__milp_absent_at(P, q, ",)");
}

static int mgopt__milp_key_cmp(const void *a, const void *b) {
  const mgopt__milp_key *x = (const mgopt__milp_key *)a, *y = (const mgopt__milp_key *)b;
  if (x->name != y->name) return (uintptr_t)x->name < (uintptr_t)y->name ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Duplicate argument names: the first repeated occurrence in the text is reported. */
static int mgopt__milp_check_dups(mgopt__milp *P, int64_t nkeys) {
  int64_t k;
  size_t best = (size_t)-1;
  const char *bname = NULL;
  if (nkeys < 2) return 1;
  qsort(P->keys, (size_t)nkeys, sizeof *P->keys, mgopt__milp_key_cmp);
  for (k = 1; k < nkeys; k++)
    if (P->keys[k].name == P->keys[k - 1].name && P->keys[k].pos < best &&
        (k < 2 || P->keys[k - 2].name != P->keys[k].name)) {
      best = P->keys[k].pos;
      bname = P->keys[k].name;
    }
  if (!bname) return 1;
  return mgopt__milp_fail(P, best, MGOPT_ERR_PARSE, "duplicate argument '%.*s'",
                          (int)(strlen(bname) > 60 ? 60 : strlen(bname)), bname);
}

/* Records that op starts at byte pos (which never decreases from one op to the next). */
static int mgopt__milp_place(mgopt__milp *P, const mgopt_op *op, size_t pos) {
  mgopt__srcpos *sp;
  for (; P->lc_pos < pos; P->lc_pos++)
    if (P->s[P->lc_pos] == '\n') {
      P->lc_line++;
      P->lc_ls = P->lc_pos + 1;
    }
  if (!mgopt__milp_reserve(P, (void **)&P->places, &P->places_cap, P->nplaces + 1, sizeof *P->places)) return 0;
  sp = &P->places[P->nplaces++];
  sp->id = op->id;
  sp->line = P->lc_line > INT32_MAX ? INT32_MAX : (int32_t)P->lc_line;
  sp->col = pos - P->lc_ls + 1 > (size_t)INT32_MAX ? INT32_MAX : (int32_t)(pos - P->lc_ls + 1);
  return 1;
}

/* One op with its nested blocks, appended to b. */
static int mgopt__milp_op(mgopt__milp *P, mgopt_block *b, int depth) {
  int64_t nouts = 0, nslots = 0, nvals = 0, nattrs = 0, nkeys = 0, i;
  const char *type, *opname = NULL;
  mgopt_op *op;
  int is_const, c, effects = 0;
  int32_t nb = 0, bcap = 0;
  mgopt_block **blocks = NULL;
  size_t start;
  /* outputs */
  c = mgopt__milp_peek(P);
  start = P->pos;
  if (c == '%' || mgopt__milp_absent_at(P, P->pos, ",=:")) {
    for (;;) {
      mgopt__milp_out *o;
      if (nouts >= INT32_MAX) return mgopt__milp_fail(P, P->pos, MGOPT_ERR_LIMIT, "too many outputs");
      if (!mgopt__milp_reserve(P, (void **)&P->outs, &P->outs_cap, nouts + 1, sizeof *P->outs)) return 0;
      o = &P->outs[nouts++];
      memset(o, 0, sizeof *o);
      o->type.rank = -1;
      c = mgopt__milp_peek(P);
      if (c == '%') {
        o->name = mgopt__milp_value_name(P);
        if (!o->name) return 0;
      } else if (mgopt__milp_absent_at(P, P->pos, ",=:")) {
        P->pos++;
        o->absent = 1;
      } else {
        return mgopt__milp_expected(P, "an output %name or _");
      }
      if (mgopt__milp_accept(P, ':')) {
        if (!mgopt__milp_type(P, &o->type)) return 0;
        mgopt__milp_type_suffix(P);
      }
      if (mgopt__milp_accept(P, ',')) continue;
      if (mgopt__milp_accept(P, '=')) break;
      return mgopt__milp_expected(P, "',' or '=' after the outputs");
    }
  }
  type = mgopt__milp_word(P, "an op type");
  if (!type) return 0;
  op = mgopt_op_new(P->p, type, (int32_t)nouts, 0);
  if (!op) return mgopt__milp_oom(P);
  if (!mgopt__milp_place(P, op, start)) return 0;
  for (i = 0; i < nouts; i++) {
    mgopt_value *v = op->outs[i];
    v->type = P->outs[i].type;
    if (P->outs[i].absent) v->flags |= MGOPT_VALUE_ABSENT;
    else v->name = P->outs[i].name;
  }
  is_const = strcmp(type, "const") == 0;
  /* arguments: operands and attributes collected, then stored at once */
  if (!mgopt__milp_expect(P, '(')) return 0;
  if (!mgopt__milp_accept(P, ')')) {
    for (;;) {
      const char *key;
      size_t kat;
      mgopt__milp_ws(P);
      kat = P->pos;
      key = mgopt__milp_word(P, "an argument name");
      if (!key) return 0;
      if (!mgopt__milp_reserve(P, (void **)&P->keys, &P->keys_cap, nkeys + 1, sizeof *P->keys)) return 0;
      P->keys[nkeys].name = key;
      P->keys[nkeys++].pos = kat;
      if (!mgopt__milp_expect(P, '=')) return 0;
      c = mgopt__milp_peek(P);
      if (c == '%' || (c == '(' && mgopt__milp_ref_list_ahead(P))) {
        mgopt__milp_slotrec *s;
        if (!mgopt__milp_reserve(P, (void **)&P->slots, &P->slots_cap, nslots + 1, sizeof *P->slots))
          return 0;
        s = &P->slots[nslots++];
        s->name = key;
        s->first = nvals;
        if (c == '%') {
          mgopt_value *v;
          if (!mgopt__milp_ref(P, &v)) return 0;
          if (!mgopt__milp_reserve(P, (void **)&P->vals, &P->vals_cap, nvals + 1, sizeof *P->vals))
            return 0;
          P->vals[nvals++] = v;
          s->is_list = 0;
          s->n = 1;
        } else {
          s->is_list = 1;
          if (!mgopt__milp_ref_list(P, &nvals, &s->n)) return 0;
        }
      } else if (strcmp(key, "has_effects") == 0 && mgopt__milp_is_word(P, P->pos, "true")) {
        P->pos += 4; /* the op's MGOPT_OP_HAS_EFFECTS flag, not an attribute */
        effects = 1;
      } else if (c == '"' && strcmp(key, "name") == 0) {
        size_t at = P->pos;
        if (!mgopt__milp_string(P)) return 0;
        opname = mgopt__milp_intern(P, P->sbuf, P->slen, at);
        if (!opname) return 0;
      } else {
        mgopt_attr *a;
        size_t at = P->pos;
        if (nattrs >= INT32_MAX) return mgopt__milp_fail(P, at, MGOPT_ERR_LIMIT, "too many attributes");
        if (!mgopt__milp_reserve(P, (void **)&P->attrs, &P->attrs_cap, nattrs + 1, sizeof *P->attrs))
          return 0;
        a = &P->attrs[nattrs++];
        memset(a, 0, sizeof *a);
        a->name = key;
        if (is_const && strcmp(key, "val") == 0 && !mgopt__milp_is_word(P, at, "tensor")) {
          /* the bare val of a const: dtype and shape come from the declared output type */
          if (nouts < 1 || P->outs[0].absent)
            return mgopt__milp_fail(P, at, MGOPT_ERR_TYPE, "const val needs a declared output type");
          a->u.t = mgopt__milp_tensor_for(P, &op->outs[0]->type, at);
          if (!a->u.t || !mgopt__milp_tensor_lit(P, a->u.t)) return 0;
          a->kind = MGOPT_ATTR_TENSOR;
        } else if (!mgopt__milp_literal(P, a)) {
          return 0;
        }
      }
      if (mgopt__milp_accept(P, ',')) continue;
      if (mgopt__milp_accept(P, ')')) break;
      return mgopt__milp_expected(P, "',' or ')'");
    }
  }
  if (!mgopt__milp_check_dups(P, nkeys)) return 0;
  if (nslots > INT32_MAX) return mgopt__milp_fail(P, P->pos, MGOPT_ERR_LIMIT, "too many operands");
  if (nslots) {
    op->slots = (mgopt_slot *)mgopt_program_alloc(P->p, sizeof(mgopt_slot) * (size_t)nslots, 8);
    if (!op->slots) return mgopt__milp_oom(P);
    for (i = 0; i < nslots; i++) {
      const mgopt__milp_slotrec *r = &P->slots[i];
      mgopt_slot *s = &op->slots[i];
      int64_t k;
      s->name = r->name;
      s->is_list = r->is_list;
      if (r->n) {
        s->uses = (mgopt_use *)mgopt_program_alloc(P->p, sizeof(mgopt_use) * (size_t)r->n, 8);
        if (!s->uses) return mgopt__milp_oom(P);
      }
      for (k = 0; k < r->n; k++) {
        s->uses[k].op = op;
        s->uses[k].slot = (int32_t)i;
        s->uses[k].index = (int32_t)k;
        mgopt__use_link(&s->uses[k], P->vals[r->first + k]);
      }
      s->n = (int32_t)r->n;
    }
    op->nslots = (int32_t)nslots;
  }
  if (nattrs) {
    op->attrs = (mgopt_attr *)mgopt__dup(P->p, P->attrs, sizeof(mgopt_attr) * (size_t)nattrs);
    if (!op->attrs) return mgopt__milp_oom(P);
    op->nattrs = (int32_t)nattrs;
  }
  if (effects) op->flags |= MGOPT_OP_HAS_EFFECTS;
  if (opname) op->name = opname;
  else if (nouts > 0 && !P->outs[0].absent) op->name = P->outs[0].name;
  mgopt_op_append(op, b);
  /* nested blocks see what is visible here, not this op's outputs */
  while (mgopt__milp_block_ahead(P, 1)) {
    mgopt_block *nbk;
    const char *bname;
    if (depth + 1 > P->max_depth)
      return mgopt__milp_fail(P, mgopt__milp_ws_from(P, P->pos), MGOPT_ERR_LIMIT,
                              "blocks nested deeper than %d", P->max_depth);
    bname = mgopt__milp_word(P, "a block name");
    if (!bname) return 0;
    nbk = mgopt__block_new(P->p, bname);
    if (!nbk) return mgopt__milp_oom(P);
    nbk->parent_op = op;
    nbk->func = P->fn;
    if (nb == bcap) {
      int32_t ncap = bcap ? bcap * 2 : 2;
      mgopt_block **na;
      if (bcap > INT32_MAX / 4) return mgopt__milp_fail(P, P->pos, MGOPT_ERR_LIMIT, "too many blocks");
      na = (mgopt_block **)mgopt_program_alloc(P->p, sizeof(mgopt_block *) * (size_t)ncap, 8);
      if (!na) return mgopt__milp_oom(P);
      if (nb) memcpy(na, blocks, sizeof(mgopt_block *) * (size_t)nb);
      blocks = na;
      bcap = ncap;
    }
    blocks[nb++] = nbk;
    op->blocks = blocks;
    op->nblocks = nb;
    if (!mgopt__milp_block_rest(P, nbk, depth + 1)) return 0;
  }
  for (i = 0; i < op->nouts; i++)
    if (op->outs[i]->name && !mgopt__milp_define(P, op->outs[i]->name, op->outs[i])) return 0;
  return 1;
}

/* Ops up to and including the closing '}'. */
static int mgopt__milp_body(mgopt__milp *P, mgopt_block *b, int depth) {
  for (;;) {
    int c = mgopt__milp_peek(P);
    if (c == '}') {
      P->pos++;
      return 1;
    }
    if (c < 0) return mgopt__milp_expected(P, "an op or '}'");
    if (!mgopt__milp_op(P, b, depth)) return 0;
  }
}

/* After a nested block's name: args, body, outputs, in the block's own scope. */
static int mgopt__milp_block_rest(mgopt__milp *P, mgopt_block *b, int depth) {
  int64_t mark = P->ndefs;
  if (!mgopt__milp_args(P, b) || !mgopt__milp_expect(P, '{') || !mgopt__milp_body(P, b, depth) ||
      !mgopt__milp_outputs(P, b))
    return 0;
  mgopt__milp_scope_pop(P, mark);
  return 1;
}

/* "attributes(key=literal, ...)" after a function's name: its own attributes. */
static int mgopt__milp_fn_attrs(mgopt__milp *P, mgopt_function *f) {
  int64_t n = 0;
  if (!mgopt__milp_expect(P, '(')) return 0;
  for (;;) {
    mgopt_attr *a;
    const char *key;
    int64_t k;
    size_t at;
    mgopt__milp_ws(P);
    at = P->pos;
    key = mgopt__milp_word(P, "an attribute name");
    if (!key || !mgopt__milp_expect(P, '=')) return 0;
    for (k = 0; k < n; k++)
      if (P->attrs[k].name == key)
        return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "duplicate attribute '%.*s'",
                                (int)(strlen(key) > 60 ? 60 : strlen(key)), key);
    if (n >= 4096) return mgopt__milp_fail(P, at, MGOPT_ERR_LIMIT, "too many attributes");
    if (!mgopt__milp_reserve(P, (void **)&P->attrs, &P->attrs_cap, n + 1, sizeof *P->attrs)) return 0;
    a = &P->attrs[n++];
    memset(a, 0, sizeof *a);
    a->name = key;
    mgopt__milp_ws(P);
    if (!mgopt__milp_literal(P, a)) return 0;
    if (mgopt__milp_accept(P, ',')) continue;
    if (mgopt__milp_accept(P, ')')) break;
    return mgopt__milp_expected(P, "',' or ')'");
  }
  f->attrs = (mgopt_attr *)mgopt__dup(P->p, P->attrs, sizeof(mgopt_attr) * (size_t)n);
  if (!f->attrs) return mgopt__milp_oom(P);
  f->nattrs = (int32_t)n;
  return 1;
}

static int mgopt__milp_function(mgopt__milp *P) {
  const char *name;
  size_t at;
  mgopt_function *f;
  mgopt__milp_ws(P);
  at = P->pos;
  name = mgopt__milp_word(P, "a function name");
  if (!name) return 0;
  if (mgopt_program_function(P->p, name))
    return mgopt__milp_fail(P, at, MGOPT_ERR_PARSE, "function '%.*s' defined twice",
                            (int)(strlen(name) > 60 ? 60 : strlen(name)), name);
  f = mgopt_function_new(P->p, name);
  if (!f) return mgopt__milp_oom(P);
  P->fn = f;
  if (mgopt__milp_accept(P, '[')) {
    f->opset = mgopt__milp_word(P, "an opset name");
    if (!f->opset || !mgopt__milp_expect(P, ']')) return 0;
  }
  mgopt__milp_ws(P);
  if (mgopt__milp_is_word(P, P->pos, "attributes")) {
    P->pos += 10;
    if (!mgopt__milp_fn_attrs(P, f)) return 0;
  }
  mgopt__milp_scope_pop(P, 0);
  if (!mgopt__milp_args(P, f->body) || !mgopt__milp_expect(P, '{')) return 0;
  if (mgopt__milp_block_ahead(P, 0)) {
    /* MIL printouts' "block0() { ... } -> (...)" wrapper, then an optional '}' */
    if (!mgopt__milp_word(P, "a block name") || !mgopt__milp_expect(P, '(') ||
        !mgopt__milp_expect(P, ')') || !mgopt__milp_expect(P, '{') || !mgopt__milp_body(P, f->body, 0) ||
        !mgopt__milp_outputs(P, f->body))
      return 0;
    mgopt__milp_accept(P, '}');
  } else if (!mgopt__milp_body(P, f->body, 0) || !mgopt__milp_outputs(P, f->body)) {
    return 0;
  }
  mgopt__milp_scope_pop(P, 0);
  return 1;
}

static void mgopt__milp_free(mgopt__milp *P) {
  const mgopt_allocator *a = P->alloc;
  if (P->places) mgopt__heap_free(a, P->places, (size_t)P->places_cap * sizeof *P->places);
  if (P->defs) mgopt__heap_free(a, P->defs, (size_t)P->defs_cap * sizeof *P->defs);
  mgopt__map_free(&P->visible);
  if (P->sbuf) mgopt__heap_free(a, P->sbuf, (size_t)P->sbuf_cap);
  if (P->outs) mgopt__heap_free(a, P->outs, (size_t)P->outs_cap * sizeof *P->outs);
  if (P->slots) mgopt__heap_free(a, P->slots, (size_t)P->slots_cap * sizeof *P->slots);
  if (P->vals) mgopt__heap_free(a, P->vals, (size_t)P->vals_cap * sizeof *P->vals);
  if (P->attrs) mgopt__heap_free(a, P->attrs, (size_t)P->attrs_cap * sizeof *P->attrs);
  if (P->keys) mgopt__heap_free(a, P->keys, (size_t)P->keys_cap * sizeof *P->keys);
  if (P->els) mgopt__heap_free(a, P->els, (size_t)P->els_cap * sizeof *P->els);
  if (P->dims) mgopt__heap_free(a, P->dims, (size_t)P->dims_cap * sizeof *P->dims);
}

MGOPTDEF mgopt_status mgopt_mil_parse(const char *text, size_t len, const mgopt_parse_options *opts,
                                     mgopt_program **out, mgopt_diag *d) {
  mgopt__milp P;
  mgopt_program *p;
  mgopt_diag_clear(d);
  if (!out) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "out is NULL");
  if (!text && len) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "text is NULL");
  memset(&P, 0, sizeof P);
  P.s = text ? text : "";
  P.n = len;
  P.d = d;
  P.alloc = opts ? opts->alloc : NULL;
  mgopt__map_init(&P.visible, P.alloc);
  P.max_depth = opts && opts->max_depth > 0 ? opts->max_depth : 64;
  P.max_elements = opts && opts->max_elements > 0 ? opts->max_elements : ((int64_t)1 << 28);
  P.lc_line = 1;
  p = mgopt_program_create(P.alloc);
  if (!p) return mgopt_diag_set(d, MGOPT_ERR_NOMEM, "out of memory");
  P.p = p;
  for (;;) {
    mgopt__milp_ws(&P);
    if (P.pos >= P.n) break;
    if (!mgopt__milp_function(&P)) break;
  }
  if (!P.failed && P.nplaces) {
    p->places = (mgopt__srcpos *)mgopt__dup(p, P.places, sizeof *P.places * (size_t)P.nplaces);
    p->nplaces = P.nplaces;
  }
  if (!P.failed && mgopt_program_status(p) != MGOPT_OK) mgopt__milp_oom(&P);
  mgopt__milp_free(&P);
  if (P.failed) {
    mgopt_program_destroy(p);
    return P.status;
  }
  *out = p;
  return MGOPT_OK;
}
