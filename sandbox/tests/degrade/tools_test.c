/* sbx-run and the renderer demo where a kernel feature is missing: each
 * runs under sbx-without (without_filter.h), which answers the feature's
 * calls the way a kernel without it does. What must hold: sbx-run still
 * confines the program (files outside the grants and new sockets are
 * refused), the demo renders every page with every attack blocked and its
 * status table showing what is off, one warning line names the missing
 * layer, and --require turns the warning into a refusal that says why.
 * Controls: the same runs without the launcher. One test meets the real
 * sysctl, user.max_user_namespaces=0, in a user namespace of its own. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/tests/degrade/without_filter.h"
#include "sandbox/tests/runner/tool_run.h"

static const char *const modes[] = {"--no-userns", "--docker", "--no-landlock"};

/* sbx-without MODES... -- sbx-run OPTS... -- CMD... (modes NULL or
 * empty: sbx-run alone, the control). */
static result run_under(const char *const *without_modes,
                        const char *const *opts, const char *const *cmd) {
  g_autofree char *without = tool_path("tests/sbx-without");
  g_autofree char *bin = sbx_run_path();
  GPtrArray *argv = g_ptr_array_new();
  if (without_modes && without_modes[0]) {
    g_ptr_array_add(argv, without);
    for (size_t i = 0; without_modes[i]; i++)
      g_ptr_array_add(argv, (char *)without_modes[i]);
    g_ptr_array_add(argv, "--");
  }
  g_ptr_array_add(argv, bin);
  for (size_t i = 0; opts && opts[i]; i++)
    g_ptr_array_add(argv, (char *)opts[i]);
  g_ptr_array_add(argv, "--");
  for (size_t i = 0; cmd[i]; i++)
    g_ptr_array_add(argv, (char *)cmd[i]);
  g_ptr_array_add(argv, NULL);
  result r = run((const char *const *)argv->pdata);
  g_ptr_array_free(argv, TRUE);
  return r;
}

/* Under one missing feature (mode NULL: none). */
static result run_without(const char *mode, const char *const *opts,
                          const char *const *cmd) {
  const char *one[] = {mode, NULL};
  return run_under(one, opts, cmd);
}

static const char *layer_of(const char *mode) {
  return strcmp(mode, "--no-landlock") == 0 ? "Landlock" : "user namespaces";
}

START_TEST(sbx_run_true_works_without_the_feature_and_warns_once) {
  const char *cmd[] = {"/bin/true", NULL};
  result control = run_without(NULL, NULL, cmd);
  ck_assert_int_eq(control.status, 0);
  assert_lacks(control.err, "sbx: warning");
  result_clear(&control);

  result r = run_without(modes[_i], NULL, cmd);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  g_autofree char *warning = g_strdup_printf(
      "sbx: warning: sbx-run runs without %s", layer_of(modes[_i]));
  assert_contains(r.err, warning);
  ck_assert_ptr_null(strstr(strstr(r.err, warning) + 1, warning));
  result_clear(&r);
}
END_TEST

/* A TCP listener of the host's on 127.0.0.1 that answers each
 * connection's byte with 'y' (the probe's exchange) and counts them. */
typedef struct {
  int fd;
  int port;
  int accepted;
} host_listener;

static gpointer answer_connections(gpointer data) {
  host_listener *l = data;
  int c;
  while ((c = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
    g_atomic_int_inc(&l->accepted);
    char b;
    if (read(c, &b, 1) == 1)
      (void)!write(c, "y", 1);
    close(c);
  }
  return NULL;
}

static GThread *host_listener_start(host_listener *l) {
  l->fd = tcp_listen_loopback(16, &l->port);
  l->accepted = 0;
  return g_thread_new("listener", answer_connections, l);
}

/* Stops the listener; returns how many connections it answered. */
static int host_listener_stop(host_listener *l, GThread *t) {
  shutdown(l->fd, SHUT_RDWR);
  g_thread_join(t);
  close(l->fd);
  return g_atomic_int_get(&l->accepted);
}

START_TEST(sbx_run_still_confines_without_the_feature) {
  g_autofree char *dir = make_dir("granted");
  g_autofree char *allowed = make_file("granted/in.txt", "inside\n");
  g_autofree char *canary = make_file("canary.txt", "secret\n");
  g_autofree char *probe = probe_path();
  const char *opts[] = {"-r", dir, NULL};

  const char *read_allowed[] = {probe, "read", allowed, NULL};
  const char *read_canary[] = {probe, "read", canary, NULL};
  host_listener l;
  GThread *lt = host_listener_start(&l);
  g_autofree char *port = g_strdup_printf("%d", l.port);
  const char *inet[] = {probe, "connect-tcp", port, NULL};
  /* Controls: unsandboxed, the canary reads and the host's listener
   * answers. */
  expect(run(read_canary), 0, "data=secret", NULL);
  expect(run(inet), 0, "exchange=ok", NULL);

  expect(run_without(modes[_i], opts, read_allowed), 0, "data=inside", NULL);
  /* A name outside every grant is missing, as in the default mode's
   * tree; changing one is refused. */
  expect(run_without(modes[_i], opts, read_canary), 1, "errno=2\n",
         "sbx: denied");
  /* The host's network stays out of reach: no network socket without a
   * network namespace, and in the sandbox's own 127.0.0.1 is its own. */
  expect(run_without(modes[_i], opts, inet), 1, NULL, "allow with --net");
  ck_assert_int_eq(host_listener_stop(&l, lt), 1);
  g_autofree char *outside_write = path_in("written.txt");
  const char *write_outside[] = {probe, "write", outside_write, NULL};
  expect(run_without(modes[_i], opts, write_outside), 1, "errno=13\n", NULL);
  ck_assert(!g_file_test(outside_write, G_FILE_TEST_EXISTS));
}
END_TEST

START_TEST(sbx_run_require_refuses_a_missing_layer_and_says_why) {
  const char *cmd[] = {"/bin/true", NULL};
  const bool landlock = strcmp(modes[_i], "--no-landlock") == 0;
  const char *opts[] = {"--require", landlock ? "landlock" : "userns", NULL};
  /* Control: with the kernel as it is, the requirement is met. */
  expect(run_without(NULL, opts, cmd), 0, NULL, NULL);
  result r = run_without(modes[_i], opts, cmd);
  ck_assert_int_eq(r.status, 125);
  g_autofree char *says = g_strdup_printf(
      "sbx-run requires %s (require=%s), which this system lacks",
      layer_of(modes[_i]), landlock ? "landlock" : "userns");
  assert_contains(r.err, says);
  /* The cause and the way to enable it. */
  assert_contains(r.err,
                  landlock ? "CONFIG_SECURITY_LANDLOCK" : "seccomp filter");
  result_clear(&r);
}
END_TEST

/* --allow-ptrace keeps tracing inside the sandbox with a pid namespace
 * or with Landlock's scoping: it works where either is missing, and is
 * refused where both are (the control: sbx-run without it still runs). */
START_TEST(allow_ptrace_needs_a_pid_namespace_or_landlock) {
  g_autofree char *probe = probe_path();
  const char *traceme[] = {probe, "traceme", NULL};
  const char *opts[] = {"--allow-ptrace", NULL};
  for (size_t i = 0; i < G_N_ELEMENTS(modes); i++)
    expect(run_without(modes[i], opts, traceme), 0, "traceme=ok", NULL);
  const char *neither[] = {"--no-userns", "--no-landlock", NULL};
  const char *t[] = {"/bin/true", NULL};
  expect(run_under(neither, NULL, t), 0, NULL, NULL);
  expect(run_under(neither, opts, traceme), 125, NULL,
         "--allow-ptrace needs a pid namespace or Landlock");
}
END_TEST

START_TEST(sbx_run_require_rejects_unknown_layers) {
  const char *cmd[] = {"/bin/true", NULL};
  const char *bad[] = {"--require", "userns,bogus", NULL};
  expect(run_without(NULL, bad, cmd), 125, NULL, "unknown layer \"bogus\"");
  const char *empty[] = {"--require", "", NULL};
  expect(run_without(NULL, empty, cmd), 125, NULL, "--require");
  const char *all[] = {"--require", "seccomp,broker", "--require",
                       "userns,landlock", NULL};
  expect(run_without(NULL, all, cmd), 0, NULL, NULL);
}
END_TEST

START_TEST(renderer_demo_completes_without_the_feature) {
  const char *conditions[][3] = {
      {"--no-userns", NULL, NULL},
      {"--docker", NULL, NULL},
      {"--no-landlock", NULL, NULL},
      {"--no-userns", "--no-landlock", NULL},
  };
  g_autofree char *without = tool_path("tests/sbx-without");
  g_autofree char *demo = tool_path("renderer-demo");
  g_autofree char *out = make_dir("demo-out");
  const char *const *c = conditions[_i];
  const char *argv[8];
  size_t n = 0;
  argv[n++] = without;
  for (size_t i = 0; c[i]; i++)
    argv[n++] = c[i];
  argv[n++] = "--";
  argv[n++] = demo;
  argv[n++] = "--out";
  argv[n++] = out;
  argv[n] = NULL;
  result r = run(argv);
  ck_assert_msg(r.status == 0, "demo status %d:\n%s\n%s", r.status, r.out,
                r.err);
  assert_contains(r.out, "5/5 pages rendered");
  assert_contains(r.out, "attacks blocked");
  assert_lacks(r.out, "ESCAPED");
  assert_contains(r.out, "fully sandboxed: NO");
  bool no_userns = strcmp(c[0], "--no-landlock") != 0;
  bool no_landlock = strcmp(c[0], "--no-landlock") == 0 ||
                     (c[1] && strcmp(c[1], "--no-landlock") == 0);
  if (no_userns) {
    assert_contains(r.out, "user namespace: OFF");
    assert_contains(r.err, "runs without user namespaces");
  } else {
    assert_contains(r.out, "user namespace: on");
  }
  assert_contains(r.out, no_landlock ? "landlock: OFF" : "landlock: on");
  assert_contains(r.out, "seccomp: on");
  assert_contains(r.out, "broker: on");
  result_clear(&r);
}
END_TEST

/* The kernel's own refusal: a user.max_*_namespaces limit of 0, set in a
 * user namespace of the test's own (where it may be lowered), then
 * sbx-run started there. The warning and the refusal name the sysctl. */
static result run_with_limit_zero(const char *limit, const char *const *opts) {
  g_autofree char *bin = sbx_run_path();
  int out[2], err[2];
  ck_assert_int_eq(pipe(out), 0);
  ck_assert_int_eq(pipe(err), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    if (without_namespaces_by_sysctl(limit) != 0)
      _exit(99);
    const char *argv[8];
    size_t n = 0;
    argv[n++] = bin;
    for (size_t i = 0; opts && opts[i]; i++)
      argv[n++] = opts[i];
    argv[n++] = "--";
    argv[n++] = "/bin/true";
    argv[n] = NULL;
    execv(bin, (char *const *)argv);
    _exit(98);
  }
  close(out[1]);
  close(err[1]);
  result r = {0};
  GString *o = g_string_new(NULL), *e = g_string_new(NULL);
  char buf[4096];
  ssize_t k;
  while ((k = read(out[0], buf, sizeof buf)) > 0)
    g_string_append_len(o, buf, k);
  while ((k = read(err[0], buf, sizeof buf)) > 0)
    g_string_append_len(e, buf, k);
  close(out[0]);
  close(err[0]);
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = g_string_free(o, FALSE);
  r.err = g_string_free(e, FALSE);
  return r;
}

/* With limit at 0 sbx-run runs without user namespaces, warning and
 * naming the sysctl, and --require userns refuses, naming it too. */
static void assert_limit_named(const char *limit) {
  g_autofree char *zero = g_strdup_printf("user.%s is 0", limit);
  g_autofree char *raise = g_strdup_printf("sysctl -w user.%s", limit);
  result r = run_with_limit_zero(limit, NULL);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  assert_contains(r.err, "sbx-run runs without user namespaces");
  assert_contains(r.err, zero);
  result_clear(&r);
  const char *req[] = {"--require", "userns", NULL};
  result strict = run_with_limit_zero(limit, req);
  ck_assert_int_eq(strict.status, 125);
  assert_contains(strict.err, raise);
  result_clear(&strict);
}

START_TEST(sbx_run_with_max_user_namespaces_zero) {
  assert_limit_named("max_user_namespaces");
}
END_TEST

/* Only network namespaces refused (user.max_net_namespaces=0): sbx-run
 * makes the sandbox's network namespace beside init, which fails here;
 * the run then goes as when the clone of every namespace at once is
 * refused, warning and naming the sysctl, and --require userns refuses.
 * With --net no network namespace is made and the rest stays. */
START_TEST(sbx_run_with_max_net_namespaces_zero) {
  assert_limit_named("max_net_namespaces");
  const char *net[] = {"--net", "--require", "userns", NULL};
  result host_net = run_with_limit_zero("max_net_namespaces", net);
  ck_assert_msg(host_net.status == 0, "status %d: %s", host_net.status,
                host_net.err);
  ck_assert_msg(host_net.err[0] == '\0', "%s", host_net.err);
  result_clear(&host_net);
}
END_TEST

static Suite *degrade_tools_suite(void) {
  Suite *s = suite_create("degrade_tools");
  TCase *tc = tcase_create("tools");
  tcase_add_checked_fixture(tc, tool_setup, tool_teardown);
  tcase_set_timeout(tc, 120);
  size_t n = G_N_ELEMENTS(modes);
  tcase_add_loop_test(tc, sbx_run_true_works_without_the_feature_and_warns_once,
                      0, n);
  tcase_add_loop_test(tc, sbx_run_still_confines_without_the_feature, 0, n);
  tcase_add_loop_test(tc, sbx_run_require_refuses_a_missing_layer_and_says_why,
                      0, n);
  tcase_add_test(tc, sbx_run_require_rejects_unknown_layers);
  tcase_add_test(tc, allow_ptrace_needs_a_pid_namespace_or_landlock);
  tcase_add_loop_test(tc, renderer_demo_completes_without_the_feature, 0, 4);
  tcase_add_test(tc, sbx_run_with_max_user_namespaces_zero);
  tcase_add_test(tc, sbx_run_with_max_net_namespaces_zero);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(degrade_tools_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
