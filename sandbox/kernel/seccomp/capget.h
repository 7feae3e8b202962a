/* capget(2), answered for the caller only.
 *
 * Why it exists: capget takes a pid, and the kernel answers ESRCH for a
 * pid that does not exist and the capability sets of one that does. In a
 * worker that is an oracle of which pids exist beside it (its siblings,
 * the zygote) even though it may signal, trace or open none of them (S39).
 * The pid sits in a structure in the caller's memory, which a filter
 * cannot read, so the policies trap capget and this handler answers it:
 * for pid 0 or the caller's own pid or thread id exactly as the kernel
 * would for a process that holds no capability (every sandboxed process
 * has dropped all of them before its filters load: S33), EPERM for any
 * other pid, whether it exists or not.
 *
 * What it trusts: the header the caller passes is copied once; the data
 * it writes is all zeroes, so a racing thread can change nothing but its
 * own view.
 */
#ifndef SBX_KERNEL_SECCOMP_CAPGET_H_
#define SBX_KERNEL_SECCOMP_CAPGET_H_

/* Registers the capget handler with the trap registry (trap.h); call
 * before sbx_trap_install(). Returns 0 or -EBUSY when the registry is
 * already frozen. Async-signal-safe and allocates nothing: the zygote
 * calls it. */
int sbx_capget_register_raw(void);

#endif /* SBX_KERNEL_SECCOMP_CAPGET_H_ */
