/* Compiling the baseline's built-in text: for the build-time generator,
 * which cannot link the program it is about to generate, and the test that
 * compares the two. See baseline.h.
 *
 * Trusts the built-in text; refuses nothing (a policy that does not
 * compile is an error).
 */
#include "sandbox/runner/baseline.h"

#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/policy/compiler.h"

gboolean sbx_run_baseline_compile(const char *name, sbx_bpf_program *out,
                                  GError **error) {
  sbx_policy *pol = sbx_builtin_policy(name, error);
  if (!pol)
    return FALSE;
  gboolean ok = sbx_bpf_compile(pol, out, error);
  sbx_policy_free(pol);
  return ok;
}
