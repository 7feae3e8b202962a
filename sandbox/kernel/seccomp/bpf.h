/* Compiled seccomp programs, and an interpreter that runs a program on one
 * input exactly as the kernel does. The compiler that makes them from a
 * policy is sandbox/policy/compiler.h.
 *
 * The program format is contract 4 of docs/design.md: a raw array of
 * struct sock_filter, the bytes libseccomp's seccomp_export_bpf and
 * minijail's --dump write.
 */
#ifndef SBX_KERNEL_SECCOMP_BPF_H_
#define SBX_KERNEL_SECCOMP_BPF_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

/* The constant of a comparison with the process's own pid (SBX_SELF_PID
 * in a policy, docs/policy-language.md) until the process patches it: a
 * positive int above PID_MAX_LIMIT (4194304), so an unpatched program
 * names no process. */
#define SBX_BPF_SELF_PID_UNPATCHED 0x7fff5e1fu

typedef struct {
  struct sock_filter *insns; /* owned; g_free'd by sbx_bpf_program_clear */
  size_t len;
  /* Relocations: the indices, in increasing order, of the conditional
   * jumps whose constant is the process's own pid. Recorded by the
   * compiler; the process writes getpid() there and nowhere else
   * (sandbox/layers/self_pid.h). Owned; NULL when there is none. */
  uint32_t *self_pid_relocs;
  size_t n_self_pid_relocs;
} sbx_bpf_program;

#define SBX_BPF_ERROR (sbx_bpf_error_quark())
GQuark sbx_bpf_error_quark(void);

typedef enum {
  SBX_BPF_ERROR_INVALID_POLICY,  /* the compiler: the policy is malformed */
  SBX_BPF_ERROR_TOO_LONG,        /* more than BPF_MAXINSNS instructions */
  SBX_BPF_ERROR_INVALID_PROGRAM, /* seccomp(2) would refuse the program */
} sbx_bpf_error_code;

void sbx_bpf_program_clear(sbx_bpf_program *program);

/* A deep copy of src, relocations included, into *dst. */
void sbx_bpf_program_copy(sbx_bpf_program *dst, const sbx_bpf_program *src);

/* A copy of src (relocations included) in which every `return ERRNO|n`
 * returns SECCOMP_RET_USER_NOTIF instead, so a supervisor holding the
 * listener hears each call the program refuses with an errno; it finds n
 * again by running src on the notification's data. The kernel ranks a
 * notification below an errno, so stacked beside other filters the copy
 * refuses nothing that src let another filter decide. Fails for a program
 * that returns the accumulator (its verdicts are not all visible). */
gboolean sbx_bpf_notify_errno_verdicts(sbx_bpf_program *dst,
                                       const sbx_bpf_program *src,
                                       GError **error);

/* The same for every refusal: errno, trap, trace and both kills become
 * notifications, allow and log stay. For learning what a process needs:
 * the supervisor may then let the call continue. */
gboolean sbx_bpf_notify_refusals(sbx_bpf_program *dst,
                                 const sbx_bpf_program *src, GError **error);

/* Runs a program on one input. Returns the SECCOMP_RET_* value; an invalid
 * program (bad opcode, jump out of range, no return) yields
 * SECCOMP_RET_KILL_PROCESS. If insns_executed is not NULL it receives the
 * number of instructions executed. */
uint32_t sbx_bpf_run(const struct sock_filter *insns, size_t len,
                     const struct seccomp_data *data, size_t *insns_executed);

/* Applies the checks seccomp(2) makes before it accepts a program (length,
 * opcodes, jump targets, return at the end, scratch memory written before
 * it is read, aligned loads inside struct seccomp_data). The error names
 * the first offending instruction. */
gboolean sbx_bpf_check(const struct sock_filter *insns, size_t len,
                       GError **error);

/* sbx_bpf_run for a program sbx_bpf_check already accepted: skips the
 * whole-program check, so running many inputs costs only the instructions
 * executed. Still never reads outside the program or the input. */
uint32_t sbx_bpf_run_checked(const struct sock_filter *insns, size_t len,
                             const struct seccomp_data *data,
                             size_t *insns_executed);

/* What the kernel's action cache sees (docs/bpf.md, "The kernel's action
 * cache"): runs the program for one (arch, nr) knowing nothing else, as
 * the kernel does when it attaches a filter. True, with the returned value
 * in *action, when the path loads nothing but nr and arch; false when it
 * loads an argument or the instruction pointer (or uses an instruction the
 * kernel's emulation does not follow) before it returns. The kernel skips
 * every filter for a call whose action is SECCOMP_RET_ALLOW this way in
 * each of them. */
bool sbx_bpf_const_action(const struct sock_filter *insns, size_t len,
                          uint32_t arch, uint32_t nr, uint32_t *action);

#endif /* SBX_KERNEL_SECCOMP_BPF_H_ */
