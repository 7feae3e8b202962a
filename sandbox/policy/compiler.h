/* The policy -> BPF compiler: a parsed policy (policy.h) becomes a seccomp
 * program (sandbox/kernel/seccomp/bpf.h) that decides every input exactly
 * as sbx_policy_eval() does. docs/bpf.md describes the layout.
 */
#ifndef SBX_POLICY_COMPILER_H_
#define SBX_POLICY_COMPILER_H_

#include <glib.h>

#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/policy/policy.h"

/* Compiles policy into *out. On failure *out is left empty; the error is
 * in SBX_BPF_ERROR and names the rule. */
gboolean sbx_bpf_compile(const sbx_policy *policy, sbx_bpf_program *out,
                         GError **error);

#endif /* SBX_POLICY_COMPILER_H_ */
