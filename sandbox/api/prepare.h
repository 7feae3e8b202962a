/* One process type, made ready before anything is forked: its profile
 * loaded, its seccomp layers compiled, its broker allowlist built.
 *
 * Why it exists: the zygote host (sandbox.c) and the in-process entry
 * (self.c) start from the same profile and must reach the same layers, so
 * both prepare a type here.
 *
 * What it trusts: the host's configuration and the profile and policy
 * files it names (read now, never again: S35). What it refuses: a profile
 * or policy that does not load or compile, more layers than a worker can
 * stack, a broker rule that does not parse. Nothing is half-prepared: on
 * failure the type is cleared.
 */
#ifndef SBX_API_PREPARE_H_
#define SBX_API_PREPARE_H_

#include <stdbool.h>
#include <stddef.h>

#include <glib.h>

#include "sandbox/files/permissions.h"
#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/layers/plan.h"
#include "sandbox/policy/builtin/profile.h"

typedef struct {
  char *name;
  sbx_profile *profile;
  /* Layer 1 (the broker-client filter) first when with_layer1, then the
   * profile's policies in its order. */
  sbx_bpf_program layers[SBX_LAYERS_MAX_FILTERS];
  char *layer_names[SBX_LAYERS_MAX_FILTERS + 1]; /* NULL-terminated */
  size_t n_layers;
  sbx_allowlist *allowlist; /* the profile's rules and the extra rules */
  /* After sbx_prepared_type_audit_errno: the last layer as compiled, for
   * the broker, while layers[] holds its rewrite; else empty. */
  sbx_bpf_program verdicts;
  /* Workers open files under profile->direct_trees themselves: every
   * layer allows openat2, and the worker's Landlock ruleset must grant
   * read of exactly those trees (docs/design.md, "Direct opens"). */
  bool direct_opens;
} sbx_prepared_type;

/* Loads profile (NULL: name) from profile_dir, compiles every layer and
 * builds the allowlist. allow_direct: the caller's workers can run under
 * a Landlock ruleset granting the profile's direct trees; direct opens are
 * then on when the profile has direct trees, enables Landlock, and the
 * kernel has it. Errors are in SBX_ERROR and begin with the type's
 * name; the profile's and policy's own messages name the file and line. */
gboolean sbx_prepared_type_init(sbx_prepared_type *type, const char *name,
                                const char *profile, const char *profile_dir,
                                const char *const *extra_rules,
                                bool with_layer1, bool allow_direct,
                                GError **error);

void sbx_prepared_type_clear(sbx_prepared_type *type);

/* Makes the type's last layer report its errno verdicts through a
 * user-notification listener (sbx_bpf_notify_errno_verdicts), or with
 * every_refusal each call it refuses (sbx_bpf_notify_refusals, for
 * learning, learn.h): the original moves to type->verdicts for the broker,
 * which answers and logs them (sandbox/broker/verdicts.h). Needs a layer
 * of the profile's own after layer 1. */
gboolean sbx_prepared_type_watch_verdicts(sbx_prepared_type *type,
                                          bool every_refusal, GError **error);

/* Opens the audit log for appending (NULL: a duplicate of stderr).
 * Returns the descriptor (close-on-exec, the caller owns it) or -1. */
int sbx_audit_log_open(const char *path, GError **error);

#endif /* SBX_API_PREPARE_H_ */
