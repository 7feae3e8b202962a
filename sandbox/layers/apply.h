/* Applying a plan (plan.h) in the process it confines: the child side of
 * the layers engine.
 *
 * Why it exists: the order of the layers is the security argument, so it
 * is written once, here, for every kind of sandboxed process:
 *   1. parent death     dies with its parent (checked: the parent may
 *                       already be gone)
 *   2. descriptors      the caller's descriptors at their numbers, the
 *                       ruleset above them; nothing else is open (fds.h)
 *   3. resource limits  after the descriptor check, which must cover the
 *                       limit the process had (fds.h)
 *   4. session          setsid: no controlling terminal (S10)
 *   5. capabilities     securebits locked, every set emptied (S33)
 *   6. no_new_privs     which seccomp and Landlock both require
 *   7. dumpable 0       no ptrace, no /proc/PID/mem (S5)
 *      status           namespaces and credentials read back from /proc
 *                       while the process may still open it itself
 *   8. seccomp          each filter, own pid patched at its relocations
 *   9. Landlock         the ruleset, then its descriptor is closed
 *      status           seccomp and Landlock from the kernel's successful
 *                       returns, assembled into sbx_process_status
 * Credentials come before the filters, which refuse the calls that change
 * them. Seccomp comes before Landlock so that the call installing Landlock
 * is itself filtered, and so that no process (the broker included) holds
 * a Landlock domain without its filter; both only narrow, and the kernel
 * evaluates every stacked filter with the most restrictive action
 * winning, so this order can never widen what a process may do. Every
 * filter that follows must therefore allow landlock_restrict_self and
 * close, and nothing after step 8 calls prctl.
 *
 * A plan flag (plan.h) skips a step or changes how it is done; it never
 * moves one.
 *
 * What it trusts: the plan, prepared before the process existed. What it
 * refuses: to go on after a failing step; the caller learns which step,
 * and a process never runs its own code with a layer missing.
 *
 * Async-signal-safe. Everything in sbx_layer_apply_raw allocates nothing
 * and uses raw system calls only: it runs between fork and the entry
 * function or exec, where the parent's other threads may have held locks.
 */
#ifndef SBX_LAYERS_APPLY_H_
#define SBX_LAYERS_APPLY_H_

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sandbox/kernel/namespaces/fds.h"
#include "sandbox/kernel/namespaces/status.h"
#include "sandbox/layers/plan.h"
#include "sandbox/layers/status.h"

/* The steps, in the order they are applied; a failure names one. */
typedef enum {
  SBX_LAYER_STEP_NONE = 0,
  SBX_LAYER_STEP_PARENT_DEATH,
  SBX_LAYER_STEP_DESCRIPTORS,
  SBX_LAYER_STEP_RLIMITS, /* detail: the limit's index */
  SBX_LAYER_STEP_SESSION,
  SBX_LAYER_STEP_CAPABILITIES,
  SBX_LAYER_STEP_NO_NEW_PRIVS,
  SBX_LAYER_STEP_DUMPABLE,
  /* The broker channel, which the caller attaches before apply; named so
   * that its failure is reported like the others. */
  SBX_LAYER_STEP_BROKER,
  SBX_LAYER_STEP_SECCOMP, /* detail: the filter's index */
  SBX_LAYER_STEP_LANDLOCK,
} sbx_layer_step;

/* What one process adds to its plan. */
typedef struct {
  /* The descriptors it keeps, each at its target number (fds.h); the
   * ruleset is kept above them until step 9. Updated to the final numbers.
   * Ignored with SBX_LAYERS_KEEP_DESCRIPTORS. */
  sbx_fd_keep *keep;
  size_t n_keep;
  /* Step 1 (see sbx_creds_die_with_parent_raw): the parent's pid, or a
   * pidfd of it (in a new pid namespace, where getppid() says nothing). */
  pid_t expected_ppid;
  int parent_pidfd;
  /* With plan->collect_status: the host's namespaces (may be NULL), an
   * earlier reading whose namespaces count where a later one cannot tell
   * (a process that empties its root before apply; may be NULL), and
   * where the report goes. */
  const sbx_ns_reference *ns_reference;
  const sbx_layer_status *early;
  sbx_process_status *status;
  /* Where plan->listener_filter's listener goes the moment its filter is
   * on, before any call that filter could hold (a worker's goes to its
   * broker): called with the descriptor, which apply closes afterwards, so
   * the process's own code never holds it. Returns 0 or -errno; must be
   * async-signal-safe. NULL: result->listener_fd keeps it. */
  int (*listener_sink)(void *ctx, int listener_fd);
  void *listener_ctx;
} sbx_layer_process;

typedef struct {
  sbx_layer_step step; /* SBX_LAYER_STEP_NONE on success */
  int detail;          /* see the steps */
  int error;           /* errno */
  /* plan->listener_filter's notification descriptor, when there is no
   * listener_sink; else -1. */
  int listener_fd;
} sbx_layer_result;

/* Applies plan to the calling process, steps 1-9. Returns 0, or -errno
 * with result naming the failed step; the caller must then not run the
 * process's own code. The plan's programs are patched in place.
 * Async-signal-safe. */
int sbx_layer_apply_raw(sbx_layer_plan *plan, sbx_layer_process *process,
                        sbx_layer_result *result);

/* "resource limits", "seccomp filter", ... Async-signal-safe. */
const char *sbx_layer_step_name(int step);

/* The same for a process that confines itself and can still report with
 * GLib (sbx_sandbox_enter_self, the broker): the error (SBX_LAYERS_ERROR)
 * names the step, the filter or limit, and the errno. Parent side
 * (plan.c). */
gboolean sbx_layer_apply(sbx_layer_plan *plan, sbx_layer_process *process,
                         GError **error);

/* "seccomp filter 1 (renderer.policy): Invalid argument", for a failed
 * result of plan. Caller frees with g_free. Parent side (plan.c). */
char *sbx_layer_result_describe(const sbx_layer_plan *plan,
                                const sbx_layer_result *result);

#endif /* SBX_LAYERS_APPLY_H_ */
