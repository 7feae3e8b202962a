/* The renderer demo inside a real container: runc, with Docker's default
 * seccomp profile (the corpus's file, imported and exported by
 * sbx-policy, as Docker hands it to runc) and Docker's capability set,
 * on a root file system of this machine's Debian packages (/usr bound
 * read-only). That profile refuses unshare and clone with namespace flags
 * to a process without CAP_SYS_ADMIN, so the demo runs without user
 * namespaces: every page renders, every attack is blocked, the status
 * table shows the namespaces off and seccomp, the broker and Landlock on.
 * Control: the same container without a seccomp profile, where the
 * demo's workers are fully sandboxed.
 *
 * Root only (runc needs it), and skipped (counted) where runc or the
 * corpus is missing or runc cannot start a container here. */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/tests/runner/tool_run.h"

#define DOCKER_DEFAULT "oci/seccomp__default.json"

static char *runc_bin;   /* runc from PATH */
static char *python_bin; /* python3 from PATH */

static char *skip_reason(void) {
  if (geteuid() != 0)
    return g_strdup("runc needs root");
  runc_bin = g_find_program_in_path("runc");
  python_bin = g_find_program_in_path("python3");
  if (!runc_bin)
    return g_strdup("runc is not installed");
  if (!python_bin)
    return g_strdup("python3 is not installed");
  if (SBX_CORPUS_DIR[0] == '\0' ||
      !g_file_test(SBX_CORPUS_DIR, G_FILE_TEST_IS_DIR))
    return g_strdup("no corpus (gn arg sbx_corpus_dir) for Docker's profile");
  return NULL;
}

typedef struct {
  char *bundle;
  char *state;
  char *out;
} container;

/* A bundle in the test's directory; seccomp: an OCI profile or NULL. */
static container make_bundle(const char *name, const char *seccomp) {
  container c;
  c.bundle = make_dir(name);
  g_autofree char *state_name = g_strconcat(name, "-state", NULL);
  c.state = make_dir(state_name);
  g_autofree char *out_name = g_strconcat(name, "-out", NULL);
  c.out = make_dir(out_name);
  g_autofree char *rootfs = g_build_filename(c.bundle, "rootfs", NULL);
  static const char *const dirs[] = {"usr", "proc",  "dev", "sys", "tmp",
                                     "sbx", "pages", "out", "etc"};
  for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
    g_autofree char *d = g_build_filename(rootfs, dirs[i], NULL);
    ck_assert_int_eq(g_mkdir_with_parents(d, 0755), 0);
  }
  static const char *const links[][2] = {{"lib", "usr/lib"},
                                         {"lib64", "usr/lib64"},
                                         {"bin", "usr/bin"},
                                         {"sbin", "usr/sbin"}};
  for (size_t i = 0; i < G_N_ELEMENTS(links); i++) {
    g_autofree char *l = g_build_filename(rootfs, links[i][0], NULL);
    ck_assert_int_eq(symlink(links[i][1], l), 0);
  }
  g_autofree char *cache = NULL;
  gsize len = 0;
  g_autofree char *cache_dst =
      g_build_filename(rootfs, "etc", "ld.so.cache", NULL);
  if (g_file_get_contents("/etc/ld.so.cache", &cache, &len, NULL))
    ck_assert(g_file_set_contents(cache_dst, cache, (gssize)len, NULL));

  const char *spec_argv[] = {runc_bin, "spec", "--bundle", c.bundle, NULL};
  expect(run(spec_argv), 0, NULL, NULL);
  g_autofree char *spec = g_build_filename(c.bundle, "config.json", NULL);
  g_autofree char *build = tool_path(".");
  g_autofree char *build_real = realpath(build, NULL);
  const char *cfg_argv[] = {
      python_bin, CONTAINER_CONFIG, spec,  spec,    rootfs,
      build_real, DEMO_PAGES_DIR,   c.out, seccomp, NULL};
  expect(run(cfg_argv), 0, NULL, NULL);
  return c;
}

static result run_container(const container *c, const char *id) {
  const char *argv[] = {runc_bin,   "--root",  c->state, "run",
                        "--bundle", c->bundle, id,       NULL};
  result r = run(argv);
  const char *del[] = {runc_bin, "--root", c->state, "delete", "-f", id, NULL};
  result d = run(del);
  result_clear(&d);
  return r;
}

static void container_clear(container *c) {
  g_free(c->bundle);
  g_free(c->state);
  g_free(c->out);
}

START_TEST(renderer_demo_in_a_runc_container_under_dockers_default_profile) {
  g_autofree char *why = skip_reason();
  if (why) {
    printf("sbx-skip: renderer demo in a runc container: %s\n", why);
    return;
  }
  g_autofree char *id =
      g_strdup_printf("sbx-demo-%d-%u", (int)getpid(), g_random_int());

  /* Control: no seccomp profile; if runc cannot start a container here
   * at all, that is this machine, not sbx. */
  container plain = make_bundle("plain", NULL);
  result control = run_container(&plain, id);
  if (control.status != 0 && !strstr(control.out, "pages rendered")) {
    printf(
        "sbx-skip: renderer demo in a runc container: runc cannot start "
        "a container here: %s\n",
        control.err);
    result_clear(&control);
    container_clear(&plain);
    return;
  }
  ck_assert_msg(control.status == 0, "control: %d\n%s\n%s", control.status,
                control.out, control.err);
  assert_contains(control.out, "5/5 pages rendered");
  assert_contains(control.out, "user namespace: on");
  assert_contains(control.out, "fully sandboxed: yes");
  result_clear(&control);
  container_clear(&plain);

  /* Docker's default profile, as Docker gives it to runc. */
  g_autofree char *policy = path_in("docker.policy");
  g_autofree char *profile = path_in("docker-seccomp.json");
  g_autofree char *corpus =
      g_build_filename(SBX_CORPUS_DIR, DOCKER_DEFAULT, NULL);
  g_autofree char *sbx_policy = tool_path("sbx-policy");
  const char *import[] = {sbx_policy, "import", "--format", "oci",
                          corpus,     "-o",     policy,     NULL};
  expect(run(import), 0, NULL, NULL);
  const char *export[] = {sbx_policy, "export", "--format", "oci",
                          policy,     "-o",     profile,    NULL};
  expect(run(export), 0, NULL, NULL);

  container docker = make_bundle("docker", profile);
  result r = run_container(&docker, id);
  ck_assert_msg(r.status == 0, "demo under Docker's profile: %d\n%s\n%s",
                r.status, r.out, r.err);
  assert_contains(r.out, "5/5 pages rendered");
  assert_contains(r.out, "attacks blocked");
  assert_lacks(r.out, "ESCAPED");
  assert_contains(r.out, "user namespace: OFF");
  assert_contains(r.out, "empty root: OFF");
  assert_contains(r.out, "no capabilities: on");
  assert_contains(r.out, "seccomp: on");
  assert_contains(r.out, "broker: on");
  assert_contains(r.out, "landlock: on");
  assert_contains(r.out, "fully sandboxed: NO");
  assert_contains(r.err, "sbx: warning: renderer runs without user namespaces");
  assert_contains(r.err, "a seccomp filter this process runs under");
  result_clear(&r);
  container_clear(&docker);
}
END_TEST

int main(void) {
  Suite *s = suite_create("degrade_container");
  TCase *tc = tcase_create("runc");
  tcase_add_checked_fixture(tc, tool_setup, tool_teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(
      tc, renderer_demo_in_a_runc_container_under_dockers_default_profile);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
