/* Entering new namespaces: the GError wrappers, with a hint for each
 * common refusal (namespaces_raw.c does the work). Parent-side. */
#include "sandbox/kernel/namespaces/namespaces.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

GQuark sbx_ns_error_quark(void) {
  return g_quark_from_static_string("sbx-ns-error-quark");
}

/* The first line of /proc/sys/NAME as a number; -1 when it cannot be
 * read (the sysctl does not exist on this kernel, or /proc/sys is not
 * mounted). */
static long read_sysctl(const char *name) {
  g_autofree char *path = g_strconcat("/proc/sys/", name, NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL))
    return -1;
  char *end = NULL;
  long v = strtol(text, &end, 10);
  return end == text ? -1 : v;
}

/* "Seccomp: 2" in /proc/self/status: a filter is installed, as in a
 * container started with Docker's or podman's default profile. */
static bool under_seccomp_filter(void) {
  if (prctl(PR_GET_SECCOMP) == 2)
    return true;
  g_autofree char *status = NULL;
  if (!g_file_get_contents("/proc/self/status", &status, NULL, NULL))
    return false;
  const char *line = strstr(status, "\nSeccomp:");
  return line && strtol(line + strlen("\nSeccomp:"), NULL, 10) == 2;
}

char *sbx_ns_explain_refusal(int err) {
  /* The others sbx makes come with the user namespace: a limit of 0 on
   * any of them refuses the whole clone. */
  static const char *const kinds[] = {"user", "net", "pid",   "mnt",
                                      "ipc",  "uts", "cgroup"};
  for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
    g_autofree char *key = g_strdup_printf("user/max_%s_namespaces", kinds[i]);
    if (read_sysctl(key) == 0)
      return g_strdup_printf(
          "user.max_%s_namespaces is 0%s; allow them with `sysctl -w "
          "user.max_%s_namespaces=N` (and in /etc/sysctl.d to keep it)",
          kinds[i], i ? ", and one comes with the user namespace" : "",
          kinds[i]);
  }
  if (read_sysctl("kernel/unprivileged_userns_clone") == 0)
    return g_strdup(
        "kernel.unprivileged_userns_clone is 0; allow them with `sysctl -w "
        "kernel.unprivileged_userns_clone=1`");
  if (read_sysctl("kernel/apparmor_restrict_unprivileged_userns") == 1)
    return g_strdup(
        "AppArmor restricts unprivileged user namespaces "
        "(kernel.apparmor_restrict_unprivileged_userns=1); give this program "
        "an AppArmor profile with the `userns,` rule, or set the sysctl to 0");
  if (err == ENOSPC || err == EUSERS)
    return g_strdup(
        "the limit on user namespaces (user.max_user_namespaces, or the "
        "nesting depth of 32) or on one of the namespaces that come with "
        "it (user.max_net_namespaces and the like) is reached; raise the "
        "sysctl or nest less");
  if (under_seccomp_filter())
    return g_strdup(
        "a seccomp filter this process runs under refuses new namespaces "
        "(as inside sbx-run, or in a container whose profile, such as "
        "Docker's default, does so for processes without CAP_SYS_ADMIN); "
        "start the container with a profile that allows unshare and clone "
        "with CLONE_NEWUSER");
  if (err == ENOSYS || err == EINVAL)
    return g_strdup(
        "the kernel is built without user namespaces (CONFIG_USER_NS)");
  return g_strdup_printf(
      "the kernel refused them (%s); check user.max_user_namespaces, "
      "kernel.unprivileged_userns_clone and "
      "kernel.apparmor_restrict_unprivileged_userns",
      g_strerror(err));
}

static void set_refusal(GError **error, const char *call, int err) {
  g_autofree char *why = sbx_ns_explain_refusal(err);
  g_set_error(error, SBX_NS_ERROR, SBX_NS_ERROR_UNSUPPORTED,
              "the kernel refuses user namespaces here (%s: %s): %s", call,
              g_strerror(err), why);
}

gboolean sbx_ns_enter(const sbx_ns_config *cfg, GError **error) {
  const char *step = "unshare";
  int rc = sbx_ns_enter_raw(cfg, &step);
  if (rc == 0)
    return TRUE;
  bool at_unshare = strcmp(step, "unshare") == 0;
  if (at_unshare && sbx_ns_refusal(-rc)) {
    set_refusal(error, "unshare", -rc);
    return FALSE;
  }
  g_set_error(error, SBX_NS_ERROR,
              rc == -EPERM ? SBX_NS_ERROR_PERMISSION : SBX_NS_ERROR_FAILED,
              "entering namespaces failed at %s: %s%s", step, g_strerror(-rc),
              at_unshare && rc == -EINVAL
                  ? " (unshare(CLONE_NEWUSER) refuses a multi-threaded "
                    "process: enter namespaces before starting threads)"
                  : "");
  return FALSE;
}

pid_t sbx_ns_clone(const sbx_ns_config *cfg, GError **error) {
  sbx_ns_clone_state state;
  /* The child gets a copy of every stdio buffer: what the host has not
   * written yet would be written once more by any process of the child's
   * line that calls exit(). */
  fflush(NULL);
  long pid = sbx_ns_clone_raw(cfg, &state);
  if (pid == 0)
    return 0;
  if (pid < 0) {
    int err = (int)-pid;
    if (state.clone_refused && sbx_ns_refusal(err) &&
        (cfg->namespaces & SBX_NS_USER)) {
      set_refusal(error, "clone", err);
      return -1;
    }
    g_set_error(error, SBX_NS_ERROR, SBX_NS_ERROR_FAILED, "%s failed: %s",
                state.failed_step, g_strerror(err));
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
