/* sbx-run's default mode, where the kernel decides file access in a tree
 * of the grants (sandbox/runner/tree.h): what only that mode promises.
 * Names outside the grants are absent, read-only grants refuse metadata
 * changes, a write grant holds the links made in it and none leads out,
 * socket files outside the write grants are unreachable, files given as
 * standard streams are relayed, nothing runs without
 * -x, a failing program gets one line pointing at --explain, and /tmp
 * and /dev/shm are the sandbox's own.
 *
 * Output is collected through pipes: a file outside the write grants as
 * standard output would make the plan choose the supervisor (docs/
 * sbx-run.md, "Which mode"). Each refusal has a positive control: the
 * same call outside the sandbox, or under a grant that allows it. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/tests/runner/tool_run.h"

/* sbx-run OPTS -- ARGV, stdio on pipes (and stdin on /dev/null). */
static result piped(const char *const *opts, const char *const *argv,
                    bool sandboxed) {
  g_autofree char *bin = sbx_run_path();
  GPtrArray *a = g_ptr_array_new();
  if (sandboxed) {
    g_ptr_array_add(a, bin);
    for (const char *const *o = opts; o && *o; o++)
      g_ptr_array_add(a, (char *)*o);
    g_ptr_array_add(a, "--");
  }
  for (const char *const *c = argv; *c; c++)
    g_ptr_array_add(a, (char *)*c);
  g_ptr_array_add(a, NULL);
  result r = {0};
  int wait = 0;
  GError *error = NULL;
  gboolean ok = g_spawn_sync(NULL, (char **)a->pdata, NULL, G_SPAWN_DEFAULT,
                             NULL, NULL, &r.out, &r.err, &wait, &error);
  ck_assert_msg(ok, "%s", error ? error->message : "");
  g_ptr_array_free(a, TRUE);
  r.status = WIFEXITED(wait) ? WEXITSTATUS(wait) : 128 + WTERMSIG(wait);
  return r;
}

static result probe(const char *const *opts, const char *const *args,
                    bool sandboxed) {
  g_autofree char *p = probe_path();
  GPtrArray *cmd = g_ptr_array_new();
  g_ptr_array_add(cmd, p);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add(cmd, (char *)*a);
  g_ptr_array_add(cmd, NULL);
  result r = piped(opts, (const char *const *)cmd->pdata, sandboxed);
  g_ptr_array_free(cmd, TRUE);
  return r;
}

#define IN(opts, ...) \
  probe(opts, (const char *const[]){__VA_ARGS__, NULL}, true)
#define OUT(...) probe(NULL, (const char *const[]){__VA_ARGS__, NULL}, false)

static void refused(result r, int err) {
  g_autofree char *e = g_strdup_printf("errno=%d\n", err);
  ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
  assert_contains(r.out, e);
  result_clear(&r);
}

static mode_t stat_mode(const char *path) {
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  return st.st_mode & 07777;
}

/* The sandboxed program owns what it attacks: only the sandbox refuses. */
static char *owned_file(const char *name, const char *text) {
  char *path = make_file(name, text);
  ck_assert_int_eq(chown(path, geteuid(), getegid()), 0);
  return path;
}

START_TEST(a_name_outside_the_grants_is_absent_for_stat_read_and_chdir) {
  g_autofree char *secret = owned_file("secret.txt", "secret\n");
  g_autofree char *dir = make_dir("elsewhere");
  expect(OUT("read", secret), 0, "data=secret", NULL);
  expect(OUT("chdir", dir), 0, "chdir=ok", NULL);
  refused(IN(NULL, "read", secret), ENOENT);
  refused(IN(NULL, "chdir", dir), ENOENT);
  /* Present and absent answer alike (S39). */
  g_autofree char *absent = path_in("absent");
  refused(IN(NULL, "chdir", absent), ENOENT);
  const char *opts[] = {"-r", secret, NULL};
  expect(IN(opts, "read", secret), 0, "data=secret", NULL);
}
END_TEST

START_TEST(a_read_only_grant_refuses_mode_times_and_setuid) {
  g_autofree char *dir = make_dir("ro");
  g_autofree char *f = owned_file("ro/f.txt", "data\n");
  ck_assert_int_eq(chown(dir, geteuid(), getegid()), 0);
  const char *ro[] = {"-r", dir, NULL};
  const char *rw[] = {"-w", dir, NULL};
  expect(OUT("fchmod", f, "0640"), 0, "fchmod=ok", NULL);
  refused(IN(ro, "fchmod", f, "0600"), EROFS);
  refused(IN(ro, "futimens", f, "1000"), EROFS);
  refused(IN(ro, "write", f), EROFS);
  ck_assert_int_eq(stat_mode(f), 0640);
  /* Controls: a write grant allows them... */
  expect(IN(rw, "fchmod", f, "0600"), 0, "fchmod=ok", NULL);
  expect(IN(rw, "futimens", f, "1000"), 0, "futimens=ok", NULL);
  ck_assert_int_eq(stat_mode(f), 0600);
  /* ...but never a setuid or setgid bit, which outside the sandbox the
   * owner may set. */
  expect(OUT("fchmod", f, "04755"), 0, "fchmod=ok", NULL);
  ck_assert_int_eq(chmod(f, 0600), 0);
  refused(IN(rw, "fchmod", f, "04755"), EPERM);
  refused(IN(rw, "fchmod", f, "02755"), EPERM);
  ck_assert_int_eq(stat_mode(f), 0600);
}
END_TEST

START_TEST(a_write_grant_holds_its_links_and_none_leads_out) {
  g_autofree char *dir = make_dir("rw");
  ck_assert_int_eq(chown(dir, geteuid(), getegid()), 0);
  g_autofree char *inside = owned_file("rw/in.txt", "inside\n");
  g_autofree char *canary = owned_file("canary.txt", "canary\n");
  g_autofree char *sym_in = g_build_filename(dir, "sym-in", NULL);
  g_autofree char *sym_out = g_build_filename(dir, "sym-out", NULL);
  g_autofree char *hard = g_build_filename(dir, "hard", NULL);
  const char *rw[] = {"-w", dir, NULL};
  expect(IN(rw, "symlink", inside, sym_in), 0, "symlink=ok", NULL);
  expect(IN(rw, "read", sym_in), 0, "data=inside", NULL);
  expect(IN(rw, "link", inside, hard), 0, "link=ok", NULL);
  expect(IN(rw, "read", hard), 0, "data=inside", NULL);
  expect(IN(rw, "symlink", canary, sym_out), 0, "symlink=ok", NULL);
  /* Control: outside the sandbox the link reaches the canary. */
  expect(OUT("read", sym_out), 0, "data=canary", NULL);
  refused(IN(rw, "read", sym_out), ENOENT);
  /* Where it leads, the tree is the read-only empty root. */
  refused(IN(rw, "write", sym_out), EROFS);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(canary, &text, NULL, NULL));
  ck_assert_str_eq(text, "canary\n");
  /* A hard link to a file outside cannot be made: it is not there. */
  g_autofree char *hard_out = g_build_filename(dir, "hard-out", NULL);
  refused(IN(rw, "link", canary, hard_out), ENOENT);
}
END_TEST

START_TEST(a_socket_file_outside_the_write_grants_is_unreachable) {
  g_autofree char *dir = make_dir("sock");
  g_autofree char *path = g_build_filename(dir, "s", NULL);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  g_strlcpy(sa.sun_path, path, sizeof sa.sun_path);
  ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
  ck_assert_int_eq(chmod(path, 0777), 0);
  ck_assert_int_eq(listen(fd, 8), 0);
  /* Nobody answers the exchange that follows: only connect counts. */
  result r = OUT("connect", path);
  assert_contains(r.out, "connect=ok");
  result_clear(&r);
  /* connect is the supervisor's in this mode too: outside the grants,
   * and in a read-only grant, where the kernel would connect (it wants
   * write permission on the socket's inode, which a read-only mount
   * leaves). */
  /* Below a private directory (/tmp) the host's socket is not there for
   * the program (ENOENT), and the summary still names it with the grant
   * that would show it. */
  bool private_dir =
      g_str_has_prefix(path, "/tmp/") || g_str_has_prefix(path, "/dev/shm/");
  r = IN(NULL, "connect", path);
  g_autofree char *line = g_strdup_printf(
      "sbx: denied connect %s (allow with --allow-write %s)", path, path);
  assert_contains(r.err, line);
  refused(r, private_dir ? ENOENT : EACCES);
  const char *ro[] = {"-r", dir, NULL};
  refused(IN(ro, "connect", path), EACCES);
  /* Nor through a link in the sandbox's private /dev/shm, whose own
   * sockets the supervisor does reach (the control: outside, the link
   * connects). */
  g_autofree char *outside_link = path_in("link");
  r = OUT("link-connect", path, outside_link);
  assert_contains(r.out, "connect=ok");
  result_clear(&r);
  refused(IN(ro, "link-connect", path, "/dev/shm/link"), EACCES);
  const char *rw[] = {"-w", dir, NULL};
  r = IN(rw, "connect", path);
  assert_contains(r.out, "connect=ok");
  result_clear(&r);
  close(fd);
}
END_TEST

START_TEST(nothing_runs_without_allow_exec) {
  g_autofree char *dir = make_dir("bin");
  g_autofree char *copy = g_build_filename(dir, "true", NULL);
  g_autofree char *text = NULL;
  gsize len = 0;
  ck_assert(g_file_get_contents("/bin/true", &text, &len, NULL));
  ck_assert(g_file_set_contents(copy, text, (gssize)len, NULL));
  ck_assert_int_eq(chmod(copy, 0755), 0);
  expect(OUT("exec", copy), 0, NULL, NULL);
  const char *ro[] = {"-r", dir, NULL};
  refused(IN(ro, "exec", copy), EACCES);
  const char *rx[] = {"-r", dir, "-x", NULL};
  expect(IN(rx, "exec", copy), 0, NULL, NULL);
  /* A write grant is noexec without -x, for mmap as well. */
  const char *rw[] = {"-w", dir, NULL};
  refused(IN(rw, "exec", copy), EACCES);
}
END_TEST

START_TEST(a_failing_program_gets_one_line_and_a_succeeding_one_none) {
  g_autofree char *absent = path_in("absent");
  result r = IN(NULL, "read", absent);
  ck_assert_int_eq(r.status, 1);
  const char *line =
      "run again with --explain to see what the sandbox "
      "refused\n";
  const char *at = strstr(r.err, line);
  ck_assert_msg(at != NULL, "no --explain line in: %s", r.err);
  ck_assert_ptr_null(strstr(at + 1, line));
  assert_contains(r.err, "exited with status 1;");
  assert_lacks(r.err, "sbx: denied");
  result_clear(&r);
  const char *t[] = {"/bin/true", NULL};
  r = piped(NULL, t, true);
  ck_assert_int_eq(r.status, 0);
  ck_assert_str_eq(r.err, "");
  result_clear(&r);
  /* --explain names the refusal instead. */
  const char *explain[] = {"--explain", NULL};
  r = IN(explain, "read", absent);
  ck_assert_int_eq(r.status, 1);
  assert_contains(r.err, "sbx: denied");
  assert_lacks(r.err, line);
  result_clear(&r);
}
END_TEST

/* sbx-run with stdin and stdout (and stderr, one open file with stdout)
 * on files outside the grants, as a shell redirects them. */
static int redirected(const char *in, const char *out,
                      const char *const *argv) {
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int i = open(in, O_RDONLY);
    int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (i < 0 || o < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0 || dup2(o, 2) < 0)
      _exit(99);
    execv(argv[0], (char *const *)argv);
    _exit(98);
  }
  int st;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

START_TEST(files_as_standard_streams_are_relayed_whole_and_in_order) {
  /* Input larger than any pipe, output from two streams into one file. */
  GString *text = g_string_new(NULL);
  for (int i = 0; i < 200000; i++)
    g_string_append_printf(text, "line %d\n", i);
  g_autofree char *in = make_file("in.txt", text->str);
  g_autofree char *out = path_in("out.txt");
  g_autofree char *bin = sbx_run_path();
  const char *cat[] = {bin, "--", "/bin/cat", NULL};
  ck_assert_int_eq(redirected(in, out, cat), 0);
  g_autofree char *got = NULL;
  ck_assert(g_file_get_contents(out, &got, NULL, NULL));
  ck_assert(strcmp(got, text->str) == 0);
  g_string_free(text, TRUE);
  /* stdout and stderr, one open file: one pipe keeps their order. */
  const char *sh[] = {bin,
                      "--",
                      "/bin/sh",
                      "-c",
                      "for i in 1 2 3 4 5; do echo out$i; echo err$i >&2; "
                      "done",
                      NULL};
  ck_assert_int_eq(redirected("/dev/null", out, sh), 0);
  g_clear_pointer(&got, g_free);
  ck_assert(g_file_get_contents(out, &got, NULL, NULL));
  ck_assert_str_eq(got,
                   "out1\nerr1\nout2\nerr2\nout3\nerr3\nout4\nerr4\nout5\n"
                   "err5\n");
  /* What the program holds is a pipe: the file's mode stays. */
  g_autofree char *probe = probe_path();
  const char *mode[] = {bin, "--", probe, "fchmod", "fd:1", "600", NULL};
  ck_assert_int_eq(redirected("/dev/null", out, mode), 0);
  ck_assert_int_eq(stat_mode(out), 0644);
  /* Control: without sbx-run the same call changes the file. */
  const char *bare[] = {probe, "fchmod", "fd:1", "600", NULL};
  ck_assert_int_eq(redirected("/dev/null", out, bare), 0);
  ck_assert_int_eq(stat_mode(out), 0600);
}
END_TEST

/* The program gets a private, empty, writable /tmp and /dev/shm (each a
 * tmpfs of the sandbox's own): what it writes there, FIFOs included,
 * goes with the sandbox, and the host's directory is not there even
 * under a read grant of "/". A grant at the directory, or of a path
 * below it, keeps the host's. Control: the canary reads outside. */
static const char *const private_dirs[] = {"/tmp", "/dev/shm"};

START_TEST(
    the_program_gets_private_scratch_directories_with_nothing_of_the_hosts) {
  const char *dir = private_dirs[_i];
  g_autofree char *canary =
      g_strdup_printf("%s/sbx-run-canary-%d", dir, (int)getpid());
  g_autofree char *made =
      g_strdup_printf("%s/sbx-run-private-%d", dir, (int)getpid());
  ck_assert(g_file_set_contents(canary, "canary\n", -1, NULL));
  expect(OUT("read", canary), 0, "data=canary", NULL);
  const char *all[] = {"-r", "/", NULL};
  refused(IN(all, "read", canary), ENOENT);
  refused(IN(NULL, "read", canary), ENOENT);
  expect(IN(NULL, "write", made), 0, "write=ok", NULL);
  expect(IN(all, "write", made), 0, "write=ok", NULL);
  ck_assert(!g_file_test(made, G_FILE_TEST_EXISTS));
  /* A FIFO too, which the host never sees. */
  expect(IN(NULL, "mkfifo", made), 0, "mkfifo=ok", NULL);
  ck_assert(!g_file_test(made, G_FILE_TEST_EXISTS));
  /* A unix socket made there is one the program connects to: the
   * supervisor, which decides connects, reaches it beneath the private
   * directory (tmux, agents, multiprocessing's managers). */
  expect(IN(NULL, "bind", made), 0, "exchange=ok", NULL);
  /* A name missing there is missing, as for any program whose server
   * has not started yet (tmux connects first and starts one on ENOENT),
   * whatever the host has under that name. Control: outside. */
  refused(OUT("connect", made), ENOENT);
  refused(IN(NULL, "connect", made), ENOENT);
  refused(IN(all, "connect", made), ENOENT);
  const char *host[] = {"-w", dir, NULL};
  expect(IN(host, "read", canary), 0, "data=canary", NULL);
  const char *below[] = {"-r", canary, NULL};
  expect(IN(below, "read", canary), 0, "data=canary", NULL);
  ck_assert_int_eq(unlink(canary), 0);
}
END_TEST

static Suite *kernel_suite(void) {
  Suite *s = suite_create("sbx-run-kernel");
  TCase *tc = tcase_create("tree");
  tcase_add_checked_fixture(tc, tool_setup, tool_teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc,
                 a_name_outside_the_grants_is_absent_for_stat_read_and_chdir);
  tcase_add_test(tc, a_read_only_grant_refuses_mode_times_and_setuid);
  tcase_add_test(tc, a_write_grant_holds_its_links_and_none_leads_out);
  tcase_add_test(tc, a_socket_file_outside_the_write_grants_is_unreachable);
  tcase_add_test(tc, nothing_runs_without_allow_exec);
  tcase_add_test(tc, a_failing_program_gets_one_line_and_a_succeeding_one_none);
  tcase_add_test(tc, files_as_standard_streams_are_relayed_whole_and_in_order);
  tcase_add_loop_test(
      tc,
      the_program_gets_private_scratch_directories_with_nothing_of_the_hosts, 0,
      G_N_ELEMENTS(private_dirs));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(kernel_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
