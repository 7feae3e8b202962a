/* The embedded baseline and its check; see baseline.h.
 *
 * Trusts the generated program only together with a digest match;
 * refuses nothing else (a mismatch falls back to compiling).
 */
#include "tools/sbx-run/baseline.h"

#include <string.h>

#include "sandbox/policy/builtin/builtin.h"

bool sbx_run_baseline_embedded_is_current(void) {
  const sbx_builtin_file *f = sbx_builtin_find(SBX_RUN_BASELINE_POLICY);
  if (!f || sbx_run_baseline_len == 0)
    return false;
  g_autofree char *digest = g_compute_checksum_for_data(
      G_CHECKSUM_SHA256, (const guchar *)f->text, f->len);
  return strcmp(digest, sbx_run_baseline_digest) == 0;
}

gboolean sbx_run_baseline(sbx_bpf_program *out, GError **error) {
  if (!sbx_run_baseline_embedded_is_current())
    return sbx_run_baseline_compile(out, error);
  out->len = sbx_run_baseline_len;
  out->insns = g_memdup2(sbx_run_baseline_insns,
                         sbx_run_baseline_len * sizeof(struct sock_filter));
  return TRUE;
}
