/* The embedded baselines; see baseline.h. */
#include "sandbox/runner/baseline.h"

void sbx_run_baseline(bool kernel, bool ptrace, sbx_bpf_program *out) {
  /* Neither policy has a self-pid relocation. */
  const sbx_run_embedded_baseline *e = &sbx_run_baselines[kernel][ptrace];
  *out = (sbx_bpf_program){0};
  out->len = e->len;
  out->insns = g_memdup2(e->insns, e->len * sizeof(struct sock_filter));
}
