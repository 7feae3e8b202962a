/* The parsed form of a seccomp policy, shared by the parser, the direct
 * evaluator and the BPF compiler.
 *
 * Why it exists: the compiler and the evaluator must agree on what a
 * policy means, so both read this one structure and nothing else. The
 * parser produces it from minijail-syntax text; it is immutable after.
 *
 * Meaning, for one system call with data d (struct seccomp_data):
 *   1. d.arch != AUDIT_ARCH_X86_64          -> kill-process
 *   2. d.nr has bit 30 set (x32 ABI)        -> kill-process
 *   3. no rule for d.nr                     -> policy->default_action
 *   4. rule with n_alts == 0 (unconditional)-> rule->on_match
 *   5. any alternative whose comparisons all hold -> rule->on_match,
 *      otherwise rule->on_mismatch.
 * A comparison on an argument marked 32-bit looks only at the low 32 bits
 * of both the argument and the constant, exactly as the kernel reads an
 * int-sized argument, so junk in the upper half can neither match an allow
 * rule the kernel would not honour nor slip past a deny rule.
 */
#ifndef SBX_POLICY_POLICY_H_
#define SBX_POLICY_POLICY_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/seccomp.h>

typedef enum {
  SBX_ACTION_KILL_PROCESS,
  SBX_ACTION_KILL_THREAD,
  SBX_ACTION_TRAP,
  SBX_ACTION_ERRNO, /* data: the errno value */
  SBX_ACTION_USER_NOTIF,
  SBX_ACTION_TRACE, /* data: the value handed to the tracer */
  SBX_ACTION_LOG,
  SBX_ACTION_ALLOW,
} sbx_action_kind;

typedef struct {
  sbx_action_kind kind;
  uint16_t data;
} sbx_action;

typedef enum {
  SBX_CMP_EQ,  /* arg == v */
  SBX_CMP_NE,  /* arg != v */
  SBX_CMP_LT,  /* arg <  v (unsigned) */
  SBX_CMP_LE,  /* arg <= v (unsigned) */
  SBX_CMP_GT,  /* arg >  v (unsigned) */
  SBX_CMP_GE,  /* arg >= v (unsigned) */
  SBX_CMP_SET, /* arg & v: (arg & v) != 0 */
  SBX_CMP_IN,  /* arg in v: (arg & ~v) == 0 */
} sbx_cmp_op;

/* The named constant for the process's own pid (an sbx extension,
 * docs/policy-language.md). */
#define SBX_SELF_PID_NAME "SBX_SELF_PID"

typedef struct {
  uint8_t arg;       /* 0..5 */
  bool arg_is_32bit; /* from the syscall's signature; see above */
  sbx_cmp_op op;
  uint64_t value;
  /* The policy wrote SBX_SELF_PID (op is == or !=): value is
   * SBX_BPF_SELF_PID_UNPATCHED, and the compiler records the jump that
   * compares with it as a relocation, which the process patches with its
   * own pid. The evaluator compares with the unpatched value: for a
   * policy that is not loaded yet, no pid is "self". */
  bool self_pid;
} sbx_cmp;

/* All comparisons must hold. */
typedef struct {
  sbx_cmp *cmps;
  size_t n_cmps;
} sbx_conjunction;

typedef struct {
  int nr;
  char *name;
  sbx_conjunction
      *alts; /* any alternative may hold; n_alts == 0: none needed */
  size_t n_alts;
  sbx_action on_match;
  sbx_action on_mismatch;
  char *file; /* where the rule was written, for diagnostics */
  unsigned line;
} sbx_rule;

typedef struct {
  sbx_rule *rules; /* one rule per syscall, sorted by nr */
  size_t n_rules;
  sbx_action default_action;
  /* @frequency hints: nr -> relative call count, 0 when not given. */
  uint32_t *frequency;
  size_t n_frequency; /* number of entries in frequency (indexed by nr) */
} sbx_policy;

/* The SECCOMP_RET_* value of an action, data included. */
uint32_t sbx_action_to_ret(sbx_action action);

/* Evaluates the policy directly on one input, per the meaning above.
 * Returns the SECCOMP_RET_* value the compiled program must return. */
uint32_t sbx_policy_eval(const sbx_policy *policy,
                         const struct seccomp_data *data);

/* Whether one comparison holds for an argument value, with the 32-bit rule
 * above applied (used by the evaluator and the linter). */
bool sbx_cmp_holds(const sbx_cmp *cmp, uint64_t arg);

/* Replaces the rule for syscall nr (name: its name) with an
 * unconditional allow, adding the rule when the policy had none (its
 * place, for diagnostics, is `why`, in parentheses). Used for the calls
 * sbx allows beyond a policy's text: openat2 for a type's direct opens
 * under Landlock (docs/design.md, "Direct opens"), and the tracing calls
 * of sbx-run --allow-ptrace. false for a NULL policy, name or why. */
bool sbx_policy_allow_call(sbx_policy *policy, int nr, const char *name,
                           const char *why);

/* Frees a policy and everything it owns; NULL is ignored. */
void sbx_policy_free(sbx_policy *policy);

#endif /* SBX_POLICY_POLICY_H_ */
