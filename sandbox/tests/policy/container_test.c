/* Exported policies as the seccomp profile of real runc containers.
 *
 * Each policy is exported with SBX_OCI_EXPORT_FOR_CONTAINER and handed to
 * runc in a bundle whose root file system is a temporary directory holding
 * busybox (busybox-static) and container_probe (a static program that
 * makes one system call and prints what it returned). The container must
 * start, a call the policy allows must work, and a call it refuses must
 * fail the way the policy says: the errno it names, or death by SIGSYS.
 * The control: a container without a profile must start first; where it
 * cannot (no root, no runc, no cgroups), every test prints sbx-skip.
 */
#include <check.h>
#include <errno.h>
#include <linux/audit.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "sandbox/base/syscalls.h"
#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/policy/oci.h"
#include "sandbox/policy/parser.h"
#include "sandbox/tests/policy/policy_test_util.h"

/* runc reports a container process killed by signal N as exit 128 + N. */
#define KILLED_BY(sig) (128 + (sig))

typedef struct {
  char *dir;    /* the bundle: config.json and rootfs/ */
  char *state;  /* runc --root */
  char *stderr; /* of the last run */
  unsigned runs;
} bundle;

static const char *build_dir(void) {
  const char *dir = g_getenv("SBX_BUILD_DIR");
  ck_assert_msg(dir != NULL,
                "SBX_BUILD_DIR is not set (run through build/run_tests.py)");
  return dir;
}

/* Runs argv; returns the exit status (128 + N for signal N). */
static int run(char **argv, const char *cwd, char **out, char **err) {
  int status = 0;
  GError *error = NULL;
  ck_assert_msg(g_spawn_sync(cwd, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                             out, err, &status, &error),
                "%s: %s", argv[0], error ? error->message : "?");
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

static void copy_file(const char *from, const char *to) {
  char *data = NULL;
  gsize len = 0;
  GError *error = NULL;
  ck_assert_msg(g_file_get_contents(from, &data, &len, &error), "%s",
                error ? error->message : "?");
  ck_assert_msg(g_file_set_contents(to, data, (gssize)len, &error), "%s",
                error ? error->message : "?");
  ck_assert_int_eq(chmod(to, 0755), 0);
  g_free(data);
}

/* Why no container can run here, or NULL. */
static char *cannot_run(void) {
  if (geteuid() != 0)
    return g_strdup("runc needs root");
  char *runc = g_find_program_in_path("runc");
  if (runc == NULL)
    return g_strdup("runc is not installed (Debian package runc)");
  g_free(runc);
  if (!g_file_test("/bin/busybox", G_FILE_TEST_IS_EXECUTABLE))
    return g_strdup("/bin/busybox is missing (Debian package busybox-static)");
  return NULL;
}

static void bundle_init(bundle *b) {
  *b = (bundle){0};
  b->dir = policy_test_tmpdir();
  b->state = g_build_filename(b->dir, "state", NULL);
  char *bin = g_build_filename(b->dir, "rootfs", "bin", NULL);
  ck_assert_int_eq(g_mkdir_with_parents(bin, 0755), 0);
  char *busybox = g_build_filename(bin, "busybox", NULL);
  char *probe = g_build_filename(bin, "probe", NULL);
  char *built = g_build_filename(build_dir(), "tests", "container_probe", NULL);
  copy_file("/bin/busybox", busybox);
  copy_file(built, probe);
  char *argv[] = {"runc", "spec", NULL};
  char *err = NULL;
  ck_assert_msg(run(argv, b->dir, NULL, &err) == 0, "runc spec: %s", err);
  g_free(err);
  g_free(built);
  g_free(probe);
  g_free(busybox);
  g_free(bin);
}

static void bundle_clear(bundle *b) {
  policy_test_rmtree(b->dir);
  g_free(b->dir);
  g_free(b->state);
  g_free(b->stderr);
}

/* Rewrites config.json: no terminal, a read-only root, no_new_privs (the
 * runtimes install the filter last then), args, and the profile (NULL:
 * none). */
static void write_config(const bundle *b, const char *const *args,
                         const char *profile) {
  char *path = g_build_filename(b->dir, "config.json", NULL);
  JsonParser *parser = json_parser_new();
  GError *error = NULL;
  ck_assert_msg(json_parser_load_from_file(parser, path, &error), "%s",
                error ? error->message : "?");
  JsonObject *root = json_node_get_object(json_parser_get_root(parser));
  JsonObject *process = json_object_get_object_member(root, "process");
  json_object_set_boolean_member(process, "terminal", FALSE);
  json_object_set_boolean_member(process, "noNewPrivileges", TRUE);
  JsonArray *argv = json_array_new();
  for (size_t k = 0; args[k] != NULL; k++)
    json_array_add_string_element(argv, args[k]);
  json_object_set_array_member(process, "args", argv);
  json_object_set_boolean_member(json_object_get_object_member(root, "root"),
                                 "readonly", TRUE);
  JsonObject *linux_ = json_object_get_object_member(root, "linux");
  /* The profile goes in as text: json-glib would turn numbers above
   * 2^63 into negative ones. */
  static const char kPlaceholder[] = "\"sbx-test-profile\"";
  json_object_remove_member(linux_, "seccomp");
  if (profile != NULL)
    json_object_set_string_member(linux_, "seccomp", "sbx-test-profile");
  JsonGenerator *gen = json_generator_new();
  json_generator_set_root(gen, json_parser_get_root(parser));
  char *text = json_generator_to_data(gen, NULL);
  char **halves = g_strsplit(text, kPlaceholder, 2);
  char *config = profile != NULL && halves[1] != NULL
                     ? g_strconcat(halves[0], profile, halves[1], NULL)
                     : g_strdup(text);
  ck_assert(profile == NULL || halves[1] != NULL);
  ck_assert_msg(g_file_set_contents(path, config, -1, &error), "%s",
                error ? error->message : "?");
  g_free(config);
  g_strfreev(halves);
  g_free(text);
  g_object_unref(gen);
  g_object_unref(parser);
  g_free(path);
}

/* Runs args in a fresh container with the profile; returns runc's exit
 * status, the container's output in *out. */
static int run_container(bundle *b, const char *const *args,
                         const char *profile, char **out) {
  write_config(b, args, profile);
  char *id = g_strdup_printf("sbx-test-%d-%u", (int)getpid(), b->runs++);
  char *argv[] = {"runc",     "--root", b->state, "run",
                  "--bundle", b->dir,   id,       NULL};
  g_free(b->stderr);
  b->stderr = NULL;
  int status = run(argv, b->dir, out, &b->stderr);
  char *del[] = {"runc", "--root", b->state, "delete", "--force", id, NULL};
  run(del, b->dir, NULL, NULL);
  g_free(id);
  return status;
}

/* Prints sbx-skip and returns FALSE when no container can start here: no
 * root, no runc, or runc fails even without a profile. */
static gboolean containers_run(const char *test, bundle *b) {
  char *why = cannot_run();
  if (why == NULL) {
    bundle_init(b);
    const char *args[] = {"/bin/busybox", "echo", "started", NULL};
    char *out = NULL;
    int status = run_container(b, args, NULL, &out);
    if (status != 0 || out == NULL || strcmp(out, "started\n") != 0)
      why = g_strdup_printf(
          "runc cannot start a container here even without a profile "
          "(exit %d): %s",
          status, b->stderr ? g_strstrip(b->stderr) : "");
    g_free(out);
    if (why != NULL)
      bundle_clear(b);
  }
  if (why == NULL)
    return TRUE;
  printf("sbx-skip: %s: %s\n", test, why);
  fflush(stdout);
  g_free(why);
  return FALSE;
}

/* ---- what the policy says ------------------------------------------------ */

static sbx_policy *runtime_calls(void) {
  GError *error = NULL;
  sbx_policy *p = sbx_policy_parse_string(sbx_oci_container_runtime_calls,
                                          "container-runtime", NULL, &error);
  ck_assert_msg(p != NULL, "%s", error ? error->message : "?");
  return p;
}

static gboolean runtime_allows(const sbx_policy *runtime,
                               const struct seccomp_data *d) {
  for (size_t k = 0; k < runtime->n_rules; k++)
    if (runtime->rules[k].nr == d->nr)
      return sbx_policy_eval(runtime, d) == SECCOMP_RET_ALLOW;
  return FALSE;
}

/* Exports with the runtime's calls; where a constant above 2^53 has no
 * equivalent, with exact 64-bit constants (the message must say so). */
static char *export_for_container(const sbx_policy *p, const char *name) {
  GError *error = NULL;
  char *json = sbx_oci_export(p, SBX_OCI_EXPORT_FOR_CONTAINER, &error);
  if (json == NULL) {
    ck_assert_msg(strstr(error->message, "2^53") != NULL, "%s: %s", name,
                  error->message);
    g_clear_error(&error);
    json = sbx_oci_export(
        p, SBX_OCI_EXPORT_FOR_CONTAINER | SBX_OCI_EXPORT_LARGE_NUMBERS, &error);
  }
  ck_assert_msg(json != NULL, "%s: %s", name, error ? error->message : "?");
  return json;
}

/* Calls whose result is known when they run: (nr, result in the
 * container). Root in the container, pid 1, parent outside it. */
static const struct {
  int nr;
  long result;
} kKnownResults[] = {
    {__NR_getpid, 1}, {__NR_gettid, 1}, {__NR_getppid, 0},
    {__NR_getuid, 0}, {__NR_getgid, 0}, {__NR_geteuid, 0},
};

/* Runs the probe on nr with zero arguments and checks the outcome against
 * the verdict `want`. */
static void check_call(bundle *b, const char *profile, const char *name, int nr,
                       uint32_t want) {
  char *nr_text = g_strdup_printf("%d", nr);
  const char *args[] = {"/bin/probe", nr_text, NULL};
  char *out = NULL;
  int status = run_container(b, args, profile, &out);
  const char *call = sbx_syscall_name(nr);
  uint32_t action = want & SECCOMP_RET_ACTION_FULL;
  if (action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG) {
    long result = 0;
    for (size_t k = 0; k < G_N_ELEMENTS(kKnownResults); k++)
      if (kKnownResults[k].nr == nr)
        result = kKnownResults[k].result;
    char *expected = g_strdup_printf("ret=%ld\n", result);
    ck_assert_msg(status == 0 && g_strcmp0(out, expected) == 0,
                  "%s: %s is allowed, but the container gave exit %d, "
                  "output '%s', runc: %s",
                  name, call, status, out, b->stderr);
    g_free(expected);
  } else if (action == SECCOMP_RET_ERRNO || action == SECCOMP_RET_TRACE) {
    /* With no tracer attached, trace fails the call with ENOSYS. */
    int err =
        action == SECCOMP_RET_ERRNO ? (int)(want & SECCOMP_RET_DATA) : ENOSYS;
    char *expected = g_strdup_printf("ret=-%d\n", err);
    ck_assert_msg(status == 0 && g_strcmp0(out, expected) == 0,
                  "%s: %s should fail with errno %d, but the container gave "
                  "exit %d, output '%s', runc: %s",
                  name, call, err, status, out, b->stderr);
    g_free(expected);
  } else {
    ck_assert_msg(status == KILLED_BY(SIGSYS) &&
                      (out == NULL || strstr(out, "ret=") == NULL),
                  "%s: %s should kill the probe with SIGSYS, but the "
                  "container gave exit %d, output '%s', runc: %s",
                  name, call, status, out, b->stderr);
  }
  g_free(out);
  g_free(nr_text);
}

/* One call of each kind the policy has: allowed (one whose result is
 * known), refused with an errno, killed; none of them one the runtime's
 * calls decide. */
static void check_policy_in_container(bundle *b, const sbx_policy *p,
                                      const char *name) {
  sbx_policy *runtime = runtime_calls();
  char *profile = export_for_container(p, name);
  struct seccomp_data d = {.arch = AUDIT_ARCH_X86_64};
  gboolean allowed = FALSE, refused = FALSE, killed = FALSE;
  for (size_t k = 0; k < G_N_ELEMENTS(kKnownResults) && !allowed; k++) {
    d.nr = kKnownResults[k].nr;
    if (runtime_allows(runtime, &d) ||
        sbx_policy_eval(p, &d) != SECCOMP_RET_ALLOW)
      continue;
    check_call(b, profile, name, d.nr, SECCOMP_RET_ALLOW);
    allowed = TRUE;
  }
  /* The runtime's own getpid is allowed in every container. */
  d.nr = __NR_getpid;
  check_call(b, profile, name, d.nr, SECCOMP_RET_ALLOW);
  for (int nr = 0; nr <= sbx_syscall_max() && !(refused && killed); nr++) {
    d.nr = nr;
    if (sbx_syscall_name(nr) == NULL || runtime_allows(runtime, &d))
      continue;
    uint32_t want = sbx_policy_eval(p, &d);
    uint32_t action = want & SECCOMP_RET_ACTION_FULL;
    if (!refused && action == SECCOMP_RET_ERRNO) {
      check_call(b, profile, name, nr, want);
      refused = TRUE;
    } else if (!killed && (action == SECCOMP_RET_KILL_PROCESS ||
                           action == SECCOMP_RET_KILL_THREAD ||
                           action == SECCOMP_RET_TRAP)) {
      check_call(b, profile, name, nr, want);
      killed = TRUE;
    }
  }
  ck_assert_msg(refused || killed, "%s: no refused call found to try", name);
  g_free(profile);
  sbx_policy_free(runtime);
}

START_TEST(container_starts_under_every_exported_builtin_policy) {
  bundle b;
  if (!containers_run(__func__, &b))
    return;
  guint started = 0;
  for (size_t k = 0; k < sbx_builtin_n_files; k++) {
    const char *name = sbx_builtin_files[k].name;
    if (!g_str_has_suffix(name, ".policy"))
      continue;
    GError *error = NULL;
    sbx_policy *p = sbx_builtin_policy(name, &error);
    ck_assert_msg(p != NULL, "%s", error ? error->message : "?");
    char *refused = sbx_oci_export(p, SBX_OCI_EXPORT_FOR_CONTAINER, &error);
    if (refused == NULL && strstr(error->message, "user-notify") != NULL) {
      /* sbx-run.policy: no runtime answers user-notify. */
      g_clear_error(&error);
      sbx_policy_free(p);
      continue;
    }
    g_free(refused);
    g_clear_error(&error);
    check_policy_in_container(&b, p, name);
    started++;
    sbx_policy_free(p);
  }
  ck_assert_uint_ge(started, 5);
  bundle_clear(&b);
}
END_TEST

/* Without the runtime's calls, runc's own init is killed before the
 * probe runs: the calls are what makes the container start. */
START_TEST(container_does_not_start_without_the_runtime_calls) {
  bundle b;
  if (!containers_run(__func__, &b))
    return;
  GError *error = NULL;
  sbx_policy *p = sbx_builtin_policy("baseline.policy", &error);
  ck_assert_msg(p != NULL, "%s", error ? error->message : "?");
  char *profile = sbx_oci_export(p, SBX_OCI_EXPORT_LARGE_NUMBERS, &error);
  ck_assert_msg(profile != NULL, "%s", error ? error->message : "?");
  const char *args[] = {"/bin/probe", "39", NULL};
  char *out = NULL;
  int status = run_container(&b, args, profile, &out);
  ck_assert_msg(status != 0 && (out == NULL || strstr(out, "ret=") == NULL),
                "the container started without the runtime's calls: exit %d, "
                "output '%s'",
                status, out);
  g_free(out);
  g_free(profile);
  /* Positive control: the same policy with them starts. */
  char *with = export_for_container(p, "baseline.policy");
  check_call(&b, with, "baseline.policy", __NR_getpid, SECCOMP_RET_ALLOW);
  g_free(with);
  sbx_policy_free(p);
  bundle_clear(&b);
}
END_TEST

/* A policy sbx-learn wrote from one run of the probe on the host. */
START_TEST(container_starts_under_a_learned_policy) {
  bundle b;
  if (!containers_run(__func__, &b))
    return;
  char *learn = g_build_filename(build_dir(), "sbx-learn", NULL);
  char *probe = g_build_filename(b.dir, "rootfs", "bin", "probe", NULL);
  char *name = g_build_filename(b.dir, "learned", NULL);
  char *argv[] = {learn, "-o",  name, "-d", "return EPERM",
                  "--",  probe, "39", NULL};
  char *err = NULL, *out = NULL;
  int status = run(argv, b.dir, &out, &err);
  ck_assert_msg(status == 0 && g_str_has_prefix(out, "ret="),
                "sbx-learn: exit %d: %s%s", status, out, err);
  g_free(out);
  char *file = g_strconcat(name, ".policy", NULL);
  GError *error = NULL;
  sbx_policy *p = sbx_policy_parse_file(file, &error);
  ck_assert_msg(p != NULL, "%s", error ? error->message : "?");
  check_policy_in_container(&b, p, file);
  sbx_policy_free(p);
  g_free(file);
  g_free(err);
  g_free(name);
  g_free(probe);
  g_free(learn);
  bundle_clear(&b);
}
END_TEST

static Suite *container_suite(void) {
  Suite *s = suite_create("policy_container");
  TCase *tc = tcase_create("container");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, container_starts_under_every_exported_builtin_policy);
  tcase_add_test(tc, container_does_not_start_without_the_runtime_calls);
  tcase_add_test(tc, container_starts_under_a_learned_policy);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(container_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
