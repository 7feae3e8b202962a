/* The direct evaluator: policy.h's meaning for every rule form, the
 * architecture and x32 checks, the 32-bit argument rule (docs/threat-model.md,
 * S4) and the SECCOMP_RET_* encoding of every action.
 */
#include <check.h>
#include <errno.h>
#include <linux/audit.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include <glib.h>

#include "sandbox/policy/constants.h"
#include "sandbox/base/syscalls.h"
#include "sandbox/tests/policy/policy_test_util.h"

#define JUNK (UINT64_C(1) << 32)
#define EVAL(p, name, ...) policy_test_eval(p, name, __VA_ARGS__)

static uint64_t constant(const char *name) {
  uint64_t v = 0;
  ck_assert_msg(sbx_constant_lookup(name, &v), "%s", name);
  return v;
}

START_TEST(eval_encodes_every_action_as_its_seccomp_return_value) {
  static const struct {
    sbx_action action;
    uint32_t ret;
  } kCases[] = {
      {{SBX_ACTION_KILL_PROCESS, 0}, SECCOMP_RET_KILL_PROCESS},
      {{SBX_ACTION_KILL_THREAD, 0}, SECCOMP_RET_KILL_THREAD},
      {{SBX_ACTION_TRAP, 0}, SECCOMP_RET_TRAP},
      {{SBX_ACTION_TRAP, 7}, SECCOMP_RET_TRAP | 7},
      {{SBX_ACTION_ERRNO, EPERM}, SECCOMP_RET_ERRNO | EPERM},
      {{SBX_ACTION_ERRNO, 4095}, SECCOMP_RET_ERRNO | 4095},
      {{SBX_ACTION_USER_NOTIF, 0}, SECCOMP_RET_USER_NOTIF},
      {{SBX_ACTION_TRACE, 0}, SECCOMP_RET_TRACE},
      {{SBX_ACTION_TRACE, 0x1234}, SECCOMP_RET_TRACE | 0x1234},
      {{SBX_ACTION_LOG, 0}, SECCOMP_RET_LOG},
      {{SBX_ACTION_ALLOW, 0}, SECCOMP_RET_ALLOW},
      /* Data means nothing to these; it must not leak into the value. */
      {{SBX_ACTION_ALLOW, 5}, SECCOMP_RET_ALLOW},
      {{SBX_ACTION_KILL_PROCESS, 5}, SECCOMP_RET_KILL_PROCESS},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(kCases); i++)
    ck_assert_msg(sbx_action_to_ret(kCases[i].action) == kCases[i].ret,
                  "case %zu: 0x%x", i, sbx_action_to_ret(kCases[i].action));
  sbx_action bogus = {(sbx_action_kind)99, 0};
  ck_assert_uint_eq(sbx_action_to_ret(bogus), SECCOMP_RET_KILL_PROCESS);
}
END_TEST

START_TEST(eval_kills_other_architectures_before_any_rule) {
  sbx_policy *p = policy_test_parse_ok("@default allow\ngetpid: 1\n");
  struct seccomp_data d = {.nr = 39, .arch = AUDIT_ARCH_X86_64};
  ck_assert_uint_eq(sbx_policy_eval(p, &d), SECCOMP_RET_ALLOW);
  d.arch = AUDIT_ARCH_I386;
  ck_assert_uint_eq(sbx_policy_eval(p, &d), SECCOMP_RET_KILL_PROCESS);
  d.arch = AUDIT_ARCH_AARCH64;
  ck_assert_uint_eq(sbx_policy_eval(p, &d), SECCOMP_RET_KILL_PROCESS);
  sbx_policy_free(p);
}
END_TEST

START_TEST(eval_kills_x32_numbers_even_under_a_default_of_allow) {
  sbx_policy *p = policy_test_parse_ok("@default allow\ngetpid: 1\n");
  struct seccomp_data d = {.nr = 0x40000000 | 39, .arch = AUDIT_ARCH_X86_64};
  ck_assert_uint_eq(sbx_policy_eval(p, &d), SECCOMP_RET_KILL_PROCESS);
  d.nr = 0x40000000 | 1000;
  ck_assert_uint_eq(sbx_policy_eval(p, &d), SECCOMP_RET_KILL_PROCESS);
  d.nr = 1000; /* a number nobody assigned: the default */
  ck_assert_uint_eq(sbx_policy_eval(p, &d), SECCOMP_RET_ALLOW);
  sbx_policy_free(p);
}
END_TEST

START_TEST(eval_uses_the_default_for_syscalls_without_a_rule) {
  sbx_policy *p = policy_test_parse_ok("read: 1\n");
  ck_assert_uint_eq(EVAL(p, "read", 0, 0, 0, 0, 0, 0), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "write", 1, 0, 0, 0, 0, 0),
                    SECCOMP_RET_KILL_PROCESS);
  sbx_policy_free(p);
  p = policy_test_parse_ok("@default return ENOSYS\nread: 1\n");
  ck_assert_uint_eq(EVAL(p, "write", 1, 0, 0, 0, 0, 0),
                    SECCOMP_RET_ERRNO | ENOSYS);
  sbx_policy_free(p);
  p = policy_test_parse_ok("");
  ck_assert_uint_eq(EVAL(p, "read", 0, 0, 0, 0, 0, 0),
                    SECCOMP_RET_KILL_PROCESS);
  sbx_policy_free(p);
}
END_TEST

START_TEST(eval_returns_the_action_of_an_unconditional_rule) {
  sbx_policy *p = policy_test_parse_ok(
      "read: 1\nwrite: return EBADF\nclose: trap\nopenat: user-notify\n"
      "fstat: log\nexecve: kill-thread\nptrace: trace\n@default allow\n");
  ck_assert_uint_eq(EVAL(p, "read", 9, 9, 9, 9, 9, 9), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "write", 1, 0, 0, 0, 0, 0),
                    SECCOMP_RET_ERRNO | EBADF);
  ck_assert_uint_eq(EVAL(p, "close", 3, 0, 0, 0, 0, 0), SECCOMP_RET_TRAP);
  ck_assert_uint_eq(EVAL(p, "openat", 0, 0, 0, 0, 0, 0),
                    SECCOMP_RET_USER_NOTIF);
  ck_assert_uint_eq(EVAL(p, "fstat", 0, 0, 0, 0, 0, 0), SECCOMP_RET_LOG);
  ck_assert_uint_eq(EVAL(p, "execve", 0, 0, 0, 0, 0, 0),
                    SECCOMP_RET_KILL_THREAD);
  ck_assert_uint_eq(EVAL(p, "ptrace", 0, 0, 0, 0, 0, 0), SECCOMP_RET_TRACE);
  sbx_policy_free(p);
}
END_TEST

START_TEST(eval_allows_a_matching_expression_and_otherwise_takes_mismatch) {
  sbx_policy *p = policy_test_parse_ok(
      "read: arg0 == 0\n"
      "write: arg0 == 1 || arg0 == 2; return EBADF\n"
      "@default trap\n");
  ck_assert_uint_eq(EVAL(p, "read", 0, 0, 0, 0, 0, 0), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "read", 3, 0, 0, 0, 0, 0), SECCOMP_RET_TRAP);
  ck_assert_uint_eq(EVAL(p, "write", 1, 0, 0, 0, 0, 0), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "write", 2, 0, 0, 0, 0, 0), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "write", 3, 0, 0, 0, 0, 0),
                    SECCOMP_RET_ERRNO | EBADF);
  sbx_policy_free(p);
}
END_TEST

START_TEST(eval_needs_every_comparison_of_one_alternative) {
  sbx_policy *p = policy_test_parse_ok(
      "socket: arg0 == AF_UNIX || arg0 == AF_NETLINK && arg2 == 15\n");
  uint64_t unix_ = constant("AF_UNIX"), nl = constant("AF_NETLINK");
  ck_assert_uint_eq(EVAL(p, "socket", unix_, 1, 99, 0, 0, 0),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "socket", nl, 3, 15, 0, 0, 0), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "socket", nl, 3, 0, 0, 0, 0),
                    SECCOMP_RET_KILL_PROCESS);
  ck_assert_uint_eq(EVAL(p, "socket", constant("AF_INET"), 1, 15, 0, 0, 0),
                    SECCOMP_RET_KILL_PROCESS);
  sbx_policy_free(p);
}
END_TEST

START_TEST(eval_applies_each_operator_unsigned) {
  static const struct {
    const char *expr;
    uint64_t arg;
    bool holds;
  } kCases[] = {
      {"arg1 == 5", 5, true},          {"arg1 == 5", 6, false},
      {"arg1 != 5", 6, true},          {"arg1 != 5", 5, false},
      {"arg1 < 5", 4, true},           {"arg1 < 5", 5, false},
      {"arg1 < 5", UINT64_MAX, false}, /* unsigned: -1 is huge */
      {"arg1 <= 5", 5, true},          {"arg1 <= 5", 6, false},
      {"arg1 > 5", 6, true},           {"arg1 > 5", 5, false},
      {"arg1 > 5", UINT64_MAX, true},  {"arg1 >= 5", 5, true},
      {"arg1 >= 5", 4, false},         {"arg1 & 6", 2, true},
      {"arg1 & 6", 9, false},          {"arg1 & 6", 0, false},
      {"arg1 in 6", 4, true},          {"arg1 in 6", 0, true},
      {"arg1 in 6", 7, false},         {"arg1 in ~4", 3, true},
      {"arg1 in ~4", 5, false},        {"arg1 == -1", UINT64_MAX, true},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(kCases); i++) {
    /* lseek's offset (arg1) is full-width. */
    char *text = g_strdup_printf("lseek: %s\n", kCases[i].expr);
    sbx_policy *p = policy_test_parse_ok(text);
    uint32_t want =
        kCases[i].holds ? SECCOMP_RET_ALLOW : SECCOMP_RET_KILL_PROCESS;
    ck_assert_msg(EVAL(p, "lseek", 3, kCases[i].arg, 0, 0, 0, 0) == want,
                  "%s with 0x%" G_GINT64_MODIFIER "x", kCases[i].expr,
                  kCases[i].arg);
    sbx_policy_free(p);
    g_free(text);
  }
}
END_TEST

/* S4 (docs/threat-model.md): ioctl(0, TIOCSTI | 1UL << 32) is TIOCSTI to the
 * kernel, so it must be TIOCSTI to the policy, in both directions. */
START_TEST(eval_junk_above_an_int_sized_argument_fools_no_rule) {
  uint64_t tiocsti = TIOCSTI, fionread = FIONREAD;
  /* An allowlist entry still matches what the kernel will do. */
  sbx_policy *p = policy_test_parse_ok("ioctl: arg1 == FIONREAD\n");
  ck_assert_uint_eq(EVAL(p, "ioctl", 0, fionread | JUNK, 0, 0, 0, 0),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "ioctl", 0, tiocsti | JUNK, 0, 0, 0, 0),
                    SECCOMP_RET_KILL_PROCESS);
  sbx_policy_free(p);

  /* An allow-all-but rule cannot be passed with a disguised TIOCSTI. */
  p = policy_test_parse_ok("ioctl: arg1 != TIOCSTI && arg1 != TIOCLINUX\n");
  ck_assert_uint_eq(EVAL(p, "ioctl", 0, fionread, 0, 0, 0, 0),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "ioctl", 0, tiocsti, 0, 0, 0, 0),
                    SECCOMP_RET_KILL_PROCESS);
  ck_assert_uint_eq(EVAL(p, "ioctl", 0, tiocsti | JUNK, 0, 0, 0, 0),
                    SECCOMP_RET_KILL_PROCESS);
  ck_assert_uint_eq(
      EVAL(p, "ioctl", 0, tiocsti | (UINT64_C(0xffff) << 40), 0, 0, 0, 0),
      SECCOMP_RET_KILL_PROCESS);
  sbx_policy_free(p);

  /* A denylist entry cannot be dodged either. */
  p = policy_test_parse_ok("@denylist\nioctl: arg1 == TIOCSTI; return EPERM\n");
  ck_assert_uint_eq(EVAL(p, "ioctl", 0, tiocsti | JUNK, 0, 0, 0, 0),
                    SECCOMP_RET_ERRNO | EPERM);
  ck_assert_uint_eq(EVAL(p, "ioctl", 0, fionread | JUNK, 0, 0, 0, 0),
                    SECCOMP_RET_ALLOW);
  sbx_policy_free(p);

  /* Masks and ranges see the same low half. */
  p = policy_test_parse_ok(
      "socket: arg0 == AF_UNIX && arg1 in SOCK_STREAM|SOCK_CLOEXEC\n"
      "kill: arg1 < 32\n");
  uint64_t unix_ = constant("AF_UNIX"), stream = constant("SOCK_STREAM");
  ck_assert_uint_eq(EVAL(p, "socket", unix_ | JUNK, stream | JUNK, 0, 0, 0, 0),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "kill", 1, 9 | JUNK, 0, 0, 0, 0),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "kill", 1, 40 | JUNK, 0, 0, 0, 0),
                    SECCOMP_RET_KILL_PROCESS);
  sbx_policy_free(p);
}
END_TEST

START_TEST(eval_compares_full_width_arguments_in_full) {
  /* mprotect's prot is unsigned long: the kernel reads every bit (and
   * fails PROT_READ | 1 << 32 with EINVAL), so the policy does too. */
  sbx_policy *p = policy_test_parse_ok(
      "mprotect: arg2 == PROT_READ\nlseek: arg1 == 0x100000000\n");
  ck_assert_uint_eq(EVAL(p, "mprotect", 0, 4096, 1, 0, 0, 0),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "mprotect", 0, 4096, 1 | JUNK, 0, 0, 0),
                    SECCOMP_RET_KILL_PROCESS);
  ck_assert_uint_eq(EVAL(p, "lseek", 3, JUNK, 0, 0, 0, 0), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "lseek", 3, 0, 0, 0, 0, 0),
                    SECCOMP_RET_KILL_PROCESS);
  sbx_policy_free(p);
}
END_TEST

START_TEST(eval_never_matches_comparisons_on_missing_arguments) {
  /* A hand-built policy with an argument index the parser would refuse:
   * the comparison never holds, so the rule fails closed. */
  sbx_cmp cmp = {.arg = 9, .op = SBX_CMP_EQ, .value = 0};
  sbx_conjunction alt = {&cmp, 1};
  sbx_rule rule = {.nr = 0,
                   .name = (char *)"read",
                   .alts = &alt,
                   .n_alts = 1,
                   .on_match = {SBX_ACTION_ALLOW, 0},
                   .on_mismatch = {SBX_ACTION_ERRNO, EPERM}};
  sbx_policy p = {
      .rules = &rule, .n_rules = 1, .default_action = {SBX_ACTION_ALLOW, 0}};
  ck_assert_uint_eq(EVAL(&p, "read", 0, 0, 0, 0, 0, 0),
                    SECCOMP_RET_ERRNO | EPERM);
}
END_TEST

START_TEST(eval_gives_the_corpus_policies_their_minijail_meaning) {
  POLICY_TEST_NEEDS_CORPUS();
  char *cat = policy_test_corpus("minijail/examples__cat.policy");
  GError *error = NULL;
  sbx_policy *p = sbx_policy_parse_file(cat, &error);
  ck_assert_ptr_nonnull(p);
  uint64_t r = constant("PROT_READ"), w = constant("PROT_WRITE"),
           x = constant("PROT_EXEC");
  /* W^X: executable or writable mappings, never both. */
  ck_assert_uint_eq(EVAL(p, "mmap", 0, 4096, r | x, 2, -1, 0),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "mmap", 0, 4096, r | w, 2, -1, 0),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "mmap", 0, 4096, r | w | x, 2, -1, 0),
                    SECCOMP_RET_KILL_PROCESS);
  ck_assert_uint_eq(EVAL(p, "read", 0, 0, 0, 0, 0, 0), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "socket", 1, 1, 0, 0, 0, 0),
                    SECCOMP_RET_KILL_PROCESS);
  sbx_policy_free(p);
  g_free(cat);

  char *deny = policy_test_corpus("minijail/policies__cros_default_v0.policy");
  p = sbx_policy_parse_file(deny, &error);
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_eq(EVAL(p, "bpf", 0, 0, 0, 0, 0, 0),
                    SECCOMP_RET_ERRNO | EPERM);
  ck_assert_uint_eq(EVAL(p, "getpid", 0, 0, 0, 0, 0, 0), SECCOMP_RET_ALLOW);
  sbx_policy_free(p);
  g_free(deny);

  char *io = policy_test_corpus("minijail/test__stdin_stdout.policy");
  p = sbx_policy_parse_file(io, &error);
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_eq(EVAL(p, "read", 0, 0, 0, 0, 0, 0), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "read", 3, 0, 0, 0, 0, 0),
                    SECCOMP_RET_KILL_PROCESS);
  ck_assert_uint_eq(EVAL(p, "write", 2, 0, 0, 0, 0, 0), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(EVAL(p, "write", 0, 0, 0, 0, 0, 0),
                    SECCOMP_RET_KILL_PROCESS);
  sbx_policy_free(p);
  g_free(io);
}
END_TEST

START_TEST(eval_agrees_with_cmp_holds_on_the_32_bit_rule) {
  sbx_cmp narrow = {
      .arg = 1, .arg_is_32bit = true, .op = SBX_CMP_EQ, .value = 0x5412};
  sbx_cmp wide = narrow;
  wide.arg_is_32bit = false;
  ck_assert(sbx_cmp_holds(&narrow, 0x5412 | JUNK));
  ck_assert(!sbx_cmp_holds(&wide, 0x5412 | JUNK));
  sbx_cmp in = {
      .arg = 1, .arg_is_32bit = true, .op = SBX_CMP_IN, .value = ~UINT64_C(4)};
  ck_assert(sbx_cmp_holds(&in, 3 | (UINT64_C(4) << 32)));
  ck_assert(!sbx_cmp_holds(&in, 4));
  sbx_cmp gt = {
      .arg = 1, .arg_is_32bit = true, .op = SBX_CMP_GT, .value = 0xffffffff};
  ck_assert(!sbx_cmp_holds(&gt, UINT64_MAX));
}
END_TEST

static Suite *eval_suite(void) {
  Suite *s = suite_create("policy_eval");
  TCase *tc = tcase_create("eval");
  tcase_add_test(tc, eval_encodes_every_action_as_its_seccomp_return_value);
  tcase_add_test(tc, eval_kills_other_architectures_before_any_rule);
  tcase_add_test(tc, eval_kills_x32_numbers_even_under_a_default_of_allow);
  tcase_add_test(tc, eval_uses_the_default_for_syscalls_without_a_rule);
  tcase_add_test(tc, eval_returns_the_action_of_an_unconditional_rule);
  tcase_add_test(
      tc, eval_allows_a_matching_expression_and_otherwise_takes_mismatch);
  tcase_add_test(tc, eval_needs_every_comparison_of_one_alternative);
  tcase_add_test(tc, eval_applies_each_operator_unsigned);
  tcase_add_test(tc, eval_junk_above_an_int_sized_argument_fools_no_rule);
  tcase_add_test(tc, eval_compares_full_width_arguments_in_full);
  tcase_add_test(tc, eval_never_matches_comparisons_on_missing_arguments);
  tcase_add_test(tc, eval_gives_the_corpus_policies_their_minijail_meaning);
  tcase_add_test(tc, eval_agrees_with_cmp_holds_on_the_32_bit_rule);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(eval_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
