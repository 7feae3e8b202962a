/* Learned rules that admit the argument values a call was seen with.
 *
 * Why it exists: a policy learned from what a program did (sbx-learn for
 * sbx-run, the learning mode of libsbx types) should allow a call only as
 * far as the argument that says what it does - open for writing, map
 * executable memory, reach a network, drive a device, change a process
 * attribute - was seen used. Both learners keep their observations in the
 * same form and write the same expressions from one table of reviewed
 * arguments, here.
 *
 * What it trusts: the observations. Every expression it writes is parsed
 * again by whoever keeps the policy.
 */
#ifndef SBX_POLICY_ARG_RULES_H_
#define SBX_POLICY_ARG_RULES_H_

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#define SBX_ARG_MAX_VALUES 8

/* What one argument of one system call was seen holding. */
typedef struct {
  uint64_t values[SBX_ARG_MAX_VALUES]; /* distinct, in order seen */
  unsigned n_values;
  bool overflow; /* more distinct values than kept */
  uint64_t mask; /* OR of every value seen */
} sbx_arg_seen;

/* Records one value. */
void sbx_arg_seen_add(sbx_arg_seen *arg, uint64_t value);

/* The expression of a rule for `syscall` that admits what args (its six
 * arguments) were seen holding, in the policy language ("arg1 == TCGETS ||
 * arg1 == FIONREAD", "arg2 in PROT_READ|PROT_WRITE"), or "1" when the call
 * has no reviewed argument or its argument took too many values; why (may
 * be NULL) gets "; arg1 only ever TCGETS or FIONREAD" for a comment. */
char *sbx_arg_rule_expression(const char *syscall, const sbx_arg_seen args[6],
                              GString *why);

#endif /* SBX_POLICY_ARG_RULES_H_ */
