/* File descriptor hygiene: a sandboxed process starts with exactly the
 * descriptors it was given, at numbers the caller chose.
 *
 * Why it exists: an inherited descriptor is a capability the sandbox never
 * granted - a directory fd escapes any path check with openat(), a socket
 * reaches whatever it is connected to (S29). Closing "what we know about"
 * is not enough; everything not named is closed, and then every number up
 * to the RLIMIT_NOFILE soft limit is checked: poll(2) sweeps 256 numbers
 * per call (POLLNVAL = not open). A plain fcntl walk costs ~1.1 us per
 * number on the project's machines (23 ms at a 20000-fd limit); the sweep
 * makes the check affordable on every spawn.
 *
 * Renumbering (the decision): each kept descriptor names its final number.
 * SBX_FD_SAME keeps the number it has. Moving is done through temporary
 * numbers above every source and target, so a permutation such as
 * {5 -> 3, 3 -> 4} is safe. After the call the close-on-exec flag of each
 * kept descriptor is exactly what its entry asks for, so a caller that
 * execs decides what the program inherits.
 *
 * sbx_fd_keep_only_raw() closes with close_range(2); when the kernel has
 * it, nothing above the highest kept number can be open afterwards, so its
 * check walks only up to that number, one fcntl(F_GETFD) each (exact for
 * O_PATH descriptors too, which poll(2) reports as not open). Without
 * close_range it sweeps up to the limit.
 *
 * Call verification *before* lowering RLIMIT_NOFILE (rlimits.h): a lower
 * limit does not close descriptors above it, so the walk must cover the
 * limit the process had while they could have been opened.
 *
 * Everything here is child-side and Async-signal-safe: close_range(2) when
 * the kernel has it, else close() of every number up to the limit; no
 * allocation (the keep list is the caller's, at most SBX_FD_KEEP_MAX
 * entries). Returns 0 or -errno.
 */
#ifndef SBX_KERNEL_NAMESPACES_FDS_H_
#define SBX_KERNEL_NAMESPACES_FDS_H_

#include <stdbool.h>
#include <stddef.h>

#define SBX_FD_SAME (-1)
#define SBX_FD_KEEP_MAX 64

typedef struct {
  int fd;       /* the descriptor now */
  int target;   /* its number afterwards, or SBX_FD_SAME */
  bool cloexec; /* FD_CLOEXEC afterwards */
} sbx_fd_keep;

/* Moves the kept descriptors to their targets, closes every other one,
 * then verifies with sbx_fd_verify_only_raw(). -EINVAL for a negative fd,
 * two entries with the same target, more than SBX_FD_KEEP_MAX entries or a
 * target at or above the soft RLIMIT_NOFILE; -EBADF if a kept fd is not
 * open; -ENOTRECOVERABLE if verification finds a stray descriptor (a
 * kernel or caller bug; the process must exit). On success keep[i].fd is
 * updated to the final number. Async-signal-safe. */
int sbx_fd_keep_only_raw(sbx_fd_keep *keep, size_t n_keep);

/* Checks every number from 0 to the soft RLIMIT_NOFILE - 1 (one
 * fcntl(F_GETFD) each up to 64 numbers, exact for O_PATH too; above that
 * the poll sweep, which does not see O_PATH descriptors) and checks that
 * exactly the fds in keep[] are open. Returns 0, or -ENOTRECOVERABLE with
 * *stray (may be NULL) set to the first unexpected open fd, or -EBADF with
 * *stray set to a kept fd that is closed. Async-signal-safe. */
int sbx_fd_verify_only_raw(const int *keep, size_t n_keep, int *stray);

/* Fills out[0..cap) with the open descriptors in increasing order, walking
 * up to the soft RLIMIT_NOFILE; returns how many are open (may exceed cap,
 * the rest are not stored) or -errno. For tests and the status report.
 * Async-signal-safe. */
int sbx_fd_list_open_raw(int *out, size_t cap);

#endif /* SBX_KERNEL_NAMESPACES_FDS_H_ */
