/* A kernel without a feature, on a kernel that has it: one seccomp filter
 * that answers the calls using the feature with the errno such a kernel
 * gives. Used by the sbx-without launcher (without.c) and by suites that
 * install it in a child before starting a sandbox there.
 *
 *   WITHOUT_USERNS    unshare or clone with CLONE_NEWUSER: EPERM, as under
 *                     AppArmor's restriction or with
 *                     user.max_user_namespaces=0; clone3: ENOSYS, which
 *                     makes callers fall back to clone, whose flags a
 *                     filter can read
 *   WITHOUT_DOCKER    what Docker's default profile gives a process
 *                     without CAP_SYS_ADMIN: unshare and setns EPERM
 *                     whatever the flags, clone with any CLONE_NEW* flag
 *                     EPERM, clone3 ENOSYS
 *   WITHOUT_LANDLOCK  the three Landlock calls: ENOSYS, as on a kernel
 *                     built without it
 *
 * The filter only refuses; it never widens what a process may do. */
#ifndef SBX_TESTS_DEGRADE_WITHOUT_FILTER_H_
#define SBX_TESTS_DEGRADE_WITHOUT_FILTER_H_

enum {
  WITHOUT_USERNS = 1u << 0,
  WITHOUT_DOCKER = 1u << 1,
  WITHOUT_LANDLOCK = 1u << 2,
};

/* Sets no_new_privs and installs the filter for what (WITHOUT_* bits) on
 * the calling thread. Returns 0 or -errno. */
int without_install(unsigned what);

/* The real sysctl instead of a filter: enters a user namespace of the
 * caller's own (uid and gid 1000 inside, mapped to the caller's), where
 * user.max_user_namespaces may be lowered, and sets it to 0 there, so
 * every process below meets the kernel's own refusal (ENOSPC). Drops
 * CAP_SETUID and CAP_SETGID from the effective set, as an unprivileged
 * caller would be. Single-threaded callers only. Returns 0 or -errno. */
int without_userns_by_sysctl(void);

/* The same with another of the kernel's limits set to 0 instead, e.g.
 * "max_net_namespaces" (a name under /proc/sys/user/). */
int without_namespaces_by_sysctl(const char *limit);

/* An older Landlock: a kernel that answers the ABI query
 * (landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION))
 * with abi. A seccomp filter sends that one call to a supervisor
 * process, which answers abi; every other Landlock call runs in the
 * kernel as made, so rulesets built for the older ABI are real. The
 * supervisor ends when no process uses the filter any more, or when the
 * caller exits. Not where another user-notification filter is in place
 * (sbx-run's). Returns 0 or -errno. */
int without_fake_landlock_abi(int abi);

#endif /* SBX_TESTS_DEGRADE_WITHOUT_FILTER_H_ */
