/* Applying a plan, step by step: see apply.h for the order and why.
 *
 * Trusts the plan; refuses to continue past a failing step. Everything
 * here is async-signal-safe and allocates nothing: the keep list is built
 * on the stack, the status report in the caller's buffer.
 */
#include "sandbox/layers/apply.h"

#include <errno.h>
#include <unistd.h>

#include "sandbox/kernel/landlock/landlock.h"
#include "sandbox/kernel/namespaces/credentials.h"
#include "sandbox/kernel/seccomp/loader.h"
#include "sandbox/layers/self_pid.h"
#include "sandbox/layers/status.h"

/* Async-signal-safe. */
const char *sbx_layer_step_name(int step) {
  switch (step) {
    case SBX_LAYER_STEP_PARENT_DEATH:
      return "parent-death signal";
    case SBX_LAYER_STEP_DESCRIPTORS:
      return "descriptor hygiene";
    case SBX_LAYER_STEP_RLIMITS:
      return "resource limits";
    case SBX_LAYER_STEP_SESSION:
      return "new session";
    case SBX_LAYER_STEP_CAPABILITIES:
      return "capabilities";
    case SBX_LAYER_STEP_NO_NEW_PRIVS:
      return "no_new_privs";
    case SBX_LAYER_STEP_DUMPABLE:
      return "PR_SET_DUMPABLE 0";
    case SBX_LAYER_STEP_BROKER:
      return "broker channel";
    case SBX_LAYER_STEP_SECCOMP:
      return "seccomp filter";
    case SBX_LAYER_STEP_LANDLOCK:
      return "landlock";
    default:
      return "unknown step";
  }
}

/* Async-signal-safe. */
static int failed(sbx_layer_result *result, sbx_layer_step step, int detail,
                  int rc) {
  result->step = step;
  result->detail = detail;
  result->error = -rc;
  return rc;
}

/* Step 2: the caller's descriptors, then the ruleset on the first number
 * above every target, where it cannot take a caller's place.
 * Async-signal-safe. */
static int lay_out_descriptors(const sbx_layer_plan *plan,
                               sbx_layer_process *process, int *landlock_fd) {
  sbx_fd_keep keep[SBX_FD_KEEP_MAX];
  size_t n = process->n_keep;
  if (n + 1 > SBX_FD_KEEP_MAX)
    return -EINVAL;
  int above = 0;
  for (size_t i = 0; i < n; i++) {
    keep[i] = process->keep[i];
    int target = keep[i].target == SBX_FD_SAME ? keep[i].fd : keep[i].target;
    if (target + 1 > above)
      above = target + 1;
  }
  if (plan->landlock_fd >= 0)
    keep[n] = (sbx_fd_keep){
        .fd = plan->landlock_fd, .target = above, .cloexec = true};
  int rc = sbx_fd_keep_only_raw(keep, n + (plan->landlock_fd >= 0 ? 1 : 0));
  if (rc < 0)
    return rc;
  for (size_t i = 0; i < n; i++)
    process->keep[i].fd = keep[i].fd;
  if (plan->landlock_fd >= 0)
    *landlock_fd = keep[n].fd;
  return 0;
}

/* Step 5. A bounding set that cannot be emptied (no CAP_SETPCAP, outside a
 * new user namespace) is accepted only when the process holds no
 * capability in any other set: then it limits nothing that exec could
 * gain under no_new_privs. Async-signal-safe. */
static int drop_capabilities(void) {
  int rc = sbx_creds_lock_securebits_raw();
  if (rc < 0 && rc != -EPERM)
    return rc;
  rc = sbx_creds_drop_bounding_set_raw();
  if (rc == -EPERM) {
    int held = sbx_creds_holds_capabilities_raw();
    if (held != 0)
      return held < 0 ? held : -EPERM;
  } else if (rc < 0) {
    return rc;
  }
  return sbx_creds_clear_capability_sets_raw();
}

/* Steps 1-7: what the kernel keeps per process, before any filter.
 * Async-signal-safe. */
static int apply_credentials(sbx_layer_plan *plan, sbx_layer_process *process,
                             sbx_layer_result *result, int *landlock_fd) {
  unsigned flags = plan->flags;
  int rc;
  if (!(flags & SBX_LAYERS_OUTLIVE_PARENT)) {
    rc = sbx_creds_die_with_parent_raw(process->expected_ppid,
                                       process->parent_pidfd);
    if (rc < 0)
      return failed(result, SBX_LAYER_STEP_PARENT_DEATH, 0, rc);
  }
  if (!(flags & SBX_LAYERS_KEEP_DESCRIPTORS)) {
    rc = lay_out_descriptors(plan, process, landlock_fd);
    if (rc < 0)
      return failed(result, SBX_LAYER_STEP_DESCRIPTORS, 0, rc);
  }
  size_t failed_limit = 0;
  rc = plan->rlimits_clamped
           ? sbx_rlimits_set_raw(plan->rlimits, plan->n_rlimits, &failed_limit)
           : sbx_rlimits_apply_raw(plan->rlimits, plan->n_rlimits,
                                   &failed_limit);
  if (rc < 0)
    return failed(result, SBX_LAYER_STEP_RLIMITS, (int)failed_limit, rc);
  if (!(flags & SBX_LAYERS_KEEP_SESSION)) {
    rc = sbx_creds_new_session_raw();
    if (rc < 0)
      return failed(result, SBX_LAYER_STEP_SESSION, 0, rc);
  }
  if (!(flags & SBX_LAYERS_KEEP_CAPABILITIES)) {
    rc = drop_capabilities();
    if (rc < 0)
      return failed(result, SBX_LAYER_STEP_CAPABILITIES, 0, rc);
  }
  rc = sbx_creds_set_no_new_privs_raw();
  if (rc < 0)
    return failed(result, SBX_LAYER_STEP_NO_NEW_PRIVS, 0, rc);
  rc = sbx_creds_set_undumpable_raw();
  if (rc < 0)
    return failed(result, SBX_LAYER_STEP_DUMPABLE, 0, rc);
  return 0;
}

/* Step 8. Async-signal-safe. */
static int apply_filters(sbx_layer_plan *plan, const sbx_layer_process *process,
                         sbx_layer_result *result, size_t *loaded) {
  pid_t self = getpid();
  for (size_t i = 0; i < plan->n_filters; i++) {
    sbx_bpf_program *p = &plan->filters[i].program;
    int rc = sbx_self_pid_patch(p->insns, p->len, p->self_pid_relocs,
                                p->n_self_pid_relocs, self);
    if (rc < 0)
      return failed(result, SBX_LAYER_STEP_SECCOMP, (int)i, rc);
    unsigned flags = 0;
    if (plan->flags & SBX_LAYERS_TSYNC)
      flags |= SBX_SECCOMP_TSYNC;
    if ((int)i == plan->listener_filter)
      flags |= SBX_SECCOMP_NEW_LISTENER;
    rc = sbx_seccomp_load_raw(p->insns, p->len, flags);
    if (rc < 0)
      return failed(result, SBX_LAYER_STEP_SECCOMP, (int)i, rc);
    if ((flags & SBX_SECCOMP_NEW_LISTENER) && process->listener_sink) {
      int listener = rc;
      rc = process->listener_sink(process->listener_ctx, listener);
      close(listener);
      if (rc < 0)
        return failed(result, SBX_LAYER_STEP_SECCOMP, (int)i, rc);
    } else if (flags & SBX_SECCOMP_NEW_LISTENER) {
      result->listener_fd = rc;
    }
    *loaded = i + 1;
  }
  return 0;
}

/* Async-signal-safe up to its end. */
int sbx_layer_apply_raw(sbx_layer_plan *plan, sbx_layer_process *process,
                        sbx_layer_result *result) {
  result->step = SBX_LAYER_STEP_NONE;
  result->detail = 0;
  result->error = 0;
  result->listener_fd = -1;
  bool inherited = plan->flags & SBX_LAYERS_FILTERS_ONLY;
  int landlock_fd = inherited ? -1 : plan->landlock_fd;
  int rc;
  if (!inherited) {
    rc = apply_credentials(plan, process, result, &landlock_fd);
    if (rc < 0)
      return rc;
  }

  /* /proc can still be read directly: a filter may send every open to
   * the broker. */
  sbx_layer_status kernel;
  if (plan->collect_status)
    sbx_status_collect(process->ns_reference, &kernel);

  size_t loaded = 0;
  rc = apply_filters(plan, process, result, &loaded);
  if (rc < 0)
    return rc;

  /* Step 9. no_new_privs is set (step 6, or by the seccomp loader). */
  if (landlock_fd >= 0) {
    if (sbx_landlock_restrict_self_syscall(landlock_fd,
                                           plan->landlock.restrict_flags) != 0)
      return failed(result, SBX_LAYER_STEP_LANDLOCK, 0, -errno);
    close(landlock_fd);
    plan->landlock_fd = -1; /* closed, whichever number it had */
  }

  if (plan->collect_status && process->status)
    sbx_status_finish(plan, process->early, &kernel, loaded, landlock_fd >= 0,
                      process->status);
  return 0;
}
