/* Looking at files for the supervised program: the stat, access,
 * readlink, statfs, getxattr and listxattr operations of the table of
 * file-system calls; see call.h.
 *
 * Why it exists: these calls answer with data about a file (a struct
 * stat, a link target, an attribute) that the supervisor reads through
 * the resolver and writes into the program's memory, so the program
 * learns about a name only what the allowlist grants; fstat of a
 * descriptor the program holds is answered from that descriptor.
 *
 * What it trusts: the decoder's copy of the path, the resolver and the
 * kernel's /proc. What it refuses: what the resolver refuses, X_OK on
 * a file unless the program may execute (X_OK on a directory is search
 * permission, answered where the program may stat it), and the working
 * directory's name where the grants do not reach it (S39).
 */
#include "sandbox/supervisor/call.h"

#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

/* ---- stat --------------------------------------------------------------- */

typedef union {
  struct stat st;
  struct statx stx;
} stat_result;

/* stat/statx of the object a /proc/.../fd/N path names (of the link
 * itself with AT_SYMLINK_NOFOLLOW, as the kernel answers lstat of a
 * magic link), written to the target's buf. */
static void stat_proc_fd(sbx_call *c, const char *proc, bool statx_form,
                         int at_flags, unsigned mask, uint64_t buf) {
  int rc;
  stat_result out;
  size_t len;
  memset(&out, 0, sizeof(out));
  if (statx_form) {
    rc = statx(AT_FDCWD, proc, at_flags, mask, &out.stx);
    len = sizeof(out.stx);
  } else {
    rc = (at_flags & AT_SYMLINK_NOFOLLOW) ? lstat(proc, &out.st)
                                          : stat(proc, &out.st);
    len = sizeof(out.st);
  }
  int err = errno;
  if (drop_if_gone(c))
    return;
  if (rc < 0) {
    answer_error(c, err == ENOENT ? EBADF : err);
    return;
  }
  /* Only an unlinked file has no link: look up the made files then. */
  if (statx_form && out.stx.stx_nlink == 0 &&
      sbx_call_is_made_object(
          c, makedev(out.stx.stx_dev_major, out.stx.stx_dev_minor),
          out.stx.stx_ino))
    out.stx.stx_nlink = 1;
  else if (!statx_form && out.st.st_nlink == 0 &&
           sbx_call_is_made_object(c, out.st.st_dev, out.st.st_ino))
    out.st.st_nlink = 1;
  rc = sbx_target_write(&c->t, buf, &out, len);
  if (rc == -ENOENT) {
    answer_drop(c);
    return;
  }
  answer_result(c, rc);
}

/* stat/statx of the object behind the target's fd (or cwd). */
static void stat_own(sbx_call *c, int fd, bool statx_form, int at_flags,
                     unsigned mask, uint64_t buf) {
  char proc[64];
  sbx_target_fd_proc_path(&c->t, fd, proc, sizeof(proc));
  stat_proc_fd(c, proc, statx_form, at_flags, mask, buf);
}

/* For lstat: the name of the program's own link c->path named
 * (/proc/self, or one that sbx_call_own_links() followed), which the
 * resolver, deciding on where it leads, would describe as a directory;
 * the supervisor's link of that name is one of the same kind. NULL for
 * other paths. */
static const char *own_link_name(const sbx_call *c) {
  if (c->link_name)
    return c->link_name;
  return strcmp(c->path, "/proc/self") == 0 ? "/proc/self" : NULL;
}

void sbx_op_stat(sbx_call *c, const sbx_fs_request *q) {
  bool statx_form = sbx_fs_call_arg(q->call, SBX_FS_ARG_MASK) >= 0;
  uint64_t buf = sbx_fs_request_arg(q, SBX_FS_ARG_BUF);
  int at_flags = (int)q->at_flags;
  if (q->form == SBX_FS_FORM_EMPTY_PATH && q->fd != AT_FDCWD) {
    /* fstat(): the program holds the descriptor; not a decision. */
    c->report = false;
    stat_own(c, q->fd, statx_form, at_flags & ~AT_SYMLINK_NOFOLLOW, q->mask,
             buf);
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
  } else if (!sbx_fs_take_path(c)) {
    return;
  }
  c->ev.path = c->path;
  int own = sbx_call_own_fd_path(c->path);
  if (own >= 0) {
    c->ev.allowed = true;
    stat_own(c, own, statx_form, at_flags, q->mask, buf);
    return;
  }
  const char *link = (at_flags & AT_SYMLINK_NOFOLLOW) ? own_link_name(c) : NULL;
  if (link) {
    c->ev.allowed = true;
    stat_proc_fd(c, link, statx_form, AT_SYMLINK_NOFOLLOW, q->mask, buf);
    return;
  }
  char made[64];
  if (sbx_call_made_file(c, c->path, made, sizeof(made)) >= 0) {
    c->ev.allowed = true;
    stat_proc_fd(c, made, statx_form, 0, q->mask, buf);
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
    /* The slave of a terminal the program made: ttyname() looks it up. */
    int pty = sbx_call_open_own_pty(c, c->path, O_PATH);
    if (pty >= 0) {
      char proc[64];
      snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pty);
      c->ev.allowed = true;
      stat_proc_fd(c, proc, statx_form, 0, q->mask, buf);
      close(pty);
      return;
    }
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
  else if (((mode & R_OK) && !sbx_call_fd_gives(have, O_RDONLY)) ||
           ((mode & W_OK) && !sbx_call_fd_gives(have, O_WRONLY)) ||
           (mode & X_OK))
    answer_error(c, EACCES);
  else
    answer_value(c, 0);
}

/* X_OK on a directory asks for search permission, which is not exec:
 * where the program may stat the directory, the file system's own answer
 * (faccessat2 on the object the resolver reached). R_OK and W_OK asked
 * with it need their rights as usual. Returns false when the object is
 * not a directory (an exec question) and nothing was answered. */
static bool access_search(sbx_call *c, int mode, int at_flags,
                          sbx_unotify_hint hint) {
  sbx_decision d;
  pid_t pid = sbx_call_self_pid(c, c->path);
  bool follow = !(at_flags & AT_SYMLINK_NOFOLLOW);
  int fd = sbx_resolver_open_object(c->cfg->resolver, pid, c->path,
                                    SBX_PERM_STAT, follow, &d);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))) {
    close(fd);
    return false;
  }
  if (fd < 0) {
    decided(c, fd, &d, hint, c->path, false);
    return true;
  }
  int rc = 0;
  if (mode & (R_OK | W_OK))
    rc = sbx_resolver_access(c->cfg->resolver, pid, c->path, mode & ~X_OK,
                             at_flags, &d);
  if (rc == 0 && syscall(SYS_faccessat2, fd, "", X_OK,
                         AT_EMPTY_PATH | (at_flags & AT_EACCESS)) < 0)
    rc = -errno;
  close(fd);
  decided(c, rc, &d, hint, c->path, false);
  return true;
}

/* Execute permission is the exec rule's business: without allow_exec
 * nothing is executable; with it, what the resolver lets the program see
 * and has an execute bit. Landlock decides the exec itself. */
static void access_exec(sbx_call *c, int mode, int at_flags,
                        sbx_unotify_hint hint) {
  if (access_search(c, mode, at_flags, hint))
    return;
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

void sbx_op_access(sbx_call *c, const sbx_fs_request *q) {
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
  } else if (!sbx_fs_take_path(c)) {
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
  char made[64];
  if (sbx_call_made_file(c, c->path, made, sizeof(made)) >= 0) {
    /* Read-only, not executable, as on the default mode's root. */
    c->ev.allowed = true;
    if (mode & (W_OK | X_OK))
      answer_error(c, (mode & W_OK) ? EROFS : EACCES);
    else
      answer_value(c, 0);
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

/* The text of the program's own links: /proc/self, the tree's
 * /dev/stdin, /dev/stdout and /dev/stderr, and those sbx_call_own_links()
 * followed (/proc/thread-self, /dev/fd); false for other paths. */
static bool readlink_self_link(sbx_call *c, char *out, size_t size,
                               ssize_t *len) {
  static const char *const std[][2] = {{"/dev/stdin", "/proc/self/fd/0"},
                                       {"/dev/stdout", "/proc/self/fd/1"},
                                       {"/dev/stderr", "/proc/self/fd/2"}};
  char text[64];
  int n = -1;
  if (c->link_text[0] != '\0')
    n = snprintf(text, sizeof(text), "%s", c->link_text);
  else if (strcmp(c->path, "/proc/self") == 0)
    n = snprintf(text, sizeof(text), "%d", (int)sbx_call_self_pid(c, c->path));
  for (size_t i = 0; n < 0 && i < G_N_ELEMENTS(std); i++)
    if (strcmp(c->path, std[i][0]) == 0)
      n = snprintf(text, sizeof(text), "%s", std[i][1]);
  if (n < 0)
    return false;
  if ((size_t)n >= sizeof(text) || text[0] == '0') {
    *len = -ENOENT; /* the target went away */
    return true;
  }
  *len = (ssize_t)MIN((size_t)n, size);
  memcpy(out, text, (size_t)*len);
  return true;
}

/* readlink of /proc/self/{exe,cwd,fd/N} (and the same below task/TID, as
 * /proc/thread-self reaches them): the program asks about itself. */
static bool readlink_self(sbx_call *c, char *out, size_t size, ssize_t *len) {
  char proc[64];
  const char *p = c->path;
  if (readlink_self_link(c, out, size, len))
    return true;
  if (strncmp(p, "/proc/self/task/", 16) == 0) {
    p += 16;
    while (*p >= '0' && *p <= '9')
      p++;
    if (*p != '/')
      return false;
    p++;
  } else if (strncmp(p, "/proc/self/", 11) == 0) {
    p += 11;
  } else {
    return false;
  }
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

void sbx_op_readlink(sbx_call *c, const sbx_fs_request *q) {
  /* The decoder refused a size below 1 (an int, as the kernel reads). */
  int64_t bufsiz = (int)sbx_fs_request_arg(q, SBX_FS_ARG_SIZE);
  if (!sbx_fs_take_path(c))
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
  int rc = sbx_target_write(&c->t, sbx_fs_request_arg(q, SBX_FS_ARG_BUF), out,
                            (size_t)n);
  if (rc == -ENOENT) {
    answer_drop(c);
    return;
  }
  decided(c, rc < 0 ? rc : n, &d, SBX_UNOTIFY_HINT_READ, c->path, false);
}

/* ---- statfs and reading extended attributes ----------------------------- */

void sbx_op_statfs(sbx_call *c, const sbx_fs_request *q) {
  int fd = sbx_fs_metadata_object(c, SBX_PERM_READ_ONLY, SBX_UNOTIFY_HINT_READ);
  if (fd < 0)
    return;
  struct statfs st;
  memset(&st, 0, sizeof(st));
  int rc = fstatfs(fd, &st) < 0 ? -errno : 0;
  close(fd);
  if (rc == 0)
    rc = sbx_target_write(&c->t, sbx_fs_request_arg(q, SBX_FS_ARG_BUF), &st,
                          sizeof(st));
  if (rc == -ENOENT) {
    answer_drop(c);
    return;
  }
  c->ev.allowed = true;
  answer_result(c, rc);
}

bool sbx_fs_xattr_name(sbx_call *c, const sbx_fs_request *q, char *name,
                       size_t size) {
  ssize_t n = sbx_target_read_string(
      &c->t, sbx_fs_request_arg(q, SBX_FS_ARG_NAME), name, size);
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
void sbx_op_xattr_read(sbx_call *c, const sbx_fs_request *q) {
  bool list = q->op == SBX_FS_OP_LISTXATTR;
  bool follow = !(q->at_flags & AT_SYMLINK_NOFOLLOW);
  char name[XATTR_NAME_MAX + 1];
  if (!list && !sbx_fs_xattr_name(c, q, name, sizeof(name)))
    return;
  /* Attributes, like stat, belong to objects of every type: a socket
   * file or a FIFO is read through an O_PATH descriptor's name. As in
   * the kernel, only a user.* attribute needs read permission; the
   * names, security.* labels and system.* ACLs need only what stat
   * needs (ls -l asks for them where a grant may only show entries). */
  static const char user[] = "user.";
  unsigned need = !list && strncmp(name, user, sizeof(user) - 1) == 0
                      ? SBX_PERM_READ_ONLY
                      : SBX_PERM_STAT;
  int fd = sbx_fs_metadata_object(c, need, SBX_UNOTIFY_HINT_READ);
  if (fd < 0)
    return;
  struct stat st;
  if (!follow && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
    /* A symbolic link itself carries no attributes sbx serves. */
    close(fd);
    c->ev.allowed = true;
    if (list)
      answer_value(c, 0);
    else
      answer_error(c, ENODATA);
    return;
  }
  char proc[64];
  snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
  size_t size = MIN((size_t)sbx_fs_request_arg(q, SBX_FS_ARG_SIZE),
                    (size_t)XATTR_SIZE_MAX);
  g_autofree char *buf = size ? g_malloc(size) : NULL;
  ssize_t n =
      list ? listxattr(proc, buf, size) : getxattr(proc, name, buf, size);
  int err = errno;
  close(fd);
  c->ev.allowed = true;
  if (n < 0) {
    answer_error(c, err);
    return;
  }
  answer_xattr(c, sbx_fs_request_arg(q, SBX_FS_ARG_BUF), buf, size, n);
}
