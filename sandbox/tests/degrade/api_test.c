/* libsbx where a kernel feature is missing: zygote workers and processes
 * that sandbox themselves, started in a child that runs under the filter
 * of without_filter.h (no user namespaces, Docker's default profile, no
 * Landlock). Each case checks what must hold without the feature (the
 * probe's allowed open works, the canary, /etc/shadow and a TCP socket
 * are refused), that the status report says which layers are off, and
 * that a profile requiring the missing layer refuses to start and says
 * why. Every case has its control: the same child without the filter
 * reports the layer on. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "sandbox/tests/api/api_test_util.h"
#include "sandbox/tests/degrade/without_filter.h"
#include "sbx/sbx.h"

static api_dirs dirs; /* set before sbx_sandbox_start: workers see it */

/* in_child's what: the real sysctl (without_userns_by_sysctl) instead of
 * a filter. */
#define BY_SYSCTL (1u << 30)
/* in_child's what: an older Landlock ABI, the low byte
 * (without_fake_landlock_abi). */
#define FAKE_ABI(n) ((1u << 29) | (unsigned)(n))

typedef struct {
  bool started;
  char error[512];
  int error_code;
  sbx_sandbox_status status;
  api_probe probe;
  int worker_exit;
  char stderr_text[2048];
} report;

static void setup(void) {
  api_dirs_make(&dirs);
}

static void teardown(void) {
  api_dirs_remove(&dirs);
}

/* Worker: its status, then the probe's outcomes, on fd 3. */
static int entry_status_and_probe(const sbx_worker_args *args) {
  sbx_sandbox_status none = SBX_SANDBOX_STATUS_INIT();
  const sbx_sandbox_status *st = args->status ? args->status : &none;
  api_probe p;
  api_probe_run(&dirs, &p);
  if (write(3, st, sizeof *st) != (ssize_t)sizeof *st ||
      write(3, &p, sizeof p) != (ssize_t)sizeof p)
    return 90;
  return 0;
}

/* A profile file in the test's outside directory: the built-in renderer's
 * policy with a chosen [profile] require line (NULL: no such key). */
static char *write_profile(const char *require) {
  g_autofree char *text = g_strdup_printf(
      "[profile]\n"
      "seccomp=renderer.policy\n"
      "%s%s%s"
      "[broker]\n"
      "rules=read /usr/share/common-licenses/;read /etc/ld.so.cache;"
      "read /usr/lib/x86_64-linux-gnu/\n"
      "[namespaces]\n"
      "enter=user;pid;net;ipc;uts;mount;cgroup\n"
      "empty-root=true\n"
      "[landlock]\n"
      "enabled=true\n"
      "[worker]\n"
      "status=true\n",
      require ? "require=" : "", require ? require : "", require ? "\n" : "");
  char *path = g_build_filename(dirs.outside, "degrade.profile", NULL);
  ck_assert(g_file_set_contents(path, text, -1, NULL));
  return path;
}

static void fail_into(report *r, GError *error) {
  g_strlcpy(r->error, error->message, sizeof r->error);
  r->error_code = error->domain == SBX_ERROR ? error->code : -1;
  g_error_free(error);
}

/* In this (filtered) child: start a sandbox with one renderer-like type,
 * spawn one worker, collect its report. */
static void run_worker(const char *profile, report *r) {
  static char rule[192];
  static const char *rules[2];
  api_home_rules(&dirs, rule, sizeof rule, rules);
  sbx_process_type t =
      SBX_PROCESS_TYPE_INIT(.name = "renderer", .profile = profile,
                            .entry = entry_status_and_probe,
                            .extra_rules = rules);
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1,
                              .audit_log = dirs.audit_log);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  if (!sbx_sandbox_start(&config, &s, &error)) {
    fail_into(r, error);
    return;
  }
  r->started = true;
  int out[2];
  ck_assert_int_eq(pipe(out), 0);
  int fds[] = {0, 1, 2, out[1]};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "renderer", .fds = fds, .n_fds = 4);
  pid_t pid = -1;
  if (!sbx_sandbox_spawn(s, &spawn, &pid, &error))
    ck_abort_msg("spawn: %s", error->message);
  close(out[1]);
  api_read_all(out[0], &r->status, sizeof r->status);
  api_read_all(out[0], &r->probe, sizeof r->probe);
  close(out[0]);
  sbx_worker_exit exit = SBX_WORKER_EXIT_INIT();
  if (!sbx_sandbox_wait(s, pid, 20000, &exit, &error))
    ck_abort_msg("wait: %s", error->message);
  r->worker_exit = exit.exit_code;
  sbx_sandbox_stop(s);
}

/* In this (filtered) child: sandbox the process itself and probe. */
static void run_self(const char *profile, report *r) {
  static char rule[192];
  static const char *rules[2];
  api_home_rules(&dirs, rule, sizeof rule, rules);
  sbx_self_config config =
      SBX_SELF_CONFIG_INIT(.process_type = "renderer", .profile = profile,
                           .extra_rules = rules, .audit_log = dirs.audit_log);
  r->status = (sbx_sandbox_status)SBX_SANDBOX_STATUS_INIT();
  GError *error = NULL;
  if (!sbx_sandbox_enter_self(&config, &r->status, &error)) {
    fail_into(r, error);
    return;
  }
  r->started = true;
  api_probe_run(&dirs, &r->probe);
}

/* Forks a child that installs the filter for what (0: none, the control),
 * runs body with its stderr captured, and sends back the report. */
static report in_child(unsigned what, bool self, const char *profile) {
  int out[2];
  ck_assert_int_eq(pipe(out), 0);
  g_autofree char *err_path = g_build_filename(dirs.outside, "stderr", NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(out[0]);
    report r;
    memset(&r, 0, sizeof r);
    int err_fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (err_fd < 0 || dup2(err_fd, 2) != 2)
      _exit(3);
    int rc = 0;
    if (what == BY_SYSCTL)
      rc = without_userns_by_sysctl();
    else if (what & FAKE_ABI(0))
      rc = without_fake_landlock_abi((int)(what & 0xff));
    else if (what)
      rc = without_install(what);
    if (rc != 0)
      _exit(4);
    if (self)
      run_self(profile, &r);
    else
      run_worker(profile, &r);
    _exit(write(out[1], &r, sizeof r) == (ssize_t)sizeof r ? 0 : 1);
  }
  close(out[1]);
  report r;
  api_read_all(out[0], &r, sizeof r);
  close(out[0]);
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "child wait status 0x%x", status);
  g_autofree char *text = NULL;
  if (g_file_get_contents(err_path, &text, NULL, NULL))
    g_strlcpy(r.stderr_text, text, sizeof r.stderr_text);
  return r;
}

static int count(const char *haystack, const char *needle) {
  int n = 0;
  for (const char *p = haystack; (p = strstr(p, needle)); p += strlen(needle))
    n++;
  return n;
}

static void assert_started(const report *r) {
  ck_assert_msg(r->started, "did not start: %s", r->error);
}

/* What holds without user namespaces or Landlock: the broker and the
 * seccomp layers. */
static void assert_still_confined(const report *r) {
  ck_assert_int_eq(r->worker_exit, 0);
  api_assert_probe_sandboxed(&dirs, &r->probe);
  ck_assert_int_eq(r->status.seccomp, SBX_LAYER_ON);
  ck_assert_int_eq(r->status.broker, SBX_LAYER_ON);
  ck_assert_int_eq(r->status.no_capabilities, SBX_LAYER_ON);
  ck_assert_int_eq(r->status.no_new_privs, SBX_LAYER_ON);
}

static void assert_namespaces(const report *r, sbx_layer_state want) {
  ck_assert_int_eq(r->status.user_ns, want);
  ck_assert_int_eq(r->status.pid_ns, want);
  ck_assert_int_eq(r->status.net_ns, want);
  ck_assert_int_eq(r->status.mount_ns, want);
}

START_TEST(control_every_layer_is_on_with_the_kernel_as_it_is) {
  api_assert_unsandboxed_controls(&dirs);
  report r = in_child(0, false, "renderer");
  assert_started(&r);
  assert_still_confined(&r);
  assert_namespaces(&r, SBX_LAYER_ON);
  ck_assert_int_eq(r.status.landlock, SBX_LAYER_ON);
  ck_assert(r.status.fully_sandboxed);
  ck_assert_int_eq(count(r.stderr_text, "sbx: warning:"), 0);
}
END_TEST

static const unsigned no_userns_kinds[] = {WITHOUT_USERNS, WITHOUT_DOCKER};

START_TEST(worker_runs_without_user_namespaces_and_says_so) {
  report r = in_child(no_userns_kinds[_i], false, "renderer");
  assert_started(&r);
  assert_still_confined(&r);
  assert_namespaces(&r, SBX_LAYER_OFF);
  ck_assert_int_eq(r.status.landlock, SBX_LAYER_ON);
  ck_assert(!r.status.fully_sandboxed);
  ck_assert_int_eq(count(r.stderr_text,
                         "sbx: warning: renderer runs without "
                         "user namespaces"),
                   1);
  ck_assert_ptr_nonnull(strstr(r.stderr_text, "seccomp filter"));
}
END_TEST

/* The kernel's own refusal: user.max_user_namespaces=0, set in a user
 * namespace of the test's own. The warning names the sysctl. */
START_TEST(worker_runs_with_max_user_namespaces_zero) {
  report r = in_child(BY_SYSCTL, false, "renderer");
  assert_started(&r);
  assert_still_confined(&r);
  assert_namespaces(&r, SBX_LAYER_OFF);
  ck_assert_msg(strstr(r.stderr_text, "user.max_user_namespaces is 0"), "%s",
                r.stderr_text);
  g_autofree char *profile = write_profile("userns");
  report strict = in_child(BY_SYSCTL, false, profile);
  ck_assert(!strict.started);
  ck_assert_int_eq(strict.error_code, SBX_ERROR_UNSUPPORTED);
  ck_assert_msg(strstr(strict.error, "sysctl -w user.max_user_namespaces"),
                "%s", strict.error);
}
END_TEST

START_TEST(worker_runs_without_landlock_and_says_so) {
  report r = in_child(WITHOUT_LANDLOCK, false, "renderer");
  assert_started(&r);
  assert_still_confined(&r);
  assert_namespaces(&r, SBX_LAYER_ON);
  ck_assert_int_eq(r.status.landlock, SBX_LAYER_OFF);
  ck_assert(!r.status.fully_sandboxed);
  ck_assert_int_eq(
      count(r.stderr_text, "sbx: warning: renderer runs without Landlock"), 1);
}
END_TEST

/* A kernel with an older Landlock ABI: the ruleset is built for it and
 * enforced, the broker still decides every open, and the report names
 * the ABI and what it cannot restrict. */
static const int older_abis[] = {1, 3, 6};

START_TEST(worker_runs_with_an_older_landlock_abi_and_says_what_is_missing) {
  int abi = older_abis[_i];
  report r = in_child(FAKE_ABI(abi), false, "renderer");
  assert_started(&r);
  assert_still_confined(&r);
  assert_namespaces(&r, SBX_LAYER_ON);
  ck_assert_int_eq(r.status.landlock, SBX_LAYER_ON);
  ck_assert_int_eq(r.status.landlock_abi, abi);
  char text[4096];
  sbx_sandbox_status_format(&r.status, text, sizeof text);
  g_autofree char *want =
      g_strdup_printf("landlock: on (abi %d; without: ", abi);
  ck_assert_msg(strstr(text, want), "%s", text);
  ck_assert_msg(strstr(text, "logging flags"), "%s", text);
  ck_assert_int_eq(strstr(text, "abstract-socket and signal scopes") != NULL,
                   abi < 6);
  ck_assert_int_eq(strstr(text, "truncation") != NULL, abi < 3);

  /* The same with the kernel's own ABI names nothing missing. */
  report control = in_child(0, false, "renderer");
  sbx_sandbox_status_format(&control.status, text, sizeof text);
  ck_assert_msg(strstr(text, "landlock: on (abi 7)\n"), "%s", text);
}
END_TEST

START_TEST(worker_runs_without_both) {
  report r = in_child(WITHOUT_USERNS | WITHOUT_LANDLOCK, false, "renderer");
  assert_started(&r);
  assert_still_confined(&r);
  assert_namespaces(&r, SBX_LAYER_OFF);
  ck_assert_int_eq(r.status.landlock, SBX_LAYER_OFF);
  ck_assert_int_eq(count(r.stderr_text, "sbx: warning:"), 2);
}
END_TEST

/* A profile that requires the missing layer, and one without a require
 * line (every enabled layer required), refuse to start; the message
 * names the type, the layer and the cause. */
static const struct {
  const char *require; /* NULL: no key */
  unsigned without;
  const char *says;
} refusals[] = {
    {"seccomp;broker;userns", WITHOUT_USERNS,
     "renderer requires user namespaces (require=userns)"},
    {NULL, WITHOUT_USERNS, "renderer requires user namespaces"},
    {"userns", WITHOUT_DOCKER, "renderer requires user namespaces"},
    {"landlock", WITHOUT_LANDLOCK,
     "renderer requires Landlock (require=landlock)"},
    {NULL, WITHOUT_LANDLOCK, "renderer requires Landlock"},
};

START_TEST(a_required_layer_that_is_missing_refuses_to_start) {
  g_autofree char *profile = write_profile(refusals[_i].require);
  report control = in_child(0, false, profile);
  assert_started(&control);
  ck_assert(control.status.fully_sandboxed);

  report r = in_child(refusals[_i].without, false, profile);
  ck_assert_msg(!r.started, "started without a required layer");
  ck_assert_int_eq(r.error_code, SBX_ERROR_UNSUPPORTED);
  ck_assert_msg(strstr(r.error, refusals[_i].says), "message: %s", r.error);
  ck_assert_msg(strstr(r.error, "which this system lacks"), "message: %s",
                r.error);
}
END_TEST

START_TEST(a_layer_left_out_of_require_is_optional) {
  g_autofree char *profile = write_profile("seccomp;broker;landlock");
  report r = in_child(WITHOUT_USERNS, false, profile);
  assert_started(&r);
  assert_namespaces(&r, SBX_LAYER_OFF);
  ck_assert_int_eq(r.status.landlock, SBX_LAYER_ON);
  report l = in_child(WITHOUT_LANDLOCK, false, profile);
  ck_assert(!l.started);
  ck_assert_int_eq(l.error_code, SBX_ERROR_UNSUPPORTED);
}
END_TEST

START_TEST(enter_self_without_user_namespaces) {
  report control = in_child(0, true, "renderer");
  assert_started(&control);
  ck_assert_int_eq(control.status.user_ns, SBX_LAYER_ON);

  report r = in_child(WITHOUT_USERNS, true, "renderer");
  assert_started(&r);
  api_assert_probe_sandboxed(&dirs, &r.probe);
  ck_assert_int_eq(r.status.user_ns, SBX_LAYER_OFF);
  ck_assert_int_eq(r.status.seccomp, SBX_LAYER_ON);
  ck_assert_int_eq(r.status.broker, SBX_LAYER_ON);
  ck_assert_int_eq(r.status.landlock, SBX_LAYER_ON);
  ck_assert_ptr_nonnull(strstr(r.stderr_text,
                               "sbx: warning: renderer runs "
                               "without user namespaces"));
}
END_TEST

START_TEST(enter_self_without_landlock) {
  report r = in_child(WITHOUT_LANDLOCK, true, "renderer");
  assert_started(&r);
  api_assert_probe_sandboxed(&dirs, &r.probe);
  ck_assert_int_eq(r.status.landlock, SBX_LAYER_OFF);
  ck_assert_int_eq(r.status.seccomp, SBX_LAYER_ON);
}
END_TEST

START_TEST(enter_self_refuses_when_required) {
  g_autofree char *profile = write_profile("seccomp;broker;userns;landlock");
  report r = in_child(WITHOUT_USERNS, true, profile);
  ck_assert(!r.started);
  ck_assert_int_eq(r.error_code, SBX_ERROR_UNSUPPORTED);
  ck_assert_msg(strstr(r.error, "requires user namespaces"), "%s", r.error);
  report l = in_child(WITHOUT_LANDLOCK, true, profile);
  ck_assert(!l.started);
  ck_assert_int_eq(l.error_code, SBX_ERROR_UNSUPPORTED);
  ck_assert_msg(strstr(l.error, "requires Landlock"), "%s", l.error);
}
END_TEST

static Suite *degrade_suite(void) {
  Suite *s = suite_create("degrade_api");
  TCase *tc = tcase_create("missing");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, control_every_layer_is_on_with_the_kernel_as_it_is);
  tcase_add_loop_test(tc, worker_runs_without_user_namespaces_and_says_so, 0,
                      G_N_ELEMENTS(no_userns_kinds));
  tcase_add_test(tc, worker_runs_with_max_user_namespaces_zero);
  tcase_add_test(tc, worker_runs_without_landlock_and_says_so);
  tcase_add_loop_test(
      tc, worker_runs_with_an_older_landlock_abi_and_says_what_is_missing, 0,
      G_N_ELEMENTS(older_abis));
  tcase_add_test(tc, worker_runs_without_both);
  tcase_add_loop_test(tc, a_required_layer_that_is_missing_refuses_to_start, 0,
                      G_N_ELEMENTS(refusals));
  tcase_add_test(tc, a_layer_left_out_of_require_is_optional);
  tcase_add_test(tc, enter_self_without_user_namespaces);
  tcase_add_test(tc, enter_self_without_landlock);
  tcase_add_test(tc, enter_self_refuses_when_required);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return api_run_suite(degrade_suite());
}
