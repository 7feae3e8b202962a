/* Entering new namespaces: the GError wrappers, with a hint for each
 * common refusal (namespaces_raw.c does the work). Parent-side. */
#include "sandbox/kernel/namespaces/namespaces.h"

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>

GQuark sbx_ns_error_quark(void) {
  return g_quark_from_static_string("sbx-ns-error-quark");
}

static const char *hint_for(int err) {
  /* A seccomp filter that refuses new namespaces (sbx-run's baseline, a
   * container runtime's profile) is a likelier reason than a sysctl. */
  if (err == EPERM && prctl(PR_GET_SECCOMP) == 2)
    return " (this process runs under a seccomp filter that refuses new "
           "namespaces, as inside sbx-run or a container; a sandbox cannot "
           "be started inside it)";
  switch (err) {
    case ENOSPC:
      return " (the user.max_user_namespaces sysctl or a per-namespace "
             "limit is exhausted; raise it or create fewer namespaces)";
    case EPERM:
      return " (unprivileged user namespaces may be disabled: check "
             "kernel.unprivileged_userns_clone and "
             "kernel.apparmor_restrict_unprivileged_userns, or run as a "
             "user allowed to create them)";
    case EINVAL:
      return " (unshare(CLONE_NEWUSER) refuses a multi-threaded process: "
             "enter namespaces before starting threads)";
    case EUSERS:
      return " (user namespaces are nested too deeply)";
    default:
      return "";
  }
}

gboolean sbx_ns_enter(const sbx_ns_config *cfg, GError **error) {
  const char *step = "unshare";
  int rc = sbx_ns_enter_raw(cfg, &step);
  if (rc == 0)
    return TRUE;
  int code = rc == -EPERM ? SBX_NS_ERROR_PERMISSION
             : (rc == -ENOSPC || rc == -EINVAL || rc == -ENOSYS)
                 ? SBX_NS_ERROR_UNSUPPORTED
                 : SBX_NS_ERROR_FAILED;
  g_set_error(error, SBX_NS_ERROR, code,
              "entering namespaces failed at %s: %s%s", step, g_strerror(-rc),
              strcmp(step, "unshare") == 0 ? hint_for(-rc) : "");
  return FALSE;
}

pid_t sbx_ns_clone(const sbx_ns_config *cfg, GError **error) {
  sbx_ns_clone_state state;
  long pid = sbx_ns_clone_raw(cfg, &state);
  if (pid == 0)
    return 0;
  if (pid < 0) {
    int err = (int)-pid;
    int code = !state.clone_refused ? SBX_NS_ERROR_FAILED
               : err == EPERM       ? SBX_NS_ERROR_PERMISSION
                                    : SBX_NS_ERROR_UNSUPPORTED;
    g_set_error(error, SBX_NS_ERROR, code, "%s failed: %s%s", state.failed_step,
                g_strerror(err), state.clone_refused ? hint_for(err) : "");
    return -1;
  }
  int rc = sbx_ns_clone_release_raw(cfg, (pid_t)pid, &state);
  if (rc) {
    g_set_error(error, SBX_NS_ERROR,
                rc == -EPERM ? SBX_NS_ERROR_PERMISSION : SBX_NS_ERROR_FAILED,
                "namespace child setup failed at %s: %s", state.failed_step,
                g_strerror(-rc));
    return -1;
  }
  return (pid_t)pid;
}
