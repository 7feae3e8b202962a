/* Policies written back as text (sbx_policy_format): every built-in policy
 * and every ChromeOS policy of the corpus, parsed, written and parsed
 * again, means the same on inputs built from its own constants; the rules
 * the language cannot say outside @denylist are refused by name. */
#include <check.h>
#include <linux/audit.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/policy/format.h"
#include "sandbox/policy/parser.h"
#include "sandbox/tests/policy/policy_test_util.h"

/* Inputs from the policy's constants: each one, one off, in both halves,
 * for every rule's call; plus calls without a rule. */
static void assert_same_meaning(const sbx_policy *a, const sbx_policy *b) {
  ck_assert_uint_eq(a->n_rules, b->n_rules);
  for (size_t i = 0; i < a->n_rules; i++) {
    const sbx_rule *r = &a->rules[i];
    uint64_t values[64];
    size_t n = 0;
    values[n++] = 0;
    values[n++] = ~0ull;
    for (size_t x = 0; x < r->n_alts && n + 4 < G_N_ELEMENTS(values); x++)
      for (size_t c = 0; c < r->alts[x].n_cmps && n + 4 < G_N_ELEMENTS(values);
           c++) {
        uint64_t v = r->alts[x].cmps[c].value;
        values[n++] = v;
        values[n++] = v + 1;
        values[n++] = v - 1;
        values[n++] = v | 0xdead000000000000ull;
      }
    for (size_t k = 0; k < n; k++)
      for (int arg = 0; arg < 6; arg++) {
        struct seccomp_data d = {.nr = r->nr, .arch = AUDIT_ARCH_X86_64};
        d.args[arg] = values[k];
        d.args[(arg + 1) % 6] = values[(k + 1) % n];
        ck_assert_msg(sbx_policy_eval(a, &d) == sbx_policy_eval(b, &d),
                      "%s arg%d=0x%llx", r->name ? r->name : "?", arg,
                      (unsigned long long)values[k]);
      }
  }
  for (int nr = 0; nr < 470; nr++) {
    struct seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64};
    ck_assert_uint_eq(sbx_policy_eval(a, &d), sbx_policy_eval(b, &d));
  }
}

static void round_trip(const sbx_policy *p, const char *what) {
  GError *error = NULL;
  g_autofree char *text =
      sbx_policy_format(p, "written back\nby a test", &error);
  ck_assert_msg(text, "%s: %s", what, error ? error->message : "");
  ck_assert(g_str_has_prefix(text, "# written back\n# by a test\n"));
  sbx_policy *again = sbx_policy_parse_string(text, what, NULL, &error);
  ck_assert_msg(again, "%s: %s\n%s", what, error ? error->message : "", text);
  assert_same_meaning(p, again);
  /* Written again, the text is the same but for the rules' origins. */
  g_autofree char *twice = sbx_policy_format(again, NULL, &error);
  ck_assert_ptr_nonnull(twice);
  sbx_policy_free(again);
}

static const char *const builtins[] = {
    "renderer.policy", "utility.policy", "common.policy",
    "baseline.policy", "broker.policy",  "broker-client.policy",
    "sbx-run.policy",
};

START_TEST(builtin_policies_mean_the_same_written_back) {
  GError *error = NULL;
  sbx_policy *p = sbx_builtin_policy(builtins[_i], &error);
  ck_assert_msg(p, "%s", error ? error->message : "");
  round_trip(p, builtins[_i]);
  sbx_policy_free(p);
}
END_TEST

START_TEST(corpus_policies_mean_the_same_written_back) {
  POLICY_TEST_NEEDS_CORPUS();
  static const char *const dirs[] = {"chromeos", "minijail"};
  unsigned written = 0;
  for (size_t d = 0; d < G_N_ELEMENTS(dirs); d++) {
    g_autofree char *path = policy_test_corpus(dirs[d]);
    GDir *dir = g_dir_open(path, 0, NULL);
    ck_assert_msg(dir != NULL, "corpus %s missing", path);
    const char *name;
    while ((name = g_dir_read_name(dir)) != NULL) {
      if (!g_str_has_suffix(name, ".policy"))
        continue;
      g_autofree char *file = g_build_filename(path, name, NULL);
      GError *error = NULL;
      sbx_policy *p = sbx_policy_parse_file(file, &error);
      if (!p) { /* the parser's and compiler's tests cover these */
        g_clear_error(&error);
        continue;
      }
      round_trip(p, file);
      written++;
      sbx_policy_free(p);
    }
    g_dir_close(dir);
  }
  ck_assert_uint_gt(written, 0);
}
END_TEST

START_TEST(every_form_of_rule_is_written) {
  sbx_policy *p = policy_test_parse_ok(
      "@default trap\n"
      "read: 1\n"
      "write: kill-thread\n"
      "fsync: return EPERM\n"
      "kill: arg0 == SBX_SELF_PID; return EPERM\n"
      "ioctl: arg1 == 0x5401 || arg1 == 0x541b && arg0 < 3; return ENOTTY\n"
      "mmap: arg2 in 0x3\n"
      "openat: arg2 & 0x40\n"
      "close: log\n"
      "getpid: user-notify\n");
  round_trip(p, "forms");
  GError *error = NULL;
  g_autofree char *text = sbx_policy_format(p, NULL, &error);
  ck_assert_ptr_nonnull(strstr(text, "@default trap\n"));
  ck_assert_ptr_nonnull(strstr(text, "kill: arg0 == SBX_SELF_PID; return 1"));
  ck_assert_ptr_nonnull(strstr(text, "fsync: return 1"));
  ck_assert_ptr_nonnull(strstr(text, "mmap: arg2 in 0x3"));
  sbx_policy_free(p);
}
END_TEST

/* @denylist: a rule whose match is an errno cannot be said otherwise. */
START_TEST(a_conditional_denial_is_refused_by_name) {
  sbx_policy *p = policy_test_parse_ok(
      "@denylist\n"
      "ptrace: return EPERM\n"
      "ioctl: arg1 == 0x5412; return EPERM\n");
  GError *error = NULL;
  char *text = sbx_policy_format(p, NULL, &error);
  ck_assert_ptr_null(text);
  ck_assert_ptr_nonnull(error);
  ck_assert_msg(
      strstr(error->message, "ioctl") && strstr(error->message, ":3:"), "%s",
      error->message);
  g_error_free(error);
  sbx_policy_free(p);
}
END_TEST

int main(void) {
  Suite *s = suite_create("policy_format");
  TCase *tc = tcase_create("format");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, builtin_policies_mean_the_same_written_back, 0,
                      G_N_ELEMENTS(builtins));
  tcase_add_test(tc, corpus_policies_mean_the_same_written_back);
  tcase_add_test(tc, every_form_of_rule_is_written);
  tcase_add_test(tc, a_conditional_denial_is_refused_by_name);
  suite_add_tcase(s, tc);
  SRunner *runner = srunner_create(s);
  srunner_run_all(runner, CK_NORMAL);
  int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
