/* Helpers shared by the policy suites: the corpus location, temporary
 * directories, and parse-and-check shorthands.
 */
#ifndef SBX_TESTS_POLICY_POLICY_TEST_UTIL_H_
#define SBX_TESTS_POLICY_POLICY_TEST_UTIL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/filter.h>

#include <glib.h>

#include "sandbox/policy/parser.h"
#include "sandbox/policy/policy.h"

/* The corpus of third-party policy files lives outside the repository
 * (build/corpus.gni, gn arg sbx_corpus_dir). A test that reads it starts
 * with POLICY_TEST_NEEDS_CORPUS(): without a corpus the test prints one
 * "sbx-skip:" line, which the test runner counts as skipped, and ends. */
#define POLICY_TEST_NEEDS_CORPUS()             \
  do {                                         \
    if (!policy_test_corpus_present(__func__)) \
      return;                                  \
  } while (0)
bool policy_test_corpus_present(const char *test);

/* A file under the corpus; g_free the result. */
char *policy_test_corpus(const char *relative);

/* Names of the regular files in a corpus subdirectory, sorted. */
GPtrArray *policy_test_corpus_files(const char *subdir);

/* A fresh directory under /tmp; remove it with policy_test_rmtree. */
char *policy_test_tmpdir(void);
void policy_test_rmtree(const char *dir);

/* Writes text to dir/name (creating subdirectories); returns the path. */
char *policy_test_write(const char *dir, const char *name, const char *text);

/* Parses text (no includes) and fails the test if it does not parse. */
sbx_policy *policy_test_parse_ok(const char *text);

/* Parses text named "test.policy" and fails the test unless it is refused
 * with the given code; returns the message (g_free it). */
char *policy_test_parse_error(const char *text, int code);

/* The rule for a system call, or NULL. */
const sbx_rule *policy_test_rule(const sbx_policy *policy, const char *name);

/* Runs the evaluator on one x86-64 call. */
uint32_t policy_test_eval(const sbx_policy *policy, const char *syscall,
                          uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
                          uint64_t a4, uint64_t a5);

/* Loads a program with seccomp(2) in a forked child; TRUE when the kernel
 * accepted it. */
gboolean policy_test_kernel_accepts(const struct sock_filter *insns,
                                    size_t len);

#endif /* SBX_TESTS_POLICY_POLICY_TEST_UTIL_H_ */
