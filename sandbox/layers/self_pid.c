/* Patching the process's pid into a precompiled program: see self_pid.h. */
#include "sandbox/layers/self_pid.h"

#include <errno.h>

/* Async-signal-safe. */
bool sbx_self_pid_site_ok(const struct sock_filter *insn) {
  if (BPF_CLASS(insn->code) != BPF_JMP || BPF_SRC(insn->code) != BPF_K)
    return false;
  switch (BPF_OP(insn->code)) {
    case BPF_JEQ:
    case BPF_JGT:
    case BPF_JGE:
    case BPF_JSET:
      return true;
    default:
      return false;
  }
}

/* Async-signal-safe: runs in the process after fork, before the load. */
int sbx_self_pid_patch(struct sock_filter *insns, size_t len,
                       const uint32_t *relocs, size_t n_relocs, pid_t pid) {
  for (size_t i = 0; i < n_relocs; i++) {
    if (relocs[i] >= len || !sbx_self_pid_site_ok(&insns[relocs[i]]))
      return -EINVAL;
  }
  for (size_t i = 0; i < n_relocs; i++)
    insns[relocs[i]].k = (__u32)pid;
  return (int)n_relocs;
}
