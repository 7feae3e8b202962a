/* sbx: sandboxed worker processes for Linux, in the style of Chromium's.
 *
 * A host process links libsbx and runs its untrusted work (parsing,
 * decoding, rendering) in worker processes. Each worker is forked by a
 * zygote and starts under every layer its process type's profile names:
 * new user/pid/net/ipc namespaces, no capabilities, no_new_privs, seccomp
 * filters (its file-system calls trap to a broker, everything else is an
 * allowlist with argument checks), and Landlock. A worker opens files only
 * through the broker, which checks each request against the allowlist on
 * the object it actually opened.
 *
 * Life cycle of a host (the numbers are the order of the calls):
 *   0. sbx_main_hook(argc, argv) - the first thing main() does. In an
 *      ordinary run it returns at once; in the host's executable started
 *      again as a zygote it never returns (see "Fresh and fork mode").
 *   1. Register the worker entry points: one sbx_process_type per kind of
 *      worker, naming its entry function and its profile (a built-in one,
 *      "baseline", "renderer", "utility", or a .profile file).
 *   2. sbx_sandbox_start() - while the host is still single-threaded (the
 *      zygote is cloned from the host, and a clone copies only the calling
 *      thread): loads every profile, compiles every policy, starts the
 *      broker and the zygote. Nothing untrusted has run yet.
 *   3. sbx_sandbox_spawn() - one worker per call; returns its pid as the
 *      host sees it. Any number, any types, any time, from any thread.
 *   4. sbx_sandbox_wait() - how each worker ended: its exit code, a
 *      signal, the system call and arguments a policy killed it for, the
 *      sandbox layer that could not be installed, or that the zygote died.
 *   5. sbx_sandbox_stop() - stops the zygote (every remaining worker dies
 *      with it) and the broker.
 *
 * Fresh and fork mode: where the zygote, and so every worker, comes from.
 *   fresh  (the default once sbx_main_hook has run in this process) - the
 *          zygote is a new exec of the host's own executable (the file
 *          the host was started from, even if it was replaced on disk
 *          since), with an environment of its own: only the variables
 *          sbx_sandbox_config.env names, plus those that tune the runtime
 *          (ASAN_OPTIONS, UBSAN_OPTIONS, LSAN_OPTIONS, G_SLICE, G_DEBUG)
 *          and the dynamic loader's (LD_LIBRARY_PATH, LD_PRELOAD), which
 *          the zygote needs to load the same program. Its main calls the
 *          hook, which makes it the zygote. Workers hold nothing of the
 *          host's memory (no global the host set, no stdio buffer, no
 *          atexit handler of the host's: exit() in a worker runs only what
 *          the program's own start registered), and their address-space
 *          layout is the kernel's new pick, not the host's. Entry functions
 *          must lie in the executable or in libsbx, and user_data must be
 *          NULL: the zygote finds an entry by its offset in its object, and
 *          a pointer into the host's memory means nothing there.
 *   fork   (when the hook has not run, or sbx_sandbox_config.fork_mode) -
 *          the zygote is a fork of the host at sbx_sandbox_start: workers
 *          see the host's memory and environment as they were then
 *          (globals set before the call, user_data), and share the host's
 *          layout. For hosts that cannot call the hook first thing.
 * Either way a worker's code is the host's program; only what it starts
 * from differs.
 *
 * In-process use (Chromium's model for a process that sandboxes itself):
 *   1. sbx_sandbox_enter_self() - starts this process's own broker, then
 *      installs the profile's layers on the calling process (seccomp with
 *      TSYNC, so threads that already exist are covered too). There is no
 *      way back; sbx_sandbox_status tells what is in place.
 *
 * Threads: once started, a sandbox may be used from any thread of the
 * host, by several at once. sbx_sandbox_spawn, sbx_sandbox_wait and
 * sbx_sandbox_stop may run concurrently: each reply goes to the call that
 * asked for it, a wait that lasts (even without a timeout) holds up no
 * other thread's spawn, and every wait's timeout fires whatever the other
 * threads wait for. sbx_sandbox_stop makes the calls in progress on other
 * threads return (a wait reports its workers as killed with the zygote),
 * then frees the sandbox: no call may start once it has begun. Only
 * sbx_sandbox_start needs a single-threaded host.
 *
 * Bounds: no call waits for ever on a helper process that stopped
 * answering. The broker and the zygote each get SBX_REPLY_TIMEOUT_MS to
 * answer a request (sbx_sandbox_spawn asks both, one after the other);
 * then the call fails with SBX_ERROR_FAILED naming the helper and the
 * timeout. sbx_sandbox_stop returns within SBX_STOP_TIMEOUT_MS whatever
 * the workers, the zygote or the broker do. The broker never waits on its
 * audit log: a reader that is slow or paused costs log lines (counted in
 * the log), never a worker's file access, a spawn or a stop.
 *
 * Conventions: every call that can fail returns gboolean and fills a
 * GError (domain SBX_ERROR) whose message names the file, line, path or
 * system call involved. Each struct pointer argument is borrowed for the
 * duration of the call unless its comment says otherwise; strings are
 * copied. Results the caller must free say so. A NULL where a call needs
 * a pointer fails with SBX_ERROR_INVALID (or the -1, 0 or NULL the call
 * documents); it never crashes.
 *
 * Structs that grow: every struct below begins with `size_t size`, which
 * its init macro sets to sizeof the struct as the caller was compiled;
 * the other fields are named in the macro's arguments:
 *
 *   sbx_spawn_config spawn = SBX_SPAWN_CONFIG_INIT(
 *       .process_type = "renderer", .payload = page, .payload_len = len);
 *
 * Fields are only ever added at the end, and every field's zero is its
 * default. So a program built against an older sbx.h keeps working with a
 * newer libsbx.so.0: the library reads only the fields the caller's size
 * covers and defaults the rest; it fills a struct the caller owns
 * (sbx_sandbox_status, sbx_worker_exit) only up to the caller's size, and
 * sets size to the number of bytes it filled. A struct the library hands
 * out (sbx_worker_args, the status it points to) carries the library's
 * size; SBX_HAS_FIELD tells whether a field is there. A program built
 * against a newer sbx.h runs on an older library as long as the fields
 * that library does not know are zero; otherwise the call fails with
 * SBX_ERROR_UNSUPPORTED. A size of 0 (a struct not made with its init
 * macro), one smaller than the struct's first published version, or over
 * SBX_STRUCT_SIZE_MAX fails with SBX_ERROR_INVALID. In an array
 * (sbx_sandbox_config.types) every element has the size of the first.
 */
#ifndef SBX_SBX_H_
#define SBX_SBX_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What libsbx exports: exactly the functions this header declares, each
 * marked SBX_EXPORT (the library is built with -fvisibility=hidden). */
#if defined(__GNUC__)
#define SBX_EXPORT __attribute__((visibility("default")))
#else
#define SBX_EXPORT
#endif

/* Initialises a struct of the API: its size, then the fields given as
 * designated initialisers. Each struct has its own macro below. */
#define SBX_STRUCT_INIT(type, ...) \
  { .size = sizeof(type), __VA_ARGS__ }

/* Whether a struct the library filled or handed out, *ptr of type, has
 * field: a library older than the caller's sbx.h does not know it. */
#define SBX_HAS_FIELD(type, ptr, field) \
  ((ptr)->size >= offsetof(type, field) + sizeof(((type *)0)->field))

/* No struct of the API is larger; a size above it is not one an init
 * macro set. */
#define SBX_STRUCT_SIZE_MAX 4096

#define SBX_NAME_MAX 32 /* process type and layer names, NUL included */
#define SBX_POOL_MAX 64 /* sbx_process_type.pool */
#define SBX_STATUS_MAX_LAYERS 8

/* How long the host waits for the broker or the zygote to answer one
 * request (a new worker's broker channel, a spawn, a status query). */
#define SBX_REPLY_TIMEOUT_MS 5000
/* The most sbx_sandbox_stop takes: the zygote is killed at once and given
 * 2 s to be reaped; the broker gets 2 s to leave once its control channel
 * closes, then is killed and given 2 s more. A process the kernel keeps
 * in an uninterruptible wait past that is left unreaped, not waited for. */
#define SBX_STOP_TIMEOUT_MS 6000

#define SBX_ERROR (sbx_error_quark())
SBX_EXPORT GQuark sbx_error_quark(void);

typedef enum {
  SBX_ERROR_INVALID,     /* the configuration or a profile is wrong */
  SBX_ERROR_UNSUPPORTED, /* the kernel lacks a layer the profile requires */
  SBX_ERROR_FAILED,      /* a system call failed; the message names it */
  SBX_ERROR_TIMED_OUT,   /* sbx_sandbox_wait: no worker ended in time */
  SBX_ERROR_ZYGOTE_DIED, /* the zygote is gone; no worker is left */
} sbx_error_code;

/* ---- What is active in a sandboxed process ---------------------------- */

typedef enum {
  SBX_LAYER_UNKNOWN = -1, /* the kernel could not be asked */
  SBX_LAYER_OFF = 0,
  SBX_LAYER_ON = 1,
} sbx_layer_state;

/* A sandbox status report, as the kernel tells it (like Chromium's
 * chrome://sandbox). Plain data; the caller's own is made with
 * SBX_SANDBOX_STATUS_INIT(). */
typedef struct {
  size_t size;
  char process_type[SBX_NAME_MAX];
  pid_t pid; /* inside its pid namespace */
  uid_t uid;
  gid_t gid;
  sbx_layer_state user_ns, pid_ns, net_ns, ipc_ns, uts_ns, mount_ns, cgroup_ns;
  sbx_layer_state empty_root;      /* "/" is an empty tmpfs, not the host's */
  sbx_layer_state no_capabilities; /* every capability set empty */
  sbx_layer_state no_new_privs;
  sbx_layer_state undumpable;
  sbx_layer_state new_session;
  sbx_layer_state seccomp;   /* filter mode */
  int seccomp_filters;       /* stacked filters the kernel counts; -1 unknown */
  unsigned n_seccomp_layers; /* the filters sbx installed, in order */
  char seccomp_layers[SBX_STATUS_MAX_LAYERS][SBX_NAME_MAX];
  sbx_layer_state broker; /* file-system calls go to the broker */
  sbx_layer_state landlock;
  int landlock_abi;     /* -1 unknown / absent */
  int open_fds;         /* -1 unknown */
  bool fully_sandboxed; /* every layer above that a worker needs is ON */
} sbx_sandbox_status;

#define SBX_SANDBOX_STATUS_INIT(...) \
  SBX_STRUCT_INIT(sbx_sandbox_status, __VA_ARGS__)

/* Writes one "layer: state" line per layer into buf (NUL-terminated when
 * len > 0; buf may be NULL when len is 0). Returns the length the whole
 * report needs, like snprintf; 0, with an empty buf, for a NULL status or
 * one whose size is not valid. Async-signal-safe: a worker may call it on
 * itself at any time. */
SBX_EXPORT size_t sbx_sandbox_status_format(const sbx_sandbox_status *status,
                                            char *buf, size_t len);

/* ---- Message channels ------------------------------------------------- */

/* A channel between a host and one worker (sbx_spawn_config.channel): a
 * stream of framed messages, each of any length and with up to
 * SBX_CHANNEL_MAX_FDS descriptors attached, in both directions. A message
 * travels in packets of at most SBX_CHANNEL_PACKET bytes, so a receiver
 * that reads it piece by piece (sbx_channel_recv_begin, sbx_channel_read)
 * never holds more than one packet of it; the sender may write it piece by
 * piece too (sbx_channel_send_begin, sbx_channel_write).
 *
 * The host never trusts what a worker sends: a malformed message (wrong
 * header, lengths that do not add up, more descriptors than announced or
 * than the receiver takes) fails with SBX_ERROR_INVALID, every descriptor
 * it carried is closed, and the channel is broken: every later call fails
 * with SBX_ERROR_FAILED. The other side closing its end (it exited, or
 * died) fails with SBX_ERROR_FAILED saying so; nothing waits for ever.
 *
 * Timeouts: -1 waits as long as it takes, 0 does not wait (a non-blocking
 * call), N waits at most N milliseconds in all; nothing within it fails
 * with SBX_ERROR_TIMED_OUT and changes nothing, except that a send that
 * times out after its first packet breaks the channel (part of a message
 * left). One thread at a time per channel. */
typedef struct sbx_channel sbx_channel;

#define SBX_CHANNEL_MAX_FDS 16
#define SBX_CHANNEL_PACKET 65536 /* bytes per packet, header included */

/* Sends len bytes of data (may be NULL when len is 0) and n_fds
 * descriptors (duplicated by the kernel; the caller keeps its own). */
SBX_EXPORT gboolean sbx_channel_send(sbx_channel *channel, const void *data,
                                     size_t len, const int *fds, size_t n_fds,
                                     int timeout_ms, GError **error);

/* Starts a message of len bytes carrying fds; then sbx_channel_write
 * exactly len bytes, in pieces of any size. */
SBX_EXPORT gboolean sbx_channel_send_begin(sbx_channel *channel, uint64_t len,
                                           const int *fds, size_t n_fds,
                                           int timeout_ms, GError **error);
SBX_EXPORT gboolean sbx_channel_write(sbx_channel *channel, const void *data,
                                      size_t len, int timeout_ms,
                                      GError **error);

/* The next whole message, if it is at most max_len bytes (a longer one
 * fails with SBX_ERROR_INVALID, its descriptors closed, and is skipped).
 * Its descriptors go to fds (at most max_fds; the caller owns them,
 * close-on-exec), their number to *n_fds (fds and n_fds may be NULL when
 * max_fds is 0). Free the bytes with g_bytes_unref. */
SBX_EXPORT GBytes *sbx_channel_recv(sbx_channel *channel, size_t max_len,
                                    int timeout_ms, int *fds, size_t max_fds,
                                    size_t *n_fds, GError **error);

/* The next message piece by piece: *len (required) receives its length
 * and fds its descriptors as above; then sbx_channel_read returns its
 * bytes in order, *got 0 at its end. What an earlier message left unread
 * is skipped. */
SBX_EXPORT gboolean sbx_channel_recv_begin(sbx_channel *channel, int timeout_ms,
                                           uint64_t *len, int *fds,
                                           size_t max_fds, size_t *n_fds,
                                           GError **error);
SBX_EXPORT gboolean sbx_channel_read(sbx_channel *channel, void *buf,
                                     size_t cap, int timeout_ms, size_t *got,
                                     GError **error);

/* For poll(2) (POLLIN: a packet is waiting; POLLHUP: the other side is
 * gone), -1 for NULL. Owned by the channel. */
SBX_EXPORT int sbx_channel_fd(const sbx_channel *channel);

/* A GSource for a GMainContext, dispatched when the channel is readable or
 * the other side is gone: set a GUnixFDSourceFunc callback with
 * g_source_set_callback, then g_source_attach. NULL for NULL. */
SBX_EXPORT GSource *sbx_channel_source_new(sbx_channel *channel);

/* Closes the channel and frees it; NULL is ignored. The host closes the
 * channels it was given; a worker's is closed when it exits. */
SBX_EXPORT void sbx_channel_close(sbx_channel *channel);

/* ---- The worker side -------------------------------------------------- */

/* What a worker's entry function receives. Everything is owned by sbx and
 * stays valid until the worker exits; size is the library's (check a
 * field newer than the oldest libsbx the program supports with
 * SBX_HAS_FIELD). */
typedef struct {
  size_t size;
  const char *process_type;
  const void *payload; /* the bytes passed to sbx_sandbox_spawn */
  size_t payload_len;
  int n_fds;       /* the host's descriptors are 0 .. n_fds-1 (at least 3:
                      stdio the host did not pass is /dev/null) */
  int broker_fd;   /* the broker channel, or -1; do not close */
  int report_fd;   /* the end-of-life report pipe; do not close */
  void *user_data; /* sbx_process_type.user_data */
  /* What the kernel reports is active; NULL unless the profile asks for
   * it ([worker] status = true), since collecting it costs a few dozen
   * microseconds per spawn. */
  const sbx_sandbox_status *status;
  /* The worker's channel to its host when the spawn asked for one
   * (sbx_spawn_config.channel), else NULL. Owned by sbx. */
  sbx_channel *channel;
} sbx_worker_args;

/* A worker's main function. Its return value is the worker's exit code.
 * In fresh mode the worker is forked from a zygote that is a new exec of
 * the host's program: its globals are as the program's start left them
 * (nothing the host set later), and it must lie in the executable or in
 * libsbx. In fork mode the worker is a fork of the host as it was at
 * sbx_sandbox_start(), so globals set before that call are visible.
 * Memory-leak checkers cannot run inside a seccomp sandbox; workers end
 * with _exit() after the entry returns. */
typedef int (*sbx_worker_entry)(const sbx_worker_args *args);

/* ---- The host side ---------------------------------------------------- */

/* Step 1: one kind of worker. */
typedef struct {
  size_t size;
  const char *name;    /* "renderer"; at most SBX_NAME_MAX - 1 bytes */
  const char *profile; /* built-in name or a .profile path; NULL: name */
  /* In fresh mode: a function of the executable or of libsbx (one in
   * another shared object fails the start with SBX_ERROR_INVALID). */
  sbx_worker_entry entry;
  /* Fork mode only (fresh mode refuses anything but NULL: the worker's
   * memory is not the host's; pass data in the spawn's payload). Borrowed:
   * must be valid when sbx_sandbox_start runs (workers see the host's
   * memory as it was then). */
  void *user_data;
  /* Extra broker rules for this type, in the allowlist's text form
   * ("read /usr/share/doc/", "create /tmp/home-xyz/"), NULL-terminated;
   * may be NULL. For paths only known at run time, such as a home
   * directory. Copied. */
  const char *const *extra_rules;
  /* Warm pool: how many workers of this type the zygote keeps forked
   * ahead, each with every layer of the type already installed and
   * waiting for one spawn's job (payload, descriptors, channels), so a
   * spawn costs a hand-over instead of a fork. 0: the profile's [worker]
   * pool (none unless it sets one). At most SBX_POOL_MAX. A pooled worker
   * is as sandboxed as any other (the same status report), runs one job
   * and exits, and its type's seccomp layers must allow recvmsg, fcntl
   * F_SETFD, dup3 and close (the built-in policies do; start fails naming
   * the layer otherwise). docs/api.md, "Warm pool". */
  unsigned pool;
} sbx_process_type;

#define SBX_PROCESS_TYPE_INIT(...) \
  SBX_STRUCT_INIT(sbx_process_type, __VA_ARGS__)

typedef struct {
  size_t size;
  /* Borrowed; copied. Every element made with SBX_PROCESS_TYPE_INIT. */
  const sbx_process_type *types;
  size_t n_types;
  /* Where .profile and .policy files named by relative path are found;
   * NULL: the current directory. Built-in names never touch the disk. */
  const char *profile_dir;
  /* Broker denials are appended here, one line each; NULL: stderr. The
   * broker writes without waiting: when the log does not take a line at
   * once (a paused terminal, a pipe nobody reads) the line is dropped and
   * a later `sbx: dropped lines=N` line counts it. Each worker may log
   * 100 denials at once and 10 a second after that; a line
   * `sbx: suppressed denials=N ...` counts the rest. Lines are at most
   * 1024 bytes; docs/broker.md has the format. */
  const char *audit_log;
  /* Also log the calls a type's seccomp layer refuses with an errno: one
   * `sbx: denied op=syscall call="fsync(0x3, ...)"` line per worker and
   * distinct call and errno, under the same budget. The worker sees the
   * same errno as without it, but each such call costs a round trip to
   * the broker. Audits the profile's last seccomp layer; a call an earlier
   * layer refuses is refused without a line. The environment variable
   * SBX_AUDIT_SYSCALLS=1 turns it on for a host that leaves it false. */
  bool audit_syscalls;
  /* Learning mode, for finding what each type needs (trusted input only:
   * it lets workers do what they ask). A worker's last seccomp layer lets
   * every call it would refuse through, and the broker grants file
   * requests outside the type's rules; sbx_sandbox_stop then writes, for
   * each type refused anything, TYPE.learned.profile and
   * TYPE.learned.policy into this directory (made if missing), which allow
   * it, and says so on stderr. Rerun with .profile =
   * "DIR/TYPE.learned.profile". NULL: $SBX_LEARN_DIR when set, else off.
   * docs/api.md, "Learning what a type needs". */
  const char *learn_dir;
  /* Fresh mode: the names of the host's environment variables the zygote
   * and its workers receive, NULL-terminated; a name ending in '*' is a
   * prefix ("LC_*"). NULL (the default): none, only those that tune the
   * runtime and the loader (see "Fresh and fork mode" above). Fork mode
   * ignores it: workers see the host's environment as it was at start. */
  const char *const *env;
  /* Start the zygote as a fork of the host even though sbx_main_hook ran
   * (without the hook the zygote is a fork anyway). */
  bool fork_mode;
} sbx_sandbox_config;

#define SBX_SANDBOX_CONFIG_INIT(...) \
  SBX_STRUCT_INIT(sbx_sandbox_config, __VA_ARGS__)

typedef struct sbx_sandbox sbx_sandbox;

/* Step 0: call it first thing in main(), with main's arguments, before
 * anything that starts threads or reads input. In an ordinary run it
 * records that the program can be started again as a zygote (so
 * sbx_sandbox_start uses fresh mode) and returns at once; it makes no
 * system call. When libsbx started this executable as a zygote (argv[1]
 * is its marker, "--sbx-zygote"), it never returns: it reads the start
 * data the host left, serves the host's spawns, and the workers run
 * their entry functions. A program started with the marker by hand finds
 * no start data and exits with status 1 and a message on stderr. */
SBX_EXPORT void sbx_main_hook(int argc, char **argv);

/* Step 2. On success *out (required) is a new sandbox the caller owns
 * (free it with sbx_sandbox_stop). Fails if the host already runs more than one
 * thread, or if any type's profile, policy or rule does not load (the message
 * names the file and line); in fresh mode also for an entry outside the
 * executable and libsbx, a non-NULL user_data, or a zygote that cannot be
 * exec'd (the message names the step; fork_mode avoids the exec); nothing
 * is left running after a failure.
 * Every type gets a broker channel per worker (a profile without rules
 * gets EACCES for every file request). All types share one zygote: it
 * enters the union of the profiles' namespaces, and an empty root if any
 * profile asks for one. */
SBX_EXPORT gboolean sbx_sandbox_start(const sbx_sandbox_config *config,
                                      sbx_sandbox **out, GError **error);

/* Step 3: one worker. */
typedef struct {
  size_t size;
  const char *process_type; /* one of the registered names */
  const void *payload;      /* copied; at most 64 KiB; may be NULL */
  size_t payload_len;
  /* Descriptors the worker receives as 0 .. n_fds-1 (duplicated; the
   * caller keeps its own). At most 16. NULL/0: stdio is /dev/null. */
  const int *fds;
  size_t n_fds;
  /* When not NULL, *channel receives the host's end of a message channel
   * to the new worker (the worker finds its own in
   * sbx_worker_args.channel); close it with sbx_channel_close. */
  sbx_channel **channel;
  /* Broker rules for this worker alone, in the text form of
   * sbx_process_type.extra_rules ("create /srv/out/job42/"),
   * NULL-terminated; may be NULL. Copied. The worker's allowlist is its
   * type's followed by these, on its own broker channel, until it exits.
   * Each must lie under a `grantable` rule of the type (a profile rule or
   * an extra rule, e.g. "grantable,create /srv/out/") that has all of its
   * kinds: the broker's kernel sandbox is fixed when it starts and covers
   * nothing else. A rule that does not parse or is not grantable fails the
   * spawn with SBX_ERROR_INVALID naming it, and nothing is spawned. */
  const char *const *extra_rules;
} sbx_spawn_config;

#define SBX_SPAWN_CONFIG_INIT(...) \
  SBX_STRUCT_INIT(sbx_spawn_config, __VA_ARGS__)

/* *pid (required) is the worker's pid as the host sees it. Fails with
 * SBX_ERROR_FAILED, naming the broker or the zygote, when either does not
 * answer within SBX_REPLY_TIMEOUT_MS; so it returns within twice that. */
SBX_EXPORT gboolean sbx_sandbox_spawn(sbx_sandbox *sandbox,
                                      const sbx_spawn_config *spawn, pid_t *pid,
                                      GError **error);

/* Step 4. */
typedef enum {
  SBX_EXIT_NORMAL,       /* exit_code */
  SBX_EXIT_SIGNALED,     /* signal */
  SBX_EXIT_POLICY_KILL,  /* syscall_nr, syscall_args: the refused call */
  SBX_EXIT_SETUP_FAILED, /* detail: the layer that could not be installed */
  SBX_EXIT_ZYGOTE_DIED,  /* killed with its zygote */
} sbx_exit_reason;

/* Made with SBX_WORKER_EXIT_INIT() by the caller; filled by
 * sbx_sandbox_wait. */
typedef struct {
  size_t size;
  pid_t pid; /* as the host sees it */
  sbx_exit_reason reason;
  int exit_code;  /* NORMAL */
  int signal;     /* SIGNALED, POLICY_KILL (SIGSYS), ZYGOTE_DIED (SIGKILL) */
  int syscall_nr; /* POLICY_KILL */
  uint64_t syscall_args[6];
  char detail[160]; /* one readable line, e.g. "socket(41) args 0x2, ..." */
} sbx_worker_exit;

#define SBX_WORKER_EXIT_INIT(...) SBX_STRUCT_INIT(sbx_worker_exit, __VA_ARGS__)

/* Waits up to timeout_ms (-1: forever, 0: poll) for worker pid (-1: any
 * worker; when several threads wait, each exit goes to one of them, as
 * with waitpid) to end and fills *exit (required; made with
 * SBX_WORKER_EXIT_INIT(), and filled, zeros on failure, up to its size). -1
 * waits for the worker, however long it runs; a zygote that stopped answering
 * is not detected by it (bound the wait if that matters). SBX_ERROR_TIMED_OUT
 * when none did; SBX_ERROR_ZYGOTE_DIED once the zygote is gone and every worker
 * has been reported. */
SBX_EXPORT gboolean sbx_sandbox_wait(sbx_sandbox *sandbox, pid_t pid,
                                     int timeout_ms, sbx_worker_exit *exit,
                                     GError **error);

/* For poll(2): readable when sbx_sandbox_wait may have news; -1 once the
 * zygote is gone, and for a NULL sandbox. Owned by the sandbox: do not
 * read or close it. */
SBX_EXPORT int sbx_sandbox_event_fd(const sbx_sandbox *sandbox);

/* The helper processes, as the host sees them (for monitoring); -1 for a
 * NULL sandbox. */
SBX_EXPORT pid_t sbx_sandbox_zygote_pid(const sbx_sandbox *sandbox);
SBX_EXPORT pid_t sbx_sandbox_broker_pid(const sbx_sandbox *sandbox);

/* Step 5: stops everything and frees the sandbox, within
 * SBX_STOP_TIMEOUT_MS: what does not stop in time is killed. Calls in
 * progress on other threads return first (a spawn that is waiting for the
 * broker may take up to SBX_REPLY_TIMEOUT_MS more); a call made once stop
 * has begun fails with SBX_ERROR_ZYGOTE_DIED while the sandbox still
 * exists, and must not be made after it returned. NULL is ignored. */
SBX_EXPORT void sbx_sandbox_stop(sbx_sandbox *sandbox);

/* ---- In-process ------------------------------------------------------- */

typedef struct {
  size_t size;
  const char *process_type;       /* for the status report and audit lines;
                                     NULL: "self" */
  const char *profile;            /* built-in name or .profile path */
  const char *profile_dir;        /* as in sbx_sandbox_config */
  const char *const *extra_rules; /* as in sbx_process_type */
  const char *audit_log;          /* as in sbx_sandbox_config */
  /* Stay in the process's namespaces even though the profile names some.
   * Needed once threads run: the kernel lets only a single-threaded
   * process enter a new user namespace. Seccomp, the broker and Landlock
   * still apply; the status reports the namespaces as OFF. */
  bool keep_namespaces;
} sbx_self_config;

#define SBX_SELF_CONFIG_INIT(...) SBX_STRUCT_INIT(sbx_self_config, __VA_ARGS__)

/* Sandboxes the calling process for good, in this order: starts its broker
 * (a program of its own, before any layer), enters the profile's
 * namespaces except pid (single-threaded processes only, see
 * keep_namespaces) and its empty
 * root, drops capabilities, sets no_new_privs and undumpable, applies the
 * rlimits, loads layer 1 and the profile's policies on every thread
 * (TSYNC), then Landlock on the calling thread. Threads that already run
 * are held by every seccomp layer, so their file-system calls go to the
 * broker too; Landlock and capabilities are per thread in Linux and cover
 * the calling thread and the threads it creates afterwards. The session
 * is kept. Call it from the thread that lives longest (the broker dies
 * with the thread that forked it).
 *
 * *status (may be NULL; else made with SBX_SANDBOX_STATUS_INIT()) receives
 * what is in place afterwards, up to its size. A failure
 * before the first seccomp layer stops the broker again and leaves the
 * process's filters as they were (namespaces already entered stay); after
 * it, the process is left partly sandboxed, never less than it was, and
 * the error says which layer failed. */
SBX_EXPORT gboolean sbx_sandbox_enter_self(const sbx_self_config *config,
                                           sbx_sandbox_status *status,
                                           GError **error);

/* ---- Built-in policies and profiles ------------------------------------ */

/* The text of a built-in file ("renderer.policy", "renderer.profile", ...),
 * or NULL (also for a NULL name). Static; do not free. */
SBX_EXPORT const char *sbx_builtin_text(const char *file_name);

#ifdef __cplusplus
}
#endif

#endif /* SBX_SBX_H_ */
