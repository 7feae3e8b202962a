/* The broker's own sandbox: what a compromised broker could still reach.
 *
 * Why it exists: the broker parses hostile input all day. If a bug there
 * were exploited, the attacker should hold no more than the union of the
 * allowlists it serves: a Landlock ruleset with exactly those paths and
 * rights (no TCP, no abstract unix sockets, no signals out of its domain),
 * and a seccomp filter (sandbox/policy/builtin/broker.policy) allowing only
 * the calls its request loop makes.
 *
 * Both go on through the layers engine (sandbox/layers/apply.h), in its
 * one order: the filter first, then Landlock, so broker.policy allows
 * landlock_restrict_self (and nothing else of Landlock: no ruleset can be
 * made or widened, and a domain only narrows).
 *
 * What it trusts: the allowlists. What it refuses: nothing here is
 * optional except Landlock on a kernel without it; the broker's own
 * checks on the opened object remain.
 */
#ifndef SBX_BROKER_BROKER_SANDBOX_H_
#define SBX_BROKER_BROKER_SANDBOX_H_

#include <stddef.h>
#include <sys/types.h>

#include <glib.h>

#include "sandbox/files/permissions.h"
#include "sandbox/kernel/seccomp/bpf.h"

/* The Landlock rights an allowlist entry needs, on the path the broker
 * opens: the entry's directory for recursive entries, the file (or its
 * directory, for creating it) for exact ones. *on_parent is set when the
 * rule belongs on the parent directory. */
guint64 sbx_broker_landlock_rights(const sbx_allow_entry *entry,
                                   gboolean *on_parent);

/* The broker's seccomp program, compiled from the built-in broker.policy.
 * Runs in the host before the fork, so the broker only loads it. */
gboolean sbx_broker_sandbox_compile(sbx_bpf_program *out, GError **error);

/* Confines the calling (broker) process with the layers engine: dies
 * with parent, at most max_fds descriptors (0: no limit), a new session,
 * no_new_privs, undumpable, then `program` (from
 * sbx_broker_sandbox_compile) and a Landlock ruleset equal to the union
 * of lists. With program NULL (dangerously unsandboxed) only the process
 * settings are applied. It keeps its descriptors and capabilities (see
 * the flags in sandbox/layers/plan.h). Run after the resolvers have
 * opened their roots. */
gboolean sbx_broker_sandbox_self(const sbx_allowlist *const *lists,
                                 size_t n_lists, const sbx_bpf_program *program,
                                 unsigned max_fds, pid_t parent,
                                 GError **error);

#endif /* SBX_BROKER_BROKER_SANDBOX_H_ */
