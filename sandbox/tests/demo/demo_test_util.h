/* What the demo's suites share. */
#ifndef SBX_TESTS_DEMO_DEMO_TEST_UTIL_H_
#define SBX_TESTS_DEMO_DEMO_TEST_UTIL_H_

#include <check.h>

/* Runs every test of s (the runner's CK_FORK applies) and returns the
 * process exit status: EXIT_SUCCESS only if all passed. */
int demo_test_run(Suite *s);

#endif /* SBX_TESTS_DEMO_DEMO_TEST_UTIL_H_ */
