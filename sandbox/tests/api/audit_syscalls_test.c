/* Errno verdicts of the seccomp layers in the audit log
 * (sbx_sandbox_config.audit_syscalls): a worker of the utility profile,
 * whose policy answers fsync with EPERM, calls it again and again. With the
 * audit on, it still gets EPERM every time, and the broker logs one line
 * for the call; with it off, the same EPERM and no line. The unsandboxed
 * control: fsync on the same file works in the test itself. Each test
 * starts its own sandbox in Check's forked child. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "sandbox/broker/protocol.h"
#include "sandbox/tests/api/api_test_util.h"
#include "sandbox/tests/api/pool_util.h"
#include "sbx/sbx.h"

#define CALLS 20

static char dir[128];
static char audit_log[192];
static char data_file[192];

static void setup(void) {
  g_strlcpy(dir, "/tmp/sbx-audit-sys-XXXXXX", sizeof dir);
  ck_assert_ptr_nonnull(g_mkdtemp_full(dir, 0755));
  g_snprintf(audit_log, sizeof audit_log, "%s/audit.log", dir);
  g_snprintf(data_file, sizeof data_file, "%s/data", dir);
  api_write_file(dir, "data", "bytes to sync\n");
}

static void teardown(void) {
  g_unlink(audit_log);
  g_unlink(data_file);
  g_rmdir(dir);
}

/* The worker: fsync(4) CALLS times, then getpid, then an open through the
 * broker of the file the payload names; fd 3 receives each errno (0 for
 * success) as an int. */
static int entry_fsync(const sbx_worker_args *args) {
  for (int i = 0; i < CALLS; i++) {
    int err = fsync(4) == 0 ? 0 : errno;
    if (write(3, &err, sizeof err) != (ssize_t)sizeof err)
      return 90;
  }
  int err = syscall(SYS_getpid) > 0 ? 0 : errno;
  if (write(3, &err, sizeof err) != (ssize_t)sizeof err)
    return 90;
  g_autofree char *path = g_strndup(args->payload, args->payload_len);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  err = fd >= 0 ? 0 : errno;
  if (fd >= 0)
    close(fd);
  if (write(3, &err, sizeof err) != (ssize_t)sizeof err)
    return 90;
  return 0;
}

/* The worker hands the broker a second "listener" (a pipe): a hostile
 * worker may not replace the real one. Then it asks for a file. */
static int entry_second_listener(const sbx_worker_args *args) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0)
    return 91;
  sbx_broker_request req = {.magic = SBX_BROKER_MAGIC,
                            .version = SBX_BROKER_VERSION,
                            .command = SBX_BROKER_LISTENER,
                            .arg = (uint32_t)getpid()};
  struct iovec iov = {.iov_base = &req, .iov_len = sizeof req};
  sbx_broker_fd_cmsg cbuf;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  sbx_broker_msg_attach_fd(&msg, &cbuf, p[0]);
  int sent = sendmsg(args->broker_fd, &msg, MSG_NOSIGNAL) == (ssize_t)sizeof req
                 ? 0
                 : errno;
  g_autofree char *path = g_strndup(args->payload, args->payload_len);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  int err = fd >= 0 ? 0 : errno;
  int out[2] = {sent, err};
  return write(3, out, sizeof out) == (ssize_t)sizeof out ? 0 : 90;
}

/* Workers forked ahead for the type (the warm pool); 0: none. */
static unsigned pool;

static sbx_sandbox *start(sbx_worker_entry entry, bool audit) {
  static char rule[224];
  static const char *rules[2] = {rule, NULL};
  g_snprintf(rule, sizeof rule, "read %s", data_file);
  static sbx_process_type t;
  t = (sbx_process_type)SBX_PROCESS_TYPE_INIT(.name = "utility",
                                              .profile = "utility",
                                              .entry = entry,
                                              .extra_rules = rules,
                                              .pool = pool);
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1, .audit_log = audit_log,
                              .audit_syscalls = audit);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  if (!sbx_sandbox_start(&config, &s, &error))
    ck_abort_msg("sbx_sandbox_start: %s", error->message);
  if (pool)
    g_array_unref(api_await_zygote_children(s, pool));
  return s;
}

/* Runs one worker with fd 3 a pipe and fd 4 the data file; reads n ints. */
static void run_worker(sbx_sandbox *s, int *out, size_t n) {
  int p[2];
  ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
  int data = open(data_file, O_RDWR | O_CLOEXEC);
  ck_assert_int_ge(data, 0);
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  int fds[5] = {devnull, devnull, devnull, p[1], data};
  sbx_spawn_config sc =
      SBX_SPAWN_CONFIG_INIT(.process_type = "utility", .payload = data_file,
                            .payload_len = strlen(data_file), .fds = fds,
                            .n_fds = 5);
  pid_t pid = 0;
  GError *error = NULL;
  if (!sbx_sandbox_spawn(s, &sc, &pid, &error))
    ck_abort_msg("spawn: %s", error->message);
  close(p[1]);
  close(data);
  close(devnull);
  size_t got = 0;
  while (got < n * sizeof *out) {
    ssize_t r = read(p[0], (char *)out + got, n * sizeof *out - got);
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  close(p[0]);
  ck_assert_uint_eq(got, n * sizeof *out);
  sbx_worker_exit exit = SBX_WORKER_EXIT_INIT();
  if (!sbx_sandbox_wait(s, pid, 10000, &exit, &error))
    ck_abort_msg("wait: %s", error->message);
  ck_assert_int_eq(exit.reason, SBX_EXIT_NORMAL);
  ck_assert_int_eq(exit.exit_code, 0);
}

/* Lines of the audit log that contain every one of the needles. */
static int count_lines(const char *a, const char *b) {
  g_autofree char *text = NULL;
  if (!g_file_get_contents(audit_log, &text, NULL, NULL))
    return 0;
  int n = 0;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++)
    n += strstr(*l, a) && (!b || strstr(*l, b));
  return n;
}

static void assert_worker_saw_eperm(const int *out) {
  for (int i = 0; i < CALLS; i++)
    ck_assert_msg(out[i] == EPERM, "fsync %d: %s", i, g_strerror(out[i]));
  ck_assert_int_eq(out[CALLS], 0);     /* getpid still works */
  ck_assert_int_eq(out[CALLS + 1], 0); /* and the broker still answers */
}

static void unsandboxed_control(void) {
  int fd = open(data_file, O_RDWR | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(fsync(fd), 0);
  close(fd);
}

static void verdict_logged_once(void) {
  unsandboxed_control();
  sbx_sandbox *s = start(entry_fsync, true);
  int out[CALLS + 2];
  run_worker(s, out, CALLS + 2);
  assert_worker_saw_eperm(out);
  /* A second worker of the type gets a line of its own. */
  run_worker(s, out, CALLS + 2);
  assert_worker_saw_eperm(out);
  sbx_sandbox_stop(s);
  ck_assert_int_eq(count_lines("op=syscall call=\"fsync(0x4,", "errno=EPERM"),
                   2);
  ck_assert_int_eq(count_lines("op=syscall", "type=utility"), 2);
  ck_assert_int_eq(count_lines("op=syscall", "allow=\"fsync: 1\""), 2);
}

START_TEST(errno_verdict_logged_once) {
  verdict_logged_once();
}
END_TEST

/* A pooled worker waits with its audited layer on and no broker channel:
 * it hands the layer's listener to the broker once its job brings one. */
START_TEST(errno_verdict_logged_once_for_pooled_workers) {
  pool = 2;
  verdict_logged_once();
  pool = 0;
}
END_TEST

START_TEST(no_line_without_audit) {
  unsandboxed_control();
  sbx_sandbox *s = start(entry_fsync, false);
  int out[CALLS + 2];
  run_worker(s, out, CALLS + 2);
  assert_worker_saw_eperm(out);
  sbx_sandbox_stop(s);
  ck_assert_int_eq(count_lines("op=syscall", NULL), 0);
}
END_TEST

START_TEST(environment_turns_it_on) {
  g_setenv("SBX_AUDIT_SYSCALLS", "1", TRUE);
  sbx_sandbox *s = start(entry_fsync, false);
  int out[CALLS + 2];
  run_worker(s, out, CALLS + 2);
  assert_worker_saw_eperm(out);
  sbx_sandbox_stop(s);
  g_unsetenv("SBX_AUDIT_SYSCALLS");
  ck_assert_int_eq(count_lines("op=syscall call=\"fsync(", NULL), 1);
}
END_TEST

/* Runs entry_second_listener in a sandbox with or without the audit;
 * out[0]: 0 when the message was sent, out[1]: the errno of its open. */
static void run_second_listener(bool audit, int out[2]) {
  sbx_sandbox *s = start(entry_second_listener, audit);
  int p[2];
  ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  int fds[4] = {devnull, devnull, devnull, p[1]};
  sbx_spawn_config sc =
      SBX_SPAWN_CONFIG_INIT(.process_type = "utility", .payload = data_file,
                            .payload_len = strlen(data_file), .fds = fds,
                            .n_fds = 4);
  pid_t pid = 0;
  GError *error = NULL;
  if (!sbx_sandbox_spawn(s, &sc, &pid, &error))
    ck_abort_msg("spawn: %s", error->message);
  close(p[1]);
  close(devnull);
  ck_assert_int_eq(read(p[0], out, 2 * sizeof *out),
                   (ssize_t)(2 * sizeof *out));
  close(p[0]);
  sbx_worker_exit exit = SBX_WORKER_EXIT_INIT();
  ck_assert(sbx_sandbox_wait(s, pid, 10000, &exit, &error));
  sbx_sandbox_stop(s);
}

/* The kernel's listener came first; a second one closes the worker's
 * channel (its next file request fails) and is logged. */
START_TEST(second_listener_refused) {
  int out[2];
  run_second_listener(true, out);
  ck_assert_int_eq(out[0], 0);
  ck_assert_int_ne(out[1], 0);
  ck_assert_int_eq(count_lines("op=protocol", "second listener"), 1);
}
END_TEST

/* Without the audit, the type has no verdict program: any listener is
 * refused the same way. */
START_TEST(listener_refused_without_audit) {
  int out[2];
  run_second_listener(false, out);
  ck_assert_int_eq(out[0], 0);
  ck_assert_int_ne(out[1], 0);
  ck_assert_int_eq(count_lines("op=protocol", "type without audit"), 1);
}
END_TEST

int main(int argc, char **argv) {
  /* Fresh mode: the zygote is a new exec of this program. */
  sbx_main_hook(argc, argv);
  Suite *suite = suite_create("api_audit_syscalls");
  TCase *tc = tcase_create("verdicts");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, errno_verdict_logged_once);
  tcase_add_test(tc, errno_verdict_logged_once_for_pooled_workers);
  tcase_add_test(tc, no_line_without_audit);
  tcase_add_test(tc, environment_turns_it_on);
  tcase_add_test(tc, second_listener_refused);
  tcase_add_test(tc, listener_refused_without_audit);
  suite_add_tcase(suite, tc);
  SRunner *runner = srunner_create(suite);
  srunner_run_all(runner, CK_NORMAL);
  int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
