/* What the demo's suites share. */
#ifndef SANDBOX_TESTS_DEMO_DEMO_TEST_UTIL_H_
#define SANDBOX_TESTS_DEMO_DEMO_TEST_UTIL_H_

#include <check.h>

/* Runs every test of s (the runner's CK_FORK applies) and returns the
 * process exit status: EXIT_SUCCESS only if all passed. */
int demo_test_run(Suite *s);

#endif /* SANDBOX_TESTS_DEMO_DEMO_TEST_UTIL_H_ */
