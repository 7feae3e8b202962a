/* The empty root for a process that sets itself up (rootfs_raw.c does the
 * work): the step and path that failed, as a GError. */
#include "sandbox/kernel/namespaces/rootfs.h"

gboolean sbx_root_make_empty(const sbx_root_config *cfg,
                             sbx_root_result *result, GError **error) {
  int rc = sbx_root_make_empty_raw(cfg, result);
  if (rc == 0)
    return TRUE;
  g_set_error(error, g_quark_from_static_string("sbx-rootfs-error-quark"), 0,
              "empty root: %s%s%s failed: %s (%s)", result->failed_step,
              result->failed_path ? " " : "",
              result->failed_path ? result->failed_path : "", g_strerror(-rc),
              result->mode == SBX_ROOT_HOST
                  ? "the host root is still in place"
                  : "the old root may still be attached: exit");
  return FALSE;
}
