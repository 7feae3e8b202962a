/* Compiling the baseline's built-in text: shared by sbx-run (when the
 * embedded program is not current) and the build-time generator, which
 * cannot link the program it is about to generate. See baseline.h.
 *
 * Trusts the built-in text; refuses nothing (a policy that does not
 * compile is an error).
 */
#include "tools/sbx-run/baseline.h"

#include "sandbox/policy/builtin/builtin.h"

gboolean sbx_run_baseline_compile(sbx_bpf_program *out, GError **error) {
  sbx_policy *pol = sbx_builtin_policy(SBX_RUN_BASELINE_POLICY, error);
  if (!pol)
    return FALSE;
  gboolean ok = sbx_bpf_compile(pol, out, error);
  sbx_policy_free(pol);
  return ok;
}
