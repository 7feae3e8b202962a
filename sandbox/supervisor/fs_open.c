/* Opening files for the supervised program: the open operation of the
 * table of file-system calls (open, openat, creat, openat2); see call.h.
 *
 * Why it exists: an open is answered with a descriptor the supervisor
 * opened itself, through the resolver, and installed in the program in
 * one step (ADDFD with SEND), so the program never opens by a name the
 * supervisor checked (S30). A name of one of the program's own
 * descriptors (/proc/self/fd/N, /dev/stdin) reopens the object behind it:
 * with the access the descriptor has, whatever the object's name; with
 * more, only where the resolver grants it on the object's current name.
 * A pseudo-terminal the program made through a granted /dev/ptmx has its
 * slave, /dev/pts/N, opened for it too; the host's other terminals need
 * their own grant. /dev/tty is the program's terminal, never the
 * supervisor's. The files made for the program (its /etc/passwd and
 * /etc/group) are opened from their memfds, for reading only. A FIFO the
 * grants let the program open opens as the kernel opens it, the waiting
 * done by the supervisor's loop, never by the supervisor.
 *
 * What it trusts: the decoder's copy of the path, the resolver and the
 * kernel's /proc. What it refuses: what the resolver refuses, openat2's
 * RESOLVE_ flags other than RESOLVE_NO_MAGICLINKS (ENOSYS: callers fall
 * back to openat), and a reopen of an object without a name (a pipe, a
 * socket, a deleted file) with more access than the descriptor has.
 */
#include "sandbox/supervisor/call.h"

#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <unistd.h>

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
    decided(c, d.granted ? fd : -held_object_errno(c, fd), &d, hint, where,
            false);
    return;
  }
  c->ev.allowed = true;
  answer_fd(c, fd, (flags & O_CLOEXEC) != 0);
}

/* What a reopen asks beyond what the descriptor already gives: nothing
 * when it reads and writes only as the descriptor does, truncates only a
 * descriptor open for writing, and makes no file (O_TMPFILE makes one in
 * a directory). O_PATH asks nothing. */
static bool reopen_within(int flags, int have) {
  if (have < 0 || have == SBX_FD_NO_ACCESS)
    return false;
  if (flags & SBX_FS_O_PATH)
    return true;
  if (flags & SBX_FS_O_TMPFILE_BIT)
    return false;
  if ((flags & O_TRUNC) && !sbx_call_fd_gives(have, O_WRONLY))
    return false;
  return sbx_call_fd_gives(have, flags & O_ACCMODE);
}

/* The program already holds the object (a pipe, a terminal, a socket, a
 * deleted file, or a file or directory opened with the access it asks
 * for: `sh -c 'echo x > /dev/stderr'` with the output in a file outside
 * the grants): it may reopen it with no more access than it has, as it
 * may outside. The object exists, so O_CREAT creates nothing (and fails
 * with O_EXCL, as outside). */
static void reopen_held(sbx_call *c, int obj, int have, int flags) {
  if (have < 0) {
    close(obj);
    if (drop_if_gone(c))
      return;
    deny(c, EACCES, "descriptor's access mode unknown", SBX_UNOTIFY_HINT_NONE,
         NULL, false);
    return;
  }
  if (!reopen_within(flags, have)) {
    close(obj);
    deny(c, EACCES, "more access than the descriptor has",
         SBX_UNOTIFY_HINT_NONE, NULL, false);
    return;
  }
  if ((flags & O_CREAT) && (flags & O_EXCL) && !(flags & SBX_FS_O_PATH)) {
    close(obj);
    answer_failed(c, EEXIST);
    return;
  }
  char self[64];
  snprintf(self, sizeof(self), "/proc/self/fd/%d", obj);
  int oflags = (flags & (O_ACCMODE | O_APPEND | O_DIRECTORY | O_TRUNC)) |
               O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  /* No O_PATH descriptor can be installed (see sbx_op_open): the object
   * is reopened with the access the program already has to it. */
  if (flags & SBX_FS_O_PATH)
    oflags = (have == O_WRONLY ? O_WRONLY : O_RDONLY) | (flags & O_DIRECTORY) |
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

/* Reopening one of the target's own descriptors by name: with the access
 * it has, the object it holds; with more, a named file or directory is
 * decided by the resolver on its name, like any open. */
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
  int have = sbx_call_target_fd_access(c, own);
  char where[PATH_MAX];
  if (!reopen_within(flags, have) &&
      (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) &&
      sbx_call_object_location(obj, where, sizeof(where)))
    reopen_named(c, obj, &st, where, flags, mode);
  else
    reopen_held(c, obj, have, flags);
}

/* /dev/tty: the program's own terminal, as the kernel would open it for
 * the program, where the allowlist grants /dev/tty. The supervisor's
 * own controlling terminal (the user's) is never opened for it. */
static void open_program_tty(sbx_call *c, int flags) {
  int acc = flags & O_ACCMODE;
  unsigned need = acc == O_RDONLY   ? SBX_PERM_READ
                  : acc == O_WRONLY ? SBX_PERM_WRITE
                                    : SBX_PERM_READ | SBX_PERM_WRITE;
  sbx_match m;
  if (!sbx_allowlist_match(sbx_resolver_allowlist(c->cfg->resolver), c->path,
                           strlen(c->path), 0, need, &m)) {
    deny(c,
         sbx_allowlist_denied_errno(sbx_resolver_allowlist(c->cfg->resolver)),
         "not in the allowlist", SBX_UNOTIFY_HINT_WRITE, c->path, false);
    return;
  }
  if (!c->cfg->tty_relayed) {
    answer_failed(c, ENXIO);
    return;
  }
  if (drop_if_gone(c))
    return;
  int fd = ioctl(c->cfg->tty_master, TIOCGPTPEER,
                 (flags & (O_ACCMODE | O_NONBLOCK)) | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    answer_failed(c, errno);
    return;
  }
  c->ev.allowed = true;
  answer_fd(c, fd, (flags & O_CLOEXEC) != 0);
}

/* A file made for the program: read-only, as on the default mode's
 * read-only root, whose Landlock rule refuses the open for writing
 * (EACCES); reading it gets a descriptor of its own. */
static void open_made(sbx_call *c, const char *proc, int flags) {
  if ((flags & O_CREAT) && (flags & O_EXCL)) {
    answer_failed(c, EEXIST);
    return;
  }
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)) {
    answer_failed(c, EACCES);
    return;
  }
  if (flags & O_DIRECTORY) {
    answer_failed(c, ENOTDIR);
    return;
  }
  if (drop_if_gone(c))
    return;
  int fd = open(proc, O_RDONLY | O_CLOEXEC | (flags & O_NONBLOCK));
  if (fd < 0) {
    answer_failed(c, errno);
    return;
  }
  c->ev.allowed = true;
  answer_fd(c, fd, (flags & O_CLOEXEC) != 0);
}

/* ---- FIFOs ---------------------------------------------------------------
 * A FIFO the grants let the program open with the access it asks (one it
 * made in its private /tmp or a write grant, or one the host keeps in a
 * granted tree) opens as the kernel opens it: a reader waits for a
 * writer, a writer for a reader, unless the program asks O_NONBLOCK (a
 * writer without a reader then gets ENXIO); O_RDWR never waits. The
 * supervisor never blocks (S28): a reader's descriptor is opened at once
 * (so a writer finds a reader, as one waiting in open(2) counts) and
 * handed over when a writer has written or come and gone; a writer
 * waits, holding the FIFO, until a reader comes: at once when the
 * supervisor opens one for the program, else (a reader on the host, for
 * a FIFO in a grant) when its timer next looks. */

/* How often a waiting writer looks for a reader the supervisor did not
 * open. */
#define FIFO_WRITER_RETRY_NS (20 * 1000 * 1000)

/* The FIFO path names, as an O_PATH descriptor, when the program may open
 * it so (O_PATH checked as a read, as every O_PATH open is); else -1. */
static int granted_fifo(sbx_call *c, int flags) {
  if (flags & SBX_FS_O_TMPFILE_BIT)
    return -1;
  int acc = flags & O_ACCMODE;
  unsigned need = acc == O_RDONLY || (flags & SBX_FS_O_PATH)
                      ? SBX_PERM_READ_ONLY
                  : acc == O_WRONLY ? SBX_PERM_STAT | SBX_PERM_WRITE
                                    : SBX_PERM_READ_WRITE;
  sbx_decision d;
  int obj =
      sbx_resolver_open_object(c->cfg->resolver, sbx_call_self_pid(c, c->path),
                               c->path, need, !(flags & O_NOFOLLOW), &d);
  if (obj < 0)
    return -1;
  struct stat st;
  if (fstat(obj, &st) < 0 || !S_ISFIFO(st.st_mode)) {
    close(obj);
    return -1;
  }
  return obj;
}

/* Our descriptor of the FIFO obj with the program's access, opened
 * without waiting; -errno (ENXIO: a writer without a reader). */
static int open_fifo_now(int obj, int flags) {
  char self[64];
  snprintf(self, sizeof(self), "/proc/self/fd/%d", obj);
  int fd = open(self, (flags & O_ACCMODE) | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

/* Hands fd over with the program's flags: O_NONBLOCK only if it asked. */
static void answer_fifo(sbx_call *c, int fd, int flags) {
  if (!(flags & O_NONBLOCK))
    fcntl(fd, F_SETFL, flags & O_APPEND);
  answer_fd(c, fd, (flags & O_CLOEXEC) != 0);
}

static void open_granted_fifo(sbx_call *c, int obj, int flags) {
  c->ev.allowed = true;
  if (flags & SBX_FS_O_PATH) {
    /* The read-only, non-blocking descriptor every O_PATH open is
     * answered with (sbx_op_open), opened at once (tar takes one to
     * restore an extracted FIFO's mode). Unlike an O_PATH descriptor it
     * is a reader: a writer opening the FIFO meanwhile finds one. */
    int fd = open_fifo_now(obj, O_RDONLY);
    close(obj);
    if (fd < 0)
      answer_failed(c, -fd);
    else
      answer_fd(c, fd, (flags & O_CLOEXEC) != 0);
    return;
  }
  int acc = flags & O_ACCMODE;
  int fd = open_fifo_now(obj, flags);
  if (fd >= 0 && acc != O_WRONLY)
    sbx_call_retry_fifo_writers(c);
  if (fd == -ENXIO && !(flags & O_NONBLOCK)) {
    c->kind = ANSWER_WAIT;
    c->wait_kind = WAIT_FIFO_WRITE;
    c->fifo = obj;
    c->fifo_flags = flags;
    c->wait_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    struct itimerspec every = {.it_interval.tv_nsec = FIFO_WRITER_RETRY_NS,
                               .it_value.tv_nsec = FIFO_WRITER_RETRY_NS};
    if (c->wait_fd < 0 || timerfd_settime(c->wait_fd, 0, &every, NULL) < 0)
      answer_failed(c, errno);
    return;
  }
  close(obj);
  if (fd < 0) {
    answer_failed(c, -fd);
  } else if (acc == O_RDONLY && !(flags & O_NONBLOCK)) {
    c->kind = ANSWER_WAIT;
    c->wait_kind = WAIT_FIFO_READ;
    c->wait_fd = fd;
    c->fifo_flags = flags;
  } else {
    answer_fifo(c, fd, flags);
  }
}

void sbx_fifo_finish(sbx_call *c) {
  if (c->wait_kind == WAIT_FIFO_READ) {
    int fd = fcntl(c->wait_fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
      answer_error(c, errno);
    else
      answer_fifo(c, fd, c->fifo_flags);
    return;
  }
  uint64_t expired;
  if (read(c->wait_fd, &expired, sizeof(expired)) < 0 && errno != EAGAIN) {
    answer_error(c, errno);
    return;
  }
  int fd = open_fifo_now(c->fifo, c->fifo_flags);
  if (fd == -ENXIO)
    return; /* still no reader */
  if (fd < 0)
    answer_error(c, -fd);
  else
    answer_fifo(c, fd, c->fifo_flags);
}

void sbx_op_open(sbx_call *c, const sbx_fs_request *q) {
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
  if (!sbx_fs_take_path(c))
    return;
  c->ev.path = c->path;
  if ((flags & (O_CREAT | SBX_FS_O_TMPFILE_BIT)) && refuse_set_id_mode(c, mode))
    return;
  int own = sbx_call_own_fd_path(c->path);
  if (own >= 0) {
    reopen_own_fd(c, own, flags, mode);
    return;
  }
  if (strcmp(c->path, "/dev/tty") == 0) {
    open_program_tty(c, flags);
    return;
  }
  char made_proc[64];
  if (sbx_call_made_file(c, c->path, made_proc, sizeof(made_proc)) >= 0) {
    open_made(c, made_proc, flags);
    return;
  }
  /* O_PATH is checked like a read and answered with the read-only
   * descriptor that check opened: ADDFD cannot install an O_PATH
   * descriptor (the kernel's fget() refuses them), and the read-only one
   * does everything an O_PATH one does. */
  int rflags = flags;
  if (flags & SBX_FS_O_PATH)
    rflags = O_RDONLY | (flags & (O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  /* The last moment before the file system is touched on its behalf. */
  if (drop_if_gone(c))
    return;
  sbx_decision d;
  int fd = sbx_resolver_open(c->cfg->resolver, sbx_call_self_pid(c, c->path),
                             c->path, rflags, mode, &d);
  bool parent;
  sbx_unotify_hint hint = open_hint(flags, &parent);
  if (fd == -ELOOP && (flags & SBX_FS_O_PATH) && (flags & O_NOFOLLOW) &&
      sbx_fs_is_symlink_for_program(c, c->path)) {
    /* O_PATH|O_NOFOLLOW of a symbolic link would be a descriptor of the
     * link itself, which no open for reading gives. glibc asks for one in
     * fchmodat(AT_SYMLINK_NOFOLLOW), and answers EOPNOTSUPP for a link:
     * the same answer here. */
    answer_failed(c, EOPNOTSUPP);
    return;
  }
  if (fd < 0) {
    int pty = sbx_call_open_own_pty(c, c->path, flags);
    if (pty >= 0) {
      fd = pty;
    } else if (pty != -EACCES) {
      answer_failed(c, -pty);
      return;
    }
  }
  if (fd < 0) {
    /* Only a refused special file, or a FIFO's writer finding no reader
     * (the resolver never waits), can be a FIFO's; a missing name (a
     * lookup along a search path) is not looked up again. */
    bool maybe_fifo = d.reason == sbx_resolver_not_regular || fd == -ENXIO;
    int fifo = maybe_fifo ? granted_fifo(c, flags) : -1;
    if (fifo >= 0) {
      open_granted_fifo(c, fifo, flags);
      return;
    }
    decided(c, fd, &d, hint, c->path, parent);
    return;
  }
  int made;
  if (strcmp(c->path, "/dev/ptmx") == 0 && ioctl(fd, TIOCGPTN, &made) == 0)
    sbx_call_pty_made(c, (unsigned)made);
  c->ev.allowed = true;
  answer_fd(c, fd, (flags & O_CLOEXEC) != 0);
}
