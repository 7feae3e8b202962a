/* libFuzzer target: arbitrary text into the policy parser. It must never
 * crash or leak, a refusal must carry a message, and an accepted policy
 * must keep policy.h's promises (rules sorted by number, one per system
 * call, arguments 0..5) and compile unless it is too long for seccomp. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/policy/compiler.h"
#include "sandbox/policy/parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = g_strndup((const char *)data, size);
  GError *error = NULL;
  sbx_policy *p = sbx_policy_parse_string(text, "fuzz.policy", NULL, &error);
  if (p == NULL) {
    if (error == NULL || error->message == NULL ||
        strncmp(error->message, "fuzz.policy", 11) != 0)
      abort();
    g_error_free(error);
    g_free(text);
    return 0;
  }
  if (error != NULL)
    abort();
  for (size_t i = 0; i < p->n_rules; i++) {
    const sbx_rule *r = &p->rules[i];
    if (i > 0 && p->rules[i - 1].nr >= r->nr)
      abort();
    for (size_t a = 0; a < r->n_alts; a++)
      for (size_t c = 0; c < r->alts[a].n_cmps; c++)
        if (r->alts[a].cmps[c].arg > 5)
          abort();
  }
  sbx_bpf_program prog = {0};
  if (!sbx_bpf_compile(p, &prog, &error)) {
    if (!g_error_matches(error, SBX_BPF_ERROR, SBX_BPF_ERROR_TOO_LONG))
      abort();
    g_error_free(error);
  } else if (!sbx_bpf_check(prog.insns, prog.len, NULL)) {
    abort();
  }
  sbx_bpf_program_clear(&prog);
  sbx_policy_free(p);
  g_free(text);
  return 0;
}
