/* Learning mode (sbx_sandbox_config.learn_dir, SBX_LEARN_DIR): a worker of
 * the utility profile reads a file no rule names and calls fsync and
 * syncfs, which its policy answers with EPERM. Without learning all three
 * fail; learning lets them through and writes a profile and a policy; a
 * second run under those files, without learning, succeeds, while a file
 * and a call that were never asked for stay refused. The unsandboxed
 * control: the same steps in the test itself. Each test starts its
 * sandboxes in Check's forked child. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "sandbox/tests/api/api_test_util.h"
#include "sbx/sbx.h"

static char dir[128];       /* the files the worker reads */
static char learn_dir[160]; /* where learning writes */
static char data_file[192];
static char canary_file[192];
static char audit_log[192];

static void setup(void) {
  g_strlcpy(dir, "/tmp/sbx-learn-XXXXXX", sizeof dir);
  ck_assert_ptr_nonnull(g_mkdtemp_full(dir, 0755));
  g_snprintf(learn_dir, sizeof learn_dir, "%s/learned", dir);
  g_snprintf(data_file, sizeof data_file, "%s/data", dir);
  g_snprintf(canary_file, sizeof canary_file, "%s/canary", dir);
  g_snprintf(audit_log, sizeof audit_log, "%s/audit.log", dir);
  api_write_file(dir, "data", "needed by the worker\n");
  api_write_file(dir, "canary", "never asked for\n");
}

static void remove_tree(const char *path) {
  GDir *d = g_dir_open(path, 0, NULL);
  if (d) {
    const char *name;
    while ((name = g_dir_read_name(d))) {
      g_autofree char *p = g_build_filename(path, name, NULL);
      if (g_file_test(p, G_FILE_TEST_IS_DIR))
        remove_tree(p);
      else
        g_unlink(p);
    }
    g_dir_close(d);
  }
  g_rmdir(path);
}

static void teardown(void) {
  remove_tree(dir);
}

enum {
  STEP_READ,
  STEP_FSYNC,
  STEP_SYNCFS,
  STEP_PIPE_SIZE, /* fcntl F_GETPIPE_SZ: a reviewed argument */
  STEP_CANARY,
  STEP_SYNC,
  STEP_SET_PIPE_SIZE, /* fcntl F_SETPIPE_SZ: the same call, another value */
  N_STEPS
};

/* The payload: "DATA\nCANARY\nSYNC" (SYNC "1": call sync, else skip it).
 * fd 3 receives the errno of each step. */
static int entry_steps(const sbx_worker_args *args) {
  g_autofree char *text = g_strndup(args->payload, args->payload_len);
  g_auto(GStrv) paths = g_strsplit(text, "\n", 3);
  if (g_strv_length(paths) != 3)
    return 91;
  int out[N_STEPS];
  int fd = open(paths[0], O_RDONLY | O_CLOEXEC);
  out[STEP_READ] = fd >= 0 ? 0 : errno;
  int target = fd >= 0 ? fd : 1;
  out[STEP_FSYNC] = fsync(target) == 0 ? 0 : errno;
  out[STEP_SYNCFS] = syncfs(target) == 0 ? 0 : errno;
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0)
    return 92;
  out[STEP_PIPE_SIZE] = fcntl(p[0], F_GETPIPE_SZ) > 0 ? 0 : errno;
  int canary = open(paths[1], O_RDONLY | O_CLOEXEC);
  out[STEP_CANARY] = canary >= 0 ? 0 : errno;
  out[STEP_SET_PIPE_SIZE] = strcmp(paths[2], "1") != 0             ? -1
                            : fcntl(p[0], F_SETPIPE_SZ, 8192) >= 0 ? 0
                                                                   : errno;
  out[STEP_SYNC] = strcmp(paths[2], "1") != 0 ? -1
                   : syscall(SYS_sync) == 0   ? 0
                                              : errno;
  return write(3, out, sizeof out) == (ssize_t)sizeof out ? 0 : 90;
}

/* One sandbox, one worker, its steps. learn: learning on; profile: the
 * type's profile; others: also read the canary and call sync, which the
 * learning run never does. */
static void run(const char *profile, const char *learn, bool others,
                int out[N_STEPS]) {
  sbx_process_type t =
      SBX_PROCESS_TYPE_INIT(.name = "learner", .profile = profile,
                            .entry = entry_steps);
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1, .audit_log = audit_log,
                              .learn_dir = learn);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  if (!sbx_sandbox_start(&config, &s, &error))
    ck_abort_msg("sbx_sandbox_start: %s", error->message);
  g_autofree char *payload =
      g_strdup_printf("%s\n%s\n%s", data_file, others ? canary_file : data_file,
                      others ? "1" : "0");
  int p[2];
  ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  int fds[4] = {devnull, devnull, devnull, p[1]};
  sbx_spawn_config sc =
      SBX_SPAWN_CONFIG_INIT(.process_type = "learner", .payload = payload,
                            .payload_len = strlen(payload), .fds = fds,
                            .n_fds = 4);
  pid_t pid = 0;
  if (!sbx_sandbox_spawn(s, &sc, &pid, &error))
    ck_abort_msg("spawn: %s", error->message);
  close(p[1]);
  close(devnull);
  ck_assert_int_eq(read(p[0], out, N_STEPS * sizeof *out),
                   (ssize_t)(N_STEPS * sizeof *out));
  close(p[0]);
  sbx_worker_exit exit = SBX_WORKER_EXIT_INIT();
  if (!sbx_sandbox_wait(s, pid, 10000, &exit, &error))
    ck_abort_msg("wait: %s", error->message);
  ck_assert_int_eq(exit.reason, SBX_EXIT_NORMAL);
  sbx_sandbox_stop(s);
}

static void unsandboxed_control(void) {
  int fd = open(data_file, O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(fsync(fd), 0);
  ck_assert_int_eq(syncfs(fd), 0);
  close(fd);
  int p[2];
  ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
  ck_assert_int_gt(fcntl(p[0], F_GETPIPE_SZ), 0);
  ck_assert_int_ge(fcntl(p[0], F_SETPIPE_SZ, 8192), 0);
  close(p[0]);
  close(p[1]);
  fd = open(canary_file, O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  close(fd);
}

static char *learned(const char *suffix) {
  return g_strdup_printf("%s/learner.learned.%s", learn_dir, suffix);
}

START_TEST(learning_writes_a_profile_that_works_on_the_next_run) {
  unsandboxed_control();
  int out[N_STEPS];
  /* Without learning the utility profile refuses all three. */
  run("utility", NULL, false, out);
  ck_assert_int_eq(out[STEP_READ], EACCES);
  ck_assert_int_eq(out[STEP_FSYNC], EPERM);
  ck_assert_int_eq(out[STEP_SYNCFS], EPERM);
  ck_assert_int_eq(out[STEP_PIPE_SIZE], EPERM);
  g_autofree char *profile = learned("profile");
  g_autofree char *policy = learned("policy");
  ck_assert(!g_file_test(profile, G_FILE_TEST_EXISTS));

  /* Learning lets them through and writes the files. */
  run("utility", learn_dir, false, out);
  ck_assert_int_eq(out[STEP_READ], 0);
  ck_assert_int_eq(out[STEP_FSYNC], 0);
  ck_assert_int_eq(out[STEP_SYNCFS], 0);
  ck_assert_int_eq(out[STEP_PIPE_SIZE], 0);
  ck_assert(g_file_test(profile, G_FILE_TEST_IS_REGULAR));
  ck_assert(g_file_test(policy, G_FILE_TEST_IS_REGULAR));
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(profile, &text, NULL, NULL));
  g_autofree char *rule = g_strdup_printf("read %s", data_file);
  ck_assert_msg(strstr(text, rule), "%s", text);
  g_free(g_steal_pointer(&text));
  ck_assert(g_file_get_contents(policy, &text, NULL, NULL));
  ck_assert_msg(strstr(text, "\nfsync: allow  # learned; was: return 1"), "%s",
                text);
  ck_assert_msg(strstr(text, "\nsyncfs: allow  # learned"), "%s", text);
  /* fcntl is allowed for the command it was seen with, not for all. */
  ck_assert_msg(strstr(text,
                       "|| arg1 == F_GETPIPE_SZ; return 1  # learned "
                       "(arg1 only ever F_GETPIPE_SZ); was: "),
                "%s", text);

  /* The next run, without learning, under the learned profile: what was
   * learned works, what was never asked for is still refused. */
  run(profile, NULL, true, out);
  ck_assert_int_eq(out[STEP_READ], 0);
  ck_assert_int_eq(out[STEP_FSYNC], 0);
  ck_assert_int_eq(out[STEP_SYNCFS], 0);
  ck_assert_int_eq(out[STEP_PIPE_SIZE], 0);
  ck_assert_int_eq(out[STEP_CANARY], EACCES);
  ck_assert_int_eq(out[STEP_SYNC], EPERM);
  ck_assert_int_eq(out[STEP_SET_PIPE_SIZE], EPERM);
}
END_TEST

/* SBX_LEARN_DIR turns it on for a host that does not ask. */
START_TEST(the_environment_turns_learning_on) {
  g_setenv("SBX_LEARN_DIR", learn_dir, TRUE);
  int out[N_STEPS];
  run("utility", NULL, false, out);
  g_unsetenv("SBX_LEARN_DIR");
  ck_assert_int_eq(out[STEP_FSYNC], 0);
  g_autofree char *profile = learned("profile");
  ck_assert(g_file_test(profile, G_FILE_TEST_IS_REGULAR));
}
END_TEST

int main(int argc, char **argv) {
  /* Fresh mode: the zygote is a new exec of this program. */
  sbx_main_hook(argc, argv);
  Suite *suite = suite_create("api_learn");
  TCase *tc = tcase_create("learn");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, learning_writes_a_profile_that_works_on_the_next_run);
  tcase_add_test(tc, the_environment_turns_learning_on);
  suite_add_tcase(suite, tc);
  SRunner *runner = srunner_create(suite);
  srunner_run_all(runner, CK_NORMAL);
  int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
