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
#include "sandbox/base/syscalls.h"

sbx_policy *sbx_run_baseline_policy(const char *name, bool ptrace,
                                    GError **error) {
  sbx_policy *pol = sbx_builtin_policy(name, error);
  for (int nr = 0; pol && ptrace && nr < sbx_syscall_max(); nr++)
    if (sbx_syscall_is_tracing(nr))
      sbx_policy_allow_call(pol, nr, sbx_syscall_name(nr), "--allow-ptrace");
  return pol;
}

gboolean sbx_run_baseline_compile(const char *name, bool ptrace,
                                  sbx_bpf_program *out, GError **error) {
  sbx_policy *pol = sbx_run_baseline_policy(name, ptrace, error);
  if (!pol)
    return FALSE;
  gboolean ok = sbx_bpf_compile(pol, out, error);
  sbx_policy_free(pol);
  return ok;
}
