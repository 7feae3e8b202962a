/* One policy or frequency file as the parser reads it: its name, its lines,
 * where its relative paths resolve, and the error format that points into
 * it (FILE:LINE:COL, the line, a caret).
 *
 * Module-internal: used by the lexer and the parser only.
 */
#ifndef SBX_POLICY_SOURCE_H_
#define SBX_POLICY_SOURCE_H_

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <glib.h>

/* Larger files are refused; real policies are a few kilobytes. */
#define SBX_POLICY_MAX_FILE_SIZE (4 * 1024 * 1024)

typedef struct {
  char *name;   /* as shown in messages and sbx_rule.file */
  char *dir;    /* base of relative paths; NULL: includes refused */
  char *text;   /* the contents, split in place into lines */
  char **lines; /* lines[i] is line i + 1, without its newline */
  size_t n_lines;
  dev_t dev; /* identity of the file, for include cycles */
  ino_t ino; /* (both 0 for text given in memory) */
} sbx_policy_source;

/* Reads a regular file of at most SBX_POLICY_MAX_FILE_SIZE bytes. name is
 * used in messages; dir may be NULL to refuse relative paths. The caller
 * frees the result with sbx_policy_source_free. On failure the message
 * names the path and the reason; code is SBX_POLICY_ERROR_IO. */
sbx_policy_source *sbx_policy_source_open(const char *path, const char *name,
                                          const char *dir, GError **error);

/* Wraps text held in memory (copied). */
sbx_policy_source *sbx_policy_source_new(const char *text, const char *name,
                                         const char *dir);

void sbx_policy_source_free(sbx_policy_source *src);

/* Sets *error to "NAME:LINE:COL: message" followed by the line and a caret
 * under columns col..col+len-1 (line is 1-based, col 0-based). line 0
 * means the file as a whole. */
void sbx_policy_source_error(GError **error, int code,
                             const sbx_policy_source *src, unsigned line,
                             unsigned col, unsigned len, const char *format,
                             ...) G_GNUC_PRINTF(7, 8);

#endif /* SBX_POLICY_SOURCE_H_ */
