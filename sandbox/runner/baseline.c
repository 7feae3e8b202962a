/* The embedded baseline; see baseline.h. */
#include "sandbox/runner/baseline.h"

void sbx_run_baseline(sbx_bpf_program *out) {
  *out = (sbx_bpf_program){0}; /* sbx-run.policy has no self-pid relocation */
  out->len = sbx_run_baseline_len;
  out->insns = g_memdup2(sbx_run_baseline_insns,
                         sbx_run_baseline_len * sizeof(struct sock_filter));
}
