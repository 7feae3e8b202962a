/* Escapes through the audit log and the host's control channels (B7a):
 * a worker that floods the broker with denials while the log's reader is
 * paused, a worker that outlogs its budget, a broker or zygote that stops
 * answering. Each runs the whole public API: sbx_sandbox_start with the
 * built-in renderer profile, real workers forked by the zygote, every
 * file call trapped by layer 1 and decided by the real broker. What must
 * hold: no worker, spawn or stop waits on the log; lines stay bounded and
 * counted; the host's calls fail or return within the bounds sbx.h
 * states. Every negative test has a control in which the same workload
 * reaches a log that reads. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/broker/audit.h"
#include "sandbox/tests/api/api_test_util.h"
#include "sbx/sbx.h"

/* ASan's thread start asks for the thread's attributes, which the
 * renderer policy refuses (sched_getaffinity): under ASan the flood comes
 * from the worker's one thread. */
#if defined(__SANITIZE_ADDRESS__)
#define FLOOD_THREADS 1
#else
#define FLOOD_THREADS 4
#endif
#define FLOOD_BEFORE_READY 2000 /* denials sent before the flooder reports */
#define READS 300
#define EXTRA_DENIALS 50

/* Generous margins over the promised bounds: the machine is shared. */
#define MARGIN_MS 3000

typedef enum {
  JOB_FLOOD = 'F',   /* deny-flood from several threads, for ever */
  JOB_READ = 'R',    /* READS brokered opens of an allowed file */
  JOB_DENY = 'D',    /* a given number of denied opens, one thread */
  JOB_NOTHING = 'X', /* exit at once */
} job;

typedef struct {
  char job;
  uint32_t count; /* JOB_DENY */
} request;

static api_dirs dirs;
static int devnull = -1;

/* ---- Workers ------------------------------------------------------------ */

typedef struct {
  char path[PATH_MAX];
  atomic_ulong sent;
} flood_state;

static void *flood_loop(void *arg) {
  flood_state *f = arg;
  for (;;) {
    int fd = open(f->path, O_RDONLY);
    if (fd >= 0)
      close(fd);
    atomic_fetch_add(&f->sent, 1);
  }
  return NULL;
}

/* Denials with the longest path a request can carry, every byte one the
 * log must escape: each would be a 16 KiB line if it were not cut. */
static int flood(void) {
  static flood_state f;
  f.path[0] = '/';
  memset(f.path + 1, 0xff, PATH_MAX - 2);
  f.path[PATH_MAX - 1] = '\0';
  for (int i = 0; i < FLOOD_THREADS - 1; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, flood_loop, &f) != 0)
      return 81;
  }
  while (atomic_load(&f.sent) < FLOOD_BEFORE_READY) {
    int fd = open(f.path, O_RDONLY);
    if (fd >= 0)
      return 82; /* allowed?! */
    atomic_fetch_add(&f.sent, 1);
  }
  if (write(3, "F", 1) != 1)
    return 83;
  flood_loop(&f);
  return 84;
}

static int read_allowed(void) {
  uint32_t ok = 0;
  for (int i = 0; i < READS; i++) {
    int fd = open(API_ALLOWED_FILE, O_RDONLY);
    char c;
    if (fd >= 0 && read(fd, &c, 1) == 1)
      ok++;
    if (fd >= 0)
      close(fd);
  }
  return write(3, &ok, sizeof ok) == (ssize_t)sizeof ok ? 0 : 90;
}

static int deny(uint32_t n) {
  uint32_t refused = 0;
  for (uint32_t i = 0; i < n; i++) {
    char path[64];
    snprintf(path, sizeof path, "/sbx-audit-denied-%u", i);
    int fd = open(path, O_RDONLY);
    if (fd < 0 && errno == EACCES)
      refused++;
    else if (fd >= 0)
      close(fd);
  }
  return write(3, &refused, sizeof refused) == (ssize_t)sizeof refused ? 0 : 90;
}

static int entry(const sbx_worker_args *args) {
  request r;
  if (args->payload_len != sizeof r)
    return 70;
  memcpy(&r, args->payload, sizeof r);
  switch (r.job) {
    case JOB_FLOOD:
      return flood();
    case JOB_READ:
      return read_allowed();
    case JOB_DENY:
      return deny(r.count);
    case JOB_NOTHING:
      return 0;
  }
  return 71;
}

/* ---- Host side ---------------------------------------------------------- */

static gint64 now_ms(void) {
  return g_get_monotonic_time() / 1000;
}

static sbx_sandbox *start(const char *audit_log) {
  static const sbx_process_type type =
      SBX_PROCESS_TYPE_INIT(.name = "renderer", .profile = "renderer",
                            .entry = entry);
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = &type, .n_types = 1,
                              .audit_log = audit_log);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  if (!sbx_sandbox_start(&config, &s, &error))
    ck_abort_msg("sbx_sandbox_start: %s", error->message);
  return s;
}

/* Spawns a worker for job; *out gets the read end of its fd 3, whether
 * the spawn succeeds or not. */
static gboolean spawn_keeping_out(sbx_sandbox *s, job j, uint32_t count,
                                  pid_t *pid, int *out, GError **error) {
  int p[2];
  ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
  int fds[] = {devnull, devnull, devnull, p[1]};
  request r = {.job = (char)j, .count = count};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "renderer", .payload = &r,
                            .payload_len = sizeof r, .fds = fds, .n_fds = 4);
  gboolean ok = sbx_sandbox_spawn(s, &spawn, pid, error);
  close(p[1]);
  *out = p[0];
  return ok;
}

/* Spawns a worker for job; *out gets the read end of its fd 3. */
static gboolean spawn(sbx_sandbox *s, job j, uint32_t count, pid_t *pid,
                      int *out, GError **error) {
  gboolean ok = spawn_keeping_out(s, j, count, pid, out, error);
  if (!ok)
    close(*out);
  return ok;
}

/* After a spawn that failed once the zygote had started its worker
 * (which holds the write end of out): the worker is gone by the time the
 * spawn returned, and no wait reports it. */
static void assert_failed_spawn_left_nothing(sbx_sandbox *s, int out) {
  struct pollfd p = {.fd = out, .events = POLLIN};
  ck_assert_int_eq(poll(&p, 1, 0), 1);
  ck_assert_msg(p.revents & POLLHUP, "revents %#x", p.revents);
  close(out);
  sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
  GError *error = NULL;
  ck_assert_msg(!sbx_sandbox_wait(s, -1, 200, &e, &error),
                "an exit was reported for worker %d: %s", (int)e.pid, e.detail);
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  g_error_free(error);
}

static void spawn_ok(sbx_sandbox *s, job j, uint32_t count, pid_t *pid,
                     int *out) {
  GError *error = NULL;
  if (!spawn(s, j, count, pid, out, &error))
    ck_abort_msg("sbx_sandbox_spawn: %s", error->message);
}

/* Reads worker pid's reply of len bytes from fd within timeout_ms, or
 * fails the test saying how the worker ended. */
static void read_reply(sbx_sandbox *s, pid_t pid, int fd, void *buf, size_t len,
                       int timeout_ms) {
  gint64 deadline = now_ms() + timeout_ms;
  size_t got = 0;
  while (got < len) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    gint64 left = deadline - now_ms();
    ck_assert_msg(left > 0 && poll(&p, 1, (int)left) == 1,
                  "no reply from the worker within %d ms", timeout_ms);
    ssize_t n = read(fd, (char *)buf + got, len - got);
    if (n <= 0) {
      sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
      GError *error = NULL;
      if (!sbx_sandbox_wait(s, pid, 5000, &e, &error))
        ck_abort_msg("the worker ended before its reply (%s)", error->message);
      ck_abort_msg("the worker ended before its reply: %s", e.detail);
    }
    got += (size_t)n;
  }
}

static void wait_exit_zero(sbx_sandbox *s, pid_t pid) {
  sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
  GError *error = NULL;
  if (!sbx_sandbox_wait(s, pid, 20000, &e, &error))
    ck_abort_msg("sbx_sandbox_wait: %s", error->message);
  ck_assert_msg(e.reason == SBX_EXIT_NORMAL && e.exit_code == 0, "%s",
                e.detail);
}

/* Fills the pipe behind fd to its last byte, through a description of the
 * test's own (the caller's keeps its flags). */
static void stuff(int fd) {
  char path[40];
  g_snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  int own = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  ck_assert_int_ge(own, 0);
  static const char page[4096];
  while (write(own, page, sizeof page) > 0) {
  }
  while (write(own, page, 1) > 0) {
  }
  close(own);
}

/* What the pipe's reader gets within ms milliseconds (it reads all the
 * time), without the NUL bytes stuff() put there. */
static GString *read_for(int fd, int ms) {
  GString *s = g_string_new(NULL);
  gint64 deadline = now_ms() + ms;
  char buf[65536];
  for (gint64 left; (left = deadline - now_ms()) > 0;) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, (int)left) != 1)
      continue;
    ssize_t n = read(fd, buf, sizeof buf);
    for (ssize_t i = 0; i < n; i++)
      if (buf[i])
        g_string_append_c(s, buf[i]);
  }
  return s;
}

/* Every complete line is a bounded audit line; returns how many there
 * are, and in *denied, *suppressed the denied lines and the suppressed
 * counts that name pid (every pid: 0). */
static guint check_lines(const char *text, pid_t pid, guint *denied,
                         guint64 *suppressed) {
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  guint n = 0;
  char key[32], last[32];
  g_snprintf(key, sizeof key, " pid=%d ", (int)pid);
  g_snprintf(last, sizeof last, " pid=%d", (int)pid);
  *denied = 0;
  *suppressed = 0;
  for (char **l = lines; *l && l[1]; l++) { /* the last piece has no '\n' */
    size_t len = strlen(*l) + 1;
    ck_assert_msg(len <= SBX_AUDIT_LINE_MAX, "a line of %zu bytes", len);
    ck_assert_msg(g_str_has_prefix(*l, "sbx: "), "not an audit line: %s", *l);
    for (const char *c = *l; *c; c++)
      ck_assert_msg(*c >= 0x20 && *c <= 0x7e, "unprintable byte in %s", *l);
    n++;
    bool mine = pid == 0 || strstr(*l, key) || g_str_has_suffix(*l, last);
    if (!mine)
      continue;
    if (g_str_has_prefix(*l, "sbx: denied "))
      (*denied)++;
    const char *count = strstr(*l, "sbx: suppressed denials=");
    if (count)
      *suppressed += g_ascii_strtoull(count + 24, NULL, 10);
  }
  return n;
}

static void setup(void) {
  api_dirs_make(&dirs);
  devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  ck_assert_int_ge(devnull, 0);
}

static void teardown(void) {
  close(devnull);
  api_dirs_remove(&dirs);
}

/* Runs the flood with the audit log on stderr being the write end of a
 * pipe whose reader never reads (filled before the sandbox starts). */
START_TEST(a_paused_audit_reader_stalls_no_worker_spawn_or_stop) {
  int p[2];
  ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
  stuff(p[1]);
  int saved = dup(2);
  ck_assert_int_eq(dup2(p[1], 2), 2);
  sbx_sandbox *s = start(NULL); /* audit log: stderr */
  ck_assert_int_eq(dup2(saved, 2), 2);
  close(saved);

  pid_t flooder, reader;
  int flood_out, read_out;
  spawn_ok(s, JOB_FLOOD, 0, &flooder, &flood_out);
  char started;
  read_reply(s, flooder, flood_out, &started, 1, 20000);

  /* A spawn while the flood runs and the log is full. */
  gint64 t0 = now_ms();
  spawn_ok(s, JOB_READ, 0, &reader, &read_out);
  gint64 spawn_ms = now_ms() - t0;
  ck_assert_msg(spawn_ms < SBX_REPLY_TIMEOUT_MS,
                "spawn took %" G_GINT64_FORMAT " ms", spawn_ms);
  uint32_t ok = 0;
  read_reply(s, reader, read_out, &ok, sizeof ok, 20000);
  ck_assert_uint_eq(ok, READS);
  wait_exit_zero(s, reader);
  close(read_out);
  /* The host's description of the pipe was never made non-blocking. */
  ck_assert(!(fcntl(p[1], F_GETFL) & O_NONBLOCK));

  /* The reader comes back: the broker says what it could not write, and
   * what it writes is bounded. */
  g_autoptr(GString) log = read_for(p[0], 1500);
  guint denied;
  guint64 suppressed;
  check_lines(log->str, flooder, &denied, &suppressed);
  ck_assert_msg(strstr(log->str, "sbx: dropped lines="), "%.2000s", log->str);
  ck_assert_msg(suppressed > 0, "%.2000s", log->str);

  /* Paused again, with the flood still on: stop returns in time. */
  stuff(p[1]);
  gint64 t1 = now_ms();
  sbx_sandbox_stop(s);
  gint64 stop_ms = now_ms() - t1;
  ck_assert_msg(stop_ms < SBX_STOP_TIMEOUT_MS,
                "stop took %" G_GINT64_FORMAT " ms", stop_ms);
  ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
  ck_assert_int_eq(errno, ECHILD);
  close(flood_out);
  close(p[0]);
  close(p[1]);
}
END_TEST

/* Control: the same flood, the log a file that always takes lines. */
START_TEST(a_reading_audit_log_gets_the_flood_bounded_and_counted) {
  sbx_sandbox *s = start(dirs.audit_log);
  gint64 t0 = now_ms();
  pid_t flooder, reader;
  int flood_out, read_out;
  spawn_ok(s, JOB_FLOOD, 0, &flooder, &flood_out);
  char started;
  read_reply(s, flooder, flood_out, &started, 1, 20000);
  spawn_ok(s, JOB_READ, 0, &reader, &read_out);
  uint32_t ok = 0;
  read_reply(s, reader, read_out, &ok, sizeof ok, 20000);
  ck_assert_uint_eq(ok, READS);
  wait_exit_zero(s, reader);
  close(read_out);
  sbx_sandbox_stop(s);
  gint64 elapsed_s = (now_ms() - t0) / 1000 + 1;
  close(flood_out);

  g_autofree char *log = NULL;
  ck_assert(g_file_get_contents(dirs.audit_log, &log, NULL, NULL));
  guint denied;
  guint64 suppressed;
  check_lines(log, flooder, &denied, &suppressed);
  ck_assert_uint_ge(denied, SBX_AUDIT_DENIAL_BURST);
  ck_assert_uint_le(denied, SBX_AUDIT_DENIAL_BURST +
                                2 * SBX_AUDIT_DENIALS_PER_SECOND * elapsed_s);
  ck_assert_uint_ge(suppressed, FLOOD_BEFORE_READY - denied);
  ck_assert_msg(strstr(log, "path_len=4095"), "%.2000s", log);
  ck_assert(!strstr(log, "sbx: dropped"));
}
END_TEST

START_TEST(
    a_workers_denials_over_its_budget_are_counted_and_others_still_logged) {
  sbx_sandbox *s = start(dirs.audit_log);
  const uint32_t total = SBX_AUDIT_DENIAL_BURST + EXTRA_DENIALS;
  pid_t noisy, quiet;
  int noisy_out, quiet_out;
  uint32_t refused = 0;
  spawn_ok(s, JOB_DENY, total, &noisy, &noisy_out);
  read_reply(s, noisy, noisy_out, &refused, sizeof refused, 20000);
  ck_assert_uint_eq(refused, total); /* decisions ignore the budget */
  wait_exit_zero(s, noisy);
  spawn_ok(s, JOB_DENY, 1, &quiet, &quiet_out);
  read_reply(s, quiet, quiet_out, &refused, sizeof refused, 20000);
  ck_assert_uint_eq(refused, 1);
  wait_exit_zero(s, quiet);
  close(noisy_out);
  close(quiet_out);
  sbx_sandbox_stop(s);

  g_autofree char *log = NULL;
  ck_assert(g_file_get_contents(dirs.audit_log, &log, NULL, NULL));
  guint denied;
  guint64 suppressed;
  check_lines(log, noisy, &denied, &suppressed);
  /* Every denial is either a line or in a count; most of the extra ones
   * are counted (a few may have been refilled meanwhile). */
  ck_assert_uint_eq(denied + suppressed, total);
  ck_assert_uint_ge(denied, SBX_AUDIT_DENIAL_BURST);
  ck_assert_msg(suppressed > 0, "%s", log);
  check_lines(log, quiet, &denied, &suppressed);
  ck_assert_uint_eq(denied, 1);
  ck_assert_uint_eq(suppressed, 0);
}
END_TEST

/* Stops a helper with SIGSTOP, then asks for a spawn: it must fail in
 * time naming that helper, and stop must still clean up. */
static void check_stopped_helper(bool broker, const char *name) {
  sbx_sandbox *s = start(dirs.audit_log);
  /* Control: a spawn while both answer. */
  pid_t pid;
  int out;
  spawn_ok(s, JOB_NOTHING, 0, &pid, &out);
  wait_exit_zero(s, pid);
  close(out);

  pid_t helper = broker ? sbx_sandbox_broker_pid(s) : sbx_sandbox_zygote_pid(s);
  ck_assert_int_eq(kill(helper, SIGSTOP), 0);
  GError *error = NULL;
  gint64 t0 = now_ms();
  /* A worker that asks the broker (stopped: it waits for ever). */
  ck_assert(!spawn_keeping_out(s, JOB_READ, 0, &pid, &out, &error));
  gint64 spawn_ms = now_ms() - t0;
  ck_assert_int_eq(pid, -1);
  if (broker) /* the zygote did start it */
    assert_failed_spawn_left_nothing(s, out);
  else
    close(out);
  api_assert_error(error, SBX_ERROR, SBX_ERROR_FAILED);
  ck_assert_msg(
      strstr(error->message, name) && strstr(error->message, "5000 ms"), "%s",
      error->message);
  g_error_free(error);
  ck_assert_int_ge(spawn_ms, SBX_REPLY_TIMEOUT_MS - 100);
  ck_assert_int_lt(spawn_ms, SBX_REPLY_TIMEOUT_MS + MARGIN_MS);

  gint64 t1 = now_ms();
  sbx_sandbox_stop(s);
  gint64 stop_ms = now_ms() - t1;
  ck_assert_int_lt(stop_ms, SBX_STOP_TIMEOUT_MS + MARGIN_MS);
  /* Nothing is left behind, stopped or not. */
  ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
  ck_assert_int_eq(errno, ECHILD);
  ck_assert_int_eq(kill(helper, 0), -1);
}

/* The broker refuses a worker's channel when it cannot take one more
 * descriptor (its RLIMIT_NOFILE lowered to 0 from outside): the spawn fails
 * naming the refusal, and the worker the zygote started meanwhile is gone
 * without a trace. Controls: the same spawn before and after. */
START_TEST(a_broker_refusing_the_channel_fails_spawn_and_leaves_no_worker) {
  sbx_sandbox *s = start(dirs.audit_log);
  pid_t pid;
  int out;
  uint32_t ok_reads = 0;
  spawn_ok(s, JOB_READ, 0, &pid, &out);
  read_reply(s, pid, out, &ok_reads, sizeof ok_reads, 20000);
  ck_assert_uint_eq(ok_reads, READS);
  wait_exit_zero(s, pid);
  close(out);

  pid_t broker = sbx_sandbox_broker_pid(s);
  struct rlimit old;
  ck_assert_int_eq(prlimit(broker, RLIMIT_NOFILE, NULL, &old), 0);
  struct rlimit none = {.rlim_cur = 0, .rlim_max = old.rlim_max};
  ck_assert_int_eq(prlimit(broker, RLIMIT_NOFILE, &none, NULL), 0);
  GError *error = NULL;
  ck_assert(!spawn_keeping_out(s, JOB_READ, 0, &pid, &out, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_FAILED);
  ck_assert_msg(strstr(error->message, "broker refused a channel"), "%s",
                error->message);
  g_error_free(error);
  ck_assert_int_eq(pid, -1);
  assert_failed_spawn_left_nothing(s, out);

  ck_assert_int_eq(prlimit(broker, RLIMIT_NOFILE, &old, NULL), 0);
  ok_reads = 0;
  spawn_ok(s, JOB_READ, 0, &pid, &out);
  read_reply(s, pid, out, &ok_reads, sizeof ok_reads, 20000);
  ck_assert_uint_eq(ok_reads, READS);
  wait_exit_zero(s, pid);
  close(out);
  sbx_sandbox_stop(s);
}
END_TEST

START_TEST(
    a_stopped_broker_fails_spawn_within_the_bound_and_stop_still_returns) {
  check_stopped_helper(true, "broker");
}
END_TEST

START_TEST(
    a_stopped_zygote_fails_spawn_within_the_bound_and_stop_still_returns) {
  check_stopped_helper(false, "zygote");
}
END_TEST

static Suite *escape_audit_suite(void) {
  Suite *s = suite_create("escape_audit");
  TCase *tc = tcase_create("audit");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, a_paused_audit_reader_stalls_no_worker_spawn_or_stop);
  tcase_add_test(tc, a_reading_audit_log_gets_the_flood_bounded_and_counted);
  tcase_add_test(
      tc,
      a_workers_denials_over_its_budget_are_counted_and_others_still_logged);
  tcase_add_test(
      tc, a_broker_refusing_the_channel_fails_spawn_and_leaves_no_worker);
  tcase_add_test(
      tc, a_stopped_broker_fails_spawn_within_the_bound_and_stop_still_returns);
  tcase_add_test(
      tc, a_stopped_zygote_fails_spawn_within_the_bound_and_stop_still_returns);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return api_run_suite(escape_audit_suite());
}
