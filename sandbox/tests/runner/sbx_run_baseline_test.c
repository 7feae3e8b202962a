/* sbx-run's build-time baseline (sandbox/runner/baseline.h): the program
 * embedded in sbx-run must be exactly what compiling builtin:sbx-run.policy
 * gives with the compiler and syscall table in this tree, and it must
 * decide like the policy text does. */
#include <check.h>
#include <linux/audit.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include <glib.h>

#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/policy/parser.h"
#include "sandbox/runner/baseline.h"

static void assert_is_the_embedded_program(const sbx_bpf_program *p) {
  ck_assert_uint_eq(p->len, sbx_run_baseline_len);
  ck_assert_int_eq(memcmp(p->insns, sbx_run_baseline_insns,
                          p->len * sizeof(struct sock_filter)),
                   0);
}

START_TEST(the_embedded_baseline_is_what_compiling_the_builtin_text_gives) {
  sbx_bpf_program fresh = {0};
  GError *error = NULL;
  ck_assert_msg(sbx_run_baseline_compile(&fresh, &error), "%s",
                error ? error->message : "");
  assert_is_the_embedded_program(&fresh);
  sbx_bpf_program_clear(&fresh);
}
END_TEST

START_TEST(sbx_run_baseline_hands_out_a_copy_of_the_embedded_program) {
  sbx_bpf_program p = {0};
  sbx_run_baseline(&p);
  ck_assert_ptr_ne(p.insns, sbx_run_baseline_insns);
  assert_is_the_embedded_program(&p);
  sbx_bpf_program_clear(&p);
}
END_TEST

/* The embedded program against the parsed text, on calls of every
 * verdict the baseline has: allowed, user-notify, an errno, and an
 * argument filter on both sides of its test. */
START_TEST(the_embedded_baseline_decides_like_the_policy_text) {
  GError *error = NULL;
  sbx_policy *pol = sbx_builtin_policy(SBX_RUN_BASELINE_POLICY, &error);
  ck_assert_msg(pol, "%s", error ? error->message : "");
  struct {
    int nr;
    uint64_t arg0;
    uint32_t action;
  } cases[] = {
      {__NR_getpid, 0, SECCOMP_RET_ALLOW},
      {__NR_openat, 0, SECCOMP_RET_USER_NOTIF},
      {__NR_execve, 0, SECCOMP_RET_USER_NOTIF},
      {__NR_io_uring_setup, 0, SECCOMP_RET_ERRNO},
      {__NR_personality, 0, SECCOMP_RET_ALLOW},
      {__NR_personality, 0x0400000, SECCOMP_RET_USER_NOTIF},
      {__NR_ptrace, 0, SECCOMP_RET_USER_NOTIF},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    struct seccomp_data d = {.nr = cases[i].nr, .arch = AUDIT_ARCH_X86_64};
    d.args[0] = cases[i].arg0;
    uint32_t embedded =
        sbx_bpf_run(sbx_run_baseline_insns, sbx_run_baseline_len, &d, NULL);
    ck_assert_uint_eq(embedded, sbx_policy_eval(pol, &d));
    ck_assert_msg((embedded & SECCOMP_RET_ACTION_FULL) == cases[i].action,
                  "syscall %d arg0 %#llx: got %#x", cases[i].nr,
                  (unsigned long long)cases[i].arg0, embedded);
  }
  sbx_policy_free(pol);
}
END_TEST

static Suite *baseline_suite(void) {
  Suite *s = suite_create("sbx-run-baseline");
  TCase *tc = tcase_create("embedded");
  tcase_add_test(
      tc, the_embedded_baseline_is_what_compiling_the_builtin_text_gives);
  tcase_add_test(tc, sbx_run_baseline_hands_out_a_copy_of_the_embedded_program);
  tcase_add_test(tc, the_embedded_baseline_decides_like_the_policy_text);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(baseline_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
