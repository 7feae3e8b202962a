/* The resolver; see resolver.h.
 *
 * Trusts the allowlist and the requester's pid; trusts no path. The one
 * rule that makes it safe: every object is reached by openat2() beneath a
 * descriptor held for an allowlist entry that grants the right asked for.
 * Everything else here (the symlink walk, /proc rewriting) only computes
 * which entry and which relative name to try next; it never opens an
 * object the final openat2() did not reach beneath an allowed root.
 *
 * Per-request code allocates nothing: paths live in stack cursors.
 */
#include "sandbox/files/resolver.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/base/path.h"
#include "sandbox/files/fs_calls.h"

/* Flags handed to openat2 as the worker gave them. */
#define PASSED_OPEN_FLAGS                                                \
  (O_ACCMODE | O_CREAT | O_EXCL | O_APPEND | O_NONBLOCK | O_DSYNC |      \
   SBX_FS_O_SYNC_BIT | O_DIRECT | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | \
   SBX_FS_O_TMPFILE_BIT)

#define MAX_HOPS 40        /* symlink substitutions per request */
#define MAX_WALK_STEPS 256 /* readlinkat() calls per request (B7) */
#define BENEATH (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)

struct sbx_resolver {
  const sbx_allowlist *list;
  size_t n;
  int *root_fds; /* per entry; -1 when absent or resolved per request */
  int slash_fd;  /* "/" for INTERMEDIATE entries, else -1 */
  int proc_fd;   /* "/proc" for /proc/self entries, else -1 */
  /* proc_fd is a procfs of the requesters' own pid namespace (a root
   * given for /proc): every process in it is theirs to look at. */
  bool own_proc;
  /* The requesters' "/" (a root given for it), in whose mount namespace
   * every absolute path is looked up, roots and symlinks alike; -1: the
   * caller's own. */
  int base_fd;
  /* The errno of a refused look at a name no entry lets the requester
   * stat (sbx_resolver_set_unlisted_errno); 0: the allowlist's denied
   * errno. */
  int unlisted_errno;
};

typedef struct {
  char buf[PATH_MAX];
  size_t len;
  size_t proc_prefix; /* length of "/proc/<requester>" when below it */
  unsigned walk_steps;
} cursor;

/* One way of satisfying a request: the rights an entry must have and what
 * to open beneath it. */
typedef struct {
  unsigned need;
  bool parent; /* open the parent directory; the caller acts on the name */
  int oflags;  /* for objects: openat2 flags */
  mode_t mode; /* for objects created by oflags */
} alternative;

typedef struct {
  alternative alts[3];
  size_t n_alts;
  bool follow; /* follow a final symlink */
} lookup;

typedef struct {
  int fd;
  bool owned;       /* false: fd is a held root, not to be closed */
  const char *name; /* parent lookups: the last component */
  size_t alt;
  const sbx_allow_entry *entry; /* NULL for intermediate directories */
  bool have_st;
  struct stat st;
} resolved;

typedef enum {
  STEP_DONE,       /* rc is the final result (fd, or a file-system errno) */
  STEP_DENIED,     /* reason set */
  STEP_WALK_PATH,  /* a symlink led outside the root: substitute one */
  STEP_WALK_FINAL, /* the last component is a symlink to follow */
  STEP_RETRY,      /* openat2 could not rule out a race; try again */
} step;

static long sys_openat2(int dirfd, const char *path, int flags, mode_t mode,
                        unsigned long long resolve) {
  struct open_how how = {
      .flags = (unsigned long long)(unsigned)flags,
      .mode = mode,
      .resolve = resolve,
  };
  return syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

static void close_keep_errno(int fd) {
  int saved = errno;
  close(fd);
  errno = saved;
}

const char sbx_resolver_not_regular[] = "not a regular file or directory";

static int deny(const sbx_resolver *r, sbx_decision *d, const char *why) {
  if (d) {
    d->granted = false;
    d->reason = why;
    d->object[0] = d->allow[0] = '\0';
  }
  return -sbx_allowlist_denied_errno(r->list);
}

static int deny_with(sbx_decision *d, const char *why, int rc) {
  if (d) {
    d->granted = false;
    d->reason = why;
    d->object[0] = d->allow[0] = '\0';
  }
  return rc;
}

static void grant(sbx_decision *d) {
  if (d) {
    d->granted = true;
    d->reason = NULL;
    d->object[0] = d->allow[0] = '\0';
  }
}

/* Bounded copy; always terminated. */
static void put_text(char *dst, const char *a, const char *b) {
  size_t n = 0;
  for (; a && *a && n + 1 < SBX_DECISION_TEXT_MAX; a++)
    dst[n++] = *a;
  for (; b && *b && n + 1 < SBX_DECISION_TEXT_MAX; b++)
    dst[n++] = *b;
  dst[n] = '\0';
}

/* The rule kind (permissions.c's names) that grants need. */
static const char *kind_for(unsigned need) {
  if (need & (SBX_PERM_CREATE | SBX_PERM_TEMPORARY))
    return "create ";
  if ((need & SBX_PERM_READ) && (need & SBX_PERM_WRITE))
    return "read-write ";
  if (need & SBX_PERM_WRITE)
    return "write ";
  if (need & SBX_PERM_READ)
    return "read ";
  return "stat ";
}

/* A path the allowlist refused: names the object it was decided on when a
 * symbolic link led there from path, and the rule that would grant it. A
 * stat of a directory above an entry is granted by stat-intermediate on
 * that entry. Allocates nothing. */
static int deny_unlisted(const sbx_resolver *r, sbx_decision *d,
                         const char *why, const char *path, const cursor *c,
                         const lookup *lk) {
  unsigned need = lk->alts[0].need;
  /* A name looked up (stat, read) that no entry lets the requester even
   * see is missing, where the resolver says so (unlisted_errno). */
  sbx_match seen;
  bool missing = r->unlisted_errno &&
                 !(need & ~(unsigned)(SBX_PERM_STAT | SBX_PERM_READ)) &&
                 !sbx_allowlist_match(r->list, c->buf, c->len, c->proc_prefix,
                                      SBX_PERM_STAT, &seen);
  int rc = missing ? deny_with(d, why, -r->unlisted_errno) : deny(r, d, why);
  if (!d)
    return rc;
  if (strcmp(path, c->buf) != 0)
    put_text(d->object, c->buf, NULL);
  if (!(need & ~(unsigned)SBX_PERM_STAT)) {
    size_t n = sbx_allowlist_n_entries(r->list);
    for (size_t i = 0; i < n; i++) {
      const sbx_allow_entry *e = sbx_allowlist_entry(r->list, i);
      bool below = c->len == 1 ? e->len > 1
                               : e->len > c->len &&
                                     strncmp(e->path, c->buf, c->len) == 0 &&
                                     e->path[c->len] == '/';
      if (below && !e->proc_self && !(e->rights & SBX_PERM_GRANTABLE)) {
        put_text(d->allow, "stat-intermediate ", e->path);
        return rc;
      }
    }
  }
  if (strcmp(c->buf, "/") != 0)
    put_text(d->allow, kind_for(need), c->buf);
  return rc;
}

/* ---- setup ------------------------------------------------------------ */

static int open_dir_exact(const sbx_resolver *r, const char *path) {
  /* The canonical path has no symlinks; if one appeared since the list
   * was loaded, the root is absent rather than somewhere else. */
  if (r->base_fd >= 0 && strcmp(path, "/") == 0)
    return fcntl(r->base_fd, F_DUPFD_CLOEXEC, 3);
  if (r->base_fd >= 0)
    return (int)sys_openat2(
        r->base_fd, path + 1, O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
        RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH);
  return (int)sys_openat2(AT_FDCWD, path, O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                          RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

/* readlink of an absolute path, in the requesters' tree (base_fd). */
static ssize_t readlink_absolute(const sbx_resolver *r, const char *path,
                                 char *buf, size_t size) {
  if (r->base_fd >= 0)
    return readlinkat(r->base_fd, path[1] ? path + 1 : ".", buf, size);
  return readlinkat(AT_FDCWD, path, buf, size);
}

/* Set-up failure: says which directory could not be opened and why. */
static sbx_resolver *fail_new(sbx_resolver *r, GError **error, int err,
                              const char *what, const char *hint) {
  g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
              "cannot open %s: openat2: %s%s", what, g_strerror(err), hint);
  sbx_resolver_free(r);
  return NULL;
}

sbx_resolver *sbx_resolver_new(const sbx_allowlist *list, GError **error) {
  return sbx_resolver_new_with_roots(list, NULL, 0, error);
}

/* The directory given for dir, duplicated, or -1 with errno ENOENT. */
static int given_root(const sbx_resolver_root *roots, size_t n_roots,
                      const char *dir) {
  for (size_t k = 0; k < n_roots; k++)
    if (strcmp(roots[k].dir, dir) == 0)
      return fcntl(roots[k].fd, F_DUPFD_CLOEXEC, 3);
  errno = ENOENT;
  return -1;
}

sbx_resolver *sbx_resolver_new_with_roots(const sbx_allowlist *list,
                                          const sbx_resolver_root *roots,
                                          size_t n_roots, GError **error) {
  sbx_resolver *r = g_new0(sbx_resolver, 1);
  r->list = list;
  r->n = sbx_allowlist_n_entries(list);
  r->root_fds = g_new(int, r->n ? r->n : 1);
  /* All of them before the first open: a failure part-way frees the
   * resolver, which closes every descriptor it holds. */
  for (size_t i = 0; i < r->n; i++)
    r->root_fds[i] = -1;
  r->slash_fd = -1;
  r->proc_fd = -1;
  r->base_fd = given_root(roots, n_roots, "/");
  bool want_proc = false;
  for (size_t i = 0; i < r->n; i++) {
    const sbx_allow_entry *e = sbx_allowlist_entry(list, i);
    if (e->rights & SBX_PERM_GRANTABLE)
      continue; /* grants nothing: never matched */
    if (e->proc_self) {
      want_proc = true;
      continue;
    }
    g_autofree char *dir = NULL;
    if (e->recursive) {
      dir = g_strdup(e->path);
    } else {
      const char *slash = strrchr(e->path, '/');
      dir =
          g_strndup(e->path, slash == e->path ? 1 : (size_t)(slash - e->path));
    }
    /* Entries sharing a root share its descriptor. */
    for (size_t j = 0; j < i; j++) {
      const sbx_allow_entry *o = sbx_allowlist_entry(list, j);
      if (o->proc_self || r->root_fds[j] < 0)
        continue;
      const char *oslash = strrchr(o->path, '/');
      size_t olen = o->recursive
                        ? o->len
                        : (oslash == o->path ? 1 : (size_t)(oslash - o->path));
      if (olen == strlen(dir) && memcmp(o->path, dir, olen) == 0) {
        r->root_fds[i] = r->root_fds[j];
        break;
      }
    }
    if (r->root_fds[i] >= 0)
      continue;
    int fd = given_root(roots, n_roots, dir);
    if (fd < 0 && errno != ENOENT) {
      int err = errno;
      g_set_error(error, SBX_BROKER_ERROR, SBX_BROKER_ERROR_FAILED,
                  "cannot copy the descriptor given for %s: %s", dir,
                  g_strerror(err));
      sbx_resolver_free(r);
      return NULL;
    }
    if (fd < 0)
      fd = open_dir_exact(r, dir);
    if (fd < 0 && errno != ENOENT && errno != ENOTDIR && errno != ELOOP &&
        errno != EACCES) {
      int err = errno;
      g_autofree char *what =
          g_strdup_printf("allowlist root %s (entry %s)", dir, e->written);
      /* openat2 refused: a kernel before 5.6, or a sandbox whose filter
       * or supervisor refuses it (sbx-run answers its RESOLVE_ flags
       * with ENOSYS). */
      return fail_new(r, error, err, what,
                      err == ENOSYS
                          ? " (openat2 with RESOLVE_ flags is refused here: "
                            "this runs inside sbx-run or another sandbox, and "
                            "a sandbox cannot be started inside it; or the "
                            "kernel is older than 5.6)"
                          : "");
    }
    r->root_fds[i] = fd;
  }
  if (sbx_allowlist_needs_root(list)) {
    r->slash_fd = open_dir_exact(r, "/");
    if (r->slash_fd < 0)
      return fail_new(r, error, errno, "/ for intermediate-directory entries",
                      "");
  }
  r->proc_fd = given_root(roots, n_roots, "/proc");
  r->own_proc = r->proc_fd >= 0;
  if (want_proc && r->proc_fd < 0) {
    r->proc_fd = open_dir_exact(r, "/proc");
    if (r->proc_fd < 0)
      return fail_new(r, error, errno, "/proc for /proc/self entries",
                      " (is procfs mounted?)");
  }
  return r;
}

void sbx_resolver_free(sbx_resolver *r) {
  if (!r)
    return;
  for (size_t i = 0; i < r->n; i++) {
    int fd = r->root_fds[i];
    if (fd < 0)
      continue;
    for (size_t j = i; j < r->n; j++)
      if (r->root_fds[j] == fd)
        r->root_fds[j] = -1;
    close(fd);
  }
  if (r->slash_fd >= 0)
    close(r->slash_fd);
  if (r->proc_fd >= 0)
    close(r->proc_fd);
  if (r->base_fd >= 0)
    close(r->base_fd);
  g_free(r->root_fds);
  g_free(r);
}

const sbx_allowlist *sbx_resolver_allowlist(const sbx_resolver *r) {
  return r->list;
}

bool sbx_resolver_set_unlisted_errno(sbx_resolver *r, int err) {
  if (!r || (err != 0 && err != ENOENT && err != EACCES && err != EPERM))
    return false;
  r->unlisted_errno = err;
  return true;
}

int sbx_resolver_unlisted_errno(const sbx_resolver *r) {
  return r->unlisted_errno ? r->unlisted_errno
                           : sbx_allowlist_denied_errno(r->list);
}

/* ---- per request ------------------------------------------------------ */

static size_t format_pid(pid_t pid, char *out) {
  char tmp[16];
  size_t n = 0;
  unsigned long v = (unsigned long)pid;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v && n < sizeof(tmp));
  for (size_t i = 0; i < n; i++)
    out[i] = tmp[n - 1 - i];
  return n;
}

/* Whether rest, what follows "/proc/<pid>" of another of the requesters'
 * processes under own_proc, names what ps and top read there: the
 * directory, its task directory, and files the kernel shows for every
 * process of the namespace without a ptrace check. Never its memory,
 * environment, maps or descriptors: the resolver's caller (sbx-run's
 * supervisor) owns the requesters' user namespace, which gives it every
 * capability there whatever its own set, so the kernel would open those
 * of a process that made itself undumpable (and of sbx-run's init) for
 * it, where the requester could not. */
static bool public_proc_path(const char *rest, size_t len) {
  static const char *const names[] = {"stat",    "status", "statm",    "comm",
                                      "cmdline", "cgroup", "oom_score"};
  if (len == 0)
    return true;
  if (rest[0] != '/')
    return false;
  rest++;
  len--;
  if (len >= 4 && memcmp(rest, "task", 4) == 0 &&
      (len == 4 || rest[4] == '/')) {
    if (len == 4)
      return true;
    rest += 5;
    len -= 5;
    size_t digits = 0;
    while (digits < len && rest[digits] >= '0' && rest[digits] <= '9')
      digits++;
    if (digits == 0)
      return false;
    if (digits == len)
      return true;
    if (rest[digits] != '/')
      return false;
    rest += digits + 1;
    len -= digits + 1;
  }
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strlen(names[i]) == len && memcmp(rest, names[i], len) == 0)
      return true;
  return false;
}

/* /proc/self is the requester; other processes' /proc directories, and
 * thread-self (whose thread the broker cannot know), are refused. */
static int classify_proc(const sbx_resolver *r, cursor *c, pid_t pid,
                         sbx_decision *d) {
  c->proc_prefix = 0;
  if (c->len < 7 || memcmp(c->buf, "/proc/", 6) != 0)
    return 0;
  const char *comp = c->buf + 6;
  size_t n = 0;
  while (6 + n < c->len && comp[n] != '/')
    n++;
  char num[16];
  size_t numlen = pid > 0 ? format_pid(pid, num) : 0;
  if (n == 4 && memcmp(comp, "self", 4) == 0) {
    if (pid <= 0)
      return deny(r, d, "/proc/self of an unknown requester");
    size_t rest = c->len - 10;
    if (6 + numlen + rest >= PATH_MAX)
      return deny_with(d, "path longer than PATH_MAX", -ENAMETOOLONG);
    memmove(c->buf + 6 + numlen, c->buf + 10, rest + 1);
    memcpy(c->buf + 6, num, numlen);
    c->len = 6 + numlen + rest;
    c->proc_prefix = 6 + numlen;
    return 0;
  }
  if (n == 11 && memcmp(comp, "thread-self", 11) == 0)
    return deny(r, d, "/proc/thread-self is not served");
  bool digits = n > 0;
  for (size_t i = 0; i < n; i++)
    digits &= comp[i] >= '0' && comp[i] <= '9';
  if (!digits)
    return 0;
  if (pid > 0 && n == numlen && memcmp(comp, num, n) == 0) {
    c->proc_prefix = 6 + n;
    return 0;
  }
  if (r->own_proc && public_proc_path(comp + n, c->len - 6 - n))
    return 0; /* another of the requesters' processes: what ps reads */
  if (r->own_proc)
    return deny(r, d,
                "of another process's /proc directory only its status "
                "files are served: stat, status, comm, cmdline");
  return deny(r, d, "another process's /proc directory");
}

/* May a walk from "/" follow the symlink at c->buf[0..len)? Only where
 * the allowlist lets the worker see that name (the stat right, or a
 * directory above a stat-intermediate entry): a request is decided on
 * every directory it walks, not only on the object it reaches, or a link
 * in a directory the worker may not list (/etc/alternatives/NAME) would
 * tell which names exist there (S39). The links at the top of "/" and of
 * /proc are the system's layout, not anybody's data (merged /usr's /lib,
 * procfs's /proc/net), and are always followed. */
static bool walk_may_follow(const sbx_resolver *r, const cursor *c,
                            size_t len) {
  size_t slashes = 0;
  for (size_t i = 0; i < len; i++)
    slashes += c->buf[i] == '/';
  if (slashes == 1)
    return true;
  if (slashes == 2 && len > 6 && memcmp(c->buf, "/proc/", 6) == 0)
    return true;
  sbx_match m;
  size_t proc_prefix = c->proc_prefix <= len ? c->proc_prefix : 0;
  return sbx_allowlist_match(r->list, c->buf, len, proc_prefix, SBX_PERM_STAT,
                             &m);
}

/* Replaces the first symlink found among the components of c starting at
 * offset `start` by its target. Prefixes are read relative to dirfd
 * (c->buf + start onwards) or, for AT_FDCWD, as absolute paths; a walk
 * from "/" follows only the links walk_may_follow() allows, and reports
 * the others as a denial (-EACCES), exactly like a name that is not there
 * at all. Returns 1 after a substitution, 0 when no symlink is there (any
 * more), -errno. */
static int substitute_symlink(const sbx_resolver *r, cursor *c, int dirfd,
                              size_t start, bool follow_final) {
  char target[PATH_MAX];
  char out[PATH_MAX];
  size_t i = start;
  while (i < c->len) {
    size_t j = i;
    while (j < c->len && c->buf[j] != '/')
      j++;
    bool final = j == c->len;
    if (final && !follow_final)
      return 0;
    if (++c->walk_steps > MAX_WALK_STEPS)
      return -ELOOP;
    char saved = c->buf[j];
    c->buf[j] = '\0';
    ssize_t n = dirfd == AT_FDCWD
                    ? readlink_absolute(r, c->buf, target, sizeof(target))
                    : readlinkat(dirfd, c->buf + start, target, sizeof(target));
    int err = errno;
    c->buf[j] = saved;
    if (n < 0) {
      if (err == EINVAL) {
        i = j + 1;
        continue;
      }
      if (err == ENOENT || err == ENOTDIR || err == EACCES)
        return 0;
      return -err;
    }
    if ((size_t)n >= sizeof(target))
      return -ENAMETOOLONG;
    if (dirfd == AT_FDCWD && !walk_may_follow(r, c, j))
      return -EACCES;
    size_t dirlen = i > 1 ? i - 1 : 1;
    int len =
        sbx_path_join_link(c->buf, dirlen, target, (size_t)n, out, sizeof(out));
    if (len < 0)
      return len;
    size_t rest = c->len - j;
    size_t keep = (len == 1 && rest) ? 0 : (size_t)len;
    if (keep + rest >= PATH_MAX)
      return -ENAMETOOLONG;
    memcpy(out + keep, c->buf + j, rest);
    out[keep + rest] = '\0';
    memcpy(c->buf, out, keep + rest + 1);
    c->len = keep + rest;
    return 1;
  }
  return 0;
}

static bool in_proc(const cursor *c) {
  return c->len >= 5 && memcmp(c->buf, "/proc", 5) == 0 &&
         (c->len == 5 || c->buf[5] == '/');
}

/* How to resolve beneath a root. Below /proc no symlink is followed by
 * the kernel: procfs's own links (net -> self/net, mounts -> self/mounts)
 * would name the broker's "self", so the resolver substitutes them itself
 * and the next round maps self to the worker (S26). */
static unsigned long long beneath(const cursor *c) {
  return BENEATH | (in_proc(c) ? RESOLVE_NO_SYMLINKS : 0);
}

/* After ELOOP below /proc: is the first symlink on the path one of
 * procfs's top-level links (/proc/net, /proc/mounts, ...), to substitute
 * and decide again? Anything deeper (/proc/<pid>/root, exe, cwd, fd/N,
 * ns/...) is a magic link, never followed. */
static bool proc_top_link(const sbx_resolver *r, const cursor *c) {
  if (c->len <= 6)
    return false;
  char top[PATH_MAX];
  size_t n = 6;
  while (n < c->len && c->buf[n] != '/')
    n++;
  memcpy(top, c->buf, n);
  top[n] = '\0';
  char target[16];
  return readlink_absolute(r, top, target, sizeof(target)) > 0;
}

/* The step an openat2 for a directory on the way (a parent, an
 * intermediate directory) leads to: `walk_err` means a symlink was in the
 * way, EAGAIN a race to retry; any other error is the file system's
 * answer. On success the descriptor is the result. */
static step opened_dir(int fd, int err, int walk_err, resolved *out, int *rc) {
  if (fd < 0) {
    if (err == walk_err || (walk_err == ELOOP && err == ENOTDIR))
      return STEP_WALK_PATH;
    if (err == EAGAIN)
      return STEP_RETRY;
    *rc = -err;
    return STEP_DONE;
  }
  out->fd = fd;
  out->owned = true;
  *rc = fd;
  return STEP_DONE;
}

/* Opens beneath the root of entry `idx`. */
static step open_entry(const sbx_resolver *r, size_t idx, cursor *c,
                       const alternative *alt, const lookup *lk, resolved *out,
                       int *rc, const char **why, int *walk_fd,
                       size_t *walk_start) {
  const sbx_allow_entry *e = sbx_allowlist_entry(r->list, idx);
  int rootfd;
  bool root_owned = false;
  size_t rel_off = 0; /* 0: the root itself */
  *walk_fd = AT_FDCWD;
  *walk_start = 1;
  if (e->proc_self) {
    if (alt->parent) {
      *why = "no directory changes below /proc";
      return STEP_DENIED;
    }
    char pidname[16];
    size_t plen = c->proc_prefix - 6;
    memcpy(pidname, c->buf + 6, plen);
    pidname[plen] = '\0';
    rootfd =
        (int)sys_openat2(r->proc_fd, pidname, O_PATH | O_DIRECTORY | O_CLOEXEC,
                         0, BENEATH | RESOLVE_NO_SYMLINKS);
    if (rootfd < 0) {
      *rc = -errno;
      return STEP_DONE;
    }
    root_owned = true;
    if (c->len > c->proc_prefix)
      rel_off = c->proc_prefix + 1;
    *walk_start = rel_off ? rel_off : c->len;
  } else {
    rootfd = r->root_fds[idx];
    if (rootfd < 0) {
      *rc = -ENOENT;
      return STEP_DONE;
    }
    if (e->recursive) {
      if (c->len > e->len)
        rel_off = e->len == 1 ? 1 : e->len + 1;
    } else {
      const char *slash = strrchr(c->buf, '/');
      rel_off = (size_t)(slash - c->buf) + 1;
    }
    *walk_fd = rootfd;
    *walk_start = rel_off ? rel_off : c->len;
  }
  const char *rel = rel_off ? c->buf + rel_off : ".";

  if (alt->parent) {
    if (!rel_off) {
      *why = "the root of an allowlist entry";
      return STEP_DENIED;
    }
    char *slash = strrchr(c->buf + rel_off, '/');
    if (!slash) {
      out->fd = rootfd;
      out->owned = false;
      out->name = rel;
      return STEP_DONE;
    }
    unsigned long long how = beneath(c);
    *slash = '\0';
    int pfd =
        (int)sys_openat2(rootfd, rel, O_PATH | O_DIRECTORY | O_CLOEXEC, 0, how);
    int err = errno;
    *slash = '/';
    out->name = slash + 1;
    return opened_dir(pfd, err, EXDEV, out, rc);
  }

  int oflags = alt->oflags | O_CLOEXEC;
  bool exact = !e->recursive;
  if (exact || !lk->follow)
    oflags |= O_NOFOLLOW;
  int fd = (int)sys_openat2(rootfd, rel, oflags, alt->mode, beneath(c));
  int err = errno;
  if (root_owned)
    close(rootfd);
  if (fd < 0) {
    if (err == EXDEV)
      return e->proc_self ? (*why = "symlink out of /proc/self", STEP_DENIED)
                          : STEP_WALK_PATH;
    if (err == EAGAIN)
      return STEP_RETRY;
    if (err == ELOOP && in_proc(c)) {
      if (!e->proc_self && proc_top_link(r, c)) {
        *walk_fd = AT_FDCWD;
        *walk_start = 1;
        return STEP_WALK_PATH;
      }
      *why = "magic link";
      return STEP_DENIED;
    }
    if (err == ELOOP && exact && lk->follow)
      return STEP_WALK_FINAL;
    *rc = -err;
    return STEP_DONE;
  }
  if (exact && lk->follow && (oflags & SBX_FS_O_PATH)) {
    if (fstat(fd, &out->st) < 0) {
      *rc = -errno;
      close(fd);
      return STEP_DONE;
    }
    if (S_ISLNK(out->st.st_mode)) {
      close(fd);
      if (in_proc(c)) {
        *why = "magic link";
        return STEP_DENIED;
      }
      return STEP_WALK_FINAL;
    }
    out->have_st = true;
  }
  out->fd = fd;
  out->owned = true;
  *rc = fd;
  return STEP_DONE;
}

/* A directory above an INTERMEDIATE entry: reached from "/" without
 * following any symlink, and only ever for stat-level operations. */
static step open_intermediate(const sbx_resolver *r, cursor *c, resolved *out,
                              int *rc) {
  const char *rel = c->len == 1 ? "." : c->buf + 1;
  int fd = (int)sys_openat2(r->slash_fd, rel,
                            O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC, 0,
                            BENEATH | RESOLVE_NO_SYMLINKS);
  return opened_dir(fd, errno, ELOOP, out, rc);
}

static bool match_lookup(const sbx_resolver *r, const cursor *c,
                         const lookup *lk, sbx_match *m, size_t *alt) {
  for (size_t i = 0; i < lk->n_alts; i++) {
    if (sbx_allowlist_match(r->list, c->buf, c->len, c->proc_prefix,
                            lk->alts[i].need, m)) {
      *alt = i;
      return true;
    }
  }
  return false;
}

/* The resolution loop: match, open beneath the entry, and when a symlink
 * leads elsewhere, substitute it and decide again on the new path. */
static int resolve(const sbx_resolver *r, pid_t pid, const char *path,
                   const lookup *lk, cursor *c, resolved *out,
                   sbx_decision *d) {
  memset(out, 0, sizeof(*out));
  out->fd = -1;
  if (!path)
    return deny_with(d, "no path", -EFAULT);
  size_t len = strnlen(path, PATH_MAX);
  const char *why = NULL;
  int rc = sbx_path_validate(path, len, &why);
  if (rc == -ENAMETOOLONG)
    return deny_with(d, why, rc);
  if (rc < 0)
    return deny(r, d, why);
  memcpy(c->buf, path, len);
  c->buf[len] = '\0';
  c->len = len;
  c->walk_steps = 0;

  unsigned idle = 0; /* walks that found no symlink (it moved away) */
  for (unsigned hop = 0; hop <= MAX_HOPS; hop++) {
    rc = classify_proc(r, c, pid, d);
    if (rc < 0)
      return rc;
    sbx_match m;
    size_t alt = 0;
    int walk_fd = AT_FDCWD;
    size_t walk_start = 1;
    step s;
    bool follow_final = lk->follow;
    if (!match_lookup(r, c, lk, &m, &alt)) {
      int sub = substitute_symlink(r, c, AT_FDCWD, 1, lk->follow);
      if (sub > 0)
        continue;
      if (sub == -ELOOP)
        return deny(r, d, "too many symlinks to walk");
      return deny_unlisted(r, d, "not in the allowlist", path, c, lk);
    }
    rc = 0;
    why = NULL;
    if (m.kind == SBX_MATCH_INTERMEDIATE) {
      s = open_intermediate(r, c, out, &rc);
      out->entry = NULL;
    } else {
      s = open_entry(r, m.entry, c, &lk->alts[alt], lk, out, &rc, &why,
                     &walk_fd, &walk_start);
      out->entry = sbx_allowlist_entry(r->list, m.entry);
      if (lk->alts[alt].parent)
        follow_final = false;
    }
    out->alt = alt;
    switch (s) {
      case STEP_DONE:
        grant(d);
        return rc;
      case STEP_DENIED:
        return deny(r, d, why);
      case STEP_RETRY:
        continue;
      case STEP_WALK_FINAL:
        follow_final = true;
        /* fall through */
      case STEP_WALK_PATH: {
        if (m.kind == SBX_MATCH_INTERMEDIATE) {
          walk_fd = AT_FDCWD;
          walk_start = 1;
        }
        int sub = substitute_symlink(r, c, walk_fd, walk_start, follow_final);
        if (sub == -EACCES)
          return deny_unlisted(r, d, "not in the allowlist", path, c, lk);
        if (sub < 0)
          return deny(r, d, "symlink could not be resolved");
        /* 0: the link moved away while we looked; decide again, but not
         * forever. */
        if (sub == 0 && ++idle > 3)
          return deny(r, d, "symlink changing during resolution");
        continue;
      }
    }
  }
  return deny_with(d, "too many symlinks", -ELOOP);
}

static void release(resolved *res) {
  if (res->owned && res->fd >= 0)
    close_keep_errno(res->fd);
  res->fd = -1;
}

/* ---- operations ------------------------------------------------------- */

typedef enum {
  OPEN_PLAIN,     /* no O_CREAT */
  OPEN_CREATE,    /* CREATE right */
  OPEN_TEMPORARY, /* TEMPORARY right: unnamed file in the parent */
  OPEN_NOCREATE,  /* O_CREAT asked, only WRITE granted: existing files */
} open_variant;

int sbx_resolver_open(const sbx_resolver *r, pid_t pid, const char *path,
                      int flags, mode_t mode, sbx_decision *d) {
  sbx_decision local;
  if (!d)
    d = &local;
  unsigned uflags = (unsigned)flags;
  if (uflags & ~(unsigned)SBX_FS_OPEN_FLAGS)
    return deny_with(d, "unknown open flags", -EINVAL);
  int acc = flags & O_ACCMODE;
  if (acc == O_ACCMODE)
    return deny_with(d, "invalid access mode", -EINVAL);
  if (uflags & SBX_FS_O_PATH)
    return deny(r, d, "O_PATH");
  if (uflags & SBX_FS_O_ASYNC)
    return deny(r, d, "O_ASYNC");
  bool tmpfile = (uflags & SBX_FS_O_TMPFILE_BIT) != 0;
  bool creat = (flags & O_CREAT) != 0;
  bool trunc = (flags & O_TRUNC) != 0;
  if (tmpfile && (!(flags & O_DIRECTORY) || acc == O_RDONLY || creat))
    return deny_with(d, "invalid O_TMPFILE flags", -EINVAL);
  if (creat && (flags & O_DIRECTORY))
    return deny_with(d, "O_CREAT with O_DIRECTORY", -EINVAL);
  if (acc == O_RDONLY && trunc)
    return deny(r, d, "O_RDONLY|O_TRUNC");

  unsigned need = acc == O_RDONLY   ? SBX_PERM_READ
                  : acc == O_WRONLY ? SBX_PERM_WRITE
                                    : SBX_PERM_READ | SBX_PERM_WRITE;
  if (trunc)
    need |= SBX_PERM_WRITE;
  mode_t umask_ = sbx_allowlist_umask(r->list);
  mode_t cmode = (creat || tmpfile) ? (mode & 0777 & ~umask_) : 0;
  /* O_NONBLOCK keeps a FIFO or device open from blocking the broker; it
   * is cleared again below unless the worker asked for it. */
  bool add_nonblock = !(flags & O_NONBLOCK) && !(flags & O_DIRECTORY);
  int base = (flags & PASSED_OPEN_FLAGS & ~O_CREAT & ~O_EXCL) | O_NOCTTY |
             (add_nonblock ? O_NONBLOCK : 0);

  lookup lk = {.follow = !(flags & O_NOFOLLOW)};
  open_variant variants[3];
  if (tmpfile) {
    lk.alts[0] = (alternative){need | SBX_PERM_CREATE, false, base, cmode};
    lk.alts[1] = (alternative){need | SBX_PERM_TEMPORARY, false, base, cmode};
    variants[0] = variants[1] = OPEN_PLAIN;
    lk.n_alts = 2;
  } else if (creat) {
    int cflags = base | O_CREAT | (flags & O_EXCL);
    lk.alts[0] = (alternative){need | SBX_PERM_CREATE, false, cflags, cmode};
    variants[0] = OPEN_CREATE;
    lk.n_alts = 1;
    if (flags & O_EXCL) {
      lk.alts[lk.n_alts] = (alternative){need | SBX_PERM_TEMPORARY, true, 0, 0};
      variants[lk.n_alts++] = OPEN_TEMPORARY;
    } else {
      lk.alts[lk.n_alts] = (alternative){need, false, base, 0};
      variants[lk.n_alts++] = OPEN_NOCREATE;
    }
  } else {
    lk.alts[0] = (alternative){need, false, base, 0};
    variants[0] = OPEN_PLAIN;
    lk.n_alts = 1;
  }

  cursor c;
  resolved res;
  int rc = resolve(r, pid, path, &lk, &c, &res, d);
  if (rc < 0) {
    if (rc == -ENOENT && d->granted && variants[res.alt] == OPEN_NOCREATE)
      return deny(r, d, "O_CREAT without the create right");
    return rc;
  }

  int fd;
  if (variants[res.alt] == OPEN_TEMPORARY) {
    int tflags = (base & ~O_DIRECTORY & ~O_NOFOLLOW & ~O_NONBLOCK) |
                 SBX_FS_O_TMPFILE_BIT | O_DIRECTORY | O_CLOEXEC;
    if ((tflags & O_ACCMODE) == O_RDONLY)
      tflags |= O_RDWR;
    fd = (int)sys_openat2(res.fd, ".", tflags, cmode, BENEATH);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) {
      /* No O_TMPFILE on this file system: create, check, unlink. */
      int cflags =
          (base & ~O_DIRECTORY) | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
      fd = (int)sys_openat2(res.fd, res.name, cflags, cmode, BENEATH);
      if (fd >= 0) {
        struct stat a, b;
        if (fstat(fd, &a) == 0 &&
            fstatat(res.fd, res.name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
            a.st_dev == b.st_dev && a.st_ino == b.st_ino)
          unlinkat(res.fd, res.name, 0);
      }
    }
    if (fd < 0) {
      rc = -errno;
      release(&res);
      return rc;
    }
    release(&res);
  } else {
    fd = res.fd;
  }

  /* The object's type, link count and size, when a check needs them: a
   * recursive entry hands out regular files and directories only, and a
   * write or truncation looks at the links and the size. An exact entry
   * opened for reading needs none of them: openat2 beneath its parent
   * with O_NOFOLLOW already reached the named object itself. */
  bool below_recursive = res.entry && res.entry->recursive;
  bool writes = acc != O_RDONLY || trunc;
  struct stat st = {.st_mode = 0};
  bool have_st = below_recursive || writes;
  if (have_st && fstat(fd, &st) < 0) {
    rc = -errno;
    close(fd);
    return rc;
  }
  if (below_recursive && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    close(fd);
    return deny(r, d, sbx_resolver_not_regular);
  }
  if (writes && S_ISREG(st.st_mode) && st.st_nlink > 1) {
    close(fd);
    return deny(r, d, "write to a file with several hard links");
  }
  if (trunc && S_ISREG(st.st_mode) && st.st_size != 0 && ftruncate(fd, 0) < 0) {
    rc = -errno;
    close(fd);
    return rc;
  }
  /* The O_NONBLOCK added above goes again. A directory that refuses the
   * worker's other flags (O_DIRECT) keeps it, as it did not need it. */
  if (add_nonblock &&
      fcntl(fd, F_SETFL, flags & (O_APPEND | O_DIRECT | O_NOATIME)) < 0) {
    rc = -errno;
    if ((have_st || fstat(fd, &st) == 0) && S_ISDIR(st.st_mode))
      return fd;
    close(fd);
    return rc;
  }
  return fd;
}

/* Resolves path to an O_PATH descriptor of the object itself, for
 * operations that only look at it (need: the right they require). */
static int resolve_object(const sbx_resolver *r, pid_t pid, const char *path,
                          unsigned need, bool follow, resolved *res,
                          sbx_decision *d) {
  lookup lk = {.n_alts = 1, .follow = follow};
  lk.alts[0] = (alternative){need, false, SBX_FS_O_PATH};
  cursor c;
  return resolve(r, pid, path, &lk, &c, res, d);
}

/* A descriptor of our own for res->fd: the held roots are never handed
 * out. */
static int take_fd(resolved *res) {
  if (res->owned) {
    int fd = res->fd;
    res->fd = -1;
    return fd;
  }
  int fd = fcntl(res->fd, F_DUPFD_CLOEXEC, 0);
  return fd < 0 ? -errno : fd;
}

int sbx_resolver_open_object(const sbx_resolver *r, pid_t pid, const char *path,
                             unsigned need, bool follow, sbx_decision *d) {
  if (need == 0 || (need & ~(unsigned)SBX_PERM_ALL))
    return deny_with(d, "invalid rights", -EINVAL);
  resolved res;
  int rc = resolve_object(r, pid, path, need, follow, &res, d);
  if (rc < 0)
    return rc;
  return take_fd(&res);
}

int sbx_resolver_access(const sbx_resolver *r, pid_t pid, const char *path,
                        int mode, int at_flags, sbx_decision *d) {
  if (mode & ~SBX_FS_ACCESS_MODES)
    return deny_with(d, "invalid access mode", -EINVAL);
  if (at_flags & ~SBX_FS_PATH_AT_FLAGS(SBX_FS_ACCESS_AT_FLAGS))
    return deny_with(d, "invalid access flags", -EINVAL);
  if (mode & X_OK)
    return deny(r, d, "execute permission is never granted");
  unsigned need = mode == F_OK ? SBX_PERM_STAT : 0;
  if (mode & R_OK)
    need |= SBX_PERM_READ;
  if (mode & W_OK)
    need |= SBX_PERM_WRITE;
  resolved res;
  int rc = resolve_object(r, pid, path, need, !(at_flags & AT_SYMLINK_NOFOLLOW),
                          &res, d);
  if (rc < 0)
    return rc;
  rc = 0;
  if (mode != F_OK && syscall(SYS_faccessat2, res.fd, "", mode,
                              AT_EMPTY_PATH | (at_flags & AT_EACCESS)) < 0)
    rc = -errno;
  release(&res);
  return rc;
}

int sbx_resolver_stat(const sbx_resolver *r, pid_t pid, const char *path,
                      bool follow, struct stat *out, sbx_decision *d) {
  resolved res;
  int rc = resolve_object(r, pid, path, SBX_PERM_STAT, follow, &res, d);
  if (rc < 0)
    return rc;
  rc = 0;
  if (res.have_st)
    *out = res.st;
  else if (fstat(res.fd, out) < 0)
    rc = -errno;
  release(&res);
  return rc;
}

int sbx_resolver_statx(const sbx_resolver *r, pid_t pid, const char *path,
                       int at_flags, unsigned mask, struct statx *out,
                       sbx_decision *d) {
  if ((at_flags & ~SBX_FS_PATH_AT_FLAGS(SBX_FS_STATX_AT_FLAGS)) ||
      sbx_fs_check_statx((uint32_t)at_flags, mask) < 0)
    return deny_with(d, "invalid statx flags or mask", -EINVAL);
  resolved res;
  int rc = resolve_object(r, pid, path, SBX_PERM_STAT,
                          !(at_flags & AT_SYMLINK_NOFOLLOW), &res, d);
  if (rc < 0)
    return rc;
  rc = 0;
  if (statx(res.fd, "", AT_EMPTY_PATH | (at_flags & ~AT_SYMLINK_NOFOLLOW), mask,
            out) < 0)
    rc = -errno;
  release(&res);
  return rc;
}

ssize_t sbx_resolver_readlink(const sbx_resolver *r, pid_t pid,
                              const char *path, char *buf, size_t size,
                              sbx_decision *d) {
  if (size == 0)
    return deny_with(d, "empty buffer", -EINVAL);
  resolved res;
  int rc = resolve_object(r, pid, path, SBX_PERM_STAT, false, &res, d);
  if (rc < 0)
    return rc;
  ssize_t n = readlinkat(res.fd, "", buf, size);
  if (n < 0)
    /* With an empty name the kernel says ENOENT for "not a symlink";
     * readlink(2) on the path would have said EINVAL. */
    n = errno == ENOENT ? -EINVAL : -errno;
  release(&res);
  return n;
}

static int resolve_parent(const sbx_resolver *r, pid_t pid, const char *path,
                          cursor *c, resolved *res, sbx_decision *d) {
  lookup lk = {.n_alts = 1, .follow = false};
  lk.alts[0] = (alternative){SBX_PERM_CREATE, true, 0};
  return resolve(r, pid, path, &lk, c, res, d);
}

int sbx_resolver_open_parent(const sbx_resolver *r, pid_t pid, const char *path,
                             char *name, size_t size, sbx_decision *d) {
  cursor c;
  resolved res;
  int rc = resolve_parent(r, pid, path, &c, &res, d);
  if (rc < 0)
    return rc;
  size_t len = strlen(res.name);
  if (len + 1 > size) {
    release(&res);
    return deny_with(d, "name longer than the caller's buffer", -ENAMETOOLONG);
  }
  memcpy(name, res.name, len + 1);
  rc = take_fd(&res);
  release(&res);
  return rc;
}

int sbx_resolver_mkdir(const sbx_resolver *r, pid_t pid, const char *path,
                       mode_t mode, sbx_decision *d) {
  cursor c;
  resolved res;
  int rc = resolve_parent(r, pid, path, &c, &res, d);
  if (rc < 0)
    return rc;
  mode_t m = mode & 0777 & ~sbx_allowlist_umask(r->list);
  rc = mkdirat(res.fd, res.name, m) < 0 ? -errno : 0;
  release(&res);
  return rc;
}

static int remove_entry(const sbx_resolver *r, pid_t pid, const char *path,
                        int flags, sbx_decision *d) {
  cursor c;
  resolved res;
  int rc = resolve_parent(r, pid, path, &c, &res, d);
  if (rc < 0)
    return rc;
  rc = unlinkat(res.fd, res.name, flags) < 0 ? -errno : 0;
  release(&res);
  return rc;
}

int sbx_resolver_unlink(const sbx_resolver *r, pid_t pid, const char *path,
                        sbx_decision *d) {
  return remove_entry(r, pid, path, 0, d);
}

int sbx_resolver_rmdir(const sbx_resolver *r, pid_t pid, const char *path,
                       sbx_decision *d) {
  return remove_entry(r, pid, path, AT_REMOVEDIR, d);
}

int sbx_resolver_rename(const sbx_resolver *r, pid_t pid, const char *from,
                        const char *to, unsigned flags, sbx_decision *d) {
  if ((flags & ~(unsigned)SBX_FS_RENAME_SERVED) || sbx_fs_check_rename(flags))
    return deny_with(d, "invalid rename flags", -EINVAL);
  cursor c1, c2;
  resolved a, b;
  int rc = resolve_parent(r, pid, from, &c1, &a, d);
  if (rc < 0)
    return rc;
  rc = resolve_parent(r, pid, to, &c2, &b, d);
  if (rc < 0) {
    release(&a);
    return rc;
  }
  rc = renameat2(a.fd, a.name, b.fd, b.name, flags) < 0 ? -errno : 0;
  release(&a);
  release(&b);
  return rc;
}
