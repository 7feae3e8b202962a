/* The objects a program's paths and descriptors name, as the supervisor
 * reaches them; see call.h.
 *
 * Why it exists: every handler that acts on an existing object (chmod,
 * utimensat, statfs, getxattr, reopening a descriptor by name) must reach
 * the object the allowlist grants and no other. A path goes through the
 * resolver; a path naming one of the program's own descriptors
 * (/proc/self/fd/N, /dev/fd/N, /dev/stdin) means the object behind it,
 * which is decided on the place the kernel says it lives now, checked to
 * be the same inode the resolver reaches there.
 *
 * What it trusts: the kernel's /proc (checked with ID_VALID after each
 * look) and the resolver. What it refuses: objects with no name in the
 * allowlist (pipes, sockets, deleted files), objects that moved during the
 * check, files with several hard links where writing is needed (S25).
 */
#include "sandbox/supervisor/call.h"

#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "sandbox/base/path.h"

static ssize_t target_read_string(void *ctx, uint64_t addr, char *buf,
                                  size_t size) {
  ssize_t n = sbx_target_read_string(ctx, addr, buf, size);
  return n == -ENOENT ? SBX_FS_GONE : n;
}

static int target_read(void *ctx, uint64_t addr, void *buf, size_t len) {
  int rc = sbx_target_read(ctx, addr, buf, len);
  return rc == -ENOENT ? SBX_FS_GONE : rc;
}

sbx_fs_reader sbx_target_fs_reader(sbx_unotify_target *t) {
  return (sbx_fs_reader){target_read_string, target_read, t};
}

pid_t sbx_call_self_pid(sbx_call *c, const char *path) {
  if (strncmp(path, "/proc/", 6) != 0)
    return 0;
  /* The pid in the procfs the resolver reaches /proc in. */
  return c->cfg->sandbox_proc ? sbx_target_ns_tgid(&c->t)
                              : sbx_target_tgid(&c->t);
}

/* path with the first n bytes replaced by `to`, in place. */
static int replace_prefix(char *path, size_t n, const char *to) {
  char out[PATH_MAX];
  int len = snprintf(out, sizeof(out), "%s%s", to, path + n);
  if (len < 0 || (size_t)len >= sizeof(out))
    return -ENAMETOOLONG;
  memcpy(path, out, (size_t)len + 1);
  return 0;
}

int sbx_call_own_links(sbx_call *c, char *path) {
  static const char thread_self[] = "/proc/thread-self";
  static const char dev_fd[] = "/dev/fd";
  size_t tn = sizeof(thread_self) - 1, dn = sizeof(dev_fd) - 1;
  char to[64];
  size_t n;
  const char *text;
  if (strncmp(path, thread_self, tn) == 0 &&
      (path[tn] == '/' || path[tn] == '\0')) {
    pid_t tid = c->cfg->sandbox_proc ? sbx_target_ns_tid(&c->t) : c->t.tid;
    pid_t pid = sbx_call_self_pid(c, path);
    if (tid <= 0 || pid <= 0)
      return 0; /* gone: the resolver refuses the name as it stands */
    snprintf(to, sizeof(to), "/proc/self/task/%d", (int)tid);
    n = tn;
    text = to + 11; /* "task/TID", after the pid below */
    if (path[tn] == '\0' && path == c->path) {
      c->link_name = thread_self;
      snprintf(c->link_text, sizeof(c->link_text), "%d/%s", (int)pid, text);
    }
  } else if (strncmp(path, dev_fd, dn) == 0 &&
             (path[dn] == '/' || path[dn] == '\0')) {
    snprintf(to, sizeof(to), "/proc/self/fd");
    n = dn;
    if (path[dn] == '\0' && path == c->path) {
      c->link_name = dev_fd;
      snprintf(c->link_text, sizeof(c->link_text), "%s", to);
    }
  } else {
    return 0;
  }
  return replace_prefix(path, n, to);
}

/* cur (length n, absolute, normalised) without its last component. */
static size_t drop_last(char *cur, size_t n) {
  while (n > 1 && cur[n - 1] != '/')
    n--;
  n = n > 1 ? n - 1 : 1;
  cur[n] = '\0';
  return n;
}

/* What the walk does with the name it just added to cur: 0 go on (a
 * directory, or what the program may not see, which the decision on the
 * whole path settles), 1 a symbolic link whose text is now in link
 * (length *link_len), or -errno where the kernel's walk stops. */
static int walked_name(sbx_call *c, const char *cur, char *link,
                       size_t *link_len) {
  if (strncmp(cur, "/proc/", 6) == 0)
    return 0; /* the program's own entries: served as written */
  struct stat st;
  sbx_decision d;
  int rc = sbx_resolver_stat(c->cfg->resolver, 0, cur, false, &st, &d);
  if (!d.granted)
    return 0;
  if (rc == -ENOENT || rc == -ENOTDIR)
    return rc;
  if (rc < 0 || S_ISDIR(st.st_mode))
    return 0;
  if (!S_ISLNK(st.st_mode))
    return -ENOTDIR;
  ssize_t n =
      sbx_resolver_readlink(c->cfg->resolver, 0, cur, link, PATH_MAX - 1, &d);
  if (n <= 0 || !d.granted)
    return 0;
  *link_len = (size_t)n;
  return 1;
}

int sbx_call_absolute_path(sbx_call *c, int dirfd, const char *raw, size_t len,
                           char *out) {
  if (!sbx_path_has_dotdot(raw, len))
    return sbx_target_absolute_path(&c->t, dirfd, raw, len, out);
  char cur[PATH_MAX], rest[PATH_MAX], link[PATH_MAX];
  size_t clen = 1;
  strcpy(cur, "/");
  if (raw[0] != '/') {
    int blen = sbx_target_fd_path(&c->t, dirfd, cur, sizeof(cur));
    if (blen < 0)
      return sbx_target_valid(&c->t) < 0 ? SBX_TARGET_GONE : blen;
    clen = (size_t)blen;
  }
  if (memchr(raw, '\0', len))
    return -ENOENT;
  if (len >= sizeof(rest))
    return -ENAMETOOLONG;
  memcpy(rest, raw, len);
  size_t rlen = len, i = 0;
  int links = 0;
  /* Name by name while a `..` is ahead; what follows the last one joins
   * lexically, which is then exact. */
  while (sbx_path_has_dotdot(rest + i, rlen - i)) {
    while (i < rlen && rest[i] == '/')
      i++;
    size_t start = i;
    while (i < rlen && rest[i] != '/')
      i++;
    size_t n = i - start;
    if (n == 0)
      break;
    if (n == 1 && rest[start] == '.')
      continue;
    if (n == 2 && rest[start] == '.' && rest[start + 1] == '.') {
      clen = drop_last(cur, clen);
      continue;
    }
    if (clen + 1 + n >= sizeof(cur))
      return -ENAMETOOLONG;
    if (clen > 1)
      cur[clen++] = '/';
    memcpy(cur + clen, rest + start, n);
    clen += n;
    cur[clen] = '\0';
    size_t link_len = 0;
    int kind = walked_name(c, cur, link, &link_len);
    if (kind < 0)
      return kind;
    if (kind == 0)
      continue;
    /* A link: its text replaces its name, from the directory it is in. */
    if (++links > 40)
      return -ELOOP;
    if (link_len + 1 + (rlen - i) >= sizeof(rest))
      return -ENAMETOOLONG;
    memmove(rest + link_len + 1, rest + i, rlen - i);
    memcpy(rest, link, link_len);
    rest[link_len] = '/';
    rlen = link_len + 1 + (rlen - i);
    i = 0;
    clen = link[0] == '/' ? 1 : drop_last(cur, clen);
    cur[clen] = '\0';
  }
  while (i < rlen && rest[i] == '/')
    i++;
  if (i == rlen) {
    memcpy(out, cur, clen + 1);
    return 0;
  }
  int n = sbx_path_join_link(cur, clen, rest + i, rlen - i, out, PATH_MAX);
  return n < 0 ? n : 0;
}

bool sbx_call_parse_fd_number(const char *s, int *fd) {
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

int sbx_call_own_fd_path(const char *path) {
  static const char *const prefixes[] = {"/proc/self/fd/",
                                         "/proc/thread-self/fd/", "/dev/fd/"};
  int fd;
  for (size_t i = 0; i < G_N_ELEMENTS(prefixes); i++) {
    size_t pl = strlen(prefixes[i]);
    if (strncmp(path, prefixes[i], pl) == 0 &&
        sbx_call_parse_fd_number(path + pl, &fd))
      return fd;
  }
  /* /proc/thread-self/fd/N as sbx_call_own_links() spells it. */
  static const char task[] = "/proc/self/task/";
  if (strncmp(path, task, sizeof(task) - 1) == 0) {
    const char *p = path + sizeof(task) - 1;
    const char *digits = p;
    while (*p >= '0' && *p <= '9')
      p++;
    if (p > digits && strncmp(p, "/fd/", 4) == 0 &&
        sbx_call_parse_fd_number(p + 4, &fd))
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

int sbx_call_target_fd_access(sbx_call *c, int fd) {
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
  if (flags & SBX_FS_O_PATH)
    return SBX_FD_NO_ACCESS;
  return (int)(flags & O_ACCMODE);
}

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

int sbx_call_grab_object(sbx_call *c, int fd) {
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

/* The object behind the target's descriptor own, reopened for reading
 * through the resolver at the place it lives now, which must be the same
 * inode. Returns our fd, PATH_GONE or -errno (the denial recorded). */
static int open_own_object(sbx_call *c, int own, sbx_unotify_hint hint,
                           char *where, size_t size) {
  int obj = sbx_call_grab_object(c, own);
  if (obj < 0)
    return obj;
  if (!sbx_call_object_location(obj, where, size)) {
    close(obj);
    deny(c, EACCES, "descriptor names no file in the allowlist", hint, NULL,
         false);
    return -EACCES;
  }
  struct stat a, b;
  sbx_decision d;
  int fd = sbx_resolver_open(c->cfg->resolver, sbx_call_self_pid(c, where),
                             where, O_RDONLY | O_NONBLOCK | O_NOFOLLOW, 0, &d);
  if (fd < 0) {
    close(obj);
    if (!d.granted) {
      fd = -held_object_errno(c, fd);
      deny(c, -fd, d.reason, hint, where, false);
    }
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
  return fd;
}

int sbx_call_open_object(sbx_call *c, const char *path, bool follow,
                         unsigned need, bool metadata, sbx_unotify_hint hint) {
  const sbx_allowlist *list = sbx_resolver_allowlist(c->cfg->resolver);
  int own = sbx_call_own_fd_path(path);
  int fd;
  char where[PATH_MAX];
  if (own >= 0) {
    fd = open_own_object(c, own, hint, where, sizeof(where));
    if (fd < 0)
      return fd;
  } else {
    sbx_decision d;
    pid_t pid = sbx_call_self_pid(c, path);
    fd = metadata
             ? sbx_resolver_open_object(
                   c->cfg->resolver, pid, path,
                   (need & SBX_PERM_READ) ? SBX_PERM_READ : SBX_PERM_STAT,
                   follow, &d)
             : sbx_resolver_open(
                   c->cfg->resolver, pid, path,
                   O_RDONLY | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW), 0, &d);
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
  /* For the resolver's own checks O_RDONLY only asked READ. */
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

/* ---- the sandbox's private directories ------------------------------- */

const sbx_unotify_private_dir *sbx_call_private_dir(const sbx_call *c,
                                                    const char *path) {
  for (size_t i = 0; i < c->cfg->n_private_dirs; i++) {
    const sbx_unotify_private_dir *p = &c->cfg->private_dirs[i];
    size_t n = strlen(p->path);
    if (strncmp(path, p->path, n) == 0 && path[n] == '/')
      return p;
  }
  return NULL;
}

bool sbx_call_hidden_by_private_dir(const sbx_call *c, const char *path) {
  struct stat host;
  return sbx_call_private_dir(c, path) && lstat(path, &host) == 0;
}

/* ---- pseudo-terminals the program made -------------------------------- */

/* The number N of "/dev/pts/N" (decimal, no leading zero), or -1. */
static long pts_number(const char *path) {
  static const char prefix[] = "/dev/pts/";
  if (strncmp(path, prefix, sizeof prefix - 1) != 0)
    return -1;
  const char *p = path + sizeof prefix - 1;
  size_t len = strlen(p);
  if (len == 0 || len > 7 || (p[0] == '0' && len > 1) ||
      strspn(p, "0123456789") != len)
    return -1;
  return strtol(p, NULL, 10);
}

int sbx_call_open_own_pty(const sbx_call *c, const char *path, int flags) {
  long n = pts_number(path);
  if (n < 0 || !sbx_call_pty_ours(c, (unsigned)n))
    return -EACCES;
  struct open_how how = {
      .flags =
          (uint64_t)(flags & (O_ACCMODE | O_NOCTTY | O_NONBLOCK | O_PATH)) |
          O_NOFOLLOW | O_CLOEXEC,
      .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
  };
  int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
  if (fd < 0)
    return -errno;
  /* Unix98 slaves: majors 136-143, 256 numbers each. */
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) < 136 ||
      major(st.st_rdev) > 143 ||
      (long)((major(st.st_rdev) - 136) * 256 + minor(st.st_rdev)) != n) {
    close(fd);
    return -EACCES;
  }
  return fd;
}

int sbx_call_made_file(const sbx_call *c, const char *path, char *proc,
                       size_t size) {
  for (size_t i = 0; i < c->cfg->n_made; i++) {
    const sbx_unotify_made_file *m = &c->cfg->made[i];
    if (m->path && strcmp(m->path, path) == 0) {
      snprintf(proc, size, "/proc/self/fd/%d", m->fd);
      return m->fd;
    }
  }
  return -1;
}

bool sbx_call_is_made_object(const sbx_call *c, dev_t dev, ino_t ino) {
  for (size_t i = 0; i < c->cfg->n_made; i++) {
    struct stat st;
    if (fstat(c->cfg->made[i].fd, &st) == 0 && st.st_dev == dev &&
        st.st_ino == ino)
      return true;
  }
  return false;
}
