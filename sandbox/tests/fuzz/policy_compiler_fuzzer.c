/* libFuzzer target: the compiler held to the evaluator. The data is either
 * policy text (the corpus seeds) or, when it does not parse, the recipe of
 * a small policy built directly (every operator, width and action, rules
 * on nearby numbers); the rest of the data picks the calls. For each call
 * the compiled program run in sbx's interpreter must return exactly what
 * sbx_policy_eval returns, and a path the kernel's action cache would
 * follow (sbx_bpf_const_action) must return it too; a rule without
 * argument filters must be decided on such a path. Any disagreement
 * aborts. */
#include <linux/audit.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/policy/compiler.h"
#include "sandbox/policy/parser.h"
#include "sandbox/base/syscalls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
  const uint8_t *data;
  size_t size;
  size_t pos;
} reader;

/* Past the end the reader yields zeros, so every input is usable. */
static uint8_t take8(reader *r) {
  return r->pos < r->size ? r->data[r->pos++] : 0;
}

static uint64_t take64(reader *r) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v = v << 8 | take8(r);
  return v;
}

/* Values near the edges comparisons get wrong: small, all ones, one
 * half, bit 31/32/63, or raw data. */
static uint64_t take_value(reader *r) {
  switch (take8(r) % 8) {
    case 0:
      return take8(r) % 4;
    case 1:
      return ~0ull;
    case 2:
      return 0xffffffffull;
    case 3:
      return 1ull << (take8(r) % 64);
    case 4:
      return 0xffffffff00000000ull | (take8(r) % 4);
    case 5:
      return (uint64_t)(take8(r) % 4) << 32 | (take8(r) % 4);
    default:
      return take64(r);
  }
}

static sbx_action take_action(reader *r) {
  sbx_action a = {(sbx_action_kind)(take8(r) % 8), 0};
  if (a.kind == SBX_ACTION_ERRNO || a.kind == SBX_ACTION_TRACE)
    a.data = take8(r) % 8;
  return a;
}

static sbx_policy *derive_policy(reader *r) {
  sbx_policy *p = g_new0(sbx_policy, 1);
  p->default_action = take_action(r);
  p->n_rules = 1 + take8(r) % 8;
  p->rules = g_new0(sbx_rule, p->n_rules);
  int nr = take8(r) % 16;
  for (size_t i = 0; i < p->n_rules; i++) {
    sbx_rule *rule = &p->rules[i];
    rule->nr = nr;
    nr += 1 + take8(r) % 40;
    rule->name = g_strdup("fuzz");
    rule->on_match = take_action(r);
    rule->on_mismatch = take_action(r);
    rule->n_alts = take8(r) % 4;
    rule->alts = g_new0(sbx_conjunction, MAX(rule->n_alts, 1));
    for (size_t a = 0; a < rule->n_alts; a++) {
      sbx_conjunction *c = &rule->alts[a];
      c->n_cmps = 1 + take8(r) % 3;
      c->cmps = g_new0(sbx_cmp, c->n_cmps);
      for (size_t k = 0; k < c->n_cmps; k++) {
        uint8_t b = take8(r);
        c->cmps[k] = (sbx_cmp){.arg = b % 6,
                               .arg_is_32bit = (b >> 3) & 1,
                               .op = (sbx_cmp_op)((b >> 4) % 8),
                               .value = take_value(r)};
      }
    }
  }
  return p;
}

static void check_one(const sbx_policy *p, const sbx_bpf_program *prog,
                      const struct seccomp_data *d) {
  uint32_t want = sbx_policy_eval(p, d);
  uint32_t got = sbx_bpf_run_checked(prog->insns, prog->len, d, NULL);
  if (want != got)
    abort();
  uint32_t constant;
  if (sbx_bpf_const_action(prog->insns, prog->len, d->arch, (uint32_t)d->nr,
                           &constant) &&
      constant != got)
    abort();
}

/* Calls on and next to each rule's number, with its constants, their
 * neighbours and junk upper halves, and values taken from the data. */
static void check_calls(const sbx_policy *p, const sbx_bpf_program *prog,
                        reader *r) {
  for (size_t i = 0; i < p->n_rules; i++) {
    const sbx_rule *rule = &p->rules[i];
    uint32_t constant;
    if (rule->n_alts == 0 &&
        !sbx_bpf_const_action(prog->insns, prog->len, AUDIT_ARCH_X86_64,
                              (uint32_t)rule->nr, &constant))
      abort();
    for (int delta = -1; delta <= 1; delta++) {
      struct seccomp_data d = {.nr = rule->nr + delta,
                               .arch = AUDIT_ARCH_X86_64};
      check_one(p, prog, &d);
      d.nr |= 0x40000000;
      check_one(p, prog, &d);
    }
    for (size_t a = 0; a < rule->n_alts; a++) {
      for (size_t k = 0; k < rule->alts[a].n_cmps; k++) {
        const sbx_cmp *c = &rule->alts[a].cmps[k];
        const uint64_t near[] = {
            c->value, c->value - 1, c->value + 1, c->value ^ (1ull << 32),
            0,        ~c->value};
        for (size_t v = 0; v < G_N_ELEMENTS(near); v++) {
          struct seccomp_data d = {.nr = rule->nr, .arch = AUDIT_ARCH_X86_64};
          for (int x = 0; x < 6; x++)
            d.args[x] = take_value(r);
          d.args[c->arg] = near[v];
          check_one(p, prog, &d);
        }
      }
    }
  }
  for (int n = 0; n < 16; n++) {
    struct seccomp_data d = {.arch = take8(r) % 8 ? AUDIT_ARCH_X86_64
                                                  : AUDIT_ARCH_I386};
    d.nr = p->n_rules ? p->rules[take8(r) % p->n_rules].nr : 0;
    if (take8(r) % 4 == 0)
      d.nr = (int)(uint32_t)take64(r);
    for (int x = 0; x < 6; x++)
      d.args[x] = take_value(r);
    check_one(p, prog, &d);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = g_strndup((const char *)data, size);
  reader r = {data, size, 0};
  sbx_policy *p = sbx_policy_parse_string(text, "fuzz.policy", NULL, NULL);
  if (p == NULL)
    p = derive_policy(&r);
  else
    r.pos = size / 2; /* the second half of the text picks the calls */
  sbx_bpf_program prog = {0};
  GError *error = NULL;
  if (sbx_bpf_compile(p, &prog, &error)) {
    if (!sbx_bpf_check(prog.insns, prog.len, NULL))
      abort();
    check_calls(p, &prog, &r);
  } else {
    /* Only a program past BPF_MAXINSNS may be refused. */
    if (!g_error_matches(error, SBX_BPF_ERROR, SBX_BPF_ERROR_TOO_LONG))
      abort();
    g_error_free(error);
  }
  sbx_bpf_program_clear(&prog);
  sbx_policy_free(p);
  g_free(text);
  return 0;
}
