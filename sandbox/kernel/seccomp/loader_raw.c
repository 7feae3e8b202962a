/* Installing a precompiled seccomp program: the part that runs between
 * fork and exec (loader.c explains refusals with a GError).
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
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif

/* Async-signal-safe: raw system calls only, no allocation, errno kept. */
long sbx_seccomp_load_reported_raw(const struct sock_filter *insns, size_t len,
                                   unsigned flags,
                                   sbx_seccomp_load_report *report) {
  int saved_errno = errno;
  long result;
  report->blocking_thread = 0;
  if (insns == NULL || len == 0 || len > BPF_MAXINSNS ||
      (flags & ~(unsigned)(SBX_SECCOMP_TSYNC | SBX_SECCOMP_NEW_LISTENER))) {
    report->failed_step = SBX_SECCOMP_STEP_ARGUMENTS;
    result = -EINVAL;
    goto out;
  }
  if (syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0) {
    report->failed_step = SBX_SECCOMP_STEP_NO_NEW_PRIVS;
    result = -errno;
    goto out;
  }
  unsigned long kernel_flags = 0;
  if (flags & SBX_SECCOMP_TSYNC)
    kernel_flags |= SECCOMP_FILTER_FLAG_TSYNC;
  if (flags & SBX_SECCOMP_NEW_LISTENER)
    kernel_flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
  /* TSYNC reports a blocking thread by returning its id, which a caller
   * could not tell from a listener fd: ask for ESRCH instead. */
  if ((flags & SBX_SECCOMP_TSYNC) && (flags & SBX_SECCOMP_NEW_LISTENER))
    kernel_flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
  struct sock_fprog prog = {
      .len = (unsigned short)len,
      .filter = (struct sock_filter *)insns,
  };
  result = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, kernel_flags, &prog);
  if (result < 0) {
    report->failed_step = SBX_SECCOMP_STEP_SECCOMP;
    result = -errno;
  } else if ((flags & SBX_SECCOMP_TSYNC) &&
             !(flags & SBX_SECCOMP_NEW_LISTENER) && result > 0) {
    report->failed_step = SBX_SECCOMP_STEP_SECCOMP;
    report->blocking_thread = result;
    result = -ESRCH;
  }
out:
  errno = saved_errno;
  return result;
}

/* Async-signal-safe. */
int sbx_seccomp_load_raw(const struct sock_filter *insns, size_t len,
                         unsigned flags) {
  sbx_seccomp_load_report report;
  return (int)sbx_seccomp_load_reported_raw(insns, len, flags, &report);
}
