/* Patching the process's pid into a precompiled program: see self_pid.h. */
#include "sandbox/layers/self_pid.h"

#include <errno.h>

#include "sandbox/layers/plan.h"

/* Async-signal-safe. */
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

gboolean sbx_self_pid_check(const sbx_bpf_program *program, GError **error) {
  for (size_t i = 0; i < program->n_self_pid_relocs; i++) {
    uint32_t at = program->self_pid_relocs[i];
    if (at >= program->len || !is_conditional_jump_k(&program->insns[at]) ||
        program->insns[at].k != SBX_BPF_SELF_PID_UNPATCHED) {
      g_set_error(error, SBX_LAYERS_ERROR, SBX_LAYERS_ERROR_INVALID,
                  "self-pid relocation %zu names instruction %u of a "
                  "%zu-instruction program, which is not a conditional "
                  "jump on 0x%x: the program and its relocations do not "
                  "belong together",
                  i, at, program->len, SBX_BPF_SELF_PID_UNPATCHED);
      return FALSE;
    }
  }
  return TRUE;
}

/* Async-signal-safe: runs in the process after fork, before the load. */
int sbx_self_pid_patch(struct sock_filter *insns, size_t len,
                       const uint32_t *relocs, size_t n_relocs, pid_t pid) {
  for (size_t i = 0; i < n_relocs; i++) {
    if (relocs[i] >= len || !is_conditional_jump_k(&insns[relocs[i]]))
      return -EINVAL;
  }
  for (size_t i = 0; i < n_relocs; i++)
    insns[relocs[i]].k = (__u32)pid;
  return (int)n_relocs;
}
