/* Escapes tried under the sbx-run binary of the build: changing a file
 * through a descriptor where only its path form is decided (S26a), the
 * working directory as an oracle (S39), unix sockets under --net
 * (S32a, S30 for addresses), links out of the write grants, a FIFO in a
 * write grant (S28), and tracing beyond the sandbox (S5). Each attack runs
 * sbx_run_probe, a plain program, and asserts one exact outcome: the errno, the
 * file unchanged, and under the supervisor the `sbx: denied` line. Each has a
 * positive control: the same call works outside the sandbox, or under a grant
 * that allows it.
 *
 * The suite runs in both of sbx-run's modes (sbx_run_modes): in the
 * default one the kernel refuses (the name is absent from the tree, the
 * mount is read-only, Landlock or the baseline says no), so the errno is
 * the kernel's and nothing names the refusal; what must hold is the same:
 * the attack fails and the control works. mode_is_the_one_named checks
 * which mode a pass really ran in.
 *
 * The sandboxed program keeps the caller's identity, so it owns the files
 * it attacks: the kernel's own permission checks would let it through,
 * and only the sandbox stands in the way. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/tests/runner/tool_run.h"

/* ---- helpers ------------------------------------------------------------- */

/* The program (the caller's identity) owns the file, so that only the
 * sandbox can refuse what follows. */
static void give_to_program(const char *path) {
  ck_assert_int_eq(lchown(path, geteuid(), getegid()), 0);
}

static mode_t mode_of(const char *path) {
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  return st.st_mode & 07777;
}

static struct stat stat_of(const char *path) {
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  return st;
}

static char *program_file(const char *name, const char *text) {
  char *path = make_file(name, text);
  give_to_program(path);
  return path;
}

/* sbx-run OPTS -- probe ARGS... */
static result probe_in(const char *const *opts, const char *const *args) {
  g_autofree char *probe = probe_path();
  GPtrArray *cmd = g_ptr_array_new();
  g_ptr_array_add(cmd, probe);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add(cmd, (char *)*a);
  g_ptr_array_add(cmd, NULL);
  result r = sbx_run(opts, (const char *const *)cmd->pdata);
  g_ptr_array_free(cmd, TRUE);
  return r;
}

/* The probe outside the sandbox (the positive control). */
static result probe_out(const char *const *args) {
  g_autofree char *probe = probe_path();
  GPtrArray *cmd = g_ptr_array_new();
  g_ptr_array_add(cmd, probe);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add(cmd, (char *)*a);
  g_ptr_array_add(cmd, NULL);
  result r = run((const char *const *)cmd->pdata);
  g_ptr_array_free(cmd, TRUE);
  return r;
}

/* Asserts a refusal: exit status 1 and the errno in the probe's output:
 * under the supervisor sup_err and the denial line on stderr (line; NULL:
 * any), in the default mode kernel_err, the kernel's own answer, and no
 * denial line. */
static void expect_refused_as(result r, int sup_err, const char *line,
                              int kernel_err) {
  int err = sbx_run_kernel_decides() ? kernel_err : sup_err;
  g_autofree char *e = g_strdup_printf("errno=%d\n", err);
  ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
  assert_contains(r.out, e);
  expect_denial_line(&r, line);
  result_clear(&r);
}

/* A refusal of connect, which the supervisor decides in both modes (the
 * default mode's baseline sends it connect): the errno and the denial
 * line. */
static void expect_connect_refused_as(result r, int err, const char *line) {
  ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
  g_autofree char *e = g_strdup_printf("errno=%d\n", err);
  assert_contains(r.out, e);
  assert_contains(r.err, line);
  result_clear(&r);
}

static void expect_connect_refused(result r, const char *line) {
  expect_connect_refused_as(r, EACCES, line);
}

/* How a connect to the host's socket at path is refused when no grant
 * shows its directory: in the default mode a socket below /tmp or
 * /dev/shm is not there at all (the sandbox has its own directory
 * there), elsewhere, and under the supervisor, the grants refuse it. */
static int unshown_socket_errno(const char *path) {
  bool private_dir =
      g_str_has_prefix(path, "/tmp/") || g_str_has_prefix(path, "/dev/shm/");
  return sbx_run_kernel_decides() && private_dir ? ENOENT : EACCES;
}

/* The same errno in both modes. */
static void expect_refused(result r, int err, const char *line) {
  expect_refused_as(r, err, line, err);
}

/* ---- which mode runs ---------------------------------------------------- */

START_TEST(mode_is_the_one_named) {
  expect_sbx_run_mode();
}
END_TEST

/* ---- listeners ---------------------------------------------------------- */

typedef struct {
  int fd;
  pthread_t thread;
  bool running;
  atomic_int stop;
  atomic_int accepted;
} listener;

/* Accepts every connection; a byte received is answered with 'y'. */
static void *accept_loop(void *arg) {
  listener *l = arg;
  while (!atomic_load(&l->stop)) {
    struct pollfd p = {.fd = l->fd, .events = POLLIN};
    if (poll(&p, 1, 50) <= 0)
      continue;
    int c = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0)
      continue;
    atomic_fetch_add(&l->accepted, 1);
    struct pollfd q = {.fd = c, .events = POLLIN};
    char ch;
    if (poll(&q, 1, 2000) == 1 && read(c, &ch, 1) == 1) {
      ch = 'y';
      if (write(c, &ch, 1) != 1)
        ch = 0;
    }
    close(c);
  }
  return NULL;
}

static void listener_run(listener *l) {
  ck_assert_int_eq(pthread_create(&l->thread, NULL, accept_loop, l), 0);
  l->running = true;
}

/* A unix stream listener at path, writable by everyone (the kernel would
 * let the sandboxed program connect). */
static void unix_listener(listener *l, const char *path, bool run_now) {
  memset(l, 0, sizeof(*l));
  unlink(path);
  l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ck_assert_int_ge(l->fd, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  ck_assert_uint_lt(strlen(path), sizeof(sa.sun_path));
  strcpy(sa.sun_path, path);
  ck_assert_int_eq(bind(l->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  ck_assert_int_eq(chmod(path, 0777), 0);
  ck_assert_int_eq(listen(l->fd, 128), 0);
  if (run_now)
    listener_run(l);
}

/* A TCP listener on 127.0.0.1; returns its port. */
static int tcp_listener(listener *l, int backlog, bool run_now) {
  memset(l, 0, sizeof(*l));
  int port;
  l->fd = tcp_listen_loopback(backlog, &port);
  if (run_now)
    listener_run(l);
  return port;
}

/* Stops the listener; returns every connection it saw, including the
 * ones still queued. */
static int listener_stop(listener *l) {
  atomic_store(&l->stop, 1);
  if (l->running)
    pthread_join(l->thread, NULL);
  int n = atomic_load(&l->accepted);
  int c;
  ck_assert_int_eq(fcntl(l->fd, F_SETFL, O_NONBLOCK), 0);
  while ((c = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
    n++;
    close(c);
  }
  close(l->fd);
  return n;
}

/* ---- changes through a descriptor (S26a) -------------------------------- */

START_TEST(fchmod_through_a_descriptor_needs_a_write_grant) {
  g_autofree char *f = program_file("mode.txt", "x");
  const char *fchmod_[] = {"fchmod", f, "600", NULL};
  const char *empty[] = {"fchmodat-empty", f, "600", NULL};

  expect(probe_out(fchmod_), 0, "fchmod=ok", NULL);
  ck_assert_uint_eq(mode_of(f), 0600);
  expect(probe_out(empty), 0, "fchmodat2=ok", NULL);
  ck_assert_int_eq(chmod(f, 0644), 0);

  const char *ro[] = {"--allow-read", f, NULL};
  g_autofree char *line = g_strdup_printf(
      "sbx: denied chmod %s (allow with --allow-write %s)", f, f);
  /* The default mode shows the file on a read-only mount. */
  expect_refused_as(probe_in(ro, fchmod_), EACCES, line, EROFS);
  ck_assert_uint_eq(mode_of(f), 0644);
  expect_refused_as(probe_in(ro, empty), EACCES, line, EROFS);
  ck_assert_uint_eq(mode_of(f), 0644);

  const char *rw[] = {"--allow-write", f, NULL};
  expect(probe_in(rw, fchmod_), 0, "fchmod=ok", NULL);
  ck_assert_uint_eq(mode_of(f), 0600);
}
END_TEST

START_TEST(fchmod_on_a_write_grant_never_sets_setuid_or_setgid) {
  /* Control: outside, the bits stick. */
  g_autofree char *control = program_file("setuid-control", "x");
  const char *c[] = {"fchmod", control, "6777", NULL};
  expect(probe_out(c), 0, "fchmod=ok", NULL);
  ck_assert_uint_eq(mode_of(control), 06777);

  g_autofree char *dir = make_dir("setuid");
  g_autofree char *made = path_in("setuid/made");
  const char *rw[] = {"--allow-write", dir, NULL};
  const char *write_[] = {"write", made, NULL};
  expect(probe_in(rw, write_), 0, "write=ok", NULL);
  const char *s[] = {"fchmod", made, "6777", NULL};
  const char *e[] = {"fchmodat-empty", made, "6755", NULL};
  const char *g[] = {"fchmod", made, "2755", NULL};
  /* A mode with either bit is refused in both modes (the baseline, or
   * the supervisor as the baseline does); the file keeps its mode. */
  mode_t before = mode_of(made);
  expect_refused(probe_in(rw, s), EPERM, "setuid and setgid bits");
  expect_refused(probe_in(rw, e), EPERM, "setuid and setgid bits");
  expect_refused(probe_in(rw, g), EPERM, "setuid and setgid bits");
  ck_assert_uint_eq(mode_of(made), before);
  /* Control: the other bits change. */
  const char *plain[] = {"fchmod", made, "0750", NULL};
  expect(probe_in(rw, plain), 0, "fchmod=ok", NULL);
  ck_assert_uint_eq(mode_of(made), 0750);
  /* Nor does a file get either bit when it is made. */
  g_autofree char *created = path_in("setuid/created");
  g_autofree char *script = g_strdup_printf(
      "import os\n"
      "try:\n"
      "  os.open('%s', os.O_WRONLY | os.O_CREAT, 0o4755)\n"
      "except OSError as e:\n"
      "  print('errno=%%d' %% e.errno)\n",
      created);
  const char *py[] = {"/usr/bin/python3", "-c", script, NULL};
  /* Control: outside, the file is made with the bit. */
  expect(run(py), 0, NULL, NULL);
  ck_assert_uint_eq(mode_of(created) & 07000, 04000);
  ck_assert_int_eq(unlink(created), 0);
  const char *rw_py[] = {"--allow-write", dir, "--allow-read",
                         "/usr/lib/python3.11", NULL};
  expect(sbx_run(rw_py, py), 0, "errno=1\n", NULL);
  ck_assert_int_eq(access(created, F_OK), -1);
}
END_TEST

START_TEST(futimens_needs_a_write_grant) {
  g_autofree char *f = program_file("times.txt", "x");
  const char *t1[] = {"futimens", f, "1000000000", NULL};
  expect(probe_out(t1), 0, "futimens=ok", NULL);
  ck_assert_int_eq(stat_of(f).st_mtime, 1000000000);

  const char *t2[] = {"futimens", f, "1100000000", NULL};
  const char *ro[] = {"--allow-read", f, NULL};
  g_autofree char *line = g_strdup_printf("sbx: denied utime %s", f);
  expect_refused_as(probe_in(ro, t2), EACCES, line, EROFS);
  ck_assert_int_eq(stat_of(f).st_mtime, 1000000000);

  const char *rw[] = {"--allow-write", f, NULL};
  expect(probe_in(rw, t2), 0, "futimens=ok", NULL);
  ck_assert_int_eq(stat_of(f).st_mtime, 1100000000);
}
END_TEST

/* ftruncate and fallocate need a writable descriptor, which a read-only
 * grant never hands out: the way in is a descriptor the program is
 * given, here its standard input opened for writing. */
START_TEST(ftruncate_and_fallocate_on_a_given_descriptor_need_a_write_grant) {
  g_autofree char *f = program_file("sized.txt", "0123456789");
  g_autofree char *probe = probe_path();
  const char *trunc[] = {probe, "ftruncate", "fd:0", "4", NULL};
  const char *alloc[] = {probe, "fallocate", "fd:0", "8192", NULL};
  const char *ro[] = {"--allow-read", f, NULL};
  const char *rw[] = {"--allow-write", f, NULL};
  g_autofree char *trunc_line = g_strdup_printf(
      "sbx: denied truncate %s (allow with --allow-write %s)", f, f);
  g_autofree char *alloc_line = g_strdup_printf(
      "sbx: denied fallocate %s (allow with --allow-write %s)", f, f);

  int fd = open(f, O_RDWR | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  result r = run_at(trunc, NULL, fd, -1);
  ck_assert_msg(r.status == 0, "%s", r.out);
  result_clear(&r);
  ck_assert_int_eq(stat_of(f).st_size, 4);
  r = run_at(alloc, NULL, fd, -1);
  ck_assert_msg(r.status == 0, "%s", r.out);
  result_clear(&r);
  ck_assert_int_eq(stat_of(f).st_size, 8192);
  ck_assert_int_eq(ftruncate(fd, 10), 0);

  /* In the default mode a file outside the write grants reaches the
   * program as a pipe the launcher relays, which has no size to change. */
  expect_refused_as(sbx_run_at(NULL, fd, -1, ro, trunc), EACCES, trunc_line,
                    EINVAL);
  ck_assert_int_eq(stat_of(f).st_size, 10);
  expect_refused_as(sbx_run_at(NULL, fd, -1, ro, alloc), EACCES, alloc_line,
                    EBADF);
  ck_assert_int_eq(stat_of(f).st_size, 10);

  r = sbx_run_at(NULL, fd, -1, rw, trunc);
  ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
  result_clear(&r);
  ck_assert_int_eq(stat_of(f).st_size, 4);
  r = sbx_run_at(NULL, fd, -1, rw, alloc);
  ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
  result_clear(&r);
  ck_assert_int_eq(stat_of(f).st_size, 8192);
  close(fd);
}
END_TEST

/* A memfd has no name to grant: its size is the program's business, its
 * mode is not. */
START_TEST(a_memfd_can_be_sized_but_not_chmodded) {
  const char *size[] = {"ftruncate", "memfd", "4096", NULL};
  const char *alloc[] = {"fallocate", "memfd", "4096", NULL};
  const char *mode[] = {"fchmod", "memfd", "600", NULL};
  expect(probe_out(mode), 0, "fchmod=ok", NULL);
  expect(probe_in(NULL, size), 0, "ftruncate=ok", NULL);
  expect(probe_in(NULL, alloc), 0, "fallocate=ok", NULL);
  if (sbx_run_kernel_decides()) {
    /* Without a supervisor nothing tells one descriptor from another:
     * the kernel lets the owner change the mode of its own memfd, which
     * no name and no other process holds (docs/sbx-run.md, "What the
     * default mode does not promise"). */
    expect(probe_in(NULL, mode), 0, "fchmod=ok", NULL);
    return;
  }
  expect_refused(probe_in(NULL, mode), EACCES,
                 "(descriptor names no file in the allowlist)");
}
END_TEST

/* user.* attributes (and ACLs) change where a write grant holds the
 * file, by name or through a descriptor, as they would outside; where a
 * grant only reads, none does (S26a). */
START_TEST(extended_attributes_change_only_where_a_grant_writes) {
  g_autofree char *f = program_file("xattr.txt", "x");
  const char *set[] = {"setxattr", f, "user.sbx", "1", NULL};
  const char *fset[] = {"fsetxattr", f, "user.sbx", "1", NULL};
  const char *remove_[] = {"removexattr", f, "user.sbx", NULL};
  const char *fremove[] = {"fremovexattr", f, "user.sbx", NULL};
  char value[8];

  /* Control: outside, each form sets or removes the attribute. */
  expect(probe_out(set), 0, "setxattr=ok", NULL);
  expect(probe_out(remove_), 0, "removexattr=ok", NULL);
  expect(probe_out(fset), 0, "fsetxattr=ok", NULL);
  expect(probe_out(fremove), 0, "fremovexattr=ok", NULL);
  ck_assert_int_eq(getxattr(f, "user.sbx", value, sizeof(value)), -1);

  const char *ro[] = {"--allow-read", f, NULL};
  const char *rw[] = {"--allow-write", f, NULL};
  g_autofree char *set_line = g_strdup_printf(
      "sbx: denied setxattr %s (allow with --allow-write %s)", f, f);
  g_autofree char *remove_line = g_strdup_printf(
      "sbx: denied removexattr %s (allow with --allow-write %s)", f, f);
  /* A read-only grant: the supervisor refuses with the grant that would
   * allow it, the default mode's read-only mount with EROFS. */
  expect_refused_as(probe_in(ro, set), EACCES, set_line, EROFS);
  expect_refused_as(probe_in(ro, fset), EACCES, set_line, EROFS);
  ck_assert_int_eq(getxattr(f, "user.sbx", value, sizeof(value)), -1);
  ck_assert_int_eq(setxattr(f, "user.sbx", "k", 1, 0), 0);
  expect_refused_as(probe_in(ro, remove_), EACCES, remove_line, EROFS);
  expect_refused_as(probe_in(ro, fremove), EACCES, remove_line, EROFS);
  ck_assert_int_eq(getxattr(f, "user.sbx", value, sizeof(value)), 1);
  ck_assert_int_eq(removexattr(f, "user.sbx"), 0);

  /* A write grant: each form works, and the host sees its effect. */
  expect(probe_in(rw, set), 0, "setxattr=ok", NULL);
  ck_assert_int_eq(getxattr(f, "user.sbx", value, sizeof(value)), 1);
  expect(probe_in(rw, remove_), 0, "removexattr=ok", NULL);
  ck_assert_int_eq(getxattr(f, "user.sbx", value, sizeof(value)), -1);
  expect(probe_in(rw, fset), 0, "fsetxattr=ok", NULL);
  ck_assert_int_eq(getxattr(f, "user.sbx", value, sizeof(value)), 1);
  expect(probe_in(rw, fremove), 0, "fremovexattr=ok", NULL);
  ck_assert_int_eq(getxattr(f, "user.sbx", value, sizeof(value)), -1);
}
END_TEST

/* Writes text to a /proc file in place (no temporary file and rename). */
static bool write_proc(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  size_t len = strlen(text);
  bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
  if (fd >= 0)
    close(fd);
  return ok;
}

/* security.* and trusted.* attributes never change, not even on a write
 * grant or in the sandbox's own /tmp, which is mounted in the sandbox's
 * user namespace: the kernel lets that namespace's owner, the
 * supervisor, label files there, and the program could label none. */
START_TEST(security_attributes_never_change) {
  g_autofree char *f = program_file("labelled.txt", "x");
  const char *label[] = {"setxattr", f, "security.sbx", "1", NULL};
  const char *trusted[] = {"setxattr", f, "trusted.sbx", "1", NULL};
  char value[8];
  if (geteuid() == 0) {
    /* Control: outside, root sets both. */
    expect(probe_out(label), 0, "setxattr=ok", NULL);
    expect(probe_out(trusted), 0, "setxattr=ok", NULL);
    ck_assert_int_eq(removexattr(f, "security.sbx"), 0);
    ck_assert_int_eq(removexattr(f, "trusted.sbx"), 0);
  }
  const char *rw[] = {"--allow-write", f, NULL};
  g_autofree char *line = g_strdup_printf(
      "sbx: denied setxattr %s (only user.* attributes and ACLs change)", f);
  expect_refused(probe_in(rw, label), EPERM, line);
  expect_refused(probe_in(rw, trusted), EPERM, line);
  ck_assert_int_eq(getxattr(f, "security.sbx", value, sizeof(value)), -1);
  ck_assert_int_eq(getxattr(f, "trusted.sbx", value, sizeof(value)), -1);

  if (!sbx_run_has_private_dirs())
    return;
  /* Control: outside, whoever owns a user namespace labels a file of a
   * tmpfs mounted in it, as the supervisor owns the sandbox's. */
  g_autofree char *mnt = make_dir("labelled-tmpfs");
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    /* Files made there need the user and group mapped. */
    g_autofree char *uid_map = g_strdup_printf("0 %u 1", (unsigned)geteuid());
    g_autofree char *gid_map = g_strdup_printf("0 %u 1", (unsigned)getegid());
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0 ||
        !write_proc("/proc/self/setgroups", "deny") ||
        !write_proc("/proc/self/uid_map", uid_map) ||
        !write_proc("/proc/self/gid_map", gid_map) ||
        mount("tmpfs", mnt, "tmpfs", 0, NULL) != 0)
      _exit(2);
    g_autofree char *in = g_build_filename(mnt, "labelled", NULL);
    int file = open(in, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    _exit(file >= 0 && setxattr(in, "security.sbx", "1", 1, 0) == 0 ? 0 : 1);
  }
  int st;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "control: status %d",
                st);
  static const char script[] =
      "import os\n"
      "open('/tmp/labelled', 'w').close()\n"
      "os.setxattr('/tmp/labelled', 'user.sbx', b'1')\n"
      "print('user', os.getxattr('/tmp/labelled', 'user.sbx'))\n"
      "try:\n"
      "  os.setxattr('/tmp/labelled', 'security.sbx', b'1')\n"
      "  print('labelled')\n"
      "except OSError as e:\n"
      "  print('errno', e.errno)\n";
  const char *py[] = {"/usr/bin/python3", "-c", script, NULL};
  const char *py_opts[] = {"--allow-read", "/usr/lib/python3.11", NULL};
  result r = sbx_run(py_opts, py);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  g_autofree char *refused = g_strdup_printf("user b'1'\nerrno %d\n", EPERM);
  ck_assert_str_eq(r.out, refused);
  result_clear(&r);
}
END_TEST

START_TEST(fchown_is_refused_even_on_a_write_grant) {
  g_autofree char *f = program_file("owner.txt", "x");
  const char *change[] = {"fchown", f, "12345", NULL};
  const char *same[] = {"fchown", f, NULL};
  /* Control: outside, root changes the group; anyone may keep it. */
  if (geteuid() == 0) {
    expect(probe_out(change), 0, "fchown=ok", NULL);
    ck_assert_uint_eq(stat_of(f).st_gid, 12345);
    give_to_program(f);
  }
  expect(probe_out(same), 0, "fchown=ok", NULL);
  struct stat before = stat_of(f);
  g_autofree char *line =
      g_strdup_printf("sbx: denied chown %s (ownership cannot change)", f);
  const char *ro[] = {"--allow-read", f, NULL};
  const char *rw[] = {"--allow-write", f, NULL};
  expect_refused_as(probe_in(ro, change), EPERM, line, EROFS);
  /* In the default mode the group is not one the user namespace maps. */
  expect_refused_as(probe_in(rw, change), EPERM, line, EINVAL);
  struct stat after = stat_of(f);
  ck_assert_uint_eq(after.st_uid, before.st_uid);
  ck_assert_uint_eq(after.st_gid, before.st_gid);
  /* Changing nothing succeeds, as it does outside (tar, cp -a). */
  expect(probe_in(rw, same), 0, "fchown=ok", NULL);
}
END_TEST

static int inode_flags(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  int flags = 0;
  ck_assert_int_eq(ioctl(fd, FS_IOC_GETFLAGS, &flags), 0);
  close(fd);
  return flags;
}

static void clear_nodump(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  int flags = 0;
  ck_assert_int_eq(ioctl(fd, FS_IOC_GETFLAGS, &flags), 0);
  flags &= ~FS_NODUMP_FL;
  ck_assert_int_eq(ioctl(fd, FS_IOC_SETFLAGS, &flags), 0);
  close(fd);
}

START_TEST(inode_flags_never_change_whatever_the_upper_half_of_the_command) {
  g_autofree char *f = program_file("flags.txt", "x");
  const char *set[] = {"setflags", f, NULL};
  expect(probe_out(set), 0, "setflags=ok", NULL);
  ck_assert(inode_flags(f) & FS_NODUMP_FL);
  clear_nodump(f);

  const char *ro[] = {"--allow-read", f, NULL};
  const char *rw[] = {"--allow-write", f, NULL};
  const char *const *grants[] = {ro, rw};
  g_autofree char *line =
      g_strdup_printf("sbx: denied chattr %s (inode flags cannot change)", f);
  for (size_t i = 0; i < G_N_ELEMENTS(grants); i++) {
    result r = probe_in(grants[i], set);
    ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
    assert_contains(r.out, "setflags_junk=Operation not permitted\n");
    assert_contains(r.out, "setflags=Operation not permitted\n");
    expect_denial_line(&r, line);
    result_clear(&r);
    ck_assert(!(inode_flags(f) & FS_NODUMP_FL));
  }
}
END_TEST

START_TEST(an_inherited_stdout_outside_every_grant_cannot_be_changed) {
  g_autofree char *out = program_file("redirected.txt", "kept\n");
  ck_assert_int_eq(chmod(out, 0644), 0);
  g_autofree char *probe = probe_path();
  const char *mode[] = {probe, "fchmod", "fd:1", "600", NULL};
  const char *trunc[] = {probe, "ftruncate", "fd:1", "0", NULL};

  int fd = open(out, O_WRONLY | O_APPEND | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  result r = run_at(mode, NULL, -1, fd);
  ck_assert_int_eq(r.status, 0);
  result_clear(&r);
  ck_assert_uint_eq(mode_of(out), 0600);
  ck_assert_int_eq(chmod(out, 0644), 0);
  ck_assert_int_eq(ftruncate(fd, 5), 0);

  /* Under the supervisor the calls are refused; in the default mode the
   * program writes to a pipe the launcher relays into the file, and
   * changes only that pipe. Either way the file keeps its mode and what
   * it held. */
  bool kernel = sbx_run_kernel_decides();
  g_autofree char *line = g_strdup_printf("sbx: denied chmod %s", out);
  r = sbx_run_at(NULL, -1, fd, NULL, mode);
  ck_assert_int_eq(r.status, kernel ? 0 : 1);
  if (!kernel)
    assert_contains(r.err, line);
  result_clear(&r);
  ck_assert_uint_eq(mode_of(out), 0644);
  r = sbx_run_at(NULL, -1, fd, NULL, trunc);
  ck_assert_int_eq(r.status, 1);
  result_clear(&r);
  close(fd);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(out, &text, NULL, NULL));
  ck_assert(g_str_has_prefix(text, "kept\n"));
  assert_contains(text, kernel ? "fchmod=ok\n" : "fchmod=Permission denied\n");
  assert_contains(text, kernel ? "ftruncate=Invalid argument\n"
                               : "ftruncate=Permission denied\n");
}
END_TEST

/* ---- the working directory (S39) ---------------------------------------- */

START_TEST(stat_of_a_working_directory_outside_the_grants_is_refused) {
  g_autofree char *dir = make_dir("outside-cwd");
  g_autofree char *probe = probe_path();
  const char *cmd[] = {probe, "stat-cwd", NULL};
  result r = run_at(cmd, dir, -1, -1);
  ck_assert_int_eq(r.status, 0);
  assert_contains(r.out, "newfstatat=ok\nstatx=ok\n");
  result_clear(&r);

  r = sbx_run_at(dir, -1, -1, NULL, cmd);
  if (sbx_run_kernel_decides()) {
    /* The default mode's tree holds an empty stand-in at the working
     * directory's path: stat answers for it, never for the host's. */
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
    g_autofree char *host_ino =
        g_strdup_printf("ino=%llu\n", (unsigned long long)stat_of(dir).st_ino);
    assert_lacks(r.out, host_ino);
  } else {
    ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
    assert_contains(r.out, "newfstatat=No such file or directory\n");
    assert_contains(r.out, "statx=No such file or directory\n");
    assert_lacks(r.out, "ino=");
    g_autofree char *line = g_strdup_printf("sbx: denied stat %s", dir);
    assert_contains(r.err, line);
  }
  result_clear(&r);

  const char *ro[] = {"--allow-read", dir, NULL};
  r = sbx_run_at(dir, -1, -1, ro, cmd);
  ck_assert_int_eq(r.status, 0);
  assert_contains(r.out, "newfstatat=ok\nstatx=ok\n");
  result_clear(&r);
}
END_TEST

START_TEST(chdir_outside_the_grants_answers_alike_for_present_and_absent) {
  g_autofree char *present = make_dir("present");
  g_autofree char *absent = path_in("absent");
  const char *to_present[] = {"chdir", present, NULL};
  const char *to_absent[] = {"chdir", absent, NULL};
  /* Outside, the answer differs: that is the oracle. */
  expect(probe_out(to_present), 0, "chdir=ok", NULL);
  expect(probe_out(to_absent), 1, "errno=2\n", NULL);

  g_autofree char *l1 = g_strdup_printf("sbx: denied chdir %s", present);
  g_autofree char *l2 = g_strdup_printf("sbx: denied chdir %s", absent);
  expect_refused_as(probe_in(NULL, to_present), ENOENT, l1, ENOENT);
  /* The absent one is printed as it happens (--explain); a failed run's
   * summary leaves it out, as no grant would change its answer. */
  expect_refused_as(probe_in(NULL, to_absent), ENOENT,
                    sbx_run_explaining() ? l2 : NULL, ENOENT);

  const char *ro[] = {"--allow-read", present, NULL};
  expect(probe_in(ro, to_present), 0, "chdir=ok", NULL);
}
END_TEST

/* An exec and a chown that changes nothing answer alike for a name
 * outside the grants whatever is there, in both modes: no EACCES for an
 * existing file, no ENOTDIR for a name below a file, no success for a
 * chown. Outside, the answers differ: that is the oracle. */
START_TEST(exec_and_chown_outside_the_grants_answer_alike_for_any_name) {
  g_autofree char *file = make_file("oracle-file", "#!/bin/sh\n");
  ck_assert_int_eq(chmod(file, 0755), 0);
  g_autofree char *below = path_in("oracle-file/x");
  g_autofree char *absent = path_in("oracle-absent");
  const char *x[] = {"--allow-exec", NULL};
  static const char chown_script[] =
      "import os, sys\n"
      "for p in sys.argv[1:]:\n"
      "  try:\n"
      "    os.chown(p, -1, -1); print('ok')\n"
      "  except OSError as e:\n"
      "    print(e.errno)\n";
  const char *py[] = {
      "/usr/bin/python3", "-c", chown_script, file, absent, NULL};
  expect(run(py), 0, "ok\n2\n", NULL); /* control */
  const char *py_opts[] = {"--allow-read", "/usr/lib/python3.11", NULL};
  result r = sbx_run(py_opts, py);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  ck_assert_str_eq(r.out, "2\n2\n");
  result_clear(&r);
  /* Exec: ENOTDIR below a file outside; ENOENT inside for every name. */
  const char *exec_below[] = {"exec", below, NULL};
  expect(probe_out(exec_below), 1, "errno=20\n", NULL);
  const char *names[] = {file, below, absent};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    const char *exec_it[] = {"exec", names[i], NULL};
    r = probe_in(x, exec_it);
    ck_assert_msg(r.status == 1, "%s: status %d: %s%s", names[i], r.status,
                  r.out, r.err);
    assert_contains(r.out, "errno=2\n");
    result_clear(&r);
  }
  /* With the grant the file runs (an empty script: it exits 0) and the
   * chown changes nothing and succeeds where the grant writes. */
  const char *rw[] = {"--allow-exec", "--allow-write", file, NULL};
  const char *exec_file[] = {"exec", file, NULL};
  r = probe_in(rw, exec_file);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  result_clear(&r);
  const char *py_rw[] = {"--allow-read", "/usr/lib/python3.11", "--allow-write",
                         file, NULL};
  const char *py_file[] = {"/usr/bin/python3", "-c", chown_script, file, NULL};
  expect(sbx_run(py_rw, py_file), 0, "ok\n", NULL);
}
END_TEST

/* ---- unix sockets under --net (S32a) ------------------------------------ */

START_TEST(connect_to_a_unix_socket_outside_the_grants_is_refused) {
  g_autofree char *dir = make_dir("svc");
  g_autofree char *sock = path_in("svc/s.sock");
  listener l;
  unix_listener(&l, sock, true);
  const char *connect_[] = {"connect", sock, NULL};
  expect(probe_out(connect_), 0, "exchange=ok\nreply=y\n", NULL);

  g_autofree char *line = g_strdup_printf(
      "sbx: denied connect %s (allow with --allow-write %s)", sock, sock);
  const char *net[] = {"--net", NULL};
  expect_connect_refused_as(probe_in(net, connect_), unshown_socket_errno(sock),
                            line);
  /* Reading the directory is not enough: connecting writes. (The
   * default mode's tree shows the socket file on a read-only mount,
   * which the kernel would let the program connect to.) */
  const char *ro[] = {"--net", "--allow-read", dir, NULL};
  expect_connect_refused(probe_in(ro, connect_), line);
  ck_assert_int_eq(atomic_load(&l.accepted), 1);

  const char *rw[] = {"--net", "--allow-write", sock, NULL};
  expect(probe_in(rw, connect_), 0, "exchange=ok\nreply=y\n", NULL);
  /* The network is not what lets a unix socket connect: without --net
   * the grant decides the same way, and the hint names the grant. */
  expect_connect_refused_as(probe_in(NULL, connect_),
                            unshown_socket_errno(sock), line);
  const char *rw_only[] = {"--allow-write", sock, NULL};
  expect(probe_in(rw_only, connect_), 0, "exchange=ok\nreply=y\n", NULL);
  ck_assert_int_eq(listener_stop(&l), 3);
}
END_TEST

START_TEST(a_socket_path_flipped_during_connects_never_reaches_the_canary) {
  g_autofree char *ok_path = path_in("ok.sock");
  g_autofree char *canary_path = path_in("no.sock");
  listener ok, canary;
  unix_listener(&ok, ok_path, true);
  unix_listener(&canary, canary_path, true);
  /* Control: without the supervisor the flip is real. */
  const char *control[] = {"connect-race", ok_path, canary_path, "3000", NULL};
  /* A race of the kernel's scheduling: on a loaded machine one round may
   * miss it, so the control gets a few. */
  result r = probe_out(control);
  for (int round = 1; r.status != 1 && round < 5; round++) {
    result_clear(&r);
    r = probe_out(control);
  }
  ck_assert_msg(r.status == 1, "%s", r.out);
  assert_lacks(r.out, "canary=0\n");
  result_clear(&r);
  ck_assert_int_gt(listener_stop(&canary), 0);

  unix_listener(&canary, canary_path, true);
  const char *race[] = {"connect-race", ok_path, canary_path, "10000", NULL};
  const char *opts[] = {"--net", "--allow-write", ok_path, NULL};
  r = probe_in(opts, race);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  assert_contains(r.out, "canary=0\n");
  assert_lacks(r.out, "connected=0\n");
  assert_lacks(r.out, "refused=0\n");
  result_clear(&r);
  ck_assert_int_eq(listener_stop(&canary), 0);
  ck_assert_int_gt(listener_stop(&ok), 0);
}
END_TEST

START_TEST(a_descriptor_swapped_during_connects_never_connects_a_unix_one) {
  g_autofree char *canary_path = path_in("swap.sock");
  listener tcp, canary;
  int port = tcp_listener(&tcp, 128, true);
  unix_listener(&canary, canary_path, true);
  g_autofree char *p = g_strdup_printf("%d", port);
  const char *control[] = {"fd-race", p, canary_path, "5000", NULL};
  /* The race is the kernel's scheduling: on a loaded machine a round of
   * 5000 may miss it, so the control gets a few rounds to show it. */
  result r = probe_out(control);
  for (int round = 1; r.status != 1 && round < 5; round++) {
    result_clear(&r);
    r = probe_out(control);
  }
  ck_assert_msg(r.status == 1, "%s", r.out);
  assert_lacks(r.out, "canary=0\n");
  result_clear(&r);
  ck_assert_int_gt(listener_stop(&canary), 0);

  unix_listener(&canary, canary_path, true);
  const char *race[] = {"fd-race", p, canary_path, "5000", NULL};
  const char *net[] = {"--net", NULL};
  r = probe_in(net, race);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  assert_contains(r.out, "canary=0\n");
  assert_lacks(r.out, "connected=0\n");
  result_clear(&r);
  ck_assert_int_eq(listener_stop(&canary), 0);
  ck_assert_int_gt(listener_stop(&tcp), 0);
}
END_TEST

START_TEST(unix_datagram_sockets_are_refused_with_or_without_net) {
  const char *dgram[] = {"socket-unix-dgram", NULL};
  expect(probe_out(dgram), 0, "dgram=ok\nraw=ok\n", NULL);
  const char *reason =
      "(unix datagram sockets are refused: sendto() could reach any socket "
      "file)";
  g_autofree char *line =
      g_strdup_printf("sbx: denied socket AF_UNIX SOCK_DGRAM %s", reason);
  const char *net[] = {"--net", NULL};
  for (int with_net = 0; with_net < 2; with_net++) {
    result r = probe_in(with_net ? net : NULL, dgram);
    ck_assert_int_eq(r.status, 1);
    assert_contains(r.out, "dgram=Permission denied\nraw=Permission denied\n");
    expect_denial_line(&r, line);
    if (!sbx_run_kernel_decides())
      assert_contains(r.err, "sbx: denied socket AF_UNIX SOCK_RAW");
    result_clear(&r);
  }
  const char *pair[] = {"socketpair-dgram", NULL};
  expect(probe_out(pair), 0, "socketpair=ok", NULL);
  g_autofree char *pline =
      g_strdup_printf("sbx: denied socketpair AF_UNIX type 2 %s", reason);
  expect_refused(probe_in(net, pair), EACCES, pline);
}
END_TEST

/* A connect the kernel answers alike outside (the control) and inside
 * with errno err, reported as no refusal. */
static void expect_connect_answered_as_outside(const char *const *opts,
                                               const char *path, int err) {
  const char *cmd[] = {"connect", path, NULL};
  g_autofree char *e = g_strdup_printf("errno=%d\n", err);
  expect(probe_out(cmd), 1, e, NULL);
  result r = probe_in(opts, cmd);
  ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
  assert_contains(r.out, e);
  assert_lacks(r.err, "sbx: denied connect");
  result_clear(&r);
}

/* A socket file that is not there, in a directory the grants show, is
 * missing for the program as for the kernel outside (glibc's probe of
 * nscd's socket under -r /): ENOENT, and no refusal reported. */
START_TEST(a_missing_socket_in_a_shown_directory_is_missing_not_refused) {
  g_autofree char *dir = make_dir("no-sockets");
  g_autofree char *path = g_build_filename(dir, "none.sock", NULL);
  const char *opts[] = {"-r", dir, NULL};
  expect_connect_answered_as_outside(opts, path, ENOENT);
}
END_TEST

/* A file the program may look at that is no socket: the kernel's
 * ECONNREFUSED, with no refusal line, as no grant would change it. */
START_TEST(a_connect_to_a_shown_file_that_is_no_socket_is_refused_as_outside) {
  g_autofree char *dir = make_dir("not-sockets");
  g_autofree char *file = make_file("not-sockets/plain", "x");
  const char *opts[] = {"-r", dir, NULL};
  expect_connect_answered_as_outside(opts, file, ECONNREFUSED);
  expect_connect_answered_as_outside(opts, dir, ECONNREFUSED);
}
END_TEST

START_TEST(tcp_to_a_local_listener_works_with_net_and_not_without) {
  listener l;
  int port = tcp_listener(&l, 16, true);
  g_autofree char *p = g_strdup_printf("%d", port);
  const char *cmd[] = {"connect-tcp", p, NULL};
  expect(probe_out(cmd), 0, "exchange=ok\nreply=y\n", NULL);
  const char *net[] = {"--net", NULL};
  expect(probe_in(net, cmd), 0, "exchange=ok\nreply=y\n", NULL);
  /* Without --net 127.0.0.1 is the sandbox's own loopback, where nothing
   * listens (refused as the network refuses it, and reported with the
   * hint); without a network namespace no network socket is made. */
  if (sbx_run_has_own_network()) {
    g_autofree char *line = g_strdup_printf(
        "sbx: denied connect 127.0.0.1 port %d (allow with --net)", port);
    expect_connect_refused_as(probe_in(NULL, cmd), ECONNREFUSED, line);
  } else {
    expect_refused(probe_in(NULL, cmd), EACCES,
                   "sbx: denied socket AF_INET (allow with --net)");
  }
  ck_assert_int_eq(listener_stop(&l), 2);
}
END_TEST

/* Without --net the sandbox's network is its own: the port a host's
 * listener holds on 127.0.0.1 is free there, and the program's server on
 * it answers the program's own client, not the host's listener. */
START_TEST(the_sandboxs_loopback_is_its_own_and_not_the_hosts) {
  listener l;
  int port = tcp_listener(&l, 16, false);
  g_autofree char *p = g_strdup_printf("%d", port);
  const char *cmd[] = {"tcp-self", p, NULL};
  /* Control: outside, and with the host's network, the port is taken. */
  expect(probe_out(cmd), 1, "bind=Address already in use\n", NULL);
  const char *net[] = {"--net", NULL};
  expect(probe_in(net, cmd), 1, "bind=Address already in use\n", NULL);
  if (sbx_run_has_own_network())
    expect(probe_in(NULL, cmd), 0, "exchange=ok\nreply=z\n", NULL);
  else
    expect_refused(probe_in(NULL, cmd), EACCES,
                   "sbx: denied socket AF_INET (allow with --net)");
  ck_assert_int_eq(listener_stop(&l), 0);
}
END_TEST

typedef struct {
  listener *l;
  const char *marker;
} slow_accept;

/* Once the probe is about to connect, waits a little, then makes room in
 * the listener's queue and serves it. */
static void *make_room_later(void *arg) {
  slow_accept *s = arg;
  for (int i = 0; i < 1000 && access(s->marker, F_OK) != 0; i++)
    usleep(10000);
  usleep(300000);
  accept_loop(s->l);
  return NULL;
}

/* Connects the test itself until the listener's accept queue is full. */
static int fill_queue(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET,
                           .sin_port = htons((uint16_t)port),
                           .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  return fd;
}

static result slow_connect(const char *const *opts, const char *dir) {
  listener l;
  /* Backlog 0: the queue holds one connection, which fill_queue makes;
   * the probe's SYN is dropped until the thread makes room, and its
   * retransmission (a second later) completes the connect. */
  int port = tcp_listener(&l, 0, false);
  int filler = fill_queue(port);
  g_autofree char *marker = g_build_filename(dir, "connecting", NULL);
  g_autofree char *statfile = g_build_filename(dir, "stat-me", NULL);
  unlink(marker);
  ck_assert(g_file_set_contents(statfile, "x", -1, NULL));
  slow_accept s = {.l = &l, .marker = marker};
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, make_room_later, &s), 0);
  g_autofree char *p = g_strdup_printf("%d", port);
  const char *cmd[] = {"connect-tcp-slow", p, marker, statfile, NULL};
  result r = opts ? probe_in(opts, cmd) : probe_out(cmd);
  atomic_store(&l.stop, 1);
  pthread_join(t, NULL);
  l.running = false;
  listener_stop(&l);
  close(filler);
  return r;
}

static int field(const char *out, const char *key) {
  const char *at = strstr(out, key);
  ck_assert_msg(at != NULL, "%s not in %s", key, out);
  return atoi(at + strlen(key));
}

START_TEST(a_blocking_connect_in_progress_does_not_stall_the_supervisor) {
  g_autofree char *dir = make_dir("slow");
  result r = slow_connect(NULL, dir);
  ck_assert_msg(r.status == 0, "%s", r.out);
  ck_assert_int_ge(field(r.out, "elapsed_ms="), 250);
  result_clear(&r);

  const char *opts[] = {"--net", "--allow-write", dir, NULL};
  r = slow_connect(opts, dir);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  assert_contains(r.out, "connect=ok\n");
  /* The connect waited for the listener... */
  ck_assert_int_ge(field(r.out, "elapsed_ms="), 250);
  /* ...while the supervisor kept answering the other thread. */
  ck_assert_int_lt(field(r.out, "max_stat_ms="), 500);
  result_clear(&r);
}
END_TEST

START_TEST(a_socket_file_is_made_only_where_the_grant_can_create) {
  g_autofree char *dir = make_dir("binds");
  g_autofree char *sock = path_in("binds/b.sock");
  const char *bind_[] = {"bind", sock, NULL};
  g_autofree char *name = g_strdup_printf("name=%s\n", sock);
  expect(probe_out(bind_), 0, name, NULL);
  ck_assert_int_eq(unlink(sock), 0);

  /* The socket records the name the program gave, absolute or relative,
   * and the program can connect to its own socket file. */
  const char *rw[] = {"--net", "--allow-write", dir, NULL};
  result r = probe_in(rw, bind_);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  assert_contains(r.out, name);
  assert_contains(r.out, "exchange=ok\nreply=y\n");
  result_clear(&r);
  ck_assert(S_ISSOCK(stat_of(sock).st_mode));
  const char *rel[] = {"bind", "rel.sock", dir, NULL};
  expect(probe_in(rw, rel), 0, "name=rel.sock\n", NULL);
  g_autofree char *rel_path = path_in("binds/rel.sock");
  ck_assert(S_ISSOCK(stat_of(rel_path).st_mode));

  g_autofree char *ro_dir = make_dir("no-binds");
  g_autofree char *denied = path_in("no-binds/b.sock");
  const char *ro[] = {"--net", "--allow-read", ro_dir, NULL};
  const char *bind_ro[] = {"bind", denied, NULL};
  g_autofree char *line = g_strdup_printf(
      "sbx: denied bind %s (allow with --allow-write %s)", denied, ro_dir);
  expect_refused_as(probe_in(ro, bind_ro), EACCES, line, EROFS);
  ck_assert_int_eq(access(denied, F_OK), -1);
}
END_TEST

/* ---- links made inside a write grant ------------------------------------ */

START_TEST(a_symlink_made_in_a_write_grant_leads_nowhere_outside) {
  g_autofree char *dir = make_dir("w");
  g_autofree char *inside = program_file("w/inside", "inside-data");
  g_autofree char *canary = program_file("canary", "canary-data");
  /* Control: outside the sandbox a link reads its target. */
  g_autofree char *free_link = path_in("free-link");
  const char *mk_free[] = {"symlink", canary, free_link, NULL};
  expect(probe_out(mk_free), 0, "symlink=ok", NULL);
  const char *rd_free[] = {"read", free_link, NULL};
  expect(probe_out(rd_free), 0, "data=canary-data", NULL);

  const char *rw[] = {"--allow-write", dir, NULL};
  g_autofree char *in_link = path_in("w/in-link");
  const char *mk_in[] = {"symlink", "inside", in_link, NULL};
  expect(probe_in(rw, mk_in), 0, "symlink=ok", NULL);
  const char *rd_in[] = {"read", in_link, NULL};
  expect(probe_in(rw, rd_in), 0, "data=inside-data", NULL);

  /* A link out of the grant is made, but neither reads nor writes. */
  g_autofree char *out_link = path_in("w/out-link");
  const char *mk_out[] = {"symlink", canary, out_link, NULL};
  expect(probe_in(rw, mk_out), 0, "symlink=ok", NULL);
  /* In the default mode it leads into the tree's read-only root, where
   * the canary's name is absent. */
  const char *rd_out[] = {"read", out_link, NULL};
  expect_refused_as(probe_in(rw, rd_out), ENOENT, "sbx: denied open", ENOENT);
  const char *wr_out[] = {"write", out_link, NULL};
  expect_refused_as(probe_in(rw, wr_out), EACCES, "sbx: denied open", EROFS);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(canary, &text, NULL, NULL));
  ck_assert_str_eq(text, "canary-data");

  g_autofree char *shadow = path_in("w/shadow");
  const char *mk_sh[] = {"symlink", "/etc/shadow", shadow, NULL};
  expect(probe_in(rw, mk_sh), 0, "symlink=ok", NULL);
  const char *rd_sh[] = {"read", shadow, NULL};
  result r = probe_in(rw, rd_sh);
  ck_assert_int_eq(r.status, 1);
  assert_contains(r.out, "errno=2\n");
  assert_lacks(r.out, "data=");
  result_clear(&r);
}
END_TEST

START_TEST(a_symlink_made_in_a_write_grant_runs_nothing_outside) {
  g_autofree char *dir = make_dir("w");
  g_autofree char *bin = make_dir("bin-outside");
  g_autofree char *outside = path_in("bin-outside/prog");
  g_autofree char *inside = path_in("w/prog");
  g_autofree char *text = NULL;
  gsize len = 0;
  ck_assert(g_file_get_contents("/bin/true", &text, &len, NULL));
  ck_assert(g_file_set_contents(outside, text, (gssize)len, NULL));
  ck_assert(g_file_set_contents(inside, text, (gssize)len, NULL));
  ck_assert_int_eq(chmod(outside, 0755), 0);
  ck_assert_int_eq(chmod(inside, 0755), 0);
  /* Control: outside the sandbox the program runs. */
  const char *run_outside[] = {"exec", outside, NULL};
  expect(probe_out(run_outside), 0, NULL, NULL);

  const char *opts[] = {"--allow-exec", "--allow-write", dir, NULL};
  g_autofree char *in_link = path_in("w/run-in");
  const char *mk_in[] = {"symlink", inside, in_link, NULL};
  expect(probe_in(opts, mk_in), 0, "symlink=ok", NULL);
  const char *run_in[] = {"exec", in_link, NULL};
  expect(probe_in(opts, run_in), 0, NULL, NULL);

  g_autofree char *out_link = path_in("w/run-out");
  const char *mk_out[] = {"symlink", outside, out_link, NULL};
  expect(probe_in(opts, mk_out), 0, "symlink=ok", NULL);
  /* Not there, in both modes: the default mode's tree holds no such
   * file, and the supervisor answers as it does. */
  const char *run_out[] = {"exec", out_link, NULL};
  expect_refused_as(probe_in(opts, run_out), ENOENT, NULL, ENOENT);
}
END_TEST

START_TEST(a_symlink_swapped_during_reads_never_reads_the_canary) {
  g_autofree char *dir = make_dir("w");
  g_autofree char *inside = program_file("w/inside", "inside-data");
  g_autofree char *canary = program_file("canary", "canary-data");
  /* Control: outside the sandbox the swaps do reach the canary. */
  g_autofree char *free_link = path_in("free-link");
  const char *race_free[] = {"link-race", inside, canary,
                             free_link,   "3000", NULL};
  /* A race of the kernel's scheduling: a few rounds to show it. */
  result r = probe_out(race_free);
  for (int round = 1;
       (r.status != 0 || strstr(r.out, "canary_reads=0\n")) && round < 5;
       round++) {
    result_clear(&r);
    r = probe_out(race_free);
  }
  ck_assert_int_eq(r.status, 0);
  assert_lacks(r.out, "canary_reads=0\n");
  result_clear(&r);

  const char *rw[] = {"--allow-write", dir, NULL};
  g_autofree char *link = path_in("w/swapped");
  const char *race[] = {"link-race", inside, canary, link, "3000", NULL};
  r = probe_in(rw, race);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  assert_contains(r.out, "canary_reads=0\n");
  assert_lacks(r.out, "other_reads=0\n");
  result_clear(&r);
}
END_TEST

START_TEST(a_hard_link_is_made_only_within_one_write_grant) {
  g_autofree char *dir = make_dir("w");
  g_autofree char *dir2 = make_dir("w2");
  g_autofree char *inside = program_file("w/inside", "inside-data");
  g_autofree char *canary = program_file("canary", "canary-data");
  /* Control: outside the sandbox each link is made. */
  g_autofree char *free_link = path_in("free-hard");
  const char *ln_free[] = {"link", canary, free_link, NULL};
  expect(probe_out(ln_free), 0, "link=ok", NULL);

  const char *rw[] = {"--allow-write", dir, "--allow-write", dir2, NULL};
  g_autofree char *same = path_in("w/same");
  const char *ln_same[] = {"link", inside, same, NULL};
  expect(probe_in(rw, ln_same), 0, "link=ok", NULL);
  ck_assert_int_eq(stat_of(inside).st_nlink, 2);

  g_autofree char *across = path_in("w2/across");
  const char *ln_across[] = {"link", inside, across, NULL};
  expect_refused(probe_in(rw, ln_across), EXDEV, "sbx: denied link");
  g_autofree char *stolen = path_in("w/stolen");
  const char *ln_out[] = {"link", canary, stolen, NULL};
  expect_refused_as(probe_in(rw, ln_out), EACCES, "sbx: denied link", ENOENT);
  ck_assert(!g_file_test(across, G_FILE_TEST_EXISTS));
  ck_assert(!g_file_test(stolen, G_FILE_TEST_EXISTS));
}
END_TEST

/* ---- special files ------------------------------------------------------ */

/* A FIFO in a write grant would make a host process that opens it hang
 * (S28): it is never made there, in either mode. (In the default mode
 * the sandbox's private /tmp may hold one: sbx_run_kernel_test.) */
/* A FIFO is made where a file could be created, never where a grant only
 * reads (S28: opening one never makes the supervisor wait). */
START_TEST(a_fifo_is_made_only_where_a_grant_writes) {
  g_autofree char *dir = make_dir("w");
  g_autofree char *outside = path_in("free-fifo");
  const char *control[] = {"mkfifo", outside, NULL};
  expect(probe_out(control), 0, "mkfifo=ok", NULL);
  g_autofree char *fifo = path_in("w/fifo");
  const char *ro[] = {"--allow-read", dir, NULL};
  const char *rw[] = {"--allow-write", dir, NULL};
  const char *mk[] = {"mkfifo", fifo, NULL};
  g_autofree char *line = g_strdup_printf(
      "sbx: denied mknod %s (allow with --allow-write %s)", fifo, dir);
  expect_refused_as(probe_in(ro, mk), EACCES, line, EROFS);
  ck_assert(!g_file_test(fifo, G_FILE_TEST_EXISTS));
  expect(probe_in(rw, mk), 0, "mkfifo=ok", NULL);
  struct stat st;
  ck_assert_int_eq(lstat(fifo, &st), 0);
  ck_assert(S_ISFIFO(st.st_mode));
}
END_TEST

/* ---- the sandbox's own /tmp and /dev/shm -------------------------------
 * Where sbx-run makes a user and a mount namespace, the program gets an
 * empty /tmp and /dev/shm of the sandbox's own in both modes, over what a
 * grant of "/" shows: nothing the host keeps there is readable, what the
 * program writes there stays in the sandbox, and a socket it binds there
 * is made and reached there (the supervisor binds it in the sandbox's
 * namespaces). A grant of the directory, or of a name in it, keeps the
 * host's, whatever else is granted. Without user
 * namespaces the host's directory is there, decided by the grants. */
static const char *const scratch_dirs[] = {"/tmp", "/dev/shm"};

START_TEST(the_scratch_directories_are_the_sandboxs_own) {
  const char *dir = scratch_dirs[_i];
  int pid = (int)getpid();
  g_autofree char *canary = g_strdup_printf("%s/sbx-run-canary-%d", dir, pid);
  g_autofree char *made = g_strdup_printf("%s/sbx-run-made-%d", dir, pid);
  g_autofree char *sock = g_strdup_printf("%s/sbx-run-sock-%d", dir, pid);
  g_autofree char *host_sock =
      g_strdup_printf("%s/sbx-run-host-sock-%d", dir, pid);
  ck_assert(g_file_set_contents(canary, "canary\n", -1, NULL));
  ck_assert_int_eq(chmod(canary, 0644), 0);
  listener l;
  unix_listener(&l, host_sock, true);
  const char *read_[] = {"read", canary, NULL};
  const char *write_[] = {"write", made, NULL};
  const char *bind_[] = {"bind", sock, NULL};
  const char *connect_[] = {"connect", host_sock, NULL};
  /* Control: outside, the canary reads and the host's socket answers. */
  expect(probe_out(read_), 0, "data=canary", NULL);
  expect(probe_out(connect_), 0, "exchange=ok\nreply=y\n", NULL);
  const char *all[] = {"--allow-read", "/", NULL};
  /* A name only the host has is refused with the grant that shows it. */
  g_autofree char *read_line = g_strdup_printf(
      "sbx: denied open %s (allow with --allow-read %s)", canary, canary);
  g_autofree char *connect_line =
      g_strdup_printf("sbx: denied connect %s (allow with --allow-write %s)",
                      host_sock, host_sock);
  if (sbx_run_has_private_dirs()) {
    /* ... and missing for the program, which has its own directory. */
    result r = probe_in(all, read_);
    assert_lacks(r.out, "data=canary");
    expect_refused_as(r, ENOENT, read_line, ENOENT);
    expect_connect_refused_as(probe_in(NULL, connect_), ENOENT, connect_line);
    expect(probe_in(NULL, write_), 0, "write=ok", NULL);
    /* Removing a name only the host has is a missing name, no grant to
     * offer when the program then fails. */
    static const char remove_script[] =
        "import os, sys\ntry:\n  os.unlink(sys.argv[1])\n"
        "except FileNotFoundError:\n  print('missing')\nsys.exit(1)\n";
    const char *py_remove[] = {"/usr/bin/python3", "-c", remove_script, canary,
                               NULL};
    const char *py_opts[] = {"--allow-read", "/usr/lib/python3.11", NULL};
    r = sbx_run(py_opts, py_remove);
    ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
    ck_assert_str_eq(r.out, "missing\n");
    g_autofree char *offered = g_strdup_printf("--allow-write %s", canary);
    const char *summary = strstr(r.err, "sbx: to allow them:");
    if (summary)
      assert_lacks(summary, offered);
    /* Under --explain the refusal is still printed as it happens: the
     * supervisor saw the removal. */
    g_autofree char *removal = g_strdup_printf("sbx: denied unlink %s", canary);
    if (sbx_run_explaining())
      assert_contains(r.err, removal);
    result_clear(&r);
    g_autofree char *name = g_strdup_printf("name=%s\n", sock);
    r = probe_in(NULL, bind_);
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
    assert_contains(r.out, name);
    assert_contains(r.out, "exchange=ok\nreply=y\n");
    result_clear(&r);
  } else {
    expect(probe_in(all, read_), 0, "data=canary", NULL);
    expect_refused_as(probe_in(NULL, write_), EACCES, NULL, EACCES);
    expect_connect_refused_as(probe_in(NULL, connect_), EACCES, connect_line);
  }
  ck_assert(!g_file_test(made, G_FILE_TEST_EXISTS));
  ck_assert(!g_file_test(sock, G_FILE_TEST_EXISTS));
  const char *host[] = {"--allow-write", dir, NULL};
  expect(probe_in(host, read_), 0, "data=canary", NULL);
  /* A grant of a name there, or of the directory, keeps the host's
   * directory as granted, also beside a grant of "/" that shows it
   * already. */
  const char *named[] = {"--allow-read", canary, NULL};
  const char *named_and_all[] = {"--allow-read", "/", "--allow-read", canary,
                                 NULL};
  const char *dir_and_all[] = {"--allow-read", "/", "--allow-read", dir, NULL};
  expect(probe_in(named, read_), 0, "data=canary", NULL);
  expect(probe_in(named_and_all, read_), 0, "data=canary", NULL);
  expect(probe_in(dir_and_all, read_), 0, "data=canary", NULL);
  /* Only the control reached the host's socket. */
  ck_assert_int_eq(listener_stop(&l), 1);
  ck_assert_int_eq(unlink(canary), 0);
  unlink(host_sock);
}
END_TEST

/* ---- tracing (--allow-ptrace) ------------------------------------------ */

/* Under --allow-ptrace, the probe neither attaches to pid nor reads
 * its memory. */
static void expect_attach_refused(const char *pid) {
  const char *opts[] = {"--allow-ptrace", NULL};
  const char *attach[] = {"attach", pid, NULL};
  result r = probe_in(opts, attach);
  ck_assert_msg(r.status == 1, "pid %s: status %d: %s%s", pid, r.status, r.out,
                r.err);
  assert_lacks(r.out, "attach=ok");
  assert_lacks(r.out, "vm_read=ok");
  result_clear(&r);
}

/* /proc is the sandbox's pid namespace's in both modes: the program's own
 * processes and not the host's, /proc/self the program, another of its
 * processes' status there. The memory and environment of one that made
 * itself undumpable (as ssh-agent and gpg-agent do) stay closed, as the
 * kernel keeps them from a process without capabilities - also under the
 * supervisor, which owns the sandbox's user namespace, so the kernel
 * would open them for it. The control: root outside reads them. */
START_TEST(proc_shows_the_sandboxs_own_processes_and_no_undumpable_memory) {
  const char *script =
      "import ctypes, os, sys, time\n"
      "r, w = os.pipe()\n"
      "pid = os.fork()\n"
      "if pid == 0:\n"
      "    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\n"
      "    os.write(w, b'x'); time.sleep(20); os._exit(0)\n"
      "os.read(r, 1)\n"
      "def show(label, f):\n"
      "    try:\n"
      "        print(label, f())\n"
      "    except OSError as e:\n"
      "        print(label, 'errno', e.errno)\n"
      "pids = lambda: [int(p) for p in os.listdir('/proc') if p.isdigit()]\n"
      "show('own', lambda: open('/proc/self/stat').read().split()[0] ==\n"
      "     str(os.getpid()))\n"
      "show('few', lambda: (len(pids()) < 20, int(sys.argv[1]) in pids()))\n"
      "show('comm', lambda: open('/proc/%d/comm' % pid).read().strip())\n"
      "for name in ('environ', 'mem'):\n"
      "    show(name, lambda: open('/proc/%d/%s' % (pid, name), 'rb')\n"
      "         .read(1) and 'read')\n"
      "os.kill(pid, 9)\n";
  g_autofree char *host = g_strdup_printf("%d", (int)getpid());
  const char *cmd[] = {"/usr/bin/python3", "-c", script, host, NULL};
  if (geteuid() == 0)
    expect(run(cmd), 0, "environ read\n", NULL);
  const char *opts[] = {"-r", "/usr/lib/python3.11", NULL};
  result r = sbx_run(opts, cmd);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  if (sbx_run_has_private_dirs())
    assert_contains(r.out,
                    "own True\nfew (True, False)\ncomm python3\n"
                    "environ errno 13\nmem errno 13\n");
  else
    assert_contains(r.out, "environ errno 13\nmem errno 13\n");
  result_clear(&r);
}
END_TEST

/* --allow-ptrace lets a program trace its own processes, and nothing
 * else: not a process of the caller outside the sandbox (another pid
 * namespace, and Landlock's scoping), and not sbx-run's own process in the
 * sandbox (pid 1), which stands outside the program's layers. */
START_TEST(a_tracing_program_reaches_only_its_own_processes) {
  GPid outside = 0;
  const char *sleeper[] = {"/bin/sleep", "60", NULL};
  ck_assert(g_spawn_async(NULL, (char **)sleeper, NULL, G_SPAWN_DEFAULT, NULL,
                          NULL, &outside, NULL));
  g_autofree char *outside_pid = g_strdup_printf("%d", (int)outside);
  /* Controls: outside the sandbox the probe attaches to a process of the
   * same user, and inside it traces its own child. */
  const char *attach_outside[] = {"attach", outside_pid, NULL};
  expect(probe_out(attach_outside), 0, "attach=ok", NULL);
  const char *ptrace_opts[] = {"--allow-ptrace", NULL};
  const char *traceme[] = {"traceme", NULL};
  expect(probe_in(ptrace_opts, traceme), 0, "traceme=ok", NULL);

  expect_attach_refused(outside_pid);
  expect_attach_refused("1");

  kill(outside, SIGKILL);
  g_spawn_close_pid(outside);
  waitpid(outside, NULL, 0);
}
END_TEST

static Suite *escape_suite(void) {
  Suite *s = suite_create("sbx-run-escape");
  TCase *mode = tcase_create("mode");
  tcase_add_checked_fixture(mode, tool_setup, tool_teardown);
  tcase_set_timeout(mode, 60);
  tcase_add_test(mode, mode_is_the_one_named);
  suite_add_tcase(s, mode);

  TCase *fds = tcase_create("descriptors");
  tcase_add_checked_fixture(fds, tool_setup, tool_teardown);
  tcase_set_timeout(fds, 60);
  tcase_add_test(fds, fchmod_through_a_descriptor_needs_a_write_grant);
  tcase_add_test(fds, fchmod_on_a_write_grant_never_sets_setuid_or_setgid);
  tcase_add_test(fds, futimens_needs_a_write_grant);
  tcase_add_test(
      fds, ftruncate_and_fallocate_on_a_given_descriptor_need_a_write_grant);
  tcase_add_test(fds, a_memfd_can_be_sized_but_not_chmodded);
  tcase_add_test(fds, extended_attributes_change_only_where_a_grant_writes);
  tcase_add_test(fds, security_attributes_never_change);
  tcase_add_test(fds, fchown_is_refused_even_on_a_write_grant);
  tcase_add_test(
      fds, inode_flags_never_change_whatever_the_upper_half_of_the_command);
  tcase_add_test(fds,
                 an_inherited_stdout_outside_every_grant_cannot_be_changed);
  suite_add_tcase(s, fds);

  TCase *cwd = tcase_create("working directory");
  tcase_add_checked_fixture(cwd, tool_setup, tool_teardown);
  tcase_set_timeout(cwd, 60);
  tcase_add_test(cwd,
                 stat_of_a_working_directory_outside_the_grants_is_refused);
  tcase_add_test(cwd,
                 chdir_outside_the_grants_answers_alike_for_present_and_absent);
  tcase_add_test(cwd,
                 exec_and_chown_outside_the_grants_answer_alike_for_any_name);
  suite_add_tcase(s, cwd);

  TCase *socks = tcase_create("sockets");
  tcase_add_checked_fixture(socks, tool_setup, tool_teardown);
  tcase_set_timeout(socks, 240);
  tcase_add_test(socks, connect_to_a_unix_socket_outside_the_grants_is_refused);
  tcase_add_test(
      socks, a_socket_path_flipped_during_connects_never_reaches_the_canary);
  tcase_add_test(
      socks, a_descriptor_swapped_during_connects_never_connects_a_unix_one);
  tcase_add_test(socks, unix_datagram_sockets_are_refused_with_or_without_net);
  tcase_add_test(socks, tcp_to_a_local_listener_works_with_net_and_not_without);
  tcase_add_test(socks,
                 a_missing_socket_in_a_shown_directory_is_missing_not_refused);
  tcase_add_test(
      socks, a_connect_to_a_shown_file_that_is_no_socket_is_refused_as_outside);
  tcase_add_test(socks, the_sandboxs_loopback_is_its_own_and_not_the_hosts);
  tcase_add_test(socks,
                 a_blocking_connect_in_progress_does_not_stall_the_supervisor);
  tcase_add_test(socks, a_socket_file_is_made_only_where_the_grant_can_create);
  suite_add_tcase(s, socks);

  TCase *links = tcase_create("links");
  tcase_add_checked_fixture(links, tool_setup, tool_teardown);
  tcase_set_timeout(links, 120);
  tcase_add_test(links, a_symlink_made_in_a_write_grant_leads_nowhere_outside);
  tcase_add_test(links, a_symlink_made_in_a_write_grant_runs_nothing_outside);
  tcase_add_test(links, a_symlink_swapped_during_reads_never_reads_the_canary);
  tcase_add_test(links, a_hard_link_is_made_only_within_one_write_grant);
  suite_add_tcase(s, links);

  TCase *special = tcase_create("special files");
  tcase_add_checked_fixture(special, tool_setup, tool_teardown);
  tcase_set_timeout(special, 60);
  tcase_add_test(special, a_fifo_is_made_only_where_a_grant_writes);
  suite_add_tcase(s, special);

  TCase *scratch = tcase_create("scratch");
  tcase_add_checked_fixture(scratch, tool_setup, tool_teardown);
  tcase_set_timeout(scratch, 60);
  tcase_add_loop_test(scratch, the_scratch_directories_are_the_sandboxs_own, 0,
                      G_N_ELEMENTS(scratch_dirs));
  suite_add_tcase(s, scratch);

  TCase *tracing = tcase_create("tracing");
  tcase_add_checked_fixture(tracing, tool_setup, tool_teardown);
  tcase_set_timeout(tracing, 60);
  tcase_add_test(tracing, a_tracing_program_reaches_only_its_own_processes);
  tcase_add_test(
      tracing, proc_shows_the_sandboxs_own_processes_and_no_undumpable_memory);
  suite_add_tcase(s, tracing);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(escape_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
