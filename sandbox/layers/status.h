/* What is in place in one confined process: the kernel's reading of each
 * layer, completed with what only the plan that installed them knows.
 *
 * Why it exists: the namespaces module reads back namespaces, credentials,
 * the seccomp filter count and the session (namespaces/status.h); the
 * names of the filters, whether the broker channel is attached and the
 * Landlock ABI are known only to the plan that installed them. This file
 * joins the two, for every kind of process the layers engine confines.
 * The public report (sbx_sandbox_status) is the API's rendering of it
 * (sandbox/api/status.h); nothing here knows the public header.
 *
 * What it trusts: the kernel's answers over the installer's beliefs; a
 * field the kernel could not be asked about stays unknown.
 * Everything here is Async-signal-safe and allocates nothing.
 */
#ifndef SBX_LAYERS_STATUS_H_
#define SBX_LAYERS_STATUS_H_

#include <stdbool.h>
#include <stddef.h>

#include "sandbox/kernel/namespaces/status.h"
#include "sandbox/layers/plan.h"

typedef struct {
  char process_type[SBX_LAYERS_NAME_MAX];
  /* The kernel's reading, completed: namespaces an earlier reading saw
   * where the later one could not tell, seccomp from the loader's
   * successful returns, Landlock from the plan's, open descriptors counted
   * last. */
  sbx_layer_status kernel;
  size_t n_filters; /* the filters the plan installed, in order */
  char filters[SBX_LAYERS_MAX_FILTERS][SBX_LAYERS_NAME_MAX];
  bool broker; /* the first filter sends file-system calls to the broker */
  /* Every layer a worker needs is in place (namespaces, credentials,
   * seccomp with at least one filter of the plan, Landlock). */
  bool fully_sandboxed;
} sbx_process_status;

/* Fills *out from the kernel's view, read after the credentials and
 * before the filters (kernel; early, when not NULL, is an earlier reading
 * whose namespaces count where kernel's are unknown), and from what plan
 * installed after it: n_filters filters loaded (seccomp(2) returning 0 is
 * the kernel's word), Landlock enforced or not. Counts the open
 * descriptors now. */
void sbx_status_finish(const sbx_layer_plan *plan,
                       const sbx_layer_status *early, sbx_layer_status *kernel,
                       size_t n_filters, bool landlock,
                       sbx_process_status *out);

#endif /* SBX_LAYERS_STATUS_H_ */
