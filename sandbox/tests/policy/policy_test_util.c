/* Helpers shared by the policy suites. */
#include "sandbox/tests/policy/policy_test_util.h"

#include <check.h>
#include <stdio.h>
#include <linux/audit.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "sandbox/kernel/seccomp/loader.h"
#include "sandbox/base/syscalls.h"

bool policy_test_corpus_present(const char *test) {
  if (SBX_CORPUS_DIR[0] != '\0' &&
      g_file_test(SBX_CORPUS_DIR, G_FILE_TEST_IS_DIR))
    return true;
  /* Check names the test function NAME_fn. */
  size_t len = strlen(test);
  if (len > 3 && strcmp(test + len - 3, "_fn") == 0)
    len -= 3;
  printf(
      "sbx-skip: %.*s: no corpus (gn arg sbx_corpus_dir, "
      "build/corpus.gni)\n",
      (int)len, test);
  fflush(stdout);
  return false;
}

char *policy_test_corpus(const char *relative) {
  return g_build_filename(SBX_CORPUS_DIR, relative, NULL);
}

static int compare_strings(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

GPtrArray *policy_test_corpus_files(const char *subdir) {
  char *dir = policy_test_corpus(subdir);
  GError *error = NULL;
  GDir *d = g_dir_open(dir, 0, &error);
  ck_assert_msg(d != NULL, "corpus %s: %s", dir, error ? error->message : "?");
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  const char *name;
  while ((name = g_dir_read_name(d)) != NULL) {
    char *path = g_build_filename(dir, name, NULL);
    if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
      g_ptr_array_add(files, path);
    else
      g_free(path);
  }
  g_dir_close(d);
  g_free(dir);
  g_ptr_array_sort(files, compare_strings);
  return files;
}

char *policy_test_tmpdir(void) {
  char *tmpl = g_strdup("/tmp/sbx-policy-test-XXXXXX");
  ck_assert_ptr_nonnull(g_mkdtemp(tmpl));
  return tmpl;
}

void policy_test_rmtree(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  if (d != NULL) {
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL) {
      char *path = g_build_filename(dir, name, NULL);
      if (g_file_test(path, G_FILE_TEST_IS_DIR) &&
          !g_file_test(path, G_FILE_TEST_IS_SYMLINK))
        policy_test_rmtree(path);
      else
        g_unlink(path);
      g_free(path);
    }
    g_dir_close(d);
  }
  g_rmdir(dir);
}

char *policy_test_write(const char *dir, const char *name, const char *text) {
  char *path = g_build_filename(dir, name, NULL);
  char *parent = g_path_get_dirname(path);
  ck_assert_int_eq(g_mkdir_with_parents(parent, 0700), 0);
  g_free(parent);
  GError *error = NULL;
  ck_assert_msg(g_file_set_contents(path, text, -1, &error), "%s: %s", path,
                error ? error->message : "?");
  return path;
}

sbx_policy *policy_test_parse_ok(const char *text) {
  GError *error = NULL;
  sbx_policy *p = sbx_policy_parse_string(text, "test.policy", NULL, &error);
  ck_assert_msg(p != NULL, "policy refused: %s\n--- text:\n%s",
                error ? error->message : "(no error)", text);
  ck_assert_ptr_null(error);
  return p;
}

char *policy_test_parse_error(const char *text, int code) {
  GError *error = NULL;
  sbx_policy *p = sbx_policy_parse_string(text, "test.policy", NULL, &error);
  ck_assert_msg(p == NULL, "policy accepted but should not be:\n%s", text);
  ck_assert_ptr_nonnull(error);
  ck_assert_msg(error->domain == SBX_POLICY_ERROR && error->code == code,
                "expected error code %d, got %d: %s", code, error->code,
                error->message);
  char *msg = g_strdup(error->message);
  g_error_free(error);
  return msg;
}

const sbx_rule *policy_test_rule(const sbx_policy *policy, const char *name) {
  int nr = sbx_syscall_number(name);
  for (size_t i = 0; i < policy->n_rules; i++) {
    if (policy->rules[i].nr == nr)
      return &policy->rules[i];
  }
  return NULL;
}

uint32_t policy_test_eval(const sbx_policy *policy, const char *syscall,
                          uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
                          uint64_t a4, uint64_t a5) {
  int nr = sbx_syscall_number(syscall);
  ck_assert_msg(nr >= 0, "unknown syscall %s", syscall);
  struct seccomp_data data = {
      .nr = nr, .arch = AUDIT_ARCH_X86_64, .args = {a0, a1, a2, a3, a4, a5}};
  return sbx_policy_eval(policy, &data);
}

/* A refusal exits 3 before any filter is on; once one is, the child ends
 * however the filter lets it (exit_group, SIGSYS, or the trap below). */
gboolean policy_test_kernel_accepts(const struct sock_filter *insns,
                                    size_t len) {
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    signal(SIGILL, SIG_DFL);
    if (sbx_seccomp_load_raw(insns, len, 0) < 0)
      _exit(3);
    /* Even if the filter denies exit_group, a trap ends the child: no
     * filter stands between an exception and its default action. */
    syscall(SYS_exit_group, 0);
    __builtin_trap();
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 3);
}
