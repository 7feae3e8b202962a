/* Helpers of the demo's suites (see demo_test_util.h). */
#include "sandbox/tests/demo/demo_test_util.h"

#include <stdlib.h>

int demo_test_run(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
