/* Races and load against a real broker: a RENAME_EXCHANGE race of 100k
 * swaps never yields the canary (S24), and 4 workers x 4 threads x 10k
 * opens each get exactly the file they asked for. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/broker/broker.h"
#include "sandbox/broker/client.h"
#include "sandbox/tests/broker/broker_test_util.h"

static sbx_broker *start(broker_test_tree *t, sbx_allowlist **list) {
  *list = broker_test_tree_allowlist(t, "worker");
  const sbx_allowlist *lists[] = {*list};
  sbx_broker_config cfg = {
      .allowlists = lists, .n_allowlists = 1, .audit_fd = -1};
  GError *error = NULL;
  sbx_broker *b = sbx_broker_start(&cfg, &error);
  ck_assert_msg(b != NULL, "%s", error ? error->message : "");
  return b;
}

#define SWAPS 100000

START_TEST(broker_rename_exchange_race_never_yields_the_canary) {
  broker_test_tree t;
  broker_test_tree_make(&t);
  char *outside = broker_test_path(&t, "outside");
  char *outside_f = broker_test_path(&t, "outside/f");
  char *d = broker_test_path(&t, "good/d");
  char *d_f = broker_test_path(&t, "good/d/f");
  char *s = broker_test_path(&t, "good/s");
  ck_assert_int_eq(mkdir(outside, 0755), 0);
  ck_assert_int_eq(mkdir(d, 0755), 0);
  broker_test_write(outside_f, "canary");
  broker_test_write(d_f, "inside");
  struct stat canary;
  ck_assert_int_eq(stat(outside_f, &canary), 0);
  ck_assert_int_eq(symlink(outside, s), 0);
  sbx_allowlist *list;
  sbx_broker *b = start(&t, &list);
  sbx_broker_client c;
  sbx_broker_client_init(&c, sbx_broker_connect(b, "worker", NULL));
  ck_assert_int_ge(c.channel, 0);

  pid_t swapper = fork();
  ck_assert_int_ge(swapper, 0);
  if (swapper == 0) {
    for (int i = 0; i < SWAPS; i++)
      if (renameat2(AT_FDCWD, d, AT_FDCWD, s, RENAME_EXCHANGE) != 0)
        _exit(1);
    _exit(0);
  }
  long brokered = 0, direct_hits = 0, granted = 0;
  int status = 0;
  for (;;) {
    int fd = sbx_broker_open(&c, d_f, O_RDONLY | O_CLOEXEC, 0);
    brokered++;
    if (fd >= 0) {
      granted++;
      ck_assert_msg(!broker_test_same_file(fd, &canary),
                    "the broker handed out the canary");
      close(fd);
    } else {
      ck_assert_msg(fd == -EACCES || fd == -ENOENT, "unexpected %d", fd);
    }
    /* Control: without the broker the same name does reach the canary. */
    int direct = open(d_f, O_RDONLY | O_CLOEXEC);
    if (direct >= 0) {
      direct_hits += broker_test_same_file(direct, &canary);
      close(direct);
    }
    if (waitpid(swapper, &status, WNOHANG) == swapper)
      break;
  }
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ck_assert_int_gt(granted, 0);
  ck_assert_msg(direct_hits > 0, "the race never happened (%ld opens)",
                brokered);
  close(c.channel);
  sbx_broker_stop(b, NULL, NULL);
  sbx_allowlist_free(list);
  g_free(outside);
  g_free(outside_f);
  g_free(d);
  g_free(d_f);
  g_free(s);
  broker_test_tree_free(&t);
}
END_TEST

#define WORKERS 4
#define THREADS 4
#define OPENS 10000

typedef struct {
  sbx_broker_client *client;
  char *path;
  struct stat want;
  long bad;
} job;

static void *opener(void *arg) {
  job *j = arg;
  for (int i = 0; i < OPENS; i++) {
    int fd = sbx_broker_open(j->client, j->path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0 || !broker_test_same_file(fd, &j->want))
      j->bad++;
    if (fd >= 0)
      close(fd);
  }
  return NULL;
}

START_TEST(broker_answers_every_concurrent_request_with_its_own_file) {
  broker_test_tree t;
  broker_test_tree_make(&t);
  sbx_allowlist *list;
  sbx_broker *b = start(&t, &list);
  sbx_broker_client clients[WORKERS];
  job jobs[WORKERS * THREADS];
  pthread_t th[WORKERS * THREADS];
  for (int w = 0; w < WORKERS; w++) {
    sbx_broker_client_init(&clients[w], sbx_broker_connect(b, "worker", NULL));
    ck_assert_int_ge(clients[w].channel, 0);
    for (int k = 0; k < THREADS; k++) {
      job *j = &jobs[w * THREADS + k];
      char name[32];
      g_snprintf(name, sizeof(name), "good/w%dt%d", w, k);
      j->client = &clients[w];
      j->path = broker_test_path(&t, name);
      broker_test_write(j->path, name);
      ck_assert_int_eq(stat(j->path, &j->want), 0);
      j->bad = 0;
    }
  }
  for (int i = 0; i < WORKERS * THREADS; i++)
    ck_assert_int_eq(pthread_create(&th[i], NULL, opener, &jobs[i]), 0);
  long bad = 0;
  for (int i = 0; i < WORKERS * THREADS; i++) {
    pthread_join(th[i], NULL);
    bad += jobs[i].bad;
    g_free(jobs[i].path);
  }
  ck_assert_int_eq(bad, 0);
  sbx_broker_stats st;
  ck_assert(sbx_broker_get_stats(b, &st, NULL));
  ck_assert_uint_eq(st.requests, WORKERS * THREADS * OPENS);
  ck_assert_uint_eq(st.denied, 0);
  for (int w = 0; w < WORKERS; w++)
    close(clients[w].channel);
  sbx_broker_stop(b, NULL, NULL);
  sbx_allowlist_free(list);
  broker_test_tree_free(&t);
}
END_TEST

int main(void) {
  Suite *s = suite_create("broker_stress");
  TCase *tc = tcase_create("stress");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, broker_rename_exchange_race_never_yields_the_canary);
  tcase_add_test(tc, broker_answers_every_concurrent_request_with_its_own_file);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
