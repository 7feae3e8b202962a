/* The policy lexer.
 *
 * Why it exists: the parser should see tokens with exact positions, so
 * every error can point at the text that caused it.
 *
 * Trusts: nothing. Refuses: characters outside the language, malformed or
 * out-of-range numbers, a backslash that is not the last character of its
 * line, and a continuation that runs past the end of the file.
 */
#include "sandbox/policy/lexer.h"

#include <string.h>

#include "sandbox/policy/parser.h"

static gboolean is_word_start(char c) {
  return g_ascii_isalpha(c) || c == '_';
}

/* minijail's identifiers also allow '-' and '@' (kill-process, group@ns). */
static gboolean is_word_char(char c) {
  return g_ascii_isalnum(c) || c == '_' || c == '-' || c == '@';
}

/* A token holds no NUL, so the loop stops at the end of a shorter word
 * and reads nothing past it. */
gboolean sbx_token_is(const sbx_token *tok, const char *word) {
  for (unsigned i = 0; i < tok->len; i++)
    if (word[i] != tok->text[i])
      return FALSE;
  return word[tok->len] == '\0';
}

static gboolean digit_value(char c, unsigned base, unsigned *out) {
  unsigned d;
  if (c >= '0' && c <= '9')
    d = (unsigned)(c - '0');
  else if (c >= 'a' && c <= 'f')
    d = (unsigned)(c - 'a' + 10);
  else if (c >= 'A' && c <= 'F')
    d = (unsigned)(c - 'A' + 10);
  else
    return FALSE;
  if (d >= base)
    return FALSE;
  *out = d;
  return TRUE;
}

/* Parses the text of a number token like C's strtoull with base 0, but
 * whole-token and strict: "08", "0x" and "12ab" are errors, not 0 or 12. */
static gboolean lex_number(const sbx_policy_source *src, sbx_token *tok,
                           GError **error) {
  const char *s = tok->text;
  unsigned len = tok->len;
  gboolean negative = FALSE;
  if (*s == '-') {
    negative = TRUE;
    s++;
    len--;
  }
  unsigned base = 10;
  const char *kind = "decimal";
  if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    kind = "hexadecimal";
    s += 2;
    len -= 2;
  } else if (len >= 2 && s[0] == '0') {
    base = 8;
    kind = "octal";
    s++;
    len--;
  }
  if (len == 0) {
    sbx_policy_source_error(error, SBX_POLICY_ERROR_SYNTAX, src, tok->line,
                            tok->col, tok->len, "invalid number '%.*s'",
                            (int)tok->len, tok->text);
    return FALSE;
  }
  uint64_t value = 0;
  for (unsigned i = 0; i < len; i++) {
    unsigned d;
    if (!digit_value(s[i], base, &d)) {
      sbx_policy_source_error(error, SBX_POLICY_ERROR_SYNTAX, src, tok->line,
                              tok->col, tok->len, "invalid %s number '%.*s'",
                              kind, (int)tok->len, tok->text);
      return FALSE;
    }
    if (value > (UINT64_MAX - d) / base) {
      sbx_policy_source_error(
          error, SBX_POLICY_ERROR_INVALID, src, tok->line, tok->col, tok->len,
          "number '%.*s' does not fit in 64 bits", (int)tok->len, tok->text);
      return FALSE;
    }
    value = value * base + d;
  }
  if (negative) {
    if (value > (UINT64_C(1) << 63)) {
      sbx_policy_source_error(
          error, SBX_POLICY_ERROR_INVALID, src, tok->line, tok->col, tok->len,
          "number '%.*s' is below -2^63", (int)tok->len, tok->text);
      return FALSE;
    }
    value = UINT64_C(0) - value;
  }
  tok->number = value;
  return TRUE;
}

typedef struct {
  const char *text;
  unsigned len;
  sbx_token_type type;
} sbx_punct;

#define PUNCT(text, type) \
  { text, sizeof(text) - 1, type }

/* Longest first, so "||" is not read as two "|". */
static const sbx_punct kPunct[] = {
    PUNCT("||", SBX_TOK_OR),       PUNCT("&&", SBX_TOK_AND),
    PUNCT("==", SBX_TOK_OP),       PUNCT("!=", SBX_TOK_OP),
    PUNCT("<=", SBX_TOK_OP),       PUNCT(">=", SBX_TOK_OP),
    PUNCT("<", SBX_TOK_OP),        PUNCT(">", SBX_TOK_OP),
    PUNCT("&", SBX_TOK_OP),        PUNCT("|", SBX_TOK_PIPE),
    PUNCT("~", SBX_TOK_TILDE),     PUNCT(":", SBX_TOK_COLON),
    PUNCT(";", SBX_TOK_SEMICOLON), PUNCT(",", SBX_TOK_COMMA),
    PUNCT("=", SBX_TOK_EQUAL),     PUNCT("(", SBX_TOK_LPAREN),
    PUNCT(")", SBX_TOK_RPAREN),    PUNCT("{", SBX_TOK_LBRACE),
    PUNCT("}", SBX_TOK_RBRACE),    PUNCT("[", SBX_TOK_LBRACKET),
    PUNCT("]", SBX_TOK_RBRACKET),
};

/* Tokenizes one physical line. *continued is set when the line ends with
 * a backslash (outside a comment). */
static gboolean lex_line(const sbx_policy_source *src, unsigned lineno,
                         GArray *tokens, gboolean *continued, GError **error) {
  const char *line = src->lines[lineno - 1];
  size_t n = strlen(line);
  size_t i = 0;
  *continued = FALSE;
  while (i < n) {
    char c = line[i];
    if (c == ' ' || c == '\t' || c == '\v' || c == '\f') {
      i++;
      continue;
    }
    if (c == '#')
      break;
    if (c == '\\') {
      if (i + 1 == n) {
        *continued = TRUE;
        break;
      }
      sbx_policy_source_error(
          error, SBX_POLICY_ERROR_SYNTAX, src, lineno, (unsigned)i, 1,
          "a backslash continues a line only as its last character");
      return FALSE;
    }
    sbx_token tok = {.text = line + i, .line = lineno, .col = (unsigned)i};
    size_t j = i;
    const sbx_token *prev =
        tokens->len ? &g_array_index(tokens, sbx_token, tokens->len - 1) : NULL;
    if (prev != NULL && prev->type == SBX_TOK_DIRECTIVE &&
        (sbx_token_is(prev, "@include") || sbx_token_is(prev, "@frequency"))) {
      /* Whatever follows these directives is their path; the parser says
       * what is wrong with it. */
      while (j < n && !g_ascii_isspace(line[j]) && line[j] != '#')
        j++;
      tok.type = SBX_TOK_PATH;
      tok.len = (unsigned)(j - i);
    } else if (g_ascii_isdigit(c) ||
               (c == '-' && i + 1 < n && g_ascii_isdigit(line[i + 1]))) {
      j = i + 1;
      while (j < n && (g_ascii_isalnum(line[j]) || line[j] == '_'))
        j++;
      tok.type = SBX_TOK_NUMBER;
      tok.len = (unsigned)(j - i);
      if (!lex_number(src, &tok, error))
        return FALSE;
    } else if (is_word_start(c)) {
      while (j < n && is_word_char(line[j]))
        j++;
      tok.len = (unsigned)(j - i);
      tok.type = sbx_token_is(&tok, "in") ? SBX_TOK_OP : SBX_TOK_WORD;
    } else if (c == '@' && i + 1 < n && is_word_start(line[i + 1])) {
      j = i + 1;
      while (j < n && is_word_char(line[j]))
        j++;
      tok.type = SBX_TOK_DIRECTIVE;
      tok.len = (unsigned)(j - i);
    } else if (c == '/' || (c == '.' && i + 1 < n && line[i + 1] == '/')) {
      while (j < n && !g_ascii_isspace(line[j]))
        j++;
      tok.type = SBX_TOK_PATH;
      tok.len = (unsigned)(j - i);
    } else {
      const sbx_punct *match = NULL;
      for (size_t k = 0; k < G_N_ELEMENTS(kPunct); k++) {
        const sbx_punct *p = &kPunct[k];
        if (p->text[0] == c && (p->len == 1 || line[i + 1] == p->text[1])) {
          match = &kPunct[k];
          break;
        }
      }
      if (match == NULL) {
        if (g_ascii_isprint(c))
          sbx_policy_source_error(error, SBX_POLICY_ERROR_SYNTAX, src, lineno,
                                  (unsigned)i, 1, "unexpected character '%c'",
                                  c);
        else
          sbx_policy_source_error(error, SBX_POLICY_ERROR_SYNTAX, src, lineno,
                                  (unsigned)i, 1, "unexpected byte 0x%02x",
                                  (unsigned char)c);
        return FALSE;
      }
      tok.type = match->type;
      tok.len = match->len;
      j = i + tok.len;
    }
    g_array_append_val(tokens, tok);
    i = j;
  }
  return TRUE;
}

gboolean sbx_policy_lex_statement(const sbx_policy_source *src,
                                  size_t *next_line, GArray *tokens,
                                  GError **error) {
  guint start = tokens->len;
  while (*next_line < src->n_lines) {
    unsigned lineno = (unsigned)(*next_line + 1);
    gboolean continued;
    if (!lex_line(src, lineno, tokens, &continued, error))
      return FALSE;
    (*next_line)++;
    if (continued) {
      if (*next_line == src->n_lines) {
        sbx_policy_source_error(error, SBX_POLICY_ERROR_SYNTAX, src, lineno,
                                (unsigned)strlen(src->lines[lineno - 1]) - 1, 1,
                                "the line continues past the end of the file");
        return FALSE;
      }
      continue;
    }
    if (tokens->len > start)
      return TRUE;
  }
  return TRUE;
}
