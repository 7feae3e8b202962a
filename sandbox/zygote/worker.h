/* A worker's start: what a zygote-forked process does between fork and
 * its entry function.
 *
 * Why it exists: the layers and their order are the engine's
 * (sandbox/layers/apply.h), the same for every kind of sandboxed process.
 * What is particular to a worker sits around them, here: the descriptors
 * a spawn gives it (the host's at 0..n-1, /dev/null for missing stdio,
 * then the broker channel and the report pipe), the host's signal mask,
 * the broker channel attached to the client before the broker-client
 * filter goes on, the report of a failed step, and the entry function,
 * whose return value is the exit status.
 *
 * A step that fails writes a SETUP_FAILED record (report.h) naming the
 * step, and exits with SBX_WORKER_SETUP_FAILED_EXIT; the entry function
 * never runs with a layer missing.
 *
 * What it trusts: the plan, which the zygote built from the host's
 * configuration before any worker existed. Everything here up to the
 * entry call is Async-signal-safe and allocates nothing: the zygote may
 * have been forked from a process whose other threads held locks.
 */
#ifndef SBX_ZYGOTE_WORKER_H_
#define SBX_ZYGOTE_WORKER_H_

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/kernel/namespaces/status.h"
#include "sandbox/layers/plan.h"
#include "sandbox/layers/status.h"
#include "sandbox/zygote/code_pages.h"
#include "sandbox/zygote/protocol.h"

#define SBX_WORKER_SETUP_FAILED_EXIT 125

/* What the code a worker runs is given, once every layer is on. The
 * zygote's own type: the API turns it into the public sbx_worker_args.
 * Everything stays valid until the worker exits. */
typedef struct {
  const char *process_type;
  const void *payload;
  size_t payload_len;
  int n_fds;        /* the host's descriptors are 0 .. n_fds-1 (at least 3) */
  int broker_fd;    /* the broker channel, or -1 */
  int report_fd;    /* the end-of-life report pipe */
  int message_fd;   /* the host's message channel, or -1 */
  void *entry_data; /* sbx_zygote_type.entry_data */
  /* What is in place, when the type collects it; else NULL. */
  const sbx_process_status *status;
} sbx_zygote_worker;

/* The code a worker runs; its return value is the worker's exit status. */
typedef int (*sbx_zygote_entry)(const sbx_zygote_worker *worker);

/* The name of the filter a type with direct opens carries last
 * (zygote.c): it answers openat2 with ENOSYS, and the zygote drops it
 * where its root is the empty one (server.c). */
#define SBX_WORKER_DIRECT_GUARD "no-direct-opens"

/* Everything about one process type that is decided before fork. */
typedef struct {
  /* The layers; .broker: the first filter is the broker-client layer. */
  sbx_layer_plan layers;
  sbx_zygote_entry entry;
  void *entry_data;
  /* Async-signal-safe: gives the broker client its channel. */
  int (*broker_attach_raw)(void *client, int channel_fd);
  /* Async-signal-safe: hands the listener of layers.listener_filter to
   * the broker (a type that audits its errno verdicts). */
  int (*broker_listener_raw)(void *client, int listener_fd);
  /* Workers the zygote keeps forked ahead (server.h, "Warm pool"). */
  unsigned pool;
} sbx_worker_plan;

/* What one spawn adds to the plan. */
typedef struct {
  const int *fds; /* become 0..n_fds-1 in the worker */
  size_t n_fds;
  int broker_fd;  /* -1 when the type does not use the broker */
  int message_fd; /* the host's message channel, or -1 */
  int report_fd;  /* write end of the report pipe */
  int devnull_fd; /* fills stdio slots the host did not give */
  const void *payload;
  size_t payload_len;
  pid_t expected_ppid;
  const sbx_ns_reference *ns_reference; /* for the status; may be NULL */
  /* The zygote's own reading, taken before it emptied its root: where
   * a new /proc could not be mounted (inside a container whose /proc has
   * masked paths) the worker's namespaces are the zygote's. May be NULL. */
  const sbx_layer_status *early;
  /* Where the policy-kill handler reads the report fd (report.h): the
   * zygote's slot, which this worker overwrites in its own copy. */
  int *report_fd_slot;
  /* The broker client's per-process state, attached before the filters. */
  void *broker_client;
  /* The signal mask the entry function starts with (the zygote blocks
   * SIGCHLD for itself). */
  sigset_t sigmask;
} sbx_worker_spawn;

/* Applies the plan's layers in the worker's own copy of it (the programs
 * are patched there) and exits with the entry's return value. Never
 * returns. Async-signal-safe up to the entry call. */
_Noreturn void sbx_worker_run_raw(sbx_worker_plan *plan,
                                  const sbx_worker_spawn *spawn);

/* A pooled worker (server.h, "Warm pool") holds, while it waits, only
 * its report pipe and its end of the job socket, parked above every
 * number a job fills (the host's descriptors, the broker and message
 * channels, the report pipe), so that the descriptors of the job land
 * where a cold worker has them: the kernel gives received descriptors
 * the lowest free numbers, in order. An audited type's listener waits
 * above them too, until the job brings the broker channel it goes to. */
#define SBX_WORKER_POOL_REPORT_FD (SBX_ZYGOTE_MAX_FDS + 3)
#define SBX_WORKER_POOL_JOB_FD (SBX_ZYGOTE_MAX_FDS + 4)
#define SBX_WORKER_POOL_LISTENER_FD (SBX_ZYGOTE_MAX_FDS + 5)

/* What the zygote gives a worker it forks ahead. */
typedef struct {
  int job_fd;         /* its end of the job socket pair */
  int report_fd;      /* write end of the report pipe */
  unsigned char *buf; /* SBX_ZYGOTE_MAX_MESSAGE bytes, wiped: the job */
  pid_t expected_ppid;
  const sbx_ns_reference *ns_reference;
  const sbx_layer_status *early;
  int *report_fd_slot;
  void *broker_client;
  sigset_t sigmask;
  const sbx_code_ranges *code; /* mapped in first (code_pages.h) */
} sbx_worker_pooled;

/* The system calls a pooled worker makes with every layer on, before its
 * entry: each of its type's filters must allow them (the zygote checks
 * at start). Arguments as the worker passes them. */
typedef struct {
  const char *name;
  int nr;
  uint64_t args[3];
} sbx_worker_pool_call;
extern const sbx_worker_pool_call sbx_worker_pool_calls[];
extern const size_t sbx_worker_pool_n_calls;

/* Applies the plan's layers as sbx_worker_run_raw does, with no job yet;
 * then waits for the one job (protocol.h JOB), lays its descriptors out
 * exactly as a cold worker's, and runs the entry. A job socket closed
 * without a job ends it quietly (exit 0). Never returns.
 * Async-signal-safe up to the entry call. */
_Noreturn void sbx_worker_pool_run_raw(sbx_worker_plan *plan,
                                       const sbx_worker_pooled *pooled);

#endif /* SBX_ZYGOTE_WORKER_H_ */
