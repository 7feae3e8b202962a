/* Layer 1, the broker-client filter: compiling it, checking it against
 * the table of file-system calls, and entering it in-process; see
 * layer1.h. The SIGSYS handler, which must be async-signal-safe, is
 * layer1_traps.c.
 *
 * Why it exists: a policy edit that traps a call without a handler would
 * kill the worker, and a handler without a trap would never run. The
 * program is refused unless it traps exactly the calls the table
 * (sandbox/files/fs_calls.h) marks SBX_FS_LAYER1, which are the calls
 * layer1_traps.c registers.
 *
 * What it trusts: the built-in policy text and the compiler. What it
 * refuses: a program whose traps and the table differ, and entering
 * layer 1 once the trap registry is frozen.
 */
#include "sandbox/broker/layer1.h"

#include <errno.h>
#include <linux/audit.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

#include "sandbox/base/syscalls.h"
#include "sandbox/files/fs_calls.h"
#include "sandbox/kernel/seccomp/loader.h"
#include "sandbox/kernel/seccomp/trap.h"
#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/policy/compiler.h"

GQuark sbx_layer1_error_quark(void) {
  return g_quark_from_static_string("sbx-layer1-error-quark");
}

static bool served_by_layer1(int nr) {
  const sbx_fs_call *row = sbx_fs_call_find(nr);
  return row != NULL && (row->traits & SBX_FS_LAYER1);
}

/* The policy and the table are two lists of the same calls: refuse a
 * program where they differ. */
static gboolean check_traps_match(const sbx_bpf_program *prog, GError **error) {
  for (int nr = 0; nr < SBX_TRAP_MAX_NR; nr++) {
    struct seccomp_data d;
    memset(&d, 0, sizeof(d));
    d.nr = nr;
    d.arch = AUDIT_ARCH_X86_64;
    uint32_t action =
        sbx_bpf_run(prog->insns, prog->len, &d, NULL) & SECCOMP_RET_ACTION_FULL;
    bool traps = action == SECCOMP_RET_TRAP;
    if (traps != served_by_layer1(nr)) {
      const char *name = sbx_syscall_name(nr);
      g_set_error(error, SBX_LAYER1_ERROR, SBX_LAYER1_ERROR_POLICY,
                  "builtin:broker-client.policy %s %s (syscall %d), but the "
                  "table of file-system calls (sandbox/files/fs_calls.c) %s "
                  "it to layer 1",
                  traps ? "traps" : "does not trap", name ? name : "?", nr,
                  traps ? "does not give" : "gives");
      return FALSE;
    }
  }
  return TRUE;
}

gboolean sbx_layer1_compile(sbx_bpf_program *out, GError **error) {
  return sbx_layer1_compile_direct(out, false, error);
}

gboolean sbx_layer1_compile_direct(sbx_bpf_program *out, bool direct_opens,
                                   GError **error) {
  memset(out, 0, sizeof(*out));
  sbx_policy *policy = sbx_builtin_policy("broker-client", error);
  if (policy == NULL)
    return FALSE;
  if (direct_opens)
    sbx_policy_allow_call(policy, SYS_openat2, "openat2", "direct opens");
  sbx_bpf_program prog = {NULL, 0};
  gboolean ok = sbx_bpf_compile(policy, &prog, error);
  sbx_policy_free(policy);
  if (ok)
    ok = check_traps_match(&prog, error);
  if (!ok) {
    sbx_bpf_program_clear(&prog);
    return FALSE;
  }
  *out = prog;
  return TRUE;
}

gboolean sbx_layer1_enter(sbx_broker_client *client, GError **error) {
  g_return_val_if_fail(client != NULL, FALSE);
  /* Compile first: a failure there leaves the registry untouched. */
  sbx_bpf_program prog;
  if (!sbx_layer1_compile(&prog, error))
    return FALSE;
  int rc = sbx_layer1_register_traps_raw(client, NULL, 0);
  if (rc < 0) {
    g_set_error(error, SBX_LAYER1_ERROR, SBX_LAYER1_ERROR_TRAPS,
                "layer 1: cannot register the broker client's SIGSYS "
                "handlers: %s (the trap registry is frozen once a SIGSYS "
                "handler is installed; enter layer 1 before any other trap "
                "user installs it)",
                g_strerror(-rc));
    sbx_bpf_program_clear(&prog);
    return FALSE;
  }
  GError *load_error = NULL;
  gboolean ok = sbx_seccomp_load(prog.insns, prog.len, SBX_SECCOMP_TSYNC, NULL,
                                 &load_error);
  sbx_bpf_program_clear(&prog);
  if (!ok) {
    g_set_error(error, SBX_LAYER1_ERROR, SBX_LAYER1_ERROR_LOAD,
                "layer 1: loading the broker-client filter: %s",
                load_error->message);
    g_error_free(load_error);
    return FALSE;
  }
  return TRUE;
}
