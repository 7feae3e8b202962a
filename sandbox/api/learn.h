/* Learning mode for libsbx types: what each type was refused, written as a
 * profile and a policy that allow it.
 *
 * Why it exists: finding what a worker needs by trial (run, read the audit
 * log, add a rule) takes a run per refusal. With
 * sbx_sandbox_config.learn_dir (or SBX_LEARN_DIR), every type's last
 * seccomp layer notifies each call it would refuse and the broker lets it
 * through (sandbox/broker/verdicts.h), and the broker grants each file
 * request the type's rules refuse, keeping the rule that would have
 * granted it (server.h, learning). At sbx_sandbox_stop this file writes,
 * for each type that was refused anything:
 *   DIR/TYPE.learned.policy   the type's last layer as policy text
 *                             (format.h), each refused call's rule
 *                             widened to what it was seen doing (its
 *                             reviewed argument, arg_rules.h) or replaced
 *                             by an allow, the old rule in a comment;
 *   DIR/TYPE.learned.profile  the type's profile, its last seccomp layer
 *                             replaced by that file and its [broker]
 *                             rules extended by the rules learned.
 * Each is loaded and compiled again before it is kept. A host reruns with
 * .profile = "DIR/TYPE.learned.profile".
 *
 * What it trusts: the broker's record (the rules are the resolver's own
 * `allow` texts; the calls, the kernel's numbers). Learning lets a worker
 * do what it asks: only for trusted input.
 */
#ifndef SBX_API_LEARN_H_
#define SBX_API_LEARN_H_

#include <stddef.h>

#include <glib.h>

#include "sandbox/api/prepare.h"
#include "sandbox/policy/arg_rules.h"

/* The learning directory: the config's, else $SBX_LEARN_DIR, else NULL. */
const char *sbx_api_learn_dir(const char *configured);

/* Writes the files above for every type of `learned` (the broker's
 * record, sandbox/broker/server.h SBX_BROKER_LEARNED_TYPE) that has a rule
 * or a call, into dir, and says on stderr what it wrote. */
gboolean sbx_api_learn_write(const sbx_prepared_type *types, size_t n_types,
                             GVariant *learned, const char *dir,
                             GError **error);

/* One system call the learning run was refused, with what its arguments
 * held. */
typedef struct {
  int nr;
  sbx_arg_seen args[6];
} sbx_api_learned_call;

/* The policy text of policy with each of the calls allowed as far as its
 * reviewed argument was seen used (sbx_arg_rule_expression: "fcntl: ... ||
 * arg1 == F_GETPIPE_SZ"), or outright when it has none; the rule it
 * replaces stays in a comment. header goes in its first comment. */
char *sbx_api_learn_policy_text(const sbx_policy *policy,
                                const sbx_api_learned_call *calls,
                                size_t n_calls, const char *header,
                                GError **error);

#endif /* SBX_API_LEARN_H_ */
