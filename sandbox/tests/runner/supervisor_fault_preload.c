/* A fault for sbx-run's tests: loaded into sbx-run with LD_PRELOAD, it
 * makes the supervisor's SECCOMP_IOCTL_NOTIF_RECV fail (EIO) for the
 * first notification of acct(2), which sbx_run_probe's
 * `spawn-then-acct` makes on purpose. The notification was taken from
 * the kernel but is never answered: the supervisor has failed, and
 * sbx-run must stop the sandbox rather than leave the program waiting.
 *
 * Built without sanitizers: it is preloaded into a program that may be
 * built with them, and interposes one libc function only.
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((visibility("default"))) int ioctl(int fd, unsigned long request,
                                                 ...) {
  static bool failed;
  va_list ap;
  va_start(ap, request);
  void *argp = va_arg(ap, void *);
  va_end(ap);
  long rc = syscall(SYS_ioctl, fd, request, argp);
  if (rc == 0 && request == SECCOMP_IOCTL_NOTIF_RECV && !failed &&
      ((struct seccomp_notif *)argp)->data.nr == __NR_acct) {
    failed = true;
    errno = EIO;
    return -1;
  }
  return (int)rc;
}
