/* The supervisor as an executor of the table of file-system calls
 * (sandbox/files/fs_calls.h): decoding, the handler of each operation,
 * and the handlers of the operations that create, remove, rename or
 * change files, or are refused; opening is fs_open.c, looking at files
 * fs_look.c. See call.h.
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
 * (links by descriptor, special files other than a FIFO, ownership, extended
 * attributes other than user.* and POSIX ACLs, inode flags, the old utime
 * calls).
 */
#include "sandbox/supervisor/call.h"

#include <sys/fsuid.h>
#include <sys/inotify.h>
#include <sys/xattr.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- paths --------------------------------------------------------------- */

/* The absolute path a raw path names, as every handler takes it: `..`
 * applied where the kernel's walk applies it (sbx_call_absolute_path),
 * then the program's own links followed (sbx_call_own_links). 0,
 * SBX_TARGET_GONE or -errno; answers nothing. */
static int take_absolute(sbx_call *c, int dirfd, const char *raw, size_t len,
                         char *out) {
  int rc = sbx_call_absolute_path(c, dirfd, raw, len, out);
  return rc == 0 ? sbx_call_own_links(c, out) : rc;
}

/* A decoded path made absolute (relative to the target's dirfd, or its
 * working directory) and normalised into out (PATH_MAX bytes). Answers
 * the call itself (dropped when the target is gone, else with the
 * errno) and returns false when the path is unusable. */
static bool absolute(sbx_call *c, int dirfd, const char *raw, size_t len,
                     char *out) {
  int rc = take_absolute(c, dirfd, raw, len, out);
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

bool sbx_fs_take_path(sbx_call *c) {
  return absolute(c, c->q.dirfd, c->q.path, c->q.path_len, c->path);
}

bool sbx_fs_take_path2(sbx_call *c) {
  return absolute(c, c->q.dirfd2, c->q.path2, c->q.path2_len, c->path2);
}

/* object_for's answer for a path naming one of the target's descriptors,
 * which descriptors.c serves (or, from own_metadata_object, which the
 * descriptor's location must decide). */
#define SBX_ON_DESCRIPTOR (-2)

/* For an operation on attributes, the object a path naming the target's
 * own descriptor reaches: the link itself, not followed (a symbolic link,
 * as the kernel answers for a magic link), or the object behind it when
 * the descriptor already gives what the operation needs (any descriptor
 * shows what stat shows). Returns our fd, PATH_GONE, -errno, or
 * SBX_ON_DESCRIPTOR when the object's location must decide. */
static int own_metadata_object(sbx_call *c, int own, bool follow,
                               unsigned need) {
  if (follow) {
    if ((need & SBX_PERM_READ) &&
        !sbx_call_fd_gives(sbx_call_target_fd_access(c, own), O_RDONLY))
      return SBX_ON_DESCRIPTOR;
    return sbx_call_grab_object(c, own);
  }
  char proc[64];
  sbx_target_fd_proc_path(&c->t, own, proc, sizeof(proc));
  int fd = open(proc, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  int err = errno;
  if (sbx_target_valid(&c->t) < 0) {
    if (fd >= 0)
      close(fd);
    return PATH_GONE;
  }
  return fd >= 0 ? fd : -(err == ENOENT ? EBADF : err);
}

/* The object the request's path names, for an operation on its
 * attributes: any file type, as an O_PATH descriptor where it is not a
 * regular file or directory (sbx_call_open_object's `metadata`). With
 * `own` (a change), a path naming one of the target's descriptors
 * (followed) returns SBX_ON_DESCRIPTOR and the descriptor in *own, for
 * descriptors.c; without (a look), such a path is answered from the
 * descriptor (own_metadata_object). Returns our fd, or -1 when it
 * already answered. */
static int object_for(sbx_call *c, unsigned need, sbx_unotify_hint hint,
                      int *own) {
  bool follow = !(c->q.at_flags & AT_SYMLINK_NOFOLLOW);
  if (!sbx_fs_take_path(c))
    return -1;
  if (own) {
    *own = follow ? sbx_call_own_fd_path(c->path) : -1;
    if (*own >= 0)
      return SBX_ON_DESCRIPTOR;
  }
  c->ev.path = c->path;
  if (drop_if_gone(c))
    return -1;
  int mine = own ? -1 : sbx_call_own_fd_path(c->path);
  int held = mine >= 0 ? own_metadata_object(c, mine, follow, need)
                       : SBX_ON_DESCRIPTOR;
  if (held != SBX_ON_DESCRIPTOR) {
    if (held == PATH_GONE)
      answer_drop(c);
    else if (held < 0)
      answer_failed(c, -held);
    else
      c->ev.allowed = true;
    return held < 0 ? -1 : held;
  }
  char made[64];
  if (sbx_call_made_file(c, c->path, made, sizeof(made)) >= 0) {
    /* A file made for the program: read-only, as on the default mode's
     * read-only root. */
    int fd =
        (need & SBX_PERM_WRITE) ? -EROFS : open(made, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      answer_failed(c, fd == -EROFS ? EROFS : errno);
    else
      c->ev.allowed = true;
    return fd < 0 ? -1 : fd;
  }
  int fd = sbx_call_open_object(c, c->path, follow, need, true, hint);
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

int sbx_fs_metadata_object(sbx_call *c, unsigned need, sbx_unotify_hint hint) {
  return object_for(c, need, hint, NULL);
}

/* For a change of an object's attributes (mode, times), made through
 * its /proc/self/fd name (by_fd_name): a FIFO or a socket file the
 * grants let the program change, as in the default mode. */
static int attribute_object(sbx_call *c, int *own) {
  return object_for(c, SBX_PERM_READ_WRITE, SBX_UNOTIFY_HINT_WRITE, own);
}

/* The object's name under /proc/self/fd, which reaches it whatever the
 * descriptor's kind (an O_PATH one too). */
static const char *by_fd_name(int fd, char *buf, size_t size) {
  snprintf(buf, size, "/proc/self/fd/%d", fd);
  return buf;
}

/* ---- names in directories ----------------------------------------------- */

/* A path for a call that creates or removes a name; false when it already
 * answered. */
static bool path_for_change(sbx_call *c, bool second) {
  if (!(second ? sbx_fs_take_path2(c) : sbx_fs_take_path(c)))
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
  if (!d.granted && sbx_fs_exists_for_program(c, c->path)) {
    answer_failed(c, EEXIST);
    return;
  }
  /* The directory itself is the narrowest grant that lets it be made. */
  decided(c, rc, &d, SBX_UNOTIFY_HINT_WRITE, c->path, false);
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

static void op_chmod(sbx_call *c, const sbx_fs_request *q) {
  mode_t mode = (mode_t)q->mode;
  if (q->form != SBX_FS_FORM_PATH) {
    /* fchmod(fd), and fchmodat2(fd, "", AT_EMPTY_PATH), which works on an
     * O_PATH descriptor too. */
    sbx_fd_chmod(c, q->fd, mode, q->form == SBX_FS_FORM_EMPTY_PATH);
    return;
  }
  if (q->at_flags & AT_SYMLINK_NOFOLLOW) {
    /* A symbolic link has no mode of its own to change. */
    if (!sbx_fs_take_path(c))
      return;
    c->ev.path = c->path;
    if (sbx_fs_is_symlink_for_program(c, c->path)) {
      answer_failed(c, EOPNOTSUPP);
      return;
    }
  }
  int own;
  int fd = attribute_object(c, &own);
  if (fd == SBX_ON_DESCRIPTOR) {
    sbx_fd_chmod(c, own, mode, true);
    return;
  }
  if (fd < 0)
    return;
  if (refuse_set_id_change(c, fd, mode)) {
    close(fd);
    return;
  }
  char name[64];
  int rc = fchmodat(AT_FDCWD, by_fd_name(fd, name, sizeof(name)), mode, 0) < 0
               ? -errno
               : 0;
  close(fd);
  c->ev.allowed = true;
  answer_result(c, rc);
}

static void op_refuse(sbx_call *c, const sbx_fs_request *q);

/* ---- extended attributes ------------------------------------------------ */

/* The attributes a program changes, as it would outside: user.* (the
 * kernel wants write permission on a regular file or a directory) and
 * the POSIX ACLs (the file's owner). security.* and trusted.* never: the
 * kernel lets the owner of a user namespace set security.* labels on a
 * file system mounted in it, and the supervisor owns the sandbox's, in
 * which the private /tmp and /dev/shm are mounted; the program could set
 * none. */
static bool xattr_name_changes(const char *name) {
  static const char user[] = "user.";
  return strncmp(name, user, sizeof(user) - 1) == 0 ||
         strcmp(name, "system.posix_acl_access") == 0 ||
         strcmp(name, "system.posix_acl_default") == 0;
}

/* setxattr, lsetxattr, fsetxattr and the removes: the name and value are
 * read once, and only those copies are applied, to the object where a
 * write grant holds it (or behind a descriptor whose name one does). */
static void op_xattr_change(sbx_call *c, const sbx_fs_request *q) {
  char name[XATTR_NAME_MAX + 1];
  if (!sbx_fs_xattr_name(c, q, name, sizeof(name)))
    return;
  sbx_xattr_change x = {.name = name,
                        .flags = (int)q->flags,
                        .remove = q->op == SBX_FS_OP_REMOVEXATTR};
  /* setxattrat's value is in a struct the table does not decode. */
  bool value_known =
      x.remove || sbx_fs_call_arg(q->call, SBX_FS_ARG_VALUE) >= 0;
  if (!value_known || !xattr_name_changes(name)) {
    op_refuse(c, q);
    return;
  }
  g_autofree char *value = NULL;
  if (!x.remove) {
    x.size = (size_t)sbx_fs_request_arg(q, SBX_FS_ARG_SIZE);
    if (x.size > XATTR_SIZE_MAX) {
      answer_failed(c, E2BIG);
      return;
    }
    value = g_malloc(x.size);
    if (!read_argument(c, sbx_fs_request_arg(q, SBX_FS_ARG_VALUE), value,
                       x.size))
      return;
    x.value = value;
  }
  if (q->form != SBX_FS_FORM_PATH) {
    sbx_fd_xattr(c, q->fd, &x);
    return;
  }
  int own;
  int fd = attribute_object(c, &own);
  if (fd == SBX_ON_DESCRIPTOR) {
    sbx_fd_xattr(c, own, &x);
    return;
  }
  if (fd < 0)
    return;
  int rc = sbx_xattr_apply(fd, &x);
  close(fd);
  c->ev.allowed = true;
  answer_result(c, rc);
}

static void op_utime(sbx_call *c, const sbx_fs_request *q) {
  if (q->call->traits & SBX_FS_LEGACY_TIMES) {
    op_refuse(c, q);
    return;
  }
  /* The times are read once; only this copy is applied. */
  struct timespec times[2];
  uint64_t times_addr = sbx_fs_request_arg(q, SBX_FS_ARG_TIMES);
  if (times_addr != 0 && !read_argument(c, times_addr, times, sizeof(times)))
    return;
  const struct timespec *t = times_addr ? times : NULL;
  if (q->form != SBX_FS_FORM_PATH) {
    /* utimensat(fd, NULL, ...) is futimens(fd). */
    sbx_fd_utimens(c, q->fd, t, q->form == SBX_FS_FORM_EMPTY_PATH);
    return;
  }
  if (q->at_flags & AT_SYMLINK_NOFOLLOW) {
    /* lutimes of a symbolic link in a write grant: the link's own times. */
    if (!sbx_fs_take_path(c))
      return;
    c->ev.path = c->path;
    if (drop_if_gone(c))
      return;
    int link = sbx_fs_symlink_to_change(c, c->path);
    if (link >= 0) {
      int rc = utimensat(link, "", t, AT_EMPTY_PATH) < 0 ? -errno : 0;
      close(link);
      c->ev.allowed = true;
      answer_result(c, rc);
      return;
    }
  }
  int own;
  int fd = attribute_object(c, &own);
  if (fd == SBX_ON_DESCRIPTOR) {
    sbx_fd_utimens(c, own, t, true);
    return;
  }
  if (fd < 0)
    return;
  char name[64];
  int rc = utimensat(AT_FDCWD, by_fd_name(fd, name, sizeof(name)), t, 0) < 0
               ? -errno
               : 0;
  close(fd);
  c->ev.allowed = true;
  answer_result(c, rc);
}

static void op_truncate(sbx_call *c, const sbx_fs_request *q) {
  int64_t length = (int64_t)sbx_fs_request_arg(q, SBX_FS_ARG_LENGTH);
  if (q->form == SBX_FS_FORM_FD) {
    sbx_fd_truncate(c, q->fd, length);
    return;
  }
  if (!sbx_fs_take_path(c))
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
                  (int64_t)sbx_fs_request_arg(q, SBX_FS_ARG_OFFSET),
                  (int64_t)sbx_fs_request_arg(q, SBX_FS_ARG_LENGTH));
}

/* ---- file watches -------------------------------------------------------- */

/* inotify_add_watch: the watch is added to the program's own inotify
 * instance (its open file description, taken with pidfd_getfd) on the
 * object the resolver reached, named through our descriptor of it, so
 * the kernel watches the object decided on and never a name the program
 * could swap. A watch reports changes to the object and, on a directory,
 * the names that come and go in it: it needs read, as the kernel's own
 * check does. IN_DONT_FOLLOW is applied when the object is reached; the
 * kernel then follows our magic link to it. */
static void op_watch(sbx_call *c, const sbx_fs_request *q) {
  int instance_fd = (int)(uint32_t)q->args[0];
  uint32_t mask = (uint32_t)q->args[2];
  int instance = sbx_call_grab_fd(c, instance_fd);
  if (instance == PATH_GONE) {
    answer_drop(c);
    return;
  }
  if (instance < 0) {
    answer_failed(c, -instance);
    return;
  }
  if (mask & IN_DONT_FOLLOW)
    c->q.at_flags |= AT_SYMLINK_NOFOLLOW;
  int obj =
      sbx_fs_metadata_object(c, SBX_PERM_READ_ONLY, SBX_UNOTIFY_HINT_READ);
  if (obj < 0) {
    close(instance);
    return;
  }
  char self[64];
  snprintf(self, sizeof(self), "/proc/self/fd/%d", obj);
  int wd = inotify_add_watch(instance, self, mask & ~(uint32_t)IN_DONT_FOLLOW);
  int err = errno;
  close(obj);
  close(instance);
  if (drop_if_gone(c))
    return;
  if (wd < 0) {
    answer_failed(c, err);
    return;
  }
  c->ev.allowed = true;
  answer_value(c, wd);
}

/* ---- mknod: FIFOs and regular files ----------------------------------- */

/* mknod of a regular file (type 0 or S_IFREG) is a create that opens
 * nothing: made where an open with O_CREAT|O_EXCL would make it, with
 * the profile's umask, as the default mode lets Landlock's MAKE_REG
 * decide. */
static void make_regular_file(sbx_call *c, const sbx_fs_request *q) {
  if (refuse_set_id_mode(c, (mode_t)q->mode) || drop_if_gone(c))
    return;
  if (q->mode & S_ISVTX) {
    /* As the default mode's baseline refuses it. */
    deny(c, EPERM, "a file is made with permission bits only",
         SBX_UNOTIFY_HINT_NEVER, NULL, false);
    return;
  }
  sbx_decision d;
  int fd = sbx_resolver_open(c->cfg->resolver, sbx_call_self_pid(c, c->path),
                             c->path, O_RDONLY | O_CREAT | O_EXCL,
                             (mode_t)q->mode & 0777, &d);
  if (!d.granted && sbx_fs_exists_for_program(c, c->path)) {
    answer_failed(c, EEXIST);
    return;
  }
  if (fd >= 0)
    close(fd);
  decided(c, fd < 0 ? fd : 0, &d, SBX_UNOTIFY_HINT_WRITE, c->path, true);
}

/* mknod of a FIFO where a create is allowed (the sandbox's own /tmp and
 * /dev/shm, a write grant), as the default mode lets Landlock's
 * MAKE_FIFO decide (valgrind's vgdb, make's jobserver, test suites'
 * mkfifo). Opening one never makes the supervisor wait (fs_open.c). */
static void make_fifo(sbx_call *c, const sbx_fs_request *q) {
  if (refuse_set_id_mode(c, (mode_t)q->mode) || drop_if_gone(c))
    return;
  sbx_decision d;
  char name[NAME_MAX + 1];
  int parent =
      sbx_resolver_open_parent(c->cfg->resolver, sbx_call_self_pid(c, c->path),
                               c->path, name, sizeof(name), &d);
  if (parent < 0) {
    decided(c, parent, &d, SBX_UNOTIFY_HINT_WRITE, c->path, true);
    return;
  }
  mode_t umask_ = sbx_allowlist_umask(sbx_resolver_allowlist(c->cfg->resolver));
  int rc =
      mknodat(parent, name, S_IFIFO | ((mode_t)q->mode & 0777 & ~umask_), 0) < 0
          ? -errno
          : 0;
  close(parent);
  decided(c, rc, &d, SBX_UNOTIFY_HINT_WRITE, c->path, true);
}

/* A regular file or a FIFO; every other file type is refused. */
static void op_mknod(sbx_call *c, const sbx_fs_request *q) {
  mode_t type = (mode_t)q->mode & S_IFMT;
  bool regular = type == 0 || type == S_IFREG;
  if ((!regular && type != S_IFIFO) || q->form != SBX_FS_FORM_PATH) {
    op_refuse(c, q);
    return;
  }
  if (!path_for_change(c, false))
    return;
  c->ev.path = c->path;
  if (regular)
    make_regular_file(c, q);
  else
    make_fifo(c, q);
}

/* ---- operations refused everywhere -------------------------------------- */

static const struct {
  sbx_fs_op op;
  int error;
  const char *reason;
} refusals[] = {
    {SBX_FS_OP_SETXATTR, EPERM, "only user.* attributes and ACLs change"},
    {SBX_FS_OP_REMOVEXATTR, EPERM, "only user.* attributes and ACLs change"},
    {SBX_FS_OP_CHOWN, EPERM, "ownership cannot change"},
    {SBX_FS_OP_CHATTR, EPERM, "inode flags cannot change"},
    {SBX_FS_OP_LINK, ENOENT, "linkat(AT_EMPTY_PATH) is not served"},
    {SBX_FS_OP_MKNOD, EPERM, "special files are not created"},
    {SBX_FS_OP_UTIME, EPERM, "use utimensat"},
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

/* Ownership never changes, but a chown that changes nothing succeeds as
 * it does outside: every id -1, or the file's owner giving its own owner
 * and group (tar and cp -a run by the owner restore them). The file is
 * looked at where the program may stat it, or behind its descriptor; a
 * name the program may not stat gets stat's answer, as outside a missing
 * one gets ENOENT whatever the ids, and one it may not write is refused
 * as any change there is. */
static void op_chown(sbx_call *c, const sbx_fs_request *q) {
  uint32_t owner = (uint32_t)sbx_fs_request_arg(q, SBX_FS_ARG_OWNER);
  uint32_t group = (uint32_t)sbx_fs_request_arg(q, SBX_FS_ARG_GROUP);
  const uint32_t none = (uint32_t)-1;
  struct stat st;
  bool have;
  if (q->form != SBX_FS_FORM_PATH) {
    char proc[64];
    sbx_target_fd_proc_path(&c->t, q->fd, proc, sizeof(proc));
    have = stat(proc, &st) == 0;
  } else {
    if (!sbx_fs_take_path(c))
      return;
    c->ev.path = c->path;
    sbx_decision d;
    int rc = sbx_resolver_stat(c->cfg->resolver, sbx_call_self_pid(c, c->path),
                               c->path, !(q->at_flags & AT_SYMLINK_NOFOLLOW),
                               &st, &d);
    if (rc < 0) {
      decided(c, rc, &d, SBX_UNOTIFY_HINT_READ, c->path, false);
      return;
    }
    /* Where the grants do not write, as on the default mode's read-only
     * mount, no chown succeeds. */
    if (sbx_resolver_access(c->cfg->resolver, sbx_call_self_pid(c, c->path),
                            c->path, W_OK, q->at_flags & AT_SYMLINK_NOFOLLOW,
                            &d) != 0) {
      op_refuse(c, q);
      return;
    }
    have = true;
  }
  if (drop_if_gone(c))
    return;
  bool nothing = owner == none && group == none;
  bool own = have && st.st_uid == (uid_t)setfsuid((uid_t)-1) &&
             (owner == none || owner == st.st_uid) &&
             (group == none || group == st.st_gid);
  if (nothing || own) {
    c->ev.allowed = true;
    answer_value(c, 0);
    return;
  }
  op_refuse(c, q);
}

/* link and linkat; linkat(fd, "", ..., AT_EMPTY_PATH), which needs
 * CAP_DAC_READ_SEARCH, is refused as it is outside. */
static void op_link(sbx_call *c, const sbx_fs_request *q) {
  if (q->form != SBX_FS_FORM_PATH)
    op_refuse(c, q);
  else
    sbx_op_link(c, q);
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
  if (!sbx_fs_take_path(c))
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

/* With --allow-exec, Landlock's EXECUTE right follows the read grants,
 * so the kernel would refuse to run a file the grants do not let the
 * program read, with EACCES, which tells that the name is there. Such a
 * file is refused here instead, with the errno of a name outside the
 * grants, as the default mode's tree, which does not hold it, answers;
 * a regular file's refusal is named with the grant that lifts it, as
 * every other refusal is (valgrind's tools in /usr/libexec/valgrind,
 * git's in /usr/lib/git-core). Only refusals are decided on the path;
 * what the grants show goes on to the kernel, which decides on the file
 * it opens. A name that is not there is the kernel's ENOENT, no
 * refusal. */
static void refuse_exec_outside_grants(sbx_call *c) {
  /* The program's own names (/proc/self/..., and /dev/fd/N, taken as
   * /proc/self/fd/N) would name the supervisor's objects here. */
  if (strncmp(c->path, "/proc/", 6) == 0)
    return;
  sbx_decision d;
  sbx_resolver_access(c->cfg->resolver, sbx_call_self_pid(c, c->path), c->path,
                      R_OK, 0, &d);
  if (d.granted)
    return;
  int err = sbx_resolver_unlisted_errno(c->cfg->resolver);
  struct stat st;
  if (stat(c->path, &st) != 0) {
    /* Nothing there to name; and no ENOTDIR telling that a name on the
     * way is a file. */
    answer_error(c, err);
    return;
  }
  deny(c, err, "only files the grants let the program read are executed",
       S_ISREG(st.st_mode) ? SBX_UNOTIFY_HINT_READ : SBX_UNOTIFY_HINT_NONE,
       c->path, false);
}

static void op_exec(sbx_call *c, const sbx_fs_request *q) {
  bool first = sbx_call_first_exec(c);
  if (first) {
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
  int rc = take_absolute(c, q->dirfd, q->path, q->path_len, c->path);
  if (rc == SBX_TARGET_GONE) {
    answer_drop(c);
    return;
  }
  if (rc != 0)
    return;
  c->ev.path = c->path;
  if (!first && c->cfg->allow_exec)
    refuse_exec_outside_grants(c);
}

/* ---- a name written as a directory -------------------------------------- */

/* The kernel's answer for a path written as a directory ("name/",
 * "name/.") where the rules would otherwise see the plain name
 * (sbx_fs_directory_form). The look is decided as a stat: a name the
 * program may not see goes on to the handler, which refuses it as usual.
 * True when it answered. */
static bool answer_directory_form(sbx_call *c, sbx_fs_request *q) {
  sbx_fs_dir_form form;
  if (!sbx_fs_directory_form(q, &form))
    return false;
  if (form.error == 0 && !form.look)
    return false;
  if (take_absolute(c, q->dirfd, q->path, q->path_len, c->path) != 0)
    return false; /* the handler answers the same failure */
  c->ev.path = c->path;
  int err = form.error;
  if (err == 0) {
    char look[PATH_MAX];
    memcpy(look, c->path, strlen(c->path) + 1);
    char *last = strrchr(look, '/');
    if (form.parent && last)
      last[last == look ? 1 : 0] = '\0';
    struct stat st;
    sbx_decision d;
    if (sbx_resolver_stat(c->cfg->resolver, sbx_call_self_pid(c, look), look,
                          form.follow, &st, &d) < 0)
      return false;
    err = S_ISDIR(st.st_mode) ? form.if_dir : form.if_not_dir;
  }
  if (err == 0)
    return false;
  if (!drop_if_gone(c))
    answer_failed(c, err);
  return true;
}

/* ---- the table of handlers ---------------------------------------------- */

typedef void (*fs_handler)(sbx_call *c, const sbx_fs_request *q);

/* One handler per operation of the table of file-system calls; every row
 * the table marks SBX_FS_SUPERVISED reaches one of them. */
static const fs_handler fs_handlers[SBX_FS_OP_COUNT] = {
    [SBX_FS_OP_OPEN] = sbx_op_open,
    [SBX_FS_OP_STAT] = sbx_op_stat,
    [SBX_FS_OP_ACCESS] = sbx_op_access,
    [SBX_FS_OP_READLINK] = sbx_op_readlink,
    [SBX_FS_OP_MKDIR] = op_mkdir,
    [SBX_FS_OP_RMDIR] = op_remove,
    [SBX_FS_OP_UNLINK] = op_remove,
    [SBX_FS_OP_RENAME] = op_rename,
    [SBX_FS_OP_CHMOD] = op_chmod,
    [SBX_FS_OP_CHOWN] = op_chown,
    [SBX_FS_OP_UTIME] = op_utime,
    [SBX_FS_OP_TRUNCATE] = op_truncate,
    [SBX_FS_OP_FALLOCATE] = op_fallocate,
    [SBX_FS_OP_STATFS] = sbx_op_statfs,
    [SBX_FS_OP_GETXATTR] = sbx_op_xattr_read,
    [SBX_FS_OP_LISTXATTR] = sbx_op_xattr_read,
    [SBX_FS_OP_SETXATTR] = op_xattr_change,
    [SBX_FS_OP_REMOVEXATTR] = op_xattr_change,
    [SBX_FS_OP_CHATTR] = op_refuse,
    [SBX_FS_OP_LINK] = op_link,
    [SBX_FS_OP_SYMLINK] = sbx_op_symlink,
    [SBX_FS_OP_MKNOD] = op_mknod,
    [SBX_FS_OP_WATCH] = op_watch,
    [SBX_FS_OP_CHDIR] = op_chdir,
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
  if (answer_directory_form(c, q))
    return;
  fs_handler fn = (unsigned)q->op < SBX_FS_OP_COUNT ? fs_handlers[q->op] : NULL;
  if (fn)
    fn(c, q);
  else
    deny(c, ENOSYS, "no handler for this operation", SBX_UNOTIFY_HINT_NONE,
         NULL, false);
}
