/* Worker end-of-life records, described for the host (report_raw.c
 * writes and reads them); see report.h. */
#include "sandbox/zygote/report.h"

#include "sandbox/base/syscalls.h"

char *sbx_report_describe(const sbx_worker_report *report) {
  switch (report->kind) {
    case SBX_REPORT_POLICY_KILL: {
      const char *name = sbx_syscall_name(report->nr);
      return g_strdup_printf(
          "%s(%d) args 0x%" G_GINT64_MODIFIER "x, 0x%" G_GINT64_MODIFIER
          "x, 0x%" G_GINT64_MODIFIER "x, 0x%" G_GINT64_MODIFIER
          "x, 0x%" G_GINT64_MODIFIER "x, 0x%" G_GINT64_MODIFIER "x",
          name ? name : "unknown", report->nr, (guint64)report->args[0],
          (guint64)report->args[1], (guint64)report->args[2],
          (guint64)report->args[3], (guint64)report->args[4],
          (guint64)report->args[5]);
    }
    case SBX_REPORT_SETUP_FAILED:
      if (report->step == SBX_LAYER_STEP_SECCOMP ||
          report->step == SBX_LAYER_STEP_RLIMITS)
        return g_strdup_printf("%s %d: %s", sbx_layer_step_name(report->step),
                               report->detail, g_strerror(report->error));
      return g_strdup_printf("%s: %s", sbx_layer_step_name(report->step),
                             g_strerror(report->error));
    default:
      return g_strdup("no report");
  }
}
