/* The user-notification supervisor; see supervisor.h.
 *
 * Trusts the resolver's allowlist and the kernel; trusts nothing the
 * target wrote. Every handler works on the supervisor's own copies of the
 * target's arguments (target.h), decides with the resolver, and performs
 * the call itself; what the handlers may do is visible in one table at
 * the end of this file.
 */
#include "sandbox/supervisor/supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sandbox/base/path.h"
#include "sandbox/supervisor/call.h"
#include "sandbox/kernel/unotify/notify.h"
#include "sandbox/kernel/unotify/target.h"
#include "sandbox/base/syscalls.h"

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
/* Linux 6.13 and 6.17 (sandbox/base/syscalls_supplement.txt). */
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif
#ifndef __NR_file_setattr
#define __NR_file_setattr 469
#endif

#define K_O_PATH 010000000
#define K_O_TMPFILE_BIT 020000000

struct sbx_unotify {
  sbx_unotify_channel ch;
  sbx_unotify_config cfg;
  bool pending;
  bool first_exec_seen;
  sbx_unotify_stats stats;
  int wait_epoll;     /* the sockets of waiting calls */
  GPtrArray *waiting; /* of sbx_call, ANSWER_WAIT */
};

/* ---- decisions ---------------------------------------------------------- */

void sbx_call_set_hint(sbx_call *c, sbx_unotify_hint hint, const char *path,
                       bool parent) {
  c->ev.hint = hint;
  c->ev.hint_path = NULL;
  if (!path)
    return;
  g_strlcpy(c->hint_path, path, sizeof(c->hint_path));
  if (parent) {
    char *slash = strrchr(c->hint_path, '/');
    if (slash == c->hint_path)
      slash[1] = '\0';
    else if (slash)
      *slash = '\0';
  }
  c->ev.hint_path = c->hint_path;
}

/* ---- paths -------------------------------------------------------------- */

/* The path argument, absolute and normalised, in out (PATH_MAX bytes). */
static int read_path(sbx_call *c, int dirfd, uint64_t addr, char *out,
                     unsigned flags) {
  return sbx_target_read_path(&c->t, dirfd, addr, out, flags);
}

/* read_path() for a handler: answers the call itself (dropped when the
 * target is gone, else with the path's errno) and returns -1 when the
 * path is unusable; else 0 or PATH_EMPTY. */
static int take_path(sbx_call *c, int dirfd, uint64_t addr, char *out,
                     unsigned flags) {
  int rc = read_path(c, dirfd, addr, out, flags);
  if (rc == PATH_GONE) {
    answer_drop(c);
    return -1;
  }
  if (rc < 0) {
    answer_failed(c, -rc);
    return -1;
  }
  return rc;
}

/* The pid /proc/self means, looked up only for paths below /proc. */
pid_t sbx_call_self_pid(sbx_call *c, const char *path) {
  if (strncmp(path, "/proc/", 6) != 0)
    return 0;
  return sbx_target_tgid(&c->t);
}

static bool parse_fd_number(const char *s, int *fd) {
  if (!*s)
    return false;
  long v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9')
      return false;
    v = v * 10 + (*s - '0');
    if (v > INT_MAX)
      return false;
  }
  *fd = (int)v;
  return true;
}

/* The target's own descriptor a path names, or -1: /proc/self/fd/N,
 * /proc/thread-self/fd/N, /dev/fd/N, /dev/stdin, /dev/stdout, /dev/stderr.
 * (The kernel reaches the same object through a magic link, which the
 * resolver never follows.) */
int sbx_call_own_fd_path(const char *path) {
  static const char *const prefixes[] = {"/proc/self/fd/",
                                         "/proc/thread-self/fd/", "/dev/fd/"};
  int fd;
  for (size_t i = 0; i < G_N_ELEMENTS(prefixes); i++) {
    size_t pl = strlen(prefixes[i]);
    if (strncmp(path, prefixes[i], pl) == 0 && parse_fd_number(path + pl, &fd))
      return fd;
  }
  if (strcmp(path, "/dev/stdin") == 0)
    return 0;
  if (strcmp(path, "/dev/stdout") == 0)
    return 1;
  if (strcmp(path, "/dev/stderr") == 0)
    return 2;
  return -1;
}

/* The access mode (O_RDONLY/O_WRONLY/O_RDWR) of the target's fd, from
 * /proc/TID/fdinfo/N; -errno if it cannot be read. */
static int target_fd_access(sbx_call *c, int fd) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)c->t.tid, fd);
  int f = open(path, O_RDONLY | O_CLOEXEC);
  if (f < 0)
    return -errno;
  char buf[256];
  ssize_t n = read(f, buf, sizeof(buf) - 1);
  close(f);
  if (n <= 0)
    return -EIO;
  buf[n] = '\0';
  const char *line = strstr(buf, "flags:");
  if (!line || gone(c))
    return -EIO;
  unsigned long flags = strtoul(line + 6, NULL, 8);
  return (int)(flags & O_ACCMODE);
}

static bool access_within(int want, int have) {
  if (want == have || have == O_RDWR)
    return true;
  return false;
}

/* Where the object behind our own descriptor fd lives now, as the kernel
 * names it; false for pipes, sockets, anonymous and deleted files. */
bool sbx_call_object_location(int fd, char *out, size_t size) {
  char link[64];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, out, size - 1);
  if (n <= 0)
    return false;
  out[n] = '\0';
  if (out[0] != '/')
    return false;
  static const char deleted[] = " (deleted)";
  size_t dl = sizeof(deleted) - 1;
  if ((size_t)n > dl && memcmp(out + n - dl, deleted, dl) == 0)
    return false;
  return sbx_path_validate(out, (size_t)n, NULL) == 0;
}

/* An O_PATH descriptor of ours for the object behind the target's fd. */
static int grab_target_fd(sbx_call *c, int fd) {
  char proc[64];
  sbx_target_fd_proc_path(&c->t, fd, proc, sizeof(proc));
  int obj = open(proc, O_PATH | O_CLOEXEC);
  int err = errno;
  if (gone(c)) {
    if (obj >= 0)
      close(obj);
    return PATH_GONE;
  }
  return obj >= 0 ? obj : -err;
}

/* Opens, for an operation that needs `need` on an existing object, a
 * descriptor of ours: through the resolver when `path` is a path, or the
 * object behind the target's own fd. The object's current location must
 * carry `need` (for the resolver's own checks O_RDONLY only asks READ).
 * Returns the fd, PATH_GONE, or -errno with the denial recorded. */
static int open_object(sbx_call *c, const char *path, bool follow,
                       unsigned need, sbx_unotify_hint hint) {
  const sbx_allowlist *list = sbx_resolver_allowlist(c->u->cfg.resolver);
  int own = sbx_call_own_fd_path(path);
  int fd;
  char where[PATH_MAX];
  if (own >= 0) {
    int obj = grab_target_fd(c, own);
    if (obj < 0)
      return obj;
    if (!sbx_call_object_location(obj, where, sizeof(where))) {
      close(obj);
      deny(c, EACCES, "descriptor names no file in the allowlist", hint, NULL,
           false);
      return -EACCES;
    }
    struct stat a, b;
    sbx_decision d;
    fd = sbx_resolver_open(c->u->cfg.resolver, sbx_call_self_pid(c, where),
                           where, O_RDONLY | O_NONBLOCK | O_NOFOLLOW, 0, &d);
    if (fd < 0) {
      close(obj);
      if (!d.granted)
        deny(c, -fd, d.reason, hint, where, false);
      return fd;
    }
    if (fstat(obj, &a) < 0 || fstat(fd, &b) < 0 || !same_object(&a, &b)) {
      close(obj);
      close(fd);
      deny(c, EACCES, "descriptor's file moved during the check", hint, where,
           false);
      return -EACCES;
    }
    close(obj);
  } else {
    sbx_decision d;
    fd = sbx_resolver_open(c->u->cfg.resolver, sbx_call_self_pid(c, path), path,
                           O_RDONLY | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW), 0,
                           &d);
    if (fd < 0) {
      if (!d.granted)
        deny(c, -fd, d.reason, hint, path, false);
      return fd;
    }
    if (!sbx_call_object_location(fd, where, sizeof(where))) {
      close(fd);
      deny(c, EACCES, "object has no name in the allowlist", hint, path, false);
      return -EACCES;
    }
  }
  if ((need & ~(unsigned)SBX_PERM_READ_ONLY) != 0) {
    sbx_match m;
    size_t plen = strlen(where);
    struct stat st;
    const char *why = NULL;
    if (!sbx_allowlist_match(list, where, plen, 0, need, &m))
      why = "not in the allowlist";
    else if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1)
      why = "a file with several hard links"; /* S25 */
    if (why) {
      close(fd);
      deny(c, sbx_allowlist_denied_errno(list), why, hint, where, false);
      return -sbx_allowlist_denied_errno(list);
    }
  }
  return fd;
}

/* ---- open --------------------------------------------------------------- */

static const char *open_operation(int flags) {
  if (flags & (O_CREAT | K_O_TMPFILE_BIT))
    return "create";
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
    return "write";
  return "read";
}

static sbx_unotify_hint open_hint(int flags, bool *parent) {
  *parent = (flags & (O_CREAT | K_O_TMPFILE_BIT)) != 0;
  if ((flags & (O_CREAT | K_O_TMPFILE_BIT | O_TRUNC)) ||
      (flags & O_ACCMODE) != O_RDONLY)
    return SBX_UNOTIFY_HINT_WRITE;
  return SBX_UNOTIFY_HINT_READ;
}

/* Reopening one of the target's own descriptors by name. */
static void reopen_own_fd(sbx_call *c, int own, int flags, mode_t mode) {
  int obj = grab_target_fd(c, own);
  if (obj == PATH_GONE) {
    answer_drop(c);
    return;
  }
  if (obj < 0) {
    answer_failed(c, -obj);
    return;
  }
  struct stat st;
  if (fstat(obj, &st) < 0) {
    int err = errno;
    close(obj);
    answer_failed(c, err);
    return;
  }
  char where[PATH_MAX];
  bool named = (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) &&
               sbx_call_object_location(obj, where, sizeof(where));
  bool parent = false;
  sbx_unotify_hint hint = open_hint(flags, &parent);
  if (named) {
    /* A file with a name: the resolver decides on that name, and must
     * reach the very object the descriptor refers to. */
    sbx_decision d;
    int ropen = flags & ~K_O_PATH;
    if (flags & K_O_PATH)
      ropen = O_RDONLY | (flags & (O_DIRECTORY | O_CLOEXEC));
    int fd = sbx_resolver_open(c->u->cfg.resolver, sbx_call_self_pid(c, where),
                               where, ropen & ~(O_CREAT | O_EXCL), mode, &d);
    struct stat st2;
    if (fd >= 0 && (fstat(fd, &st2) < 0 || !same_object(&st, &st2))) {
      close(fd);
      close(obj);
      deny(c, EACCES, "descriptor's file moved during the check", hint, where,
           false);
      return;
    }
    close(obj);
    if (fd < 0) {
      decided(c, fd, &d, hint, where, false);
      return;
    }
    c->ev.allowed = true;
    answer_fd(c, fd, (flags & O_CLOEXEC) != 0);
    return;
  }
  /* Pipes, devices, sockets, deleted files: the program already holds
   * the object; it may reopen it with no more access than it has. */
  int have = target_fd_access(c, own);
  if (have < 0) {
    close(obj);
    if (drop_if_gone(c))
      return;
    deny(c, EACCES, "descriptor's access mode unknown", SBX_UNOTIFY_HINT_NONE,
         NULL, false);
    return;
  }
  int want = flags & O_ACCMODE;
  if (!(flags & K_O_PATH) &&
      (!access_within(want, have) || (flags & (O_CREAT | K_O_TMPFILE_BIT)))) {
    close(obj);
    deny(c, EACCES, "more access than the descriptor has",
         SBX_UNOTIFY_HINT_NONE, NULL, false);
    return;
  }
  char self[64];
  snprintf(self, sizeof(self), "/proc/self/fd/%d", obj);
  int oflags = (flags & (O_ACCMODE | O_APPEND | K_O_PATH | O_DIRECTORY)) |
               O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  int fd = open(self, oflags);
  int err = errno;
  close(obj);
  if (fd < 0) {
    answer_failed(c, err);
    return;
  }
  if (!(flags & O_NONBLOCK) && !(flags & K_O_PATH))
    fcntl(fd, F_SETFL, flags & O_APPEND);
  c->ev.allowed = true;
  answer_fd(c, fd, (flags & O_CLOEXEC) != 0);
}

static void do_open(sbx_call *c, int dirfd, uint64_t path_addr, int flags,
                    mode_t mode) {
  c->ev.operation = open_operation(flags);
  c->ev.flags = (uint32_t)flags;
  int rc = take_path(c, dirfd, path_addr, c->path, 0);
  if (rc < 0)
    return;
  c->ev.path = c->path;
  int own = sbx_call_own_fd_path(c->path);
  if (own >= 0) {
    reopen_own_fd(c, own, flags, mode);
    return;
  }
  /* O_PATH is served as a read-only open checked like a read, then
   * narrowed to O_PATH on our side. */
  bool opath = (flags & K_O_PATH) != 0;
  int rflags = flags;
  if (opath)
    rflags = O_RDONLY | (flags & (O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  /* The last moment before the file system is touched on its behalf. */
  if (drop_if_gone(c))
    return;
  sbx_decision d;
  int fd = sbx_resolver_open(c->u->cfg.resolver, sbx_call_self_pid(c, c->path),
                             c->path, rflags, mode, &d);
  if (fd >= 0 && opath) {
    char self[64];
    snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
    int p = open(self, O_PATH | O_CLOEXEC);
    int err = errno;
    close(fd);
    fd = p < 0 ? -err : p;
  }
  bool parent;
  sbx_unotify_hint hint = open_hint(flags, &parent);
  if (fd < 0) {
    decided(c, fd, &d, hint, c->path, parent);
    return;
  }
  c->ev.allowed = true;
  answer_fd(c, fd, (flags & O_CLOEXEC) != 0);
}

static void h_open(sbx_call *c) {
  do_open(c, AT_FDCWD, arg(c, 0), arg_int(c, 1), (mode_t)arg_int(c, 2));
}

static void h_openat(sbx_call *c) {
  do_open(c, arg_int(c, 0), arg(c, 1), arg_int(c, 2), (mode_t)arg_int(c, 3));
}

static void h_creat(sbx_call *c) {
  do_open(c, AT_FDCWD, arg(c, 0), O_CREAT | O_WRONLY | O_TRUNC,
          (mode_t)arg_int(c, 1));
}

static void h_openat2(sbx_call *c) {
  struct open_how how;
  size_t size = (size_t)arg(c, 3);
  c->ev.operation = "open";
  if (size < sizeof(how)) {
    answer_failed(c, EINVAL);
    return;
  }
  int rc = sbx_target_read(&c->t, arg(c, 2), &how, sizeof(how));
  if (rc == -ENOENT) {
    answer_drop(c);
    return;
  }
  if (rc < 0) {
    answer_failed(c, -rc);
    return;
  }
  if (how.flags > UINT32_MAX || how.mode > 07777) {
    answer_failed(c, EINVAL);
    return;
  }
  /* The resolver never follows magic links; other RESOLVE_ flags change
   * what a path means and are not emulated: callers fall back to
   * openat(), as they do on kernels before 5.6. */
  if (how.resolve & ~(uint64_t)RESOLVE_NO_MAGICLINKS) {
    deny(c, ENOSYS, "openat2 RESOLVE_ flags are not emulated",
         SBX_UNOTIFY_HINT_NONE, NULL, false);
    return;
  }
  do_open(c, arg_int(c, 0), arg(c, 1), (int)how.flags, (mode_t)how.mode);
}

/* ---- stat family -------------------------------------------------------- */

enum { STAT_PLAIN, STAT_STATX };

/* stat/statx of the object behind the target's fd (or cwd). */
static void stat_own(sbx_call *c, int fd, int kind, int at_flags, unsigned mask,
                     uint64_t buf) {
  char proc[64];
  sbx_target_fd_proc_path(&c->t, fd, proc, sizeof(proc));
  int rc;
  union {
    struct stat st;
    struct statx stx;
  } out;
  size_t len;
  memset(&out, 0, sizeof(out));
  if (kind == STAT_STATX) {
    rc =
        statx(AT_FDCWD, proc, at_flags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW),
              mask, &out.stx);
    len = sizeof(out.stx);
  } else {
    rc = stat(proc, &out.st);
    len = sizeof(out.st);
  }
  int err = errno;
  if (drop_if_gone(c))
    return;
  if (rc < 0) {
    answer_error(c, err == ENOENT ? EBADF : err);
    return;
  }
  rc = sbx_target_write(&c->t, buf, &out, len);
  if (rc == -ENOENT) {
    answer_drop(c);
    return;
  }
  answer_result(c, rc);
}

static void do_stat(sbx_call *c, int kind, int dirfd, uint64_t path_addr,
                    int at_flags, unsigned mask, uint64_t buf) {
  c->ev.operation = "stat";
  c->ev.flags = (uint32_t)at_flags;
  int known = AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT;
  if (kind == STAT_STATX)
    known |= AT_STATX_SYNC_TYPE;
  if (at_flags & ~known) {
    answer_failed(c, EINVAL);
    return;
  }
  int rc = take_path(c, dirfd, path_addr, c->path,
                     (at_flags & AT_EMPTY_PATH) ? PATH_EMPTY_OK : 0);
  if (rc < 0)
    return;
  if (rc == PATH_EMPTY && dirfd != AT_FDCWD) {
    /* fstat(): the program holds the descriptor; not a decision. */
    c->report = false;
    stat_own(c, dirfd, kind, at_flags, mask, buf);
    return;
  }
  if (rc == PATH_EMPTY) {
    /* "" at AT_FDCWD asks about the working directory, which may lie
     * outside the grants (S39): decided like stat(".") on its path. */
    int len = sbx_target_fd_path(&c->t, AT_FDCWD, c->path, sizeof(c->path));
    if (len < 0) {
      if (!drop_if_gone(c))
        answer_failed(c, -len);
      return;
    }
    at_flags &= ~AT_EMPTY_PATH;
  }
  c->ev.path = c->path;
  int own = sbx_call_own_fd_path(c->path);
  if (own >= 0) {
    c->ev.allowed = true;
    stat_own(c, own, kind, at_flags, mask, buf);
    return;
  }
  bool follow = !(at_flags & AT_SYMLINK_NOFOLLOW);
  sbx_decision d;
  union {
    struct stat st;
    struct statx stx;
  } out;
  memset(&out, 0, sizeof(out));
  size_t len;
  if (kind == STAT_STATX) {
    rc = sbx_resolver_statx(c->u->cfg.resolver, sbx_call_self_pid(c, c->path),
                            c->path, at_flags & ~AT_EMPTY_PATH, mask, &out.stx,
                            &d);
    len = sizeof(out.stx);
  } else {
    rc = sbx_resolver_stat(c->u->cfg.resolver, sbx_call_self_pid(c, c->path),
                           c->path, follow, &out.st, &d);
    len = sizeof(out.st);
  }
  if (rc < 0) {
    decided(c, rc, &d, SBX_UNOTIFY_HINT_READ, c->path, false);
    return;
  }
  rc = sbx_target_write(&c->t, buf, &out, len);
  if (rc == -ENOENT) {
    answer_drop(c);
    return;
  }
  decided(c, rc, &d, SBX_UNOTIFY_HINT_READ, c->path, false);
}

static void h_stat(sbx_call *c) {
  do_stat(c, STAT_PLAIN, AT_FDCWD, arg(c, 0), 0, 0, arg(c, 1));
}

static void h_lstat(sbx_call *c) {
  do_stat(c, STAT_PLAIN, AT_FDCWD, arg(c, 0), AT_SYMLINK_NOFOLLOW, 0,
          arg(c, 1));
}

static void h_newfstatat(sbx_call *c) {
  do_stat(c, STAT_PLAIN, arg_int(c, 0), arg(c, 1), arg_int(c, 3), 0, arg(c, 2));
}

static void h_statx(sbx_call *c) {
  do_stat(c, STAT_STATX, arg_int(c, 0), arg(c, 1), arg_int(c, 2),
          (unsigned)arg_int(c, 3), arg(c, 4));
}

/* ---- access ------------------------------------------------------------- */

static void do_access(sbx_call *c, int dirfd, uint64_t path_addr, int mode,
                      int at_flags) {
  c->ev.operation = "stat";
  c->ev.flags = (uint32_t)mode;
  if ((mode & ~(R_OK | W_OK | X_OK)) ||
      (at_flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))) {
    answer_failed(c, EINVAL);
    return;
  }
  int rc = take_path(c, dirfd, path_addr, c->path,
                     (at_flags & AT_EMPTY_PATH) ? PATH_EMPTY_OK : 0);
  if (rc < 0)
    return;
  if (rc == PATH_EMPTY) {
    /* faccessat2(fd, "", AT_EMPTY_PATH) asks about a descriptor the
     * program holds; which file that is, is checked like a path. */
    int len = sbx_target_fd_path(&c->t, dirfd, c->path, sizeof(c->path));
    if (len < 0) {
      if (drop_if_gone(c))
        return;
      answer_failed(c, len == -ENOTDIR ? EACCES : -len);
      return;
    }
    at_flags &= ~AT_EMPTY_PATH;
  }
  c->ev.path = c->path;
  if (mode & W_OK)
    c->ev.operation = "write";
  else if (mode & R_OK)
    c->ev.operation = "read";
  sbx_unotify_hint hint =
      (mode & W_OK) ? SBX_UNOTIFY_HINT_WRITE : SBX_UNOTIFY_HINT_READ;
  int own = sbx_call_own_fd_path(c->path);
  if (own >= 0) {
    /* The program's own descriptor exists; what it may do with it is
     * what the descriptor allows. */
    int have = target_fd_access(c, own);
    if (drop_if_gone(c))
      return;
    c->ev.allowed = true;
    if (have < 0)
      answer_error(c, ENOENT);
    else if (((mode & R_OK) && have == O_WRONLY) ||
             ((mode & W_OK) && have == O_RDONLY) || (mode & X_OK))
      answer_error(c, EACCES);
    else
      answer_value(c, 0);
    return;
  }
  sbx_decision d;
  if (mode & X_OK) {
    /* Execute permission is the exec rule's business: without allow_exec
     * nothing is executable; with it, what the resolver lets the program
     * see and has an execute bit. Landlock decides the exec itself. */
    if (!c->u->cfg.allow_exec) {
      c->ev.operation = "exec";
      deny(c, EACCES, "executing programs is not allowed",
           SBX_UNOTIFY_HINT_EXEC, NULL, false);
      return;
    }
    struct stat st;
    rc = sbx_resolver_stat(c->u->cfg.resolver, sbx_call_self_pid(c, c->path),
                           c->path, !(at_flags & AT_SYMLINK_NOFOLLOW), &st, &d);
    if (rc == 0 && !(st.st_mode & 0111))
      rc = -EACCES;
    if (rc == 0 && (mode & (R_OK | W_OK)))
      rc =
          sbx_resolver_access(c->u->cfg.resolver, sbx_call_self_pid(c, c->path),
                              c->path, mode & ~X_OK, at_flags, &d);
    decided(c, rc, &d, hint, c->path, false);
    return;
  }
  rc = sbx_resolver_access(c->u->cfg.resolver, sbx_call_self_pid(c, c->path),
                           c->path, mode, at_flags, &d);
  decided(c, rc, &d, hint, c->path, false);
}

static void h_access(sbx_call *c) {
  do_access(c, AT_FDCWD, arg(c, 0), arg_int(c, 1), 0);
}

static void h_faccessat(sbx_call *c) {
  do_access(c, arg_int(c, 0), arg(c, 1), arg_int(c, 2), 0);
}

static void h_faccessat2(sbx_call *c) {
  do_access(c, arg_int(c, 0), arg(c, 1), arg_int(c, 2), arg_int(c, 3));
}

/* ---- readlink ----------------------------------------------------------- */

/* readlink of /proc/self/{exe,cwd,fd/N}: the program asks about itself. */
static bool readlink_self(sbx_call *c, char *out, size_t size, ssize_t *len) {
  char proc[64];
  const char *p = c->path;
  if (strncmp(p, "/proc/self/", 11) == 0)
    p += 11;
  else if (strncmp(p, "/proc/thread-self/", 18) == 0)
    p += 18;
  else
    return false;
  int fd;
  if (strcmp(p, "exe") == 0)
    snprintf(proc, sizeof(proc), "/proc/%d/exe", (int)c->t.tid);
  else if (strcmp(p, "cwd") == 0)
    snprintf(proc, sizeof(proc), "/proc/%d/cwd", (int)c->t.tid);
  else if (strncmp(p, "fd/", 3) == 0 && parse_fd_number(p + 3, &fd))
    sbx_target_fd_proc_path(&c->t, fd, proc, sizeof(proc));
  else
    return false;
  *len = readlink(proc, out, size);
  if (*len < 0)
    *len = -errno;
  return true;
}

static void do_readlink(sbx_call *c, int dirfd, uint64_t path_addr,
                        uint64_t buf, int64_t bufsiz) {
  c->ev.operation = "stat";
  if (bufsiz <= 0) {
    answer_failed(c, EINVAL);
    return;
  }
  int rc = take_path(c, dirfd, path_addr, c->path, 0);
  if (rc < 0)
    return;
  c->ev.path = c->path;
  char out[PATH_MAX];
  size_t size = (size_t)MIN(bufsiz, (int64_t)sizeof(out));
  ssize_t n;
  sbx_decision d = {.granted = true};
  if (!readlink_self(c, out, size, &n))
    n = sbx_resolver_readlink(c->u->cfg.resolver, sbx_call_self_pid(c, c->path),
                              c->path, out, size, &d);
  if (drop_if_gone(c))
    return;
  if (n < 0) {
    decided(c, n, &d, SBX_UNOTIFY_HINT_READ, c->path, false);
    return;
  }
  rc = sbx_target_write(&c->t, buf, out, (size_t)n);
  if (rc == -ENOENT) {
    answer_drop(c);
    return;
  }
  decided(c, rc < 0 ? rc : n, &d, SBX_UNOTIFY_HINT_READ, c->path, false);
}

static void h_readlink(sbx_call *c) {
  do_readlink(c, AT_FDCWD, arg(c, 0), arg(c, 1), (int64_t)arg_int(c, 2));
}

static void h_readlinkat(sbx_call *c) {
  do_readlink(c, arg_int(c, 0), arg(c, 1), arg(c, 2), (int64_t)arg_int(c, 3));
}

/* ---- directory changes -------------------------------------------------- */

/* Reads one path for a call that changes a directory; false when it
 * already answered. */
static bool path_for_change(sbx_call *c, int dirfd, uint64_t addr, char *out) {
  int rc = take_path(c, dirfd, addr, out, 0);
  if (rc < 0)
    return false;
  if (sbx_call_own_fd_path(out) >= 0) {
    deny(c, EPERM, "a descriptor's name cannot be created or removed",
         SBX_UNOTIFY_HINT_NONE, NULL, false);
    return false;
  }
  return true;
}

static void do_mkdir(sbx_call *c, int dirfd, uint64_t path_addr, mode_t mode) {
  c->ev.operation = "mkdir";
  c->ev.flags = mode;
  if (!path_for_change(c, dirfd, path_addr, c->path))
    return;
  c->ev.path = c->path;
  if (drop_if_gone(c))
    return;
  sbx_decision d;
  int rc = sbx_resolver_mkdir(c->u->cfg.resolver, sbx_call_self_pid(c, c->path),
                              c->path, mode, &d);
  decided(c, rc, &d, SBX_UNOTIFY_HINT_WRITE, c->path, true);
}

static void h_mkdir(sbx_call *c) {
  do_mkdir(c, AT_FDCWD, arg(c, 0), (mode_t)arg_int(c, 1));
}

static void h_mkdirat(sbx_call *c) {
  do_mkdir(c, arg_int(c, 0), arg(c, 1), (mode_t)arg_int(c, 2));
}

static void do_remove(sbx_call *c, int dirfd, uint64_t path_addr, bool dir) {
  c->ev.operation = dir ? "rmdir" : "unlink";
  if (!path_for_change(c, dirfd, path_addr, c->path))
    return;
  c->ev.path = c->path;
  if (drop_if_gone(c))
    return;
  sbx_decision d;
  int rc =
      dir ? sbx_resolver_rmdir(c->u->cfg.resolver,
                               sbx_call_self_pid(c, c->path), c->path, &d)
          : sbx_resolver_unlink(c->u->cfg.resolver,
                                sbx_call_self_pid(c, c->path), c->path, &d);
  decided(c, rc, &d, SBX_UNOTIFY_HINT_WRITE, c->path, true);
}

static void h_unlink(sbx_call *c) {
  do_remove(c, AT_FDCWD, arg(c, 0), false);
}

static void h_rmdir(sbx_call *c) {
  do_remove(c, AT_FDCWD, arg(c, 0), true);
}

static void h_unlinkat(sbx_call *c) {
  int flags = arg_int(c, 2);
  if (flags & ~AT_REMOVEDIR) {
    c->ev.operation = "unlink";
    answer_failed(c, EINVAL);
    return;
  }
  do_remove(c, arg_int(c, 0), arg(c, 1), (flags & AT_REMOVEDIR) != 0);
}

static void do_rename(sbx_call *c, int olddirfd, uint64_t oldp, int newdirfd,
                      uint64_t newp, unsigned flags) {
  c->ev.operation = "rename";
  c->ev.flags = flags;
  if (!path_for_change(c, olddirfd, oldp, c->path))
    return;
  c->ev.path = c->path;
  if (!path_for_change(c, newdirfd, newp, c->path2))
    return;
  c->ev.path2 = c->path2;
  if (drop_if_gone(c))
    return;
  sbx_decision d;
  int rc =
      sbx_resolver_rename(c->u->cfg.resolver, sbx_call_self_pid(c, c->path),
                          c->path, c->path2, flags, &d);
  if (!d.granted) {
    /* Name the side that lacks the right in the hint. */
    sbx_match m;
    const sbx_allowlist *list = sbx_resolver_allowlist(c->u->cfg.resolver);
    bool from_ok = sbx_allowlist_match(list, c->path, strlen(c->path), 0,
                                       SBX_PERM_CREATE, &m);
    decided(c, rc, &d, SBX_UNOTIFY_HINT_WRITE, from_ok ? c->path2 : c->path,
            true);
    return;
  }
  decided(c, rc, &d, SBX_UNOTIFY_HINT_WRITE, c->path, true);
}

static void h_rename(sbx_call *c) {
  do_rename(c, AT_FDCWD, arg(c, 0), AT_FDCWD, arg(c, 1), 0);
}

static void h_renameat(sbx_call *c) {
  do_rename(c, arg_int(c, 0), arg(c, 1), arg_int(c, 2), arg(c, 3), 0);
}

static void h_renameat2(sbx_call *c) {
  do_rename(c, arg_int(c, 0), arg(c, 1), arg_int(c, 2), arg(c, 3),
            (unsigned)arg_int(c, 4));
}

/* ---- metadata: chmod, utimensat, truncate ------------------------------- */

#define ON_DESCRIPTOR (-2)

/* Reads the path for an operation on an existing object and opens the
 * object (open_object). Returns our fd, or -1 when it already answered.
 * With `own` set, a call on one of the target's descriptors (an empty
 * path with AT_EMPTY_PATH, or /proc/self/fd/N followed) returns
 * ON_DESCRIPTOR and the descriptor in *own, for descriptors.c. */
static int object_for(sbx_call *c, int dirfd, uint64_t path_addr, int at_flags,
                      unsigned need, sbx_unotify_hint hint, int *own) {
  int rc = take_path(c, dirfd, path_addr, c->path,
                     (at_flags & AT_EMPTY_PATH) ? PATH_EMPTY_OK : 0);
  if (rc < 0)
    return -1;
  if (own) {
    *own = rc == PATH_EMPTY ? dirfd : -1;
    if (rc != PATH_EMPTY && !(at_flags & AT_SYMLINK_NOFOLLOW))
      *own = sbx_call_own_fd_path(c->path);
    if (*own >= 0)
      return ON_DESCRIPTOR;
  }
  if (rc == PATH_EMPTY) {
    /* The call is on dirfd itself: name it like /proc/self/fd/N. */
    if (dirfd == AT_FDCWD)
      g_strlcpy(c->path, "/proc/self/cwd", sizeof(c->path));
    else
      snprintf(c->path, sizeof(c->path), "/proc/self/fd/%d", dirfd);
  }
  c->ev.path = c->path;
  if (rc == PATH_EMPTY && dirfd == AT_FDCWD) {
    int len = sbx_target_fd_path(&c->t, AT_FDCWD, c->path, sizeof(c->path));
    if (len < 0) {
      if (gone(c))
        answer_drop(c);
      else
        answer_error(c, -len);
      return -1;
    }
  }
  if (drop_if_gone(c))
    return -1;
  int fd =
      open_object(c, c->path, !(at_flags & AT_SYMLINK_NOFOLLOW), need, hint);
  if (fd == PATH_GONE) {
    answer_drop(c);
    return -1;
  }
  if (fd < 0) {
    if (c->ev.reason == NULL) {
      answer_failed(c, -fd);
    }
    return -1;
  }
  return fd;
}

static void do_chmod(sbx_call *c, int dirfd, uint64_t path_addr, mode_t mode,
                     int at_flags) {
  c->ev.operation = "chmod";
  c->ev.flags = mode;
  if (at_flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) {
    answer_failed(c, EINVAL);
    return;
  }
  int own;
  int fd = object_for(c, dirfd, path_addr, at_flags, SBX_PERM_READ_WRITE,
                      SBX_UNOTIFY_HINT_WRITE, &own);
  if (fd == ON_DESCRIPTOR) {
    sbx_fd_chmod(c, own, mode);
    return;
  }
  if (fd < 0)
    return;
  /* setuid and setgid bits never survive: a file the program made must
   * not run with its owner's identity outside the sandbox. */
  int rc = fchmod(fd, mode & 01777) < 0 ? -errno : 0;
  close(fd);
  c->ev.allowed = true;
  answer_result(c, rc);
}

static void h_chmod(sbx_call *c) {
  do_chmod(c, AT_FDCWD, arg(c, 0), (mode_t)arg_int(c, 1), 0);
}

static void h_fchmodat(sbx_call *c) {
  do_chmod(c, arg_int(c, 0), arg(c, 1), (mode_t)arg_int(c, 2), 0);
}

static void h_fchmodat2(sbx_call *c) {
  do_chmod(c, arg_int(c, 0), arg(c, 1), (mode_t)arg_int(c, 2), arg_int(c, 3));
}

static void h_utimensat(sbx_call *c) {
  c->ev.operation = "utime";
  int dirfd = arg_int(c, 0);
  int at_flags = arg_int(c, 3);
  if (at_flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) {
    answer_failed(c, EINVAL);
    return;
  }
  /* utimensat(fd, NULL, ...) is futimens(fd): flags must be 0, and
   * AT_FDCWD names no file. */
  if (arg(c, 1) == 0 && (at_flags || dirfd == AT_FDCWD)) {
    answer_failed(c, at_flags ? EINVAL : EFAULT);
    return;
  }
  /* The times are read once, before anything else; only this copy is
   * applied. */
  struct timespec times[2];
  bool have_times = arg(c, 2) != 0;
  if (have_times) {
    int rc = sbx_target_read(&c->t, arg(c, 2), times, sizeof(times));
    if (rc == -ENOENT) {
      answer_drop(c);
      return;
    }
    if (rc < 0) {
      answer_failed(c, -rc);
      return;
    }
  }
  if (arg(c, 1) == 0) {
    sbx_fd_utimens(c, dirfd, have_times ? times : NULL, false);
    return;
  }
  int own;
  int fd = object_for(c, dirfd, arg(c, 1), at_flags, SBX_PERM_READ_WRITE,
                      SBX_UNOTIFY_HINT_WRITE, &own);
  if (fd == ON_DESCRIPTOR) {
    sbx_fd_utimens(c, own, have_times ? times : NULL, true);
    return;
  }
  if (fd < 0)
    return;
  int rc = futimens(fd, have_times ? times : NULL) < 0 ? -errno : 0;
  close(fd);
  c->ev.allowed = true;
  answer_result(c, rc);
}

static void h_truncate(sbx_call *c) {
  c->ev.operation = "write";
  int64_t length = (int64_t)arg(c, 1);
  int rc = take_path(c, AT_FDCWD, arg(c, 0), c->path, 0);
  if (rc < 0)
    return;
  c->ev.path = c->path;
  if (drop_if_gone(c))
    return;
  sbx_decision d;
  int fd = sbx_resolver_open(c->u->cfg.resolver, sbx_call_self_pid(c, c->path),
                             c->path, O_WRONLY | O_NONBLOCK, 0, &d);
  if (fd < 0) {
    decided(c, fd, &d, SBX_UNOTIFY_HINT_WRITE, c->path, false);
    return;
  }
  struct stat st;
  if (fstat(fd, &st) == 0 &&
      sbx_call_beyond_fsize(c, length, (int64_t)st.st_size)) {
    close(fd);
    return;
  }
  rc = ftruncate(fd, length) < 0 ? -errno : 0;
  close(fd);
  decided(c, rc, &d, SBX_UNOTIFY_HINT_WRITE, c->path, false);
}

/* ---- statfs and extended attributes ------------------------------------- */

static void h_statfs(sbx_call *c) {
  c->ev.operation = "stat";
  int fd = object_for(c, AT_FDCWD, arg(c, 0), 0, SBX_PERM_READ_ONLY,
                      SBX_UNOTIFY_HINT_READ, NULL);
  if (fd < 0)
    return;
  struct statfs st;
  memset(&st, 0, sizeof(st));
  int rc = fstatfs(fd, &st) < 0 ? -errno : 0;
  close(fd);
  if (rc == 0)
    rc = sbx_target_write(&c->t, arg(c, 1), &st, sizeof(st));
  if (rc == -ENOENT) {
    answer_drop(c);
    return;
  }
  c->ev.allowed = true;
  answer_result(c, rc);
}

/* getxattr/lgetxattr (list == false) and listxattr/llistxattr. */
static void do_xattr_read(sbx_call *c, bool list, bool follow) {
  c->ev.operation = "read";
  char name[XATTR_NAME_MAX + 1];
  uint64_t value = list ? arg(c, 1) : arg(c, 2);
  size_t size = (size_t)(list ? arg(c, 2) : arg(c, 3));
  if (!list) {
    ssize_t n = sbx_target_read_string(&c->t, arg(c, 1), name, sizeof(name));
    if (n == -ENOENT) {
      answer_drop(c);
      return;
    }
    if (n <= 0) {
      answer_failed(c, n == -ENAMETOOLONG || n == 0 ? ERANGE : (int)-n);
      return;
    }
    g_strlcpy(c->detail, name, sizeof(c->detail));
    c->ev.detail = c->detail;
  }
  int fd = object_for(c, AT_FDCWD, arg(c, 0), follow ? 0 : AT_SYMLINK_NOFOLLOW,
                      SBX_PERM_READ_ONLY, SBX_UNOTIFY_HINT_READ, NULL);
  if (fd < 0) {
    /* A symlink cannot be opened; it carries no attributes sbx serves. */
    if (!follow && c->kind == ANSWER_VALUE && c->error == ELOOP) {
      if (list)
        answer_value(c, 0);
      else
        answer_error(c, ENODATA);
    }
    return;
  }
  size = MIN(size, (size_t)XATTR_SIZE_MAX);
  g_autofree char *buf = size ? g_malloc(size) : NULL;
  ssize_t n = list ? flistxattr(fd, buf, size) : fgetxattr(fd, name, buf, size);
  int err = errno;
  close(fd);
  c->ev.allowed = true;
  if (n < 0) {
    answer_error(c, err);
    return;
  }
  if (size && n > 0) {
    int rc = sbx_target_write(&c->t, value, buf, (size_t)n);
    if (rc == -ENOENT) {
      answer_drop(c);
      return;
    }
    if (rc < 0) {
      answer_error(c, -rc);
      return;
    }
  }
  answer_value(c, n);
}

static void h_getxattr(sbx_call *c) {
  do_xattr_read(c, false, true);
}
static void h_lgetxattr(sbx_call *c) {
  do_xattr_read(c, false, false);
}
static void h_listxattr(sbx_call *c) {
  do_xattr_read(c, true, true);
}
static void h_llistxattr(sbx_call *c) {
  do_xattr_read(c, true, false);
}

/* ---- calls that are always refused, with the path named ---------------- */

/* Reads the path argument at index i (for the message) and refuses. */
static void refuse_path(sbx_call *c, const char *op, int dirfd, int i, int err,
                        const char *reason) {
  c->ev.operation = op;
  int rc = read_path(c, dirfd, arg(c, i), c->path, PATH_EMPTY_OK);
  if (rc == PATH_GONE) {
    answer_drop(c);
    return;
  }
  if (rc == 0)
    c->ev.path = c->path;
  deny(c, err, reason, SBX_UNOTIFY_HINT_NEVER, NULL, false);
}

/* Calls refused outright; the path is read only to name it. */
typedef struct {
  int nr;
  const char *operation;
  int dirfd_arg; /* -1: relative to the working directory */
  int path_arg;
  int error;
  const char *reason;
} refusal;

static const refusal refusals[] = {
    {__NR_setxattr, "setxattr", -1, 0, ENOTSUP,
     "extended attributes cannot change"},
    {__NR_lsetxattr, "setxattr", -1, 0, ENOTSUP,
     "extended attributes cannot change"},
    {__NR_removexattr, "setxattr", -1, 0, ENOTSUP,
     "extended attributes cannot change"},
    {__NR_lremovexattr, "setxattr", -1, 0, ENOTSUP,
     "extended attributes cannot change"},
    {__NR_link, "link", -1, 1, EPERM, "links are not created"},
    {__NR_linkat, "link", 2, 3, EPERM, "links are not created"},
    {__NR_symlink, "symlink", -1, 1, EPERM, "symlinks are not created"},
    {__NR_symlinkat, "symlink", 1, 2, EPERM, "symlinks are not created"},
    {__NR_mknod, "mknod", -1, 0, EPERM, "special files are not created"},
    {__NR_mknodat, "mknod", 0, 1, EPERM, "special files are not created"},
    {__NR_chown, "chown", -1, 0, EPERM, "ownership cannot change"},
    {__NR_lchown, "chown", -1, 0, EPERM, "ownership cannot change"},
    {__NR_fchownat, "chown", 0, 1, EPERM, "ownership cannot change"},
    {__NR_utime, "utime", -1, 0, EPERM, "use utimensat"},
    {__NR_utimes, "utime", -1, 0, EPERM, "use utimensat"},
    {__NR_futimesat, "utime", 0, 1, EPERM, "use utimensat"},
    {__NR_inotify_add_watch, "watch", -1, 1, EACCES,
     "file watches are not served"},
    {__NR_setxattrat, "setxattr", 0, 1, ENOTSUP,
     "extended attributes cannot change"},
    {__NR_removexattrat, "setxattr", 0, 1, ENOTSUP,
     "extended attributes cannot change"},
    {__NR_file_setattr, "chattr", 0, 1, EPERM, "inode flags cannot change"},
};

static void h_refuse_path(sbx_call *c) {
  for (size_t i = 0; i < G_N_ELEMENTS(refusals); i++) {
    const refusal *r = &refusals[i];
    if (r->nr != c->n->data.nr)
      continue;
    refuse_path(c, r->operation,
                r->dirfd_arg < 0 ? AT_FDCWD : arg_int(c, r->dirfd_arg),
                r->path_arg, r->error, r->reason);
    return;
  }
}

/* ---- the working directory ---------------------------------------------- */

/* chdir() is the one path call the supervisor cannot perform for the
 * program (nothing sets another process's working directory), so once the
 * resolver grants stat on the directory the kernel runs the call as made
 * and reads the path again. Refusing everything the resolver does not
 * grant keeps chdir's answer from telling which names exist outside the
 * grants (S39). A path swapped after the check can still land the
 * program in another directory; that reveals only whether it exists (and
 * its name, through getcwd), because the working directory grants
 * nothing: relative paths and "" at AT_FDCWD are decided on the absolute
 * path it has (docs/sbx-run.md, Limits). */
static void h_chdir(sbx_call *c) {
  c->ev.operation = "chdir";
  int rc = take_path(c, AT_FDCWD, arg(c, 0), c->path, 0);
  if (rc < 0)
    return;
  c->ev.path = c->path;
  int denied =
      sbx_allowlist_denied_errno(sbx_resolver_allowlist(c->cfg->resolver));
  if (sbx_call_own_fd_path(c->path) >= 0) {
    deny(c, denied, "a descriptor's name: use fchdir", SBX_UNOTIFY_HINT_NONE,
         NULL, false);
    return;
  }
  struct stat st;
  sbx_decision d;
  rc = sbx_resolver_stat(c->cfg->resolver, sbx_call_self_pid(c, c->path),
                         c->path, true, &st, &d);
  if (rc < 0) {
    decided(c, rc, &d, SBX_UNOTIFY_HINT_READ, c->path, false);
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    answer_failed(c, ENOTDIR);
    return;
  }
  if (drop_if_gone(c))
    return;
  c->ev.allowed = true;
  c->kind = ANSWER_CONTINUE;
}

/* ---- exec --------------------------------------------------------------- */

static void do_exec(sbx_call *c, int dirfd, uint64_t path_addr, int at_flags) {
  c->ev.operation = "exec";
  if (c->u->cfg.allow_first_exec && !c->u->first_exec_seen) {
    /* The launcher's own exec: nothing of the program has run yet, so no
     * one could have changed the path it passes. */
    c->u->first_exec_seen = true;
    c->ev.allowed = true;
    c->kind = ANSWER_CONTINUE;
  } else if (c->u->cfg.allow_exec) {
    /* Decided without looking at the path: Landlock's EXECUTE right
     * restricts what the kernel will exec to the allowlist, on the file
     * actually opened. */
    c->ev.allowed = true;
    c->kind = ANSWER_CONTINUE;
  } else {
    c->ev.allowed = false;
    c->ev.reason = "executing programs is not allowed";
    sbx_call_set_hint(c, SBX_UNOTIFY_HINT_EXEC, NULL, false);
    answer_error(c, EACCES);
  }
  /* The path only names the event; it is read after the decision. */
  int rc = read_path(c, dirfd, path_addr, c->path,
                     (at_flags & AT_EMPTY_PATH) ? PATH_EMPTY_OK : 0);
  if (rc == PATH_GONE) {
    answer_drop(c);
    return;
  }
  if (rc == PATH_EMPTY)
    snprintf(c->path, sizeof(c->path), "/proc/self/fd/%d", dirfd);
  if (rc >= 0)
    c->ev.path = c->path;
}

static void h_execve(sbx_call *c) {
  do_exec(c, AT_FDCWD, arg(c, 0), 0);
}

static void h_execveat(sbx_call *c) {
  do_exec(c, arg_int(c, 0), arg(c, 1), arg_int(c, 4));
}

/* ---- everything else ---------------------------------------------------- */

/* Calls whose refusal a program expects to read as "not permitted". */
static bool refused_with_eperm(int nr) {
  switch (nr) {
    case __NR_mount:
    case __NR_umount2:
    case __NR_pivot_root:
    case __NR_chroot:
    case __NR_unshare:
    case __NR_setns:
    case __NR_clone:
    case __NR_ptrace:
    case __NR_process_vm_readv:
    case __NR_process_vm_writev:
    case __NR_kcmp:
    case __NR_prctl:
    case __NR_ioctl:
    case __NR_personality:
    case __NR_name_to_handle_at:
    case __NR_open_by_handle_at:
    case __NR_setuid:
    case __NR_setgid:
    case __NR_setreuid:
    case __NR_setregid:
    case __NR_setresuid:
    case __NR_setresgid:
    case __NR_setgroups:
    case __NR_setfsuid:
    case __NR_setfsgid:
    case __NR_capset:
    case __NR_acct:
    case __NR_swapon:
    case __NR_swapoff:
    case __NR_reboot:
    case __NR_sethostname:
    case __NR_setdomainname:
    case __NR_settimeofday:
    case __NR_clock_settime:
    case __NR_adjtimex:
    case __NR_clock_adjtime:
    case __NR_init_module:
    case __NR_finit_module:
    case __NR_delete_module:
    case __NR_kexec_load:
    case __NR_kexec_file_load:
    case __NR_iopl:
    case __NR_ioperm:
    case __NR_bpf:
    case __NR_perf_event_open:
    case __NR_userfaultfd:
    case __NR_keyctl:
    case __NR_add_key:
    case __NR_request_key:
    case __NR_quotactl:
      return true;
    default:
      return false;
  }
}

/* Refused ioctls, named in the message. Compared on the low 32 bits, as
 * the kernel reads the command (S4). */
typedef struct {
  unsigned cmd;
  const char *name;
  bool inode; /* changes a file's inode attributes (S26a) */
} ioctl_info;

static const ioctl_info ioctls[] = {
    {TIOCSTI, "TIOCSTI", false},
    {TIOCLINUX, "TIOCLINUX", false},
    {FS_IOC_SETFLAGS, "FS_IOC_SETFLAGS", true},
    {FS_IOC32_SETFLAGS, "FS_IOC32_SETFLAGS", true},
    {FS_IOC_SETVERSION, "FS_IOC_SETVERSION", true},
    {FS_IOC32_SETVERSION, "FS_IOC32_SETVERSION", true},
    {FS_IOC_FSSETXATTR, "FS_IOC_FSSETXATTR", true},
    {FS_IOC_SETFSLABEL, "FS_IOC_SETFSLABEL", true},
    {FS_IOC_SET_ENCRYPTION_POLICY, "FS_IOC_SET_ENCRYPTION_POLICY", true},
    {FS_IOC_ENABLE_VERITY, "FS_IOC_ENABLE_VERITY", true},
};

static const ioctl_info *find_ioctl(unsigned cmd) {
  for (size_t i = 0; i < G_N_ELEMENTS(ioctls); i++)
    if (ioctls[i].cmd == cmd)
      return &ioctls[i];
  return NULL;
}

static void h_refuse(sbx_call *c) {
  c->ev.operation = "syscall";
  if (c->n->data.nr == __NR_ioctl) {
    const ioctl_info *info = find_ioctl((unsigned)arg_int(c, 1));
    if (info)
      snprintf(c->detail, sizeof(c->detail), "ioctl %s", info->name);
    else
      snprintf(c->detail, sizeof(c->detail), "ioctl 0x%x",
               (unsigned)arg_int(c, 1));
    c->ev.detail = c->detail;
  }
  int err = refused_with_eperm(c->n->data.nr) ? EPERM : ENOSYS;
  deny(c, err, "system call not in the policy", SBX_UNOTIFY_HINT_NONE, NULL,
       false);
}

/* The filter lets every ioctl through but the ones in the table above. */
static void h_ioctl(sbx_call *c) {
  const ioctl_info *info = find_ioctl((unsigned)arg_int(c, 1));
  if (info && info->inode)
    sbx_handle_inode_ioctl(c, info->name);
  else
    h_refuse(c);
}

/* ---- the table ---------------------------------------------------------- */

typedef void (*handler_fn)(sbx_call *c);

typedef struct {
  int nr;
  handler_fn fn;
} handler;

/* Everything the supervisor does for a program, in one place. A number
 * not listed here is refused (h_refuse). */
static const handler handlers[] = {
    {__NR_open, h_open},
    {__NR_openat, h_openat},
    {__NR_creat, h_creat},
    {__NR_openat2, h_openat2},
    {__NR_stat, h_stat},
    {__NR_lstat, h_lstat},
    {__NR_newfstatat, h_newfstatat},
    {__NR_statx, h_statx},
    {__NR_access, h_access},
    {__NR_faccessat, h_faccessat},
    {__NR_faccessat2, h_faccessat2},
    {__NR_readlink, h_readlink},
    {__NR_readlinkat, h_readlinkat},
    {__NR_mkdir, h_mkdir},
    {__NR_mkdirat, h_mkdirat},
    {__NR_unlink, h_unlink},
    {__NR_unlinkat, h_unlinkat},
    {__NR_rmdir, h_rmdir},
    {__NR_rename, h_rename},
    {__NR_renameat, h_renameat},
    {__NR_renameat2, h_renameat2},
    {__NR_chmod, h_chmod},
    {__NR_fchmodat, h_fchmodat},
    {__NR_fchmodat2, h_fchmodat2},
    {__NR_utimensat, h_utimensat},
    {__NR_truncate, h_truncate},
    {__NR_statfs, h_statfs},
    {__NR_getxattr, h_getxattr},
    {__NR_lgetxattr, h_lgetxattr},
    {__NR_listxattr, h_listxattr},
    {__NR_llistxattr, h_llistxattr},
    {__NR_setxattr, h_refuse_path},
    {__NR_lsetxattr, h_refuse_path},
    {__NR_removexattr, h_refuse_path},
    {__NR_lremovexattr, h_refuse_path},
    {__NR_link, h_refuse_path},
    {__NR_linkat, h_refuse_path},
    {__NR_symlink, h_refuse_path},
    {__NR_symlinkat, h_refuse_path},
    {__NR_mknod, h_refuse_path},
    {__NR_mknodat, h_refuse_path},
    {__NR_chown, h_refuse_path},
    {__NR_lchown, h_refuse_path},
    {__NR_fchownat, h_refuse_path},
    {__NR_utime, h_refuse_path},
    {__NR_utimes, h_refuse_path},
    {__NR_futimesat, h_refuse_path},
    {__NR_inotify_add_watch, h_refuse_path},
    {__NR_execve, h_execve},
    {__NR_execveat, h_execveat},
    {__NR_chdir, h_chdir},
    {__NR_fchmod, sbx_handle_fchmod},
    {__NR_fchown, sbx_handle_fchown},
    {__NR_fsetxattr, sbx_handle_fsetxattr},
    {__NR_fremovexattr, sbx_handle_fsetxattr},
    {__NR_setxattrat, h_refuse_path},
    {__NR_removexattrat, h_refuse_path},
    {__NR_file_setattr, h_refuse_path},
    {__NR_ftruncate, sbx_handle_ftruncate},
    {__NR_fallocate, sbx_handle_fallocate},
    {__NR_ioctl, h_ioctl},
    {__NR_socket, sbx_handle_socket},
    {__NR_socketpair, sbx_handle_socketpair},
    {__NR_connect, sbx_handle_connect},
    {__NR_bind, sbx_handle_bind},
};

static handler_fn find_handler(int nr) {
  for (size_t i = 0; i < G_N_ELEMENTS(handlers); i++)
    if (handlers[i].nr == nr)
      return handlers[i].fn;
  return h_refuse;
}

/* ---- the loop ----------------------------------------------------------- */

/* At most this many calls wait at once (connects in progress); one more
 * is answered EAGAIN, as the kernel does when it runs out of resources. */
#define MAX_WAITING 64

sbx_unotify *sbx_unotify_new(int listener, const sbx_unotify_config *config,
                             GError **error) {
  if (!config || !config->resolver) {
    g_set_error(error, SBX_UNOTIFY_ERROR, SBX_UNOTIFY_ERROR_INVALID,
                "the supervisor needs a resolver");
    if (listener >= 0)
      close(listener);
    return NULL;
  }
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) {
    int err = errno;
    g_set_error(error, SBX_UNOTIFY_ERROR, SBX_UNOTIFY_ERROR_FAILED,
                "epoll_create1: %s", g_strerror(err));
    if (listener >= 0)
      close(listener);
    return NULL;
  }
  sbx_unotify *u = g_new0(sbx_unotify, 1);
  u->cfg = *config;
  u->wait_epoll = ep;
  u->waiting = g_ptr_array_new();
  if (!sbx_unotify_channel_open(&u->ch, listener, error)) {
    close(ep);
    g_ptr_array_free(u->waiting, TRUE);
    g_free(u);
    return NULL;
  }
  return u;
}

static void free_call(sbx_call *c) {
  if (c->wait_fd >= 0)
    close(c->wait_fd);
  g_free(c);
}

void sbx_unotify_free(sbx_unotify *u) {
  if (!u)
    return;
  for (guint i = 0; i < u->waiting->len; i++)
    free_call(g_ptr_array_index(u->waiting, i));
  g_ptr_array_free(u->waiting, TRUE);
  close(u->wait_epoll);
  sbx_unotify_channel_close(&u->ch);
  g_free(u);
}

int sbx_unotify_listener(const sbx_unotify *u) {
  return u->ch.listener;
}

int sbx_unotify_waiting_fd(const sbx_unotify *u) {
  return u->wait_epoll;
}

int sbx_unotify_receive(sbx_unotify *u) {
  u->pending = false;
  int rc = sbx_unotify_recv(u->ch.listener, &u->ch.buf);
  if (rc == -ENOENT) {
    u->stats.dropped++;
    return 0;
  }
  if (rc < 0)
    return rc;
  u->stats.received++;
  u->pending = true;
  return 1;
}

const struct seccomp_notif *sbx_unotify_pending(const sbx_unotify *u) {
  return u->pending ? u->ch.buf.req : NULL;
}

static void emit(sbx_unotify *u, sbx_call *c) {
  if (!c->ev.allowed)
    u->stats.denied++;
  if (c->report && u->cfg.on_event)
    u->cfg.on_event(&c->ev, u->cfg.user_data);
}

/* Sends the answer the handler recorded. 0, -ENOENT (target gone), or
 * another -errno. */
static int send_answer(sbx_unotify *u, sbx_call *c) {
  int rc = 0;
  uint64_t id = c->n->id;
  switch (c->kind) {
    case ANSWER_VALUE:
      rc =
          sbx_unotify_reply(u->ch.listener, &u->ch.buf, id, c->value, c->error);
      break;
    case ANSWER_FD:
      rc = sbx_unotify_send_fd(u->ch.listener, id, c->fd, c->fd_flags);
      if (rc >= 0)
        rc = 0;
      close(c->fd);
      c->fd = -1;
      break;
    case ANSWER_CONTINUE:
      rc = sbx_unotify_continue(u->ch.listener, &u->ch.buf, id);
      break;
    case ANSWER_WAIT:
    case ANSWER_DROP:
      rc = -ENOENT;
      break;
  }
  return rc;
}

/* Answers c, reports it and frees it. */
static int finish_call(sbx_unotify *u, sbx_call *c) {
  int rc = send_answer(u, c);
  if (rc == -ENOENT) {
    c->ev.served = false;
    u->stats.dropped++;
  } else if (rc == 0) {
    u->stats.answered++;
  }
  emit(u, c);
  free_call(c);
  return rc;
}

static void stop_waiting(sbx_unotify *u, sbx_call *c) {
  epoll_ctl(u->wait_epoll, EPOLL_CTL_DEL, c->wait_fd, NULL);
  g_ptr_array_remove_fast(u->waiting, c);
}

/* Waiting calls whose target went away (killed, or the call interrupted
 * by a signal: a restarted connect is a new notification). */
static void forget_gone(sbx_unotify *u) {
  for (guint i = u->waiting->len; i-- > 0;) {
    sbx_call *c = g_ptr_array_index(u->waiting, i);
    if (!gone(c))
      continue;
    stop_waiting(u, c);
    c->kind = ANSWER_DROP;
    finish_call(u, c);
  }
}

/* Keeps c until its socket is ready (sbx_unotify_finish_waiting). */
static int start_waiting(sbx_unotify *u, sbx_call *c) {
  forget_gone(u);
  struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = c};
  if (u->waiting->len >= MAX_WAITING ||
      epoll_ctl(u->wait_epoll, EPOLL_CTL_ADD, c->wait_fd, &ev) < 0) {
    answer_error(c, EAGAIN);
    return finish_call(u, c);
  }
  g_ptr_array_add(u->waiting, c);
  return 0;
}

int sbx_unotify_finish_waiting(sbx_unotify *u) {
  struct epoll_event evs[16];
  int n = epoll_wait(u->wait_epoll, evs, G_N_ELEMENTS(evs), 0);
  if (n < 0)
    return errno == EINTR ? 0 : -errno;
  int result = 0;
  for (int i = 0; i < n; i++) {
    sbx_call *c = evs[i].data.ptr;
    if (gone(c)) {
      c->kind = ANSWER_DROP;
    } else {
      sbx_socket_finish(c);
      if (c->kind == ANSWER_WAIT)
        continue;
    }
    stop_waiting(u, c);
    int rc = finish_call(u, c);
    if (rc < 0 && rc != -ENOENT)
      result = rc;
  }
  forget_gone(u);
  return result;
}

int sbx_unotify_answer(sbx_unotify *u) {
  if (!u->pending)
    return -EINVAL;
  u->pending = false;
  sbx_call *c = g_new0(sbx_call, 1);
  /* Copied: the buffer is reused for the reply's bookkeeping. */
  c->notif = *u->ch.buf.req;
  c->n = &c->notif;
  c->u = u;
  c->cfg = &u->cfg;
  c->report = true;
  c->fd = -1;
  c->wait_fd = -1;
  c->kind = ANSWER_VALUE;
  c->error = ENOSYS;
  sbx_target_init(&c->t, u->ch.listener, c->n->id, (pid_t)c->n->pid);
  c->ev.pid = (pid_t)c->n->pid;
  c->ev.nr = c->n->data.nr;
  const char *name = sbx_syscall_name(c->n->data.nr);
  if (!name) {
    snprintf(c->name, sizeof(c->name), "syscall-%d", c->n->data.nr);
    name = c->name;
  }
  c->ev.syscall = name;
  c->ev.allowed = true;
  c->ev.served = true;

  find_handler(c->n->data.nr)(c);
  sbx_target_release(&c->t);
  if (c->kind == ANSWER_WAIT)
    return start_waiting(u, c);
  return finish_call(u, c);
}

int sbx_unotify_handle_one(sbx_unotify *u) {
  int rc = sbx_unotify_receive(u);
  if (rc <= 0)
    return rc;
  rc = sbx_unotify_answer(u);
  return rc == -ENOENT ? 0 : rc;
}

void sbx_unotify_get_stats(const sbx_unotify *u, sbx_unotify_stats *out) {
  *out = u->stats;
}
