/* The broker's own sandbox; see broker_sandbox.h.
 *
 * Trusts the allowlists (host policy) and the built-in broker.policy. The
 * Landlock ruleset is derived from the allowlists mechanically, entry by
 * entry, so it can never be wider than what the broker may hand out.
 */
#include "sandbox/broker/broker_sandbox.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/kernel/landlock/landlock.h"
#include "sandbox/layers/apply.h"
#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/policy/compiler.h"

guint64 sbx_broker_landlock_rights(const sbx_allow_entry *e,
                                   gboolean *on_parent) {
  guint64 r = 0;
  *on_parent = FALSE;
  if (e->rights & SBX_PERM_READ)
    r |= LANDLOCK_ACCESS_FS_READ_FILE |
         (e->recursive ? LANDLOCK_ACCESS_FS_READ_DIR : 0);
  if (e->rights & SBX_PERM_WRITE)
    r |= LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;
  if (e->rights & SBX_PERM_CREATE)
    r |= LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_DIR |
         LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
         LANDLOCK_ACCESS_FS_REFER;
  if (e->rights & SBX_PERM_TEMPORARY)
    r |= LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_REMOVE_FILE;
  /* Creating or removing a name is a right on its directory. */
  if (!e->recursive && (e->rights & (SBX_PERM_CREATE | SBX_PERM_TEMPORARY)))
    *on_parent = TRUE;
  return r;
}

static gboolean add_rules(sbx_landlock_builder *b, const sbx_allowlist *list,
                          gboolean *want_proc, GError **error) {
  for (size_t i = 0; i < sbx_allowlist_n_entries(list); i++) {
    const sbx_allow_entry *e = sbx_allowlist_entry(list, i);
    gboolean on_parent;
    guint64 rights = sbx_broker_landlock_rights(e, &on_parent);
    if (rights == 0)
      continue; /* stat-level entries need no Landlock right */
    if (e->proc_self) {
      /* Which pid directories are the workers' is only known per request;
       * the resolver enforces /proc/self, Landlock can only cover /proc. */
      *want_proc = TRUE;
      continue;
    }
    g_autofree char *path = NULL;
    if (on_parent) {
      const char *slash = strrchr(e->path, '/');
      path =
          g_strndup(e->path, slash == e->path ? 1 : (gsize)(slash - e->path));
    } else {
      path = g_strdup(e->path);
    }
    if (!sbx_landlock_allow_path(b, path, rights, SBX_LANDLOCK_PATH_OPTIONAL,
                                 error)) {
      g_prefix_error(error,
                     "allowlist '%s', entry %s: ", sbx_allowlist_name(list),
                     e->written);
      return FALSE;
    }
  }
  return TRUE;
}

/* The ruleset: the union of the allowlists' rights, entry by entry. */
static gboolean plan_landlock(sbx_layer_plan *plan,
                              const sbx_allowlist *const *lists, size_t n_lists,
                              GError **error) {
  sbx_landlock_builder *b = sbx_landlock_builder_new();
  gboolean want_proc = FALSE;
  for (size_t i = 0; i < n_lists; i++) {
    if (!add_rules(b, lists[i], &want_proc, error)) {
      sbx_landlock_builder_free(b);
      return FALSE;
    }
  }
  if (want_proc && !sbx_landlock_allow_path(
                       b, "/proc", SBX_LANDLOCK_RIGHTS_READ, 0, error)) {
    sbx_landlock_builder_free(b);
    return FALSE;
  }
  /* Optional: on a kernel without Landlock the broker's own checks on
   * the opened object remain. */
  return sbx_layer_plan_set_landlock(plan, b, SBX_LANDLOCK_OPTIONAL_QUIET, 0,
                                     error);
}

gboolean sbx_broker_sandbox_compile(sbx_bpf_program *out, GError **error) {
  sbx_policy *policy = sbx_builtin_policy("broker.policy", error);
  if (!policy)
    return FALSE;
  gboolean ok = sbx_bpf_compile(policy, out, error);
  sbx_policy_free(policy);
  if (!ok)
    g_prefix_error(error, "builtin:broker.policy: ");
  return ok;
}

/* Where the broker differs from a worker: see the flags. */
#define BROKER_LAYERS \
  (SBX_LAYERS_KEEP_DESCRIPTORS | SBX_LAYERS_KEEP_CAPABILITIES)

gboolean sbx_broker_sandbox_self(const sbx_allowlist *const *lists,
                                 size_t n_lists, const sbx_bpf_program *program,
                                 unsigned max_fds, pid_t parent,
                                 GError **error) {
  sbx_layer_plan plan;
  sbx_layer_plan_init(&plan, "broker", BROKER_LAYERS);
  sbx_rlimit nofile = {RLIMIT_NOFILE, max_fds, max_fds};
  gboolean ok =
      (max_fds == 0 || sbx_layer_plan_add_rlimits(&plan, &nofile, 1, error)) &&
      (!program ||
       (sbx_layer_plan_add_filter(&plan, "broker.policy", program, error) &&
        plan_landlock(&plan, lists, n_lists, error)));
  if (ok) {
    sbx_layer_process process = {.expected_ppid = parent, .parent_pidfd = -1};
    ok = sbx_layer_apply(&plan, &process, error);
  }
  sbx_layer_plan_clear(&plan);
  return ok;
}
