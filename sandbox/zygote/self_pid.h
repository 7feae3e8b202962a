/* The worker's own pid in a program compiled before the worker existed.
 *
 * Why it exists: kill, tgkill and rt_(tg)sigqueueinfo may target only the
 * worker itself (S19), but the zygote compiles every policy once, before
 * any worker is forked, so the pid cannot be a constant of the policy. The
 * built-in policies compare those arguments with a placeholder instead,
 * SBX_SELF_PID_PLACEHOLDER, a positive int far above the kernel's largest
 * possible pid (PID_MAX_LIMIT, 4194304), so it names no process. After
 * fork, the worker rewrites every comparison constant equal to the
 * placeholder in its own copy of the program with getpid(), then loads
 * it. Compiling per worker would cost ~250 us per spawn; this costs a
 * scan of the program and one copy-on-write page.
 *
 * What it refuses: a program where the placeholder appears anywhere but
 * as the constant of a conditional jump is left unpatched and reported,
 * since rewriting a syscall number or a return value would change the
 * program's meaning.
 */
#ifndef SBX_ZYGOTE_SELF_PID_H_
#define SBX_ZYGOTE_SELF_PID_H_

#include <stddef.h>
#include <sys/types.h>

#include <linux/filter.h>

/* 0x7fff5e1f: "self", as an int no pid can equal. Policies write it as the
 * number 2147442207. */
#define SBX_SELF_PID_PLACEHOLDER 0x7fff5e1fu

/* Counts the instructions that carry the placeholder as a jump constant;
 * -1 if it appears in any other kind of instruction. Async-signal-safe. */
int sbx_self_pid_count(const struct sock_filter *insns, size_t len);

/* Rewrites every placeholder jump constant in insns with pid. Returns the
 * number rewritten. Async-signal-safe; for the worker after fork. */
int sbx_self_pid_patch(struct sock_filter *insns, size_t len, pid_t pid);

#endif /* SBX_ZYGOTE_SELF_PID_H_ */
