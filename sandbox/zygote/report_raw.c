/* Worker end-of-life records, the worker's and the zygote's side (report.c
 * describes them for the host); see report.h. */
#include "sandbox/zygote/report.h"

#include <asm/unistd.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/kernel/seccomp/trap.h"
#include "sandbox/base/syscalls.h"

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

/* Numbers the registry might accept past the syscall table's end. */
#define REPORT_NR_SEARCH_LIMIT 4096

/* Async-signal-safe: between fork and entry. */
void sbx_report_setup_failure(int fd, sbx_layer_step step, int detail,
                              int error) {
  sbx_worker_report r;
  memset(&r, 0, sizeof r);
  r.magic = SBX_REPORT_MAGIC;
  r.kind = SBX_REPORT_SETUP_FAILED;
  r.nr = -1;
  r.step = step;
  r.detail = detail;
  r.error = error;
  if (fd >= 0) {
    ssize_t n;
    do {
      n = write(fd, &r, sizeof r);
    } while (n < 0 && errno == EINTR);
  }
}

/* Runs inside the SIGSYS handler: async-signal-safe, allocates nothing,
 * never returns. Records the call, then has the kernel kill the process:
 * an x32 system call number is killed by every compiled policy's arch
 * check, so the wait status is a genuine SIGSYS death. If some filter let
 * it through, the default SIGSYS action finishes the job. */
static intptr_t report_policy_kill(const sbx_trap_call *call, void *aux) {
  const int *report_fd = aux;
  sbx_worker_report r;
  memset(&r, 0, sizeof r);
  r.magic = SBX_REPORT_MAGIC;
  r.kind = SBX_REPORT_POLICY_KILL;
  r.nr = call->nr;
  memcpy(r.args, call->args, sizeof r.args);
  if (*report_fd >= 0) {
    long n;
    do {
      n = syscall(__NR_write, *report_fd, &r, sizeof r);
    } while (n < 0 && errno == EINTR);
  }
  syscall(__X32_SYSCALL_BIT | __NR_getpid);

  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGSYS, &dfl, NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGSYS);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  syscall(__NR_tgkill, getpid(), syscall(__NR_gettid), SIGSYS);
  _exit(128 + SIGSYS);
}

int sbx_report_register_kill_handlers_raw(const int *report_fd) {
  int table_end = sbx_syscall_max();
  for (int nr = 0; nr < REPORT_NR_SEARCH_LIMIT; nr++) {
    if (sbx_trap_register_raw(nr, report_policy_kill, (void *)report_fd) == 0)
      continue;
    if (nr < table_end)
      return -EINVAL;
    break; /* the registry's range ends here */
  }
  return 0;
}

/* Async-signal-safe. */
gboolean sbx_report_read(int fd, sbx_worker_report *out) {
  memset(out, 0, sizeof *out);
  if (fd < 0)
    return FALSE;
  sbx_worker_report r;
  ssize_t n;
  do {
    n = read(fd, &r, sizeof r);
  } while (n < 0 && errno == EINTR);
  if (n != (ssize_t)sizeof r || r.magic != SBX_REPORT_MAGIC)
    return FALSE;
  if (r.kind != SBX_REPORT_POLICY_KILL && r.kind != SBX_REPORT_SETUP_FAILED)
    return FALSE;
  *out = r;
  return TRUE;
}
