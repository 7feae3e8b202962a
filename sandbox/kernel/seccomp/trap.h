/* The SIGSYS trap registry: what runs when a filter returns
 * SECCOMP_RET_TRAP.
 *
 * Handlers are registered per syscall number before any filter that traps
 * is installed; the registry is the one piece of global mutable state in
 * sbx, written only then. The SIGSYS handler ignores a signal whose si_code
 * is not SYS_SECCOMP (a forged kill(SIGSYS) gains nothing), calls the
 * handler for si_syscall, and writes its result into the trapped call's
 * return register (RAX). With no handler registered it writes
 * `sbx: denied syscall NAME(NR) args ...` to stderr with write(2) and
 * kills the process.
 */
#ifndef SBX_KERNEL_SECCOMP_TRAP_H_
#define SBX_KERNEL_SECCOMP_TRAP_H_

#include <stdint.h>

#include <glib.h>

typedef struct {
  int nr;
  uint64_t args[6];
} sbx_trap_call;

/* Runs inside the SIGSYS handler: must be async-signal-safe and must not
 * allocate. Returns the syscall's result: a value >= 0, or -errno. */
typedef intptr_t (*sbx_trap_handler)(const sbx_trap_call *call, void *aux);

#define SBX_TRAP_ERROR (sbx_trap_error_quark())
GQuark sbx_trap_error_quark(void);

typedef enum {
  SBX_TRAP_ERROR_FROZEN,    /* sbx_trap_install() already ran */
  SBX_TRAP_ERROR_RANGE,     /* nr outside 0..SBX_TRAP_MAX_NR-1 */
  SBX_TRAP_ERROR_SIGACTION, /* the kernel refused the SIGSYS handler */
} sbx_trap_error_code;

/* Handlers exist for syscall numbers 0..SBX_TRAP_MAX_NR-1. */
#define SBX_TRAP_MAX_NR 1024

/* Exit status of a process killed for a trapped call without a handler
 * when even raising SIGSYS was refused (128 + SIGSYS, as a shell reports a
 * death by SIGSYS). Normally the process dies by SIGSYS itself. */
#define SBX_TRAP_DENIED_EXIT_STATUS 159

/* Registers the handler for syscall nr (replacing any earlier one). Fails
 * once sbx_trap_install() has run, or for a number out of range. */
gboolean sbx_trap_register(int nr, sbx_trap_handler handler, void *aux,
                           GError **error);

/* Installs the SIGSYS handler and freezes the registry. Idempotent. */
gboolean sbx_trap_install(GError **error);

/* The same, for a zygote or a handler: 0 or -errno (-EBUSY once the
 * registry is frozen, -ERANGE for a number outside it). Async-signal-safe:
 * they allocate nothing and take no lock. */
int sbx_trap_register_raw(int nr, sbx_trap_handler handler, void *aux);
int sbx_trap_install_raw(void);

#endif /* SBX_KERNEL_SECCOMP_TRAP_H_ */
