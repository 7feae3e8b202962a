/* Calls that change a file through a descriptor the program holds; see
 * call.h.
 *
 * Why it exists: a program that may only read a file must not change its
 * mode, times, size, allocation, ownership, extended attributes or inode
 * flags through a descriptor either (S26a), including descriptors it
 * inherited, such as a standard output redirected to a file outside every
 * grant. Each call is decided on the object behind the descriptor, taken
 * from the calling thread with pidfd_getfd(2): the kernel's current name
 * for it must be in the allowlist with the write right, and the resolver
 * must reach the very same inode there. The supervisor then performs the
 * call on that open file description, so the kernel never looks at the
 * program's descriptor number, or at a path, again.
 *
 * What it trusts: the kernel's name for an object (/proc/self/fd), checked
 * against the resolver. What it refuses: objects that are not files with
 * a name in the allowlist with the write right - pipes, sockets,
 * anonymous inodes, memfds, deleted files - except that ftruncate and
 * fallocate, which change only data the program can change with write(),
 * are allowed on regular files no name reaches (memfds, unlinked
 * temporary files); files with several hard links (S25); and ownership,
 * extended attributes other than user.* and POSIX ACLs, and inode flags
 * always, as their path forms are.
 */
#include "sandbox/supervisor/call.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <linux/falloc.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9 */
#endif

/* ---- taking the program's descriptor ------------------------------------ */

/* A pidfd for the calling thread (Linux 6.9), else for its process. */
static int target_pidfd(sbx_call *c) {
  int pidfd = (int)syscall(SYS_pidfd_open, c->t.tid, PIDFD_THREAD);
  if (pidfd < 0 && errno == EINVAL) {
    /* Older kernels: the process. sbx_call_grab_fd() checks that the
     * object is the one the calling thread's descriptor names. */
    pid_t tgid = sbx_target_tgid(&c->t);
    if (tgid <= 0)
      return gone(c) ? PATH_GONE : -ESRCH;
    pidfd = (int)syscall(SYS_pidfd_open, tgid, 0);
  }
  int err = errno;
  /* The pid still named the caller after the open: the pidfd is its. */
  if (gone(c)) {
    if (pidfd >= 0)
      close(pidfd);
    return PATH_GONE;
  }
  return pidfd >= 0 ? pidfd : -err;
}

int sbx_call_grab_fd(sbx_call *c, int fd) {
  if (fd < 0)
    return -EBADF;
  int pidfd = target_pidfd(c);
  if (pidfd < 0)
    return pidfd;
  int obj = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
  int err = errno;
  close(pidfd);
  if (gone(c)) {
    if (obj >= 0)
      close(obj);
    return PATH_GONE;
  }
  if (obj < 0)
    return -err;
  /* A thread may have a descriptor table of its own (clone without
   * CLONE_FILES): the object must be the one its fd names. */
  char proc[64];
  sbx_target_fd_proc_path(&c->t, fd, proc, sizeof(proc));
  struct stat a, b;
  bool same = stat(proc, &a) == 0 && fstat(obj, &b) == 0 && same_object(&a, &b);
  if (gone(c)) {
    close(obj);
    return PATH_GONE;
  }
  if (!same) {
    close(obj);
    return -EBADF;
  }
  return obj;
}

/* Names the target's descriptor in the event: its path, or "fd N".
 * Returns false (and answers) when fd is not open or the target is
 * gone. */
static bool name_fd(sbx_call *c, int fd) {
  int len = sbx_target_fd_path(&c->t, fd, c->path, sizeof(c->path));
  if (len > 0) {
    c->ev.path = c->path;
    return true;
  }
  if (drop_if_gone(c))
    return false;
  if (len == -EBADF) {
    answer_failed(c, EBADF);
    return false;
  }
  snprintf(c->detail, sizeof(c->detail), "fd %d", fd);
  c->ev.detail = c->detail;
  return true;
}

/* The program's open file description behind fd, when the file behind it
 * may be written: its name in the allowlist with the write right, the
 * resolver reaching the same inode there, one link only; with
 * allow_unnamed also a regular file no name reaches. Returns our
 * descriptor, or -1 when the call was answered. */
static int writable_object(sbx_call *c, int fd, bool allow_unnamed) {
  if (!name_fd(c, fd))
    return -1;
  int obj = sbx_call_grab_fd(c, fd);
  if (obj == PATH_GONE) {
    answer_drop(c);
    return -1;
  }
  if (obj < 0) {
    answer_failed(c, -obj);
    return -1;
  }
  struct stat st;
  if (fstat(obj, &st) < 0) {
    int err = errno;
    close(obj);
    answer_failed(c, err);
    return -1;
  }
  if (allow_unnamed && S_ISREG(st.st_mode) && st.st_nlink == 0)
    return obj;
  int denied =
      sbx_allowlist_denied_errno(sbx_resolver_allowlist(c->cfg->resolver));
  char where[PATH_MAX];
  /* A FIFO by its name (a pipe has none: its location is no path). */
  bool named_kind =
      S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISFIFO(st.st_mode);
  if (!named_kind || !sbx_call_object_location(obj, where, sizeof(where))) {
    close(obj);
    deny(c, denied, "descriptor names no file in the allowlist",
         SBX_UNOTIFY_HINT_NEVER, NULL, false);
    return -1;
  }
  g_strlcpy(c->path, where, sizeof(c->path));
  c->ev.path = c->path;
  c->ev.detail = NULL;
  sbx_decision d;
  int rfd =
      sbx_resolver_open_object(c->cfg->resolver, sbx_call_self_pid(c, c->path),
                               c->path, SBX_PERM_WRITE, false, &d);
  struct stat rst;
  bool same = rfd >= 0 && fstat(rfd, &rst) == 0 && same_object(&st, &rst);
  if (rfd >= 0)
    close(rfd);
  const char *why = NULL;
  if (rfd < 0 && !d.granted)
    why = d.reason;
  else if (!same)
    why = "descriptor's file moved during the check";
  else if (S_ISREG(st.st_mode) && st.st_nlink > 1)
    why = "a file with several hard links";
  if (why) {
    close(obj);
    deny(c, rfd < 0 && !d.granted ? -rfd : denied, why, SBX_UNOTIFY_HINT_WRITE,
         c->path, false);
    return -1;
  }
  if (drop_if_gone(c)) {
    close(obj);
    return -1;
  }
  c->ev.allowed = true;
  return obj;
}

/* ---- mode and times ----------------------------------------------------- */

/* by_path: the AT_EMPTY_PATH form, which (unlike fchmod) works on an
 * O_PATH descriptor; done through /proc/self/fd/N of ours. */
void sbx_fd_chmod(sbx_call *c, int fd, mode_t mode, bool by_path) {
  int obj = writable_object(c, fd, false);
  if (obj < 0)
    return;
  if (refuse_set_id_change(c, obj, mode)) {
    close(obj);
    return;
  }
  int rc;
  if (by_path) {
    char self[64];
    snprintf(self, sizeof(self), "/proc/self/fd/%d", obj);
    rc = fchmodat(AT_FDCWD, self, mode, 0);
  } else {
    rc = fchmod(obj, mode);
  }
  rc = rc < 0 ? -errno : 0;
  close(obj);
  answer_result(c, rc);
}

void sbx_fd_utimens(sbx_call *c, int fd, const struct timespec *times,
                    bool by_path) {
  int obj = writable_object(c, fd, false);
  if (obj < 0)
    return;
  int rc;
  if (by_path) {
    char self[64];
    snprintf(self, sizeof(self), "/proc/self/fd/%d", obj);
    rc = utimensat(AT_FDCWD, self, times, 0);
  } else {
    rc = futimens(obj, times);
  }
  rc = rc < 0 ? -errno : 0;
  close(obj);
  answer_result(c, rc);
}

/* ---- extended attributes ------------------------------------------------ */

int sbx_xattr_apply(int fd, const sbx_xattr_change *x) {
  char self[64];
  snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
  int rc = x->remove ? removexattr(self, x->name)
                     : setxattr(self, x->name, x->value, x->size, x->flags);
  return rc < 0 ? -errno : 0;
}

void sbx_fd_xattr(sbx_call *c, int fd, const sbx_xattr_change *x) {
  int obj = writable_object(c, fd, false);
  if (obj < 0)
    return;
  int rc = sbx_xattr_apply(obj, x);
  close(obj);
  answer_result(c, rc);
}

/* ---- size and allocation ------------------------------------------------ */

/* The soft RLIMIT_FSIZE of pid from /proc/PID/limits, which anyone may
 * read: prlimit(2) on another process needs its uids or
 * CAP_SYS_RESOURCE over its user namespace, which a supervisor without a
 * user namespace of the program's (or root without that capability, as in
 * many containers) does not have. 0 or -errno. */
static int read_fsize_limit(pid_t pid, struct rlimit *rl) {
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%d/limits", (int)pid);
  FILE *f = fopen(path, "re");
  if (!f)
    return -errno;
  int rc = -ENOENT;
  while (fgets(buf, sizeof buf, f)) {
    if (strncmp(buf, "Max file size", 13) != 0)
      continue;
    char soft[32];
    if (sscanf(buf + 13, " %31s", soft) != 1)
      break;
    rl->rlim_cur = strcmp(soft, "unlimited") == 0
                       ? RLIM_INFINITY
                       : (rlim_t)strtoull(soft, NULL, 10);
    rc = 0;
    break;
  }
  fclose(f);
  return rc;
}

bool sbx_call_beyond_fsize(sbx_call *c, int64_t new_size, int64_t old_size) {
  if (new_size <= old_size)
    return false;
  pid_t pid = sbx_target_tgid(&c->t);
  struct rlimit rl;
  int err = pid <= 0 ? ESRCH : 0;
  if (!err && prlimit(pid, RLIMIT_FSIZE, NULL, &rl) < 0)
    err = errno == EPERM ? -read_fsize_limit(pid, &rl) : errno;
  if (err) {
    if (!drop_if_gone(c))
      answer_failed(c, err);
    return true;
  }
  if (rl.rlim_cur == RLIM_INFINITY || (uint64_t)new_size <= rl.rlim_cur)
    return false;
  /* The kernel would also send SIGXFSZ; the program gets the error. */
  answer_failed(c, EFBIG);
  return true;
}

void sbx_fd_truncate(sbx_call *c, int fd, int64_t length) {
  int obj = writable_object(c, fd, true);
  if (obj < 0)
    return;
  struct stat st;
  if (fstat(obj, &st) == 0 &&
      sbx_call_beyond_fsize(c, length, (int64_t)st.st_size)) {
    close(obj);
    return;
  }
  int rc = ftruncate(obj, length) < 0 ? -errno : 0;
  close(obj);
  answer_result(c, rc);
}

void sbx_fd_allocate(sbx_call *c, int fd, int mode, int64_t offset,
                     int64_t len) {
  int obj = writable_object(c, fd, true);
  if (obj < 0)
    return;
  struct stat st;
  if (offset >= 0 && len > 0 && offset <= INT64_MAX - len &&
      !(mode & FALLOC_FL_KEEP_SIZE) && fstat(obj, &st) == 0) {
    int64_t end = (mode & FALLOC_FL_INSERT_RANGE) ? (int64_t)st.st_size + len
                                                  : offset + len;
    if (sbx_call_beyond_fsize(c, end, (int64_t)st.st_size)) {
      close(obj);
      return;
    }
  }
  int rc = fallocate(obj, mode, offset, len) < 0 ? -errno : 0;
  close(obj);
  answer_result(c, rc);
}

/* ---- refused whatever the grant ----------------------------------------- */

/* The descriptor forms of calls whose path forms are refused everywhere
 * (ownership, extended attributes): named for the message, then refused
 * with the path form's errno. */
void sbx_fd_refuse(sbx_call *c, int fd, int err, const char *reason) {
  if (!name_fd(c, fd))
    return;
  deny(c, err, reason, SBX_UNOTIFY_HINT_NEVER, NULL, false);
}

void sbx_handle_inode_ioctl(sbx_call *c, const char *name) {
  c->ev.op = SBX_FS_OP_CHATTR;
  c->ev.operation = sbx_fs_op_name(SBX_FS_OP_CHATTR);
  if (!name_fd(c, arg_int(c, 0)))
    return;
  if (c->ev.path) {
    snprintf(c->detail, sizeof(c->detail), "ioctl %s", name);
    c->ev.detail = c->detail;
  }
  deny(c, EPERM, "inode flags cannot change", SBX_UNOTIFY_HINT_NEVER, NULL,
       false);
}
