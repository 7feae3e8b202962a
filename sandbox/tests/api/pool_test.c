/* The warm pool (sbx_process_type.pool, [worker] pool): workers forked
 * ahead with every layer on, each handed one spawn's job.
 *
 * Each claim is checked next to a cold type, where it holds by
 * construction: a pooled worker's status equals a cold one's field by
 * field, it sees its own payload and descriptors only, runs one job and
 * exits, the pool refills, pooled processes never reach sbx_sandbox_wait,
 * and they die with the sandbox. The zygote's children are counted from
 * /proc (their parent pid), so the test sees the pool itself, not what
 * the library says about it. This program calls sbx_main_hook, so its
 * sandboxes run in fresh mode unless a test asks for fork mode; the
 * tests that matter run in both.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/tests/api/api_test_util.h"
#include "sandbox/tests/api/pool_util.h"
#include "sbx/sbx.h"

#define POOL 3
#define WAIT_MS 20000
/* Bytes past its payload a worker reads, where another job could lie. */
#define TAIL 4096

/* What a worker reports about itself on descriptor 3. */
typedef struct {
  sbx_sandbox_status status;
  bool has_status;
  char payload[64];
  size_t payload_len;
  bool tail_clean; /* nothing but zeros after its payload */
  int open[32];    /* its open descriptors, in order */
  int n_open;
  int n_fds, broker_fd, report_fd;
  bool has_channel;
  pid_t pid; /* in its pid namespace */
} worker_report;

static int entry_report(const sbx_worker_args *args) {
  worker_report r;
  memset(&r, 0, sizeof r);
  if (args->status) {
    r.has_status = true;
    memcpy(&r.status, args->status, sizeof r.status);
  }
  r.payload_len = args->payload_len;
  memcpy(r.payload, args->payload,
         args->payload_len < sizeof r.payload ? args->payload_len
                                              : sizeof r.payload);
  r.tail_clean = true;
  const unsigned char *tail =
      (const unsigned char *)args->payload + args->payload_len;
  for (size_t i = 0; args->payload && i < TAIL; i++)
    r.tail_clean = r.tail_clean && tail[i] == 0;
  for (int fd = 0; fd < 64; fd++) {
    if (fcntl(fd, F_GETFD) >= 0 && r.n_open < 32)
      r.open[r.n_open++] = fd;
  }
  r.n_fds = args->n_fds;
  r.broker_fd = args->broker_fd;
  r.report_fd = args->report_fd;
  r.has_channel = args->channel != NULL;
  r.pid = getpid();
  return write(3, &r, sizeof r) == (ssize_t)sizeof r ? 0 : 90;
}

/* Waits for one byte on descriptor 4, then exits 7. */
static int entry_hold(const sbx_worker_args *args) {
  (void)args;
  char c;
  return read(4, &c, 1) == 1 ? 7 : 91;
}

static sbx_sandbox *start_typed(const char *profile, sbx_worker_entry entry,
                                unsigned pool, bool fork_mode,
                                const char *profile_dir, GError **error) {
  sbx_process_type t =
      SBX_PROCESS_TYPE_INIT(.name = "renderer", .profile = profile,
                            .entry = entry, .pool = pool);
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1,
                              .profile_dir = profile_dir,
                              .fork_mode = fork_mode);
  sbx_sandbox *s = NULL;
  if (!sbx_sandbox_start(&config, &s, error))
    return NULL;
  return s;
}

static sbx_sandbox *start(sbx_worker_entry entry, unsigned pool,
                          bool fork_mode) {
  GError *error = NULL;
  sbx_sandbox *s =
      start_typed("renderer", entry, pool, fork_mode, NULL, &error);
  if (!s)
    ck_abort_msg("sbx_sandbox_start: %s", error->message);
  return s;
}

static bool contains(const GArray *pids, pid_t pid) {
  for (guint i = 0; i < pids->len; i++) {
    if (g_array_index(pids, pid_t, i) == pid)
      return true;
  }
  return false;
}

typedef struct {
  const char *payload;
  bool channel;
  int extra_fd; /* a 5th descriptor, or -1 */
} job;

/* Spawns one worker with a pipe as descriptor 3 and returns what it
 * reported, after insisting that it exited 0. *pid gets its host pid. */
static worker_report run_job(sbx_sandbox *s, const job *j, pid_t *pid_out) {
  int p[2];
  ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
  int fds[] = {0, 1, 2, p[1], j->extra_fd};
  sbx_channel *channel = NULL;
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "renderer", .payload = j->payload,
                            .payload_len = j->payload ? strlen(j->payload) : 0,
                            .fds = fds, .n_fds = j->extra_fd >= 0 ? 5 : 4,
                            .channel = j->channel ? &channel : NULL);
  pid_t pid = -1;
  GError *error = NULL;
  if (!sbx_sandbox_spawn(s, &spawn, &pid, &error))
    ck_abort_msg("sbx_sandbox_spawn: %s", error->message);
  close(p[1]);
  worker_report r;
  api_read_all(p[0], &r, sizeof r);
  close(p[0]);
  sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
  if (!sbx_sandbox_wait(s, pid, WAIT_MS, &e, &error))
    ck_abort_msg("sbx_sandbox_wait: %s", error->message);
  ck_assert_msg(e.reason == SBX_EXIT_NORMAL && e.exit_code == 0, "%s",
                e.detail);
  sbx_channel_close(channel);
  if (pid_out)
    *pid_out = pid;
  return r;
}

static const job plain = {.payload = "page", .extra_fd = -1};

/* Every field but the pid, which no two processes share. */
static void assert_same_status(const sbx_sandbox_status *a,
                               const sbx_sandbox_status *b) {
  sbx_sandbox_status x = *a, y = *b;
  ck_assert_int_ne(x.pid, 0);
  ck_assert_int_ne(y.pid, 0);
  x.pid = y.pid = 0;
  char fa[2048], fb[2048];
  sbx_sandbox_status_format(&x, fa, sizeof fa);
  sbx_sandbox_status_format(&y, fb, sizeof fb);
  ck_assert_str_eq(fa, fb);
  ck_assert_uint_eq(x.size, y.size);
  ck_assert_str_eq(x.process_type, y.process_type);
  ck_assert_int_eq(x.uid, y.uid);
  ck_assert_int_eq(x.gid, y.gid);
  const sbx_layer_state xs[] = {x.user_ns,      x.pid_ns,     x.net_ns,
                                x.ipc_ns,       x.uts_ns,     x.mount_ns,
                                x.cgroup_ns,    x.empty_root, x.no_capabilities,
                                x.no_new_privs, x.undumpable, x.new_session,
                                x.seccomp,      x.broker,     x.landlock};
  const sbx_layer_state ys[] = {y.user_ns,      y.pid_ns,     y.net_ns,
                                y.ipc_ns,       y.uts_ns,     y.mount_ns,
                                y.cgroup_ns,    y.empty_root, y.no_capabilities,
                                y.no_new_privs, y.undumpable, y.new_session,
                                y.seccomp,      y.broker,     y.landlock};
  for (size_t i = 0; i < G_N_ELEMENTS(xs); i++)
    ck_assert_int_eq(xs[i], ys[i]);
  ck_assert_int_eq(x.seccomp_filters, y.seccomp_filters);
  ck_assert_uint_eq(x.n_seccomp_layers, y.n_seccomp_layers);
  for (unsigned i = 0; i < x.n_seccomp_layers; i++)
    ck_assert_str_eq(x.seccomp_layers[i], y.seccomp_layers[i]);
  ck_assert_int_eq(x.landlock_abi, y.landlock_abi);
  ck_assert_int_eq(x.open_fds, y.open_fds);
  ck_assert_int_eq(x.fully_sandboxed, y.fully_sandboxed);
}

static void pooled_status_equals_cold(bool fork_mode) {
  sbx_sandbox *cold = start(entry_report, 0, fork_mode);
  worker_report c = run_job(cold, &plain, NULL);
  /* Control: a cold type keeps no process forked ahead. */
  GArray *none = api_children_of(sbx_sandbox_zygote_pid(cold));
  ck_assert_uint_eq(none->len, 0);
  g_array_unref(none);
  sbx_sandbox_stop(cold);

  sbx_sandbox *warm = start(entry_report, POOL, fork_mode);
  GArray *pooled = api_await_zygote_children(warm, POOL);
  pid_t pid;
  worker_report w = run_job(warm, &plain, &pid);
  /* It was one of those forked ahead, not a fork for this spawn. */
  ck_assert_msg(contains(pooled, pid), "worker %d was not pooled", (int)pid);
  g_array_unref(pooled);
  sbx_sandbox_stop(warm);

  ck_assert(c.has_status && w.has_status);
  assert_same_status(&c.status, &w.status);
  /* The same descriptors at the same numbers. */
  ck_assert_int_eq(c.n_open, w.n_open);
  for (int i = 0; i < c.n_open; i++)
    ck_assert_int_eq(c.open[i], w.open[i]);
  ck_assert_int_eq(c.broker_fd, w.broker_fd);
  ck_assert_int_eq(c.report_fd, w.report_fd);
}

START_TEST(pooled_worker_status_equals_cold_worker_status_fresh) {
  pooled_status_equals_cold(false);
}
END_TEST

START_TEST(pooled_worker_status_equals_cold_worker_status_fork) {
  pooled_status_equals_cold(true);
}
END_TEST

/* Each spawn takes a pooled process, which runs that one job and exits;
 * the pool is whole again afterwards, with processes none of the jobs
 * ran in. */
static void pool_runs_each_job_once_and_refills(bool fork_mode) {
  sbx_sandbox *s = start(entry_report, POOL, fork_mode);
  GArray *before = api_await_zygote_children(s, POOL);
  pid_t pids[POOL + 2];
  for (int i = 0; i < POOL + 2; i++) {
    g_autofree char *payload = g_strdup_printf("job %d", i);
    job j = {.payload = payload, .extra_fd = -1};
    worker_report r = run_job(s, &j, &pids[i]);
    ck_assert_str_eq(r.payload, payload);
    for (int k = 0; k < i; k++)
      ck_assert_int_ne(pids[k], pids[i]); /* never reused */
  }
  /* The first spawn found the pool full: one of those forked ahead. */
  ck_assert(contains(before, pids[0]));
  g_array_unref(before);
  GArray *after = api_await_zygote_children(s, POOL);
  for (int i = 0; i < POOL + 2; i++) {
    ck_assert(!contains(after, pids[i])); /* each exited after its job */
    ck_assert_int_eq(kill(pids[i], 0), -1);
  }
  g_array_unref(after);
  sbx_sandbox_stop(s);
}

START_TEST(pooled_workers_run_one_job_each_and_the_pool_refills_fresh) {
  pool_runs_each_job_once_and_refills(false);
}
END_TEST

START_TEST(pooled_workers_run_one_job_each_and_the_pool_refills_fork) {
  pool_runs_each_job_once_and_refills(true);
}
END_TEST

/* A pooled worker sees its own payload and descriptors only: what a cold
 * worker of the same job sees, nothing of another job around its payload,
 * its message channel only when its spawn asked for one. */
static void sees_only_its_job(bool fork_mode) {
  int extra = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(extra, 0);
  char big[2048];
  memset(big, 'A', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  job first = {.payload = big, .channel = true, .extra_fd = extra};
  job second = {.payload = "b", .extra_fd = -1};

  sbx_sandbox *cold = start(entry_report, 0, fork_mode);
  worker_report c1 = run_job(cold, &first, NULL);
  worker_report c2 = run_job(cold, &second, NULL);
  sbx_sandbox_stop(cold);

  sbx_sandbox *warm = start(entry_report, POOL, fork_mode);
  g_array_unref(api_await_zygote_children(warm, POOL));
  worker_report w1 = run_job(warm, &first, NULL);
  worker_report w2 = run_job(warm, &second, NULL);
  sbx_sandbox_stop(warm);
  close(extra);

  const worker_report *cold_r[] = {&c1, &c2}, *warm_r[] = {&w1, &w2};
  for (int i = 0; i < 2; i++) {
    const worker_report *c = cold_r[i], *w = warm_r[i];
    ck_assert_uint_eq(w->payload_len, c->payload_len);
    ck_assert_mem_eq(w->payload, c->payload, sizeof w->payload);
    ck_assert(c->tail_clean);
    ck_assert_msg(w->tail_clean, "job %d: bytes of another job", i);
    ck_assert_int_eq(w->n_fds, c->n_fds);
    ck_assert_int_eq(w->has_channel, c->has_channel);
    ck_assert_int_eq(w->n_open, c->n_open);
    for (int k = 0; k < c->n_open; k++)
      ck_assert_int_eq(w->open[k], c->open[k]);
  }
  /* The second job had fewer descriptors and no channel: nothing of the
   * first. */
  ck_assert_int_eq(w1.n_fds, 5);
  ck_assert_int_eq(w2.n_fds, 4);
  ck_assert(w1.has_channel && !w2.has_channel);
  ck_assert_uint_eq(w2.payload_len, 1);
}

START_TEST(pooled_worker_sees_only_its_own_payload_and_descriptors_fresh) {
  sees_only_its_job(false);
}
END_TEST

START_TEST(pooled_worker_sees_only_its_own_payload_and_descriptors_fork) {
  sees_only_its_job(true);
}
END_TEST

/* Pooled processes are not workers of the host: sbx_sandbox_wait knows
 * none while only they exist, not even once one is killed; a spawned one
 * is reported as ever. */
START_TEST(pooled_exits_never_reach_wait) {
  sbx_sandbox *s = start(entry_hold, POOL, false);
  GArray *pooled = api_await_zygote_children(s, POOL);
  sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
  GError *error = NULL;
  ck_assert(!sbx_sandbox_wait(s, -1, 0, &e, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  g_clear_error(&error);
  /* One dies waiting: the zygote reaps it, the host hears nothing. */
  pid_t victim = g_array_index(pooled, pid_t, 0);
  ck_assert_int_eq(kill(victim, SIGKILL), 0);
  for (int i = 0; i < 500 && kill(victim, 0) == 0; i++)
    g_usleep(10000);
  ck_assert(!sbx_sandbox_wait(s, -1, 200, &e, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  g_clear_error(&error);
  ck_assert(!sbx_sandbox_wait(s, victim, 0, &e, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  g_clear_error(&error);
  g_array_unref(pooled);
  /* Control: a spawned worker's exit does arrive, and only it. */
  int release[2];
  ck_assert_int_eq(pipe2(release, O_CLOEXEC), 0);
  int fds[] = {0, 1, 2, 2, release[0]};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "renderer", .fds = fds, .n_fds = 5);
  pid_t pid;
  if (!sbx_sandbox_spawn(s, &spawn, &pid, &error))
    ck_abort_msg("spawn: %s", error->message);
  ck_assert_int_eq(write(release[1], "x", 1), 1);
  ck_assert(sbx_sandbox_wait(s, -1, WAIT_MS, &e, &error));
  ck_assert_int_eq(e.pid, pid);
  ck_assert_int_eq(e.reason, SBX_EXIT_NORMAL);
  ck_assert_int_eq(e.exit_code, 7);
  ck_assert(!sbx_sandbox_wait(s, -1, 200, &e, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  g_clear_error(&error);
  close(release[0]);
  close(release[1]);
  sbx_sandbox_stop(s);
}
END_TEST

/* sbx_sandbox_stop takes the pool down with the zygote. */
START_TEST(stop_takes_pooled_workers_down) {
  sbx_sandbox *s = start(entry_hold, POOL, false);
  GArray *pooled = api_await_zygote_children(s, POOL);
  /* Control: they are alive before the stop. */
  for (guint i = 0; i < pooled->len; i++)
    ck_assert_int_eq(kill(g_array_index(pooled, pid_t, i), 0), 0);
  sbx_sandbox_stop(s);
  for (guint i = 0; i < pooled->len; i++) {
    pid_t pid = g_array_index(pooled, pid_t, i);
    bool gone = false;
    for (int k = 0; k < 500 && !gone; k++) {
      g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int)pid);
      g_autofree char *text = NULL;
      const char *after;
      gone = !g_file_get_contents(path, &text, NULL, NULL) ||
             ((after = strrchr(text, ')')) && after[1] && after[2] == 'Z');
      if (!gone)
        g_usleep(10000);
    }
    ck_assert_msg(gone, "pooled worker %d outlived the sandbox", (int)pid);
  }
  g_array_unref(pooled);
}
END_TEST

/* A pooled worker takes its job with every layer on, so a type whose
 * policy refuses one of those calls cannot have a pool: start says which
 * layer and call. Control: the same type without a pool starts. */
START_TEST(pool_of_a_type_whose_policy_refuses_its_calls_is_refused) {
  g_autofree char *dir = g_dir_make_tmp("sbx-pool-XXXXXX", NULL);
  ck_assert_ptr_nonnull(dir);
  api_write_file(dir, "nodup.policy", "@denylist\ndup3: return EPERM\n");
  api_write_file(dir, "nodup.profile",
                 "[profile]\nrequire=seccomp;broker\nseccomp=renderer.policy;"
                 "nodup.policy\n"
                 "[broker]\nrules=\n[worker]\npool=2\n");
  GError *error = NULL;
  sbx_sandbox *s =
      start_typed("nodup.profile", entry_report, 0, false, dir, &error);
  ck_assert_ptr_null(s);
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  ck_assert_msg(
      strstr(error->message, "nodup.policy") && strstr(error->message, "dup3"),
      "%s", error->message);
  g_clear_error(&error);
  /* Control: the profile's pool is overridden by nothing, but without a
   * pool key the same policy starts and spawns. */
  api_write_file(dir, "nodup.profile",
                 "[profile]\nrequire=seccomp;broker\nseccomp=renderer.policy;"
                 "nodup.policy\n"
                 "[broker]\nrules=\n");
  s = start_typed("nodup.profile", entry_report, 0, false, dir, &error);
  ck_assert_msg(s != NULL, "%s", error ? error->message : "");
  sbx_sandbox_stop(s);
  g_autofree char *a = g_build_filename(dir, "nodup.policy", NULL);
  g_autofree char *b = g_build_filename(dir, "nodup.profile", NULL);
  unlink(a);
  unlink(b);
  rmdir(dir);
}
END_TEST

/* [worker] pool in a profile makes the pool; a bad value names the file
 * and key. */
START_TEST(profile_pool_key_makes_a_pool_and_bad_values_are_refused) {
  g_autofree char *dir = g_dir_make_tmp("sbx-pool-XXXXXX", NULL);
  ck_assert_ptr_nonnull(dir);
  api_write_file(dir, "pooled.profile",
                 "[profile]\nrequire=seccomp;broker\nseccomp=renderer.policy\n["
                 "broker]\nrules=\n"
                 "[worker]\npool=2\n");
  GError *error = NULL;
  sbx_sandbox *s =
      start_typed("pooled.profile", entry_report, 0, false, dir, &error);
  ck_assert_msg(s != NULL, "%s", error ? error->message : "");
  g_array_unref(api_await_zygote_children(s, 2));
  sbx_sandbox_stop(s);
  /* The type's own field wins over the profile's. */
  s = start_typed("pooled.profile", entry_report, 1, false, dir, &error);
  ck_assert_msg(s != NULL, "%s", error ? error->message : "");
  g_array_unref(api_await_zygote_children(s, 1));
  sbx_sandbox_stop(s);

  api_write_file(dir, "pooled.profile",
                 "[profile]\nrequire=seccomp;broker\nseccomp=renderer.policy\n["
                 "broker]\nrules=\n"
                 "[worker]\npool=65\n");
  s = start_typed("pooled.profile", entry_report, 0, false, dir, &error);
  ck_assert_ptr_null(s);
  ck_assert_msg(strstr(error->message, "pooled.profile") &&
                    strstr(error->message, "pool"),
                "%s", error->message);
  g_clear_error(&error);
  s = start_typed("renderer", entry_report, SBX_POOL_MAX + 1, false, NULL,
                  &error);
  ck_assert_ptr_null(s);
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  g_clear_error(&error);
  g_autofree char *p = g_build_filename(dir, "pooled.profile", NULL);
  unlink(p);
  rmdir(dir);
}
END_TEST

static Suite *pool_suite(void) {
  Suite *s = suite_create("api_pool");
  TCase *tc = tcase_create("pool");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, pooled_worker_status_equals_cold_worker_status_fresh);
  tcase_add_test(tc, pooled_worker_status_equals_cold_worker_status_fork);
  tcase_add_test(tc,
                 pooled_workers_run_one_job_each_and_the_pool_refills_fresh);
  tcase_add_test(tc, pooled_workers_run_one_job_each_and_the_pool_refills_fork);
  tcase_add_test(tc,
                 pooled_worker_sees_only_its_own_payload_and_descriptors_fresh);
  tcase_add_test(tc,
                 pooled_worker_sees_only_its_own_payload_and_descriptors_fork);
  tcase_add_test(tc, pooled_exits_never_reach_wait);
  tcase_add_test(tc, stop_takes_pooled_workers_down);
  tcase_add_test(tc, pool_of_a_type_whose_policy_refuses_its_calls_is_refused);
  tcase_add_test(tc, profile_pool_key_makes_a_pool_and_bad_values_are_refused);
  suite_add_tcase(s, tc);
  return s;
}

int main(int argc, char **argv) {
  sbx_main_hook(argc, argv);
  return api_run_suite(pool_suite());
}
