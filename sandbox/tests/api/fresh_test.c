/* Fresh mode against fork mode: what a worker starts from. This program's
 * main calls sbx_main_hook, so its sandboxes start a fresh zygote (a new
 * exec of this executable) unless a test sets fork_mode; each claim of
 * fresh mode is checked next to fork mode, where the opposite holds (the
 * positive control: the test can see what it says is absent). */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/tests/api/api_test_util.h"
#include "sbx/sbx.h"

#define SECRET_VAR "SBX_FRESH_TEST_SECRET"
#define PASSED_VAR "SBX_FRESH_TEST_PASSED"
#define SECRET "hunter2-in-the-host"

/* Set by the host before sbx_sandbox_start. */
static char global_secret[64];
/* The host's pid, set before start: a process of another pid is not the
 * host. */
static pid_t host_pid;

/* What a worker reports about itself on descriptor 3. */
typedef struct {
  char env_secret[64]; /* getenv(SECRET_VAR), "" when unset */
  char env_passed[64];
  char global[64];
  uintptr_t entry_address;
  uintptr_t stack_address;
  uintptr_t libc_address; /* of getpid */
} worker_report;

static void copy_env(char *dst, const char *name) {
  const char *v = getenv(name);
  g_strlcpy(dst, v ? v : "", 64);
}

static int entry_report(const sbx_worker_args *args) {
  worker_report r;
  memset(&r, 0, sizeof r);
  copy_env(r.env_secret, SECRET_VAR);
  copy_env(r.env_passed, PASSED_VAR);
  g_strlcpy(r.global, global_secret, sizeof r.global);
  r.entry_address = (uintptr_t)entry_report;
  r.stack_address = (uintptr_t)&r;
  r.libc_address = (uintptr_t)getpid;
  return write(3, &r, sizeof r) == (ssize_t)sizeof r ? 0 : 90;
}

/* Registered by the host: a process other than the host that runs it
 * says so on descriptor 3. */
static void host_atexit(void) {
  if (getpid() != host_pid) {
    static const char line[] = "host atexit handler\n";
    ssize_t n = write(3, line, sizeof line - 1);
    (void)n;
  }
}

static int entry_exit_through_libc(const sbx_worker_args *args) {
  static const char line[] = "worker\n";
  if (write(3, line, sizeof line - 1) != (ssize_t)sizeof line - 1)
    return 90;
  exit(0); /* runs the atexit handlers this process has */
}

static sbx_sandbox *start(sbx_worker_entry entry, bool fork_mode) {
  static const char *const env[] = {PASSED_VAR, NULL};
  sbx_process_type t =
      SBX_PROCESS_TYPE_INIT(.name = "renderer", .entry = entry);
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1, .env = env,
                              .fork_mode = fork_mode);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  if (!sbx_sandbox_start(&config, &s, &error))
    ck_abort_msg("sbx_sandbox_start: %s", error->message);
  return s;
}

/* Spawns one worker with the write end of a pipe as descriptor 3, waits
 * for it to exit 0, and returns everything it wrote (g_free). */
static char *run_worker(sbx_sandbox *s, size_t *len) {
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  int fds[] = {0, 1, 2, p[1]};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "renderer", .fds = fds, .n_fds = 4);
  pid_t pid = -1;
  GError *error = NULL;
  if (!sbx_sandbox_spawn(s, &spawn, &pid, &error))
    ck_abort_msg("sbx_sandbox_spawn: %s", error->message);
  close(p[1]);
  GString *got = g_string_new(NULL);
  char buf[4096];
  ssize_t n;
  while ((n = read(p[0], buf, sizeof buf)) > 0)
    g_string_append_len(got, buf, n);
  close(p[0]);
  sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
  if (!sbx_sandbox_wait(s, pid, 20000, &e, &error))
    ck_abort_msg("sbx_sandbox_wait: %s", error->message);
  ck_assert_msg(e.reason == SBX_EXIT_NORMAL && e.exit_code == 0, "%s",
                e.detail);
  *len = got->len;
  return g_string_free(got, FALSE);
}

static worker_report report_of(bool fork_mode) {
  host_pid = getpid();
  g_strlcpy(global_secret, SECRET, sizeof global_secret);
  g_setenv(SECRET_VAR, SECRET, TRUE);
  g_setenv(PASSED_VAR, "passed on purpose", TRUE);
  sbx_sandbox *s = start(entry_report, fork_mode);
  size_t len = 0;
  g_autofree char *bytes = run_worker(s, &len);
  sbx_sandbox_stop(s);
  worker_report r;
  ck_assert_uint_eq(len, sizeof r);
  memcpy(&r, bytes, sizeof r);
  return r;
}

START_TEST(fresh_worker_sees_no_host_secret_in_env_or_globals) {
  worker_report r = report_of(false);
  ck_assert_str_eq(r.env_secret, "");
  ck_assert_str_eq(r.global, "");
  /* Control: the variable the configuration names does arrive. */
  ck_assert_str_eq(r.env_passed, "passed on purpose");
}
END_TEST

START_TEST(fork_mode_worker_sees_the_hosts_globals_and_env) {
  worker_report r = report_of(true);
  ck_assert_str_eq(r.global, SECRET);
  ck_assert_str_eq(r.env_secret, SECRET);
  ck_assert_str_eq(r.env_passed, "passed on purpose");
}
END_TEST

/* ASLR must be on for layouts to differ at all. */
static bool aslr_on(void) {
  g_autofree char *v = NULL;
  return g_file_get_contents("/proc/sys/kernel/randomize_va_space", &v, NULL,
                             NULL) &&
         atoi(v) > 0;
}

START_TEST(fresh_worker_has_a_layout_of_its_own) {
  ck_assert_msg(aslr_on(),
                "kernel.randomize_va_space is 0: nothing here "
                "has a layout of its own");
  worker_report r = report_of(false);
  ck_assert_msg(r.entry_address != (uintptr_t)entry_report,
                "the executable is at the host's address");
  ck_assert_msg(r.libc_address != (uintptr_t)getpid,
                "libc is at the host's address");
  ck_assert_msg(r.stack_address >> 20 != (uintptr_t)&r >> 20,
                "the stack is where the host's is");
}
END_TEST

START_TEST(fork_mode_worker_shares_the_hosts_layout) {
  worker_report r = report_of(true);
  ck_assert_uint_eq(r.entry_address, (uintptr_t)entry_report);
  ck_assert_uint_eq(r.libc_address, (uintptr_t)getpid);
}
END_TEST

/* The executable's load address of a process, as /proc/PID/maps shows
 * it to this one; 0 when it cannot be read (an undumpable process of
 * another owner). */
static uintptr_t exe_base_of(pid_t pid) {
  g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
  g_autofree char *path = g_strdup_printf("/proc/%d/maps", (int)pid);
  g_autofree char *maps = NULL;
  if (!exe || !g_file_get_contents(path, &maps, NULL, NULL))
    return 0;
  g_auto(GStrv) lines = g_strsplit(maps, "\n", -1);
  for (size_t i = 0; lines[i]; i++) {
    if (g_str_has_suffix(lines[i], exe))
      return (uintptr_t)g_ascii_strtoull(lines[i], NULL, 16);
  }
  return 0;
}

START_TEST(fresh_zygote_runs_this_program_at_another_address) {
  ck_assert(aslr_on());
  sbx_sandbox *s = start(entry_report, false);
  pid_t zygote = sbx_sandbox_zygote_pid(s);
  uintptr_t mine = exe_base_of(getpid());
  uintptr_t its = exe_base_of(zygote);
  sbx_sandbox_stop(s);
  ck_assert_uint_ne(mine, 0);
  /* Only root reads an undumpable process's maps; the worker's report
   * (above) covers the rest. */
  if (its)
    ck_assert_msg(its != mine, "the zygote's executable is at 0x%lx too",
                  (unsigned long)mine);
}
END_TEST

START_TEST(exit_in_a_fresh_worker_runs_no_host_atexit_handler) {
  host_pid = getpid();
  ck_assert_int_eq(atexit(host_atexit), 0);
  sbx_sandbox *s = start(entry_exit_through_libc, false);
  size_t len;
  g_autofree char *got = run_worker(s, &len);
  sbx_sandbox_stop(s);
  ck_assert_str_eq(got, "worker\n");
}
END_TEST

START_TEST(exit_in_a_fork_mode_worker_runs_the_hosts_atexit_handler) {
  host_pid = getpid();
  ck_assert_int_eq(atexit(host_atexit), 0);
  sbx_sandbox *s = start(entry_exit_through_libc, true);
  size_t len;
  g_autofree char *got = run_worker(s, &len);
  sbx_sandbox_stop(s);
  ck_assert_str_eq(got, "worker\nhost atexit handler\n");
}
END_TEST

/* An entry in another shared object (GLib's) cannot be found by a fresh
 * zygote; fork mode takes it (the control). */
START_TEST(an_entry_outside_the_executable_is_refused_in_fresh_mode) {
  sbx_worker_entry elsewhere = (sbx_worker_entry)(void (*)(void))g_get_prgname;
  sbx_process_type t =
      SBX_PROCESS_TYPE_INIT(.name = "renderer", .entry = elsewhere);
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  ck_assert(!sbx_sandbox_start(&config, &s, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  ck_assert_msg(strstr(error->message, "libglib") &&
                    strstr(error->message, "not in the executable or libsbx"),
                "%s", error->message);
  ck_assert_ptr_null(s);
  g_clear_error(&error);
  config.fork_mode = true;
  ck_assert_msg(sbx_sandbox_start(&config, &s, &error), "%s",
                error ? error->message : "");
  sbx_sandbox_stop(s);
}
END_TEST

START_TEST(user_data_is_refused_in_fresh_mode_and_taken_in_fork_mode) {
  static int data;
  sbx_process_type t =
      SBX_PROCESS_TYPE_INIT(.name = "renderer", .entry = entry_report,
                            .user_data = &data);
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  ck_assert(!sbx_sandbox_start(&config, &s, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  ck_assert_msg(strstr(error->message, "user_data"), "%s", error->message);
  g_clear_error(&error);
  config.fork_mode = true;
  ck_assert(sbx_sandbox_start(&config, &s, NULL));
  sbx_sandbox_stop(s);
}
END_TEST

START_TEST(an_env_entry_that_is_not_a_name_is_refused) {
  static const char *const env[] = {"LANG=C", NULL};
  sbx_process_type t =
      SBX_PROCESS_TYPE_INIT(.name = "renderer", .entry = entry_report);
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1, .env = env);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  ck_assert(!sbx_sandbox_start(&config, &s, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  ck_assert_msg(strstr(error->message, "LANG=C"), "%s", error->message);
  g_clear_error(&error);
}
END_TEST

START_TEST(the_hook_returns_in_an_ordinary_run) {
  char *argv[] = {(char *)"host", (char *)"--verbose", NULL};
  sbx_main_hook(2, argv);
  sbx_main_hook(1, argv);
  sbx_main_hook(0, NULL);
  char *marker_later[] = {(char *)"host", (char *)"x", (char *)"--sbx-zygote",
                          NULL};
  sbx_main_hook(3, marker_later);
}
END_TEST

/* Started with the marker by hand, the program has no start data: it
 * says so and exits 1 rather than run as anything. */
START_TEST(the_marker_without_start_data_exits_with_a_message) {
  g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
  ck_assert_ptr_nonnull(self);
  const char *argv[] = {self, "--sbx-zygote", NULL};
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status = 0;
  GError *error = NULL;
  ck_assert(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                         &out, &err, &status, &error));
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1,
                "status 0x%x: %s", status, err);
  ck_assert_msg(strstr(err, "not started by libsbx as a zygote"), "%s", err);
  ck_assert_str_eq(out, "");
}
END_TEST

/* The host's side: starts a sandbox, says its zygote's pid, then waits to
 * be killed. */
static void host_until_killed(int out) {
  sbx_sandbox *s = start(entry_report, false);
  pid_t zygote = sbx_sandbox_zygote_pid(s);
  if (write(out, &zygote, sizeof zygote) != (ssize_t)sizeof zygote)
    _exit(1);
  for (;;)
    pause();
}

START_TEST(the_fresh_zygote_dies_with_its_host) {
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  fflush(NULL);
  pid_t host = fork();
  ck_assert_int_ge(host, 0);
  if (host == 0) {
    close(p[0]);
    host_until_killed(p[1]);
  }
  close(p[1]);
  pid_t zygote = 0;
  api_read_all(p[0], &zygote, sizeof zygote);
  close(p[0]);
  int pidfd = (int)syscall(SYS_pidfd_open, zygote, 0);
  ck_assert_msg(pidfd >= 0, "pidfd_open(%d): %s", (int)zygote,
                g_strerror(errno));
  /* Control: alive while its host is. */
  struct pollfd pfd = {.fd = pidfd, .events = POLLIN};
  ck_assert_int_eq(poll(&pfd, 1, 200), 0);
  ck_assert_int_eq(kill(host, SIGKILL), 0);
  int status;
  ck_assert_int_eq(waitpid(host, &status, 0), host);
  ck_assert_msg(poll(&pfd, 1, 10000) == 1,
                "the zygote %d outlived its host by 10 s", (int)zygote);
  close(pidfd);
}
END_TEST

static Suite *fresh_suite(void) {
  Suite *s = suite_create("api_fresh");
  TCase *tc = tcase_create("fresh");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, fresh_worker_sees_no_host_secret_in_env_or_globals);
  tcase_add_test(tc, fork_mode_worker_sees_the_hosts_globals_and_env);
  tcase_add_test(tc, fresh_worker_has_a_layout_of_its_own);
  tcase_add_test(tc, fork_mode_worker_shares_the_hosts_layout);
  tcase_add_test(tc, fresh_zygote_runs_this_program_at_another_address);
  tcase_add_test(tc, exit_in_a_fresh_worker_runs_no_host_atexit_handler);
  tcase_add_test(tc, exit_in_a_fork_mode_worker_runs_the_hosts_atexit_handler);
  tcase_add_test(tc, an_entry_outside_the_executable_is_refused_in_fresh_mode);
  tcase_add_test(tc, user_data_is_refused_in_fresh_mode_and_taken_in_fork_mode);
  tcase_add_test(tc, an_env_entry_that_is_not_a_name_is_refused);
  tcase_add_test(tc, the_hook_returns_in_an_ordinary_run);
  tcase_add_test(tc, the_marker_without_start_data_exits_with_a_message);
  tcase_add_test(tc, the_fresh_zygote_dies_with_its_host);
  suite_add_tcase(s, tc);
  return s;
}

int main(int argc, char **argv) {
  sbx_main_hook(argc, argv);
  return api_run_suite(fresh_suite());
}
