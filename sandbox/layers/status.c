/* What is in place in a confined process: see status.h. */
#include "sandbox/layers/status.h"

#include <string.h>

#include "sandbox/kernel/namespaces/fds.h"

/* Async-signal-safe. */
static void copy_name(char *dst, const char *src) {
  size_t n = src ? strlen(src) : 0;
  if (n >= SBX_LAYERS_NAME_MAX)
    n = SBX_LAYERS_NAME_MAX - 1;
  if (n)
    memcpy(dst, src, n);
  dst[n] = '\0';
}

/* The kernel's view, completed with what only the plan knows. Seccomp's
 * and Landlock's own returns are the kernel's word for the layers
 * installed after the reading. Async-signal-safe. */
static void complete(const sbx_layer_plan *plan, const sbx_layer_status *early,
                     sbx_layer_status *kernel, size_t n_filters,
                     bool landlock) {
  for (int i = 0; early && i < SBX_NS_KINDS; i++) {
    if (kernel->ns[i] == SBX_TRI_UNKNOWN)
      kernel->ns[i] = early->ns[i];
  }
  if (n_filters) {
    int before = kernel->seccomp_filters;
    if (before < 0 && early)
      before = early->seccomp_filters;
    kernel->seccomp_mode = 2;
    kernel->seccomp_filters = before >= 0 ? before + (int)n_filters : -1;
  }
  kernel->landlock = landlock ? SBX_TRI_YES : SBX_TRI_NO;
  kernel->landlock_abi = landlock ? plan->landlock.abi : -1;
  int open_now = sbx_fd_list_open_raw(NULL, 0);
  kernel->open_fds = open_now >= 0 ? open_now : -1;
}

/* Async-signal-safe. */
void sbx_status_finish(const sbx_layer_plan *plan,
                       const sbx_layer_status *early, sbx_layer_status *kernel,
                       size_t n_filters, bool landlock,
                       sbx_process_status *out) {
  complete(plan, early, kernel, n_filters, landlock);
  memset(out, 0, sizeof *out);
  copy_name(out->process_type, plan->process_type);
  out->kernel = *kernel;
  for (size_t i = 0; i < n_filters && i < SBX_LAYERS_MAX_FILTERS; i++)
    copy_name(out->filters[i], plan->filters[i].name);
  out->n_filters = n_filters;
  out->broker = plan->broker;
  out->fully_sandboxed =
      sbx_status_is_fully_sandboxed(kernel) && landlock && n_filters > 0;
}
