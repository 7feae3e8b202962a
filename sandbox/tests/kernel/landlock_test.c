/* Landlock in real forked children: every denial is paired with the same
 * operation succeeding without the ruleset. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/kernel/landlock/landlock.h"

typedef int (*child_fn)(void *arg);

/* Runs fn in a forked child and returns its exit status (or 128+signal). */
static int run_in_child(child_fn fn, void *arg) {
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0)
    _exit(fn(arg));
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

typedef struct {
  char *dir;
  char *allowed_dir;
  char *allowed_file;
  char *forbidden_file;
} tree;

static void write_text(const char *path, const char *text) {
  ck_assert(g_file_set_contents(path, text, -1, NULL));
}

static tree make_tree(void) {
  tree t;
  t.dir = g_dir_make_tmp("sbx-landlock-XXXXXX", NULL);
  ck_assert_ptr_nonnull(t.dir);
  t.allowed_dir = g_build_filename(t.dir, "allowed", NULL);
  char *forbidden_dir = g_build_filename(t.dir, "forbidden", NULL);
  ck_assert_int_eq(mkdir(t.allowed_dir, 0755), 0);
  ck_assert_int_eq(mkdir(forbidden_dir, 0755), 0);
  t.allowed_file = g_build_filename(t.allowed_dir, "a.txt", NULL);
  t.forbidden_file = g_build_filename(forbidden_dir, "b.txt", NULL);
  write_text(t.allowed_file, "allowed");
  write_text(t.forbidden_file, "forbidden");
  g_free(forbidden_dir);
  return t;
}

static void free_tree(tree *t) {
  char *cmd = g_strdup_printf("rm -rf '%s'", t->dir);
  ck_assert_int_eq(system(cmd), 0);
  g_free(cmd);
  g_free(t->dir);
  g_free(t->allowed_dir);
  g_free(t->allowed_file);
  g_free(t->forbidden_file);
}

/* Returns 0 or errno of open(path, flags). */
static int try_open(const char *path, int flags) {
  int fd = open(path, flags | O_CLOEXEC, 0644);
  if (fd < 0)
    return errno;
  close(fd);
  return 0;
}

static int restrict_with(sbx_landlock_builder *b) {
  GError *error = NULL;
  sbx_landlock_report rep;
  int fd = sbx_landlock_build(b, &rep, &error);
  sbx_landlock_builder_free(b);
  if (fd < 0) {
    fprintf(stderr, "build: %s\n", error->message);
    g_error_free(error);
    return -1;
  }
  int rc = sbx_landlock_restrict_self_raw(fd, rep.restrict_flags);
  close(fd);
  return rc;
}

static sbx_landlock_builder *allowing(const char *path, uint64_t rights) {
  sbx_landlock_builder *b = sbx_landlock_builder_new();
  GError *error = NULL;
  if (!sbx_landlock_allow_path(b, path, rights, 0, &error)) {
    fprintf(stderr, "%s\n", error->message);
    abort();
  }
  return b;
}

static int read_allowed_and_forbidden(void *arg) {
  tree *t = arg;
  if (restrict_with(allowing(t->allowed_dir, SBX_LANDLOCK_RIGHTS_READ)))
    return 10;
  if (try_open(t->allowed_file, O_RDONLY) != 0)
    return 11;
  if (try_open(t->forbidden_file, O_RDONLY) != EACCES)
    return 12;
  return 0;
}

START_TEST(landlock_allows_reading_an_allowed_file_and_refuses_another) {
  tree t = make_tree();
  ck_assert_int_eq(try_open(t.allowed_file, O_RDONLY), 0);
  ck_assert_int_eq(try_open(t.forbidden_file, O_RDONLY), 0);
  ck_assert_int_eq(run_in_child(read_allowed_and_forbidden, &t), 0);
  free_tree(&t);
}
END_TEST

static int write_under_read_only(void *arg) {
  tree *t = arg;
  if (restrict_with(allowing(t->allowed_dir, SBX_LANDLOCK_RIGHTS_READ)))
    return 10;
  if (try_open(t->allowed_file, O_RDONLY) != 0)
    return 11;
  if (try_open(t->allowed_file, O_WRONLY) != EACCES)
    return 12;
  char *fresh = g_build_filename(t->allowed_dir, "new.txt", NULL);
  int rc = try_open(fresh, O_WRONLY | O_CREAT);
  g_free(fresh);
  return rc == EACCES ? 0 : 13;
}

static int write_under_read_write(void *arg) {
  tree *t = arg;
  if (restrict_with(allowing(t->allowed_dir, SBX_LANDLOCK_RIGHTS_READ_WRITE)))
    return 10;
  if (try_open(t->allowed_file, O_WRONLY | O_TRUNC) != 0)
    return 11;
  char *fresh = g_build_filename(t->allowed_dir, "new.txt", NULL);
  int rc = try_open(fresh, O_WRONLY | O_CREAT);
  g_free(fresh);
  if (rc != 0)
    return 12;
  return try_open(t->forbidden_file, O_WRONLY) == EACCES ? 0 : 13;
}

START_TEST(landlock_refuses_writing_under_a_read_only_rule) {
  tree t = make_tree();
  ck_assert_int_eq(run_in_child(write_under_read_write, &t), 0);
  ck_assert_int_eq(run_in_child(write_under_read_only, &t), 0);
  free_tree(&t);
}
END_TEST

static int file_rule_on_a_file(void *arg) {
  tree *t = arg;
  /* Directory-only rights are masked off for a file, so this is valid. */
  if (restrict_with(allowing(t->allowed_file, SBX_LANDLOCK_RIGHTS_READ_WRITE)))
    return 10;
  if (try_open(t->allowed_file, O_RDWR) != 0)
    return 11;
  return try_open(t->allowed_dir, O_RDONLY | O_DIRECTORY) == EACCES ? 0 : 12;
}

START_TEST(landlock_gives_a_file_only_the_rights_valid_for_files) {
  tree t = make_tree();
  ck_assert_int_eq(run_in_child(file_rule_on_a_file, &t), 0);
  free_tree(&t);
}
END_TEST

static int worker_ruleset(void *arg) {
  const char *path = arg;
  if (restrict_with(sbx_landlock_builder_new()))
    return 10;
  return try_open(path, O_RDONLY) == EACCES ? 0 : 11;
}

START_TEST(landlock_worker_ruleset_lets_nothing_be_opened) {
  tree t = make_tree();
  ck_assert_int_eq(try_open(t.allowed_file, O_RDONLY), 0);
  ck_assert_int_eq(try_open("/", O_RDONLY | O_DIRECTORY), 0);
  ck_assert_int_eq(run_in_child(worker_ruleset, t.allowed_file), 0);
  ck_assert_int_eq(run_in_child(worker_ruleset, "/"), 0);
  free_tree(&t);
}
END_TEST

typedef struct {
  struct sockaddr_in addr;
  bool sandboxed;
} tcp_case;

static int tcp_connect(void *arg) {
  tcp_case *c = arg;
  if (c->sandboxed && restrict_with(sbx_landlock_builder_new()))
    return 10;
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return 11;
  int rc = connect(s, (struct sockaddr *)&c->addr, sizeof(c->addr));
  int err = rc ? errno : 0;
  close(s);
  if (!c->sandboxed)
    return err == 0 ? 0 : 12;
  return err == EACCES ? 0 : 13;
}

static int tcp_listener(struct sockaddr_in *addr) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ck_assert_int_ge(s, 0);
  memset(addr, 0, sizeof(*addr));
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ck_assert_int_eq(bind(s, (struct sockaddr *)addr, sizeof(*addr)), 0);
  socklen_t len = sizeof(*addr);
  ck_assert_int_eq(getsockname(s, (struct sockaddr *)addr, &len), 0);
  ck_assert_int_eq(listen(s, 8), 0);
  return s;
}

START_TEST(landlock_refuses_tcp_connect_to_a_loopback_listener) {
  if (sbx_landlock_abi_version() < 4)
    ck_abort_msg("kernel lacks Landlock ABI 4 (TCP rules)");
  tcp_case c;
  int s = tcp_listener(&c.addr);
  c.sandboxed = false;
  ck_assert_int_eq(run_in_child(tcp_connect, &c), 0);
  c.sandboxed = true;
  ck_assert_int_eq(run_in_child(tcp_connect, &c), 0);
  close(s);
}
END_TEST

static int tcp_connect_allowed_port(void *arg) {
  tcp_case *c = arg;
  sbx_landlock_builder *b = sbx_landlock_builder_new();
  if (!sbx_landlock_allow_tcp_port(b, ntohs(c->addr.sin_port),
                                   LANDLOCK_ACCESS_NET_CONNECT_TCP, NULL))
    return 9;
  if (restrict_with(b))
    return 10;
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int rc = connect(s, (struct sockaddr *)&c->addr, sizeof(c->addr));
  close(s);
  return rc == 0 ? 0 : 11;
}

START_TEST(landlock_port_rule_allows_connecting_to_that_port) {
  tcp_case c;
  int s = tcp_listener(&c.addr);
  ck_assert_int_eq(run_in_child(tcp_connect_allowed_port, &c), 0);
  close(s);
}
END_TEST

typedef struct {
  struct sockaddr_un addr;
  socklen_t len;
  bool sandboxed;
} unix_case;

static int abstract_connect(void *arg) {
  unix_case *c = arg;
  if (c->sandboxed && restrict_with(sbx_landlock_builder_new()))
    return 10;
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return 11;
  int rc = connect(s, (struct sockaddr *)&c->addr, c->len);
  int err = rc ? errno : 0;
  close(s);
  if (!c->sandboxed)
    return err == 0 ? 0 : 12;
  return err == EPERM ? 0 : 13;
}

START_TEST(landlock_scope_refuses_abstract_unix_connect_outside_the_domain) {
  if (sbx_landlock_abi_version() < 6)
    ck_abort_msg("kernel lacks Landlock ABI 6 (scopes)");
  unix_case c;
  memset(&c, 0, sizeof(c));
  c.addr.sun_family = AF_UNIX;
  char name[64];
  int n = snprintf(name, sizeof(name), "sbx-landlock-test-%d", getpid());
  memcpy(c.addr.sun_path + 1, name, (size_t)n);
  c.len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ck_assert_int_eq(bind(s, (struct sockaddr *)&c.addr, c.len), 0);
  ck_assert_int_eq(listen(s, 8), 0);
  c.sandboxed = false;
  ck_assert_int_eq(run_in_child(abstract_connect, &c), 0);
  c.sandboxed = true;
  ck_assert_int_eq(run_in_child(abstract_connect, &c), 0);
  close(s);
}
END_TEST

typedef struct {
  pid_t target;
  bool sandboxed;
} kill_case;

static int kill_outside(void *arg) {
  kill_case *c = arg;
  if (c->sandboxed && restrict_with(sbx_landlock_builder_new()))
    return 10;
  int rc = kill(c->target, SIGTERM);
  int err = rc ? errno : 0;
  if (!c->sandboxed)
    return err == 0 ? 0 : 12;
  return err == EPERM ? 0 : 13;
}

/* A child that waits for signals, returned once it has SIGTERM's default
 * action (until then, a SIGTERM would run Check's handler in it). */
static pid_t sleeper(void) {
  int ready[2];
  ck_assert_int_eq(pipe(ready), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    /* Check's SIGTERM handler would signal the whole test group. */
    signal(SIGTERM, SIG_DFL);
    close(ready[0]);
    if (write(ready[1], "r", 1) != 1)
      _exit(1);
    for (;;)
      pause();
  }
  close(ready[1]);
  char r;
  ck_assert_int_eq(read(ready[0], &r, 1), 1);
  close(ready[0]);
  return pid;
}

START_TEST(landlock_signal_scope_refuses_kill_outside_the_domain) {
  if (sbx_landlock_abi_version() < 6)
    ck_abort_msg("kernel lacks Landlock ABI 6 (scopes)");
  kill_case c = {sleeper(), true};
  ck_assert_int_eq(run_in_child(kill_outside, &c), 0);
  int status;
  ck_assert_int_eq(waitpid(c.target, &status, WNOHANG), 0); /* still alive */
  c.sandboxed = false;
  ck_assert_int_eq(run_in_child(kill_outside, &c), 0);
  ck_assert_int_eq(waitpid(c.target, &status, 0), c.target);
  ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
}
END_TEST

static int kill_self_domain(void *arg) {
  (void)arg;
  if (restrict_with(sbx_landlock_builder_new()))
    return 10;
  /* A child created after restrict_self is inside the domain. */
  pid_t pid = fork();
  if (pid == 0) {
    for (;;)
      pause();
  }
  if (kill(pid, SIGKILL) != 0)
    return 11;
  int status;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? 0 : 12;
}

START_TEST(landlock_signal_scope_still_allows_signals_inside_the_domain) {
  ck_assert_int_eq(run_in_child(kill_self_domain, NULL), 0);
}
END_TEST

static int stacked(void *arg) {
  tree *t = arg;
  sbx_landlock_builder *b = allowing(t->dir, SBX_LANDLOCK_RIGHTS_READ);
  if (restrict_with(b))
    return 10;
  if (try_open(t->forbidden_file, O_RDONLY) != 0)
    return 11;
  if (restrict_with(allowing(t->allowed_dir, SBX_LANDLOCK_RIGHTS_READ)))
    return 12;
  if (try_open(t->forbidden_file, O_RDONLY) != EACCES)
    return 13;
  if (try_open(t->allowed_file, O_RDONLY) != 0)
    return 14;
  /* A third ruleset naming the forbidden tree cannot widen the domain. */
  char *parent = g_path_get_dirname(t->forbidden_file);
  int rc = restrict_with(allowing(parent, SBX_LANDLOCK_RIGHTS_READ));
  g_free(parent);
  if (rc)
    return 15;
  return try_open(t->forbidden_file, O_RDONLY) == EACCES ? 0 : 16;
}

START_TEST(landlock_stacking_a_second_ruleset_only_narrows) {
  tree t = make_tree();
  ck_assert_int_eq(run_in_child(stacked, &t), 0);
  free_tree(&t);
}
END_TEST

START_TEST(landlock_refuses_a_minimum_abi_above_the_kernels) {
  int abi = sbx_landlock_abi_version();
  ck_assert_int_ge(abi, 1);
  sbx_landlock_builder *b = sbx_landlock_builder_new();
  sbx_landlock_require_abi(b, abi);
  GError *error = NULL;
  int fd = sbx_landlock_build(b, NULL, &error);
  ck_assert_int_ge(fd, 0); /* positive control: the kernel's own level */
  close(fd);
  sbx_landlock_builder_free(b);
  b = sbx_landlock_builder_new();
  sbx_landlock_require_abi(b, abi + 1);
  ck_assert_int_eq(sbx_landlock_build(b, NULL, &error), -1);
  ck_assert(g_error_matches(error, SBX_LANDLOCK_ERROR,
                            SBX_LANDLOCK_ERROR_KERNEL_TOO_OLD));
  ck_assert_ptr_nonnull(strstr(error->message, "the kernel lacks it"));
  g_error_free(error);
  sbx_landlock_builder_free(b);
}
END_TEST

START_TEST(landlock_report_says_what_was_enforced) {
  int abi = sbx_landlock_abi_version();
  sbx_landlock_builder *b = sbx_landlock_builder_new();
  sbx_landlock_set_log_flags(b, LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF);
  sbx_landlock_report rep;
  int fd = sbx_landlock_build(b, &rep, NULL);
  ck_assert_int_ge(fd, 0);
  close(fd);
  sbx_landlock_builder_free(b);
  sbx_landlock_rights want = sbx_landlock_rights_for_abi(rep.abi);
  ck_assert_int_eq(rep.kernel_abi, abi);
  ck_assert(rep.handled.fs == want.fs && rep.handled.net == want.net &&
            rep.handled.scoped == want.scoped);
  char buf[1024];
  size_t n = sbx_landlock_report_format(&rep, buf, sizeof(buf));
  ck_assert_uint_lt(n, sizeof(buf));
  char expect[32];
  snprintf(expect, sizeof(expect), "landlock: abi %d", rep.abi);
  ck_assert_ptr_nonnull(strstr(buf, expect));
  /* A short buffer is detected, like snprintf. */
  char small[8];
  ck_assert_uint_eq(sbx_landlock_report_format(&rep, small, sizeof(small)), n);
  ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
}
END_TEST

START_TEST(landlock_negotiation_drops_each_abis_features_below_it) {
  sbx_landlock_rights r1 = sbx_landlock_rights_for_abi(1);
  ck_assert(!(r1.fs & LANDLOCK_ACCESS_FS_REFER));
  ck_assert(r1.net == 0 && r1.scoped == 0 && r1.restrict_flags == 0);
  ck_assert(sbx_landlock_rights_for_abi(2).fs & LANDLOCK_ACCESS_FS_REFER);
  ck_assert(!(sbx_landlock_rights_for_abi(2).fs & LANDLOCK_ACCESS_FS_TRUNCATE));
  ck_assert(sbx_landlock_rights_for_abi(3).fs & LANDLOCK_ACCESS_FS_TRUNCATE);
  ck_assert(sbx_landlock_rights_for_abi(3).net == 0);
  ck_assert(sbx_landlock_rights_for_abi(4).net == SBX_LANDLOCK_NET_ALL);
  ck_assert(
      !(sbx_landlock_rights_for_abi(4).fs & LANDLOCK_ACCESS_FS_IOCTL_DEV));
  ck_assert(sbx_landlock_rights_for_abi(5).fs & LANDLOCK_ACCESS_FS_IOCTL_DEV);
  ck_assert(sbx_landlock_rights_for_abi(5).scoped == 0);
  ck_assert(sbx_landlock_rights_for_abi(6).scoped == SBX_LANDLOCK_SCOPE_ALL);
  ck_assert(sbx_landlock_rights_for_abi(6).restrict_flags == 0);
  ck_assert(sbx_landlock_rights_for_abi(7).restrict_flags ==
            SBX_LANDLOCK_LOG_ALL);
  ck_assert(sbx_landlock_rights_for_abi(8).fs == SBX_LANDLOCK_FS_ALL);
  ck_assert(sbx_landlock_rights_for_abi(0).fs == 0);
}
END_TEST

START_TEST(landlock_refuses_a_relative_path_and_a_missing_one) {
  sbx_landlock_builder *b = sbx_landlock_builder_new();
  GError *error = NULL;
  ck_assert(
      !sbx_landlock_allow_path(b, "etc", SBX_LANDLOCK_RIGHTS_READ, 0, &error));
  ck_assert(
      g_error_matches(error, SBX_LANDLOCK_ERROR, SBX_LANDLOCK_ERROR_INVALID));
  g_clear_error(&error);
  ck_assert(!sbx_landlock_allow_path(b, "/nonexistent/sbx",
                                     SBX_LANDLOCK_RIGHTS_READ, 0, &error));
  ck_assert(
      g_error_matches(error, SBX_LANDLOCK_ERROR, SBX_LANDLOCK_ERROR_PATH));
  ck_assert_ptr_nonnull(strstr(error->message, "/nonexistent/sbx"));
  g_clear_error(&error);
  ck_assert(sbx_landlock_allow_path(b, "/nonexistent/sbx",
                                    SBX_LANDLOCK_RIGHTS_READ,
                                    SBX_LANDLOCK_PATH_OPTIONAL, &error));
  sbx_landlock_builder_free(b);
}
END_TEST

static Suite *landlock_suite(void) {
  Suite *s = suite_create("landlock");
  TCase *tc = tcase_create("landlock");
  tcase_set_timeout(tc, 20);
  tcase_add_test(tc,
                 landlock_allows_reading_an_allowed_file_and_refuses_another);
  tcase_add_test(tc, landlock_refuses_writing_under_a_read_only_rule);
  tcase_add_test(tc, landlock_gives_a_file_only_the_rights_valid_for_files);
  tcase_add_test(tc, landlock_worker_ruleset_lets_nothing_be_opened);
  tcase_add_test(tc, landlock_refuses_tcp_connect_to_a_loopback_listener);
  tcase_add_test(tc, landlock_port_rule_allows_connecting_to_that_port);
  tcase_add_test(
      tc, landlock_scope_refuses_abstract_unix_connect_outside_the_domain);
  tcase_add_test(tc, landlock_signal_scope_refuses_kill_outside_the_domain);
  tcase_add_test(tc,
                 landlock_signal_scope_still_allows_signals_inside_the_domain);
  tcase_add_test(tc, landlock_stacking_a_second_ruleset_only_narrows);
  tcase_add_test(tc, landlock_refuses_a_minimum_abi_above_the_kernels);
  tcase_add_test(tc, landlock_report_says_what_was_enforced);
  tcase_add_test(tc, landlock_negotiation_drops_each_abis_features_below_it);
  tcase_add_test(tc, landlock_refuses_a_relative_path_and_a_missing_one);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(landlock_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
