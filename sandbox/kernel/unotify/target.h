/* The process behind one notification: its memory, its descriptors and
 * its working directory, as the supervisor may read them.
 *
 * Why it exists: everything a notified call points at (a path, a struct
 * open_how, the buffer a stat result goes to) lives in the target's memory,
 * which the target can change at any moment and which another process may
 * occupy once the target dies. The rules, kept here so no handler can
 * forget one (S30, S31):
 *   - memory is read and written through /proc/TID/mem, opened once per
 *     notification and checked with SECCOMP_IOCTL_NOTIF_ID_VALID right
 *     after the open, so the descriptor is bound to the address space of
 *     the task that made the call even if its pid is reused later;
 *   - every read of target memory, and every look at /proc/TID/fd or cwd,
 *     is followed by another ID_VALID check before its result is used;
 *   - what was read is copied into the supervisor's own buffers and only
 *     those copies are ever used: the decision and the action see the
 *     same bytes, whatever the target does to its memory afterwards.
 *
 * What it trusts: the kernel's /proc. What it refuses: strings without a
 * NUL within the given size, descriptors that do not name a path.
 *
 * Writes go through /proc/TID/mem, which (like ptrace) may write pages
 * the target mapped read-only where the real call would fail with EFAULT;
 * that only ever changes the target's own private memory.
 */
#ifndef SBX_KERNEL_UNOTIFY_TARGET_H_
#define SBX_KERNEL_UNOTIFY_TARGET_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct {
  int listener;
  uint64_t id;
  pid_t tid;  /* the calling thread, in the supervisor's pid namespace */
  pid_t tgid; /* its process; 0 until sbx_target_tgid() asked */
  int mem_fd; /* /proc/TID/mem once opened and validated, else -1 */
} sbx_unotify_target;

void sbx_target_init(sbx_unotify_target *t, int listener, uint64_t id,
                     pid_t tid);
/* Closes what the target struct opened. */
void sbx_target_release(sbx_unotify_target *t);

/* 0 while the call is still pending, -ENOENT once it is not. */
int sbx_target_valid(const sbx_unotify_target *t);

/* Copies the NUL-terminated string at addr into buf. Returns its length,
 * -EFAULT (NULL or unreadable), -ENAMETOOLONG (no NUL in size bytes) or
 * -ENOENT (target gone). */
ssize_t sbx_target_read_string(sbx_unotify_target *t, uint64_t addr, char *buf,
                               size_t size);

/* Copies exactly len bytes. 0, -EFAULT or -ENOENT. */
int sbx_target_read(sbx_unotify_target *t, uint64_t addr, void *buf,
                    size_t len);

/* Writes len bytes at addr (checked valid first). 0, -EFAULT, -ENOENT. */
int sbx_target_write(sbx_unotify_target *t, uint64_t addr, const void *buf,
                     size_t len);

/* The target's process id (Tgid in /proc/TID/status), for /proc/self. */
pid_t sbx_target_tgid(sbx_unotify_target *t);

/* The target's process as its own (innermost) pid namespace numbers it,
 * or 0. */
pid_t sbx_target_ns_tgid(sbx_unotify_target *t);

/* The target's thread as its own (innermost) pid namespace numbers it,
 * or 0. */
pid_t sbx_target_ns_tid(sbx_unotify_target *t);

/* The path the kernel shows for the target's fd (AT_FDCWD: its working
 * directory). Returns its length, -EBADF (not open), -ENOTDIR (a pipe,
 * socket or anonymous inode), -ENOENT (deleted, or target gone). */
int sbx_target_fd_path(sbx_unotify_target *t, int fd, char *buf, size_t size);

/* sbx_target_read_path() results besides 0 and -errno. */
#define SBX_TARGET_GONE (-100000) /* the target went away while we read */
#define SBX_TARGET_PATH_EMPTY \
  1 /* "" with AT_EMPTY_PATH: the call is on dirfd */
enum { SBX_TARGET_PATH_EMPTY_OK = 1u << 0 };

/* Copies the path argument at addr and makes it absolute (relative to
 * the target's dirfd, or its working directory for AT_FDCWD) and
 * lexically normalised, into out (PATH_MAX bytes). Returns 0,
 * SBX_TARGET_PATH_EMPTY (only with SBX_TARGET_PATH_EMPTY_OK),
 * SBX_TARGET_GONE or -errno (-ENOENT for "" without the flag). */
int sbx_target_read_path(sbx_unotify_target *t, int dirfd, uint64_t addr,
                         char *out, unsigned flags);

/* Makes raw (n bytes, a path the target gave in some other form, such
 * as a unix socket address) absolute and lexically normalised into out
 * (PATH_MAX bytes), like sbx_target_read_path(). Returns 0,
 * SBX_TARGET_GONE or -errno. */
int sbx_target_absolute_path(sbx_unotify_target *t, int dirfd, const char *raw,
                             size_t n, char *out);

/* Writes "/proc/TID/fd/N" (the supervisor's way to the object behind the
 * target's fd N) into buf. Returns its length. */
int sbx_target_fd_proc_path(const sbx_unotify_target *t, int fd, char *buf,
                            size_t size);

#endif /* SBX_KERNEL_UNOTIFY_TARGET_H_ */
