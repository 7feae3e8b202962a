/* Per-worker grants (sbx_spawn_config.extra_rules) end to end: a type
 * whose rules make a jobs directory grantable but grant nothing in it,
 * workers spawned each with a rule for its own job directory, and what
 * each can reach through the real broker. Every refusal has its control:
 * the same access by the worker that holds the grant, or by the
 * unsandboxed test. Each test starts its own sandbox in Check's forked
 * child. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "sandbox/tests/api/api_test_util.h"
#include "sbx/sbx.h"

#define SECRET_NAME "secret.txt"
#define SECRET_TEXT "only for the job that owns this directory\n"
#define OUTPUT_NAME "out.txt"

/* jobs/ holds one directory per job; audit_log is outside it. */
static char jobs[128];
static char job_a[160], job_b[160];
static char audit_log[192];
static char scope_rule[192]; /* "grantable,create JOBS/" */

static void make_dirs(void) {
  g_strlcpy(jobs, "/tmp/sbx-grants-XXXXXX", sizeof jobs);
  ck_assert_ptr_nonnull(g_mkdtemp_full(jobs, 0755));
  g_snprintf(job_a, sizeof job_a, "%s/job-a", jobs);
  g_snprintf(job_b, sizeof job_b, "%s/job-b", jobs);
  ck_assert_int_eq(g_mkdir(job_a, 0755), 0);
  ck_assert_int_eq(g_mkdir(job_b, 0755), 0);
  api_write_file(job_a, SECRET_NAME, SECRET_TEXT);
  api_write_file(job_b, SECRET_NAME, SECRET_TEXT);
  g_snprintf(audit_log, sizeof audit_log, "%s.audit", jobs);
  g_snprintf(scope_rule, sizeof scope_rule, "grantable,create %s/", jobs);
}

static void remove_tree(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  if (d) {
    const char *name;
    while ((name = g_dir_read_name(d))) {
      g_autofree char *path = g_build_filename(dir, name, NULL);
      if (g_file_test(path, G_FILE_TEST_IS_DIR))
        remove_tree(path);
      else
        g_unlink(path);
    }
    g_dir_close(d);
  }
  g_rmdir(dir);
}

static void setup(void) {
  make_dirs();
}

static void teardown(void) {
  remove_tree(jobs);
  g_unlink(audit_log);
}

static int read_file(const char *path) {
  char buf[128];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  int err = 0;
  if (fd < 0)
    err = errno;
  else if (read(fd, buf, sizeof buf) < 0)
    err = errno;
  if (fd >= 0)
    close(fd);
  return err;
}

static void *read_in_thread(void *arg) {
  return GINT_TO_POINTER(read_file(arg));
}

/* The worker's payload: lines "r PATH" (read the file), "t PATH" (read it
 * on a new thread) or "w PATH" (create and write it). Replies on fd 3 with one
 * int per line: 0 or the errno of that step. Given a fifth descriptor, it waits
 * for a byte there first. */
static int entry_steps(const sbx_worker_args *args) {
  char go;
  if (args->n_fds > 4 && read(4, &go, 1) != 1)
    return 91;
  g_autofree char *text = g_strndup(args->payload, args->payload_len);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++) {
    if (strlen(*l) < 3)
      continue;
    const char *path = *l + 2;
    int err = 0;
    if (**l == 'r') {
      err = read_file(path);
    } else if (**l == 't') {
      pthread_t thread;
      void *result = NULL;
      err = pthread_create(&thread, NULL, read_in_thread, (void *)path);
      if (err == 0 && (err = pthread_join(thread, &result)) == 0)
        err = GPOINTER_TO_INT(result);
    } else {
      int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0)
        err = errno;
      else if (write(fd, "job output\n", 11) != 11)
        err = errno ? errno : EIO;
      if (fd >= 0)
        close(fd);
    }
    if (write(3, &err, sizeof err) != (ssize_t)sizeof err)
      return 90;
  }
  return 0;
}

static sbx_sandbox *start_jobs(void) {
  static const char *type_rules[2];
  type_rules[0] = scope_rule;
  type_rules[1] = NULL;
  static sbx_process_type t;
  t = (sbx_process_type)SBX_PROCESS_TYPE_INIT(.name = "job",
                                              .profile = "renderer",
                                              .entry = entry_steps,
                                              .extra_rules = type_rules);
  sbx_sandbox_config config = SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1,
                                                      .audit_log = audit_log);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  if (!sbx_sandbox_start(&config, &s, &error))
    ck_abort_msg("sbx_sandbox_start: %s", error->message);
  return s;
}

static char *path_in(const char *dir, const char *name) {
  return g_build_filename(dir, name, NULL);
}

/* One worker spawned with `rules` (may be NULL) to run `steps`; with a
 * gate, it starts them when a byte is written there. */
typedef struct {
  pid_t pid;
  int results; /* read end of its fd 3 */
} job;

static job spawn_steps(sbx_sandbox *s, const char *const *rules,
                       const char *steps, int gate) {
  int out[2];
  ck_assert_int_eq(pipe(out), 0);
  int fds[] = {0, 1, 2, out[1], gate};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "job", .payload = steps,
                            .payload_len = strlen(steps), .fds = fds,
                            .n_fds = gate >= 0 ? 5 : 4, .extra_rules = rules);
  job j = {.pid = -1, .results = out[0]};
  GError *error = NULL;
  if (!sbx_sandbox_spawn(s, &spawn, &j.pid, &error))
    ck_abort_msg("sbx_sandbox_spawn: %s", error->message);
  close(out[1]);
  return j;
}

/* Reads the job's outcomes (errs[i] for step i) and waits for it; a
 * worker that ends before it answered is reported with how it ended. */
static void finish_steps(sbx_sandbox *s, job j, int *errs, size_t n_errs) {
  size_t want = n_errs * sizeof *errs, got = 0;
  while (got < want) {
    ssize_t n = read(j.results, (char *)errs + got, want - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  close(j.results);
  sbx_worker_exit exit = SBX_WORKER_EXIT_INIT();
  GError *error = NULL;
  if (!sbx_sandbox_wait(s, j.pid, 20000, &exit, &error))
    ck_abort_msg("sbx_sandbox_wait: %s", error->message);
  ck_assert_int_eq(exit.pid, j.pid);
  ck_assert_msg(
      got == want && exit.reason == SBX_EXIT_NORMAL && exit.exit_code == 0,
      "worker %d answered %zu of %zu bytes and ended with reason "
      "%d code %d: %s",
      (int)j.pid, got, want, exit.reason, exit.exit_code, exit.detail);
}

static pid_t run_steps(sbx_sandbox *s, const char *const *rules,
                       const char *steps, int *errs, size_t n_errs) {
  job j = spawn_steps(s, rules, steps, -1);
  finish_steps(s, j, errs, n_errs);
  return j.pid;
}

/* "create DIR/" in static storage, as a NULL-terminated list. */
static const char *const *create_rule(const char *dir, char *buf, size_t len,
                                      const char *list[2]) {
  g_snprintf(buf, len, "create %s/", dir);
  list[0] = buf;
  list[1] = NULL;
  return list;
}

static void assert_unsandboxed_reads(const char *dir) {
  g_autofree char *secret = path_in(dir, SECRET_NAME);
  g_autofree char *text = NULL;
  ck_assert_msg(g_file_get_contents(secret, &text, NULL, NULL),
                "the test itself cannot read %s", secret);
  ck_assert_str_eq(text, SECRET_TEXT);
}

START_TEST(workers_of_one_type_reach_only_their_own_job_directory) {
  assert_unsandboxed_reads(job_a);
  assert_unsandboxed_reads(job_b);
  sbx_sandbox *s = start_jobs();
  g_autofree char *a_secret = path_in(job_a, SECRET_NAME);
  g_autofree char *b_secret = path_in(job_b, SECRET_NAME);
  g_autofree char *a_out = path_in(job_a, OUTPUT_NAME);
  g_autofree char *b_out = path_in(job_b, OUTPUT_NAME);
  g_autofree char *steps_a = g_strdup_printf("r %s\nw %s\nr %s\nw %s\n",
                                             a_secret, a_out, b_secret, b_out);
  g_autofree char *steps_b = g_strdup_printf("r %s\nw %s\nr %s\nw %s\n",
                                             b_secret, b_out, a_secret, a_out);
  char rule_a[192], rule_b[192];
  const char *list_a[2], *list_b[2];
  int errs_a[4], errs_b[4];

  /* Both run at once: each grant is live while the other's worker runs. */
  int gate[2];
  ck_assert_int_eq(pipe(gate), 0);
  job a = spawn_steps(s, create_rule(job_a, rule_a, sizeof rule_a, list_a),
                      steps_a, gate[0]);
  job b = spawn_steps(s, create_rule(job_b, rule_b, sizeof rule_b, list_b),
                      steps_b, gate[0]);
  close(gate[0]);
  ck_assert_int_eq(write(gate[1], "ab", 2), 2);
  close(gate[1]);
  finish_steps(s, a, errs_a, 4);
  finish_steps(s, b, errs_b, 4);
  ck_assert_msg(errs_a[0] == 0, "worker A reading its own secret: %s",
                g_strerror(errs_a[0]));
  ck_assert_msg(errs_a[1] == 0, "worker A writing its own output: %s",
                g_strerror(errs_a[1]));
  ck_assert_msg(errs_b[0] == 0, "worker B reading its own secret: %s",
                g_strerror(errs_b[0]));
  ck_assert_msg(errs_b[1] == 0, "worker B writing its own output: %s",
                g_strerror(errs_b[1]));
  ck_assert_int_eq(errs_a[2], EACCES); /* B's secret */
  ck_assert_int_eq(errs_a[3], EACCES); /* B's output */
  ck_assert_int_eq(errs_b[2], EACCES); /* A's secret */
  ck_assert_int_eq(errs_b[3], EACCES); /* A's output */
  g_autofree char *a_text = NULL, *b_text = NULL;
  ck_assert(g_file_get_contents(a_out, &a_text, NULL, NULL));
  ck_assert(g_file_get_contents(b_out, &b_text, NULL, NULL));
  ck_assert_str_eq(a_text, "job output\n");
  ck_assert_str_eq(b_text, "job output\n");

  /* A worker with no rules of its own reaches neither: the grantable
   * rule grants nothing by itself. */
  g_autofree char *jobs_file = path_in(jobs, "top.txt");
  g_autofree char *steps_c =
      g_strdup_printf("r %s\nw %s\nr %s\nw %s\nw %s\n", a_secret, a_out,
                      b_secret, b_out, jobs_file);
  int errs_c[5];
  run_steps(s, NULL, steps_c, errs_c, 5);
  for (int i = 0; i < 5; i++)
    ck_assert_msg(errs_c[i] == EACCES,
                  "step %d of the worker without "
                  "grants: %s",
                  i, g_strerror(errs_c[i]));
  ck_assert(!g_file_test(jobs_file, G_FILE_TEST_EXISTS));
  sbx_sandbox_stop(s);
}
END_TEST

START_TEST(a_grant_is_gone_when_its_worker_exits) {
  sbx_sandbox *s = start_jobs();
  g_autofree char *a_secret = path_in(job_a, SECRET_NAME);
  g_autofree char *a_out = path_in(job_a, OUTPUT_NAME);
  g_autofree char *steps = g_strdup_printf("r %s\nw %s\n", a_secret, a_out);
  char rule[192];
  const char *list[2];
  int errs[2];
  run_steps(s, create_rule(job_a, rule, sizeof rule, list), steps, errs, 2);
  ck_assert_int_eq(errs[0], 0);
  ck_assert_int_eq(errs[1], 0);
  ck_assert_int_eq(g_unlink(a_out), 0);

  /* The same steps in a new worker without the rule. */
  run_steps(s, NULL, steps, errs, 2);
  ck_assert_int_eq(errs[0], EACCES);
  ck_assert_int_eq(errs[1], EACCES);
  ck_assert(!g_file_test(a_out, G_FILE_TEST_EXISTS));

  /* And one with the rule again: the grant works each time it is given. */
  run_steps(s, list, steps, errs, 2);
  ck_assert_int_eq(errs[0], 0);
  ck_assert_int_eq(errs[1], 0);
  sbx_sandbox_stop(s);
}
END_TEST

/* The zygote has no worker: none running, none ended and not waited for. */
static void assert_no_worker(sbx_sandbox *s) {
  sbx_worker_exit exit = SBX_WORKER_EXIT_INIT();
  GError *error = NULL;
  ck_assert(!sbx_sandbox_wait(s, -1, 0, &exit, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  ck_assert_msg(strstr(error->message, "no worker is running"), "%s",
                error->message);
  g_error_free(error);
}

/* The spawn fails with SBX_ERROR_INVALID and a message that names the
 * rule. */
static void assert_spawn_refused(sbx_sandbox *s, const char *rule,
                                 const char *also) {
  const char *rules[] = {rule, NULL};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "job", .payload = "",
                            .extra_rules = rules);
  pid_t pid = 1;
  GError *error = NULL;
  ck_assert(!sbx_sandbox_spawn(s, &spawn, &pid, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  ck_assert_int_eq(pid, -1);
  ck_assert_msg(strstr(error->message, rule), "%s does not name %s",
                error->message, rule);
  ck_assert_msg(strstr(error->message, also), "%s does not say %s",
                error->message, also);
  g_error_free(error);
}

START_TEST(a_bad_worker_rule_fails_the_spawn_naming_it) {
  sbx_sandbox *s = start_jobs();
  g_autofree char *relative = g_strdup("create job-a/");
  g_autofree char *unknown = g_strdup_printf("publish %s/", job_a);
  g_autofree char *outside = g_strdup("create /etc/");
  g_autofree char *wider = g_strdup_printf("create %s/../", job_a);
  g_autofree char *scope = g_strdup_printf("grantable,create %s/", job_a);
  g_autofree char *no_path = g_strdup("create");
  assert_spawn_refused(s, relative, "not an absolute");
  assert_spawn_refused(s, unknown, "unknown permission kind 'publish'");
  assert_spawn_refused(s, outside, "no grantable rule");
  assert_spawn_refused(s, wider, "normalised");
  assert_spawn_refused(s, scope, "cannot be grantable");
  assert_spawn_refused(s, no_path, "KIND PATH");

  /* The second rule of a list is the one named. */
  char good[192];
  const char *unused[2];
  create_rule(job_a, good, sizeof good, unused);
  const char *two[] = {good, outside, NULL};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "job", .extra_rules = two);
  pid_t pid = 1;
  GError *error = NULL;
  ck_assert(!sbx_sandbox_spawn(s, &spawn, &pid, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  ck_assert_msg(strstr(error->message, "extra_rules[1] \"create /etc/\""), "%s",
                error->message);
  g_clear_error(&error);

  /* Nothing was spawned: the zygote has no worker, running or ended. The
   * control: a good rule spawns one, and it is the only one reported. */
  assert_no_worker(s);
  g_autofree char *a_secret = path_in(job_a, SECRET_NAME);
  g_autofree char *steps = g_strdup_printf("r %s\n", a_secret);
  int err = -1;
  pid_t good_pid = run_steps(s, unused, steps, &err, 1);
  ck_assert_int_gt(good_pid, 0);
  ck_assert_int_eq(err, 0);
  assert_no_worker(s);
  sbx_sandbox_stop(s);
}
END_TEST

START_TEST(a_rule_wider_than_the_grantable_kinds_is_refused) {
  /* grantable,read: a create rule below it is refused; a read rule works. */
  static char read_scope[192];
  g_snprintf(read_scope, sizeof read_scope, "grantable,read %s/", jobs);
  g_strlcpy(scope_rule, read_scope, sizeof scope_rule);
  sbx_sandbox *s = start_jobs();
  g_autofree char *create = g_strdup_printf("create %s/", job_a);
  assert_spawn_refused(s, create, "no grantable rule");
  g_autofree char *read = g_strdup_printf("read %s/", job_a);
  const char *rules[] = {read, NULL};
  g_autofree char *a_secret = path_in(job_a, SECRET_NAME);
  g_autofree char *a_out = path_in(job_a, OUTPUT_NAME);
  g_autofree char *steps = g_strdup_printf("r %s\nw %s\n", a_secret, a_out);
  int errs[2];
  run_steps(s, rules, steps, errs, 2);
  ck_assert_int_eq(errs[0], 0);
  ck_assert_int_eq(errs[1], EACCES);
  sbx_sandbox_stop(s);
}
END_TEST

START_TEST(denials_of_a_worker_with_grants_name_its_pid) {
  sbx_sandbox *s = start_jobs();
  g_autofree char *a_secret = path_in(job_a, SECRET_NAME);
  g_autofree char *b_secret = path_in(job_b, SECRET_NAME);
  g_autofree char *steps = g_strdup_printf("r %s\nr %s\n", a_secret, b_secret);
  char rule[192];
  const char *list[2];
  int errs[2];
  pid_t pid =
      run_steps(s, create_rule(job_a, rule, sizeof rule, list), steps, errs, 2);
  ck_assert_int_eq(errs[0], 0);
  ck_assert_int_eq(errs[1], EACCES);
  sbx_sandbox_stop(s); /* the broker has written every line */
  g_autofree char *log = NULL;
  ck_assert_msg(g_file_get_contents(audit_log, &log, NULL, NULL),
                "no audit log at %s", audit_log);
  g_autofree char *denied = g_strdup_printf(
      "sbx: denied op=open path=\"%s\" flags=O_RDONLY|O_CLOEXEC type=job "
      "pid=%d ",
      b_secret, (int)pid);
  ck_assert_msg(strstr(log, denied), "%s not in the audit log:\n%s", denied,
                log);
  /* The granted read is not a denial. */
  g_autofree char *granted =
      g_strdup_printf("sbx: denied op=open path=\"%s\"", a_secret);
  ck_assert_msg(!strstr(log, granted), "%s in the audit log:\n%s", granted,
                log);
}
END_TEST

/* The grant holds on every thread of the worker, and only there. ASan's
 * thread start asks for the thread's attributes, which the renderer policy
 * refuses (sched_getaffinity): not built with ASan. */
#if !defined(__SANITIZE_ADDRESS__)
START_TEST(a_grant_holds_on_the_workers_other_threads) {
  sbx_sandbox *s = start_jobs();
  g_autofree char *a_secret = path_in(job_a, SECRET_NAME);
  g_autofree char *b_secret = path_in(job_b, SECRET_NAME);
  g_autofree char *steps = g_strdup_printf("t %s\nt %s\n", a_secret, b_secret);
  char rule[192];
  const char *list[2];
  int errs[2];
  run_steps(s, create_rule(job_a, rule, sizeof rule, list), steps, errs, 2);
  ck_assert_msg(errs[0] == 0, "reading its own secret on a thread: %s",
                g_strerror(errs[0]));
  ck_assert_int_eq(errs[1], EACCES);
  sbx_sandbox_stop(s);
}
END_TEST
#endif

#define SPAWN_THREADS 4
#define SPAWNS_PER_THREAD 3

typedef struct {
  sbx_sandbox *s;
  int index;
  char dir[160];
  char failure[256]; /* empty when every worker saw what it should */
} spawner;

/* Spawns workers one after another, each with a grant for this thread's
 * directory, each reading its own secret and the next thread's. */
static void *spawn_loop(void *arg) {
  spawner *sp = arg;
  char rule[192];
  g_snprintf(rule, sizeof rule, "read %s/", sp->dir);
  const char *rules[] = {rule, NULL};
  g_autofree char *own = path_in(sp->dir, SECRET_NAME);
  g_autofree char *next_dir =
      g_strdup_printf("%s/thread-%d", jobs, (sp->index + 1) % SPAWN_THREADS);
  g_autofree char *other = path_in(next_dir, SECRET_NAME);
  g_autofree char *steps = g_strdup_printf("r %s\nr %s\n", own, other);
  for (int i = 0; i < SPAWNS_PER_THREAD && !sp->failure[0]; i++) {
    int out[2];
    if (pipe(out) != 0) {
      g_snprintf(sp->failure, sizeof sp->failure, "pipe: %s",
                 g_strerror(errno));
      break;
    }
    int fds[] = {0, 1, 2, out[1]};
    sbx_spawn_config spawn =
        SBX_SPAWN_CONFIG_INIT(.process_type = "job", .payload = steps,
                              .payload_len = strlen(steps), .fds = fds,
                              .n_fds = 4, .extra_rules = rules);
    pid_t pid = -1;
    GError *error = NULL;
    gboolean ok = sbx_sandbox_spawn(sp->s, &spawn, &pid, &error);
    close(out[1]);
    int errs[2] = {-1, -1};
    size_t got = 0;
    while (ok && got < sizeof errs) {
      ssize_t n = read(out[0], (char *)errs + got, sizeof errs - got);
      if (n <= 0)
        break;
      got += (size_t)n;
    }
    close(out[0]);
    sbx_worker_exit exit = SBX_WORKER_EXIT_INIT();
    if (!ok || !sbx_sandbox_wait(sp->s, pid, 20000, &exit, &error)) {
      g_snprintf(sp->failure, sizeof sp->failure, "thread %d: %s", sp->index,
                 error->message);
      g_error_free(error);
    } else if (errs[0] != 0 || errs[1] != EACCES) {
      g_snprintf(sp->failure, sizeof sp->failure,
                 "thread %d, worker %d: own secret %s, the next thread's %s",
                 sp->index, (int)pid, g_strerror(errs[0]), g_strerror(errs[1]));
    }
  }
  return NULL;
}

START_TEST(workers_spawned_from_several_threads_keep_their_own_grants) {
  sbx_sandbox *s = start_jobs();
  spawner sp[SPAWN_THREADS];
  for (int i = 0; i < SPAWN_THREADS; i++) {
    sp[i] = (spawner){.s = s, .index = i};
    g_snprintf(sp[i].dir, sizeof sp[i].dir, "%s/thread-%d", jobs, i);
    ck_assert_int_eq(g_mkdir(sp[i].dir, 0755), 0);
    api_write_file(sp[i].dir, SECRET_NAME, SECRET_TEXT);
    assert_unsandboxed_reads(sp[i].dir);
  }
  pthread_t threads[SPAWN_THREADS];
  for (int i = 0; i < SPAWN_THREADS; i++)
    ck_assert_int_eq(pthread_create(&threads[i], NULL, spawn_loop, &sp[i]), 0);
  for (int i = 0; i < SPAWN_THREADS; i++)
    pthread_join(threads[i], NULL);
  for (int i = 0; i < SPAWN_THREADS; i++)
    ck_assert_msg(!sp[i].failure[0], "%s", sp[i].failure);
  sbx_sandbox_stop(s);
}
END_TEST

static Suite *grants_suite(void) {
  Suite *suite = suite_create("api_grants");
  TCase *tc = tcase_create("grants");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, workers_of_one_type_reach_only_their_own_job_directory);
  tcase_add_test(tc, a_grant_is_gone_when_its_worker_exits);
  tcase_add_test(tc, a_bad_worker_rule_fails_the_spawn_naming_it);
  tcase_add_test(tc, a_rule_wider_than_the_grantable_kinds_is_refused);
  tcase_add_test(tc, denials_of_a_worker_with_grants_name_its_pid);
#if !defined(__SANITIZE_ADDRESS__)
  tcase_add_test(tc, a_grant_holds_on_the_workers_other_threads);
#endif
  tcase_add_test(tc,
                 workers_spawned_from_several_threads_keep_their_own_grants);
  suite_add_tcase(suite, tc);
  return suite;
}

int main(int argc, char **argv) {
  sbx_main_hook(argc, argv);
  return api_run_suite(grants_suite());
}
