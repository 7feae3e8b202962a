/* Installing a precompiled seccomp program.
 *
 * Why it exists: a worker only ever loads what the zygote compiled, so
 * this is the whole of what runs in the child: no_new_privs, then
 * seccomp(SECCOMP_SET_MODE_FILTER). The raw entry point works between fork
 * and exec; the GError one explains every refusal.
 *
 * Trusts: the program (the kernel checks it again and refuses bad ones).
 * Refuses: empty or oversized programs before asking the kernel.
 */
#include "sandbox/kernel/seccomp/loader.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <stdint.h>

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif

GQuark sbx_seccomp_error_quark(void) {
  return g_quark_from_static_string("sbx-seccomp-error-quark");
}

static const char *seccomp_hint(int err, unsigned flags) {
  switch (err) {
    case EINVAL:
      return "the kernel refused the program or a flag; check the program "
             "with `sbx-policy dump --bpf FILE`, and that the kernel supports "
             "the requested flags (TSYNC needs 3.17, NEW_LISTENER 5.0, "
             "TSYNC_ESRCH 5.7)";
    case EACCES:
      return "no_new_privs is not in effect and the caller lacks "
             "CAP_SYS_ADMIN";
    case ENOMEM:
      return "the stacked filters together exceed the kernel's limit of "
             "32768 instructions, or memory ran out: install fewer or "
             "shorter layers";
    case EBUSY:
      return "a filter with a user-notification listener is already "
             "installed in this process; only one listener is allowed";
    case ESRCH:
      return "another thread runs under a seccomp filter that is not an "
             "ancestor of this thread's, so TSYNC cannot synchronise it; "
             "install the filter before starting threads";
    case ENOSYS:
      return "the kernel has no seccomp filter support "
             "(CONFIG_SECCOMP_FILTER)";
    case EFAULT:
      return "the program pointer is not readable";
    default:
      return (flags & SBX_SECCOMP_NEW_LISTENER)
                 ? "unexpected error installing a filter with a listener"
                 : "unexpected error installing the filter";
  }
}

gboolean sbx_seccomp_load(const struct sock_filter *insns, size_t len,
                          unsigned flags, int *listener_fd, GError **error) {
  if ((flags & SBX_SECCOMP_NEW_LISTENER) && listener_fd == NULL) {
    g_set_error(error, SBX_SECCOMP_ERROR, EINVAL,
                "sbx_seccomp_load: SBX_SECCOMP_NEW_LISTENER needs a place "
                "for the listener fd (listener_fd is NULL)");
    return FALSE;
  }
  sbx_seccomp_load_report report;
  long result = sbx_seccomp_load_reported_raw(insns, len, flags, &report);
  if (result >= 0) {
    if (listener_fd)
      *listener_fd = (flags & SBX_SECCOMP_NEW_LISTENER) ? (int)result : -1;
    return TRUE;
  }
  int err = (int)-result;
  switch (report.failed_step) {
    case SBX_SECCOMP_STEP_ARGUMENTS:
      g_set_error(error, SBX_SECCOMP_ERROR, err,
                  "sbx_seccomp_load: a program has 1 to %d instructions "
                  "(got %zu%s) and the flags are SBX_SECCOMP_TSYNC and "
                  "SBX_SECCOMP_NEW_LISTENER only (got 0x%x)",
                  BPF_MAXINSNS, len, insns ? "" : ", NULL pointer", flags);
      break;
    case SBX_SECCOMP_STEP_NO_NEW_PRIVS:
      g_set_error(error, SBX_SECCOMP_ERROR, err,
                  "prctl(PR_SET_NO_NEW_PRIVS) failed: %s; the kernel is "
                  "older than 3.5 or a security module forbids it",
                  g_strerror(err));
      break;
    case SBX_SECCOMP_STEP_SECCOMP:
    default:
      if (report.blocking_thread > 0)
        g_set_error(error, SBX_SECCOMP_ERROR, err,
                    "seccomp(SECCOMP_SET_MODE_FILTER, TSYNC) could not "
                    "synchronise thread %ld: %s",
                    report.blocking_thread, seccomp_hint(err, flags));
      else
        g_set_error(error, SBX_SECCOMP_ERROR, err,
                    "seccomp(SECCOMP_SET_MODE_FILTER) of a %zu-instruction "
                    "program failed: %s; %s",
                    len, g_strerror(err), seccomp_hint(err, flags));
      break;
  }
  return FALSE;
}
