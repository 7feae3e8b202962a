/* Preparing a plan on the parent side; see plan.h. Also the GError face
 * of apply.h for processes that confine themselves.
 *
 * Trusts the caller's programs and rules; checks their shape (sizes,
 * relocations) here, so the child side only applies finished artefacts.
 */
#include "sandbox/layers/plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/layers/apply.h"
#include "sandbox/layers/missing.h"
#include "sandbox/layers/self_pid.h"

GQuark sbx_layers_error_quark(void) {
  return g_quark_from_static_string("sbx-layers-error-quark");
}

void sbx_layer_plan_init(sbx_layer_plan *plan, const char *process_type,
                         unsigned flags) {
  memset(plan, 0, sizeof *plan);
  g_strlcpy(plan->process_type, process_type ? process_type : "",
            sizeof plan->process_type);
  plan->flags = flags;
  plan->landlock_fd = -1;
  plan->landlock.abi = -1;
  plan->listener_filter = (flags & SBX_LAYERS_LISTENER) ? 0 : -1;
}

void sbx_layer_plan_clear(sbx_layer_plan *plan) {
  /* Every slot: a process may load fewer filters than its plan was given
   * (the zygote's direct-open guard), and the rest are zero. */
  for (size_t i = 0; i < SBX_LAYERS_MAX_FILTERS; i++)
    sbx_bpf_program_clear(&plan->filters[i].program);
  if (plan->landlock_fd >= 0)
    close(plan->landlock_fd);
  sbx_layer_plan_init(plan, "", 0);
}

gboolean sbx_layer_plan_add_filter(sbx_layer_plan *plan, const char *name,
                                   const sbx_bpf_program *program,
                                   GError **error) {
  if (plan->n_filters == SBX_LAYERS_MAX_FILTERS) {
    g_set_error(error, SBX_LAYERS_ERROR, SBX_LAYERS_ERROR_INVALID,
                "seccomp filter %s: at most %d filters can be stacked "
                "(a broker-client layer counts as one)",
                name, SBX_LAYERS_MAX_FILTERS);
    return FALSE;
  }
  if (!program->insns || program->len == 0 || program->len > BPF_MAXINSNS) {
    g_set_error(error, SBX_LAYERS_ERROR, SBX_LAYERS_ERROR_INVALID,
                "seccomp filter %s is empty or longer than %d instructions",
                name, BPF_MAXINSNS);
    return FALSE;
  }
  if (!sbx_self_pid_check(program, error)) {
    g_prefix_error(error, "seccomp filter %s: ", name);
    return FALSE;
  }
  sbx_layer_filter *f = &plan->filters[plan->n_filters++];
  g_strlcpy(f->name, name ? name : "unnamed", sizeof f->name);
  sbx_bpf_program_copy(&f->program, program);
  return TRUE;
}

gboolean sbx_layer_plan_add_rlimits(sbx_layer_plan *plan,
                                    const sbx_rlimit *limits, size_t n,
                                    GError **error) {
  if (n > SBX_LAYERS_MAX_RLIMITS - plan->n_rlimits) {
    g_set_error(error, SBX_LAYERS_ERROR, SBX_LAYERS_ERROR_INVALID,
                "at most %d resource limits", SBX_LAYERS_MAX_RLIMITS);
    return FALSE;
  }
  if (n)
    memcpy(&plan->rlimits[plan->n_rlimits], limits, n * sizeof *limits);
  plan->n_rlimits += n;
  return TRUE;
}

gboolean sbx_layer_plan_set_landlock(sbx_layer_plan *plan,
                                     sbx_landlock_builder *b,
                                     sbx_landlock_need need, int min_abi,
                                     GError **error) {
  if (min_abi > 0)
    sbx_landlock_require_abi(b, min_abi);
  GError *local = NULL;
  int fd = sbx_landlock_build(b, &plan->landlock, &local);
  sbx_landlock_builder_free(b);
  if (fd >= 0) {
    if (plan->landlock_fd >= 0)
      close(plan->landlock_fd);
    plan->landlock_fd = fd;
    return TRUE;
  }
  plan->landlock.abi = -1;
  bool missing = g_error_matches(local, SBX_LANDLOCK_ERROR,
                                 SBX_LANDLOCK_ERROR_UNSUPPORTED);
  if (missing) {
    /* A minimum ABI is a demand: it outweighs optional. */
    bool required = need == SBX_LANDLOCK_REQUIRED || min_abi > 0;
    gboolean ok = sbx_layer_missing(SBX_LAYER_LANDLOCK, required,
                                    need == SBX_LANDLOCK_OPTIONAL_QUIET,
                                    plan->process_type, local->message, error);
    g_error_free(local);
    return ok;
  }
  bool too_old = g_error_matches(local, SBX_LANDLOCK_ERROR,
                                 SBX_LANDLOCK_ERROR_KERNEL_TOO_OLD);
  g_set_error(error, SBX_LAYERS_ERROR,
              too_old ? SBX_LAYERS_ERROR_UNSUPPORTED : SBX_LAYERS_ERROR_FAILED,
              "landlock: %s", local->message);
  g_error_free(local);
  return FALSE;
}

/* The kernel's own count, field 20 of /proc/self/stat; a directory walk
 * of /proc/self/task could race with threads starting and ending. */
long sbx_thread_count(void) {
  g_autofree char *stat = NULL;
  if (!g_file_get_contents("/proc/self/stat", &stat, NULL, NULL))
    return -1;
  const char *p = strrchr(stat, ')'); /* the command name may hold spaces */
  for (int field = 2; p && field < 20; field++)
    p = strchr(p + 1, ' ');
  return p ? strtol(p + 1, NULL, 10) : -1;
}

static const char *step_hint(const sbx_layer_result *r) {
  switch (r->step) {
    case SBX_LAYER_STEP_CAPABILITIES:
      return r->error == EPERM
                 ? " (the process holds capabilities but not CAP_SETPCAP, "
                   "so its bounding set cannot be emptied; drop them before "
                   "calling, or enter a user namespace)"
                 : "";
    case SBX_LAYER_STEP_SECCOMP:
      return r->error == ESRCH ? " (another thread runs under a filter that "
                                 "is not this thread's; install the filters "
                                 "before starting threads)"
                               : "";
    case SBX_LAYER_STEP_LANDLOCK:
      return r->error == E2BIG ? " (at most 16 Landlock domains can be "
                                 "stacked)"
                               : "";
    default:
      return "";
  }
}

char *sbx_layer_result_describe(const sbx_layer_plan *plan,
                                const sbx_layer_result *r) {
  g_autofree char *which = NULL;
  if (r->step == SBX_LAYER_STEP_SECCOMP && r->detail >= 0 &&
      (size_t)r->detail < plan->n_filters) {
    which =
        g_strdup_printf(" %d (%s)", r->detail, plan->filters[r->detail].name);
  } else if (r->step == SBX_LAYER_STEP_RLIMITS && r->detail >= 0 &&
             (size_t)r->detail < plan->n_rlimits) {
    const char *name = sbx_rlimit_name(plan->rlimits[r->detail].resource);
    which = g_strdup_printf(" %d (%s)", r->detail, name ? name : "unknown");
  }
  return g_strdup_printf("%s%s: %s%s", sbx_layer_step_name(r->step),
                         which ? which : "", g_strerror(r->error),
                         step_hint(r));
}

gboolean sbx_layer_apply(sbx_layer_plan *plan, sbx_layer_process *process,
                         GError **error) {
  sbx_layer_result r;
  if (sbx_layer_apply_raw(plan, process, &r) == 0)
    return TRUE;
  g_autofree char *what = sbx_layer_result_describe(plan, &r);
  g_set_error(error, SBX_LAYERS_ERROR, SBX_LAYERS_ERROR_FAILED, "%s", what);
  return FALSE;
}

gboolean sbx_self_pid_check(const sbx_bpf_program *program, GError **error) {
  for (size_t i = 0; i < program->n_self_pid_relocs; i++) {
    uint32_t at = program->self_pid_relocs[i];
    if (at >= program->len || !sbx_self_pid_site_ok(&program->insns[at]) ||
        program->insns[at].k != SBX_BPF_SELF_PID_UNPATCHED) {
      g_set_error(error, SBX_LAYERS_ERROR, SBX_LAYERS_ERROR_INVALID,
                  "self-pid relocation %zu names instruction %u of a "
                  "%zu-instruction program, which is not a conditional "
                  "jump on 0x%x: the program and its relocations do not "
                  "belong together",
                  i, at, program->len, SBX_BPF_SELF_PID_UNPATCHED);
      return FALSE;
    }
  }
  return TRUE;
}
