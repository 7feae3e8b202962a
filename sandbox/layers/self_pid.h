/* The process's own pid in a program compiled before the process existed.
 *
 * Why it exists: kill, tgkill and rt_(tg)sigqueueinfo may target only the
 * process itself (S19), but a zygote compiles every policy once, before
 * any worker is forked, so the pid cannot be a constant of the policy.
 * Policies compare with the named constant SBX_SELF_PID instead; the
 * compiler emits SBX_BPF_SELF_PID_UNPATCHED (a value no pid can equal) for
 * it and records each jump that holds it as a relocation of the program
 * (sandbox/kernel/seccomp/bpf.h). After fork, the process writes its
 * getpid() at exactly those instructions of its own copy, then loads it.
 * Compiling per worker would cost ~250 us per spawn; this costs one store
 * per relocation and one copy-on-write page.
 *
 * What it trusts: the compiler's relocation list, checked when a plan
 * takes the program. What it refuses: a relocation outside the program or
 * on an instruction other than a conditional jump on a constant; a
 * constant that merely equals the placeholder (a literal in a policy) is
 * never touched.
 */
#ifndef SBX_LAYERS_SELF_PID_H_
#define SBX_LAYERS_SELF_PID_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>
#include <linux/filter.h>

#include "sandbox/kernel/seccomp/bpf.h"

/* Parent side (plan.c): every relocation of program names a conditional jump
 * whose constant is SBX_BPF_SELF_PID_UNPATCHED. The error names the first one
 * that does not. */
gboolean sbx_self_pid_check(const sbx_bpf_program *program, GError **error);

/* Whether insn can carry the pid: a conditional jump on a constant.
 * Async-signal-safe. */
bool sbx_self_pid_site_ok(const struct sock_filter *insn);

/* Writes pid into the constant of each relocated instruction. Returns the
 * number written, or -EINVAL (nothing written) when a relocation is out of
 * range or names an instruction other than a conditional jump.
 * Async-signal-safe. */
int sbx_self_pid_patch(struct sock_filter *insns, size_t len,
                       const uint32_t *relocs, size_t n_relocs, pid_t pid);

#endif /* SBX_LAYERS_SELF_PID_H_ */
