/* sbx-without: runs a command as it would run on a kernel that lacks a
 * feature sbx uses, on a kernel that has it.
 *
 *   sbx-without [--no-userns] [--no-landlock] [--docker] -- COMMAND [ARG...]
 *
 * It installs the filter of without_filter.h (no_new_privs set first, so
 * no privilege is needed) and executes COMMAND under it:
 *
 *   --no-userns    unshare or clone with CLONE_NEWUSER: EPERM, as with
 *                  user.max_user_namespaces=0 or AppArmor's restriction
 *                  (the kernel reports ENOSPC for the sysctl, EPERM for
 *                  AppArmor; both mean "not here"); clone3: ENOSYS, which
 *                  makes every caller fall back to clone, where the flags
 *                  can be read
 *   --docker       what Docker's default profile gives a process without
 *                  CAP_SYS_ADMIN: unshare and setns refused with EPERM
 *                  whatever the flags, clone with any CLONE_NEW* flag
 *                  refused with EPERM, clone3 ENOSYS
 *   --no-landlock  landlock_create_ruleset, _add_rule, _restrict_self:
 *                  ENOSYS, as on a kernel built without Landlock
 *
 * The filter is inherited by everything COMMAND starts, and it only
 * refuses: it never widens what the command may do. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/tests/degrade/without_filter.h"

static int usage(void) {
  fprintf(stderr,
          "usage: sbx-without [--no-userns] [--docker] "
          "[--no-landlock] -- COMMAND [ARG...]\n");
  return 2;
}

int main(int argc, char **argv) {
  unsigned what = 0;
  int i;
  for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
    if (strcmp(argv[i], "--no-userns") == 0)
      what |= WITHOUT_USERNS;
    else if (strcmp(argv[i], "--docker") == 0)
      what |= WITHOUT_DOCKER;
    else if (strcmp(argv[i], "--no-landlock") == 0)
      what |= WITHOUT_LANDLOCK;
    else
      return usage();
  }
  if (i + 1 >= argc)
    return usage();
  int rc = without_install(what);
  if (rc < 0) {
    fprintf(stderr, "sbx-without: installing the filter: %s\n", strerror(-rc));
    return 125;
  }
  execvp(argv[i + 1], &argv[i + 1]);
  fprintf(stderr, "sbx-without: %s: %s\n", argv[i + 1], strerror(errno));
  return 127;
}
