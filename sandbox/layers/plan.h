/* One process's confinement, prepared on the parent side: everything the
 * child side (apply.h) needs, decided and checked while errors can still
 * be reported properly.
 *
 * Why it exists: every kind of sandboxed process (a zygote's worker, a
 * process that sandboxes itself, sbx-run's init and program, the broker)
 * is confined by one plan applied by one function, so the order of the
 * layers and its argument exist once (apply.h). Where a kind of process
 * must differ, its plan carries a flag below, and the flag says why.
 *
 * What a plan holds: the process type's name (for reports), the flags,
 * resource limits, seccomp filters in load order with their names and
 * self-pid relocations (self_pid.h), the Landlock ruleset, built here
 * (ABI negotiation; a kernel without Landlock is decided by missing.h),
 * and whether the status report is
 * collected. What one process adds at apply time (its descriptors, its
 * parent) is in sbx_layer_process (apply.h).
 *
 * What it trusts: the caller's programs, limits and rules (policy, read
 * before anything is confined). What it refuses: more filters or limits
 * than fit, an empty or oversized program, relocations that do not belong
 * to their program, a kernel below the required Landlock ABI, and a
 * kernel without Landlock unless Landlock is optional.
 *
 * Ownership: a plan owns its programs and its ruleset descriptor
 * (sbx_layer_plan_clear frees and closes them). A forked child applies
 * its own copy: the programs are patched in place (self_pid.h).
 */
#ifndef SBX_LAYERS_PLAN_H_
#define SBX_LAYERS_PLAN_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "sandbox/kernel/landlock/landlock.h"
#include "sandbox/kernel/namespaces/rlimits.h"
#include "sandbox/kernel/seccomp/bpf.h"

/* Filters one process stacks; each has a line in the status report. */
#define SBX_LAYERS_MAX_FILTERS 8
/* Process type and filter names, NUL included. */
#define SBX_LAYERS_NAME_MAX 32
#define SBX_LAYERS_MAX_RLIMITS 16

/* Where a kind of process differs from a worker. Each flag names who sets
 * it and why; nothing else changes what a plan does. */
enum {
  /* sbx_sandbox_enter_self: the process is its own host; whoever started
   * it is not a parent it must die with. */
  SBX_LAYERS_OUTLIVE_PARENT = 1u << 0,
  /* sbx_sandbox_enter_self and the broker: they keep the descriptors they
   * hold (a process confining itself owns its files; the broker's were
   * laid out by the exec that started it). */
  SBX_LAYERS_KEEP_DESCRIPTORS = 1u << 1,
  /* sbx_sandbox_enter_self: the process may own its user's terminal; the
   * ioctl allowlist refuses TIOCSTI instead of a new session. */
  SBX_LAYERS_KEEP_SESSION = 1u << 2,
  /* The broker: it opens files for workers with the host's identity,
   * capabilities included; its allowlist, Landlock and filter narrow it. */
  SBX_LAYERS_KEEP_CAPABILITIES = 1u << 3,
  /* sbx_sandbox_enter_self: threads may already run, so every filter goes
   * on every thread of the process (TSYNC, S16). */
  SBX_LAYERS_TSYNC = 1u << 4,
  /* sbx-run's init: the first filter returns a user-notification
   * listener, which init hands to the supervisor before the program runs
   * (sbx_layer_result.listener_fd). */
  SBX_LAYERS_LISTENER = 1u << 5,
  /* sbx-run's program: init's plan already confined it (descriptors,
   * limits, credentials, Landlock are inherited); its own plan only
   * stacks the filters that init itself must not run under. */
  SBX_LAYERS_FILTERS_ONLY = 1u << 6,
};

typedef struct {
  char name[SBX_LAYERS_NAME_MAX];
  sbx_bpf_program program; /* owned */
} sbx_layer_filter;

typedef struct {
  char process_type[SBX_LAYERS_NAME_MAX];
  unsigned flags; /* SBX_LAYERS_* */
  sbx_rlimit rlimits[SBX_LAYERS_MAX_RLIMITS];
  size_t n_rlimits;
  /* The limits were clamped by the parent the process inherits its
   * limits from unchanged (the zygote, sbx_rlimits_clamp_raw): step 3
   * sets each with one call instead of reading it first. */
  bool rlimits_clamped;
  sbx_layer_filter filters[SBX_LAYERS_MAX_FILTERS]; /* in load order */
  size_t n_filters;
  /* The first filter is the broker-client layer, and the caller attaches
   * the broker channel before apply (for the status report). */
  bool broker;
  int landlock_fd;              /* the ruleset (owned), or -1 for none */
  sbx_landlock_report landlock; /* what the ruleset enforces */
  bool collect_status;          /* sbx_layer_process.status is filled */
  /* The filter loaded with a user-notification listener, or -1.
   * SBX_LAYERS_LISTENER makes it the first; a worker whose type audits
   * its errno verdicts (sandbox/api/prepare.h) names its last. */
  int listener_filter;
} sbx_layer_plan;

#define SBX_LAYERS_ERROR (sbx_layers_error_quark())
GQuark sbx_layers_error_quark(void);

typedef enum {
  SBX_LAYERS_ERROR_INVALID,     /* the plan's input is wrong */
  SBX_LAYERS_ERROR_UNSUPPORTED, /* the kernel lacks a layer the plan needs */
  SBX_LAYERS_ERROR_FAILED,      /* a step was refused while applying */
} sbx_layers_error_code;

/* An empty plan: no limit, no filter, no Landlock. Never fails. */
void sbx_layer_plan_init(sbx_layer_plan *plan, const char *process_type,
                         unsigned flags);

/* Frees the programs and closes the ruleset; the plan is empty after. */
void sbx_layer_plan_clear(sbx_layer_plan *plan);

/* Appends a copy of program (relocations included) as the next filter. */
gboolean sbx_layer_plan_add_filter(sbx_layer_plan *plan, const char *name,
                                   const sbx_bpf_program *program,
                                   GError **error);

/* Appends resource limits, applied in order. */
gboolean sbx_layer_plan_add_rlimits(sbx_layer_plan *plan,
                                    const sbx_rlimit *limits, size_t n,
                                    GError **error);

/* How much a plan needs Landlock. */
typedef enum {
  SBX_LANDLOCK_REQUIRED, /* the profile requires it */
  SBX_LANDLOCK_OPTIONAL, /* without it: one warning (missing.h) */
  /* Without it, silently: the process's own report is made elsewhere
   * (the broker, whose workers warn). */
  SBX_LANDLOCK_OPTIONAL_QUIET,
} sbx_landlock_need;

/* Builds b's ruleset into the plan and frees b. A kernel without Landlock
 * is decided by sbx_layer_missing (missing.h): when optional (and no
 * minimum ABI) the plan has no Landlock layer and the status report says
 * so; when required, SBX_LAYERS_ERROR_UNSUPPORTED with the cause. A
 * wrong request is SBX_LAYERS_ERROR_FAILED with the builder's message.
 * min_abi > 0 requires at least that ABI, whatever need says. */
gboolean sbx_layer_plan_set_landlock(sbx_layer_plan *plan,
                                     sbx_landlock_builder *b,
                                     sbx_landlock_need need, int min_abi,
                                     GError **error);

/* The number of threads of the calling process, as the kernel counts them
 * (/proc/self/stat); -1 when it cannot be read. A process that forks a
 * zygote or enters a user namespace must be single-threaded. */
long sbx_thread_count(void);

#endif /* SBX_LAYERS_PLAN_H_ */
