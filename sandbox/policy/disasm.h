/* A readable listing of a compiled seccomp program (`sbx-policy dump`). */
#ifndef SBX_POLICY_DISASM_H_
#define SBX_POLICY_DISASM_H_

#include <stddef.h>
#include <stdint.h>

#include <glib.h>
#include <linux/filter.h>

/* One line per instruction: its index, the operation with its operands
 * named (struct seccomp_data fields, SECCOMP_RET_* actions, syscall names
 * for comparisons against nr), and absolute jump targets. g_free it. */
char *sbx_bpf_disassemble(const struct sock_filter *insns, size_t len);

/* Appends the verdict a SECCOMP_RET_* value means, as `sbx-policy eval`
 * prints it: allow, errno N, kill-process, kill-thread, trap, trace N,
 * log, user-notify. An unknown action reads as kill-process, as the
 * kernel treats it. */
void sbx_bpf_append_verdict(GString *s, uint32_t ret);

#endif /* SBX_POLICY_DISASM_H_ */
