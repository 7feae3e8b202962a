/* The broker benchmarks run to completion and report positive figures
 * (the suite prints them; it asserts no timing). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include <glib.h>

#include "sandbox/broker/broker_bench.h"

START_TEST(broker_benchmarks_measure_both_metrics) {
  double v = 0, f = 0;
  GError *error = NULL;
  ck_assert_msg(sbx_bench_broker_open(&v, &f, &error), "%s",
                error ? error->message : "");
  ck_assert(v > 0 && f > 0);
  printf("broker_open_ratio: %.2f (brokered %.1f us, floor %.1f us)\n",
         v / f, v, f);
  ck_assert_msg(sbx_bench_broker_open_p99(&v, &f, &error), "%s",
                error ? error->message : "");
  ck_assert(v > 0 && f > 0);
  printf("broker_open_p99_ratio: %.2f (p99 %.1f us, single p50 %.1f us)\n",
         v / f, v, f);
}
END_TEST

int main(void) {
  Suite *s = suite_create("broker_bench");
  TCase *tc = tcase_create("bench");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, broker_benchmarks_measure_both_metrics);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
