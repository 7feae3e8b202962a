/* A sandbox at scale: 4,096 workers alive at once (the zygote's table,
 * its descriptors and the broker's channels are bounded by the kernel,
 * not by a fixed table), and four host threads spawning and waiting at
 * once through 10,000 workers without a hang. Real workers of a real
 * zygote; a hang fails by Check's timeout. */
#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/tests/api/api_test_util.h"
#include "sbx/sbx.h"

#define ALIVE 4096
#define N_THREADS 4
#define PER_THREAD 2500
#define BATCH 20 /* divides PER_THREAD */

/* With fds 3 and 4: writes a byte to 3, then waits for 4 to close.
 * Without: exits with the payload's byte. */
static int entry(const sbx_worker_args *args) {
  if (args->n_fds < 5)
    return args->payload_len ? ((const unsigned char *)args->payload)[0] : 99;
  char c = 1;
  if (write(3, &c, 1) != 1)
    return 98;
  while (read(4, &c, 1) > 0) {
  }
  return 7;
}

static sbx_sandbox *start(void) {
  sbx_process_type t =
      SBX_PROCESS_TYPE_INIT(.name = "renderer", .entry = entry);
  sbx_sandbox_config c = SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  if (!sbx_sandbox_start(&c, &s, &error))
    ck_abort_msg("sbx_sandbox_start: %s", error->message);
  return s;
}

START_TEST(four_thousand_workers_are_alive_at_once) {
  sbx_sandbox *s = start();
  int report[2], release[2];
  ck_assert_int_eq(pipe2(report, O_CLOEXEC), 0);
  ck_assert_int_eq(pipe2(release, O_CLOEXEC), 0);
  fcntl(report[1], F_SETPIPE_SZ, 1 << 16);
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  int fds[] = {devnull, devnull, devnull, report[1], release[0]};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "renderer", .fds = fds, .n_fds = 5);
  for (int i = 0; i < ALIVE; i++) {
    pid_t pid;
    GError *error = NULL;
    if (!sbx_sandbox_spawn(s, &spawn, &pid, &error))
      ck_abort_msg("spawn %d of %d: %s", i + 1, ALIVE, error->message);
  }
  /* Every one reached its entry, and all are alive now. */
  int ran = 0;
  char buf[4096];
  while (ran < ALIVE) {
    ssize_t n = read(report[0], buf, sizeof buf);
    ck_assert_int_gt(n, 0);
    ran += (int)n;
  }
  ck_assert_int_eq(ran, ALIVE);
  close(release[1]);
  for (int i = 0; i < ALIVE; i++) {
    sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
    GError *error = NULL;
    if (!sbx_sandbox_wait(s, -1, 60000, &e, &error))
      ck_abort_msg("wait %d: %s", i, error->message);
    ck_assert_msg(e.reason == SBX_EXIT_NORMAL && e.exit_code == 7, "%s",
                  e.detail);
  }
  close(release[0]);
  close(report[0]);
  close(report[1]);
  close(devnull);
  sbx_sandbox_stop(s);
}
END_TEST

typedef struct {
  sbx_sandbox *s;
  int index;
  int done;
  char problem[256];
} runner;

/* PER_THREAD workers, BATCH at a time, each exiting with its own code,
 * each waited for by its pid and checked. */
static void *run_thread(void *arg) {
  runner *r = arg;
  for (int base = 0; base < PER_THREAD && !r->problem[0]; base += BATCH) {
    pid_t pids[BATCH];
    unsigned char codes[BATCH];
    for (int i = 0; i < BATCH; i++) {
      codes[i] = (unsigned char)((r->index * 31 + base + i) % 100);
      sbx_spawn_config spawn =
          SBX_SPAWN_CONFIG_INIT(.process_type = "renderer",
                                .payload = &codes[i], .payload_len = 1);
      GError *error = NULL;
      if (!sbx_sandbox_spawn(r->s, &spawn, &pids[i], &error)) {
        g_snprintf(r->problem, sizeof r->problem, "spawn: %s", error->message);
        g_error_free(error);
        return NULL;
      }
    }
    for (int i = 0; i < BATCH; i++) {
      sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
      GError *error = NULL;
      if (!sbx_sandbox_wait(r->s, pids[i], 60000, &e, &error)) {
        g_snprintf(r->problem, sizeof r->problem, "wait: %s", error->message);
        g_error_free(error);
        return NULL;
      }
      if (e.reason != SBX_EXIT_NORMAL || e.exit_code != codes[i]) {
        g_snprintf(r->problem, sizeof r->problem, "worker %d: %s (want %d)",
                   (int)pids[i], e.detail, codes[i]);
        return NULL;
      }
      r->done++;
    }
  }
  return NULL;
}

START_TEST(four_threads_run_ten_thousand_workers) {
  sbx_sandbox *s = start();
  pthread_t t[N_THREADS];
  runner r[N_THREADS];
  for (int i = 0; i < N_THREADS; i++) {
    r[i] = (runner){.s = s, .index = i};
    ck_assert_int_eq(pthread_create(&t[i], NULL, run_thread, &r[i]), 0);
  }
  int total = 0;
  for (int i = 0; i < N_THREADS; i++) {
    pthread_join(t[i], NULL);
    ck_assert_msg(!r[i].problem[0], "thread %d: %s", i, r[i].problem);
    total += r[i].done;
  }
  ck_assert_int_eq(total, N_THREADS * PER_THREAD);
  sbx_sandbox_stop(s);
}
END_TEST

int main(int argc, char **argv) {
  /* Fresh mode: the zygote is a new exec of this program. */
  sbx_main_hook(argc, argv);
  Suite *suite = suite_create("api_scale");
  TCase *tc = tcase_create("scale");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, four_thousand_workers_are_alive_at_once);
  tcase_add_test(tc, four_threads_run_ten_thousand_workers);
  suite_add_tcase(suite, tc);
  return api_run_suite(suite);
}
