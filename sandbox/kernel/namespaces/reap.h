/* Reaping a child with a deadline.
 *
 * Why it exists: the host's stop paths (the broker, the zygote) must
 * return within a bound they document, whatever the child does. A plain
 * waitpid() waits as long as the child lives; this waits at most
 * timeout_ms, so the caller can decide to SIGKILL and try again, or give
 * up on a child the kernel holds (an uninterruptible sleep) and leave it
 * as a zombie rather than hang.
 *
 * Trusts nothing of the child: it only watches it. Parent-side only.
 */
#ifndef SBX_KERNEL_NAMESPACES_REAP_H_
#define SBX_KERNEL_NAMESPACES_REAP_H_

#include <sys/types.h>

/* Waits up to timeout_ms (0: only checks) for child pid to end and reaps
 * it. Returns 1 with *status (may be NULL) set when it was reaped, 0 when
 * it is still there at the deadline, -errno when waitpid fails (ECHILD:
 * not a child of the caller, or reaped already). */
int sbx_reap_child(pid_t pid, int timeout_ms, int *status);

/* sbx_reap_child, and if the child is still there at the deadline,
 * SIGKILL and up to kill_timeout_ms more. Returns what the last
 * sbx_reap_child returned. */
int sbx_reap_or_kill_child(pid_t pid, int timeout_ms, int kill_timeout_ms,
                           int *status);

#endif /* SBX_KERNEL_NAMESPACES_REAP_H_ */
