/* Direct evaluation of a parsed policy, per the meaning in policy.h.
 *
 * Why it exists: the compiled BPF program must return, for every input,
 * what the policy says. This evaluator is that statement in plain C: the
 * tests and `sbx-policy eval` hold the compiler to it.
 *
 * Trusts: a policy built by the parser (rules sorted by nr). Refuses:
 * other architectures and x32 numbers (kill-process), before any rule.
 */
#include "sandbox/policy/policy.h"

#include <linux/audit.h>
#include <string.h>
#include <stdlib.h>

#include <glib.h>

/* The x32 ABI marks its system call numbers with bit 30. */
#define X32_SYSCALL_BIT 0x40000000

uint32_t sbx_action_to_ret(sbx_action action) {
  switch (action.kind) {
    case SBX_ACTION_KILL_PROCESS:
      return SECCOMP_RET_KILL_PROCESS;
    case SBX_ACTION_KILL_THREAD:
      return SECCOMP_RET_KILL_THREAD;
    case SBX_ACTION_TRAP:
      return SECCOMP_RET_TRAP | (action.data & SECCOMP_RET_DATA);
    case SBX_ACTION_ERRNO:
      return SECCOMP_RET_ERRNO | (action.data & SECCOMP_RET_DATA);
    case SBX_ACTION_USER_NOTIF:
      return SECCOMP_RET_USER_NOTIF;
    case SBX_ACTION_TRACE:
      return SECCOMP_RET_TRACE | (action.data & SECCOMP_RET_DATA);
    case SBX_ACTION_LOG:
      return SECCOMP_RET_LOG;
    case SBX_ACTION_ALLOW:
      return SECCOMP_RET_ALLOW;
  }
  /* Not a valid action: fail closed. */
  return SECCOMP_RET_KILL_PROCESS;
}

bool sbx_cmp_holds(const sbx_cmp *c, uint64_t arg) {
  uint64_t a = arg;
  uint64_t v = c->value;
  if (c->arg_is_32bit) {
    /* What the kernel reads of an int-sized argument. */
    a = (uint32_t)a;
    v = (uint32_t)v;
  }
  switch (c->op) {
    case SBX_CMP_EQ:
      return a == v;
    case SBX_CMP_NE:
      return a != v;
    case SBX_CMP_LT:
      return a < v;
    case SBX_CMP_LE:
      return a <= v;
    case SBX_CMP_GT:
      return a > v;
    case SBX_CMP_GE:
      return a >= v;
    case SBX_CMP_SET:
      return (a & v) != 0;
    case SBX_CMP_IN:
      return (a & ~v) == 0;
  }
  return false;
}

static int compare_nr(const void *key, const void *rule) {
  int nr = *(const int *)key;
  int other = ((const sbx_rule *)rule)->nr;
  return (nr > other) - (nr < other);
}

uint32_t sbx_policy_eval(const sbx_policy *policy,
                         const struct seccomp_data *data) {
  if (data->arch != AUDIT_ARCH_X86_64)
    return SECCOMP_RET_KILL_PROCESS;
  if (data->nr & X32_SYSCALL_BIT)
    return SECCOMP_RET_KILL_PROCESS;
  int nr = data->nr;
  const sbx_rule *rule = NULL;
  if (policy->n_rules > 0)
    rule = bsearch(&nr, policy->rules, policy->n_rules, sizeof(sbx_rule),
                   compare_nr);
  if (rule == NULL)
    return sbx_action_to_ret(policy->default_action);
  if (rule->n_alts == 0)
    return sbx_action_to_ret(rule->on_match);
  for (size_t i = 0; i < rule->n_alts; i++) {
    const sbx_conjunction *alt = &rule->alts[i];
    bool all = true;
    for (size_t j = 0; j < alt->n_cmps && all; j++) {
      const sbx_cmp *c = &alt->cmps[j];
      /* A comparison on an argument that does not exist never holds. */
      all = c->arg < 6 && sbx_cmp_holds(c, data->args[c->arg]);
    }
    if (all)
      return sbx_action_to_ret(rule->on_match);
  }
  return sbx_action_to_ret(rule->on_mismatch);
}

void sbx_policy_free(sbx_policy *policy) {
  if (policy == NULL)
    return;
  for (size_t i = 0; i < policy->n_rules; i++) {
    sbx_rule *r = &policy->rules[i];
    for (size_t j = 0; j < r->n_alts; j++)
      g_free(r->alts[j].cmps);
    g_free(r->alts);
    g_free(r->name);
    g_free(r->file);
  }
  g_free(policy->rules);
  g_free(policy->frequency);
  g_free(policy);
}

bool sbx_policy_allow_call(sbx_policy *policy, int nr, const char *name,
                           const char *why) {
  if (policy == NULL || name == NULL || why == NULL || nr < 0)
    return false;
  size_t at = 0;
  while (at < policy->n_rules && policy->rules[at].nr < nr)
    at++;
  sbx_rule *r;
  if (at < policy->n_rules && policy->rules[at].nr == nr) {
    r = &policy->rules[at];
    for (size_t j = 0; j < r->n_alts; j++)
      g_free(r->alts[j].cmps);
    g_free(r->alts);
    r->alts = NULL;
    r->n_alts = 0;
  } else {
    policy->rules = g_renew(sbx_rule, policy->rules, policy->n_rules + 1);
    memmove(&policy->rules[at + 1], &policy->rules[at],
            (policy->n_rules - at) * sizeof *policy->rules);
    policy->n_rules++;
    r = &policy->rules[at];
    memset(r, 0, sizeof *r);
    r->nr = nr;
    r->name = g_strdup(name);
    r->file = g_strdup_printf("(%s)", why);
  }
  r->on_match = (sbx_action){SBX_ACTION_ALLOW, 0};
  r->on_mismatch = (sbx_action){SBX_ACTION_ALLOW, 0};
  return true;
}
