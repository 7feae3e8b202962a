/* The installed library as another project sees it: build/install.py into
 * a temporary prefix (what `./build.sh install PREFIX` runs), then the
 * example host of docs/api.md compiled with `pkg-config --cflags --libs
 * sbx` (and once against libsbx.a), run, and its output checked: a real
 * sandbox, a real worker, a real broker denial. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "sandbox/tests/api/api_test_util.h"

#ifndef SBX_TEST_SANITIZE_FLAGS
#define SBX_TEST_SANITIZE_FLAGS ""
#endif

#define EXAMPLE_MARK "<!-- example: host.c -->\n```c\n"

static char *prefix;
static char *work;

static const char *build_dir(void) {
  const char *env = getenv("SBX_BUILD_DIR");
  return env && *env ? env : SBX_TEST_BUILD_DIR;
}

static char *run(const char *command, const char *cwd, int *status,
                 char **err) {
  g_autofree char *pc = g_build_filename(prefix, "lib", "pkgconfig", NULL);
  g_auto(GStrv) env = g_get_environ();
  env = g_environ_setenv(env, "PKG_CONFIG_PATH", pc, TRUE);
  /* Workers die inside seccomp filters: no leak checker there. */
  env = g_environ_setenv(env, "ASAN_OPTIONS", "detect_leaks=0", TRUE);
  const char *argv[] = {"/bin/sh", "-c", command, NULL};
  char *out = NULL;
  GError *error = NULL;
  if (!g_spawn_sync(cwd, (char **)argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out,
                    err, status, &error))
    ck_abort_msg("%s: %s", command, error->message);
  return out;
}

static void run_ok(const char *command, const char *cwd) {
  int status;
  g_autofree char *err = NULL;
  g_autofree char *out = run(command, cwd, &status, &err);
  ck_assert_msg(g_spawn_check_wait_status(status, NULL), "%s:\n%s%s", command,
                out, err);
}

static void setup(void) {
  GError *error = NULL;
  prefix = g_dir_make_tmp("sbx-api-prefix-XXXXXX", &error);
  work = g_dir_make_tmp("sbx-api-work-XXXXXX", &error);
  ck_assert_ptr_nonnull(prefix);
  ck_assert_ptr_nonnull(work);
  /* The example's zygote is a fresh exec of it, which loads libsbx.so.0
   * from the prefix as the zygote's identity (nobody when the test runs
   * as root): like an installed library, it must be readable by all. */
  ck_assert_int_eq(g_chmod(prefix, 0755), 0);
  ck_assert_int_eq(g_chmod(work, 0755), 0);
  g_autofree char *cmd =
      g_strdup_printf("python3 '%s/build/install.py' '%s' '%s'",
                      SBX_TEST_SOURCE_ROOT, build_dir(), prefix);
  run_ok(cmd, NULL);
}

static void teardown(void) {
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s' '%s'", prefix, work);
  int status;
  g_autofree char *err = NULL;
  g_free(run(cmd, NULL, &status, &err));
  g_free(prefix);
  g_free(work);
}

static void assert_installed(const char *relative) {
  g_autofree char *path = g_build_filename(prefix, relative, NULL);
  ck_assert_msg(g_file_test(path, G_FILE_TEST_EXISTS), "%s missing", path);
}

START_TEST(install_lays_out_library_headers_and_pkg_config_file) {
  assert_installed("lib/libsbx.so.0");
  assert_installed("lib/libsbx.a");
  assert_installed("include/sbx/sbx.h");
  assert_installed("lib/pkgconfig/sbx.pc");
  g_autofree char *link = g_build_filename(prefix, "lib/libsbx.so", NULL);
  g_autofree char *target = g_file_read_link(link, NULL);
  ck_assert_str_eq(target, "libsbx.so.0");
  int status;
  g_autofree char *err = NULL;
  g_autofree char *flags =
      run("pkg-config --cflags --libs sbx", NULL, &status, &err);
  ck_assert_msg(g_spawn_check_wait_status(status, NULL), "%s", err);
  g_autofree char *inc = g_strdup_printf("-I%s/include", prefix);
  ck_assert_msg(strstr(flags, inc) && strstr(flags, "-lsbx") &&
                    strstr(flags, "-lglib-2.0") &&
                    strstr(flags, "glib-2.0/include"),
                "%s", flags);
}
END_TEST

/* The example block of a document of the source tree (g_free). */
static char *example_of(const char *relative) {
  g_autofree char *doc_path =
      g_build_filename(SBX_TEST_SOURCE_ROOT, relative, NULL);
  g_autofree char *doc = NULL;
  ck_assert_msg(g_file_get_contents(doc_path, &doc, NULL, NULL), "%s",
                doc_path);
  char *start = strstr(doc, EXAMPLE_MARK);
  ck_assert_msg(start, "%s has no example block", doc_path);
  start += strlen(EXAMPLE_MARK);
  char *end = strstr(start, "\n```\n");
  ck_assert_ptr_nonnull(end);
  end[1] = '\0';
  return g_strdup(start);
}

/* The example block of docs/api.md, written to work/host.c. */
static void write_example(void) {
  g_autofree char *example = example_of("docs/api.md");
  g_autofree char *path = g_build_filename(work, "host.c", NULL);
  ck_assert(g_file_set_contents(path, example, -1, NULL));
}

/* The README shows the example these tests build, not a copy that could
 * drift from it. */
START_TEST(the_readme_shows_the_example_the_tests_build) {
  g_autofree char *api = example_of("docs/api.md");
  g_autofree char *readme = example_of("README.md");
  ck_assert_str_eq(readme, api);
}
END_TEST

static int count_lines(const char *path) {
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  int n = 0;
  for (const char *p = text; *p; p++)
    n += *p == '\n';
  return n;
}

/* The worker read the whole allowed file (so the sandbox works, rather
 * than refusing everything), was refused /etc/shadow by the broker, and
 * wrote its result into the directory granted to it at spawn. The
 * example calls sbx_main_hook, so its zygote is a fresh exec of it. */
static void run_example(const char *binary) {
  int status;
  g_autofree char *err = NULL;
  g_autofree char *cmd = g_strdup_printf("./%s", binary);
  g_autofree char *out = run(cmd, work, &status, &err);
  ck_assert_msg(g_spawn_check_wait_status(status, NULL), "%s:\n%s%s", binary,
                out, err);
  g_autofree char *want =
      g_strdup_printf("renderer: %d lines; /etc/shadow: Permission denied\n",
                      count_lines("/usr/share/common-licenses/Apache-2.0"));
  ck_assert_msg(g_str_has_prefix(out, want), "%s printed:\n%s", binary, out);
  /* Its own directory, granted at spawn, took the same result. */
  g_autofree char *file = g_strdup_printf("host: its file says: %s", want);
  ck_assert_msg(strstr(out, file), "%s printed:\n%s", binary, out);
  ck_assert_msg(
      strstr(out, "host: worker ") && strstr(out, " exited with status 0\n"),
      "%s printed:\n%s", binary, out);
  ck_assert_msg(
      strstr(err,
             "sbx: denied op=open path=\"/etc/shadow\" flags=O_RDONLY "
             "type=renderer "),
      "%s: no audit line on stderr:\n%s", binary, err);
}

START_TEST(example_host_builds_with_pkg_config_and_runs_a_worker) {
  write_example();
  g_autofree char *cmd = g_strdup_printf(
      "cc -std=c11 -Wall -Wextra -Werror %s host.c "
      "$(pkg-config --cflags --libs sbx) -o host",
      SBX_TEST_SANITIZE_FLAGS);
  run_ok(cmd, work);
  /* It loads the installed library, not the build tree's. */
  int status;
  g_autofree char *err = NULL;
  g_autofree char *libs =
      run("LD_TRACE_LOADED_OBJECTS=1 ./host", work, &status, &err);
  g_autofree char *lib = g_strdup_printf("%s/lib/libsbx.so.0", prefix);
  ck_assert_msg(strstr(libs, lib), "%s", libs);
  run_example("host");
}
END_TEST

START_TEST(example_host_links_statically_against_libsbx_a) {
  write_example();
  g_autofree char *cmd = g_strdup_printf(
      "cc -std=c11 %s host.c $(pkg-config --cflags sbx) '%s/lib/libsbx.a' "
      "$(pkg-config --libs glib-2.0) -o host-static",
      SBX_TEST_SANITIZE_FLAGS, prefix);
  run_ok(cmd, work);
  int status;
  g_autofree char *err = NULL;
  g_autofree char *libs =
      run("LD_TRACE_LOADED_OBJECTS=1 ./host-static", work, &status, &err);
  ck_assert_msg(!strstr(libs, "libsbx"), "%s", libs);
  run_example("host-static");
}
END_TEST

static Suite *install_suite(void) {
  Suite *s = suite_create("api_install");
  TCase *tc = tcase_create("install");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, install_lays_out_library_headers_and_pkg_config_file);
  tcase_add_test(tc, the_readme_shows_the_example_the_tests_build);
  tcase_add_test(tc, example_host_builds_with_pkg_config_and_runs_a_worker);
  tcase_add_test(tc, example_host_links_statically_against_libsbx_a);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return api_run_suite(install_suite());
}
