/* The seccomp policy language: minijail's .policy syntax, parsed into the
 * sbx_policy of policy.h. The grammar, the meaning of every form and each
 * difference from minijail are in docs/policy-language.md.
 *
 * A policy that fails to parse never half-loads: the functions return NULL
 * and set *error to one message of the form
 *
 *     FILE:LINE:COL: message
 *         the offending line
 *         ^~~~
 *
 * The returned policy is owned by the caller (sbx_policy_free).
 */
#ifndef SBX_POLICY_PARSER_H_
#define SBX_POLICY_PARSER_H_

#include <glib.h>

#include "sandbox/policy/policy.h"

#define SBX_POLICY_ERROR (sbx_policy_error_quark())
GQuark sbx_policy_error_quark(void);

typedef enum {
  SBX_POLICY_ERROR_IO,               /* a file cannot be read */
  SBX_POLICY_ERROR_SYNTAX,           /* malformed text */
  SBX_POLICY_ERROR_UNKNOWN_SYSCALL,  /* name not in the x86-64 table */
  SBX_POLICY_ERROR_UNKNOWN_CONSTANT, /* name not in the constant tables */
  SBX_POLICY_ERROR_INVALID,          /* well-formed but out of range */
  SBX_POLICY_ERROR_INCLUDE,          /* @include/@frequency refused */
  SBX_POLICY_ERROR_CONFLICT,         /* two rules or directives disagree */
} sbx_policy_error_code;

/* Most files an @include chain may open, the top-level file included. */
#define SBX_POLICY_MAX_INCLUDE_DEPTH 10

/* Parses the policy file at path. Relative @include and @frequency paths
 * resolve against the directory of the file that names them. */
sbx_policy *sbx_policy_parse_file(const char *path, GError **error);

/* Parses policy text held in memory. display_name names it in messages and
 * in sbx_rule.file (NULL: "<string>"). include_dir is where the text's
 * relative @include and @frequency paths resolve; NULL refuses both
 * directives. */
sbx_policy *sbx_policy_parse_string(const char *text, const char *display_name,
                                    const char *include_dir, GError **error);

/* What the parser saw besides the rules, for the linter (lint.h). */
typedef struct {
  char *file;
  unsigned line;
} sbx_policy_location;

typedef struct {
  char *name;               /* the system call */
  sbx_policy_location here; /* the repeated, identical rule (ignored) */
  sbx_policy_location first;
} sbx_policy_duplicate;

typedef struct {
  bool denylist;                   /* @denylist given */
  sbx_policy_location denylist_at; /* valid when denylist */
  bool default_given;              /* @default given */
  sbx_policy_location default_at;  /* valid when default_given */
  GPtrArray *duplicates;           /* of sbx_policy_duplicate */
} sbx_policy_notes;

/* sbx_policy_parse_file, also filling *notes (cleared with
 * sbx_policy_notes_clear whatever the result). */
sbx_policy *sbx_policy_parse_file_with_notes(const char *path,
                                             sbx_policy_notes *notes,
                                             GError **error);
void sbx_policy_notes_clear(sbx_policy_notes *notes);

#endif /* SBX_POLICY_PARSER_H_ */
