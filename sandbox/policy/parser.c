/* The policy parser: minijail .policy text to an sbx_policy.
 *
 * Why it exists: sbx loads existing ChromeOS and minijail policy files
 * unchanged, and the compiler and evaluator need one exact meaning for
 * each of them (policy.h). docs/policy-language.md is the reference for
 * the grammar and for every place sbx differs from minijail.
 *
 * Trusts: the syscall and constant tables. Refuses, with FILE:LINE:COL and
 * a caret: unknown system calls and constants, arguments past arg5 or past
 * the system call's own count, values that do not fit an int-sized
 * argument, malformed expressions and trailing text, conflicting rules and
 * directives, @include chains that loop or nest deeper than
 * SBX_POLICY_MAX_INCLUDE_DEPTH, and unreadable files. Nothing half-loads:
 * on any error everything built so far is freed.
 */
#include "sandbox/policy/parser.h"

#include <string.h>

#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/policy/constants.h"
#include "sandbox/policy/lexer.h"
#include "sandbox/policy/source.h"
#include "sandbox/base/syscalls.h"

GQuark sbx_policy_error_quark(void) {
  return g_quark_from_static_string("sbx-policy-error-quark");
}

/* The largest errno SECCOMP_RET_ERRNO can carry (the kernel's MAX_ERRNO). */
#define MAX_ERRNO 4095

typedef struct {
  sbx_rule rule;
  /* on_mismatch is the policy's default action, known only at the end. */
  gboolean mismatch_is_default;
} pending_rule;

typedef struct {
  GArray *rules;     /* of pending_rule */
  GHashTable *by_nr; /* nr -> index into rules + 1 */
  gboolean denylist;
  gboolean default_given;
  sbx_action default_action;
  char *default_file;
  unsigned default_line;
  uint32_t *frequency; /* sbx_syscall_max() entries, or NULL */
  GPtrArray *stack;    /* of sbx_policy_source *, the files being read */
  sbx_policy_notes *notes;
} parser;

/* One statement being parsed. */
typedef struct {
  parser *p;
  const sbx_policy_source *src;
  GArray *toks; /* of sbx_token */
  guint i;      /* next token */
} stmt;

typedef struct {
  unsigned arg;
  sbx_cmp_op op;
  uint64_t value;
  gboolean self_pid; /* SBX_SELF_PID: see policy.h */
  guint arg_tok;
  guint value_first, value_last;
} atom;

typedef struct {
  gboolean conditional;
  GPtrArray *clauses; /* of GArray of atom */
  gboolean has_else;  /* '; return ERRNO' or '; user-notify' */
  sbx_action action;  /* unconditional: the action; else what follows ';' */
  guint action_tok;
} filter;

static const sbx_token *tok(const stmt *s, guint i) {
  return &g_array_index(s->toks, sbx_token, i);
}

static gboolean at_end(const stmt *s) {
  return s->i >= s->toks->len;
}

static const sbx_token *peek(const stmt *s) {
  return at_end(s) ? NULL : tok(s, s->i);
}

static gboolean peek_is(const stmt *s, sbx_token_type type) {
  return !at_end(s) && peek(s)->type == type;
}

/* Formats an error pointing at tokens first..last (one line's worth). */
static void span_error(GError **out, const stmt *s, int code, guint first,
                       guint last, const char *format, ...) G_GNUC_PRINTF(6, 7);

static void span_error(GError **out, const stmt *s, int code, guint first,
                       guint last, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  const sbx_token *a = tok(s, first);
  const sbx_token *b = tok(s, last);
  unsigned len = a->len;
  if (b->line == a->line && b->col + b->len > a->col)
    len = b->col + b->len - a->col;
  sbx_policy_source_error(out, code, s->src, a->line, a->col, len, "%s", msg);
  g_free(msg);
}

/* An error about what is missing after the last token of the statement. */
static void end_error(GError **out, const stmt *s, int code, const char *format,
                      ...) G_GNUC_PRINTF(4, 5);

static void end_error(GError **out, const stmt *s, int code, const char *format,
                      ...) {
  va_list ap;
  va_start(ap, format);
  char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  const sbx_token *last = tok(s, s->toks->len - 1);
  sbx_policy_source_error(out, code, s->src, last->line, last->col + last->len,
                          1, "%s", msg);
  g_free(msg);
}

static char *tok_text(const sbx_token *t) {
  return g_strndup(t->text, t->len);
}

static gboolean is_argument(const sbx_token *t) {
  if (t->type != SBX_TOK_WORD || t->len < 4 || strncmp(t->text, "arg", 3))
    return FALSE;
  for (unsigned k = 3; k < t->len; k++) {
    if (!g_ascii_isdigit(t->text[k]))
      return FALSE;
  }
  return TRUE;
}

/* ---- values ------------------------------------------------------------ */

/* The value of the constant named by the next token; an unknown name is
 * an error pointing at it ("unknown WHAT 'NAME'"). */
static gboolean lookup_constant(stmt *s, const char *what, uint64_t *value,
                                GError **error) {
  char *name = tok_text(peek(s));
  if (strcmp(name, SBX_SELF_PID_NAME) == 0) {
    span_error(error, s, SBX_POLICY_ERROR_INVALID, s->i, s->i,
               "%s is the process's own pid, known only once it runs: it "
               "stands alone after == or != (arg0 == %s)",
               SBX_SELF_PID_NAME, SBX_SELF_PID_NAME);
    g_free(name);
    return FALSE;
  }
  gboolean found = sbx_constant_lookup(name, value);
  if (!found)
    span_error(error, s, SBX_POLICY_ERROR_UNKNOWN_CONSTANT, s->i, s->i,
               "unknown %s '%s'", what, name);
  g_free(name);
  return found;
}

static gboolean parse_value(stmt *s, uint64_t *value, GError **error);

/* constant = [ '~' ] ( '(' value ')' | NUMBER | NAME ) */
static gboolean parse_constant(stmt *s, uint64_t *value, GError **error) {
  gboolean complement = FALSE;
  if (peek_is(s, SBX_TOK_TILDE)) {
    complement = TRUE;
    s->i++;
    if (at_end(s)) {
      end_error(error, s, SBX_POLICY_ERROR_SYNTAX, "missing value after '~'");
      return FALSE;
    }
    if (peek_is(s, SBX_TOK_TILDE)) {
      span_error(error, s, SBX_POLICY_ERROR_SYNTAX, s->i, s->i,
                 "a double complement '~~' is not allowed");
      return FALSE;
    }
  }
  if (at_end(s)) {
    end_error(error, s, SBX_POLICY_ERROR_SYNTAX, "missing value after '%.*s'",
              (int)tok(s, s->i - 1)->len, tok(s, s->i - 1)->text);
    return FALSE;
  }
  const sbx_token *t = peek(s);
  uint64_t v;
  if (t->type == SBX_TOK_LPAREN) {
    guint open = s->i++;
    if (at_end(s)) {
      end_error(error, s, SBX_POLICY_ERROR_SYNTAX, "missing value after '('");
      return FALSE;
    }
    if (!parse_value(s, &v, error))
      return FALSE;
    if (!peek_is(s, SBX_TOK_RPAREN)) {
      span_error(error, s, SBX_POLICY_ERROR_SYNTAX, open, open, "unclosed '('");
      return FALSE;
    }
    s->i++;
  } else if (t->type == SBX_TOK_NUMBER) {
    v = t->number;
    s->i++;
  } else if (t->type == SBX_TOK_WORD) {
    if (!lookup_constant(s, "constant", &v, error))
      return FALSE;
    s->i++;
  } else {
    span_error(error, s, SBX_POLICY_ERROR_SYNTAX, s->i, s->i,
               "expected a number or a constant name, not '%.*s'", (int)t->len,
               t->text);
    return FALSE;
  }
  *value = complement ? ~v : v;
  return TRUE;
}

/* value = constant { '|' constant } */
static gboolean parse_value(stmt *s, uint64_t *value, GError **error) {
  uint64_t v = 0;
  for (;;) {
    uint64_t c;
    if (!parse_constant(s, &c, error))
      return FALSE;
    v |= c;
    if (!peek_is(s, SBX_TOK_PIPE))
      break;
    s->i++;
    if (at_end(s)) {
      end_error(error, s, SBX_POLICY_ERROR_SYNTAX, "missing value after '|'");
      return FALSE;
    }
  }
  *value = v;
  return TRUE;
}

/* ---- actions ----------------------------------------------------------- */

/* 'return' NUMBER|NAME, after the 'return' keyword at s->i - 1. */
static gboolean parse_return(stmt *s, sbx_action *action, GError **error) {
  if (at_end(s)) {
    end_error(error, s, SBX_POLICY_ERROR_SYNTAX,
              "missing errno after 'return'");
    return FALSE;
  }
  const sbx_token *t = peek(s);
  uint64_t v;
  if (t->type == SBX_TOK_NUMBER) {
    v = t->number;
  } else if (t->type == SBX_TOK_WORD) {
    if (!lookup_constant(s, "errno", &v, error))
      return FALSE;
  } else {
    span_error(error, s, SBX_POLICY_ERROR_SYNTAX, s->i, s->i,
               "expected an errno number or name after 'return'");
    return FALSE;
  }
  if (v > MAX_ERRNO) {
    span_error(error, s, SBX_POLICY_ERROR_INVALID, s->i, s->i,
               "invalid errno '%.*s': it must be 0 to %d", (int)t->len, t->text,
               MAX_ERRNO);
    return FALSE;
  }
  s->i++;
  action->kind = SBX_ACTION_ERRNO;
  action->data = (uint16_t)v;
  return TRUE;
}

/* action = '1' | allow | kill | kill-process | kill-thread | trap | trace
 *        | log | user-notify | 'return' errno */
static gboolean parse_action(stmt *s, sbx_action *action, GError **error) {
  const sbx_token *t = peek(s);
  guint at = s->i;
  if (t->type == SBX_TOK_NUMBER) {
    if (t->number != 1) {
      span_error(error, s, SBX_POLICY_ERROR_SYNTAX, at, at,
                 "invalid action '%.*s': only 1 (allow) is a number action",
                 (int)t->len, t->text);
      return FALSE;
    }
    s->i++;
    *action = (sbx_action){SBX_ACTION_ALLOW, 0};
    return TRUE;
  }
  static const struct {
    const char *word;
    sbx_action_kind kind;
  } kActions[] = {
      {"allow", SBX_ACTION_ALLOW},
      /* minijail lets the caller choose what 'kill' means; sbx always
       * kills the whole process, as the arch and x32 checks do. */
      {"kill", SBX_ACTION_KILL_PROCESS},
      {"kill-process", SBX_ACTION_KILL_PROCESS},
      {"kill-thread", SBX_ACTION_KILL_THREAD},
      {"trap", SBX_ACTION_TRAP},
      {"trace", SBX_ACTION_TRACE},
      {"log", SBX_ACTION_LOG},
      {"user-notify", SBX_ACTION_USER_NOTIF},
  };
  if (t->type == SBX_TOK_WORD) {
    if (sbx_token_is(t, "return")) {
      s->i++;
      return parse_return(s, action, error);
    }
    for (size_t k = 0; k < G_N_ELEMENTS(kActions); k++) {
      if (sbx_token_is(t, kActions[k].word)) {
        s->i++;
        *action = (sbx_action){kActions[k].kind, 0};
        return TRUE;
      }
    }
    if (t->len >= 3 && strncmp(t->text, "arg", 3) == 0) {
      span_error(error, s, SBX_POLICY_ERROR_SYNTAX, at, at,
                 "invalid argument '%.*s' (expected arg0 to arg5)", (int)t->len,
                 t->text);
      return FALSE;
    }
  }
  span_error(error, s, SBX_POLICY_ERROR_SYNTAX, at, at,
             "invalid action '%.*s' (expected 1, allow, kill, kill-process, "
             "kill-thread, trap, trace, log, user-notify, return ERRNO or "
             "an expression on arg0..arg5)",
             (int)t->len, t->text);
  return FALSE;
}

/* ---- expressions ------------------------------------------------------- */

static const struct {
  const char *text;
  sbx_cmp_op op;
} kOps[] = {
    {"==", SBX_CMP_EQ}, {"!=", SBX_CMP_NE}, {"<", SBX_CMP_LT},
    {"<=", SBX_CMP_LE}, {">", SBX_CMP_GT},  {">=", SBX_CMP_GE},
    {"&", SBX_CMP_SET}, {"in", SBX_CMP_IN},
};

/* SBX_SELF_PID after == or !=, alone: a relocation needs one whole
 * constant to patch. */
static gboolean parse_self_pid(stmt *s, atom *a, GError **error) {
  if (a->op != SBX_CMP_EQ && a->op != SBX_CMP_NE) {
    span_error(error, s, SBX_POLICY_ERROR_INVALID, s->i - 1, s->i,
               "%s can only be compared with == or !=", SBX_SELF_PID_NAME);
    return FALSE;
  }
  a->self_pid = TRUE;
  a->value = SBX_BPF_SELF_PID_UNPATCHED;
  a->value_last = s->i++;
  if (peek_is(s, SBX_TOK_PIPE)) {
    span_error(error, s, SBX_POLICY_ERROR_INVALID, a->value_first, s->i,
               "%s stands alone: it cannot be combined with '|'",
               SBX_SELF_PID_NAME);
    return FALSE;
  }
  return TRUE;
}

/* atom = argN op ( value | SBX_SELF_PID ) */
static gboolean parse_atom(stmt *s, atom *a, GError **error) {
  if (at_end(s)) {
    end_error(error, s, SBX_POLICY_ERROR_SYNTAX,
              "missing comparison after '%.*s'", (int)tok(s, s->i - 1)->len,
              tok(s, s->i - 1)->text);
    return FALSE;
  }
  const sbx_token *t = peek(s);
  if (!is_argument(t)) {
    span_error(error, s, SBX_POLICY_ERROR_SYNTAX, s->i, s->i,
               "invalid argument '%.*s' (expected arg0 to arg5)", (int)t->len,
               t->text);
    return FALSE;
  }
  /* Up to four digits keeps the value small; more is out of range anyway. */
  if (t->len > 7 || g_ascii_strtoull(t->text + 3, NULL, 10) > 5) {
    span_error(error, s, SBX_POLICY_ERROR_INVALID, s->i, s->i,
               "invalid argument '%.*s': system calls take at most six "
               "arguments (arg0 to arg5)",
               (int)t->len, t->text);
    return FALSE;
  }
  a->arg = (unsigned)g_ascii_strtoull(t->text + 3, NULL, 10);
  a->arg_tok = s->i++;
  if (at_end(s)) {
    end_error(error, s, SBX_POLICY_ERROR_SYNTAX,
              "missing operator after '%.*s'", (int)t->len, t->text);
    return FALSE;
  }
  const sbx_token *o = peek(s);
  gboolean found = FALSE;
  if (o->type == SBX_TOK_OP) {
    for (size_t k = 0; k < G_N_ELEMENTS(kOps); k++) {
      if (sbx_token_is(o, kOps[k].text)) {
        a->op = kOps[k].op;
        found = TRUE;
      }
    }
  }
  if (!found) {
    span_error(error, s, SBX_POLICY_ERROR_SYNTAX, s->i, s->i,
               "invalid operator '%.*s' (expected ==, !=, <, <=, >, >=, & "
               "or in)",
               (int)o->len, o->text);
    return FALSE;
  }
  s->i++;
  if (at_end(s)) {
    end_error(error, s, SBX_POLICY_ERROR_SYNTAX, "missing value after '%.*s'",
              (int)o->len, o->text);
    return FALSE;
  }
  a->value_first = s->i;
  if (sbx_token_is(peek(s), SBX_SELF_PID_NAME))
    return parse_self_pid(s, a, error);
  if (!parse_value(s, &a->value, error))
    return FALSE;
  a->value_last = s->i - 1;
  return TRUE;
}

static void clause_free(gpointer p) {
  g_array_free(p, TRUE);
}

static void filter_clear(filter *f) {
  if (f->clauses != NULL)
    g_ptr_array_free(f->clauses, TRUE);
  f->clauses = NULL;
}

/* expression = clause { '||' clause } [ ';' ( 'return' errno |
 *                                             'user-notify' ) ]
 * clause = atom { '&&' atom } */
static gboolean parse_expression(stmt *s, filter *f, GError **error) {
  f->conditional = TRUE;
  f->clauses = g_ptr_array_new_with_free_func(clause_free);
  for (;;) {
    GArray *clause = g_array_new(FALSE, FALSE, sizeof(atom));
    g_ptr_array_add(f->clauses, clause);
    for (;;) {
      atom a = {0};
      if (!parse_atom(s, &a, error))
        return FALSE;
      g_array_append_val(clause, a);
      if (!peek_is(s, SBX_TOK_AND))
        break;
      s->i++;
    }
    if (!peek_is(s, SBX_TOK_OR))
      break;
    s->i++;
  }
  if (peek_is(s, SBX_TOK_SEMICOLON)) {
    s->i++;
    if (at_end(s)) {
      end_error(error, s, SBX_POLICY_ERROR_SYNTAX,
                "missing 'return ERRNO' after ';'");
      return FALSE;
    }
    f->action_tok = s->i;
    if (sbx_token_is(peek(s), "user-notify")) {
      /* The calls the expression does not match go to a supervisor. */
      s->i++;
      f->action = (sbx_action){SBX_ACTION_USER_NOTIF, 0};
    } else if (sbx_token_is(peek(s), "return")) {
      s->i++;
      if (!parse_return(s, &f->action, error))
        return FALSE;
    } else {
      span_error(error, s, SBX_POLICY_ERROR_SYNTAX, s->i, s->i,
                 "only 'return ERRNO' or 'user-notify' may follow ';' (what "
                 "calls the expression does not match get), not '%.*s'",
                 (int)peek(s)->len, peek(s)->text);
      return FALSE;
    }
    f->has_else = TRUE;
  }
  return TRUE;
}

/* filter = expression | action */
static gboolean parse_filter(stmt *s, guint colon, filter *f, GError **error) {
  if (at_end(s)) {
    span_error(error, s, SBX_POLICY_ERROR_SYNTAX, colon, colon,
               "missing filter after ':' (expected 1, an action, or an "
               "expression on arg0..arg5)");
    return FALSE;
  }
  if (peek_is(s, SBX_TOK_LBRACE)) {
    span_error(error, s, SBX_POLICY_ERROR_SYNTAX, s->i, s->i,
               "filter lists '{ ... }' are not supported: write one "
               "expression, optionally followed by '; return ERRNO'");
    return FALSE;
  }
  if (is_argument(peek(s)))
    return parse_expression(s, f, error);
  f->conditional = FALSE;
  f->action_tok = s->i;
  return parse_action(s, &f->action, error);
}

/* ---- rules ------------------------------------------------------------- */

static void rule_clear(sbx_rule *r) {
  for (size_t k = 0; k < r->n_alts; k++)
    g_free(r->alts[k].cmps);
  g_free(r->alts);
  g_free(r->name);
  g_free(r->file);
  memset(r, 0, sizeof(*r));
}

static gboolean actions_equal(sbx_action a, sbx_action b) {
  return a.kind == b.kind && a.data == b.data;
}

static gboolean rules_equal(const pending_rule *a, const pending_rule *b) {
  if (a->rule.n_alts != b->rule.n_alts ||
      a->mismatch_is_default != b->mismatch_is_default ||
      !actions_equal(a->rule.on_match, b->rule.on_match))
    return FALSE;
  if (!a->mismatch_is_default &&
      !actions_equal(a->rule.on_mismatch, b->rule.on_mismatch))
    return FALSE;
  for (size_t k = 0; k < a->rule.n_alts; k++) {
    const sbx_conjunction *x = &a->rule.alts[k], *y = &b->rule.alts[k];
    if (x->n_cmps != y->n_cmps)
      return FALSE;
    for (size_t c = 0; c < x->n_cmps; c++) {
      const sbx_cmp *p = &x->cmps[c], *q = &y->cmps[c];
      if (p->arg != q->arg || p->op != q->op || p->value != q->value ||
          p->self_pid != q->self_pid)
        return FALSE;
    }
  }
  return TRUE;
}

static void add_duplicate_note(parser *p, const pending_rule *dup,
                               const pending_rule *first) {
  if (p->notes == NULL)
    return;
  sbx_policy_duplicate *d = g_new0(sbx_policy_duplicate, 1);
  d->name = g_strdup(dup->rule.name);
  d->here.file = g_strdup(dup->rule.file);
  d->here.line = dup->rule.line;
  d->first.file = g_strdup(first->rule.file);
  d->first.line = first->rule.line;
  g_ptr_array_add(p->notes->duplicates, d);
}

/* Takes ownership of r. */
static gboolean add_rule(stmt *s, pending_rule *r, guint name_tok,
                         GError **error) {
  parser *p = s->p;
  gpointer found = g_hash_table_lookup(p->by_nr, GINT_TO_POINTER(r->rule.nr));
  if (found != NULL) {
    pending_rule *first =
        &g_array_index(p->rules, pending_rule, GPOINTER_TO_UINT(found) - 1);
    gboolean same = rules_equal(first, r);
    if (same)
      add_duplicate_note(p, r, first);
    else
      span_error(error, s, SBX_POLICY_ERROR_CONFLICT, name_tok, name_tok,
                 "conflicting rule for %s: it is already defined at %s:%u "
                 "(a system call may have one rule)",
                 r->rule.name, first->rule.file, first->rule.line);
    rule_clear(&r->rule);
    return same;
  }
  g_array_append_val(p->rules, *r);
  g_hash_table_insert(p->by_nr, GINT_TO_POINTER(r->rule.nr),
                      GUINT_TO_POINTER(p->rules->len));
  return TRUE;
}

/* Builds the rule of one system call from a parsed filter, checking the
 * arguments against that system call's signature. */
static gboolean instantiate(stmt *s, int nr, guint name_tok, const filter *f,
                            GError **error) {
  parser *p = s->p;
  const char *name = sbx_syscall_name(nr);
  pending_rule r = {0};
  r.rule.nr = nr;
  r.rule.name = g_strdup(name);
  r.rule.file = g_strdup(s->src->name);
  r.rule.line = tok(s, 0)->line;
  if (!f->conditional) {
    if (p->denylist && f->action.kind != SBX_ACTION_ERRNO) {
      span_error(error, s, SBX_POLICY_ERROR_CONFLICT, f->action_tok,
                 s->toks->len - 1,
                 "a @denylist policy may only deny: write 'return ERRNO'");
      rule_clear(&r.rule);
      return FALSE;
    }
    r.rule.on_match = r.rule.on_mismatch = f->action;
    return add_rule(s, &r, name_tok, error);
  }
  if (p->denylist && (!f->has_else || f->action.kind != SBX_ACTION_ERRNO)) {
    end_error(error, s, SBX_POLICY_ERROR_CONFLICT,
              "in a @denylist policy an expression must end in "
              "'; return ERRNO' (the errno for calls it matches)");
    rule_clear(&r.rule);
    return FALSE;
  }
  int nargs = sbx_syscall_arg_count(nr);
  r.rule.n_alts = f->clauses->len;
  r.rule.alts = g_new0(sbx_conjunction, r.rule.n_alts);
  for (guint k = 0; k < f->clauses->len; k++) {
    GArray *clause = g_ptr_array_index(f->clauses, k);
    sbx_conjunction *conj = &r.rule.alts[k];
    conj->n_cmps = clause->len;
    conj->cmps = g_new0(sbx_cmp, clause->len);
    for (guint c = 0; c < clause->len; c++) {
      const atom *a = &g_array_index(clause, atom, c);
      if (nargs >= 0 && a->arg >= (unsigned)nargs) {
        if (nargs == 0)
          span_error(error, s, SBX_POLICY_ERROR_INVALID, a->arg_tok, a->arg_tok,
                     "%s takes no arguments; there is no arg%u", name, a->arg);
        else
          span_error(error, s, SBX_POLICY_ERROR_INVALID, a->arg_tok, a->arg_tok,
                     "%s takes %d argument%s (arg0 to arg%d); there is no "
                     "arg%u",
                     name, nargs, nargs == 1 ? "" : "s", nargs - 1, a->arg);
        rule_clear(&r.rule);
        return FALSE;
      }
      gboolean is32 = sbx_syscall_arg_is_32bit(nr, a->arg);
      uint32_t upper = (uint32_t)(a->value >> 32);
      if (is32 && upper != 0 && upper != UINT32_MAX) {
        span_error(error, s, SBX_POLICY_ERROR_INVALID, a->value_first,
                   a->value_last,
                   "0x%" G_GINT64_MODIFIER
                   "x does not fit in argument %u "
                   "of %s, which is int-sized: the kernel reads only its "
                   "low 32 bits",
                   a->value, a->arg, name);
        rule_clear(&r.rule);
        return FALSE;
      }
      conj->cmps[c] = (sbx_cmp){.arg = (uint8_t)a->arg,
                                .arg_is_32bit = is32,
                                .op = a->op,
                                .value = a->value,
                                .self_pid = a->self_pid};
    }
  }
  if (p->denylist) {
    r.rule.on_match = f->action;
    r.rule.on_mismatch = (sbx_action){SBX_ACTION_ALLOW, 0};
  } else {
    r.rule.on_match = (sbx_action){SBX_ACTION_ALLOW, 0};
    if (f->has_else)
      r.rule.on_mismatch = f->action;
    else
      r.mismatch_is_default = TRUE;
  }
  return add_rule(s, &r, name_tok, error);
}

/* ---- statements -------------------------------------------------------- */

/* [arch=NAME,NAME] after a system call name: minijail's way of writing one
 * file for several architectures. Sets *applies to whether x86-64 is
 * named. */
static gboolean parse_metadata(stmt *s, gboolean *applies, GError **error) {
  guint open = s->i++;
  *applies = TRUE;
  gboolean seen_arch = FALSE;
  for (;;) {
    if (at_end(s) || peek(s)->type != SBX_TOK_WORD) {
      if (at_end(s))
        end_error(error, s, SBX_POLICY_ERROR_SYNTAX, "missing metadata key");
      else
        span_error(error, s, SBX_POLICY_ERROR_SYNTAX, s->i, s->i,
                   "expected a metadata key such as 'arch'");
      return FALSE;
    }
    if (!sbx_token_is(peek(s), "arch")) {
      span_error(error, s, SBX_POLICY_ERROR_SYNTAX, s->i, s->i,
                 "unknown metadata key '%.*s' (only 'arch' is known)",
                 (int)peek(s)->len, peek(s)->text);
      return FALSE;
    }
    if (seen_arch) {
      span_error(error, s, SBX_POLICY_ERROR_CONFLICT, s->i, s->i,
                 "metadata key 'arch' given twice");
      return FALSE;
    }
    seen_arch = TRUE;
    s->i++;
    if (!peek_is(s, SBX_TOK_EQUAL)) {
      span_error(error, s, SBX_POLICY_ERROR_SYNTAX, s->i - 1, s->i - 1,
                 "expected '=' after 'arch'");
      return FALSE;
    }
    s->i++;
    gboolean x86_64 = FALSE;
    for (;;) {
      if (!peek_is(s, SBX_TOK_WORD)) {
        if (at_end(s))
          end_error(error, s, SBX_POLICY_ERROR_SYNTAX,
                    "missing architecture name");
        else
          span_error(error, s, SBX_POLICY_ERROR_SYNTAX, s->i, s->i,
                     "expected an architecture name");
        return FALSE;
      }
      if (sbx_token_is(peek(s), "x86_64") || sbx_token_is(peek(s), "amd64"))
        x86_64 = TRUE;
      s->i++;
      if (!peek_is(s, SBX_TOK_COMMA))
        break;
      s->i++;
    }
    *applies = x86_64;
    if (!peek_is(s, SBX_TOK_SEMICOLON))
      break;
    s->i++;
  }
  if (!peek_is(s, SBX_TOK_RBRACKET)) {
    span_error(error, s, SBX_POLICY_ERROR_SYNTAX, open, open, "unclosed '['");
    return FALSE;
  }
  s->i++;
  return TRUE;
}

typedef struct {
  int nr;
  guint tok; /* where the name is written */
} named_syscall;

/* descriptor = NAME [ metadata ]. Appends a named_syscall to names. */
static gboolean parse_descriptor(stmt *s, GArray *names, GError **error) {
  if (at_end(s)) {
    end_error(error, s, SBX_POLICY_ERROR_SYNTAX, "missing system call name");
    return FALSE;
  }
  const sbx_token *t = peek(s);
  if (t->type == SBX_TOK_NUMBER) {
    span_error(error, s, SBX_POLICY_ERROR_SYNTAX, s->i, s->i,
               "system calls are written by name, not number ('%.*s')",
               (int)t->len, t->text);
    return FALSE;
  }
  if (t->type != SBX_TOK_WORD) {
    span_error(error, s, SBX_POLICY_ERROR_SYNTAX, s->i, s->i,
               "expected a system call name, not '%.*s'", (int)t->len, t->text);
    return FALSE;
  }
  if (memchr(t->text, '@', t->len) != NULL) {
    span_error(error, s, SBX_POLICY_ERROR_SYNTAX, s->i, s->i,
               "system call groups such as '%.*s' are not supported; list "
               "the system calls",
               (int)t->len, t->text);
    return FALSE;
  }
  char *name = tok_text(t);
  int nr = sbx_syscall_number(name);
  if (nr < 0)
    span_error(error, s, SBX_POLICY_ERROR_UNKNOWN_SYSCALL, s->i, s->i,
               "unknown system call '%s' (not an x86-64 system call)", name);
  g_free(name);
  if (nr < 0)
    return FALSE;
  guint at = s->i++;
  gboolean applies = TRUE;
  if (peek_is(s, SBX_TOK_LBRACKET) && !parse_metadata(s, &applies, error))
    return FALSE;
  if (applies) {
    named_syscall n = {nr, at};
    g_array_append_val(names, n);
  }
  return TRUE;
}

/* statement = ( descriptor | '{' descriptor { ',' descriptor } '}' )
 *             ':' filter */
static gboolean parse_rule_statement(stmt *s, GError **error) {
  GArray *names = g_array_new(FALSE, FALSE, sizeof(named_syscall));
  filter f = {0};
  gboolean ok = FALSE;
  if (peek_is(s, SBX_TOK_LBRACE)) {
    guint open = s->i++;
    for (;;) {
      if (!parse_descriptor(s, names, error))
        goto out;
      if (!peek_is(s, SBX_TOK_COMMA))
        break;
      s->i++;
    }
    if (!peek_is(s, SBX_TOK_RBRACE)) {
      span_error(error, s, SBX_POLICY_ERROR_SYNTAX, open, open,
                 "unclosed '{' (expected ',' or '}' after a system call "
                 "name)");
      goto out;
    }
    s->i++;
  } else if (!parse_descriptor(s, names, error)) {
    goto out;
  }
  if (!peek_is(s, SBX_TOK_COLON)) {
    if (at_end(s))
      end_error(error, s, SBX_POLICY_ERROR_SYNTAX,
                "missing ':' after the system call name");
    else
      span_error(error, s, SBX_POLICY_ERROR_SYNTAX, s->i, s->i,
                 "expected ':' after the system call name, not '%.*s'",
                 (int)peek(s)->len, peek(s)->text);
    goto out;
  }
  guint colon = s->i++;
  if (!parse_filter(s, colon, &f, error))
    goto out;
  if (!at_end(s)) {
    span_error(error, s, SBX_POLICY_ERROR_SYNTAX, s->i, s->toks->len - 1,
               "unexpected '%.*s' after the filter", (int)peek(s)->len,
               peek(s)->text);
    goto out;
  }
  for (guint k = 0; k < names->len; k++) {
    const named_syscall *n = &g_array_index(names, named_syscall, k);
    if (!instantiate(s, n->nr, n->tok, &f, error))
      goto out;
  }
  ok = TRUE;
out:
  filter_clear(&f);
  g_array_free(names, TRUE);
  return ok;
}

/* ---- directives -------------------------------------------------------- */

static gboolean parse_source(parser *p, sbx_policy_source *src, unsigned depth,
                             GError **error);

/* Resolves the PATH token of @include or @frequency. */
static char *resolve_path(stmt *s, const char *directive, GError **error) {
  if (s->toks->len < 2) {
    end_error(error, s, SBX_POLICY_ERROR_SYNTAX, "missing path after %s",
              directive);
    return NULL;
  }
  const sbx_token *t = tok(s, 1);
  if (t->type != SBX_TOK_PATH || t->len < 2 ||
      !(t->text[0] == '/' || (t->text[0] == '.' && t->text[1] == '/'))) {
    span_error(error, s, SBX_POLICY_ERROR_SYNTAX, 1, 1,
               "%s needs a path that starts with '/' or './' (relative "
               "paths resolve against this file's directory), not '%.*s'",
               directive, (int)t->len, t->text);
    return NULL;
  }
  if (s->toks->len > 2) {
    span_error(error, s, SBX_POLICY_ERROR_SYNTAX, 2, s->toks->len - 1,
               "unexpected '%.*s' after the path", (int)tok(s, 2)->len,
               tok(s, 2)->text);
    return NULL;
  }
  if (s->src->dir == NULL) {
    span_error(error, s, SBX_POLICY_ERROR_INCLUDE, 0, 0,
               "%s is refused: this policy text was given without an "
               "include directory",
               directive);
    return NULL;
  }
  char *text = tok_text(t);
  char *path = g_canonicalize_filename(text, s->src->dir);
  g_free(text);
  return path;
}

/* Appends "included from FILE:LINE" to an error raised in a nested file. */
static void note_included_from(GError **error, const stmt *s) {
  if (error == NULL || *error == NULL)
    return;
  char *m = g_strdup_printf("%s\n  included from %s:%u", (*error)->message,
                            s->src->name, tok(s, 0)->line);
  g_free((*error)->message);
  (*error)->message = m;
}

static gboolean handle_include(stmt *s, unsigned depth, GError **error) {
  parser *p = s->p;
  char *path = resolve_path(s, "@include", error);
  if (path == NULL)
    return FALSE;
  if (depth >= SBX_POLICY_MAX_INCLUDE_DEPTH) {
    span_error(error, s, SBX_POLICY_ERROR_INCLUDE, 1, 1,
               "@include nested too deep: at most %d files may include one "
               "another",
               SBX_POLICY_MAX_INCLUDE_DEPTH);
    g_free(path);
    return FALSE;
  }
  GError *local = NULL;
  char *dir = g_path_get_dirname(path);
  sbx_policy_source *inc = sbx_policy_source_open(path, path, dir, &local);
  g_free(dir);
  if (inc == NULL) {
    span_error(error, s, SBX_POLICY_ERROR_INCLUDE, 1, 1, "@include failed: %s",
               local->message);
    g_error_free(local);
    g_free(path);
    return FALSE;
  }
  for (guint k = 0; k < p->stack->len; k++) {
    const sbx_policy_source *open = g_ptr_array_index(p->stack, k);
    if (open->ino != 0 && open->dev == inc->dev && open->ino == inc->ino) {
      span_error(error, s, SBX_POLICY_ERROR_INCLUDE, 1, 1,
                 "@include cycle: %s is already being read (%s), so it "
                 "would include itself",
                 path, open->name);
      sbx_policy_source_free(inc);
      g_free(path);
      return FALSE;
    }
  }
  g_free(path);
  g_ptr_array_add(p->stack, inc);
  gboolean ok = parse_source(p, inc, depth + 1, error);
  g_ptr_array_remove_index(p->stack, p->stack->len - 1);
  sbx_policy_source_free(inc);
  if (!ok)
    note_included_from(error, s);
  return ok;
}

/* A frequency file: "name: count" lines that weigh the BPF layout. */
static gboolean parse_frequency_source(parser *p, sbx_policy_source *src,
                                       GError **error) {
  GArray *toks = g_array_new(FALSE, FALSE, sizeof(sbx_token));
  stmt s = {.p = p, .src = src, .toks = toks};
  size_t next = 0;
  gboolean ok = FALSE;
  for (;;) {
    g_array_set_size(toks, 0);
    s.i = 0;
    if (!sbx_policy_lex_statement(src, &next, toks, error))
      goto out;
    if (toks->len == 0)
      break;
    if (tok(&s, 0)->type != SBX_TOK_WORD) {
      span_error(error, &s, SBX_POLICY_ERROR_SYNTAX, 0, 0,
                 "expected 'syscall: count'");
      goto out;
    }
    char *name = tok_text(tok(&s, 0));
    int nr = sbx_syscall_number(name);
    if (nr < 0)
      span_error(error, &s, SBX_POLICY_ERROR_UNKNOWN_SYSCALL, 0, 0,
                 "unknown system call '%s' (not an x86-64 system call)", name);
    g_free(name);
    if (nr < 0)
      goto out;
    if (toks->len < 2 || tok(&s, 1)->type != SBX_TOK_COLON) {
      if (toks->len < 2)
        end_error(error, &s, SBX_POLICY_ERROR_SYNTAX,
                  "missing ':' after the system call name");
      else
        span_error(error, &s, SBX_POLICY_ERROR_SYNTAX, 1, 1,
                   "expected ':' after the system call name");
      goto out;
    }
    if (toks->len < 3) {
      end_error(error, &s, SBX_POLICY_ERROR_SYNTAX, "missing count after ':'");
      goto out;
    }
    const sbx_token *count = tok(&s, 2);
    if (count->type != SBX_TOK_NUMBER || count->text[0] == '-' ||
        count->number > UINT32_MAX) {
      span_error(error, &s, SBX_POLICY_ERROR_INVALID, 2, 2,
                 "invalid count '%.*s' (expected 0 to %u)", (int)count->len,
                 count->text, UINT32_MAX);
      goto out;
    }
    if (toks->len > 3) {
      span_error(error, &s, SBX_POLICY_ERROR_SYNTAX, 3, toks->len - 1,
                 "unexpected '%.*s' after the count", (int)tok(&s, 3)->len,
                 tok(&s, 3)->text);
      goto out;
    }
    if (p->frequency == NULL)
      p->frequency = g_new0(uint32_t, sbx_syscall_max());
    uint64_t sum = (uint64_t)p->frequency[nr] + count->number;
    p->frequency[nr] = sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
  }
  ok = TRUE;
out:
  g_array_free(toks, TRUE);
  return ok;
}

static gboolean handle_frequency(stmt *s, GError **error) {
  char *path = resolve_path(s, "@frequency", error);
  if (path == NULL)
    return FALSE;
  GError *local = NULL;
  sbx_policy_source *src = sbx_policy_source_open(path, path, NULL, &local);
  g_free(path);
  if (src == NULL) {
    span_error(error, s, SBX_POLICY_ERROR_INCLUDE, 1, 1,
               "@frequency failed: %s", local->message);
    g_error_free(local);
    return FALSE;
  }
  gboolean ok = parse_frequency_source(s->p, src, error);
  sbx_policy_source_free(src);
  if (!ok)
    note_included_from(error, s);
  return ok;
}

static gboolean handle_default(stmt *s, GError **error) {
  parser *p = s->p;
  if (p->denylist) {
    span_error(error, s, SBX_POLICY_ERROR_CONFLICT, 0, s->toks->len - 1,
               "@default cannot be used in a @denylist policy, whose "
               "default is allow");
    return FALSE;
  }
  if (p->default_given) {
    span_error(error, s, SBX_POLICY_ERROR_CONFLICT, 0, s->toks->len - 1,
               "@default given twice; the first is at %s:%u", p->default_file,
               p->default_line);
    return FALSE;
  }
  s->i = 1;
  if (at_end(s)) {
    end_error(error, s, SBX_POLICY_ERROR_SYNTAX,
              "missing action after "
              "@default");
    return FALSE;
  }
  sbx_action action;
  if (!parse_action(s, &action, error))
    return FALSE;
  if (!at_end(s)) {
    span_error(error, s, SBX_POLICY_ERROR_SYNTAX, s->i, s->toks->len - 1,
               "unexpected '%.*s' after the action", (int)peek(s)->len,
               peek(s)->text);
    return FALSE;
  }
  p->default_given = TRUE;
  p->default_action = action;
  p->default_file = g_strdup(s->src->name);
  p->default_line = tok(s, 0)->line;
  if (p->notes != NULL) {
    p->notes->default_given = TRUE;
    p->notes->default_at.file = g_strdup(s->src->name);
    p->notes->default_at.line = p->default_line;
  }
  return TRUE;
}

/* @denylist: the file is a list of denials over a default of allow. It
 * must be the first statement of every file of such a policy, and may not
 * appear in a file included into an allowlist policy. */
static gboolean handle_denylist(stmt *s, unsigned depth, gboolean first,
                                GError **error) {
  parser *p = s->p;
  if (s->toks->len > 1) {
    span_error(error, s, SBX_POLICY_ERROR_SYNTAX, 1, s->toks->len - 1,
               "unexpected '%.*s' after @denylist", (int)tok(s, 1)->len,
               tok(s, 1)->text);
    return FALSE;
  }
  if (!first) {
    span_error(error, s, SBX_POLICY_ERROR_SYNTAX, 0, 0,
               "@denylist must come before any other statement of the file");
    return FALSE;
  }
  if (depth > 1 && !p->denylist) {
    span_error(error, s, SBX_POLICY_ERROR_CONFLICT, 0, 0,
               "@denylist in a file included into an allowlist policy");
    return FALSE;
  }
  if (depth == 1) {
    p->denylist = TRUE;
    if (p->notes != NULL) {
      p->notes->denylist = TRUE;
      p->notes->denylist_at.file = g_strdup(s->src->name);
      p->notes->denylist_at.line = tok(s, 0)->line;
    }
  }
  return TRUE;
}

static gboolean parse_source(parser *p, sbx_policy_source *src, unsigned depth,
                             GError **error) {
  GArray *toks = g_array_new(FALSE, FALSE, sizeof(sbx_token));
  stmt s = {.p = p, .src = src, .toks = toks};
  size_t next = 0;
  gboolean first = TRUE;
  gboolean ok = FALSE;
  for (;;) {
    g_array_set_size(toks, 0);
    s.i = 0;
    if (!sbx_policy_lex_statement(src, &next, toks, error))
      goto out;
    if (toks->len == 0)
      break;
    const sbx_token *t0 = tok(&s, 0);
    gboolean is_denylist =
        t0->type == SBX_TOK_DIRECTIVE && sbx_token_is(t0, "@denylist");
    if (first && !is_denylist && depth > 1 && p->denylist) {
      span_error(error, &s, SBX_POLICY_ERROR_CONFLICT, 0, 0,
                 "this file is included into a @denylist policy, so it must "
                 "start with @denylist too");
      goto out;
    }
    gboolean done;
    if (is_denylist) {
      done = handle_denylist(&s, depth, first, error);
    } else if (t0->type == SBX_TOK_DIRECTIVE) {
      if (sbx_token_is(t0, "@include")) {
        done = handle_include(&s, depth, error);
      } else if (sbx_token_is(t0, "@frequency")) {
        done = handle_frequency(&s, error);
      } else if (sbx_token_is(t0, "@default")) {
        done = handle_default(&s, error);
      } else {
        span_error(error, &s, SBX_POLICY_ERROR_SYNTAX, 0, 0,
                   "unknown directive '%.*s' (expected @include, @frequency, "
                   "@default or @denylist)",
                   (int)t0->len, t0->text);
        done = FALSE;
      }
    } else {
      done = parse_rule_statement(&s, error);
    }
    if (!done)
      goto out;
    first = FALSE;
  }
  ok = TRUE;
out:
  g_array_free(toks, TRUE);
  return ok;
}

/* ---- entry points ------------------------------------------------------ */

static int compare_rules(gconstpointer a, gconstpointer b) {
  int x = ((const pending_rule *)a)->rule.nr;
  int y = ((const pending_rule *)b)->rule.nr;
  return (x > y) - (x < y);
}

static void parser_clear(parser *p) {
  if (p->rules != NULL) {
    for (guint k = 0; k < p->rules->len; k++)
      rule_clear(&g_array_index(p->rules, pending_rule, k).rule);
    g_array_free(p->rules, TRUE);
  }
  if (p->by_nr != NULL)
    g_hash_table_destroy(p->by_nr);
  if (p->stack != NULL)
    g_ptr_array_free(p->stack, TRUE);
  g_free(p->frequency);
  g_free(p->default_file);
  memset(p, 0, sizeof(*p));
}

/* Parses src (owned) as the top-level file and builds the policy. */
static sbx_policy *parse_top(sbx_policy_source *src, sbx_policy_notes *notes,
                             GError **error) {
  parser p = {0};
  p.rules = g_array_new(FALSE, FALSE, sizeof(pending_rule));
  p.by_nr = g_hash_table_new(g_direct_hash, g_direct_equal);
  p.stack = g_ptr_array_new();
  p.notes = notes;
  g_ptr_array_add(p.stack, src);
  gboolean ok = parse_source(&p, src, 1, error);
  sbx_policy_source_free(src);
  if (!ok) {
    parser_clear(&p);
    return NULL;
  }
  sbx_action def = (sbx_action){SBX_ACTION_KILL_PROCESS, 0};
  if (p.denylist)
    def = (sbx_action){SBX_ACTION_ALLOW, 0};
  else if (p.default_given)
    def = p.default_action;
  g_array_sort(p.rules, compare_rules);

  sbx_policy *policy = g_new0(sbx_policy, 1);
  policy->default_action = def;
  policy->n_rules = p.rules->len;
  policy->rules = g_new0(sbx_rule, MAX(policy->n_rules, 1));
  for (guint k = 0; k < p.rules->len; k++) {
    pending_rule *r = &g_array_index(p.rules, pending_rule, k);
    if (r->mismatch_is_default)
      r->rule.on_mismatch = def;
    policy->rules[k] = r->rule;
  }
  g_array_set_size(p.rules, 0); /* ownership moved to policy */
  if (p.frequency != NULL) {
    policy->frequency = p.frequency;
    policy->n_frequency = (size_t)sbx_syscall_max();
    p.frequency = NULL;
  }
  parser_clear(&p);
  return policy;
}

static void notes_init(sbx_policy_notes *notes) {
  memset(notes, 0, sizeof(*notes));
  notes->duplicates = g_ptr_array_new();
}

static void duplicate_free(sbx_policy_duplicate *d) {
  g_free(d->name);
  g_free(d->here.file);
  g_free(d->first.file);
  g_free(d);
}

void sbx_policy_notes_clear(sbx_policy_notes *notes) {
  if (notes == NULL)
    return;
  if (notes->duplicates != NULL) {
    for (guint k = 0; k < notes->duplicates->len; k++)
      duplicate_free(g_ptr_array_index(notes->duplicates, k));
    g_ptr_array_free(notes->duplicates, TRUE);
  }
  g_free(notes->denylist_at.file);
  g_free(notes->default_at.file);
  memset(notes, 0, sizeof(*notes));
}

sbx_policy *sbx_policy_parse_file_with_notes(const char *path,
                                             sbx_policy_notes *notes,
                                             GError **error) {
  g_return_val_if_fail(path != NULL, NULL);
  if (notes != NULL)
    notes_init(notes);
  char *dirname = g_path_get_dirname(path);
  char *dir = g_canonicalize_filename(dirname, NULL);
  g_free(dirname);
  sbx_policy_source *src = sbx_policy_source_open(path, path, dir, error);
  g_free(dir);
  if (src == NULL)
    return NULL;
  return parse_top(src, notes, error);
}

sbx_policy *sbx_policy_parse_file(const char *path, GError **error) {
  return sbx_policy_parse_file_with_notes(path, NULL, error);
}

sbx_policy *sbx_policy_parse_string(const char *text, const char *display_name,
                                    const char *include_dir, GError **error) {
  g_return_val_if_fail(text != NULL, NULL);
  char *dir = include_dir ? g_canonicalize_filename(include_dir, NULL) : NULL;
  sbx_policy_source *src = sbx_policy_source_new(
      text, display_name ? display_name : "<string>", dir);
  g_free(dir);
  return parse_top(src, NULL, error);
}
