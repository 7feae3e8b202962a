/* Which sandbox layers are active in the calling process, as the kernel
 * reports them - not as the code that installed them believes.
 *
 * Why it exists: a sandbox that silently failed to install a layer looks
 * exactly like one that works until the day it matters. The status report
 * reads each layer back: namespace identity from /proc/self/ns/KIND compared
 * with the host's (recorded before anything was entered), capabilities
 * with capget() and the CapBnd/CapAmb lines of /proc/thread-self/status
 * (PR_CAPBSET_READ / PR_CAP_AMBIENT_IS_SET without /proc), no_new_privs
 * and dumpability with prctl(), the seccomp mode and filter count from the
 * "Seccomp:" and "Seccomp_filters:" lines of /proc/thread-self/status, the
 * session with getsid().
 *
 * What it trusts: the kernel's answers only. Where the kernel cannot be
 * asked (no /proc inside an empty root, no host reference recorded) the
 * field is SBX_TRI_UNKNOWN, never a guess. The kernel offers no way to
 * ask whether a Landlock domain is active: the landlock_* fields are left
 * unknown by the collector and filled by the code that applied the
 * ruleset (sandbox/kernel/landlock/landlock.h reports what it enforced).
 *
 * Everything here allocates nothing. Collect and format are
 * Async-signal-safe (open/read/close, prctl, capget, fixed buffers), so a
 * worker can report on itself right before its entry function.
 */
#ifndef SBX_KERNEL_NAMESPACES_STATUS_H_
#define SBX_KERNEL_NAMESPACES_STATUS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/kernel/namespaces/namespaces.h"

typedef enum {
  SBX_TRI_UNKNOWN = -1,
  SBX_TRI_NO = 0,
  SBX_TRI_YES = 1,
} sbx_tristate;

/* The host's namespace identities, recorded once before entering. */
typedef struct {
  bool valid;
  uint64_t dev[SBX_NS_KINDS]; /* st_dev of /proc/self/ns/<kind> */
  uint64_t ino[SBX_NS_KINDS]; /* st_ino; 0: that kind could not be read */
  uint64_t root_dev;          /* st_dev / st_ino of "/" */
  uint64_t root_ino;
} sbx_ns_reference;

typedef struct {
  /* Indexed like sbx_ns_kind_name(): in a namespace other than the host's.
   * pid is the caller's own pid namespace; pid_for_children is where its
   * children will be (differs after unshare(CLONE_NEWPID); unknown until
   * that namespace has its first process). */
  sbx_tristate ns[SBX_NS_KINDS];
  sbx_tristate ns_pid_for_children;
  sbx_tristate root_replaced; /* "/" is not the host's root */

  uint64_t cap_effective, cap_permitted, cap_inheritable;
  uint64_t cap_bounding, cap_ambient;
  sbx_tristate caps_empty; /* all five sets zero */

  sbx_tristate no_new_privs;
  sbx_tristate dumpable;    /* YES means PR_GET_DUMPABLE returned nonzero */
  int seccomp_mode;         /* 0 off, 1 strict, 2 filter; -1 unknown */
  int seccomp_filters;      /* number of stacked filters; -1 unknown */
  sbx_tristate new_session; /* getsid(0) == getpid() */

  /* Filled by the caller that applied Landlock; unknown/-1 otherwise. */
  sbx_tristate landlock;
  int landlock_abi;

  pid_t pid;       /* getpid(): inside its own pid namespace */
  uid_t uid, euid; /* as seen inside */
  gid_t gid, egid;
  long open_fds;        /* -1 unknown */
  uint64_t nofile_soft; /* RLIMIT_NOFILE soft limit */
} sbx_layer_status;

/* Records the namespaces and root of the calling process; call it in the
 * host (or the process the sandbox is compared with) before any layer is
 * entered, and keep the struct (copy it across fork). Returns 0 or -errno
 * (-ENOENT without /proc). Async-signal-safe. */
int sbx_status_record_reference(sbx_ns_reference *ref);

/* Fills *out for the calling process. ref may be NULL (the namespace and
 * root fields become UNKNOWN except what /proc/self/uid_map and the
 * "NSpid:" line prove on their own). Never fails: what cannot be read is
 * UNKNOWN / -1. Async-signal-safe. */
void sbx_status_collect(const sbx_ns_reference *ref, sbx_layer_status *out);

/* The calling thread's bounding and ambient sets from the CapBnd: and
 * CapAmb: lines of /proc/thread-self/status (one open, read, close). 0, or
 * -errno (-ENOENT without /proc, -ENODATA when the lines are missing).
 * Async-signal-safe. */
int sbx_status_read_bounding_ambient_raw(uint64_t *bounding, uint64_t *ambient);

/* How many seccomp filters process pid runs under (0: the caller), from
 * the Seccomp_filters: line of /proc/PID/status; -1 when it cannot be
 * read. Async-signal-safe. */
int sbx_status_seccomp_filters(pid_t pid);

/* True when every layer a fully sandboxed worker must have is present:
 * user/pid/net/ipc namespaces, caps empty, NNP, not dumpable, seccomp
 * filter mode, new session. Unknown counts as absent. Async-signal-safe. */
bool sbx_status_is_fully_sandboxed(const sbx_layer_status *st);

/* Writes a human-readable multi-line report into buf (always NUL-
 * terminated when len > 0), one "key: value" per line, e.g.
 *   namespaces: user=new pid=new net=new ipc=new uts=new mnt=new cgroup=host
 *   root: replaced
 *   capabilities: effective=0 permitted=0 inheritable=0 bounding=0 ambient=0
 *   no_new_privs: yes
 *   dumpable: no
 *   seccomp: filter (2 filters)
 *   session: new (sid 1)
 *   landlock: abi 7
 *   fds: 3 open (RLIMIT_NOFILE 64)
 * Returns the length the full report needs (excluding the NUL), like
 * snprintf, so a short buffer can be detected. Async-signal-safe. */
size_t sbx_status_format(const sbx_layer_status *st, char *buf, size_t len);

#endif /* SBX_KERNEL_NAMESPACES_STATUS_H_ */
