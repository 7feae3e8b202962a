/* Building the default mode's file tree in init; see tree.h.
 *
 * Async-signal-safe: raw system calls, PATH_MAX buffers on the stack, no
 * allocation. Trusts the plan; never leaves the old root attached.
 */
#include "sandbox/runner/tree.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h> /* the ST_* flag names */
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/base/path.h"
#include "sandbox/base/strbuf.h"
#include "sandbox/kernel/landlock/landlock_uapi.h"

enum {
  STEP_SLAVE,
  STEP_SCRATCH,
  STEP_NEWROOT,
  STEP_PIVOT_OLD,
  STEP_DIR,
  STEP_LINK,
  STEP_MOUNT_POINT,
  STEP_BIND,
  STEP_FLAGS,
  STEP_PROC_RULE,
  STEP_PTYS,
  STEP_PTYS_RULE,
  STEP_PRIVATE_RULE,
  STEP_TEXT,
  STEP_TEXT_RULE,
  STEP_PIVOT_NEW,
  STEP_DETACH,
  STEP_READ_ONLY_ROOT,
  STEP_CWD,
  STEP_PATH_TOO_LONG,
};

static const char *const step_names[] = {
    [STEP_SLAVE] = "make the host's mounts slaves",
    [STEP_SCRATCH] = "mount the scratch tmpfs on /tmp",
    [STEP_NEWROOT] = "mount the new root's tmpfs",
    [STEP_PIVOT_OLD] = "pivot_root to the scratch",
    [STEP_DIR] = "make a directory",
    [STEP_LINK] = "make a symbolic link",
    [STEP_MOUNT_POINT] = "make a mount point",
    [STEP_BIND] = "bind mount",
    [STEP_FLAGS] = "set the mount's flags",
    [STEP_PROC_RULE] = "the Landlock rule for /proc",
    [STEP_PTYS] = "mount the sandbox's own devpts on /dev/pts",
    [STEP_PTYS_RULE] = "the Landlock rule for /dev/pts",
    [STEP_PRIVATE_RULE] = "the Landlock rule for a private tmpfs",
    [STEP_TEXT] = "write a file sbx-run makes for the program",
    [STEP_TEXT_RULE] = "the Landlock rule for a file sbx-run makes",
    [STEP_PIVOT_NEW] = "pivot_root into the new root",
    [STEP_DETACH] = "detach the old root",
    [STEP_READ_ONLY_ROOT] = "remount the new root read-only",
    [STEP_CWD] = "enter the working directory",
    [STEP_PATH_TOO_LONG] = "a path too long",
};

/* Here, not in tree.c: the child side reads it. */
const char *const sbx_run_tree_private_dirs[SBX_RUN_TREE_N_PRIVATE_DIRS] = {
    "/tmp", "/dev/shm"};

/* Async-signal-safe. */
const char *sbx_run_tree_step_name(int step) {
  if (step < 0 || step >= (int)(sizeof step_names / sizeof step_names[0]) ||
      !step_names[step])
    return "unknown step";
  return step_names[step];
}

/* Async-signal-safe. */
static int fail(sbx_run_tree_failure *f, int step, int op, int err) {
  f->step = step;
  f->op = op;
  f->error = err;
  return -err;
}

/* prefix + path into out. Async-signal-safe. */
static bool join(char *out, const char *prefix, const char *path) {
  sbx_strbuf sb;
  sbx_strbuf_init(&sb, out, PATH_MAX);
  sbx_strbuf_add(&sb, prefix);
  if (strcmp(path, "/") != 0)
    sbx_strbuf_add(&sb, path);
  return sbx_strbuf_finish(&sb) < PATH_MAX;
}

/* mkdir -p of every directory from after skip up to the end of path
 * (with parents_only, up to its last '/'). Existing ones are fine,
 * including ones inside a read-only grant (mkdir reports EEXIST first).
 * Async-signal-safe. */
static int make_dirs(char *path, size_t skip, bool parents_only) {
  for (char *c = path + skip + 1; *c; c++) {
    if (*c != '/')
      continue;
    *c = '\0';
    int rc = mkdir(path, 0755);
    *c = '/';
    if (rc != 0 && errno != EEXIST)
      return -errno;
  }
  if (!parents_only && mkdir(path, 0755) != 0 && errno != EEXIST)
    return -errno;
  return 0;
}

#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV 0x00000004
#define MOUNT_ATTR_NOEXEC 0x00000008
#endif
#define SBX_AT_RECURSIVE 0x8000

struct sbx_mount_attr {
  unsigned long long attr_set, attr_clr, propagation, userns_fd;
};

/* statfs(2)'s f_flags are valid only with this bit (linux/statfs.h). */
#define SBX_ST_VALID 0x0020

/* The flags a remount in a user namespace must keep (the kernel locks
 * them), for kernels without mount_setattr. Async-signal-safe. */
static unsigned long locked_flags(const char *path) {
  struct statfs sf;
  if (statfs(path, &sf) != 0 || !(sf.f_flags & SBX_ST_VALID))
    return 0;
  unsigned long f = 0;
  if (sf.f_flags & ST_RDONLY)
    f |= MS_RDONLY;
  if (sf.f_flags & ST_NOSUID)
    f |= MS_NOSUID;
  if (sf.f_flags & ST_NODEV)
    f |= MS_NODEV;
  if (sf.f_flags & ST_NOEXEC)
    f |= MS_NOEXEC;
  if (sf.f_flags & ST_NOATIME)
    f |= MS_NOATIME;
  if (sf.f_flags & ST_NODIRATIME)
    f |= MS_NODIRATIME;
  if (sf.f_flags & ST_RELATIME)
    f |= MS_RELATIME;
  return f;
}

/* Only ever adds restrictions: a flag the host's mount has stays.
 * Async-signal-safe. */
static int restrict_mount(const char *path, unsigned flags, bool recursive) {
  struct sbx_mount_attr a = {0};
  a.attr_set = MOUNT_ATTR_NOSUID;
  if (!(flags & SBX_TREE_WRITABLE))
    a.attr_set |= MOUNT_ATTR_RDONLY;
  if (!(flags & SBX_TREE_DEVICE))
    a.attr_set |= MOUNT_ATTR_NODEV;
  if (flags & SBX_TREE_NOEXEC)
    a.attr_set |= MOUNT_ATTR_NOEXEC;
  if (syscall(__NR_mount_setattr, AT_FDCWD, path,
              recursive ? SBX_AT_RECURSIVE : 0, &a, sizeof(a)) == 0)
    return 0;
  if (errno != ENOSYS)
    return -errno;
  unsigned long f = MS_REMOUNT | MS_BIND | locked_flags(path) | MS_NOSUID;
  if (!(flags & SBX_TREE_WRITABLE))
    f |= MS_RDONLY;
  if (!(flags & SBX_TREE_DEVICE))
    f |= MS_NODEV;
  if (flags & SBX_TREE_NOEXEC)
    f |= MS_NOEXEC;
  return mount(NULL, path, NULL, f, NULL) == 0 ? 0 : -errno;
}

#define NEW "/newroot"
#define OLD "/oldroot"

/* The rule that lets the program do `rights` on (or below) path, a
 * directory or a file. Async-signal-safe. */
static int add_rule(int landlock_fd, const char *path, uint64_t rights) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  struct sbx_landlock_path_beneath_attr rule = {
      .allowed_access = rights,
      .parent_fd = fd,
  };
  int rc = sbx_landlock_add_rule(landlock_fd, SBX_LANDLOCK_RULE_PATH_BENEATH,
                                 &rule, 0);
  int err = errno;
  close(fd);
  return rc == 0 ? 0 : -err;
}

/* A file sbx-run makes for the program, on the new root's own tmpfs
 * (the plan left out paths a grant's mount covers), read-only once the
 * root is. O_EXCL: nothing already there is followed or rewritten.
 * Async-signal-safe. */
static int write_text(const sbx_tree_op *op, char *dst, size_t skip,
                      int landlock_fd, int i, sbx_run_tree_failure *f) {
  int rc = make_dirs(dst, skip, true);
  if (rc < 0)
    return fail(f, STEP_DIR, i, -rc);
  int fd =
      open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
  if (fd < 0)
    return 0; /* something of the tree's is there already, or the way
               * there is a link leading out of it: that is what shows */
  size_t len = strlen(op->target), done = 0;
  while (done < len) {
    ssize_t w = write(fd, op->target + done, len - done);
    if (w <= 0) {
      int err = w < 0 ? errno : EIO;
      close(fd);
      return fail(f, STEP_TEXT, i, err);
    }
    done += (size_t)w;
  }
  close(fd);
  if (landlock_fd >= 0 &&
      (rc = add_rule(landlock_fd, dst, LANDLOCK_ACCESS_FS_READ_FILE)) < 0)
    return fail(f, STEP_TEXT_RULE, i, -rc);
  return 0;
}

/* One operation on the new root. Async-signal-safe. */
static int apply_op(const sbx_tree_op *op, int i, int landlock_fd,
                    sbx_run_tree_failure *f) {
  char dst[PATH_MAX];
  if (!join(dst, NEW, op->path))
    return fail(f, STEP_PATH_TOO_LONG, i, ENAMETOOLONG);
  size_t skip = strlen(NEW);
  int rc;
  if (op->kind == SBX_TREE_TEXT)
    return write_text(op, dst, skip, landlock_fd, i, f);
  if (op->kind == SBX_TREE_DIR) {
    if ((rc = make_dirs(dst, skip, false)) < 0)
      return fail(f, STEP_DIR, i, -rc);
    return 0;
  }
  if (op->kind == SBX_TREE_LINK) {
    if ((rc = make_dirs(dst, skip, true)) < 0)
      return fail(f, STEP_DIR, i, -rc);
    if (syscall(SYS_symlinkat, op->target, AT_FDCWD, dst) != 0 &&
        errno != EEXIST)
      return fail(f, STEP_LINK, i, errno);
    return 0;
  }
  char src[PATH_MAX];
  if (!join(src, OLD, op->path))
    return fail(f, STEP_PATH_TOO_LONG, i, ENAMETOOLONG);
  struct stat st;
  if (fstatat(AT_FDCWD, src, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return 0; /* gone since the plan: nothing to show */
  if (op->flags & SBX_TREE_FILE) {
    if ((rc = make_dirs(dst, skip, true)) < 0)
      return fail(f, STEP_MOUNT_POINT, i, -rc);
    if (fstatat(AT_FDCWD, dst, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      int fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0)
        return fail(f, STEP_MOUNT_POINT, i, errno);
      close(fd);
    }
  } else if ((rc = make_dirs(dst, skip, false)) < 0) {
    return fail(f, STEP_MOUNT_POINT, i, -rc);
  }
  if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) != 0)
    return fail(f, STEP_BIND, i, errno);
  if ((rc = restrict_mount(dst, op->flags, true)) < 0)
    return fail(f, STEP_FLAGS, i, -rc);
  return 0;
}

/* /proc of init's pid namespace at /proc below root (the new root, or ""
 * for the namespace's own tree, over the host's), and the Landlock rule
 * that lets the program read it; *proc_fd (may be NULL) an O_PATH
 * descriptor of it, -1 without. A kernel that refuses the mount (a
 * container whose /proc is partly covered) leaves the program without
 * /proc in the new root, with the host's in its own tree.
 * Async-signal-safe. */
static int mount_proc(const char *root, int landlock_fd, int *proc_fd,
                      sbx_run_tree_failure *f) {
  char dst[PATH_MAX];
  join(dst, root, "/proc");
  if (mkdir(dst, 0555) != 0 && errno != EEXIST)
    return fail(f, STEP_DIR, -1, errno);
  if (mount("proc", dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
    return 0;
  int rc;
  if (landlock_fd >= 0 && (rc = add_rule(landlock_fd, dst,
                                         LANDLOCK_ACCESS_FS_READ_FILE |
                                             LANDLOCK_ACCESS_FS_READ_DIR)))
    return fail(f, STEP_PROC_RULE, -1, -rc);
  if (proc_fd) {
    *proc_fd = open(dst, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (*proc_fd < 0)
      return fail(f, STEP_DIR, -1, errno);
  }
  return 0;
}

/* A private, empty tmpfs on dir (/tmp, /dev/shm) below root (the new
 * root, or "" for the namespace's own tree), over whatever is there,
 * with the working directory made again inside when it is below dir (in
 * the new root), and the Landlock rule that lets the program write in
 * it. Async-signal-safe. */
static int mount_private(const sbx_run_tree *t, const char *root,
                         const char *dir, int landlock_fd, int *dir_fd,
                         sbx_run_tree_failure *f) {
  char dst[PATH_MAX];
  if (!join(dst, root, dir))
    return fail(f, STEP_PATH_TOO_LONG, -1, ENAMETOOLONG);
  /* Where the name cannot be a directory of the tree (a read-only grant
   * of "/" on a host without it, a symbolic link there) the program goes
   * without: what the grant shows stays, as where the kernel refuses the
   * mount (as for /proc). */
  int rc = root[0] ? make_dirs(dst, strlen(root), false) : 0;
  struct stat st;
  if (rc < 0 || fstatat(AT_FDCWD, dst, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISDIR(st.st_mode))
    return 0;
  unsigned long flags =
      MS_NOSUID | MS_NODEV | (t->private_exec ? 0 : MS_NOEXEC);
  if (mount("tmpfs", dst, "tmpfs", flags, "mode=1777") != 0)
    return 0;
  *dir_fd = open(dst, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root[0] && t->cwd &&
      sbx_path_is_within(t->cwd, strlen(t->cwd), dir, strlen(dir))) {
    char cwd[PATH_MAX];
    if (!join(cwd, root, t->cwd))
      return fail(f, STEP_PATH_TOO_LONG, -1, ENAMETOOLONG);
    if ((rc = make_dirs(cwd, strlen(root), false)) < 0)
      return fail(f, STEP_DIR, -1, -rc);
  }
  if (landlock_fd >= 0 && t->private_rights &&
      (rc = add_rule(landlock_fd, dst, t->private_rights)))
    return fail(f, STEP_PRIVATE_RULE, -1, -rc);
  return 0;
}

/* Pseudo-terminals of the sandbox's own: a new devpts instance, which
 * holds only the terminals made inside (the host's are in another), with
 * /dev/ptmx leading to its ptmx as the kernel's ptmx lookup needs, and
 * the Landlock rule that lets the program use them. Where a read grant
 * already shows the host's /dev (-r /), its /dev/ptmx, a device node on
 * a nodev mount, is covered by a bind of the new instance's ptmx, with a
 * rule of its own (Landlock finds a rule
 * on the path's own mounts, and the bind sits on the host's /dev).
 * Async-signal-safe. */
static int mount_ptys(int landlock_fd, uint64_t rights,
                      sbx_run_tree_failure *f) {
  char dst[PATH_MAX];
  join(dst, NEW, "/dev/pts");
  /* Where /dev/pts cannot be a directory of the tree, or the kernel
   * refuses a devpts of the sandbox's, the program goes without
   * terminals of its own (as without /proc). */
  int rc = make_dirs(dst, strlen(NEW), false);
  struct stat st;
  if (rc < 0 || fstatat(AT_FDCWD, dst, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISDIR(st.st_mode))
    return 0;
  if (mount("devpts", dst, "devpts", MS_NOSUID | MS_NOEXEC,
            "newinstance,ptmxmode=0666,mode=0620") != 0)
    return 0;
  if (landlock_fd >= 0 && rights && (rc = add_rule(landlock_fd, dst, rights)))
    return fail(f, STEP_PTYS_RULE, -1, -rc);
  char ptmx[PATH_MAX];
  join(ptmx, NEW, "/dev/ptmx");
  if (syscall(SYS_symlinkat, "pts/ptmx", AT_FDCWD, ptmx) == 0)
    return 0;
  if (errno != EEXIST)
    return fail(f, STEP_LINK, -1, errno);
  if (fstatat(AT_FDCWD, ptmx, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISLNK(st.st_mode))
    return 0; /* a link to pts/ptmx, which is the new instance's now */
  char own[PATH_MAX];
  join(own, NEW, "/dev/pts/ptmx");
  if (mount(own, ptmx, NULL, MS_BIND, NULL) != 0)
    return fail(f, STEP_PTYS, -1, errno);
  uint64_t file_rights = rights & ~(uint64_t)LANDLOCK_ACCESS_FS_READ_DIR;
  if (landlock_fd >= 0 && file_rights &&
      (rc = add_rule(landlock_fd, ptmx, file_rights)))
    return fail(f, STEP_PTYS_RULE, -1, -rc);
  return 0;
}

/* Standard input, output or error that is one of the fixed set's device
 * nodes (/dev/null, most often) is opened again through the tree's
 * read-only bind, so its mode, owner and times cannot change through the
 * descriptor. Async-signal-safe. */
static void reopen_devices(void) {
  static const char *const nodes[] = {"/dev/null", "/dev/zero", "/dev/full",
                                      "/dev/random", "/dev/urandom"};
  for (int fd = 0; fd <= 2; fd++) {
    struct stat st, node;
    if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode))
      continue;
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
      if (stat(nodes[i], &node) != 0 || node.st_rdev != st.st_rdev)
        continue;
      int flags = fcntl(fd, F_GETFL);
      int again =
          flags < 0 ? -1 : open(nodes[i], flags & (O_ACCMODE | O_APPEND), 0);
      if (again >= 0) {
        dup2(again, fd);
        close(again);
      }
      break;
    }
  }
}

/* No private directory yet, no failure; then the mounts made slaves, so
 * that nothing done here propagates back to the host. Async-signal-safe. */
static int begin(int *private_fds, sbx_run_tree_failure *f) {
  for (size_t d = 0; d < SBX_RUN_TREE_N_PRIVATE_DIRS; d++)
    private_fds[d] = -1;
  f->step = -1;
  f->op = -1;
  f->error = 0;
  if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0)
    return fail(f, STEP_SLAVE, -1, errno);
  return 0;
}

/* The private directories t names, below root. Async-signal-safe. */
static int mount_privates(const sbx_run_tree *t, const char *root,
                          int landlock_fd, int *private_fds,
                          sbx_run_tree_failure *f) {
  int rc;
  for (size_t d = 0; d < SBX_RUN_TREE_N_PRIVATE_DIRS; d++)
    if ((t->private_dirs & (1u << d)) &&
        (rc = mount_private(t, root, sbx_run_tree_private_dirs[d], landlock_fd,
                            &private_fds[d], f)) < 0)
      return rc;
  return 0;
}

/* Async-signal-safe. */
int sbx_run_tree_build_raw(const sbx_run_tree *t, int landlock_fd,
                           int *private_fds, sbx_run_tree_failure *f) {
  int rc = begin(private_fds, f);
  if (rc < 0)
    return rc;
  if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
    return fail(f, STEP_SCRATCH, -1, errno);
  if (chdir("/tmp") != 0 || mkdir("newroot", 0755) != 0 ||
      mkdir("oldroot", 0755) != 0)
    return fail(f, STEP_SCRATCH, -1, errno);
  if (mount("tmpfs", "newroot", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") !=
      0)
    return fail(f, STEP_NEWROOT, -1, errno);
  if (syscall(SYS_pivot_root, ".", "oldroot") != 0)
    return fail(f, STEP_PIVOT_OLD, -1, errno);
  for (size_t i = 0; i < t->n_ops; i++)
    if ((rc = apply_op(&t->ops[i], (int)i, landlock_fd, f)) < 0)
      return rc;
  if (t->proc && (rc = mount_proc(NEW, landlock_fd, NULL, f)) < 0)
    return rc;
  if ((rc = mount_privates(t, NEW, landlock_fd, private_fds, f)) < 0)
    return rc;
  if (t->ptys && (rc = mount_ptys(landlock_fd, t->pty_rights, f)) < 0)
    return rc;
  if (chdir(NEW) != 0)
    return fail(f, STEP_PIVOT_NEW, -1, errno);
  if (syscall(SYS_pivot_root, ".", ".") != 0)
    return fail(f, STEP_PIVOT_NEW, -1, errno);
  /* The scratch, with the old root under it, is stacked on "." now. */
  if (umount2(".", MNT_DETACH) != 0)
    return fail(f, STEP_DETACH, -1, errno);
  if (chdir("/") != 0)
    return fail(f, STEP_CWD, -1, errno);
  if ((rc = restrict_mount("/", 0, false)) < 0)
    return fail(f, STEP_READ_ONLY_ROOT, -1, -rc);
  if (t->cwd && chdir(t->cwd) != 0)
    return fail(f, STEP_CWD, -1, errno);
  reopen_devices();
  return 0;
}

/* Async-signal-safe. */
int sbx_run_tree_private_raw(const sbx_run_tree *t, int landlock_fd,
                             int *private_fds, int *proc_fd,
                             sbx_run_tree_failure *f) {
  *proc_fd = -1;
  if (!t->private_dirs && !t->proc) {
    for (size_t d = 0; d < SBX_RUN_TREE_N_PRIVATE_DIRS; d++)
      private_fds[d] = -1;
    return 0;
  }
  int rc = begin(private_fds, f);
  if (rc < 0)
    return rc;
  if (t->proc && (rc = mount_proc("", landlock_fd, proc_fd, f)) < 0)
    return rc;
  return mount_privates(t, "", landlock_fd, private_fds, f);
}
