/* The host API from several threads at once (sbx.h, "Threads"): spawns
 * and waits on many threads each get their own replies and their own
 * workers' exits, a wait that lasts stalls no other thread's spawn, every
 * wait's timeout fires whatever the other threads wait for, and
 * sbx_sandbox_stop on one thread ends the calls in progress on others.
 * Real workers of a real zygote; a hang fails the test by Check's timeout.
 * The sandbox is started while the test is single-threaded, as sbx.h
 * requires. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/tests/api/api_test_util.h"
#include "sbx/sbx.h"

#define N_THREADS 4
#define WORKERS_PER_THREAD 250
#define BATCH 10 /* workers a thread has alive at once */

/* Exits with the payload's first byte. */
static int entry_exit_with_payload(const sbx_worker_args *args) {
  return args->payload_len ? ((const unsigned char *)args->payload)[0] : 99;
}

/* Blocks until fd 3 reaches EOF, then exits with 7; without fd 3 (no
 * descriptor passed) it exits with the payload's byte at once. */
static int entry_block_or_exit(const sbx_worker_args *args) {
  if (args->n_fds < 4)
    return entry_exit_with_payload(args);
  char c;
  while (read(3, &c, 1) > 0) {
  }
  return 7;
}

static sbx_sandbox *start_with(sbx_worker_entry entry) {
  sbx_process_type t =
      SBX_PROCESS_TYPE_INIT(.name = "renderer", .entry = entry);
  sbx_sandbox_config c = SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  if (!sbx_sandbox_start(&c, &s, &error))
    ck_abort_msg("sbx_sandbox_start: %s", error->message);
  return s;
}

/* A worker exiting with code, or -1 with *message set. */
static pid_t spawn_code(sbx_sandbox *s, unsigned char code, char **message) {
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "renderer", .payload = &code,
                            .payload_len = 1);
  pid_t pid = -1;
  GError *error = NULL;
  if (!sbx_sandbox_spawn(s, &spawn, &pid, &error)) {
    *message = g_strdup_printf("spawn: %s", error->message);
    g_error_free(error);
    return -1;
  }
  return pid;
}

/* A worker blocked on hold (the read end of a pipe) until it is closed. */
static pid_t spawn_blocked(sbx_sandbox *s, int hold) {
  int fds[] = {0, 1, 2, hold};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "renderer", .fds = fds, .n_fds = 4);
  pid_t pid = -1;
  GError *error = NULL;
  if (!sbx_sandbox_spawn(s, &spawn, &pid, &error))
    ck_abort_msg("sbx_sandbox_spawn: %s", error->message);
  return pid;
}

/* NULL when pid ended normally with code; else what went wrong. */
static char *check_exit(sbx_sandbox *s, pid_t pid, int code) {
  sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
  GError *error = NULL;
  if (!sbx_sandbox_wait(s, pid, -1, &e, &error)) {
    char *m = g_strdup_printf("wait for %d: %s", (int)pid, error->message);
    g_error_free(error);
    return m;
  }
  if (e.pid != pid || e.reason != SBX_EXIT_NORMAL || e.exit_code != code)
    return g_strdup_printf("worker %d (expected exit %d): pid %d, %s", (int)pid,
                           code, (int)e.pid, e.detail);
  return NULL;
}

typedef struct {
  sbx_sandbox *sandbox;
  int index;
  int done;      /* workers whose exit was checked */
  char *failure; /* the first thing that went wrong; g_free */
} churn;

/* Spawns WORKERS_PER_THREAD workers in batches, each exiting with a code
 * of its own, and waits for each by pid. */
static void *run_churn(void *arg) {
  churn *c = arg;
  for (int n = 0; n < WORKERS_PER_THREAD && !c->failure; n += BATCH) {
    pid_t pids[BATCH];
    int codes[BATCH];
    int spawned = 0;
    for (; spawned < BATCH && !c->failure; spawned++) {
      codes[spawned] = 1 + (c->index * WORKERS_PER_THREAD + n + spawned) % 250;
      pids[spawned] =
          spawn_code(c->sandbox, (unsigned char)codes[spawned], &c->failure);
      if (c->failure)
        break;
    }
    for (int i = 0; i < spawned; i++) {
      char *m = check_exit(c->sandbox, pids[i], codes[i]);
      if (m && !c->failure)
        c->failure = m;
      else
        g_free(m);
      c->done += !m;
    }
  }
  return NULL;
}

START_TEST(four_threads_spawning_and_waiting_at_once_each_get_their_exits) {
  sbx_sandbox *s = start_with(entry_exit_with_payload);
  churn c[N_THREADS];
  pthread_t threads[N_THREADS];
  for (int i = 0; i < N_THREADS; i++) {
    c[i] = (churn){.sandbox = s, .index = i};
    ck_assert_int_eq(pthread_create(&threads[i], NULL, run_churn, &c[i]), 0);
  }
  for (int i = 0; i < N_THREADS; i++)
    pthread_join(threads[i], NULL);
  for (int i = 0; i < N_THREADS; i++) {
    ck_assert_msg(!c[i].failure, "thread %d: %s", i, c[i].failure);
    ck_assert_int_eq(c[i].done, WORKERS_PER_THREAD);
  }
  /* Every exit was taken by the thread that waited for it: none is left. */
  sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
  GError *error = NULL;
  ck_assert(!sbx_sandbox_wait(s, -1, 0, &e, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  g_error_free(error);
  sbx_sandbox_stop(s);
}
END_TEST

typedef struct {
  sbx_sandbox *sandbox;
  pid_t pid;
  int timeout_ms;
  gboolean ok;
  sbx_worker_exit exit;
  GError *error;
} waiter;

static void *run_wait(void *arg) {
  waiter *w = arg;
  w->exit = (sbx_worker_exit)SBX_WORKER_EXIT_INIT();
  w->ok =
      sbx_sandbox_wait(w->sandbox, w->pid, w->timeout_ms, &w->exit, &w->error);
  return NULL;
}

/* Whether thread tid sleeps in poll(2), as the kernel tells: a thread
 * alone in sbx_sandbox_wait polls the zygote's socket. */
static bool thread_is_waiting(pid_t tid) {
  char path[64], text[64] = "";
  snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  bool got = fgets(text, sizeof text, f) != NULL;
  fclose(f);
  long nr = got ? strtol(text, NULL, 10) : -1;
  return nr == __NR_poll || nr == __NR_ppoll;
}

typedef struct {
  waiter w;
  pid_t tid;
} traced_waiter;

static void *run_traced_wait(void *arg) {
  traced_waiter *t = arg;
  g_atomic_int_set(&t->tid, (pid_t)syscall(SYS_gettid));
  return run_wait(&t->w);
}

/* Starts a thread that waits (timeout_ms) for pid and returns once the
 * thread sleeps inside the wait. */
static void start_waiter(traced_waiter *t, pthread_t *thread, sbx_sandbox *s,
                         pid_t pid, int timeout_ms) {
  *t = (traced_waiter){
      .w = {.sandbox = s, .pid = pid, .timeout_ms = timeout_ms}};
  ck_assert_int_eq(pthread_create(thread, NULL, run_traced_wait, t), 0);
  while (!g_atomic_int_get(&t->tid) || !thread_is_waiting(t->tid))
    g_usleep(1000);
}

START_TEST(a_wait_without_timeout_on_one_thread_does_not_stall_spawns) {
  sbx_sandbox *s = start_with(entry_block_or_exit);
  int hold[2];
  ck_assert_int_eq(pipe(hold), 0);
  pid_t blocked = spawn_blocked(s, hold[0]);
  close(hold[0]);
  traced_waiter t;
  pthread_t thread;
  start_waiter(&t, &thread, s, blocked, -1);
  /* The waiter reads the zygote's socket for everyone meanwhile. */
  for (int i = 0; i < 20; i++) {
    char *m = NULL;
    pid_t pid = spawn_code(s, (unsigned char)(30 + i), &m);
    ck_assert_msg(pid > 0, "%s", m);
    m = check_exit(s, pid, 30 + i);
    ck_assert_msg(!m, "%s", m);
  }
  close(hold[1]); /* the blocked worker ends, and its waiter returns */
  pthread_join(thread, NULL);
  ck_assert_msg(t.w.ok, "%s", t.w.error ? t.w.error->message : "");
  ck_assert_int_eq(t.w.exit.pid, blocked);
  ck_assert_msg(t.w.exit.reason == SBX_EXIT_NORMAL && t.w.exit.exit_code == 7,
                "%s", t.w.exit.detail);
  sbx_sandbox_stop(s);
}
END_TEST

START_TEST(a_wait_timeout_fires_while_another_thread_waits_forever) {
  sbx_sandbox *s = start_with(entry_block_or_exit);
  int hold[2];
  ck_assert_int_eq(pipe(hold), 0);
  pid_t first = spawn_blocked(s, hold[0]);
  pid_t second = spawn_blocked(s, hold[0]);
  close(hold[0]);
  traced_waiter forever;
  pthread_t thread;
  start_waiter(&forever, &thread, s, first, -1);
  /* This thread's wait on a worker that does not end returns, timed out,
   * though the other thread holds the socket in its endless wait. */
  sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
  GError *error = NULL;
  ck_assert(!sbx_sandbox_wait(s, second, 200, &e, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_TIMED_OUT);
  g_clear_error(&error);
  ck_assert(!sbx_sandbox_wait(s, second, 0, &e, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_TIMED_OUT);
  g_clear_error(&error);
  /* Control: the same worker, once it can end, is reported to this call. */
  close(hold[1]);
  ck_assert_msg(sbx_sandbox_wait(s, second, -1, &e, &error), "%s",
                error ? error->message : "");
  ck_assert_msg(
      e.pid == second && e.reason == SBX_EXIT_NORMAL && e.exit_code == 7, "%s",
      e.detail);
  pthread_join(thread, NULL);
  ck_assert_msg(forever.w.ok, "%s",
                forever.w.error ? forever.w.error->message : "");
  ck_assert_int_eq(forever.w.exit.pid, first);
  sbx_sandbox_stop(s);
}
END_TEST

START_TEST(stop_on_one_thread_ends_a_wait_in_progress_on_another) {
  sbx_sandbox *s = start_with(entry_block_or_exit);
  int hold[2];
  ck_assert_int_eq(pipe(hold), 0);
  pid_t blocked = spawn_blocked(s, hold[0]);
  close(hold[0]);
  traced_waiter t;
  pthread_t thread;
  start_waiter(&t, &thread, s, blocked, -1);
  sbx_sandbox_stop(s); /* returns once the waiter has left the call */
  pthread_join(thread, NULL);
  ck_assert_msg(t.w.ok, "%s", t.w.error ? t.w.error->message : "");
  ck_assert_int_eq(t.w.exit.pid, blocked);
  ck_assert_msg(t.w.exit.reason == SBX_EXIT_ZYGOTE_DIED, "%s", t.w.exit.detail);
  ck_assert_int_eq(kill(blocked, 0), -1);
  close(hold[1]);
}
END_TEST

static Suite *threads_suite(void) {
  Suite *s = suite_create("api_threads");
  TCase *tc = tcase_create("threads");
  tcase_set_timeout(tc, 300);
  tcase_add_test(
      tc, four_threads_spawning_and_waiting_at_once_each_get_their_exits);
  tcase_add_test(tc,
                 a_wait_without_timeout_on_one_thread_does_not_stall_spawns);
  tcase_add_test(tc, a_wait_timeout_fires_while_another_thread_waits_forever);
  tcase_add_test(tc, stop_on_one_thread_ends_a_wait_in_progress_on_another);
  suite_add_tcase(s, tc);
  return s;
}

int main(int argc, char **argv) {
  sbx_main_hook(argc, argv);
  return api_run_suite(threads_suite());
}
