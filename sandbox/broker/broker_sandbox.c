/* The broker's own sandbox; see broker_sandbox.h.
 *
 * Trusts the allowlists (host policy) and the built-in broker.policy. The
 * Landlock ruleset is derived from the allowlists mechanically, entry by
 * entry, so it can never be wider than what the broker may hand out.
 */
#include "sandbox/broker/broker_sandbox.h"

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "sandbox/kernel/landlock/landlock.h"
#include "sandbox/kernel/seccomp/loader.h"
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
      path = g_strndup(e->path, slash == e->path ? 1 : (gsize)(slash - e->path));
    } else {
      path = g_strdup(e->path);
    }
    if (!sbx_landlock_allow_path(b, path, rights, SBX_LANDLOCK_PATH_OPTIONAL,
                                 error)) {
      g_prefix_error(error, "allowlist '%s', entry %s: ",
                     sbx_allowlist_name(list), e->written);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean restrict_landlock(const sbx_allowlist *const *lists,
                                  size_t n_lists, GError **error) {
  sbx_landlock_builder *b = sbx_landlock_builder_new();
  gboolean want_proc = FALSE;
  for (size_t i = 0; i < n_lists; i++) {
    if (!add_rules(b, lists[i], &want_proc, error)) {
      sbx_landlock_builder_free(b);
      return FALSE;
    }
  }
  if (want_proc &&
      !sbx_landlock_allow_path(b, "/proc", SBX_LANDLOCK_RIGHTS_READ, 0,
                               error)) {
    sbx_landlock_builder_free(b);
    return FALSE;
  }
  GError *local = NULL;
  sbx_landlock_report report;
  memset(&report, 0, sizeof(report));
  int fd = sbx_landlock_build(b, &report, &local);
  sbx_landlock_builder_free(b);
  if (fd < 0) {
    if (g_error_matches(local, SBX_LANDLOCK_ERROR,
                        SBX_LANDLOCK_ERROR_UNSUPPORTED)) {
      /* The kernel has no Landlock: the broker's own checks remain. */
      g_error_free(local);
      return TRUE;
    }
    g_propagate_error(error, local);
    return FALSE;
  }
  gboolean ok = sbx_landlock_restrict_self(fd, report.restrict_flags, error);
  close(fd);
  return ok;
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

gboolean sbx_broker_sandbox_self(const sbx_allowlist *const *lists,
                                 size_t n_lists,
                                 const sbx_bpf_program *program,
                                 GError **error) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    int err = errno;
    g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                "prctl(PR_SET_NO_NEW_PRIVS): %s", g_strerror(err));
    return FALSE;
  }
  if (!restrict_landlock(lists, n_lists, error))
    return FALSE;
  if (!sbx_seccomp_load(program->insns, program->len, 0, NULL, error)) {
    g_prefix_error(error, "the broker's seccomp policy: ");
    return FALSE;
  }
  return TRUE;
}
