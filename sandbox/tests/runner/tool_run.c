/* Running the build's tools from tests; see tool_run.h. */
#include "sandbox/tests/runner/tool_run.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

void result_clear(result *r) {
  g_free(r->out);
  g_free(r->err);
}

static char *build_dir(void) {
  const char *env = g_getenv("SBX_BUILD_DIR");
  if (env)
    return g_canonicalize_filename(env, NULL);
  g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
  ck_assert_ptr_nonnull(self);
  g_autofree char *tests = g_path_get_dirname(self);
  return g_path_get_dirname(tests);
}

char *tool_path(const char *name) {
  g_autofree char *dir = build_dir();
  return g_build_filename(dir, name, NULL);
}

char *sbx_run_path(void) {
  return tool_path("sbx-run");
}

char *probe_path(void) {
  g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
  g_autofree char *dir = g_path_get_dirname(self);
  return g_build_filename(dir, "sbx_run_probe", NULL);
}

static char *tmp;

void tool_setup(void) {
  /* Outside /tmp and /dev/shm, which sbx-run gives the program as its
   * own: the suites' files are host files that grants name (the
   * scratch directories have tests of their own). */
  if (g_file_test("/var/tmp", G_FILE_TEST_IS_DIR)) {
    tmp = g_strdup("/var/tmp/sbx-run-test-XXXXXX");
    if (!g_mkdtemp_full(tmp, 0700))
      g_clear_pointer(&tmp, g_free);
  }
  if (!tmp)
    tmp = g_dir_make_tmp("sbx-run-test-XXXXXX", NULL);
  ck_assert_ptr_nonnull(tmp);
  /* Open to everyone: a program run with --user must be able to write. */
  ck_assert_int_eq(chmod(tmp, 0777), 0);
}

void tool_teardown(void) {
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmp);
  if (system(cmd) != 0)
    fprintf(stderr, "cannot remove %s\n", tmp);
  g_clear_pointer(&tmp, g_free);
}

char *path_in(const char *name) {
  return g_build_filename(tmp, name, NULL);
}

char *make_dir(const char *name) {
  char *p = path_in(name);
  ck_assert_int_eq(mkdir(p, 0777), 0);
  ck_assert_int_eq(chmod(p, 0777), 0);
  return p;
}

char *make_file(const char *name, const char *text) {
  char *p = path_in(name);
  ck_assert(g_file_set_contents(p, text, -1, NULL));
  ck_assert_int_eq(chmod(p, 0644), 0);
  return p;
}

/* Reads both pipes to their ends together: a program that fills one
 * while the test waits on the other would otherwise never finish. */
static void collect(int out_fd, int err_fd, GString *out, GString *err) {
  struct pollfd fds[2] = {{.fd = out_fd, .events = POLLIN},
                          {.fd = err_fd, .events = POLLIN}};
  GString *into[2] = {out, err};
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    if (poll(fds, 2, -1) < 0) {
      ck_assert_int_eq(errno, EINTR);
      continue;
    }
    for (int i = 0; i < 2; i++) {
      if (fds[i].fd < 0 || !fds[i].revents)
        continue;
      char buf[65536];
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        g_string_append_len(into[i], buf, n);
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
      }
    }
  }
}

result run_at(const char *const *argv, const char *cwd, int stdin_fd,
              int stdout_fd) {
  /* Pipes, not files: a file outside the write grants as standard
   * output would be handed to the program through a relay, and the
   * suites mean to see what a program run from a pipeline sees. */
  int out_pipe[2] = {-1, -1}, err_pipe[2];
  if (stdout_fd < 0)
    ck_assert_int_eq(pipe2(out_pipe, O_CLOEXEC), 0);
  ck_assert_int_eq(pipe2(err_pipe, O_CLOEXEC), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int in = stdin_fd >= 0 ? stdin_fd : open("/dev/null", O_RDONLY);
    int out = stdout_fd >= 0 ? stdout_fd : out_pipe[1];
    if (in < 0)
      _exit(99);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err_pipe[1], 2) < 0)
      _exit(99);
    if (cwd && chdir(cwd) < 0)
      _exit(97);
    execv(argv[0], (char *const *)argv);
    _exit(98);
  }
  if (out_pipe[1] >= 0)
    close(out_pipe[1]);
  close(err_pipe[1]);
  GString *out = g_string_new(NULL), *err = g_string_new(NULL);
  collect(out_pipe[0], err_pipe[0], out, err);
  int st;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  result r = {0};
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.out = g_string_free(out, FALSE);
  r.err = g_string_free(err, FALSE);
  return r;
}

/* Runs argv (NULL-terminated) with stdin from stdin_fd (-1: /dev/null),
 * collecting stdout and stderr. */
result run_fd(const char *const *argv, int stdin_fd) {
  return run_at(argv, NULL, stdin_fd, -1);
}

result run(const char *const *argv) {
  return run_fd(argv, -1);
}

bool sbx_run_explaining(void) {
  const char *mode = getenv("SBX_RUN_MODE");
  return mode && strcmp(mode, "explain") == 0;
}

/* Whether this process may make a user namespace (the test runner's
 * sbx-without refuses them, as some kernels do). */
static bool userns_allowed(void) {
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0)
    _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
  int st;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static bool landlock_present(void) {
  return syscall(SYS_landlock_create_ruleset, NULL, 0,
                 1u /* LANDLOCK_CREATE_RULESET_VERSION */) >= 1;
}

bool sbx_run_kernel_decides(void) {
  return !sbx_run_explaining() && landlock_present() && userns_allowed();
}

bool sbx_run_has_private_dirs(void) {
  return userns_allowed();
}

bool sbx_run_has_own_network(void) {
  return userns_allowed();
}

void expect_denial_line(const result *r, const char *line) {
  if (sbx_run_kernel_decides()) {
    /* The default mode names no refusal but those of the calls its
     * baseline sends to the supervisor: connect, and chmod asking for a
     * set-id bit. */
    for (const char *at = strstr(r->err, "sbx: denied"); at;
         at = strstr(at + 1, "sbx: denied"))
      ck_assert_msg(g_str_has_prefix(at, "sbx: denied connect ") ||
                        g_str_has_prefix(at, "sbx: denied chmod "),
                    "a denial line in the default mode:\n%s", r->err);
    assert_contains(r->err,
                    "run again with --explain to see what the "
                    "sandbox refused");
    return;
  }
  if (line)
    assert_contains(r->err, line);
}

void expect_sbx_run_mode(void) {
  struct stat host;
  ck_assert_int_eq(stat("/", &host), 0);
  g_autofree char *probe = probe_path();
  const char *root[] = {probe, "root", NULL};
  result r = sbx_run(NULL, root);
  g_autofree char *host_dev =
      g_strdup_printf("root_dev=%llu\n", (unsigned long long)host.st_dev);
  if (sbx_run_kernel_decides()) {
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
    assert_contains(r.out, "root_tmpfs=1\n");
    assert_lacks(r.out, host_dev);
  } else if (r.status == 0) {
    assert_contains(r.out, host_dev);
  } else {
    /* The supervisor shows the host's "/" only as far as the grants
     * allow: it may be examined, not read (statfs). */
    assert_contains(r.err, "sbx: denied statfs /\n");
  }
  result_clear(&r);
  g_autofree char *outside = make_file("outside-every-grant", "x");
  const char *read_[] = {probe, "read", outside, NULL};
  r = sbx_run(NULL, read_);
  ck_assert_int_eq(r.status, 1);
  expect_denial_line(&r, "sbx: denied open");
  result_clear(&r);
}

static result tool_run_at(const char *tool, const char *cwd, int stdin_fd,
                          int stdout_fd, const char *const *opts,
                          const char *const *cmd) {
  g_autofree char *bin = tool_path(tool);
  GPtrArray *a = g_ptr_array_new();
  g_ptr_array_add(a, bin);
  if (strcmp(tool, "sbx-run") == 0 && sbx_run_explaining())
    g_ptr_array_add(a, "--explain");
  for (const char *const *o = opts; o && *o; o++)
    g_ptr_array_add(a, (char *)*o);
  g_ptr_array_add(a, "--");
  for (const char *const *c = cmd; *c; c++)
    g_ptr_array_add(a, (char *)*c);
  g_ptr_array_add(a, NULL);
  result r = run_at((const char *const *)a->pdata, cwd, stdin_fd, stdout_fd);
  g_ptr_array_free(a, TRUE);
  return r;
}

result tool_run(const char *tool, const char *const *opts,
                const char *const *cmd) {
  return tool_run_at(tool, NULL, -1, -1, opts, cmd);
}

result sbx_run(const char *const *opts, const char *const *cmd) {
  return tool_run("sbx-run", opts, cmd);
}

result sbx_run_explain(const char *const *opts, const char *const *cmd) {
  GPtrArray *a = g_ptr_array_new();
  g_ptr_array_add(a, "--explain");
  for (const char *const *o = opts; o && *o; o++)
    g_ptr_array_add(a, (char *)*o);
  g_ptr_array_add(a, NULL);
  result r = tool_run("sbx-run", (const char *const *)a->pdata, cmd);
  g_ptr_array_free(a, TRUE);
  return r;
}

result sbx_run_at(const char *cwd, int stdin_fd, int stdout_fd,
                  const char *const *opts, const char *const *cmd) {
  return tool_run_at("sbx-run", cwd, stdin_fd, stdout_fd, opts, cmd);
}

void assert_contains(const char *haystack, const char *needle) {
  ck_assert_msg(strstr(haystack, needle) != NULL, "'%s' not in:\n%s", needle,
                haystack);
}

void assert_lacks(const char *haystack, const char *needle) {
  ck_assert_msg(strstr(haystack, needle) == NULL, "'%s' unexpectedly in:\n%s",
                needle, haystack);
}

void expect(result r, int status, const char *out_has, const char *err_has) {
  ck_assert_msg(r.status == status, "status %d, expected %d: %s%s", r.status,
                status, r.out, r.err);
  if (out_has)
    assert_contains(r.out, out_has);
  if (err_has)
    assert_contains(r.err, err_has);
  result_clear(&r);
}

int tcp_listen_loopback(int backlog, int *port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ck_assert_int_ge(fd, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET,
                           .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  socklen_t len = sizeof(sa);
  ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
  ck_assert_int_eq(listen(fd, backlog), 0);
  *port = ntohs(sa.sin_port);
  return fd;
}
