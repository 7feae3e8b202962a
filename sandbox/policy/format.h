/* A parsed policy written back as policy text.
 *
 * Why it exists: a policy that sbx changes (a learned policy allows what a
 * worker was refused, sandbox/api/learn.h) must be written in the one
 * language the parser reads, so that the file is reviewed, versioned and
 * loaded like any other. The text is canonical, not the original: one rule
 * per line in system-call order, numbers in hex, includes flattened, each
 * rule followed by a comment naming where it was written.
 *
 * What it guarantees: parsing the text gives a policy with the same
 * meaning (sbx_policy_eval agrees on every input). What it refuses: a rule
 * the language cannot say outside @denylist (a condition whose match is
 * not an allow); the error names the rule and its line.
 */
#ifndef SBX_POLICY_FORMAT_H_
#define SBX_POLICY_FORMAT_H_

#include <glib.h>

#include "sandbox/policy/policy.h"

/* The text of policy, comment lines first when header is not NULL (each
 * of its lines is written after "# "). NULL with *error set when a rule
 * cannot be written. */
char *sbx_policy_format(const sbx_policy *policy, const char *header,
                        GError **error);

#endif /* SBX_POLICY_FORMAT_H_ */
