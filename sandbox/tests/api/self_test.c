/* In-process sandboxing (sbx_sandbox_enter_self) on a real process: each
 * test forks a child that sandboxes itself with the built-in renderer
 * profile and an extra "create" rule for a temporary home, probes itself
 * with plain libc calls, and sends the outcomes back over a pipe. S16: a
 * thread started before the call is held by the same filters. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/tests/api/api_test_util.h"
#include "sbx/sbx.h"

static api_dirs dirs;

static void setup(void) {
  api_dirs_make(&dirs);
}

static void teardown(void) {
  api_dirs_remove(&dirs);
}

typedef struct {
  bool entered;
  char error[256];
  sbx_sandbox_status status;
  api_probe probe;
} self_report;

static sbx_self_config renderer_config(bool keep_namespaces) {
  static char rule[192];
  static const char *rules[2];
  api_home_rules(&dirs, rule, sizeof rule, rules);
  sbx_self_config config =
      SBX_SELF_CONFIG_INIT(.process_type = "renderer", .profile = "renderer",
                           .extra_rules = rules, .audit_log = dirs.audit_log,
                           .keep_namespaces = keep_namespaces);
  return config;
}

static void enter(const sbx_self_config *config, self_report *r) {
  GError *error = NULL;
  r->entered = sbx_sandbox_enter_self(config, &r->status, &error);
  if (!r->entered) {
    g_strlcpy(r->error, error->message, sizeof r->error);
    g_error_free(error);
  }
}

/* Runs body in a forked child and returns its report. */
static self_report in_child(void (*body)(self_report *)) {
  int out[2];
  ck_assert_int_eq(pipe(out), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(out[0]);
    self_report r;
    memset(&r, 0, sizeof r);
    r.status = (sbx_sandbox_status)SBX_SANDBOX_STATUS_INIT();
    body(&r);
    _exit(write(out[1], &r, sizeof r) == (ssize_t)sizeof r ? 0 : 1);
  }
  close(out[1]);
  self_report r;
  api_read_all(out[0], &r, sizeof r);
  close(out[0]);
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "child wait status 0x%x", status);
  return r;
}

static void body_single_threaded(self_report *r) {
  sbx_self_config config = renderer_config(false);
  enter(&config, r);
  if (r->entered)
    api_probe_run(&dirs, &r->probe);
}

/* Runs body in a child, with the unsandboxed controls first, and checks
 * that the probe saw the sandbox and the broker audited its denial. */
static self_report run_confined(void (*body)(self_report *)) {
  api_assert_unsandboxed_controls(&dirs);
  self_report r = in_child(body);
  ck_assert_msg(r.entered, "%s", r.error);
  api_assert_probe_sandboxed(&dirs, &r.probe);
  api_assert_canary_denial_audited(&dirs, "renderer");
  return r;
}

START_TEST(enter_self_confines_a_single_threaded_process) {
  self_report r = run_confined(body_single_threaded);
  ck_assert_int_eq(r.status.user_ns, SBX_LAYER_ON);
  ck_assert_int_eq(r.status.empty_root, SBX_LAYER_ON);
  ck_assert_int_eq(r.status.net_ns, SBX_LAYER_ON);
  ck_assert_int_eq(r.status.no_capabilities, SBX_LAYER_ON);
  ck_assert_int_eq(r.status.no_new_privs, SBX_LAYER_ON);
  ck_assert_int_eq(r.status.seccomp, SBX_LAYER_ON);
  ck_assert_int_eq(r.status.broker, SBX_LAYER_ON);
  ck_assert_int_eq(r.status.landlock, SBX_LAYER_ON);
  ck_assert_uint_eq(r.status.n_seccomp_layers, 2);
  ck_assert_str_eq(r.status.seccomp_layers[0], "broker-client");
  ck_assert_str_eq(r.status.seccomp_layers[1], "renderer.policy");
  ck_assert_str_eq(r.status.process_type, "renderer");
}
END_TEST

typedef struct {
  int go[2]; /* the thread waits for a byte here */
  api_probe probe;
} thread_task;

static void *probe_thread(void *arg) {
  thread_task *t = arg;
  char c;
  if (read(t->go[0], &c, 1) == 1)
    api_probe_run(&dirs, &t->probe);
  return NULL;
}

static void body_thread_started_first(self_report *r) {
  thread_task task;
  memset(&task, 0, sizeof task);
  if (pipe(task.go) != 0)
    return;
  pthread_t thread;
  if (pthread_create(&thread, NULL, probe_thread, &task) != 0)
    return;
  sbx_self_config config = renderer_config(true);
  enter(&config, r);
  if (write(task.go[1], "g", 1) != 1)
    r->entered = false;
  pthread_join(thread, NULL);
  r->probe = task.probe;
}

START_TEST(enter_self_covers_a_thread_started_before_it) {
  /* S16: the thread existed before any layer; TSYNC put every seccomp
   * layer on it, so its socket() is refused and its opens go to the
   * broker (the allowed file still opens, the canary does not). */
  self_report r = run_confined(body_thread_started_first);
  ck_assert_int_eq(r.status.user_ns, SBX_LAYER_OFF);
  ck_assert_int_eq(r.status.seccomp, SBX_LAYER_ON);
}
END_TEST

static void *parked(void *arg) {
  char c;
  while (read(*(int *)arg, &c, 1) > 0) {
  }
  return NULL;
}

static void body_threaded_with_namespaces(self_report *r) {
  int hold[2];
  pthread_t thread;
  if (pipe(hold) != 0 || pthread_create(&thread, NULL, parked, &hold[0]))
    return;
  sbx_self_config config = renderer_config(false);
  enter(&config, r);
  /* Refused before any layer: the process is as it was. */
  api_probe_run(&dirs, &r->probe);
  close(hold[1]);
  pthread_join(thread, NULL);
}

/* A refused call leaves the process as it was: its probe still makes a
 * TCP socket and reads the canary. */
static void assert_refused_unchanged(const self_report *r, const char *what,
                                     const char *also) {
  ck_assert(!r->entered);
  ck_assert_msg(strstr(r->error, what) && (!also || strstr(r->error, also)),
                "%s", r->error);
  ck_assert_int_eq(r->probe.inet_errno, 0);
  ck_assert_int_eq(r->probe.canary_errno, 0);
}

START_TEST(enter_self_refuses_namespaces_in_a_threaded_process) {
  self_report r = in_child(body_threaded_with_namespaces);
  assert_refused_unchanged(&r, "2 threads", "user");
}
END_TEST

static const char *custom_profile; /* set before in_child forks */

static void body_custom_profile(self_report *r) {
  sbx_self_config config = renderer_config(false);
  config.profile = custom_profile;
  config.profile_dir = dirs.outside;
  enter(&config, r);
  api_probe_run(&dirs, &r->probe);
}

START_TEST(enter_self_with_a_missing_profile_changes_nothing) {
  custom_profile = "no-such.profile";
  self_report r = in_child(body_custom_profile);
  assert_refused_unchanged(&r, "no-such.profile", NULL);
}
END_TEST

START_TEST(enter_self_with_a_bad_policy_names_file_and_line) {
  api_write_file(dirs.outside, "bad.policy", "read: 1\nwrite: arg9 == 1\n");
  api_write_file(dirs.outside, "uses-bad.profile",
                 "[profile]\nseccomp=bad.policy\n");
  custom_profile = "uses-bad.profile";
  self_report r = in_child(body_custom_profile);
  assert_refused_unchanged(&r, "bad.policy:2", NULL);
}
END_TEST

static Suite *self_suite(void) {
  Suite *s = suite_create("api_self");
  TCase *tc = tcase_create("in_process");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, enter_self_confines_a_single_threaded_process);
  tcase_add_test(tc, enter_self_covers_a_thread_started_before_it);
  tcase_add_test(tc, enter_self_refuses_namespaces_in_a_threaded_process);
  tcase_add_test(tc, enter_self_with_a_missing_profile_changes_nothing);
  tcase_add_test(tc, enter_self_with_a_bad_policy_names_file_and_line);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return api_run_suite(self_suite());
}
