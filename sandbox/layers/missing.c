/* A layer the kernel cannot provide: see missing.h. */
#include "sandbox/layers/missing.h"

#include <stdio.h>

#include "sandbox/layers/plan.h"

static const struct {
  const char *name;
  const char *require_name;
  const char *lost; /* what the process goes without */
  const char *kept; /* what still holds */
} kinds[] = {
    [SBX_LAYER_USERNS] = {"user namespaces", "userns",
                          "no pid, network, ipc or mount namespace of its "
                          "own and no empty root",
                          "the seccomp filters, the broker (sbx-run: its "
                          "supervisor) and Landlock"},
    [SBX_LAYER_LANDLOCK] = {"Landlock", "landlock",
                            "no file-access check inside the kernel's path "
                            "walk",
                            "the broker (sbx-run: its supervisor) decides "
                            "every file access; the seccomp filters and "
                            "namespaces"},
};

/* One warning per layer per process: a host that starts many sandboxes
 * says it once. */
static gint warned[G_N_ELEMENTS(kinds)];

const char *sbx_layer_kind_name(sbx_layer_kind kind) {
  return kinds[kind].name;
}

const char *sbx_layer_kind_require_name(sbx_layer_kind kind) {
  return kinds[kind].require_name;
}

gboolean sbx_layer_missing(sbx_layer_kind kind, bool required, bool quiet,
                           const char *who, const char *cause, GError **error) {
  if (required) {
    g_set_error(error, SBX_LAYERS_ERROR, SBX_LAYERS_ERROR_UNSUPPORTED,
                "%s requires %s (require=%s), which this system lacks: %s", who,
                kinds[kind].name, kinds[kind].require_name, cause);
    return FALSE;
  }
  if (!quiet && g_atomic_int_compare_and_exchange(&warned[kind], 0, 1)) {
    fprintf(stderr,
            "sbx: warning: %s runs without %s (%s): %s. Still in place: %s\n",
            who, kinds[kind].name, kinds[kind].lost, cause, kinds[kind].kept);
    fflush(stderr);
  }
  return TRUE;
}
