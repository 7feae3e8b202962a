/* Patching the worker's pid into a precompiled program: see self_pid.h. */
#include "sandbox/zygote/self_pid.h"

static int is_conditional_jump_k(const struct sock_filter *insn) {
  if (BPF_CLASS(insn->code) != BPF_JMP || BPF_SRC(insn->code) != BPF_K)
    return 0;
  switch (BPF_OP(insn->code)) {
    case BPF_JEQ:
    case BPF_JGT:
    case BPF_JGE:
    case BPF_JSET:
      return 1;
    default:
      return 0;
  }
}

int sbx_self_pid_count(const struct sock_filter *insns, size_t len) {
  int count = 0;
  for (size_t i = 0; i < len; i++) {
    if (insns[i].k != SBX_SELF_PID_PLACEHOLDER)
      continue;
    if (!is_conditional_jump_k(&insns[i]))
      return -1;
    count++;
  }
  return count;
}

/* Async-signal-safe: runs in the worker between fork and entry. */
int sbx_self_pid_patch(struct sock_filter *insns, size_t len, pid_t pid) {
  int count = 0;
  for (size_t i = 0; i < len; i++) {
    if (insns[i].k == SBX_SELF_PID_PLACEHOLDER &&
        is_conditional_jump_k(&insns[i])) {
      insns[i].k = (__u32)pid;
      count++;
    }
  }
  return count;
}
