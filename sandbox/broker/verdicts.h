/* The errno verdicts of a worker's seccomp layer, heard by the broker.
 *
 * Why it exists: a call a seccomp layer refuses with an errno leaves no
 * trace; the program only sees EPERM. A type that audits its system calls
 * (sbx_sandbox_config.audit_syscalls) loads its last layer rewritten so
 * that each errno verdict becomes a user notification
 * (sbx_bpf_notify_errno_verdicts), and the worker hands the listener to
 * its broker before its own code runs (protocol.h, LISTENER). The broker
 * answers every notification with the errno the original program returns
 * for the same registers (the kernel's data, never the worker's memory),
 * so the worker sees exactly what it would have seen, and writes one audit
 * line per distinct call.
 *
 * The kernel ranks a notification below an errno, so stacking is kept:
 * another layer that refuses the call decides it (with its own errno and
 * no line), and layer 1's traps still go to the broker first.
 *
 * What it trusts: the kernel's notification data and the host's program.
 * What it refuses: to continue a call, unless the host asked to learn
 * (sbx_sandbox_config.learn_dir): then the layer notifies every refusal
 * (sbx_bpf_notify_refusals) and each call is let through and recorded.
 * Otherwise, whatever the program says for a notified call other than an
 * errno (which a correct rewrite never produces) is answered with EPERM.
 */
#ifndef SBX_BROKER_VERDICTS_H_
#define SBX_BROKER_VERDICTS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/kernel/unotify/notify.h"

typedef struct sbx_verdict_listener sbx_verdict_listener;

/* A listener for one worker: program is the type's original layer (its
 * copy is patched with self, the worker's pid as it sees itself); fd is
 * the worker's listener, made non-blocking and owned from here on (closed
 * on failure too). learning: every call continues. */
sbx_verdict_listener *sbx_verdict_listener_new(const sbx_bpf_program *program,
                                               pid_t self, int fd,
                                               bool learning, GError **error);

/* Closes the listener. NULL is ignored. */
void sbx_verdict_listener_free(sbx_verdict_listener *listener);

int sbx_verdict_listener_fd(const sbx_verdict_listener *listener);

/* One answered call. */
typedef struct {
  pid_t pid; /* as the broker sees it */
  int nr;
  uint64_t args[6];
  int error; /* the errno it was answered with; 0: it continued */
} sbx_verdict_heard;

/* Receives one notification and answers it. Returns 1 with *heard filled,
 * 0 when there was none to answer (the caller was interrupted or died
 * meanwhile), or -errno when the listener is unusable. */
int sbx_verdict_listener_serve(sbx_verdict_listener *listener,
                               sbx_unotify_buffers *buffers,
                               sbx_verdict_heard *heard);

/* Whether this call was heard before on this listener (the same system
 * call and errno): the audit writes one line per distinct call. Records it
 * when not. */
bool sbx_verdict_listener_seen(sbx_verdict_listener *listener,
                               const sbx_verdict_heard *heard);

/* "fsync(0x3, 0x0, 0x0, 0x0, 0x0, 0x0)" into buf. */
void sbx_verdict_format_call(const sbx_verdict_heard *heard, char *buf,
                             size_t size);

#endif /* SBX_BROKER_VERDICTS_H_ */
