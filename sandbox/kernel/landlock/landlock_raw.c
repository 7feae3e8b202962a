/* Entering a Landlock ruleset: the child side of landlock.h, which runs
 * between fork and exec. Trusts the ruleset the parent built. */
#include "sandbox/kernel/landlock/landlock.h"

#include <errno.h>
#include <sys/prctl.h>

/* Async-signal-safe. */
int sbx_landlock_restrict_self_raw(int ruleset_fd, uint32_t restrict_flags) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return -errno;
  if (sbx_landlock_restrict_self_syscall(ruleset_fd, restrict_flags) != 0)
    return -errno;
  return 0;
}
