/* The SIGSYS trap registry for callers that want a GError (trap_raw.c
 * holds the registry and the handler).
 *
 * Trusts its callers, who register before the first filter that traps is
 * loaded; refuses a number outside the registry and any registration once
 * the handler is installed, saying why.
 */
#include "sandbox/kernel/seccomp/trap.h"

#include <errno.h>

GQuark sbx_trap_error_quark(void) {
  return g_quark_from_static_string("sbx-trap-error-quark");
}

gboolean sbx_trap_register(int nr, sbx_trap_handler handler, void *aux,
                           GError **error) {
  int rc = sbx_trap_register_raw(nr, handler, aux);
  if (rc == -EBUSY) {
    g_set_error(error, SBX_TRAP_ERROR, SBX_TRAP_ERROR_FROZEN,
                "cannot register a trap handler for syscall %d: the SIGSYS "
                "handler is already installed and the registry is frozen; "
                "register every handler before sbx_trap_install()",
                nr);
    return FALSE;
  }
  if (rc < 0) {
    g_set_error(error, SBX_TRAP_ERROR, SBX_TRAP_ERROR_RANGE,
                "cannot register a trap handler for syscall %d: numbers "
                "0..%d only",
                nr, SBX_TRAP_MAX_NR - 1);
    return FALSE;
  }
  return TRUE;
}

gboolean sbx_trap_install(GError **error) {
  int rc = sbx_trap_install_raw();
  if (rc < 0) {
    g_set_error(error, SBX_TRAP_ERROR, SBX_TRAP_ERROR_SIGACTION,
                "sigaction(SIGSYS) failed: %s", g_strerror(-rc));
    return FALSE;
  }
  return TRUE;
}
