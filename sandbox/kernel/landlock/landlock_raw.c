/* Entering a Landlock ruleset: the child side of landlock.h, which runs
 * between fork and exec. Trusts the ruleset the parent built. */
#include "sandbox/kernel/landlock/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

/* Async-signal-safe. */
int sbx_landlock_restrict_self_raw(int ruleset_fd, uint32_t restrict_flags) {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return -errno;
  if (sbx_landlock_restrict_self_syscall(ruleset_fd, restrict_flags) != 0)
    return -errno;
  return 0;
}

/* Async-signal-safe. */
int sbx_landlock_add_path_raw(int ruleset_fd, const char *path,
                              uint64_t rights) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  struct sbx_landlock_path_beneath_attr rule = {.allowed_access = rights,
                                                .parent_fd = fd};
  int rc = sbx_landlock_add_rule(ruleset_fd, SBX_LANDLOCK_RULE_PATH_BENEATH,
                                 &rule, 0) == 0
               ? 0
               : -errno;
  close(fd);
  return rc;
}
