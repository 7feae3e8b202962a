/* The zygote, host side: start it, ask it for workers, hear how they end.
 *
 * Why it exists: see server.h for the zygote itself. This is the part of
 * the fork server that stays in the host: it prepares everything the
 * zygote will ever need (compiled programs, Landlock rulesets, tables),
 * clones it into new namespaces, where it either goes on as a fork of the
 * host or execs the host's executable afresh (fresh.h), then speaks
 * protocol.h to it.
 *
 * Life cycle:
 *   1. sbx_zygote_start(&config, &z, &error)  while the host is
 *      single-threaded; returns once the zygote is ready.
 *   2. sbx_zygote_spawn(z, &request, &pid, &error)   pid as the host sees it
 *   3. sbx_zygote_wait(z, pid, timeout_ms, &exit, &error)
 *   4. sbx_zygote_stop(z)                     kills the zygote; its pid
 *      namespace takes every remaining worker with it.
 *
 * Pids: workers live in the zygote's pid namespace, so the zygote's fork()
 * returns a number the host cannot use. The zygote names the new worker in
 * SCM_CREDENTIALS (it holds CAP_SYS_ADMIN in the user namespace that owns
 * its pid namespace, which the kernel requires for naming another
 * process), and the kernel translates that pid into the host's namespace
 * on receipt (SO_PASSCRED).
 *
 * Zygote death (F2): the zygote is pid 1 of its namespace, so the kernel
 * kills every worker when it dies, and waits for them before the zygote
 * becomes a zombie. The host sees EOF on the socket, reaps the zygote, and
 * from then on sbx_zygote_wait reports every worker it had as
 * SBX_ZYGOTE_EXIT_ZYGOTE_DIED, then SBX_ZYGOTE_ERROR_DIED.
 *
 * Bounds: spawn and query wait at most SBX_ZYGOTE_REPLY_TIMEOUT_MS for
 * the zygote's reply, and fail (SBX_ZYGOTE_ERROR_FAILED, naming the
 * request and the timeout) when it does not come; a worker whose reply comes
 * after that is killed, since its caller was told the spawn failed. Exit
 * reports that arrive meanwhile are kept. The host's socket is
 * non-blocking, so a zygote that does not read cannot hold a send
 * either. sbx_zygote_stop kills the zygote and waits at most
 * SBX_ZYGOTE_REAP_TIMEOUT_MS for the kernel to let it be reaped.
 *
 * Threads: spawn, wait, query and kill are safe from any thread of the
 * host, at the same time. A reply is matched to its request by id, so no
 * thread takes another's; one thread at a time reads the socket for all
 * while the others sleep until it has read, so a wait that lasts blocks
 * no other thread's spawn, and every call keeps its own deadline.
 * sbx_zygote_stop frees the zygote: no other call may be running or
 * follow (sbx_zygote_kill first makes the calls in progress return).
 *
 * Ownership: the config and everything it points to are borrowed for the
 * call and copied (programs included). The sbx_zygote belongs to the
 * caller until sbx_zygote_stop.
 *
 * Its types are its own: the public API (sandbox/api) turns them into
 * sbx/sbx.h's, which nothing here includes.
 */
#ifndef SBX_ZYGOTE_ZYGOTE_H_
#define SBX_ZYGOTE_ZYGOTE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#include "sandbox/kernel/landlock/landlock.h"
#include "sandbox/kernel/namespaces/rlimits.h"
#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/layers/plan.h"
#include "sandbox/zygote/protocol.h"
#include "sandbox/zygote/worker.h"

/* How long the host waits for a killed (or exiting) zygote to be reaped;
 * its pid namespace's workers die first. */
#define SBX_ZYGOTE_REAP_TIMEOUT_MS 2000
/* How long the host waits for the zygote's reply to one request. */
#define SBX_ZYGOTE_REPLY_TIMEOUT_MS 5000

#define SBX_ZYGOTE_ERROR (sbx_zygote_error_quark())
GQuark sbx_zygote_error_quark(void);

typedef enum {
  SBX_ZYGOTE_ERROR_INVALID,   /* the configuration or a request is wrong */
  SBX_ZYGOTE_ERROR_FAILED,    /* a system call failed, or no reply came */
  SBX_ZYGOTE_ERROR_TIMED_OUT, /* sbx_zygote_wait: no worker ended in time */
  SBX_ZYGOTE_ERROR_DIED,      /* the zygote is gone; no worker is left */
} sbx_zygote_error_code;

typedef struct {
  const char *name;
  sbx_zygote_entry entry; /* runs in the worker, given entry_data; a fresh
                             zygote runs its hooks' entry instead */
  void *entry_data;       /* borrowed: workers see it as it was at start */
  /* A fresh zygote (fresh.h) cannot follow pointers of the host: there
   * entry_data is entry_data_len bytes of plain data, copied into the
   * zygote (0: the entry gets NULL). A forked one ignores this. */
  size_t entry_data_len;
  /* Seccomp layers, loaded in this order (the broker-client layer first
   * when uses_broker). */
  const sbx_bpf_program *layers;
  const char *const *layer_names;
  size_t n_layers;
  bool uses_broker; /* every spawn of this type carries a broker channel */
  const sbx_rlimit *rlimits;
  size_t n_rlimits;
  bool landlock; /* a ruleset handling every right, with no rule */
  /* Trees the type's workers open directly (NULL-terminated; NULL: none):
   * the ruleset grants read of each (landlock must be set), and each is
   * bound read-only into the empty root. */
  const char *const *direct_trees;
  sbx_landlock_need landlock_need; /* REQUIRED (the default) or optional */
  int landlock_min_abi;            /* 0: any ABI; else at least this one */
  bool collect_status;             /* sbx_zygote_worker.status is filled */
  /* The last layer is loaded with a user-notification listener, which the
   * worker hands to the broker (broker_listener_raw) before its entry:
   * its errno verdicts are answered and logged there. Needs uses_broker. */
  bool audit_last_layer;
  /* Workers the zygote keeps forked ahead with every layer on (server.h,
   * "Warm pool"), at most SBX_ZYGOTE_MAX_POOL; 0: every spawn forks. Each
   * layer must allow the calls a pooled worker takes its job with
   * (sbx_worker_pool_calls); start fails naming the layer otherwise. */
  unsigned pool;
} sbx_zygote_type;

typedef struct {
  const sbx_zygote_type *types;
  size_t n_types;
  unsigned namespaces; /* SBX_NS_* for the zygote and its workers; 0: all */
  /* The type whose profile requires user namespaces, for the message when
   * the kernel refuses them; NULL: none does, and the zygote then runs
   * without namespaces (missing.h), its workers' reports saying so. */
  const char *userns_required_by;
  bool host_root;     /* keep the host's file tree instead of an empty root */
  size_t max_workers; /* alive at once; 0: 65536 */
  /* The broker client, when a type uses the broker. Both hooks are
   * Async-signal-safe; register runs once in the zygote before any
   * worker, attach in each worker (worker.h). broker_client is
   * borrowed: the zygote's copy of the host's memory is what they use.
   * register is given the direct trees when the workers' root holds
   * nothing else (layer1.h), else NULL. */
  int (*register_broker_traps_raw)(void *client, const char *direct_roots,
                                   size_t direct_roots_len);
  int (*broker_attach_raw)(void *client, int channel_fd);
  int (*broker_listener_raw)(void *client, int listener_fd);
  void *broker_client;
  /* How the zygote starts. false: a fork of the host (it shares the
   * host's memory as it is now, and its address-space layout). true: a
   * fresh exec of exec_fd (fresh.h), whose main must call
   * sbx_zygote_fresh_main() when it finds its marker; the hooks above are
   * then the exec'd program's own, and broker_client is not used. */
  bool fresh;
  int exec_fd; /* the host's executable (O_PATH is enough), when fresh */
  /* Its environment, "NAME=value" strings, NULL-terminated; NULL: empty.
   * Nothing else of the host's reaches it. */
  const char *const *exec_env;
} sbx_zygote_config;

typedef struct sbx_zygote sbx_zygote;

gboolean sbx_zygote_start(const sbx_zygote_config *config, sbx_zygote **out,
                          GError **error);

typedef struct {
  const char *process_type;
  const void *payload; /* copied */
  size_t payload_len;  /* at most SBX_ZYGOTE_MAX_PAYLOAD */
  const int *fds;      /* duplicated into the worker as 0..n_fds-1 */
  size_t n_fds;        /* at most SBX_ZYGOTE_MAX_FDS */
  int broker_channel;  /* the worker's end; -1 for types without broker.
                          Not closed here. */
  bool with_messages;  /* message_channel is the worker's end of its
                          message channel (not closed here) */
  int message_channel;
  bool held; /* the worker is held: no wait sees it or its exit until
                sbx_zygote_release(); sbx_zygote_discard() ends it */
  /* When set, called once the request is on its way to the zygote and
   * before its reply is awaited (not when it could not be sent): work the
   * caller overlaps with the spawn goes there, after the zygote has been
   * woken, so that it does not run ahead of the worker on this CPU. */
  void (*on_sent)(void *ctx);
  void *on_sent_ctx;
} sbx_zygote_spawn_request;

gboolean sbx_zygote_spawn(sbx_zygote *z, const sbx_zygote_spawn_request *req,
                          pid_t *pid, GError **error);

/* For a worker spawned held: makes it an ordinary worker (its exit, if
 * it already ended, is reported as usual). */
void sbx_zygote_release(sbx_zygote *z, pid_t pid);

/* For a worker spawned held: kills it and reads its exit report within
 * SBX_ZYGOTE_REPLY_TIMEOUT_MS, reporting nothing of it to any wait. */
void sbx_zygote_discard(sbx_zygote *z, pid_t pid);

/* How a worker ended. */
typedef enum {
  SBX_ZYGOTE_EXIT_NORMAL,       /* exit_code */
  SBX_ZYGOTE_EXIT_SIGNALED,     /* signal */
  SBX_ZYGOTE_EXIT_POLICY_KILL,  /* syscall_nr, syscall_args */
  SBX_ZYGOTE_EXIT_SETUP_FAILED, /* detail: the step that failed */
  SBX_ZYGOTE_EXIT_ZYGOTE_DIED,  /* killed with its zygote */
} sbx_zygote_exit_reason;

#define SBX_ZYGOTE_EXIT_DETAIL_MAX 160

typedef struct {
  pid_t pid; /* as the host sees it */
  sbx_zygote_exit_reason reason;
  int exit_code;
  int signal;
  int syscall_nr; /* -1 unless POLICY_KILL */
  uint64_t syscall_args[6];
  char detail[SBX_ZYGOTE_EXIT_DETAIL_MAX]; /* one readable line */
} sbx_zygote_exit;

/* Waits up to timeout_ms (-1: forever, 0: poll) for worker pid (-1: any)
 * to end and fills *exit. SBX_ZYGOTE_ERROR_TIMED_OUT when none did,
 * SBX_ZYGOTE_ERROR_INVALID for a pid that is not a live worker,
 * SBX_ZYGOTE_ERROR_DIED once the zygote is gone and every worker has been
 * reported. */
gboolean sbx_zygote_wait(sbx_zygote *z, pid_t pid, int timeout_ms,
                         sbx_zygote_exit *exit, GError **error);

/* The zygote's counters (protocol.h STATUS). */
gboolean sbx_zygote_query(sbx_zygote *z, sbx_zygote_status *status,
                          GError **error);

/* The host's end of the zygote's socket (non-blocking), for poll(2); -1
 * once the zygote is gone. */
int sbx_zygote_fd(const sbx_zygote *z);
pid_t sbx_zygote_pid(const sbx_zygote *z);

/* Kills the zygote and wakes every thread in a call on it: a wait in
 * progress reports its workers as killed with the zygote, a spawn fails.
 * Safe from any thread, at any time before sbx_zygote_stop. */
void sbx_zygote_kill(sbx_zygote *z);

/* Kills the zygote (its workers die with it), reaps it within
 * SBX_ZYGOTE_REAP_TIMEOUT_MS and frees z. NULL is ignored. */
void sbx_zygote_stop(sbx_zygote *z);

#endif /* SBX_ZYGOTE_ZYGOTE_H_ */
