/* libFuzzer target: arbitrary JSON into the OCI importer and exporter.
 * Whatever is accepted must mean the same on both sides: for calls on and
 * near every comparison of the imported policy, the policy's verdict
 * equals the profile's (on what the kernel reads of int-sized arguments),
 * and the exported profile's verdict equals the policy's. A refusal must
 * name the profile. Anything else aborts. */
#include <linux/audit.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "sandbox/policy/parser.h"
#include "sandbox/base/syscalls.h"
#include "sandbox/policy/oci.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_call(const sbx_policy *p, const sbx_oci_profile *json,
                       const sbx_oci_profile *exported,
                       const struct seccomp_data *d) {
  struct seccomp_data k = *d;
  for (unsigned i = 0; i < 6; i++)
    if (sbx_syscall_arg_is_32bit(d->nr, i))
      k.args[i] = (uint32_t)k.args[i];
  uint32_t want = sbx_policy_eval(p, d);
  if (want != sbx_oci_profile_eval(json, &k))
    abort();
  if (exported != NULL && want != sbx_oci_profile_eval(exported, d))
    abort();
}

static void check_policy(const sbx_policy *p, const sbx_oci_profile *json,
                         const sbx_oci_profile *exported) {
  for (size_t r = 0; r < p->n_rules; r++) {
    const sbx_rule *rule = &p->rules[r];
    struct seccomp_data d = {.nr = rule->nr, .arch = AUDIT_ARCH_X86_64};
    check_call(p, json, exported, &d);
    for (size_t a = 0; a < rule->n_alts; a++) {
      for (size_t c = 0; c < rule->alts[a].n_cmps; c++) {
        const sbx_cmp *cmp = &rule->alts[a].cmps[c];
        const uint64_t near[] = {cmp->value,     cmp->value - 1,
                                 cmp->value + 1, cmp->value | 1ull << 32,
                                 ~cmp->value,    0};
        for (size_t v = 0; v < G_N_ELEMENTS(near); v++) {
          d = (struct seccomp_data){.nr = rule->nr, .arch = AUDIT_ARCH_X86_64};
          d.args[cmp->arg] = near[v];
          check_call(p, json, exported, &d);
        }
      }
    }
  }
  struct seccomp_data none = {.nr = 0x40000000, .arch = AUDIT_ARCH_X86_64};
  check_call(p, json, exported, &none);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  GError *error = NULL;
  sbx_oci_profile *json = sbx_oci_profile_load_data(
      (const char *)data, (gssize)size, "fuzz.json", &error);
  if (json == NULL) {
    if (error == NULL || strncmp(error->message, "fuzz.json", 9) != 0)
      abort();
    g_error_free(error);
    return 0;
  }
  char *text = sbx_oci_import(json, &error);
  if (text == NULL) {
    if (error == NULL || strncmp(error->message, "fuzz.json", 9) != 0)
      abort();
    g_error_free(error);
    sbx_oci_profile_free(json);
    return 0;
  }
  sbx_policy *p = sbx_policy_parse_string(text, "imported", NULL, NULL);
  if (p == NULL)
    abort(); /* the importer promises text that loads */
  char *out = sbx_oci_export(p, SBX_OCI_EXPORT_LARGE_NUMBERS, &error);
  sbx_oci_profile *exported = NULL;
  if (out != NULL) {
    exported = sbx_oci_profile_load_data(out, -1, "exported", NULL);
    if (exported == NULL)
      abort();
  } else {
    g_clear_error(&error);
  }
  check_policy(p, json, exported);
  sbx_oci_profile_free(exported);
  g_free(out);
  sbx_policy_free(p);
  g_free(text);
  sbx_oci_profile_free(json);
  return 0;
}
