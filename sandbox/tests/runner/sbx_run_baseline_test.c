/* sbx-run's build-time baselines (sandbox/runner/baseline.h): each program
 * embedded in sbx-run must be exactly what compiling its built-in text
 * (sbx-run.policy, sbx-run-kernel.policy) gives with the compiler and
 * syscall table in this tree, and it must decide like the text does.
 * Each is embedded as its text says and with the tracing calls allowed. */
#include <check.h>
#include <linux/audit.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include <glib.h>

#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/policy/parser.h"
#include "sandbox/runner/baseline.h"

/* Loop index bit 0: the default mode's baseline (else the supervisor's);
 * bit 1: the variant that allows tracing (--allow-ptrace). */
#define KERNEL(i) (((i)&1) != 0)
#define PTRACE(i) (((i)&2) != 0)

static const sbx_run_embedded_baseline *embedded(int i) {
  return &sbx_run_baselines[KERNEL(i)][PTRACE(i)];
}

static const char *policy_name(bool kernel) {
  return kernel ? SBX_RUN_KERNEL_BASELINE_POLICY : SBX_RUN_BASELINE_POLICY;
}

static void assert_is_the_embedded_program(int i, const sbx_bpf_program *p) {
  ck_assert_uint_eq(p->len, embedded(i)->len);
  ck_assert_int_eq(
      memcmp(p->insns, embedded(i)->insns, p->len * sizeof(struct sock_filter)),
      0);
}

START_TEST(the_embedded_baseline_is_what_compiling_the_builtin_text_gives) {
  sbx_bpf_program fresh = {0};
  GError *error = NULL;
  ck_assert_msg(sbx_run_baseline_compile(policy_name(KERNEL(_i)), PTRACE(_i),
                                         &fresh, &error),
                "%s", error ? error->message : "");
  assert_is_the_embedded_program(_i, &fresh);
  sbx_bpf_program_clear(&fresh);
}
END_TEST

START_TEST(sbx_run_baseline_hands_out_a_copy_of_the_embedded_program) {
  sbx_bpf_program p = {0};
  sbx_run_baseline(KERNEL(_i), PTRACE(_i), &p);
  ck_assert_ptr_ne(p.insns, embedded(_i)->insns);
  assert_is_the_embedded_program(_i, &p);
  sbx_bpf_program_clear(&p);
}
END_TEST

/* The embedded program against the parsed text, on calls of every
 * verdict the baseline has: allowed, user-notify, an errno, and an
 * argument filter on both sides of its test. */
START_TEST(the_embedded_baseline_decides_like_the_policy_text) {
  GError *error = NULL;
  bool kernel = KERNEL(_i);
  sbx_policy *pol =
      sbx_run_baseline_policy(policy_name(kernel), PTRACE(_i), &error);
  ck_assert_msg(pol, "%s", error ? error->message : "");
  const uint32_t file_call =
      kernel ? SECCOMP_RET_ALLOW : SECCOMP_RET_USER_NOTIF;
  const uint32_t refused = kernel ? SECCOMP_RET_ERRNO : SECCOMP_RET_USER_NOTIF;
  const uint32_t tracing = PTRACE(_i) ? SECCOMP_RET_ALLOW : refused;
  struct {
    int nr;
    uint64_t args[4];
    uint32_t action;
  } cases[] = {
      {__NR_getpid, {0}, SECCOMP_RET_ALLOW},
      {__NR_openat, {0}, file_call},
      {__NR_execve, {0}, file_call},
      {__NR_io_uring_setup, {0}, SECCOMP_RET_ERRNO},
      {__NR_personality, {0}, SECCOMP_RET_ALLOW},
      {__NR_personality, {0x0400000}, refused},
      {__NR_ptrace, {0}, tracing},
      {__NR_process_vm_readv, {0}, tracing},
      {__NR_process_vm_writev, {0}, tracing},
      /* The default mode's mode checks: a set-id bit is never set on a
       * created file; a chmod asking for one is the supervisor's (the
       * setgid bit of a directory). */
      {__NR_fchmod, {3, 0755}, kernel ? SECCOMP_RET_ALLOW : file_call},
      {__NR_fchmod, {3, 04755}, SECCOMP_RET_USER_NOTIF},
      {__NR_fchmodat, {3, 0, 02775}, SECCOMP_RET_USER_NOTIF},
      {__NR_fchmodat, {3, 0, 0775}, kernel ? SECCOMP_RET_ALLOW : file_call},
      {__NR_openat, {3, 0, 0101, 0644}, file_call},
      {__NR_openat, {3, 0, 0101, 02755}, refused},
      /* A FIFO and a regular file reach Landlock in the default mode; a
       * device, a socket, a set-id or sticky bit never. */
      {__NR_mknodat, {3, 0, 010644}, kernel ? SECCOMP_RET_ALLOW : refused},
      {__NR_mknodat, {3, 0, 014644}, refused},
      {__NR_mknodat, {3, 0, 020644}, refused},
      {__NR_mknodat, {3, 0, 0100644}, kernel ? SECCOMP_RET_ALLOW : refused},
      {__NR_mknodat, {3, 0, 0644}, kernel ? SECCOMP_RET_ALLOW : refused},
      {__NR_mknodat, {3, 0, 0104644}, refused},
      {__NR_mknodat, {3, 0, 0101644}, refused},
      {__NR_mknodat, {3, 0, 0140644}, refused},
      {__NR_mknod, {0, 010600}, kernel ? SECCOMP_RET_ALLOW : refused},
      {__NR_mknod, {0, 0100600}, kernel ? SECCOMP_RET_ALLOW : refused},
      {__NR_mknod, {0, 0102600}, refused},
      {__NR_mknod, {0, 060600}, refused},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    struct seccomp_data d = {.nr = cases[i].nr, .arch = AUDIT_ARCH_X86_64};
    for (size_t a = 0; a < 4; a++)
      d.args[a] = cases[i].args[a];
    uint32_t verdict =
        sbx_bpf_run(embedded(_i)->insns, embedded(_i)->len, &d, NULL);
    ck_assert_uint_eq(verdict, sbx_policy_eval(pol, &d));
    ck_assert_msg((verdict & SECCOMP_RET_ACTION_FULL) == cases[i].action,
                  "%s: syscall %d arg0 %#llx: got %#x", policy_name(kernel),
                  cases[i].nr, (unsigned long long)cases[i].args[0], verdict);
  }
  sbx_policy_free(pol);
}
END_TEST

static Suite *baseline_suite(void) {
  Suite *s = suite_create("sbx-run-baseline");
  TCase *tc = tcase_create("embedded");
  tcase_add_loop_test(
      tc, the_embedded_baseline_is_what_compiling_the_builtin_text_gives, 0, 4);
  tcase_add_loop_test(
      tc, sbx_run_baseline_hands_out_a_copy_of_the_embedded_program, 0, 4);
  tcase_add_loop_test(tc, the_embedded_baseline_decides_like_the_policy_text, 0,
                      4);
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
