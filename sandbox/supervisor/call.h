/* One notification being decided: the state every handler of the
 * supervisor works on, and the helpers they share. Internal to
 * sandbox/supervisor (supervisor.c, fs_ops.c, fs_open.c, fs_look.c,
 * objects.c, descriptors.c, sockets.c, observer.c).
 *
 * Why it exists: the handlers are split by what they decide on - the
 * file-system calls of the table (fs_ops.c, fs_open.c, fs_look.c: one
 * handler per operation, over requests the shared decoder made), the
 * objects paths and
 * descriptors name (objects.c), descriptors the program holds
 * (descriptors.c), sockets (sockets.c) - but answer, deny and report in
 * exactly one way, so the rules of supervisor.h hold for all of them:
 *   - a handler records its answer in the call (answer_*, deny, decided);
 *     only supervisor.c talks to the kernel;
 *   - before acting on the file system or a socket for the target, it
 *     checks that the target still waits (drop_if_gone): a target that
 *     went away is not served (S31);
 *   - a decision that depended on the target's memory, a path or a
 *     descriptor number is never answered with ANSWER_CONTINUE (S30).
 */
#ifndef SBX_SUPERVISOR_CALL_H_
#define SBX_SUPERVISOR_CALL_H_

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>
#include <linux/seccomp.h>

#include "sandbox/files/fs_decode.h"
#include "sandbox/kernel/unotify/target.h"
#include "sandbox/supervisor/supervisor.h"

typedef enum {
  ANSWER_VALUE,    /* value, or -error */
  ANSWER_FD,       /* install fd (ours, closed afterwards) and return it */
  ANSWER_CONTINUE, /* the kernel runs the call as made */
  ANSWER_WAIT,     /* answered later, when wait_fd is ready (wait_kind) */
  ANSWER_DROP,     /* the target is gone: no answer */
} sbx_answer_kind;

/* What an ANSWER_WAIT call waits for. */
typedef enum {
  WAIT_CONNECT,    /* wait_fd: our socket whose connect is in progress */
  WAIT_FIFO_READ,  /* wait_fd: our read end of a FIFO, until a writer wrote
                      or came and went (fs_open.c) */
  WAIT_FIFO_WRITE, /* fifo: a FIFO without a reader, opened for writing
                      once one comes (fs_open.c); wait_fd: a timer that
                      looks again for readers the supervisor did not open */
} sbx_wait_kind;

typedef struct sbx_call {
  sbx_unotify *u;
  const sbx_unotify_config *cfg;
  const struct seccomp_notif *n; /* points at notif */
  struct seccomp_notif notif;
  sbx_unotify_target t;
  sbx_unotify_event ev;
  bool report; /* emit ev (fd-based re-runs of fstat are not decisions) */
  sbx_answer_kind kind;
  int64_t value;
  int error;
  int fd;
  unsigned fd_flags;
  int wait_fd; /* ANSWER_WAIT: see wait_kind */
  sbx_wait_kind wait_kind;
  int fifo;            /* WAIT_FIFO_WRITE: our O_PATH descriptor of the FIFO */
  int fifo_flags;      /* WAIT_FIFO_*: the program's open flags */
  sbx_fs_request q;    /* a file-system call, as the decoder made it */
  char raw[PATH_MAX];  /* q.path: the path as the program passed it */
  char raw2[PATH_MAX]; /* q.path2 */
  char path[PATH_MAX]; /* absolute and normalised */
  char path2[PATH_MAX];
  char hint_path[PATH_MAX];
  char target[PATH_MAX]; /* ev.target: where a refused link leads */
  char detail[64];
  char name[32];
  /* sbx_call_own_links(), when c->path was the link itself: its name
   * ("/proc/thread-self", "/dev/fd") and its text. */
  const char *link_name;
  char link_text[64];
} sbx_call;

#define PATH_GONE SBX_TARGET_GONE
#define PATH_EMPTY SBX_TARGET_PATH_EMPTY
#define PATH_EMPTY_OK SBX_TARGET_PATH_EMPTY_OK

/* ---- arguments and answers --------------------------------------------- */

static inline uint64_t arg(const sbx_call *c, int i) {
  return c->n->data.args[i];
}

/* An int-sized argument: the kernel reads only the low 32 bits. */
static inline int arg_int(const sbx_call *c, int i) {
  return (int)(uint32_t)c->n->data.args[i];
}

static inline void answer_value(sbx_call *c, int64_t v) {
  c->kind = ANSWER_VALUE;
  c->value = v;
  c->error = 0;
  c->ev.error = 0;
}

static inline void answer_error(sbx_call *c, int err) {
  c->kind = ANSWER_VALUE;
  c->value = 0;
  c->error = err;
  c->ev.error = err;
}

/* Not a denial: the rules allow the call, which fails with err. */
static inline void answer_failed(sbx_call *c, int err) {
  c->ev.allowed = true;
  answer_error(c, err);
}

static inline void answer_result(sbx_call *c, int64_t rc) {
  if (rc < 0)
    answer_error(c, (int)-rc);
  else
    answer_value(c, rc);
}

static inline void answer_fd(sbx_call *c, int fd, bool cloexec) {
  c->kind = ANSWER_FD;
  c->fd = fd;
  c->fd_flags = cloexec ? O_CLOEXEC : 0;
  c->ev.error = 0;
}

static inline void answer_drop(sbx_call *c) {
  if (c->kind == ANSWER_FD && c->fd >= 0)
    close(c->fd);
  c->fd = -1;
  c->kind = ANSWER_DROP;
}

static inline bool gone(sbx_call *c) {
  return sbx_target_valid(&c->t) < 0;
}

/* The last check before acting for the target: true (and nothing will
 * be answered) when it is gone. */
static inline bool drop_if_gone(sbx_call *c) {
  if (!gone(c))
    return false;
  answer_drop(c);
  return true;
}

/* Copies size bytes of the target's memory at addr into buf (none for
 * size 0); false when it answered: dropped when the target is gone, else
 * with the errno (EFAULT for an address it cannot read). */
static inline bool read_argument(sbx_call *c, uint64_t addr, void *buf,
                                 size_t size) {
  int rc = size ? sbx_target_read(&c->t, addr, buf, size) : 0;
  if (rc == -ENOENT)
    answer_drop(c);
  else if (rc < 0)
    answer_failed(c, -rc);
  return rc >= 0;
}

/* The option that would have allowed the call; with `parent`, for the
 * directory of `path` (a creation). Names a link's target (hints.c). */
void sbx_call_set_hint(sbx_call *c, sbx_unotify_hint hint, const char *path,
                       bool parent);

static inline void deny(sbx_call *c, int err, const char *reason,
                        sbx_unotify_hint hint, const char *hint_path,
                        bool parent) {
  c->ev.allowed = false;
  c->ev.reason = reason;
  sbx_call_set_hint(c, hint, hint_path, parent);
  answer_error(c, err);
}

/* The errno of a refusal the resolver decided (rc) on the name where an
 * object the program already holds lives (its descriptor's file), looked
 * at or read: the program knows the object exists, so a name outside
 * every grant answers the allowlist's denied errno there, not the errno
 * of a missing name that a path the program gave gets
 * (sbx_resolver_set_unlisted_errno; changes keep the denied errno
 * anyway). */
static inline int held_object_errno(const sbx_call *c, int rc) {
  const sbx_resolver *r = c->cfg->resolver;
  if (rc == -sbx_resolver_unlisted_errno(r))
    return sbx_allowlist_denied_errno(sbx_resolver_allowlist(r));
  return -rc;
}

bool sbx_call_hidden_by_private_dir(const sbx_call *c, const char *path);

/* A mode with the setuid or setgid bit (chmod, or open with O_CREAT or
 * O_TMPFILE) is refused with EPERM, as the default mode's baseline
 * refuses it: a file the program made must not run with its owner's
 * identity outside the sandbox, and the program learns the bit was not
 * set. True when it answered. */
static inline bool refuse_set_id_mode(sbx_call *c, mode_t mode) {
  if (!(mode & (S_ISUID | S_ISGID)))
    return false;
  deny(c, EPERM, "setuid and setgid bits are never set", SBX_UNOTIFY_HINT_NEVER,
       NULL, false);
  return true;
}

/* The same for chmod of an existing object (our descriptor fd): the
 * setgid bit alone is set on a directory, where it only gives new files
 * the directory's group (the kernel clears it, as for the program, where
 * the supervisor acting as the program is not in that group). */
static inline bool refuse_set_id_change(sbx_call *c, int fd, mode_t mode) {
  struct stat st;
  if (!(mode & (S_ISUID | S_ISGID)))
    return false;
  if ((mode & (S_ISUID | S_ISGID)) == S_ISGID && fstat(fd, &st) == 0 &&
      S_ISDIR(st.st_mode))
    return false;
  deny(c, EPERM,
       "setuid and setgid bits are never set (but setgid on a directory)",
       SBX_UNOTIFY_HINT_NEVER, NULL, false);
  return true;
}

/* Records a resolver decision and answers with its result. A name the
 * sandbox's private directory lacks where the host has one is missing
 * for the program, and named with the grant that shows the host's. */
static inline void decided(sbx_call *c, int64_t rc, const sbx_decision *d,
                           sbx_unotify_hint hint, const char *hint_path,
                           bool parent) {
  if (!d->granted) {
    deny(c, rc < 0 ? (int)-rc : EACCES, d->reason, hint, hint_path, parent);
    return;
  }
  if (rc == -ENOENT && hint_path &&
      sbx_call_hidden_by_private_dir(c, hint_path)) {
    deny(c, ENOENT, "is the host's; the sandbox has its own directory there",
         hint, hint_path, parent);
    /* Removing it is no use the program had for the host's file (a
     * program clearing stale files of its own, valgrind's vgdb FIFOs, by
     * names that repeat in every sandbox): missing, as for the kernel,
     * and no news in a failed run's summary. */
    if (c->ev.op == SBX_FS_OP_UNLINK || c->ev.op == SBX_FS_OP_RMDIR)
      c->ev.missing = true;
    return;
  }
  c->ev.allowed = true;
  answer_result(c, rc);
}

/* ---- paths and objects (objects.c) ------------------------------------- */

/* The decoder's reader for the target's memory: sbx_target_read_string()
 * and sbx_target_read(), with a vanished target as SBX_FS_GONE. Used by
 * the supervisor and by the observer. */
sbx_fs_reader sbx_target_fs_reader(sbx_unotify_target *t);

/* The absolute path the target's raw path (len bytes, relative to its
 * dirfd) names, as sbx_target_absolute_path() makes it, except that a
 * `..` after a symbolic link leads where the kernel's walk leads: to the
 * parent of the link's target, not back to the link's directory (each
 * name before a `..` is looked at through the resolver, so a name the
 * program may not see stays as written; a missing name or a file before
 * a `..` answers ENOENT or ENOTDIR, as the kernel does). Paths without
 * `..` join at once. 0, SBX_TARGET_GONE or -errno. */
int sbx_call_absolute_path(sbx_call *c, int dirfd, const char *raw, size_t len,
                           char *out);

/* The pid /proc/self means, looked up only for paths below /proc. */
pid_t sbx_call_self_pid(sbx_call *c, const char *path);

/* The links into the program's own /proc entries that the resolver, which
 * decides on names, cannot follow for it: /proc/thread-self (the calling
 * thread, which only the supervisor knows) and /dev/fd (the tree's link
 * to /proc/self/fd, whose own name no grant holds). path (PATH_MAX bytes)
 * becomes what the link leads to, /proc/self/task/TID[/...] (TID as the
 * procfs the resolver reaches numbers the thread) or /proc/self/fd[/...],
 * which the resolver serves as the process's own. When c->path was the
 * link itself, c->link_name and c->link_text keep the link's name (for
 * lstat) and text (for readlink).
 * 0, or -ENAMETOOLONG. */
int sbx_call_own_links(sbx_call *c, char *path);

/* A descriptor number written in decimal, as in /proc/self/fd/N. */
bool sbx_call_parse_fd_number(const char *s, int *fd);

/* The target's own descriptor a path names, or -1: /proc/self/fd/N,
 * /proc/thread-self/fd/N (or /proc/self/task/TID/fd/N), /dev/fd/N,
 * /dev/stdin, /dev/stdout, /dev/stderr.
 * (The kernel reaches the same object through a magic link, which the
 * resolver never follows.) */
int sbx_call_own_fd_path(const char *path);

/* Where the object behind our own descriptor fd lives now, as the kernel
 * names it; false for pipes, sockets, anonymous and deleted files. */
bool sbx_call_object_location(int fd, char *out, size_t size);

static inline bool same_object(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The access mode (O_RDONLY/O_WRONLY/O_RDWR) of the target's fd, from
 * /proc/TID/fdinfo/N, SBX_FD_NO_ACCESS for an O_PATH descriptor; -errno
 * if it cannot be read. */
#define SBX_FD_NO_ACCESS O_ACCMODE
int sbx_call_target_fd_access(sbx_call *c, int fd);

/* Whether a descriptor with access `have` (sbx_call_target_fd_access)
 * already gives access `want` (O_RDONLY, O_WRONLY or O_RDWR). */
static inline bool sbx_call_fd_gives(int have, int want) {
  return have >= 0 && have != SBX_FD_NO_ACCESS &&
         (want == have || have == O_RDWR);
}

/* An O_PATH descriptor of ours for the object behind the target's fd
 * (through /proc/TID/fd/N). Returns it, PATH_GONE, or -errno. */
int sbx_call_grab_object(sbx_call *c, int fd);

/* Opens, for an operation that needs `need` on an existing object, a
 * descriptor of ours: through the resolver when `path` is a path, or the
 * object behind the target's own fd. The object's current location must
 * carry `need`. With `metadata` (an operation on the object's attributes,
 * not its contents) a path's object of any type is reached, as an O_PATH
 * descriptor: a socket file or a FIFO has attributes but does not open
 * for reading. Returns the fd, PATH_GONE, or -errno with the denial
 * recorded. */
int sbx_call_open_object(sbx_call *c, const char *path, bool follow,
                         unsigned need, bool metadata, sbx_unotify_hint hint);

/* The open file description behind the target's descriptor fd, as a
 * descriptor of ours (pidfd_getfd(2): the same description, with its
 * access mode and flags), taken from the calling thread's descriptor
 * table. Returns it, PATH_GONE when the target went away (the
 * notification is to be dropped), or -errno (-EBADF: fd is not open). */
int sbx_call_grab_fd(sbx_call *c, int fd);

/* ---- handlers outside supervisor.c -------------------------------------- */

/* fs_ops.c: a call of the table of file-system calls: decoded with the
 * shared decoder (reading the target's memory), then handled by its
 * operation. */
void sbx_handle_fs_call(sbx_call *c, const sbx_fs_call *row);

/* fs_ops.c: what the operations' handlers share. The request's path
 * (path2) made absolute, against the target's dirfd or working
 * directory, and normalised into c->path (c->path2); false when the call
 * was answered (dropped when the target is gone, else the errno). */
bool sbx_fs_take_path(sbx_call *c);
bool sbx_fs_take_path2(sbx_call *c);

/* For an operation that looks at the attributes of the existing object
 * the request's path names: makes the path absolute and opens the
 * object, any file type, as an O_PATH descriptor (sbx_call_open_object's
 * `metadata`), for functions that take one (fstatfs) or its
 * /proc/self/fd/N name. `need` is SBX_PERM_READ_ONLY, or SBX_PERM_STAT
 * for what stat may show. Returns our fd, or -1 when it already
 * answered. */
int sbx_fs_metadata_object(sbx_call *c, unsigned need, sbx_unotify_hint hint);

/* True when path names an object the program may stat: a refused
 * creation of it answers EEXIST, as the kernel checks that first. */
bool sbx_fs_exists_for_program(sbx_call *c, const char *path);

/* True when path itself (not followed) is a symbolic link the program may
 * stat. */
bool sbx_fs_is_symlink_for_program(sbx_call *c, const char *path);

/* An O_PATH descriptor of the symbolic link path names itself, when a
 * write grant holds it (lutimes changes a link's own times); -1 when
 * path is no such link. */
int sbx_fs_symlink_to_change(sbx_call *c, const char *path);

/* fs_look.c: copies the extended attribute name a getxattr, setxattr or
 * removexattr request points to into name (size > XATTR_NAME_MAX) and
 * the event's detail; false when it answered (ERANGE for an empty or
 * overlong name, as the kernel). */
bool sbx_fs_xattr_name(sbx_call *c, const sbx_fs_request *q, char *name,
                       size_t size);

/* A change of one extended attribute, read from the program's memory
 * once: set to value (size bytes, flags XATTR_CREATE or XATTR_REPLACE),
 * or removed. */
typedef struct {
  const char *name;
  const void *value;
  size_t size;
  int flags;
  bool remove;
} sbx_xattr_change;

/* descriptors.c: applies x to the object behind our descriptor fd (any
 * kind, an O_PATH one too: through its /proc/self/fd name, so a symbolic
 * link's own attributes are the link's). 0 or -errno. */
int sbx_xattr_apply(int fd, const sbx_xattr_change *x);

/* Handlers of operations, by file: fs_open.c (open), fs_look.c (stat,
 * access, readlink, statfs, getxattr and listxattr), fs_links.c (symlink,
 * link); the others are fs_ops.c's own. */
void sbx_op_open(sbx_call *c, const sbx_fs_request *q);
void sbx_op_stat(sbx_call *c, const sbx_fs_request *q);
void sbx_op_access(sbx_call *c, const sbx_fs_request *q);
void sbx_op_readlink(sbx_call *c, const sbx_fs_request *q);
void sbx_op_statfs(sbx_call *c, const sbx_fs_request *q);
void sbx_op_xattr_read(sbx_call *c, const sbx_fs_request *q);
void sbx_op_symlink(sbx_call *c, const sbx_fs_request *q);
void sbx_op_link(sbx_call *c, const sbx_fs_request *q);

/* supervisor.c: true for the launcher's own first exec (once). */
bool sbx_call_first_exec(sbx_call *c);

/* supervisor.c: the pseudo-terminals the program made through a granted
 * /dev/ptmx (their numbers, /dev/pts/N). Their slaves are the program's
 * to open, as a devpts of its own would hold them; any other terminal of
 * the host's devpts needs its own grant. */
/* The private directory path lies below (sbx_unotify_config), or NULL. */
const sbx_unotify_private_dir *sbx_call_private_dir(const sbx_call *c,
                                                    const char *path);

void sbx_call_pty_made(sbx_call *c, unsigned n);
bool sbx_call_pty_ours(const sbx_call *c, unsigned n);

/* objects.c: path when it names the slave of a terminal the program made
 * (/dev/pts/N, sbx_call_pty_ours), opened with flags' access, O_NOCTTY,
 * O_NONBLOCK and O_PATH as the device node itself, no link followed,
 * and checked to be that terminal. -EACCES when path names no such
 * terminal; other -errno when opening it failed. */
int sbx_call_open_own_pty(const sbx_call *c, const char *path, int flags);

/* objects.c: the memfd of the file made for the program at path
 * (config's made files), or -1; with it, proc (size >= 64) names the
 * memfd under /proc/self/fd. */
int sbx_call_made_file(const sbx_call *c, const char *path, char *proc,
                       size_t size);

/* objects.c: is (dev, ino) the memfd of a file made for the program?
 * Such a file shows one link, as it does in the default mode's tree,
 * though a memfd has none. */
bool sbx_call_is_made_object(const sbx_call *c, dev_t dev, ino_t ino);

/* descriptors.c: calls that change a file through a descriptor. */
/* chmod of the file behind the target's fd: fchmod (by_path false), or
 * fchmodat2 with AT_EMPTY_PATH, or a path naming /proc/self/fd/N (by_path
 * true, which works on an O_PATH descriptor). */
void sbx_fd_chmod(sbx_call *c, int fd, mode_t mode, bool by_path);
/* futimens (by_path false: utimensat(fd, NULL, ...)) or utimensat(fd, "",
 * ..., AT_EMPTY_PATH) (by_path true). times NULL: now. */
void sbx_fd_utimens(sbx_call *c, int fd, const struct timespec *times,
                    bool by_path);
void sbx_fd_truncate(sbx_call *c, int fd, int64_t length);
void sbx_fd_allocate(sbx_call *c, int fd, int mode, int64_t offset,
                     int64_t len);
/* fsetxattr and fremovexattr: x applied to the file behind the target's
 * fd where its name is writable. */
void sbx_fd_xattr(sbx_call *c, int fd, const sbx_xattr_change *x);
/* The descriptor forms of calls refused everywhere (ownership, extended
 * attributes other than user.* and ACLs): the descriptor is named for the
 * message, then refused. */
void sbx_fd_refuse(sbx_call *c, int fd, int err, const char *reason);
/* An ioctl that changes inode attributes (FS_IOC_SETFLAGS, ...), named. */
void sbx_handle_inode_ioctl(sbx_call *c, const char *name);
/* The limit the kernel applies to the target's own truncate and
 * fallocate: its RLIMIT_FSIZE, for a file growing from old_size to
 * new_size. True (and answered, EFBIG) when new_size is beyond it. */
bool sbx_call_beyond_fsize(sbx_call *c, int64_t new_size, int64_t old_size);

/* identity.c: setuid, setgid, setre*id, setres*id, setfs*id and
 * setgroups, allowed (answered as the kernel would) only when they change
 * nothing. */
void sbx_handle_identity(sbx_call *c);

/* sockets.c: new sockets, and the addresses they connect and bind to. */
/* An AF_INET or AF_INET6 address's host (as text) and port; false for
 * other families and short addresses. */
bool sbx_call_inet_address(const struct sockaddr_storage *ss, int len,
                           char host[INET6_ADDRSTRLEN], uint16_t *port);

/* Whether an inet address means this host, whose only interface in a
 * network namespace of the sandbox's own is its loopback: 127.0.0.0/8,
 * ::1, their IPv4-mapped form, and the unspecified address (connect()
 * takes 0.0.0.0 and :: for this host). */
bool sbx_call_this_host(const struct sockaddr_storage *ss, int len);

void sbx_handle_socket(sbx_call *c);
void sbx_handle_socketpair(sbx_call *c);
void sbx_handle_connect(sbx_call *c);
void sbx_handle_bind(sbx_call *c);
/* An ANSWER_WAIT call whose socket became ready: sets its answer, or
 * leaves it ANSWER_WAIT if the connect is still in progress. */
void sbx_socket_finish(sbx_call *c);

/* fs_open.c: a WAIT_FIFO_READ call whose FIFO became readable (or lost
 * its writer) gets its descriptor; a WAIT_FIFO_WRITE call is opened when
 * the FIFO has a reader now, else stays ANSWER_WAIT. */
void sbx_fifo_finish(sbx_call *c);

/* supervisor.c: the FIFO writers waiting for a reader try again at once
 * (a reader was just opened for the program); a reader from outside the
 * sandbox is found by their timers. */
void sbx_call_retry_fifo_writers(sbx_call *c);

#endif /* SBX_SUPERVISOR_CALL_H_ */
