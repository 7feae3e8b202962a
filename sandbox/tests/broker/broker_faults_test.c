/* The broker process under its own sandbox and under pressure: its seccomp
 * policy is loaded after Landlock and every command still works (with the
 * audit log on); hostile numeric fields (B5); descriptor exhaustion (F4);
 * floods and clients that never read (B7); magic links and /proc/self
 * under a /proc rule (S26). Each refusal has its positive control. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/broker/broker.h"
#include "sandbox/broker/broker_sandbox.h"
#include "sandbox/broker/client.h"
#include "sandbox/broker/protocol.h"
#include "sandbox/tests/broker/broker_test_util.h"

typedef struct {
  broker_test_tree t;
  sbx_allowlist *list;
  sbx_broker *b;
  int audit_fd;
  char *audit_path;
} fixture;

static void start_with(fixture *f, sbx_broker_config *cfg) {
  const sbx_allowlist *lists[] = {f->list};
  cfg->allowlists = lists;
  cfg->n_allowlists = 1;
  GError *error = NULL;
  f->b = sbx_broker_start(cfg, &error);
  ck_assert_msg(f->b != NULL, "%s", error ? error->message : "");
}

static void stop(fixture *f) {
  if (f->b)
    ck_assert(sbx_broker_stop(f->b, NULL, NULL));
  f->b = NULL;
  sbx_allowlist_free(f->list);
  if (f->audit_fd >= 0)
    close(f->audit_fd);
  if (f->audit_path)
    unlink(f->audit_path);
  g_free(f->audit_path);
  broker_test_tree_free(&f->t);
}

static int connect_worker(fixture *f) {
  GError *error = NULL;
  int fd = sbx_broker_connect(f->b, "worker", &error);
  ck_assert_msg(fd >= 0, "%s", error ? error->message : "");
  return fd;
}

/* The value of a "Name:\tvalue" line of /proc/<pid>/status, or -1. */
static long status_field(pid_t pid, const char *name) {
  char *path = g_strdup_printf("/proc/%d/status", (int)pid);
  char *text = NULL;
  ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "read %s",
                path);
  g_free(path);
  long value = -1;
  char *key = g_strconcat("\n", name, ":", NULL);
  char *at = strstr(text, key);
  if (at)
    value = strtol(at + strlen(key), NULL, 10);
  g_free(key);
  g_free(text);
  return value;
}

/* ---- the broker's own sandbox ------------------------------------------ */

START_TEST(broker_runs_under_its_own_seccomp_filter) {
  /* Control: the test process itself has no filter, and a broker started
   * dangerously unsandboxed has none either. */
  ck_assert_int_eq(status_field(getpid(), "Seccomp"), 0);
  fixture f;
  memset(&f, 0, sizeof(f));
  broker_test_tree_make(&f.t);
  f.list = broker_test_tree_allowlist(&f.t, "worker");
  f.audit_fd = -1;
  sbx_broker_config bare = {.audit_fd = -1, .dangerously_unsandboxed = true};
  start_with(&f, &bare);
  ck_assert_int_eq(status_field(sbx_broker_pid(f.b), "Seccomp"), 0);
  ck_assert(sbx_broker_stop(f.b, NULL, NULL));

  sbx_broker_config cfg = {.audit_fd = -1};
  start_with(&f, &cfg);
  pid_t pid = sbx_broker_pid(f.b);
  ck_assert_int_eq(status_field(pid, "Seccomp"), 2); /* filter mode */
  ck_assert_int_eq(status_field(pid, "Seccomp_filters"), 1);
  ck_assert_int_eq(status_field(pid, "NoNewPrivs"), 1);
  /* And it serves under it. */
  sbx_broker_client c;
  sbx_broker_client_init(&c, connect_worker(&f));
  int fd = sbx_broker_open(&c, f.t.good_file, O_RDONLY | O_CLOEXEC, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  close(c.channel);
  stop(&f);
}
END_TEST

typedef struct {
  broker_test_tree *t;
  sbx_allowlist *list;
  sbx_bpf_program *program;
} sandbox_args;

/* openat2, the one open call broker.policy allows. */
static int open2(const char *path) {
  struct open_how how = {.flags = O_RDONLY | O_CLOEXEC};
  return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
}

/* In a forked child: confine it exactly as the broker confines itself. */
static int sandboxed_child(void *arg) {
  sandbox_args *a = arg;
  int canary = open2(a->t->canary);
  if (canary < 0)
    return 10; /* control: readable before */
  close(canary);
  const sbx_allowlist *lists[] = {a->list};
  if (!sbx_broker_sandbox_self(lists, 1, a->program, NULL))
    return 11;
  /* Landlock is in force: inside the allowlist yes, the canary no. */
  int fd = open2(a->t->good_file);
  if (fd < 0)
    return 12;
  close(fd);
  fd = open2(a->t->canary);
  if (fd >= 0 || errno != EACCES)
    return 13;
  /* The seccomp layer came after Landlock: from here on the Landlock
   * calls themselves are fatal, so the order could not be the reverse. */
  syscall(SYS_landlock_create_ruleset, NULL, 0,
          LANDLOCK_CREATE_RULESET_VERSION);
  return 14;
}

START_TEST(broker_sandbox_puts_landlock_before_seccomp) {
  broker_test_tree t;
  broker_test_tree_make(&t);
  sbx_allowlist *list = broker_test_tree_allowlist(&t, "worker");
  sbx_bpf_program program = {0};
  GError *error = NULL;
  ck_assert_msg(sbx_broker_sandbox_compile(&program, &error), "%s",
                error ? error->message : "");
  sandbox_args a = {&t, list, &program};
  ck_assert_int_eq(broker_test_run_in_child(sandboxed_child, &a),
                   128 + SIGSYS);
  sbx_bpf_program_clear(&program);
  sbx_allowlist_free(list);
  broker_test_tree_free(&t);
}
END_TEST

static char *read_audit(fixture *f) {
  char *text = NULL;
  ck_assert(g_file_get_contents(f->audit_path, &text, NULL, NULL));
  return text;
}

START_TEST(broker_serves_every_command_and_audits_under_its_filter) {
  fixture f;
  memset(&f, 0, sizeof(f));
  broker_test_tree_make(&f.t);
  f.list = broker_test_tree_allowlist(&f.t, "worker");
  f.audit_path = broker_test_path(&f.t, "../audit.log");
  f.audit_fd = open(f.audit_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                    0600);
  ck_assert_int_ge(f.audit_fd, 0);
  sbx_broker_config cfg = {.audit_fd = f.audit_fd, .audit_grants = true};
  start_with(&f, &cfg);
  ck_assert_int_eq(status_field(sbx_broker_pid(f.b), "Seccomp"), 2);
  sbx_broker_client c;
  sbx_broker_client_init(&c, connect_worker(&f));

  int fd = sbx_broker_open(&c, f.t.good_file, O_RDONLY, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(sbx_broker_access(&c, f.t.good_file, R_OK, 0), 0);
  struct stat st;
  ck_assert_int_eq(sbx_broker_stat(&c, f.t.good_file, &st), 0);
  ck_assert_int_eq(st.st_size, 4);
  char *link = broker_test_path(&f.t, "good/link");
  ck_assert_int_eq(symlink("file", link), 0);
  ck_assert_int_eq(sbx_broker_lstat(&c, link, &st), 0);
  ck_assert(S_ISLNK(st.st_mode));
  struct statx stx;
  ck_assert_int_eq(sbx_broker_statx(&c, f.t.good_file, 0, STATX_SIZE, &stx),
                   0);
  ck_assert_uint_eq(stx.stx_size, 4);
  char buf[64];
  ck_assert_int_eq(sbx_broker_readlink(&c, link, buf, sizeof(buf)), 4);
  ck_assert(memcmp(buf, "file", 4) == 0);
  char *dir = broker_test_path(&f.t, "rw/dir");
  char *a = broker_test_path(&f.t, "rw/a");
  char *b = broker_test_path(&f.t, "rw/b");
  ck_assert_int_eq(sbx_broker_mkdir(&c, dir, 0755), 0);
  ck_assert_int_eq(sbx_broker_rmdir(&c, dir), 0);
  fd = sbx_broker_open(&c, a, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ck_assert_int_ge(fd, 0);
  close(fd);
  fd = sbx_broker_open(&c, f.t.existing, O_RDWR | O_TRUNC, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(sbx_broker_rename(&c, a, b, 0), 0);
  ck_assert_int_eq(sbx_broker_rename(&c, b, f.t.existing, RENAME_EXCHANGE),
                   0);
  ck_assert_int_eq(sbx_broker_rename(&c, b, f.t.existing, RENAME_NOREPLACE),
                   -EEXIST);
  ck_assert_int_eq(sbx_broker_unlink(&c, b), 0);
  char *tmp = broker_test_path(&f.t, "tmp/t");
  fd = sbx_broker_open(&c, tmp, O_RDWR | O_CREAT | O_EXCL, 0600);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(sbx_broker_open(&c, f.t.canary, O_RDONLY, 0), -EACCES);

  /* The broker lived through all of it, and logged each decision. */
  sbx_broker_stats stats;
  ck_assert(sbx_broker_get_stats(f.b, &stats, NULL));
  ck_assert_uint_eq(stats.denied, 1);
  char *log = read_audit(&f);
  const char *ops[] = {"granted op=open", "granted op=access",
                       "granted op=stat", "granted op=lstat",
                       "granted op=statx", "granted op=readlink",
                       "granted op=mkdir", "granted op=rmdir",
                       "granted op=rename", "granted op=unlink",
                       "denied op=open"};
  for (size_t i = 0; i < G_N_ELEMENTS(ops); i++)
    ck_assert_msg(strstr(log, ops[i]) != NULL, "no '%s' in the audit log",
                  ops[i]);
  ck_assert_int_eq(status_field(sbx_broker_pid(f.b), "Seccomp"), 2);
  g_free(log);
  g_free(link);
  g_free(dir);
  g_free(a);
  g_free(b);
  g_free(tmp);
  close(c.channel);
  stop(&f);
}
END_TEST

int main(void) {
  umask(022);
  Suite *s = suite_create("broker_faults");
  TCase *tc = tcase_create("sandbox");
  tcase_set_timeout(tc, 20);
  tcase_add_test(tc, broker_runs_under_its_own_seccomp_filter);
  tcase_add_test(tc, broker_sandbox_puts_landlock_before_seccomp);
  tcase_add_test(tc, broker_serves_every_command_and_audits_under_its_filter);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
