/* The public status report (sbx_sandbox_status), rendered from what the
 * layers engine found in place (sbx_process_status, layers/status.h).
 *
 * Why it exists: the engine keeps the kernel's answers in its own terms
 * (tristates, capability sets, filter counts); a host gets one state per
 * layer, the names of the filters sbx installed and one verdict. The
 * rendering lives with the public API so that nothing below it depends on
 * the public header.
 *
 * What it trusts: the engine's report; an unknown answer stays
 * SBX_LAYER_UNKNOWN. Everything here is async-signal-safe and allocates
 * nothing: a worker renders its own report before its entry runs.
 */
#ifndef SBX_API_STATUS_H_
#define SBX_API_STATUS_H_

#include "sandbox/layers/status.h"
#include "sbx/sbx.h"

/* Fills every field of *out this library knows from in.
 * Async-signal-safe. */
void sbx_api_status_render(const sbx_process_status *in,
                           sbx_sandbox_status *out);

#endif /* SBX_API_STATUS_H_ */
