/* Tokens of the policy language, one statement at a time.
 *
 * A statement is one line, or several joined by a backslash at the very
 * end of a line. Comments run from '#' to the end of the line.
 *
 * Module-internal: used by the parser only.
 */
#ifndef SBX_POLICY_LEXER_H_
#define SBX_POLICY_LEXER_H_

#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "sandbox/policy/source.h"

typedef enum {
  SBX_TOK_WORD,      /* names, keywords, argN, action names */
  SBX_TOK_NUMBER,    /* decimal, 0x hex or 0 octal, maybe negative */
  SBX_TOK_PATH,      /* /absolute or ./relative, for directives */
  SBX_TOK_DIRECTIVE, /* @include, @frequency, @default, @denylist, @... */
  SBX_TOK_OP,        /* == != < <= > >= & in */
  SBX_TOK_OR,        /* || */
  SBX_TOK_AND,       /* && */
  SBX_TOK_PIPE,      /* | */
  SBX_TOK_TILDE,     /* ~ */
  SBX_TOK_COLON,
  SBX_TOK_SEMICOLON,
  SBX_TOK_COMMA,
  SBX_TOK_EQUAL, /* = (metadata) */
  SBX_TOK_LPAREN,
  SBX_TOK_RPAREN,
  SBX_TOK_LBRACE,
  SBX_TOK_RBRACE,
  SBX_TOK_LBRACKET,
  SBX_TOK_RBRACKET,
} sbx_token_type;

typedef struct {
  sbx_token_type type;
  const char *text; /* points into the source line; not NUL-terminated */
  unsigned len;
  unsigned line;   /* 1-based */
  unsigned col;    /* 0-based byte offset in the line */
  uint64_t number; /* SBX_TOK_NUMBER: the value, negatives as two's
                      complement */
} sbx_token;

/* Reads the statement that starts at line index *next_line (0-based),
 * appends its tokens to tokens (a GArray of sbx_token) and advances
 * *next_line past it. Blank and comment-only lines are skipped. At the end
 * of the file it returns TRUE and appends nothing. */
gboolean sbx_policy_lex_statement(const sbx_policy_source *src,
                                  size_t *next_line, GArray *tokens,
                                  GError **error);

/* TRUE if the token's text is exactly word. */
gboolean sbx_token_is(const sbx_token *tok, const char *word);

#endif /* SBX_POLICY_LEXER_H_ */
