/* The broker process itself: how it is started, and its main.
 *
 * Why it exists: a broker that is a fork of the host shares the host's
 * address-space layout, and so do the zygote and every worker forked from
 * it: a compromised worker would know where everything in the broker is.
 * So the broker is a program of its own, embedded in libsbx (nothing to
 * install or find on disk) and started with a fresh exec: the kernel gives
 * it a layout of its own. The host's side (broker.h) writes the broker's
 * configuration into a sealed memory file before the fork; the forked
 * child only lays out its descriptors and execs the embedded program from
 * another sealed memory file. Where the kernel refuses to execute a memory
 * file (vm.memfd_noexec = 2), the child runs the same main without the
 * exec, as a fork of the host; sbx_broker_start() then says so in one
 * warning line.
 *
 * Descriptors of the broker process, whichever way it started:
 *   0, 1  /dev/null
 *   2     the host's stderr (or closed)
 *   3     the control channel (SOCK_SEQPACKET, to the host)
 *   4     the audit sink, when there is one
 *   5     the configuration (a sealed memory file, read once and closed)
 *
 * What it trusts: the host, which wrote the configuration. It runs no code
 * a worker sent, and confines itself (broker_sandbox.h) before it reads a
 * single worker request.
 */
#ifndef SBX_BROKER_BROKER_PROCESS_H_
#define SBX_BROKER_BROKER_PROCESS_H_

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <glib.h>

#include "sandbox/files/permissions.h"
#include "sandbox/kernel/seccomp/bpf.h"

#define SBX_BROKER_CONTROL_FD 3
#define SBX_BROKER_AUDIT_FD 4
#define SBX_BROKER_CONFIG_FD 5

/* The program name the broker process carries (argv[0], /proc/PID/comm). */
#define SBX_BROKER_PROGRAM_NAME "sbx-broker"

/* Everything the broker process needs, as the host hands it over. */
typedef struct {
  const sbx_allowlist *const *allowlists;
  size_t n_allowlists;
  bool have_audit; /* SBX_BROKER_AUDIT_FD is the sink */
  bool audit_grants;
  unsigned max_fds; /* 0: keep the limit it starts with */
  bool dangerously_unsandboxed;
  const sbx_bpf_program *program; /* its seccomp layer; NULL when unsandboxed */
  pid_t parent;                   /* the host, as the broker sees it */
  /* Per allowlist, or NULL (broker.h, sbx_broker_config). */
  const sbx_bpf_program *const *verdict_programs;
  bool learn; /* broker.h, sbx_broker_config.learn */
} sbx_broker_process_config;

/* The configuration's GVariant type: the parent's pid, the allowlists
 * (permissions.h), have_audit, audit_grants, max_fds, unsandboxed, the
 * seccomp program's instructions, and per allowlist the verdict program's
 * instructions and self-pid relocations (empty: none), and learn. */
#define SBX_BROKER_CONFIG_TYPE "(ua(suia(ssubb))bbubaya(ayau)b)"

/* The broker's main, in the broker process with the descriptors above.
 * Never returns: exits 0 when the host closes the control channel, 1 when
 * set-up fails (after sending the reason on the control channel). */
_Noreturn void sbx_broker_process_main(void);

#endif /* SBX_BROKER_BROKER_PROCESS_H_ */
