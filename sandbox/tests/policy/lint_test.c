/* The linter: what it warns about, where, and that it stays quiet about a
 * tight policy.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "sandbox/policy/lint.h"
#include "sandbox/policy/parser.h"
#include "sandbox/tests/policy/policy_test_util.h"

typedef struct {
  char *dir;
  char *path;
  GPtrArray *warnings;
} lint_run;

static lint_run lint_text(const char *text) {
  lint_run r;
  r.dir = policy_test_tmpdir();
  r.path = policy_test_write(r.dir, "lint.policy", text);
  GError *error = NULL;
  r.warnings = sbx_policy_lint_file(r.path, &error);
  ck_assert_msg(r.warnings != NULL, "lint refused: %s",
                error ? error->message : "?");
  return r;
}

static void lint_done(lint_run *r) {
  g_ptr_array_unref(r->warnings);
  policy_test_rmtree(r->dir);
  g_free(r->path);
  g_free(r->dir);
}

static char *all_warnings(const lint_run *r) {
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < r->warnings->len; i++)
    g_string_append_printf(s, "%s\n",
                           (char *)g_ptr_array_index(r->warnings, i));
  return g_string_free(s, FALSE);
}

/* Asserts some warning starts "lint.policy:LINE: warning: " and contains
 * text. */
static void expect_warning(const lint_run *r, unsigned line, const char *text) {
  char *prefix = g_strdup_printf("%s:%u: warning: ", r->path, line);
  for (guint i = 0; i < r->warnings->len; i++) {
    const char *w = g_ptr_array_index(r->warnings, i);
    if (g_str_has_prefix(w, prefix) && strstr(w, text) != NULL) {
      g_free(prefix);
      return;
    }
  }
  char *all = all_warnings(r);
  ck_abort_msg("no warning \"%s...%s\" among:\n%s", prefix, text, all);
}

static void expect_count(const lint_run *r, guint n) {
  char *all = all_warnings(r);
  ck_assert_msg(r->warnings->len == n, "expected %u warnings, got:\n%s", n,
                all);
  g_free(all);
}

START_TEST(lint_is_quiet_about_a_tight_policy) {
  lint_run r = lint_text(
      "read: 1\nwrite: arg0 == 1 || arg0 == 2\n"
      "ioctl: arg1 == FIONREAD || arg1 == TCGETS\n"
      "clone: arg0 & CLONE_THREAD\n"
      "prctl: arg0 == PR_SET_NAME\n"
      "mmap: arg2 in ~PROT_EXEC || arg2 in ~PROT_WRITE\n"
      "ptrace: return EPERM\nexecve: kill\n"
      "lseek: arg1 >= 1 && arg1 <= 1\n"
      "futex: arg1 in 3 && arg1 & 1\n"
      "@default return ENOSYS\n");
  expect_count(&r, 0);
  lint_done(&r);
}
END_TEST

START_TEST(lint_warns_that_a_denylist_policy_allows_by_default) {
  POLICY_TEST_NEEDS_CORPUS();
  char *path = policy_test_corpus("minijail/policies__cros_default_v0.policy");
  GError *error = NULL;
  GPtrArray *w = sbx_policy_lint_file(path, &error);
  ck_assert_ptr_nonnull(w);
  ck_assert_uint_eq(w->len, 2);
  char *first = g_strdup_printf(
      "%s:1: warning: @denylist makes this a "
      "default-allow policy",
      path);
  ck_assert(g_str_has_prefix(g_ptr_array_index(w, 0), first));
  const char *second = g_ptr_array_index(w, 1);
  ck_assert(strstr(second, "allowed by default") != NULL);
  ck_assert(strstr(second, "ptrace") != NULL);
  ck_assert(strstr(second, "io_uring_setup") != NULL);
  /* bpf is denied by the file, so it is not listed. */
  ck_assert(strstr(second, " bpf,") == NULL);
  g_free(first);
  g_ptr_array_unref(w);
  g_free(path);
}
END_TEST

START_TEST(lint_warns_that_default_allow_and_log_allow_by_default) {
  lint_run r = lint_text("read: 1\n@default allow\n");
  expect_warning(&r, 2, "@default allow makes this a default-allow policy");
  expect_warning(&r, 2,
                 "dangerous system calls no rule denies are allowed "
                 "by default: ptrace,");
  lint_done(&r);
  r = lint_text("@default log\nread: 1\nptrace: return EPERM\n");
  expect_warning(&r, 1, "@default log makes this a default-allow policy");
  char *all = all_warnings(&r);
  ck_assert_msg(strstr(all, ": ptrace,") == NULL, "%s", all);
  g_free(all);
  lint_done(&r);
}
END_TEST

START_TEST(lint_warns_about_dangerous_syscalls_allowed_unconditionally) {
  lint_run r = lint_text(
      "read: 1\n"
      "ptrace: 1\n"
      "ioctl: allow\n"
      "clone: 1\n"
      "execve: log\n"
      "io_uring_setup: 1\n"
      "unshare: 1\n"
      "mount: 1\n"
      "bpf: arg0 == 0\n"
      "perf_event_open: return EACCES\n");
  expect_warning(&r, 2,
                 "ptrace is allowed unconditionally: it reads and "
                 "writes other processes' memory");
  expect_warning(&r, 3,
                 "ioctl is allowed unconditionally: without a filter "
                 "on the command");
  expect_warning(&r, 4, "clone is allowed unconditionally");
  expect_warning(&r, 5, "execve is allowed unconditionally");
  expect_warning(&r, 6,
                 "io_uring_setup is allowed unconditionally: "
                 "io_uring operations bypass seccomp");
  expect_warning(&r, 7, "unshare is allowed unconditionally");
  expect_warning(&r, 8, "mount is allowed unconditionally");
  /* Filtered bpf and denied perf_event_open are not warned about. */
  expect_count(&r, 7);
  lint_done(&r);
}
END_TEST

START_TEST(lint_warns_about_identical_repeated_rules) {
  lint_run r = lint_text("read: 1\nwrite: 1\nread: 1\n");
  expect_warning(&r, 3, "read is defined again, identically (first at");
  char *first = g_strdup_printf("%s:1)", r.path);
  ck_assert(strstr(g_ptr_array_index(r.warnings, 0), first) != NULL);
  g_free(first);
  expect_count(&r, 1);
  lint_done(&r);
}
END_TEST

START_TEST(lint_warns_about_alternatives_that_can_never_be_true) {
  lint_run r = lint_text(
      "read: arg0 == 1 && arg0 == 2 || arg0 == 3\n"
      "write: arg0 & 0 || arg0 == 1\n"
      "lseek: arg1 < 0 || arg1 == 5\n"
      "pread64: arg3 > 5 && arg3 < 3 || arg3 == 9\n"
      "futex: arg1 in 3 && arg1 & 4 || arg1 == 0\n"
      "ioctl: arg1 > 0xffffffff || arg1 == FIONREAD\n"
      "close: arg0 != 4 && arg0 >= 4 && arg0 <= 4 || arg0 == 1\n"
      "fcntl: arg1 in 1 && arg1 >= 2 || arg1 == 1\n");
  expect_warning(&r, 1,
                 "read: alternative 1 (arg0 == 0x1 && arg0 == 0x2) "
                 "can never be true");
  expect_warning(&r, 2,
                 "write: alternative 1 (arg0 & 0x0) can never be "
                 "true");
  expect_warning(&r, 3, "lseek: alternative 1 (arg1 < 0x0) can never be true");
  expect_warning(&r, 4, "pread64: alternative 1");
  expect_warning(&r, 5, "futex: alternative 1");
  expect_warning(&r, 6,
                 "ioctl: alternative 1 (arg1 > 0xffffffff) can never "
                 "be true");
  expect_warning(&r, 7, "close: alternative 1");
  expect_warning(&r, 8, "fcntl: alternative 1");
  expect_count(&r, 8);
  lint_done(&r);
}
END_TEST

START_TEST(lint_warns_about_alternatives_after_an_always_true_one) {
  lint_run r = lint_text(
      "read: arg0 == 1 || arg0 >= 0 || arg0 == 3\n"
      "ioctl: arg1 in 0xffffffff || arg1 == FIONREAD\n"
      "write: arg0 == 1 && arg2 <= 0xffffffffffffffff\n");
  expect_warning(&r, 1,
                 "read: alternative 2 (arg0 >= 0x0) is always true, "
                 "so the filter matches every call");
  expect_warning(&r, 1,
                 "read: alternative 3 (arg0 == 0x3) is unreachable: "
                 "alternative 2 before it is always true");
  expect_warning(&r, 2,
                 "ioctl: alternative 1 (arg1 in 0xffffffff) is always "
                 "true");
  expect_warning(&r, 2,
                 "ioctl is allowed for every argument (alternative 1 "
                 "is always true)");
  expect_warning(&r, 3,
                 "write: comparison arg2 <= 0xffffffffffffffff in "
                 "alternative 1 is always true");
  expect_count(&r, 6);
  lint_done(&r);
}
END_TEST

START_TEST(lint_warns_about_repeated_alternatives) {
  lint_run r = lint_text(
      "ioctl: arg1 == TCGETS || arg1 == FIONREAD || "
      "arg1 == TCGETS\n");
  expect_warning(&r, 1,
                 "ioctl: alternative 3 (arg1 == 0x5401) repeats "
                 "alternative 1 and is unreachable");
  expect_count(&r, 1);
  lint_done(&r);
  /* The corpus has one: cros_healthd lists an ioctl twice. */
  POLICY_TEST_NEEDS_CORPUS();
  char *path = policy_test_corpus(
      "chromeos/diagnostics__init__amd64__cros_healthd-"
      "seccomp.policy");
  GPtrArray *w = sbx_policy_lint_file(path, NULL);
  ck_assert_ptr_nonnull(w);
  gboolean found = FALSE;
  for (guint i = 0; i < w->len; i++)
    found |= strstr(g_ptr_array_index(w, i),
                    "(arg1 == 0xc010640c) repeats "
                    "alternative 24") != NULL;
  ck_assert(found);
  g_ptr_array_unref(w);
  g_free(path);
}
END_TEST

START_TEST(lint_lists_warnings_in_file_and_line_order) {
  lint_run r = lint_text(
      "write: 1\nread: 1\n\nptrace: 1\nread: 1\n"
      "execve: 1\n");
  expect_count(&r, 3);
  expect_warning(&r, 4, "ptrace");
  const char *lines[] = {":4: warning: ptrace", ":5: warning: read",
                         ":6: warning: execve"};
  for (guint i = 0; i < 3; i++)
    ck_assert_msg(strstr(g_ptr_array_index(r.warnings, i), lines[i]) != NULL,
                  "%s", (char *)g_ptr_array_index(r.warnings, i));
  lint_done(&r);
}
END_TEST

START_TEST(lint_warns_in_included_files_at_their_own_lines) {
  char *dir = policy_test_tmpdir();
  char *inc = policy_test_write(dir, "inc.policy", "read: 1\n\nptrace: 1\n");
  char *top = policy_test_write(dir, "top.policy", "@include ./inc.policy\n");
  GPtrArray *w = sbx_policy_lint_file(top, NULL);
  ck_assert_ptr_nonnull(w);
  ck_assert_uint_eq(w->len, 1);
  char *want = g_strdup_printf("%s:3: warning: ptrace", inc);
  ck_assert(g_str_has_prefix(g_ptr_array_index(w, 0), want));
  g_free(want);
  g_ptr_array_unref(w);
  policy_test_rmtree(dir);
  g_free(inc);
  g_free(top);
  g_free(dir);
}
END_TEST

START_TEST(lint_reports_a_policy_that_does_not_parse_like_the_parser) {
  POLICY_TEST_NEEDS_CORPUS();
  char *path = policy_test_corpus("minijail/test__invalid_syscall_name.policy");
  GError *error = NULL;
  ck_assert_ptr_null(sbx_policy_lint_file(path, &error));
  ck_assert_int_eq(error->code, SBX_POLICY_ERROR_UNKNOWN_SYSCALL);
  ck_assert(strstr(error->message, ":1:1: unknown system call") != NULL);
  g_error_free(error);
  g_free(path);
}
END_TEST

START_TEST(lint_runs_over_the_whole_corpus) {
  POLICY_TEST_NEEDS_CORPUS();
  GPtrArray *files = policy_test_corpus_files("chromeos");
  guint total = 0;
  for (guint i = 0; i < files->len; i++) {
    GError *error = NULL;
    GPtrArray *w = sbx_policy_lint_file(g_ptr_array_index(files, i), &error);
    ck_assert_msg(w != NULL, "%s", error ? error->message : "?");
    for (guint k = 0; k < w->len; k++)
      ck_assert(strstr(g_ptr_array_index(w, k), ": warning: ") != NULL);
    total += w->len;
    g_ptr_array_unref(w);
  }
  /* ChromeOS policies allow clone, execve and ioctl unconditionally in
   * several places; a linter that finds nothing is not looking. */
  ck_assert_uint_gt(total, 20);
  g_ptr_array_unref(files);
}
END_TEST

static Suite *lint_suite(void) {
  Suite *s = suite_create("policy_lint");
  TCase *tc = tcase_create("lint");
  tcase_set_timeout(tc, 20);
  tcase_add_test(tc, lint_is_quiet_about_a_tight_policy);
  tcase_add_test(tc, lint_warns_that_a_denylist_policy_allows_by_default);
  tcase_add_test(tc, lint_warns_that_default_allow_and_log_allow_by_default);
  tcase_add_test(tc,
                 lint_warns_about_dangerous_syscalls_allowed_unconditionally);
  tcase_add_test(tc, lint_warns_about_identical_repeated_rules);
  tcase_add_test(tc, lint_warns_about_alternatives_that_can_never_be_true);
  tcase_add_test(tc, lint_warns_about_alternatives_after_an_always_true_one);
  tcase_add_test(tc, lint_warns_about_repeated_alternatives);
  tcase_add_test(tc, lint_lists_warnings_in_file_and_line_order);
  tcase_add_test(tc, lint_warns_in_included_files_at_their_own_lines);
  tcase_add_test(tc, lint_reports_a_policy_that_does_not_parse_like_the_parser);
  tcase_add_test(tc, lint_runs_over_the_whole_corpus);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(lint_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
