/* Credentials of a sandboxed process: no capabilities in any set,
 * no_new_privs, not dumpable, dies with its parent, its own session.
 *
 * Why it exists: a process in a new user namespace holds every capability
 * inside it, and anything it inherited (ambient caps, a permissive bounding
 * set, a controlling terminal, dumpability) is a way back out. S33 asks for
 * empty effective, permitted, inheritable, bounding and ambient sets and
 * no_new_privs; S10 a new session, so TIOCSTI has no controlling tty to
 * inject into; PR_SET_DUMPABLE 0 keeps other processes of the same uid
 * from ptrace-attaching or opening /proc/PID/mem (and /proc/PID/exe, S34).
 *
 * Everything here is child-side, Async-signal-safe (raw syscalls and
 * prctl, no allocation, no GLib) and meant for the window between fork
 * and exec, or between fork and a worker's entry function. Each returns 0
 * or -errno. What it trusts: nothing but the kernel. What it refuses:
 * nothing is skipped silently - a step that the kernel does not allow is
 * reported in sbx_creds_result, and only the securebits lock is allowed
 * to be absent (it needs CAP_SETPCAP, which a process outside a new user
 * namespace does not have when unprivileged).
 *
 * Order matters and sbx_creds_apply_raw() keeps it:
 *   1. die with the parent (before anything slow, so no orphan survives)
 *   2. setsid
 *   3. lock securebits      (needs CAP_SETPCAP: before the drop)
 *   4. drop the bounding set (needs CAP_SETPCAP: before the drop)
 *   5. clear ambient; capset() all three remaining sets to zero
 *   6. no_new_privs
 *   7. PR_SET_DUMPABLE 0     (after the writes to /proc/self/uid_map)
 */
#ifndef SBX_KERNEL_NAMESPACES_CREDENTIALS_H_
#define SBX_KERNEL_NAMESPACES_CREDENTIALS_H_

#include <stdbool.h>
#include <sys/types.h>

/* PR_SET_PDEATHSIG(SIGKILL), then checks that the parent did not already
 * die between fork and this call (the signal is only armed for a future
 * death): if parent_pidfd >= 0 (a pidfd of the parent, opened by the
 * parent before fork, e.g. pidfd_open(getpid(), 0)) it must not be
 * readable; else if expected_ppid > 0, getppid() must equal it. Use the
 * pidfd form in a new pid namespace, where getppid() is 0 whatever
 * happened. Returns -ESRCH when the parent is gone: the caller must
 * _exit(). The signal fires when the parent *thread* exits, so fork from
 * a thread that lives as long as the child should.
 * Async-signal-safe. */
int sbx_creds_die_with_parent_raw(pid_t expected_ppid, int parent_pidfd);

/* setsid(). Fails with -EPERM in a process group leader (fork first).
 * Async-signal-safe. */
int sbx_creds_new_session_raw(void);

/* Sets and locks SECBIT_NOROOT, SECBIT_NO_SETUID_FIXUP, SECBIT_KEEP_CAPS
 * (cleared, locked) and SECBIT_NO_CAP_AMBIENT_RAISE, so no later uid
 * change or exec of a setuid-root file regains capabilities. -EPERM
 * without CAP_SETPCAP. Async-signal-safe. */
int sbx_creds_lock_securebits_raw(void);

/* Empties the bounding set: nothing more when the CapBnd: line of
 * /proc/self/status already reads 0; else PR_CAPBSET_DROP for every cap
 * until the kernel answers EINVAL (past its last cap; no PR_CAPBSET_READ
 * first: dropping a cap that is not in the set succeeds). Without
 * CAP_SETPCAP a drop fails with EPERM, acceptable only for a cap already
 * out of the set (PR_CAPBSET_READ says so); otherwise -EPERM. A process
 * that never execs (the zygote) loses nothing by dropping its own, and
 * every child it forks then starts with an empty set.
 * Async-signal-safe. */
int sbx_creds_drop_bounding_set_raw(void);

/* Empties every capability set: the bounding set as above, ambient
 * via PR_CAP_AMBIENT_CLEAR_ALL, then capset() effective, permitted and
 * inheritable to zero. A bounding set that cannot be dropped (no
 * CAP_SETPCAP) is acceptable only if it is already empty; otherwise -EPERM.
 * Async-signal-safe. */
int sbx_creds_drop_capabilities_raw(void);

/* Clears the ambient set (PR_CAP_AMBIENT_CLEAR_ALL), then capset()s
 * effective, permitted and inheritable to zero; dropping is always
 * allowed. Async-signal-safe. */
int sbx_creds_clear_capability_sets_raw(void);

/* 1 when the effective, permitted, inheritable or ambient set holds a
 * capability, 0 when all four are empty, -errno when they cannot be read.
 * Async-signal-safe. */
int sbx_creds_holds_capabilities_raw(void);

/* PR_SET_NO_NEW_PRIVS. Async-signal-safe. */
int sbx_creds_set_no_new_privs_raw(void);

/* PR_SET_DUMPABLE 0. Async-signal-safe. */
int sbx_creds_set_undumpable_raw(void);

typedef struct {
  bool die_with_parent;
  pid_t expected_ppid; /* see sbx_creds_die_with_parent_raw */
  int parent_pidfd;    /* -1 if none; not closed here */
  bool new_session;
} sbx_creds_config;

typedef struct {
  bool securebits_locked; /* false: not permitted here (no CAP_SETPCAP) */
  int error;              /* 0 or the errno of the failed step */
  const char *failed_step;
} sbx_creds_result;

/* Defaults: die with the parent (expected_ppid = 0, parent_pidfd = -1, so
 * the caller should set one of them), new session. */
void sbx_creds_config_init(sbx_creds_config *cfg);

/* All of the above in the order given at the top. Returns 0 or -errno;
 * on failure result->failed_step names the step ("setsid",
 * "PR_CAPBSET_DROP", ...). result must not be NULL.
 * Async-signal-safe. */
int sbx_creds_apply_raw(const sbx_creds_config *cfg, sbx_creds_result *result);

#endif /* SBX_KERNEL_NAMESPACES_CREDENTIALS_H_ */
