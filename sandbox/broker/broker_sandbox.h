/* The broker's own sandbox: what a compromised broker could still reach.
 *
 * Why it exists: the broker parses hostile input all day. If a bug there
 * were exploited, the attacker should hold no more than the union of the
 * allowlists it serves: a Landlock ruleset with exactly those paths and
 * rights (no TCP, no abstract unix sockets, no signals out of its domain),
 * and a seccomp filter (sandbox/policy/builtin/broker.policy) allowing only
 * the calls its request loop makes.
 *
 * What it trusts: the allowlists. What it refuses: nothing here is
 * optional except Landlock on a kernel without it, which is reported, not
 * ignored: the error names the missing feature.
 */
#ifndef SBX_BROKER_BROKER_SANDBOX_H_
#define SBX_BROKER_BROKER_SANDBOX_H_

#include <stddef.h>

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

/* Confines the calling (broker) process, in this order: no_new_privs,
 * Landlock (landlock_restrict_self is not in broker.policy, so it must come
 * first), then `program` (from sbx_broker_sandbox_compile). Run after the
 * resolvers have opened their roots. */
gboolean sbx_broker_sandbox_self(const sbx_allowlist *const *lists,
                                 size_t n_lists,
                                 const sbx_bpf_program *program,
                                 GError **error);

#endif /* SBX_BROKER_BROKER_SANDBOX_H_ */
