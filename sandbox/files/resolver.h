/* The resolver: turns a worker's path and flags into a decision and, when
 * allowed, an open descriptor or the result of the operation.
 *
 * Why it exists: checking a path string is not enough (the file system can
 * change between the check and the use), so the decision is made on the
 * object actually reached. Every operation resolves with openat2() beneath
 * a directory descriptor held for the matching allowlist entry
 * (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS): a symlink, rename race or
 * `..` can never carry the lookup outside that entry. When a symlink does
 * lead outside, its target is re-checked as a new path (at most 40 hops),
 * so a link inside an allowed tree works exactly when its target is
 * allowed too.
 *
 * Used by the broker server and by sbx-run's user-notification supervisor;
 * nothing here knows about the wire protocol.
 *
 * What it trusts: the allowlist (from the host) and the pid it is told the
 * request comes from. What it refuses: every path sbx_path_validate()
 * refuses, unknown or dangerous open flags, non-regular files below
 * recursive entries, writes to files with several hard links, any /proc
 * directory but the requesting worker's own, and magic links. Below /proc
 * the kernel follows no symlink: procfs's top-level links (/proc/net ->
 * self/net) are substituted here, so their "self" is the worker too.
 *
 * The result of every call is >= 0 or -errno. `decision`, when not NULL,
 * says whether the allowlist allowed the operation (a granted request may
 * still fail with the file system's errno, e.g. ENOENT) and, if not, why.
 * Denials return the allowlist's denied errno (EACCES by default), except
 * -ENAMETOOLONG for paths of PATH_MAX bytes or more and -EINVAL for flags
 * no kernel accepts.
 *
 * The per-request functions allocate nothing and hold no lock, so several
 * threads may share one resolver.
 */
#ifndef SBX_FILES_RESOLVER_H_
#define SBX_FILES_RESOLVER_H_

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <glib.h>

#include "sandbox/files/permissions.h"

typedef struct sbx_resolver sbx_resolver;

/* Bytes kept of a denial's object and hint, NUL included. */
#define SBX_DECISION_TEXT_MAX 192

typedef struct {
  bool granted;
  const char *reason; /* static; set when !granted */
  /* Set on some denials, "" otherwise, cut to fit. object: the path the
   * decision was made on when it is not the one asked for (a symbolic
   * link on the way led there). allow: the one rule that would have
   * granted it ("read /usr/share/fontconfig/conf.avail/10-a.conf",
   * "stat-intermediate /srv/data"), for the audit log. */
  char object[SBX_DECISION_TEXT_MAX];
  char allow[SBX_DECISION_TEXT_MAX];
} sbx_decision;

/* Opens one directory descriptor per allowlist root (O_PATH, close-on-exec;
 * a root that does not exist yet makes requests below it fail with ENOENT).
 * `list` is borrowed and must outlive the resolver. */
sbx_resolver *sbx_resolver_new(const sbx_allowlist *list, GError **error);
void sbx_resolver_free(sbx_resolver *resolver);

const sbx_allowlist *sbx_resolver_allowlist(const sbx_resolver *resolver);

/* The errno of a refused look (stat, read) at a name no entry lets the
 * requester even stat (0: the allowlist's denied errno, as every other
 * refusal): ENOENT makes such a name as missing as it is in a tree that
 * holds only the grants, whether it exists or not. A name the requester
 * may stat, and every refused change, keep the denied errno. False for
 * another errno or a NULL resolver. */
bool sbx_resolver_set_unlisted_errno(sbx_resolver *resolver, int err);
/* That errno, resolved (never 0). */
int sbx_resolver_unlisted_errno(const sbx_resolver *resolver);

/* A directory that stands in for the host's at dir (canonical, no
 * trailing slash): an O_PATH or open directory descriptor, borrowed. */
typedef struct {
  const char *dir;
  int fd;
} sbx_resolver_root;

/* As sbx_resolver_new, with the entries whose root is one of roots' dir
 * resolved beneath a copy of that descriptor instead of the host's
 * directory: sbx-run's private /tmp and /dev/shm, which live in the
 * sandbox's mount namespace. A root given for "/" is the requesters' own
 * tree, in whose mount namespace every absolute path is looked up (the
 * other roots, symbolic links), so the descriptors handed out are of
 * their mounts. A root given for "/proc" is a procfs of the
 * requesters' own pid namespace: /proc/self entries resolve beneath it
 * (with `pid` as that namespace numbers the requester), and of another
 * process's /proc directory what ps reads is served (stat, status, comm,
 * cmdline, ...), never its memory, environment or descriptors. */
sbx_resolver *sbx_resolver_new_with_roots(const sbx_allowlist *list,
                                          const sbx_resolver_root *roots,
                                          size_t n_roots, GError **error);

/* In every call, `pid` is the requesting process as the caller's pid
 * namespace sees it: /proc/self and /proc/<pid> mean it. 0 refuses every
 * per-process /proc path. */

/* Opens `path`. O_CLOEXEC and O_NOCTTY are always set on the returned
 * descriptor; the create mode is masked with the allowlist's umask.
 * Below a recursive entry only regular files and directories are opened;
 * anything else (a FIFO, a device node, a socket file) is refused with
 * decision->reason == sbx_resolver_not_regular, for callers that serve
 * such an object themselves. */
extern const char sbx_resolver_not_regular[];
int sbx_resolver_open(const sbx_resolver *resolver, pid_t pid, const char *path,
                      int flags, mode_t mode, sbx_decision *decision);

/* access()/faccessat2(): mode F_OK or R_OK|W_OK (X_OK is never granted);
 * at_flags AT_EACCESS and AT_SYMLINK_NOFOLLOW. */
int sbx_resolver_access(const sbx_resolver *resolver, pid_t pid,
                        const char *path, int mode, int at_flags,
                        sbx_decision *decision);

int sbx_resolver_stat(const sbx_resolver *resolver, pid_t pid, const char *path,
                      bool follow, struct stat *out, sbx_decision *decision);

/* statx(): at_flags AT_SYMLINK_NOFOLLOW, AT_NO_AUTOMOUNT, AT_STATX_*. */
int sbx_resolver_statx(const sbx_resolver *resolver, pid_t pid,
                       const char *path, int at_flags, unsigned mask,
                       struct statx *out, sbx_decision *decision);

/* Returns the number of bytes written to buf (not terminated), like
 * readlink(2). */
ssize_t sbx_resolver_readlink(const sbx_resolver *resolver, pid_t pid,
                              const char *path, char *buf, size_t size,
                              sbx_decision *decision);

int sbx_resolver_mkdir(const sbx_resolver *resolver, pid_t pid,
                       const char *path, mode_t mode, sbx_decision *decision);
int sbx_resolver_unlink(const sbx_resolver *resolver, pid_t pid,
                        const char *path, sbx_decision *decision);
int sbx_resolver_rmdir(const sbx_resolver *resolver, pid_t pid,
                       const char *path, sbx_decision *decision);

/* An O_PATH descriptor (close-on-exec) of the object at `path`, reached
 * beneath an entry that grants `need` (SBX_PERM_*). For callers that act
 * on an object they hold another way - a descriptor of a sandboxed
 * program, a socket file to connect to - and must prove that the
 * allowlist grants `need` on it: compare the two objects' st_dev and
 * st_ino. Any file type is returned. */
int sbx_resolver_open_object(const sbx_resolver *resolver, pid_t pid,
                             const char *path, unsigned need, bool follow,
                             sbx_decision *decision);

/* The directory `path` would be created in, as an O_PATH descriptor
 * (close-on-exec) reached beneath an entry with the CREATE right for
 * `path`; its last component is copied to `name` (`size` bytes, at least
 * NAME_MAX + 1). For creations the resolver does not perform itself, such
 * as binding a unix socket: the caller creates `name` relative to the
 * descriptor, or has the kernel check that the object it creates lands
 * beneath it. */
int sbx_resolver_open_parent(const sbx_resolver *resolver, pid_t pid,
                             const char *path, char *name, size_t size,
                             sbx_decision *decision);

/* Both paths need the CREATE right. flags: 0, RENAME_NOREPLACE or
 * RENAME_EXCHANGE. */
int sbx_resolver_rename(const sbx_resolver *resolver, pid_t pid,
                        const char *from, const char *to, unsigned flags,
                        sbx_decision *decision);

#endif /* SBX_FILES_RESOLVER_H_ */
