/* The sandbox status report (sbx_sandbox_status in sbx/sbx.h), assembled
 * from what the kernel says about each layer.
 *
 * Why it exists: the namespaces module reads back namespaces, credentials,
 * the seccomp filter count and the session (namespaces/status.h); the
 * names of the filters, whether the broker channel is attached and the
 * Landlock ABI are known only to the plan that installed them. This file
 * joins the two into the one public struct and prints it, for every kind
 * of process the layers engine confines.
 *
 * What it trusts: the kernel's answers over the installer's beliefs; a
 * field the kernel could not be asked about stays UNKNOWN.
 * Everything here is ASYNC-SIGNAL-SAFE and allocates nothing.
 */
#ifndef SBX_LAYERS_STATUS_H_
#define SBX_LAYERS_STATUS_H_

#include <stdbool.h>
#include <stddef.h>

#include "sandbox/kernel/namespaces/status.h"
#include "sandbox/layers/plan.h"
#include "sbx/sbx.h"

/* Fills *out from the kernel's view, read after the credentials and
 * before the filters (kernel; early, when not NULL, is an earlier reading
 * whose namespaces count where kernel's are unknown), and from what plan
 * installed after it: n_filters filters loaded (seccomp(2) returning 0 is
 * the kernel's word), Landlock enforced or not. Counts the open
 * descriptors now. */
void sbx_status_finish(const sbx_layer_plan *plan,
                       const sbx_layer_status *early, sbx_layer_status *kernel,
                       size_t n_filters, bool landlock,
                       sbx_sandbox_status *out);

#endif /* SBX_LAYERS_STATUS_H_ */
