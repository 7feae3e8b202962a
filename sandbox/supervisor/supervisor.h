/* The user-notification supervisor: decides the file-system calls of an
 * unmodified program with the broker's permission engine, and performs
 * the ones it allows itself.
 *
 * Why it exists: sbx-run runs programs that were never written for a
 * broker. Their open(), stat() and friends reach the supervisor through a
 * seccomp filter returning SECCOMP_RET_USER_NOTIF; the supervisor reads the
 * arguments out of the program's memory, asks the resolver
 * (sandbox/files/resolver.h, the same engine the broker uses), and
 * answers. Which calls are file-system calls, which argument of each is
 * the path, the descriptor or the flags, and which flags each accepts is
 * the table of file-system calls (sandbox/files/fs_calls.h), read with the
 * decoder layer 1 uses too (fs_decode.h): the supervisor and the broker's
 * client are two executors of one table, and each operation has one
 * handler here, whether the call names a path or a descriptor. The path
 * the program passed lives in memory it can rewrite at any time, so:
 *   - a decision that depended on memory contents is never answered with
 *     SECCOMP_USER_NOTIF_FLAG_CONTINUE. The supervisor opens the file
 *     itself and installs the descriptor in the program
 *     (SECCOMP_IOCTL_NOTIF_ADDFD with SECCOMP_ADDFD_FLAG_SEND); stat,
 *     readlink, statfs and getxattr results are written into the program's
 *     memory; mkdir, unlink, rename, chmod, utimensat, truncate and the
 *     links a write grant allows (symlink, link) are performed by the
 *     supervisor (S30);
 *   - calls on a descriptor the program holds that change the file behind
 *     it (fchmod, futimens, ftruncate, fallocate) are decided on that
 *     object: the supervisor takes the program's open file description
 *     (pidfd_getfd), proves with the resolver that the file's place in the
 *     allowlist grants writing (the same inode), and performs the call on
 *     it; fchown, fsetxattr, fremovexattr and the inode-flag ioctls are
 *     refused, as their path forms are (S26a);
 *   - connect() and bind() are decided on the socket object and on one
 *     copy of the address, and performed by the supervisor on the
 *     program's socket: a unix socket file is reached through the
 *     resolver (connecting needs the write right on it, binding the create
 *     right where it is made), abstract unix names are refused (S32a);
 *   - every read of the program's memory is followed by
 *     SECCOMP_IOCTL_NOTIF_ID_VALID: a program that was killed, or whose
 *     call was interrupted, is not served (S31);
 *   - CONTINUE is used only where the decision rests on register arguments
 *     alone (socket() and socketpair() families and types with
 *     allow_sockets or own_network), where the kernel enforces the same rule
 * again: execve with allow_exec, whose target Landlock's EXECUTE right
 *     restricts, and for chdir(), which the supervisor cannot perform for
 *     the program: the kernel re-reads that path, which can reveal only
 *     whether a directory exists (docs/sbx-run.md, Limits).
 *
 * The supervisor never blocks on the program's behalf: a blocking
 * connect() still in progress after a short bounded wait is left waiting
 * (the program stays blocked in its call) and answered when its socket is
 * ready, while other calls are served.
 *
 * Relative paths are made absolute with the program's working directory
 * or directory descriptor as /proc/TID/cwd and /proc/TID/fd/N show them,
 * and normalised lexically; the resolver then decides on the object it
 * reaches, so a wrong guess can only refuse, never widen. /proc/self/fd/N,
 * /dev/fd/N and /dev/std{in,out,err} name the program's own descriptors:
 * reopening one is allowed when the resolver allows the file it refers to
 * (checked to be the same object), or, for pipes and devices, with no more
 * access than the descriptor already has.
 *
 * What it trusts: the resolver's allowlist and the kernel. What it
 * refuses: everything the resolver refuses, every system call that has no
 * handler here (with ENOSYS, or EPERM for privileged ones), exec unless
 * allowed, new sockets and network addresses unless allowed, unix
 * datagram sockets and abstract unix socket names always.
 *
 * Life cycle:
 *   1. u = sbx_unotify_new(listener_fd, &config, &error);  owns the fd
 *   2. loop: poll sbx_unotify_listener(u) for POLLIN, then
 *      sbx_unotify_handle_one(u); POLLHUP means no process is left.
 *      Poll sbx_unotify_waiting_fd(u) for POLLIN too, then
 *      sbx_unotify_finish_waiting(u).
 *   3. sbx_unotify_free(u)
 * Single-threaded: one call is decided at a time.
 */
#ifndef SBX_SUPERVISOR_SUPERVISOR_H_
#define SBX_SUPERVISOR_SUPERVISOR_H_

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "sandbox/files/fs_calls.h"
#include "sandbox/files/resolver.h"

/* Which option of the launcher would have allowed a denied call. */
typedef enum {
  SBX_UNOTIFY_HINT_NONE,
  SBX_UNOTIFY_HINT_READ,   /* read (or stat) access to hint_path */
  SBX_UNOTIFY_HINT_WRITE,  /* write access to hint_path (create: its dir) */
  SBX_UNOTIFY_HINT_EXEC,   /* executing other programs */
  SBX_UNOTIFY_HINT_NET,    /* sockets */
  SBX_UNOTIFY_HINT_PTRACE, /* tracing the sandbox's own processes */
  SBX_UNOTIFY_HINT_NEVER,  /* no option allows it; the reason says why */
} sbx_unotify_hint;

/* One decision, reported to the launcher (for its audit log and its
 * `sbx: denied` lines). Every pointer is valid during the callback only.
 * A file operation is named and its flags are spelled as the table of
 * file-system calls does (sbx_fs_op_name, sbx_fs_format_flags), which is
 * how the broker's audit lines name and spell them too. */
typedef struct {
  pid_t pid;             /* the calling thread, as the supervisor sees it */
  int nr;                /* system call number */
  const char *syscall;   /* its name ("syscall-N" when unknown) */
  const char *operation; /* "open", "stat", "mkdir", ... (sbx_fs_op_name);
                          * "socket", "connect", "bind", "syscall", ... */
  sbx_fs_op op;          /* the file operation, SBX_FS_OP_NONE for others */
  const char *path;      /* absolute, normalised; NULL when not a path call */
  const char *path2;     /* the second path of rename, else NULL */
  const char *target;    /* a denied path that is a symbolic link: where
                          * it leads (for the user's eyes), else NULL */
  const char *detail;    /* non-path calls: "AF_INET", "TIOCSTI", ... */
  uint64_t flags;        /* sbx_fs_op_shown_flags(); a socket's type */
  bool allowed;          /* the rules allowed it (it may still have failed) */
  bool served;           /* false: the target was gone and got no answer */
  int error;             /* errno the call returned, 0 on success */
  const char *reason;    /* why it was denied (static), NULL if allowed */
  sbx_unotify_hint hint;
  const char *hint_path; /* for HINT_READ / HINT_WRITE */
  /* A look at a name that does not exist (with the hint taken, the
   * program would find it missing just the same), or a connect to a
   * socket file that does not exist, which no option makes answer. */
  bool missing;
} sbx_unotify_event;

typedef void (*sbx_unotify_event_fn)(const sbx_unotify_event *event,
                                     void *user_data);

/* The ports network sockets may connect or bind to, when narrow. */
typedef struct {
  bool narrow;           /* false: any port */
  const uint16_t *ports; /* borrowed */
  size_t n;
  const char *reason; /* for the denial; static or borrowed */
} sbx_unotify_ports;

/* A seccomp layer stacked on the filter that notifies, whose refusals
 * that filter sends here (sandbox/runner/stacked.h). */
typedef struct {
  const struct sock_filter *insns; /* the layer as compiled; borrowed */
  size_t len;
  const char *reason; /* for the denial: "not allowed by FILE"; borrowed */
} sbx_unotify_layer;

/* A file the launcher made for the program, at a path no grant shows. */
typedef struct {
  const char *path; /* absolute, canonical (borrowed) */
  int fd;           /* a sealed, read-only memfd holding it (borrowed) */
} sbx_unotify_made_file;

/* A directory of the sandbox's own that the supervisor's tree does not
 * show (sbx-run's private /tmp and /dev/shm, tree.h). */
typedef struct {
  const char *path; /* absolute, canonical, as the program names it */
  int fd;           /* O_PATH, of the directory itself (borrowed) */
} sbx_unotify_private_dir;

typedef struct {
  const sbx_resolver *resolver; /* borrowed; must outlive the supervisor */
  /* CONTINUE every execve/execveat: only sound when Landlock restricts
   * EXECUTE to the same allowlist in the kernel. */
  bool allow_exec;
  /* CONTINUE the first execve the filter reports: the launcher's own,
   * made before any code of the program runs. */
  bool allow_first_exec;
  /* The network (sbx-run --net): socket() of any family but unix
   * datagram, and connect() and bind() of sockets that are not unix
   * sockets. Unix socket files are decided by the allowlist either way. */
  bool allow_sockets;
  /* Without allow_sockets, the program has a network namespace of its own
   * whose loopback is up: socket() of any family but unix datagram, bind()
   * of any socket that is not a unix socket, and connect() of one to a
   * loopback address (or of a family with no address on the host's
   * network, such as netlink), as in the default mode. An inet connect
   * elsewhere is refused with the --net hint, and one that nothing in the
   * sandbox answers (ECONNREFUSED) is reported with it too. */
  bool own_network;
  /* Under allow_sockets, an AF_INET or AF_INET6 address connected or
   * bound to must have one of these ports (a profile's [network]). */
  sbx_unotify_ports connect_ports;
  sbx_unotify_ports bind_ports;
  /* For hints only: the directories allow_exec would make readable
   * ("/usr/bin/", ...; NULL-terminated, borrowed), so a program looked
   * up there is hinted with --allow-exec. May be NULL. */
  const char *const *exec_dirs;
  /* /dev/tty names the program's controlling terminal, never the
   * supervisor's: with tty_relayed, the pseudo-terminal whose master is
   * tty_master (borrowed), whose slave an open of /dev/tty is answered
   * with, and whose name, /dev/pts/N, is the program's like the names of
   * the terminals it makes; without, there is none (ENXIO, as the kernel
   * says). */
  bool tty_relayed;
  int tty_master;
  /* Files made for the program (sbx-run's /etc/passwd and /etc/group):
   * an open of one for reading is answered with a new read-only
   * descriptor of the memfd, a stat, access or getxattr from it; writing
   * is refused as the default mode's read-only root and Landlock refuse
   * it (EACCES for an open, EROFS otherwise). Borrowed; may be NULL. */
  const sbx_unotify_made_file *made;
  size_t n_made;
  /* The sandbox's own directories, which the resolver resolves beneath
   * these descriptors (its caller built it so, resolver.h): a name below
   * one that only the host has is missing for the program (ENOENT) and
   * named with the grant that shows the host's. Borrowed; may be NULL. */
  const sbx_unotify_private_dir *private_dirs;
  size_t n_private_dirs;
  /* The resolver's /proc is the procfs of the program's pid namespace:
   * /proc/self is the program's pid there, and every process in it is
   * the sandbox's. */
  bool sandbox_proc;
  /* With private_ns, the sandbox's user and mount namespaces (borrowed
   * descriptors of /proc/PID/ns/user and ns/mnt), where the private
   * directories are what the program sees: a socket the program binds
   * below one is bound in them, so that the socket file is there. */
  bool private_ns;
  int private_userns;
  int private_mntns;
  sbx_unotify_event_fn on_event; /* every decision; may be NULL */
  void *user_data;
  /* Stacked layers (borrowed). A call one of them refuses (its program
   * returns SECCOMP_RET_ERRNO on the call's registers) is answered with
   * that errno and reported with the layer's reason, when the caller
   * runs under min_filters seccomp filters or more (/proc/PID/status),
   * i.e. under the stacked ones. A caller under fewer (init, the
   * program's side before its exec) gets what the notifying filter
   * alone says, base[0..base_len): ALLOW and LOG continue the call,
   * ERRNO is answered silently, USER_NOTIF is served as usual. */
  const sbx_unotify_layer *layers;
  size_t n_layers;
  const struct sock_filter *base;
  size_t base_len;
  unsigned min_filters;
} sbx_unotify_config;

typedef struct sbx_unotify sbx_unotify;

/* Takes ownership of listener (closed by sbx_unotify_free, also on
 * failure). Fails if the kernel lacks user notification. */
sbx_unotify *sbx_unotify_new(int listener, const sbx_unotify_config *config,
                             GError **error);
void sbx_unotify_free(sbx_unotify *u);

int sbx_unotify_listener(const sbx_unotify *u);

/* Receives one notification (blocks unless none can come). Returns 1 when
 * one is ready to answer, 0 when its target went away before it could be
 * received, -errno on failure (-ENOENT never). */
int sbx_unotify_receive(sbx_unotify *u);

/* The notification sbx_unotify_receive() returned, until the next one. */
const struct seccomp_notif *sbx_unotify_pending(const sbx_unotify *u);

/* Decides and answers the received notification. Returns 0 when it was
 * answered (or left waiting: see sbx_unotify_waiting_fd), -ENOENT when its
 * target was gone and nothing was done for it (no file opened or changed on its
 * behalf after that was known), other -errno when the supervisor itself failed.
 */
int sbx_unotify_answer(sbx_unotify *u);

/* sbx_unotify_receive() then sbx_unotify_answer(). 0 or -errno; a target
 * that vanished is not an error. */
int sbx_unotify_handle_one(sbx_unotify *u);

/* Readable when a call left waiting (a blocking connect() in progress)
 * can be finished. Owned by the supervisor. */
int sbx_unotify_waiting_fd(const sbx_unotify *u);

/* Answers the waiting calls that can be answered now (never blocks).
 * 0 or -errno when the supervisor itself failed. */
int sbx_unotify_finish_waiting(sbx_unotify *u);

/* Counters, for tests and the status line. */
typedef struct {
  uint64_t received;
  uint64_t answered;
  uint64_t dropped; /* targets gone before the answer */
  uint64_t denied;
} sbx_unotify_stats;
void sbx_unotify_get_stats(const sbx_unotify *u, sbx_unotify_stats *out);

#endif /* SBX_SUPERVISOR_SUPERVISOR_H_ */
