/* The embedded baselines; see baseline.h. */
#include "sandbox/runner/baseline.h"

void sbx_run_baseline(bool kernel, sbx_bpf_program *out) {
  /* Neither policy has a self-pid relocation. */
  *out = (sbx_bpf_program){0};
  out->len = kernel ? sbx_run_kernel_baseline_len : sbx_run_baseline_len;
  out->insns =
      g_memdup2(kernel ? sbx_run_kernel_baseline_insns : sbx_run_baseline_insns,
                out->len * sizeof(struct sock_filter));
}
