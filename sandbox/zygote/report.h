/* What a worker tells its zygote about its own end: the system call the
 * policy refused (F3), or the sandbox step that could not be installed.
 *
 * Why it exists: a process that seccomp kills outright leaves its parent
 * only "killed by SIGSYS"; the syscall and its arguments exist only inside
 * the dying process. So every policy's unknown-syscall verdict is `trap`,
 * and the handler registered here for each syscall the broker does not
 * serve writes one fixed-size record into the worker's report pipe and
 * then makes the kernel kill the process with SIGSYS. The zygote reads the
 * pipe after reaping the worker (the record outlives the writer) and
 * forwards it with the exit status.
 *
 * What it trusts: nothing in the record beyond "this worker wrote it about
 * itself". The pipe is the worker's own, so one worker cannot speak for
 * another; a hostile worker can at most lie about its own death, and the
 * zygote attaches a policy-kill record only when the wait status really is
 * death by SIGSYS.
 */
#ifndef SBX_ZYGOTE_REPORT_H_
#define SBX_ZYGOTE_REPORT_H_

#include <stdint.h>

#include <glib.h>

#include "sandbox/layers/apply.h"

#define SBX_REPORT_MAGIC 0x5b726570u /* "[rep" */

typedef enum {
  SBX_REPORT_NONE = 0,
  SBX_REPORT_POLICY_KILL,  /* nr, args: the refused system call */
  SBX_REPORT_SETUP_FAILED, /* step, detail, error: the layer that failed */
} sbx_report_kind;

typedef struct {
  uint32_t magic;
  uint32_t kind; /* sbx_report_kind */
  int32_t nr;
  int32_t step; /* sbx_layer_step (sandbox/layers/apply.h) */
  int32_t detail;
  int32_t error; /* errno */
  uint64_t args[6];
} sbx_worker_report;

/* Writes a SETUP_FAILED record to fd. Async-signal-safe; for the worker
 * between fork and entry. */
void sbx_report_setup_failure(int fd, sbx_layer_step step, int detail,
                              int error);

/* Registers the policy-kill handler with the SIGSYS trap registry for every
 * syscall number the registry accepts. *report_fd (borrowed; it is part of
 * the zygote's memory, which every worker inherits) is read at trap time,
 * so each worker stores its own pipe there after fork. Call before any
 * other trap handlers are registered: they replace these for the syscalls
 * they serve. Returns 0, or -EINVAL when the registry refused a number
 * inside the syscall table (it is already frozen). Allocates nothing: it
 * runs in the zygote. */
int sbx_report_register_kill_handlers_raw(const int *report_fd);

/* Reads one record from a non-blocking fd. Returns TRUE and fills *out if
 * a well-formed record was there; FALSE (out zeroed, kind NONE) otherwise.
 * Async-signal-safe. */
gboolean sbx_report_read(int fd, sbx_worker_report *out);

/* A readable description: "socket(41) args 0x2, 0x1, 0, 0, 0, 0" or
 * "landlock: Invalid argument". Caller frees with g_free. */
char *sbx_report_describe(const sbx_worker_report *report);

#endif /* SBX_ZYGOTE_REPORT_H_ */
