/* The supervisor as an executor of the table of file-system calls
 * (sandbox/files/fs_calls.h): one handler per operation; see call.h.
 *
 * Why it exists: layer 1 and the supervisor turn the same calls into the
 * same file operations. Here a notified call is decoded by the shared
 * decoder (fs_decode.h), reading the target's memory through
 * /proc/TID/mem with ID_VALID after every read, so which argument is the
 * path and which flags are valid is the table's answer, the same as layer
 * 1's. Each handler then decides with the resolver on the supervisor's
 * own copy of the path, made absolute with the target's working directory
 * or directory descriptor, and performs the call itself (supervisor.h).
 * A descriptor form (fchmod, ftruncate, utimensat(fd, NULL)) is a row of
 * the same table, handled by the same operation's handler, so a check of
 * the path form cannot be missing from it.
 *
 * What it trusts: the decoder's copies, the resolver and the kernel. What
 * it refuses: what the decoder refuses (with the kernel's errno), what the
 * resolver refuses, and the operations that are refused everywhere
 * (links, special files, ownership, extended attributes, inode flags, file
 * watches, the old utime calls).
 */
#include "sandbox/supervisor/call.h"

#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

/* ---- reading the target's memory ---------------------------------------- */

/* A decoded path made absolute (relative to the target's dirfd, or its
 * working directory) and normalised into out (PATH_MAX bytes). Answers
 * the call itself (dropped when the target is gone, else with the
 * errno) and returns false when the path is unusable. */
static bool absolute(sbx_call *c, int dirfd, const char *raw, size_t len,
                     char *out) {
  int rc = sbx_target_absolute_path(&c->t, dirfd, raw, len, out);
  if (rc == SBX_TARGET_GONE) {
    answer_drop(c);
    return false;
  }
  if (rc < 0) {
    answer_failed(c, -rc);
    return false;
  }
  return true;
}

static bool take_path(sbx_call *c) {
  return absolute(c, c->q.dirfd, c->q.path, c->q.path_len, c->path);
}

static bool take_path2(sbx_call *c) {
  return absolute(c, c->q.dirfd2, c->q.path2, c->q.path2_len, c->path2);
}

static uint64_t arg_of(const sbx_fs_request *q, sbx_fs_arg_role role) {
  return sbx_fs_request_arg(q, role);
}

/* ---- open --------------------------------------------------------------- */

static sbx_unotify_hint open_hint(int flags, bool *parent) {
  *parent = (flags & (O_CREAT | SBX_FS_O_TMPFILE_BIT)) != 0;
  if ((flags & (O_CREAT | SBX_FS_O_TMPFILE_BIT | O_TRUNC)) ||
      (flags & O_ACCMODE) != O_RDONLY)
    return SBX_UNOTIFY_HINT_WRITE;
  return SBX_UNOTIFY_HINT_READ;
}

/* A named file behind the target's descriptor: the resolver decides on
 * that name, and must reach the very object the descriptor refers to. */
static void reopen_named(sbx_call *c, int obj, const struct stat *st,
                         const char *where, int flags, mode_t mode) {
  bool parent;
  sbx_unotify_hint hint = open_hint(flags, &parent);
  sbx_decision d;
  int ropen = flags & ~SBX_FS_O_PATH;
  if (flags & SBX_FS_O_PATH)
    ropen = O_RDONLY | (flags & (O_DIRECTORY | O_CLOEXEC));
  int fd = sbx_resolver_open(c->cfg->resolver, sbx_call_self_pid(c, where),
                             where, ropen & ~(O_CREAT | O_EXCL), mode, &d);
  struct stat st2;
  if (fd >= 0 && (fstat(fd, &st2) < 0 || !same_object(st, &st2))) {
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
}

/* Pipes, devices, sockets, deleted files: the program already holds the
 * object; it may reopen it with no more access than it has. */
static void reopen_unnamed(sbx_call *c, int own, int obj, int flags) {
  int have = sbx_call_target_fd_access(c, own);
  if (have < 0) {
    close(obj);
    if (drop_if_gone(c))
      return;
    deny(c, EACCES, "descriptor's access mode unknown", SBX_UNOTIFY_HINT_NONE,
         NULL, false);
    return;
  }
  int want = flags & O_ACCMODE;
  bool within = want == have || have == O_RDWR;
  if (!(flags & SBX_FS_O_PATH) &&
      (!within || (flags & (O_CREAT | SBX_FS_O_TMPFILE_BIT)))) {
    close(obj);
    deny(c, EACCES, "more access than the descriptor has",
         SBX_UNOTIFY_HINT_NONE, NULL, false);
    return;
  }
  char self[64];
  snprintf(self, sizeof(self), "/proc/self/fd/%d", obj);
  int oflags = (flags & (O_ACCMODE | O_APPEND | SBX_FS_O_PATH | O_DIRECTORY)) |
               O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  int fd = open(self, oflags);
  int err = errno;
  close(obj);
  if (fd < 0) {
    answer_failed(c, err);
    return;
  }
  if (!(flags & O_NONBLOCK) && !(flags & SBX_FS_O_PATH))
    fcntl(fd, F_SETFL, flags & O_APPEND);
  c->ev.allowed = true;
  answer_fd(c, fd, (flags & O_CLOEXEC) != 0);
}

/* Reopening one of the target's own descriptors by name. */
static void reopen_own_fd(sbx_call *c, int own, int flags, mode_t mode) {
  int obj = sbx_call_grab_object(c, own);
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
  if ((S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) &&
      sbx_call_object_location(obj, where, sizeof(where)))
    reopen_named(c, obj, &st, where, flags, mode);
  else
    reopen_unnamed(c, own, obj, flags);
}

static void op_open(sbx_call *c, const sbx_fs_request *q) {
  /* The resolver never follows magic links; other RESOLVE_ flags change
   * what a path means and are not emulated: callers fall back to
   * openat(), as they do on kernels before 5.6. */
  if (q->resolve & ~(uint64_t)RESOLVE_NO_MAGICLINKS) {
    deny(c, ENOSYS, "openat2 RESOLVE_ flags are not emulated",
         SBX_UNOTIFY_HINT_NONE, NULL, false);
    return;
  }
  int flags = (int)q->flags;
  mode_t mode = (mode_t)q->mode;
  if (!take_path(c))
    return;
  c->ev.path = c->path;
  int own = sbx_call_own_fd_path(c->path);
  if (own >= 0) {
    reopen_own_fd(c, own, flags, mode);
    return;
  }
  /* O_PATH is served as a read-only open checked like a read, then
   * narrowed to O_PATH on our side. */
  bool opath = (flags & SBX_FS_O_PATH) != 0;
  int rflags = flags;
  if (opath)
    rflags = O_RDONLY | (flags & (O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  /* The last moment before the file system is touched on its behalf. */
  if (drop_if_gone(c))
    return;
  sbx_decision d;
  int fd = sbx_resolver_open(c->cfg->resolver, sbx_call_self_pid(c, c->path),
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

/* ---- stat --------------------------------------------------------------- */

typedef union {
  struct stat st;
  struct statx stx;
} stat_result;

/* stat/statx of the object behind the target's fd (or cwd). */
static void stat_own(sbx_call *c, int fd, bool statx_form, int at_flags,
                     unsigned mask, uint64_t buf) {
  char proc[64];
  sbx_target_fd_proc_path(&c->t, fd, proc, sizeof(proc));
  int rc;
  stat_result out;
  size_t len;
  memset(&out, 0, sizeof(out));
  if (statx_form) {
    rc = statx(AT_FDCWD, proc, at_flags & ~AT_SYMLINK_NOFOLLOW, mask, &out.stx);
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

static void op_stat(sbx_call *c, const sbx_fs_request *q) {
  bool statx_form = sbx_fs_call_arg(q->call, SBX_FS_ARG_MASK) >= 0;
  uint64_t buf = arg_of(q, SBX_FS_ARG_BUF);
  int at_flags = (int)q->at_flags;
  if (q->form == SBX_FS_FORM_EMPTY_PATH && q->fd != AT_FDCWD) {
    /* fstat(): the program holds the descriptor; not a decision. */
    c->report = false;
    stat_own(c, q->fd, statx_form, at_flags, q->mask, buf);
    return;
  }
  if (q->form == SBX_FS_FORM_EMPTY_PATH) {
    /* "" at AT_FDCWD asks about the working directory, which may lie
     * outside the grants (S39): decided like stat(".") on its path. */
    int len = sbx_target_fd_path(&c->t, AT_FDCWD, c->path, sizeof(c->path));
    if (len < 0) {
      if (!drop_if_gone(c))
        answer_failed(c, -len);
      return;
    }
  } else if (!take_path(c)) {
    return;
  }
  c->ev.path = c->path;
  int own = sbx_call_own_fd_path(c->path);
  if (own >= 0) {
    c->ev.allowed = true;
    stat_own(c, own, statx_form, at_flags, q->mask, buf);
    return;
  }
  sbx_decision d;
  stat_result out;
  memset(&out, 0, sizeof(out));
  size_t len;
  int rc;
  pid_t pid = sbx_call_self_pid(c, c->path);
  if (statx_form) {
    rc = sbx_resolver_statx(c->cfg->resolver, pid, c->path, at_flags, q->mask,
                            &out.stx, &d);
    len = sizeof(out.stx);
  } else {
    rc = sbx_resolver_stat(c->cfg->resolver, pid, c->path,
                           !(at_flags & AT_SYMLINK_NOFOLLOW), &out.st, &d);
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

/* ---- access ------------------------------------------------------------- */

/* access() of one of the program's own descriptors: what it may do with
 * it is what the descriptor allows. */
static void access_own(sbx_call *c, int own, int mode) {
  int have = sbx_call_target_fd_access(c, own);
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
}

/* Execute permission is the exec rule's business: without allow_exec
 * nothing is executable; with it, what the resolver lets the program see
 * and has an execute bit. Landlock decides the exec itself. */
static void access_exec(sbx_call *c, int mode, int at_flags,
                        sbx_unotify_hint hint) {
  if (!c->cfg->allow_exec) {
    deny(c, EACCES, "executing programs is not allowed", SBX_UNOTIFY_HINT_EXEC,
         NULL, false);
    return;
  }
  sbx_decision d;
  struct stat st;
  pid_t pid = sbx_call_self_pid(c, c->path);
  int rc = sbx_resolver_stat(c->cfg->resolver, pid, c->path,
                             !(at_flags & AT_SYMLINK_NOFOLLOW), &st, &d);
  if (rc == 0 && !(st.st_mode & 0111))
    rc = -EACCES;
  if (rc == 0 && (mode & (R_OK | W_OK)))
    rc = sbx_resolver_access(c->cfg->resolver, pid, c->path, mode & ~X_OK,
                             at_flags, &d);
  decided(c, rc, &d, hint, c->path, false);
}

static void op_access(sbx_call *c, const sbx_fs_request *q) {
  int mode = (int)q->flags;
  int at_flags = (int)q->at_flags;
  if (q->form == SBX_FS_FORM_EMPTY_PATH) {
    /* faccessat2(fd, "", AT_EMPTY_PATH) asks about a descriptor the
     * program holds; which file that is, is checked like a path. */
    int len = sbx_target_fd_path(&c->t, q->fd, c->path, sizeof(c->path));
    if (len < 0) {
      if (drop_if_gone(c))
        return;
      answer_failed(c, len == -ENOTDIR ? EACCES : -len);
      return;
    }
  } else if (!take_path(c)) {
    return;
  }
  c->ev.path = c->path;
  sbx_unotify_hint hint =
      (mode & W_OK) ? SBX_UNOTIFY_HINT_WRITE : SBX_UNOTIFY_HINT_READ;
  int own = sbx_call_own_fd_path(c->path);
  if (own >= 0) {
    access_own(c, own, mode);
    return;
  }
  if (mode & X_OK) {
    access_exec(c, mode, at_flags, hint);
    return;
  }
  sbx_decision d;
  int rc = sbx_resolver_access(c->cfg->resolver, sbx_call_self_pid(c, c->path),
                               c->path, mode, at_flags, &d);
  decided(c, rc, &d, hint, c->path, false);
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
  else if (strncmp(p, "fd/", 3) == 0 && sbx_call_parse_fd_number(p + 3, &fd))
    sbx_target_fd_proc_path(&c->t, fd, proc, sizeof(proc));
  else
    return false;
  *len = readlink(proc, out, size);
  if (*len < 0)
    *len = -errno;
  return true;
}

static void op_readlink(sbx_call *c, const sbx_fs_request *q) {
  /* The decoder refused a size below 1 (an int, as the kernel reads). */
  int64_t bufsiz = (int)arg_of(q, SBX_FS_ARG_SIZE);
  if (!take_path(c))
    return;
  c->ev.path = c->path;
  char out[PATH_MAX];
  size_t size = (size_t)MIN(bufsiz, (int64_t)sizeof(out));
  ssize_t n;
  sbx_decision d = {.granted = true};
  if (!readlink_self(c, out, size, &n))
    n = sbx_resolver_readlink(c->cfg->resolver, sbx_call_self_pid(c, c->path),
                              c->path, out, size, &d);
  if (drop_if_gone(c))
    return;
  if (n < 0) {
    decided(c, n, &d, SBX_UNOTIFY_HINT_READ, c->path, false);
    return;
  }
  int rc = sbx_target_write(&c->t, arg_of(q, SBX_FS_ARG_BUF), out, (size_t)n);
  if (rc == -ENOENT) {
    answer_drop(c);
    return;
  }
  decided(c, rc < 0 ? rc : n, &d, SBX_UNOTIFY_HINT_READ, c->path, false);
}

/* ---- names in directories ----------------------------------------------- */

/* A path for a call that creates or removes a name; false when it already
 * answered. */
static bool path_for_change(sbx_call *c, bool second) {
  if (!(second ? take_path2(c) : take_path(c)))
    return false;
  if (sbx_call_own_fd_path(second ? c->path2 : c->path) >= 0) {
    deny(c, EPERM, "a descriptor's name cannot be created or removed",
         SBX_UNOTIFY_HINT_NONE, NULL, false);
    return false;
  }
  return true;
}

static void op_mkdir(sbx_call *c, const sbx_fs_request *q) {
  if (!path_for_change(c, false))
    return;
  c->ev.path = c->path;
  if (drop_if_gone(c))
    return;
  sbx_decision d;
  int rc = sbx_resolver_mkdir(c->cfg->resolver, sbx_call_self_pid(c, c->path),
                              c->path, (mode_t)q->mode, &d);
  decided(c, rc, &d, SBX_UNOTIFY_HINT_WRITE, c->path, true);
}

/* unlink, rmdir, and unlinkat (rmdir with AT_REMOVEDIR). */
static void op_remove(sbx_call *c, const sbx_fs_request *q) {
  if (!path_for_change(c, false))
    return;
  c->ev.path = c->path;
  if (drop_if_gone(c))
    return;
  sbx_decision d;
  pid_t pid = sbx_call_self_pid(c, c->path);
  int rc = q->op == SBX_FS_OP_RMDIR
               ? sbx_resolver_rmdir(c->cfg->resolver, pid, c->path, &d)
               : sbx_resolver_unlink(c->cfg->resolver, pid, c->path, &d);
  decided(c, rc, &d, SBX_UNOTIFY_HINT_WRITE, c->path, true);
}

static void op_rename(sbx_call *c, const sbx_fs_request *q) {
  if (!path_for_change(c, false))
    return;
  c->ev.path = c->path;
  if (!path_for_change(c, true))
    return;
  c->ev.path2 = c->path2;
  if (drop_if_gone(c))
    return;
  sbx_decision d;
  int rc = sbx_resolver_rename(c->cfg->resolver, sbx_call_self_pid(c, c->path),
                               c->path, c->path2, q->flags, &d);
  if (!d.granted) {
    /* Name the side that lacks the right in the hint. */
    sbx_match m;
    const sbx_allowlist *list = sbx_resolver_allowlist(c->cfg->resolver);
    bool from_ok = sbx_allowlist_match(list, c->path, strlen(c->path), 0,
                                       SBX_PERM_CREATE, &m);
    decided(c, rc, &d, SBX_UNOTIFY_HINT_WRITE, from_ok ? c->path2 : c->path,
            true);
    return;
  }
  decided(c, rc, &d, SBX_UNOTIFY_HINT_WRITE, c->path, true);
}

/* ---- metadata: chmod, utimensat, truncate, fallocate -------------------- */

#define ON_DESCRIPTOR (-2)

/* For an operation on the existing object the request's path names:
 * makes the path absolute and opens the object (sbx_call_open_object).
 * Returns our fd, or -1 when it already answered. With `own` set, a path
 * naming one of the target's descriptors (followed) returns ON_DESCRIPTOR
 * and the descriptor in *own, for descriptors.c. */
static int object_for(sbx_call *c, unsigned need, sbx_unotify_hint hint,
                      int *own) {
  bool follow = !(c->q.at_flags & AT_SYMLINK_NOFOLLOW);
  if (!take_path(c))
    return -1;
  if (own) {
    *own = follow ? sbx_call_own_fd_path(c->path) : -1;
    if (*own >= 0)
      return ON_DESCRIPTOR;
  }
  c->ev.path = c->path;
  if (drop_if_gone(c))
    return -1;
  int fd = sbx_call_open_object(c, c->path, follow, need, hint);
  if (fd == PATH_GONE) {
    answer_drop(c);
    return -1;
  }
  if (fd < 0) {
    if (c->ev.reason == NULL)
      answer_failed(c, -fd);
    return -1;
  }
  return fd;
}

static void op_chmod(sbx_call *c, const sbx_fs_request *q) {
  mode_t mode = (mode_t)q->mode;
  if (q->form != SBX_FS_FORM_PATH) {
    /* fchmod(fd), and fchmodat2(fd, "", AT_EMPTY_PATH), which works on an
     * O_PATH descriptor too. */
    sbx_fd_chmod(c, q->fd, mode, q->form == SBX_FS_FORM_EMPTY_PATH);
    return;
  }
  int own;
  int fd = object_for(c, SBX_PERM_READ_WRITE, SBX_UNOTIFY_HINT_WRITE, &own);
  if (fd == ON_DESCRIPTOR) {
    sbx_fd_chmod(c, own, mode, true);
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

static void op_refuse(sbx_call *c, const sbx_fs_request *q);

static void op_utime(sbx_call *c, const sbx_fs_request *q) {
  if (q->call->traits & SBX_FS_LEGACY_TIMES) {
    op_refuse(c, q);
    return;
  }
  /* The times are read once; only this copy is applied. */
  struct timespec times[2];
  uint64_t times_addr = arg_of(q, SBX_FS_ARG_TIMES);
  if (times_addr != 0) {
    int rc = sbx_target_read(&c->t, times_addr, times, sizeof(times));
    if (rc == -ENOENT) {
      answer_drop(c);
      return;
    }
    if (rc < 0) {
      answer_failed(c, -rc);
      return;
    }
  }
  const struct timespec *t = times_addr ? times : NULL;
  if (q->form != SBX_FS_FORM_PATH) {
    /* utimensat(fd, NULL, ...) is futimens(fd). */
    sbx_fd_utimens(c, q->fd, t, q->form == SBX_FS_FORM_EMPTY_PATH);
    return;
  }
  int own;
  int fd = object_for(c, SBX_PERM_READ_WRITE, SBX_UNOTIFY_HINT_WRITE, &own);
  if (fd == ON_DESCRIPTOR) {
    sbx_fd_utimens(c, own, t, true);
    return;
  }
  if (fd < 0)
    return;
  int rc = futimens(fd, t) < 0 ? -errno : 0;
  close(fd);
  c->ev.allowed = true;
  answer_result(c, rc);
}

static void op_truncate(sbx_call *c, const sbx_fs_request *q) {
  int64_t length = (int64_t)arg_of(q, SBX_FS_ARG_LENGTH);
  if (q->form == SBX_FS_FORM_FD) {
    sbx_fd_truncate(c, q->fd, length);
    return;
  }
  if (!take_path(c))
    return;
  c->ev.path = c->path;
  if (drop_if_gone(c))
    return;
  sbx_decision d;
  int fd = sbx_resolver_open(c->cfg->resolver, sbx_call_self_pid(c, c->path),
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
  int rc = ftruncate(fd, length) < 0 ? -errno : 0;
  close(fd);
  decided(c, rc, &d, SBX_UNOTIFY_HINT_WRITE, c->path, false);
}

static void op_fallocate(sbx_call *c, const sbx_fs_request *q) {
  sbx_fd_allocate(c, q->fd, (int)q->flags,
                  (int64_t)arg_of(q, SBX_FS_ARG_OFFSET),
                  (int64_t)arg_of(q, SBX_FS_ARG_LENGTH));
}

/* ---- statfs and reading extended attributes ----------------------------- */

static void op_statfs(sbx_call *c, const sbx_fs_request *q) {
  int fd = object_for(c, SBX_PERM_READ_ONLY, SBX_UNOTIFY_HINT_READ, NULL);
  if (fd < 0)
    return;
  struct statfs st;
  memset(&st, 0, sizeof(st));
  int rc = fstatfs(fd, &st) < 0 ? -errno : 0;
  close(fd);
  if (rc == 0)
    rc = sbx_target_write(&c->t, arg_of(q, SBX_FS_ARG_BUF), &st, sizeof(st));
  if (rc == -ENOENT) {
    answer_drop(c);
    return;
  }
  c->ev.allowed = true;
  answer_result(c, rc);
}

/* Copies the attribute's name; false when it answered. */
static bool read_xattr_name(sbx_call *c, const sbx_fs_request *q, char *name,
                            size_t size) {
  ssize_t n =
      sbx_target_read_string(&c->t, arg_of(q, SBX_FS_ARG_NAME), name, size);
  if (n == -ENOENT) {
    answer_drop(c);
    return false;
  }
  if (n <= 0) {
    answer_failed(c, n == -ENAMETOOLONG || n == 0 ? ERANGE : (int)-n);
    return false;
  }
  g_strlcpy(c->detail, name, sizeof(c->detail));
  c->ev.detail = c->detail;
  return true;
}

/* Writes the n bytes read to the target's buffer and answers n. */
static void answer_xattr(sbx_call *c, uint64_t value, const char *buf,
                         size_t size, ssize_t n) {
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

/* getxattr, lgetxattr, listxattr and llistxattr. */
static void op_xattr_read(sbx_call *c, const sbx_fs_request *q) {
  bool list = q->op == SBX_FS_OP_LISTXATTR;
  bool follow = !(q->at_flags & AT_SYMLINK_NOFOLLOW);
  char name[XATTR_NAME_MAX + 1];
  if (!list && !read_xattr_name(c, q, name, sizeof(name)))
    return;
  int fd = object_for(c, SBX_PERM_READ_ONLY, SBX_UNOTIFY_HINT_READ, NULL);
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
  size_t size = MIN((size_t)arg_of(q, SBX_FS_ARG_SIZE), (size_t)XATTR_SIZE_MAX);
  g_autofree char *buf = size ? g_malloc(size) : NULL;
  ssize_t n = list ? flistxattr(fd, buf, size) : fgetxattr(fd, name, buf, size);
  int err = errno;
  close(fd);
  c->ev.allowed = true;
  if (n < 0) {
    answer_error(c, err);
    return;
  }
  answer_xattr(c, arg_of(q, SBX_FS_ARG_BUF), buf, size, n);
}

/* ---- operations refused everywhere -------------------------------------- */

static const struct {
  sbx_fs_op op;
  int error;
  const char *reason;
} refusals[] = {
    {SBX_FS_OP_SETXATTR, ENOTSUP, "extended attributes cannot change"},
    {SBX_FS_OP_REMOVEXATTR, ENOTSUP, "extended attributes cannot change"},
    {SBX_FS_OP_CHOWN, EPERM, "ownership cannot change"},
    {SBX_FS_OP_CHATTR, EPERM, "inode flags cannot change"},
    {SBX_FS_OP_LINK, EPERM, "links are not created"},
    {SBX_FS_OP_SYMLINK, EPERM, "symlinks are not created"},
    {SBX_FS_OP_MKNOD, EPERM, "special files are not created"},
    {SBX_FS_OP_UTIME, EPERM, "use utimensat"},
    {SBX_FS_OP_WATCH, EACCES, "file watches are not served"},
};

/* Names the object for the message, then refuses: a descriptor form by
 * its descriptor, a path form by its path(s), read only to name them. */
static void op_refuse(sbx_call *c, const sbx_fs_request *q) {
  int err = EPERM;
  const char *reason = "not served";
  for (size_t i = 0; i < G_N_ELEMENTS(refusals); i++) {
    if (refusals[i].op == q->op) {
      err = refusals[i].error;
      reason = refusals[i].reason;
    }
  }
  if (q->form != SBX_FS_FORM_PATH) {
    sbx_fd_refuse(c, q->fd, err, reason);
    return;
  }
  int rc =
      sbx_target_absolute_path(&c->t, q->dirfd, q->path, q->path_len, c->path);
  if (rc == 0)
    c->ev.path = c->path;
  if (rc == 0 && q->path2)
    rc = sbx_target_absolute_path(&c->t, q->dirfd2, q->path2, q->path2_len,
                                  c->path2);
  if (rc == 0 && q->path2)
    c->ev.path2 = c->path2;
  if (rc == SBX_TARGET_GONE) {
    answer_drop(c);
    return;
  }
  deny(c, err, reason, SBX_UNOTIFY_HINT_NEVER, NULL, false);
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
static void op_chdir(sbx_call *c, const sbx_fs_request *q) {
  if (!take_path(c))
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
  int rc = sbx_resolver_stat(c->cfg->resolver, sbx_call_self_pid(c, c->path),
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

static void op_exec(sbx_call *c, const sbx_fs_request *q) {
  if (sbx_call_first_exec(c)) {
    /* The launcher's own exec: nothing of the program has run yet, so no
     * one could have changed the path it passes. */
    c->ev.allowed = true;
    c->kind = ANSWER_CONTINUE;
  } else if (c->cfg->allow_exec) {
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
  /* The path only names the event; the decision did not look at it. */
  if (q->form == SBX_FS_FORM_PATH && q->path == NULL)
    return;
  if (q->form != SBX_FS_FORM_PATH) {
    snprintf(c->path, sizeof(c->path), "/proc/self/fd/%d", q->fd);
    c->ev.path = c->path;
    return;
  }
  int rc =
      sbx_target_absolute_path(&c->t, q->dirfd, q->path, q->path_len, c->path);
  if (rc == SBX_TARGET_GONE) {
    answer_drop(c);
    return;
  }
  if (rc == 0)
    c->ev.path = c->path;
}

/* ---- the table of handlers ---------------------------------------------- */

typedef void (*fs_handler)(sbx_call *c, const sbx_fs_request *q);

/* One handler per operation of the table of file-system calls; every row
 * the table marks SBX_FS_SUPERVISED reaches one of them. */
static const fs_handler fs_handlers[SBX_FS_OP_COUNT] = {
    [SBX_FS_OP_OPEN] = op_open,           [SBX_FS_OP_STAT] = op_stat,
    [SBX_FS_OP_ACCESS] = op_access,       [SBX_FS_OP_READLINK] = op_readlink,
    [SBX_FS_OP_MKDIR] = op_mkdir,         [SBX_FS_OP_RMDIR] = op_remove,
    [SBX_FS_OP_UNLINK] = op_remove,       [SBX_FS_OP_RENAME] = op_rename,
    [SBX_FS_OP_CHMOD] = op_chmod,         [SBX_FS_OP_CHOWN] = op_refuse,
    [SBX_FS_OP_UTIME] = op_utime,         [SBX_FS_OP_TRUNCATE] = op_truncate,
    [SBX_FS_OP_FALLOCATE] = op_fallocate, [SBX_FS_OP_STATFS] = op_statfs,
    [SBX_FS_OP_GETXATTR] = op_xattr_read, [SBX_FS_OP_LISTXATTR] = op_xattr_read,
    [SBX_FS_OP_SETXATTR] = op_refuse,     [SBX_FS_OP_REMOVEXATTR] = op_refuse,
    [SBX_FS_OP_CHATTR] = op_refuse,       [SBX_FS_OP_LINK] = op_refuse,
    [SBX_FS_OP_SYMLINK] = op_refuse,      [SBX_FS_OP_MKNOD] = op_refuse,
    [SBX_FS_OP_WATCH] = op_refuse,        [SBX_FS_OP_CHDIR] = op_chdir,
    [SBX_FS_OP_EXEC] = op_exec,
};

void sbx_handle_fs_call(sbx_call *c, const sbx_fs_call *row) {
  sbx_fs_reader reader = sbx_target_fs_reader(&c->t);
  sbx_fs_request *q = &c->q;
  uint64_t args[6];
  for (int i = 0; i < 6; i++)
    args[i] = c->n->data.args[i];
  int rc = sbx_fs_decode(row, args, &reader, c->raw, c->raw2, q);
  c->ev.op = q->op;
  c->ev.operation = sbx_fs_op_name(q->op);
  c->ev.flags = sbx_fs_request_flags(q);
  if (rc == SBX_FS_GONE) {
    answer_drop(c);
    return;
  }
  if (rc < 0 && q->op == SBX_FS_OP_EXEC) {
    /* exec is decided without its arguments, which only name the event:
     * before the launcher's own exec the program is not dumpable, so its
     * memory cannot be read at all; a continued exec meets the kernel's
     * own checks. */
    q->form = SBX_FS_FORM_PATH;
    q->path = NULL;
  } else if (rc < 0) {
    /* Arguments the kernel refuses: not a decision of the rules. */
    answer_failed(c, -rc);
    return;
  }
  fs_handler fn = (unsigned)q->op < SBX_FS_OP_COUNT ? fs_handlers[q->op] : NULL;
  if (fn)
    fn(c, q);
  else
    deny(c, ENOSYS, "no handler for this operation", SBX_UNOTIFY_HINT_NONE,
         NULL, false);
}
