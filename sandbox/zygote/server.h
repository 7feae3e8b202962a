/* The zygote process itself: the fork server's loop.
 *
 * Why it exists: forking workers from a small, single-purpose process
 * that was set up once (namespaces entered, every policy compiled, the
 * trap handlers registered, one Landlock ruleset per type built) makes a
 * spawn cost one fork and a few system calls, and keeps the host's later
 * state (threads, open files, secrets read after start) out of every
 * worker.
 *
 * The zygote is pid 1 of its own pid namespace: when it dies, for any
 * reason, the kernel kills every worker (F2), and its own parent-death
 * signal ties it to the host. Workers are its children; it reaps them,
 * reads each one's report pipe, and tells the host (protocol.h).
 *
 * What it trusts: the host on the other end of its socket, and the server
 * state the host prepared before forking it. It refuses malformed
 * requests (the descriptors they carried are closed) and tells the host.
 *
 * Warm pool (Android's unspecialised app process pool): for each type
 * whose plan asks for it (sbx_worker_plan.pool), the zygote keeps that
 * many workers forked ahead, each with every layer of its type already
 * on (sbx_worker_pool_run_raw), blocked on a socket pair of its own. A
 * spawn of the type hands one over: the zygote sends it the job (the
 * payload, the host's descriptors, the broker and message channels) with
 * SCM_RIGHTS, closes its end, and the worker becomes an ordinary live
 * worker; when the pool is empty the spawn forks a cold one. Refills run
 * once the zygote has been idle for a moment (POOL_REFILL_IDLE_MS), so a
 * spawn never waits for one, and the fork does not take the CPU the
 * worker it just woke needs. A pooled
 * worker is a fork of the zygote made while it holds nothing of any job
 * (its buffer is wiped after each request), runs one job and exits: it
 * never learns another's. Pooled workers are not the host's: their pids,
 * sockets and pipes live in memory wiped in every fork (like the worker
 * table), and one that dies before its job is not reported; it marks its
 * type's pool failed, and that type's spawns are cold from then on (a
 * cold spawn reports its own failure properly). They die with the
 * zygote like every worker.
 *
 * Everything after sbx_zygote_server_main() begins is Async-signal-safe
 * and allocates nothing: all memory was allocated by the host before the
 * fork.
 */
#ifndef SBX_ZYGOTE_SERVER_H_
#define SBX_ZYGOTE_SERVER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/kernel/namespaces/rootfs.h"
#include "sandbox/kernel/namespaces/status.h"
#include "sandbox/zygote/protocol.h"
#include "sandbox/zygote/worker.h"

typedef struct {
  pid_t pid;     /* in the zygote's pid namespace; 0: free slot */
  int report_fd; /* read end of the worker's report pipe */
} sbx_zygote_slot;

/* One worker forked ahead (see "Warm pool" above). */
typedef struct {
  pid_t pid;     /* 0: free */
  int job_fd;    /* the zygote's end; -1 once dropped (awaiting its reaping) */
  int report_fd; /* read end of its report pipe */
} sbx_zygote_pooled;

typedef struct {
  uint32_t waiting; /* members with a job socket */
  bool failed;      /* one died before its job: no more refills */
  sbx_zygote_pooled member[SBX_ZYGOTE_MAX_POOL];
} sbx_zygote_pool;

/* Prepared by the host before the fork; the zygote's only memory. */
typedef struct {
  int sock;    /* to the host */
  int devnull; /* for stdio slots a spawn does not fill */
  sbx_worker_plan *plans;
  size_t n_plans;
  sbx_zygote_slot *slots;
  /* One per plan; wiped in every fork like slots (a worker learns no
   * sibling's pid or descriptor). */
  sbx_zygote_pool *pools;
  bool pool_backoff; /* the last refill failed: retry after a pause */
  size_t capacity;
  size_t high; /* slots ever used: every live one is below */
  size_t live;
  uint64_t spawned, exited;
  unsigned char *buf; /* SBX_ZYGOTE_MAX_MESSAGE bytes */
  sbx_ns_reference ns_reference;
  bool empty_root; /* pivot into an empty root with a new /proc */
  /* Bound read-only into that root: every type's direct trees, each
   * NUL-terminated, one after another (NULL, 0: none). Owned. A tree bound
   * for one type is visible to every type; only the types whose Landlock
   * ruleset grants it can open anything there (docs/design.md). */
  char *direct_binds;
  size_t direct_binds_len;
  /* The zygote is pid 1 of a pid namespace of its own. Without one (no
   * user namespaces here, missing.h) a worker's pid is the same for the
   * host, and the kernel would refuse to translate it (SCM_CREDENTIALS
   * naming another process needs CAP_SYS_ADMIN). */
  bool own_pid_ns;
  sbx_root_result root_result; /* what that gave */
  sbx_layer_status early;      /* read before that (worker.h) */
  sbx_code_ranges code;        /* likewise (code_pages.h) */
  sigset_t host_sigmask;
  /* The policy-kill handler reads the report fd here (report.h). */
  int report_fd_slot;
  /* Runs once in the zygote before READY, Async-signal-safe: registers
   * the broker client's trap handlers. NULL when no type uses the broker. */
  int (*register_broker_traps_raw)(void *client, const char *direct_roots,
                                   size_t direct_roots_len);
  void *broker_client;
} sbx_zygote_server;

/* A fresh zygote (fresh.h): argv[1] of the exec'd program (argv[0] is
 * SBX_ZYGOTE_FRESH_NAME) and the descriptors it finds. */
#define SBX_ZYGOTE_FRESH_ARG "--sbx-zygote"
#define SBX_ZYGOTE_FRESH_NAME "sbx-zygote"
#define SBX_ZYGOTE_FRESH_SOCK_FD 3
#define SBX_ZYGOTE_FRESH_DATA_FD 4
#define SBX_ZYGOTE_FRESH_FIRST_RULESET_FD 5

typedef struct {
  int exec_fd;         /* the host's executable */
  int data_fd;         /* the start data */
  const int *rulesets; /* Landlock rulesets, in the zygote's order */
  size_t n_rulesets;
  char *const *argv;
  char *const *envp;
  /* argv[2], at least 3 bytes, which the child fills: 'r' or '-' (an
   * empty root), 'p' or '-' (a pid namespace of its own). Only the child
   * knows them: where the kernel refuses namespaces it runs without. */
  char *settings;
} sbx_zygote_exec;

/* In the child of sbx_ns_clone(), instead of sbx_zygote_server_main():
 * lays out the descriptors above (everything else is closed) and execs
 * the host's executable. Never returns: when the exec fails it tells the
 * host (INIT_FAILED, with the errno) and exits 1. Async-signal-safe. */
_Noreturn void sbx_zygote_server_exec(sbx_zygote_server *server,
                                      const sbx_zygote_exec *exec);

/* In the exec'd zygote, first: clears the ambient and inheritable sets
 * that carried its capabilities across the exec, so no worker inherits
 * them. Returns 0 or -errno. Async-signal-safe. */
int sbx_zygote_fresh_caps_settle_raw(void);

/* The zygote's life, in the child of sbx_ns_clone(). Never returns: exits
 * when the host closes its end of the socket. */
_Noreturn void sbx_zygote_server_main(sbx_zygote_server *server);

#endif /* SBX_ZYGOTE_SERVER_H_ */
