/* The empty root: a read-only tmpfs pivoted to, with only the bind mounts
 * asked for. Child-side and async-signal-safe (raw syscalls, PATH_MAX
 * buffers on the stack). Trusts the configuration; refuses unnormalised
 * paths and never leaves the old root attached after a pivot. */
#include "sandbox/kernel/namespaces/rootfs.h"

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

#include "sandbox/base/strbuf.h"

static int set_fail(sbx_root_result *r, const char *step, const char *path,
                    int err) {
  r->error = err;
  r->failed_step = step;
  r->failed_path = path;
  return -err;
}

static bool normalised(const char *p) {
  if (!p || p[0] != '/' || strlen(p) >= PATH_MAX)
    return false;
  for (const char *c = p; *c; c++) {
    if (c[0] == '/' && c[1] == '/')
      return false;
    if (c[0] == '/' && c[1] == '.' &&
        (c[2] == '/' || c[2] == '\0' ||
         (c[2] == '.' && (c[3] == '/' || c[3] == '\0'))))
      return false;
  }
  return true;
}

static bool join(char *out, const char *base, const char *rel) {
  sbx_strbuf sb;
  sbx_strbuf_init(&sb, out, PATH_MAX);
  sbx_strbuf_add(&sb, base);
  if (strcmp(rel, "/") != 0)
    sbx_strbuf_add(&sb, rel);
  return sbx_strbuf_finish(&sb) < PATH_MAX;
}

/* mkdir -p for every component of path below base (base exists). */
static int make_parents(char *path, size_t base_len, bool last_is_file) {
  for (char *c = path + base_len + 1; *c; c++) {
    if (*c != '/')
      continue;
    *c = '\0';
    int rc = mkdir(path, 0755);
    *c = '/';
    if (rc != 0 && errno != EEXIST)
      return -errno;
  }
  if (last_is_file) {
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      return -errno;
    close(fd);
  } else if (mkdir(path, 0755) != 0 && errno != EEXIST) {
    return -errno;
  }
  return 0;
}

/* statfs(2)'s f_flags are valid only with this bit (linux/statfs.h). */
#define SBX_ST_VALID 0x0020

/* Flags a remount in a user namespace must keep (the kernel locks them),
 * read with statfs(2): libc's statvfs() may read /proc/mounts, which a
 * child between fork and exec must not. */
static unsigned long locked_flags(const char *path) {
  struct statfs sf;
  if (statfs(path, &sf) != 0 || !(sf.f_flags & SBX_ST_VALID))
    return 0;
  static const struct {
    unsigned long st, ms;
  } map[] = {
      {ST_RDONLY, MS_RDONLY},     {ST_NOSUID, MS_NOSUID},
      {ST_NODEV, MS_NODEV},       {ST_NOEXEC, MS_NOEXEC},
      {ST_NOATIME, MS_NOATIME},   {ST_NODIRATIME, MS_NODIRATIME},
      {ST_RELATIME, MS_RELATIME},
  };
  unsigned long f = 0;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if ((unsigned long)sf.f_flags & map[i].st)
      f |= map[i].ms;
  return f;
}

#ifndef __NR_open_tree
#define __NR_open_tree 428
#endif
#ifndef __NR_move_mount
#define __NR_move_mount 429
#endif
#define OPEN_TREE_CLONE_FLAG 1         /* OPEN_TREE_CLONE */
#define AT_RECURSIVE_FLAG 0x8000       /* AT_RECURSIVE */
#define MOVE_MOUNT_F_EMPTY_PATH_FLAG 4 /* MOVE_MOUNT_F_EMPTY_PATH */

/* A detached copy of the tree at path, taken before the scratch tmpfs can
 * hide it (the scratch point may be an ancestor of a bind source). */
static int clone_tree(const char *path) {
  int fd = (int)syscall(__NR_open_tree, AT_FDCWD, path,
                        OPEN_TREE_CLONE_FLAG | AT_RECURSIVE_FLAG | O_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

static int bind_one(int tree_fd, const char *dst, unsigned flags,
                    bool keep_dev) {
  if (syscall(__NR_move_mount, tree_fd, "", AT_FDCWD, dst,
              MOVE_MOUNT_F_EMPTY_PATH_FLAG) != 0)
    return -errno;
  unsigned long f = MS_REMOUNT | MS_BIND | MS_NOSUID | locked_flags(dst);
  if (!keep_dev)
    f |= MS_NODEV;
  if (!(flags & SBX_BIND_WRITABLE))
    f |= MS_RDONLY;
  if (!(flags & SBX_BIND_EXEC))
    f |= MS_NOEXEC;
  if (mount(NULL, dst, NULL, f, NULL) != 0)
    return -errno;
  return 0;
}

static const char *const kDevNodes[] = {"null", "zero", "full", "random",
                                        "urandom"};

#define N_DEV_NODES (sizeof(kDevNodes) / sizeof(kDevNodes[0]))
#define MAX_TREES (SBX_ROOT_MAX_BINDS + N_DEV_NODES)

typedef struct {
  int fd[MAX_TREES]; /* -1: skipped (optional and missing) */
  bool is_dir[MAX_TREES];
  size_t n;
} trees;

static void close_trees(trees *t) {
  for (size_t i = 0; i < t->n; i++)
    if (t->fd[i] >= 0)
      close(t->fd[i]);
  t->n = 0;
}

static void dev_path(char *buf, size_t cap, size_t i) {
  sbx_strbuf sb;
  sbx_strbuf_init(&sb, buf, cap);
  sbx_strbuf_add(&sb, "/dev/");
  sbx_strbuf_add(&sb, kDevNodes[i]);
  sbx_strbuf_finish(&sb);
}

static int add_tree(trees *t, const char *path, bool optional,
                    sbx_root_result *r) {
  struct stat st;
  size_t i = t->n++;
  t->fd[i] = -1;
  if (stat(path, &st) != 0) {
    if (errno == ENOENT && optional)
      return 0;
    return set_fail(r, "stat bind mount source", path, errno);
  }
  t->is_dir[i] = S_ISDIR(st.st_mode);
  int fd = clone_tree(path);
  if (fd < 0)
    return set_fail(r, "open_tree(OPEN_TREE_CLONE) of bind source", path, -fd);
  t->fd[i] = fd;
  return 0;
}

/* Before the scratch mount: validate and take every source. */
static int collect(const sbx_root_config *cfg, trees *t, sbx_root_result *r) {
  int rc;
  t->n = 0;
  if (cfg->n_binds > SBX_ROOT_MAX_BINDS)
    return set_fail(r, "too many bind mounts", NULL, EINVAL);
  for (size_t i = 0; i < cfg->n_binds; i++) {
    const sbx_bind_mount *b = &cfg->binds[i];
    const char *target = b->target ? b->target : b->source;
    if (!normalised(b->source))
      return set_fail(r, "bind source is not absolute and normalised",
                      b->source, EINVAL);
    if (!normalised(target))
      return set_fail(r, "bind target is not absolute and normalised", target,
                      EINVAL);
    if ((rc = add_tree(t, b->source, b->flags & SBX_BIND_OPTIONAL, r)))
      return rc;
  }
  if (cfg->mount_dev) {
    for (size_t i = 0; i < N_DEV_NODES; i++) {
      char src[32];
      dev_path(src, sizeof(src), i);
      if ((rc = add_tree(t, src, false, r)))
        return rc;
    }
  }
  return 0;
}

static int populate(const sbx_root_config *cfg, const trees *t,
                    const char *root, sbx_root_result *r) {
  char dst[PATH_MAX];
  size_t root_len = strlen(root);
  int rc;
  size_t k = 0;
  for (size_t i = 0; i < cfg->n_binds; i++, k++) {
    const sbx_bind_mount *b = &cfg->binds[i];
    const char *target = b->target ? b->target : b->source;
    if (t->fd[k] < 0)
      continue;
    if (!join(dst, root, target))
      return set_fail(r, "bind mount target too long", target, ENAMETOOLONG);
    if ((rc = make_parents(dst, root_len, !t->is_dir[k])))
      return set_fail(r, "create bind mount target", target, -rc);
    if ((rc = bind_one(t->fd[k], dst, b->flags, false)))
      return set_fail(r, "bind mount", b->source, -rc);
  }
  if (cfg->mount_dev) {
    join(dst, root, "/dev");
    if ((rc = make_parents(dst, root_len, false)))
      return set_fail(r, "create /dev", "/dev", -rc);
    if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755") != 0)
      return set_fail(r, "mount tmpfs on /dev", "/dev", errno);
    for (size_t i = 0; i < N_DEV_NODES; i++, k++) {
      char src[32], node[PATH_MAX];
      dev_path(src, sizeof(src), i);
      join(node, root, src);
      if ((rc = make_parents(node, root_len, true)))
        return set_fail(r, "create device node target", src, -rc);
      if ((rc = bind_one(t->fd[k], node, SBX_BIND_WRITABLE, true)))
        return set_fail(r, "bind device node", src, -rc);
    }
  }
  if (cfg->mount_tmp) {
    join(dst, root, "/tmp");
    if ((rc = make_parents(dst, root_len, false)))
      return set_fail(r, "create /tmp", "/tmp", -rc);
    if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0)
      return set_fail(r, "mount tmpfs on /tmp", "/tmp", errno);
  }
  if (cfg->mount_proc) {
    join(dst, root, "/proc");
    if ((rc = make_parents(dst, root_len, false)))
      return set_fail(r, "create /proc", "/proc", -rc);
    /* Needs a pid namespace owned by our user namespace; absence is
     * reported, not fatal. */
    r->proc_mounted =
        mount("proc", dst, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0;
  }
  return 0;
}

/* Async-signal-safe. */
int sbx_root_make_empty_raw(const sbx_root_config *cfg,
                            sbx_root_result *result) {
  static const char *const kScratch[] = {"/tmp", "/mnt", "/dev"};
  memset(result, 0, sizeof(*result));
  result->mode = SBX_ROOT_HOST;
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    return set_fail(result, "make every mount private", "/", errno);
  trees t;
  int rc = collect(cfg, &t, result);
  if (rc) {
    close_trees(&t);
    return rc;
  }
  const char *root = NULL;
  int err = 0;
  for (size_t i = 0; i < sizeof(kScratch) / sizeof(kScratch[0]); i++) {
    if (mount("tmpfs", kScratch[i], "tmpfs", MS_NOSUID | MS_NODEV,
              "mode=0755,size=4m") == 0) {
      root = kScratch[i];
      break;
    }
    err = errno;
  }
  if (!root) {
    close_trees(&t);
    return set_fail(result, "mount the new root tmpfs", "/tmp", err);
  }
  rc = populate(cfg, &t, root, result);
  close_trees(&t);
  if (rc == 0 && chdir(root) != 0)
    rc = set_fail(result, "chdir into the new root", root, errno);
  if (rc == 0 && syscall(SYS_pivot_root, ".", ".") != 0)
    rc = set_fail(result, "pivot_root", root, errno);
  if (rc) {
    /* Undo: the host root stays, minus nothing. */
    umount2(root, MNT_DETACH);
    if (chdir("/") != 0) {
      /* The host root is still mounted; nothing else to restore. */
    }
    result->mode = SBX_ROOT_HOST;
    return rc;
  }
  result->mode = SBX_ROOT_EMPTY;
  /* The old root is stacked under "." now; detach it. */
  if (umount2(".", MNT_DETACH) != 0)
    return set_fail(result, "detach the old root", "/", errno);
  if (chdir("/") != 0)
    return set_fail(result, "chdir /", "/", errno);
  if (mount(NULL, "/", NULL,
            MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0)
    return set_fail(result, "remount the new root read-only", "/", errno);
  return 0;
}
