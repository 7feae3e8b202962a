/* A worker's start: the layers, in order, between fork and its entry
 * function.
 *
 * Why it exists: the order is the security argument, so it lives in one
 * function that every worker runs (zygote-forked or not):
 *   1. parent-death signal     a worker never outlives its zygote
 *   2. descriptor hygiene      the host's fds at 0..n-1, then the broker
 *                              channel, the report pipe and the Landlock
 *                              ruleset; nothing else is open (verified)
 *   3. resource limits         (after hygiene: see fds.h)
 *   4. credentials             new session, no capabilities in any set,
 *                              no_new_privs, undumpable
 *   5. broker channel          the client's trap handlers now have a peer
 *   6. layer 1                 the broker-client filter (file system ->
 *                              SIGSYS -> broker)
 *   7. layer 2..n              the process type's policies, the self-pid
 *                              placeholder patched (self_pid.h)
 *   8. Landlock                the ruleset prepared by the zygote
 *   9. status                  what the kernel now reports, for the entry
 *  10. entry                   its return value is the exit status
 * Seccomp comes before Landlock so that the call installing Landlock is
 * itself filtered; both only narrow, so the order cannot widen anything.
 *
 * A step that fails writes a SETUP_FAILED record (report.h) and exits with
 * SBX_WORKER_SETUP_FAILED_EXIT; the entry function never runs with a layer
 * missing.
 *
 * What it trusts: the plan, which the zygote built from the host's
 * configuration before any worker existed. Everything here up to the
 * entry call is ASYNC-SIGNAL-SAFE and allocates nothing: the zygote may
 * have been forked from a process whose other threads held locks.
 */
#ifndef SBX_ZYGOTE_WORKER_H_
#define SBX_ZYGOTE_WORKER_H_

#include <stdbool.h>
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include <linux/filter.h>

#include "sandbox/kernel/namespaces/rlimits.h"
#include "sandbox/kernel/namespaces/status.h"
#include "sbx/sbx.h"

#define SBX_WORKER_MAX_LAYERS 8
#define SBX_WORKER_MAX_RLIMITS 16
#define SBX_WORKER_SETUP_FAILED_EXIT 125

typedef struct {
  char name[SBX_NAME_MAX];
  struct sock_filter *insns; /* owned by the zygote; each worker patches
                                its own copy-on-write copy */
  size_t len;
} sbx_worker_layer;

/* Everything about one process type that is decided before fork. */
typedef struct {
  char name[SBX_NAME_MAX];
  sbx_worker_entry entry;
  void *user_data;
  bool uses_broker; /* the first layer is the broker-client filter */
  sbx_worker_layer layers[SBX_WORKER_MAX_LAYERS];
  size_t n_layers;
  sbx_rlimit rlimits[SBX_WORKER_MAX_RLIMITS];
  size_t n_rlimits;
  int landlock_fd; /* ruleset, or -1 for none */
  uint32_t landlock_flags;
  int landlock_abi;
  bool collect_status;
  /* Step 5, ASYNC-SIGNAL-SAFE: gives the broker client its channel. */
  int (*broker_attach_raw)(void *client, int channel_fd);
} sbx_worker_plan;

/* What one spawn adds to the plan. */
typedef struct {
  const int *fds; /* become 0..n_fds-1 in the worker */
  size_t n_fds;
  int broker_fd;  /* -1 when the type does not use the broker */
  int report_fd;  /* write end of the report pipe */
  int devnull_fd; /* fills stdio slots the host did not give */
  const void *payload;
  size_t payload_len;
  pid_t expected_ppid;
  const sbx_ns_reference *ns_reference; /* for the status; may be NULL */
  /* Where the policy-kill handler reads the report fd (report.h): the
   * zygote's slot, which this worker overwrites in its own copy. */
  int *report_fd_slot;
  /* The broker client's per-process state, attached in step 5. */
  void *broker_client;
  /* The signal mask the entry function starts with (the zygote blocks
   * SIGCHLD for itself). */
  sigset_t sigmask;
} sbx_worker_spawn;

/* Runs steps 1-10 and exits with the entry's return value. Never returns.
 * ASYNC-SIGNAL-SAFE up to the entry call. */
_Noreturn void sbx_worker_run_raw(const sbx_worker_plan *plan,
                                  const sbx_worker_spawn *spawn);

#endif /* SBX_ZYGOTE_WORKER_H_ */
