/* New namespaces for a sandboxed process: user, pid, net, ipc, uts, mount
 * (and cgroup), with the uid/gid maps written the way the kernel allows.
 *
 * Why it exists: a worker or an sbx-run child must not see the host's
 * network, System V IPC, hostname or processes, and it must never hold a
 * host uid with real privilege. Two shapes of caller exist, so there are
 * two entry points, in the nsjail style of a parent side and a child side:
 *
 *   1. In-process, sbx_ns_enter(): the calling process unshare()s and writes
 *      its own maps. This is what the zygote does after the host forked it.
 *      CLONE_NEWPID applies to the caller's *children* only: the caller
 *      stays in its old pid namespace, its first child after the call is
 *      pid 1 of the new one, and when that child exits the kernel kills
 *      every other process of the namespace and refuses further forks
 *      (ENOMEM). A fork server should therefore keep its first child alive
 *      for as long as it forks workers.
 *   2. Parent-side clone, sbx_ns_clone(): the parent clone()s a child that
 *      is born in the new namespaces (so it is pid 1 itself), writes the
 *      child's maps from outside, and releases it through a pipe. This is
 *      what sbx-run does. It returns twice, like fork().
 *
 * Identity (the decision, also in docs/namespaces.md): the sandboxed
 * process is mapped to *itself* - one line "ID ID 1" in uid_map and
 * gid_map, where ID is cfg->uid / cfg->gid. The uid it sees inside is the
 * real kernel uid outside, so logs, file ownership and the broker agree.
 * sbx_ns_config_init() picks the caller's euid/egid, except for root,
 * which gets 65534 (nobody): a process whose kernel uid is 0 owns most of
 * the system's files even without capabilities (DAC owner checks), so
 * root never keeps uid 0 inside a sandbox. Moving to a uid other than the
 * caller's needs privilege (CAP_SETUID/CAP_SETGID in the caller's user
 * namespace) and is refused with EPERM otherwise.
 *
 * Supplementary groups: a privileged caller's are cleared (setgroups(0)).
 * An unprivileged caller's cannot be: the kernel requires "deny" in
 * /proc/PID/setgroups before an unprivileged gid_map write, and after that
 * setgroups(2) is refused forever in the namespace. They stay attached (as
 * overflow gid 65534 inside) - documented, not hidden. The same holds for
 * a privileged caller whose own user namespace already says "deny" (e.g.
 * under `unshare -r`): every namespace below it inherits the refusal, so
 * setgroups(0) is skipped there instead of failing with EPERM.
 *
 * What it trusts: the kernel's answers; the configuration given by the
 * (trusted) parent. What it refuses: a configuration asking for an
 * identity the caller cannot assume, and any partial entry - on failure the
 * process may be in some new namespaces already, so the caller must exit
 * (the _raw functions say which step failed).
 *
 * After entering, the process holds every capability *inside* its new user
 * namespace; sandbox/kernel/namespaces/credentials.h drops them all, and
 * that step is not optional (S33).
 */
#ifndef SBX_KERNEL_NAMESPACES_NAMESPACES_H_
#define SBX_KERNEL_NAMESPACES_NAMESPACES_H_

#include <stdbool.h>
#include <sys/types.h>

#include <glib.h>

/* Which namespaces to create; the values are ours, not CLONE_* bits. */
enum {
  SBX_NS_USER = 1u << 0,
  SBX_NS_PID = 1u << 1,
  SBX_NS_NET = 1u << 2,
  SBX_NS_IPC = 1u << 3,
  SBX_NS_UTS = 1u << 4,
  SBX_NS_MOUNT = 1u << 5,
  SBX_NS_CGROUP = 1u << 6,
};
#define SBX_NS_ALL                                                   \
  (SBX_NS_USER | SBX_NS_PID | SBX_NS_NET | SBX_NS_IPC | SBX_NS_UTS | \
   SBX_NS_MOUNT | SBX_NS_CGROUP)

/* Number of namespace kinds above; index order of sbx_ns_kind_name(). */
#define SBX_NS_KINDS 7

typedef struct {
  unsigned namespaces; /* SBX_NS_* bits; SBX_NS_USER is required unless the
                        * caller already has CAP_SYS_ADMIN */
  uid_t uid;           /* identity inside == outside, see above */
  gid_t gid;
  /* With SBX_NS_UTS: the host name inside. NULL leaves the inherited one,
   * which leaks the host's name; sbx_ns_config_init() sets "sbx". Not
   * owned; must outlive the call (and, for sbx_ns_clone, the fork). */
  const char *hostname;
  /* With SBX_NS_NET: bring the new namespace's loopback up, as a host's
   * is, so the sandbox's own processes reach each other over 127.0.0.1
   * and ::1; nothing outside is reachable either way. false (the
   * default) leaves it down. */
  bool loopback;
} sbx_ns_config;

#define SBX_NS_ERROR (sbx_ns_error_quark())
GQuark sbx_ns_error_quark(void);

typedef enum {
  /* The kernel will not create a user namespace for this process: a
   * sysctl, AppArmor, a container's seccomp profile or the kernel's
   * configuration forbids it. The message says which and how to allow it;
   * a caller whose profile does not require namespaces runs without. */
  SBX_NS_ERROR_UNSUPPORTED,
  SBX_NS_ERROR_PERMISSION, /* the caller may not assume that identity */
  SBX_NS_ERROR_FAILED,     /* a syscall failed; the message names it */
} sbx_ns_error_code;

/* Every namespace, the caller's identity (nobody for root), hostname
 * "sbx". Calls only geteuid/getegid: async-signal-safe. */
void sbx_ns_config_init(sbx_ns_config *cfg);

/* "user", "pid", "net", "ipc", "uts", "mnt", "cgroup" for index 0..6 (the
 * names under /proc/self/ns/); NULL out of range. Async-signal-safe. */
const char *sbx_ns_kind_name(int index);

/* The CLONE_NEW* flags for cfg->namespaces. Async-signal-safe. */
int sbx_ns_clone_flags(unsigned namespaces);

/* In-process entry (pattern 1). Order: a root caller whose cfg->uid is
 * not 0 first drops to cfg->uid/gid in its current namespace (clearing
 * supplementary groups); then unshare(); then "deny" to setgroups (a
 * process writing its own maps holds no capability outside, so the kernel
 * requires it), uid_map, gid_map; then the hostname.
 * The process stays dumpable until credentials.h makes it undumpable
 * (the kernel only lets a dumpable process open its own map files).
 *
 * Async-signal-safe: raw syscalls, no allocation, usable between fork and
 * exec. Returns 0 or -errno; *failed_step (may be NULL) receives a static
 * string naming the step, e.g. "write /proc/self/uid_map". */
int sbx_ns_enter_raw(const sbx_ns_config *cfg, const char **failed_step);

/* Makes a network namespace owned by the user namespace of process pid
 * (which the caller must be able to enter: its owner, or holding
 * CAP_SYS_ADMIN there), with its loopback up, and returns a descriptor of
 * it, or -errno with *failed_step (may be NULL) naming the step. The
 * caller joins pid's user namespace to do it, for good: call it in a
 * child made for the purpose (vfork), which then hands the descriptor
 * over. Lets a parent make a clone child's network namespace on another
 * CPU while the child sets up the rest; the child joins it with
 * setns(fd, CLONE_NEWNET). Async-signal-safe. */
int sbx_ns_make_net_beside_raw(pid_t pid, const char **failed_step);

/* The same with a GError naming the step. A refusal to create the
 * namespaces (sbx_ns_refusal) is SBX_NS_ERROR_UNSUPPORTED with the cause
 * sbx_ns_explain_refusal finds. Parent-side (GLib). */
gboolean sbx_ns_enter(const sbx_ns_config *cfg, GError **error);

/* True when errno err from unshare or clone with CLONE_NEWUSER means that
 * this process may not have user namespaces at all (as opposed to a wrong
 * request). Async-signal-safe. */
bool sbx_ns_refusal(int err);

/* Why the kernel refused a user namespace with errno err, and how to
 * allow it, found from what the process can read: the sysctls
 * user.max_user_namespaces, kernel.unprivileged_userns_clone and
 * kernel.apparmor_restrict_unprivileged_userns, and whether the process
 * runs under a seccomp filter (a container's profile). Caller frees with
 * g_free. Parent-side. */
char *sbx_ns_explain_refusal(int err);

/* Parent-side clone (pattern 2). Clones a child in the namespaces of cfg
 * (raw clone(2), fork semantics, SIGCHLD on exit); the parent writes the
 * child's setgroups/uid_map/gid_map, then releases it.
 *
 * Returns the child's pid (as the caller sees it) in the parent, 0 in the
 * child, -1 with *error set in the parent on failure (no child is left
 * behind). In the child, before 0 is returned: PR_SET_PDEATHSIG(SIGKILL)
 * is set and the child has checked that the parent is still there (the
 * release pipe gave a byte, not EOF); it has switched to cfg->uid/gid
 * (clearing supplementary groups when the parent was privileged) and set
 * the hostname. If any of that fails the child _exit()s with status 127
 * after writing one line "sbx: namespace setup failed: STEP: ERRNO" to
 * stderr, and the parent sees that exit.
 *
 * In the child only async-signal-safe calls are allowed until exec or
 * _exit: glibc's thread descriptor still carries the parent's tid after a
 * raw clone, so raise(), abort() and pthread calls are unreliable there.
 * Call it from a single-threaded process or accept that only async-signal-
 * safe code runs in the child (the same rule as for fork()). */
pid_t sbx_ns_clone(const sbx_ns_config *cfg, GError **error);

/* sbx_ns_clone in two async-signal-safe halves, for a caller that may not
 * use GLib: sbx_ns_clone_raw returns the child's pid in the parent (then
 * call sbx_ns_clone_release_raw, which writes its maps and lets it go, or
 * kills and reaps it on failure), 0 in the child, -errno on failure.
 * failed_step names what failed. */
typedef struct {
  int release_fd;
  bool privileged;
  bool clone_refused; /* the clone itself failed (not its preparation) */
  const char *failed_step;
} sbx_ns_clone_state;
long sbx_ns_clone_raw(const sbx_ns_config *cfg, sbx_ns_clone_state *state);
int sbx_ns_clone_release_raw(const sbx_ns_config *cfg, pid_t pid,
                             sbx_ns_clone_state *state);

/* Writes "deny" to /proc/PID/setgroups (when deny_setgroups) and the maps
 * "UID UID 1" / "GID GID 1" for process pid (0: the caller). Used by both
 * entry points; exposed for callers with their own clone.
 * Async-signal-safe; returns 0 or -errno. */
int sbx_ns_write_id_maps_raw(pid_t pid, uid_t uid, gid_t gid,
                             bool deny_setgroups, const char **failed_step);

#endif /* SBX_KERNEL_NAMESPACES_NAMESPACES_H_ */
