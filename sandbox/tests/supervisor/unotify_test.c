/* The user-notification supervisor against real kernel filters: a forked
 * target installs a filter (compiled by sbx's compiler) whose listener it
 * hands to the test, which supervises it with sbx_unotify. Every refusal
 * is paired with the same call served. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/files/fs_calls.h"
#include "sandbox/files/permissions.h"
#include "sandbox/files/resolver.h"
#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/policy/compiler.h"
#include "sandbox/kernel/seccomp/loader.h"
#include "sandbox/kernel/unotify/notify.h"
#include "sandbox/supervisor/observer.h"
#include "sandbox/supervisor/supervisor.h"
#include "sandbox/policy/parser.h"

/* Everything allowed except the calls under test, which reach the
 * supervisor. */
static const char target_policy[] =
    "@default allow\n"
    "openat: user-notify\n"
    "newfstatat: user-notify\n"
    "mkdirat: user-notify\n"
    "fchmod: user-notify\n"
    "connect: user-notify\n"
    "acct: user-notify\n";

typedef struct {
  char *dir;       /* allowed, read-write-create */
  char *forbidden; /* not in the allowlist */
  sbx_allowlist *list;
  sbx_resolver *resolver;
  sbx_bpf_program prog;
  GPtrArray *events; /* of g_strdup'ed "decision op path" */
  GPtrArray *calls;  /* of g_strdup'ed "syscall op" */
} fixture;

static void on_event(const sbx_unotify_event *ev, void *data) {
  fixture *f = data;
  g_ptr_array_add(f->events,
                  g_strdup_printf("%s %s %s", ev->allowed ? "allow" : "deny",
                                  ev->operation ? ev->operation : "-",
                                  ev->path ? ev->path : "-"));
  g_ptr_array_add(f->calls,
                  g_strdup_printf("%s %s", ev->syscall,
                                  ev->operation ? ev->operation : "-"));
}

static void fixture_init(fixture *f) {
  memset(f, 0, sizeof(*f));
  f->dir = g_dir_make_tmp("sbx-unotify-XXXXXX", NULL);
  ck_assert_ptr_nonnull(f->dir);
  f->forbidden = g_dir_make_tmp("sbx-unotify-forbidden-XXXXXX", NULL);
  ck_assert_ptr_nonnull(f->forbidden);
  f->list = sbx_allowlist_new("test");
  g_autofree char *rule = g_strconcat("create ", f->dir, "/", NULL);
  GError *error = NULL;
  ck_assert_msg(sbx_allowlist_add_rule(f->list, rule, &error), "%s",
                error ? error->message : "");
  f->resolver = sbx_resolver_new(f->list, &error);
  ck_assert_msg(f->resolver != NULL, "%s", error ? error->message : "");
  sbx_policy *pol =
      sbx_policy_parse_string(target_policy, "target.policy", NULL, &error);
  ck_assert_msg(pol != NULL, "%s", error ? error->message : "");
  ck_assert_msg(sbx_bpf_compile(pol, &f->prog, &error), "%s",
                error ? error->message : "");
  sbx_policy_free(pol);
  f->events = g_ptr_array_new_with_free_func(g_free);
  f->calls = g_ptr_array_new_with_free_func(g_free);
}

static void remove_tree(const char *dir) {
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}

static void fixture_clear(fixture *f) {
  sbx_resolver_free(f->resolver);
  sbx_allowlist_free(f->list);
  sbx_bpf_program_clear(&f->prog);
  remove_tree(f->dir);
  remove_tree(f->forbidden);
  g_free(f->dir);
  g_free(f->forbidden);
  g_ptr_array_free(f->events, TRUE);
  g_ptr_array_free(f->calls, TRUE);
}

typedef int (*target_fn)(fixture *f, void *arg);

typedef struct {
  pid_t pid;
  int listener;
} target;

static void send_fd(int sock, int fd) {
  if (sbx_unotify_send_listener(sock, "L", 1, fd) < 0)
    _exit(90);
}

static int recv_fd(int sock) {
  char byte;
  int fd;
  ck_assert_int_eq(sbx_unotify_recv_listener(sock, &byte, 1, &fd, 0), 1);
  ck_assert_int_ge(fd, 0);
  return fd;
}

/* Forks a target that installs the filter, hands over its listener and
 * runs fn; the target's exit status is fn's result. */
static target start_target(fixture *f, target_fn fn, void *arg) {
  int sv[2];
  ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv),
                   0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(sv[0]);
    int l = sbx_seccomp_load_raw(f->prog.insns, f->prog.len,
                                 SBX_SECCOMP_NEW_LISTENER);
    if (l < 0)
      _exit(91);
    send_fd(sv[1], l);
    close(l);
    char go;
    if (read(sv[1], &go, 1) != 1)
      _exit(92);
    _exit(fn(f, arg));
  }
  close(sv[1]);
  target t = {.pid = pid, .listener = recv_fd(sv[0])};
  ck_assert_int_eq(write(sv[0], "G", 1), 1);
  close(sv[0]);
  return t;
}

static sbx_unotify *supervise(fixture *f, int listener) {
  sbx_unotify_config cfg = {
      .resolver = f->resolver, .on_event = on_event, .user_data = f};
  GError *error = NULL;
  sbx_unotify *u = sbx_unotify_new(listener, &cfg, &error);
  ck_assert_msg(u != NULL, "%s", error ? error->message : "");
  return u;
}

/* Serves the target until it exits; returns its exit status. */
static int serve_until_exit(sbx_unotify *u, pid_t pid) {
  for (;;) {
    int status;
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    struct pollfd p = {.fd = sbx_unotify_listener(u), .events = POLLIN};
    if (poll(&p, 1, 50) > 0 && (p.revents & POLLIN))
      ck_assert_int_eq(sbx_unotify_handle_one(u), 0);
  }
}

/* ---- targets ------------------------------------------------------------ */

static int target_create(fixture *f, void *arg) {
  const char *path = arg;
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0)
    return 10 + (errno == EACCES);
  int ok = write(fd, "made", 4) == 4;
  close(fd);
  (void)f;
  return ok ? 0 : 3;
}

static int target_read(fixture *f, void *arg) {
  (void)f;
  int fd = open(arg, O_RDONLY);
  if (fd < 0)
    return errno == EACCES ? 13 : 14;
  char buf[16] = {0};
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  return n == 5 && strcmp(buf, "hello") == 0 ? 0 : 15;
}

static int target_stat(fixture *f, void *arg) {
  (void)f;
  struct stat st;
  if (stat(arg, &st) < 0)
    return errno == EACCES ? 13 : 14;
  /* Report the inode through the exit status's low bits. */
  return (int)(st.st_ino % 100) + 100;
}

static int target_acct(fixture *f, void *arg) {
  (void)f;
  (void)arg;
  return syscall(SYS_acct, NULL) < 0 && errno == EPERM ? 0 : 1;
}

/* fchmod of a descriptor inherited from the test (arg: the number). */
static int target_fchmod(fixture *f, void *arg) {
  (void)f;
  if (fchmod(*(int *)arg, 0600) < 0)
    return errno == EACCES ? 13 : 14;
  return 0;
}

static int target_connect(fixture *f, void *arg) {
  (void)arg;
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/s.sock", f->dir);
  return connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? 1 : 0;
}

/* ---- tests -------------------------------------------------------------- */

/* S31: a target that is killed after its notification was received, but
 * before the supervisor answered, is not served: its file is not made. */
START_TEST(supervisor_does_not_serve_a_target_killed_before_the_answer) {
  fixture f;
  fixture_init(&f);
  g_autofree char *path = g_build_filename(f.dir, "made-for-the-dead", NULL);
  target t = start_target(&f, target_create, path);
  sbx_unotify *u = supervise(&f, t.listener);
  ck_assert_int_eq(sbx_unotify_receive(u), 1);
  ck_assert_int_eq(sbx_unotify_pending(u)->data.nr, __NR_openat);
  ck_assert_int_eq(kill(t.pid, SIGKILL), 0);
  int status;
  ck_assert_int_eq(waitpid(t.pid, &status, 0), t.pid);
  ck_assert(WIFSIGNALED(status));
  ck_assert_int_eq(sbx_unotify_answer(u), -ENOENT);
  ck_assert_int_eq(access(path, F_OK), -1);
  sbx_unotify_stats st;
  sbx_unotify_get_stats(u, &st);
  ck_assert_uint_eq(st.dropped, 1);
  ck_assert_uint_eq(st.answered, 0);
  sbx_unotify_free(u);
  fixture_clear(&f);
}
END_TEST

/* The positive control: the same call, its target alive, is served. */
START_TEST(supervisor_serves_the_same_create_for_a_live_target) {
  fixture f;
  fixture_init(&f);
  g_autofree char *path = g_build_filename(f.dir, "made", NULL);
  target t = start_target(&f, target_create, path);
  sbx_unotify *u = supervise(&f, t.listener);
  ck_assert_int_eq(serve_until_exit(u, t.pid), 0);
  g_autofree char *data = NULL;
  ck_assert(g_file_get_contents(path, &data, NULL, NULL));
  ck_assert_str_eq(data, "made");
  sbx_unotify_free(u);
  fixture_clear(&f);
}
END_TEST

START_TEST(supervisor_injects_an_fd_for_an_allowed_open_only) {
  fixture f;
  fixture_init(&f);
  g_autofree char *allowed = g_build_filename(f.dir, "a", NULL);
  g_autofree char *forbidden = g_build_filename(f.forbidden, "b", NULL);
  ck_assert(g_file_set_contents(allowed, "hello", -1, NULL));
  ck_assert(g_file_set_contents(forbidden, "hello", -1, NULL));

  target t = start_target(&f, target_read, allowed);
  sbx_unotify *u = supervise(&f, t.listener);
  ck_assert_int_eq(serve_until_exit(u, t.pid), 0);
  sbx_unotify_free(u);

  t = start_target(&f, target_read, forbidden);
  u = supervise(&f, t.listener);
  ck_assert_int_eq(serve_until_exit(u, t.pid), 13);
  sbx_unotify_free(u);
  g_autofree char *want = g_strconcat("deny open ", forbidden, NULL);
  bool found = false;
  for (guint i = 0; i < f.events->len; i++)
    found |= strcmp(g_ptr_array_index(f.events, i), want) == 0;
  ck_assert_msg(found, "no event '%s'", want);
  fixture_clear(&f);
}
END_TEST

START_TEST(supervisor_writes_stat_results_into_the_target) {
  fixture f;
  fixture_init(&f);
  g_autofree char *allowed = g_build_filename(f.dir, "a", NULL);
  ck_assert(g_file_set_contents(allowed, "hello", -1, NULL));
  struct stat st;
  ck_assert_int_eq(stat(allowed, &st), 0);
  target t = start_target(&f, target_stat, allowed);
  sbx_unotify *u = supervise(&f, t.listener);
  ck_assert_int_eq(serve_until_exit(u, t.pid), (int)(st.st_ino % 100) + 100);
  sbx_unotify_free(u);

  g_autofree char *forbidden = g_build_filename(f.forbidden, "b", NULL);
  ck_assert(g_file_set_contents(forbidden, "x", -1, NULL));
  t = start_target(&f, target_stat, forbidden);
  u = supervise(&f, t.listener);
  ck_assert_int_eq(serve_until_exit(u, t.pid), 13);
  sbx_unotify_free(u);
  fixture_clear(&f);
}
END_TEST

/* S26a: a descriptor the target inherited is decided on its file. */
START_TEST(supervisor_decides_fchmod_on_the_file_behind_the_descriptor) {
  fixture f;
  fixture_init(&f);
  g_autofree char *allowed = g_build_filename(f.dir, "a", NULL);
  g_autofree char *forbidden = g_build_filename(f.forbidden, "b", NULL);
  ck_assert(g_file_set_contents(allowed, "x", -1, NULL));
  ck_assert(g_file_set_contents(forbidden, "x", -1, NULL));
  ck_assert_int_eq(chmod(allowed, 0644), 0);
  ck_assert_int_eq(chmod(forbidden, 0644), 0);

  int fd = open(allowed, O_RDONLY);
  target t = start_target(&f, target_fchmod, &fd);
  sbx_unotify *u = supervise(&f, t.listener);
  ck_assert_int_eq(serve_until_exit(u, t.pid), 0);
  sbx_unotify_free(u);
  close(fd);
  struct stat st;
  ck_assert_int_eq(stat(allowed, &st), 0);
  ck_assert_uint_eq(st.st_mode & 07777, 0600);

  fd = open(forbidden, O_RDONLY);
  t = start_target(&f, target_fchmod, &fd);
  u = supervise(&f, t.listener);
  ck_assert_int_eq(serve_until_exit(u, t.pid), 13);
  sbx_unotify_free(u);
  close(fd);
  ck_assert_int_eq(stat(forbidden, &st), 0);
  ck_assert_uint_eq(st.st_mode & 07777, 0644);
  fixture_clear(&f);
}
END_TEST

/* S31 for calls decided on a descriptor: a target killed after its
 * notification was received is not served (pidfd_getfd finds no
 * process), and the supervisor goes on. */
START_TEST(supervisor_drops_descriptor_calls_of_a_target_that_died) {
  fixture f;
  fixture_init(&f);
  g_autofree char *file = g_build_filename(f.dir, "a", NULL);
  ck_assert(g_file_set_contents(file, "x", -1, NULL));
  ck_assert_int_eq(chmod(file, 0644), 0);
  int fd = open(file, O_RDONLY);
  target_fn fns[] = {target_fchmod, target_connect};
  int nrs[] = {__NR_fchmod, __NR_connect};
  for (size_t i = 0; i < G_N_ELEMENTS(fns); i++) {
    target t = start_target(&f, fns[i], &fd);
    sbx_unotify *u = supervise(&f, t.listener);
    ck_assert_int_eq(sbx_unotify_receive(u), 1);
    ck_assert_int_eq(sbx_unotify_pending(u)->data.nr, nrs[i]);
    ck_assert_int_eq(kill(t.pid, SIGKILL), 0);
    int status;
    ck_assert_int_eq(waitpid(t.pid, &status, 0), t.pid);
    ck_assert_int_eq(sbx_unotify_answer(u), -ENOENT);
    sbx_unotify_stats st;
    sbx_unotify_get_stats(u, &st);
    ck_assert_uint_eq(st.dropped, 1);
    ck_assert_uint_eq(st.answered, 0);
    sbx_unotify_free(u);
  }
  close(fd);
  struct stat st;
  ck_assert_int_eq(stat(file, &st), 0);
  ck_assert_uint_eq(st.st_mode & 07777, 0644);
  fixture_clear(&f);
}
END_TEST

START_TEST(supervisor_refuses_a_call_without_a_handler) {
  fixture f;
  fixture_init(&f);
  target t = start_target(&f, target_acct, NULL);
  sbx_unotify *u = supervise(&f, t.listener);
  ck_assert_int_eq(serve_until_exit(u, t.pid), 0);
  sbx_unotify_stats st;
  sbx_unotify_get_stats(u, &st);
  ck_assert_uint_eq(st.denied, 1);
  sbx_unotify_free(u);
  fixture_clear(&f);
}
END_TEST

/* Every row of the table of file-system calls the supervisor decides
 * reaches the handler of its operation, descriptor forms included: each
 * is made once on a file outside the grants (or a descriptor of one), and
 * each is refused under its operation's name. */
typedef struct {
  int fd;           /* of a file outside the grants, opened read-write */
  const char *path; /* outside the grants */
  const char *path2;
} every_row;

static uint64_t row_arg(sbx_fs_arg_role role, const every_row *r) {
  static char buf[8192];
  static struct open_how how;
  static const char *const empty_vector[] = {NULL};
  switch (role) {
    case SBX_FS_ARG_DIRFD:
    case SBX_FS_ARG_DIRFD2:
      return (uint64_t)(int64_t)AT_FDCWD;
    case SBX_FS_ARG_PATH:
      return (uintptr_t)r->path;
    case SBX_FS_ARG_PATH2:
      return (uintptr_t)r->path2;
    case SBX_FS_ARG_FD:
      return (uint64_t)r->fd;
    case SBX_FS_ARG_MODE:
      return 0600;
    case SBX_FS_ARG_HOW:
      return (uintptr_t)&how;
    case SBX_FS_ARG_HOW_SIZE:
      return sizeof(how);
    case SBX_FS_ARG_MASK:
      return STATX_BASIC_STATS;
    case SBX_FS_ARG_BUF:
    case SBX_FS_ARG_VALUE:
      return (uintptr_t)buf;
    case SBX_FS_ARG_SIZE:
      return 64;
    case SBX_FS_ARG_LENGTH:
      return 1;
    case SBX_FS_ARG_NAME:
    case SBX_FS_ARG_TARGET:
      return (uintptr_t) "user.sbx";
    case SBX_FS_ARG_OWNER:
      return getuid() + 1; /* a change: a chown changing nothing succeeds */
    case SBX_FS_ARG_GROUP:
      return getgid();
    case SBX_FS_ARG_ARGV:
    case SBX_FS_ARG_ENVP:
      return (uintptr_t)empty_vector;
    default:
      return 0;
  }
}

static int target_every_row(fixture *f, void *arg) {
  (void)f;
  const every_row *r = arg;
  for (size_t i = 0; i < sbx_fs_call_count(); i++) {
    const sbx_fs_call *c = sbx_fs_call_at(i);
    if (!(c->traits & SBX_FS_SUPERVISED))
      continue;
    uint64_t a[6];
    for (int j = 0; j < 6; j++)
      a[j] = row_arg((sbx_fs_arg_role)c->args[j], r);
    if (syscall(c->nr, a[0], a[1], a[2], a[3], a[4], a[5]) >= 0)
      return 1; /* every call is outside the grants */
  }
  return 0;
}

START_TEST(every_row_of_the_table_reaches_its_operations_handler) {
  fixture f;
  fixture_init(&f);
  /* A filter sending every supervised row to the supervisor. */
  GString *text = g_string_new("@default allow\n");
  for (size_t i = 0; i < sbx_fs_call_count(); i++)
    if (sbx_fs_call_at(i)->traits & SBX_FS_SUPERVISED)
      g_string_append_printf(text, "%s: user-notify\n",
                             sbx_fs_call_at(i)->name);
  GError *error = NULL;
  sbx_policy *pol =
      sbx_policy_parse_string(text->str, "every-row.policy", NULL, &error);
  ck_assert_msg(pol != NULL, "%s", error ? error->message : "");
  sbx_bpf_program_clear(&f.prog);
  ck_assert_msg(sbx_bpf_compile(pol, &f.prog, &error), "%s",
                error ? error->message : "");
  sbx_policy_free(pol);
  g_string_free(text, TRUE);

  g_autofree char *path = g_build_filename(f.forbidden, "b", NULL);
  g_autofree char *path2 = g_build_filename(f.forbidden, "c", NULL);
  ck_assert(g_file_set_contents(path, "hello", -1, NULL));
  every_row r = {
      .fd = open(path, O_RDWR | O_CLOEXEC), .path = path, .path2 = path2};
  ck_assert_int_ge(r.fd, 0);
  target t = start_target(&f, target_every_row, &r);
  sbx_unotify *u = supervise(&f, t.listener);
  ck_assert_int_eq(serve_until_exit(u, t.pid), 0);
  sbx_unotify_free(u);
  close(r.fd);

  size_t rows = 0;
  for (size_t i = 0; i < sbx_fs_call_count(); i++) {
    const sbx_fs_call *c = sbx_fs_call_at(i);
    if (!(c->traits & SBX_FS_SUPERVISED))
      continue;
    rows++;
    g_autofree char *want =
        g_strdup_printf("%s %s", c->name, sbx_fs_op_name(c->op));
    bool found = false;
    for (guint j = 0; j < f.calls->len; j++)
      found |= strcmp(g_ptr_array_index(f.calls, j), want) == 0;
    ck_assert_msg(found, "no event '%s'", want);
  }
  ck_assert_uint_eq(f.calls->len, rows);
  /* Nothing was refused as a call without a handler. */
  for (guint j = 0; j < f.calls->len; j++)
    ck_assert_msg(!g_str_has_suffix(g_ptr_array_index(f.calls, j), " syscall"),
                  "%s", (char *)g_ptr_array_index(f.calls, j));
  g_autofree char *data = NULL;
  ck_assert(g_file_get_contents(path, &data, NULL, NULL));
  ck_assert_str_eq(data, "hello");
  fixture_clear(&f);
}
END_TEST

/* The observer records the path a relative openat names (made absolute
 * against the target's working directory) and lets the call run: the
 * file the supervisor refuses above is read. */
typedef struct {
  GPtrArray *paths;
  int calls;
} observed;

static void on_observation(const sbx_unotify_observation *o, void *data) {
  observed *seen = data;
  seen->calls++;
  if (o->nr == __NR_openat && o->path)
    g_ptr_array_add(seen->paths, g_strdup(o->path));
}

static int target_read_relative(fixture *f, void *arg) {
  if (chdir(f->forbidden) != 0)
    return 20;
  return target_read(f, arg);
}

START_TEST(observer_records_the_path_and_lets_a_refused_open_run) {
  fixture f;
  fixture_init(&f);
  g_autofree char *forbidden = g_build_filename(f.forbidden, "b", NULL);
  ck_assert(g_file_set_contents(forbidden, "hello", -1, NULL));
  target t = start_target(&f, target_read_relative, "b");
  observed seen = {g_ptr_array_new_with_free_func(g_free), 0};
  GError *error = NULL;
  sbx_unotify_observer *o =
      sbx_unotify_observer_new(t.listener, on_observation, &seen, &error);
  ck_assert_msg(o != NULL, "%s", error ? error->message : "");
  int status;
  for (;;) {
    struct pollfd p = {.fd = sbx_unotify_observer_listener(o),
                       .events = POLLIN};
    ck_assert_int_ge(poll(&p, 1, -1), 1);
    if (p.revents & POLLIN)
      ck_assert_int_eq(sbx_unotify_observer_handle_one(o), 0);
    else
      break;
  }
  ck_assert_int_eq(waitpid(t.pid, &status, 0), t.pid);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 0);
  ck_assert_int_ge(seen.calls, 1);
  bool found = false;
  for (guint i = 0; i < seen.paths->len; i++)
    found |= strcmp(g_ptr_array_index(seen.paths, i), forbidden) == 0;
  ck_assert_msg(found, "openat of %s not observed", forbidden);
  sbx_unotify_observer_free(o);
  g_ptr_array_free(seen.paths, TRUE);
  fixture_clear(&f);
}
END_TEST

static Suite *unotify_suite(void) {
  Suite *s = suite_create("unotify");
  TCase *tc = tcase_create("supervisor");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc,
                 supervisor_does_not_serve_a_target_killed_before_the_answer);
  tcase_add_test(tc, supervisor_serves_the_same_create_for_a_live_target);
  tcase_add_test(tc, supervisor_injects_an_fd_for_an_allowed_open_only);
  tcase_add_test(tc, supervisor_writes_stat_results_into_the_target);
  tcase_add_test(tc,
                 supervisor_decides_fchmod_on_the_file_behind_the_descriptor);
  tcase_add_test(tc, supervisor_drops_descriptor_calls_of_a_target_that_died);
  tcase_add_test(tc, supervisor_refuses_a_call_without_a_handler);
  tcase_add_test(tc, every_row_of_the_table_reaches_its_operations_handler);
  tcase_add_test(tc, observer_records_the_path_and_lets_a_refused_open_run);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(unotify_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
