/* Warnings about policies that parse but probably do not mean well:
 * default-allow policies, dangerous system calls allowed for every
 * argument, repeated rules, and alternatives that can never matter.
 * `sbx-policy check` prints them.
 */
#ifndef SBX_POLICY_LINT_H_
#define SBX_POLICY_LINT_H_

#include <glib.h>

/* Parses the policy at path and returns its warnings, one string each, of
 * the form "FILE:LINE: warning: ...", in file and line order (an empty
 * array for a clean policy; free with g_ptr_array_unref). If the policy
 * does not parse, returns NULL and sets *error as sbx_policy_parse_file
 * does. */
GPtrArray *sbx_policy_lint_file(const char *path, GError **error);

#endif /* SBX_POLICY_LINT_H_ */
