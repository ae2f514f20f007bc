/* src/core/passmgr.c — pass lookup, pipeline strings, typed options, running with instrumentation. */
#include "../internal.h"

/* Pipeline grammar (whitespace allowed between tokens):
     pipeline := "" | "none" | item ("," item)*
     item     := NAME [ "{" opt ("," opt)* "}" ]
     opt      := NAME "=" VALUE          VALUE: a bare word or a "quoted string"
   NAME is [A-Za-z0-9_:.]+; it names a pass (full "common::x" or short "x")
   or a named pipeline, expanded in place (nesting limited). */

#define MGOPT__PIPE_MAX_DEPTH 8
#define MGOPT__PIPE_MAX_OPTS 32

static int mgopt__pm_name_eq(const char *full, const char *s, size_t n) {
  const char *c;
  if (strlen(full) == n && memcmp(full, s, n) == 0) return 1;
  /* short form: the part after the last "::" */
  c = strrchr(full, ':');
  if (c && c > full && c[-1] == ':') {
    c++;
    return strlen(c) == n && memcmp(c, s, n) == 0;
  }
  return 0;
}

MGOPTDEF const mgopt_pass_def *mgopt_registry_find(const mgopt_registry *r, const char *name, size_t n) {
  int32_t i;
  if (!r) return NULL;
  for (i = 0; i < r->npasses; i++)
    if (mgopt__pm_name_eq(r->passes[i]->name, name, n)) return r->passes[i];
  return NULL;
}

static const mgopt_pipeline_def *mgopt__pm_find_pipeline(const mgopt_registry *r, const char *s, size_t n) {
  int32_t i;
  for (i = 0; i < r->npipelines; i++)
    if (strlen(r->pipelines[i].name) == n && memcmp(r->pipelines[i].name, s, n) == 0)
      return &r->pipelines[i];
  return NULL;
}

typedef struct mgopt__pm {
  const mgopt_registry *r;
  mgopt_program *p;            /* NULL: check only */
  const mgopt_pipeline_options *ro;
  mgopt_pass_report *reports;
  int32_t cap, nrep;
  mgopt_diag *d;
  const char *top;             /* the caller's pipeline string (for columns) */
  int depth;
} mgopt__pm;

/* What a pass that failed with s leaves to the pipeline (not strict): it
   goes on when s is not NOMEM and the program still verifies (passes fail
   before changing anything, or between complete rewrites). The report and
   the after_pass call carry the failure; d is cleared for the next pass.
   Returns s when the pipeline must stop. */
static mgopt_status mgopt__pm_skip(mgopt__pm *m, mgopt_pass_report *rep, mgopt_status s) {
  mgopt_diag vd;
  if ((m->ro && m->ro->strict) || s == MGOPT_ERR_NOMEM || m->p->status) return s;
  if (mgopt_program_verify(m->p, &vd) != MGOPT_OK) return s;
  rep->status = s;
  rep->ops_after = mgopt_program_op_count(m->p);
  rep->diag = m->d;
  if (m->ro && m->ro->after_pass) m->ro->after_pass(m->p, rep, m->ro->after_pass_ud);
  rep->diag = NULL;
  if (m->reports && m->nrep < m->cap) m->reports[m->nrep] = *rep;
  m->nrep++;
  mgopt_diag_clear(m->d);
  return MGOPT_OK;
}

static int mgopt__pm_namech(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == ':' || c == '.' || c == '-';
}

static const char *mgopt__pm_ws(const char *s) {
  while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
  return s;
}

static mgopt_status mgopt__pm_err(mgopt__pm *m, const char *src, const char *at, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static mgopt_status mgopt__pm_err(mgopt__pm *m, const char *src, const char *at, const char *fmt, ...) {
  va_list ap;
  if (!m->d) return MGOPT_ERR_INVALID_ARG;
  m->d->status = MGOPT_ERR_INVALID_ARG;
  m->d->line = 1;
  m->d->col = src == m->top ? (int)(at - src) + 1 : 0;
  va_start(ap, fmt);
  vsnprintf(m->d->msg, sizeof m->d->msg, fmt, ap);
  va_end(ap);
  return MGOPT_ERR_INVALID_ARG;
}

static int mgopt__pm_parse_value(const mgopt_opt_def *od, const char *v, size_t n, mgopt_opt_value *out,
                                 char *strbuf) {
  char tmp[128];
  char *end;
  if (n >= sizeof tmp) return 0;
  memcpy(tmp, v, n);
  tmp[n] = 0;
  switch ((mgopt_opt_kind)od->kind) {
    case MGOPT_OPT_BOOL:
      if (strcmp(tmp, "true") == 0 || strcmp(tmp, "1") == 0) out->i = 1;
      else if (strcmp(tmp, "false") == 0 || strcmp(tmp, "0") == 0) out->i = 0;
      else return 0;
      return 1;
    case MGOPT_OPT_INT:
      out->i = strtoll(tmp, &end, 10);
      return n > 0 && *end == 0;
    case MGOPT_OPT_FLOAT:
      out->f = strtod(tmp, &end);
      return n > 0 && *end == 0;
    case MGOPT_OPT_STRING:
      memcpy(strbuf, v, n);
      strbuf[n] = 0;
      out->s = strbuf;
      return 1;
  }
  return 0;
}

/* 1 if the parsed value v of od is one of od->allowed (see mgopt_opt_def). */
MGOPT__PRIVATE int mgopt__pm_allowed(const mgopt_opt_def *od, const mgopt_opt_value *v) {
  const char *a = od->allowed;
  if (!a) return 1;
  while (*a) {
    const char *e = strchr(a, '|'), *dots;
    size_t n = e ? (size_t)(e - a) : strlen(a);
    char alt[64];
    if (n < sizeof alt) {
      memcpy(alt, a, n);
      alt[n] = 0;
      dots = strstr(alt, "..");
      if (od->kind == MGOPT_OPT_STRING || od->kind == MGOPT_OPT_BOOL) {
        if (od->kind == MGOPT_OPT_STRING ? strcmp(v->s, alt) == 0 : v->i == strtoll(alt, NULL, 10)) return 1;
      } else if (dots) {
        double x = od->kind == MGOPT_OPT_INT ? (double)v->i : v->f;
        if (x == x && (dots == alt || x >= strtod(alt, NULL)) && (!dots[2] || x <= strtod(dots + 2, NULL))) return 1;
      } else if (od->kind == MGOPT_OPT_INT ? v->i == strtoll(alt, NULL, 10) : v->f == strtod(alt, NULL)) {
        return 1;
      }
    }
    if (!e) break;
    a = e + 1;
  }
  return 0;
}

/* od->allowed for a message: "a, b, 0..1". */
MGOPT__PRIVATE const char *mgopt__pm_allowed_text(const mgopt_opt_def *od, char *buf, size_t cap) {
  const char *a = od->allowed;
  size_t k = 0;
  for (; *a && k + 3 < cap; a++) {
    if (*a == '|') {
      buf[k++] = ',';
      buf[k++] = ' ';
    } else buf[k++] = *a;
  }
  buf[k] = 0;
  return buf;
}

/* 1 if function f may hold an op of one of the pass's needed kinds (an
   incomplete index counts as yes). */
static int mgopt__pm_has_needed(const mgopt_function *f, const mgopt_pass_def *pd) {
  int32_t i;
  if (!pd->nneeds) return 1;
  for (i = 0; i < pd->nneeds; i++)
    if (mgopt__index_kind_count(f, pd->needs[i]) != 0) return 1;
  return 0;
}

MGOPT__PRIVATE mgopt_status mgopt__pass_run_patterns(mgopt_pass_ctx *ctx, const mgopt_pass_def *pd) {
  mgopt_rewrite_config cfg;
  mgopt_rewrite_stats st;
  mgopt_status s = MGOPT_OK;
  int32_t i;
  memset(&cfg, 0, sizeof cfg);
  memset(&st, 0, sizeof st);
  cfg.keep_dead = 1;
  if (pd->fold_constants) {
    cfg.fold = ctx->fold;
    cfg.fold_ud = ctx->fold_ud;
  }
  for (i = 0; i < ctx->program->nfuncs && !s; i++)
    if (mgopt__pm_has_needed(ctx->program->funcs[i], pd))
      s = mgopt_rewrite_function(ctx->program, ctx->program->funcs[i], pd->patterns, pd->npatterns, &cfg, &st,
                                 ctx->diag);
  ctx->rewrites += st.rewrites + st.folds;
  return s;
}

MGOPT__PRIVATE mgopt_status mgopt__pass_run_pattern(mgopt_pass_ctx *ctx, const char *name, int32_t root_kind,
                                                    mgopt_pattern_fn fn, void *ud) {
  mgopt_pattern pat;
  mgopt_pass_def pd;
  memset(&pat, 0, sizeof pat);
  pat.name = name;
  pat.root_kind = root_kind;
  pat.benefit = 1;
  pat.fn = fn;
  pat.ud = ud;
  memset(&pd, 0, sizeof pd);
  pd.patterns = &pat;
  pd.npatterns = 1;
  return mgopt__pass_run_patterns(ctx, &pd);
}

typedef struct mgopt__pm_find {
  const char *name;
  const mgopt_op *op;
} mgopt__pm_find;

static int mgopt__pm_find_op(mgopt_op *op, void *ud) {
  mgopt__pm_find *f = (mgopt__pm_find *)ud;
  const char *n = op->name ? op->name : (op->nouts > 0 && op->outs[0]->name) ? op->outs[0]->name : NULL;
  if (!n || strcmp(n, f->name) != 0) return 0;
  f->op = op;
  return 1;
}

/* A pass that names an op only by name in d->op: give d the op's .mil place. */
static void mgopt__pm_place(mgopt__pm *m) {
  mgopt__pm_find f;
  char msg[MGOPT_DIAG_MSG_MAX];
  mgopt_status st;
  if (!m->d || !m->d->op[0] || m->d->line || !m->p->nplaces) return;
  f.name = m->d->op;
  f.op = NULL;
  if (!mgopt_program_walk(m->p, mgopt__pm_find_op, &f)) return;
  st = m->d->status;
  memcpy(msg, m->d->msg, sizeof msg);
  mgopt__diag_place(m->d, f.op);
  m->d->status = st;
  memcpy(m->d->msg, msg, sizeof msg);
}

static mgopt_status mgopt__pm_run_pass(mgopt__pm *m, const mgopt_pass_def *pd, mgopt_opt_value *vals) {
  mgopt_pass_ctx ctx;
  mgopt_pass_report rep;
  mgopt_status s;
  double t0 = 0;
  memset(&ctx, 0, sizeof ctx);
  ctx.program = m->p;
  ctx.opts = vals;
  ctx.diag = m->d;
  ctx.fold = m->r->fold;
  ctx.fold_ud = m->r->fold_ud;
  ctx.compress_config = m->ro ? m->ro->compress_config : NULL;
  ctx.composites = m->ro ? m->ro->composites : NULL;
  ctx.legalize_config = m->ro ? m->ro->legalize_config : NULL;
  memset(&rep, 0, sizeof rep);
  rep.name = pd->name;
  rep.ops_before = mgopt_program_op_count(m->p);
  if (m->ro && m->ro->clock) t0 = m->ro->clock();
  s = pd->run ? pd->run(&ctx) : mgopt__pass_run_patterns(&ctx, pd);
  mgopt__fold_groups_end(m->p);
  if (m->ro && m->ro->clock) rep.seconds = m->ro->clock() - t0;
  if (s == MGOPT_OK && m->p->status) s = mgopt_diag_set(m->d, MGOPT_ERR_NOMEM, "%s: out of memory", pd->name);
  if (s) {
    if (m->d && m->d->status == MGOPT_OK) mgopt_diag_set(m->d, s, "%s failed", pd->name);
    if (m->d && strncmp(m->d->msg, pd->name, strlen(pd->name)) != 0) {
      mgopt__diag_prefix(m->d, ": ");
      mgopt__diag_prefix(m->d, pd->name);
    }
    mgopt__pm_place(m);
    rep.rewrites = ctx.rewrites;
    return mgopt__pm_skip(m, &rep, s);
  }
  rep.rewrites = ctx.rewrites;
  rep.ops_after = mgopt_program_op_count(m->p);
  if (m->ro && m->ro->verify_each) {
    s = mgopt_program_verify(m->p, m->d);
    if (s) {
      mgopt__diag_prefix(m->d, ": ");
      mgopt__diag_prefix(m->d, pd->name);
      mgopt__diag_prefix(m->d, "after ");
      return s;
    }
  }
  if (m->reports && m->nrep < m->cap) m->reports[m->nrep] = rep;
  m->nrep++;
  if (m->ro && m->ro->after_pass) m->ro->after_pass(m->p, &rep, m->ro->after_pass_ud);
  return MGOPT_OK;
}

/* After a ',' inside options: does "name =" (the next option) or the end of
   the options follow? Otherwise the ',' belongs to a list value. */
static int mgopt__pm_option_follows(const char *q) {
  const char *n;
  q = mgopt__pm_ws(q);
  if (*q == '}' || *q == 0) return 1;
  n = q;
  while (mgopt__pm_namech(*q)) q++;
  return q > n && *mgopt__pm_ws(q) == '=';
}

static mgopt_status mgopt__pm_walk(mgopt__pm *m, const char *src) {
  const char *s = mgopt__pm_ws(src);
  if (*s == 0) return MGOPT_OK;
  if (strncmp(s, "none", 4) == 0 && *mgopt__pm_ws(s + 4) == 0) return MGOPT_OK;
  for (;;) {
    const char *name, *q;
    size_t nlen;
    const mgopt_pass_def *pd;
    const mgopt_pipeline_def *pl;
    mgopt_opt_value vals[MGOPT__PIPE_MAX_OPTS];
    char strbufs[MGOPT__PIPE_MAX_OPTS][128];
    int32_t i;
    s = mgopt__pm_ws(s);
    name = s;
    while (mgopt__pm_namech(*s)) s++;
    nlen = (size_t)(s - name);
    if (nlen == 0) return mgopt__pm_err(m, src, name, "expected a pass name");
    pd = mgopt_registry_find(m->r, name, nlen);
    pl = pd ? NULL : mgopt__pm_find_pipeline(m->r, name, nlen);
    if (!pd && !pl) return mgopt__pm_err(m, src, name, "unknown pass or pipeline '%.*s'", (int)nlen, name);
    q = mgopt__pm_ws(s);
    if (pl) {
      mgopt_status st;
      if (*q == '{') return mgopt__pm_err(m, src, q, "pipeline '%s' takes no options", pl->name);
      if (m->depth >= MGOPT__PIPE_MAX_DEPTH) return mgopt__pm_err(m, src, name, "pipelines nested too deeply");
      m->depth++;
      st = mgopt__pm_walk(m, pl->passes);
      m->depth--;
      if (st) return st;
    } else {
      if (pd->nopts > MGOPT__PIPE_MAX_OPTS) return mgopt__pm_err(m, src, name, "pass has too many options");
      for (i = 0; i < pd->nopts; i++) {
        const mgopt_opt_def *od = &pd->opts[i];
        memset(&vals[i], 0, sizeof vals[i]);
        vals[i].s = "";
        if (od->deflt && !mgopt__pm_parse_value(od, od->deflt, strlen(od->deflt), &vals[i], strbufs[i]))
          return mgopt__pm_err(m, src, name, "pass '%s': bad default for option '%s'", pd->name, od->name);
      }
      if (*q == '{') {
        q++;
        for (;;) {
          const char *on, *ov;
          size_t onl, ovl;
          const mgopt_opt_def *od = NULL;
          int32_t oi = -1;
          q = mgopt__pm_ws(q);
          on = q;
          while (mgopt__pm_namech(*q)) q++;
          onl = (size_t)(q - on);
          if (!onl) return mgopt__pm_err(m, src, on, "expected an option name");
          for (i = 0; i < pd->nopts; i++)
            if (strlen(pd->opts[i].name) == onl && memcmp(pd->opts[i].name, on, onl) == 0) {
              od = &pd->opts[i];
              oi = i;
            }
          if (!od) return mgopt__pm_err(m, src, on, "pass '%s' has no option '%.*s'", pd->name, (int)onl, on);
          q = mgopt__pm_ws(q);
          if (*q != '=') return mgopt__pm_err(m, src, q, "expected '=' after option '%s'", od->name);
          q = mgopt__pm_ws(q + 1);
          if (*q == '"') {
            ov = ++q;
            while (*q && *q != '"') q++;
            if (!*q) return mgopt__pm_err(m, src, ov - 1, "unterminated string");
            ovl = (size_t)(q - ov);
            q++;
          } else {
            /* a bare value ends at '}', a blank, or a ',' that starts the next
               option (a name and '='); `ops=gelu,layer_norm` is one list value */
            ov = q;
            while (*q && *q != '}' && *q != ' ' && *q != '\t' && !(*q == ',' && mgopt__pm_option_follows(q + 1))) q++;
            ovl = (size_t)(q - ov);
          }
          if (!mgopt__pm_parse_value(od, ov, ovl, &vals[oi], strbufs[oi]))
            return mgopt__pm_err(m, src, ov, "bad value '%.*s' for option '%s' of %s", (int)ovl, ov, od->name,
                                 pd->name);
          if (!mgopt__pm_allowed(od, &vals[oi])) {
            char at[160];
            return mgopt__pm_err(m, src, ov, "bad value '%.*s' for option '%s' of %s (allowed: %s)", (int)ovl, ov,
                                 od->name, pd->name, mgopt__pm_allowed_text(od, at, sizeof at));
          }
          q = mgopt__pm_ws(q);
          if (*q == ',') {
            q++;
            continue;
          }
          if (*q == '}') {
            q++;
            break;
          }
          return mgopt__pm_err(m, src, q, "expected ',' or '}' in the options of %s", pd->name);
        }
      }
      if (m->p) {
        mgopt_status st = mgopt__pm_run_pass(m, pd, vals);
        if (st) return st;
      }
    }
    s = mgopt__pm_ws(q);
    if (*s == 0) return MGOPT_OK;
    if (*s != ',') return mgopt__pm_err(m, src, s, "expected ',' between passes");
    s++;
  }
}

MGOPTDEF mgopt_status mgopt_pipeline_check(const mgopt_registry *r, const char *pipeline, mgopt_diag *d) {
  mgopt__pm m;
  mgopt_diag_clear(d);
  memset(&m, 0, sizeof m);
  m.r = r;
  m.d = d;
  m.top = pipeline ? pipeline : "";
  if (!r) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "no pass registry");
  return mgopt__pm_walk(&m, m.top);
}

MGOPTDEF mgopt_status mgopt_pipeline_run(mgopt_program *p, const mgopt_registry *r, const char *pipeline,
                                         const mgopt_pipeline_options *opts, mgopt_diag *d) {
  mgopt__pm m;
  mgopt_status s;
  mgopt_diag_clear(d);
  if (!p || !r) return mgopt_diag_set(d, MGOPT_ERR_INVALID_ARG, "pipeline: no program or registry");
  /* check the whole string first: a typo late in it must not leave a half-run program */
  s = mgopt_pipeline_check(r, pipeline, d);
  if (s) return s;
  memset(&m, 0, sizeof m);
  m.r = r;
  m.p = p;
  m.ro = opts;
  m.reports = opts ? opts->reports : NULL;
  m.cap = m.reports && opts->reports_cap > 0 ? opts->reports_cap : 0;
  m.d = d;
  m.top = pipeline ? pipeline : "";
  s = mgopt__pm_walk(&m, m.top);
  if (opts && opts->nreports) *opts->nreports = m.nrep < m.cap ? m.nrep : m.cap;
  return s;
}
