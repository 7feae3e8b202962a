/* The sbx-policy binary as users run it ($SBX_BUILD_DIR/sbx-policy): its
 * compiled programs load in the kernel, eval prints the compiled
 * program's verdict (x32 and i386 included, S1/S2), check warns on
 * default-allow files (S3), every policy error is FILE:LINE:COL, and
 * Docker's default profile survives import and export.
 */
#include <check.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/kernel/seccomp/loader.h"
#include "sandbox/tests/policy/policy_test_util.h"

typedef struct {
  int status; /* exit status, or 128 + signal */
  char *out;
  char *err;
} run_result;

static void run_result_clear(run_result *r) {
  g_free(r->out);
  g_free(r->err);
}

static char *tool_path(void) {
  const char *dir = g_getenv("SBX_BUILD_DIR");
  ck_assert_msg(dir != NULL,
                "SBX_BUILD_DIR is not set (run through "
                "build/run_tests.py)");
  char *path = g_build_filename(dir, "sbx-policy", NULL);
  ck_assert_msg(g_file_test(path, G_FILE_TEST_IS_EXECUTABLE), "%s is not built",
                path);
  return path;
}

/* Runs sbx-policy with the NULL-terminated arguments. */
static run_result run_tool(const char *first, ...) {
  GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(argv, tool_path());
  va_list ap;
  va_start(ap, first);
  for (const char *a = first; a != NULL; a = va_arg(ap, const char *))
    g_ptr_array_add(argv, g_strdup(a));
  va_end(ap);
  g_ptr_array_add(argv, NULL);
  run_result r = {0};
  int wait_status = 0;
  GError *error = NULL;
  ck_assert_msg(g_spawn_sync(NULL, (char **)argv->pdata, NULL, 0, NULL, NULL,
                             &r.out, &r.err, &wait_status, &error),
                "spawn: %s", error ? error->message : "?");
  if (WIFEXITED(wait_status))
    r.status = WEXITSTATUS(wait_status);
  else
    r.status = 128 + WTERMSIG(wait_status);
  g_ptr_array_unref(argv);
  return r;
}

/* eval's one line of output, checked to be exactly one line. */
static void assert_eval(const char *want, const char *policy,
                        const char *syscall, ...) {
  GPtrArray *args = g_ptr_array_new();
  g_ptr_array_add(args, (gpointer) "eval");
  va_list ap;
  va_start(ap, syscall);
  const char *arch = va_arg(ap, const char *);
  if (arch != NULL) {
    g_ptr_array_add(args, (gpointer) "--arch");
    g_ptr_array_add(args, (gpointer)arch);
  }
  g_ptr_array_add(args, (gpointer)policy);
  g_ptr_array_add(args, (gpointer)syscall);
  for (const char *a = va_arg(ap, const char *); a != NULL;
       a = va_arg(ap, const char *))
    g_ptr_array_add(args, (gpointer)a);
  va_end(ap);
  while (args->len < 12)
    g_ptr_array_add(args, NULL);
  const char **v = (const char **)args->pdata;
  run_result r = run_tool(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8],
                          v[9], v[10], NULL);
  char *line = g_strconcat(want, "\n", NULL);
  ck_assert_msg(r.status == 0 && strcmp(r.out, line) == 0,
                "eval %s %s: status %d, out '%s', err '%s' (want '%s')", policy,
                syscall, r.status, r.out, r.err, want);
  g_free(line);
  run_result_clear(&r);
  g_ptr_array_unref(args);
}

static char *read_file(const char *path, gsize *len) {
  char *data = NULL;
  GError *error = NULL;
  ck_assert_msg(g_file_get_contents(path, &data, len, &error), "%s: %s", path,
                error ? error->message : "?");
  return data;
}

static gboolean kernel_accepts(const char *path) {
  gsize len;
  char *data = read_file(path, &len);
  gboolean ok =
      policy_test_kernel_accepts((const struct sock_filter *)(void *)data,
                                 len / sizeof(struct sock_filter));
  g_free(data);
  return ok;
}

START_TEST(tool_compile_writes_programs_the_kernel_accepts) {
  POLICY_TEST_NEEDS_CORPUS();
  char *dir = policy_test_tmpdir();
  GPtrArray *files = policy_test_corpus_files("chromeos");
  GPtrArray *more = policy_test_corpus_files("minijail");
  for (guint k = 0; k < more->len; k++)
    g_ptr_array_add(files, g_strdup(g_ptr_array_index(more, k)));
  g_ptr_array_unref(more);
  guint compiled = 0;
  for (guint k = 0; k < files->len; k++) {
    const char *policy = g_ptr_array_index(files, k);
    char *out = g_build_filename(dir, "prog.bpf", NULL);
    run_result r = run_tool("compile", policy, "-o", out, NULL);
    if (r.status != 0) {
      /* Only the corpus's deliberately invalid files, and files whose
       * @include target the flattened corpus does not hold, are refused;
       * the message says where. */
      ck_assert_msg(strstr(policy, "invalid") != NULL ||
                        strstr(r.err, "@include failed") != NULL,
                    "%s: %s", policy, r.err);
      ck_assert_msg(g_str_has_prefix(r.err, policy), "%s", r.err);
      run_result_clear(&r);
      g_free(out);
      continue;
    }
    gsize len;
    g_free(read_file(out, &len));
    ck_assert_msg(len > 0 && len % 8 == 0, "%s: %zu bytes", policy,
                  (size_t)len);
    ck_assert_msg(kernel_accepts(out), "kernel refused %s", policy);
    compiled++;
    run_result_clear(&r);
    g_free(out);
  }
  ck_assert_uint_ge(compiled, 45);
  /* The built-in renderer policy too, by name. */
  char *out = g_build_filename(dir, "renderer.bpf", NULL);
  run_result r = run_tool("compile", "renderer.policy", "-o", out, NULL);
  ck_assert_msg(r.status == 0, "%s", r.err);
  ck_assert(kernel_accepts(out));
  /* Negative control: a truncated program is refused by the kernel. */
  gsize len;
  char *data = read_file(out, &len);
  char *cut = g_build_filename(dir, "cut.bpf", NULL);
  ck_assert(g_file_set_contents(cut, data, 16, NULL));
  ck_assert(!kernel_accepts(cut));
  g_free(cut);
  g_free(data);
  run_result_clear(&r);
  g_free(out);
  g_ptr_array_unref(files);
  policy_test_rmtree(dir);
  g_free(dir);
}
END_TEST

START_TEST(tool_eval_prints_the_compiled_verdict_for_names_numbers_and_args) {
  char *dir = policy_test_tmpdir();
  char *p = policy_test_write(dir, "t.policy",
                              "read: 1\n"
                              "ioctl: arg1 == TCGETS; return ENOTTY\n"
                              "mmap: arg2 in PROT_READ|PROT_WRITE\n"
                              "getpid: trap\n"
                              "gettid: log\n"
                              "getuid: trace\n"
                              "getgid: user-notify\n"
                              "@default kill-thread\n");
  assert_eval("allow", p, "read", NULL, NULL);
  assert_eval("allow", p, "0", NULL, NULL);
  assert_eval("allow", p, "ioctl", NULL, "0", "TCGETS", NULL);
  assert_eval("allow", p, "ioctl", NULL, "0", "0x5401", NULL);
  assert_eval("errno 25", p, "ioctl", NULL, "0", "TIOCSTI", NULL);
  /* S4: the command is int-sized; junk above bit 31 changes nothing. */
  assert_eval("allow", p, "ioctl", NULL, "0", "TCGETS|0x100000000", NULL);
  assert_eval("errno 25", p, "ioctl", NULL, "-1", "TIOCSTI|0x100000000", NULL);
  assert_eval("allow", p, "mmap", NULL, "0", "4096", "PROT_READ|PROT_WRITE",
              NULL);
  assert_eval("kill-thread", p, "mmap", NULL, "0", "4096", "PROT_EXEC", NULL);
  assert_eval("trap", p, "getpid", NULL, NULL);
  assert_eval("log", p, "gettid", NULL, NULL);
  assert_eval("trace 0", p, "getuid", NULL, NULL);
  assert_eval("user-notify", p, "getgid", NULL, NULL);
  assert_eval("kill-thread", p, "write", NULL, "1", NULL);
  /* Built-in policies by name. */
  assert_eval("allow", "renderer.policy", "getpid", NULL, NULL);
  assert_eval("errno 38", "renderer.policy", "clone3", NULL, NULL);
  assert_eval("errno 38", "renderer.policy", "io_uring_setup", NULL, NULL);
  g_free(p);
  policy_test_rmtree(dir);
  g_free(dir);
}
END_TEST

START_TEST(tool_eval_kills_x32_and_i386_calls_on_the_compiled_renderer) {
  char *dir = policy_test_tmpdir();
  char *out = g_build_filename(dir, "renderer.bpf", NULL);
  run_result r = run_tool("compile", "renderer", "-o", out, NULL);
  ck_assert_msg(r.status == 0, "%s", r.err);
  /* Positive control: the same call on x86-64 is allowed. */
  assert_eval("allow", out, "getpid", NULL, NULL);
  assert_eval("allow", out, "39", NULL, NULL);
  /* S1: x32 getpid, as a number and through --arch. */
  assert_eval("kill-process", out, "0x40000027", NULL, NULL);
  assert_eval("kill-process", out, "0x40000000|getpid", NULL, NULL);
  assert_eval("kill-process", out, "getpid", "x32", NULL);
  /* S2: i386 getpid (20) and ptrace (26). */
  assert_eval("kill-process", out, "20", "i386", NULL);
  assert_eval("kill-process", out, "ptrace", "i386", NULL);
  run_result_clear(&r);
  /* dump reads the compiled file and names what it tests. */
  r = run_tool("dump", out, NULL);
  ck_assert_msg(r.status == 0, "%s", r.err);
  ck_assert_ptr_nonnull(strstr(r.out, "ld arch"));
  ck_assert_ptr_nonnull(strstr(r.out, "AUDIT_ARCH_X86_64"));
  ck_assert_ptr_nonnull(strstr(r.out, "ret kill-process"));
  ck_assert_ptr_nonnull(strstr(r.out, "ret allow"));
  run_result_clear(&r);
  g_free(out);
  policy_test_rmtree(dir);
  g_free(dir);
}
END_TEST

START_TEST(tool_check_warns_on_default_allow_files) {
  char *dir = policy_test_tmpdir();
  char *allow = policy_test_write(dir, "allow.policy",
                                  "@default allow\nptrace: return EPERM\n");
  char *deny = policy_test_write(dir, "deny.policy",
                                 "@denylist\nptrace: return EPERM\n");
  char *clean = policy_test_write(dir, "clean.policy",
                                  "read: 1\nwrite: 1\nexit_group: 1\n");
  run_result r = run_tool("check", allow, NULL);
  ck_assert_int_eq(r.status, 0);
  ck_assert_msg(strstr(r.err, "default-allow") != NULL, "%s", r.err);
  ck_assert_msg(g_str_has_prefix(r.err, allow), "%s", r.err);
  run_result_clear(&r);
  r = run_tool("check", "--werror", deny, NULL);
  ck_assert_int_eq(r.status, 1);
  ck_assert_msg(strstr(r.err, "default-allow") != NULL, "%s", r.err);
  run_result_clear(&r);
  /* Positive control: an allowlist with a killing default is clean. */
  r = run_tool("check", "--werror", clean, NULL);
  ck_assert_msg(r.status == 0 && r.err[0] == '\0', "%s", r.err);
  run_result_clear(&r);
  r = run_tool("check", "renderer.policy", NULL);
  ck_assert_msg(r.status == 0 && strstr(r.err, "default-allow") == NULL, "%s",
                r.err);
  run_result_clear(&r);
  g_free(allow);
  g_free(deny);
  g_free(clean);
  policy_test_rmtree(dir);
  g_free(dir);
}
END_TEST

START_TEST(tool_reports_every_policy_error_as_file_line_column) {
  static const struct {
    const char *text;
    const char *where; /* ":LINE:COL: " */
  } kBad[] = {
      {"read: 1\nfrobnicate: 1\n", ":2:1: "},
      {"write: arg0 == NOT_A_CONSTANT\n", ":1:16: "},
      {"read: arg9 == 1\n", ":1:7: "},
      {"read: arg0 =! 1\n", ":1:"},
      {"read: arg0 ==\n", ":1:"},
      {"read: 1\nread: arg0 == 1\n", ":2:1: "},
      {"@include ./missing.policy\n", ":1:10: "},
      {"@default return 99999\n", ":1:"},
      {"@nonsense\n", ":1:1: "},
  };
  static const char *const kCommands[] = {"compile", "eval", "dump", "check",
                                          "export"};
  char *dir = policy_test_tmpdir();
  char *out = g_build_filename(dir, "out", NULL);
  for (size_t k = 0; k < G_N_ELEMENTS(kBad); k++) {
    char *name = g_strdup_printf("bad%zu.policy", k);
    char *p = policy_test_write(dir, name, kBad[k].text);
    char *prefix = g_strconcat(p, kBad[k].where, NULL);
    for (size_t c = 0; c < G_N_ELEMENTS(kCommands); c++) {
      run_result r;
      if (strcmp(kCommands[c], "compile") == 0)
        r = run_tool("compile", p, "-o", out, NULL);
      else if (strcmp(kCommands[c], "eval") == 0)
        r = run_tool("eval", p, "read", NULL);
      else if (strcmp(kCommands[c], "export") == 0)
        r = run_tool("export", "--format", "oci", p, NULL);
      else
        r = run_tool(kCommands[c], p, NULL);
      ck_assert_msg(r.status == 1 && g_str_has_prefix(r.err, prefix),
                    "%s %s: status %d, stderr '%s' (want prefix '%s')",
                    kCommands[c], kBad[k].text, r.status, r.err, prefix);
      ck_assert_str_eq(r.out, "");
      run_result_clear(&r);
    }
    g_free(prefix);
    g_free(p);
    g_free(name);
  }
  /* Usage errors exit 2 and never print a verdict. */
  run_result r = run_tool("eval", "renderer.policy", "no_such_call", NULL);
  ck_assert_int_eq(r.status, 2);
  ck_assert_str_eq(r.out, "");
  run_result_clear(&r);
  r = run_tool("eval", "renderer.policy", "ioctl", "0", "NOT_A_CONSTANT", NULL);
  ck_assert_int_eq(r.status, 2);
  run_result_clear(&r);
  /* A compiled file the kernel would refuse names the file. */
  char *junk = g_build_filename(dir, "junk.bpf", NULL);
  ck_assert(g_file_set_contents(junk, "\0\0\0\0\0\0\0", 7, NULL));
  r = run_tool("dump", junk, NULL);
  ck_assert_msg(r.status == 1 && g_str_has_prefix(r.err, junk), "%s", r.err);
  run_result_clear(&r);
  g_free(junk);
  g_free(out);
  policy_test_rmtree(dir);
  g_free(dir);
}
END_TEST

START_TEST(tool_imports_and_exports_docker_default_with_the_same_verdicts) {
  POLICY_TEST_NEEDS_CORPUS();
  char *dir = policy_test_tmpdir();
  char *json = policy_test_corpus("oci/seccomp__default.json");
  char *imported = g_build_filename(dir, "docker.policy", NULL);
  char *exported = g_build_filename(dir, "docker.json", NULL);
  char *again = g_build_filename(dir, "again.policy", NULL);
  run_result r =
      run_tool("import", "--format", "oci", json, "-o", imported, NULL);
  ck_assert_msg(r.status == 0, "%s", r.err);
  run_result_clear(&r);
  r = run_tool("export", "--format", "oci", imported, "-o", exported, NULL);
  ck_assert_msg(r.status == 0, "%s", r.err);
  run_result_clear(&r);
  r = run_tool("import", "--format", "oci", exported, "-o", again, NULL);
  ck_assert_msg(r.status == 0, "%s", r.err);
  run_result_clear(&r);
  const char *policies[] = {imported, again};
  for (size_t k = 0; k < G_N_ELEMENTS(policies); k++) {
    const char *p = policies[k];
    assert_eval("allow", p, "getpid", NULL, NULL);
    assert_eval("allow", p, "socket", NULL, "2", "1", "0", NULL);
    assert_eval("errno 1", p, "socket", NULL, "40", "1", "0", NULL);
    assert_eval("errno 1", p, "clone", NULL, "CLONE_NEWUSER", NULL);
    assert_eval("allow", p, "clone", NULL, "CLONE_VM|CLONE_THREAD", NULL);
    assert_eval("errno 38", p, "clone3", NULL, NULL);
    assert_eval("errno 1", p, "mount", NULL, NULL);
    assert_eval("kill-process", p, "getpid", "x32", NULL);
    assert_eval("kill-process", p, "20", "i386", NULL);
  }
  /* Refusals name the profile; a missing --format is a usage error. */
  char *bad = policy_test_write(dir, "bad.json",
                                "{\"defaultAction\": \"SCMP_ACT_ERRNO\","
                                " \"syscalls\": [{\"names\": [\"prctl\"],"
                                " \"action\": \"SCMP_ACT_KILL\", \"args\":"
                                " [{\"index\": 0, \"value\": 4,"
                                " \"op\": \"SCMP_CMP_EQ\"}]}]}");
  r = run_tool("import", "--format", "oci", bad, NULL);
  ck_assert_msg(r.status == 1 && g_str_has_prefix(r.err, bad) &&
                    strstr(r.err, "(prctl)") != NULL,
                "%d %s", r.status, r.err);
  ck_assert_str_eq(r.out, "");
  run_result_clear(&r);
  r = run_tool("import", json, NULL);
  ck_assert_int_eq(r.status, 2);
  run_result_clear(&r);
  g_free(bad);
  gsize len;
  char *text = read_file(exported, &len);
  ck_assert_ptr_nonnull(strstr(text, "\"SCMP_ARCH_X86_64\""));
  ck_assert_ptr_nonnull(strstr(text, "\"defaultErrnoRet\": 1"));
  g_free(text);
  g_free(json);
  g_free(imported);
  g_free(exported);
  g_free(again);
  policy_test_rmtree(dir);
  g_free(dir);
}
END_TEST

static Suite *tool_suite(void) {
  Suite *s = suite_create("sbx_policy_tool");
  TCase *tc = tcase_create("tool");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, tool_compile_writes_programs_the_kernel_accepts);
  tcase_add_test(
      tc, tool_eval_prints_the_compiled_verdict_for_names_numbers_and_args);
  tcase_add_test(tc,
                 tool_eval_kills_x32_and_i386_calls_on_the_compiled_renderer);
  tcase_add_test(tc, tool_check_warns_on_default_allow_files);
  tcase_add_test(tc, tool_reports_every_policy_error_as_file_line_column);
  tcase_add_test(
      tc, tool_imports_and_exports_docker_default_with_the_same_verdicts);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(tool_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
