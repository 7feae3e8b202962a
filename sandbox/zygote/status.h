/* The sandbox status report (sbx_sandbox_status in sbx/sbx.h), assembled
 * from what the kernel says about each layer.
 *
 * Why it exists: the namespaces module reads back namespaces, credentials,
 * the seccomp filter count and the session (namespaces/status.h); the
 * names of the filters, whether the broker channel is attached and the
 * Landlock ABI are known only to the code that installed them. This file
 * joins the two into the one public struct and prints it.
 *
 * What it trusts: the kernel's answers over the installer's beliefs; a
 * field the kernel could not be asked about stays UNKNOWN.
 * Everything here is ASYNC-SIGNAL-SAFE and allocates nothing.
 */
#ifndef SBX_ZYGOTE_STATUS_H_
#define SBX_ZYGOTE_STATUS_H_

#include <stdbool.h>
#include <stddef.h>

#include "sandbox/kernel/namespaces/status.h"
#include "sbx/sbx.h"

/* What the installer knows and the kernel cannot tell. */
typedef struct {
  const char *process_type;
  const char *const *layer_names; /* n_layers names, in install order */
  size_t n_layers;
  bool broker;      /* a broker channel is attached */
  int landlock_abi; /* the ABI of the enforced ruleset, or -1 for none */
} sbx_status_installed;

/* Fills *out from the kernel's view and the installer's. */
void sbx_status_assemble(const sbx_layer_status *kernel,
                         const sbx_status_installed *installed,
                         sbx_sandbox_status *out);

#endif /* SBX_ZYGOTE_STATUS_H_ */
