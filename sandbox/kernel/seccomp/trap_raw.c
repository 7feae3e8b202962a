/* The SIGSYS trap registry and handler, the part that runs in the handler
 * and in a zygote between fork and exec (the GError wrappers are trap.c).
 *
 * Why it exists: SECCOMP_RET_TRAP turns a system call into a SIGSYS that
 * the process handles itself; this is how file system calls of a worker
 * become broker requests, and how a denied call is reported before the
 * process dies.
 *
 * Trusts: signals whose si_code is SYS_SECCOMP and whose saved registers
 * agree with the siginfo (the kernel writes both).
 * Refuses: everything else. A forged SIGSYS (kill, rt_sigqueueinfo) is
 * ignored: no handler runs and no register changes. Replacing the handler
 * or blocking SIGSYS gains nothing: the filter still refuses the call, and
 * the kernel kills a process whose SIGSYS is blocked when a trap fires.
 *
 * The registry is the one piece of global mutable state in sbx: written
 * before sbx_trap_install(), read-only after.
 */
#include "sandbox/kernel/seccomp/trap.h"

#include <errno.h>
#include <linux/audit.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "sandbox/base/syscalls.h"

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif

typedef struct {
  sbx_trap_handler handler;
  void *aux;
} trap_slot;

static trap_slot registry[SBX_TRAP_MAX_NR];
static int registry_frozen;

/* Async-signal-safe. */
int sbx_trap_register_raw(int nr, sbx_trap_handler handler, void *aux) {
  if (__atomic_load_n(&registry_frozen, __ATOMIC_ACQUIRE))
    return -EBUSY;
  if (nr < 0 || nr >= SBX_TRAP_MAX_NR)
    return -ERANGE;
  registry[nr].handler = handler;
  registry[nr].aux = aux;
  return 0;
}

/* Async-signal-safe text building for the denial line. */
typedef struct {
  char buf[256];
  size_t len;
} line_buf;

static void put_str(line_buf *line, const char *s) {
  while (*s && line->len < sizeof(line->buf))
    line->buf[line->len++] = *s++;
}

static void put_dec(line_buf *line, long value) {
  char digits[24];
  size_t n = 0;
  unsigned long v =
      value < 0 ? 0ul - (unsigned long)value : (unsigned long)value;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  if (value < 0)
    put_str(line, "-");
  while (n > 0 && line->len < sizeof(line->buf))
    line->buf[line->len++] = digits[--n];
}

static void put_hex(line_buf *line, uint64_t value) {
  char digits[16];
  size_t n = 0;
  do {
    digits[n++] = "0123456789abcdef"[value & 15];
    value >>= 4;
  } while (value);
  put_str(line, "0x");
  while (n > 0 && line->len < sizeof(line->buf))
    line->buf[line->len++] = digits[--n];
}

/* Runs in the SIGSYS handler: async-signal-safe, allocates nothing.
 * Dies by SIGSYS: the handler is reset first, so the signal (or any call
 * on the way that the filter traps) ends the process. Exits with
 * SBX_TRAP_DENIED_EXIT_STATUS if the filter refuses even that. */
static void report_and_die(const sbx_trap_call *call, uint32_t arch) {
  line_buf line = {.len = 0};
  const char *name =
      arch == AUDIT_ARCH_X86_64 ? sbx_syscall_name(call->nr) : NULL;
  put_str(&line, "sbx: denied syscall ");
  put_str(&line, name ? name : "unknown");
  put_str(&line, "(");
  put_dec(&line, call->nr);
  put_str(&line, ")");
  if (arch != AUDIT_ARCH_X86_64) {
    put_str(&line, " arch ");
    put_hex(&line, arch);
  }
  put_str(&line, " args");
  for (int i = 0; i < 6; i++) {
    put_str(&line, " ");
    put_hex(&line, call->args[i]);
  }
  if (line.len == sizeof(line.buf))
    line.len--;
  line.buf[line.len++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, line.buf, line.len);
  (void)ignored;

  struct sigaction dfl;
  memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGSYS, &dfl, NULL);
  sigset_t sigsys;
  sigemptyset(&sigsys);
  sigaddset(&sigsys, SIGSYS);
  sigprocmask(SIG_UNBLOCK, &sigsys, NULL);
  syscall(SYS_tgkill, (long)syscall(SYS_getpid), (long)syscall(SYS_gettid),
          (long)SIGSYS);
  syscall(SYS_exit_group, (long)SBX_TRAP_DENIED_EXIT_STATUS);
  _exit(SBX_TRAP_DENIED_EXIT_STATUS);
}

/* The SIGSYS handler. Async-signal-safe, allocates nothing, saves errno.
 * Registered with SA_NODEFER: a handler that itself makes a trapped call
 * re-enters here and gets an answer, instead of the kernel killing the
 * process because SIGSYS is blocked during its own handler. */
static void on_sigsys(int sig, siginfo_t *info, void *context) {
  if (sig != SIGSYS || info == NULL || context == NULL ||
      info->si_code != SYS_SECCOMP)
    return;
  ucontext_t *uc = context;
  greg_t *regs = uc->uc_mcontext.gregs;
  /* The kernel rolls RAX back to the call number and reports the address
   * after the syscall instruction; a queued signal rarely fits both. */
  if ((uintptr_t)info->si_call_addr != (uintptr_t)regs[REG_RIP] ||
      (long)info->si_syscall != (long)regs[REG_RAX])
    return;
  int saved_errno = errno;
  sbx_trap_call call;
  call.nr = info->si_syscall;
  call.args[0] = (uint64_t)regs[REG_RDI];
  call.args[1] = (uint64_t)regs[REG_RSI];
  call.args[2] = (uint64_t)regs[REG_RDX];
  call.args[3] = (uint64_t)regs[REG_R10];
  call.args[4] = (uint64_t)regs[REG_R8];
  call.args[5] = (uint64_t)regs[REG_R9];
  uint32_t arch = (uint32_t)info->si_arch;
  if (arch == AUDIT_ARCH_X86_64 && call.nr >= 0 && call.nr < SBX_TRAP_MAX_NR &&
      registry[call.nr].handler != NULL) {
    intptr_t result = registry[call.nr].handler(&call, registry[call.nr].aux);
    regs[REG_RAX] = (greg_t)result;
    errno = saved_errno;
    return;
  }
  report_and_die(&call, arch);
}

/* Async-signal-safe. */
int sbx_trap_install_raw(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  __atomic_store_n(&registry_frozen, 1, __ATOMIC_RELEASE);
  if (sigaction(SIGSYS, &sa, NULL) != 0)
    return -errno;
  /* A trap that fires while SIGSYS is blocked kills the process; make sure
   * the installing thread can take it. */
  sigset_t sigsys;
  sigemptyset(&sigsys);
  sigaddset(&sigsys, SIGSYS);
  pthread_sigmask(SIG_UNBLOCK, &sigsys, NULL);
  return 0;
}
